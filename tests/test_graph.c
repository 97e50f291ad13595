/* test_graph.c - the builder API: shape inference for every op and its error paths (status,
   message), the accessors, constants and scalars, NULL graphs. test_graph_state.c: bad
   operands for every builder, sticky errors, constants, allocators, out-of-memory. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph_helpers.h"

/* ------------------------------------------------------------- basics -- */

TEST(result_strings) {
  fuse_result codes[8] = {FUSE_OK,
                          FUSE_ERROR_INVALID_ARGUMENT,
                          FUSE_ERROR_SHAPE,
                          FUSE_ERROR_OUT_OF_MEMORY,
                          FUSE_ERROR_UNSUPPORTED,
                          FUSE_ERROR_PARSE,
                          FUSE_ERROR_IO,
                          FUSE_ERROR_BACKEND};
  int i, j;
  for (i = 0; i < 8; i++) {
    const char *s = fuse_result_string(codes[i]);
    CHECK(s != NULL);
    if (!s) continue;
    CHECK(s[0] != 0);
    for (j = 0; j < i; j++) {
      const char *t = fuse_result_string(codes[j]);
      if (t && strcmp(s, t) == 0) failf(__LINE__, "codes %d and %d share \"%s\"", i, j, s);
    }
  }
  CHECK(fuse_result_string((fuse_result)-100) != NULL);
  CHECK(fuse_result_string((fuse_result)42) != NULL);
}

TEST(null_graph) {
  fuse_conv2d_attrs ca;
  fuse_pool2d_attrs pa;
  fuse_value xs[2] = {0, 0};
  fuse_plan *plan = NULL;
  fuse_result st;
  memset(&ca, 0, sizeof ca);
  memset(&pa, 0, sizeof pa);
  pa.kernel[0] = pa.kernel[1] = 2;
  fuse_graph_destroy(NULL); /* no crash */
  st = fuse_graph_status(NULL);
  CHECK(st == FUSE_ERROR_INVALID_ARGUMENT || st == FUSE_ERROR_OUT_OF_MEMORY);
  CHECK(fuse_graph_error(NULL) != NULL);
  if (fuse_graph_error(NULL)) CHECK(fuse_graph_error(NULL)[0] != 0);
  CHECK_EQ_INT(fuse_input(NULL, "x", 2, D(2, 3)), FUSE_NONE);
  CHECK_EQ_INT(fuse_input(NULL, NULL, 0, NULL), FUSE_NONE);
  CHECK_EQ_INT(fuse_constant(NULL, "c", 1, D(3), NULL), FUSE_NONE);
  CHECK_EQ_INT(fuse_scalar(NULL, 1.0f), FUSE_NONE);
  CHECK(fuse_output(NULL, 0) != FUSE_OK);
  CHECK_EQ_INT(fuse_conv2d(NULL, 0, 1, &ca), FUSE_NONE);
  CHECK_EQ_INT(fuse_conv2d(NULL, 0, 1, NULL), FUSE_NONE);
  CHECK_EQ_INT(fuse_matmul(NULL, 0, 1), FUSE_NONE);
  CHECK_EQ_INT(fuse_add(NULL, 0, 1), FUSE_NONE);
  CHECK_EQ_INT(fuse_sub(NULL, 0, 1), FUSE_NONE);
  CHECK_EQ_INT(fuse_mul(NULL, 0, 1), FUSE_NONE);
  CHECK_EQ_INT(fuse_maximum(NULL, 0, 1), FUSE_NONE);
  CHECK_EQ_INT(fuse_minimum(NULL, 0, 1), FUSE_NONE);
  CHECK_EQ_INT(fuse_relu(NULL, 0), FUSE_NONE);
  CHECK_EQ_INT(fuse_clip(NULL, 0, 0.0f, 6.0f), FUSE_NONE);
  CHECK_EQ_INT(fuse_sigmoid(NULL, 0), FUSE_NONE);
  CHECK_EQ_INT(fuse_reshape(NULL, 0, 1, D(-1)), FUSE_NONE);
  CHECK_EQ_INT(fuse_flatten(NULL, 0, 1), FUSE_NONE);
  CHECK_EQ_INT(fuse_concat(NULL, 2, xs, 0), FUSE_NONE);
  CHECK_EQ_INT(fuse_softmax(NULL, 0, 0), FUSE_NONE);
  CHECK_EQ_INT(fuse_batch_norm(NULL, 0, 1, 2, 3, 4, 1e-5f), FUSE_NONE);
  CHECK_EQ_INT(fuse_max_pool2d(NULL, 0, &pa), FUSE_NONE);
  CHECK_EQ_INT(fuse_avg_pool2d(NULL, 0, &pa), FUSE_NONE);
  CHECK_EQ_INT(fuse_global_avg_pool2d(NULL, 0), FUSE_NONE);
  CHECK_EQ_INT(fuse_value_rank(NULL, 0), -1);
  CHECK(fuse_value_shape(NULL, 0) == NULL);
  CHECK(fuse_value_name(NULL, 0) == NULL);
  CHECK_EQ_INT(fuse_graph_find(NULL, "x"), FUSE_NONE);
  CHECK(fuse_graph_op_count(NULL) == -1 || fuse_graph_op_count(NULL) == 0);
  CHECK(fuse_graph_input_count(NULL) == -1 || fuse_graph_input_count(NULL) == 0);
  CHECK(fuse_graph_output_count(NULL) == -1 || fuse_graph_output_count(NULL) == 0);
  CHECK_EQ_INT(fuse_graph_input(NULL, 0), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_output(NULL, 0), FUSE_NONE);
  CHECK(fuse_compile(NULL, NULL, &plan) != FUSE_OK);
}

/* ------------------------------------------------------ inputs, constants -- */

TEST(inputs_constants_scalars) {
  fuse_graph *g = fuse_graph_create(NULL);
  float data[6] = {1, 2, 3, 4, 5, 6};
  fuse_value x, u, r0, r8, c, c0, s, cn;
  x = IN(g, "x", 1, 3, 8, 8);
  u = IN(g, NULL, 5);
  r0 = fuse_input(g, "r0", 0, NULL);
  r8 = IN(g, "r8", 1, 2, 1, 3, 1, 1, 2, 1);
  c = fuse_constant(g, "c", 2, D(2, 3), data);
  c0 = fuse_constant(g, "c0", 0, NULL, data);
  s = fuse_scalar(g, 2.5f);
  cn = CST(g, NULL, 4);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "");
  if (fuse_graph_error(g)) CHECK_EQ_INT(strlen(fuse_graph_error(g)), 0);
  CHECK_SHAPE(g, x, 1, 3, 8, 8);
  CHECK_SHAPE(g, u, 5);
  CHECK_RANK0(g, r0);
  CHECK_SHAPE(g, r8, 1, 2, 1, 3, 1, 1, 2, 1);
  CHECK_SHAPE(g, c, 2, 3);
  CHECK_RANK0(g, c0);
  CHECK_RANK0(g, s);
  CHECK_SHAPE(g, cn, 4);
  /* every value distinct */
  CHECK(x != u && u != r0 && r0 != r8 && r8 != c && c != c0 && c0 != s && s != cn);
  CHECK(x >= 0 && u >= 0 && r0 >= 0 && r8 >= 0 && c >= 0 && c0 >= 0 && s >= 0 && cn >= 0);
  /* big shapes are fine for inputs (fuse.h caps each dim at 2^31-1 and a tensor at 2^48
     bytes, implementation limits the spec leaves open) */
  CHECK_SHAPE(g, IN(g, "big", P20, P20, 16), P20, P20, 16);
  CHECK_EQ_INT(fuse_graph_op_count(g), 0);
  CHECK_EQ_INT(fuse_graph_input_count(g), 5);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(input_constant_errors) {
  fuse_graph *g;
  int64_t huge[4] = {P20, P20, P20, P20};
  int64_t huge2[2] = {(int64_t)1 << 62, 4};
  int64_t huge3[3] = {INT64_MAX, 2, 1};

  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", 2, NULL), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", -1, D(2)), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", 9, D(1, 1, 1, 1, 1, 1, 1, 1, 1)), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", 100, D(1)), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, IN(g, "a", 2, 0, 3), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, IN(g, "a", 2, -3), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, IN(g, NULL, -1), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", 4, huge), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", 2, huge2), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", 3, huge3), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, IN(g, "x0", 4), INV, 0, "input", "x0"); /* duplicate of fresh's input */

  g = fresh();
  EXPECT_FAIL(g, fuse_constant(g, "c", 2, NULL, NULL), INV, 0, "const");
  g = fresh();
  EXPECT_FAIL(g, fuse_constant(g, "c", -1, D(2), NULL), INV, 0, "const");
  g = fresh();
  EXPECT_FAIL(g, fuse_constant(g, "c", 9, D(1, 1, 1, 1, 1, 1, 1, 1, 1), NULL), INV, 0, "const");
  g = fresh();
  EXPECT_FAIL(g, CST(g, "c", 3, 0), INV, 0, "const");
  g = fresh();
  EXPECT_FAIL(g, CST(g, NULL, -2, 3), INV, 0, "const");
  g = fresh();
  EXPECT_FAIL(g, fuse_constant(g, "c", 4, huge, NULL), INV, 0, "const");
  g = fresh();
  EXPECT_FAIL(g, fuse_constant(g, NULL, 2, huge2, NULL), INV, 0, "const");
  g = fresh();
  EXPECT_FAIL(g, CST(g, "x0", 4), INV, 0, "const", "x0"); /* same name as an input */
  g = fresh();
  CHECK(CST(g, "k", 4) != FUSE_NONE);
  EXPECT_FAIL(g, CST(g, "k", 2), INV, 0, "const", "k");
  g = fresh();
  CHECK(CST(g, "k2", 4) != FUSE_NONE);
  EXPECT_FAIL(g, IN(g, "k2", 2), INV, 0, "input", "k2"); /* input named like a constant */
  g = fresh();
  CHECK(CST(g, NULL, 4) != FUSE_NONE); /* unnamed values never clash */
  CHECK(CST(g, NULL, 4) != FUSE_NONE);
  CHECK(IN(g, NULL, 4) != FUSE_NONE);
  CHECK(IN(g, NULL, 4) != FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(accessors) {
  fuse_graph *g = fuse_graph_create(NULL);
  char name[8] = "abc";
  fuse_value a, b, c, y, z, s;
  a = IN(g, name, 2, 3);
  name[0] = 'Z'; /* the graph keeps its own copy */
  b = IN(g, NULL, 3);
  c = CST(g, "cst", 3);
  s = fuse_scalar(g, 3.0f);
  y = fuse_add(g, a, c);
  z = fuse_mul(g, y, s);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, z), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, y), FUSE_OK);
  CHECK_EQ_INT(fuse_value_rank(g, a), 2);
  CHECK_EQ_INT(fuse_value_rank(g, s), 0);
  CHECK(fuse_value_name(g, a) && strcmp(fuse_value_name(g, a), "abc") == 0);
  CHECK(fuse_value_name(g, c) && strcmp(fuse_value_name(g, c), "cst") == 0);
  CHECK(fuse_value_name(g, b) == NULL);
  CHECK(fuse_value_name(g, y) == NULL);
  CHECK(fuse_value_name(g, s) == NULL);
  CHECK_EQ_INT(fuse_graph_find(g, "abc"), a);
  CHECK_EQ_INT(fuse_graph_find(g, "cst"), c);
  CHECK_EQ_INT(fuse_graph_find(g, "Zbc"), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_find(g, "ab"), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_find(g, ""), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_find(g, NULL), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_op_count(g), 2);
  CHECK_EQ_INT(fuse_graph_input_count(g), 2);
  CHECK_EQ_INT(fuse_graph_input(g, 0), a);
  CHECK_EQ_INT(fuse_graph_input(g, 1), b);
  CHECK_EQ_INT(fuse_graph_input(g, 2), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_input(g, -1), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_output_count(g), 2);
  CHECK_EQ_INT(fuse_graph_output(g, 0), z);
  CHECK_EQ_INT(fuse_graph_output(g, 1), y);
  CHECK_EQ_INT(fuse_graph_output(g, 2), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_output(g, -1), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_output(g, 1 << 30), FUSE_NONE);
  /* bad values */
  CHECK_EQ_INT(fuse_value_rank(g, FUSE_NONE), -1);
  CHECK_EQ_INT(fuse_value_rank(g, 9999), -1);
  CHECK_EQ_INT(fuse_value_rank(g, -7), -1);
  CHECK_EQ_INT(fuse_value_rank(g, INT32_MAX), -1);
  CHECK(fuse_value_shape(g, FUSE_NONE) == NULL);
  CHECK(fuse_value_shape(g, 9999) == NULL);
  CHECK(fuse_value_shape(g, -7) == NULL);
  CHECK(fuse_value_name(g, FUSE_NONE) == NULL);
  CHECK(fuse_value_name(g, 9999) == NULL);
  CHECK(fuse_value_name(g, INT32_MIN) == NULL);
  /* accessors do not set errors */
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  /* an empty graph */
  {
    fuse_graph *e = fuse_graph_create(NULL);
    CHECK_EQ_INT(fuse_graph_op_count(e), 0);
    CHECK_EQ_INT(fuse_graph_input_count(e), 0);
    CHECK_EQ_INT(fuse_graph_output_count(e), 0);
    CHECK_EQ_INT(fuse_graph_input(e, 0), FUSE_NONE);
    CHECK_EQ_INT(fuse_graph_output(e, 0), FUSE_NONE);
    CHECK_EQ_INT(fuse_value_rank(e, 0), -1);
    CHECK_EQ_INT(fuse_graph_status(e), FUSE_OK);
    CHECK(fuse_graph_error(e) && fuse_graph_error(e)[0] == 0);
    fuse_graph_destroy(e);
  }
  fuse_graph_destroy(g);
}

TEST(output_errors) {
  fuse_graph *g;
  g = fresh();
  CHECK_EQ_INT(fuse_output(g, FUSE_NONE), INV);
  EXPECT_FAIL(g, FUSE_NONE, INV, 0, "output");
  g = fresh();
  CHECK_EQ_INT(fuse_output(g, 9999), INV);
  EXPECT_FAIL(g, FUSE_NONE, INV, 0, "output");
  g = fresh();
  CHECK_EQ_INT(fuse_output(g, -5), INV);
  EXPECT_FAIL(g, FUSE_NONE, INV, 0, "output");
  /* after an earlier error fuse_output returns the sticky error */
  g = fresh();
  CHECK_EQ_INT(fuse_relu(g, 777), FUSE_NONE);
  CHECK(fuse_output(g, g_x0) != FUSE_OK);
  CHECK_EQ_INT(fuse_graph_output_count(g), 1);
  fuse_graph_destroy(g);
  /* no outputs: compile fails */
  {
    fuse_plan *plan = NULL;
    fuse_result r;
    g = fuse_graph_create(NULL);
    fuse_relu(g, IN(g, "x", 4));
    r = fuse_compile(g, NULL, &plan);
    CHECK(r != FUSE_OK);
    if (r == FUSE_OK && plan) fuse_plan_destroy(plan);
    fuse_graph_destroy(g);
  }
}

/* ------------------------------------------------------------- conv2d -- */

static fuse_value conv(fuse_graph *g, fuse_value x, fuse_value w, int sh, int sw, int pt, int pl,
                       int pb, int pr, int dh, int dw, int groups) {
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
  return fuse_conv2d(g, x, w, &a);
}

TEST(conv2d_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs zero;
  fuse_value x = IN(g, "x", 1, 3, 8, 8), w = CST(g, "w", 4, 3, 3, 3);
  fuse_value xg = IN(g, "xg", 2, 8, 10, 12), wg = CST(g, "wg", 16, 2, 3, 5);
  fuse_value xd = IN(g, "xd", 1, 8, 5, 5), wd = CST(g, "wd", 8, 1, 3, 3);
  fuse_value w11 = CST(g, "w11", 6, 3, 1, 1), wk = CST(g, "wk", 2, 3, 8, 8);
  memset(&zero, 0, sizeof zero);
  CHECK_SHAPE(g, fuse_conv2d(g, x, w, NULL), 1, 4, 6, 6);
  CHECK_SHAPE(g, fuse_conv2d(g, x, w, &zero), 1, 4, 6, 6);
  CHECK_SHAPE(g, conv(g, x, w, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1, 4, 8, 8);
  CHECK_SHAPE(g, conv(g, x, w, 2, 2, 1, 1, 1, 1, 1, 1, 1), 1, 4, 4, 4);
  CHECK_SHAPE(g, conv(g, x, w, 2, 2, 0, 0, 0, 0, 0, 0, 0), 1, 4, 3, 3);
  CHECK_SHAPE(g, conv(g, x, w, 0, 0, 0, 0, 0, 0, 2, 2, 0), 1, 4, 4, 4);  /* eff kernel 5 */
  CHECK_SHAPE(g, conv(g, x, w, 1, 1, 0, 0, 0, 0, 3, 1, 1), 1, 4, 2, 6);  /* eff 7 x 3 */
  CHECK_SHAPE(g, conv(g, x, w, 2, 3, 1, 0, 2, 3, 1, 1, 1), 1, 4, 5, 3);  /* asymmetric */
  CHECK_SHAPE(g, conv(g, x, w, 3, 1, 0, 2, 0, 0, 1, 2, 1), 1, 4, 2, 6);  /* mixed */
  CHECK_SHAPE(g, conv(g, xg, wg, 0, 0, 0, 0, 0, 0, 0, 0, 4), 2, 16, 8, 8); /* groups */
  CHECK_SHAPE(g, conv(g, xd, wd, 1, 1, 1, 1, 1, 1, 1, 1, 8), 1, 8, 5, 5);  /* depthwise */
  CHECK_SHAPE(g, conv(g, x, w11, 1, 1, 0, 0, 0, 0, 1, 1, 1), 1, 6, 8, 8);  /* 1x1 */
  CHECK_SHAPE(g, conv(g, x, wk, 1, 1, 0, 0, 0, 0, 1, 1, 1), 1, 2, 1, 1);   /* full kernel */
  CHECK_SHAPE(g, conv(g, x, wk, 5, 5, 0, 0, 0, 0, 1, 1, 1), 1, 2, 1, 1);   /* big stride */
  CHECK_SHAPE(g, conv(g, x, w, 1, 1, 5, 5, 5, 5, 1, 1, 1), 1, 4, 16, 16);  /* big padding */
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(g), 15);
  fuse_graph_destroy(g);
}

TEST(conv2d_errors) {
  fuse_graph *g;
  fuse_value x, w;
  g = fresh();
  x = IN(g, "a", 1, 3, 8, 8);
  w = CST(g, "w", 8, 4, 3, 3);
  EXPECT_FAIL(g, fuse_conv2d(g, x, w, NULL), SHP, 0, "conv2d:", "[1,3,8,8]", "[8,4,3,3]");
  g = fresh(); /* grouped channel mismatch */
  x = IN(g, "a", 1, 8, 8, 8);
  w = CST(g, "w", 8, 4, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 1, 1, 0, 0, 0, 0, 1, 1, 4), SHP, 0, "conv2d:", "[1,8,8,8]",
              "[8,4,3,3]");
  g = fresh(); /* groups does not divide C */
  x = IN(g, "a", 1, 6, 8, 8);
  w = CST(g, "w", 4, 2, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 1, 1, 0, 0, 0, 0, 1, 1, 4), INV, SHP, "conv2d:");
  g = fresh(); /* groups divides C but not K */
  x = IN(g, "a", 1, 6, 8, 8);
  w = CST(g, "w", 4, 2, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 1, 1, 0, 0, 0, 0, 1, 1, 3), INV, SHP, "conv2d:");
  g = fresh();
  x = IN(g, "a", 1, 4, 8, 8);
  w = CST(g, "w", 4, 1, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 1, 1, 0, 0, 0, 0, 1, 1, -2), INV, 0, "conv2d:");
  g = fresh(); /* negative strides / padding / dilation */
  x = IN(g, "a", 1, 3, 8, 8);
  w = CST(g, "w", 4, 3, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, -1, 1, 0, 0, 0, 0, 1, 1, 1), INV, 0, "conv2d:");
  g = fresh();
  x = IN(g, "a", 1, 3, 8, 8);
  w = CST(g, "w", 4, 3, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 1, -2, 0, 0, 0, 0, 1, 1, 1), INV, 0, "conv2d:");
  g = fresh();
  x = IN(g, "a", 1, 3, 8, 8);
  w = CST(g, "w", 4, 3, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 1, 1, -1, 0, 0, 0, 1, 1, 1), INV, 0, "conv2d:");
  g = fresh();
  x = IN(g, "a", 1, 3, 8, 8);
  w = CST(g, "w", 4, 3, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 1, 1, 0, 0, 0, -1, 1, 1, 1), INV, 0, "conv2d:");
  g = fresh();
  x = IN(g, "a", 1, 3, 8, 8);
  w = CST(g, "w", 4, 3, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 1, 1, 0, 0, 0, 0, 1, -1, 1), INV, 0, "conv2d:");
  g = fresh(); /* output size < 1 */
  x = IN(g, "a", 1, 3, 2, 2);
  w = CST(g, "w", 4, 3, 3, 3);
  EXPECT_FAIL(g, fuse_conv2d(g, x, w, NULL), SHP, INV, "conv2d:", "[1,3,2,2]");
  g = fresh(); /* kernel larger than the input also with a stride (C division truncates) */
  x = IN(g, "a", 1, 3, 2, 2);
  w = CST(g, "w", 4, 3, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 2, 2, 0, 0, 0, 0, 1, 1, 1), SHP, INV, "conv2d:", "[1,3,2,2]");
  g = fresh(); /* dilation makes the kernel too big */
  x = IN(g, "a", 1, 3, 8, 8);
  w = CST(g, "w", 4, 3, 3, 3);
  EXPECT_FAIL(g, conv(g, x, w, 1, 1, 0, 0, 0, 0, 4, 1, 1), SHP, INV, "conv2d:");
  g = fresh(); /* wrong ranks */
  x = IN(g, "a", 3, 8, 8);
  w = CST(g, "w", 4, 3, 3, 3);
  EXPECT_FAIL(g, fuse_conv2d(g, x, w, NULL), SHP, INV, "conv2d:", "[3,8,8]");
  g = fresh();
  x = IN(g, "a", 1, 3, 8, 8);
  w = CST(g, "w", 4, 3, 3);
  EXPECT_FAIL(g, fuse_conv2d(g, x, w, NULL), SHP, INV, "conv2d:", "[4,3,3]");
  g = fresh();
  EXPECT_FAIL(g, fuse_conv2d(g, FUSE_NONE, g_x0, NULL), INV, 0, "conv2d:");
}

/* ------------------------------------------------------------- matmul -- */

TEST(matmul_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value m23 = IN(g, "m23", 2, 3), m34 = IN(g, "m34", 3, 4), v3 = IN(g, "v3", 3);
  fuse_value b523 = IN(g, "b523", 5, 2, 3), b534 = IN(g, "b534", 5, 3, 4);
  fuse_value b5123 = IN(g, "b5123", 5, 1, 2, 3), b734 = IN(g, "b734", 7, 3, 4);
  fuse_value b1534 = IN(g, "b1534", 1, 5, 3, 4), m31 = IN(g, "m31", 3, 1), m13 = IN(g, "m13", 1, 3);
  fuse_value v1 = IN(g, "v1", 1), m14 = IN(g, "m14", 1, 4);
  CHECK_SHAPE(g, fuse_matmul(g, m23, m34), 2, 4);
  CHECK_RANK0(g, fuse_matmul(g, v3, v3));
  CHECK_SHAPE(g, fuse_matmul(g, v3, m34), 4);
  CHECK_SHAPE(g, fuse_matmul(g, m23, v3), 2);
  CHECK_SHAPE(g, fuse_matmul(g, b523, m34), 5, 2, 4);
  CHECK_SHAPE(g, fuse_matmul(g, m23, b534), 5, 2, 4);
  CHECK_SHAPE(g, fuse_matmul(g, b523, b534), 5, 2, 4);
  CHECK_SHAPE(g, fuse_matmul(g, b5123, b734), 5, 7, 2, 4);
  CHECK_SHAPE(g, fuse_matmul(g, b5123, b1534), 5, 5, 2, 4);
  CHECK_SHAPE(g, fuse_matmul(g, v3, b534), 5, 4);
  CHECK_SHAPE(g, fuse_matmul(g, b523, v3), 5, 2);
  CHECK_SHAPE(g, fuse_matmul(g, m31, m13), 3, 3);
  CHECK_SHAPE(g, fuse_matmul(g, m13, m31), 1, 1);
  CHECK_SHAPE(g, fuse_matmul(g, v1, m14), 4);
  CHECK_SHAPE(g, fuse_matmul(g, m13, v3), 1);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(matmul_errors) {
  fuse_graph *g;
  fuse_value a, b;
  g = fresh();
  a = IN(g, "a", 2, 3);
  b = IN(g, "b", 4, 5);
  EXPECT_FAIL(g, fuse_matmul(g, a, b), SHP, 0, "matmul:", "[2,3]", "[4,5]");
  g = fresh();
  a = IN(g, "a", 3);
  b = IN(g, "b", 4);
  EXPECT_FAIL(g, fuse_matmul(g, a, b), SHP, 0, "matmul:", "[3]", "[4]");
  g = fresh();
  a = IN(g, "a", 3);
  b = IN(g, "b", 4, 5);
  EXPECT_FAIL(g, fuse_matmul(g, a, b), SHP, 0, "matmul:", "[3]", "[4,5]");
  g = fresh();
  a = IN(g, "a", 2, 3);
  b = IN(g, "b", 4);
  EXPECT_FAIL(g, fuse_matmul(g, a, b), SHP, 0, "matmul:", "[2,3]", "[4]");
  g = fresh(); /* batch dims do not broadcast */
  a = IN(g, "a", 2, 2, 3);
  b = IN(g, "b", 3, 3, 4);
  EXPECT_FAIL(g, fuse_matmul(g, a, b), SHP, 0, "matmul:", "[2,2,3]", "[3,3,4]");
  g = fresh(); /* rank-0 operand (numpy refuses) */
  a = fuse_scalar(g, 2.0f);
  b = IN(g, "b", 3, 4);
  EXPECT_FAIL(g, fuse_matmul(g, a, b), SHP, INV, "matmul:");
  g = fresh();
  a = IN(g, "a", 3, 4);
  EXPECT_FAIL(g, fuse_matmul(g, a, 4242), INV, 0, "matmul:");
}

/* ---------------------------------------------------------- broadcasting -- */


TEST(broadcast_shapes) {
  int k;
  for (k = 0; k < 5; k++) {
    fuse_graph *g = fuse_graph_create(NULL);
    binop_fn f = binops[k];
    fuse_value a23 = IN(g, "a23", 2, 3), b3 = IN(g, "b3", 3), c214 = IN(g, "c214", 2, 1, 4);
    fuse_value d31 = IN(g, "d31", 3, 1), s = fuse_scalar(g, 1.5f), e1 = IN(g, "e1", 1);
    fuse_value f511 = IN(g, "f511", 5, 1, 1), h41 = IN(g, "h41", 4, 1), i15 = IN(g, "i15", 1, 5);
    fuse_value r0 = fuse_input(g, "r0", 0, NULL), j = IN(g, "j", 2, 1, 3, 1), k2 = IN(g, "k2", 5, 1, 4);
    CHECK_SHAPE(g, f(g, a23, b3), 2, 3);
    CHECK_SHAPE(g, f(g, b3, a23), 2, 3);
    CHECK_SHAPE(g, f(g, a23, a23), 2, 3);
    CHECK_SHAPE(g, f(g, c214, d31), 2, 3, 4);
    CHECK_SHAPE(g, f(g, d31, c214), 2, 3, 4);
    CHECK_SHAPE(g, f(g, s, a23), 2, 3);
    CHECK_SHAPE(g, f(g, a23, s), 2, 3);
    CHECK_RANK0(g, f(g, s, s));
    CHECK_RANK0(g, f(g, r0, s));
    CHECK_SHAPE(g, f(g, e1, f511), 5, 1, 1);
    CHECK_SHAPE(g, f(g, h41, i15), 4, 5);
    CHECK_SHAPE(g, f(g, j, k2), 2, 5, 3, 4);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_op_count(g), 12);
    fuse_graph_destroy(g);
  }
}

TEST(broadcast_errors) {
  int k;
  for (k = 0; k < 5; k++) {
    fuse_graph *g;
    fuse_value a, b;
    g = fresh();
    a = IN(g, "a", 2, 3);
    b = IN(g, "b", 4);
    EXPECT_FAIL(g, binops[k](g, a, b), SHP, 0, binop_names[k], "[2,3]", "[4]");
    g = fresh();
    a = IN(g, "a", 2, 1, 4);
    b = IN(g, "b", 3, 3);
    EXPECT_FAIL(g, binops[k](g, a, b), SHP, 0, binop_names[k], "[2,1,4]", "[3,3]");
    g = fresh();
    EXPECT_FAIL(g, binops[k](g, g_x0, FUSE_NONE), INV, 0, binop_names[k]);
    g = fresh();
    EXPECT_FAIL(g, binops[k](g, 555, g_x0), INV, 0, binop_names[k]);
  }
}

/* --------------------------------------------------- unary, clip, sigmoid -- */

TEST(unary_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 3, 4), r0 = fuse_input(g, "r0", 0, NULL);
  CHECK_SHAPE(g, fuse_relu(g, x), 2, 3, 4);
  CHECK_SHAPE(g, fuse_sigmoid(g, x), 2, 3, 4);
  CHECK_SHAPE(g, fuse_clip(g, x, 0.0f, 6.0f), 2, 3, 4);
  CHECK_SHAPE(g, fuse_clip(g, x, -INFINITY, INFINITY), 2, 3, 4);
  CHECK_SHAPE(g, fuse_clip(g, x, 0.0f, INFINITY), 2, 3, 4);
  CHECK_SHAPE(g, fuse_clip(g, x, -INFINITY, -1.0f), 2, 3, 4);
  CHECK_SHAPE(g, fuse_clip(g, x, 2.0f, 2.0f), 2, 3, 4);
  CHECK_SHAPE(g, fuse_clip(g, x, -0.0f, 0.0f), 2, 3, 4);
  CHECK_RANK0(g, fuse_relu(g, r0));
  CHECK_RANK0(g, fuse_sigmoid(g, r0));
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(g), 10);
  fuse_graph_destroy(g);
}

TEST(clip_errors) {
  fuse_graph *g;
  g = fresh();
  EXPECT_FAIL(g, fuse_clip(g, g_x0, 1.0f, 0.0f), INV, 0, "clip:");
  g = fresh();
  EXPECT_FAIL(g, fuse_clip(g, g_x0, NAN, 1.0f), INV, 0, "clip:");
  g = fresh();
  EXPECT_FAIL(g, fuse_clip(g, g_x0, 0.0f, NAN), INV, 0, "clip:");
  g = fresh();
  EXPECT_FAIL(g, fuse_clip(g, g_x0, NAN, NAN), INV, 0, "clip:");
  g = fresh();
  EXPECT_FAIL(g, fuse_clip(g, g_x0, INFINITY, -INFINITY), INV, 0, "clip:");
  g = fresh();
  EXPECT_FAIL(g, fuse_clip(g, FUSE_NONE, 0.0f, 1.0f), INV, 0, "clip:");
  g = fresh();
  EXPECT_FAIL(g, fuse_relu(g, FUSE_NONE), INV, 0, "relu:");
  g = fresh();
  EXPECT_FAIL(g, fuse_sigmoid(g, 31337), INV, 0, "sigmoid:");
}

/* ------------------------------------------------------------ reshape -- */

TEST(reshape_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 3, 4), one = IN(g, "one", 1, 1);
  CHECK_SHAPE(g, fuse_reshape(g, x, 2, D(4, -1)), 4, 6);
  CHECK_SHAPE(g, fuse_reshape(g, x, 2, D(-1, 4)), 6, 4);
  CHECK_SHAPE(g, fuse_reshape(g, x, 1, D(-1)), 24);
  CHECK_SHAPE(g, fuse_reshape(g, x, 3, D(2, -1, 2)), 2, 6, 2);
  CHECK_SHAPE(g, fuse_reshape(g, x, 4, D(1, 24, 1, 1)), 1, 24, 1, 1);
  CHECK_SHAPE(g, fuse_reshape(g, x, 3, D(4, 3, 2)), 4, 3, 2);
  CHECK_SHAPE(g, fuse_reshape(g, x, 8, D(1, 2, 1, 3, 1, 4, 1, 1)), 1, 2, 1, 3, 1, 4, 1, 1);
  CHECK_SHAPE(g, fuse_reshape(g, x, 5, D(1, 1, -1, 1, 1)), 1, 1, 24, 1, 1);
  CHECK_RANK0(g, fuse_reshape(g, one, 0, NULL));
  CHECK_SHAPE(g, fuse_reshape(g, one, 1, D(-1)), 1);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(reshape_errors) {
  fuse_graph *g;
  fuse_value x;
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, 2, D(5, 5)), SHP, INV, "reshape:", "[2,3,4]", "[5,5]");
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, 2, D(5, -1)), SHP, INV, "reshape:", "[2,3,4]");
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, 3, D(-1, 2, -1)), INV, 0, "reshape:");
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, 3, D(0, 2, 12)), INV, 0, "reshape:");
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, 3, D(0, -1, 12)), INV, 0, "reshape:");
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, 2, D(-2, -12)), INV, 0, "reshape:");
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, 2, NULL), INV, 0, "reshape:");
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, -1, D(24)), INV, 0, "reshape:");
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, 9, D(1, 1, 1, 1, 1, 1, 2, 3, 4)), INV, 0, "reshape:");
  g = fresh(); /* target whose product overflows */
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_reshape(g, x, 4, D(P20, P20, P20, P20)), INV, SHP, "reshape:");
  g = fresh();
  EXPECT_FAIL(g, fuse_reshape(g, FUSE_NONE, 1, D(-1)), INV, 0, "reshape:");
}

/* ------------------------------------------------------------ flatten -- */

TEST(flatten_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 3, 4, 5), v = IN(g, "v", 7);
  CHECK_SHAPE(g, fuse_flatten(g, x, 0), 1, 120);
  CHECK_SHAPE(g, fuse_flatten(g, x, 1), 2, 60);
  CHECK_SHAPE(g, fuse_flatten(g, x, 2), 6, 20);
  CHECK_SHAPE(g, fuse_flatten(g, x, 3), 24, 5);
  CHECK_SHAPE(g, fuse_flatten(g, x, 4), 120, 1);
  CHECK_SHAPE(g, fuse_flatten(g, x, -1), 24, 5);
  CHECK_SHAPE(g, fuse_flatten(g, x, -2), 6, 20);
  CHECK_SHAPE(g, fuse_flatten(g, x, -3), 2, 60);
  CHECK_SHAPE(g, fuse_flatten(g, x, -4), 1, 120);
  CHECK_SHAPE(g, fuse_flatten(g, v, 0), 1, 7);
  CHECK_SHAPE(g, fuse_flatten(g, v, 1), 7, 1);
  CHECK_SHAPE(g, fuse_flatten(g, v, -1), 1, 7);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(flatten_errors) {
  fuse_graph *g;
  fuse_value x;
  g = fresh();
  x = IN(g, "a", 2, 3, 4, 5);
  EXPECT_FAIL(g, fuse_flatten(g, x, 5), INV, 0, "flatten:", "[2,3,4,5]");
  g = fresh();
  x = IN(g, "a", 2, 3, 4, 5);
  EXPECT_FAIL(g, fuse_flatten(g, x, -5), INV, 0, "flatten:", "[2,3,4,5]");
  g = fresh();
  x = IN(g, "a", 2, 3, 4, 5);
  EXPECT_FAIL(g, fuse_flatten(g, x, 1000), INV, 0, "flatten:");
  g = fresh();
  EXPECT_FAIL(g, fuse_flatten(g, -3, 1), INV, 0, "flatten:");
}

/* ------------------------------------------------------------- concat -- */

TEST(concat_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value a = IN(g, "a", 2, 3), b = IN(g, "b", 2, 5), c = IN(g, "c", 4, 3);
  fuse_value p = IN(g, "p", 1, 2, 4, 4), q = IN(g, "q", 1, 6, 4, 4), r = IN(g, "r", 1, 1, 4, 4);
  fuse_value v = IN(g, "v", 3);
  fuse_value ab[2], ac[2], pqr[3], one[1], vv[3];
  ab[0] = a; ab[1] = b;
  ac[0] = a; ac[1] = c;
  pqr[0] = p; pqr[1] = q; pqr[2] = r;
  one[0] = b;
  vv[0] = v; vv[1] = v; vv[2] = v;
  CHECK_SHAPE(g, fuse_concat(g, 2, ab, 1), 2, 8);
  CHECK_SHAPE(g, fuse_concat(g, 2, ab, -1), 2, 8);
  CHECK_SHAPE(g, fuse_concat(g, 2, ac, 0), 6, 3);
  CHECK_SHAPE(g, fuse_concat(g, 2, ac, -2), 6, 3);
  CHECK_SHAPE(g, fuse_concat(g, 3, pqr, 1), 1, 9, 4, 4);
  CHECK_SHAPE(g, fuse_concat(g, 3, pqr, -3), 1, 9, 4, 4);
  CHECK_SHAPE(g, fuse_concat(g, 1, one, 0), 2, 5);
  CHECK_SHAPE(g, fuse_concat(g, 3, vv, 0), 9);
  CHECK_SHAPE(g, fuse_concat(g, 3, vv, -1), 9);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(concat_errors) {
  fuse_graph *g;
  fuse_value xs[3];
  g = fresh();
  xs[0] = IN(g, "a", 2, 3);
  xs[1] = IN(g, "b", 2, 5);
  EXPECT_FAIL(g, fuse_concat(g, 2, xs, 2), INV, 0, "concat:");
  g = fresh();
  xs[0] = IN(g, "a", 2, 3);
  xs[1] = IN(g, "b", 2, 5);
  EXPECT_FAIL(g, fuse_concat(g, 2, xs, -3), INV, 0, "concat:");
  g = fresh(); /* dims differ off the axis */
  xs[0] = IN(g, "a", 2, 3);
  xs[1] = IN(g, "b", 3, 3);
  EXPECT_FAIL(g, fuse_concat(g, 2, xs, 1), SHP, 0, "concat:", "[2,3]", "[3,3]");
  g = fresh(); /* ranks differ */
  xs[0] = IN(g, "a", 2, 3);
  xs[1] = IN(g, "b", 3);
  EXPECT_FAIL(g, fuse_concat(g, 2, xs, 0), SHP, 0, "concat:", "[2,3]", "[3]");
  g = fresh(); /* the third operand is the bad one */
  xs[0] = IN(g, "a", 1, 2, 4, 4);
  xs[1] = IN(g, "b", 1, 3, 4, 4);
  xs[2] = IN(g, "c", 1, 3, 4, 5);
  EXPECT_FAIL(g, fuse_concat(g, 3, xs, 1), SHP, 0, "concat:", "[1,3,4,5]");
  g = fresh();
  xs[0] = g_x0;
  EXPECT_FAIL(g, fuse_concat(g, 0, xs, 0), INV, 0, "concat:");
  g = fresh();
  xs[0] = g_x0;
  EXPECT_FAIL(g, fuse_concat(g, -1, xs, 0), INV, 0, "concat:");
  g = fresh();
  EXPECT_FAIL(g, fuse_concat(g, 2, NULL, 0), INV, 0, "concat:");
  g = fresh();
  xs[0] = g_x0;
  xs[1] = FUSE_NONE;
  EXPECT_FAIL(g, fuse_concat(g, 2, xs, 0), INV, 0, "concat:");
  g = fresh();
  xs[0] = 4096;
  xs[1] = g_x0;
  EXPECT_FAIL(g, fuse_concat(g, 2, xs, 0), INV, 0, "concat:");
}

/* ------------------------------------------------------------ softmax -- */

TEST(softmax) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 3, 4), v = IN(g, "v", 10);
  CHECK_SHAPE(g, fuse_softmax(g, x, 0), 2, 3, 4);
  CHECK_SHAPE(g, fuse_softmax(g, x, 2), 2, 3, 4);
  CHECK_SHAPE(g, fuse_softmax(g, x, -1), 2, 3, 4);
  CHECK_SHAPE(g, fuse_softmax(g, x, -3), 2, 3, 4);
  CHECK_SHAPE(g, fuse_softmax(g, v, 0), 10);
  CHECK_SHAPE(g, fuse_softmax(g, v, -1), 10);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);

  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_softmax(g, x, 3), INV, 0, "softmax:");
  g = fresh();
  x = IN(g, "a", 2, 3, 4);
  EXPECT_FAIL(g, fuse_softmax(g, x, -4), INV, 0, "softmax:");
  g = fresh();
  x = fuse_input(g, "a", 0, NULL);
  EXPECT_FAIL(g, fuse_softmax(g, x, 0), INV, SHP, "softmax:");
  g = fresh();
  EXPECT_FAIL(g, fuse_softmax(g, FUSE_NONE, 0), INV, 0, "softmax:");
}

/* --------------------------------------------------------- batch_norm -- */

TEST(batch_norm) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x2 = IN(g, "x2", 5, 3), x3 = IN(g, "x3", 2, 3, 7), x4 = IN(g, "x4", 1, 3, 4, 4);
  fuse_value s = CST(g, "s", 3), b = CST(g, "b", 3), m = CST(g, "m", 3), v = CST(g, "v", 3);
  fuse_value bad, x;
  CHECK_SHAPE(g, fuse_batch_norm(g, x2, s, b, m, v, 1e-5f), 5, 3);
  CHECK_SHAPE(g, fuse_batch_norm(g, x3, s, b, m, v, 1e-3f), 2, 3, 7);
  CHECK_SHAPE(g, fuse_batch_norm(g, x4, s, b, m, v, 0.0f), 1, 3, 4, 4);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);

#define BN_SETUP()                   \
  g = fresh();                       \
  x = IN(g, "a", 1, 3, 4, 4);        \
  s = CST(g, "s", 3);                \
  b = CST(g, "b", 3);                \
  m = CST(g, "m", 3);                \
  v = CST(g, "v", 3)
  BN_SETUP();
  bad = CST(g, "bad", 4);
  EXPECT_FAIL(g, fuse_batch_norm(g, x, bad, b, m, v, 1e-5f), SHP, 0, "batch_norm:", "[4]",
              "[1,3,4,4]");
  BN_SETUP();
  bad = CST(g, "bad", 4);
  EXPECT_FAIL(g, fuse_batch_norm(g, x, s, bad, m, v, 1e-5f), SHP, 0, "batch_norm:", "[4]");
  BN_SETUP();
  bad = CST(g, "bad", 2);
  EXPECT_FAIL(g, fuse_batch_norm(g, x, s, b, bad, v, 1e-5f), SHP, 0, "batch_norm:", "[2]");
  BN_SETUP();
  bad = CST(g, "bad", 3, 1);
  EXPECT_FAIL(g, fuse_batch_norm(g, x, s, b, m, bad, 1e-5f), SHP, 0, "batch_norm:", "[3,1]");
  BN_SETUP();
  bad = fuse_scalar(g, 1.0f);
  EXPECT_FAIL(g, fuse_batch_norm(g, x, s, b, m, bad, 1e-5f), SHP, 0, "batch_norm:");
  BN_SETUP();
  EXPECT_FAIL(g, fuse_batch_norm(g, x, s, b, m, v, -1e-5f), INV, 0, "batch_norm:");
  BN_SETUP();
  EXPECT_FAIL(g, fuse_batch_norm(g, x, s, b, m, v, NAN), INV, 0, "batch_norm:");
  BN_SETUP();
  EXPECT_FAIL(g, fuse_batch_norm(g, x, s, b, m, FUSE_NONE, 1e-5f), INV, 0, "batch_norm:");
  BN_SETUP();
  EXPECT_FAIL(g, fuse_batch_norm(g, x, 999, b, m, v, 1e-5f), INV, 0, "batch_norm:");
  BN_SETUP();
  bad = IN(g, "r1", 3);
  EXPECT_FAIL(g, fuse_batch_norm(g, bad, s, b, m, v, 1e-5f), SHP, INV, "batch_norm:", "[3]");
  BN_SETUP();
  bad = fuse_input(g, "r0", 0, NULL);
  EXPECT_FAIL(g, fuse_batch_norm(g, bad, s, b, m, v, 1e-5f), SHP, INV, "batch_norm:");
#undef BN_SETUP
}

/* -------------------------------------------------------------- pools -- */


TEST(pool_shapes) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 1, 3, 8, 8), x4 = IN(g, "x4", 1, 1, 4, 4), x5 = IN(g, "x5", 2, 3, 5, 5);
  fuse_value x6 = IN(g, "x6", 1, 2, 6, 6), x7 = IN(g, "x7", 1, 1, 7, 9);
  fuse_pool2d_attrs a;
  int avg;
  for (avg = 0; avg < 2; avg++) {
    fuse_value (*f)(fuse_graph *, fuse_value, const fuse_pool2d_attrs *) =
        avg ? fuse_avg_pool2d : fuse_max_pool2d;
    a = pool(2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0);
    CHECK_SHAPE(g, f(g, x, &a), 1, 3, 4, 4);
    a = pool(2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0); /* stride 0 = 1 */
    CHECK_SHAPE(g, f(g, x, &a), 1, 3, 7, 7);
    a = pool(3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0);
    CHECK_SHAPE(g, f(g, x, &a), 1, 3, 6, 6);
    a = pool(3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0);
    CHECK_SHAPE(g, f(g, x, &a), 1, 3, 4, 4);
    a = pool(3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0); /* ceil: last window starts in input */
    CHECK_SHAPE(g, f(g, x, &a), 1, 3, 5, 5);
    a = pool(2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0);
    CHECK_SHAPE(g, f(g, x4, &a), 1, 1, 2, 2);
    a = pool(2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0); /* ceil would give 3: PyTorch rule -> 2 */
    CHECK_SHAPE(g, f(g, x4, &a), 1, 1, 2, 2);
    a = pool(2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 1, 1); /* 5x5 k2 s2 ceil -> 3 */
    CHECK_SHAPE(g, f(g, x5, &a), 2, 3, 3, 3);
    a = pool(2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 1);
    CHECK_SHAPE(g, f(g, x5, &a), 2, 3, 2, 2);
    a = pool(3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1); /* 6x6 k3 s2 p1 ceil -> 4 */
    CHECK_SHAPE(g, f(g, x6, &a), 1, 2, 4, 4);
    /* asymmetric: H (8+1-2)/1+1 = 8; W floor (8+2-3)/2+1 = 4, ceil 5 but the 5th window
       would start at 8 >= W + left padding 0 -> 4 */
    a = pool(2, 3, 1, 2, 1, 0, 0, 2, 0, 0, 0, 0);
    CHECK_SHAPE(g, f(g, x, &a), 1, 3, 8, 4);
    a = pool(2, 3, 1, 2, 1, 0, 0, 2, 0, 0, 1, 0);
    CHECK_SHAPE(g, f(g, x, &a), 1, 3, 8, 4);
    /* 7x9, kernel [3, 2], strides [2, 4], padding t1 l1 b0 r1 */
    a = pool(3, 2, 2, 4, 1, 1, 0, 1, 0, 0, 0, 0); /* H (7+1-3)/2+1 = 3; W (9+2-2)/4+1 = 3 */
    CHECK_SHAPE(g, f(g, x7, &a), 1, 1, 3, 3);
    /* ceil: H ceil(2.5)+1 = 4, last start 6 < 7+1 keeps it; W ceil(2.25)+1 = 4, last start
       12 >= 9+1 drops it -> 3 (PyTorch gives [4, 3] for this case too) */
    a = pool(3, 2, 2, 4, 1, 1, 0, 1, 0, 0, 1, 0);
    CHECK_SHAPE(g, f(g, x7, &a), 1, 1, 4, 3);
    a = pool(8, 8, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    CHECK_SHAPE(g, f(g, x, &a), 1, 3, 1, 1);
    a = pool(1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    CHECK_SHAPE(g, f(g, x, &a), 1, 3, 8, 8);
  }
  /* max pool dilation */
  a = pool(3, 3, 1, 1, 0, 0, 0, 0, 2, 2, 0, 0); /* eff 5 -> 4 */
  CHECK_SHAPE(g, fuse_max_pool2d(g, x, &a), 1, 3, 4, 4);
  a = pool(2, 3, 2, 1, 1, 2, 1, 2, 3, 2, 0, 0); /* eff 4 x 5: H (8+2-4)/2+1 = 4, W (8+4-5)+1 = 8 */
  CHECK_SHAPE(g, fuse_max_pool2d(g, x, &a), 1, 3, 4, 8);
  a = pool(2, 2, 1, 1, 2, 2, 2, 2, 2, 2, 0, 0); /* padding 2 < eff 3 is fine */
  CHECK_SHAPE(g, fuse_max_pool2d(g, x, &a), 1, 3, 10, 10);
  a = pool(2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0); /* avg with explicit dilation 1 is fine */
  CHECK_SHAPE(g, fuse_avg_pool2d(g, x, &a), 1, 3, 7, 7);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(pool_errors) {
  int avg;
  for (avg = 0; avg < 2; avg++) {
    fuse_value (*f)(fuse_graph *, fuse_value, const fuse_pool2d_attrs *) =
        avg ? fuse_avg_pool2d : fuse_max_pool2d;
    const char *op = avg ? "avg_pool2d:" : "max_pool2d:";
    fuse_graph *g;
    fuse_value x;
    fuse_pool2d_attrs a;
#define POOL_CASE(c1, c2, ...)                    \
  g = fresh();                                    \
  x = IN(g, "a", 1, 3, 8, 8);                     \
  EXPECT_FAIL(g, f(g, x, &a), c1, c2, __VA_ARGS__)
    a = pool(0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    POOL_CASE(INV, 0, op);
    a = pool(2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    POOL_CASE(INV, 0, op);
    a = pool(-2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    POOL_CASE(INV, 0, op);
    a = pool(2, 2, -1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    POOL_CASE(INV, 0, op);
    a = pool(2, 2, 1, 1, 0, -1, 0, 0, 0, 0, 0, 0);
    POOL_CASE(INV, 0, op);
    a = pool(3, 3, 1, 1, 3, 0, 0, 0, 0, 0, 0, 0); /* padding == kernel */
    POOL_CASE(INV, 0, op);
    a = pool(3, 3, 1, 1, 0, 0, 0, 4, 0, 0, 0, 0);
    POOL_CASE(INV, 0, op);
    a = pool(2, 2, 1, 1, 0, 0, 2, 0, 0, 0, 0, 0);
    POOL_CASE(INV, 0, op);
    a = pool(2, 2, 1, 1, 0, 0, 0, 0, -1, 1, 0, 0);
    POOL_CASE(INV, 0, op);
    a = pool(9, 9, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0); /* output size < 1 */
    POOL_CASE(SHP, INV, op, "[1,3,8,8]");
    a = pool(9, 9, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0); /* (8-9)/2 floors to -1: C's truncation
                                                     toward 0 would wrongly give 1 */
    POOL_CASE(SHP, INV, op, "[1,3,8,8]");
    g = fresh(); /* not 4-D */
    x = IN(g, "a", 1, 3, 8);
    a = pool(2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    EXPECT_FAIL(g, f(g, x, &a), SHP, INV, op, "[1,3,8]");
    g = fresh();
    x = IN(g, "a", 1, 1, 3, 8, 8);
    EXPECT_FAIL(g, f(g, x, &a), SHP, INV, op, "[1,1,3,8,8]");
    g = fresh();
    EXPECT_FAIL(g, f(g, FUSE_NONE, &a), INV, 0, op);
    g = fresh();
    x = IN(g, "a", 1, 3, 8, 8);
    EXPECT_FAIL(g, f(g, x, NULL), INV, 0, op); /* kernel is required */
#undef POOL_CASE
  }
  {
    fuse_graph *g;
    fuse_value x;
    fuse_pool2d_attrs a;
    g = fresh(); /* max: padding must be < the dilated kernel 3 */
    x = IN(g, "a", 1, 3, 8, 8);
    a = pool(2, 2, 1, 1, 3, 0, 0, 0, 2, 2, 0, 0);
    EXPECT_FAIL(g, fuse_max_pool2d(g, x, &a), INV, 0, "max_pool2d:");
    g = fresh(); /* avg_pool2d refuses dilation 2 */
    x = IN(g, "a", 1, 3, 8, 8);
    a = pool(2, 2, 1, 1, 0, 0, 0, 0, 2, 2, 0, 0);
    EXPECT_FAIL(g, fuse_avg_pool2d(g, x, &a), INV, FUSE_ERROR_UNSUPPORTED, "avg_pool2d:");
    g = fresh();
    x = IN(g, "a", 1, 3, 8, 8);
    a = pool(2, 2, 1, 1, 0, 0, 0, 0, 1, 2, 0, 0);
    EXPECT_FAIL(g, fuse_avg_pool2d(g, x, &a), INV, FUSE_ERROR_UNSUPPORTED, "avg_pool2d:");
  }
}

TEST(global_avg_pool) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x4 = IN(g, "x4", 2, 3, 8, 5), x3 = IN(g, "x3", 2, 5, 7);
  fuse_value x5 = IN(g, "x5", 1, 2, 3, 4, 5);
  fuse_value x;
  CHECK_SHAPE(g, fuse_global_avg_pool2d(g, x4), 2, 3, 1, 1);
  CHECK_SHAPE(g, fuse_global_avg_pool2d(g, x3), 2, 5, 1);
  CHECK_SHAPE(g, fuse_global_avg_pool2d(g, x5), 1, 2, 1, 1, 1);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
  g = fresh();
  x = IN(g, "a", 2, 5);
  EXPECT_FAIL(g, fuse_global_avg_pool2d(g, x), SHP, INV, "global_avg_pool2d:", "[2,5]");
  g = fresh();
  x = IN(g, "a", 5);
  EXPECT_FAIL(g, fuse_global_avg_pool2d(g, x), SHP, INV, "global_avg_pool2d:", "[5]");
  g = fresh();
  EXPECT_FAIL(g, fuse_global_avg_pool2d(g, FUSE_NONE), INV, 0, "global_avg_pool2d:");
}

int main(void) {
  RUN(result_strings);
  RUN(null_graph);
  RUN(inputs_constants_scalars);
  RUN(input_constant_errors);
  RUN(accessors);
  RUN(output_errors);
  RUN(conv2d_shapes);
  RUN(conv2d_errors);
  RUN(matmul_shapes);
  RUN(matmul_errors);
  RUN(broadcast_shapes);
  RUN(broadcast_errors);
  RUN(unary_shapes);
  RUN(clip_errors);
  RUN(reshape_shapes);
  RUN(reshape_errors);
  RUN(flatten_shapes);
  RUN(flatten_errors);
  RUN(concat_shapes);
  RUN(concat_errors);
  RUN(softmax);
  RUN(batch_norm);
  RUN(pool_shapes);
  RUN(pool_errors);
  RUN(global_avg_pool);
  return runner_finish("graph");
}
