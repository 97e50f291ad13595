/* ---------------------------------------------------------------- fusion report -- */
/* fuse_explain: every conv2d / matmul with its composite and fused epilogue, then every
   element-wise op that runs on its own with the reason it was not fused into the conv2d /
   matmul before it. A composite runs fused under the rule fuse_compile applies
   (fuse__decide_fusion): the analyzer accepts its root, and no member but the root is read
   from outside it or is a graph output. For an op outside every composite, the chain from
   the conv2d / matmul (its composite, if any) to the op is analyzed as a hypothetical
   epilogue: the analyzer's `why`, what else reads the chain's values, or that no rule
   matched a valid epilogue. Post-ops are written by fuse__post_write, so every kind the
   analyzer knows prints here as in the text form and the plan listing. */

/* Element-wise ops: what a fused kernel could, arithmetically, apply to a conv2d / matmul
   output on registers (the row's FUSE__OPF_ELEMENTWISE). */
static int fuse__is_elementwise(int op) {
  return (fuse__ops[op].flags & FUSE__OPF_ELEMENTWISE) != 0;
}

/* What the report and the picture know about a graph's fusion. Arrays from the graph's
   allocator; fuse__explainer_free releases them. */
typedef struct fuse__explainer {
  const fuse_graph *g;
  fuse__users users;
  fuse_epilogue *epi;       /* per composite: the analysis of its root */
  unsigned char *fused;     /* per composite: runs as one step */
  unsigned char *quant;     /* per composite: an integer step's kind (fuse__qkind), or 0 */
  fuse_value *escape;       /* per composite: a member other than the root that is read
                               outside it or is a graph output (FUSE_NONE: none) */
  fuse_value *reduction;    /* per composite: its conv2d / matmul, or FUSE_NONE */
  fuse_value *up;           /* per node: the conv2d / matmul it follows, through element-wise
                               ops outside composites and through a composite, or FUSE_NONE */
  fuse_value *via;          /* per node outside composites: the operand on that way */
  fuse_value *scope;        /* the members of one hypothetical epilogue */
  unsigned char *in_scope;  /* per node: in scope */
  int num_scope;
} fuse__explainer;

static void fuse__explainer_free(fuse__explainer *x) {
  const fuse_allocator *a = &x->g->alloc;
  fuse__users_free(x->g, &x->users);
  fuse__free(a, x->epi);
  fuse__free(a, x->fused);
  fuse__free(a, x->quant);
  fuse__free(a, x->escape);
  fuse__free(a, x->reduction);
  fuse__free(a, x->up);
  fuse__free(a, x->via);
  fuse__free(a, x->scope);
  fuse__free(a, x->in_scope);
}

/* How many ops read v (an op reading it twice counts once). */
static int fuse__users_count(const fuse__explainer *x, fuse_value v) {
  int k, count = 0, last = -1;
  for (k = x->users.first[v]; k < x->users.first[v + 1]; k++)
    if (x->users.list[k] != last) {
      last = x->users.list[k];
      count++;
    }
  return count;
}

/* 0: out of memory (x is then freed). */
static int fuse__explainer_init(fuse__explainer *x, const fuse_graph *g) {
  const fuse_allocator *a = &g->alloc;
  size_t nc = (size_t)g->num_composites + 1, nn = (size_t)g->num_nodes + 1;
  int i, k;
  memset(x, 0, sizeof *x);
  x->g = g;
  x->epi = (fuse_epilogue *)fuse__alloc(a, nc * sizeof(fuse_epilogue), 16);
  x->fused = (unsigned char *)fuse__alloc(a, nc, 16);
  x->quant = (unsigned char *)fuse__alloc(a, nc, 16);
  x->escape = (fuse_value *)fuse__alloc(a, nc * sizeof(fuse_value), 16);
  x->reduction = (fuse_value *)fuse__alloc(a, nc * sizeof(fuse_value), 16);
  x->up = (fuse_value *)fuse__alloc(a, nn * sizeof(fuse_value), 16);
  x->via = (fuse_value *)fuse__alloc(a, nn * sizeof(fuse_value), 16);
  x->scope = (fuse_value *)fuse__alloc(a, nn * sizeof(fuse_value), 16);
  x->in_scope = (unsigned char *)fuse__alloc(a, nn, 16);
  if (!x->epi || !x->fused || !x->quant || !x->escape || !x->reduction || !x->up || !x->via || !x->scope ||
      !x->in_scope || !fuse__users_build(g, &x->users)) {
    fuse__explainer_free(x);
    return 0;
  }
  memset(x->in_scope, 0, nn);
  for (i = 0; i < g->num_composites; i++) { /* fused as fuse_compile decides it */
    fuse__qparts q;
    x->quant[i] = (unsigned char)(fuse__qkind(g->composites[i].name) &&
                                          fuse__qparts_match(g, &x->users, g->composites[i].root, i, &q)
                                      ? q.kind
                                      : 0);
    if (x->quant[i]) { /* one integer step (plan/quant_pack.c) */
      memset(&x->epi[i], 0, sizeof x->epi[i]);
      x->fused[i] = 1, x->escape[i] = FUSE_NONE, x->reduction[i] = FUSE_NONE;
      continue;
    }
    x->fused[i] = fuse_analyze_epilogue(g, g->composites[i].root, &x->epi[i]) == FUSE_OK;
    x->reduction[i] = x->fused[i] ? x->epi[i].reduction : FUSE_NONE;
    x->escape[i] = fuse__escaping_member(g, &x->users, i);
    if (x->escape[i] != FUSE_NONE) x->fused[i] = 0;
  }
  for (i = 0; i < g->num_nodes; i++) {
    int c = g->nodes[i].composite;
    if (c >= 0 && x->reduction[c] == FUSE_NONE && fuse__is_reduction(g->nodes[i].op))
      x->reduction[c] = i;
  }
  for (i = 0; i < g->num_nodes; i++) { /* operands come before their users */
    const fuse__node *n = &g->nodes[i];
    x->up[i] = x->via[i] = FUSE_NONE;
    if (fuse__is_reduction(n->op)) x->up[i] = i;
    else if (n->composite >= 0) x->up[i] = x->reduction[n->composite];
    else if (fuse__is_elementwise(n->op)) {
      int pass;
      /* the chain goes on through an operand nothing else reads (a residual usually has
         other readers), else through the first that leads to a conv2d / matmul */
      for (pass = 0; pass < 2 && x->up[i] == FUSE_NONE; pass++)
        for (k = 0; k < n->num_in && x->up[i] == FUSE_NONE; k++) {
          fuse_value u = n->in[k];
          if (x->up[u] == FUSE_NONE ||
              (pass == 0 && (fuse__users_count(x, u) != 1 || fuse__is_output(g, u))))
            continue;
          x->up[i] = x->up[u];
          x->via[i] = u;
        }
    }
  }
  return 1;
}

/* Is v's op fused: a member of a composite that runs as one step? */
static int fuse__explain_fused(const fuse__explainer *x, fuse_value v) {
  int c = x->g->nodes[v].composite;
  return c >= 0 && x->fused[c];
}

static void fuse__scope_add(fuse__explainer *x, fuse_value v) {
  if (x->in_scope[v]) return;
  x->in_scope[v] = 1;
  x->scope[x->num_scope++] = v;
}

static void fuse__scope_clear(fuse__explainer *x) {
  int i;
  for (i = 0; i < x->num_scope; i++) x->in_scope[x->scope[i]] = 0;
  x->num_scope = 0;
}

/* The hypothetical epilogue ending at e (outside composites, x->up[e] set), into x->scope:
   first the ops on the way back from e (e itself first) to the conv2d / matmul (*path of
   them), then the conv2d / matmul, or the whole composite the way enters. Returns that
   composite, or -1. */
static int fuse__scope_chain(fuse__explainer *x, fuse_value e, int *path) {
  const fuse_graph *g = x->g;
  fuse_value v = e;
  int i;
  *path = 0;
  while (v != FUSE_NONE) {
    int c = g->nodes[v].composite;
    if (c >= 0) {
      for (i = g->composites[c].first; i <= g->composites[c].root; i++)
        if (g->nodes[i].composite == c) fuse__scope_add(x, i);
      return c;
    }
    fuse__scope_add(x, v);
    if (fuse__is_reduction(g->nodes[v].op)) break;
    (*path)++;
    v = x->via[v];
  }
  return -1;
}

/* "mul %13 reads it too" / "mul %13 and add %15 read it too" / "mul %13, add %15 and 2 more
   read it too": the count users of v outside the scope. */
static void fuse__explain_readers(fuse__out *o, const fuse__explainer *x, fuse_value v, int count) {
  const fuse_graph *g = x->g;
  int k, shown = 0, last = -1, limit = count <= 3 ? count : 2;
  for (k = x->users.first[v]; k < x->users.first[v + 1] && shown < limit; k++) {
    int u = x->users.list[k];
    if (x->in_scope[u] || u == last) continue;
    last = u;
    if (shown) fuse__puts(o, shown + 1 == count ? " and " : ", ");
    fuse__format(o, g, "%s %V", fuse__ops[g->nodes[u].op].name, u);
    shown++;
  }
  if (count > shown) fuse__format(o, g, " and %d more", count - shown);
  fuse__puts(o, count == 1 ? " reads it too" : " read it too");
}

/* The first value of the scope but its end that something outside reads, or that is a graph
   output: "%11 (add) has 2 users: mul %13 reads it too". 0: none. */
static int fuse__explain_escape(fuse__out *o, const fuse__explainer *x, fuse_value end) {
  const fuse_graph *g = x->g;
  int i, k;
  for (i = 0; i < x->num_scope; i++) {
    fuse_value v = x->scope[i];
    int outside = 0, all = 0, last = -1;
    if (v == end) continue;
    for (k = x->users.first[v]; k < x->users.first[v + 1]; k++) {
      int u = x->users.list[k];
      if (u == last) continue; /* mul(v, v) reads v once */
      last = u;
      all++;
      if (!x->in_scope[u]) outside++;
    }
    if (fuse__is_output(g, v)) {
      fuse__format(o, g, "%V (%s) is a graph output", v, fuse__ops[g->nodes[v].op].name);
      return 1;
    }
    if (outside) {
      fuse__format(o, g, "%V (%s) has %d users: ", v, fuse__ops[g->nodes[v].op].name, all);
      fuse__explain_readers(o, x, v, outside);
      return 1;
    }
  }
  return 0;
}

/* "bias %b, clamp[0, inf], add %r" (the plan listing's post-op text), or "no bias or post-op". */
static void fuse__explain_epilogue(fuse__out *o, const fuse_graph *g, const fuse_epilogue *e) {
  int k;
  if (e->bias == FUSE_NONE && e->num_post == 0) {
    fuse__puts(o, "no bias or post-op");
    return;
  }
  if (e->bias != FUSE_NONE) fuse__format(o, g, "bias %V", e->bias);
  for (k = 0; k < e->num_post; k++) {
    if (k || e->bias != FUSE_NONE) fuse__puts(o, ", ");
    fuse__post_write(o, &e->post[k], "");
    if (e->post[k].kind == FUSE_POST_ADD) fuse__format(o, g, " %V", e->post[k].tensor);
  }
}

/* Why composite c runs op by op. */
static void fuse__explain_composite(fuse__out *o, const fuse__explainer *x, int c) {
  const fuse_graph *g = x->g;
  fuse_value v = x->escape[c];
  int k;
  if (x->epi[c].why[0] || v == FUSE_NONE) {
    fuse__puts(o, x->epi[c].why[0] ? x->epi[c].why : "its root is not an epilogue");
    return;
  }
  if (fuse__is_output(g, v)) {
    fuse__format(o, g, "its member %V (%s) is a graph output", v, fuse__ops[g->nodes[v].op].name);
    return;
  }
  for (k = x->users.first[v]; k < x->users.first[v + 1]; k++) {
    int u = x->users.list[k];
    if (g->nodes[u].composite != c) {
      fuse__format(o, g, "its member %V (%s) is also read by %s %V outside it", v,
                   fuse__ops[g->nodes[v].op].name, fuse__ops[g->nodes[u].op].name, u);
      return;
    }
  }
}

/* The squeeze-excite gate conv2d r's input is (a mul fuse__gate_conv makes r's prologue):
   ", prologue: input times the gate %g (mul %m, on weights scaled per image)". */
static void fuse__explain_gate(fuse__out *o, const fuse__explainer *x, fuse_value r) {
  const fuse_graph *g = x->g;
  fuse_value m = g->nodes[r].in[0];
  char why[8];
  int xk;
  if (g->nodes[r].op != FUSE__OP_CONV2D || g->nodes[m].composite >= 0 ||
      !fuse__is_gate_mul(g, m, &xk) || fuse__gate_conv(g, &x->users, m, why, sizeof why) != r)
    return;
  fuse__format(o, g, ", prologue: input times the gate %V (mul %V, on weights scaled per image)",
               g->nodes[m].in[1 - xk], m);
}

/* One conv2d / matmul: its composite and fused epilogue. Returns 1 when it has a fused
   epilogue (a bias or a post-op). */
static int fuse__explain_reduction(fuse__out *o, const fuse__explainer *x, fuse_value r) {
  const fuse_graph *g = x->g;
  const fuse__node *n = &g->nodes[r];
  int c = n->composite;
  fuse__format(o, g, "  %s %V %S: ", fuse__ops[n->op].name, r, n->rank, n->shape);
  if (c < 0) {
    fuse__puts(o, "in no composite, runs alone\n");
    return 0;
  }
  fuse__format(o, g, "composite %s", g->composites[c].name);
  if (x->quant[c]) {
    fuse__format(o, g, ", runs in integers as one step: int8 weights, int32 sums, requantized "
                       "on registers -> %V\n", g->composites[c].root);
    return 1;
  }
  fuse__explain_gate(o, x, r);
  if (x->fused[c] && x->epi[c].reduction == r) {
    const fuse_epilogue *e = &x->epi[c];
    fuse__puts(o, ", fused: ");
    fuse__explain_epilogue(o, g, e);
    fuse__format(o, g, " -> %V\n", g->composites[c].root);
    return e->bias != FUSE_NONE || e->num_post > 0;
  }
  if (x->fused[c]) {
    fuse__format(o, g, ", which fuses %V instead\n", x->epi[c].reduction);
    return 0;
  }
  fuse__puts(o, ", runs op by op: ");
  fuse__explain_composite(o, x, c);
  fuse__puts(o, "\n");
  return 0;
}

/* Why element-wise op e, outside every composite, leads to no conv2d / matmul. */
static void fuse__explain_no_reduction(fuse__out *o, const fuse__explainer *x, fuse_value e) {
  const fuse_graph *g = x->g;
  const fuse__node *n = &g->nodes[e];
  fuse_value from[3];
  int k, count = 0;
  for (k = 0; k < n->num_in; k++)
    if (g->nodes[n->in[k]].op != FUSE__OP_CONST) {
      if (count < 3) from[count] = n->in[k];
      count++;
    }
  if (count == 0) {
    fuse__puts(o, ": its operands are constants");
  } else if (count == 1) {
    const fuse__node *p = &g->nodes[from[0]];
    if (p->op == FUSE__OP_INPUT)
      fuse__format(o, g, ": reads the graph input %V, not a conv2d / matmul output", from[0]);
    else
      fuse__format(o, g, ": follows %s %V, %s", fuse__ops[p->op].name, from[0],
                   fuse__is_elementwise(p->op) ? "which leads to no conv2d / matmul either"
                                               : "not a conv2d / matmul");
  } else {
    fuse__format(o, g, ": %s operand leads to a conv2d / matmul (", count == 2 ? "neither" : "no");
    for (k = 0; k < count && k < 3; k++)
      fuse__format(o, g, "%s%s %V", k == 0 ? "" : k + 1 == count ? " and " : ", ",
                   fuse__ops[g->nodes[from[k]].op].name, from[k]);
    fuse__puts(o, count > 3 ? ", ...)" : ")");
  }
}

/* Why element-wise op e, outside every composite, is not fused into the conv2d / matmul r it
   follows: what else reads the chain's values, and where the analyzer first refuses the chain
   (walking from r toward e: the op nearest r that is not an epilogue is the one to change). */
static void fuse__explain_chain(fuse__out *o, fuse__explainer *x, fuse_value e, fuse_value r) {
  const fuse_graph *g = x->g;
  fuse__scope scope;
  fuse_epilogue hyp;
  fuse_result status = FUSE_OK;
  int path, j, c = fuse__scope_chain(x, e, &path), said;
  fuse__format(o, g, " after %s %V", fuse__ops[g->nodes[r].op].name, r);
  if (c >= 0) fuse__format(o, g, " (composite %s -> %V)", g->composites[c].name, g->composites[c].root);
  fuse__puts(o, ": ");
  if (c >= 0 && !x->fused[c]) {
    fuse__format(o, g, "composite %s runs op by op itself: ", g->composites[c].name);
    fuse__explain_composite(o, x, c);
    fuse__scope_clear(x);
    return;
  }
  said = fuse__explain_escape(o, x, e);
  for (j = path - 1; j >= 0; j--) { /* nothing applied to the output may grow it */
    const fuse__node *red = &g->nodes[r], *n = &g->nodes[x->scope[j]];
    if (n->rank != red->rank || memcmp(n->shape, red->shape, (size_t)red->rank * sizeof(int64_t))) {
      fuse__format(o, g, "%s%s %V broadcasts %S to %S", said ? "; and " : "",
                   fuse__ops[n->op].name, x->scope[j], red->rank, red->shape, n->rank, n->shape);
      fuse__scope_clear(x);
      return;
    }
  }
  scope.comp = -1;
  for (j = path - 1; j >= 0 && status == FUSE_OK; j--) {
    if (j > 0 && path - 1 - j >= 64) continue; /* the analyzer's longest chain */
    scope.members = x->scope + j; /* the chain from the reduction to path op j */
    scope.count = x->num_scope - j;
    status = fuse__analyze(g, x->scope[j], &scope, &hyp);
  }
  if (status != FUSE_OK) {
    fuse__format(o, g, "%s%s", said ? "; and " : "", hyp.why);
  } else if (!said) {
    fuse__puts(o, "a valid epilogue (");
    fuse__explain_epilogue(o, g, &hyp);
    if (c < 0)
      fuse__format(o, g, "), but %V is in no composite (fuse_optimize has not run, or no rule "
                         "matched it)", r);
    else
      fuse__puts(o, ") that no rule matched");
  }
  fuse__scope_clear(x);
}

/* Why matmul v of a quantized model is not a fuse.qmatmul: the first part of the pattern
   (passes/quant.c) it lacks, as the optimized graph shows it. */
static void fuse__explain_qmatmul(fuse__out *o, const fuse__explainer *x, fuse_value v) {
  const fuse_graph *g = x->g;
  const fuse__node *n = &g->nodes[v], *na = &g->nodes[n->in[0]], *nw = &g->nodes[n->in[1]];
  fuse_value at = v, next;
  int steps = 0;
  while ((next = fuse__sole_user(g, &x->users, at)) != FUSE_NONE && steps < 2 &&
         (g->nodes[next].op == FUSE__OP_ADD || g->nodes[next].op == FUSE__OP_RELU ||
          g->nodes[next].op == FUSE__OP_CLIP))
    at = next, steps++;
  fuse__puts(o, "not in fuse.qmatmul's pattern (dequantize of uint8, per tensor -> matmul with "
                "2-D int8 weights dequantized with zero points 0, per tensor or per output "
                "column, or their transpose -> bias? -> relu / clip? -> quantize to uint8 / "
                "int8): ");
  if (na->op != FUSE__OP_DEQUANTIZE)
    fuse__format(o, g, "its input %V is not dequantized\n", n->in[0]);
  else if (g->nodes[na->in[0]].type != FUSE_UINT8)
    fuse__format(o, g, "its input %V is the dequantize of %s values (signed activations); the "
                       "integer matmul takes uint8 ones\n",
                 n->in[0], g->nodes[na->in[0]].type == FUSE_INT8 ? "int8" : "int32");
  else if (!fuse__q_input(g, n->in[0], 1))
    fuse__format(o, g, "its input %V is dequantized with a scale or zero point that is not one "
                       "constant (per row, or computed)\n", n->in[0]);
  else if (na->rank < 2 || nw->rank != 2)
    fuse__format(o, g, "it multiplies %S by %S; the integer matmul takes [..., K] by [K, N]\n",
                 na->rank, na->shape, nw->rank, nw->shape);
  else if (next == FUSE_NONE || g->nodes[next].op != FUSE__OP_QUANTIZE)
    fuse__format(o, g, "its result %V is not quantized (or not by one quantize, after a bias "
                       "and a relu / clip at most)\n", at);
  else if (g->nodes[next].type == FUSE_INT32)
    fuse__format(o, g, "its result is quantized to int32 (MatMulInteger) by %V; its float32 "
                       "sums are exact while each stays below 2^24\n", next);
  else if (nw->op == FUSE__OP_CONST)
    fuse__format(o, g, "its weights %V are float32 (or were not int8 with zero points 0, per "
                       "tensor or per output column, and were folded to float32)\n", n->in[1]);
  else if (nw->op != FUSE__OP_DEQUANTIZE && nw->op != FUSE__OP_TRANSPOSE)
    fuse__format(o, g, "its weights %V are computed at run time\n", n->in[1]);
  else
    fuse__format(o, g, "its weights %V, bias or quantize %V do not fit\n", n->in[1], next);
}

/* Why global_avg_pool2d v of a quantized model is not a fuse.qglobal_avg_pool2d. */
static void fuse__explain_qgap(fuse__out *o, const fuse__explainer *x, fuse_value v) {
  const fuse_graph *g = x->g;
  const fuse__node *n = &g->nodes[v], *dq = &g->nodes[n->in[0]];
  fuse_value q = fuse__sole_user(g, &x->users, v);
  fuse__puts(o, "not in fuse.qglobal_avg_pool2d's pattern (dequantize of uint8 / int8 of rank 4, "
                "per tensor -> global_avg_pool2d -> quantize to the same type, per tensor): ");
  if (!fuse__q_input(g, n->in[0], 0) || dq->rank != 4)
    fuse__format(o, g, "its input %V is not the dequantize of a uint8 / int8 tensor of rank 4 "
                       "with one constant scale and zero point\n", n->in[0]);
  else if (q == FUSE_NONE || g->nodes[q].op != FUSE__OP_QUANTIZE || !fuse__quant_constant_params(g, q, 0))
    fuse__format(o, g, "its result %V is not quantized (by one quantize, per tensor, its only "
                       "reader)\n", v);
  else if (g->nodes[q].type != g->nodes[dq->in[0]].type)
    fuse__format(o, g, "it is quantized to %s by %V, its input is %s\n",
                 g->nodes[q].type == FUSE_INT8 ? "int8" : g->nodes[q].type == FUSE_UINT8 ? "uint8" : "int32",
                 q, g->nodes[dq->in[0]].type == FUSE_INT8 ? "int8" : "uint8");
  else
    fuse__format(o, g, "x_scale / (y_scale * %D pixels) is outside [2^-32, 256) or the pixels "
                       "are 2^24 or more, which ONNX Runtime's QLinearGlobalAveragePool "
                       "refuses\n", dq->shape[2] * dq->shape[3]);
}

/* A quantized model's ops that run in float32 (outside every integer composite), each with
   the reason; returns how many. Nothing when the graph quantizes nothing. Before them, the
   pools that run in integers (their composites' roots are quantizes, not listed elsewhere). */
static int fuse__explain_float_ops(fuse__out *o, const fuse__explainer *x) {
  const fuse_graph *g = x->g;
  int v, quantized = 0, count = 0;
  for (v = 0; v < g->num_nodes; v++)
    quantized |= g->nodes[v].op == FUSE__OP_QUANTIZE || g->nodes[v].op == FUSE__OP_DEQUANTIZE;
  if (!quantized) return 0;
  fuse__puts(o, "a quantized model's pools that run in integers:\n");
  for (v = 0; v < g->num_nodes; v++) {
    const fuse__node *n = &g->nodes[v];
    int c = n->composite;
    if ((n->op != FUSE__OP_MAX_POOL2D && n->op != FUSE__OP_GLOBAL_AVG_POOL2D) || c < 0 || !x->quant[c])
      continue;
    count++;
    fuse__format(o, g, "  %s %V: composite %s, one step: %s -> %V\n", fuse__ops[n->op].name, v,
                 g->composites[c].name,
                 n->op == FUSE__OP_MAX_POOL2D
                     ? "the largest integer of each window, through a table"
                     : "int32 sums of each channel, requantized as ONNX Runtime's "
                       "QLinearGlobalAveragePool, in the layout the input has",
                 g->composites[c].root);
  }
  if (!count) fuse__puts(o, "  none\n");
  count = 0;
  fuse__puts(o, "a quantized model's ops that run in float32 (between a dequantize and a "
                "quantize), and why:\n");
  for (v = 0; v < g->num_nodes; v++) {
    const fuse__node *n = &g->nodes[v];
    if (n->op == FUSE__OP_INPUT || n->op == FUSE__OP_CONST || n->op == FUSE__OP_QUANTIZE ||
        n->op == FUSE__OP_DEQUANTIZE || n->type != FUSE_FLOAT32 ||
        (n->composite >= 0 && (x->quant[n->composite] ||
                               (x->fused[n->composite] && !fuse__is_reduction(n->op)))))
      continue; /* (an epilogue op of a fused float composite: its conv2d / matmul's line) */
    count++;
    fuse__format(o, g, "  %s %V: ", fuse__ops[n->op].name, v);
    if (n->op == FUSE__OP_CONV2D)
      fuse__puts(o, "not in fuse.qconv2d's pattern (dequantize of uint8 -> conv2d of int8 "
                    "weights with zero points 0, per tensor or per output channel -> bias? -> "
                    "relu / clip? -> quantize)\n");
    else if (n->op == FUSE__OP_MATMUL)
      fuse__explain_qmatmul(o, x, v);
    else if (n->op == FUSE__OP_GLOBAL_AVG_POOL2D)
      fuse__explain_qgap(o, x, v);
    else
      fuse__format(o, g, "%s has no integer step (those are conv2d, matmul, add, element-wise "
                         "ops, max_pool2d and global_avg_pool2d between dequantize and "
                         "quantize)\n", fuse__ops[n->op].name);
  }
  if (!count) fuse__puts(o, "  none\n");
  return count;
}

FUSE_API fuse_result fuse_explain_write(const fuse_graph *g, fuse_write_fn write, void *user) {
  char buf[1024];
  fuse__out o;
  fuse__explainer x;
  char why[200];
  int v, reductions = 0, with_epilogue = 0, fused = 0, standalone = 0, xk;
  if (!g || !write) return FUSE_ERROR_INVALID_ARGUMENT;
  if (!fuse__explainer_init(&x, g)) return FUSE_ERROR_OUT_OF_MEMORY;
  o.buf = buf;
  o.len = 0;
  o.cap = sizeof buf;
  o.write = write;
  o.user = user;
  fuse__puts(&o, "conv2d / matmul, each with its composite and fused epilogue:\n");
  for (v = 0; v < g->num_nodes; v++)
    if (fuse__is_reduction(g->nodes[v].op)) {
      reductions++;
      with_epilogue += fuse__explain_reduction(&o, &x, v);
    }
  if (!reductions) fuse__puts(&o, "  none\n");
  fuse__puts(&o, "element-wise ops that run on their own, and why:\n");
  for (v = 0; v < g->num_nodes; v++) {
    const fuse__node *n = &g->nodes[v];
    if (!fuse__is_elementwise(n->op)) continue;
    if (fuse__explain_fused(&x, v)) {
      fused++;
      continue;
    }
    if (n->composite < 0 && fuse__is_gate_mul(g, v, &xk) &&
        fuse__gate_conv(g, &x.users, v, why, sizeof why) != FUSE_NONE) {
      fused++; /* a prologue of the conv2d that reads it (its line says so) */
      continue;
    }
    standalone++;
    fuse__format(&o, g, "  %s %V", fuse__ops[n->op].name, v);
    if (n->composite >= 0) {
      fuse__format(&o, g, ": in composite %s, which runs op by op: ", g->composites[n->composite].name);
      fuse__explain_composite(&o, &x, n->composite);
    } else if (x.up[v] == FUSE_NONE) {
      fuse__explain_no_reduction(&o, &x, v);
    } else {
      fuse__explain_chain(&o, &x, v, x.up[v]);
    }
    if (n->composite < 0 && fuse__is_gate_mul(g, v, &xk)) /* and as a gate: why not a prologue */
      fuse__format(&o, g, "\n    a squeeze-excite gate, not a conv2d's prologue: %s", why);
    fuse__puts(&o, "\n");
  }
  if (!standalone) fuse__puts(&o, "  none\n");
  fuse__explain_float_ops(&o, &x);
  fuse__format(&o, g,
               "summary: %d conv2d / matmul, %d with a fused epilogue, %d element-wise ops "
               "fused, %d standalone\n",
               reductions, with_epilogue, fused, standalone);
  fuse__flush(&o);
  fuse__explainer_free(&x);
  return FUSE_OK;
}

#ifndef FUSE_NO_STDIO
FUSE_API fuse_result fuse_explain(const fuse_graph *g, FILE *f) {
  if (!f) return FUSE_ERROR_INVALID_ARGUMENT;
  return fuse_explain_write(g, fuse__write_file, f);
}
#endif
