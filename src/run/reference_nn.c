/* --------------------------------------------------- reference kernels: nn -- */
/* reductions, log-softmax, layer / instance / group normalization (einsum is composed of
   other ops). Sums, products and statistics accumulate in double: a reduction over 100k
   elements stays as close to a float64 reference as one float rounding. */

/* How a reduction folds its elements, its start and its last touch, by op: looked up once a
   step. Adding a reduction: its line here (and a fold, if none of these is its own). */
enum { FUSE__FOLD_SUM, FUSE__FOLD_SUM_SQUARE, FUSE__FOLD_PROD, FUSE__FOLD_MAX, FUSE__FOLD_MIN };
enum { FUSE__FOLD_AS_IS, FUSE__FOLD_DIVIDE, FUSE__FOLD_ROOT }; /* after: / count, sqrt */
static const struct fuse__reduce_row {
  int op, fold;
  double init;
  int after;
} fuse__reduce_rows[] = {
    {FUSE__OP_REDUCE_MEAN, FUSE__FOLD_SUM, 0.0, FUSE__FOLD_DIVIDE},
    {FUSE__OP_REDUCE_SUM, FUSE__FOLD_SUM, 0.0, FUSE__FOLD_AS_IS},
    {FUSE__OP_REDUCE_MAX, FUSE__FOLD_MAX, -HUGE_VAL, FUSE__FOLD_AS_IS},
    {FUSE__OP_REDUCE_MIN, FUSE__FOLD_MIN, HUGE_VAL, FUSE__FOLD_AS_IS},
    {FUSE__OP_REDUCE_L2, FUSE__FOLD_SUM_SQUARE, 0.0, FUSE__FOLD_ROOT},
    {FUSE__OP_REDUCE_PROD, FUSE__FOLD_PROD, 1.0, FUSE__FOLD_AS_IS},
    {FUSE__OP_REDUCE_SUM_SQUARE, FUSE__FOLD_SUM_SQUARE, 0.0, FUSE__FOLD_AS_IS},
};

/* One reduced run: n elements `stride` apart folded into acc (sum / product kinds in double;
   max / min as floats, with NaN winning as in PyTorch). */
static double fuse__reduce_run(int fold, const float *x, int64_t n, int64_t stride, double acc) {
  int64_t j;
  switch (fold) {
  case FUSE__FOLD_SUM:
    for (j = 0; j < n; j++) acc += x[j * stride];
    break;
  case FUSE__FOLD_SUM_SQUARE:
    for (j = 0; j < n; j++) acc += (double)x[j * stride] * x[j * stride];
    break;
  case FUSE__FOLD_PROD:
    for (j = 0; j < n; j++) acc *= x[j * stride];
    break;
  case FUSE__FOLD_MAX:
    for (j = 0; j < n; j++) {
      float v = x[j * stride];
      if (v > acc || v != v) acc = v;
      if (v != v) break;
    }
    break;
  default: /* FUSE__FOLD_MIN */
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
  const struct fuse__reduce_row *how = fuse__reduce_rows;
  for (i = 0; i < (int)(sizeof fuse__reduce_rows / sizeof *fuse__reduce_rows); i++)
    if (fuse__reduce_rows[i].op == s->op) how = &fuse__reduce_rows[i];
  FUSE_ASSERT(how->op == s->op && "fuse__kernel_reduce: not a reduction");
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
    double acc = how->init;
    for (d = 0; d < nk; d++) base += kidx[d] * kstr[d];
    memset(ridx, 0, sizeof ridx);
    for (k = 0; k < runs; k++) {
      int64_t at = base;
      for (d = 0; d < nr - 1; d++) at += ridx[d] * rstr[d];
      acc = fuse__reduce_run(how->fold, x + at, rdim[nr - 1], rstr[nr - 1], acc);
      for (d = nr - 2; d >= 0 && ++ridx[d] == rdim[d]; d--) ridx[d] = 0;
    }
    if (how->after == FUSE__FOLD_DIVIDE) acc /= (double)count;
    else if (how->after == FUSE__FOLD_ROOT) acc = sqrt(acc);
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
