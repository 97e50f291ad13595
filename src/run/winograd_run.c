/* A Winograd conv step at run time (winograd.c): NHWC x [N, H, W, C] -> y [N, OH, OW, K].
   Units are blocks of s->wino_block tiles (tiles numbered over the images, rows and columns);
   or, s->wino_shared, the chunks share one block at a time (fuse__wino_run_shared).
   A chunk's scratch holds MR row pointers, the block's transformed input V [position][tile]
   [C] and its products M [position][tile][K]. Per block: the input transform into V; per
   group and position, each column block of the weights' panel runs over the block's tiles
   MR at a time (the panel and V's position stay in L2 across them); then the output
   transform applies the epilogue and stores. Groups merged at compile (s->wino_merge) are
   one group here, with block-diagonal weights. */
typedef struct fuse__wino_job {
  const fuse__run *r;
  const fuse__step *s;
  fuse__wino_args a;
  const fuse__wino_kind *kind;
  fuse__igemm_fn fn, fn_last;
  int64_t G, Cg, Kg, obs, tiles, positions;
} fuse__wino_job;

/* The GEMMs of one block's position pos, column block ob, group grp (V in v, products into m,
   lda / ldm of a.ldv / a.ldm): the block's nt tiles MR at a time through ptr. */
static void fuse__wino_gemm(const fuse__wino_job *j, const fuse__wino_args *a, const float *v,
                            float *m, int nt, int64_t grp, int64_t pos, int64_t ob,
                            const float **ptr) {
  const fuse__step *s = j->s;
  size_t panel = (size_t)(j->obs * j->positions * j->Cg * s->nr); /* a group's weights */
  int last = ob == j->obs - 1, i, r0;
  int cols = (int)(j->Kg - ob * s->nr < s->nr ? j->Kg - ob * s->nr : s->nr);
  const float *w = s->packed + grp * panel +
                   fuse__igemm_at(s, j->Kg, j->positions * j->Cg, ob * s->nr, pos * j->Cg);
  float *mo = m + pos * a->ldm + grp * j->Kg + ob * s->nr;
  int64_t npos = ob + 1 < j->obs ? pos : pos + 1, nob = ob + 1 < j->obs ? ob + 1 : 0;
  int64_t ngrp = npos < j->positions ? grp : grp + 1, lines = 0, span = j->Cg;
  const float *next = NULL;
  fuse__tile_epi e; /* no epilogue: the products are stored as they are */
  memset(&e, 0, sizeof e);
  if (npos == j->positions) npos = 0;
  if (ngrp < j->G) { /* the next GEMM's panel into L2 meanwhile, spread over this one's tiles
                        (in a network it comes from memory: no prefetcher runs ahead across
                        the panels, which lie a column block apart) */
    next = s->packed + ngrp * panel +
           fuse__igemm_at(s, j->Kg, j->positions * j->Cg, nob * s->nr, npos * j->Cg);
    lines = j->Cg * (nob == j->obs - 1 ? s->nr_last : s->nr) / 16;
    e.pf2 = lines > (nt + s->mr - 1) / s->mr * span;
    if (e.pf2) span *= 2; /* lines a tile's call brings in */
  }
  for (r0 = 0; r0 < nt; r0 += s->mr) {
    int rows = nt - r0 < s->mr ? nt - r0 : s->mr;
    fuse__tile_prefetch(&e, next, lines, r0 / s->mr * span, span);
    for (i = 0; i < s->mr; i++)
      ptr[i] = v + pos * a->ldv + (r0 + (i < rows ? i : rows - 1)) * a->C + grp * j->Cg;
    (last ? j->fn_last : j->fn)(1, (int)j->Cg, ptr, 0, w, mo + r0 * a->K, a->K, rows, cols, 0,
                                &e);
  }
}

static void fuse__wino_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__wino_job *j = (const fuse__wino_job *)ctx;
  const fuse__step *s = j->s;
  const fuse_plan *p = j->r->p;
  unsigned char *scratch = j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk;
  const float **ptr = (const float **)(void *)scratch;
  size_t ptrs = ((size_t)s->mr * sizeof(float *) + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
  int64_t B = s->wino_block, u, grp, pos, ob;
  float *v = (float *)(void *)(scratch + ptrs), *m = v + j->positions * B * j->a.C;
  fuse__wino_args a = j->a;
  a.ldv = B * a.C, a.ldm = B * a.K;
  for (u = u0; u < u1; u++) {
    int64_t t0 = u * B;
    int nt = (int)(j->tiles - t0 < B ? j->tiles - t0 : B);
    j->kind->input(&a, t0, nt, v);
    for (grp = 0; grp < j->G; grp++)
      for (pos = 0; pos < j->positions; pos++)
        for (ob = 0; ob < j->obs; ob++) fuse__wino_gemm(j, &a, v, m, nt, grp, pos, ob, ptr);
    j->kind->output(&a, t0, nt, m);
  }
}

/* Shared blocks (s->wino_shared): the block of tiles t0 .. t0 + nt - 1 in the chunks' scratch
   together (V at v, M at m); units are its tiles (the transforms) or its (group, position,
   column block) GEMMs. */
typedef struct fuse__wino_shared {
  const fuse__wino_job *j;
  fuse__wino_args a;
  float *v, *m;
  int64_t t0;
  int nt;
} fuse__wino_shared;

static void fuse__wino_shared_input(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__wino_shared *b = (const fuse__wino_shared *)ctx;
  (void)chunk;
  b->j->kind->input(&b->a, b->t0 + u0, (int)(u1 - u0), b->v + u0 * b->a.C);
}

static void fuse__wino_shared_gemm(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__wino_shared *b = (const fuse__wino_shared *)ctx;
  const fuse__wino_job *j = b->j;
  const float *ptr[16]; /* MR row pointers: no micro-kernel has more than 12 rows */
  int64_t u;
  (void)chunk;
  for (u = u0; u < u1; u++) /* group, position, column block */
    fuse__wino_gemm(j, &b->a, b->v, b->m, b->nt, u / (j->positions * j->obs),
                    u / j->obs % j->positions, u % j->obs, ptr);
}

static void fuse__wino_shared_output(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__wino_shared *b = (const fuse__wino_shared *)ctx;
  (void)chunk;
  b->j->kind->output(&b->a, b->t0 + u0, (int)(u1 - u0), b->m + u0 * b->a.K);
}

static void fuse__wino_run_shared(const fuse__wino_job *j) {
  const fuse_plan *p = j->r->p;
  const fuse__step *s = j->s;
  fuse__wino_shared b;
  int64_t B = s->wino_block;
  b.j = j;
  b.a = j->a;
  b.a.ldv = B * b.a.C, b.a.ldm = B * b.a.K;
  b.v = (float *)(void *)(j->r->work + p->scratch_offset);
  b.m = b.v + j->positions * B * b.a.C;
  for (b.t0 = 0; b.t0 < j->tiles; b.t0 += B) {
    b.nt = (int)(j->tiles - b.t0 < B ? j->tiles - b.t0 : B);
    fuse__parallel(p, b.nt, fuse__wino_shared_input, &b);
    fuse__parallel(p, j->G * j->positions * j->obs, fuse__wino_shared_gemm, &b);
    fuse__parallel(p, b.nt, fuse__wino_shared_output, &b);
  }
}

static void fuse__conv_winograd(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  fuse__wino_job j;
  fuse__tile_epi e;
  const float *x, *bias;
  float *y;
  int q;
  memset(&j, 0, sizeof j);
  memset(&e, 0, sizeof e);
  j.r = r;
  j.s = s;
  fuse__conv_operands(r, s, &x, &y, &bias, &e);
  j.kind = fuse__wino_pick(r->p->isa, s->winograd);
  j.fn = fuse__igemm_kinds[s->igemm].fn;
  j.fn_last = fuse__igemm_kinds[s->igemm_last].fn;
  j.a.x = x, j.a.y = y, j.a.bias = bias;
  j.a.post = s->post, j.a.num_post = s->num_post;
  for (q = 0; q < s->num_post; q++) j.a.res[q] = e.res[q], j.a.chan[q] = e.chan[q];
  j.a.C = tx->shape[1], j.a.H = tx->shape[2], j.a.W = tx->shape[3];
  j.a.K = ty->shape[1], j.a.OH = ty->shape[2], j.a.OW = ty->shape[3];
  j.a.ldy = ty->stride ? ty->stride : j.a.K;
  j.a.pt = s->a.conv.padding[0], j.a.pl = s->a.conv.padding[1];
  j.a.th = (j.a.OH + s->winograd - 1) / s->winograd, j.a.tw = (j.a.OW + s->winograd - 1) / s->winograd;
  j.G = s->a.conv.groups / s->wino_merge, j.Cg = j.a.C / j.G, j.Kg = j.a.K / j.G;
  j.obs = (j.Kg + s->nr - 1) / s->nr;
  j.positions = (s->winograd + 2) * (s->winograd + 2);
  j.tiles = ty->shape[0] * j.a.th * j.a.tw;
  if (!j.kind) return;
  if (s->wino_shared) {
    fuse__wino_run_shared(&j);
    return;
  }
  fuse__parallel(r->p, (j.tiles + s->wino_block - 1) / s->wino_block, fuse__wino_units, &j);
}
