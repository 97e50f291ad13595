/* -------------------------------------------------------- quantized models' passes -- */
/* What fuse_optimize does to the quantize / dequantize ops of a QDQ model (ONNX Runtime's
   quantize_static, PyTorch fake-quant exports). */

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
    fuse__derived_name(g, v, q->name, ".dequantized");
    n = &g->nodes[v];
    fuse__free(&g->alloc, n->in);
    n->in = NULL;
    n->num_in = 0;
    n->op = FUSE__OP_CONST;
    n->data = data;
    memset(&n->a, 0, sizeof n->a);
  }
  return FUSE_OK;
}

/* ------------------------------------------------------------ integer conv2d -- */
/* The pattern a QDQ export writes around a convolution, which runs in integers as one step:

       xq (u8) -> dequantize(x_scale, x_zero) --------\
       wq (i8 constant) -> dequantize(w_scale[K], 0) -> conv2d -> add(bias)? -> relu / clip?
       -> quantize(y_scale, y_zero) -> yq (u8 / i8)

   with the bias a float constant or the dequantize of an int32 one, [K] reshaped to
   [1, K, 1, 1]. Every scale and zero point is a constant; the weights' zero points are 0
   (symmetric int8, what quantizers write). The conv's input dequantize stays outside (other
   ops may read it); the weights' dequantize, the bias's, the conv, the add, the activation and
   the quantize form the composite "fuse.qconv2d", whose step reads xq and writes yq. */
typedef struct fuse__qconv_parts {
  fuse_value x_dq, w_dq, conv, bias, act, q; /* bias: the add's other operand, or FUSE_NONE */
  fuse_value members[8];
  int num_members;
} fuse__qconv_parts;

/* Whether v is a constant with its values (not a bare parse placeholder). */
static int fuse__has_values(const fuse_graph *g, fuse_value v) {
  return v != FUSE_NONE && g->nodes[v].op == FUSE__OP_CONST && (g->nodes[v].data || g->nodes[v].raw);
}

/* A dequantize / quantize node whose scale and zero point are constants (the zero point of a
   weight 0 everywhere when `zero_free`). */
static int fuse__quant_constant_params(const fuse_graph *g, fuse_value v, int zero_free) {
  const fuse__node *n = &g->nodes[v];
  int64_t k, count;
  if ((n->op != FUSE__OP_QUANTIZE && n->op != FUSE__OP_DEQUANTIZE) || !fuse__has_values(g, n->in[1]))
    return 0;
  if (n->num_in < 3) return 1;
  if (!fuse__has_values(g, n->in[2])) return 0;
  count = fuse__numel(g->nodes[n->in[2]].rank, g->nodes[n->in[2]].shape);
  for (k = 0; zero_free && k < count; k++)
    if (fuse__const_value(&g->nodes[n->in[2]], k) != 0) return 0;
  return 1;
}

/* The parts of the pattern above rooted at quantize q (composite members may already carry
   `member_of`, -1 before the pass). 0: not this pattern. */
static int fuse__qconv_match(const fuse_graph *g, const fuse__users *u, fuse_value q,
                             int member_of, fuse__qconv_parts *m) {
  const fuse__node *nq = &g->nodes[q], *nc, *nx, *nw;
  fuse_value v;
  int64_t K;
  memset(m, 0, sizeof *m);
  m->bias = m->act = FUSE_NONE;
  m->q = q;
  if (nq->op != FUSE__OP_QUANTIZE || nq->composite != member_of || nq->type == FUSE_INT32 ||
      !fuse__quant_constant_params(g, q, 0) || fuse__numel(g->nodes[nq->in[1]].rank, g->nodes[nq->in[1]].shape) != 1)
    return 0;
#define FUSE__Q_ONLY_INTO(val, user) \
  (!fuse__is_output(g, val) && u->first[(val) + 1] - u->first[val] == 1 && \
   u->list[u->first[val]] == (user) && g->nodes[val].composite == member_of)
  v = nq->in[0];
  if ((g->nodes[v].op == FUSE__OP_RELU || g->nodes[v].op == FUSE__OP_CLIP) && FUSE__Q_ONLY_INTO(v, q)) {
    m->act = v;
    v = g->nodes[v].in[0];
  }
  if (g->nodes[v].op == FUSE__OP_ADD && FUSE__Q_ONLY_INTO(v, m->act != FUSE_NONE ? m->act : q)) {
    fuse_value add = v, a = g->nodes[v].in[0], b = g->nodes[v].in[1];
    if (g->nodes[a].op != FUSE__OP_CONV2D) a = g->nodes[v].in[1], b = g->nodes[v].in[0];
    if (g->nodes[a].op != FUSE__OP_CONV2D || !FUSE__Q_ONLY_INTO(a, add)) return 0;
    m->bias = b;
    m->members[m->num_members++] = add; /* (put in order below) */
    v = a;
  } else if (g->nodes[v].op != FUSE__OP_CONV2D ||
             !FUSE__Q_ONLY_INTO(v, m->act != FUSE_NONE ? m->act : q)) {
    return 0;
  }
  m->conv = v;
  nc = &g->nodes[v];
  if (nc->rank != 4) return 0; /* (a 1-D conv2d stays in float) */
  m->x_dq = nc->in[0], m->w_dq = nc->in[1];
  nx = &g->nodes[m->x_dq], nw = &g->nodes[m->w_dq];
  if (nx->op != FUSE__OP_DEQUANTIZE || g->nodes[nx->in[0]].type != FUSE_UINT8 ||
      !fuse__quant_constant_params(g, m->x_dq, 0) ||
      fuse__numel(g->nodes[nx->in[1]].rank, g->nodes[nx->in[1]].shape) != 1)
    return 0;
  if (nw->op != FUSE__OP_DEQUANTIZE || !fuse__has_values(g, nw->in[0]) ||
      g->nodes[nw->in[0]].type != FUSE_INT8 || !g->nodes[nw->in[0]].data ||
      !fuse__quant_constant_params(g, m->w_dq, 1) ||
      (fuse__numel(g->nodes[nw->in[1]].rank, g->nodes[nw->in[1]].shape) > 1 && nw->a.quant.axis != 0) ||
      !FUSE__Q_ONLY_INTO(m->w_dq, m->conv))
    return 0;
  K = nc->shape[1];
  if (m->bias != FUSE_NONE) { /* a [1, K, 1, 1] / [K, 1, 1] constant, or such a reshape of the
                                 dequantize of an int32 / the reshape of a constant */
    const fuse__node *nb = &g->nodes[m->bias];
    fuse_value src = m->bias;
    int d;
    if (fuse__numel(nb->rank, nb->shape) != K || nb->rank < 3 || nb->rank > 4 || nb->shape[nb->rank - 3] != K)
      return 0;
    for (d = 0; d < nb->rank; d++)
      if (d != nb->rank - 3 && nb->shape[d] != 1) return 0;
    if (nb->op == FUSE__OP_RESHAPE) {
      if (!FUSE__Q_ONLY_INTO(m->bias, m->members[0])) return 0;
      src = nb->in[0];
    }
    if (g->nodes[src].op == FUSE__OP_DEQUANTIZE) {
      if (!fuse__has_values(g, g->nodes[src].in[0]) || !fuse__quant_constant_params(g, src, 1) ||
          !FUSE__Q_ONLY_INTO(src, src == m->bias ? m->members[0] : m->bias))
        return 0;
      m->members[m->num_members++] = src;
    } else if (!fuse__has_values(g, src)) {
      return 0;
    }
    if (src != m->bias) m->members[m->num_members++] = m->bias;
  }
#undef FUSE__Q_ONLY_INTO
  { /* members in id order, the root last */
    fuse_value list[8];
    int n = 0, i, j;
    list[n++] = m->w_dq;
    for (i = 0; i < m->num_members; i++) list[n++] = m->members[i];
    list[n++] = m->conv;
    if (m->act != FUSE_NONE) list[n++] = m->act;
    for (i = 1; i < n; i++)
      for (j = i; j > 0 && list[j - 1] > list[j]; j--) {
        fuse_value t = list[j];
        list[j] = list[j - 1], list[j - 1] = t;
      }
    list[n++] = q;
    memcpy(m->members, list, (size_t)n * sizeof(fuse_value));
    m->num_members = n;
  }
  return 1;
}

/* Makes a composite "fuse.qconv2d" of every match of the pattern above (before the
   dequantized weights are folded to float: the composite keeps them as int8). */
static fuse_result fuse__quant_composites(fuse_graph *g) {
  fuse__users users;
  fuse__qconv_parts m;
  int v;
  if (!fuse__users_build(g, &users))
    return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "optimize: out of memory");
  for (v = 0; v < g->num_nodes; v++)
    if (fuse__qconv_match(g, &users, v, -1, &m) &&
        !fuse__composite_add(g, "fuse.qconv2d", "fused_qconv2d", "fuse", 1, m.members,
                             m.num_members)) {
      fuse__users_free(g, &users);
      return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "optimize: out of memory");
    }
  fuse__users_free(g, &users);
  return FUSE_OK;
}
