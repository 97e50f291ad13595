/* --------------------------------------------------- reference kernels: math -- */
/* element-wise math: unary functions, div, pow, prelu, where, variadic sum / mean / max / min.
   Each op is a loop of its own, found once a step in this file's lists (keyed by the op), so
   a large tensor runs at the speed of the math itself. NaN propagates through every op
   (comparisons are written so that a NaN operand falls through to an arithmetic path). */

/* The unary ops, one loop each over the whole tensor: y[i] = f(x[i]) for i < n, with the
   step's a.unary parameters. Adding one: its function and its line in fuse__math_unary_loops. */
static void fuse__sqrt_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i; /* negative: NaN */
  (void)s;
  for (i = 0; i < n; i++) y[i] = sqrtf(x[i]);
}
static void fuse__reciprocal_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i; /* 0: inf */
  (void)s;
  for (i = 0; i < n; i++) y[i] = 1.0f / x[i];
}
static void fuse__exp_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) y[i] = expf(x[i]);
}
static void fuse__log_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i; /* 0: -inf, negative: NaN */
  (void)s;
  for (i = 0; i < n; i++) y[i] = logf(x[i]);
}
static void fuse__neg_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) y[i] = -x[i];
}
static void fuse__abs_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) y[i] = fabsf(x[i]);
}
static void fuse__floor_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) y[i] = floorf(x[i]);
}
static void fuse__ceil_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) y[i] = ceilf(x[i]);
}
static void fuse__erf_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) y[i] = erff(x[i]);
}
static void fuse__tanh_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) y[i] = tanhf(x[i]);
}
/* log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): e^ never overflows */
static void fuse__softplus_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) {
    float v = x[i];
    y[i] = v > 0 ? v + log1pf(expf(-v)) : log1pf(expf(v));
  }
}
static void fuse__hardswish_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) {
    float v = x[i], t = v + 3.0f;
    t = t < 0 ? 0.0f : t > 6.0f ? 6.0f : t;
    y[i] = v * t / 6.0f;
  }
}
static void fuse__hardsigmoid_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  const float alpha = s->a.unary.alpha, beta = s->a.unary.beta;
  int64_t i;
  for (i = 0; i < n; i++) {
    float t = alpha * x[i] + beta;
    y[i] = t < 0 ? 0.0f : t > 1.0f ? 1.0f : t;
  }
}
static void fuse__leaky_relu_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  const float alpha = s->a.unary.alpha;
  int64_t i;
  for (i = 0; i < n; i++) y[i] = x[i] < 0 ? alpha * x[i] : x[i];
}
/* expm1: exact near 0, where e^x - 1 would cancel */
static void fuse__elu_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  const float alpha = s->a.unary.alpha;
  int64_t i;
  for (i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : alpha * expm1f(x[i]);
}
static void fuse__selu_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  const float alpha = s->a.unary.alpha, beta = s->a.unary.beta; /* beta holds gamma */
  int64_t i;
  for (i = 0; i < n; i++) y[i] = x[i] > 0 ? beta * x[i] : beta * (alpha * expm1f(x[i]));
}
static void fuse__gelu_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  if (s->a.unary.mode == 1) {
    for (i = 0; i < n; i++) {
      float v = x[i];
      y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    }
  } else { /* 1 + erf(v / sqrt 2) = erfc(-v / sqrt 2), which keeps its precision for v << 0 */
    for (i = 0; i < n; i++) y[i] = 0.5f * x[i] * erfcf(-0.70710678118654752f * x[i]);
  }
}
static void fuse__softsign_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i; /* +-inf: NaN (inf / inf), as PyTorch's */
  (void)s;
  for (i = 0; i < n; i++) y[i] = x[i] / (1.0f + fabsf(x[i]));
}
/* alpha = lambd, beta = bias; NaN stays NaN (ONNX's reference would give 0) */
static void fuse__shrink_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  const float lambd = s->a.unary.alpha, bias = s->a.unary.beta;
  int64_t i;
  for (i = 0; i < n; i++) {
    float v = x[i];
    y[i] = v < -lambd ? v + bias : v > lambd ? v - bias : v == v ? 0.0f : v;
  }
}

/* Each unary math op (the rows of kind FUSE__RUN_MATH_UNARY) with its loop: looked up once a
   step. */
static const fuse__unary_loop_row fuse__math_unary_loops[] = {
    {FUSE__OP_SQRT, fuse__sqrt_loop},
    {FUSE__OP_RECIPROCAL, fuse__reciprocal_loop},
    {FUSE__OP_EXP, fuse__exp_loop},
    {FUSE__OP_LOG, fuse__log_loop},
    {FUSE__OP_NEG, fuse__neg_loop},
    {FUSE__OP_ABS, fuse__abs_loop},
    {FUSE__OP_FLOOR, fuse__floor_loop},
    {FUSE__OP_CEIL, fuse__ceil_loop},
    {FUSE__OP_ERF, fuse__erf_loop},
    {FUSE__OP_TANH, fuse__tanh_loop},
    {FUSE__OP_SOFTPLUS, fuse__softplus_loop},
    {FUSE__OP_HARDSWISH, fuse__hardswish_loop},
    {FUSE__OP_HARDSIGMOID, fuse__hardsigmoid_loop},
    {FUSE__OP_LEAKY_RELU, fuse__leaky_relu_loop},
    {FUSE__OP_ELU, fuse__elu_loop},
    {FUSE__OP_SELU, fuse__selu_loop},
    {FUSE__OP_GELU, fuse__gelu_loop},
    {FUSE__OP_SOFTSIGN, fuse__softsign_loop},
    {FUSE__OP_SHRINK, fuse__shrink_loop},
};

static void fuse__kernel_math_unary(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__unary_loop loop = fuse__unary_loop_of(
      fuse__math_unary_loops, (int)(sizeof fuse__math_unary_loops / sizeof *fuse__math_unary_loops),
      s->op);
  FUSE_ASSERT(loop && "fuse__kernel_math_unary: not a unary math op");
  if (loop) loop(fuse__data(r, s->out), fuse__in(r, s, 0), fuse__numel(ty->rank, ty->shape), s);
}

/* One row of a broadcasting op, one function each: y[j] for j < n, operand k read at
   k[j * stride_k]. Adding one: its function and its line in fuse__math_rows. */
typedef void (*fuse__math_row_fn)(float *y, int64_t n, const float *a, int64_t ia,
                                  const float *b, int64_t ib, const float *c, int64_t ic);
static void fuse__div_row(float *y, int64_t n, const float *a, int64_t ia, const float *b,
                          int64_t ib, const float *c, int64_t ic) {
  int64_t j;
  (void)c, (void)ic;
  for (j = 0; j < n; j++) y[j] = a[j * ia] / b[j * ib];
}
/* C's powf is ONNX's Pow: a negative base with an integral exponent has its sign, with
   another exponent it is NaN */
static void fuse__pow_row(float *y, int64_t n, const float *a, int64_t ia, const float *b,
                          int64_t ib, const float *c, int64_t ic) {
  int64_t j;
  (void)c, (void)ic;
  for (j = 0; j < n; j++) y[j] = powf(a[j * ia], b[j * ib]);
}
static void fuse__prelu_row(float *y, int64_t n, const float *a, int64_t ia, const float *b,
                            int64_t ib, const float *c, int64_t ic) {
  int64_t j;
  (void)c, (void)ic;
  for (j = 0; j < n; j++) {
    float v = a[j * ia];
    y[j] = v < 0 ? b[j * ib] * v : v;
  }
}
/* a NaN condition is not 0: it selects the first */
static void fuse__where_row(float *y, int64_t n, const float *a, int64_t ia, const float *b,
                            int64_t ib, const float *c, int64_t ic) {
  int64_t j;
  for (j = 0; j < n; j++) y[j] = a[j * ia] != 0 ? b[j * ib] : c[j * ic];
}

/* Each broadcasting math op (the rows of kind FUSE__RUN_MATH_BROADCAST) with its row
   function: looked up once a step. */
static const struct fuse__math_row_of {
  int op;
  fuse__math_row_fn row;
} fuse__math_rows[] = {
    {FUSE__OP_DIV, fuse__div_row},
    {FUSE__OP_POW, fuse__pow_row},
    {FUSE__OP_PRELU, fuse__prelu_row},
    {FUSE__OP_WHERE, fuse__where_row},
};

/* div, pow, prelu (2 operands) and where (3), numpy broadcasting: row by row along the last
   dimension, after merging the dimensions every operand walks through as through one (a
   whole tensor with a scalar is one row). */
static void fuse__kernel_math_broadcast(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *in[3], *row[3];
  int64_t st[3][FUSE_MAX_RANK], shape[FUSE_MAX_RANK], stride[3][FUSE_MAX_RANK];
  int64_t idx[FUSE_MAX_RANK], inner, outer, o;
  float *y = fuse__data(r, s->out);
  fuse__math_row_fn row_fn = NULL;
  int m = s->num_in < 3 ? s->num_in : 3, k, d, rank = 0, merge;
  for (k = 0; k < (int)(sizeof fuse__math_rows / sizeof *fuse__math_rows); k++)
    if (fuse__math_rows[k].op == s->op) row_fn = fuse__math_rows[k].row;
  FUSE_ASSERT(row_fn && "fuse__kernel_math_broadcast: not a broadcasting math op");
  if (!row_fn) return;
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
    row_fn(y + o * inner, inner, row[0], stride[0][rank - 1], row[1], stride[1][rank - 1], row[2],
           stride[2][rank - 1]);
    for (d = rank - 2; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
  }
}
