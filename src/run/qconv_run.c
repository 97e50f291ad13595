/* ------------------------------------------------------ quantized conv2d (run) -- */
/* A fuse.qconv2d step (plan/quant_pack.c packed it): uint8 NCHW in, int32 sums of
   (x - x_zero) * w, the bias, then requantized as ONNX Runtime does it: (float)sum * scale[k],
   clamped to [lo, hi] - y_zero, rounded half to even, plus y_zero, into uint8 / int8 NCHW. */

/* One output value from its int32 sum. */
static int32_t fuse__requantize(int32_t acc, float scale, const fuse__qconv_head *h) {
  float f = (float)acc * scale, lo = (float)(h->lo - h->y_zero), hi = (float)(h->hi - h->y_zero);
  f = f < lo ? lo : f > hi ? hi : f; /* (NaN cannot occur: acc and scale are finite) */
  return (int32_t)fuse__round_half_even(f) + h->y_zero;
}

/* The direct loops over every output element: the oracle the integer micro-kernels are tested
   against, and what runs until they do. */
static void fuse__kernel_qconv(const fuse__run *r, const fuse__step *s) {
  const fuse__qconv_head *h = (const fuse__qconv_head *)(const void *)s->packed;
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
          int32_t acc = bias[k], q;
          int64_t at = ((n * K + k) * OH + oy) * OW + ox;
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
          q = fuse__requantize(acc, scale[k], h);
          if (ty->type == FUSE_INT8) ((int8_t *)y)[at] = (int8_t)q;
          else ((uint8_t *)y)[at] = (uint8_t)q;
        }
    }
}
