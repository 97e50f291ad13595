/* A Winograd conv step at run time (winograd.c): NHWC x [N, H, W, C] -> y [N, OH, OW, K].
   Units are blocks of s->wino_block tiles (tiles numbered over the images, rows and columns).
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

static void fuse__wino_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__wino_job *j = (const fuse__wino_job *)ctx;
  const fuse__step *s = j->s;
  const fuse_plan *p = j->r->p;
  unsigned char *scratch = j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk;
  const float **ptr = (const float **)(void *)scratch;
  size_t ptrs = ((size_t)s->mr * sizeof(float *) + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
  int64_t B = s->wino_block, u, grp, pos, ob, r0;
  float *v = (float *)(void *)(scratch + ptrs), *m = v + j->positions * B * j->a.C;
  size_t panel = (size_t)(j->obs * j->positions * j->Cg * s->nr); /* a group's weights */
  fuse__tile_epi e; /* no epilogue: the products are stored as they are */
  fuse__wino_args a = j->a;
  int i;
  memset(&e, 0, sizeof e);
  a.ldv = B * a.C, a.ldm = B * a.K;
  for (u = u0; u < u1; u++) {
    int64_t t0 = u * B;
    int nt = (int)(j->tiles - t0 < B ? j->tiles - t0 : B);
    j->kind->input(&a, t0, nt, v);
    for (grp = 0; grp < j->G; grp++)
      for (pos = 0; pos < j->positions; pos++)
        for (ob = 0; ob < j->obs; ob++) {
          int last = ob == j->obs - 1;
          int cols = (int)(j->Kg - ob * s->nr < s->nr ? j->Kg - ob * s->nr : s->nr);
          const float *w = s->packed + grp * panel +
                           fuse__igemm_at(s, j->Kg, j->positions * j->Cg, ob * s->nr, pos * j->Cg);
          float *mo = m + pos * a.ldm + grp * j->Kg + ob * s->nr;
          for (r0 = 0; r0 < nt; r0 += s->mr) {
            int rows = (int)(nt - r0 < s->mr ? nt - r0 : s->mr);
            for (i = 0; i < s->mr; i++)
              ptr[i] = v + pos * a.ldv + (r0 + (i < rows ? i : rows - 1)) * a.C + grp * j->Cg;
            (last ? j->fn_last : j->fn)(1, (int)j->Cg, ptr, 0, w, mo + r0 * a.K, a.K, rows, cols,
                                        0, &e);
          }
        }
    j->kind->output(&a, t0, nt, m);
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
  fuse__parallel(r->p, (j.tiles + s->wino_block - 1) / s->wino_block, fuse__wino_units, &j);
}
