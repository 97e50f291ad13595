/* ------------------------------------------------ quantize, dequantize (reference) -- */
/* ONNX QuantizeLinear and DequantizeLinear, element by element: the oracle the integer
   kernels are tested against and what runs where a quantized model stays in float32. */

/* Element i of a typed tensor's data as an integer (the zero points, the quantized values). */
static int64_t fuse__typed_at(const void *data, int type, int64_t i) {
  switch (type) {
  case FUSE_UINT8: return ((const uint8_t *)data)[i];
  case FUSE_INT8: return ((const int8_t *)data)[i];
  case FUSE_INT32: return ((const int32_t *)data)[i];
  default: return (int64_t)((const float *)data)[i];
  }
}

/* v (|v| < 2^22) rounded to the nearest whole number, ties to even, under the default
   rounding mode (as cvtps2dq rounds): adding and taking away 1.5 * 2^23 leaves no fraction.
   Assigned to a float each time, so excess precision (x87) cannot keep one. */
static float fuse__round_small(float v) {
  float t = v + 12582912.0f;
  t -= 12582912.0f;
  return t;
}

/* The per-tensor uint8 / int8 cases in loops of one type each (quantize on the ISA's row,
   kernels/qeltwise.c, first): the same values as the general loops below under the default
   rounding mode. 0: not such a case. */
static int fuse__quant_per_tensor(fuse_isa isa, int op, const void *x, int xtype, void *y,
                                  int ytype, int64_t n, float scale, int32_t zero) {
  int64_t i = 0;
  if (op == FUSE__OP_DEQUANTIZE) {
    float *out = (float *)y;
    if (xtype == FUSE_UINT8)
      for (i = 0; i < n; i++) out[i] = (float)((int32_t)((const uint8_t *)x)[i] - zero) * scale;
    else if (xtype == FUSE_INT8)
      for (i = 0; i < n; i++) out[i] = (float)((int32_t)((const int8_t *)x)[i] - zero) * scale;
    else
      return 0;
    return 1;
  }
  if (ytype != FUSE_UINT8 && ytype != FUSE_INT8) return 0;
  {
    const float *in = (const float *)x;
    const float lo = (float)((ytype == FUSE_UINT8 ? 0 : -128) - zero);
    const float hi = (float)((ytype == FUSE_UINT8 ? 255 : 127) - zero);
    fuse__quantize_fn row = fuse__quantize_pick(isa); /* (kernels/qeltwise.c) */
    if (row) i = row(in, (unsigned char *)y, n, scale, zero, ytype == FUSE_INT8);
    for (; i < n; i++) {
      float v = in[i] / scale;
      int32_t q;
      v = v == v ? v : 0.0f; /* NaN: the zero point */
      v = v < lo ? lo : v > hi ? hi : v;
      q = (int32_t)fuse__round_small(v) + zero;
      if (ytype == FUSE_UINT8) ((uint8_t *)y)[i] = (uint8_t)q;
      else ((int8_t *)y)[i] = (int8_t)q;
    }
  }
  return 1;
}

/* quantize: y = saturate(round(x / scale) + zero point); NaN gives the zero point.
   dequantize: y = (q - zero point) * scale. Per tensor, or per index of a.quant.axis when the
   scale holds more than one value. */
static void fuse__kernel_quant(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *tx = fuse__in_t(r, s, 0), *ts = fuse__in_t(r, s, 1), *ty = &r->p->tensors[s->out];
  const void *x = fuse__in(r, s, 0), *zero = s->num_in > 2 ? (const void *)fuse__in(r, s, 2) : NULL;
  const float *scale = fuse__in(r, s, 1);
  void *y = fuse__data(r, s->out);
  int64_t n = fuse__numel(tx->rank, tx->shape), channels = fuse__numel(ts->rank, ts->shape);
  int64_t inner = channels > 1 ? fuse__numel(tx->rank - s->a.quant.axis - 1,
                                             tx->shape + s->a.quant.axis + 1)
                               : n;
  int ztype = s->num_in > 2 ? fuse__in_t(r, s, 2)->type : FUSE_UINT8;
  int64_t i;
  if (channels == 1 && r->p->isa != FUSE_ISA_AUTO && /* (the reference kernels: the loops below) */
      fuse__quant_per_tensor(r->p->isa, s->op, x, tx->type, y, ty->type, n, scale[0],
                             zero ? (int32_t)fuse__typed_at(zero, ztype, 0) : 0))
    return;
  if (s->op == FUSE__OP_DEQUANTIZE) {
    for (i = 0; i < n; i++) {
      int64_t c = channels > 1 ? (i / inner) % channels : 0;
      int64_t z = zero ? fuse__typed_at(zero, ztype, c) : 0;
      ((float *)y)[i] = (float)(fuse__typed_at(x, tx->type, i) - z) * scale[c];
    }
    return;
  }
  {
    double lo = ty->type == FUSE_UINT8 ? 0 : ty->type == FUSE_INT8 ? -128 : -2147483648.0;
    double hi = ty->type == FUSE_UINT8 ? 255 : ty->type == FUSE_INT8 ? 127 : 2147483647.0;
    for (i = 0; i < n; i++) {
      int64_t c = channels > 1 ? (i / inner) % channels : 0;
      double z = zero ? (double)fuse__typed_at(zero, ztype, c) : 0;
      double q = (double)fuse__round_half_even(((const float *)x)[i] / scale[c]) + z;
      if (q != q) q = z;
      q = q < lo ? lo : q > hi ? hi : q;
      if (ty->type == FUSE_INT32) ((int32_t *)y)[i] = (int32_t)q;
      else if (ty->type == FUSE_INT8) ((int8_t *)y)[i] = (int8_t)q;
      else ((uint8_t *)y)[i] = (uint8_t)q;
    }
  }
}
