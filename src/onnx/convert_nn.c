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
      for (i = 0; i < C; i++) g->nodes[e].data[i] = fuse__const_at(&g->nodes[in[k]], i / (C / groups));
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
