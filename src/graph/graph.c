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
  FUSE__OP_COPY,    /* plan only: copies a value into an output buffer */
  FUSE__OP_TO_NHWC, /* plan only: layout conversions */
  FUSE__OP_TO_NCHW,
  FUSE__OP_CHAIN,   /* plan only: element-wise ops run as one pass (kernels/chain_rows.c) */
  FUSE__OP_COUNT
} fuse__op;

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
} fuse__attrs;

typedef struct fuse__node {
  int op;
  int rank;
  int num_in;
  int64_t shape[FUSE_MAX_RANK];
  fuse_value *in; /* operands */
  char *name;     /* NULL: unnamed */
  float *data;    /* constants: numel floats, FUSE__ALIGN-aligned; NULL while raw is set */
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
  double dflt;
} fuse__attr_spec;

#define FUSE__AT(member) ((int)offsetof(fuse__node, member))
static const fuse__attr_spec fuse__attrs_none[] = {{NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_conv[] = {
    {"strides", '2', 'n', FUSE__AT(a.conv.strides), 0},
    {"padding", '4', 'n', FUSE__AT(a.conv.padding), 0},
    {"dilation", '2', 'n', FUSE__AT(a.conv.dilation), 0},
    {"groups", 'i', 'i', FUSE__AT(a.conv.groups), 0},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_clip[] = {
    {"lo", 'f', 'f', FUSE__AT(a.clip.lo), -HUGE_VAL},
    {"hi", 'f', 'f', FUSE__AT(a.clip.hi), HUGE_VAL},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_shape[] = { /* reshape, expand: the output's shape */
    {"shape", 'l', 'L', FUSE__AT(shape), 0}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_axis0[] = { /* concat, gather */
    {"axis", 'i', 'i', FUSE__AT(a.axis), 0}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_axis1[] = { /* flatten */
    {"axis", 'i', 'i', FUSE__AT(a.axis), 1}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_axis_last[] = { /* softmax, log_softmax */
    {"axis", 'i', 'i', FUSE__AT(a.axis), -1}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_eps[] = {
    {"eps", 'f', 'f', FUSE__AT(a.eps), 1e-5}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_perm[] = {
    {"perm", 'l', 'r', FUSE__AT(a.perm), 0}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_max_pool[] = {
    {"kernel", '2', 'n', FUSE__AT(a.pool.kernel), 0},
    {"strides", '2', 'n', FUSE__AT(a.pool.strides), 0},
    {"padding", '4', 'n', FUSE__AT(a.pool.padding), 0},
    {"dilation", '2', 'n', FUSE__AT(a.pool.dilation), 0},
    {"ceil_mode", 'i', 'i', FUSE__AT(a.pool.ceil_mode), 0},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_avg_pool[] = {
    {"kernel", '2', 'n', FUSE__AT(a.pool.kernel), 0},
    {"strides", '2', 'n', FUSE__AT(a.pool.strides), 0},
    {"padding", '4', 'n', FUSE__AT(a.pool.padding), 0},
    {"ceil_mode", 'i', 'i', FUSE__AT(a.pool.ceil_mode), 0},
    {"count_include_pad", 'i', 'i', FUSE__AT(a.pool.count_include_pad), 0},
    {NULL, 0, 0, -1, 0}};
/* element-wise math's parameters: a.unary */
static const fuse__attr_spec fuse__attrs_hardsigmoid[] = {
    {"alpha", 'f', 'f', FUSE__AT(a.unary.alpha), 0.2},
    {"beta", 'f', 'f', FUSE__AT(a.unary.beta), 0.5},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_leaky_relu[] = {
    {"alpha", 'f', 'f', FUSE__AT(a.unary.alpha), 0.01}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_elu[] = {
    {"alpha", 'f', 'f', FUSE__AT(a.unary.alpha), 1.0}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_selu[] = {
    {"alpha", 'f', 'f', FUSE__AT(a.unary.alpha), 1.67326319217681884765625},
    {"gamma", 'f', 'f', FUSE__AT(a.unary.beta), 1.05070102214813232421875},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_gelu[] = {
    {"approximate", 'i', 'i', FUSE__AT(a.unary.mode), 0}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_shrink[] = {
    {"lambd", 'f', 'f', FUSE__AT(a.unary.alpha), 0.5},
    {"bias", 'f', 'f', FUSE__AT(a.unary.beta), 0},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_repeats[] = { /* tile: a.slice.step holds them */
    {"repeats", 'l', 'L', FUSE__AT(a.slice.step), 0}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_pad[] = {
    {"begins", 'l', 'r', FUSE__AT(a.pad.pads), 0},
    {"ends", 'l', 'e', FUSE__AT(a.pad.pads), 0},
    {"value", 'f', 'f', FUSE__AT(a.pad.value), 0},
    {"mode", 'i', 'i', FUSE__AT(a.pad.mode), 0},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_resize[] = {
    {"sizes", 'l', 'L', FUSE__AT(shape), 0},
    {"scales", 'F', 'F', FUSE__AT(a.resize.scales), 0},
    {"mode", 'i', 'E', FUSE__AT(a.resize.r.mode), 0},
    {"coordinates", 'i', 'E', FUSE__AT(a.resize.r.coordinates), 0},
    {"nearest", 'i', 'E', FUSE__AT(a.resize.r.nearest), 0},
    {"cubic_coeff_a", 'f', 'f', FUSE__AT(a.resize.r.cubic_coeff_a), 0},
    {"exclude_outside", 'i', 'i', FUSE__AT(a.resize.r.exclude_outside), 0},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_reduce[] = {
    {"axes", 'l', 'm', FUSE__AT(a.reduce.axes), 0},
    {"keepdims", 'i', 'i', FUSE__AT(a.reduce.keepdims), 1},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_layer_norm[] = {
    {"axis", 'i', 'i', FUSE__AT(a.norm.axis), -1},
    {"eps", 'f', 'f', FUSE__AT(a.norm.eps), 1e-5},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_instance_norm[] = {
    {"eps", 'f', 'f', FUSE__AT(a.norm.eps), 1e-5}, {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_group_norm[] = {
    {"groups", 'i', 'i', FUSE__AT(a.norm.groups), 0},
    {"eps", 'f', 'f', FUSE__AT(a.norm.eps), 1e-5},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_slice[] = { /* every axis: first element, count, step */
    {"starts", 'l', 'L', FUSE__AT(a.slice.start), 0},
    {"ends", 'l', 0, -1, 0},
    {"sizes", 'l', 'L', FUSE__AT(shape), 0},
    {"steps", 'l', 'L', FUSE__AT(a.slice.step), 0},
    {"axes", 'l', 0, -1, 0},
    {NULL, 0, 0, -1, 0}};
static const fuse__attr_spec fuse__attrs_conv_transpose[] = {
    {"strides", '2', 'n', FUSE__AT(a.convt.strides), 0},
    {"padding", '4', 'n', FUSE__AT(a.convt.padding), 0},
    {"output_padding", '2', 'n', FUSE__AT(a.convt.output_padding), 0},
    {"dilation", '2', 'n', FUSE__AT(a.convt.dilation), 0},
    {"groups", 'i', 'i', FUSE__AT(a.convt.groups), 0},
    {NULL, 0, 0, -1, 0}};
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
  FUSE__OPF_POST_ALPHA = 16   /* its post-op takes a.unary's alpha and beta */
};

struct fuse__parser;
struct fuse__parse_attr;
/* builds the op from the text form's operands and attributes (graph/text_build.c) */
typedef fuse_value (*fuse__text_build_fn)(struct fuse__parser *ps, int op, const fuse_value *in,
                                          int n_in, const struct fuse__parse_attr *at, int n_at);
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
  fuse__text_build_fn build;
} fuse__op_row;

#define FUSE__E FUSE__OPF_ELEMENTWISE
#define FUSE__F FUSE__OPF_FOLLOWS_NHWC
#define FUSE__T FUSE__OPF_TAKES_NHWC
#define FUSE__P FUSE__OPF_EPILOGUE
#define FUSE__A FUSE__OPF_POST_ALPHA
static const fuse__op_row fuse__ops[] = {
    {FUSE__OP_INPUT, "input", NULL, fuse__attrs_none, 0, 0, 0, FUSE__RUN_UNARY,
     FUSE__CHAIN_NONE, 0, NULL},
    {FUSE__OP_CONST, "const", NULL, fuse__attrs_none, 0, 0, 0, FUSE__RUN_UNARY,
     FUSE__CHAIN_NONE, 0, NULL},
    {FUSE__OP_CONV2D, "conv2d", NULL, fuse__attrs_conv, 2, 2, FUSE__T, FUSE__RUN_CONV2D,
     FUSE__CHAIN_NONE, 0, fuse__text_conv2d},
    {FUSE__OP_MATMUL, "matmul", NULL, fuse__attrs_none, 2, 2, 0, FUSE__RUN_MATMUL,
     FUSE__CHAIN_NONE, 0, fuse__text_matmul},
    {FUSE__OP_ADD, "add", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F, FUSE__RUN_BINARY,
     FUSE__CHAIN_ADD, 0, fuse__text_binary},
    {FUSE__OP_SUB, "sub", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F, FUSE__RUN_BINARY,
     FUSE__CHAIN_SUB, 0, fuse__text_binary},
    {FUSE__OP_MUL, "mul", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F, FUSE__RUN_BINARY,
     FUSE__CHAIN_MUL, 0, fuse__text_binary},
    {FUSE__OP_MAXIMUM, "maximum", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F,
     FUSE__RUN_BINARY, FUSE__CHAIN_MAX, 0, fuse__text_binary},
    {FUSE__OP_MINIMUM, "minimum", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F,
     FUSE__RUN_BINARY, FUSE__CHAIN_MIN, 0, fuse__text_binary},
    {FUSE__OP_RELU, "relu", NULL, fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_UNARY, FUSE__CHAIN_POST, FUSE_POST_CLAMP, fuse__text_unary},
    {FUSE__OP_CLIP, "clip", NULL, fuse__attrs_clip, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_UNARY, FUSE__CHAIN_POST, FUSE_POST_CLAMP, fuse__text_clip},
    {FUSE__OP_SIGMOID, "sigmoid", NULL, fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_UNARY, FUSE__CHAIN_POST, FUSE_POST_SIGMOID, fuse__text_unary},
    {FUSE__OP_RESHAPE, "reshape", NULL, fuse__attrs_shape, 1, 1, 0, FUSE__RUN_UNARY,
     FUSE__CHAIN_NONE, 0, fuse__text_reshape},
    {FUSE__OP_FLATTEN, "flatten", NULL, fuse__attrs_axis1, 1, 1, 0, FUSE__RUN_UNARY,
     FUSE__CHAIN_NONE, 0, fuse__text_flatten},
    {FUSE__OP_CONCAT, "concat", NULL, fuse__attrs_axis0, 1, -1, FUSE__F | FUSE__T,
     FUSE__RUN_CONCAT, FUSE__CHAIN_NONE, 0, fuse__text_concat},
    {FUSE__OP_SOFTMAX, "softmax", NULL, fuse__attrs_axis_last, 1, 1, 0, FUSE__RUN_SOFTMAX,
     FUSE__CHAIN_NONE, 0, fuse__text_softmax},
    {FUSE__OP_BATCH_NORM, "batch_norm", NULL, fuse__attrs_eps, 5, 5, FUSE__E,
     FUSE__RUN_BATCH_NORM, FUSE__CHAIN_NONE, 0, fuse__text_batch_norm},
    {FUSE__OP_MAX_POOL2D, "max_pool2d", NULL, fuse__attrs_max_pool, 1, 1, FUSE__F | FUSE__T,
     FUSE__RUN_POOL, FUSE__CHAIN_NONE, 0, fuse__text_pool},
    {FUSE__OP_AVG_POOL2D, "avg_pool2d", NULL, fuse__attrs_avg_pool, 1, 1, FUSE__F | FUSE__T,
     FUSE__RUN_POOL, FUSE__CHAIN_NONE, 0, fuse__text_pool},
    {FUSE__OP_GLOBAL_AVG_POOL2D, "global_avg_pool2d", NULL, fuse__attrs_none, 1, 1,
     FUSE__F | FUSE__T, FUSE__RUN_GLOBAL_AVG_POOL, FUSE__CHAIN_NONE, 0,
     fuse__text_global_avg_pool},
    {FUSE__OP_TRANSPOSE, "transpose", NULL, fuse__attrs_perm, 1, 1, 0, FUSE__RUN_TRANSPOSE,
     FUSE__CHAIN_NONE, 0, fuse__text_transpose},
    /* element-wise math (graph/builders_math.c, run/reference_math.c) */
    {FUSE__OP_SQRT, "sqrt", "Sqrt", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_SQRT, 0, fuse__text_math},
    {FUSE__OP_RECIPROCAL, "reciprocal", "Reciprocal", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_RECIPROCAL, 0, fuse__text_math},
    {FUSE__OP_EXP, "exp", "Exp", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_EXP, fuse__text_math},
    {FUSE__OP_LOG, "log", "Log", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_LOG, 0, fuse__text_math},
    {FUSE__OP_NEG, "neg", "Neg", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_NEG, FUSE_POST_LINEAR, fuse__text_math},
    {FUSE__OP_ABS, "abs", "Abs", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_ABS, 0, fuse__text_math},
    {FUSE__OP_FLOOR, "floor", "Floor", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_FLOOR, 0, fuse__text_math},
    {FUSE__OP_CEIL, "ceil", "Ceil", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_CEIL, 0, fuse__text_math},
    {FUSE__OP_ERF, "erf", "Erf", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_ERF, FUSE__POST_ERF, fuse__text_math},
    {FUSE__OP_TANH, "tanh", "Tanh", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_TANH, fuse__text_math},
    {FUSE__OP_SOFTPLUS, "softplus", "Softplus", fuse__attrs_none, 1, 1,
     FUSE__E | FUSE__F | FUSE__P, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_SOFTPLUS,
     fuse__text_math},
    {FUSE__OP_HARDSWISH, "hardswish", "HardSwish", fuse__attrs_none, 1, 1,
     FUSE__E | FUSE__F | FUSE__P, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_HARDSWISH,
     fuse__text_math},
    {FUSE__OP_HARDSIGMOID, "hardsigmoid", "HardSigmoid", fuse__attrs_hardsigmoid, 1, 1,
     FUSE__E | FUSE__F | FUSE__P | FUSE__A, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST,
     FUSE_POST_HARDSIGMOID, fuse__text_math},
    {FUSE__OP_LEAKY_RELU, "leaky_relu", "LeakyRelu", fuse__attrs_leaky_relu, 1, 1,
     FUSE__E | FUSE__F | FUSE__P | FUSE__A, FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST,
     FUSE_POST_LEAKY_RELU, fuse__text_math},
    {FUSE__OP_ELU, "elu", "Elu", fuse__attrs_elu, 1, 1, FUSE__E | FUSE__F | FUSE__P | FUSE__A,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_ELU, fuse__text_math},
    {FUSE__OP_SELU, "selu", "Selu", fuse__attrs_selu, 1, 1, FUSE__E | FUSE__F | FUSE__P | FUSE__A,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_SELU, fuse__text_math},
    {FUSE__OP_GELU, "gelu", NULL, fuse__attrs_gelu, 1, 1, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_POST, FUSE_POST_GELU, fuse__text_gelu},
    {FUSE__OP_SOFTSIGN, "softsign", "Softsign", fuse__attrs_none, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_SOFTSIGN, 0, fuse__text_math},
    {FUSE__OP_SHRINK, "shrink", "Shrink", fuse__attrs_shrink, 1, 1, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_UNARY, FUSE__CHAIN_SHRINK, 0, fuse__text_math},
    {FUSE__OP_DIV, "div", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_BROADCAST, FUSE__CHAIN_DIV, 0, fuse__text_binary},
    {FUSE__OP_POW, "pow", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F,
     FUSE__RUN_MATH_BROADCAST, FUSE__CHAIN_POW, 0, fuse__text_binary},
    {FUSE__OP_PRELU, "prelu", NULL, fuse__attrs_none, 2, 2, FUSE__E | FUSE__F | FUSE__P,
     FUSE__RUN_MATH_BROADCAST, FUSE__CHAIN_PRELU, 0, fuse__text_prelu},
    {FUSE__OP_WHERE, "where", NULL, fuse__attrs_none, 3, 3, FUSE__E, FUSE__RUN_MATH_BROADCAST,
     FUSE__CHAIN_NONE, 0, fuse__text_where},
    /* data movement (graph/builders_shape.c, run/reference_shape.c) */
    {FUSE__OP_SLICE, "slice", NULL, fuse__attrs_slice, 1, 1, 0, FUSE__RUN_SLICE,
     FUSE__CHAIN_NONE, 0, fuse__text_slice},
    {FUSE__OP_GATHER, "gather", NULL, fuse__attrs_axis0, 2, 2, 0, FUSE__RUN_GATHER,
     FUSE__CHAIN_NONE, 0, fuse__text_gather},
    {FUSE__OP_EXPAND, "expand", NULL, fuse__attrs_shape, 1, 1, 0, FUSE__RUN_EXPAND,
     FUSE__CHAIN_NONE, 0, fuse__text_expand},
    {FUSE__OP_TILE, "tile", NULL, fuse__attrs_repeats, 1, 1, 0, FUSE__RUN_TILE,
     FUSE__CHAIN_NONE, 0, fuse__text_tile},
    {FUSE__OP_PAD, "pad", NULL, fuse__attrs_pad, 1, 1, 0, FUSE__RUN_PAD, FUSE__CHAIN_NONE, 0,
     fuse__text_pad},
    {FUSE__OP_RESIZE, "resize", NULL, fuse__attrs_resize, 1, 1, 0, FUSE__RUN_RESIZE,
     FUSE__CHAIN_NONE, 0, fuse__text_resize},
    /* reductions, normalizations (graph/builders_nn.c, run/reference_nn.c) */
    {FUSE__OP_REDUCE_MEAN, "reduce_mean", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, fuse__text_reduce},
    {FUSE__OP_REDUCE_SUM, "reduce_sum", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, fuse__text_reduce},
    {FUSE__OP_REDUCE_MAX, "reduce_max", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, fuse__text_reduce},
    {FUSE__OP_REDUCE_MIN, "reduce_min", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, fuse__text_reduce},
    {FUSE__OP_REDUCE_L2, "reduce_l2", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, fuse__text_reduce},
    {FUSE__OP_REDUCE_PROD, "reduce_prod", NULL, fuse__attrs_reduce, 1, 1, 0, FUSE__RUN_REDUCE,
     FUSE__CHAIN_NONE, 0, fuse__text_reduce},
    {FUSE__OP_REDUCE_SUM_SQUARE, "reduce_sum_square", NULL, fuse__attrs_reduce, 1, 1, 0,
     FUSE__RUN_REDUCE, FUSE__CHAIN_NONE, 0, fuse__text_reduce},
    {FUSE__OP_LOG_SOFTMAX, "log_softmax", NULL, fuse__attrs_axis_last, 1, 1, 0,
     FUSE__RUN_LOG_SOFTMAX, FUSE__CHAIN_NONE, 0, fuse__text_log_softmax},
    {FUSE__OP_LAYER_NORM, "layer_norm", NULL, fuse__attrs_layer_norm, 2, 3, 0, FUSE__RUN_NORM,
     FUSE__CHAIN_NONE, 0, fuse__text_layer_norm},
    {FUSE__OP_INSTANCE_NORM, "instance_norm", NULL, fuse__attrs_instance_norm, 3, 3, 0,
     FUSE__RUN_NORM, FUSE__CHAIN_NONE, 0, fuse__text_instance_norm},
    {FUSE__OP_GROUP_NORM, "group_norm", NULL, fuse__attrs_group_norm, 3, 3, 0, FUSE__RUN_NORM,
     FUSE__CHAIN_NONE, 0, fuse__text_group_norm},
    /* transposed convolution (graph/builders_layers.c, run/reference_layers.c) */
    {FUSE__OP_CONV_TRANSPOSE2D, "conv_transpose2d", NULL, fuse__attrs_conv_transpose, 2, 2, 0,
     FUSE__RUN_CONV_TRANSPOSE2D, FUSE__CHAIN_NONE, 0, fuse__text_conv_transpose2d},
    /* plan only */
    {FUSE__OP_COPY, "copy", NULL, fuse__attrs_none, 1, 1, 0, FUSE__RUN_UNARY, FUSE__CHAIN_NONE,
     0, NULL},
    {FUSE__OP_TO_NHWC, "to_nhwc", NULL, fuse__attrs_none, 1, 1, 0, FUSE__RUN_LAYOUT,
     FUSE__CHAIN_NONE, 0, NULL},
    {FUSE__OP_TO_NCHW, "to_nchw", NULL, fuse__attrs_none, 1, 1, 0, FUSE__RUN_LAYOUT,
     FUSE__CHAIN_NONE, 0, NULL},
    {FUSE__OP_CHAIN, "chain", NULL, fuse__attrs_none, 1, -1, 0, FUSE__RUN_CHAIN,
     FUSE__CHAIN_NONE, 0, NULL},
};
#undef FUSE__E
#undef FUSE__F
#undef FUSE__T
#undef FUSE__P
#undef FUSE__A
typedef char fuse__ops_cover_the_enum[sizeof fuse__ops / sizeof fuse__ops[0] == FUSE__OP_COUNT
                                          ? 1
                                          : -1];


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
  void *mapped; /* the model file fuse_onnx_load_file mapped, while constants are in it */
  size_t mapped_size;
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

/* fuse__vformat with the arguments in place. */
static void fuse__format(fuse__out *o, const fuse_graph *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fuse__vformat(o, g, fmt, ap);
  va_end(ap);
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

/* Constants borrowed from the model file. fuse_onnx_load_file maps the file and leaves a large
   float32 initializer where it is: node->raw points at its little-endian bytes (at whatever
   byte offset the file has them, so read with memcpy; set on little-endian hosts only), data
   is NULL, and the graph keeps the mapping until it is destroyed. A Gemm's transB weight is
   borrowed untransposed (raw_transposed). fuse_compile packs straight from those bytes, so a
   weight crosses fresh memory once, into the plan; a pass that needs the floats (batch-norm
   folding, fuse_graph_set_constant, ...) copies them out first with fuse__const_floats. */

/* count values of constant n from element `first` (row-major) into dst. */
static void fuse__const_read(const fuse__node *n, int64_t first, int64_t count, float *dst) {
  int64_t i, R, C;
  if (count <= 0) return;
  if (n->data || !n->raw) {
    if (n->data) memcpy(dst, n->data + first, (size_t)count * sizeof(float));
    else memset(dst, 0, (size_t)count * sizeof(float));
    return;
  }
  if (!n->raw_transposed) {
    memcpy(dst, n->raw + (size_t)first * sizeof(float), (size_t)count * sizeof(float));
    return;
  }
  R = n->shape[0], C = n->shape[1]; /* element (r, c) is at (c, r) of the [C][R] bytes */
  for (i = 0; i < count; i++) {
    int64_t e = first + i;
    memcpy(dst + i, n->raw + (size_t)((e % C) * R + e / C) * sizeof(float), sizeof(float));
  }
}

static float fuse__const_at(const fuse__node *n, int64_t i) {
  float v;
  fuse__const_read(n, i, 1, &v);
  return v;
}

/* Constant v's values as floats the caller may read and write: a borrowed constant is copied
   out of the file first. NULL (and the graph's error) when out of memory. */
static float *fuse__const_floats(fuse_graph *g, fuse_value v) {
  fuse__node *n = &g->nodes[v];
  size_t bytes;
  float *data;
  if (n->data || !n->raw) return n->data;
  bytes = (size_t)fuse__numel(n->rank, n->shape) * sizeof(float);
  data = (float *)fuse__alloc(&g->alloc, bytes, FUSE__ALIGN);
  if (!data) {
    fuse__fail(g, FUSE_ERROR_OUT_OF_MEMORY, "out of memory copying constant %V out of the file", v);
    return NULL;
  }
  fuse__prefault(data, bytes);
  fuse__const_read(n, 0, fuse__numel(n->rank, n->shape), data);
  n->data = data;
  n->raw = NULL;
  n->raw_transposed = 0;
  return data;
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
                      who, name, fuse__ops[g->nodes[other].op].name, other),
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
  if (!nodes) return fuse__oom(g, fuse__ops[op].name), (fuse__node *)NULL;
  g->nodes = nodes;
  n = &g->nodes[g->num_nodes];
  memset(n, 0, sizeof *n);
  n->op = op;
  n->rank = rank;
  n->composite = -1;
  if (rank) memcpy(n->shape, dims, (size_t)rank * sizeof(int64_t));
  if (num_in) {
    n->in = (fuse_value *)fuse__alloc(&g->alloc, (size_t)num_in * sizeof(fuse_value), 16);
    if (!n->in) return fuse__oom(g, fuse__ops[op].name), (fuse__node *)NULL;
    memcpy(n->in, in, (size_t)num_in * sizeof(fuse_value));
    n->num_in = num_in;
  }
  g->num_nodes++;
  return n;
}

static fuse_value fuse__id(const fuse_graph *g, const fuse__node *n) {
  return (fuse_value)(n - g->nodes);
}

