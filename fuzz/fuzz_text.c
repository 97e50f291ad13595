/* libFuzzer target: the graph text parser; what parses is printed, compiled and run, then
   optimized, compiled and run again (small graphs only).
   clang -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_text.c -lm */
#include "fuzz_common.h"

static void fuzz_text_sink(void *u, const char *t, size_t n) { (void)u; (void)t; (void)n; }

static int fuzz_text(const unsigned char *data, size_t size) {
  static const float fill[5] = {0.5f, -1.0f, 2.0f, -0.25f, 1.5f};
  char *s = (char *)malloc(size + 1);
  fuse_graph *g = NULL;
  fuzz_cap = (size_t)256 << 20;
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = 0;
  fuse_graph_parse(s, NULL, &g);
  if (g) {
    fuse_graph_write(g, fuzz_text_sink, NULL);
    if (fuse_graph_status(g) == FUSE_OK) {
      fuzz_compile_run(g, NULL, 1 << 16, fill, 5, NULL);
      if (fuse_optimize(g, size & 1 ? "dnnl" : "fuse") == FUSE_OK) {
        fuse_graph_write(g, fuzz_text_sink, NULL);
        fuzz_compile_run(g, NULL, 1 << 16, fill, 5, NULL);
      }
    }
    fuse_graph_destroy(g);
  }
  free(s);
  return 0;
}
FUZZ_TARGET(fuzz_text)
