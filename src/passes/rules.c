/* ------------------------------------------------------- fold batch-norm, rules -- */

/* Names a constant a pass made after its source ("w" -> "w.folded", or "w.folded.2" when that
   is taken), so a listing of the optimized graph can be parsed and filled by name again. */
static void fuse__derived_name(fuse_graph *g, fuse_value v, const char *base, const char *suffix) {
  char name[300];
  size_t n;
  int k;
  if (!base || g->nodes[v].name || (n = strlen(base)) + strlen(suffix) + 12 > sizeof name) return;
  memcpy(name, base, n);
  strcpy(name + n, suffix);
  for (k = 2; fuse__find(g, name) != FUSE_NONE && k < 1000; k++) {
    fuse__out o;
    o.buf = name + n + strlen(suffix);
    o.len = 0;
    o.cap = 12;
    o.write = NULL;
    o.user = NULL;
    fuse__puts(&o, ".");
    fuse__put_int(&o, k);
  }
  if (fuse__find(g, name) == FUSE_NONE) fuse_value_set_name(g, v, name);
}

/* conv2d(x, W) -> batch_norm(scale, bias, mean, var), all constants, the conv used only by
   the batch-norm: W *= s, and the batch-norm node becomes add(conv, b) with s = scale /
   sqrt(var + eps), b = bias - mean * s, shaped [1, K, 1, 1]. Value ids stay valid. */
FUSE_API fuse_result fuse_fold_batch_norm(fuse_graph *g) {
  fuse__users users;
  int v, k;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  if (!fuse__users_build(g, &users)) return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "fold_batch_norm: out of memory");
  for (v = 0; v < g->num_nodes; v++) {
    fuse__node *bn = &g->nodes[v], *conv;
    const fuse__node *w;
    int64_t K, per, i, j, bshape[4];
    fuse_value nw, nb, conv_id;
    float *scale;
    if (bn->op != FUSE__OP_BATCH_NORM || bn->composite >= 0) continue;
    conv_id = bn->in[0];
    conv = &g->nodes[conv_id];
    if (conv->op != FUSE__OP_CONV2D || conv->composite >= 0 || fuse__is_output(g, conv_id) ||
        users.first[conv_id + 1] - users.first[conv_id] != 1)
      continue;
    if (g->nodes[conv->in[1]].op != FUSE__OP_CONST) continue;
    for (k = 1; k < 5 && g->nodes[bn->in[k]].op == FUSE__OP_CONST; k++) {
    }
    if (k < 5) continue;
    int64_t wshape[4];
    fuse_value w_id = conv->in[1];
    w = &g->nodes[w_id];
    memcpy(wshape, w->shape, sizeof wshape); /* the node array grows below */
    K = wshape[0];
    per = fuse__numel(3, wshape + 1);
    nw = fuse__leaf(g, FUSE__OP_CONST, NULL, FUSE_FLOAT32, 4, wshape, NULL, 1); /* filled below */
    if (nw != FUSE_NONE) fuse__const_read(&g->nodes[w_id], 0, K * per, g->nodes[nw].data);
    bshape[0] = 1;
    bshape[1] = K;
    bshape[2] = bshape[3] = 1;
    nb = fuse_constant(g, NULL, 4, bshape, NULL);
    if (nw == FUSE_NONE || nb == FUSE_NONE) {
      fuse__users_free(g, &users);
      return g->status; /* out of memory, recorded by the builder */
    }
    bn = &g->nodes[v]; /* the node array may have moved */
    conv = &g->nodes[conv_id];
    scale = g->nodes[nb].data;
    for (i = 0; i < K; i++) {
      const fuse__node *sc = &g->nodes[bn->in[1]], *bi = &g->nodes[bn->in[2]];
      const fuse__node *mu = &g->nodes[bn->in[3]], *va = &g->nodes[bn->in[4]];
      double s = fuse__const_at(sc, i) / sqrt((double)fuse__const_at(va, i) + (double)bn->a.eps);
      float *wk = g->nodes[nw].data + i * per;
      for (j = 0; j < per; j++) wk[j] = (float)(wk[j] * s);
      scale[i] = (float)(fuse__const_at(bi, i) - fuse__const_at(mu, i) * s);
    }
    conv->in[1] = nw;
    fuse__derived_name(g, nw, g->nodes[w_id].name, ".folded");
    fuse__derived_name(g, nb, g->nodes[bn->in[2]].name, ".folded");
    bn->op = FUSE__OP_ADD;
    bn->num_in = 2;
    bn->in[1] = nb;
    memset(&bn->a, 0, sizeof bn->a);
  }
  fuse__users_free(g, &users);
  return FUSE_OK;
}

/* The one reader of v (NONE when v has none, several, or is a graph output). */
static fuse_value fuse__only_user(const fuse_graph *g, const fuse__users *u, fuse_value v) {
  if (fuse__is_output(g, v) || u->first[v + 1] - u->first[v] != 1) return FUSE_NONE;
  return u->list[u->first[v]];
}

/* Whether v is a constant of one element; its value in *c. */
static int fuse__scalar_value(const fuse_graph *g, fuse_value v, float *c) {
  const fuse__node *n = &g->nodes[v];
  if (n->op != FUSE__OP_CONST || !(n->data || n->raw) || fuse__numel(n->rank, n->shape) != 1)
    return 0;
  *c = fuse__const_at(n, 0);
  return 1;
}

/* node v = op(a, other) or op(other, a) with `other` not a: other, else FUSE_NONE */
static fuse_value fuse__other_operand(const fuse__node *n, int op, fuse_value a) {
  if (n->op != op || n->num_in != 2 || n->composite >= 0) return FUSE_NONE;
  if (n->in[0] == a && n->in[1] != a) return n->in[1];
  if (n->in[1] == a && n->in[0] != a) return n->in[0];
  return FUSE_NONE;
}

/* a constant that holds L values along the last axis (every other dimension 1) */
static int fuse__last_axis_constant(const fuse_graph *g, fuse_value v, int rank, int64_t L) {
  const fuse__node *n = &g->nodes[v];
  int i;
  if (n->op != FUSE__OP_CONST || !(n->data || n->raw) || n->rank < 1 || n->rank > rank ||
      n->shape[n->rank - 1] != L)
    return 0;
  for (i = 0; i < n->rank - 1; i++)
    if (n->shape[i] != 1) return 0;
  return 1;
}

/* reduce_mean over the last axis of x, keeping it */
static int fuse__last_axis_mean(const fuse_graph *g, fuse_value v, fuse_value x) {
  const fuse__node *n = &g->nodes[v], *nx = &g->nodes[x];
  return n->op == FUSE__OP_REDUCE_MEAN && n->composite < 0 && n->in[0] == x &&
         n->a.reduce.keepdims && nx->rank >= 1 && n->a.reduce.axes == 1u << (nx->rank - 1);
}

/* A layer norm over the last axis as PyTorch <= 1.13 exports it below opset 17:
     m = reduce_mean(x); d = sub(x, m); q = pow(d, 2) or mul(d, d); v = reduce_mean(q);
     s = sqrt(add(v, eps)); y = div(d, s) [; mul(y, gamma)] [; add(., beta)]
   each value read only by the next (d by q and the div). The last op of the run becomes
   layer_norm(x, gamma, beta) in place; the others stay as values nothing reads, so every id
   stays valid (as fuse_fold_batch_norm leaves the unfolded weights). In fuse_optimize, before
   the rules: at load time the loader would have to look ahead at nodes it has not built, and
   graphs built in C or parsed from text get the rewrite too. Returns the node rewritten, or
   FUSE_NONE; FUSE_ERROR_OUT_OF_MEMORY is left in g's status. */
static fuse_value fuse__fold_layer_norm(fuse_graph *g, const fuse__users *u, fuse_value m) {
  fuse_value x = g->nodes[m].in[0], d, q = FUSE_NONE, v, e, s, y, last, gamma = FUSE_NONE;
  fuse_value beta = FUSE_NONE, other, ng, nb, *in;
  int64_t L, shape[1];
  float eps, two;
  int k, rank;
  if (!fuse__last_axis_mean(g, m, x)) return FUSE_NONE;
  rank = g->nodes[x].rank;
  L = g->nodes[x].shape[rank - 1];
  d = fuse__only_user(g, u, m);
  if (d == FUSE_NONE || g->nodes[d].op != FUSE__OP_SUB || g->nodes[d].composite >= 0 ||
      g->nodes[d].in[0] != x || g->nodes[d].in[1] != m || fuse__is_output(g, d))
    return FUSE_NONE;
  y = FUSE_NONE; /* d's readers: the square and the div, nothing else */
  for (k = u->first[d]; k < u->first[d + 1]; k++) {
    fuse_value w = u->list[k];
    const fuse__node *n = &g->nodes[w];
    if (n->op == FUSE__OP_DIV && n->in[0] == d && n->in[1] != d && (y == FUSE_NONE || y == w))
      y = w;
    else if (((n->op == FUSE__OP_POW && n->in[0] == d && fuse__scalar_value(g, n->in[1], &two) &&
               two == 2.0f) ||
              (n->op == FUSE__OP_MUL && n->in[0] == d && n->in[1] == d)) &&
             (q == FUSE_NONE || q == w) && n->composite < 0)
      q = w;
    else
      return FUSE_NONE;
  }
  if (y == FUSE_NONE || q == FUSE_NONE || g->nodes[y].composite >= 0) return FUSE_NONE;
  v = fuse__only_user(g, u, q);
  if (v == FUSE_NONE || !fuse__last_axis_mean(g, v, q)) return FUSE_NONE;
  e = fuse__only_user(g, u, v);
  if (e == FUSE_NONE || (other = fuse__other_operand(&g->nodes[e], FUSE__OP_ADD, v)) == FUSE_NONE ||
      !fuse__scalar_value(g, other, &eps) || !(eps >= 0 && eps < HUGE_VALF))
    return FUSE_NONE;
  s = fuse__only_user(g, u, e);
  if (s == FUSE_NONE || g->nodes[s].op != FUSE__OP_SQRT || g->nodes[s].composite >= 0 ||
      fuse__only_user(g, u, s) != y || g->nodes[y].in[1] != s)
    return FUSE_NONE;
  last = y; /* then an optional * gamma and + beta, constants along the last axis */
  k = fuse__only_user(g, u, last);
  if (k != FUSE_NONE && (other = fuse__other_operand(&g->nodes[k], FUSE__OP_MUL, last)) != FUSE_NONE &&
      fuse__last_axis_constant(g, other, rank, L))
    gamma = other, last = k;
  k = fuse__only_user(g, u, last);
  if (k != FUSE_NONE && (other = fuse__other_operand(&g->nodes[k], FUSE__OP_ADD, last)) != FUSE_NONE &&
      fuse__last_axis_constant(g, other, rank, L))
    beta = other, last = k;
  if (g->nodes[last].rank != rank ||
      memcmp(g->nodes[last].shape, g->nodes[x].shape, (size_t)rank * sizeof(int64_t)) != 0)
    return FUSE_NONE;
  /* scale and bias of shape [L], as layer_norm takes them */
  shape[0] = L;
  if ((gamma != FUSE_NONE && !fuse__const_floats(g, gamma)) ||
      (beta != FUSE_NONE && !fuse__const_floats(g, beta)))
    return FUSE_NONE; /* out of memory copying it out of the file */
  ng = fuse_constant(g, NULL, 1, shape, gamma != FUSE_NONE ? g->nodes[gamma].data : NULL);
  if (ng == FUSE_NONE) return FUSE_NONE;
  if (gamma == FUSE_NONE)
    for (k = 0; k < (int)L; k++) g->nodes[ng].data[k] = 1.0f;
  nb = beta != FUSE_NONE ? fuse_constant(g, NULL, 1, shape, g->nodes[beta].data) : FUSE_NONE;
  if (beta != FUSE_NONE && nb == FUSE_NONE) return FUSE_NONE;
  in = (fuse_value *)fuse__alloc(&g->alloc, 3 * sizeof(fuse_value), 16);
  if (!in) {
    fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "fold_layer_norm: out of memory");
    return FUSE_NONE;
  }
  if (gamma != FUSE_NONE) fuse__derived_name(g, ng, g->nodes[gamma].name, ".layer_norm");
  if (beta != FUSE_NONE) fuse__derived_name(g, nb, g->nodes[beta].name, ".layer_norm");
  in[0] = x, in[1] = ng, in[2] = nb;
  fuse__free(&g->alloc, g->nodes[last].in);
  g->nodes[last].in = in;
  g->nodes[last].num_in = nb == FUSE_NONE ? 2 : 3;
  g->nodes[last].op = FUSE__OP_LAYER_NORM;
  memset(&g->nodes[last].a, 0, sizeof g->nodes[last].a);
  g->nodes[last].a.norm.axis = rank - 1;
  g->nodes[last].a.norm.eps = eps;
  return last;
}

/* Every decomposed layer norm of g becomes one layer_norm op (fuse__fold_layer_norm). */
static fuse_result fuse__fold_layer_norms(fuse_graph *g) {
  fuse__users users;
  int v, n = g->num_nodes;
  if (!fuse__users_build(g, &users))
    return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "fold_layer_norm: out of memory");
  for (v = 0; v < n && g->status == FUSE_OK; v++)
    if (g->nodes[v].op == FUSE__OP_REDUCE_MEAN) fuse__fold_layer_norm(g, &users, v);
  fuse__users_free(g, &users);
  return g->status;
}

/* Default rules: conv2d / matmul, then an optional bias (any form), an optional residual add,
   and up to two clamp-like ops, each in either operand order. The check runs the epilogue
   analyzer, so a rule's name tells what the composite holds. */
#define FUSE__CLAMP(x) "(relu|clip)?(maximum?(minimum?(" x ", const), const))"
#define FUSE__BIAS(x) "add(" x ", reshape?(*, *))"

typedef struct fuse__rule_kind {
  int bias, residual, clamp;
} fuse__rule_kind;

static int fuse__default_check(const fuse_graph *g, const fuse_match *m, void *user) {
  const fuse__rule_kind *want = (const fuse__rule_kind *)user;
  fuse_epilogue e;
  fuse__scope scope;
  int i, residual = 0, clamp = 0;
  scope.comp = -1; /* the match is not a composite yet: analyze within its members */
  scope.members = m->members;
  scope.count = m->num_members;
  memset(&e, 0, sizeof e);
  e.reduction = e.bias = FUSE_NONE;
  if (fuse__analyze(g, m->root, &scope, &e) != FUSE_OK) return 0;
  for (i = 0; i < e.num_post; i++) {
    if (e.post[i].kind == FUSE_POST_ADD) residual = 1;
    else clamp = 1;
  }
  if ((e.bias != FUSE_NONE) != want->bias || residual != want->residual || clamp != want->clamp)
    return 0;
  return 1;
}

static const fuse__rule_kind fuse__kinds[8] = {{1, 1, 1}, {1, 1, 0}, {0, 1, 1}, {0, 1, 0},
                                                {1, 0, 1}, {1, 0, 0}, {0, 0, 1}, {0, 0, 0}};

#define FUSE__RULES(cg, op, x)                                                                   \
  {cg "." op "_bias_add_relu", FUSE__CLAMP(FUSE__CLAMP("add(" FUSE__BIAS(x) ", *)")),           \
   fuse__default_check, (void *)&fuse__kinds[0]},                                               \
  {cg "." op "_bias_add", "add(" FUSE__BIAS(x) ", *)", fuse__default_check,                      \
   (void *)&fuse__kinds[1]},                                                                     \
  {cg "." op "_add_relu", FUSE__CLAMP(FUSE__CLAMP("add(" x ", *)")), fuse__default_check,        \
   (void *)&fuse__kinds[2]},                                                                     \
  {cg "." op "_add", "add(" x ", *)", fuse__default_check, (void *)&fuse__kinds[3]},             \
  {cg "." op "_bias_relu", FUSE__CLAMP(FUSE__CLAMP(FUSE__BIAS(x))), fuse__default_check,         \
   (void *)&fuse__kinds[4]},                                                                     \
  {cg "." op "_bias", FUSE__BIAS(x), fuse__default_check, (void *)&fuse__kinds[5]},              \
  {cg "." op "_relu", FUSE__CLAMP(FUSE__CLAMP(x)), fuse__default_check, (void *)&fuse__kinds[6]}, \
  {cg "." op, x, fuse__default_check, (void *)&fuse__kinds[7]}

static const fuse_rule fuse__rules_fuse[16] = {FUSE__RULES("fuse", "conv2d", "conv2d(*, *)"),
                                                FUSE__RULES("fuse", "matmul", "matmul(*, *)")};
static const fuse_rule fuse__rules_dnnl[16] = {FUSE__RULES("dnnl", "conv2d", "conv2d(*, *)"),
                                                FUSE__RULES("dnnl", "matmul", "matmul(*, *)")};

FUSE_API int fuse_rules_default(const char *codegen, const fuse_rule **out) {
  const fuse_rule *r = NULL;
  if (!codegen || strcmp(codegen, "fuse") == 0) r = fuse__rules_fuse;
  else if (strcmp(codegen, "dnnl") == 0) r = fuse__rules_dnnl;
  if (out) *out = r;
  return r ? 16 : 0;
}

/* Node v, an op, becomes a constant of `data` (NULL: of the file bytes `raw`), named after
   `base` + suffix unless it has a name: how the folds of fuse_optimize replace an op whose
   operands are all constants (in place: the value id stays). */
static void fuse__become_constant(fuse_graph *g, fuse_value v, void *data,
                                  const unsigned char *raw, const char *base, const char *suffix) {
  fuse__node *n;
  fuse__derived_name(g, v, base, suffix);
  n = &g->nodes[v];
  fuse__free(&g->alloc, n->in);
  n->in = NULL;
  n->num_in = 0;
  n->op = FUSE__OP_CONST;
  n->data = (float *)data;
  n->raw = raw;
  memset(&n->a, 0, sizeof n->a);
}

/* reshape of a constant becomes a constant (in place: the value id stays) */
static fuse_result fuse__fold_constant_reshapes(fuse_graph *g) {
  int v;
  for (v = 0; v < g->num_nodes; v++) {
    fuse__node *n = &g->nodes[v];
    const fuse__node *src;
    const unsigned char *raw;
    size_t bytes;
    float *data;
    if ((n->op != FUSE__OP_RESHAPE && n->op != FUSE__OP_FLATTEN) || n->composite >= 0) continue;
    src = &g->nodes[n->in[0]];
    if (src->op != FUSE__OP_CONST) continue;
    raw = src->raw && !src->raw_transposed ? src->raw : NULL; /* same bytes, still borrowed */
    data = NULL;
    if (!raw) {
      bytes = (size_t)fuse__numel(n->rank, n->shape) * fuse__type_size(n->type);
      data = (float *)fuse__alloc(&g->alloc, bytes, FUSE__ALIGN);
      if (!data) return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "optimize: out of memory");
      fuse__const_read(src, 0, fuse__numel(n->rank, n->shape), data);
    }
    fuse__become_constant(g, v, data, raw, src->name, ".reshaped");
  }
  return FUSE_OK;
}

/* transpose of a float32 constant becomes a constant (a Gemm's transB weights that were the
   dequantize of int8 ones, and so a constant only once that folded) */
static fuse_result fuse__fold_constant_transposes(fuse_graph *g) {
  int v, d;
  for (v = 0; v < g->num_nodes; v++) {
    fuse__node *n = &g->nodes[v];
    const fuse__node *src;
    int64_t count, i, stride[FUSE_MAX_RANK];
    float *data;
    if (n->op != FUSE__OP_TRANSPOSE || n->composite >= 0 || n->type != FUSE_FLOAT32) continue;
    src = &g->nodes[n->in[0]];
    if (src->op != FUSE__OP_CONST || (!src->data && !src->raw)) continue;
    count = fuse__numel(n->rank, n->shape);
    if (!(data = (float *)fuse__alloc(&g->alloc, (size_t)count * sizeof(float), FUSE__ALIGN)))
      return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "optimize: out of memory");
    for (d = src->rank - 1, i = 1; d >= 0; d--) stride[d] = i, i *= src->shape[d];
    for (i = 0; i < count; i++) { /* output element i: its index's digits, through perm */
      int64_t rest = i, at = 0;
      for (d = n->rank - 1; d >= 0; d--) {
        at += rest % n->shape[d] * stride[n->a.perm[d]];
        rest /= n->shape[d];
      }
      data[i] = fuse__const_at(src, at);
    }
    fuse__become_constant(g, v, data, NULL, src->name, ".transposed");
  }
  return FUSE_OK;
}

/* The one use of v (no other use, not a graph output), or FUSE_NONE. */
static fuse_value fuse__sole_user(const fuse_graph *g, const fuse__users *u, fuse_value v) {
  if (fuse__is_output(g, v) || u->first[v + 1] - u->first[v] != 1) return FUSE_NONE;
  return u->list[u->first[v]];
}

/* An op of one tensor (its other operands scalar constants) that may be a post-op. */
static int fuse__grow_unary(const fuse_graph *g, const fuse__node *n) {
  float c;
  return fuse__epi_unary_op(n->op) ||
         (fuse__epi_binary_op(n->op) && fuse__scalar_operand(g, n, &c) >= 0);
}

/* The element-wise ops after root r that would extend its composite by one post-op: r's one
   user, or (x * f(x)) two chains of one-tensor ops from r's two users up to the op that joins
   them. Writes them in graph order; 0 when there is no such step. */
static int fuse__grow_step(const fuse_graph *g, const fuse__users *u, fuse_value r,
                           fuse_value *add, int *count) {
  int nu = u->first[r + 1] - u->first[r], s, n = 0;
  fuse_value join = FUSE_NONE;
  if (fuse__is_output(g, r) || nu < 1 || nu > 2) return 0;
  if (nu == 1 || u->list[u->first[r]] == u->list[u->first[r] + 1]) { /* one user: r's op */
    fuse_value a = u->list[u->first[r]];
    const fuse__node *na = &g->nodes[a];
    if (na->composite >= 0 || !(fuse__epi_unary_op(na->op) || fuse__epi_binary_op(na->op)))
      return 0;
    add[0] = a;
    *count = 1;
    return 1;
  }
  for (s = 0; s < 2; s++) { /* each side: one-tensor ops, each used once, up to the join */
    fuse_value x = u->list[u->first[r] + s];
    while (g->nodes[x].composite < 0 && fuse__grow_unary(g, &g->nodes[x]) && n < 16) {
      add[n++] = x;
      if ((x = fuse__sole_user(g, u, x)) == FUSE_NONE) return 0;
    }
    if (s == 0) join = x;
    else if (x != join) return 0;
  }
  if (g->nodes[join].composite >= 0 || !fuse__epi_binary_op(g->nodes[join].op)) return 0;
  add[n++] = join;
  *count = n;
  return 1;
}

/* Grows composite ci over the element-wise ops after its root while the epilogue analyzer
   accepts the longer chain, as TVM's FuseOps fuses injective ops into their producer: the
   default rules take a conv2d / matmul with its bias, residual and clamps, and this takes the
   activations, scales and gates (x * sigmoid(x), ...) after them, in any order, up to
   FUSE_MAX_POST_OPS. A grown composite is named after its epilogue
   ("fuse.conv2d_bias_silu"). 0: out of memory. */
static int fuse__grow_composite(fuse_graph *g, const fuse__users *u, int ci) {
  fuse__composite *c = &g->composites[ci];
  fuse_value add[40];
  int count, k, grown = 0;
  fuse_epilogue e, longer;
  fuse__scope scope;
  scope.comp = ci;
  scope.members = NULL;
  scope.count = 0;
  if (fuse__analyze(g, c->root, &scope, &e) != FUSE_OK) return 1; /* not an epilogue: keep */
  while (fuse__grow_step(g, u, c->root, add, &count)) {
    fuse_value old_root = c->root;
    for (k = 0; k < count; k++) g->nodes[add[k]].composite = ci;
    c->root = add[count - 1];
    if (fuse__analyze(g, c->root, &scope, &longer) != FUSE_OK) {
      for (k = 0; k < count; k++) g->nodes[add[k]].composite = -1;
      c->root = old_root;
      break;
    }
    c->num_ops += count;
    e = longer;
    grown = 1;
  }
  if (grown) { /* named after what it now holds */
    char name[200], function[400];
    fuse__out o;
    fuse_value v;
    o.buf = name, o.len = 0, o.cap = sizeof name, o.write = NULL, o.user = NULL;
    fuse__puts(&o, c->codegen ? c->codegen : "fuse");
    fuse__puts(&o, ".");
    fuse__puts(&o, fuse__ops[g->nodes[e.reduction].op].name);
    if (e.bias != FUSE_NONE) fuse__puts(&o, "_bias");
    for (k = 0; k < e.num_post; k++) {
      fuse__puts(&o, "_");
      fuse__puts(&o, e.post[k].kind == FUSE_POST_CLAMP ? "relu" : fuse__post_name(e.post[k].kind));
    }
    o.buf = function, o.len = 0, o.cap = sizeof function;
    fuse__puts(&o, "fused");
    for (v = c->first; v <= c->root; v++)
      if (g->nodes[v].composite == ci && g->nodes[v].op > FUSE__OP_CONST) {
        fuse__puts(&o, "_");
        fuse__puts(&o, fuse__ops[g->nodes[v].op].name);
      }
    {
      char *nn = fuse__strdup(g, name), *nf = fuse__strdup(g, function);
      if (!nn || !nf) {
        fuse__free(&g->alloc, nn);
        fuse__free(&g->alloc, nf);
        return 0;
      }
      fuse__free(&g->alloc, c->name);
      fuse__free(&g->alloc, c->function);
      c->name = nn, c->function = nf;
    }
  }
  return 1;
}

FUSE_API fuse_result fuse_grow_composites(fuse_graph *g, const char *codegen) {
  fuse__users users;
  int ci;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  if (!fuse__users_build(g, &users))
    return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "grow_composites: out of memory");
  for (ci = 0; ci < g->num_composites; ci++) {
    const char *cg = g->composites[ci].codegen;
    if (!cg || strcmp(cg, codegen ? codegen : "fuse") != 0) continue;
    if (!fuse__grow_composite(g, &users, ci)) {
      fuse__users_free(g, &users);
      return fuse__pass_error(g, FUSE_ERROR_OUT_OF_MEMORY, "grow_composites: out of memory");
    }
  }
  fuse__users_free(g, &users);
  return FUSE_OK;
}

static fuse_result fuse__fold_dequantized_constants(fuse_graph *g); /* passes/quant.c */
static fuse_result fuse__quant_composites(fuse_graph *g);
static fuse_result fuse__fold_quantized_constants(fuse_graph *g);
static void fuse__fold_requantized_views(fuse_graph *g);

FUSE_API fuse_result fuse_optimize(fuse_graph *g, const char *codegen) {
  const fuse_rule *rules;
  int n_rules;
  fuse_result r;
  if (!g) return FUSE_ERROR_INVALID_ARGUMENT;
  if (g->status != FUSE_OK) return g->status;
  fuse__pass_begin(g);
  n_rules = fuse_rules_default(codegen, &rules);
  if (!n_rules)
    return fuse__pass_error(g, FUSE_ERROR_UNSUPPORTED,
                            "optimize: no built-in rules for codegen '%s' (use \"fuse\" or \"dnnl\")",
                            codegen);
  /* reshapes of constants first: a weight that is reshape(const) becomes foldable */
  if ((r = fuse__fold_constant_reshapes(g)) != FUSE_OK) return r;
  /* a quantized model: its convs in integers where the pattern allows (they keep their int8
     weights), then the other dequantized constants folded to float32 */
  if ((r = fuse__fold_quantized_constants(g)) != FUSE_OK) return r;
  fuse__fold_requantized_views(g);
  if ((r = fuse__quant_composites(g)) != FUSE_OK) return r;
  if ((r = fuse__fold_dequantized_constants(g)) != FUSE_OK) return r;
  if ((r = fuse__fold_constant_reshapes(g)) != FUSE_OK) return r;
  if ((r = fuse__fold_constant_transposes(g)) != FUSE_OK) return r;
  if ((r = fuse_fold_batch_norm(g)) != FUSE_OK) return r;
  if ((r = fuse__fold_layer_norms(g)) != FUSE_OK) return r;
  if ((r = fuse_ops_by_pattern(g, rules, n_rules, NULL)) != FUSE_OK) return r;
  if ((r = fuse_grow_composites(g, codegen)) != FUSE_OK) return r;
  return fuse_merge_composites(g);
}

