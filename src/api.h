#ifndef FUSE_H
#define FUSE_H

#include <stddef.h>
#include <stdint.h>
#ifndef FUSE_NO_STDIO
#include <stdio.h>
#endif

#define FUSE_VERSION_MAJOR 0
#define FUSE_VERSION_MINOR 1
#define FUSE_VERSION_PATCH 0
#define FUSE_VERSION_STRING "0.1.0"

#ifndef FUSE_API
#ifdef FUSE_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define FUSE_API static __attribute__((unused)) /* no warning for functions a unit skips */
#else
#define FUSE_API static
#endif
#else
#define FUSE_API extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== basics == */

typedef enum fuse_result {
  FUSE_OK = 0,
  FUSE_ERROR_INVALID_ARGUMENT = -1,
  FUSE_ERROR_SHAPE = -2,
  FUSE_ERROR_OUT_OF_MEMORY = -3,
  FUSE_ERROR_UNSUPPORTED = -4,
  FUSE_ERROR_PARSE = -5,
  FUSE_ERROR_IO = -6,
  FUSE_ERROR_BACKEND = -7
} fuse_result;

FUSE_API const char *fuse_result_string(fuse_result r);

/* All-zero = FUSE_MALLOC / FUSE_FREE. alloc must return memory aligned to `alignment`
   (a power of two, at most 64) or NULL. */
typedef struct fuse_allocator {
  void *(*alloc)(size_t size, size_t alignment, void *user);
  void (*free)(void *ptr, void *user);
  void *user;
} fuse_allocator;

/* ========================================================================= graph == */
/* Tensors are float32 unless made otherwise, NCHW for images; element-wise ops broadcast as
   numpy does. Quantized models carry uint8 / int8 tensors (and int32 biases) between
   fuse_quantize and fuse_dequantize; every other op takes float32 operands, but reshape and
   flatten, which keep their operand's type. */

typedef struct fuse_graph fuse_graph;
typedef int32_t fuse_value; /* a tensor in a graph */
#define FUSE_NONE (-1)      /* returned by a builder that failed */
#define FUSE_MAX_RANK 8
typedef enum fuse_type { /* a tensor's elements; the text form spells them f32, u8, i8, i32 */
  FUSE_FLOAT32 = 0, FUSE_UINT8, FUSE_INT8, FUSE_INT32
} fuse_type;

#ifndef FUSE_RUNTIME_ONLY /* the graph's functions (not in a runtime-only build: see CONFIGURATION) */
FUSE_API fuse_graph *fuse_graph_create(const fuse_allocator *alloc); /* alloc may be NULL */
FUSE_API void fuse_graph_destroy(fuse_graph *g);
FUSE_API fuse_result fuse_graph_status(const fuse_graph *g); /* first error, sticky */
/* "" or what went wrong: the error that broke the graph, or, while the status is FUSE_OK,
   why the last pass (fuse_ops_by_pattern, fuse_optimize, ...) failed and left it as it was. */
FUSE_API const char *fuse_graph_error(const fuse_graph *g);

/* Names are optional (NULL) for constants and must be unique within a graph. */
FUSE_API fuse_value fuse_input(fuse_graph *g, const char *name, int rank, const int64_t *shape);
FUSE_API fuse_value fuse_constant(fuse_graph *g, const char *name, int rank,
                                  const int64_t *shape, const float *data); /* data is copied */
FUSE_API fuse_value fuse_scalar(fuse_graph *g, float v); /* rank-0 constant */
FUSE_API fuse_result fuse_output(fuse_graph *g, fuse_value v);
/* Inputs and constants of any element type (data: numel elements of that type, copied). */
FUSE_API fuse_value fuse_typed_input(fuse_graph *g, const char *name, fuse_type type, int rank,
                                     const int64_t *shape);
FUSE_API fuse_value fuse_typed_constant(fuse_graph *g, const char *name, fuse_type type,
                                        int rank, const int64_t *shape, const void *data);
FUSE_API fuse_type fuse_value_type(const fuse_graph *g, fuse_value v); /* FUSE_FLOAT32 for bad v */
/* ONNX QuantizeLinear: saturate(round(x / scale) + zero_point), rounding half to even, into
   zero_point's type (uint8 / int8 / int32; FUSE_NONE: uint8 with zero point 0). scale (float32)
   and zero_point hold one value, or one per index of x's dimension `axis` (negative counts
   from the end). */
FUSE_API fuse_value fuse_quantize(fuse_graph *g, fuse_value x, fuse_value scale,
                                  fuse_value zero_point, int axis);
/* ONNX DequantizeLinear: (q - zero_point) * scale in float32; q uint8, int8 or int32,
   zero_point of q's type or FUSE_NONE (0); scale and axis as in fuse_quantize. */
FUSE_API fuse_value fuse_dequantize(fuse_graph *g, fuse_value q, fuse_value scale,
                                    fuse_value zero_point, int axis);
#endif

/* All-zero = stride 1, no padding, dilation 1, groups 1. */
typedef struct fuse_conv2d_attrs {
  int strides[2];
  int padding[4]; /* top, left, bottom, right */
  int dilation[2];
  int groups;
} fuse_conv2d_attrs;

/* kernel is required; zero strides / dilation = 1. ceil_mode rounds the output size up
   (a window must still start inside the input or its top/left padding, as in PyTorch).
   dilation applies to max_pool2d only. */
typedef struct fuse_pool2d_attrs {
  int kernel[2];
  int strides[2];
  int padding[4]; /* top, left, bottom, right */
  int dilation[2];
  int ceil_mode;
  int count_include_pad; /* avg_pool2d: padded zeros count in the divisor */
} fuse_pool2d_attrs;

#ifndef FUSE_RUNTIME_ONLY
/* x: [N, C, H, W]; w: [K, C / groups, KH, KW] -> [N, K, OH, OW] */
FUSE_API fuse_value fuse_conv2d(fuse_graph *g, fuse_value x, fuse_value w,
                                const fuse_conv2d_attrs *a); /* a may be NULL */
FUSE_API fuse_value fuse_matmul(fuse_graph *g, fuse_value a, fuse_value b); /* numpy matmul */
FUSE_API fuse_value fuse_add(fuse_graph *g, fuse_value a, fuse_value b);
FUSE_API fuse_value fuse_sub(fuse_graph *g, fuse_value a, fuse_value b);
FUSE_API fuse_value fuse_mul(fuse_graph *g, fuse_value a, fuse_value b);
FUSE_API fuse_value fuse_maximum(fuse_graph *g, fuse_value a, fuse_value b);
FUSE_API fuse_value fuse_minimum(fuse_graph *g, fuse_value a, fuse_value b);
FUSE_API fuse_value fuse_relu(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_clip(fuse_graph *g, fuse_value x, float lo, float hi); /* lo <= hi */
FUSE_API fuse_value fuse_sigmoid(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_reshape(fuse_graph *g, fuse_value x, int rank,
                                 const int64_t *shape); /* one -1 may stand for the rest */
FUSE_API fuse_value fuse_flatten(fuse_graph *g, fuse_value x, int axis); /* -> 2-D, ONNX */
/* output dimension i is input dimension perm[i]; perm NULL reverses the dimensions */
FUSE_API fuse_value fuse_transpose(fuse_graph *g, fuse_value x, const int *perm);
FUSE_API fuse_value fuse_concat(fuse_graph *g, int n, const fuse_value *xs, int axis);
FUSE_API fuse_value fuse_softmax(fuse_graph *g, fuse_value x, int axis); /* along one axis */
/* inference: (x - mean) / sqrt(var + eps) * scale + bias, per channel (dimension 1) */
FUSE_API fuse_value fuse_batch_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                    fuse_value bias, fuse_value mean, fuse_value var,
                                    float eps);
FUSE_API fuse_value fuse_max_pool2d(fuse_graph *g, fuse_value x, const fuse_pool2d_attrs *a);
FUSE_API fuse_value fuse_avg_pool2d(fuse_graph *g, fuse_value x, const fuse_pool2d_attrs *a);
FUSE_API fuse_value fuse_global_avg_pool2d(fuse_graph *g, fuse_value x);

/* 1-D inputs: fuse_conv2d, fuse_conv_transpose2d and the pools above also take x [N, C, L]
   (w [K, C / groups, KL]): they run as the 2-D op over [N, C, 1, L] and give [N, K, OL]; the
   attributes' W entries apply (strides[1], padding[1] / [3], dilation[1], kernel[1]) and the
   H entries must be left 0 (or 1 / 0 padding). */

/* ---- element-wise math (graph/builders_math.c) ---- */
/* Binary ones broadcast as numpy does; NaN propagates. */
FUSE_API fuse_value fuse_div(fuse_graph *g, fuse_value a, fuse_value b);
FUSE_API fuse_value fuse_pow(fuse_graph *g, fuse_value a, fuse_value b); /* C's powf */
/* x < 0 ? slope * x : x; slope broadcasts to x (per channel: [C, 1, 1]) */
FUSE_API fuse_value fuse_prelu(fuse_graph *g, fuse_value x, fuse_value slope);
/* cond != 0 ? a : b, all three broadcast together */
FUSE_API fuse_value fuse_where(fuse_graph *g, fuse_value cond, fuse_value a, fuse_value b);
FUSE_API fuse_value fuse_sqrt(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_reciprocal(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_exp(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_log(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_neg(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_abs(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_floor(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_ceil(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_erf(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_tanh(fuse_graph *g, fuse_value x);
FUSE_API fuse_value fuse_softplus(fuse_graph *g, fuse_value x); /* log(1 + exp(x)) */
FUSE_API fuse_value fuse_hardswish(fuse_graph *g, fuse_value x); /* x * relu6(x + 3) / 6 */
/* max(0, min(1, alpha * x + beta)); ONNX's defaults are alpha = 0.2, beta = 0.5 */
FUSE_API fuse_value fuse_hardsigmoid(fuse_graph *g, fuse_value x, float alpha, float beta);
FUSE_API fuse_value fuse_leaky_relu(fuse_graph *g, fuse_value x, float alpha); /* x<0: alpha*x */
FUSE_API fuse_value fuse_elu(fuse_graph *g, fuse_value x, float alpha); /* x<0: alpha*(e^x-1) */
/* gamma * (x > 0 ? x : alpha * (e^x - 1)); ONNX's defaults are alpha = 1.6732632,
   gamma = 1.0507010 */
FUSE_API fuse_value fuse_selu(fuse_graph *g, fuse_value x, float alpha, float gamma);
/* 0.5 x (1 + erf(x / sqrt 2)); tanh_approximation: 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))) */
FUSE_API fuse_value fuse_gelu(fuse_graph *g, fuse_value x, int tanh_approximation);
/* variadic, with broadcasting: the sum, the mean, the element-wise max / min of n >= 1 values
   (made of add / mul / maximum / minimum ops; n = 1 gives xs[0] itself) */
FUSE_API fuse_value fuse_sum(fuse_graph *g, int n, const fuse_value *xs);
FUSE_API fuse_value fuse_mean(fuse_graph *g, int n, const fuse_value *xs);
FUSE_API fuse_value fuse_max(fuse_graph *g, int n, const fuse_value *xs);
FUSE_API fuse_value fuse_min(fuse_graph *g, int n, const fuse_value *xs);
#endif

/* ---- data movement (graph/builders_shape.c) ---- */
typedef enum fuse_pad_mode { FUSE_PAD_CONSTANT = 0, FUSE_PAD_REFLECT, FUSE_PAD_EDGE } fuse_pad_mode;
typedef enum fuse_resize_mode {
  FUSE_RESIZE_NEAREST = 0, FUSE_RESIZE_LINEAR, FUSE_RESIZE_CUBIC
} fuse_resize_mode;
typedef enum fuse_resize_coordinates { /* ONNX coordinate_transformation_mode */
  FUSE_RESIZE_HALF_PIXEL = 0, FUSE_RESIZE_ASYMMETRIC, FUSE_RESIZE_PYTORCH_HALF_PIXEL,
  FUSE_RESIZE_ALIGN_CORNERS, FUSE_RESIZE_HALF_PIXEL_SYMMETRIC
} fuse_resize_coordinates;
typedef enum fuse_resize_nearest { /* ONNX nearest_mode */
  FUSE_RESIZE_ROUND_PREFER_FLOOR = 0, FUSE_RESIZE_ROUND_PREFER_CEIL, FUSE_RESIZE_FLOOR,
  FUSE_RESIZE_CEIL
} fuse_resize_nearest;
typedef struct fuse_resize_attrs { /* all-zero = ONNX's defaults */
  fuse_resize_mode mode;
  fuse_resize_coordinates coordinates;
  fuse_resize_nearest nearest;
  float cubic_coeff_a; /* 0 = -0.75 */
  int exclude_outside;
} fuse_resize_attrs;

#ifndef FUSE_RUNTIME_ONLY
/* ONNX semantics; axes may be negative, counted from the end. */
/* x's entries at constant indices along axis (negative indices count from the end):
   [x.shape[:axis], index_shape, x.shape[axis+1:]]; index_rank 0 (one index) drops the axis */
FUSE_API fuse_value fuse_gather(fuse_graph *g, fuse_value x, int axis, int index_rank,
                                const int64_t *index_shape, const int64_t *indices);
/* x broadcast with `shape` (ONNX Expand: numpy broadcasting in both directions) */
FUSE_API fuse_value fuse_expand(fuse_graph *g, fuse_value x, int rank, const int64_t *shape);
FUSE_API fuse_value fuse_tile(fuse_graph *g, fuse_value x, const int64_t *repeats); /* rank entries */
/* views (reshapes); squeeze with n = 0 (axes NULL): every dimension of size 1 */
FUSE_API fuse_value fuse_squeeze(fuse_graph *g, fuse_value x, int n, const int *axes);
FUSE_API fuse_value fuse_unsqueeze(fuse_graph *g, fuse_value x, int n, const int *axes);
/* [N, C, H, W] -> [N, C / b^2, H b, W b]; crd: 0 = DCR (ONNX's default), 1 = CRD (PyTorch's
   pixel_shuffle); space_to_depth is the inverse of DCR (ONNX SpaceToDepth) */
FUSE_API fuse_value fuse_depth_to_space(fuse_graph *g, fuse_value x, int block, int crd);
FUSE_API fuse_value fuse_space_to_depth(fuse_graph *g, fuse_value x, int block);
/* pads: 2 x rank entries, ONNX order (all begins, then all ends); negative ones crop; reflect
   needs each pad smaller than its dimension (as PyTorch) */
FUSE_API fuse_value fuse_pad(fuse_graph *g, fuse_value x, const int64_t *pads, fuse_pad_mode mode,
                             float value);
/* to sizes (rank entries); scales (rank entries, or NULL: sizes / input sizes) set the
   coordinate mapping as ONNX Resize's scales do. Any axes may be resized: linear and cubic
   interpolate separably over every resized axis (bilinear / bicubic on H, W). */
FUSE_API fuse_value fuse_resize(fuse_graph *g, fuse_value x, const int64_t *sizes,
                                const float *scales, const fuse_resize_attrs *a);
/* along axes[i] (NULL: axes 0 .. n - 1): elements starts[i], starts[i] + steps[i], ... before
   ends[i]; indices clamp as in ONNX Slice (negative ones count from the end; INT64_MAX /
   INT64_MIN = to the end); steps NULL = all 1, never 0. Axes not listed are kept whole. */
FUSE_API fuse_value fuse_slice(fuse_graph *g, fuse_value x, int n, const int *axes,
                               const int64_t *starts, const int64_t *ends, const int64_t *steps);
/* n pieces along axis, sizes[i] each (NULL: equal pieces), into out[0..n) */
FUSE_API fuse_result fuse_split(fuse_graph *g, fuse_value x, int axis, int n,
                                const int64_t *sizes, fuse_value *out);
#endif

/* ---- reductions, normalizations (graph/builders_nn.c) ---- */
typedef enum fuse_reduce_kind {
  FUSE_REDUCE_MEAN = 1, FUSE_REDUCE_SUM, FUSE_REDUCE_MAX, FUSE_REDUCE_MIN, FUSE_REDUCE_L2,
  FUSE_REDUCE_PROD, FUSE_REDUCE_SUM_SQUARE
} fuse_reduce_kind;
#ifndef FUSE_RUNTIME_ONLY
/* over axes[0..n) (n = 0: all; negative axes count from the end); keepdims keeps them as
   size 1. Sums, means and norms accumulate in double. */
FUSE_API fuse_value fuse_reduce(fuse_graph *g, fuse_value x, fuse_reduce_kind kind, int n,
                                const int *axes, int keepdims);
FUSE_API fuse_value fuse_log_softmax(fuse_graph *g, fuse_value x, int axis); /* x - logsumexp */
/* normalizes over axes axis..rank-1, then * scale + bias (shape x.shape[axis:], bias may be
   FUSE_NONE) */
FUSE_API fuse_value fuse_layer_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                    fuse_value bias, int axis, float eps);
/* per sample and channel over the spatial axes; scale, bias [C] */
FUSE_API fuse_value fuse_instance_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                       fuse_value bias, float eps);
/* per sample over groups of C / groups channels; scale, bias [C] */
FUSE_API fuse_value fuse_group_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                    fuse_value bias, int groups, float eps);
/* numpy / ONNX einsum over n operands in the forms a matmul expresses: batch, contracted,
   kept and transposed indices ("bij,bjk->bik", "ij,kj->ik", "bhqd,bhkd->bhqk", ...), an
   index of one operand alone summed; "->" and the implicit output; n = 1 or 2; no "..." and
   no repeated index within a term. Builds reduce_sum, transpose, reshape and matmul ops. */
FUSE_API fuse_value fuse_einsum(fuse_graph *g, const char *equation, int n, const fuse_value *xs);
#endif

/* ---- transposed convolution, 1-D, recurrent layers (graph/builders_layers.c) ---- */
typedef struct fuse_conv_transpose2d_attrs { /* all-zero = stride 1, no padding, dilation 1 */
  int strides[2];
  int padding[4];        /* top, left, bottom, right: cropped from the full output */
  int output_padding[2]; /* added at the bottom / right */
  int dilation[2];
  int groups;
} fuse_conv_transpose2d_attrs;
typedef enum fuse_rnn_direction {
  FUSE_RNN_FORWARD = 0, FUSE_RNN_REVERSE, FUSE_RNN_BIDIRECTIONAL
} fuse_rnn_direction;
typedef struct fuse_rnn_attrs { /* ONNX LSTM / GRU with the default activations */
  fuse_rnn_direction direction;
  int hidden_size;
  int linear_before_reset; /* GRU */
  float clip;              /* > 0: gates' inputs clipped to [-clip, clip]; 0: none */
  int batch_first;         /* ONNX layout = 1: x [N, T, I], y [N, T, D, H] */
} fuse_rnn_attrs;

#ifndef FUSE_RUNTIME_ONLY
/* x: [N, C, H, W]; w: [C, K / groups, KH, KW] -> [N, K, OH, OW],
   OH = (H - 1) * stride - pad_top - pad_bottom + dilation * (KH - 1) + output_padding + 1
   (a may be NULL; output rows past the full output, from output_padding, are 0) */
FUSE_API fuse_value fuse_conv_transpose2d(fuse_graph *g, fuse_value x, fuse_value w,
                                          const fuse_conv_transpose2d_attrs *a);
/* x [T, N, I], w [D, 4H, I] (gates i, o, f, c), r [D, 4H, H], b [D, 8H] or FUSE_NONE,
   h0 / c0 [D, N, H] or FUSE_NONE (zeros). Outputs (each pointer may be NULL): y [T, D, N, H],
   y_h / y_c [D, N, H]; D = 2 when bidirectional, else 1. batch_first: x [N, T, I], h0 / c0,
   y_h / y_c [N, D, H], y [N, T, D, H]. Composed of matmul, slice, add, mul, sigmoid and tanh,
   unrolled over the T steps. */
FUSE_API fuse_result fuse_lstm(fuse_graph *g, fuse_value x, fuse_value w, fuse_value r,
                               fuse_value b, fuse_value h0, fuse_value c0,
                               const fuse_rnn_attrs *a, fuse_value *y, fuse_value *y_h,
                               fuse_value *y_c);
/* as fuse_lstm with 3 gates (z, r, h): w [D, 3H, I], r [D, 3H, H], b [D, 6H] */
FUSE_API fuse_result fuse_gru(fuse_graph *g, fuse_value x, fuse_value w, fuse_value r,
                              fuse_value b, fuse_value h0, const fuse_rnn_attrs *a,
                              fuse_value *y, fuse_value *y_h);

FUSE_API int fuse_value_rank(const fuse_graph *g, fuse_value v);               /* -1: bad v */
FUSE_API const int64_t *fuse_value_shape(const fuse_graph *g, fuse_value v);   /* NULL: bad v */
FUSE_API const char *fuse_value_name(const fuse_graph *g, fuse_value v);       /* NULL: none */
FUSE_API fuse_value fuse_graph_find(const fuse_graph *g, const char *name);
/* Names an op's result (inputs and constants take theirs when made); NULL removes it. */
FUSE_API fuse_result fuse_value_set_name(fuse_graph *g, fuse_value v, const char *name);
FUSE_API int fuse_graph_op_count(const fuse_graph *g); /* ops, not inputs / constants */
FUSE_API int fuse_graph_input_count(const fuse_graph *g);
FUSE_API int fuse_graph_output_count(const fuse_graph *g);
FUSE_API fuse_value fuse_graph_input(const fuse_graph *g, int i);  /* in fuse_input order */
FUSE_API fuse_value fuse_graph_output(const fuse_graph *g, int i); /* in fuse_output order */
#endif

/* ===================================================================== text form == */
/* A readable listing that fuse_graph_parse reads back:

       graph(%x: [1, 3, 8, 8]) {
         %w: [4, 3, 3, 3] = const
         %0: [1, 4, 8, 8] = conv2d(%x, %w, strides=[1, 1], padding=[1, 1, 1, 1], ...)
         %1: [1, 4, 8, 8] = maximum(%0, 0)
         return %1
       }

   Constants print as shapes (with values when they have at most 4 elements); fill them after
   a parse with fuse_graph_set_constant. */
typedef void (*fuse_write_fn)(void *user, const char *text, size_t len);
#ifndef FUSE_RUNTIME_ONLY
FUSE_API fuse_result fuse_graph_write(const fuse_graph *g, fuse_write_fn write, void *user);
#ifndef FUSE_NO_STDIO
FUSE_API fuse_result fuse_graph_print(const fuse_graph *g, FILE *f);
#endif
/* On a parse error *out is still a graph whose fuse_graph_error says where and why
   (NULL only when out of memory). */
FUSE_API fuse_result fuse_graph_parse(const char *text, const fuse_allocator *alloc,
                                      fuse_graph **out);
FUSE_API fuse_result fuse_graph_set_constant(fuse_graph *g, const char *name, const float *data,
                                             size_t n);
/* Any op by its text-form name, with its operands and its attributes written as in the text
   form (NULL or "": the defaults): fuse_op(g, "leaky_relu", 1, &x, "alpha=0.2") is
   fuse_leaky_relu(g, x, 0.2f); fuse_op(g, "shrink", 1, &x, "lambd=0.5, bias=0"). Every op of
   the operator table has it, those added after the named builders only it. Errors as the
   parser's (column: in attrs). */
FUSE_API fuse_value fuse_op(fuse_graph *g, const char *op, int num_in, const fuse_value *in,
                            const char *attrs);
#endif

#ifndef FUSE_RUNTIME_ONLY
/* ======================================================== patterns, fusion passes == */
/* Pattern text (see README): `*` any value, `$x` capture, `$x:P`, `const`, `op(P, Q)` with
   exact arity (`...` last ignores the rest), `op[attr=v](...)`, optional `op?(P, ...)` (the
   op, or P itself), op alternation `(relu|clip)(P)`, and `A | B`. add, mul, maximum and
   minimum match their operands in either order. reshape's target shape counts as its second
   operand, so `reshape($b, *)` works as in TVM. */

typedef struct fuse_match fuse_match;
FUSE_API fuse_value fuse_match_capture(const fuse_match *m, const char *name); /* FUSE_NONE if unbound */
FUSE_API fuse_value fuse_match_root(const fuse_match *m);
typedef int (*fuse_check_fn)(const fuse_graph *g, const fuse_match *m, void *user); /* !0 = accept */

typedef struct fuse_rule {
  const char *name;    /* composite name "<codegen>.<what>", e.g. "dnnl.conv2d_reshape_add_relu" */
  const char *pattern; /* pattern text */
  fuse_check_fn check; /* optional */
  void *user;
} fuse_rule;

typedef struct fuse_pattern_options { /* all-zero = defaults */
  int keep_constants_as_params;       /* default: constants are bound inside the composite */
  int no_codegen_annotation;          /* default: codegen = name prefix before '.' */
  int allow_escaping; /* default: reject matches whose intermediates are used outside */
} fuse_pattern_options;

/* Rules in priority order: the first rule takes its matches first; among overlapping matches
   of one rule the largest wins. A failing call (bad pattern) leaves the graph as it was and
   says why in fuse_graph_error without making the graph's status an error. */
FUSE_API fuse_result fuse_ops_by_pattern(fuse_graph *g, const fuse_rule *rules, int n,
                                         const fuse_pattern_options *opt);
FUSE_API fuse_result fuse_merge_composites(fuse_graph *g); /* regions per codegen, no cycles */
FUSE_API fuse_result fuse_fold_batch_norm(fuse_graph *g);  /* conv2d -> batch_norm, constants */
/* The built-in rules for codegen "fuse" (NULL) or "dnnl"; returns their count (0: unknown). */
FUSE_API int fuse_rules_default(const char *codegen, const fuse_rule **out);
/* Grows each composite of `codegen` (NULL: "fuse") whose root is an epilogue over the
   element-wise ops after it (activations, scales, x * f(x) gates, residual adds) while the
   epilogue analyzer accepts the longer chain, up to FUSE_MAX_POST_OPS post-ops; a grown
   composite is renamed after its epilogue ("fuse.conv2d_bias_silu"). After
   fuse_ops_by_pattern with the default rules, before fuse_merge_composites. */
FUSE_API fuse_result fuse_grow_composites(fuse_graph *g, const char *codegen);
FUSE_API fuse_result fuse_optimize(fuse_graph *g, const char *codegen); /* fold + rules + grow + merge */
#endif

/* ============================================================== epilogue analysis == */

#define FUSE_MAX_POST_OPS 8
/* What a post-op does to v, one element of the finished output (after the bias). The
   element-wise kinds use alpha and beta as said; sigmoid(t) = 1 / (1 + exp(-t)). */
typedef enum fuse_post_kind {
  FUSE_POST_CLAMP = 1,        /* min(max(v, lo), hi): relu = [0, +inf], relu6 = [0, 6] */
  FUSE_POST_ADD = 2,          /* v + the residual `tensor`, of the output's shape */
  FUSE_POST_LINEAR = 3,       /* alpha * v + beta: mul / div / add / sub by a scalar, neg */
  FUSE_POST_SIGMOID = 4,      /* sigmoid(v) */
  FUSE_POST_TANH = 5,         /* tanh(v) */
  FUSE_POST_SILU = 6,         /* v * sigmoid(alpha * v): SiLU / swish (alpha = 1) */
  FUSE_POST_HARDSIGMOID = 7,  /* max(0, min(1, alpha * v + beta)) */
  FUSE_POST_HARDSWISH = 8,    /* v * max(0, min(1, v / 6 + 1 / 2)) */
  FUSE_POST_LEAKY_RELU = 9,   /* v > 0 ? v : alpha * v */
  FUSE_POST_ELU = 10,         /* v > 0 ? v : alpha * (exp(v) - 1) */
  FUSE_POST_SELU = 11,        /* beta * (v > 0 ? v : alpha * (exp(v) - 1)); beta = gamma */
  FUSE_POST_SOFTPLUS = 12,    /* log(1 + exp(v)) */
  FUSE_POST_MISH = 13,        /* v * tanh(softplus(v)) */
  FUSE_POST_GELU = 14,        /* v / 2 * (1 + erf(v / sqrt(2))) */
  FUSE_POST_GELU_TANH = 15,   /* v / 2 * (1 + tanh(sqrt(2 / pi) * (v + 0.044715 v^3))) */
  FUSE_POST_EXP = 16,         /* exp(v) */
  /* per output channel c: `tensor` is a constant of K values (K output channels) */
  FUSE_POST_SCALE = 17,       /* v * tensor[c]: mul by a [K] / [K,1,1] / [1,K,1,1] constant */
  FUSE_POST_SHIFT = 18,       /* v + tensor[c]: add of one after the bias (a batch-norm after
                                 the activation is a scale and a shift) */
  FUSE_POST_PRELU = 19        /* v > 0 ? v : tensor[c] * v: PRelu with a slope per channel */
} fuse_post_kind;
/* One post-op: the one representation from the analyzer (tensor: a graph value) through the
   plan and its kernels to a backend (operand: an index into the step's operands). */
typedef struct fuse_post_op {
  fuse_post_kind kind;
  float lo, hi;      /* CLAMP: v = min(max(v, lo), hi); relu = [0, +inf], relu6 = [0, 6] */
  fuse_value tensor; /* ADD: residual, same shape as the output; SCALE, SHIFT, PRELU: K values */
  int operand;       /* those, in a compiled step: the index of `tensor` in its operands; else -1 */
  float alpha, beta; /* the element-wise kinds' parameters (fuse_post_kind) */
} fuse_post_op;
typedef struct fuse_epilogue {
  fuse_value reduction; /* the conv2d or matmul it follows */
  fuse_value bias;      /* per-output-channel [K] after undoing reshape, or FUSE_NONE */
  int num_post;
  fuse_post_op post[FUSE_MAX_POST_OPS]; /* applied in order, after bias */
  char why[200];        /* when the analysis fails: what is not an epilogue, and why */
} fuse_epilogue;
#ifndef FUSE_RUNTIME_ONLY
/* Walks back from root through element-wise ops to one conv2d / matmul. FUSE_ERROR_UNSUPPORTED
   (and out->why) when the chain is not reduction + bias + post-ops. */
FUSE_API fuse_result fuse_analyze_epilogue(const fuse_graph *g, fuse_value root, fuse_epilogue *out);

FUSE_API int fuse_composite_count(const fuse_graph *g);
typedef struct fuse_composite_info {
  const char *name;     /* rule name */
  const char *function; /* "fused_conv2d_reshape_add_relu" */
  const char *codegen;  /* "dnnl", or NULL */
  int num_ops;
  int region;           /* merge group, -1 before fuse_merge_composites */
  int has_epilogue;
  fuse_epilogue epilogue;
  fuse_value root;      /* the value the composite produces */
} fuse_composite_info;
FUSE_API fuse_result fuse_composite_get(const fuse_graph *g, int i, fuse_composite_info *out);
FUSE_API int fuse_value_composite(const fuse_graph *g, fuse_value v); /* its composite or -1 */

/* ---- what fused and why, and a picture (passes/explain.c, graph/dot.c) ----
   fuse_explain_write: a report on any graph (typically after fuse_optimize), written as the
   text form is: every conv2d / matmul with its composite and fused epilogue ("conv2d %3
   [1, 4, 8, 8]: composite fuse.conv2d_bias_relu, fused: bias %b, clamp[0, inf] -> %6"), then
   every element-wise op that runs on its own with why it is not fused into the conv2d /
   matmul before it (what else reads the chain, the analyzer's why, "follows max_pool2d %6,
   not a conv2d / matmul", ...), then "summary: N conv2d / matmul, M with a fused epilogue,
   K element-wise ops fused, J standalone". Values are named as in fuse_graph_error: 'name',
   or %id when unnamed. */
FUSE_API fuse_result fuse_explain_write(const fuse_graph *g, fuse_write_fn write, void *user);
/* The graph as a Graphviz digraph (`dot -Tsvg`): ops labeled with their shape and constant
   operands (constants are not drawn apart), inputs and outputs as ellipses, each composite a
   `subgraph cluster_N` labeled with its name. */
typedef struct fuse_dot_options { /* all-zero = the whole graph */
  const char *only; /* draw only the values whose names contain this text, the unnamed ops
                       only they read, whole composites whose root is drawn, and (dashed)
                       what those read from elsewhere: one block of a large model */
} fuse_dot_options;
FUSE_API fuse_result fuse_graph_write_dot(const fuse_graph *g, const fuse_dot_options *opt,
                                          fuse_write_fn write, void *user); /* opt may be NULL */
#ifndef FUSE_NO_STDIO
FUSE_API fuse_result fuse_explain(const fuse_graph *g, FILE *f);
FUSE_API fuse_result fuse_write_dot(const fuse_graph *g, FILE *f); /* the whole graph */
#endif
#endif

/* =============================================================== compile and run == */

typedef void (*fuse_task_fn)(void *ctx, int begin, int end);
typedef void (*fuse_parallel_for_fn)(void *user, fuse_task_fn task, void *ctx, int n);
typedef enum fuse_isa {
  FUSE_ISA_AUTO = 0,
  FUSE_ISA_SCALAR,
  FUSE_ISA_AVX2,
  FUSE_ISA_AVX512,
  FUSE_ISA_NEON /* aarch64, and armv7 built with -mfpu=neon-vfpv4 */
} fuse_isa;
typedef struct fuse_backend fuse_backend; /* fuse_dnnl.h provides one */

typedef struct fuse_compile_options { /* all-zero = defaults */
  fuse_isa isa;
  int num_threads;                   /* 0 = as many as available */
  fuse_parallel_for_fn parallel_for; /* NULL: OpenMP if built with it, else serial */
  void *parallel_user;
  const fuse_backend *const *backends; /* NULL-terminated; each outlives the plans made with it */
  char *error;        /* optional: receives why fuse_compile failed, */
  size_t error_size;  /* truncated to error_size bytes with a NUL */
  int reference_kernels; /* 1: every op on the plain reference kernels (the oracle the others are
                            tested against); isa is then only checked. 0: the kernel table's
                            micro-kernels for isa (FUSE_ISA_SCALAR: their scalar twins) */
  int no_winograd; /* 0: 3x3 stride-1 convs run as Winograd F(m,3) where the cost rule picks it;
                      1: never (the direct kernels); -2, -4, -6: F(2,3), F(4,3), F(6,3) on
                      every conv it can run (for tests and benchmarks) */
  int save_only;   /* 1: the plan is made to be saved (fuse_plan_save) for another machine:
                      isa may name one this CPU lacks (FUSE_ISA_SCALAR for a Cortex-M, AVX-512
                      on an AVX2 build host); fuse_run refuses such a plan here */
} fuse_compile_options;

typedef struct fuse_plan fuse_plan;
#ifndef FUSE_RUNTIME_ONLY
/* Makes an immutable plan: it owns copies of the constants, so the graph may be destroyed. */
FUSE_API fuse_result fuse_compile(const fuse_graph *g, const fuse_compile_options *opt,
                                  fuse_plan **out);
#endif
FUSE_API size_t fuse_plan_workspace_size(const fuse_plan *p);
/* The plan's steps, one line each ("step 0: conv2d + bias + clamp[0, inf] -> 'y' (composite
   fuse.conv2d_bias_relu)"): what runs fused and what runs op by op. */
FUSE_API int fuse_plan_step_count(const fuse_plan *p);
/* Bytes the plan holds for constants: its copy of the graph's constants plus the weights the
   SIMD kernels packed at compile. */
FUSE_API size_t fuse_plan_weights_size(const fuse_plan *p);
/* A plan's inputs and outputs (in fuse_input / fuse_output order) without its graph, as a
   loaded plan's user needs them: the counts, and each one's rank with its NCHW shape written
   to dims[FUSE_MAX_RANK]; -1 for a position out of range. */
FUSE_API int fuse_plan_input_count(const fuse_plan *p);
FUSE_API int fuse_plan_output_count(const fuse_plan *p);
FUSE_API int fuse_plan_input_shape(const fuse_plan *p, int i, int64_t *dims);
FUSE_API int fuse_plan_output_shape(const fuse_plan *p, int i, int64_t *dims);
/* Their element types (FUSE_FLOAT32 unless the graph made them otherwise); -1 out of range. */
FUSE_API int fuse_plan_input_type(const fuse_plan *p, int i);
FUSE_API int fuse_plan_output_type(const fuse_plan *p, int i);
FUSE_API fuse_result fuse_plan_write(const fuse_plan *p, fuse_write_fn write, void *user);
/* inputs / outputs: NCHW float arrays in fuse_input / fuse_output order; outputs must not
   overlap inputs. workspace: NULL = the plan's own (one caller at a time); a caller's own
   block of fuse_plan_workspace_size bytes, 64-byte aligned, makes concurrent runs safe. */
FUSE_API fuse_result fuse_run(fuse_plan *p, const float *const *inputs, float *const *outputs,
                              void *workspace);
/* Runs steps first .. first + count - 1 only (a profiler times them one by one); the same
   workspace must carry the values between calls. fuse_run = all steps. */
FUSE_API fuse_result fuse_run_steps(fuse_plan *p, const float *const *inputs,
                                    float *const *outputs, void *workspace, int first, int count);
/* fuse_run for plans whose inputs or outputs are not all float32 (a uint8 image in, int8
   logits out): each array holds elements of its fuse_plan_input_type / _output_type. */
FUSE_API fuse_result fuse_run_typed(fuse_plan *p, const void *const *inputs,
                                    void *const *outputs, void *workspace);
FUSE_API void fuse_plan_destroy(fuse_plan *p);

/* Plan blobs: a compiled plan as bytes (steps, kernel choices, memory plan, packed weights) that
   fuse_plan_load turns back into a plan without the graph, the passes or the compiler (a build
   with FUSE_RUNTIME_ONLY has only these). A loaded plan's outputs are bit for bit those of the
   plan it was saved from (same threads). The blob starts with a 64-byte header (magic
   "FUSEPLAN", format version, ISA, byte order, word size, two checksums: one over the
   structure, verified at every load, one over the weights, verified when asked); its weights
   start 64-byte aligned. fuse_plan_save writes it through `write` in pieces; a plan that a
   backend (fuse_dnnl.h) runs steps of cannot be saved (FUSE_ERROR_UNSUPPORTED). */
FUSE_API fuse_result fuse_plan_save(const fuse_plan *p, fuse_write_fn write, void *user);
typedef struct fuse_plan_load_options { /* all-zero = defaults */
  const fuse_allocator *alloc; /* NULL: FUSE_MALLOC / FUSE_FREE */
  char *error;                 /* optional: receives why the blob was refused, */
  size_t error_size;           /* truncated to error_size bytes with a NUL */
  int copy;           /* 0: the plan reads the blob's weights in place (flash, ROM, a mapped
                         file), so the blob must outlive it; a blob whose weights are not
                         64-byte aligned in memory is copied anyway. 1: the plan copies them */
  int verify_weights; /* 1: check the weights' checksum too (reads every byte); 0: loading in
                         place does work per step only, whatever the weights' size */
  int num_threads;                   /* as fuse_compile_options */
  fuse_parallel_for_fn parallel_for;
  void *parallel_user;
} fuse_plan_load_options;
/* FUSE_ERROR_PARSE: the blob is damaged (a checksum, a length, an offset, an index); 
   FUSE_ERROR_UNSUPPORTED: another format version, byte order or word size, or an ISA this CPU
   or build lacks. The message says which. */
FUSE_API fuse_result fuse_plan_load(const void *data, size_t size,
                                    const fuse_plan_load_options *opt, fuse_plan **out);
FUSE_API fuse_isa fuse_cpu_isa(void); /* best ISA this CPU and build support */
/* Leaving out what plans do not use: writes a C header of the #defines that leave out of a
   build (before fuse.h's implementation; with FUSE_RUNTIME_ONLY for firmware) every kind of
   step, family of micro-kernels, post-op kind and instruction set that none of the `count`
   plans uses (FUSE_NO_RUN_*, FUSE_NO_KERNEL_*, FUSE_NO_POST_*, FUSE_NO_AVX512 / _AVX2 / _NEON:
   see CONFIGURATION). fuse_run --emit-config BLOB... writes it for blob files. A build with
   such defines refuses, at fuse_plan_load (and fuse_compile), a plan that needs what they left
   out, and says which define. */
FUSE_API fuse_result fuse_plan_write_config(const fuse_plan *const *plans, int count,
                                            fuse_write_fn write, void *user);

/* ---- backends: another library runs fused steps (fuse_dnnl.h: oneDNN) ----
   fuse_compile offers each fused conv2d / matmul step whose composite's codegen equals a
   backend's name to that backend's prepare, which gets the step's description (never a name to
   parse) and takes it or declines; a declined step runs on the built-in kernels and the plan's
   description says why. A step a backend took reads and writes NCHW float32, except a tensor
   passed between two steps of one backend, which may stay in that backend's own layout (see
   fuse_backend_layout): conversions then happen only where its steps are entered or left. */
typedef enum fuse_backend_op { FUSE_BACKEND_CONV2D = 1, FUSE_BACKEND_MATMUL = 2 } fuse_backend_op;
#define FUSE_BACKEND_MAX_OPERANDS (3 + FUSE_MAX_POST_OPS) /* x, w, bias, residuals */
/* A tensor's layout between steps of one backend object. All zero: NCHW float32. A backend
   that never sets one (leaves step->output_layout alone) is only ever given NCHW. */
typedef struct fuse_backend_layout {
  const void *id; /* the backend's own description, owned by the producing step's state (it
                     lives as long as that state); NULL = NCHW float32 */
  size_t bytes;   /* the tensor's size in it, which may exceed NCHW's (padded channels): the
                     plan's workspace holds this many bytes, 64-byte aligned */
} fuse_backend_layout;
typedef struct fuse_backend_tensor {
  int rank;
  int64_t shape[FUSE_MAX_RANK];
  const float *data; /* a constant's values, readable during prepare only; else NULL */
  fuse_backend_layout layout; /* an operand another step of this backend produced in the
                                 layout its prepare declared; else all zero (NCHW) */
} fuse_backend_tensor;
/* a step's post-op as a backend sees it: kind, lo, hi and operand (fuse_post_op) */
typedef fuse_post_op fuse_backend_post;
typedef struct fuse_backend_step {
  fuse_backend_op op;     /* CONV2D: x [N,C,H,W], w [K,C/groups,KH,KW] -> [N,K,OH,OW];
                             MATMUL: numpy matmul x @ w, bias along the last axis */
  fuse_conv2d_attrs conv; /* CONV2D: strides, padding (top, left, bottom, right), dilation,
                             groups, zeros resolved (stride, dilation, groups >= 1) */
  int num_operands;       /* x, w, the bias if any, then the residuals in post-op order */
  fuse_backend_tensor operands[FUSE_BACKEND_MAX_OPERANDS];
  fuse_backend_tensor output;
  int bias;               /* index in operands of the per-output-channel bias [K], or -1 */
  int num_post;
  fuse_backend_post post[FUSE_MAX_POST_OPS]; /* after the bias, in order, once per element */
  const char *composite;  /* the composite's name, for messages only */
  int num_threads;        /* fuse_compile_options.num_threads (0 = the backend's default) */
  /* NULL: the output is NCHW. Else every step that reads the output is a fused step offered
     to this backend too (not a graph output, not read through a reshape): prepare may set
     *output_layout to write it in its own layout, which those steps' prepare then receives as
     operands[k].layout. Left zero: NCHW. Should one of them decline it or be taken by another
     backend, fuse_compile destroys the states it made and offers the steps again with that
     tensor NCHW (output_layout NULL). */
  fuse_backend_layout *output_layout;
} fuse_backend_step;
struct fuse_backend {
  const char *name;       /* takes the composites whose codegen is this, e.g. "dnnl" */
  void *user;
  /* At fuse_compile. FUSE_OK takes the step: *state is passed to run and destroy, *scratch_size
     is the bytes of workspace run may use. Anything else declines it, with a reason in why
     (why_size bytes, NUL-terminated); FUSE_ERROR_OUT_OF_MEMORY also fails the compile. */
  fuse_result (*prepare)(const fuse_backend *self, const fuse_backend_step *step, void **state,
                         size_t *scratch_size, char *why, size_t why_size);
  /* At fuse_run: the operands in the step's order (operands[1] is NULL when the weights were
     constant: the backend kept what it needs at prepare), the output (each in the layout
     prepare was told or declared), and scratch_size bytes, 64-byte aligned, of this caller's
     workspace, for every temporary buffer. May run concurrently on one state, each caller
     with its own workspace. Not FUSE_OK: fuse_run stops and returns it. */
  fuse_result (*run)(void *state, const float *const *operands, float *output, void *scratch);
  void (*destroy)(void *state); /* by fuse_plan_destroy (and a failed fuse_compile) */
};

/* ========================================================================== ONNX == */
/* A bounds-checked reader of ONNX protobuf files (no protobuf library), opsets 7-18: the
   operators PyTorch exports (convolutions 1-D and 2-D and transposed, Gemm / MatMul / Einsum,
   pools, normalizations, reductions, the activations, element-wise math, data movement,
   Resize, LSTM / GRU; README's "The loader" lists them), with the shape arithmetic around them
   (Shape, Gather, Concat, Range, If on a known condition, ...) folded at load over int64 /
   int32 / bool / float tensors; and quantized models (QuantizeLinear, DequantizeLinear,
   QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger, DynamicQuantizeLinear: uint8 / int8
   / int32 tensors through fuse_quantize / fuse_dequantize). A model with operators it does
   not know is refused with all of them listed at once. Graph inputs are the model's inputs
   that are not initializers, in order, of their element types (fuse_value_type). */
#if !defined(FUSE_NO_ONNX) && !defined(FUSE_RUNTIME_ONLY)
/* On failure *out is still a graph whose fuse_graph_error says why (NULL only if out of
   memory). */
FUSE_API fuse_result fuse_onnx_load_memory(const void *data, size_t size,
                                           const fuse_allocator *alloc, fuse_graph **out);
#ifndef FUSE_NO_STDIO
/* Maps the file (POSIX mmap) and leaves the large float32 weights in it, unread, until
   fuse_compile packs them; the graph keeps the mapping until fuse_graph_destroy (a plan does
   not need it). Leave the file as it is while the graph lives: as with any mapping, a file
   truncated under it makes a later read fault. FUSE_NO_MMAP (or a system without mmap)
   reads the file instead, every weight copied into the graph. */
FUSE_API fuse_result fuse_onnx_load_file(const char *path, const fuse_allocator *alloc,
                                         fuse_graph **out);
#endif
/* One TensorProto (the ONNX test suite's input_N.pb / output_N.pb files): float32, or uint8,
   int8, int32 (a quantized model's). data holds the values as floats whatever the type, so
   that a float caller reads any of them: exactly for uint8 and int8, for int32 while they stay
   within 2^24 in magnitude (beyond, the nearest float). type says what the file held: convert
   data to that type for fuse_run_typed. */
typedef struct fuse_onnx_tensor {
  char name[256];
  int rank;
  int64_t shape[FUSE_MAX_RANK];
  float *data;     /* numel floats from the allocator; fuse_onnx_tensor_free releases them */
  char error[256]; /* why a load failed */
  fuse_type type;  /* FUSE_FLOAT32, FUSE_UINT8, FUSE_INT8 or FUSE_INT32 */
} fuse_onnx_tensor;
FUSE_API fuse_result fuse_onnx_load_tensor(const void *data, size_t size,
                                           const fuse_allocator *alloc, fuse_onnx_tensor *out);
FUSE_API void fuse_onnx_tensor_free(fuse_onnx_tensor *t, const fuse_allocator *alloc);
#endif

#ifdef __cplusplus
}
#endif
#endif /* FUSE_H */
