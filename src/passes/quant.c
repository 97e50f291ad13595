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
