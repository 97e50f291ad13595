/* ------------------------------------------------------------ onnx operators: layers -- */
/* Slice, Split, ConvTranspose, LSTM, GRU (1-D Conv and pools: fuse__onnx_conv, fuse__onnx_pool).
   fuse__onnx_convert_layers: as fuse__onnx_convert_math. */

/* Binds output k of node n to v, naming v after it as the loader names a first output. */
static int fuse__onnx_layers_bind(fuse__onnx *ld, const fuse__onode *n, int k, fuse_value v) {
  fuse_graph *g = ld->g;
  if (k >= n->num_out || !n->out[k].n) return 1; /* an output nobody asked for */
  if (!g->nodes[v].name && g->nodes[v].op > FUSE__OP_CONST &&
      fuse__find(g, fuse__onnx_cstr(ld, n->out[k])) == FUSE_NONE)
    fuse_value_set_name(g, v, fuse__onnx_cstr(ld, n->out[k]));
  if (!fuse__onnx_bind_value(ld, n->out[k], v))
    return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
  return 1;
}

/* A list of integers given as attribute `name` (opsets before `input_from`) or as constant
   input `input` (from it): its count, -1 when absent, -2 (after a message) when malformed. */
static int fuse__onnx_layers_list(fuse__onnx *ld, const fuse__onode *n, const char *name,
                                  int input, int input_from, int64_t *out, int max) {
  int count;
  if (ld->opset < input_from || !fuse__onnx_has_in(n, input)) {
    count = fuse__onnx_attr_ints(n, name, out, max);
    if (count >= 0 || ld->opset < input_from) return count;
    return -1;
  }
  if (!fuse__onnx_ints(ld, n->in[input], out, max, &count)) {
    char what[120];
    fuse__out o;
    o.buf = what;
    o.len = 0;
    o.cap = sizeof what;
    o.write = NULL;
    o.user = NULL;
    fuse__puts(&o, "input '");
    fuse__puts(&o, name);
    fuse__puts(&o, "' must be a constant integer tensor (of at most ");
    fuse__put_int(&o, max);
    fuse__puts(&o, " values)");
    fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what);
    return -2;
  }
  return count;
}

/* Slice: starts, ends, axes as attributes before opset 10; then inputs, with steps. */
static fuse_value fuse__onnx_slice(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  int64_t starts[FUSE_MAX_RANK], ends[FUSE_MAX_RANK], axes64[FUSE_MAX_RANK], steps[FUSE_MAX_RANK];
  int axes[FUSE_MAX_RANK], ns, ne, na, nst = -1, i;
  if ((ns = fuse__onnx_layers_list(ld, n, "starts", 1, 10, starts, FUSE_MAX_RANK)) == -2 ||
      (ne = fuse__onnx_layers_list(ld, n, "ends", 2, 10, ends, FUSE_MAX_RANK)) == -2 ||
      (na = fuse__onnx_layers_list(ld, n, "axes", 3, 10, axes64, FUSE_MAX_RANK)) == -2 ||
      (ld->opset >= 10 &&
       (nst = fuse__onnx_layers_list(ld, n, "steps", 4, 10, steps, FUSE_MAX_RANK)) == -2))
    return FUSE_NONE;
  if (ns < 0 || ne < 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Slice needs starts and ends"), FUSE_NONE;
  if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE,
                           "Slice's starts, ends, axes and steps differ in length"),
           FUSE_NONE;
  for (i = 0; na >= 0 && i < na; i++) /* fuse_slice names an axis out of range */
    axes[i] = axes64[i] < -FUSE_MAX_RANK || axes64[i] > FUSE_MAX_RANK ? FUSE_MAX_RANK
                                                                      : (int)axes64[i];
  return fuse_slice(ld->g, x, ns, na >= 0 ? axes : NULL, starts, ends, nst >= 0 ? steps : NULL);
}

/* Split into the node's outputs: sizes from attribute split (before opset 13) or input split,
   else equal pieces (opset 18's num_outputs: the last piece may be smaller). */
static fuse_value fuse__onnx_split(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  fuse_graph *g = ld->g;
  int64_t *sizes;
  fuse_value *out;
  int count, k, rank = fuse_value_rank(g, x), axis = (int)fuse__onnx_attr_int(n, "axis", 0);
  int pieces = n->num_out, ok = 1;
  if (pieces < 1) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "Split has no outputs"), FUSE_NONE;
  sizes = (int64_t *)fuse__alloc(&g->alloc, (size_t)(pieces + 1) * sizeof(int64_t), 16);
  out = (fuse_value *)fuse__alloc(&g->alloc, (size_t)pieces * sizeof(fuse_value), 16);
  if (!sizes || !out) {
    fuse__free(&g->alloc, sizes);
    fuse__free(&g->alloc, out);
    return fuse__onnx_fail(ld, FUSE_ERROR_OUT_OF_MEMORY, "out of memory"), FUSE_NONE;
  }
  count = fuse__onnx_layers_list(ld, n, "split", 1, ld->opset < 2 ? 1 : 13, sizes, pieces + 1);
  if (count == -2) {
    ok = 0;
  } else if (count == -1 && ld->opset >= 18 && rank >= 1 && axis >= -rank && axis < rank) {
    int64_t dim = fuse_value_shape(g, x)[axis < 0 ? axis + rank : axis];
    int64_t chunk = (dim + pieces - 1) / pieces;
    if (fuse__onnx_attr_int(n, "num_outputs", pieces) != pieces) {
      fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "num_outputs differs from the number of outputs");
      ok = 0;
    } else if (chunk * (pieces - 1) >= dim) {
      fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "num_outputs leaves the last piece empty");
      ok = 0;
    }
    for (k = 0; k < pieces; k++) sizes[k] = k < pieces - 1 ? chunk : dim - chunk * (pieces - 1);
    count = pieces;
  }
  if (ok && count != -1 && count != pieces) {
    fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "split must have one size per output");
    ok = 0;
  }
  if (ok) ok = fuse_split(g, x, axis, pieces, count == -1 ? NULL : sizes, out) == FUSE_OK;
  for (k = 0; ok && k < pieces; k++) ok = fuse__onnx_layers_bind(ld, n, k, out[k]);
  fuse__free(&g->alloc, sizes);
  fuse__free(&g->alloc, out);
  return ok ? -2 : FUSE_NONE;
}

/* ConvTranspose (1-D and 2-D): output_shape or auto_pad SAME sets the pads as ONNX says, with
   a total below zero (more rows than the full output) becoming output padding. */
static fuse_value fuse__onnx_conv_transpose(fuse__onnx *ld, const fuse__onode *n, fuse_value x) {
  fuse_graph *g = ld->g;
  fuse_conv_transpose2d_attrs a;
  fuse__oattr pad_mode;
  int64_t want[FUSE_MAX_RANK + 2], kernel[8];
  int nd, i, count, same_upper = 0, has_mode;
  fuse_value w, y;
  if (fuse__onnx_rank4(ld, x) == FUSE_NONE) return FUSE_NONE;
  if (n->num_in < 2 || !n->in[1].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "ConvTranspose needs W"), FUSE_NONE;
  if ((w = fuse__onnx_value(ld, n->in[1])) == FUSE_NONE) return FUSE_NONE;
  nd = fuse_value_rank(g, x) - 2;
  if (fuse_value_rank(g, w) != nd + 2)
    return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "the weight's rank differs from the input's"),
           FUSE_NONE;
  memset(&a, 0, sizeof a);
  a.groups = (int)fuse__onnx_attr_int(n, "group", 1);
  if (a.groups < 1) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "group must be >= 1"), FUSE_NONE;
  if (!fuse__onnx_spatial_ints(ld, n, "strides", nd, 1, a.strides, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "dilations", nd, 1, a.dilation, 1, 1) ||
      !fuse__onnx_spatial_ints(ld, n, "pads", nd, 2, a.padding, 0, 0) ||
      !fuse__onnx_spatial_ints(ld, n, "output_padding", nd, 1, a.output_padding, 0, 0))
    return FUSE_NONE;
  count = fuse__onnx_attr_ints(n, "kernel_shape", kernel, 8);
  for (i = 0; i < count; i++)
    if (count != nd || kernel[i] != fuse_value_shape(g, w)[2 + i])
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "kernel_shape differs from the weight's shape"),
             FUSE_NONE;
  has_mode = fuse__onnx_attr(n, "auto_pad", &pad_mode) && !fuse__slice_is(pad_mode.s, "NOTSET");
  if (has_mode && fuse__slice_is(pad_mode.s, "VALID")) {
    memset(a.padding, 0, sizeof a.padding);
    has_mode = 0;
  } else if (has_mode) {
    if (!fuse__slice_is(pad_mode.s, "SAME_UPPER") && !fuse__slice_is(pad_mode.s, "SAME_LOWER"))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "auto_pad is not NOTSET, VALID, SAME_UPPER or SAME_LOWER"),
             FUSE_NONE;
    same_upper = fuse__slice_is(pad_mode.s, "SAME_UPPER");
  }
  count = fuse__onnx_attr_ints(n, "output_shape", want, FUSE_MAX_RANK + 2);
  if (count >= 0 && count != nd && count != nd + 2)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "output_shape has neither 1 nor 2 + 1 entries per "
                                                 "spatial dimension"),
           FUSE_NONE;
  if (count >= 0 || has_mode) {
    for (i = 0; i < nd; i++) {
      int h = nd == 1 ? 1 : i; /* the attributes' index of spatial dimension i */
      int64_t in = fuse_value_shape(g, x)[2 + i], k = fuse_value_shape(g, w)[2 + i];
      int64_t out = count >= 0 ? want[count - nd + i] : in * a.strides[h];
      int64_t total = a.strides[h] * (in - 1) + a.output_padding[h] +
                      (k - 1) * a.dilation[h] + 1 - out;
      if (out < 1 || out > FUSE__MAX_DIM)
        return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "output_shape is out of range"), FUSE_NONE;
      if (total < 0) { /* rows past the full output: zeros, as output padding */
        if (-total > 0x7fffffff - (int64_t)a.output_padding[h])
          return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "output_shape is past 2^31 rows"), FUSE_NONE;
        a.output_padding[h] += (int)-total;
        total = 0;
      }
      if (total > 0x7ffffffe)
        return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "output_shape crops past 2^31"), FUSE_NONE;
      a.padding[h] = (int)(same_upper ? total / 2 : total - total / 2);
      a.padding[h + 2] = (int)(total - a.padding[h]);
    }
  }
  y = fuse_conv_transpose2d(g, x, w, &a);
  if (y != FUSE_NONE && fuse__onnx_has_in(n, 2)) { /* bias: add(y, reshape(B, [1,K,1,1])) */
    int64_t shape[4];
    fuse_value b = fuse__onnx_value(ld, n->in[2]);
    if (b == FUSE_NONE) return FUSE_NONE;
    shape[0] = 1;
    shape[1] = fuse_value_shape(g, y)[1];
    shape[2] = shape[3] = 1;
    y = fuse_add(g, y, fuse_reshape(g, b, nd + 2, shape));
  }
  return y;
}

/* The activations attribute (strings, field 9) must list the defaults, direction by
   direction: Sigmoid then Tanh (LSTM: Sigmoid, Tanh, Tanh). 0 after a message otherwise. */
static int fuse__onnx_rnn_activations(fuse__onnx *ld, const fuse__onode *n, int per) {
  static const char *const defaults[3] = {"Sigmoid", "Tanh", "Tanh"};
  fuse__oattr a;
  fuse__pb b;
  uint32_t f, w;
  int k = 0;
  if (!fuse__onnx_attr(n, "activations", &a)) return 1;
  b = fuse__proto_of(a.msg);
  while (fuse__proto_tag(&b, &f, &w)) {
    fuse__slice s;
    if (f != 9 || w != 2) {
      if (!fuse__proto_skip(&b, w)) break;
      continue;
    }
    if (!fuse__proto_bytes(&b, &s)) break;
    if (!fuse__slice_is(s, defaults[k % per])) {
      char what[200];
      fuse__out o;
      o.buf = what;
      o.len = 0;
      o.cap = sizeof what;
      o.write = NULL;
      o.user = NULL;
      fuse__puts(&o, "activation '");
      fuse__puts(&o, fuse__onnx_cstr(ld, s));
      fuse__puts(&o, per == 3 ? "' is not supported (only the defaults Sigmoid, Tanh, Tanh)"
                              : "' is not supported (only the defaults Sigmoid, Tanh)");
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, what), 0;
    }
    k++;
  }
  return 1;
}

/* LSTM (gates 4) and GRU (gates 3): X, W, R, B, sequence_lens, initial_h, initial_c, P;
   outputs Y, Y_h, Y_c, each possibly unnamed. */
static fuse_value fuse__onnx_rnn(fuse__onnx *ld, const fuse__onode *n, fuse_value x, int gates) {
  fuse_graph *g = ld->g;
  fuse_rnn_attrs a;
  fuse__oattr dir;
  fuse_value in[7], y = FUSE_NONE, y_h = FUSE_NONE, y_c = FUSE_NONE;
  fuse_result r;
  int k, want[3];
  if (n->num_in < 3) return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "it needs X, W and R"), FUSE_NONE;
  if (gates == 4 && fuse__onnx_has_in(n, 7))
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "peepholes (input P) are not supported"),
           FUSE_NONE;
  if (gates == 4 && fuse__onnx_attr_int(n, "input_forget", 0) != 0)
    return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED, "input_forget=1 is not supported"), FUSE_NONE;
  if (!fuse__onnx_rnn_activations(ld, n, gates == 4 ? 3 : 2)) return FUSE_NONE;
  in[0] = x;
  for (k = 1; k < 7; k++) {
    in[k] = FUSE_NONE;
    if (k == 4 || (k == 6 && gates == 3) || !fuse__onnx_has_in(n, k)) continue;
    if ((in[k] = fuse__onnx_value(ld, n->in[k])) == FUSE_NONE) return FUSE_NONE;
  }
  memset(&a, 0, sizeof a);
  a.batch_first = (int)fuse__onnx_attr_int(n, "layout", 0);
  a.linear_before_reset = (int)fuse__onnx_attr_int(n, "linear_before_reset", 0);
  a.clip = fuse__onnx_attr_float(n, "clip", 0);
  a.hidden_size = (int)fuse__onnx_attr_int(n, "hidden_size", -1);
  if (a.hidden_size == -1 && fuse_value_rank(g, in[2]) == 3) /* from R [D, G * H, H] */
    a.hidden_size = (int)fuse_value_shape(g, in[2])[2];
  if (a.batch_first != 0 && a.batch_first != 1)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "layout must be 0 or 1"), FUSE_NONE;
  if (fuse__onnx_attr(n, "direction", &dir) && !fuse__slice_is(dir.s, "forward")) {
    if (fuse__slice_is(dir.s, "reverse")) a.direction = FUSE_RNN_REVERSE;
    else if (fuse__slice_is(dir.s, "bidirectional")) a.direction = FUSE_RNN_BIDIRECTIONAL;
    else
      return fuse__onnx_fail(ld, FUSE_ERROR_PARSE,
                             "direction is not forward, reverse or bidirectional"),
             FUSE_NONE;
  }
  if (fuse__onnx_has_in(n, 4)) { /* sequence_lens: only the full length */
    int64_t lens[256], T;
    int count, i;
    const int64_t *xs = fuse_value_shape(g, x);
    if (fuse_value_rank(g, x) != 3)
      return fuse__onnx_fail(ld, FUSE_ERROR_SHAPE, "X must be 3-D"), FUSE_NONE;
    T = xs[a.batch_first ? 1 : 0];
    if (!fuse__onnx_ints(ld, n->in[4], lens, 256, &count))
      return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                             "sequence_lens must be a constant (of at most 256 values) equal to "
                             "the sequence length"),
             FUSE_NONE;
    for (i = 0; i < count; i++)
      if (lens[i] != T)
        return fuse__onnx_fail(ld, FUSE_ERROR_UNSUPPORTED,
                               "sequence_lens shorter than the sequence are not supported"),
               FUSE_NONE;
  }
  for (k = 0; k < 3; k++) want[k] = k < n->num_out && n->out[k].n > 0;
  if (gates == 4)
    r = fuse_lstm(g, x, in[1], in[2], in[3], in[5], in[6], &a, want[0] ? &y : NULL,
                  want[1] ? &y_h : NULL, want[2] ? &y_c : NULL);
  else
    r = fuse_gru(g, x, in[1], in[2], in[3], in[5], &a, want[0] ? &y : NULL, want[1] ? &y_h : NULL);
  if (r != FUSE_OK) return FUSE_NONE;
  if (gates == 3 && want[2])
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "GRU has no third output"), FUSE_NONE;
  if (!fuse__onnx_layers_bind(ld, n, 0, y) || !fuse__onnx_layers_bind(ld, n, 1, y_h) ||
      !fuse__onnx_layers_bind(ld, n, 2, y_c))
    return FUSE_NONE;
  return -2;
}

static fuse_value fuse__onnx_convert_layers(fuse__onnx *ld, const fuse__onode *n) {
  static const char *const ops[] = {"Slice", "Split", "ConvTranspose", "LSTM", "GRU"};
  fuse_value x;
  int k;
  for (k = 0; k < 5 && !fuse__slice_is(n->op, ops[k]); k++) {
  }
  if (k == 5) return -3;
  if (n->num_in < 1 || !n->in[0].n)
    return fuse__onnx_fail(ld, FUSE_ERROR_PARSE, "the node has no input"), FUSE_NONE;
  if ((x = fuse__onnx_value(ld, n->in[0])) == FUSE_NONE) return FUSE_NONE;
  switch (k) {
  case 0: return fuse__onnx_slice(ld, n, x);
  case 1: return fuse__onnx_split(ld, n, x);
  case 2: return fuse__onnx_conv_transpose(ld, n, x);
  default: return fuse__onnx_rnn(ld, n, x, k == 3 ? 4 : 3);
  }
}

/* the ONNX operators this file converts (the loader lists the others as unsupported) */
static const char *const fuse__onnx_layers_ops[] = {"Slice", "Split", "ConvTranspose", "LSTM",
                                                    "GRU", NULL};
