/* ------------------------------------------------------ integer steps (run) -- */
/* The steps of a quantized model that run in integers (plan/quant_pack.c packed them; the
   header is fuse__qhead, plan.c). qconv2d: uint8 NCHW in, int32 sums of (x - x_zero) * w and
   the bias, requantized as ONNX Runtime does it: (float)sum * scale[k], clamped to [lo, hi] -
   y_zero, rounded half to even, plus y_zero, into uint8 / int8 NCHW. qadd: the float ops it
   fuses, computed as they compute them. qlut: a table. qmax_pool2d: the pool on the integers,
   then the table. */

/* A qconv2d's packed arrays after its header (fuse__qhead, graph/ops.c): int32 bias[Kp],
   float scale[Kp], then the weights, returned. */
static const void *fuse__qconv_arrays(const fuse__qhead *h, int64_t Kp, const int32_t **bias,
                                      const float **scale) {
  *bias = (const int32_t *)(const void *)(h + 1);
  *scale = (const float *)(const void *)(*bias + Kp);
  return *scale + Kp;
}

/* One output value from its int32 sum. */
static int32_t fuse__requantize(int32_t acc, float scale, const fuse__qhead *h) {
  float f = (float)acc * scale, lo = (float)(h->lo - h->y_zero), hi = (float)(h->hi - h->y_zero);
  f = f < lo ? lo : f > hi ? hi : f; /* (NaN cannot occur: acc and scale are finite) */
  return (int32_t)fuse__round_half_even(f) + h->y_zero;
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
                      fuse__requantize(acc, scale[k], h));
        }
    }
}

/* A depthwise qconv2d (layout FUSE__QL_DW) on NHWC: per output row, each pixel near the
   border on its own, its taps' input pixels (the padding pixel, x_zero in every channel, where
   a tap falls outside), and the run of pixels whose windows lie inside at once (the first
   one's corner plus each tap's offset, then a stride further per pixel), on the ISA's
   depthwise kernel (kernels/qconv.c). */
static void fuse__qconv_depthwise(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const unsigned char *x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
  const fuse_conv2d_attrs *a = &s->a.conv;
  const int32_t *bias;
  const float *scale;
  int64_t N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t OH = ty->shape[2], OW = ty->shape[3], Cp, n, oy, ox;
  int64_t sy = a->strides[0], sx = a->strides[1], pt = a->padding[0], pl = a->padding[1];
  int64_t span_y = (int64_t)(h->KH - 1) * a->dilation[0], span_x = (int64_t)(h->KW - 1) * a->dilation[1];
  int taps = h->KH * h->KW, t;
  size_t al = FUSE__ALIGN - 1;
  const int16_t *w;
  unsigned char *pad = r->work + r->p->scratch_offset, *y = (unsigned char *)(void *)fuse__data(r, s->out);
  const unsigned char **src;
  int64_t *off; /* each tap's offset from the window's corner, in bytes */
  fuse__qdw_fn kernel = fuse__qdw_pick(r->p->isa);
  fuse__qconv_weight_bytes(FUSE__QL_DW, C, 1, taps, &Cp);
  off = (int64_t *)(void *)(pad + (((size_t)Cp + al) & ~al));
  src = (const unsigned char **)(void *)(off + taps);
  for (t = 0; t < taps; t++)
    off[t] = ((t / h->KW) * a->dilation[0] * W + (t % h->KW) * a->dilation[1]) * C;
  w = (const int16_t *)fuse__qconv_arrays(h, Cp, &bias, &scale);
  memset(pad, h->x_zero, (size_t)Cp);
  for (n = 0; n < N; n++)
    for (oy = 0; oy < OH; oy++) {
      int64_t iy0 = oy * sy - pt, inside_y = iy0 >= 0 && iy0 + span_y < H;
      for (ox = 0; ox < OW;) {
        int64_t ix0 = ox * sx - pl, run = 1;
        if (inside_y && ix0 >= 0 && ix0 + span_x < W) { /* the run of pixels inside */
          const unsigned char *corner = x + ((n * H + iy0) * W + ix0) * C;
          for (t = 0; t < taps; t++) src[t] = corner + off[t];
          while (ox + run < OW && (ox + run) * sx - pl + span_x < W) run++;
        } else {
          for (t = 0; t < taps; t++) {
            int64_t iy = iy0 + t / h->KW * a->dilation[0], ix = ix0 + t % h->KW * a->dilation[1];
            src[t] = iy >= 0 && iy < H && ix >= 0 && ix < W ? x + ((n * H + iy) * W + ix) * C : pad;
          }
        }
        kernel(src, sx * C, run, taps, w, Cp, C, bias, scale, h, y);
        y += run * C, ox += run;
      }
    }
}

/* qadd: v = (a - a_zero) * a_scale + (b - b_zero) * b_scale, the ops, then quantize. In
   double while the ops are clamps (relu, clip: every model's case), so the sum and the
   division round once, as the float64 reference (and ONNX Runtime, which matched it on the zoo)
   round them: on the ISA's rows (kernels/qeltwise.c); other ops in float32 as their float
   steps compute them. A qlut merged in (h->K = 1): its table after. */
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
    fuse__qadd_args q;
    q.a_scale = h->x_scale, q.b_scale = h->b_scale, q.y_scale = h->y_scale;
    q.y_recip = 1.0 / (double)h->y_scale;
    q.lo = h->lo - h->y_zero, q.hi = h->hi - h->y_zero;
    for (k = 0; k < h->num_post; k++) q.clo[k] = post[k].lo, q.chi[k] = post[k].hi;
    q.num_clamps = h->num_post;
    q.a_zero = h->x_zero, q.b_zero = h->b_zero, q.y_zero = h->y_zero;
    q.a_signed = ta->type == FUSE_INT8, q.b_signed = tb->type == FUSE_INT8;
    q.y_signed = h->y_signed;
    for (i = 0; i < n; i += 16384) { /* a cached piece at a time, through the table if any */
      int64_t len = n - i < 16384 ? n - i : 16384;
      unsigned char *yi = (unsigned char *)y + i;
      (ordered ? fuse__qadd_pick(r->p->isa) : fuse__qadd_scalar)(
          (const unsigned char *)a + i, (const unsigned char *)b + i, yi, len, &q);
      if (table) fuse__qtable_pick(r->p->isa, r->p->vnni)(yi, yi, len, table);
    }
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
   table (skipped where it is the identity). NHWC: per output pixel, the window's pixels'
   channels at once, 256 at a time in a local row (kernels/qeltwise.c's max rows); NCHW: a
   window per output element. int8 compares as uint8 with the sign bit flipped. */
static void fuse__qmax_pool(const fuse__run *r, const fuse__step *s, const unsigned char *table) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const unsigned char *x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
  const fuse_pool2d_attrs *a = &s->a.pool;
  int64_t N = ty->shape[0], C = ty->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t OH = ty->shape[2], OW = ty->shape[3], lanes = tx->nhwc ? C : 1, n, c, oy, ox, ky, kx, i, c0;
  unsigned char *y = (unsigned char *)(void *)fuse__data(r, s->out), best[256];
  unsigned char flip = tx->type == FUSE_INT8 ? 0x80 : 0;
  fuse__qmax_fn max_row = fuse__qmax_pick(r->p->isa);
  int identity = 1;
  for (i = 0; i < 256; i++) identity &= table[i] == i;
  for (n = 0; n < N; n++)
    for (c = 0; c < (tx->nhwc ? 1 : C); c++)
      for (oy = 0; oy < OH; oy++)
        for (ox = 0; ox < OW; ox++)
          for (c0 = 0; c0 < lanes; c0 += 256) {
            int64_t len = lanes - c0 < 256 ? lanes - c0 : 256;
            unsigned char *dst = y + c0 + (tx->nhwc ? ((n * OH + oy) * OW + ox) * C
                                                     : ((n * C + c) * OH + oy) * OW + ox);
            memset(best, 0, (size_t)len); /* (no window is empty: the pads are smaller than
                                             the kernel) */
            for (ky = 0; ky < a->kernel[0]; ky++) {
              int64_t iy = oy * a->strides[0] - a->padding[0] + ky * a->dilation[0];
              if (iy < 0 || iy >= H) continue;
              for (kx = 0; kx < a->kernel[1]; kx++) {
                int64_t ix = ox * a->strides[1] - a->padding[1] + kx * a->dilation[1];
                const unsigned char *v;
                if (ix < 0 || ix >= W) continue;
                v = x + c0 + (tx->nhwc ? ((n * H + iy) * W + ix) * C : ((n * C + c) * H + iy) * W + ix);
                max_row(best, v, len, flip);
              }
            }
            if (identity)
              for (i = 0; i < len; i++) dst[i] = (unsigned char)(best[i] ^ flip);
            else
              for (i = 0; i < len; i++) dst[i] = table[best[i] ^ flip];
          }
}

/* qconv2d in the pairs or quads layout (kernels/qconv.c). The input's rows: read in place
   when it is NHWC uint8 with channels a multiple of 4 (quads) and not in row mode, else copied
   into the scratch from NCHW or NHWC (int16 x - x_zero for pairs; padding channels 0 /
   x_zero; in row mode (fuse__qconv_rowmode) with the padding columns, x_zero). Per image,
   per block of nb panels of output channels, per tile of MR pixels: the row pointers of its
   taps (of its kernel rows in row mode; the padding row where one falls outside) and the tile,
   into the NHWC output, or into the scratch and then transposed into an NCHW one. */
static void fuse__qconv_packed(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse_plan *p = r->p;
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &p->tensors[s->out];
  const uint8_t *x = (const uint8_t *)(const void *)fuse__in(r, s, 0);
  const fuse_conv2d_attrs *a = &s->a.conv;
  int64_t N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t K = ty->shape[1], OH = ty->shape[2], OW = ty->shape[3], npix = OH * OW, Kp;
  int64_t taps = (int64_t)h->KH * h->KW, n, c, i, m0, k, t;
  int pairs = h->layout == FUSE__QL_PAIRS, step = pairs ? 2 : 4, nb, mr, j;
  int rowmode = fuse__qconv_rowmode(h->layout, C, h->KW, a->dilation[1]);
  int64_t pl = rowmode ? a->padding[1] : 0, WP = rowmode ? W + pl + a->padding[3] : W;
  int64_t csteps = (C + step - 1) / step, cs = csteps * step * (pairs ? 2 : 1); /* bytes a row */
  int64_t ntaps = rowmode ? h->KH : taps, span = rowmode ? h->KW * cs : cs; /* a tap's bytes */
  int in_place = !pairs && tx->nhwc && C % 4 == 0 && !rowmode, out_nhwc = ty->nhwc;
  int pointwise = taps == 1 && a->strides[0] == 1 && a->strides[1] == 1 && !a->padding[0] &&
                  !a->padding[1] && !a->padding[2] && !a->padding[3];
  size_t al = FUSE__ALIGN - 1, panel = fuse__qconv_weight_bytes(h->layout, K, C, taps, &Kp);
  unsigned char *in = r->work + p->scratch_offset;
  unsigned char *pad = in + (((size_t)(N * H * WP * cs) + al) & ~al);
  const void **rows = (const void **)(void *)(pad + (((size_t)(taps * cs) + al) & ~al));
  unsigned char *out = (unsigned char *)rows + (((size_t)taps * FUSE__QMR_MAX * sizeof(void *) + al) & ~al);
  const int32_t *bias;
  const float *scale;
  const unsigned char *w = (const unsigned char *)fuse__qconv_arrays(h, Kp, &bias, &scale);
  unsigned char *y = (unsigned char *)(void *)fuse__data(r, s->out);
  fuse__qtile_fn main = fuse__qtile_plan(p->isa, h->layout, p->vnni, K, &nb, &mr);
  panel /= (size_t)(Kp / FUSE__QNR); /* one panel of 16 output channels */
  if (pairs) memset(pad, 0, (size_t)span);
  else memset(pad, h->x_zero, (size_t)span);
  if (!in_place) { /* the rows, the padding channels 0 (pairs) / x_zero */
    if (rowmode) /* the padding columns */
      for (i = 0; i < N * H; i++) {
        memcpy(in + i * WP * cs, pad, (size_t)(pl * cs));
        memcpy(in + (i * WP + pl + W) * cs, pad, (size_t)((WP - pl - W) * cs));
      }
    for (n = 0; n < N; n++)
      for (i = 0; i < H * W; i++) {
        const uint8_t *src = tx->nhwc ? x + (n * H * W + i) * C : x + n * C * H * W + i;
        int64_t stride = tx->nhwc ? 1 : H * W;
        unsigned char *row = in + ((n * H + i / W) * WP + pl + i % W) * cs;
        if (pairs) {
          int16_t *e = (int16_t *)(void *)row;
          for (c = 0; c < C; c++) e[c] = (int16_t)(src[c * stride] - h->x_zero);
          for (; c < csteps * step; c++) e[c] = 0;
        } else {
          for (c = 0; c < C; c++) row[c] = src[c * stride];
          for (; c < csteps * step; c++) row[c] = (unsigned char)h->x_zero;
        }
      }
  } else {
    cs = C;
  }
  for (n = 0; n < N; n++) {
    const unsigned char *img = in_place ? x + n * H * W * C : in + n * H * WP * cs;
    unsigned char *yi = out_nhwc ? y + n * npix * K : out;
    int64_t ldy = out_nhwc ? K : Kp;
    for (k = 0; k < K; k += (int64_t)nb * FUSE__QNR) {
      int64_t left = K - k;
      int bn = left >= (int64_t)nb * FUSE__QNR ? nb : (int)((left + FUSE__QNR - 1) / FUSE__QNR);
      fuse__qtile_fn tile = bn == nb ? main : fuse__qtile_get(p->isa, h->layout, p->vnni, bn, mr);
      int kvalid = left < (int64_t)bn * FUSE__QNR ? (int)left : bn * FUSE__QNR;
      for (m0 = 0; m0 < npix; m0 += mr) {
        int mvalid = npix - m0 < mr ? (int)(npix - m0) : mr;
        if (pointwise) {
          for (j = 0; j < mr; j++) rows[j] = img + (m0 + (j < mvalid ? j : mvalid - 1)) * cs;
        } else {
          int64_t y0[FUSE__QMR_MAX], x0[FUSE__QMR_MAX], oy = m0 / OW, ox = m0 % OW;
          for (j = 0; j < mr; j++) { /* each pixel's window corner (the last one repeated) */
            y0[j] = oy * a->strides[0] - a->padding[0];
            x0[j] = ox * a->strides[1] - a->padding[1];
            if (j + 1 < mvalid && ++ox == OW) ox = 0, oy++;
          }
          for (t = 0; t < ntaps; t++) { /* row mode: t is a kernel row, its columns inside */
            int64_t dy = (rowmode ? t : t / h->KW) * a->dilation[0];
            int64_t dx = rowmode ? 0 : t % h->KW * a->dilation[1];
            for (j = 0; j < mr; j++) {
              int64_t iy = y0[j] + dy, ix = x0[j] + dx;
              rows[t * mr + j] = iy >= 0 && iy < H && ((ix >= 0 && ix < W) || rowmode)
                                     ? (const void *)(img + (iy * WP + ix + pl) * cs)
                                     : (const void *)pad;
            }
          }
        }
        tile((int)ntaps, (int)(span / (pairs ? 2 * step : step)), rows,
             w + (size_t)(k / FUSE__QNR) * panel, (int64_t)panel, yi + m0 * ldy + k, ldy,
             mvalid, kvalid, bias + k, scale + k, h);
      }
    }
    if (!out_nhwc)
      for (k = 0; k < K; k += FUSE__QNR) { /* the image's NHWC output -> NCHW, 16 channels a pass */
        int64_t kk, kn = K - k < FUSE__QNR ? K - k : FUSE__QNR;
        unsigned char *yk = y + (n * K + k) * npix;
        for (i = 0; i < npix; i++)
          for (kk = 0; kk < kn; kk++) yk[kk * npix + i] = out[i * Kp + k + kk];
      }
  }
}

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
    if (h->layout == FUSE__QL_PAIRS || h->layout == FUSE__QL_QUADS || h->layout == FUSE__QL_SQUADS) {
      if (FUSE__HAS_KERNEL(QTILES)) fuse__qconv_packed(r, s, h);
    } else if (h->layout == FUSE__QL_DW) {
      if (FUSE__HAS_KERNEL(QDW)) fuse__qconv_depthwise(r, s, h);
    } else if (FUSE__HAS_KERNEL(QDIRECT)) {
      fuse__qconv_direct(r, s, h);
    }
  } else if (s->op == FUSE__OP_QADD) {
    fuse__qadd(r, s, h);
  } else if (s->op == FUSE__OP_QMAX_POOL2D) {
    if (FUSE__HAS_KERNEL(QPOOL)) fuse__qmax_pool(r, s, table);
  } else { /* qlut */
    const fuse__tensor *tx = fuse__in_t(r, s, 0);
    const unsigned char *x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
    unsigned char *y = (unsigned char *)(void *)fuse__data(r, s->out);
    fuse__qtable_pick(r->p->isa, r->p->vnni)(y, x, fuse__numel(tx->rank, tx->shape), table);
  }
}
