/* ------------------------------------------- chain and row kernels' drivers -- */
/* The chain step (kernels/chain.c) and the vector paths of softmax, log-softmax, the
   normalizations and the reductions: contiguous rows cut among the threads, each row through
   the plan's ISA's row kernel. The reference kernels (ref_nn.c, other_ops.c) stay the oracle
   and run whatever these do not take (a strided axis; the reference plan). */

typedef struct fuse__chain_job {
  const fuse__step *s;
  fuse__chain_fn fn;
  float *y;
  const float *in[FUSE__CHAIN_OPERANDS];
  int64_t shape[FUSE_MAX_RANK], stride[FUSE__CHAIN_OPERANDS][FUSE_MAX_RANK];
  int64_t inc[FUSE__CHAIN_OPERANDS];
  int rank, num;            /* merged dimensions; operands */
  int64_t inner, parts, part_len; /* each row in parts of part_len floats (the last shorter) */
} fuse__chain_job;

static void fuse__chain_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__chain_job *j = (const fuse__chain_job *)ctx;
  int64_t idx[FUSE_MAX_RANK], row = u0 / j->parts, rem = row, u;
  const float *src[FUSE__CHAIN_OPERANDS];
  int d, k;
  (void)chunk;
  for (d = j->rank - 2; d >= 0; d--) {
    idx[d] = rem % j->shape[d];
    rem /= j->shape[d];
  }
  for (u = u0; u < u1; u++) {
    int64_t part = u % j->parts, b = part * j->part_len;
    int64_t n = j->inner - b < j->part_len ? j->inner - b : j->part_len;
    for (k = 0; k < j->num; k++) {
      const float *q = j->in[k];
      for (d = 0; d < j->rank - 1; d++) q += idx[d] * j->stride[k][d];
      src[k] = q + b * j->inc[k];
    }
    j->fn(j->s->chain, j->s->num_chain, j->y + row * j->inner + b, src, j->inc, n);
    if (part == j->parts - 1) {
      row++;
      for (d = j->rank - 2; d >= 0 && ++idx[d] == j->shape[d]; d--) idx[d] = 0;
    }
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
  int k, d, merge;
  if (ty->nhwc) fuse__nhwc_shape(ty, &vy), ty = &vy;
  j.s = s;
  j.fn = fuse__rows_of(r->p->isa)->chain;
  j.y = fuse__data(r, s->out);
  j.num = s->num_in;
  j.rank = 0;
  for (k = 0; k < j.num; k++) {
    const fuse__tensor *tx = fuse__in_t(r, s, k);
    if (ty == &vy) fuse__nhwc_shape(tx, &vx), tx = &vx;
    j.in[k] = fuse__in(r, s, k);
    fuse__broadcast_strides(tx, ty->rank, ty->shape, st[k]);
  }
  for (d = 0; d < ty->rank; d++) {
    if (ty->shape[d] == 1) continue; /* nothing to walk */
    for (merge = j.rank > 0, k = 0; k < j.num; k++)
      merge = merge && j.stride[k][j.rank - 1] == st[k][d] * ty->shape[d];
    if (!merge) j.shape[j.rank++] = 1;
    j.shape[j.rank - 1] *= ty->shape[d];
    for (k = 0; k < j.num; k++) j.stride[k][j.rank - 1] = st[k][d];
  }
  if (j.rank == 0) { /* one element */
    j.shape[0] = 1;
    for (k = 0; k < j.num; k++) j.stride[k][0] = 0;
    j.rank = 1;
  }
  j.inner = j.shape[j.rank - 1];
  for (k = 0; k < j.num; k++) j.inc[k] = j.stride[k][j.rank - 1];
  j.part_len = 16384; /* a thread's share of one long row */
  j.parts = (j.inner + j.part_len - 1) / j.part_len;
  if (j.parts < 1) j.parts = 1;
  fuse__parallel(r->p, fuse__numel(j.rank - 1, j.shape) * j.parts, fuse__chain_units, &j);
}
