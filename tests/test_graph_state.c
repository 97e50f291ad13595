/* test_graph_state.c - a graph's state under bad use: a bad operand for every builder, the
   first error sticking, constants copied (NULL data, scalars), custom allocators, out-of-memory
   injection at every allocation, element counts that overflow. */
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

/* --------------------------------------- bad operands for every builder -- */

static fuse_value call_op(fuse_graph *g, int op, int pos, fuse_value bad, const char **name) {
  fuse_value x4 = IN(g, "x4", 1, 3, 8, 8), w = CST(g, "w", 4, 3, 3, 3);
  fuse_value a = IN(g, "a", 2, 3), s = CST(g, "s", 3);
  fuse_value ops[5];
  fuse_pool2d_attrs pa = pool(2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  int i;
  for (i = 0; i < 5; i++) ops[i] = i == pos ? bad : (i == 0 ? x4 : s);
  switch (op) {
  case 0: *name = "conv2d:"; return fuse_conv2d(g, pos == 0 ? bad : x4, pos == 1 ? bad : w, NULL);
  case 1: *name = "matmul:"; return fuse_matmul(g, pos == 0 ? bad : a, pos == 1 ? bad : s);
  case 2: *name = "add:"; return fuse_add(g, pos == 0 ? bad : a, pos == 1 ? bad : a);
  case 3: *name = "sub:"; return fuse_sub(g, pos == 0 ? bad : a, pos == 1 ? bad : a);
  case 4: *name = "mul:"; return fuse_mul(g, pos == 0 ? bad : a, pos == 1 ? bad : a);
  case 5: *name = "maximum:"; return fuse_maximum(g, pos == 0 ? bad : a, pos == 1 ? bad : a);
  case 6: *name = "minimum:"; return fuse_minimum(g, pos == 0 ? bad : a, pos == 1 ? bad : a);
  case 7: *name = "relu:"; return fuse_relu(g, bad);
  case 8: *name = "clip:"; return fuse_clip(g, bad, 0.0f, 6.0f);
  case 9: *name = "sigmoid:"; return fuse_sigmoid(g, bad);
  case 10: *name = "reshape:"; return fuse_reshape(g, bad, 1, D(-1));
  case 11: *name = "flatten:"; return fuse_flatten(g, bad, 0);
  case 12: {
    fuse_value xs[3];
    xs[0] = a; xs[1] = a; xs[2] = a;
    xs[pos] = bad;
    *name = "concat:";
    return fuse_concat(g, 3, xs, 0);
  }
  case 13: *name = "softmax:"; return fuse_softmax(g, bad, 0);
  case 14: *name = "batch_norm:"; return fuse_batch_norm(g, ops[0], ops[1], ops[2], ops[3], ops[4], 1e-5f);
  case 15: *name = "max_pool2d:"; return fuse_max_pool2d(g, bad, &pa);
  case 16: *name = "avg_pool2d:"; return fuse_avg_pool2d(g, bad, &pa);
  default: *name = "global_avg_pool2d:"; return fuse_global_avg_pool2d(g, bad);
  }
}

TEST(bad_operands_every_builder) {
  static const int arity[18] = {2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 3, 1, 5, 1, 1, 1};
  const fuse_value bads[4] = {FUSE_NONE, 9999, -7, INT32_MAX};
  int op, pos, b;
  for (op = 0; op < 18; op++)
    for (pos = 0; pos < arity[op]; pos++)
      for (b = 0; b < 4; b++) {
        fuse_graph *g = fresh();
        const char *name = "?";
        fuse_value r = call_op(g, op, pos, bads[b], &name);
        CHECK_EQ_INT(fuse_graph_status(g) == FUSE_OK ? 0 : 1, 1);
        EXPECT_FAIL(g, r, INV, 0, name);
      }
  /* the same operands work when valid (sanity of call_op) */
  for (op = 0; op < 18; op++) {
    fuse_graph *g = fresh();
    const char *name = "?";
    fuse_value good = IN(g, "good", 1, 3, 4, 4);
    fuse_value r;
    if (op == 0 || op == 1 || op == 14 || op == 12 || (op >= 2 && op <= 6)) {
      fuse_graph_destroy(g);
      continue;
    }
    r = call_op(g, op, 0, good, &name);
    if (r == FUSE_NONE) failf(__LINE__, "op %s with a valid operand failed: %s", name,
                              fuse_graph_error(g));
    fuse_graph_destroy(g);
  }
}

/* ------------------------------------------------------------ stickiness -- */

TEST(sticky_first_error) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 1, 3, 8, 8), w = CST(g, "w", 8, 4, 3, 3), y;
  char first[1024];
  fuse_plan *plan = NULL;
  fuse_result r;
  y = fuse_relu(g, x);
  CHECK(y != FUSE_NONE);
  CHECK_EQ_INT(fuse_output(g, y), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  CHECK_EQ_INT(fuse_conv2d(g, x, w, NULL), FUSE_NONE); /* first error: SHAPE */
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_ERROR_SHAPE);
  strncpy(first, fuse_graph_error(g), sizeof first - 1);
  first[sizeof first - 1] = 0;
  CHECK_STR_CONTAINS(first, "conv2d");
  /* later failing calls of other kinds */
  CHECK_EQ_INT(fuse_clip(g, x, 2.0f, 1.0f), FUSE_NONE);
  CHECK_EQ_INT(fuse_input(g, "x", 1, D(3)), FUSE_NONE);
  CHECK_EQ_INT(fuse_input(g, "z", -1, D(3)), FUSE_NONE);
  CHECK_EQ_INT(fuse_relu(g, FUSE_NONE), FUSE_NONE);
  CHECK(fuse_output(g, FUSE_NONE) != FUSE_OK);
  /* and later valid calls */
  CHECK_EQ_INT(fuse_relu(g, x), FUSE_NONE);
  CHECK_EQ_INT(fuse_scalar(g, 1.0f), FUSE_NONE);
  CHECK_EQ_INT(fuse_input(g, "fine", 1, D(3)), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_ERROR_SHAPE);
  CHECK(strcmp(fuse_graph_error(g), first) == 0);
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  CHECK_EQ_INT(fuse_graph_find(g, "fine"), FUSE_NONE);
  /* accessors still work on the valid part */
  CHECK_SHAPE(g, y, 1, 3, 8, 8);
  r = fuse_compile(g, NULL, &plan);
  CHECK_EQ_INT(r, FUSE_ERROR_SHAPE);
  if (r == FUSE_OK && plan) fuse_plan_destroy(plan);
  fuse_graph_destroy(g);

  /* first error INVALID_ARGUMENT, then a shape error: stays INVALID_ARGUMENT */
  g = fuse_graph_create(NULL);
  x = IN(g, "x", 2, 3);
  CHECK_EQ_INT(fuse_clip(g, x, 0.0f, NAN), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_ERROR_INVALID_ARGUMENT);
  strncpy(first, fuse_graph_error(g), sizeof first - 1);
  CHECK(strncmp(first, "clip:", 5) == 0);
  CHECK_EQ_INT(fuse_add(g, x, IN(g, "y", 4)), FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK(strcmp(fuse_graph_error(g), first) == 0);
  plan = NULL;
  r = fuse_compile(g, NULL, &plan);
  CHECK_EQ_INT(r, FUSE_ERROR_INVALID_ARGUMENT);
  if (r == FUSE_OK && plan) fuse_plan_destroy(plan);
  fuse_graph_destroy(g);
}

/* ------------------------------------------------------------ constants -- */

TEST(constants_copied) {
  fuse_graph *g = fuse_graph_create(NULL);
  float small[4] = {1, 2, 3, 4};
  float big[6] = {1, -2, 3, -4, 5, -6};
  const float want_small[4] = {1, 2, 3, 4}, want_big[6] = {1, -2, 3, -4, 5, -6};
  float ones_a[4] = {1, 1, 1, 1}, ones_b[6] = {1, 1, 1, 1, 1, 1};
  float out_a[4] = {0}, out_b[6] = {0};
  const float *in[2];
  float *out[2];
  fuse_value x, c, xb, cb;
  char *text;
  int i;
  x = IN(g, "x", 4);
  xb = IN(g, "xb", 2, 3);
  c = fuse_constant(g, "c", 1, D(4), small);
  cb = fuse_constant(g, "cb", 2, D(2, 3), big);
  fuse_output(g, fuse_mul(g, x, c));
  fuse_output(g, fuse_mul(g, xb, cb));
  for (i = 0; i < 4; i++) small[i] = 99;
  for (i = 0; i < 6; i++) big[i] = 99;
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  text = to_text(g);
  CHECK(text != NULL);
  CHECK_STR_CONTAINS(text, "%c: [4] = const{1, 2, 3, 4}");
  CHECK_STR_CONTAINS(text, "%cb: [2, 3] = const\n");
  free(text);
  in[0] = ones_a;
  in[1] = ones_b;
  out[0] = out_a;
  out[1] = out_b;
  CHECK_EQ_INT(run_graph(g, in, out), FUSE_OK);
  CHECK_NEAR_ARRAY(out_a, want_small, 4, 0);
  CHECK_NEAR_ARRAY(out_b, want_big, 6, 0);
  fuse_graph_destroy(g);
}

TEST(constant_null_data_and_scalar) {
  fuse_graph *g = fuse_graph_create(NULL);
  float xin[6] = {-1, 0.25f, 2, 0.75f, -3, 9};
  float o1[6], o2[6], o3[6];
  const float want1[6] = {-1, 0.25f, 2, 0.75f, -3, 9}; /* + zeros */
  const float want2[6] = {0.5f, 0.5f, 2, 0.75f, 0.5f, 9};
  const float want3[6] = {-2.5f, 0.625f, 5, 1.875f, -7.5f, 22.5f};
  const float *in[1];
  float *out[3];
  fuse_value x, z, s, t, c0;
  char *text;
  x = IN(g, "x", 2, 3);
  z = CST(g, "z", 2, 3); /* NULL data: zero-filled */
  s = fuse_scalar(g, 0.5f);
  t = fuse_scalar(g, 2.5f);
  c0 = fuse_constant(g, "c0", 1, D(2), NULL);
  CHECK_RANK0(g, s);
  CHECK_SHAPE(g, c0, 2);
  CHECK(s != t);
  CHECK(fuse_value_name(g, s) == NULL);
  CHECK_EQ_INT(fuse_graph_op_count(g), 0);
  fuse_output(g, fuse_add(g, x, z));
  fuse_output(g, fuse_maximum(g, x, s));
  fuse_output(g, fuse_mul(g, t, x));
  CHECK_EQ_INT(fuse_graph_op_count(g), 3);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  text = to_text(g);
  CHECK(text != NULL);
  CHECK_STR_CONTAINS(text, "%c0: [2] = const{0, 0}");
  CHECK_STR_CONTAINS(text, "maximum(%x, 0.5)");
  CHECK_STR_CONTAINS(text, "mul(2.5, %x)");
  free(text);
  in[0] = xin;
  out[0] = o1;
  out[1] = o2;
  out[2] = o3;
  CHECK_EQ_INT(run_graph(g, in, out), FUSE_OK);
  CHECK_NEAR_ARRAY(o1, want1, 6, 0);
  CHECK_NEAR_ARRAY(o2, want2, 6, 0);
  CHECK_NEAR_ARRAY(o3, want3, 6, 0);
  fuse_graph_destroy(g);
}

/* ----------------------------------------------------------- allocators -- */

#include "counting_alloc.h"

/* A graph with several ops, named values, constants with data, an error at the end. */
static fuse_graph *build_with(const fuse_allocator *al, int with_error, fuse_value *last) {
  fuse_graph *g = fuse_graph_create(al);
  float wdata[4 * 3 * 3 * 3], bdata[4] = {1, 2, 3, 4};
  fuse_conv2d_attrs ca = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  fuse_pool2d_attrs pa = pool(2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0);
  fuse_value x, w, b, y, r, parts[2];
  int i;
  for (i = 0; i < 108; i++) wdata[i] = (float)(i % 7) - 3;
  x = IN(g, "input.1", 1, 3, 8, 8);
  w = fuse_constant(g, "weight", 4, D(4, 3, 3, 3), wdata);
  b = fuse_constant(g, "bias", 1, D(4), bdata);
  y = fuse_conv2d(g, x, w, &ca);
  y = fuse_add(g, y, fuse_reshape(g, b, 4, D(1, 4, 1, 1)));
  y = fuse_relu(g, y);
  y = fuse_clip(g, y, 0.0f, 6.0f);
  y = fuse_maximum(g, y, fuse_scalar(g, 0.25f));
  y = fuse_max_pool2d(g, y, &pa);
  parts[0] = y;
  parts[1] = fuse_avg_pool2d(g, y, &pa);
  r = fuse_concat(g, 1, parts, 1);
  fuse_output(g, fuse_softmax(g, fuse_flatten(g, parts[1], 1), -1));
  fuse_output(g, r);
  for (i = 0; i < 40; i++) r = fuse_sigmoid(g, r); /* growth of internal arrays */
  fuse_output(g, r);
  if (with_error) r = fuse_add(g, x, IN(g, "other", 5));
  if (last) *last = r;
  return g;
}

TEST(custom_allocator) {
  counting_alloc c;
  fuse_allocator al;
  fuse_graph *g;
  fuse_value last;
  int with_error;
  for (with_error = 0; with_error < 2; with_error++) {
    memset(&c, 0, sizeof c);
    al.alloc = ca_alloc;
    al.free = ca_free;
    al.user = &c;
    g = build_with(&al, with_error, &last);
    CHECK(g != NULL);
    CHECK_EQ_INT(fuse_graph_status(g), with_error ? FUSE_ERROR_SHAPE : FUSE_OK);
    CHECK(with_error ? last == FUSE_NONE : last != FUSE_NONE);
    CHECK(c.allocs > 0);
    fuse_graph_destroy(g);
    CHECK_EQ_INT(c.frees, c.allocs);
    CHECK_EQ_INT(c.nlive, 0);
    CHECK_EQ_INT(c.bad_free, 0);
    CHECK_EQ_INT(c.bad_align, 0);
    CHECK_EQ_INT(c.bad_user, 0);
    ca_done(&c);
  }
  /* the graph's allocator also serves a plan compiled from it (or malloc does): balanced */
  {
    fuse_plan *plan = NULL;
    fuse_result r;
    memset(&c, 0, sizeof c);
    al.alloc = ca_alloc;
    al.free = ca_free;
    al.user = &c;
    g = build_with(&al, 0, &last);
    r = fuse_compile(g, NULL, &plan);
    CHECK_EQ_INT(r, FUSE_OK);
    fuse_graph_destroy(g);
    if (r == FUSE_OK && plan) fuse_plan_destroy(plan);
    CHECK_EQ_INT(c.frees, c.allocs);
    CHECK_EQ_INT(c.bad_free, 0);
    CHECK_EQ_INT(c.bad_align, 0);
    ca_done(&c);
  }
  /* an all-zero allocator means the default one */
  memset(&al, 0, sizeof al);
  g = build_with(&al, 0, &last);
  CHECK(g != NULL);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  fuse_graph_destroy(g);
}

TEST(out_of_memory_injection) {
  counting_alloc c;
  fuse_allocator al;
  fuse_graph *g;
  fuse_value last;
  long total, k;
  int saw_oom = 0;
  memset(&c, 0, sizeof c);
  al.alloc = ca_alloc;
  al.free = ca_free;
  al.user = &c;
  g = build_with(&al, 0, &last);
  fuse_graph_destroy(g);
  total = c.calls;
  ca_done(&c);
  CHECK(total > 0);
  for (k = 1; k <= total; k++) {
    fuse_result st;
    memset(&c, 0, sizeof c);
    c.fail_at = k;
    g = build_with(&al, 0, &last);
    if (g) {
      st = fuse_graph_status(g);
      if (st != FUSE_OK && st != FUSE_ERROR_OUT_OF_MEMORY)
        failf(__LINE__, "allocation %ld refused: status %d (%s), want OK or OUT_OF_MEMORY", k,
              (int)st, fuse_graph_error(g));
      if (st == FUSE_ERROR_OUT_OF_MEMORY) {
        saw_oom = 1;
        if (last != FUSE_NONE) failf(__LINE__, "allocation %ld refused: last builder succeeded", k);
        if (!fuse_graph_error(g) || !fuse_graph_error(g)[0])
          failf(__LINE__, "allocation %ld refused: empty message", k);
      }
      if (st == FUSE_OK && last == FUSE_NONE)
        failf(__LINE__, "allocation %ld refused: FUSE_NONE with status OK", k);
      fuse_graph_destroy(g);
    }
    if (c.frees != c.allocs || c.bad_free)
      failf(__LINE__, "allocation %ld refused: %ld allocs, %ld frees, %ld bad frees", k, c.allocs,
            c.frees, c.bad_free);
    ca_done(&c);
  }
  CHECK(saw_oom);
}

/* Element counts that overflow 64 bits, also when a running product wraps to a small or zero
   value. Runs last: an implementation that multiplies in int64 without checks trips UBSan. */
TEST(element_count_overflow) {
  /* 2^62 elements (2^64 bytes), 2^64 elements, 2^65 elements */
  int64_t wrap1[3] = {(int64_t)1 << 23, (int64_t)1 << 23, (int64_t)1 << 16};
  int64_t wrap2[3] = {(int64_t)1 << 23, (int64_t)1 << 23, (int64_t)1 << 18};
  int64_t wrap3[5] = {(int64_t)1 << 16, (int64_t)1 << 16, (int64_t)1 << 16, (int64_t)1 << 16, 2};
  fuse_graph *g;
  fuse_value a, b;
  int k;
  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", 3, wrap1), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", 3, wrap2), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, fuse_input(g, "a", 5, wrap3), INV, 0, "input");
  g = fresh();
  EXPECT_FAIL(g, fuse_constant(g, "c", 3, wrap1, NULL), INV, 0, "const");
  for (k = 0; k < 5; k++) { /* a broadcast result of 2^80 elements */
    g = fresh();
    a = IN(g, "a", P20, P20, 1, 1);
    b = IN(g, "b", 1, 1, P20, P20);
    EXPECT_FAIL(g, binops[k](g, a, b), INV, SHP, binop_names[k]);
  }
  g = fresh(); /* matmul batch broadcast to 2^80 */
  a = IN(g, "a", P20, 1, P20, 1);
  b = IN(g, "b", P20, 1, P20);
  EXPECT_FAIL(g, fuse_matmul(g, a, b), INV, SHP, "matmul:");
  g = fresh(); /* the zero-filled constant whose count wraps to 0: last, it may trip UBSan */
  EXPECT_FAIL(g, fuse_constant(g, "c", 3, wrap2, NULL), INV, 0, "const");
}

int main(void) {
  RUN(bad_operands_every_builder);
  RUN(sticky_first_error);
  RUN(constants_copied);
  RUN(constant_null_data_and_scalar);
  RUN(custom_allocator);
  RUN(out_of_memory_injection);
  RUN(element_count_overflow);
  return runner_finish("graph_state");
}
