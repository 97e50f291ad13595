
/* Transpose and the layout conversions on a kernel table's ISA. The permutation is first
   brought to its fewest dims (fuse__merge_dims; a channel shuffle's (0, 2, 1, 3, 4) of
   [1, 2, 58, 28, 28] is (1, 0, 2) of [2, 58, 784]). Then either the last output dim is
   contiguous in x too, and the output is runs copied whole, or x's contiguous dim is output
   dim q, and each index of the other dims is a 2-D transpose of dims q and last by the vector
   transpose (transpose.inc), cut into blocks of 256 x 256 the threads share. */
typedef struct fuse__transpose_job {
  const float *x;
  float *y;
  fuse_isa isa;
  int rank, q;                     /* q: output dim with x stride 1; -1 when the last one is */
  int64_t shape[FUSE_MAX_RANK];    /* output shape, fewest dims */
  int64_t xs[FUSE_MAX_RANK];       /* x stride of each output dim */
  int64_t ys[FUSE_MAX_RANK];       /* y stride of each output dim */
  int outer[FUSE_MAX_RANK], nouter; /* the dims walked around the run or the 2-D transpose */
  int64_t bands, cbands;           /* blocks per outer index; of them, along dim q */
} fuse__transpose_job;

static void fuse__transpose_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__transpose_job *j = (const fuse__transpose_job *)ctx;
  int last = j->rank - 1, k;
  int64_t u, idx[FUSE_MAX_RANK], xo = 0, yo = 0, rest = u0 / j->bands;
  (void)chunk;
  for (k = j->nouter - 1; k >= 0; k--) { /* the outer index of unit u0 */
    int d = j->outer[k];
    idx[k] = rest % j->shape[d], rest /= j->shape[d];
    xo += idx[k] * j->xs[d], yo += idx[k] * j->ys[d];
  }
  for (u = u0; u < u1; u++) {
    int64_t band = u % j->bands;
    if (j->q < 0) {
      memcpy(j->y + yo, j->x + xo, (size_t)j->shape[last] * sizeof(float));
    } else { /* rows of x: the last output dim; its columns: dim q; blocks of 256 x 256 */
      int64_t a0 = band / j->cbands * 256, c0 = band % j->cbands * 256;
      int64_t rows = j->shape[last] - a0 < 256 ? j->shape[last] - a0 : 256;
      int64_t cols = j->shape[j->q] - c0 < 256 ? j->shape[j->q] - c0 : 256;
      fuse__transpose_isa(j->isa, j->x + xo + a0 * j->xs[last] + c0, j->xs[last],
                          j->y + yo + a0 + c0 * j->ys[j->q], j->ys[j->q], rows, cols);
    }
    if (band + 1 < j->bands) continue;
    for (k = j->nouter - 1; k >= 0; k--) { /* the next outer index */
      int d = j->outer[k];
      xo += j->xs[d], yo += j->ys[d];
      if (++idx[k] < j->shape[d]) break;
      xo -= j->xs[d] * j->shape[d], yo -= j->ys[d] * j->shape[d];
      idx[k] = 0;
    }
  }
}

static void fuse__transpose_run(const fuse__run *r, const float *x, float *y, int rank,
                                const int64_t *xshape, const int *perm) {
  int64_t xs[FUSE_MAX_RANK], shape[FUSE_MAX_RANK], st[1][FUSE_MAX_RANK], i, units;
  fuse__transpose_job j;
  int d;
  for (d = rank - 1, i = 1; d >= 0; d--) xs[d] = i, i *= xshape[d];
  for (d = 0; d < rank; d++) shape[d] = xshape[perm[d]], st[0][d] = xs[perm[d]];
  if (fuse__numel(rank, shape) == 0) return;
  j.x = x, j.y = y, j.isa = r->p->isa;
  j.rank = fuse__merge_dims(rank, shape, 1, st, j.shape, &j.xs);
  if (j.rank == 0) j.shape[0] = 1, j.xs[0] = 1, j.rank = 1; /* one element */
  for (d = j.rank - 1, i = 1; d >= 0; d--) j.ys[d] = i, i *= j.shape[d];
  for (j.q = -1, d = 0; d < j.rank - 1; d++)
    if (j.xs[d] == 1) j.q = d;
  for (j.nouter = 0, d = 0; d < j.rank - 1; d++)
    if (d != j.q) j.outer[j.nouter++] = d;
  j.cbands = j.q < 0 ? 1 : (j.shape[j.q] + 255) / 256;
  j.bands = j.q < 0 ? 1 : (j.shape[j.rank - 1] + 255) / 256 * j.cbands;
  for (units = j.bands, d = 0; d < j.nouter; d++) units *= j.shape[j.outer[d]];
  fuse__parallel(r->p, units, fuse__transpose_units, &j);
}

/* NCHW -> NHWC with the pixels' rows ldy floats apart (the output a slice of a concat's,
   written in place: plan/in_place.c): the transpose job's units with the output strides set. */
static void fuse__to_nhwc_strided(const fuse__run *r, const float *x, float *y, int64_t N,
                                  int64_t C, int64_t P, int64_t ldy) {
  fuse__transpose_job j;
  memset(&j, 0, sizeof j);
  j.x = x, j.y = y, j.isa = r->p->isa, j.rank = 3, j.q = 1; /* output dims (n, pixel, channel) */
  j.shape[0] = N, j.shape[1] = P, j.shape[2] = C;
  j.xs[0] = C * P, j.xs[1] = 1, j.xs[2] = P;
  j.ys[0] = P * ldy, j.ys[1] = ldy, j.ys[2] = 1;
  j.outer[0] = 0, j.nouter = 1;
  j.cbands = (P + 255) / 256;
  j.bands = (C + 255) / 256 * j.cbands;
  fuse__parallel(r->p, N * j.bands, fuse__transpose_units, &j);
}

/* A channel shuffle of two groups gathered from NHWC (fuse__kernel_layout): each pixel's n
   output channels zipped from its two runs of n / 2, `half` floats apart; units of 64 pixels.
   (Through the transpose job, a unit per pixel, the shuffle steps of shufflenet_v2_x1_0 took
   0.142 ms on one thread against 0.078 here.) */
typedef struct fuse__zip_job {
  const float *x;
  float *y;
  fuse_isa isa;
  int64_t n, half, ldx, ldy, pixels;
} fuse__zip_job;

static void fuse__zip_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__zip_job *z = (const fuse__zip_job *)ctx;
  int64_t q, q1 = u1 * 64 < z->pixels ? u1 * 64 : z->pixels;
  (void)chunk;
  for (q = u0 * 64; q < q1; q++)
    fuse__zip2_isa(z->isa, z->x + q * z->ldx, z->x + q * z->ldx + z->half, z->y + q * z->ldy, z->n);
}

/* NCHW <-> NHWC: per image, a transpose of [C][P] into [P][C] or back. */
static void fuse__kernel_layout(const fuse__run *r, const fuse__step *s) {
  static const int perm[3] = {0, 2, 1};
  const fuse__tensor *ty = &r->p->tensors[s->out];
  int64_t C = ty->shape[1], P = ty->shape[2] * ty->shape[3], shape[3];
  int to_nhwc = s->op == FUSE__OP_TO_NHWC;
  if (s->shuffle) { /* channels of a channel shuffle, gathered from NHWC (plan/in_place.c): per
                       pixel output channel b * g + a from input channel a * Cx / g + from + b,
                       a 2-D transpose of g rows by C / g columns; two groups: two runs zipped */
    const fuse__tensor *tx = fuse__in_t(r, s, 0);
    int64_t g = s->shuffle, Cx = tx->shape[1], ldx = tx->stride ? tx->stride : Cx;
    int64_t ldy = ty->stride ? ty->stride : C, N = ty->shape[0];
    fuse__transpose_job j;
    if (g == 2) {
      fuse__zip_job z;
      z.x = fuse__in(r, s, 0) + s->shuffle_from, z.y = fuse__data(r, s->out), z.isa = r->p->isa;
      z.n = C / 2, z.half = Cx / 2, z.ldx = ldx, z.ldy = ldy, z.pixels = N * P;
      fuse__parallel(r->p, (z.pixels + 63) / 64, fuse__zip_units, &z);
      return;
    }
    memset(&j, 0, sizeof j);
    j.x = fuse__in(r, s, 0) + s->shuffle_from, j.y = fuse__data(r, s->out), j.isa = r->p->isa;
    j.rank = 4, j.q = 2; /* output dims (image, pixel, b, a) */
    j.shape[0] = N, j.shape[1] = P, j.shape[2] = C / g, j.shape[3] = g;
    j.xs[0] = P * ldx, j.xs[1] = ldx, j.xs[2] = 1, j.xs[3] = Cx / g;
    j.ys[0] = P * ldy, j.ys[1] = ldy, j.ys[2] = g, j.ys[3] = 1;
    j.outer[0] = 0, j.outer[1] = 1, j.nouter = 2;
    j.cbands = (C / g + 255) / 256;
    j.bands = (g + 255) / 256 * j.cbands;
    fuse__parallel(r->p, N * P * j.bands, fuse__transpose_units, &j);
    return;
  }
  if (ty->stride) {
    fuse__to_nhwc_strided(r, fuse__in(r, s, 0), fuse__data(r, s->out), ty->shape[0], C, P,
                          ty->stride);
    return;
  }
  shape[0] = ty->shape[0], shape[1] = to_nhwc ? C : P, shape[2] = to_nhwc ? P : C;
  fuse__transpose_run(r, fuse__in(r, s, 0), fuse__data(r, s->out), 3, shape, perm);
}

static void fuse__kernel_conv2d(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0), *w = fuse__in(r, s, 1);
  float *y = fuse__data(r, s->out);
  const fuse_conv2d_attrs *a = &s->a.conv;
  int64_t N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t K = tw->shape[0], KH = tw->shape[2], KW = tw->shape[3];
  int64_t OH = ty->shape[2], OW = ty->shape[3], Cg = C / a->groups, Kg = K / a->groups;
  int64_t sh = a->strides[0], sw = a->strides[1], dh = a->dilation[0], dw = a->dilation[1];
  int64_t pt = a->padding[0], pl = a->padding[1], n, k, c, kh, kw, oh, ow;
  /* a kernel of the table; else the reference loops below. A family this build leaves out
     (FUSE_NO_KERNEL_*, config.h) is never called: fuse_plan_load refused its plans. */
  switch (s->kernel) {
  case FUSE__KERNEL_IGEMM:
    if (s->winograd) {
      if (FUSE__HAS_KERNEL(WINOGRAD)) fuse__conv_winograd(r, s);
    } else if (FUSE__HAS_KERNEL(IGEMM)) {
      fuse__conv_igemm(r, s);
    }
    return;
  case FUSE__KERNEL_NCHW_GEMM:
    if (FUSE__HAS_KERNEL(NCHW_GEMM)) fuse__conv_nchw_gemm(r, s);
    return;
  case FUSE__KERNEL_FEW_CHANNELS:
    if (FUSE__HAS_KERNEL(FEW_CHANNELS)) fuse__conv_few_channels(r, s);
    return;
  case FUSE__KERNEL_DW:
    if (FUSE__HAS_KERNEL(DW_NHWC) || FUSE__HAS_KERNEL(DW_NCHW)) fuse__conv_dw(r, s);
    return;
  case FUSE__KERNEL_GROUPED:
    if (FUSE__HAS_KERNEL(GROUPED)) fuse__conv_grouped(r, s);
    return;
  default: break;
  }
  if (!FUSE__HAS_KERNEL(REFERENCE)) return;
  for (n = 0; n < N; n++)
    for (k = 0; k < K; k++) { /* images ty->stride apart when written into a concat in place */
      float *yp = y + n * (ty->stride ? ty->stride : K * OH * OW) + k * OH * OW;
      int64_t grp = k / Kg;
      memset(yp, 0, (size_t)(OH * OW) * sizeof(float));
      for (c = 0; c < Cg; c++) {
        const float *xp = x + (n * C + grp * Cg + c) * H * W;
        const float *wp = w + (k * Cg + c) * KH * KW;
        for (kh = 0; kh < KH; kh++)
          for (kw = 0; kw < KW; kw++) {
            float wv = wp[kh * KW + kw];
            int64_t shift = kw * dw - pl; /* iw = ow * sw + shift */
            /* output columns whose input column lies inside [0, W) */
            int64_t ow0 = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
            int64_t ow1 = W - 1 - shift < 0 ? 0 : (W - 1 - shift) / sw + 1;
            if (ow1 > OW) ow1 = OW;
            for (oh = 0; oh < OH; oh++) {
              int64_t ih = oh * sh - pt + kh * dh;
              const float *xr;
              float *yr;
              if (ih < 0 || ih >= H) continue;
              xr = xp + ih * W;
              yr = yp + oh * OW;
              for (ow = ow0; ow < ow1; ow++) yr[ow] += wv * xr[ow * sw + shift];
            }
          }
      }
      if (s->bias >= 0 || s->num_post) /* the plane of channel k is complete */
        fuse__epilogue(r, s, yp, OH * OW, (n * K + k) * OH * OW, k, 0);
    }
}

/* A matmul without packed weights (both operands computed at run time, as attention's q k^T):
   batches, broadcast as numpy does, of M x K times K x N, in units of a batch's band of 64 rows
   that the threads share. On a kernel table's ISA the row kernels' fuse__matmul_rows (vector
   FMAs); the reference kernels one product at a time. */
typedef struct fuse__matmul_job {
  const fuse__run *r;
  const fuse__step *s;
  const float *a, *b;
  float *y;
  int64_t M, K, N, mparts;
  int rank; /* batch dims */
  int64_t bshape[FUSE_MAX_RANK], sa[FUSE_MAX_RANK], sb[FUSE_MAX_RANK];
  void (*fn)(float *y, int64_t ldy, const float *a, int64_t lda, const float *b, int64_t ldb,
             int64_t M, int64_t K, int64_t N); /* NULL: the reference loops */
} fuse__matmul_job;

static void fuse__matmul_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__matmul_job *j = (const fuse__matmul_job *)ctx;
  int64_t u, M = j->M, K = j->K, N = j->N;
  (void)chunk;
  for (u = u0; u < u1; u++) {
    int64_t bi = u / j->mparts, m0 = u % j->mparts * 64, m1 = m0 + 64 < M ? m0 + 64 : M;
    int64_t rest = bi, oa = 0, ob = 0, m, k, c;
    const float *am, *bm;
    float *ym = j->y + bi * M * N;
    int d;
    for (d = j->rank - 1; d >= 0; d--) { /* batch bi's matrices in a and b */
      int64_t i = rest % j->bshape[d];
      rest /= j->bshape[d];
      oa += i * j->sa[d], ob += i * j->sb[d];
    }
    am = j->a + oa * M * K;
    bm = j->b + ob * K * N;
    if (j->fn) {
      j->fn(ym + m0 * N, N, am + m0 * K, K, bm, N, m1 - m0, K, N);
    } else {
      memset(ym + m0 * N, 0, (size_t)((m1 - m0) * N) * sizeof(float));
      for (m = m0; m < m1; m++)
        for (k = 0; k < K; k++) {
          float av = am[m * K + k];
          const float *br = bm + k * N;
          float *yr = ym + m * N;
          for (c = 0; c < N; c++) yr[c] += av * br[c];
        }
    }
    if (j->s->bias >= 0 || j->s->num_post) /* these rows are complete; bias runs along N */
      for (m = m0; m < m1; m++) fuse__epilogue(j->r, j->s, ym + m * N, N, bi * M * N + m * N, 0, 1);
  }
}

static void fuse__kernel_matmul(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ta = fuse__in_t(r, s, 0), *tb = fuse__in_t(r, s, 1);
  int ra = ta->rank > 2 ? ta->rank - 2 : 0, rb = tb->rank > 2 ? tb->rank - 2 : 0;
  fuse__tensor ba, bb; /* batch parts of a and b, in units of whole matrices */
  fuse__matmul_job j;
  if (s->kernel == FUSE__KERNEL_IGEMM) {
    if (FUSE__HAS_KERNEL(IGEMM)) fuse__conv_igemm(r, s);
    return;
  }
  if (!FUSE__HAS_KERNEL(REFERENCE)) return; /* (as the conv2d above) */
  j.r = r, j.s = s;
  j.a = fuse__in(r, s, 0), j.b = fuse__in(r, s, 1), j.y = fuse__data(r, s->out);
  j.M = ta->rank == 1 ? 1 : ta->shape[ta->rank - 2], j.K = ta->shape[ta->rank - 1];
  j.N = tb->rank == 1 ? 1 : tb->shape[tb->rank - 1];
  j.rank = ra > rb ? ra : rb;
  memset(&ba, 0, sizeof ba);
  memset(&bb, 0, sizeof bb);
  ba.rank = ra;
  bb.rank = rb;
  memcpy(ba.shape, ta->shape, (size_t)ra * sizeof(int64_t));
  memcpy(bb.shape, tb->shape, (size_t)rb * sizeof(int64_t));
  fuse__broadcast(ra, ba.shape, rb, bb.shape, &j.rank, j.bshape);
  fuse__broadcast_strides(&ba, j.rank, j.bshape, j.sa);
  fuse__broadcast_strides(&bb, j.rank, j.bshape, j.sb);
  j.fn = fuse__rows_of(r->p->isa)->matmul;
  j.mparts = (j.M + 63) / 64;
  fuse__parallel(r->p, fuse__numel(j.rank, j.bshape) * j.mparts, fuse__matmul_units, &j);
}

/* The reference: the output in order, the input by strides, one float at a time. */
static void fuse__transpose_ref(const fuse__tensor *tx, const fuse__tensor *ty, const int *perm,
                                const float *x, float *y) {
  int64_t xs[FUSE_MAX_RANK], st[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], i, count, off = 0;
  int d, rank = ty->rank;
  for (d = rank - 1, i = 1; d >= 0; d--) { /* input strides */
    xs[d] = i;
    i *= tx->shape[d];
  }
  for (d = 0; d < rank; d++) st[d] = xs[perm[d]]; /* stride of output dim d in x */
  count = fuse__numel(rank, ty->shape);
  memset(idx, 0, sizeof idx);
  for (i = 0; i < count; i++) { /* walk the output in order, the input by strides */
    y[i] = x[off];
    for (d = rank - 1; d >= 0; d--) {
      off += st[d];
      if (++idx[d] < ty->shape[d]) break;
      off -= st[d] * ty->shape[d];
      idx[d] = 0;
    }
  }
}

static void fuse__kernel_transpose(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  if (r->p->isa == FUSE_ISA_AUTO) /* the reference kernels */
    fuse__transpose_ref(tx, ty, s->a.perm, fuse__in(r, s, 0), fuse__data(r, s->out));
  else
    fuse__transpose_run(r, fuse__in(r, s, 0), fuse__data(r, s->out), tx->rank, tx->shape,
                        s->a.perm);
}

/* A concat at run time: its output as `outer` rows of `row` floats (NHWC: a pixel's channels),
   input i a piece of each row; units are rows, each chunk copying every input's pieces of its
   rows (densenet's concats copy up to 31 inputs of 32 to 128 floats per pixel: one thread
   alone ran them slower on two threads than on one, reading what the other core wrote). */
typedef struct fuse__concat_job {
  const fuse__run *r;
  const fuse__step *s;
  float *y;
  int axis, nhwc;
  int64_t inner, row, ldy; /* ldy: floats between output rows (row, or a larger concat's) */
} fuse__concat_job;

static void fuse__concat_rows(void *ctx, int chunk, int64_t o0, int64_t o1) {
  const fuse__concat_job *j = (const fuse__concat_job *)ctx;
  int64_t at = 0, o;
  int i;
  (void)chunk;
  for (i = 0; i < j->s->num_in; i++) {
    const fuse__tensor *tx = fuse__in_t(j->r, j->s, i);
    const float *x = fuse__in(j->r, j->s, i);
    int64_t piece, ldx = tx->stride; /* a slice of another concat's output: rows ldx apart */
    fuse__tensor vx;
    if (j->nhwc) fuse__nhwc_shape(tx, &vx), tx = &vx;
    piece = tx->shape[j->axis] * j->inner;
    if (x != j->y + at) /* else its producer wrote it in place (plan/in_place.c) */
      for (o = o0; o < o1; o++)
        memcpy(j->y + o * j->ldy + at, x + o * (ldx ? ldx : piece), (size_t)piece * sizeof(float));
    at += piece;
  }
}

static void fuse__kernel_concat(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__concat_job j;
  fuse__tensor vy;
  j.r = r, j.s = s, j.y = fuse__data(r, s->out);
  j.axis = s->a.axis, j.nhwc = ty->nhwc;
  if (j.nhwc) { /* channels are the last axis of the bytes */
    fuse__nhwc_shape(ty, &vy);
    ty = &vy;
    j.axis = 3;
  }
  j.inner = fuse__numel(ty->rank - j.axis - 1, ty->shape + j.axis + 1);
  j.row = ty->shape[j.axis] * j.inner;
  j.ldy = r->p->tensors[s->out].stride ? r->p->tensors[s->out].stride : j.row; /* nested */
  fuse__parallel(r->p, fuse__numel(j.axis, ty->shape), fuse__concat_rows, &j);
}

static void fuse__kernel_softmax(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int axis = s->a.axis;
  int64_t outer = fuse__numel(axis, ty->shape), len = ty->shape[axis];
  int64_t inner = fuse__numel(ty->rank - axis - 1, ty->shape + axis + 1), o, i, j;
  for (o = 0; o < outer; o++)
    for (i = 0; i < inner; i++) {
      const float *xp = x + o * len * inner + i;
      float *yp = y + o * len * inner + i, mx = xp[0];
      double sum = 0;
      for (j = 1; j < len; j++) mx = xp[j * inner] > mx ? xp[j * inner] : mx;
      for (j = 0; j < len; j++) sum += yp[j * inner] = expf(xp[j * inner] - mx);
      for (j = 0; j < len; j++) yp[j * inner] = (float)(yp[j * inner] / sum);
    }
}

static void fuse__kernel_batch_norm(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0), *scale = fuse__in(r, s, 1), *bias = fuse__in(r, s, 2);
  const float *mean = fuse__in(r, s, 3), *var = fuse__in(r, s, 4);
  float *y = fuse__data(r, s->out);
  int64_t N = ty->shape[0], C = ty->shape[1], inner = fuse__numel(ty->rank - 2, ty->shape + 2);
  int64_t n, c, i;
  for (c = 0; c < C; c++) {
    double mul = scale[c] / sqrt((double)var[c] + (double)s->a.eps);
    float m = (float)mul, add = (float)(bias[c] - mean[c] * mul);
    for (n = 0; n < N; n++) {
      const float *xp = x + (n * C + c) * inner;
      float *yp = y + (n * C + c) * inner;
      for (i = 0; i < inner; i++) yp[i] = xp[i] * m + add;
    }
  }
}

/* max / average pool on NHWC: the same windows, channels innermost. */
static void fuse__pool_rows(void *ctx, int chunk, int64_t r0, int64_t r1) {
  const fuse__pool_args *d = (const fuse__pool_args *)ctx;
  (void)chunk;
  d->fn(d, r0, r1);
}

static void fuse__kernel_pool_nhwc(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  const fuse_pool2d_attrs *a = &s->a.pool;
  int64_t N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t OH = ty->shape[2], OW = ty->shape[3], n, oh, ow, ih, iw, c;
  int64_t ldy = ty->stride ? ty->stride : C; /* a slice of a concat: pixels ldy floats apart */
  int is_max = s->op == FUSE__OP_MAX_POOL2D, kh, kw;
  fuse__pool_args d;
  d.fn = fuse__pool_pick(r->p->isa);
  if (d.fn) {
    d.x = x, d.y = y, d.a = a, d.is_max = is_max;
    d.C = C, d.H = H, d.W = W, d.OH = OH, d.OW = OW, d.ldy = ldy;
    fuse__parallel(r->p, N * OH, fuse__pool_rows, &d);
    return;
  }
  for (n = 0; n < N; n++)
    for (oh = 0; oh < OH; oh++)
      for (ow = 0; ow < OW; ow++) {
        int64_t h0 = oh * a->strides[0] - a->padding[0], w0 = ow * a->strides[1] - a->padding[1];
        float *yp = y + ((n * OH + oh) * OW + ow) * ldy;
        if (is_max) {
          int kh0, kh1, kw0, kw1;
          fuse__taps(h0, a->dilation[0], a->kernel[0], H, &kh0, &kh1);
          fuse__taps(w0, a->dilation[1], a->kernel[1], W, &kw0, &kw1);
          for (c = 0; c < C; c++) yp[c] = -HUGE_VALF;
          for (kh = kh0; kh < kh1; kh++) {
            ih = h0 + (int64_t)kh * a->dilation[0];
            for (kw = kw0; kw < kw1; kw++) {
              const float *xp;
              iw = w0 + (int64_t)kw * a->dilation[1];
              xp = x + ((n * H + ih) * W + iw) * C;
              for (c = 0; c < C; c++) /* a NaN stays */
                yp[c] = xp[c] > yp[c] || xp[c] != xp[c] ? xp[c] : yp[c];
            }
          }
        } else {
          int64_t h1 = h0 + a->kernel[0], w1 = w0 + a->kernel[1];
          int64_t hp = H + a->padding[2], wp = W + a->padding[3], area;
          float inv;
          if (h1 > hp) h1 = hp;
          if (w1 > wp) w1 = wp;
          area = (h1 - h0) * (w1 - w0);
          if (h0 < 0) h0 = 0;
          if (w0 < 0) w0 = 0;
          if (h1 > H) h1 = H;
          if (w1 > W) w1 = W;
          if (!a->count_include_pad) area = (h1 - h0) * (w1 - w0);
          for (c = 0; c < C; c++) yp[c] = 0;
          for (ih = h0; ih < h1; ih++)
            for (iw = w0; iw < w1; iw++) {
              const float *xp = x + ((n * H + ih) * W + iw) * C;
              for (c = 0; c < C; c++) yp[c] += xp[c];
            }
          inv = (float)(1.0 / (double)area);
          for (c = 0; c < C; c++) yp[c] *= inv;
        }
      }
}

static void fuse__kernel_pool(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  const fuse_pool2d_attrs *a = &s->a.pool;
  int64_t NC = tx->shape[0] * tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t OH = ty->shape[2], OW = ty->shape[3], nc, oh, ow, ih, iw;
  int is_max = s->op == FUSE__OP_MAX_POOL2D;
  if (tx->nhwc) {
    fuse__kernel_pool_nhwc(r, s);
    return;
  }
  /* output columns whose window lies inside the input, [ow_lo, ow_hi): their taps need no
     arithmetic (fuse__taps divides, once per row and at the edges only) */
  int64_t sw = a->strides[1], span = (int64_t)(a->kernel[1] - 1) * a->dilation[1];
  int64_t ow_lo = (a->padding[1] + sw - 1) / sw;
  int64_t ow_hi = W - 1 - span + a->padding[1] < 0 ? 0 : (W - 1 - span + a->padding[1]) / sw + 1;
  if (ow_hi > OW) ow_hi = OW;
  if (ow_lo > ow_hi) ow_lo = ow_hi;
  for (nc = 0; nc < NC; nc++) {
    const float *xp = x + nc * H * W;
    float *yp = y + nc * OH * OW;
    for (oh = 0; oh < OH; oh++) {
      int kh0 = 0, kh1 = 0;
      if (is_max)
        fuse__taps(oh * a->strides[0] - a->padding[0], a->dilation[0], a->kernel[0], H, &kh0, &kh1);
      for (ow = 0; ow < OW; ow++) {
        int64_t h0 = oh * a->strides[0] - a->padding[0], w0 = ow * sw - a->padding[1];
        if (is_max) {
          float m = -HUGE_VALF;
          int kh, kw, kw0 = 0, kw1 = a->kernel[1]; /* only the taps inside the input */
          if (ow < ow_lo || ow >= ow_hi)
            fuse__taps(w0, a->dilation[1], a->kernel[1], W, &kw0, &kw1);
          for (kh = kh0; kh < kh1; kh++) {
            const float *xr = xp + (h0 + (int64_t)kh * a->dilation[0]) * W + w0;
            for (kw = kw0; kw < kw1; kw++) { /* a NaN, once taken, stays: v > NaN is false */
              float v = xr[(int64_t)kw * a->dilation[1]];
              m = v > m || v != v ? v : m;
            }
          }
          yp[oh * OW + ow] = m;
        } else {
          /* window clipped to the padded input (PyTorch's divisor with count_include_pad) */
          int64_t h1 = h0 + a->kernel[0], w1 = w0 + a->kernel[1];
          int64_t hp = H + a->padding[2], wp = W + a->padding[3], area;
          double sum = 0;
          if (h1 > hp) h1 = hp;
          if (w1 > wp) w1 = wp;
          area = (h1 - h0) * (w1 - w0);
          if (h0 < 0) h0 = 0;
          if (w0 < 0) w0 = 0;
          if (h1 > H) h1 = H;
          if (w1 > W) w1 = W;
          for (ih = h0; ih < h1; ih++)
            for (iw = w0; iw < w1; iw++) sum += xp[ih * W + iw];
          if (!a->count_include_pad) area = (h1 - h0) * (w1 - w0);
          yp[oh * OW + ow] = (float)(sum / (double)area);
        }
      }
    }
  }
}

static void fuse__kernel_global_avg_pool(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0);
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t NC = tx->shape[0] * tx->shape[1], inner = fuse__numel(tx->rank - 2, tx->shape + 2);
  int64_t nc, i, C = tx->shape[1];
  for (nc = 0; nc < NC; nc++) {
    double sum = 0;
    if (tx->nhwc) /* channel nc % C of image nc / C, every C-th float */
      for (i = 0; i < inner; i++) sum += x[(nc / C * inner + i) * C + nc % C];
    else
      for (i = 0; i < inner; i++) sum += x[nc * inner + i];
    y[nc] = (float)(sum / (double)inner);
  }
}

