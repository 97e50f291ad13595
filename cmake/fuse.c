/* The unit of CMake's fuse::fuse library (CMakeLists.txt): fuse.h's implementation, so the
   programs that link it include "fuse.h" only. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
