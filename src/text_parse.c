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
  if (!fuse__const_floats(g, v)) return g->status; /* borrowed from a file: its own copy now */
  memcpy(g->nodes[v].data, data, n * sizeof(float));
  return FUSE_OK;
}

