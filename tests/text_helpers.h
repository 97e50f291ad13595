/* text_helpers.h - what test_text.c and test_text_parse.c share: listing and parsing helpers,
   a counting allocator, and graphs covering every op, attribute and name form. */
#ifndef TEXT_HELPERS_H
#define TEXT_HELPERS_H

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define IN(g, name, ...) fuse_input((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__))
#define CST(g, name, ...) fuse_constant((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__), NULL)
#define CSTD(g, name, data, ...) fuse_constant((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__), (data))
#define INV FUSE_ERROR_INVALID_ARGUMENT
#define SHP FUSE_ERROR_SHAPE
#define PRS FUSE_ERROR_PARSE

/* counting allocator (also validates frees and alignment requests) */
#include "counting_alloc.h"

RUNNER_UNUSED
static void ca_check_(counting_alloc *c, int line, const char *what) {
  if (c->frees != c->allocs || c->bad_free || c->bad_align)
    failf(line, "%s: %ld allocs, %ld frees, %ld bad frees, %ld bad alignments", what, c->allocs,
          c->frees, c->bad_free, c->bad_align);
  free(c->live);
  c->live = NULL;
}

/* text capture through fuse_graph_write */
typedef struct sbuf {
  char *p;
  size_t n, cap;
  long calls;
} sbuf;
RUNNER_UNUSED
static void sbuf_write(void *user, const char *text, size_t len) {
  sbuf *b = (sbuf *)user;
  b->calls++;
  if (b->n + len + 1 > b->cap) {
    size_t cap = (b->n + len + 1) * 2;
    char *p = (char *)realloc(b->p, cap);
    if (!p) return;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, text, len);
  b->n += len;
  b->p[b->n] = 0;
}
RUNNER_UNUSED
static char *to_text(const fuse_graph *g) {
  sbuf b;
  memset(&b, 0, sizeof b);
  if (fuse_graph_write(g, sbuf_write, &b) != FUSE_OK) {
    free(b.p);
    return NULL;
  }
  if (!b.p) {
    b.p = (char *)malloc(1);
    if (b.p) b.p[0] = 0;
  }
  return b.p;
}

RUNNER_UNUSED
static size_t first_diff(const char *a, const char *b) {
  size_t i = 0;
  while (a[i] && a[i] == b[i]) i++;
  return i;
}

/* equal up to one trailing newline (the spec does not pin the last byte) */
RUNNER_UNUSED
static int same_listing(const char *got, const char *want) {
  size_t a = strlen(got), b = strlen(want);
  while (a && got[a - 1] == '\n') a--;
  while (b && want[b - 1] == '\n') b--;
  return a == b && memcmp(got, want, a) == 0;
}

#define CHECK_LISTING(g, want) check_listing_((g), (want), __LINE__)
RUNNER_UNUSED
static void check_listing_(const fuse_graph *g, const char *want, int line) {
  char *got = to_text(g);
  if (!got) {
    failf(line, "fuse_graph_write failed (status %d: %s)", (int)fuse_graph_status(g),
          fuse_graph_error(g));
    return;
  }
  if (!same_listing(got, want))
    failf(line, "listing differs at byte %lu\n--- got ---\n%s\n--- want ---\n%s",
          (unsigned long)first_diff(got, want), got, want);
  free(got);
}

/* print(parse(print(g))) == print(g), counts and input shapes agree, nothing leaks */
#define ROUNDTRIP(g) roundtrip_((g), __LINE__)
RUNNER_UNUSED
static void roundtrip_(const fuse_graph *g, int line) {
  char *t1, *t2 = NULL;
  fuse_graph *g2 = NULL;
  fuse_result r;
  counting_alloc c;
  fuse_allocator al = ca_make(&c);
  int i;
  if (fuse_graph_status(g) != FUSE_OK) {
    failf(line, "graph to round-trip has an error: %s", fuse_graph_error(g));
    return;
  }
  t1 = to_text(g);
  if (!t1) {
    failf(line, "fuse_graph_write failed");
    return;
  }
  r = fuse_graph_parse(t1, &al, &g2);
  if (r != FUSE_OK || !g2) {
    failf(line, "parse of the printed graph failed: %d %s\n%s", (int)r,
          g2 ? fuse_graph_error(g2) : "(no graph)", t1);
  } else {
    t2 = to_text(g2);
    if (!t2 || strcmp(t1, t2) != 0)
      failf(line, "round trip differs at byte %lu\n--- print(g) ---\n%s\n--- print(parse) ---\n%s",
            t2 ? (unsigned long)first_diff(t1, t2) : 0UL, t1, t2 ? t2 : "(null)");
    if (fuse_graph_op_count(g2) != fuse_graph_op_count(g))
      failf(line, "op count %d after parse, %d before", fuse_graph_op_count(g2),
            fuse_graph_op_count(g));
    if (fuse_graph_input_count(g2) != fuse_graph_input_count(g) ||
        fuse_graph_output_count(g2) != fuse_graph_output_count(g))
      failf(line, "input/output counts differ after parse");
    for (i = 0; i < fuse_graph_input_count(g) && i < fuse_graph_input_count(g2); i++) {
      fuse_value a = fuse_graph_input(g, i), b = fuse_graph_input(g2, i);
      const char *na = fuse_value_name(g, a), *nb = fuse_value_name(g2, b);
      int rk = fuse_value_rank(g, a), k;
      if (rk != fuse_value_rank(g2, b)) failf(line, "input %d rank differs", i);
      else
        for (k = 0; k < rk; k++)
          if (fuse_value_shape(g, a)[k] != fuse_value_shape(g2, b)[k])
            failf(line, "input %d shape differs", i);
      if ((na == NULL) != (nb == NULL) || (na && strcmp(na, nb) != 0))
        failf(line, "input %d name \"%s\" became \"%s\"", i, na ? na : "(null)",
              nb ? nb : "(null)");
    }
  }
  free(t1);
  free(t2);
  fuse_graph_destroy(g2);
  ca_check_(&c, line, "parse in round trip");
}

RUNNER_UNUSED
static fuse_graph *parse_ok_(const char *text, int line) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_graph_parse(text, NULL, &g);
  if (r != FUSE_OK || !g || fuse_graph_status(g) != FUSE_OK)
    failf(line, "parse failed: %d \"%s\"\n%s", (int)r, g ? fuse_graph_error(g) : "(no graph)",
          text);
  return g;
}
#define PARSE_OK(text) parse_ok_((text), __LINE__)

RUNNER_UNUSED
static int has_line(const char *msg, int n) {
  char pat[32];
  const char *p = msg;
  size_t len;
  snprintf(pat, sizeof pat, "line %d", n);
  len = strlen(pat);
  while ((p = strstr(p, pat)) != NULL) {
    if (p[len] < '0' || p[len] > '9') return 1;
    p += len;
  }
  return 0;
}

/* Parses text expecting code c1 (or c2 if non-zero); *out must be a graph with that status
   whose message has "line N" (N = 0: any line) and contains at least one of the
   alternatives (NULL-terminated; none = no check). Counts allocations. */
RUNNER_UNUSED
static void parse_err_(const char *text, fuse_result c1, fuse_result c2, int lineno,
                       const char *const *alts, int line) {
  counting_alloc c;
  fuse_allocator al = ca_make(&c);
  fuse_graph *g = NULL;
  fuse_result r = fuse_graph_parse(text, &al, &g);
  const char *msg;
  int i, found;
  if (r != c1 && (c2 == FUSE_OK || r != c2))
    failf(line, "parse returned %d (%s), want %d%s (message \"%s\")\n%s", (int)r,
          fuse_result_string(r), (int)c1, c2 ? " or the alternative" : "",
          g ? fuse_graph_error(g) : "(no graph)", text);
  if (!g) {
    failf(line, "*out is NULL after a parse error");
    ca_check_(&c, line, "parse error");
    return;
  }
  if (fuse_graph_status(g) != r)
    failf(line, "graph status %d != returned %d", (int)fuse_graph_status(g), (int)r);
  msg = fuse_graph_error(g);
  if (!msg || !*msg) {
    failf(line, "empty message");
  } else {
    if (lineno > 0 && !has_line(msg, lineno))
      failf(line, "message \"%s\" does not say \"line %d\"", msg, lineno);
    if (lineno == 0 && !strstr(msg, "line "))
      failf(line, "message \"%s\" does not say \"line\"", msg);
    found = alts[0] == NULL;
    for (i = 0; alts[i]; i++)
      if (strstr(msg, alts[i])) found = 1;
    if (!found) failf(line, "message \"%s\" does not contain \"%s\"%s", msg, alts[0],
                      alts[1] ? " (or an alternative)" : "");
  }
  fuse_graph_destroy(g);
  ca_check_(&c, line, "parse error");
}
#define PARSE_ERR(text, c1, c2, lineno, ...) \
  parse_err_((text), (c1), (c2), (lineno), (const char *const[]){__VA_ARGS__, NULL}, __LINE__)
#define ANY NULL

RUNNER_UNUSED
static fuse_conv2d_attrs conv_attrs(int sh, int sw, int pt, int pl, int pb, int pr, int dh,
                                    int dw, int groups) {
  fuse_conv2d_attrs a;
  a.strides[0] = sh;
  a.strides[1] = sw;
  a.padding[0] = pt;
  a.padding[1] = pl;
  a.padding[2] = pb;
  a.padding[3] = pr;
  a.dilation[0] = dh;
  a.dilation[1] = dw;
  a.groups = groups;
  return a;
}

RUNNER_UNUSED
static fuse_result run_graph(const fuse_graph *g, const float *const *in, float *const *out) {
  fuse_plan *plan = NULL;
  fuse_result r = fuse_compile(g, NULL, &plan);
  if (r != FUSE_OK) return r;
  r = fuse_run(plan, in, out, NULL);
  fuse_plan_destroy(plan);
  return r;
}

/* ------------------------------------------------------------ graphs -- */

RUNNER_UNUSED
static fuse_graph *seed_chain(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float bias[4] = {1, -2, 0.5f, 0.25f};
  fuse_conv2d_attrs a = conv_attrs(1, 1, 1, 1, 1, 1, 1, 1, 1);
  fuse_value x = IN(g, "data", 1, 3, 8, 8);
  fuse_value w = CST(g, "weight", 4, 3, 3, 3);
  fuse_value b = CSTD(g, "bias", bias, 4);
  fuse_value y = fuse_conv2d(g, x, w, &a);
  y = fuse_add(g, y, fuse_reshape(g, b, 4, D(1, 4, 1, 1)));
  fuse_output(g, fuse_relu(g, y));
  return g;
}
RUNNER_UNUSED
static const char seed_chain_text[] =
    "graph(%data: [1, 3, 8, 8]) {\n"
    "  %weight: [4, 3, 3, 3] = const\n"
    "  %bias: [4] = const{1, -2, 0.5, 0.25}\n"
    "  %0: [1, 4, 8, 8] = conv2d(%data, %weight, strides=[1, 1], padding=[1, 1, 1, 1], "
    "dilation=[1, 1], groups=1)\n"
    "  %1: [1, 4, 1, 1] = reshape(%bias, shape=[1, 4, 1, 1])\n"
    "  %2: [1, 4, 8, 8] = add(%0, %1)\n"
    "  %3: [1, 4, 8, 8] = relu(%2)\n"
    "  return %3\n"
    "}\n";

RUNNER_UNUSED
static fuse_graph *elementwise(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float half = 0.5f;
  fuse_value x = IN(g, "x", 2, 3), y = IN(g, "y", 2, 3);
  fuse_value lo = fuse_constant(g, "lo", 0, NULL, &half);
  fuse_value d = fuse_sub(g, x, y), r;
  r = fuse_maximum(g, d, fuse_scalar(g, 0.5f));
  r = fuse_minimum(g, r, lo);
  r = fuse_clip(g, r, -INFINITY, 6.0f);
  r = fuse_mul(g, fuse_scalar(g, 1e-5f), r);
  r = fuse_sigmoid(g, r);
  fuse_output(g, r);
  fuse_output(g, d);
  return g;
}
RUNNER_UNUSED
static const char elementwise_text[] =
    "graph(%x: [2, 3], %y: [2, 3]) {\n"
    "  %lo: [] = const{0.5}\n"
    "  %0: [2, 3] = sub(%x, %y)\n"
    "  %1: [2, 3] = maximum(%0, 0.5)\n"
    "  %2: [2, 3] = minimum(%1, %lo)\n"
    "  %3: [2, 3] = clip(%2, lo=-inf, hi=6)\n"
    "  %4: [2, 3] = mul(1e-05, %3)\n"
    "  %5: [2, 3] = sigmoid(%4)\n"
    "  return %5, %0\n"
    "}\n";

RUNNER_UNUSED
static fuse_graph *pools_and_shapes(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_pool2d_attrs mp = pool(3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0);
  fuse_pool2d_attrs ap = pool(2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1);
  fuse_value x = IN(g, NULL, 1, 2, 5, 5), p, q, f, s, parts[3], c;
  ap.dilation[0] = ap.dilation[1] = 1;
  p = fuse_max_pool2d(g, x, &mp);
  p = fuse_avg_pool2d(g, p, &ap);
  q = fuse_global_avg_pool2d(g, p);
  f = fuse_flatten(g, q, 1);
  s = fuse_softmax(g, f, 1);
  parts[0] = s;
  parts[1] = f;
  parts[2] = s;
  c = fuse_concat(g, 3, parts, 1);
  fuse_output(g, fuse_reshape(g, c, 2, D(2, 3)));
  return g;
}
RUNNER_UNUSED
static const char pools_text[] =
    "graph(%0: [1, 2, 5, 5]) {\n"
    "  %1: [1, 2, 3, 3] = max_pool2d(%0, kernel=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], "
    "dilation=[1, 1], ceil_mode=1)\n"
    "  %2: [1, 2, 2, 2] = avg_pool2d(%1, kernel=[2, 2], strides=[1, 1], padding=[0, 0, 0, 0], "
    "ceil_mode=0, count_include_pad=1)\n"
    "  %3: [1, 2, 1, 1] = global_avg_pool2d(%2)\n"
    "  %4: [1, 2] = flatten(%3, axis=1)\n"
    "  %5: [1, 2] = softmax(%4, axis=1)\n"
    "  %6: [1, 6] = concat(%5, %4, %5, axis=1)\n"
    "  %7: [2, 3] = reshape(%6, shape=[2, 3])\n"
    "  return %7\n"
    "}\n";

RUNNER_UNUSED
static fuse_graph *bn_conv_matmul(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float sd[2] = {1, 2}, bd[2] = {0, -1}, md[2] = {0.25f, 0}, vd[2] = {1, 1};
  fuse_conv2d_attrs a = conv_attrs(2, 2, 0, 0, 0, 0, 1, 1, 1);
  fuse_value x = IN(g, "x", 1, 2, 4, 4);
  fuse_value s = CSTD(g, "s", sd, 2), b = CSTD(g, "b", bd, 2), m = CSTD(g, "m", md, 2);
  fuse_value v = CSTD(g, "v", vd, 2), w = CST(g, "w", 3, 2, 1, 1), mm = CST(g, "mm", 4, 2), y;
  y = fuse_batch_norm(g, x, s, b, m, v, 0.001f);
  y = fuse_conv2d(g, y, w, &a);
  y = fuse_reshape(g, y, 3, D(1, 3, 4));
  y = fuse_matmul(g, y, mm);
  fuse_output(g, y);
  return g;
}
RUNNER_UNUSED
static const char bn_text[] =
    "graph(%x: [1, 2, 4, 4]) {\n"
    "  %s: [2] = const{1, 2}\n"
    "  %b: [2] = const{0, -1}\n"
    "  %m: [2] = const{0.25, 0}\n"
    "  %v: [2] = const{1, 1}\n"
    "  %w: [3, 2, 1, 1] = const\n"
    "  %mm: [4, 2] = const\n"
    "  %0: [1, 2, 4, 4] = batch_norm(%x, %s, %b, %m, %v, eps=0.001)\n"
    "  %1: [1, 3, 2, 2] = conv2d(%0, %w, strides=[2, 2], padding=[0, 0, 0, 0], dilation=[1, 1], "
    "groups=1)\n"
    "  %2: [1, 3, 4] = reshape(%1, shape=[1, 3, 4])\n"
    "  %3: [1, 3, 2] = matmul(%2, %mm)\n"
    "  return %3\n"
    "}\n";

RUNNER_UNUSED
static fuse_graph *quoted_names(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float qd[2] = {1, 2};
  fuse_value a = IN(g, "a b", 2), n = IN(g, "123", 2), ok = IN(g, "_ok.name2", 2);
  fuse_value q = CSTD(g, "q\"t\\", qd, 2), y;
  y = fuse_add(g, a, n);
  y = fuse_mul(g, y, q);
  y = fuse_sub(g, y, ok);
  fuse_output(g, y);
  return g;
}
RUNNER_UNUSED
static const char quoted_text[] =
    "graph(%\"a b\": [2], %\"123\": [2], %_ok.name2: [2]) {\n"
    "  %\"q\\\"t\\\\\": [2] = const{1, 2}\n"
    "  %0: [2] = add(%\"a b\", %\"123\")\n"
    "  %1: [2] = mul(%0, %\"q\\\"t\\\\\")\n"
    "  %2: [2] = sub(%1, %_ok.name2)\n"
    "  return %2\n"
    "}\n";

RUNNER_UNUSED
static fuse_graph *numbering(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float cd[2] = {3, 4};
  fuse_value x = IN(g, "x", 2);
  fuse_value c = CSTD(g, NULL, cd, 2); /* created before the unnamed input */
  fuse_value u = IN(g, NULL, 2);
  fuse_output(g, fuse_add(g, fuse_add(g, x, u), c));
  return g;
}
RUNNER_UNUSED
static const char numbering_text[] =
    "graph(%x: [2], %0: [2]) {\n"
    "  %1: [2] = const{3, 4}\n"
    "  %2: [2] = add(%x, %0)\n"
    "  %3: [2] = add(%2, %1)\n"
    "  return %3\n"
    "}\n";

/* every conv2d attribute, groups, zero attrs, dilation, asymmetric padding */
RUNNER_UNUSED
static fuse_graph *convs(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs a1 = conv_attrs(2, 3, 1, 0, 2, 3, 1, 1, 1);
  fuse_conv2d_attrs a2 = conv_attrs(1, 1, 1, 1, 1, 1, 2, 2, 4);
  fuse_conv2d_attrs a3 = conv_attrs(0, 0, 0, 0, 0, 0, 0, 0, 0);
  fuse_conv2d_attrs a4 = conv_attrs(1, 2, 0, 1, 0, 1, 3, 1, 8);
  fuse_value x = IN(g, "input.1", 2, 8, 10, 12);
  fuse_value w1 = CST(g, "w1", 8, 8, 3, 3), w2 = CST(g, "w2", 16, 2, 3, 3);
  fuse_value w3 = CST(g, "w3", 4, 8, 1, 1), w4 = CST(g, "w4", 8, 1, 2, 3);
  fuse_output(g, fuse_conv2d(g, x, w1, &a1));
  fuse_output(g, fuse_conv2d(g, x, w2, &a2));
  fuse_output(g, fuse_conv2d(g, x, w3, &a3));
  fuse_output(g, fuse_conv2d(g, x, w3, NULL));
  fuse_output(g, fuse_conv2d(g, x, w4, &a4));
  return g;
}

RUNNER_UNUSED
static fuse_graph *matmuls(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value v3 = IN(g, "v3", 3), m23 = IN(g, "m23", 2, 3), b534 = IN(g, "b534", 5, 3, 4);
  fuse_value b5123 = IN(g, "b5123", 5, 1, 2, 3), c = CST(g, "c", 7, 3, 4);
  fuse_output(g, fuse_matmul(g, v3, v3));
  fuse_output(g, fuse_matmul(g, m23, v3));
  fuse_output(g, fuse_matmul(g, v3, b534));
  fuse_output(g, fuse_matmul(g, m23, b534));
  fuse_output(g, fuse_matmul(g, b5123, c));
  return g;
}

RUNNER_UNUSED
static fuse_graph *axes(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 3, 4, 5), a = IN(g, "a", 2, 3), b = IN(g, "b", 2, 5), xs[3];
  int ax;
  for (ax = -4; ax <= 4; ax++) fuse_output(g, fuse_flatten(g, x, ax));
  for (ax = -4; ax <= 3; ax++) fuse_output(g, fuse_softmax(g, x, ax));
  xs[0] = a;
  xs[1] = b;
  xs[2] = a;
  fuse_output(g, fuse_concat(g, 3, xs, -1));
  fuse_output(g, fuse_concat(g, 3, xs, 1));
  fuse_output(g, fuse_concat(g, 1, xs, 0));
  fuse_output(g, fuse_reshape(g, x, 3, D(-1, 4, 5)));
  fuse_output(g, fuse_reshape(g, a, 0 + 1, D(6)));
  return g;
}

RUNNER_UNUSED
static fuse_graph *batch_norms(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x2 = IN(g, "x2", 5, 3), x3 = IN(g, "x3", 2, 3, 7), x4 = IN(g, "x4", 1, 3, 4, 4);
  fuse_value s = CST(g, "s", 3), b = CST(g, "b", 3), m = CST(g, "m", 3), v = CST(g, "v", 3);
  fuse_output(g, fuse_batch_norm(g, x2, s, b, m, v, 1e-5f));
  fuse_output(g, fuse_batch_norm(g, x3, s, b, m, v, 0.0f));
  fuse_output(g, fuse_batch_norm(g, x4, s, b, m, v, 0.1f));
  return g;
}

RUNNER_UNUSED
static fuse_graph *all_pools(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 1, 3, 9, 8), x3 = IN(g, "x3", 2, 5, 7), x5 = IN(g, "x5", 1, 2, 3, 4, 5);
  fuse_pool2d_attrs a;
  a = pool(3, 2, 2, 1, 1, 0, 2, 1, 2, 1, 1, 0);
  fuse_output(g, fuse_max_pool2d(g, x, &a));
  a = pool(2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  fuse_output(g, fuse_max_pool2d(g, x, &a));
  fuse_output(g, fuse_avg_pool2d(g, x, &a));
  a = pool(3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1);
  fuse_output(g, fuse_avg_pool2d(g, x, &a));
  a = pool(3, 3, 2, 2, 1, 2, 0, 1, 1, 1, 0, 0);
  fuse_output(g, fuse_avg_pool2d(g, x, &a));
  fuse_output(g, fuse_global_avg_pool2d(g, x));
  fuse_output(g, fuse_global_avg_pool2d(g, x3));
  fuse_output(g, fuse_global_avg_pool2d(g, x5));
  return g;
}

RUNNER_UNUSED
static fuse_graph *constants(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float d1[1] = {7}, d4[4] = {1.5f, -2, 0, 1e-3f}, d5[5] = {1, 2, 3, 4, 5}, d3[3] = {-1, 0, 1};
  fuse_value x = IN(g, "x", 4), c4, c5, r0, u3, z, y, late;
  c4 = CSTD(g, "c4", d4, 4);
  c5 = CSTD(g, "c5", d5, 5);
  r0 = CSTD(g, "r0", d1, 0 + 1); /* [1] */
  u3 = CSTD(g, NULL, d3, 3);     /* unnamed small constant: listed with values */
  z = CST(g, "z", 2, 2);         /* zero-filled, 4 elements */
  y = fuse_add(g, x, c4);
  y = fuse_mul(g, y, r0);
  y = fuse_add(g, y, fuse_reshape(g, z, 1, D(4)));
  fuse_output(g, y);
  fuse_output(g, fuse_add(g, u3, fuse_scalar(g, -3.0f)));
  fuse_output(g, fuse_sigmoid(g, c5));
  late = fuse_constant(g, "late", 0, NULL, d1); /* a constant created after ops */
  fuse_output(g, fuse_maximum(g, late, fuse_scalar(g, 2.0f)));
  return g;
}

RUNNER_UNUSED
static fuse_graph *no_inputs(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float d[2] = {1, 2};
  fuse_value c = CSTD(g, "c", d, 2);
  fuse_output(g, fuse_relu(g, c));
  return g;
}

RUNNER_UNUSED
static fuse_graph *outputs_misc(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 3), y = fuse_relu(g, x), z = fuse_sigmoid(g, y);
  fuse_output(g, z);
  fuse_output(g, x);
  fuse_output(g, y);
  fuse_output(g, z);
  return g;
}

RUNNER_UNUSED
static fuse_graph *odd_names(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float d[1] = {2};
  fuse_value a = IN(g, "input.1", 2), b = IN(g, "0", 2), c = IN(g, NULL, 2);
  fuse_value e = IN(g, "\xc3\xbcml\xc3\xa4ut", 2), f = IN(g, "a\"b\\c d", 2);
  fuse_value k = CSTD(g, "1.5", d, 0 + 1), y;
  fuse_value t = CSTD(g, "x-y", d, 0 + 1);
  y = fuse_add(g, a, b);
  y = fuse_add(g, y, c);
  y = fuse_add(g, y, e);
  y = fuse_add(g, y, f);
  y = fuse_mul(g, y, k);
  y = fuse_mul(g, y, t);
  fuse_output(g, y);
  return g;
}

/* floats that are hard to print and read back */
RUNNER_UNUSED
static const float awkward[] = {1e-05f, 0.1f, 3.4e38f, 1e-40f, -0.0f, 0.0f, FLT_MAX, FLT_MIN,
                                1.4e-45f, 1.17549421e-38f, 0.3f, 1.0f / 3.0f, 123456789.0f,
                                -2.5f, 100.0f, 1e10f, 6.0f, 16777216.0f, 2.7182817f,
                                9.999999e-5f, 65504.0f, 0.0078125f, 1e-7f, 3.0e-39f, -1e-40f,
                                -FLT_MAX, 1.0f + FLT_EPSILON, 0.5f, 7.0f, INFINITY, -INFINITY};
#define N_AWKWARD ((int)(sizeof awkward / sizeof awkward[0]))

RUNNER_UNUSED
static fuse_graph *awkward_graph(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 1, 4), bs, bb, bm, bv;
  char name[16];
  int i;
  bs = CST(g, "bs", 4);
  bb = CST(g, "bb", 4);
  bm = CST(g, "bm", 4);
  bv = CST(g, "bv", 4);
  for (i = 0; i < N_AWKWARD; i++) {
    float v = awkward[i];
    snprintf(name, sizeof name, "k%d", i);
    fuse_constant(g, name, 0, NULL, &v);
    fuse_output(g, fuse_maximum(g, x, fuse_scalar(g, v)));
    fuse_output(g, fuse_clip(g, x, v, INFINITY));
    fuse_output(g, fuse_clip(g, x, -INFINITY, v));
    if (!(v < 0) && !isinf(v)) fuse_output(g, fuse_batch_norm(g, x, bs, bb, bm, bv, v));
  }
  {
    float q[4] = {0.1f, -0.0f, 1e-40f, 3.4e38f};
    CSTD(g, "quad", q, 4);
  }
  fuse_output(g, fuse_clip(g, x, -INFINITY, INFINITY));
  return g;
}

#endif
