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
