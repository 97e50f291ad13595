/* ------------------------------------------------------------ onnx operators: math -- */
/* element-wise math: unary functions, div, pow, prelu, where, variadic sum / mean / max / min.
   fuse__onnx_convert_math: the node converted (its first output, or -2 when it bound its
   outputs itself), FUSE_NONE on failure, or -3 when the operator is not one of this file. */

/* The element-wise ops the operator table imports (a row with an `onnx` name: graph/ops.c):
   one input, the row's attributes read by their names, ONNX's defaults being the row's. */
static int fuse__onnx_row_op(fuse__slice name) {
  int op;
  for (op = 0; op < FUSE__OP_COUNT; op++)
    if (fuse__ops[op].onnx && fuse__slice_is(name, fuse__ops[op].onnx)) return op;
  return -1;
}

static fuse_value fuse__onnx_convert_row(fuse__onnx *ld, const fuse__onode *n, int op) {
  const fuse__attr_spec *s;
  float p[2] = {0, 0};
  int mode = 0;
  fuse_value x;
  if (n->num_in != 1) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it takes one input"), FUSE_NONE;
  if (!fuse__onnx_has_in(n, 0))
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "an input is left out"), FUSE_NONE;
  if ((x = fuse__onnx_float_operand(ld, n->in[0], 0)) == FUSE_NONE) return FUSE_NONE;
  for (s = fuse__ops[op].attrs; s->name; s++) {
    if (s->at == (int)offsetof(fuse__node, a.unary.alpha))
      p[0] = fuse__onnx_attr_float(n, s->name, (float)s->dflt);
    else if (s->at == (int)offsetof(fuse__node, a.unary.beta))
      p[1] = fuse__onnx_attr_float(n, s->name, (float)s->dflt);
    else
      mode = (int)fuse__onnx_attr_int(n, s->name, (int64_t)s->dflt);
  }
  return fuse__math_unary(ld->g, op, x, p[0], p[1], mode);
}

/* the other ONNX operators this file converts (the loader lists the others as unsupported);
   the order matters: fuse__onnx_convert_math switches on the index */
static const char *const fuse__onnx_math_ops[] = {"Gelu", "Round", "Div", "Pow",  "PRelu", "Where",
                                                  "Sum",  "Mean",  "Max", "Min",  NULL};
enum { /* indices in fuse__onnx_math_ops */
  FUSE__ONNX_GELU, FUSE__ONNX_ROUND, FUSE__ONNX_DIV, FUSE__ONNX_POW, FUSE__ONNX_PRELU,
  FUSE__ONNX_WHERE, FUSE__ONNX_SUM, FUSE__ONNX_MEAN, FUSE__ONNX_MAX, FUSE__ONNX_MIN
};
/* the names and the indices agree (the names end with NULL): checked when this compiles */
typedef char fuse__onnx_math_ops_agree[sizeof fuse__onnx_math_ops / sizeof *fuse__onnx_math_ops ==
                                               FUSE__ONNX_MIN + 2
                                           ? 1
                                           : -1];

/* Round (to the nearest whole number, ties to even) from the graph's ops, the rounding being
   quantize's: x + (dequantize(quantize(c)) - c) with c = clip(x, -2^23, 2^23) and scale 1,
   an int32 zero point 0. Below 2^23 in magnitude the difference is round(x) - x, exactly;
   from there every float is a whole number and c one too, so the difference is 0 (and an
   infinity or NaN stays). The values are ONNX's; the sign of a zero is not kept (-0.4 gives
   +0). */
static fuse_value fuse__onnx_round(fuse_graph *g, fuse_value x) {
  const float big = 8388608.0f; /* 2^23 */
  int32_t zero32 = 0;
  fuse_value c = fuse_clip(g, x, -big, big), one = fuse_scalar(g, 1.0f);
  fuse_value zero = fuse_typed_constant(g, NULL, FUSE_INT32, 0, NULL, &zero32);
  fuse_value r = fuse_dequantize(g, fuse_quantize(g, c, one, zero, 1), one, FUSE_NONE, 1);
  return fuse_add(g, x, fuse_sub(g, r, c));
}

/* An operand of a math op: a float graph value, or an integer tensor known at load (Pow's
   exponent 2 as int64) made a float constant. */
static fuse_value fuse__onnx_math_operand(fuse__onnx *ld, fuse__slice name) {
  return fuse__onnx_float_operand(ld, name, 0);
}

static fuse_value fuse__onnx_convert_math(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value in[3];
  int which, k, need = fuse__onnx_row_op(n->op);
  if (need >= 0) return fuse__onnx_convert_row(ld, n, need);
  for (which = 0; fuse__onnx_math_ops[which]; which++)
    if (fuse__slice_is(n->op, fuse__onnx_math_ops[which])) break;
  if (!fuse__onnx_math_ops[which]) return -3;
  need = which == FUSE__ONNX_WHERE                                 ? 3
         : which >= FUSE__ONNX_DIV && which <= FUSE__ONNX_PRELU ? 2
                                                                : 1;
  if (which >= FUSE__ONNX_SUM) {
    if (n->num_in < 1)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs at least one input"), FUSE_NONE;
  } else if (n->num_in != need) {
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE,
                           need == 1   ? "it takes one input"
                           : need == 2 ? "it takes two inputs"
                                       : "it takes three inputs (condition, X, Y)"),
           FUSE_NONE;
  }
  for (k = 0; k < n->num_in; k++) { /* the variadic ones fold as they go: any count */
    fuse_value v;
    if (!fuse__onnx_has_in(n, k))
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "an input is left out"), FUSE_NONE;
    v = which == FUSE__ONNX_WHERE && k == 0 ? fuse__onnx_mask(ld, n->in[0])
                                 : fuse__onnx_math_operand(ld, n->in[k]);
    if (v == FUSE_NONE) return FUSE_NONE;
    if (which < FUSE__ONNX_SUM || k == 0) {
      in[k] = v;
    } else { /* the running value with this one */
      in[1] = v;
      in[0] = which == FUSE__ONNX_MAX   ? fuse_max(g, 2, in)
              : which == FUSE__ONNX_MIN ? fuse_min(g, 2, in)
                             : fuse_sum(g, 2, in);
      if (in[0] == FUSE_NONE) return FUSE_NONE;
    }
  }
  switch (which) {
  case FUSE__ONNX_GELU: {
    fuse__oattr a;
    int tanh_approximation = 0;
    if (fuse__onnx_attr(n, "approximate", &a)) {
      if (fuse__slice_is(a.s, "tanh")) tanh_approximation = 1;
      else if (!fuse__slice_is(a.s, "none"))
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                               "approximate must be \"none\" or \"tanh\""),
               FUSE_NONE;
    }
    return fuse_gelu(g, in[0], tanh_approximation);
  }
  case FUSE__ONNX_ROUND: return fuse__onnx_round(g, in[0]);
  case FUSE__ONNX_DIV: return fuse_div(g, in[0], in[1]);
  case FUSE__ONNX_POW: return fuse_pow(g, in[0], in[1]);
  case FUSE__ONNX_PRELU: {
    const fuse__node *nx = &g->nodes[in[0]], *ns = &g->nodes[in[1]];
    if (ld->opset < 7 && ns->rank == 1 && nx->rank >= 2 && ns->shape[0] > 1 &&
        ns->shape[0] == nx->shape[1]) { /* PRelu-6: a slope of C values is per channel */
      int64_t shape[FUSE_MAX_RANK];
      int d;
      shape[0] = ns->shape[0];
      for (d = 1; d < nx->rank - 1; d++) shape[d] = 1;
      in[1] = fuse_reshape(g, in[1], nx->rank - 1, shape);
    }
    return fuse_prelu(g, in[0], in[1]);
  }
  case FUSE__ONNX_WHERE: return fuse_where(g, in[0], in[1], in[2]);
  case FUSE__ONNX_MEAN: /* fuse_mean: the sum times 1 / n */
    return n->num_in == 1 ? in[0] : fuse_mul(g, in[0], fuse_scalar(g, 1.0f / (float)n->num_in));
  default: return in[0]; /* Sum, Max, Min: folded above */
  }
}
