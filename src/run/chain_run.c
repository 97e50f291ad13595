/* ------------------------------------------- chain and row kernels' drivers -- */
/* The chain step (kernels/chain_rows.c) and the vector paths of softmax, log-softmax, the
   normalizations and the reductions: contiguous rows cut among the threads, each row through
   the plan's ISA's row kernel. The reference kernels (run/reference_nn.c, run/steps.c) stay
   the oracle and run whatever these do not take (a strided axis; the reference plan). */

typedef struct fuse__chain_job {
  const fuse__step *s;
  fuse__chain_fn fn;
  float *y;
  const float *in[FUSE__CHAIN_OPERANDS];
  int64_t shape[FUSE_MAX_RANK], stride[FUSE__CHAIN_OPERANDS][FUSE_MAX_RANK];
  int64_t inc[FUSE__CHAIN_OPERANDS], row_stride[FUSE__CHAIN_OPERANDS];
  int rank, num;            /* merged dimensions; operands */
  int64_t inner, parts, part_len; /* each row in parts of part_len floats (the last shorter) */
} fuse__chain_job;

static void fuse__chain_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__chain_job *j = (const fuse__chain_job *)ctx;
  int64_t idx[FUSE_MAX_RANK], row = u0 / j->parts, part = u0 % j->parts, rem = row, u, count;
  int64_t last = j->rank >= 2 ? j->shape[j->rank - 2] : 1; /* rows along the innermost outer axis */
  const float *src[FUSE__CHAIN_OPERANDS];
  int d, k;
  (void)chunk;
  for (d = j->rank - 2; d >= 0; d--) {
    idx[d] = rem % j->shape[d];
    rem /= j->shape[d];
  }
  for (u = u0; u < u1; u += count) {
    int64_t b = part * j->part_len;
    int64_t n = j->inner - b < j->part_len ? j->inner - b : j->part_len;
    count = 1; /* whole rows: a run of them in one call (rows may be a few vectors long) */
    if (j->parts == 1 && j->rank >= 2) {
      count = last - idx[j->rank - 2];
      if (count > u1 - u) count = u1 - u;
    }
    for (k = 0; k < j->num; k++) {
      const float *q = j->in[k];
      for (d = 0; d < j->rank - 1; d++) q += idx[d] * j->stride[k][d];
      src[k] = q + b * j->inc[k];
    }
    for (; k < FUSE__CHAIN_OPERANDS; k++) src[k] = src[0]; /* never read, but defined */
    j->fn(j->s->chain, j->s->num_chain, j->y + row * j->inner + b, src, j->inc, j->row_stride,
          count, n);
    if (j->parts > 1 && ++part < j->parts) continue;
    part = 0;
    row += count;
    if (j->rank >= 2) idx[j->rank - 2] += count - 1;
    for (d = j->rank - 2; d >= 0 && ++idx[d] == j->shape[d]; d--) idx[d] = 0;
  }
}

/* numpy broadcasting over the output's shape (its bytes' [N, H, W, C] when NHWC), after
   merging the dimensions every operand walks through as through one: rows along the last,
   where each operand advances by 0 or 1. */
static void fuse__kernel_chain(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__tensor vy, vx;
  int64_t st[FUSE__CHAIN_OPERANDS][FUSE_MAX_RANK];
  fuse__chain_job j;
  int k;
  if (ty->nhwc) fuse__nhwc_shape(ty, &vy), ty = &vy;
  j.s = s;
  j.fn = fuse__rows_of(r->p->isa)->chain;
  j.y = fuse__data(r, s->out);
  j.num = s->num_in;
  for (k = 0; k < j.num; k++) {
    const fuse__tensor *tx = fuse__in_t(r, s, k);
    if (ty == &vy) fuse__nhwc_shape(tx, &vx), tx = &vx;
    j.in[k] = fuse__in(r, s, k);
    fuse__broadcast_strides(tx, ty->rank, ty->shape, st[k]);
    if (fuse__in_t(r, s, k)->stride) { /* a concat's slice (plan/in_place.c): rows of `row` floats,
                                          stride apart (NHWC: a pixel's channels) */
      int64_t row = 1, d;
      for (d = 1; d < tx->rank; d++) row *= tx->shape[d];
      if (ty == &vy) row = tx->shape[3];
      for (d = 0; d < ty->rank; d++)
        if (st[k][d] >= row) st[k][d] = st[k][d] / row * fuse__in_t(r, s, k)->stride;
    }
  }
  j.rank = fuse__merge_dims(ty->rank, ty->shape, j.num, st, j.shape, j.stride);
  if (j.rank == 0) { /* one element */
    j.shape[0] = 1;
    for (k = 0; k < j.num; k++) j.stride[k][0] = 0;
    j.rank = 1;
  }
  j.inner = j.shape[j.rank - 1];
  memset(j.row_stride, 0, sizeof j.row_stride);
  memset(j.inc, 0, sizeof j.inc);
  for (k = 0; k < j.num; k++) {
    j.inc[k] = j.stride[k][j.rank - 1];
    j.row_stride[k] = j.rank >= 2 ? j.stride[k][j.rank - 2] : 0;
  }
  j.part_len = 16384; /* a thread's share of one long row */
  j.parts = (j.inner + j.part_len - 1) / j.part_len;
  if (j.parts < 1) j.parts = 1;
  fuse__parallel(r->p, fuse__numel(j.rank - 1, j.shape) * j.parts, fuse__chain_units, &j);
}

/* Rows of a contiguous axis: `rows` rows of `len` floats. */
typedef struct fuse__rows_job {
  const fuse__run *r;
  const fuse__step *s;
  const fuse__row_ops *k;
  const float *x, *scale, *bias;
  float *y;
  int64_t len, per_group, inner, C; /* the norms' channels per group, pixels, channels */
} fuse__rows_job;

static void fuse__softmax_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__rows_job *j = (const fuse__rows_job *)ctx;
  int64_t u;
  (void)chunk;
  for (u = u0; u < u1; u++)
    j->k->softmax(j->y + u * j->len, j->x + u * j->len, j->len, j->s->op == FUSE__OP_LOG_SOFTMAX);
}

/* softmax / log-softmax along the last axis (or one followed by size-1 axes) on the plan's
   ISA; 0 when the step is not that (the reference kernel runs it). */
static int fuse__rows_softmax(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__rows_job j;
  int axis = s->a.axis;
  j.k = fuse__rows_of(r->p->isa);
  if (!j.k->softmax || ty->rank == 0 ||
      fuse__numel(ty->rank - axis - 1, ty->shape + axis + 1) != 1)
    return 0;
  j.r = r, j.s = s;
  j.x = fuse__in(r, s, 0), j.y = fuse__data(r, s->out);
  j.len = ty->shape[axis];
  if (j.len < 1) return 1;
  fuse__parallel(r->p, fuse__numel(axis, ty->shape), fuse__softmax_units, &j);
  return 1;
}

/* mean and 1 / sqrt(variance + eps) of a contiguous span: two passes (the variance about the
   mean, not E[x^2] - mean^2), the row kernel's block sums in double */
static void fuse__rows_stats(const fuse__rows_job *j, const float *x, int64_t n, float *mean,
                             float *inv) {
  double m = j->k->sum(x, n, 0, 0.0f) / (double)n;
  double var = j->k->sum(x, n, 2, (float)m) / (double)n;
  *mean = (float)m;
  *inv = (float)(1.0 / sqrt(var + (double)j->s->a.norm.eps));
}

static void fuse__norm_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__rows_job *j = (const fuse__rows_job *)ctx;
  int64_t u, c;
  (void)chunk;
  for (u = u0; u < u1; u++) {
    const float *x = j->x + u * j->len;
    float *y = j->y + u * j->len, mean, inv;
    fuse__rows_stats(j, x, j->len, &mean, &inv);
    if (j->s->op == FUSE__OP_LAYER_NORM) {
      j->k->norm(y, x, j->len, mean, inv, j->scale, 1, j->bias, 1);
      continue;
    }
    for (c = 0; c < j->per_group; c++) { /* channel ch: its scale and bias */
      int64_t ch = u % (j->C / j->per_group) * j->per_group + c;
      j->k->norm(y + c * j->inner, x + c * j->inner, j->inner, mean, inv, j->scale + ch, 0,
                 j->bias + ch, 0);
    }
  }
}

/* layer / instance / group norm on the plan's ISA: each span is contiguous */
static int fuse__rows_norm(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__rows_job j;
  int64_t outer;
  j.k = fuse__rows_of(r->p->isa);
  if (!j.k->norm) return 0;
  j.r = r, j.s = s;
  j.x = fuse__in(r, s, 0), j.y = fuse__data(r, s->out);
  j.scale = fuse__in(r, s, 1);
  j.bias = s->num_in > 2 ? fuse__in(r, s, 2) : NULL;
  if (s->op == FUSE__OP_LAYER_NORM) {
    outer = fuse__numel(s->a.norm.axis, ty->shape);
    j.len = fuse__numel(ty->rank - s->a.norm.axis, ty->shape + s->a.norm.axis);
    j.per_group = j.inner = j.C = 1;
  } else {
    int64_t groups;
    if (!j.bias) return 0;
    j.C = ty->shape[1];
    groups = s->op == FUSE__OP_INSTANCE_NORM ? j.C : s->a.norm.groups;
    j.per_group = j.C / groups;
    j.inner = fuse__numel(ty->rank - 2, ty->shape + 2);
    outer = ty->shape[0] * groups;
    j.len = j.per_group * j.inner;
  }
  if (j.len < 1) return 1;
  fuse__parallel(r->p, outer, fuse__norm_units, &j);
  return 1;
}

static void fuse__reduce_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__rows_job *j = (const fuse__rows_job *)ctx;
  int op = j->s->op;
  int64_t u;
  (void)chunk;
  for (u = u0; u < u1; u++) {
    const float *x = j->x + u * j->len;
    double acc;
    if (op == FUSE__OP_REDUCE_MAX || op == FUSE__OP_REDUCE_MIN) {
      j->y[u] = j->k->max(x, j->len, op == FUSE__OP_REDUCE_MIN);
      continue;
    }
    acc = j->k->sum(x, j->len, op == FUSE__OP_REDUCE_SUM_SQUARE || op == FUSE__OP_REDUCE_L2, 0.0f);
    if (op == FUSE__OP_REDUCE_MEAN) acc /= (double)j->len;
    else if (op == FUSE__OP_REDUCE_L2) acc = sqrt(acc);
    j->y[u] = (float)acc;
  }
}

/* mean, sum, max, min, sum of squares, L2 over the innermost axes (no reduced axis of more
   than one element before a kept one): contiguous rows on the plan's ISA */
static int fuse__rows_reduce(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0);
  fuse__rows_job j;
  int64_t outer = 1;
  int i, seen_reduced = 0;
  j.k = fuse__rows_of(r->p->isa);
  if (!j.k->sum || s->op == FUSE__OP_REDUCE_PROD) return 0;
  j.len = 1;
  for (i = 0; i < tx->rank; i++) {
    if (tx->shape[i] == 1) continue;
    if (s->a.reduce.axes >> i & 1u) {
      seen_reduced = 1;
      j.len *= tx->shape[i];
    } else {
      if (seen_reduced) return 0; /* a kept axis inside: strided */
      outer *= tx->shape[i];
    }
  }
  if (outer == 0) return 1;
  if (j.len == 0) return 0; /* empty reductions: the reference's identities */
  j.r = r, j.s = s;
  j.x = fuse__in(r, s, 0), j.y = fuse__data(r, s->out);
  fuse__parallel(r->p, outer, fuse__reduce_units, &j);
  return 1;
}

/* The global average pool: an NHWC image's channels as column sums over its pixels, in
   blocks of 128 channels (the units cut among the threads); an NCHW channel as one
   contiguous row. */
typedef struct fuse__gap_job {
  const fuse__row_ops *k;
  const float *x;
  float *y;
  int64_t C, inner, block, blocks;
} fuse__gap_job;

static void fuse__gap_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__gap_job *j = (const fuse__gap_job *)ctx;
  int64_t u;
  (void)chunk;
  for (u = u0; u < u1; u++) {
    if (j->blocks) { /* NHWC */
      int64_t n = u / j->blocks, c0 = u % j->blocks * j->block;
      int64_t width = j->C - c0 < j->block ? j->C - c0 : j->block;
      j->k->col_sum(j->y + n * j->C + c0, j->x + n * j->inner * j->C + c0, j->inner, j->C, width,
                    1.0 / (double)j->inner);
    } else
      j->y[u] = (float)(j->k->sum(j->x + u * j->inner, j->inner, 0, 0.0f) / (double)j->inner);
  }
}

static int fuse__rows_global_avg_pool(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0);
  fuse__gap_job j;
  j.k = fuse__rows_of(r->p->isa);
  if (!j.k->col_sum) return 0;
  j.x = fuse__in(r, s, 0), j.y = fuse__data(r, s->out);
  j.C = tx->shape[1];
  j.inner = fuse__numel(tx->rank - 2, tx->shape + 2);
  if (j.inner < 1 || j.C < 1 || tx->shape[0] < 1) return 0; /* the reference's empty cases */
  j.block = 128; /* eight AVX-512 vectors; col_sum takes its own vectors' blocks inside */
  j.blocks = tx->nhwc ? (j.C + j.block - 1) / j.block : 0;
  fuse__parallel(r->p, tx->shape[0] * (tx->nhwc ? j.blocks : j.C), fuse__gap_units, &j);
  return 1;
}
