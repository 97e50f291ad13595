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
  /* Four pixels beyond an edge every tap lands on the edge pixel (or is excluded), so the
     coordinate is bounded there: a tiny scale or a width near 1 puts it past int64 (or NaN). */
  if (!(xo > -4.0)) xo = -4.0;
  if (xo > (double)in + 4.0) xo = (double)in + 4.0;
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
