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

/* The text form's attributes of an op: name and form ('i' whole number, 'f' number, '2' / '4'
   list of that many whole numbers, 'l' list of up to 8 whole numbers, 'F' list of up to 8
   numbers), NULL-terminated. */
typedef struct fuse__attr_spec {
  const char *name;
  char form;
} fuse__attr_spec;

static const fuse__attr_spec fuse__attrs_none[] = {{NULL, 0}};
static const fuse__attr_spec fuse__attrs_conv[] = {
    {"strides", '2'}, {"padding", '4'}, {"dilation", '2'}, {"groups", 'i'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_clip[] = {{"lo", 'f'}, {"hi", 'f'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_shape[] = {{"shape", 'l'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_axis[] = {{"axis", 'i'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_eps[] = {{"eps", 'f'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_perm[] = {{"perm", 'l'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_max_pool[] = {
    {"kernel", '2'},   {"strides", '2'},   {"padding", '4'},
    {"dilation", '2'}, {"ceil_mode", 'i'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_avg_pool[] = {
    {"kernel", '2'},    {"strides", '2'},           {"padding", '4'},
    {"ceil_mode", 'i'}, {"count_include_pad", 'i'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_alpha_beta[] = {{"alpha", 'f'}, {"beta", 'f'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_alpha[] = {{"alpha", 'f'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_alpha_gamma[] = {
    {"alpha", 'f'}, {"gamma", 'f'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_approximate[] = {{"approximate", 'i'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_repeats[] = {{"repeats", 'l'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_pad[] = {
    {"begins", 'l'}, {"ends", 'l'}, {"value", 'f'}, {"mode", 'i'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_resize[] = {
    {"sizes", 'l'},       {"scales", 'F'},          {"mode", 'i'},   {"coordinates", 'i'},
    {"nearest", 'i'},     {"cubic_coeff_a", 'f'},   {"exclude_outside", 'i'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_reduce[] = {{"axes", 'l'}, {"keepdims", 'i'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_axis_eps[] = {{"axis", 'i'}, {"eps", 'f'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_groups_eps[] = {{"groups", 'i'}, {"eps", 'f'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_slice[] = {
    {"starts", 'l'}, {"ends", 'l'}, {"sizes", 'l'}, {"steps", 'l'}, {"axes", 'l'}, {NULL, 0}};
static const fuse__attr_spec fuse__attrs_conv_transpose[] = {
    {"strides", '2'}, {"padding", '4'}, {"output_padding", '2'}, {"dilation", '2'},
    {"groups", 'i'},  {NULL, 0}};

/* The operator table: one row per fuse__op, in the enum's order (the count is checked at
   compile time below, the order by test_kernels' op_table): the op's spelling in the text form,
   the listings and the messages, and the attributes the text form takes. */
typedef struct fuse__op_row {
  int op; /* the row's fuse__op, its index */
  const char *name;
  const fuse__attr_spec *attrs;
} fuse__op_row;

static const fuse__op_row fuse__ops[] = {
    {FUSE__OP_INPUT,              "input",               fuse__attrs_none},
    {FUSE__OP_CONST,              "const",               fuse__attrs_none},
    {FUSE__OP_CONV2D,             "conv2d",              fuse__attrs_conv},
    {FUSE__OP_MATMUL,             "matmul",              fuse__attrs_none},
    {FUSE__OP_ADD,                "add",                 fuse__attrs_none},
    {FUSE__OP_SUB,                "sub",                 fuse__attrs_none},
    {FUSE__OP_MUL,                "mul",                 fuse__attrs_none},
    {FUSE__OP_MAXIMUM,            "maximum",             fuse__attrs_none},
    {FUSE__OP_MINIMUM,            "minimum",             fuse__attrs_none},
    {FUSE__OP_RELU,               "relu",                fuse__attrs_none},
    {FUSE__OP_CLIP,               "clip",                fuse__attrs_clip},
    {FUSE__OP_SIGMOID,            "sigmoid",             fuse__attrs_none},
    {FUSE__OP_RESHAPE,            "reshape",             fuse__attrs_shape},
    {FUSE__OP_FLATTEN,            "flatten",             fuse__attrs_axis},
    {FUSE__OP_CONCAT,             "concat",              fuse__attrs_axis},
    {FUSE__OP_SOFTMAX,            "softmax",             fuse__attrs_axis},
    {FUSE__OP_BATCH_NORM,         "batch_norm",          fuse__attrs_eps},
    {FUSE__OP_MAX_POOL2D,         "max_pool2d",          fuse__attrs_max_pool},
    {FUSE__OP_AVG_POOL2D,         "avg_pool2d",          fuse__attrs_avg_pool},
    {FUSE__OP_GLOBAL_AVG_POOL2D,  "global_avg_pool2d",   fuse__attrs_none},
    {FUSE__OP_TRANSPOSE,          "transpose",           fuse__attrs_perm},
    {FUSE__OP_SQRT,               "sqrt",                fuse__attrs_none},
    {FUSE__OP_RECIPROCAL,         "reciprocal",          fuse__attrs_none},
    {FUSE__OP_EXP,                "exp",                 fuse__attrs_none},
    {FUSE__OP_LOG,                "log",                 fuse__attrs_none},
    {FUSE__OP_NEG,                "neg",                 fuse__attrs_none},
    {FUSE__OP_ABS,                "abs",                 fuse__attrs_none},
    {FUSE__OP_FLOOR,              "floor",               fuse__attrs_none},
    {FUSE__OP_CEIL,               "ceil",                fuse__attrs_none},
    {FUSE__OP_ERF,                "erf",                 fuse__attrs_none},
    {FUSE__OP_TANH,               "tanh",                fuse__attrs_none},
    {FUSE__OP_SOFTPLUS,           "softplus",            fuse__attrs_none},
    {FUSE__OP_HARDSWISH,          "hardswish",           fuse__attrs_none},
    {FUSE__OP_HARDSIGMOID,        "hardsigmoid",         fuse__attrs_alpha_beta},
    {FUSE__OP_LEAKY_RELU,         "leaky_relu",          fuse__attrs_alpha},
    {FUSE__OP_ELU,                "elu",                 fuse__attrs_alpha},
    {FUSE__OP_SELU,               "selu",                fuse__attrs_alpha_gamma},
    {FUSE__OP_GELU,               "gelu",                fuse__attrs_approximate},
    {FUSE__OP_DIV,                "div",                 fuse__attrs_none},
    {FUSE__OP_POW,                "pow",                 fuse__attrs_none},
    {FUSE__OP_PRELU,              "prelu",               fuse__attrs_none},
    {FUSE__OP_WHERE,              "where",               fuse__attrs_none},
    {FUSE__OP_SLICE,              "slice",               fuse__attrs_slice},
    {FUSE__OP_GATHER,             "gather",              fuse__attrs_axis},
    {FUSE__OP_EXPAND,             "expand",              fuse__attrs_shape},
    {FUSE__OP_TILE,               "tile",                fuse__attrs_repeats},
    {FUSE__OP_PAD,                "pad",                 fuse__attrs_pad},
    {FUSE__OP_RESIZE,             "resize",              fuse__attrs_resize},
    {FUSE__OP_REDUCE_MEAN,        "reduce_mean",         fuse__attrs_reduce},
    {FUSE__OP_REDUCE_SUM,         "reduce_sum",          fuse__attrs_reduce},
    {FUSE__OP_REDUCE_MAX,         "reduce_max",          fuse__attrs_reduce},
    {FUSE__OP_REDUCE_MIN,         "reduce_min",          fuse__attrs_reduce},
    {FUSE__OP_REDUCE_L2,          "reduce_l2",           fuse__attrs_reduce},
    {FUSE__OP_REDUCE_PROD,        "reduce_prod",         fuse__attrs_reduce},
    {FUSE__OP_REDUCE_SUM_SQUARE,  "reduce_sum_square",   fuse__attrs_reduce},
    {FUSE__OP_LOG_SOFTMAX,        "log_softmax",         fuse__attrs_axis},
    {FUSE__OP_LAYER_NORM,         "layer_norm",          fuse__attrs_axis_eps},
    {FUSE__OP_INSTANCE_NORM,      "instance_norm",       fuse__attrs_eps},
    {FUSE__OP_GROUP_NORM,         "group_norm",          fuse__attrs_groups_eps},
    {FUSE__OP_CONV_TRANSPOSE2D,   "conv_transpose2d",    fuse__attrs_conv_transpose},
    {FUSE__OP_COPY,               "copy",                fuse__attrs_none},
    {FUSE__OP_TO_NHWC,            "to_nhwc",             fuse__attrs_none},
    {FUSE__OP_TO_NCHW,            "to_nchw",             fuse__attrs_none},
    {FUSE__OP_CHAIN,              "chain",               fuse__attrs_none},
};
typedef char fuse__ops_cover_the_enum[sizeof fuse__ops / sizeof fuse__ops[0] == FUSE__OP_COUNT
                                          ? 1
                                          : -1];

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

