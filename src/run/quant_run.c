/* ------------------------------------------------------ integer steps (run) -- */
/* The steps of a quantized model that run in integers (plan/quant_pack.c packed them; the
   header is fuse__qhead, graph/ops.c). qconv2d (and qmatmul, a 1x1 one over its rows): uint8
   in, int32 sums of (x - x_zero) * w and the bias, requantized as ONNX Runtime does it:
   (float)sum * scale[k], clamped to [lo, hi] - y_zero, rounded half to even, plus y_zero, into
   uint8 / int8; on NHWC with the kernels of kernels/qconv.c, on NCHW with the direct loops (the
   reference plans). qadd: the float ops it
   fuses, computed as they compute them. qlut: a table. qmax_pool2d: the pool on the integers,
   then the table. qglobal_avg_pool2d: int32 sums, requantized as qconv2d's. The layout conversions between integer and float steps (qto_nhwc,
   qto_nchw). Each step shares its work among the plan's chunks (fuse__parallel). */

/* A qconv2d's packed arrays after its header (fuse__qhead, graph/ops.c): int32 bias[Kp],
   float scale[Kp], then the weights, returned. */
static const void *fuse__qconv_arrays(const fuse__qhead *h, int64_t Kp, const int32_t **bias,
                                      const float **scale) {
  *bias = (const int32_t *)(const void *)(h + 1);
  *scale = (const float *)(const void *)(*bias + Kp);
  return *scale + Kp;
}

/* Element i of a uint8 / int8 tensor. */
static int32_t fuse__q_at(const void *x, int type, int64_t i) {
  return type == FUSE_INT8 ? ((const int8_t *)x)[i] : ((const uint8_t *)x)[i];
}
static void fuse__q_put(void *y, int type, int64_t i, int32_t v) {
  if (type == FUSE_INT8) ((int8_t *)y)[i] = (int8_t)v;
  else ((uint8_t *)y)[i] = (uint8_t)v;
}

/* The direct loops over every output element: the oracle the integer micro-kernels are tested
   against, and what runs until they do. */
static void fuse__qconv_direct(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const uint8_t *x = (const uint8_t *)(const void *)fuse__in(r, s, 0);
  const int32_t *bias;
  const float *scale;
  const int8_t *w = (const int8_t *)fuse__qconv_arrays(h, h->K, &bias, &scale);
  const fuse_conv2d_attrs *a = &s->a.conv;
  int64_t N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t K = ty->shape[1], OH = ty->shape[2], OW = ty->shape[3];
  int64_t Cg = C / a->groups, Kg = K / a->groups, n, k, oy, ox, c, ky, kx;
  void *y = fuse__data(r, s->out);
  for (n = 0; n < N; n++)
    for (k = 0; k < K; k++) {
      const int8_t *wk = w + k * Cg * h->KH * h->KW;
      const uint8_t *xg = x + (n * C + (k / Kg) * Cg) * H * W;
      for (oy = 0; oy < OH; oy++)
        for (ox = 0; ox < OW; ox++) {
          int32_t acc = bias[k];
          for (c = 0; c < Cg; c++)
            for (ky = 0; ky < h->KH; ky++) {
              int64_t iy = oy * a->strides[0] - a->padding[0] + ky * a->dilation[0];
              if (iy < 0 || iy >= H) continue;
              for (kx = 0; kx < h->KW; kx++) {
                int64_t ix = ox * a->strides[1] - a->padding[1] + kx * a->dilation[1];
                if (ix < 0 || ix >= W) continue;
                acc += (int32_t)(int16_t)(xg[(c * H + iy) * W + ix] - h->x_zero) *
                       (int32_t)wk[(c * h->KH + ky) * h->KW + kx];
              }
            }
          fuse__q_put(y, ty->type, ((n * K + k) * OH + oy) * OW + ox,
                      fuse__qtile_requant(acc, scale[k], h));
        }
    }
}

/* A depthwise qconv2d (layout FUSE__QL_DW) on NHWC: per output row, each pixel near the
   border on its own, its taps' input pixels (the padding pixel, x_zero in every channel, where
   a tap falls outside), and the run of pixels whose windows lie inside at once (the first
   one's corner plus each tap's offset, then a stride further per pixel), on the ISA's
   depthwise kernel (kernels/qconv.c). Output rows shared among the chunks, each with the
   padding pixel, the taps' offsets and pointers in its scratch slot. */
typedef struct fuse__qdw_job {
  const fuse__run *r;
  const fuse__step *s;
  const fuse__qhead *h;
  const unsigned char *x;
  unsigned char *y;
  const int16_t *w;
  const int32_t *bias;
  const float *scale;
  int64_t C, H, W, OH, OW, Cp;
} fuse__qdw_job;

static void fuse__qdw_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__qdw_job *j = (const fuse__qdw_job *)ctx;
  const fuse__qhead *h = j->h;
  const fuse_conv2d_attrs *a = &j->s->a.conv;
  const fuse_plan *p = j->r->p;
  int64_t C = j->C, H = j->H, W = j->W, sx = a->strides[1], pl = a->padding[1], u, ox;
  int64_t span_y = (int64_t)(h->KH - 1) * a->dilation[0], span_x = (int64_t)(h->KW - 1) * a->dilation[1];
  int taps = h->KH * h->KW, t;
  size_t al = FUSE__ALIGN - 1;
  unsigned char *pad = j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk;
  int64_t *off = (int64_t *)(void *)(pad + (((size_t)j->Cp + al) & ~al)); /* from the corner */
  const unsigned char **src = (const unsigned char **)(void *)(off + taps);
  fuse__qdw_fn kernel = fuse__qdw_pick(p->isa, p->vnni);
  memset(pad, h->x_zero, (size_t)j->Cp);
  for (t = 0; t < taps; t++) off[t] = ((t / h->KW) * a->dilation[0] * W + (t % h->KW) * a->dilation[1]) * C;
  for (u = u0; u < u1; u++) { /* output row u of N * OH */
    int64_t n = u / j->OH, oy = u % j->OH, iy0 = oy * a->strides[0] - a->padding[0];
    int64_t inside_y = iy0 >= 0 && iy0 + span_y < H;
    unsigned char *y = j->y + u * j->OW * C;
    for (ox = 0; ox < j->OW;) {
      int64_t ix0 = ox * sx - pl, run = 1;
      if (inside_y && ix0 >= 0 && ix0 + span_x < W) { /* the run of pixels inside */
        const unsigned char *corner = j->x + ((n * H + iy0) * W + ix0) * C;
        for (t = 0; t < taps; t++) src[t] = corner + off[t];
        while (ox + run < j->OW && (ox + run) * sx - pl + span_x < W) run++;
      } else {
        for (t = 0; t < taps; t++) {
          int64_t iy = iy0 + t / h->KW * a->dilation[0], ix = ix0 + t % h->KW * a->dilation[1];
          src[t] = iy >= 0 && iy < H && ix >= 0 && ix < W ? j->x + ((n * H + iy) * W + ix) * C : pad;
        }
      }
      kernel(src, sx * C, run, taps, j->w, j->Cp, C, j->bias, j->scale, h, y);
      y += run * C, ox += run;
    }
  }
}

static void fuse__qconv_depthwise(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  fuse__qdw_job j;
  j.r = r, j.s = s, j.h = h;
  j.x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
  j.y = (unsigned char *)(void *)fuse__data(r, s->out);
  j.C = tx->shape[1], j.H = tx->shape[2], j.W = tx->shape[3], j.OH = ty->shape[2], j.OW = ty->shape[3];
  fuse__qconv_weight_bytes(FUSE__QL_DW, j.C, 1, (int64_t)h->KH * h->KW, &j.Cp);
  j.w = (const int16_t *)fuse__qconv_arrays(h, j.Cp, &j.bias, &j.scale);
  fuse__parallel(r->p, tx->shape[0] * j.OH, fuse__qdw_units, &j);
}

/* qadd: v = (a - a_zero) * a_scale + (b - b_zero) * b_scale, the ops, then quantize. In
   double while the ops are clamps (relu, clip: every model's case), so the sum and the
   division round once, as the float64 reference (and ONNX Runtime, which matched it on the zoo)
   round them: on the ISA's rows (kernels/qeltwise.c); other ops in float32 as their float
   steps compute them. A qlut merged in (h->K = 1): its table after. Pieces shared among the
   chunks. */
#define FUSE__QPIECE 16384 /* elements of qadd's and the tables' units: a cached piece */
typedef struct fuse__qadd_job {
  fuse__qadd_args q;
  const unsigned char *a, *b, *table;
  unsigned char *y;
  int64_t n;
  fuse__qadd_fn row;
  fuse__qtable_fn apply;
} fuse__qadd_job;

/* Pieces [u0, u1) of the qadd's elements, through the table if any. */
static void fuse__qadd_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__qadd_job *j = (const fuse__qadd_job *)ctx;
  int64_t u;
  (void)chunk;
  for (u = u0; u < u1; u++) {
    int64_t i = u * FUSE__QPIECE, len = j->n - i < FUSE__QPIECE ? j->n - i : FUSE__QPIECE;
    j->row(j->a + i, j->b + i, j->y + i, len, &j->q);
    if (j->table) j->apply(j->y + i, j->y + i, len, j->table);
  }
}

static void fuse__qadd(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse__tensor *ta = fuse__in_t(r, s, 0), *tb = fuse__in_t(r, s, 1), *ty = &r->p->tensors[s->out];
  const void *a = fuse__in(r, s, 0), *b = fuse__in(r, s, 1);
  const int32_t *words = (const int32_t *)(const void *)(h + 1);
  fuse_post_op post[4];
  void *y = fuse__data(r, s->out);
  int64_t n = fuse__numel(ty->rank, ty->shape), i;
  int k, clamps = 1, ordered = 1;
  const unsigned char *table =
      h->K ? (const unsigned char *)(words + h->num_post * FUSE__QPOST_WORDS) : NULL;
  for (k = 0; k < h->num_post; k++) {
    const int32_t *w = words + k * FUSE__QPOST_WORDS;
    memset(&post[k], 0, sizeof post[k]);
    post[k].kind = (fuse_post_kind)w[0];
    memcpy(&post[k].lo, w + 1, 4), memcpy(&post[k].hi, w + 2, 4);
    memcpy(&post[k].alpha, w + 3, 4), memcpy(&post[k].beta, w + 4, 4);
    post[k].tensor = FUSE_NONE, post[k].operand = -1;
    clamps &= post[k].kind == FUSE_POST_CLAMP;
    ordered &= post[k].lo <= post[k].hi;
  }
  if (clamps) {
    fuse__qadd_job j;
    j.q.a_scale = h->x_scale, j.q.b_scale = h->b_scale, j.q.y_scale = h->y_scale;
    j.q.y_recip = 1.0 / (double)h->y_scale;
    j.q.lo = h->lo - h->y_zero, j.q.hi = h->hi - h->y_zero;
    for (k = 0; k < h->num_post; k++) j.q.clo[k] = post[k].lo, j.q.chi[k] = post[k].hi;
    j.q.num_clamps = h->num_post;
    j.q.a_zero = h->x_zero, j.q.b_zero = h->b_zero, j.q.y_zero = h->y_zero;
    j.q.a_signed = ta->type == FUSE_INT8, j.q.b_signed = tb->type == FUSE_INT8;
    j.q.y_signed = h->y_signed;
    fuse__qadd_prepare(&j.q);
    j.a = (const unsigned char *)a, j.b = (const unsigned char *)b, j.y = (unsigned char *)y;
    j.n = n, j.table = table;
    j.row = ordered ? fuse__qadd_pick(r->p->isa) : fuse__qadd_scalar;
    j.apply = fuse__qtable_pick(r->p->isa, r->p->vnni);
    fuse__parallel(r->p, (n + FUSE__QPIECE - 1) / FUSE__QPIECE, fuse__qadd_units, &j);
    return;
  }
  for (i = 0; i < n; i++) {
    double v = (double)(fuse__q_at(a, ta->type, i) - h->x_zero) * h->x_scale +
               (double)(fuse__q_at(b, tb->type, i) - h->b_zero) * h->b_scale;
    float f = (float)v;
    for (k = 0; k < h->num_post; k++) f = fuse__post_apply_scalar(f, &post[k], NULL, 1, 0.0f);
    v = (double)f / h->y_scale;
    v = v == v ? (v < h->lo - h->y_zero ? h->lo - h->y_zero : v > h->hi - h->y_zero ? h->hi - h->y_zero : v) : 0.0;
    v = fuse__qround(v) + h->y_zero;
    ((unsigned char *)y)[i] = (unsigned char)((int32_t)v & 0xff);
    if (table) ((unsigned char *)y)[i] = table[((unsigned char *)y)[i]];
  }
}

/* qmax_pool2d: the largest input value of each window (padding never counts), through the
   table (skipped where it is the identity). NHWC: per output pixel, its window's pixels'
   channels at once (kernels/qeltwise.c's max windows); NCHW: a window per output element.
   int8 compares as uint8 with the sign bit flipped. A window of more than FUSE__QMAXW pixels
   goes in pieces, the output so far one of the next piece's rows. Output rows (of each
   channel's plane in NCHW) shared among the chunks. */
#define FUSE__QMAXW 64
typedef struct fuse__qpool_job {
  const fuse__step *s;
  const unsigned char *x, *table;
  unsigned char *y;
  int64_t C, H, W, OH, OW, lanes;
  int nhwc, identity;
  unsigned char flip;
  fuse__qmax_fn max_window;
  fuse__qtable_fn apply;
} fuse__qpool_job;

static void fuse__qpool_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__qpool_job *j = (const fuse__qpool_job *)ctx;
  const fuse_pool2d_attrs *a = &j->s->a.pool;
  int64_t C = j->C, H = j->H, W = j->W, u, ox, ky, kx;
  const unsigned char *rows[FUSE__QMAXW];
  (void)chunk;
  for (u = u0; u < u1; u++) { /* row oy of image n (NHWC), of plane n * C + c (NCHW) */
    int64_t plane = u / j->OH, oy = u % j->OH, n = j->nhwc ? plane : plane / C, c = j->nhwc ? 0 : plane % C;
    for (ox = 0; ox < j->OW; ox++) {
      unsigned char *dst = j->y + (j->nhwc ? ((n * j->OH + oy) * j->OW + ox) * C
                                            : ((n * C + c) * j->OH + oy) * j->OW + ox);
      int nv = 0; /* (no window is empty: the pads are smaller than the kernel) */
      for (ky = 0; ky < a->kernel[0]; ky++) {
        int64_t iy = oy * a->strides[0] - a->padding[0] + ky * a->dilation[0];
        if (iy < 0 || iy >= H) continue;
        for (kx = 0; kx < a->kernel[1]; kx++) {
          int64_t ix = ox * a->strides[1] - a->padding[1] + kx * a->dilation[1];
          if (ix < 0 || ix >= W) continue;
          if (nv == FUSE__QMAXW) { /* a piece of a large window */
            j->max_window(dst, rows, nv, j->lanes, j->flip);
            rows[0] = dst, nv = 1;
          }
          rows[nv++] = j->x + (j->nhwc ? ((n * H + iy) * W + ix) * C : ((n * C + c) * H + iy) * W + ix);
        }
      }
      j->max_window(dst, rows, nv, j->lanes, j->flip);
    }
    if (!j->identity) { /* the row's OW pixels (of C bytes in NHWC) through the table at once */
      int64_t row = j->nhwc ? (n * j->OH + oy) * j->OW * C : ((n * C + c) * j->OH + oy) * j->OW;
      j->apply(j->y + row, j->y + row, j->OW * j->lanes, j->table);
    }
  }
}

static void fuse__qmax_pool(const fuse__run *r, const fuse__step *s, const unsigned char *table) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  fuse__qpool_job j;
  int i;
  j.s = s, j.table = table;
  j.x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
  j.y = (unsigned char *)(void *)fuse__data(r, s->out);
  j.C = ty->shape[1], j.H = tx->shape[2], j.W = tx->shape[3], j.OH = ty->shape[2], j.OW = ty->shape[3];
  j.nhwc = tx->nhwc, j.lanes = j.nhwc ? j.C : 1;
  j.flip = tx->type == FUSE_INT8 ? 0x80 : 0;
  j.max_window = fuse__qmax_pick(r->p->isa);
  j.apply = fuse__qtable_pick(r->p->isa, r->p->vnni);
  for (i = 0, j.identity = 1; i < 256; i++) j.identity &= table[i] == i;
  fuse__parallel(r->p, ty->shape[0] * (j.nhwc ? 1 : j.C) * j.OH, fuse__qpool_units, &j);
}

/* qconv2d in the pairs or quads layout (kernels/qconv.c). The input's rows: read in place
   when it is NHWC uint8 with channels a multiple of 4 (quads) and not in row mode, else copied
   into the scratch from NCHW or NHWC (int16 x - x_zero for pairs; padding channels 0 /
   x_zero; in row mode (fuse__qconv_rowmode) with the padding columns, x_zero). Per image,
   per block of nb panels of output channels, per tile of MR pixels (or per tile, per block:
   tile_major): the row pointers of its
   taps (of its kernel rows in row mode; the padding row where one falls outside) and the tile,
   into the NHWC output, or into the scratch and then transposed into an NCHW one. Each phase
   is shared among the plan's chunks: rows of the input, tiles, channels of the output; the
   input rows, the padding row and the staged output live in the first chunk's scratch slot,
   each chunk's row pointers in its own. */
typedef struct fuse__qconv_job {
  const fuse__run *r;
  const fuse__qhead *h;
  const fuse_conv2d_attrs *a;
  const uint8_t *x;
  unsigned char *y, *in, *pad, *out;
  const unsigned char *w;
  const int32_t *bias;
  const float *scale;
  fuse__qtile_fn main;
  void (*pairs_row)(const uint8_t *x, int16_t *y, int64_t n, int32_t z); /* AVX2's, or NULL */
  size_t panel, rows_at; /* one panel's bytes; the row pointers' place in a scratch slot */
  int64_t N, C, H, W, K, OW, npix, Kp, taps, ntaps, csteps, cs, span, WP, pl, blocks, tiles;
  int pairs, step, nb, mr, rowmode, in_nhwc, in_place, out_nhwc, pointwise;
  int tile_major; /* the units in the order (image, tile, block): every block of a tile at once */
#ifdef FUSE__HAVE_QWINDOW
  int window; /* window mode (FUSE__QL_WINDOW): a pixel's window gathered into one tap */
  int64_t run, wstride; /* its kernel rows' bytes, a gathered window's */
  fuse__qwindow_fn gather;
#endif
} fuse__qconv_job;

/* Input rows [u0, u1) (image rows, N * H of them) into the scratch: from NCHW a channel's
   row at a time (contiguous reads), from NHWC a pixel's channels at a time; then the padding
   channels (0 for pairs, x_zero for quads). */
static void fuse__qconv_rows_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__qconv_job *j = (const fuse__qconv_job *)ctx;
  int64_t u, ix, c, W = j->W, C = j->C, cs = j->cs, wide = j->csteps * j->step;
  int32_t z = j->h->x_zero;
  (void)chunk;
#ifdef FUSE__HAVE_QWINDOW
  if (j->window) wide = C; /* (no padding channels) */
#endif
  for (u = u0; u < u1; u++) {
    int64_t n = u / j->H, iy = u % j->H;
    unsigned char *line = j->in + u * j->WP * cs, *first = line + j->pl * cs;
    if (j->rowmode) { /* the padding columns */
      memcpy(line, j->pad, (size_t)(j->pl * cs));
      memcpy(first + W * cs, j->pad, (size_t)((j->WP - j->pl - W) * cs));
    }
#ifdef FUSE__HAVE_QQUADS /* (a scalar build's loops below do as well: no code for it there) */
    if (!j->in_nhwc && !j->pairs && cs == 4) { /* an image's few channels (a stem) as quads */
      const unsigned char *planes[4];
      for (c = 0; c < C; c++) planes[c] = j->x + ((n * C + c) * j->H + iy) * W;
      fuse__qquads_pick(j->r->p->isa)(first, planes, (int)C, W, (unsigned char)z);
      continue;
    }
#endif
#ifdef FUSE__HAVE_QWINDOW
    if (!j->in_nhwc && j->window && C <= 3) { /* a stem's planes as pixels of C bytes */
      const unsigned char *planes[3];
      for (c = 0; c < C; c++) planes[c] = j->x + ((n * C + c) * j->H + iy) * W;
#if !defined(FUSE_NO_AVX2)
      if (j->r->p->isa == FUSE_ISA_AVX2 || j->r->p->isa == FUSE_ISA_AVX512)
        fuse__qpixels_avx2(first, planes, (int)C, W);
      else
#endif
        fuse__qpixels(first, planes, (int)C, W);
      continue;
    }
#endif
    if (!j->in_nhwc) {
      for (c = 0; c < C; c++) {
        const uint8_t *src = j->x + ((n * C + c) * j->H + iy) * W;
        if (j->pairs)
          for (ix = 0; ix < W; ix++) ((int16_t *)(void *)(first + ix * cs))[c] = (int16_t)(src[ix] - z);
        else
          for (ix = 0; ix < W; ix++) first[ix * cs + c] = src[ix];
      }
    } else if (j->pairs_row && wide == C) { /* (the row's pixels one run of W x C) */
      j->pairs_row(j->x + (n * j->H + iy) * W * C, (int16_t *)(void *)first, W * C, z);
#ifdef FUSE__HAVE_QWINDOW
    } else if (j->window) { /* (the row's pixels one run of W x C) */
      memcpy(first, j->x + (n * j->H + iy) * W * C, (size_t)(W * C));
#endif
    } else {
      for (ix = 0; ix < W; ix++) {
        const uint8_t *src = j->x + ((n * j->H + iy) * W + ix) * C;
        if (j->pairs)
          for (c = 0; c < C; c++) ((int16_t *)(void *)(first + ix * cs))[c] = (int16_t)(src[c] - z);
        else
          memcpy(first + ix * cs, src, (size_t)C);
      }
    }
    if (wide > C)
      for (ix = 0; ix < W; ix++)
        for (c = C; c < wide; c++) {
          if (j->pairs) ((int16_t *)(void *)(first + ix * cs))[c] = 0;
          else first[ix * cs + c] = (unsigned char)z;
        }
  }
}

/* Tiles [u0, u1): (image, block of nb panels, tile of MR pixels), the last fastest (tile-major:
   (image, tile, block), each tile's row pointers kept for its blocks); the
   indices and each pixel's place counted on from u0's, not divided out per tile. A pixel
   whose window lies inside the image takes its taps' rows as offsets from its corner; one
   near the border tests each tap (the padding row where it falls outside). */
static void fuse__qconv_tile_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__qconv_job *j = (const fuse__qconv_job *)ctx;
  const fuse_plan *p = j->r->p;
  const fuse__qhead *h = j->h;
  const fuse_conv2d_attrs *a = j->a;
  const void **rows = (const void **)(void *)(j->r->work + p->scratch_offset +
                                              p->scratch_slot * (size_t)chunk + j->rows_at);
  int64_t u, t, mr = j->mr, OW = j->OW, H = j->H, W = j->W, WP = j->WP, cs = j->cs;
  int64_t n = u0 / (j->blocks * j->tiles), bi = u0 / j->tiles % j->blocks, ti = u0 % j->tiles;
  int64_t kh = j->rowmode ? j->ntaps : h->KH, kw = j->rowmode ? 1 : h->KW;
  int64_t span_y = (h->KH - 1) * a->dilation[0], span_x = j->rowmode ? 0 : (h->KW - 1) * a->dilation[1];
  int64_t step_y = a->dilation[0] * WP * cs, step_x = a->dilation[1] * cs; /* (locals: the stores
                                                                              to rows could alias a) */
#ifdef FUSE__HAVE_QWINDOW
  int64_t win_n = -1, win_lo = 0, win_hi = 0; /* window mode: the pixels gathered */
#endif
#ifdef FUSE__SIMD
  int64_t filled = 0; /* tile-major order: the MR of the row pointers of the tile before */
#endif
  int jj;
#ifdef FUSE__SIMD
  if (j->tile_major) bi = u0 % j->blocks, ti = u0 / j->blocks % j->tiles;
#endif
  for (u = u0; u < u1; u++) {
    int64_t k = bi * j->nb * FUSE__QNR, m0 = ti * j->mr, left = j->K - k, ldy = j->out_nhwc ? j->K : j->Kp;
    const unsigned char *img = j->in_place ? j->x + n * H * W * j->C : j->in + n * H * WP * cs;
    unsigned char *yi = j->out_nhwc ? j->y + n * j->npix * j->K : j->out + n * j->npix * j->Kp;
    int bn = left >= (int64_t)j->nb * FUSE__QNR ? j->nb : (int)((left + FUSE__QNR - 1) / FUSE__QNR);
    fuse__qtile_fn tile = bn == j->nb ? j->main : fuse__qtile_get(p->isa, h->layout, p->vnni, bn, j->mr);
    int kvalid = left < (int64_t)bn * FUSE__QNR ? (int)left : bn * FUSE__QNR;
    int mvalid = j->npix - m0 < j->mr ? (int)(j->npix - m0) : j->mr;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
    fuse__qtile_fn last = mvalid < j->mr && bn == j->nb ? fuse__qtile_get(p->isa, h->layout, p->vnni, bn, mvalid) : NULL;
    mr = last ? mvalid : j->mr; /* the image's last pixels on a tile of as many */
    if (last) tile = last;
#endif
#ifdef FUSE__SIMD
    if (filled == mr) { /* (tile-major: this tile's rows, as the block before took them) */
    } else
#endif
    if (j->pointwise) {
      for (jj = 0; jj < mr; jj++) rows[jj] = img + (m0 + (jj < mvalid ? jj : mvalid - 1)) * cs;
#ifdef FUSE__HAVE_QWINDOW
    } else if (j->window) { /* each pixel's window gathered from its kernel rows (the padding
                               row's where one falls outside) into one tap, FUSE__QWINDOW_AHEAD
                               tiles' pixels at a time (the tiles then read what has left the
                               store buffer) */
      unsigned char *wins = (unsigned char *)(rows + FUSE__QMR_MAX);
      if (n != win_n || m0 < win_lo || m0 + mvalid > win_hi) {
        int64_t q = m0, steps[FUSE__QWINDOW_KH], ky;
        const unsigned char *from[FUSE__QWINDOW_KH];
        win_n = n, win_lo = m0, win_hi = m0 + FUSE__QWINDOW_AHEAD * mr;
        if (win_hi > j->npix) win_hi = j->npix;
        while (q < win_hi) { /* the pixels of an output row at once */
          int64_t oy = q / OW, ox = q % OW, run = OW - ox < win_hi - q ? OW - ox : win_hi - q;
          int64_t y0 = oy * a->strides[0] - a->padding[0];
          for (ky = 0; ky < h->KH; ky++) {
            int64_t iy = y0 + ky * a->dilation[0];
            from[ky] = iy >= 0 && iy < H ? img + (iy * WP + ox * a->strides[1]) * cs : j->pad;
            steps[ky] = iy >= 0 && iy < H ? a->strides[1] * cs : 0;
          }
          j->gather(wins + (q - win_lo) * j->wstride, j->wstride, from, steps, h->KH, j->run, run);
          q += run;
        }
      }
      for (jj = 0; jj < mr; jj++)
        rows[jj] = wins + (m0 - win_lo + (jj < mvalid ? jj : mvalid - 1)) * j->wstride;
#endif
    } else {
      int64_t oy = m0 / OW, ox = m0 % OW;
      for (jj = 0; jj < mr; jj++) { /* each pixel's window corner (the last one repeated) */
        int64_t y0 = oy * a->strides[0] - a->padding[0], x0 = ox * a->strides[1] - a->padding[1];
        if (y0 >= 0 && y0 + span_y < H && (j->rowmode || (x0 >= 0 && x0 + span_x < W))) {
          const unsigned char *row = img + (y0 * WP + x0 + j->pl) * cs, *at;
          int64_t ky, kx;
          for (t = 0, ky = 0; ky < kh; ky++, row += step_y) /* row mode: a tap is a kernel row */
            for (kx = 0, at = row; kx < kw; kx++, t++, at += step_x) rows[t * mr + jj] = at;
        } else {
          for (t = 0; t < j->ntaps; t++) {
            int64_t dy = (j->rowmode ? t : t / h->KW) * a->dilation[0];
            int64_t dx = j->rowmode ? 0 : t % h->KW * a->dilation[1];
            int64_t iy = y0 + dy, ix = x0 + dx;
            rows[t * mr + jj] = iy >= 0 && iy < H && ((ix >= 0 && ix < W) || j->rowmode)
                                    ? (const void *)(img + (iy * WP + ix + j->pl) * cs)
                                    : (const void *)j->pad;
          }
        }
        if (jj + 1 < mvalid && ++ox == OW) ox = 0, oy++;
      }
    }
    tile((int)j->ntaps, (int)(j->span / (j->pairs ? 2 * j->step : j->step)), rows,
         j->w + (size_t)(k / FUSE__QNR) * j->panel, (int64_t)j->panel, yi + m0 * ldy + k, ldy,
         mvalid, kvalid, j->bias + k, j->scale + k, h);
#ifdef FUSE__SIMD
    if (j->tile_major) {
      filled = mr;
      if (++bi == j->blocks) {
        bi = 0, filled = 0;
        if (++ti == j->tiles) ti = 0, n++;
      }
      continue;
    }
#endif
    if (++ti == j->tiles) {
      ti = 0;
      if (++bi == j->blocks) bi = 0, n++;
    }
  }
}

/* The staged NHWC output into the NCHW one, output channels [u0, u1) of all the images
   (N * K of them). */
static void fuse__qconv_nchw_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__qconv_job *j = (const fuse__qconv_job *)ctx;
  int64_t u, i;
  (void)chunk;
  for (u = u0; u < u1; u++) {
    int64_t n = u / j->K, k = u % j->K;
    const unsigned char *src = j->out + n * j->npix * j->Kp + k;
    unsigned char *dst = j->y + u * j->npix;
    for (i = 0; i < j->npix; i++) dst[i] = src[i * j->Kp];
  }
}

/* The job's r, h, a, x, y, its geometry (N, C, H, W, K, OW, npix) and layouts (in_nhwc,
   out_nhwc) given: the rest, then the phases. */
static void fuse__qconv_packed_run(fuse__qconv_job *jp) {
  fuse__qconv_job j = *jp;
  const fuse_plan *p = j.r->p;
  const fuse__qhead *h = j.h;
  const fuse_conv2d_attrs *a = j.a;
  size_t al = FUSE__ALIGN - 1;
  j.taps = (int64_t)h->KH * h->KW;
  j.pairs = h->layout == FUSE__QL_PAIRS, j.step = j.pairs ? 2 : 4;
  j.rowmode = fuse__qconv_rowmode(h->layout, j.C, h->KW, a->dilation[1]);
  j.pl = j.rowmode ? a->padding[1] : 0, j.WP = j.rowmode ? j.W + j.pl + a->padding[3] : j.W;
  j.csteps = (j.C + j.step - 1) / j.step, j.cs = j.csteps * j.step * (j.pairs ? 2 : 1); /* bytes a row */
  j.ntaps = j.rowmode ? h->KH : j.taps, j.span = j.rowmode ? h->KW * j.cs : j.cs; /* a tap's bytes */
  j.in_place = !j.pairs && j.in_nhwc && j.C % 4 == 0 && !j.rowmode;
  j.pointwise = j.taps == 1 && a->strides[0] == 1 && a->strides[1] == 1 && !a->padding[0] &&
                !a->padding[1] && !a->padding[2] && !a->padding[3];
  j.panel = fuse__qconv_weight_bytes(h->layout, j.K, j.C, j.taps, &j.Kp);
  j.in = j.r->work + p->scratch_offset;
  j.pad = j.in + (((size_t)(j.N * j.H * j.WP * j.cs) + al) & ~al);
  j.rows_at = (size_t)(j.pad - j.in) + (((size_t)(j.taps * j.cs) + al) & ~al);
  j.out = j.in + j.rows_at + (((size_t)j.taps * FUSE__QMR_MAX * sizeof(void *) + al) & ~al);
#ifdef FUSE__HAVE_QWINDOW
  if (h->layout == FUSE__QL_WINDOW) { /* rows of C bytes a pixel, a window one tap of quads */
    j.window = 1, j.cs = j.C, j.run = h->KW * j.C, j.span = (j.taps * j.C + 3) / 4 * 4;
    j.gather = fuse__qwindow_gather;
#if !defined(FUSE_NO_AVX2)
    if (p->isa == FUSE_ISA_AVX2 || p->isa == FUSE_ISA_AVX512) j.gather = fuse__qwindow_gather_avx2;
#endif
    j.ntaps = 1, j.wstride = fuse__qwindow_stride(j.C, j.taps);
    j.pad = j.in + (((size_t)(j.N * j.H * j.WP * j.C + 64) + al) & ~al);
    j.rows_at = (size_t)(j.pad - j.in) + (((size_t)(j.taps * j.C + 64) + al) & ~al);
    j.out = j.in + j.rows_at + (((size_t)FUSE__QMR_MAX * (sizeof(void *) + FUSE__QWINDOW_AHEAD *
                                                          (size_t)j.wstride) + al) & ~al);
    memset(j.pad + j.run, h->x_zero, 32); /* (a run's 32 bytes read) */
  }
#endif
  j.w = (const unsigned char *)fuse__qconv_arrays(h, j.Kp, &j.bias, &j.scale);
  j.main = fuse__qtile_plan(p->isa, h->layout, p->vnni, j.K, &j.nb, &j.mr);
  j.panel /= (size_t)(j.Kp / FUSE__QNR); /* one panel of 16 output channels */
  j.blocks = (j.K + (int64_t)j.nb * FUSE__QNR - 1) / ((int64_t)j.nb * FUSE__QNR);
  j.tiles = (j.npix + j.mr - 1) / j.mr;
#ifdef FUSE__SIMD
  /* every block of a tile at once where 4 blocks or more would each go over the whole input
     again and all the weights stay in the (L2) cache: the input read once, each tile's row
     pointers taken once (x86 builds) */
  j.tile_major = j.blocks >= 4 && j.panel * (size_t)(j.Kp / FUSE__QNR) <= 262144;
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (j.pairs && (p->isa == FUSE_ISA_AVX2 || p->isa == FUSE_ISA_AVX512)) j.pairs_row = fuse__qpairs_row_avx2;
#endif
  if (j.pairs) memset(j.pad, 0, (size_t)j.span);
  else memset(j.pad, h->x_zero, (size_t)j.span);
  if (j.in_place) j.cs = j.C;
  else fuse__parallel(p, j.N * j.H, fuse__qconv_rows_units, &j);
  fuse__parallel(p, j.N * j.blocks * j.tiles, fuse__qconv_tile_units, &j);
  if (!j.out_nhwc) fuse__parallel(p, j.N * j.K, fuse__qconv_nchw_units, &j);
}

static void fuse__qconv_packed(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  fuse__qconv_job j;
  memset(&j, 0, sizeof j);
  j.r = r, j.h = h, j.a = &s->a.conv;
  j.x = (const uint8_t *)(const void *)fuse__in(r, s, 0);
  j.y = (unsigned char *)(void *)fuse__data(r, s->out);
  j.N = tx->shape[0], j.C = tx->shape[1], j.H = tx->shape[2], j.W = tx->shape[3];
  j.K = ty->shape[1], j.OW = ty->shape[3], j.npix = ty->shape[2] * ty->shape[3];
  j.in_nhwc = tx->nhwc, j.out_nhwc = ty->nhwc;
  fuse__qconv_packed_run(&j);
}

/* qmatmul: x [..., C] uint8 times the weights [K][C] (plan/quant_pack.c), + bias, requantized
   as qconv2d's: y [..., K]. On the packed tiles a 1x1 qconv2d over one image of rows x 1
   pixels, x and y its NHWC input and output as they are (row-major); on the reference plans'
   direct loops, a row at a time. */
static void fuse__qmatmul(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0);
  int64_t rows = fuse__numel(tx->rank, tx->shape) / h->C;
  if (h->layout == FUSE__QL_DIRECT) {
    const uint8_t *x = (const uint8_t *)(const void *)fuse__in(r, s, 0);
    const int32_t *bias;
    const float *scale;
    const int8_t *w = (const int8_t *)fuse__qconv_arrays(h, h->K, &bias, &scale);
    void *y = fuse__data(r, s->out);
    int ytype = r->p->tensors[s->out].type;
    int64_t i, k, c;
    if (!FUSE__HAS_KERNEL(QDIRECT)) return;
    for (i = 0; i < rows; i++)
      for (k = 0; k < h->K; k++) {
        const uint8_t *xi = x + i * h->C;
        const int8_t *wk = w + k * h->C;
        int32_t acc = bias[k];
        for (c = 0; c < h->C; c++) acc += (int32_t)(int16_t)(xi[c] - h->x_zero) * (int32_t)wk[c];
        fuse__q_put(y, ytype, i * h->K + k, fuse__qtile_requant(acc, scale[k], h));
      }
  } else if (FUSE__HAS_KERNEL(QTILES)) {
    static const fuse_conv2d_attrs unit = {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1};
    fuse__qconv_job j;
    memset(&j, 0, sizeof j);
    j.r = r, j.h = h, j.a = &unit;
    j.x = (const uint8_t *)(const void *)fuse__in(r, s, 0);
    j.y = (unsigned char *)(void *)fuse__data(r, s->out);
    j.N = 1, j.C = h->C, j.H = rows, j.W = 1; /* (a row of the image each: copied in parallel) */
    j.K = h->K, j.OW = 1, j.npix = rows;
    j.in_nhwc = j.out_nhwc = 1;
    fuse__qconv_packed_run(&j);
  }
}

#ifdef FUSE__HAVE_QWINO
/* qconv2d in the Winograd layout (kernels/qconv.c, fuse__qwino_tiles): NHWC in and out (its
   input converted when it is not, plan/layouts.c; a packed qconv2d writes NHWC), blocks of
   tiles of 2x2 outputs, per image, shared among the chunks, each in its own scratch slot. */
typedef struct fuse__qwino_job {
  const fuse__run *r;
  fuse__qwino q;
  int64_t tiles, block, blocks;
} fuse__qwino_job;

static void fuse__qwino_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__qwino_job *j = (const fuse__qwino_job *)ctx;
  const fuse_plan *p = j->r->p;
  unsigned char *work = j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk;
  int64_t u;
  for (u = u0; u < u1; u++) {
    fuse__qwino q = j->q;
    int64_t n = u / j->blocks, t0 = u % j->blocks * j->block;
    q.x += n * q.H * q.W * q.C, q.y += n * q.H * q.W * q.K;
    fuse__qwino_tiles(&q, t0, t0 + j->block < j->tiles ? t0 + j->block : j->tiles, work);
  }
}

static void fuse__qconv_wino(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse_plan *p = r->p;
  const fuse__tensor *tx = fuse__in_t(r, s, 0);
  fuse__qwino_job j;
  int64_t Kp;
  int nb;
  j.r = r;
  j.q.x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
  j.q.y = (unsigned char *)(void *)fuse__data(r, s->out);
  j.q.C = tx->shape[1], j.q.H = tx->shape[2], j.q.W = tx->shape[3], j.q.K = h->K;
  j.q.csteps = (j.q.C + 1) / 2, j.q.h = h;
  fuse__qconv_weight_bytes(FUSE__QL_WINO, h->K, j.q.C, 9, &Kp);
  j.q.w = (const int16_t *)fuse__qconv_arrays(h, Kp, &j.q.bias, &j.q.scale);
  j.q.tile = fuse__qtile_plan(p->isa, FUSE__QL_PAIRS, p->vnni, h->K, &nb, &j.q.mr);
  fuse__qwino_pick(p->isa, &j.q.in, &j.q.out);
  j.tiles = ((j.q.H + 1) / 2) * ((j.q.W + 1) / 2);
  j.block = fuse__qwino_block(j.q.C) / j.q.mr * j.q.mr; /* (whole tiles of the MR) */
  j.blocks = (j.tiles + j.block - 1) / j.block;
  j.block = (j.tiles + j.blocks - 1) / j.blocks; /* as even as whole tiles of the MR make them */
  j.block = (j.block + j.q.mr - 1) / j.q.mr * j.q.mr;
  j.blocks = (j.tiles + j.block - 1) / j.block;
  fuse__parallel(p, tx->shape[0] * j.blocks, fuse__qwino_units, &j);
}
#endif

/* qglobal_avg_pool2d: per channel of each image the int32 sum of its pixels less x_zero
   times their count (wrapping, as ONNX Runtime's int32 sums), times fuse__qgap_scale, as
   qconv2d requantizes (ONNX Runtime's MlasRequantizeOutput), into [N, C, 1, 1] of the input's
   type; on kernels/qglobal_pool.c's rows. The input as its producer left it: NCHW, a plane per
   channel, or NHWC, the pixels' channels summed column by column. Shared among the chunks by
   (image, block of FUSE__QGAP_BLOCK channels). */
#define FUSE__QGAP_BLOCK 256
typedef struct fuse__qgap_job {
  const fuse__qhead *h;
  const unsigned char *x;
  unsigned char *y;
  int64_t C, P, blocks;
  uint32_t share; /* what a sum holds besides the values less x_zero: (x_zero + 128 for int8,
                     whose bytes are summed flipped) times P */
  float scale;
  int nhwc;
  unsigned char flip;
  fuse__qsum_fn sum;
  fuse__qcolumns_fn columns;
  fuse__qgap_requant_fn requant;
} fuse__qgap_job;

static void fuse__qgap_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__qgap_job *j = (const fuse__qgap_job *)ctx;
  uint32_t acc[FUSE__QGAP_BLOCK];
  int64_t u, c;
  (void)chunk;
  for (u = u0; u < u1; u++) { /* channels [c0, c0 + len) of image n */
    int64_t n = u / j->blocks, c0 = u % j->blocks * FUSE__QGAP_BLOCK;
    int64_t len = j->C - c0 < FUSE__QGAP_BLOCK ? j->C - c0 : FUSE__QGAP_BLOCK;
    if (j->nhwc) {
      memset(acc, 0, (size_t)len * sizeof acc[0]);
      j->columns(acc, j->x + n * j->P * j->C + c0, j->C, j->P, len, j->flip);
    } else {
      for (c = 0; c < len; c++) acc[c] = j->sum(j->x + (n * j->C + c0 + c) * j->P, j->P, j->flip);
    }
    j->requant(j->y + n * j->C + c0, acc, len, j->share, j->scale, j->h);
  }
}

static void fuse__qgap(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0);
  fuse__qgap_job j;
  j.h = h;
  j.x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
  j.y = (unsigned char *)(void *)fuse__data(r, s->out);
  j.C = tx->shape[1], j.P = tx->shape[2] * tx->shape[3];
  j.nhwc = tx->nhwc;
  j.flip = tx->type == FUSE_INT8 ? 0x80 : 0;
  j.share = (uint32_t)(h->x_zero + (j.flip ? 128 : 0)) * (uint32_t)j.P;
  j.scale = fuse__qgap_scale(h->x_scale, h->y_scale, j.P);
  fuse__qgap_pick(r->p->isa, &j.sum, &j.columns, &j.requant);
  j.blocks = (j.C + FUSE__QGAP_BLOCK - 1) / FUSE__QGAP_BLOCK;
  fuse__parallel(r->p, tx->shape[0] * j.blocks, fuse__qgap_units, &j);
}

#ifdef FUSE__HAVE_QWINO3
/* qconv2d in the Winograd F(3x3) layout (kernels/qwino3.c, fuse__qwino3_tiles): as F(2x2)
   above, tiles of 3x3 outputs. */
typedef struct fuse__qwino3_job {
  const fuse__run *r;
  fuse__qwino3 q;
  int64_t tiles, block, blocks, kparts, kpart;
} fuse__qwino3_job;

static void fuse__qwino3_units(void *ctx, int chunk, int64_t u0, int64_t u1) {
  const fuse__qwino3_job *j = (const fuse__qwino3_job *)ctx;
  const fuse_plan *p = j->r->p;
  unsigned char *work = j->r->work + p->scratch_offset + p->scratch_slot * (size_t)chunk;
  int64_t u;
  for (u = u0; u < u1; u++) { /* unit u: image, block, part of the output channels */
    fuse__qwino3 q = j->q;
    int64_t b = u / j->kparts, n = b / j->blocks, t0 = b % j->blocks * j->block;
    int64_t k0 = u % j->kparts * j->kpart, k1 = k0 + j->kpart < q.K ? k0 + j->kpart : q.K;
    q.x += n * q.H * q.W * q.C, q.y += n * q.H * q.W * q.K;
    fuse__qwino3_tiles(&q, t0, t0 + j->block < j->tiles ? t0 + j->block : j->tiles, k0, k1, work);
  }
}

/* The blocks of the images, each cut by its output channels into as many parts (of whole nb
   panels) as make a unit for every chunk where the blocks are fewer (a 14x14 image is one
   block): each part transforms its block's patches again, a small share of its work. */
static void fuse__qconv_wino3(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse_plan *p = r->p;
  const fuse__tensor *tx = fuse__in_t(r, s, 0);
  fuse__qwino3_job j;
  int64_t Kp, groups;
  j.r = r;
  j.q.x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
  j.q.y = (unsigned char *)(void *)fuse__data(r, s->out);
  j.q.C = tx->shape[1], j.q.H = tx->shape[2], j.q.W = tx->shape[3], j.q.K = h->K;
  j.q.csteps = (j.q.C + 1) / 2, j.q.h = h;
  fuse__qconv_weight_bytes(FUSE__QL_WINO3, h->K, j.q.C, 9, &Kp);
  j.q.w = (const int16_t *)fuse__qconv_arrays(h, Kp, &j.q.bias, &j.q.scale);
  j.tiles = ((j.q.H + 2) / 3) * ((j.q.W + 2) / 3);
  fuse__qwino3_pick(&j.q, 0, j.tiles);
  fuse__qwino3_blocks(j.tiles, j.q.C, j.q.mr, &j.block, &j.blocks);
  groups = (Kp / FUSE__QNR + j.q.nb - 1) / j.q.nb; /* of nb panels */
  j.kparts = 1;
  if (tx->shape[0] * j.blocks < p->chunks) {
    j.kparts = (p->chunks + tx->shape[0] * j.blocks - 1) / (tx->shape[0] * j.blocks);
    j.kparts = j.kparts < groups ? j.kparts : groups;
  }
  j.kpart = (groups + j.kparts - 1) / j.kparts * j.q.nb * FUSE__QNR;
  j.kparts = (Kp + j.kpart - 1) / j.kpart;
  fuse__parallel(p, tx->shape[0] * j.blocks * j.kparts, fuse__qwino3_units, &j);
}
#endif

/* x [rows][cols] bytes into y [cols][rows], in blocks of 32 x 32 (qto_nhwc, qto_nchw). */
static void fuse__transpose_bytes(const unsigned char *x, unsigned char *y, int64_t rows,
                                  int64_t cols) {
  int64_t r0, c0, r, c;
  for (r0 = 0; r0 < rows; r0 += 32)
    for (c0 = 0; c0 < cols; c0 += 32) {
      int64_t r1 = r0 + 32 < rows ? r0 + 32 : rows, c1 = c0 + 32 < cols ? c0 + 32 : cols;
      for (c = c0; c < c1; c++)
        for (r = r0; r < r1; r++) y[c * rows + r] = x[r * cols + c];
    }
}

static void fuse__kernel_qint(const fuse__run *r, const fuse__step *s) {
  const fuse__qhead *h = (const fuse__qhead *)(const void *)s->packed;
  const unsigned char *table;
  if (s->op == FUSE__OP_QTO_NHWC || s->op == FUSE__OP_QTO_NCHW) { /* per image [C][P] <-> [P][C] */
    const fuse__tensor *ty = &r->p->tensors[s->out];
    const unsigned char *x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
    unsigned char *y = (unsigned char *)(void *)fuse__data(r, s->out);
    int64_t C = ty->shape[1], P = ty->shape[2] * ty->shape[3], n;
    int to_nhwc = s->op == FUSE__OP_QTO_NHWC;
    for (n = 0; n < ty->shape[0]; n++)
      fuse__transpose_bytes(x + n * C * P, y + n * C * P, to_nhwc ? C : P, to_nhwc ? P : C);
    return;
  }
  table = (const unsigned char *)(h + 1);
  if (s->op == FUSE__OP_QCONV2D) {
    /* (a family this build leaves out: refused when compiled or loaded, plan/needs.c) */
    if (h->layout == FUSE__QL_PAIRS || h->layout == FUSE__QL_QUADS || h->layout == FUSE__QL_SQUADS
#ifdef FUSE__HAVE_QWINDOW
        || h->layout == FUSE__QL_WINDOW
#endif
    ) {
      if (FUSE__HAS_KERNEL(QTILES)) fuse__qconv_packed(r, s, h);
#ifdef FUSE__HAVE_QWINO
    } else if (h->layout == FUSE__QL_WINO) { /* (a build without it does not load it) */
      if (FUSE__HAS_KERNEL(QTILES)) fuse__qconv_wino(r, s, h);
#endif
#ifdef FUSE__HAVE_QWINO3
    } else if (h->layout == FUSE__QL_WINO3) { /* (a build without it does not load it) */
      if (FUSE__HAS_KERNEL(QTILES)) fuse__qconv_wino3(r, s, h);
#endif
    } else if (h->layout == FUSE__QL_DW) {
      if (FUSE__HAS_KERNEL(QDW)) fuse__qconv_depthwise(r, s, h);
    } else if (FUSE__HAS_KERNEL(QDIRECT)) {
      fuse__qconv_direct(r, s, h);
    }
  } else if (s->op == FUSE__OP_QMATMUL) {
    if (FUSE__HAS_KERNEL(QMATMUL)) fuse__qmatmul(r, s, h);
  } else if (s->op == FUSE__OP_QADD) {
    fuse__qadd(r, s, h);
  } else if (s->op == FUSE__OP_QMAX_POOL2D) {
    if (FUSE__HAS_KERNEL(QPOOL)) fuse__qmax_pool(r, s, table);
  } else if (s->op == FUSE__OP_QGLOBAL_AVG_POOL2D) {
    if (FUSE__HAS_KERNEL(QGLOBAL_AVG_POOL)) fuse__qgap(r, s, h);
  } else { /* qlut */
    const fuse__tensor *tx = fuse__in_t(r, s, 0);
    const unsigned char *x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
    unsigned char *y = (unsigned char *)(void *)fuse__data(r, s->out);
    fuse__qtable_pick(r->p->isa, r->p->vnni)(y, x, fuse__numel(tx->rank, tx->shape), table);
  }
}
