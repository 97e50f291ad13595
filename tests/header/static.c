/* Header check (d): with FUSE_STATIC every function is static and this unit uses only a few
   of them; the build must still be warning-free (-Wunused-function). With
   FUSE_TEST_WITH_DNNL fuse_dnnl.h comes along, its function unused too. */
#define FUSE_STATIC
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#ifdef FUSE_TEST_WITH_DNNL
#include "fuse_dnnl.h"
#endif

#include "smoke.h"

int main(void) { return smoke(); }
