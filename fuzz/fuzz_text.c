/* libFuzzer target: the graph text parser, then printing and compiling what parses.
   clang -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_text.c -lm */
#include <stdlib.h>
static void *capped(size_t n) { return n > ((size_t)256 << 20) ? NULL : malloc(n); }
#define FUSE_MALLOC(n) capped(n)
#define FUSE_FREE(p) free(p)
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include <string.h>
#include <stdlib.h>
static void sink(void *u, const char *t, size_t n) { (void)u; (void)t; (void)n; }
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  char *s = (char *)malloc(size + 1); fuse_graph *g; fuse_plan *p;
  memcpy(s, data, size); s[size] = 0;
  fuse_graph_parse(s, NULL, &g);
  if (g) { fuse_graph_write(g, sink, NULL);
    if (fuse_graph_status(g) == FUSE_OK && fuse_compile(g, NULL, &p) == FUSE_OK) fuse_plan_destroy(p);
    fuse_graph_destroy(g); }
  free(s); return 0;
}
