/* Header checks (a)-(c): fuse.h included twice in one unit with FUSE_IMPLEMENTATION builds
   warning-free as C99 (gcc, clang) and as C++11, and runs. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "fuse.h"

#include "smoke.h"

int main(void) { return smoke(); }
