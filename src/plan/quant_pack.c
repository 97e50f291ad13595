/* ------------------------------------------------- packing a quantized conv2d -- */
/* A fuse.qconv2d composite's constants as its step's packed bytes (fuse__qconv_head, plan.c):
   the zero points and clamp, the bias in int32 units of x_scale * w_scale[k] (an int32 bias
   dequantized with that scale is taken as it is; a float bias is rounded to those units, as
   ONNX Runtime's quantizer rounds it), the requantization multipliers, the int8 weights. */

/* The output clamp of quantize(act(v)): the quantized type's range, narrowed by a relu / clip
   to the quantized values of its bounds (quantization is monotonic, so quantizing the clamped
   value is clamping the quantized one). */
static void fuse__qconv_clamp(const fuse_graph *g, const fuse__qconv_parts *q, float y_scale,
                              int32_t y_zero, int32_t *lo, int32_t *hi) {
  const fuse__node *act = q->act != FUSE_NONE ? &g->nodes[q->act] : NULL;
  int type = g->nodes[q->q].type;
  double tlo, thi;
  fuse__type_range(type, &tlo, &thi);
  *lo = (int32_t)tlo, *hi = (int32_t)thi;
  if (!act) return;
  {
    float a = act->op == FUSE__OP_RELU ? 0.0f : act->a.clip.lo;
    float b = act->op == FUSE__OP_RELU ? HUGE_VALF : act->a.clip.hi;
    double qa = (double)fuse__round_half_even(a / y_scale) + y_zero;
    double qb = (double)fuse__round_half_even(b / y_scale) + y_zero;
    if (qa == qa && qa > *lo) *lo = qa > thi ? (int32_t)thi : (int32_t)qa;
    if (qb == qb && qb < *hi) *hi = qb < tlo ? (int32_t)tlo : (int32_t)qb;
  }
}

/* Packs step st (FUSE__OP_QCONV2D) from its composite's parts q. 0: out of memory. */
static int fuse__qconv_pack(fuse_plan *p, const fuse_graph *g, const fuse__qconv_parts *q,
                            fuse__step *st) {
  const fuse__node *nw = &g->nodes[q->w_dq], *wq = &g->nodes[nw->in[0]];
  const fuse__node *nx = &g->nodes[q->x_dq], *nq = &g->nodes[q->q];
  const fuse__node *ws = &g->nodes[nw->in[1]];
  fuse__qconv_head h;
  int64_t K = wq->shape[0], per = fuse__numel(3, wq->shape + 1), k, i;
  int64_t wscales = fuse__numel(ws->rank, ws->shape);
  float x_scale = fuse__const_at(&g->nodes[nx->in[1]], 0), y_scale = fuse__const_at(&g->nodes[nq->in[1]], 0);
  size_t bytes = sizeof h + (size_t)K * 8 + (size_t)(K * per);
  unsigned char *buf;
  int32_t *bias;
  float *scale;
  memset(&h, 0, sizeof h);
  h.x_zero = nx->num_in > 2 ? (int32_t)fuse__const_value(&g->nodes[nx->in[2]], 0) : 0;
  h.y_zero = nq->num_in > 2 ? (int32_t)fuse__const_value(&g->nodes[nq->in[2]], 0) : 0;
  fuse__qconv_clamp(g, q, y_scale, h.y_zero, &h.lo, &h.hi);
  h.K = (int32_t)K, h.C = (int32_t)g->nodes[nx->in[0]].shape[1];
  h.KH = (int32_t)wq->shape[2], h.KW = (int32_t)wq->shape[3];
  buf = (unsigned char *)fuse__alloc(&p->alloc, (bytes + 3) & ~(size_t)3, FUSE__ALIGN);
  if (!buf) return 0;
  memset(buf, 0, (bytes + 3) & ~(size_t)3);
  memcpy(buf, &h, sizeof h);
  bias = (int32_t *)(void *)(buf + sizeof h);
  scale = (float *)(void *)(bias + K);
  for (k = 0; k < K; k++) {
    float w_scale = fuse__const_at(ws, wscales > 1 ? k : 0), unit = x_scale * w_scale;
    scale[k] = unit / y_scale;
    bias[k] = 0;
    if (q->bias != FUSE_NONE) {
      const fuse__node *nb = &g->nodes[q->bias];
      const fuse__node *src = nb->op == FUSE__OP_RESHAPE ? &g->nodes[nb->in[0]] : nb;
      double b;
      if (src->op == FUSE__OP_DEQUANTIZE) { /* int32 units of its own scale */
        const fuse__node *bs = &g->nodes[src->in[1]];
        float b_scale = fuse__const_at(bs, fuse__numel(bs->rank, bs->shape) > 1 ? k : 0);
        double bz = src->num_in > 2 ? fuse__const_value(&g->nodes[src->in[2]],
                                                        fuse__numel(bs->rank, bs->shape) > 1 ? k : 0)
                                    : 0;
        double units = fuse__const_value(&g->nodes[src->in[0]], k) - bz;
        b = b_scale == unit ? units : fuse__round_half_even((float)(units * b_scale / unit));
      } else {
        b = fuse__round_half_even(fuse__const_at(src, k) / unit);
      }
      bias[k] = b > 2147483647.0 ? 2147483647 : b < -2147483648.0 ? (-2147483647 - 1) : (int32_t)b;
    }
  }
  for (i = 0; i < K * per; i++) ((int8_t *)(scale + K))[i] = ((const int8_t *)wq->data)[i];
  st->packed = (float *)(void *)buf;
  st->packed_floats = ((bytes + 3) & ~(size_t)3) / 4;
  p->weights_size += st->packed_floats * 4;
  return 1;
}
