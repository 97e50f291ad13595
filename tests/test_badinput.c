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

   After the table: the committed ONNX network tests/data/onnx/tinynet.onnx cut at every
   length - each must fail with a message, unless the cut falls between two top-level fields
   (a complete protobuf; only dropping the trailing opset_import does that) - and with single
   bits flipped: every bit of the model's header, of every 8th byte of the 32 nodes, of the
   first 32 bytes of each initializer and of the graph's inputs, outputs and opset at the end,
   and of one weight byte in 512 (13,712 flips, see flip_byte_wanted). Each flip must
   load or fail with a message; every 4th model that loads is also compiled, every 32nd run.
   Cuts within 4 KB of either end and every flip load an exact-size copy, so the sanitizers
   see any read past the end (built with them, half of the bits are flipped).

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

#define INV FUSE_ERROR_INVALID_ARGUMENT
#define SHP FUSE_ERROR_SHAPE
#define OOM FUSE_ERROR_OUT_OF_MEMORY
#define UNS FUSE_ERROR_UNSUPPORTED
#define PRS FUSE_ERROR_PARSE
#define EIO FUSE_ERROR_IO

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define IN(g, name, ...) fuse_input((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__))
#define CST(g, name, ...) fuse_constant((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__), NULL)

static int verbose;

/* Under AddressSanitizer (make test SANITIZE=1) the bit flips take every other bit of a
   byte (alternating which half from byte to byte), to keep the run short. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* ------------------------------------------------------------------ the rows -- */

typedef struct outcome {
  fuse_result r;   /* what the call returned */
  char msg[600];   /* the message it left, "" when none */
  int no_channel;  /* the function has no way to give a message */
} outcome;

typedef struct row {
  const char *name;
  void (*fn)(outcome *o);
  fuse_result want, want2; /* want2: 0, or a second acceptable result */
  const char *word;        /* the message must contain it */
} row;

static counting_alloc ca;
static fuse_allocator al; /* every graph a row makes uses it */

static fuse_graph *G(void) { return fuse_graph_create(&al); }

static void set_msg(outcome *o, const char *m) {
  size_t n = m ? strlen(m) : 0;
  if (n >= sizeof o->msg) n = sizeof o->msg - 1;
  if (n) memcpy(o->msg, m, n);
  o->msg[n] = 0;
}

/* A builder call that must fail: its result is FUSE_NONE, the graph's status and message say
   why. The graph is destroyed. */
static void built(outcome *o, fuse_graph *g, fuse_value v) {
  o->r = v == FUSE_NONE ? fuse_graph_status(g) : FUSE_OK;
  set_msg(o, fuse_graph_error(g));
  fuse_graph_destroy(g);
}

/* A call that returned a fuse_result on graph g (a builder-like status or a pass error). */
static void status(outcome *o, fuse_graph *g, fuse_result r) {
  o->r = r;
  set_msg(o, fuse_graph_error(g));
  fuse_graph_destroy(g);
}

/* A call without a message channel: `ok_if_bad` is whether it gave its "bad argument" answer. */
static void sentinel(outcome *o, int ok_if_bad) {
  o->no_channel = 1;
  o->r = ok_if_bad ? INV : FUSE_OK;
}

static fuse_value x4(fuse_graph *g) { return IN(g, "x", 1, 3, 8, 8); }

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

/* ---- ONNX: a tiny protobuf writer makes the models */

#ifndef FUSE_NO_ONNX
typedef struct pb {
  unsigned char d[2048];
  size_t n;
} pb;
static void pb_raw(pb *b, const void *p, size_t n) {
  if (b->n + n <= sizeof b->d) memcpy(b->d + b->n, p, n);
  b->n += n;
}
static void pb_varint(pb *b, uint64_t v) {
  unsigned char c;
  do {
    c = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) c |= 0x80;
    pb_raw(b, &c, 1);
  } while (v);
}
static void pb_int(pb *b, int field, int64_t v) {
  pb_varint(b, (uint64_t)field << 3);
  pb_varint(b, (uint64_t)v);
}
static void pb_float(pb *b, int field, float v) {
  unsigned char le[4];
  uint32_t u;
  memcpy(&u, &v, 4);
  le[0] = (unsigned char)u, le[1] = (unsigned char)(u >> 8), le[2] = (unsigned char)(u >> 16);
  le[3] = (unsigned char)(u >> 24);
  pb_varint(b, (uint64_t)field << 3 | 5);
  pb_raw(b, le, 4);
}
static void pb_bytes(pb *b, int field, const void *p, size_t n) {
  pb_varint(b, (uint64_t)field << 3 | 2);
  pb_varint(b, n);
  pb_raw(b, p, n);
}
static void pb_str(pb *b, int field, const char *s) { pb_bytes(b, field, s, strlen(s)); }
static void pb_sub(pb *b, int field, const pb *sub) { pb_bytes(b, field, sub->d, sub->n); }

/* ValueInfoProto: a float tensor with dims (rank < 0: no shape at all) */
static void pb_value_info(pb *graph, int field, const char *name, int rank, const int64_t *dims) {
  pb vi, type, tt, shape, dim;
  int i;
  memset(&vi, 0, sizeof vi);
  memset(&type, 0, sizeof type);
  memset(&tt, 0, sizeof tt);
  memset(&shape, 0, sizeof shape);
  pb_int(&tt, 1, 1); /* elem_type FLOAT */
  for (i = 0; i < rank; i++) {
    dim.n = 0;
    pb_int(&dim, 1, dims[i]);
    pb_sub(&shape, 1, &dim);
  }
  if (rank >= 0) pb_sub(&tt, 2, &shape);
  pb_sub(&type, 1, &tt);
  pb_str(&vi, 1, name);
  pb_sub(&vi, 2, &type);
  pb_sub(graph, field, &vi);
}
/* NodeProto with up to 3 inputs ("" = absent) and one output */
static void pb_node(pb *graph, const char *op, const char *in0, const char *in1, const char *in2,
                    const char *out, const pb *attr) {
  pb node;
  memset(&node, 0, sizeof node);
  if (in0) pb_str(&node, 1, in0);
  if (in1) pb_str(&node, 1, in1);
  if (in2) pb_str(&node, 1, in2);
  pb_str(&node, 2, out);
  pb_str(&node, 4, op);
  if (attr) pb_sub(&node, 5, attr);
  pb_sub(graph, 1, &node);
}
/* TensorProto: float dims, float_data values */
static void pb_tensor(pb *t, const char *name, int rank, const int64_t *dims, int count,
                      float value) {
  int i;
  memset(t, 0, sizeof *t);
  for (i = 0; i < rank; i++) pb_int(t, 1, dims[i]);
  pb_int(t, 2, 1);
  for (i = 0; i < count; i++) pb_float(t, 4, value);
  pb_str(t, 8, name);
}
static void onnx_row_bytes(outcome *o, const void *data, size_t n) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_onnx_load_memory(data, n, &al, &g);
  if (!g) {
    o->r = r;
    set_msg(o, "(no graph)");
    return;
  }
  status(o, g, r);
}
/* ModelProto around a graph: opset 13 */
static void onnx_row(outcome *o, const pb *graph) {
  static pb model, opset;
  memset(&model, 0, sizeof model);
  memset(&opset, 0, sizeof opset);
  pb_int(&model, 1, 7); /* ir_version */
  pb_str(&opset, 1, "");
  pb_int(&opset, 2, 13);
  pb_sub(&model, 8, &opset);
  pb_sub(&model, 7, graph);
  onnx_row_bytes(o, model.d, model.n);
}
static const int64_t d2[1] = {2};
static void r_onnx_cycle(outcome *o) { /* y = relu(y) */
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "y", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_two_node_cycle(outcome *o) { /* a = relu(b), b = relu(a) */
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "b", NULL, NULL, "a", NULL);
  pb_node(&g, "Relu", "a", NULL, NULL, "b", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "a", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_unreachable_output(outcome *o) { /* the output is made by no node */
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "nowhere", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_duplicate_output(outcome *o) { /* two nodes make "y" */
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_node(&g, "Sigmoid", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_duplicate_input(outcome *o) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_unknown_op(outcome *o) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Frobnicate", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_missing_input(outcome *o) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Add", "x", "ghost", NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void onnx_input_dims_row(outcome *o, int rank, const int64_t *dims) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", rank, dims);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_input_dim_zero(outcome *o) { onnx_input_dims_row(o, 2, D(0, 3)); }
static void r_onnx_input_dim_negative(outcome *o) { onnx_input_dims_row(o, 2, D(-5, 3)); }
static void r_onnx_input_dims_overflow(outcome *o) {
  onnx_input_dims_row(o, 3, D(0x7fffffff, 0x7fffffff, 0x7fffffff));
}
static void r_onnx_input_rank_9(outcome *o) { onnx_input_dims_row(o, 9, D(1, 1, 1, 1, 1, 1, 1, 1, 1)); }
static void r_onnx_input_no_shape(outcome *o) { onnx_input_dims_row(o, -1, NULL); }
static void r_onnx_initializer_overflow(outcome *o) { /* dims multiply past 2^63 */
  static pb g, t;
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "w", 3, D(0x7fffffff, 0x7fffffff, 0x7fffffff), 1, 1.0f);
  pb_sub(&g, 5, &t);
  pb_node(&g, "Add", "x", "w", NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_initializer_short(outcome *o) { /* [4] with 3 values */
  static pb g, t;
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "w", 1, D(4), 3, 1.0f);
  pb_sub(&g, 5, &t);
  pb_node(&g, "Add", "x", "w", NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, D(4));
  pb_value_info(&g, 12, "y", 1, D(4));
  onnx_row(o, &g);
}
static void onnx_clip_row(outcome *o, float lo, float hi) { /* Clip-11: min and max as inputs */
  static pb g, t;
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "lo", 0, NULL, 1, lo);
  pb_sub(&g, 5, &t);
  pb_tensor(&t, "hi", 0, NULL, 1, hi);
  pb_sub(&g, 5, &t);
  pb_node(&g, "Clip", "x", "lo", "hi", "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_clip_reversed(outcome *o) { /* not an error: ONNX gives max everywhere */
  static pb g, t;
  static const float x[2] = {-1.0f, 7.0f};
  float y[2] = {5, 5};
  const float *in[1];
  float *out[1];
  fuse_graph *graph = NULL;
  fuse_plan *p = NULL;
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "lo", 0, NULL, 1, 6.0f);
  pb_sub(&g, 5, &t);
  pb_tensor(&t, "hi", 0, NULL, 1, 0.0f);
  pb_sub(&g, 5, &t);
  pb_node(&g, "Clip", "x", "lo", "hi", "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g); /* loads (and frees) it once, for the result */
  if (o->r != FUSE_OK) return;
  {
    static pb model, opset;
    memset(&model, 0, sizeof model);
    memset(&opset, 0, sizeof opset);
    pb_int(&model, 1, 7);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 13);
    pb_sub(&model, 8, &opset);
    pb_sub(&model, 7, &g);
    fuse_onnx_load_memory(model.d, model.n, &al, &graph);
  }
  in[0] = x;
  out[0] = y;
  if (fuse_compile(graph, NULL, &p) != FUSE_OK || fuse_run(p, in, out, NULL) != FUSE_OK ||
      y[0] != 0.0f || y[1] != 0.0f)
    o->r = FUSE_ERROR_BACKEND;
  fuse_plan_destroy(p);
  fuse_graph_destroy(graph);
}
static void r_onnx_clip_nan(outcome *o) { onnx_clip_row(o, (float)NAN, 1.0f); }
static void r_onnx_conv_negative_pads(outcome *o) {
  static pb g, t, attr;
  int i;
  memset(&g, 0, sizeof g);
  memset(&attr, 0, sizeof attr);
  pb_tensor(&t, "w", 4, D(1, 1, 1, 1), 1, 1.0f);
  pb_sub(&g, 5, &t);
  pb_str(&attr, 1, "pads");
  for (i = 0; i < 4; i++) pb_int(&attr, 8, -1);
  pb_int(&attr, 20, 7); /* INTS */
  pb_node(&g, "Conv", "x", "w", NULL, "y", &attr);
  pb_value_info(&g, 11, "x", 4, D(1, 1, 4, 4));
  pb_value_info(&g, 12, "y", 4, D(1, 1, 4, 4));
  onnx_row(o, &g);
}
static void r_onnx_no_graph(outcome *o) {
  static const unsigned char model[2] = {0x08, 0x07}; /* ir_version only */
  onnx_row_bytes(o, model, sizeof model);
}
static void r_onnx_empty(outcome *o) {
  static const unsigned char nothing[1] = {0};
  onnx_row_bytes(o, nothing, 0);
}
static void r_onnx_garbage(outcome *o) {
  static const char text[] = "this is not a protobuf file at all";
  onnx_row_bytes(o, text, sizeof text - 1);
}
static void r_onnx_huge_length(outcome *o) { /* graph field whose length runs past the end */
  static const unsigned char model[12] = {0x3a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0};
  onnx_row_bytes(o, model, sizeof model);
}
static void r_onnx_null_data(outcome *o) { onnx_row_bytes(o, NULL, 10); }
static void r_onnx_null_out(outcome *o) {
  sentinel(o, fuse_onnx_load_memory("x", 1, &al, NULL) == INV);
}
#ifndef FUSE_NO_STDIO
static void r_onnx_file_null_path(outcome *o) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_onnx_load_file(NULL, &al, &g);
  if (!g) {
    o->r = r;
    return;
  }
  status(o, g, r);
}
static void r_onnx_file_missing(outcome *o) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_onnx_load_file("tests/data/onnx/no-such-file.onnx", &al, &g);
  if (!g) {
    o->r = r;
    return;
  }
  status(o, g, r);
}
static void r_onnx_file_directory(outcome *o) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_onnx_load_file("tests/data/onnx", &al, &g);
  if (!g) {
    o->r = r;
    return;
  }
  status(o, g, r);
}
static void r_onnx_file_half_allocator(outcome *o) {
  fuse_allocator half = al;
  fuse_graph *g = NULL;
  half.free = NULL;
  sentinel(o, fuse_onnx_load_file("tests/data/onnx/tinynet.onnx", &half, &g) == INV && g == NULL);
  fuse_graph_destroy(g);
}
#endif
static void tensor_row(outcome *o, const void *data, size_t n, int null_out) {
  fuse_onnx_tensor t;
  o->r = fuse_onnx_load_tensor(data, n, &al, null_out ? NULL : &t);
  if (null_out) {
    o->no_channel = 1;
    return;
  }
  set_msg(o, t.error);
  if (o->r == FUSE_OK) fuse_onnx_tensor_free(&t, &al);
  else if (t.data) o->r = FUSE_OK; /* a failed load must leave no data behind */
}
static void r_tensor_null(outcome *o) { tensor_row(o, NULL, 8, 0); }
static void r_tensor_null_out(outcome *o) { tensor_row(o, "x", 1, 1); }
static void r_tensor_garbage(outcome *o) { tensor_row(o, "\xff\xff\xff", 3, 0); }
static void r_tensor_dims_overflow(outcome *o) {
  pb t;
  pb_tensor(&t, "t", 3, D(0x7fffffff, 0x7fffffff, 0x7fffffff), 2, 1.0f);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_dim_zero(outcome *o) {
  pb t;
  pb_tensor(&t, "t", 2, D(3, 0), 0, 1.0f);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_short(outcome *o) {
  pb t;
  pb_tensor(&t, "t", 1, D(5), 4, 1.0f);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_rank_9(outcome *o) {
  pb t;
  pb_tensor(&t, "t", 9, D(1, 1, 1, 1, 1, 1, 1, 1, 1), 1, 1.0f);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_int64(outcome *o) {
  pb t;
  memset(&t, 0, sizeof t);
  pb_int(&t, 1, 2);
  pb_int(&t, 2, 7); /* INT64 */
  pb_int(&t, 7, 1);
  pb_int(&t, 7, 2);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_half_allocator(outcome *o) {
  fuse_allocator half = al;
  fuse_onnx_tensor t;
  pb tp;
  half.free = NULL;
  pb_tensor(&tp, "t", 1, D(2), 2, 1.0f);
  o->r = fuse_onnx_load_tensor(tp.d, tp.n, &half, &t);
  set_msg(o, t.error);
  if (o->r == FUSE_OK) fuse_onnx_tensor_free(&t, &al); /* the counting allocator's own free */
  fuse_onnx_tensor_free(NULL, &al);                  /* a no-op */
}
#endif

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
#ifndef FUSE_NO_ONNX
    {"onnx: node reads its own output (cycle)", r_onnx_cycle,                   PRS, INV, "y"},
    {"onnx: two nodes in a cycle",              r_onnx_two_node_cycle,          PRS, INV, "b"},
    {"onnx: output made by no node",            r_onnx_unreachable_output,      PRS, INV, "output 'nowhere'"},
    {"onnx: two nodes make one name",           r_onnx_duplicate_output,        PRS, INV, "already made"},
    {"onnx: input listed twice",                r_onnx_duplicate_input,         PRS, INV, "'x' is listed twice"},
    {"onnx: unknown op",                        r_onnx_unknown_op,              UNS, 0, "Frobnicate"},
    {"onnx: node input made by nothing",        r_onnx_missing_input,           PRS, INV, "ghost"},
    {"onnx: input dim 0",                       r_onnx_input_dim_zero,          UNS, INV, "x"},
    {"onnx: input dim -5",                      r_onnx_input_dim_negative,      PRS, INV, "negative"},
    {"onnx: input dims past 2^63",              r_onnx_input_dims_overflow,     PRS, INV, "'x'"},
    {"onnx: input rank 9",                      r_onnx_input_rank_9,            UNS, INV, "x"},
    {"onnx: input without a shape",             r_onnx_input_no_shape,          UNS, 0, "x"},
    {"onnx: initializer dims past 2^63",        r_onnx_initializer_overflow,    PRS, 0, "w"},
    {"onnx: initializer short of values",       r_onnx_initializer_short,       PRS, 0, "'w'"},
    {"onnx: Clip min > max is max (not an error)", r_onnx_clip_reversed,        FUSE_OK, 0, NULL},
    {"onnx: Clip min NaN",                      r_onnx_clip_nan,                INV, 0, "Clip"},
    {"onnx: Conv negative pads",                r_onnx_conv_negative_pads,      PRS, INV, "'pads'"},
    {"onnx: model without a graph",             r_onnx_no_graph,                PRS, 0, "graph"},
    {"onnx: zero bytes",                        r_onnx_empty,                   PRS, 0, "onnx"},
    {"onnx: not protobuf",                      r_onnx_garbage,                 PRS, 0, "onnx"},
    {"onnx: length past the end",               r_onnx_huge_length,             PRS, 0, "onnx"},
    {"onnx: data NULL",                         r_onnx_null_data,               INV, 0, "NULL"},
    {"onnx: out NULL",                          r_onnx_null_out,                INV, 0, NULL},
#ifndef FUSE_NO_STDIO
    {"onnx_load_file: path NULL",               r_onnx_file_null_path,          EIO, 0, "NULL"},
    {"onnx_load_file: no such file",            r_onnx_file_missing,            EIO, 0, "no-such-file"},
    {"onnx_load_file: a directory",             r_onnx_file_directory,          EIO, PRS, "onnx"},
    {"onnx_load_file: alloc without free",      r_onnx_file_half_allocator,     INV, 0, NULL},
#endif
    {"onnx_load_tensor: data NULL",             r_tensor_null,                  INV, 0, "NULL"},
    {"onnx_load_tensor: out NULL",              r_tensor_null_out,              INV, 0, NULL},
    {"onnx_load_tensor: garbage",               r_tensor_garbage,               PRS, 0, "malformed"},
    {"onnx_load_tensor: dims past 2^63",        r_tensor_dims_overflow,         PRS, 0, "dimension"},
    {"onnx_load_tensor: dim 0",                 r_tensor_dim_zero,              UNS, 0, "dimension"},
    {"onnx_load_tensor: short of values",       r_tensor_short,                 PRS, 0, "dimensions"},
    {"onnx_load_tensor: rank 9",                r_tensor_rank_9,                PRS, UNS, "8 dimensions"},
    {"onnx_load_tensor: int64 data",            r_tensor_int64,                 UNS, 0, "data type 7"},
    {"onnx_load_tensor: alloc without free",    r_tensor_half_allocator,        INV, 0, "alloc"},
#endif
};

#define NUM_ROWS ((int)(sizeof rows / sizeof rows[0]))

/* Runs one row; returns 1 when it passed. */
static int run_row_checked(const row *rw) {
  outcome o;
  int ok = 1;
  memset(&o, 0, sizeof o);
  al = ca_make(&ca);
  rw->fn(&o);
  if (o.r != rw->want && (rw->want2 == FUSE_OK || o.r != rw->want2)) {
    fprintf(stderr, "  FAIL row \"%s\": result %d (%s), want %d%s (message \"%s\")\n", rw->name,
            (int)o.r, fuse_result_string(o.r), (int)rw->want, rw->want2 ? " or the other" : "",
            o.msg);
    ok = 0;
  }
  if (rw->want == FUSE_OK) {
    /* a documented non-error: no message expected */
  } else if (!o.no_channel && !o.msg[0]) {
    fprintf(stderr, "  FAIL row \"%s\": empty message\n", rw->name);
    ok = 0;
  } else if (!o.no_channel && rw->word && !strstr(o.msg, rw->word)) {
    fprintf(stderr, "  FAIL row \"%s\": message \"%s\" does not name \"%s\"\n", rw->name, o.msg,
            rw->word);
    ok = 0;
  }
  if (ca.allocs != ca.frees || ca.bad_free || ca.bad_align) {
    fprintf(stderr, "  FAIL row \"%s\": %ld allocations, %ld frees, %ld bad frees, %ld misaligned\n",
            rw->name, ca.allocs, ca.frees, ca.bad_free, ca.bad_align);
    ok = 0;
  }
  if (verbose) printf("  %-44s %-16s %s\n", rw->name, fuse_result_string(o.r), o.msg);
  ca_done(&ca);
  return ok;
}

TEST(table) {
  int i, failed = 0;
  for (i = 0; i < NUM_ROWS; i++)
    if (!run_row_checked(&rows[i])) failed++;
  printf("  bad-input table: %d rows, %d failed\n", NUM_ROWS, failed);
  CHECK_EQ_INT(failed, 0);
}

/* ------------------------------------------------- truncated and flipped ONNX -- */

#ifndef FUSE_NO_ONNX
static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *d;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  d = (unsigned char *)malloc((size_t)n + 1);
  if (d && fread(d, 1, (size_t)n, f) != (size_t)n) {
    free(d);
    d = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return d;
}

/* Loads a copy of exactly n bytes; returns the result, -100 for a broken contract (no
   graph, or an error without a message, or a leak). With `compile`, a model that loads is
   compiled (and, when `run` is set, run on zeros). */
static int load_copy(const unsigned char *src, size_t n, int compile, int run) {
  unsigned char *copy = (unsigned char *)malloc(n ? n : 1);
  fuse_graph *g = NULL;
  fuse_result r;
  int bad = 0;
  if (!copy) return -100;
  if (n) memcpy(copy, src, n);
  al = ca_make(&ca);
  r = fuse_onnx_load_memory(copy, n, &al, &g);
  if (!g || (r != FUSE_OK && !fuse_graph_error(g)[0]) || fuse_graph_status(g) != r) bad = 1;
  if (r == FUSE_OK && compile) {
    fuse_plan *p = NULL;
    fuse_result rc = fuse_compile(g, NULL, &p);
    if (rc == FUSE_OK && run) {
      static float zeros[1 << 16], out[1 << 16];
      int ok = fuse_graph_input_count(g) == 1 && fuse_graph_output_count(g) == 1;
      int k;
      for (k = 0; ok && k < 2; k++) {
        fuse_value v = k ? fuse_graph_output(g, 0) : fuse_graph_input(g, 0);
        int64_t e = 1;
        int d;
        for (d = 0; d < fuse_value_rank(g, v); d++) e *= fuse_value_shape(g, v)[d];
        ok = e <= (1 << 16);
      }
      if (ok) {
        const float *in[1];
        float *outs[1];
        in[0] = zeros;
        outs[0] = out;
        if (fuse_run(p, in, outs, NULL) != FUSE_OK) bad = 1;
      }
    }
    if (rc == FUSE_OK) fuse_plan_destroy(p);
    else if (rc != OOM && rc != UNS) bad = 1;
  }
  fuse_graph_destroy(g);
  if (ca.allocs != ca.frees || ca.bad_free) bad = 1;
  ca_done(&ca);
  free(copy);
  return bad ? -100 : (int)r;
}

/* Whether `at` is where a top-level field of the ModelProto ends: the file cut there is a
   complete protobuf message (e.g. without its trailing opset_import), which may load. */
static int field_boundary(const unsigned char *d, size_t n, size_t at) {
  size_t p = 0;
  while (p < n) {
    uint64_t tag = 0, len = 0;
    int shift = 0;
    while (p < n && shift < 64) { /* the tag */
      tag |= (uint64_t)(d[p] & 0x7f) << shift;
      shift += 7;
      if (!(d[p++] & 0x80)) break;
    }
    if ((tag & 7) == 2 || (tag & 7) == 0) {
      shift = 0;
      while (p < n && shift < 64) { /* a length or a varint value */
        len |= (uint64_t)(d[p] & 0x7f) << shift;
        shift += 7;
        if (!(d[p++] & 0x80)) break;
      }
      if ((tag & 7) == 2) p += (size_t)len;
    } else {
      return 0; /* tinynet.onnx has no other wire types at the top level */
    }
    if (p == at) return 1;
  }
  return 0;
}

TEST(onnx_truncated_every_length) {
  size_t n = 0, cut;
  unsigned char *data = read_file("tests/data/onnx/tinynet.onnx", &n);
  long bad = 0, loaded = 0;
  clock_t t0 = clock();
  CHECK(data != NULL);
  if (!data) return;
  CHECK_EQ_INT(load_copy(data, n, 1, 1), FUSE_OK); /* the whole file loads, compiles, runs */
  for (cut = 0; cut < n; cut++) {
    /* an exact copy for the first and last 4 KB, where the structure is (the sanitizers see
       any over-read); in between the file itself, cut by the size argument */
    int r;
    if (cut < 4096 || cut + 4096 > n) {
      r = load_copy(data, cut, 0, 0);
    } else {
      fuse_graph *g = NULL;
      al = ca_make(&ca);
      r = fuse_onnx_load_memory(data, cut, &al, &g);
      if (!g || (r != FUSE_OK && !fuse_graph_error(g)[0])) r = -100;
      fuse_graph_destroy(g);
      if (ca.allocs != ca.frees) r = -100;
      ca_done(&ca);
    }
    if (r == FUSE_OK) loaded++;
    if ((r == FUSE_OK && !field_boundary(data, n, cut)) || r == -100) {
      if (bad++ < 5) fprintf(stderr, "  FAIL truncated at %lu of %lu bytes: %s\n", (unsigned long)cut,
                             (unsigned long)n, r == FUSE_OK ? "loaded" : "no graph, no message or a leak");
    }
  }
  printf("  tinynet.onnx truncated at each of %lu lengths: %ld loaded (cut between two top-level "
         "fields), %ld broke the contract (%.1f s)\n",
         (unsigned long)n, loaded, bad, (double)(clock() - t0) / CLOCKS_PER_SEC);
  CHECK_EQ_INT(bad, 0);
  free(data);
}

/* Which bytes of tinynet.onnx get every bit flipped: its structure, found by walking the
   protobuf (see field_boundary): the model's header, every 8th byte of the nodes, the first
   32 bytes of each initializer (name, dims, type, the raw data's length), and the graph's
   inputs, outputs and the opset at the end. The weights' bytes between get a sample. */
typedef struct flip_plan {
  size_t nodes_end, tail_start;
  size_t init_start[64];
  int num_init;
} flip_plan;

static size_t pb_read_varint(const unsigned char *d, size_t n, size_t *p) {
  uint64_t r = 0;
  int shift = 0;
  while (*p < n && shift < 64) {
    unsigned char c = d[(*p)++];
    r |= (uint64_t)(c & 0x7f) << shift;
    shift += 7;
    if (!(c & 0x80)) break;
  }
  return (size_t)r;
}

static void plan_flips(const unsigned char *d, size_t n, flip_plan *fp) {
  size_t p = 0;
  memset(fp, 0, sizeof *fp);
  fp->tail_start = n;
  while (p < n) { /* ModelProto: find the graph (field 7) */
    size_t tag = pb_read_varint(d, n, &p), len;
    if ((tag & 7) != 2) {
      if ((tag & 7) == 0) pb_read_varint(d, n, &p);
      continue;
    }
    len = pb_read_varint(d, n, &p);
    if (tag >> 3 == 7) { /* GraphProto: nodes (1) first, initializers (5), then the rest */
      size_t q = p, end = p + len;
      while (q < end) {
        size_t at = q, gtag = pb_read_varint(d, n, &q), glen = pb_read_varint(d, n, &q);
        if (gtag >> 3 == 1) fp->nodes_end = q + glen;
        if (gtag >> 3 == 5 && fp->num_init < 64) fp->init_start[fp->num_init++] = at;
        if (gtag >> 3 == 11 && fp->tail_start == n) fp->tail_start = at;
        q += glen;
      }
    }
    p += len;
  }
}

static int flip_byte_wanted(const flip_plan *fp, size_t byte, uint32_t *seed) {
  int i;
  if (byte >= fp->tail_start) return 1;
  if (byte < fp->nodes_end) return byte < 32 || byte % 8 == 0;
  for (i = 0; i < fp->num_init; i++)
    if (byte >= fp->init_start[i] && byte < fp->init_start[i] + 32) return 1;
  *seed = *seed * 1664525u + 1013904223u;
  return (*seed >> 8) % 512u == 0; /* one weight byte in 512 */
}

TEST(onnx_bit_flips) {
  size_t n = 0, byte;
  unsigned char *data = read_file("tests/data/onnx/tinynet.onnx", &n);
  long tried = 0, loaded = 0, bad = 0;
  uint32_t seed = 20240607u;
  flip_plan fp;
  clock_t t0 = clock();
  CHECK(data != NULL);
  if (!data) return;
  plan_flips(data, n, &fp);
  CHECK(fp.nodes_end > 0 && fp.num_init > 0 && fp.tail_start < n);
  for (byte = 0; byte < n; byte++) {
    int bit;
    if (!flip_byte_wanted(&fp, byte, &seed)) continue;
    for (bit = SANITIZED ? (int)(byte & 1) : 0; bit < 8; bit += SANITIZED ? 2 : 1) {
      int r;
      data[byte] ^= (unsigned char)(1u << bit);
      /* every 4th model that loads is compiled; every 32nd flip also runs */
      r = load_copy(data, n, tried % 4 == 0, tried % 32 == 0);
      data[byte] ^= (unsigned char)(1u << bit);
      tried++;
      if (r == FUSE_OK) loaded++;
      if (r == -100 && bad++ < 5)
        fprintf(stderr, "  FAIL bit %d of byte %lu flipped: no graph, no message, a leak or a failed run\n",
                bit, (unsigned long)byte);
    }
  }
  printf("  tinynet.onnx with one bit flipped: %ld flips (nodes %lu bytes, %d initializers), %ld "
         "loaded (a quarter compiled), %ld broke the contract (%.1f s)\n",
         tried, (unsigned long)fp.nodes_end, fp.num_init, loaded, bad,
         (double)(clock() - t0) / CLOCKS_PER_SEC);
  CHECK_EQ_INT(bad, 0);
  free(data);
}

/* A Concat of 40 inputs (densenet's reach 49): it loads and runs; its inputs once went into a
   16-slot array on the stack (AddressSanitizer: stack-buffer-overflow) */
TEST(onnx_concat_of_40_inputs) {
  static pb g, node, attr, model, opset;
  static const int64_t d12[2] = {1, 2};
  const int64_t d80[2] = {1, 80};
  char names[40][16];
  float x[2] = {1.5f, -2.0f}, y[80];
  fuse_graph *graph = NULL;
  fuse_plan *plan = NULL;
  const float *ins[1];
  float *outs[1];
  int i, ok = 1;
  memset(&g, 0, sizeof g), memset(&node, 0, sizeof node), memset(&attr, 0, sizeof attr);
  memset(&model, 0, sizeof model), memset(&opset, 0, sizeof opset);
  pb_node(&g, "Relu", "x", NULL, NULL, "r", NULL);
  for (i = 0; i < 40; i++) { /* r, then 39 negations alternating with r */
    snprintf(names[i], sizeof names[i], "n%d", i);
    if (i % 2) pb_node(&g, "Neg", "r", NULL, NULL, names[i], NULL);
  }
  for (i = 0; i < 40; i++) pb_str(&node, 1, i % 2 ? names[i] : "r");
  pb_str(&node, 2, "y");
  pb_str(&node, 4, "Concat");
  pb_str(&attr, 1, "axis");
  pb_int(&attr, 3, 1);
  pb_int(&attr, 20, 2); /* type INT */
  pb_sub(&node, 5, &attr);
  pb_sub(&g, 1, &node);
  pb_value_info(&g, 11, "x", 2, d12);
  pb_value_info(&g, 12, "y", 2, d80);
  pb_int(&model, 1, 7);
  pb_str(&opset, 1, "");
  pb_int(&opset, 2, 13);
  pb_sub(&model, 8, &opset);
  pb_sub(&model, 7, &g);
  CHECK(model.n <= sizeof model.d);
  CHECK_EQ_INT(fuse_onnx_load_memory(model.d, model.n, NULL, &graph), FUSE_OK);
  if (graph && fuse_graph_status(graph) == FUSE_OK &&
      fuse_compile(graph, NULL, &plan) == FUSE_OK) {
    ins[0] = x, outs[0] = y;
    CHECK_EQ_INT(fuse_run(plan, ins, outs, NULL), FUSE_OK);
    for (i = 0; i < 40; i++) /* relu(x) = [1.5, 0]; Neg of it in the odd slots */
      ok = ok && y[2 * i] == (i % 2 ? -1.5f : 1.5f) && y[2 * i + 1] == (i % 2 ? -0.0f : 0.0f);
    CHECK(ok);
  } else {
    CHECK(!"the 40-input Concat did not load and compile");
  }
  fuse_plan_destroy(plan);
  fuse_graph_destroy(graph);
}
#endif

int main(int argc, char **argv) {
  (void)runner_rel_error; /* runner.h's tensor comparison: not needed here */
  verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
  RUN(table);
#ifndef FUSE_NO_ONNX
  RUN(onnx_truncated_every_length);
  RUN(onnx_bit_flips);
  RUN(onnx_concat_of_40_inputs);
#endif
  return runner_finish("badinput");
}
