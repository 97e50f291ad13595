/* ------------------------------------------------------------ the operators -- */
/* What every stage knows about an op, the runtime included (a FUSE_RUNTIME_ONLY build has this
   file and not the graph's): the op enum, the attributes a node or a plan step keeps, and the
   operator table. */

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
  /* element-wise math (graph/builders_math.c) */
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
  FUSE__OP_SOFTSIGN,
  FUSE__OP_SHRINK,      /* alpha = lambd, beta = bias */
  FUSE__OP_DIV,
  FUSE__OP_POW,
  FUSE__OP_PRELU,
  FUSE__OP_WHERE,
  /* data movement (graph/builders_shape.c) */
  FUSE__OP_SLICE,  /* a.slice */
  FUSE__OP_GATHER, /* operand 2: the indices as a float constant; a.axis */
  FUSE__OP_EXPAND,
  FUSE__OP_TILE,
  FUSE__OP_PAD,    /* a.pad */
  FUSE__OP_RESIZE, /* a.resize */
  /* reductions, normalizations (graph/builders_nn.c) */
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
  /* transposed convolution (graph/builders_layers.c) */
  FUSE__OP_CONV_TRANSPOSE2D, /* a.convt */
  /* quantization (graph/builders_quant.c, run/reference_quant.c): x, scale, zero point */
  FUSE__OP_QUANTIZE,   /* a.quant.axis; its type is the zero point's */
  FUSE__OP_DEQUANTIZE, /* a.quant.axis */
  FUSE__OP_COPY,    /* plan only: copies a value into an output buffer */
  FUSE__OP_TO_NHWC, /* plan only: layout conversions */
  FUSE__OP_TO_NCHW,
  FUSE__OP_CHAIN,   /* plan only: element-wise ops run as one pass (kernels/chain_rows.c) */
  /* plan only: a quantized model's integer steps (passes/quant.c, run/quant_run.c) */
  FUSE__OP_QCONV2D,
  FUSE__OP_QADD,
  FUSE__OP_QLUT,
  FUSE__OP_QMAX_POOL2D,
  FUSE__OP_QTO_NHWC, /* plan only: layout conversions of uint8 / int8 tensors (integer steps, so
                        an integer plan's firmware carries no float layout code) */
  FUSE__OP_QTO_NCHW,
  FUSE__OP_QMATMUL, /* plan only: a quantized model's integer matmul / Gemm (after the others: a
                       blob's op numbers stay those of the plans saved before it) */
  FUSE__OP_QGLOBAL_AVG_POOL2D, /* plan only: its integer global average pool (last, as qmatmul) */
  FUSE__OP_COUNT
} fuse__op;

/* A runtime-only build that leaves the integer global average pool out
   (FUSE_NO_KERNEL_QGLOBAL_AVG_POOL, which --emit-config writes for plans without one) has no
   table row for its op, the last: fuse_plan_load refuses an op past the table, so its plans
   hold none, and a firmware pays no byte for it. The table has FUSE__OP_ROWS rows. */
#if defined(FUSE_RUNTIME_ONLY) && defined(FUSE_NO_KERNEL_QGLOBAL_AVG_POOL)
#define FUSE__HAS_OP_QGLOBAL_AVG_POOL2D 0
#else
#define FUSE__HAS_OP_QGLOBAL_AVG_POOL2D 1
#endif
#define FUSE__OP_ROWS (FUSE__OP_COUNT - 1 + FUSE__HAS_OP_QGLOBAL_AVG_POOL2D)

/* patterns keep a set of ops as the bits of a uint64_t */
typedef char fuse__ops_fit_a_pattern_mask[FUSE__OP_COPY <= 64 ? 1 : -1];

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
  struct {
    int axis; /* of the per-axis scale and zero point, normalized to 0..rank-1 (0 per tensor) */
  } quant;
} fuse__attrs;

/* Bytes of one element of a fuse_type. */
static size_t fuse__type_size(int type) {
  return type == FUSE_UINT8 || type == FUSE_INT8 ? 1 : 4;
}

/* v rounded to the nearest whole number, ties to even, as ONNX's QuantizeLinear rounds; exact
   for every float (|v| - trunc(|v|) is exact; from 2^23 on floats are whole), independent of
   the rounding mode, and without libm (a Cortex-M firmware's C library may lack floorf). */
static float fuse__round_half_even(float v) {
  float a = v < 0 ? -v : v, r, d;
  if (!(a < 8388608.0f)) return v; /* whole already, or NaN / infinity */
  r = (float)(int32_t)a;
  d = a - r;
  if (d > 0.5f || (d == 0.5f && ((int32_t)r & 1))) r += 1.0f;
  return v < 0 ? -r : r;
}

/* An integer step's packed bytes (the qconv2d, qmatmul, qadd, qlut, qmax_pool2d and
   qglobal_avg_pool2d steps of a quantized model: plan/quant_pack.c, run/quant_run.c) start
   with this header (qglobal_avg_pool2d: nothing after it). Then qconv2d:
   int32 bias[Kp] (in units of x_scale * w_scale[k]), float scale[Kp] (x_scale * w_scale[k] /
   y_scale), the weights in `layout` (kernels/qconv.c; Kp = K for the direct form, else K
   rounded up to 16, the padding's bias and scale 0); qmatmul: the same as a 1x1 qconv2d's
   whose pixels are the rows of its input (K = the output's columns, C = the input's); qadd:
   num_post element-wise ops of 5 words each (kind, lo, hi, alpha, beta); qlut, qmax_pool2d:
   the 256 output values of the input values 0..255 (as int8: -128..127 at 128..255's
   places). */
typedef struct fuse__qhead {
  int32_t x_zero, y_zero; /* the input's and the output's zero points */
  int32_t lo, hi;         /* the output's clamp: its type's range, narrowed by a relu / clip */
  int32_t K, C, KH, KW;   /* qconv2d: output channels, input channels (all groups), the kernel
                             (qmatmul: output and input columns, a 1x1 kernel);
                             qadd: K = 1 when a table of 256 outputs follows its ops (a qlut
                             merged in, plan/quant_pack.c) */
  int32_t layout;         /* qconv2d, qmatmul: 0, the graph's [K][C / groups][KH][KW] */
  int32_t b_zero;         /* qadd: the second input's zero point */
  float x_scale, b_scale, y_scale; /* qadd; qglobal_avg_pool2d: x_scale, y_scale */
  int32_t num_post;       /* qadd */
  int32_t y_signed;       /* the output is int8 (else uint8) */
  int32_t depthwise;      /* qconv2d: groups = channels = output channels */
} fuse__qhead;
typedef char fuse__qhead_is_64_bytes[sizeof(fuse__qhead) == 64 ? 1 : -1];

/* A qglobal_avg_pool2d's multiplier of its int32 sums (each the pixels' values less the zero
   point's share), as ONNX Runtime's QLinearGlobalAveragePool forms it: in float32, y_scale
   times the pixel count first. ONNX Runtime refuses the pool (an error when it runs) where
   pixels >= 2^24 or the multiplier is outside [2^-32, 256): those stay in float32
   (fuse__qgap_fits, passes/quant.c). */
static float fuse__qgap_scale(float x_scale, float y_scale, int64_t pixels) {
  float denominator = y_scale * (float)pixels;
  return x_scale / denominator;
}
static int fuse__qgap_in_range(float x_scale, float y_scale, int64_t pixels) {
  float m = pixels >= 1 && pixels < 16777216 ? fuse__qgap_scale(x_scale, y_scale, pixels) : 0.0f;
  return m >= 2.3283064365386963e-10f && m < 256.0f; /* 2^-32 */
}
#define FUSE__QPOST_WORDS 5

typedef struct fuse__node {
  int op;
  int type; /* fuse_type of its elements */
  int rank;
  int num_in;
  int64_t shape[FUSE_MAX_RANK];
  fuse_value *in; /* operands */
  char *name;     /* NULL: unnamed */
  float *data;    /* constants: numel elements of its type (floats but for typed constants),
                     FUSE__ALIGN-aligned; NULL while raw is set */
  const unsigned char *raw; /* a constant still in the file the graph maps (fuse__const_floats) */
  int raw_transposed;       /* raw holds the transpose, [shape[1]][shape[0]] */
  int composite;  /* the composite this op belongs to, or -1 */
  fuse__attrs a;
} fuse__node;

/* ------------------------------------------------------------ the operator table -- */
/* Everything the library knows about an op that is a fact rather than code is one row of
   fuse__ops below, in the way ggml's op tables, XNNPACK's manifests and ONNX's schemas keep
   such facts in one place: the text form, the listings and the messages spell it with `name`;
   the text reader checks its operand count and attributes and builds it with `build`
   (graph/text_build.c); the text writer prints the attributes from where `attrs` says the
   node keeps them; the ONNX reader imports an element-wise op whose `onnx` name it has
   through the row (onnx/convert_math.c); the runner calls the reference kernel of its `run`
   kind (run/run.c); the layouts, the epilogue analyzer, the fusion report and the chain
   finder read its `flags`, `post` and `chain`. docs/source-map.md's checklist says which
   rows and functions a new op needs. */

/* An attribute of an op in the text form: its name and form ('i' whole number, 'f' number,
   '2' / '4' list of that many whole numbers, 'l' list of up to 8 whole numbers, 'F' list of
   up to 8 numbers); where the node keeps it (`at`: offsetof(fuse__node, ...), -1 when only
   the builder reads it) and how (`store`: 'i' int, 'E' one of resize's enums, 'f' float,
   'n' ints as many as the form says, 'r' one int per axis of the node, 'e' one int per axis
   after the first rank of them (pad's ends), 'L' one int64_t per axis, 'F' one float per
   axis, printed when the first is above 0, 'm' axes as the bits of an unsigned); the value
   when the text leaves it out (`dflt`, for 'i' and 'f'). A list of them ends with a NULL
   name. */
typedef struct fuse__attr_spec {
  const char *name;
  char form, store;
  int at;
#ifndef FUSE_RUNTIME_ONLY
  double dflt; /* FUSE__DEFAULT(v): the text form's, which a runtime-only build does not read */
#endif
} fuse__attr_spec;
#ifdef FUSE_RUNTIME_ONLY
#define FUSE__DEFAULT(v)
#else
#define FUSE__DEFAULT(v) v
#endif
#define FUSE__ATTRS_END {NULL, 0, 0, -1, FUSE__DEFAULT(0)}

#define FUSE__AT(member) ((int)offsetof(fuse__node, member))
static const fuse__attr_spec fuse__attrs_none[] = {FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_conv[] = {
    {"strides", '2', 'n', FUSE__AT(a.conv.strides), FUSE__DEFAULT(0)},
    {"padding", '4', 'n', FUSE__AT(a.conv.padding), FUSE__DEFAULT(0)},
    {"dilation", '2', 'n', FUSE__AT(a.conv.dilation), FUSE__DEFAULT(0)},
    {"groups", 'i', 'i', FUSE__AT(a.conv.groups), FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_clip[] = {
    {"lo", 'f', 'f', FUSE__AT(a.clip.lo), FUSE__DEFAULT(-HUGE_VAL)},
    {"hi", 'f', 'f', FUSE__AT(a.clip.hi), FUSE__DEFAULT(HUGE_VAL)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_shape[] = { /* reshape, expand: the output's shape */
    {"shape", 'l', 'L', FUSE__AT(shape), FUSE__DEFAULT(0)}, FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_axis0[] = { /* concat, gather */
    {"axis", 'i', 'i', FUSE__AT(a.axis), FUSE__DEFAULT(0)}, FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_axis1[] = { /* flatten */
    {"axis", 'i', 'i', FUSE__AT(a.axis), FUSE__DEFAULT(1)}, FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_axis_last[] = { /* softmax, log_softmax */
    {"axis", 'i', 'i', FUSE__AT(a.axis), FUSE__DEFAULT(-1)}, FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_eps[] = {
    {"eps", 'f', 'f', FUSE__AT(a.eps), FUSE__DEFAULT(1e-5)}, FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_perm[] = {
    {"perm", 'l', 'r', FUSE__AT(a.perm), FUSE__DEFAULT(0)}, FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_max_pool[] = {
    {"kernel", '2', 'n', FUSE__AT(a.pool.kernel), FUSE__DEFAULT(0)},
    {"strides", '2', 'n', FUSE__AT(a.pool.strides), FUSE__DEFAULT(0)},
    {"padding", '4', 'n', FUSE__AT(a.pool.padding), FUSE__DEFAULT(0)},
    {"dilation", '2', 'n', FUSE__AT(a.pool.dilation), FUSE__DEFAULT(0)},
    {"ceil_mode", 'i', 'i', FUSE__AT(a.pool.ceil_mode), FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_avg_pool[] = {
    {"kernel", '2', 'n', FUSE__AT(a.pool.kernel), FUSE__DEFAULT(0)},
    {"strides", '2', 'n', FUSE__AT(a.pool.strides), FUSE__DEFAULT(0)},
    {"padding", '4', 'n', FUSE__AT(a.pool.padding), FUSE__DEFAULT(0)},
    {"ceil_mode", 'i', 'i', FUSE__AT(a.pool.ceil_mode), FUSE__DEFAULT(0)},
    {"count_include_pad", 'i', 'i', FUSE__AT(a.pool.count_include_pad), FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
/* element-wise math's parameters: a.unary */
static const fuse__attr_spec fuse__attrs_hardsigmoid[] = {
    {"alpha", 'f', 'f', FUSE__AT(a.unary.alpha), FUSE__DEFAULT(0.2)},
    {"beta", 'f', 'f', FUSE__AT(a.unary.beta), FUSE__DEFAULT(0.5)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_leaky_relu[] = {
    {"alpha", 'f', 'f', FUSE__AT(a.unary.alpha), FUSE__DEFAULT(0.01)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_elu[] = {
    {"alpha", 'f', 'f', FUSE__AT(a.unary.alpha), FUSE__DEFAULT(1.0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_selu[] = {
    {"alpha", 'f', 'f', FUSE__AT(a.unary.alpha), FUSE__DEFAULT(1.67326319217681884765625)},
    {"gamma", 'f', 'f', FUSE__AT(a.unary.beta), FUSE__DEFAULT(1.05070102214813232421875)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_gelu[] = {
    {"approximate", 'i', 'i', FUSE__AT(a.unary.mode), FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_shrink[] = {
    {"lambd", 'f', 'f', FUSE__AT(a.unary.alpha), FUSE__DEFAULT(0.5)},
    {"bias", 'f', 'f', FUSE__AT(a.unary.beta), FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_repeats[] = { /* tile: a.slice.step holds them */
    {"repeats", 'l', 'L', FUSE__AT(a.slice.step), FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_pad[] = {
    {"begins", 'l', 'r', FUSE__AT(a.pad.pads), FUSE__DEFAULT(0)},
    {"ends", 'l', 'e', FUSE__AT(a.pad.pads), FUSE__DEFAULT(0)},
    {"value", 'f', 'f', FUSE__AT(a.pad.value), FUSE__DEFAULT(0)},
    {"mode", 'i', 'i', FUSE__AT(a.pad.mode), FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_resize[] = {
    {"sizes", 'l', 'L', FUSE__AT(shape), FUSE__DEFAULT(0)},
    {"scales", 'F', 'F', FUSE__AT(a.resize.scales), FUSE__DEFAULT(0)},
    {"mode", 'i', 'E', FUSE__AT(a.resize.r.mode), FUSE__DEFAULT(0)},
    {"coordinates", 'i', 'E', FUSE__AT(a.resize.r.coordinates), FUSE__DEFAULT(0)},
    {"nearest", 'i', 'E', FUSE__AT(a.resize.r.nearest), FUSE__DEFAULT(0)},
    {"cubic_coeff_a", 'f', 'f', FUSE__AT(a.resize.r.cubic_coeff_a), FUSE__DEFAULT(0)},
    {"exclude_outside", 'i', 'i', FUSE__AT(a.resize.r.exclude_outside), FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_reduce[] = {
    {"axes", 'l', 'm', FUSE__AT(a.reduce.axes), FUSE__DEFAULT(0)},
    {"keepdims", 'i', 'i', FUSE__AT(a.reduce.keepdims), FUSE__DEFAULT(1)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_layer_norm[] = {
    {"axis", 'i', 'i', FUSE__AT(a.norm.axis), FUSE__DEFAULT(-1)},
    {"eps", 'f', 'f', FUSE__AT(a.norm.eps), FUSE__DEFAULT(1e-5)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_instance_norm[] = {
    {"eps", 'f', 'f', FUSE__AT(a.norm.eps), FUSE__DEFAULT(1e-5)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_group_norm[] = {
    {"groups", 'i', 'i', FUSE__AT(a.norm.groups), FUSE__DEFAULT(0)},
    {"eps", 'f', 'f', FUSE__AT(a.norm.eps), FUSE__DEFAULT(1e-5)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_slice[] = { /* every axis: first element, count, step */
    {"starts", 'l', 'L', FUSE__AT(a.slice.start), FUSE__DEFAULT(0)},
    {"ends", 'l', 0, -1, FUSE__DEFAULT(0)},
    {"sizes", 'l', 'L', FUSE__AT(shape), FUSE__DEFAULT(0)},
    {"steps", 'l', 'L', FUSE__AT(a.slice.step), FUSE__DEFAULT(0)},
    {"axes", 'l', 0, -1, FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_conv_transpose[] = {
    {"strides", '2', 'n', FUSE__AT(a.convt.strides), FUSE__DEFAULT(0)},
    {"padding", '4', 'n', FUSE__AT(a.convt.padding), FUSE__DEFAULT(0)},
    {"output_padding", '2', 'n', FUSE__AT(a.convt.output_padding), FUSE__DEFAULT(0)},
    {"dilation", '2', 'n', FUSE__AT(a.convt.dilation), FUSE__DEFAULT(0)},
    {"groups", 'i', 'i', FUSE__AT(a.convt.groups), FUSE__DEFAULT(0)},
    FUSE__ATTRS_END};
static const fuse__attr_spec fuse__attrs_quant[] = {
    {"axis", 'i', 'i', FUSE__AT(a.quant.axis), FUSE__DEFAULT(1)}, FUSE__ATTRS_END};
#undef FUSE__AT
/* The resize enums ('E'): one size for the three, an int's or less (C compilers for small
   targets may give an enum of small values one byte: -fshort-enums, the ARM EABI's default
   for bare metal) */
typedef char fuse__attr_enums_agree[sizeof(fuse_resize_coordinates) == sizeof(fuse_resize_mode) &&
                                            sizeof(fuse_resize_nearest) == sizeof(fuse_resize_mode)
                                        ? 1
                                        : -1];
/* The reference kernel an op's step runs (run/run.c holds them in this order). */
typedef enum fuse__run_kind {
  FUSE__RUN_UNARY, /* relu, clip, sigmoid, the copies (reshape, flatten, copy) */
  FUSE__RUN_CONV2D,
  FUSE__RUN_MATMUL,
  FUSE__RUN_BINARY, /* add, sub, mul, maximum, minimum */
  FUSE__RUN_CONCAT,
  FUSE__RUN_TRANSPOSE,
  FUSE__RUN_SOFTMAX,
  FUSE__RUN_BATCH_NORM,
  FUSE__RUN_POOL,
  FUSE__RUN_GLOBAL_AVG_POOL,
  FUSE__RUN_LAYOUT,
  FUSE__RUN_CHAIN,
  FUSE__RUN_MATH_UNARY,     /* run/reference_math.c's functions of one value */
  FUSE__RUN_MATH_BROADCAST, /* div, pow, prelu, where */
  FUSE__RUN_GATHER,
  FUSE__RUN_EXPAND,
  FUSE__RUN_TILE,
  FUSE__RUN_PAD,
  FUSE__RUN_RESIZE,
  FUSE__RUN_REDUCE,
  FUSE__RUN_LOG_SOFTMAX,
  FUSE__RUN_NORM,
  FUSE__RUN_SLICE,
  FUSE__RUN_CONV_TRANSPOSE2D,
  FUSE__RUN_QUANT, /* quantize, dequantize */
  FUSE__RUN_QINT,  /* a quantized model's integer steps: qconv2d, qmatmul, qadd, qlut,
                      qmax_pool2d */
  FUSE__RUN_COUNT
} fuse__run_kind;

/* What a chain step (plan/chains.c, kernels/chain.inc) runs an element-wise op as. */
enum {
  FUSE__CHAIN_POST,       /* post.kind (the row's `post`) through fuse__post_apply */
  FUSE__CHAIN_ADD,        /* binary: v op o, or o op v when swap */
  FUSE__CHAIN_SUB,
  FUSE__CHAIN_MUL,
  FUSE__CHAIN_DIV,
  FUSE__CHAIN_MAX,        /* maximum, minimum: a NaN of either operand stays */
  FUSE__CHAIN_MIN,
  FUSE__CHAIN_POW,        /* powf lane by lane */
  FUSE__CHAIN_PRELU,      /* v < 0 ? o * v : v */
  FUSE__CHAIN_SQRT,       /* unary */
  FUSE__CHAIN_RECIPROCAL,
  FUSE__CHAIN_SQUARE,     /* pow(v, 2) */
  FUSE__CHAIN_CUBE,       /* pow(v, 3) */
  FUSE__CHAIN_NEG,
  FUSE__CHAIN_ABS,
  FUSE__CHAIN_FLOOR,
  FUSE__CHAIN_CEIL,
  FUSE__CHAIN_LOG,
  FUSE__CHAIN_ERF,
  FUSE__CHAIN_SOFTSIGN,   /* v / (1 + |v|) */
  FUSE__CHAIN_SHRINK      /* v < -alpha ? v + beta : v > alpha ? v - beta : 0 (post.alpha, .beta) */
};
#define FUSE__CHAIN_NONE (-1) /* not element-wise */

/* The epilogue analyzer's own kind for erf, a step of GELU's written form (not a fused
   post-op: no kernel applies it) */
#define FUSE__POST_ERF 31

/* An op's flags */
enum {
  FUSE__OPF_ELEMENTWISE = 1, /* what a fused kernel could, arithmetically, apply to a conv2d /
                                matmul output on registers (the fusion report's question) */
  FUSE__OPF_FOLLOWS_NHWC = 2, /* runs in either layout: takes NHWC when an operand is NHWC */
  FUSE__OPF_TAKES_NHWC = 4,   /* a kernel step that reads NHWC (conv2d, pools, concat) */
  FUSE__OPF_EPILOGUE = 8,     /* a post-op of one operand the epilogue analyzer may fold */
  FUSE__OPF_POST_ALPHA = 16,  /* its post-op takes a.unary's alpha and beta */
  FUSE__OPF_TYPED = 32        /* takes operands of any element type (its builder checks them);
                                 every other op takes float32 only */
};

struct fuse__parser;
struct fuse__parse_attr;
/* builds the op from the text form's operands and attributes (graph/text_build.c) */
typedef fuse_value (*fuse__text_build_fn)(struct fuse__parser *ps, int op, const fuse_value *in,
                                          int n_in, const struct fuse__parse_attr *at, int n_at);
/* A row's builder, the text form's (graph/text_build.c), and its ONNX name: none in a
   runtime-only build, which reads no text and no ONNX (its rows have no `build`, FUSE__TEXT is
   empty there, and the builders are not declared; FUSE__ONNX is NULL). */
#ifdef FUSE_RUNTIME_ONLY
#define FUSE__TEXT(name)
#define FUSE__ONNX(name) NULL
#else
#define FUSE__TEXT(name) name
#define FUSE__ONNX(name) name
#define FUSE__TEXT_BUILDER(name)                                                               \
  static fuse_value name(struct fuse__parser *ps, int op, const fuse_value *in, int n_in,      \
                         const struct fuse__parse_attr *at, int n_at)
FUSE__TEXT_BUILDER(fuse__text_conv2d);
FUSE__TEXT_BUILDER(fuse__text_matmul);
FUSE__TEXT_BUILDER(fuse__text_binary);
FUSE__TEXT_BUILDER(fuse__text_unary);
FUSE__TEXT_BUILDER(fuse__text_clip);
FUSE__TEXT_BUILDER(fuse__text_reshape);
FUSE__TEXT_BUILDER(fuse__text_flatten);
FUSE__TEXT_BUILDER(fuse__text_concat);
FUSE__TEXT_BUILDER(fuse__text_softmax);
FUSE__TEXT_BUILDER(fuse__text_batch_norm);
FUSE__TEXT_BUILDER(fuse__text_pool);
FUSE__TEXT_BUILDER(fuse__text_global_avg_pool);
FUSE__TEXT_BUILDER(fuse__text_transpose);
FUSE__TEXT_BUILDER(fuse__text_math);
FUSE__TEXT_BUILDER(fuse__text_gelu);
FUSE__TEXT_BUILDER(fuse__text_prelu);
FUSE__TEXT_BUILDER(fuse__text_where);
FUSE__TEXT_BUILDER(fuse__text_slice);
FUSE__TEXT_BUILDER(fuse__text_gather);
FUSE__TEXT_BUILDER(fuse__text_expand);
FUSE__TEXT_BUILDER(fuse__text_tile);
FUSE__TEXT_BUILDER(fuse__text_pad);
FUSE__TEXT_BUILDER(fuse__text_resize);
FUSE__TEXT_BUILDER(fuse__text_reduce);
FUSE__TEXT_BUILDER(fuse__text_log_softmax);
FUSE__TEXT_BUILDER(fuse__text_layer_norm);
FUSE__TEXT_BUILDER(fuse__text_instance_norm);
FUSE__TEXT_BUILDER(fuse__text_group_norm);
FUSE__TEXT_BUILDER(fuse__text_conv_transpose2d);
FUSE__TEXT_BUILDER(fuse__text_quant);
#endif

/* One row per op, in fuse__op's order (the count is checked when this compiles, the order by
   test_kernels' op_table): its name; the ONNX operator it imports from through the row, or
   NULL; its attributes; its operand counts (max -1: any); flags; reference kernel; what a
   chain step runs it as; its epilogue post-op kind (0: none); its text-form builder (NULL:
   not written as an op). */
typedef struct fuse__op_row {
  int op;
  const char *name, *onnx;
  const fuse__attr_spec *attrs;
  signed char min_in, max_in;
  unsigned char flags;
  signed char run, chain, post;
#ifndef FUSE_RUNTIME_ONLY /* (FUSE__TEXT: no text form, no builder, in a runtime-only build) */
  fuse__text_build_fn build;
#endif
} fuse__op_row;

#define FUSE__E FUSE__OPF_ELEMENTWISE
#define FUSE__F FUSE__OPF_FOLLOWS_NHWC
#define FUSE__T FUSE__OPF_TAKES_NHWC
#define FUSE__P FUSE__OPF_EPILOGUE
#define FUSE__A FUSE__OPF_POST_ALPHA
#define FUSE__Y FUSE__OPF_TYPED
static const fuse__op_row fuse__ops[] = {
    {FUSE__OP_INPUT, "input", NULL, fuse__attrs_none, 0, 0, 0, FUSE__RUN_UNARY,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_CONST, "const", NULL, fuse__attrs_none, 0, 0, 0, FUSE__RUN_UNARY,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_CONV2D, "conv2d", NULL, fuse__attrs_conv, 2, 2, FUSE__T, FUSE__RUN_CONV2D,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_conv2d)},
    {FUSE__OP_MATMUL, "matmul", NULL, fuse__attrs_none, 2, 2, 0, FUSE__RUN_MATMUL,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_matmul)},
    {FUSE__OP_ADD, "add", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F, FUSE__RUN_BINARY,
     FUSE__CHAIN_ADD, 0, FUSE__TEXT(fuse__text_binary)},
    {FUSE__OP_SUB, "sub", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F, FUSE__RUN_BINARY,
     FUSE__CHAIN_SUB, 0, FUSE__TEXT(fuse__text_binary)},
    {FUSE__OP_MUL, "mul", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F, FUSE__RUN_BINARY,
     FUSE__CHAIN_MUL, 0, FUSE__TEXT(fuse__text_binary)},
    {FUSE__OP_MAXIMUM, "maximum", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F,
     FUSE__RUN_BINARY, FUSE__CHAIN_MAX, 0, FUSE__TEXT(fuse__text_binary)},
    {FUSE__OP_MINIMUM, "minimum", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F,
     FUSE__RUN_BINARY, FUSE__CHAIN_MIN, 0, FUSE__TEXT(fuse__text_binary)},
    {FUSE__OP_RELU, "relu", NULL, fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_UNARY, FUSE__CHAIN_POST, FUSE_POST_CLAMP, FUSE__TEXT(fuse__text_unary)},
    {FUSE__OP_CLIP, "clip", NULL, fuse__attrs_clip, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_UNARY, FUSE__CHAIN_POST, FUSE_POST_CLAMP, FUSE__TEXT(fuse__text_clip)},
    {FUSE__OP_SIGMOID, "sigmoid", NULL, fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_UNARY, FUSE__CHAIN_POST, FUSE_POST_SIGMOID, FUSE__TEXT(fuse__text_unary)},
    {FUSE__OP_RESHAPE, "reshape", NULL, fuse__attrs_shape, 1, 1, FUSE__Y, FUSE__RUN_UNARY,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_reshape)},
    {FUSE__OP_FLATTEN, "flatten", NULL, fuse__attrs_axis1, 1, 1, FUSE__Y, FUSE__RUN_UNARY,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_flatten)},
    {FUSE__OP_CONCAT, "concat", NULL, fuse__attrs_axis0, 1, -1, FUSE__F | FUSE__T,
     FUSE__RUN_CONCAT, FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_concat)},
    {FUSE__OP_SOFTMAX, "softmax", NULL, fuse__attrs_axis_last, 1, 1, 0, FUSE__RUN_SOFTMAX,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_softmax)},
    {FUSE__OP_BATCH_NORM, "batch_norm", NULL, fuse__attrs_eps, 5, 5, FUSE__E,
     FUSE__RUN_BATCH_NORM, FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_batch_norm)},
    {FUSE__OP_MAX_POOL2D, "max_pool2d", NULL, fuse__attrs_max_pool, 1, 1, FUSE__F | FUSE__T,
     FUSE__RUN_POOL, FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_pool)},
    {FUSE__OP_AVG_POOL2D, "avg_pool2d", NULL, fuse__attrs_avg_pool, 1, 1, FUSE__F | FUSE__T,
     FUSE__RUN_POOL, FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_pool)},
    {FUSE__OP_GLOBAL_AVG_POOL2D, "global_avg_pool2d", NULL, fuse__attrs_none, 1, 1,
     FUSE__F | FUSE__T, FUSE__RUN_GLOBAL_AVG_POOL, FUSE__CHAIN_NONE, 0,
     FUSE__TEXT(fuse__text_global_avg_pool)},
    {FUSE__OP_TRANSPOSE, "transpose", NULL, fuse__attrs_perm, 1, 1, 0, FUSE__RUN_TRANSPOSE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_transpose)},
    /* element-wise math (graph/builders_math.c, run/reference_math.c) */
    {FUSE__OP_SQRT, "sqrt", FUSE__ONNX("Sqrt"), fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_SQRT, 0, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_RECIPROCAL, "reciprocal", FUSE__ONNX("Reciprocal"), fuse__attrs_none, 1, 1,
     FUSE__E | FUSE__F, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_RECIPROCAL, 0,
     FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_EXP, "exp", FUSE__ONNX("Exp"), fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_EXP, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_LOG, "log", FUSE__ONNX("Log"), fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_LOG, 0, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_NEG, "neg", FUSE__ONNX("Neg"), fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_NEG, FUSE_POST_LINEAR, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_ABS, "abs", FUSE__ONNX("Abs"), fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_ABS, 0, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_FLOOR, "floor", FUSE__ONNX("Floor"), fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_FLOOR, 0, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_CEIL, "ceil", FUSE__ONNX("Ceil"), fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_CEIL, 0, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_ERF, "erf", FUSE__ONNX("Erf"), fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_ERF, FUSE__POST_ERF, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_TANH, "tanh", FUSE__ONNX("Tanh"), fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_TANH, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_SOFTPLUS, "softplus", FUSE__ONNX("Softplus"), fuse__attrs_none, 1, 1,
     FUSE__E | FUSE__F | FUSE__P, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_SOFTPLUS,
     FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_HARDSWISH, "hardswish", FUSE__ONNX("HardSwish"), fuse__attrs_none, 1, 1,
     FUSE__E | FUSE__F | FUSE__P, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_HARDSWISH,
     FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_HARDSIGMOID, "hardsigmoid", FUSE__ONNX("HardSigmoid"), fuse__attrs_hardsigmoid, 1, 1,
     FUSE__E | FUSE__F | FUSE__P | FUSE__A, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST,
     FUSE_POST_HARDSIGMOID, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_LEAKY_RELU, "leaky_relu", FUSE__ONNX("LeakyRelu"), fuse__attrs_leaky_relu, 1, 1,
     FUSE__E | FUSE__F | FUSE__P | FUSE__A, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST,
     FUSE_POST_LEAKY_RELU, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_ELU, "elu", FUSE__ONNX("Elu"), fuse__attrs_elu, 1, 1,
     FUSE__E | FUSE__F | FUSE__P | FUSE__A, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_ELU,
     FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_SELU, "selu", FUSE__ONNX("Selu"), fuse__attrs_selu, 1, 1,
     FUSE__E | FUSE__F | FUSE__P | FUSE__A, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_SELU,
     FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_GELU, "gelu", NULL, fuse__attrs_gelu, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_GELU, FUSE__TEXT(fuse__text_gelu)},
    {FUSE__OP_SOFTSIGN, "softsign", FUSE__ONNX("Softsign"), fuse__attrs_none, 1, 1,
     FUSE__E | FUSE__F, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_SOFTSIGN, 0, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_SHRINK, "shrink", FUSE__ONNX("Shrink"), fuse__attrs_shrink, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_SHRINK, 0, FUSE__TEXT(fuse__text_math)},
    {FUSE__OP_DIV, "div", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_BROADCAST, FUSE__CHAIN_DIV, 0, FUSE__TEXT(fuse__text_binary)},
    {FUSE__OP_POW, "pow", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_BROADCAST, FUSE__CHAIN_POW, 0, FUSE__TEXT(fuse__text_binary)},
    {FUSE__OP_PRELU, "prelu", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_BROADCAST, FUSE__CHAIN_PRELU, 0, FUSE__TEXT(fuse__text_prelu)},
    {FUSE__OP_WHERE, "where", NULL, fuse__attrs_none, 3, 3, FUSE__E, FUSE__RUN_MATH_BROADCAST,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_where)},
    /* data movement (graph/builders_shape.c, run/reference_shape.c) */
    {FUSE__OP_SLICE, "slice", NULL, fuse__attrs_slice, 1, 1, 0, FUSE__RUN_SLICE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_slice)},
    {FUSE__OP_GATHER, "gather", NULL, fuse__attrs_axis0, 2, 2, 0, FUSE__RUN_GATHER,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_gather)},
    {FUSE__OP_EXPAND, "expand", NULL, fuse__attrs_shape, 1, 1, 0, FUSE__RUN_EXPAND,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_expand)},
    {FUSE__OP_TILE, "tile", NULL, fuse__attrs_repeats, 1, 1, 0, FUSE__RUN_TILE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_tile)},
    {FUSE__OP_PAD, "pad", NULL, fuse__attrs_pad, 1, 1, 0, FUSE__RUN_PAD, FUSE__CHAIN_NONE, 0,
     FUSE__TEXT(fuse__text_pad)},
    {FUSE__OP_RESIZE, "resize", NULL, fuse__attrs_resize, 1, 1, 0, FUSE__RUN_RESIZE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_resize)},
    /* reductions, normalizations (graph/builders_nn.c, run/reference_nn.c) */
    {FUSE__OP_REDUCE_MEAN, "reduce_mean", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_reduce)},
    {FUSE__OP_REDUCE_SUM, "reduce_sum", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_reduce)},
    {FUSE__OP_REDUCE_MAX, "reduce_max", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_reduce)},
    {FUSE__OP_REDUCE_MIN, "reduce_min", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_reduce)},
    {FUSE__OP_REDUCE_L2, "reduce_l2", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_reduce)},
    {FUSE__OP_REDUCE_PROD, "reduce_prod", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_reduce)},
    {FUSE__OP_REDUCE_SUM_SQUARE, "reduce_sum_square", NULL, fuse__attrs_reduce, 1, 1, 0,
     FUSE__RUN_REDUCE, FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_reduce)},
    {FUSE__OP_LOG_SOFTMAX, "log_softmax", NULL, fuse__attrs_axis_last, 1, 1, 0,
     FUSE__RUN_LOG_SOFTMAX, FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_log_softmax)},
    {FUSE__OP_LAYER_NORM, "layer_norm", NULL, fuse__attrs_layer_norm, 2, 3, 0, FUSE__RUN_NORM,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_layer_norm)},
    {FUSE__OP_INSTANCE_NORM, "instance_norm", NULL, fuse__attrs_instance_norm, 3, 3, 0,
     FUSE__RUN_NORM, FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_instance_norm)},
    {FUSE__OP_GROUP_NORM, "group_norm", NULL, fuse__attrs_group_norm, 3, 3, 0, FUSE__RUN_NORM,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_group_norm)},
    /* transposed convolution (graph/builders_layers.c, run/reference_layers.c) */
    {FUSE__OP_CONV_TRANSPOSE2D, "conv_transpose2d", NULL, fuse__attrs_conv_transpose, 2, 2, 0,
     FUSE__RUN_CONV_TRANSPOSE2D, FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_conv_transpose2d)},
    /* quantization (graph/builders_quant.c, run/reference_quant.c) */
    {FUSE__OP_QUANTIZE, "quantize", NULL, fuse__attrs_quant, 2, 3, FUSE__Y, FUSE__RUN_QUANT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_quant)},
    {FUSE__OP_DEQUANTIZE, "dequantize", NULL, fuse__attrs_quant, 2, 3, FUSE__Y, FUSE__RUN_QUANT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(fuse__text_quant)},
    /* plan only */
    {FUSE__OP_COPY, "copy", NULL, fuse__attrs_none, 1, 1, FUSE__Y, FUSE__RUN_UNARY,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_TO_NHWC, "to_nhwc", NULL, fuse__attrs_none, 1, 1, 0, FUSE__RUN_LAYOUT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_TO_NCHW, "to_nchw", NULL, fuse__attrs_none, 1, 1, 0, FUSE__RUN_LAYOUT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_CHAIN, "chain", NULL, fuse__attrs_none, 1, -1, 0, FUSE__RUN_CHAIN,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_QCONV2D, "qconv2d", NULL, fuse__attrs_conv, 1, 1, FUSE__Y, FUSE__RUN_QINT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_QADD, "qadd", NULL, fuse__attrs_none, 2, 2, FUSE__Y | FUSE__F, FUSE__RUN_QINT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_QLUT, "qlut", NULL, fuse__attrs_none, 1, 1, FUSE__Y | FUSE__F, FUSE__RUN_QINT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_QMAX_POOL2D, "qmax_pool2d", NULL, fuse__attrs_max_pool, 1, 1, FUSE__Y | FUSE__F,
     FUSE__RUN_QINT, FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_QTO_NHWC, "qto_nhwc", NULL, fuse__attrs_none, 1, 1, FUSE__Y, FUSE__RUN_QINT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_QTO_NCHW, "qto_nchw", NULL, fuse__attrs_none, 1, 1, FUSE__Y, FUSE__RUN_QINT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
    {FUSE__OP_QMATMUL, "qmatmul", NULL, fuse__attrs_none, 1, 1, FUSE__Y, FUSE__RUN_QINT,
     FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
#if FUSE__HAS_OP_QGLOBAL_AVG_POOL2D
    {FUSE__OP_QGLOBAL_AVG_POOL2D, "qglobal_avg_pool2d", NULL, fuse__attrs_none, 1, 1, FUSE__Y,
     FUSE__RUN_QINT, FUSE__CHAIN_NONE, 0, FUSE__TEXT(NULL)},
#endif
};
#undef FUSE__E
#undef FUSE__F
#undef FUSE__T
#undef FUSE__P
#undef FUSE__A
#undef FUSE__Y
typedef char fuse__ops_cover_the_enum[sizeof fuse__ops / sizeof fuse__ops[0] == FUSE__OP_ROWS
                                          ? 1
                                          : -1];
