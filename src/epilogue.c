/* ------------------------------------------------------------ epilogue analysis -- */

static int fuse__epi_why(fuse_epilogue *e, const fuse_graph *g, const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  o.buf = e->why;
  o.len = 0;
  o.cap = sizeof e->why;
  o.write = NULL;
  o.user = NULL;
  va_start(ap, fmt);
  fuse__vformat(&o, g, fmt, ap);
  va_end(ap);
  return 0;
}

static int fuse__is_reduction(int op) { return op == FUSE__OP_CONV2D || op == FUSE__OP_MATMUL; }

/* A scalar constant: its value as a clamp bound. */
static int fuse__scalar_const(const fuse_graph *g, fuse_value v, float *out) {
  const fuse__node *n = &g->nodes[v];
  if (n->op != FUSE__OP_CONST || fuse__numel(n->rank, n->shape) != 1) return 0;
  *out = n->data[0];
  return 1;
}

/* Which values an analysis may use: a composite's members, a match's, or (neither) any. */
typedef struct fuse__scope {
  int comp;
  const fuse_value *members;
  int count;
} fuse__scope;

static int fuse__in_scope(const fuse_graph *g, const fuse__scope *s, fuse_value v) {
  int i;
  if (s->members) {
    for (i = 0; i < s->count; i++)
      if (s->members[i] == v) return 1;
    return 0;
  }
  return s->comp < 0 || g->nodes[v].composite == s->comp;
}

/* Does v lead back, through element-wise epilogue ops in scope, to a conv2d / matmul? */
static int fuse__leads_to_reduction(const fuse_graph *g, fuse_value v, const fuse__scope *comp,
                                    int depth) {
  const fuse__node *n = &g->nodes[v];
  int k;
  if (depth > 64) return 0;
  for (;;) { /* through unary clamps without recursion */
    if (!fuse__in_scope(g, comp, v)) return 0;
    if (n->op != FUSE__OP_RELU && n->op != FUSE__OP_CLIP) break;
    v = n->in[0];
    n = &g->nodes[v];
  }
  if (fuse__is_reduction(n->op)) return 1;
  switch (n->op) {
  case FUSE__OP_ADD:
  case FUSE__OP_MAXIMUM:
  case FUSE__OP_MINIMUM:
    for (k = 0; k < 2; k++)
      if (fuse__leads_to_reduction(g, n->in[k], comp, depth + 1)) return 1;
    return 0;
  default: return 0;
  }
}

/* Is b (shape) a per-output-channel bias for reduction output y: all ones but the channel
   dimension (conv2d: dimension 1; matmul: the last), right-aligned as numpy broadcasts? */
static int fuse__bias_shape(const fuse_graph *g, const fuse__node *red, int rank,
                            const int64_t *b) {
  int ch = red->op == FUSE__OP_CONV2D ? 1 : red->rank - 1, d;
  int64_t K;
  /* a matmul's channels are its last axis only when its second operand has columns */
  if (red->op == FUSE__OP_MATMUL && (g->nodes[red->in[1]].rank < 2 || red->rank < 1)) return 0;
  K = red->shape[ch];
  if (rank > red->rank || rank < red->rank - ch) return 0;
  for (d = 0; d < rank; d++) {
    int yd = d + red->rank - rank;
    if (b[d] != (yd == ch ? K : 1)) return 0;
  }
  return 1;
}

/* The epilogue clamp pair composition: clamp(clamp(x, lo1, hi1), lo2, hi2) is the clamp
   whose bounds are the second clamp applied to the first's bounds. */
static float fuse__clampf(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }

/* maximum / minimum with a scalar constant: the clamp *op; *next continues the chain.
   0: not a clamp (out->why says why). */
static int fuse__analyze_bound(const fuse_graph *g, fuse_value cur, fuse_epilogue *out,
                               fuse_post_op *op, fuse_value *next) {
  const fuse__node *n = &g->nodes[cur];
  float c;
  int k = fuse__scalar_const(g, n->in[1], &c) ? 1 : fuse__scalar_const(g, n->in[0], &c) ? 0 : -1;
  if (k < 0) {
    const fuse__node *a = &g->nodes[n->in[0]], *b = &g->nodes[n->in[1]];
    if (fuse__numel(a->rank, a->shape) == 1 || fuse__numel(b->rank, b->shape) == 1)
      return fuse__epi_why(out, g, "%s %V: its bound is not a constant", fuse__op_names[n->op],
                           cur);
    return fuse__epi_why(out, g, "%s %V of two tensors %S and %S is not a clamp",
                         fuse__op_names[n->op], cur, a->rank, a->shape, b->rank, b->shape);
  }
  if (c != c) return fuse__epi_why(out, g, "%s %V: its bound is NaN", fuse__op_names[n->op], cur);
  op->kind = FUSE_POST_CLAMP;
  op->lo = n->op == FUSE__OP_MAXIMUM ? c : -HUGE_VALF;
  op->hi = n->op == FUSE__OP_MAXIMUM ? HUGE_VALF : c;
  *next = n->in[1 - k];
  return 1;
}

/* The per-channel bias that `other`, added to the output of reduction `red`, is (itself, or
   the source of a reshape in scope); FUSE_NONE when it is not one. */
static fuse_value fuse__add_bias(const fuse_graph *g, const fuse__scope *comp, fuse_value red,
                                 fuse_value other) {
  const fuse__node *rd = &g->nodes[red], *o = &g->nodes[other];
  if (o->op == FUSE__OP_RESHAPE && fuse__in_scope(g, comp, other)) {
    const fuse__node *src = &g->nodes[o->in[0]];
    if (fuse__bias_shape(g, rd, o->rank, o->shape) &&
        fuse__numel(src->rank, src->shape) ==
            rd->shape[rd->op == FUSE__OP_CONV2D ? 1 : rd->rank - 1])
      return o->in[0];
    return FUSE_NONE;
  }
  return fuse__bias_shape(g, rd, o->rank, o->shape) ? other : FUSE_NONE;
}

/* add: *next is the operand that leads to the reduction; the other is the bias (out->bias,
   when next is the reduction itself: 2) or a residual of the add's shape (*op: 1).
   0: neither (out->why says why). */
static int fuse__analyze_add(const fuse_graph *g, const fuse__scope *comp, fuse_value cur,
                             fuse_epilogue *out, fuse_post_op *op, fuse_value *next) {
  const fuse__node *n = &g->nodes[cur], *o, *rd;
  int l0 = fuse__leads_to_reduction(g, n->in[0], comp, 0);
  int l1 = fuse__leads_to_reduction(g, n->in[1], comp, 0);
  int k;
  fuse_value other;
  if (!l0 && !l1)
    return fuse__epi_why(out, g, "add %V: neither operand leads to a conv2d / matmul", cur);
  k = l0 ? 0 : 1; /* the chain operand; with both, the first (a residual from another conv) */
  if (l0 && l1 && !fuse__in_scope(g, comp, n->in[0])) k = 1;
  *next = n->in[k];
  other = n->in[1 - k];
  o = &g->nodes[other];
  rd = &g->nodes[*next];
  if (fuse__is_reduction(rd->op)) { /* next to the reduction: a bias? */
    fuse_value b = fuse__add_bias(g, comp, *next, other);
    if (b != FUSE_NONE) {
      out->bias = b;
      return 2;
    }
  }
  if (o->op > FUSE__OP_CONST && fuse__in_scope(g, comp, other) &&
      (comp->comp >= 0 || comp->members))
    return fuse__epi_why(out, g,
                         "add %V: its operand %V is computed inside the composite, so it is "
                         "neither a bias nor a residual",
                         cur, other);
  if (o->rank != n->rank || memcmp(o->shape, n->shape, (size_t)n->rank * sizeof(int64_t)) != 0 ||
      rd->rank != n->rank || memcmp(rd->shape, n->shape, (size_t)n->rank * sizeof(int64_t)) != 0) {
    if (o->rank >= 1 && o->shape[o->rank - 1] > 1 && o->rank < rd->rank &&
        fuse__numel(o->rank, o->shape) == o->shape[o->rank - 1])
      return fuse__epi_why(out, g,
                           "add %V: operand %S broadcasts along the last axis (width) of %S, "
                           "not along the channels, so it is not a bias",
                           cur, o->rank, o->shape, rd->rank, rd->shape);
    return fuse__epi_why(out, g,
                         "add %V: operand %S is neither a per-channel bias nor a residual of "
                         "shape %S; the add's result is %S",
                         cur, o->rank, o->shape, rd->rank, rd->shape, n->rank, n->shape);
  }
  op->kind = FUSE_POST_ADD;
  op->lo = op->hi = 0;
  op->tensor = other;
  return 1;
}

/* The post-ops collected from the root inward (rev), reversed into application order with
   adjacent clamps merged. 0: more than FUSE_MAX_POST_OPS remain (out->why says so). */
static int fuse__order_post_ops(const fuse_graph *g, const fuse_post_op *rev, int n_rev,
                                fuse_value reduction, fuse_epilogue *out) {
  int i;
  for (i = n_rev - 1; i >= 0; i--) {
    fuse_post_op *last = out->num_post ? &out->post[out->num_post - 1] : NULL;
    if (rev[i].kind == FUSE_POST_CLAMP && last && last->kind == FUSE_POST_CLAMP) {
      float lo = fuse__clampf(last->lo, rev[i].lo, rev[i].hi);
      float hi = fuse__clampf(last->hi, rev[i].lo, rev[i].hi);
      last->lo = lo;
      last->hi = hi;
      continue;
    }
    if (out->num_post == FUSE_MAX_POST_OPS)
      return fuse__epi_why(out, g, "more than %d post-ops after %V", FUSE_MAX_POST_OPS, reduction);
    out->post[out->num_post] = rev[i];
    if (rev[i].kind == FUSE_POST_CLAMP) out->post[out->num_post].tensor = FUSE_NONE;
    out->post[out->num_post].operand = -1; /* set by fuse_compile */
    out->num_post++;
  }
  return 1;
}

/* Walks from root inward through the epilogue ops to the conv2d / matmul. */
static fuse_result fuse__analyze(const fuse_graph *g, fuse_value root, const fuse__scope *comp,
                                 fuse_epilogue *out) {
  fuse_post_op rev[64]; /* collected from the root inward */
  int n_rev = 0, i;
  fuse_value cur = root, chain[64];
  int n_chain = 0;
  const fuse__node *red;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  out->reduction = out->bias = FUSE_NONE;
  for (;;) {
    const fuse__node *n = &g->nodes[cur];
    fuse_value next = FUSE_NONE;
    int found = 1; /* 1: rev[n_rev] is the op's post-op; 2: it was the bias; 0: neither */
    if (!fuse__in_scope(g, comp, cur))
      return fuse__epi_why(out, g, "%V (%s) is outside the composite; no conv2d / matmul found",
                           cur, fuse__op_names[n->op]),
             FUSE_ERROR_UNSUPPORTED;
    if (fuse__is_reduction(n->op)) break;
    if (n_rev == 64 || n_chain == 64)
      return fuse__epi_why(out, g, "the chain from %V is too long", root), FUSE_ERROR_UNSUPPORTED;
    chain[n_chain++] = cur;
    switch (n->op) {
    case FUSE__OP_RELU:
    case FUSE__OP_CLIP:
      rev[n_rev].kind = FUSE_POST_CLAMP;
      rev[n_rev].lo = n->op == FUSE__OP_RELU ? 0 : n->a.clip.lo;
      rev[n_rev].hi = n->op == FUSE__OP_RELU ? HUGE_VALF : n->a.clip.hi;
      next = n->in[0];
      break;
    case FUSE__OP_MAXIMUM:
    case FUSE__OP_MINIMUM: found = fuse__analyze_bound(g, cur, out, &rev[n_rev], &next); break;
    case FUSE__OP_ADD: found = fuse__analyze_add(g, comp, cur, out, &rev[n_rev], &next); break;
    default:
      return fuse__epi_why(out, g, "%s %V is not an epilogue op (bias add, residual add, relu, clip, "
                           "maximum / minimum with a constant)",
                           fuse__op_names[n->op], cur),
             FUSE_ERROR_UNSUPPORTED;
    }
    if (!found) return FUSE_ERROR_UNSUPPORTED;
    cur = next;
    if (found == 2) break;
    n_rev++;
  }
  red = &g->nodes[cur];
  if (!fuse__is_reduction(red->op))
    return fuse__epi_why(out, g, "no conv2d / matmul before %V", root), FUSE_ERROR_UNSUPPORTED;
  if (!fuse__in_scope(g, comp, cur))
    return fuse__epi_why(out, g, "the conv2d / matmul %V is outside the composite", cur),
           FUSE_ERROR_UNSUPPORTED;
  for (i = 0; i < n_chain; i++) { /* the epilogue keeps the reduction's shape */
    const fuse__node *c = &g->nodes[chain[i]];
    if (c->rank != red->rank || memcmp(c->shape, red->shape, (size_t)red->rank * sizeof(int64_t)))
      return fuse__epi_why(out, g, "%s %V broadcasts %S to %S", fuse__op_names[c->op], chain[i],
                           red->rank, red->shape, c->rank, c->shape),
             FUSE_ERROR_UNSUPPORTED;
  }
  out->reduction = cur;
  return fuse__order_post_ops(g, rev, n_rev, cur, out) ? FUSE_OK : FUSE_ERROR_UNSUPPORTED;
}

FUSE_API fuse_result fuse_analyze_epilogue(const fuse_graph *g, fuse_value root,
                                           fuse_epilogue *out) {
  fuse__scope scope;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  out->reduction = out->bias = FUSE_NONE;
  if (!fuse__valid(g, root))
    return fuse__epi_why(out, g, "root %d is not a value of the graph", root),
           FUSE_ERROR_INVALID_ARGUMENT;
  scope.comp = g->nodes[root].composite;
  scope.members = NULL;
  scope.count = 0;
  return fuse__analyze(g, root, &scope, out);
}


/* One post-op as the text form's epilogue comment ("clamp [0, 6]", sep " ") and the plan
   listing ("clamp[0, 6]", sep "") write it: its kind, then its parameters. A residual add is
   "add" (the text form follows it with the residual's label). */
static void fuse__post_write(fuse__out *o, const fuse_post_op *op, const char *sep) {
  switch (op->kind) {
  case FUSE_POST_ADD:
    fuse__puts(o, "add");
    break;
  case FUSE_POST_CLAMP:
  default:
    fuse__puts(o, "clamp");
    fuse__puts(o, sep);
    fuse__puts(o, "[");
    fuse__put_float(o, op->lo);
    fuse__puts(o, ", ");
    fuse__put_float(o, op->hi);
    fuse__puts(o, "]");
    break;
  }
}
