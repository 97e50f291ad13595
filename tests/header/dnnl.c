/* fuse_dnnl.h check: included (twice) after fuse.h in the implementation unit, it builds
   warning-free as C99 and C++11, with oneDNN found or FUSE_DNNL_AVAILABLE=0 predefined.
   Without oneDNN the backend must be NULL. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "fuse_dnnl.h"
#include "fuse_dnnl.h"

#include "smoke.h"

#if FUSE_DNNL_AVAILABLE != 0 && FUSE_DNNL_AVAILABLE != 1
#error "FUSE_DNNL_AVAILABLE must be 0 or 1"
#endif

int main(void) {
  const fuse_backend *backend = fuse_dnnl_backend();
#if !FUSE_DNNL_AVAILABLE
  if (backend != NULL) {
    fprintf(stderr, "fuse_dnnl_backend() is not NULL although FUSE_DNNL_AVAILABLE is 0\n");
    return 1;
  }
#else
  (void)backend;
#endif
  return smoke();
}
