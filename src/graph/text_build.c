/* ------------------------------------------------------ text form: the ops' builders -- */
/* Calls the builder of `op` with parsed operands and attributes. */
static fuse_value fuse__text_build(fuse__parser *ps, int op, const fuse_value *in, int n_in,
                                const fuse__parse_attr *at, int n_at) {
  fuse_graph *g = ps->g;
  const fuse__parse_attr *a;
  int arity = 1;
  switch (op) {
  case FUSE__OP_CONV2D:
  case FUSE__OP_MATMUL:
  case FUSE__OP_ADD:
  case FUSE__OP_SUB:
  case FUSE__OP_MUL:
  case FUSE__OP_MAXIMUM:
  case FUSE__OP_MINIMUM: arity = 2; break;
  case FUSE__OP_BATCH_NORM: arity = 5; break;
  case FUSE__OP_CONCAT: arity = n_in > 0 ? n_in : 1; break;
  /* element-wise math (graph/builders_math.c) */
  case FUSE__OP_DIV:
  case FUSE__OP_POW:
  case FUSE__OP_PRELU: arity = 2; break;
  case FUSE__OP_WHERE: arity = 3; break;

  /* data movement (graph/builders_shape.c) */
  case FUSE__OP_GATHER: arity = 2; break;

  /* reductions, normalizations (graph/builders_nn.c) */
  case FUSE__OP_LAYER_NORM: arity = n_in == 2 ? 2 : 3; break; /* bias is optional */
  case FUSE__OP_INSTANCE_NORM:
  case FUSE__OP_GROUP_NORM: arity = 3; break;

  /* transposed convolution (graph/builders_layers.c) */
  case FUSE__OP_CONV_TRANSPOSE2D: arity = 2; break;

  default: break;
  }
  if (n_in != arity)
    return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %s takes %d operand%s, not %d", ps->at_line, ps->at_col,
                      fuse__ops[op].name, arity, arity == 1 ? "" : "s", n_in);
  switch (op) {
  case FUSE__OP_CONV2D: {
    fuse_conv2d_attrs c;
    memset(&c, 0, sizeof c);
    fuse__text_ints(at, n_at, "strides", c.strides, 2);
    fuse__text_ints(at, n_at, "padding", c.padding, 4);
    fuse__text_ints(at, n_at, "dilation", c.dilation, 2);
    fuse__text_ints(at, n_at, "groups", &c.groups, 1);
    return fuse_conv2d(g, in[0], in[1], &c);
  }
  case FUSE__OP_MATMUL: return fuse_matmul(g, in[0], in[1]);
  case FUSE__OP_ADD:
  case FUSE__OP_SUB:
  case FUSE__OP_MUL:
  case FUSE__OP_MAXIMUM:
  case FUSE__OP_MINIMUM: return fuse__binary(g, op, in[0], in[1]);
  case FUSE__OP_RELU: return fuse_relu(g, in[0]);
  case FUSE__OP_SIGMOID: return fuse_sigmoid(g, in[0]);
  case FUSE__OP_CLIP: {
    float lo = -HUGE_VALF, hi = HUGE_VALF;
    if ((a = fuse__text_find_attr(at, n_at, "lo")) != NULL) lo = (float)a->v[0];
    if ((a = fuse__text_find_attr(at, n_at, "hi")) != NULL) hi = (float)a->v[0];
    return fuse_clip(g, in[0], lo, hi);
  }
  case FUSE__OP_RESHAPE: {
    int64_t shape[FUSE_MAX_RANK];
    int i;
    if (!(a = fuse__text_find_attr(at, n_at, "shape")))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: reshape needs shape=[...]", ps->at_line, ps->at_col);
    for (i = 0; i < a->count; i++) shape[i] = (int64_t)a->v[i];
    return fuse_reshape(g, in[0], a->count, shape);
  }
  case FUSE__OP_FLATTEN:
  case FUSE__OP_CONCAT:
  case FUSE__OP_SOFTMAX: {
    int axis = op == FUSE__OP_FLATTEN ? 1 : op == FUSE__OP_SOFTMAX ? -1 : 0;
    fuse__text_ints(at, n_at, "axis", &axis, 1);
    return op == FUSE__OP_FLATTEN   ? fuse_flatten(g, in[0], axis)
           : op == FUSE__OP_SOFTMAX ? fuse_softmax(g, in[0], axis)
                                    : fuse_concat(g, n_in, in, axis);
  }
  case FUSE__OP_BATCH_NORM: {
    float eps = 1e-5f;
    if ((a = fuse__text_find_attr(at, n_at, "eps")) != NULL) eps = (float)a->v[0];
    return fuse_batch_norm(g, in[0], in[1], in[2], in[3], in[4], eps);
  }
  case FUSE__OP_MAX_POOL2D:
  case FUSE__OP_AVG_POOL2D: {
    fuse_pool2d_attrs p;
    memset(&p, 0, sizeof p);
    if (!fuse__text_find_attr(at, n_at, "kernel"))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %s needs kernel=[kh, kw]", ps->at_line, ps->at_col,
                        fuse__ops[op].name);
    fuse__text_ints(at, n_at, "kernel", p.kernel, 2);
    fuse__text_ints(at, n_at, "strides", p.strides, 2);
    fuse__text_ints(at, n_at, "padding", p.padding, 4);
    fuse__text_ints(at, n_at, "dilation", p.dilation, 2);
    fuse__text_ints(at, n_at, "ceil_mode", &p.ceil_mode, 1);
    fuse__text_ints(at, n_at, "count_include_pad", &p.count_include_pad, 1);
    return fuse__pool(g, op, in[0], &p);
  }
  case FUSE__OP_GLOBAL_AVG_POOL2D: return fuse_global_avg_pool2d(g, in[0]);
  case FUSE__OP_TRANSPOSE: {
    int p[FUSE_MAX_RANK], i;
    if (!(a = fuse__text_find_attr(at, n_at, "perm"))) return fuse_transpose(g, in[0], NULL);
    if (a->count != fuse_value_rank(g, in[0]))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: transpose perm has %d entries for rank %d",
                        ps->at_line, ps->at_col, a->count, fuse_value_rank(g, in[0]));
    for (i = 0; i < a->count; i++) p[i] = (int)a->v[i];
    return fuse_transpose(g, in[0], p);
  }
  /* element-wise math (graph/builders_math.c) */
  case FUSE__OP_SQRT: return fuse_sqrt(g, in[0]);
  case FUSE__OP_RECIPROCAL: return fuse_reciprocal(g, in[0]);
  case FUSE__OP_EXP: return fuse_exp(g, in[0]);
  case FUSE__OP_LOG: return fuse_log(g, in[0]);
  case FUSE__OP_NEG: return fuse_neg(g, in[0]);
  case FUSE__OP_ABS: return fuse_abs(g, in[0]);
  case FUSE__OP_FLOOR: return fuse_floor(g, in[0]);
  case FUSE__OP_CEIL: return fuse_ceil(g, in[0]);
  case FUSE__OP_ERF: return fuse_erf(g, in[0]);
  case FUSE__OP_TANH: return fuse_tanh(g, in[0]);
  case FUSE__OP_SOFTPLUS: return fuse_softplus(g, in[0]);
  case FUSE__OP_HARDSWISH: return fuse_hardswish(g, in[0]);
  case FUSE__OP_HARDSIGMOID:
  case FUSE__OP_LEAKY_RELU:
  case FUSE__OP_ELU:
  case FUSE__OP_SELU: { /* left out: ONNX's defaults */
    float alpha = op == FUSE__OP_HARDSIGMOID ? 0.2f
                  : op == FUSE__OP_LEAKY_RELU ? 0.01f
                  : op == FUSE__OP_ELU        ? 1.0f
                                              : 1.67326319217681884765625f;
    float beta = op == FUSE__OP_HARDSIGMOID ? 0.5f : 1.05070102214813232421875f;
    if ((a = fuse__text_find_attr(at, n_at, "alpha")) != NULL) alpha = (float)a->v[0];
    if ((a = fuse__text_find_attr(at, n_at, op == FUSE__OP_SELU ? "gamma" : "beta")) != NULL)
      beta = (float)a->v[0];
    return op == FUSE__OP_HARDSIGMOID ? fuse_hardsigmoid(g, in[0], alpha, beta)
           : op == FUSE__OP_LEAKY_RELU ? fuse_leaky_relu(g, in[0], alpha)
           : op == FUSE__OP_ELU        ? fuse_elu(g, in[0], alpha)
                                       : fuse_selu(g, in[0], alpha, beta);
  }
  case FUSE__OP_GELU: {
    int approximate = 0;
    fuse__text_ints(at, n_at, "approximate", &approximate, 1);
    return fuse_gelu(g, in[0], approximate);
  }
  case FUSE__OP_DIV: return fuse_div(g, in[0], in[1]);
  case FUSE__OP_POW: return fuse_pow(g, in[0], in[1]);
  case FUSE__OP_PRELU: return fuse_prelu(g, in[0], in[1]);
  case FUSE__OP_WHERE: return fuse_where(g, in[0], in[1], in[2]);

  /* data movement (graph/builders_shape.c) */
  case FUSE__OP_GATHER: {
    int axis = 0;
    fuse__text_ints(at, n_at, "axis", &axis, 1);
    return fuse__gather_node(g, in[0], in[1], axis);
  }
  case FUSE__OP_EXPAND:
  case FUSE__OP_TILE: {
    const char *key = op == FUSE__OP_EXPAND ? "shape" : "repeats";
    int64_t list[FUSE_MAX_RANK];
    int i;
    if (!(a = fuse__text_find_attr(at, n_at, key)))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %s needs %s=[...]", ps->at_line,
                        ps->at_col, fuse__ops[op].name, key);
    for (i = 0; i < a->count; i++) list[i] = (int64_t)a->v[i];
    if (op == FUSE__OP_EXPAND) return fuse_expand(g, in[0], a->count, list);
    if (a->count != fuse_value_rank(g, in[0]))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: tile repeats has %d entries for rank %d",
                        ps->at_line, ps->at_col, a->count, fuse_value_rank(g, in[0]));
    return fuse_tile(g, in[0], list);
  }
  case FUSE__OP_PAD: {
    int64_t pads[2 * FUSE_MAX_RANK];
    int rank = fuse_value_rank(g, in[0]), mode = 0, i, k;
    float value = 0;
    memset(pads, 0, sizeof pads);
    for (k = 0; k < 2; k++)
      if ((a = fuse__text_find_attr(at, n_at, k ? "ends" : "begins")) != NULL) {
        if (a->count != rank)
          return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: pad %s has %d entries for rank %d",
                            ps->at_line, ps->at_col, a->name, a->count, rank);
        for (i = 0; i < rank; i++) pads[k * rank + i] = (int64_t)a->v[i];
      }
    if ((a = fuse__text_find_attr(at, n_at, "value")) != NULL) value = (float)a->v[0];
    fuse__text_ints(at, n_at, "mode", &mode, 1);
    return fuse_pad(g, in[0], pads, (fuse_pad_mode)mode, value);
  }
  case FUSE__OP_RESIZE: {
    int64_t sizes[FUSE_MAX_RANK];
    float scales[FUSE_MAX_RANK];
    fuse_resize_attrs ra;
    int rank = fuse_value_rank(g, in[0]), v[4] = {0, 0, 0, 0}, i;
    const fuse__parse_attr *sc = fuse__text_find_attr(at, n_at, "scales");
    if (!(a = fuse__text_find_attr(at, n_at, "sizes")) || a->count != rank ||
        (sc && sc->count != rank))
      return fuse__fail(g, FUSE_ERROR_PARSE,
                        "line %d, column %d: resize needs sizes=[...] (and scales=[...]) with %d entries",
                        ps->at_line, ps->at_col, rank);
    for (i = 0; i < rank; i++) sizes[i] = (int64_t)a->v[i], scales[i] = sc ? (float)sc->v[i] : 0;
    memset(&ra, 0, sizeof ra);
    fuse__text_ints(at, n_at, "mode", &v[0], 1);
    fuse__text_ints(at, n_at, "coordinates", &v[1], 1);
    fuse__text_ints(at, n_at, "nearest", &v[2], 1);
    fuse__text_ints(at, n_at, "exclude_outside", &v[3], 1);
    ra.mode = (fuse_resize_mode)v[0];
    ra.coordinates = (fuse_resize_coordinates)v[1];
    ra.nearest = (fuse_resize_nearest)v[2];
    ra.exclude_outside = v[3];
    if ((a = fuse__text_find_attr(at, n_at, "cubic_coeff_a")) != NULL) ra.cubic_coeff_a = (float)a->v[0];
    return fuse_resize(g, in[0], sizes, sc ? scales : NULL, &ra);
  }

  /* reductions, normalizations (graph/builders_nn.c) */
  case FUSE__OP_REDUCE_MEAN:
  case FUSE__OP_REDUCE_SUM:
  case FUSE__OP_REDUCE_MAX:
  case FUSE__OP_REDUCE_MIN:
  case FUSE__OP_REDUCE_L2:
  case FUSE__OP_REDUCE_PROD:
  case FUSE__OP_REDUCE_SUM_SQUARE: {
    int axes[FUSE_MAX_RANK], keepdims = 1, count = 0;
    fuse_reduce_kind kind = (fuse_reduce_kind)(FUSE_REDUCE_MEAN + (op - FUSE__OP_REDUCE_MEAN));
    if ((a = fuse__text_find_attr(at, n_at, "axes")) != NULL) { /* absent or []: all axes */
      count = a->count;
      fuse__text_ints(at, n_at, "axes", axes, count);
    }
    fuse__text_ints(at, n_at, "keepdims", &keepdims, 1);
    return fuse_reduce(g, in[0], kind, count, axes, keepdims);
  }
  case FUSE__OP_LOG_SOFTMAX: {
    int axis = -1;
    fuse__text_ints(at, n_at, "axis", &axis, 1);
    return fuse_log_softmax(g, in[0], axis);
  }
  case FUSE__OP_LAYER_NORM:
  case FUSE__OP_INSTANCE_NORM:
  case FUSE__OP_GROUP_NORM: {
    float eps = 1e-5f;
    int axis = -1, groups = 0;
    if ((a = fuse__text_find_attr(at, n_at, "eps")) != NULL) eps = (float)a->v[0];
    fuse__text_ints(at, n_at, "axis", &axis, 1);
    if (op == FUSE__OP_LAYER_NORM)
      return fuse_layer_norm(g, in[0], in[1], n_in == 3 ? in[2] : FUSE_NONE, axis, eps);
    if (op == FUSE__OP_INSTANCE_NORM) return fuse_instance_norm(g, in[0], in[1], in[2], eps);
    if (!fuse__text_find_attr(at, n_at, "groups"))
      return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: group_norm needs groups=N",
                        ps->at_line, ps->at_col);
    fuse__text_ints(at, n_at, "groups", &groups, 1);
    return fuse_group_norm(g, in[0], in[1], in[2], groups, eps);
  }

  /* transposed convolution (graph/builders_layers.c) */
  case FUSE__OP_SLICE: return fuse__text_slice(ps, in[0], at, n_at);
  case FUSE__OP_CONV_TRANSPOSE2D: {
    fuse_conv_transpose2d_attrs c;
    memset(&c, 0, sizeof c);
    fuse__text_ints(at, n_at, "strides", c.strides, 2);
    fuse__text_ints(at, n_at, "padding", c.padding, 4);
    fuse__text_ints(at, n_at, "output_padding", c.output_padding, 2);
    fuse__text_ints(at, n_at, "dilation", c.dilation, 2);
    fuse__text_ints(at, n_at, "groups", &c.groups, 1);
    return fuse_conv_transpose2d(g, in[0], in[1], &c);
  }

  default: break;
  }
  return fuse__fail(g, FUSE_ERROR_PARSE, "line %d, column %d: %s cannot be written as an op", ps->at_line, ps->at_col,
                    fuse__ops[op].name);
}
