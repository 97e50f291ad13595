/* ------------------------------------------------- Winograd: choice, packing -- */
/* Which 3x3 stride-1 convs run as Winograd F(m,3) (src/kernels/winograd.c), with which m,
   and their weights transformed and packed at compile. */

/* One 3x3 filter g (row-major) transformed for F(m,3): u[p] = (G g GT)[p / alpha][p % alpha],
   in double, rounded once. */
static void fuse__wino_filter(int m, const float *g, float *u) {
  const double *G = m == 2 ? &fuse__wino_g2[0][0] : m == 4 ? &fuse__wino_g4[0][0] : &fuse__wino_g6[0][0];
  int alpha = m + 2, i, j, k;
  double t[8][3]; /* G g */
  for (i = 0; i < alpha; i++)
    for (j = 0; j < 3; j++) {
      double s = 0;
      for (k = 0; k < 3; k++) s += G[i * 3 + k] * g[k * 3 + j];
      t[i][j] = s;
    }
  for (i = 0; i < alpha; i++)
    for (j = 0; j < alpha; j++) {
      double s = 0;
      for (k = 0; k < 3; k++) s += t[i][k] * G[j * 3 + k];
      u[i * alpha + j] = (float)s;
    }
}

/* Bytes of a chunk's scratch for a block of `block` tiles: the row pointers, V and M. */
static size_t fuse__wino_scratch(int m, int64_t block, int64_t C, int64_t K, int mr) {
  size_t ptrs = ((size_t)mr * sizeof(float *) + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
  return ptrs + (size_t)((m + 2) * (m + 2) * block * (C + K)) * sizeof(float) + FUSE__ALIGN;
}

/* The transformed input and products of a block of tiles, per chunk, at most: a position's
   slice of both (1 / (m+2)^2 of it) stays in L2 while its GEMMs run. */
#define FUSE__WINO_BLOCK_BYTES (2 * 1024 * 1024)
#define FUSE__WINO_MERGED_COLUMNS 16 /* groups merged until their output channels are this many */

/* The cost rule. Each candidate's time is estimated from what it does and the ISA's
   FMA rate P (AVX-512 200 GFLOP/s, AVX2 100, NEON 25, scalar 4; only their ratio to the memory
   rate matters): the direct kernel's multiply-adds at its tile's efficiency (fuse__igemm_eff),
   plus its weights streamed once; F(m,3)'s position GEMMs ((m+2)^2 per tile over merged
   groups) at their tile's efficiency, plus 12 operations per transformed element (input and
   output) at 40 % of P, and its transformed weights ((m+2)^2 / 9 times the direct kernel's)
   streamed once per block. Weights stream at 100 GB/s while one pass over them fits in
   16 MB (the last-level cache), at 20 GB/s (memory) past it; from memory the stream runs
   beside the GEMMs (each brings the next one's panel into L2 while it runs), so the slower
   of the two counts. (Counting the overlap from the cache too put small grouped and
   googlenet layers on F(4,3) that ran 1.5-1.7x slower than direct: their GEMMs are short,
   with a cost per call the estimate leaves out.)
   Winograd must win by 10 %. F(6,3) is never picked: it measured 8-30x the direct kernel's
   rounding error (tests/test_winograd.c), past the 4x this library allows its fast paths.
   The constants were fitted to the conv step of 3x3 stride-1 layers (C = K from 16 to 512,
   7 to 112 pixels, resnext's 32 groups) timed direct, F(2,3), F(4,3) and F(6,3) on AVX-512
   and AVX2 (bench/layers' Winograd table has the resnet / vgg ones) on a shared, noisy
   machine: what it decides there, F(4,3) down to 7 pixels up to 256 channels, F(2,3) for 512
   channels at 7 pixels (F(4,3) would stream 37 MB of transformed weights for 4 tiles; F(2,3)
   streams 17 MB under 16 tiles' GEMMs, 0.8x the direct kernel's time in resnet18 / resnet50
   on both ISAs) and the direct kernels for tiny layers (16 channels at 7 pixels), is what
   was measured fastest; elsewhere F(2,3) measured between the two. Grouped
   convs of 4 channels per group (resnext) go to F(4,3) on AVX-512 and stay direct on AVX2,
   where its 16-column tile runs the merged groups' zeros at the same cost. */
/* bytes a second at which a pass over `bytes` of weights streams */
#define FUSE__WINO_CACHE_BYTES 16e6 /* the last-level cache the rule assumes */
static double fuse__wino_stream_rate(double bytes) {
  return bytes <= FUSE__WINO_CACHE_BYTES ? 100e9 : 20e9;
}

static double fuse__wino_estimate(fuse_isa isa, const fuse__conv_shape *c, int m, int64_t merge,
                                  int mr, int kind) {
  double P = isa == FUSE_ISA_AVX512 ? 200e9 : isa == FUSE_ISA_AVX2 ? 100e9
             : isa == FUSE_ISA_NEON ? 25e9 : 4e9;
  double alpha2 = (double)(m + 2) * (m + 2);
  double images = (double)(c->npix / (c->OH * c->OW));
  double tiles = images * (double)((c->OH + m - 1) / m) * (double)((c->OW + m - 1) / m);
  double G = (double)(c->G / merge), Cg = (double)(c->Cg * merge), Kg = (double)(c->Kg * merge);
  /* blocks as one chunk would cut them (the choice must not depend on the thread count: a
     plan's results are the same on any number of threads) */
  int64_t per_tile = (int64_t)(m + 2) * (m + 2) * (c->G * c->Cg + c->K) * (int64_t)sizeof(float);
  int64_t block = FUSE__WINO_BLOCK_BYTES / per_tile / mr * mr;
  double blocks = ceil(tiles / (double)(block > mr ? block : mr));
  double eff = fuse__igemm_eff(kind, (int64_t)Kg, (int64_t)tiles, 1);
  double gemm = 2.0 * alpha2 * tiles * Cg * Kg * G / (P * (eff > 0.05 ? eff : 0.05));
  double transforms = 12.0 * alpha2 * tiles * (double)(c->G * c->Cg + c->K) / (0.4 * P);
  double weights = alpha2 * Cg * Kg * G * 4.0, stream;
  stream = weights * blocks / fuse__wino_stream_rate(weights);
  if (weights > FUSE__WINO_CACHE_BYTES) return (gemm > stream ? gemm : stream) + transforms; /* overlapped */
  return gemm + transforms + stream;
}

static double fuse__direct_estimate(fuse_isa isa, const fuse__conv_shape *c) {
  double P = isa == FUSE_ISA_AVX512 ? 200e9 : isa == FUSE_ISA_AVX2 ? 100e9
             : isa == FUSE_ISA_NEON ? 25e9 : 4e9;
  double macs = 9.0 * (double)c->npix * (double)c->Cg * (double)c->K, eff, weights;
  int kind;
  if (!fuse__igemm_pick(isa, c->Kg, c->npix, 0, &kind)) return 1e30;
  eff = fuse__igemm_eff(kind, c->Kg, c->npix, 1);
  weights = 9.0 * (double)c->Cg * (double)c->K * 4.0;
  return 2.0 * macs / (P * (eff > 0.05 ? eff : 0.05)) + weights / fuse__wino_stream_rate(weights);
}

/* F(m,3)'s position-GEMM micro-kernel (into st) and its block of tiles: as many as keep the
   block's transformed input and products within FUSE__WINO_BLOCK_BYTES, whole micro-kernel
   tiles, no more than a chunk's share. Or, *shared, the chunks share one block at a time
   (every chunk's scratch together holding its V and M), its input transform, GEMMs and output
   transform each cut among them, the block as large as FUSE__WINO_BLOCK_BYTES allows: where
   the transformed weights outweigh a chunk's block, which each chunk would stream on its own
   (resnet50's 14x14 layers: 9.4 MB of weights for 16 tiles, once per chunk, and 12 tiles
   against 4: no faster on two threads than on one). 0: the ISA has no transforms or
   micro-kernel. */
static int fuse__wino_block(const fuse_plan *p, fuse__step *st, const fuse__conv_shape *c, int m,
                            int64_t merge, int64_t *block, int *shared) {
  int64_t alpha2 = (int64_t)(m + 2) * (m + 2), weights;
  int64_t tiles = c->npix / (c->OH * c->OW) * ((c->OH + m - 1) / m) * ((c->OW + m - 1) / m);
  int64_t per_tile = alpha2 * (c->G * c->Cg + c->K) * (int64_t)sizeof(float), full;
  int64_t share = (tiles + p->chunks - 1) / p->chunks; /* every chunk a block */
  if (!fuse__wino_pick(p->isa, m) || !fuse__igemm_choose(p->isa, c->Kg * merge, tiles, 0, st))
    return 0;
  full = FUSE__WINO_BLOCK_BYTES / per_tile / st->mr * st->mr;
  if (full < st->mr) full = st->mr;
  share = (share + st->mr - 1) / st->mr * st->mr;
  *block = full < share ? full : share;
  weights = alpha2 * c->Cg * merge * ((c->Kg * merge + st->nr - 1) / st->nr * st->nr) *
            (c->G / merge) * (int64_t)sizeof(float); /* as fuse__pack_winograd packs them */
  *shared = p->chunks > 1 && weights > *block * per_tile;
  if (*shared) *block = full < tiles ? full : tiles;
  return 1;
}

/* Whether a conv2d step runs as Winograd: 3x3, stride 1, dilation 1, the ISA's transforms and
   a micro-kernel for its position GEMMs; then the cost rule's m (or the one the options force:
   no_winograd = -m). Sets the step's tile, block and scratch; the weights are packed by
   fuse__pack_winograd. */
static int fuse__choose_winograd(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c,
                                 size_t *scratch) {
  const fuse_conv2d_attrs *a = &st->a.conv;
  int64_t block, merge = 1;
  int m, shared;
  size_t need;
  if (p->no_winograd == 1 || c->KH != 3 || c->KW != 3 || a->strides[0] != 1 ||
      a->strides[1] != 1 || a->dilation[0] != 1 || a->dilation[1] != 1 || c->OH < 1 ||
      c->OW < 1)
    return 0;
  /* few channels per group: groups merged until a GEMM has 16 columns, their weights
     block-diagonal (the zeros cost multiply-adds, but a micro-kernel of 4 columns costs more) */
  while (c->Kg * merge < FUSE__WINO_MERGED_COLUMNS && c->G % (2 * merge) == 0) merge *= 2;
  if (c->Kg * merge < 4) return 0; /* as the direct kernels: 4 outputs per group at least */
  if (p->no_winograd == -2 || p->no_winograd == -4 || p->no_winograd == -6) {
    m = -p->no_winograd;
    if (!fuse__wino_block(p, st, c, m, merge, &block, &shared)) return 0;
  } else { /* the cost rule: F(2,3) or F(4,3), or none */
    double best = fuse__direct_estimate(p->isa, c) / 1.1, t;
    int cand;
    m = 0;
    for (cand = 2; cand <= 4; cand += 2) {
      int64_t b;
      if (!fuse__wino_block(p, st, c, cand, merge, &b, &shared)) continue;
      t = fuse__wino_estimate(p->isa, c, cand, merge, st->mr, st->igemm);
      if (t < best) best = t, m = cand;
    }
    if (!m || !fuse__wino_block(p, st, c, m, merge, &block, &shared)) return 0;
  }
  st->kernel = FUSE__KERNEL_IGEMM;
  st->winograd = m;
  st->wino_merge = (int)merge;
  st->pointwise = st->rowmode = st->cblock = 0;
  st->wino_shared = shared;
  st->wino_block = (int)block;
  need = fuse__wino_scratch(m, block, c->G * c->Cg, c->K, st->mr);
  if (st->wino_shared) need = (need + (size_t)p->chunks - 1) / (size_t)p->chunks;
  if (need > *scratch) *scratch = need;
  return 1;
}

/* The transformed weights of a Winograd step, packed as the NHWC GEMM's with (m+2)^2 taps:
   [group][column block][position][channel][NR], zeros in a narrow last block's padding and,
   for merged groups, off the diagonal blocks. 0: out of memory. */
static int fuse__pack_winograd(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c) {
  int m = st->winograd, positions = (m + 2) * (m + 2), q;
  int64_t merge = st->wino_merge, Cm = c->Cg * merge, Km = c->Kg * merge; /* a merged group's */
  int64_t nr = st->nr, obs = (Km + nr - 1) / nr, panel = obs * positions * Cm * nr;
  int64_t grp, k, ch;
  float g[9], u[64];
  if (!fuse__packed_alloc(p, st, (size_t)(c->G / merge * panel), 1)) return 0;
  for (grp = 0; grp < c->G; grp++) /* each group's filters into its merged group's diagonal */
    for (k = 0; k < c->Kg; k++)
      for (ch = 0; ch < c->Cg; ch++) {
        float *dst = st->packed + grp / merge * panel;
        int64_t km = grp % merge * c->Kg + k, cm = grp % merge * c->Cg + ch;
        fuse__const_read(c->wn, ((grp * c->Kg + k) * c->Cg + ch) * 9, 9, g);
        fuse__wino_filter(m, g, u);
        for (q = 0; q < positions; q++)
          dst[fuse__igemm_at(st, Km, positions * Cm, km, q * Cm + cm)] = u[q];
      }
  return 1;
}
