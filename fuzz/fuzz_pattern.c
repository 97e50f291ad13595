/* libFuzzer target: the pattern parser and matcher on a fixed graph with every op, fed the
   fuzzer's bytes as a rule's pattern; what fuses is merged, printed, compiled and run.
   clang -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_pattern.c -lm */
#include "fuzz_common.h"

static fuse_graph *fuzz_pattern_graph(void) {
  int64_t xs[4] = {1, 4, 6, 6}, ws[4] = {4, 4, 3, 3}, b4[4] = {1, 4, 1, 1}, bs[1] = {4};
  int64_t col[2] = {144, 1};
  fuse_conv2d_attrs a;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x, w, b, c, y, m;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  x = fuse_input(g, "x", 4, xs);
  w = fuse_constant(g, "w", 4, ws, NULL);
  b = fuse_constant(g, "b", 1, bs, NULL);
  c = fuse_conv2d(g, x, w, &a);
  y = fuse_relu(g, fuse_add(g, c, fuse_reshape(g, b, 4, b4)));
  y = fuse_minimum(g, fuse_maximum(g, fuse_scalar(g, 0), fuse_add(g, y, fuse_conv2d(g, y, w, &a))),
                   fuse_scalar(g, 6));
  y = fuse_clip(g, fuse_mul(g, y, fuse_sigmoid(g, y)), -1, 1);
  m = fuse_matmul(g, fuse_flatten(g, y, 1), fuse_reshape(g, y, 2, col));
  fuse_output(g, fuse_softmax(g, m, -1));
  return g;
}

static void fuzz_pattern_sink(void *u, const char *t, size_t n) { (void)u; (void)t; (void)n; }

static int fuzz_pattern(const unsigned char *data, size_t size) {
  char *s = (char *)malloc(size + 1);
  fuse_graph *g = fuzz_pattern_graph();
  fuse_rule r[2];
  fuse_pattern_options o;
  fuzz_cap = (size_t)256 << 20;
  if (!s || !g) {
    free(s);
    fuse_graph_destroy(g);
    return 0;
  }
  memset(&o, 0, sizeof o);
  memcpy(s, data, size);
  s[size] = 0;
  o.allow_escaping = size & 1;
  o.keep_constants_as_params = (size >> 1) & 1;
  r[0].name = "t.rule";
  r[0].pattern = s;
  r[0].check = NULL;
  r[0].user = NULL;
  r[1].name = "t.conv";
  r[1].pattern = "conv2d(*, *)";
  r[1].check = NULL;
  r[1].user = NULL;
  if (fuse_ops_by_pattern(g, r, 2, &o) == FUSE_OK) {
    int i;
    fuse_composite_info info;
    fuse_merge_composites(g);
    for (i = 0; i < fuse_composite_count(g); i++) fuse_composite_get(g, i, &info);
    fuse_graph_write(g, fuzz_pattern_sink, NULL);
    fuzz_compile_run(g, NULL, 1 << 16, NULL, 0, NULL);
  }
  fuse_graph_destroy(g);
  free(s);
  return 0;
}
FUZZ_TARGET(fuzz_pattern)
