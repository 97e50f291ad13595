/* ------------------------------------------------------ text form: the ops' builders -- */
/* The builders the operator table's rows name (graph/ops.c): each calls the op's builder
   with the parsed operands and attributes; fuse__text_build checks the operand count first. A
   number or whole number the text leaves out takes the row's default (fuse__attr_spec.dflt). */

/* Attribute `name` of op, or the row's default. */
static double fuse__text_number_attr(int op, const fuse__parse_attr *at, int n_at, const char *name) {
  const fuse__parse_attr *a = fuse__text_find_attr(at, n_at, name);
  const fuse__attr_spec *s;
  if (a) return a->v[0];
  for (s = fuse__ops[op].attrs; s->name; s++)
    if (strcmp(s->name, name) == 0) return s->dflt;
  FUSE_ASSERT(0 && "fuse__text_number_attr: not an attribute of the op");
  return 0;
}
#define FUSE__TEXT_FLOAT(name) ((float)fuse__text_number_attr(op, at, n_at, name))
#define FUSE__TEXT_INT(name) ((int)fuse__text_number_attr(op, at, n_at, name))

static fuse_value fuse__text_build(fuse__parser *ps, int op, const fuse_value *in, int n_in,
                                   const fuse__parse_attr *at, int n_at) {
  const fuse__op_row *row = &fuse__ops[op];
  int arity = row->max_in < 0 ? row->min_in : row->max_in;
  if (!row->build)
    return fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: %s cannot be written as an op",
                      ps->at_line, ps->at_col, row->name);
  if (n_in < row->min_in || (row->max_in >= 0 && n_in > row->max_in))
    return fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: %s takes %d operand%s, not %d",
                      ps->at_line, ps->at_col, row->name, arity, arity == 1 ? "" : "s", n_in);
  return row->build(ps, op, in, n_in, at, n_at);
}

/* A required attribute's absence: the parse error. */
static fuse_value fuse__text_needs(const fuse__parser *ps, int op, const char *what) {
  return fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: %s needs %s", ps->at_line,
                    ps->at_col, fuse__ops[op].name, what);
}

/* A list attribute with one entry per axis of x: its count against x's rank. */
static int fuse__text_per_axis(const fuse__parser *ps, int op, const fuse__parse_attr *a,
                               fuse_value x) {
  int rank = fuse_value_rank(ps->g, x);
  if (a->count == rank) return 1;
  fuse__fail(ps->g, FUSE_ERROR_PARSE, "line %d, column %d: %s %s has %d entries for rank %d",
             ps->at_line, ps->at_col, fuse__ops[op].name, a->name, a->count, rank);
  return 0;
}

FUSE__TEXT_BUILDER(fuse__text_conv2d) {
  fuse_conv2d_attrs c;
  memset(&c, 0, sizeof c);
  fuse__text_ints(at, n_at, "strides", c.strides, 2);
  fuse__text_ints(at, n_at, "padding", c.padding, 4);
  fuse__text_ints(at, n_at, "dilation", c.dilation, 2);
  fuse__text_ints(at, n_at, "groups", &c.groups, 1);
  (void)op, (void)n_in;
  return fuse_conv2d(ps->g, in[0], in[1], &c);
}

FUSE__TEXT_BUILDER(fuse__text_matmul) {
  (void)op, (void)n_in, (void)at, (void)n_at;
  return fuse_matmul(ps->g, in[0], in[1]);
}

/* add, sub, mul, maximum, minimum, div, pow */
FUSE__TEXT_BUILDER(fuse__text_binary) {
  (void)n_in, (void)at, (void)n_at;
  return fuse__binary(ps->g, op, in[0], in[1]);
}

/* relu, sigmoid */
FUSE__TEXT_BUILDER(fuse__text_unary) {
  fuse__node *n = fuse__unary(ps->g, op, in[0]);
  (void)n_in, (void)at, (void)n_at;
  return n ? fuse__id(ps->g, n) : FUSE_NONE;
}

FUSE__TEXT_BUILDER(fuse__text_clip) {
  (void)n_in;
  return fuse_clip(ps->g, in[0], FUSE__TEXT_FLOAT("lo"), FUSE__TEXT_FLOAT("hi"));
}

FUSE__TEXT_BUILDER(fuse__text_reshape) {
  const fuse__parse_attr *a = fuse__text_find_attr(at, n_at, "shape");
  int64_t shape[FUSE_MAX_RANK];
  int i;
  (void)n_in;
  if (!a) return fuse__text_needs(ps, op, "shape=[...]");
  for (i = 0; i < a->count; i++) shape[i] = (int64_t)a->v[i];
  return fuse_reshape(ps->g, in[0], a->count, shape);
}

FUSE__TEXT_BUILDER(fuse__text_flatten) {
  (void)n_in;
  return fuse_flatten(ps->g, in[0], FUSE__TEXT_INT("axis"));
}

FUSE__TEXT_BUILDER(fuse__text_concat) {
  return fuse_concat(ps->g, n_in, in, FUSE__TEXT_INT("axis"));
}

FUSE__TEXT_BUILDER(fuse__text_softmax) {
  (void)n_in;
  return fuse_softmax(ps->g, in[0], FUSE__TEXT_INT("axis"));
}

FUSE__TEXT_BUILDER(fuse__text_batch_norm) {
  (void)n_in;
  return fuse_batch_norm(ps->g, in[0], in[1], in[2], in[3], in[4], FUSE__TEXT_FLOAT("eps"));
}

/* max_pool2d, avg_pool2d */
FUSE__TEXT_BUILDER(fuse__text_pool) {
  fuse_pool2d_attrs p;
  (void)n_in;
  memset(&p, 0, sizeof p);
  if (!fuse__text_find_attr(at, n_at, "kernel")) return fuse__text_needs(ps, op, "kernel=[kh, kw]");
  fuse__text_ints(at, n_at, "kernel", p.kernel, 2);
  fuse__text_ints(at, n_at, "strides", p.strides, 2);
  fuse__text_ints(at, n_at, "padding", p.padding, 4);
  fuse__text_ints(at, n_at, "dilation", p.dilation, 2);
  fuse__text_ints(at, n_at, "ceil_mode", &p.ceil_mode, 1);
  fuse__text_ints(at, n_at, "count_include_pad", &p.count_include_pad, 1);
  return fuse__pool(ps->g, op, in[0], &p);
}

FUSE__TEXT_BUILDER(fuse__text_global_avg_pool) {
  (void)op, (void)n_in, (void)at, (void)n_at;
  return fuse_global_avg_pool2d(ps->g, in[0]);
}

FUSE__TEXT_BUILDER(fuse__text_transpose) {
  const fuse__parse_attr *a = fuse__text_find_attr(at, n_at, "perm");
  int p[FUSE_MAX_RANK], i;
  (void)n_in;
  if (!a) return fuse_transpose(ps->g, in[0], NULL);
  if (!fuse__text_per_axis(ps, op, a, in[0])) return FUSE_NONE;
  for (i = 0; i < a->count; i++) p[i] = (int)a->v[i];
  return fuse_transpose(ps->g, in[0], p);
}

/* The element-wise math of one operand: its parameters are the row's attributes, kept in
   a.unary (alpha, beta, mode); those the text leaves out take the row's defaults (ONNX's). */
FUSE__TEXT_BUILDER(fuse__text_math) {
  float p[2] = {0, 0};
  int mode = 0;
  const fuse__attr_spec *s;
  (void)n_in;
  for (s = fuse__ops[op].attrs; s->name; s++) {
    double v = fuse__text_number_attr(op, at, n_at, s->name);
    if (s->at == (int)offsetof(fuse__node, a.unary.alpha)) p[0] = (float)v;
    else if (s->at == (int)offsetof(fuse__node, a.unary.beta)) p[1] = (float)v;
    else mode = (int)v;
  }
  return fuse__math_unary(ps->g, op, in[0], p[0], p[1], mode);
}

FUSE__TEXT_BUILDER(fuse__text_gelu) {
  (void)n_in;
  return fuse_gelu(ps->g, in[0], FUSE__TEXT_INT("approximate"));
}

FUSE__TEXT_BUILDER(fuse__text_prelu) {
  (void)op, (void)n_in, (void)at, (void)n_at;
  return fuse_prelu(ps->g, in[0], in[1]);
}

FUSE__TEXT_BUILDER(fuse__text_where) {
  (void)op, (void)n_in, (void)at, (void)n_at;
  return fuse_where(ps->g, in[0], in[1], in[2]);
}

/* slice(%x, starts=[...], ends=[...] or sizes=[...], steps=[...], axes=[...]): steps and axes
   are optional; sizes (how many elements each listed axis keeps, the printed form) stand for
   ends = starts + sizes * steps, with starts >= 0. */
FUSE__TEXT_BUILDER(fuse__text_slice) {
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
  (void)op, (void)n_in;
  return fuse_slice(ps->g, in[0], n, axes, starts, ends, steps);
}

FUSE__TEXT_BUILDER(fuse__text_gather) {
  (void)n_in;
  return fuse__gather_node(ps->g, in[0], in[1], FUSE__TEXT_INT("axis"));
}

/* A list of whole numbers, required: its count, the values at list; -1 when it is absent. */
static int fuse__text_int64s(const fuse__parse_attr *at, int n_at, const char *name, int64_t *list) {
  const fuse__parse_attr *a = fuse__text_find_attr(at, n_at, name);
  int i;
  if (!a) return -1;
  for (i = 0; i < a->count; i++) list[i] = (int64_t)a->v[i];
  return a->count;
}

FUSE__TEXT_BUILDER(fuse__text_expand) {
  int64_t shape[FUSE_MAX_RANK];
  int n = fuse__text_int64s(at, n_at, "shape", shape);
  (void)n_in;
  if (n < 0) return fuse__text_needs(ps, op, "shape=[...]");
  return fuse_expand(ps->g, in[0], n, shape);
}

FUSE__TEXT_BUILDER(fuse__text_tile) {
  int64_t repeats[FUSE_MAX_RANK];
  const fuse__parse_attr *a = fuse__text_find_attr(at, n_at, "repeats");
  (void)n_in;
  if (!a) return fuse__text_needs(ps, op, "repeats=[...]");
  if (!fuse__text_per_axis(ps, op, a, in[0])) return FUSE_NONE;
  fuse__text_int64s(at, n_at, "repeats", repeats);
  return fuse_tile(ps->g, in[0], repeats);
}

FUSE__TEXT_BUILDER(fuse__text_pad) {
  int64_t pads[2 * FUSE_MAX_RANK];
  int rank = fuse_value_rank(ps->g, in[0]), i, k;
  const fuse__parse_attr *a;
  (void)n_in;
  memset(pads, 0, sizeof pads);
  for (k = 0; k < 2; k++)
    if ((a = fuse__text_find_attr(at, n_at, k ? "ends" : "begins")) != NULL) {
      if (!fuse__text_per_axis(ps, op, a, in[0])) return FUSE_NONE;
      for (i = 0; i < rank; i++) pads[k * rank + i] = (int64_t)a->v[i];
    }
  return fuse_pad(ps->g, in[0], pads, (fuse_pad_mode)FUSE__TEXT_INT("mode"), FUSE__TEXT_FLOAT("value"));
}

FUSE__TEXT_BUILDER(fuse__text_resize) {
  int64_t sizes[FUSE_MAX_RANK];
  float scales[FUSE_MAX_RANK];
  fuse_resize_attrs ra;
  int rank = fuse_value_rank(ps->g, in[0]), i;
  const fuse__parse_attr *a = fuse__text_find_attr(at, n_at, "sizes");
  const fuse__parse_attr *sc = fuse__text_find_attr(at, n_at, "scales");
  (void)n_in;
  if (!a || a->count != rank || (sc && sc->count != rank))
    return fuse__fail(ps->g, FUSE_ERROR_PARSE,
                      "line %d, column %d: resize needs sizes=[...] (and scales=[...]) with %d entries",
                      ps->at_line, ps->at_col, rank);
  for (i = 0; i < rank; i++) sizes[i] = (int64_t)a->v[i], scales[i] = sc ? (float)sc->v[i] : 0;
  memset(&ra, 0, sizeof ra);
  ra.mode = (fuse_resize_mode)FUSE__TEXT_INT("mode");
  ra.coordinates = (fuse_resize_coordinates)FUSE__TEXT_INT("coordinates");
  ra.nearest = (fuse_resize_nearest)FUSE__TEXT_INT("nearest");
  ra.exclude_outside = FUSE__TEXT_INT("exclude_outside");
  ra.cubic_coeff_a = FUSE__TEXT_FLOAT("cubic_coeff_a");
  return fuse_resize(ps->g, in[0], sizes, sc ? scales : NULL, &ra);
}

/* reduce_mean ... reduce_sum_square: the kinds in the ops' order */
FUSE__TEXT_BUILDER(fuse__text_reduce) {
  const fuse__parse_attr *a = fuse__text_find_attr(at, n_at, "axes");
  int axes[FUSE_MAX_RANK], count = a ? a->count : 0; /* absent or []: all axes */
  fuse_reduce_kind kind = (fuse_reduce_kind)(FUSE_REDUCE_MEAN + (op - FUSE__OP_REDUCE_MEAN));
  (void)n_in;
  fuse__text_ints(at, n_at, "axes", axes, count);
  return fuse_reduce(ps->g, in[0], kind, count, axes, FUSE__TEXT_INT("keepdims"));
}

FUSE__TEXT_BUILDER(fuse__text_log_softmax) {
  (void)n_in;
  return fuse_log_softmax(ps->g, in[0], FUSE__TEXT_INT("axis"));
}

FUSE__TEXT_BUILDER(fuse__text_layer_norm) { /* bias is optional */
  return fuse_layer_norm(ps->g, in[0], in[1], n_in == 3 ? in[2] : FUSE_NONE,
                         FUSE__TEXT_INT("axis"), FUSE__TEXT_FLOAT("eps"));
}

FUSE__TEXT_BUILDER(fuse__text_instance_norm) {
  (void)n_in;
  return fuse_instance_norm(ps->g, in[0], in[1], in[2], FUSE__TEXT_FLOAT("eps"));
}

FUSE__TEXT_BUILDER(fuse__text_group_norm) {
  (void)n_in;
  if (!fuse__text_find_attr(at, n_at, "groups")) return fuse__text_needs(ps, op, "groups=N");
  return fuse_group_norm(ps->g, in[0], in[1], in[2], FUSE__TEXT_INT("groups"), FUSE__TEXT_FLOAT("eps"));
}

FUSE__TEXT_BUILDER(fuse__text_conv_transpose2d) {
  fuse_conv_transpose2d_attrs c;
  memset(&c, 0, sizeof c);
  fuse__text_ints(at, n_at, "strides", c.strides, 2);
  fuse__text_ints(at, n_at, "padding", c.padding, 4);
  fuse__text_ints(at, n_at, "output_padding", c.output_padding, 2);
  fuse__text_ints(at, n_at, "dilation", c.dilation, 2);
  fuse__text_ints(at, n_at, "groups", &c.groups, 1);
  (void)op, (void)n_in;
  return fuse_conv_transpose2d(ps->g, in[0], in[1], &c);
}

FUSE__TEXT_BUILDER(fuse__text_quant) { /* quantize, dequantize: the zero point is optional */
  fuse_value zero = n_in == 3 ? in[2] : FUSE_NONE;
  if (op == FUSE__OP_QUANTIZE)
    return fuse_quantize(ps->g, in[0], in[1], zero, FUSE__TEXT_INT("axis"));
  return fuse_dequantize(ps->g, in[0], in[1], zero, FUSE__TEXT_INT("axis"));
}

#undef FUSE__TEXT_FLOAT
#undef FUSE__TEXT_INT
