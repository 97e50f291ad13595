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
