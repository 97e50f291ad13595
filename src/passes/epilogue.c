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
  *out = fuse__const_at(n, 0);
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

/* Whether op may sit in an epilogue chain: its first operand (or either, for the binary
   ones) carries the reduction's output. The unary ones are their row's FUSE__OPF_EPILOGUE
   (prelu's slope its second operand); the binary ones are the arithmetic and the bounds: add,
   sub, mul, div, maximum, minimum by their chain kind. */
static int fuse__epi_unary_op(int op) { return (fuse__ops[op].flags & FUSE__OPF_EPILOGUE) != 0; }
static int fuse__epi_binary_op(int op) {
  int kind = fuse__ops[op].chain;
  return kind >= FUSE__CHAIN_ADD && kind <= FUSE__CHAIN_MIN;
}

/* Does v lead back, through element-wise epilogue ops in scope, to a conv2d / matmul? */
static int fuse__leads_to_reduction(const fuse_graph *g, fuse_value v, const fuse__scope *comp,
                                    int depth) {
  const fuse__node *n = &g->nodes[v];
  int k;
  if (depth > 64) return 0;
  for (;;) { /* through unary ops without recursion */
    if (!fuse__in_scope(g, comp, v)) return 0;
    if (!fuse__epi_unary_op(n->op)) break;
    v = n->in[0];
    n = &g->nodes[v];
  }
  if (fuse__is_reduction(n->op)) return 1;
  if (!fuse__epi_binary_op(n->op)) return 0;
  for (k = 0; k < 2; k++)
    if (fuse__leads_to_reduction(g, n->in[k], comp, depth + 1)) return 1;
  return 0;
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
      return fuse__epi_why(out, g, "%s %V: its bound is not a constant", fuse__ops[n->op].name,
                           cur);
    return fuse__epi_why(out, g, "%s %V of two tensors %S and %S is not a clamp",
                         fuse__ops[n->op].name, cur, a->rank, a->shape, b->rank, b->shape);
  }
  if (c != c) return fuse__epi_why(out, g, "%s %V: its bound is NaN", fuse__ops[n->op].name, cur);
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

/* The post-op kinds' names, as the text form, the plan listing and grown composites' names
   write them (a clamp in a composite's name is "relu", as the default rules name it). */
static const char *const fuse__post_names[] = {
    "?", "clamp", "add", "linear", "sigmoid", "tanh", "silu", "hardsigmoid", "hardswish",
    "leaky_relu", "elu", "selu", "softplus", "mish", "gelu", "gelu_tanh", "exp", "scale", "shift",
    "prelu"};
/* a name for every fuse_post_kind (FUSE_POST_PRELU the last): checked when this compiles */
typedef char fuse__post_names_cover_the_kinds[sizeof fuse__post_names / sizeof *fuse__post_names ==
                                                      FUSE_POST_PRELU + 1
                                                  ? 1
                                                  : -1];

static const char *fuse__post_name(int kind) {
  return kind > 0 && kind < (int)(sizeof fuse__post_names / sizeof *fuse__post_names)
             ? fuse__post_names[kind]
             : "?";
}

/* A post-op of `kind` with parameters alpha, beta (and nothing else set). */
static fuse_post_op fuse__post(int kind, float alpha, float beta) {
  fuse_post_op op;
  memset(&op, 0, sizeof op);
  op.kind = (fuse_post_kind)kind;
  op.alpha = alpha;
  op.beta = beta;
  op.tensor = FUSE_NONE;
  op.operand = -1;
  return op;
}
static fuse_post_op fuse__post_clamp(float lo, float hi) {
  fuse_post_op op = fuse__post(FUSE_POST_CLAMP, 0, 0);
  op.lo = lo;
  op.hi = hi;
  return op;
}

/* The operand of a binary op that is a scalar constant (its value in *c), or -1. */
static int fuse__scalar_operand(const fuse_graph *g, const fuse__node *n, float *c) {
  return fuse__scalar_const(g, n->in[1], c) ? 1 : fuse__scalar_const(g, n->in[0], c) ? 0 : -1;
}

/* The post-op of a unary epilogue op, or of a binary one with a scalar constant operand;
   *next is the operand it applies to. 0: not such an op. A unary op's post-op is its row's
   `post` kind, with a.unary's alpha and beta when the row says FUSE__OPF_POST_ALPHA (leaky
   relu's and elu's beta is 0: their builders set none); the cases below are what the row
   does not say. */
static int fuse__unary_post(const fuse_graph *g, fuse_value cur, fuse_post_op *op,
                            fuse_value *next) {
  const fuse__node *n = &g->nodes[cur];
  const fuse__op_row *row = &fuse__ops[n->op];
  float c;
  int k;
  if (n->num_in < 1 || n->op <= FUSE__OP_CONST) return 0;
  *next = n->in[0];
  if (row->flags & FUSE__OPF_EPILOGUE) {
    switch (n->op) {
    case FUSE__OP_RELU: *op = fuse__post_clamp(0, HUGE_VALF); return 1;
    case FUSE__OP_CLIP: *op = fuse__post_clamp(n->a.clip.lo, n->a.clip.hi); return 1;
    case FUSE__OP_NEG: *op = fuse__post(FUSE_POST_LINEAR, -1, 0); return 1;
    case FUSE__OP_GELU:
      *op = fuse__post(n->a.unary.mode ? FUSE_POST_GELU_TANH : FUSE_POST_GELU, 0, 0);
      return 1;
    case FUSE__OP_PRELU: /* one slope for every channel: a leaky relu */
      if (!fuse__scalar_const(g, n->in[1], &c)) return 0;
      *op = fuse__post(FUSE_POST_LEAKY_RELU, c, 0);
      return 1;
    default:
      *op = row->flags & FUSE__OPF_POST_ALPHA
                ? fuse__post(row->post, n->a.unary.alpha, n->a.unary.beta)
                : fuse__post(row->post, 0, 0);
      return 1;
    }
  }
  if (!fuse__epi_binary_op(n->op) || (k = fuse__scalar_operand(g, n, &c)) < 0 || c != c)
    return 0;
  *next = n->in[1 - k];
  switch (row->chain) {
  case FUSE__CHAIN_ADD: *op = fuse__post(FUSE_POST_LINEAR, 1, c); return 1;
  case FUSE__CHAIN_SUB:
    *op = k ? fuse__post(FUSE_POST_LINEAR, 1, -c) : fuse__post(FUSE_POST_LINEAR, -1, c);
    return 1;
  case FUSE__CHAIN_MUL: *op = fuse__post(FUSE_POST_LINEAR, c, 0); return 1;
  case FUSE__CHAIN_DIV: /* c / v is no epilogue op; v / c is v * (1 / c), within an ulp */
    if (!k) return 0;
    *op = fuse__post(FUSE_POST_LINEAR, 1 / c, 0);
    return 1;
  case FUSE__CHAIN_MAX: *op = fuse__post_clamp(c, HUGE_VALF); return 1;
  default: *op = fuse__post_clamp(-HUGE_VALF, c); return 1; /* FUSE__CHAIN_MIN */
  }
}

/* Whether a post-op kind reads a tensor (an operand of the fused step). */
static int fuse__post_has_tensor(int kind) {
  return kind == FUSE_POST_ADD || kind == FUSE_POST_SCALE || kind == FUSE_POST_SHIFT ||
         kind == FUSE_POST_PRELU;
}

/* The operand of add / mul (or prelu's slope) that is a constant of more than one value along
   at most one axis (itself, or the source of a reshape in scope): *t is the constant, and the
   operand's index is returned; -1 when there is none. Whether that axis is the channels is
   checked once the reduction is found (fuse__channel_ok). */
static int fuse__channel_operand(const fuse_graph *g, const fuse__scope *comp, const fuse__node *n,
                                 fuse_value *t) {
  int k, d;
  for (k = 1; k >= 0; k--) {
    fuse_value o = n->in[k], src = o;
    const fuse__node *on = &g->nodes[o];
    int big = 0;
    if (n->op == FUSE__OP_PRELU && k == 0) break;
    if (on->op == FUSE__OP_RESHAPE && fuse__in_scope(g, comp, o)) src = on->in[0];
    if (g->nodes[src].op != FUSE__OP_CONST || fuse__numel(on->rank, on->shape) < 2) continue;
    if (on->rank == n->rank && !memcmp(on->shape, n->shape, (size_t)n->rank * sizeof(int64_t)))
      continue; /* of the output's shape: a residual */
    for (d = 0; d < on->rank; d++) big += on->shape[d] > 1;
    if (big != 1 || on->rank > n->rank) continue;
    *t = src;
    return k;
  }
  return -1;
}

/* A per-channel post-op's operand (its graph value `at`, shaped as written) against the
   reduction: one value per output channel, broadcast along everything else. */
static int fuse__channel_ok(const fuse_graph *g, const fuse__node *red, fuse_value at) {
  const fuse__node *o = &g->nodes[at];
  return fuse__bias_shape(g, red, o->rank, o->shape);
}

/* The unary epilogue ops in scope from v inward: path[i] and its post-op ops[i], at most
   max of them; *end is the value below the last. */
static int fuse__unary_path(const fuse_graph *g, const fuse__scope *comp, fuse_value v,
                            fuse_value *path, fuse_post_op *ops, int max, fuse_value *end) {
  int n = 0;
  fuse_value nx;
  while (n < max && fuse__in_scope(g, comp, v) && fuse__unary_post(g, v, &ops[n], &nx)) {
    path[n++] = v;
    v = nx;
  }
  *end = v;
  return n;
}

static int fuse__near(float a, float b) { return fabsf(a - b) <= 1e-5f * fabsf(b); }

/* The gated kind of v * f(v) for f, a list of post-ops in the order applied (linear steps
   merged): SiLU, hardswish, GELU (erf), mish; *scale multiplies its result. 0: none. */
static int fuse__gate_kind(const fuse_post_op *f, int n, fuse_post_op *gate, float *scale) {
  *scale = 1;
  if (n == 1 && f[0].kind == FUSE_POST_SIGMOID) {
    *gate = fuse__post(FUSE_POST_SILU, 1, 0);
    return 1;
  }
  if (n == 2 && f[0].kind == FUSE_POST_LINEAR && f[0].beta == 0 && f[1].kind == FUSE_POST_SIGMOID) {
    *gate = fuse__post(FUSE_POST_SILU, f[0].alpha, 0);
    return 1;
  }
  if (n == 1 && f[0].kind == FUSE_POST_HARDSIGMOID && fuse__near(f[0].alpha, 1.0f / 6) &&
      fuse__near(f[0].beta, 0.5f)) {
    *gate = fuse__post(FUSE_POST_HARDSWISH, 0, 0);
    return 1;
  }
  /* x * relu6(x + 3) [/ 6]: c * clamp(a x + b, 0, hi) = c hi * hardsigmoid(x) */
  if ((n == 2 || (n == 3 && f[2].kind == FUSE_POST_LINEAR && f[2].beta == 0)) &&
      f[0].kind == FUSE_POST_LINEAR && f[1].kind == FUSE_POST_CLAMP && f[1].lo == 0 &&
      f[1].hi > 0 && f[1].hi < HUGE_VALF && fuse__near(f[0].alpha / f[1].hi, 1.0f / 6) &&
      fuse__near(f[0].beta / f[1].hi, 0.5f)) {
    *gate = fuse__post(FUSE_POST_HARDSWISH, 0, 0);
    *scale = f[1].hi * (n == 3 ? f[2].alpha : 1);
    return 1;
  }
  /* x * (a + a erf(x / sqrt 2)) = 2a gelu(x) */
  if (n == 3 && f[0].kind == FUSE_POST_LINEAR && f[0].beta == 0 &&
      fuse__near(f[0].alpha, 0.70710678f) && (int)f[1].kind == FUSE__POST_ERF &&
      f[2].kind == FUSE_POST_LINEAR && fuse__near(f[2].beta, f[2].alpha)) {
    *gate = fuse__post(FUSE_POST_GELU, 0, 0);
    *scale = 2 * f[2].alpha;
    return 1;
  }
  if (n == 2 && f[0].kind == FUSE_POST_SOFTPLUS && f[1].kind == FUSE_POST_TANH) {
    *gate = fuse__post(FUSE_POST_MISH, 0, 0);
    return 1;
  }
  return 0;
}

/* mul of two functions of one value u, one of them u times a constant (or u): the gated
   kind (fuse__gate_kind) at u. Writes the post-ops at rev (root inward: the scale, then the
   kind) and returns how many, with *next = u and the ops on both sides added to chain.
   0: not such a product (out->why says why). */
static int fuse__analyze_gate(const fuse_graph *g, const fuse__scope *comp, fuse_value cur,
                              fuse_epilogue *out, fuse_post_op *rev, fuse_value *next,
                              fuse_value *chain, int *n_chain) {
  const fuse__node *n = &g->nodes[cur];
  fuse_value path[2][8], end[2], u = FUSE_NONE;
  fuse_post_op ops[2][8], f[8], gate;
  int len[2], cut[2] = {0, 0}, s, i, j, nf = 0, x = -1;
  float scale, side_scale = 1;
  for (s = 0; s < 2; s++) len[s] = fuse__unary_path(g, comp, n->in[s], path[s], ops[s], 8, &end[s]);
  for (i = 0; i <= len[0] && u == FUSE_NONE; i++) /* the first value both sides reach */
    for (j = 0; j <= len[1]; j++)
      if ((i < len[0] ? path[0][i] : end[0]) == (j < len[1] ? path[1][j] : end[1])) {
        u = i < len[0] ? path[0][i] : end[0];
        cut[0] = i, cut[1] = j;
        break;
      }
  if (u == FUSE_NONE || !fuse__leads_to_reduction(g, u, comp, 0))
    return fuse__epi_why(out, g, "mul %V of two tensors is neither a scale by a constant nor "
                         "x * f(x) (SiLU, hardswish, GELU, mish)", cur);
  for (s = 0; s < 2 && x < 0; s++) { /* the side that is u times a constant */
    float a = 1;
    for (i = 0; i < cut[s] && ops[s][i].kind == FUSE_POST_LINEAR && ops[s][i].beta == 0; i++)
      a *= ops[s][i].alpha;
    if (i == cut[s]) x = s, side_scale = a;
  }
  if (x < 0 || cut[1 - x] == 0)
    return fuse__epi_why(out, g, "mul %V of %V by a function of it is not SiLU, hardswish, GELU "
                         "or mish", cur, u);
  for (i = cut[1 - x] - 1; i >= 0; i--) { /* f in the order applied, linear steps merged */
    const fuse_post_op *o = &ops[1 - x][i];
    if (nf && o->kind == FUSE_POST_LINEAR && f[nf - 1].kind == FUSE_POST_LINEAR) {
      f[nf - 1].beta = f[nf - 1].beta * o->alpha + o->beta;
      f[nf - 1].alpha *= o->alpha;
    } else {
      f[nf++] = *o;
    }
  }
  if (!fuse__gate_kind(f, nf, &gate, &scale))
    return fuse__epi_why(out, g, "mul %V of %V by a function of it is not SiLU, hardswish, GELU "
                         "or mish", cur, u);
  for (s = 0; s < 2; s++)
    for (i = 0; i < cut[s]; i++) chain[(*n_chain)++] = path[s][i];
  scale *= side_scale;
  j = 0;
  if (scale != 1) rev[j++] = fuse__post(FUSE_POST_LINEAR, scale, 0);
  rev[j++] = gate;
  *next = u;
  return j;
}

/* The post-ops collected from the root inward (rev), reversed into application order with
   adjacent clamps merged and adjacent linear steps merged. 0: more than FUSE_MAX_POST_OPS
   remain (out->why says so). */
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
    if (rev[i].kind == FUSE_POST_LINEAR && last && last->kind == FUSE_POST_LINEAR) {
      last->beta = last->beta * rev[i].alpha + rev[i].beta;
      last->alpha *= rev[i].alpha;
      if (last->alpha == 1 && last->beta == 0) out->num_post--; /* x * 6 / 6 */
      continue;
    }
    if (rev[i].kind == FUSE_POST_LINEAR && rev[i].alpha == 1 && rev[i].beta == 0) continue;
    if (out->num_post == FUSE_MAX_POST_OPS)
      return fuse__epi_why(out, g, "more than %d post-ops after %V", FUSE_MAX_POST_OPS, reduction);
    out->post[out->num_post] = rev[i];
    if (!fuse__post_has_tensor(rev[i].kind)) out->post[out->num_post].tensor = FUSE_NONE;
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
  fuse_value cur = root, chain[96];
  int n_chain = 0;
  const fuse__node *red;
  if (!out) return FUSE_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  out->reduction = out->bias = FUSE_NONE;
  for (;;) {
    const fuse__node *n = &g->nodes[cur];
    fuse_value next = FUSE_NONE, t;
    float c;
    int found = 1, k; /* found 1: rev[n_rev] is the op's post-op; 2: it was the bias; 0: neither */
    if (!fuse__in_scope(g, comp, cur))
      return fuse__epi_why(out, g, "%V (%s) is outside the composite; no conv2d / matmul found",
                           cur, fuse__ops[n->op].name),
             FUSE_ERROR_UNSUPPORTED;
    if (fuse__is_reduction(n->op)) break;
    if (n_rev > 62 || n_chain > 64)
      return fuse__epi_why(out, g, "the chain from %V is too long", root), FUSE_ERROR_UNSUPPORTED;
    chain[n_chain++] = cur;
    rev[n_rev] = fuse__post(FUSE_POST_CLAMP, 0, 0);
    if ((n->op == FUSE__OP_MUL || n->op == FUSE__OP_PRELU ||
         (n->op == FUSE__OP_ADD && !fuse__is_reduction(g->nodes[n->in[0]].op) &&
          !fuse__is_reduction(g->nodes[n->in[1]].op))) && /* an add on it is its bias */
        (k = fuse__channel_operand(g, comp, n, &t)) >= 0) { /* per channel */
      rev[n_rev] = fuse__post(n->op == FUSE__OP_ADD ? FUSE_POST_SHIFT
                              : n->op == FUSE__OP_MUL ? FUSE_POST_SCALE : FUSE_POST_PRELU, 0, 0);
      rev[n_rev].tensor = t;
      rev[n_rev].operand = n->in[k]; /* as written, checked against the reduction below */
      next = n->in[1 - k];
    } else if (n->op == FUSE__OP_ADD && (fuse__scalar_operand(g, n, &c) < 0 ||
                                  fuse__is_reduction(g->nodes[n->in[0]].op) ||
                                  fuse__is_reduction(g->nodes[n->in[1]].op))) {
      found = fuse__analyze_add(g, comp, cur, out, &rev[n_rev], &next); /* bias, residual */
    } else if (n->op == FUSE__OP_MAXIMUM || n->op == FUSE__OP_MINIMUM) {
      found = fuse__analyze_bound(g, cur, out, &rev[n_rev], &next);
    } else if (fuse__unary_post(g, cur, &rev[n_rev], &next)) {
      if ((int)rev[n_rev].kind == FUSE__POST_ERF)
        return fuse__epi_why(out, g, "erf %V is an epilogue op only as part of GELU "
                             "(x / 2 * (1 + erf(x / sqrt 2)))", cur),
               FUSE_ERROR_UNSUPPORTED;
    } else if (n->op == FUSE__OP_MUL) {
      if (!(found = fuse__analyze_gate(g, comp, cur, out, &rev[n_rev], &next, chain, &n_chain)))
        return FUSE_ERROR_UNSUPPORTED;
      n_rev += found - 1;
      found = 1;
    } else if (n->op == FUSE__OP_PRELU) {
      const fuse__node *sl = &g->nodes[n->in[1]];
      return fuse__epi_why(out, g, "prelu %V: its slope %S is not a constant of one value, or "
                           "of one per channel", cur, sl->rank, sl->shape),
             FUSE_ERROR_UNSUPPORTED;
    } else {
      return fuse__epi_why(out, g, "%s %V is not an epilogue op (bias add, residual add, a "
                           "clamp, an activation, a scale or shift by a scalar constant)",
                           fuse__ops[n->op].name, cur),
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
  for (i = 0; i < n_rev; i++) /* per-channel operands: one value per output channel */
    if ((rev[i].kind == FUSE_POST_SCALE || rev[i].kind == FUSE_POST_SHIFT ||
         rev[i].kind == FUSE_POST_PRELU) && !fuse__channel_ok(g, red, rev[i].operand)) {
      const fuse__node *o = &g->nodes[rev[i].operand];
      return fuse__epi_why(out, g, "%s by %V: its operand %S is not one value per output channel "
                           "of %S", fuse__post_name(rev[i].kind), rev[i].operand, o->rank,
                           o->shape, red->rank, red->shape),
             FUSE_ERROR_UNSUPPORTED;
    }
  for (i = 0; i < n_chain; i++) { /* the epilogue keeps the reduction's shape */
    const fuse__node *c = &g->nodes[chain[i]];
    if (c->rank != red->rank || memcmp(c->shape, red->shape, (size_t)red->rank * sizeof(int64_t)))
      return fuse__epi_why(out, g, "%s %V broadcasts %S to %S", fuse__ops[c->op].name, chain[i],
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
  int params = 0;
  fuse__puts(o, fuse__post_name(op->kind));
  switch (op->kind) {
  case FUSE_POST_CLAMP:
    fuse__puts(o, sep);
    fuse__puts(o, "[");
    fuse__put_float(o, op->lo);
    fuse__puts(o, ", ");
    fuse__put_float(o, op->hi);
    fuse__puts(o, "]");
    return;
  case FUSE_POST_LINEAR: case FUSE_POST_HARDSIGMOID: case FUSE_POST_SELU: params = 2; break;
  case FUSE_POST_LEAKY_RELU: case FUSE_POST_ELU: params = 1; break;
  case FUSE_POST_SILU: params = op->alpha != 1; break;
  default: break;
  }
  if (!params) return;
  fuse__puts(o, sep);
  fuse__puts(o, "[");
  fuse__put_float(o, op->alpha);
  if (params == 2) {
    fuse__puts(o, ", ");
    fuse__put_float(o, op->beta);
  }
  fuse__puts(o, "]");
}

/* ------------------------------------------------------- squeeze-excite gates -- */
/* A squeeze-excite gate, x * g with g of [N, C, 1, 1] (one value per image and channel,
   computed from x itself, so the step that makes x cannot apply it), feeding a conv2d: the
   conv is linear in each input channel, so conv(x * g) = conv'(x) with the weights of input
   channel c times g[n, c]. fuse_compile scales the packed weights per image into the
   workspace (a K x C x taps pass) and runs the conv on x: the gated tensor is never
   written. That pass costs less than the multiply it replaces (reading x and writing x * g,
   H x W x C) while K < H x W, which is where it is done. */

/* Is v a mul of a tensor [N, C, H, W] by a gate [N or 1, C, 1, 1] (not a constant)? The
   operand index of the tensor in *xk. */
static int fuse__is_gate_mul(const fuse_graph *g, fuse_value v, int *xk) {
  const fuse__node *n = &g->nodes[v];
  int k;
  if (n->op != FUSE__OP_MUL || n->num_in != 2 || n->rank != 4) return 0;
  for (k = 0; k < 2; k++) {
    const fuse__node *x = &g->nodes[n->in[k]], *s = &g->nodes[n->in[1 - k]];
    if (x->rank == 4 && s->rank == 4 && s->op != FUSE__OP_CONST &&
        memcmp(x->shape, n->shape, 4 * sizeof(int64_t)) == 0 && s->shape[1] == x->shape[1] &&
        (s->shape[0] == x->shape[0] || s->shape[0] == 1) && s->shape[2] == 1 &&
        s->shape[3] == 1 && x->shape[2] * x->shape[3] > 1) {
      *xk = k;
      return 1;
    }
  }
  return 0;
}

/* The conv2d that gate multiply v (fuse__is_gate_mul) can be a prologue of, or FUSE_NONE with
   why (why_size bytes) saying why not. users: who reads each node. */
static fuse_value fuse__gate_conv(const fuse_graph *g, const fuse__users *users, fuse_value v,
                                  char *why, size_t why_size) {
  const fuse__node *n = &g->nodes[v], *c;
  fuse__out o;
  int k, xk, count = 0;
  fuse_value u = FUSE_NONE;
  o.buf = why;
  o.len = 0;
  o.cap = why_size;
  o.write = NULL;
  o.user = NULL;
  if (why_size) why[0] = 0;
  if (!fuse__is_gate_mul(g, v, &xk)) {
    fuse__format(&o, g, "mul %V is not a gate of [N, C, 1, 1] over [N, C, H, W]", v);
    return FUSE_NONE;
  }
  for (k = users->first[v]; k < users->first[v + 1]; k++)
    if (users->list[k] != u) u = users->list[k], count++;
  if (fuse__is_output(g, v) || count != 1) {
    fuse__format(&o, g, "the gated tensor %V is %s", v,
                 fuse__is_output(g, v) ? "a graph output" : "read by more than one op");
    return FUSE_NONE;
  }
  c = &g->nodes[u];
  if (c->op != FUSE__OP_CONV2D || c->in[0] != v || c->in[1] == v) {
    fuse__format(&o, g, "the gated tensor %V is read by %s %V, not as a conv2d's input", v,
                 fuse__ops[c->op].name, u);
    return FUSE_NONE;
  }
  if (c->a.conv.groups > 1) {
    fuse__format(&o, g, "conv2d %V has %d groups (a prologue scales one weight panel)", u,
                 c->a.conv.groups);
    return FUSE_NONE;
  }
  if (g->nodes[c->in[1]].op != FUSE__OP_CONST) {
    fuse__format(&o, g, "conv2d %V's weights are not constant", u);
    return FUSE_NONE;
  }
  if (c->shape[1] >= n->shape[2] * n->shape[3]) {
    fuse__format(&o, g, "scaling conv2d %V's weights per image (%D output channels) costs more "
                 "than the multiply over %D pixels", u, c->shape[1], n->shape[2] * n->shape[3]);
    return FUSE_NONE;
  }
  return u;
}
