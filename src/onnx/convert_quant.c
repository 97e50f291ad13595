/* ----------------------------------------------------- onnx operators: quantization -- */
/* QuantizeLinear, DequantizeLinear (opsets 10-19), QLinearConv, QLinearMatMul, ConvInteger,
   MatMulInteger, DynamicQuantizeLinear. The uint8 / int8 / int32 tensors meet the float32
   ones only in fuse_quantize and fuse_dequantize: a QLinearConv is dequantize, conv2d,
   quantize, its convolution computed in float32 on the dequantized values (the integer
   kernels that will run such patterns are to come; fuse_optimize already folds dequantized
   constant weights to float32 ones, passes/quant.c). fuse__onnx_convert_quant: as
   fuse__onnx_convert_math. */

/* Optional input k of n whatever its element type (fuse__onnx_typed_value): FUSE_NONE in *v
   when the node leaves it out. 0 on failure (the graph holds the error). */
static int fuse__onnx_quant_in(fuse__onnx *ld, const fuse__onode *n, int k, const char *what,
                               fuse_value *v) {
  *v = FUSE_NONE;
  if (!fuse__onnx_has_in(n, k)) return 1;
  *v = fuse__onnx_typed_value(ld, n->in[k], what);
  return *v != FUSE_NONE;
}

/* The inputs the node must have (their indices below `required`, each named in `names`). */
static int fuse__onnx_quant_required(fuse__onnx *ld, const fuse__onode *n, int required,
                                     const char *names) {
  int k;
  for (k = 0; k < required; k++)
    if (!fuse__onnx_has_in(n, k))
      return fuse__onnx_failf(ld, FUSE_ERROR_PARSE, "input %d is missing (it takes %s)", k,
                              names), 0;
  return 1;
}

static int64_t fuse__onnx_count(const fuse_graph *g, fuse_value v) {
  return fuse__numel(g->nodes[v].rank, g->nodes[v].shape);
}

/* A scale that must hold one value (QLinearConv's x_scale and y_scale: per tensor). */
static int fuse__onnx_one_scale(fuse__onnx *ld, fuse_value s, const char *what) {
  const fuse__node *ns = &ld->g->nodes[s];
  if (fuse__onnx_count(ld->g, s) == 1) return 1;
  return fuse__onnx_failf(ld, FUSE_ERROR_SHAPE, "%s %V is %S; it must hold one value (per tensor)",
                          what, s, ns->rank, ns->shape), 0;
}

/* The values of a float32 constant of the graph (a scale known at load) into out; 0 if v is
   not one. */
static int fuse__onnx_const_scales(const fuse_graph *g, fuse_value v, float *out) {
  const fuse__node *n = &g->nodes[v];
  int64_t i, count = fuse__numel(n->rank, n->shape);
  if (n->op != FUSE__OP_CONST || n->type != FUSE_FLOAT32 || !(n->data || n->raw)) return 0;
  for (i = 0; i < count; i++) out[i] = fuse__const_at(n, i);
  return 1;
}

/* Scale and zero point of one tensor made of the same count, as fuse_quantize and
   fuse_dequantize take them: ONNX lets one be per channel and the other a single value. The
   single one is repeated: a constant as a constant (a constant weight's dequantize then still
   folds, passes/quant.c), a run-time scale by a multiply with ones; a run-time zero point is
   refused. */
static int fuse__onnx_quant_pair(fuse__onnx *ld, fuse_value *scale, fuse_value *zero) {
  fuse_graph *g = ld->g;
  int64_t ns, nz, i;
  if (*zero == FUSE_NONE) return 1;
  ns = fuse__onnx_count(g, *scale), nz = fuse__onnx_count(g, *zero);
  if (ns == nz || g->nodes[*zero].type == FUSE_FLOAT32 || g->nodes[*scale].type != FUSE_FLOAT32)
    return 1; /* the builder says what is wrong, if anything is */
  if (ns == 1 && g->nodes[*scale].rank <= 1 && g->nodes[*zero].rank == 1) {
    fuse_value many = fuse_constant(g, NULL, 1, &nz, NULL);
    float value = 1.0f;
    int known = fuse__onnx_const_scales(g, *scale, &value);
    if (many == FUSE_NONE) return 0;
    for (i = 0; i < nz; i++) g->nodes[many].data[i] = value;
    *scale = known ? many : fuse_mul(g, many, *scale);
    return *scale != FUSE_NONE;
  }
  if (nz == 1 && g->nodes[*zero].rank <= 1 && g->nodes[*scale].rank == 1) {
    const fuse__node *z = &g->nodes[*zero];
    int type = z->type;
    fuse_value many;
    int64_t value;
    if (z->op != FUSE__OP_CONST || !z->data)
      return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                              "zero point %V is one run-time value for scale %V of %D values: "
                              "give one zero point per channel, or a constant", *zero, *scale,
                              ns), 0;
    value = (int64_t)fuse__const_value(z, 0); /* (z moves when the graph grows) */
    many = fuse_typed_constant(g, NULL, (fuse_type)type, 1, &ns, NULL);
    if (many == FUSE_NONE) return 0;
    for (i = 0; i < ns; i++) fuse__typed_put(g->nodes[many].data, type, i, value);
    *zero = many;
  }
  return 1;
}

/* Scale 1 for a zero point of `count` values: the scalar one, or `count` ones. */
static fuse_value fuse__onnx_unit_scale(fuse__onnx *ld, fuse_value one, fuse_value zero) {
  fuse_graph *g = ld->g;
  int64_t count, i;
  fuse_value ones;
  if (zero == FUSE_NONE || (count = fuse__onnx_count(g, zero)) == 1 || g->nodes[zero].rank != 1)
    return one;
  if ((ones = fuse_constant(g, NULL, 1, &count, NULL)) == FUSE_NONE) return FUSE_NONE;
  for (i = 0; i < count; i++) g->nodes[ones].data[i] = 1.0f;
  return ones;
}

/* QuantizeLinear (x, y_scale, y_zero_point?; axis) and DequantizeLinear (x, x_scale,
   x_zero_point?; axis): fuse_quantize / fuse_dequantize, which check the types and shapes.
   Opset 19's saturate concerns the float8 types only, which are refused by name (as every
   type but uint8, int8 and int32); opset 21's blocked quantization is refused, its
   output_dtype taken when it is the zero point's type. */
static fuse_value fuse__onnx_quantize_linear(fuse__onnx *ld, const fuse__onode *n, int quantize) {
  fuse_graph *g = ld->g;
  fuse_value x, s, z;
  int axis = (int)fuse__onnx_attr_int(n, "axis", 1), dtype;
  if (!fuse__onnx_quant_required(ld, n, 2, quantize ? "x, y_scale and an optional y_zero_point"
                                                    : "x, x_scale and an optional x_zero_point"))
    return FUSE_NONE;
  if (fuse__onnx_attr_int(n, "block_size", 0) != 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                           "blocked quantization (block_size) is not supported"), FUSE_NONE;
  x = quantize ? fuse__onnx_value(ld, n->in[0]) : fuse__onnx_typed_value(ld, n->in[0], "x");
  if (x == FUSE_NONE || (s = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE ||
      !fuse__onnx_quant_in(ld, n, 2, quantize ? "y_zero_point" : "x_zero_point", &z) ||
      !fuse__onnx_quant_pair(ld, &s, &z))
    return FUSE_NONE;
  if (!quantize) return fuse_dequantize(g, x, s, z, axis);
  x = fuse_quantize(g, x, s, z, axis);
  dtype = (int)fuse__onnx_attr_int(n, "output_dtype", 0);
  if (x != FUSE_NONE && dtype != 0 && dtype != fuse__dt_of_type(g->nodes[x].type))
    return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                            "output_dtype %s is not supported: the output's type is y_zero_point's "
                            "(uint8 without one)", fuse__dt_name(dtype)),
           FUSE_NONE;
  return x;
}

/* QLinearConv (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point,
   B?): dequantize x (per tensor) and w (per tensor or per output channel), Conv's attributes
   and conv2d, + B (int32) dequantized with scale x_scale * w_scale (the float32 product, as
   ONNX Runtime forms it, computed here: both scales must be known at load) and zero point 0,
   quantize to y_zero_point's type. */
static fuse_value fuse__onnx_qlinear_conv(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value x, xs, xz, w, ws, ws_given, wz, ys, yz, y, b;
  if (!fuse__onnx_quant_required(ld, n, 8, "x, x_scale, x_zero_point, w, w_scale, "
                                           "w_zero_point, y_scale, y_zero_point and an "
                                           "optional B"))
    return FUSE_NONE;
  if ((x = fuse__onnx_typed_value(ld, n->in[0], "x")) == FUSE_NONE ||
      (xs = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE || !fuse__onnx_one_scale(ld, xs, "x_scale") ||
      !fuse__onnx_quant_in(ld, n, 2, "x_zero_point", &xz) ||
      (w = fuse__onnx_typed_value(ld, n->in[3], "w")) == FUSE_NONE ||
      (ws = ws_given = fuse__onnx_value(ld, n->in[4])) == FUSE_NONE ||
      !fuse__onnx_quant_in(ld, n, 5, "w_zero_point", &wz) || !fuse__onnx_quant_pair(ld, &ws, &wz) ||
      (ys = fuse__onnx_value(ld, n->in[6])) == FUSE_NONE || !fuse__onnx_one_scale(ld, ys, "y_scale") ||
      !fuse__onnx_quant_in(ld, n, 7, "y_zero_point", &yz))
    return FUSE_NONE;
  if ((x = fuse_dequantize(g, x, xs, xz, 1)) == FUSE_NONE || fuse__onnx_rank4(ld, x) == FUSE_NONE ||
      (w = fuse_dequantize(g, w, ws, wz, 0)) == FUSE_NONE ||
      (y = fuse__onnx_conv_of(ld, n, x, w)) == FUSE_NONE)
    return FUSE_NONE;
  if (fuse__onnx_has_in(n, 8)) {
    int64_t count = fuse__onnx_count(g, ws_given), c;
    float xscale;
    fuse_value bs;
    if ((b = fuse__onnx_typed_value(ld, n->in[8], "B")) == FUSE_NONE) return FUSE_NONE;
    if (g->nodes[b].type != FUSE_INT32)
      return fuse__onnx_failf(ld, FUSE_ERROR_INVALID_ARGUMENT, "B %V is %s %S; the bias is int32",
                              b, fuse__dt_name(fuse__dt_of_type(g->nodes[b].type)),
                              g->nodes[b].rank, g->nodes[b].shape),
             FUSE_NONE;
    bs = fuse_constant(g, NULL, g->nodes[ws_given].rank, g->nodes[ws_given].shape, NULL);
    if (bs == FUSE_NONE) return FUSE_NONE;
    if (!fuse__onnx_const_scales(g, xs, &xscale) ||
        !fuse__onnx_const_scales(g, ws_given, g->nodes[bs].data))
      return fuse__onnx_failf(ld, FUSE_ERROR_UNSUPPORTED,
                              "B %V needs x_scale %V and w_scale %V known at load (its scale is "
                              "their product); %V is a run-time value", b, xs, ws_given,
                              fuse__onnx_const_scales(g, xs, &xscale) ? ws_given : xs),
             FUSE_NONE;
    for (c = 0; c < count; c++) g->nodes[bs].data[c] *= xscale; /* float32, as ONNX Runtime */
    y = fuse__onnx_conv_bias(ld, y, fuse_dequantize(g, b, bs, FUSE_NONE, 0));
  }
  return fuse_quantize(g, y, ys, yz, 1);
}

/* QLinearMatMul (a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
   dequantize a (per tensor or per row) and b (per tensor or per column), matmul, quantize (per
   tensor or per row of y). */
static fuse_value fuse__onnx_qlinear_matmul(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value a, as, az, b, bs, bz, ys, yz, y;
  if (!fuse__onnx_quant_required(ld, n, 8, "a, a_scale, a_zero_point, b, b_scale, "
                                           "b_zero_point, y_scale and y_zero_point"))
    return FUSE_NONE;
  if ((a = fuse__onnx_typed_value(ld, n->in[0], "a")) == FUSE_NONE ||
      (as = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE ||
      !fuse__onnx_quant_in(ld, n, 2, "a_zero_point", &az) || !fuse__onnx_quant_pair(ld, &as, &az) ||
      (b = fuse__onnx_typed_value(ld, n->in[3], "b")) == FUSE_NONE ||
      (bs = fuse__onnx_value(ld, n->in[4])) == FUSE_NONE ||
      !fuse__onnx_quant_in(ld, n, 5, "b_zero_point", &bz) || !fuse__onnx_quant_pair(ld, &bs, &bz) ||
      (ys = fuse__onnx_value(ld, n->in[6])) == FUSE_NONE ||
      !fuse__onnx_quant_in(ld, n, 7, "y_zero_point", &yz) || !fuse__onnx_quant_pair(ld, &ys, &yz))
    return FUSE_NONE;
  a = fuse_dequantize(g, a, as, az, -2);
  b = a == FUSE_NONE ? FUSE_NONE : fuse_dequantize(g, b, bs, bz, -1);
  y = b == FUSE_NONE ? FUSE_NONE : fuse_matmul(g, a, b);
  return y == FUSE_NONE ? FUSE_NONE : fuse_quantize(g, y, ys, yz, -2);
}

/* ConvInteger (x, w, x_zero_point?, w_zero_point?) and MatMulInteger (a, b, a_zero_point?,
   b_zero_point?): int32 sums of (x - x_zero_point)(w - w_zero_point). Here: the operands
   dequantized with scale 1 (exact: small integers are floats), conv2d / matmul in float32,
   quantized to int32 with scale 1 and zero point 0. Exact while every partial sum stays
   below 2^24 in magnitude (float32's integers); beyond, the sums round (the int8 kernels to
   come will make them exact always). ConvInteger's w_zero_point is per tensor or per output
   channel; MatMulInteger's a_zero_point per tensor or per row, b_zero_point per column. */
static fuse_value fuse__onnx_integer_product(fuse__onnx *ld, const fuse__onode *n, int conv) {
  fuse_graph *g = ld->g;
  fuse_value x, w, xz, wz, one, zero, y;
  int32_t zero32 = 0;
  if (!fuse__onnx_quant_required(ld, n, 2, conv ? "x, w and optional x_zero_point, w_zero_point"
                                                : "A, B and optional a_zero_point, b_zero_point"))
    return FUSE_NONE;
  if ((x = fuse__onnx_typed_value(ld, n->in[0], conv ? "x" : "A")) == FUSE_NONE ||
      (w = fuse__onnx_typed_value(ld, n->in[1], conv ? "w" : "B")) == FUSE_NONE ||
      !fuse__onnx_quant_in(ld, n, 2, conv ? "x_zero_point" : "a_zero_point", &xz) ||
      !fuse__onnx_quant_in(ld, n, 3, conv ? "w_zero_point" : "b_zero_point", &wz))
    return FUSE_NONE;
  if ((one = fuse_scalar(g, 1.0f)) == FUSE_NONE ||
      (zero = fuse_typed_constant(g, NULL, FUSE_INT32, 0, NULL, &zero32)) == FUSE_NONE)
    return FUSE_NONE;
  x = fuse_dequantize(g, x, fuse__onnx_unit_scale(ld, one, xz), xz, conv ? 1 : -2);
  if (x == FUSE_NONE || (conv && fuse__onnx_rank4(ld, x) == FUSE_NONE)) return FUSE_NONE;
  w = fuse_dequantize(g, w, fuse__onnx_unit_scale(ld, one, wz), wz, conv ? 0 : -1);
  if (w == FUSE_NONE) return FUSE_NONE;
  y = conv ? fuse__onnx_conv_of(ld, n, x, w) : fuse_matmul(g, x, w);
  return y == FUSE_NONE ? FUSE_NONE : fuse_quantize(g, y, one, zero, 1);
}

/* DynamicQuantizeLinear (x) -> y (uint8), y_scale, y_zero_point, as ONNX defines them:
   scale = (max(0, max x) - min(0, min x)) / 255, zero point = saturate(round(-min(0, min x) /
   scale)) (a quantize with scale 1), y = quantize(x, scale, zero point). */
static fuse_value fuse__onnx_dynamic_quantize(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value x, lo, hi, zero, scale, zp, y;
  if (!fuse__onnx_quant_required(ld, n, 1, "x")) return FUSE_NONE;
  if ((x = fuse__onnx_value(ld, n->in[0])) == FUSE_NONE || (zero = fuse_scalar(g, 0.0f)) == FUSE_NONE)
    return FUSE_NONE;
  lo = fuse_minimum(g, fuse_reduce(g, x, FUSE_REDUCE_MIN, 0, NULL, 0), zero);
  hi = fuse_maximum(g, fuse_reduce(g, x, FUSE_REDUCE_MAX, 0, NULL, 0), zero);
  scale = fuse_div(g, fuse_sub(g, hi, lo), fuse_scalar(g, 255.0f));
  zp = fuse_quantize(g, fuse_div(g, fuse_neg(g, lo), scale), fuse_scalar(g, 1.0f), FUSE_NONE, 1);
  y = fuse_quantize(g, x, scale, zp, 1);
  if (y == FUSE_NONE || !fuse__onnx_layers_bind(ld, n, 0, y) ||
      !fuse__onnx_layers_bind(ld, n, 1, scale) || !fuse__onnx_layers_bind(ld, n, 2, zp))
    return FUSE_NONE;
  return -2;
}

/* the ONNX operators this file converts */
static const char *const fuse__onnx_quant_ops[] = {
    "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "ConvInteger",
    "MatMulInteger", "DynamicQuantizeLinear", NULL};

static fuse_value fuse__onnx_convert_quant(fuse__onnx *ld, const fuse__onode *n) {
  int which;
  for (which = 0; fuse__onnx_quant_ops[which]; which++)
    if (fuse__slice_is(n->op, fuse__onnx_quant_ops[which])) break;
  switch (which) {
  case 0: return fuse__onnx_quantize_linear(ld, n, 1);
  case 1: return fuse__onnx_quantize_linear(ld, n, 0);
  case 2: return fuse__onnx_qlinear_conv(ld, n);
  case 3: return fuse__onnx_qlinear_matmul(ld, n);
  case 4: return fuse__onnx_integer_product(ld, n, 1);
  case 5: return fuse__onnx_integer_product(ld, n, 0);
  case 6: return fuse__onnx_dynamic_quantize(ld, n);
  default: return -3;
  }
}
