/* ------------------------------------------------------ element-wise chains -- */
/* After the layouts are chosen, every element-wise step of a plan on the kernel table's ISAs
   becomes a chain step (FUSE__OP_CHAIN, kernels/chain_rows.c), and a chain step whose output only
   one other chain step reads, as the value that step walks (its first operand), of the same
   shape and layout, is merged into it: as TVM's FuseOps does for injective ops, the run is one
   loop over memory, each element loaded once and stored once, the intermediates never
   written. A value read by anything else (two steps, a view, a graph output) stays. The
   reference kernels (reference_kernels = 1) keep one op per step: they are the oracle. */

/* Whether tensor t is a constant of one element; its value in *v. */
static int fuse__scalar_constant(const fuse_graph *g, const fuse_plan *p, int t, float *v) {
  if (t >= g->num_nodes || g->nodes[t].op != FUSE__OP_CONST ||
      !(g->nodes[t].data || g->nodes[t].raw) ||
      fuse__numel(p->tensors[t].rank, p->tensors[t].shape) != 1)
    return 0;
  *v = fuse__const_at(&g->nodes[t], 0);
  return 1;
}

/* Whether a chain kind (the row's `chain`) is a binary op's, v op o: FUSE__CHAIN_ADD ..
   FUSE__CHAIN_PRELU in the kinds' enum (graph/ops.c). */
static int fuse__chain_kind_binary(int kind) {
  return kind >= FUSE__CHAIN_ADD && kind <= FUSE__CHAIN_PRELU;
}

/* A unary op as one chain op, as its row says: its `chain` kind, and for FUSE__CHAIN_POST a
   post-op of its `post` kind; relu's and clip's bounds and gelu's tanh form are what the row
   does not say. The post-op's alpha and beta are a.unary's whatever the op (the kinds that
   take parameters read them). 0 when the op is not an element-wise unary one. */
static int fuse__chain_unary(const fuse__step *st, fuse__chain_op *op) {
  const fuse__op_row *row = &fuse__ops[st->op];
  fuse_post_op *q = &op->post;
  memset(op, 0, sizeof *op);
  op->kind = FUSE__CHAIN_POST;
  op->operand = FUSE__CHAIN_IMM;
  q->operand = -1;
  q->tensor = FUSE_NONE;
  q->alpha = st->a.unary.alpha;
  q->beta = st->a.unary.beta;
  if (row->chain == FUSE__CHAIN_NONE || fuse__chain_kind_binary(row->chain)) return 0;
  op->kind = row->chain;
  if (row->chain != FUSE__CHAIN_POST) return 1;
  q->kind = (fuse_post_kind)row->post;
  if (st->op == FUSE__OP_RELU) q->lo = 0, q->hi = HUGE_VALF;
  else if (st->op == FUSE__OP_CLIP) q->lo = st->a.clip.lo, q->hi = st->a.clip.hi;
  else if (st->op == FUSE__OP_GELU && st->a.unary.mode == 1) q->kind = FUSE_POST_GELU_TANH;
  return 1;
}

/* Step st as a chain step of one op, its operands written at ops (the first: the value it
   walks); 0 when it is not an element-wise step. A scalar constant becomes an immediate;
   pow by 2, 3, 1/2, -1 a product, a square root, a reciprocal. */
static int fuse__chain_from_step(const fuse_graph *g, const fuse_plan *p, fuse__step *st,
                                 const int *in, int *ops) {
  fuse__chain_op *op = &st->chain[0];
  int kind = fuse__ops[st->op].chain;
  float imm;
  if (st->kernel != FUSE__KERNEL_REF || st->num_post || st->bias >= 0) return 0;
  st->chain_ops[0] = st->op;
  if (!fuse__chain_kind_binary(kind)) {
    if (st->num_in != 1 || !fuse__chain_unary(st, op)) return 0;
    ops[0] = in[0];
  } else {
    if (st->num_in != 2) return 0;
    memset(op, 0, sizeof *op);
    op->kind = kind;
    ops[0] = in[0];
    if (in[1] == in[0]) {
      op->operand = FUSE__CHAIN_SELF;
    } else if (fuse__scalar_constant(g, p, in[1], &imm)) {
      op->operand = FUSE__CHAIN_IMM, op->imm = imm;
    } else if (kind != FUSE__CHAIN_PRELU && fuse__scalar_constant(g, p, in[0], &imm)) {
      ops[0] = in[1]; /* walk the tensor: imm op v */
      op->operand = FUSE__CHAIN_IMM, op->imm = imm, op->swap = 1;
    } else {
      op->operand = 1;
      ops[1] = in[1];
    }
    if (kind == FUSE__CHAIN_POW && op->operand == FUSE__CHAIN_IMM && !op->swap) {
      if (imm == 2.0f) op->kind = FUSE__CHAIN_SQUARE;
      else if (imm == 3.0f) op->kind = FUSE__CHAIN_CUBE;
      else if (imm == 0.5f) op->kind = FUSE__CHAIN_SQRT;
      else if (imm == -1.0f) op->kind = FUSE__CHAIN_RECIPROCAL;
      else if (imm == 1.0f) op->kind = FUSE__CHAIN_MUL; /* v * 1 */
    }
  }
  st->num_in = op->operand >= 1 ? 2 : 1;
  st->num_chain = 1;
  st->op = FUSE__OP_CHAIN;
  return 1;
}

/* Merges chain step a (whose output only b reads) into chain step b when b walks that output
   (or, a single binary op, can be turned to walk it) and both fit. */
static int fuse__chain_merge(fuse_plan *p, fuse__step *a, fuse__step *b, int *ops) {
  int *oa = p->operands + a->in_first, *ob = ops, t = a->out, k, n;
  int merged[2 * FUSE__CHAIN_OPERANDS];
  if (a->num_chain + b->num_chain > FUSE__CHAIN_LENGTH) return 0;
  if (ob[0] != t) { /* b = o op t: swap to walk t */
    fuse__chain_op *op = &b->chain[0];
    if (b->num_chain != 1 || op->operand != 1 || ob[1] != t || op->kind == FUSE__CHAIN_PRELU)
      return 0;
    ob[1] = ob[0];
    ob[0] = t;
    op->swap = !op->swap;
  }
  if (a->num_in + b->num_in - 1 > FUSE__CHAIN_OPERANDS) return 0;
  for (k = 0; k < a->num_in; k++) merged[k] = oa[k];
  for (n = a->num_in, k = 1; k < b->num_in; k++) merged[n++] = ob[k];
  for (k = 0; k < b->num_chain; k++) { /* b's operands follow a's */
    fuse__chain_op *op = &b->chain[k];
    if (op->operand >= 1) op->operand += a->num_in - 1;
    a->chain[a->num_chain + k] = *op;
    a->chain_ops[a->num_chain + k] = b->chain_ops[k];
  }
  a->num_chain += b->num_chain;
  memcpy(b->chain, a->chain, sizeof b->chain);
  memcpy(b->chain_ops, a->chain_ops, sizeof b->chain_ops);
  b->num_chain = a->num_chain;
  b->num_in = n;
  memcpy(ops, merged, (size_t)n * sizeof(int));
  return 1;
}

/* Removes the steps a phase marked with op -1 (merged into another), keeping the order. */
static void fuse__drop_steps(fuse_plan *p) {
  int i, s;
  for (i = 0, s = 0; i < p->num_steps; i++)
    if (p->steps[i].op >= 0)
      p->steps[s++] = p->steps[i];
    else
      fuse__free(&p->alloc, p->steps[i].note);
  p->num_steps = s;
}

/* The phase: the element-wise steps become chain steps, then each chain step whose output
   only the next link reads is merged into it (steps in order, so a run merges front to back).
   Uses the compiler's first / last arrays as scratch (lifetimes are found afterwards). */
static int fuse__group_chains(const fuse_graph *g, fuse_plan *p, const int *root, int *needed,
                              int *reads, int *reader) {
  int i, k, slot, total = 0, *ops;
  if (p->isa == FUSE_ISA_AUTO) return 1; /* the reference kernels, op by op */
  for (i = 0; i < p->num_steps; i++)
    total += p->steps[i].num_in > FUSE__CHAIN_OPERANDS ? p->steps[i].num_in : FUSE__CHAIN_OPERANDS;
  ops = (int *)fuse__alloc(&p->alloc, (size_t)(total + 1) * sizeof(int), 16);
  if (!ops) return 0;
  for (i = 0, slot = 0; i < p->num_steps; i++) { /* each step its own room for operands */
    fuse__step *st = &p->steps[i];
    const int *in = p->operands + st->in_first;
    if (!fuse__chain_from_step(g, p, st, in, ops + slot))
      memcpy(ops + slot, in, (size_t)st->num_in * sizeof(int));
    st->in_first = slot;
    slot += st->num_in > FUSE__CHAIN_OPERANDS ? st->num_in : FUSE__CHAIN_OPERANDS;
  }
  fuse__free(&p->alloc, p->operands);
  p->operands = ops;
  /* every operand counts, so a step reading t twice (once through a view: mul(flatten(t), t))
     keeps t: merged, its second read would find nothing written */
  for (i = 0; i < p->num_tensors; i++) reads[i] = 0, reader[i] = -1;
  for (i = 0; i < p->num_steps; i++)
    for (k = 0; k < p->steps[i].num_in; k++) {
      int t = root[ops[p->steps[i].in_first + k]];
      reads[t]++;
      reader[t] = i;
    }
  for (i = 0; i < p->num_steps; i++) {
    fuse__step *a = &p->steps[i], *b;
    int t = a->out;
    if (a->op != FUSE__OP_CHAIN || t >= g->num_nodes || root[t] != t || reads[t] != 1 ||
        p->tensors[t].kind != FUSE__LOC_WORK)
      continue;
    b = &p->steps[reader[t]];
    if (b->op != FUSE__OP_CHAIN || p->tensors[b->out].rank != p->tensors[t].rank ||
        memcmp(p->tensors[b->out].shape, p->tensors[t].shape,
               (size_t)p->tensors[t].rank * sizeof(int64_t)) != 0 ||
        p->tensors[b->out].nhwc != p->tensors[t].nhwc)
      continue;
    if (fuse__chain_merge(p, a, b, ops + b->in_first)) {
      a->op = -1; /* merged away */
      needed[t] = 0;
    }
  }
  fuse__drop_steps(p);
  return 1;
}

/* Floats of an NHWC GEMM conv step's packed weights: its column blocks, each of taps x C rows
   NR wide (the last one's rows narrower, at the same place). */
static size_t fuse__igemm_packed_floats(const fuse_plan *p, const fuse__step *st) {
  const fuse__tensor *w = &p->tensors[p->operands[st->in_first + 1]];
  int64_t obs = (w->shape[0] + st->nr - 1) / st->nr;
  return (size_t)(obs * st->nr * w->shape[1] * w->shape[2] * w->shape[3]);
}

/* The phase after the chains: a squeeze-excite gate multiply (a one-op chain step x * g, g of
   [N or 1, C, 1, 1]) whose output only an NHWC GEMM conv2d reads, as its input, becomes that
   conv's prologue (fuse__gate_conv says when): the conv reads x and scales its packed weights
   by g per image into the workspace (*gate_bytes: the most any such conv needs). */
static int fuse__gate_prologues(const fuse_graph *g, fuse_plan *p, const fuse__users *users,
                                const int *root, int *needed, int *reads, size_t *gate_bytes) {
  int i, k, *ops = p->operands;
  char why[8];
  if (p->isa == FUSE_ISA_AUTO) return 1; /* the reference kernels, op by op */
  for (i = 0; i < p->num_tensors; i++) reads[i] = 0;
  for (i = 0; i < p->num_steps; i++)
    for (k = 0; k < p->steps[i].num_in; k++) reads[root[ops[p->steps[i].in_first + k]]]++;
  for (i = 0; i < p->num_steps; i++) {
    fuse__step *a = &p->steps[i], *b = NULL;
    int t = a->out, x, gate, xk, j;
    size_t bytes;
    if (a->op != FUSE__OP_CHAIN || a->num_chain != 1 || a->chain[0].kind != FUSE__CHAIN_MUL ||
        a->chain[0].operand != 1 || t >= g->num_nodes || root[t] != t || reads[t] != 1 ||
        p->tensors[t].kind != FUSE__LOC_WORK || !fuse__is_gate_mul(g, t, &xk) ||
        fuse__gate_conv(g, users, t, why, sizeof why) == FUSE_NONE)
      continue;
    for (j = i + 1; j < p->num_steps && !b; j++)
      if (p->steps[j].num_in && ops[p->steps[j].in_first] == t) b = &p->steps[j];
    if (!b || b->op != FUSE__OP_CONV2D || b->kernel != FUSE__KERNEL_IGEMM || b->rowmode ||
        b->winograd ||
        b->gate || b->num_in >= FUSE__CHAIN_OPERANDS || ops[b->in_first + 1] == t)
      continue;
    /* the chain walks its first operand: x, or the gate with x second */
    x = ops[a->in_first + (p->tensors[ops[a->in_first]].rank == 4 &&
                                   p->tensors[ops[a->in_first]].shape[2] == p->tensors[t].shape[2] &&
                                   p->tensors[ops[a->in_first]].shape[3] == p->tensors[t].shape[3]
                               ? 0
                               : 1)];
    gate = ops[a->in_first] == x ? ops[a->in_first + 1] : ops[a->in_first];
    if (p->tensors[x].nhwc != p->tensors[t].nhwc) continue;
    ops[b->in_first] = x;
    b->gate = b->num_in++;
    ops[b->in_first + b->gate] = gate;
    bytes = fuse__igemm_packed_floats(p, b) * sizeof(float);
    if (bytes > *gate_bytes) *gate_bytes = bytes;
    a->op = -1; /* runs inside b now */
    needed[t] = 0;
  }
  fuse__drop_steps(p);
  return 1;
}
