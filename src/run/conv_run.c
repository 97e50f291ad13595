/* Runs fn over `units` pieces of work cut into the plan's chunks: through the host's
   parallel_for, else OpenMP, else in turn. fn(ctx, chunk, u0, u1), chunk naming the scratch
   slot of the thread that runs it.

   Chunk c owns the units [units c / chunks, units (c + 1) / chunks) and takes them front to
   back in grains of an eighth; one that is done takes the grains left in the others' ranges
   (a counter per chunk, shared by atomic adds). Where cores run at different speeds (a
   hybrid CPU; the two vCPUs of the test VM: one 1.4x slower than the other) or a worker wakes
   late, the fast thread finishes the slow one's part; otherwise each thread keeps its own
   range, the pixels it wrote in the step before. A unit's result does not depend on which
   chunk runs it: the output is the same to the bit. Without atomics (a compiler other than
   gcc, clang and MSVC) each chunk runs its own range. */
#if defined(_MSC_VER) && !defined(__clang__)
typedef long fuse__counter;
#define FUSE__COUNTER_ADD(p, v) _InterlockedExchangeAdd((volatile long *)(p), (long)(v))
#elif defined(__GNUC__) || defined(__clang__)
typedef int fuse__counter;
#define FUSE__COUNTER_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#endif
typedef void (*fuse__range_fn)(void *ctx, int chunk, int64_t u0, int64_t u1);
typedef struct fuse__par {
  const fuse_plan *p;
  int64_t units;
  fuse__range_fn fn;
  void *ctx;
#ifdef FUSE__COUNTER_ADD
  int64_t grain;                 /* units a grain */
  fuse__counter taken[64];       /* grains taken of each chunk's range (chunks <= 64) */
#endif
} fuse__par;

static void fuse__par_chunks(void *ctx, int begin, int end) {
  fuse__par *j = (fuse__par *)ctx;
  int chunks = j->p->chunks, c;
  for (c = begin; c < end; c++) {
#ifdef FUSE__COUNTER_ADD
    int k;
    for (k = 0; k < chunks; k++) { /* its own range, then the others' */
      int o = (c + k) % chunks;
      int64_t u0 = j->units * o / chunks, u1 = j->units * (o + 1) / chunks, at;
      while ((at = u0 + FUSE__COUNTER_ADD(&j->taken[o], 1) * j->grain) < u1)
        j->fn(j->ctx, c, at, at + j->grain < u1 ? at + j->grain : u1);
    }
#else
    j->fn(j->ctx, c, j->units * c / chunks, j->units * (c + 1) / chunks);
#endif
  }
}

static void fuse__parallel(const fuse_plan *p, int64_t units, fuse__range_fn fn, void *ctx) {
  fuse__par j;
  j.p = p;
  j.units = units;
  j.fn = fn;
  j.ctx = ctx;
  if (p->chunks == 1 || units < 2) {
    fn(ctx, 0, 0, units);
    return;
  }
#ifdef FUSE__COUNTER_ADD
  memset(j.taken, 0, sizeof j.taken);
  j.grain = (units + 8 * (int64_t)p->chunks - 1) / (8 * (int64_t)p->chunks);
#endif
  if (p->parallel_for) {
    p->parallel_for(p->parallel_user, fuse__par_chunks, &j, p->chunks);
  } else {
#ifdef _OPENMP
    int c;
#pragma omp parallel for schedule(static)
    for (c = 0; c < p->chunks; c++) fuse__par_chunks(&j, c, c + 1);
#else
    fuse__par_chunks(&j, 0, p->chunks);
#endif
  }
}

/* A GEMM-family conv step's input, output and bias, and the post-ops for its micro-kernels'
   epilogue (residuals at their first element; fuse__tile_residuals moves them to a tile). */
static void fuse__conv_operands(const fuse__run *r, const fuse__step *s, const float **x, float **y,
                                const float **bias, fuse__tile_epi *e) {
  int q;
  *x = fuse__in(r, s, 0);
  *y = fuse__data(r, s->out);
  *bias = s->bias >= 0 ? fuse__in(r, s, s->bias) : NULL;
  e->post = s->post;
  e->num_post = s->num_post;
  e->split = fuse__post_split(s->post, s->num_post);
  for (q = 0; q < s->num_post; q++) {
    const float *o = fuse__post_operand(r, s, q);
    e->res[q] = s->post[q].kind == FUSE_POST_ADD ? o : NULL;
    e->chan[q] = s->post[q].kind == FUSE_POST_ADD ? NULL : o;
  }
}

/* The bias and per-channel post-op values of a tile whose first output channel is c0 (from
   the step's, in `step`); rows: its rows are channels (the NCHW kernels). */
static void fuse__tile_channels(fuse__tile_epi *e, const fuse__tile_epi *step, const float *bias,
                                int64_t c0, int rows) {
  int q;
  e->bias = !rows && bias ? bias + c0 : NULL;
  e->row_bias = rows && bias ? bias + c0 : NULL;
  e->chan_rows = rows;
  for (q = 0; q < e->num_post; q++) e->chan[q] = step->chan[q] ? step->chan[q] + c0 : NULL;
}

/* The residuals of a tile whose first element is `at` floats into the output (from the
   step's, in `step`). */
static void fuse__tile_residuals(fuse__tile_epi *e, const fuse__tile_epi *step, int64_t at) {
  int q;
  for (q = 0; q < e->num_post; q++)
    if (step->res[q]) e->res[q] = step->res[q] + at;
}

/* An NHWC GEMM conv (or matmul) step at run time: NHWC x [N, H, W, C] -> y [N, OH, OW, K]. */
typedef struct fuse__conv_job {
  const fuse__run *r;
  const fuse__step *s;
  const float *x, *bias;
  float *y;
  fuse__igemm_fn fn, fn_last; /* the last column block's (fuse__igemm_last) */
  fuse__igemm_fn fn_blocks;   /* fn over several full column blocks a call, or NULL */
  const float *packed;        /* the step's packed weights, or (gated) one image's scaled copy */
  const float *gate;          /* fuse__gate_scale: this image's gate, C values */
  fuse__tile_epi e;
  int64_t C, H, W, K, OH, OW, KH, KW, Cg, Kg, G, obs, tiles, npix;
  int64_t ldy;    /* floats between output pixels: K, or a concat's channels (plan/in_place.c) */
  int tile_outer; /* units (tile, group, column block): see fuse__conv_igemm */
  int whole_tiles; /* units tiles, each over all its column blocks (one group) */
} fuse__conv_job;

/* Row pointers of one tile of MR output pixels from p0 (rows past `rows` repeat the last):
   ptr[tap * MR + i]. */
static void fuse__igemm_ptrs(const fuse__conv_job *j, int64_t grp, int64_t p0, int rows,
                             const float **ptr, float *rowbuf) {
  const fuse__step *s = j->s;
  const fuse_conv2d_attrs *a = &s->a.conv;
  const float *zeros = j->r->p->zeros;
  int64_t C = j->C, Cg = j->Cg, KH = j->KH, KW = j->KW, i, kh, kw;
  int mr = s->mr;
  if (s->pointwise) { /* input pixel = output pixel */
    for (i = 0; i < mr; i++) ptr[i] = j->x + (p0 + (i < rows ? i : rows - 1)) * C + grp * Cg;
    return;
  }
  int64_t n = p0 / (j->OH * j->OW), oh = p0 / j->OW % j->OH, ow = p0 % j->OW - 1;
  if (rows == mr && ow + mr < j->OW) { /* a whole tile inside one output row */
    int64_t sw = a->strides[1], ih0 = oh * a->strides[0] - a->padding[0];
    int64_t iw0 = (ow + 1) * sw - a->padding[1];
    if (ih0 >= 0 && ih0 + (KH - 1) * a->dilation[0] < j->H && iw0 >= 0 &&
        iw0 + (mr - 1) * sw + (KW - 1) * a->dilation[1] < j->W) {
      /* whose window stays inside the input: a tap's pointer plus the pixel's, no bounds */
      const float *xb = j->x + ((n * j->H + ih0) * j->W + iw0) * C + grp * Cg;
      for (kh = 0; kh < KH && s->rowmode; kh++) { /* a tap per kernel row, read in place */
        const float *tp = xb + kh * a->dilation[0] * j->W * C;
        for (i = 0; i < mr; i++) ptr[kh * mr + i] = tp + i * sw * C;
      }
      for (kh = 0; kh < KH && !s->rowmode; kh++)
        for (kw = 0; kw < KW; kw++) {
          const float *tp = xb + (kh * a->dilation[0] * j->W + kw * a->dilation[1]) * C;
          const float **pp = ptr + (kh * KW + kw) * mr;
          for (i = 0; i < mr; i++) pp[i] = tp + i * sw * C;
        }
      return;
    }
  }
  for (i = 0; i < mr; i++) { /* the next pixel (the last valid one again past `rows`) */
    int64_t ih0, iw0;
    const float *xn;
    if (i < rows && ++ow == j->OW) {
      ow = 0;
      if (++oh == j->OH) oh = 0, n++;
    }
    ih0 = oh * a->strides[0] - a->padding[0], iw0 = ow * a->strides[1] - a->padding[1];
    xn = j->x + n * j->H * j->W * C + grp * Cg;
    for (kh = 0; kh < KH; kh++) {
      int64_t ih = ih0 + kh * a->dilation[0];
      if (s->rowmode) { /* the whole kernel row: in place, or copied with its zeros */
        const float **pp = &ptr[kh * mr + i];
        if (ih < 0 || ih >= j->H) {
          *pp = zeros;
        } else if (iw0 >= 0 && iw0 + KW <= j->W) {
          *pp = xn + (ih * j->W + iw0) * C;
        } else {
          float *rb = rowbuf + (kh * mr + i) * KW * Cg;
          for (kw = 0; kw < KW; kw++) {
            int64_t iw = iw0 + kw;
            if (iw < 0 || iw >= j->W) memset(rb + kw * Cg, 0, (size_t)Cg * sizeof(float));
            else memcpy(rb + kw * Cg, xn + (ih * j->W + iw) * C, (size_t)Cg * sizeof(float));
          }
          *pp = rb;
        }
        continue;
      }
      for (kw = 0; kw < KW; kw++) {
        int64_t iw = iw0 + kw * a->dilation[1];
        ptr[(kh * KW + kw) * mr + i] =
            ih < 0 || ih >= j->H || iw < 0 || iw >= j->W ? zeros : xn + (ih * j->W + iw) * C;
      }
    }
  }
}

/* Whether a tap of a tile reads any input (tp: the tap's MR row pointers): a tap where every
   pixel reads the zero row (the padding) adds nothing and is skipped. */
static int fuse__tap_live(const float *const *tp, int mr, const float *zeros) {
  int i;
  for (i = 0; i < mr; i++)
    if (tp[i] != zeros) return 1;
  return 0;
}

/* The first live tap of a tile (ptr: ntaps x MR row pointers) from `from` on, ntaps when none
   is; with step -1 the last one from `from` down, -1 when none is. */
static int fuse__next_live(const float *const *ptr, int mr, const float *zeros, int from,
                           int step, int ntaps) {
  int t;
  for (t = from; t >= 0 && t < ntaps; t += step)
    if (fuse__tap_live(ptr + t * mr, mr, zeros)) return t;
  return t;
}

/* The part of a later weight block a tile's kernel prefetches (fuse__tile_epi.pf / npf):
   lines [from, from + span) of the `lines` cache lines at `at`, none past them. */
static void fuse__tile_prefetch(fuse__tile_epi *e, const float *at, int64_t lines, int64_t from,
                                int64_t span) {
  e->npf = from < lines ? (lines - from < span ? lines - from : span) : 0;
  e->pf = e->npf ? at + from * 16 : NULL;
}

/* One column block of a tile run (group grp, block ob of the group's output channels): its
   weights, width and kernel, and where its outputs start. */
typedef struct fuse__igemm_block {
  int64_t go, grp, oc; /* go: group * blocks + ob; oc: the block's first output channel */
  int cols, bnr;       /* valid columns; the packed width (the last block's may be narrower) */
  const float *w;
  fuse__igemm_fn fn;
} fuse__igemm_block;

/* The tiles tile .. t1 - 1 of a block, each over all its taps: a call per run of live taps
   (no live tap: one call over none, for the bias and post-ops). Meanwhile the tiles' kernels
   bring the next block's panel into L2 a line per step, tile i of this block lines
   i * steps on (steps: multiply-add steps of a tile). In a network the weights come from
   memory on every run, and the hardware prefetcher neither crosses pages nor runs that far
   ahead on its own. */
static void fuse__igemm_tile(const fuse__conv_job *j, const fuse__igemm_block *b, int64_t p0,
                             int rows, const float **ptr, fuse__tile_epi *e);

static void fuse__igemm_tiles(const fuse__conv_job *j, const fuse__igemm_block *b, int64_t tile,
                              int64_t t1, const float **ptr, float *rowbuf) {
  const fuse__step *s = j->s;
  int mr = s->mr, ntaps = s->rowmode ? (int)j->KH : (int)(j->KH * j->KW);
  int L = s->rowmode ? (int)(j->KW * j->Cg) : (int)j->Cg;
  size_t panel = (size_t)(j->KH * j->KW * j->Cg * s->nr);
  int64_t lines = b->go + 1 < j->G * j->obs ? (int64_t)panel / 16 : 0, steps = ntaps * L, tt;
  fuse__tile_epi e = j->e;
  fuse__tile_channels(&e, &j->e, j->bias, b->oc, 0);
  for (tt = tile; tt < t1; tt++) {
    int64_t p0 = tt * mr, from = (tt - tile) * steps;
    int rows = (int)(j->npix - p0 < mr ? j->npix - p0 : mr);
    fuse__tile_prefetch(&e, j->packed + (size_t)(b->go + 1) * panel, lines, from, steps);
    fuse__igemm_ptrs(j, b->grp, p0, rows, ptr, rowbuf);
    fuse__igemm_tile(j, b, p0, rows, ptr, &e);
  }
}

/* One tile of a block (its row pointers in ptr, its first pixel p0, e its block's epilogue and
   prefetch): a micro-kernel call per run of live taps (no live tap: one call over none, for
   the bias and post-ops). */
static void fuse__igemm_tile(const fuse__conv_job *j, const fuse__igemm_block *b, int64_t p0,
                             int rows, const float **ptr, fuse__tile_epi *e) {
  const fuse__step *s = j->s;
  const float *zeros = j->r->p->zeros;
  int mr = s->mr, ntaps = s->rowmode ? (int)j->KH : (int)(j->KH * j->KW), ta, flags = 0;
  int L = s->rowmode ? (int)(j->KW * j->Cg) : (int)j->Cg;
  int64_t at = p0 * j->ldy + b->oc;
  fuse__tile_residuals(e, &j->e, at);
  if (s->pointwise) { /* one tap, never the padding */
    b->fn(1, L, ptr, 0, b->w, j->y + at, j->ldy, rows, b->cols, FUSE__FINISH, e);
    return;
  }
  ta = fuse__next_live(ptr, mr, zeros, 0, 1, ntaps);
  for (;;) {
    int te = ta, tn;
    while (te < ntaps && fuse__tap_live(ptr + te * mr, mr, zeros)) te++;
    tn = fuse__next_live(ptr, mr, zeros, te, 1, ntaps);
    if (tn == ntaps) flags |= FUSE__FINISH;
    b->fn(te - ta, L, ptr + ta * mr, 0, b->w + (size_t)((int64_t)ta * L * b->bnr), j->y + at,
          j->ldy, rows, b->cols, flags, e);
    if (tn == ntaps) break;
    if (e->npf) { /* past the lines that call brought in */
      int64_t done = (int64_t)(te - ta) * L < e->npf ? (int64_t)(te - ta) * L : e->npf;
      e->pf += done * 16, e->npf -= done;
    }
    ta = tn, flags = FUSE__ACCUMULATE;
  }
}

/* The same tiles with channel blocks (s->cblock): tap by tap, channel block by channel block
   over a run of tiles whose row pointers are cached, each tile accumulating in the output
   between blocks; the channel block after this one follows it in memory, and tile i brings
   its lines i * cb on into L2 (as above). */
static void fuse__igemm_tiles_blocked(const fuse__conv_job *j, const fuse__igemm_block *b,
                                      int64_t tile, int64_t t1, const float **ptr,
                                      float *rowbuf) {
  const fuse__step *s = j->s;
  const float *zeros = j->r->p->zeros;
  int64_t taps = j->KH * j->KW, per = FUSE__PTR_CACHE / (taps * s->mr), tr, t, c0, tt;
  int mr = s->mr, nr = s->nr, flags;
  size_t panel = (size_t)(taps * j->Cg * nr), total = (size_t)(j->G * j->obs) * panel;
  fuse__tile_epi e = j->e;
  fuse__tile_channels(&e, &j->e, j->bias, b->oc, 0);
  if (per < 1) per = 1;
  for (tr = tile; tr < t1; tr += per) {
    int64_t tb = t1 - tr < per ? t1 : tr + per;
    for (tt = tr; tt < tb; tt++) {
      int64_t p0 = tt * mr;
      fuse__igemm_ptrs(j, b->grp, p0, (int)(j->npix - p0 < mr ? j->npix - p0 : mr),
                       ptr + (tt - tr) * taps * mr, rowbuf);
    }
    for (t = 0; t < taps; t++)
      for (c0 = 0; c0 < j->Cg; c0 += s->cblock) {
        int cb = (int)(j->Cg - c0 < s->cblock ? j->Cg - c0 : s->cblock);
        size_t next = (size_t)b->go * panel + (size_t)(t * j->Cg + c0 + cb) * nr;
        int64_t lines = next < total ? (int64_t)((total - next) / 16) : 0;
        if (lines > s->cblock * nr / 16) lines = s->cblock * nr / 16;
        for (tt = tr; tt < tb; tt++) {
          int64_t p0 = tt * mr, at = p0 * j->ldy + b->oc;
          int rows = (int)(j->npix - p0 < mr ? j->npix - p0 : mr), n = 1;
          const float **tp = ptr + (tt - tr) * taps * mr; /* the tile's taps */
          int first = fuse__next_live(tp, mr, zeros, 0, 1, (int)taps);
          int last = fuse__next_live(tp, mr, zeros, (int)taps - 1, -1, (int)taps);
          fuse__tile_prefetch(&e, j->packed + next, lines, (tt - tr) * cb, cb);
          if (fuse__tap_live(tp + t * mr, mr, zeros))
            flags = (t > first || c0 ? FUSE__ACCUMULATE : 0) |
                    (t == last && c0 + cb >= j->Cg ? FUSE__FINISH : 0);
          else if (last < 0 && !t && !c0) /* no live tap at all: one call over none */
            n = 0, flags = FUSE__FINISH;
          else
            continue; /* a dead tap */
          fuse__tile_residuals(&e, &j->e, at);
          b->fn(n, cb, tp + t * mr, c0, b->w + (t * j->Cg + c0) * b->bnr, j->y + at, j->ldy, rows,
                b->cols, flags, &e);
        }
      }
  }
}

/* Column block go (group * blocks + block) of a conv job. */
static void fuse__igemm_block_at(const fuse__conv_job *j, int64_t go, fuse__igemm_block *b) {
  const fuse__step *s = j->s;
  int64_t ob = go % j->obs;
  b->go = go, b->grp = go / j->obs, b->oc = b->grp * j->Kg + ob * s->nr;
  b->cols = (int)(j->Kg - ob * s->nr < s->nr ? j->Kg - ob * s->nr : s->nr);
  b->w = j->packed + (size_t)(go * j->KH * j->KW * j->Cg * s->nr);
  b->bnr = ob == j->obs - 1 ? s->nr_last : s->nr;
  b->fn = ob == j->obs - 1 ? j->fn_last : j->fn;
}

/* Units (group, column block, tile), column blocks outermost so a block's weights are reused
   across the tiles of a chunk; or, tile_outer, (tile, group, column block): each chunk a run
   of whole tiles; or, with one group and whole_tiles, tiles: each tile's row pointers found
   once for all its column blocks (weights small enough to stay in L1 beside it). */
static void fuse__igemm_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__conv_job *j = (const fuse__conv_job *)ctx;
  const fuse__step *s = j->s;
  const fuse_plan *p = j->r->p;
  unsigned char *scratch = j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk;
  const float **ptr = (const float **)(void *)scratch;
  int64_t taps = j->KH * j->KW, u = u0;
  float *rowbuf = (float *)(void *)(scratch + (((size_t)taps * s->mr * sizeof(float *) +
                                                FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1)));
  if (j->whole_tiles) {
    for (; u < u1; u++) {
      int64_t p0 = u * s->mr, go;
      fuse__igemm_block b;
      fuse__tile_epi e;
      int rows = (int)(j->npix - p0 < s->mr ? j->npix - p0 : s->mr);
      fuse__igemm_ptrs(j, 0, p0, rows, ptr, rowbuf);
      for (go = 0; go < j->obs; go += e.blocks) {
        e = j->e;
        fuse__igemm_block_at(j, go, &b);
        fuse__tile_channels(&e, &j->e, j->bias, b.oc, 0);
        e.npf = 0; /* the weights stay in L1 */
        e.blocks = 1;
        if (!go && j->fn_blocks && j->Kg / s->nr > 1) { /* the full blocks in one call */
          b.fn = j->fn_blocks;
          e.blocks = (int)(j->Kg / s->nr);
          e.wblock = j->KH * j->KW * j->Cg * s->nr;
        }
        fuse__igemm_tile(j, &b, p0, rows, ptr, &e);
      }
    }
    return;
  }
  while (u < u1) {
    int64_t go = j->tile_outer ? u % (j->G * j->obs) : u / j->tiles;
    int64_t tile = j->tile_outer ? u / (j->G * j->obs) : u % j->tiles;
    int64_t t1 = j->tile_outer ? tile + 1 : j->tiles - tile < u1 - u ? j->tiles : tile + (u1 - u);
    fuse__igemm_block b;
    fuse__igemm_block_at(j, go, &b);
    if (s->cblock)
      fuse__igemm_tiles_blocked(j, &b, tile, t1, ptr, rowbuf);
    else
      fuse__igemm_tiles(j, &b, tile, t1, ptr, rowbuf);
    u += t1 - tile;
  }
}

/* Units: column blocks of the packed weights, each scaled row by row (a row is one tap of one
   input channel, its block's width wide) by the image's gate into j->packed. */
static void fuse__gate_scale(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__conv_job *j = (const fuse__conv_job *)ctx;
  const fuse__step *s = j->s;
  int64_t taps = j->KH * j->KW, ob, t, c, i;
  (void)chunk;
  for (ob = u0; ob < u1; ob++) {
    int64_t wd = ob == j->obs - 1 ? s->nr_last : s->nr, at = ob * taps * j->C * s->nr;
    const float *w = s->packed + at;
    float *sw = (float *)j->packed + at;
    for (t = 0; t < taps; t++)
      for (c = 0; c < j->C; c++, w += wd, sw += wd) {
        float gc = j->gate[c];
        for (i = 0; i < wd; i++) sw[i] = w[i] * gc;
      }
  }
}

/* How a conv job's units are cut among threads: j->tile_outer, j->whole_tiles (j->tiles set). */
static void fuse__igemm_split(const fuse_plan *p, const fuse__step *s, fuse__conv_job *j) {
  /* Cut among threads, column blocks outermost hand a thread the narrow last block's tiles
     (16 or 32 columns against 48 or 32 elsewhere: 7-20 % more work for the other thread on
     efficientnet's 1x1 convs), and each thread a part of every pixel's channels, which the
     next step, cut by pixels (depthwise, pools, the next conv's tiles), then reads from the
     other core. When the weights stay in L2 beside the tile (and are not walked in channel
     blocks), each thread takes whole tiles instead: a run of whole pixels (mobilenet_v2 on
     two threads: 0.73-0.86 of the time, six alternating rounds). */
  j->tile_outer = p->chunks > 1 && !s->cblock && j->obs * j->G > 1 &&
                  (size_t)(j->G * j->obs * j->KH * j->KW * j->Cg * s->nr) * sizeof(float) <=
                      FUSE__PANEL_BYTES / 2;
  /* Whole tiles, each over all its column blocks (the full ones in one micro-kernel call
     where the ISA has fn_blocks): for a tap per kernel row (the stems), finding a tile's row
     pointers (a kernel row each, copied with its zeros where it crosses the padding) costs
     about what the tile computes with 16 columns (7x7 stem on AVX2: 2.2x faster); for a 1x1
     conv whose weights stay in L2, a call per block paid its setup and epilogue on a short
     reduction (AVX2, 1 thread, five alternating runs: 16>96 at 28x28 0.033 -> 0.027 ms,
     at 112x112 0.58 -> 0.48 ms; 64>256 at 56x56 1.14 -> 1.03 ms; 256>1024 at 14x14 1.06
     -> 1.02 ms; AVX-512 within 2 %). Weights of 4 MB (512>2048) were 12 % slower so. */
  j->whole_tiles = j->G == 1 && j->obs > 1 && !s->cblock &&
                   (s->rowmode ||
                    (s->pointwise && (size_t)(j->obs * j->Cg * s->nr) * sizeof(float) <=
                                         FUSE__PANEL_BYTES / 2));
  if (j->whole_tiles) j->tile_outer = 0;
}

/* A gated NHWC GEMM conv (s->gate): conv(x * g) with g one value per image and input channel
   is conv(x) on the weights of channel c times g[n, c]; per image the packed weights are
   scaled into the workspace (a pass of K x C x taps, cheaper than the multiply over the
   image's pixels where fuse__gate_conv allows it), then the image's tiles run on them. */
static void fuse__conv_igemm_gated(const fuse__run *r, const fuse__step *s, fuse__conv_job *j) {
  const fuse__tensor *tg = fuse__in_t(r, s, s->gate);
  const float *gate = fuse__in(r, s, s->gate), *x = j->x;
  float *y = j->y, *scaled = (float *)(void *)(r->work + r->p->gate_offset);
  const float *res[FUSE_MAX_POST_OPS];
  int64_t images = j->npix / (j->OH * j->OW), n, in_image = j->H * j->W * j->C;
  int64_t out_image = j->OH * j->OW * j->ldy; /* residuals are laid out as y */
  int q;
  for (q = 0; q < s->num_post; q++) res[q] = j->e.res[q];
  j->npix = j->OH * j->OW;
  j->tiles = (j->npix + s->mr - 1) / s->mr;
  fuse__igemm_split(r->p, s, j); /* whole pixels a thread, as ungated convs */
  j->packed = scaled;
  for (n = 0; n < images; n++) {
    j->x = x + n * in_image;
    j->y = y + n * out_image;
    for (q = 0; q < s->num_post; q++)
      if (res[q]) j->e.res[q] = res[q] + n * out_image;
    j->gate = gate + (tg->shape[0] == 1 ? 0 : n * j->C);
    fuse__parallel(r->p, j->obs, fuse__gate_scale, j);
    fuse__parallel(r->p, j->whole_tiles ? j->tiles : j->G * j->obs * j->tiles, fuse__igemm_units,
                   j);
  }
}

static void fuse__conv_igemm(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__conv_job j;
  memset(&j, 0, sizeof j);
  j.r = r;
  j.s = s;
  fuse__conv_operands(r, s, &j.x, &j.y, &j.bias, &j.e);
  if (s->op == FUSE__OP_MATMUL) { /* rows of x as pixels, one 1x1 tap */
    j.C = j.Cg = tx->shape[tx->rank - 1];
    j.K = j.Kg = tw->shape[1];
    j.H = j.W = j.OH = j.OW = j.KH = j.KW = j.G = 1;
    j.npix = fuse__numel(tx->rank, tx->shape) / j.C;
  } else {
    j.C = tx->shape[1], j.H = tx->shape[2], j.W = tx->shape[3];
    j.K = ty->shape[1], j.OH = ty->shape[2], j.OW = ty->shape[3];
    j.KH = tw->shape[2], j.KW = tw->shape[3], j.G = s->a.conv.groups;
    j.Cg = j.C / j.G, j.Kg = j.K / j.G;
    j.npix = ty->shape[0] * j.OH * j.OW;
  }
  j.ldy = ty->stride ? ty->stride : j.K;
  j.fn = fuse__igemm_kinds[s->igemm].fn;
  j.fn_last = fuse__igemm_kinds[s->igemm_last].fn;
  j.fn_blocks = fuse__igemm_kinds[s->igemm].blocks;
  j.packed = s->packed;
  j.obs = (j.Kg + s->nr - 1) / s->nr;
  if (s->gate) { /* a squeeze-excite gate: image by image, on weights scaled by its gate */
    fuse__conv_igemm_gated(r, s, &j);
    return;
  }
  j.tiles = (j.npix + s->mr - 1) / s->mr;
  fuse__igemm_split(r->p, s, &j);
  fuse__parallel(r->p, j.whole_tiles ? j.tiles : j.G * j.obs * j.tiles, fuse__igemm_units, &j);
}

/* A conv2d on NCHW in and out (NCHW GEMM) at run time. Per image, group and block of NR output
   pixels the taps those pixels read are gathered into a [Cg * taps][NR] panel, zeros where a
   tap falls into the padding (a 1x1 conv with stride 1 reads whole blocks in place); then
   each run of MR output channels is one micro-kernel call whose rows broadcast the channels'
   weights, read as [K][Cg * taps]. The tile lands in NCHW as it is: a row is a channel, its
   columns consecutive pixels. */
typedef struct fuse__nchw_gemm_job {
  const fuse__run *r;
  const fuse__step *s;
  const float *x, *bias;
  float *y;
  fuse__igemm_fn fn;
  fuse__nchw_pack_fn pack;
  fuse__nchw_pack_args g; /* xg: the first image's first group */
  fuse__tile_epi e;
  int64_t C, H, W, K, OH, OW, KH, KW, Cg, Kg, G, P, blocks, kparts;
} fuse__nchw_gemm_job;

/* Units (image, group, pixel block, part of the output channels), the parts innermost so a
   chunk gathers a block's panel once for all its parts. */
#define FUSE__NCHW_GEMM_COLS(block) /* the pixels of a block: nr, fewer in the image's last */      \
  (int)(j->P - (block) * nr < nr ? j->P - (block) * nr : nr)
static void fuse__nchw_gemm_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__nchw_gemm_job *j = (const fuse__nchw_gemm_job *)ctx;
  const fuse__step *s = j->s;
  const fuse_plan *p = j->r->p;
  float *panel = (float *)(void *)(j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk);
  const float *rows[16];
  int mr = s->mr, nr = s->nr, i;
  int64_t L = j->Cg * j->KH * j->KW, tiles = (j->Kg + mr - 1) / mr, u, t, b, nband = 1;
  int64_t packed = -1, pf = L * nr; /* floats of one block's panel */
  int direct;
  fuse__tile_epi e = j->e;
  for (u = u0; u < u1; u += nband) {
    int64_t part = u % j->kparts, nb = u / j->kparts, blk = nb % j->blocks, ng = nb / j->blocks;
    int64_t n = ng / j->G, grp = ng % j->G;
    int64_t t0 = tiles * part / j->kparts, t1 = tiles * (part + 1) / j->kparts;
    fuse__nchw_pack_args g = j->g;
    g.xg = j->x + (n * j->C + grp * j->Cg) * j->H * j->W;
    if (j->kparts == 1) { /* the next blocks of this image and group together (s->band) */
      nband = s->band < j->blocks - blk ? s->band : j->blocks - blk;
      if (nband > u1 - u) nband = u1 - u;
    }
    /* 1x1, stride 1, no padding: a whole block's panel rows are the input's own, P floats
       apart, read in place (the image's last block, when partial, is gathered: the kernel
       reads whole vectors) */
    direct = s->pointwise && (blk + nband) * nr <= j->P;
    if (!direct && (j->kparts == 1 || packed != nb)) { /* the parts of a block follow each other */
      for (b = 0; b < nband; b++)
        j->pack(&g, (blk + b) * nr, FUSE__NCHW_GEMM_COLS(blk + b), panel + b * pf);
      packed = nb;
    }
    e.ldw = direct ? j->P : 0;
    for (t = t0; t < t1; t++) { /* each tile's weight rows over the blocks gathered */
      int64_t k0 = t * mr, oc = grp * j->Kg + k0;
      int nrows = (int)(j->Kg - k0 < mr ? j->Kg - k0 : mr);
      fuse__tile_channels(&e, &j->e, j->bias, oc, 1);
      for (i = 0; i < mr; i++) rows[i] = s->packed + (oc + (i < nrows ? i : nrows - 1)) * L;
      for (b = 0; b < nband; b++) {
        int64_t p0 = (blk + b) * nr, at = (n * j->K + oc) * j->P + p0;
        fuse__tile_residuals(&e, &j->e, at);
        j->fn(1, (int)L, rows, 0, direct ? g.xg + p0 : panel + b * pf, j->y + at, j->P, nrows,
              FUSE__NCHW_GEMM_COLS(blk + b), FUSE__FINISH, &e);
      }
    }
  }
}
#undef FUSE__NCHW_GEMM_COLS

static void fuse__conv_nchw_gemm(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__nchw_gemm_job j;
  int64_t units;
  memset(&j, 0, sizeof j);
  j.r = r;
  j.s = s;
  fuse__conv_operands(r, s, &j.x, &j.y, &j.bias, &j.e);
  j.C = tx->shape[1], j.H = tx->shape[2], j.W = tx->shape[3];
  j.K = ty->shape[1], j.OH = ty->shape[2], j.OW = ty->shape[3], j.P = j.OH * j.OW;
  j.KH = tw->shape[2], j.KW = tw->shape[3], j.G = s->a.conv.groups;
  j.Cg = j.C / j.G, j.Kg = j.K / j.G;
  j.fn = fuse__igemm_kinds[s->igemm].fn;
  j.pack = fuse__igemm_kinds[s->igemm].pack;
  j.g.Cg = j.Cg, j.g.H = j.H, j.g.W = j.W, j.g.OW = j.OW, j.g.KH = j.KH, j.g.KW = j.KW;
  j.g.sh = s->a.conv.strides[0], j.g.sw = s->a.conv.strides[1];
  j.g.dh = s->a.conv.dilation[0], j.g.dw = s->a.conv.dilation[1];
  j.g.pt = s->a.conv.padding[0], j.g.pl = s->a.conv.padding[1];
  j.g.nr = s->nr, j.g.pointwise = s->pointwise;
  j.blocks = (j.P + s->nr - 1) / s->nr;
  j.kparts = 1;
  units = ty->shape[0] * j.G * j.blocks;
  if (r->p->chunks > 1 && units < 4 * r->p->chunks) { /* few blocks: split the channels too */
    j.kparts = (4 * r->p->chunks + units - 1) / units;
    if (j.kparts > (j.Kg + s->mr - 1) / s->mr) j.kparts = (j.Kg + s->mr - 1) / s->mr;
  }
  fuse__parallel(r->p, units * j.kparts, fuse__nchw_gemm_units, &j);
}

/* The few-channel NCHW kernel at run time. Units are (image, band of s->band output rows).
   A band's input rows are copied into the chunk's buffer, each channel's rows one after
   another, a row as its sw column phases of wq floats with the padding in place (zeros that
   were written once, when the buffer was cleared); then each output row's tiles, MR channels
   by two vectors (one at the row's end when that is enough), read it in place. */
typedef struct fuse__few_channels_job {
  const fuse__run *r;
  const fuse__step *s;
  const float *x, *bias;
  float *y;
  fuse__few_channels_fn f2, f1;
  fuse__dwc_row_fn row;
  fuse__dw_args d; /* what the row builder reads: W, sw, pl */
  fuse__tile_epi e;
  int64_t C, H, K, OH, OW, KH, KW, sh, pt, wq, fill, rows, bands, vw;
  int nseg, len[FUSE__FEW_CHANNELS_SEGS];
  int64_t off[FUSE__FEW_CHANNELS_SEGS];
} fuse__few_channels_job;

static void fuse__few_channels_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__few_channels_job *j = (const fuse__few_channels_job *)ctx;
  const fuse__step *s = j->s;
  const fuse_plan *p = j->r->p;
  float *buf = (float *)(void *)(j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk);
  int64_t rs = j->d.sw * j->wq, L = j->C * j->KH * j->KW, P = j->OH * j->OW, u, c, i, oy, ox;
  int mr = s->mr, t, tiles = (int)((j->K + mr - 1) / mr);
  fuse__tile_epi e = j->e;
  memset(buf, 0, (size_t)(j->C * j->rows * rs) * sizeof(float)); /* the padding, once */
  for (u = u0; u < u1; u++) {
    int64_t n = u / j->bands, oy0 = u % j->bands * s->band;
    int64_t oy1 = oy0 + s->band < j->OH ? oy0 + s->band : j->OH;
    for (c = 0; c < j->C; c++)
      for (i = 0; i < j->rows; i++) {
        int64_t ih = oy0 * j->sh + i - j->pt;
        j->row(buf + (c * j->rows + i) * rs,
               ih >= 0 && ih < j->H ? j->x + ((n * j->C + c) * j->H + ih) * j->d.W : NULL, &j->d,
               j->wq, j->fill);
      }
    for (oy = oy0; oy < oy1; oy++)
      for (ox = 0; ox < j->OW; ox += 2 * j->vw) {
        int cols = (int)(j->OW - ox < 2 * j->vw ? j->OW - ox : 2 * j->vw);
        const float *xb = buf + (oy - oy0) * j->sh * rs + ox;
        for (t = 0; t < tiles; t++) {
          int64_t oc = (int64_t)t * mr, at = (n * j->K + oc) * P + oy * j->OW + ox;
          fuse__tile_channels(&e, &j->e, j->bias, oc, 1);
          fuse__tile_residuals(&e, &j->e, at);
          (cols > j->vw ? j->f2 : j->f1)(j->nseg, j->off, j->len, xb, s->packed + oc * L,
                                         j->y + at, P, (int)(j->K - oc < mr ? j->K - oc : mr),
                                         cols, &e);
        }
      }
  }
}

static void fuse__conv_few_channels(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  fuse__few_channels_job j;
  int64_t c, kh, ph;
  memset(&j, 0, sizeof j);
  j.r = r;
  j.s = s;
  fuse__conv_operands(r, s, &j.x, &j.y, &j.bias, &j.e);
  j.C = tx->shape[1], j.H = tx->shape[2], j.d.W = tx->shape[3];
  j.K = ty->shape[1], j.OH = ty->shape[2], j.OW = ty->shape[3];
  j.KH = tw->shape[2], j.KW = tw->shape[3];
  j.sh = s->a.conv.strides[0], j.d.sw = s->a.conv.strides[1];
  j.pt = s->a.conv.padding[0], j.d.pl = s->a.conv.padding[1];
  j.f2 = fuse__few_channels_pick(r->p->isa, 2)->fn, j.f1 = fuse__few_channels_pick(r->p->isa, 1)->fn;
  j.vw = fuse__few_channels_pick(r->p->isa, 1)->nr;
  j.row = fuse__dwc_row_pick(r->p->isa);
  j.wq = fuse__few_channels_wq(j.OW, j.KW, j.d.sw, j.vw, &j.fill);
  j.rows = (s->band - 1) * j.sh + j.KH;
  j.bands = (j.OH + s->band - 1) / s->band;
  for (c = 0; c < j.C; c++) /* segment (c, kh, phase): kernel columns ph, ph + sw, ... */
    for (kh = 0; kh < j.KH; kh++)
      for (ph = 0; ph < j.d.sw; ph++, j.nseg++) {
        j.off[j.nseg] = (c * j.rows + kh) * j.d.sw * j.wq + ph * j.wq;
        j.len[j.nseg] = (int)((j.KW - ph + j.d.sw - 1) / j.d.sw);
      }
  fuse__parallel(r->p, ty->shape[0] * j.bands, fuse__few_channels_units, &j);
}

static void fuse__dw_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__dw_args *d = (const fuse__dw_args *)ctx;
  d->fn(d, d->scratch + d->slot * (size_t)chunk, u0, u1);
}

static void fuse__conv_dw(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *tw = fuse__in_t(r, s, 1);
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const fuse_conv2d_attrs *a = &s->a.conv;
  fuse__dw_args d;
  int q;
  memset(&d, 0, sizeof d);
  d.fn = fuse__dw_pick(r->p->isa, tx->nhwc);
  if (!d.fn) return;
  d.x = fuse__in(r, s, 0);
  d.w = s->packed;
  d.bias = s->bias >= 0 ? fuse__in(r, s, s->bias) : NULL;
  d.y = fuse__data(r, s->out);
  d.C = tx->shape[1], d.Cp = (d.C + 15) / 16 * 16, d.H = tx->shape[2], d.W = tx->shape[3];
  d.OH = ty->shape[2], d.OW = ty->shape[3];
  d.KH = (int)tw->shape[2], d.KW = (int)tw->shape[3];
  d.sh = a->strides[0], d.sw = a->strides[1], d.pt = a->padding[0], d.pl = a->padding[1];
  d.dh = a->dilation[0], d.dw = a->dilation[1];
  d.zeros = r->p->zeros;
  d.scratch = r->work + r->p->scratch_offset;
  d.slot = r->p->scratch_slot;
  d.post = s->post;
  d.num_post = s->num_post;
  d.split = fuse__post_split(s->post, s->num_post);
  d.split_math = d.split;
  while (d.split_math < s->num_post && (fuse__post_in_registers(s->post[d.split_math].kind) ||
                                        fuse__dw_math_in_registers(s->post[d.split_math].kind)))
    d.split_math++;
  for (q = 0; q < s->num_post; q++) {
    const float *o = fuse__post_operand(r, s, q);
    d.residual[q] = s->post[q].kind == FUSE_POST_ADD ? o : NULL;
    d.chan[q] = s->post[q].kind == FUSE_POST_ADD ? NULL : o;
  }
  if (tx->nhwc) /* output rows */
    fuse__parallel(r->p, ty->shape[0] * d.OH, fuse__dw_units, &d);
  else /* planes */
    fuse__parallel(r->p, ty->shape[0] * d.C, fuse__dw_units, &d);
}
