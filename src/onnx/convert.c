/* ---- attributes */

static int fuse__onnx_attr(const fuse__onode *n, const char *name, fuse__oattr *a) {
  fuse__pb b = fuse__proto_of(n->msg);
  uint32_t f, w;
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s;
    if (f == 5 && w == 2) {
      fuse__pb ab;
      uint32_t af, aw;
      if (!fuse__proto_bytes(&b, &s)) return 0;
      memset(a, 0, sizeof *a);
      a->msg = s;
      ab = fuse__proto_of(s);
      while (fuse__proto_tag(&ab, &af, &aw)) {
        uint64_t v;
        if (af == 1 && aw == 2) {
          if (!fuse__proto_bytes(&ab, &a->name)) return 0;
        } else if (af == 2 && aw == 5) {
          if (ab.end - ab.p < 4) return 0;
          a->f = fuse__f32(fuse__le32(ab.p));
          a->has_f = 1;
          ab.p += 4;
        } else if (af == 3 && aw == 0) {
          if (!fuse__proto_varint(&ab, &v)) return 0;
          a->i = (int64_t)v;
          a->has_i = 1;
        } else if (af == 4 && aw == 2) {
          if (!fuse__proto_bytes(&ab, &a->s)) return 0;
        } else if (af == 5 && aw == 2) {
          if (!fuse__proto_bytes(&ab, &a->t)) return 0;
        } else if (af == 6 && aw == 2) {
          if (!fuse__proto_bytes(&ab, &a->g)) return 0;
        } else if (af == 20 && aw == 0) {
          if (!fuse__proto_varint(&ab, &v)) return 0;
          a->type = (int)v;
        } else if (!fuse__proto_skip(&ab, aw)) {
          return 0;
        }
      }
      if (fuse__slice_is(a->name, name)) return 1;
    } else if (!fuse__proto_skip(&b, w)) {
      return 0;
    }
  }
  return 0;
}

static int64_t fuse__onnx_attr_int(const fuse__onode *n, const char *name, int64_t def) {
  fuse__oattr a;
  return fuse__onnx_attr(n, name, &a) && a.has_i ? a.i : def;
}

static float fuse__onnx_attr_float(const fuse__onode *n, const char *name, float def) {
  fuse__oattr a;
  return fuse__onnx_attr(n, name, &a) && a.has_f ? a.f : def;
}

/* A list of ints (field 8, packed or not); returns the count, -1 if absent or malformed. */
static int fuse__onnx_attr_ints(const fuse__onode *n, const char *name, int64_t *out, int max) {
  fuse__oattr a;
  fuse__pb b;
  uint32_t f, w;
  int count = 0;
  if (!fuse__onnx_attr(n, name, &a)) return -1;
  b = fuse__proto_of(a.msg);
  while (fuse__proto_tag(&b, &f, &w)) {
    if (f == 8 && (w == 0 || w == 2)) {
      fuse__pb vals = b;
      fuse__slice s;
      uint64_t v;
      if (w == 2) {
        if (!fuse__proto_bytes(&b, &s)) return -1;
        vals = fuse__proto_of(s);
        if (!s.n) continue;
      }
      do {
        if (!fuse__proto_varint(&vals, &v) || count == max) return -1;
        out[count++] = (int64_t)v;
      } while (w == 2 && vals.p < vals.end);
      if (w == 0) b = vals;
    } else if (!fuse__proto_skip(&b, w)) {
      return -1;
    }
  }
  return count;
}

/* Parses a NodeProto: inputs and outputs go into one block from the loader's allocator (any
   number of each), which fuse__onnx_node_free releases. 0 if malformed (or out of memory:
   the graph then holds the error). */
static int fuse__onnx_node(fuse__onnx *ld, fuse__slice msg, fuse__onode *n) {
  fuse__pb b = fuse__proto_of(msg);
  uint32_t f, w;
  int pass, n_in = 0, n_out = 0;
  memset(n, 0, sizeof *n);
  n->msg = msg;
  for (pass = 0; pass < 2; pass++) { /* count, then fill */
    b = fuse__proto_of(msg);
    while (fuse__proto_tag(&b, &f, &w)) {
      fuse__slice s;
      if (w == 2 && f >= 1 && f <= 4) {
        if (!fuse__proto_bytes(&b, &s)) return 0;
        if (f == 1) {
          if (pass) n->in[n->num_in++] = s;
          else n_in++;
        } else if (f == 2) {
          if (pass) n->out[n->num_out++] = s;
          else n_out++;
        } else if (f == 3) {
          n->name = s;
        } else {
          n->op = s;
        }
      } else if (w == 2 && f == 7) {
        if (!fuse__proto_bytes(&b, &n->domain)) return 0;
      } else if (!fuse__proto_skip(&b, w)) {
        return 0;
      }
    }
    if (b.p != b.end || !n->op.n) return 0;
    if (!pass) {
      n->in = (fuse__slice *)fuse__alloc(&ld->g->alloc, (size_t)(n_in + n_out + 1) * sizeof(fuse__slice), 16);
      if (!n->in) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
      n->out = n->in + n_in;
    }
  }
  return 1;
}

static void fuse__onnx_node_free(fuse__onnx *ld, fuse__onode *n) {
  fuse__free(&ld->g->alloc, n->in);
  n->in = n->out = NULL;
  n->num_in = n->num_out = 0;
}

/* ---- operators */

static int fuse__onnx_has_in(const fuse__onode *n, int i) { return i < n->num_in && n->in[i].n > 0; }

static int fuse__onnx_attr_ints32(fuse__onnx *ld, const fuse__onode *n, const char *name, int *out,
                               int count, int def) {
  int64_t v[8];
  int got = fuse__onnx_attr_ints(n, name, v, 8), i;
  char what[160];
  fuse__out o;
  o.buf = what;
  o.len = 0;
  o.cap = sizeof what;
  o.write = NULL;
  o.user = NULL;
  for (i = 0; i < count; i++) out[i] = def;
  if (got < 0) return 1;
  fuse__puts(&o, "attribute '");
  fuse__puts(&o, name);
  if (got != count) {
    fuse__puts(&o, "' has an unexpected length (only 1-D and 2-D conv and pools are supported)");
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what), 0;
  }
  for (i = 0; i < count; i++) {
    if (v[i] < 0 || v[i] > 0x7fffffff) {
      fuse__puts(&o, "' has value ");
      fuse__put_int(&o, v[i]);
      fuse__puts(&o, ", out of range");
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, what), 0;
    }
    out[i] = (int)v[i];
  }
  return 1;
}

/* auto_pad SAME_UPPER / SAME_LOWER / VALID over the 2 spatial dims; kernel is the dilated one */
static int fuse__onnx_auto_pad(fuse__onnx *ld, const fuse__onode *n, fuse_value x, const int *kernel,
                            const int *strides, const int *dilation, int *pads) {
  fuse__oattr a;
  const int64_t *shape = fuse_value_shape(ld->g, x);
  int64_t spatial[2]; /* 1-D: [N, C, L] is [N, C, 1, L] */
  int i;
  spatial[0] = fuse_value_rank(ld->g, x) == 3 ? 1 : shape[2];
  spatial[1] = fuse_value_rank(ld->g, x) == 3 ? shape[2] : shape[3];
  if (!fuse__onnx_attr(n, "auto_pad", &a) || fuse__slice_is(a.s, "NOTSET")) return 1;
  if (fuse__slice_is(a.s, "VALID")) {
    for (i = 0; i < 4; i++) pads[i] = 0;
    return 1;
  }
  if (!fuse__slice_is(a.s, "SAME_UPPER") && !fuse__slice_is(a.s, "SAME_LOWER"))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "auto_pad is not NOTSET, VALID, SAME_UPPER or SAME_LOWER"), 0;
  for (i = 0; i < 2; i++) { /* the builder would name these too, but SAME divides by them */
    if (strides[i] < 1 || dilation[i] < 1 || kernel[i] < 1)
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "auto_pad SAME needs kernel, strides and dilations >= 1"), 0;
  }
  for (i = 0; i < 2; i++) {
    int64_t in = spatial[i], out = (in + strides[i] - 1) / strides[i];
    int64_t eff = (int64_t)dilation[i] * (kernel[i] - 1) + 1;
    int64_t total = (out - 1) * strides[i] + eff - in;
    if (total < 0) total = 0;
    if (total > 0x7ffffffe)
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "auto_pad SAME gives padding past 2^31"), 0;
    if (fuse__slice_is(a.s, "SAME_UPPER")) {
      pads[i] = (int)(total / 2);
      pads[i + 2] = (int)(total - total / 2);
    } else {
      pads[i] = (int)(total - total / 2);
      pads[i + 2] = (int)(total / 2);
    }
  }
  return 1;
}

/* x itself when it is 2-D [N, C, H, W] or 1-D [N, C, L] (the builders run 1-D as 2-D) */
static fuse_value fuse__onnx_rank4(fuse__onnx *ld, fuse_value x) {
  if (fuse_value_rank(ld->g, x) != 4 && fuse_value_rank(ld->g, x) != 3)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                           "only 1-D and 2-D inputs ([N,C,L] and [N,C,H,W]) are supported"),
           FUSE_NONE;
  return x;
}

/* A list attribute over nd spatial dimensions (nd = 1 or 2; per = 2 for pads: begins, then
   ends), put in the 2-D form the builders take: a 1-D list fills the W entries and leaves the
   H entries at h (pads [b, e] become [0, b, 0, e]). Absent: every entry def. */
static int fuse__onnx_spatial_ints(fuse__onnx *ld, const fuse__onode *n, const char *name,
                                   int nd, int per, int *out, int def, int h) {
  int v[4], i;
  if (nd == 2) return fuse__onnx_attr_ints32(ld, n, name, out, 2 * per, def);
  if (!fuse__onnx_attr_ints32(ld, n, name, v, per, def)) return 0;
  for (i = 0; i < per; i++) {
    out[2 * i] = h;
    out[2 * i + 1] = v[i];
  }
  return 1;
}

/* Conv's attributes (group, strides, dilations, pads, auto_pad) on input x and weight w: the
   convolution without its bias (Conv; QLinearConv and ConvInteger on their dequantized
   operands). */
static fuse_value fuse__onnx_conv_of(fuse__onnx *ld, const fuse__onode *n, fuse_value x,
                                     fuse_value w) {
  fuse_graph *g = ld->g;
  fuse_conv2d_attrs a;
  int kernel[2], nd;
  memset(&a, 0, sizeof a);
  nd = fuse_value_rank(g, x) - 2;
  if (fuse_value_rank(g, w) != nd + 2)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                           "only 1-D and 2-D convolutions are supported (the weight's rank must "
                           "be the input's)"),
           FUSE_NONE;
  kernel[0] = nd == 2 ? (int)fuse_value_shape(g, w)[2] : 1;
  kernel[1] = (int)fuse_value_shape(g, w)[nd + 1];
  a.groups = (int)fuse__onnx_attr_int(n, "group", 1);
  if (a.groups < 1) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "group must be >= 1"), FUSE_NONE;
  if (!fuse__onnx_spatial_ints(ld, n, "strides", nd, 1, a.strides, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "dilations", nd, 1, a.dilation, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "pads", nd, 2, a.padding, 0, 0) ||
      !fuse__onnx_auto_pad(ld, n, x, kernel, a.strides, a.dilation, a.padding))
    return FUSE_NONE;
  return fuse_conv2d(g, x, w, &a);
}

/* y + reshape(b, [1, K, 1, 1]) (1-D: [1, K, 1]): a convolution's bias, one per output
   channel. */
static fuse_value fuse__onnx_conv_bias(fuse__onnx *ld, fuse_value y, fuse_value b) {
  fuse_graph *g = ld->g;
  int64_t shape[4];
  if (y == FUSE_NONE || b == FUSE_NONE) return FUSE_NONE;
  shape[0] = 1;
  shape[1] = fuse_value_shape(g, y)[1];
  shape[2] = shape[3] = 1;
  return fuse_add(g, y, fuse_reshape(g, b, fuse_value_rank(g, y), shape));
}

static fuse_value fuse__onnx_conv(fuse__onnx *ld, const fuse__onode *n) {
  fuse_value x = fuse__onnx_value(ld, n->in[0]), w, y;
  if (x == FUSE_NONE || fuse__onnx_rank4(ld, x) == FUSE_NONE) return FUSE_NONE;
  if (n->num_in < 2 || (w = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE) return FUSE_NONE;
  y = fuse__onnx_conv_of(ld, n, x, w);
  if (y != FUSE_NONE && fuse__onnx_has_in(n, 2)) /* bias: add(conv, reshape(B, [1,K,1,1])) */
    y = fuse__onnx_conv_bias(ld, y, fuse__onnx_value(ld, n->in[2]));
  return y;
}

static fuse_value fuse__onnx_pool(fuse__onnx *ld, const fuse__onode *n, int op) {
  fuse_pool2d_attrs a;
  int64_t kernel[8];
  int nd;
  fuse_value x = fuse__onnx_value(ld, n->in[0]);
  if (x == FUSE_NONE || fuse__onnx_rank4(ld, x) == FUSE_NONE) return FUSE_NONE;
  if (n->num_out > 1 && n->out[1].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "the Indices output is not supported"), FUSE_NONE;
  memset(&a, 0, sizeof a);
  nd = fuse_value_rank(ld->g, x) - 2;
  if (fuse__onnx_attr_ints(n, "kernel_shape", kernel, 8) < 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "kernel_shape is required"), FUSE_NONE;
  if (!fuse__onnx_spatial_ints(ld, n, "kernel_shape", nd, 1, a.kernel, 0, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "strides", nd, 1, a.strides, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "dilations", nd, 1, a.dilation, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "pads", nd, 2, a.padding, 0, 0) ||
      !fuse__onnx_auto_pad(ld, n, x, a.kernel, a.strides, a.dilation, a.padding))
    return FUSE_NONE;
  a.ceil_mode = (int)fuse__onnx_attr_int(n, "ceil_mode", 0);
  a.count_include_pad = (int)fuse__onnx_attr_int(n, "count_include_pad", 0);
  if (fuse__onnx_attr_int(n, "storage_order", 0) != 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "storage_order=1 is not supported"), FUSE_NONE;
  return fuse__pool(ld->g, op, x, &a);
}

/* Gemm: alpha * A' B' + beta * C, with A' / B' transposed when asked (constants only). */
static fuse_value fuse__onnx_transposed(fuse__onnx *ld, fuse_value v, float scale) {
  fuse_graph *g = ld->g;
  const fuse__node *n = &g->nodes[v];
  const void *src;
  int64_t shape[2], R, C;
  fuse_value t;
  if (n->op != FUSE__OP_CONST) return fuse_transpose(g, v, NULL); /* at run time; unscaled */
  R = n->shape[0];
  C = n->shape[1];
  shape[0] = C;
  shape[1] = R;
  if (n->raw && scale == 1) /* still in the file: the same bytes, read the other way */
    return fuse__constant_borrowed(g, 2, shape, n->raw, !n->raw_transposed);
  src = n->raw && !n->raw_transposed ? (const void *)n->raw : (const void *)fuse__const_floats(g, v);
  if (!src) return FUSE_NONE;
  t = fuse__constant_uninit(g, 2, shape);
  if (t == FUSE_NONE) return FUSE_NONE;
  fuse__transpose_scaled(g->nodes[t].data, src, R, C, scale, &g->alloc);
  return t;
}

static fuse_value fuse__onnx_scaled(fuse__onnx *ld, fuse_value v, float scale) {
  fuse_graph *g = ld->g;
  const fuse__node *n = &g->nodes[v];
  int64_t i, count;
  fuse_value t;
  if (scale == 1) return v;
  if (n->op != FUSE__OP_CONST) return fuse_mul(g, v, fuse_scalar(g, scale));
  t = fuse__constant_uninit(g, n->rank, n->shape);
  if (t == FUSE_NONE) return FUSE_NONE;
  count = fuse__numel(g->nodes[t].rank, g->nodes[t].shape);
  fuse__const_read(&g->nodes[v], 0, count, g->nodes[t].data);
  for (i = 0; i < count; i++) g->nodes[t].data[i] *= scale;
  return t;
}

static fuse_value fuse__onnx_gemm(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  float alpha = fuse__onnx_attr_float(n, "alpha", 1), beta = fuse__onnx_attr_float(n, "beta", 1);
  int64_t ta = fuse__onnx_attr_int(n, "transA", 0), tb = fuse__onnx_attr_int(n, "transB", 0);
  fuse_value a, b, y;
  int scaled;
  if (n->num_in < 2) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Gemm needs A and B"), FUSE_NONE;
  a = fuse__onnx_value(ld, n->in[0]);
  if (a == FUSE_NONE) return FUSE_NONE;
  /* a transposed weight straight from the file: it is never held twice */
  b = tb ? fuse__onnx_transposed_tensor(ld, n->in[1], alpha) : FUSE_NONE;
  if (b != FUSE_NONE) {
    if (fuse_value_rank(g, a) != 2)
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "Gemm's A and B must be 2-D"), FUSE_NONE;
    if (ta && (a = fuse__onnx_transposed(ld, a, 1)) == FUSE_NONE) return FUSE_NONE;
    scaled = 1;
  } else {
    if (g->status != FUSE_OK || (b = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE) return FUSE_NONE;
    if (fuse_value_rank(g, a) != 2 || fuse_value_rank(g, b) != 2)
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "Gemm's A and B must be 2-D"), FUSE_NONE;
    if (ta && (a = fuse__onnx_transposed(ld, a, 1)) == FUSE_NONE) return FUSE_NONE;
    scaled = g->nodes[b].op == FUSE__OP_CONST; /* alpha folds into a constant B */
    if (tb) b = fuse__onnx_transposed(ld, b, alpha);
    else if (scaled) b = fuse__onnx_scaled(ld, b, alpha);
  }
  if (b == FUSE_NONE) return FUSE_NONE;
  y = fuse_matmul(g, a, b);
  if (alpha != 1 && !scaled) y = fuse_mul(g, y, fuse_scalar(g, alpha));
  if (fuse__onnx_has_in(n, 2) && beta != 0) {
    fuse_value c = fuse__onnx_value(ld, n->in[2]);
    if (c == FUSE_NONE) return FUSE_NONE;
    y = fuse_add(g, y, fuse__onnx_scaled(ld, c, beta));
  }
  return y;
}

static fuse_value fuse__onnx_clip(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value x = fuse__onnx_value(ld, n->in[0]), bound[2];
  float v[2];
  int k, is_const[2];
  if (x == FUSE_NONE) return FUSE_NONE;
  v[0] = -HUGE_VALF;
  v[1] = HUGE_VALF;
  is_const[0] = is_const[1] = 1;
  bound[0] = bound[1] = FUSE_NONE;
  if (ld->opset < 11) {
    v[0] = fuse__onnx_attr_float(n, "min", -HUGE_VALF);
    v[1] = fuse__onnx_attr_float(n, "max", HUGE_VALF);
  } else {
    for (k = 0; k < 2; k++) {
      if (!fuse__onnx_has_in(n, k + 1)) continue;
      if (fuse__onnx_scalar(ld, n->in[k + 1], &v[k])) continue;
      is_const[k] = 0; /* a graph input or computed: maximum / minimum with the tensor */
      if ((bound[k] = fuse__onnx_value(ld, n->in[k + 1])) == FUSE_NONE) return FUSE_NONE;
      if (fuse__numel(fuse_value_rank(g, bound[k]), fuse_value_shape(g, bound[k])) != 1)
        return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "Clip's min / max must be scalars"), FUSE_NONE;
    }
  }
  if (v[0] != v[0] || v[1] != v[1]) /* as fuse_clip: a NaN bound is no bound to apply */
    return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "Clip's min / max is NaN"), FUSE_NONE;
  if (is_const[0] && is_const[1] && v[0] <= v[1]) return fuse_clip(g, x, v[0], v[1]);
  /* min > max (ONNX then gives max everywhere) or tensor bounds: min(max(x, lo), hi) */
  if (!is_const[0]) x = fuse_maximum(g, x, bound[0]);
  else if (v[0] > -HUGE_VALF) x = fuse_maximum(g, x, fuse_scalar(g, v[0]));
  if (!is_const[1]) x = fuse_minimum(g, x, bound[1]);
  else if (v[1] < HUGE_VALF) x = fuse_minimum(g, x, fuse_scalar(g, v[1]));
  return x;
}

static fuse_value fuse__onnx_reshape(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value x = fuse__onnx_value(ld, n->in[0]);
  int64_t shape[FUSE_MAX_RANK];
  int count, i, allowzero = (int)fuse__onnx_attr_int(n, "allowzero", 0);
  if (x == FUSE_NONE) return FUSE_NONE;
  if (n->num_in < 2 || !fuse__onnx_ints(ld, n->in[1], shape, FUSE_MAX_RANK, &count))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                        "the target shape must be a constant int64 tensor of at most 8 values"),
           FUSE_NONE;
  for (i = 0; i < count; i++)
    if (shape[i] == 0) {
      if (allowzero)
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "allowzero makes a zero-sized tensor"), FUSE_NONE;
      if (i >= fuse_value_rank(g, x))
        return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "a 0 in the target shape has no input dimension to copy"), FUSE_NONE;
      shape[i] = fuse_value_shape(g, x)[i];
    }
  return fuse_reshape(g, x, count, shape);
}

static fuse_value fuse__onnx_softmax(fuse__onnx *ld, const fuse__onode *n) {
  fuse_graph *g = ld->g;
  fuse_value x = fuse__onnx_value(ld, n->in[0]), y;
  int rank, axis;
  int64_t shape[2];
  if (x == FUSE_NONE) return FUSE_NONE;
  rank = fuse_value_rank(g, x);
  axis = (int)fuse__onnx_attr_int(n, "axis", ld->opset < 13 ? 1 : -1);
  if (ld->opset >= 13 || axis == rank - 1 || axis == -1) return fuse_softmax(g, x, axis);
  /* before opset 13: softmax over the input flattened to 2-D at axis */
  if (axis < -rank || axis > rank)
    return fuse__onnx_fail(ld, FUSE_ERROR_INVALID_ARGUMENT, "Softmax axis is out of range"), FUSE_NONE;
  if (axis < 0) axis += rank;
  shape[0] = fuse__numel(axis, fuse_value_shape(g, x));
  shape[1] = fuse__numel(rank - axis, fuse_value_shape(g, x) + axis);
  y = fuse_softmax(g, fuse_reshape(g, x, 2, shape), 1);
  {
    int64_t back[FUSE_MAX_RANK];
    memcpy(back, fuse_value_shape(g, x), (size_t)rank * sizeof(int64_t));
    return fuse_reshape(g, y, rank, back);
  }
}

/* A list of floats (AttributeProto field 7, packed or not); the count, -1 if absent or
   malformed. */
static int fuse__onnx_attr_floats(const fuse__onode *n, const char *name, float *out, int max) {
  fuse__oattr a;
  fuse__pb b;
  uint32_t f, w;
  int count = 0;
  if (!fuse__onnx_attr(n, name, &a)) return -1;
  b = fuse__proto_of(a.msg);
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s;
    size_t i;
    if (f == 7 && w == 2) {
      if (!fuse__proto_bytes(&b, &s) || s.n % 4) return -1;
    } else if (f == 7 && w == 5) {
      if (b.end - b.p < 4) return -1;
      s.p = b.p;
      s.n = 4;
      b.p += 4;
    } else {
      if (!fuse__proto_skip(&b, w)) return -1;
      continue;
    }
    for (i = 0; i < s.n; i += 4) {
      if (count == max) return -1;
      out[count++] = fuse__f32(fuse__le32(s.p + i));
    }
  }
  return b.p == b.end ? count : -1;
}

/* Constant: value (a tensor, read when first used), or value_float / value_floats /
   value_int / value_ints (known at once: they fold). */
static fuse_value fuse__onnx_constant(fuse__onnx *ld, const fuse__onode *n) {
  fuse__oattr a;
  fuse__oval o;
  memset(&o, 0, sizeof o);
  if (fuse__onnx_attr(n, "value", &a) && a.t.n) {
    char why[32];
    o.kind = FUSE__OV_TENSOR;
    if (!fuse__onnx_tensor_meta(a.t, &o.t, why, sizeof why))
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "its value tensor is malformed"), FUSE_NONE;
    o.t.name = n->out[0];
    if (!fuse__onnx_bind(ld, n->out[0], &o))
      return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), FUSE_NONE;
    return -2; /* bound as a tensor: no graph value yet */
  } else {
    static const char *const names[4] = {"value_float", "value_floats", "value_int", "value_ints"};
    int64_t ints[256], dims[1];
    float floats[256];
    int k, count = -1;
    fuse__known kn;
    for (k = 0; k < 4 && count < 0; k++) {
      if (!fuse__onnx_attr(n, names[k], &a)) continue;
      if (k == 0 && a.has_f) floats[0] = a.f, count = 1;
      else if (k == 2 && a.has_i) ints[0] = a.i, count = 1;
      else if (k == 1) count = fuse__onnx_attr_floats(n, names[k], floats, 256);
      else if (k == 3) count = fuse__onnx_attr_ints(n, names[k], ints, 256);
      if (count < 1)
        return fuse__onnx_fail(ld, count == 0 ? FUSE_ERROR_UNSUPPORTED : FUSE_ERROR_PARSE,
                               count == 0 ? "an empty value list makes a zero-sized tensor"
                                          : "its value is malformed (or a list of more than 256)"),
               FUSE_NONE;
      dims[0] = count;
      if (!fuse__known_alloc(ld, &kn, k < 2 ? FUSE__DT_FLOAT : FUSE__DT_INT64, k == 0 || k == 2 ? 0 : 1, dims))
        return FUSE_NONE;
      if (k < 2) memcpy(kn.f, floats, (size_t)count * sizeof(float));
      else memcpy(kn.i, ints, (size_t)count * sizeof(int64_t));
      return fuse__onnx_bind_known(ld, n->out[0], &kn) ? -2 : FUSE_NONE;
    }
  }
  return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                         "a Constant needs value, value_float(s) or value_int(s) (sparse and "
                         "string values are not supported)"),
         FUSE_NONE;
}

/* Concat of all its inputs along `axis`, however many (densenet: up to 49). */
static fuse_value fuse__onnx_concat(fuse__onnx *ld, const fuse__onode *n) {
  fuse_value few[16], *ins = few, y = FUSE_NONE;
  fuse__oattr a;
  int k;
  if (!fuse__onnx_attr(n, "axis", &a) || !a.has_i)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Concat needs axis"), FUSE_NONE;
  if (n->num_in > 16) {
    ins = (fuse_value *)fuse__alloc(&ld->g->alloc, (size_t)n->num_in * sizeof(fuse_value), 16);
    if (!ins) return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), FUSE_NONE;
  }
  for (k = 0; k < n->num_in; k++)
    if ((ins[k] = fuse__onnx_value(ld, n->in[k])) == FUSE_NONE) break;
  if (k == n->num_in) y = fuse_concat(ld->g, n->num_in, ins, (int)a.i);
  if (ins != few) fuse__free(&ld->g->alloc, ins);
  return y;
}

/* A batch norm with constant statistics whose input no conv2d produces (densenet's and the
   pre-activation nets' BN -> ReLU -> conv, after a concat or a pool): fuse_fold_batch_norm
   cannot fold it into weights, so it becomes x * s + t with s = scale / sqrt(var + eps) and
   t = bias - mean * s per channel (in double, as the fold), shaped [C, 1, ...] to broadcast:
   a multiply and an add, element-wise ops that run in the plan's NHWC layout and merge with
   the ReLU after them into one chain pass (a batch_norm step runs on NCHW, so the plan had
   converted around every one of them). Otherwise the batch_norm node. */
static fuse_value fuse__onnx_affine_batch_norm(fuse__onnx *ld, const fuse_value *in, float eps) {
  fuse_graph *g = ld->g;
  const fuse__node *nx = fuse__node_of(g, in[0]);
  int64_t shape[FUSE_MAX_RANK], C, i;
  fuse_value sv, tv;
  float *sd, *td;
  int k, rank = nx->rank;
  if (rank < 2 || rank > FUSE_MAX_RANK || nx->op == FUSE__OP_CONV2D || !(eps >= 0))
    return fuse_batch_norm(g, in[0], in[1], in[2], in[3], in[4], eps);
  C = nx->shape[1];
  for (k = 1; k < 5; k++) {
    const fuse__node *pk = fuse__node_of(g, in[k]);
    if (pk->op != FUSE__OP_CONST || pk->rank != 1 || pk->shape[0] != C || !(pk->data || pk->raw))
      return fuse_batch_norm(g, in[0], in[1], in[2], in[3], in[4], eps);
  }
  shape[0] = C;
  for (k = 1; k < rank - 1; k++) shape[k] = 1;
  sv = fuse_constant(g, NULL, rank - 1, shape, NULL);
  tv = fuse_constant(g, NULL, rank - 1, shape, NULL);
  if (sv == FUSE_NONE || tv == FUSE_NONE) return FUSE_NONE;
  sd = g->nodes[sv].data, td = g->nodes[tv].data;
  for (i = 0; i < C; i++) {
    double s = fuse__const_at(&g->nodes[in[1]], i) /
               sqrt((double)fuse__const_at(&g->nodes[in[4]], i) + (double)eps);
    sd[i] = (float)s;
    td[i] = (float)(fuse__const_at(&g->nodes[in[2]], i) - fuse__const_at(&g->nodes[in[3]], i) * s);
  }
  return fuse_add(g, fuse_mul(g, in[0], sv), tv);
}

/* BatchNormalization in inference mode (x, scale, bias, mean, var). */
static fuse_value fuse__onnx_batch_norm(fuse__onnx *ld, const fuse__onode *n) {
  fuse_value in[5];
  int k;
  if (n->num_in != 5) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs 5 inputs"), FUSE_NONE;
  if (fuse__onnx_attr_int(n, "training_mode", 0) != 0 || (n->num_out > 1 && n->out[1].n))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "training mode (running statistics outputs) is not supported"), FUSE_NONE;
  for (k = 0; k < 5; k++)
    if ((in[k] = fuse__onnx_value(ld, n->in[k])) == FUSE_NONE) return FUSE_NONE;
  return fuse__onnx_affine_batch_norm(ld, in, fuse__onnx_attr_float(n, "epsilon", 1e-5f));
}

/* Transpose of x by `perm` (none: the axes reversed). */
static fuse_value fuse__onnx_transpose(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  int64_t perm[FUSE_MAX_RANK];
  int p[FUSE_MAX_RANK], count = fuse__onnx_attr_ints(n, "perm", perm, FUSE_MAX_RANK), i;
  if (count < 0) return fuse_transpose(ld->g, x, NULL);
  if (count != fuse_value_rank(ld->g, x))
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "perm does not match the input's rank"), FUSE_NONE;
  for (i = 0; i < count; i++) p[i] = perm[i] < 0 || perm[i] >= FUSE_MAX_RANK ? -1 : (int)perm[i];
  return fuse_transpose(ld->g, x, p);
}

/* Dropout in inference: x itself, when neither its mask nor training mode is asked for. */
static fuse_value fuse__onnx_dropout(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  float ratio = 0.5f;
  int64_t mode[1] = {0};
  int count;
  if (fuse__onnx_has_in(n, 2) && !fuse__onnx_ints(ld, n->in[2], mode, 1, &count))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "Dropout's training_mode must be known at load"),
           FUSE_NONE;
  /* inference: x itself; training with a ratio of 0 drops nothing either */
  if (mode[0] != 0 && !(fuse__onnx_has_in(n, 1) && fuse__onnx_scalar(ld, n->in[1], &ratio) && ratio == 0))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "training-mode Dropout is not supported"), FUSE_NONE;
  if (n->num_out > 1 && n->out[1].n) { /* nothing dropped: the mask is all true */
    fuse__known mask;
    int64_t i;
    if (!fuse__known_alloc(ld, &mask, FUSE__DT_BOOL, ld->g->nodes[x].rank, ld->g->nodes[x].shape))
      return FUSE_NONE;
    for (i = 0; i < mask.count; i++) mask.i[i] = 1;
    if (!fuse__onnx_bind_known(ld, n->out[1], &mask)) return FUSE_NONE;
  }
  return x;
}

