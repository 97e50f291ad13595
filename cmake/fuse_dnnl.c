/* The unit of CMake's fuse::dnnl library (CMakeLists.txt): fuse_dnnl.h's implementation needs
   fuse.h's in the same unit, so this library holds both and replaces fuse::fuse. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "fuse_dnnl.h"
