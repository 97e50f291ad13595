/* ------------------------------------------------------ integer steps (run) -- */
/* The steps of a quantized model that run in integers (plan/quant_pack.c packed them; the
   header is fuse__qhead, plan.c). qconv2d: uint8 NCHW in, int32 sums of (x - x_zero) * w and
   the bias, requantized as ONNX Runtime does it: (float)sum * scale[k], clamped to [lo, hi] -
   y_zero, rounded half to even, plus y_zero, into uint8 / int8 NCHW. qadd: the float ops it
   fuses, computed as they compute them. qlut: a table. qmax_pool2d: the pool on the integers,
   then the table. */

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
  const int32_t *bias = (const int32_t *)(const void *)(h + 1);
  const float *scale = (const float *)(const void *)(bias + h->K);
  const int8_t *w = (const int8_t *)(const void *)(scale + h->K);
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

/* qadd: v = (a - a_zero) * a_scale + (b - b_zero) * b_scale, the ops, then quantize, each as
   the float step computes it (dequantize, add, the ops, quantize: bit for bit). */
static void fuse__qadd(const fuse__run *r, const fuse__step *s, const fuse__qhead *h) {
  const fuse__tensor *ta = fuse__in_t(r, s, 0), *tb = fuse__in_t(r, s, 1), *ty = &r->p->tensors[s->out];
  const void *a = fuse__in(r, s, 0), *b = fuse__in(r, s, 1);
  const int32_t *words = (const int32_t *)(const void *)(h + 1);
  fuse_post_op post[4];
  void *y = fuse__data(r, s->out);
  int64_t n = fuse__numel(ty->rank, ty->shape), i;
  int k;
  for (k = 0; k < h->num_post; k++) {
    const int32_t *w = words + k * FUSE__QPOST_WORDS;
    memset(&post[k], 0, sizeof post[k]);
    post[k].kind = (fuse_post_kind)w[0];
    memcpy(&post[k].lo, w + 1, 4), memcpy(&post[k].hi, w + 2, 4);
    memcpy(&post[k].alpha, w + 3, 4), memcpy(&post[k].beta, w + 4, 4);
    post[k].tensor = FUSE_NONE, post[k].operand = -1;
  }
  for (i = 0; i < n; i++) {
    float v = (float)(fuse__q_at(a, ta->type, i) - h->x_zero) * h->x_scale +
              (float)(fuse__q_at(b, tb->type, i) - h->b_zero) * h->b_scale;
    double q;
    for (k = 0; k < h->num_post; k++) v = fuse__post_apply_scalar(v, &post[k], NULL, 1, 0.0f);
    q = (double)fuse__round_half_even(v / h->y_scale) + h->y_zero;
    if (q != q) q = h->y_zero;
    fuse__q_put(y, ty->type, i, (int32_t)(q < h->lo ? h->lo : q > h->hi ? h->hi : q));
  }
}

/* qmax_pool2d: the largest input value of each window (padding never counts), through the
   table. */
static void fuse__qmax_pool(const fuse__run *r, const fuse__step *s, const unsigned char *table) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ty = &r->p->tensors[s->out];
  const void *x = fuse__in(r, s, 0);
  const fuse_pool2d_attrs *a = &s->a.pool;
  int64_t NC = ty->shape[0] * ty->shape[1], H = tx->shape[2], W = tx->shape[3];
  int64_t OH = ty->shape[2], OW = ty->shape[3], nc, oy, ox, ky, kx;
  void *y = fuse__data(r, s->out);
  for (nc = 0; nc < NC; nc++)
    for (oy = 0; oy < OH; oy++)
      for (ox = 0; ox < OW; ox++) {
        int32_t best = -129;
        for (ky = 0; ky < a->kernel[0]; ky++) {
          int64_t iy = oy * a->strides[0] - a->padding[0] + ky * a->dilation[0];
          if (iy < 0 || iy >= H) continue;
          for (kx = 0; kx < a->kernel[1]; kx++) {
            int64_t ix = ox * a->strides[1] - a->padding[1] + kx * a->dilation[1];
            int32_t v;
            if (ix < 0 || ix >= W) continue;
            v = fuse__q_at(x, tx->type, (nc * H + iy) * W + ix);
            if (v > best) best = v;
          }
        }
        if (best == -129) best = fuse__q_at(x, tx->type, nc * H * W); /* (no window is empty) */
        fuse__q_put(y, ty->type, (nc * OH + oy) * OW + ox, table[best & 0xff]);
      }
}

static void fuse__kernel_qint(const fuse__run *r, const fuse__step *s) {
  const fuse__qhead *h = (const fuse__qhead *)(const void *)s->packed;
  const unsigned char *table = (const unsigned char *)(h + 1);
  if (s->op == FUSE__OP_QCONV2D) {
    fuse__qconv_direct(r, s, h);
  } else if (s->op == FUSE__OP_QADD) {
    fuse__qadd(r, s, h);
  } else if (s->op == FUSE__OP_QMAX_POOL2D) {
    fuse__qmax_pool(r, s, table);
  } else { /* qlut */
    const fuse__tensor *tx = fuse__in_t(r, s, 0);
    const unsigned char *x = (const unsigned char *)(const void *)fuse__in(r, s, 0);
    unsigned char *y = (unsigned char *)(void *)fuse__data(r, s->out);
    int64_t n = fuse__numel(tx->rank, tx->shape), i;
    for (i = 0; i < n; i++) y[i] = table[x[i]];
  }
}
