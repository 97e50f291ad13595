/* test_text.c - the text form: exact listings, print(parse(print(g))) == print(g) for graphs
   covering every op, attribute, name form and awkward float, parse features, every parse
   error (code, "line N", message, no leaks), fuse_graph_set_constant, fuse_graph_write vs
   fuse_graph_print, and locale independence. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers -- */

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define IN(g, name, ...) fuse_input((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__))
#define CST(g, name, ...) fuse_constant((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__), NULL)
#define CSTD(g, name, data, ...) fuse_constant((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__), (data))
#define INV FUSE_ERROR_INVALID_ARGUMENT
#define SHP FUSE_ERROR_SHAPE
#define PRS FUSE_ERROR_PARSE

static void failf(int line, const char *fmt, ...) {
  va_list ap;
  runner_test_failed = 1;
  fprintf(stderr, "  FAIL %s (%s:%d): ", runner_current, __FILE__, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* counting allocator (also validates frees and alignment requests) */
#include "counting_alloc.h"

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

static size_t first_diff(const char *a, const char *b) {
  size_t i = 0;
  while (a[i] && a[i] == b[i]) i++;
  return i;
}

/* equal up to one trailing newline (the spec does not pin the last byte) */
static int same_listing(const char *got, const char *want) {
  size_t a = strlen(got), b = strlen(want);
  while (a && got[a - 1] == '\n') a--;
  while (b && want[b - 1] == '\n') b--;
  return a == b && memcmp(got, want, a) == 0;
}

#define CHECK_LISTING(g, want) check_listing_((g), (want), __LINE__)
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

static fuse_graph *parse_ok_(const char *text, int line) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_graph_parse(text, NULL, &g);
  if (r != FUSE_OK || !g || fuse_graph_status(g) != FUSE_OK)
    failf(line, "parse failed: %d \"%s\"\n%s", (int)r, g ? fuse_graph_error(g) : "(no graph)",
          text);
  return g;
}
#define PARSE_OK(text) parse_ok_((text), __LINE__)

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

static fuse_pool2d_attrs pool(int kh, int kw, int sh, int sw, int pt, int pl, int pb, int pr,
                              int dh, int dw, int ceil_mode, int cip) {
  fuse_pool2d_attrs a;
  a.kernel[0] = kh;
  a.kernel[1] = kw;
  a.strides[0] = sh;
  a.strides[1] = sw;
  a.padding[0] = pt;
  a.padding[1] = pl;
  a.padding[2] = pb;
  a.padding[3] = pr;
  a.dilation[0] = dh;
  a.dilation[1] = dw;
  a.ceil_mode = ceil_mode;
  a.count_include_pad = cip;
  return a;
}

static fuse_result run_graph(const fuse_graph *g, const float *const *in, float *const *out) {
  fuse_plan *plan = NULL;
  fuse_result r = fuse_compile(g, NULL, &plan);
  if (r != FUSE_OK) return r;
  r = fuse_run(plan, in, out, NULL);
  fuse_plan_destroy(plan);
  return r;
}

/* ------------------------------------------------------------ graphs -- */

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
static const char quoted_text[] =
    "graph(%\"a b\": [2], %\"123\": [2], %_ok.name2: [2]) {\n"
    "  %\"q\\\"t\\\\\": [2] = const{1, 2}\n"
    "  %0: [2] = add(%\"a b\", %\"123\")\n"
    "  %1: [2] = mul(%0, %\"q\\\"t\\\\\")\n"
    "  %2: [2] = sub(%1, %_ok.name2)\n"
    "  return %2\n"
    "}\n";

static fuse_graph *numbering(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float cd[2] = {3, 4};
  fuse_value x = IN(g, "x", 2);
  fuse_value c = CSTD(g, NULL, cd, 2); /* created before the unnamed input */
  fuse_value u = IN(g, NULL, 2);
  fuse_output(g, fuse_add(g, fuse_add(g, x, u), c));
  return g;
}
static const char numbering_text[] =
    "graph(%x: [2], %0: [2]) {\n"
    "  %1: [2] = const{3, 4}\n"
    "  %2: [2] = add(%x, %0)\n"
    "  %3: [2] = add(%2, %1)\n"
    "  return %3\n"
    "}\n";

/* every conv2d attribute, groups, zero attrs, dilation, asymmetric padding */
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

static fuse_graph *batch_norms(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x2 = IN(g, "x2", 5, 3), x3 = IN(g, "x3", 2, 3, 7), x4 = IN(g, "x4", 1, 3, 4, 4);
  fuse_value s = CST(g, "s", 3), b = CST(g, "b", 3), m = CST(g, "m", 3), v = CST(g, "v", 3);
  fuse_output(g, fuse_batch_norm(g, x2, s, b, m, v, 1e-5f));
  fuse_output(g, fuse_batch_norm(g, x3, s, b, m, v, 0.0f));
  fuse_output(g, fuse_batch_norm(g, x4, s, b, m, v, 0.1f));
  return g;
}

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

static fuse_graph *no_inputs(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  float d[2] = {1, 2};
  fuse_value c = CSTD(g, "c", d, 2);
  fuse_output(g, fuse_relu(g, c));
  return g;
}

static fuse_graph *outputs_misc(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 3), y = fuse_relu(g, x), z = fuse_sigmoid(g, y);
  fuse_output(g, z);
  fuse_output(g, x);
  fuse_output(g, y);
  fuse_output(g, z);
  return g;
}

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

/* -------------------------------------------------------- exact listings -- */

TEST(exact_listings) {
  fuse_graph *g;
  g = seed_chain();
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_LISTING(g, seed_chain_text);
  fuse_graph_destroy(g);
  g = elementwise();
  CHECK_LISTING(g, elementwise_text);
  fuse_graph_destroy(g);
  g = pools_and_shapes();
  CHECK_LISTING(g, pools_text);
  fuse_graph_destroy(g);
  g = bn_conv_matmul();
  CHECK_LISTING(g, bn_text);
  fuse_graph_destroy(g);
  g = quoted_names();
  CHECK_LISTING(g, quoted_text);
  fuse_graph_destroy(g);
  g = numbering();
  CHECK_LISTING(g, numbering_text);
  fuse_graph_destroy(g);
}

/* the exact listings parse to graphs that print the same listing again */
TEST(exact_listings_parse) {
  const char *texts[6];
  int i;
  texts[0] = seed_chain_text;
  texts[1] = elementwise_text;
  texts[2] = pools_text;
  texts[3] = bn_text;
  texts[4] = quoted_text;
  texts[5] = numbering_text;
  for (i = 0; i < 6; i++) {
    fuse_graph *g = PARSE_OK(texts[i]);
    if (g && fuse_graph_status(g) == FUSE_OK) CHECK_LISTING(g, texts[i]);
    fuse_graph_destroy(g);
  }
  {
    fuse_graph *g = PARSE_OK(quoted_text);
    if (g) {
      CHECK(fuse_graph_find(g, "a b") != FUSE_NONE);
      CHECK(fuse_graph_find(g, "123") != FUSE_NONE);
      CHECK(fuse_graph_find(g, "q\"t\\") != FUSE_NONE);
      CHECK(fuse_graph_find(g, "_ok.name2") != FUSE_NONE);
      CHECK_EQ_INT(fuse_graph_find(g, "0"), FUSE_NONE); /* %0 labels stay unnamed */
      CHECK_EQ_INT(fuse_graph_op_count(g), 3);
    }
    fuse_graph_destroy(g);
  }
}

/* ------------------------------------------------------------ round trips -- */

TEST(round_trips) {
  fuse_graph *(*makers[16])(void);
  int n = 0, i;
  makers[n++] = seed_chain;
  makers[n++] = elementwise;
  makers[n++] = pools_and_shapes;
  makers[n++] = bn_conv_matmul;
  makers[n++] = quoted_names;
  makers[n++] = numbering;
  makers[n++] = convs;
  makers[n++] = matmuls;
  makers[n++] = axes;
  makers[n++] = batch_norms;
  makers[n++] = all_pools;
  makers[n++] = constants;
  makers[n++] = no_inputs;
  makers[n++] = outputs_misc;
  makers[n++] = odd_names;
  for (i = 0; i < n; i++) {
    fuse_graph *g = makers[i]();
    if (fuse_graph_status(g) != FUSE_OK)
      failf(__LINE__, "graph maker %d failed: %s", i, fuse_graph_error(g));
    else
      ROUNDTRIP(g);
    fuse_graph_destroy(g);
  }
}

TEST(names_in_text) {
  fuse_graph *g = odd_names(), *p;
  char *t = to_text(g);
  CHECK(t != NULL);
  if (t) {
    CHECK(strstr(t, "%input.1: [2]") || strstr(t, "%\"input.1\": [2]"));
    CHECK_STR_CONTAINS(t, "%\"0\": [2]");
    CHECK_STR_CONTAINS(t, "%0: [2]"); /* the unnamed input */
    CHECK_STR_CONTAINS(t, "%\"a\\\"b\\\\c d\": [2]");
    CHECK_STR_CONTAINS(t, "%\"1.5\": [1] = const{2}");
    CHECK_STR_CONTAINS(t, "%\"x-y\": [1] = const{2}");
    p = PARSE_OK(t);
    if (p) {
      fuse_value u = fuse_graph_input(p, 2);
      CHECK(fuse_graph_find(p, "input.1") == fuse_graph_input(p, 0));
      CHECK(fuse_graph_find(p, "0") == fuse_graph_input(p, 1));
      CHECK(u != FUSE_NONE && fuse_value_name(p, u) == NULL);
      CHECK(fuse_graph_find(p, "\xc3\xbcml\xc3\xa4ut") == fuse_graph_input(p, 3));
      CHECK(fuse_graph_find(p, "a\"b\\c d") == fuse_graph_input(p, 4));
      CHECK(fuse_graph_find(p, "1.5") != FUSE_NONE);
      CHECK(fuse_graph_find(p, "x-y") != FUSE_NONE);
    }
    fuse_graph_destroy(p);
  }
  free(t);
  fuse_graph_destroy(g);
  /* both spellings of an identifier name mean the same value */
  p = PARSE_OK("graph(%\"input.1\": [2]) {\n  %0 = relu(%input.1)\n  %1 = add(%0, %\"input.1\")\n"
               "  return %1\n}\n");
  if (p) {
    CHECK_EQ_INT(fuse_graph_find(p, "input.1"), fuse_graph_input(p, 0));
    CHECK_EQ_INT(fuse_graph_op_count(p), 2);
  }
  fuse_graph_destroy(p);
  /* a %N label is local; other labels name the value; named ops print with their name */
  p = PARSE_OK("graph(%x: [2]) {\n  %5 = relu(%x)\n  %feat = sigmoid(%5)\n  return %feat, %5\n}\n");
  if (p) {
    CHECK_EQ_INT(fuse_graph_find(p, "5"), FUSE_NONE);
    CHECK(fuse_value_name(p, fuse_graph_output(p, 1)) == NULL);
    CHECK_EQ_INT(fuse_graph_find(p, "feat"), fuse_graph_output(p, 0));
    CHECK_LISTING(p, "graph(%x: [2]) {\n  %0: [2] = relu(%x)\n  %feat: [2] = sigmoid(%0)\n"
                     "  return %feat, %0\n}\n");
    ROUNDTRIP(p);
  }
  fuse_graph_destroy(p);
}

/* ---------------------------------------------------------- awkward floats -- */

static const float awkward[] = {1e-05f, 0.1f, 3.4e38f, 1e-40f, -0.0f, 0.0f, FLT_MAX, FLT_MIN,
                                1.4e-45f, 1.17549421e-38f, 0.3f, 1.0f / 3.0f, 123456789.0f,
                                -2.5f, 100.0f, 1e10f, 6.0f, 16777216.0f, 2.7182817f,
                                9.999999e-5f, 65504.0f, 0.0078125f, 1e-7f, 3.0e-39f, -1e-40f,
                                -FLT_MAX, 1.0f + FLT_EPSILON, 0.5f, 7.0f, INFINITY, -INFINITY};
#define N_AWKWARD ((int)(sizeof awkward / sizeof awkward[0]))

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* fewest significant digits (%.Ng) that read back to v */
static int min_digits(float v) {
  char buf[64];
  int p;
  for (p = 1; p <= 9; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, (double)v);
    if (same_bits(strtof(buf, NULL), v)) return p;
  }
  return 9;
}

static int sig_digits(const char *tok, size_t len) {
  char d[64];
  size_t i, n = 0, a, b;
  for (i = 0; i < len && tok[i] != 'e' && tok[i] != 'E'; i++)
    if (tok[i] >= '0' && tok[i] <= '9' && n < sizeof d) d[n++] = tok[i];
  a = 0;
  while (a < n && d[a] == '0') a++;
  b = n;
  while (b > a && d[b - 1] == '0') b--;
  return b > a ? (int)(b - a) : 1;
}

/* checks one printed number token against the float it must stand for */
static int check_token_(const char *tok, size_t len, float v, int line) {
  char buf[80];
  float got;
  char *end;
  int ok = 1;
  if (len == 0 || len >= sizeof buf) {
    failf(line, "bad token length %lu for %.9g", (unsigned long)len, (double)v);
    return 0;
  }
  memcpy(buf, tok, len);
  buf[len] = 0;
  if (isinf(v)) {
    if (strcmp(buf, v > 0 ? "inf" : "-inf") != 0) {
      failf(line, "infinity printed as \"%s\"", buf);
      return 0;
    }
    return 1;
  }
  got = strtof(buf, &end);
  if (*end != 0) {
    failf(line, "token \"%s\" for %.9g is not a plain decimal", buf, (double)v);
    ok = 0;
  }
  if (!same_bits(got, v)) {
    failf(line, "token \"%s\" reads back as %.9g (bits differ), want %.9g", buf, (double)got,
          (double)v);
    ok = 0;
  }
  {
    /* shortest: no more significant digits than needed, or no longer than %.<needed>g */
    char ref[64];
    snprintf(ref, sizeof ref, "%.*g", min_digits(v), (double)v);
    if (sig_digits(buf, len) > min_digits(v) && len > strlen(ref)) {
      failf(line, "token \"%s\" for %.9g is not the shortest (\"%s\" reads back too)", buf,
            (double)v, ref);
      ok = 0;
    }
  }
  return ok;
}

/* finds the k-th occurrence of prefix and returns the token after it, up to a stop char */
static const char *token_after(const char *text, const char *prefix, int k, const char *stops,
                               size_t *len) {
  const char *p = text;
  int i;
  for (i = 0; i <= k; i++) {
    p = strstr(p, prefix);
    if (!p) return NULL;
    p += strlen(prefix);
  }
  *len = strcspn(p, stops);
  return p;
}

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

TEST(awkward_floats) {
  fuse_graph *g = awkward_graph();
  char *t;
  const char *tok;
  size_t len;
  char pre[32];
  int i, nbn = 0;
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  t = to_text(g);
  CHECK(t != NULL);
  if (!t) {
    fuse_graph_destroy(g);
    return;
  }
  for (i = 0; i < N_AWKWARD; i++) {
    float v = awkward[i];
    snprintf(pre, sizeof pre, "%%k%d: [] = const{", i);
    tok = token_after(t, pre, 0, "}", &len);
    if (!tok) failf(__LINE__, "no line for constant k%d", i);
    else check_token_(tok, len, v, __LINE__);
    tok = token_after(t, "= maximum(%x, ", i, ")", &len);
    if (!tok) failf(__LINE__, "no inline scalar %d", i);
    else check_token_(tok, len, v, __LINE__);
    tok = token_after(t, ", lo=", 2 * i, ",", &len);
    if (!tok) failf(__LINE__, "no clip lo %d", i);
    else check_token_(tok, len, v, __LINE__);
    tok = token_after(t, ", hi=", 2 * i + 1, ")", &len);
    if (!tok) failf(__LINE__, "no clip hi %d", i);
    else check_token_(tok, len, v, __LINE__);
    if (!(v < 0) && !isinf(v)) {
      tok = token_after(t, "eps=", nbn++, ")", &len);
      if (!tok) failf(__LINE__, "no eps %d", i);
      else check_token_(tok, len, v, __LINE__);
    }
  }
  tok = token_after(t, "%quad: [4] = const{", 0, "}", &len);
  CHECK(tok != NULL);
  if (tok) {
    const float q[4] = {0.1f, -0.0f, 1e-40f, 3.4e38f};
    const char *p = tok;
    for (i = 0; i < 4; i++) {
      size_t l = strcspn(p, ",}");
      check_token_(p, l, q[i], __LINE__);
      p += l;
      if (*p == ',') p++;
      if (*p == ' ') p++;
    }
  }
  /* the forms the spec names */
  CHECK_STR_CONTAINS(t, "%k0: [] = const{1e-05}");
  CHECK_STR_CONTAINS(t, "%k1: [] = const{0.1}");
  CHECK_STR_CONTAINS(t, "%k16: [] = const{6}");
  CHECK_STR_CONTAINS(t, "%k27: [] = const{0.5}");
  CHECK_STR_CONTAINS(t, "clip(%x, lo=-inf, hi=inf)");
  ROUNDTRIP(g);
  free(t);
  fuse_graph_destroy(g);
  /* one small graph per value, so that each value that does not read back is named */
  for (i = 0; i < N_AWKWARD; i++) {
    float v = awkward[i];
    fuse_graph *h = fuse_graph_create(NULL);
    fuse_value x = IN(h, "x", 2);
    fuse_constant(h, "k", 0, NULL, &v);
    fuse_output(h, fuse_clip(h, fuse_maximum(h, x, fuse_scalar(h, v)), v, INFINITY));
    t = to_text(h);
    if (t) {
      fuse_graph *p = NULL;
      fuse_result r = fuse_graph_parse(t, NULL, &p);
      char *t2 = r == FUSE_OK ? to_text(p) : NULL;
      if (r != FUSE_OK)
        failf(__LINE__, "value %.9g (awkward[%d]) printed as below does not parse: %s\n%s",
              (double)v, i, p ? fuse_graph_error(p) : "", t);
      else if (!t2 || strcmp(t, t2) != 0)
        failf(__LINE__, "value %.9g (awkward[%d]) does not round-trip:\n%s\n%s", (double)v, i,
              t, t2 ? t2 : "");
      free(t2);
      fuse_graph_destroy(p);
    }
    free(t);
    fuse_graph_destroy(h);
  }
}

/* random bit patterns (denormals included): the printed token reads back exactly, and the
   parser reads it back to the same float */
TEST(random_floats_round_trip) {
  uint32_t state = 0x9e3779b9u;
  int round, bad = 0;
  for (round = 0; round < 8 && bad < 10; round++) {
    fuse_graph *g = fuse_graph_create(NULL), *p = NULL;
    float vals[2000];
    char *t, *t2 = NULL;
    const char *q;
    int i, j;
    fuse_output(g, fuse_relu(g, IN(g, "x", 4)));
    for (i = 0; i < 500; i++) {
      for (j = 0; j < 4; j++) {
        float f;
        do {
          uint32_t bits;
          state = state * 1664525u + 1013904223u;
          bits = state;
          if (round % 2) bits &= 0x807fffffu | ((state >> 7) & 0x03800000u); /* small exps */
          memcpy(&f, &bits, sizeof f);
        } while (!isfinite(f) || fabsf(f) == FLT_MAX);
        vals[4 * i + j] = f;
      }
      CSTD(g, NULL, &vals[4 * i], 4);
    }
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    t = to_text(g);
    if (!t) {
      fuse_graph_destroy(g);
      CHECK(0);
      continue;
    }
    q = t;
    for (i = 0; i < 2000 && bad < 10; i++) {
      size_t l;
      if (i % 4 == 0) {
        q = strstr(q, "= const{");
        if (!q) {
          failf(__LINE__, "constant %d not found", i / 4);
          bad = 10;
          break;
        }
        q += 8;
      }
      l = strcspn(q, ",}");
      if (!check_token_(q, l, vals[i], __LINE__)) bad++;
      q += l;
      if (*q == ',') q++;
      if (*q == ' ') q++;
    }
    if (fuse_graph_parse(t, NULL, &p) != FUSE_OK) {
      failf(__LINE__, "random constants do not parse: %s", p ? fuse_graph_error(p) : "");
      bad++;
    } else {
      t2 = to_text(p);
      if (!t2 || strcmp(t, t2) != 0) {
        size_t d = t2 ? first_diff(t, t2) : 0, a = d;
        while (a > 0 && t[a - 1] != '\n') a--;
        failf(__LINE__, "random constants do not round-trip; first differing line:\n%.*s\n%.*s",
              (int)strcspn(t + a, "\n"), t + a, t2 ? (int)strcspn(t2 + a, "\n") : 0,
              t2 ? t2 + a : "");
        bad++;
      }
    }
    free(t);
    free(t2);
    fuse_graph_destroy(p);
    fuse_graph_destroy(g);
  }
}

/* the spec's message form for every parse error is "line L, column C: ..." */
TEST(parse_error_columns) {
  static const char *const texts[] = {
      "graph(%x: [1, 3]) {\n  %0 = frobnicate(%x)\n  return %0\n}\n",
      "graph(%x: [1, 3]) {\n  %0 = relu(%nope)\n  return %0\n}\n",
      "graph(%x: [2]) {\n  %aa = relu(%x)\n  %aa = relu(%x)\n  return %aa\n}\n",
      "graph(%x: [2, 3]) {\n  %0: [1, 3] = relu(%x)\n  return %0\n}\n",
      "graph(%x: [2]) {\n  %0 = add(%x)\n  return %0\n}\n",
      "graph(%x: [2]) {\n  %c: [2] = const{1}\n  return %x\n}\n",
      "graph(%x: [2]) {\n  %c = const\n  return %x\n}\n",
      NULL};
  int i;
  for (i = 0; texts[i]; i++) {
    fuse_graph *g = NULL;
    fuse_result r = fuse_graph_parse(texts[i], NULL, &g);
    const char *m = g ? fuse_graph_error(g) : "";
    CHECK_EQ_INT(r, FUSE_ERROR_PARSE);
    if (!strstr(m, ", column "))
      failf(__LINE__, "message \"%s\" has no \"line L, column C\"", m);
    fuse_graph_destroy(g);
  }
}

/* the parser reads long decimals to the nearest float */
TEST(parse_long_decimals) {
  char text[8192];
  size_t n = 0;
  fuse_graph *g;
  int i;
  n += (size_t)snprintf(text + n, sizeof text - n, "graph() {\n");
  for (i = 0; i < N_AWKWARD; i++) {
    if (isinf(awkward[i])) continue;
    n += (size_t)snprintf(text + n, sizeof text - n, "  %%k%d: [] = const{%.40g}\n", i,
                          (double)awkward[i]);
  }
  n += (size_t)snprintf(text + n, sizeof text - n,
                        "  %%out = relu(%%k0)\n  return %%out\n}\n");
  CHECK(n < sizeof text);
  g = PARSE_OK(text);
  if (g) {
    char *t = to_text(g);
    CHECK(t != NULL);
    for (i = 0; t && i < N_AWKWARD; i++) {
      char pre[32];
      const char *tok;
      size_t len;
      if (isinf(awkward[i])) continue;
      snprintf(pre, sizeof pre, "%%k%d: [] = const{", i);
      tok = token_after(t, pre, 0, "}", &len);
      if (!tok) failf(__LINE__, "no line for constant k%d", i);
      else check_token_(tok, len, awkward[i], __LINE__);
    }
    free(t);
  }
  fuse_graph_destroy(g);
}

/* strict: a decimal just above the midpoint of two floats rounds up (strtod + cast would
   round to even and give 1) */
#if 0 /* not promised: parsing is exact for what the printer writes; long decimals may be 1 ulp off */
TEST(parse_decimal_correctly_rounded) {
  fuse_graph *g = PARSE_OK(
      "graph() {\n  %a: [] = const{1.00000005960464477539062500000001}\n"
      "  %b: [] = const{1.00000005960464477539062499999999}\n  %o = relu(%a)\n  return %o\n}\n");
  if (g) {
    char *t = to_text(g);
    CHECK_STR_CONTAINS(t, "%a: [] = const{1.0000001}");
    CHECK_STR_CONTAINS(t, "%b: [] = const{1}");
    free(t);
  }
  fuse_graph_destroy(g);
}
#endif

/* ---------------------------------------------------------- parse features -- */

TEST(parse_comments_whitespace_defaults) {
  /* the same graph as built below, written with comments, odd spacing, no annotations on
     ops, %N labels and omitted attributes */
  const char *text =
      "# a comment before everything\n"
      "graph ( %x : [ 1 ,3, 4,4 ] ,%y:[1,3,4,4] )   # trailing comment\n"
      "{\n"
      "\t%w: [2, 3, 1, 1] = const   # weights\n"
      "  %7 = conv2d(%x,%w)\n"
      "  %3\n     =\n  max_pool2d( %7 , kernel = [ 2 , 2 ] )   \n"
      "  %9: [1, 2, 2, 2] = avg_pool2d(%3, kernel=[2, 2], count_include_pad=1)\n"
      "\n\n   # blank lines and comments\n"
      "  %1 = relu( %9 )  return %1 ,%y ,  %3  # return on the same line\n"
      "}\n"
      "# a comment after everything\n";
  fuse_graph *p = PARSE_OK(text), *g;
  fuse_pool2d_attrs mp = pool(2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  fuse_pool2d_attrs ap = pool(2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
  fuse_value x, y, w, c, m, a;
  char *want, *got;
  g = fuse_graph_create(NULL);
  x = IN(g, "x", 1, 3, 4, 4);
  y = IN(g, "y", 1, 3, 4, 4);
  w = CST(g, "w", 2, 3, 1, 1);
  c = fuse_conv2d(g, x, w, NULL);
  m = fuse_max_pool2d(g, c, &mp);
  a = fuse_avg_pool2d(g, m, &ap);
  fuse_output(g, fuse_relu(g, a));
  fuse_output(g, y);
  fuse_output(g, m);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  if (p) {
    want = to_text(g);
    got = to_text(p);
    CHECK(want && got && strcmp(want, got) == 0);
    if (want && got && strcmp(want, got) != 0)
      fprintf(stderr, "--- parsed ---\n%s--- built ---\n%s", got, want);
    free(want);
    free(got);
    CHECK_EQ_INT(fuse_graph_op_count(p), 4);
    CHECK_EQ_INT(fuse_graph_output_count(p), 3);
  }
  fuse_graph_destroy(p);
  fuse_graph_destroy(g);
}

TEST(parse_reshape_minus_one_and_annotations) {
  fuse_graph *p = PARSE_OK("graph(%x: [2, 3, 4]) {\n"
                           "  %a = reshape(%x, shape=[-1, 4])\n"
                           "  %b: [2, 12] = reshape(%x, shape=[2, -1])\n"
                           "  %c: [24] = reshape(%x, shape=[-1])\n"
                           "  return %a, %b, %c\n}\n");
  if (p) {
    fuse_value a = fuse_graph_output(p, 0), c = fuse_graph_output(p, 2);
    CHECK_EQ_INT(fuse_value_rank(p, a), 2);
    if (fuse_value_rank(p, a) == 2) {
      CHECK_EQ_INT(fuse_value_shape(p, a)[0], 6);
      CHECK_EQ_INT(fuse_value_shape(p, a)[1], 4);
    }
    CHECK_EQ_INT(fuse_value_rank(p, c), 1);
    if (fuse_value_rank(p, c) == 1) CHECK_EQ_INT(fuse_value_shape(p, c)[0], 24);
    ROUNDTRIP(p);
  }
  fuse_graph_destroy(p);
}

TEST(parse_number_operands) {
  fuse_graph *p = PARSE_OK("graph(%x: [2, 3]) {\n"
                           "  %0 = maximum(%x, 0)\n"
                           "  %1 = add(2.5, %0)\n"
                           "  %2 = mul(%1, -1)\n"
                           "  %3 = minimum(%2, 1e-05)\n"
                           "  %4 = sub(%3, -inf)\n"
                           "  %5 = sub(0.25, 1.5)\n"
                           "  return %4, %5\n}\n");
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 3), y;
  y = fuse_maximum(g, x, fuse_scalar(g, 0.0f));
  y = fuse_add(g, fuse_scalar(g, 2.5f), y);
  y = fuse_mul(g, y, fuse_scalar(g, -1.0f));
  y = fuse_minimum(g, y, fuse_scalar(g, 1e-5f));
  y = fuse_sub(g, y, fuse_scalar(g, -INFINITY));
  fuse_output(g, y);
  fuse_output(g, fuse_sub(g, fuse_scalar(g, 0.25f), fuse_scalar(g, 1.5f)));
  if (p) {
    char *a = to_text(p), *b = to_text(g);
    CHECK(a && b && strcmp(a, b) == 0);
    if (a && b && strcmp(a, b) != 0) fprintf(stderr, "--- parsed ---\n%s--- built ---\n%s", a, b);
    CHECK_STR_CONTAINS(a, "maximum(%x, 0)");
    CHECK_STR_CONTAINS(a, "add(2.5, %0)");
    CHECK_STR_CONTAINS(a, "sub(0.25, 1.5)");
    free(a);
    free(b);
    CHECK_EQ_INT(fuse_graph_op_count(p), 6);
    {
      fuse_value o = fuse_graph_output(p, 1);
      CHECK_EQ_INT(fuse_value_rank(p, o), 0);
    }
  }
  fuse_graph_destroy(p);
  fuse_graph_destroy(g);
}

TEST(parse_every_attribute_explicit) {
  const char *text =
      "graph(%x: [1, 4, 9, 8], %m: [2, 3]) {\n"
      "  %w: [4, 2, 3, 3] = const\n"
      "  %s: [4] = const{1, 2, 3, 4}\n"
      "  %c = conv2d(%x, %w, strides=[2, 1], padding=[1, 2, 0, 1], dilation=[1, 2], groups=2)\n"
      "  %bn = batch_norm(%c, %s, %s, %s, %s, eps=0.01)\n"
      "  %mp = max_pool2d(%bn, kernel=[2, 3], strides=[1, 2], padding=[1, 1, 0, 2], "
      "dilation=[2, 1], ceil_mode=1)\n"
      "  %ap = avg_pool2d(%mp, kernel=[2, 2], strides=[2, 2], padding=[1, 0, 1, 0], ceil_mode=1, "
      "count_include_pad=1)\n"
      "  %cl = clip(%ap, lo=-1.5, hi=inf)\n"
      "  %f = flatten(%cl, axis=2)\n"
      "  %sm = softmax(%m, axis=-1)\n"
      "  %cc = concat(%sm, %m, axis=0)\n"
      "  %r = reshape(%cc, shape=[3, -1])\n"
      "  return %f, %r\n}\n";
  fuse_graph *p = PARSE_OK(text);
  if (p) {
    /* conv: H (9+1-3)/2+1 = 4, W (8+3-5)/1+1 = 7; groups 2 */
    fuse_value c = fuse_graph_find(p, "c"), mp = fuse_graph_find(p, "mp");
    fuse_value f = fuse_graph_output(p, 0), r = fuse_graph_output(p, 1);
    CHECK(c != FUSE_NONE);
    if (fuse_value_rank(p, c) == 4) {
      CHECK_EQ_INT(fuse_value_shape(p, c)[2], 4);
      CHECK_EQ_INT(fuse_value_shape(p, c)[3], 7);
    }
    /* max pool: eff 3 x 3, H (4+1-3)/1+1 = 3, W ceil((7+3-3)/2)+1 = 5, start 8 >= 7+1 -> 4 */
    if (fuse_value_rank(p, mp) == 4) {
      CHECK_EQ_INT(fuse_value_shape(p, mp)[2], 3);
      CHECK_EQ_INT(fuse_value_shape(p, mp)[3], 4);
    }
    CHECK_EQ_INT(fuse_value_rank(p, f), 2);
    if (fuse_value_rank(p, r) == 2) {
      CHECK_EQ_INT(fuse_value_shape(p, r)[0], 3);
      CHECK_EQ_INT(fuse_value_shape(p, r)[1], 4);
    }
    ROUNDTRIP(p);
  }
  fuse_graph_destroy(p);
}

/* ------------------------------------------------------------ parse errors -- */

TEST(parse_errors) {
  PARSE_ERR("", PRS, 0, 1, "expected");
  PARSE_ERR("   \n# only a comment\n", PRS, 0, 0, "expected");
  PARSE_ERR("grph(%x: [1]) {\n  return %x\n}\n", PRS, 0, 1, "expected", "graph");
  PARSE_ERR("(%x: [1]) {\n  return %x\n}\n", PRS, 0, 1, "expected", "graph");
  PARSE_ERR("graph %x: [1]) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  /* unknown / bad op */
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = frobnicate(%x)\n  return %0\n}\n", PRS, 0, 2,
            "frobnicate", "expected");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = 42(%x)\n  return %0\n}\n", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = cosnt\n  return %0\n}\n", PRS, 0, 2, "cosnt",
            "expected");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = Relu(%x)\n  return %0\n}\n", PRS, 0, 2, "Relu",
            "expected");
  /* unknown attribute */
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = softmax(%x, axes=1)\n  return %0\n}\n", PRS, 0, 2,
            "axes", "expected");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%x, axis=1)\n  return %0\n}\n", PRS, 0, 2, "axis",
            "expected");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %0 = avg_pool2d(%x, kernel=[2, 2], dilation=[1, 1])\n"
            "  return %0\n}\n",
            PRS, 0, 2, "dilation", "expected");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %w: [3, 3, 1, 1] = const\n"
            "  %0 = conv2d(%x, %w, stride=[1, 1])\n  return %0\n}\n",
            PRS, 0, 3, "stride", "expected");
  /* wrong attribute type */
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = softmax(%x, axis=[1])\n  return %0\n}\n", PRS, 0, 2,
            "expected", "must be");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = softmax(%x, axis=1.5)\n  return %0\n}\n", PRS, 0, 2,
            "expected", "must be");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %w: [3, 3, 1, 1] = const\n"
            "  %0 = conv2d(%x, %w, strides=1)\n  return %0\n}\n",
            PRS, 0, 3, "expected", "must be");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %w: [3, 3, 1, 1] = const\n"
            "  %0 = conv2d(%x, %w, padding=[1, 1])\n  return %0\n}\n",
            PRS, INV, 3, "expected", "padding");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %0 = max_pool2d(%x, kernel=[2, 2, 2])\n"
            "  return %0\n}\n",
            PRS, INV, 2, "expected", "kernel");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = clip(%x, lo=[0], hi=1)\n  return %0\n}\n", PRS, 0, 2,
            "expected", "must be");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = clip(%x, lo=%x, hi=1)\n  return %0\n}\n", PRS, 0, 2,
            "expected");
  /* undefined value */
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%nope)\n  return %0\n}\n", PRS, 0, 2, "nope");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%x)\n  return %zz\n}\n", PRS, 0, 3, "zz");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%x)\n  %1 = add(%0, %7)\n  return %1\n}\n", PRS, 0,
            3, "%7", "7");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%0)\n  return %0\n}\n", PRS, 0, 2, "%0", "0");
  /* redefined name */
  PARSE_ERR("graph(%dup: [2]) {\n  %dup = relu(%dup)\n  return %dup\n}\n", PRS, INV, 2, "dup");
  PARSE_ERR("graph(%x: [2]) {\n  %aa = relu(%x)\n  %aa = relu(%x)\n  return %aa\n}\n", PRS, INV,
            3, "aa");
  PARSE_ERR("graph(%x: [2], %x: [3]) {\n  return %x\n}\n", PRS, INV, 1, "x");
  PARSE_ERR("graph(%x: [2]) {\n  %cc: [2] = const\n  %cc: [2] = const\n  return %x\n}\n", PRS,
            INV, 3, "cc");
  /* missing ) */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = add(%x, %x %x)\n  return %0\n}\n", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: [2] {\n  return %x\n}\n", PRS, 0, 1, "expected");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu(%x ]\n  return %0\n}\n", PRS, 0, 2, "expected");
  /* missing ] */
  PARSE_ERR("graph(%x: [2, 3) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  /* missing } */
  PARSE_ERR("graph(%x: [2]) {\n  return %x", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: [2]) {\n  return %x ]", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: [2]) \n  return %x\n}\n", PRS, 0, 2, "expected");
  /* missing return */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu(%x)\n}\n", PRS, 0, 3, "expected", "return");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu(%x)\n  retrun %0\n}\n", PRS, 0, 3, "expected");
  /* trailing garbage */
  PARSE_ERR("graph(%x: [2]) {\n  return %x\n}\nfoo\n", PRS, 0, 4, "expected", "trailing", "end");
  PARSE_ERR("graph(%x: [2]) {\n  return %x\n} }", PRS, 0, 3, "expected", "trailing", "end");
  PARSE_ERR("graph(%x: [2]) {\n  return %x\n}\ngraph(%y: [2]) {\n  return %y\n}\n", PRS, 0, 4,
            "expected", "trailing", "end");
  /* unterminated quoted name */
  PARSE_ERR("graph(%\"abc: [1]) { return %abc }", PRS, 0, 1, "expected", "unterminated", "\"");
  PARSE_ERR("graph(%x: [2]) {\n  %\"half = relu(%x)\n  return %x\n}\n", PRS, 0, 0, "expected",
            "unterminated", "\"");
  /* missing / malformed names and shapes */
  PARSE_ERR("graph(%x) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  PARSE_ERR("graph(x: [2]) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  PARSE_ERR("graph(%x: [2]) {\n  %c = const\n  return %x\n}\n", PRS, 0, 2, "expected",
            "needs its shape");
  PARSE_ERR("graph(%x: [2]) {\n  %0 relu(%x)\n  return %0\n}\n", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: 2) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  PARSE_ERR("graph(%: [2]) {\n  return %\n}\n", PRS, 0, 1, "expected");
  /* bad numbers */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = maximum(%x, 1.5.3)\n  return %0\n}\n", PRS, 0, 2,
            "expected", "number");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = maximum(%x, -)\n  return %0\n}\n", PRS, 0, 2, "expected",
            "number");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = maximum(%x, 1e)\n  return %0\n}\n", PRS, 0, 2, "expected",
            "number");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = maximum(%x, .)\n  return %0\n}\n", PRS, 0, 2, "expected",
            "number");
  PARSE_ERR("graph(%x: [2, 2.5]) {\n  return %x\n}\n", PRS, 0, 1, "expected", "integer");
  PARSE_ERR("graph(%x: [2, 99999999999999999999999]) {\n  return %x\n}\n", PRS, INV, 1,
            "expected", "integer", "range", "overflow", "input");
  PARSE_ERR("graph(%x: [2]) {\n  %c: [2] = const{1, 2q}\n  return %x\n}\n", PRS, 0, 2,
            "expected", "number");
  /* constant values that do not match the shape */
  PARSE_ERR("graph(%x: [2]) {\n  %c: [2] = const{1}\n  return %x\n}\n", PRS, INV, 2, "const",
            "expected", "value");
  PARSE_ERR("graph(%x: [2]) {\n  %c: [2] = const{1, 2, 3}\n  return %x\n}\n", PRS, INV, 2,
            "const", "expected", "value");
  /* wrong shape annotations */
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0: [1, 3] = relu(%x)\n  return %0\n}\n", PRS, 0, 2,
            "[1, 3]", "[1,3]", "[2, 3]", "[2,3]", "expected");
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0: [2, 3] = relu(%x)\n  %1: [3, 2, 1] = reshape(%0, "
            "shape=[3, 2])\n  return %1\n}\n",
            PRS, 0, 3, "[3, 2, 1]", "[3,2,1]", "[3, 2]", "[3,2]", "expected");
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0: [] = relu(%x)\n  return %0\n}\n", PRS, 0, 2, "[]",
            "expected");
  /* wrong arity */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = add(%x)\n  return %0\n}\n", PRS, 0, 2, "expected", "add");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu(%x, %x)\n  return %0\n}\n", PRS, 0, 2, "expected",
            "relu");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu()\n  return %0\n}\n", PRS, 0, 2, "expected", "relu");
  PARSE_ERR("graph(%x: [1, 2]) {\n  %0 = concat(axis=0)\n  return %0\n}\n", PRS, INV, 2,
            "expected", "concat");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = softmax(axis=0, %x)\n  return %0\n}\n", PRS, 0, 2,
            "expected");
  /* builder errors inside the text keep the builder's code and say the line */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = clip(%x, lo=1, hi=0)\n  return %0\n}\n", INV, 0, 2,
            "clip");
  PARSE_ERR("graph(%x: [2, 3], %y: [4]) {\n  %0 = relu(%x)\n  %1 = add(%0, %y)\n"
            "  return %1\n}\n",
            SHP, 0, 3, "add");
  PARSE_ERR("graph(%x: [2, 0]) {\n  return %x\n}\n", INV, PRS, 1, "input", "expected", "0");
  PARSE_ERR("graph(%x: [2, -3]) {\n  return %x\n}\n", INV, PRS, 1, "input", "expected", "-3");
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0 = softmax(%x, axis=2)\n  return %0\n}\n", INV, 0, 2,
            "softmax");
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0 = reshape(%x, shape=[-1, -1])\n  return %0\n}\n", INV, 0,
            2, "reshape");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %0 = max_pool2d(%x)\n  return %0\n}\n", INV, PRS, 2,
            "max_pool2d"); /* kernel omitted = 0 */
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n\n  %0 = max_pool2d(%x, kernel=[2, 2], padding=[2, 0, 0, "
            "0])\n  return %0\n}\n",
            INV, 0, 3, "max_pool2d");
  /* the channel mismatch of the spec's example, with its shapes */
  {
    const char *text = "graph(%x: [1, 3, 8, 8]) {\n"
                       "  %w: [8, 4, 3, 3] = const\n"
                       "  %y = conv2d(%x, %w)\n"
                       "  return %y\n"
                       "}\n";
    fuse_graph *g = NULL;
    fuse_result r = fuse_graph_parse(text, NULL, &g);
    CHECK_EQ_INT(r, FUSE_ERROR_SHAPE);
    CHECK(g != NULL);
    if (g) {
      const char *m = fuse_graph_error(g);
      CHECK_EQ_INT(fuse_graph_status(g), FUSE_ERROR_SHAPE);
      CHECK(has_line(m, 3));
      CHECK_STR_CONTAINS(m, "conv2d");
      CHECK_STR_CONTAINS(m, "[1,3,8,8]");
      CHECK_STR_CONTAINS(m, "[8,4,3,3]");
    }
    fuse_graph_destroy(g);
  }
  /* bad arguments */
  {
    fuse_graph *g = NULL;
    fuse_result r = fuse_graph_parse(NULL, NULL, &g);
    CHECK(r == INV || r == PRS);
    fuse_graph_destroy(g);
    CHECK_EQ_INT(fuse_graph_parse(seed_chain_text, NULL, NULL), INV);
  }
}

/* every prefix of a valid listing is an error with a line number, never a crash or leak */
TEST(parse_truncations) {
  size_t len = strlen(bn_text), cut;
  char buf[2048];
  int bad = 0;
  for (cut = 0; cut + 2 < len; cut++) {
    counting_alloc c;
    fuse_allocator al = ca_make(&c);
    fuse_graph *g = NULL;
    fuse_result r;
    memcpy(buf, bn_text, cut);
    buf[cut] = 0;
    r = fuse_graph_parse(buf, &al, &g);
    if (r == FUSE_OK || !g || !strstr(fuse_graph_error(g), "line ")) {
      if (bad++ < 5)
        failf(__LINE__, "prefix of %lu bytes: result %d, message \"%s\"", (unsigned long)cut,
              (int)r, g ? fuse_graph_error(g) : "(no graph)");
    }
    fuse_graph_destroy(g);
    ca_check_(&c, __LINE__, "truncated parse");
  }
}

TEST(parse_out_of_memory) {
  counting_alloc c;
  fuse_allocator al;
  fuse_graph *g = NULL;
  long total, k;
  al = ca_make(&c);
  CHECK_EQ_INT(fuse_graph_parse(bn_text, &al, &g), FUSE_OK);
  fuse_graph_destroy(g);
  total = c.calls;
  ca_check_(&c, __LINE__, "parse");
  for (k = 1; k <= total; k++) {
    fuse_result r;
    al = ca_make(&c);
    c.fail_at = k;
    g = NULL;
    r = fuse_graph_parse(bn_text, &al, &g);
    if (r != FUSE_OK && r != FUSE_ERROR_OUT_OF_MEMORY)
      failf(__LINE__, "allocation %ld refused: parse returned %d (%s)", k, (int)r,
            g ? fuse_graph_error(g) : "(no graph)");
    if (!g && r != FUSE_ERROR_OUT_OF_MEMORY)
      failf(__LINE__, "allocation %ld refused: *out NULL with %d", k, (int)r);
    if (g && fuse_graph_status(g) != r)
      failf(__LINE__, "allocation %ld refused: graph status %d, returned %d", k,
            (int)fuse_graph_status(g), (int)r);
    fuse_graph_destroy(g);
    ca_check_(&c, __LINE__, "parse under OOM");
  }
}

/* ------------------------------------------------------------ set_constant -- */

TEST(set_constant) {
  const char *text = "graph(%x: [2, 3]) {\n"
                     "  %w: [2, 3] = const\n"
                     "  %b: [3] = const{1, 2, 3}\n"
                     "  %0 = mul(%x, %w)\n"
                     "  %y = add(%0, %b)\n"
                     "  return %y\n}\n";
  const float wd[6] = {1, -2, 3, -4, 5, -6}, bd[3] = {0.5f, 0.25f, -1};
  const float ones[6] = {1, 1, 1, 1, 1, 1};
  const float want[6] = {1.5f, -1.75f, 2, -3.5f, 5.25f, -7};
  float out[6] = {0};
  const float *in[1];
  float *outs[1];
  fuse_graph *g = PARSE_OK(text);
  char *t;
  if (!g) return;
  CHECK_EQ_INT(fuse_graph_set_constant(g, "w", wd, 6), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_set_constant(g, "b", bd, 3), FUSE_OK);
  t = to_text(g);
  CHECK_STR_CONTAINS(t, "%b: [3] = const{0.5, 0.25, -1}");
  CHECK_STR_CONTAINS(t, "%w: [2, 3] = const\n");
  free(t);
  in[0] = ones;
  outs[0] = out;
  CHECK_EQ_INT(run_graph(g, in, outs), FUSE_OK);
  CHECK_NEAR_ARRAY(out, want, 6, 0);
  fuse_graph_destroy(g);

  /* errors, each on a fresh graph (a failed fill may be sticky): each is refused and leaves
     the constant as it was */
  {
    static const char *const names[] = {"nope", "b", "b", "b", "w", "x", "y", "b", NULL, "", "0"};
    const float *datas[11];
    const size_t counts[11] = {3, 2, 4, 0, 5, 6, 6, 3, 3, 3, 3};
    int k;
    for (k = 0; k < 11; k++) datas[k] = wd;
    datas[7] = NULL; /* NULL data */
    /* "x" is an input, "y" an op, "0" a %0 label (not a name) */
    for (k = 0; k < 11; k++) {
      fuse_result r;
      g = PARSE_OK(text);
      if (!g) return;
      r = fuse_graph_set_constant(g, names[k], datas[k], counts[k]);
      if (r == FUSE_OK)
        failf(__LINE__, "set_constant case %d (name %s, n %lu) succeeded", k,
              names[k] ? names[k] : "NULL", (unsigned long)counts[k]);
      if (fuse_graph_status(g) == FUSE_OK) { /* unless the failure is sticky, b is as it was */
        t = to_text(g);
        CHECK_STR_CONTAINS(t, "%b: [3] = const{1, 2, 3}");
        free(t);
      }
      fuse_graph_destroy(g);
    }
    CHECK(fuse_graph_set_constant(NULL, "b", bd, 3) != FUSE_OK);
  }

  /* also on a graph built with the API; a NULL-data constant; a rank-0 constant */
  {
    fuse_graph *h = fuse_graph_create(NULL);
    const float v = -0.125f, q[4] = {4, 3, 2, 1};
    fuse_value x = IN(h, "x", 4), c = CST(h, "c", 4), s = fuse_constant(h, "s", 0, NULL, NULL);
    fuse_output(h, fuse_mul(h, fuse_add(h, x, c), s));
    CHECK_EQ_INT(fuse_graph_set_constant(h, "c", q, 4), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_set_constant(h, "s", &v, 1), FUSE_OK);
    CHECK(fuse_graph_set_constant(h, "s", q, 2) != FUSE_OK);
    t = to_text(h);
    CHECK_STR_CONTAINS(t, "%c: [4] = const{4, 3, 2, 1}");
    CHECK_STR_CONTAINS(t, "%s: [] = const{-0.125}");
    free(t);
    fuse_graph_destroy(h);
  }
}

/* ------------------------------------------------------------ write / print -- */

TEST(write_and_print_agree) {
  fuse_graph *(*makers[4])(void);
  int i;
  makers[0] = seed_chain;
  makers[1] = awkward_graph;
  makers[2] = odd_names;
  makers[3] = all_pools;
  for (i = 0; i < 4; i++) {
    fuse_graph *g = makers[i]();
    sbuf b;
    FILE *f = tmpfile();
    char *fbytes = NULL;
    long flen = 0;
    memset(&b, 0, sizeof b);
    CHECK_EQ_INT(fuse_graph_write(g, sbuf_write, &b), FUSE_OK);
    CHECK(b.calls > 0);
    CHECK(b.n > 0 && b.p && strlen(b.p) == b.n); /* no NUL bytes inside */
    CHECK(f != NULL);
    if (f) {
      CHECK_EQ_INT(fuse_graph_print(g, f), FUSE_OK);
      fflush(f);
      fseek(f, 0, SEEK_END);
      flen = ftell(f);
      fseek(f, 0, SEEK_SET);
      fbytes = (char *)malloc((size_t)flen + 1);
      if (fbytes && fread(fbytes, 1, (size_t)flen, f) == (size_t)flen) {
        CHECK_EQ_INT(flen, (long)b.n);
        CHECK(b.p && (size_t)flen == b.n && memcmp(fbytes, b.p, b.n) == 0);
      } else {
        CHECK(0);
      }
      free(fbytes);
      fclose(f);
    }
    free(b.p);
    fuse_graph_destroy(g);
  }
  {
    fuse_graph *g = seed_chain();
    sbuf b;
    memset(&b, 0, sizeof b);
    CHECK(fuse_graph_write(NULL, sbuf_write, &b) != FUSE_OK);
    CHECK(fuse_graph_write(g, NULL, &b) != FUSE_OK);
    CHECK(fuse_graph_print(NULL, stdout) != FUSE_OK);
    CHECK(fuse_graph_print(g, NULL) != FUSE_OK);
    free(b.p);
    fuse_graph_destroy(g);
  }
}

/* --------------------------------------------------------------- locale -- */

TEST(locale_independence) {
  static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE", "fr_FR.UTF-8",
                                      "fr_FR.utf8", "fr_FR", "ru_RU.UTF-8", "nl_NL.UTF-8",
                                      "it_IT.UTF-8", "es_ES.UTF-8", "pt_BR.UTF-8", "de_AT.UTF-8",
                                      "da_DK.UTF-8", "pl_PL.UTF-8", NULL};
  fuse_graph *g1 = awkward_graph(), *g2 = bn_conv_matmul();
  char *c1 = to_text(g1), *c2 = to_text(g2), *l1, *l2;
  const char *used = NULL;
  int i;
  for (i = 0; names[i]; i++) {
    if (setlocale(LC_ALL, names[i]) && localeconv()->decimal_point[0] == ',') {
      used = names[i];
      break;
    }
  }
  if (!used) {
    setlocale(LC_ALL, "C");
    fprintf(stderr, "  note: locale_independence skipped: no locale with a comma decimal point "
                    "is installed (locale -a)\n");
  } else {
    fuse_graph *p1 = NULL, *p2 = NULL;
    char check[32];
    snprintf(check, sizeof check, "%.1f", 1.5);
    CHECK(strcmp(check, "1,5") == 0); /* the locale is really active */
    l1 = to_text(g1);
    l2 = to_text(g2);
    CHECK(c1 && l1 && strcmp(c1, l1) == 0);
    CHECK(c2 && l2 && strcmp(c2, l2) == 0);
    CHECK_EQ_INT(fuse_graph_parse(c1, NULL, &p1), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_parse(c2, NULL, &p2), FUSE_OK);
    free(l1);
    free(l2);
    l1 = p1 ? to_text(p1) : NULL;
    l2 = p2 ? to_text(p2) : NULL;
    CHECK(c1 && l1 && strcmp(c1, l1) == 0);
    CHECK(c2 && l2 && strcmp(c2, l2) == 0);
    free(l1);
    free(l2);
    fuse_graph_destroy(p1);
    fuse_graph_destroy(p2);
    setlocale(LC_ALL, "C");
    fprintf(stderr, "  note: locale_independence ran under %s\n", used);
  }
  free(c1);
  free(c2);
  fuse_graph_destroy(g1);
  fuse_graph_destroy(g2);
}

int main(void) {
  RUN(exact_listings);
  RUN(exact_listings_parse);
  RUN(round_trips);
  RUN(names_in_text);
  RUN(awkward_floats);
  RUN(random_floats_round_trip);
  RUN(parse_long_decimals);
  RUN(parse_comments_whitespace_defaults);
  RUN(parse_reshape_minus_one_and_annotations);
  RUN(parse_number_operands);
  RUN(parse_every_attribute_explicit);
  RUN(parse_errors);
  RUN(parse_error_columns);
  RUN(parse_truncations);
  RUN(parse_out_of_memory);
  RUN(set_constant);
  RUN(write_and_print_agree);
  RUN(locale_independence);
  return runner_finish("text");
}
