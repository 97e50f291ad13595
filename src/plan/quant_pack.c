/* ---------------------------------------------------- packing the integer steps -- */
/* An integer composite's constants (passes/quant.c) as its step's packed bytes (fuse__qhead,
   plan.c). qconv2d (and qmatmul, as a 1x1 one): the zero points and clamp, the bias in int32
   units of x_scale * w_scale[k] (an int32 bias dequantized with that scale is taken as it is;
   a float bias is rounded to those units, as ONNX Runtime's quantizer rounds it), the
   requantization multipliers, the int8 weights. qadd: the scales and zero points and the
   element-wise ops. qlut, qmax_pool2d: the table of outputs. qglobal_avg_pool2d: the zero
   points and scales. */

/* F(3x3) on images of 400 output pixels or more (56x56, 28x28; not 14x14 or 7x7): its weights
   are 50 / 9 of the direct ones' bytes, read once per block of tiles, and a 14x14 image has only
   25 tiles to share them. There its products were a little faster in isolation but a plan's
   weights grew by 3.3 MB a 256-channel conv, past the L3 cache in resnet50 (whose 14x14 convs
   then gained nothing) and pushing the direct steps' weights out of it. */
#define FUSE__QWINO3_NPIX 400

/* The layout a plan for `isa` packs a conv of K outputs, C inputs, kernel KH x KW, attributes
   a, npix output pixels an image in: depthwise on its own kernel; Winograd F(3x3) where it
   fits (fuse__qwino3_fits: AVX-512 VNNI) and the image has FUSE__QWINO3_NPIX pixels or more;
   groups 1 in quads where this
   CPU runs them, Winograd on pairs where it takes AVX2's pairs (fuse__qwino_fits) and the
   image has 100 pixels or more, pairs elsewhere (scalar, NEON, a plan saved for another
   machine); the direct form for the reference kernels and other grouped convs. (On fewer
   pixels Winograd's weights, 16 / 9 of the direct ones', are read for too few tiles:
   resnet18's 7x7 convs of 512 channels took 1.40 ms against the direct tile's 1.21.) */
static int fuse__qconv_layout(fuse_isa isa, int vnni, int64_t K, int64_t C, int64_t KH, int64_t KW,
                              const fuse_conv2d_attrs *a, int64_t npix, int depthwise,
                              int save_only) {
  int nb, mr;
  if (isa == FUSE_ISA_AUTO) return FUSE__QL_DIRECT;
  if (depthwise) return FUSE__QL_DW;
  if (a->groups != 1) return FUSE__QL_DIRECT;
  if (!save_only && npix >= FUSE__QWINO3_NPIX && fuse__qwino3_fits(isa, vnni, C, KH, KW, a))
    return FUSE__QL_WINO3;
  if (!save_only && fuse__qtile_plan(isa, FUSE__QL_QUADS, vnni, K, &nb, &mr)) {
#ifdef FUSE__HAVE_QWINDOW
    if (fuse__qconv_window(C, KH, KW, a->dilation[1])) return FUSE__QL_WINDOW;
#endif
    return FUSE__QL_QUADS;
  }
  if (!save_only && fuse__qtile_plan(isa, FUSE__QL_SQUADS, vnni, K, &nb, &mr)) return FUSE__QL_SQUADS;
  if (!save_only && npix >= 100 && fuse__qwino_fits(isa, vnni, C, K, KH, KW, a)) return FUSE__QL_WINO;
  return FUSE__QL_PAIRS;
}

/* fuse__round_half_even in double (|v| < 2^52). */
static double fuse__round_half_even_d(double v) {
  double r = floor(v), d = v - r;
  if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
  return r;
}

/* quantize(v) with the scale and zero point of quantize node q, as the reference kernel
   computes it (run/reference_quant.c). */
static int32_t fuse__quantize_value(const fuse_graph *g, const fuse__node *q, float v) {
  double lo, hi, z = q->num_in > 2 ? fuse__const_value(&g->nodes[q->in[2]], 0) : 0;
  double r = (double)fuse__round_half_even(v / fuse__const_at(&g->nodes[q->in[1]], 0)) + z;
  fuse__type_range(q->type, &lo, &hi);
  if (r != r) r = z;
  return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}

/* The output clamp of quantize(act(v)): the quantized type's range, narrowed by a relu / clip
   to the quantized values of its bounds (quantization is monotonic, so quantizing the clamped
   value is clamping the quantized one). */
static void fuse__qconv_clamp(const fuse_graph *g, const fuse__qparts *q, int32_t *lo, int32_t *hi) {
  const fuse__node *act = q->act != FUSE_NONE ? &g->nodes[q->act] : NULL, *nq = &g->nodes[q->q];
  double tlo, thi;
  fuse__type_range(nq->type, &tlo, &thi);
  *lo = (int32_t)tlo, *hi = (int32_t)thi;
  if (!act) return;
  *lo = fuse__quantize_value(g, nq, act->op == FUSE__OP_RELU ? 0.0f : act->a.clip.lo);
  if (act->op == FUSE__OP_CLIP) *hi = fuse__quantize_value(g, nq, act->a.clip.hi);
}

/* The element-wise ops of q's chain as post-ops (fuse__unary_post). */
static int fuse__qchain_posts(const fuse_graph *g, const fuse__qparts *q, fuse_post_op *post) {
  fuse_value next;
  int k;
  for (k = 0; k < q->num_chain; k++) fuse__unary_post(g, q->chain[k], &post[k], &next);
  return q->num_chain;
}

/* The weights w [K][C][3][3] int8 packed for Winograd (kernels/qconv.c) into dst (zeroed, as many int16 as
   fuse__qconv_weight_bytes says): [K / 16][16 positions][C / 2][16][2], 2G g 2G' per output
   and input channel, 2G = [2 0 0; 1 1 1; 1 -1 1; 0 0 2] (|u| <= 9 * 128). */
static void fuse__qwino_pack(const int8_t *w, int64_t K, int64_t C, int16_t *dst) {
  int64_t csteps = (C + 1) / 2, k, c;
  int i;
  for (k = 0; k < K; k++)
    for (c = 0; c < C; c++) {
      const int8_t *g = w + (k * C + c) * 9;
      int32_t t[12], u[16];
      for (i = 0; i < 3; i++) { /* 2G g, column i */
        t[i] = 2 * g[i], t[3 + i] = g[i] + g[3 + i] + g[6 + i];
        t[6 + i] = g[i] - g[3 + i] + g[6 + i], t[9 + i] = 2 * g[6 + i];
      }
      for (i = 0; i < 4; i++) { /* (2G g) 2G', row i */
        u[4 * i] = 2 * t[3 * i], u[4 * i + 1] = t[3 * i] + t[3 * i + 1] + t[3 * i + 2];
        u[4 * i + 2] = t[3 * i] - t[3 * i + 1] + t[3 * i + 2], u[4 * i + 3] = 2 * t[3 * i + 2];
      }
      for (i = 0; i < 16; i++)
        dst[(((k / FUSE__QNR * 16 + i) * csteps + c / 2) * FUSE__QNR + k % FUSE__QNR) * 2 + c % 2] =
            (int16_t)u[i];
    }
}

/* The weights w [K][C][3][3] int8 packed for Winograd F(3x3) (kernels/qwino3.c) into dst
   (zeroed, as many int16 as fuse__qconv_weight_bytes says): [K / 16][25 positions][C / 2][16][2],
   (6G) g (6G)' per output and input channel, 6G = [3 0 0; -3 -3 -3; -1 1 -1; 1 2 4; 0 0 6]
   (|u| <= 81 * 128). */
static void fuse__qwino3_pack(const int8_t *w, int64_t K, int64_t C, int16_t *dst) {
  int64_t csteps = (C + 1) / 2, k, c;
  int i, j;
  for (k = 0; k < K; k++)
    for (c = 0; c < C; c++) {
      const int8_t *g = w + (k * C + c) * 9;
      int32_t t[15], u[25];
      for (j = 0; j < 3; j++) { /* 6G g, column j */
        int32_t a = g[j], b = g[3 + j], e = g[6 + j];
        t[j] = 3 * a, t[3 + j] = -3 * (a + b + e), t[6 + j] = b - a - e;
        t[9 + j] = a + 2 * b + 4 * e, t[12 + j] = 6 * e;
      }
      for (i = 0; i < 5; i++) { /* (6G g) 6G', row i */
        int32_t a = t[3 * i], b = t[3 * i + 1], e = t[3 * i + 2];
        u[5 * i] = 3 * a, u[5 * i + 1] = -3 * (a + b + e), u[5 * i + 2] = b - a - e;
        u[5 * i + 3] = a + 2 * b + 4 * e, u[5 * i + 4] = 6 * e;
      }
      for (i = 0; i < 25; i++)
        dst[(((k / FUSE__QNR * 25 + i) * csteps + c / 2) * FUSE__QNR + k % FUSE__QNR) * 2 + c % 2] =
            (int16_t)u[i];
    }
}

/* The int8 weights wdata [K][Cg][KH][KW], bias and multipliers of a qconv2d (a qmatmul: K
   output columns, Cg = C input ones, KH = KW = 1) after its header h, in h->layout. */
static void fuse__qconv_fill(const fuse_graph *g, const fuse__qparts *q, fuse__qhead *h,
                             const int8_t *wdata, int64_t K, int64_t C, int64_t Cg, int64_t KH,
                             int64_t KW, unsigned char *after) {
  const fuse__node *nw = &g->nodes[q->w_dq];
  const fuse__node *ws = &g->nodes[nw->in[1]], *nx = &g->nodes[q->x_dq], *nq = &g->nodes[q->q];
  int64_t taps = KH * KW, per = Cg * taps, k, Kp;
  int64_t wscales = fuse__numel(ws->rank, ws->shape);
  float x_scale = fuse__const_at(&g->nodes[nx->in[1]], 0), y_scale = fuse__const_at(&g->nodes[nq->in[1]], 0);
  int32_t *bias;
  float *scale;
  fuse__qconv_weight_bytes(h->layout, K, Cg, taps, &Kp);
  bias = (int32_t *)(void *)after;
  scale = (float *)(void *)(bias + Kp);
  h->K = (int32_t)K, h->C = (int32_t)C;
  h->KH = (int32_t)KH, h->KW = (int32_t)KW;
  fuse__qconv_clamp(g, q, &h->lo, &h->hi);
  for (k = 0; k < K; k++) {
    float unit = x_scale * fuse__const_at(ws, wscales > 1 ? k : 0);
    double b = 0;
    scale[k] = unit / y_scale;
    if (q->bias != FUSE_NONE) {
      const fuse__node *nb = &g->nodes[q->bias];
      const fuse__node *src = nb->op == FUSE__OP_RESHAPE ? &g->nodes[nb->in[0]] : nb;
      if (src->op == FUSE__OP_DEQUANTIZE) { /* int32 units of its own scale */
        const fuse__node *bs = &g->nodes[src->in[1]];
        int64_t at = fuse__numel(bs->rank, bs->shape) > 1 ? k : 0;
        float b_scale = fuse__const_at(bs, at);
        double units = fuse__const_value(&g->nodes[src->in[0]], k) -
                       (src->num_in > 2 ? fuse__const_value(&g->nodes[src->in[2]], at) : 0);
        b = b_scale == unit ? units : fuse__round_half_even((float)(units * b_scale / unit));
      } else {
        b = fuse__round_half_even(fuse__const_at(src, k) / unit);
      }
    }
    if (h->layout == FUSE__QL_QUADS || h->layout == FUSE__QL_DW || h->layout == FUSE__QL_SQUADS ||
        h->layout == FUSE__QL_WINO3 || h->layout == FUSE__QL_WINDOW) { /* the zero point's share: x_zero * the weights' sum
                                           (signed quads: x - 128 is summed, x_zero - 128) */
      const int8_t *wk = wdata + k * per;
      int64_t i, sum = 0;
      for (i = 0; i < per; i++) sum += wk[i];
      b -= (double)(h->x_zero - (h->layout == FUSE__QL_SQUADS ? 128 : 0)) * (double)sum;
    }
    bias[k] = b > 2147483647.0 ? 2147483647 : b < -2147483648.0 ? (-2147483647 - 1) : (int32_t)b;
  }
  if (h->layout == FUSE__QL_DIRECT) {
    memcpy(scale + K, wdata, (size_t)(K * per));
  } else if (h->layout == FUSE__QL_DW) { /* [taps][Kp] int16 */
    int16_t *dst = (int16_t *)(void *)(scale + Kp);
    int64_t t;
    for (t = 0; t < taps; t++)
      for (k = 0; k < K; k++) dst[t * Kp + k] = wdata[k * taps + t];
  } else if (h->layout == FUSE__QL_WINO) {
    fuse__qwino_pack(wdata, K, Cg, (int16_t *)(void *)(scale + Kp));
  } else if (h->layout == FUSE__QL_WINO3) {
    fuse__qwino3_pack(wdata, K, Cg, (int16_t *)(void *)(scale + Kp));
#ifdef FUSE__HAVE_QWINDOW
  } else if (h->layout == FUSE__QL_WINDOW) { /* [K / 16][window quads][16][4], the window
                                                [KH][KW][C] flattened */
    int64_t bytes = (taps * Cg + 3) / 4 * 4, b, j;
    int8_t *dst = (int8_t *)(void *)(scale + Kp);
    for (k = 0; k < Kp; k++)
      for (b = 0; b < bytes; b++) {
        int64_t t = b / Cg, c = b % Cg;
        j = (k / FUSE__QNR * (bytes / 4) + b / 4) * FUSE__QNR * 4 + k % FUSE__QNR * 4 + b % 4;
        dst[j] = k < K && b < taps * Cg ? wdata[(k * Cg + c) * taps + t] : 0;
      }
#endif
  } else { /* panels of 16 output channels: [K / 16][taps][C / step][16][step] */
    const int8_t *src = wdata;
    int step = h->layout == FUSE__QL_PAIRS ? 2 : 4;
    int64_t csteps = (Cg + step - 1) / step, t, c, j, e;
    for (k = 0; k < Kp; k += FUSE__QNR)
      for (t = 0; t < taps; t++)
        for (c = 0; c < csteps; c++)
          for (j = 0; j < FUSE__QNR; j++)
            for (e = 0; e < step; e++) {
              int64_t kk = k + j, ch = c * step + e;
              int8_t v = kk < K && ch < Cg ? src[(kk * Cg + ch) * taps + t] : 0;
              int64_t at = (((k / FUSE__QNR * taps + t) * csteps + c) * FUSE__QNR + j) * step + e;
              if (step == 2) ((int16_t *)(void *)(scale + Kp))[at] = v;
              else ((int8_t *)(void *)(scale + Kp))[at] = v;
            }
  }
}

/* Packs integer step st from its composite's parts q; the scratch it needs into *scratch.
   0: out of memory. */
static int fuse__quant_pack(fuse_plan *p, const fuse_graph *g, const fuse__qparts *q,
                            fuse__step *st, size_t *scratch) {
  const fuse__node *nx = &g->nodes[q->x_dq], *nq = &g->nodes[q->q];
  fuse_post_op post[FUSE__Q_CHAIN];
  int num_post = fuse__qchain_posts(g, q, post), k;
  size_t bytes = sizeof(fuse__qhead);
  unsigned char *buf;
  fuse__qhead h;
  memset(&h, 0, sizeof h);
  h.x_zero = nx->num_in > 2 ? (int32_t)fuse__const_value(&g->nodes[nx->in[2]], 0) : 0;
  h.y_zero = nq->num_in > 2 ? (int32_t)fuse__const_value(&g->nodes[nq->in[2]], 0) : 0;
  h.y_signed = nq->type == FUSE_INT8;
  {
    double lo, hi;
    fuse__type_range(nq->type, &lo, &hi);
    h.lo = (int32_t)lo, h.hi = (int32_t)hi;
  }
  if (q->kind == FUSE__Q_CONV) {
    const fuse__node *wq = &g->nodes[g->nodes[q->w_dq].in[0]], *nc = &g->nodes[q->conv];
    const fuse__node *xq = &g->nodes[nx->in[0]];
    int64_t Kp, taps = wq->shape[2] * wq->shape[3];
    size_t need;
    h.depthwise = nc->a.conv.groups == xq->shape[1] && nc->a.conv.groups == wq->shape[0];
    h.layout = fuse__qconv_layout(p->isa, p->vnni, wq->shape[0], wq->shape[1] * nc->a.conv.groups,
                                  wq->shape[2], wq->shape[3], &nc->a.conv,
                                  nc->shape[2] * nc->shape[3], h.depthwise, p->elsewhere);
    bytes += fuse__qconv_weight_bytes(h.layout, wq->shape[0], wq->shape[1], taps, &Kp);
    bytes += (size_t)Kp * 8;
    need = h.layout == FUSE__QL_DIRECT ? 0
                                       : fuse__qconv_scratch(h.layout, xq->shape[0], xq->shape[1],
                                                             xq->shape[2], xq->shape[3],
                                                             nc->a.conv.padding[1] + nc->a.conv.padding[3],
                                                             taps, nc->shape[2] * nc->shape[3], Kp);
    if (need > *scratch) *scratch = need;
  } else if (q->kind == FUSE__Q_MATMUL) { /* a 1x1 qconv2d over the input's rows */
    const fuse__node *nm = &g->nodes[q->matmul], *xq = &g->nodes[nx->in[0]];
    int64_t N = nm->shape[nm->rank - 1], C = xq->shape[xq->rank - 1], Kp;
    size_t need;
    static const fuse_conv2d_attrs unit = {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1};
    h.layout = fuse__qconv_layout(p->isa, p->vnni, N, C, 1, 1, &unit,
                                  fuse__numel(xq->rank, xq->shape) / C, 0, p->elsewhere);
    bytes += fuse__qconv_weight_bytes(h.layout, N, C, 1, &Kp);
    bytes += (size_t)Kp * 8;
    need = h.layout == FUSE__QL_DIRECT
               ? 0
               : fuse__qmatmul_scratch(h.layout, fuse__numel(xq->rank, xq->shape) / C, C, Kp);
    if (need > *scratch) *scratch = need;
  } else if (q->kind == FUSE__Q_ADD) {
    bytes += (size_t)num_post * FUSE__QPOST_WORDS * 4;
  } else if (q->kind != FUSE__Q_GAP) {
    bytes += 256;
  }
  bytes = (bytes + 3) & ~(size_t)3;
  if (!(buf = (unsigned char *)fuse__alloc(&p->alloc, bytes, FUSE__ALIGN))) return 0;
  memset(buf, 0, bytes);
  if (q->kind == FUSE__Q_CONV) {
    const fuse__node *wq = &g->nodes[g->nodes[q->w_dq].in[0]];
    fuse__qconv_fill(g, q, &h, (const int8_t *)wq->data, wq->shape[0], g->nodes[nx->in[0]].shape[1],
                     wq->shape[1], wq->shape[2], wq->shape[3], buf + sizeof h);
  } else if (q->kind == FUSE__Q_MATMUL) { /* the weights as [N][C]: a Gemm's transB ones as they
                                             are, a MatMul's [C][N] transposed */
    const fuse__node *wq = &g->nodes[g->nodes[q->w_dq].in[0]];
    const int8_t *w = (const int8_t *)wq->data;
    int64_t C = q->w_tr != FUSE_NONE ? wq->shape[1] : wq->shape[0];
    int64_t N = q->w_tr != FUSE_NONE ? wq->shape[0] : wq->shape[1], i, j;
    int8_t *t = NULL;
    if (q->w_tr == FUSE_NONE) {
      if (!(t = (int8_t *)fuse__alloc(&p->alloc, (size_t)(N * C), FUSE__ALIGN))) {
        fuse__free(&p->alloc, buf);
        return 0;
      }
      for (i = 0; i < C; i++)
        for (j = 0; j < N; j++) t[j * C + i] = w[i * N + j];
      w = t;
    }
    fuse__qconv_fill(g, q, &h, w, N, C, C, 1, 1, buf + sizeof h);
    if (t) fuse__free(&p->alloc, t);
  } else if (q->kind == FUSE__Q_ADD) { /* v = dequantized a + dequantized b, the ops, quantize */
    const fuse__node *ny = &g->nodes[q->y_dq];
    int32_t *w = (int32_t *)(void *)(buf + sizeof h);
    h.b_zero = ny->num_in > 2 ? (int32_t)fuse__const_value(&g->nodes[ny->in[2]], 0) : 0;
    h.x_scale = fuse__const_at(&g->nodes[nx->in[1]], 0);
    h.b_scale = fuse__const_at(&g->nodes[ny->in[1]], 0);
    h.y_scale = fuse__const_at(&g->nodes[nq->in[1]], 0);
    h.num_post = num_post;
    for (k = 0; k < num_post; k++, w += FUSE__QPOST_WORDS) {
      w[0] = (int32_t)post[k].kind;
      memcpy(w + 1, &post[k].lo, 4), memcpy(w + 2, &post[k].hi, 4);
      memcpy(w + 3, &post[k].alpha, 4), memcpy(w + 4, &post[k].beta, 4);
    }
  } else if (q->kind == FUSE__Q_GAP) { /* the scales; the multiplier is formed when it runs */
    h.C = (int32_t)nx->shape[1];
    h.x_scale = fuse__const_at(&g->nodes[nx->in[1]], 0);
    h.y_scale = fuse__const_at(&g->nodes[nq->in[1]], 0);
  } else { /* qlut, qmax_pool2d: quantize(ops(dequantize(v))) for every v; in double while
              the ops are clamps (as qadd, run/quant_run.c), else in float32 as their steps */
    int in_type = g->nodes[nx->in[0]].type, clamps = 1, j;
    float x_scale = fuse__const_at(&g->nodes[nx->in[1]], 0), y_scale = fuse__const_at(&g->nodes[nq->in[1]], 0);
    for (j = 0; j < num_post; j++) clamps &= post[j].kind == FUSE_POST_CLAMP;
    for (k = 0; k < 256; k++) {
      int32_t v = in_type == FUSE_INT8 ? (int32_t)(int8_t)(uint8_t)k : k, q;
      if (clamps) {
        double d = (double)(v - h.x_zero) * x_scale;
        for (j = 0; j < num_post; j++) d = d < post[j].lo ? post[j].lo : d > post[j].hi ? post[j].hi : d;
        d = fuse__round_half_even_d(d / y_scale) + h.y_zero;
        q = (int32_t)(d < h.lo ? h.lo : d > h.hi ? h.hi : d);
      } else {
        float f = (float)(v - h.x_zero) * x_scale;
        for (j = 0; j < num_post; j++) f = fuse__post_apply_scalar(f, &post[j], NULL, 1, 0.0f);
        q = fuse__quantize_value(g, nq, f);
      }
      buf[sizeof h + (size_t)k] = (unsigned char)(q & 0xff);
    }
  }
  memcpy(buf, &h, sizeof h);
  st->packed = (float *)(void *)buf;
  st->packed_floats = bytes / 4;
  p->weights_size += bytes;
  return 1;
}

/* A qadd whose output only a qlut reads (not a graph output, not a view): the qlut's table
   applied inside the qadd step (its header's K = 1, the table after its ops), the qlut step
   dropped; a residual add and its relu, quantized apart, are then one pass over memory. The
   qadd still rounds to its own output type first (h->y_signed), as the two steps did. Uses
   reads / reader (per tensor) as scratch. 0: out of memory. */
static int fuse__merge_qluts(fuse_plan *p, const int *root, int *needed, int *reads, int *reader) {
  int i, k;
  for (i = 0; i < p->num_tensors; i++) reads[i] = 0;
  for (i = 0; i < p->num_steps; i++)
    for (k = 0; k < p->steps[i].num_in; k++) {
      int t = root[p->operands[p->steps[i].in_first + k]];
      reads[t]++;
      reader[t] = i;
    }
  for (i = 0; i < p->num_steps; i++) {
    fuse__step *a = &p->steps[i], *b;
    fuse__qhead h;
    size_t old;
    unsigned char *buf;
    int t = a->out;
    if (a->op != FUSE__OP_QADD || root[t] != t || reads[t] != 1 ||
        p->tensors[t].kind != FUSE__LOC_WORK)
      continue;
    b = &p->steps[reader[t]];
    if (b->op != FUSE__OP_QLUT || p->tensors[b->out].kind == FUSE__LOC_INPUT) continue;
    old = a->packed_floats * 4;
    if (!(buf = (unsigned char *)fuse__alloc(&p->alloc, old + 256, FUSE__ALIGN))) return 0;
    memcpy(&h, a->packed, sizeof h);
    h.K = 1;
    memcpy(buf, a->packed, old);
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h + (size_t)h.num_post * FUSE__QPOST_WORDS * 4,
           (const unsigned char *)b->packed + sizeof h, 256);
    fuse__free(&p->alloc, a->packed);
    fuse__free(&p->alloc, b->packed);
    p->weights_size += 256 - b->packed_floats * 4;
    a->packed = (float *)(void *)buf;
    a->packed_floats = (old + 256) / 4;
    a->out = b->out;
    b->op = -1;
    needed[t] = 0;
  }
  fuse__drop_steps(p);
  return 1;
}
