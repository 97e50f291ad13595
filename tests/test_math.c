/* test_math.c - the element-wise math family: edge values, the variadic builders, builder
   errors, the text form's attributes, and a large tensor.

   tests/test_golden.c checks these ops against PyTorch on ordinary values (outputs must be
   finite there); here are the values a golden file cannot hold: infinities and NaN in and out
   (sqrt of a negative, 1 / 0, log 0, softplus of +-100 and +-inf, pow of a negative base), each
   compared element by element with PyTorch 1.13's float32 results written out below (NaN must
   meet NaN, an infinity the same infinity, others within 1e-5 relative or 1e-30 absolute).
   Every public builder of the family also has an error case: a bad operand or attribute
   gives FUSE_NONE and a message naming the op. Two models PyTorch exported
   (tests/data/onnx/mathnet_op13 / _op14, written by tools/export_math.py) and an opset-20 Gelu
   model written by hand load, run and match PyTorch's output.

   Build: cc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I. tests/test_math.c \
              -o build/test_math -lm -lpthread */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#define N_EDGE 9
static const float edge[N_EDGE] = {-INFINITY, -100.0f, -3.0f, 0.0f, -0.0f, 3.0f, 100.0f,
                                   INFINITY, NAN};

static int same(float got, float want) {
  if (want != want) return got != got;
  if (isinf(want)) return got == want;
  return fabsf(got - want) <= 1e-5f * fabsf(want) || fabsf(got - want) <= 1e-30f;
}

static void check_values(const char *what, const float *got, const float *want, int n) {
  int i;
  for (i = 0; i < n; i++)
    if (!same(got[i], want[i])) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: %s element %d: got %.9g, want %.9g\n", runner_current, what, i,
              (double)got[i], (double)want[i]);
    }
}

/* compiles g (outputs already set), runs it on one input, returns 0 on failure */
static int run_graph(fuse_graph *g, const float *const *inputs, float *const *outputs) {
  fuse_plan *p = NULL;
  fuse_result rc = fuse_compile(g, NULL, &p);
  if (rc != FUSE_OK) {
    fprintf(stderr, "  compile: %s\n", fuse_result_string(rc));
    return 0;
  }
  rc = fuse_run(p, inputs, outputs, NULL);
  fuse_plan_destroy(p);
  return rc == FUSE_OK;
}

typedef fuse_value (*unary_fn)(fuse_graph *g, fuse_value x);

/* the unary ops without parameters against C's double functions */
TEST(unary_edge_values) {
  static const struct {
    const char *name;
    unary_fn build;
    double (*ref)(double);
  } ops[] = {{"sqrt", fuse_sqrt, sqrt},   {"exp", fuse_exp, exp},       {"log", fuse_log, log},
             {"abs", fuse_abs, fabs},     {"floor", fuse_floor, floor}, {"ceil", fuse_ceil, ceil},
             {"erf", fuse_erf, erf},      {"tanh", fuse_tanh, tanh}};
  int64_t shape[1] = {N_EDGE};
  int k, i;
  for (k = 0; k < (int)(sizeof ops / sizeof ops[0]); k++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value x = fuse_input(g, "x", 1, shape);
    float got[N_EDGE], want[N_EDGE];
    const float *in[1];
    float *out[1];
    CHECK(fuse_output(g, ops[k].build(g, x)) == FUSE_OK);
    in[0] = edge;
    out[0] = got;
    CHECK(run_graph(g, in, out));
    for (i = 0; i < N_EDGE; i++) want[i] = (float)ops[k].ref((double)edge[i]);
    check_values(ops[k].name, got, want, N_EDGE);
    fuse_graph_destroy(g);
  }
}

/* reciprocal, neg, and the activations against PyTorch's float32 results (torch.nn.functional
   on the same inputs) */
TEST(activation_edge_values) {
  const float inf = INFINITY, nan = NAN;
  const float recip[N_EDGE] = {-0.0f, -0.01f, -0.33333334f, inf, -inf, 0.33333334f, 0.01f, 0.0f, nan};
  const float neg[N_EDGE] = {inf, 100.0f, 3.0f, -0.0f, 0.0f, -3.0f, -100.0f, -inf, nan};
  const float hardswish[N_EDGE] = {nan, -0.0f, -0.0f, 0.0f, -0.0f, 3.0f, 100.0f, inf, nan};
  /* gelu(-3): float64's value; PyTorch's float32 one (-0.0040498674) loses digits to the
     cancellation in 1 + erf(x / sqrt 2), which fuse.h avoids with erfc */
  const float gelu[N_EDGE] = {nan, 0.0f, -0.0040496940948902799f, 0.0f, 0.0f,
                              2.995950222015381f, 100.0f, inf, nan};
  const float gelu_tanh[N_EDGE] = {nan, -0.0f, -0.0036374330520629883f, 0.0f, -0.0f,
                                   2.9963626861572266f, 100.0f, inf, nan};
  const float softplus[N_EDGE] = {0.0f, 3.783505853677006e-44f, 0.04858735203742981f,
                                  0.6931471824645996f, 0.6931471824645996f, 3.0485873222351074f,
                                  100.0f, inf, nan};
  const float elu[N_EDGE] = {-1.0f, -1.0f, -0.9502129554748535f, 0.0f, 0.0f, 3.0f, 100.0f, inf, nan};
  const float selu[N_EDGE] = {-1.7580993175506592f, -1.7580993175506592f, -1.6705687046051025f,
                              0.0f, 0.0f, 3.1521029472351074f, 105.07009887695312f, inf, nan};
  const float hardsigmoid[N_EDGE] = {0.0f, 0.0f, 0.0f, 0.5f, 0.5f, 1.0f, 1.0f, 1.0f, nan};
  const float leaky[N_EDGE] = {-inf, -1.0f, -0.03f, 0.0f, -0.0f, 3.0f, 100.0f, inf, nan};
  const float *want[10];
  float got[10][N_EDGE];
  const char *names[10] = {"reciprocal", "neg", "hardswish", "gelu", "gelu tanh", "softplus",
                           "elu", "selu", "hardsigmoid", "leaky_relu"};
  int64_t shape[1] = {N_EDGE};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 1, shape);
  const float *in[1];
  float *out[10];
  int k;
  fuse_output(g, fuse_reciprocal(g, x));
  fuse_output(g, fuse_neg(g, x));
  fuse_output(g, fuse_hardswish(g, x));
  fuse_output(g, fuse_gelu(g, x, 0));
  fuse_output(g, fuse_gelu(g, x, 1));
  fuse_output(g, fuse_softplus(g, x));
  fuse_output(g, fuse_elu(g, x, 1.0f));
  fuse_output(g, fuse_selu(g, x, 1.67326319217681884765625f, 1.05070102214813232421875f));
  fuse_output(g, fuse_hardsigmoid(g, x, 1.0f / 6.0f, 0.5f));
  fuse_output(g, fuse_leaky_relu(g, x, 0.01f));
  CHECK(fuse_graph_status(g) == FUSE_OK);
  want[0] = recip, want[1] = neg, want[2] = hardswish, want[3] = gelu, want[4] = gelu_tanh;
  want[5] = softplus, want[6] = elu, want[7] = selu, want[8] = hardsigmoid, want[9] = leaky;
  in[0] = edge;
  for (k = 0; k < 10; k++) out[k] = got[k];
  CHECK(run_graph(g, in, out));
  for (k = 0; k < 10; k++) check_values(names[k], got[k], want[k], N_EDGE);
  fuse_graph_destroy(g);
}

TEST(binary_edge_values) {
  const float nan = NAN, inf = INFINITY;
  const float a[7] = {-2.0f, -2.0f, -2.0f, 0.0f, 0.0f, nan, 1.0f};
  const float b[7] = {3.0f, 0.5f, -1.0f, 0.0f, -1.0f, 0.0f, nan};
  const float pow_want[7] = {-8.0f, nan, -0.5f, 1.0f, inf, 1.0f, 1.0f}; /* PyTorch */
  const float div_want[7] = {-2.0f / 3.0f, -4.0f, 2.0f, nan, -0.0f, nan, nan};
  const float prelu_want[7] = {-6.0f, -1.0f, 2.0f, 0.0f, 0.0f, nan, 1.0f};
  const float cond[7] = {nan, 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 0.0f};
  const float where_want[7] = {-2.0f, 0.5f, -1.0f, 0.0f, 0.0f, nan, nan};
  float got[4][7];
  int64_t shape[1] = {7};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value va = fuse_input(g, "a", 1, shape), vb = fuse_input(g, "b", 1, shape);
  fuse_value vc = fuse_input(g, "c", 1, shape);
  const float *in[3];
  float *out[4];
  fuse_output(g, fuse_pow(g, va, vb));
  fuse_output(g, fuse_div(g, va, vb));
  fuse_output(g, fuse_prelu(g, va, vb));
  fuse_output(g, fuse_where(g, vc, va, vb));
  in[0] = a, in[1] = b, in[2] = cond;
  out[0] = got[0], out[1] = got[1], out[2] = got[2], out[3] = got[3];
  CHECK(run_graph(g, in, out));
  check_values("pow", got[0], pow_want, 7);
  check_values("div", got[1], div_want, 7);
  check_values("prelu", got[2], prelu_want, 7);
  check_values("where", got[3], where_want, 7);
  fuse_graph_destroy(g);
}

/* sum, mean, max, min of [2,1,3], [4,1] and a scalar -> [2,4,3] */
TEST(variadic) {
  int64_t s0[3] = {2, 1, 3}, s1[2] = {4, 1};
  float x0[6], x1[4], got[4][24], want[4][24], nan_out[3];
  const float x2 = -0.25f;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value xs[3], one;
  const float *in[2];
  float *out[5];
  int i, j, k, ops_before;
  for (i = 0; i < 6; i++) x0[i] = (float)i * 0.5f - 1.0f;
  for (i = 0; i < 4; i++) x1[i] = 1.0f - (float)i * 0.75f;
  xs[0] = fuse_input(g, "x0", 3, s0);
  xs[1] = fuse_input(g, "x1", 2, s1);
  xs[2] = fuse_scalar(g, x2);
  fuse_output(g, fuse_sum(g, 3, xs));
  fuse_output(g, fuse_mean(g, 3, xs));
  fuse_output(g, fuse_max(g, 3, xs));
  fuse_output(g, fuse_min(g, 3, xs));
  CHECK(fuse_value_rank(g, fuse_graph_output(g, 0)) == 3);
  CHECK(fuse_value_shape(g, fuse_graph_output(g, 1))[1] == 4);
  ops_before = fuse_graph_op_count(g);
  one = fuse_sum(g, 1, xs); /* one value: itself, no op */
  CHECK(one == xs[0] && fuse_mean(g, 1, xs) == xs[0] && fuse_max(g, 1, xs + 1) == xs[1]);
  CHECK(fuse_graph_op_count(g) == ops_before);
  in[0] = x0, in[1] = x1;
  for (k = 0; k < 4; k++) out[k] = got[k];
  CHECK(run_graph(g, in, out));
  for (i = 0; i < 2; i++)
    for (j = 0; j < 4; j++)
      for (k = 0; k < 3; k++) {
        float a = x0[i * 3 + k], b = x1[j];
        int at = i * 12 + j * 3 + k;
        want[0][at] = a + b + x2;
        want[1][at] = (a + b + x2) / 3.0f;
        want[2][at] = fmaxf(fmaxf(a, b), x2);
        want[3][at] = fminf(fminf(a, b), x2);
      }
  for (k = 0; k < 4; k++) CHECK_NEAR_ARRAY(got[k], want[k], 24, 1e-6);
  fuse_graph_destroy(g);
  /* max / min propagate NaN */
  {
    int64_t s[1] = {3};
    const float a[3] = {NAN, 1.0f, 2.0f}, b[3] = {0.0f, NAN, 1.0f};
    fuse_value v[2];
    g = fuse_graph_create(NULL);
    v[0] = fuse_input(g, "a", 1, s);
    v[1] = fuse_input(g, "b", 1, s);
    fuse_output(g, fuse_max(g, 2, v));
    in[0] = a, in[1] = b;
    out[0] = nan_out;
    CHECK(run_graph(g, in, out));
    CHECK(nan_out[0] != nan_out[0] && nan_out[1] != nan_out[1] && nan_out[2] == 2.0f);
    fuse_graph_destroy(g);
  }
}

typedef enum { BAD_NONE_OPERAND, BAD_SHAPE, BAD_ATTR } bad_kind;

/* runs one builder call on a fresh graph with x [2,4,5]; it must fail with a message that
   starts with `prefix` */
static void expect_error(const char *what, int which, const char *prefix, fuse_result code) {
  int64_t sx[3] = {2, 4, 5}, s3[1] = {3}, s4[2] = {5, 1};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 3, sx), y = fuse_input(g, "y", 1, s3);
  fuse_value c4 = fuse_input(g, "c", 2, s4), none = FUSE_NONE, r = 0;
  fuse_value xs[3];
  const float nan = NAN;
  xs[0] = x, xs[1] = y, xs[2] = x;
  switch (which) {
  case 0: r = fuse_div(g, x, y); break;
  case 1: r = fuse_pow(g, none, x); break;
  case 2: r = fuse_prelu(g, x, c4); break; /* [5,1] does not broadcast to [2,4,5] */
  case 3: r = fuse_prelu(g, y, x); break;  /* slope larger than x */
  case 4: r = fuse_where(g, y, x, x); break;
  case 5: r = fuse_where(g, x, x, 12345); break;
  case 6: r = fuse_sqrt(g, none); break;
  case 7: r = fuse_reciprocal(g, 999); break;
  case 8: r = fuse_exp(g, none); break;
  case 9: r = fuse_log(g, none); break;
  case 10: r = fuse_neg(g, none); break;
  case 11: r = fuse_abs(g, none); break;
  case 12: r = fuse_floor(g, none); break;
  case 13: r = fuse_ceil(g, none); break;
  case 14: r = fuse_erf(g, none); break;
  case 15: r = fuse_tanh(g, none); break;
  case 16: r = fuse_softplus(g, none); break;
  case 17: r = fuse_hardswish(g, none); break;
  case 18: r = fuse_hardsigmoid(g, x, nan, 0.5f); break;
  case 19: r = fuse_leaky_relu(g, x, nan); break;
  case 20: r = fuse_elu(g, none, 1.0f); break;
  case 21: r = fuse_selu(g, x, 1.0f, nan); break;
  case 22: r = fuse_gelu(g, x, 2); break;
  case 23: r = fuse_sum(g, 0, xs); break;
  case 24: r = fuse_mean(g, 2, NULL); break;
  case 25: r = fuse_max(g, 2, xs); break; /* [2,4,5] and [3] */
  case 26: xs[1] = none; r = fuse_min(g, 3, xs); break;
  case 27: r = fuse_mean(g, 3, xs); break;
  default: break;
  }
  if (r != FUSE_NONE || fuse_graph_status(g) != code ||
      strncmp(fuse_graph_error(g), prefix, strlen(prefix)) != 0) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: %s gave %d, status %d, error '%s' (want '%s...', status %d)\n",
            runner_current, what, (int)r, (int)fuse_graph_status(g), fuse_graph_error(g), prefix,
            (int)code);
  }
  fuse_graph_destroy(g);
}

TEST(builder_errors) {
  const fuse_result A = FUSE_ERROR_INVALID_ARGUMENT, S = FUSE_ERROR_SHAPE;
  expect_error("div [2,4,5] / [3]", 0, "div: shapes [2,4,5] ('x') and [3] ('y') do not broadcast", S);
  expect_error("pow of FUSE_NONE", 1, "pow: operand 1 is FUSE_NONE", A);
  expect_error("prelu slope [4,1]", 2, "prelu: slope [5,1] ('c') does not broadcast to x [2,4,5]", S);
  expect_error("prelu slope larger than x", 3, "prelu: slope [2,4,5]", S);
  expect_error("where [3] with [2,4,5]", 4, "where: condition [3] ('y'), a [2,4,5]", S);
  expect_error("where with a foreign value", 5, "where: operand 3 is 12345, not a value", A);
  expect_error("sqrt", 6, "sqrt: operand 1 is FUSE_NONE", A);
  expect_error("reciprocal", 7, "reciprocal: operand 1 is 999, not a value", A);
  expect_error("exp", 8, "exp: operand 1 is FUSE_NONE", A);
  expect_error("log", 9, "log: operand 1 is FUSE_NONE", A);
  expect_error("neg", 10, "neg: operand 1 is FUSE_NONE", A);
  expect_error("abs", 11, "abs: operand 1 is FUSE_NONE", A);
  expect_error("floor", 12, "floor: operand 1 is FUSE_NONE", A);
  expect_error("ceil", 13, "ceil: operand 1 is FUSE_NONE", A);
  expect_error("erf", 14, "erf: operand 1 is FUSE_NONE", A);
  expect_error("tanh", 15, "tanh: operand 1 is FUSE_NONE", A);
  expect_error("softplus", 16, "softplus: operand 1 is FUSE_NONE", A);
  expect_error("hardswish", 17, "hardswish: operand 1 is FUSE_NONE", A);
  expect_error("hardsigmoid alpha NaN", 18, "hardsigmoid: parameters nan, 0.5 must not be NaN", A);
  expect_error("leaky_relu alpha NaN", 19, "leaky_relu: parameters nan", A);
  expect_error("elu", 20, "elu: operand 1 is FUSE_NONE", A);
  expect_error("selu gamma NaN", 21, "selu: parameters 1, nan must not be NaN", A);
  expect_error("gelu mode 2", 22, "gelu: tanh_approximation is 2; it must be 0 (erf) or 1 (tanh)", A);
  expect_error("sum of none", 23, "sum: needs at least one value (n=0)", A);
  expect_error("mean of NULL", 24, "mean: needs at least one value (n=2, xs NULL)", A);
  expect_error("max [2,4,5], [3]", 25, "maximum: shapes [2,4,5] ('x') and [3] ('y')", S);
  expect_error("min with FUSE_NONE", 26, "min: operand 2 is FUSE_NONE", A);
  expect_error("mean [2,4,5], [3]", 27, "add: shapes [2,4,5] ('x') and [3] ('y')", S);
}

/* the text form: attributes print and parse back, defaults may be left out, bad ones are
   parse errors */
TEST(text_form) {
  static const char *const text =
      "graph(%x: [2, 3]) {\n"
      "  %0 = hardsigmoid(%x)\n"
      "  %1 = selu(%x, gamma=2)\n"
      "  %2 = gelu(%x, approximate=1)\n"
      "  %3 = leaky_relu(%x, alpha=0.25)\n"
      "  %4 = where(%x, %0, 1.5)\n"
      "  %5 = prelu(%x, 0.5)\n"
      "  return %0, %1, %2, %3, %4, %5\n"
      "}\n";
  static const char *const bad[][2] = {
      {"graph(%x: [2]) {\n  %0 = gelu(%x, approximate=0.5)\n  return %0\n}\n",
       "line 2, column 17: gelu attribute 'approximate' must be a whole number"},
      {"graph(%x: [2]) {\n  %0 = selu(%x, beta=1)\n  return %0\n}\n",
       "line 2, column 17: selu has no attribute 'beta'"},
      {"graph(%x: [2]) {\n  %0 = gelu(%x, approximate=3)\n  return %0\n}\n",
       "line 2, column 3: gelu: tanh_approximation is 3"},
      {"graph(%x: [2]) {\n  %0 = where(%x, %x)\n  return %0\n}\n",
       "line 2, column 3: where takes 3 operands, not 2"},
      {"graph(%x: [2]) {\n  %0 = div(%x)\n  return %0\n}\n",
       "line 2, column 3: div takes 2 operands, not 1"}};
  fuse_graph *g = NULL, *g2 = NULL;
  char *p1 = NULL, *p2 = NULL;
  size_t n1 = 0, n2 = 0;
  FILE *f;
  int i;
  CHECK(fuse_graph_parse(text, NULL, &g) == FUSE_OK);
  f = open_memstream(&p1, &n1);
  CHECK(fuse_graph_print(g, f) == FUSE_OK);
  fclose(f);
  CHECK(strstr(p1, "hardsigmoid(%x, alpha=0.2, beta=0.5)") != NULL);
  CHECK(strstr(p1, "selu(%x, alpha=1.6732632, gamma=2)") != NULL);
  CHECK(strstr(p1, "gelu(%x, approximate=1)") != NULL);
  CHECK(strstr(p1, "leaky_relu(%x, alpha=0.25)") != NULL);
  CHECK(fuse_graph_parse(p1, NULL, &g2) == FUSE_OK);
  f = open_memstream(&p2, &n2);
  CHECK(fuse_graph_print(g2, f) == FUSE_OK);
  fclose(f);
  CHECK(p1 && p2 && strcmp(p1, p2) == 0);
  free(p1);
  free(p2);
  fuse_graph_destroy(g);
  fuse_graph_destroy(g2);
  for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
    g = NULL;
    CHECK(fuse_graph_parse(bad[i][0], NULL, &g) != FUSE_OK);
    if (!g || strncmp(fuse_graph_error(g), bad[i][1], strlen(bad[i][1])) != 0) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: error '%s', want '%s...'\n", runner_current,
              g ? fuse_graph_error(g) : "(no graph)", bad[i][1]);
    }
    fuse_graph_destroy(g);
  }
}

/* 2^22 elements through every unary op and the broadcasting ones: the kernels keep their
   switch out of the element loop, so this takes well under a second */
TEST(large_tensor) {
  int64_t shape[4] = {1, 64, 256, 256}, cs[4] = {1, 64, 1, 1};
  int64_t n = 64 * 256 * 256, i;
  float *x = (float *)malloc((size_t)n * sizeof(float)), *y = (float *)malloc((size_t)n * sizeof(float));
  float slope[64];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value v, c, s, cond;
  const float *in[1];
  float *out[1];
  clock_t t0;
  double secs;
  for (i = 0; i < n; i++) x[i] = (float)((i * 7919) % 2001 - 1000) / 250.0f; /* -4 .. 4 */
  for (i = 0; i < 64; i++) slope[i] = 0.01f * (float)i;
  v = fuse_input(g, "x", 4, shape);
  s = fuse_constant(g, "slope", 4, cs, slope);
  c = fuse_prelu(g, v, s);
  c = fuse_gelu(g, fuse_hardswish(g, fuse_softplus(g, fuse_selu(g, fuse_elu(g, c, 1.0f), 1.5f, 1.1f))), 0);
  c = fuse_gelu(g, fuse_leaky_relu(g, fuse_hardsigmoid(g, c, 0.2f, 0.5f), 0.1f), 1);
  c = fuse_tanh(g, fuse_erf(g, fuse_neg(g, fuse_abs(g, c))));
  c = fuse_log(g, fuse_exp(g, fuse_sqrt(g, fuse_reciprocal(g, fuse_add(g, c, fuse_scalar(g, 2.0f))))));
  cond = fuse_sub(g, fuse_floor(g, v), fuse_ceil(g, v)); /* 0 where x is a whole number */
  c = fuse_where(g, cond, fuse_pow(g, c, fuse_scalar(g, 2.0f)), fuse_div(g, v, c));
  fuse_output(g, c);
  CHECK(fuse_graph_status(g) == FUSE_OK);
  in[0] = x;
  out[0] = y;
  t0 = clock();
  CHECK(run_graph(g, in, out));
  secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  printf("  large_tensor: 25 ops on 2^22 elements in %.2f s\n", secs);
  for (i = 0; i < n; i += 4099) {
    double t = x[i] < 0 ? (double)slope[(i / 65536) % 64] * x[i] : x[i], hs, sp, se, el;
    el = t > 0 ? t : expm1(t);
    se = 1.1 * (el > 0 ? el : 1.5 * expm1(el));
    sp = se > 0 ? se + log1p(exp(-se)) : log1p(exp(se));
    hs = sp * fmin(fmax(sp + 3, 0), 6) / 6;
    t = 0.5 * hs * erfc(-hs / sqrt(2.0));
    t = fmin(fmax(0.2 * t + 0.5, 0), 1);
    t = t < 0 ? 0.1 * t : t;
    t = 0.5 * t * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (t + 0.044715 * t * t * t)));
    t = tanh(erf(-fabs(t)));
    t = log(exp(sqrt(1 / (t + 2))));
    t = floor(x[i]) != ceil(x[i]) ? t * t : x[i] / t;
    if (!(fabs(y[i] - t) <= 1e-5 * (1 + fabs(t)))) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: element %ld (x = %g): got %.9g, want %.9g\n", runner_current,
              (long)i, (double)x[i], (double)y[i], t);
      break;
    }
  }
  fuse_graph_destroy(g);
  free(x);
  free(y);
}

/* PyTorch 1.13's exports (tools/export_math.py): at opset 13 GELU comes as Div, Erf, Add, Mul,
   hardswish as HardSigmoid + Mul, SiLU as Sigmoid + Mul; at opset 14 HardSwish is one op */
static float *read_floats(const char *path, size_t n) {
  FILE *f = fopen(path, "rb");
  float *v = (float *)malloc(n * sizeof(float));
  size_t got = f && v ? fread(v, sizeof(float), n, f) : 0;
  if (f) fclose(f);
  if (got != n) {
    free(v);
    return NULL;
  }
  return v;
}

TEST(pytorch_exports) {
  static const char *const names[2] = {"mathnet_op13", "mathnet_op14"};
  const size_t n = 2 * 3 * 5 * 7;
  char path[256];
  int k;
  for (k = 0; k < 2; k++) {
    fuse_graph *g = NULL;
    float *x, *want, got[2 * 3 * 5 * 7];
    const float *in[1];
    float *out[1];
    snprintf(path, sizeof path, "tests/data/onnx/%s.input.bin", names[k]);
    x = read_floats(path, n);
    snprintf(path, sizeof path, "tests/data/onnx/%s.output.bin", names[k]);
    want = read_floats(path, n);
    snprintf(path, sizeof path, "tests/data/onnx/%s.onnx", names[k]);
    CHECK(x && want);
    if (fuse_onnx_load_file(path, NULL, &g) != FUSE_OK) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: %s: %s\n", runner_current, path, fuse_graph_error(g));
    } else if (x && want) {
      CHECK(fuse_optimize(g, "fuse") == FUSE_OK);
      in[0] = x;
      out[0] = got;
      CHECK(run_graph(g, in, out));
      CHECK_NEAR_ARRAY(got, want, n, 1e-4);
    }
    fuse_graph_destroy(g);
    free(x);
    free(want);
  }
}

/* Gelu as one op (opset 20, tools/export_math.py writes the model by hand): approximate left
   out, "none" and "tanh" (concatenated into one output); an unknown approximation is refused
   by name */
TEST(onnx_gelu_op20) {
  const size_t n = 3 * 11;
  float *x = read_floats("tests/data/math/gelu_op20.input.bin", n);
  float *want = read_floats("tests/data/math/gelu_op20.output.bin", 3 * n), got[3 * 3 * 11];
  const float *in[1];
  float *out[1];
  fuse_graph *g = NULL;
  FILE *f = fopen("tests/data/math/gelu_op20.onnx", "rb");
  unsigned char bytes[1024];
  size_t size = f ? fread(bytes, 1, sizeof bytes, f) : 0, i;
  if (f) fclose(f);
  CHECK(x && want && size > 0 && size < sizeof bytes);
  if (fuse_onnx_load_memory(bytes, size, NULL, &g) != FUSE_OK) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: %s\n", runner_current, fuse_graph_error(g));
  } else if (x && want) {
    in[0] = x;
    out[0] = got; /* the three Gelu joined along axis 0 */
    CHECK(run_graph(g, in, out));
    CHECK_NEAR_ARRAY(got, want, 3 * n, 1e-5);
  }
  fuse_graph_destroy(g);
  g = NULL;
  for (i = 0; i + 4 <= size; i++) /* "tanh" -> "tank" */
    if (memcmp(bytes + i, "tanh", 4) == 0) bytes[i + 3] = 'k';
  CHECK(fuse_onnx_load_memory(bytes, size, NULL, &g) == FUSE_ERROR_UNSUPPORTED);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "(Gelu, output 'c'): approximate must be \"none\" or \"tanh\"");
  fuse_graph_destroy(g);
  free(x);
  free(want);
}

/* Softsign and Shrink, the operator table's checklist's first ops (no named builder: fuse_op),
   at the edge values on every path: the reference kernels, the scalar twins, the CPU's best
   ISA (chain steps). PyTorch 1.13 float32: F.softsign, and Shrink written as ONNX's reference
   (torch.where), except that NaN stays NaN (ONNX's reference gives 0: fuse.h's element-wise
   ops all propagate NaN). */
TEST(softsign_shrink) {
  const float inf = INFINITY, nan = NAN;
  const float softsign[N_EDGE] = {nan, -0.9900990128517151f, -0.75f, 0.0f, -0.0f, 0.75f,
                                  0.9900990128517151f, nan, nan};
  const float shrink[N_EDGE] = {-inf, -100.0f, -3.0f, 0.0f, 0.0f, 3.0f, 100.0f, inf, nan};
  const float softshrink[N_EDGE] = {-inf, -98.5f, -1.5f, 0.0f, 0.0f, 1.5f, 98.5f, inf, nan};
  const float *want[3];
  static const char *const names[3] = {"softsign", "shrink", "shrink lambd=1.5, bias=1.5"};
  int64_t shape[1] = {N_EDGE};
  int path, k;
  want[0] = softsign, want[1] = shrink, want[2] = softshrink;
  for (path = 0; path < 3; path++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value x = fuse_input(g, "x", 1, shape);
    fuse_compile_options opt;
    fuse_plan *p = NULL;
    float got[3][N_EDGE];
    const float *in[1];
    float *out[3];
    fuse_output(g, fuse_op(g, "softsign", 1, &x, NULL));
    fuse_output(g, fuse_op(g, "shrink", 1, &x, ""));
    fuse_output(g, fuse_op(g, "shrink", 1, &x, " lambd = 1.5, bias=1.5 "));
    CHECK(fuse_graph_status(g) == FUSE_OK);
    memset(&opt, 0, sizeof opt);
    opt.reference_kernels = path == 0;
    opt.isa = path == 1 ? FUSE_ISA_SCALAR : FUSE_ISA_AUTO;
    CHECK(fuse_compile(g, &opt, &p) == FUSE_OK);
    in[0] = edge;
    for (k = 0; k < 3; k++) out[k] = got[k];
    CHECK(p && fuse_run(p, in, out, NULL) == FUSE_OK);
    for (k = 0; k < 3; k++) check_values(names[k], got[k], want[k], N_EDGE);
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
  }
}

/* fuse_op: what it refuses, and why */
TEST(fuse_op_errors) {
  static const struct {
    const char *op, *attrs;
    int num_in;
    const char *message;
  } cases[] = {
      {"softsine", NULL, 1, "fuse_op: unknown op 'softsine'"},
      {"shrink", "lambda=0.5", 1, "shrink has no attribute 'lambda'"},
      {"shrink", "lambd=[1]", 1, "shrink attribute 'lambd' must be a number"},
      {"shrink", "lambd=0.5 bias=1", 1, "expected ',' between attributes"},
      {"shrink", "lambd=0.5, lambd=1", 1, "attribute 'lambd' is given twice"},
      {"softsign", NULL, 2, "softsign takes 1 operand, not 2"},
      {"shrink", "lambd=nan", 1, "shrink: parameters nan, 0 must not be NaN"},
      {"copy", NULL, 1, "fuse_op: unknown op 'copy'"},
  };
  int64_t shape[1] = {4};
  int k;
  for (k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value x[2];
    x[0] = x[1] = fuse_input(g, "x", 1, shape);
    CHECK(fuse_op(g, cases[k].op, cases[k].num_in, x, cases[k].attrs) == FUSE_NONE);
    CHECK(fuse_graph_status(g) != FUSE_OK);
    CHECK_STR_CONTAINS(fuse_graph_error(g), cases[k].message);
    fuse_graph_destroy(g);
  }
}

int main(void) {
  RUN(softsign_shrink);
  RUN(fuse_op_errors);
  RUN(unary_edge_values);
  RUN(activation_edge_values);
  RUN(binary_edge_values);
  RUN(variadic);
  RUN(builder_errors);
  RUN(text_form);
  RUN(pytorch_exports);
  RUN(onnx_gelu_op20);
  RUN(large_tensor);
  return runner_finish("math");
}
