/* libFuzzer target: the ONNX loader (model and tensor); what loads is compiled and run, then
   optimized, compiled and run again (allocations above 64 MB fail; inputs and outputs above
   64K floats, or a workspace above 64 MB, are not run). Each model twice: as
   fuse_onnx_load_memory reads it, and as fuse_onnx_load_file reads a mapped file, its
   weights left in the bytes (borrowed) for the passes and the packing to read there.
   clang -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_onnx.c -lm
   Seed corpus: the ONNX test suite's models, tests/data/onnx and tests/data/onnx_quant (make
   fuzz copies them). */
#include "fuzz_common.h"

static int fuzz_onnx(const unsigned char *data, size_t size) {
  static const float fill[3] = {0.25f, -0.5f, 1.0f};
  fuse_graph *g = NULL;
  fuse_onnx_tensor t;
  int borrow;
  fuzz_cap = (size_t)64 << 20;
  if (fuse_onnx_load_tensor(data, size, NULL, &t) == FUSE_OK) fuse_onnx_tensor_free(&t, NULL);
  for (borrow = 0; borrow < 2; borrow++) { /* 1: as from a mapped file (no mapping to keep) */
    g = NULL;
    if (fuse__onnx_load(data, size, NULL, NULL, borrow, &g) == FUSE_OK) {
      fuzz_compile_run(g, NULL, 1 << 16, fill, 3, NULL);
      if (fuse_optimize(g, "fuse") == FUSE_OK) fuzz_compile_run(g, NULL, 1 << 16, fill, 3, NULL);
    }
    fuse_graph_destroy(g);
  }
  return 0;
}
FUZZ_TARGET(fuzz_onnx)
