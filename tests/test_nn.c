/* test_nn.c - the reductions, log-softmax, normalizations and einsum (src/graph/builders_nn.c):
   shapes, every builder's error paths (a clear message and FUSE_NONE), small runs checked by
   hand (NaN in max / min, keepdims, noop reductions), einsum built in C printing the very text
   of its golden cases (tests/data/einsum_*.golden, whose outputs test_golden checks against
   torch.einsum), and the ONNX models of tests/data/onnx_nn (tools/golden_nn.py) loaded, run and
   compared, or refused with the message their file "refused" names. Run from the repository
   root. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define IN(g, name, ...) fuse_input((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__))
#define CST(g, name, ...) fuse_constant((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__), NULL)
#define AXES(...) NDIM(__VA_ARGS__), ((const int[]){__VA_ARGS__})

static int same_shape(const fuse_graph *g, fuse_value v, int rank, const int64_t *dims) {
  int i;
  if (v == FUSE_NONE || fuse_value_rank(g, v) != rank) return 0;
  for (i = 0; i < rank; i++)
    if (fuse_value_shape(g, v)[i] != dims[i]) return 0;
  return 1;
}
#define CHECK_SHAPE(g, v, ...) CHECK(same_shape((g), (v), NDIM(__VA_ARGS__), D(__VA_ARGS__)))
#define CHECK_RANK0(g, v) CHECK(same_shape((g), (v), 0, NULL))

/* A builder call that must fail: FUSE_NONE, the status, and a message containing `text`. */
#define CHECK_FAILS(g, call, status, text)                \
  do {                                                    \
    CHECK((call) == FUSE_NONE);                           \
    CHECK_EQ_INT(fuse_graph_status(g), (status));         \
    CHECK_STR_CONTAINS(fuse_graph_error(g), (text));      \
  } while (0)

/* ------------------------------------------------------------------ shapes -- */

TEST(reduce_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 3, 4, 5);
  CHECK_SHAPE(g, fuse_reduce(g, x, FUSE_REDUCE_MEAN, AXES(1, 3), 1), 2, 1, 4, 1);
  CHECK_SHAPE(g, fuse_reduce(g, x, FUSE_REDUCE_SUM, AXES(1, 3), 0), 2, 4);
  CHECK_SHAPE(g, fuse_reduce(g, x, FUSE_REDUCE_MAX, AXES(-1), 0), 2, 3, 4);
  CHECK_SHAPE(g, fuse_reduce(g, x, FUSE_REDUCE_MIN, AXES(-4, 2), 1), 1, 3, 1, 5);
  CHECK_RANK0(g, fuse_reduce(g, x, FUSE_REDUCE_L2, 0, NULL, 0));
  CHECK_SHAPE(g, fuse_reduce(g, x, FUSE_REDUCE_PROD, 0, NULL, 1), 1, 1, 1, 1);
  CHECK_SHAPE(g, fuse_reduce(g, x, FUSE_REDUCE_SUM_SQUARE, AXES(3, 2, 1, 0), 0 + 1), 1, 1, 1, 1);
  CHECK_RANK0(g, fuse_reduce(g, fuse_scalar(g, 2), FUSE_REDUCE_SUM, 0, NULL, 1));
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(norm_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 6, 4, 3);
  fuse_value s6 = CST(g, "s6", 6), b6 = CST(g, "b6", 6), s43 = CST(g, "s43", 4, 3);
  CHECK_SHAPE(g, fuse_log_softmax(g, x, -3), 2, 6, 4, 3);
  CHECK_SHAPE(g, fuse_layer_norm(g, x, s43, FUSE_NONE, 2, 1e-5f), 2, 6, 4, 3);
  CHECK_SHAPE(g, fuse_layer_norm(g, x, s43, s43, -2, 0), 2, 6, 4, 3);
  CHECK_SHAPE(g, fuse_instance_norm(g, x, s6, b6, 1e-5f), 2, 6, 4, 3);
  CHECK_SHAPE(g, fuse_group_norm(g, x, s6, b6, 3, 1e-5f), 2, 6, 4, 3);
  CHECK_SHAPE(g, fuse_group_norm(g, x, s6, b6, 6, 1e-5f), 2, 6, 4, 3);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(einsum_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value q = IN(g, "q", 2, 3, 5, 4), k = IN(g, "k", 2, 3, 7, 4), v = IN(g, "v", 2, 3, 7, 4);
  fuse_value a = IN(g, "a", 4, 6), b = IN(g, "b", 6, 5), c = IN(g, "c", 5, 6), xs[2];
  fuse_value i1 = IN(g, "i1", 9), i2 = IN(g, "i2", 9);
  xs[0] = q, xs[1] = k;
  CHECK_SHAPE(g, fuse_einsum(g, "bhqd,bhkd->bhqk", 2, xs), 2, 3, 5, 7);
  xs[1] = fuse_einsum(g, "bhqd,bhkd->bhqk", 2, xs);
  xs[0] = xs[1], xs[1] = v;
  CHECK_SHAPE(g, fuse_einsum(g, "bhqk,bhkd->bhqd", 2, xs), 2, 3, 5, 4);
  xs[0] = a, xs[1] = b;
  CHECK_SHAPE(g, fuse_einsum(g, "ij,jk->ik", 2, xs), 4, 5);
  CHECK_SHAPE(g, fuse_einsum(g, " i j , j k ", 2, xs), 4, 5); /* implicit, spaces */
  xs[1] = c;
  CHECK_SHAPE(g, fuse_einsum(g, "ij,kj->ik", 2, xs), 4, 5);
  CHECK_SHAPE(g, fuse_einsum(g, "ij,kj", 2, xs), 4, 5);
  CHECK_SHAPE(g, fuse_einsum(g, "ij,kj->ki", 2, xs), 5, 4);
  CHECK_SHAPE(g, fuse_einsum(g, "ij->ji", 1, &a), 6, 4);
  CHECK_SHAPE(g, fuse_einsum(g, "ij->j", 1, &a), 6);
  CHECK_SHAPE(g, fuse_einsum(g, "ji", 1, &a), 6, 4); /* implicit: alphabetical */
  CHECK(fuse_einsum(g, "ij->ij", 1, &a) == a);      /* nothing to do */
  xs[0] = i1, xs[1] = i2;
  CHECK_RANK0(g, fuse_einsum(g, "i,i->", 2, xs));
  CHECK_RANK0(g, fuse_einsum(g, "i,i", 2, xs));
  CHECK_SHAPE(g, fuse_einsum(g, "i,j->ij", 2, xs), 9, 9);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

/* ------------------------------------------------------------------ errors -- */

TEST(reduce_errors) {
  fuse_graph *g;
  fuse_value x;
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3);
  CHECK_FAILS(g, fuse_reduce(g, x, (fuse_reduce_kind)0, 0, NULL, 1), FUSE_ERROR_INVALID_ARGUMENT,
              "kind 0 is not a fuse_reduce_kind");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3);
  CHECK_FAILS(g, fuse_reduce(g, x, FUSE_REDUCE_SUM, AXES(2), 1), FUSE_ERROR_INVALID_ARGUMENT,
              "reduce_sum: axis 2 is outside -2..1 for [2,3]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3);
  CHECK_FAILS(g, fuse_reduce(g, x, FUSE_REDUCE_MAX, AXES(1, -1), 1), FUSE_ERROR_INVALID_ARGUMENT,
              "reduce_max: axis 1 is given twice");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3);
  CHECK_FAILS(g, fuse_reduce(g, x, FUSE_REDUCE_MEAN, 3, NULL, 1), FUSE_ERROR_INVALID_ARGUMENT,
              "reduce_mean: 3 axes with axes NULL for 'x' [2,3]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3);
  CHECK_FAILS(g, fuse_reduce(g, FUSE_NONE, FUSE_REDUCE_MEAN, 0, NULL, 1),
              FUSE_ERROR_INVALID_ARGUMENT, "reduce: operand 1 is FUSE_NONE");
  CHECK(fuse_reduce(NULL, x, FUSE_REDUCE_MEAN, 0, NULL, 1) == FUSE_NONE);
  fuse_graph_destroy(g);
}

TEST(log_softmax_errors) {
  fuse_graph *g;
  fuse_value x;
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3);
  CHECK_FAILS(g, fuse_log_softmax(g, x, 2), FUSE_ERROR_INVALID_ARGUMENT,
              "log_softmax: axis 2 is outside -2..1");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  CHECK_FAILS(g, fuse_log_softmax(g, fuse_scalar(g, 1), 0), FUSE_ERROR_SHAPE,
              "log_softmax: input %0 is a scalar");
  fuse_graph_destroy(g);
}

TEST(norm_errors) {
  fuse_graph *g;
  fuse_value x, s, b;
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3, 4), s = CST(g, "s", 3, 4);
  CHECK_FAILS(g, fuse_layer_norm(g, x, s, FUSE_NONE, -1, 1e-5f), FUSE_ERROR_SHAPE,
              "layer_norm: scale 's' [3,4] must be [4], the shape of input 'x' [2,3,4] from axis 2");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3, 4), s = CST(g, "s", 4), b = CST(g, "b", 3);
  CHECK_FAILS(g, fuse_layer_norm(g, x, s, b, 2, 1e-5f), FUSE_ERROR_SHAPE,
              "layer_norm: bias 'b' [3] must be [4]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3, 4), s = CST(g, "s", 4);
  CHECK_FAILS(g, fuse_layer_norm(g, x, s, FUSE_NONE, 3, 1e-5f), FUSE_ERROR_INVALID_ARGUMENT,
              "layer_norm: axis 3 is outside -3..2");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3, 4), s = CST(g, "s", 4);
  CHECK_FAILS(g, fuse_layer_norm(g, x, s, FUSE_NONE, -1, -1.0f), FUSE_ERROR_INVALID_ARGUMENT,
              "layer_norm: eps=-1 must be a number >= 0");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3, 4), s = CST(g, "s", 3);
  CHECK_FAILS(g, fuse_instance_norm(g, x, s, CST(g, "b", 4), 1e-5f), FUSE_ERROR_SHAPE,
              "instance_norm: bias 'b' [4] must be [3] for input 'x' [2,3,4]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 3), s = CST(g, "s", 3);
  CHECK_FAILS(g, fuse_instance_norm(g, x, s, s, 1e-5f), FUSE_ERROR_SHAPE,
              "instance_norm: input 'x' [2,3] must have rank >= 3");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 6, 4), s = CST(g, "s", 6);
  CHECK_FAILS(g, fuse_group_norm(g, x, s, s, 4, 1e-5f), FUSE_ERROR_INVALID_ARGUMENT,
              "group_norm: groups=4 must be >= 1 and divide the 6 channels of 'x' [2,6,4]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 6, 4), s = CST(g, "s", 3);
  CHECK_FAILS(g, fuse_group_norm(g, x, s, s, 3, 1e-5f), FUSE_ERROR_SHAPE,
              "group_norm: scale 's' [3] must be [6]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 6, 4), s = CST(g, "s", 6);
  CHECK_FAILS(g, fuse_group_norm(g, x, s, FUSE_NONE, 3, 1e-5f), FUSE_ERROR_INVALID_ARGUMENT,
              "group_norm: operand 3 is FUSE_NONE");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL), x = IN(g, "x", 2, 6, 4), s = CST(g, "s", 6);
  CHECK_FAILS(g, fuse_group_norm(g, x, s, s, 2, NAN), FUSE_ERROR_INVALID_ARGUMENT,
              "group_norm: eps=nan must be a number >= 0");
  fuse_graph_destroy(g);
}

TEST(einsum_errors) {
  static const struct {
    const char *eq;
    int n;
    fuse_result status;
    const char *text;
  } bad[] = {
      {"...ij,...jk->...ik", 2, FUSE_ERROR_UNSUPPORTED, "the ellipsis '...' (broadcast dimensions) is not supported"},
      {"ii->i", 1, FUSE_ERROR_UNSUPPORTED, "index 'i' repeats within one term (a diagonal or trace"},
      {"ij,jk,kl->il", 3, FUSE_ERROR_UNSUPPORTED, "with 3 operands: only 1 or 2 operands are supported"},
      {"ij,jk->ik", 1, FUSE_ERROR_INVALID_ARGUMENT, "\"ij,jk->ik\" has 2 input terms for 1 operands"},
      {"ij,jk->iz", 2, FUSE_ERROR_INVALID_ARGUMENT, "output index 'z' is in no input term"},
      {"ij,jk->ii", 2, FUSE_ERROR_UNSUPPORTED, "index 'i' repeats"},
      {"ij,j1->i", 2, FUSE_ERROR_INVALID_ARGUMENT, "'1' is not an index letter"},
      {"ij,jk-ik", 2, FUSE_ERROR_INVALID_ARGUMENT, "'-' must start '->'"},
      {"ijk,jk->i", 2, FUSE_ERROR_SHAPE, "term 1 has 3 indices but operand 1 'a' is [4,6]"},
      {"ij,kj->ik", 2, FUSE_ERROR_SHAPE, "index 'j' is 6 in one place and 5 in operand 2 'b' [6,5]"},
      {"ij,jk->ik->i", 2, FUSE_ERROR_INVALID_ARGUMENT, "the output term must end the equation"},
  };
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value xs[3];
    xs[0] = IN(g, "a", 4, 6), xs[1] = IN(g, "b", 6, 5), xs[2] = IN(g, "c", 5, 2);
    CHECK_FAILS(g, fuse_einsum(g, bad[i].eq, bad[i].n, xs), bad[i].status, bad[i].text);
    fuse_graph_destroy(g);
  }
  {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value x = IN(g, "a", 4, 6);
    CHECK_FAILS(g, fuse_einsum(g, NULL, 1, &x), FUSE_ERROR_INVALID_ARGUMENT, "einsum: the equation is NULL");
    fuse_graph_destroy(g);
    g = fuse_graph_create(NULL);
    CHECK_FAILS(g, fuse_einsum(g, "ij", 0, NULL), FUSE_ERROR_INVALID_ARGUMENT, "with 0 operands (xs NULL)");
    fuse_graph_destroy(g);
  }
}

/* ------------------------------------------------------------------ runs -- */

/* Compiles g (its one input x, one output) and runs it on x; 0 when something failed. */
static int run1(fuse_graph *g, const float *x, float *y) {
  fuse_plan *p = NULL;
  const float *in[1];
  float *out[1];
  fuse_result rc = fuse_compile(g, NULL, &p);
  in[0] = x;
  out[0] = y;
  if (rc == FUSE_OK) rc = fuse_run(p, in, out, NULL);
  fuse_plan_destroy(p);
  return rc == FUSE_OK;
}

TEST(reduce_runs) {
  static const float x[6] = {1, -2, 3, 4, 5, -6}; /* [2, 3] */
  static const struct {
    fuse_reduce_kind kind;
    int axis; /* -9: all */
    int count;
    float want[3];
  } cases[] = {
      {FUSE_REDUCE_MEAN, 1, 2, {2.0f / 3, 1}},         {FUSE_REDUCE_SUM, 0, 3, {5, 3, -3}},
      {FUSE_REDUCE_MAX, 1, 2, {3, 5}},                 {FUSE_REDUCE_MIN, 0, 3, {1, -2, -6}},
      {FUSE_REDUCE_L2, -9, 1, {9.539392f}},            {FUSE_REDUCE_PROD, 1, 2, {-6, -120}},
      {FUSE_REDUCE_SUM_SQUARE, -1, 2, {14, 77}},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value v = IN(g, "x", 2, 3);
    float y[3] = {0, 0, 0};
    int axis = cases[i].axis;
    v = fuse_reduce(g, v, cases[i].kind, axis == -9 ? 0 : 1, &axis, 0);
    fuse_output(g, v);
    CHECK(run1(g, x, y));
    CHECK_NEAR_ARRAY(y, cases[i].want, (size_t)cases[i].count, 1e-6);
    fuse_graph_destroy(g);
  }
}

TEST(reduce_nan) {
  float x[6] = {1, NAN, 3, 4, 5, 6}, y[2] = {0, 0};
  int kind, axis = 1;
  for (kind = FUSE_REDUCE_MAX; kind <= FUSE_REDUCE_MIN; kind++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value v = fuse_reduce(g, IN(g, "x", 2, 3), (fuse_reduce_kind)kind, 1, &axis, 1);
    fuse_output(g, v);
    CHECK(run1(g, x, y));
    CHECK(y[0] != y[0]); /* NaN wins, as in PyTorch */
    CHECK(y[1] == (kind == FUSE_REDUCE_MAX ? 6 : 4));
    fuse_graph_destroy(g);
  }
}

TEST(log_softmax_run) {
  static const float x[4] = {1000, 1001, -1000, 0};
  float y[4];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, fuse_log_softmax(g, IN(g, "x", 2, 2), 1));
  CHECK(run1(g, x, y));
  CHECK(fabsf(y[0] - -1.3132616f) < 1e-5f && fabsf(y[1] - -0.3132617f) < 1e-5f);
  CHECK(fabsf(y[2] - -1000.0f) < 1e-3f && fabsf(y[3]) < 1e-6f);
  fuse_graph_destroy(g);
}

/* ------------------------------------------------------------ text form -- */

typedef struct text_buf {
  char *s;
  size_t n, cap;
} text_buf;

static void text_append(void *user, const char *text, size_t len) {
  text_buf *b = (text_buf *)user;
  if (b->n + len + 1 > b->cap) {
    size_t cap = (b->n + len + 1) * 2;
    char *s = (char *)realloc(b->s, cap);
    if (!s) return;
    b->s = s, b->cap = cap;
  }
  memcpy(b->s + b->n, text, len);
  b->n += len;
  b->s[b->n] = 0;
}

static char *print_graph(const fuse_graph *g) {
  text_buf b = {NULL, 0, 0};
  if (fuse_graph_write(g, text_append, &b) != FUSE_OK) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
      !(buf = (char *)malloc((size_t)n + 1))) {
    fclose(f);
    return NULL;
  }
  *size = fread(buf, 1, (size_t)n, f);
  buf[*size] = 0;
  fclose(f);
  return buf;
}

TEST(text_round_trip) {
  static const char *const text =
      "graph(%x: [2, 6, 4, 3]) {\n"
      "  %s: [4, 3] = const\n"
      "  %c: [6] = const\n"
      "  %0 = reduce_sum(%x, axes=[3, 1], keepdims=0)\n"
      "  %1 = reduce_prod(%x)\n"
      "  %2 = log_softmax(%x, axis=-2)\n"
      "  %3 = layer_norm(%x, %s, axis=2, eps=0.001)\n"
      "  %4 = layer_norm(%x, %s, %s, axis=-2)\n"
      "  %5 = instance_norm(%x, %c, %c)\n"
      "  %6 = group_norm(%x, %c, %c, groups=3, eps=0.25)\n"
      "  return %0, %1, %2, %3, %4, %5, %6\n"
      "}\n";
  fuse_graph *g = NULL, *h = NULL;
  char *p1, *p2;
  CHECK_EQ_INT(fuse_graph_parse(text, NULL, &g), FUSE_OK);
  p1 = print_graph(g);
  CHECK(p1 != NULL);
  CHECK_STR_CONTAINS(p1, "reduce_sum(%x, axes=[1, 3], keepdims=0)");
  CHECK_STR_CONTAINS(p1, "reduce_prod(%x, axes=[0, 1, 2, 3], keepdims=1)");
  CHECK_STR_CONTAINS(p1, "log_softmax(%x, axis=2)");
  CHECK_STR_CONTAINS(p1, "layer_norm(%x, %s, axis=2, eps=0.001)");
  CHECK_STR_CONTAINS(p1, "layer_norm(%x, %s, %s, axis=2, eps=1e-05)");
  CHECK_STR_CONTAINS(p1, "instance_norm(%x, %c, %c, eps=1e-05)");
  CHECK_STR_CONTAINS(p1, "group_norm(%x, %c, %c, groups=3, eps=0.25)");
  CHECK_EQ_INT(fuse_graph_parse(p1, NULL, &h), FUSE_OK);
  p2 = print_graph(h);
  CHECK(p1 && p2 && strcmp(p1, p2) == 0);
  free(p1);
  free(p2);
  fuse_graph_destroy(g);
  fuse_graph_destroy(h);
}

TEST(text_errors) {
  static const struct {
    const char *body, *text;
  } bad[] = {
      {"%0 = group_norm(%x, %c, %c)", "group_norm needs groups=N"},
      {"%0 = instance_norm(%x, %c)", "instance_norm takes 3 operands, not 2"},
      {"%0 = layer_norm(%x)", "layer_norm takes 3 operands, not 1"},
      {"%0 = reduce_max(%x, axes=0)", "reduce_max attribute 'axes' must be a list of whole numbers"},
      {"%0 = reduce_min(%x, axis=[0])", "reduce_min has no attribute 'axis'"},
      {"%0 = reduce_l2(%x, axes=[4])", "reduce_l2: axis 4 is outside -4..3"},
  };
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[512];
    fuse_graph *g = NULL;
    snprintf(text, sizeof text,
             "graph(%%x: [2, 6, 4, 3]) {\n  %%c: [6] = const\n  %s\n  return %%0\n}\n",
             bad[i].body);
    CHECK(fuse_graph_parse(text, NULL, &g) != FUSE_OK);
    CHECK_STR_CONTAINS(fuse_graph_error(g), bad[i].text);
    fuse_graph_destroy(g);
  }
}

/* Each tests/data/einsum_*.golden case built with fuse_einsum prints as the golden text does:
   the composed ops are the ones tools/golden_nn.py checks against torch.einsum. */
TEST(einsum_matches_golden_text) {
  static const struct {
    const char *file, *eq;
    int n, rank[2];
    int64_t dims[2][4];
  } cases[] = {
      {"einsum_batch_matmul", "bij,bjk->bik", 2, {3, 3}, {{3, 4, 5}, {3, 5, 6}}},
      {"einsum_matmul", "ij,jk->ik", 2, {2, 2}, {{4, 7}, {7, 3}}},
      {"einsum_matmul_bt", "ij,kj->ik", 2, {2, 2}, {{5, 6}, {4, 6}}},
      {"einsum_attention_scores", "bhqd,bhkd->bhqk", 2, {4, 4}, {{2, 3, 5, 4}, {2, 3, 7, 4}}},
      {"einsum_attention_values", "bhqk,bhkd->bhqd", 2, {4, 4}, {{2, 3, 5, 7}, {2, 3, 7, 4}}},
      {"einsum_linear", "bnd,dk->bnk", 2, {3, 2}, {{2, 5, 6}, {6, 3}}},
      {"einsum_dot", "i,i->", 2, {1, 1}, {{9}, {9}}},
      {"einsum_transpose", "ij->ji", 1, {2, 0}, {{3, 5}, {0}}},
      {"einsum_batch_transpose", "bij->bji", 1, {3, 0}, {{2, 3, 4}, {0}}},
      {"einsum_implicit_spaces", " ij , jk ", 2, {2, 2}, {{3, 4}, {4, 2}}},
      {"einsum_outer", "i,j->ij", 2, {1, 1}, {{4}, {3}}},
      {"einsum_row_sum", "ij->i", 1, {2, 0}, {{4, 6}, {0}}},
      {"einsum_sum_one_side", "bij,jk->bk", 2, {3, 2}, {{2, 3, 4}, {4, 5}}},
      {"einsum_out_permuted", "bqd,bkd->kbq", 2, {3, 3}, {{2, 3, 4}, {2, 5, 4}}},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[256], *file, *cut, *want = NULL, *got = NULL;
    size_t size = 0;
    fuse_graph *parsed = NULL, *g = fuse_graph_create(NULL);
    fuse_value xs[2], y;
    int k;
    snprintf(path, sizeof path, "tests/data/%s.golden", cases[i].file);
    file = read_file(path, &size);
    CHECK(file != NULL);
    if (!file) continue;
    cut = strstr(file, "\n%%\n");
    CHECK(cut != NULL);
    if (cut) cut[1] = 0;
    CHECK_EQ_INT(fuse_graph_parse(file, NULL, &parsed), FUSE_OK);
    for (k = 0; k < cases[i].n; k++)
      xs[k] = fuse_input(g, k ? "b" : "a", cases[i].rank[k], cases[i].dims[k]);
    y = fuse_einsum(g, cases[i].eq, cases[i].n, xs);
    CHECK(y != FUSE_NONE);
    fuse_output(g, y);
    want = print_graph(parsed);
    got = print_graph(g);
    if (!want || !got || strcmp(want, got) != 0) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: fuse_einsum(\"%s\") prints\n%s  but %s.golden is\n%s",
              runner_current, cases[i].eq, got ? got : "(null)\n", cases[i].file,
              want ? want : "(null)\n");
    }
    free(want);
    free(got);
    free(file);
    fuse_graph_destroy(parsed);
    fuse_graph_destroy(g);
  }
}

/* ------------------------------------------------------------------ ONNX -- */

static int load_tensor(const char *path, fuse_onnx_tensor *t) {
  size_t size = 0;
  char *bytes = read_file(path, &size);
  fuse_result rc;
  if (!bytes) return 0;
  rc = fuse_onnx_load_tensor(bytes, size, NULL, t);
  free(bytes);
  return rc == FUSE_OK;
}

/* One model directory: "" when it passed, else why not; *skipped when it needs operators of
   another family that the loader does not take yet. */
static const char *onnx_model(const char *dir, char *why, size_t why_n, int *skipped) {
  char path[512], *needs, *refused, *nl;
  size_t size = 0;
  fuse_graph *g = NULL;
  fuse_plan *p = NULL;
  fuse_onnx_tensor ins[4], outs[4];
  float *got[4];
  const float *inputs[4];
  int n_in = 0, n_out = 0, k;
  fuse_result rc;
  *skipped = 0;
  why[0] = 0;
  memset(ins, 0, sizeof ins);
  memset(outs, 0, sizeof outs);
  memset(got, 0, sizeof got);
  snprintf(path, sizeof path, "%s/needs", dir);
  needs = read_file(path, &size);
  snprintf(path, sizeof path, "%s/refused", dir);
  refused = read_file(path, &size);
  if (refused && (nl = strchr(refused, '\n')) != NULL) *nl = 0;
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  rc = fuse_onnx_load_file(path, NULL, &g);
  if (refused) {
    if (rc != FUSE_ERROR_UNSUPPORTED || !strstr(fuse_graph_error(g), refused))
      snprintf(why, why_n, "want UNSUPPORTED with \"%s\", got %d: %s", refused, (int)rc,
               fuse_graph_error(g));
    goto done;
  }
  if (rc != FUSE_OK) {
    const char *op = needs;
    while (op && *op && rc == FUSE_ERROR_UNSUPPORTED) { /* one of the listed ops, refused? */
      char name[32], pat[40], pat2[40], pat3[40];
      size_t len = strcspn(op, " \n");
      if (len && len < sizeof name) {
        memcpy(name, op, len);
        name[len] = 0;
        snprintf(pat, sizeof pat, "(%s, ", name); /* "node 3 (Pow, output 'y')" */
        snprintf(pat2, sizeof pat2, "(%s)", name); /* "node 3 'name' (Pow)" */
        snprintf(pat3, sizeof pat3, " %s (", name); /* "unsupported: Pow (1 node)" */
        if (strstr(fuse_graph_error(g), pat) || strstr(fuse_graph_error(g), pat2) ||
            strstr(fuse_graph_error(g), pat3)) {
          *skipped = 1;
          snprintf(why, why_n, "%s", fuse_graph_error(g));
          goto done;
        }
      }
      op += len + strspn(op + len, " \n");
    }
    snprintf(why, why_n, "load: %s", fuse_graph_error(g));
    goto done;
  }
  if (fuse_optimize(g, "fuse") != FUSE_OK || fuse_compile(g, NULL, &p) != FUSE_OK) {
    snprintf(why, why_n, "optimize / compile: %s", fuse_graph_error(g));
    goto done;
  }
  for (n_in = 0; n_in < 4; n_in++) {
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, n_in);
    if (!load_tensor(path, &ins[n_in])) break;
    inputs[n_in] = ins[n_in].data;
  }
  for (n_out = 0; n_out < 4; n_out++) {
    snprintf(path, sizeof path, "%s/test_data_set_0/output_%d.pb", dir, n_out);
    if (!load_tensor(path, &outs[n_out])) break;
  }
  if (n_in != fuse_graph_input_count(g) || n_out != fuse_graph_output_count(g)) {
    snprintf(why, why_n, "%d inputs, %d outputs in the data; the graph has %d, %d", n_in, n_out,
             fuse_graph_input_count(g), fuse_graph_output_count(g));
    goto done;
  }
  for (k = 0; k < n_out; k++) {
    fuse_value v = fuse_graph_output(g, k);
    size_t count = 1;
    int d;
    if (fuse_value_rank(g, v) != outs[k].rank) {
      snprintf(why, why_n, "output %d has rank %d, want %d", k, fuse_value_rank(g, v), outs[k].rank);
      goto done;
    }
    for (d = 0; d < outs[k].rank; d++) {
      if (fuse_value_shape(g, v)[d] != outs[k].shape[d]) {
        snprintf(why, why_n, "output %d differs in dimension %d", k, d);
        goto done;
      }
      count *= (size_t)outs[k].shape[d];
    }
    got[k] = (float *)calloc(count, sizeof(float));
  }
  if (fuse_run(p, inputs, got, NULL) != FUSE_OK) {
    snprintf(why, why_n, "run failed");
    goto done;
  }
  for (k = 0; k < n_out; k++) {
    size_t count = 1;
    double e;
    int d;
    for (d = 0; d < outs[k].rank; d++) count *= (size_t)outs[k].shape[d];
    e = runner_rel_error(got[k], outs[k].data, count);
    if (!(e <= 1e-4)) {
      snprintf(why, why_n, "output %d: relative error %g", k, e);
      goto done;
    }
  }
done:
  for (k = 0; k < 4; k++) {
    fuse_onnx_tensor_free(&ins[k], NULL);
    fuse_onnx_tensor_free(&outs[k], NULL);
    free(got[k]);
  }
  free(needs);
  free(refused);
  fuse_plan_destroy(p);
  fuse_graph_destroy(g);
  return why;
}

TEST(onnx_models) {
  const char *root = "tests/data/onnx_nn";
  DIR *d = opendir(root);
  struct dirent *e;
  int count = 0, skipped_count = 0;
  CHECK(d != NULL);
  if (!d) return;
  while ((e = readdir(d)) != NULL) {
    char dir[400], why[600];
    int skipped;
    if (e->d_name[0] == '.') continue;
    snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
    count++;
    onnx_model(dir, why, sizeof why, &skipped);
    if (skipped) {
      skipped_count++;
      fprintf(stderr, "  note: %s skipped until the loader takes its other operators: %s\n",
              e->d_name, why);
    } else if (why[0]) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: %s: %s\n", runner_current, e->d_name, why);
    }
  }
  closedir(d);
  CHECK(count >= 20);
  fprintf(stderr, "  onnx_nn: %d models, %d skipped\n", count, skipped_count);
}

int main(void) {
  RUN(reduce_shapes);
  RUN(norm_shapes);
  RUN(einsum_shapes);
  RUN(reduce_errors);
  RUN(log_softmax_errors);
  RUN(norm_errors);
  RUN(einsum_errors);
  RUN(reduce_runs);
  RUN(reduce_nan);
  RUN(log_softmax_run);
  RUN(text_round_trip);
  RUN(text_errors);
  RUN(einsum_matches_golden_text);
  RUN(onnx_models);
  return runner_finish("nn");
}
