/* ------------------------------------------------------------ builders: layers -- */
/* slice and split, transposed convolution, 1-D convolution and pools, LSTM / GRU */

/* ONNX Slice's index rule for one axis of size dim: start and end count from the end when
   negative and clamp to the axis ([0, dim] going up, [0, dim - 1] / [-1, dim - 1] going down);
   the step (never 0) clamps to [-dim, dim], which selects the same elements. Returns how many
   elements the axis keeps (0: none). */
static int64_t fuse__slice_axis(int64_t dim, int64_t start, int64_t end, int64_t *step,
                                int64_t *first) {
  int64_t s = *step;
  if (start < 0) start += dim; /* INT64_MIN + dim does not wrap: dim >= 1 */
  if (end < 0) end += dim;
  if (s > dim) s = dim;
  if (s < -dim) s = -dim;
  *step = s;
  if (s > 0) {
    start = start < 0 ? 0 : start > dim ? dim : start;
    end = end < 0 ? 0 : end > dim ? dim : end;
    *first = start;
    return end > start ? (end - start - 1) / s + 1 : 0;
  }
  start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
  end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
  *first = start;
  return start > end ? (start - end - 1) / -s + 1 : 0;
}

FUSE_API fuse_value fuse_slice(fuse_graph *g, fuse_value x, int n, const int *axes,
                               const int64_t *starts, const int64_t *ends, const int64_t *steps) {
  fuse__node *nx, *node;
  int64_t shape[FUSE_MAX_RANK], first[FUSE_MAX_RANK], step[FUSE_MAX_RANK];
  int seen[FUSE_MAX_RANK], i, d;
  if (!fuse__begin(g, "slice", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "slice: input %V is a scalar", x);
  if (n < 0 || n > nx->rank)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "slice: %d axes given for input %S (%V), which has %d", n, nx->rank,
                      nx->shape, x, nx->rank);
  if (n > 0 && (!starts || !ends))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "slice: %s is NULL for %d axes",
                      starts ? "ends" : "starts", n);
  for (d = 0; d < nx->rank; d++) {
    shape[d] = nx->shape[d];
    first[d] = 0;
    step[d] = 1;
    seen[d] = 0;
  }
  for (i = 0; i < n; i++) {
    int64_t count, s = steps ? steps[i] : 1;
    if (!fuse__axis(g, "slice", axes ? axes[i] : i, nx->rank, 0, nx, &d)) return FUSE_NONE;
    if (seen[d]++)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "slice: axis %d of %S is listed twice",
                        d, nx->rank, nx->shape);
    if (s == 0)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "slice: the step along axis %d is 0", d);
    count = fuse__slice_axis(nx->shape[d], starts[i], ends[i], &s, &first[d]);
    if (count == 0)
      return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                        "slice: start %D, end %D, step %D select no element of axis %d of %S "
                        "(%V); zero-sized tensors are not supported",
                        starts[i], ends[i], steps ? steps[i] : (int64_t)1, d, nx->rank,
                        nx->shape, x);
    shape[d] = count;
    step[d] = s;
  }
  if (!(node = fuse__new_node(g, FUSE__OP_SLICE, 1, &x, nx->rank, shape))) return FUSE_NONE;
  nx = fuse__node_of(g, x); /* the node array may have moved */
  for (d = 0; d < nx->rank; d++) {
    node->a.slice.start[d] = first[d];
    node->a.slice.step[d] = step[d];
  }
  return fuse__id(g, node);
}

FUSE_API fuse_result fuse_split(fuse_graph *g, fuse_value x, int axis, int n,
                                const int64_t *sizes, fuse_value *out) {
  fuse__node *nx;
  int64_t dim, at = 0, total = 0;
  int i, ax;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (out && n > 0)
    for (i = 0; i < n; i++) out[i] = FUSE_NONE;
  if (!fuse__begin(g, "split", 1, &x)) return g->status;
  nx = fuse__node_of(g, x);
  if (!out || n < 1)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "split: %s (n=%d)",
                      out ? "needs at least one piece" : "out is NULL", n),
           g->status;
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "split: input %V is a scalar", x), g->status;
  if (!fuse__axis(g, "split", axis, nx->rank, 0, nx, &ax)) return g->status;
  dim = nx->shape[ax];
  if (!sizes && dim % n)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "split: axis %d of %S (%V) has %D elements, not divisible into %d equal "
                      "pieces",
                      ax, nx->rank, nx->shape, x, dim, n),
           g->status;
  for (i = 0; sizes && i < n; i++) {
    if (sizes[i] < 1 || sizes[i] > dim)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "split: piece %d has size %D; sizes must be 1..%D (axis %d of %S)", i,
                        sizes[i], dim, ax, nx->rank, nx->shape),
             g->status;
    total += sizes[i];
  }
  if (sizes && total != dim)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "split: the sizes add up to %D, but axis %d of %S (%V) has %D elements",
                      total, ax, nx->rank, nx->shape, x, dim),
           g->status;
  for (i = 0; i < n; i++) {
    int64_t len = sizes ? sizes[i] : dim / n, end = at + len;
    if ((out[i] = fuse_slice(g, x, 1, &ax, &at, &end, NULL)) == FUSE_NONE) return g->status;
    at = end;
  }
  return FUSE_OK;
}

/* ---- transposed convolution */

static fuse_value fuse__conv_transpose1d(fuse_graph *g, fuse_value x, fuse_value w,
                                         const fuse_conv_transpose2d_attrs *attrs);

FUSE_API fuse_value fuse_conv_transpose2d(fuse_graph *g, fuse_value x, fuse_value w,
                                          const fuse_conv_transpose2d_attrs *attrs) {
  fuse_value in[2];
  fuse_conv_transpose2d_attrs a;
  fuse__node *nx, *nw, *n;
  int64_t out[4], C;
  int i;
  in[0] = x;
  in[1] = w;
  if (!fuse__begin(g, "conv_transpose2d", 2, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  nw = fuse__node_of(g, w);
  if (nx->rank == 3) return fuse__conv_transpose1d(g, x, w, attrs);
  if (nx->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: input %S (%V) must be 4-D [N,C,H,W] (or 3-D [N,C,L])",
                      nx->rank, nx->shape, x);
  if (nw->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: weight %S (%V) must be 4-D [C,K/groups,KH,KW]",
                      nw->rank, nw->shape, w);
  memset(&a, 0, sizeof a);
  if (attrs) a = *attrs;
  if (!fuse__attr_positive(g, "conv_transpose2d", "strides", a.strides, 2, 1, 1) ||
      !fuse__attr_positive(g, "conv_transpose2d", "dilation", a.dilation, 2, 1, 1) ||
      !fuse__attr_padding(g, "conv_transpose2d", a.padding) ||
      !fuse__attr_positive(g, "conv_transpose2d", "groups", &a.groups, 1, 1, 1))
    return FUSE_NONE;
  if (a.output_padding[0] < 0 || a.output_padding[1] < 0)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "conv_transpose2d: output_padding [%d,%d] must be >= 0",
                      a.output_padding[0], a.output_padding[1]);
  C = nx->shape[1];
  if (nw->shape[0] != C)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: input %S (%V) has %D channels, weight %S (%V) expects "
                      "%D (its first dimension)",
                      nx->rank, nx->shape, x, C, nw->rank, nw->shape, w, nw->shape[0]);
  if (C % a.groups)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: %D input channels are not divisible by groups=%d", C,
                      a.groups);
  out[0] = nx->shape[0];
  out[1] = nw->shape[1] * a.groups;
  for (i = 0; i < 2; i++) {
    int64_t full = (nx->shape[2 + i] - 1) * a.strides[i] +
                   (int64_t)a.dilation[i] * (nw->shape[2 + i] - 1) + 1 + a.output_padding[i];
    out[2 + i] = full - a.padding[i] - a.padding[i + 2];
    if (out[2 + i] < 1)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "conv_transpose2d: padding [%d,%d,%d,%d] crops all %D %s of the output "
                        "of input %S with kernel %S",
                        a.padding[0], a.padding[1], a.padding[2], a.padding[3], full,
                        i ? "columns" : "rows", nx->rank, nx->shape, nw->rank, nw->shape);
  }
  if (!fuse__check_shape(g, "conv_transpose2d", 4, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_CONV_TRANSPOSE2D, 2, in, 4, out))) return FUSE_NONE;
  n->a.convt = a;
  return fuse__id(g, n);
}

/* x [N, C, L], w [C, K / groups, KL]: the 2-D op over [N, C, 1, L] */
static fuse_value fuse__conv_transpose1d(fuse_graph *g, fuse_value x, fuse_value w,
                                         const fuse_conv_transpose2d_attrs *attrs) {
  const char *who = "conv_transpose2d";
  const fuse__node *nw = fuse__node_of(g, w);
  fuse_conv_transpose2d_attrs a;
  if (nw->rank != 3)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv_transpose2d: 1-D input %S (%V) needs a 3-D weight [C,K/groups,KL], "
                      "not %S (%V)",
                      fuse__node_of(g, x)->rank, fuse__node_of(g, x)->shape, x, nw->rank,
                      nw->shape, w);
  memset(&a, 0, sizeof a);
  if (attrs) a = *attrs;
  if (!fuse__1d_default(g, who, x, "strides", a.strides[0], 1) ||
      !fuse__1d_default(g, who, x, "dilation", a.dilation[0], 1) ||
      !fuse__1d_default(g, who, x, "padding (top)", a.padding[0], 0) ||
      !fuse__1d_default(g, who, x, "padding (bottom)", a.padding[2], 0) ||
      !fuse__1d_default(g, who, x, "output_padding", a.output_padding[0], 0))
    return FUSE_NONE;
  return fuse__as_1d(g, fuse_conv_transpose2d(g, fuse__as_2d(g, x), fuse__as_2d(g, w), &a));
}

/* ---- LSTM / GRU: unrolled over time from matmul, slice, add, mul, sigmoid and tanh */

/* x[from : from + count] along axis (a shorthand of fuse_slice) */
static fuse_value fuse__slice1(fuse_graph *g, fuse_value x, int axis, int64_t from, int64_t count) {
  int64_t end = from + count;
  return fuse_slice(g, x, 1, &axis, &from, &end, NULL);
}

/* Rows row0 .. row0 + rows of v[d] for v [D, R, cols] (a matrix [rows, cols], or [cols, rows]
   when transposed) or v [D, R] (a vector [rows]): cut from the data when v is a constant, so
   the plan holds the weights ready; otherwise slice, reshape (and transpose) at run time. */
static fuse_value fuse__rnn_part(fuse_graph *g, fuse_value v, int d, int64_t row0, int64_t rows,
                                 int transpose) {
  const fuse__node *n = fuse__node_of(g, v);
  int rank = n->rank - 1;
  int64_t R = n->shape[1], cols = n->rank == 3 ? n->shape[2] : 1, shape[2], i, j;
  fuse_value p;
  shape[0] = transpose ? cols : rows;
  shape[1] = transpose ? rows : cols;
  if (n->op == FUSE__OP_CONST) {
    const float *src;
    float *dst;
    if (!fuse__const_floats(g, v) || (p = fuse_constant(g, NULL, rank, shape, NULL)) == FUSE_NONE)
      return FUSE_NONE;
    src = g->nodes[v].data + ((int64_t)d * R + row0) * cols; /* nodes may have moved */
    dst = g->nodes[p].data;
    for (i = 0; i < rows; i++)
      for (j = 0; j < cols; j++) dst[transpose ? j * rows + i : i * cols + j] = src[i * cols + j];
    return p;
  }
  {
    int axes[2] = {0, 1};
    int64_t from[2], to[2], plain[2];
    from[0] = d, from[1] = row0, to[0] = d + 1, to[1] = row0 + rows;
    plain[0] = rows, plain[1] = cols;
    p = fuse_reshape(g, fuse_slice(g, v, 2, axes, from, to, NULL), rank, plain);
    return transpose ? fuse_transpose(g, p, NULL) : p;
  }
}

/* The sizes of an LSTM / GRU and its checked operands. */
typedef struct fuse__rnn {
  fuse_graph *g;
  const char *who; /* "lstm" or "gru" */
  fuse_rnn_attrs a;
  int gates; /* 4 (i, o, f, c) or 3 (z, r, h) */
  int64_t T, N, I, H, D;
  fuse_value x, w, r, b, h0, c0;
  fuse_value rows;           /* x as [T * N, I], time-major */
  fuse_value *steps;         /* T hidden states of one direction, in time order */
  fuse_value h_last[2], c_last[2], y_dir[2];
} fuse__rnn;

/* Checks one operand's shape against the one expected; `what` names its dimensions. */
static int fuse__rnn_shape(fuse__rnn *s, const char *name, fuse_value v, int64_t d0, int64_t d1,
                           int64_t d2, int rank, const char *what) {
  const fuse__node *n = fuse__node_of(s->g, v);
  int64_t want[3];
  want[0] = d0, want[1] = d1, want[2] = d2;
  if (n->rank == rank && memcmp(n->shape, want, (size_t)rank * sizeof(int64_t)) == 0) return 1;
  fuse__fail(s->g, FUSE_ERROR_SHAPE, "%s: %s %S (%V) must be %S %s", s->who, name, n->rank,
             n->shape, v, rank, want, what);
  return 0;
}

/* Checks the operands and attributes of fuse_lstm / fuse_gru; fills s. */
static int fuse__rnn_begin(fuse__rnn *s, fuse_graph *g, const char *who, int gates,
                           const fuse_value *ops, const fuse_rnn_attrs *a) {
  fuse_value in[6];
  const fuse__node *nx;
  int k, n = 0, G = gates;
  const char *state = a && a->batch_first ? "[batch, num_directions, hidden_size]"
                                          : "[num_directions, batch, hidden_size]";
  memset(s, 0, sizeof *s);
  s->g = g;
  s->who = who;
  s->gates = gates;
  s->x = ops[0], s->w = ops[1], s->r = ops[2], s->b = ops[3], s->h0 = ops[4], s->c0 = ops[5];
  for (k = 0; k < 6; k++) /* b, h0, c0 may be FUSE_NONE */
    if (k < 3 || ops[k] != FUSE_NONE) in[n++] = ops[k];
  if (!fuse__begin(g, who, n, in)) return 0;
  if (!a)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "%s: attributes are NULL (hidden_size is required)", who),
           0;
  s->a = *a;
  if (!fuse__enum_in((int)a->direction, FUSE_RNN_FORWARD, FUSE_RNN_BIDIRECTIONAL))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "%s: direction %d is not forward (0), reverse (1) or bidirectional (2)",
                      who, (int)a->direction),
           0;
  if (a->hidden_size < 1)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: hidden_size %d must be >= 1", who,
                      a->hidden_size),
           0;
  if (!(a->clip >= 0))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "%s: clip=%f must be >= 0 (0: no clipping)", who, (double)a->clip),
           0;
  nx = fuse__node_of(g, s->x);
  if (nx->rank != 3)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: input %S (%V) must be 3-D %s", who, nx->rank,
                      nx->shape, s->x,
                      a->batch_first ? "[batch, seq_length, input_size]"
                                     : "[seq_length, batch, input_size]"),
           0;
  s->T = nx->shape[a->batch_first ? 1 : 0];
  s->N = nx->shape[a->batch_first ? 0 : 1];
  s->I = nx->shape[2];
  s->H = a->hidden_size;
  s->D = a->direction == FUSE_RNN_BIDIRECTIONAL ? 2 : 1;
  if (!fuse__rnn_shape(s, "w", s->w, s->D, G * s->H, s->I, 3,
                       "[num_directions, gates * hidden_size, input_size]") ||
      !fuse__rnn_shape(s, "r", s->r, s->D, G * s->H, s->H, 3,
                       "[num_directions, gates * hidden_size, hidden_size]") ||
      (s->b != FUSE_NONE && !fuse__rnn_shape(s, "b", s->b, s->D, 2 * G * s->H, 0, 2,
                                              "[num_directions, 2 * gates * hidden_size]")))
    return 0;
  for (k = 0; k < 2; k++) {
    fuse_value v = k ? s->c0 : s->h0;
    if (v == FUSE_NONE) continue;
    if (!fuse__rnn_shape(s, k ? "c0" : "h0", v, a->batch_first ? s->N : s->D,
                         a->batch_first ? s->D : s->N, s->H, 3, state))
      return 0;
  }
  return 1;
}

/* The rows of x, time-major, and x times w[d]^T (+ the input bias) for all steps at once. */
static fuse_value fuse__rnn_input_gates(fuse__rnn *s, int d) {
  fuse_graph *g = s->g;
  int64_t GH = s->gates * s->H;
  fuse_value xw;
  if (s->rows == FUSE_NONE) {
    int64_t shape[2];
    int perm[3] = {1, 0, 2};
    shape[0] = s->T * s->N;
    shape[1] = s->I;
    s->rows = fuse_reshape(g, s->a.batch_first ? fuse_transpose(g, s->x, perm) : s->x, 2, shape);
  }
  xw = fuse_matmul(g, s->rows, fuse__rnn_part(g, s->w, d, 0, GH, 1));
  if (s->b != FUSE_NONE) xw = fuse_add(g, xw, fuse__rnn_part(g, s->b, d, 0, GH, 0));
  return xw;
}

/* An initial state of direction d as [N, H], or FUSE_NONE for zeros. */
static fuse_value fuse__rnn_state(fuse__rnn *s, fuse_value v, int d) {
  int perm[3] = {1, 0, 2};
  if (v == FUSE_NONE) return FUSE_NONE;
  if (s->a.batch_first) v = fuse_transpose(s->g, v, perm);
  return fuse__rnn_part(s->g, v, d, 0, s->N, 0);
}

/* Clips a gate's input to [-clip, clip] when asked. */
static fuse_value fuse__rnn_clip(const fuse__rnn *s, fuse_value v) {
  return s->a.clip > 0 ? fuse_clip(s->g, v, -s->a.clip, s->a.clip) : v;
}

static void fuse__lstm_direction(fuse__rnn *s, int d) {
  fuse_graph *g = s->g;
  int64_t H = s->H, t;
  int reverse = s->a.direction == FUSE_RNN_REVERSE || d == 1;
  fuse_value xw = fuse__rnn_input_gates(s, d);
  fuse_value rt = fuse__rnn_part(g, s->r, d, 0, 4 * H, 1);
  fuse_value rb = s->b != FUSE_NONE ? fuse__rnn_part(g, s->b, d, 4 * H, 4 * H, 0) : FUSE_NONE;
  fuse_value h = fuse__rnn_state(s, s->h0, d), c = fuse__rnn_state(s, s->c0, d);
  for (t = 0; t < s->T && g->status == FUSE_OK; t++) {
    int64_t step = reverse ? s->T - 1 - t : t;
    fuse_value gates = fuse__slice1(g, xw, 0, step * s->N, s->N), sig, i, o, f, cell;
    if (h != FUSE_NONE) { /* h r^T (+ rb) + the input's part: one fused step */
      fuse_value hr = fuse_matmul(g, h, rt);
      if (rb != FUSE_NONE) hr = fuse_add(g, hr, rb);
      gates = fuse_add(g, hr, gates);
    } else if (rb != FUSE_NONE) {
      gates = fuse_add(g, gates, rb);
    }
    gates = fuse__rnn_clip(s, gates);
    sig = fuse_sigmoid(g, fuse__slice1(g, gates, 1, 0, 3 * H));
    i = fuse__slice1(g, sig, 1, 0, H);
    o = fuse__slice1(g, sig, 1, H, H);
    f = fuse__slice1(g, sig, 1, 2 * H, H);
    cell = fuse_tanh(g, fuse__slice1(g, gates, 1, 3 * H, H));
    cell = fuse_mul(g, i, cell);
    c = c != FUSE_NONE ? fuse_add(g, fuse_mul(g, f, c), cell) : cell;
    h = fuse_mul(g, o, fuse_tanh(g, c));
    s->steps[step] = h;
  }
  s->h_last[d] = h;
  s->c_last[d] = c;
}

static void fuse__gru_direction(fuse__rnn *s, int d) {
  fuse_graph *g = s->g;
  int64_t H = s->H, t;
  int reverse = s->a.direction == FUSE_RNN_REVERSE || d == 1;
  fuse_value xw = fuse__rnn_input_gates(s, d);
  fuse_value r_zr = fuse__rnn_part(g, s->r, d, 0, 2 * H, 1);
  fuse_value r_h = fuse__rnn_part(g, s->r, d, 2 * H, H, 1);
  fuse_value rb_zr = FUSE_NONE, rb_h = FUSE_NONE;
  fuse_value h = fuse__rnn_state(s, s->h0, d);
  if (s->b != FUSE_NONE) {
    rb_zr = fuse__rnn_part(g, s->b, d, 3 * H, 2 * H, 0);
    rb_h = fuse__rnn_part(g, s->b, d, 5 * H, H, 0);
  }
  for (t = 0; t < s->T && g->status == FUSE_OK; t++) {
    int64_t step = reverse ? s->T - 1 - t : t;
    fuse_value xt = fuse__slice1(g, xw, 0, step * s->N, s->N);
    fuse_value zr = fuse__slice1(g, xt, 1, 0, 2 * H), z, r, hr = FUSE_NONE, cand;
    if (h != FUSE_NONE) {
      fuse_value m = fuse_matmul(g, h, r_zr);
      if (rb_zr != FUSE_NONE) m = fuse_add(g, m, rb_zr);
      zr = fuse_add(g, m, zr);
    } else if (rb_zr != FUSE_NONE) {
      zr = fuse_add(g, zr, rb_zr);
    }
    zr = fuse_sigmoid(g, fuse__rnn_clip(s, zr));
    z = fuse__slice1(g, zr, 1, 0, H);
    r = fuse__slice1(g, zr, 1, H, H);
    /* the candidate: linear_before_reset = 1: r * (h R_h^T + Rb_h); 0: (r * h) R_h^T + Rb_h */
    if (h != FUSE_NONE) hr = fuse_matmul(g, s->a.linear_before_reset ? h : fuse_mul(g, r, h), r_h);
    if (rb_h != FUSE_NONE) hr = hr != FUSE_NONE ? fuse_add(g, hr, rb_h) : rb_h;
    if (hr != FUSE_NONE && s->a.linear_before_reset) hr = fuse_mul(g, r, hr);
    cand = fuse__slice1(g, xt, 1, 2 * H, H);
    if (hr != FUSE_NONE) cand = fuse_add(g, hr, cand);
    cand = fuse_tanh(g, fuse__rnn_clip(s, cand));
    /* h' = (1 - z) * cand + z * h = cand + z * (h - cand) */
    h = h != FUSE_NONE ? fuse_add(g, cand, fuse_mul(g, z, fuse_sub(g, h, cand)))
                       : fuse_sub(g, cand, fuse_mul(g, z, cand));
    s->steps[step] = h;
  }
  s->h_last[d] = h;
}

/* y [T, D, N, H] (batch_first: [N, T, D, H]) from the steps of direction d, and y_h / y_c. */
static void fuse__rnn_collect(fuse__rnn *s, int d, int want_y) {
  int64_t shape[4];
  if (!want_y) return;
  shape[0] = s->T, shape[1] = 1, shape[2] = s->N, shape[3] = s->H;
  s->y_dir[d] = fuse_reshape(s->g, fuse_concat(s->g, (int)s->T, s->steps, 0), 4, shape);
}

/* [D, N, H] (batch_first: [N, D, H]) from the last states of the directions. */
static fuse_value fuse__rnn_final(fuse__rnn *s, const fuse_value *last) {
  int64_t shape[3];
  int perm[3] = {1, 0, 2};
  fuse_value v;
  shape[0] = s->D, shape[1] = s->N, shape[2] = s->H;
  v = fuse_reshape(s->g, s->D == 2 ? fuse_concat(s->g, 2, last, 0) : last[0], 3, shape);
  return s->a.batch_first ? fuse_transpose(s->g, v, perm) : v;
}

/* Both layers: check, unroll each direction, gather the outputs asked for. */
static fuse_result fuse__rnn_build(fuse_graph *g, const char *who, int gates,
                                   const fuse_value *ops, const fuse_rnn_attrs *a, fuse_value *y,
                                   fuse_value *y_h, fuse_value *y_c) {
  fuse__rnn s;
  int d;
  if (y) *y = FUSE_NONE;
  if (y_h) *y_h = FUSE_NONE;
  if (y_c) *y_c = FUSE_NONE;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!fuse__rnn_begin(&s, g, who, gates, ops, a)) return g->status;
  if ((uint64_t)s.T > (uint64_t)0x7fffffff / sizeof(fuse_value))
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED, "%s: %D time steps are too many to unroll", who,
                      s.T),
           g->status;
  s.steps = (fuse_value *)fuse__alloc(&g->alloc, (size_t)s.T * sizeof(fuse_value), 16);
  if (!s.steps) return fuse__oom(g, who), g->status;
  s.rows = FUSE_NONE;
  for (d = 0; d < s.D && g->status == FUSE_OK; d++) {
    if (gates == 4) fuse__lstm_direction(&s, d);
    else fuse__gru_direction(&s, d);
    fuse__rnn_collect(&s, d, y != NULL);
  }
  fuse__free(&g->alloc, s.steps);
  if (g->status != FUSE_OK) return g->status;
  if (y) {
    int perm[4] = {2, 0, 1, 3};
    fuse_value v = s.D == 2 ? fuse_concat(g, 2, s.y_dir, 1) : s.y_dir[0];
    *y = s.a.batch_first ? fuse_transpose(g, v, perm) : v;
  }
  if (y_h) *y_h = fuse__rnn_final(&s, s.h_last);
  if (y_c) *y_c = fuse__rnn_final(&s, s.c_last);
  if (g->status != FUSE_OK) {
    if (y) *y = FUSE_NONE;
    if (y_h) *y_h = FUSE_NONE;
    if (y_c) *y_c = FUSE_NONE;
  }
  return g->status;
}

FUSE_API fuse_result fuse_lstm(fuse_graph *g, fuse_value x, fuse_value w, fuse_value r,
                               fuse_value b, fuse_value h0, fuse_value c0,
                               const fuse_rnn_attrs *a, fuse_value *y, fuse_value *y_h,
                               fuse_value *y_c) {
  fuse_value ops[6];
  ops[0] = x, ops[1] = w, ops[2] = r, ops[3] = b, ops[4] = h0, ops[5] = c0;
  return fuse__rnn_build(g, "lstm", 4, ops, a, y, y_h, y_c);
}

FUSE_API fuse_result fuse_gru(fuse_graph *g, fuse_value x, fuse_value w, fuse_value r,
                              fuse_value b, fuse_value h0, const fuse_rnn_attrs *a,
                              fuse_value *y, fuse_value *y_h) {
  fuse_value ops[6];
  ops[0] = x, ops[1] = w, ops[2] = r, ops[3] = b, ops[4] = h0, ops[5] = FUSE_NONE;
  return fuse__rnn_build(g, "gru", 3, ops, a, y, y_h, NULL);
}
