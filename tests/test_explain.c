/* test_explain.c - fuse_explain (what fused and why the rest did not) and
   fuse_graph_write_dot (the graph as Graphviz DOT).

   1. The report on small graphs built with the C builders and put through fuse_optimize:
      conv2d -> reshape(bias) -> add -> relu fused; a conv whose result has two readers; relu
      after a max_pool2d; matmul -> clip; an add of two values no conv2d / matmul makes; an
      op the analyzer refuses (the report gives the analyzer's own why); an op that broadcasts
      the conv's output; a graph fuse_optimize has not seen; a composite that runs op by op
      (fuse_ops_by_pattern with allow_escaping). Each checks exact substrings, values named as
      fuse_graph_error names them (%id, or 'name'), and the summary line.
   2. The DOT output of those graphs and of the committed ONNX network (as loaded, optimized,
      one block with fuse_dot_options.only): braces balanced outside strings, one
      `subgraph cluster_N` per composite, every edge's endpoints declared, strings escaped
      (names with quotes, backslashes, newlines and bytes that are not UTF-8). When Graphviz's
      `dot` is installed each is also rendered with `dot -Tsvg` and must exit 0; without it
      that part is skipped with a message.
   3. NULL graph, callback or file: FUSE_ERROR_INVALID_ARGUMENT. Each allocation refused in
      turn (tests/counting_alloc.h): FUSE_ERROR_OUT_OF_MEMORY, nothing leaks, and once they
      all succeed the same text as with the default allocator.

   Build: cc -std=c99 -O1 -g -fsanitize=address,undefined -Wall -Wextra -Wpedantic -Werror -I. \
              tests/test_explain.c -o /tmp/texplain -lm -lpthread */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* popen, pclose */
#endif
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUSE_IMPLEMENTATION
#include "../fuse.h"
#include "counting_alloc.h"
#include "runner.h"

/* ------------------------------------------------------------------ helpers -- */

typedef struct text {
  char *buf;
  size_t len, cap;
} text;

static void text_write(void *user, const char *s, size_t n) {
  text *t = (text *)user;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 4096;
    char *bigger;
    while (cap < t->len + n + 1) cap *= 2;
    bigger = (char *)realloc(t->buf, cap);
    if (!bigger) return; /* the checks then fail */
    t->buf = bigger;
    t->cap = cap;
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = 0;
}

/* The report (NULL: it failed); free() it. */
static char *explain(const fuse_graph *g) {
  text t = {NULL, 0, 0};
  if (fuse_explain_write(g, text_write, &t) != FUSE_OK) {
    free(t.buf);
    return NULL;
  }
  return t.buf;
}

/* snprintf into a static buffer: an expected line with value ids in it. */
static const char *fmt(const char *f, ...) {
  static char buf[1024];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

static fuse_value cst(fuse_graph *g, int rank, const int64_t *shape, float value) {
  int64_t n = 1, i;
  float *d;
  fuse_value v;
  for (i = 0; i < rank; i++) n *= shape[i];
  d = (float *)malloc((size_t)n * sizeof(float));
  for (i = 0; i < n; i++) d[i] = value + 0.01f * (float)(i % 7);
  v = fuse_constant(g, NULL, rank, shape, d);
  free(d);
  return v;
}

/* x [1, 3, 8, 8] -> conv2d 3x3 pad 1 (4 filters) -> add(reshape(bias [4])): the composite
   fuse_optimize makes is fuse.conv2d_bias, or more when the caller adds ops. */
typedef struct conv_net {
  fuse_graph *g;
  fuse_value x, w, b, conv, add;
} conv_net;

static conv_net conv_bias(void) {
  conv_net n;
  int64_t xs[4] = {1, 3, 8, 8}, ws[4] = {4, 3, 3, 3}, bs[1] = {4}, b4[4] = {1, 4, 1, 1};
  fuse_conv2d_attrs a;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  n.g = fuse_graph_create(NULL);
  n.x = fuse_input(n.g, "x", 4, xs);
  n.w = cst(n.g, 4, ws, 0.1f);
  n.b = fuse_constant(n.g, "b", 1, bs, NULL);
  n.conv = fuse_conv2d(n.g, n.x, n.w, &a);
  n.add = fuse_add(n.g, n.conv, fuse_reshape(n.g, n.b, 4, b4));
  return n;
}

/* ------------------------------------------------------------- the report -- */

TEST(conv_bias_relu_fused) {
  conv_net n = conv_bias();
  fuse_value y = fuse_relu(n.g, n.add);
  char *r;
  fuse_output(n.g, y);
  CHECK_EQ_INT(fuse_optimize(n.g, "fuse"), FUSE_OK);
  r = explain(n.g);
  CHECK_STR_CONTAINS(r, "conv2d / matmul, each with its composite and fused epilogue:\n");
  CHECK_STR_CONTAINS(r, fmt("  conv2d %%%d [1,4,8,8]: composite fuse.conv2d_bias_relu, fused: "
                            "bias 'b.reshaped', clamp[0, inf] -> %%%d\n", n.conv, y));
  CHECK_STR_CONTAINS(r, "element-wise ops that run on their own, and why:\n  none\n");
  /* the bias add and the relu; the reshape of the constant bias folded into a constant */
  CHECK_STR_CONTAINS(r, "summary: 1 conv2d / matmul, 1 with a fused epilogue, 2 element-wise "
                        "ops fused, 0 standalone\n");
  free(r);
  fuse_graph_destroy(n.g);
}

/* The conv's result (the composite's root) is read by the sigmoid and by a max_pool2d: the
   sigmoid cannot join the composite. */
TEST(conv_result_with_two_readers) {
  conv_net n = conv_bias();
  fuse_pool2d_attrs pa;
  fuse_value s, p;
  char *r;
  memset(&pa, 0, sizeof pa);
  pa.kernel[0] = pa.kernel[1] = 2;
  pa.strides[0] = pa.strides[1] = 2;
  s = fuse_sigmoid(n.g, n.add);
  p = fuse_max_pool2d(n.g, n.add, &pa);
  fuse_output(n.g, s);
  fuse_output(n.g, p);
  CHECK_EQ_INT(fuse_optimize(n.g, "fuse"), FUSE_OK);
  r = explain(n.g);
  CHECK_STR_CONTAINS(r, fmt("  conv2d %%%d [1,4,8,8]: composite fuse.conv2d_bias, fused: bias "
                            "'b.reshaped' -> %%%d\n", n.conv, n.add));
  CHECK_STR_CONTAINS(r, fmt("  sigmoid %%%d after conv2d %%%d (composite fuse.conv2d_bias -> "
                            "%%%d): %%%d (add) has 2 users: max_pool2d %%%d reads it too",
                            s, n.conv, n.add, n.add, p));
  CHECK_STR_CONTAINS(r, "1 with a fused epilogue, 1 element-wise ops fused, 1 standalone\n");
  free(r);
  fuse_graph_destroy(n.g);
}

TEST(relu_after_max_pool) {
  conv_net n = conv_bias();
  fuse_pool2d_attrs pa;
  fuse_value p, y;
  char *r;
  memset(&pa, 0, sizeof pa);
  pa.kernel[0] = pa.kernel[1] = 2;
  pa.strides[0] = pa.strides[1] = 2;
  p = fuse_max_pool2d(n.g, fuse_relu(n.g, n.add), &pa);
  y = fuse_relu(n.g, p);
  fuse_output(n.g, y);
  CHECK_EQ_INT(fuse_optimize(n.g, "fuse"), FUSE_OK);
  r = explain(n.g);
  CHECK_STR_CONTAINS(r, fmt("  relu %%%d: follows max_pool2d %%%d, not a conv2d / matmul\n", y, p));
  CHECK_STR_CONTAINS(r, "summary: 1 conv2d / matmul, 1 with a fused epilogue, 2 element-wise "
                        "ops fused, 1 standalone\n");
  free(r);
  fuse_graph_destroy(n.g);
}

TEST(matmul_clip) {
  int64_t as[2] = {2, 16}, bs[2] = {16, 8};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value a = fuse_input(g, "a", 2, as);
  fuse_value m = fuse_matmul(g, a, cst(g, 2, bs, -0.05f));
  fuse_value y = fuse_clip(g, m, 0, 6);
  char *r;
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  r = explain(g);
  CHECK_STR_CONTAINS(r, fmt("  matmul %%%d [2,8]: composite fuse.matmul_relu, fused: clamp[0, 6] "
                            "-> %%%d\n", m, y));
  CHECK_STR_CONTAINS(r, "summary: 1 conv2d / matmul, 1 with a fused epilogue, 1 element-wise "
                        "ops fused, 0 standalone\n");
  free(r);
  fuse_graph_destroy(g);
}

/* Neither operand of the add comes from a conv2d / matmul; a graph without any. */
TEST(add_of_no_reduction) {
  int64_t xs[4] = {1, 4, 8, 8};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_pool2d_attrs pa;
  fuse_value x, p, s, y, z;
  char *r;
  memset(&pa, 0, sizeof pa);
  pa.kernel[0] = pa.kernel[1] = 3;
  pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 1;
  x = fuse_input(g, "x", 4, xs);
  p = fuse_max_pool2d(g, x, &pa);
  s = fuse_sigmoid(g, x);
  y = fuse_add(g, p, s);
  z = fuse_relu(g, y);
  fuse_output(g, z);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  r = explain(g);
  CHECK_STR_CONTAINS(r, "conv2d / matmul, each with its composite and fused epilogue:\n  none\n");
  CHECK_STR_CONTAINS(r, fmt("  sigmoid %%%d: reads the graph input 'x', not a conv2d / matmul "
                            "output\n", s));
  CHECK_STR_CONTAINS(r, fmt("  add %%%d: neither operand leads to a conv2d / matmul (max_pool2d "
                            "%%%d and sigmoid %%%d)\n", y, p, s));
  CHECK_STR_CONTAINS(r, fmt("  relu %%%d: follows add %%%d, which leads to no conv2d / matmul "
                            "either\n", z, y));
  CHECK_STR_CONTAINS(r, "summary: 0 conv2d / matmul, 0 with a fused epilogue, 0 element-wise "
                        "ops fused, 3 standalone\n");
  free(r);
  fuse_graph_destroy(g);
}

/* floor is no epilogue op: the report gives the analyzer's own why (asked before fusion, with
   no composite around; value ids stay the same through fuse_optimize). */
TEST(analyzer_why) {
  conv_net n = conv_bias();
  fuse_value f = fuse_floor(n.g, n.add);
  fuse_epilogue e;
  char *r;
  fuse_output(n.g, f);
  CHECK_EQ_INT(fuse_analyze_epilogue(n.g, f, &e), FUSE_ERROR_UNSUPPORTED);
  CHECK(e.why[0] != 0);
  CHECK_EQ_INT(fuse_optimize(n.g, "fuse"), FUSE_OK);
  r = explain(n.g);
  CHECK_STR_CONTAINS(r, fmt("  floor %%%d after conv2d %%%d (composite fuse.conv2d_bias -> %%%d): "
                            "%s\n", f, n.conv, n.add, e.why));
  free(r);
  fuse_graph_destroy(n.g);
}

/* A squeeze-and-excitation style mul: the conv's [1,4,1,1] output times a [1,4,8,8] tensor. */
TEST(broadcast_grows_the_output) {
  int64_t xs[4] = {1, 4, 8, 8}, ws[4] = {4, 4, 1, 1};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 4, xs);
  fuse_value c = fuse_conv2d(g, fuse_global_avg_pool2d(g, x), cst(g, 4, ws, 0.2f), NULL);
  fuse_value m = fuse_mul(g, c, x);
  char *r;
  fuse_output(g, m);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  r = explain(g);
  CHECK_STR_CONTAINS(r, fmt("  conv2d %%%d [1,4,1,1]: composite fuse.conv2d, fused: no bias or "
                            "post-op -> %%%d\n", c, c));
  CHECK_STR_CONTAINS(r, fmt("  mul %%%d after conv2d %%%d (composite fuse.conv2d -> %%%d): mul "
                            "%%%d broadcasts [1,4,1,1] to [1,4,8,8]\n", m, c, c, m));
  CHECK_STR_CONTAINS(r, "summary: 1 conv2d / matmul, 0 with a fused epilogue, 0 element-wise "
                        "ops fused, 1 standalone\n");
  free(r);
  fuse_graph_destroy(g);
}

/* Before fuse_optimize: no composite, each op alone; the chain is a valid epilogue. */
TEST(not_optimized) {
  conv_net n = conv_bias();
  fuse_value y = fuse_relu(n.g, n.add);
  char *r;
  fuse_output(n.g, y);
  r = explain(n.g);
  CHECK_STR_CONTAINS(r, fmt("  conv2d %%%d [1,4,8,8]: in no composite, runs alone\n", n.conv));
  CHECK_STR_CONTAINS(r, fmt("  relu %%%d after conv2d %%%d: a valid epilogue (bias %%%d, "
                            "clamp[0, inf]), but %%%d is in no composite (fuse_optimize has not "
                            "run, or no rule matched it)\n",
                            y, n.conv, n.add - 1, n.conv));
  CHECK_STR_CONTAINS(r, "summary: 1 conv2d / matmul, 0 with a fused epilogue, 0 element-wise "
                        "ops fused, 2 standalone\n");
  free(r);
  fuse_graph_destroy(n.g);
}

/* A composite whose add is also read outside it (allowed by allow_escaping) runs op by op. */
TEST(composite_op_by_op) {
  conv_net n = conv_bias();
  fuse_value y = fuse_relu(n.g, n.add), s = fuse_sigmoid(n.g, n.add);
  fuse_rule rule = {"mine.conv_add_relu", "relu(add(conv2d(*, *), *))", NULL, NULL};
  fuse_pattern_options po;
  char *r;
  memset(&po, 0, sizeof po);
  po.allow_escaping = 1;
  fuse_output(n.g, y);
  fuse_output(n.g, s);
  CHECK_EQ_INT(fuse_ops_by_pattern(n.g, &rule, 1, &po), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(n.g), 1);
  r = explain(n.g);
  CHECK_STR_CONTAINS(r, fmt("  conv2d %%%d [1,4,8,8]: composite mine.conv_add_relu, runs op by "
                            "op: its member %%%d (add) is also read by sigmoid %%%d outside it\n",
                            n.conv, n.add, s));
  CHECK_STR_CONTAINS(r, fmt("  relu %%%d: in composite mine.conv_add_relu, which runs op by op: "
                            "its member %%%d (add)", y, n.add));
  CHECK_STR_CONTAINS(r, fmt("  sigmoid %%%d after conv2d %%%d (composite mine.conv_add_relu -> "
                            "%%%d): composite mine.conv_add_relu runs op by op itself", s, n.conv, y));
  CHECK_STR_CONTAINS(r, "summary: 1 conv2d / matmul, 0 with a fused epilogue, 0 element-wise "
                        "ops fused, 3 standalone\n");
  free(r);
  fuse_graph_destroy(n.g);
}

/* ------------------------------------------------------------------- DOT -- */

static int dot_available = -1; /* unknown until asked */

/* 1: `dot -Tsvg` accepted the text (or dot is not installed: then 1, with a message once). */
static int dot_renders(const char *dot_text) {
  FILE *p;
  int status;
  if (dot_available < 0) {
    dot_available = system("command -v dot >/dev/null 2>&1") == 0;
    if (!dot_available)
      printf("test_explain: dot (graphviz) is not installed: the DOT output is checked, not "
             "rendered\n");
  }
  if (!dot_available) return 1;
  p = popen("dot -Tsvg -o /dev/null", "w");
  if (!p) return 0;
  fputs(dot_text, p);
  status = pclose(p);
  if (status != 0) fprintf(stderr, "  dot -Tsvg failed (status %d) on:\n%s\n", status, dot_text);
  return status == 0;
}

/* Is the identifier at s (up to a space, ';' or '[') among the declared ones? */
static int declared(char **ids, int n, const char *s, size_t len) {
  int i;
  for (i = 0; i < n; i++)
    if (strlen(ids[i]) == len && memcmp(ids[i], s, len) == 0) return 1;
  return 0;
}

/* Checks the DOT text's form; clusters: how many `subgraph cluster_` it must have (-1: any). */
static void check_dot(const char *d, int clusters) {
  const char *s, *line;
  int depth = 0, in_string = 0, bad_depth = 0, n_ids = 0, n_clusters = 0, edges = 0, i;
  char **ids;
  CHECK(d != NULL);
  if (!d) return;
  CHECK(strncmp(d, "digraph fuse {\n", 15) == 0);
  for (s = d; *s; s++) { /* braces outside strings; no raw newline inside a string */
    if (in_string) {
      if (*s == '\\' && s[1]) s++;
      else if (*s == '"') in_string = 0;
      else if (*s == '\n') bad_depth = 1;
      continue;
    }
    if (*s == '"') in_string = 1;
    else if (*s == '{') depth++;
    else if (*s == '}' && --depth < 0) bad_depth = 1;
  }
  CHECK(!in_string);
  CHECK(!bad_depth);
  CHECK_EQ_INT(depth, 0);
  ids = (char **)calloc(strlen(d) / 4 + 1, sizeof *ids);
  for (line = d; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
    const char *p = line;
    size_t len = 0;
    while (*p == ' ') p++;
    if (strncmp(p, "subgraph cluster_", 17) == 0) n_clusters++;
    while (p[len] && p[len] != ' ' && p[len] != '\n') len++;
    if (len && strncmp(p + len, " [", 2) == 0 && strncmp(p, "graph", 5) && strncmp(p, "node", 4) &&
        strncmp(p, "edge", 4)) {
      ids[n_ids] = (char *)malloc(len + 1);
      memcpy(ids[n_ids], p, len);
      ids[n_ids++][len] = 0;
    }
  }
  for (line = d; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
    const char *p = line, *arrow = strstr(line, " -> "), *end = strchr(line, '\n');
    if (!arrow || (end && arrow > end) || strchr(line, '"')) continue;
    while (*p == ' ') p++;
    edges++;
    CHECK(declared(ids, n_ids, p, (size_t)(arrow - p)));
    p = arrow + 4;
    CHECK(strncmp(p + strcspn(p, ";"), ";\n", 2) == 0);
    CHECK(declared(ids, n_ids, p, strcspn(p, ";")));
  }
  CHECK(edges > 0);
  if (clusters >= 0) CHECK_EQ_INT(n_clusters, clusters);
  CHECK(dot_renders(d));
  for (i = 0; i < n_ids; i++) free(ids[i]);
  free(ids);
}

static char *dot_of(const fuse_graph *g, const char *only) {
  text t = {NULL, 0, 0};
  fuse_dot_options o;
  memset(&o, 0, sizeof o);
  o.only = only;
  if (fuse_graph_write_dot(g, &o, text_write, &t) != FUSE_OK) {
    free(t.buf);
    return NULL;
  }
  return t.buf;
}

TEST(dot_small_graphs) {
  conv_net n = conv_bias();
  fuse_pool2d_attrs pa;
  fuse_value s, p;
  char *d;
  memset(&pa, 0, sizeof pa);
  pa.kernel[0] = pa.kernel[1] = 2;
  pa.strides[0] = pa.strides[1] = 2;
  s = fuse_sigmoid(n.g, n.add);
  p = fuse_max_pool2d(n.g, fuse_relu(n.g, n.add), &pa);
  fuse_output(n.g, s);
  fuse_output(n.g, p);
  d = dot_of(n.g, NULL); /* as built */
  check_dot(d, 0);
  CHECK_STR_CONTAINS(d, fmt("  v%d [label=\"conv2d 3x3\\n[1, 4, 8, 8]\\nconst [4, 3, 3, 3]\"", n.conv));
  CHECK_STR_CONTAINS(d, fmt("  v%d [label=\"input x\\n[1, 3, 8, 8]\"", n.x));
  CHECK_STR_CONTAINS(d, fmt("  v%d -> v%d;\n", n.x, n.conv));
  CHECK_STR_CONTAINS(d, fmt("  v%d -> out1;\n", p));
  free(d);
  CHECK_EQ_INT(fuse_optimize(n.g, "fuse"), FUSE_OK);
  d = dot_of(n.g, NULL);
  check_dot(d, fuse_composite_count(n.g));
  CHECK_STR_CONTAINS(d, "label=\"fuse.conv2d_bias\";\n");
  CHECK_STR_CONTAINS(d, "  subgraph cluster_0 {\n");
  /* the constant bias, its reshape folded into a constant named after it, is in the add's
     label (with its values: 4 of them) and not drawn apart */
  CHECK_STR_CONTAINS(d, fmt("    v%d [label=\"add\\n[1, 4, 8, 8]\\nb.reshaped {0, 0, 0, 0}\"", n.add));
  CHECK(strstr(d, fmt("  v%d [", n.b)) == NULL);
  free(d);
  fuse_graph_destroy(n.g);
}

/* Names that need escaping in a DOT string. */
TEST(dot_escapes_names) {
  int64_t xs[2] = {2, 3};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "a\"b\\c\nd\xff", 2, xs);
  fuse_value y = fuse_relu(g, x);
  char *d;
  fuse_value_set_name(g, y, "caf\xc3\xa9 \xe2\x82\xac \xed\xa0\x80 \xc0\xaf");
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  d = dot_of(g, NULL);
  check_dot(d, 0);
  CHECK_STR_CONTAINS(d, "label=\"input a\\\"b\\\\c\\nd?\\n[2, 3]\"");
  /* valid UTF-8 kept; a surrogate and an overlong form are not UTF-8 */
  CHECK_STR_CONTAINS(d, "label=\"output 0\\ncaf\xc3\xa9 \xe2\x82\xac ??? ??\"");
  free(d);
  fuse_graph_destroy(g);
}

TEST(dot_onnx_network) {
  fuse_graph *g = NULL;
  char *d;
  int c;
  CHECK_EQ_INT(fuse_onnx_load_file("tests/data/onnx/tinynet_bn.onnx", NULL, &g), FUSE_OK);
  if (!g) return;
  d = dot_of(g, NULL);
  check_dot(d, 0);
  CHECK_STR_CONTAINS(d, "batch_norm\\n[1, 16, 32, 32]\\nstem.1.weight [16]\\nstem.1.bias [16]");
  free(d);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  c = fuse_composite_count(g);
  CHECK(c == 11);
  d = dot_of(g, NULL);
  check_dot(d, c);
  CHECK_STR_CONTAINS(d, "conv2d 3x3 s2\\n[1, 16, 32, 32]\\nstem.0.weight.folded [16, 3, 3, 3]");
  CHECK_STR_CONTAINS(d, "conv2d 3x3 dw\\n[1, 128, 8, 8]");
  CHECK_STR_CONTAINS(d, "max_pool2d 3x3 s2\\n[1, 16, 16, 16]");
  free(d);
  /* one block: layer2's ops, its unnamed ops, whole composites; what they read dashed */
  d = dot_of(g, "/layer2/");
  check_dot(d, -1);
  CHECK_STR_CONTAINS(d, "conv2d 1x1 s2\\n[1, 32, 8, 8]");
  CHECK_STR_CONTAINS(d, "style=\"rounded,dashed\"");
  CHECK(strstr(d, "conv2d 3x3 dw") == NULL); /* layer3 */
  CHECK(strstr(d, "out0") == NULL);
  free(d);
  fuse_graph_destroy(g);
}

/* A QDQ model (tools/quantize.py's tinynet): its integer composites (its convs, its Gemm) say
   they run in integers as one step, not op by op; the ops left in float32 between a
   dequantize and a quantize are listed with the reason. */
TEST(quantized_model) {
  fuse_graph *g = NULL;
  char *r;
  CHECK_EQ_INT(fuse_onnx_load_file("tests/data/onnx/tinynet_qdq.onnx", NULL, &g), FUSE_OK);
  if (!g) return;
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  r = explain(g);
  CHECK_STR_CONTAINS(r, "[1,16,32,32]: composite fuse.qconv2d, runs in integers as one step: int8 "
                        "weights, int32 sums, requantized on registers -> "
                        "'/stem/stem.2/Relu_output_0_quantized'\n");
  CHECK(strstr(r, "runs op by op") == NULL);
  CHECK_STR_CONTAINS(r, "element-wise ops that run on their own, and why:\n  none\n");
  CHECK_STR_CONTAINS(r, "a quantized model's ops that run in float32 (between a dequantize and a "
                        "quantize), and why:\n");
  CHECK_STR_CONTAINS(r, "  avg_pool2d '/head/head.3/AveragePool_output_0': avg_pool2d has no "
                        "integer step");
  CHECK_STR_CONTAINS(r, "[1,100]: composite fuse.qmatmul, runs in integers as one step: int8 "
                        "weights, int32 sums, requantized on registers -> 'output_quantized'\n");
  { /* not among the float32 ops */
    const char *floats = strstr(r, "a quantized model's ops that run in float32");
    CHECK(floats && strstr(floats, "  matmul ") == NULL);
  }
  CHECK(strstr(r, "add 'output_float'") == NULL); /* the Gemm's bias: inside the qmatmul */
  free(r);
  fuse_graph_destroy(g);
}

/* ----------------------------------------------------------- bad arguments -- */

static void ignore(void *user, const char *s, size_t n) {
  (void)user, (void)s, (void)n;
}

TEST(bad_arguments) {
  fuse_graph *g = fuse_graph_create(NULL);
  text t = {NULL, 0, 0};
  CHECK_EQ_INT(fuse_explain(NULL, stdout), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_explain(g, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_explain_write(NULL, ignore, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_explain_write(g, NULL, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_write_dot(NULL, stdout), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_write_dot(g, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_graph_write_dot(NULL, NULL, ignore, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_graph_write_dot(g, NULL, NULL, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  /* an empty graph is a graph */
  CHECK_EQ_INT(fuse_explain_write(g, text_write, &t), FUSE_OK);
  CHECK_STR_CONTAINS(t.buf, "summary: 0 conv2d / matmul, 0 with a fused epilogue, 0 element-wise "
                            "ops fused, 0 standalone\n");
  t.len = 0;
  CHECK_EQ_INT(fuse_graph_write_dot(g, NULL, text_write, &t), FUSE_OK);
  CHECK_STR_CONTAINS(t.buf, "digraph fuse {\n");
  free(t.buf);
  fuse_graph_destroy(g);
}

/* The optimized tinynet_bn in a graph with a counting allocator: every allocation the report
   and the picture make refused in turn. */
TEST(out_of_memory) {
  counting_alloc ca;
  fuse_allocator al = ca_make(&ca);
  fuse_graph *g = NULL, *plain = NULL;
  char *want_report, *want_dot;
  int which;
  CHECK_EQ_INT(fuse_onnx_load_file("tests/data/onnx/tinynet_bn.onnx", &al, &g), FUSE_OK);
  CHECK_EQ_INT(fuse_onnx_load_file("tests/data/onnx/tinynet_bn.onnx", NULL, &plain), FUSE_OK);
  if (!g || !plain) return;
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK_EQ_INT(fuse_optimize(plain, "fuse"), FUSE_OK);
  want_report = explain(plain);
  want_dot = dot_of(plain, NULL);
  for (which = 0; which < 2; which++) {
    long k;
    for (k = 1; k < 100; k++) {
      text t = {NULL, 0, 0};
      long live = ca.nlive;
      fuse_result r;
      ca.fail_at = ca.calls + k;
      r = which ? fuse_graph_write_dot(g, NULL, text_write, &t)
                : fuse_explain_write(g, text_write, &t);
      ca.fail_at = 0;
      CHECK_EQ_INT(ca.nlive, live);
      if (r == FUSE_OK) {
        CHECK(t.buf && strcmp(t.buf, which ? want_dot : want_report) == 0);
        free(t.buf);
        break;
      }
      CHECK_EQ_INT(r, FUSE_ERROR_OUT_OF_MEMORY);
      free(t.buf);
    }
    CHECK(k > 1 && k < 100);
  }
  free(want_report);
  free(want_dot);
  fuse_graph_destroy(g);
  fuse_graph_destroy(plain);
  CHECK_EQ_INT(ca.nlive, 0);
  CHECK_EQ_INT(ca.bad_free + ca.bad_align, 0);
  ca_done(&ca);
}

int main(void) {
  RUN(conv_bias_relu_fused);
  RUN(conv_result_with_two_readers);
  RUN(relu_after_max_pool);
  RUN(matmul_clip);
  RUN(add_of_no_reduction);
  RUN(analyzer_why);
  RUN(broadcast_grows_the_output);
  RUN(not_optimized);
  RUN(composite_op_by_op);
  RUN(dot_small_graphs);
  RUN(dot_escapes_names);
  RUN(dot_onnx_network);
  RUN(quantized_model);
  RUN(bad_arguments);
  RUN(out_of_memory);
  return runner_finish("explain");
}
