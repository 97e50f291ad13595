/* fuse.h - v0.1.0 - fused conv / matmul epilogues for small neural-network graphs.
   Public domain-style single header (MIT, see the end of the file).

   THIS FILE IS GENERATED from the source tree in src/ by tools/amalgamate.sh; the markers
   "==== begin src/..." name the file each part comes from. Edit src/, then run `make fuse.h`
   and commit both (`make test` fails while they differ).

   fuse.h takes a neural-network graph (built in C, read from its text form, or loaded from
   an ONNX file), finds the chains a fused kernel can run in one pass - conv2d ->
   reshape(bias) -> add -> relu, matmul -> clip - wraps each into a named composite, analyzes
   its epilogue (bias, residual add, clamps in any operand order), and runs the graph with
   the epilogue applied once per output. One file, C99, no dependencies.

   QUICK START

       #define FUSE_IMPLEMENTATION       // in exactly one .c file
       #include "fuse.h"

       int64_t xs[4] = {1, 3, 32, 32}, ws[4] = {16, 3, 3, 3}, bs[1] = {16};
       fuse_graph *g = fuse_graph_create(NULL);
       fuse_value x = fuse_input(g, "image", 4, xs);
       fuse_value w = fuse_constant(g, "weight", 4, ws, weight_data);
       fuse_value b = fuse_constant(g, "bias", 1, bs, bias_data);
       fuse_conv2d_attrs conv = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};   // zero = defaults
       int64_t bshape[4] = {1, 16, 1, 1};
       fuse_value y = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, w, &conv),
                                            fuse_reshape(g, b, 4, bshape)));
       fuse_output(g, y);
       if (fuse_graph_status(g) != FUSE_OK) puts(fuse_graph_error(g));
       fuse_optimize(g, "fuse");        // the chain becomes one composite: one fused step

       fuse_plan *plan;
       if (fuse_compile(g, NULL, &plan) == FUSE_OK) {        // the graph may go now
         const float *in[1] = {image};  float *out[1] = {result};
         fuse_run(plan, in, out, NULL);                      // allocates nothing
         fuse_plan_destroy(plan);
       }
       fuse_graph_destroy(g);

   Or load a model: fuse_onnx_load_file("model.onnx", NULL, &g), then the same steps.
   Patterns of your own: fuse_ops_by_pattern(g, rules, n, NULL) with rules such as
   {"dnnl.conv2d_reshape_add_relu", "relu(add(conv2d($x, $w), reshape($b, *)))"}.

   Errors are values: every function returns a fuse_result or FUSE_NONE, and the graph keeps
   the first error as a message that names the op, its operands and their shapes.

   SECTIONS  public API: basics, graph, text form, patterns and passes, epilogue, compile and
   run, ONNX. Implementation: utilities, graph and shape inference, builders, pattern parser
   and matcher, passes (fuse_ops_by_pattern, merge, epilogue analyzer, batch-norm folding,
   rules), text printer and parser, cpu, plan, reference kernels, executor, ONNX reader.

   CONFIGURATION (define before including)

     FUSE_IMPLEMENTATION   compile the implementation into this translation unit
     FUSE_STATIC           make every function static (one private copy per unit)
     FUSE_API              the linkage of public functions (default: extern, or static)
     FUSE_MALLOC(size) / FUSE_FREE(ptr)   the default allocator (both or neither)
     FUSE_ASSERT(cond)     checks of the library's own invariants (default: assert)
     FUSE_NO_STDIO         no FILE* functions (fuse_graph_print, fuse_onnx_load_file)
     FUSE_NO_ONNX          leave the ONNX reader out
     FUSE_NO_SIMD, FUSE_NO_AVX2, FUSE_NO_AVX512   compile the AVX-512 / AVX2 kernels out
                           (the x86 paths are chosen at run time from cpuid)

   VERSION  0.1.0 - see CHANGELOG.md
*/
/* ==== begin src/api.h ==== */
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
/* Tensors are float32, NCHW for images; element-wise ops broadcast as numpy does. */

typedef struct fuse_graph fuse_graph;
typedef int32_t fuse_value; /* a tensor in a graph */
#define FUSE_NONE (-1)      /* returned by a builder that failed */
#define FUSE_MAX_RANK 8

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

/* ---- element-wise math (builders_math.c) ---- */
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

/* ---- data movement (builders_shape.c) ---- */
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

/* ---- reductions, normalizations (builders_nn.c) ---- */
typedef enum fuse_reduce_kind {
  FUSE_REDUCE_MEAN = 1, FUSE_REDUCE_SUM, FUSE_REDUCE_MAX, FUSE_REDUCE_MIN, FUSE_REDUCE_L2,
  FUSE_REDUCE_PROD, FUSE_REDUCE_SUM_SQUARE
} fuse_reduce_kind;
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

/* ---- transposed convolution, 1-D, recurrent layers (builders_layers.c) ---- */
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
FUSE_API fuse_result fuse_optimize(fuse_graph *g, const char *codegen); /* fold + rules + merge */

/* ============================================================== epilogue analysis == */

#define FUSE_MAX_POST_OPS 4
typedef enum fuse_post_kind { FUSE_POST_CLAMP = 1, FUSE_POST_ADD = 2 } fuse_post_kind;
/* One post-op: the one representation from the analyzer (tensor: a graph value) through the
   plan and its kernels to a backend (operand: an index into the step's operands). */
typedef struct fuse_post_op {
  fuse_post_kind kind;
  float lo, hi;      /* CLAMP: v = min(max(v, lo), hi); relu = [0, +inf], relu6 = [0, 6] */
  fuse_value tensor; /* ADD: residual, same shape as the output */
  int operand;       /* ADD, in a compiled step: v += operands[operand]; else -1 */
} fuse_post_op;
typedef struct fuse_epilogue {
  fuse_value reduction; /* the conv2d or matmul it follows */
  fuse_value bias;      /* per-output-channel [K] after undoing reshape, or FUSE_NONE */
  int num_post;
  fuse_post_op post[FUSE_MAX_POST_OPS]; /* applied in order, after bias */
  char why[200];        /* when the analysis fails: what is not an epilogue, and why */
} fuse_epilogue;
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

/* =============================================================== compile and run == */

typedef void (*fuse_task_fn)(void *ctx, int begin, int end);
typedef void (*fuse_parallel_for_fn)(void *user, fuse_task_fn task, void *ctx, int n);
typedef enum fuse_isa {
  FUSE_ISA_AUTO = 0,
  FUSE_ISA_SCALAR,
  FUSE_ISA_AVX2,
  FUSE_ISA_AVX512
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
} fuse_compile_options;

typedef struct fuse_plan fuse_plan;
/* Makes an immutable plan: it owns copies of the constants, so the graph may be destroyed. */
FUSE_API fuse_result fuse_compile(const fuse_graph *g, const fuse_compile_options *opt,
                                  fuse_plan **out);
FUSE_API size_t fuse_plan_workspace_size(const fuse_plan *p);
/* The plan's steps, one line each ("step 0: conv2d + bias + clamp[0, inf] -> 'y' (composite
   fuse.conv2d_bias_relu)"): what runs fused and what runs op by op. */
FUSE_API int fuse_plan_step_count(const fuse_plan *p);
/* Bytes the plan holds for constants: its copy of the graph's constants plus the weights the
   SIMD kernels packed at compile. */
FUSE_API size_t fuse_plan_weights_size(const fuse_plan *p);
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
FUSE_API void fuse_plan_destroy(fuse_plan *p);
FUSE_API fuse_isa fuse_cpu_isa(void); /* best ISA this CPU and build support */

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
   int32 / bool / float tensors. A model with operators it does not know is refused with all
   of them listed at once. Graph inputs are the model's inputs that are not initializers, in
   order. */
#ifndef FUSE_NO_ONNX
/* On failure *out is still a graph whose fuse_graph_error says why (NULL only if out of
   memory). */
FUSE_API fuse_result fuse_onnx_load_memory(const void *data, size_t size,
                                           const fuse_allocator *alloc, fuse_graph **out);
#ifndef FUSE_NO_STDIO
FUSE_API fuse_result fuse_onnx_load_file(const char *path, const fuse_allocator *alloc,
                                         fuse_graph **out);
#endif
/* One TensorProto (the ONNX test suite's input_N.pb / output_N.pb files), float32 only. */
typedef struct fuse_onnx_tensor {
  char name[256];
  int rank;
  int64_t shape[FUSE_MAX_RANK];
  float *data;     /* numel floats from the allocator; fuse_onnx_tensor_free releases them */
  char error[256]; /* why a load failed */
} fuse_onnx_tensor;
FUSE_API fuse_result fuse_onnx_load_tensor(const void *data, size_t size,
                                           const fuse_allocator *alloc, fuse_onnx_tensor *out);
FUSE_API void fuse_onnx_tensor_free(fuse_onnx_tensor *t, const fuse_allocator *alloc);
#endif

#ifdef __cplusplus
}
#endif
#endif /* FUSE_H */
/* ==== end src/api.h ==== */

/* ============================================================================
   IMPLEMENTATION
   ============================================================================ */
#if defined(FUSE_IMPLEMENTATION) && !defined(FUSE_IMPLEMENTATION_DONE)
#define FUSE_IMPLEMENTATION_DONE

/* ==== begin src/basics.c ==== */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#if defined(__linux__) && !defined(FUSE_NO_MMAP)
#include <sys/mman.h>
extern int madvise(void *addr, size_t len, int advice); /* not declared under -std=c99 */
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(FUSE_MALLOC) != defined(FUSE_FREE)
#error "fuse.h: define both FUSE_MALLOC and FUSE_FREE, or neither"
#endif
#ifndef FUSE_MALLOC
#include <stdlib.h>
#define FUSE_MALLOC(size) malloc(size)
#define FUSE_FREE(ptr) free(ptr)
#endif
#ifndef FUSE_ASSERT
#include <assert.h>
#define FUSE_ASSERT(cond) assert(cond)
#endif

#define FUSE__ALIGN 64                   /* tensors, constants and workspace blocks */
#define FUSE__MAX_DIM ((int64_t)0x7fffffff) /* keeps dim * attribute products in int64 */
#define FUSE__MAX_BYTES ((uint64_t)1 << 50)
#define FUSE__INLINE_CONST_MAX 4         /* constants this small print their values */

/* ---------------------------------------------------------------- allocator -- */

static void *fuse__alloc(const fuse_allocator *a, size_t size, size_t align) {
  void *p;
  if (size == 0) size = 1;
  if (a->alloc) {
    p = a->alloc(size, align, a->user);
    if (p && ((uintptr_t)p & (align - 1))) { /* the contract was broken: treat as failure */
      a->free(p, a->user);
      return NULL;
    }
    return p;
  } else {
    /* over-allocate, align, and keep the block's start just before the aligned pointer */
    unsigned char *raw;
    uintptr_t at;
    if (size > (size_t)-1 - align - sizeof(void *)) return NULL;
    raw = (unsigned char *)FUSE_MALLOC(size + align + sizeof(void *));
    if (!raw) return NULL;
    at = ((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1);
    memcpy((void *)(at - sizeof(void *)), &raw, sizeof(void *));
    return (void *)at;
  }
}

/* Asks the kernel to back [p, p + size) with written pages in one call, before a writer
   fills all of it: a fresh buffer otherwise takes one page fault per 4 KB as it is written,
   and on a 500 MB model those faults cost as much as the copy itself. Only a hint: where the
   call is missing (not Linux, a kernel before 5.14) the pages fault in as they are written. */
static void fuse__prefault(void *p, size_t size) {
#if defined(__linux__) && !defined(FUSE_NO_MMAP)
  const uintptr_t page = 4096;
  uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), b = ((uintptr_t)p + size) & ~(page - 1);
  if (size >= ((size_t)1 << 20) && b > a) (void)madvise((void *)a, (size_t)(b - a), 23);
#else
  (void)p, (void)size;
#endif
}

static void fuse__free(const fuse_allocator *a, void *p) {
  if (!p) return;
  if (a->alloc) {
    a->free(p, a->user);
  } else {
    void *raw;
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof(void *));
    FUSE_FREE(raw);
  }
}

/* Grows an array to hold at least `need` elements; returns the new block (old contents
   copied, old block freed) or NULL with the old block untouched. */
static void *fuse__grow(const fuse_allocator *a, void *old, int count, int *cap, int need,
                        size_t elem) {
  int new_cap;
  void *p;
  if (need <= *cap) return old;
  if (need > 0x3fffffff) return NULL;
  new_cap = *cap ? *cap : 8;
  while (new_cap < need) new_cap *= 2;
  if ((uint64_t)new_cap * elem > FUSE__MAX_BYTES) return NULL;
  p = fuse__alloc(a, (size_t)new_cap * elem, 16);
  if (!p) return NULL;
  if (old) {
    memcpy(p, old, (size_t)count * elem);
    fuse__free(a, old);
  }
  *cap = new_cap;
  return p;
}

/* ------------------------------------------------------------ text output -- */
/* One small writer serves error messages (fixed buffer, truncated) and the text form
   (flushed to the caller's callback). No stdio, no locale. */

typedef struct fuse__out {
  char *buf;
  size_t len, cap;
  fuse_write_fn write; /* NULL: truncate at cap - 1 and keep a terminating NUL */
  void *user;
} fuse__out;

static void fuse__flush(fuse__out *o) {
  if (o->write && o->len) o->write(o->user, o->buf, o->len);
  o->len = 0;
}

static void fuse__put(fuse__out *o, const char *s, size_t n) {
  while (n) {
    size_t room = o->cap - o->len - (o->write ? 0 : 1), k;
    if (room == 0) {
      if (!o->write) break;
      fuse__flush(o);
      continue;
    }
    k = n < room ? n : room;
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    s += k;
    n -= k;
  }
  if (!o->write) o->buf[o->len] = 0;
}

static void fuse__puts(fuse__out *o, const char *s) { fuse__put(o, s, strlen(s)); }

static void fuse__put_int(fuse__out *o, int64_t v) {
  char tmp[24];
  int n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[sizeof tmp - 1 - n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  if (v < 0) tmp[sizeof tmp - 1 - n++] = '-';
  fuse__put(o, tmp + sizeof tmp - n, (size_t)n);
}

static int fuse__is_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int fuse__is_ident_char(int c) {
  return fuse__is_ident_start(c) || (c >= '0' && c <= '9') || c == '.';
}

/* Reads an identifier at *p into out (at most cap - 1 characters, the rest skipped). */
static int fuse__scan_ident(const char **p, char *out, size_t cap) {
  size_t n = 0;
  if (!fuse__is_ident_start((unsigned char)**p)) return 0;
  for (; fuse__is_ident_char((unsigned char)**p); (*p)++)
    if (n + 1 < cap) out[n++] = **p;
  out[n] = 0;
  return 1;
}

/* 10^k as a double; exact for 0 <= k <= 22. */
static double fuse__pow10(int k) {
  static const double small[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  double r = 1;
  int neg = k < 0;
  if (neg) k = -k;
  while (k > 22) {
    r *= 1e22;
    k -= 22;
  }
  r *= small[k];
  return neg ? 1 / r : r;
}

/* Parses a decimal number ("-1.5e-3", "inf", "-inf", "nan") without the C locale.
   Returns the characters used, 0 if there is no number. */
static size_t fuse__parse_number(const char *s, double *out) {
  const char *p = s;
  uint64_t mant = 0;
  int digits = 0, exp10 = 0, neg = 0, any = 0;
  if (*p == '-' || *p == '+') neg = *p++ == '-';
  if (strncmp(p, "inf", 3) == 0) {
    *out = neg ? -HUGE_VAL : HUGE_VAL;
    return (size_t)(p + 3 - s);
  }
  if (strncmp(p, "nan", 3) == 0) {
    *out = NAN;
    return (size_t)(p + 3 - s);
  }
  for (; *p >= '0' && *p <= '9'; p++, any = 1) {
    if (digits < 19) {
      mant = mant * 10 + (uint64_t)(*p - '0');
      if (mant) digits++;
    } else {
      exp10++;
    }
  }
  if (*p == '.') {
    for (p++; *p >= '0' && *p <= '9'; p++, any = 1) {
      if (digits < 19) {
        mant = mant * 10 + (uint64_t)(*p - '0');
        if (mant) digits++;
        exp10--;
      }
    }
  }
  if (!any) return 0;
  if (*p == 'e' || *p == 'E') {
    const char *q = p + 1;
    int eneg = 0, e = 0, edigits = 0;
    if (*q == '-' || *q == '+') eneg = *q++ == '-';
    for (; *q >= '0' && *q <= '9'; q++, edigits++)
      if (e < 100000) e = e * 10 + (*q - '0');
    if (edigits) {
      exp10 += eneg ? -e : e;
      p = q;
    }
  }
  {
    double v = (double)mant; /* exact below 2^53, which our own output stays within */
    if (mant == 0 || exp10 < -400) v = 0;
    else if (exp10 > 400) v = HUGE_VAL;
    else if (exp10 >= 0) v *= fuse__pow10(exp10);
    else if (exp10 >= -22) v /= fuse__pow10(-exp10);
    else v = v / fuse__pow10(22) / fuse__pow10(-exp10 - 22);
    *out = neg ? -v : v;
  }
  return (size_t)(p - s);
}

/* Writes the shortest decimal that parses back to exactly v. */
static size_t fuse__format_float(char *out, float v) {
  double x = fabs((double)v);
  int prec;
  char *o = out;
  if (v != v) return (size_t)(strcpy(out, "nan"), 3);
  if (signbit(v)) *o++ = '-';
  if (x == HUGE_VAL) return (size_t)(strcpy(o, "inf"), o + 3 - out);
  if (x == 0) return (size_t)(strcpy(o, "0"), o + 1 - out);
  for (prec = 1; prec <= 12; prec++) {
    int e = (int)floor(log10(x));
    double scaled;
    if (x >= fuse__pow10(e + 1)) e++; /* log10 may be off by one next to powers of ten */
    if (x < fuse__pow10(e)) e--;
    uint64_t m, lim = (uint64_t)fuse__pow10(prec);
    char dig[24], *w = o;
    int nd, i, point;
    double back;
    scaled = (prec - 1 - e >= 0) ? x * fuse__pow10(prec - 1 - e) : x / fuse__pow10(e - prec + 1);
    m = (uint64_t)(scaled + 0.5);
    if (m >= lim) {
      m = (m + 5) / 10;
      e++;
    }
    for (nd = 0; nd < prec; nd++) { /* digits, most significant first */
      dig[prec - 1 - nd] = (char)('0' + (int)(m % 10));
      m /= 10;
    }
    while (nd > 1 && dig[nd - 1] == '0') nd--; /* drop trailing zeros */
    if (e >= -4 && e < 16) { /* plain notation, as %g would */
      point = e + 1;                             /* digits before the point */
      if (point <= 0) {
        *w++ = '0';
        *w++ = '.';
        for (i = 0; i < -point; i++) *w++ = '0';
        for (i = 0; i < nd; i++) *w++ = dig[i];
      } else {
        for (i = 0; i < point; i++) *w++ = i < nd ? dig[i] : '0';
        if (nd > point) {
          *w++ = '.';
          for (i = point; i < nd; i++) *w++ = dig[i];
        }
      }
    } else { /* d.ddde-05 */
      int ae = e < 0 ? -e : e;
      *w++ = dig[0];
      if (nd > 1) {
        *w++ = '.';
        for (i = 1; i < nd; i++) *w++ = dig[i];
      }
      *w++ = 'e';
      *w++ = e < 0 ? '-' : '+';
      if (ae >= 100) *w++ = (char)('0' + ae / 100);
      *w++ = (char)('0' + ae / 10 % 10);
      *w++ = (char)('0' + ae % 10);
    }
    *w = 0;
    if (fuse__parse_number(o, &back) && (float)back == (float)x) return (size_t)(w - out);
  }
  FUSE_ASSERT(0 && "fuse__format_float: no round-trip form found");
  return (size_t)(o - out);
}

static void fuse__put_float(fuse__out *o, float v) {
  char tmp[40];
  fuse__put(o, tmp, fuse__format_float(tmp, v));
}

static void fuse__put_dims(fuse__out *o, int n, const int64_t *d, const char *sep) {
  int i;
  fuse__puts(o, "[");
  for (i = 0; i < n; i++) {
    if (i) fuse__puts(o, sep);
    fuse__put_int(o, d[i]);
  }
  fuse__puts(o, "]");
}

/* ==== end src/basics.c ==== */
/* ==== begin src/graph.c ==== */
/* ---------------------------------------------------------------- the graph -- */

typedef enum fuse__op {
  FUSE__OP_INPUT,
  FUSE__OP_CONST,
  FUSE__OP_CONV2D,
  FUSE__OP_MATMUL,
  FUSE__OP_ADD,
  FUSE__OP_SUB,
  FUSE__OP_MUL,
  FUSE__OP_MAXIMUM,
  FUSE__OP_MINIMUM,
  FUSE__OP_RELU,
  FUSE__OP_CLIP,
  FUSE__OP_SIGMOID,
  FUSE__OP_RESHAPE,
  FUSE__OP_FLATTEN,
  FUSE__OP_CONCAT,
  FUSE__OP_SOFTMAX,
  FUSE__OP_BATCH_NORM,
  FUSE__OP_MAX_POOL2D,
  FUSE__OP_AVG_POOL2D,
  FUSE__OP_GLOBAL_AVG_POOL2D,
  FUSE__OP_TRANSPOSE,
  /* element-wise math (builders_math.c) */
  FUSE__OP_SQRT,
  FUSE__OP_RECIPROCAL,
  FUSE__OP_EXP,
  FUSE__OP_LOG,
  FUSE__OP_NEG,
  FUSE__OP_ABS,
  FUSE__OP_FLOOR,
  FUSE__OP_CEIL,
  FUSE__OP_ERF,
  FUSE__OP_TANH,
  FUSE__OP_SOFTPLUS,
  FUSE__OP_HARDSWISH,
  FUSE__OP_HARDSIGMOID, /* a.unary: alpha, beta */
  FUSE__OP_LEAKY_RELU,  /* alpha */
  FUSE__OP_ELU,         /* alpha */
  FUSE__OP_SELU,        /* alpha, beta = gamma */
  FUSE__OP_GELU,        /* mode = 1: the tanh approximation */
  FUSE__OP_DIV,
  FUSE__OP_POW,
  FUSE__OP_PRELU,
  FUSE__OP_WHERE,
  /* data movement (builders_shape.c) */
  FUSE__OP_SLICE,  /* a.slice */
  FUSE__OP_GATHER, /* operand 2: the indices as a float constant; a.axis */
  FUSE__OP_EXPAND,
  FUSE__OP_TILE,
  FUSE__OP_PAD,    /* a.pad */
  FUSE__OP_RESIZE, /* a.resize */
  /* reductions, normalizations (builders_nn.c) */
  FUSE__OP_REDUCE_MEAN, /* a.reduce */
  FUSE__OP_REDUCE_SUM,
  FUSE__OP_REDUCE_MAX,
  FUSE__OP_REDUCE_MIN,
  FUSE__OP_REDUCE_L2,
  FUSE__OP_REDUCE_PROD,
  FUSE__OP_REDUCE_SUM_SQUARE,
  FUSE__OP_LOG_SOFTMAX,      /* a.axis */
  FUSE__OP_LAYER_NORM,       /* a.norm: axis, eps; x, scale, bias */
  FUSE__OP_INSTANCE_NORM,    /* a.norm: eps */
  FUSE__OP_GROUP_NORM,       /* a.norm: groups, eps */
  /* transposed convolution (builders_layers.c) */
  FUSE__OP_CONV_TRANSPOSE2D, /* a.convt */
  FUSE__OP_COPY,    /* plan only: copies a value into an output buffer */
  FUSE__OP_TO_NHWC, /* plan only: layout conversions */
  FUSE__OP_TO_NCHW,
  FUSE__OP_COUNT
} fuse__op;

/* patterns keep a set of ops as the bits of a uint64_t */
typedef char fuse__ops_fit_a_pattern_mask[FUSE__OP_COPY <= 64 ? 1 : -1];

static const char *const fuse__op_names[FUSE__OP_COUNT] = {
    "input",   "const",   "conv2d",  "matmul",  "add",        "sub",        "mul",
    "maximum", "minimum", "relu",    "clip",    "sigmoid",    "reshape",    "flatten",
    "concat",  "softmax", "batch_norm", "max_pool2d", "avg_pool2d", "global_avg_pool2d",
    "transpose",
    "sqrt", "reciprocal", "exp", "log", "neg", "abs", "floor", "ceil", "erf", "tanh",
    "softplus", "hardswish", "hardsigmoid", "leaky_relu", "elu", "selu", "gelu", "div", "pow",
    "prelu", "where",
    "slice", "gather", "expand", "tile", "pad", "resize",
    "reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "reduce_l2", "reduce_prod",
    "reduce_sum_square", "log_softmax", "layer_norm", "instance_norm", "group_norm",
    "conv_transpose2d",
    "copy", "to_nhwc", "to_nchw"};

typedef union fuse__attrs {
  fuse_conv2d_attrs conv; /* normalized: no zeros */
  fuse_pool2d_attrs pool; /* normalized: no zeros */
  struct {
    float lo, hi;
  } clip;
  int axis; /* flatten, concat, softmax: normalized to 0..rank */
  int perm[FUSE_MAX_RANK]; /* transpose */
  float eps;
  struct {
    float alpha, beta;
    int mode;
  } unary; /* element-wise math's parameters */
  struct {
    int64_t start[FUSE_MAX_RANK], step[FUSE_MAX_RANK]; /* normalized: in range, per axis */
  } slice;
  struct {
    int pads[2 * FUSE_MAX_RANK]; /* begins, then ends; negative crops */
    float value;
    int mode; /* fuse_pad_mode */
  } pad;
  struct {
    float scales[FUSE_MAX_RANK];
    fuse_resize_attrs r; /* cubic_coeff_a normalized */
  } resize;
  struct {
    unsigned axes; /* bit i: axis i is reduced */
    int keepdims;
  } reduce;
  struct {
    int axis, groups;
    float eps;
  } norm;
  fuse_conv_transpose2d_attrs convt; /* normalized: no zeros */
} fuse__attrs;

typedef struct fuse__node {
  int op;
  int rank;
  int num_in;
  int64_t shape[FUSE_MAX_RANK];
  fuse_value *in; /* operands */
  char *name;     /* NULL: unnamed */
  float *data;    /* constants: numel floats, FUSE__ALIGN-aligned */
  int composite;  /* the composite this op belongs to, or -1 */
  fuse__attrs a;
} fuse__node;

/* A composite is a group of ops tagged in place: values keep their ids after fusion. */
typedef struct fuse__composite {
  char *name, *function, *codegen; /* codegen may be NULL */
  fuse_value root, first;          /* members lie in [first, root] (root is the last) */
  int region, num_ops, bind_constants;
} fuse__composite;

struct fuse_graph {
  fuse_allocator alloc;
  fuse__node *nodes;
  int num_nodes, cap_nodes;
  fuse_value *inputs, *outputs;
  int num_inputs, cap_inputs, num_outputs, cap_outputs;
  fuse_value *name_slots; /* open-addressing hash of named values; FUSE_NONE = empty */
  int name_cap, num_named;
  fuse__composite *composites;
  int num_composites, cap_composites;
  fuse_result status;
  char error[512];
};

static int64_t fuse__numel(int rank, const int64_t *shape) {
  int64_t n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= shape[i];
  return n;
}

static int fuse__valid(const fuse_graph *g, fuse_value v) {
  return g && v >= 0 && v < g->num_nodes;
}

static uint32_t fuse__hash(const char *s) {
  uint32_t h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

static fuse_value fuse__find(const fuse_graph *g, const char *name) {
  uint32_t i;
  if (!g->name_cap) return FUSE_NONE;
  for (i = fuse__hash(name) & (uint32_t)(g->name_cap - 1);; i = (i + 1) & (uint32_t)(g->name_cap - 1)) {
    fuse_value v = g->name_slots[i];
    if (v == FUSE_NONE) return FUSE_NONE;
    if (v >= 0 && strcmp(g->nodes[v].name, name) == 0) return v;
  }
}

/* Formats a message: %s string, %d int, %D int64_t, %f float, %S shape (int rank,
   const int64_t *dims), %V a value's label (fuse_value, graph g), %% percent. */
static void fuse__vformat(fuse__out *o, const fuse_graph *g, const char *fmt, va_list ap) {
  const char *p;
  for (p = fmt; *p; p++) {
    if (*p != '%') {
      fuse__put(o, p, 1);
      continue;
    }
    switch (*++p) {
    case 's': fuse__puts(o, va_arg(ap, const char *)); break;
    case 'd': fuse__put_int(o, va_arg(ap, int)); break;
    case 'D': fuse__put_int(o, va_arg(ap, int64_t)); break;
    case 'f': fuse__put_float(o, (float)va_arg(ap, double)); break;
    case 'S': {
      int r = va_arg(ap, int);
      fuse__put_dims(o, r, va_arg(ap, const int64_t *), ",");
      break;
    }
    case 'V': {
      fuse_value v = va_arg(ap, fuse_value);
      if (fuse__valid(g, v) && g->nodes[v].name) {
        fuse__puts(o, "'");
        fuse__puts(o, g->nodes[v].name);
        fuse__puts(o, "'");
      } else {
        fuse__puts(o, "%");
        fuse__put_int(o, v);
      }
      break;
    }
    case '%': fuse__put(o, "%", 1); break;
    default: FUSE_ASSERT(0 && "fuse__vformat: unknown directive"); return;
    }
  }
}

/* Records the graph's first error; returns FUSE_NONE so builders can `return fuse__fail(...)`. */
static fuse_value fuse__fail(fuse_graph *g, fuse_result r, const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  if (!g || g->status != FUSE_OK) return FUSE_NONE;
  g->status = r;
  o.buf = g->error;
  o.len = 0;
  o.cap = sizeof g->error;
  o.write = NULL;
  o.user = NULL;
  va_start(ap, fmt);
  fuse__vformat(&o, g, fmt, ap);
  va_end(ap);
  return FUSE_NONE;
}

static int fuse__oom(fuse_graph *g, const char *what) {
  fuse__fail(g, FUSE_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
  return 0;
}

static int fuse__name_insert(fuse_graph *g, fuse_value v) {
  uint32_t i;
  if ((g->num_named + 1) * 2 > g->name_cap) { /* keep the table at most half full */
    int cap = g->name_cap ? g->name_cap * 2 : 64, k;
    fuse_value *slots = (fuse_value *)fuse__alloc(&g->alloc, (size_t)cap * sizeof(fuse_value), 16);
    if (!slots) return 0;
    for (k = 0; k < cap; k++) slots[k] = FUSE_NONE;
    for (k = 0; k < g->name_cap; k++) {
      fuse_value u = g->name_slots[k];
      if (u < 0) continue;
      for (i = fuse__hash(g->nodes[u].name) & (uint32_t)(cap - 1); slots[i] != FUSE_NONE;
           i = (i + 1) & (uint32_t)(cap - 1)) {
      }
      slots[i] = u;
    }
    fuse__free(&g->alloc, g->name_slots);
    g->name_slots = slots;
    g->name_cap = cap;
  }
  for (i = fuse__hash(g->nodes[v].name) & (uint32_t)(g->name_cap - 1); g->name_slots[i] >= 0;
       i = (i + 1) & (uint32_t)(g->name_cap - 1)) {
  }
  g->name_slots[i] = v;
  g->num_named++;
  return 1;
}

static void fuse__name_remove(fuse_graph *g, fuse_value v) {
  uint32_t i;
  for (i = fuse__hash(g->nodes[v].name) & (uint32_t)(g->name_cap - 1); g->name_slots[i] != v;
       i = (i + 1) & (uint32_t)(g->name_cap - 1)) {
  }
  g->name_slots[i] = -2; /* tombstone: lookups continue past it */
}

static char *fuse__strdup(fuse_graph *g, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = (char *)fuse__alloc(&g->alloc, n, 1);
  if (p) memcpy(p, s, n);
  return p;
}

/* Gives v the name; `who` names the caller in messages. */
static int fuse__set_name(fuse_graph *g, fuse_value v, const char *name, const char *who) {
  fuse_value other;
  char *copy;
  if (!name) return 1;
  if (!*name) return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: a name may not be empty", who), 0;
  other = fuse__find(g, name);
  if (other != FUSE_NONE && other != v)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: name '%s' is already used by %s %%%d",
                      who, name, fuse__op_names[g->nodes[other].op], other),
           0;
  if (other == v) return 1;
  if (!(copy = fuse__strdup(g, name))) return fuse__oom(g, who);
  if (g->nodes[v].name) {
    fuse__name_remove(g, v);
    fuse__free(&g->alloc, g->nodes[v].name);
  }
  g->nodes[v].name = copy;
  if (!fuse__name_insert(g, v)) {
    g->nodes[v].name = NULL;
    fuse__free(&g->alloc, copy);
    return fuse__oom(g, who);
  }
  return 1;
}

/* Appends a node with its operands and shape; NULL (and the graph's error) when out of memory. */
static fuse__node *fuse__new_node(fuse_graph *g, int op, int num_in, const fuse_value *in,
                                  int rank, const int64_t *shape) {
  fuse__node *n, *nodes;
  int64_t dims[FUSE_MAX_RANK];
  if (rank) memcpy(dims, shape, (size_t)rank * sizeof(int64_t)); /* shape may be in g->nodes */
  nodes = (fuse__node *)fuse__grow(&g->alloc, g->nodes, g->num_nodes, &g->cap_nodes,
                                   g->num_nodes + 1, sizeof(fuse__node));
  if (!nodes) return fuse__oom(g, fuse__op_names[op]), (fuse__node *)NULL;
  g->nodes = nodes;
  n = &g->nodes[g->num_nodes];
  memset(n, 0, sizeof *n);
  n->op = op;
  n->rank = rank;
  n->composite = -1;
  if (rank) memcpy(n->shape, dims, (size_t)rank * sizeof(int64_t));
  if (num_in) {
    n->in = (fuse_value *)fuse__alloc(&g->alloc, (size_t)num_in * sizeof(fuse_value), 16);
    if (!n->in) return fuse__oom(g, fuse__op_names[op]), (fuse__node *)NULL;
    memcpy(n->in, in, (size_t)num_in * sizeof(fuse_value));
    n->num_in = num_in;
  }
  g->num_nodes++;
  return n;
}

static fuse_value fuse__id(const fuse_graph *g, const fuse__node *n) {
  return (fuse_value)(n - g->nodes);
}

/* ==== end src/graph.c ==== */
/* ==== begin src/builders.c ==== */
/* ---------------------------------------------------------------- builders -- */

/* Whether an enum argument holds one of its values lo..hi (through int: with short enums, as
   arm-none-eabi's, a direct comparison is "always false" to the compiler). */
static int fuse__enum_in(int v, int lo, int hi) { return v >= lo && v <= hi; }

/* Checks the common preconditions of a builder: a usable graph and valid operands. */
static int fuse__begin(fuse_graph *g, const char *op, int n, const fuse_value *in) {
  int i;
  if (!g || g->status != FUSE_OK) return 0;
  for (i = 0; i < n; i++) {
    if (in[i] == FUSE_NONE)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: operand %d is FUSE_NONE (did an earlier call fail?)", op, i + 1),
             0;
    if (!fuse__valid(g, in[i]))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: operand %d is %d, not a value of this graph (it has %d)", op, i + 1,
                        in[i], g->num_nodes),
             0;
  }
  return 1;
}

/* Validates a user-given shape: rank 0..FUSE_MAX_RANK, dims 1..FUSE__MAX_DIM, bytes in range. */
static int fuse__check_shape(fuse_graph *g, const char *who, int rank, const int64_t *shape) {
  int i;
  uint64_t n = 1;
  if (rank < 0 || rank > FUSE_MAX_RANK)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: rank %d is outside 0..%d", who, rank,
                      FUSE_MAX_RANK),
           0;
  if (rank > 0 && !shape)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: shape is NULL for rank %d", who, rank), 0;
  uint64_t max_elems = FUSE__MAX_BYTES / sizeof(float); /* the same on every target; memory
                                                          is checked where it is allocated */
  for (i = 0; i < rank; i++) {
    if (shape[i] < 1 || shape[i] > FUSE__MAX_DIM)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: dimension %d of %S is %D; dimensions must be 1..2147483647", who, i,
                        rank, shape, shape[i]),
             0;
    if (n > max_elems / (uint64_t)shape[i]) /* checked before multiplying: never wraps */
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: shape %S has too many elements (a tensor is at most 2^50 bytes)",
                        who, rank, shape),
             0;
    n *= (uint64_t)shape[i];
  }
  return 1;
}

static fuse__node *fuse__node_of(fuse_graph *g, fuse_value v) { return &g->nodes[v]; }

static void fuse__composite_free(fuse_graph *g, fuse__composite *c) {
  fuse__free(&g->alloc, c->name);
  fuse__free(&g->alloc, c->function);
  fuse__free(&g->alloc, c->codegen);
}

FUSE_API fuse_graph *fuse_graph_create(const fuse_allocator *alloc) {
  fuse_allocator a;
  fuse_graph *g;
  memset(&a, 0, sizeof a);
  if (alloc) {
    if (!alloc->alloc != !alloc->free) return NULL; /* both or neither */
    a = *alloc;
  }
  g = (fuse_graph *)fuse__alloc(&a, sizeof *g, 16);
  if (!g) return NULL;
  memset(g, 0, sizeof *g);
  g->alloc = a;
  return g;
}

FUSE_API void fuse_graph_destroy(fuse_graph *g) {
  int i;
  fuse_allocator a;
  if (!g) return;
  a = g->alloc;
  for (i = 0; i < g->num_nodes; i++) {
    fuse__free(&a, g->nodes[i].in);
    fuse__free(&a, g->nodes[i].name);
    fuse__free(&a, g->nodes[i].data);
  }
  fuse__free(&a, g->nodes);
  fuse__free(&a, g->inputs);
  fuse__free(&a, g->outputs);
  fuse__free(&a, g->name_slots);
  for (i = 0; i < g->num_composites; i++) fuse__composite_free(g, &g->composites[i]);
  fuse__free(&a, g->composites);
  fuse__free(&a, g);
}

FUSE_API const char *fuse_result_string(fuse_result r) {
  switch (r) {
  case FUSE_OK: return "ok";
  case FUSE_ERROR_INVALID_ARGUMENT: return "invalid argument";
  case FUSE_ERROR_SHAPE: return "shape mismatch";
  case FUSE_ERROR_OUT_OF_MEMORY: return "out of memory";
  case FUSE_ERROR_UNSUPPORTED: return "unsupported";
  case FUSE_ERROR_PARSE: return "parse error";
  case FUSE_ERROR_IO: return "input/output error";
  case FUSE_ERROR_BACKEND: return "backend error";
  }
  return "unknown fuse_result";
}

FUSE_API fuse_result fuse_graph_status(const fuse_graph *g) {
  return g ? g->status : FUSE_ERROR_INVALID_ARGUMENT;
}

FUSE_API const char *fuse_graph_error(const fuse_graph *g) {
  return g ? g->error : "the graph is NULL (fuse_graph_create ran out of memory?)";
}

/* An input or a constant; a constant's values are copied from data, zeros when data is NULL,
   left for the caller to fill when uninit. */
static fuse_value fuse__leaf(fuse_graph *g, int op, const char *name, int rank,
                             const int64_t *shape, const float *data, int uninit) {
  const char *who = fuse__op_names[op];
  char named[96]; /* "input 'x'": messages about the shape name the value */
  fuse__node *n;
  fuse_value v;
  size_t bytes;
  fuse__out o;
  o.buf = named;
  o.len = 0;
  o.cap = sizeof named;
  o.write = NULL;
  o.user = NULL;
  fuse__puts(&o, who);
  if (name) {
    fuse__puts(&o, " '");
    fuse__puts(&o, name);
    fuse__puts(&o, "'");
  }
  if (!fuse__begin(g, who, 0, NULL) || !fuse__check_shape(g, named, rank, shape)) return FUSE_NONE;
  if (name && fuse__find(g, name) != FUSE_NONE) {
    fuse__set_name(g, FUSE_NONE, name, who); /* reports the clash */
    return FUSE_NONE;
  }
  if (op == FUSE__OP_INPUT) {
    fuse_value *ins = (fuse_value *)fuse__grow(&g->alloc, g->inputs, g->num_inputs,
                                               &g->cap_inputs, g->num_inputs + 1, sizeof(fuse_value));
    if (!ins) return fuse__oom(g, who), FUSE_NONE;
    g->inputs = ins;
  }
  if (!(n = fuse__new_node(g, op, 0, NULL, rank, shape))) return FUSE_NONE;
  v = fuse__id(g, n);
  if (op == FUSE__OP_CONST) {
    if ((uint64_t)fuse__numel(n->rank, n->shape) > (uint64_t)((size_t)-1 / 2 / sizeof(float))) {
      g->num_nodes--;
      return fuse__fail(g, FUSE_ERROR_OUT_OF_MEMORY,
                        "%s: %S is larger than this target's address space", named, rank, shape);
    }
    bytes = (size_t)fuse__numel(n->rank, n->shape) * sizeof(float); /* shape may have moved */
    n->data = (float *)fuse__alloc(&g->alloc, bytes, FUSE__ALIGN);
    if (!n->data) {
      g->num_nodes--;
      return fuse__oom(g, named), FUSE_NONE;
    }
    if (uninit) fuse__prefault(n->data, bytes); /* the loader writes it all */
    if (data) memcpy(n->data, data, bytes);
    else if (!uninit) memset(n->data, 0, bytes);
  }
  if (!fuse__set_name(g, v, name, who)) {
    fuse__free(&g->alloc, n->data);
    g->num_nodes--;
    return FUSE_NONE;
  }
  if (op == FUSE__OP_INPUT) g->inputs[g->num_inputs++] = v;
  return v;
}

FUSE_API fuse_value fuse_input(fuse_graph *g, const char *name, int rank, const int64_t *shape) {
  return fuse__leaf(g, FUSE__OP_INPUT, name, rank, shape, NULL, 0);
}

FUSE_API fuse_value fuse_constant(fuse_graph *g, const char *name, int rank,
                                  const int64_t *shape, const float *data) {
  return fuse__leaf(g, FUSE__OP_CONST, name, rank, shape, data, 0);
}

FUSE_API fuse_value fuse_scalar(fuse_graph *g, float v) {
  return fuse__leaf(g, FUSE__OP_CONST, NULL, 0, NULL, &v, 0);
}

FUSE_API fuse_result fuse_output(fuse_graph *g, fuse_value v) {
  fuse_value *outs;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!fuse__begin(g, "output", 1, &v)) return g->status;
  outs = (fuse_value *)fuse__grow(&g->alloc, g->outputs, g->num_outputs, &g->cap_outputs,
                                  g->num_outputs + 1, sizeof(fuse_value));
  if (!outs) return fuse__oom(g, "output"), g->status;
  g->outputs = outs;
  g->outputs[g->num_outputs++] = v;
  return FUSE_OK;
}

FUSE_API fuse_result fuse_value_set_name(fuse_graph *g, fuse_value v, const char *name) {
  if (!fuse__begin(g, "set_name", 1, &v)) return g ? g->status : FUSE_ERROR_INVALID_ARGUMENT;
  if (!name) {
    if (g->nodes[v].name) {
      fuse__name_remove(g, v);
      fuse__free(&g->alloc, g->nodes[v].name);
      g->nodes[v].name = NULL;
    }
    return FUSE_OK;
  }
  return fuse__set_name(g, v, name, "set_name") ? FUSE_OK : g->status;
}

/* numpy broadcasting of two shapes; 0 if they do not broadcast */
static int fuse__broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int *r,
                           int64_t *out) {
  int i, n = ra > rb ? ra : rb;
  for (i = 0; i < n; i++) {
    int64_t da = i < n - ra ? 1 : a[i - (n - ra)], db = i < n - rb ? 1 : b[i - (n - rb)];
    if (da != db && da != 1 && db != 1) return 0;
    out[i] = da == 1 ? db : da;
  }
  *r = n;
  return 1;
}

static fuse_value fuse__binary(fuse_graph *g, int op, fuse_value a, fuse_value b) {
  fuse_value in[2];
  int64_t shape[FUSE_MAX_RANK];
  int rank;
  fuse__node *na, *nb, *n;
  in[0] = a;
  in[1] = b;
  if (!fuse__begin(g, fuse__op_names[op], 2, in)) return FUSE_NONE;
  na = fuse__node_of(g, a);
  nb = fuse__node_of(g, b);
  if (!fuse__broadcast(na->rank, na->shape, nb->rank, nb->shape, &rank, shape))
    return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: shapes %S (%V) and %S (%V) do not broadcast",
                      fuse__op_names[op], na->rank, na->shape, a, nb->rank, nb->shape, b);
  if (!fuse__check_shape(g, fuse__op_names[op], rank, shape)) return FUSE_NONE;
  n = fuse__new_node(g, op, 2, in, rank, shape);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_add(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_ADD, a, b);
}
FUSE_API fuse_value fuse_sub(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_SUB, a, b);
}
FUSE_API fuse_value fuse_mul(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_MUL, a, b);
}
FUSE_API fuse_value fuse_maximum(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_MAXIMUM, a, b);
}
FUSE_API fuse_value fuse_minimum(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_MINIMUM, a, b);
}

/* An op whose result has the operand's shape. */
static fuse__node *fuse__unary(fuse_graph *g, int op, fuse_value x) {
  fuse__node *nx;
  if (!fuse__begin(g, fuse__op_names[op], 1, &x)) return NULL;
  nx = fuse__node_of(g, x);
  return fuse__new_node(g, op, 1, &x, nx->rank, nx->shape);
}

FUSE_API fuse_value fuse_relu(fuse_graph *g, fuse_value x) {
  fuse__node *n = fuse__unary(g, FUSE__OP_RELU, x);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_sigmoid(fuse_graph *g, fuse_value x) {
  fuse__node *n = fuse__unary(g, FUSE__OP_SIGMOID, x);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_clip(fuse_graph *g, fuse_value x, float lo, float hi) {
  fuse__node *n;
  if (g && g->status == FUSE_OK && !(lo <= hi)) /* also catches NaN */
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "clip: bounds lo=%f, hi=%f must be numbers with lo <= hi", (double)lo,
                      (double)hi);
  if (!(n = fuse__unary(g, FUSE__OP_CLIP, x))) return FUSE_NONE;
  n->a.clip.lo = lo;
  n->a.clip.hi = hi;
  return fuse__id(g, n);
}

/* Fills a zero entry with `def`, refuses negative ones. */
static int fuse__attr_positive(fuse_graph *g, const char *op, const char *what, int *v, int n,
                               int def, int allow_zero_default) {
  int i;
  for (i = 0; i < n; i++) {
    if (v[i] == 0 && allow_zero_default) v[i] = def;
    if (v[i] < 1) {
      int64_t d[4];
      int k;
      for (k = 0; k < n; k++) d[k] = v[k];
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: %s %S must be >= 1", op, what, n, d),
             0;
    }
  }
  return 1;
}

static int fuse__attr_padding(fuse_graph *g, const char *op, const int *pad) {
  int i;
  for (i = 0; i < 4; i++)
    if (pad[i] < 0) {
      int64_t d[4];
      int k;
      for (k = 0; k < 4; k++) d[k] = pad[k];
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: padding %S (top, left, bottom, right) must be >= 0", op, 4, d),
             0;
    }
  return 1;
}

/* 1-D inputs [N, C, L] run as the 2-D op over [N, C, 1, L]: x (or w) gains a unit H axis */
static fuse_value fuse__as_2d(fuse_graph *g, fuse_value v) {
  int64_t shape[4];
  if (v == FUSE_NONE || g->status != FUSE_OK) return FUSE_NONE;
  shape[0] = g->nodes[v].shape[0];
  shape[1] = g->nodes[v].shape[1];
  shape[2] = 1;
  shape[3] = g->nodes[v].shape[2];
  return fuse_reshape(g, v, 4, shape);
}

/* ... and the 2-D result [N, K, 1, OL] loses it again */
static fuse_value fuse__as_1d(fuse_graph *g, fuse_value v) {
  int64_t shape[3];
  if (v == FUSE_NONE || g->status != FUSE_OK) return FUSE_NONE;
  shape[0] = g->nodes[v].shape[0];
  shape[1] = g->nodes[v].shape[1];
  shape[2] = g->nodes[v].shape[3];
  return fuse_reshape(g, v, 3, shape);
}

/* An attribute's H entry for a 1-D input must be 0 or `def` (the W entries apply). */
static int fuse__1d_default(fuse_graph *g, const char *op, fuse_value x, const char *what, int v,
                            int def) {
  if (v == 0 || v == def) return 1;
  return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                    "%s: input %S (%V) is 1-D, so the H entry of %s must be %d, not %d (the W "
                    "entries apply)",
                    op, g->nodes[x].rank, g->nodes[x].shape, x, what, def, v),
         0;
}

FUSE_API fuse_value fuse_conv2d(fuse_graph *g, fuse_value x, fuse_value w,
                                const fuse_conv2d_attrs *attrs) {
  fuse_value in[2];
  fuse_conv2d_attrs a;
  fuse__node *nx, *nw, *n;
  int64_t out[4], C, K;
  int i;
  in[0] = x;
  in[1] = w;
  if (!fuse__begin(g, "conv2d", 2, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  nw = fuse__node_of(g, w);
  if (nx->rank == 3) { /* 1-D: w [K, C / groups, KL] */
    if (nw->rank != 3)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "conv2d: 1-D input %S (%V) needs a 3-D weight [K,C/groups,KL], not %S (%V)",
                        nx->rank, nx->shape, x, nw->rank, nw->shape, w);
    memset(&a, 0, sizeof a);
    if (attrs) a = *attrs;
    if (!fuse__1d_default(g, "conv2d", x, "strides", a.strides[0], 1) ||
        !fuse__1d_default(g, "conv2d", x, "dilation", a.dilation[0], 1) ||
        !fuse__1d_default(g, "conv2d", x, "padding (top)", a.padding[0], 0) ||
        !fuse__1d_default(g, "conv2d", x, "padding (bottom)", a.padding[2], 0))
      return FUSE_NONE;
    return fuse__as_1d(g, fuse_conv2d(g, fuse__as_2d(g, x), fuse__as_2d(g, w), &a));
  }
  if (nx->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv2d: input %S (%V) must be 4-D [N,C,H,W] (or 3-D [N,C,L])", nx->rank,
                      nx->shape, x);
  if (nw->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "conv2d: weight %S (%V) must be 4-D [K,C/groups,KH,KW]",
                      nw->rank, nw->shape, w);
  memset(&a, 0, sizeof a);
  if (attrs) a = *attrs;
  if (!fuse__attr_positive(g, "conv2d", "strides", a.strides, 2, 1, 1) ||
      !fuse__attr_positive(g, "conv2d", "dilation", a.dilation, 2, 1, 1) ||
      !fuse__attr_padding(g, "conv2d", a.padding) ||
      !fuse__attr_positive(g, "conv2d", "groups", &a.groups, 1, 1, 1))
    return FUSE_NONE;
  C = nx->shape[1];
  K = nw->shape[0];
  if (nw->shape[1] * a.groups != C)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv2d: input %S has %D channels, weight %S expects %D (groups=%d)",
                      nx->rank, nx->shape, C, nw->rank, nw->shape, nw->shape[1] * a.groups,
                      a.groups);
  if (K % a.groups)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv2d: weight %S has %D output channels, not divisible by groups=%d",
                      nw->rank, nw->shape, K, a.groups);
  out[0] = nx->shape[0];
  out[1] = K;
  for (i = 0; i < 2; i++) {
    int64_t span = nx->shape[2 + i] + a.padding[i] + a.padding[i + 2] -
                   (int64_t)a.dilation[i] * (nw->shape[2 + i] - 1) - 1;
    if (span < 0)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "conv2d: kernel %Dx%D with dilation %dx%d is larger than input %S with "
                        "padding [%d,%d,%d,%d]",
                        nw->shape[2], nw->shape[3], a.dilation[0], a.dilation[1], nx->rank,
                        nx->shape, a.padding[0], a.padding[1], a.padding[2], a.padding[3]);
    out[2 + i] = span / a.strides[i] + 1;
  }
  /* huge padding makes huge outputs: 2^31 - 1 on each side of 8 rows is 2^32 + 6 rows */
  if (!fuse__check_shape(g, "conv2d", 4, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_CONV2D, 2, in, 4, out))) return FUSE_NONE;
  n->a.conv = a;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_matmul(fuse_graph *g, fuse_value a, fuse_value b) {
  fuse_value in[2];
  fuse__node *na, *nb, *n;
  int64_t shape[FUSE_MAX_RANK], M, K, K2, N;
  int rank, batch_rank;
  in[0] = a;
  in[1] = b;
  if (!fuse__begin(g, "matmul", 2, in)) return FUSE_NONE;
  na = fuse__node_of(g, a);
  nb = fuse__node_of(g, b);
  if (na->rank < 1 || nb->rank < 1)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "matmul: operands %S and %S must have rank >= 1",
                      na->rank, na->shape, nb->rank, nb->shape);
  M = na->rank == 1 ? 1 : na->shape[na->rank - 2];
  K = na->shape[na->rank - 1];
  K2 = nb->rank == 1 ? nb->shape[0] : nb->shape[nb->rank - 2];
  N = nb->rank == 1 ? 1 : nb->shape[nb->rank - 1];
  if (K != K2)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "matmul: inner dimensions differ: %S has %D columns, %S has %D rows",
                      na->rank, na->shape, K, nb->rank, nb->shape, K2);
  if (!fuse__broadcast(na->rank > 2 ? na->rank - 2 : 0, na->shape,
                       nb->rank > 2 ? nb->rank - 2 : 0, nb->shape, &batch_rank, shape))
    return fuse__fail(g, FUSE_ERROR_SHAPE, "matmul: batch dimensions of %S and %S do not broadcast",
                      na->rank, na->shape, nb->rank, nb->shape);
  rank = batch_rank;
  if (na->rank > 1) shape[rank++] = M;
  if (nb->rank > 1) shape[rank++] = N;
  if (!fuse__check_shape(g, "matmul", rank, shape)) return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_MATMUL, 2, in, rank, shape);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_reshape(fuse_graph *g, fuse_value x, int rank, const int64_t *shape) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK], known = 1, total;
  int i, infer = -1;
  if (!fuse__begin(g, "reshape", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (rank < 0 || rank > FUSE_MAX_RANK || (rank > 0 && !shape))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "reshape: target rank %d (shape %s) must be 0..8 with a shape", rank,
                      shape ? "given" : "NULL");
  total = fuse__numel(nx->rank, nx->shape);
  for (i = 0; i < rank; i++) {
    out[i] = shape[i];
    if (shape[i] == -1 && infer < 0) {
      infer = i;
    } else if (shape[i] < 1 || shape[i] > FUSE__MAX_DIM) {
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "reshape: target %S of %S: dimension %d is %D (one -1, others >= 1)",
                        rank, shape, nx->rank, nx->shape, i, shape[i]);
    } else {
      known *= shape[i];
      if (known > total) break;
    }
  }
  if (i < rank || (infer < 0 && known != total) || (infer >= 0 && total % known))
    return fuse__fail(g, FUSE_ERROR_SHAPE, "reshape: %S (%D elements) cannot become %S",
                      nx->rank, nx->shape, total, rank, shape);
  if (infer >= 0) out[infer] = total / known;
  if (!fuse__check_shape(g, "reshape", rank, out)) return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_RESHAPE, 1, &x, rank, out);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

/* Normalizes an axis in [-limit, limit) (or [-limit, limit] when `inclusive`). */
static int fuse__axis(fuse_graph *g, const char *op, int axis, int limit, int inclusive,
                      const fuse__node *x, int *out) {
  int hi = inclusive ? limit : limit - 1;
  if (axis < -limit || axis > hi)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: axis %d is outside %d..%d for %S", op,
                      axis, -limit, hi, x->rank, x->shape),
           0;
  *out = axis < 0 ? axis + limit : axis;
  return 1;
}

FUSE_API fuse_value fuse_flatten(fuse_graph *g, fuse_value x, int axis) {
  fuse__node *nx, *n;
  int64_t out[2];
  int ax;
  if (!fuse__begin(g, "flatten", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (!fuse__axis(g, "flatten", axis, nx->rank, 1, nx, &ax)) return FUSE_NONE;
  out[0] = fuse__numel(ax, nx->shape);
  out[1] = fuse__numel(nx->rank - ax, nx->shape + ax);
  if (!fuse__check_shape(g, "flatten", 2, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_FLATTEN, 1, &x, 2, out))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_transpose(fuse_graph *g, fuse_value x, const int *perm) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int p[FUSE_MAX_RANK], seen[FUSE_MAX_RANK], i;
  if (!fuse__begin(g, "transpose", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  memset(seen, 0, sizeof seen);
  for (i = 0; i < nx->rank; i++) {
    p[i] = perm ? perm[i] : nx->rank - 1 - i;
    if (p[i] < 0 || p[i] >= nx->rank || seen[p[i]]++)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "transpose: perm is not a permutation of 0..%d for %S", nx->rank - 1,
                        nx->rank, nx->shape);
    out[i] = nx->shape[p[i]];
  }
  if (!(n = fuse__new_node(g, FUSE__OP_TRANSPOSE, 1, &x, nx->rank, out))) return FUSE_NONE;
  memcpy(n->a.perm, p, sizeof p);
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_concat(fuse_graph *g, int count, const fuse_value *xs, int axis) {
  fuse__node *first, *n;
  int64_t out[FUSE_MAX_RANK];
  int i, d, ax;
  if (!g || g->status != FUSE_OK) return FUSE_NONE;
  if (count < 1 || !xs)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "concat: needs at least one value (n=%d%s)",
                      count, xs ? "" : ", xs NULL");
  if (!fuse__begin(g, "concat", count, xs)) return FUSE_NONE;
  first = fuse__node_of(g, xs[0]);
  if (first->rank < 1)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "concat: operand 1 (%V) is a scalar", xs[0]);
  if (!fuse__axis(g, "concat", axis, first->rank, 0, first, &ax)) return FUSE_NONE;
  memcpy(out, first->shape, sizeof out);
  for (i = 1; i < count; i++) {
    const fuse__node *xi = fuse__node_of(g, xs[i]);
    int ok = xi->rank == first->rank;
    for (d = 0; ok && d < first->rank; d++) ok = d == ax || xi->shape[d] == first->shape[d];
    if (!ok)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "concat: operand %d %S does not match operand 1 %S outside axis %d",
                        i + 1, xi->rank, xi->shape, first->rank, first->shape, ax);
    out[ax] += xi->shape[ax];
    if (out[ax] > FUSE__MAX_DIM) break;
  }
  if (!fuse__check_shape(g, "concat", first->rank, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_CONCAT, count, xs, first->rank, out))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_softmax(fuse_graph *g, fuse_value x, int axis) {
  fuse__node *nx, *n;
  int ax;
  if (!fuse__begin(g, "softmax", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "softmax: input %V is a scalar", x);
  if (!fuse__axis(g, "softmax", axis, nx->rank, 0, nx, &ax)) return FUSE_NONE;
  if (!(n = fuse__unary(g, FUSE__OP_SOFTMAX, x))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_batch_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                    fuse_value bias, fuse_value mean, fuse_value var, float eps) {
  static const char *const names[4] = {"scale", "bias", "mean", "var"};
  fuse_value in[5];
  fuse__node *nx, *n;
  int i;
  in[0] = x;
  in[1] = scale;
  in[2] = bias;
  in[3] = mean;
  in[4] = var;
  if (!fuse__begin(g, "batch_norm", 5, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 2)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "batch_norm: input %S must have rank >= 2 [N,C,...]",
                      nx->rank, nx->shape);
  for (i = 1; i < 5; i++) {
    const fuse__node *p = fuse__node_of(g, in[i]);
    if (p->rank != 1 || p->shape[0] != nx->shape[1])
      return fuse__fail(g, FUSE_ERROR_SHAPE, "batch_norm: %s %S must be [%D] for input %S",
                        names[i - 1], p->rank, p->shape, nx->shape[1], nx->rank, nx->shape);
  }
  if (!(eps >= 0))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "batch_norm: eps=%f must be >= 0",
                      (double)eps);
  if (!(n = fuse__new_node(g, FUSE__OP_BATCH_NORM, 5, in, nx->rank, nx->shape))) return FUSE_NONE;
  n->a.eps = eps;
  return fuse__id(g, n);
}

static fuse_value fuse__pool(fuse_graph *g, int op, fuse_value x, const fuse_pool2d_attrs *attrs) {
  const char *name = fuse__op_names[op];
  fuse_pool2d_attrs a;
  fuse__node *nx, *n;
  int64_t out[4];
  int i;
  if (!fuse__begin(g, name, 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (!attrs)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: attributes are NULL (kernel is required)",
                      name);
  a = *attrs;
  if (nx->rank == 3) { /* 1-D */
    if (!fuse__1d_default(g, name, x, "kernel", a.kernel[0], 1) ||
        !fuse__1d_default(g, name, x, "strides", a.strides[0], 1) ||
        !fuse__1d_default(g, name, x, "dilation", a.dilation[0], 1) ||
        !fuse__1d_default(g, name, x, "padding (top)", a.padding[0], 0) ||
        !fuse__1d_default(g, name, x, "padding (bottom)", a.padding[2], 0))
      return FUSE_NONE;
    a.kernel[0] = 1;
    return fuse__as_1d(g, fuse__pool(g, op, fuse__as_2d(g, x), &a));
  }
  if (nx->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: input %S (%V) must be 4-D [N,C,H,W] (or 3-D [N,C,L])",
                      name, nx->rank, nx->shape, x);
  if (!fuse__attr_positive(g, name, "kernel", a.kernel, 2, 0, 0) ||
      !fuse__attr_positive(g, name, "strides", a.strides, 2, 1, 1) ||
      !fuse__attr_positive(g, name, "dilation", a.dilation, 2, 1, 1) ||
      !fuse__attr_padding(g, name, a.padding))
    return FUSE_NONE;
  if (op == FUSE__OP_AVG_POOL2D && (a.dilation[0] != 1 || a.dilation[1] != 1))
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED, "avg_pool2d: dilation [%d,%d] is not supported",
                      a.dilation[0], a.dilation[1]);
  a.ceil_mode = a.ceil_mode != 0;
  a.count_include_pad = op == FUSE__OP_AVG_POOL2D && a.count_include_pad != 0;
  out[0] = nx->shape[0];
  out[1] = nx->shape[1];
  for (i = 0; i < 2; i++) {
    int64_t eff = (int64_t)a.dilation[i] * (a.kernel[i] - 1) + 1;
    int64_t span = nx->shape[2 + i] + a.padding[i] + a.padding[i + 2] - eff;
    if (a.padding[i] >= eff || a.padding[i + 2] >= eff)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: padding [%d,%d,%d,%d] must be smaller than the kernel's extent %D",
                        name, a.padding[0], a.padding[1], a.padding[2], a.padding[3], eff);
    if (span < 0)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "%s: kernel [%d,%d] (dilation [%d,%d]) is larger than input %S with padding",
                        name, a.kernel[0], a.kernel[1], a.dilation[0], a.dilation[1], nx->rank,
                        nx->shape);
    out[2 + i] = (a.ceil_mode ? (span + a.strides[i] - 1) / a.strides[i] : span / a.strides[i]) + 1;
    /* the last window must start inside the input or the leading padding */
    if (a.ceil_mode && (out[2 + i] - 1) * a.strides[i] >= nx->shape[2 + i] + a.padding[i])
      out[2 + i]--;
  }
  if (!fuse__check_shape(g, name, 4, out)) return FUSE_NONE; /* huge padding, huge output */
  if (!(n = fuse__new_node(g, op, 1, &x, 4, out))) return FUSE_NONE;
  n->a.pool = a;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_max_pool2d(fuse_graph *g, fuse_value x, const fuse_pool2d_attrs *a) {
  return fuse__pool(g, FUSE__OP_MAX_POOL2D, x, a);
}

FUSE_API fuse_value fuse_avg_pool2d(fuse_graph *g, fuse_value x, const fuse_pool2d_attrs *a) {
  return fuse__pool(g, FUSE__OP_AVG_POOL2D, x, a);
}

FUSE_API fuse_value fuse_global_avg_pool2d(fuse_graph *g, fuse_value x) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int i;
  if (!fuse__begin(g, "global_avg_pool2d", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 3)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "global_avg_pool2d: input %S must have rank >= 3",
                      nx->rank, nx->shape);
  memcpy(out, nx->shape, sizeof out);
  for (i = 2; i < nx->rank; i++) out[i] = 1;
  n = fuse__new_node(g, FUSE__OP_GLOBAL_AVG_POOL2D, 1, &x, nx->rank, out);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

/* ---------------------------------------------------------------- accessors -- */

FUSE_API int fuse_value_rank(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? g->nodes[v].rank : -1;
}
FUSE_API const int64_t *fuse_value_shape(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? g->nodes[v].shape : NULL;
}
FUSE_API const char *fuse_value_name(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? g->nodes[v].name : NULL;
}
FUSE_API fuse_value fuse_graph_find(const fuse_graph *g, const char *name) {
  return g && name ? fuse__find(g, name) : FUSE_NONE;
}
FUSE_API int fuse_graph_op_count(const fuse_graph *g) {
  int i, n = 0;
  if (!g) return 0;
  for (i = 0; i < g->num_nodes; i++) /* a composite counts once */
    n += g->nodes[i].op > FUSE__OP_CONST && g->nodes[i].composite < 0;
  return n + g->num_composites;
}
FUSE_API int fuse_graph_input_count(const fuse_graph *g) { return g ? g->num_inputs : 0; }
FUSE_API int fuse_graph_output_count(const fuse_graph *g) { return g ? g->num_outputs : 0; }
FUSE_API fuse_value fuse_graph_input(const fuse_graph *g, int i) {
  return g && i >= 0 && i < g->num_inputs ? g->inputs[i] : FUSE_NONE;
}
FUSE_API fuse_value fuse_graph_output(const fuse_graph *g, int i) {
  return g && i >= 0 && i < g->num_outputs ? g->outputs[i] : FUSE_NONE;
}


/* ==== end src/builders.c ==== */
/* ==== begin src/builders_math.c ==== */
/* ------------------------------------------------------------ builders: math -- */
/* element-wise math: unary functions, div, pow, prelu, where, variadic sum / mean / max / min */

/* A unary math op with its parameters (a.unary); the parameters must be numbers. */
static fuse_value fuse__math_unary(fuse_graph *g, int op, fuse_value x, float alpha, float beta,
                                   int mode) {
  fuse__node *n;
  if (g && g->status == FUSE_OK && (alpha != alpha || beta != beta))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: parameters %f, %f must not be NaN",
                      fuse__op_names[op], (double)alpha, (double)beta);
  if (!(n = fuse__unary(g, op, x))) return FUSE_NONE;
  n->a.unary.alpha = alpha;
  n->a.unary.beta = beta;
  n->a.unary.mode = mode;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_div(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_DIV, a, b);
}
FUSE_API fuse_value fuse_pow(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_POW, a, b);
}

FUSE_API fuse_value fuse_prelu(fuse_graph *g, fuse_value x, fuse_value slope) {
  fuse_value in[2];
  int64_t shape[FUSE_MAX_RANK];
  int rank, i, same;
  fuse__node *nx, *ns, *n;
  in[0] = x;
  in[1] = slope;
  if (!fuse__begin(g, "prelu", 2, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  ns = fuse__node_of(g, slope);
  same = fuse__broadcast(nx->rank, nx->shape, ns->rank, ns->shape, &rank, shape) &&
         rank == nx->rank;
  for (i = 0; same && i < rank; i++) same = shape[i] == nx->shape[i];
  if (!same) /* unidirectional: the output keeps x's shape */
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "prelu: slope %S (%V) does not broadcast to x %S (%V) "
                      "(per channel: [C, 1, 1])",
                      ns->rank, ns->shape, slope, nx->rank, nx->shape, x);
  n = fuse__new_node(g, FUSE__OP_PRELU, 2, in, nx->rank, nx->shape);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_where(fuse_graph *g, fuse_value cond, fuse_value a, fuse_value b) {
  fuse_value in[3];
  int64_t ab[FUSE_MAX_RANK], shape[FUSE_MAX_RANK];
  int rank_ab, rank;
  fuse__node *nc, *na, *nb, *n;
  in[0] = cond;
  in[1] = a;
  in[2] = b;
  if (!fuse__begin(g, "where", 3, in)) return FUSE_NONE;
  nc = fuse__node_of(g, cond);
  na = fuse__node_of(g, a);
  nb = fuse__node_of(g, b);
  if (!fuse__broadcast(na->rank, na->shape, nb->rank, nb->shape, &rank_ab, ab) ||
      !fuse__broadcast(nc->rank, nc->shape, rank_ab, ab, &rank, shape))
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "where: condition %S (%V), a %S (%V) and b %S (%V) do not broadcast",
                      nc->rank, nc->shape, cond, na->rank, na->shape, a, nb->rank, nb->shape, b);
  if (!fuse__check_shape(g, "where", rank, shape)) return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_WHERE, 3, in, rank, shape);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_sqrt(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_SQRT, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_reciprocal(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_RECIPROCAL, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_exp(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_EXP, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_log(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_LOG, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_neg(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_NEG, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_abs(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_ABS, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_floor(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_FLOOR, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_ceil(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_CEIL, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_erf(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_ERF, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_tanh(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_TANH, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_softplus(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_SOFTPLUS, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_hardswish(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_HARDSWISH, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_hardsigmoid(fuse_graph *g, fuse_value x, float alpha, float beta) {
  return fuse__math_unary(g, FUSE__OP_HARDSIGMOID, x, alpha, beta, 0);
}
FUSE_API fuse_value fuse_leaky_relu(fuse_graph *g, fuse_value x, float alpha) {
  return fuse__math_unary(g, FUSE__OP_LEAKY_RELU, x, alpha, 0, 0);
}
FUSE_API fuse_value fuse_elu(fuse_graph *g, fuse_value x, float alpha) {
  return fuse__math_unary(g, FUSE__OP_ELU, x, alpha, 0, 0);
}
FUSE_API fuse_value fuse_selu(fuse_graph *g, fuse_value x, float alpha, float gamma) {
  return fuse__math_unary(g, FUSE__OP_SELU, x, alpha, gamma, 0);
}
FUSE_API fuse_value fuse_gelu(fuse_graph *g, fuse_value x, int tanh_approximation) {
  if (g && g->status == FUSE_OK && tanh_approximation != 0 && tanh_approximation != 1)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "gelu: tanh_approximation is %d; it must be 0 (erf) or 1 (tanh)",
                      tanh_approximation);
  return fuse__math_unary(g, FUSE__OP_GELU, x, 0, 0, tanh_approximation);
}

/* The variadic ones fold a binary op over the values (n = 1: the value itself). */
static fuse_value fuse__math_fold(fuse_graph *g, const char *name, int op, int n,
                                  const fuse_value *xs) {
  fuse_value y;
  int i;
  if (!g || g->status != FUSE_OK) return FUSE_NONE;
  if (n < 1 || !xs)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: needs at least one value (n=%d%s)",
                      name, n, xs ? "" : ", xs NULL");
  if (!fuse__begin(g, name, n, xs)) return FUSE_NONE;
  y = xs[0];
  for (i = 1; i < n && y != FUSE_NONE; i++) y = fuse__binary(g, op, y, xs[i]);
  return y;
}

FUSE_API fuse_value fuse_sum(fuse_graph *g, int n, const fuse_value *xs) {
  return fuse__math_fold(g, "sum", FUSE__OP_ADD, n, xs);
}
FUSE_API fuse_value fuse_mean(fuse_graph *g, int n, const fuse_value *xs) {
  fuse_value s = fuse__math_fold(g, "mean", FUSE__OP_ADD, n, xs);
  if (s == FUSE_NONE || n == 1) return s;
  return fuse_mul(g, s, fuse_scalar(g, 1.0f / (float)n));
}
FUSE_API fuse_value fuse_max(fuse_graph *g, int n, const fuse_value *xs) {
  return fuse__math_fold(g, "max", FUSE__OP_MAXIMUM, n, xs);
}
FUSE_API fuse_value fuse_min(fuse_graph *g, int n, const fuse_value *xs) {
  return fuse__math_fold(g, "min", FUSE__OP_MINIMUM, n, xs);
}
/* ==== end src/builders_math.c ==== */
/* ==== begin src/builders_shape.c ==== */
/* ------------------------------------------------------------ builders: shape -- */
/* data movement: slice, gather, expand, tile, split, squeeze / unsqueeze, depth / space, pad, resize */

/* Gather along `axis` (normalized) with the indices in the constant idx, whose values in
   range are checked here (a parsed constant's values may still change: the kernel clamps). */
static fuse_value fuse__gather_node(fuse_graph *g, fuse_value x, fuse_value idx, int axis) {
  fuse_value in[2];
  fuse__node *nx, *ni, *n;
  int64_t out[FUSE_MAX_RANK], count, i, dim;
  int ax, rank;
  in[0] = x;
  in[1] = idx;
  if (!fuse__begin(g, "gather", 2, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  ni = fuse__node_of(g, idx);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "gather: input %V is a scalar", x);
  if (ni->op != FUSE__OP_CONST)
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED, "gather: indices %V must be a constant, not a %s",
                      idx, fuse__op_names[ni->op]);
  if (!fuse__axis(g, "gather", axis, nx->rank, 0, nx, &ax)) return FUSE_NONE;
  rank = nx->rank - 1 + ni->rank;
  if (rank > FUSE_MAX_RANK)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "gather: input %S with indices %S gives rank %d, more than %d", nx->rank,
                      nx->shape, ni->rank, ni->shape, rank, FUSE_MAX_RANK);
  dim = nx->shape[ax];
  count = fuse__numel(ni->rank, ni->shape);
  for (i = 0; i < count; i++) {
    float v = ni->data[i];
    if (!(v >= (float)-dim && v < (float)dim) || v != floorf(v))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "gather: index %f (entry %D of %V) is not a whole number in %D..%D for "
                        "axis %d of %S",
                        (double)v, i, idx, -dim, dim - 1, ax, nx->rank, nx->shape);
  }
  memcpy(out, nx->shape, (size_t)ax * sizeof(int64_t));
  if (ni->rank) memcpy(out + ax, ni->shape, (size_t)ni->rank * sizeof(int64_t));
  for (i = ax + 1; i < nx->rank; i++) out[i - 1 + ni->rank] = nx->shape[i];
  if (!fuse__check_shape(g, "gather", rank, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_GATHER, 2, in, rank, out))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_gather(fuse_graph *g, fuse_value x, int axis, int index_rank,
                                const int64_t *index_shape, const int64_t *indices) {
  fuse__node *nx;
  fuse_value idx;
  float *data;
  int64_t count, i, dim;
  int ax;
  if (!fuse__begin(g, "gather", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "gather: input %V is a scalar", x);
  if (!fuse__axis(g, "gather", axis, nx->rank, 0, nx, &ax)) return FUSE_NONE;
  if (!fuse__check_shape(g, "gather: indices", index_rank, index_shape)) return FUSE_NONE;
  count = fuse__numel(index_rank, index_shape);
  if (!indices)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "gather: indices are NULL (%D expected)",
                      count);
  dim = nx->shape[ax];
  for (i = 0; i < count; i++)
    if (indices[i] < -dim || indices[i] >= dim)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "gather: index %D (entry %D) is outside %D..%D for axis %d of %S",
                        indices[i], i, -dim, dim - 1, ax, nx->rank, nx->shape);
  if (dim > 16777216)
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                      "gather: axis %d of %S is longer than 2^24: its indices do not fit a float",
                      ax, nx->rank, nx->shape);
  if ((idx = fuse_constant(g, NULL, index_rank, index_shape, NULL)) == FUSE_NONE) return FUSE_NONE;
  data = g->nodes[idx].data;
  for (i = 0; i < count; i++) data[i] = (float)(indices[i] < 0 ? indices[i] + dim : indices[i]);
  return fuse__gather_node(g, x, idx, ax);
}

FUSE_API fuse_value fuse_expand(fuse_graph *g, fuse_value x, int rank, const int64_t *shape) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int r, i;
  if (!fuse__begin(g, "expand", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (!fuse__check_shape(g, "expand: shape", rank, shape)) return FUSE_NONE;
  if (!fuse__broadcast(nx->rank, nx->shape, rank, shape, &r, out)) {
    for (i = 0; i < rank; i++) out[i] = shape[i];
    return fuse__fail(g, FUSE_ERROR_SHAPE, "expand: %V %S does not broadcast with shape %S", x,
                      nx->rank, nx->shape, rank, out);
  }
  if (!fuse__check_shape(g, "expand", r, out)) return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_EXPAND, 1, &x, r, out);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_tile(fuse_graph *g, fuse_value x, const int64_t *repeats) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int i;
  if (!fuse__begin(g, "tile", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank > 0 && !repeats)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "tile: repeats are NULL for %S (%V)",
                      nx->rank, nx->shape, x);
  for (i = 0; i < nx->rank; i++) {
    if (repeats[i] < 1 || repeats[i] > FUSE__MAX_DIM)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "tile: repeats %S for %S: entry %d is %D (must be 1..2147483647)",
                        nx->rank, repeats, nx->rank, nx->shape, i, repeats[i]);
    out[i] = nx->shape[i] * repeats[i]; /* < 2^62: checked below */
  }
  if (!fuse__check_shape(g, "tile", nx->rank, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_TILE, 1, &x, nx->rank, out))) return FUSE_NONE;
  for (i = 0; i < n->rank; i++) n->a.slice.step[i] = n->shape[i] / fuse__node_of(g, x)->shape[i];
  return fuse__id(g, n); /* tile keeps its repeats in slice's per-axis list (the text form's) */
}

FUSE_API fuse_value fuse_squeeze(fuse_graph *g, fuse_value x, int count, const int *axes) {
  fuse__node *nx;
  int64_t out[FUSE_MAX_RANK];
  int drop[FUSE_MAX_RANK], i, ax, rank = 0;
  if (!fuse__begin(g, "squeeze", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  memset(drop, 0, sizeof drop);
  if (count < 0 || count > nx->rank || (count > 0 && !axes))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "squeeze: %d axes (%s) for %S: 0..%d axes with a list", count,
                      axes ? "given" : "NULL", nx->rank, nx->shape, nx->rank);
  for (i = 0; i < count; i++) {
    if (!fuse__axis(g, "squeeze", axes[i], nx->rank, 0, nx, &ax)) return FUSE_NONE;
    if (nx->shape[ax] != 1)
      return fuse__fail(g, FUSE_ERROR_SHAPE, "squeeze: axis %d of %S (%V) has size %D, not 1",
                        axes[i], nx->rank, nx->shape, x, nx->shape[ax]);
    drop[ax] = 1;
  }
  for (i = 0; i < nx->rank; i++)
    if (!(count ? drop[i] : nx->shape[i] == 1)) out[rank++] = nx->shape[i];
  return fuse_reshape(g, x, rank, out);
}

FUSE_API fuse_value fuse_unsqueeze(fuse_graph *g, fuse_value x, int count, const int *axes) {
  fuse__node *nx;
  int64_t out[FUSE_MAX_RANK];
  int added[FUSE_MAX_RANK], i, k, ax, rank;
  if (!fuse__begin(g, "unsqueeze", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  rank = nx->rank + count;
  if (count < 1 || !axes || rank > FUSE_MAX_RANK)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "unsqueeze: %d axes (%s) for %S: 1..%d axes with a list", count,
                      axes ? "given" : "NULL", nx->rank, nx->shape, FUSE_MAX_RANK - nx->rank);
  memset(added, 0, sizeof added);
  for (i = 0; i < count; i++) {
    if (axes[i] < -rank || axes[i] >= rank)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "unsqueeze: axis %d is outside %d..%d for %S gaining %d axes", axes[i],
                        -rank, rank - 1, nx->rank, nx->shape, count);
    ax = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (added[ax]++)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "unsqueeze: axis %d is given twice",
                        ax);
  }
  for (i = 0, k = 0; i < rank; i++) out[i] = added[i] ? 1 : nx->shape[k++];
  return fuse_reshape(g, x, rank, out);
}

/* Checks a 4-D input and a block size; 0 with the graph's error. */
static int fuse__block_input(fuse_graph *g, const char *who, fuse_value x, int block) {
  const fuse__node *nx;
  if (!fuse__begin(g, who, 1, &x)) return 0;
  nx = fuse__node_of(g, x);
  if (nx->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: input %S (%V) must be 4-D [N,C,H,W]", who,
                      nx->rank, nx->shape, x),
           0;
  if (block < 1)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: block size %d must be >= 1", who,
                      block),
           0;
  return 1;
}

FUSE_API fuse_value fuse_depth_to_space(fuse_graph *g, fuse_value x, int block, int crd) {
  static const int dcr_perm[6] = {0, 3, 4, 1, 5, 2}, crd_perm[6] = {0, 1, 4, 2, 5, 3};
  const fuse__node *nx;
  int64_t s6[6], s4[4], N, C, H, W, b = block;
  fuse_value t;
  if (!fuse__block_input(g, "depth_to_space", x, block)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  N = nx->shape[0], C = nx->shape[1], H = nx->shape[2], W = nx->shape[3];
  if (C % (b * b))
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "depth_to_space: %D channels of %S are not divisible by block^2 = %D", C,
                      nx->rank, nx->shape, b * b);
  s6[0] = N;
  if (crd) s6[1] = C / (b * b), s6[2] = b, s6[3] = b;
  else s6[1] = b, s6[2] = b, s6[3] = C / (b * b);
  s6[4] = H, s6[5] = W;
  s4[0] = N, s4[1] = C / (b * b), s4[2] = H * b, s4[3] = W * b;
  if (!fuse__check_shape(g, "depth_to_space", 4, s4)) return FUSE_NONE;
  t = fuse_transpose(g, fuse_reshape(g, x, 6, s6), crd ? crd_perm : dcr_perm);
  return fuse_reshape(g, t, 4, s4);
}

FUSE_API fuse_value fuse_space_to_depth(fuse_graph *g, fuse_value x, int block) {
  static const int perm[6] = {0, 3, 5, 1, 2, 4};
  const fuse__node *nx;
  int64_t s6[6], s4[4], N, C, H, W, b = block;
  fuse_value t;
  if (!fuse__block_input(g, "space_to_depth", x, block)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  N = nx->shape[0], C = nx->shape[1], H = nx->shape[2], W = nx->shape[3];
  if (H % b || W % b)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "space_to_depth: height and width of %S are not divisible by block %D",
                      nx->rank, nx->shape, b);
  s6[0] = N, s6[1] = C, s6[2] = H / b, s6[3] = b, s6[4] = W / b, s6[5] = b;
  s4[0] = N, s4[1] = C * b * b, s4[2] = H / b, s4[3] = W / b;
  if (!fuse__check_shape(g, "space_to_depth", 4, s4)) return FUSE_NONE;
  t = fuse_transpose(g, fuse_reshape(g, x, 6, s6), perm);
  return fuse_reshape(g, t, 4, s4);
}

FUSE_API fuse_value fuse_pad(fuse_graph *g, fuse_value x, const int64_t *pads, fuse_pad_mode mode,
                             float value) {
  static const char *const mode_names[3] = {"constant", "reflect", "edge"};
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int i;
  if (!fuse__begin(g, "pad", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "pad: input %V is a scalar", x);
  if (!pads) return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "pad: pads are NULL");
  if (!fuse__enum_in((int)mode, FUSE_PAD_CONSTANT, FUSE_PAD_EDGE))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "pad: mode %d is not constant (0), reflect (1) or edge (2)", (int)mode);
  for (i = 0; i < nx->rank; i++) {
    int64_t b = pads[i], e = pads[i + nx->rank], d = nx->shape[i];
    if (b < -d || e < -d || b > FUSE__MAX_DIM || e > FUSE__MAX_DIM || d + b + e < 1)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "pad: pads %D, %D on axis %d of %S leave no element or are out of range",
                        b, e, i, nx->rank, nx->shape);
    if (mode == FUSE_PAD_REFLECT && (b >= d || e >= d))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "pad: %s pads %D, %D on axis %d of %S must be smaller than its size %D",
                        mode_names[mode], b, e, i, nx->rank, nx->shape, d);
    out[i] = d + b + e;
  }
  if (!fuse__check_shape(g, "pad", nx->rank, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_PAD, 1, &x, nx->rank, out))) return FUSE_NONE;
  for (i = 0; i < 2 * n->rank; i++) n->a.pad.pads[i] = (int)pads[i]; /* nx may have moved */
  n->a.pad.value = value;
  n->a.pad.mode = (int)mode;
  return fuse__id(g, n);
}

/* Stored scales: the caller's, or 0 where they follow from the sizes (the kernel then maps
   coordinates with sizes / input sizes in double, as ONNX's reference does). */
FUSE_API fuse_value fuse_resize(fuse_graph *g, fuse_value x, const int64_t *sizes,
                                const float *scales, const fuse_resize_attrs *attrs) {
  fuse__node *nx, *n;
  fuse_resize_attrs a;
  int i;
  if (!fuse__begin(g, "resize", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "resize: input %V is a scalar", x);
  if (!fuse__check_shape(g, "resize: sizes", nx->rank, sizes)) return FUSE_NONE;
  memset(&a, 0, sizeof a);
  if (attrs) a = *attrs;
  if (!fuse__enum_in((int)a.mode, FUSE_RESIZE_NEAREST, FUSE_RESIZE_CUBIC))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "resize: mode %d is not nearest (0), linear (1) or cubic (2)", (int)a.mode);
  if (!fuse__enum_in((int)a.coordinates, FUSE_RESIZE_HALF_PIXEL, FUSE_RESIZE_HALF_PIXEL_SYMMETRIC))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "resize: coordinate mode %d is not 0..4 (half_pixel, asymmetric, "
                      "pytorch_half_pixel, align_corners, half_pixel_symmetric)",
                      (int)a.coordinates);
  if (!fuse__enum_in((int)a.nearest, FUSE_RESIZE_ROUND_PREFER_FLOOR, FUSE_RESIZE_CEIL))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "resize: nearest mode %d is not 0..3 (round_prefer_floor, "
                      "round_prefer_ceil, floor, ceil)",
                      (int)a.nearest);
  if (a.cubic_coeff_a == 0) a.cubic_coeff_a = -0.75f;
  if (!(a.cubic_coeff_a > -1e6f && a.cubic_coeff_a < 1e6f))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "resize: cubic_coeff_a %f is not a number",
                      (double)a.cubic_coeff_a);
  a.exclude_outside = a.exclude_outside != 0;
  for (i = 0; scales && i < nx->rank; i++)
    if (!(scales[i] > 0 && scales[i] < 1e30f))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "resize: scale %f of axis %d must be a positive number", (double)scales[i],
                        i);
  if (!(n = fuse__new_node(g, FUSE__OP_RESIZE, 1, &x, nx->rank, sizes))) return FUSE_NONE;
  for (i = 0; i < n->rank; i++) n->a.resize.scales[i] = scales ? scales[i] : 0.0f;
  n->a.resize.r = a;
  return fuse__id(g, n);
}
/* ==== end src/builders_shape.c ==== */
/* ==== begin src/builders_nn.c ==== */
/* ------------------------------------------------------------ builders: nn -- */
/* reductions, log-softmax, layer / instance / group normalization, einsum */

/* The reduction ops in fuse_reduce_kind order (FUSE_REDUCE_MEAN = 1 is the first). */
static int fuse__reduce_op(fuse_reduce_kind kind) {
  return FUSE__OP_REDUCE_MEAN + ((int)kind - (int)FUSE_REDUCE_MEAN);
}

/* The shape a reduction over the axes in `mask` leaves of x. */
static int fuse__reduced_shape(const fuse__node *x, unsigned mask, int keepdims, int64_t *out) {
  int i, rank = 0;
  for (i = 0; i < x->rank; i++) {
    if (!(mask >> i & 1u)) out[rank++] = x->shape[i];
    else if (keepdims) out[rank++] = 1;
  }
  return rank;
}

FUSE_API fuse_value fuse_reduce(fuse_graph *g, fuse_value x, fuse_reduce_kind kind, int n,
                                const int *axes, int keepdims) {
  fuse__node *nx, *node;
  int64_t out[FUSE_MAX_RANK];
  unsigned mask = 0;
  int i, rank, op;
  if (!fuse__begin(g, "reduce", 1, &x)) return FUSE_NONE;
  if ((int)kind < (int)FUSE_REDUCE_MEAN || (int)kind > (int)FUSE_REDUCE_SUM_SQUARE)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "reduce: kind %d is not a fuse_reduce_kind (FUSE_REDUCE_MEAN .. "
                      "FUSE_REDUCE_SUM_SQUARE)",
                      (int)kind);
  op = fuse__reduce_op(kind);
  nx = fuse__node_of(g, x);
  if (n < 0 || n > nx->rank || (n > 0 && !axes))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "%s: %d axes%s for %V %S (0 .. rank, 0 = all)", fuse__op_names[op], n,
                      n > 0 && !axes ? " with axes NULL" : "", x, nx->rank, nx->shape);
  for (i = 0; i < n; i++) {
    int ax;
    if (!fuse__axis(g, fuse__op_names[op], axes[i], nx->rank, 0, nx, &ax)) return FUSE_NONE;
    if (mask >> ax & 1u)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: axis %d is given twice for %S",
                        fuse__op_names[op], ax, nx->rank, nx->shape);
    mask |= 1u << ax;
  }
  if (n == 0) mask = nx->rank ? (1u << nx->rank) - 1u : 0u;
  rank = fuse__reduced_shape(nx, mask, keepdims != 0, out);
  if (!(node = fuse__new_node(g, op, 1, &x, rank, out))) return FUSE_NONE;
  node->a.reduce.axes = mask;
  node->a.reduce.keepdims = keepdims != 0;
  return fuse__id(g, node);
}

FUSE_API fuse_value fuse_log_softmax(fuse_graph *g, fuse_value x, int axis) {
  fuse__node *nx, *n;
  int ax;
  if (!fuse__begin(g, "log_softmax", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "log_softmax: input %V is a scalar", x);
  if (!fuse__axis(g, "log_softmax", axis, nx->rank, 0, nx, &ax)) return FUSE_NONE;
  if (!(n = fuse__unary(g, FUSE__OP_LOG_SOFTMAX, x))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

static int fuse__norm_eps(fuse_graph *g, const char *op, float eps) {
  if (eps >= 0 && eps < HUGE_VALF) return 1;
  return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: eps=%f must be a number >= 0", op,
                    (double)eps),
         0;
}

/* scale / bias of a per-channel normalization: [C] for x [N, C, ...]. */
static int fuse__norm_channel_params(fuse_graph *g, const char *op, const fuse_value *in) {
  const fuse__node *nx = fuse__node_of(g, in[0]);
  int i;
  for (i = 1; i < 3; i++) {
    const fuse__node *p = fuse__node_of(g, in[i]);
    if (p->rank != 1 || p->shape[0] != nx->shape[1])
      return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: %s %V %S must be [%D] for input %V %S", op,
                        i == 1 ? "scale" : "bias", in[i], p->rank, p->shape, nx->shape[1], in[0],
                        nx->rank, nx->shape),
             0;
  }
  return 1;
}

FUSE_API fuse_value fuse_layer_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                    fuse_value bias, int axis, float eps) {
  fuse_value in[3];
  fuse__node *nx, *n;
  int ax, i, k, num_in = bias == FUSE_NONE ? 2 : 3;
  in[0] = x;
  in[1] = scale;
  in[2] = bias;
  if (!fuse__begin(g, "layer_norm", num_in, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "layer_norm: input %V is a scalar", x);
  if (!fuse__axis(g, "layer_norm", axis, nx->rank, 0, nx, &ax) ||
      !fuse__norm_eps(g, "layer_norm", eps))
    return FUSE_NONE;
  for (k = 1; k < num_in; k++) { /* exactly x.shape[axis:] */
    const fuse__node *p = fuse__node_of(g, in[k]);
    int ok = p->rank == nx->rank - ax;
    for (i = 0; ok && i < p->rank; i++) ok = p->shape[i] == nx->shape[ax + i];
    if (!ok)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "layer_norm: %s %V %S must be %S, the shape of input %V %S from axis %d",
                        k == 1 ? "scale" : "bias", in[k], p->rank, p->shape, nx->rank - ax,
                        nx->shape + ax, x, nx->rank, nx->shape, ax);
  }
  if (!(n = fuse__new_node(g, FUSE__OP_LAYER_NORM, num_in, in, nx->rank, nx->shape)))
    return FUSE_NONE;
  n->a.norm.axis = ax;
  n->a.norm.groups = 0;
  n->a.norm.eps = eps;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_instance_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                       fuse_value bias, float eps) {
  fuse_value in[3];
  fuse__node *nx, *n;
  in[0] = x;
  in[1] = scale;
  in[2] = bias;
  if (!fuse__begin(g, "instance_norm", 3, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 3)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "instance_norm: input %V %S must have rank >= 3 [N, C, spatial...]", x,
                      nx->rank, nx->shape);
  if (!fuse__norm_channel_params(g, "instance_norm", in) ||
      !fuse__norm_eps(g, "instance_norm", eps))
    return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_INSTANCE_NORM, 3, in, nx->rank, nx->shape)))
    return FUSE_NONE;
  n->a.norm.axis = 2;
  n->a.norm.groups = 0;
  n->a.norm.eps = eps;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_group_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                    fuse_value bias, int groups, float eps) {
  fuse_value in[3];
  fuse__node *nx, *n;
  in[0] = x;
  in[1] = scale;
  in[2] = bias;
  if (!fuse__begin(g, "group_norm", 3, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 2)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "group_norm: input %V %S must have rank >= 2 [N, C, ...]",
                      x, nx->rank, nx->shape);
  if (groups < 1 || nx->shape[1] % groups)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "group_norm: groups=%d must be >= 1 and divide the %D channels of %V %S",
                      groups, nx->shape[1], x, nx->rank, nx->shape);
  if (!fuse__norm_channel_params(g, "group_norm", in) || !fuse__norm_eps(g, "group_norm", eps))
    return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_GROUP_NORM, 3, in, nx->rank, nx->shape))) return FUSE_NONE;
  n->a.norm.axis = 1;
  n->a.norm.groups = groups;
  n->a.norm.eps = eps;
  return fuse__id(g, n);
}

/* ---- einsum: parsed, then composed of reduce_sum, transpose, reshape and one matmul */

typedef struct fuse__einsum_term {
  char idx[FUSE_MAX_RANK];
  int n;
} fuse__einsum_term;

static int fuse__einsum_letter(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* One term of letters; *p advances past it. 0 with the graph's error when it is malformed. */
static int fuse__einsum_term_parse(fuse_graph *g, const char *eq, const char **p,
                                   fuse__einsum_term *t) {
  char letter[2]; /* for messages */
  t->n = 0;
  letter[1] = 0;
  for (; **p && **p != ',' && **p != '-'; (*p)++) {
    char c = **p;
    int k;
    letter[0] = c;
    if (c == '.')
      return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                        "einsum: \"%s\": the ellipsis '...' (broadcast dimensions) is not "
                        "supported; name every dimension with a letter",
                        eq),
             0;
    if (!fuse__einsum_letter(c))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "einsum: \"%s\": '%s' is not an index letter (a-z, A-Z), ',' or '->'", eq,
                        letter),
             0;
    for (k = 0; k < t->n; k++)
      if (t->idx[k] == c)
        return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                          "einsum: \"%s\": index '%s' repeats within one term (a diagonal or "
                          "trace is not supported)",
                          eq, letter),
               0;
    if (t->n == FUSE_MAX_RANK)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "einsum: \"%s\": a term has more than %d indices", eq, FUSE_MAX_RANK),
             0;
    t->idx[t->n++] = c;
  }
  return 1;
}

static int fuse__einsum_find(const fuse__einsum_term *t, char c) {
  int k;
  for (k = 0; k < t->n; k++)
    if (t->idx[k] == c) return k;
  return -1;
}

/* Sums x over the indices of t that `keep` lacks (reduce_sum), leaving t with the rest. */
static fuse_value fuse__einsum_sum_out(fuse_graph *g, fuse_value x, fuse__einsum_term *t,
                                       const fuse__einsum_term *keep1,
                                       const fuse__einsum_term *keep2) {
  int axes[FUSE_MAX_RANK], n = 0, k, m = 0;
  for (k = 0; k < t->n; k++)
    if (fuse__einsum_find(keep1, t->idx[k]) < 0 && (!keep2 || fuse__einsum_find(keep2, t->idx[k]) < 0))
      axes[n++] = k;
  if (!n) return x;
  x = fuse_reduce(g, x, FUSE_REDUCE_SUM, n, axes, 0);
  for (k = 0; k < t->n; k++)
    if (fuse__einsum_find(keep1, t->idx[k]) >= 0 || (keep2 && fuse__einsum_find(keep2, t->idx[k]) >= 0))
      t->idx[m++] = t->idx[k];
  t->n = m;
  return x;
}

/* x (indices t) transposed to the order `order` (a permutation of t), when it differs. */
static fuse_value fuse__einsum_permute(fuse_graph *g, fuse_value x, const fuse__einsum_term *t,
                                       const char *order) {
  int perm[FUSE_MAX_RANK], k, same = 1;
  for (k = 0; k < t->n; k++) {
    perm[k] = fuse__einsum_find(t, order[k]);
    same &= perm[k] == k;
  }
  return same ? x : fuse_transpose(g, x, perm);
}

/* x reshaped to [dims], when its shape differs. */
static fuse_value fuse__einsum_reshape(fuse_graph *g, fuse_value x, int rank, const int64_t *dims) {
  const fuse__node *n;
  if (x == FUSE_NONE) return FUSE_NONE;
  n = fuse__node_of(g, x);
  if (n->rank == rank && (rank == 0 || memcmp(n->shape, dims, (size_t)rank * sizeof(int64_t)) == 0))
    return x;
  return fuse_reshape(g, x, rank, dims);
}

FUSE_API fuse_value fuse_einsum(fuse_graph *g, const char *equation, int n, const fuse_value *xs) {
  char eq[65]; /* the equation without its spaces */
  const char *p;
  fuse__einsum_term in[2], out;
  int64_t size[128]; /* by index letter */
  char letter[2]; /* for messages */
  int i, k, len = 0, terms = 1, explicit_out = 0;
  letter[1] = 0;
  if (!g || g->status != FUSE_OK) return FUSE_NONE;
  if (!equation)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "einsum: the equation is NULL");
  if (n < 1 || !xs)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "einsum: \"%s\" with %d operands%s",
                      equation, n, xs ? "" : " (xs NULL)");
  if (n > 2)
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                      "einsum: \"%s\" with %d operands: only 1 or 2 operands are supported "
                      "(chain two-operand einsums for more)",
                      equation, n);
  if (!fuse__begin(g, "einsum", n, xs)) return FUSE_NONE;
  for (p = equation; *p; p++) { /* spaces go; the rest is checked term by term */
    if (*p == ' ' || *p == '\t') continue;
    if (len == (int)sizeof eq - 1)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "einsum: the equation \"%s\" is too long",
                        equation);
    eq[len++] = *p;
  }
  eq[len] = 0;
  for (p = eq; *p && *p != '-'; p++) terms += *p == ',';
  if (terms != n)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "einsum: \"%s\" has %d input terms for %d operands", equation, terms, n);
  p = eq;
  for (i = 0; i < n; i++) {
    if (!fuse__einsum_term_parse(g, equation, &p, &in[i])) return FUSE_NONE;
    if (*p == ',') p++;
  }
  if (*p == '-') {
    if (p[1] != '>')
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "einsum: \"%s\": '-' must start '->'",
                        equation);
    p += 2;
    explicit_out = 1;
    if (!fuse__einsum_term_parse(g, equation, &p, &out)) return FUSE_NONE;
    if (*p)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "einsum: \"%s\": the output term must end the equation", equation);
  }
  for (i = 0; i < 128; i++) size[i] = 0;
  for (i = 0; i < n; i++) {
    const fuse__node *x = fuse__node_of(g, xs[i]);
    if (x->rank != in[i].n)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "einsum: \"%s\": term %d has %d indices but operand %d %V is %S", equation,
                        i + 1, in[i].n, i + 1, xs[i], x->rank, x->shape);
    for (k = 0; k < in[i].n; k++) {
      int c = (unsigned char)in[i].idx[k];
      letter[0] = (char)c;
      if (size[c] && size[c] != x->shape[k])
        return fuse__fail(g, FUSE_ERROR_SHAPE,
                          "einsum: \"%s\": index '%s' is %D in one place and %D in operand %d %V %S",
                          equation, letter, size[c], x->shape[k], i + 1, xs[i],
                          x->rank, x->shape);
      size[c] = x->shape[k];
    }
  }
  if (explicit_out) {
    for (k = 0; k < out.n; k++) {
      letter[0] = out.idx[k];
      if (!size[(unsigned char)out.idx[k]])
        return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                          "einsum: \"%s\": output index '%s' is in no input term", equation,
                          letter);
    }
  } else { /* implicit: the indices that appear once, in alphabetical (ASCII) order */
    out.n = 0;
    for (i = 'A'; i <= 'z'; i++) {
      int count = 0;
      if (!fuse__einsum_letter(i)) continue;
      for (k = 0; k < n; k++) count += fuse__einsum_find(&in[k], (char)i) >= 0;
      if (count == 1) out.idx[out.n++] = (char)i;
    }
  }
  if (n == 1) {
    fuse_value x = fuse__einsum_sum_out(g, xs[0], &in[0], &out, NULL);
    return x == FUSE_NONE ? FUSE_NONE : fuse__einsum_permute(g, x, &in[0], out.idx);
  }
  {
    /* indices: batch (both and the output), m (first and output), n (second and output),
       contracted (both, not the output); an index in one operand only and not in the output
       is summed out of that operand first */
    char batch[FUSE_MAX_RANK], mi[FUSE_MAX_RANK], ni[FUSE_MAX_RANK], ki[FUSE_MAX_RANK];
    char order[FUSE_MAX_RANK];
    int nb = 0, nm = 0, nn = 0, nk = 0, r;
    int64_t M = 1, N = 1, K = 1, dims[FUSE_MAX_RANK + 2];
    fuse_value a, b, y;
    fuse__einsum_term have; /* y's indices */
    a = fuse__einsum_sum_out(g, xs[0], &in[0], &out, &in[1]);
    b = a == FUSE_NONE ? FUSE_NONE : fuse__einsum_sum_out(g, xs[1], &in[1], &out, &in[0]);
    if (b == FUSE_NONE) return FUSE_NONE;
    for (k = 0; k < out.n; k++) {
      char c = out.idx[k];
      int ina = fuse__einsum_find(&in[0], c) >= 0, inb = fuse__einsum_find(&in[1], c) >= 0;
      if (ina && inb) batch[nb++] = c;
      else if (ina) mi[nm++] = c, M *= size[(unsigned char)c];
      else ni[nn++] = c, N *= size[(unsigned char)c];
    }
    for (k = 0; k < in[0].n; k++)
      if (fuse__einsum_find(&out, in[0].idx[k]) < 0) {
        ki[nk++] = in[0].idx[k];
        K *= size[(unsigned char)in[0].idx[k]];
      }
    /* a: [batch..., m..., k...] -> [batch..., M, K] (with no batch index, the m indices stay
       apart: matmul broadcasts b over them) */
    memcpy(order, batch, (size_t)nb);
    memcpy(order + nb, mi, (size_t)nm);
    memcpy(order + nb + nm, ki, (size_t)nk);
    a = fuse__einsum_permute(g, a, &in[0], order);
    r = 0;
    for (k = 0; k < nb; k++) dims[r++] = size[(unsigned char)batch[k]];
    if (nb == 0 && nm > 0) {
      for (k = 0; k < nm; k++) dims[r++] = size[(unsigned char)mi[k]];
    } else {
      dims[r++] = M;
    }
    dims[r++] = K;
    a = fuse__einsum_reshape(g, a, r, dims);
    /* b: [batch..., k..., n...] -> [batch..., K, N] */
    memcpy(order, batch, (size_t)nb);
    memcpy(order + nb, ki, (size_t)nk);
    memcpy(order + nb + nk, ni, (size_t)nn);
    b = a == FUSE_NONE ? FUSE_NONE : fuse__einsum_permute(g, b, &in[1], order);
    r = 0;
    for (k = 0; k < nb; k++) dims[r++] = size[(unsigned char)batch[k]];
    dims[r++] = K;
    dims[r++] = N;
    b = fuse__einsum_reshape(g, b, r, dims);
    y = b == FUSE_NONE ? FUSE_NONE : fuse_matmul(g, a, b);
    /* [batch..., m..., n...] in the output's order */
    r = 0;
    for (k = 0; k < nb; k++) order[r] = batch[k], dims[r++] = size[(unsigned char)batch[k]];
    for (k = 0; k < nm; k++) order[r] = mi[k], dims[r++] = size[(unsigned char)mi[k]];
    for (k = 0; k < nn; k++) order[r] = ni[k], dims[r++] = size[(unsigned char)ni[k]];
    y = fuse__einsum_reshape(g, y, r, dims);
    if (y == FUSE_NONE) return FUSE_NONE;
    have.n = r;
    memcpy(have.idx, order, (size_t)r);
    return fuse__einsum_permute(g, y, &have, out.idx);
  }
}
/* ==== end src/builders_nn.c ==== */
/* ==== begin src/builders_layers.c ==== */
/* ------------------------------------------------------------ builders: layers -- */
/* slice and split, transposed convolution, 1-D convolution and pools, LSTM / GRU */

/* ONNX Slice's index rule for one axis of size dim: start and end count from the end when
   negative and clamp to the axis ([0, dim] going up, [0, dim - 1] / [-1, dim - 1] going down);
   the step (never 0) clamps to [-dim, dim], which selects the same elements. Returns how many
   elements the axis keeps (0: none). */
static int64_t fuse__slice_axis(int64_t dim, int64_t start, int64_t end, int64_t *step,
                                int64_t *first) {
  int64_t s = *step;
  if (start < 0) start += dim; /* INT64_MIN + dim does not wrap: dim >= 1 */
  if (end < 0) end += dim;
  if (s > dim) s = dim;
  if (s < -dim) s = -dim;
  *step = s;
  if (s > 0) {
    start = start < 0 ? 0 : start > dim ? dim : start;
    end = end < 0 ? 0 : end > dim ? dim : end;
    *first = start;
    return end > start ? (end - start - 1) / s + 1 : 0;
  }
  start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
  end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
  *first = start;
  return start > end ? (start - end - 1) / -s + 1 : 0;
}

FUSE_API fuse_value fuse_slice(fuse_graph *g, fuse_value x, int n, const int *axes,
                               const int64_t *starts, const int64_t *ends, const int64_t *steps) {
  fuse__node *nx, *node;
  int64_t shape[FUSE_MAX_RANK], first[FUSE_MAX_RANK], step[FUSE_MAX_RANK];
  int seen[FUSE_MAX_RANK], i, d;
  if (!fuse__begin(g, "slice", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "slice: input %V is a scalar", x);
  if (n < 0 || n > nx->rank)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "slice: %d axes given for input %S (%V), which has %d", n, nx->rank,
                      nx->shape, x, nx->rank);
  if (n > 0 && (!starts || !ends))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "slice: %s is NULL for %d axes",
                      starts ? "ends" : "starts", n);
  for (d = 0; d < nx->rank; d++) {
    shape[d] = nx->shape[d];
    first[d] = 0;
    step[d] = 1;
    seen[d] = 0;
  }
  for (i = 0; i < n; i++) {
    int64_t count, s = steps ? steps[i] : 1;
    if (!fuse__axis(g, "slice", axes ? axes[i] : i, nx->rank, 0, nx, &d)) return FUSE_NONE;
    if (seen[d]++)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "slice: axis %d of %S is listed twice",
                        d, nx->rank, nx->shape);
    if (s == 0)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "slice: the step along axis %d is 0", d);
    count = fuse__slice_axis(nx->shape[d], starts[i], ends[i], &s, &first[d]);
    if (count == 0)
      return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                        "slice: start %D, end %D, step %D select no element of axis %d of %S "
                        "(%V); zero-sized tensors are not supported",
                        starts[i], ends[i], steps ? steps[i] : (int64_t)1, d, nx->rank,
                        nx->shape, x);
    shape[d] = count;
    step[d] = s;
  }
  if (!(node = fuse__new_node(g, FUSE__OP_SLICE, 1, &x, nx->rank, shape))) return FUSE_NONE;
  nx = fuse__node_of(g, x); /* the node array may have moved */
  for (d = 0; d < nx->rank; d++) {
    node->a.slice.start[d] = first[d];
    node->a.slice.step[d] = step[d];
  }
  return fuse__id(g, node);
}

FUSE_API fuse_result fuse_split(fuse_graph *g, fuse_value x, int axis, int n,
                                const int64_t *sizes, fuse_value *out) {
  fuse__node *nx;
  int64_t dim, at = 0, total = 0;
  int i, ax;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (out && n > 0)
    for (i = 0; i < n; i++) out[i] = FUSE_NONE;
  if (!fuse__begin(g, "split", 1, &x)) return g->status;
  nx = fuse__node_of(g, x);
  if (!out || n < 1)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "split: %s (n=%d)",
                      out ? "needs at least one piece" : "out is NULL", n),
           g->status;
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "split: input %V is a scalar", x), g->status;
  if (!fuse__axis(g, "split", axis, nx->rank, 0, nx, &ax)) return g->status;
  dim = nx->shape[ax];
  if (!sizes && dim % n)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "split: axis %d of %S (%V) has %D elements, not divisible into %d equal "
                      "pieces",
                      ax, nx->rank, nx->shape, x, dim, n),
           g->status;
  for (i = 0; sizes && i < n; i++) {
    if (sizes[i] < 1 || sizes[i] > dim)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "split: piece %d has size %D; sizes must be 1..%D (axis %d of %S)", i,
                        sizes[i], dim, ax, nx->rank, nx->shape),
             g->status;
    total += sizes[i];
  }
  if (sizes && total != dim)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "split: the sizes add up to %D, but axis %d of %S (%V) has %D elements",
                      total, ax, nx->rank, nx->shape, x, dim),
           g->status;
  for (i = 0; i < n; i++) {
    int64_t len = sizes ? sizes[i] : dim / n, end = at + len;
    if ((out[i] = fuse_slice(g, x, 1, &ax, &at, &end, NULL)) == FUSE_NONE) return g->status;
    at = end;
  }
  return FUSE_OK;
}

/* ---- transposed convolution */

static fuse_value fuse__conv_transpose1d(fuse_graph *g, fuse_value x, fuse_value w,
                                         const fuse_conv_transpose2d_attrs *attrs);

FUSE_API fuse_value fuse_conv_transpose2d(fuse_graph *g, fuse_value x, fuse_value w,
                                          const fuse_conv_transpose2d_attrs *attrs) {
  fuse_value in[2];
  fuse_conv_transpose2d_attrs a;
  fuse__node *nx, *nw, *n;
  int64_t out[4], C;
  int i;
  in[0] = x;
  in[1] = w;
  if (!fuse__begin(g, "conv_transpose2d", 2, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  nw = fuse__node_of(g, w);
  if (nx->rank == 3) return fuse__conv_transpose1d(g, x, w, attrs);
  if (nx->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: input %S (%V) must be 4-D [N,C,H,W] (or 3-D [N,C,L])",
                      nx->rank, nx->shape, x);
  if (nw->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: weight %S (%V) must be 4-D [C,K/groups,KH,KW]",
                      nw->rank, nw->shape, w);
  memset(&a, 0, sizeof a);
  if (attrs) a = *attrs;
  if (!fuse__attr_positive(g, "conv_transpose2d", "strides", a.strides, 2, 1, 1) ||
      !fuse__attr_positive(g, "conv_transpose2d", "dilation", a.dilation, 2, 1, 1) ||
      !fuse__attr_padding(g, "conv_transpose2d", a.padding) ||
      !fuse__attr_positive(g, "conv_transpose2d", "groups", &a.groups, 1, 1, 1))
    return FUSE_NONE;
  if (a.output_padding[0] < 0 || a.output_padding[1] < 0)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "conv_transpose2d: output_padding [%d,%d] must be >= 0",
                      a.output_padding[0], a.output_padding[1]);
  C = nx->shape[1];
  if (nw->shape[0] != C)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: input %S (%V) has %D channels, weight %S (%V) expects "
                      "%D (its first dimension)",
                      nx->rank, nx->shape, x, C, nw->rank, nw->shape, w, nw->shape[0]);
  if (C % a.groups)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: %D input channels are not divisible by groups=%d", C,
                      a.groups);
  out[0] = nx->shape[0];
  out[1] = nw->shape[1] * a.groups;
  for (i = 0; i < 2; i++) {
    int64_t full = (nx->shape[2 + i] - 1) * a.strides[i] +
                   (int64_t)a.dilation[i] * (nw->shape[2 + i] - 1) + 1 + a.output_padding[i];
    out[2 + i] = full - a.padding[i] - a.padding[i + 2];
    if (out[2 + i] < 1)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "conv_transpose2d: padding [%d,%d,%d,%d] crops all %D %s of the output "
                        "of input %S with kernel %S",
                        a.padding[0], a.padding[1], a.padding[2], a.padding[3], full,
                        i ? "columns" : "rows", nx->rank, nx->shape, nw->rank, nw->shape);
  }
  if (!fuse__check_shape(g, "conv_transpose2d", 4, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_CONV_TRANSPOSE2D, 2, in, 4, out))) return FUSE_NONE;
  n->a.convt = a;
  return fuse__id(g, n);
}

/* x [N, C, L], w [C, K / groups, KL]: the 2-D op over [N, C, 1, L] */
static fuse_value fuse__conv_transpose1d(fuse_graph *g, fuse_value x, fuse_value w,
                                         const fuse_conv_transpose2d_attrs *attrs) {
  const char *who = "conv_transpose2d";
  const fuse__node *nw = fuse__node_of(g, w);
  fuse_conv_transpose2d_attrs a;
  if (nw->rank != 3)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: 1-D input %S (%V) needs a 3-D weight [C,K/groups,KL], "
                      "not %S (%V)",
                      fuse__node_of(g, x)->rank, fuse__node_of(g, x)->shape, x, nw->rank,
                      nw->shape, w);
  memset(&a, 0, sizeof a);
  if (attrs) a = *attrs;
  if (!fuse__1d_default(g, who, x, "strides", a.strides[0], 1) ||
      !fuse__1d_default(g, who, x, "dilation", a.dilation[0], 1) ||
      !fuse__1d_default(g, who, x, "padding (top)", a.padding[0], 0) ||
      !fuse__1d_default(g, who, x, "padding (bottom)", a.padding[2], 0) ||
      !fuse__1d_default(g, who, x, "output_padding", a.output_padding[0], 0))
    return FUSE_NONE;
  return fuse__as_1d(g, fuse_conv_transpose2d(g, fuse__as_2d(g, x), fuse__as_2d(g, w), &a));
}

/* ---- LSTM / GRU: unrolled over time from matmul, slice, add, mul, sigmoid and tanh */

/* x[from : from + count] along axis (a shorthand of fuse_slice) */
static fuse_value fuse__slice1(fuse_graph *g, fuse_value x, int axis, int64_t from, int64_t count) {
  int64_t end = from + count;
  return fuse_slice(g, x, 1, &axis, &from, &end, NULL);
}

/* Rows row0 .. row0 + rows of v[d] for v [D, R, cols] (a matrix [rows, cols], or [cols, rows]
   when transposed) or v [D, R] (a vector [rows]): cut from the data when v is a constant, so
   the plan holds the weights ready; otherwise slice, reshape (and transpose) at run time. */
static fuse_value fuse__rnn_part(fuse_graph *g, fuse_value v, int d, int64_t row0, int64_t rows,
                                 int transpose) {
  const fuse__node *n = fuse__node_of(g, v);
  int rank = n->rank - 1;
  int64_t R = n->shape[1], cols = n->rank == 3 ? n->shape[2] : 1, shape[2], i, j;
  fuse_value p;
  shape[0] = transpose ? cols : rows;
  shape[1] = transpose ? rows : cols;
  if (n->op == FUSE__OP_CONST) {
    const float *src;
    float *dst;
    if ((p = fuse_constant(g, NULL, rank, shape, NULL)) == FUSE_NONE) return FUSE_NONE;
    src = g->nodes[v].data + ((int64_t)d * R + row0) * cols; /* nodes may have moved */
    dst = g->nodes[p].data;
    for (i = 0; i < rows; i++)
      for (j = 0; j < cols; j++) dst[transpose ? j * rows + i : i * cols + j] = src[i * cols + j];
    return p;
  }
  {
    int axes[2] = {0, 1};
    int64_t from[2], to[2], plain[2];
    from[0] = d, from[1] = row0, to[0] = d + 1, to[1] = row0 + rows;
    plain[0] = rows, plain[1] = cols;
    p = fuse_reshape(g, fuse_slice(g, v, 2, axes, from, to, NULL), rank, plain);
    return transpose ? fuse_transpose(g, p, NULL) : p;
  }
}

/* The sizes of an LSTM / GRU and its checked operands. */
typedef struct fuse__rnn {
  fuse_graph *g;
  const char *who; /* "lstm" or "gru" */
  fuse_rnn_attrs a;
  int gates; /* 4 (i, o, f, c) or 3 (z, r, h) */
  int64_t T, N, I, H, D;
  fuse_value x, w, r, b, h0, c0;
  fuse_value rows;           /* x as [T * N, I], time-major */
  fuse_value *steps;         /* T hidden states of one direction, in time order */
  fuse_value h_last[2], c_last[2], y_dir[2];
} fuse__rnn;

/* Checks one operand's shape against the one expected; `what` names its dimensions. */
static int fuse__rnn_shape(fuse__rnn *s, const char *name, fuse_value v, int64_t d0, int64_t d1,
                           int64_t d2, int rank, const char *what) {
  const fuse__node *n = fuse__node_of(s->g, v);
  int64_t want[3];
  want[0] = d0, want[1] = d1, want[2] = d2;
  if (n->rank == rank && memcmp(n->shape, want, (size_t)rank * sizeof(int64_t)) == 0) return 1;
  fuse__fail(s->g, FUSE_ERROR_SHAPE, "%s: %s %S (%V) must be %S %s", s->who, name, n->rank,
             n->shape, v, rank, want, what);
  return 0;
}

/* Checks the operands and attributes of fuse_lstm / fuse_gru; fills s. */
static int fuse__rnn_begin(fuse__rnn *s, fuse_graph *g, const char *who, int gates,
                           const fuse_value *ops, const fuse_rnn_attrs *a) {
  fuse_value in[6];
  const fuse__node *nx;
  int k, n = 0, G = gates;
  const char *state = a && a->batch_first ? "[batch, num_directions, hidden_size]"
                                          : "[num_directions, batch, hidden_size]";
  memset(s, 0, sizeof *s);
  s->g = g;
  s->who = who;
  s->gates = gates;
  s->x = ops[0], s->w = ops[1], s->r = ops[2], s->b = ops[3], s->h0 = ops[4], s->c0 = ops[5];
  for (k = 0; k < 6; k++) /* b, h0, c0 may be FUSE_NONE */
    if (k < 3 || ops[k] != FUSE_NONE) in[n++] = ops[k];
  if (!fuse__begin(g, who, n, in)) return 0;
  if (!a)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "%s: attributes are NULL (hidden_size is required)", who),
           0;
  s->a = *a;
  if (!fuse__enum_in((int)a->direction, FUSE_RNN_FORWARD, FUSE_RNN_BIDIRECTIONAL))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "%s: direction %d is not forward (0), reverse (1) or bidirectional (2)",
                      who, (int)a->direction),
           0;
  if (a->hidden_size < 1)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: hidden_size %d must be >= 1", who,
                      a->hidden_size),
           0;
  if (!(a->clip >= 0))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "%s: clip=%f must be >= 0 (0: no clipping)", who, (double)a->clip),
           0;
  nx = fuse__node_of(g, s->x);
  if (nx->rank != 3)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: input %S (%V) must be 3-D %s", who, nx->rank,
                      nx->shape, s->x,
                      a->batch_first ? "[batch, seq_length, input_size]"
                                     : "[seq_length, batch, input_size]"),
           0;
  s->T = nx->shape[a->batch_first ? 1 : 0];
  s->N = nx->shape[a->batch_first ? 0 : 1];
  s->I = nx->shape[2];
  s->H = a->hidden_size;
  s->D = a->direction == FUSE_RNN_BIDIRECTIONAL ? 2 : 1;
  if (!fuse__rnn_shape(s, "w", s->w, s->D, G * s->H, s->I, 3,
                       "[num_directions, gates * hidden_size, input_size]") ||
      !fuse__rnn_shape(s, "r", s->r, s->D, G * s->H, s->H, 3,
                       "[num_directions, gates * hidden_size, hidden_size]") ||
      (s->b != FUSE_NONE && !fuse__rnn_shape(s, "b", s->b, s->D, 2 * G * s->H, 0, 2,
                                              "[num_directions, 2 * gates * hidden_size]")))
    return 0;
  for (k = 0; k < 2; k++) {
    fuse_value v = k ? s->c0 : s->h0;
    if (v == FUSE_NONE) continue;
    if (!fuse__rnn_shape(s, k ? "c0" : "h0", v, a->batch_first ? s->N : s->D,
                         a->batch_first ? s->D : s->N, s->H, 3, state))
      return 0;
  }
  return 1;
}

/* The rows of x, time-major, and x times w[d]^T (+ the input bias) for all steps at once. */
static fuse_value fuse__rnn_input_gates(fuse__rnn *s, int d) {
  fuse_graph *g = s->g;
  int64_t GH = s->gates * s->H;
  fuse_value xw;
  if (s->rows == FUSE_NONE) {
    int64_t shape[2];
    int perm[3] = {1, 0, 2};
    shape[0] = s->T * s->N;
    shape[1] = s->I;
    s->rows = fuse_reshape(g, s->a.batch_first ? fuse_transpose(g, s->x, perm) : s->x, 2, shape);
  }
  xw = fuse_matmul(g, s->rows, fuse__rnn_part(g, s->w, d, 0, GH, 1));
  if (s->b != FUSE_NONE) xw = fuse_add(g, xw, fuse__rnn_part(g, s->b, d, 0, GH, 0));
  return xw;
}

/* An initial state of direction d as [N, H], or FUSE_NONE for zeros. */
static fuse_value fuse__rnn_state(fuse__rnn *s, fuse_value v, int d) {
  int perm[3] = {1, 0, 2};
  if (v == FUSE_NONE) return FUSE_NONE;
  if (s->a.batch_first) v = fuse_transpose(s->g, v, perm);
  return fuse__rnn_part(s->g, v, d, 0, s->N, 0);
}

/* Clips a gate's input to [-clip, clip] when asked. */
static fuse_value fuse__rnn_clip(const fuse__rnn *s, fuse_value v) {
  return s->a.clip > 0 ? fuse_clip(s->g, v, -s->a.clip, s->a.clip) : v;
}

static void fuse__lstm_direction(fuse__rnn *s, int d) {
  fuse_graph *g = s->g;
  int64_t H = s->H, t;
  int reverse = s->a.direction == FUSE_RNN_REVERSE || d == 1;
  fuse_value xw = fuse__rnn_input_gates(s, d);
  fuse_value rt = fuse__rnn_part(g, s->r, d, 0, 4 * H, 1);
  fuse_value rb = s->b != FUSE_NONE ? fuse__rnn_part(g, s->b, d, 4 * H, 4 * H, 0) : FUSE_NONE;
  fuse_value h = fuse__rnn_state(s, s->h0, d), c = fuse__rnn_state(s, s->c0, d);
  for (t = 0; t < s->T && g->status == FUSE_OK; t++) {
    int64_t step = reverse ? s->T - 1 - t : t;
    fuse_value gates = fuse__slice1(g, xw, 0, step * s->N, s->N), sig, i, o, f, cell;
    if (h != FUSE_NONE) { /* h r^T (+ rb) + the input's part: one fused step */
      fuse_value hr = fuse_matmul(g, h, rt);
      if (rb != FUSE_NONE) hr = fuse_add(g, hr, rb);
      gates = fuse_add(g, hr, gates);
    } else if (rb != FUSE_NONE) {
      gates = fuse_add(g, gates, rb);
    }
    gates = fuse__rnn_clip(s, gates);
    sig = fuse_sigmoid(g, fuse__slice1(g, gates, 1, 0, 3 * H));
    i = fuse__slice1(g, sig, 1, 0, H);
    o = fuse__slice1(g, sig, 1, H, H);
    f = fuse__slice1(g, sig, 1, 2 * H, H);
    cell = fuse_tanh(g, fuse__slice1(g, gates, 1, 3 * H, H));
    cell = fuse_mul(g, i, cell);
    c = c != FUSE_NONE ? fuse_add(g, fuse_mul(g, f, c), cell) : cell;
    h = fuse_mul(g, o, fuse_tanh(g, c));
    s->steps[step] = h;
  }
  s->h_last[d] = h;
  s->c_last[d] = c;
}

static void fuse__gru_direction(fuse__rnn *s, int d) {
  fuse_graph *g = s->g;
  int64_t H = s->H, t;
  int reverse = s->a.direction == FUSE_RNN_REVERSE || d == 1;
  fuse_value xw = fuse__rnn_input_gates(s, d);
  fuse_value r_zr = fuse__rnn_part(g, s->r, d, 0, 2 * H, 1);
  fuse_value r_h = fuse__rnn_part(g, s->r, d, 2 * H, H, 1);
  fuse_value rb_zr = FUSE_NONE, rb_h = FUSE_NONE;
  fuse_value h = fuse__rnn_state(s, s->h0, d);
  if (s->b != FUSE_NONE) {
    rb_zr = fuse__rnn_part(g, s->b, d, 3 * H, 2 * H, 0);
    rb_h = fuse__rnn_part(g, s->b, d, 5 * H, H, 0);
  }
  for (t = 0; t < s->T && g->status == FUSE_OK; t++) {
    int64_t step = reverse ? s->T - 1 - t : t;
    fuse_value xt = fuse__slice1(g, xw, 0, step * s->N, s->N);
    fuse_value zr = fuse__slice1(g, xt, 1, 0, 2 * H), z, r, hr = FUSE_NONE, cand;
    if (h != FUSE_NONE) {
      fuse_value m = fuse_matmul(g, h, r_zr);
      if (rb_zr != FUSE_NONE) m = fuse_add(g, m, rb_zr);
      zr = fuse_add(g, m, zr);
    } else if (rb_zr != FUSE_NONE) {
      zr = fuse_add(g, zr, rb_zr);
    }
    zr = fuse_sigmoid(g, fuse__rnn_clip(s, zr));
    z = fuse__slice1(g, zr, 1, 0, H);
    r = fuse__slice1(g, zr, 1, H, H);
    /* the candidate: linear_before_reset = 1: r * (h R_h^T + Rb_h); 0: (r * h) R_h^T + Rb_h */
    if (h != FUSE_NONE) hr = fuse_matmul(g, s->a.linear_before_reset ? h : fuse_mul(g, r, h), r_h);
    if (rb_h != FUSE_NONE) hr = hr != FUSE_NONE ? fuse_add(g, hr, rb_h) : rb_h;
    if (hr != FUSE_NONE && s->a.linear_before_reset) hr = fuse_mul(g, r, hr);
    cand = fuse__slice1(g, xt, 1, 2 * H, H);
    if (hr != FUSE_NONE) cand = fuse_add(g, hr, cand);
    cand = fuse_tanh(g, fuse__rnn_clip(s, cand));
    /* h' = (1 - z) * cand + z * h = cand + z * (h - cand) */
    h = h != FUSE_NONE ? fuse_add(g, cand, fuse_mul(g, z, fuse_sub(g, h, cand)))
                       : fuse_sub(g, cand, fuse_mul(g, z, cand));
    s->steps[step] = h;
  }
  s->h_last[d] = h;
}

/* y [T, D, N, H] (batch_first: [N, T, D, H]) from the steps of direction d, and y_h / y_c. */
static void fuse__rnn_collect(fuse__rnn *s, int d, int want_y) {
  int64_t shape[4];
  if (!want_y) return;
  shape[0] = s->T, shape[1] = 1, shape[2] = s->N, shape[3] = s->H;
  s->y_dir[d] = fuse_reshape(s->g, fuse_concat(s->g, (int)s->T, s->steps, 0), 4, shape);
}

/* [D, N, H] (batch_first: [N, D, H]) from the last states of the directions. */
static fuse_value fuse__rnn_final(fuse__rnn *s, const fuse_value *last) {
  int64_t shape[3];
  int perm[3] = {1, 0, 2};
  fuse_value v;
  shape[0] = s->D, shape[1] = s->N, shape[2] = s->H;
  v = fuse_reshape(s->g, s->D == 2 ? fuse_concat(s->g, 2, last, 0) : last[0], 3, shape);
  return s->a.batch_first ? fuse_transpose(s->g, v, perm) : v;
}

/* Both layers: check, unroll each direction, gather the outputs asked for. */
static fuse_result fuse__rnn_build(fuse_graph *g, const char *who, int gates,
                                   const fuse_value *ops, const fuse_rnn_attrs *a, fuse_value *y,
                                   fuse_value *y_h, fuse_value *y_c) {
  fuse__rnn s;
  int d;
  if (y) *y = FUSE_NONE;
  if (y_h) *y_h = FUSE_NONE;
  if (y_c) *y_c = FUSE_NONE;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!fuse__rnn_begin(&s, g, who, gates, ops, a)) return g->status;
  if ((uint64_t)s.T > (uint64_t)0x7fffffff / sizeof(fuse_value))
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED, "%s: %D time steps are too many to unroll", who,
                      s.T),
           g->status;
  s.steps = (fuse_value *)fuse__alloc(&g->alloc, (size_t)s.T * sizeof(fuse_value), 16);
  if (!s.steps) return fuse__oom(g, who), g->status;
  s.rows = FUSE_NONE;
  for (d = 0; d < s.D && g->status == FUSE_OK; d++) {
    if (gates == 4) fuse__lstm_direction(&s, d);
    else fuse__gru_direction(&s, d);
    fuse__rnn_collect(&s, d, y != NULL);
  }
  fuse__free(&g->alloc, s.steps);
  if (g->status != FUSE_OK) return g->status;
  if (y) {
    int perm[4] = {2, 0, 1, 3};
    fuse_value v = s.D == 2 ? fuse_concat(g, 2, s.y_dir, 1) : s.y_dir[0];
    *y = s.a.batch_first ? fuse_transpose(g, v, perm) : v;
  }
  if (y_h) *y_h = fuse__rnn_final(&s, s.h_last);
  if (y_c) *y_c = fuse__rnn_final(&s, s.c_last);
  if (g->status != FUSE_OK) {
    if (y) *y = FUSE_NONE;
    if (y_h) *y_h = FUSE_NONE;
    if (y_c) *y_c = FUSE_NONE;
  }
  return g->status;
}

FUSE_API fuse_result fuse_lstm(fuse_graph *g, fuse_value x, fuse_value w, fuse_value r,
                               fuse_value b, fuse_value h0, fuse_value c0,
                               const fuse_rnn_attrs *a, fuse_value *y, fuse_value *y_h,
                               fuse_value *y_c) {
  fuse_value ops[6];
  ops[0] = x, ops[1] = w, ops[2] = r, ops[3] = b, ops[4] = h0, ops[5] = c0;
  return fuse__rnn_build(g, "lstm", 4, ops, a, y, y_h, y_c);
}

FUSE_API fuse_result fuse_gru(fuse_graph *g, fuse_value x, fuse_value w, fuse_value r,
                              fuse_value b, fuse_value h0, const fuse_rnn_attrs *a,
                              fuse_value *y, fuse_value *y_h) {
  fuse_value ops[6];
  ops[0] = x, ops[1] = w, ops[2] = r, ops[3] = b, ops[4] = h0, ops[5] = FUSE_NONE;
  return fuse__rnn_build(g, "gru", 3, ops, a, y, y_h, NULL);
}
/* ==== end src/builders_layers.c ==== */
/* ==== begin src/composites.c ==== */
/* --------------------------------------------------------------- composites -- */

/* A pass that fails leaves the graph intact: the message goes to fuse_graph_error, the
   graph's status stays FUSE_OK. */
static fuse_result fuse__pass_error(fuse_graph *g, fuse_result r, const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  if (g->status != FUSE_OK) return g->status;
  o.buf = g->error;
  o.len = 0;
  o.cap = sizeof g->error;
  o.write = NULL;
  o.user = NULL;
  va_start(ap, fmt);
  fuse__vformat(&o, g, fmt, ap);
  va_end(ap);
  return r;
}

static void fuse__pass_begin(fuse_graph *g) {
  if (g->status == FUSE_OK) g->error[0] = 0;
}

/* Records a composite over `members` (the pattern's post-order; the last is the root). */
static int fuse__composite_add(fuse_graph *g, const char *name, const char *function,
                               const char *codegen, int bind_constants, const fuse_value *members,
                               int count) {
  fuse__composite *c, *grown;
  int k;
  grown = (fuse__composite *)fuse__grow(&g->alloc, g->composites, g->num_composites,
                                        &g->cap_composites, g->num_composites + 1,
                                        sizeof(fuse__composite));
  if (!grown) return 0;
  g->composites = grown;
  c = &g->composites[g->num_composites];
  memset(c, 0, sizeof *c);
  c->name = fuse__strdup(g, name);
  c->function = fuse__strdup(g, function);
  c->codegen = codegen ? fuse__strdup(g, codegen) : NULL;
  if (!c->name || !c->function || (codegen && !c->codegen)) {
    fuse__composite_free(g, c);
    return 0;
  }
  c->root = c->first = members[count - 1];
  for (k = 0; k < count; k++)
    if (members[k] < c->first) c->first = members[k];
  c->region = -1;
  c->num_ops = count;
  c->bind_constants = bind_constants;
  for (k = 0; k < count; k++) g->nodes[members[k]].composite = g->num_composites;
  g->num_composites++;
  return 1;
}

/* The composite a rule makes: function "fused_" + the ops in the pattern's post-order, and
   codegen the name's prefix before '.'. */
static int fuse__composite_from_rule(fuse_graph *g, const fuse_rule *rule,
                                     const fuse_pattern_options *o, const fuse_value *members,
                                     int count) {
  const char *dot = strchr(rule->name, '.');
  size_t len = 6, at, k;
  char *function, *codegen = NULL;
  int i, ok;
  for (i = 0; i < count; i++) len += 1 + strlen(fuse__op_names[g->nodes[members[i]].op]);
  function = (char *)fuse__alloc(&g->alloc, len, 1);
  if (dot && !o->no_codegen_annotation && dot > rule->name) {
    codegen = (char *)fuse__alloc(&g->alloc, (size_t)(dot - rule->name) + 1, 1);
    if (codegen) {
      memcpy(codegen, rule->name, (size_t)(dot - rule->name));
      codegen[dot - rule->name] = 0;
    }
  }
  ok = function && (codegen || !dot || o->no_codegen_annotation || dot == rule->name);
  if (ok) {
    memcpy(function, "fused", 5);
    at = 5;
    for (i = 0; i < count; i++) {
      const char *op = fuse__op_names[g->nodes[members[i]].op];
      function[at++] = '_';
      for (k = 0; op[k]; k++) function[at++] = op[k];
    }
    function[at] = 0;
    ok = fuse__composite_add(g, rule->name, function, codegen, !o->keep_constants_as_params,
                             members, count);
  }
  fuse__free(&g->alloc, function);
  fuse__free(&g->alloc, codegen);
  return ok;
}

FUSE_API int fuse_composite_count(const fuse_graph *g) { return g ? g->num_composites : 0; }

FUSE_API int fuse_value_composite(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? g->nodes[v].composite : -1;
}

FUSE_API fuse_result fuse_composite_get(const fuse_graph *g, int i, fuse_composite_info *out) {
  const fuse__composite *c;
  if (!g || !out || i < 0 || i >= g->num_composites) return FUSE_ERROR_INVALID_ARGUMENT;
  c = &g->composites[i];
  memset(out, 0, sizeof *out);
  out->name = c->name;
  out->function = c->function;
  out->codegen = c->codegen;
  out->num_ops = c->num_ops;
  out->region = c->region;
  out->root = c->root;
  out->has_epilogue = fuse_analyze_epilogue(g, c->root, &out->epilogue) == FUSE_OK;
  return FUSE_OK;
}


/* ==== end src/composites.c ==== */
/* ==== begin src/pattern.c ==== */
/* ------------------------------------------------------------ pattern parser -- */
/* A pattern compiles to a small tree of fuse__pat nodes held in one fuse__pattern. */

#define FUSE__PAT_MAX_NODES 256
#define FUSE__PAT_MAX_CAPTURES 16
#define FUSE__PAT_MAX_ATTRS 16
#define FUSE__MATCH_MAX FUSE__PAT_MAX_NODES /* ops in one match */

enum { FUSE__PAT_ANY, FUSE__PAT_CONST, FUSE__PAT_OP, FUSE__PAT_ALT };

typedef struct fuse__pat {
  uint64_t ops;           /* FUSE__PAT_OP: bit per fuse__op (first: no padding around it) */
  int kind;
  int optional, ellipsis; /* op?(...), trailing ... */
  int capture;            /* slot, or -1 */
  int first_arg, num_args;   /* into pattern->args (ALT: two entries: left, right) */
  int first_attr, num_attrs; /* into pattern->attrs */
} fuse__pat;

typedef struct fuse__pat_attr {
  char name[24];
  double v[FUSE_MAX_RANK];
  int count, is_list;
} fuse__pat_attr;

typedef struct fuse__pattern {
  fuse__pat nodes[FUSE__PAT_MAX_NODES];
  int args[FUSE__PAT_MAX_NODES];
  fuse__pat_attr attrs[FUSE__PAT_MAX_ATTRS];
  const char *captures[FUSE__PAT_MAX_CAPTURES]; /* names: slices of the pattern text */
  size_t capture_len[FUSE__PAT_MAX_CAPTURES];
  int num_nodes, num_args, num_attrs, num_captures, root, depth;
  const char *text, *p;
  char error[160];
} fuse__pattern;

static int fuse__pattern_fail(fuse__pattern *pt, const char *expected) {
  fuse__out o;
  char got[16];
  size_t i;
  for (i = 0; i < 10 && pt->p[i]; i++) got[i] = pt->p[i];
  got[i] = 0;
  o.buf = pt->error;
  o.len = 0;
  o.cap = sizeof pt->error;
  o.write = NULL;
  o.user = NULL;
  pt->error[0] = 0;
  fuse__puts(&o, "position ");
  fuse__put_int(&o, (int64_t)(pt->p - pt->text) + 1);
  fuse__puts(&o, ": expected ");
  fuse__puts(&o, expected);
  fuse__puts(&o, *pt->p ? ", found '" : ", found the end of the pattern");
  if (*pt->p) {
    fuse__puts(&o, got);
    fuse__puts(&o, i == 10 ? "...'" : "'");
  }
  return -1;
}

static void fuse__pattern_skip(fuse__pattern *pt) {
  while (*pt->p == ' ' || *pt->p == '\t' || *pt->p == '\n' || *pt->p == '\r') pt->p++;
}

static int fuse__pattern_accept(fuse__pattern *pt, char c) {
  fuse__pattern_skip(pt);
  if (*pt->p != c) return 0;
  pt->p++;
  return 1;
}

static int fuse__pattern_ident(fuse__pattern *pt, char *out, size_t cap) {
  fuse__pattern_skip(pt);
  return fuse__scan_ident(&pt->p, out, cap);
}

static int fuse__pattern_new(fuse__pattern *pt, int kind) {
  fuse__pat *n;
  if (pt->num_nodes == FUSE__PAT_MAX_NODES) return fuse__pattern_fail(pt, "a smaller pattern");
  n = &pt->nodes[pt->num_nodes];
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->capture = -1;
  return pt->num_nodes++;
}

static int fuse__pattern_op_bit(fuse__pattern *pt, const char *name, uint64_t *mask) {
  int op;
  for (op = FUSE__OP_CONV2D; op < FUSE__OP_COPY; op++)
    if (strcmp(name, fuse__op_names[op]) == 0) {
      *mask |= (uint64_t)1 << op;
      return 1;
    }
  return fuse__pattern_fail(pt, "an op name (conv2d, matmul, add, relu, clip, reshape, ...)"), 0;
}

static int fuse__pattern_alt(fuse__pattern *pt);

/* op spec already read into mask; reads [attrs], ?, (args) */
static int fuse__pattern_op(fuse__pattern *pt, uint64_t mask) {
  int id = fuse__pattern_new(pt, FUSE__PAT_OP), args[FUSE__PAT_MAX_NODES], n = 0, i;
  if (id < 0) return -1;
  pt->nodes[id].ops = mask;
  pt->nodes[id].first_attr = pt->num_attrs;
  if (fuse__pattern_accept(pt, '[')) {
    do {
      fuse__pat_attr *a;
      double v;
      size_t used;
      if (pt->num_attrs == FUSE__PAT_MAX_ATTRS) return fuse__pattern_fail(pt, "fewer attributes");
      a = &pt->attrs[pt->num_attrs];
      memset(a, 0, sizeof *a);
      if (!fuse__pattern_ident(pt, a->name, sizeof a->name)) return fuse__pattern_fail(pt, "an attribute name");
      if (!fuse__pattern_accept(pt, '=')) return fuse__pattern_fail(pt, "'=' after the attribute name");
      if (fuse__pattern_accept(pt, '[')) {
        a->is_list = 1;
        if (!fuse__pattern_accept(pt, ']')) {
          do {
            fuse__pattern_skip(pt);
            if (a->count == FUSE_MAX_RANK) return fuse__pattern_fail(pt, "at most 8 list entries");
            if (!(used = fuse__parse_number(pt->p, &v))) return fuse__pattern_fail(pt, "a number");
            pt->p += used;
            a->v[a->count++] = v;
          } while (fuse__pattern_accept(pt, ','));
          if (!fuse__pattern_accept(pt, ']')) return fuse__pattern_fail(pt, "',' or ']'");
        }
      } else {
        fuse__pattern_skip(pt);
        if (!(used = fuse__parse_number(pt->p, &v))) return fuse__pattern_fail(pt, "a number or [list]");
        pt->p += used;
        a->v[0] = v;
        a->count = 1;
      }
      pt->num_attrs++;
      pt->nodes[id].num_attrs++;
    } while (fuse__pattern_accept(pt, ','));
    if (!fuse__pattern_accept(pt, ']')) return fuse__pattern_fail(pt, "',' or ']' closing the attributes");
  }
  if (fuse__pattern_accept(pt, '?')) pt->nodes[id].optional = 1;
  if (!fuse__pattern_accept(pt, '(')) return fuse__pattern_fail(pt, "'(' and the op's operands");
  if (!fuse__pattern_accept(pt, ')')) {
    do {
      fuse__pattern_skip(pt);
      if (strncmp(pt->p, "...", 3) == 0) {
        pt->p += 3;
        pt->nodes[id].ellipsis = 1;
        break;
      }
      if (n == FUSE__PAT_MAX_NODES) return fuse__pattern_fail(pt, "fewer operands");
      if ((args[n++] = fuse__pattern_alt(pt)) < 0) return -1;
    } while (fuse__pattern_accept(pt, ','));
    if (!fuse__pattern_accept(pt, ')')) return fuse__pattern_fail(pt, "',' or ')' after an operand pattern");
  }
  if (pt->nodes[id].optional && n == 0)
    return fuse__pattern_fail(pt, "an operand: op?(P, ...) stands for P when the op is absent");
  if (pt->num_args + n > FUSE__PAT_MAX_NODES) return fuse__pattern_fail(pt, "a smaller pattern");
  pt->nodes[id].first_arg = pt->num_args;
  pt->nodes[id].num_args = n;
  for (i = 0; i < n; i++) pt->args[pt->num_args++] = args[i];
  return id;
}

static int fuse__pattern_primary1(fuse__pattern *pt);

/* Nesting is bounded, so no pattern text can exhaust the stack. */
static int fuse__pattern_primary(fuse__pattern *pt) {
  int id;
  if (++pt->depth > FUSE__PAT_MAX_NODES)
    return fuse__pattern_fail(pt, "a pattern nested at most 256 deep");
  id = fuse__pattern_primary1(pt);
  pt->depth--;
  return id;
}

static int fuse__pattern_primary1(fuse__pattern *pt) {
  char word[32];
  fuse__pattern_skip(pt);
  if (*pt->p == '*') {
    pt->p++;
    return fuse__pattern_new(pt, FUSE__PAT_ANY);
  }
  if (*pt->p == '$') {
    int slot, id;
    const char *name;
    size_t len;
    pt->p++;
    if (!fuse__is_ident_start((unsigned char)*pt->p))
      return fuse__pattern_fail(pt, "a capture name after '$'");
    name = pt->p;
    while (fuse__is_ident_char((unsigned char)*pt->p)) pt->p++;
    len = (size_t)(pt->p - name);
    for (slot = 0; slot < pt->num_captures; slot++)
      if (pt->capture_len[slot] == len && memcmp(pt->captures[slot], name, len) == 0) break;
    if (slot == pt->num_captures) {
      if (slot == FUSE__PAT_MAX_CAPTURES) return fuse__pattern_fail(pt, "at most 16 capture names");
      pt->captures[slot] = name;
      pt->capture_len[slot] = len;
      pt->num_captures++;
    }
    if (fuse__pattern_accept(pt, ':')) {
      if ((id = fuse__pattern_primary(pt)) < 0) return -1;
      if (pt->nodes[id].capture >= 0) return fuse__pattern_fail(pt, "one capture name per pattern");
    } else if ((id = fuse__pattern_new(pt, FUSE__PAT_ANY)) < 0) {
      return -1;
    }
    pt->nodes[id].capture = slot;
    return id;
  }
  if (*pt->p == '(') { /* (relu|clip)(...) or a grouped pattern */
    const char *save = pt->p;
    uint64_t mask = 0;
    pt->p++;
    if (fuse__pattern_ident(pt, word, sizeof word) && strcmp(word, "const") != 0) {
      for (;;) {
        if (!fuse__pattern_op_bit(pt, word, &mask)) return -1;
        if (fuse__pattern_accept(pt, ')')) break;
        if (!fuse__pattern_accept(pt, '|') || !fuse__pattern_ident(pt, word, sizeof word)) {
          mask = 0;
          break;
        }
      }
      fuse__pattern_skip(pt);
      if (mask && (*pt->p == '(' || *pt->p == '?' || *pt->p == '[')) return fuse__pattern_op(pt, mask);
    }
    pt->p = save + 1; /* a grouped pattern */
    {
      int id = fuse__pattern_alt(pt);
      if (id < 0) return -1;
      if (!fuse__pattern_accept(pt, ')')) return fuse__pattern_fail(pt, "')' closing the group");
      return id;
    }
  }
  if (!fuse__pattern_ident(pt, word, sizeof word)) return fuse__pattern_fail(pt, "a pattern: *, $x, const or op(...)");
  if (strcmp(word, "const") == 0) return fuse__pattern_new(pt, FUSE__PAT_CONST);
  {
    uint64_t mask = 0;
    const char *at = pt->p - strlen(word);
    if (!fuse__pattern_op_bit(pt, word, &mask)) {
      pt->p = at;
      return fuse__pattern_fail(pt, "an op name (conv2d, matmul, add, relu, clip, reshape, ...)");
    }
    return fuse__pattern_op(pt, mask);
  }
}

static int fuse__pattern_alt(fuse__pattern *pt) {
  int left = fuse__pattern_primary(pt);
  while (left >= 0 && fuse__pattern_accept(pt, '|')) {
    int right = fuse__pattern_primary(pt), id;
    if (right < 0) return -1;
    if ((id = fuse__pattern_new(pt, FUSE__PAT_ALT)) < 0) return -1;
    if (pt->num_args + 2 > FUSE__PAT_MAX_NODES) return fuse__pattern_fail(pt, "a smaller pattern");
    pt->nodes[id].first_arg = pt->num_args;
    pt->nodes[id].num_args = 2;
    pt->args[pt->num_args++] = left;
    pt->args[pt->num_args++] = right;
    left = id;
  }
  return left;
}

static int fuse__pattern_parse(fuse__pattern *pt, const char *text) {
  pt->num_nodes = pt->num_args = pt->num_attrs = pt->num_captures = pt->depth = 0;
  pt->error[0] = 0;
  pt->text = pt->p = text ? text : "";
  if (!text) return fuse__pattern_fail(pt, "a pattern (it is NULL)"), 0;
  pt->root = fuse__pattern_alt(pt);
  if (pt->root < 0) return 0;
  fuse__pattern_skip(pt);
  if (*pt->p) return fuse__pattern_fail(pt, "the end of the pattern"), 0;
  return 1;
}

/* ------------------------------------------------------------------ matcher -- */

struct fuse_match {
  const fuse_graph *g;
  const fuse__pattern *pt;
  fuse_value root;
  fuse_value captures[FUSE__PAT_MAX_CAPTURES];
  int num_members;
  fuse_value members[FUSE__MATCH_MAX]; /* matched ops in the pattern's post-order */
  const int *claimed;                  /* per node: 1 if already in a composite */
  const int *use_first, *use_list;     /* users of each node (fuse__users), or NULL: then no
                                          operand order is preferred for escaping */
};

FUSE_API fuse_value fuse_match_capture(const fuse_match *m, const char *name) {
  int i;
  if (!m || !name) return FUSE_NONE;
  for (i = 0; i < m->pt->num_captures; i++)
    if (m->pt->capture_len[i] == strlen(name) &&
        memcmp(m->pt->captures[i], name, m->pt->capture_len[i]) == 0)
      return m->captures[i];
  return FUSE_NONE;
}

FUSE_API fuse_value fuse_match_root(const fuse_match *m) { return m ? m->root : FUSE_NONE; }

/* A node attribute in the text form's terms, as numbers. */
static int fuse__node_attr(const fuse__node *n, const char *name, double *v) {
  const fuse__attrs *a = &n->a;
  const int *list = NULL;
  int count = 0, i;
  if (n->op == FUSE__OP_CONV2D) {
    if (!strcmp(name, "strides")) list = a->conv.strides, count = 2;
    else if (!strcmp(name, "padding")) list = a->conv.padding, count = 4;
    else if (!strcmp(name, "dilation")) list = a->conv.dilation, count = 2;
    else if (!strcmp(name, "groups")) list = &a->conv.groups, count = 1;
  } else if (n->op == FUSE__OP_MAX_POOL2D || n->op == FUSE__OP_AVG_POOL2D) {
    if (!strcmp(name, "kernel")) list = a->pool.kernel, count = 2;
    else if (!strcmp(name, "strides")) list = a->pool.strides, count = 2;
    else if (!strcmp(name, "padding")) list = a->pool.padding, count = 4;
    else if (!strcmp(name, "dilation")) list = a->pool.dilation, count = 2;
    else if (!strcmp(name, "ceil_mode")) list = &a->pool.ceil_mode, count = 1;
    else if (!strcmp(name, "count_include_pad")) list = &a->pool.count_include_pad, count = 1;
  } else if (n->op == FUSE__OP_CLIP && (!strcmp(name, "lo") || !strcmp(name, "hi"))) {
    v[0] = name[0] == 'l' ? a->clip.lo : a->clip.hi;
    return 1;
  } else if (n->op == FUSE__OP_BATCH_NORM && !strcmp(name, "eps")) {
    v[0] = a->eps;
    return 1;
  } else if ((n->op == FUSE__OP_FLATTEN || n->op == FUSE__OP_CONCAT || n->op == FUSE__OP_SOFTMAX) &&
             !strcmp(name, "axis")) {
    v[0] = a->axis;
    return 1;
  } else if (n->op == FUSE__OP_TRANSPOSE && !strcmp(name, "perm")) {
    list = a->perm, count = n->rank;
  } else if (n->op == FUSE__OP_RESHAPE && !strcmp(name, "shape")) {
    for (i = 0; i < n->rank; i++) v[i] = (double)n->shape[i];
    return n->rank ? n->rank : -1;
  }
  for (i = 0; i < count; i++) v[i] = list[i];
  return count;
}

static int fuse__attrs_match(const fuse__pattern *pt, const fuse__pat *p, const fuse__node *n) {
  int i, k;
  for (i = 0; i < p->num_attrs; i++) {
    const fuse__pat_attr *a = &pt->attrs[p->first_attr + i];
    double v[FUSE_MAX_RANK];
    int count = fuse__node_attr(n, a->name, v);
    if (count < 0) count = 0; /* reshape to rank 0 */
    else if (count == 0) return 0;
    if (count != a->count) return 0;
    for (k = 0; k < count; k++)
      if (v[k] != a->v[k] && !(n->op == FUSE__OP_CLIP && (float)v[k] == (float)a->v[k])) return 0;
  }
  return 1;
}

static int fuse__is_commutative(int op) {
  return op == FUSE__OP_ADD || op == FUSE__OP_MUL || op == FUSE__OP_MAXIMUM || op == FUSE__OP_MINIMUM;
}

typedef struct fuse__mark {
  int num_members;
  fuse_value captures[FUSE__PAT_MAX_CAPTURES];
} fuse__mark;

static void fuse__save(const fuse_match *m, fuse__mark *k) {
  k->num_members = m->num_members;
  memcpy(k->captures, m->captures, sizeof k->captures);
}
static void fuse__restore(fuse_match *m, const fuse__mark *k) {
  m->num_members = k->num_members;
  memcpy(m->captures, k->captures, sizeof k->captures);
}

static int fuse__match(fuse_match *m, int pi, fuse_value v);

/* Matches the op pattern's operand patterns against node operands, in the given order. */
static int fuse__match_args(fuse_match *m, const fuse__pat *p, const fuse__node *n, int swap) {
  int i;
  for (i = 0; i < p->num_args; i++) {
    int pa = m->pt->args[p->first_arg + i], k = swap ? 1 - i : i;
    if (k >= n->num_in) { /* reshape's target shape: only * or const stand for it */
      const fuse__pat *q = &m->pt->nodes[pa];
      if (!(q->kind == FUSE__PAT_ANY || q->kind == FUSE__PAT_CONST) || q->capture >= 0) return 0;
      continue;
    }
    if (!fuse__match(m, pa, n->in[k])) return 0;
  }
  return 1;
}

/* Whether an operand of v that the match just took as an op (members past `from`) is also
   read outside v or is a graph output: then the match would escape through it. */
static int fuse__operand_escapes(const fuse_match *m, fuse_value v, int from) {
  const fuse__node *n = &m->g->nodes[v];
  int k, i, j;
  for (k = 0; k < n->num_in; k++) {
    fuse_value u = n->in[k];
    for (i = from; i < m->num_members && m->members[i] != u; i++) {}
    if (i == m->num_members) continue;
    for (j = 0; j < m->g->num_outputs; j++)
      if (m->g->outputs[j] == u) return 1;
    for (j = m->use_first[u]; j < m->use_first[u + 1]; j++)
      if (m->use_list[j] != v) return 1;
  }
  return 0;
}

static int fuse__match_op(fuse_match *m, const fuse__pat *p, fuse_value v) {
  const fuse__node *n = &m->g->nodes[v];
  int arity = n->num_in + (n->op == FUSE__OP_RESHAPE), i;
  int either = fuse__is_commutative(n->op) && p->num_args >= 1 && p->num_args <= 2;
  fuse__mark mark;
  if (n->op > 63 || !(p->ops & ((uint64_t)1 << n->op)) || m->claimed[v]) return 0;
  if (p->ellipsis ? p->num_args > arity : p->num_args != arity) return 0;
  if (!fuse__attrs_match(m->pt, p, n)) return 0;
  fuse__save(m, &mark);
  if (!fuse__match_args(m, p, n, 0)) {
    fuse__restore(m, &mark);
    /* commutative: the other order too (with `...`, the listed operand may be either) */
    if (!(either && fuse__match_args(m, p, n, 1))) {
      fuse__restore(m, &mark);
      return 0;
    }
  } else if (either && m->use_first && fuse__operand_escapes(m, v, mark.num_members)) {
    /* both orders may fit, e.g. add(conv + bias, x) where x is another conv + bias that the
       next block reads too: prefer the order whose ops are read only here */
    fuse__restore(m, &mark);
    if (!fuse__match_args(m, p, n, 1) || fuse__operand_escapes(m, v, mark.num_members)) {
      fuse__restore(m, &mark);
      fuse__match_args(m, p, n, 0); /* the first order again: it matched before */
    }
  }
  for (i = 0; i < m->num_members; i++)
    if (m->members[i] == v) return 1; /* the same op reached twice */
  if (m->num_members == FUSE__MATCH_MAX) return 0;
  m->members[m->num_members++] = v;
  return 1;
}

static int fuse__match(fuse_match *m, int pi, fuse_value v) {
  const fuse__pat *p = &m->pt->nodes[pi];
  const fuse__node *n = &m->g->nodes[v];
  fuse__mark mark;
  int ok;
  if (p->capture >= 0 && m->captures[p->capture] != FUSE_NONE && m->captures[p->capture] != v)
    return 0;
  fuse__save(m, &mark);
  switch (p->kind) {
  case FUSE__PAT_ANY: ok = 1; break;
  case FUSE__PAT_CONST: ok = n->op == FUSE__OP_CONST; break;
  case FUSE__PAT_ALT:
    ok = fuse__match(m, m->pt->args[p->first_arg], v);
    if (!ok) {
      fuse__restore(m, &mark);
      ok = fuse__match(m, m->pt->args[p->first_arg + 1], v);
    }
    break;
  default:
    ok = fuse__match_op(m, p, v);
    if (!ok && p->optional) { /* op?(P, ...): the op absent, P in its place */
      fuse__restore(m, &mark);
      ok = fuse__match(m, m->pt->args[p->first_arg], v);
    }
    break;
  }
  if (!ok) {
    fuse__restore(m, &mark);
    return 0;
  }
  if (p->capture >= 0) m->captures[p->capture] = v;
  return 1;
}

/* ==== end src/pattern.c ==== */
/* ==== begin src/fuse_ops.c ==== */
/* ------------------------------------------------------------ composites -- */

/* users[first[v] .. first[v+1]) lists the nodes that use v (once per use). */
typedef struct fuse__users {
  int *first, *list;
} fuse__users;

static int fuse__users_build(const fuse_graph *g, fuse__users *u) {
  int n = g->num_nodes, i, k, total = 0;
  u->list = NULL;
  u->first = (int *)fuse__alloc(&g->alloc, (size_t)(n + 2) * sizeof(int), 16);
  if (!u->first) return 0;
  memset(u->first, 0, (size_t)(n + 2) * sizeof(int));
  for (i = 0; i < n; i++)
    for (k = 0; k < g->nodes[i].num_in; k++) u->first[g->nodes[i].in[k] + 2]++, total++;
  for (i = 0; i < n; i++) u->first[i + 2] += u->first[i + 1];
  u->list = (int *)fuse__alloc(&g->alloc, (size_t)(total + 1) * sizeof(int), 16);
  if (!u->list) {
    fuse__free(&g->alloc, u->first);
    u->first = NULL;
    return 0;
  }
  for (i = 0; i < n; i++)
    for (k = 0; k < g->nodes[i].num_in; k++) u->list[u->first[g->nodes[i].in[k] + 1]++] = i;
  return 1;
}

static void fuse__users_free(const fuse_graph *g, fuse__users *u) {
  fuse__free(&g->alloc, u->first);
  fuse__free(&g->alloc, u->list);
}

static int fuse__is_output(const fuse_graph *g, fuse_value v) {
  int i;
  for (i = 0; i < g->num_outputs; i++)
    if (g->outputs[i] == v) return 1;
  return 0;
}

/* With escaping allowed, a match must still be convex: no path may leave it and come back,
   or the composite would depend on itself. `in_match` marks the members. */
static int fuse__convex(const fuse_match *m, const fuse__users *u, unsigned char *in_match,
                        int *stack) {
  int i, k, top = 0, ok = 1, lo = m->root;
  for (i = 0; i < m->num_members; i++)
    if (m->members[i] < lo) lo = m->members[i];
  /* walk forward from the members' outside users (up to the root); reaching a member closes
     a cycle. Nodes are marked 2 when pushed, so each is pushed once. */
  for (i = 0; i < m->num_members && ok; i++)
    for (k = u->first[m->members[i]]; k < u->first[m->members[i] + 1]; k++) {
      int w = u->list[k];
      if (!in_match[w] && w < m->root) {
        in_match[w] = 2;
        stack[top++] = w;
      }
    }
  while (top && ok) {
    int v = stack[--top];
    for (k = u->first[v]; k < u->first[v + 1] && ok; k++) {
      int w = u->list[k];
      if (w > m->root || in_match[w] == 2) continue;
      if (in_match[w] == 1) ok = 0;
      else {
        in_match[w] = 2;
        stack[top++] = w;
      }
    }
  }
  for (i = lo; i <= m->root; i++)
    if (in_match[i] == 2) in_match[i] = 0;
  return ok;
}

typedef struct fuse__candidate {
  fuse_value root;
  int first, count; /* members in the pool */
  fuse_value captures[FUSE__PAT_MAX_CAPTURES];
} fuse__candidate;

/* What fuse_ops_by_pattern's pieces share: the graph's users, which nodes a composite has
   claimed, and one rule's candidate matches. */
typedef struct fuse__pattern_pass {
  fuse_graph *g;
  fuse_pattern_options o;
  fuse__users users;
  int n;                 /* the graph's nodes */
  int *claimed;          /* per node: 1 once in a composite */
  unsigned char *in_match; /* per node: 1 in the candidate being checked (fuse__convex: 2) */
  int *stack;            /* the candidates' order, then fuse__convex's stack */
  fuse_value *pool;      /* members of every candidate match */
  int pool_cap, pool_len;
  fuse__candidate *cands;
  int cand_cap, n_cands;
} fuse__pattern_pass;

/* Parses every rule's pattern into pats, before anything changes: a bad one leaves the graph
   untouched. */
static fuse_result fuse__parse_rules(fuse_graph *g, const fuse_rule *rules, int n_rules,
                                     fuse__pattern *pats) {
  int r;
  for (r = 0; r < n_rules; r++) {
    const char *name = rules[r].name;
    if (!name || !*name)
      return fuse__pass_error(g, FUSE_ERROR_INVALID_ARGUMENT,
                              "fuse_ops_by_pattern: rule %d has no name", r);
    if (!fuse__pattern_parse(&pats[r], rules[r].pattern))
      return fuse__pass_error(g, FUSE_ERROR_PARSE, "pattern of rule '%s', %s", name, pats[r].error);
  }
  return FUSE_OK;
}

/* Every match of m's pattern rooted at an unclaimed op, in graph order, into s->cands (their
   members into s->pool). 0: out of memory. */
static int fuse__find_candidates(fuse__pattern_pass *s, fuse_match *m) {
  fuse_graph *g = s->g;
  int v, k;
  s->n_cands = 0;
  s->pool_len = 0;
  for (v = 0; v < s->n; v++) {
    fuse__candidate *c;
    if (g->nodes[v].op <= FUSE__OP_CONST || s->claimed[v]) continue;
    m->num_members = 0;
    for (k = 0; k < FUSE__PAT_MAX_CAPTURES; k++) m->captures[k] = FUSE_NONE;
    if (!fuse__match(m, m->pt->root, v) || m->num_members == 0) continue;
    if (m->members[m->num_members - 1] != v) continue; /* the root must be an op of the pattern */
    if (s->n_cands == s->cand_cap) {
      fuse__candidate *bigger = (fuse__candidate *)fuse__grow(
          &g->alloc, s->cands, s->n_cands, &s->cand_cap, s->n_cands + 1, sizeof(fuse__candidate));
      if (!bigger) return 0;
      s->cands = bigger;
    }
    if (s->pool_len + m->num_members > s->pool_cap) {
      fuse_value *bigger = (fuse_value *)fuse__grow(&g->alloc, s->pool, s->pool_len, &s->pool_cap,
                                                    s->pool_len + m->num_members,
                                                    sizeof(fuse_value));
      if (!bigger) return 0;
      s->pool = bigger;
    }
    c = &s->cands[s->n_cands];
    c->root = v;
    c->first = s->pool_len;
    c->count = m->num_members;
    memcpy(c->captures, m->captures, sizeof m->captures);
    memcpy(s->pool + s->pool_len, m->members, (size_t)m->num_members * sizeof(fuse_value));
    s->pool_len += m->num_members;
    s->n_cands++;
  }
  return 1;
}

/* Whether candidate c may become a composite of rule: none of its members claimed, no
   intermediate read outside it or a graph output (with allow_escaping: convex instead), and
   the rule's check accepts it. */
static int fuse__candidate_fits(fuse__pattern_pass *s, const fuse_rule *rule, fuse_match *m,
                                const fuse__candidate *c) {
  const fuse_value *mem = s->pool + c->first;
  int k, ok = 1;
  for (k = 0; k < c->count && ok; k++) ok = !s->claimed[mem[k]];
  if (!ok) return 0;
  for (k = 0; k < c->count; k++) s->in_match[mem[k]] = 1;
  /* intermediates used outside, or graph outputs, escape */
  if (!s->o.allow_escaping) {
    for (k = 0; k < c->count && ok; k++) {
      int j, val = mem[k];
      if (val == c->root) continue;
      if (fuse__is_output(s->g, val)) ok = 0;
      for (j = s->users.first[val]; j < s->users.first[val + 1] && ok; j++)
        ok = s->in_match[s->users.list[j]] != 0;
    }
  } else {
    m->root = c->root;
    m->num_members = c->count;
    memcpy(m->members, mem, (size_t)c->count * sizeof(fuse_value));
    ok = fuse__convex(m, &s->users, s->in_match, s->stack + s->n + 1);
  }
  if (ok && rule->check) {
    m->root = c->root;
    m->num_members = c->count;
    memcpy(m->members, mem, (size_t)c->count * sizeof(fuse_value));
    memcpy(m->captures, c->captures, sizeof m->captures);
    ok = rule->check(s->g, m, rule->user) != 0;
  }
  for (k = 0; k < c->count; k++) s->in_match[mem[k]] = 0;
  return ok;
}

/* Makes a composite of each candidate that fits, largest first; equal sizes keep graph order
   (a stable bucket pass by size). 0: out of memory. */
static int fuse__claim_candidates(fuse__pattern_pass *s, const fuse_rule *rule, fuse_match *m) {
  int *order = s->stack, max_count = 0, i, k, v;
  for (i = 0; i < s->n_cands; i++)
    if (s->cands[i].count > max_count) max_count = s->cands[i].count;
  for (k = max_count, v = 0; k >= 1 && v < s->n_cands; k--)
    for (i = 0; i < s->n_cands; i++)
      if (s->cands[i].count == k) order[v++] = i;
  for (i = 0; i < s->n_cands; i++) {
    const fuse__candidate *c = &s->cands[order[i]];
    const fuse_value *mem = s->pool + c->first;
    if (!fuse__candidate_fits(s, rule, m, c)) continue;
    if (!fuse__composite_from_rule(s->g, rule, &s->o, mem, c->count)) return 0;
    for (k = 0; k < c->count; k++) s->claimed[mem[k]] = 1;
  }
  return 1;
}

FUSE_API fuse_result fuse_ops_by_pattern(fuse_graph *g, const fuse_rule *rules, int n_rules,
                                         const fuse_pattern_options *opt) {
  fuse__pattern_pass s;
  fuse__pattern *pats = NULL;
  int r, v;
  fuse_result status = FUSE_ERROR_OUT_OF_MEMORY;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  memset(&s, 0, sizeof s);
  if (opt) s.o = *opt;
  if (n_rules < 0 || (n_rules > 0 && !rules))
    return fuse__pass_error(g, FUSE_ERROR_INVALID_ARGUMENT,
                            "fuse_ops_by_pattern: %d rules at %s", n_rules, rules ? "rules" : "NULL");
  s.g = g;
  s.n = g->num_nodes;
  pats = (fuse__pattern *)fuse__alloc(&g->alloc, sizeof(fuse__pattern) * (size_t)(n_rules + 1), 16);
  if (!pats) goto done;
  status = fuse__parse_rules(g, rules, n_rules, pats);
  if (status != FUSE_OK) goto done;
  status = FUSE_ERROR_OUT_OF_MEMORY;
  s.claimed = (int *)fuse__alloc(&g->alloc, (size_t)(s.n + 1) * sizeof(int), 16);
  s.in_match = (unsigned char *)fuse__alloc(&g->alloc, (size_t)(s.n + 1), 16);
  s.stack = (int *)fuse__alloc(&g->alloc, (size_t)(s.n + 1) * sizeof(int) * 2 + 64, 16);
  if (!s.claimed || !s.in_match || !s.stack || !fuse__users_build(g, &s.users)) goto done;
  for (v = 0; v < s.n; v++) s.claimed[v] = g->nodes[v].composite >= 0;
  memset(s.in_match, 0, (size_t)s.n);
  for (r = 0; r < n_rules; r++) { /* every match of this rule, then the largest first */
    fuse_match m;
    memset(&m, 0, sizeof m);
    m.g = g;
    m.pt = &pats[r];
    m.claimed = s.claimed;
    if (!s.o.allow_escaping) m.use_first = s.users.first, m.use_list = s.users.list;
    if (!fuse__find_candidates(&s, &m) || !fuse__claim_candidates(&s, &rules[r], &m)) goto done;
  }
  status = FUSE_OK;
done:
  if (status == FUSE_ERROR_OUT_OF_MEMORY) fuse__pass_error(g, status, "fuse_ops_by_pattern: out of memory");
  fuse__users_free(g, &s.users);
  fuse__free(&g->alloc, pats);
  fuse__free(&g->alloc, s.claimed);
  fuse__free(&g->alloc, s.in_match);
  fuse__free(&g->alloc, s.stack);
  fuse__free(&g->alloc, s.pool);
  fuse__free(&g->alloc, s.cands);
  return status;
}
/* ==== end src/fuse_ops.c ==== */
/* ==== begin src/epilogue.c ==== */
/* ------------------------------------------------------------ epilogue analysis -- */

static int fuse__epi_why(fuse_epilogue *e, const fuse_graph *g, const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  o.buf = e->why;
  o.len = 0;
  o.cap = sizeof e->why;
  o.write = NULL;
  o.user = NULL;
  va_start(ap, fmt);
  fuse__vformat(&o, g, fmt, ap);
  va_end(ap);
  return 0;
}

static int fuse__is_reduction(int op) { return op == FUSE__OP_CONV2D || op == FUSE__OP_MATMUL; }

/* A scalar constant: its value as a clamp bound. */
static int fuse__scalar_const(const fuse_graph *g, fuse_value v, float *out) {
  const fuse__node *n = &g->nodes[v];
  if (n->op != FUSE__OP_CONST || fuse__numel(n->rank, n->shape) != 1) return 0;
  *out = n->data[0];
  return 1;
}

/* Which values an analysis may use: a composite's members, a match's, or (neither) any. */
typedef struct fuse__scope {
  int comp;
  const fuse_value *members;
  int count;
} fuse__scope;

static int fuse__in_scope(const fuse_graph *g, const fuse__scope *s, fuse_value v) {
  int i;
  if (s->members) {
    for (i = 0; i < s->count; i++)
      if (s->members[i] == v) return 1;
    return 0;
  }
  return s->comp < 0 || g->nodes[v].composite == s->comp;
}

/* Does v lead back, through element-wise epilogue ops in scope, to a conv2d / matmul? */
static int fuse__leads_to_reduction(const fuse_graph *g, fuse_value v, const fuse__scope *comp,
                                    int depth) {
  const fuse__node *n = &g->nodes[v];
  int k;
  if (depth > 64) return 0;
  for (;;) { /* through unary clamps without recursion */
    if (!fuse__in_scope(g, comp, v)) return 0;
    if (n->op != FUSE__OP_RELU && n->op != FUSE__OP_CLIP) break;
    v = n->in[0];
    n = &g->nodes[v];
  }
  if (fuse__is_reduction(n->op)) return 1;
  switch (n->op) {
  case FUSE__OP_ADD:
  case FUSE__OP_MAXIMUM:
  case FUSE__OP_MINIMUM:
    for (k = 0; k < 2; k++)
      if (fuse__leads_to_reduction(g, n->in[k], comp, depth + 1)) return 1;
    return 0;
  default: return 0;
  }
}

/* Is b (shape) a per-output-channel bias for reduction output y: all ones but the channel
   dimension (conv2d: dimension 1; matmul: the last), right-aligned as numpy broadcasts? */
static int fuse__bias_shape(const fuse_graph *g, const fuse__node *red, int rank,
                            const int64_t *b) {
  int ch = red->op == FUSE__OP_CONV2D ? 1 : red->rank - 1, d;
  int64_t K;
  /* a matmul's channels are its last axis only when its second operand has columns */
  if (red->op == FUSE__OP_MATMUL && (g->nodes[red->in[1]].rank < 2 || red->rank < 1)) return 0;
  K = red->shape[ch];
  if (rank > red->rank || rank < red->rank - ch) return 0;
  for (d = 0; d < rank; d++) {
    int yd = d + red->rank - rank;
    if (b[d] != (yd == ch ? K : 1)) return 0;
  }
  return 1;
}

/* The epilogue clamp pair composition: clamp(clamp(x, lo1, hi1), lo2, hi2) is the clamp
   whose bounds are the second clamp applied to the first's bounds. */
static float fuse__clampf(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }

/* maximum / minimum with a scalar constant: the clamp *op; *next continues the chain.
   0: not a clamp (out->why says why). */
static int fuse__analyze_bound(const fuse_graph *g, fuse_value cur, fuse_epilogue *out,
                               fuse_post_op *op, fuse_value *next) {
  const fuse__node *n = &g->nodes[cur];
  float c;
  int k = fuse__scalar_const(g, n->in[1], &c) ? 1 : fuse__scalar_const(g, n->in[0], &c) ? 0 : -1;
  if (k < 0) {
    const fuse__node *a = &g->nodes[n->in[0]], *b = &g->nodes[n->in[1]];
    if (fuse__numel(a->rank, a->shape) == 1 || fuse__numel(b->rank, b->shape) == 1)
      return fuse__epi_why(out, g, "%s %V: its bound is not a constant", fuse__op_names[n->op],
                           cur);
    return fuse__epi_why(out, g, "%s %V of two tensors %S and %S is not a clamp",
                         fuse__op_names[n->op], cur, a->rank, a->shape, b->rank, b->shape);
  }
  if (c != c) return fuse__epi_why(out, g, "%s %V: its bound is NaN", fuse__op_names[n->op], cur);
  op->kind = FUSE_POST_CLAMP;
  op->lo = n->op == FUSE__OP_MAXIMUM ? c : -HUGE_VALF;
  op->hi = n->op == FUSE__OP_MAXIMUM ? HUGE_VALF : c;
  *next = n->in[1 - k];
  return 1;
}

/* The per-channel bias that `other`, added to the output of reduction `red`, is (itself, or
   the source of a reshape in scope); FUSE_NONE when it is not one. */
static fuse_value fuse__add_bias(const fuse_graph *g, const fuse__scope *comp, fuse_value red,
                                 fuse_value other) {
  const fuse__node *rd = &g->nodes[red], *o = &g->nodes[other];
  if (o->op == FUSE__OP_RESHAPE && fuse__in_scope(g, comp, other)) {
    const fuse__node *src = &g->nodes[o->in[0]];
    if (fuse__bias_shape(g, rd, o->rank, o->shape) &&
        fuse__numel(src->rank, src->shape) ==
            rd->shape[rd->op == FUSE__OP_CONV2D ? 1 : rd->rank - 1])
      return o->in[0];
    return FUSE_NONE;
  }
  return fuse__bias_shape(g, rd, o->rank, o->shape) ? other : FUSE_NONE;
}

/* add: *next is the operand that leads to the reduction; the other is the bias (out->bias,
   when next is the reduction itself: 2) or a residual of the add's shape (*op: 1).
   0: neither (out->why says why). */
static int fuse__analyze_add(const fuse_graph *g, const fuse__scope *comp, fuse_value cur,
                             fuse_epilogue *out, fuse_post_op *op, fuse_value *next) {
  const fuse__node *n = &g->nodes[cur], *o, *rd;
  int l0 = fuse__leads_to_reduction(g, n->in[0], comp, 0);
  int l1 = fuse__leads_to_reduction(g, n->in[1], comp, 0);
  int k;
  fuse_value other;
  if (!l0 && !l1)
    return fuse__epi_why(out, g, "add %V: neither operand leads to a conv2d / matmul", cur);
  k = l0 ? 0 : 1; /* the chain operand; with both, the first (a residual from another conv) */
  if (l0 && l1 && !fuse__in_scope(g, comp, n->in[0])) k = 1;
  *next = n->in[k];
  other = n->in[1 - k];
  o = &g->nodes[other];
  rd = &g->nodes[*next];
  if (fuse__is_reduction(rd->op)) { /* next to the reduction: a bias? */
    fuse_value b = fuse__add_bias(g, comp, *next, other);
    if (b != FUSE_NONE) {
      out->bias = b;
      return 2;
    }
  }
  if (o->op > FUSE__OP_CONST && fuse__in_scope(g, comp, other) &&
      (comp->comp >= 0 || comp->members))
    return fuse__epi_why(out, g,
                         "add %V: its operand %V is computed inside the composite, so it is "
                         "neither a bias nor a residual",
                         cur, other);
  if (o->rank != n->rank || memcmp(o->shape, n->shape, (size_t)n->rank * sizeof(int64_t)) != 0 ||
      rd->rank != n->rank || memcmp(rd->shape, n->shape, (size_t)n->rank * sizeof(int64_t)) != 0) {
    if (o->rank >= 1 && o->shape[o->rank - 1] > 1 && o->rank < rd->rank &&
        fuse__numel(o->rank, o->shape) == o->shape[o->rank - 1])
      return fuse__epi_why(out, g,
                           "add %V: operand %S broadcasts along the last axis (width) of %S, "
                           "not along the channels, so it is not a bias",
                           cur, o->rank, o->shape, rd->rank, rd->shape);
    return fuse__epi_why(out, g,
                         "add %V: operand %S is neither a per-channel bias nor a residual of "
                         "shape %S; the add's result is %S",
                         cur, o->rank, o->shape, rd->rank, rd->shape, n->rank, n->shape);
  }
  op->kind = FUSE_POST_ADD;
  op->lo = op->hi = 0;
  op->tensor = other;
  return 1;
}

/* The post-ops collected from the root inward (rev), reversed into application order with
   adjacent clamps merged. 0: more than FUSE_MAX_POST_OPS remain (out->why says so). */
static int fuse__order_post_ops(const fuse_graph *g, const fuse_post_op *rev, int n_rev,
                                fuse_value reduction, fuse_epilogue *out) {
  int i;
  for (i = n_rev - 1; i >= 0; i--) {
    fuse_post_op *last = out->num_post ? &out->post[out->num_post - 1] : NULL;
    if (rev[i].kind == FUSE_POST_CLAMP && last && last->kind == FUSE_POST_CLAMP) {
      float lo = fuse__clampf(last->lo, rev[i].lo, rev[i].hi);
      float hi = fuse__clampf(last->hi, rev[i].lo, rev[i].hi);
      last->lo = lo;
      last->hi = hi;
      continue;
    }
    if (out->num_post == FUSE_MAX_POST_OPS)
      return fuse__epi_why(out, g, "more than %d post-ops after %V", FUSE_MAX_POST_OPS, reduction);
    out->post[out->num_post] = rev[i];
    if (rev[i].kind == FUSE_POST_CLAMP) out->post[out->num_post].tensor = FUSE_NONE;
    out->post[out->num_post].operand = -1; /* set by fuse_compile */
    out->num_post++;
  }
  return 1;
}

/* Walks from root inward through the epilogue ops to the conv2d / matmul. */
static fuse_result fuse__analyze(const fuse_graph *g, fuse_value root, const fuse__scope *comp,
                                 fuse_epilogue *out) {
  fuse_post_op rev[64]; /* collected from the root inward */
  int n_rev = 0, i;
  fuse_value cur = root, chain[64];
  int n_chain = 0;
  const fuse__node *red;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  out->reduction = out->bias = FUSE_NONE;
  for (;;) {
    const fuse__node *n = &g->nodes[cur];
    fuse_value next = FUSE_NONE;
    int found = 1; /* 1: rev[n_rev] is the op's post-op; 2: it was the bias; 0: neither */
    if (!fuse__in_scope(g, comp, cur))
      return fuse__epi_why(out, g, "%V (%s) is outside the composite; no conv2d / matmul found",
                           cur, fuse__op_names[n->op]),
             FUSE_ERROR_UNSUPPORTED;
    if (fuse__is_reduction(n->op)) break;
    if (n_rev == 64 || n_chain == 64)
      return fuse__epi_why(out, g, "the chain from %V is too long", root), FUSE_ERROR_UNSUPPORTED;
    chain[n_chain++] = cur;
    switch (n->op) {
    case FUSE__OP_RELU:
    case FUSE__OP_CLIP:
      rev[n_rev].kind = FUSE_POST_CLAMP;
      rev[n_rev].lo = n->op == FUSE__OP_RELU ? 0 : n->a.clip.lo;
      rev[n_rev].hi = n->op == FUSE__OP_RELU ? HUGE_VALF : n->a.clip.hi;
      next = n->in[0];
      break;
    case FUSE__OP_MAXIMUM:
    case FUSE__OP_MINIMUM: found = fuse__analyze_bound(g, cur, out, &rev[n_rev], &next); break;
    case FUSE__OP_ADD: found = fuse__analyze_add(g, comp, cur, out, &rev[n_rev], &next); break;
    default:
      return fuse__epi_why(out, g, "%s %V is not an epilogue op (bias add, residual add, relu, clip, "
                           "maximum / minimum with a constant)",
                           fuse__op_names[n->op], cur),
             FUSE_ERROR_UNSUPPORTED;
    }
    if (!found) return FUSE_ERROR_UNSUPPORTED;
    cur = next;
    if (found == 2) break;
    n_rev++;
  }
  red = &g->nodes[cur];
  if (!fuse__is_reduction(red->op))
    return fuse__epi_why(out, g, "no conv2d / matmul before %V", root), FUSE_ERROR_UNSUPPORTED;
  if (!fuse__in_scope(g, comp, cur))
    return fuse__epi_why(out, g, "the conv2d / matmul %V is outside the composite", cur),
           FUSE_ERROR_UNSUPPORTED;
  for (i = 0; i < n_chain; i++) { /* the epilogue keeps the reduction's shape */
    const fuse__node *c = &g->nodes[chain[i]];
    if (c->rank != red->rank || memcmp(c->shape, red->shape, (size_t)red->rank * sizeof(int64_t)))
      return fuse__epi_why(out, g, "%s %V broadcasts %S to %S", fuse__op_names[c->op], chain[i],
                           red->rank, red->shape, c->rank, c->shape),
             FUSE_ERROR_UNSUPPORTED;
  }
  out->reduction = cur;
  return fuse__order_post_ops(g, rev, n_rev, cur, out) ? FUSE_OK : FUSE_ERROR_UNSUPPORTED;
}

FUSE_API fuse_result fuse_analyze_epilogue(const fuse_graph *g, fuse_value root,
                                           fuse_epilogue *out) {
  fuse__scope scope;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  out->reduction = out->bias = FUSE_NONE;
  if (!fuse__valid(g, root))
    return fuse__epi_why(out, g, "root %d is not a value of the graph", root),
           FUSE_ERROR_INVALID_ARGUMENT;
  scope.comp = g->nodes[root].composite;
  scope.members = NULL;
  scope.count = 0;
  return fuse__analyze(g, root, &scope, out);
}


/* One post-op as the text form's epilogue comment ("clamp [0, 6]", sep " ") and the plan
   listing ("clamp[0, 6]", sep "") write it: its kind, then its parameters. A residual add is
   "add" (the text form follows it with the residual's label). */
static void fuse__post_write(fuse__out *o, const fuse_post_op *op, const char *sep) {
  switch (op->kind) {
  case FUSE_POST_ADD:
    fuse__puts(o, "add");
    break;
  case FUSE_POST_CLAMP:
  default:
    fuse__puts(o, "clamp");
    fuse__puts(o, sep);
    fuse__puts(o, "[");
    fuse__put_float(o, op->lo);
    fuse__puts(o, ", ");
    fuse__put_float(o, op->hi);
    fuse__puts(o, "]");
    break;
  }
}
/* ==== end src/epilogue.c ==== */
/* ==== begin src/merge.c ==== */
/* ---------------------------------------------------------------- merge -- */

/* Merging works on groups of composites: union-find over composites, each group's composites
   in a linked list, and per node a visit stamp so no check clears an array. */
typedef struct fuse__merge {
  const fuse_graph *g;
  int *parent, *next, *tail, *lo, *hi; /* per composite; tail, lo, hi valid at a group's root */
  int *members_first, *members;   /* composite c's ops: members[members_first[c] ..] */
  int *stamp, *stack, cur;        /* per node */
} fuse__merge;

static int fuse__merge_find(fuse__merge *m, int c) {
  while (m->parent[c] != c) c = m->parent[c] = m->parent[m->parent[c]];
  return c;
}

static int fuse__merge_group(fuse__merge *m, fuse_value v) {
  int c = m->g->nodes[v].composite;
  return c < 0 ? -1 : fuse__merge_find(m, c);
}

/* Is there a path from group x into group y through ops outside both? Walks back from what y
   reads from outside. A path needs a member of y after a member of x (nodes only read earlier
   ones), so most checks end at once; in a chain the big producer group is never scanned. */
static int fuse__merge_path(fuse__merge *m, int x, int y) {
  const fuse_graph *g = m->g;
  int top = 0, c, j, k;
  if (m->hi[y] <= m->lo[x]) return 0;
  m->cur++;
  for (c = y; c >= 0; c = m->next[c])
    for (j = m->members_first[c]; j < m->members_first[c + 1]; j++) {
      const fuse__node *mn = &g->nodes[m->members[j]];
      for (k = 0; k < mn->num_in; k++) {
        int e = mn->in[k], ge = fuse__merge_group(m, e);
        if (ge == x) continue; /* a direct edge: what merging is for */
        if (ge != y && e > m->lo[x] && m->stamp[e] != m->cur) {
          m->stamp[e] = m->cur;
          m->stack[top++] = e;
        }
      }
    }
  while (top) {
    const fuse__node *n = &g->nodes[m->stack[--top]];
    for (k = 0; k < n->num_in; k++) {
      int e = n->in[k], ge;
      if (e < m->lo[x] || m->stamp[e] == m->cur) continue; /* no member of x lies before lo */
      ge = fuse__merge_group(m, e);
      if (ge == x) return 1;
      if (ge == y) continue;
      m->stamp[e] = m->cur;
      m->stack[top++] = e;
    }
  }
  return 0;
}

/* Would joining groups ra and rb make a cycle: a path that leaves one, passes outside both
   and enters the other? */
static int fuse__merge_cycles(fuse__merge *m, int ra, int rb) {
  return fuse__merge_path(m, ra, rb) || fuse__merge_path(m, rb, ra);
}

/* Each composite a group of its own, its members listed in graph order; order[] the
   composites in graph order of their roots. */
static void fuse__merge_start(fuse__merge *m, int *order) {
  const fuse_graph *g = m->g;
  int nc = g->num_composites, n = g->num_nodes, c, j, k;
  memset(m->stamp, 0, (size_t)n * sizeof(int));
  memset(m->members_first, 0, (size_t)(nc + 2) * sizeof(int));
  for (k = 0; k < n; k++)
    if (g->nodes[k].composite >= 0) m->members_first[g->nodes[k].composite + 2]++;
  for (c = 0; c < nc; c++) m->members_first[c + 2] += m->members_first[c + 1];
  for (k = 0; k < n; k++)
    if (g->nodes[k].composite >= 0) m->members[m->members_first[g->nodes[k].composite + 1]++] = k;
  for (c = 0; c < nc; c++) {
    m->parent[c] = m->tail[c] = order[c] = c;
    m->next[c] = -1;
    m->lo[c] = m->members[m->members_first[c]]; /* members are in graph order */
    m->hi[c] = m->members[m->members_first[c + 1] - 1];
  }
  for (c = 1; c < nc; c++) { /* visit composites in graph order of their roots */
    int t = order[c];
    for (j = c; j > 0 && g->composites[order[j - 1]].root > g->composites[t].root; j--)
      order[j] = order[j - 1];
    order[j] = t;
  }
}

/* Joins composite cc's group with the group of each producer composite of the same codegen,
   unless a cycle follows. */
static void fuse__merge_producers(fuse__merge *m, int cc) {
  const fuse_graph *g = m->g;
  int q, k;
  for (q = m->members_first[cc]; q < m->members_first[cc + 1]; q++) {
    const fuse__node *mn = &g->nodes[m->members[q]];
    for (k = 0; k < mn->num_in; k++) {
      int pc = g->nodes[mn->in[k]].composite, ra, rb;
      if (pc < 0 || !g->composites[pc].codegen ||
          strcmp(g->composites[pc].codegen, g->composites[cc].codegen) != 0)
        continue;
      ra = fuse__merge_find(m, pc);
      rb = fuse__merge_find(m, cc);
      if (ra == rb || fuse__merge_cycles(m, ra, rb)) continue;
      m->parent[rb] = ra; /* rb's list follows ra's */
      m->next[m->tail[ra]] = rb;
      m->tail[ra] = m->tail[rb];
      if (m->lo[rb] < m->lo[ra]) m->lo[ra] = m->lo[rb];
      if (m->hi[rb] > m->hi[ra]) m->hi[ra] = m->hi[rb];
    }
  }
}

FUSE_API fuse_result fuse_merge_composites(fuse_graph *g) {
  fuse__merge m;
  int nc, n, c, j, *order = NULL, *region_of = NULL, next_region = 0;
  fuse_result status = FUSE_ERROR_OUT_OF_MEMORY;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  nc = g->num_composites;
  n = g->num_nodes;
  memset(&m, 0, sizeof m);
  m.g = g;
  m.parent = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.next = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.tail = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.lo = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.hi = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  m.members_first = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 2) * sizeof(int), 16);
  m.members = (int *)fuse__alloc(&g->alloc, (size_t)(n + 1) * sizeof(int), 16);
  m.stamp = (int *)fuse__alloc(&g->alloc, (size_t)(n + 1) * sizeof(int), 16);
  m.stack = (int *)fuse__alloc(&g->alloc, (size_t)(n + 1) * sizeof(int), 16);
  order = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  region_of = (int *)fuse__alloc(&g->alloc, (size_t)(nc + 1) * sizeof(int), 16);
  if (!m.parent || !m.next || !m.tail || !m.lo || !m.hi || !m.members_first || !m.members || !m.stamp ||
      !m.stack || !order || !region_of)
    goto done;
  fuse__merge_start(&m, order);
  for (j = 0; j < nc; j++)
    if (g->composites[order[j]].codegen) fuse__merge_producers(&m, order[j]);
  /* number the groups 0, 1, ... in graph order; composites without codegen stay -1 */
  for (c = 0; c < nc; c++) region_of[c] = -1;
  for (j = 0; j < nc; j++) {
    int cc = order[j], root = fuse__merge_find(&m, cc);
    if (!g->composites[cc].codegen) {
      g->composites[cc].region = -1;
      continue;
    }
    if (region_of[root] < 0) region_of[root] = next_region++;
    g->composites[cc].region = region_of[root];
  }
  status = FUSE_OK;
done:
  if (status != FUSE_OK) fuse__pass_error(g, status, "fuse_merge_composites: out of memory");
  fuse__free(&g->alloc, m.parent);
  fuse__free(&g->alloc, m.next);
  fuse__free(&g->alloc, m.tail);
  fuse__free(&g->alloc, m.lo);
  fuse__free(&g->alloc, m.hi);
  fuse__free(&g->alloc, m.members_first);
  fuse__free(&g->alloc, m.members);
  fuse__free(&g->alloc, m.stamp);
  fuse__free(&g->alloc, m.stack);
  fuse__free(&g->alloc, order);
  fuse__free(&g->alloc, region_of);
  return status;
}
/* ==== end src/merge.c ==== */
/* ==== begin src/rules.c ==== */
/* ------------------------------------------------------- fold batch-norm, rules -- */

/* Names a constant a pass made after its source ("w" -> "w.folded", or "w.folded.2" when that
   is taken), so a listing of the optimized graph can be parsed and filled by name again. */
static void fuse__derived_name(fuse_graph *g, fuse_value v, const char *base, const char *suffix) {
  char name[300];
  size_t n;
  int k;
  if (!base || g->nodes[v].name || (n = strlen(base)) + strlen(suffix) + 12 > sizeof name) return;
  memcpy(name, base, n);
  strcpy(name + n, suffix);
  for (k = 2; fuse__find(g, name) != FUSE_NONE && k < 1000; k++) {
    fuse__out o;
    o.buf = name + n + strlen(suffix);
    o.len = 0;
    o.cap = 12;
    o.write = NULL;
    o.user = NULL;
    fuse__puts(&o, ".");
    fuse__put_int(&o, k);
  }
  if (fuse__find(g, name) == FUSE_NONE) fuse_value_set_name(g, v, name);
}

/* conv2d(x, W) -> batch_norm(scale, bias, mean, var), all constants, the conv used only by
   the batch-norm: W *= s, and the batch-norm node becomes add(conv, b) with s = scale /
   sqrt(var + eps), b = bias - mean * s, shaped [1, K, 1, 1]. Value ids stay valid. */
FUSE_API fuse_result fuse_fold_batch_norm(fuse_graph *g) {
  fuse__users users;
  int v, k;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  if (!fuse__users_build(g, &users)) return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "fold_batch_norm: out of memory");
  for (v = 0; v < g->num_nodes; v++) {
    fuse__node *bn = &g->nodes[v], *conv;
    const fuse__node *w;
    int64_t K, per, i, j, bshape[4];
    fuse_value nw, nb, conv_id;
    float *scale;
    if (bn->op != FUSE__OP_BATCH_NORM || bn->composite >= 0) continue;
    conv_id = bn->in[0];
    conv = &g->nodes[conv_id];
    if (conv->op != FUSE__OP_CONV2D || conv->composite >= 0 || fuse__is_output(g, conv_id) ||
        users.first[conv_id + 1] - users.first[conv_id] != 1)
      continue;
    if (g->nodes[conv->in[1]].op != FUSE__OP_CONST) continue;
    for (k = 1; k < 5 && g->nodes[bn->in[k]].op == FUSE__OP_CONST; k++) {
    }
    if (k < 5) continue;
    int64_t wshape[4];
    fuse_value w_id = conv->in[1];
    w = &g->nodes[w_id];
    memcpy(wshape, w->shape, sizeof wshape); /* the node array grows below */
    K = wshape[0];
    per = fuse__numel(3, wshape + 1);
    nw = fuse_constant(g, NULL, 4, wshape, w->data);
    bshape[0] = 1;
    bshape[1] = K;
    bshape[2] = bshape[3] = 1;
    nb = fuse_constant(g, NULL, 4, bshape, NULL);
    if (nw == FUSE_NONE || nb == FUSE_NONE) {
      fuse__users_free(g, &users);
      return g->status; /* out of memory, recorded by the builder */
    }
    bn = &g->nodes[v]; /* the node array may have moved */
    conv = &g->nodes[conv_id];
    scale = g->nodes[nb].data;
    for (i = 0; i < K; i++) {
      const fuse__node *sc = &g->nodes[bn->in[1]], *bi = &g->nodes[bn->in[2]];
      const fuse__node *mu = &g->nodes[bn->in[3]], *va = &g->nodes[bn->in[4]];
      double s = sc->data[i] / sqrt((double)va->data[i] + (double)bn->a.eps);
      float *wk = g->nodes[nw].data + i * per;
      for (j = 0; j < per; j++) wk[j] = (float)(wk[j] * s);
      scale[i] = (float)(bi->data[i] - mu->data[i] * s);
    }
    conv->in[1] = nw;
    fuse__derived_name(g, nw, g->nodes[w_id].name, ".folded");
    fuse__derived_name(g, nb, g->nodes[bn->in[2]].name, ".folded");
    bn->op = FUSE__OP_ADD;
    bn->num_in = 2;
    bn->in[1] = nb;
    memset(&bn->a, 0, sizeof bn->a);
  }
  fuse__users_free(g, &users);
  return FUSE_OK;
}

/* Default rules: conv2d / matmul, then an optional bias (any form), an optional residual add,
   and up to two clamp-like ops, each in either operand order. The check runs the epilogue
   analyzer, so a rule's name tells what the composite holds. */
#define FUSE__CLAMP(x) "(relu|clip)?(maximum?(minimum?(" x ", const), const))"
#define FUSE__BIAS(x) "add(" x ", reshape?(*, *))"

typedef struct fuse__rule_kind {
  int bias, residual, clamp;
} fuse__rule_kind;

static int fuse__default_check(const fuse_graph *g, const fuse_match *m, void *user) {
  const fuse__rule_kind *want = (const fuse__rule_kind *)user;
  fuse_epilogue e;
  fuse__scope scope;
  int i, residual = 0, clamp = 0;
  scope.comp = -1; /* the match is not a composite yet: analyze within its members */
  scope.members = m->members;
  scope.count = m->num_members;
  memset(&e, 0, sizeof e);
  e.reduction = e.bias = FUSE_NONE;
  if (fuse__analyze(g, m->root, &scope, &e) != FUSE_OK) return 0;
  for (i = 0; i < e.num_post; i++) {
    if (e.post[i].kind == FUSE_POST_ADD) residual = 1;
    else clamp = 1;
  }
  if ((e.bias != FUSE_NONE) != want->bias || residual != want->residual || clamp != want->clamp)
    return 0;
  return 1;
}

static const fuse__rule_kind fuse__kinds[8] = {{1, 1, 1}, {1, 1, 0}, {0, 1, 1}, {0, 1, 0},
                                                {1, 0, 1}, {1, 0, 0}, {0, 0, 1}, {0, 0, 0}};

#define FUSE__RULES(cg, op, x)                                                                   \
  {cg "." op "_bias_add_relu", FUSE__CLAMP(FUSE__CLAMP("add(" FUSE__BIAS(x) ", *)")),           \
   fuse__default_check, (void *)&fuse__kinds[0]},                                               \
  {cg "." op "_bias_add", "add(" FUSE__BIAS(x) ", *)", fuse__default_check,                      \
   (void *)&fuse__kinds[1]},                                                                     \
  {cg "." op "_add_relu", FUSE__CLAMP(FUSE__CLAMP("add(" x ", *)")), fuse__default_check,        \
   (void *)&fuse__kinds[2]},                                                                     \
  {cg "." op "_add", "add(" x ", *)", fuse__default_check, (void *)&fuse__kinds[3]},             \
  {cg "." op "_bias_relu", FUSE__CLAMP(FUSE__CLAMP(FUSE__BIAS(x))), fuse__default_check,         \
   (void *)&fuse__kinds[4]},                                                                     \
  {cg "." op "_bias", FUSE__BIAS(x), fuse__default_check, (void *)&fuse__kinds[5]},              \
  {cg "." op "_relu", FUSE__CLAMP(FUSE__CLAMP(x)), fuse__default_check, (void *)&fuse__kinds[6]}, \
  {cg "." op, x, fuse__default_check, (void *)&fuse__kinds[7]}

static const fuse_rule fuse__rules_fuse[16] = {FUSE__RULES("fuse", "conv2d", "conv2d(*, *)"),
                                                FUSE__RULES("fuse", "matmul", "matmul(*, *)")};
static const fuse_rule fuse__rules_dnnl[16] = {FUSE__RULES("dnnl", "conv2d", "conv2d(*, *)"),
                                                FUSE__RULES("dnnl", "matmul", "matmul(*, *)")};

FUSE_API int fuse_rules_default(const char *codegen, const fuse_rule **out) {
  const fuse_rule *r = NULL;
  if (!codegen || strcmp(codegen, "fuse") == 0) r = fuse__rules_fuse;
  else if (strcmp(codegen, "dnnl") == 0) r = fuse__rules_dnnl;
  if (out) *out = r;
  return r ? 16 : 0;
}

/* reshape of a constant becomes a constant (in place: the value id stays) */
static fuse_result fuse__fold_constant_reshapes(fuse_graph *g) {
  int v;
  for (v = 0; v < g->num_nodes; v++) {
    fuse__node *n = &g->nodes[v];
    const fuse__node *src;
    size_t bytes;
    float *data;
    if ((n->op != FUSE__OP_RESHAPE && n->op != FUSE__OP_FLATTEN) || n->composite >= 0) continue;
    src = &g->nodes[n->in[0]];
    if (src->op != FUSE__OP_CONST) continue;
    bytes = (size_t)fuse__numel(n->rank, n->shape) * sizeof(float);
    data = (float *)fuse__alloc(&g->alloc, bytes, FUSE__ALIGN);
    if (!data) return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "optimize: out of memory");
    memcpy(data, src->data, bytes);
    fuse__derived_name(g, v, src->name, ".reshaped");
    n = &g->nodes[v];
    fuse__free(&g->alloc, n->in);
    n->in = NULL;
    n->num_in = 0;
    n->op = FUSE__OP_CONST;
    n->data = data;
    memset(&n->a, 0, sizeof n->a);
  }
  return FUSE_OK;
}

FUSE_API fuse_result fuse_optimize(fuse_graph *g, const char *codegen) {
  const fuse_rule *rules;
  int n_rules;
  fuse_result r;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  n_rules = fuse_rules_default(codegen, &rules);
  if (!n_rules)
    return fuse__pass_error(g, FUSE_ERROR_UNSUPPORTED,
                            "optimize: no built-in rules for codegen '%s' (use \"fuse\" or \"dnnl\")",
                            codegen);
  /* reshapes of constants first: a weight that is reshape(const) becomes foldable */
  if ((r = fuse__fold_constant_reshapes(g)) != FUSE_OK) return r;
  if ((r = fuse_fold_batch_norm(g)) != FUSE_OK) return r;
  if ((r = fuse_ops_by_pattern(g, rules, n_rules, NULL)) != FUSE_OK) return r;
  return fuse_merge_composites(g);
}

/* ==== end src/rules.c ==== */
/* ==== begin src/text_print.c ==== */
/* ---------------------------------------------------------------- text form -- */


/* Unnamed rank-0 constants (fuse_scalar) print inline as numbers where they are used. */
static int fuse__is_inline_scalar(const fuse__node *n) {
  return n->op == FUSE__OP_CONST && n->rank == 0 && !n->name;
}

static void fuse__put_quoted(fuse__out *o, const char *str) {
  const char *s;
  fuse__puts(o, "\"");
  for (s = str; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char esc[2];
      esc[0] = '\\';
      esc[1] = (char)c;
      fuse__put(o, esc, 2);
    } else if (c < 0x20 || c == 0x7f) {
      char esc[4];
      esc[0] = '\\';
      esc[1] = 'x';
      esc[2] = "0123456789abcdef"[c >> 4];
      esc[3] = "0123456789abcdef"[c & 15];
      fuse__put(o, esc, 4);
    } else {
      fuse__put(o, s, 1);
    }
  }
  fuse__puts(o, "\"");
}

static void fuse__put_label(fuse__out *o, const fuse_graph *g, fuse_value v, const int *number) {
  const fuse__node *n = &g->nodes[v];
  const char *s;
  if (fuse__is_inline_scalar(n)) {
    fuse__put_float(o, n->data[0]);
    return;
  }
  fuse__puts(o, "%");
  if (!n->name) {
    fuse__put_int(o, number[v]);
    return;
  }
  for (s = n->name; *s && fuse__is_ident_char((unsigned char)*s); s++) {
  }
  if (!*s && fuse__is_ident_start((unsigned char)n->name[0])) {
    fuse__puts(o, n->name);
    return;
  }
  fuse__put_quoted(o, n->name);
}


static void fuse__put_int_list(fuse__out *o, const char *name, const int *v, int n) {
  int64_t d[FUSE_MAX_RANK];
  int i;
  for (i = 0; i < n; i++) d[i] = v[i];
  fuse__puts(o, ", ");
  fuse__puts(o, name);
  fuse__puts(o, "=");
  fuse__put_dims(o, n, d, ", ");
}

static void fuse__put_int_attr(fuse__out *o, const char *name, int64_t v) {
  fuse__puts(o, ", ");
  fuse__puts(o, name);
  fuse__puts(o, "=");
  fuse__put_int(o, v);
}

static void fuse__put_float_attr(fuse__out *o, const char *name, float v) {
  fuse__puts(o, ", ");
  fuse__puts(o, name);
  fuse__puts(o, "=");
  fuse__put_float(o, v);
}

static void fuse__put_attrs(fuse__out *o, const fuse__node *n) {
  const fuse__attrs *a = &n->a;
  switch (n->op) {
  case FUSE__OP_CONV2D:
    fuse__put_int_list(o, "strides", a->conv.strides, 2);
    fuse__put_int_list(o, "padding", a->conv.padding, 4);
    fuse__put_int_list(o, "dilation", a->conv.dilation, 2);
    fuse__put_int_attr(o, "groups", a->conv.groups);
    break;
  case FUSE__OP_CLIP:
    fuse__put_float_attr(o, "lo", a->clip.lo);
    fuse__put_float_attr(o, "hi", a->clip.hi);
    break;
  case FUSE__OP_RESHAPE:
    fuse__puts(o, ", shape=");
    fuse__put_dims(o, n->rank, n->shape, ", ");
    break;
  case FUSE__OP_FLATTEN:
  case FUSE__OP_CONCAT:
  case FUSE__OP_SOFTMAX: fuse__put_int_attr(o, "axis", a->axis); break;
  case FUSE__OP_BATCH_NORM: fuse__put_float_attr(o, "eps", a->eps); break;
  case FUSE__OP_TRANSPOSE: fuse__put_int_list(o, "perm", a->perm, n->rank); break;
  case FUSE__OP_MAX_POOL2D:
  case FUSE__OP_AVG_POOL2D:
    fuse__put_int_list(o, "kernel", a->pool.kernel, 2);
    fuse__put_int_list(o, "strides", a->pool.strides, 2);
    fuse__put_int_list(o, "padding", a->pool.padding, 4);
    if (n->op == FUSE__OP_MAX_POOL2D) fuse__put_int_list(o, "dilation", a->pool.dilation, 2);
    fuse__put_int_attr(o, "ceil_mode", a->pool.ceil_mode);
    if (n->op == FUSE__OP_AVG_POOL2D)
      fuse__put_int_attr(o, "count_include_pad", a->pool.count_include_pad);
    break;
  /* element-wise math (builders_math.c) */
  case FUSE__OP_HARDSIGMOID:
    fuse__put_float_attr(o, "alpha", a->unary.alpha);
    fuse__put_float_attr(o, "beta", a->unary.beta);
    break;
  case FUSE__OP_LEAKY_RELU:
  case FUSE__OP_ELU: fuse__put_float_attr(o, "alpha", a->unary.alpha); break;
  case FUSE__OP_SELU:
    fuse__put_float_attr(o, "alpha", a->unary.alpha);
    fuse__put_float_attr(o, "gamma", a->unary.beta);
    break;
  case FUSE__OP_GELU: fuse__put_int_attr(o, "approximate", a->unary.mode); break;

  /* data movement (builders_shape.c) */
  case FUSE__OP_GATHER: fuse__put_int_attr(o, "axis", a->axis); break;
  case FUSE__OP_EXPAND:
    fuse__puts(o, ", shape=");
    fuse__put_dims(o, n->rank, n->shape, ", ");
    break;
  case FUSE__OP_TILE: /* its repeats live in a.slice.step */
    fuse__puts(o, ", repeats=");
    fuse__put_dims(o, n->rank, a->slice.step, ", ");
    break;
  case FUSE__OP_PAD:
    fuse__put_int_list(o, "begins", a->pad.pads, n->rank);
    fuse__put_int_list(o, "ends", a->pad.pads + n->rank, n->rank);
    fuse__put_float_attr(o, "value", a->pad.value);
    fuse__put_int_attr(o, "mode", a->pad.mode);
    break;
  case FUSE__OP_RESIZE: {
    int i;
    fuse__puts(o, ", sizes=");
    fuse__put_dims(o, n->rank, n->shape, ", ");
    if (a->resize.scales[0] > 0) /* else derived from the sizes */
      for (i = 0; i < n->rank; i++) {
        fuse__puts(o, i ? ", " : ", scales=[");
        fuse__put_float(o, a->resize.scales[i]);
      }
    if (a->resize.scales[0] > 0) fuse__puts(o, "]");
    fuse__put_int_attr(o, "mode", a->resize.r.mode);
    fuse__put_int_attr(o, "coordinates", a->resize.r.coordinates);
    fuse__put_int_attr(o, "nearest", a->resize.r.nearest);
    fuse__put_float_attr(o, "cubic_coeff_a", a->resize.r.cubic_coeff_a);
    fuse__put_int_attr(o, "exclude_outside", a->resize.r.exclude_outside);
    break;
  }

  /* reductions, normalizations (builders_nn.c) */
  case FUSE__OP_REDUCE_MEAN:
  case FUSE__OP_REDUCE_SUM:
  case FUSE__OP_REDUCE_MAX:
  case FUSE__OP_REDUCE_MIN:
  case FUSE__OP_REDUCE_L2:
  case FUSE__OP_REDUCE_PROD:
  case FUSE__OP_REDUCE_SUM_SQUARE: {
    int axes[FUSE_MAX_RANK], k, count = 0;
    for (k = 0; k < FUSE_MAX_RANK; k++)
      if (a->reduce.axes >> k & 1u) axes[count++] = k;
    fuse__put_int_list(o, "axes", axes, count);
    fuse__put_int_attr(o, "keepdims", a->reduce.keepdims);
    break;
  }
  case FUSE__OP_LOG_SOFTMAX: fuse__put_int_attr(o, "axis", a->axis); break;
  case FUSE__OP_LAYER_NORM:
    fuse__put_int_attr(o, "axis", a->norm.axis);
    fuse__put_float_attr(o, "eps", a->norm.eps);
    break;
  case FUSE__OP_INSTANCE_NORM: fuse__put_float_attr(o, "eps", a->norm.eps); break;
  case FUSE__OP_GROUP_NORM:
    fuse__put_int_attr(o, "groups", a->norm.groups);
    fuse__put_float_attr(o, "eps", a->norm.eps);
    break;

  /* transposed convolution (builders_layers.c) */
  case FUSE__OP_SLICE: { /* every axis: the first element, how many, the step */
    int64_t sizes[FUSE_MAX_RANK];
    int d;
    for (d = 0; d < n->rank; d++) sizes[d] = n->shape[d];
    fuse__puts(o, ", starts=");
    fuse__put_dims(o, n->rank, a->slice.start, ", ");
    fuse__puts(o, ", sizes=");
    fuse__put_dims(o, n->rank, sizes, ", ");
    fuse__puts(o, ", steps=");
    fuse__put_dims(o, n->rank, a->slice.step, ", ");
    break;
  }
  case FUSE__OP_CONV_TRANSPOSE2D:
    fuse__put_int_list(o, "strides", a->convt.strides, 2);
    fuse__put_int_list(o, "padding", a->convt.padding, 4);
    fuse__put_int_list(o, "output_padding", a->convt.output_padding, 2);
    fuse__put_int_list(o, "dilation", a->convt.dilation, 2);
    fuse__put_int_attr(o, "groups", a->convt.groups);
    break;

  default: break;
  }
}

/* The print order: inputs in the header; then constants and ops in graph order, except that
   a composite prints as one block where its root is, and a value is printed before its first
   use (constants made by passes, values of a composite another op reads early). Items:
   v >= 0 a value, -2 - c the start of composite c's block, -1 a block's end. */
typedef struct fuse__writer {
  const fuse_graph *g;
  unsigned char *done;
  int *items, num_items;
} fuse__writer;

static void fuse__writer_value(fuse__writer *w, fuse_value v);

static void fuse__writer_block(fuse__writer *w, int c) {
  const fuse_graph *g = w->g;
  int i, k, lo = g->composites[c].first, hi = g->composites[c].root;
  for (i = lo; i <= hi; i++) { /* members first mark, so they do not recurse */
    if (g->nodes[i].composite == c) w->done[i] = 2;
  }
  for (i = lo; i <= hi; i++) /* what the block reads from outside comes first */
    if (g->nodes[i].composite == c)
      for (k = 0; k < g->nodes[i].num_in; k++) fuse__writer_value(w, g->nodes[i].in[k]);
  w->items[w->num_items++] = -2 - c;
  for (i = lo; i <= hi; i++)
    if (g->nodes[i].composite == c) {
      w->done[i] = 1;
      w->items[w->num_items++] = i;
    }
  w->items[w->num_items++] = -1;
}

static void fuse__writer_value(fuse__writer *w, fuse_value v) {
  const fuse__node *n = &w->g->nodes[v];
  int k;
  if (w->done[v] || n->op == FUSE__OP_INPUT || fuse__is_inline_scalar(n)) return;
  if (n->composite >= 0) {
    fuse__writer_block(w, n->composite);
    return;
  }
  w->done[v] = 1;
  for (k = 0; k < n->num_in; k++) fuse__writer_value(w, n->in[k]);
  w->items[w->num_items++] = v;
}

static void fuse__put_line(fuse__out *o, const fuse_graph *g, fuse_value v, const int *number,
                           const char *indent) {
  const fuse__node *n = &g->nodes[v];
  int k;
  fuse__puts(o, indent);
  fuse__put_label(o, g, v, number);
  fuse__puts(o, ": ");
  fuse__put_dims(o, n->rank, n->shape, ", ");
  fuse__puts(o, " = ");
  fuse__puts(o, fuse__op_names[n->op]);
  if (n->op == FUSE__OP_CONST) {
    int64_t count = fuse__numel(n->rank, n->shape);
    if (count <= FUSE__INLINE_CONST_MAX) {
      fuse__puts(o, "{");
      for (k = 0; k < count; k++) {
        if (k) fuse__puts(o, ", ");
        fuse__put_float(o, n->data[k]);
      }
      fuse__puts(o, "}");
    }
  } else {
    fuse__puts(o, "(");
    for (k = 0; k < n->num_in; k++) {
      if (k) fuse__puts(o, ", ");
      fuse__put_label(o, g, n->in[k], number);
    }
    fuse__put_attrs(o, n);
    fuse__puts(o, ")");
  }
  fuse__puts(o, "\n");
}

static void fuse__put_block_head(fuse__out *o, const fuse_graph *g, int c, const int *number) {
  const fuse__composite *cp = &g->composites[c];
  fuse_epilogue e;
  int k;
  fuse__puts(o, "  composite ");
  fuse__put_quoted(o, cp->name);
  fuse__puts(o, " ");
  fuse__put_quoted(o, cp->function);
  fuse__puts(o, " codegen=");
  if (cp->codegen) fuse__put_quoted(o, cp->codegen);
  else fuse__puts(o, "none");
  fuse__puts(o, " region=");
  fuse__put_int(o, cp->region);
  fuse__puts(o, " bind_constants=");
  fuse__put_int(o, cp->bind_constants);
  fuse__puts(o, " {\n");
  if (fuse_analyze_epilogue(g, cp->root, &e) != FUSE_OK) { /* fuse_analyze_epilogue says why */
    fuse__puts(o, "    # no fused epilogue: runs op by op\n");
    return;
  }
  fuse__puts(o, "    # epilogue of ");
  fuse__put_label(o, g, e.reduction, number);
  fuse__puts(o, ": bias ");
  if (e.bias == FUSE_NONE) fuse__puts(o, "none");
  else fuse__put_label(o, g, e.bias, number);
  for (k = 0; k < e.num_post; k++) {
    fuse__puts(o, k ? ", " : "; then ");
    fuse__post_write(o, &e.post[k], " ");
    if (e.post[k].kind == FUSE_POST_ADD) {
      fuse__puts(o, " ");
      fuse__put_label(o, g, e.post[k].tensor, number);
    }
  }
  fuse__puts(o, "\n");
}

/* Lays out the print order in w (its arrays from the graph's allocator; fuse__writer_free)
   and numbers the unnamed values in that order, so a parse numbers them the same way. */
static int fuse__writer_init(fuse__writer *w, const fuse_graph *g, int **number) {
  const fuse_allocator *a = &g->alloc;
  int i, next = 0;
  *number = (int *)fuse__alloc(a, (size_t)(g->num_nodes + 1) * sizeof(int), 16);
  w->g = g;
  w->done = (unsigned char *)fuse__alloc(a, (size_t)g->num_nodes + 1, 16);
  w->items = (int *)fuse__alloc(a, (size_t)(g->num_nodes + 2 * g->num_composites + 1) * sizeof(int), 16);
  w->num_items = 0;
  if (!*number || !w->done || !w->items) return 0;
  memset(w->done, 0, (size_t)g->num_nodes);
  for (i = 0; i < g->num_nodes; i++) fuse__writer_value(w, i);
  for (i = 0; i < g->num_inputs; i++)
    if (!g->nodes[g->inputs[i]].name) (*number)[g->inputs[i]] = next++;
  for (i = 0; i < w->num_items; i++)
    if (w->items[i] >= 0 && !g->nodes[w->items[i]].name) (*number)[w->items[i]] = next++;
  return 1;
}

static void fuse__writer_free(fuse__writer *w, int *number) {
  fuse__free(&w->g->alloc, number);
  fuse__free(&w->g->alloc, w->done);
  fuse__free(&w->g->alloc, w->items);
}

FUSE_API fuse_result fuse_graph_write(const fuse_graph *g, fuse_write_fn write, void *user) {
  char buf[1024];
  fuse__out o;
  fuse__writer w;
  int *number, i, in_block = 0;
  if (!g || !write) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!fuse__writer_init(&w, g, &number)) {
    fuse__writer_free(&w, number);
    return FUSE_ERROR_OUT_OF_MEMORY;
  }
  o.buf = buf;
  o.len = 0;
  o.cap = sizeof buf;
  o.write = write;
  o.user = user;
  fuse__puts(&o, "graph(");
  for (i = 0; i < g->num_inputs; i++) {
    const fuse__node *n = &g->nodes[g->inputs[i]];
    if (i) fuse__puts(&o, ", ");
    fuse__put_label(&o, g, g->inputs[i], number);
    fuse__puts(&o, ": ");
    fuse__put_dims(&o, n->rank, n->shape, ", ");
  }
  fuse__puts(&o, ") {\n");
  for (i = 0; i < w.num_items; i++) {
    int it = w.items[i];
    if (it >= 0) {
      fuse__put_line(&o, g, it, number, in_block ? "    " : "  ");
    } else if (it == -1) {
      fuse__puts(&o, "  }\n");
      in_block = 0;
    } else {
      fuse__put_block_head(&o, g, -2 - it, number);
      in_block = 1;
    }
  }
  fuse__puts(&o, "  return");
  for (i = 0; i < g->num_outputs; i++) {
    fuse__puts(&o, i ? ", " : " ");
    fuse__put_label(&o, g, g->outputs[i], number);
  }
  fuse__puts(&o, "\n}\n");
  fuse__flush(&o);
  fuse__writer_free(&w, number);
  return FUSE_OK;
}

#ifndef FUSE_NO_STDIO
static void fuse__write_file(void *user, const char *text, size_t len) {
  fwrite(text, 1, len, (FILE *)user);
}

FUSE_API fuse_result fuse_graph_print(const fuse_graph *g, FILE *f) {
  if (!f) return FUSE_ERROR_INVALID_ARGUMENT;
  return fuse_graph_write(g, fuse__write_file, f);
}
#endif

/* ==== end src/text_print.c ==== */
/* ==== begin src/text_parse.c ==== */
/* --------------------------------------------------------------- text parser -- */

#define FUSE__MAX_PARSE_ATTRS 8

typedef struct fuse__parse_attr {
  char name[24];
  double v[FUSE_MAX_RANK];
  int count, is_list, line, col;
} fuse__parse_attr;

typedef struct fuse__parser {
  const char *p, *line_start;
  int line;
  fuse_graph *g;
  char *name;             /* the last label's text (NUL-terminated) */
  size_t name_cap;
  int name_numbered;      /* the label was %N: parser-local, the value stays unnamed */
  int at_line, at_col;    /* where the statement or operand being read starts */
  int64_t *num_keys;      /* %N labels: open-addressing table N -> value */
  fuse_value *num_vals;
  int num_cap, num_count;
} fuse__parser;

static int fuse__text_col(const fuse__parser *ps) { return (int)(ps->p - ps->line_start) + 1; }

/* Records a parse error at the current position; returns 0. */
static int fuse__text_fail(fuse__parser *ps, const char *what) {
  char got[24];
  size_t i;
  for (i = 0; i < 12 && ps->p[i] && ps->p[i] != '\n'; i++) got[i] = ps->p[i];
  got[i] = 0;
  fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: expected %s, found %s%s%s", ps->line,
             fuse__text_col(ps), what, *ps->p ? "'" : "the end of the text", got,
             *ps->p ? (i == 12 ? "...'" : "'") : "");
  return 0;
}

static void fuse__text_skip(fuse__parser *ps) {
  for (;;) {
    char c = *ps->p;
    if (c == '\n') {
      ps->line++;
      ps->line_start = ++ps->p;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ps->p++;
    } else if (c == '#') {
      while (*ps->p && *ps->p != '\n') ps->p++;
    } else {
      return;
    }
  }
}

static int fuse__text_accept(fuse__parser *ps, char c) {
  fuse__text_skip(ps);
  if (*ps->p != c) return 0;
  ps->p++;
  return 1;
}

static int fuse__text_expect(fuse__parser *ps, char c, const char *what) {
  return fuse__text_accept(ps, c) ? 1 : fuse__text_fail(ps, what);
}

static int fuse__text_word(fuse__parser *ps, char *out, size_t cap) {
  fuse__text_skip(ps);
  return fuse__scan_ident(&ps->p, out, cap);
}

static int fuse__text_name_char(fuse__parser *ps, size_t at, char c) {
  if (at + 1 >= ps->name_cap) {
    size_t cap = ps->name_cap * 2;
    char *bigger = (char *)fuse__alloc(&ps->g->alloc, cap, 1);
    if (!bigger) return fuse__oom(ps->g, "parse");
    memcpy(bigger, ps->name, at);
    fuse__free(&ps->g->alloc, ps->name);
    ps->name = bigger;
    ps->name_cap = cap;
  }
  ps->name[at] = c;
  ps->name[at + 1] = 0;
  return 1;
}

static int fuse__hex(int c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Reads a "quoted" string (escapes \" \\ \xHH) into ps->name. */
static int fuse__text_quoted(fuse__parser *ps) {
  size_t n = 0;
  ps->name[0] = 0;
  for (ps->p++; *ps->p != '"'; ps->p++) {
    char c = *ps->p;
    if (!c || c == '\n') return fuse__text_fail(ps, "a closing '\"'");
    if (c == '\\') {
      c = *++ps->p;
      if (c == 'x' && fuse__hex(ps->p[1]) >= 0 && fuse__hex(ps->p[2]) >= 0) {
        c = (char)(fuse__hex(ps->p[1]) * 16 + fuse__hex(ps->p[2]));
        ps->p += 2;
      } else if (c != '"' && c != '\\') {
        return fuse__text_fail(ps, "an escape \\\", \\\\ or \\xHH");
      }
      if (c == 0) return fuse__text_fail(ps, "a name without a NUL byte");
    }
    if (!fuse__text_name_char(ps, n++, c)) return 0;
  }
  ps->p++;
  if (n == 0) return fuse__text_fail(ps, "a non-empty name");
  return 1;
}

/* Reads a label: %ident, %"quoted", or %N. */
static int fuse__text_label(fuse__parser *ps) {
  size_t n = 0;
  fuse__text_skip(ps);
  if (*ps->p != '%') return fuse__text_fail(ps, "a value like %x");
  ps->p++;
  ps->name[0] = 0;
  ps->name_numbered = 0;
  if (*ps->p >= '0' && *ps->p <= '9') {
    ps->name_numbered = 1;
    while (*ps->p >= '0' && *ps->p <= '9') {
      if (n > 15) return fuse__text_fail(ps, "a shorter value number");
      if (!fuse__text_name_char(ps, n++, *ps->p++)) return 0;
    }
    return 1;
  }
  if (*ps->p == '"') return fuse__text_quoted(ps);
  if (!fuse__is_ident_start((unsigned char)*ps->p)) return fuse__text_fail(ps, "a value name after '%'");
  while (fuse__is_ident_char((unsigned char)*ps->p))
    if (!fuse__text_name_char(ps, n++, *ps->p++)) return 0;
  return 1;
}

static int64_t fuse__text_label_number(const fuse__parser *ps) {
  int64_t v = 0;
  const char *s;
  for (s = ps->name; *s; s++) v = v * 10 + (*s - '0');
  return v;
}

/* Slot of %N in the parser's table (empty slots hold -1). */
static int fuse__text_num_slot(const fuse__parser *ps, int64_t key) {
  /* unsigned: %1555555555555 times the constant overflows int64 (UBSan, fuzz_text) */
  uint32_t i = (uint32_t)((uint64_t)key * 2654435761u) & (uint32_t)(ps->num_cap - 1);
  while (ps->num_keys[i] != -1 && ps->num_keys[i] != key) i = (i + 1) & (uint32_t)(ps->num_cap - 1);
  return (int)i;
}

static fuse_value fuse__text_lookup(fuse__parser *ps) {
  if (ps->name_numbered) {
    int slot;
    if (!ps->num_cap) return FUSE_NONE;
    slot = fuse__text_num_slot(ps, fuse__text_label_number(ps));
    return ps->num_keys[slot] == -1 ? FUSE_NONE : ps->num_vals[slot];
  }
  return fuse__find(ps->g, ps->name);
}

/* Binds the last label to v (a %N label in the parser's table; a name in the graph). */
static int fuse__text_bind(fuse__parser *ps, fuse_value v) {
  fuse_graph *g = ps->g;
  int slot, i;
  if (!ps->name_numbered) return fuse__set_name(g, v, ps->name, "parse");
  if ((ps->num_count + 1) * 2 > ps->num_cap) {
    int old_cap = ps->num_cap, cap = old_cap ? old_cap * 2 : 64;
    int64_t *keys = (int64_t *)fuse__alloc(&g->alloc, (size_t)cap * sizeof(int64_t), 16);
    fuse_value *vals = (fuse_value *)fuse__alloc(&g->alloc, (size_t)cap * sizeof(fuse_value), 16);
    int64_t *old_keys = ps->num_keys;
    fuse_value *old_vals = ps->num_vals;
    if (!keys || !vals) {
      fuse__free(&g->alloc, keys);
      fuse__free(&g->alloc, vals);
      return fuse__oom(g, "parse");
    }
    for (i = 0; i < cap; i++) keys[i] = -1;
    ps->num_keys = keys;
    ps->num_vals = vals;
    ps->num_cap = cap;
    for (i = 0; i < old_cap; i++) {
      if (old_keys[i] == -1) continue;
      slot = fuse__text_num_slot(ps, old_keys[i]);
      keys[slot] = old_keys[i];
      vals[slot] = old_vals[i];
    }
    fuse__free(&g->alloc, old_keys);
    fuse__free(&g->alloc, old_vals);
  }
  slot = fuse__text_num_slot(ps, fuse__text_label_number(ps));
  ps->num_keys[slot] = fuse__text_label_number(ps);
  ps->num_vals[slot] = v;
  ps->num_count++;
  return 1;
}

static int fuse__text_number(fuse__parser *ps, double *v) {
  size_t used;
  fuse__text_skip(ps);
  used = fuse__parse_number(ps->p, v);
  if (!used || fuse__is_ident_char((unsigned char)ps->p[used])) return fuse__text_fail(ps, "a number");
  ps->p += used;
  return 1;
}

static int fuse__text_float(fuse__parser *ps, float *out) {
  double v;
  if (!fuse__text_number(ps, &v)) return 0;
  if (v == v && fabs(v) >= 3.4028235677973366e38 && fabs(v) != HUGE_VAL) /* FLT_MAX + ulp/2 */
    return fuse__text_fail(ps, "a number within float range");
  *out = (float)v;
  return 1;
}

/* Reads [d0, d1, ...] as a shape (allow_minus_one: reshape targets). */
static int fuse__text_shape(fuse__parser *ps, int *rank, int64_t *dims) {
  *rank = 0;
  if (!fuse__text_expect(ps, '[', "'[' starting a shape")) return 0;
  if (fuse__text_accept(ps, ']')) return 1;
  do {
    double v;
    if (*rank == FUSE_MAX_RANK) return fuse__text_fail(ps, "at most 8 dimensions");
    if (!fuse__text_number(ps, &v)) return 0;
    if (v != floor(v) || v < -1 || v > (double)FUSE__MAX_DIM)
      return fuse__text_fail(ps, "a dimension (a whole number 1..2147483647)");
    dims[(*rank)++] = (int64_t)v;
  } while (fuse__text_accept(ps, ','));
  return fuse__text_expect(ps, ']', "',' or ']' in a shape");
}

static int fuse__text_attr(fuse__parser *ps, fuse__parse_attr *a) {
  a->count = 0;
  a->is_list = 0;
  a->line = ps->line;
  a->col = fuse__text_col(ps);
  if (!fuse__text_word(ps, a->name, sizeof a->name)) return fuse__text_fail(ps, "an attribute name");
  if (!fuse__text_expect(ps, '=', "'=' after the attribute name")) return 0;
  if (fuse__text_accept(ps, '[')) {
    a->is_list = 1;
    if (fuse__text_accept(ps, ']')) return 1;
    do {
      if (a->count == FUSE_MAX_RANK) return fuse__text_fail(ps, "at most 8 list entries");
      if (!fuse__text_number(ps, &a->v[a->count++])) return 0;
    } while (fuse__text_accept(ps, ','));
    return fuse__text_expect(ps, ']', "',' or ']' in a list");
  }
  a->count = 1;
  return fuse__text_number(ps, &a->v[0]);
}

/* Attribute forms: 'i' whole number, 'f' number, '2' / '4' list of that many whole numbers,
   'l' list of up to 8 whole numbers, 'F' list of up to 8 numbers. */
typedef struct fuse__attr_spec {
  const char *name;
  char form;
} fuse__attr_spec;

static const fuse__attr_spec *fuse__op_attr_specs(int op) {
  static const fuse__attr_spec none[] = {{NULL, 0}};
  static const fuse__attr_spec conv[] = {
      {"strides", '2'}, {"padding", '4'}, {"dilation", '2'}, {"groups", 'i'}, {NULL, 0}};
  static const fuse__attr_spec clip[] = {{"lo", 'f'}, {"hi", 'f'}, {NULL, 0}};
  static const fuse__attr_spec reshape[] = {{"shape", 'l'}, {NULL, 0}};
  static const fuse__attr_spec axis[] = {{"axis", 'i'}, {NULL, 0}};
  static const fuse__attr_spec bn[] = {{"eps", 'f'}, {NULL, 0}};
  static const fuse__attr_spec perm[] = {{"perm", 'l'}, {NULL, 0}};
  static const fuse__attr_spec maxp[] = {{"kernel", '2'},   {"strides", '2'},   {"padding", '4'},
                                         {"dilation", '2'}, {"ceil_mode", 'i'}, {NULL, 0}};
  static const fuse__attr_spec avgp[] = {{"kernel", '2'},    {"strides", '2'},
                                         {"padding", '4'},   {"ceil_mode", 'i'},
                                         {"count_include_pad", 'i'}, {NULL, 0}};
  static const fuse__attr_spec slice[] = {
      {"starts", 'l'}, {"ends", 'l'}, {"sizes", 'l'}, {"steps", 'l'}, {"axes", 'l'}, {NULL, 0}};
  static const fuse__attr_spec convt[] = {{"strides", '2'},        {"padding", '4'},
                                          {"output_padding", '2'}, {"dilation", '2'},
                                          {"groups", 'i'},         {NULL, 0}};
  switch (op) {
  case FUSE__OP_CONV2D: return conv;
  case FUSE__OP_CLIP: return clip;
  case FUSE__OP_RESHAPE: return reshape;
  case FUSE__OP_FLATTEN:
  case FUSE__OP_CONCAT:
  case FUSE__OP_SOFTMAX: return axis;
  case FUSE__OP_BATCH_NORM: return bn;
  case FUSE__OP_TRANSPOSE: return perm;
  case FUSE__OP_MAX_POOL2D: return maxp;
  case FUSE__OP_AVG_POOL2D: return avgp;
  /* element-wise math (builders_math.c) */
  case FUSE__OP_HARDSIGMOID: {
    static const fuse__attr_spec hardsigmoid[] = {{"alpha", 'f'}, {"beta", 'f'}, {NULL, 0}};
    return hardsigmoid;
  }
  case FUSE__OP_LEAKY_RELU:
  case FUSE__OP_ELU: {
    static const fuse__attr_spec alpha[] = {{"alpha", 'f'}, {NULL, 0}};
    return alpha;
  }
  case FUSE__OP_SELU: {
    static const fuse__attr_spec selu[] = {{"alpha", 'f'}, {"gamma", 'f'}, {NULL, 0}};
    return selu;
  }
  case FUSE__OP_GELU: { /* approximate=1: the tanh approximation */
    static const fuse__attr_spec gelu[] = {{"approximate", 'i'}, {NULL, 0}};
    return gelu;
  }

  /* data movement (builders_shape.c) */
  case FUSE__OP_GATHER: return axis;
  case FUSE__OP_EXPAND: return reshape;
  case FUSE__OP_TILE: {
    static const fuse__attr_spec tile[] = {{"repeats", 'l'}, {NULL, 0}};
    return tile;
  }
  case FUSE__OP_PAD: {
    static const fuse__attr_spec pad[] = {
        {"begins", 'l'}, {"ends", 'l'}, {"value", 'f'}, {"mode", 'i'}, {NULL, 0}};
    return pad;
  }
  case FUSE__OP_RESIZE: {
    static const fuse__attr_spec resize[] = {
        {"sizes", 'l'},        {"scales", 'F'},        {"mode", 'i'},
        {"coordinates", 'i'},  {"nearest", 'i'},       {"cubic_coeff_a", 'f'},
        {"exclude_outside", 'i'}, {NULL, 0}};
    return resize;
  }

  /* reductions, normalizations (builders_nn.c) */
  case FUSE__OP_REDUCE_MEAN:
  case FUSE__OP_REDUCE_SUM:
  case FUSE__OP_REDUCE_MAX:
  case FUSE__OP_REDUCE_MIN:
  case FUSE__OP_REDUCE_L2:
  case FUSE__OP_REDUCE_PROD:
  case FUSE__OP_REDUCE_SUM_SQUARE: {
    static const fuse__attr_spec reduce[] = {{"axes", 'l'}, {"keepdims", 'i'}, {NULL, 0}};
    return reduce;
  }
  case FUSE__OP_LOG_SOFTMAX: return axis;
  case FUSE__OP_LAYER_NORM: {
    static const fuse__attr_spec layer_norm[] = {{"axis", 'i'}, {"eps", 'f'}, {NULL, 0}};
    return layer_norm;
  }
  case FUSE__OP_INSTANCE_NORM: return bn;
  case FUSE__OP_GROUP_NORM: {
    static const fuse__attr_spec group_norm[] = {{"groups", 'i'}, {"eps", 'f'}, {NULL, 0}};
    return group_norm;
  }

  /* transposed convolution (builders_layers.c) */
  case FUSE__OP_SLICE: return slice;
  case FUSE__OP_CONV_TRANSPOSE2D: return convt;

  default: return none;
  }
}

/* Checks one parsed attribute against the op's specs; 0 with a parse error if it does not fit. */
static int fuse__text_check_attr(fuse__parser *ps, int op, const fuse__parse_attr *a) {
  const fuse__attr_spec *s = fuse__op_attr_specs(op);
  int i, whole = 1;
  for (; s->name; s++)
    if (strcmp(s->name, a->name) == 0) break;
  if (!s->name)
    return fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: %s has no attribute '%s'",
                      a->line, a->col, fuse__op_names[op], a->name),
           0;
  for (i = 0; i < a->count; i++)
    whole &= a->v[i] == floor(a->v[i]) && fabs(a->v[i]) <= 2147483647.0;
  if ((s->form == 'f' && (a->is_list || a->count != 1)) ||
      (s->form == 'i' && (a->is_list || !whole)) ||
      ((s->form == '2' || s->form == '4') && (!a->is_list || !whole || a->count != s->form - '0')) ||
      (s->form == 'l' && (!a->is_list || !whole)) || (s->form == 'F' && !a->is_list))
    return fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: %s attribute '%s' must be %s",
                      a->line, a->col, fuse__op_names[op], a->name,
                      s->form == 'f'   ? "a number"
                      : s->form == 'i' ? "a whole number"
                      : s->form == '2' ? "a list of 2 whole numbers"
                      : s->form == '4' ? "a list of 4 whole numbers"
                      : s->form == 'F' ? "a list of numbers"
                                       : "a list of whole numbers"),
           0;
  return 1;
}

static const fuse__parse_attr *fuse__text_find_attr(const fuse__parse_attr *attrs, int n,
                                                 const char *name) {
  int i;
  for (i = 0; i < n; i++)
    if (strcmp(attrs[i].name, name) == 0) return &attrs[i];
  return NULL;
}

static void fuse__text_ints(const fuse__parse_attr *attrs, int n, const char *name, int *out,
                         int count) {
  const fuse__parse_attr *a = fuse__text_find_attr(attrs, n, name);
  int i;
  if (a)
    for (i = 0; i < count; i++) out[i] = (int)a->v[i];
}

/* slice(%x, starts=[...], ends=[...] or sizes=[...], steps=[...], axes=[...]): steps and axes
   are optional; sizes (how many elements each listed axis keeps, the printed form) stand for
   ends = starts + sizes * steps, with starts >= 0. */
static fuse_value fuse__text_slice(fuse__parser *ps, fuse_value x, const fuse__parse_attr *at,
                                   int n_at) {
  static const char *const names[5] = {"starts", "ends", "sizes", "steps", "axes"};
  const fuse__parse_attr *l[5];
  int64_t starts[FUSE_MAX_RANK], ends[FUSE_MAX_RANK], steps[FUSE_MAX_RANK];
  int axes[FUSE_MAX_RANK], i, k, n;
  for (k = 0; k < 5; k++) l[k] = fuse__text_find_attr(at, n_at, names[k]);
  if (!l[0] || !l[1] == !l[2])
    return fuse__fail(ps->g, FUSE_ERROR_PARSE,
                      "line %d, column %d: slice needs starts=[...] and either ends=[...] or "
                      "sizes=[...]",
                      ps->at_line, ps->at_col);
  n = l[0]->count;
  for (k = 1; k < 5; k++)
    if (l[k] && l[k]->count != n)
      return fuse__fail(ps->g, FUSE_ERROR_PARSE,
                        "line %d, column %d: slice's %s has %d entries, starts has %d",
                        ps->at_line, ps->at_col, names[k], l[k]->count, n);
  for (i = 0; i < n; i++) {
    starts[i] = (int64_t)l[0]->v[i];
    steps[i] = l[3] ? (int64_t)l[3]->v[i] : 1;
    axes[i] = l[4] ? (int)l[4]->v[i] : i;
    if (l[1]) {
      ends[i] = (int64_t)l[1]->v[i];
    } else {
      if (starts[i] < 0 || l[2]->v[i] < 1)
        return fuse__fail(ps->g, FUSE_ERROR_PARSE,
                          "line %d, column %d: slice with sizes needs starts >= 0 and sizes >= 1",
                          ps->at_line, ps->at_col);
      ends[i] = starts[i] + (int64_t)l[2]->v[i] * steps[i];
      if (ends[i] < 0) ends[i] = INT64_MIN; /* down to the first element */
    }
  }
  return fuse_slice(ps->g, x, n, axes, starts, ends, steps);
}

/* Calls the builder of `op` with parsed operands and attributes. */
static fuse_value fuse__text_build(fuse__parser *ps, int op, const fuse_value *in, int n_in,
                                const fuse__parse_attr *at, int n_at) {
  fuse_graph *g = ps->g;
  const fuse__parse_attr *a;
  int arity = 1;
  switch (op) {
  case FUSE__OP_CONV2D:
  case FUSE__OP_MATMUL:
  case FUSE__OP_ADD:
  case FUSE__OP_SUB:
  case FUSE__OP_MUL:
  case FUSE__OP_MAXIMUM:
  case FUSE__OP_MINIMUM: arity = 2; break;
  case FUSE__OP_BATCH_NORM: arity = 5; break;
  case FUSE__OP_CONCAT: arity = n_in > 0 ? n_in : 1; break;
  /* element-wise math (builders_math.c) */
  case FUSE__OP_DIV:
  case FUSE__OP_POW:
  case FUSE__OP_PRELU: arity = 2; break;
  case FUSE__OP_WHERE: arity = 3; break;

  /* data movement (builders_shape.c) */
  case FUSE__OP_GATHER: arity = 2; break;

  /* reductions, normalizations (builders_nn.c) */
  case FUSE__OP_LAYER_NORM: arity = n_in == 2 ? 2 : 3; break; /* bias is optional */
  case FUSE__OP_INSTANCE_NORM:
  case FUSE__OP_GROUP_NORM: arity = 3; break;

  /* transposed convolution (builders_layers.c) */
  case FUSE__OP_CONV_TRANSPOSE2D: arity = 2; break;

  default: break;
  }
  if (n_in != arity)
    return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %s takes %d operand%s, not %d", ps->at_line, ps->at_col,
                      fuse__op_names[op], arity, arity == 1 ? "" : "s", n_in);
  switch (op) {
  case FUSE__OP_CONV2D: {
    fuse_conv2d_attrs c;
    memset(&c, 0, sizeof c);
    fuse__text_ints(at, n_at, "strides", c.strides, 2);
    fuse__text_ints(at, n_at, "padding", c.padding, 4);
    fuse__text_ints(at, n_at, "dilation", c.dilation, 2);
    fuse__text_ints(at, n_at, "groups", &c.groups, 1);
    return fuse_conv2d(g, in[0], in[1], &c);
  }
  case FUSE__OP_MATMUL: return fuse_matmul(g, in[0], in[1]);
  case FUSE__OP_ADD:
  case FUSE__OP_SUB:
  case FUSE__OP_MUL:
  case FUSE__OP_MAXIMUM:
  case FUSE__OP_MINIMUM: return fuse__binary(g, op, in[0], in[1]);
  case FUSE__OP_RELU: return fuse_relu(g, in[0]);
  case FUSE__OP_SIGMOID: return fuse_sigmoid(g, in[0]);
  case FUSE__OP_CLIP: {
    float lo = -HUGE_VALF, hi = HUGE_VALF;
    if ((a = fuse__text_find_attr(at, n_at, "lo")) != NULL) lo = (float)a->v[0];
    if ((a = fuse__text_find_attr(at, n_at, "hi")) != NULL) hi = (float)a->v[0];
    return fuse_clip(g, in[0], lo, hi);
  }
  case FUSE__OP_RESHAPE: {
    int64_t shape[FUSE_MAX_RANK];
    int i;
    if (!(a = fuse__text_find_attr(at, n_at, "shape")))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: reshape needs shape=[...]", ps->at_line, ps->at_col);
    for (i = 0; i < a->count; i++) shape[i] = (int64_t)a->v[i];
    return fuse_reshape(g, in[0], a->count, shape);
  }
  case FUSE__OP_FLATTEN:
  case FUSE__OP_CONCAT:
  case FUSE__OP_SOFTMAX: {
    int axis = op == FUSE__OP_FLATTEN ? 1 : op == FUSE__OP_SOFTMAX ? -1 : 0;
    fuse__text_ints(at, n_at, "axis", &axis, 1);
    return op == FUSE__OP_FLATTEN   ? fuse_flatten(g, in[0], axis)
           : op == FUSE__OP_SOFTMAX ? fuse_softmax(g, in[0], axis)
                                    : fuse_concat(g, n_in, in, axis);
  }
  case FUSE__OP_BATCH_NORM: {
    float eps = 1e-5f;
    if ((a = fuse__text_find_attr(at, n_at, "eps")) != NULL) eps = (float)a->v[0];
    return fuse_batch_norm(g, in[0], in[1], in[2], in[3], in[4], eps);
  }
  case FUSE__OP_MAX_POOL2D:
  case FUSE__OP_AVG_POOL2D: {
    fuse_pool2d_attrs p;
    memset(&p, 0, sizeof p);
    if (!fuse__text_find_attr(at, n_at, "kernel"))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %s needs kernel=[kh, kw]", ps->at_line, ps->at_col,
                        fuse__op_names[op]);
    fuse__text_ints(at, n_at, "kernel", p.kernel, 2);
    fuse__text_ints(at, n_at, "strides", p.strides, 2);
    fuse__text_ints(at, n_at, "padding", p.padding, 4);
    fuse__text_ints(at, n_at, "dilation", p.dilation, 2);
    fuse__text_ints(at, n_at, "ceil_mode", &p.ceil_mode, 1);
    fuse__text_ints(at, n_at, "count_include_pad", &p.count_include_pad, 1);
    return fuse__pool(g, op, in[0], &p);
  }
  case FUSE__OP_GLOBAL_AVG_POOL2D: return fuse_global_avg_pool2d(g, in[0]);
  case FUSE__OP_TRANSPOSE: {
    int p[FUSE_MAX_RANK], i;
    if (!(a = fuse__text_find_attr(at, n_at, "perm"))) return fuse_transpose(g, in[0], NULL);
    if (a->count != fuse_value_rank(g, in[0]))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: transpose perm has %d entries for rank %d",
                        ps->at_line, ps->at_col, a->count, fuse_value_rank(g, in[0]));
    for (i = 0; i < a->count; i++) p[i] = (int)a->v[i];
    return fuse_transpose(g, in[0], p);
  }
  /* element-wise math (builders_math.c) */
  case FUSE__OP_SQRT: return fuse_sqrt(g, in[0]);
  case FUSE__OP_RECIPROCAL: return fuse_reciprocal(g, in[0]);
  case FUSE__OP_EXP: return fuse_exp(g, in[0]);
  case FUSE__OP_LOG: return fuse_log(g, in[0]);
  case FUSE__OP_NEG: return fuse_neg(g, in[0]);
  case FUSE__OP_ABS: return fuse_abs(g, in[0]);
  case FUSE__OP_FLOOR: return fuse_floor(g, in[0]);
  case FUSE__OP_CEIL: return fuse_ceil(g, in[0]);
  case FUSE__OP_ERF: return fuse_erf(g, in[0]);
  case FUSE__OP_TANH: return fuse_tanh(g, in[0]);
  case FUSE__OP_SOFTPLUS: return fuse_softplus(g, in[0]);
  case FUSE__OP_HARDSWISH: return fuse_hardswish(g, in[0]);
  case FUSE__OP_HARDSIGMOID:
  case FUSE__OP_LEAKY_RELU:
  case FUSE__OP_ELU:
  case FUSE__OP_SELU: { /* left out: ONNX's defaults */
    float alpha = op == FUSE__OP_HARDSIGMOID ? 0.2f
                  : op == FUSE__OP_LEAKY_RELU ? 0.01f
                  : op == FUSE__OP_ELU        ? 1.0f
                                              : 1.67326319217681884765625f;
    float beta = op == FUSE__OP_HARDSIGMOID ? 0.5f : 1.05070102214813232421875f;
    if ((a = fuse__text_find_attr(at, n_at, "alpha")) != NULL) alpha = (float)a->v[0];
    if ((a = fuse__text_find_attr(at, n_at, op == FUSE__OP_SELU ? "gamma" : "beta")) != NULL)
      beta = (float)a->v[0];
    return op == FUSE__OP_HARDSIGMOID ? fuse_hardsigmoid(g, in[0], alpha, beta)
           : op == FUSE__OP_LEAKY_RELU ? fuse_leaky_relu(g, in[0], alpha)
           : op == FUSE__OP_ELU        ? fuse_elu(g, in[0], alpha)
                                       : fuse_selu(g, in[0], alpha, beta);
  }
  case FUSE__OP_GELU: {
    int approximate = 0;
    fuse__text_ints(at, n_at, "approximate", &approximate, 1);
    return fuse_gelu(g, in[0], approximate);
  }
  case FUSE__OP_DIV: return fuse_div(g, in[0], in[1]);
  case FUSE__OP_POW: return fuse_pow(g, in[0], in[1]);
  case FUSE__OP_PRELU: return fuse_prelu(g, in[0], in[1]);
  case FUSE__OP_WHERE: return fuse_where(g, in[0], in[1], in[2]);

  /* data movement (builders_shape.c) */
  case FUSE__OP_GATHER: {
    int axis = 0;
    fuse__text_ints(at, n_at, "axis", &axis, 1);
    return fuse__gather_node(g, in[0], in[1], axis);
  }
  case FUSE__OP_EXPAND:
  case FUSE__OP_TILE: {
    const char *key = op == FUSE__OP_EXPAND ? "shape" : "repeats";
    int64_t list[FUSE_MAX_RANK];
    int i;
    if (!(a = fuse__text_find_attr(at, n_at, key)))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %s needs %s=[...]", ps->at_line,
                        ps->at_col, fuse__op_names[op], key);
    for (i = 0; i < a->count; i++) list[i] = (int64_t)a->v[i];
    if (op == FUSE__OP_EXPAND) return fuse_expand(g, in[0], a->count, list);
    if (a->count != fuse_value_rank(g, in[0]))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: tile repeats has %d entries for rank %d",
                        ps->at_line, ps->at_col, a->count, fuse_value_rank(g, in[0]));
    return fuse_tile(g, in[0], list);
  }
  case FUSE__OP_PAD: {
    int64_t pads[2 * FUSE_MAX_RANK];
    int rank = fuse_value_rank(g, in[0]), mode = 0, i, k;
    float value = 0;
    memset(pads, 0, sizeof pads);
    for (k = 0; k < 2; k++)
      if ((a = fuse__text_find_attr(at, n_at, k ? "ends" : "begins")) != NULL) {
        if (a->count != rank)
          return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: pad %s has %d entries for rank %d",
                            ps->at_line, ps->at_col, a->name, a->count, rank);
        for (i = 0; i < rank; i++) pads[k * rank + i] = (int64_t)a->v[i];
      }
    if ((a = fuse__text_find_attr(at, n_at, "value")) != NULL) value = (float)a->v[0];
    fuse__text_ints(at, n_at, "mode", &mode, 1);
    return fuse_pad(g, in[0], pads, (fuse_pad_mode)mode, value);
  }
  case FUSE__OP_RESIZE: {
    int64_t sizes[FUSE_MAX_RANK];
    float scales[FUSE_MAX_RANK];
    fuse_resize_attrs ra;
    int rank = fuse_value_rank(g, in[0]), v[4] = {0, 0, 0, 0}, i;
    const fuse__parse_attr *sc = fuse__text_find_attr(at, n_at, "scales");
    if (!(a = fuse__text_find_attr(at, n_at, "sizes")) || a->count != rank ||
        (sc && sc->count != rank))
      return fuse__fail(g, FUSE_ERROR_PARSE,
                        "line %d, column %d: resize needs sizes=[...] (and scales=[...]) with %d entries",
                        ps->at_line, ps->at_col, rank);
    for (i = 0; i < rank; i++) sizes[i] = (int64_t)a->v[i], scales[i] = sc ? (float)sc->v[i] : 0;
    memset(&ra, 0, sizeof ra);
    fuse__text_ints(at, n_at, "mode", &v[0], 1);
    fuse__text_ints(at, n_at, "coordinates", &v[1], 1);
    fuse__text_ints(at, n_at, "nearest", &v[2], 1);
    fuse__text_ints(at, n_at, "exclude_outside", &v[3], 1);
    ra.mode = (fuse_resize_mode)v[0];
    ra.coordinates = (fuse_resize_coordinates)v[1];
    ra.nearest = (fuse_resize_nearest)v[2];
    ra.exclude_outside = v[3];
    if ((a = fuse__text_find_attr(at, n_at, "cubic_coeff_a")) != NULL) ra.cubic_coeff_a = (float)a->v[0];
    return fuse_resize(g, in[0], sizes, sc ? scales : NULL, &ra);
  }

  /* reductions, normalizations (builders_nn.c) */
  case FUSE__OP_REDUCE_MEAN:
  case FUSE__OP_REDUCE_SUM:
  case FUSE__OP_REDUCE_MAX:
  case FUSE__OP_REDUCE_MIN:
  case FUSE__OP_REDUCE_L2:
  case FUSE__OP_REDUCE_PROD:
  case FUSE__OP_REDUCE_SUM_SQUARE: {
    int axes[FUSE_MAX_RANK], keepdims = 1, count = 0;
    fuse_reduce_kind kind = (fuse_reduce_kind)(FUSE_REDUCE_MEAN + (op - FUSE__OP_REDUCE_MEAN));
    if ((a = fuse__text_find_attr(at, n_at, "axes")) != NULL) { /* absent or []: all axes */
      count = a->count;
      fuse__text_ints(at, n_at, "axes", axes, count);
    }
    fuse__text_ints(at, n_at, "keepdims", &keepdims, 1);
    return fuse_reduce(g, in[0], kind, count, axes, keepdims);
  }
  case FUSE__OP_LOG_SOFTMAX: {
    int axis = -1;
    fuse__text_ints(at, n_at, "axis", &axis, 1);
    return fuse_log_softmax(g, in[0], axis);
  }
  case FUSE__OP_LAYER_NORM:
  case FUSE__OP_INSTANCE_NORM:
  case FUSE__OP_GROUP_NORM: {
    float eps = 1e-5f;
    int axis = -1, groups = 0;
    if ((a = fuse__text_find_attr(at, n_at, "eps")) != NULL) eps = (float)a->v[0];
    fuse__text_ints(at, n_at, "axis", &axis, 1);
    if (op == FUSE__OP_LAYER_NORM)
      return fuse_layer_norm(g, in[0], in[1], n_in == 3 ? in[2] : FUSE_NONE, axis, eps);
    if (op == FUSE__OP_INSTANCE_NORM) return fuse_instance_norm(g, in[0], in[1], in[2], eps);
    if (!fuse__text_find_attr(at, n_at, "groups"))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: group_norm needs groups=N",
                        ps->at_line, ps->at_col);
    fuse__text_ints(at, n_at, "groups", &groups, 1);
    return fuse_group_norm(g, in[0], in[1], in[2], groups, eps);
  }

  /* transposed convolution (builders_layers.c) */
  case FUSE__OP_SLICE: return fuse__text_slice(ps, in[0], at, n_at);
  case FUSE__OP_CONV_TRANSPOSE2D: {
    fuse_conv_transpose2d_attrs c;
    memset(&c, 0, sizeof c);
    fuse__text_ints(at, n_at, "strides", c.strides, 2);
    fuse__text_ints(at, n_at, "padding", c.padding, 4);
    fuse__text_ints(at, n_at, "output_padding", c.output_padding, 2);
    fuse__text_ints(at, n_at, "dilation", c.dilation, 2);
    fuse__text_ints(at, n_at, "groups", &c.groups, 1);
    return fuse_conv_transpose2d(g, in[0], in[1], &c);
  }

  default: break;
  }
  return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %s cannot be written as an op", ps->at_line, ps->at_col,
                    fuse__op_names[op]);
}

/* A builder failed: put the line in front of its message, keep its code. */
static void fuse__text_locate_error(fuse__parser *ps) {
  char msg[sizeof ps->g->error];
  fuse__out o;
  memcpy(msg, ps->g->error, sizeof msg);
  o.buf = ps->g->error;
  o.len = 0;
  o.cap = sizeof ps->g->error;
  o.write = NULL;
  o.user = NULL;
  fuse__puts(&o, "line ");
  fuse__put_int(&o, ps->at_line);
  fuse__puts(&o, ", column ");
  fuse__put_int(&o, ps->at_col);
  fuse__puts(&o, ": ");
  fuse__puts(&o, msg);
}

/* An operand: a label or a number (which becomes a scalar constant). */
static int fuse__text_operand(fuse__parser *ps, fuse_value *out) {
  fuse__text_skip(ps);
  if (*ps->p != '%') {
    float v = 0;
    if (!fuse__text_float(ps, &v)) return 0;
    *out = fuse_scalar(ps->g, v);
    return *out != FUSE_NONE;
  }
  {
    int line = ps->line, col = fuse__text_col(ps);
    if (!fuse__text_label(ps)) return 0;
    if ((*out = fuse__text_lookup(ps)) == FUSE_NONE)
      return fuse__fail(ps->g, FUSE_ERROR_PARSE,
                        "line %d, column %d: %%%s is not defined before its use", line, col,
                        ps->name),
             0;
  }
  return 1;
}

/* "const" after "%label: shape =": the constant, with at most 4 values inline in braces.
   FUSE_NONE: it failed (the graph says why). */
static fuse_value fuse__text_const(fuse__parser *ps, const char *label, int numbered,
                                   int declared_rank, const int64_t *declared) {
  fuse_graph *g = ps->g;
  float vals[FUSE__INLINE_CONST_MAX];
  int count = 0;
  if (declared_rank < 0) {
    fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: a constant needs its shape: %%%s: [...] = const",
               ps->at_line, ps->at_col, label);
    return FUSE_NONE;
  }
  if (fuse__text_accept(ps, '{')) {
    do {
      if (count == FUSE__INLINE_CONST_MAX) {
        fuse__text_fail(ps, "at most 4 inline values (fill larger constants by name)");
        return FUSE_NONE;
      }
      if (!fuse__text_float(ps, &vals[count++])) return FUSE_NONE;
    } while (fuse__text_accept(ps, ','));
    if (!fuse__text_expect(ps, '}', "',' or '}' after constant values")) return FUSE_NONE;
    if (!fuse__check_shape(g, "const", declared_rank, declared)) return FUSE_NONE;
    if (count != fuse__numel(declared_rank, declared)) {
      fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: constant %S has %D elements but %d values",
                 ps->at_line, ps->at_col, declared_rank, declared, fuse__numel(declared_rank, declared), count);
      return FUSE_NONE;
    }
  }
  return fuse_constant(g, numbered ? NULL : label, declared_rank, declared, count ? vals : NULL);
}

/* One attribute "name=value" of op, at ps->p, into attrs[*n_at]. 0: failed. */
static int fuse__text_attribute(fuse__parser *ps, int op, fuse__parse_attr *attrs, int *n_at) {
  if (*n_at == FUSE__MAX_PARSE_ATTRS) {
    fuse__text_fail(ps, "fewer attributes");
    return 0;
  }
  if (!fuse__text_attr(ps, &attrs[*n_at]) || !fuse__text_check_attr(ps, op, &attrs[*n_at]))
    return 0;
  if (fuse__text_find_attr(attrs, *n_at, attrs[*n_at].name)) {
    fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: attribute '%s' is given twice",
               ps->at_line, ps->at_col, attrs[*n_at].name);
    return 0;
  }
  (*n_at)++;
  return 1;
}

/* "(operands, name=value, ...)" after an op name: the operands into *in (grown here, the
   caller frees it), the attributes into attrs. 0: failed. */
static int fuse__text_arguments(fuse__parser *ps, int op, fuse_value **in, int *n_in,
                                fuse__parse_attr *attrs, int *n_at) {
  fuse_graph *g = ps->g;
  int cap_in = 0;
  if (!fuse__text_expect(ps, '(', "'(' after the op name")) return 0;
  if (fuse__text_accept(ps, ')')) return 1;
  do {
    fuse__text_skip(ps);
    if (fuse__is_ident_start((unsigned char)*ps->p)) {
      const char *q = ps->p;
      while (fuse__is_ident_char((unsigned char)*q)) q++;
      while (*q == ' ' || *q == '\t') q++;
      if (*q == '=') { /* an attribute */
        if (!fuse__text_attribute(ps, op, attrs, n_at)) return 0;
        continue;
      }
    }
    if (*n_at) {
      fuse__text_fail(ps, "an attribute (operands come first)");
      return 0;
    }
    if (*n_in == cap_in) {
      fuse_value *bigger = (fuse_value *)fuse__grow(&g->alloc, *in, *n_in, &cap_in, *n_in + 1,
                                                    sizeof(fuse_value));
      if (!bigger) {
        fuse__oom(g, "parse");
        return 0;
      }
      *in = bigger;
    }
    if (!fuse__text_operand(ps, &(*in)[(*n_in)++])) return 0;
  } while (fuse__text_accept(ps, ','));
  return fuse__text_expect(ps, ')', "',' or ')' after an operand");
}

/* "op(operands, attrs)" after "%label[: shape] =": the op built, its shape checked against
   the declared one. FUSE_NONE: it failed (the graph says why). */
static fuse_value fuse__text_op(fuse__parser *ps, int op, const char *word, const char *label,
                                int declared_rank, const int64_t *declared) {
  fuse_graph *g = ps->g;
  fuse__parse_attr attrs[FUSE__MAX_PARSE_ATTRS];
  fuse_value v = FUSE_NONE, *in = NULL;
  int n_in = 0, n_at = 0;
  if (!fuse__text_arguments(ps, op, &in, &n_in, attrs, &n_at)) goto done;
  v = fuse__text_build(ps, op, in, n_in, attrs, n_at);
  if (v == FUSE_NONE) {
    if (strncmp(g->error, "line ", 5) != 0) fuse__text_locate_error(ps);
    goto done;
  }
  if (declared_rank >= 0 &&
      (declared_rank != g->nodes[v].rank ||
       memcmp(declared, g->nodes[v].shape, (size_t)declared_rank * sizeof(int64_t)) != 0)) {
    fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %%%s is declared %S but %s gives %S", ps->at_line, ps->at_col, label,
               declared_rank, declared, word, g->nodes[v].rank, g->nodes[v].shape);
    v = FUSE_NONE;
  }
done:
  fuse__free(&g->alloc, in);
  return v;
}

/* One body statement: %label[: shape] = const{...} | op(operands, attrs). */
static int fuse__text_statement(fuse__parser *ps) {
  int64_t declared[FUSE_MAX_RANK];
  int declared_rank = -1, op, ok = 0;
  char word[32];
  fuse_value v;
  fuse_graph *g = ps->g;
  char *label;
  int numbered;
  fuse__text_skip(ps);
  ps->at_line = ps->line;
  ps->at_col = fuse__text_col(ps);
  if (!fuse__text_label(ps)) return 0;
  if (fuse__text_lookup(ps) != FUSE_NONE)
    return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %%%s is defined twice", ps->at_line, ps->at_col, ps->name), 0;
  if (!(label = fuse__strdup(g, ps->name))) return fuse__oom(g, "parse");
  numbered = ps->name_numbered;
  if (fuse__text_accept(ps, ':') && !fuse__text_shape(ps, &declared_rank, declared)) goto done;
  if (!fuse__text_expect(ps, '=', "'=' after the value") || !fuse__text_word(ps, word, sizeof word)) {
    if (g->status == FUSE_OK) fuse__text_fail(ps, "an op name");
    goto done;
  }
  for (op = FUSE__OP_CONST; op < FUSE__OP_COPY; op++)
    if (strcmp(word, fuse__op_names[op]) == 0) break;
  if (op == FUSE__OP_COPY) {
    fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: unknown op '%s'", ps->at_line, ps->at_col, word);
    goto done;
  }
  v = op == FUSE__OP_CONST ? fuse__text_const(ps, label, numbered, declared_rank, declared)
                           : fuse__text_op(ps, op, word, label, declared_rank, declared);
  if (v == FUSE_NONE) goto done;
  /* bind the statement's own label (operands reused ps->name; it only ever grows) */
  ps->name_numbered = numbered;
  strcpy(ps->name, label);
  if (!fuse__text_bind(ps, v)) {
    if (strncmp(g->error, "line ", 5) != 0) fuse__text_locate_error(ps);
    goto done;
  }
  ok = 1;
done:
  fuse__free(&g->alloc, label);
  return ok;
}

/* composite "name" "function" codegen="x"|none region=N bind_constants=B { statements } */
static int fuse__text_composite(fuse__parser *ps) {
  fuse_graph *g = ps->g;
  char *text[3] = {NULL, NULL, NULL}, word[32];
  int region = -1, bind = 1, first, v, count = 0, ok = 0, i;
  fuse_value *members = NULL;
  ps->at_line = ps->line;
  ps->at_col = fuse__text_col(ps);
  ps->p += 9;
  for (i = 0; i < 2; i++) { /* name, function */
    fuse__text_skip(ps);
    if (*ps->p != '"') {
      fuse__text_fail(ps, i ? "the composite's function name in quotes" : "the composite's name in quotes");
      goto done;
    }
    if (!fuse__text_quoted(ps)) goto done;
    if (!(text[i] = fuse__strdup(g, ps->name))) {
      fuse__oom(g, "parse"); /* not a syntax error */
      goto done;
    }
  }
  while (fuse__text_word(ps, word, sizeof word)) {
    double num;
    if (!fuse__text_expect(ps, '=', "'=' after the composite attribute")) goto done;
    if (strcmp(word, "codegen") == 0) {
      fuse__text_skip(ps);
      if (*ps->p == '"') {
        if (!fuse__text_quoted(ps)) goto done;
        if (!(text[2] = fuse__strdup(g, ps->name))) {
          fuse__oom(g, "parse");
          goto done;
        }
      } else if (!fuse__text_word(ps, word, sizeof word) || strcmp(word, "none") != 0) {
        fuse__text_fail(ps, "codegen=\"name\" or codegen=none");
        goto done;
      }
    } else if (strcmp(word, "region") == 0 || strcmp(word, "bind_constants") == 0) {
      if (!fuse__text_number(ps, &num)) goto done;
      if (num != floor(num) || num < -1 || num > 2147483647.0) {
        fuse__text_fail(ps, "a whole number");
        goto done;
      }
      if (word[0] == 'r') region = (int)num;
      else bind = num != 0;
    } else {
      fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: a composite has no attribute '%s'",
                 ps->at_line, ps->at_col, word);
      goto done;
    }
  }
  if (!fuse__text_expect(ps, '{', "'{' opening the composite's body")) goto done;
  first = g->num_nodes;
  for (;;) {
    fuse__text_skip(ps);
    if (*ps->p == '}') break;
    if (*ps->p != '%') {
      fuse__text_fail(ps, "a statement '%x = op(...)' or '}' closing the composite");
      goto done;
    }
    if (!fuse__text_statement(ps)) goto done;
  }
  ps->p++;
  for (v = first; v < g->num_nodes; v++) count += g->nodes[v].op > FUSE__OP_CONST;
  if (!count) {
    fuse__fail(g, FUSE_ERROR_PARSE, "line %d: composite \"%s\" has no ops", ps->line, text[0]);
    goto done;
  }
  members = (fuse_value *)fuse__alloc(&g->alloc, (size_t)count * sizeof(fuse_value), 16);
  if (!members) {
    fuse__oom(g, "parse");
    goto done;
  }
  for (count = 0, v = first; v < g->num_nodes; v++)
    if (g->nodes[v].op > FUSE__OP_CONST) members[count++] = v;
  if (!fuse__composite_add(g, text[0], text[1], text[2], bind, members, count)) {
    fuse__oom(g, "parse");
    goto done;
  }
  g->composites[g->num_composites - 1].region = region;
  ok = 1;
done:
  for (i = 0; i < 3; i++) fuse__free(&g->alloc, text[i]);
  fuse__free(&g->alloc, members);
  return ok;
}

static int fuse__text_graph(fuse__parser *ps) {
  fuse_graph *g = ps->g;
  char word[16];
  const char *start;
  fuse__text_skip(ps);
  start = ps->p;
  if (!fuse__text_word(ps, word, sizeof word) || strcmp(word, "graph") != 0) {
    ps->p = start;
    return fuse__text_fail(ps, "'graph'");
  }
  if (!fuse__text_expect(ps, '(', "'(' after 'graph'")) return 0;
  if (!fuse__text_accept(ps, ')')) {
    do {
      int64_t shape[FUSE_MAX_RANK];
      int rank;
      fuse_value v;
      fuse__text_skip(ps);
      ps->at_line = ps->line;
      ps->at_col = fuse__text_col(ps);
      if (!fuse__text_label(ps)) return 0;
      if (fuse__text_lookup(ps) != FUSE_NONE)
        return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: input %%%s is listed twice", ps->at_line, ps->at_col,
                          ps->name),
               0;
      if (!fuse__text_expect(ps, ':', "':' and the input's shape")) return 0;
      if (!fuse__text_shape(ps, &rank, shape)) return 0; /* leaves the label in ps->name */
      v = fuse_input(g, ps->name_numbered ? NULL : ps->name, rank, shape);
      if (v == FUSE_NONE) return fuse__text_locate_error(ps), 0;
      if (ps->name_numbered && !fuse__text_bind(ps, v)) return 0;
    } while (fuse__text_accept(ps, ','));
    if (!fuse__text_expect(ps, ')', "',' or ')' after an input")) return 0;
  }
  if (!fuse__text_expect(ps, '{', "'{' opening the graph body")) return 0;
  for (;;) {
    fuse__text_skip(ps);
    if (strncmp(ps->p, "return", 6) == 0 && !fuse__is_ident_char((unsigned char)ps->p[6])) break;
    if (strncmp(ps->p, "composite", 9) == 0 && !fuse__is_ident_char((unsigned char)ps->p[9])) {
      if (!fuse__text_composite(ps)) return 0;
      continue;
    }
    if (*ps->p != '%') return fuse__text_fail(ps, "a statement '%x = op(...)', a composite or 'return'");
    if (!fuse__text_statement(ps)) return 0;
  }
  ps->p += 6;
  fuse__text_skip(ps);
  if (*ps->p != '}') { /* else a graph without outputs */
    do {
      fuse_value v;
      if (!fuse__text_operand(ps, &v)) return 0;
      if (fuse_output(g, v) != FUSE_OK) return 0;
    } while (fuse__text_accept(ps, ','));
  }
  if (!fuse__text_expect(ps, '}', "'}' closing the graph")) return 0;
  fuse__text_skip(ps);
  if (*ps->p) return fuse__text_fail(ps, "the end of the text after '}'");
  return 1;
}

FUSE_API fuse_result fuse_graph_parse(const char *text, const fuse_allocator *alloc,
                                      fuse_graph **out) {
  fuse__parser ps;
  fuse_graph *g;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  *out = g = fuse_graph_create(alloc);
  if (!g) return FUSE_ERROR_OUT_OF_MEMORY;
  if (!text) return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "parse: text is NULL"), g->status;
  memset(&ps, 0, sizeof ps);
  ps.p = ps.line_start = text;
  ps.line = 1;
  ps.g = g;
  ps.name_cap = 64;
  ps.name = (char *)fuse__alloc(&g->alloc, ps.name_cap, 1);
  if (!ps.name) return fuse__oom(g, "parse"), g->status;
  if (!fuse__text_graph(&ps) && g->status == FUSE_OK) fuse__text_fail(&ps, "valid text");
  fuse__free(&g->alloc, ps.name);
  fuse__free(&g->alloc, ps.num_keys);
  fuse__free(&g->alloc, ps.num_vals);
  return g->status;
}

FUSE_API fuse_result fuse_graph_set_constant(fuse_graph *g, const char *name, const float *data,
                                             size_t n) {
  fuse_value v;
  fuse__node *node;
  int64_t count;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  if (!name || !data)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "set_constant: %s is NULL",
                      name ? "data" : "name"),
           g->status;
  v = fuse__find(g, name);
  if (v == FUSE_NONE || g->nodes[v].op != FUSE__OP_CONST)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "set_constant: '%s' is %s", name,
                      v == FUSE_NONE ? "not a name in the graph" : "not a constant"),
           g->status;
  node = &g->nodes[v];
  count = fuse__numel(node->rank, node->shape);
  if ((uint64_t)count != (uint64_t)n)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "set_constant: '%s' %S has %D elements, not %D", name,
                      node->rank, node->shape, count, (int64_t)n),
           g->status;
  memcpy(node->data, data, n * sizeof(float));
  return FUSE_OK;
}

/* ==== end src/text_parse.c ==== */
/* ==== begin src/cpu.c ==== */
/* ------------------------------------------------------------------ cpu isa -- */

#if !defined(FUSE_NO_SIMD) && (defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || \
                               defined(_M_IX86))
#define FUSE__X86 1
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static void fuse__cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
  int x[4];
  __cpuidex(x, (int)leaf, (int)sub);
  r[0] = (unsigned)x[0], r[1] = (unsigned)x[1], r[2] = (unsigned)x[2], r[3] = (unsigned)x[3];
}
static unsigned long long fuse__xgetbv(void) { return _xgetbv(0); }
#else
#include <cpuid.h>
static void fuse__cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
  __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
static unsigned long long fuse__xgetbv(void) {
  unsigned lo, hi;
  __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}
#endif
#endif

FUSE_API fuse_isa fuse_cpu_isa(void) {
#ifdef FUSE__X86
  unsigned r[4], max_leaf, ebx7;
  unsigned long long xcr0;
  fuse__cpuid(0, 0, r);
  max_leaf = r[0];
  if (max_leaf < 7) return FUSE_ISA_SCALAR;
  fuse__cpuid(1, 0, r);
  /* OSXSAVE (27), AVX (28), FMA (12) */
  if (!(r[2] & (1u << 27)) || !(r[2] & (1u << 28)) || !(r[2] & (1u << 12))) return FUSE_ISA_SCALAR;
  xcr0 = fuse__xgetbv();
  if ((xcr0 & 6) != 6) return FUSE_ISA_SCALAR; /* the OS saves SSE and AVX state */
  fuse__cpuid(7, 0, r);
  ebx7 = r[1];
#ifndef FUSE_NO_AVX512
  /* AVX-512 F (16), DQ (17), BW (30), VL (31), and the OS saves opmask / ZMM state */
  if ((ebx7 & (1u << 16)) && (ebx7 & (1u << 17)) && (ebx7 & (1u << 30)) && (ebx7 & (1u << 31)) &&
      (xcr0 & 0xe6) == 0xe6)
    return FUSE_ISA_AVX512;
#endif
#ifndef FUSE_NO_AVX2
  if (ebx7 & (1u << 5)) return FUSE_ISA_AVX2;
#endif
  (void)ebx7; /* FUSE_NO_AVX2 with FUSE_NO_AVX512: -Wunused-but-set-variable */
#endif
  return FUSE_ISA_SCALAR;
}


/* The taps t in [0, k) of a window from `start`, `dil` apart, that fall inside [0, size):
   [*lo, *hi). Found by arithmetic, so a huge window costs nothing. */
static void fuse__taps(int64_t start, int64_t dil, int64_t k, int64_t size, int *lo, int *hi) {
  int64_t l = start >= 0 ? 0 : (-start + dil - 1) / dil;
  int64_t h = start > size - 1 ? 0 : (size - 1 - start) / dil + 1;
  if (h > k) h = k;
  if (l > h) l = h;
  *lo = (int)l, *hi = (int)h;
}

/* ==== end src/cpu.c ==== */
/* ==== begin src/kernels/common.c ==== */
/* ------------------------------------------------------------------ kernels -- */
/* The kernels every plan step runs, by family: the GEMM family (gemm.c: NHWC indirect GEMM for
   conv2d and matmul, the NCHW GEMM, the few-input-channel stem kernel), depthwise conv
   (depthwise.c), pools, element-wise rows and layout transposes (pool_eltwise.c); their
   drivers (conv_drivers.c, other_ops.c) and the op-by-op reference kernels (reference.c), the
   oracle every other kernel is tested against.

   Each kernel is written once, as a plain-C template (the .inc files here) over the names of
   a vector layer (vec_avx512.h, vec_avx2.h, vec_scalar.h), and instantiated once per layer and
   tile by including it between the layer and vec_end.h; the generator pastes every instance
   into fuse.h, so a debugger steps through ordinary C. The scalar instance of each template
   is its scalar twin: the fallback where no SIMD is compiled in and the implementation of
   FUSE_ISA_SCALAR, with the same tiles, packing and drivers. The kernel table (table.c) lists
   every instance with its instruction set and tile; kernel choice reads it.

   The x86 instances carry function target attributes, so a unit built with plain -O2 still
   has them; fuse_cpu_isa() decides at run time. */
#if defined(FUSE__X86) && (defined(__GNUC__) || defined(__clang__)) && \
    (!defined(FUSE_NO_AVX2) || !defined(FUSE_NO_AVX512))
#define FUSE__SIMD 1
#include <immintrin.h>
#endif

/* The templates' register tiles are small arrays in loops of constant trip count under
   FUSE__UNROLL, which the compiler unrolls fully so that the arrays live in registers: the
   count covers the longest such loop (the 19 input rows of a 5x5 stride-2 depthwise tile).
   Under AddressSanitizer the arrays stay in memory with their redzones whatever is unrolled,
   and unrolled they make clang's builds take many minutes: there the loops stay loops; so
   they do in a build for size (-Os: the Cortex-M7 build, whose kernels are the scalar twins). */
#if defined(__SANITIZE_ADDRESS__)
#define FUSE__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUSE__ASAN 1
#endif
#endif
#if ((defined(__GNUC__) && __GNUC__ >= 8) || defined(__clang__)) && !defined(FUSE__ASAN) && \
    !defined(__OPTIMIZE_SIZE__)
#define FUSE__UNROLL _Pragma("GCC unroll 32")
#else
#define FUSE__UNROLL
#endif
/* A helper of a tile whose loops take their bounds from the caller's constants: always
   inlined, so that the bounds are constants there (clang warns of an unroll pragma it cannot
   honour in an outlined copy). */
#if defined(__GNUC__) || defined(__clang__)
#define FUSE__TILE_INLINE __attribute__((always_inline)) inline
#else
#define FUSE__TILE_INLINE inline
#endif

/* the depthwise and pool kernels' arguments (depthwise.c, pool_eltwise.c) */
typedef struct fuse__dw_args fuse__dw_args;
typedef struct fuse__pool_args fuse__pool_args;

/* The epilogue routine (post.inc), once per vector layer: every kernel family uses it. */
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
/* ==== begin src/kernels/vec_avx512.h ==== */
/* The AVX-512 vector layer: 16 floats, __mmask16 lane masks. Every kernel template
   (the .inc files in src/kernels) is written against the FUSE__VEC / FUSE__V_* names below and compiled
   once per layer (vec_scalar.h is the reference semantics of each operation); vec_end.h
   undefines them. The functions carry the target attribute, so a unit built with plain -O2
   still has this instance, taken when fuse_cpu_isa() finds AVX-512 at run time. */
#define FUSE__VEC_ISA FUSE_ISA_AVX512
#define FUSE__VEC_FN(name) name##_avx512 /* the instance's name */
#define FUSE__VEC_TARGET __attribute__((target("avx512f")))
#define FUSE__VEC __m512
#define FUSE__VEC_MASK __mmask16
#define FUSE__VEC_WIDTH 16
#define FUSE__V_ZERO() _mm512_setzero_ps()
#define FUSE__V_SET1(x) _mm512_set1_ps(x)
#define FUSE__V_LOAD(p) _mm512_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm512_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm512_store_ps(p, v) /* p 64-byte aligned */
/* lanes [0, n) (n may be anything: clamped to 0 .. 16) and [a, b) (0 <= a <= b <= 16) */
#define FUSE__V_MASK_FIRST(n)                                                                \
  ((__mmask16)((n) >= 16 ? 0xffffu : (n) <= 0 ? 0u : (1u << (unsigned)(n)) - 1u))
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  ((__mmask16)(((1u << (unsigned)(b)) - 1u) & ~((1u << (unsigned)(a)) - 1u)))
#define FUSE__V_LOAD_MASK(p, m) _mm512_maskz_loadu_ps(m, p) /* zeros outside m */
#define FUSE__V_STORE_MASK(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c) /* a * b + c */
#define FUSE__V_ADD(a, b) _mm512_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm512_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm512_mul_ps(a, b)
/* a > b ? a : b and a < b ? a : b (b where either is NaN); maskz: gcc 12 warns on max_ps */
#define FUSE__V_MAX(a, b) _mm512_maskz_max_ps((__mmask16)-1, a, b)
#define FUSE__V_MIN(a, b) _mm512_maskz_min_ps((__mmask16)-1, a, b)
/* x < t ? t : x and x > t ? t : x (x where either is NaN) */
#define FUSE__V_BELOW(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_LT_OQ), x, t)
#define FUSE__V_ABOVE(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_GT_OQ), x, t)
/* x where x > m (x < m) or x is NaN, else m: max / min that keep a NaN of x */
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_LT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
/* the even (odd) floats of the 32 in a, b: a0 a2 .. a14 b0 .. b14 */
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b)
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b)
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
/* ==== end src/kernels/vec_avx512.h ==== */
/* ==== begin src/kernels/post.inc ==== */
/* The epilogue routine of one vector layer (instantiated with each vec_*.h): post-op `op` of a
   fused step on v, one vector of the finished output, before its store. A residual (ADD) is
   read at r under the lanes m. Every kernel, the reference included (through the scalar
   instance), applies its post-ops through this one function, once per output element after
   the whole reduction, so a post-op kind is written here once for every instruction set. */
FUSE__VEC_TARGET static inline FUSE__VEC FUSE__VEC_FN(fuse__post_apply)(FUSE__VEC v,
                                                                     const fuse_post_op *op,
                                                                     const float *r,
                                                                     FUSE__VEC_MASK m) {
  switch (op->kind) {
  case FUSE_POST_ADD:
    return FUSE__V_ADD(v, FUSE__V_LOAD_MASK(r, m));
  case FUSE_POST_CLAMP:
  default: /* max(lo, v), then min(hi, .): a NaN in v passes through */
    return FUSE__V_MIN(FUSE__V_SET1(op->hi), FUSE__V_MAX(FUSE__V_SET1(op->lo), v));
  }
}
/* ==== end src/kernels/post.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* ==== begin src/kernels/vec_avx2.h ==== */
/* The AVX2 + FMA vector layer: 8 floats, lane masks as __m256i (all ones = lane on). The same
   operations as vec_avx512.h; see there. */
#define FUSE__VEC_ISA FUSE_ISA_AVX2
#define FUSE__VEC_FN(name) name##_avx2
#define FUSE__VEC_TARGET __attribute__((target("avx2,fma")))
#define FUSE__VEC __m256
#define FUSE__VEC_MASK __m256i
#define FUSE__VEC_WIDTH 8
#define FUSE__V_ZERO() _mm256_setzero_ps()
#define FUSE__V_SET1(x) _mm256_set1_ps(x)
#define FUSE__V_LOAD(p) _mm256_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm256_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm256_store_ps(p, v)
#define FUSE__V_LANES _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define FUSE__V_MASK_FIRST(n)                                                                \
  _mm256_cmpgt_epi32(_mm256_set1_epi32((int)((n) >= 8 ? 8 : (n) <= 0 ? 0 : (n))), FUSE__V_LANES)
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)(a)), FUSE__V_LANES),        \
                      _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(b)), FUSE__V_LANES))
#define FUSE__V_LOAD_MASK(p, m) _mm256_maskload_ps(p, m)
#define FUSE__V_STORE_MASK(p, m, v) _mm256_maskstore_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FUSE__V_ADD(a, b) _mm256_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm256_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm256_mul_ps(a, b)
#define FUSE__V_MAX(a, b) _mm256_max_ps(a, b)
#define FUSE__V_MIN(a, b) _mm256_min_ps(a, b)
#define FUSE__V_BELOW(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_LT_OQ))
#define FUSE__V_ABOVE(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_GT_OQ))
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_LT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8))
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8))
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
/* ==== end src/kernels/vec_avx2.h ==== */
/* ==== begin src/kernels/post.inc ==== */
/* The epilogue routine of one vector layer (instantiated with each vec_*.h): post-op `op` of a
   fused step on v, one vector of the finished output, before its store. A residual (ADD) is
   read at r under the lanes m. Every kernel, the reference included (through the scalar
   instance), applies its post-ops through this one function, once per output element after
   the whole reduction, so a post-op kind is written here once for every instruction set. */
FUSE__VEC_TARGET static inline FUSE__VEC FUSE__VEC_FN(fuse__post_apply)(FUSE__VEC v,
                                                                     const fuse_post_op *op,
                                                                     const float *r,
                                                                     FUSE__VEC_MASK m) {
  switch (op->kind) {
  case FUSE_POST_ADD:
    return FUSE__V_ADD(v, FUSE__V_LOAD_MASK(r, m));
  case FUSE_POST_CLAMP:
  default: /* max(lo, v), then min(hi, .): a NaN in v passes through */
    return FUSE__V_MIN(FUSE__V_SET1(op->hi), FUSE__V_MAX(FUSE__V_SET1(op->lo), v));
  }
}
/* ==== end src/kernels/post.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
#endif
/* ==== begin src/kernels/vec_scalar.h ==== */
/* The scalar vector layer: one float, a lane mask is 0 or 1. It gives every kernel template a
   plain-C instance (the scalar twin) with the same tiles, packing and drivers as the SIMD
   ones: the fallback where no SIMD is compiled in (ARM today, FUSE_NO_SIMD), the oracle the
   SIMD instances are tested against, and the definition of what each operation means
   (NaN handling included; the SIMD layers match it lane by lane). */
#define FUSE__VEC_ISA FUSE_ISA_SCALAR
#define FUSE__VEC_FN(name) name##_scalar
#define FUSE__VEC_TARGET
#define FUSE__VEC float
#define FUSE__VEC_MASK int
#define FUSE__VEC_WIDTH 1
#define FUSE__V_ZERO() 0.0f
#define FUSE__V_SET1(x) ((float)(x))
#define FUSE__V_LOAD(p) (*(p))
#define FUSE__V_STORE(p, v) (*(p) = (v))
#define FUSE__V_STORE_ALIGNED(p, v) (*(p) = (v))
#define FUSE__V_MASK_FIRST(n) ((n) > 0)
#define FUSE__V_MASK_RANGE(a, b) ((a) <= 0 && (b) > 0)
#define FUSE__V_LOAD_MASK(p, m) ((m) ? *(p) : 0.0f)
#define FUSE__V_STORE_MASK(p, m, v) ((m) ? (void)(*(p) = (v)) : (void)0)
#define FUSE__V_FMA(a, b, c) ((a) * (b) + (c))
#define FUSE__V_ADD(a, b) ((a) + (b))
#define FUSE__V_SUB(a, b) ((a) - (b))
#define FUSE__V_MUL(a, b) ((a) * (b))
#define FUSE__V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FUSE__V_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FUSE__V_BELOW(x, t) ((x) < (t) ? (t) : (x))
#define FUSE__V_ABOVE(x, t) ((x) > (t) ? (t) : (x))
#define FUSE__V_MAX_NAN(x, m) ((x) > (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_MIN_NAN(x, m) ((x) < (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_EVENS(a, b) ((void)(b), (a))
#define FUSE__V_ODDS(a, b) ((void)(a), (b))
#define FUSE__V_PREFETCH_L2(p) ((void)(p))
/* ==== end src/kernels/vec_scalar.h ==== */
/* ==== begin src/kernels/post.inc ==== */
/* The epilogue routine of one vector layer (instantiated with each vec_*.h): post-op `op` of a
   fused step on v, one vector of the finished output, before its store. A residual (ADD) is
   read at r under the lanes m. Every kernel, the reference included (through the scalar
   instance), applies its post-ops through this one function, once per output element after
   the whole reduction, so a post-op kind is written here once for every instruction set. */
FUSE__VEC_TARGET static inline FUSE__VEC FUSE__VEC_FN(fuse__post_apply)(FUSE__VEC v,
                                                                     const fuse_post_op *op,
                                                                     const float *r,
                                                                     FUSE__VEC_MASK m) {
  switch (op->kind) {
  case FUSE_POST_ADD:
    return FUSE__V_ADD(v, FUSE__V_LOAD_MASK(r, m));
  case FUSE_POST_CLAMP:
  default: /* max(lo, v), then min(hi, .): a NaN in v passes through */
    return FUSE__V_MIN(FUSE__V_SET1(op->hi), FUSE__V_MAX(FUSE__V_SET1(op->lo), v));
  }
}
/* ==== end src/kernels/post.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
/* ==== end src/kernels/common.c ==== */
/* ==== begin src/kernels/gemm.c ==== */
/* ------------------------------------------------------------- GEMM kernels -- */
/* conv2d with 4 or more outputs per group runs on NHWC tensors (the planner converts where the
   graph enters or leaves them) as an indirect GEMM: Y[pixel, K] = sum over taps t of
   X[pixel @ t, C] x W_t[C, K]. For a tile of MR output pixels each tap gives MR row pointers
   into the input, or into a zero row where the tap falls into the padding, so nothing is
   packed at run time, whatever the stride, padding or dilation. The weights are packed once,
   at compile, into [group][NR-column block][tap][C][NR] panels (the last block maybe
   narrower, on a tile of the same MR: fuse__igemm_last). The micro-kernel keeps its MR x NR
   tile in registers over every tap and channel, then adds the bias, runs the post-ops and
   stores once, masked where K is no multiple of NR. A tap that reads only the padding for
   every pixel of the tile is skipped. While a tile computes, its kernel brings the next column
   block's panel into L2 a line per step. Panels past 1 MB are walked tap by tap in channel
   blocks that stay in L1, the tile accumulating in the output between blocks. With few input
   channels (the 3-channel stem) a tap is a whole kernel row: KW*C contiguous floats in NHWC,
   copied with zeros into a row buffer only where the row crosses the padding. A single layer
   may run on NCHW in and out instead: the NCHW GEMM (output channels as tile rows, the input
   gathered into panels by its packer) and, for few input channels, its own kernel
   (fuse__conv_few_channels). The drivers are in conv_drivers.c, the choice of kernel and the
   weight packing in layouts.c.

   The GEMM family's micro-kernels, written once as plain-C templates and instantiated here per
   vector layer (vec_avx512.h, vec_avx2.h, vec_scalar.h) and tile:
   - gemm_tile.inc: the indirect-GEMM micro-kernel (NHWC conv, matmul, and the NCHW GEMM with
     output channels as tile rows), an MR x NR tile kept in registers over every tap and
     channel, then the bias, the post-ops (fuse__post_apply) and one store;
   - few_channels_tile.inc: the few-input-channel NCHW stem kernel;
   - nchw_pack.inc: the NCHW GEMM's input panel packer.
   The drivers (conv_drivers.c) and the kernel table (table.c) use them on every target: the
   scalar instances (the scalar twins) run where no SIMD is compiled in and under
   FUSE_ISA_SCALAR, with tiles sized for a scalar register file, so packing and tiling are
   exercised on every CPU. The op-by-op reference kernels stay the oracle
   (fuse_compile_options.reference_kernels). */


/* The epilogue operands of a micro-kernel call. */
typedef struct fuse__tile_epi {
  const float *bias;     /* at the tile's first column, or NULL */
  const float *row_bias; /* NCHW GEMM and few-channel kernel: one per tile row, or NULL */
  const fuse_post_op *post; /* the step's post-ops, applied in order (fuse__post_apply) */
  int num_post;
  const float *res[FUSE_MAX_POST_OPS]; /* ADD: its residual at the tile's first element (same
                                          strides as y); NULL for other kinds */
  const float *pf; /* meanwhile: weights of a later block to bring into L2, */
  int64_t npf;     /* a cache line per multiply-add step, npf lines (0: none) */
  int64_t ldw;     /* floats from one row of w to the next; 0: NR (a packed panel) */
} fuse__tile_epi;

/* flags of a micro-kernel call */
#define FUSE__ACCUMULATE 1 /* start from the tile in y (a later channel block), not from zero */
#define FUSE__FINISH 2     /* the last block: bias and post-ops, then the store */

/* The NCHW GEMM's input panel: for the output pixels p0 .. p0 + cols - 1 of one image and
   group (xg: its Cg planes), row (c * KH + kh) * KW + kw holds the input each pixel reads at
   that tap, zero in the padding and past cols (nr floats a row). */
typedef struct fuse__nchw_pack_args {
  const float *xg;
  int64_t Cg, H, W, OW, KH, KW, sh, sw, dh, dw, pt, pl, nr;
  int pointwise;
} fuse__nchw_pack_args;
#define FUSE__NCHW_PACK_RUNS 65 /* runs of a block of at most 64 pixels along output rows */

typedef void (*fuse__igemm_fn)(int ntaps, int L, const float *const *a, int64_t aoff,
                               const float *w, float *y, int64_t ldy, int rows, int cols,
                               int flags, const fuse__tile_epi *e);
typedef void (*fuse__few_channels_fn)(int nseg, const int64_t *off, const int *len,
                                      const float *x, const float *wk, float *y, int64_t ldy,
                                      int rows, int cols, const fuse__tile_epi *e);
typedef void (*fuse__nchw_pack_fn)(const fuse__nchw_pack_args *g, int64_t p0, int cols,
                                   float *panel);

/* A template's instance name: name_avx512 / name_avx2 / name_scalar (the argument expanded
   first, so a tile's name may come from a parameter macro). */
#define FUSE__KERNEL_FN(name) FUSE__VEC_FN(name)

/* One instance set per vector layer. Tile parameters: FUSE__GEMM_NAME, FUSE__GEMM_MR,
   FUSE__GEMM_NV (vectors per row), FUSE__GEMM_TILE_WIDE (the epilogue order: 1 one step at a
   time over the whole tile, 0 every step on one accumulator, then its store; each measured
   faster on its instruction set, see gemm_tile.inc). */
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
/* ==== begin src/kernels/vec_avx512.h ==== */
/* The AVX-512 vector layer: 16 floats, __mmask16 lane masks. Every kernel template
   (the .inc files in src/kernels) is written against the FUSE__VEC / FUSE__V_* names below and compiled
   once per layer (vec_scalar.h is the reference semantics of each operation); vec_end.h
   undefines them. The functions carry the target attribute, so a unit built with plain -O2
   still has this instance, taken when fuse_cpu_isa() finds AVX-512 at run time. */
#define FUSE__VEC_ISA FUSE_ISA_AVX512
#define FUSE__VEC_FN(name) name##_avx512 /* the instance's name */
#define FUSE__VEC_TARGET __attribute__((target("avx512f")))
#define FUSE__VEC __m512
#define FUSE__VEC_MASK __mmask16
#define FUSE__VEC_WIDTH 16
#define FUSE__V_ZERO() _mm512_setzero_ps()
#define FUSE__V_SET1(x) _mm512_set1_ps(x)
#define FUSE__V_LOAD(p) _mm512_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm512_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm512_store_ps(p, v) /* p 64-byte aligned */
/* lanes [0, n) (n may be anything: clamped to 0 .. 16) and [a, b) (0 <= a <= b <= 16) */
#define FUSE__V_MASK_FIRST(n)                                                                \
  ((__mmask16)((n) >= 16 ? 0xffffu : (n) <= 0 ? 0u : (1u << (unsigned)(n)) - 1u))
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  ((__mmask16)(((1u << (unsigned)(b)) - 1u) & ~((1u << (unsigned)(a)) - 1u)))
#define FUSE__V_LOAD_MASK(p, m) _mm512_maskz_loadu_ps(m, p) /* zeros outside m */
#define FUSE__V_STORE_MASK(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c) /* a * b + c */
#define FUSE__V_ADD(a, b) _mm512_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm512_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm512_mul_ps(a, b)
/* a > b ? a : b and a < b ? a : b (b where either is NaN); maskz: gcc 12 warns on max_ps */
#define FUSE__V_MAX(a, b) _mm512_maskz_max_ps((__mmask16)-1, a, b)
#define FUSE__V_MIN(a, b) _mm512_maskz_min_ps((__mmask16)-1, a, b)
/* x < t ? t : x and x > t ? t : x (x where either is NaN) */
#define FUSE__V_BELOW(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_LT_OQ), x, t)
#define FUSE__V_ABOVE(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_GT_OQ), x, t)
/* x where x > m (x < m) or x is NaN, else m: max / min that keep a NaN of x */
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_LT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
/* the even (odd) floats of the 32 in a, b: a0 a2 .. a14 b0 .. b14 */
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b)
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b)
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
/* ==== end src/kernels/vec_avx512.h ==== */
#define FUSE__GEMM_NAME fuse__igemm_6x64
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 4
#define FUSE__GEMM_TILE_WIDE 0
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__igemm_8x48
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 3
#define FUSE__GEMM_TILE_WIDE 0
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__igemm_7x48
#define FUSE__GEMM_MR 7
#define FUSE__GEMM_NV 3
#define FUSE__GEMM_TILE_WIDE 0
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__igemm_12x32
#define FUSE__GEMM_MR 12
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_TILE_WIDE 0
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__igemm_7x32
#define FUSE__GEMM_MR 7
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_TILE_WIDE 0
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__igemm_12x16
#define FUSE__GEMM_MR 12
#define FUSE__GEMM_NV 1
#define FUSE__GEMM_TILE_WIDE 0
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__few_channels_8x32
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 2
/* ==== begin src/kernels/few_channels_tile.inc ==== */
/* The few-channel NCHW kernel (the 3-channel stems on NCHW in and out; instantiated by gemm.c
   per vector layer and tile): a tile is MR output channels (rows, their weights broadcast) by
   FUSE__GEMM_NV vectors of consecutive pixels of one output row, read in place from rows of
   the input copied with their padding and split into sw column phases
   (fuse__conv_few_channels). The reduction runs in segments of one channel, kernel row and
   phase each (kernel columns q, q + sw, ...), whose input moves one float a step: x + off[g]
   is the tile's first input at segment g, wk the weights as [step][MR]. The epilogue runs
   one step at a time over the whole tile (it measured faster on the stems). */
#define FUSE__GEMM_TILE_WIDE 1
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int nseg, const int64_t *off,
                                                             const int *len, const float *x,
                                                             const float *wk, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             const fuse__tile_epi *e) {
  const int flags = FUSE__FINISH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV];
  int g, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ZERO();
  }
  for (g = 0; g < nseg; g++) {
    const float *xs = x + off[g];
    for (k = len[g]; k > 0; k--, xs++, wk += FUSE__GEMM_MR) {
      FUSE__VEC xv[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) xv[j] = FUSE__V_LOAD(xs + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC wr = FUSE__V_SET1(wk[r]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(wr, xv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/few_channels_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__few_channels_8x16
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 1
/* ==== begin src/kernels/few_channels_tile.inc ==== */
/* The few-channel NCHW kernel (the 3-channel stems on NCHW in and out; instantiated by gemm.c
   per vector layer and tile): a tile is MR output channels (rows, their weights broadcast) by
   FUSE__GEMM_NV vectors of consecutive pixels of one output row, read in place from rows of
   the input copied with their padding and split into sw column phases
   (fuse__conv_few_channels). The reduction runs in segments of one channel, kernel row and
   phase each (kernel columns q, q + sw, ...), whose input moves one float a step: x + off[g]
   is the tile's first input at segment g, wk the weights as [step][MR]. The epilogue runs
   one step at a time over the whole tile (it measured faster on the stems). */
#define FUSE__GEMM_TILE_WIDE 1
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int nseg, const int64_t *off,
                                                             const int *len, const float *x,
                                                             const float *wk, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             const fuse__tile_epi *e) {
  const int flags = FUSE__FINISH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV];
  int g, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ZERO();
  }
  for (g = 0; g < nseg; g++) {
    const float *xs = x + off[g];
    for (k = len[g]; k > 0; k--, xs++, wk += FUSE__GEMM_MR) {
      FUSE__VEC xv[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) xv[j] = FUSE__V_LOAD(xs + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC wr = FUSE__V_SET1(wk[r]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(wr, xv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/few_channels_tile.inc ==== */
/* ==== begin src/kernels/nchw_pack.inc ==== */
/* The NCHW GEMM's input panel packer (instantiated by gemm.c per vector layer): fills the
   panel of the output pixels p0 .. p0 + ncols - 1 (fuse__nchw_pack_args). Runs of pixels
   along an output row are vector copies when the stride is 1, two loads and their even
   floats when it is 2, and a float at a time otherwise. */

/* dst[0 .. n) = 0 */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__nchw_pack_zero)(float *dst, int64_t n) {
  int64_t i;
  for (i = 0; i < n; i += FUSE__VEC_WIDTH)
    FUSE__V_STORE_MASK(dst + i, FUSE__V_MASK_FIRST(n - i), FUSE__V_ZERO());
}

/* dst[0 .. n) = src[0 .. n) */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__nchw_pack_copy)(float *dst,
                                                                     const float *src,
                                                                     int64_t n) {
  int64_t i;
  for (i = 0; i < n; i += FUSE__VEC_WIDTH) {
    FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(n - i);
    FUSE__V_STORE_MASK(dst + i, m, FUSE__V_LOAD_MASK(src + i, m));
  }
}

/* dst[i] = src[2 i] for i < n: the even floats of two masked loads (none read past
   src[2 n - 2]) */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__nchw_pack_evens)(float *dst,
                                                                      const float *src,
                                                                      int64_t n) {
  int64_t i;
  for (i = 0; i < n; i += FUSE__VEC_WIDTH) {
    int64_t left = n - i < FUSE__VEC_WIDTH ? n - i : FUSE__VEC_WIDTH, read = 2 * left - 1;
    FUSE__VEC lo = FUSE__V_LOAD_MASK(src + 2 * i, FUSE__V_MASK_FIRST(read));
    FUSE__VEC hi = FUSE__V_LOAD_MASK(src + 2 * i + FUSE__VEC_WIDTH,
                                     FUSE__V_MASK_FIRST(read - FUSE__VEC_WIDTH));
    FUSE__V_STORE_MASK(dst + i, FUSE__V_MASK_FIRST(left), FUSE__V_EVENS(lo, hi));
  }
}

FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__nchw_pack)(const fuse__nchw_pack_args *g,
                                                          int64_t p0, int ncols, float *panel) {
  int64_t nr = g->nr, HW = g->H * g->W, c, kh, kw, p = p0, jj = 0;
  int64_t run_at[FUSE__NCHW_PACK_RUNS], run_len[FUSE__NCHW_PACK_RUNS];
  int64_t run_ih[FUSE__NCHW_PACK_RUNS], run_iw[FUSE__NCHW_PACK_RUNS];
  int64_t run_e0[FUSE__NCHW_PACK_RUNS], run_e1[FUSE__NCHW_PACK_RUNS];
  int runs = 0, k;
  if (g->pointwise) { /* input pixel = output pixel */
    for (c = 0; c < g->Cg; c++) {
      FUSE__VEC_FN(fuse__nchw_pack_copy)(panel + c * nr, g->xg + c * HW + p0, ncols);
      FUSE__VEC_FN(fuse__nchw_pack_zero)(panel + c * nr + ncols, nr - ncols);
    }
    return;
  }
  while (jj < ncols && runs < FUSE__NCHW_PACK_RUNS) { /* the runs, once per block */
    int64_t oh = p / g->OW, ow = p % g->OW, seg = g->OW - ow;
    if (seg > ncols - jj) seg = ncols - jj;
    run_at[runs] = jj, run_len[runs] = seg;
    run_ih[runs] = oh * g->sh - g->pt, run_iw[runs] = ow * g->sw - g->pl;
    runs++, jj += seg, p += seg;
  }
  for (kw = 0; kw < g->KW; kw++) {
    for (k = 0; k < runs; k++) { /* e0 .. e1: the pixels whose input column is in [0, W) */
      int64_t iw0 = run_iw[k] + kw * g->dw;
      run_e0[k] = iw0 >= 0 ? 0 : (-iw0 + g->sw - 1) / g->sw;
      run_e1[k] = iw0 <= g->W - 1 ? (g->W - 1 - iw0) / g->sw + 1 : 0;
      if (run_e1[k] > run_len[k]) run_e1[k] = run_len[k];
      if (run_e0[k] > run_e1[k]) run_e0[k] = run_e1[k];
    }
    for (c = 0; c < g->Cg; c++)
      for (kh = 0; kh < g->KH; kh++) {
        float *dst = panel + ((c * g->KH + kh) * g->KW + kw) * nr;
        for (k = 0; k < runs; k++) {
          int64_t seg = run_len[k], ih = run_ih[k] + kh * g->dh;
          int64_t e0 = run_e0[k], e1 = run_e1[k], e;
          float *d = dst + run_at[k];
          if (ih < 0 || ih >= g->H) e0 = e1 = 0;
          FUSE__VEC_FN(fuse__nchw_pack_zero)(d, e0);
          if (e1 > e0) {
            const float *xr = g->xg + c * HW + ih * g->W + run_iw[k] + kw * g->dw;
            if (g->sw == 1)
              FUSE__VEC_FN(fuse__nchw_pack_copy)(d + e0, xr + e0, e1 - e0);
            else if (g->sw == 2)
              FUSE__VEC_FN(fuse__nchw_pack_evens)(d + e0, xr + 2 * e0, e1 - e0);
            else
              for (e = e0; e < e1; e++) d[e] = xr[e * g->sw];
          }
          FUSE__VEC_FN(fuse__nchw_pack_zero)(d + e1, seg - e1);
        }
        FUSE__VEC_FN(fuse__nchw_pack_zero)(dst + ncols, nr - ncols);
      }
  }
}
/* ==== end src/kernels/nchw_pack.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
#endif

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* ==== begin src/kernels/vec_avx2.h ==== */
/* The AVX2 + FMA vector layer: 8 floats, lane masks as __m256i (all ones = lane on). The same
   operations as vec_avx512.h; see there. */
#define FUSE__VEC_ISA FUSE_ISA_AVX2
#define FUSE__VEC_FN(name) name##_avx2
#define FUSE__VEC_TARGET __attribute__((target("avx2,fma")))
#define FUSE__VEC __m256
#define FUSE__VEC_MASK __m256i
#define FUSE__VEC_WIDTH 8
#define FUSE__V_ZERO() _mm256_setzero_ps()
#define FUSE__V_SET1(x) _mm256_set1_ps(x)
#define FUSE__V_LOAD(p) _mm256_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm256_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm256_store_ps(p, v)
#define FUSE__V_LANES _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define FUSE__V_MASK_FIRST(n)                                                                \
  _mm256_cmpgt_epi32(_mm256_set1_epi32((int)((n) >= 8 ? 8 : (n) <= 0 ? 0 : (n))), FUSE__V_LANES)
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)(a)), FUSE__V_LANES),        \
                      _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(b)), FUSE__V_LANES))
#define FUSE__V_LOAD_MASK(p, m) _mm256_maskload_ps(p, m)
#define FUSE__V_STORE_MASK(p, m, v) _mm256_maskstore_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FUSE__V_ADD(a, b) _mm256_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm256_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm256_mul_ps(a, b)
#define FUSE__V_MAX(a, b) _mm256_max_ps(a, b)
#define FUSE__V_MIN(a, b) _mm256_min_ps(a, b)
#define FUSE__V_BELOW(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_LT_OQ))
#define FUSE__V_ABOVE(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_GT_OQ))
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_LT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8))
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8))
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
/* ==== end src/kernels/vec_avx2.h ==== */
#define FUSE__GEMM_NAME fuse__igemm_6x16
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_TILE_WIDE 1
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__igemm_12x8
#define FUSE__GEMM_MR 12
#define FUSE__GEMM_NV 1
#define FUSE__GEMM_TILE_WIDE 1
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__few_channels_6x16
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 2
/* ==== begin src/kernels/few_channels_tile.inc ==== */
/* The few-channel NCHW kernel (the 3-channel stems on NCHW in and out; instantiated by gemm.c
   per vector layer and tile): a tile is MR output channels (rows, their weights broadcast) by
   FUSE__GEMM_NV vectors of consecutive pixels of one output row, read in place from rows of
   the input copied with their padding and split into sw column phases
   (fuse__conv_few_channels). The reduction runs in segments of one channel, kernel row and
   phase each (kernel columns q, q + sw, ...), whose input moves one float a step: x + off[g]
   is the tile's first input at segment g, wk the weights as [step][MR]. The epilogue runs
   one step at a time over the whole tile (it measured faster on the stems). */
#define FUSE__GEMM_TILE_WIDE 1
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int nseg, const int64_t *off,
                                                             const int *len, const float *x,
                                                             const float *wk, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             const fuse__tile_epi *e) {
  const int flags = FUSE__FINISH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV];
  int g, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ZERO();
  }
  for (g = 0; g < nseg; g++) {
    const float *xs = x + off[g];
    for (k = len[g]; k > 0; k--, xs++, wk += FUSE__GEMM_MR) {
      FUSE__VEC xv[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) xv[j] = FUSE__V_LOAD(xs + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC wr = FUSE__V_SET1(wk[r]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(wr, xv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/few_channels_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__few_channels_6x8
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 1
/* ==== begin src/kernels/few_channels_tile.inc ==== */
/* The few-channel NCHW kernel (the 3-channel stems on NCHW in and out; instantiated by gemm.c
   per vector layer and tile): a tile is MR output channels (rows, their weights broadcast) by
   FUSE__GEMM_NV vectors of consecutive pixels of one output row, read in place from rows of
   the input copied with their padding and split into sw column phases
   (fuse__conv_few_channels). The reduction runs in segments of one channel, kernel row and
   phase each (kernel columns q, q + sw, ...), whose input moves one float a step: x + off[g]
   is the tile's first input at segment g, wk the weights as [step][MR]. The epilogue runs
   one step at a time over the whole tile (it measured faster on the stems). */
#define FUSE__GEMM_TILE_WIDE 1
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int nseg, const int64_t *off,
                                                             const int *len, const float *x,
                                                             const float *wk, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             const fuse__tile_epi *e) {
  const int flags = FUSE__FINISH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV];
  int g, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ZERO();
  }
  for (g = 0; g < nseg; g++) {
    const float *xs = x + off[g];
    for (k = len[g]; k > 0; k--, xs++, wk += FUSE__GEMM_MR) {
      FUSE__VEC xv[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) xv[j] = FUSE__V_LOAD(xs + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC wr = FUSE__V_SET1(wk[r]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(wr, xv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/few_channels_tile.inc ==== */
/* ==== begin src/kernels/nchw_pack.inc ==== */
/* The NCHW GEMM's input panel packer (instantiated by gemm.c per vector layer): fills the
   panel of the output pixels p0 .. p0 + ncols - 1 (fuse__nchw_pack_args). Runs of pixels
   along an output row are vector copies when the stride is 1, two loads and their even
   floats when it is 2, and a float at a time otherwise. */

/* dst[0 .. n) = 0 */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__nchw_pack_zero)(float *dst, int64_t n) {
  int64_t i;
  for (i = 0; i < n; i += FUSE__VEC_WIDTH)
    FUSE__V_STORE_MASK(dst + i, FUSE__V_MASK_FIRST(n - i), FUSE__V_ZERO());
}

/* dst[0 .. n) = src[0 .. n) */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__nchw_pack_copy)(float *dst,
                                                                     const float *src,
                                                                     int64_t n) {
  int64_t i;
  for (i = 0; i < n; i += FUSE__VEC_WIDTH) {
    FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(n - i);
    FUSE__V_STORE_MASK(dst + i, m, FUSE__V_LOAD_MASK(src + i, m));
  }
}

/* dst[i] = src[2 i] for i < n: the even floats of two masked loads (none read past
   src[2 n - 2]) */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__nchw_pack_evens)(float *dst,
                                                                      const float *src,
                                                                      int64_t n) {
  int64_t i;
  for (i = 0; i < n; i += FUSE__VEC_WIDTH) {
    int64_t left = n - i < FUSE__VEC_WIDTH ? n - i : FUSE__VEC_WIDTH, read = 2 * left - 1;
    FUSE__VEC lo = FUSE__V_LOAD_MASK(src + 2 * i, FUSE__V_MASK_FIRST(read));
    FUSE__VEC hi = FUSE__V_LOAD_MASK(src + 2 * i + FUSE__VEC_WIDTH,
                                     FUSE__V_MASK_FIRST(read - FUSE__VEC_WIDTH));
    FUSE__V_STORE_MASK(dst + i, FUSE__V_MASK_FIRST(left), FUSE__V_EVENS(lo, hi));
  }
}

FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__nchw_pack)(const fuse__nchw_pack_args *g,
                                                          int64_t p0, int ncols, float *panel) {
  int64_t nr = g->nr, HW = g->H * g->W, c, kh, kw, p = p0, jj = 0;
  int64_t run_at[FUSE__NCHW_PACK_RUNS], run_len[FUSE__NCHW_PACK_RUNS];
  int64_t run_ih[FUSE__NCHW_PACK_RUNS], run_iw[FUSE__NCHW_PACK_RUNS];
  int64_t run_e0[FUSE__NCHW_PACK_RUNS], run_e1[FUSE__NCHW_PACK_RUNS];
  int runs = 0, k;
  if (g->pointwise) { /* input pixel = output pixel */
    for (c = 0; c < g->Cg; c++) {
      FUSE__VEC_FN(fuse__nchw_pack_copy)(panel + c * nr, g->xg + c * HW + p0, ncols);
      FUSE__VEC_FN(fuse__nchw_pack_zero)(panel + c * nr + ncols, nr - ncols);
    }
    return;
  }
  while (jj < ncols && runs < FUSE__NCHW_PACK_RUNS) { /* the runs, once per block */
    int64_t oh = p / g->OW, ow = p % g->OW, seg = g->OW - ow;
    if (seg > ncols - jj) seg = ncols - jj;
    run_at[runs] = jj, run_len[runs] = seg;
    run_ih[runs] = oh * g->sh - g->pt, run_iw[runs] = ow * g->sw - g->pl;
    runs++, jj += seg, p += seg;
  }
  for (kw = 0; kw < g->KW; kw++) {
    for (k = 0; k < runs; k++) { /* e0 .. e1: the pixels whose input column is in [0, W) */
      int64_t iw0 = run_iw[k] + kw * g->dw;
      run_e0[k] = iw0 >= 0 ? 0 : (-iw0 + g->sw - 1) / g->sw;
      run_e1[k] = iw0 <= g->W - 1 ? (g->W - 1 - iw0) / g->sw + 1 : 0;
      if (run_e1[k] > run_len[k]) run_e1[k] = run_len[k];
      if (run_e0[k] > run_e1[k]) run_e0[k] = run_e1[k];
    }
    for (c = 0; c < g->Cg; c++)
      for (kh = 0; kh < g->KH; kh++) {
        float *dst = panel + ((c * g->KH + kh) * g->KW + kw) * nr;
        for (k = 0; k < runs; k++) {
          int64_t seg = run_len[k], ih = run_ih[k] + kh * g->dh;
          int64_t e0 = run_e0[k], e1 = run_e1[k], e;
          float *d = dst + run_at[k];
          if (ih < 0 || ih >= g->H) e0 = e1 = 0;
          FUSE__VEC_FN(fuse__nchw_pack_zero)(d, e0);
          if (e1 > e0) {
            const float *xr = g->xg + c * HW + ih * g->W + run_iw[k] + kw * g->dw;
            if (g->sw == 1)
              FUSE__VEC_FN(fuse__nchw_pack_copy)(d + e0, xr + e0, e1 - e0);
            else if (g->sw == 2)
              FUSE__VEC_FN(fuse__nchw_pack_evens)(d + e0, xr + 2 * e0, e1 - e0);
            else
              for (e = e0; e < e1; e++) d[e] = xr[e * g->sw];
          }
          FUSE__VEC_FN(fuse__nchw_pack_zero)(d + e1, seg - e1);
        }
        FUSE__VEC_FN(fuse__nchw_pack_zero)(dst + ncols, nr - ncols);
      }
  }
}
/* ==== end src/kernels/nchw_pack.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
#endif

/* The scalar twins. A scalar tile's accumulators, its NR weights and the broadcast input
   must fit the scalar floating-point registers: 32 on aarch64 and on armhf's VFP (s0-s31).
   4x4 holds 16 accumulators (21 registers in all), the widest square tile that fits; 4x2 is
   its narrow last column block (mixed column blocks, as 48 + 32 on AVX-512); 8x2 has the
   same 16 accumulators for GEMMs of few columns. The few-channel kernel's two tiles are one
   and two pixels by 4 channels. (x86-64's 16 SSE registers spill on 4x4: scalar is only the
   test path there.) */
/* ==== begin src/kernels/vec_scalar.h ==== */
/* The scalar vector layer: one float, a lane mask is 0 or 1. It gives every kernel template a
   plain-C instance (the scalar twin) with the same tiles, packing and drivers as the SIMD
   ones: the fallback where no SIMD is compiled in (ARM today, FUSE_NO_SIMD), the oracle the
   SIMD instances are tested against, and the definition of what each operation means
   (NaN handling included; the SIMD layers match it lane by lane). */
#define FUSE__VEC_ISA FUSE_ISA_SCALAR
#define FUSE__VEC_FN(name) name##_scalar
#define FUSE__VEC_TARGET
#define FUSE__VEC float
#define FUSE__VEC_MASK int
#define FUSE__VEC_WIDTH 1
#define FUSE__V_ZERO() 0.0f
#define FUSE__V_SET1(x) ((float)(x))
#define FUSE__V_LOAD(p) (*(p))
#define FUSE__V_STORE(p, v) (*(p) = (v))
#define FUSE__V_STORE_ALIGNED(p, v) (*(p) = (v))
#define FUSE__V_MASK_FIRST(n) ((n) > 0)
#define FUSE__V_MASK_RANGE(a, b) ((a) <= 0 && (b) > 0)
#define FUSE__V_LOAD_MASK(p, m) ((m) ? *(p) : 0.0f)
#define FUSE__V_STORE_MASK(p, m, v) ((m) ? (void)(*(p) = (v)) : (void)0)
#define FUSE__V_FMA(a, b, c) ((a) * (b) + (c))
#define FUSE__V_ADD(a, b) ((a) + (b))
#define FUSE__V_SUB(a, b) ((a) - (b))
#define FUSE__V_MUL(a, b) ((a) * (b))
#define FUSE__V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FUSE__V_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FUSE__V_BELOW(x, t) ((x) < (t) ? (t) : (x))
#define FUSE__V_ABOVE(x, t) ((x) > (t) ? (t) : (x))
#define FUSE__V_MAX_NAN(x, m) ((x) > (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_MIN_NAN(x, m) ((x) < (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_EVENS(a, b) ((void)(b), (a))
#define FUSE__V_ODDS(a, b) ((void)(a), (b))
#define FUSE__V_PREFETCH_L2(p) ((void)(p))
/* ==== end src/kernels/vec_scalar.h ==== */
#define FUSE__GEMM_NAME fuse__igemm_4x4
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 4
#define FUSE__GEMM_TILE_WIDE 1
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__igemm_4x2
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_TILE_WIDE 1
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__igemm_8x2
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_TILE_WIDE 1
/* ==== begin src/kernels/gemm_tile.inc ==== */
/* The indirect-GEMM micro-kernel (instantiated by gemm.c per vector layer and tile): an
   MR x NR tile, NR = FUSE__GEMM_NV vectors, kept in registers over every tap and channel.
   a: ntaps x MR row pointers (+ aoff floats) into the input or a zero row; w: ntaps * L rows
   of NR weights, ldw floats apart (e->ldw, 0: a packed panel of NR); y: the tile's first
   element, ldy floats between rows; rows / cols: the valid part of the tile. With
   FUSE__ACCUMULATE the tile starts from y (a later channel block); with FUSE__FINISH the
   epilogue (tile_epilogue.inc) runs before the one store. While it computes, the kernel
   brings e->npf lines from e->pf into L2, one per multiply-add step. */
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int ntaps, int L,
                                                             const float *const *a, int64_t aoff,
                                                             const float *w, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             int flags, const fuse__tile_epi *e) {
  const float *pf = e->pf;
  int64_t npf = e->npf, ldw = e->ldw ? e->ldw : FUSE__GEMM_NV * FUSE__VEC_WIDTH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV]; /* the valid columns of each vector */
  int t, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      c[r][j] = (flags & FUSE__ACCUMULATE) && r < rows
                    ? FUSE__V_LOAD_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j])
                    : FUSE__V_ZERO();
  }
  for (t = 0; t < ntaps; t++) {
    const float *p[FUSE__GEMM_MR]; /* the tap's input row of each pixel */
    FUSE__UNROLL
    for (r = 0; r < FUSE__GEMM_MR; r++) p[r] = a[t * FUSE__GEMM_MR + r] + aoff;
    for (k = 0; k < L; k++, w += ldw) {
      FUSE__VEC wv[FUSE__GEMM_NV];
      if (npf > 0) FUSE__V_PREFETCH_L2(pf), pf += 16, npf--;
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) wv[j] = FUSE__V_LOAD(w + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC x = FUSE__V_SET1(p[r][k]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(x, wv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/gemm_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__few_channels_4x2
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 2
/* ==== begin src/kernels/few_channels_tile.inc ==== */
/* The few-channel NCHW kernel (the 3-channel stems on NCHW in and out; instantiated by gemm.c
   per vector layer and tile): a tile is MR output channels (rows, their weights broadcast) by
   FUSE__GEMM_NV vectors of consecutive pixels of one output row, read in place from rows of
   the input copied with their padding and split into sw column phases
   (fuse__conv_few_channels). The reduction runs in segments of one channel, kernel row and
   phase each (kernel columns q, q + sw, ...), whose input moves one float a step: x + off[g]
   is the tile's first input at segment g, wk the weights as [step][MR]. The epilogue runs
   one step at a time over the whole tile (it measured faster on the stems). */
#define FUSE__GEMM_TILE_WIDE 1
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int nseg, const int64_t *off,
                                                             const int *len, const float *x,
                                                             const float *wk, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             const fuse__tile_epi *e) {
  const int flags = FUSE__FINISH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV];
  int g, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ZERO();
  }
  for (g = 0; g < nseg; g++) {
    const float *xs = x + off[g];
    for (k = len[g]; k > 0; k--, xs++, wk += FUSE__GEMM_MR) {
      FUSE__VEC xv[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) xv[j] = FUSE__V_LOAD(xs + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC wr = FUSE__V_SET1(wk[r]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(wr, xv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/few_channels_tile.inc ==== */
#define FUSE__GEMM_NAME fuse__few_channels_4x1
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 1
/* ==== begin src/kernels/few_channels_tile.inc ==== */
/* The few-channel NCHW kernel (the 3-channel stems on NCHW in and out; instantiated by gemm.c
   per vector layer and tile): a tile is MR output channels (rows, their weights broadcast) by
   FUSE__GEMM_NV vectors of consecutive pixels of one output row, read in place from rows of
   the input copied with their padding and split into sw column phases
   (fuse__conv_few_channels). The reduction runs in segments of one channel, kernel row and
   phase each (kernel columns q, q + sw, ...), whose input moves one float a step: x + off[g]
   is the tile's first input at segment g, wk the weights as [step][MR]. The epilogue runs
   one step at a time over the whole tile (it measured faster on the stems). */
#define FUSE__GEMM_TILE_WIDE 1
FUSE__VEC_TARGET static void FUSE__KERNEL_FN(FUSE__GEMM_NAME)(int nseg, const int64_t *off,
                                                             const int *len, const float *x,
                                                             const float *wk, float *y,
                                                             int64_t ldy, int rows, int cols,
                                                             const fuse__tile_epi *e) {
  const int flags = FUSE__FINISH;
  FUSE__VEC c[FUSE__GEMM_MR][FUSE__GEMM_NV];
  FUSE__VEC_MASK m[FUSE__GEMM_NV];
  int g, k, r, j;
  FUSE__UNROLL
  for (j = 0; j < FUSE__GEMM_NV; j++) m[j] = FUSE__V_MASK_FIRST(cols - j * FUSE__VEC_WIDTH);
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ZERO();
  }
  for (g = 0; g < nseg; g++) {
    const float *xs = x + off[g];
    for (k = len[g]; k > 0; k--, xs++, wk += FUSE__GEMM_MR) {
      FUSE__VEC xv[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++) xv[j] = FUSE__V_LOAD(xs + j * FUSE__VEC_WIDTH);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__VEC wr = FUSE__V_SET1(wk[r]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_FMA(wr, xv[j], c[r][j]);
      }
    }
  }
/* ==== begin src/kernels/tile_epilogue.inc ==== */
/* The end of a GEMM-family micro-kernel (pasted into the body of gemm_tile.inc and
   few_channels_tile.inc): with FUSE__FINISH the bias (per column, or per row in the NCHW
   kernels) and the post-ops through fuse__post_apply, then the one store of each valid row.
   Reads c[MR][NV], m[NV], rows, flags, e, y, ldy. Two orders, each measured faster on some
   kernel: FUSE__GEMM_TILE_WIDE one step at a time over the whole tile (each bound broadcast
   once: AVX2, short reductions, the few-channel stems), else every step on one accumulator,
   then its store (AVX-512's GEMM on short reductions whose output goes to memory). */
#if FUSE__GEMM_TILE_WIDE
  if (flags & FUSE__FINISH) {
    int q;
    if (e->bias) {
      FUSE__VEC b[FUSE__GEMM_NV];
      FUSE__UNROLL
      for (j = 0; j < FUSE__GEMM_NV; j++)
        b[j] = FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]);
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b[j]);
      }
    } else if (e->row_bias) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) { /* rows past `rows` have no bias to read */
        FUSE__VEC b = FUSE__V_SET1(e->row_bias[r < rows ? r : 0]);
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++) c[r][j] = FUSE__V_ADD(c[r][j], b);
      }
    }
    for (q = 0; q < e->num_post; q++) {
      FUSE__UNROLL
      for (r = 0; r < FUSE__GEMM_MR; r++) {
        if (r >= rows) continue; /* not stored; a residual has no row there to read */
        FUSE__UNROLL
        for (j = 0; j < FUSE__GEMM_NV; j++)
          c[r][j] = FUSE__VEC_FN(fuse__post_apply)(
              c[r][j], &e->post[q], e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++)
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], c[r][j]);
  }
#else
  FUSE__UNROLL
  for (r = 0; r < FUSE__GEMM_MR; r++) {
    if (r >= rows) continue;
    FUSE__UNROLL
    for (j = 0; j < FUSE__GEMM_NV; j++) {
      FUSE__VEC v = c[r][j];
      if (flags & FUSE__FINISH) {
        int q;
        if (e->bias) v = FUSE__V_ADD(v, FUSE__V_LOAD_MASK(e->bias + j * FUSE__VEC_WIDTH, m[j]));
        else if (e->row_bias) v = FUSE__V_ADD(v, FUSE__V_SET1(e->row_bias[r]));
        for (q = 0; q < e->num_post; q++)
          v = FUSE__VEC_FN(fuse__post_apply)(
              v, &e->post[q],
              e->res[q] ? e->res[q] + r * ldy + j * FUSE__VEC_WIDTH : NULL,
              m[j]);
      }
      FUSE__V_STORE_MASK(y + r * ldy + j * FUSE__VEC_WIDTH, m[j], v);
    }
  }
#endif
/* ==== end src/kernels/tile_epilogue.inc ==== */
}
#undef FUSE__GEMM_NAME
#undef FUSE__GEMM_MR
#undef FUSE__GEMM_NV
#undef FUSE__GEMM_TILE_WIDE
/* ==== end src/kernels/few_channels_tile.inc ==== */
/* ==== begin src/kernels/nchw_pack.inc ==== */
/* The NCHW GEMM's input panel packer (instantiated by gemm.c per vector layer): fills the
   panel of the output pixels p0 .. p0 + ncols - 1 (fuse__nchw_pack_args). Runs of pixels
   along an output row are vector copies when the stride is 1, two loads and their even
   floats when it is 2, and a float at a time otherwise. */

/* dst[0 .. n) = 0 */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__nchw_pack_zero)(float *dst, int64_t n) {
  int64_t i;
  for (i = 0; i < n; i += FUSE__VEC_WIDTH)
    FUSE__V_STORE_MASK(dst + i, FUSE__V_MASK_FIRST(n - i), FUSE__V_ZERO());
}

/* dst[0 .. n) = src[0 .. n) */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__nchw_pack_copy)(float *dst,
                                                                     const float *src,
                                                                     int64_t n) {
  int64_t i;
  for (i = 0; i < n; i += FUSE__VEC_WIDTH) {
    FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(n - i);
    FUSE__V_STORE_MASK(dst + i, m, FUSE__V_LOAD_MASK(src + i, m));
  }
}

/* dst[i] = src[2 i] for i < n: the even floats of two masked loads (none read past
   src[2 n - 2]) */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__nchw_pack_evens)(float *dst,
                                                                      const float *src,
                                                                      int64_t n) {
  int64_t i;
  for (i = 0; i < n; i += FUSE__VEC_WIDTH) {
    int64_t left = n - i < FUSE__VEC_WIDTH ? n - i : FUSE__VEC_WIDTH, read = 2 * left - 1;
    FUSE__VEC lo = FUSE__V_LOAD_MASK(src + 2 * i, FUSE__V_MASK_FIRST(read));
    FUSE__VEC hi = FUSE__V_LOAD_MASK(src + 2 * i + FUSE__VEC_WIDTH,
                                     FUSE__V_MASK_FIRST(read - FUSE__VEC_WIDTH));
    FUSE__V_STORE_MASK(dst + i, FUSE__V_MASK_FIRST(left), FUSE__V_EVENS(lo, hi));
  }
}

FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__nchw_pack)(const fuse__nchw_pack_args *g,
                                                          int64_t p0, int ncols, float *panel) {
  int64_t nr = g->nr, HW = g->H * g->W, c, kh, kw, p = p0, jj = 0;
  int64_t run_at[FUSE__NCHW_PACK_RUNS], run_len[FUSE__NCHW_PACK_RUNS];
  int64_t run_ih[FUSE__NCHW_PACK_RUNS], run_iw[FUSE__NCHW_PACK_RUNS];
  int64_t run_e0[FUSE__NCHW_PACK_RUNS], run_e1[FUSE__NCHW_PACK_RUNS];
  int runs = 0, k;
  if (g->pointwise) { /* input pixel = output pixel */
    for (c = 0; c < g->Cg; c++) {
      FUSE__VEC_FN(fuse__nchw_pack_copy)(panel + c * nr, g->xg + c * HW + p0, ncols);
      FUSE__VEC_FN(fuse__nchw_pack_zero)(panel + c * nr + ncols, nr - ncols);
    }
    return;
  }
  while (jj < ncols && runs < FUSE__NCHW_PACK_RUNS) { /* the runs, once per block */
    int64_t oh = p / g->OW, ow = p % g->OW, seg = g->OW - ow;
    if (seg > ncols - jj) seg = ncols - jj;
    run_at[runs] = jj, run_len[runs] = seg;
    run_ih[runs] = oh * g->sh - g->pt, run_iw[runs] = ow * g->sw - g->pl;
    runs++, jj += seg, p += seg;
  }
  for (kw = 0; kw < g->KW; kw++) {
    for (k = 0; k < runs; k++) { /* e0 .. e1: the pixels whose input column is in [0, W) */
      int64_t iw0 = run_iw[k] + kw * g->dw;
      run_e0[k] = iw0 >= 0 ? 0 : (-iw0 + g->sw - 1) / g->sw;
      run_e1[k] = iw0 <= g->W - 1 ? (g->W - 1 - iw0) / g->sw + 1 : 0;
      if (run_e1[k] > run_len[k]) run_e1[k] = run_len[k];
      if (run_e0[k] > run_e1[k]) run_e0[k] = run_e1[k];
    }
    for (c = 0; c < g->Cg; c++)
      for (kh = 0; kh < g->KH; kh++) {
        float *dst = panel + ((c * g->KH + kh) * g->KW + kw) * nr;
        for (k = 0; k < runs; k++) {
          int64_t seg = run_len[k], ih = run_ih[k] + kh * g->dh;
          int64_t e0 = run_e0[k], e1 = run_e1[k], e;
          float *d = dst + run_at[k];
          if (ih < 0 || ih >= g->H) e0 = e1 = 0;
          FUSE__VEC_FN(fuse__nchw_pack_zero)(d, e0);
          if (e1 > e0) {
            const float *xr = g->xg + c * HW + ih * g->W + run_iw[k] + kw * g->dw;
            if (g->sw == 1)
              FUSE__VEC_FN(fuse__nchw_pack_copy)(d + e0, xr + e0, e1 - e0);
            else if (g->sw == 2)
              FUSE__VEC_FN(fuse__nchw_pack_evens)(d + e0, xr + 2 * e0, e1 - e0);
            else
              for (e = e0; e < e1; e++) d[e] = xr[e * g->sw];
          }
          FUSE__VEC_FN(fuse__nchw_pack_zero)(d + e1, seg - e1);
        }
        FUSE__VEC_FN(fuse__nchw_pack_zero)(dst + ncols, nr - ncols);
      }
  }
}
/* ==== end src/kernels/nchw_pack.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
#undef FUSE__KERNEL_FN
/* ==== end src/kernels/gemm.c ==== */
/* ==== begin src/kernels/depthwise.c ==== */
/* ------------------------------------------------------------- depthwise conv -- */
/* Depthwise conv has its own kernels, vectorized over channels on NHWC (depthwise_nhwc.inc)
   and along output rows on NCHW (depthwise_nchw.inc). Both are plain-C templates written
   against the vector layer and instantiated below once per layer: fuse__dw_avx512 /
   fuse__dw_avx2 / fuse__dw_scalar, fuse__dwc_*, fuse__dwc_row_* (the NCHW band buffer's row
   builder, which the few-channel NCHW kernel shares). */

struct fuse__dw_args {
  const float *x, *w, *bias; /* w: [KH*KW][Cp], Cp = C rounded up to 16 */
  float *y;
  const fuse_post_op *post; /* the step's post-ops, in order */
  int num_post;
  const float *residual[FUSE_MAX_POST_OPS]; /* ADD: its operand (laid out as y); else NULL */
  int KH, KW;
  int64_t C, Cp, H, W, OH, OW, sh, sw, pt, pl, dh, dw;
  const float *zeros;     /* NCHW: the plan's zero row, W + 64 floats at least */
  unsigned char *scratch; /* NCHW: the chunk's band buffer is at scratch + slot * chunk */
  size_t slot;
  /* NHWC: output rows r0 .. r1; NCHW: planes, buf the chunk's scratch */
  void (*fn)(const fuse__dw_args *d, void *buf, int64_t r0, int64_t r1);
};

/* The NCHW kernel's band buffer (see depthwise_nchw.inc): its tile shape and sizes for a
   vector of vw floats. */
#define FUSE__DWC_BUF 6144 /* floats of a band buffer: it and the band's output stay in L1 */
typedef struct fuse__dwc_geom {
  int64_t nb, rb; /* a tile: rb output rows x nb vectors */
  int64_t wq;     /* floats of a phase row (a multiple of 16: rows stay 64-byte aligned) */
  int64_t rs;     /* floats of a buffer row: sw phase rows */
  int64_t band;   /* output rows per band, a multiple of 8 */
  int64_t rows;   /* buffer rows of a band */
} fuse__dwc_geom;

static void fuse__dwc_geometry(int64_t vw, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                               int64_t sh, int64_t sw, int64_t dh, int64_t dw, fuse__dwc_geom *g) {
  int64_t nv = (OW + vw - 1) / vw, span = (KH - 1) * dh + 1, ncb, band;
  g->nb = nv >= 8 ? 8 : nv >= 4 ? 4 : nv >= 2 ? 2 : 1;
  g->rb = 8 / g->nb;
  ncb = (nv + g->nb - 1) / g->nb; /* column tiles of a row; the last may overhang OW */
  g->wq = (ncb * g->nb * vw + (KW - 1) * dw / sw + 15) / 16 * 16 + 32; /* + a row's tail */
  g->rs = sw * g->wq;
  band = FUSE__DWC_BUF / g->rs < span + sh ? 1 : (FUSE__DWC_BUF / g->rs - span) / sh + 1;
  band = band < 8 ? 8 : band / 8 * 8; /* whole tiles of every kind: 8, 4, 2 or 1 rows */
  if (band > (OH + 7) / 8 * 8) band = (OH + 7) / 8 * 8;
  g->band = band;
  g->rows = (band - 1) * sh + span;
}

/* Bytes of an NCHW depthwise step's scratch, the most any vector width needs (16, 8 and the
   scalar twin's 1): the tap offsets, then the band buffer. */
static size_t fuse__dwc_scratch(int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                int64_t sw, int64_t dh, int64_t dw) {
  static const int64_t widths[3] = {1, 8, 16};
  int64_t most = 0, f;
  int i;
  for (i = 0; i < 3; i++) {
    fuse__dwc_geom g;
    fuse__dwc_geometry(widths[i], OH, OW, KH, KW, sh, sw, dh, dw, &g);
    f = g.rows * g.rs;
    if (f > most) most = f;
  }
  return ((size_t)(KH * KW) * sizeof(int64_t) + 63) / 64 * 64 + (size_t)most * sizeof(float);
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
/* ==== begin src/kernels/vec_avx512.h ==== */
/* The AVX-512 vector layer: 16 floats, __mmask16 lane masks. Every kernel template
   (the .inc files in src/kernels) is written against the FUSE__VEC / FUSE__V_* names below and compiled
   once per layer (vec_scalar.h is the reference semantics of each operation); vec_end.h
   undefines them. The functions carry the target attribute, so a unit built with plain -O2
   still has this instance, taken when fuse_cpu_isa() finds AVX-512 at run time. */
#define FUSE__VEC_ISA FUSE_ISA_AVX512
#define FUSE__VEC_FN(name) name##_avx512 /* the instance's name */
#define FUSE__VEC_TARGET __attribute__((target("avx512f")))
#define FUSE__VEC __m512
#define FUSE__VEC_MASK __mmask16
#define FUSE__VEC_WIDTH 16
#define FUSE__V_ZERO() _mm512_setzero_ps()
#define FUSE__V_SET1(x) _mm512_set1_ps(x)
#define FUSE__V_LOAD(p) _mm512_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm512_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm512_store_ps(p, v) /* p 64-byte aligned */
/* lanes [0, n) (n may be anything: clamped to 0 .. 16) and [a, b) (0 <= a <= b <= 16) */
#define FUSE__V_MASK_FIRST(n)                                                                \
  ((__mmask16)((n) >= 16 ? 0xffffu : (n) <= 0 ? 0u : (1u << (unsigned)(n)) - 1u))
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  ((__mmask16)(((1u << (unsigned)(b)) - 1u) & ~((1u << (unsigned)(a)) - 1u)))
#define FUSE__V_LOAD_MASK(p, m) _mm512_maskz_loadu_ps(m, p) /* zeros outside m */
#define FUSE__V_STORE_MASK(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c) /* a * b + c */
#define FUSE__V_ADD(a, b) _mm512_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm512_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm512_mul_ps(a, b)
/* a > b ? a : b and a < b ? a : b (b where either is NaN); maskz: gcc 12 warns on max_ps */
#define FUSE__V_MAX(a, b) _mm512_maskz_max_ps((__mmask16)-1, a, b)
#define FUSE__V_MIN(a, b) _mm512_maskz_min_ps((__mmask16)-1, a, b)
/* x < t ? t : x and x > t ? t : x (x where either is NaN) */
#define FUSE__V_BELOW(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_LT_OQ), x, t)
#define FUSE__V_ABOVE(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_GT_OQ), x, t)
/* x where x > m (x < m) or x is NaN, else m: max / min that keep a NaN of x */
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_LT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
/* the even (odd) floats of the 32 in a, b: a0 a2 .. a14 b0 .. b14 */
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b)
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b)
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
/* ==== end src/kernels/vec_avx512.h ==== */
/* ==== begin src/kernels/depthwise_nhwc.inc ==== */
/* Depthwise conv on NHWC, vectorized over channels, an output row at a time; a template of
   the vector layer (depthwise.c instantiates it). 3x3 and 5x5 with column dilation 1 and
   column stride 1 or 2 run the row in blocks of eight pixels (depthwise_nhwc_block.inc);
   anything else: inside the row four pixels share each weight load, at the edges a pixel
   runs only its taps inside the input. The epilogue runs on the register before the one
   store (masked on the last vector of channels). */

/* pixel at `at` (its first channel c0 of the vector): post-ops, then the store under m */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__dw_store)(const fuse__dw_args *d,
                                                               FUSE__VEC v, int64_t at,
                                                               FUSE__VEC_MASK m) {
  int q;
  for (q = 0; q < d->num_post; q++)
    v = FUSE__VEC_FN(fuse__post_apply)(v, &d->post[q], d->residual[q] ? d->residual[q] + at : d->y,
                                       m);
  FUSE__V_STORE_MASK(d->y + at, m, v);
}

/* the eight-pixel blocks: 3x3 and 5x5, column stride 1 and 2, inside the row or at its ends */
#define FUSE__DW_K 3
#define FUSE__DW_STRIDE 1
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_3x3_s1)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */
#define FUSE__DW_K 3
#define FUSE__DW_STRIDE 2
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_3x3_s2)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */
#define FUSE__DW_K 5
#define FUSE__DW_STRIDE 1
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_5x5_s1)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */
#define FUSE__DW_K 5
#define FUSE__DW_STRIDE 2
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_5x5_s2)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */

/* output rows r0 .. r1 (image-major) of an NHWC depthwise step */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__dw)(const fuse__dw_args *d, void *buf, int64_t r0,
                                                  int64_t r1) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t row, c0, ow, C = d->C, sw = d->sw, xs = d->dw * C;
  int kh, kw, p;
  int shape = d->KH == d->KW && (d->KH == 3 || d->KH == 5) && d->dw == 1 && sw <= 2
                  ? d->KH * 10 + (int)sw : 0;
  /* output columns whose taps all fall inside the input: [in0, in1) */
  int64_t in0 = d->pl <= 0 ? 0 : (d->pl + sw - 1) / sw;
  int64_t in1 = d->W - 1 - (d->KW - 1) * d->dw + d->pl < 0
                    ? 0 : (d->W - 1 - (d->KW - 1) * d->dw + d->pl) / sw + 1;
  (void)buf;
  if (in1 > d->OW) in1 = d->OW;
  if (in0 > in1) in0 = in1;
  for (row = r0; row < r1; row++) {
    int64_t n = row / d->OH, oh = row % d->OH, ih0 = oh * d->sh - d->pt;
    int64_t pix0 = row * d->OW;
    int kh0 = 0, kh1 = d->KH;
    const float *xn = d->x + n * d->H * d->W * C;
    while (kh0 < kh1 && ih0 + kh0 * d->dh < 0) kh0++;
    while (kh1 > kh0 && ih0 + (kh1 - 1) * d->dh >= d->H) kh1--;
    for (c0 = 0; c0 < C; c0 += vw) {
      FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(C - c0);
      FUSE__VEC b = d->bias ? FUSE__V_LOAD_MASK(d->bias + c0, m) : FUSE__V_ZERO();
      switch (shape) {
      case 31:
        FUSE__VEC_FN(fuse__dw_block_3x3_s1)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      case 32:
        FUSE__VEC_FN(fuse__dw_block_3x3_s2)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      case 51:
        FUSE__VEC_FN(fuse__dw_block_5x5_s1)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      case 52:
        FUSE__VEC_FN(fuse__dw_block_5x5_s2)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      default: break;
      }
      for (ow = 0; ow < d->OW;) {
        int64_t iw0 = ow * sw - d->pl;
        if (ow >= in0 && ow + 4 <= in1) { /* four pixels, every tap inside */
          FUSE__VEC acc[4];
          FUSE__UNROLL for (p = 0; p < 4; p++) acc[p] = b;
          for (kh = kh0; kh < kh1; kh++) {
            const float *xr = xn + ((ih0 + kh * d->dh) * d->W + iw0) * C + c0;
            const float *wr = d->w + (int64_t)kh * d->KW * d->Cp + c0;
            for (kw = 0; kw < d->KW; kw++) {
              FUSE__VEC wv = FUSE__V_LOAD(wr + kw * d->Cp);
              const float *xp = xr + kw * xs;
              FUSE__UNROLL for (p = 0; p < 4; p++)
                acc[p] = FUSE__V_FMA(FUSE__V_LOAD_MASK(xp + p * sw * C, m), wv, acc[p]);
            }
          }
          FUSE__UNROLL for (p = 0; p < 4; p++)
            FUSE__VEC_FN(fuse__dw_store)(d, acc[p], (pix0 + ow + p) * C + c0, m);
          ow += 4;
        } else { /* one pixel, its taps inside the input */
          FUSE__VEC acc = b;
          int kw0 = 0, kw1 = d->KW;
          while (kw0 < kw1 && iw0 + kw0 * d->dw < 0) kw0++;
          while (kw1 > kw0 && iw0 + (kw1 - 1) * d->dw >= d->W) kw1--;
          for (kh = kh0; kh < kh1; kh++) {
            const float *xr = xn + ((ih0 + kh * d->dh) * d->W + iw0 + kw0 * d->dw) * C + c0;
            const float *wr = d->w + ((int64_t)kh * d->KW + kw0) * d->Cp + c0;
            for (kw = 0; kw < kw1 - kw0; kw++)
              acc = FUSE__V_FMA(FUSE__V_LOAD_MASK(xr + kw * xs, m), FUSE__V_LOAD(wr + kw * d->Cp),
                                acc);
          }
          FUSE__VEC_FN(fuse__dw_store)(d, acc, (pix0 + ow) * C + c0, m);
          ow++;
        }
      }
    }
  }
}
/* ==== end src/kernels/depthwise_nhwc.inc ==== */
/* ==== begin src/kernels/depthwise_nchw.inc ==== */
/* Depthwise conv on NCHW (when its input comes NCHW: the graph's input, an NCHW-only op),
   vectorized along output rows; a template of the vector layer (depthwise.c instantiates it).
   Units are (image, channel) planes. Three kernels:
   - 3x3 / 5x5, row dilation 1, row stride 1 or 2, column stride 1 (MobileNet's): straight
     from the input, tiles of 4 rows (8 with 16-float vectors) x 1 vector with the weights in
     registers (depthwise_nchw_taps.inc); the vectors that cross the row's ends load under
     masks, rows above or below the plane read a zero row.
   - the same kernels with another column stride: from a band buffer (next), 4-row tiles.
   - anything else: a plane is cut into bands of output rows; a band's input rows are copied
     into a buffer (in L1), zero-padded and split into sw column phases (phase p holds padded
     columns p, p + sw, ...), so that for any stride, dilation or padding the VW outputs from
     column ow need, for each tap, one contiguous load at a fixed offset from the tile. A
     tile is 8 output vectors (rows x vectors = 1x8, 2x4, 4x2 or 8x1, as the row is wide),
     each tap one broadcast weight and 8 FMAs (depthwise_nchw_tiles.inc).
   Each runs the epilogue on the registers before the one store (masked at the plane's
   edges). The loop order (row tiles outer, vectors inner) matters most: the tile's input and
   output rows stay in L1. */

/* One buffer row: input row x (NULL: a padding row) as padded columns in sw phases. A row
   writes its input columns (and zeros past them) and nothing else: the padding, zeroed once,
   stays zero. Only the phase columns below fill matter. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__dwc_row)(float *dst, const float *x,
                                                       const fuse__dw_args *d, int64_t wq,
                                                       int64_t fill) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t i, p, sw = d->sw, pl = d->pl, W = sw * fill - pl, n;
  if (W > d->W) W = d->W; /* the input columns that land below fill */
  if (!x) {
    for (p = 0; p < sw; p++)
      for (i = 0; i < fill; i += vw) FUSE__V_STORE_ALIGNED(dst + p * wq + i, FUSE__V_ZERO());
  } else if (sw == 1) {
    for (i = 0; i + vw <= W; i += vw) FUSE__V_STORE(dst + pl + i, FUSE__V_LOAD(x + i));
    if (i < W) FUSE__V_STORE(dst + pl + i, FUSE__V_LOAD_MASK(x + i, FUSE__V_MASK_FIRST(W - i)));
  } else if (sw == 2) { /* x[2k] to padded column 2k + pl, x[2k + 1] to 2k + 1 + pl */
    float *ev = dst + (pl & 1) * wq + pl / 2, *od = dst + ((pl + 1) & 1) * wq + (pl + 1) / 2;
    for (i = 0; 2 * i < W; i += vw) {
      FUSE__VEC v0, v1;
      if (2 * i + 2 * vw <= W) {
        v0 = FUSE__V_LOAD(x + 2 * i), v1 = FUSE__V_LOAD(x + 2 * i + vw);
      } else {
        n = W - 2 * i;
        v0 = FUSE__V_LOAD_MASK(x + 2 * i, FUSE__V_MASK_FIRST(n));
        v1 = n > vw ? FUSE__V_LOAD_MASK(x + 2 * i + vw, FUSE__V_MASK_FIRST(n - vw))
                    : FUSE__V_ZERO();
      }
      FUSE__V_STORE(ev + i, FUSE__V_EVENS(v0, v1));
      FUSE__V_STORE(od + i, FUSE__V_ODDS(v0, v1));
    }
  } else {
    for (i = 0; i < W; i++) dst[(i + pl) % sw * wq + (i + pl) / sw] = x[i];
  }
}

/* The epilogue of a tile of rows x vecs output vectors, acc[r * vecs + v] at output
   tile + r * OW + v * VW of the plane: each post-op over the whole tile in turn, then the
   stores. At the plane's edge (!whole) only rows below rows_left exist and vector v stores
   under cm[v]. */
FUSE__VEC_TARGET static FUSE__TILE_INLINE void FUSE__VEC_FN(fuse__dwc_finish)(
    FUSE__VEC *acc, int rows, int vecs, const fuse__dw_args *d, int64_t tile, int whole,
    int64_t rows_left, const FUSE__VEC_MASK *cm) {
  float *yp = d->y + tile;
  const int64_t OW = d->OW; /* a local: the stores could change d->OW for all the compiler knows */
  int q, r, v;
  if (whole) {
    const FUSE__VEC_MASK all = FUSE__V_MASK_FIRST(FUSE__VEC_WIDTH);
    for (q = 0; q < d->num_post; q++) {
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + tile : yp; /* read by ADD only */
      FUSE__UNROLL for (r = 0; r < rows; r++)
        FUSE__UNROLL for (v = 0; v < vecs; v++)
          acc[r * vecs + v] = FUSE__VEC_FN(fuse__post_apply)(
              acc[r * vecs + v], op, rp + r * OW + v * FUSE__VEC_WIDTH, all);
    }
    FUSE__UNROLL for (r = 0; r < rows; r++)
      FUSE__UNROLL for (v = 0; v < vecs; v++)
        FUSE__V_STORE(yp + r * OW + v * FUSE__VEC_WIDTH, acc[r * vecs + v]);
    return;
  }
  for (q = 0; q < d->num_post; q++) {
    const fuse_post_op *op = &d->post[q];
    const float *rp = d->residual[q] ? d->residual[q] + tile : yp;
    FUSE__UNROLL for (r = 0; r < rows; r++)
      FUSE__UNROLL for (v = 0; v < vecs; v++)
        if (r < rows_left)
          acc[r * vecs + v] = FUSE__VEC_FN(fuse__post_apply)(
              acc[r * vecs + v], op, rp + r * OW + v * FUSE__VEC_WIDTH, cm[v]);
  }
  FUSE__UNROLL for (r = 0; r < rows; r++)
    FUSE__UNROLL for (v = 0; v < vecs; v++)
      if (r < rows_left)
        FUSE__V_STORE_MASK(yp + r * OW + v * FUSE__VEC_WIDTH, cm[v], acc[r * vecs + v]);
}

/* The load masks of the vector from output column o, per tap column (k of them): the lanes
   whose input is inside the row. */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__dwc_masks)(FUSE__VEC_MASK *m, int k,
                                                                int64_t o,
                                                                const fuse__dw_args *d) {
  int i;
  for (i = 0; i < k; i++) {
    int64_t a = o - d->pl + i * d->dw, lo = a < 0 ? -a : 0, hi = d->W - a;
    lo = lo > FUSE__VEC_WIDTH ? FUSE__VEC_WIDTH : lo;
    hi = hi < lo ? lo : hi > FUSE__VEC_WIDTH ? FUSE__VEC_WIDTH : hi;
    m[i] = FUSE__V_MASK_RANGE(lo, hi);
  }
}

/* the band tiles of 8, 4, 2 and 1 vectors per row */
#define FUSE__DWC_VECS 8
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_8)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */
#define FUSE__DWC_VECS 4
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_4)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */
#define FUSE__DWC_VECS 2
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_2)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */
#define FUSE__DWC_VECS 1
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_1)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */

/* the register kernels: 3x3 and 5x5, row stride 1 and 2 */
#define FUSE__DWC_K 3
#define FUSE__DWC_STRIDE 1
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_3x3_s1)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_3x3_s1)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */
#define FUSE__DWC_K 3
#define FUSE__DWC_STRIDE 2
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_3x3_s2)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_3x3_s2)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */
#define FUSE__DWC_K 5
#define FUSE__DWC_STRIDE 1
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_5x5_s1)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_5x5_s1)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */
#define FUSE__DWC_K 5
#define FUSE__DWC_STRIDE 2
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_5x5_s2)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_5x5_s2)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */

/* planes u0 .. u1 of an NCHW depthwise step; scratch: the chunk's tap offsets and band buffer */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__dwc)(const fuse__dw_args *d, void *scratch,
                                                   int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH;
  fuse__dwc_geom g;
  int64_t u, b0, j, t, taps = (int64_t)d->KH * d->KW, fill;
  int64_t *off = (int64_t *)scratch;
  float *buf = /* after the tap offsets, 64-byte aligned */
      (float *)((unsigned char *)scratch + (taps * (int64_t)sizeof(int64_t) + 63) / 64 * 64);
  /* the register kernels: 3x3 or 5x5, row dilation 1, row stride 1 or 2 */
  int shape = d->KH == d->KW && (d->KH == 3 || d->KH == 5) && d->dh == 1 && d->sh <= 2
                  ? d->KH * 10 + (int)d->sh : 0;
  if (shape && d->sw == 1) { /* every plane straight from the input */
    switch (shape) {
    case 31: FUSE__VEC_FN(fuse__dwc_direct_3x3_s1)(d, u0, u1); break;
    case 32: FUSE__VEC_FN(fuse__dwc_direct_3x3_s2)(d, u0, u1); break;
    case 51: FUSE__VEC_FN(fuse__dwc_direct_5x5_s1)(d, u0, u1); break;
    default: FUSE__VEC_FN(fuse__dwc_direct_5x5_s2)(d, u0, u1); break;
    }
    return;
  }
  fuse__dwc_geometry(vw, d->OH, d->OW, d->KH, d->KW, d->sh, d->sw, d->dh, d->dw, &g);
  /* valid outputs read phase columns below fill; the rest stays zero from here */
  fill = (d->OW + (d->KW - 1) * d->dw / d->sw + vw - 1) / vw * vw;
  if (fill > g.wq) fill = g.wq;
  for (j = 0; j < g.rows * g.rs; j += vw) FUSE__V_STORE_ALIGNED(buf + j, FUSE__V_ZERO());
  for (t = 0; t < taps; t++) { /* tap kh, kw: buffer row kh * dh, padded column kw * dw */
    int64_t cw = (t % d->KW) * d->dw;
    off[t] = (t / d->KW) * d->dh * g.rs + (cw % d->sw) * g.wq + cw / d->sw;
  }
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    for (b0 = 0; b0 < d->OH; b0 += g.band) {
      for (j = 0; j < g.rows; j++) {
        int64_t ih = b0 * d->sh - d->pt + j;
        FUSE__VEC_FN(fuse__dwc_row)(buf + j * g.rs, ih >= 0 && ih < d->H ? xp + ih * d->W : NULL,
                                    d, g.wq, fill);
      }
      switch (shape ? shape : (int)g.nb) {
      case 31: FUSE__VEC_FN(fuse__dwc_band_3x3_s1)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 32: FUSE__VEC_FN(fuse__dwc_band_3x3_s2)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 51: FUSE__VEC_FN(fuse__dwc_band_5x5_s1)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 52: FUSE__VEC_FN(fuse__dwc_band_5x5_s2)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 8: FUSE__VEC_FN(fuse__dwc_tiles_8)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 4: FUSE__VEC_FN(fuse__dwc_tiles_4)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 2: FUSE__VEC_FN(fuse__dwc_tiles_2)(d, &g, buf, off, wc, bias, plane, b0); break;
      default: FUSE__VEC_FN(fuse__dwc_tiles_1)(d, &g, buf, off, wc, bias, plane, b0); break;
      }
    }
  }
}
/* ==== end src/kernels/depthwise_nchw.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* ==== begin src/kernels/vec_avx2.h ==== */
/* The AVX2 + FMA vector layer: 8 floats, lane masks as __m256i (all ones = lane on). The same
   operations as vec_avx512.h; see there. */
#define FUSE__VEC_ISA FUSE_ISA_AVX2
#define FUSE__VEC_FN(name) name##_avx2
#define FUSE__VEC_TARGET __attribute__((target("avx2,fma")))
#define FUSE__VEC __m256
#define FUSE__VEC_MASK __m256i
#define FUSE__VEC_WIDTH 8
#define FUSE__V_ZERO() _mm256_setzero_ps()
#define FUSE__V_SET1(x) _mm256_set1_ps(x)
#define FUSE__V_LOAD(p) _mm256_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm256_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm256_store_ps(p, v)
#define FUSE__V_LANES _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define FUSE__V_MASK_FIRST(n)                                                                \
  _mm256_cmpgt_epi32(_mm256_set1_epi32((int)((n) >= 8 ? 8 : (n) <= 0 ? 0 : (n))), FUSE__V_LANES)
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)(a)), FUSE__V_LANES),        \
                      _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(b)), FUSE__V_LANES))
#define FUSE__V_LOAD_MASK(p, m) _mm256_maskload_ps(p, m)
#define FUSE__V_STORE_MASK(p, m, v) _mm256_maskstore_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FUSE__V_ADD(a, b) _mm256_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm256_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm256_mul_ps(a, b)
#define FUSE__V_MAX(a, b) _mm256_max_ps(a, b)
#define FUSE__V_MIN(a, b) _mm256_min_ps(a, b)
#define FUSE__V_BELOW(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_LT_OQ))
#define FUSE__V_ABOVE(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_GT_OQ))
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_LT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8))
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8))
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
/* ==== end src/kernels/vec_avx2.h ==== */
/* ==== begin src/kernels/depthwise_nhwc.inc ==== */
/* Depthwise conv on NHWC, vectorized over channels, an output row at a time; a template of
   the vector layer (depthwise.c instantiates it). 3x3 and 5x5 with column dilation 1 and
   column stride 1 or 2 run the row in blocks of eight pixels (depthwise_nhwc_block.inc);
   anything else: inside the row four pixels share each weight load, at the edges a pixel
   runs only its taps inside the input. The epilogue runs on the register before the one
   store (masked on the last vector of channels). */

/* pixel at `at` (its first channel c0 of the vector): post-ops, then the store under m */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__dw_store)(const fuse__dw_args *d,
                                                               FUSE__VEC v, int64_t at,
                                                               FUSE__VEC_MASK m) {
  int q;
  for (q = 0; q < d->num_post; q++)
    v = FUSE__VEC_FN(fuse__post_apply)(v, &d->post[q], d->residual[q] ? d->residual[q] + at : d->y,
                                       m);
  FUSE__V_STORE_MASK(d->y + at, m, v);
}

/* the eight-pixel blocks: 3x3 and 5x5, column stride 1 and 2, inside the row or at its ends */
#define FUSE__DW_K 3
#define FUSE__DW_STRIDE 1
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_3x3_s1)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */
#define FUSE__DW_K 3
#define FUSE__DW_STRIDE 2
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_3x3_s2)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */
#define FUSE__DW_K 5
#define FUSE__DW_STRIDE 1
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_5x5_s1)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */
#define FUSE__DW_K 5
#define FUSE__DW_STRIDE 2
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_5x5_s2)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */

/* output rows r0 .. r1 (image-major) of an NHWC depthwise step */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__dw)(const fuse__dw_args *d, void *buf, int64_t r0,
                                                  int64_t r1) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t row, c0, ow, C = d->C, sw = d->sw, xs = d->dw * C;
  int kh, kw, p;
  int shape = d->KH == d->KW && (d->KH == 3 || d->KH == 5) && d->dw == 1 && sw <= 2
                  ? d->KH * 10 + (int)sw : 0;
  /* output columns whose taps all fall inside the input: [in0, in1) */
  int64_t in0 = d->pl <= 0 ? 0 : (d->pl + sw - 1) / sw;
  int64_t in1 = d->W - 1 - (d->KW - 1) * d->dw + d->pl < 0
                    ? 0 : (d->W - 1 - (d->KW - 1) * d->dw + d->pl) / sw + 1;
  (void)buf;
  if (in1 > d->OW) in1 = d->OW;
  if (in0 > in1) in0 = in1;
  for (row = r0; row < r1; row++) {
    int64_t n = row / d->OH, oh = row % d->OH, ih0 = oh * d->sh - d->pt;
    int64_t pix0 = row * d->OW;
    int kh0 = 0, kh1 = d->KH;
    const float *xn = d->x + n * d->H * d->W * C;
    while (kh0 < kh1 && ih0 + kh0 * d->dh < 0) kh0++;
    while (kh1 > kh0 && ih0 + (kh1 - 1) * d->dh >= d->H) kh1--;
    for (c0 = 0; c0 < C; c0 += vw) {
      FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(C - c0);
      FUSE__VEC b = d->bias ? FUSE__V_LOAD_MASK(d->bias + c0, m) : FUSE__V_ZERO();
      switch (shape) {
      case 31:
        FUSE__VEC_FN(fuse__dw_block_3x3_s1)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      case 32:
        FUSE__VEC_FN(fuse__dw_block_3x3_s2)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      case 51:
        FUSE__VEC_FN(fuse__dw_block_5x5_s1)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      case 52:
        FUSE__VEC_FN(fuse__dw_block_5x5_s2)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      default: break;
      }
      for (ow = 0; ow < d->OW;) {
        int64_t iw0 = ow * sw - d->pl;
        if (ow >= in0 && ow + 4 <= in1) { /* four pixels, every tap inside */
          FUSE__VEC acc[4];
          FUSE__UNROLL for (p = 0; p < 4; p++) acc[p] = b;
          for (kh = kh0; kh < kh1; kh++) {
            const float *xr = xn + ((ih0 + kh * d->dh) * d->W + iw0) * C + c0;
            const float *wr = d->w + (int64_t)kh * d->KW * d->Cp + c0;
            for (kw = 0; kw < d->KW; kw++) {
              FUSE__VEC wv = FUSE__V_LOAD(wr + kw * d->Cp);
              const float *xp = xr + kw * xs;
              FUSE__UNROLL for (p = 0; p < 4; p++)
                acc[p] = FUSE__V_FMA(FUSE__V_LOAD_MASK(xp + p * sw * C, m), wv, acc[p]);
            }
          }
          FUSE__UNROLL for (p = 0; p < 4; p++)
            FUSE__VEC_FN(fuse__dw_store)(d, acc[p], (pix0 + ow + p) * C + c0, m);
          ow += 4;
        } else { /* one pixel, its taps inside the input */
          FUSE__VEC acc = b;
          int kw0 = 0, kw1 = d->KW;
          while (kw0 < kw1 && iw0 + kw0 * d->dw < 0) kw0++;
          while (kw1 > kw0 && iw0 + (kw1 - 1) * d->dw >= d->W) kw1--;
          for (kh = kh0; kh < kh1; kh++) {
            const float *xr = xn + ((ih0 + kh * d->dh) * d->W + iw0 + kw0 * d->dw) * C + c0;
            const float *wr = d->w + ((int64_t)kh * d->KW + kw0) * d->Cp + c0;
            for (kw = 0; kw < kw1 - kw0; kw++)
              acc = FUSE__V_FMA(FUSE__V_LOAD_MASK(xr + kw * xs, m), FUSE__V_LOAD(wr + kw * d->Cp),
                                acc);
          }
          FUSE__VEC_FN(fuse__dw_store)(d, acc, (pix0 + ow) * C + c0, m);
          ow++;
        }
      }
    }
  }
}
/* ==== end src/kernels/depthwise_nhwc.inc ==== */
/* ==== begin src/kernels/depthwise_nchw.inc ==== */
/* Depthwise conv on NCHW (when its input comes NCHW: the graph's input, an NCHW-only op),
   vectorized along output rows; a template of the vector layer (depthwise.c instantiates it).
   Units are (image, channel) planes. Three kernels:
   - 3x3 / 5x5, row dilation 1, row stride 1 or 2, column stride 1 (MobileNet's): straight
     from the input, tiles of 4 rows (8 with 16-float vectors) x 1 vector with the weights in
     registers (depthwise_nchw_taps.inc); the vectors that cross the row's ends load under
     masks, rows above or below the plane read a zero row.
   - the same kernels with another column stride: from a band buffer (next), 4-row tiles.
   - anything else: a plane is cut into bands of output rows; a band's input rows are copied
     into a buffer (in L1), zero-padded and split into sw column phases (phase p holds padded
     columns p, p + sw, ...), so that for any stride, dilation or padding the VW outputs from
     column ow need, for each tap, one contiguous load at a fixed offset from the tile. A
     tile is 8 output vectors (rows x vectors = 1x8, 2x4, 4x2 or 8x1, as the row is wide),
     each tap one broadcast weight and 8 FMAs (depthwise_nchw_tiles.inc).
   Each runs the epilogue on the registers before the one store (masked at the plane's
   edges). The loop order (row tiles outer, vectors inner) matters most: the tile's input and
   output rows stay in L1. */

/* One buffer row: input row x (NULL: a padding row) as padded columns in sw phases. A row
   writes its input columns (and zeros past them) and nothing else: the padding, zeroed once,
   stays zero. Only the phase columns below fill matter. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__dwc_row)(float *dst, const float *x,
                                                       const fuse__dw_args *d, int64_t wq,
                                                       int64_t fill) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t i, p, sw = d->sw, pl = d->pl, W = sw * fill - pl, n;
  if (W > d->W) W = d->W; /* the input columns that land below fill */
  if (!x) {
    for (p = 0; p < sw; p++)
      for (i = 0; i < fill; i += vw) FUSE__V_STORE_ALIGNED(dst + p * wq + i, FUSE__V_ZERO());
  } else if (sw == 1) {
    for (i = 0; i + vw <= W; i += vw) FUSE__V_STORE(dst + pl + i, FUSE__V_LOAD(x + i));
    if (i < W) FUSE__V_STORE(dst + pl + i, FUSE__V_LOAD_MASK(x + i, FUSE__V_MASK_FIRST(W - i)));
  } else if (sw == 2) { /* x[2k] to padded column 2k + pl, x[2k + 1] to 2k + 1 + pl */
    float *ev = dst + (pl & 1) * wq + pl / 2, *od = dst + ((pl + 1) & 1) * wq + (pl + 1) / 2;
    for (i = 0; 2 * i < W; i += vw) {
      FUSE__VEC v0, v1;
      if (2 * i + 2 * vw <= W) {
        v0 = FUSE__V_LOAD(x + 2 * i), v1 = FUSE__V_LOAD(x + 2 * i + vw);
      } else {
        n = W - 2 * i;
        v0 = FUSE__V_LOAD_MASK(x + 2 * i, FUSE__V_MASK_FIRST(n));
        v1 = n > vw ? FUSE__V_LOAD_MASK(x + 2 * i + vw, FUSE__V_MASK_FIRST(n - vw))
                    : FUSE__V_ZERO();
      }
      FUSE__V_STORE(ev + i, FUSE__V_EVENS(v0, v1));
      FUSE__V_STORE(od + i, FUSE__V_ODDS(v0, v1));
    }
  } else {
    for (i = 0; i < W; i++) dst[(i + pl) % sw * wq + (i + pl) / sw] = x[i];
  }
}

/* The epilogue of a tile of rows x vecs output vectors, acc[r * vecs + v] at output
   tile + r * OW + v * VW of the plane: each post-op over the whole tile in turn, then the
   stores. At the plane's edge (!whole) only rows below rows_left exist and vector v stores
   under cm[v]. */
FUSE__VEC_TARGET static FUSE__TILE_INLINE void FUSE__VEC_FN(fuse__dwc_finish)(
    FUSE__VEC *acc, int rows, int vecs, const fuse__dw_args *d, int64_t tile, int whole,
    int64_t rows_left, const FUSE__VEC_MASK *cm) {
  float *yp = d->y + tile;
  const int64_t OW = d->OW; /* a local: the stores could change d->OW for all the compiler knows */
  int q, r, v;
  if (whole) {
    const FUSE__VEC_MASK all = FUSE__V_MASK_FIRST(FUSE__VEC_WIDTH);
    for (q = 0; q < d->num_post; q++) {
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + tile : yp; /* read by ADD only */
      FUSE__UNROLL for (r = 0; r < rows; r++)
        FUSE__UNROLL for (v = 0; v < vecs; v++)
          acc[r * vecs + v] = FUSE__VEC_FN(fuse__post_apply)(
              acc[r * vecs + v], op, rp + r * OW + v * FUSE__VEC_WIDTH, all);
    }
    FUSE__UNROLL for (r = 0; r < rows; r++)
      FUSE__UNROLL for (v = 0; v < vecs; v++)
        FUSE__V_STORE(yp + r * OW + v * FUSE__VEC_WIDTH, acc[r * vecs + v]);
    return;
  }
  for (q = 0; q < d->num_post; q++) {
    const fuse_post_op *op = &d->post[q];
    const float *rp = d->residual[q] ? d->residual[q] + tile : yp;
    FUSE__UNROLL for (r = 0; r < rows; r++)
      FUSE__UNROLL for (v = 0; v < vecs; v++)
        if (r < rows_left)
          acc[r * vecs + v] = FUSE__VEC_FN(fuse__post_apply)(
              acc[r * vecs + v], op, rp + r * OW + v * FUSE__VEC_WIDTH, cm[v]);
  }
  FUSE__UNROLL for (r = 0; r < rows; r++)
    FUSE__UNROLL for (v = 0; v < vecs; v++)
      if (r < rows_left)
        FUSE__V_STORE_MASK(yp + r * OW + v * FUSE__VEC_WIDTH, cm[v], acc[r * vecs + v]);
}

/* The load masks of the vector from output column o, per tap column (k of them): the lanes
   whose input is inside the row. */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__dwc_masks)(FUSE__VEC_MASK *m, int k,
                                                                int64_t o,
                                                                const fuse__dw_args *d) {
  int i;
  for (i = 0; i < k; i++) {
    int64_t a = o - d->pl + i * d->dw, lo = a < 0 ? -a : 0, hi = d->W - a;
    lo = lo > FUSE__VEC_WIDTH ? FUSE__VEC_WIDTH : lo;
    hi = hi < lo ? lo : hi > FUSE__VEC_WIDTH ? FUSE__VEC_WIDTH : hi;
    m[i] = FUSE__V_MASK_RANGE(lo, hi);
  }
}

/* the band tiles of 8, 4, 2 and 1 vectors per row */
#define FUSE__DWC_VECS 8
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_8)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */
#define FUSE__DWC_VECS 4
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_4)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */
#define FUSE__DWC_VECS 2
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_2)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */
#define FUSE__DWC_VECS 1
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_1)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */

/* the register kernels: 3x3 and 5x5, row stride 1 and 2 */
#define FUSE__DWC_K 3
#define FUSE__DWC_STRIDE 1
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_3x3_s1)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_3x3_s1)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */
#define FUSE__DWC_K 3
#define FUSE__DWC_STRIDE 2
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_3x3_s2)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_3x3_s2)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */
#define FUSE__DWC_K 5
#define FUSE__DWC_STRIDE 1
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_5x5_s1)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_5x5_s1)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */
#define FUSE__DWC_K 5
#define FUSE__DWC_STRIDE 2
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_5x5_s2)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_5x5_s2)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */

/* planes u0 .. u1 of an NCHW depthwise step; scratch: the chunk's tap offsets and band buffer */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__dwc)(const fuse__dw_args *d, void *scratch,
                                                   int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH;
  fuse__dwc_geom g;
  int64_t u, b0, j, t, taps = (int64_t)d->KH * d->KW, fill;
  int64_t *off = (int64_t *)scratch;
  float *buf = /* after the tap offsets, 64-byte aligned */
      (float *)((unsigned char *)scratch + (taps * (int64_t)sizeof(int64_t) + 63) / 64 * 64);
  /* the register kernels: 3x3 or 5x5, row dilation 1, row stride 1 or 2 */
  int shape = d->KH == d->KW && (d->KH == 3 || d->KH == 5) && d->dh == 1 && d->sh <= 2
                  ? d->KH * 10 + (int)d->sh : 0;
  if (shape && d->sw == 1) { /* every plane straight from the input */
    switch (shape) {
    case 31: FUSE__VEC_FN(fuse__dwc_direct_3x3_s1)(d, u0, u1); break;
    case 32: FUSE__VEC_FN(fuse__dwc_direct_3x3_s2)(d, u0, u1); break;
    case 51: FUSE__VEC_FN(fuse__dwc_direct_5x5_s1)(d, u0, u1); break;
    default: FUSE__VEC_FN(fuse__dwc_direct_5x5_s2)(d, u0, u1); break;
    }
    return;
  }
  fuse__dwc_geometry(vw, d->OH, d->OW, d->KH, d->KW, d->sh, d->sw, d->dh, d->dw, &g);
  /* valid outputs read phase columns below fill; the rest stays zero from here */
  fill = (d->OW + (d->KW - 1) * d->dw / d->sw + vw - 1) / vw * vw;
  if (fill > g.wq) fill = g.wq;
  for (j = 0; j < g.rows * g.rs; j += vw) FUSE__V_STORE_ALIGNED(buf + j, FUSE__V_ZERO());
  for (t = 0; t < taps; t++) { /* tap kh, kw: buffer row kh * dh, padded column kw * dw */
    int64_t cw = (t % d->KW) * d->dw;
    off[t] = (t / d->KW) * d->dh * g.rs + (cw % d->sw) * g.wq + cw / d->sw;
  }
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    for (b0 = 0; b0 < d->OH; b0 += g.band) {
      for (j = 0; j < g.rows; j++) {
        int64_t ih = b0 * d->sh - d->pt + j;
        FUSE__VEC_FN(fuse__dwc_row)(buf + j * g.rs, ih >= 0 && ih < d->H ? xp + ih * d->W : NULL,
                                    d, g.wq, fill);
      }
      switch (shape ? shape : (int)g.nb) {
      case 31: FUSE__VEC_FN(fuse__dwc_band_3x3_s1)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 32: FUSE__VEC_FN(fuse__dwc_band_3x3_s2)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 51: FUSE__VEC_FN(fuse__dwc_band_5x5_s1)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 52: FUSE__VEC_FN(fuse__dwc_band_5x5_s2)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 8: FUSE__VEC_FN(fuse__dwc_tiles_8)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 4: FUSE__VEC_FN(fuse__dwc_tiles_4)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 2: FUSE__VEC_FN(fuse__dwc_tiles_2)(d, &g, buf, off, wc, bias, plane, b0); break;
      default: FUSE__VEC_FN(fuse__dwc_tiles_1)(d, &g, buf, off, wc, bias, plane, b0); break;
      }
    }
  }
}
/* ==== end src/kernels/depthwise_nchw.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
#endif
/* ==== begin src/kernels/vec_scalar.h ==== */
/* The scalar vector layer: one float, a lane mask is 0 or 1. It gives every kernel template a
   plain-C instance (the scalar twin) with the same tiles, packing and drivers as the SIMD
   ones: the fallback where no SIMD is compiled in (ARM today, FUSE_NO_SIMD), the oracle the
   SIMD instances are tested against, and the definition of what each operation means
   (NaN handling included; the SIMD layers match it lane by lane). */
#define FUSE__VEC_ISA FUSE_ISA_SCALAR
#define FUSE__VEC_FN(name) name##_scalar
#define FUSE__VEC_TARGET
#define FUSE__VEC float
#define FUSE__VEC_MASK int
#define FUSE__VEC_WIDTH 1
#define FUSE__V_ZERO() 0.0f
#define FUSE__V_SET1(x) ((float)(x))
#define FUSE__V_LOAD(p) (*(p))
#define FUSE__V_STORE(p, v) (*(p) = (v))
#define FUSE__V_STORE_ALIGNED(p, v) (*(p) = (v))
#define FUSE__V_MASK_FIRST(n) ((n) > 0)
#define FUSE__V_MASK_RANGE(a, b) ((a) <= 0 && (b) > 0)
#define FUSE__V_LOAD_MASK(p, m) ((m) ? *(p) : 0.0f)
#define FUSE__V_STORE_MASK(p, m, v) ((m) ? (void)(*(p) = (v)) : (void)0)
#define FUSE__V_FMA(a, b, c) ((a) * (b) + (c))
#define FUSE__V_ADD(a, b) ((a) + (b))
#define FUSE__V_SUB(a, b) ((a) - (b))
#define FUSE__V_MUL(a, b) ((a) * (b))
#define FUSE__V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FUSE__V_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FUSE__V_BELOW(x, t) ((x) < (t) ? (t) : (x))
#define FUSE__V_ABOVE(x, t) ((x) > (t) ? (t) : (x))
#define FUSE__V_MAX_NAN(x, m) ((x) > (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_MIN_NAN(x, m) ((x) < (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_EVENS(a, b) ((void)(b), (a))
#define FUSE__V_ODDS(a, b) ((void)(a), (b))
#define FUSE__V_PREFETCH_L2(p) ((void)(p))
/* ==== end src/kernels/vec_scalar.h ==== */
/* ==== begin src/kernels/depthwise_nhwc.inc ==== */
/* Depthwise conv on NHWC, vectorized over channels, an output row at a time; a template of
   the vector layer (depthwise.c instantiates it). 3x3 and 5x5 with column dilation 1 and
   column stride 1 or 2 run the row in blocks of eight pixels (depthwise_nhwc_block.inc);
   anything else: inside the row four pixels share each weight load, at the edges a pixel
   runs only its taps inside the input. The epilogue runs on the register before the one
   store (masked on the last vector of channels). */

/* pixel at `at` (its first channel c0 of the vector): post-ops, then the store under m */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__dw_store)(const fuse__dw_args *d,
                                                               FUSE__VEC v, int64_t at,
                                                               FUSE__VEC_MASK m) {
  int q;
  for (q = 0; q < d->num_post; q++)
    v = FUSE__VEC_FN(fuse__post_apply)(v, &d->post[q], d->residual[q] ? d->residual[q] + at : d->y,
                                       m);
  FUSE__V_STORE_MASK(d->y + at, m, v);
}

/* the eight-pixel blocks: 3x3 and 5x5, column stride 1 and 2, inside the row or at its ends */
#define FUSE__DW_K 3
#define FUSE__DW_STRIDE 1
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_3x3_s1)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */
#define FUSE__DW_K 3
#define FUSE__DW_STRIDE 2
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_3x3_s2)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */
#define FUSE__DW_K 5
#define FUSE__DW_STRIDE 1
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_5x5_s1)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */
#define FUSE__DW_K 5
#define FUSE__DW_STRIDE 2
#define FUSE__DW_BLOCK_FN FUSE__VEC_FN(fuse__dw_block_5x5_s2)
/* ==== begin src/kernels/depthwise_nhwc_block.inc ==== */
/* The NHWC depthwise kernel's blocks of eight pixels (depthwise_nhwc.inc) for a FUSE__DW_K x
   FUSE__DW_K kernel with column dilation 1 and column stride FUSE__DW_STRIDE, named
   FUSE__DW_BLOCK_FN: one vector of channels (c0, lanes m) along a whole output row. A kernel
   row's weights sit in registers and each input pixel is loaded once per kernel row for every
   output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where four-pixel blocks
   need 15 for 12). A block at the row's ends (outside [in0, in1)) reads zeros for the
   pixels outside the row and stores only the pixels that exist. K and the stride are
   constants: the unrolled loops keep only the taps that exist. xn: the image's input; ih0:
   the first kernel row's input row, of which kernel rows kh0 .. kh1 are inside; pix0: the
   row's first output pixel. */
#define FUSE__DW_SPAN (7 * FUSE__DW_STRIDE + FUSE__DW_K) /* input pixels of a block */
FUSE__VEC_TARGET static void FUSE__DW_BLOCK_FN(const fuse__dw_args *d, const float *xn, int64_t c0,
                                               int64_t ih0, int kh0, int kh1, int64_t pix0,
                                               int64_t in0, int64_t in1, FUSE__VEC b,
                                               FUSE__VEC_MASK m) {
  const int64_t C = d->C, y0 = pix0 * C + c0;
  int64_t ow;
  int kh, kw, j, p, q;
  for (ow = 0; ow < d->OW; ow += 8) {
    int64_t iw0 = ow * FUSE__DW_STRIDE - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;
    FUSE__VEC acc[8];
    FUSE__UNROLL for (p = 0; p < 8; p++) acc[p] = b;
    for (kh = kh0; kh < kh1; kh++) {
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0; /* the input row, pixel 0 */
      const float *wr = d->w + (int64_t)kh * FUSE__DW_K * d->Cp + c0;
      FUSE__VEC wv[FUSE__DW_K];
      FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) wv[kw] = FUSE__V_LOAD(wr + kw * d->Cp);
      /* input pixel j, tap column kw: output pixel (j - kw) / stride */
      if (ow >= in0 && ow + 8 <= in1) {
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m);
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      } else { /* the row's ends: zeros for the pixels outside */
        FUSE__UNROLL for (j = 0; j < FUSE__DW_SPAN; j++) {
          FUSE__VEC xv = iw0 + j >= 0 && iw0 + j < d->W ? FUSE__V_LOAD_MASK(xr + (iw0 + j) * C, m)
                                                        : FUSE__V_ZERO();
          FUSE__UNROLL for (kw = 0; kw < FUSE__DW_K; kw++) {
            int o = (j - kw) / FUSE__DW_STRIDE;
            if (j >= kw && (j - kw) % FUSE__DW_STRIDE == 0 && o < 8)
              acc[o] = FUSE__V_FMA(xv, wv[kw], acc[o]);
          }
        }
      }
    }
    for (q = 0; q < d->num_post; q++) { /* each post-op over the block, then the stores */
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + y0 + ow * C : d->y; /* ADD only */
      if (npix == 8) {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      } else {
        FUSE__UNROLL for (p = 0; p < 8; p++)
          if (p < npix) acc[p] = FUSE__VEC_FN(fuse__post_apply)(acc[p], op, rp + p * C, m);
      }
    }
    if (npix == 8) {
      FUSE__UNROLL for (p = 0; p < 8; p++) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    } else {
      FUSE__UNROLL for (p = 0; p < 8; p++)
        if (p < npix) FUSE__V_STORE_MASK(d->y + y0 + (ow + p) * C, m, acc[p]);
    }
  }
}
#undef FUSE__DW_SPAN
#undef FUSE__DW_K
#undef FUSE__DW_STRIDE
#undef FUSE__DW_BLOCK_FN
/* ==== end src/kernels/depthwise_nhwc_block.inc ==== */

/* output rows r0 .. r1 (image-major) of an NHWC depthwise step */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__dw)(const fuse__dw_args *d, void *buf, int64_t r0,
                                                  int64_t r1) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t row, c0, ow, C = d->C, sw = d->sw, xs = d->dw * C;
  int kh, kw, p;
  int shape = d->KH == d->KW && (d->KH == 3 || d->KH == 5) && d->dw == 1 && sw <= 2
                  ? d->KH * 10 + (int)sw : 0;
  /* output columns whose taps all fall inside the input: [in0, in1) */
  int64_t in0 = d->pl <= 0 ? 0 : (d->pl + sw - 1) / sw;
  int64_t in1 = d->W - 1 - (d->KW - 1) * d->dw + d->pl < 0
                    ? 0 : (d->W - 1 - (d->KW - 1) * d->dw + d->pl) / sw + 1;
  (void)buf;
  if (in1 > d->OW) in1 = d->OW;
  if (in0 > in1) in0 = in1;
  for (row = r0; row < r1; row++) {
    int64_t n = row / d->OH, oh = row % d->OH, ih0 = oh * d->sh - d->pt;
    int64_t pix0 = row * d->OW;
    int kh0 = 0, kh1 = d->KH;
    const float *xn = d->x + n * d->H * d->W * C;
    while (kh0 < kh1 && ih0 + kh0 * d->dh < 0) kh0++;
    while (kh1 > kh0 && ih0 + (kh1 - 1) * d->dh >= d->H) kh1--;
    for (c0 = 0; c0 < C; c0 += vw) {
      FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(C - c0);
      FUSE__VEC b = d->bias ? FUSE__V_LOAD_MASK(d->bias + c0, m) : FUSE__V_ZERO();
      switch (shape) {
      case 31:
        FUSE__VEC_FN(fuse__dw_block_3x3_s1)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      case 32:
        FUSE__VEC_FN(fuse__dw_block_3x3_s2)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      case 51:
        FUSE__VEC_FN(fuse__dw_block_5x5_s1)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      case 52:
        FUSE__VEC_FN(fuse__dw_block_5x5_s2)(d, xn, c0, ih0, kh0, kh1, pix0, in0, in1, b, m);
        continue;
      default: break;
      }
      for (ow = 0; ow < d->OW;) {
        int64_t iw0 = ow * sw - d->pl;
        if (ow >= in0 && ow + 4 <= in1) { /* four pixels, every tap inside */
          FUSE__VEC acc[4];
          FUSE__UNROLL for (p = 0; p < 4; p++) acc[p] = b;
          for (kh = kh0; kh < kh1; kh++) {
            const float *xr = xn + ((ih0 + kh * d->dh) * d->W + iw0) * C + c0;
            const float *wr = d->w + (int64_t)kh * d->KW * d->Cp + c0;
            for (kw = 0; kw < d->KW; kw++) {
              FUSE__VEC wv = FUSE__V_LOAD(wr + kw * d->Cp);
              const float *xp = xr + kw * xs;
              FUSE__UNROLL for (p = 0; p < 4; p++)
                acc[p] = FUSE__V_FMA(FUSE__V_LOAD_MASK(xp + p * sw * C, m), wv, acc[p]);
            }
          }
          FUSE__UNROLL for (p = 0; p < 4; p++)
            FUSE__VEC_FN(fuse__dw_store)(d, acc[p], (pix0 + ow + p) * C + c0, m);
          ow += 4;
        } else { /* one pixel, its taps inside the input */
          FUSE__VEC acc = b;
          int kw0 = 0, kw1 = d->KW;
          while (kw0 < kw1 && iw0 + kw0 * d->dw < 0) kw0++;
          while (kw1 > kw0 && iw0 + (kw1 - 1) * d->dw >= d->W) kw1--;
          for (kh = kh0; kh < kh1; kh++) {
            const float *xr = xn + ((ih0 + kh * d->dh) * d->W + iw0 + kw0 * d->dw) * C + c0;
            const float *wr = d->w + ((int64_t)kh * d->KW + kw0) * d->Cp + c0;
            for (kw = 0; kw < kw1 - kw0; kw++)
              acc = FUSE__V_FMA(FUSE__V_LOAD_MASK(xr + kw * xs, m), FUSE__V_LOAD(wr + kw * d->Cp),
                                acc);
          }
          FUSE__VEC_FN(fuse__dw_store)(d, acc, (pix0 + ow) * C + c0, m);
          ow++;
        }
      }
    }
  }
}
/* ==== end src/kernels/depthwise_nhwc.inc ==== */
/* ==== begin src/kernels/depthwise_nchw.inc ==== */
/* Depthwise conv on NCHW (when its input comes NCHW: the graph's input, an NCHW-only op),
   vectorized along output rows; a template of the vector layer (depthwise.c instantiates it).
   Units are (image, channel) planes. Three kernels:
   - 3x3 / 5x5, row dilation 1, row stride 1 or 2, column stride 1 (MobileNet's): straight
     from the input, tiles of 4 rows (8 with 16-float vectors) x 1 vector with the weights in
     registers (depthwise_nchw_taps.inc); the vectors that cross the row's ends load under
     masks, rows above or below the plane read a zero row.
   - the same kernels with another column stride: from a band buffer (next), 4-row tiles.
   - anything else: a plane is cut into bands of output rows; a band's input rows are copied
     into a buffer (in L1), zero-padded and split into sw column phases (phase p holds padded
     columns p, p + sw, ...), so that for any stride, dilation or padding the VW outputs from
     column ow need, for each tap, one contiguous load at a fixed offset from the tile. A
     tile is 8 output vectors (rows x vectors = 1x8, 2x4, 4x2 or 8x1, as the row is wide),
     each tap one broadcast weight and 8 FMAs (depthwise_nchw_tiles.inc).
   Each runs the epilogue on the registers before the one store (masked at the plane's
   edges). The loop order (row tiles outer, vectors inner) matters most: the tile's input and
   output rows stay in L1. */

/* One buffer row: input row x (NULL: a padding row) as padded columns in sw phases. A row
   writes its input columns (and zeros past them) and nothing else: the padding, zeroed once,
   stays zero. Only the phase columns below fill matter. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__dwc_row)(float *dst, const float *x,
                                                       const fuse__dw_args *d, int64_t wq,
                                                       int64_t fill) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t i, p, sw = d->sw, pl = d->pl, W = sw * fill - pl, n;
  if (W > d->W) W = d->W; /* the input columns that land below fill */
  if (!x) {
    for (p = 0; p < sw; p++)
      for (i = 0; i < fill; i += vw) FUSE__V_STORE_ALIGNED(dst + p * wq + i, FUSE__V_ZERO());
  } else if (sw == 1) {
    for (i = 0; i + vw <= W; i += vw) FUSE__V_STORE(dst + pl + i, FUSE__V_LOAD(x + i));
    if (i < W) FUSE__V_STORE(dst + pl + i, FUSE__V_LOAD_MASK(x + i, FUSE__V_MASK_FIRST(W - i)));
  } else if (sw == 2) { /* x[2k] to padded column 2k + pl, x[2k + 1] to 2k + 1 + pl */
    float *ev = dst + (pl & 1) * wq + pl / 2, *od = dst + ((pl + 1) & 1) * wq + (pl + 1) / 2;
    for (i = 0; 2 * i < W; i += vw) {
      FUSE__VEC v0, v1;
      if (2 * i + 2 * vw <= W) {
        v0 = FUSE__V_LOAD(x + 2 * i), v1 = FUSE__V_LOAD(x + 2 * i + vw);
      } else {
        n = W - 2 * i;
        v0 = FUSE__V_LOAD_MASK(x + 2 * i, FUSE__V_MASK_FIRST(n));
        v1 = n > vw ? FUSE__V_LOAD_MASK(x + 2 * i + vw, FUSE__V_MASK_FIRST(n - vw))
                    : FUSE__V_ZERO();
      }
      FUSE__V_STORE(ev + i, FUSE__V_EVENS(v0, v1));
      FUSE__V_STORE(od + i, FUSE__V_ODDS(v0, v1));
    }
  } else {
    for (i = 0; i < W; i++) dst[(i + pl) % sw * wq + (i + pl) / sw] = x[i];
  }
}

/* The epilogue of a tile of rows x vecs output vectors, acc[r * vecs + v] at output
   tile + r * OW + v * VW of the plane: each post-op over the whole tile in turn, then the
   stores. At the plane's edge (!whole) only rows below rows_left exist and vector v stores
   under cm[v]. */
FUSE__VEC_TARGET static FUSE__TILE_INLINE void FUSE__VEC_FN(fuse__dwc_finish)(
    FUSE__VEC *acc, int rows, int vecs, const fuse__dw_args *d, int64_t tile, int whole,
    int64_t rows_left, const FUSE__VEC_MASK *cm) {
  float *yp = d->y + tile;
  const int64_t OW = d->OW; /* a local: the stores could change d->OW for all the compiler knows */
  int q, r, v;
  if (whole) {
    const FUSE__VEC_MASK all = FUSE__V_MASK_FIRST(FUSE__VEC_WIDTH);
    for (q = 0; q < d->num_post; q++) {
      const fuse_post_op *op = &d->post[q];
      const float *rp = d->residual[q] ? d->residual[q] + tile : yp; /* read by ADD only */
      FUSE__UNROLL for (r = 0; r < rows; r++)
        FUSE__UNROLL for (v = 0; v < vecs; v++)
          acc[r * vecs + v] = FUSE__VEC_FN(fuse__post_apply)(
              acc[r * vecs + v], op, rp + r * OW + v * FUSE__VEC_WIDTH, all);
    }
    FUSE__UNROLL for (r = 0; r < rows; r++)
      FUSE__UNROLL for (v = 0; v < vecs; v++)
        FUSE__V_STORE(yp + r * OW + v * FUSE__VEC_WIDTH, acc[r * vecs + v]);
    return;
  }
  for (q = 0; q < d->num_post; q++) {
    const fuse_post_op *op = &d->post[q];
    const float *rp = d->residual[q] ? d->residual[q] + tile : yp;
    FUSE__UNROLL for (r = 0; r < rows; r++)
      FUSE__UNROLL for (v = 0; v < vecs; v++)
        if (r < rows_left)
          acc[r * vecs + v] = FUSE__VEC_FN(fuse__post_apply)(
              acc[r * vecs + v], op, rp + r * OW + v * FUSE__VEC_WIDTH, cm[v]);
  }
  FUSE__UNROLL for (r = 0; r < rows; r++)
    FUSE__UNROLL for (v = 0; v < vecs; v++)
      if (r < rows_left)
        FUSE__V_STORE_MASK(yp + r * OW + v * FUSE__VEC_WIDTH, cm[v], acc[r * vecs + v]);
}

/* The load masks of the vector from output column o, per tap column (k of them): the lanes
   whose input is inside the row. */
FUSE__VEC_TARGET static inline void FUSE__VEC_FN(fuse__dwc_masks)(FUSE__VEC_MASK *m, int k,
                                                                int64_t o,
                                                                const fuse__dw_args *d) {
  int i;
  for (i = 0; i < k; i++) {
    int64_t a = o - d->pl + i * d->dw, lo = a < 0 ? -a : 0, hi = d->W - a;
    lo = lo > FUSE__VEC_WIDTH ? FUSE__VEC_WIDTH : lo;
    hi = hi < lo ? lo : hi > FUSE__VEC_WIDTH ? FUSE__VEC_WIDTH : hi;
    m[i] = FUSE__V_MASK_RANGE(lo, hi);
  }
}

/* the band tiles of 8, 4, 2 and 1 vectors per row */
#define FUSE__DWC_VECS 8
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_8)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */
#define FUSE__DWC_VECS 4
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_4)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */
#define FUSE__DWC_VECS 2
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_2)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */
#define FUSE__DWC_VECS 1
#define FUSE__DWC_TILES_FN FUSE__VEC_FN(fuse__dwc_tiles_1)
/* ==== begin src/kernels/depthwise_nchw_tiles.inc ==== */
/* The band tiles of the NCHW depthwise kernel (depthwise_nchw.inc), FUSE__DWC_VECS vectors
   per row x 8 / FUSE__DWC_VECS rows, named FUSE__DWC_TILES_FN: every tile of band b0 of a
   plane, each tap one broadcast weight (wc[t * Cp]) and 8 FMAs on loads at the tap's offset
   off[t] in the band buffer. */
FUSE__VEC_TARGET static void FUSE__DWC_TILES_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                                const float *buf, const int64_t *off,
                                                const float *wc, FUSE__VEC bias, int64_t plane,
                                                int64_t b0) {
  const int vecs = FUSE__DWC_VECS, rows = 8 / FUSE__DWC_VECS;
  const int64_t vw = FUSE__VEC_WIDTH, rstep = d->sh * g->rs, taps = (int64_t)d->KH * d->KW;
  int64_t ow0, r0, t;
  int s, v;
  for (ow0 = 0; ow0 < d->OW; ow0 += vecs * vw) {
    FUSE__VEC_MASK cm[FUSE__DWC_VECS]; /* the valid lanes of the tile's vectors */
    for (v = 0; v < vecs; v++) cm[v] = FUSE__V_MASK_FIRST(d->OW - ow0 - v * vw);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += rows) {
      const float *bp = buf + r0 * rstep + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[8];
      FUSE__UNROLL for (s = 0; s < 8; s++) acc[s] = bias;
      for (t = 0; t < taps; t++) {
        const float *tp = bp + off[t]; /* the tap's first input vector */
        FUSE__VEC wv = FUSE__V_SET1(wc[t * d->Cp]);
        FUSE__UNROLL for (s = 0; s < 8; s++)
          acc[s] = FUSE__V_FMA(FUSE__V_LOAD(tp + (s / vecs) * rstep + (s % vecs) * vw), wv, acc[s]);
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, rows, vecs, d, plane + oh0 * d->OW + ow0,
                                     oh0 + rows <= d->OH && ow0 + vecs * vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}
#undef FUSE__DWC_VECS
#undef FUSE__DWC_TILES_FN
/* ==== end src/kernels/depthwise_nchw_tiles.inc ==== */

/* the register kernels: 3x3 and 5x5, row stride 1 and 2 */
#define FUSE__DWC_K 3
#define FUSE__DWC_STRIDE 1
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_3x3_s1)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_3x3_s1)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */
#define FUSE__DWC_K 3
#define FUSE__DWC_STRIDE 2
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_3x3_s2)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_3x3_s2)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */
#define FUSE__DWC_K 5
#define FUSE__DWC_STRIDE 1
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_5x5_s1)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_5x5_s1)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */
#define FUSE__DWC_K 5
#define FUSE__DWC_STRIDE 2
#define FUSE__DWC_BAND_FN FUSE__VEC_FN(fuse__dwc_band_5x5_s2)
#define FUSE__DWC_DIRECT_FN FUSE__VEC_FN(fuse__dwc_direct_5x5_s2)
/* ==== begin src/kernels/depthwise_nchw_taps.inc ==== */
/* The register kernels of the NCHW depthwise conv (depthwise_nchw.inc) for a FUSE__DWC_K x
   FUSE__DWC_K kernel with row dilation 1 and row stride FUSE__DWC_STRIDE: a tile is R output
   rows x 1 vector with the kernel's weights held in registers; each input row the tile reads
   is loaded once per tap column and feeds every output row that uses it (3x3 stride 1 on 4
   rows: 18 loads for 36 FMAs, where an 8-slot tile needs 9 loads per 8 FMAs). K, the stride
   and R are constants: the unrolled loops keep only the taps that exist.
   FUSE__DWC_BAND_FN: 4-row tiles of band b0 from the band buffer (any column stride).
   FUSE__DWC_DIRECT_FN: column stride 1, planes u0 .. u1 straight from the input, tiles of 8
   rows on 16-float vectors (4 otherwise). */
#define FUSE__DWC_BAND_ROWS 4 /* 8 rows measured slower here */
#define FUSE__DWC_DIRECT_ROWS (FUSE__VEC_WIDTH == 16 ? 8 : 4)
/* input rows of a tile of R rows */
#define FUSE__DWC_SPAN(R) (((R) - 1) * FUSE__DWC_STRIDE + FUSE__DWC_K)

FUSE__VEC_TARGET static void FUSE__DWC_BAND_FN(const fuse__dw_args *d, const fuse__dwc_geom *g,
                                               const float *buf, const int64_t *off,
                                               const float *wc, FUSE__VEC bias, int64_t plane,
                                               int64_t b0) {
  const int64_t vw = FUSE__VEC_WIDTH;
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  int64_t co[FUSE__DWC_K], ow0, r0; /* co: tap column kw's offset in the buffer */
  int j, r, kh, kw;
  FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
    FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
      w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
  for (kw = 0; kw < FUSE__DWC_K; kw++) co[kw] = off[kw];
  for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
    FUSE__VEC_MASK cm[1]; /* the output lanes of the vector */
    cm[0] = FUSE__V_MASK_FIRST(d->OW - ow0);
    for (r0 = 0; r0 < g->band && b0 + r0 < d->OH; r0 += FUSE__DWC_BAND_ROWS) {
      const float *p = buf + r0 * FUSE__DWC_STRIDE * g->rs + ow0;
      int64_t oh0 = b0 + r0;
      FUSE__VEC acc[FUSE__DWC_BAND_ROWS];
      FUSE__UNROLL for (r = 0; r < FUSE__DWC_BAND_ROWS; r++) acc[r] = bias;
      /* input row j, tap column kw, kernel row kh: output row (j - kh) / stride */
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_BAND_ROWS); j++) {
        FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
          FUSE__VEC xv = FUSE__V_LOAD(p + j * g->rs + co[kw]);
          FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
            int o = (j - kh) / FUSE__DWC_STRIDE;
            if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_BAND_ROWS)
              acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
          }
        }
      }
      FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_BAND_ROWS, 1, d, plane + oh0 * d->OW + ow0,
                                     oh0 + FUSE__DWC_BAND_ROWS <= d->OH && ow0 + vw <= d->OW,
                                     d->OH - oh0, cm);
    }
  }
}

FUSE__VEC_TARGET static void FUSE__DWC_DIRECT_FN(const fuse__dw_args *d, int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH, last = (d->OW - 1) / vw * vw;
  const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */
  /* input row j of the tile (a zero row outside the plane) at the vector's first column */
  const float *rw[FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS)];
  FUSE__VEC w[FUSE__DWC_K][FUSE__DWC_K];
  FUSE__VEC_MASK mk[3][FUSE__DWC_K]; /* per tap column: the first vector, the last, another */
  FUSE__VEC_MASK cm[2]; /* the output lanes of the last vector of a row, of the others */
  int64_t u, r0, ow0;
  int j, r, kh, kw;
  FUSE__VEC_FN(fuse__dwc_masks)(mk[0], FUSE__DWC_K, 0, d);
  FUSE__VEC_FN(fuse__dwc_masks)(mk[1], FUSE__DWC_K, last, d);
  cm[0] = FUSE__V_MASK_FIRST(d->OW - last), cm[1] = FUSE__V_MASK_FIRST(vw);
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++)
      FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++)
        w[kh][kw] = FUSE__V_SET1(wc[(kh * FUSE__DWC_K + kw) * d->Cp]);
    for (r0 = 0; r0 < d->OH; r0 += FUSE__DWC_DIRECT_ROWS) {
      int64_t ihb = r0 * FUSE__DWC_STRIDE - d->pt;
      FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++)
        rw[j] = (ihb + j >= 0 && ihb + j < d->H ? xp + (ihb + j) * d->W : zrow) - d->pl;
      for (ow0 = 0; ow0 < d->OW; ow0 += vw) {
        int64_t c0 = ow0 - d->pl;
        FUSE__VEC acc[FUSE__DWC_DIRECT_ROWS];
        FUSE__UNROLL for (r = 0; r < FUSE__DWC_DIRECT_ROWS; r++) acc[r] = bias;
        if (c0 < 0 || c0 + (FUSE__DWC_K - 1) * d->dw + vw > d->W) { /* crosses a row's end */
          const FUSE__VEC_MASK *mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];
          if (ow0 != 0 && ow0 != last) FUSE__VEC_FN(fuse__dwc_masks)(mk[2], FUSE__DWC_K, ow0, d);
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD_MASK(rw[j] + kw * d->dw, mp[kw]);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        } else {
          FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) {
            FUSE__UNROLL for (kw = 0; kw < FUSE__DWC_K; kw++) {
              FUSE__VEC xv = FUSE__V_LOAD(rw[j] + kw * d->dw);
              FUSE__UNROLL for (kh = 0; kh < FUSE__DWC_K; kh++) {
                int o = (j - kh) / FUSE__DWC_STRIDE;
                if (j >= kh && (j - kh) % FUSE__DWC_STRIDE == 0 && o < FUSE__DWC_DIRECT_ROWS)
                  acc[o] = FUSE__V_FMA(xv, w[kh][kw], acc[o]);
              }
            }
          }
        }
        FUSE__VEC_FN(fuse__dwc_finish)(acc, FUSE__DWC_DIRECT_ROWS, 1, d,
                                       plane + r0 * d->OW + ow0,
                                       r0 + FUSE__DWC_DIRECT_ROWS <= d->OH && ow0 + vw <= d->OW,
                                       d->OH - r0, ow0 == last ? &cm[0] : &cm[1]);
        FUSE__UNROLL for (j = 0; j < FUSE__DWC_SPAN(FUSE__DWC_DIRECT_ROWS); j++) rw[j] += vw;
      }
    }
  }
}
#undef FUSE__DWC_BAND_ROWS
#undef FUSE__DWC_DIRECT_ROWS
#undef FUSE__DWC_SPAN
#undef FUSE__DWC_K
#undef FUSE__DWC_STRIDE
#undef FUSE__DWC_BAND_FN
#undef FUSE__DWC_DIRECT_FN
/* ==== end src/kernels/depthwise_nchw_taps.inc ==== */

/* planes u0 .. u1 of an NCHW depthwise step; scratch: the chunk's tap offsets and band buffer */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__dwc)(const fuse__dw_args *d, void *scratch,
                                                   int64_t u0, int64_t u1) {
  const int64_t vw = FUSE__VEC_WIDTH;
  fuse__dwc_geom g;
  int64_t u, b0, j, t, taps = (int64_t)d->KH * d->KW, fill;
  int64_t *off = (int64_t *)scratch;
  float *buf = /* after the tap offsets, 64-byte aligned */
      (float *)((unsigned char *)scratch + (taps * (int64_t)sizeof(int64_t) + 63) / 64 * 64);
  /* the register kernels: 3x3 or 5x5, row dilation 1, row stride 1 or 2 */
  int shape = d->KH == d->KW && (d->KH == 3 || d->KH == 5) && d->dh == 1 && d->sh <= 2
                  ? d->KH * 10 + (int)d->sh : 0;
  if (shape && d->sw == 1) { /* every plane straight from the input */
    switch (shape) {
    case 31: FUSE__VEC_FN(fuse__dwc_direct_3x3_s1)(d, u0, u1); break;
    case 32: FUSE__VEC_FN(fuse__dwc_direct_3x3_s2)(d, u0, u1); break;
    case 51: FUSE__VEC_FN(fuse__dwc_direct_5x5_s1)(d, u0, u1); break;
    default: FUSE__VEC_FN(fuse__dwc_direct_5x5_s2)(d, u0, u1); break;
    }
    return;
  }
  fuse__dwc_geometry(vw, d->OH, d->OW, d->KH, d->KW, d->sh, d->sw, d->dh, d->dw, &g);
  /* valid outputs read phase columns below fill; the rest stays zero from here */
  fill = (d->OW + (d->KW - 1) * d->dw / d->sw + vw - 1) / vw * vw;
  if (fill > g.wq) fill = g.wq;
  for (j = 0; j < g.rows * g.rs; j += vw) FUSE__V_STORE_ALIGNED(buf + j, FUSE__V_ZERO());
  for (t = 0; t < taps; t++) { /* tap kh, kw: buffer row kh * dh, padded column kw * dw */
    int64_t cw = (t % d->KW) * d->dw;
    off[t] = (t / d->KW) * d->dh * g.rs + (cw % d->sw) * g.wq + cw / d->sw;
  }
  for (u = u0; u < u1; u++) {
    int64_t c = u % d->C, plane = u * d->OH * d->OW;
    const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;
    FUSE__VEC bias = FUSE__V_SET1(d->bias ? d->bias[c] : 0.0f);
    for (b0 = 0; b0 < d->OH; b0 += g.band) {
      for (j = 0; j < g.rows; j++) {
        int64_t ih = b0 * d->sh - d->pt + j;
        FUSE__VEC_FN(fuse__dwc_row)(buf + j * g.rs, ih >= 0 && ih < d->H ? xp + ih * d->W : NULL,
                                    d, g.wq, fill);
      }
      switch (shape ? shape : (int)g.nb) {
      case 31: FUSE__VEC_FN(fuse__dwc_band_3x3_s1)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 32: FUSE__VEC_FN(fuse__dwc_band_3x3_s2)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 51: FUSE__VEC_FN(fuse__dwc_band_5x5_s1)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 52: FUSE__VEC_FN(fuse__dwc_band_5x5_s2)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 8: FUSE__VEC_FN(fuse__dwc_tiles_8)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 4: FUSE__VEC_FN(fuse__dwc_tiles_4)(d, &g, buf, off, wc, bias, plane, b0); break;
      case 2: FUSE__VEC_FN(fuse__dwc_tiles_2)(d, &g, buf, off, wc, bias, plane, b0); break;
      default: FUSE__VEC_FN(fuse__dwc_tiles_1)(d, &g, buf, off, wc, bias, plane, b0); break;
      }
    }
  }
}
/* ==== end src/kernels/depthwise_nchw.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
/* ==== end src/kernels/depthwise.c ==== */
/* ==== begin src/kernels/pool_eltwise.c ==== */
/* ------------------------------------------- pool, element-wise, transpose kernels -- */
/* Plain-C templates instantiated once per vector layer: fuse__pool_* (pool.inc),
   fuse__elt_* (eltwise.inc), fuse__transpose_avx2 / _scalar (transpose.inc: the AVX-512
   CPUs take the AVX2 one, whose 8 x 8 blocks are as fast as the conversions need). */
struct fuse__pool_args {
  const float *x;
  float *y;
  const fuse_pool2d_attrs *a;
  int is_max;
  int64_t C, H, W, OH, OW;
  void (*fn)(const fuse__pool_args *d, int64_t r0, int64_t r1);
};

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
/* ==== begin src/kernels/vec_avx512.h ==== */
/* The AVX-512 vector layer: 16 floats, __mmask16 lane masks. Every kernel template
   (the .inc files in src/kernels) is written against the FUSE__VEC / FUSE__V_* names below and compiled
   once per layer (vec_scalar.h is the reference semantics of each operation); vec_end.h
   undefines them. The functions carry the target attribute, so a unit built with plain -O2
   still has this instance, taken when fuse_cpu_isa() finds AVX-512 at run time. */
#define FUSE__VEC_ISA FUSE_ISA_AVX512
#define FUSE__VEC_FN(name) name##_avx512 /* the instance's name */
#define FUSE__VEC_TARGET __attribute__((target("avx512f")))
#define FUSE__VEC __m512
#define FUSE__VEC_MASK __mmask16
#define FUSE__VEC_WIDTH 16
#define FUSE__V_ZERO() _mm512_setzero_ps()
#define FUSE__V_SET1(x) _mm512_set1_ps(x)
#define FUSE__V_LOAD(p) _mm512_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm512_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm512_store_ps(p, v) /* p 64-byte aligned */
/* lanes [0, n) (n may be anything: clamped to 0 .. 16) and [a, b) (0 <= a <= b <= 16) */
#define FUSE__V_MASK_FIRST(n)                                                                \
  ((__mmask16)((n) >= 16 ? 0xffffu : (n) <= 0 ? 0u : (1u << (unsigned)(n)) - 1u))
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  ((__mmask16)(((1u << (unsigned)(b)) - 1u) & ~((1u << (unsigned)(a)) - 1u)))
#define FUSE__V_LOAD_MASK(p, m) _mm512_maskz_loadu_ps(m, p) /* zeros outside m */
#define FUSE__V_STORE_MASK(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c) /* a * b + c */
#define FUSE__V_ADD(a, b) _mm512_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm512_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm512_mul_ps(a, b)
/* a > b ? a : b and a < b ? a : b (b where either is NaN); maskz: gcc 12 warns on max_ps */
#define FUSE__V_MAX(a, b) _mm512_maskz_max_ps((__mmask16)-1, a, b)
#define FUSE__V_MIN(a, b) _mm512_maskz_min_ps((__mmask16)-1, a, b)
/* x < t ? t : x and x > t ? t : x (x where either is NaN) */
#define FUSE__V_BELOW(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_LT_OQ), x, t)
#define FUSE__V_ABOVE(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_GT_OQ), x, t)
/* x where x > m (x < m) or x is NaN, else m: max / min that keep a NaN of x */
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_LT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
/* the even (odd) floats of the 32 in a, b: a0 a2 .. a14 b0 .. b14 */
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b)
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b)
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
/* ==== end src/kernels/vec_avx512.h ==== */
/* ==== begin src/kernels/pool.inc ==== */
/* Max / average pool on NHWC, vectorized over channels, output rows r0 .. r1 (image-major);
   a template of the vector layer (pool_eltwise.c instantiates it). Max keeps a NaN (x > m or
   x unordered takes x), as the reference does; average divides by the window as the
   reference clips it. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__pool)(const fuse__pool_args *d, int64_t r0,
                                                    int64_t r1) {
  const fuse_pool2d_attrs *a = d->a;
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t row, ow, c0, C = d->C, ih, iw;
  for (row = r0; row < r1; row++) {
    int64_t n = row / d->OH, oh = row % d->OH, h0 = oh * a->strides[0] - a->padding[0];
    const float *xn = d->x + n * d->H * d->W * C;
    for (ow = 0; ow < d->OW; ow++) {
      int64_t w0 = ow * a->strides[1] - a->padding[1];
      float *yp = d->y + (row * d->OW + ow) * C;
      if (d->is_max) {
        int kh, kw, kh0, kh1, kw0, kw1;
        fuse__taps(h0, a->dilation[0], a->kernel[0], d->H, &kh0, &kh1);
        fuse__taps(w0, a->dilation[1], a->kernel[1], d->W, &kw0, &kw1);
        for (c0 = 0; c0 < C; c0 += vw) {
          FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(C - c0);
          FUSE__VEC v = FUSE__V_SET1(-HUGE_VALF);
          for (kh = kh0; kh < kh1; kh++) {
            ih = h0 + (int64_t)kh * a->dilation[0];
            for (kw = kw0; kw < kw1; kw++) {
              iw = w0 + (int64_t)kw * a->dilation[1];
              v = FUSE__V_MAX_NAN(FUSE__V_LOAD_MASK(xn + (ih * d->W + iw) * C + c0, m), v);
            }
          }
          FUSE__V_STORE_MASK(yp + c0, m, v);
        }
      } else {
        int64_t h1 = h0 + a->kernel[0], w1 = w0 + a->kernel[1], hs = h0, ws = w0, area;
        FUSE__VEC inv;
        if (h1 > d->H + a->padding[2]) h1 = d->H + a->padding[2];
        if (w1 > d->W + a->padding[3]) w1 = d->W + a->padding[3];
        area = (h1 - hs) * (w1 - ws);
        if (hs < 0) hs = 0;
        if (ws < 0) ws = 0;
        if (h1 > d->H) h1 = d->H;
        if (w1 > d->W) w1 = d->W;
        if (!a->count_include_pad) area = (h1 - hs) * (w1 - ws);
        inv = FUSE__V_SET1((float)(1.0 / (double)area));
        for (c0 = 0; c0 < C; c0 += vw) {
          FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(C - c0);
          FUSE__VEC sum = FUSE__V_ZERO();
          for (ih = hs; ih < h1; ih++)
            for (iw = ws; iw < w1; iw++)
              sum = FUSE__V_ADD(sum, FUSE__V_LOAD_MASK(xn + (ih * d->W + iw) * C + c0, m));
          FUSE__V_STORE_MASK(yp + c0, m, FUSE__V_MUL(sum, inv));
        }
      }
    }
  }
}
/* ==== end src/kernels/pool.inc ==== */
/* ==== begin src/kernels/eltwise.inc ==== */
/* Element-wise rows, a template of the vector layer (pool_eltwise.c instantiates it):
   y[i] = op(a[i * sa], b[i * sb]) with sa, sb 0 or 1 (add, sub, mul, maximum, minimum: a NaN
   in a is kept, as in the reference), relu and clip of a. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__elt)(int op, float *y, const float *a, int sa,
                                                   const float *b, int sb, int64_t n, float lo,
                                                   float hi) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t i;
  for (i = 0; i < n; i += vw) {
    FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(n - i);
    FUSE__VEC x = sa ? FUSE__V_LOAD_MASK(a + i, m) : FUSE__V_SET1(a[0]), v, z;
    z = op == FUSE__OP_RELU || op == FUSE__OP_CLIP ? x
        : sb ? FUSE__V_LOAD_MASK(b + i, m) : FUSE__V_SET1(b[0]);
    switch (op) {
    case FUSE__OP_ADD: v = FUSE__V_ADD(x, z); break;
    case FUSE__OP_SUB: v = FUSE__V_SUB(x, z); break;
    case FUSE__OP_MUL: v = FUSE__V_MUL(x, z); break;
    case FUSE__OP_MAXIMUM: v = FUSE__V_MAX_NAN(x, z); break;
    case FUSE__OP_MINIMUM: v = FUSE__V_MIN_NAN(x, z); break;
    case FUSE__OP_RELU: v = FUSE__V_BELOW(x, FUSE__V_ZERO()); break; /* x < 0 ? 0 : x */
    default: v = FUSE__V_ABOVE(FUSE__V_BELOW(x, FUSE__V_SET1(lo)), FUSE__V_SET1(hi)); break;
    }
    FUSE__V_STORE_MASK(y + i, m, v);
  }
}
/* ==== end src/kernels/eltwise.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
#endif

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* The AVX2 layer's in-register transpose of the 8 x 8 floats at x (rows ldx apart) into y
   (rows ldy apart), for transpose.inc. */
__attribute__((target("avx2,fma"))) static inline void fuse__transpose_block_avx2(const float *x,
                                                                                  int64_t ldx,
                                                                                  float *y,
                                                                                  int64_t ldy) {
  __m256 a0 = _mm256_loadu_ps(x), a1 = _mm256_loadu_ps(x + ldx);
  __m256 a2 = _mm256_loadu_ps(x + 2 * ldx), a3 = _mm256_loadu_ps(x + 3 * ldx);
  __m256 a4 = _mm256_loadu_ps(x + 4 * ldx), a5 = _mm256_loadu_ps(x + 5 * ldx);
  __m256 a6 = _mm256_loadu_ps(x + 6 * ldx), a7 = _mm256_loadu_ps(x + 7 * ldx);
  __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
  __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
  __m256 t4 = _mm256_unpacklo_ps(a4, a5), t5 = _mm256_unpackhi_ps(a4, a5);
  __m256 t6 = _mm256_unpacklo_ps(a6, a7), t7 = _mm256_unpackhi_ps(a6, a7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  _mm256_storeu_ps(y, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(y + ldy, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(y + 2 * ldy, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(y + 3 * ldy, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(y + 4 * ldy, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(y + 5 * ldy, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(y + 6 * ldy, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(y + 7 * ldy, _mm256_permute2f128_ps(u3, u7, 0x31));
}
/* ==== begin src/kernels/vec_avx2.h ==== */
/* The AVX2 + FMA vector layer: 8 floats, lane masks as __m256i (all ones = lane on). The same
   operations as vec_avx512.h; see there. */
#define FUSE__VEC_ISA FUSE_ISA_AVX2
#define FUSE__VEC_FN(name) name##_avx2
#define FUSE__VEC_TARGET __attribute__((target("avx2,fma")))
#define FUSE__VEC __m256
#define FUSE__VEC_MASK __m256i
#define FUSE__VEC_WIDTH 8
#define FUSE__V_ZERO() _mm256_setzero_ps()
#define FUSE__V_SET1(x) _mm256_set1_ps(x)
#define FUSE__V_LOAD(p) _mm256_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm256_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm256_store_ps(p, v)
#define FUSE__V_LANES _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define FUSE__V_MASK_FIRST(n)                                                                \
  _mm256_cmpgt_epi32(_mm256_set1_epi32((int)((n) >= 8 ? 8 : (n) <= 0 ? 0 : (n))), FUSE__V_LANES)
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)(a)), FUSE__V_LANES),        \
                      _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(b)), FUSE__V_LANES))
#define FUSE__V_LOAD_MASK(p, m) _mm256_maskload_ps(p, m)
#define FUSE__V_STORE_MASK(p, m, v) _mm256_maskstore_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FUSE__V_ADD(a, b) _mm256_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm256_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm256_mul_ps(a, b)
#define FUSE__V_MAX(a, b) _mm256_max_ps(a, b)
#define FUSE__V_MIN(a, b) _mm256_min_ps(a, b)
#define FUSE__V_BELOW(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_LT_OQ))
#define FUSE__V_ABOVE(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_GT_OQ))
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_LT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8))
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8))
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
/* ==== end src/kernels/vec_avx2.h ==== */
#define FUSE__V_TRANSPOSE_BLOCK(x, ldx, y, ldy) fuse__transpose_block_avx2(x, ldx, y, ldy)
/* ==== begin src/kernels/pool.inc ==== */
/* Max / average pool on NHWC, vectorized over channels, output rows r0 .. r1 (image-major);
   a template of the vector layer (pool_eltwise.c instantiates it). Max keeps a NaN (x > m or
   x unordered takes x), as the reference does; average divides by the window as the
   reference clips it. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__pool)(const fuse__pool_args *d, int64_t r0,
                                                    int64_t r1) {
  const fuse_pool2d_attrs *a = d->a;
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t row, ow, c0, C = d->C, ih, iw;
  for (row = r0; row < r1; row++) {
    int64_t n = row / d->OH, oh = row % d->OH, h0 = oh * a->strides[0] - a->padding[0];
    const float *xn = d->x + n * d->H * d->W * C;
    for (ow = 0; ow < d->OW; ow++) {
      int64_t w0 = ow * a->strides[1] - a->padding[1];
      float *yp = d->y + (row * d->OW + ow) * C;
      if (d->is_max) {
        int kh, kw, kh0, kh1, kw0, kw1;
        fuse__taps(h0, a->dilation[0], a->kernel[0], d->H, &kh0, &kh1);
        fuse__taps(w0, a->dilation[1], a->kernel[1], d->W, &kw0, &kw1);
        for (c0 = 0; c0 < C; c0 += vw) {
          FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(C - c0);
          FUSE__VEC v = FUSE__V_SET1(-HUGE_VALF);
          for (kh = kh0; kh < kh1; kh++) {
            ih = h0 + (int64_t)kh * a->dilation[0];
            for (kw = kw0; kw < kw1; kw++) {
              iw = w0 + (int64_t)kw * a->dilation[1];
              v = FUSE__V_MAX_NAN(FUSE__V_LOAD_MASK(xn + (ih * d->W + iw) * C + c0, m), v);
            }
          }
          FUSE__V_STORE_MASK(yp + c0, m, v);
        }
      } else {
        int64_t h1 = h0 + a->kernel[0], w1 = w0 + a->kernel[1], hs = h0, ws = w0, area;
        FUSE__VEC inv;
        if (h1 > d->H + a->padding[2]) h1 = d->H + a->padding[2];
        if (w1 > d->W + a->padding[3]) w1 = d->W + a->padding[3];
        area = (h1 - hs) * (w1 - ws);
        if (hs < 0) hs = 0;
        if (ws < 0) ws = 0;
        if (h1 > d->H) h1 = d->H;
        if (w1 > d->W) w1 = d->W;
        if (!a->count_include_pad) area = (h1 - hs) * (w1 - ws);
        inv = FUSE__V_SET1((float)(1.0 / (double)area));
        for (c0 = 0; c0 < C; c0 += vw) {
          FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(C - c0);
          FUSE__VEC sum = FUSE__V_ZERO();
          for (ih = hs; ih < h1; ih++)
            for (iw = ws; iw < w1; iw++)
              sum = FUSE__V_ADD(sum, FUSE__V_LOAD_MASK(xn + (ih * d->W + iw) * C + c0, m));
          FUSE__V_STORE_MASK(yp + c0, m, FUSE__V_MUL(sum, inv));
        }
      }
    }
  }
}
/* ==== end src/kernels/pool.inc ==== */
/* ==== begin src/kernels/eltwise.inc ==== */
/* Element-wise rows, a template of the vector layer (pool_eltwise.c instantiates it):
   y[i] = op(a[i * sa], b[i * sb]) with sa, sb 0 or 1 (add, sub, mul, maximum, minimum: a NaN
   in a is kept, as in the reference), relu and clip of a. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__elt)(int op, float *y, const float *a, int sa,
                                                   const float *b, int sb, int64_t n, float lo,
                                                   float hi) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t i;
  for (i = 0; i < n; i += vw) {
    FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(n - i);
    FUSE__VEC x = sa ? FUSE__V_LOAD_MASK(a + i, m) : FUSE__V_SET1(a[0]), v, z;
    z = op == FUSE__OP_RELU || op == FUSE__OP_CLIP ? x
        : sb ? FUSE__V_LOAD_MASK(b + i, m) : FUSE__V_SET1(b[0]);
    switch (op) {
    case FUSE__OP_ADD: v = FUSE__V_ADD(x, z); break;
    case FUSE__OP_SUB: v = FUSE__V_SUB(x, z); break;
    case FUSE__OP_MUL: v = FUSE__V_MUL(x, z); break;
    case FUSE__OP_MAXIMUM: v = FUSE__V_MAX_NAN(x, z); break;
    case FUSE__OP_MINIMUM: v = FUSE__V_MIN_NAN(x, z); break;
    case FUSE__OP_RELU: v = FUSE__V_BELOW(x, FUSE__V_ZERO()); break; /* x < 0 ? 0 : x */
    default: v = FUSE__V_ABOVE(FUSE__V_BELOW(x, FUSE__V_SET1(lo)), FUSE__V_SET1(hi)); break;
    }
    FUSE__V_STORE_MASK(y + i, m, v);
  }
}
/* ==== end src/kernels/eltwise.inc ==== */
/* ==== begin src/kernels/transpose.inc ==== */
/* y[j][i] = x[i][j] for a rows x cols matrix (ldx floats between rows of x, ldy between rows
   of y), for the layout conversions; a template of the vector layer (pool_eltwise.c
   instantiates it where the layer has FUSE__V_TRANSPOSE_BLOCK, the in-register transpose of
   a square block of VW x VW floats, and for the scalar layer, whose block is one float).
   Bands of 256 rows of x (in L2), then VW columns at a time down the band: y is written VW
   rows at a time, each in one run; the ragged edges one float at a time. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__transpose)(const float *x, int64_t ldx, float *y,
                                                         int64_t ldy, int64_t rows,
                                                         int64_t cols) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t i0, j0, i, j, h, rb = rows / vw * vw, cb = cols / vw * vw;
  for (i0 = 0; i0 < rb; i0 += 256)
    for (j0 = 0; j0 < cb; j0 += vw)
      for (h = i0; h < i0 + 256 && h < rb; h += vw)
        FUSE__V_TRANSPOSE_BLOCK(x + h * ldx + j0, ldx, y + j0 * ldy + h, ldy);
  for (i = 0; i < rows; i++) /* the right edge of the whole blocks' rows, then the bottom rows */
    for (j = i < rb ? cb : 0; j < cols; j++) y[j * ldy + i] = x[i * ldx + j];
}
/* ==== end src/kernels/transpose.inc ==== */
#undef FUSE__V_TRANSPOSE_BLOCK
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
#endif

/* ==== begin src/kernels/vec_scalar.h ==== */
/* The scalar vector layer: one float, a lane mask is 0 or 1. It gives every kernel template a
   plain-C instance (the scalar twin) with the same tiles, packing and drivers as the SIMD
   ones: the fallback where no SIMD is compiled in (ARM today, FUSE_NO_SIMD), the oracle the
   SIMD instances are tested against, and the definition of what each operation means
   (NaN handling included; the SIMD layers match it lane by lane). */
#define FUSE__VEC_ISA FUSE_ISA_SCALAR
#define FUSE__VEC_FN(name) name##_scalar
#define FUSE__VEC_TARGET
#define FUSE__VEC float
#define FUSE__VEC_MASK int
#define FUSE__VEC_WIDTH 1
#define FUSE__V_ZERO() 0.0f
#define FUSE__V_SET1(x) ((float)(x))
#define FUSE__V_LOAD(p) (*(p))
#define FUSE__V_STORE(p, v) (*(p) = (v))
#define FUSE__V_STORE_ALIGNED(p, v) (*(p) = (v))
#define FUSE__V_MASK_FIRST(n) ((n) > 0)
#define FUSE__V_MASK_RANGE(a, b) ((a) <= 0 && (b) > 0)
#define FUSE__V_LOAD_MASK(p, m) ((m) ? *(p) : 0.0f)
#define FUSE__V_STORE_MASK(p, m, v) ((m) ? (void)(*(p) = (v)) : (void)0)
#define FUSE__V_FMA(a, b, c) ((a) * (b) + (c))
#define FUSE__V_ADD(a, b) ((a) + (b))
#define FUSE__V_SUB(a, b) ((a) - (b))
#define FUSE__V_MUL(a, b) ((a) * (b))
#define FUSE__V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FUSE__V_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FUSE__V_BELOW(x, t) ((x) < (t) ? (t) : (x))
#define FUSE__V_ABOVE(x, t) ((x) > (t) ? (t) : (x))
#define FUSE__V_MAX_NAN(x, m) ((x) > (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_MIN_NAN(x, m) ((x) < (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_EVENS(a, b) ((void)(b), (a))
#define FUSE__V_ODDS(a, b) ((void)(a), (b))
#define FUSE__V_PREFETCH_L2(p) ((void)(p))
/* ==== end src/kernels/vec_scalar.h ==== */
#define FUSE__V_TRANSPOSE_BLOCK(x, ldx, y, ldy) (*(y) = *(x))
/* ==== begin src/kernels/transpose.inc ==== */
/* y[j][i] = x[i][j] for a rows x cols matrix (ldx floats between rows of x, ldy between rows
   of y), for the layout conversions; a template of the vector layer (pool_eltwise.c
   instantiates it where the layer has FUSE__V_TRANSPOSE_BLOCK, the in-register transpose of
   a square block of VW x VW floats, and for the scalar layer, whose block is one float).
   Bands of 256 rows of x (in L2), then VW columns at a time down the band: y is written VW
   rows at a time, each in one run; the ragged edges one float at a time. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__transpose)(const float *x, int64_t ldx, float *y,
                                                         int64_t ldy, int64_t rows,
                                                         int64_t cols) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t i0, j0, i, j, h, rb = rows / vw * vw, cb = cols / vw * vw;
  for (i0 = 0; i0 < rb; i0 += 256)
    for (j0 = 0; j0 < cb; j0 += vw)
      for (h = i0; h < i0 + 256 && h < rb; h += vw)
        FUSE__V_TRANSPOSE_BLOCK(x + h * ldx + j0, ldx, y + j0 * ldy + h, ldy);
  for (i = 0; i < rows; i++) /* the right edge of the whole blocks' rows, then the bottom rows */
    for (j = i < rb ? cb : 0; j < cols; j++) y[j * ldy + i] = x[i * ldx + j];
}
/* ==== end src/kernels/transpose.inc ==== */
#undef FUSE__V_TRANSPOSE_BLOCK
/* ==== begin src/kernels/pool.inc ==== */
/* Max / average pool on NHWC, vectorized over channels, output rows r0 .. r1 (image-major);
   a template of the vector layer (pool_eltwise.c instantiates it). Max keeps a NaN (x > m or
   x unordered takes x), as the reference does; average divides by the window as the
   reference clips it. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__pool)(const fuse__pool_args *d, int64_t r0,
                                                    int64_t r1) {
  const fuse_pool2d_attrs *a = d->a;
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t row, ow, c0, C = d->C, ih, iw;
  for (row = r0; row < r1; row++) {
    int64_t n = row / d->OH, oh = row % d->OH, h0 = oh * a->strides[0] - a->padding[0];
    const float *xn = d->x + n * d->H * d->W * C;
    for (ow = 0; ow < d->OW; ow++) {
      int64_t w0 = ow * a->strides[1] - a->padding[1];
      float *yp = d->y + (row * d->OW + ow) * C;
      if (d->is_max) {
        int kh, kw, kh0, kh1, kw0, kw1;
        fuse__taps(h0, a->dilation[0], a->kernel[0], d->H, &kh0, &kh1);
        fuse__taps(w0, a->dilation[1], a->kernel[1], d->W, &kw0, &kw1);
        for (c0 = 0; c0 < C; c0 += vw) {
          FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(C - c0);
          FUSE__VEC v = FUSE__V_SET1(-HUGE_VALF);
          for (kh = kh0; kh < kh1; kh++) {
            ih = h0 + (int64_t)kh * a->dilation[0];
            for (kw = kw0; kw < kw1; kw++) {
              iw = w0 + (int64_t)kw * a->dilation[1];
              v = FUSE__V_MAX_NAN(FUSE__V_LOAD_MASK(xn + (ih * d->W + iw) * C + c0, m), v);
            }
          }
          FUSE__V_STORE_MASK(yp + c0, m, v);
        }
      } else {
        int64_t h1 = h0 + a->kernel[0], w1 = w0 + a->kernel[1], hs = h0, ws = w0, area;
        FUSE__VEC inv;
        if (h1 > d->H + a->padding[2]) h1 = d->H + a->padding[2];
        if (w1 > d->W + a->padding[3]) w1 = d->W + a->padding[3];
        area = (h1 - hs) * (w1 - ws);
        if (hs < 0) hs = 0;
        if (ws < 0) ws = 0;
        if (h1 > d->H) h1 = d->H;
        if (w1 > d->W) w1 = d->W;
        if (!a->count_include_pad) area = (h1 - hs) * (w1 - ws);
        inv = FUSE__V_SET1((float)(1.0 / (double)area));
        for (c0 = 0; c0 < C; c0 += vw) {
          FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(C - c0);
          FUSE__VEC sum = FUSE__V_ZERO();
          for (ih = hs; ih < h1; ih++)
            for (iw = ws; iw < w1; iw++)
              sum = FUSE__V_ADD(sum, FUSE__V_LOAD_MASK(xn + (ih * d->W + iw) * C + c0, m));
          FUSE__V_STORE_MASK(yp + c0, m, FUSE__V_MUL(sum, inv));
        }
      }
    }
  }
}
/* ==== end src/kernels/pool.inc ==== */
/* ==== begin src/kernels/eltwise.inc ==== */
/* Element-wise rows, a template of the vector layer (pool_eltwise.c instantiates it):
   y[i] = op(a[i * sa], b[i * sb]) with sa, sb 0 or 1 (add, sub, mul, maximum, minimum: a NaN
   in a is kept, as in the reference), relu and clip of a. */
FUSE__VEC_TARGET static void FUSE__VEC_FN(fuse__elt)(int op, float *y, const float *a, int sa,
                                                   const float *b, int sb, int64_t n, float lo,
                                                   float hi) {
  const int64_t vw = FUSE__VEC_WIDTH;
  int64_t i;
  for (i = 0; i < n; i += vw) {
    FUSE__VEC_MASK m = FUSE__V_MASK_FIRST(n - i);
    FUSE__VEC x = sa ? FUSE__V_LOAD_MASK(a + i, m) : FUSE__V_SET1(a[0]), v, z;
    z = op == FUSE__OP_RELU || op == FUSE__OP_CLIP ? x
        : sb ? FUSE__V_LOAD_MASK(b + i, m) : FUSE__V_SET1(b[0]);
    switch (op) {
    case FUSE__OP_ADD: v = FUSE__V_ADD(x, z); break;
    case FUSE__OP_SUB: v = FUSE__V_SUB(x, z); break;
    case FUSE__OP_MUL: v = FUSE__V_MUL(x, z); break;
    case FUSE__OP_MAXIMUM: v = FUSE__V_MAX_NAN(x, z); break;
    case FUSE__OP_MINIMUM: v = FUSE__V_MIN_NAN(x, z); break;
    case FUSE__OP_RELU: v = FUSE__V_BELOW(x, FUSE__V_ZERO()); break; /* x < 0 ? 0 : x */
    default: v = FUSE__V_ABOVE(FUSE__V_BELOW(x, FUSE__V_SET1(lo)), FUSE__V_SET1(hi)); break;
    }
    FUSE__V_STORE_MASK(y + i, m, v);
  }
}
/* ==== end src/kernels/eltwise.inc ==== */
/* ==== begin src/kernels/vec_end.h ==== */
/* Ends an instance of the kernel templates: the names of the vector layer go away. */
#undef FUSE__VEC_ISA
#undef FUSE__VEC_FN
#undef FUSE__VEC_TARGET
#undef FUSE__VEC
#undef FUSE__VEC_MASK
#undef FUSE__VEC_WIDTH
#undef FUSE__V_ZERO
#undef FUSE__V_SET1
#undef FUSE__V_LOAD
#undef FUSE__V_STORE
#undef FUSE__V_STORE_ALIGNED
#undef FUSE__V_MASK_FIRST
#undef FUSE__V_MASK_RANGE
#undef FUSE__V_LOAD_MASK
#undef FUSE__V_STORE_MASK
#undef FUSE__V_FMA
#undef FUSE__V_ADD
#undef FUSE__V_SUB
#undef FUSE__V_MUL
#undef FUSE__V_MAX
#undef FUSE__V_MIN
#undef FUSE__V_BELOW
#undef FUSE__V_ABOVE
#undef FUSE__V_MAX_NAN
#undef FUSE__V_MIN_NAN
#undef FUSE__V_EVENS
#undef FUSE__V_ODDS
#undef FUSE__V_PREFETCH_L2
#ifdef FUSE__V_LANES
#undef FUSE__V_LANES
#endif
/* ==== end src/kernels/vec_end.h ==== */
/* ==== end src/kernels/pool_eltwise.c ==== */
/* ==== begin src/kernels/table.c ==== */
/* ------------------------------------------------------------ kernel table -- */
/* Every micro-kernel with its instruction set and tile, as XNNPACK's manifests list them: the
   picks below read these tables, and test_kernels runs each row against the reference. A row
   exists only when its instance is compiled in (FUSE_NO_AVX512, FUSE_NO_AVX2, no SIMD: the
   scalar rows only). */

/* The indirect-GEMM micro-kernels: MR rows (pixels; output channels in the NCHW GEMM) by NR
   columns; weight: how close the kernel comes to the FMA peak on its own, in percent (the
   12x16 and 12x8 tiles hold fewer accumulators); pack: the NCHW GEMM's input packer when
   the kernel runs the NCHW GEMM, whose pixel blocks of NR pay their gather and block
   overhead on fewer pixels with narrower tiles (so only the widest tiles of an ISA take it). */
typedef struct fuse__igemm_kind {
  fuse_isa isa;
  int mr, nr, weight;
  fuse__igemm_fn fn;
  fuse__nchw_pack_fn pack;
} fuse__igemm_kind;

static const fuse__igemm_kind fuse__igemm_kinds[] = {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
    {FUSE_ISA_AVX512, 6, 64, 100, fuse__igemm_6x64_avx512, fuse__nchw_pack_avx512},
    {FUSE_ISA_AVX512, 8, 48, 100, fuse__igemm_8x48_avx512, fuse__nchw_pack_avx512},
    {FUSE_ISA_AVX512, 7, 48, 100, fuse__igemm_7x48_avx512, fuse__nchw_pack_avx512},
    {FUSE_ISA_AVX512, 12, 32, 97, fuse__igemm_12x32_avx512, NULL},
    {FUSE_ISA_AVX512, 7, 32, 90, fuse__igemm_7x32_avx512, NULL},
    {FUSE_ISA_AVX512, 12, 16, 70, fuse__igemm_12x16_avx512, NULL},
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
    {FUSE_ISA_AVX2, 6, 16, 100, fuse__igemm_6x16_avx2, fuse__nchw_pack_avx2},
    {FUSE_ISA_AVX2, 12, 8, 75, fuse__igemm_12x8_avx2, NULL},
#endif
    {FUSE_ISA_SCALAR, 4, 4, 100, fuse__igemm_4x4_scalar, fuse__nchw_pack_scalar},
    {FUSE_ISA_SCALAR, 4, 2, 90, fuse__igemm_4x2_scalar, NULL},
    {FUSE_ISA_SCALAR, 8, 2, 90, fuse__igemm_8x2_scalar, NULL},
    {FUSE_ISA_AUTO, 0, 0, 0, NULL, NULL}};

/* The few-channel NCHW kernels: MR output channels by `vectors` vectors of pixels (NR
   pixels); an ISA has a tile of two vectors and one of one (a row's end). */
typedef struct fuse__few_channels_kind {
  fuse_isa isa;
  int mr, nr, vectors;
  fuse__few_channels_fn fn;
} fuse__few_channels_kind;

static const fuse__few_channels_kind fuse__few_channels_kinds[] = {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
    {FUSE_ISA_AVX512, 8, 32, 2, fuse__few_channels_8x32_avx512},
    {FUSE_ISA_AVX512, 8, 16, 1, fuse__few_channels_8x16_avx512},
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
    {FUSE_ISA_AVX2, 6, 16, 2, fuse__few_channels_6x16_avx2},
    {FUSE_ISA_AVX2, 6, 8, 1, fuse__few_channels_6x8_avx2},
#endif
    {FUSE_ISA_SCALAR, 4, 2, 2, fuse__few_channels_4x2_scalar},
    {FUSE_ISA_SCALAR, 4, 1, 1, fuse__few_channels_4x1_scalar},
    {FUSE_ISA_AUTO, 0, 0, 0, NULL}};

/* The kind for the last column block of a GEMM `cols` wide on kind `kind`: the narrowest tile
   of the same ISA and rows that holds what is left (72 outputs as 48 + 32, not 48 + 48). */
static int fuse__igemm_last(int kind, int64_t cols) {
  const fuse__igemm_kind *k = &fuse__igemm_kinds[kind];
  int64_t left = cols - (cols - 1) / k->nr * k->nr;
  int i, best = kind;
  for (i = 0; fuse__igemm_kinds[i].fn; i++) {
    const fuse__igemm_kind *c = &fuse__igemm_kinds[i];
    if (c->isa == k->isa && c->mr == k->mr && c->nr >= left && c->nr < fuse__igemm_kinds[best].nr)
      best = i;
  }
  return best;
}

/* How much of a kernel's time goes to useful work on a rows x cols GEMM: the share of its
   tiles inside the GEMM (the last column block on its own kind when `mixed`) times its own
   efficiency (0 .. 1). In double: a fuzzed shape must not overflow. */
static double fuse__igemm_eff(int kind, int64_t cols, int64_t rows, int mixed) {
  const fuse__igemm_kind *k = &fuse__igemm_kinds[kind], *l;
  double cp, cl, rp;
  if (cols <= 0 || rows <= 0) return 0.0; /* an empty GEMM: no kernel (the reference) */
  l = mixed ? &fuse__igemm_kinds[fuse__igemm_last(kind, cols)] : k;
  cp = (double)((cols - 1) / k->nr * k->nr), cl = (double)l->nr;
  rp = (double)((rows + k->mr - 1) / k->mr * k->mr);
  return (double)cols / (cp + cl) * ((double)rows / rp) * (cp * k->weight + cl * l->weight) /
         (cp + cl) / 100.0;
}

/* The micro-kernel for a GEMM of `rows` rows (all tiles together) by `cols` columns (a group's
   output channels): the one that wastes least of its tiles (rows and columns rounded up to
   MR and NR), weighed by its own efficiency; for the NCHW GEMM (nchw) only the kernels with
   a packer. Sets *kind (a row of fuse__igemm_kinds) and returns 1; 0 when the ISA has none
   (the plan's reference kernels). */
static int fuse__igemm_pick(fuse_isa isa, int64_t cols, int64_t rows, int nchw, int *kind) {
  double best = 0.0;
  int i, found = 0;
  for (i = 0; fuse__igemm_kinds[i].fn; i++) {
    const fuse__igemm_kind *k = &fuse__igemm_kinds[i];
    double eff;
    if (k->isa != isa || (nchw && !k->pack)) continue;
    eff = fuse__igemm_eff(i, cols, rows, !nchw);
    if (eff > best * 1.0001) best = eff, found = 1, *kind = i; /* ties: the first */
  }
  /* one column block, on a narrower kind: that kind */
  if (found && !nchw && cols <= fuse__igemm_kinds[fuse__igemm_last(*kind, cols)].nr)
    *kind = fuse__igemm_last(*kind, cols);
  return found;
}

/* The few-channel NCHW kernel of an ISA with a tile of `vectors` vectors (a row of
   fuse__few_channels_kinds), or NULL. */
static const fuse__few_channels_kind *fuse__few_channels_pick(fuse_isa isa, int vectors) {
  int i;
  for (i = 0; fuse__few_channels_kinds[i].fn; i++)
    if (fuse__few_channels_kinds[i].isa == isa && fuse__few_channels_kinds[i].vectors == vectors)
      return &fuse__few_channels_kinds[i];
  return NULL;
}
#define FUSE__FEW_CHANNELS_SEGS 128 /* segments of the reduction: channels x kernel rows x phases */
#define FUSE__FEW_CHANNELS_BUF (4.0 * 1024 * 1024) /* its band buffer's bytes at most */
/* The phase columns the few-channel NCHW kernel reads (*fill: a row's tiles of two vectors
   and the widest tap's offset, in whole vectors) and the floats of a phase row (room past
   fill for the row builder's last vector, which may overhang it). */
static int64_t fuse__few_channels_wq(int64_t OW, int64_t KW, int64_t sw, int64_t vw, int64_t *fill) {
  *fill = ((OW + 2 * vw - 1) / (2 * vw) * 2 * vw + (KW - 1) / sw + vw - 1) / vw * vw;
  return (*fill + 15) / 16 * 16 + 32;
}

/* The depthwise, pool and element-wise kernels of each ISA (depthwise.c, pool_eltwise.c), the
   scalar twins on every target. */
typedef void (*fuse__dw_fn)(const fuse__dw_args *d, void *buf, int64_t p0, int64_t p1);
typedef void (*fuse__dwc_row_fn)(float *dst, const float *x, const fuse__dw_args *d, int64_t wq,
                                 int64_t fill);
typedef void (*fuse__pool_fn)(const fuse__pool_args *d, int64_t r0, int64_t r1);
typedef void (*fuse__elt_fn)(int op, float *y, const float *a, int sa, const float *b, int sb,
                             int64_t n, float lo, float hi);
typedef struct fuse__isa_ops {
  fuse_isa isa;
  fuse__dw_fn dw_nhwc, dw_nchw; /* depthwise: rows of an NHWC output, NCHW planes */
  fuse__dwc_row_fn dwc_row; /* the NCHW depthwise band buffer's row builder (few channels too) */
  fuse__pool_fn pool;       /* max / average pool on NHWC */
  fuse__elt_fn elt;         /* element-wise rows */
} fuse__isa_ops;

static const fuse__isa_ops fuse__isa_ops_table[] = {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
    {FUSE_ISA_AVX512, fuse__dw_avx512, fuse__dwc_avx512, fuse__dwc_row_avx512, fuse__pool_avx512,
     fuse__elt_avx512},
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
    {FUSE_ISA_AVX2, fuse__dw_avx2, fuse__dwc_avx2, fuse__dwc_row_avx2, fuse__pool_avx2,
     fuse__elt_avx2},
#endif
    {FUSE_ISA_SCALAR, fuse__dw_scalar, fuse__dwc_scalar, fuse__dwc_row_scalar, fuse__pool_scalar,
     fuse__elt_scalar},
    {FUSE_ISA_AUTO, NULL, NULL, NULL, NULL, NULL}};

/* The row of an ISA; the all-NULL last row when it has none. */
static const fuse__isa_ops *fuse__isa_ops_of(fuse_isa isa) {
  const fuse__isa_ops *o = fuse__isa_ops_table;
  while (o->isa != FUSE_ISA_AUTO && o->isa != isa) o++;
  return o;
}
static fuse__elt_fn fuse__elt_pick(fuse_isa isa) { return fuse__isa_ops_of(isa)->elt; }
static fuse__pool_fn fuse__pool_pick(fuse_isa isa) { return fuse__isa_ops_of(isa)->pool; }
static fuse__dwc_row_fn fuse__dwc_row_pick(fuse_isa isa) { return fuse__isa_ops_of(isa)->dwc_row; }
/* The depthwise kernel of an ISA for NHWC (rows of the output) or NCHW (planes). */
static fuse__dw_fn fuse__dw_pick(fuse_isa isa, int nhwc) {
  return nhwc ? fuse__isa_ops_of(isa)->dw_nhwc : fuse__isa_ops_of(isa)->dw_nchw;
}
/* ==== end src/kernels/table.c ==== */
/* ==== begin src/plan.c ==== */
/* -------------------------------------------------------------------- plan -- */
/* A plan is a list of steps over a table of tensors. Each tensor lives in a caller's input or
   output array, in the plan's constants, or at an offset in the workspace, which tensors share
   when their lifetimes do not overlap. reshape / flatten are views: no step, no copy. */

enum { FUSE__LOC_INPUT, FUSE__LOC_OUTPUT, FUSE__LOC_WORK, FUSE__LOC_CONST };

typedef struct fuse__tensor {
  int kind;      /* FUSE__LOC_* */
  int index;     /* input / output position */
  size_t offset; /* bytes into the workspace or the constants */
  int rank;
  int64_t shape[FUSE_MAX_RANK]; /* always the graph's (NCHW) shape */
  int nhwc;      /* the bytes hold an NCHW-shaped tensor in NHWC order */
  int value;     /* the graph value it holds, for the plan's description */
  size_t bytes;  /* > 0: held in a backend's own layout of this size (fuse_backend_layout) */
} fuse__tensor;

/* A fused step is a conv2d / matmul whose epilogue runs on each finished output element,
   once, before the store. Its operands: x, w, then the bias and residuals it names. */
typedef struct fuse__step {
  int op;
  int out;                 /* tensor */
  int in_first, num_in;    /* into plan->operands */
  fuse__attrs a;
  int bias;                /* operand index of the per-channel bias, or -1 */
  int num_post;
  fuse_post_op post[FUSE_MAX_POST_OPS]; /* ADD: operand set */
  int kernel;              /* FUSE__KERNEL_*: conv2d / matmul on a SIMD kernel or a backend,
                              else the reference */
  float *packed;           /* its weights, packed at compile */
  int mr, nr;              /* the indirect GEMM's tile */
  int igemm;               /* its micro-kernel: index into fuse__igemm_kinds */
  int igemm_last, nr_last; /* the last column block's (NHWC GEMM: maybe narrower, same MR) */
  int rowmode;             /* a tap is a whole kernel row (few input channels) */
  int pointwise;           /* 1x1, stride 1, no padding, or a matmul: a pixel's row is x + pixel*C */
  int cblock;              /* > 0: taps one by one in blocks of this many channels */
  int band;                /* NCHW GEMM: pixel blocks gathered together (>= 1) */
  const fuse_backend *backend; /* FUSE__KERNEL_BACKEND: who runs it, with this state */
  void *backend_state;
  size_t backend_layout;   /* > 0: it writes its output in the backend's own layout, this many
                              bytes (fuse_backend_layout) */
  char *note;              /* for the description: why a backend declined it, or NULL */
} fuse__step;

/* BACKEND: a fuse_backend runs the step; its operands and output are NCHW, as for REF.
   NCHW_GEMM: conv2d on NCHW in and out (the GEMM with output channels as tile rows).
   FEW_CHANNELS: the same with few input channels, read in place from padded rows
   (fuse__conv_few_channels). */
enum {
  FUSE__KERNEL_REF,
  FUSE__KERNEL_IGEMM,
  FUSE__KERNEL_DW,
  FUSE__KERNEL_BACKEND,
  FUSE__KERNEL_NCHW_GEMM,
  FUSE__KERNEL_FEW_CHANNELS
};

struct fuse_plan {
  fuse_allocator alloc;
  fuse__tensor *tensors;
  fuse__step *steps;
  int *operands; /* tensor ids of the steps' operands */
  int num_tensors, num_steps, num_inputs, num_outputs;
  float *consts;
  size_t workspace_size;
  void *own_workspace; /* used when fuse_run is given none */
  fuse_isa isa;
  char *description;   /* one line per step, for fuse_plan_write */
  float *zeros;          /* a row of zeros for the SIMD conv's padding taps */
  size_t weights_size;   /* bytes of consts and packed weights (fuse_plan_weights_size) */
  size_t scratch_offset; /* the SIMD conv's scratch, one slot per chunk, at the end */
  size_t scratch_slot;   /* bytes of one slot */
  int chunks;            /* how many pieces a parallel step is cut into (1 = serial) */
  size_t backend_offset, backend_scratch; /* the backends' scratch (one step at a time) */
  fuse_parallel_for_fn parallel_for;
  void *parallel_user;
};

static size_t fuse__tensor_bytes(const fuse__tensor *t) {
  size_t b = (size_t)fuse__numel(t->rank, t->shape) * sizeof(float);
  if (t->bytes > b) b = t->bytes;
  return (b + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
}

static int fuse__is_view(int op) { return op == FUSE__OP_RESHAPE || op == FUSE__OP_FLATTEN; }

static void fuse__compile_error(const fuse_compile_options *opt, const fuse_graph *g,
                                const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  if (!opt || !opt->error || !opt->error_size) return;
  o.buf = opt->error;
  o.len = 0;
  o.cap = opt->error_size;
  o.write = NULL;
  o.user = NULL;
  o.buf[0] = 0;
  va_start(ap, fmt);
  fuse__vformat(&o, g, fmt, ap);
  va_end(ap);
}

/* Places workspace tensors: largest first, each at the lowest offset that does not overlap a
   placed tensor whose lifetime [first, last] (in steps) meets its own. */
static int fuse__place(fuse_plan *p, const int *first, const int *last, int *order, int n_work,
                       size_t *ranges) {
  int i, j, k;
  size_t total = 0;
  for (i = 1; i < n_work; i++) { /* insertion sort by size, largest first */
    int t = order[i];
    size_t bt = fuse__tensor_bytes(&p->tensors[t]);
    for (j = i; j > 0 && fuse__tensor_bytes(&p->tensors[order[j - 1]]) < bt; j--)
      order[j] = order[j - 1];
    order[j] = t;
  }
  for (i = 0; i < n_work; i++) {
    int t = order[i], n_conf = 0;
    size_t size = fuse__tensor_bytes(&p->tensors[t]), at = 0;
    for (j = 0; j < i; j++) { /* busy ranges [start, end) of placed tensors alive meanwhile */
      int u = order[j];
      if (first[u] <= last[t] && first[t] <= last[u]) {
        size_t start = p->tensors[u].offset, end = start + fuse__tensor_bytes(&p->tensors[u]);
        for (k = n_conf; k > 0 && ranges[2 * (k - 1)] > start; k--) {
          ranges[2 * k] = ranges[2 * (k - 1)];
          ranges[2 * k + 1] = ranges[2 * (k - 1) + 1];
        }
        ranges[2 * k] = start;
        ranges[2 * k + 1] = end;
        n_conf++;
      }
    }
    for (k = 0; k < n_conf; k++) {
      if (ranges[2 * k] >= at + size) break; /* the gap before this range fits */
      if (ranges[2 * k + 1] > at) at = ranges[2 * k + 1];
    }
    p->tensors[t].offset = at;
    if (at + size > total) total = at + size;
  }
  p->workspace_size = total;
  return 1;
}

FUSE_API void fuse_plan_destroy(fuse_plan *p) {
  fuse_allocator a;
  int i;
  if (!p) return;
  a = p->alloc;
  fuse__free(&a, p->tensors);
  for (i = 0; p->steps && i < p->num_steps; i++) {
    fuse__step *s = &p->steps[i];
    fuse__free(&a, s->packed);
    fuse__free(&a, s->note);
    if (s->backend && s->backend->destroy) s->backend->destroy(s->backend_state);
  }
  fuse__free(&a, p->steps);
  fuse__free(&a, p->operands);
  fuse__free(&a, p->consts);
  fuse__free(&a, p->zeros);
  fuse__free(&a, p->own_workspace);
  fuse__free(&a, p->description);
  fuse__free(&a, p);
}

/* How a composite runs: fused (one step, its epilogue on registers) when the analyzer accepts
   it and no op inside it but the root is read from outside; else op by op. */
typedef struct fuse__fusion {
  fuse_epilogue e;
  int fused;
} fuse__fusion;

/* The operands a node's step reads: its own, or, for a fused root, x, w, bias, residuals. */
static int fuse__step_inputs(const fuse_graph *g, const fuse__fusion *fz, fuse_value v,
                             fuse_value *out) {
  const fuse__node *n = &g->nodes[v];
  int k, count = 0;
  if (n->composite >= 0 && fz[n->composite].fused && g->composites[n->composite].root == v) {
    const fuse_epilogue *e = &fz[n->composite].e;
    const fuse__node *red = &g->nodes[e->reduction];
    if (out) out[0] = red->in[0], out[1] = red->in[1];
    count = 2;
    if (e->bias != FUSE_NONE) {
      if (out) out[count] = e->bias;
      count++;
    }
    for (k = 0; k < e->num_post; k++)
      if (e->post[k].kind == FUSE_POST_ADD) {
        if (out) out[count] = e->post[k].tensor;
        count++;
      }
    return count;
  }
  if (out && n->num_in) memcpy(out, n->in, (size_t)n->num_in * sizeof(fuse_value));
  return n->num_in;
}

/* ==== end src/plan.c ==== */
/* ==== begin src/layouts.c ==== */
/* ------------------------------------------------------------------ layouts -- */
/* With the kernel table's conv kernels (SIMD or their scalar twins) the plan keeps activations
   in NHWC between the ops that take it: conv2d on the NHWC GEMM always; depthwise conv,
   element-wise ops, pools, global average pool and concat along channels follow their
   operands. Every other op, the graph's inputs and outputs and
   reshape / flatten see NCHW. Where the two meet a conversion step is added, once per tensor.
   Only a rank-4 tensor with more than one channel and more than one pixel has two layouts. */

static int fuse__two_layouts(const fuse__tensor *t) {
  return t->rank == 4 && t->shape[1] > 1 && t->shape[2] * t->shape[3] > 1;
}

/* Ops that run in either layout take NHWC when an operand that has two layouts is NHWC. */
static int fuse__follows_nhwc(const fuse_plan *p, const fuse__step *st, const int *ops) {
  int k, any = 0;
  switch (st->op) {
  case FUSE__OP_RELU: case FUSE__OP_CLIP: case FUSE__OP_SIGMOID: case FUSE__OP_ADD:
  case FUSE__OP_SUB: case FUSE__OP_MUL: case FUSE__OP_MAXIMUM: case FUSE__OP_MINIMUM:
  case FUSE__OP_MAX_POOL2D: case FUSE__OP_AVG_POOL2D: case FUSE__OP_GLOBAL_AVG_POOL2D: break;
  case FUSE__OP_CONCAT:
    if (st->a.axis != 1) return 0;
    for (k = 0; k < st->num_in; k++)
      if (p->tensors[ops[k]].rank != 4) return 0;
    break;
  default: return 0;
  }
  if (p->tensors[st->out].rank != 4) return 0;
  for (k = 0; k < st->num_in; k++) {
    const fuse__tensor *t = &p->tensors[ops[k]];
    if (fuse__two_layouts(t) && t->nhwc) any = 1;
  }
  return any;
}

/* Whether operand k of a step is an activation in the step's layout (a kernel conv's weights
   and bias are not). */
static int fuse__operand_has_layout(const fuse__step *st, int k) {
  if (st->kernel == FUSE__KERNEL_REF || st->kernel == FUSE__KERNEL_BACKEND ||
      st->op != FUSE__OP_CONV2D)
    return 1;
  return k == 0 || (k >= 2 && k != st->bias);
}

typedef struct fuse__relayout {
  fuse_plan *p;
  int *root, *alt; /* alt: the same values in the other layout, or -1 */
  fuse__step *steps;
  int *operands;
  int num_steps, num_operands;
} fuse__relayout;

static int fuse__new_tensor(fuse__relayout *x, int like, int nhwc) {
  fuse_plan *p = x->p;
  int t = p->num_tensors++;
  p->tensors[t] = p->tensors[like];
  p->tensors[t].kind = FUSE__LOC_WORK;
  p->tensors[t].index = 0;
  p->tensors[t].offset = 0;
  p->tensors[t].nhwc = nhwc;
  p->tensors[t].bytes = 0;
  x->root[t] = t;
  x->alt[t] = -1;
  return t;
}

static void fuse__add_conversion(fuse__relayout *x, int from, int to) {
  fuse__step *st = &x->steps[x->num_steps++];
  memset(st, 0, sizeof *st);
  st->op = x->p->tensors[to].nhwc ? FUSE__OP_TO_NHWC : FUSE__OP_TO_NCHW;
  st->out = to;
  st->bias = -1;
  st->in_first = x->num_operands;
  st->num_in = 1;
  x->operands[x->num_operands++] = from;
}

/* Tensor `from` in the other layout: a conversion step the first time it is asked for. */
static int fuse__converted(fuse__relayout *x, int from) {
  int to;
  if (x->alt[from] >= 0) return x->alt[from];
  to = fuse__new_tensor(x, from, !x->p->tensors[from].nhwc);
  x->alt[to] = from;
  x->alt[from] = to;
  fuse__add_conversion(x, from, to);
  return to;
}

/* Copies the steps in order into x, choosing each one's layout and adding conversions. */
static void fuse__relayout_steps(fuse__relayout *x, const fuse__step *old, int n_old,
                                 const int *old_ops) {
  fuse_plan *p = x->p;
  int s, k;
  for (s = 0; s < n_old; s++) {
    fuse__step st = old[s];
    const int *ops = old_ops + st.in_first;
    int nhwc = (st.op == FUSE__OP_CONV2D && st.kernel == FUSE__KERNEL_IGEMM) ||
               (st.kernel == FUSE__KERNEL_DW && p->tensors[ops[0]].nhwc &&
                fuse__two_layouts(&p->tensors[ops[0]])) ||
               fuse__follows_nhwc(p, &st, ops);
    int out = st.out, redirect = 0;
    /* a graph output is copied out of NHWC by the conversion itself */
    if (st.op == FUSE__OP_COPY && x->root[ops[0]] == ops[0] && p->tensors[ops[0]].nhwc &&
        fuse__two_layouts(&p->tensors[ops[0]])) {
      fuse__add_conversion(x, ops[0], out);
      continue;
    }
    for (k = 0; k < st.num_in; k++) { /* conversions first, in operand order */
      int t = ops[k], r = x->root[t];
      if (r != t) { /* a view reads NCHW bytes */
        if (p->tensors[r].nhwc && fuse__two_layouts(&p->tensors[r]))
          x->root[t] = fuse__converted(x, r);
        if (nhwc && fuse__operand_has_layout(&st, k) && fuse__two_layouts(&p->tensors[t]))
          fuse__converted(x, t); /* an NHWC step reads the view converted (a 1-D conv's input) */
      } else if (fuse__operand_has_layout(&st, k) && fuse__two_layouts(&p->tensors[t]) &&
                 p->tensors[t].nhwc != nhwc) {
        fuse__converted(x, t);
      }
    }
    st.in_first = x->num_operands;
    for (k = 0; k < st.num_in; k++) {
      int t = ops[k];
      if (fuse__operand_has_layout(&st, k) && fuse__two_layouts(&p->tensors[t]) &&
          (x->root[t] == t ? p->tensors[t].nhwc != nhwc : nhwc))
        t = x->alt[t];
      x->operands[x->num_operands++] = t;
    }
    if (nhwc && fuse__two_layouts(&p->tensors[out])) {
      if (p->tensors[out].kind == FUSE__LOC_OUTPUT) { /* written in place: through NHWC */
        st.out = fuse__new_tensor(x, out, 1);
        x->alt[st.out] = out;
        x->alt[out] = st.out;
        redirect = 1;
      } else {
        p->tensors[out].nhwc = 1;
      }
    }
    x->steps[x->num_steps++] = st;
    if (redirect) fuse__add_conversion(x, st.out, out);
  }
}

/* ------------------------------------------------ kernel choice and packing -- */
/* Weights of one column block beyond which taps are blocked. Below it the whole panel
   streams from L2 for every tile, which measured faster than blocking on resnet's 3x3 layers
   (panels of a few hundred KB; L2 is 1-2 MB on the CPUs measured). */
#define FUSE__PANEL_BYTES (1024 * 1024)
#define FUSE__NCHW_GEMM_WEIGHTS (256 * 1024) /* NCHW GEMM weights beyond which pixel blocks are banded */
#define FUSE__L1_PANEL (32 * 1024)     /* a channel block of weights that stays in L1 */
#define FUSE__PTR_CACHE 4096           /* row pointers cached per chunk by a blocked conv */
#define FUSE__NCHW_GEMM_PANEL (512 * 1024) /* the NCHW GEMM's gathered input panel, per chunk, at most */

/* Picks a step's micro-kernel (fuse__igemm_pick) and keeps its tile in the step. */
static int fuse__igemm_choose(fuse_isa isa, int64_t cols, int64_t rows, int nchw, fuse__step *st) {
  if (!fuse__igemm_pick(isa, cols, rows, nchw, &st->igemm)) return 0;
  st->mr = fuse__igemm_kinds[st->igemm].mr, st->nr = fuse__igemm_kinds[st->igemm].nr;
  st->igemm_last = nchw ? st->igemm : fuse__igemm_last(st->igemm, cols);
  st->nr_last = fuse__igemm_kinds[st->igemm_last].nr;
  return 1;
}

/* Where a packed weight goes in an NHWC GEMM's [column block][step][NR] panels (steps: taps x
   channels per block), the last block NR_last wide (fuse__igemm_last): column k of step t. */
static size_t fuse__igemm_at(const fuse__step *st, int64_t cols, int64_t steps, int64_t k,
                             int64_t t) {
  int64_t ob = k / st->nr, obs = (cols + st->nr - 1) / st->nr;
  int64_t w = ob == obs - 1 ? st->nr_last : st->nr;
  return (size_t)(ob * steps * st->nr + t * w + k % st->nr);
}

/* A step's packed weights, `floats` of them (counted in the plan's weights): zeros to fill,
   or left as they are when `zero` is 0 (the packer writes every float, its padding too). */
static float *fuse__packed_alloc(fuse_plan *p, fuse__step *st, size_t floats, int zero) {
  st->packed = (float *)fuse__alloc(&p->alloc, floats * sizeof(float), FUSE__ALIGN);
  if (!st->packed) return NULL;
  p->weights_size += floats * sizeof(float);
  fuse__prefault(st->packed, floats * sizeof(float));
  if (zero) memset(st->packed, 0, floats * sizeof(float));
  return st->packed;
}

/* Whether a conv step reads its input in place, pixel for pixel (1x1, stride 1, no padding). */
static int fuse__conv_pointwise(const fuse__step *st, int64_t taps) {
  const fuse_conv2d_attrs *a = &st->a.conv;
  return taps == 1 && a->strides[0] == 1 && a->strides[1] == 1 && !a->padding[0] &&
         !a->padding[1] && !a->padding[2] && !a->padding[3];
}

/* matmul x [..., M, K] by constant weights [K, N]: the indirect GEMM with every row of x a
   pixel and N output channels; the weights packed as [column block][K][NR]. */
static int fuse__choose_matmul(fuse_plan *p, const fuse_graph *g, fuse__step *st, size_t *scratch) {
  const fuse__node *wn = &g->nodes[p->operands[st->in_first + 1]];
  const fuse__tensor *tx = &p->tensors[p->operands[st->in_first]];
  int64_t K, N, nr, k, j;
  size_t need;
  if (wn->op != FUSE__OP_CONST || wn->rank != 2) return 1;
  K = wn->shape[0], N = wn->shape[1];
  if (N < 4 || K < 1 || !fuse__igemm_choose(p->isa, N, fuse__numel(tx->rank, tx->shape) / K, 0, st))
    return 1;
  nr = st->nr;
  if (!fuse__packed_alloc(p, st, (size_t)((N + nr - 1) / nr * K * nr), 0)) return 0;
  for (j = 0; j < N; j += nr) { /* column block by column block, a row of it at a time */
    int64_t w = j + nr >= N ? st->nr_last : nr, cols = N - j < w ? N - j : w;
    float *dst = st->packed + (size_t)fuse__igemm_at(st, N, K, j, 0);
    if (cols < w) memset(dst, 0, (size_t)(K * w) * sizeof(float)); /* the padding columns */
    for (k = 0; k < K; k++)
      memcpy(dst + k * w, wn->data + k * N + j, (size_t)cols * sizeof(float));
  }
  st->kernel = FUSE__KERNEL_IGEMM;
  st->pointwise = 1;
  if ((size_t)(K * nr) * sizeof(float) > FUSE__PANEL_BYTES)
    st->cblock = (int)(FUSE__L1_PANEL / (st->nr * sizeof(float)));
  need = (size_t)(st->cblock ? FUSE__PTR_CACHE : st->mr) * sizeof(float *);
  if (need > *scratch) *scratch = need;
  return 1;
}

/* Whether a conv2d step is better off on NCHW in and out (the NCHW GEMM): its input is a graph
   input and nothing that reads its output takes NHWC (another GEMM conv, a pool, concat), so
   the NHWC kernel would only add a conversion on each side (a single fused layer). */
static int fuse__nchw_ends(const fuse_plan *p, const fuse_graph *g, const fuse__step *st) {
  int i, k;
  if (g->nodes[p->operands[st->in_first]].op != FUSE__OP_INPUT) return 0;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *u = &p->steps[i];
    for (k = 0; k < u->num_in; k++)
      if (p->operands[u->in_first + k] == st->out && u != st) switch (u->op) {
        case FUSE__OP_CONV2D: case FUSE__OP_MAX_POOL2D: case FUSE__OP_AVG_POOL2D:
        case FUSE__OP_GLOBAL_AVG_POOL2D: case FUSE__OP_CONCAT: return 0;
        default: break;
        }
  }
  return 1;
}

/* Whether the NCHW GEMM (on micro-kernel cg) beats the NHWC kernels with their two
   conversions. Each GEMM costs
   its multiply-adds over its tile's efficiency (fuse__igemm_eff: the NCHW GEMM's tiles span
   an image's pixels, the NHWC one's all output pixels), and each element converted about 25
   multiply-adds on AVX-512, 12 on AVX2 (a conversion takes the same time on both, a
   multiply-add twice as long on AVX2; scalar: 2, a multiply-add 16 times as long as on
   AVX-512), constants fitted to 1x1 and stem layers on both ISAs (bench/layers): the NCHW
   GEMM wins on large images (resnet50's and mobilenet_v2's 1x1 layers at 28 pixels and more,
   the 3-channel stems), the NHWC kernels at 14 and 7 pixels, whose short rows fill the NCHW
   GEMM's tiles poorly. */
static int fuse__nchw_gemm_pays(fuse_isa isa, const fuse__tensor *tx, const fuse__tensor *ty,
                            int64_t Kg, int64_t macs_per_pixel, int cg) {
  int64_t P = ty->shape[2] * ty->shape[3], npix = ty->shape[0] * P;
  double converted =
      (double)fuse__numel(tx->rank, tx->shape) + (double)fuse__numel(ty->rank, ty->shape);
  double macs = (double)macs_per_pixel * (double)npix;
  double per_element = isa == FUSE_ISA_AVX512 ? 25.0 : isa == FUSE_ISA_AVX2 ? 12.0 : 2.0;
  int ig;
  if (!fuse__igemm_pick(isa, Kg, npix, 0, &ig)) return 1;
  return macs / fuse__igemm_eff(cg, P, Kg, 0) <
         macs / fuse__igemm_eff(ig, Kg, npix, 1) + per_element * converted;
}

/* A conv2d step's shape, as the kernel choice reads it. */
typedef struct fuse__conv_shape {
  const fuse__node *wn; /* the constant weights [K][Cg][KH][KW] */
  int64_t G, K, Cg, Kg, KH, KW, taps, OH, OW, npix;
} fuse__conv_shape;

/* Depthwise (one input and one output channel per group), on the depthwise kernels of the
   ISA: room for the NCHW kernel's band buffer (the layout is chosen later) and its zero row. */
static int fuse__choose_dw(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c,
                           size_t *zeros, size_t *scratch) {
  const fuse_conv2d_attrs *ca = &st->a.conv;
  size_t need, row;
  if (!fuse__dw_pick(p->isa, 1)) return 0;
  st->kernel = FUSE__KERNEL_DW;
  need = fuse__dwc_scratch(c->OH, c->OW, c->KH, c->KW, ca->strides[0], ca->strides[1],
                           ca->dilation[0], ca->dilation[1]);
  if (need > *scratch) *scratch = need;
  row = (size_t)p->tensors[p->operands[st->in_first]].shape[3] + 64;
  if (row > *zeros) *zeros = row;
  return 1;
}

/* Whether the ISA runs the few-channel kernel: its tiles and the depthwise row builder. */
static int fuse__few_channels_runs(fuse_isa isa) {
  return fuse__few_channels_pick(isa, 1) && fuse__dwc_row_pick(isa);
}

/* Few input channels on NCHW in and out (the stems): the input read in place from rows of it
   copied with their padding, no gather per pixel block (fuse__conv_few_channels), while the
   band buffer stays within FUSE__FEW_CHANNELS_BUF (else the NCHW GEMM). */
static int fuse__choose_few_channels(fuse_plan *p, const fuse_graph *g, fuse__step *st,
                                     const fuse__conv_shape *c, size_t *scratch) {
  const fuse_conv2d_attrs *a = &st->a.conv;
  int64_t sw = a->strides[1], band = c->OH < 8 ? c->OH : 8, fill, wq;
  double bytes;
  if (!fuse__nchw_ends(p, g, st) || c->G != 1 || c->Cg > 4 || a->dilation[0] != 1 ||
      a->dilation[1] != 1 || sw > 2 || c->Cg * c->KH * sw > FUSE__FEW_CHANNELS_SEGS ||
      c->OW < 16 || c->OH < 1 || !fuse__few_channels_runs(p->isa))
    return 0;
  wq = fuse__few_channels_wq(c->OW, c->KW, sw, fuse__few_channels_pick(p->isa, 1)->nr, &fill);
  bytes = (double)c->Cg * (double)((band - 1) * a->strides[0] + c->KH) * (double)(sw * wq) *
          sizeof(float);
  if (bytes > FUSE__FEW_CHANNELS_BUF) return 0;
  st->kernel = FUSE__KERNEL_FEW_CHANNELS;
  st->mr = fuse__few_channels_pick(p->isa, 1)->mr;
  st->band = (int)band;
  if ((size_t)bytes > *scratch) *scratch = (size_t)bytes;
  return 1;
}

/* NCHW in and out: tiles of MR output channels by NR output pixels, the weights read as
   [K][Cg * taps] rows; the input gathered per pixel block, vector by vector for strides 1
   and 2 (a wider stride gathers float by float: only against many outputs). Against the
   NHWC kernels with their conversions it is ahead on 1x1 convs and on 3-channel stems, and
   behind on a KxK conv with more input channels, where every tap is gathered again, so
   those stay NHWC (bench/layers). Weights past
   FUSE__NCHW_GEMM_WEIGHTS would come from beyond L1 once per pixel block: several blocks
   (up to FUSE__NCHW_GEMM_PANEL) are gathered and each tile's weight rows run over them all. */
static int fuse__choose_nchw_gemm(fuse_plan *p, const fuse_graph *g, fuse__step *st,
                                  const fuse__conv_shape *c, size_t *scratch) {
  const fuse_conv2d_attrs *a = &st->a.conv;
  int64_t P = c->OH * c->OW;
  size_t need;
  if (!fuse__nchw_ends(p, g, st) || !((a->strides[0] <= 2 && a->strides[1] <= 2) || c->Kg >= 128) ||
      !(c->taps == 1 || c->Cg <= 4) || !fuse__igemm_choose(p->isa, P, c->Kg, 1, st) ||
      !fuse__nchw_gemm_pays(p->isa, &p->tensors[p->operands[st->in_first]], &p->tensors[st->out],
                            c->Kg, c->K * c->Cg * c->taps, st->igemm) ||
      (size_t)(c->taps * c->Cg * st->nr) * sizeof(float) > FUSE__NCHW_GEMM_PANEL)
    return 0;
  st->kernel = FUSE__KERNEL_NCHW_GEMM;
  st->pointwise = fuse__conv_pointwise(st, c->taps);
  need = (size_t)(c->taps * c->Cg * st->nr) * sizeof(float);
  st->band = 1;
  if ((size_t)(c->Kg * c->Cg * c->taps) * sizeof(float) > FUSE__NCHW_GEMM_WEIGHTS) {
    int64_t blocks = (P + st->nr - 1) / st->nr, fit = (int64_t)(FUSE__NCHW_GEMM_PANEL / need);
    st->band = (int)(blocks < fit ? blocks : fit);
  }
  need *= (size_t)st->band;
  if (need > *scratch) *scratch = need;
  return 1;
}

/* The NHWC indirect GEMM: row pointers per tile (a kernel row per tap with few input
   channels), channel blocks when a column block's panel passes FUSE__PANEL_BYTES. */
static int fuse__choose_igemm(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c,
                              size_t *zeros, size_t *scratch) {
  size_t need;
  if (!fuse__igemm_choose(p->isa, c->Kg, c->npix, 0, st)) return 0;
  st->kernel = FUSE__KERNEL_IGEMM;
  st->pointwise = fuse__conv_pointwise(st, c->taps);
  /* few input channels: a tap is a kernel row, KW * C contiguous floats */
  st->rowmode = c->G == 1 && c->Cg * c->KW <= 64 && c->Cg <= 8 && st->a.conv.dilation[1] == 1;
  st->cblock = 0;
  if (!st->rowmode && c->taps * st->mr <= FUSE__PTR_CACHE &&
      (size_t)(c->taps * c->Cg * st->nr) * sizeof(float) > FUSE__PANEL_BYTES)
    st->cblock = (int)(FUSE__L1_PANEL / (st->nr * sizeof(float)));
  need = (size_t)(st->cblock ? FUSE__PTR_CACHE : c->taps * st->mr) * sizeof(float *);
  if (st->rowmode) need += (size_t)(st->mr * c->KH * c->KW * c->Cg) * sizeof(float) + FUSE__ALIGN;
  if (need > *scratch) *scratch = need;
  if ((size_t)(st->rowmode ? c->KW * c->Cg : c->Cg) > *zeros)
    *zeros = (size_t)(st->rowmode ? c->KW * c->Cg : c->Cg);
  return 1;
}

/* The weights of a chosen conv kernel in its order. Depthwise: [tap][Cp], Cp = K rounded up
   to 16. Few channels: [row tile][step][MR], the steps in the kernel's order (channel,
   kernel row, phase, its columns). NCHW GEMM: as they are, [K][Cg * taps]. NHWC GEMM:
   [group][column block][tap][channel][NR]. 0: out of memory. */
static int fuse__pack_conv(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c) {
  const float *w = c->wn->data;
  int64_t taps = c->taps, t, k, ch, kh, m, ph;
  if (st->kernel == FUSE__KERNEL_DW) {
    int64_t Cp = (c->K + 15) / 16 * 16;
    if (!fuse__packed_alloc(p, st, (size_t)(taps * Cp), 1)) return 0;
    for (t = 0; t < taps; t++)
      for (k = 0; k < c->K; k++) st->packed[t * Cp + k] = w[k * taps + t];
  } else if (st->kernel == FUSE__KERNEL_FEW_CHANNELS) {
    int64_t mr = st->mr, Kp = (c->K + mr - 1) / mr * mr, sw = st->a.conv.strides[1];
    if (!fuse__packed_alloc(p, st, (size_t)(Kp * c->Cg * taps), 1)) return 0;
    for (k = 0; k < c->K; k++) {
      float *dst = st->packed + k / mr * mr * c->Cg * taps + k % mr;
      for (ch = 0; ch < c->Cg; ch++)
        for (kh = 0; kh < c->KH; kh++)
          for (ph = 0; ph < sw; ph++)
            for (m = ph; m < c->KW; m += sw, dst += mr)
              *dst = w[((k * c->Cg + ch) * c->KH + kh) * c->KW + m];
    }
  } else if (st->kernel == FUSE__KERNEL_NCHW_GEMM) {
    if (!fuse__packed_alloc(p, st, (size_t)(c->K * c->Cg * taps), 0)) return 0;
    memcpy(st->packed, w, (size_t)(c->K * c->Cg * taps) * sizeof(float));
  } else {
    int64_t nr = st->nr, obs = (c->Kg + nr - 1) / nr, grp, panel = obs * taps * c->Cg * nr;
    float tile[1024]; /* 4 KB: small stacks too */
    int64_t run = (int64_t)(sizeof tile / sizeof *tile) / nr;
    if (!fuse__packed_alloc(p, st, (size_t)(c->G * panel), 0)) return 0;
    for (grp = 0; grp < c->G; grp++)
      for (k = 0; k < c->Kg; k += nr) { /* a column block */
        int64_t wd = k + nr >= c->Kg ? st->nr_last : nr, cols = c->Kg - k < wd ? c->Kg - k : wd, j;
        float *dst = st->packed + (size_t)(grp * panel) + fuse__igemm_at(st, c->Kg, taps * c->Cg, k, 0);
        if (cols < wd) memset(dst, 0, (size_t)(taps * c->Cg * wd) * sizeof(float));
        const float *src = w + ((grp * c->Kg + k) * c->Cg) * taps;
        int64_t ld = c->Cg * taps, c0, nc;
        for (c0 = 0; c0 < ld; c0 += nc) { /* a tile of every column read in runs, then */
          nc = ld - c0 < run ? ld - c0 : run; /* written out as whole rows of the panel */
          for (j = 0; j < cols; j++) memcpy(tile + j * run, src + j * ld + c0, (size_t)nc * sizeof(float));
          for (m = 0; m < nc; m++) {
            float *row = dst + ((c0 + m) % taps * c->Cg + (c0 + m) / taps) * wd;
            for (j = 0; j < cols; j++) row[j] = tile[j * run + m];
          }
        }
      }
  }
  return 1;
}

/* Picks the kernel of a conv2d or matmul step with constant weights (a row of the kernel
   table, none on the plan's reference kernels) and packs its weights for it: depthwise, the
   few-channel kernel, the NCHW GEMM or the NHWC indirect GEMM (4 or more outputs per group),
   in that order of preference. Grows the zero row and the per-chunk scratch it needs.
   0: out of memory. */
static int fuse__choose_kernel(fuse_plan *p, const fuse_graph *g, fuse__step *st, size_t *zeros,
                               size_t *scratch) {
  const fuse__tensor *tw, *ty = &p->tensors[st->out];
  fuse__conv_shape c;
  if (st->op == FUSE__OP_MATMUL) return fuse__choose_matmul(p, g, st, scratch);
  if (st->op != FUSE__OP_CONV2D) return 1;
  c.wn = &g->nodes[p->operands[st->in_first + 1]];
  tw = &p->tensors[p->operands[st->in_first + 1]];
  if (c.wn->op != FUSE__OP_CONST) return 1; /* weights as an input: the reference */
  c.G = st->a.conv.groups, c.K = tw->shape[0], c.Cg = tw->shape[1], c.Kg = c.K / c.G;
  c.KH = tw->shape[2], c.KW = tw->shape[3], c.taps = c.KH * c.KW;
  c.OH = ty->shape[2], c.OW = ty->shape[3], c.npix = ty->shape[0] * c.OH * c.OW;
  if (c.Cg == 1 && c.Kg == 1) {
    if (!fuse__choose_dw(p, st, &c, zeros, scratch)) return 1;
  } else if (c.Kg < 4 || !(fuse__choose_few_channels(p, g, st, &c, scratch) ||
                           fuse__choose_nchw_gemm(p, g, st, &c, scratch) ||
                           fuse__choose_igemm(p, st, &c, zeros, scratch))) {
    return 1;
  }
  return fuse__pack_conv(p, st, &c);
}
/* ==== end src/layouts.c ==== */
/* ==== begin src/plan_describe.c ==== */
/* A growable text buffer for the plan's description. */
typedef struct fuse__listing {
  const fuse_allocator *a;
  char *buf;
  size_t len, cap;
  int failed;
} fuse__listing;

static void fuse__listing_write(void *user, const char *s, size_t n) {
  fuse__listing *t = (fuse__listing *)user;
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    char *bigger;
    while (cap < t->len + n + 1) cap *= 2;
    bigger = (char *)fuse__alloc(t->a, cap, 16);
    if (!bigger) {
      t->failed = 1;
      return;
    }
    if (t->buf) memcpy(bigger, t->buf, t->len);
    fuse__free(t->a, t->buf);
    t->buf = bigger;
    t->cap = cap;
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = 0;
}

static void fuse__format(fuse__out *o, const fuse_graph *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fuse__vformat(o, g, fmt, ap);
  va_end(ap);
}

/* "step 3: conv2d + bias + add + clamp[0, 6] -> %7 (composite dnnl.conv2d_bias_add_relu)" */
static void fuse__describe(fuse__listing *t, const fuse_graph *g, const fuse__step *s, int i,
                           fuse_value v, const int *number) {
  char line[512];
  fuse__out o;
  int k;
  o.buf = line;
  o.len = 0;
  o.cap = sizeof line;
  o.write = NULL;
  o.user = NULL;
  fuse__format(&o, g, "step %d: %s", i, fuse__op_names[s->op]);
  if (s->bias >= 0) fuse__puts(&o, " + bias");
  for (k = 0; k < s->num_post; k++) {
    fuse__puts(&o, " + ");
    fuse__post_write(&o, &s->post[k], "");
  }
  fuse__puts(&o, " -> ");
  fuse__put_label(&o, g, v, number);
  if (v >= 0 && g->nodes[v].composite >= 0 && s->op != FUSE__OP_TO_NHWC && s->op != FUSE__OP_TO_NCHW)
    fuse__format(&o, g, " (composite %s)", g->composites[g->nodes[v].composite].name);
  if (s->backend) fuse__format(&o, g, " (%s)", s->backend->name);
  if (s->backend_layout)
    fuse__format(&o, g, " (output in %s's layout, %D bytes)", s->backend->name,
                 (int64_t)s->backend_layout);
  if (s->note) fuse__format(&o, g, " (%s)", s->note);
  if (o.len == sizeof line - 1) o.len--; /* truncated: keep room for the newline */
  fuse__puts(&o, "\n");
  fuse__listing_write(t, line, o.len);
}

/* The backend name a step is offered to: the codegen of the composite it is the root of, when
   a backend in the list has that name; else NULL. */
static const char *fuse__offered_to(const fuse_plan *p, const fuse_graph *g, const fuse__step *st,
                                    const fuse_backend *const *list) {
  const fuse__composite *c;
  int b;
  (void)p;
  if (st->out >= g->num_nodes || g->nodes[st->out].composite < 0) return NULL; /* output copies */
  c = &g->composites[g->nodes[st->out].composite];
  if (!c->codegen || c->root != st->out) return NULL;
  for (b = 0; list[b]; b++)
    if (list[b]->name && strcmp(list[b]->name, c->codegen) == 0 && list[b]->prepare &&
        list[b]->run)
      return list[b]->name;
  return NULL;
}

/* Which tensors may stay in a backend's own layout (kept[t] = the backend name): the output
   of a fused step offered to a backend, in the workspace, that only fused steps offered to a
   backend of the same name read, directly (not through a view) and as x or a residual; and
   that no earlier attempt had to turn back to NCHW (nchw[t]). */
static void fuse__keepable(const fuse_plan *p, const fuse_graph *g, const fuse__fusion *fz,
                           const fuse_backend *const *list, const int *root,
                           const unsigned char *nchw, const char **kept) {
  int i, k;
  for (i = 0; i < p->num_tensors; i++) kept[i] = NULL;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    const char *name = fuse__offered_to(p, g, st, list);
    if (name && fz[g->nodes[st->out].composite].fused && p->tensors[st->out].kind == FUSE__LOC_WORK &&
        root[st->out] == st->out && !nchw[st->out])
      kept[st->out] = name;
  }
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    const char *name = fuse__offered_to(p, g, st, list);
    int fused = name && fz[g->nodes[st->out].composite].fused;
    for (k = 0; k < st->num_in; k++) {
      int v = p->operands[st->in_first + k], r = root[v];
      if (!kept[r]) continue;
      if (r != v || !fused || k == 1 || k == st->bias || strcmp(kept[r], name) != 0) kept[r] = NULL;
    }
  }
}

/* ==== end src/plan_describe.c ==== */
/* ==== begin src/backends.c ==== */
/* What fuse__offer_backends shares between its pieces: the per-tensor layout bookkeeping of
   one round of offers. */
typedef struct fuse__offers {
  fuse_plan *p;
  const fuse_graph *g;
  const fuse__fusion *fz;
  const fuse_compile_options *opt;
  const fuse_backend *const *list;
  const fuse_backend **made_by; /* per tensor: whose layout it is in, or NULL */
  fuse_backend_layout *layout;  /* per tensor: what its producer declared */
  const char **kept;            /* per tensor: fuse__keepable's backend name, or NULL */
  unsigned char *nchw;          /* per tensor: an earlier round turned it back to NCHW */
  size_t *scratch;
  char why[160];                /* the last backend's reason for declining */
} fuse__offers;

/* What a backend's prepare is told about a fused step: op, operands (shape, layout, the data
   of constants), output, bias and post-ops. Sets *in_layout when an operand is in some
   backend's own layout. */
static void fuse__backend_step_of(fuse__offers *f, const fuse__step *st, const fuse__composite *c,
                                  fuse_backend_step *d, int *in_layout) {
  const fuse_plan *p = f->p;
  const fuse_graph *g = f->g;
  int k;
  d->op = st->op == FUSE__OP_CONV2D ? FUSE_BACKEND_CONV2D : FUSE_BACKEND_MATMUL;
  if (st->op == FUSE__OP_CONV2D) d->conv = st->a.conv;
  d->num_operands = st->num_in;
  for (k = 0; k < st->num_in; k++) {
    fuse_value v = p->operands[st->in_first + k];
    d->operands[k].rank = p->tensors[v].rank;
    memcpy(d->operands[k].shape, p->tensors[v].shape, sizeof d->operands[k].shape);
    d->operands[k].layout = f->layout[v];
    if (f->made_by[v]) *in_layout = 1;
    while (fuse__is_view(g->nodes[v].op)) v = g->nodes[v].in[0]; /* same bytes */
    if (g->nodes[v].op == FUSE__OP_CONST) d->operands[k].data = g->nodes[v].data;
  }
  d->output.rank = p->tensors[st->out].rank;
  memcpy(d->output.shape, p->tensors[st->out].shape, sizeof d->output.shape);
  d->bias = st->bias;
  d->num_post = st->num_post;
  for (k = 0; k < st->num_post; k++) d->post[k] = st->post[k];
  d->composite = c->name;
  d->num_threads = f->opt->num_threads;
  if (f->kept[st->out]) d->output_layout = &f->layout[st->out];
}

/* Offers step st to the backends named `codegen`, in list order, until one takes it (only
   finds the first's name when the step is not fused). *name: the name, or NULL when no
   backend has it. 0: out of memory. */
static int fuse__offer_step(fuse__offers *f, fuse__step *st, const char *codegen, int fused,
                            fuse_backend_step *d, const char **name) {
  int b, k;
  f->why[0] = 0;
  for (b = 0; f->list[b] && !st->backend; b++) {
    const fuse_backend *be = f->list[b];
    void *state = NULL;
    size_t need = 0;
    fuse_result r;
    int foreign = 0;
    if (!be->name || strcmp(be->name, codegen) != 0 || !be->prepare || !be->run) continue;
    *name = be->name;
    if (!fused) break;
    for (k = 0; k < st->num_in; k++) { /* an operand in another backend's layout */
      const fuse_backend *m = f->made_by[f->p->operands[st->in_first + k]];
      if (m && m != be) foreign = 1;
    }
    if (foreign) continue;
    f->why[0] = 0;
    if (d->output_layout) memset(d->output_layout, 0, sizeof *d->output_layout);
    r = be->prepare(be, d, &state, &need, f->why, sizeof f->why);
    f->why[sizeof f->why - 1] = 0;
    if (r == FUSE_OK) {
      st->kernel = FUSE__KERNEL_BACKEND;
      st->backend = be;
      st->backend_state = state;
      if (need > *f->scratch) *f->scratch = need;
      if (d->output_layout && d->output_layout->id) {
        f->made_by[st->out] = be;
        f->p->tensors[st->out].bytes = d->output_layout->bytes;
        st->backend_layout = d->output_layout->bytes ? d->output_layout->bytes : 1;
      }
    } else if (r == FUSE_ERROR_OUT_OF_MEMORY) {
      return 0;
    }
  }
  return 1;
}

/* The description's note on a step backend `name` did not take. 0: out of memory. */
static int fuse__note_declined(fuse__offers *f, fuse__step *st, int ci, int fused,
                               const char *name) {
  const fuse_epilogue *e = &f->fz[ci].e;
  fuse__out o;
  st->note = (char *)fuse__alloc(&f->p->alloc, sizeof f->why + 64, 16);
  if (!st->note) return 0;
  o.buf = st->note;
  o.len = 0;
  o.cap = sizeof f->why + 64;
  o.write = NULL;
  o.user = NULL;
  if (!fused)
    fuse__format(&o, f->g, "%s: runs op by op: %s", name,
                 e->why[0] ? e->why : "a value inside it is read outside it");
  else
    fuse__format(&o, f->g, "%s declined: %s", name, f->why[0] ? f->why : "no reason given");
  return 1;
}

/* Offers step i, when it is the root of a composite whose codegen names a backend. 1: done;
   2: it reads a tensor in a backend's layout and no backend took it (its operands are marked
   NCHW: start over); 0: out of memory. */
static int fuse__offer_step_at(fuse__offers *f, int i) {
  fuse__step *st = &f->p->steps[i];
  const fuse_graph *g = f->g;
  const fuse__composite *c;
  const char *name = NULL;
  fuse_backend_step d;
  int k, ci, fused, in_layout = 0;
  if (st->out >= g->num_nodes || g->nodes[st->out].composite < 0) return 1; /* output copies */
  ci = g->nodes[st->out].composite;
  c = &g->composites[ci];
  if (!c->codegen || c->root != st->out) return 1;
  fused = f->fz[ci].fused; /* then the step is the conv2d / matmul with its epilogue */
  memset(&d, 0, sizeof d);
  if (fused) fuse__backend_step_of(f, st, c, &d, &in_layout);
  if (!fuse__offer_step(f, st, c->codegen, fused, &d, &name)) return 0;
  if (fused && !st->backend && in_layout) { /* its operands must be NCHW: start over */
    for (k = 0; k < st->num_in; k++) {
      int v = f->p->operands[st->in_first + k];
      if (f->made_by[v]) f->nchw[v] = 1;
    }
    return 2;
  }
  if (!name || st->backend) return 1;
  return fuse__note_declined(f, st, ci, fused, name);
}

/* Undoes every step's offer, for the next round. */
static void fuse__withdraw_offers(fuse_plan *p) {
  int i;
  for (i = 0; i < p->num_steps; i++) {
    fuse__step *st = &p->steps[i];
    if (st->backend && st->backend->destroy) st->backend->destroy(st->backend_state);
    fuse__free(&p->alloc, st->note);
    st->note = NULL;
    st->backend = NULL;
    st->backend_state = NULL;
    st->backend_layout = 0;
    st->kernel = FUSE__KERNEL_REF;
  }
  for (i = 0; i < p->num_tensors; i++) p->tensors[i].bytes = 0;
}

/* Offers each fused conv2d / matmul step whose composite's codegen names a backend to the
   backends of that name, in list order, until one takes it; a step none takes keeps a note of
   why, as does the root of such a composite that runs op by op. A tensor fuse__keepable allows
   may stay in the layout its producer's prepare declares; when a step that reads it is then
   not taken by that same backend, every state is destroyed and the steps are offered again
   with that tensor NCHW (each round turns one more back, so this ends). *scratch grows to the
   most scratch a taken step needs. 0: out of memory. */
static int fuse__offer_backends(fuse_plan *p, const fuse_graph *g, const fuse__fusion *fz,
                                const fuse_compile_options *opt, const int *root,
                                size_t *scratch) {
  fuse__offers f;
  size_t scratch0 = *scratch;
  int i, nt = p->num_tensors, again, ok = 0;
  memset(&f, 0, sizeof f);
  f.list = opt ? opt->backends : NULL;
  if (!f.list || !f.list[0]) return 1;
  f.p = p;
  f.g = g;
  f.fz = fz;
  f.opt = opt;
  f.scratch = scratch;
  f.made_by = (const fuse_backend **)fuse__alloc(&p->alloc, (size_t)nt * sizeof *f.made_by + 1, 16);
  f.layout = (fuse_backend_layout *)fuse__alloc(&p->alloc, (size_t)nt * sizeof *f.layout + 1, 16);
  f.kept = (const char **)fuse__alloc(&p->alloc, (size_t)nt * sizeof *f.kept + 1, 16);
  f.nchw = (unsigned char *)fuse__alloc(&p->alloc, (size_t)nt + 1, 16);
  if (!f.made_by || !f.layout || !f.kept || !f.nchw) goto done;
  memset(f.nchw, 0, (size_t)nt);
  do {
    again = 0;
    memset(f.made_by, 0, (size_t)nt * sizeof *f.made_by);
    memset(f.layout, 0, (size_t)nt * sizeof *f.layout);
    fuse__keepable(p, g, fz, f.list, root, f.nchw, f.kept);
    for (i = 0; i < p->num_steps && !again; i++) {
      int r = fuse__offer_step_at(&f, i);
      if (!r) goto done;
      again = r == 2;
    }
    if (again) {
      fuse__withdraw_offers(p);
      *scratch = scratch0;
    }
  } while (again);
  ok = 1;
done:
  fuse__free(&p->alloc, f.made_by);
  fuse__free(&p->alloc, f.layout);
  fuse__free(&p->alloc, f.kept);
  fuse__free(&p->alloc, f.nchw);
  return ok;
}
/* ==== end src/backends.c ==== */
/* ==== begin src/compile.c ==== */
/* ------------------------------------------------------------------ compile -- */
/* fuse_compile runs the phases below in order over one fuse__compiler. A phase returns 0 when
   it runs out of memory; fuse_compile then reports that and frees everything in one place. */

typedef struct fuse__compiler {
  const fuse_graph *g;
  const fuse_compile_options *opt;
  const fuse_allocator *a;
  fuse_plan *p;
  fuse__fusion *fz;     /* per composite: fused into one step, or op by op */
  fuse__users users;    /* who reads each node */
  int n;                /* the graph's nodes; tensor i < n holds node i */
  int cap_tensors;      /* room in p->tensors and the per-tensor arrays below */
  int cap_steps, cap_operands; /* room in p->steps and p->operands */
  int n_ops;            /* steps the graph's ops and output copies need */
  int reported;         /* a phase failed with a message of its own (else: out of memory) */
  int *needed;          /* per node: an output depends on it */
  int *input_pos;       /* per input node: its position among the graph's inputs */
  int *root;            /* per tensor: whose bytes it is (a view's operand, else itself) */
  int *alt;             /* per tensor: the same values in the other layout, or -1 */
  int *first, *last;    /* per tensor: the step that writes it first, reads it last */
  int *order;           /* the workspace tensors, as fuse__place orders them */
  size_t *ranges;       /* fuse__place's busy ranges */
  fuse_value *ins;      /* one step's inputs */
  size_t zeros;         /* floats in the SIMD kernels' row of zeros */
  size_t scratch;       /* the SIMD kernels' scratch per chunk (bytes) */
  size_t backend_scratch;
  fuse__writer w;       /* the text form's numbering, so the plan's labels match a listing */
  int *number;
  fuse__listing text;   /* the plan's description */
} fuse__compiler;

/* The arguments, before anything is allocated. */
static fuse_result fuse__compile_check(const fuse_graph *g, const fuse_compile_options *opt,
                                       fuse_plan **out) {
  fuse_isa cpu = fuse_cpu_isa(), isa = opt ? opt->isa : FUSE_ISA_AUTO;
  if (!g || !out) {
    fuse__compile_error(opt, NULL, "compile: %s is NULL", g ? "out" : "the graph");
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  if (g->status != FUSE_OK) {
    fuse__compile_error(opt, g, "compile: the graph has an error: %s", g->error);
    return g->status;
  }
  if (g->num_outputs == 0) {
    fuse__compile_error(opt, g, "compile: the graph has no outputs (call fuse_output)");
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  if ((unsigned)isa > (unsigned)FUSE_ISA_AVX512) { /* enums may be unsigned chars */
    fuse__compile_error(opt, g, "compile: isa %d is not a fuse_isa", (int)isa);
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  if (isa != FUSE_ISA_AUTO && isa > cpu) {
    fuse__compile_error(opt, g, "compile: isa %s is not supported here (best: %s)",
                        isa == FUSE_ISA_AVX512 ? "avx512" : "avx2",
                        cpu == FUSE_ISA_AVX2 ? "avx2" : "scalar");
    return FUSE_ERROR_UNSUPPORTED;
  }
  return FUSE_OK;
}

/* threads: the host's parallel_for, else OpenMP, else none. A parallel step is cut into
   exactly `chunks` pieces, each with its own packing buffer, whichever thread runs it. */
static void fuse__plan_threads(fuse_plan *p, const fuse_compile_options *opt) {
  p->chunks = 1;
  if (opt && opt->parallel_for) {
    p->parallel_for = opt->parallel_for;
    p->parallel_user = opt->parallel_user;
    p->chunks = opt->num_threads > 0 ? opt->num_threads : 8;
  }
#ifdef _OPENMP
  else
    p->chunks = opt && opt->num_threads > 0 ? opt->num_threads : omp_get_max_threads();
#endif
  if (p->chunks > 64) p->chunks = 64;
  if (p->chunks < 1) p->chunks = 1;
}

/* The empty plan and the arrays the phases share. */
static int fuse__compile_start(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  const fuse_allocator *a = c->a;
  fuse_plan *p;
  int n = c->n, cap;
  fuse_isa isa = c->opt ? c->opt->isa : FUSE_ISA_AUTO;
  p = c->p = (fuse_plan *)fuse__alloc(a, sizeof *p, 16);
  if (!p) return 0;
  memset(p, 0, sizeof *p);
  p->alloc = *a;
  /* the kernels' ISA; FUSE_ISA_AUTO on the reference kernels: no kernel table row has it */
  p->isa = c->opt && c->opt->reference_kernels ? FUSE_ISA_AUTO
           : isa == FUSE_ISA_AUTO                ? fuse_cpu_isa()
                                                 : isa;
  fuse__plan_threads(p, c->opt);
  p->num_inputs = g->num_inputs;
  p->num_outputs = g->num_outputs;
  p->num_tensors = n + g->num_outputs; /* one extra per output, for copies into it */
  /* room for one copy of each in the other layout, and for outputs written through NHWC */
  cap = c->cap_tensors = 2 * p->num_tensors + g->num_outputs;
  c->needed = (int *)fuse__alloc(a, (size_t)n * sizeof(int) + 1, 16);
  c->root = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->alt = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->first = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->last = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->order = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->input_pos = (int *)fuse__alloc(a, (size_t)n * sizeof(int) + 1, 16);
  c->ranges = (size_t *)fuse__alloc(a, (size_t)cap * 2 * sizeof(size_t), 16);
  p->tensors = (fuse__tensor *)fuse__alloc(a, (size_t)cap * sizeof(fuse__tensor), 16);
  c->fz = (fuse__fusion *)fuse__alloc(a, (size_t)(g->num_composites + 1) * sizeof(fuse__fusion),
                                      16);
  c->ins = (fuse_value *)fuse__alloc(a, (size_t)(n + 8) * sizeof(fuse_value), 16);
  c->text.a = a;
  return c->needed && c->root && c->alt && c->first && c->last && c->order && c->input_pos &&
         c->ranges && p->tensors && c->fz && c->ins && fuse__users_build(g, &c->users) &&
         fuse__writer_init(&c->w, g, &c->number);
}

/* which composites run fused: an epilogue the analyzer accepts, nothing but the root read
   from outside (with allow_escaping an intermediate may be) */
static int fuse__decide_fusion(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  fuse__fusion *fz = c->fz;
  int i, k;
  for (i = 0; i < g->num_composites; i++)
    fz[i].fused = fuse_analyze_epilogue(g, g->composites[i].root, &fz[i].e) == FUSE_OK;
  for (k = 0; k < c->n; k++) { /* one pass: a member other than the root read from outside */
    int ci = g->nodes[k].composite, j;
    if (ci < 0 || !fz[ci].fused || k == g->composites[ci].root) continue;
    if (fuse__is_output(g, k)) fz[ci].fused = 0;
    for (j = c->users.first[k]; j < c->users.first[k + 1]; j++)
      if (g->nodes[c->users.list[j]].composite != ci) fz[ci].fused = 0;
  }
  return 1;
}

/* which nodes the outputs depend on (nodes only refer to earlier ones) */
static int fuse__find_needed(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  int i, k;
  memset(c->needed, 0, (size_t)c->n * sizeof(int));
  for (i = 0; i < g->num_outputs; i++) c->needed[g->outputs[i]] = 1;
  for (i = c->n - 1; i >= 0; i--)
    if (c->needed[i]) {
      int count = fuse__step_inputs(g, c->fz, i, c->ins);
      for (k = 0; k < count; k++) c->needed[c->ins[k]] = 1;
    }
  for (i = 0; i < g->num_inputs; i++) c->input_pos[g->inputs[i]] = i;
  return 1;
}

/* Where a needed node's tensor lives: the caller's input or output, the constants (at a
   provisional offset), the workspace, or a view's operand. Counts the steps it needs. */
static void fuse__place_node(fuse__compiler *c, int i, size_t *const_bytes) {
  const fuse_graph *g = c->g;
  const fuse__node *nd = &g->nodes[i];
  fuse__tensor *t = &c->p->tensors[i];
  int k, out_pos = -1;
  if (nd->op == FUSE__OP_INPUT) {
    t->kind = FUSE__LOC_INPUT;
    t->index = c->input_pos[i];
    return;
  }
  if (nd->op == FUSE__OP_CONST) {
    t->kind = FUSE__LOC_CONST;
    t->offset = *const_bytes;
    *const_bytes += fuse__tensor_bytes(t);
    return;
  }
  for (k = 0; k < g->num_outputs && out_pos < 0; k++)
    if (g->outputs[k] == i) out_pos = k;
  if (fuse__is_view(nd->op) && out_pos < 0) { /* same bytes as its operand */
    const fuse__tensor *src = &c->p->tensors[nd->in[0]];
    t->kind = src->kind;
    t->index = src->index;
    t->offset = src->offset;
    c->root[i] = c->root[nd->in[0]];
    return;
  }
  if (out_pos >= 0) {
    t->kind = FUSE__LOC_OUTPUT;
    t->index = out_pos;
  } else {
    t->kind = FUSE__LOC_WORK;
  }
  c->n_ops++;
}

/* where each tensor lives; outputs not written in place by their op get a copy step */
static int fuse__place_tensors(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  fuse_plan *p = c->p;
  size_t const_bytes = 0;
  int i, n = c->n;
  memset(p->tensors, 0, (size_t)p->num_tensors * sizeof(fuse__tensor));
  for (i = 0; i < p->num_tensors; i++) c->root[i] = i;
  for (i = 0; i < n; i++) {
    const fuse__node *nd = &g->nodes[i];
    fuse__tensor *t = &p->tensors[i];
    t->rank = nd->rank;
    t->value = i;
    memcpy(t->shape, nd->shape, sizeof t->shape);
    if (!c->needed[i]) continue;
    if ((uint64_t)fuse__numel(t->rank, t->shape) > (uint64_t)((size_t)-1 / 4 / sizeof(float))) {
      /* FUSE_ERROR_OUT_OF_MEMORY, with this message */
      fuse__compile_error(c->opt, g, "compile: %V %S does not fit this target's address space",
                          i, t->rank, t->shape);
      c->reported = 1;
      return 0;
    }
    fuse__place_node(c, i, &const_bytes);
  }
  for (i = 0; i < g->num_outputs; i++) {
    const fuse__tensor *src = &p->tensors[g->outputs[i]];
    fuse__tensor *t = &p->tensors[n + i];
    *t = *src;
    t->value = g->outputs[i];
    t->kind = FUSE__LOC_OUTPUT;
    t->index = i;
    t->offset = 0;
    if (!(src->kind == FUSE__LOC_OUTPUT && src->index == i)) c->n_ops++;
  }
  return 1;
}

/* Node i's step: its own op, or for a fused composite's root the conv2d / matmul with the
   epilogue's bias and post-ops (bias and residuals become operands 2, 3, ...). */
static void fuse__node_step(fuse__compiler *c, int i, fuse__step *st, int in_first) {
  const fuse_graph *g = c->g;
  const fuse__node *nd = &g->nodes[i];
  int k;
  st->op = nd->op;
  st->out = i;
  st->a = nd->a;
  st->bias = -1;
  st->in_first = in_first;
  st->num_in = fuse__step_inputs(g, c->fz, i, c->ins);
  if (nd->composite >= 0 && c->fz[nd->composite].fused && g->composites[nd->composite].root == i) {
    const fuse_epilogue *e = &c->fz[nd->composite].e;
    int next = 2;
    st->op = g->nodes[e->reduction].op;
    st->a = g->nodes[e->reduction].a;
    if (e->bias != FUSE_NONE) st->bias = next++;
    st->num_post = e->num_post;
    for (k = 0; k < e->num_post; k++) {
      st->post[k] = e->post[k];
      st->post[k].operand = e->post[k].kind == FUSE_POST_ADD ? next++ : -1;
    }
  }
}

/* steps and operands, op by op, then the output copies */
static int fuse__build_steps(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  fuse_plan *p = c->p;
  int n_operands = g->num_outputs, s = 0, o = 0, i, k, n = c->n;
  for (i = 0; i < n; i++)
    if (c->needed[i] && g->nodes[i].op > FUSE__OP_CONST)
      n_operands += fuse__step_inputs(g, c->fz, i, NULL);
  c->cap_steps = c->n_ops + c->cap_tensors + 1; /* room for the conversions */
  c->cap_operands = n_operands + c->cap_tensors + 1;
  p->steps = (fuse__step *)fuse__alloc(c->a, (size_t)c->cap_steps * sizeof(fuse__step), 16);
  p->operands = (int *)fuse__alloc(c->a, (size_t)c->cap_operands * sizeof(int), 16);
  if (!p->steps || !p->operands) return 0;
  memset(p->steps, 0, (size_t)c->cap_steps * sizeof(fuse__step));
  for (i = 0; i < n; i++) {
    if (!c->needed[i] || g->nodes[i].op <= FUSE__OP_CONST || c->root[i] != i) continue;
    fuse__node_step(c, i, &p->steps[s], o);
    for (k = 0; k < p->steps[s].num_in; k++) p->operands[o++] = c->ins[k];
    s++;
  }
  for (i = 0; i < g->num_outputs; i++) {
    const fuse__tensor *src = &p->tensors[g->outputs[i]];
    if (src->kind == FUSE__LOC_OUTPUT && src->index == i) continue;
    p->steps[s].op = FUSE__OP_COPY;
    p->steps[s].out = n + i;
    p->steps[s].bias = -1;
    p->steps[s].in_first = o;
    p->steps[s].num_in = 1;
    p->operands[o++] = g->outputs[i];
    s++;
  }
  p->num_steps = s;
  return 1;
}

/* the kernel table's conv2d / matmul kernels: chosen and their weights packed here, once */
static int fuse__choose_kernels(fuse__compiler *c) {
  fuse_plan *p = c->p;
  int i;
  for (i = 0; i < p->num_steps; i++)
    if (p->steps[i].kernel != FUSE__KERNEL_BACKEND &&
        !fuse__choose_kernel(p, c->g, &p->steps[i], &c->zeros, &c->scratch))
      return 0;
  return 1;
}

/* layouts: NHWC between the SIMD convs and the ops that follow them, conversions between;
   the steps are copied into new arrays with the conversions in place */
static int fuse__choose_layouts(fuse__compiler *c) {
  fuse_plan *p = c->p;
  const fuse_allocator *a = c->a;
  fuse__relayout x;
  int i, relayout = 0;
  for (i = 0; i < p->num_steps && !relayout; i++)
    relayout = p->steps[i].op == FUSE__OP_CONV2D && p->steps[i].kernel == FUSE__KERNEL_IGEMM;
  if (!relayout) return 1;
  x.steps = (fuse__step *)fuse__alloc(a, (size_t)c->cap_steps * sizeof(fuse__step), 16);
  x.operands = (int *)fuse__alloc(a, (size_t)c->cap_operands * sizeof(int), 16);
  if (!x.steps || !x.operands) {
    fuse__free(a, x.steps);
    fuse__free(a, x.operands);
    return 0;
  }
  memset(x.steps, 0, (size_t)c->cap_steps * sizeof(fuse__step));
  for (i = 0; i < c->cap_tensors; i++) c->alt[i] = -1;
  x.p = p;
  x.root = c->root;
  x.alt = c->alt;
  x.num_steps = x.num_operands = 0;
  fuse__relayout_steps(&x, p->steps, p->num_steps, p->operands);
  fuse__free(a, p->steps);
  fuse__free(a, p->operands);
  p->steps = x.steps;
  p->operands = x.operands;
  p->num_steps = x.num_steps;
  return 1;
}

/* lifetimes in steps: written first, read last; and the description, step by step */
static int fuse__find_lifetimes(fuse__compiler *c) {
  fuse_plan *p = c->p;
  int i, k;
  for (i = 0; i < p->num_tensors; i++) c->first[i] = c->last[i] = -1;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    for (k = 0; k < st->num_in; k++) c->last[c->root[p->operands[st->in_first + k]]] = i;
    if (c->first[st->out] < 0) c->first[st->out] = i;
    fuse__describe(&c->text, c->g, st, i, p->tensors[st->out].value, c->number);
  }
  return 1;
}

/* Rounds n up to FUSE__ALIGN. */
static size_t fuse__workspace_align(size_t n) {
  return (n + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
}

/* the workspace: the work tensors where their lifetimes allow, then the SIMD kernels'
   scratch per chunk and the backends' scratch at its end; the row of zeros */
static int fuse__plan_memory(fuse__compiler *c) {
  fuse_plan *p = c->p;
  int i, n_work = 0;
  for (i = 0; i < p->num_tensors; i++)
    if ((i >= c->n || c->needed[i]) && c->root[i] == i && p->tensors[i].kind == FUSE__LOC_WORK) {
      /* written, never read: still needs room */
      if (c->last[i] < c->first[i]) c->last[i] = c->first[i];
      c->order[n_work++] = i;
    }
  fuse__place(p, c->first, c->last, c->order, n_work, c->ranges);
  if (c->zeros) { /* a row of zeros the SIMD conv reads where a tap falls into the padding */
    p->zeros = (float *)fuse__alloc(c->a, c->zeros * sizeof(float), FUSE__ALIGN);
    if (!p->zeros) return 0;
    memset(p->zeros, 0, c->zeros * sizeof(float));
  }
  if (c->scratch) { /* per chunk: the SIMD kernels' row pointers and padded rows */
    p->scratch_offset = fuse__workspace_align(p->workspace_size);
    p->scratch_slot = fuse__workspace_align(c->scratch);
    p->workspace_size = p->scratch_offset + p->scratch_slot * (size_t)p->chunks;
  }
  if (c->backend_scratch) { /* one block: steps run one after another */
    p->backend_offset = fuse__workspace_align(p->workspace_size);
    p->backend_scratch = fuse__workspace_align(c->backend_scratch);
    p->workspace_size = p->backend_offset + p->backend_scratch;
  }
  for (i = 0; i < c->n; i++) /* views follow their root */
    if (c->root[i] != i && p->tensors[c->root[i]].kind == FUSE__LOC_WORK) {
      p->tensors[i].kind = FUSE__LOC_WORK;
      p->tensors[i].offset = p->tensors[c->root[i]].offset;
    }
  return 1;
}

/* the plan's own copies of the constants a step reads: a SIMD kernel reads its packed
   weights instead (order[] is free again: it marks what is read) */
static int fuse__copy_constants(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  fuse_plan *p = c->p;
  int *read = c->order, i, k, n = c->n;
  size_t const_bytes = 0;
  for (i = 0; i < n; i++) read[i] = 0;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    for (k = 0; k < st->num_in; k++)
      if (!(k == 1 && st->kernel != FUSE__KERNEL_REF)) {
        int t = c->root[p->operands[st->in_first + k]];
        if (t < n) read[t] = 1;
      }
  }
  for (i = 0; i < n; i++)
    if (c->needed[i] && g->nodes[i].op == FUSE__OP_CONST) {
      p->tensors[i].offset = const_bytes;
      if (read[i]) const_bytes += fuse__tensor_bytes(&p->tensors[i]);
    }
  for (i = 0; i < n; i++) /* views of constants follow them */
    if (c->root[i] != i && p->tensors[c->root[i]].kind == FUSE__LOC_CONST)
      p->tensors[i].offset = p->tensors[c->root[i]].offset;
  p->consts = (float *)fuse__alloc(c->a, const_bytes, FUSE__ALIGN);
  if (!p->consts) return 0;
  p->weights_size += const_bytes;
  for (i = 0; i < n; i++)
    if (c->needed[i] && g->nodes[i].op == FUSE__OP_CONST && read[i])
      memcpy((char *)p->consts + p->tensors[i].offset, g->nodes[i].data,
             (size_t)fuse__numel(g->nodes[i].rank, g->nodes[i].shape) * sizeof(float));
  return 1;
}

/* the plan's own workspace (used when fuse_run is given none) and its description */
static int fuse__compile_finish(fuse__compiler *c) {
  fuse_plan *p = c->p;
  if (p->workspace_size) {
    p->own_workspace = fuse__alloc(c->a, p->workspace_size, FUSE__ALIGN);
    if (!p->own_workspace) return 0;
  }
  if (c->text.failed) return 0;
  p->description = c->text.buf;
  c->text.buf = NULL;
  return 1;
}

/* Frees what the phases allocated, and the plan unless it was handed out. */
static void fuse__compiler_free(fuse__compiler *c) {
  const fuse_allocator *a = c->a;
  fuse_plan_destroy(c->p);
  fuse__free(a, c->needed);
  fuse__free(a, c->root);
  fuse__free(a, c->first);
  fuse__free(a, c->last);
  fuse__free(a, c->order);
  fuse__free(a, c->input_pos);
  fuse__free(a, c->ranges);
  fuse__free(a, c->alt);
  fuse__free(a, c->fz);
  fuse__free(a, c->ins);
  fuse__free(a, c->text.buf);
  fuse__users_free(c->g, &c->users);
  if (c->w.g) fuse__writer_free(&c->w, c->number);
}

FUSE_API fuse_result fuse_compile(const fuse_graph *g, const fuse_compile_options *opt,
                                  fuse_plan **out) {
  fuse__compiler c;
  fuse_result status;
  int ok;
  if (out) *out = NULL;
  status = fuse__compile_check(g, opt, out);
  if (status != FUSE_OK) return status;
  memset(&c, 0, sizeof c);
  c.g = g;
  c.opt = opt;
  c.a = &g->alloc;
  c.n = g->num_nodes;
  ok = /* the plan and the arrays every phase shares */
       fuse__compile_start(&c) &&
       /* first: a fused composite becomes one step and its inner ops none */
       fuse__decide_fusion(&c) &&
       /* walks the steps' inputs back from the outputs, so fusion must be decided */
       fuse__find_needed(&c) &&
       /* only needed nodes get a place; a view shares its operand's */
       fuse__place_tensors(&c) &&
       /* a step per placed op, sized by the counts placing made */
       fuse__build_steps(&c) &&
       /* backends before our kernels: a step one takes gets no kernel of ours */
       fuse__offer_backends(c.p, g, c.fz, opt, c.root, &c.backend_scratch) &&
       fuse__choose_kernels(&c) &&
       /* after the kernels: an NHWC conv decides its neighbours' layout */
       fuse__choose_layouts(&c) &&
       /* once the steps are final, conversions included */
       fuse__find_lifetimes(&c) &&
       /* every size is known now: tensors, backend layouts, the kernels' scratch */
       fuse__plan_memory(&c) &&
       /* last: the kernels chose which weights they pack, the rest are copied */
       fuse__copy_constants(&c) &&
       /* only a plan that is complete gets its workspace and description */
       fuse__compile_finish(&c);
  if (ok) {
    *out = c.p;
    c.p = NULL;
  } else if (!c.reported) {
    fuse__compile_error(opt, g, "compile: out of memory");
  }
  fuse__compiler_free(&c);
  return ok ? FUSE_OK : FUSE_ERROR_OUT_OF_MEMORY;
}

FUSE_API size_t fuse_plan_workspace_size(const fuse_plan *p) { return p ? p->workspace_size : 0; }

FUSE_API int fuse_plan_step_count(const fuse_plan *p) { return p ? p->num_steps : 0; }

FUSE_API size_t fuse_plan_weights_size(const fuse_plan *p) { return p ? p->weights_size : 0; }

FUSE_API fuse_result fuse_plan_write(const fuse_plan *p, fuse_write_fn write, void *user) {
  if (!p || !write) return FUSE_ERROR_INVALID_ARGUMENT;
  if (p->description) write(user, p->description, strlen(p->description));
  return FUSE_OK;
}

/* ==== end src/compile.c ==== */
/* ==== begin src/kernels/reference.c ==== */
/* ------------------------------------------------------- reference kernels -- */
/* Plain C, one per op, written for clarity; they are the oracle for every faster path. */

typedef struct fuse__run {
  const fuse_plan *p;
  const float *const *inputs;
  float *const *outputs;
  unsigned char *work;
} fuse__run;

static float *fuse__data(const fuse__run *r, int t) {
  const fuse__tensor *x = &r->p->tensors[t];
  switch (x->kind) {
  case FUSE__LOC_INPUT: return (float *)(uintptr_t)r->inputs[x->index]; /* read only */
  case FUSE__LOC_OUTPUT: return r->outputs[x->index];
  case FUSE__LOC_WORK: return (float *)(void *)(r->work + x->offset);
  default: return (float *)(void *)((char *)r->p->consts + x->offset);
  }
}

static const fuse__tensor *fuse__in_t(const fuse__run *r, const fuse__step *s, int i) {
  return &r->p->tensors[r->p->operands[s->in_first + i]];
}
static const float *fuse__in(const fuse__run *r, const fuse__step *s, int i) {
  return fuse__data(r, r->p->operands[s->in_first + i]);
}

/* Element strides of t seen from an output of rank `rank` (numpy broadcasting: 0 where t has
   size 1 or no dimension). */
static void fuse__broadcast_strides(const fuse__tensor *t, int rank, const int64_t *oshape,
                                    int64_t *strides) {
  int i;
  int64_t s = 1;
  for (i = rank - 1; i >= 0; i--) {
    int d = i - (rank - t->rank);
    if (d < 0 || t->shape[d] != oshape[i]) {
      strides[i] = 0;
    } else {
      strides[i] = s;
    }
    if (d >= 0) s *= t->shape[d];
  }
}

/* The shape of t's bytes when it is NHWC (or broadcasts against an NHWC tensor): aligned to
   rank 4, then [N, H, W, C]. */
static void fuse__nhwc_shape(const fuse__tensor *t, fuse__tensor *v) {
  int64_t s4[4] = {1, 1, 1, 1};
  int d;
  *v = *t;
  for (d = 0; d < t->rank && d < 4; d++) s4[4 - t->rank + d] = t->shape[d];
  v->rank = 4;
  v->shape[0] = s4[0], v->shape[1] = s4[2], v->shape[2] = s4[3], v->shape[3] = s4[1];
}

static float fuse__binary_op(int op, float a, float b) {
  switch (op) {
  case FUSE__OP_ADD: return a + b;
  case FUSE__OP_SUB: return a - b;
  case FUSE__OP_MUL: return a * b;
  case FUSE__OP_MAXIMUM: return (a > b || a != a) ? a : b; /* NaN propagates, as in numpy */
  default: return (a < b || a != a) ? a : b;
  }
}

static void fuse__kernel_binary(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out], *ta = fuse__in_t(r, s, 0), *tb = fuse__in_t(r, s, 1);
  const float *a = fuse__in(r, s, 0), *b = fuse__in(r, s, 1);
  fuse__tensor vy, va, vb;
  float *y = fuse__data(r, s->out);
  int64_t sa[FUSE_MAX_RANK], sb[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], inner, outer, o, j;
  int64_t ia, ib, na, nb; /* strides along a row; element counts of a and b */
  int rank = ty->rank, d;
  fuse__elt_fn fn = NULL;
  if (rank == 0) {
    y[0] = fuse__binary_op(s->op, a[0], b[0]);
    return;
  }
  if (ty->nhwc) { /* the same loops over the bytes' [N, H, W, C] shapes */
    fuse__nhwc_shape(ty, &vy);
    fuse__nhwc_shape(ta, &va);
    fuse__nhwc_shape(tb, &vb);
    ty = &vy, ta = &va, tb = &vb;
  }
  fuse__broadcast_strides(ta, rank, ty->shape, sa);
  fuse__broadcast_strides(tb, rank, ty->shape, sb);
  inner = ty->shape[rank - 1];
  outer = fuse__numel(rank - 1, ty->shape);
  ia = sa[rank - 1], ib = sb[rank - 1];
  na = fuse__numel(ta->rank, ta->shape), nb = fuse__numel(tb->rank, tb->shape);
  if ((na == inner * outer || na == 1) && (nb == inner * outer || nb == 1)) { /* one row */
    ia = na > 1 || inner * outer == 1, ib = nb > 1 || inner * outer == 1;
    inner *= outer, outer = 1;
  }
  if (ia <= 1 && ib <= 1) fn = fuse__elt_pick(r->p->isa); /* rows of whole or scalar operands */
  memset(idx, 0, sizeof idx);
  for (o = 0; o < outer; o++) {
    int64_t oa = 0, ob = 0;
    float *yr = y + o * inner;
    for (d = 0; d < rank - 1; d++) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    if (fn)
      fn(s->op, yr, a + oa, (int)ia, b + ob, (int)ib, inner, 0, 0);
    else
      for (j = 0; j < inner; j++) yr[j] = fuse__binary_op(s->op, a[oa + j * ia], b[ob + j * ib]);
    for (d = rank - 2; d >= 0 && ++idx[d] == ty->shape[d]; d--) idx[d] = 0;
  }
}

static void fuse__kernel_unary(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t i, count = fuse__numel(ty->rank, ty->shape);
  float lo = s->a.clip.lo, hi = s->a.clip.hi;
  fuse__elt_fn fn = fuse__elt_pick(r->p->isa);
  if (fn && (s->op == FUSE__OP_RELU || s->op == FUSE__OP_CLIP)) {
    fn(s->op, y, x, 1, x, 1, count, lo, hi);
    return;
  }
  switch (s->op) {
  case FUSE__OP_RELU:
    for (i = 0; i < count; i++) y[i] = x[i] < 0 ? 0.0f : x[i]; /* NaN stays NaN */
    break;
  case FUSE__OP_CLIP:
    for (i = 0; i < count; i++) y[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
    break;
  case FUSE__OP_SIGMOID:
    for (i = 0; i < count; i++) { /* never exp of a large positive number */
      float e = expf(-fabsf(x[i]));
      y[i] = x[i] >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
    }
    break;
  default: /* COPY, and reshape / flatten that are outputs */
    if (y != x) memcpy(y, x, (size_t)count * sizeof(float));
    break;
  }
}

/* Post-op q's tensor operand (a residual) at its first element, or NULL when the post-op has
   none: where every kernel's epilogue gets its data at run time. */
static const float *fuse__post_operand(const fuse__run *r, const fuse__step *s, int q) {
  return s->post[q].operand >= 0 ? fuse__in(r, s, s->post[q].operand) : NULL;
}

/* The epilogue, once per finished output element: bias, then the post-ops in order.
   y[0..count) sits at element `at` of the output; bias advances by bias_step per element. */
static void fuse__epilogue(const fuse__run *r, const fuse__step *s, float *y, int64_t count,
                           int64_t at, const float *bias, int bias_step) {
  const float *res[FUSE_MAX_POST_OPS];
  int64_t i;
  int k;
  for (k = 0; k < s->num_post; k++)
    if ((res[k] = fuse__post_operand(r, s, k)) != NULL) res[k] += at;
  for (i = 0; i < count; i++) {
    float v = y[i];
    if (bias) v += bias[i * bias_step];
    for (k = 0; k < s->num_post; k++) /* the scalar instance of the kernels' one routine */
      v = fuse__post_apply_scalar(v, &s->post[k], res[k] ? res[k] + i : NULL, 1);
    y[i] = v;
  }
}

/* ==== end src/kernels/reference.c ==== */
/* ==== begin src/kernels/conv_drivers.c ==== */
/* Runs fn over `units` pieces of work cut into the plan's chunks: through the host's
   parallel_for, else OpenMP, else in turn. fn(ctx, chunk, u0, u1). */
typedef void (*fuse__range_fn)(void *ctx, int chunk, int64_t u0, int64_t u1);
typedef struct fuse__par {
  const fuse_plan *p;
  int64_t units;
  fuse__range_fn fn;
  void *ctx;
} fuse__par;

static void fuse__par_chunks(void *ctx, int begin, int end) {
  const fuse__par *j = (const fuse__par *)ctx;
  int c;
  for (c = begin; c < end; c++)
    j->fn(j->ctx, c, j->units * c / j->p->chunks, j->units * (c + 1) / j->p->chunks);
}

static void fuse__parallel(const fuse_plan *p, int64_t units, fuse__range_fn fn, void *ctx) {
  fuse__par j;
  j.p = p;
  j.units = units;
  j.fn = fn;
  j.ctx = ctx;
  if (p->chunks == 1 || units < 2) {
    fn(ctx, 0, 0, units);
  } else if (p->parallel_for) {
    p->parallel_for(p->parallel_user, fuse__par_chunks, &j, p->chunks);
  } else {
#ifdef _OPENMP
    int c;
#pragma omp parallel for schedule(static)
    for (c = 0; c < p->chunks; c++) fuse__par_chunks(&j, c, c + 1);
#else
    fuse__par_chunks(&j, 0, p->chunks);
#endif
  }
}

/* A GEMM-family conv step's input, output and bias, and the post-ops for its micro-kernels'
   epilogue (residuals at their first element; fuse__tile_residuals moves them to a tile). */
static void fuse__conv_operands(const fuse__run *r, const fuse__step *s, const float **x, float **y,
                                const float **bias, fuse__tile_epi *e) {
  int q;
  *x = fuse__in(r, s, 0);
  *y = fuse__data(r, s->out);
  *bias = s->bias >= 0 ? fuse__in(r, s, s->bias) : NULL;
  e->post = s->post;
  e->num_post = s->num_post;
  for (q = 0; q < s->num_post; q++)
    e->res[q] = fuse__post_operand(r, s, q);
}

/* The residuals of a tile whose first element is `at` floats into the output (from the
   step's, in `step`). */
static void fuse__tile_residuals(fuse__tile_epi *e, const fuse__tile_epi *step, int64_t at) {
  int q;
  for (q = 0; q < e->num_post; q++)
    if (step->res[q]) e->res[q] = step->res[q] + at;
}

/* An NHWC GEMM conv (or matmul) step at run time: NHWC x [N, H, W, C] -> y [N, OH, OW, K]. */
typedef struct fuse__conv_job {
  const fuse__run *r;
  const fuse__step *s;
  const float *x, *bias;
  float *y;
  fuse__igemm_fn fn, fn_last; /* the last column block's (fuse__igemm_last) */
  fuse__tile_epi e;
  int64_t C, H, W, K, OH, OW, KH, KW, Cg, Kg, G, obs, tiles, npix;
} fuse__conv_job;

/* Row pointers of one tile of MR output pixels from p0 (rows past `rows` repeat the last):
   ptr[tap * MR + i]. */
static void fuse__igemm_ptrs(const fuse__conv_job *j, int64_t grp, int64_t p0, int rows,
                             const float **ptr, float *rowbuf) {
  const fuse__step *s = j->s;
  const fuse_conv2d_attrs *a = &s->a.conv;
  const float *zeros = j->r->p->zeros;
  int64_t C = j->C, Cg = j->Cg, KH = j->KH, KW = j->KW, i, kh, kw;
  int mr = s->mr;
  if (s->pointwise) { /* input pixel = output pixel */
    for (i = 0; i < mr; i++) ptr[i] = j->x + (p0 + (i < rows ? i : rows - 1)) * C + grp * Cg;
    return;
  }
  int64_t n = p0 / (j->OH * j->OW), oh = p0 / j->OW % j->OH, ow = p0 % j->OW - 1;
  if (!s->rowmode && rows == mr && ow + mr < j->OW) { /* a whole tile inside one output row */
    int64_t sw = a->strides[1], ih0 = oh * a->strides[0] - a->padding[0];
    int64_t iw0 = (ow + 1) * sw - a->padding[1];
    if (ih0 >= 0 && ih0 + (KH - 1) * a->dilation[0] < j->H && iw0 >= 0 &&
        iw0 + (mr - 1) * sw + (KW - 1) * a->dilation[1] < j->W) {
      /* whose window stays inside the input: a tap's pointer plus the pixel's, no bounds */
      const float *xb = j->x + ((n * j->H + ih0) * j->W + iw0) * C + grp * Cg;
      for (kh = 0; kh < KH; kh++)
        for (kw = 0; kw < KW; kw++) {
          const float *tp = xb + (kh * a->dilation[0] * j->W + kw * a->dilation[1]) * C;
          const float **pp = ptr + (kh * KW + kw) * mr;
          for (i = 0; i < mr; i++) pp[i] = tp + i * sw * C;
        }
      return;
    }
  }
  for (i = 0; i < mr; i++) { /* the next pixel (the last valid one again past `rows`) */
    int64_t ih0, iw0;
    const float *xn;
    if (i < rows && ++ow == j->OW) {
      ow = 0;
      if (++oh == j->OH) oh = 0, n++;
    }
    ih0 = oh * a->strides[0] - a->padding[0], iw0 = ow * a->strides[1] - a->padding[1];
    xn = j->x + n * j->H * j->W * C + grp * Cg;
    for (kh = 0; kh < KH; kh++) {
      int64_t ih = ih0 + kh * a->dilation[0];
      if (s->rowmode) { /* the whole kernel row: in place, or copied with its zeros */
        const float **pp = &ptr[kh * mr + i];
        if (ih < 0 || ih >= j->H) {
          *pp = zeros;
        } else if (iw0 >= 0 && iw0 + KW <= j->W) {
          *pp = xn + (ih * j->W + iw0) * C;
        } else {
          float *rb = rowbuf + (kh * mr + i) * KW * Cg;
          for (kw = 0; kw < KW; kw++) {
            int64_t iw = iw0 + kw;
            if (iw < 0 || iw >= j->W) memset(rb + kw * Cg, 0, (size_t)Cg * sizeof(float));
            else memcpy(rb + kw * Cg, xn + (ih * j->W + iw) * C, (size_t)Cg * sizeof(float));
          }
          *pp = rb;
        }
        continue;
      }
      for (kw = 0; kw < KW; kw++) {
        int64_t iw = iw0 + kw * a->dilation[1];
        ptr[(kh * KW + kw) * mr + i] =
            ih < 0 || ih >= j->H || iw < 0 || iw >= j->W ? zeros : xn + (ih * j->W + iw) * C;
      }
    }
  }
}

/* Whether a tap of a tile reads any input (tp: the tap's MR row pointers): a tap where every
   pixel reads the zero row (the padding) adds nothing and is skipped. */
static int fuse__tap_live(const float *const *tp, int mr, const float *zeros) {
  int i;
  for (i = 0; i < mr; i++)
    if (tp[i] != zeros) return 1;
  return 0;
}

/* The first live tap of a tile (ptr: ntaps x MR row pointers) from `from` on, ntaps when none
   is; with step -1 the last one from `from` down, -1 when none is. */
static int fuse__next_live(const float *const *ptr, int mr, const float *zeros, int from,
                           int step, int ntaps) {
  int t;
  for (t = from; t >= 0 && t < ntaps; t += step)
    if (fuse__tap_live(ptr + t * mr, mr, zeros)) return t;
  return t;
}

/* The part of a later weight block a tile's kernel prefetches (fuse__tile_epi.pf / npf):
   lines [from, from + span) of the `lines` cache lines at `at`, none past them. */
static void fuse__tile_prefetch(fuse__tile_epi *e, const float *at, int64_t lines, int64_t from,
                                int64_t span) {
  e->npf = from < lines ? (lines - from < span ? lines - from : span) : 0;
  e->pf = e->npf ? at + from * 16 : NULL;
}

/* One column block of a tile run (group grp, block ob of the group's output channels): its
   weights, width and kernel, and where its outputs start. */
typedef struct fuse__igemm_block {
  int64_t go, grp, oc; /* go: group * blocks + ob; oc: the block's first output channel */
  int cols, bnr;       /* valid columns; the packed width (the last block's may be narrower) */
  const float *w;
  fuse__igemm_fn fn;
} fuse__igemm_block;

/* The tiles tile .. t1 - 1 of a block, each over all its taps: a call per run of live taps
   (no live tap: one call over none, for the bias and post-ops). Meanwhile the tiles' kernels
   bring the next block's panel into L2 a line per step, tile i of this block lines
   i * steps on (steps: multiply-add steps of a tile). In a network the weights come from
   memory on every run, and the hardware prefetcher neither crosses pages nor runs that far
   ahead on its own. */
static void fuse__igemm_tiles(const fuse__conv_job *j, const fuse__igemm_block *b, int64_t tile,
                              int64_t t1, const float **ptr, float *rowbuf) {
  const fuse__step *s = j->s;
  const float *zeros = j->r->p->zeros;
  int mr = s->mr, ntaps = s->rowmode ? (int)j->KH : (int)(j->KH * j->KW), ta, flags;
  int L = s->rowmode ? (int)(j->KW * j->Cg) : (int)j->Cg;
  size_t panel = (size_t)(j->KH * j->KW * j->Cg * s->nr);
  int64_t lines = b->go + 1 < j->G * j->obs ? (int64_t)panel / 16 : 0, steps = ntaps * L, tt;
  fuse__tile_epi e = j->e;
  e.bias = j->bias ? j->bias + b->oc : NULL;
  for (tt = tile; tt < t1; tt++) {
    int64_t p0 = tt * mr, at = p0 * j->K + b->oc, from = (tt - tile) * steps;
    int rows = (int)(j->npix - p0 < mr ? j->npix - p0 : mr);
    fuse__tile_residuals(&e, &j->e, at);
    fuse__tile_prefetch(&e, s->packed + (size_t)(b->go + 1) * panel, lines, from, steps);
    fuse__igemm_ptrs(j, b->grp, p0, rows, ptr, rowbuf);
    ta = fuse__next_live(ptr, mr, zeros, 0, 1, ntaps), flags = 0;
    for (;;) {
      int te = ta, tn;
      while (te < ntaps && fuse__tap_live(ptr + te * mr, mr, zeros)) te++;
      tn = fuse__next_live(ptr, mr, zeros, te, 1, ntaps);
      if (tn == ntaps) flags |= FUSE__FINISH;
      b->fn(te - ta, L, ptr + ta * mr, 0, b->w + (size_t)((int64_t)ta * L * b->bnr), j->y + at,
            j->K, rows, b->cols, flags, &e);
      if (tn == ntaps) break;
      if (e.npf) { /* past the lines that call brought in */
        int64_t done = (int64_t)(te - ta) * L < e.npf ? (int64_t)(te - ta) * L : e.npf;
        e.pf += done * 16, e.npf -= done;
      }
      ta = tn, flags = FUSE__ACCUMULATE;
    }
  }
}

/* The same tiles with channel blocks (s->cblock): tap by tap, channel block by channel block
   over a run of tiles whose row pointers are cached, each tile accumulating in the output
   between blocks; the channel block after this one follows it in memory, and tile i brings
   its lines i * cb on into L2 (as above). */
static void fuse__igemm_tiles_blocked(const fuse__conv_job *j, const fuse__igemm_block *b,
                                      int64_t tile, int64_t t1, const float **ptr,
                                      float *rowbuf) {
  const fuse__step *s = j->s;
  const float *zeros = j->r->p->zeros;
  int64_t taps = j->KH * j->KW, per = FUSE__PTR_CACHE / (taps * s->mr), tr, t, c0, tt;
  int mr = s->mr, nr = s->nr, flags;
  size_t panel = (size_t)(taps * j->Cg * nr), total = (size_t)(j->G * j->obs) * panel;
  fuse__tile_epi e = j->e;
  e.bias = j->bias ? j->bias + b->oc : NULL;
  if (per < 1) per = 1;
  for (tr = tile; tr < t1; tr += per) {
    int64_t tb = t1 - tr < per ? t1 : tr + per;
    for (tt = tr; tt < tb; tt++) {
      int64_t p0 = tt * mr;
      fuse__igemm_ptrs(j, b->grp, p0, (int)(j->npix - p0 < mr ? j->npix - p0 : mr),
                       ptr + (tt - tr) * taps * mr, rowbuf);
    }
    for (t = 0; t < taps; t++)
      for (c0 = 0; c0 < j->Cg; c0 += s->cblock) {
        int cb = (int)(j->Cg - c0 < s->cblock ? j->Cg - c0 : s->cblock);
        size_t next = (size_t)b->go * panel + (size_t)(t * j->Cg + c0 + cb) * nr;
        int64_t lines = next < total ? (int64_t)((total - next) / 16) : 0;
        if (lines > s->cblock * nr / 16) lines = s->cblock * nr / 16;
        for (tt = tr; tt < tb; tt++) {
          int64_t p0 = tt * mr, at = p0 * j->K + b->oc;
          int rows = (int)(j->npix - p0 < mr ? j->npix - p0 : mr), n = 1;
          const float **tp = ptr + (tt - tr) * taps * mr; /* the tile's taps */
          int first = fuse__next_live(tp, mr, zeros, 0, 1, (int)taps);
          int last = fuse__next_live(tp, mr, zeros, (int)taps - 1, -1, (int)taps);
          fuse__tile_prefetch(&e, s->packed + next, lines, (tt - tr) * cb, cb);
          if (fuse__tap_live(tp + t * mr, mr, zeros))
            flags = (t > first || c0 ? FUSE__ACCUMULATE : 0) |
                    (t == last && c0 + cb >= j->Cg ? FUSE__FINISH : 0);
          else if (last < 0 && !t && !c0) /* no live tap at all: one call over none */
            n = 0, flags = FUSE__FINISH;
          else
            continue; /* a dead tap */
          fuse__tile_residuals(&e, &j->e, at);
          b->fn(n, cb, tp + t * mr, c0, b->w + (t * j->Cg + c0) * b->bnr, j->y + at, j->K, rows,
                b->cols, flags, &e);
        }
      }
  }
}

/* Units (group, column block, tile), column blocks outermost so a block's weights are reused
   across the tiles of a chunk. */
static void fuse__igemm_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__conv_job *j = (const fuse__conv_job *)ctx;
  const fuse__step *s = j->s;
  const fuse_plan *p = j->r->p;
  unsigned char *scratch = j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk;
  const float **ptr = (const float **)(void *)scratch;
  int64_t taps = j->KH * j->KW, u = u0;
  float *rowbuf = (float *)(void *)(scratch + (((size_t)taps * s->mr * sizeof(float *) +
                                                FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1)));
  while (u < u1) {
    int64_t go = u / j->tiles, ob = go % j->obs, tile = u % j->tiles;
    int64_t t1 = j->tiles - tile < u1 - u ? j->tiles : tile + (u1 - u);
    fuse__igemm_block b;
    b.go = go, b.grp = go / j->obs, b.oc = b.grp * j->Kg + ob * s->nr;
    b.cols = (int)(j->Kg - ob * s->nr < s->nr ? j->Kg - ob * s->nr : s->nr);
    b.w = s->packed + (size_t)(go * taps * j->Cg * s->nr);
    b.bnr = ob == j->obs - 1 ? s->nr_last : s->nr;
    b.fn = ob == j->obs - 1 ? j->fn_last : j->fn;
    if (s->cblock)
      fuse__igemm_tiles_blocked(j, &b, tile, t1, ptr, rowbuf);
    else
      fuse__igemm_tiles(j, &b, tile, t1, ptr, rowbuf);
    u += t1 - tile;
  }
}

static void fuse__conv_igemm(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__conv_job j;
  memset(&j, 0, sizeof j);
  j.r = r;
  j.s = s;
  fuse__conv_operands(r, s, &j.x, &j.y, &j.bias, &j.e);
  if (s->op == FUSE__OP_MATMUL) { /* rows of x as pixels, one 1x1 tap */
    j.C = j.Cg = tx->shape[tx->rank - 1];
    j.K = j.Kg = tw->shape[1];
    j.H = j.W = j.OH = j.OW = j.KH = j.KW = j.G = 1;
    j.npix = fuse__numel(tx->rank, tx->shape) / j.C;
  } else {
    j.C = tx->shape[1], j.H = tx->shape[2], j.W = tx->shape[3];
    j.K = ty->shape[1], j.OH = ty->shape[2], j.OW = ty->shape[3];
    j.KH = tw->shape[2], j.KW = tw->shape[3], j.G = s->a.conv.groups;
    j.Cg = j.C / j.G, j.Kg = j.K / j.G;
    j.npix = ty->shape[0] * j.OH * j.OW;
  }
  j.fn = fuse__igemm_kinds[s->igemm].fn;
  j.fn_last = fuse__igemm_kinds[s->igemm_last].fn;
  j.obs = (j.Kg + s->nr - 1) / s->nr;
  j.tiles = (j.npix + s->mr - 1) / s->mr;
  fuse__parallel(r->p, j.G * j.obs * j.tiles, fuse__igemm_units, &j);
}

/* A conv2d on NCHW in and out (NCHW GEMM) at run time. Per image, group and block of NR output
   pixels the taps those pixels read are gathered into a [Cg * taps][NR] panel, zeros where a
   tap falls into the padding (a 1x1 conv with stride 1 reads whole blocks in place); then
   each run of MR output channels is one micro-kernel call whose rows broadcast the channels'
   weights, read as [K][Cg * taps]. The tile lands in NCHW as it is: a row is a channel, its
   columns consecutive pixels. */
typedef struct fuse__nchw_gemm_job {
  const fuse__run *r;
  const fuse__step *s;
  const float *x, *bias;
  float *y;
  fuse__igemm_fn fn;
  fuse__nchw_pack_fn pack;
  fuse__nchw_pack_args g; /* xg: the first image's first group */
  fuse__tile_epi e;
  int64_t C, H, W, K, OH, OW, KH, KW, Cg, Kg, G, P, blocks, kparts;
} fuse__nchw_gemm_job;

/* Units (image, group, pixel block, part of the output channels), the parts innermost so a
   chunk gathers a block's panel once for all its parts. */
#define FUSE__NCHW_GEMM_COLS(block) /* the pixels of a block: nr, fewer in the image's last */      \
  (int)(j->P - (block) * nr < nr ? j->P - (block) * nr : nr)
static void fuse__nchw_gemm_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__nchw_gemm_job *j = (const fuse__nchw_gemm_job *)ctx;
  const fuse__step *s = j->s;
  const fuse_plan *p = j->r->p;
  float *panel = (float *)(void *)(j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk);
  const float *rows[16];
  int mr = s->mr, nr = s->nr, i;
  int64_t L = j->Cg * j->KH * j->KW, tiles = (j->Kg + mr - 1) / mr, u, t, b, nband = 1;
  int64_t packed = -1, pf = L * nr; /* floats of one block's panel */
  int direct;
  fuse__tile_epi e = j->e;
  for (u = u0; u < u1; u += nband) {
    int64_t part = u % j->kparts, nb = u / j->kparts, blk = nb % j->blocks, ng = nb / j->blocks;
    int64_t n = ng / j->G, grp = ng % j->G;
    int64_t t0 = tiles * part / j->kparts, t1 = tiles * (part + 1) / j->kparts;
    fuse__nchw_pack_args g = j->g;
    g.xg = j->x + (n * j->C + grp * j->Cg) * j->H * j->W;
    if (j->kparts == 1) { /* the next blocks of this image and group together (s->band) */
      nband = s->band < j->blocks - blk ? s->band : j->blocks - blk;
      if (nband > u1 - u) nband = u1 - u;
    }
    /* 1x1, stride 1, no padding: a whole block's panel rows are the input's own, P floats
       apart, read in place (the image's last block, when partial, is gathered: the kernel
       reads whole vectors) */
    direct = s->pointwise && (blk + nband) * nr <= j->P;
    if (!direct && (j->kparts == 1 || packed != nb)) { /* the parts of a block follow each other */
      for (b = 0; b < nband; b++)
        j->pack(&g, (blk + b) * nr, FUSE__NCHW_GEMM_COLS(blk + b), panel + b * pf);
      packed = nb;
    }
    e.ldw = direct ? j->P : 0;
    for (t = t0; t < t1; t++) { /* each tile's weight rows over the blocks gathered */
      int64_t k0 = t * mr, oc = grp * j->Kg + k0;
      int nrows = (int)(j->Kg - k0 < mr ? j->Kg - k0 : mr);
      e.row_bias = j->bias ? j->bias + oc : NULL;
      for (i = 0; i < mr; i++) rows[i] = s->packed + (oc + (i < nrows ? i : nrows - 1)) * L;
      for (b = 0; b < nband; b++) {
        int64_t p0 = (blk + b) * nr, at = (n * j->K + oc) * j->P + p0;
        fuse__tile_residuals(&e, &j->e, at);
        j->fn(1, (int)L, rows, 0, direct ? g.xg + p0 : panel + b * pf, j->y + at, j->P, nrows,
              FUSE__NCHW_GEMM_COLS(blk + b), FUSE__FINISH, &e);
      }
    }
  }
}
#undef FUSE__NCHW_GEMM_COLS

static void fuse__conv_nchw_gemm(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__nchw_gemm_job j;
  int64_t units;
  memset(&j, 0, sizeof j);
  j.r = r;
  j.s = s;
  fuse__conv_operands(r, s, &j.x, &j.y, &j.bias, &j.e);
  j.C = tx->shape[1], j.H = tx->shape[2], j.W = tx->shape[3];
  j.K = ty->shape[1], j.OH = ty->shape[2], j.OW = ty->shape[3], j.P = j.OH * j.OW;
  j.KH = tw->shape[2], j.KW = tw->shape[3], j.G = s->a.conv.groups;
  j.Cg = j.C / j.G, j.Kg = j.K / j.G;
  j.fn = fuse__igemm_kinds[s->igemm].fn;
  j.pack = fuse__igemm_kinds[s->igemm].pack;
  j.g.Cg = j.Cg, j.g.H = j.H, j.g.W = j.W, j.g.OW = j.OW, j.g.KH = j.KH, j.g.KW = j.KW;
  j.g.sh = s->a.conv.strides[0], j.g.sw = s->a.conv.strides[1];
  j.g.dh = s->a.conv.dilation[0], j.g.dw = s->a.conv.dilation[1];
  j.g.pt = s->a.conv.padding[0], j.g.pl = s->a.conv.padding[1];
  j.g.nr = s->nr, j.g.pointwise = s->pointwise;
  j.blocks = (j.P + s->nr - 1) / s->nr;
  j.kparts = 1;
  units = ty->shape[0] * j.G * j.blocks;
  if (r->p->chunks > 1 && units < 4 * r->p->chunks) { /* few blocks: split the channels too */
    j.kparts = (4 * r->p->chunks + units - 1) / units;
    if (j.kparts > (j.Kg + s->mr - 1) / s->mr) j.kparts = (j.Kg + s->mr - 1) / s->mr;
  }
  fuse__parallel(r->p, units * j.kparts, fuse__nchw_gemm_units, &j);
}

/* The few-channel NCHW kernel at run time. Units are (image, band of s->band output rows).
   A band's input rows are copied into the chunk's buffer, each channel's rows one after
   another, a row as its sw column phases of wq floats with the padding in place (zeros that
   were written once, when the buffer was cleared); then each output row's tiles, MR channels
   by two vectors (one at the row's end when that is enough), read it in place. */
typedef struct fuse__few_channels_job {
  const fuse__run *r;
  const fuse__step *s;
  const float *x, *bias;
  float *y;
  fuse__few_channels_fn f2, f1;
  fuse__dwc_row_fn row;
  fuse__dw_args d; /* what the row builder reads: W, sw, pl */
  fuse__tile_epi e;
  int64_t C, H, K, OH, OW, KH, KW, sh, pt, wq, fill, rows, bands, vw;
  int nseg, len[FUSE__FEW_CHANNELS_SEGS];
  int64_t off[FUSE__FEW_CHANNELS_SEGS];
} fuse__few_channels_job;

static void fuse__few_channels_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__few_channels_job *j = (const fuse__few_channels_job *)ctx;
  const fuse__step *s = j->s;
  const fuse_plan *p = j->r->p;
  float *buf = (float *)(void *)(j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk);
  int64_t rs = j->d.sw * j->wq, L = j->C * j->KH * j->KW, P = j->OH * j->OW, u, c, i, oy, ox;
  int mr = s->mr, t, tiles = (int)((j->K + mr - 1) / mr);
  fuse__tile_epi e = j->e;
  memset(buf, 0, (size_t)(j->C * j->rows * rs) * sizeof(float)); /* the padding, once */
  for (u = u0; u < u1; u++) {
    int64_t n = u / j->bands, oy0 = u % j->bands * s->band;
    int64_t oy1 = oy0 + s->band < j->OH ? oy0 + s->band : j->OH;
    for (c = 0; c < j->C; c++)
      for (i = 0; i < j->rows; i++) {
        int64_t ih = oy0 * j->sh + i - j->pt;
        j->row(buf + (c * j->rows + i) * rs,
               ih >= 0 && ih < j->H ? j->x + ((n * j->C + c) * j->H + ih) * j->d.W : NULL, &j->d,
               j->wq, j->fill);
      }
    for (oy = oy0; oy < oy1; oy++)
      for (ox = 0; ox < j->OW; ox += 2 * j->vw) {
        int cols = (int)(j->OW - ox < 2 * j->vw ? j->OW - ox : 2 * j->vw);
        const float *xb = buf + (oy - oy0) * j->sh * rs + ox;
        for (t = 0; t < tiles; t++) {
          int64_t oc = (int64_t)t * mr, at = (n * j->K + oc) * P + oy * j->OW + ox;
          e.row_bias = j->bias ? j->bias + oc : NULL;
          fuse__tile_residuals(&e, &j->e, at);
          (cols > j->vw ? j->f2 : j->f1)(j->nseg, j->off, j->len, xb, s->packed + oc * L,
                                         j->y + at, P, (int)(j->K - oc < mr ? j->K - oc : mr),
                                         cols, &e);
        }
      }
  }
}

static void fuse__conv_few_channels(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__few_channels_job j;
  int64_t c, kh, ph;
  memset(&j, 0, sizeof j);
  j.r = r;
  j.s = s;
  fuse__conv_operands(r, s, &j.x, &j.y, &j.bias, &j.e);
  j.C = tx->shape[1], j.H = tx->shape[2], j.d.W = tx->shape[3];
  j.K = ty->shape[1], j.OH = ty->shape[2], j.OW = ty->shape[3];
  j.KH = tw->shape[2], j.KW = tw->shape[3];
  j.sh = s->a.conv.strides[0], j.d.sw = s->a.conv.strides[1];
  j.pt = s->a.conv.padding[0], j.d.pl = s->a.conv.padding[1];
  j.f2 = fuse__few_channels_pick(r->p->isa, 2)->fn, j.f1 = fuse__few_channels_pick(r->p->isa, 1)->fn;
  j.vw = fuse__few_channels_pick(r->p->isa, 1)->nr;
  j.row = fuse__dwc_row_pick(r->p->isa);
  j.wq = fuse__few_channels_wq(j.OW, j.KW, j.d.sw, j.vw, &j.fill);
  j.rows = (s->band - 1) * j.sh + j.KH;
  j.bands = (j.OH + s->band - 1) / s->band;
  for (c = 0; c < j.C; c++) /* segment (c, kh, phase): kernel columns ph, ph + sw, ... */
    for (kh = 0; kh < j.KH; kh++)
      for (ph = 0; ph < j.d.sw; ph++, j.nseg++) {
        j.off[j.nseg] = (c * j.rows + kh) * j.d.sw * j.wq + ph * j.wq;
        j.len[j.nseg] = (int)((j.KW - ph + j.d.sw - 1) / j.d.sw);
      }
  fuse__parallel(r->p, ty->shape[0] * j.bands, fuse__few_channels_units, &j);
}

static void fuse__dw_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__dw_args *d = (const fuse__dw_args *)ctx;
  d->fn(d, d->scratch + d->slot * (size_t)chunk, u0, u1);
}

static void fuse__conv_dw(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const fuse_conv2d_attrs *a = &s->a.conv;
  fuse__dw_args d;
  int q;
  memset(&d, 0, sizeof d);
  d.fn = fuse__dw_pick(r->p->isa, tx->nhwc);
  if (!d.fn) return;
  d.x = fuse__in(r, s, 0);
  d.w = s->packed;
  d.bias = s->bias >= 0 ? fuse__in(r, s, s->bias) : NULL;
  d.y = fuse__data(r, s->out);
  d.C = tx->shape[1], d.Cp = (d.C + 15) / 16 * 16, d.H = tx->shape[2], d.W = tx->shape[3];
  d.OH = ty->shape[2], d.OW = ty->shape[3];
  d.KH = (int)tw->shape[2], d.KW = (int)tw->shape[3];
  d.sh = a->strides[0], d.sw = a->strides[1], d.pt = a->padding[0], d.pl = a->padding[1];
  d.dh = a->dilation[0], d.dw = a->dilation[1];
  d.zeros = r->p->zeros;
  d.scratch = r->work + r->p->scratch_offset;
  d.slot = r->p->scratch_slot;
  d.post = s->post;
  d.num_post = s->num_post;
  for (q = 0; q < s->num_post; q++)
    d.residual[q] = fuse__post_operand(r, s, q);
  if (tx->nhwc) /* output rows */
    fuse__parallel(r->p, ty->shape[0] * d.OH, fuse__dw_units, &d);
  else /* planes */
    fuse__parallel(r->p, ty->shape[0] * d.C, fuse__dw_units, &d);
}
/* ==== end src/kernels/conv_drivers.c ==== */
/* ==== begin src/kernels/other_ops.c ==== */

/* NCHW <-> NHWC: per image, a transpose of [C][P] into [P][C] or back, cut into bands of
   256 pixels that the threads share. */
typedef struct fuse__layout_job {
  const fuse__run *r;
  const float *x;
  float *y;
  int64_t C, P, bands;
  int to_nhwc;
} fuse__layout_job;

static void fuse__layout_bands(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__layout_job *j = (const fuse__layout_job *)ctx;
  int64_t u, C = j->C, P = j->P;
  (void)chunk;
  for (u = u0; u < u1; u++) {
    int64_t n = u / j->bands, p0 = u % j->bands * 256, np = P - p0 < 256 ? P - p0 : 256;
    const float *x = j->x + n * C * P;
    float *y = j->y + n * C * P;
    /* to NHWC: rows of x are channels (a band of columns); to NCHW: rows of x are pixels */
    const float *xb = j->to_nhwc ? x + p0 : x + p0 * C;
    float *yb = j->to_nhwc ? y + p0 * C : y + p0;
    int64_t ldx = j->to_nhwc ? P : C, ldy = j->to_nhwc ? C : P;
    int64_t rows = j->to_nhwc ? C : np, cols = j->to_nhwc ? np : C;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
    if (j->r->p->isa >= FUSE_ISA_AVX2) {
      fuse__transpose_avx2(xb, ldx, yb, ldy, rows, cols);
      continue;
    }
#endif
    fuse__transpose_scalar(xb, ldx, yb, ldy, rows, cols);
  }
}

static void fuse__kernel_layout(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__layout_job j;
  j.r = r;
  j.x = fuse__in(r, s, 0);
  j.y = fuse__data(r, s->out);
  j.C = ty->shape[1], j.P = ty->shape[2] * ty->shape[3];
  j.bands = (j.P + 255) / 256;
  j.to_nhwc = s->op == FUSE__OP_TO_NHWC;
  fuse__parallel(r->p, ty->shape[0] * j.bands, fuse__layout_bands, &j);
}

static void fuse__kernel_conv2d(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0), *w = fuse__in(r, s, 1);
  float *y = fuse__data(r, s->out);
  const fuse_conv2d_attrs *a = &s->a.conv;
  int64_t N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t K = tw->shape[0], KH = tw->shape[2], KW = tw->shape[3];
  int64_t OH = ty->shape[2], OW = ty->shape[3], Cg = C / a->groups, Kg = K / a->groups;
  int64_t sh = a->strides[0], sw = a->strides[1], dh = a->dilation[0], dw = a->dilation[1];
  int64_t pt = a->padding[0], pl = a->padding[1], n, k, c, kh, kw, oh, ow;
  switch (s->kernel) { /* a kernel of the table; else the reference loops below */
  case FUSE__KERNEL_IGEMM: fuse__conv_igemm(r, s); return;
  case FUSE__KERNEL_NCHW_GEMM: fuse__conv_nchw_gemm(r, s); return;
  case FUSE__KERNEL_FEW_CHANNELS: fuse__conv_few_channels(r, s); return;
  case FUSE__KERNEL_DW: fuse__conv_dw(r, s); return;
  default: break;
  }
  for (n = 0; n < N; n++)
    for (k = 0; k < K; k++) {
      float *yp = y + (n * K + k) * OH * OW;
      int64_t grp = k / Kg;
      memset(yp, 0, (size_t)(OH * OW) * sizeof(float));
      for (c = 0; c < Cg; c++) {
        const float *xp = x + (n * C + grp * Cg + c) * H * W;
        const float *wp = w + (k * Cg + c) * KH * KW;
        for (kh = 0; kh < KH; kh++)
          for (kw = 0; kw < KW; kw++) {
            float wv = wp[kh * KW + kw];
            int64_t shift = kw * dw - pl; /* iw = ow * sw + shift */
            /* output columns whose input column lies inside [0, W) */
            int64_t ow0 = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
            int64_t ow1 = W - 1 - shift < 0 ? 0 : (W - 1 - shift) / sw + 1;
            if (ow1 > OW) ow1 = OW;
            for (oh = 0; oh < OH; oh++) {
              int64_t ih = oh * sh - pt + kh * dh;
              const float *xr;
              float *yr;
              if (ih < 0 || ih >= H) continue;
              xr = xp + ih * W;
              yr = yp + oh * OW;
              for (ow = ow0; ow < ow1; ow++) yr[ow] += wv * xr[ow * sw + shift];
            }
          }
      }
      if (s->bias >= 0 || s->num_post) /* the plane of channel k is complete */
        fuse__epilogue(r, s, yp, OH * OW, (n * K + k) * OH * OW,
                       s->bias >= 0 ? fuse__in(r, s, s->bias) + k : NULL, 0);
    }
}

static void fuse__kernel_matmul(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ta = fuse__in_t(r, s, 0), *tb = fuse__in_t(r, s, 1);
  const float *a = fuse__in(r, s, 0), *b = fuse__in(r, s, 1);
  float *y = fuse__data(r, s->out);
  int64_t M = ta->rank == 1 ? 1 : ta->shape[ta->rank - 2], K = ta->shape[ta->rank - 1];
  int64_t N = tb->rank == 1 ? 1 : tb->shape[tb->rank - 1];
  int ra = ta->rank > 2 ? ta->rank - 2 : 0, rb = tb->rank > 2 ? tb->rank - 2 : 0;
  int rank = ra > rb ? ra : rb, d;
  int64_t bshape[FUSE_MAX_RANK], sa[FUSE_MAX_RANK], sb[FUSE_MAX_RANK], idx[FUSE_MAX_RANK];
  int64_t batches, bi, m, k, j;
  fuse__tensor ba, bb; /* batch parts of a and b, in units of whole matrices */
  if (s->kernel == FUSE__KERNEL_IGEMM) {
    fuse__conv_igemm(r, s);
    return;
  }
  memset(&ba, 0, sizeof ba);
  memset(&bb, 0, sizeof bb);
  ba.rank = ra;
  bb.rank = rb;
  memcpy(ba.shape, ta->shape, (size_t)ra * sizeof(int64_t));
  memcpy(bb.shape, tb->shape, (size_t)rb * sizeof(int64_t));
  fuse__broadcast(ra, ba.shape, rb, bb.shape, &rank, bshape);
  fuse__broadcast_strides(&ba, rank, bshape, sa);
  fuse__broadcast_strides(&bb, rank, bshape, sb);
  batches = fuse__numel(rank, bshape);
  memset(idx, 0, sizeof idx);
  for (bi = 0; bi < batches; bi++) {
    int64_t oa = 0, ob = 0;
    const float *am, *bm;
    float *ym = y + bi * M * N;
    for (d = 0; d < rank; d++) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    am = a + oa * M * K;
    bm = b + ob * K * N;
    memset(ym, 0, (size_t)(M * N) * sizeof(float));
    for (m = 0; m < M; m++)
      for (k = 0; k < K; k++) {
        float av = am[m * K + k];
        const float *br = bm + k * N;
        float *yr = ym + m * N;
        for (j = 0; j < N; j++) yr[j] += av * br[j];
      }
    if (s->bias >= 0 || s->num_post) /* this batch's rows are complete; bias runs along N */
      for (m = 0; m < M; m++)
        fuse__epilogue(r, s, ym + m * N, N, bi * M * N + m * N,
                       s->bias >= 0 ? fuse__in(r, s, s->bias) : NULL, 1);
    for (d = rank - 1; d >= 0 && ++idx[d] == bshape[d]; d--) idx[d] = 0;
  }
}

static void fuse__kernel_transpose(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t xs[FUSE_MAX_RANK], st[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], i, count, off = 0;
  int d, rank = ty->rank;
  for (d = rank - 1, i = 1; d >= 0; d--) { /* input strides */
    xs[d] = i;
    i *= tx->shape[d];
  }
  for (d = 0; d < rank; d++) st[d] = xs[s->a.perm[d]]; /* stride of output dim d in x */
  count = fuse__numel(rank, ty->shape);
  memset(idx, 0, sizeof idx);
  for (i = 0; i < count; i++) { /* walk the output in order, the input by strides */
    y[i] = x[off];
    for (d = rank - 1; d >= 0; d--) {
      off += st[d];
      if (++idx[d] < ty->shape[d]) break;
      off -= st[d] * ty->shape[d];
      idx[d] = 0;
    }
  }
}

static void fuse__kernel_concat(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  float *y = fuse__data(r, s->out);
  int axis = s->a.axis, i, nhwc = ty->nhwc;
  fuse__tensor vy, vx;
  if (nhwc) { /* channels are the last axis of the bytes */
    fuse__nhwc_shape(ty, &vy);
    ty = &vy;
    axis = 3;
  }
  int64_t outer = fuse__numel(axis, ty->shape), o, at = 0;
  int64_t inner = fuse__numel(ty->rank - axis - 1, ty->shape + axis + 1);
  int64_t row = ty->shape[axis] * inner;
  for (i = 0; i < s->num_in; i++) {
    const fuse__tensor *tx = fuse__in_t(r, s, i);
    int64_t chunk;
    if (nhwc) fuse__nhwc_shape(tx, &vx), tx = &vx;
    chunk = tx->shape[axis] * inner;
    const float *x = fuse__in(r, s, i);
    for (o = 0; o < outer; o++)
      memcpy(y + o * row + at, x + o * chunk, (size_t)chunk * sizeof(float));
    at += chunk;
  }
}

static void fuse__kernel_softmax(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int axis = s->a.axis;
  int64_t outer = fuse__numel(axis, ty->shape), len = ty->shape[axis];
  int64_t inner = fuse__numel(ty->rank - axis - 1, ty->shape + axis + 1), o, i, j;
  for (o = 0; o < outer; o++)
    for (i = 0; i < inner; i++) {
      const float *xp = x + o * len * inner + i;
      float *yp = y + o * len * inner + i, mx = xp[0];
      double sum = 0;
      for (j = 1; j < len; j++) mx = xp[j * inner] > mx ? xp[j * inner] : mx;
      for (j = 0; j < len; j++) sum += yp[j * inner] = expf(xp[j * inner] - mx);
      for (j = 0; j < len; j++) yp[j * inner] = (float)(yp[j * inner] / sum);
    }
}

static void fuse__kernel_batch_norm(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0), *scale = fuse__in(r, s, 1), *bias = fuse__in(r, s, 2);
  const float *mean = fuse__in(r, s, 3), *var = fuse__in(r, s, 4);
  float *y = fuse__data(r, s->out);
  int64_t N = ty->shape[0], C = ty->shape[1], inner = fuse__numel(ty->rank - 2, ty->shape + 2);
  int64_t n, c, i;
  for (c = 0; c < C; c++) {
    double mul = scale[c] / sqrt((double)var[c] + (double)s->a.eps);
    float m = (float)mul, add = (float)(bias[c] - mean[c] * mul);
    for (n = 0; n < N; n++) {
      const float *xp = x + (n * C + c) * inner;
      float *yp = y + (n * C + c) * inner;
      for (i = 0; i < inner; i++) yp[i] = xp[i] * m + add;
    }
  }
}

/* max / average pool on NHWC: the same windows, channels innermost. */
static void fuse__pool_rows(void *ctx, int chunk, int64_t r0, int64_t r1) {
  const fuse__pool_args *d = (const fuse__pool_args *)ctx;
  (void)chunk;
  d->fn(d, r0, r1);
}

static void fuse__kernel_pool_nhwc(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  const fuse_pool2d_attrs *a = &s->a.pool;
  int64_t N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t OH = ty->shape[2], OW = ty->shape[3], n, oh, ow, ih, iw, c;
  int is_max = s->op == FUSE__OP_MAX_POOL2D, kh, kw;
  fuse__pool_args d;
  d.fn = fuse__pool_pick(r->p->isa);
  if (d.fn) {
    d.x = x, d.y = y, d.a = a, d.is_max = is_max;
    d.C = C, d.H = H, d.W = W, d.OH = OH, d.OW = OW;
    fuse__parallel(r->p, N * OH, fuse__pool_rows, &d);
    return;
  }
  for (n = 0; n < N; n++)
    for (oh = 0; oh < OH; oh++)
      for (ow = 0; ow < OW; ow++) {
        int64_t h0 = oh * a->strides[0] - a->padding[0], w0 = ow * a->strides[1] - a->padding[1];
        float *yp = y + ((n * OH + oh) * OW + ow) * C;
        if (is_max) {
          int kh0, kh1, kw0, kw1;
          fuse__taps(h0, a->dilation[0], a->kernel[0], H, &kh0, &kh1);
          fuse__taps(w0, a->dilation[1], a->kernel[1], W, &kw0, &kw1);
          for (c = 0; c < C; c++) yp[c] = -HUGE_VALF;
          for (kh = kh0; kh < kh1; kh++) {
            ih = h0 + (int64_t)kh * a->dilation[0];
            for (kw = kw0; kw < kw1; kw++) {
              const float *xp;
              iw = w0 + (int64_t)kw * a->dilation[1];
              xp = x + ((n * H + ih) * W + iw) * C;
              for (c = 0; c < C; c++) /* a NaN stays */
                yp[c] = xp[c] > yp[c] || xp[c] != xp[c] ? xp[c] : yp[c];
            }
          }
        } else {
          int64_t h1 = h0 + a->kernel[0], w1 = w0 + a->kernel[1];
          int64_t hp = H + a->padding[2], wp = W + a->padding[3], area;
          float inv;
          if (h1 > hp) h1 = hp;
          if (w1 > wp) w1 = wp;
          area = (h1 - h0) * (w1 - w0);
          if (h0 < 0) h0 = 0;
          if (w0 < 0) w0 = 0;
          if (h1 > H) h1 = H;
          if (w1 > W) w1 = W;
          if (!a->count_include_pad) area = (h1 - h0) * (w1 - w0);
          for (c = 0; c < C; c++) yp[c] = 0;
          for (ih = h0; ih < h1; ih++)
            for (iw = w0; iw < w1; iw++) {
              const float *xp = x + ((n * H + ih) * W + iw) * C;
              for (c = 0; c < C; c++) yp[c] += xp[c];
            }
          inv = (float)(1.0 / (double)area);
          for (c = 0; c < C; c++) yp[c] *= inv;
        }
      }
}

static void fuse__kernel_pool(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  const fuse_pool2d_attrs *a = &s->a.pool;
  int64_t NC = tx->shape[0] * tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t OH = ty->shape[2], OW = ty->shape[3], nc, oh, ow, ih, iw;
  int is_max = s->op == FUSE__OP_MAX_POOL2D;
  if (tx->nhwc) {
    fuse__kernel_pool_nhwc(r, s);
    return;
  }
  /* output columns whose window lies inside the input, [ow_lo, ow_hi): their taps need no
     arithmetic (fuse__taps divides, once per row and at the edges only) */
  int64_t sw = a->strides[1], span = (int64_t)(a->kernel[1] - 1) * a->dilation[1];
  int64_t ow_lo = (a->padding[1] + sw - 1) / sw;
  int64_t ow_hi = W - 1 - span + a->padding[1] < 0 ? 0 : (W - 1 - span + a->padding[1]) / sw + 1;
  if (ow_hi > OW) ow_hi = OW;
  if (ow_lo > ow_hi) ow_lo = ow_hi;
  for (nc = 0; nc < NC; nc++) {
    const float *xp = x + nc * H * W;
    float *yp = y + nc * OH * OW;
    for (oh = 0; oh < OH; oh++) {
      int kh0 = 0, kh1 = 0;
      if (is_max)
        fuse__taps(oh * a->strides[0] - a->padding[0], a->dilation[0], a->kernel[0], H, &kh0, &kh1);
      for (ow = 0; ow < OW; ow++) {
        int64_t h0 = oh * a->strides[0] - a->padding[0], w0 = ow * sw - a->padding[1];
        if (is_max) {
          float m = -HUGE_VALF;
          int kh, kw, kw0 = 0, kw1 = a->kernel[1]; /* only the taps inside the input */
          if (ow < ow_lo || ow >= ow_hi)
            fuse__taps(w0, a->dilation[1], a->kernel[1], W, &kw0, &kw1);
          for (kh = kh0; kh < kh1; kh++) {
            const float *xr = xp + (h0 + (int64_t)kh * a->dilation[0]) * W + w0;
            for (kw = kw0; kw < kw1; kw++) { /* a NaN, once taken, stays: v > NaN is false */
              float v = xr[(int64_t)kw * a->dilation[1]];
              m = v > m || v != v ? v : m;
            }
          }
          yp[oh * OW + ow] = m;
        } else {
          /* window clipped to the padded input (PyTorch's divisor with count_include_pad) */
          int64_t h1 = h0 + a->kernel[0], w1 = w0 + a->kernel[1];
          int64_t hp = H + a->padding[2], wp = W + a->padding[3], area;
          double sum = 0;
          if (h1 > hp) h1 = hp;
          if (w1 > wp) w1 = wp;
          area = (h1 - h0) * (w1 - w0);
          if (h0 < 0) h0 = 0;
          if (w0 < 0) w0 = 0;
          if (h1 > H) h1 = H;
          if (w1 > W) w1 = W;
          for (ih = h0; ih < h1; ih++)
            for (iw = w0; iw < w1; iw++) sum += xp[ih * W + iw];
          if (!a->count_include_pad) area = (h1 - h0) * (w1 - w0);
          yp[oh * OW + ow] = (float)(sum / (double)area);
        }
      }
    }
  }
}

static void fuse__kernel_global_avg_pool(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0);
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t NC = tx->shape[0] * tx->shape[1], inner = fuse__numel(tx->rank - 2, tx->shape + 2);
  int64_t nc, i, C = tx->shape[1];
  for (nc = 0; nc < NC; nc++) {
    double sum = 0;
    if (tx->nhwc) /* channel nc % C of image nc / C, every C-th float */
      for (i = 0; i < inner; i++) sum += x[(nc / C * inner + i) * C + nc % C];
    else
      for (i = 0; i < inner; i++) sum += x[nc * inner + i];
    y[nc] = (float)(sum / (double)inner);
  }
}

/* ==== end src/kernels/other_ops.c ==== */
/* ==== begin src/kernels/ref_math.c ==== */
/* --------------------------------------------------- reference kernels: math -- */
/* element-wise math: unary functions, div, pow, prelu, where, variadic sum / mean / max / min.
   The op's switch sits outside the element loops (one loop per op), so a large tensor runs
   at the speed of the math itself. NaN propagates through every op (comparisons are written
   so that a NaN operand falls through to an arithmetic path). */

/* The unary ops, on the whole tensor: y[i] = f(x[i]) with the step's a.unary parameters. */
static void fuse__kernel_math_unary(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t i, n = fuse__numel(ty->rank, ty->shape);
  const float alpha = s->a.unary.alpha, beta = s->a.unary.beta;
  switch (s->op) {
  case FUSE__OP_SQRT: /* negative: NaN */
    for (i = 0; i < n; i++) y[i] = sqrtf(x[i]);
    break;
  case FUSE__OP_RECIPROCAL: /* 0: inf */
    for (i = 0; i < n; i++) y[i] = 1.0f / x[i];
    break;
  case FUSE__OP_EXP:
    for (i = 0; i < n; i++) y[i] = expf(x[i]);
    break;
  case FUSE__OP_LOG: /* 0: -inf, negative: NaN */
    for (i = 0; i < n; i++) y[i] = logf(x[i]);
    break;
  case FUSE__OP_NEG:
    for (i = 0; i < n; i++) y[i] = -x[i];
    break;
  case FUSE__OP_ABS:
    for (i = 0; i < n; i++) y[i] = fabsf(x[i]);
    break;
  case FUSE__OP_FLOOR:
    for (i = 0; i < n; i++) y[i] = floorf(x[i]);
    break;
  case FUSE__OP_CEIL:
    for (i = 0; i < n; i++) y[i] = ceilf(x[i]);
    break;
  case FUSE__OP_ERF:
    for (i = 0; i < n; i++) y[i] = erff(x[i]);
    break;
  case FUSE__OP_TANH:
    for (i = 0; i < n; i++) y[i] = tanhf(x[i]);
    break;
  case FUSE__OP_SOFTPLUS: /* log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): e^ never overflows */
    for (i = 0; i < n; i++) {
      float v = x[i];
      y[i] = v > 0 ? v + log1pf(expf(-v)) : log1pf(expf(v));
    }
    break;
  case FUSE__OP_HARDSWISH:
    for (i = 0; i < n; i++) {
      float v = x[i], t = v + 3.0f;
      t = t < 0 ? 0.0f : t > 6.0f ? 6.0f : t;
      y[i] = v * t / 6.0f;
    }
    break;
  case FUSE__OP_HARDSIGMOID:
    for (i = 0; i < n; i++) {
      float t = alpha * x[i] + beta;
      y[i] = t < 0 ? 0.0f : t > 1.0f ? 1.0f : t;
    }
    break;
  case FUSE__OP_LEAKY_RELU:
    for (i = 0; i < n; i++) y[i] = x[i] < 0 ? alpha * x[i] : x[i];
    break;
  case FUSE__OP_ELU: /* expm1: exact near 0, where e^x - 1 would cancel */
    for (i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : alpha * expm1f(x[i]);
    break;
  case FUSE__OP_SELU: /* beta holds gamma */
    for (i = 0; i < n; i++) y[i] = x[i] > 0 ? beta * x[i] : beta * (alpha * expm1f(x[i]));
    break;
  case FUSE__OP_GELU:
    if (s->a.unary.mode == 1) {
      for (i = 0; i < n; i++) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
      }
    } else { /* 1 + erf(v / sqrt 2) = erfc(-v / sqrt 2), which keeps its precision for v << 0 */
      for (i = 0; i < n; i++) y[i] = 0.5f * x[i] * erfcf(-0.70710678118654752f * x[i]);
    }
    break;
  default: FUSE_ASSERT(0 && "fuse__kernel_math_unary: not a unary math op"); break;
  }
}

/* One row of a broadcasting op: y[j] for j < n, operand k read at k[j * stride_k]. */
static void fuse__math_row(int op, float *y, int64_t n, const float *a, int64_t ia,
                           const float *b, int64_t ib, const float *c, int64_t ic) {
  int64_t j;
  switch (op) {
  case FUSE__OP_DIV:
    for (j = 0; j < n; j++) y[j] = a[j * ia] / b[j * ib];
    break;
  case FUSE__OP_POW: /* C's powf is ONNX's Pow: a negative base with an integral exponent
                        has its sign, with another exponent it is NaN */
    for (j = 0; j < n; j++) y[j] = powf(a[j * ia], b[j * ib]);
    break;
  case FUSE__OP_PRELU:
    for (j = 0; j < n; j++) {
      float v = a[j * ia];
      y[j] = v < 0 ? b[j * ib] * v : v;
    }
    break;
  case FUSE__OP_WHERE: /* a NaN condition is not 0: it selects the first */
    for (j = 0; j < n; j++) y[j] = a[j * ia] != 0 ? b[j * ib] : c[j * ic];
    break;
  default: FUSE_ASSERT(0 && "fuse__math_row: not a broadcasting math op"); break;
  }
}

/* div, pow, prelu (2 operands) and where (3), numpy broadcasting: row by row along the last
   dimension, after merging the dimensions every operand walks through as through one (a
   whole tensor with a scalar is one row). */
static void fuse__kernel_math_broadcast(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *in[3], *row[3];
  int64_t st[3][FUSE_MAX_RANK], shape[FUSE_MAX_RANK], stride[3][FUSE_MAX_RANK];
  int64_t idx[FUSE_MAX_RANK], inner, outer, o;
  float *y = fuse__data(r, s->out);
  int m = s->num_in < 3 ? s->num_in : 3, k, d, rank = 0, merge;
  for (k = 0; k < 3; k++) { /* a missing third operand repeats the first (never read) */
    in[k] = fuse__in(r, s, k < m ? k : 0);
    fuse__broadcast_strides(fuse__in_t(r, s, k < m ? k : 0), ty->rank, ty->shape, st[k]);
  }
  for (d = 0; d < ty->rank; d++) {
    if (ty->shape[d] == 1) continue; /* nothing to walk */
    for (merge = rank > 0, k = 0; k < 3; k++)
      merge = merge && stride[k][rank - 1] == st[k][d] * ty->shape[d];
    if (!merge) shape[rank++] = 1;
    shape[rank - 1] *= ty->shape[d];
    for (k = 0; k < 3; k++) stride[k][rank - 1] = st[k][d];
  }
  if (rank == 0) { /* one element */
    shape[0] = 1;
    for (k = 0; k < 3; k++) stride[k][0] = 0;
    rank = 1;
  }
  inner = shape[rank - 1];
  outer = fuse__numel(rank - 1, shape);
  memset(idx, 0, sizeof idx);
  for (o = 0; o < outer; o++) {
    for (k = 0; k < 3; k++) {
      row[k] = in[k];
      for (d = 0; d < rank - 1; d++) row[k] += idx[d] * stride[k][d];
    }
    fuse__math_row(s->op, y + o * inner, inner, row[0], stride[0][rank - 1], row[1],
                   stride[1][rank - 1], row[2], stride[2][rank - 1]);
    for (d = rank - 2; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
  }
}
/* ==== end src/kernels/ref_math.c ==== */
/* ==== begin src/kernels/ref_shape.c ==== */
/* --------------------------------------------------- reference kernels: shape -- */
/* data movement: slice, gather, expand, tile, split, squeeze / unsqueeze, depth / space, pad, resize */

/* y[outer, j, inner] = x[outer, idx[j], inner]. An index is normalized here too (a parsed
   graph's constant may have been filled after its checks): negative counts from the end, out of
   range clamps. */
static void fuse__kernel_gather(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ti = fuse__in_t(r, s, 1);
  const float *x = fuse__in(r, s, 0), *idx = fuse__in(r, s, 1);
  float *y = fuse__data(r, s->out);
  int axis = s->a.axis;
  int64_t outer = fuse__numel(axis, tx->shape), dim = tx->shape[axis];
  int64_t inner = fuse__numel(tx->rank - axis - 1, tx->shape + axis + 1);
  int64_t count = fuse__numel(ti->rank, ti->shape), o, j;
  for (o = 0; o < outer; o++)
    for (j = 0; j < count; j++) {
      double v = idx[j];
      int64_t k;
      if (!(v >= (double)-dim)) k = 0; /* NaN too */
      else if (v >= (double)dim) k = dim - 1;
      else if ((k = (int64_t)v) < 0) k += dim;
      memcpy(y + (o * count + j) * inner, x + (o * dim + k) * inner, (size_t)inner * sizeof(float));
    }
}

/* Walks the output row by row (the last dimension); offset(d) gives the input offset of a
   row from its index, row(y, x, idx) writes it. Shared by expand and tile. */
static void fuse__kernel_expand(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t st[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], inner, rows, o, j, off;
  int rank = ty->rank, d;
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  fuse__broadcast_strides(tx, rank, ty->shape, st);
  inner = ty->shape[rank - 1];
  rows = fuse__numel(rank - 1, ty->shape);
  memset(idx, 0, sizeof idx);
  for (o = 0; o < rows; o++) {
    float *yr = y + o * inner;
    for (off = 0, d = 0; d < rank - 1; d++) off += idx[d] * st[d];
    if (st[rank - 1]) memcpy(yr, x + off, (size_t)inner * sizeof(float));
    else
      for (j = 0; j < inner; j++) yr[j] = x[off];
    for (d = rank - 2; d >= 0 && ++idx[d] == ty->shape[d]; d--) idx[d] = 0;
  }
}

/* y[i...] = x[i mod x.shape ...]: each output row is the input row repeated. */
static void fuse__kernel_tile(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t xs[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], inner, xin, rows, o, j, off, stride = 1;
  int rank = ty->rank, d;
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  for (d = rank - 1; d >= 0; d--) {
    xs[d] = stride;
    stride *= tx->shape[d];
  }
  inner = ty->shape[rank - 1];
  xin = tx->shape[rank - 1];
  rows = fuse__numel(rank - 1, ty->shape);
  memset(idx, 0, sizeof idx);
  for (o = 0; o < rows; o++) {
    float *yr = y + o * inner;
    for (off = 0, d = 0; d < rank - 1; d++) off += idx[d] % tx->shape[d] * xs[d];
    for (j = 0; j < inner; j += xin) memcpy(yr + j, x + off, (size_t)xin * sizeof(float));
    for (d = rank - 2; d >= 0 && ++idx[d] == ty->shape[d]; d--) idx[d] = 0;
  }
}

/* The input index of output position o along a padded axis of size d with `begin` before it;
   -1: outside (constant mode). Reflect pads are < d (the builder checks). */
static int64_t fuse__pad_source(int64_t o, int64_t begin, int64_t d, int mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < d) return i;
  if (mode == FUSE_PAD_EDGE) return i < 0 ? 0 : d - 1;
  if (mode == FUSE_PAD_REFLECT) return i < 0 ? -i : 2 * (d - 1) - i;
  return -1;
}

static void fuse__kernel_pad(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t xs[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], inner, rows, o, j, stride = 1, xin;
  int rank = ty->rank, d, mode = s->a.pad.mode;
  const int *pads = s->a.pad.pads;
  float value = s->a.pad.value;
  for (d = rank - 1; d >= 0; d--) {
    xs[d] = stride;
    stride *= tx->shape[d];
  }
  inner = ty->shape[rank - 1];
  xin = tx->shape[rank - 1];
  rows = fuse__numel(rank - 1, ty->shape);
  memset(idx, 0, sizeof idx);
  for (o = 0; o < rows; o++) {
    float *yr = y + o * inner;
    int64_t off = 0;
    for (d = 0; d < rank - 1 && off >= 0; d++) {
      int64_t i = fuse__pad_source(idx[d], pads[d], tx->shape[d], mode);
      off = i < 0 ? -1 : off + i * xs[d];
    }
    if (off < 0) {
      for (j = 0; j < inner; j++) yr[j] = value;
    } else {
      for (j = 0; j < inner; j++) {
        int64_t i = fuse__pad_source(j, pads[rank - 1], xin, mode);
        yr[j] = i < 0 ? value : x[off + i];
      }
    }
    for (d = rank - 2; d >= 0 && ++idx[d] == ty->shape[d]; d--) idx[d] = 0;
  }
}

/* ---- resize: ONNX Resize's interpolation (onnx/reference/ops/op_resize.py) */

/* Up to 4 taps of one output coordinate along one axis: input indices (clamped to the axis,
   as ONNX's reference pads with the edge values) and weights. */
typedef struct fuse__resize_taps {
  int n;
  int64_t at[4];
  double w[4];
} fuse__resize_taps;

static void fuse__resize_axis(const fuse_resize_attrs *a, float scale, int64_t in, int64_t out,
                              int64_t x, fuse__resize_taps *t) {
  double s = scale > 0 ? (double)scale : (double)out / (double)in; /* as ONNX: sizes / shape */
  double width = s * (double)in, xo, ratio, A = a->cubic_coeff_a, sum = 0;
  int64_t base;
  int k;
  switch (a->coordinates) {
  case FUSE_RESIZE_ALIGN_CORNERS:
    xo = width == 1 ? 0.0 : (double)x * (double)(in - 1) / (width - 1);
    break;
  case FUSE_RESIZE_ASYMMETRIC: xo = (double)x / s; break;
  case FUSE_RESIZE_PYTORCH_HALF_PIXEL: xo = width == 1 ? -0.5 : ((double)x + 0.5) / s - 0.5; break;
  case FUSE_RESIZE_HALF_PIXEL_SYMMETRIC: {
    double adjustment = (double)out / width, center = (double)in / 2;
    xo = center * (1 - adjustment) + ((double)x + 0.5) / s - 0.5;
    break;
  }
  default: xo = ((double)x + 0.5) / s - 0.5; break;
  }
  /* the pixel on the left is preferred: ratio in (0, 1], base = the left neighbour */
  base = (int64_t)floor(xo);
  ratio = xo - (double)base;
  if (ratio == 0) base--, ratio = 1;
  if (a->mode == FUSE_RESIZE_NEAREST) {
    int right;
    switch (ratio == 1 ? FUSE_RESIZE_CEIL : a->nearest) {
    case FUSE_RESIZE_ROUND_PREFER_FLOOR: right = ratio > 0.5; break;
    case FUSE_RESIZE_ROUND_PREFER_CEIL: right = ratio >= 0.5; break;
    case FUSE_RESIZE_FLOOR: right = 0; break;
    default: right = 1; break;
    }
    t->n = 1;
    t->at[0] = base + right;
    t->w[0] = 1;
  } else if (a->mode == FUSE_RESIZE_LINEAR) {
    t->n = 2;
    t->at[0] = base, t->at[1] = base + 1;
    t->w[0] = 1 - ratio, t->w[1] = ratio;
  } else {
    double r1 = ratio + 1, r2 = 1 - ratio, r3 = 2 - ratio;
    t->n = 4;
    for (k = 0; k < 4; k++) t->at[k] = base - 1 + k;
    t->w[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
    t->w[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
    t->w[2] = ((A + 2) * r2 - (A + 3)) * r2 * r2 + 1;
    t->w[3] = ((A * r3 - 5 * A) * r3 + 8 * A) * r3 - 4 * A;
  }
  for (k = 0; k < t->n; k++) {
    if (a->exclude_outside && a->mode != FUSE_RESIZE_NEAREST && (t->at[k] < 0 || t->at[k] >= in))
      t->w[k] = 0;
    sum += t->w[k];
    t->at[k] = t->at[k] < 0 ? 0 : t->at[k] >= in ? in - 1 : t->at[k];
  }
  if (a->exclude_outside && a->mode != FUSE_RESIZE_NEAREST && sum != 0)
    for (k = 0; k < t->n; k++) t->w[k] /= sum;
}

/* Each output element is the sum over the taps of every resized axis (an axis whose size and
   scale stay is one tap of weight 1), as ONNX's separable reference computes it. */
static void fuse__kernel_resize(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const fuse_resize_attrs *a = &s->a.resize.r;
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  fuse__resize_taps taps[FUSE_MAX_RANK];
  int64_t xs[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], pick[FUSE_MAX_RANK], count, i, stride = 1;
  int rank = ty->rank, d, axes[FUSE_MAX_RANK], num_axes = 0;
  for (d = rank - 1; d >= 0; d--) {
    xs[d] = stride;
    stride *= tx->shape[d];
  }
  for (d = 0; d < rank; d++) {
    float sc = s->a.resize.scales[d];
    if (!(tx->shape[d] == ty->shape[d] && (sc == 0 || sc == 1))) axes[num_axes++] = d;
  }
  count = fuse__numel(rank, ty->shape);
  memset(idx, 0, sizeof idx);
  for (i = 0; i < count; i++) {
    int64_t base = 0;
    double acc = 0;
    int k;
    for (d = 0; d < rank; d++) base += idx[d] * xs[d];
    for (k = 0; k < num_axes; k++) {
      d = axes[k];
      fuse__resize_axis(a, s->a.resize.scales[d], tx->shape[d], ty->shape[d], idx[d], &taps[k]);
      base -= idx[d] * xs[d];
      pick[k] = 0;
    }
    for (;;) { /* every combination of the resized axes' taps */
      int64_t off = base;
      double w = 1;
      for (k = 0; k < num_axes; k++) {
        off += taps[k].at[pick[k]] * xs[axes[k]];
        w *= taps[k].w[pick[k]];
      }
      acc += w * x[off];
      for (k = num_axes - 1; k >= 0 && ++pick[k] == taps[k].n; k--) pick[k] = 0;
      if (k < 0) break;
    }
    y[i] = (float)acc;
    for (d = rank - 1; d >= 0 && ++idx[d] == ty->shape[d]; d--) idx[d] = 0;
  }
}
/* ==== end src/kernels/ref_shape.c ==== */
/* ==== begin src/kernels/ref_nn.c ==== */
/* --------------------------------------------------- reference kernels: nn -- */
/* reductions, log-softmax, layer / instance / group normalization (einsum is composed of
   other ops). Sums, products and statistics accumulate in double: a reduction over 100k
   elements stays as close to a float64 reference as one float rounding. */

/* One reduced run: n elements `stride` apart folded into acc (sum / product kinds in double;
   max / min as floats, with NaN winning as in PyTorch). */
static double fuse__reduce_run(int op, const float *x, int64_t n, int64_t stride, double acc) {
  int64_t j;
  switch (op) {
  case FUSE__OP_REDUCE_MEAN:
  case FUSE__OP_REDUCE_SUM:
    for (j = 0; j < n; j++) acc += x[j * stride];
    break;
  case FUSE__OP_REDUCE_L2:
  case FUSE__OP_REDUCE_SUM_SQUARE:
    for (j = 0; j < n; j++) acc += (double)x[j * stride] * x[j * stride];
    break;
  case FUSE__OP_REDUCE_PROD:
    for (j = 0; j < n; j++) acc *= x[j * stride];
    break;
  case FUSE__OP_REDUCE_MAX:
    for (j = 0; j < n; j++) {
      float v = x[j * stride];
      if (v > acc || v != v) acc = v;
      if (v != v) break;
    }
    break;
  default: /* REDUCE_MIN */
    for (j = 0; j < n; j++) {
      float v = x[j * stride];
      if (v < acc || v != v) acc = v;
      if (v != v) break;
    }
    break;
  }
  return acc;
}

/* Any set of axes: adjacent axes that are both reduced or both kept merge into one (size-1
   axes drop out), then an odometer walks the kept axes (the output, in order) and, for each
   output element, the reduced ones, the innermost reduced axis as one run. */
static void fuse__kernel_reduce(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0);
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t dim[FUSE_MAX_RANK], stride[FUSE_MAX_RANK], kdim[FUSE_MAX_RANK], kstr[FUSE_MAX_RANK];
  int64_t rdim[FUSE_MAX_RANK], rstr[FUSE_MAX_RANK], kidx[FUSE_MAX_RANK], ridx[FUSE_MAX_RANK];
  int64_t count = 1, out_count = 1, o, step;
  int red[FUSE_MAX_RANK], nd = 0, nk = 0, nr = 0, i, d;
  for (i = 0; i < tx->rank; i++) {
    int is_red = (int)(s->a.reduce.axes >> i & 1u);
    if (tx->shape[i] == 1) continue;
    if (nd > 0 && red[nd - 1] == is_red) {
      dim[nd - 1] *= tx->shape[i];
    } else {
      dim[nd] = tx->shape[i];
      red[nd++] = is_red;
    }
  }
  step = 1;
  for (d = nd - 1; d >= 0; d--) {
    stride[d] = step;
    step *= dim[d];
  }
  for (d = 0; d < nd; d++) {
    if (red[d]) {
      rdim[nr] = dim[d], rstr[nr++] = stride[d];
      count *= dim[d];
    } else {
      kdim[nk] = dim[d], kstr[nk++] = stride[d];
      out_count *= dim[d];
    }
  }
  if (nr == 0) rdim[nr] = 1, rstr[nr++] = 1; /* nothing to fold: one element each */
  memset(kidx, 0, sizeof kidx);
  for (o = 0; o < out_count; o++) {
    int64_t base = 0, runs = count / rdim[nr - 1], k;
    double acc = s->op == FUSE__OP_REDUCE_PROD ? 1.0
                 : s->op == FUSE__OP_REDUCE_MAX ? -HUGE_VAL
                 : s->op == FUSE__OP_REDUCE_MIN ? HUGE_VAL
                                                : 0.0;
    for (d = 0; d < nk; d++) base += kidx[d] * kstr[d];
    memset(ridx, 0, sizeof ridx);
    for (k = 0; k < runs; k++) {
      int64_t at = base;
      for (d = 0; d < nr - 1; d++) at += ridx[d] * rstr[d];
      acc = fuse__reduce_run(s->op, x + at, rdim[nr - 1], rstr[nr - 1], acc);
      for (d = nr - 2; d >= 0 && ++ridx[d] == rdim[d]; d--) ridx[d] = 0;
    }
    if (s->op == FUSE__OP_REDUCE_MEAN) acc /= (double)count;
    else if (s->op == FUSE__OP_REDUCE_L2) acc = sqrt(acc);
    y[o] = (float)acc;
    for (d = nk - 1; d >= 0 && ++kidx[d] == kdim[d]; d--) kidx[d] = 0;
  }
}

/* x - max - log(sum(exp(x - max))) along the axis, the sum in double. */
static void fuse__kernel_log_softmax(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int axis = s->a.axis;
  int64_t outer = fuse__numel(axis, ty->shape), len = ty->shape[axis];
  int64_t inner = fuse__numel(ty->rank - axis - 1, ty->shape + axis + 1), o, i, j;
  for (o = 0; o < outer; o++)
    for (i = 0; i < inner; i++) {
      const float *xp = x + o * len * inner + i;
      float *yp = y + o * len * inner + i;
      double mx = xp[0], sum = 0, shift;
      for (j = 1; j < len; j++) mx = xp[j * inner] > mx ? xp[j * inner] : mx;
      for (j = 0; j < len; j++) sum += exp((double)xp[j * inner] - mx);
      shift = mx + log(sum);
      for (j = 0; j < len; j++) yp[j * inner] = (float)((double)xp[j * inner] - shift);
    }
}

/* layer_norm: each row of x.shape[axis:] normalized, then * scale + bias element-wise;
   instance_norm / group_norm: each sample's group of C / groups channels (one channel for
   instance_norm) normalized, then * scale[c] + bias[c] per channel. Mean and variance (the
   biased one, as PyTorch's) in double, in two passes. */
static void fuse__kernel_norm(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0), *scale = fuse__in(r, s, 1);
  const float *bias = s->num_in > 2 ? fuse__in(r, s, 2) : NULL;
  float *y = fuse__data(r, s->out);
  int64_t outer, span, inner = 1, C = 1, per_group = 1, o, j, c;
  if (s->op == FUSE__OP_LAYER_NORM) {
    outer = fuse__numel(s->a.norm.axis, ty->shape);
    span = fuse__numel(ty->rank - s->a.norm.axis, ty->shape + s->a.norm.axis);
  } else {
    int64_t groups;
    C = ty->shape[1];
    groups = s->op == FUSE__OP_INSTANCE_NORM ? C : s->a.norm.groups;
    per_group = C / groups;
    inner = fuse__numel(ty->rank - 2, ty->shape + 2);
    outer = ty->shape[0] * groups;
    span = per_group * inner;
  }
  for (o = 0; o < outer; o++) {
    const float *xp = x + o * span;
    float *yp = y + o * span;
    double sum = 0, sq = 0, mean, inv;
    for (j = 0; j < span; j++) sum += xp[j];
    mean = sum / (double)span;
    for (j = 0; j < span; j++) sq += ((double)xp[j] - mean) * ((double)xp[j] - mean);
    inv = 1.0 / sqrt(sq / (double)span + (double)s->a.norm.eps);
    if (s->op == FUSE__OP_LAYER_NORM) {
      for (j = 0; j < span; j++)
        yp[j] = (float)(((double)xp[j] - mean) * inv * scale[j] + (bias ? bias[j] : 0.0f));
      continue;
    }
    for (c = 0; c < per_group; c++) {
      int64_t ch = o % (C / per_group) * per_group + c; /* the channel */
      double mul = inv * scale[ch], add = bias[ch] - mean * mul;
      for (j = c * inner; j < (c + 1) * inner; j++) yp[j] = (float)(xp[j] * mul + add);
    }
  }
}
/* ==== end src/kernels/ref_nn.c ==== */
/* ==== begin src/kernels/ref_layers.c ==== */
/* --------------------------------------------------- reference kernels: layers -- */
/* slice, transposed convolution (1-D convolution and pools, LSTM and GRU are composed of
   other ops) */

/* Output element i along axis d reads input element start[d] + i * step[d]. The innermost
   axes that the slice keeps whole, and the first one it cuts with step 1, are one contiguous
   run of the input: each is one memcpy. */
static void fuse__kernel_slice(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  const int64_t *start = s->a.slice.start, *step = s->a.slice.step;
  int64_t stride[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], run = 1, base = 0, count, o, j;
  int rank = ty->rank, outer, d;
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  for (d = rank - 1, j = 1; d >= 0; d--) { /* the input's element strides */
    stride[d] = j;
    j *= tx->shape[d];
    base += start[d] * stride[d];
  }
  for (outer = rank; outer > 0 && step[outer - 1] == 1; outer--) { /* the contiguous run */
    run *= ty->shape[outer - 1];
    if (ty->shape[outer - 1] != tx->shape[outer - 1]) {
      outer--;
      break;
    }
  }
  if (outer == rank) { /* the innermost axis strides: one element at a time along it */
    outer = rank - 1;
    run = ty->shape[rank - 1];
  }
  count = fuse__numel(outer, ty->shape);
  memset(idx, 0, sizeof idx);
  for (o = 0; o < count; o++, y += run) {
    int64_t at = base;
    for (d = 0; d < outer; d++) at += idx[d] * step[d] * stride[d];
    if (step[rank - 1] != 1) { /* outer == rank - 1 */
      int64_t jump = step[rank - 1] * stride[rank - 1];
      for (j = 0; j < run; j++) y[j] = x[at + j * jump];
    } else {
      memcpy(y, x + at, (size_t)run * sizeof(float));
    }
    for (d = outer - 1; d >= 0 && ++idx[d] == ty->shape[d]; d--) idx[d] = 0;
  }
}

/* y[n, k, oh, ow] = sum over c (in k's group), kh, kw with oh = ih * stride - pad_top +
   kh * dilation (and the same for ow) of x[n, c, ih, iw] * w[c, k % (K / groups), kh, kw]:
   each input pixel scatters its weighted kernel into the output. The loops run input channel,
   output channel, kernel tap, input row, then along an input row, so the inner loop reads x
   contiguously and the work is the convolution's own multiply-adds, none wasted on cropped or
   skipped positions. */
static void fuse__kernel_conv_transpose2d(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const fuse_conv_transpose2d_attrs *a = &s->a.convt;
  const float *x = fuse__in(r, s, 0), *w = fuse__in(r, s, 1);
  float *y = fuse__data(r, s->out);
  int64_t N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t Kg = tw->shape[1], KH = tw->shape[2], KW = tw->shape[3];
  int64_t K = ty->shape[1], OH = ty->shape[2], OW = ty->shape[3];
  int64_t Cg = C / a->groups, sh = a->strides[0], sw = a->strides[1];
  int64_t n, c, k, kh, kw, ih, iw;
  memset(y, 0, (size_t)fuse__numel(4, ty->shape) * sizeof(float));
  for (n = 0; n < N; n++)
    for (c = 0; c < C; c++) {
      const float *xc = x + (n * C + c) * H * W;
      for (k = 0; k < Kg; k++) {
        float *yk = y + (n * K + c / Cg * Kg + k) * OH * OW;
        const float *wk = w + (c * Kg + k) * KH * KW;
        for (kw = 0; kw < KW; kw++) {
          /* the input columns whose output column ow = iw * sw + off lands in [0, OW) */
          int64_t off = kw * a->dilation[1] - a->padding[1];
          int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
          int64_t hi = OW - 1 - off < 0 ? -1 : (OW - 1 - off) / sw;
          if (hi > W - 1) hi = W - 1;
          if (lo > hi) continue;
          for (kh = 0; kh < KH; kh++) {
            float wv = wk[kh * KW + kw];
            for (ih = 0; ih < H; ih++) {
              int64_t oh = ih * sh + kh * a->dilation[0] - a->padding[0];
              float *yr;
              const float *xr = xc + ih * W;
              if (oh < 0 || oh >= OH) continue;
              yr = yk + oh * OW + (off + lo * sw); /* output column of input column lo */
              for (iw = lo; iw <= hi; iw++) yr[(iw - lo) * sw] += wv * xr[iw];
            }
          }
        }
      }
    }
}
/* ==== end src/kernels/ref_layers.c ==== */
/* ==== begin src/run.c ==== */
/* ------------------------------------------------------------------ execute -- */

FUSE_API fuse_result fuse_run(fuse_plan *p, const float *const *inputs, float *const *outputs,
                              void *workspace) {
  return fuse_run_steps(p, inputs, outputs, workspace, 0, p ? p->num_steps : 0);
}

FUSE_API fuse_result fuse_run_steps(fuse_plan *p, const float *const *inputs,
                                    float *const *outputs, void *workspace, int first, int count) {
  fuse__run r;
  int i;
  if (!p || (p->num_inputs && !inputs) || !outputs) return FUSE_ERROR_INVALID_ARGUMENT;
  if (first < 0 || count < 0 || first > p->num_steps || count > p->num_steps - first)
    return FUSE_ERROR_INVALID_ARGUMENT;
  for (i = 0; i < p->num_inputs; i++)
    if (!inputs[i]) return FUSE_ERROR_INVALID_ARGUMENT;
  for (i = 0; i < p->num_outputs; i++)
    if (!outputs[i]) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!workspace) workspace = p->own_workspace;
  if ((uintptr_t)workspace & (FUSE__ALIGN - 1)) return FUSE_ERROR_INVALID_ARGUMENT;
  r.p = p;
  r.inputs = inputs;
  r.outputs = outputs;
  r.work = (unsigned char *)workspace;
  for (i = first; i < first + count; i++) {
    const fuse__step *s = &p->steps[i];
    if (s->kernel == FUSE__KERNEL_BACKEND) { /* NCHW in and out; constant weights: NULL */
      const float *ops[FUSE_BACKEND_MAX_OPERANDS];
      fuse_result rc;
      int k;
      for (k = 0; k < s->num_in && k < FUSE_BACKEND_MAX_OPERANDS; k++)
        ops[k] = k == 1 && fuse__in_t(&r, s, k)->kind == FUSE__LOC_CONST ? NULL : fuse__in(&r, s, k);
      rc = s->backend->run(s->backend_state, ops, fuse__data(&r, s->out),
                           p->backend_scratch ? r.work + p->backend_offset : NULL);
      if (rc != FUSE_OK) return rc;
      continue;
    }
    switch (s->op) {
    case FUSE__OP_CONV2D: fuse__kernel_conv2d(&r, s); break;
    case FUSE__OP_MATMUL: fuse__kernel_matmul(&r, s); break;
    case FUSE__OP_ADD:
    case FUSE__OP_SUB:
    case FUSE__OP_MUL:
    case FUSE__OP_MAXIMUM:
    case FUSE__OP_MINIMUM: fuse__kernel_binary(&r, s); break;
    case FUSE__OP_CONCAT: fuse__kernel_concat(&r, s); break;
    case FUSE__OP_TRANSPOSE: fuse__kernel_transpose(&r, s); break;
    case FUSE__OP_SOFTMAX: fuse__kernel_softmax(&r, s); break;
    case FUSE__OP_BATCH_NORM: fuse__kernel_batch_norm(&r, s); break;
    case FUSE__OP_MAX_POOL2D:
    case FUSE__OP_AVG_POOL2D: fuse__kernel_pool(&r, s); break;
    case FUSE__OP_GLOBAL_AVG_POOL2D: fuse__kernel_global_avg_pool(&r, s); break;
    case FUSE__OP_TO_NHWC:
    case FUSE__OP_TO_NCHW: fuse__kernel_layout(&r, s); break;
    /* element-wise math (kernels/ref_math.c) */
    case FUSE__OP_SQRT: case FUSE__OP_RECIPROCAL: case FUSE__OP_EXP: case FUSE__OP_LOG:
    case FUSE__OP_NEG: case FUSE__OP_ABS: case FUSE__OP_FLOOR: case FUSE__OP_CEIL:
    case FUSE__OP_ERF: case FUSE__OP_TANH: case FUSE__OP_SOFTPLUS: case FUSE__OP_HARDSWISH:
    case FUSE__OP_HARDSIGMOID: case FUSE__OP_LEAKY_RELU: case FUSE__OP_ELU: case FUSE__OP_SELU:
    case FUSE__OP_GELU: fuse__kernel_math_unary(&r, s); break;
    case FUSE__OP_DIV: case FUSE__OP_POW: case FUSE__OP_PRELU:
    case FUSE__OP_WHERE: fuse__kernel_math_broadcast(&r, s); break;

    /* data movement (kernels/ref_shape.c) */
    case FUSE__OP_GATHER: fuse__kernel_gather(&r, s); break;
    case FUSE__OP_EXPAND: fuse__kernel_expand(&r, s); break;
    case FUSE__OP_TILE: fuse__kernel_tile(&r, s); break;
    case FUSE__OP_PAD: fuse__kernel_pad(&r, s); break;
    case FUSE__OP_RESIZE: fuse__kernel_resize(&r, s); break;

    /* reductions, normalizations (kernels/ref_nn.c) */
    case FUSE__OP_REDUCE_MEAN:
    case FUSE__OP_REDUCE_SUM:
    case FUSE__OP_REDUCE_MAX:
    case FUSE__OP_REDUCE_MIN:
    case FUSE__OP_REDUCE_L2:
    case FUSE__OP_REDUCE_PROD:
    case FUSE__OP_REDUCE_SUM_SQUARE: fuse__kernel_reduce(&r, s); break;
    case FUSE__OP_LOG_SOFTMAX: fuse__kernel_log_softmax(&r, s); break;
    case FUSE__OP_LAYER_NORM:
    case FUSE__OP_INSTANCE_NORM:
    case FUSE__OP_GROUP_NORM: fuse__kernel_norm(&r, s); break;

    /* transposed convolution (kernels/ref_layers.c) */
    case FUSE__OP_SLICE: fuse__kernel_slice(&r, s); break;
    case FUSE__OP_CONV_TRANSPOSE2D: fuse__kernel_conv_transpose2d(&r, s); break;

    default: fuse__kernel_unary(&r, s); break; /* relu, clip, sigmoid, copies */
    }
  }
  return FUSE_OK;
}


/* ==== end src/run.c ==== */
/* ==== begin src/onnx_proto.c ==== */
/* ============================================================================= ONNX == */
/* A protobuf wire-format reader with a bounds check on every byte, then a walk over the
   GraphProto that builds the graph with the public builders (so every shape check of the
   builders applies to what a file says). Field numbers are those of onnx.proto. */
#ifndef FUSE_NO_ONNX

/* An unnamed constant whose values the caller writes (straight from a file). */
static fuse_value fuse__constant_uninit(fuse_graph *g, int rank, const int64_t *shape) {
  return fuse__leaf(g, FUSE__OP_CONST, NULL, rank, shape, NULL, 1);
}

typedef struct fuse__pb {
  const unsigned char *p, *end;
} fuse__pb;

typedef struct fuse__slice {
  const unsigned char *p;
  size_t n;
} fuse__slice;

/* The readers below leave b->p where it was when they fail, so that a caller that stops at
   the first failure sees b->p != b->end: a field cut off by the end of the data is an error,
   never a quiet end of the message. */
static int fuse__proto_varint(fuse__pb *b, uint64_t *v) {
  uint64_t r = 0;
  int shift;
  const unsigned char *p = b->p;
  for (shift = 0; shift < 64; shift += 7) {
    unsigned char c;
    if (p >= b->end) return 0;
    c = *p++;
    r |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      *v = r;
      b->p = p;
      return 1;
    }
  }
  return 0; /* more than 10 bytes */
}

/* Reads a field's tag; 0 at the end of the message or on a malformed tag. */
static int fuse__proto_tag(fuse__pb *b, uint32_t *field, uint32_t *wire) {
  uint64_t t;
  const unsigned char *at = b->p;
  if (b->p >= b->end || !fuse__proto_varint(b, &t)) return 0;
  if ((t >> 3) == 0 || (t >> 3) > 0x1fffffff) {
    b->p = at;
    return 0;
  }
  *field = (uint32_t)(t >> 3);
  *wire = (uint32_t)(t & 7);
  return 1;
}

static int fuse__proto_bytes(fuse__pb *b, fuse__slice *out) {
  uint64_t n;
  const unsigned char *at = b->p;
  if (!fuse__proto_varint(b, &n)) return 0;
  if (n > (uint64_t)(b->end - b->p)) {
    b->p = at;
    return 0;
  }
  out->p = b->p;
  out->n = (size_t)n;
  b->p += n;
  return 1;
}

static uint32_t fuse__le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t fuse__le64(const unsigned char *p) {
  return (uint64_t)fuse__le32(p) | (uint64_t)fuse__le32(p + 4) << 32;
}

static float fuse__f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Skips a field's value; 0 if it runs past the end or uses a group / unknown wire type. */
static int fuse__proto_skip(fuse__pb *b, uint32_t wire) {
  uint64_t v;
  fuse__slice s;
  switch (wire) {
  case 0: return fuse__proto_varint(b, &v);
  case 1:
    if (b->end - b->p < 8) return 0;
    b->p += 8;
    return 1;
  case 2: return fuse__proto_bytes(b, &s);
  case 5:
    if (b->end - b->p < 4) return 0;
    b->p += 4;
    return 1;
  default: return 0;
  }
}

static fuse__pb fuse__proto_of(fuse__slice s) {
  static const unsigned char nothing = 0;
  fuse__pb b;
  b.p = s.p ? s.p : &nothing; /* an absent field reads as an empty message */
  b.end = b.p + (s.p ? s.n : 0);
  return b;
}

static int fuse__slice_is(fuse__slice s, const char *str) {
  size_t n = strlen(str);
  return s.n == n && (n == 0 || memcmp(s.p, str, n) == 0);
}

/* ---- TensorProto */

enum {
  FUSE__DT_FLOAT = 1, FUSE__DT_UINT8 = 2, FUSE__DT_INT8 = 3, FUSE__DT_UINT16 = 4,
  FUSE__DT_INT16 = 5, FUSE__DT_INT32 = 6, FUSE__DT_INT64 = 7, FUSE__DT_BOOL = 9,
  FUSE__DT_DOUBLE = 11, FUSE__DT_UINT32 = 12, FUSE__DT_UINT64 = 13
};

/* bytes per element in raw_data; 0 for the types the loader does not read (strings, float16) */
static int fuse__dt_size(int dt) {
  switch (dt) {
  case FUSE__DT_UINT8: case FUSE__DT_INT8: case FUSE__DT_BOOL: return 1;
  case FUSE__DT_UINT16: case FUSE__DT_INT16: return 2;
  case FUSE__DT_FLOAT: case FUSE__DT_INT32: case FUSE__DT_UINT32: return 4;
  case FUSE__DT_INT64: case FUSE__DT_DOUBLE: case FUSE__DT_UINT64: return 8;
  default: return 0;
  }
}

static const char *fuse__dt_name(int dt) {
  switch (dt) {
  case FUSE__DT_FLOAT: return "float32";
  case FUSE__DT_UINT8: return "uint8";
  case FUSE__DT_INT8: return "int8";
  case FUSE__DT_UINT16: return "uint16";
  case FUSE__DT_INT16: return "int16";
  case FUSE__DT_INT32: return "int32";
  case FUSE__DT_INT64: return "int64";
  case FUSE__DT_BOOL: return "bool";
  case FUSE__DT_DOUBLE: return "double";
  case FUSE__DT_UINT32: return "uint32";
  case FUSE__DT_UINT64: return "uint64";
  case 8: return "string";
  case 10: return "float16";
  case 16: return "bfloat16";
  default: return "an unknown type";
  }
}

static int fuse__dt_is_float(int dt) { return dt == FUSE__DT_FLOAT || dt == FUSE__DT_DOUBLE; }

typedef struct fuse__otensor {
  fuse__slice msg, name;
  int dtype, rank, external;
  int64_t dims[FUSE_MAX_RANK];
} fuse__otensor;

/* Reads a tensor's header (name, dims, type, where its data is). */
static int fuse__onnx_tensor_meta(fuse__slice msg, fuse__otensor *t, char *why, size_t why_n) {
  fuse__pb b = fuse__proto_of(msg);
  uint32_t f, w;
  memset(t, 0, sizeof *t);
  t->msg = msg;
  while (fuse__proto_tag(&b, &f, &w)) {
    uint64_t v;
    if (f == 1 && (w == 0 || w == 2)) { /* dims, plain or packed */
      fuse__pb dims = b;
      fuse__slice packed;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &packed)) return 0;
        dims = fuse__proto_of(packed);
        if (!packed.n) continue;
      }
      do {
        if (!fuse__proto_varint(&dims, &v)) return 0;
        if (t->rank == FUSE_MAX_RANK) {
          if (why) memcpy(why, "more than 8 dimensions", why_n < 23 ? why_n : 23);
          return 0;
        }
        t->dims[t->rank++] = (int64_t)v;
      } while (w == 2 && dims.p < dims.end);
      if (w == 0) b = dims;
    } else if (f == 2 && w == 0) {
      if (!fuse__proto_varint(&b, &v)) return 0;
      t->dtype = (int)v;
    } else if (f == 8 && w == 2) {
      if (!fuse__proto_bytes(&b, &t->name)) return 0;
    } else if (f == 14 && w == 0) {
      if (!fuse__proto_varint(&b, &v)) return 0;
      t->external = v == 1;
    } else if (f == 13 && w == 2) {
      t->external = 1;
      if (!fuse__proto_skip(&b, w)) return 0;
    } else if (!fuse__proto_skip(&b, w)) {
      return 0;
    }
  }
  return b.p == b.end;
}

static int fuse__little_endian(void) {
  const uint32_t one = 1;
  unsigned char c;
  memcpy(&c, &one, 1);
  return c == 1;
}

/* One raw_data element of type dt at q, as a double (exact for every integer up to 2^53) and
   as an int64. */
static void fuse__raw_value(int dt, const unsigned char *q, double *d, int64_t *i) {
  switch (dt) {
  case FUSE__DT_UINT8: case FUSE__DT_BOOL: *i = q[0]; *d = (double)*i; return;
  case FUSE__DT_INT8: *i = (int8_t)q[0]; *d = (double)*i; return;
  case FUSE__DT_UINT16: *i = (int64_t)(q[0] | q[1] << 8); *d = (double)*i; return;
  case FUSE__DT_INT16: *i = (int16_t)(uint16_t)(q[0] | q[1] << 8); *d = (double)*i; return;
  case FUSE__DT_INT32: *i = (int32_t)fuse__le32(q); *d = (double)*i; return;
  case FUSE__DT_UINT32: *i = (int64_t)fuse__le32(q); *d = (double)*i; return;
  case FUSE__DT_INT64: case FUSE__DT_UINT64: *i = (int64_t)fuse__le64(q); *d = (double)*i; return;
  case FUSE__DT_FLOAT: *d = fuse__f32(fuse__le32(q)); break;
  default: {
    uint64_t u = fuse__le64(q);
    memcpy(d, &u, sizeof *d);
  }
  }
  /* float to integer only where it fits (Cast truncates, as C does) */
  *i = *d != *d ? 0 : *d >= 9.2e18 ? INT64_MAX : *d <= -9.2e18 ? INT64_MIN : (int64_t)*d;
}

/* Decodes a tensor's values (any readable type) into out_f (as float) and / or out_i (as
   int64), at most `count` of them; either may be NULL (counting only). Returns the number the
   message holds, or -1 if it is malformed. raw_data is the common case: counted without a
   walk, and float32 copied in one go on little-endian machines. */
static int64_t fuse__onnx_tensor_values(const fuse__otensor *t, float *out_f, int64_t *out_i,
                                        int64_t count) {
  fuse__pb b = fuse__proto_of(t->msg);
  uint32_t f, w;
  int64_t got = 0;
  int size = fuse__dt_size(t->dtype);
#define FUSE__PUT(dv, iv)                             \
  do {                                                \
    if (got < count) {                                \
      if (out_f) out_f[got] = (float)(dv);            \
      if (out_i) out_i[got] = (iv);                   \
    }                                                 \
    got++;                                            \
  } while (0)
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s;
    uint64_t v;
    if (f == 9 && w == 2) { /* raw_data, little-endian */
      size_t i, n;
      if (!fuse__proto_bytes(&b, &s) || !size || s.n % (size_t)size) return -1;
      n = s.n / (size_t)size;
      if (!out_f && !out_i) {
        got += (int64_t)n;
        continue;
      }
      if (t->dtype == FUSE__DT_FLOAT && out_f && !out_i && fuse__little_endian()) {
        int64_t room = count - got < 0 ? 0 : count - got;
        size_t take = (uint64_t)room < (uint64_t)n ? (size_t)room : n;
        if (take) memcpy(out_f + got, s.p, take * sizeof(float));
        got += (int64_t)n;
        continue;
      }
      for (i = 0; i < n; i++) {
        double d;
        int64_t iv;
        fuse__raw_value(t->dtype, s.p + i * (size_t)size, &d, &iv);
        FUSE__PUT(d, iv);
      }
    } else if ((f == 4 && (w == 5 || w == 2)) || (f == 10 && (w == 1 || w == 2))) {
      /* float_data (fixed32) / double_data (fixed64), packed or not */
      size_t sz = f == 4 ? 4 : 8, i;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &s) || s.n % sz) return -1;
      } else {
        if ((size_t)(b.end - b.p) < sz) return -1;
        s.p = b.p;
        s.n = sz;
        b.p += sz;
      }
      for (i = 0; i < s.n; i += sz) {
        double d;
        int64_t iv;
        fuse__raw_value(sz == 4 ? FUSE__DT_FLOAT : FUSE__DT_DOUBLE, s.p + i, &d, &iv);
        FUSE__PUT(d, iv);
      }
    } else if ((f == 5 || f == 7 || f == 11) && (w == 0 || w == 2)) {
      /* int32_data (also the small types and bool) / int64_data / uint64_data */
      fuse__pb vals = b;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &s)) return -1;
        vals = fuse__proto_of(s);
        if (!s.n) continue;
      }
      do {
        int64_t iv;
        if (!fuse__proto_varint(&vals, &v)) return -1;
        iv = f == 5 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
        if (t->dtype == FUSE__DT_UINT8 || t->dtype == FUSE__DT_UINT16 || t->dtype == FUSE__DT_BOOL)
          iv = (int64_t)(uint32_t)v;
        FUSE__PUT((double)iv, iv);
      } while (w == 2 && vals.p < vals.end);
      if (w == 0) b = vals;
    } else if (!fuse__proto_skip(&b, w)) {
      return -1;
    }
  }
#undef FUSE__PUT
  return b.p == b.end ? got : -1;
}

/* ---- the loader */

typedef struct fuse__oattr {
  fuse__slice msg, name, s, t, g; /* g: a GraphProto (If's branches) */
  int type;
  float f;
  int64_t i;
  int has_f, has_i;
} fuse__oattr;

/* A NodeProto: in / out point into the loader's slots (any number of each). */
typedef struct fuse__onode {
  fuse__slice msg, op, name, domain;
  fuse__slice *in, *out;
  int num_in, num_out;
} fuse__onode;

/* A tensor the loader knows the values of: an initializer or Constant once read, or what a
   node computed at load (shape arithmetic). Floating-point values are float32, every other
   type (integers, bool) int64; the arrays belong to the loader. */
typedef struct fuse__known {
  int dtype; /* FUSE__DT_FLOAT: values in f; else in i (dtype says which integer type) */
  int rank;
  int64_t dims[FUSE_MAX_RANK];
  int64_t count;
  float *f;
  int64_t *i;
} fuse__known;

/* What an ONNX name stands for. */
enum { FUSE__OV_NONE, FUSE__OV_VALUE, FUSE__OV_TENSOR, FUSE__OV_KNOWN };
typedef struct fuse__oval {
  fuse__slice name;
  int kind;
  fuse_value v;     /* FUSE__OV_VALUE */
  fuse__otensor t;  /* FUSE__OV_TENSOR: an initializer or Constant not yet read */
  fuse__known k;    /* FUSE__OV_KNOWN */
} fuse__oval;

typedef struct fuse__onnx {
  fuse_graph *g;
  int opset;
  fuse__oval *vals;
  int num_vals, cap_vals;
  int *table; /* open addressing over vals by name; -1 empty */
  int table_cap;
  const fuse__onode *node; /* the node being converted, for messages */
  int node_index;
  char name_buf[512];
  fuse__slice *slots; /* the nodes' inputs and outputs (fuse__onode in / out) */
  int num_slots, cap_slots;
  int depth;    /* If branches being read, one inside the other */
  void **owned; /* the known tensors' arrays, freed with the loader */
  int num_owned, cap_owned;
} fuse__onnx;

static uint32_t fuse__slice_hash(fuse__slice s) {
  uint32_t h = 2166136261u;
  size_t i;
  for (i = 0; i < s.n; i++) h = (h ^ s.p[i]) * 16777619u;
  return h;
}

static int fuse__onnx_find(const fuse__onnx *ld, fuse__slice name) {
  uint32_t i;
  if (!ld->table_cap) return -1;
  for (i = fuse__slice_hash(name) & (uint32_t)(ld->table_cap - 1); ld->table[i] >= 0;
       i = (i + 1) & (uint32_t)(ld->table_cap - 1)) {
    const fuse__oval *o = &ld->vals[ld->table[i]];
    if (o->name.n == name.n && (name.n == 0 || memcmp(o->name.p, name.p, name.n) == 0))
      return ld->table[i];
  }
  return -1;
}

/* A NUL-terminated copy of a name for messages and fuse names (truncated to 511 bytes). */
static const char *fuse__onnx_cstr(fuse__onnx *ld, fuse__slice s) {
  size_t n = s.n < sizeof ld->name_buf - 1 ? s.n : sizeof ld->name_buf - 1;
  if (n) memcpy(ld->name_buf, s.p, n);
  ld->name_buf[n] = 0;
  return ld->name_buf;
}

static void fuse__copy_slice(char *dst, size_t cap, fuse__slice s) {
  size_t n = s.n < cap - 1 ? s.n : cap - 1;
  if (n) memcpy(dst, s.p, n);
  dst[n] = 0;
}

static fuse_result fuse__onnx_fail(fuse__onnx *ld, fuse_result r, const char *what) {
  char name[128], op[64];
  if (ld->node) {
    fuse__copy_slice(op, sizeof op, ld->node->op);
    if (!ld->node->name.n && ld->node->num_out && ld->node->out[0].n) { /* most are unnamed */
      fuse__copy_slice(name, sizeof name, ld->node->out[0]);
      fuse__fail(ld->g, r, "onnx: node %d (%s, output '%s'): %s", ld->node_index, op, name, what);
    } else {
      fuse__copy_slice(name, sizeof name, ld->node->name);
      fuse__fail(ld->g, r, "onnx: node %d '%s' (%s): %s", ld->node_index, name, op, what);
    }
  } else {
    fuse__fail(ld->g, r, "onnx: %s", what);
  }
  return ld->g->status;
}

/* fuse__onnx_fail with a formatted message (fuse__vformat's directives). */
static fuse_result fuse__onnx_failf(fuse__onnx *ld, fuse_result r, const char *fmt, ...) {
  char what[400];
  va_list ap;
  fuse__out o;
  o.buf = what;
  o.len = 0;
  o.cap = sizeof what;
  o.write = NULL;
  o.user = NULL;
  va_start(ap, fmt);
  fuse__vformat(&o, ld->g, fmt, ap);
  va_end(ap);
  return fuse__onnx_fail(ld, r, what);
}

/* Adds (or replaces) what `name` stands for. */
static int fuse__onnx_bind(fuse__onnx *ld, fuse__slice name, const fuse__oval *val) {
  int k, i;
  uint32_t h;
  if (!name.n) return 1; /* an optional output left unnamed: nothing reads it */
  k = fuse__onnx_find(ld, name);
  if (k >= 0) {
    ld->vals[k] = *val;
    ld->vals[k].name = name;
    return 1;
  }
  if ((ld->num_vals + 1) * 2 > ld->table_cap) {
    int cap = ld->table_cap ? ld->table_cap * 2 : 256;
    int *table = (int *)fuse__alloc(&ld->g->alloc, (size_t)cap * sizeof(int), 16);
    if (!table) return 0;
    for (i = 0; i < cap; i++) table[i] = -1;
    for (i = 0; i < ld->num_vals; i++) {
      for (h = fuse__slice_hash(ld->vals[i].name) & (uint32_t)(cap - 1); table[h] >= 0;
           h = (h + 1) & (uint32_t)(cap - 1)) {
      }
      table[h] = i;
    }
    fuse__free(&ld->g->alloc, ld->table);
    ld->table = table;
    ld->table_cap = cap;
  }
  {
    fuse__oval *vals = (fuse__oval *)fuse__grow(&ld->g->alloc, ld->vals, ld->num_vals,
                                                &ld->cap_vals, ld->num_vals + 1, sizeof(fuse__oval));
    if (!vals) return 0;
    ld->vals = vals;
  }
  ld->vals[ld->num_vals] = *val;
  ld->vals[ld->num_vals].name = name;
  for (h = fuse__slice_hash(name) & (uint32_t)(ld->table_cap - 1); ld->table[h] >= 0;
       h = (h + 1) & (uint32_t)(ld->table_cap - 1)) {
  }
  ld->table[h] = ld->num_vals++;
  return 1;
}

static int fuse__onnx_bind_value(fuse__onnx *ld, fuse__slice name, fuse_value v) {
  fuse__oval o;
  memset(&o, 0, sizeof o);
  o.kind = FUSE__OV_VALUE;
  o.v = v;
  return fuse__onnx_bind(ld, name, &o);
}

static int fuse__onnx_bind_known(fuse__onnx *ld, fuse__slice name, const fuse__known *k) {
  fuse__oval o;
  memset(&o, 0, sizeof o);
  o.kind = FUSE__OV_KNOWN;
  o.k = *k;
  if (!fuse__onnx_bind(ld, name, &o)) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
  return 1;
}

/* Names of initializers, inputs and outputs: present and without NUL bytes (node inputs may
   be empty: an optional input left out). */
static int fuse__onnx_name_ok(fuse__onnx *ld, fuse__slice s) {
  if (s.n && memchr(s.p, 0, s.n))
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "a name contains a NUL byte"), 0;
  return 1;
}

/* A tensor's element count; returns the index of a dimension that is zero or out of range,
   or -1 when they are all fine. */
static int fuse__onnx_tensor_count(const fuse__otensor *t, int64_t *count) {
  int i;
  *count = 1;
  for (i = 0; i < t->rank; i++) {
    if (t->dims[i] < 1 || t->dims[i] > FUSE__MAX_DIM || *count > ((int64_t)1 << 48) / t->dims[i])
      return i;
    *count *= t->dims[i];
  }
  return -1;
}

/* Checks a tensor's dims, type and storage before its data is read; fills count. */
static int fuse__onnx_check_tensor(fuse__onnx *ld, const fuse__otensor *t, int64_t *count) {
  int i;
  char name[200];
  fuse__copy_slice(name, sizeof name, t->name);
  *count = 1;
  if (t->external)
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "tensor '%s' keeps its data in an external file, which this loader "
                            "does not read", name), 0;
  if ((i = fuse__onnx_tensor_count(t, count)) >= 0)
    return fuse__onnx_failf(ld, t->dims[i] == 0 ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_PARSE,
                            "tensor '%s' has dimension %D%s", name, t->dims[i],
                            t->dims[i] == 0 ? " (zero-sized tensors are not supported)"
                                            : " (out of range)"), 0;
  if (!fuse__dt_size(t->dtype))
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "tensor '%s' has data type %d (%s), which this loader does not read",
                            name, t->dtype, fuse__dt_name(t->dtype)), 0;
  return 1;
}

/* Memory the loader frees when it is done (the known tensors' values). */
static void *fuse__onnx_own(fuse__onnx *ld, size_t bytes) {
  void *p, **owned;
  owned = (void **)fuse__grow(&ld->g->alloc, ld->owned, ld->num_owned, &ld->cap_owned,
                              ld->num_owned + 1, sizeof(void *));
  if (!owned) return NULL;
  ld->owned = owned;
  if (!(p = fuse__alloc(&ld->g->alloc, bytes ? bytes : 1, 16))) return NULL;
  ld->owned[ld->num_owned++] = p;
  return p;
}

/* The largest tensor folded at load (elements): shape arithmetic is tiny; this bounds what a
   hostile file can make the loader compute. */
#define FUSE__MAX_FOLD ((int64_t)1 << 24)

/* Gives k room for its values: float32 for dtype FLOAT, else int64. 0 (and the error) when
   it is too large or memory runs out. */
static int fuse__known_alloc(fuse__onnx *ld, fuse__known *k, int dtype, int rank,
                             const int64_t *dims) {
  int d;
  memset(k, 0, sizeof *k);
  k->dtype = dtype == FUSE__DT_DOUBLE ? FUSE__DT_FLOAT : dtype;
  k->rank = rank;
  k->count = 1;
  for (d = 0; d < rank; d++) { /* zero-sized ones are fine here (an empty shape, no scales) */
    if (dims[d] < 0 || dims[d] > FUSE__MAX_FOLD || k->count * dims[d] > FUSE__MAX_FOLD)
      return fuse__onnx_failf(ld, FUSE_ERROR_INVALID_ARGUMENT,
                              "a tensor computed at load time would have shape %S (%s)", rank,
                              dims, dims[d] < 0 ? "a negative dimension" : "more than 2^24 elements"), 0;
    k->dims[d] = dims[d];
    k->count *= dims[d];
  }
  if (k->dtype == FUSE__DT_FLOAT) k->f = (float *)fuse__onnx_own(ld, (size_t)k->count * sizeof(float));
  else k->i = (int64_t *)fuse__onnx_own(ld, (size_t)k->count * sizeof(int64_t));
  if (!k->f && !k->i) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
  return 1;
}

/* The values of `name` when the loader knows them (an initializer, a Constant or a folded
   node): 1 with *k filled; 0 when the name is a run-time value (or unknown, or the error is
   set: check g->status). An initializer is read here once and remembered. */
static int fuse__onnx_known_of(fuse__onnx *ld, fuse__slice name, fuse__known *k) {
  int idx = fuse__onnx_find(ld, name);
  fuse__otensor t;
  int64_t count;
  if (idx < 0) return 0;
  if (ld->vals[idx].kind == FUSE__OV_KNOWN) {
    *k = ld->vals[idx].k;
    return 1;
  }
  if (ld->vals[idx].kind != FUSE__OV_TENSOR) return 0;
  t = ld->vals[idx].t;
  if (fuse__onnx_tensor_count(&t, &count) >= 0) { /* an empty tensor (no scales, say) */
    int d;
    for (d = 0; d < t.rank && t.dims[d] != 0; d++) {
    }
    if (d < t.rank && !t.external && fuse__dt_size(t.dtype)) count = 0;
  }
  if (count && !fuse__onnx_check_tensor(ld, &t, &count)) return 0;
  if (!fuse__known_alloc(ld, k, fuse__dt_is_float(t.dtype) ? FUSE__DT_FLOAT : t.dtype, t.rank,
                         t.dims))
    return 0;
  if (fuse__onnx_tensor_values(&t, k->f, k->i, count) != count) {
    char nm[200];
    fuse__copy_slice(nm, sizeof nm, t.name);
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "tensor '%s': its data %s", nm,
                            "is malformed or does not match its dimensions"), 0;
  }
  idx = fuse__onnx_find(ld, name);
  ld->vals[idx].kind = FUSE__OV_KNOWN;
  ld->vals[idx].k = *k;
  return 1;
}

/* The shape of whatever `name` stands for; 0 if it stands for nothing. */
static int fuse__onnx_shape_of(fuse__onnx *ld, fuse__slice name, int *rank, int64_t *dims) {
  int idx = fuse__onnx_find(ld, name);
  const fuse__oval *o;
  if (idx < 0) return 0;
  o = &ld->vals[idx];
  switch (o->kind) {
  case FUSE__OV_VALUE:
    *rank = ld->g->nodes[o->v].rank;
    memcpy(dims, ld->g->nodes[o->v].shape, sizeof(int64_t) * FUSE_MAX_RANK);
    return 1;
  case FUSE__OV_TENSOR:
    *rank = o->t.rank;
    memcpy(dims, o->t.dims, sizeof(int64_t) * FUSE_MAX_RANK);
    return 1;
  case FUSE__OV_KNOWN:
    *rank = o->k.rank;
    memcpy(dims, o->k.dims, sizeof(int64_t) * FUSE_MAX_RANK);
    return 1;
  default: return 0;
  }
}

/* A float constant of the graph from a tensor: raw float32 data is copied straight from the
   file into the constant (no zeroing, no per-element conversion). */
static fuse_value fuse__onnx_constant_of(fuse__onnx *ld, const fuse__otensor *t) {
  int64_t count, got;
  fuse_value v;
  char nm[200];
  if (!fuse__onnx_check_tensor(ld, t, &count)) return FUSE_NONE;
  fuse__copy_slice(nm, sizeof nm, t->name);
  if (!fuse__dt_is_float(t->dtype))
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "tensor '%s' (%s, shape %S) is used as float32 data; fuse.h "
                            "computes in float32 and reads integer tensors only as shapes, "
                            "axes and indices", nm, fuse__dt_name(t->dtype), t->rank, t->dims),
           FUSE_NONE;
  got = fuse__onnx_tensor_values(t, NULL, NULL, 0); /* count first: allocate what is there */
  if (got != count)
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "tensor '%s': its data %s", nm,
                            got < 0 ? "is malformed" : "does not match its dimensions"),
           FUSE_NONE;
  v = fuse__constant_uninit(ld->g, t->rank, t->dims);
  if (v == FUSE_NONE) return FUSE_NONE;
  fuse__onnx_tensor_values(t, ld->g->nodes[v].data, NULL, count); /* counted above: it fits */
  return v;
}

/* y[c][r] = x[r][c] * scale for an R x C matrix x, in blocks that stay in cache (a 25088 x
   4096 classifier weight element by element would miss on every store). x may be unaligned
   bytes straight from a file (little-endian float32). */
static void fuse__transpose_tiles(float *y, const unsigned char *xb, int64_t R, int64_t C,
                                  int64_t r0, int64_t r1) {
  const int64_t T = 16; /* a 16 x 16 tile: 16 cache lines read, 16 written */
  float tile[16][16];
  int64_t rt, c0, r, c;
  for (c0 = 0; c0 < C; c0 += T)
    for (rt = r0; rt < r1; rt += T) {
      int64_t nr = r1 - rt < T ? r1 - rt : (int64_t)T, nc = C - c0 < T ? C - c0 : (int64_t)T;
      for (r = 0; r < nr; r++)
        memcpy(tile[r], xb + (size_t)((rt + r) * C + c0) * sizeof(float), (size_t)nc * sizeof(float));
      for (c = 0; c < nc; c++) {
        float *dst = y + (c0 + c) * R + rt;
        for (r = 0; r < nr; r++) dst[r] = tile[r][c];
      }
    }
}

static void fuse__transpose_scaled(float *y, const void *x, int64_t R, int64_t C, float scale,
                                   const fuse_allocator *alloc) {
  const unsigned char *xb = (const unsigned char *)x;
  int64_t r0, i, band = 64;
  float *tmp = NULL;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  /* bands of rows copied to an aligned buffer, then the layout conversions' AVX2 transpose */
  if (fuse_cpu_isa() >= FUSE_ISA_AVX2)
    tmp = (float *)fuse__alloc(alloc, (size_t)(band * C) * sizeof(float), FUSE__ALIGN);
#else
  (void)alloc;
#endif
  for (r0 = 0; r0 < R; r0 += band) {
    int64_t rows = R - r0 < band ? R - r0 : band;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
    if (tmp) {
      memcpy(tmp, xb + (size_t)(r0 * C) * sizeof(float), (size_t)(rows * C) * sizeof(float));
      fuse__transpose_avx2(tmp, C, y + r0, R, rows, C);
      continue;
    }
#endif
    fuse__transpose_tiles(y, xb, R, C, r0, r0 + rows);
  }
  fuse__free(alloc, tmp);
  if (scale != 1)
    for (i = 0; i < R * C; i++) y[i] *= scale;
}

/* The transpose of a 2-D float initializer (times scale) as a constant, read from the file
   directly: Gemm's transB weights never exist twice. FUSE_NONE without an error when `name`
   is not such an initializer (the caller transposes the graph value). */
static fuse_value fuse__onnx_transposed_tensor(fuse__onnx *ld, fuse__slice name, float scale) {
  int k = fuse__onnx_find(ld, name);
  fuse__otensor t;
  fuse__pb b;
  uint32_t f, w;
  fuse__slice raw = {NULL, 0};
  int64_t count, dims[2];
  fuse_value v;
  if (k < 0 || ld->vals[k].kind != FUSE__OV_TENSOR) return FUSE_NONE;
  t = ld->vals[k].t;
  if (t.dtype != FUSE__DT_FLOAT || t.rank != 2 || t.external || !fuse__little_endian() ||
      fuse__onnx_tensor_count(&t, &count) >= 0)
    return FUSE_NONE;
  b = fuse__proto_of(t.msg);
  while (fuse__proto_tag(&b, &f, &w)) { /* the raw_data field, alone */
    if (f == 9 && w == 2) {
      if (raw.p || !fuse__proto_bytes(&b, &raw)) return FUSE_NONE;
    } else if ((f == 4 || f == 10) || !fuse__proto_skip(&b, w)) {
      return FUSE_NONE;
    }
  }
  if (b.p != b.end || !raw.p || raw.n != (size_t)count * sizeof(float)) return FUSE_NONE;
  dims[0] = t.dims[1];
  dims[1] = t.dims[0];
  if ((v = fuse__constant_uninit(ld->g, 2, dims)) == FUSE_NONE) return FUSE_NONE;
  fuse__transpose_scaled(ld->g->nodes[v].data, raw.p, t.dims[0], t.dims[1], scale, &ld->g->alloc);
  return v;
}

/* The graph value for an ONNX name: initializers, Constants and folded float tensors become
   constants on first use. An integer or bool tensor cannot be float data: that is an error
   naming it. */
static fuse_value fuse__onnx_value(fuse__onnx *ld, fuse__slice name) {
  int k = fuse__onnx_find(ld, name);
  fuse__oval *o;
  fuse_value v;
  if (k < 0 || ld->vals[k].kind == FUSE__OV_NONE)
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE,
                            "input '%s' is not produced by an earlier node, an initializer or a "
                            "graph input", fuse__onnx_cstr(ld, name)),
           FUSE_NONE;
  o = &ld->vals[k];
  if (o->kind == FUSE__OV_VALUE) return o->v;
  if (o->kind == FUSE__OV_TENSOR) {
    fuse__otensor t = o->t;
    if ((v = fuse__onnx_constant_of(ld, &t)) == FUSE_NONE) return FUSE_NONE;
  } else {
    fuse__known kn = o->k;
    if (kn.count == 0)
      return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                              "input '%s' is an empty tensor of shape %S (computed at load time; "
                              "zero-sized tensors are not supported as data)",
                              fuse__onnx_cstr(ld, name), kn.rank, kn.dims),
             FUSE_NONE;
    if (kn.dtype != FUSE__DT_FLOAT)
      return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                              "input '%s' (%s, shape %S) is computed at load time and used as "
                              "float32 data (fuse.h computes in float32; integer tensors serve "
                              "only as shapes, axes and indices)",
                              fuse__onnx_cstr(ld, name), fuse__dt_name(kn.dtype), kn.rank, kn.dims),
             FUSE_NONE;
    v = fuse_constant(ld->g, NULL, kn.rank, kn.dims, kn.f);
    if (v == FUSE_NONE) return FUSE_NONE;
  }
  if (name.n && fuse__onnx_name_ok(ld, name) && fuse__find(ld->g, fuse__onnx_cstr(ld, name)) == FUSE_NONE &&
      fuse_value_set_name(ld->g, v, fuse__onnx_cstr(ld, name)) != FUSE_OK)
    return FUSE_NONE;
  k = fuse__onnx_find(ld, name); /* the table may have moved */
  ld->vals[k].kind = FUSE__OV_VALUE;
  ld->vals[k].v = v;
  return v;
}

/* An integer tensor known at load of at most `max` values and rank <= 1, e.g. a Reshape
   target; 0 if `name` is not one. */
static int fuse__onnx_ints(fuse__onnx *ld, fuse__slice name, int64_t *out, int max, int *count) {
  fuse__known k;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype == FUSE__DT_FLOAT || k.rank > 1 ||
      k.count > max)
    return 0;
  memcpy(out, k.i, (size_t)k.count * sizeof(int64_t));
  *count = (int)k.count;
  return 1;
}

/* A float tensor known at load of at most `max` values and rank <= 1 (Resize's scales); 0 if
   `name` is not one. */
static int fuse__onnx_floats(fuse__onnx *ld, fuse__slice name, float *out, int max, int *count) {
  fuse__known k;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype != FUSE__DT_FLOAT || k.rank > 1 ||
      k.count > max)
    return 0;
  memcpy(out, k.f, (size_t)k.count * sizeof(float));
  *count = (int)k.count;
  return 1;
}

/* A scalar float constant (one element): an initializer, a Constant, a folded value or a
   one-element constant of the graph. */
static int fuse__onnx_scalar(fuse__onnx *ld, fuse__slice name, float *out) {
  int idx = fuse__onnx_find(ld, name);
  fuse__known k;
  if (idx < 0) return 0;
  if (ld->vals[idx].kind == FUSE__OV_VALUE) {
    const fuse__node *n = &ld->g->nodes[ld->vals[idx].v];
    if (n->op != FUSE__OP_CONST || fuse__numel(n->rank, n->shape) != 1) return 0;
    *out = n->data[0];
    return 1;
  }
  if (ld->vals[idx].kind == FUSE__OV_TENSOR &&
      (!fuse__dt_is_float(ld->vals[idx].t.dtype) || ld->vals[idx].t.external ||
       fuse__numel(ld->vals[idx].t.rank, ld->vals[idx].t.dims) != 1))
    return 0;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype != FUSE__DT_FLOAT || k.count != 1) return 0;
  *out = k.f[0];
  return 1;
}

/* An integer (int64, int32 or bool) tensor known at load time: its rank, dims and values as
   int64 (loader-owned, valid while the loader runs), or 0 when `name` is not one. */
static int fuse__onnx_int_tensor(fuse__onnx *ld, fuse__slice name, int *rank, int64_t *dims,
                                 const int64_t **values) {
  fuse__known k;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype == FUSE__DT_FLOAT) return 0;
  *rank = k.rank;
  memcpy(dims, k.dims, sizeof k.dims);
  *values = k.i;
  return 1;
}

/* The graph value of an operand that may be an integer or bool tensor known at load (Pow's
   exponent 2 as int64, Where's condition): a float graph value as it is, such a tensor made a
   float constant of its values (as_mask: of 0 and 1). */
static fuse_value fuse__onnx_float_operand(fuse__onnx *ld, fuse__slice name, int as_mask) {
  fuse__known k;
  int64_t i;
  fuse_value c;
  float *f;
  if (!fuse__onnx_known_of(ld, name, &k) || k.dtype == FUSE__DT_FLOAT)
    return ld->g->status == FUSE_OK ? fuse__onnx_value(ld, name) : FUSE_NONE;
  c = fuse__constant_uninit(ld->g, k.rank, k.dims);
  if (c == FUSE_NONE) return FUSE_NONE;
  f = ld->g->nodes[c].data;
  for (i = 0; i < k.count; i++) f[i] = as_mask ? (float)(k.i[i] != 0) : (float)k.i[i];
  return c;
}

/* A Where condition: a float graph value, or a known bool / integer tensor as 0 and 1. */
static fuse_value fuse__onnx_mask(fuse__onnx *ld, fuse__slice name) {
  return fuse__onnx_float_operand(ld, name, 1);
}
/* ==== end src/onnx_proto.c ==== */
/* ==== begin src/onnx_ops.c ==== */
/* ---- attributes */

static int fuse__onnx_attr(const fuse__onode *n, const char *name, fuse__oattr *a) {
  fuse__pb b = fuse__proto_of(n->msg);
  uint32_t f, w;
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s;
    if (f == 5 && w == 2) {
      fuse__pb ab;
      uint32_t af, aw;
      if (!fuse__proto_bytes(&b, &s)) return 0;
      memset(a, 0, sizeof *a);
      a->msg = s;
      ab = fuse__proto_of(s);
      while (fuse__proto_tag(&ab, &af, &aw)) {
        uint64_t v;
        if (af == 1 && aw == 2) {
          if (!fuse__proto_bytes(&ab, &a->name)) return 0;
        } else if (af == 2 && aw == 5) {
          if (ab.end - ab.p < 4) return 0;
          a->f = fuse__f32(fuse__le32(ab.p));
          a->has_f = 1;
          ab.p += 4;
        } else if (af == 3 && aw == 0) {
          if (!fuse__proto_varint(&ab, &v)) return 0;
          a->i = (int64_t)v;
          a->has_i = 1;
        } else if (af == 4 && aw == 2) {
          if (!fuse__proto_bytes(&ab, &a->s)) return 0;
        } else if (af == 5 && aw == 2) {
          if (!fuse__proto_bytes(&ab, &a->t)) return 0;
        } else if (af == 6 && aw == 2) {
          if (!fuse__proto_bytes(&ab, &a->g)) return 0;
        } else if (af == 20 && aw == 0) {
          if (!fuse__proto_varint(&ab, &v)) return 0;
          a->type = (int)v;
        } else if (!fuse__proto_skip(&ab, aw)) {
          return 0;
        }
      }
      if (fuse__slice_is(a->name, name)) return 1;
    } else if (!fuse__proto_skip(&b, w)) {
      return 0;
    }
  }
  return 0;
}

static int64_t fuse__onnx_attr_int(const fuse__onode *n, const char *name, int64_t def) {
  fuse__oattr a;
  return fuse__onnx_attr(n, name, &a) && a.has_i ? a.i : def;
}

static float fuse__onnx_attr_float(const fuse__onode *n, const char *name, float def) {
  fuse__oattr a;
  return fuse__onnx_attr(n, name, &a) && a.has_f ? a.f : def;
}

/* A list of ints (field 8, packed or not); returns the count, -1 if absent or malformed. */
static int fuse__onnx_attr_ints(const fuse__onode *n, const char *name, int64_t *out, int max) {
  fuse__oattr a;
  fuse__pb b;
  uint32_t f, w;
  int count = 0;
  if (!fuse__onnx_attr(n, name, &a)) return -1;
  b = fuse__proto_of(a.msg);
  while (fuse__proto_tag(&b, &f, &w)) {
    if (f == 8 && (w == 0 || w == 2)) {
      fuse__pb vals = b;
      fuse__slice s;
      uint64_t v;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &s)) return -1;
        vals = fuse__proto_of(s);
        if (!s.n) continue;
      }
      do {
        if (!fuse__proto_varint(&vals, &v) || count == max) return -1;
        out[count++] = (int64_t)v;
      } while (w == 2 && vals.p < vals.end);
      if (w == 0) b = vals;
    } else if (!fuse__proto_skip(&b, w)) {
      return -1;
    }
  }
  return count;
}

/* Parses a NodeProto: inputs and outputs go into one block from the loader's allocator (any
   number of each), which fuse__onnx_node_free releases. 0 if malformed (or out of memory:
   the graph then holds the error). */
static int fuse__onnx_node(fuse__onnx *ld, fuse__slice msg, fuse__onode *n) {
  fuse__pb b = fuse__proto_of(msg);
  uint32_t f, w;
  int pass, n_in = 0, n_out = 0;
  memset(n, 0, sizeof *n);
  n->msg = msg;
  for (pass = 0; pass < 2; pass++) { /* count, then fill */
    b = fuse__proto_of(msg);
    while (fuse__proto_tag(&b, &f, &w)) {
      fuse__slice s;
      if (w == 2 && f >= 1 && f <= 4) {
        if (!fuse__proto_bytes(&b, &s)) return 0;
        if (f == 1) {
          if (pass) n->in[n->num_in++] = s;
          else n_in++;
        } else if (f == 2) {
          if (pass) n->out[n->num_out++] = s;
          else n_out++;
        } else if (f == 3) {
          n->name = s;
        } else {
          n->op = s;
        }
      } else if (w == 2 && f == 7) {
        if (!fuse__proto_bytes(&b, &n->domain)) return 0;
      } else if (!fuse__proto_skip(&b, w)) {
        return 0;
      }
    }
    if (b.p != b.end || !n->op.n) return 0;
    if (!pass) {
      n->in = (fuse__slice *)fuse__alloc(&ld->g->alloc, (size_t)(n_in + n_out + 1) * sizeof(fuse__slice), 16);
      if (!n->in) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
      n->out = n->in + n_in;
    }
  }
  return 1;
}

static void fuse__onnx_node_free(fuse__onnx *ld, fuse__onode *n) {
  fuse__free(&ld->g->alloc, n->in);
  n->in = n->out = NULL;
  n->num_in = n->num_out = 0;
}

/* ---- operators */

static int fuse__onnx_has_in(const fuse__onode *n, int i) { return i < n->num_in && n->in[i].n > 0; }

static int fuse__onnx_attr_ints32(fuse__onnx *ld, const fuse__onode *n, const char *name, int *out,
                               int count, int def) {
  int64_t v[8];
  int got = fuse__onnx_attr_ints(n, name, v, 8), i;
  char what[160];
  fuse__out o;
  o.buf = what;
  o.len = 0;
  o.cap = sizeof what;
  o.write = NULL;
  o.user = NULL;
  for (i = 0; i < count; i++) out[i] = def;
  if (got < 0) return 1;
  fuse__puts(&o, "attribute '");
  fuse__puts(&o, name);
  if (got != count) {
    fuse__puts(&o, "' has an unexpected length (only 1-D and 2-D conv and pools are supported)");
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what), 0;
  }
  for (i = 0; i < count; i++) {
    if (v[i] < 0 || v[i] > 0x7fffffff) {
      fuse__puts(&o, "' has value ");
      fuse__put_int(&o, v[i]);
      fuse__puts(&o, ", out of range");
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, what), 0;
    }
    out[i] = (int)v[i];
  }
  return 1;
}

/* auto_pad SAME_UPPER / SAME_LOWER / VALID over the 2 spatial dims; kernel is the dilated one */
static int fuse__onnx_auto_pad(fuse__onnx *ld, const fuse__onode *n, fuse_value x, const int *kernel,
                            const int *strides, const int *dilation, int *pads) {
  fuse__oattr a;
  const int64_t *shape = fuse_value_shape(ld->g, x);
  int64_t spatial[2]; /* 1-D: [N, C, L] is [N, C, 1, L] */
  int i;
  spatial[0] = fuse_value_rank(ld->g, x) == 3 ? 1 : shape[2];
  spatial[1] = fuse_value_rank(ld->g, x) == 3 ? shape[2] : shape[3];
  if (!fuse__onnx_attr(n, "auto_pad", &a) || fuse__slice_is(a.s, "NOTSET")) return 1;
  if (fuse__slice_is(a.s, "VALID")) {
    for (i = 0; i < 4; i++) pads[i] = 0;
    return 1;
  }
  if (!fuse__slice_is(a.s, "SAME_UPPER") && !fuse__slice_is(a.s, "SAME_LOWER"))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "auto_pad is not NOTSET, VALID, SAME_UPPER or SAME_LOWER"), 0;
  for (i = 0; i < 2; i++) { /* the builder would name these too, but SAME divides by them */
    if (strides[i] < 1 || dilation[i] < 1 || kernel[i] < 1)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "auto_pad SAME needs kernel, strides and dilations >= 1"), 0;
  }
  for (i = 0; i < 2; i++) {
    int64_t in = spatial[i], out = (in + strides[i] - 1) / strides[i];
    int64_t eff = (int64_t)dilation[i] * (kernel[i] - 1) + 1;
    int64_t total = (out - 1) * strides[i] + eff - in;
    if (total < 0) total = 0;
    if (total > 0x7ffffffe)
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "auto_pad SAME gives padding past 2^31"), 0;
    if (fuse__slice_is(a.s, "SAME_UPPER")) {
      pads[i] = (int)(total / 2);
      pads[i + 2] = (int)(total - total / 2);
    } else {
      pads[i] = (int)(total - total / 2);
      pads[i + 2] = (int)(total / 2);
    }
  }
  return 1;
}

/* x itself when it is 2-D [N, C, H, W] or 1-D [N, C, L] (the builders run 1-D as 2-D) */
static fuse_value fuse__onnx_rank4(fuse__onnx *ld, fuse_value x) {
  if (fuse_value_rank(ld->g, x) != 4 && fuse_value_rank(ld->g, x) != 3)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                           "only 1-D and 2-D inputs ([N,C,L] and [N,C,H,W]) are supported"),
           FUSE_NONE;
  return x;
}

/* A list attribute over nd spatial dimensions (nd = 1 or 2; per = 2 for pads: begins, then
   ends), put in the 2-D form the builders take: a 1-D list fills the W entries and leaves the
   H entries at h (pads [b, e] become [0, b, 0, e]). Absent: every entry def. */
static int fuse__onnx_spatial_ints(fuse__onnx *ld, const fuse__onode *n, const char *name,
                                   int nd, int per, int *out, int def, int h) {
  int v[4], i;
  if (nd == 2) return fuse__onnx_attr_ints32(ld, n, name, out, 2 * per, def);
  if (!fuse__onnx_attr_ints32(ld, n, name, v, per, def)) return 0;
  for (i = 0; i < per; i++) {
    out[2 * i] = h;
    out[2 * i + 1] = v[i];
  }
  return 1;
}

static fuse_value fuse__onnx_conv(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_conv2d_attrs a;
  fuse_value x = fuse__onnx_value(ld, n->in[0]), w, y;
  int kernel[2], nd;
  if (x == FUSE_NONE || fuse__onnx_rank4(ld, x) == FUSE_NONE) return FUSE_NONE;
  if (n->num_in < 2 || (w = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE) return FUSE_NONE;
  memset(&a, 0, sizeof a);
  nd = fuse_value_rank(g, x) - 2;
  if (fuse_value_rank(g, w) != nd + 2)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                           "only 1-D and 2-D convolutions are supported (the weight's rank must "
                           "be the input's)"),
           FUSE_NONE;
  kernel[0] = nd == 2 ? (int)fuse_value_shape(g, w)[2] : 1;
  kernel[1] = (int)fuse_value_shape(g, w)[nd + 1];
  a.groups = (int)fuse__onnx_attr_int(n, "group", 1);
  if (a.groups < 1) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "group must be >= 1"), FUSE_NONE;
  if (!fuse__onnx_spatial_ints(ld, n, "strides", nd, 1, a.strides, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "dilations", nd, 1, a.dilation, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "pads", nd, 2, a.padding, 0, 0) ||
      !fuse__onnx_auto_pad(ld, n, x, kernel, a.strides, a.dilation, a.padding))
    return FUSE_NONE;
  y = fuse_conv2d(g, x, w, &a);
  if (y != FUSE_NONE && fuse__onnx_has_in(n, 2)) { /* bias: add(conv, reshape(B, [1,K,1,1])) */
    int64_t shape[4];
    fuse_value b = fuse__onnx_value(ld, n->in[2]);
    if (b == FUSE_NONE) return FUSE_NONE;
    shape[0] = 1;
    shape[1] = fuse_value_shape(g, y)[1];
    shape[2] = shape[3] = 1;
    y = fuse_add(g, y, fuse_reshape(g, b, nd + 2, shape));
  }
  return y;
}

static fuse_value fuse__onnx_pool(fuse__onnx *ld, const fuse__onode *n, int op) {
  fuse_pool2d_attrs a;
  int64_t kernel[8];
  int nd;
  fuse_value x = fuse__onnx_value(ld, n->in[0]);
  if (x == FUSE_NONE || fuse__onnx_rank4(ld, x) == FUSE_NONE) return FUSE_NONE;
  if (n->num_out > 1 && n->out[1].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "the Indices output is not supported"), FUSE_NONE;
  memset(&a, 0, sizeof a);
  nd = fuse_value_rank(ld->g, x) - 2;
  if (fuse__onnx_attr_ints(n, "kernel_shape", kernel, 8) < 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "kernel_shape is required"), FUSE_NONE;
  if (!fuse__onnx_spatial_ints(ld, n, "kernel_shape", nd, 1, a.kernel, 0, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "strides", nd, 1, a.strides, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "dilations", nd, 1, a.dilation, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "pads", nd, 2, a.padding, 0, 0) ||
      !fuse__onnx_auto_pad(ld, n, x, a.kernel, a.strides, a.dilation, a.padding))
    return FUSE_NONE;
  a.ceil_mode = (int)fuse__onnx_attr_int(n, "ceil_mode", 0);
  a.count_include_pad = (int)fuse__onnx_attr_int(n, "count_include_pad", 0);
  if (fuse__onnx_attr_int(n, "storage_order", 0) != 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "storage_order=1 is not supported"), FUSE_NONE;
  return fuse__pool(ld->g, op, x, &a);
}

/* Gemm: alpha * A' B' + beta * C, with A' / B' transposed when asked (constants only). */
static fuse_value fuse__onnx_transposed(fuse__onnx *ld, fuse_value v, float scale) {
  fuse_graph *g = ld->g;
  const fuse__node *n = &g->nodes[v];
  int64_t shape[2], r, c, R, C;
  fuse_value t;
  if (n->op != FUSE__OP_CONST) return fuse_transpose(g, v, NULL); /* at run time; unscaled */
  R = n->shape[0];
  C = n->shape[1];
  shape[0] = C;
  shape[1] = R;
  (void)r, (void)c;
  t = fuse__constant_uninit(g, 2, shape);
  if (t == FUSE_NONE) return FUSE_NONE;
  fuse__transpose_scaled(g->nodes[t].data, g->nodes[v].data, R, C, scale, &g->alloc);
  return t;
}

static fuse_value fuse__onnx_scaled(fuse__onnx *ld, fuse_value v, float scale) {
  fuse_graph *g = ld->g;
  const fuse__node *n = &g->nodes[v];
  int64_t i, count;
  fuse_value t;
  if (scale == 1) return v;
  if (n->op != FUSE__OP_CONST) return fuse_mul(g, v, fuse_scalar(g, scale));
  t = fuse_constant(g, NULL, n->rank, n->shape, g->nodes[v].data);
  if (t == FUSE_NONE) return FUSE_NONE;
  count = fuse__numel(g->nodes[t].rank, g->nodes[t].shape);
  for (i = 0; i < count; i++) g->nodes[t].data[i] *= scale;
  return t;
}

static fuse_value fuse__onnx_gemm(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  float alpha = fuse__onnx_attr_float(n, "alpha", 1), beta = fuse__onnx_attr_float(n, "beta", 1);
  int64_t ta = fuse__onnx_attr_int(n, "transA", 0), tb = fuse__onnx_attr_int(n, "transB", 0);
  fuse_value a, b, y;
  int scaled;
  if (n->num_in < 2) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Gemm needs A and B"), FUSE_NONE;
  a = fuse__onnx_value(ld, n->in[0]);
  if (a == FUSE_NONE) return FUSE_NONE;
  /* a transposed weight straight from the file: it is never held twice */
  b = tb ? fuse__onnx_transposed_tensor(ld, n->in[1], alpha) : FUSE_NONE;
  if (b != FUSE_NONE) {
    if (fuse_value_rank(g, a) != 2)
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "Gemm's A and B must be 2-D"), FUSE_NONE;
    if (ta && (a = fuse__onnx_transposed(ld, a, 1)) == FUSE_NONE) return FUSE_NONE;
    scaled = 1;
  } else {
    if (g->status != FUSE_OK || (b = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE) return FUSE_NONE;
    if (fuse_value_rank(g, a) != 2 || fuse_value_rank(g, b) != 2)
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "Gemm's A and B must be 2-D"), FUSE_NONE;
    if (ta && (a = fuse__onnx_transposed(ld, a, 1)) == FUSE_NONE) return FUSE_NONE;
    scaled = g->nodes[b].op == FUSE__OP_CONST; /* alpha folds into a constant B */
    if (tb) b = fuse__onnx_transposed(ld, b, alpha);
    else if (scaled) b = fuse__onnx_scaled(ld, b, alpha);
  }
  if (b == FUSE_NONE) return FUSE_NONE;
  y = fuse_matmul(g, a, b);
  if (alpha != 1 && !scaled) y = fuse_mul(g, y, fuse_scalar(g, alpha));
  if (fuse__onnx_has_in(n, 2) && beta != 0) {
    fuse_value c = fuse__onnx_value(ld, n->in[2]);
    if (c == FUSE_NONE) return FUSE_NONE;
    y = fuse_add(g, y, fuse__onnx_scaled(ld, c, beta));
  }
  return y;
}

static fuse_value fuse__onnx_clip(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value x = fuse__onnx_value(ld, n->in[0]), bound[2];
  float v[2];
  int k, is_const[2];
  if (x == FUSE_NONE) return FUSE_NONE;
  v[0] = -HUGE_VALF;
  v[1] = HUGE_VALF;
  is_const[0] = is_const[1] = 1;
  bound[0] = bound[1] = FUSE_NONE;
  if (ld->opset < 11) {
    v[0] = fuse__onnx_attr_float(n, "min", -HUGE_VALF);
    v[1] = fuse__onnx_attr_float(n, "max", HUGE_VALF);
  } else {
    for (k = 0; k < 2; k++) {
      if (!fuse__onnx_has_in(n, k + 1)) continue;
      if (fuse__onnx_scalar(ld, n->in[k + 1], &v[k])) continue;
      is_const[k] = 0; /* a graph input or computed: maximum / minimum with the tensor */
      if ((bound[k] = fuse__onnx_value(ld, n->in[k + 1])) == FUSE_NONE) return FUSE_NONE;
      if (fuse__numel(fuse_value_rank(g, bound[k]), fuse_value_shape(g, bound[k])) != 1)
        return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "Clip's min / max must be scalars"), FUSE_NONE;
    }
  }
  if (v[0] != v[0] || v[1] != v[1]) /* as fuse_clip: a NaN bound is no bound to apply */
    return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "Clip's min / max is NaN"), FUSE_NONE;
  if (is_const[0] && is_const[1] && v[0] <= v[1]) return fuse_clip(g, x, v[0], v[1]);
  /* min > max (ONNX then gives max everywhere) or tensor bounds: min(max(x, lo), hi) */
  if (!is_const[0]) x = fuse_maximum(g, x, bound[0]);
  else if (v[0] > -HUGE_VALF) x = fuse_maximum(g, x, fuse_scalar(g, v[0]));
  if (!is_const[1]) x = fuse_minimum(g, x, bound[1]);
  else if (v[1] < HUGE_VALF) x = fuse_minimum(g, x, fuse_scalar(g, v[1]));
  return x;
}

static fuse_value fuse__onnx_reshape(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value x = fuse__onnx_value(ld, n->in[0]);
  int64_t shape[FUSE_MAX_RANK];
  int count, i, allowzero = (int)fuse__onnx_attr_int(n, "allowzero", 0);
  if (x == FUSE_NONE) return FUSE_NONE;
  if (n->num_in < 2 || !fuse__onnx_ints(ld, n->in[1], shape, FUSE_MAX_RANK, &count))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                        "the target shape must be a constant int64 tensor of at most 8 values"),
           FUSE_NONE;
  for (i = 0; i < count; i++)
    if (shape[i] == 0) {
      if (allowzero)
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "allowzero makes a zero-sized tensor"), FUSE_NONE;
      if (i >= fuse_value_rank(g, x))
        return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "a 0 in the target shape has no input dimension to copy"), FUSE_NONE;
      shape[i] = fuse_value_shape(g, x)[i];
    }
  return fuse_reshape(g, x, count, shape);
}

static fuse_value fuse__onnx_softmax(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value x = fuse__onnx_value(ld, n->in[0]), y;
  int rank, axis;
  int64_t shape[2];
  if (x == FUSE_NONE) return FUSE_NONE;
  rank = fuse_value_rank(g, x);
  axis = (int)fuse__onnx_attr_int(n, "axis", ld->opset < 13 ? 1 : -1);
  if (ld->opset >= 13 || axis == rank - 1 || axis == -1) return fuse_softmax(g, x, axis);
  /* before opset 13: softmax over the input flattened to 2-D at axis */
  if (axis < -rank || axis > rank)
    return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "Softmax axis is out of range"), FUSE_NONE;
  if (axis < 0) axis += rank;
  shape[0] = fuse__numel(axis, fuse_value_shape(g, x));
  shape[1] = fuse__numel(rank - axis, fuse_value_shape(g, x) + axis);
  y = fuse_softmax(g, fuse_reshape(g, x, 2, shape), 1);
  {
    int64_t back[FUSE_MAX_RANK];
    memcpy(back, fuse_value_shape(g, x), (size_t)rank * sizeof(int64_t));
    return fuse_reshape(g, y, rank, back);
  }
}

/* A list of floats (AttributeProto field 7, packed or not); the count, -1 if absent or
   malformed. */
static int fuse__onnx_attr_floats(const fuse__onode *n, const char *name, float *out, int max) {
  fuse__oattr a;
  fuse__pb b;
  uint32_t f, w;
  int count = 0;
  if (!fuse__onnx_attr(n, name, &a)) return -1;
  b = fuse__proto_of(a.msg);
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s;
    size_t i;
    if (f == 7 && w == 2) {
      if (!fuse__proto_bytes(&b, &s) || s.n % 4) return -1;
    } else if (f == 7 && w == 5) {
      if (b.end - b.p < 4) return -1;
      s.p = b.p;
      s.n = 4;
      b.p += 4;
    } else {
      if (!fuse__proto_skip(&b, w)) return -1;
      continue;
    }
    for (i = 0; i < s.n; i += 4) {
      if (count == max) return -1;
      out[count++] = fuse__f32(fuse__le32(s.p + i));
    }
  }
  return b.p == b.end ? count : -1;
}

/* Constant: value (a tensor, read when first used), or value_float / value_floats /
   value_int / value_ints (known at once: they fold). */
static fuse_value fuse__onnx_constant(fuse__onnx *ld, const fuse__onode *n) {
  fuse__oattr a;
  fuse__oval o;
  memset(&o, 0, sizeof o);
  if (fuse__onnx_attr(n, "value", &a) && a.t.n) {
    char why[32];
    o.kind = FUSE__OV_TENSOR;
    if (!fuse__onnx_tensor_meta(a.t, &o.t, why, sizeof why))
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "its value tensor is malformed"), FUSE_NONE;
    o.t.name = n->out[0];
    if (!fuse__onnx_bind(ld, n->out[0], &o))
      return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), FUSE_NONE;
    return -2; /* bound as a tensor: no graph value yet */
  } else {
    static const char *const names[4] = {"value_float", "value_floats", "value_int", "value_ints"};
    int64_t ints[256], dims[1];
    float floats[256];
    int k, count = -1;
    fuse__known kn;
    for (k = 0; k < 4 && count < 0; k++) {
      if (!fuse__onnx_attr(n, names[k], &a)) continue;
      if (k == 0 && a.has_f) floats[0] = a.f, count = 1;
      else if (k == 2 && a.has_i) ints[0] = a.i, count = 1;
      else if (k == 1) count = fuse__onnx_attr_floats(n, names[k], floats, 256);
      else if (k == 3) count = fuse__onnx_attr_ints(n, names[k], ints, 256);
      if (count < 1)
        return fuse__onnx_fail(ld, count == 0 ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_PARSE,
                               count == 0 ? "an empty value list makes a zero-sized tensor"
                                          : "its value is malformed (or a list of more than 256)"),
               FUSE_NONE;
      dims[0] = count;
      if (!fuse__known_alloc(ld, &kn, k < 2 ? FUSE__DT_FLOAT : FUSE__DT_INT64, k == 0 || k == 2 ? 0 : 1, dims))
        return FUSE_NONE;
      if (k < 2) memcpy(kn.f, floats, (size_t)count * sizeof(float));
      else memcpy(kn.i, ints, (size_t)count * sizeof(int64_t));
      return fuse__onnx_bind_known(ld, n->out[0], &kn) ? -2 : FUSE_NONE;
    }
  }
  return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                         "a Constant needs value, value_float(s) or value_int(s) (sparse and "
                         "string values are not supported)"),
         FUSE_NONE;
}

/* Concat of all its inputs along `axis`. */
static fuse_value fuse__onnx_concat(fuse__onnx *ld, const fuse__onode *n) {
  fuse_value ins[16];
  fuse__oattr a;
  int k;
  if (!fuse__onnx_attr(n, "axis", &a) || !a.has_i)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Concat needs axis"), FUSE_NONE;
  for (k = 0; k < n->num_in; k++)
    if ((ins[k] = fuse__onnx_value(ld, n->in[k])) == FUSE_NONE) return FUSE_NONE;
  return fuse_concat(ld->g, n->num_in, ins, (int)a.i);
}

/* BatchNormalization in inference mode (x, scale, bias, mean, var). */
static fuse_value fuse__onnx_batch_norm(fuse__onnx *ld, const fuse__onode *n) {
  fuse_value in[5];
  int k;
  if (n->num_in != 5) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs 5 inputs"), FUSE_NONE;
  if (fuse__onnx_attr_int(n, "training_mode", 0) != 0 || (n->num_out > 1 && n->out[1].n))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "training mode (running statistics outputs) is not supported"), FUSE_NONE;
  for (k = 0; k < 5; k++)
    if ((in[k] = fuse__onnx_value(ld, n->in[k])) == FUSE_NONE) return FUSE_NONE;
  return fuse_batch_norm(ld->g, in[0], in[1], in[2], in[3], in[4],
                         fuse__onnx_attr_float(n, "epsilon", 1e-5f));
}

/* Transpose of x by `perm` (none: the axes reversed). */
static fuse_value fuse__onnx_transpose(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  int64_t perm[FUSE_MAX_RANK];
  int p[FUSE_MAX_RANK], count = fuse__onnx_attr_ints(n, "perm", perm, FUSE_MAX_RANK), i;
  if (count < 0) return fuse_transpose(ld->g, x, NULL);
  if (count != fuse_value_rank(ld->g, x))
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "perm does not match the input's rank"), FUSE_NONE;
  for (i = 0; i < count; i++) p[i] = perm[i] < 0 || perm[i] >= FUSE_MAX_RANK ? -1 : (int)perm[i];
  return fuse_transpose(ld->g, x, p);
}

/* Dropout in inference: x itself, when neither its mask nor training mode is asked for. */
static fuse_value fuse__onnx_dropout(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  float ratio = 0.5f;
  int64_t mode[1] = {0};
  int count;
  if (fuse__onnx_has_in(n, 2) && !fuse__onnx_ints(ld, n->in[2], mode, 1, &count))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "Dropout's training_mode must be known at load"),
           FUSE_NONE;
  /* inference: x itself; training with a ratio of 0 drops nothing either */
  if (mode[0] != 0 && !(fuse__onnx_has_in(n, 1) && fuse__onnx_scalar(ld, n->in[1], &ratio) && ratio == 0))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "training-mode Dropout is not supported"), FUSE_NONE;
  if (n->num_out > 1 && n->out[1].n) { /* nothing dropped: the mask is all true */
    fuse__known mask;
    int64_t i;
    if (!fuse__known_alloc(ld, &mask, FUSE__DT_BOOL, ld->g->nodes[x].rank, ld->g->nodes[x].shape))
      return FUSE_NONE;
    for (i = 0; i < mask.count; i++) mask.i[i] = 1;
    if (!fuse__onnx_bind_known(ld, n->out[1], &mask)) return FUSE_NONE;
  }
  return x;
}

/* ==== end src/onnx_ops.c ==== */
/* ==== begin src/onnx_fold.c ==== */
/* ------------------------------------------------------- onnx: load-time folding -- */
/* PyTorch's exporter writes shape arithmetic into the graph: Shape -> Gather -> Unsqueeze ->
   Concat -> Reshape for a view, ConstantOfShape / Slice / Range for pads, masks and initial
   states, an If on a constant condition. Every such node whose inputs the loader knows (an
   initializer, a Constant, an earlier folded node, or for Shape / Size just the input's shape,
   which is always static here) is evaluated here, over int64, int32, bool and float tensors,
   and never reaches the graph. Integer and bool results stay in the loader: one that would be
   used as float32 data at run time is an error naming the node (fuse__onnx_value). */

/* Operators folded when their inputs are known. The first group exists only here (it has no
   float32 graph operator): on run-time values it is refused by name. */
static const char *const fuse__onnx_fold_only_ops[] = {
    "Shape", "Size", "Cast", "CastLike", "ConstantOfShape", "Range", "Equal", "Less",
    "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Mod", "If",
    "ScatterND", NULL};
static const char *const fuse__onnx_fold_also_ops[] = {
    "Identity", "Reshape", "Squeeze", "Unsqueeze", "Concat", "Gather", "Slice", "Expand", "Tile",
    "Where", "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Floor", "Ceil", "Sqrt", "Max", "Min",
    "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "Transpose", "Flatten", NULL};

static int fuse__onnx_in_list(fuse__slice op, const char *const *list) {
  int i;
  for (i = 0; list[i]; i++)
    if (fuse__slice_is(op, list[i])) return 1;
  return 0;
}

static double fuse__kget(const fuse__known *k, int64_t i) { return k->f ? k->f[i] : (double)k->i[i]; }

/* The element of `in` that broadcasts to element `at` of an output of shape (rank, dims). */
static int64_t fuse__kat(const fuse__known *in, int rank, const int64_t *dims, int64_t at) {
  int64_t off = 0, stride = 1;
  int d;
  for (d = rank - 1; d >= 0; d--) {
    int64_t c = at % dims[d];
    int e = d - (rank - in->rank);
    at /= dims[d];
    if (e < 0) break;
    if (in->dims[e] > 1) off += c * stride;
    stride *= in->dims[e];
  }
  return off;
}

/* An axis attribute or input value in range for rank r; -1 (and the error) if not. */
static int fuse__onnx_axis(fuse__onnx *ld, int64_t axis, int r) {
  if (axis < -r || axis >= (r ? r : 1))
    return fuse__onnx_failf(ld, FUSE_ERROR_INVALID_ARGUMENT, "axis %D is out of range for rank %d",
                            axis, r), -1;
  return (int)(axis < 0 ? axis + r : axis);
}

/* An int list given as attribute `attr` (before opset `since`) or as input `input`; count -1
   when absent. 0 on error. */
static int fuse__onnx_int_list(fuse__onnx *ld, const fuse__onode *n, const char *attr, int input,
                               int since, int64_t *out, int *count) {
  *count = -1;
  if (ld->opset < since) {
    *count = fuse__onnx_attr_ints(n, attr, out, FUSE_MAX_RANK * 2);
    return 1;
  }
  if (!fuse__onnx_has_in(n, input)) return 1;
  if (!fuse__onnx_ints(ld, n->in[input], out, FUSE_MAX_RANK * 2, count))
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "input %d (%s) must be an integer list known at load", input + 1, attr), 0;
  return 1;
}

/* The element-wise binary ops folded (Max and Min also take more than two operands); their
   index is the op fuse__fold_binary computes. */
static const char *const fuse__fold_binary_ops[] = {
    "Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Equal", "Less", "LessOrEqual", "Greater",
    "GreaterOrEqual", "And", "Or", "Xor", NULL};

/* Element-wise binary ops with broadcasting; comparisons and logic give bool. */
static int fuse__fold_binary(fuse__onnx *ld, const fuse__onode *n, const fuse__known *a,
                             const fuse__known *b, fuse__known *y) {
  const char *const *ops = fuse__fold_binary_ops;
  int64_t dims[FUSE_MAX_RANK], e;
  int rank, op, ints = a->dtype != FUSE__DT_FLOAT && b->dtype != FUSE__DT_FLOAT;
  int fmod_ = (int)fuse__onnx_attr_int(n, "fmod", 0);
  for (op = 0; ops[op] && !fuse__slice_is(n->op, ops[op]); op++) {
  }
  if (!fuse__broadcast(a->rank, a->dims, b->rank, b->dims, &rank, dims))
    return fuse__onnx_failf(ld, FUSE_ERROR_SHAPE, "shapes %S and %S do not broadcast", a->rank,
                            a->dims, b->rank, b->dims), 0;
  if (!fuse__known_alloc(ld, y, op >= 7 ? FUSE__DT_BOOL : ints ? a->dtype : FUSE__DT_FLOAT, rank, dims))
    return 0;
  for (e = 0; e < y->count; e++) {
    int64_t ia = fuse__kat(a, rank, dims, e), ib = fuse__kat(b, rank, dims, e);
    double x = fuse__kget(a, ia), z = fuse__kget(b, ib), r = 0;
    if (ints && op <= 6) {
      int64_t p = a->i[ia], q = b->i[ib], v = 0;
      if ((op == 3 || op == 4) && q == 0)
        return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "integer division by zero"), 0;
      switch (op) {
      case 0: v = (int64_t)((uint64_t)p + (uint64_t)q); break;
      case 1: v = (int64_t)((uint64_t)p - (uint64_t)q); break;
      case 2: v = (int64_t)((uint64_t)p * (uint64_t)q); break;
      case 3: v = (p == INT64_MIN && q == -1) ? p : p / q; break; /* truncates, as ONNX Runtime */
      case 4:
        v = (p == INT64_MIN && q == -1) ? 0 : p % q;
        if (!fmod_ && v != 0 && ((v < 0) != (q < 0))) v += q; /* the divisor's sign */
        break;
      case 5: v = p > q ? p : q; break;
      default: v = p < q ? p : q; break;
      }
      y->i[e] = v;
      continue;
    }
    switch (op) {
    case 0: r = x + z; break;
    case 1: r = x - z; break;
    case 2: r = x * z; break;
    case 3: r = x / z; break;
    case 4: r = fmod(x, z); if (!fmod_ && r != 0 && ((r < 0) != (z < 0))) r += z; break;
    case 5: r = x > z || x != x ? x : z; break;
    case 6: r = x < z || x != x ? x : z; break;
    case 7: r = x == z; break;
    case 8: r = x < z; break;
    case 9: r = x <= z; break;
    case 10: r = x > z; break;
    case 11: r = x >= z; break;
    case 12: r = x != 0 && z != 0; break;
    case 13: r = x != 0 || z != 0; break;
    default: r = (x != 0) != (z != 0); break;
    }
    if (y->f) y->f[e] = (float)r;
    else y->i[e] = (int64_t)r;
  }
  return 1;
}

/* Not, Neg, Abs, Floor, Ceil, Sqrt, Cast; CastLike when `to` is its second input's type
   (else -1). */
static int fuse__fold_unary(fuse__onnx *ld, const fuse__onode *n, const fuse__known *x, int to,
                            fuse__known *y) {
  int64_t e;
  if (to < 0) to = x->dtype;
  if (fuse__slice_is(n->op, "Not")) to = FUSE__DT_BOOL;
  if (fuse__slice_is(n->op, "Sqrt")) to = FUSE__DT_FLOAT;
  if (fuse__slice_is(n->op, "Cast")) {
    to = (int)fuse__onnx_attr_int(n, "to", 0);
    if (!fuse__dt_size(to))
      return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED, "Cast to %s is not supported",
                              fuse__dt_name(to)), 0;
  }
  if (!fuse__known_alloc(ld, y, to, x->rank, x->dims)) return 0;
  for (e = 0; e < x->count; e++) {
    double v = fuse__kget(x, e);
    int64_t iv = x->i ? x->i[e] : 0;
    if (fuse__slice_is(n->op, "Neg")) v = -v, iv = (int64_t)(0 - (uint64_t)iv);
    else if (fuse__slice_is(n->op, "Abs")) v = fabs(v), iv = iv < 0 ? (int64_t)(0 - (uint64_t)iv) : iv;
    else if (fuse__slice_is(n->op, "Floor")) v = floor(v);
    else if (fuse__slice_is(n->op, "Ceil")) v = ceil(v);
    else if (fuse__slice_is(n->op, "Sqrt")) v = sqrt(v);
    else if (fuse__slice_is(n->op, "Not")) iv = v == 0;
    if (y->f) {
      y->f[e] = (float)v;
    } else if (x->i) {
      y->i[e] = to == FUSE__DT_BOOL ? iv != 0 : iv;
    } else { /* float to integer: truncation, as C (and ONNX Runtime) */
      y->i[e] = to == FUSE__DT_BOOL ? v != 0
                : v != v      ? 0
                : v >= 9.2e18 ? INT64_MAX
                : v <= -9.2e18 ? INT64_MIN
                               : (int64_t)v;
    }
  }
  return 1;
}

/* Copies the elements of x at the source offsets `src` (one per output element). */
static int fuse__fold_pick(fuse__onnx *ld, const fuse__known *x, int rank, const int64_t *dims,
                           fuse__known *y, int64_t (*offset)(const void *ctx, int64_t at),
                           const void *ctx) {
  int64_t e;
  if (!fuse__known_alloc(ld, y, x->dtype, rank, dims)) return 0;
  for (e = 0; e < y->count; e++) {
    int64_t o = offset(ctx, e);
    if (y->f) y->f[e] = x->f[o];
    else y->i[e] = x->i[o];
  }
  return 1;
}

typedef struct fuse__fold_map {
  const fuse__known *x;
  int rank;
  int64_t dims[FUSE_MAX_RANK];
  int64_t start[FUSE_MAX_RANK], step[FUSE_MAX_RANK]; /* slice */
  int axis;                                          /* gather */
  const fuse__known *idx;
  int perm[FUSE_MAX_RANK];                           /* transpose */
} fuse__fold_map;

static int64_t fuse__fold_bcast(const void *ctx, int64_t at) {
  const fuse__fold_map *m = (const fuse__fold_map *)ctx;
  return fuse__kat(m->x, m->rank, m->dims, at);
}

static int64_t fuse__fold_tile(const void *ctx, int64_t at) {
  const fuse__fold_map *m = (const fuse__fold_map *)ctx;
  int64_t off = 0, stride = 1;
  int d;
  for (d = m->rank - 1; d >= 0; d--) {
    off += (at % m->dims[d]) % m->x->dims[d] * stride;
    at /= m->dims[d];
    stride *= m->x->dims[d];
  }
  return off;
}

static int64_t fuse__fold_slice(const void *ctx, int64_t at) {
  const fuse__fold_map *m = (const fuse__fold_map *)ctx;
  int64_t off = 0, stride = 1;
  int d;
  for (d = m->rank - 1; d >= 0; d--) {
    off += (m->start[d] + at % m->dims[d] * m->step[d]) * stride;
    at /= m->dims[d];
    stride *= m->x->dims[d];
  }
  return off;
}

static int64_t fuse__fold_gather(const void *ctx, int64_t at) {
  const fuse__fold_map *m = (const fuse__fold_map *)ctx;
  int64_t inner = 1, nidx = m->idx->count, outer_i, j, k, idx;
  int d;
  for (d = m->axis + 1; d < m->x->rank; d++) inner *= m->x->dims[d];
  k = at % inner;
  j = at / inner % nidx;
  outer_i = at / inner / nidx;
  idx = m->idx->i[j];
  if (idx < 0) idx += m->x->dims[m->axis];
  return (outer_i * m->x->dims[m->axis] + idx) * inner + k;
}

static int64_t fuse__fold_transpose(const void *ctx, int64_t at) {
  const fuse__fold_map *m = (const fuse__fold_map *)ctx;
  int64_t coord[FUSE_MAX_RANK], off = 0;
  int d;
  for (d = m->rank - 1; d >= 0; d--) {
    coord[d] = at % m->dims[d];
    at /= m->dims[d];
  }
  {
    int64_t stride[FUSE_MAX_RANK], s = 1;
    for (d = m->x->rank - 1; d >= 0; d--) stride[d] = s, s *= m->x->dims[d];
    for (d = 0; d < m->rank; d++) off += coord[d] * stride[m->perm[d]];
  }
  return off;
}

/* Slice's per-axis start and step, clamped as ONNX does, and the output size. */
static int fuse__fold_slice_setup(fuse__onnx *ld, const fuse__onode *n, const fuse__known *x,
                                  fuse__fold_map *m) {
  int64_t starts[16], ends[16], axes[16], steps[16];
  int ns, ne, na = -1, nst = -1, i;
  m->x = x;
  m->rank = x->rank;
  for (i = 0; i < x->rank; i++) m->start[i] = 0, m->step[i] = 1, m->dims[i] = x->dims[i];
  if (ld->opset < 10) {
    ns = fuse__onnx_attr_ints(n, "starts", starts, 16);
    ne = fuse__onnx_attr_ints(n, "ends", ends, 16);
    na = fuse__onnx_attr_ints(n, "axes", axes, 16);
  } else if (!fuse__onnx_ints(ld, n->in[1], starts, 16, &ns) ||
             !fuse__onnx_ints(ld, n->in[2], ends, 16, &ne) ||
             (fuse__onnx_has_in(n, 3) && !fuse__onnx_ints(ld, n->in[3], axes, 16, &na)) ||
             (fuse__onnx_has_in(n, 4) && !fuse__onnx_ints(ld, n->in[4], steps, 16, &nst))) {
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "starts, ends, axes and steps must be known at load"), 0;
  }
  if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns) || ns > x->rank)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "starts, ends, axes and steps differ in length"), 0;
  for (i = 0; i < ns; i++) {
    int ax = fuse__onnx_axis(ld, na >= 0 ? axes[i] : i, x->rank);
    int64_t dim, st, en, step = nst >= 0 ? steps[i] : 1;
    if (ax < 0) return 0;
    dim = x->dims[ax];
    if (step == 0) return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "a step is 0"), 0;
    st = starts[i] < 0 ? starts[i] + dim : starts[i];
    en = ends[i] < 0 && ends[i] != INT64_MIN ? ends[i] + dim : ends[i];
    if (ends[i] == INT64_MIN) en = -1;
    if (step == INT64_MIN) return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "a step is out of range"), 0;
    if (step > 0) {
      st = st < 0 ? 0 : st > dim ? dim : st;
      en = en < 0 ? 0 : en > dim ? dim : en;
      m->dims[ax] = en > st ? (en - st - 1) / step + 1 : 0;
    } else {
      st = st < 0 ? -1 : st > dim - 1 ? dim - 1 : st;
      en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
      m->dims[ax] = st > en ? (st - en - 1) / -step + 1 : 0;
    }
    m->start[ax] = st;
    m->step[ax] = step;
  }
  return 1;
}

/* Shape / Size: only the input's (static) shape is needed. */
static int fuse__fold_shape(fuse__onnx *ld, const fuse__onode *n, fuse__known *y) {
  int64_t dims[FUSE_MAX_RANK], one = 1, count;
  int rank, i, start = 0, end;
  if (!fuse__onnx_shape_of(ld, n->in[0], &rank, dims))
    return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "input '%s' is not produced by an earlier node",
                            fuse__onnx_cstr(ld, n->in[0])), 0;
  if (fuse__slice_is(n->op, "Size")) {
    if (!fuse__known_alloc(ld, y, FUSE__DT_INT64, 0, &one)) return 0;
    y->i[0] = fuse__numel(rank, dims);
    return 1;
  }
  end = rank;
  {
    int64_t s = fuse__onnx_attr_int(n, "start", 0), e = fuse__onnx_attr_int(n, "end", rank);
    s = s < 0 ? s + rank : s;
    e = e < 0 ? e + rank : e;
    start = (int)(s < 0 ? 0 : s > rank ? rank : s);
    end = (int)(e < 0 ? 0 : e > rank ? rank : e);
  }
  count = end > start ? end - start : 0;
  if (!fuse__known_alloc(ld, y, FUSE__DT_INT64, 1, &count)) return 0;
  for (i = start; i < end; i++) y->i[i - start] = dims[i];
  return 1;
}

static int fuse__fold_reduce(fuse__onnx *ld, const fuse__onode *n, const fuse__known *x,
                             fuse__known *y) {
  int64_t axes[16], dims[FUSE_MAX_RANK], e;
  int na = -1, i, d, rank = 0, red[FUSE_MAX_RANK] = {0};
  int keep = (int)fuse__onnx_attr_int(n, "keepdims", 1);
  int prod = fuse__slice_is(n->op, "ReduceProd"), sum = fuse__slice_is(n->op, "ReduceSum");
  int mx = fuse__slice_is(n->op, "ReduceMax");
  if (!fuse__onnx_int_list(ld, n, "axes", 1, sum ? 13 : 18, axes, &na)) return 0;
  if (na <= 0 && fuse__onnx_attr_int(n, "noop_with_empty_axes", 0)) return *y = *x, 1;
  for (i = 0; i < na; i++) {
    int ax = fuse__onnx_axis(ld, axes[i], x->rank);
    if (ax < 0) return 0;
    red[ax] = 1;
  }
  for (d = 0; d < x->rank; d++) {
    if (na <= 0) red[d] = 1;
    if (!red[d]) dims[rank++] = x->dims[d];
    else if (keep) dims[rank++] = 1;
  }
  if (!fuse__known_alloc(ld, y, x->dtype, rank, dims)) return 0;
  for (e = 0; e < y->count; e++) {
    if (y->f) y->f[e] = prod ? 1.0f : sum ? 0.0f : mx ? -HUGE_VALF : HUGE_VALF;
    else y->i[e] = prod ? 1 : sum ? 0 : mx ? INT64_MIN : INT64_MAX;
  }
  for (e = 0; e < x->count; e++) { /* each input element into its output element */
    int64_t at = e, o = 0, ostride = 1;
    for (d = x->rank - 1; d >= 0; d--) {
      int64_t c = at % x->dims[d];
      at /= x->dims[d];
      if (!red[d]) o += c * ostride, ostride *= x->dims[d];
    }
    if (y->f) {
      float v = x->f[e], *t = &y->f[o];
      *t = prod ? *t * v : sum ? *t + v : mx ? (v > *t ? v : *t) : (v < *t ? v : *t);
    } else {
      int64_t v = x->i[e], *t = &y->i[o];
      *t = prod ? (int64_t)((uint64_t)*t * (uint64_t)v) : sum ? (int64_t)((uint64_t)*t + (uint64_t)v)
           : mx ? (v > *t ? v : *t) : (v < *t ? v : *t);
    }
  }
  return 1;
}

/* Reshape / Squeeze / Unsqueeze / Flatten of a known tensor: new dims, same values. */
static int fuse__fold_reshape(fuse__onnx *ld, const fuse__onode *n, const fuse__known *x,
                              fuse__known *y) {
  int64_t dims[FUSE_MAX_RANK * 2], axes[16], total = 1;
  int rank = 0, d, i, na = -1, infer = -1;
  if (fuse__slice_is(n->op, "Reshape")) {
    int allowzero = (int)fuse__onnx_attr_int(n, "allowzero", 0);
    if (!fuse__onnx_has_in(n, 1) || !fuse__onnx_ints(ld, n->in[1], dims, FUSE_MAX_RANK, &rank))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "the target shape must be known at load"), 0;
    for (d = 0; d < rank; d++) {
      if (dims[d] == 0 && !allowzero && d < x->rank) dims[d] = x->dims[d];
      if (dims[d] == -1 && infer < 0) infer = d;
      else if (dims[d] < 0 || dims[d] > FUSE__MAX_FOLD)
        return fuse__onnx_failf(ld, FUSE_ERROR_INVALID_ARGUMENT, "the target shape has %D", dims[d]), 0;
      else total = total * dims[d] > FUSE__MAX_FOLD ? FUSE__MAX_FOLD + 1 : total * dims[d];
    }
    if (infer >= 0 && total > 0) dims[infer] = x->count / total;
  } else if (fuse__slice_is(n->op, "Flatten")) {
    int ax = (int)fuse__onnx_attr_int(n, "axis", 1);
    ax = ax < 0 ? ax + x->rank : ax;
    if (ax < 0 || ax > x->rank) return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "axis is out of range"), 0;
    dims[0] = fuse__numel(ax, x->dims);
    dims[1] = x->count / dims[0];
    rank = 2;
  } else {
    int sq = fuse__slice_is(n->op, "Squeeze"), out_rank, mark[FUSE_MAX_RANK * 2] = {0};
    if (!fuse__onnx_int_list(ld, n, "axes", 1, 13, axes, &na)) return 0;
    out_rank = sq ? x->rank : x->rank + (na > 0 ? na : 0);
    if (out_rank > FUSE_MAX_RANK || (!sq && na <= 0))
      return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "axes are missing or too many"), 0;
    for (i = 0; i < na; i++) {
      int ax = fuse__onnx_axis(ld, axes[i], out_rank);
      if (ax < 0) return 0;
      mark[ax] = 1;
    }
    for (d = 0, i = 0; d < out_rank; d++) {
      if (sq) {
        if ((na > 0 && mark[d]) || (na <= 0 && x->dims[d] == 1)) continue;
        dims[rank++] = x->dims[d];
      } else {
        dims[rank++] = mark[d] ? 1 : x->dims[i++];
      }
    }
  }
  for (d = 0, total = 1; d < rank && d < FUSE_MAX_RANK; d++)
    total = dims[d] < 0 || total * dims[d] > FUSE__MAX_FOLD ? -1 : total * dims[d];
  if (rank > FUSE_MAX_RANK || total != x->count)
    return fuse__onnx_failf(ld, FUSE_ERROR_SHAPE, "%S cannot take the %D values of %S", rank < 9 ? rank : 8,
                            dims, x->count, x->rank, x->dims), 0;
  *y = *x; /* the same values: share the array */
  y->rank = rank;
  memcpy(y->dims, dims, (size_t)rank * sizeof(int64_t));
  return 1;
}

static int fuse__fold_concat(fuse__onnx *ld, const fuse__onode *n, const fuse__known *xs,
                             fuse__known *y) {
  int64_t dims[FUSE_MAX_RANK], outer, e = 0, o, j;
  int k, ax, to = xs[0].dtype;
  for (k = 0; k < n->num_in; k++)
    if ((xs[k].dtype == FUSE__DT_FLOAT) != (to == FUSE__DT_FLOAT))
      return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "inputs of different types"), 0;
  if ((ax = fuse__onnx_axis(ld, fuse__onnx_attr_int(n, "axis", 0), xs[0].rank)) < 0) return 0;
  memcpy(dims, xs[0].dims, sizeof dims);
  dims[ax] = 0;
  for (k = 0; k < n->num_in; k++) {
    int d;
    for (d = 0; d < xs[0].rank; d++)
      if (xs[k].rank != xs[0].rank || (d != ax && xs[k].dims[d] != xs[0].dims[d]))
        return fuse__onnx_failf(ld, FUSE_ERROR_SHAPE, "input %d has shape %S, input 1 %S", k + 1,
                                xs[k].rank, xs[k].dims, xs[0].rank, xs[0].dims), 0;
    dims[ax] += xs[k].dims[ax];
  }
  if (!fuse__known_alloc(ld, y, to, xs[0].rank, dims)) return 0;
  outer = fuse__numel(ax, dims);
  for (o = 0; o < outer; o++)
    for (k = 0; k < n->num_in; k++) {
      int64_t run = xs[k].count / outer;
      for (j = 0; j < run; j++, e++) {
        if (y->f) y->f[e] = xs[k].f[o * run + j];
        else y->i[e] = xs[k].i[o * run + j];
      }
    }
  return 1;
}

static int fuse__fold_range(fuse__onnx *ld, const fuse__known *xs, fuse__known *y) {
  double st = fuse__kget(&xs[0], 0), lim = fuse__kget(&xs[1], 0), dl = fuse__kget(&xs[2], 0);
  int64_t count, e;
  if (xs[0].count != 1 || xs[1].count != 1 || xs[2].count != 1 || dl == 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "start, limit and delta must be scalars, delta not 0"), 0;
  {
    double c = ceil((lim - st) / dl);
    if (c != c || c > (double)FUSE__MAX_FOLD)
      return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "the range has more than 2^24 elements"), 0;
    count = c < 1 ? 0 : (int64_t)c;
  }
  if (!fuse__known_alloc(ld, y, xs[0].dtype, 1, &count)) return 0;
  for (e = 0; e < count; e++) {
    if (y->f) y->f[e] = (float)(st + (double)e * dl);
    else y->i[e] = xs[0].i[0] + e * xs[2].i[0];
  }
  return 1;
}

static int fuse__fold_constant_of_shape(fuse__onnx *ld, const fuse__onode *n,
                                        const fuse__known *shape, fuse__known *y) {
  fuse__oattr a;
  fuse__otensor t;
  float fv = 0;
  int64_t iv = 0, e;
  int dtype = FUSE__DT_FLOAT;
  if (shape->dtype == FUSE__DT_FLOAT || shape->rank != 1 || shape->count > FUSE_MAX_RANK)
    return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "the shape must be an int64 list of at most 8"), 0;
  if (fuse__onnx_attr(n, "value", &a) && a.t.n) {
    char why[32];
    if (!fuse__onnx_tensor_meta(a.t, &t, why, sizeof why) || !fuse__dt_size(t.dtype) ||
        fuse__onnx_tensor_values(&t, &fv, &iv, 1) != 1)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "its value must be a one-element tensor"), 0;
    dtype = t.dtype;
  }
  if (!fuse__known_alloc(ld, y, dtype, (int)shape->count, shape->i)) return 0;
  for (e = 0; e < y->count; e++) {
    if (y->f) y->f[e] = fv;
    else y->i[e] = iv;
  }
  return 1;
}

/* ScatterND on known tensors (swin's attention masks are written as slice assignments):
   data with updates written at the index tuples; reduction none, add or mul. */
static int fuse__fold_scatter_nd(fuse__onnx *ld, const fuse__onode *n, const fuse__known *xs,
                                 fuse__known *y) {
  const fuse__known *data = &xs[0], *idx = &xs[1], *upd = &xs[2];
  fuse__oattr a;
  int64_t k, tuples, slice = 1, t, j, e;
  int d, mode = 0;
  if (fuse__onnx_attr(n, "reduction", &a) && a.s.n)
    mode = fuse__slice_is(a.s, "add") ? 1 : fuse__slice_is(a.s, "mul") ? 2 : fuse__slice_is(a.s, "none") ? 0 : -1;
  if (mode < 0) return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "reduction must be none, add or mul"), 0;
  if (idx->dtype == FUSE__DT_FLOAT || idx->rank < 1 || (data->dtype == FUSE__DT_FLOAT) != (upd->dtype == FUSE__DT_FLOAT))
    return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "indices must be integers, data and updates of one type"), 0;
  k = idx->dims[idx->rank - 1];
  if (k < 1 || k > data->rank)
    return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "the index tuples do not fit the data's rank"), 0;
  tuples = idx->count / k;
  for (d = (int)k; d < data->rank; d++) slice *= data->dims[d];
  if (upd->count != tuples * slice)
    return fuse__onnx_failf(ld, FUSE_ERROR_SHAPE, "updates %S do not match %D index tuples of %D values",
                            upd->rank, upd->dims, tuples, slice), 0;
  if (!fuse__known_alloc(ld, y, data->dtype, data->rank, data->dims)) return 0;
  for (e = 0; e < data->count; e++) {
    if (y->f) y->f[e] = data->f[e];
    else y->i[e] = data->i[e];
  }
  for (t = 0; t < tuples; t++) {
    int64_t off = 0;
    for (d = 0; d < k; d++) {
      int64_t v = idx->i[t * k + d];
      if (v < 0) v += data->dims[d];
      if (v < 0 || v >= data->dims[d])
        return fuse__onnx_failf(ld, FUSE_ERROR_INVALID_ARGUMENT, "index %D is out of range for %S",
                                idx->i[t * k + d], data->rank, data->dims), 0;
      off = off * data->dims[d] + v;
    }
    off *= slice;
    for (j = 0; j < slice; j++) {
      if (y->f) {
        float u = upd->f[t * slice + j], *o = &y->f[off + j];
        *o = mode == 1 ? *o + u : mode == 2 ? *o * u : u;
      } else {
        int64_t u = upd->i[t * slice + j], *o = &y->i[off + j];
        *o = mode == 1 ? (int64_t)((uint64_t)*o + (uint64_t)u) : mode == 2 ? (int64_t)((uint64_t)*o * (uint64_t)u) : u;
      }
    }
  }
  return 1;
}

static int fuse__onnx_graph_node(fuse__onnx *ld, fuse__slice s);

/* If on a condition known at load: the branch taken is read as part of this graph (its nodes
   see the outer names), its outputs become the If's. */
static int fuse__fold_if(fuse__onnx *ld, const fuse__onode *n, const fuse__known *cond) {
  fuse__oattr a;
  fuse__pb b;
  uint32_t f, w;
  fuse__slice s, outs[64];
  int n_outs = 0, k;
  const fuse__onode *self = ld->node;
  if (cond->count != 1) return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "the condition has more than one element"), 0;
  if (ld->depth >= 16) return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "If branches nest more than 16 deep"), 0;
  if (!fuse__onnx_attr(n, fuse__kget(cond, 0) != 0 ? "then_branch" : "else_branch", &a) || !a.g.n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the branch taken is missing"), 0;
  b = fuse__proto_of(a.g);
  ld->depth++;
  while (ld->g->status == FUSE_OK && fuse__proto_tag(&b, &f, &w)) {
    if (w != 2) {
      if (!fuse__proto_skip(&b, w)) break;
      continue;
    }
    if (!fuse__proto_bytes(&b, &s)) break;
    if (f == 5) { /* an initializer of the branch */
      fuse__oval o;
      char why[32];
      memset(&o, 0, sizeof o);
      o.kind = FUSE__OV_TENSOR;
      if (!fuse__onnx_tensor_meta(s, &o.t, why, sizeof why) || !o.t.name.n)
        return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "an initializer of its branch is malformed"), 0;
      if (!fuse__onnx_bind(ld, o.t.name, &o)) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
    } else if (f == 1) {
      if (!fuse__onnx_graph_node(ld, s)) return 0;
    } else if (f == 12) { /* ValueInfoProto: name = 1 */
      fuse__pb vb = fuse__proto_of(s);
      uint32_t vf, vw;
      fuse__slice name = {NULL, 0};
      while (fuse__proto_tag(&vb, &vf, &vw)) {
        if (vf == 1 && vw == 2) {
          if (!fuse__proto_bytes(&vb, &name)) break;
        } else if (!fuse__proto_skip(&vb, vw)) {
          break;
        }
      }
      if (n_outs == 64) return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "a branch has more than 64 outputs"), 0;
      outs[n_outs++] = name;
    }
  }
  ld->node = self;
  ld->depth--;
  if (ld->g->status != FUSE_OK) return 0;
  if (b.p != b.end) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "its branch is malformed"), 0;
  if (n_outs < n->num_out)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "its branch has fewer outputs than the If"), 0;
  for (k = 0; k < n->num_out; k++) {
    int idx = fuse__onnx_find(ld, outs[k]);
    fuse__oval o;
    if (!n->out[k].n) continue;
    if (idx < 0) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "an output of its branch is made by no node"), 0;
    o = ld->vals[idx];
    if (!fuse__onnx_bind(ld, n->out[k], &o)) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
  }
  return 1;
}

/* Evaluates node n at load when it can: 1 folded (its outputs are bound), 0 not foldable (a
   run-time value among its inputs: the operator converters take it), -1 error. */
static int fuse__onnx_fold(fuse__onnx *ld, const fuse__onode *n) {
  fuse__known xs[8], y, *all = xs;
  fuse__fold_map m;
  int k, idx, ok = 0, nk = n->num_in;
  if (!fuse__onnx_in_list(n->op, fuse__onnx_fold_only_ops) &&
      !fuse__onnx_in_list(n->op, fuse__onnx_fold_also_ops))
    return 0;
  if (fuse__slice_is(n->op, "Shape") || fuse__slice_is(n->op, "Size")) {
    if (n->num_in < 1 || !fuse__fold_shape(ld, n, &y)) return -1;
    return fuse__onnx_bind_known(ld, n->out[0], &y) ? 1 : -1;
  }
  if (n->num_in < 1) return 0;
  /* every input known (large float initializers are left to the graph) */
  for (k = 0; k < n->num_in; k++) {
    if (!fuse__onnx_has_in(n, k)) continue;
    idx = fuse__onnx_find(ld, n->in[k]);
    if (idx < 0) return 0;
    if (ld->vals[idx].kind == FUSE__OV_TENSOR && fuse__dt_is_float(ld->vals[idx].t.dtype) &&
        fuse__numel(ld->vals[idx].t.rank, ld->vals[idx].t.dims) > 4096)
      return 0;
    if (ld->vals[idx].kind != FUSE__OV_TENSOR && ld->vals[idx].kind != FUSE__OV_KNOWN) return 0;
  }
  if (nk > 8) {
    all = (fuse__known *)fuse__onnx_own(ld, (size_t)nk * sizeof(fuse__known));
    if (!all) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), -1;
  }
  for (k = 0; k < nk; k++) {
    memset(&all[k], 0, sizeof all[k]);
    if (fuse__onnx_has_in(n, k) && !fuse__onnx_known_of(ld, n->in[k], &all[k])) return -1;
  }
  if (fuse__slice_is(n->op, "If")) return fuse__fold_if(ld, n, &all[0]) ? 1 : -1;
  memset(&m, 0, sizeof m);
  if (fuse__slice_is(n->op, "Identity")) {
    y = all[0], ok = 1;
  } else if (fuse__slice_is(n->op, "CastLike")) {
    if (nk < 2) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "CastLike needs two inputs"), -1;
    ok = fuse__fold_unary(ld, n, &all[0], all[1].dtype, &y);
  } else if (fuse__onnx_in_list(n->op, fuse__fold_binary_ops)) { /* Max / Min: any count */
    if (nk < 1 || (nk != 2 && !fuse__slice_is(n->op, "Max") && !fuse__slice_is(n->op, "Min")))
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs two inputs"), -1;
    y = all[0];
    ok = 1;
    for (k = 1; k < nk && ok; k++) {
      fuse__known acc = y;
      ok = fuse__fold_binary(ld, n, &acc, &all[k], &y);
    }
  } else if (fuse__slice_is(n->op, "Cast") || fuse__slice_is(n->op, "Not") ||
             fuse__slice_is(n->op, "Neg") || fuse__slice_is(n->op, "Abs") ||
             fuse__slice_is(n->op, "Floor") || fuse__slice_is(n->op, "Ceil") ||
             fuse__slice_is(n->op, "Sqrt")) {
    ok = fuse__fold_unary(ld, n, &all[0], -1, &y);
  } else if (fuse__slice_is(n->op, "Reshape") || fuse__slice_is(n->op, "Squeeze") ||
             fuse__slice_is(n->op, "Unsqueeze") || fuse__slice_is(n->op, "Flatten")) {
    ok = fuse__fold_reshape(ld, n, &all[0], &y);
  } else if (fuse__slice_is(n->op, "Concat")) {
    ok = fuse__fold_concat(ld, n, all, &y);
  } else if (fuse__slice_is(n->op, "Range")) {
    ok = nk == 3 && fuse__fold_range(ld, all, &y);
  } else if (fuse__slice_is(n->op, "ConstantOfShape")) {
    ok = fuse__fold_constant_of_shape(ld, n, &all[0], &y);
  } else if (fuse__slice_is(n->op, "ReduceProd") || fuse__slice_is(n->op, "ReduceSum") ||
             fuse__slice_is(n->op, "ReduceMax") || fuse__slice_is(n->op, "ReduceMin")) {
    ok = fuse__fold_reduce(ld, n, &all[0], &y);
  } else if (fuse__slice_is(n->op, "Where")) {
    if (nk != 3) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Where needs three inputs"), -1;
    {
      int64_t dims[FUSE_MAX_RANK], dims2[FUSE_MAX_RANK], e;
      int r1, r2;
      if (!fuse__broadcast(all[0].rank, all[0].dims, all[1].rank, all[1].dims, &r1, dims) ||
          !fuse__broadcast(r1, dims, all[2].rank, all[2].dims, &r2, dims2))
        return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "the inputs do not broadcast"), -1;
      ok = fuse__known_alloc(ld, &y, all[1].dtype, r2, dims2);
      for (e = 0; ok && e < y.count; e++) {
        int take = fuse__kget(&all[0], fuse__kat(&all[0], r2, dims2, e)) != 0;
        const fuse__known *src = take ? &all[1] : &all[2];
        int64_t o = fuse__kat(src, r2, dims2, e);
        if (y.f) y.f[e] = (float)fuse__kget(src, o);
        else y.i[e] = src->i ? src->i[o] : (int64_t)src->f[o];
      }
    }
  } else if (fuse__slice_is(n->op, "Slice")) {
    ok = fuse__fold_slice_setup(ld, n, &all[0], &m) &&
         fuse__fold_pick(ld, &all[0], m.rank, m.dims, &y, fuse__fold_slice, &m);
  } else if (fuse__slice_is(n->op, "Gather")) {
    int ax, d, r = 0;
    int64_t e;
    if (nk != 2 || all[1].dtype == FUSE__DT_FLOAT)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Gather needs integer indices"), -1;
    if ((ax = fuse__onnx_axis(ld, fuse__onnx_attr_int(n, "axis", 0), all[0].rank)) < 0) return -1;
    for (e = 0; e < all[1].count; e++)
      if (all[1].i[e] < -all[0].dims[ax] || all[1].i[e] >= all[0].dims[ax])
        return fuse__onnx_failf(ld, FUSE_ERROR_INVALID_ARGUMENT, "index %D is out of range for %S axis %d",
                                all[1].i[e], all[0].rank, all[0].dims, ax), -1;
    if (all[0].rank - 1 + all[1].rank > FUSE_MAX_RANK)
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "the result has more than 8 dimensions"), -1;
    for (d = 0; d < ax; d++) m.dims[r++] = all[0].dims[d];
    for (d = 0; d < all[1].rank; d++) m.dims[r++] = all[1].dims[d];
    for (d = ax + 1; d < all[0].rank; d++) m.dims[r++] = all[0].dims[d];
    m.x = &all[0], m.idx = &all[1], m.axis = ax, m.rank = r;
    ok = fuse__fold_pick(ld, &all[0], r, m.dims, &y, fuse__fold_gather, &m);
  } else if (fuse__slice_is(n->op, "Expand") || fuse__slice_is(n->op, "Tile")) {
    int64_t v[FUSE_MAX_RANK];
    int cnt, d;
    if (nk != 2 || all[1].dtype == FUSE__DT_FLOAT || all[1].rank != 1 || all[1].count > FUSE_MAX_RANK)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "its second input must be an int64 list"), -1;
    cnt = (int)all[1].count;
    memcpy(v, all[1].i, (size_t)cnt * sizeof(int64_t));
    m.x = &all[0];
    if (fuse__slice_is(n->op, "Tile")) {
      if (cnt != all[0].rank) return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "repeats must have one entry per axis"), -1;
      for (d = 0; d < cnt; d++) {
        if (v[d] < 0 || v[d] > FUSE__MAX_FOLD)
          return fuse__onnx_failf(ld, FUSE_ERROR_INVALID_ARGUMENT, "a repeat is %D", v[d]), -1;
        m.dims[d] = all[0].dims[d] * v[d];
      }
      m.rank = cnt;
      ok = fuse__fold_pick(ld, &all[0], m.rank, m.dims, &y, fuse__fold_tile, &m);
    } else {
      if (!fuse__broadcast(all[0].rank, all[0].dims, cnt, v, &m.rank, m.dims))
        return fuse__onnx_failf(ld, FUSE_ERROR_SHAPE, "%S does not broadcast to %S", all[0].rank, all[0].dims, cnt, v), -1;
      ok = fuse__fold_pick(ld, &all[0], m.rank, m.dims, &y, fuse__fold_bcast, &m);
    }
  } else if (fuse__slice_is(n->op, "ScatterND")) {
    if (nk != 3) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "ScatterND needs three inputs"), -1;
    ok = fuse__fold_scatter_nd(ld, n, all, &y);
  } else if (fuse__slice_is(n->op, "Transpose")) {
    int64_t perm[FUSE_MAX_RANK];
    int cnt = fuse__onnx_attr_ints(n, "perm", perm, FUSE_MAX_RANK), d;
    m.x = &all[0];
    m.rank = all[0].rank;
    for (d = 0; d < m.rank; d++) {
      m.perm[d] = cnt < 0 ? m.rank - 1 - d : (int)perm[d];
      if (cnt >= 0 && (cnt != m.rank || perm[d] < 0 || perm[d] >= m.rank))
        return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "perm does not fit the input"), -1;
      m.dims[d] = all[0].dims[m.perm[d]];
    }
    ok = fuse__fold_pick(ld, &all[0], m.rank, m.dims, &y, fuse__fold_transpose, &m);
  } else {
    return 0;
  }
  if (!ok) return -1;
  return fuse__onnx_bind_known(ld, n->out[0], &y) ? 1 : -1;
}
/* ==== end src/onnx_fold.c ==== */
/* ==== begin src/onnx_math.c ==== */
/* ------------------------------------------------------------ onnx operators: math -- */
/* element-wise math: unary functions, div, pow, prelu, where, variadic sum / mean / max / min.
   fuse__onnx_convert_math: the node converted (its first output, or -2 when it bound its
   outputs itself), FUSE_NONE on failure, or -3 when the operator is not one of this file. */

/* the ONNX operators this file converts (the loader lists the others as unsupported);
   the order matters: fuse__onnx_convert_math switches on the index */
static const char *const fuse__onnx_math_ops[] = {
    "Sqrt",  "Reciprocal", "Exp",       "Log",         "Neg",       "Abs",   "Floor",
    "Ceil",  "Erf",        "Tanh",      "Softplus",    "HardSwish", "HardSigmoid",
    "LeakyRelu", "Elu",    "Selu",      "Gelu",        "Div",       "Pow",   "PRelu",
    "Where", "Sum",        "Mean",      "Max",         "Min",       NULL};

/* An operand of a math op: a float graph value, or an integer tensor known at load (Pow's
   exponent 2 as int64) made a float constant. */
static fuse_value fuse__onnx_math_operand(fuse__onnx *ld, fuse__slice name) {
  return fuse__onnx_float_operand(ld, name, 0);
}

static fuse_value fuse__onnx_convert_math(fuse__onnx *ld, const fuse__onode *n) {
  static const int unary_op[] = {
      FUSE__OP_SQRT,  FUSE__OP_RECIPROCAL, FUSE__OP_EXP,  FUSE__OP_LOG,
      FUSE__OP_NEG,   FUSE__OP_ABS,        FUSE__OP_FLOOR, FUSE__OP_CEIL,
      FUSE__OP_ERF,   FUSE__OP_TANH,       FUSE__OP_SOFTPLUS, FUSE__OP_HARDSWISH};
  enum { /* indices in fuse__onnx_math_ops after the unary ones */
    HARDSIGMOID = 12, LEAKY_RELU, ELU, SELU, GELU, DIV, POW, PRELU, WHERE, SUM, MEAN, MAX, MIN
  };
  fuse_graph *g = ld->g;
  fuse_value in[3];
  int which, k, need;
  for (which = 0; fuse__onnx_math_ops[which]; which++)
    if (fuse__slice_is(n->op, fuse__onnx_math_ops[which])) break;
  if (!fuse__onnx_math_ops[which]) return -3;
  need = which == WHERE ? 3 : which >= DIV && which <= PRELU ? 2 : 1;
  if (which >= SUM) {
    if (n->num_in < 1)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs at least one input"), FUSE_NONE;
  } else if (n->num_in != need) {
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE,
                           need == 1   ? "it takes one input"
                           : need == 2 ? "it takes two inputs"
                                       : "it takes three inputs (condition, X, Y)"),
           FUSE_NONE;
  }
  for (k = 0; k < n->num_in; k++) { /* the variadic ones fold as they go: any count */
    fuse_value v;
    if (!fuse__onnx_has_in(n, k))
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "an input is left out"), FUSE_NONE;
    v = which == WHERE && k == 0 ? fuse__onnx_mask(ld, n->in[0])
                                 : fuse__onnx_math_operand(ld, n->in[k]);
    if (v == FUSE_NONE) return FUSE_NONE;
    if (which < SUM || k == 0) {
      in[k] = v;
    } else { /* the running value with this one */
      in[1] = v;
      in[0] = which == MAX   ? fuse_max(g, 2, in)
              : which == MIN ? fuse_min(g, 2, in)
                             : fuse_sum(g, 2, in);
      if (in[0] == FUSE_NONE) return FUSE_NONE;
    }
  }
  if (which < HARDSIGMOID) return fuse__math_unary(g, unary_op[which], in[0], 0, 0, 0);
  switch (which) {
  case HARDSIGMOID:
    return fuse_hardsigmoid(g, in[0], fuse__onnx_attr_float(n, "alpha", 0.2f),
                            fuse__onnx_attr_float(n, "beta", 0.5f));
  case LEAKY_RELU: return fuse_leaky_relu(g, in[0], fuse__onnx_attr_float(n, "alpha", 0.01f));
  case ELU: return fuse_elu(g, in[0], fuse__onnx_attr_float(n, "alpha", 1.0f));
  case SELU:
    return fuse_selu(g, in[0], fuse__onnx_attr_float(n, "alpha", 1.67326319217681884765625f),
                     fuse__onnx_attr_float(n, "gamma", 1.05070102214813232421875f));
  case GELU: {
    fuse__oattr a;
    int tanh_approximation = 0;
    if (fuse__onnx_attr(n, "approximate", &a)) {
      if (fuse__slice_is(a.s, "tanh")) tanh_approximation = 1;
      else if (!fuse__slice_is(a.s, "none"))
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                               "approximate must be \"none\" or \"tanh\""),
               FUSE_NONE;
    }
    return fuse_gelu(g, in[0], tanh_approximation);
  }
  case DIV: return fuse_div(g, in[0], in[1]);
  case POW: return fuse_pow(g, in[0], in[1]);
  case PRELU: {
    const fuse__node *nx = &g->nodes[in[0]], *ns = &g->nodes[in[1]];
    if (ld->opset < 7 && ns->rank == 1 && nx->rank >= 2 && ns->shape[0] > 1 &&
        ns->shape[0] == nx->shape[1]) { /* PRelu-6: a slope of C values is per channel */
      int64_t shape[FUSE_MAX_RANK];
      int d;
      shape[0] = ns->shape[0];
      for (d = 1; d < nx->rank - 1; d++) shape[d] = 1;
      in[1] = fuse_reshape(g, in[1], nx->rank - 1, shape);
    }
    return fuse_prelu(g, in[0], in[1]);
  }
  case WHERE: return fuse_where(g, in[0], in[1], in[2]);
  case MEAN: /* fuse_mean: the sum times 1 / n */
    return n->num_in == 1 ? in[0] : fuse_mul(g, in[0], fuse_scalar(g, 1.0f / (float)n->num_in));
  default: return in[0]; /* Sum, Max, Min: folded above */
  }
}
/* ==== end src/onnx_math.c ==== */
/* ==== begin src/onnx_shape.c ==== */
/* ------------------------------------------------------------ onnx operators: shape -- */
/* data movement: slice, gather, expand, tile, split, squeeze / unsqueeze, depth / space, pad, resize.
   fuse__onnx_convert_shape: the node converted (its first output, or -2 when it bound its
   outputs itself), FUSE_NONE on failure, or -3 when the operator is not one of this file. */

/* An int64 list `name`: from input k when the node has it (the input form), else from the
   attribute when `attr` (the older opsets' form). 1: *count values (0 when neither is given),
   0: failed. */
static int fuse__onnx_list(fuse__onnx *ld, const fuse__onode *n, int k, const char *name,
                           int attr, int64_t *out, int max, int *count) {
  *count = 0;
  if (fuse__onnx_has_in(n, k)) {
    if (!fuse__onnx_ints(ld, n->in[k], out, max, count)) {
      char what[120];
      fuse__out o;
      o.buf = what, o.len = 0, o.cap = sizeof what, o.write = NULL, o.user = NULL;
      fuse__puts(&o, "its ");
      fuse__puts(&o, name);
      fuse__puts(&o, " must be a constant 1-D integer tensor (of at most 2 x 8 values)");
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what), 0;
    }
    return 1;
  }
  if (attr && (*count = fuse__onnx_attr_ints(n, name, out, max)) < 0) *count = 0;
  return 1;
}

static fuse_value fuse__onnx_gather(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  int64_t dims[FUSE_MAX_RANK];
  const int64_t *values;
  int rank;
  if (n->num_in < 2 || !fuse__onnx_int_tensor(ld, n->in[1], &rank, dims, &values))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                           "Gather's indices must be an integer tensor known at load"),
           FUSE_NONE;
  return fuse_gather(ld->g, x, (int)fuse__onnx_attr_int(n, "axis", 0), rank, dims, values);
}

/* Squeeze / Unsqueeze: axes as an attribute before opset 13, an input from 13. */
static fuse_value fuse__onnx_squeeze(fuse__onnx *ld, const fuse__onode *n, fuse_value x,
                                     int unsqueeze) {
  int64_t axes[FUSE_MAX_RANK];
  int ax[FUSE_MAX_RANK], count, i;
  if (!fuse__onnx_list(ld, n, 1, "axes", ld->opset < 13, axes, FUSE_MAX_RANK, &count))
    return FUSE_NONE;
  for (i = 0; i < count; i++) ax[i] = axes[i] < -64 || axes[i] > 64 ? 64 : (int)axes[i];
  if (unsqueeze) return fuse_unsqueeze(ld->g, x, count, ax);
  return fuse_squeeze(ld->g, x, count, count ? ax : NULL);
}

static fuse_value fuse__onnx_pad(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  int64_t given[2 * FUSE_MAX_RANK], axes[FUSE_MAX_RANK], pads[2 * FUSE_MAX_RANK];
  int rank = fuse_value_rank(ld->g, x), count, num_axes = rank, i;
  fuse_pad_mode mode = FUSE_PAD_CONSTANT;
  float value = 0;
  fuse__oattr a;
  if (fuse__onnx_attr(n, "mode", &a) && a.s.n) {
    if (fuse__slice_is(a.s, "reflect")) mode = FUSE_PAD_REFLECT;
    else if (fuse__slice_is(a.s, "edge")) mode = FUSE_PAD_EDGE;
    else if (!fuse__slice_is(a.s, "constant"))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "Pad mode is not constant, reflect or edge (wrap is not supported)"),
             FUSE_NONE;
  }
  if (ld->opset < 11) {
    count = fuse__onnx_attr_ints(n, ld->opset < 2 ? "paddings" : "pads", given, 2 * FUSE_MAX_RANK);
    value = fuse__onnx_attr_float(n, "value", 0);
  } else {
    if (!fuse__onnx_list(ld, n, 1, "pads", 0, given, 2 * FUSE_MAX_RANK, &count)) return FUSE_NONE;
    if (fuse__onnx_has_in(n, 2) && !fuse__onnx_scalar(ld, n->in[2], &value))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "Pad's constant_value must be a float constant known at load"),
             FUSE_NONE;
    if (fuse__onnx_has_in(n, 3) &&
        !fuse__onnx_list(ld, n, 3, "axes", 0, axes, FUSE_MAX_RANK, &num_axes))
      return FUSE_NONE;
  }
  if (count != 2 * num_axes)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Pad's pads do not have 2 entries per axis"),
           FUSE_NONE;
  memset(pads, 0, sizeof pads);
  for (i = 0; i < num_axes; i++) {
    int64_t ax = num_axes == rank && !fuse__onnx_has_in(n, 3) ? i : axes[i];
    if (ax < -rank || ax >= rank)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Pad's axes are out of range"), FUSE_NONE;
    if (ax < 0) ax += rank;
    pads[ax] = given[i];
    pads[ax + rank] = given[i + num_axes];
  }
  return fuse_pad(ld->g, x, pads, mode, value);
}

/* Resize (opset 10: x, scales; 11+: x, roi, scales, sizes) and Upsample (7: attribute scales;
   9: input scales). Opset 10 Resize and Upsample map coordinates as `asymmetric` with
   nearest `floor` (PyTorch's nearest; ONNX's reference only defines whole scales there), and
   their output sizes forgive a float32 scale's rounding error. */
static fuse_value fuse__onnx_resize(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  fuse_graph *g = ld->g;
  fuse_resize_attrs ra;
  fuse__oattr a;
  float scales[FUSE_MAX_RANK];
  int64_t sizes[FUSE_MAX_RANK];
  const int64_t *shape = fuse_value_shape(g, x);
  int rank = fuse_value_rank(g, x), count = 0, i, has_sizes = 0;
  int legacy = fuse__slice_is(n->op, "Upsample") || ld->opset < 11;
  memset(&ra, 0, sizeof ra);
  if (fuse__onnx_attr(n, "mode", &a) && a.s.n) {
    if (fuse__slice_is(a.s, "linear") || fuse__slice_is(a.s, "bilinear")) ra.mode = FUSE_RESIZE_LINEAR;
    else if (fuse__slice_is(a.s, "cubic") && !legacy) ra.mode = FUSE_RESIZE_CUBIC;
    else if (!fuse__slice_is(a.s, "nearest"))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "its mode is not nearest, linear or cubic"),
             FUSE_NONE;
  }
  if (legacy) {
    ra.coordinates = FUSE_RESIZE_ASYMMETRIC;
    ra.nearest = FUSE_RESIZE_FLOOR;
  } else {
    static const char *const coords[] = {"half_pixel", "asymmetric", "pytorch_half_pixel",
                                         "align_corners", "half_pixel_symmetric"};
    static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"};
    if (fuse__onnx_attr(n, "coordinate_transformation_mode", &a) && a.s.n) {
      for (i = 0; i < 5 && !fuse__slice_is(a.s, coords[i]); i++) {
      }
      if (i == 5)
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                               fuse__slice_is(a.s, "tf_crop_and_resize")
                                   ? "coordinate_transformation_mode tf_crop_and_resize is not supported"
                                   : "its coordinate_transformation_mode is not supported"),
               FUSE_NONE;
      ra.coordinates = (fuse_resize_coordinates)i;
    }
    if (fuse__onnx_attr(n, "nearest_mode", &a) && a.s.n) {
      for (i = 0; i < 4 && !fuse__slice_is(a.s, nearest[i]); i++) {
      }
      if (i == 4)
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "its nearest_mode is not supported"),
               FUSE_NONE;
      ra.nearest = (fuse_resize_nearest)i;
    }
    ra.cubic_coeff_a = fuse__onnx_attr_float(n, "cubic_coeff_a", -0.75f);
    if (ra.cubic_coeff_a == 0) ra.cubic_coeff_a = 1e-30f; /* 0 means -0.75 to fuse_resize */
    ra.exclude_outside = (int)fuse__onnx_attr_int(n, "exclude_outside", 0);
    if (fuse__onnx_attr_int(n, "antialias", 0) != 0)
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "antialias=1 is not supported"), FUSE_NONE;
    if (fuse__onnx_attr(n, "keep_aspect_ratio_policy", &a) && a.s.n && !fuse__slice_is(a.s, "stretch"))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "keep_aspect_ratio_policy is not supported"),
             FUSE_NONE;
    if (fuse__onnx_attr(n, "axes", &a))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "the axes attribute is not supported"), FUSE_NONE;
  }
  if (!legacy && fuse__onnx_has_in(n, 3) && /* sizes (then scales are empty), unless empty */
      !(fuse__onnx_ints(ld, n->in[3], sizes, FUSE_MAX_RANK, &count) && count == 0)) {
    if (count != rank)
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "its sizes must be an integer tensor known at load with one entry "
                             "per axis"),
             FUSE_NONE;
    has_sizes = 1;
  } else if (fuse__slice_is(n->op, "Upsample") && ld->opset < 9) {
    if (!fuse__onnx_attr(n, "scales", &a))
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Upsample needs scales"), FUSE_NONE;
    { /* a list of floats: field 7, packed or not */
      fuse__pb b = fuse__proto_of(a.msg);
      uint32_t f, w;
      while (fuse__proto_tag(&b, &f, &w)) {
        if (f == 7 && w == 5 && count < FUSE_MAX_RANK && b.end - b.p >= 4) {
          scales[count++] = fuse__f32(fuse__le32(b.p));
          b.p += 4;
        } else if (f == 7 && w == 2) {
          fuse__slice s;
          size_t k;
          if (!fuse__proto_bytes(&b, &s) || s.n % 4 || s.n / 4 + (size_t)count > FUSE_MAX_RANK)
            break;
          for (k = 0; k < s.n; k += 4) scales[count++] = fuse__f32(fuse__le32(s.p + k));
        } else if (!fuse__proto_skip(&b, w)) {
          break;
        }
      }
    }
    if (count != rank)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Upsample's scales do not have one entry per axis"),
             FUSE_NONE;
  } else {
    int k = legacy ? 1 : 2;
    if (!fuse__onnx_has_in(n, k) ||
        !fuse__onnx_floats(ld, n->in[k], scales, FUSE_MAX_RANK, &count) || count != rank)
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "its scales (or sizes) must be known at load with one entry per axis"),
             FUSE_NONE;
  }
  if (!has_sizes)
    for (i = 0; i < rank; i++) {
      double s = (double)shape[i] * (double)scales[i];
      if (!(scales[i] > 0 && s < 4e18))
        return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "its scales must be positive numbers"), FUSE_NONE;
      sizes[i] = (int64_t)floor(s);
      /* the legacy forms: a float32 scale meant as size / input size (PyTorch's opset-9
         export of interpolate(size=...)) may land a rounding error below that size */
      if (legacy && (double)(sizes[i] + 1) - s <= s * 2.5e-7) sizes[i]++;
    }
  return fuse_resize(g, x, sizes, has_sizes ? NULL : scales, &ra);
}

static fuse_value fuse__onnx_convert_shape(fuse__onnx *ld, const fuse__onode *n) {
  static const char *const mine[] = {"Gather", "Expand", "Tile", "Squeeze", "Unsqueeze",
                                     "DepthToSpace", "SpaceToDepth", "Pad", "Resize", "Upsample"};
  fuse_graph *g = ld->g;
  int64_t list[FUSE_MAX_RANK];
  int count, k;
  fuse_value x;
  for (k = 0; k < 10 && !fuse__slice_is(n->op, mine[k]); k++) {
  }
  if (k == 10) return -3;
  if (n->num_in < 1 || !n->in[0].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the node has no input"), FUSE_NONE;
  if ((x = fuse__onnx_value(ld, n->in[0])) == FUSE_NONE) return FUSE_NONE;
  switch (k) {
  case 0: return fuse__onnx_gather(ld, n, x);
  case 1:
  case 2:
    if (n->num_in < 2 || !fuse__onnx_list(ld, n, 1, k == 1 ? "shape" : "repeats", 0, list,
                                          FUSE_MAX_RANK, &count))
      return n->num_in < 2 ? fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs two inputs"), FUSE_NONE
                           : FUSE_NONE;
    if (k == 1) return fuse_expand(g, x, count, list);
    if (count != fuse_value_rank(g, x))
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Tile's repeats do not have one entry per axis"),
             FUSE_NONE;
    return fuse_tile(g, x, list);
  case 3:
  case 4: return fuse__onnx_squeeze(ld, n, x, k == 4);
  case 5:
  case 6: {
    int64_t block = fuse__onnx_attr_int(n, "blocksize", 0);
    fuse__oattr a;
    int crd = 0;
    if (block < 1 || block > 0x7fffffff)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "blocksize must be >= 1"), FUSE_NONE;
    if (k == 6) return fuse_space_to_depth(g, x, (int)block);
    if (fuse__onnx_attr(n, "mode", &a) && a.s.n) {
      crd = fuse__slice_is(a.s, "CRD");
      if (!crd && !fuse__slice_is(a.s, "DCR"))
        return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "DepthToSpace mode is not DCR or CRD"), FUSE_NONE;
    }
    return fuse_depth_to_space(g, x, (int)block, crd);
  }
  case 7: return fuse__onnx_pad(ld, n, x);
  default: return fuse__onnx_resize(ld, n, x);
  }
}

/* the ONNX operators this file converts (the loader lists the others as unsupported) */
static const char *const fuse__onnx_shape_ops[] = {
    "Gather", "Expand", "Tile", "Squeeze", "Unsqueeze", "DepthToSpace", "SpaceToDepth", "Pad",
    "Resize", "Upsample", NULL};
/* ==== end src/onnx_shape.c ==== */
/* ==== begin src/onnx_nn.c ==== */
/* ------------------------------------------------------------ onnx operators: nn -- */
/* reductions, log-softmax, layer / instance / group normalization, einsum.
   fuse__onnx_convert_nn: the node converted (its first output, or -2 when it bound its
   outputs itself), FUSE_NONE on failure, or -3 when the operator is not one of this file. */

/* ReduceMean / Sum / Max / Min / L2 / Prod / SumSquare: axes as an attribute (before opset 18;
   ReduceSum before 13) or as a constant int64 input (after); keepdims default 1; no axes =
   all of them, or none with noop_with_empty_axes. */
static fuse_value fuse__onnx_reduce(fuse__onnx *ld, const fuse__onode *n, fuse_reduce_kind kind) {
  int64_t axes64[FUSE_MAX_RANK];
  int axes[FUSE_MAX_RANK], count = -1, i;
  fuse__oattr a;
  int keepdims = fuse__onnx_attr_int(n, "keepdims", 1) != 0;
  fuse_value x = fuse__onnx_value(ld, n->in[0]);
  if (x == FUSE_NONE) return FUSE_NONE;
  if (fuse__onnx_has_in(n, 1)) {
    if (!fuse__onnx_ints(ld, n->in[1], axes64, FUSE_MAX_RANK, &count))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "its axes input must be a constant int64 tensor of at most 8 values "
                             "(known when the model is loaded)"),
             FUSE_NONE;
  } else if (fuse__onnx_attr(n, "axes", &a) &&
             (count = fuse__onnx_attr_ints(n, "axes", axes64, FUSE_MAX_RANK)) < 0) {
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "its axes attribute has more than 8 values"),
           FUSE_NONE;
  }
  if (count <= 0) {
    if (fuse__onnx_attr_int(n, "noop_with_empty_axes", 0)) return x; /* the identity */
    count = 0;                                                         /* all axes */
  }
  for (i = 0; i < count; i++) {
    if (axes64[i] < -FUSE_MAX_RANK || axes64[i] >= FUSE_MAX_RANK)
      return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "an axis is out of range"), FUSE_NONE;
    axes[i] = (int)axes64[i];
  }
  return fuse_reduce(ld->g, x, kind, count, axes, keepdims);
}

/* LogSoftmax: along axis from opset 13 (default -1); before, over the input flattened to 2-D
   at axis (default 1), as Softmax (fuse__onnx_softmax). */
static fuse_value fuse__onnx_log_softmax(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value x = fuse__onnx_value(ld, n->in[0]), y;
  int64_t shape[2], back[FUSE_MAX_RANK];
  int rank, axis;
  if (x == FUSE_NONE) return FUSE_NONE;
  rank = fuse_value_rank(g, x);
  axis = (int)fuse__onnx_attr_int(n, "axis", ld->opset < 13 ? 1 : -1);
  if (ld->opset >= 13 || axis == rank - 1 || axis == -1) return fuse_log_softmax(g, x, axis);
  if (axis < -rank || axis > rank)
    return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "LogSoftmax axis is out of range"),
           FUSE_NONE;
  if (axis < 0) axis += rank;
  shape[0] = fuse__numel(axis, fuse_value_shape(g, x));
  shape[1] = fuse__numel(rank - axis, fuse_value_shape(g, x) + axis);
  memcpy(back, fuse_value_shape(g, x), (size_t)rank * sizeof(int64_t));
  y = fuse_log_softmax(g, fuse_reshape(g, x, 2, shape), 1);
  return fuse_reshape(g, y, rank, back);
}

/* Scale or bias of a normalization whose shape differs from the one its builder takes but
   holds as many values: reshaped to it. */
static fuse_value fuse__onnx_norm_param(fuse__onnx *ld, fuse_value p, int rank,
                                        const int64_t *want) {
  fuse_graph *g = ld->g;
  if (p == FUSE_NONE) return FUSE_NONE;
  if (fuse_value_rank(g, p) == rank &&
      (rank == 0 || memcmp(fuse_value_shape(g, p), want, (size_t)rank * sizeof(int64_t)) == 0))
    return p;
  if (fuse__numel(fuse_value_rank(g, p), fuse_value_shape(g, p)) != fuse__numel(rank, want))
    return p; /* the builder says what is wrong */
  return fuse_reshape(g, p, rank, want);
}

/* LayerNormalization (opset 17): X, Scale, B (optional); axis default -1. Scale and B that
   only broadcast to X.shape[axis:] apply as mul / add after a unit layer_norm. */
static fuse_value fuse__onnx_layer_norm(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  float eps = fuse__onnx_attr_float(n, "epsilon", 1e-5f);
  int axis = (int)fuse__onnx_attr_int(n, "axis", -1), rank, k, ax;
  fuse_value x = fuse__onnx_value(ld, n->in[0]), scale, bias = FUSE_NONE, y;
  int64_t xs[FUSE_MAX_RANK], count; /* a copy: builders may move the graph's nodes */
  for (k = 1; k < n->num_out; k++)
    if (n->out[k].n)
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             k == 1 ? "LayerNormalization's Mean output is not supported (only Y)"
                                    : "LayerNormalization's InvStdDev output is not supported "
                                      "(only Y)"),
             FUSE_NONE;
  if (x == FUSE_NONE) return FUSE_NONE;
  if (n->num_in < 2 || !fuse__onnx_has_in(n, 1))
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "LayerNormalization needs X and Scale"), FUSE_NONE;
  if ((scale = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE) return FUSE_NONE;
  if (fuse__onnx_has_in(n, 2) && (bias = fuse__onnx_value(ld, n->in[2])) == FUSE_NONE)
    return FUSE_NONE;
  rank = fuse_value_rank(g, x);
  memcpy(xs, fuse_value_shape(g, x), sizeof xs);
  if (axis < -rank || axis >= rank) return fuse_layer_norm(g, x, scale, bias, axis, eps);
  ax = axis < 0 ? axis + rank : axis;
  count = fuse__numel(rank - ax, xs + ax);
  if (fuse__numel(fuse_value_rank(g, scale), fuse_value_shape(g, scale)) == count &&
      (bias == FUSE_NONE ||
       fuse__numel(fuse_value_rank(g, bias), fuse_value_shape(g, bias)) == count)) {
    scale = fuse__onnx_norm_param(ld, scale, rank - ax, xs + ax);
    if (bias != FUSE_NONE) bias = fuse__onnx_norm_param(ld, bias, rank - ax, xs + ax);
    return fuse_layer_norm(g, x, scale, bias, ax, eps);
  }
  { /* broadcast scale / bias: normalize with ones, then numpy-broadcast mul and add */
    fuse_value ones = fuse_constant(g, NULL, rank - ax, xs + ax, NULL);
    int64_t i;
    if (ones == FUSE_NONE) return FUSE_NONE;
    for (i = 0; i < count; i++) g->nodes[ones].data[i] = 1.0f;
    y = fuse_mul(g, fuse_layer_norm(g, x, ones, FUSE_NONE, ax, eps), scale);
    if (bias != FUSE_NONE) y = fuse_add(g, y, bias);
    if (y != FUSE_NONE && fuse_value_rank(g, y) != rank)
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE,
                             "LayerNormalization's Scale / B have more dimensions than X"),
             FUSE_NONE;
    return y;
  }
}

/* InstanceNormalization: x [N, C, ...], scale [C], B [C]. */
static fuse_value fuse__onnx_instance_norm(fuse__onnx *ld, const fuse__onode *n) {
  fuse_value in[3];
  int k;
  if (n->num_in != 3) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs 3 inputs"), FUSE_NONE;
  for (k = 0; k < 3; k++)
    if ((in[k] = fuse__onnx_value(ld, n->in[k])) == FUSE_NONE) return FUSE_NONE;
  return fuse_instance_norm(ld->g, in[0], in[1], in[2],
                            fuse__onnx_attr_float(n, "epsilon", 1e-5f));
}

/* GroupNormalization: scale and bias per channel [C] (opset 21) or per group [num_groups]
   (opset 18): a per-group one becomes per-channel (each value repeated C / num_groups times;
   at run time, as mul / add on x viewed as [N, groups, C / groups * spatial], when it is not a
   constant). */
static fuse_value fuse__onnx_group_norm(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  float eps = fuse__onnx_attr_float(n, "epsilon", 1e-5f);
  int64_t groups = fuse__onnx_attr_int(n, "num_groups", 0), C, i;
  int64_t view[3], gshape[2], back[FUSE_MAX_RANK];
  fuse_value in[3], ones, zeros, y;
  int k, rank, per_group = 1, constant = 1;
  int64_t xs[FUSE_MAX_RANK]; /* a copy: builders may move the graph's nodes */
  if (n->num_in != 3) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs 3 inputs"), FUSE_NONE;
  for (k = 0; k < 3; k++)
    if ((in[k] = fuse__onnx_value(ld, n->in[k])) == FUSE_NONE) return FUSE_NONE;
  rank = fuse_value_rank(g, in[0]);
  memcpy(xs, fuse_value_shape(g, in[0]), sizeof xs);
  if (groups < 1 || groups > 0x7fffffff || rank < 2 || xs[1] % groups)
    return fuse_group_norm(g, in[0], in[1], in[2], groups < 1 || groups > 0x7fffffff ? 0 : (int)groups,
                           eps); /* the builder says what is wrong */
  C = xs[1];
  for (k = 1; k < 3; k++) {
    const fuse__node *p = &g->nodes[in[k]];
    per_group &= fuse__numel(p->rank, p->shape) == groups;
    constant &= p->op == FUSE__OP_CONST;
  }
  if (!per_group || C == groups) { /* per channel (or both at once) */
    for (k = 1; k < 3; k++) in[k] = fuse__onnx_norm_param(ld, in[k], 1, &C);
    return fuse_group_norm(g, in[0], in[1], in[2], (int)groups, eps);
  }
  if (constant) { /* repeat each group's value for its channels */
    for (k = 1; k < 3; k++) {
      fuse_value e = fuse_constant(g, NULL, 1, &C, NULL);
      if (e == FUSE_NONE) return FUSE_NONE;
      for (i = 0; i < C; i++) g->nodes[e].data[i] = g->nodes[in[k]].data[i / (C / groups)];
      in[k] = e;
    }
    return fuse_group_norm(g, in[0], in[1], in[2], (int)groups, eps);
  }
  /* per-group scale / bias computed at run time */
  ones = fuse_constant(g, NULL, 1, &C, NULL);
  zeros = fuse_constant(g, NULL, 1, &C, NULL);
  if (ones == FUSE_NONE || zeros == FUSE_NONE) return FUSE_NONE;
  for (i = 0; i < C; i++) g->nodes[ones].data[i] = 1.0f;
  y = fuse_group_norm(g, in[0], ones, zeros, (int)groups, eps);
  view[0] = xs[0];
  view[1] = groups;
  view[2] = -1;
  gshape[0] = groups;
  gshape[1] = 1;
  memcpy(back, xs, (size_t)rank * sizeof(int64_t));
  y = fuse_reshape(g, y, 3, view);
  y = fuse_mul(g, y, fuse_reshape(g, in[1], 2, gshape));
  y = fuse_add(g, y, fuse_reshape(g, in[2], 2, gshape));
  return fuse_reshape(g, y, rank, back);
}

/* Einsum: the equation attribute, 1 or 2 inputs (fuse_einsum says what else it refuses). */
static fuse_value fuse__onnx_einsum(fuse__onnx *ld, const fuse__onode *n) {
  fuse__oattr a;
  fuse_value xs[2];
  char eq[128];
  int k;
  if (!fuse__onnx_attr(n, "equation", &a) || !a.s.n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Einsum needs its equation"), FUSE_NONE;
  if (a.s.n >= sizeof eq || memchr(a.s.p, 0, a.s.n))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "Einsum's equation is too long"), FUSE_NONE;
  memcpy(eq, a.s.p, a.s.n);
  eq[a.s.n] = 0;
  for (k = 0; k < n->num_in && k < 2; k++)
    if ((xs[k] = fuse__onnx_value(ld, n->in[k])) == FUSE_NONE) return FUSE_NONE;
  return fuse_einsum(ld->g, eq, n->num_in, xs); /* refuses more than 2 before reading xs */
}

static fuse_value fuse__onnx_convert_nn(fuse__onnx *ld, const fuse__onode *n) {
  static const char *const reduce[] = {"ReduceMean", "ReduceSum", "ReduceMax",      "ReduceMin",
                                       "ReduceL2",   "ReduceProd", "ReduceSumSquare"};
  int k;
  for (k = 0; k < 7; k++)
    if (fuse__slice_is(n->op, reduce[k])) break;
  if (k == 7 && !fuse__slice_is(n->op, "LogSoftmax") &&
      !fuse__slice_is(n->op, "LayerNormalization") &&
      !fuse__slice_is(n->op, "InstanceNormalization") &&
      !fuse__slice_is(n->op, "GroupNormalization") && !fuse__slice_is(n->op, "Einsum"))
    return -3;
  if (n->num_in < 1 || !n->in[0].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the node has no input"), FUSE_NONE;
  if (k < 7) return fuse__onnx_reduce(ld, n, (fuse_reduce_kind)(FUSE_REDUCE_MEAN + k));
  if (fuse__slice_is(n->op, "LogSoftmax")) return fuse__onnx_log_softmax(ld, n);
  if (fuse__slice_is(n->op, "LayerNormalization")) return fuse__onnx_layer_norm(ld, n);
  if (fuse__slice_is(n->op, "InstanceNormalization")) return fuse__onnx_instance_norm(ld, n);
  if (fuse__slice_is(n->op, "GroupNormalization")) return fuse__onnx_group_norm(ld, n);
  return fuse__onnx_einsum(ld, n);
}

/* the ONNX operators this file converts (the loader lists the others as unsupported) */
static const char *const fuse__onnx_nn_ops[] = {
    "ReduceMean", "ReduceSum",          "ReduceMax",          "ReduceMin",
    "ReduceL2",   "ReduceProd",         "ReduceSumSquare",    "LogSoftmax",
    "LayerNormalization", "InstanceNormalization", "GroupNormalization", "Einsum", NULL};
/* ==== end src/onnx_nn.c ==== */
/* ==== begin src/onnx_layers.c ==== */
/* ------------------------------------------------------------ onnx operators: layers -- */
/* Slice, Split, ConvTranspose, LSTM, GRU (1-D Conv and pools: fuse__onnx_conv, fuse__onnx_pool).
   fuse__onnx_convert_layers: as fuse__onnx_convert_math. */

/* Binds output k of node n to v, naming v after it as the loader names a first output. */
static int fuse__onnx_layers_bind(fuse__onnx *ld, const fuse__onode *n, int k, fuse_value v) {
  fuse_graph *g = ld->g;
  if (k >= n->num_out || !n->out[k].n) return 1; /* an output nobody asked for */
  if (!g->nodes[v].name && g->nodes[v].op > FUSE__OP_CONST &&
      fuse__find(g, fuse__onnx_cstr(ld, n->out[k])) == FUSE_NONE)
    fuse_value_set_name(g, v, fuse__onnx_cstr(ld, n->out[k]));
  if (!fuse__onnx_bind_value(ld, n->out[k], v))
    return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
  return 1;
}

/* A list of integers given as attribute `name` (opsets before `input_from`) or as constant
   input `input` (from it): its count, -1 when absent, -2 (after a message) when malformed. */
static int fuse__onnx_layers_list(fuse__onnx *ld, const fuse__onode *n, const char *name,
                                  int input, int input_from, int64_t *out, int max) {
  int count;
  if (ld->opset < input_from || !fuse__onnx_has_in(n, input)) {
    count = fuse__onnx_attr_ints(n, name, out, max);
    if (count >= 0 || ld->opset < input_from) return count;
    return -1;
  }
  if (!fuse__onnx_ints(ld, n->in[input], out, max, &count)) {
    char what[120];
    fuse__out o;
    o.buf = what;
    o.len = 0;
    o.cap = sizeof what;
    o.write = NULL;
    o.user = NULL;
    fuse__puts(&o, "input '");
    fuse__puts(&o, name);
    fuse__puts(&o, "' must be a constant integer tensor (of at most ");
    fuse__put_int(&o, max);
    fuse__puts(&o, " values)");
    fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what);
    return -2;
  }
  return count;
}

/* Slice: starts, ends, axes as attributes before opset 10; then inputs, with steps. */
static fuse_value fuse__onnx_slice(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  int64_t starts[FUSE_MAX_RANK], ends[FUSE_MAX_RANK], axes64[FUSE_MAX_RANK], steps[FUSE_MAX_RANK];
  int axes[FUSE_MAX_RANK], ns, ne, na, nst = -1, i;
  if ((ns = fuse__onnx_layers_list(ld, n, "starts", 1, 10, starts, FUSE_MAX_RANK)) == -2 ||
      (ne = fuse__onnx_layers_list(ld, n, "ends", 2, 10, ends, FUSE_MAX_RANK)) == -2 ||
      (na = fuse__onnx_layers_list(ld, n, "axes", 3, 10, axes64, FUSE_MAX_RANK)) == -2 ||
      (ld->opset >= 10 &&
       (nst = fuse__onnx_layers_list(ld, n, "steps", 4, 10, steps, FUSE_MAX_RANK)) == -2))
    return FUSE_NONE;
  if (ns < 0 || ne < 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Slice needs starts and ends"), FUSE_NONE;
  if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE,
                           "Slice's starts, ends, axes and steps differ in length"),
           FUSE_NONE;
  for (i = 0; na >= 0 && i < na; i++) /* fuse_slice names an axis out of range */
    axes[i] = axes64[i] < -FUSE_MAX_RANK || axes64[i] > FUSE_MAX_RANK ? FUSE_MAX_RANK
                                                                      : (int)axes64[i];
  return fuse_slice(ld->g, x, ns, na >= 0 ? axes : NULL, starts, ends, nst >= 0 ? steps : NULL);
}

/* Split into the node's outputs: sizes from attribute split (before opset 13) or input split,
   else equal pieces (opset 18's num_outputs: the last piece may be smaller). */
static fuse_value fuse__onnx_split(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  fuse_graph *g = ld->g;
  int64_t *sizes;
  fuse_value *out;
  int count, k, rank = fuse_value_rank(g, x), axis = (int)fuse__onnx_attr_int(n, "axis", 0);
  int pieces = n->num_out, ok = 1;
  if (pieces < 1) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Split has no outputs"), FUSE_NONE;
  sizes = (int64_t *)fuse__alloc(&g->alloc, (size_t)(pieces + 1) * sizeof(int64_t), 16);
  out = (fuse_value *)fuse__alloc(&g->alloc, (size_t)pieces * sizeof(fuse_value), 16);
  if (!sizes || !out) {
    fuse__free(&g->alloc, sizes);
    fuse__free(&g->alloc, out);
    return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), FUSE_NONE;
  }
  count = fuse__onnx_layers_list(ld, n, "split", 1, ld->opset < 2 ? 1 : 13, sizes, pieces + 1);
  if (count == -2) {
    ok = 0;
  } else if (count == -1 && ld->opset >= 18 && rank >= 1 && axis >= -rank && axis < rank) {
    int64_t dim = fuse_value_shape(g, x)[axis < 0 ? axis + rank : axis];
    int64_t chunk = (dim + pieces - 1) / pieces;
    if (fuse__onnx_attr_int(n, "num_outputs", pieces) != pieces) {
      fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "num_outputs differs from the number of outputs");
      ok = 0;
    } else if (chunk * (pieces - 1) >= dim) {
      fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "num_outputs leaves the last piece empty");
      ok = 0;
    }
    for (k = 0; k < pieces; k++) sizes[k] = k < pieces - 1 ? chunk : dim - chunk * (pieces - 1);
    count = pieces;
  }
  if (ok && count != -1 && count != pieces) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "split must have one size per output");
    ok = 0;
  }
  if (ok) ok = fuse_split(g, x, axis, pieces, count == -1 ? NULL : sizes, out) == FUSE_OK;
  for (k = 0; ok && k < pieces; k++) ok = fuse__onnx_layers_bind(ld, n, k, out[k]);
  fuse__free(&g->alloc, sizes);
  fuse__free(&g->alloc, out);
  return ok ? -2 : FUSE_NONE;
}

/* ConvTranspose (1-D and 2-D): output_shape or auto_pad SAME sets the pads as ONNX says, with
   a total below zero (more rows than the full output) becoming output padding. */
static fuse_value fuse__onnx_conv_transpose(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  fuse_graph *g = ld->g;
  fuse_conv_transpose2d_attrs a;
  fuse__oattr pad_mode;
  int64_t want[FUSE_MAX_RANK + 2], kernel[8];
  int nd, i, count, same_upper = 0, has_mode;
  fuse_value w, y;
  if (fuse__onnx_rank4(ld, x) == FUSE_NONE) return FUSE_NONE;
  if (n->num_in < 2 || !n->in[1].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "ConvTranspose needs W"), FUSE_NONE;
  if ((w = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE) return FUSE_NONE;
  nd = fuse_value_rank(g, x) - 2;
  if (fuse_value_rank(g, w) != nd + 2)
    return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "the weight's rank differs from the input's"),
           FUSE_NONE;
  memset(&a, 0, sizeof a);
  a.groups = (int)fuse__onnx_attr_int(n, "group", 1);
  if (a.groups < 1) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "group must be >= 1"), FUSE_NONE;
  if (!fuse__onnx_spatial_ints(ld, n, "strides", nd, 1, a.strides, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "dilations", nd, 1, a.dilation, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "pads", nd, 2, a.padding, 0, 0) ||
      !fuse__onnx_spatial_ints(ld, n, "output_padding", nd, 1, a.output_padding, 0, 0))
    return FUSE_NONE;
  count = fuse__onnx_attr_ints(n, "kernel_shape", kernel, 8);
  for (i = 0; i < count; i++)
    if (count != nd || kernel[i] != fuse_value_shape(g, w)[2 + i])
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "kernel_shape differs from the weight's shape"),
             FUSE_NONE;
  has_mode = fuse__onnx_attr(n, "auto_pad", &pad_mode) && !fuse__slice_is(pad_mode.s, "NOTSET");
  if (has_mode && fuse__slice_is(pad_mode.s, "VALID")) {
    memset(a.padding, 0, sizeof a.padding);
    has_mode = 0;
  } else if (has_mode) {
    if (!fuse__slice_is(pad_mode.s, "SAME_UPPER") && !fuse__slice_is(pad_mode.s, "SAME_LOWER"))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "auto_pad is not NOTSET, VALID, SAME_UPPER or SAME_LOWER"),
             FUSE_NONE;
    same_upper = fuse__slice_is(pad_mode.s, "SAME_UPPER");
  }
  count = fuse__onnx_attr_ints(n, "output_shape", want, FUSE_MAX_RANK + 2);
  if (count >= 0 && count != nd && count != nd + 2)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "output_shape has neither 1 nor 2 + 1 entries per "
                                                 "spatial dimension"),
           FUSE_NONE;
  if (count >= 0 || has_mode) {
    for (i = 0; i < nd; i++) {
      int h = nd == 1 ? 1 : i; /* the attributes' index of spatial dimension i */
      int64_t in = fuse_value_shape(g, x)[2 + i], k = fuse_value_shape(g, w)[2 + i];
      int64_t out = count >= 0 ? want[count - nd + i] : in * a.strides[h];
      int64_t total = a.strides[h] * (in - 1) + a.output_padding[h] +
                      (k - 1) * a.dilation[h] + 1 - out;
      if (out < 1 || out > FUSE__MAX_DIM)
        return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "output_shape is out of range"), FUSE_NONE;
      if (total < 0) { /* rows past the full output: zeros, as output padding */
        if (-total > 0x7fffffff - (int64_t)a.output_padding[h])
          return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "output_shape is past 2^31 rows"), FUSE_NONE;
        a.output_padding[h] += (int)-total;
        total = 0;
      }
      if (total > 0x7ffffffe)
        return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "output_shape crops past 2^31"), FUSE_NONE;
      a.padding[h] = (int)(same_upper ? total / 2 : total - total / 2);
      a.padding[h + 2] = (int)(total - a.padding[h]);
    }
  }
  y = fuse_conv_transpose2d(g, x, w, &a);
  if (y != FUSE_NONE && fuse__onnx_has_in(n, 2)) { /* bias: add(y, reshape(B, [1,K,1,1])) */
    int64_t shape[4];
    fuse_value b = fuse__onnx_value(ld, n->in[2]);
    if (b == FUSE_NONE) return FUSE_NONE;
    shape[0] = 1;
    shape[1] = fuse_value_shape(g, y)[1];
    shape[2] = shape[3] = 1;
    y = fuse_add(g, y, fuse_reshape(g, b, nd + 2, shape));
  }
  return y;
}

/* The activations attribute (strings, field 9) must list the defaults, direction by
   direction: Sigmoid then Tanh (LSTM: Sigmoid, Tanh, Tanh). 0 after a message otherwise. */
static int fuse__onnx_rnn_activations(fuse__onnx *ld, const fuse__onode *n, int per) {
  static const char *const defaults[3] = {"Sigmoid", "Tanh", "Tanh"};
  fuse__oattr a;
  fuse__pb b;
  uint32_t f, w;
  int k = 0;
  if (!fuse__onnx_attr(n, "activations", &a)) return 1;
  b = fuse__proto_of(a.msg);
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s;
    if (f != 9 || w != 2) {
      if (!fuse__proto_skip(&b, w)) break;
      continue;
    }
    if (!fuse__proto_bytes(&b, &s)) break;
    if (!fuse__slice_is(s, defaults[k % per])) {
      char what[200];
      fuse__out o;
      o.buf = what;
      o.len = 0;
      o.cap = sizeof what;
      o.write = NULL;
      o.user = NULL;
      fuse__puts(&o, "activation '");
      fuse__puts(&o, fuse__onnx_cstr(ld, s));
      fuse__puts(&o, per == 3 ? "' is not supported (only the defaults Sigmoid, Tanh, Tanh)"
                              : "' is not supported (only the defaults Sigmoid, Tanh)");
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what), 0;
    }
    k++;
  }
  return 1;
}

/* LSTM (gates 4) and GRU (gates 3): X, W, R, B, sequence_lens, initial_h, initial_c, P;
   outputs Y, Y_h, Y_c, each possibly unnamed. */
static fuse_value fuse__onnx_rnn(fuse__onnx *ld, const fuse__onode *n, fuse_value x, int gates) {
  fuse_graph *g = ld->g;
  fuse_rnn_attrs a;
  fuse__oattr dir;
  fuse_value in[7], y = FUSE_NONE, y_h = FUSE_NONE, y_c = FUSE_NONE;
  fuse_result r;
  int k, want[3];
  if (n->num_in < 3) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs X, W and R"), FUSE_NONE;
  if (gates == 4 && fuse__onnx_has_in(n, 7))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "peepholes (input P) are not supported"),
           FUSE_NONE;
  if (gates == 4 && fuse__onnx_attr_int(n, "input_forget", 0) != 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "input_forget=1 is not supported"), FUSE_NONE;
  if (!fuse__onnx_rnn_activations(ld, n, gates == 4 ? 3 : 2)) return FUSE_NONE;
  in[0] = x;
  for (k = 1; k < 7; k++) {
    in[k] = FUSE_NONE;
    if (k == 4 || (k == 6 && gates == 3) || !fuse__onnx_has_in(n, k)) continue;
    if ((in[k] = fuse__onnx_value(ld, n->in[k])) == FUSE_NONE) return FUSE_NONE;
  }
  memset(&a, 0, sizeof a);
  a.batch_first = (int)fuse__onnx_attr_int(n, "layout", 0);
  a.linear_before_reset = (int)fuse__onnx_attr_int(n, "linear_before_reset", 0);
  a.clip = fuse__onnx_attr_float(n, "clip", 0);
  a.hidden_size = (int)fuse__onnx_attr_int(n, "hidden_size", -1);
  if (a.hidden_size == -1 && fuse_value_rank(g, in[2]) == 3) /* from R [D, G * H, H] */
    a.hidden_size = (int)fuse_value_shape(g, in[2])[2];
  if (a.batch_first != 0 && a.batch_first != 1)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "layout must be 0 or 1"), FUSE_NONE;
  if (fuse__onnx_attr(n, "direction", &dir) && !fuse__slice_is(dir.s, "forward")) {
    if (fuse__slice_is(dir.s, "reverse")) a.direction = FUSE_RNN_REVERSE;
    else if (fuse__slice_is(dir.s, "bidirectional")) a.direction = FUSE_RNN_BIDIRECTIONAL;
    else
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE,
                             "direction is not forward, reverse or bidirectional"),
             FUSE_NONE;
  }
  if (fuse__onnx_has_in(n, 4)) { /* sequence_lens: only the full length */
    int64_t lens[256], T;
    int count, i;
    const int64_t *xs = fuse_value_shape(g, x);
    if (fuse_value_rank(g, x) != 3)
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "X must be 3-D"), FUSE_NONE;
    T = xs[a.batch_first ? 1 : 0];
    if (!fuse__onnx_ints(ld, n->in[4], lens, 256, &count))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "sequence_lens must be a constant (of at most 256 values) equal to "
                             "the sequence length"),
             FUSE_NONE;
    for (i = 0; i < count; i++)
      if (lens[i] != T)
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                               "sequence_lens shorter than the sequence are not supported"),
               FUSE_NONE;
  }
  for (k = 0; k < 3; k++) want[k] = k < n->num_out && n->out[k].n > 0;
  if (gates == 4)
    r = fuse_lstm(g, x, in[1], in[2], in[3], in[5], in[6], &a, want[0] ? &y : NULL,
                  want[1] ? &y_h : NULL, want[2] ? &y_c : NULL);
  else
    r = fuse_gru(g, x, in[1], in[2], in[3], in[5], &a, want[0] ? &y : NULL, want[1] ? &y_h : NULL);
  if (r != FUSE_OK) return FUSE_NONE;
  if (gates == 3 && want[2])
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "GRU has no third output"), FUSE_NONE;
  if (!fuse__onnx_layers_bind(ld, n, 0, y) || !fuse__onnx_layers_bind(ld, n, 1, y_h) ||
      !fuse__onnx_layers_bind(ld, n, 2, y_c))
    return FUSE_NONE;
  return -2;
}

static fuse_value fuse__onnx_convert_layers(fuse__onnx *ld, const fuse__onode *n) {
  static const char *const ops[] = {"Slice", "Split", "ConvTranspose", "LSTM", "GRU"};
  fuse_value x;
  int k;
  for (k = 0; k < 5 && !fuse__slice_is(n->op, ops[k]); k++) {
  }
  if (k == 5) return -3;
  if (n->num_in < 1 || !n->in[0].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the node has no input"), FUSE_NONE;
  if ((x = fuse__onnx_value(ld, n->in[0])) == FUSE_NONE) return FUSE_NONE;
  switch (k) {
  case 0: return fuse__onnx_slice(ld, n, x);
  case 1: return fuse__onnx_split(ld, n, x);
  case 2: return fuse__onnx_conv_transpose(ld, n, x);
  default: return fuse__onnx_rnn(ld, n, x, k == 3 ? 4 : 3);
  }
}

/* the ONNX operators this file converts (the loader lists the others as unsupported) */
static const char *const fuse__onnx_layers_ops[] = {"Slice", "Split", "ConvTranspose", "LSTM",
                                                    "GRU", NULL};
/* ==== end src/onnx_layers.c ==== */
/* ==== begin src/onnx_load.c ==== */
/* ------------------------------------------------------------ onnx: the loader -- */

static int fuse__onnx_known(fuse__slice op) {
  static const char *const ops[] = {
      "Conv",    "Relu",    "Clip",   "Add",     "Sub",          "Mul",       "Max",
      "Min",     "Reshape", "Flatten", "Gemm",   "MatMul",       "MaxPool",   "AveragePool",
      "Concat",  "Sigmoid", "Softmax", "Identity", "Constant",    "Dropout",   "Transpose",
      "BatchNormalization", "GlobalAveragePool", NULL};
  const char *const *lists[7];
  int i, k;
  lists[0] = ops, lists[1] = fuse__onnx_math_ops, lists[2] = fuse__onnx_shape_ops;
  lists[3] = fuse__onnx_nn_ops, lists[4] = fuse__onnx_layers_ops;
  lists[5] = fuse__onnx_fold_only_ops, lists[6] = fuse__onnx_fold_also_ops;
  for (k = 0; k < 7; k++)
    for (i = 0; lists[k][i]; i++)
      if (fuse__slice_is(op, lists[k][i])) return 1;
  return 0;
}

/* An operator that exists only as load-time folding, met on a run-time value: Cast to a float
   type is the value itself; anything else is refused, saying why. */
static fuse_value fuse__onnx_run_time(fuse__onnx *ld, const fuse__onode *n) {
  if (fuse__slice_is(n->op, "Cast") && n->num_in == 1) {
    int to = (int)fuse__onnx_attr_int(n, "to", 0);
    if (fuse__dt_is_float(to)) return fuse__onnx_value(ld, n->in[0]);
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "a Cast of a run-time value to %s (fuse.h computes in float32)",
                            fuse__dt_name(to)), FUSE_NONE;
  }
  return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                         "this operator is folded at load time only, and an input is a run-time "
                         "value (it depends on a graph input)"),
         FUSE_NONE;
}

/* Converts one node; returns its first output's value, -2 when it bound its outputs itself. */
static fuse_value fuse__onnx_convert(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  static const char *const binary[] = {"Add", "Sub", "Mul"};
  static const int binary_op[] = {FUSE__OP_ADD, FUSE__OP_SUB, FUSE__OP_MUL};
  fuse_value x;
  int k;
  if (fuse__slice_is(n->op, "Constant")) return fuse__onnx_constant(ld, n);
  if ((k = fuse__onnx_fold(ld, n)) != 0) return k > 0 ? -2 : FUSE_NONE;
  if (fuse__onnx_in_list(n->op, fuse__onnx_fold_only_ops)) return fuse__onnx_run_time(ld, n);
  if ((x = fuse__onnx_convert_math(ld, n)) != -3 || (x = fuse__onnx_convert_shape(ld, n)) != -3 ||
      (x = fuse__onnx_convert_nn(ld, n)) != -3 || (x = fuse__onnx_convert_layers(ld, n)) != -3)
    return x;
  if (n->num_in < 1 || !n->in[0].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the node has no input"), FUSE_NONE;
  if (fuse__slice_is(n->op, "Conv")) return fuse__onnx_conv(ld, n);
  if (fuse__slice_is(n->op, "Gemm")) return fuse__onnx_gemm(ld, n);
  if (fuse__slice_is(n->op, "Clip")) return fuse__onnx_clip(ld, n);
  if (fuse__slice_is(n->op, "Reshape")) return fuse__onnx_reshape(ld, n);
  if (fuse__slice_is(n->op, "Softmax")) return fuse__onnx_softmax(ld, n);
  if (fuse__slice_is(n->op, "MaxPool")) return fuse__onnx_pool(ld, n, FUSE__OP_MAX_POOL2D);
  if (fuse__slice_is(n->op, "AveragePool")) return fuse__onnx_pool(ld, n, FUSE__OP_AVG_POOL2D);
  if (fuse__slice_is(n->op, "Concat")) return fuse__onnx_concat(ld, n);
  if (fuse__slice_is(n->op, "BatchNormalization")) return fuse__onnx_batch_norm(ld, n);
  for (k = 0; k < 3; k++)
    if (fuse__slice_is(n->op, binary[k])) {
      fuse_value a, b;
      if (n->num_in != 2) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs two inputs"), FUSE_NONE;
      a = fuse__onnx_value(ld, n->in[0]);
      b = a == FUSE_NONE ? FUSE_NONE : fuse__onnx_value(ld, n->in[1]);
      return b == FUSE_NONE ? FUSE_NONE : fuse__binary(g, binary_op[k], a, b);
    }
  if (fuse__slice_is(n->op, "Max") || fuse__slice_is(n->op, "Min")) {
    int op = n->op.p[1] == 'a' ? FUSE__OP_MAXIMUM : FUSE__OP_MINIMUM;
    x = fuse__onnx_value(ld, n->in[0]);
    for (k = 1; k < n->num_in && x != FUSE_NONE; k++) {
      fuse_value b = fuse__onnx_value(ld, n->in[k]);
      x = b == FUSE_NONE ? FUSE_NONE : fuse__binary(g, op, x, b);
    }
    return x;
  }
  x = fuse__onnx_value(ld, n->in[0]);
  if (x == FUSE_NONE) return FUSE_NONE;
  if (fuse__slice_is(n->op, "Relu")) return fuse_relu(g, x);
  if (fuse__slice_is(n->op, "Sigmoid")) return fuse_sigmoid(g, x);
  if (fuse__slice_is(n->op, "MatMul")) {
    fuse_value b = n->num_in == 2 ? fuse__onnx_value(ld, n->in[1]) : FUSE_NONE;
    return b == FUSE_NONE ? fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "MatMul needs two inputs"), FUSE_NONE
                          : fuse_matmul(g, x, b);
  }
  if (fuse__slice_is(n->op, "Flatten")) return fuse_flatten(g, x, (int)fuse__onnx_attr_int(n, "axis", 1));
  if (fuse__slice_is(n->op, "GlobalAveragePool")) return fuse_global_avg_pool2d(g, x);
  if (fuse__slice_is(n->op, "Identity")) return x;
  if (fuse__slice_is(n->op, "Transpose")) return fuse__onnx_transpose(ld, n, x);
  if (fuse__slice_is(n->op, "Dropout")) return fuse__onnx_dropout(ld, n, x);
  return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "this operator is not supported"), FUSE_NONE;
}

/* A graph input's shape from its ValueInfoProto; 0 with a message if it is not a fixed-size
   float tensor. */
static int fuse__onnx_input_shape(fuse__slice vi, fuse__slice *name, int *rank, int64_t *shape) {
  fuse__pb b = fuse__proto_of(vi), tb, tt, sb;
  uint32_t f, w;
  fuse__slice type = {NULL, 0}, tensor = {NULL, 0}, shp = {NULL, 0};
  int64_t elem = 0;
  int has_shape = 0;
  uint64_t v;
  name->n = 0;
  while (fuse__proto_tag(&b, &f, &w)) {
    if (f == 1 && w == 2) {
      if (!fuse__proto_bytes(&b, name)) return 0;
    } else if (f == 2 && w == 2) {
      if (!fuse__proto_bytes(&b, &type)) return 0;
    } else if (!fuse__proto_skip(&b, w)) {
      return 0;
    }
  }
  tb = fuse__proto_of(type);
  while (fuse__proto_tag(&tb, &f, &w)) {
    if (f == 1 && w == 2) {
      if (!fuse__proto_bytes(&tb, &tensor)) return 0;
    } else if (!fuse__proto_skip(&tb, w)) {
      return 0;
    }
  }
  tt = fuse__proto_of(tensor);
  while (fuse__proto_tag(&tt, &f, &w)) {
    if (f == 1 && w == 0) {
      if (!fuse__proto_varint(&tt, &v)) return 0;
      elem = (int64_t)v;
    } else if (f == 2 && w == 2) {
      if (!fuse__proto_bytes(&tt, &shp)) return 0;
      has_shape = 1;
    } else if (!fuse__proto_skip(&tt, w)) {
      return 0;
    }
  }
  if (elem != FUSE__DT_FLOAT) return -1;
  if (!has_shape) return -2;
  *rank = 0;
  sb = fuse__proto_of(shp);
  while (fuse__proto_tag(&sb, &f, &w)) {
    if (f == 1 && w == 2) {
      fuse__slice dim;
      fuse__pb db;
      uint32_t df, dw;
      int known = 0;
      if (!fuse__proto_bytes(&sb, &dim)) return 0;
      if (*rank == FUSE_MAX_RANK) return -3;
      db = fuse__proto_of(dim);
      while (fuse__proto_tag(&db, &df, &dw)) {
        if (df == 1 && dw == 0) {
          if (!fuse__proto_varint(&db, &v)) return 0;
          shape[*rank] = (int64_t)v;
          known = 1;
        } else if (!fuse__proto_skip(&db, dw)) {
          return 0;
        }
      }
      if (!known) return -2;
      (*rank)++;
    } else if (!fuse__proto_skip(&sb, w)) {
      return 0;
    }
  }
  return 1;
}

/* OperatorSetIdProto (domain = 1, version = 2): the opset of the default domain sets
   ld->opset. 0: it does not fit. */
static int fuse__onnx_opset_import(fuse__onnx *ld, fuse__slice s) {
  fuse__pb ob = fuse__proto_of(s);
  fuse__slice domain = {NULL, 0};
  int64_t version = -1;
  uint32_t of, ow;
  uint64_t v;
  int fits = 1;
  while (fits && ob.p < ob.end) {
    if (!fuse__proto_tag(&ob, &of, &ow)) fits = 0;
    else if (of == 1 && ow == 2) fits = fuse__proto_bytes(&ob, &domain);
    else if (of == 2 && ow == 0) {
      if ((fits = fuse__proto_varint(&ob, &v)) != 0) version = (int64_t)v;
    } else fits = fuse__proto_skip(&ob, ow);
  }
  if (fits && (domain.n == 0 || fuse__slice_is(domain, "ai.onnx")) && version > 0)
    ld->opset = (int)(version > 1000 ? 1000 : version);
  return fits;
}

/* ModelProto: opset_import = 8, graph = 7. A field that does not fit stops the loop with
   b->p at its start (the file was cut inside it), so b->p != b->end after it. */
static void fuse__onnx_read_model(fuse__onnx *ld, fuse__pb *b, fuse__slice *graph) {
  uint32_t f, w;
  fuse__slice s;
  for (;;) {
    const unsigned char *field = b->p;
    int fits = 1;
    if (!fuse__proto_tag(b, &f, &w)) break;
    if (f == 7 && w == 2) {
      fits = fuse__proto_bytes(b, graph);
    } else if (f == 8 && w == 2) {
      if ((fits = fuse__proto_bytes(b, &s)) != 0) fits = fuse__onnx_opset_import(ld, s);
    } else {
      fits = fuse__proto_skip(b, w);
    }
    if (!fits) {
      b->p = field;
      break;
    }
  }
}

/* GraphProto's initializer (pass 0): a named constant tensor, bound to its name. 0: stop the
   pass (the graph holds the error). */
static int fuse__onnx_initializer(fuse__onnx *ld, fuse__slice s) {
  fuse__oval o;
  char why[32];
  memset(&o, 0, sizeof o);
  o.kind = FUSE__OV_TENSOR;
  if (!fuse__onnx_tensor_meta(s, &o.t, why, sizeof why)) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "an initializer is malformed");
    return 0;
  }
  if (!fuse__onnx_name_ok(ld, o.t.name)) return 0;
  if (!o.t.name.n) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "an initializer has no name");
    return 0;
  }
  if (!fuse__onnx_bind(ld, o.t.name, &o)) fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory");
  return 1;
}

/* GraphProto's input (pass 1): a graph input of fixed float32 shape, unless an initializer
   has its name. 0: stop the pass (the graph holds the error). */
static int fuse__onnx_graph_input(fuse__onnx *ld, fuse__slice s) {
  fuse_graph *g = ld->g;
  fuse__slice name;
  int64_t shape[FUSE_MAX_RANK];
  int rank = 0, r, i;
  fuse_value x;
  r = fuse__onnx_input_shape(s, &name, &rank, shape);
  if (!name.n) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "a graph input has no name");
    return 0;
  }
  if ((i = fuse__onnx_find(ld, name)) >= 0) {
    if (ld->vals[i].kind == FUSE__OV_TENSOR) return 1; /* an initializer listed as input */
    fuse__fail(g, FUSE_ERROR_PARSE, "onnx: graph input '%s' is listed twice",
               fuse__onnx_cstr(ld, name));
    return 0;
  }
  if (!fuse__onnx_name_ok(ld, name)) return 0;
  if (r <= 0) {
    fuse__fail(g, r == 0 ? FUSE_ERROR_PARSE : FUSE_ERROR_UNSUPPORTED,
               "onnx: graph input '%s' %s", fuse__onnx_cstr(ld, name),
               r == 0    ? "is malformed"
               : r == -1 ? "is not a float32 tensor"
               : r == -2 ? "has no fixed shape (symbolic or missing dimensions)"
                         : "has more than 8 dimensions");
    return 0;
  }
  for (i = 0; i < rank && shape[i] > 0; i++) {
  }
  if (i < rank) {
    fuse__fail(g, shape[i] == 0 ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_PARSE,
               "onnx: graph input '%s' has dimension %d = %D (%s)",
               fuse__onnx_cstr(ld, name), i, shape[i],
               shape[i] == 0 ? "zero-sized tensors are not supported" : "negative");
    return 0;
  }
  x = fuse_input(g, fuse__onnx_cstr(ld, name), rank, shape);
  if (x == FUSE_NONE || !fuse__onnx_bind_value(ld, name, x)) {
    if (g->status == FUSE_OK) fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory");
    return 0;
  }
  return 1;
}

/* A node's conversion failed: say which node, keeping a builder's message and status. */
static void fuse__onnx_convert_failed(fuse__onnx *ld) {
  fuse_graph *g = ld->g;
  if (g->status == FUSE_OK) fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it could not be converted");
  else if (strncmp(g->error, "onnx:", 5) != 0) { /* a builder's message: say where */
    char msg[sizeof g->error];
    fuse_result builder_status = g->status; /* keep it: out of memory stays that */
    memcpy(msg, g->error, sizeof msg);
    g->status = FUSE_OK;
    fuse__onnx_fail(ld, builder_status, msg);
  }
}

/* GraphProto's node (pass 2), parsed, converted and bound to its first output's name (ld->node
   points at it for the messages while it is converted). 0: stop the pass (the graph holds
   the error). */
static int fuse__onnx_graph_node(fuse__onnx *ld, fuse__slice s) {
  fuse_graph *g = ld->g;
  fuse__onode node;
  fuse_value y;
  int i, ok = 0;
  ld->node = NULL;
  if (!fuse__onnx_node(ld, s, &node)) {
    if (g->status == FUSE_OK) fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "a node is malformed");
    fuse__onnx_node_free(ld, &node);
    return 0;
  }
  ld->node = &node;
  ld->node_index++;
  for (i = 0; i < node.num_in; i++)
    if (!fuse__onnx_name_ok(ld, node.in[i])) break;
  for (i = 0; i < node.num_out; i++)
    if (!fuse__onnx_name_ok(ld, node.out[i])) break;
  if (g->status != FUSE_OK) goto done;
  if (!fuse__onnx_known(node.op)) {
    fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "this operator is not supported");
    goto done;
  }
  for (i = 0; i < node.num_out && !node.out[i].n; i++) { /* an optional output may be unnamed */
  }
  if (i == node.num_out) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the node has no output");
    goto done;
  }
  for (i = 0; i < node.num_out; i++)
    if (node.out[i].n && fuse__onnx_find(ld, node.out[i]) >= 0) { /* SSA: one name, one maker */
      fuse__onnx_failf(ld, FUSE_ERROR_PARSE,
                       "its output '%s' is already made by an earlier node, an initializer or "
                       "a graph input", fuse__onnx_cstr(ld, node.out[i]));
      goto done;
    }
  y = fuse__onnx_convert(ld, &node);
  if (y == FUSE_NONE) {
    fuse__onnx_convert_failed(ld);
    goto done;
  }
  if (y != -2 && node.out[0].n) { /* -2: it bound its outputs itself (a Constant, a folded
                                      node, a Split) */
    if (!g->nodes[y].name && g->nodes[y].op > FUSE__OP_CONST &&
        fuse__find(g, fuse__onnx_cstr(ld, node.out[0])) == FUSE_NONE)
      fuse_value_set_name(g, y, fuse__onnx_cstr(ld, node.out[0]));
    if (!fuse__onnx_bind_value(ld, node.out[0], y)) {
      fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory");
      goto done;
    }
  }
  ok = 1;
done:
  fuse__onnx_node_free(ld, &node);
  ld->node = NULL;
  return ok;
}

/* GraphProto's output (pass 3): ValueInfoProto's name = 1, made a graph output. 0: stop the
   pass (the graph holds the error). */
static int fuse__onnx_graph_output(fuse__onnx *ld, fuse__slice s) {
  fuse_graph *g = ld->g;
  fuse__slice name = {NULL, 0};
  fuse__pb ob = fuse__proto_of(s);
  uint32_t of, ow;
  fuse_value y;
  while (fuse__proto_tag(&ob, &of, &ow)) {
    if (of == 1 && ow == 2) {
      if (!fuse__proto_bytes(&ob, &name)) break;
    } else if (!fuse__proto_skip(&ob, ow)) {
      break;
    }
  }
  ld->node = NULL;
  if (!name.n) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "a graph output has no name");
    return 0;
  }
  if (fuse__onnx_find(ld, name) < 0) { /* say which end is missing */
    fuse__fail(g, FUSE_ERROR_PARSE,
               "onnx: graph output '%s' is made by no node, initializer or graph input",
               fuse__onnx_cstr(ld, name));
    return 0;
  }
  y = fuse__onnx_value(ld, name);
  return !(y == FUSE_NONE || fuse_output(g, y) != FUSE_OK);
}

/* Every operator of the graph (its top level) that the loader does not know, counted by
   name, in one message: "unsupported: NonMaxSuppression (1 node), TopK (2 nodes)". 0 (and
   the error) when there is one; 1 when all are known or the graph is malformed (the node
   pass reports that, at the node). */
static int fuse__onnx_check_ops(fuse__onnx *ld, fuse__slice graph) {
  enum { MAX_NAMES = 24 };
  fuse__slice names[MAX_NAMES], domains[MAX_NAMES];
  int counts[MAX_NAMES], n_names = 0, more = 0, i, detection = 0;
  fuse__pb b = fuse__proto_of(graph);
  uint32_t f, w;
  char msg[sizeof ld->g->error];
  fuse__out o;
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s, op = {NULL, 0}, domain = {NULL, 0};
    fuse__pb nb;
    uint32_t nf, nw;
    if (w != 2 || f != 1) {
      if (!fuse__proto_skip(&b, w)) return 1;
      continue;
    }
    if (!fuse__proto_bytes(&b, &s)) return 1;
    nb = fuse__proto_of(s);
    while (fuse__proto_tag(&nb, &nf, &nw)) {
      if (nw == 2 && (nf == 4 || nf == 7)) {
        if (!fuse__proto_bytes(&nb, nf == 4 ? &op : &domain)) return 1;
      } else if (!fuse__proto_skip(&nb, nw)) {
        return 1;
      }
    }
    if (domain.n && !fuse__slice_is(domain, "ai.onnx")) {
      /* another domain's operator is unknown whatever its name */
    } else if (!op.n || fuse__onnx_known(op) || fuse__slice_is(op, "Constant")) {
      continue;
    }
    for (i = 0; i < n_names; i++)
      if (names[i].n == op.n && !memcmp(names[i].p, op.p, op.n) && domains[i].n == domain.n &&
          (!domain.n || !memcmp(domains[i].p, domain.p, domain.n)))
        break;
    if (i < n_names) counts[i]++;
    else if (n_names < MAX_NAMES) names[n_names] = op, domains[n_names] = domain, counts[n_names++] = 1;
    else more++;
  }
  if (!n_names) return 1;
  o.buf = msg;
  o.len = 0;
  o.cap = sizeof msg;
  o.write = NULL;
  o.user = NULL;
  fuse__puts(&o, "unsupported: ");
  for (i = 0; i < n_names; i++) {
    char name[64];
    static const char *const heads[] = {"NonMaxSuppression", "RoiAlign", NULL};
    int k;
    for (k = 0; heads[k]; k++) detection |= fuse__slice_is(names[i], heads[k]);
    if (i) fuse__puts(&o, ", ");
    if (domains[i].n) {
      fuse__copy_slice(name, sizeof name, domains[i]);
      fuse__puts(&o, name);
      fuse__puts(&o, ":");
    }
    fuse__copy_slice(name, sizeof name, names[i]);
    fuse__puts(&o, name);
    fuse__puts(&o, " (");
    fuse__put_int(&o, counts[i]);
    fuse__puts(&o, counts[i] == 1 ? " node)" : " nodes)");
  }
  if (more) {
    fuse__puts(&o, " and ");
    fuse__put_int(&o, more);
    fuse__puts(&o, " more nodes");
  }
  if (detection)
    fuse__puts(&o, "; detection post-processing is out of scope: cut the model before its heads");
  ld->node = NULL;
  fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, msg);
  return 0;
}

/* GraphProto, pass 0: initializer = 5; pass 1: input = 11; pass 2: node = 1;
   pass 3: output = 12. Fields may come in any order, so one pass each. `data` is the file,
   for the byte offset of a malformed field. */
static void fuse__onnx_read_graph(fuse__onnx *ld, fuse__slice graph, const void *data) {
  fuse_graph *g = ld->g;
  fuse__pb b;
  fuse__slice s;
  uint32_t f, w;
  int pass;
  if (!fuse__onnx_check_ops(ld, graph)) return;
  for (pass = 0; pass < 4 && g->status == FUSE_OK; pass++) {
    b = fuse__proto_of(graph);
    const unsigned char *field = b.p;
    while (g->status == FUSE_OK && (field = b.p, fuse__proto_tag(&b, &f, &w))) {
      int more;
      if (w != 2 || !((pass == 0 && f == 5) || (pass == 1 && f == 11) || (pass == 2 && f == 1) ||
                      (pass == 3 && f == 12))) {
        if (!fuse__proto_skip(&b, w)) {
          b.p = field; /* cut off: malformed, reported below */
          break;
        }
        continue;
      }
      if (!fuse__proto_bytes(&b, &s)) {
        b.p = field;
        break;
      }
      more = pass == 0   ? fuse__onnx_initializer(ld, s)
             : pass == 1 ? fuse__onnx_graph_input(ld, s)
             : pass == 2 ? fuse__onnx_graph_node(ld, s)
                         : fuse__onnx_graph_output(ld, s);
      if (!more) break;
    }
    if (g->status == FUSE_OK && b.p != b.end)
      fuse__fail(g, FUSE_ERROR_PARSE, "onnx: the graph is malformed at byte %D",
                 (int64_t)(b.p - (const unsigned char *)data));
  }
}

FUSE_API fuse_result fuse_onnx_load_memory(const void *data, size_t size,
                                           const fuse_allocator *alloc, fuse_graph **out) {
  fuse__onnx ld;
  fuse__pb b;
  fuse__slice graph = {NULL, 0};
  fuse_graph *g;
  int i;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  *out = g = fuse_graph_create(alloc);
  if (!g) return FUSE_ERROR_OUT_OF_MEMORY;
  memset(&ld, 0, sizeof ld);
  ld.g = g;
  ld.opset = 13;
  ld.node_index = -1; /* counts from 0 */
  if (!data && size)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "onnx: data is NULL"), g->status;
  b.p = (const unsigned char *)data;
  b.end = b.p + size;
  fuse__onnx_read_model(&ld, &b, &graph);
  if (b.p != b.end)
    return fuse__fail(g, FUSE_ERROR_PARSE,
                      "onnx: the file is truncated or corrupt: a field at byte %D of %D does "
                      "not fit (not an ONNX model?)",
                      (int64_t)(b.p - (const unsigned char *)data), (int64_t)size),
           g->status;
  if (!graph.p)
    return fuse__fail(g, FUSE_ERROR_PARSE, "onnx: not an ONNX model: it has no graph (%D bytes)",
                      (int64_t)size),
           g->status;
  fuse__onnx_read_graph(&ld, graph, data);
  if (g->status == FUSE_OK && g->num_outputs == 0) /* nothing to compute: a damaged file */
    fuse__fail(g, FUSE_ERROR_PARSE, "onnx: the graph has no outputs");
  for (i = 0; i < ld.num_owned; i++) fuse__free(&g->alloc, ld.owned[i]);
  fuse__free(&g->alloc, ld.owned);
  fuse__free(&g->alloc, ld.vals);
  fuse__free(&g->alloc, ld.table);
  return g->status;
}

#ifndef FUSE_NO_STDIO
#if (defined(__linux__) || defined(__APPLE__)) && !defined(FUSE_NO_MMAP)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
/* Maps the file read-only and loads from the mapping: the file's bytes go from the page cache
   straight into the graph's constants, without a copy of the whole file first (half the
   memory traffic of a load, and no second copy of the file in memory). 1 when it did the
   load (its result in *r); 0 when the file cannot be mapped (the caller reads it). */
static int fuse__onnx_load_mapped(const char *path, const fuse_allocator *alloc, fuse_graph **out,
                                  fuse_result *r) {
  struct stat st;
  void *map;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      (uint64_t)st.st_size > FUSE__MAX_BYTES || (uint64_t)st.st_size > (size_t)-1) {
    close(fd);
    return 0;
  }
#ifdef MAP_POPULATE /* the whole file is read: map its pages in one call, not a fault each */
  map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
#else
  map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
#endif
  close(fd);
  if (map == MAP_FAILED) return 0;
  *r = fuse_onnx_load_memory(map, (size_t)st.st_size, alloc, out);
  munmap(map, (size_t)st.st_size);
  return 1;
}
#else
static int fuse__onnx_load_mapped(const char *path, const fuse_allocator *alloc, fuse_graph **out,
                                  fuse_result *r) {
  (void)path, (void)alloc, (void)out, (void)r;
  return 0;
}
#endif

FUSE_API fuse_result fuse_onnx_load_file(const char *path, const fuse_allocator *alloc,
                                         fuse_graph **out) {
  FILE *f;
  long size;
  void *data;
  fuse_allocator a;
  fuse_result r;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  memset(&a, 0, sizeof a);
  if (alloc) a = *alloc;
  if (!a.alloc != !a.free) return FUSE_ERROR_INVALID_ARGUMENT; /* as fuse_graph_create: no graph */
  if (path && fuse__onnx_load_mapped(path, alloc, out, &r)) return r;
  f = path ? fopen(path, "rb") : NULL;
  /* a directory opens on some systems and reports a size near LONG_MAX: not a file to read */
  if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
      (uint64_t)size > FUSE__MAX_BYTES || fseek(f, 0, SEEK_SET) != 0) {
    if (f) fclose(f);
    *out = fuse_graph_create(alloc);
    if (!*out) return FUSE_ERROR_OUT_OF_MEMORY;
    fuse__fail(*out, FUSE_ERROR_IO, "onnx: cannot read '%s'", path ? path : "(NULL path)");
    return FUSE_ERROR_IO;
  }
  data = fuse__alloc(&a, (size_t)size, 16);
  if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    fuse__free(&a, data);
    *out = fuse_graph_create(alloc);
    if (!*out) return FUSE_ERROR_OUT_OF_MEMORY;
    fuse__fail(*out, data ? FUSE_ERROR_IO : FUSE_ERROR_OUT_OF_MEMORY,
               data ? "onnx: cannot read '%s'" : "onnx: out of memory reading '%s'", path);
    return (*out)->status;
  }
  fclose(f);
  r = fuse_onnx_load_memory(data, (size_t)size, alloc, out);
  fuse__free(&a, data);
  return r;
}
#endif

FUSE_API fuse_result fuse_onnx_load_tensor(const void *data, size_t size,
                                           const fuse_allocator *alloc, fuse_onnx_tensor *out) {
  fuse__otensor t;
  fuse__slice msg;
  fuse_allocator a;
  int64_t count = 1;
  int i;
  char why[64];
  fuse__out o;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  memset(&a, 0, sizeof a);
  if (alloc) a = *alloc;
  o.buf = out->error;
  o.len = 0;
  o.cap = sizeof out->error;
  o.write = NULL;
  o.user = NULL;
  if (!a.alloc != !a.free) { /* the data could not be freed */
    fuse__puts(&o, "onnx tensor: the allocator needs both alloc and free (or neither)");
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  if (!data && size) {
    fuse__puts(&o, "onnx tensor: data is NULL");
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  msg.p = (const unsigned char *)data;
  msg.n = data ? size : 0;
  why[0] = 0;
  if (!fuse__onnx_tensor_meta(msg, &t, why, sizeof why)) {
    fuse__puts(&o, "onnx tensor: malformed data");
    if (why[0]) { /* e.g. "more than 8 dimensions" */
      why[sizeof why - 1] = 0;
      fuse__puts(&o, " (");
      fuse__puts(&o, why);
      fuse__puts(&o, ")");
    }
    return FUSE_ERROR_PARSE;
  }
  if (t.dtype != FUSE__DT_FLOAT) {
    fuse__puts(&o, "onnx tensor: data type ");
    fuse__put_int(&o, t.dtype);
    fuse__puts(&o, " is not float32");
    return FUSE_ERROR_UNSUPPORTED;
  }
  if (t.external) {
    fuse__puts(&o, "onnx tensor: external data is not supported");
    return FUSE_ERROR_UNSUPPORTED;
  }
  if ((i = fuse__onnx_tensor_count(&t, &count)) >= 0) {
    fuse__puts(&o, "onnx tensor: a dimension is zero or out of range");
    return t.dims[i] == 0 ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_PARSE;
  }
  if (fuse__onnx_tensor_values(&t, NULL, NULL, 0) != count) { /* before allocating */
    fuse__puts(&o, "onnx tensor: the data does not match the dimensions");
    return FUSE_ERROR_PARSE;
  }
  out->data = (float *)fuse__alloc(&a, (size_t)count * sizeof(float), FUSE__ALIGN);
  if (!out->data) {
    fuse__puts(&o, "onnx tensor: out of memory");
    return FUSE_ERROR_OUT_OF_MEMORY;
  }
  fuse__onnx_tensor_values(&t, out->data, NULL, count); /* counted above: it fits */
  out->rank = t.rank;
  memcpy(out->shape, t.dims, sizeof t.dims);
  i = (int)(t.name.n < sizeof out->name - 1 ? t.name.n : sizeof out->name - 1);
  if (i) memcpy(out->name, t.name.p, (size_t)i);
  out->name[i] = 0;
  return FUSE_OK;
}

FUSE_API void fuse_onnx_tensor_free(fuse_onnx_tensor *t, const fuse_allocator *alloc) {
  fuse_allocator a;
  if (!t) return;
  memset(&a, 0, sizeof a);
  if (alloc) a = *alloc;
  if (!a.alloc != !a.free) return; /* fuse_onnx_load_tensor refuses such an allocator */
  fuse__free(&a, t->data);
  t->data = NULL;
}
#endif /* FUSE_NO_ONNX */
/* ==== end src/onnx_load.c ==== */
/* ==== begin src/undefs.h ==== */

/* internal helper macros end with the implementation */
#undef FUSE__PAT_MAX_NODES
#undef FUSE__PAT_MAX_CAPTURES
#undef FUSE__PAT_MAX_ATTRS
#undef FUSE__MATCH_MAX
#undef FUSE__CLAMP
#undef FUSE__BIAS
#undef FUSE__RULES
#ifdef FUSE__SIMD
#undef FUSE__SIMD
#endif
#undef FUSE__PANEL_BYTES
#undef FUSE__NCHW_GEMM_WEIGHTS
#undef FUSE__NCHW_GEMM_PANEL
#undef FUSE__L1_PANEL
#undef FUSE__PTR_CACHE
#undef FUSE__NCHW_PACK_RUNS
#undef FUSE__ACCUMULATE
#undef FUSE__FINISH
#undef FUSE__FEW_CHANNELS_SEGS
#undef FUSE__FEW_CHANNELS_BUF
#undef FUSE__DWC_BUF
#undef FUSE__UNROLL
#ifdef FUSE__ASAN
#undef FUSE__ASAN
#endif
#undef FUSE__TILE_INLINE
#undef FUSE__ALIGN
#undef FUSE__MAX_DIM
#undef FUSE__MAX_BYTES
#undef FUSE__INLINE_CONST_MAX
#undef FUSE__MAX_PARSE_ATTRS
#ifdef FUSE__X86
#undef FUSE__X86
#endif
/* ==== end src/undefs.h ==== */
#endif /* FUSE_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 the fuse.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
