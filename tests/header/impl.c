/* Header checks (e) and (f): the unit that holds the implementation, nothing else.
   With FUSE_TEST_WITH_DNNL it holds fuse_dnnl.h's implementation too. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#ifdef FUSE_TEST_WITH_DNNL
#include "fuse_dnnl.h"
#endif
