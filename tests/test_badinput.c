/* test_badinput.c - bad input to every public function, as a table.

   Each row is a name, a function that makes one bad call (on a fresh graph, plan or buffer),
   the fuse_result the call must return (or either of two), and a word its message must
   contain - the op, value or argument it is about. The function fills an outcome: the
   result, and the message the API left for it (fuse_graph_error, fuse_compile_options.error,
   fuse_epilogue.why, fuse_onnx_tensor.error). A row passes when

     - the result is the one the row wants (an error, never FUSE_OK unless the row says so),
     - the message is not empty and contains the row's word (case-sensitive), unless the
       function has no way to give one (marked "no message" below: fuse_run, the accessors,
       fuse_graph_write's callback check, ...; for accessors the result is
       FUSE_ERROR_INVALID_ARGUMENT when they returned their documented "bad argument" value),
     - nothing leaked: every graph and plan a row makes uses a counting allocator, which must
       be balanced afterwards (and `make test SANITIZE=1` runs the same under ASan/LSan).

   The ONNX reader's rows, and the committed network cut and bit-flipped: test_badinput_onnx.c.

   Usage: build/test_badinput [-v]   (run from the repository root; -v prints every row) */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include "counting_alloc.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "badinput_helpers.h"

/* ---- graph creation, status, results */

static void r_result_string(outcome *o) {
  const char *s = fuse_result_string((fuse_result)-99);
  o->r = INV;
  set_msg(o, s);
}
static void r_create_half_alloc(outcome *o) {
  fuse_allocator half = al;
  half.free = NULL;
  sentinel(o, fuse_graph_create(&half) == NULL);
}
static void r_status_null(outcome *o) {
  o->r = fuse_graph_status(NULL);
  set_msg(o, fuse_graph_error(NULL));
  fuse_graph_destroy(NULL); /* a no-op */
}

/* ---- inputs and constants */

static void r_input_null_graph(outcome *o) { sentinel(o, IN(NULL, "x", 2, 3) == FUSE_NONE); }
static void r_input_rank_neg(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_input(g, "x", -1, D(1)));
}
static void r_input_rank_9(outcome *o) {
  fuse_graph *g = G();
  built(o, g, IN(g, "x", 1, 1, 1, 1, 1, 1, 1, 1, 1));
}
static void r_input_rank_huge(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_input(g, "x", 0x7fffffff, D(1)));
}
static void r_input_shape_null(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_input(g, "x", 2, NULL));
}
static void r_input_dim_zero(outcome *o) {
  fuse_graph *g = G();
  built(o, g, IN(g, "x", 2, 0, 3));
}
static void r_input_dim_negative(outcome *o) {
  fuse_graph *g = G();
  built(o, g, IN(g, "x", 2, -3));
}
static void r_input_dim_int64_min(outcome *o) {
  fuse_graph *g = G();
  built(o, g, IN(g, "x", INT64_MIN, 2));
}
static void r_input_dim_2_31(outcome *o) {
  fuse_graph *g = G();
  built(o, g, IN(g, "x", (int64_t)1 << 31));
}
static void r_input_product_past_2_63(outcome *o) { /* 2^31-1 ^ 3 > 2^63; the product wraps */
  fuse_graph *g = G();
  built(o, g, IN(g, "x", 0x7fffffff, 0x7fffffff, 0x7fffffff));
}
static void r_input_product_wraps_to_zero(outcome *o) { /* 2^16 ^ 4 = 2^64 = 0 mod 2^64 */
  fuse_graph *g = G();
  built(o, g, IN(g, "x", 65536, 65536, 65536, 65536));
}
static void r_input_product_past_2_50_bytes(outcome *o) {
  fuse_graph *g = G();
  built(o, g, IN(g, "x", (int64_t)1 << 24, (int64_t)1 << 25));
}
static void r_input_empty_name(outcome *o) {
  fuse_graph *g = G();
  built(o, g, IN(g, "", 2));
}
static void r_input_duplicate_name(outcome *o) {
  fuse_graph *g = G();
  IN(g, "dup", 2);
  built(o, g, IN(g, "dup", 3));
}
static void r_constant_duplicate_of_input(outcome *o) {
  fuse_graph *g = G();
  IN(g, "w", 2);
  built(o, g, CST(g, "w", 2));
}
static void r_constant_rank_9(outcome *o) {
  fuse_graph *g = G();
  built(o, g, CST(g, "c", 1, 1, 1, 1, 1, 1, 1, 1, 1));
}
static void r_constant_dim_zero(outcome *o) {
  fuse_graph *g = G();
  built(o, g, CST(g, "c", 0));
}
static void r_constant_product_past_2_63(outcome *o) {
  fuse_graph *g = G();
  built(o, g, CST(g, "c", 0x7fffffff, 0x7fffffff, 0x7fffffff));
}
static void r_constant_too_big_to_allocate(outcome *o) { /* 2^40 floats: the allocator says no */
  fuse_graph *g = G();
  ca.fail_at = ca.calls + 2; /* the node array grows, then the data block is refused */
  built(o, g, CST(g, "c", (int64_t)1 << 20, (int64_t)1 << 20));
}
static void r_scalar_on_failed_graph(outcome *o) {
  fuse_graph *g = G();
  IN(g, "x", 0);
  built(o, g, fuse_scalar(g, 1.0f));
}

/* ---- outputs */

static void r_output_none(outcome *o) {
  fuse_graph *g = G();
  status(o, g, fuse_output(g, FUSE_NONE));
}
static void r_output_foreign_id(outcome *o) { /* an unreachable output: no such value */
  fuse_graph *g = G();
  x4(g);
  status(o, g, fuse_output(g, 12345));
}
static void r_output_negative_id(outcome *o) {
  fuse_graph *g = G();
  status(o, g, fuse_output(g, -7));
}
static void r_output_null_graph(outcome *o) { sentinel(o, fuse_output(NULL, 0) == INV); }

/* ---- conv2d */

static fuse_conv2d_attrs conv_attrs(int s, int p, int d, int groups) {
  fuse_conv2d_attrs a;
  memset(&a, 0, sizeof a);
  a.strides[0] = a.strides[1] = s;
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = p;
  a.dilation[0] = a.dilation[1] = d;
  a.groups = groups;
  return a;
}
static void conv_row(outcome *o, fuse_conv2d_attrs a, const int64_t *ws) {
  fuse_graph *g = G();
  fuse_value x = x4(g);
  built(o, g, fuse_conv2d(g, x, fuse_constant(g, "w", 4, ws, NULL), &a));
}
static void r_conv_x_none(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_conv2d(g, FUSE_NONE, CST(g, "w", 4, 3, 3, 3), NULL));
}
static void r_conv_w_foreign(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_conv2d(g, x4(g), 999, NULL));
}
static void r_conv_x_rank3(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_conv2d(g, IN(g, "x", 3, 8, 8), CST(g, "w", 4, 3, 3, 3), NULL));
}
static void r_conv_w_rank2(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_conv2d(g, x4(g), CST(g, "w", 4, 27), NULL));
}
static void r_conv_stride_neg(outcome *o) { conv_row(o, conv_attrs(-1, 0, 1, 1), D(4, 3, 3, 3)); }
static void r_conv_dilation_neg(outcome *o) { conv_row(o, conv_attrs(1, 0, -2, 1), D(4, 3, 3, 3)); }
static void r_conv_padding_neg(outcome *o) { conv_row(o, conv_attrs(1, -1, 1, 1), D(4, 3, 3, 3)); }
static void r_conv_groups_neg(outcome *o) { conv_row(o, conv_attrs(1, 0, 1, -3), D(4, 1, 3, 3)); }
static void r_conv_groups_not_dividing(outcome *o) {
  conv_row(o, conv_attrs(1, 0, 1, 3), D(4, 1, 3, 3)); /* 4 filters, 3 groups */
}
static void r_conv_channels_differ(outcome *o) { conv_row(o, conv_attrs(1, 0, 1, 1), D(4, 5, 3, 3)); }
static void r_conv_kernel_too_big(outcome *o) { conv_row(o, conv_attrs(1, 0, 1, 1), D(4, 3, 9, 9)); }
static void r_conv_dilation_huge(outcome *o) {
  conv_row(o, conv_attrs(1, 0, 0x7fffffff, 1), D(4, 3, 3, 3));
}
static void r_conv_padding_huge(outcome *o) { /* the output would have 2^32 rows */
  conv_row(o, conv_attrs(1, 0x7fffffff, 1, 1), D(4, 3, 1, 1));
}

/* ---- matmul, element-wise */

static void r_matmul_scalar(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_matmul(g, fuse_scalar(g, 2.0f), IN(g, "b", 3)));
}
static void r_matmul_inner(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_matmul(g, IN(g, "a", 2, 3), IN(g, "b", 4, 5)));
}
static void r_matmul_batch(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_matmul(g, IN(g, "a", 2, 2, 3), IN(g, "b", 3, 3, 5)));
}
static void r_matmul_batch_overflow(outcome *o) { /* batch broadcast to 2^80 */
  fuse_graph *g = G();
  fuse_value a = IN(g, "a", 1 << 20, 1, 1 << 20, 1);
  built(o, g, fuse_matmul(g, a, IN(g, "b", 1 << 20, 1, 1 << 20)));
}
static void r_matmul_none(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_matmul(g, IN(g, "a", 2, 3), FUSE_NONE));
}
static void r_add_no_broadcast(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_add(g, IN(g, "a", 2, 3), IN(g, "b", 4)));
}
static void r_sub_overflow(outcome *o) { /* [2^20,2^20,1,1] - [1,1,2^20,2^20]: 2^80 elements */
  fuse_graph *g = G();
  fuse_value a = IN(g, "a", 1 << 20, 1 << 20, 1, 1);
  built(o, g, fuse_sub(g, a, IN(g, "b", 1, 1, 1 << 20, 1 << 20)));
}
static void r_mul_none(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_mul(g, FUSE_NONE, IN(g, "a", 2)));
}
static void r_maximum_foreign(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_maximum(g, IN(g, "a", 2), 0x7fffffff));
}
static void r_minimum_negative_id(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_minimum(g, -5, IN(g, "a", 2)));
}
static void r_relu_none(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_relu(g, FUSE_NONE));
}
static void r_sigmoid_foreign(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_sigmoid(g, 3));
}

/* ---- clip */

static void clip_row(outcome *o, float lo, float hi) {
  fuse_graph *g = G();
  built(o, g, fuse_clip(g, IN(g, "x", 4), lo, hi));
}
static void r_clip_reversed(outcome *o) { clip_row(o, 1.0f, -1.0f); }
static void r_clip_nan_lo(outcome *o) { clip_row(o, (float)NAN, 1.0f); }
static void r_clip_nan_hi(outcome *o) { clip_row(o, 0.0f, (float)NAN); }
static void r_clip_inf_reversed(outcome *o) { clip_row(o, (float)INFINITY, -(float)INFINITY); }
static void r_clip_none(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_clip(g, FUSE_NONE, 0.0f, 6.0f));
}

/* ---- reshape, flatten, transpose */

static void reshape_row(outcome *o, int rank, const int64_t *shape) {
  fuse_graph *g = G();
  built(o, g, fuse_reshape(g, IN(g, "x", 2, 3, 4), rank, shape));
}
static void r_reshape_rank_9(outcome *o) { reshape_row(o, 9, D(24, 1, 1, 1, 1, 1, 1, 1, 1)); }
static void r_reshape_rank_neg(outcome *o) { reshape_row(o, -1, D(24)); }
static void r_reshape_shape_null(outcome *o) { reshape_row(o, 2, NULL); }
static void r_reshape_two_infer(outcome *o) { reshape_row(o, 3, D(-1, -1, 2)); }
static void r_reshape_zero(outcome *o) { reshape_row(o, 2, D(0, 24)); }
static void r_reshape_minus_two(outcome *o) { reshape_row(o, 2, D(-2, -12)); }
static void r_reshape_count(outcome *o) { reshape_row(o, 2, D(5, 5)); }
static void r_reshape_infer_no_fit(outcome *o) { reshape_row(o, 2, D(-1, 5)); }
static void r_reshape_product_past_2_63(outcome *o) {
  reshape_row(o, 3, D(0x7fffffff, 0x7fffffff, 0x7fffffff));
}
static void r_flatten_axis_high(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_flatten(g, IN(g, "x", 2, 3, 4), 4));
}
static void r_flatten_axis_low(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_flatten(g, IN(g, "x", 2, 3, 4), -4));
}
static void r_flatten_axis_int_min(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_flatten(g, IN(g, "x", 2, 3, 4), -0x7fffffff - 1));
}
static void transpose_row(outcome *o, const int *perm) {
  fuse_graph *g = G();
  built(o, g, fuse_transpose(g, IN(g, "x", 2, 3, 4), perm));
}
static void r_transpose_duplicate(outcome *o) {
  static const int perm[3] = {0, 0, 1};
  transpose_row(o, perm);
}
static void r_transpose_out_of_range(outcome *o) {
  static const int perm[3] = {0, 1, 3};
  transpose_row(o, perm);
}
static void r_transpose_negative(outcome *o) {
  static const int perm[3] = {-1, 0, 1};
  transpose_row(o, perm);
}
static void r_transpose_none(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_transpose(g, FUSE_NONE, NULL));
}

/* ---- concat, softmax, batch_norm */

static void r_concat_zero(outcome *o) {
  fuse_graph *g = G();
  fuse_value x = IN(g, "x", 2, 3);
  built(o, g, fuse_concat(g, 0, &x, 0));
}
static void r_concat_negative_n(outcome *o) {
  fuse_graph *g = G();
  fuse_value x = IN(g, "x", 2, 3);
  built(o, g, fuse_concat(g, -1, &x, 0));
}
static void r_concat_xs_null(outcome *o) {
  fuse_graph *g = G();
  IN(g, "x", 2, 3);
  built(o, g, fuse_concat(g, 2, NULL, 0));
}
static void r_concat_rank_differs(outcome *o) {
  fuse_graph *g = G();
  fuse_value xs[2];
  xs[0] = IN(g, "a", 2, 3);
  xs[1] = IN(g, "b", 2, 3, 1);
  built(o, g, fuse_concat(g, 2, xs, 0));
}
static void r_concat_dims_differ(outcome *o) {
  fuse_graph *g = G();
  fuse_value xs[2];
  xs[0] = IN(g, "a", 2, 3);
  xs[1] = IN(g, "b", 2, 4);
  built(o, g, fuse_concat(g, 2, xs, 0));
}
static void r_concat_axis(outcome *o) {
  fuse_graph *g = G();
  fuse_value xs[2];
  xs[0] = xs[1] = IN(g, "a", 2, 3);
  built(o, g, fuse_concat(g, 2, xs, 2));
}
static void r_concat_scalar(outcome *o) {
  fuse_graph *g = G();
  fuse_value xs[2];
  xs[0] = xs[1] = fuse_scalar(g, 1.0f);
  built(o, g, fuse_concat(g, 2, xs, 0));
}
static void r_concat_sum_past_2_31(outcome *o) { /* 3 x 2^30 rows: the axis dim overflows */
  fuse_graph *g = G();
  fuse_value xs[3];
  xs[0] = xs[1] = xs[2] = IN(g, "a", (int64_t)1 << 30);
  built(o, g, fuse_concat(g, 3, xs, 0));
}
static void r_concat_none(outcome *o) {
  fuse_graph *g = G();
  fuse_value xs[2];
  xs[0] = IN(g, "a", 2);
  xs[1] = FUSE_NONE;
  built(o, g, fuse_concat(g, 2, xs, 0));
}
static void r_softmax_axis(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_softmax(g, IN(g, "x", 2, 3), 2));
}
static void r_softmax_scalar(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_softmax(g, fuse_scalar(g, 1.0f), 0));
}
static void bn_row(outcome *o, int x_rank, int64_t param_len, float eps) {
  fuse_graph *g = G();
  fuse_value x = x_rank == 4 ? x4(g) : IN(g, "x", 3);
  fuse_value p[4];
  int k;
  for (k = 0; k < 4; k++) p[k] = fuse_constant(g, NULL, 1, &param_len, NULL);
  built(o, g, fuse_batch_norm(g, x, p[0], p[1], p[2], p[3], eps));
}
static void r_bn_rank1(outcome *o) { bn_row(o, 1, 3, 1e-5f); }
static void r_bn_param_shape(outcome *o) { bn_row(o, 4, 4, 1e-5f); }
static void r_bn_eps_nan(outcome *o) { bn_row(o, 4, 3, (float)NAN); }
static void r_bn_eps_negative(outcome *o) { bn_row(o, 4, 3, -1.0f); }
static void r_bn_eps_neg_inf(outcome *o) { bn_row(o, 4, 3, -(float)INFINITY); }
static void r_bn_none(outcome *o) {
  fuse_graph *g = G();
  fuse_value x = x4(g), c = CST(g, "c", 3);
  built(o, g, fuse_batch_norm(g, x, c, c, FUSE_NONE, c, 1e-5f));
}

/* ---- pools */

static fuse_pool2d_attrs pool_attrs(int k, int s, int p, int d) {
  fuse_pool2d_attrs a;
  memset(&a, 0, sizeof a);
  a.kernel[0] = a.kernel[1] = k;
  a.strides[0] = a.strides[1] = s;
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = p;
  a.dilation[0] = a.dilation[1] = d;
  return a;
}
static void pool_row(outcome *o, int avg, const fuse_pool2d_attrs *a) {
  fuse_graph *g = G();
  fuse_value x = x4(g);
  built(o, g, avg ? fuse_avg_pool2d(g, x, a) : fuse_max_pool2d(g, x, a));
}
static void r_maxpool_attrs_null(outcome *o) { pool_row(o, 0, NULL); }
static void r_avgpool_attrs_null(outcome *o) { pool_row(o, 1, NULL); }
static void r_maxpool_kernel_zero(outcome *o) {
  fuse_pool2d_attrs a = pool_attrs(0, 1, 0, 1);
  pool_row(o, 0, &a);
}
static void r_maxpool_stride_neg(outcome *o) {
  fuse_pool2d_attrs a = pool_attrs(2, -2, 0, 1);
  pool_row(o, 0, &a);
}
static void r_maxpool_padding_neg(outcome *o) {
  fuse_pool2d_attrs a = pool_attrs(2, 2, -1, 1);
  pool_row(o, 0, &a);
}
static void r_maxpool_padding_ge_kernel(outcome *o) {
  fuse_pool2d_attrs a = pool_attrs(2, 2, 2, 1);
  pool_row(o, 0, &a);
}
static void r_maxpool_kernel_too_big(outcome *o) {
  fuse_pool2d_attrs a = pool_attrs(9, 1, 0, 1);
  pool_row(o, 0, &a);
}
static void r_maxpool_rank2(outcome *o) { /* 3-D is a 1-D pool now */
  fuse_graph *g = G();
  fuse_pool2d_attrs a = pool_attrs(2, 2, 0, 1);
  built(o, g, fuse_max_pool2d(g, IN(g, "x", 8, 8), &a));
}
static void r_maxpool_huge_window(outcome *o) { /* kernel 2^31-1, padding below it: 2^32 rows */
  fuse_pool2d_attrs a = pool_attrs(0x7fffffff, 1, 0x7ffffffe, 1);
  pool_row(o, 0, &a);
}
static void r_maxpool_dilation_huge(outcome *o) {
  fuse_pool2d_attrs a = pool_attrs(2, 1, 0x7ffffffe, 0x7fffffff);
  pool_row(o, 0, &a);
}
static void r_avgpool_dilation(outcome *o) {
  fuse_pool2d_attrs a = pool_attrs(2, 2, 0, 2);
  pool_row(o, 1, &a);
}
static void r_avgpool_kernel_neg(outcome *o) {
  fuse_pool2d_attrs a = pool_attrs(-3, 1, 0, 1);
  pool_row(o, 1, &a);
}
static void r_global_pool_rank2(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_global_avg_pool2d(g, IN(g, "x", 2, 3)));
}
static void r_global_pool_none(outcome *o) {
  fuse_graph *g = G();
  built(o, g, fuse_global_avg_pool2d(g, FUSE_NONE));
}

/* ---- accessors and names (no message: they answer with -1 / NULL / FUSE_NONE / 0) */

static void r_value_rank_bad(outcome *o) {
  fuse_graph *g = G();
  x4(g);
  sentinel(o, fuse_value_rank(g, FUSE_NONE) == -1 && fuse_value_rank(g, 1) == -1 &&
                  fuse_value_rank(NULL, 0) == -1);
  fuse_graph_destroy(g);
}
static void r_value_shape_bad(outcome *o) {
  fuse_graph *g = G();
  x4(g);
  sentinel(o, !fuse_value_shape(g, FUSE_NONE) && !fuse_value_shape(g, 99) &&
                  !fuse_value_shape(NULL, 0));
  fuse_graph_destroy(g);
}
static void r_value_name_bad(outcome *o) {
  fuse_graph *g = G();
  x4(g);
  sentinel(o, !fuse_value_name(g, -3) && !fuse_value_name(g, 1) && !fuse_value_name(NULL, 0));
  fuse_graph_destroy(g);
}
static void r_graph_find_bad(outcome *o) {
  fuse_graph *g = G();
  x4(g);
  sentinel(o, fuse_graph_find(g, NULL) == FUSE_NONE && fuse_graph_find(NULL, "x") == FUSE_NONE &&
                  fuse_graph_find(g, "") == FUSE_NONE && fuse_graph_find(g, "y") == FUSE_NONE);
  fuse_graph_destroy(g);
}
static void r_counts_null(outcome *o) {
  sentinel(o, fuse_graph_op_count(NULL) == 0 && fuse_graph_input_count(NULL) == 0 &&
                  fuse_graph_output_count(NULL) == 0 && fuse_composite_count(NULL) == 0);
}
static void r_graph_input_index(outcome *o) {
  fuse_graph *g = G();
  x4(g);
  sentinel(o, fuse_graph_input(g, -1) == FUSE_NONE && fuse_graph_input(g, 1) == FUSE_NONE &&
                  fuse_graph_input(NULL, 0) == FUSE_NONE && fuse_graph_output(g, 0) == FUSE_NONE &&
                  fuse_graph_output(g, -0x7fffffff - 1) == FUSE_NONE);
  fuse_graph_destroy(g);
}
static void r_set_name_none(outcome *o) {
  fuse_graph *g = G();
  status(o, g, fuse_value_set_name(g, FUSE_NONE, "y"));
}
static void r_set_name_empty(outcome *o) {
  fuse_graph *g = G();
  fuse_value x = x4(g);
  status(o, g, fuse_value_set_name(g, fuse_relu(g, x), ""));
}
static void r_set_name_duplicate(outcome *o) {
  fuse_graph *g = G();
  fuse_value x = x4(g);
  status(o, g, fuse_value_set_name(g, fuse_relu(g, x), "x"));
}
static void r_set_name_null_graph(outcome *o) { sentinel(o, fuse_value_set_name(NULL, 0, "a") == INV); }

/* ---- text form */

static void sink(void *u, const char *t, size_t n) {
  (void)u;
  (void)t;
  (void)n;
}
static void r_write_null_graph(outcome *o) { sentinel(o, fuse_graph_write(NULL, sink, NULL) == INV); }
static void r_write_null_fn(outcome *o) {
  fuse_graph *g = G();
  x4(g);
  sentinel(o, fuse_graph_write(g, NULL, NULL) == INV);
  fuse_graph_destroy(g);
}
#ifndef FUSE_NO_STDIO
static void r_print_null_file(outcome *o) {
  fuse_graph *g = G();
  sentinel(o, fuse_graph_print(g, NULL) == INV && fuse_graph_print(NULL, stderr) == INV);
  fuse_graph_destroy(g);
}
#endif
static void parse_row(outcome *o, const char *text) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_graph_parse(text, &al, &g);
  if (!g) {
    o->r = r;
    set_msg(o, "(no graph)");
    return;
  }
  CHECK(fuse_graph_status(g) == r);
  status(o, g, r);
}
static void r_parse_null_text(outcome *o) { parse_row(o, NULL); }
static void r_parse_null_out(outcome *o) { sentinel(o, fuse_graph_parse("graph() {}", &al, NULL) == INV); }
static void r_parse_empty(outcome *o) { parse_row(o, ""); }
static void r_parse_cycle(outcome *o) { /* b is used before it is defined: no way to a cycle */
  parse_row(o, "graph(%x: [2]) {\n  %a = add(%x, %b)\n  %b = relu(%a)\n  return %b\n}\n");
}
static void r_parse_self_use(outcome *o) {
  parse_row(o, "graph(%x: [2]) {\n  %a = add(%x, %a)\n  return %a\n}\n");
}
static void r_parse_unknown_output(outcome *o) {
  parse_row(o, "graph(%x: [2]) {\n  %a = relu(%x)\n  return %nowhere\n}\n");
}
static void r_parse_duplicate_name(outcome *o) {
  parse_row(o, "graph(%x: [2]) {\n  %x = relu(%x)\n  return %x\n}\n");
}
static void r_parse_duplicate_input(outcome *o) {
  parse_row(o, "graph(%x: [2], %x: [3]) {\n  return %x\n}\n");
}
static void r_parse_rank_9(outcome *o) {
  parse_row(o, "graph(%x: [1, 1, 1, 1, 1, 1, 1, 1, 1]) {\n  return %x\n}\n");
}
static void r_parse_dim_zero(outcome *o) { parse_row(o, "graph(%x: [0, 3]) {\n  return %x\n}\n"); }
static void r_parse_dim_negative(outcome *o) { parse_row(o, "graph(%x: [-4]) {\n  return %x\n}\n"); }
static void r_parse_dims_overflow(outcome *o) {
  parse_row(o, "graph(%x: [4611686018427387904, 4]) {\n  return %x\n}\n");
}
static void r_parse_dim_past_int64(outcome *o) {
  parse_row(o, "graph(%x: [99999999999999999999999]) {\n  return %x\n}\n");
}
static void r_parse_clip_nan(outcome *o) {
  parse_row(o, "graph(%x: [2]) {\n  %a = clip(%x, lo=nan, hi=1)\n  return %a\n}\n");
}
static void r_parse_clip_reversed(outcome *o) {
  parse_row(o, "graph(%x: [2]) {\n  %a = clip(%x, lo=inf, hi=-inf)\n  return %a\n}\n");
}
static void r_parse_unknown_op(outcome *o) {
  parse_row(o, "graph(%x: [2]) {\n  %a = frobnicate(%x)\n  return %a\n}\n");
}
static void r_parse_bad_attr(outcome *o) {
  parse_row(o, "graph(%x: [1, 1, 4, 4], %w: [1, 1, 3, 3]) {\n"
               "  %a = conv2d(%x, %w, strides=[-1, 1])\n  return %a\n}\n");
}
static void r_parse_shape_mismatch(outcome *o) {
  parse_row(o, "graph(%x: [2, 3]) {\n  %a: [3, 2] = relu(%x)\n  return %a\n}\n");
}
static void r_parse_truncated(outcome *o) { parse_row(o, "graph(%x: [2]) {\n  %a = relu(%x"); }
static void r_parse_const_values_count(outcome *o) {
  parse_row(o, "graph() {\n  %c: [3] = const{1, 2}\n  return %c\n}\n");
}
static void set_constant_row(outcome *o, const char *name, const float *data, size_t n) {
  fuse_graph *g = G();
  IN(g, "x", 2);
  CST(g, "c", 3);
  status(o, g, fuse_graph_set_constant(g, name, data, n));
}
static const float three[3] = {1, 2, 3};
static void r_set_constant_null_name(outcome *o) { set_constant_row(o, NULL, three, 3); }
static void r_set_constant_null_data(outcome *o) { set_constant_row(o, "c", NULL, 3); }
static void r_set_constant_unknown(outcome *o) { set_constant_row(o, "nope", three, 3); }
static void r_set_constant_not_const(outcome *o) { set_constant_row(o, "x", three, 2); }
static void r_set_constant_count(outcome *o) { set_constant_row(o, "c", three, 2); }
static void r_set_constant_count_huge(outcome *o) { set_constant_row(o, "c", three, (size_t)-1); }
static void r_set_constant_null_graph(outcome *o) {
  sentinel(o, fuse_graph_set_constant(NULL, "c", three, 3) == INV);
}

/* ---- patterns and passes: a failing pass leaves the status OK and says why */

static fuse_graph *chain(void) { /* x (value 0) -> conv -> add(bias) -> relu */
  fuse_graph *g = G();
  fuse_value x = x4(g), w = CST(g, "w", 4, 3, 3, 3), y;
  y = fuse_conv2d(g, x, w, NULL);
  y = fuse_relu(g, fuse_add(g, y, CST(g, "b", 1, 4, 1, 1)));
  fuse_output(g, y);
  return g;
}
static void rules_row(outcome *o, const char *name, const char *pattern, int n) {
  fuse_graph *g = chain();
  fuse_rule r;
  r.name = name;
  r.pattern = pattern;
  r.check = NULL;
  r.user = NULL;
  status(o, g, fuse_ops_by_pattern(g, &r, n, NULL));
}
static void r_match_null(outcome *o) {
  sentinel(o, fuse_match_capture(NULL, "x") == FUSE_NONE && fuse_match_root(NULL) == FUSE_NONE);
}
static void r_rules_null_graph(outcome *o) {
  fuse_rule r = {"a.b", "relu(*)", NULL, NULL};
  sentinel(o, fuse_ops_by_pattern(NULL, &r, 1, NULL) == INV);
}
static void r_rules_negative_n(outcome *o) { rules_row(o, "a.b", "relu(*)", -1); }
static void r_rules_null_array(outcome *o) {
  fuse_graph *g = chain();
  status(o, g, fuse_ops_by_pattern(g, NULL, 2, NULL));
}
static void r_rules_no_name(outcome *o) { rules_row(o, NULL, "relu(*)", 1); }
static void r_rules_empty_name(outcome *o) { rules_row(o, "", "relu(*)", 1); }
static void r_rules_null_pattern(outcome *o) { rules_row(o, "a.relu", NULL, 1); }
static void r_rules_syntax(outcome *o) { rules_row(o, "a.relu", "relu(*", 1); }
static void r_rules_unknown_op(outcome *o) { rules_row(o, "a.frob", "frob(*)", 1); }
static void r_rules_bad_capture(outcome *o) { rules_row(o, "a.cap", "relu($)", 1); }
static void r_rules_deep(outcome *o) {
  static char p[4096];
  int i, n = 0;
  for (i = 0; i < 600; i++) n += sprintf(p + n, "relu(");
  p[n++] = '*';
  for (i = 0; i < 600; i++) p[n++] = ')';
  p[n] = 0;
  rules_row(o, "a.deep", p, 1);
}
static void r_passes_null(outcome *o) {
  sentinel(o, fuse_merge_composites(NULL) == INV && fuse_fold_batch_norm(NULL) == INV &&
                  fuse_optimize(NULL, "fuse") == INV);
}
static void r_rules_default_unknown(outcome *o) {
  const fuse_rule *r = (const fuse_rule *)&al; /* must be overwritten with NULL */
  sentinel(o, fuse_rules_default("bogus", &r) == 0 && r == NULL && fuse_rules_default("x", NULL) == 0);
}
static void r_optimize_unknown_codegen(outcome *o) {
  fuse_graph *g = chain();
  status(o, g, fuse_optimize(g, "bogus"));
}
static void r_optimize_failed_graph(outcome *o) {
  fuse_graph *g = chain();
  fuse_relu(g, FUSE_NONE);
  status(o, g, fuse_optimize(g, "fuse"));
}
static void r_merge_failed_graph(outcome *o) {
  fuse_graph *g = chain();
  IN(g, "x", 2); /* duplicate name */
  status(o, g, fuse_merge_composites(g));
}
static void r_fold_failed_graph(outcome *o) {
  fuse_graph *g = chain();
  fuse_clip(g, 0, 2.0f, 1.0f);
  status(o, g, fuse_fold_batch_norm(g));
}

/* ---- epilogue, composites */

static void epi_row(outcome *o, int which) {
  fuse_graph *g = chain();
  fuse_epilogue e;
  fuse_result r;
  if (which == 0) r = fuse_analyze_epilogue(g, FUSE_NONE, &e);
  else if (which == 1) r = fuse_analyze_epilogue(g, 0, &e);         /* the input x */
  else if (which == 2) r = fuse_analyze_epilogue(NULL, 3, &e);
  else r = fuse_analyze_epilogue(g, 9999, &e);
  o->r = r;
  set_msg(o, e.why);
  fuse_graph_destroy(g);
}
static void r_epilogue_none(outcome *o) { epi_row(o, 0); }
static void r_epilogue_not_a_chain(outcome *o) { epi_row(o, 1); }
static void r_epilogue_null_graph(outcome *o) { epi_row(o, 2); }
static void r_epilogue_foreign(outcome *o) { epi_row(o, 3); }
static void r_epilogue_null_out(outcome *o) {
  fuse_graph *g = chain();
  sentinel(o, fuse_analyze_epilogue(g, 3, NULL) == INV);
  fuse_graph_destroy(g);
}
static void r_composite_get_bad(outcome *o) {
  fuse_graph *g = chain();
  fuse_composite_info info;
  int ok = fuse_optimize(g, "fuse") == FUSE_OK && fuse_composite_count(g) == 1;
  ok = ok && fuse_composite_get(g, -1, &info) == INV && fuse_composite_get(g, 1, &info) == INV &&
       fuse_composite_get(g, 0, NULL) == INV && fuse_composite_get(NULL, 0, &info) == INV &&
       fuse_value_composite(g, -5) == -1 && fuse_value_composite(NULL, 0) == -1;
  sentinel(o, ok);
  fuse_graph_destroy(g);
}

/* ---- compile */

static char compile_msg[300];
static void compile_row(outcome *o, fuse_graph *g, fuse_isa isa, int null_out) {
  fuse_compile_options opt;
  fuse_plan *p = (fuse_plan *)&al; /* must be set to NULL */
  memset(&opt, 0, sizeof opt);
  opt.isa = isa;
  opt.error = compile_msg;
  opt.error_size = sizeof compile_msg;
  compile_msg[0] = 0;
  o->r = fuse_compile(g, &opt, null_out ? NULL : &p);
  if (!null_out && o->r != FUSE_OK && p != NULL) o->r = FUSE_OK; /* *out must be NULL */
  if (o->r == FUSE_OK && !null_out && p) fuse_plan_destroy(p);
  set_msg(o, compile_msg);
  fuse_graph_destroy(g);
}
static void r_compile_null_graph(outcome *o) { compile_row(o, NULL, FUSE_ISA_AUTO, 0); }
static void r_compile_null_out(outcome *o) { compile_row(o, chain(), FUSE_ISA_AUTO, 1); }
static void r_compile_failed_graph(outcome *o) {
  fuse_graph *g = chain();
  fuse_add(g, 0, IN(g, "y", 5, 5));
  compile_row(o, g, FUSE_ISA_AUTO, 0);
}
static void r_compile_no_outputs(outcome *o) {
  fuse_graph *g = G();
  fuse_relu(g, x4(g));
  compile_row(o, g, FUSE_ISA_AUTO, 0);
}
static void r_compile_isa_99(outcome *o) { compile_row(o, chain(), (fuse_isa)99, 0); }
static void r_compile_isa_negative(outcome *o) { compile_row(o, chain(), (fuse_isa)-1, 0); }
static void r_compile_isa_unsupported(outcome *o) {
  /* an ISA the CPU lacks: AVX-512 off x86-with-AVX-512, NEON there */
  fuse_isa best = fuse_cpu_isa();
  compile_row(o, chain(), best != FUSE_ISA_AVX512 ? FUSE_ISA_AVX512 : FUSE_ISA_NEON, 0);
}
static void r_compile_null_options_error(outcome *o) { /* no opt: still a clean error */
  fuse_plan *p = NULL;
  sentinel(o, fuse_compile(NULL, NULL, &p) == INV && p == NULL);
}

/* ---- run (no message: fuse_run only returns a code) */

static fuse_plan *small_plan(void) {
  fuse_graph *g = G();
  fuse_plan *p = NULL;
  fuse_value x = IN(g, "x", 2, 3);
  fuse_output(g, fuse_relu(g, x));
  fuse_output(g, fuse_sigmoid(g, x));
  fuse_compile(g, NULL, &p);
  fuse_graph_destroy(g);
  return p;
}
static float run_x[6], run_y0[6], run_y1[6];
static void run_row(outcome *o, int what) {
  fuse_plan *p = small_plan();
  const float *in[1], *in_null[1] = {NULL};
  float *out[2], *out_null[2];
  unsigned char *ws = (unsigned char *)malloc(fuse_plan_workspace_size(p) + 256), *al64;
  fuse_result r = FUSE_OK;
  in[0] = run_x;
  out[0] = run_y0;
  out[1] = run_y1;
  out_null[0] = run_y0;
  out_null[1] = NULL;
  al64 = ws + (64 - (uintptr_t)ws % 64) % 64;
  switch (what) {
  case 0: r = fuse_run(NULL, in, out, NULL); break;
  case 1: r = fuse_run(p, NULL, out, NULL); break;
  case 2: r = fuse_run(p, in, NULL, NULL); break;
  case 3: r = fuse_run(p, in_null, out, NULL); break;
  case 4: r = fuse_run(p, in, out_null, NULL); break;
  case 5: r = fuse_run(p, in, out, al64 + 4); break;
  case 6: r = fuse_run(p, in, out, al64 + 32); break;
  case 7: r = fuse_run_steps(p, in, out, al64, -1, 1); break;
  case 8: r = fuse_run_steps(p, in, out, al64, 0, -1); break;
  case 9: r = fuse_run_steps(p, in, out, al64, fuse_plan_step_count(p) + 1, 0); break;
  case 10: r = fuse_run_steps(p, in, out, al64, 0, fuse_plan_step_count(p) + 1); break;
  case 11: r = fuse_run_steps(p, in, out, al64, 1, 0x7fffffff); break;
  case 12: r = fuse_run_steps(p, in, out, al64, 0x7fffffff, 0x7fffffff); break;
  case 13: r = fuse_run_steps(NULL, in, out, al64, 0, 0); break;
  default:
    r = fuse_plan_workspace_size(NULL) == 0 && fuse_plan_step_count(NULL) == 0 &&
                fuse_plan_write(NULL, sink, NULL) == INV && fuse_plan_write(p, NULL, NULL) == INV
            ? INV
            : FUSE_OK;
    fuse_plan_destroy(NULL);
    break;
  }
  sentinel(o, 0);
  o->r = r;
  /* the plan still runs after the bad call */
  if (fuse_run(p, in, out, NULL) != FUSE_OK) o->r = FUSE_ERROR_BACKEND;
  free(ws);
  fuse_plan_destroy(p);
}
static void r_run_null_plan(outcome *o) { run_row(o, 0); }
static void r_run_null_inputs(outcome *o) { run_row(o, 1); }
static void r_run_null_outputs(outcome *o) { run_row(o, 2); }
static void r_run_null_input_entry(outcome *o) { run_row(o, 3); }
static void r_run_null_output_entry(outcome *o) { run_row(o, 4); }
static void r_run_misaligned_4(outcome *o) { run_row(o, 5); }
static void r_run_misaligned_32(outcome *o) { run_row(o, 6); }
static void r_steps_first_neg(outcome *o) { run_row(o, 7); }
static void r_steps_count_neg(outcome *o) { run_row(o, 8); }
static void r_steps_first_past(outcome *o) { run_row(o, 9); }
static void r_steps_count_past(outcome *o) { run_row(o, 10); }
static void r_steps_count_int_max(outcome *o) { run_row(o, 11); }
static void r_steps_both_int_max(outcome *o) { run_row(o, 12); }
static void r_steps_null_plan(outcome *o) { run_row(o, 13); }
static void r_plan_accessors_null(outcome *o) { run_row(o, 14); }

/* ------------------------------------------------------------------ the table -- */

static const row rows[] = {
    /* name                                     function                        result  or   word */
    {"result_string: out-of-range value",       r_result_string,                INV, 0, "unknown"},
    {"graph_create: alloc without free",        r_create_half_alloc,            INV, 0, NULL},
    {"graph_status / error: NULL graph",        r_status_null,                  INV, 0, "NULL"},
    {"input: NULL graph",                       r_input_null_graph,             INV, 0, NULL},
    {"input: rank -1",                          r_input_rank_neg,               INV, 0, "rank -1"},
    {"input: rank 9 > FUSE_MAX_RANK",           r_input_rank_9,                 INV, 0, "rank 9"},
    {"input: rank INT_MAX",                     r_input_rank_huge,              INV, 0, "rank 2147483647"},
    {"input: shape NULL",                       r_input_shape_null,             INV, 0, "NULL"},
    {"input: zero-sized dim",                   r_input_dim_zero,               INV, 0, "is 0"},
    {"input: negative dim",                     r_input_dim_negative,           INV, 0, "is -3"},
    {"input: dim INT64_MIN",                    r_input_dim_int64_min,          INV, 0, "input"},
    {"input: dim 2^31",                         r_input_dim_2_31,               INV, 0, "2147483648"},
    {"input: elements past 2^63",               r_input_product_past_2_63,      INV, 0, "too many"},
    {"input: elements wrap to 0 mod 2^64",      r_input_product_wraps_to_zero,  INV, 0, "too many"},
    {"input: bytes past 2^50",                  r_input_product_past_2_50_bytes,INV, 0, "2^50"},
    {"input: empty name",                       r_input_empty_name,             INV, 0, "empty"},
    {"input: duplicate name",                   r_input_duplicate_name,         INV, 0, "'dup'"},
    {"constant: name of an input",              r_constant_duplicate_of_input,  INV, 0, "'w'"},
    {"constant: rank 9",                        r_constant_rank_9,              INV, 0, "rank 9"},
    {"constant: zero-sized",                    r_constant_dim_zero,            INV, 0, "const"},
    {"constant: elements past 2^63",            r_constant_product_past_2_63,   INV, 0, "too many"},
    {"constant: 4 TB, allocation refused",      r_constant_too_big_to_allocate, OOM, 0, "const"},
    {"scalar: on a failed graph",               r_scalar_on_failed_graph,       INV, 0, "input"},
    {"output: FUSE_NONE",                       r_output_none,                  INV, 0, "FUSE_NONE"},
    {"output: id of no value",                  r_output_foreign_id,            INV, 0, "12345"},
    {"output: negative id",                     r_output_negative_id,           INV, 0, "-7"},
    {"output: NULL graph",                      r_output_null_graph,            INV, 0, NULL},
    {"conv2d: input FUSE_NONE",                 r_conv_x_none,                  INV, 0, "conv2d"},
    {"conv2d: weight id of no value",           r_conv_w_foreign,               INV, 0, "999"},
    {"conv2d: 3-D input",                       r_conv_x_rank3,                 SHP, 0, "conv2d"},
    {"conv2d: 2-D weight",                      r_conv_w_rank2,                 SHP, 0, "weight"},
    {"conv2d: negative stride",                 r_conv_stride_neg,              INV, 0, "strides"},
    {"conv2d: negative dilation",               r_conv_dilation_neg,            INV, 0, "dilation"},
    {"conv2d: negative padding",                r_conv_padding_neg,             INV, 0, "padding"},
    {"conv2d: negative groups",                 r_conv_groups_neg,              INV, 0, "groups"},
    {"conv2d: groups do not divide filters",    r_conv_groups_not_dividing,     SHP, 0, "groups=3"},
    {"conv2d: channels differ",                 r_conv_channels_differ,         SHP, 0, "channels"},
    {"conv2d: kernel larger than input",        r_conv_kernel_too_big,          SHP, 0, "kernel"},
    {"conv2d: dilation INT_MAX",                r_conv_dilation_huge,           SHP, 0, "dilation"},
    {"conv2d: padding INT_MAX (2^32 rows)",     r_conv_padding_huge,            INV, SHP, "conv2d"},
    {"matmul: scalar operand",                  r_matmul_scalar,                SHP, 0, "matmul"},
    {"matmul: inner dims differ",               r_matmul_inner,                 SHP, 0, "inner"},
    {"matmul: batch dims differ",               r_matmul_batch,                 SHP, 0, "batch"},
    {"matmul: batch broadcast past 2^63",       r_matmul_batch_overflow,        INV, SHP, "matmul"},
    {"matmul: FUSE_NONE operand",               r_matmul_none,                  INV, 0, "operand 2"},
    {"add: shapes do not broadcast",            r_add_no_broadcast,             SHP, 0, "add"},
    {"sub: broadcast past 2^63",                r_sub_overflow,                 INV, SHP, "sub"},
    {"mul: FUSE_NONE operand",                  r_mul_none,                     INV, 0, "mul"},
    {"maximum: id INT_MAX",                     r_maximum_foreign,              INV, 0, "maximum"},
    {"minimum: negative id",                    r_minimum_negative_id,          INV, 0, "minimum"},
    {"relu: FUSE_NONE",                         r_relu_none,                    INV, 0, "relu"},
    {"sigmoid: id of no value",                 r_sigmoid_foreign,              INV, 0, "sigmoid"},
    {"clip: lo > hi",                           r_clip_reversed,                INV, 0, "clip"},
    {"clip: lo NaN",                            r_clip_nan_lo,                  INV, 0, "lo=nan"},
    {"clip: hi NaN",                            r_clip_nan_hi,                  INV, 0, "hi=nan"},
    {"clip: lo +inf, hi -inf",                  r_clip_inf_reversed,            INV, 0, "lo=inf"},
    {"clip: FUSE_NONE",                         r_clip_none,                    INV, 0, "clip"},
    {"reshape: rank 9",                         r_reshape_rank_9,               INV, 0, "reshape"},
    {"reshape: rank -1",                        r_reshape_rank_neg,             INV, 0, "rank -1"},
    {"reshape: shape NULL",                     r_reshape_shape_null,           INV, 0, "NULL"},
    {"reshape: two -1",                         r_reshape_two_infer,            INV, 0, "reshape"},
    {"reshape: zero-sized dim",                 r_reshape_zero,                 INV, 0, "is 0"},
    {"reshape: dim -2",                         r_reshape_minus_two,            INV, 0, "is -2"},
    {"reshape: element count differs",          r_reshape_count,                SHP, 0, "cannot become"},
    {"reshape: -1 does not divide",             r_reshape_infer_no_fit,         SHP, 0, "cannot become"},
    {"reshape: dims past 2^63",                 r_reshape_product_past_2_63,    SHP, INV, "reshape"},
    {"flatten: axis rank + 1",                  r_flatten_axis_high,            INV, 0, "axis 4"},
    {"flatten: axis -rank - 1",                 r_flatten_axis_low,             INV, 0, "axis -4"},
    {"flatten: axis INT_MIN",                   r_flatten_axis_int_min,         INV, 0, "flatten"},
    {"transpose: repeated axis",                r_transpose_duplicate,          INV, 0, "perm"},
    {"transpose: axis past rank",               r_transpose_out_of_range,       INV, 0, "perm"},
    {"transpose: negative axis",                r_transpose_negative,           INV, 0, "perm"},
    {"transpose: FUSE_NONE",                    r_transpose_none,               INV, 0, "transpose"},
    {"concat: n = 0",                           r_concat_zero,                  INV, 0, "n=0"},
    {"concat: n = -1",                          r_concat_negative_n,            INV, 0, "n=-1"},
    {"concat: xs NULL",                         r_concat_xs_null,               INV, 0, "NULL"},
    {"concat: ranks differ",                    r_concat_rank_differs,          SHP, 0, "concat"},
    {"concat: dims differ off the axis",        r_concat_dims_differ,           SHP, 0, "operand 2"},
    {"concat: axis = rank",                     r_concat_axis,                  INV, 0, "axis 2"},
    {"concat: scalars",                         r_concat_scalar,                SHP, 0, "scalar"},
    {"concat: axis dim past 2^31",              r_concat_sum_past_2_31,         INV, 0, "concat"},
    {"concat: FUSE_NONE operand",               r_concat_none,                  INV, 0, "operand 2"},
    {"softmax: axis = rank",                    r_softmax_axis,                 INV, 0, "axis 2"},
    {"softmax: scalar",                         r_softmax_scalar,               SHP, 0, "softmax"},
    {"batch_norm: 1-D input",                   r_bn_rank1,                     SHP, 0, "batch_norm"},
    {"batch_norm: parameter of wrong length",   r_bn_param_shape,               SHP, 0, "scale"},
    {"batch_norm: eps NaN",                     r_bn_eps_nan,                   INV, 0, "eps=nan"},
    {"batch_norm: eps < 0",                     r_bn_eps_negative,              INV, 0, "eps=-1"},
    {"batch_norm: eps -inf",                    r_bn_eps_neg_inf,               INV, 0, "eps=-inf"},
    {"batch_norm: FUSE_NONE parameter",         r_bn_none,                      INV, 0, "operand 4"},
    {"max_pool2d: attrs NULL",                  r_maxpool_attrs_null,           INV, 0, "max_pool2d"},
    {"avg_pool2d: attrs NULL",                  r_avgpool_attrs_null,           INV, 0, "avg_pool2d"},
    {"max_pool2d: kernel 0",                    r_maxpool_kernel_zero,          INV, 0, "kernel"},
    {"max_pool2d: negative stride",             r_maxpool_stride_neg,           INV, 0, "strides"},
    {"max_pool2d: negative padding",            r_maxpool_padding_neg,          INV, 0, "padding"},
    {"max_pool2d: padding >= kernel",           r_maxpool_padding_ge_kernel,    INV, 0, "padding"},
    {"max_pool2d: kernel larger than input",    r_maxpool_kernel_too_big,       SHP, 0, "kernel"},
    {"max_pool2d: 2-D input",                   r_maxpool_rank2,                SHP, 0, "max_pool2d"},
    {"max_pool2d: kernel INT_MAX (2^32 rows)",  r_maxpool_huge_window,          INV, SHP, "max_pool2d"},
    {"max_pool2d: dilation INT_MAX",            r_maxpool_dilation_huge,        INV, SHP, "max_pool2d"},
    {"avg_pool2d: dilation 2",                  r_avgpool_dilation,             UNS, 0, "dilation"},
    {"avg_pool2d: negative kernel",             r_avgpool_kernel_neg,           INV, 0, "kernel"},
    {"global_avg_pool2d: 2-D input",            r_global_pool_rank2,            SHP, 0, "global_avg_pool2d"},
    {"global_avg_pool2d: FUSE_NONE",            r_global_pool_none,             INV, 0, "global_avg_pool2d"},
    {"value_rank: bad values (no message)",     r_value_rank_bad,               INV, 0, NULL},
    {"value_shape: bad values (no message)",    r_value_shape_bad,              INV, 0, NULL},
    {"value_name: bad values (no message)",     r_value_name_bad,               INV, 0, NULL},
    {"graph_find: NULL / unknown (no message)", r_graph_find_bad,               INV, 0, NULL},
    {"counts: NULL graph (no message)",         r_counts_null,                  INV, 0, NULL},
    {"graph_input / output: bad index",         r_graph_input_index,            INV, 0, NULL},
    {"value_set_name: FUSE_NONE",               r_set_name_none,                INV, 0, "set_name"},
    {"value_set_name: empty name",              r_set_name_empty,               INV, 0, "empty"},
    {"value_set_name: name taken",              r_set_name_duplicate,           INV, 0, "'x'"},
    {"value_set_name: NULL graph",              r_set_name_null_graph,          INV, 0, NULL},
    {"graph_write: NULL graph (no message)",    r_write_null_graph,             INV, 0, NULL},
    {"graph_write: NULL callback (no message)", r_write_null_fn,                INV, 0, NULL},
#ifndef FUSE_NO_STDIO
    {"graph_print: NULL file / graph",          r_print_null_file,              INV, 0, NULL},
#endif
    {"parse: text NULL",                        r_parse_null_text,              INV, 0, "NULL"},
    {"parse: out NULL",                         r_parse_null_out,               INV, 0, NULL},
    {"parse: empty text",                       r_parse_empty,                  PRS, 0, "line 1"},
    {"parse: use before definition (cycle)",    r_parse_cycle,                  PRS, 0, "%b"},
    {"parse: value uses itself",                r_parse_self_use,               PRS, 0, "%a"},
    {"parse: return of an unknown value",       r_parse_unknown_output,         PRS, 0, "%nowhere"},
    {"parse: op result named like an input",    r_parse_duplicate_name,         PRS, INV, "x"},
    {"parse: two inputs of one name",           r_parse_duplicate_input,        PRS, INV, "x"},
    {"parse: rank 9",                           r_parse_rank_9,                 PRS, INV, "line 1"},
    {"parse: zero-sized dim",                   r_parse_dim_zero,               PRS, INV, "line 1"},
    {"parse: negative dim",                     r_parse_dim_negative,           PRS, INV, "line 1"},
    {"parse: dims past 2^63",                   r_parse_dims_overflow,          PRS, INV, "line 1"},
    {"parse: dim past INT64_MAX",               r_parse_dim_past_int64,         PRS, INV, "line 1"},
    {"parse: clip lo=nan",                      r_parse_clip_nan,               PRS, INV, "clip"},
    {"parse: clip lo=inf hi=-inf",              r_parse_clip_reversed,          PRS, INV, "clip"},
    {"parse: unknown op",                       r_parse_unknown_op,             PRS, 0, "frobnicate"},
    {"parse: negative stride",                  r_parse_bad_attr,               PRS, INV, "strides"},
    {"parse: annotated shape differs",          r_parse_shape_mismatch,         PRS, SHP, "line 2"},
    {"parse: text ends inside an op",           r_parse_truncated,              PRS, 0, "line 2"},
    {"parse: const with too few values",        r_parse_const_values_count,     PRS, SHP, "line 2"},
    {"set_constant: name NULL",                 r_set_constant_null_name,       INV, 0, "name"},
    {"set_constant: data NULL",                 r_set_constant_null_data,       INV, 0, "data"},
    {"set_constant: unknown name",              r_set_constant_unknown,         INV, 0, "'nope'"},
    {"set_constant: not a constant",            r_set_constant_not_const,       INV, 0, "'x'"},
    {"set_constant: wrong count",               r_set_constant_count,           SHP, 0, "'c'"},
    {"set_constant: count SIZE_MAX",            r_set_constant_count_huge,      SHP, 0, "'c'"},
    {"set_constant: NULL graph",                r_set_constant_null_graph,      INV, 0, NULL},
    {"match_capture / root: NULL match",        r_match_null,                   INV, 0, NULL},
    {"ops_by_pattern: NULL graph",              r_rules_null_graph,             INV, 0, NULL},
    {"ops_by_pattern: n = -1",                  r_rules_negative_n,             INV, 0, "-1 rules"},
    {"ops_by_pattern: rules NULL",              r_rules_null_array,             INV, 0, "NULL"},
    {"ops_by_pattern: rule name NULL",          r_rules_no_name,                INV, 0, "rule 0"},
    {"ops_by_pattern: rule name empty",         r_rules_empty_name,             INV, 0, "rule 0"},
    {"ops_by_pattern: pattern NULL",            r_rules_null_pattern,           PRS, INV, "a.relu"},
    {"ops_by_pattern: unclosed pattern",        r_rules_syntax,                 PRS, 0, "a.relu"},
    {"ops_by_pattern: unknown op",              r_rules_unknown_op,             PRS, 0, "frob"},
    {"ops_by_pattern: '$' without a name",      r_rules_bad_capture,            PRS, 0, "a.cap"},
    {"ops_by_pattern: nesting 600 deep",        r_rules_deep,                   PRS, 0, "a.deep"},
    {"merge / fold / optimize: NULL graph",     r_passes_null,                  INV, 0, NULL},
    {"rules_default: unknown codegen",          r_rules_default_unknown,        INV, 0, NULL},
    {"optimize: unknown codegen",               r_optimize_unknown_codegen,     UNS, 0, "'bogus'"},
    {"optimize: on a failed graph",             r_optimize_failed_graph,        INV, 0, "relu"},
    {"merge_composites: on a failed graph",     r_merge_failed_graph,           INV, 0, "'x'"},
    {"fold_batch_norm: on a failed graph",      r_fold_failed_graph,            INV, 0, "clip"},
    {"analyze_epilogue: root FUSE_NONE",        r_epilogue_none,                INV, 0, "-1"},
    {"analyze_epilogue: root is an input",      r_epilogue_not_a_chain,         UNS, 0, "'x'"},
    {"analyze_epilogue: NULL graph",            r_epilogue_null_graph,          INV, 0, "3"},
    {"analyze_epilogue: id of no value",        r_epilogue_foreign,             INV, 0, "9999"},
    {"analyze_epilogue: out NULL",              r_epilogue_null_out,            INV, 0, NULL},
    {"composite_get / value_composite: bad",    r_composite_get_bad,            INV, 0, NULL},
    {"compile: NULL graph",                     r_compile_null_graph,           INV, 0, "graph"},
    {"compile: out NULL",                       r_compile_null_out,             INV, 0, "out"},
    {"compile: graph with an error",            r_compile_failed_graph,         SHP, 0, "add"},
    {"compile: no outputs",                     r_compile_no_outputs,           INV, 0, "outputs"},
    {"compile: isa 99",                         r_compile_isa_99,               INV, 0, "isa 99"},
    {"compile: isa -1",                         r_compile_isa_negative,         INV, 0, "isa -1"},
    {"compile: isa the CPU lacks",              r_compile_isa_unsupported,      UNS, INV, "isa"},
    {"compile: NULL graph, no options",         r_compile_null_options_error,   INV, 0, NULL},
    {"run: NULL plan",                          r_run_null_plan,                INV, 0, NULL},
    {"run: inputs NULL",                        r_run_null_inputs,              INV, 0, NULL},
    {"run: outputs NULL",                       r_run_null_outputs,             INV, 0, NULL},
    {"run: inputs[0] NULL",                     r_run_null_input_entry,         INV, 0, NULL},
    {"run: outputs[1] NULL",                    r_run_null_output_entry,        INV, 0, NULL},
    {"run: workspace 4 bytes off",              r_run_misaligned_4,             INV, 0, NULL},
    {"run: workspace 32 bytes off",             r_run_misaligned_32,            INV, 0, NULL},
    {"run_steps: first -1",                     r_steps_first_neg,              INV, 0, NULL},
    {"run_steps: count -1",                     r_steps_count_neg,              INV, 0, NULL},
    {"run_steps: first past the end",           r_steps_first_past,             INV, 0, NULL},
    {"run_steps: count past the end",           r_steps_count_past,             INV, 0, NULL},
    {"run_steps: count INT_MAX",                r_steps_count_int_max,          INV, 0, NULL},
    {"run_steps: first, count INT_MAX",         r_steps_both_int_max,           INV, 0, NULL},
    {"run_steps: NULL plan",                    r_steps_null_plan,              INV, 0, NULL},
    {"plan accessors: NULL plan / callback",    r_plan_accessors_null,          INV, 0, NULL},
};

#define NUM_ROWS ((int)(sizeof rows / sizeof rows[0]))

TEST(table) {
  CHECK_EQ_INT(run_table(rows, NUM_ROWS), 0);
}

int main(int argc, char **argv) {
  verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
  RUN(table);
  return runner_finish("badinput");
}
