/* ---------------------------------------------------------------- builders -- */

/* Whether an enum argument holds one of its values lo..hi (through int: with short enums, as
   arm-none-eabi's, a direct comparison is "always false" to the compiler). */
static int fuse__enum_in(int v, int lo, int hi) { return v >= lo && v <= hi; }

/* Checks the common preconditions of a builder: a usable graph and valid operands. */
static int fuse__begin(fuse_graph *g, const char *op, int n, const fuse_value *in) {
  int i;
  if (!g || g->status != FUSE_OK) return 0;
  for (i = 0; i < n; i++) {
    if (in[i] == FUSE_NONE)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: operand %d is FUSE_NONE (did an earlier call fail?)", op, i + 1),
             0;
    if (!fuse__valid(g, in[i]))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: operand %d is %d, not a value of this graph (it has %d)", op, i + 1,
                        in[i], g->num_nodes),
             0;
  }
  return 1;
}

/* Validates a user-given shape: rank 0..FUSE_MAX_RANK, dims 1..FUSE__MAX_DIM, bytes in range. */
static int fuse__check_shape(fuse_graph *g, const char *who, int rank, const int64_t *shape) {
  int i;
  uint64_t n = 1;
  if (rank < 0 || rank > FUSE_MAX_RANK)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: rank %d is outside 0..%d", who, rank,
                      FUSE_MAX_RANK),
           0;
  if (rank > 0 && !shape)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: shape is NULL for rank %d", who, rank), 0;
  uint64_t max_elems = FUSE__MAX_BYTES / sizeof(float); /* the same on every target; memory
                                                          is checked where it is allocated */
  for (i = 0; i < rank; i++) {
    if (shape[i] < 1 || shape[i] > FUSE__MAX_DIM)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: dimension %d of %S is %D; dimensions must be 1..2147483647", who, i,
                        rank, shape, shape[i]),
             0;
    if (n > max_elems / (uint64_t)shape[i]) /* checked before multiplying: never wraps */
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: shape %S has too many elements (a tensor is at most 2^50 bytes)",
                        who, rank, shape),
             0;
    n *= (uint64_t)shape[i];
  }
  return 1;
}

static fuse__node *fuse__node_of(fuse_graph *g, fuse_value v) { return &g->nodes[v]; }

static void fuse__composite_free(fuse_graph *g, fuse__composite *c) {
  fuse__free(&g->alloc, c->name);
  fuse__free(&g->alloc, c->function);
  fuse__free(&g->alloc, c->codegen);
}

FUSE_API fuse_graph *fuse_graph_create(const fuse_allocator *alloc) {
  fuse_allocator a;
  fuse_graph *g;
  memset(&a, 0, sizeof a);
  if (alloc) {
    if (!alloc->alloc != !alloc->free) return NULL; /* both or neither */
    a = *alloc;
  }
  g = (fuse_graph *)fuse__alloc(&a, sizeof *g, 16);
  if (!g) return NULL;
  memset(g, 0, sizeof *g);
  g->alloc = a;
  return g;
}

FUSE_API void fuse_graph_destroy(fuse_graph *g) {
  int i;
  fuse_allocator a;
  if (!g) return;
  a = g->alloc;
  for (i = 0; i < g->num_nodes; i++) {
    fuse__free(&a, g->nodes[i].in);
    fuse__free(&a, g->nodes[i].name);
    fuse__free(&a, g->nodes[i].data);
  }
  fuse__free(&a, g->nodes);
  fuse__free(&a, g->inputs);
  fuse__free(&a, g->outputs);
  fuse__free(&a, g->name_slots);
  for (i = 0; i < g->num_composites; i++) fuse__composite_free(g, &g->composites[i]);
  fuse__free(&a, g->composites);
  fuse__unmap(g->mapped, g->mapped_size);
  fuse__free(&a, g);
}

FUSE_API fuse_result fuse_graph_status(const fuse_graph *g) {
  return g ? g->status : FUSE_ERROR_INVALID_ARGUMENT;
}

FUSE_API const char *fuse_graph_error(const fuse_graph *g) {
  return g ? g->error : "the graph is NULL (fuse_graph_create ran out of memory?)";
}

/* An input or a constant; a constant's values are copied from data, zeros when data is NULL,
   left for the caller to fill when uninit is 1, not allocated when it is 2 (borrowed). */
static fuse_value fuse__leaf(fuse_graph *g, int op, const char *name, int type, int rank,
                             const int64_t *shape, const void *data, int uninit) {
  const char *who = fuse__ops[op].name;
  char named[96]; /* "input 'x'": messages about the shape name the value */
  fuse__node *n;
  fuse_value v;
  size_t bytes;
  fuse__out o;
  o.buf = named;
  o.len = 0;
  o.cap = sizeof named;
  o.write = NULL;
  o.user = NULL;
  fuse__puts(&o, who);
  if (name) {
    fuse__puts(&o, " '");
    fuse__puts(&o, name);
    fuse__puts(&o, "'");
  }
  if (!fuse__begin(g, who, 0, NULL) || !fuse__check_shape(g, named, rank, shape)) return FUSE_NONE;
  if (!fuse__enum_in(type, FUSE_FLOAT32, FUSE_INT32))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: element type %d is not a fuse_type",
                      named, type);
  if (name && fuse__find(g, name) != FUSE_NONE) {
    fuse__set_name(g, FUSE_NONE, name, who); /* reports the clash */
    return FUSE_NONE;
  }
  if (op == FUSE__OP_INPUT) {
    fuse_value *ins = (fuse_value *)fuse__grow(&g->alloc, g->inputs, g->num_inputs,
                                               &g->cap_inputs, g->num_inputs + 1, sizeof(fuse_value));
    if (!ins) return fuse__oom(g, who), FUSE_NONE;
    g->inputs = ins;
  }
  if (!(n = fuse__new_node(g, op, 0, NULL, rank, shape))) return FUSE_NONE;
  v = fuse__id(g, n);
  n->type = type;
  if (op == FUSE__OP_CONST) {
    if ((uint64_t)fuse__numel(n->rank, n->shape) > (uint64_t)((size_t)-1 / 2 / sizeof(float))) {
      g->num_nodes--;
      return fuse__fail(g, FUSE_ERROR_OUT_OF_MEMORY,
                        "%s: %S is larger than this target's address space", named, rank, shape);
    }
    bytes = (size_t)fuse__numel(n->rank, n->shape) * fuse__type_size(type); /* shape may have moved */
    if (uninit != 2) { /* 2: borrowed, the caller points raw at the file */
      n->data = (float *)fuse__alloc(&g->alloc, bytes, FUSE__ALIGN);
      if (!n->data) {
        g->num_nodes--;
        return fuse__oom(g, named), FUSE_NONE;
      }
      if (uninit) fuse__prefault(n->data, bytes); /* the loader writes it all */
      if (data) memcpy(n->data, data, bytes);
      else if (!uninit) memset(n->data, 0, bytes);
    }
  }
  if (!fuse__set_name(g, v, name, who)) {
    fuse__free(&g->alloc, n->data);
    g->num_nodes--;
    return FUSE_NONE;
  }
  if (op == FUSE__OP_INPUT) g->inputs[g->num_inputs++] = v;
  return v;
}

FUSE_API fuse_value fuse_input(fuse_graph *g, const char *name, int rank, const int64_t *shape) {
  return fuse__leaf(g, FUSE__OP_INPUT, name, FUSE_FLOAT32, rank, shape, NULL, 0);
}

FUSE_API fuse_value fuse_constant(fuse_graph *g, const char *name, int rank,
                                  const int64_t *shape, const float *data) {
  return fuse__leaf(g, FUSE__OP_CONST, name, FUSE_FLOAT32, rank, shape, data, 0);
}

FUSE_API fuse_value fuse_scalar(fuse_graph *g, float v) {
  return fuse__leaf(g, FUSE__OP_CONST, NULL, FUSE_FLOAT32, 0, NULL, &v, 0);
}

FUSE_API fuse_value fuse_typed_input(fuse_graph *g, const char *name, fuse_type type, int rank,
                                     const int64_t *shape) {
  return fuse__leaf(g, FUSE__OP_INPUT, name, (int)type, rank, shape, NULL, 0);
}

FUSE_API fuse_value fuse_typed_constant(fuse_graph *g, const char *name, fuse_type type,
                                        int rank, const int64_t *shape, const void *data) {
  return fuse__leaf(g, FUSE__OP_CONST, name, (int)type, rank, shape, data, 0);
}

FUSE_API fuse_type fuse_value_type(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? (fuse_type)g->nodes[v].type : FUSE_FLOAT32;
}

FUSE_API fuse_result fuse_output(fuse_graph *g, fuse_value v) {
  fuse_value *outs;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!fuse__begin(g, "output", 1, &v)) return g->status;
  outs = (fuse_value *)fuse__grow(&g->alloc, g->outputs, g->num_outputs, &g->cap_outputs,
                                  g->num_outputs + 1, sizeof(fuse_value));
  if (!outs) return fuse__oom(g, "output"), g->status;
  g->outputs = outs;
  g->outputs[g->num_outputs++] = v;
  return FUSE_OK;
}

FUSE_API fuse_result fuse_value_set_name(fuse_graph *g, fuse_value v, const char *name) {
  if (!fuse__begin(g, "set_name", 1, &v)) return g ? g->status : FUSE_ERROR_INVALID_ARGUMENT;
  if (!name) {
    if (g->nodes[v].name) {
      fuse__name_remove(g, v);
      fuse__free(&g->alloc, g->nodes[v].name);
      g->nodes[v].name = NULL;
    }
    return FUSE_OK;
  }
  return fuse__set_name(g, v, name, "set_name") ? FUSE_OK : g->status;
}

static fuse_value fuse__binary(fuse_graph *g, int op, fuse_value a, fuse_value b) {
  fuse_value in[2];
  int64_t shape[FUSE_MAX_RANK];
  int rank;
  fuse__node *na, *nb, *n;
  in[0] = a;
  in[1] = b;
  if (!fuse__begin(g, fuse__ops[op].name, 2, in)) return FUSE_NONE;
  na = fuse__node_of(g, a);
  nb = fuse__node_of(g, b);
  if (!fuse__broadcast(na->rank, na->shape, nb->rank, nb->shape, &rank, shape))
    return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: shapes %S (%V) and %S (%V) do not broadcast",
                      fuse__ops[op].name, na->rank, na->shape, a, nb->rank, nb->shape, b);
  if (!fuse__check_shape(g, fuse__ops[op].name, rank, shape)) return FUSE_NONE;
  n = fuse__new_node(g, op, 2, in, rank, shape);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_add(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_ADD, a, b);
}
FUSE_API fuse_value fuse_sub(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_SUB, a, b);
}
FUSE_API fuse_value fuse_mul(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_MUL, a, b);
}
FUSE_API fuse_value fuse_maximum(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_MAXIMUM, a, b);
}
FUSE_API fuse_value fuse_minimum(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_MINIMUM, a, b);
}

/* An op whose result has the operand's shape. */
static fuse__node *fuse__unary(fuse_graph *g, int op, fuse_value x) {
  fuse__node *nx;
  if (!fuse__begin(g, fuse__ops[op].name, 1, &x)) return NULL;
  nx = fuse__node_of(g, x);
  return fuse__new_node(g, op, 1, &x, nx->rank, nx->shape);
}

FUSE_API fuse_value fuse_relu(fuse_graph *g, fuse_value x) {
  fuse__node *n = fuse__unary(g, FUSE__OP_RELU, x);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_sigmoid(fuse_graph *g, fuse_value x) {
  fuse__node *n = fuse__unary(g, FUSE__OP_SIGMOID, x);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_clip(fuse_graph *g, fuse_value x, float lo, float hi) {
  fuse__node *n;
  if (g && g->status == FUSE_OK && !(lo <= hi)) /* also catches NaN */
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "clip: bounds lo=%f, hi=%f must be numbers with lo <= hi", (double)lo,
                      (double)hi);
  if (!(n = fuse__unary(g, FUSE__OP_CLIP, x))) return FUSE_NONE;
  n->a.clip.lo = lo;
  n->a.clip.hi = hi;
  return fuse__id(g, n);
}

/* Fills a zero entry with `def`, refuses negative ones. */
static int fuse__attr_positive(fuse_graph *g, const char *op, const char *what, int *v, int n,
                               int def, int allow_zero_default) {
  int i;
  for (i = 0; i < n; i++) {
    if (v[i] == 0 && allow_zero_default) v[i] = def;
    if (v[i] < 1) {
      int64_t d[4];
      int k;
      for (k = 0; k < n; k++) d[k] = v[k];
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: %s %S must be >= 1", op, what, n, d),
             0;
    }
  }
  return 1;
}

static int fuse__attr_padding(fuse_graph *g, const char *op, const int *pad) {
  int i;
  for (i = 0; i < 4; i++)
    if (pad[i] < 0) {
      int64_t d[4];
      int k;
      for (k = 0; k < 4; k++) d[k] = pad[k];
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: padding %S (top, left, bottom, right) must be >= 0", op, 4, d),
             0;
    }
  return 1;
}

/* 1-D inputs [N, C, L] run as the 2-D op over [N, C, 1, L]: x (or w) gains a unit H axis */
static fuse_value fuse__as_2d(fuse_graph *g, fuse_value v) {
  int64_t shape[4];
  if (v == FUSE_NONE || g->status != FUSE_OK) return FUSE_NONE;
  shape[0] = g->nodes[v].shape[0];
  shape[1] = g->nodes[v].shape[1];
  shape[2] = 1;
  shape[3] = g->nodes[v].shape[2];
  return fuse_reshape(g, v, 4, shape);
}

/* ... and the 2-D result [N, K, 1, OL] loses it again */
static fuse_value fuse__as_1d(fuse_graph *g, fuse_value v) {
  int64_t shape[3];
  if (v == FUSE_NONE || g->status != FUSE_OK) return FUSE_NONE;
  shape[0] = g->nodes[v].shape[0];
  shape[1] = g->nodes[v].shape[1];
  shape[2] = g->nodes[v].shape[3];
  return fuse_reshape(g, v, 3, shape);
}

/* An attribute's H entry for a 1-D input must be 0 or `def` (the W entries apply). */
static int fuse__1d_default(fuse_graph *g, const char *op, fuse_value x, const char *what, int v,
                            int def) {
  if (v == 0 || v == def) return 1;
  return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                    "%s: input %S (%V) is 1-D, so the H entry of %s must be %d, not %d (the W "
                    "entries apply)",
                    op, g->nodes[x].rank, g->nodes[x].shape, x, what, def, v),
         0;
}

FUSE_API fuse_value fuse_conv2d(fuse_graph *g, fuse_value x, fuse_value w,
                                const fuse_conv2d_attrs *attrs) {
  fuse_value in[2];
  fuse_conv2d_attrs a;
  fuse__node *nx, *nw, *n;
  int64_t out[4], C, K;
  int i;
  in[0] = x;
  in[1] = w;
  if (!fuse__begin(g, "conv2d", 2, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  nw = fuse__node_of(g, w);
  if (nx->rank == 3) { /* 1-D: w [K, C / groups, KL] */
    if (nw->rank != 3)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "conv2d: 1-D input %S (%V) needs a 3-D weight [K,C/groups,KL], not %S (%V)",
                        nx->rank, nx->shape, x, nw->rank, nw->shape, w);
    memset(&a, 0, sizeof a);
    if (attrs) a = *attrs;
    if (!fuse__1d_default(g, "conv2d", x, "strides", a.strides[0], 1) ||
        !fuse__1d_default(g, "conv2d", x, "dilation", a.dilation[0], 1) ||
        !fuse__1d_default(g, "conv2d", x, "padding (top)", a.padding[0], 0) ||
        !fuse__1d_default(g, "conv2d", x, "padding (bottom)", a.padding[2], 0))
      return FUSE_NONE;
    return fuse__as_1d(g, fuse_conv2d(g, fuse__as_2d(g, x), fuse__as_2d(g, w), &a));
  }
  if (nx->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv2d: input %S (%V) must be 4-D [N,C,H,W] (or 3-D [N,C,L])", nx->rank,
                      nx->shape, x);
  if (nw->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "conv2d: weight %S (%V) must be 4-D [K,C/groups,KH,KW]",
                      nw->rank, nw->shape, w);
  memset(&a, 0, sizeof a);
  if (attrs) a = *attrs;
  if (!fuse__attr_positive(g, "conv2d", "strides", a.strides, 2, 1, 1) ||
      !fuse__attr_positive(g, "conv2d", "dilation", a.dilation, 2, 1, 1) ||
      !fuse__attr_padding(g, "conv2d", a.padding) ||
      !fuse__attr_positive(g, "conv2d", "groups", &a.groups, 1, 1, 1))
    return FUSE_NONE;
  C = nx->shape[1];
  K = nw->shape[0];
  if (nw->shape[1] * a.groups != C)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv2d: input %S has %D channels, weight %S expects %D (groups=%d)",
                      nx->rank, nx->shape, C, nw->rank, nw->shape, nw->shape[1] * a.groups,
                      a.groups);
  if (K % a.groups)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "conv2d: weight %S has %D output channels, not divisible by groups=%d",
                      nw->rank, nw->shape, K, a.groups);
  out[0] = nx->shape[0];
  out[1] = K;
  for (i = 0; i < 2; i++) {
    int64_t span = nx->shape[2 + i] + a.padding[i] + a.padding[i + 2] -
                   (int64_t)a.dilation[i] * (nw->shape[2 + i] - 1) - 1;
    if (span < 0)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "conv2d: kernel %Dx%D with dilation %dx%d is larger than input %S with "
                        "padding [%d,%d,%d,%d]",
                        nw->shape[2], nw->shape[3], a.dilation[0], a.dilation[1], nx->rank,
                        nx->shape, a.padding[0], a.padding[1], a.padding[2], a.padding[3]);
    out[2 + i] = span / a.strides[i] + 1;
  }
  /* huge padding makes huge outputs: 2^31 - 1 on each side of 8 rows is 2^32 + 6 rows */
  if (!fuse__check_shape(g, "conv2d", 4, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_CONV2D, 2, in, 4, out))) return FUSE_NONE;
  n->a.conv = a;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_matmul(fuse_graph *g, fuse_value a, fuse_value b) {
  fuse_value in[2];
  fuse__node *na, *nb, *n;
  int64_t shape[FUSE_MAX_RANK], M, K, K2, N;
  int rank, batch_rank;
  in[0] = a;
  in[1] = b;
  if (!fuse__begin(g, "matmul", 2, in)) return FUSE_NONE;
  na = fuse__node_of(g, a);
  nb = fuse__node_of(g, b);
  if (na->rank < 1 || nb->rank < 1)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "matmul: operands %S and %S must have rank >= 1",
                      na->rank, na->shape, nb->rank, nb->shape);
  M = na->rank == 1 ? 1 : na->shape[na->rank - 2];
  K = na->shape[na->rank - 1];
  K2 = nb->rank == 1 ? nb->shape[0] : nb->shape[nb->rank - 2];
  N = nb->rank == 1 ? 1 : nb->shape[nb->rank - 1];
  if (K != K2)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "matmul: inner dimensions differ: %S has %D columns, %S has %D rows",
                      na->rank, na->shape, K, nb->rank, nb->shape, K2);
  if (!fuse__broadcast(na->rank > 2 ? na->rank - 2 : 0, na->shape,
                       nb->rank > 2 ? nb->rank - 2 : 0, nb->shape, &batch_rank, shape))
    return fuse__fail(g, FUSE_ERROR_SHAPE, "matmul: batch dimensions of %S and %S do not broadcast",
                      na->rank, na->shape, nb->rank, nb->shape);
  rank = batch_rank;
  if (na->rank > 1) shape[rank++] = M;
  if (nb->rank > 1) shape[rank++] = N;
  if (!fuse__check_shape(g, "matmul", rank, shape)) return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_MATMUL, 2, in, rank, shape);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_reshape(fuse_graph *g, fuse_value x, int rank, const int64_t *shape) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK], known = 1, total;
  int i, infer = -1;
  if (!fuse__begin(g, "reshape", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (rank < 0 || rank > FUSE_MAX_RANK || (rank > 0 && !shape))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "reshape: target rank %d (shape %s) must be 0..8 with a shape", rank,
                      shape ? "given" : "NULL");
  total = fuse__numel(nx->rank, nx->shape);
  for (i = 0; i < rank; i++) {
    out[i] = shape[i];
    if (shape[i] == -1 && infer < 0) {
      infer = i;
    } else if (shape[i] < 1 || shape[i] > FUSE__MAX_DIM) {
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "reshape: target %S of %S: dimension %d is %D (one -1, others >= 1)",
                        rank, shape, nx->rank, nx->shape, i, shape[i]);
    } else {
      known *= shape[i];
      if (known > total) break;
    }
  }
  if (i < rank || (infer < 0 && known != total) || (infer >= 0 && total % known))
    return fuse__fail(g, FUSE_ERROR_SHAPE, "reshape: %S (%D elements) cannot become %S",
                      nx->rank, nx->shape, total, rank, shape);
  if (infer >= 0) out[infer] = total / known;
  if (!fuse__check_shape(g, "reshape", rank, out)) return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_RESHAPE, 1, &x, rank, out);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

/* Normalizes an axis in [-limit, limit) (or [-limit, limit] when `inclusive`). */
static int fuse__axis(fuse_graph *g, const char *op, int axis, int limit, int inclusive,
                      const fuse__node *x, int *out) {
  int hi = inclusive ? limit : limit - 1;
  if (axis < -limit || axis > hi)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: axis %d is outside %d..%d for %S", op,
                      axis, -limit, hi, x->rank, x->shape),
           0;
  *out = axis < 0 ? axis + limit : axis;
  return 1;
}

FUSE_API fuse_value fuse_flatten(fuse_graph *g, fuse_value x, int axis) {
  fuse__node *nx, *n;
  int64_t out[2];
  int ax;
  if (!fuse__begin(g, "flatten", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (!fuse__axis(g, "flatten", axis, nx->rank, 1, nx, &ax)) return FUSE_NONE;
  out[0] = fuse__numel(ax, nx->shape);
  out[1] = fuse__numel(nx->rank - ax, nx->shape + ax);
  if (!fuse__check_shape(g, "flatten", 2, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_FLATTEN, 1, &x, 2, out))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_transpose(fuse_graph *g, fuse_value x, const int *perm) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int p[FUSE_MAX_RANK], seen[FUSE_MAX_RANK], i;
  if (!fuse__begin(g, "transpose", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  memset(seen, 0, sizeof seen);
  for (i = 0; i < nx->rank; i++) {
    p[i] = perm ? perm[i] : nx->rank - 1 - i;
    if (p[i] < 0 || p[i] >= nx->rank || seen[p[i]]++)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "transpose: perm is not a permutation of 0..%d for %S", nx->rank - 1,
                        nx->rank, nx->shape);
    out[i] = nx->shape[p[i]];
  }
  if (!(n = fuse__new_node(g, FUSE__OP_TRANSPOSE, 1, &x, nx->rank, out))) return FUSE_NONE;
  memcpy(n->a.perm, p, sizeof p);
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_concat(fuse_graph *g, int count, const fuse_value *xs, int axis) {
  fuse__node *first, *n;
  int64_t out[FUSE_MAX_RANK];
  int i, d, ax;
  if (!g || g->status != FUSE_OK) return FUSE_NONE;
  if (count < 1 || !xs)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "concat: needs at least one value (n=%d%s)",
                      count, xs ? "" : ", xs NULL");
  if (!fuse__begin(g, "concat", count, xs)) return FUSE_NONE;
  first = fuse__node_of(g, xs[0]);
  if (first->rank < 1)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "concat: operand 1 (%V) is a scalar", xs[0]);
  if (!fuse__axis(g, "concat", axis, first->rank, 0, first, &ax)) return FUSE_NONE;
  memcpy(out, first->shape, sizeof out);
  for (i = 1; i < count; i++) {
    const fuse__node *xi = fuse__node_of(g, xs[i]);
    int ok = xi->rank == first->rank;
    for (d = 0; ok && d < first->rank; d++) ok = d == ax || xi->shape[d] == first->shape[d];
    if (!ok)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "concat: operand %d %S does not match operand 1 %S outside axis %d",
                        i + 1, xi->rank, xi->shape, first->rank, first->shape, ax);
    out[ax] += xi->shape[ax];
    if (out[ax] > FUSE__MAX_DIM) break;
  }
  if (!fuse__check_shape(g, "concat", first->rank, out)) return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_CONCAT, count, xs, first->rank, out))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_softmax(fuse_graph *g, fuse_value x, int axis) {
  fuse__node *nx, *n;
  int ax;
  if (!fuse__begin(g, "softmax", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "softmax: input %V is a scalar", x);
  if (!fuse__axis(g, "softmax", axis, nx->rank, 0, nx, &ax)) return FUSE_NONE;
  if (!(n = fuse__unary(g, FUSE__OP_SOFTMAX, x))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_batch_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                    fuse_value bias, fuse_value mean, fuse_value var, float eps) {
  static const char *const names[4] = {"scale", "bias", "mean", "var"};
  fuse_value in[5];
  fuse__node *nx, *n;
  int i;
  in[0] = x;
  in[1] = scale;
  in[2] = bias;
  in[3] = mean;
  in[4] = var;
  if (!fuse__begin(g, "batch_norm", 5, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 2)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "batch_norm: input %S must have rank >= 2 [N,C,...]",
                      nx->rank, nx->shape);
  for (i = 1; i < 5; i++) {
    const fuse__node *p = fuse__node_of(g, in[i]);
    if (p->rank != 1 || p->shape[0] != nx->shape[1])
      return fuse__fail(g, FUSE_ERROR_SHAPE, "batch_norm: %s %S must be [%D] for input %S",
                        names[i - 1], p->rank, p->shape, nx->shape[1], nx->rank, nx->shape);
  }
  if (!(eps >= 0))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "batch_norm: eps=%f must be >= 0",
                      (double)eps);
  if (!(n = fuse__new_node(g, FUSE__OP_BATCH_NORM, 5, in, nx->rank, nx->shape))) return FUSE_NONE;
  n->a.eps = eps;
  return fuse__id(g, n);
}

static fuse_value fuse__pool(fuse_graph *g, int op, fuse_value x, const fuse_pool2d_attrs *attrs) {
  const char *name = fuse__ops[op].name;
  fuse_pool2d_attrs a;
  fuse__node *nx, *n;
  int64_t out[4];
  int i;
  if (!fuse__begin(g, name, 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (!attrs)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: attributes are NULL (kernel is required)",
                      name);
  a = *attrs;
  if (nx->rank == 3) { /* 1-D */
    if (!fuse__1d_default(g, name, x, "kernel", a.kernel[0], 1) ||
        !fuse__1d_default(g, name, x, "strides", a.strides[0], 1) ||
        !fuse__1d_default(g, name, x, "dilation", a.dilation[0], 1) ||
        !fuse__1d_default(g, name, x, "padding (top)", a.padding[0], 0) ||
        !fuse__1d_default(g, name, x, "padding (bottom)", a.padding[2], 0))
      return FUSE_NONE;
    a.kernel[0] = 1;
    return fuse__as_1d(g, fuse__pool(g, op, fuse__as_2d(g, x), &a));
  }
  if (nx->rank != 4)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: input %S (%V) must be 4-D [N,C,H,W] (or 3-D [N,C,L])",
                      name, nx->rank, nx->shape, x);
  if (!fuse__attr_positive(g, name, "kernel", a.kernel, 2, 0, 0) ||
      !fuse__attr_positive(g, name, "strides", a.strides, 2, 1, 1) ||
      !fuse__attr_positive(g, name, "dilation", a.dilation, 2, 1, 1) ||
      !fuse__attr_padding(g, name, a.padding))
    return FUSE_NONE;
  if (op == FUSE__OP_AVG_POOL2D && (a.dilation[0] != 1 || a.dilation[1] != 1))
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED, "avg_pool2d: dilation [%d,%d] is not supported",
                      a.dilation[0], a.dilation[1]);
  a.ceil_mode = a.ceil_mode != 0;
  a.count_include_pad = op == FUSE__OP_AVG_POOL2D && a.count_include_pad != 0;
  out[0] = nx->shape[0];
  out[1] = nx->shape[1];
  for (i = 0; i < 2; i++) {
    int64_t eff = (int64_t)a.dilation[i] * (a.kernel[i] - 1) + 1;
    int64_t span = nx->shape[2 + i] + a.padding[i] + a.padding[i + 2] - eff;
    if (a.padding[i] >= eff || a.padding[i + 2] >= eff)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "%s: padding [%d,%d,%d,%d] must be smaller than the kernel's extent %D",
                        name, a.padding[0], a.padding[1], a.padding[2], a.padding[3], eff);
    if (span < 0)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "%s: kernel [%d,%d] (dilation [%d,%d]) is larger than input %S with padding",
                        name, a.kernel[0], a.kernel[1], a.dilation[0], a.dilation[1], nx->rank,
                        nx->shape);
    out[2 + i] = (a.ceil_mode ? (span + a.strides[i] - 1) / a.strides[i] : span / a.strides[i]) + 1;
    /* the last window must start inside the input or the leading padding */
    if (a.ceil_mode && (out[2 + i] - 1) * a.strides[i] >= nx->shape[2 + i] + a.padding[i])
      out[2 + i]--;
  }
  if (!fuse__check_shape(g, name, 4, out)) return FUSE_NONE; /* huge padding, huge output */
  if (!(n = fuse__new_node(g, op, 1, &x, 4, out))) return FUSE_NONE;
  n->a.pool = a;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_max_pool2d(fuse_graph *g, fuse_value x, const fuse_pool2d_attrs *a) {
  return fuse__pool(g, FUSE__OP_MAX_POOL2D, x, a);
}

FUSE_API fuse_value fuse_avg_pool2d(fuse_graph *g, fuse_value x, const fuse_pool2d_attrs *a) {
  return fuse__pool(g, FUSE__OP_AVG_POOL2D, x, a);
}

FUSE_API fuse_value fuse_global_avg_pool2d(fuse_graph *g, fuse_value x) {
  fuse__node *nx, *n;
  int64_t out[FUSE_MAX_RANK];
  int i;
  if (!fuse__begin(g, "global_avg_pool2d", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 3)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "global_avg_pool2d: input %S must have rank >= 3",
                      nx->rank, nx->shape);
  memcpy(out, nx->shape, sizeof out);
  for (i = 2; i < nx->rank; i++) out[i] = 1;
  n = fuse__new_node(g, FUSE__OP_GLOBAL_AVG_POOL2D, 1, &x, nx->rank, out);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

/* ---------------------------------------------------------------- accessors -- */

FUSE_API int fuse_value_rank(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? g->nodes[v].rank : -1;
}
FUSE_API const int64_t *fuse_value_shape(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? g->nodes[v].shape : NULL;
}
FUSE_API const char *fuse_value_name(const fuse_graph *g, fuse_value v) {
  return fuse__valid(g, v) ? g->nodes[v].name : NULL;
}
FUSE_API fuse_value fuse_graph_find(const fuse_graph *g, const char *name) {
  return g && name ? fuse__find(g, name) : FUSE_NONE;
}
FUSE_API int fuse_graph_op_count(const fuse_graph *g) {
  int i, n = 0;
  if (!g) return 0;
  for (i = 0; i < g->num_nodes; i++) /* a composite counts once */
    n += g->nodes[i].op > FUSE__OP_CONST && g->nodes[i].composite < 0;
  return n + g->num_composites;
}
FUSE_API int fuse_graph_input_count(const fuse_graph *g) { return g ? g->num_inputs : 0; }
FUSE_API int fuse_graph_output_count(const fuse_graph *g) { return g ? g->num_outputs : 0; }
FUSE_API fuse_value fuse_graph_input(const fuse_graph *g, int i) {
  return g && i >= 0 && i < g->num_inputs ? g->inputs[i] : FUSE_NONE;
}
FUSE_API fuse_value fuse_graph_output(const fuse_graph *g, int i) {
  return g && i >= 0 && i < g->num_outputs ? g->outputs[i] : FUSE_NONE;
}


