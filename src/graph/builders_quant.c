/* ----------------------------------------------------------- quantization ops -- */
/* QuantizeLinear and DequantizeLinear (ONNX opsets 10-19): the float32 tensors of a model meet
   its uint8 / int8 / int32 ones only through these two. A quantized model's other ops take
   and give float32 between a dequantize and a quantize: the passes find the patterns that run
   in integers instead (passes/quant.c). */

/* Element i of constant n as a double, whatever its type. */
static double fuse__const_value(const fuse__node *n, int64_t i) {
  const void *p = n->data;
  switch (n->type) {
  case FUSE_UINT8: return ((const uint8_t *)p)[i];
  case FUSE_INT8: return ((const int8_t *)p)[i];
  case FUSE_INT32: return ((const int32_t *)p)[i];
  default: return fuse__const_at(n, i);
  }
}

/* The lowest and highest value of a quantized type. */
static void fuse__type_range(int type, double *lo, double *hi) {
  *lo = type == FUSE_UINT8 ? 0 : type == FUSE_INT8 ? -128 : -2147483648.0;
  *hi = type == FUSE_UINT8 ? 255 : type == FUSE_INT8 ? 127 : 2147483647.0;
}

/* Checks the scale and zero point of a quantize / dequantize of x (whose type is `qtype` for
   a dequantize) and normalizes axis: both hold one value, or x.shape[axis] values, the zero
   point of type qtype; a constant scale is positive and finite. */
static int fuse__quant_params(fuse_graph *g, int op, fuse_value x, fuse_value scale,
                              fuse_value zero, int qtype, int *axis) {
  const char *who = fuse__ops[op].name;
  const fuse__node *nx = &g->nodes[x], *ns = &g->nodes[scale];
  int64_t count = fuse__numel(ns->rank, ns->shape), k;
  if (ns->type != FUSE_FLOAT32)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: scale %V is %s, not float32", who,
                      scale, fuse__type_name(ns->type)),
           0;
  if (ns->rank > 1)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: scale %V is %S; one value or one per index of an axis",
                      who, scale, ns->rank, ns->shape),
           0;
  if (count > 1) {
    int a = *axis < 0 ? *axis + nx->rank : *axis;
    if (a < 0 || a >= nx->rank)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: axis %d is outside %V %S", who,
                        *axis, x, nx->rank, nx->shape),
             0;
    if (nx->shape[a] != count)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "%s: scale %V %S is per axis %d, but %V %S has %D there", who, scale,
                        ns->rank, ns->shape, a, x, nx->rank, nx->shape, (int64_t)nx->shape[a]),
             0;
    *axis = a;
  } else {
    *axis = 1; /* per tensor: axis plays no part (the text form's default) */
  }
  if (ns->op == FUSE__OP_CONST && (ns->data || ns->raw))
    for (k = 0; k < count; k++) {
      float s = fuse__const_at(ns, k);
      if (!(s > 0 && s < HUGE_VALF))
        return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                          "%s: scale %V[%D] = %f; a scale is positive and finite", who, scale,
                          (int64_t)k, (double)s),
               0;
    }
  if (zero != FUSE_NONE) {
    const fuse__node *nz = &g->nodes[zero];
    if (nz->type != qtype || qtype == FUSE_FLOAT32)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: zero point %V is %s; it must be u8, i8 or i32%s%s", who, zero,
                        fuse__type_name(nz->type), qtype == FUSE_FLOAT32 ? "" : " as ",
                        qtype == FUSE_FLOAT32 ? "" : fuse__type_name(qtype)),
             0;
    if (fuse__numel(nz->rank, nz->shape) != count || nz->rank > 1)
      return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: zero point %V %S does not match scale %V %S",
                        who, zero, nz->rank, nz->shape, scale, ns->rank, ns->shape),
             0;
  }
  return 1;
}

FUSE_API fuse_value fuse_quantize(fuse_graph *g, fuse_value x, fuse_value scale,
                                  fuse_value zero_point, int axis) {
  fuse_value in[3];
  fuse__node *n;
  int type;
  in[0] = x, in[1] = scale, in[2] = zero_point;
  if (!fuse__begin(g, "quantize", zero_point == FUSE_NONE ? 2 : 3, in)) return FUSE_NONE;
  if (g->nodes[x].type != FUSE_FLOAT32)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "quantize: %V is %s, not float32", x,
                      fuse__type_name(g->nodes[x].type));
  type = zero_point == FUSE_NONE ? FUSE_UINT8 : g->nodes[zero_point].type;
  if (!fuse__quant_params(g, FUSE__OP_QUANTIZE, x, scale, zero_point, type, &axis))
    return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_QUANTIZE, zero_point == FUSE_NONE ? 2 : 3, in,
                     g->nodes[x].rank, g->nodes[x].shape);
  if (!n) return FUSE_NONE;
  n->type = type;
  n->a.quant.axis = axis;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_dequantize(fuse_graph *g, fuse_value q, fuse_value scale,
                                    fuse_value zero_point, int axis) {
  fuse_value in[3];
  fuse__node *n;
  in[0] = q, in[1] = scale, in[2] = zero_point;
  if (!fuse__begin(g, "dequantize", zero_point == FUSE_NONE ? 2 : 3, in)) return FUSE_NONE;
  if (g->nodes[q].type == FUSE_FLOAT32)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "dequantize: %V is float32; it takes u8, i8 or i32", q);
  if (!fuse__quant_params(g, FUSE__OP_DEQUANTIZE, q, scale, zero_point, g->nodes[q].type, &axis))
    return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_DEQUANTIZE, zero_point == FUSE_NONE ? 2 : 3, in,
                     g->nodes[q].rank, g->nodes[q].shape);
  if (!n) return FUSE_NONE;
  n->type = FUSE_FLOAT32;
  n->a.quant.axis = axis;
  return fuse__id(g, n);
}
