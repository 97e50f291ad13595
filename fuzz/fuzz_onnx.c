/* libFuzzer target: the ONNX loader (model and tensor), then optimize, compile and run what
   loads. clang -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_onnx.c -lm
   Seed corpus: the ONNX test suite's models (make fuzz copies them). */
#include <stdlib.h>
#include <string.h>
static void *capped(size_t n) { return n > ((size_t)64 << 20) ? NULL : malloc(n); }
#define FUSE_MALLOC(n) capped(n)
#define FUSE_FREE(p) free(p)
#define FUSE_IMPLEMENTATION
#include "fuse.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  fuse_graph *g = NULL;
  fuse_plan *p;
  fuse_onnx_tensor t;
  if (fuse_onnx_load_tensor(data, size, NULL, &t) == FUSE_OK) fuse_onnx_tensor_free(&t, NULL);
  if (fuse_onnx_load_memory(data, size, NULL, &g) == FUSE_OK && fuse_optimize(g, "fuse") == FUSE_OK &&
      fuse_compile(g, NULL, &p) == FUSE_OK) {
    float *bufs[16];
    const float *ins[16];
    int i, n_in = fuse_graph_input_count(g), n_out = fuse_graph_output_count(g), ok = n_in <= 8 && n_out <= 8;
    for (i = 0; ok && i < n_in + n_out; i++) {
      fuse_value v = i < n_in ? fuse_graph_input(g, i) : fuse_graph_output(g, i - n_in);
      int64_t count = 1, k;
      for (k = 0; k < fuse_value_rank(g, v); k++) count *= fuse_value_shape(g, v)[k];
      bufs[i] = count <= (1 << 20) ? (float *)calloc((size_t)count, sizeof(float)) : NULL;
      if (!bufs[i]) ok = 0; /* too big for a fuzz run: skip running */
      if (i < n_in) ins[i] = bufs[i];
    }
    if (ok) fuse_run(p, ins, bufs + n_in, NULL);
    while (i-- > 0) free(bufs[i]);
    fuse_plan_destroy(p);
  }
  fuse_graph_destroy(g);
  return 0;
}
