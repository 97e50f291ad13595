/* -------------------------------------------------------- quantized models' passes -- */
/* What fuse_optimize does to the quantize / dequantize ops of a QDQ model (ONNX Runtime's
   quantize_static, PyTorch fake-quant exports). */

/* quantize(const, const scale, const zero point) -> a constant of the quantized type (the
   weights of a PyTorch fake-quant export: float32 weights quantized and dequantized in the
   graph), computed as the kernel computes it (run/reference_quant.c). Value ids stay valid. */
static fuse_result fuse__fold_quantized_constants(fuse_graph *g) {
  int v, k;
  for (v = 0; v < g->num_nodes; v++) {
    fuse__node *n = &g->nodes[v];
    const fuse__node *x, *s, *z;
    int64_t count, channels, inner, i;
    double lo, hi;
    void *data;
    if (n->op != FUSE__OP_QUANTIZE || n->composite >= 0) continue;
    for (k = 0; k < n->num_in && g->nodes[n->in[k]].op == FUSE__OP_CONST &&
                (g->nodes[n->in[k]].data || g->nodes[n->in[k]].raw);
         k++) {
    }
    if (k < n->num_in) continue;
    x = &g->nodes[n->in[0]], s = &g->nodes[n->in[1]];
    z = n->num_in > 2 ? &g->nodes[n->in[2]] : NULL;
    count = fuse__numel(n->rank, n->shape);
    channels = fuse__numel(s->rank, s->shape);
    inner = channels > 1 ? fuse__numel(n->rank - n->a.quant.axis - 1, n->shape + n->a.quant.axis + 1)
                         : count;
    fuse__type_range(n->type, &lo, &hi);
    data = fuse__alloc(&g->alloc, (size_t)count * fuse__type_size(n->type), FUSE__ALIGN);
    if (!data) return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "optimize: out of memory");
    for (i = 0; i < count; i++) {
      int64_t c = channels > 1 ? (i / inner) % channels : 0;
      double zc = z ? fuse__const_value(z, c) : 0;
      double q = (double)fuse__round_half_even(fuse__const_at(x, i) / fuse__const_at(s, c)) + zc;
      if (q != q) q = zc;
      q = q < lo ? lo : q > hi ? hi : q;
      if (n->type == FUSE_INT32) ((int32_t *)data)[i] = (int32_t)q;
      else if (n->type == FUSE_INT8) ((int8_t *)data)[i] = (int8_t)q;
      else ((uint8_t *)data)[i] = (uint8_t)q;
    }
    fuse__become_constant(g, v, data, NULL, x->name, ".quantized");
  }
  return FUSE_OK;
}

/* dequantize(const, const scale, const zero point) -> a float32 constant of the same values
   (a weight stored as int8 with its scales), so that the float kernels pack it as any
   weight. Value ids stay valid. */
static fuse_result fuse__fold_dequantized_constants(fuse_graph *g) {
  int v, k;
  for (v = 0; v < g->num_nodes; v++) {
    fuse__node *n = &g->nodes[v];
    const fuse__node *q, *s, *z;
    int64_t count, channels, inner, i;
    float *data;
    if (n->op != FUSE__OP_DEQUANTIZE || n->composite >= 0) continue;
    for (k = 0; k < n->num_in && g->nodes[n->in[k]].op == FUSE__OP_CONST &&
                (g->nodes[n->in[k]].data || g->nodes[n->in[k]].raw);
         k++) {
    }
    if (k < n->num_in) continue;
    q = &g->nodes[n->in[0]], s = &g->nodes[n->in[1]];
    z = n->num_in > 2 ? &g->nodes[n->in[2]] : NULL;
    count = fuse__numel(n->rank, n->shape);
    channels = fuse__numel(s->rank, s->shape);
    inner = channels > 1 ? fuse__numel(n->rank - n->a.quant.axis - 1, n->shape + n->a.quant.axis + 1)
                         : count;
    data = (float *)fuse__alloc(&g->alloc, (size_t)count * sizeof(float), FUSE__ALIGN);
    if (!data) return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "optimize: out of memory");
    for (i = 0; i < count; i++) { /* as the kernel (run/reference_quant.c) computes it */
      int64_t c = channels > 1 ? (i / inner) % channels : 0;
      int64_t zc = z ? (int64_t)fuse__const_value(z, c) : 0;
      data[i] = (float)((int64_t)fuse__const_value(q, i) - zc) * fuse__const_at(s, c);
    }
    fuse__become_constant(g, v, data, NULL, q->name, ".dequantized");
  }
  return FUSE_OK;
}

/* -------------------------------------------------------- integer composites -- */
/* The patterns a QDQ export writes around the ops that run in integers, each one step
   (plan/quant_pack.c packs it, run/quant_run.c runs it). Every scale and zero point is a
   constant and per tensor (but a conv's weights, per output channel); the dequantizes of the
   inputs stay outside the composite (other ops may read them), the step reads their uint8 /
   int8 tensors:

   fuse.qconv2d   xq -> dequantize -> conv2d(, dequantize(int8 weights, zero points 0))
                  -> add(bias)? -> relu / clip? -> quantize. The bias a float constant or
                  the dequantize of an int32 one, [K] reshaped to [1, K, 1, 1]. xq uint8.
   fuse.qmatmul   xq -> dequantize -> matmul(, W) -> add(bias)? -> relu / clip? -> quantize,
                  W the dequantize of 2-D int8 weights [K][N] (zero points 0, per tensor or per
                  column: axis 1) or the transpose of one of [N][K] (per row: axis 0; a Gemm's
                  transB), the bias [N] (or [1, N], ...) as qconv2d's; xq uint8 of any rank,
                  its rows the pixels of a 1x1 qconv2d.
   fuse.qadd      quantize(f(add(dequantize(aq), dequantize(bq)))), a and b of one shape, f
                  up to 4 element-wise ops of one value (relu, clip, ...): as the float ops
                  compute it, fused.
   fuse.qlut      quantize(f(dequantize(xq))), f up to 4 such ops or none (a requantization):
                  a table of the 256 results.
   fuse.qmax_pool2d  quantize(max_pool2d(dequantize(xq))): the pool on the integers (the
                  dequantize is monotonic), then the table of quantize(dequantize(v)).
   fuse.qglobal_avg_pool2d  quantize(global_avg_pool2d(dequantize(xq))), xq uint8 or int8 of
                  rank 4 and the quantize's type: ONNX Runtime's QLinearGlobalAveragePool, int32
                  sums requantized (fuse__qgap_scale), where its range check passes. */
enum { FUSE__Q_CONV = 1, FUSE__Q_ADD, FUSE__Q_LUT, FUSE__Q_MAXPOOL, FUSE__Q_MATMUL, FUSE__Q_GAP };
#define FUSE__Q_CHAIN 4
typedef struct fuse__qparts {
  int kind;                            /* FUSE__Q_* */
  fuse_value x_dq, y_dq;               /* the dequantized inputs (y: qadd's second) */
  fuse_value w_dq, conv, bias, act;    /* qconv2d; bias FUSE_NONE when none, act the relu / clip */
  fuse_value matmul, w_tr;             /* qmatmul (its w_dq, bias, act as qconv2d's); w_tr the
                                          transpose of w_dq it reads, or FUSE_NONE */
  fuse_value pool, add;                /* qmax_pool2d's and qglobal_avg_pool2d's pool, qadd's add */
  fuse_value chain[FUSE__Q_CHAIN];     /* qadd's, qlut's element-wise ops, first applied first */
  int num_chain;
  fuse_value q;                        /* the quantize: the root */
  fuse_value members[16];
  int num_members;
} fuse__qparts;

/* Whether v is a constant with its values (not a bare parse placeholder). */
static int fuse__has_values(const fuse_graph *g, fuse_value v) {
  return v != FUSE_NONE && g->nodes[v].op == FUSE__OP_CONST && (g->nodes[v].data || g->nodes[v].raw);
}

/* A dequantize / quantize node whose scale and zero point are constants, one value each
   unless `per_channel` (then its zero points must be 0). */
static int fuse__quant_constant_params(const fuse_graph *g, fuse_value v, int per_channel) {
  const fuse__node *n = &g->nodes[v];
  int64_t k, count;
  if ((n->op != FUSE__OP_QUANTIZE && n->op != FUSE__OP_DEQUANTIZE) || !fuse__has_values(g, n->in[1]))
    return 0;
  if (!per_channel && fuse__numel(g->nodes[n->in[1]].rank, g->nodes[n->in[1]].shape) != 1) return 0;
  if (n->num_in < 3) return 1;
  if (!fuse__has_values(g, n->in[2])) return 0;
  count = fuse__numel(g->nodes[n->in[2]].rank, g->nodes[n->in[2]].shape);
  for (k = 0; per_channel && k < count; k++)
    if (fuse__const_value(&g->nodes[n->in[2]], k) != 0) return 0;
  return 1;
}

/* A dequantize of a uint8 / int8 tensor (uint8 only when `u8`) with per-tensor constants. */
static int fuse__q_input(const fuse_graph *g, fuse_value v, int u8) {
  const fuse__node *n = &g->nodes[v];
  int t = n->op == FUSE__OP_DEQUANTIZE ? g->nodes[n->in[0]].type : -1;
  return (t == FUSE_UINT8 || (t == FUSE_INT8 && !u8)) && fuse__quant_constant_params(g, v, 0);
}

/* quantize(reshape / flatten(dequantize(xq))) with the quantize's type, scale and zero point
   the dequantize's (per tensor) becomes reshape(xq), in place (the value id stays): the same
   integers (|q - z| <= 255 times a float scale, divided by it, rounds back to q - z exactly),
   as ONNX Runtime drops such a pair around a Flatten or Reshape. A QDQ export's pool -> Q -> DQ
   -> Flatten -> Q -> DQ -> Gemm then keeps its integers from the pool to the Gemm. */
static void fuse__fold_requantized_views(fuse_graph *g) {
  int v;
  for (v = 0; v < g->num_nodes; v++) {
    fuse__node *n = &g->nodes[v];
    const fuse__node *view, *dq;
    fuse_value xq;
    double zq, zd;
    if (n->op != FUSE__OP_QUANTIZE || n->composite >= 0 || !fuse__quant_constant_params(g, v, 0))
      continue;
    view = &g->nodes[n->in[0]];
    if ((view->op != FUSE__OP_RESHAPE && view->op != FUSE__OP_FLATTEN) ||
        g->nodes[view->in[0]].op != FUSE__OP_DEQUANTIZE || !fuse__quant_constant_params(g, view->in[0], 0))
      continue;
    dq = &g->nodes[view->in[0]];
    xq = dq->in[0];
    zq = n->num_in > 2 ? fuse__const_value(&g->nodes[n->in[2]], 0) : 0;
    zd = dq->num_in > 2 ? fuse__const_value(&g->nodes[dq->in[2]], 0) : 0;
    if (g->nodes[xq].type != n->type || zq != zd ||
        fuse__const_at(&g->nodes[n->in[1]], 0) != fuse__const_at(&g->nodes[dq->in[1]], 0))
      continue;
    n->op = FUSE__OP_RESHAPE;
    n->in[0] = xq;
    n->num_in = 1;
    memset(&n->a, 0, sizeof n->a);
  }
}

/* Whether val is read by `user` alone (not an output) and sits in composite member_of. */
static int fuse__q_only_into(const fuse_graph *g, const fuse__users *u, fuse_value val,
                             fuse_value user, int member_of) {
  return !fuse__is_output(g, val) && u->first[val + 1] - u->first[val] == 1 &&
         u->list[u->first[val]] == user && g->nodes[val].composite == member_of;
}

/* Walks back from v through element-wise ops of one value (each read only by the one after
   it), collecting them in m->chain (applied first first); returns where the walk stopped. */
static fuse_value fuse__q_chain(const fuse_graph *g, const fuse__users *u, fuse_value v,
                                fuse_value user, int member_of, fuse__qparts *m) {
  fuse_post_op op;
  fuse_value next, rev[FUSE__Q_CHAIN];
  int n = 0, k;
  while (n < FUSE__Q_CHAIN && fuse__unary_post(g, v, &op, &next) && !fuse__post_has_tensor(op.kind) &&
         op.kind != FUSE__POST_ERF && fuse__q_only_into(g, u, v, user, member_of)) {
    rev[n++] = v;
    user = v;
    v = next;
  }
  for (k = 0; k < n; k++) m->chain[k] = rev[n - 1 - k];
  m->num_chain = n;
  return v;
}

/* The source of a qconv2d's / qmatmul's bias m->bias (its shape checked, added by `add`): a
   constant, or the dequantize of an int32 one (per tensor or per output channel), maybe
   reshaped. Its nodes join the members. */
static int fuse__qbias_at(const fuse_graph *g, const fuse__users *u, fuse_value add, int member_of,
                          fuse__qparts *m) {
  const fuse__node *nb = &g->nodes[m->bias];
  fuse_value src = m->bias;
  if (nb->op == FUSE__OP_RESHAPE) {
    if (!fuse__q_only_into(g, u, m->bias, add, member_of)) return 0;
    src = nb->in[0];
    m->members[m->num_members++] = m->bias;
  }
  if (g->nodes[src].op == FUSE__OP_DEQUANTIZE) {
    if (!fuse__has_values(g, g->nodes[src].in[0]) || !fuse__quant_constant_params(g, src, 1) ||
        !fuse__q_only_into(g, u, src, src == m->bias ? add : m->bias, member_of))
      return 0;
    m->members[m->num_members++] = src;
    return 1;
  }
  return fuse__has_values(g, src);
}

/* The conv2d part of fuse.qconv2d at v (read by `user`). */
static int fuse__qconv_at(const fuse_graph *g, const fuse__users *u, fuse_value v,
                          fuse_value user, int member_of, fuse__qparts *m) {
  const fuse__node *nc, *nw;
  int64_t K;
  fuse_value add = FUSE_NONE;
  if (g->nodes[v].op == FUSE__OP_ADD && fuse__q_only_into(g, u, v, user, member_of)) {
    fuse_value a = g->nodes[v].in[0], b = g->nodes[v].in[1];
    if (g->nodes[a].op != FUSE__OP_CONV2D) a = g->nodes[v].in[1], b = g->nodes[v].in[0];
    add = v, m->bias = b, user = v, v = a;
    m->members[m->num_members++] = add;
  }
  if (g->nodes[v].op != FUSE__OP_CONV2D || !fuse__q_only_into(g, u, v, user, member_of)) return 0;
  m->conv = v;
  nc = &g->nodes[v];
  if (nc->rank != 4) return 0; /* (a 1-D conv2d stays in float) */
  m->x_dq = nc->in[0], m->w_dq = nc->in[1];
  nw = &g->nodes[m->w_dq];
  if (!fuse__q_input(g, m->x_dq, 1) || nw->op != FUSE__OP_DEQUANTIZE ||
      !fuse__has_values(g, nw->in[0]) || g->nodes[nw->in[0]].type != FUSE_INT8 ||
      !g->nodes[nw->in[0]].data || !fuse__quant_constant_params(g, m->w_dq, 1) ||
      (fuse__numel(g->nodes[nw->in[1]].rank, g->nodes[nw->in[1]].shape) > 1 && nw->a.quant.axis != 0) ||
      !fuse__q_only_into(g, u, m->w_dq, m->conv, member_of))
    return 0;
  m->members[m->num_members++] = m->w_dq;
  m->members[m->num_members++] = m->conv;
  K = nc->shape[1];
  if (add != FUSE_NONE) { /* a [1, K, 1, 1] / [K, 1, 1] constant, or such a reshape of a
                             constant or of the dequantize of an int32 one */
    const fuse__node *nb = &g->nodes[m->bias];
    int d;
    if (fuse__numel(nb->rank, nb->shape) != K || nb->rank < 3 || nb->rank > 4 || nb->shape[nb->rank - 3] != K)
      return 0;
    for (d = 0; d < nb->rank; d++)
      if (d != nb->rank - 3 && nb->shape[d] != 1) return 0;
    return fuse__qbias_at(g, u, add, member_of, m);
  }
  return 1;
}

/* The matmul part of fuse.qmatmul at v (read by `user`). */
static int fuse__qmatmul_at(const fuse_graph *g, const fuse__users *u, fuse_value v,
                            fuse_value user, int member_of, fuse__qparts *m) {
  const fuse__node *nm, *nw;
  fuse_value add = FUSE_NONE, w;
  int64_t N;
  if (g->nodes[v].op == FUSE__OP_ADD && fuse__q_only_into(g, u, v, user, member_of)) {
    fuse_value a = g->nodes[v].in[0], b = g->nodes[v].in[1];
    if (g->nodes[a].op != FUSE__OP_MATMUL) a = g->nodes[v].in[1], b = g->nodes[v].in[0];
    add = v, m->bias = b, user = v, v = a;
    m->members[m->num_members++] = add;
  }
  if (g->nodes[v].op != FUSE__OP_MATMUL || !fuse__q_only_into(g, u, v, user, member_of)) return 0;
  m->matmul = v;
  nm = &g->nodes[v];
  m->x_dq = nm->in[0], w = nm->in[1];
  if (!fuse__q_input(g, m->x_dq, 1) || g->nodes[m->x_dq].rank < 2 || g->nodes[w].rank != 2)
    return 0;
  if (g->nodes[w].op == FUSE__OP_TRANSPOSE) { /* (a transpose of 2-D: [1, 0] or no change) */
    if (g->nodes[w].a.perm[0] != 1 || !fuse__q_only_into(g, u, w, v, member_of)) return 0;
    m->w_tr = w;
    w = g->nodes[w].in[0];
    m->members[m->num_members++] = m->w_tr;
  }
  m->w_dq = w;
  nw = &g->nodes[w];
  if (nw->op != FUSE__OP_DEQUANTIZE || !fuse__has_values(g, nw->in[0]) ||
      g->nodes[nw->in[0]].type != FUSE_INT8 || !g->nodes[nw->in[0]].data ||
      !fuse__quant_constant_params(g, w, 1) ||
      (fuse__numel(g->nodes[nw->in[1]].rank, g->nodes[nw->in[1]].shape) > 1 &&
       nw->a.quant.axis != (m->w_tr != FUSE_NONE ? 0 : 1)) ||
      !fuse__q_only_into(g, u, w, m->w_tr != FUSE_NONE ? m->w_tr : v, member_of))
    return 0;
  m->members[m->num_members++] = m->w_dq;
  m->members[m->num_members++] = m->matmul;
  N = nm->shape[nm->rank - 1];
  if (add != FUSE_NONE) { /* [N], [1, N], ...: no more dimensions than the product's */
    const fuse__node *nb = &g->nodes[m->bias];
    if (fuse__numel(nb->rank, nb->shape) != N || nb->rank < 1 || nb->rank > nm->rank ||
        nb->shape[nb->rank - 1] != N || !fuse__qbias_at(g, u, add, member_of, m))
      return 0;
  }
  return 1;
}

/* Whether global_avg_pool2d v, read by quantize q, runs as a qglobal_avg_pool2d: the
   dequantize of a uint8 / int8 tensor of rank 4 with per-tensor constants, quantized to the
   same type, scales that ONNX Runtime's integer pool takes (else it fails when it runs). */
static int fuse__qgap_fits(const fuse_graph *g, fuse_value v, fuse_value q) {
  const fuse__node *n = &g->nodes[v], *dq;
  if (n->op != FUSE__OP_GLOBAL_AVG_POOL2D) return 0;
  dq = &g->nodes[n->in[0]];
  if (dq->rank != 4 || !fuse__q_input(g, n->in[0], 0) ||
      g->nodes[dq->in[0]].type != g->nodes[q].type)
    return 0;
  return fuse__qgap_in_range(fuse__const_at(&g->nodes[dq->in[1]], 0),
                             fuse__const_at(&g->nodes[g->nodes[q].in[1]], 0),
                             dq->shape[2] * dq->shape[3]);
}

/* The parts of an integer composite rooted at quantize q (its members already in composite
   `member_of`, or -1 before the pass makes it). 0: no pattern above. */
static int fuse__qparts_match(const fuse_graph *g, const fuse__users *u, fuse_value q,
                              int member_of, fuse__qparts *m) {
  const fuse__node *nq = &g->nodes[q];
  fuse_value v, first;
  fuse__qparts c; /* (the conv's or matmul's try, kept when it matches) */
  int i, j, kind;
  memset(m, 0, sizeof *m);
  m->x_dq = m->y_dq = m->w_dq = m->conv = m->bias = m->act = m->pool = m->add = FUSE_NONE;
  m->matmul = m->w_tr = FUSE_NONE;
  m->q = q;
  if (nq->op != FUSE__OP_QUANTIZE || nq->composite != member_of || nq->type == FUSE_INT32 ||
      !fuse__quant_constant_params(g, q, 0))
    return 0;
  v = fuse__q_chain(g, u, nq->in[0], q, member_of, m);
  first = m->num_chain ? m->chain[0] : q;
  c = *m;
  kind = 0;
  if (m->num_chain <= 1 && fuse__qconv_at(g, u, v, first, member_of, &c)) kind = FUSE__Q_CONV;
  else if (m->num_chain <= 1 && (c = *m, fuse__qmatmul_at(g, u, v, first, member_of, &c)))
    kind = FUSE__Q_MATMUL;
  if (kind) {
    const fuse__node *a = m->num_chain ? &g->nodes[m->chain[0]] : NULL;
    if (a && a->op != FUSE__OP_RELU && a->op != FUSE__OP_CLIP) return 0; /* (a clamp only) */
    *m = c;
    m->kind = kind;
    m->act = m->num_chain ? m->chain[0] : FUSE_NONE;
  } else if (g->nodes[v].op == FUSE__OP_ADD && fuse__q_only_into(g, u, v, first, member_of) &&
             fuse__q_input(g, g->nodes[v].in[0], 0) && fuse__q_input(g, g->nodes[v].in[1], 0) &&
             g->nodes[g->nodes[v].in[0]].rank == nq->rank && g->nodes[g->nodes[v].in[1]].rank == nq->rank &&
             memcmp(g->nodes[g->nodes[v].in[0]].shape, nq->shape, (size_t)nq->rank * 8) == 0 &&
             memcmp(g->nodes[g->nodes[v].in[1]].shape, nq->shape, (size_t)nq->rank * 8) == 0) {
    m->kind = FUSE__Q_ADD;
    m->add = v, m->x_dq = g->nodes[v].in[0], m->y_dq = g->nodes[v].in[1];
    m->members[m->num_members++] = v;
  } else if (m->num_chain == 0 && g->nodes[v].op == FUSE__OP_MAX_POOL2D && g->nodes[v].rank == 4 &&
             fuse__q_only_into(g, u, v, q, member_of) && fuse__q_input(g, g->nodes[v].in[0], 0)) {
    m->kind = FUSE__Q_MAXPOOL;
    m->pool = v, m->x_dq = g->nodes[v].in[0];
    m->members[m->num_members++] = v;
  } else if (m->num_chain == 0 && fuse__q_only_into(g, u, v, q, member_of) && fuse__qgap_fits(g, v, q)) {
    m->kind = FUSE__Q_GAP;
    m->pool = v, m->x_dq = g->nodes[v].in[0];
    m->members[m->num_members++] = v;
  } else if (fuse__q_input(g, v, 0)) {
    m->kind = FUSE__Q_LUT;
    m->x_dq = v;
  } else {
    return 0;
  }
  for (i = 0; i < m->num_chain; i++) m->members[m->num_members++] = m->chain[i];
  for (i = 1; i < m->num_members; i++) /* members in id order, the root last */
    for (j = i; j > 0 && m->members[j - 1] > m->members[j]; j--) {
      fuse_value t = m->members[j];
      m->members[j] = m->members[j - 1], m->members[j - 1] = t;
    }
  m->members[m->num_members++] = q;
  return 1;
}

static const char *const fuse__qnames[] = {"", "fuse.qconv2d", "fuse.qadd", "fuse.qlut",
                                           "fuse.qmax_pool2d", "fuse.qmatmul",
                                           "fuse.qglobal_avg_pool2d"};

/* The integer composite kind a composite's name says (0: not one). */
static int fuse__qkind(const char *name) {
  int k;
  for (k = FUSE__Q_CONV; k <= FUSE__Q_GAP; k++)
    if (strcmp(name, fuse__qnames[k]) == 0) return k;
  return 0;
}

/* Makes a composite of every match of the patterns above (before the dequantized weights are
   folded to float: qconv2d keeps them as int8). */
static fuse_result fuse__quant_composites(fuse_graph *g) {
  fuse__users users;
  fuse__qparts m;
  int v;
  if (!fuse__users_build(g, &users))
    return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "optimize: out of memory");
  for (v = 0; v < g->num_nodes; v++)
    if (fuse__qparts_match(g, &users, v, -1, &m) &&
        !fuse__composite_add(g, fuse__qnames[m.kind], fuse__qnames[m.kind] + 5, "fuse", 1,
                             m.members, m.num_members)) {
      fuse__users_free(g, &users);
      return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "optimize: out of memory");
    }
  fuse__users_free(g, &users);
  return FUSE_OK;
}
