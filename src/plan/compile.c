/* ------------------------------------------------------------------ compile -- */
/* fuse_compile runs the phases below in order over one fuse__compiler. A phase returns 0 when
   it runs out of memory; fuse_compile then reports that and frees everything in one place. */

typedef struct fuse__compiler {
  const fuse_graph *g;
  const fuse_compile_options *opt;
  const fuse_allocator *a;
  fuse_plan *p;
  fuse__fusion *fz;     /* per composite: fused into one step, or op by op */
  fuse__users users;    /* who reads each node */
  int n;                /* the graph's nodes; tensor i < n holds node i */
  int cap_tensors;      /* room in p->tensors and the per-tensor arrays below */
  int cap_steps, cap_operands; /* room in p->steps and p->operands */
  int n_ops;            /* steps the graph's ops and output copies need */
  int reported;         /* a phase failed with a message of its own (else: out of memory) */
  int *needed;          /* per node: an output depends on it */
  int *input_pos;       /* per input node: its position among the graph's inputs */
  int *root;            /* per tensor: whose bytes it is (a view's operand, else itself) */
  int *alt;             /* per tensor: the same values in the other layout, or -1 */
  int *first, *last;    /* per tensor: the step that writes it first, reads it last */
  int *order;           /* the workspace tensors, as fuse__place orders them */
  size_t *ranges;       /* fuse__place's busy ranges */
  fuse_value *ins;      /* one step's inputs */
  size_t zeros;         /* floats in the SIMD kernels' row of zeros */
  size_t scratch;       /* the SIMD kernels' scratch per chunk (bytes) */
  size_t backend_scratch;
  size_t gate_bytes;    /* the gated convs' scaled weights (plan/chains.c: fuse__gate_prologues) */
  fuse__writer w;       /* the text form's numbering, so the plan's labels match a listing */
  int *number;
  fuse__listing text;   /* the plan's description */
} fuse__compiler;

/* The arguments, before anything is allocated. */
static fuse_result fuse__compile_check(const fuse_graph *g, const fuse_compile_options *opt,
                                       fuse_plan **out) {
  fuse_isa cpu = fuse_cpu_isa(), isa = opt ? opt->isa : FUSE_ISA_AUTO;
  if (!g || !out) {
    fuse__compile_error(opt, NULL, "compile: %s is NULL", g ? "out" : "the graph");
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  if (g->status != FUSE_OK) {
    fuse__compile_error(opt, g, "compile: the graph has an error: %s", g->error);
    return g->status;
  }
  if (g->num_outputs == 0) {
    fuse__compile_error(opt, g, "compile: the graph has no outputs (call fuse_output)");
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  if ((unsigned)isa > (unsigned)FUSE_ISA_NEON) { /* enums may be unsigned chars */
    fuse__compile_error(opt, g, "compile: isa %d is not a fuse_isa", (int)isa);
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  /* scalar runs anywhere; AVX2 where AVX-512 does; NEON only on ARM */
  if (opt && opt->save_only && isa != FUSE_ISA_AUTO && !fuse__isa_built(isa)) {
    fuse__compile_error(opt, g, "compile: this build has no %s kernels: a plan for %s is made by "
                        "a build that has them (an ARM build for neon, x86 for avx2 / avx512)",
                        fuse__isa_name(isa), fuse__isa_name(isa));
    return FUSE_ERROR_UNSUPPORTED;
  }
  if (!(opt && opt->save_only) && !fuse__isa_runs_here(isa)) {
    fuse__compile_error(opt, g, "compile: isa %s is not supported here (best: %s)",
                        fuse__isa_name(isa), fuse__isa_name(cpu));
    return FUSE_ERROR_UNSUPPORTED;
  }
  return FUSE_OK;
}


/* The empty plan and the arrays the phases share. */
static int fuse__compile_start(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  const fuse_allocator *a = c->a;
  fuse_plan *p;
  int n = c->n, cap;
  fuse_isa isa = c->opt ? c->opt->isa : FUSE_ISA_AUTO;
  p = c->p = (fuse_plan *)fuse__alloc(a, sizeof *p, 16);
  if (!p) return 0;
  memset(p, 0, sizeof *p);
  p->alloc = *a;
  /* the kernels' ISA; FUSE_ISA_AUTO on the reference kernels: no kernel table row has it */
  p->isa = c->opt && c->opt->reference_kernels ? FUSE_ISA_AUTO
           : isa == FUSE_ISA_AUTO                ? fuse_cpu_isa()
                                                 : isa;
  if (c->opt) fuse__plan_threads(p, c->opt->num_threads, c->opt->parallel_for, c->opt->parallel_user);
  else fuse__plan_threads(p, 0, NULL, NULL);
  /* made for another machine: fuse_run refuses it here */
  p->elsewhere = !fuse__isa_runs_here(p->isa);
  p->vnni = fuse__cpu_vnni(); /* (read once: cpuid costs, more so in a VM) */
  p->no_winograd = c->opt ? c->opt->no_winograd : 0;
  p->num_inputs = g->num_inputs;
  p->num_outputs = g->num_outputs;
  p->num_tensors = n + g->num_outputs; /* one extra per output, for copies into it */
  /* room for one copy of each in the other layout, and for outputs written through NHWC */
  cap = c->cap_tensors = 2 * p->num_tensors + g->num_outputs;
  c->needed = (int *)fuse__alloc(a, (size_t)n * sizeof(int) + 1, 16);
  c->root = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->alt = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->first = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->last = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->order = (int *)fuse__alloc(a, (size_t)cap * sizeof(int), 16);
  c->input_pos = (int *)fuse__alloc(a, (size_t)n * sizeof(int) + 1, 16);
  c->ranges = (size_t *)fuse__alloc(a, (size_t)cap * 2 * sizeof(size_t), 16);
  p->tensors = (fuse__tensor *)fuse__alloc(a, (size_t)cap * sizeof(fuse__tensor), 16);
  c->fz = (fuse__fusion *)fuse__alloc(a, (size_t)(g->num_composites + 1) * sizeof(fuse__fusion),
                                      16);
  { /* a step reads a node's inputs (any count, the same value maybe many times) or a fused
       root's x, w, bias and post-op operands */
    int i, most = 3 + FUSE_MAX_POST_OPS;
    for (i = 0; i < g->num_nodes; i++)
      if (g->nodes[i].num_in > most) most = g->nodes[i].num_in;
    c->ins = (fuse_value *)fuse__alloc(a, (size_t)most * sizeof(fuse_value), 16);
  }
  c->text.a = a;
  return c->needed && c->root && c->alt && c->first && c->last && c->order && c->input_pos &&
         c->ranges && p->tensors && c->fz && c->ins && fuse__users_build(g, &c->users) &&
         fuse__writer_init(&c->w, g, &c->number);
}

/* which composites run fused: an epilogue the analyzer accepts, nothing but the root read
   from outside (with allow_escaping an intermediate may be) */
static int fuse__decide_fusion(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  fuse__fusion *fz = c->fz;
  int i;
  for (i = 0; i < g->num_composites; i++) {
    fz[i].quant = fuse__qkind(g->composites[i].name) &&
                          fuse__qparts_match(g, &c->users, g->composites[i].root, i, &fz[i].q)
                      ? fz[i].q.kind
                      : 0;
    fz[i].fused = fz[i].quant || (fuse_analyze_epilogue(g, g->composites[i].root, &fz[i].e) == FUSE_OK &&
                                  fuse__escaping_member(g, &c->users, i) == FUSE_NONE);
  }
  return 1;
}

/* which nodes the outputs depend on (nodes only refer to earlier ones) */
static int fuse__find_needed(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  int i, k;
  memset(c->needed, 0, (size_t)c->n * sizeof(int));
  for (i = 0; i < g->num_outputs; i++) c->needed[g->outputs[i]] = 1;
  for (i = c->n - 1; i >= 0; i--)
    if (c->needed[i]) {
      int count = fuse__step_inputs(g, c->fz, i, c->ins);
      for (k = 0; k < count; k++) c->needed[c->ins[k]] = 1;
    }
  for (i = 0; i < g->num_inputs; i++) c->input_pos[g->inputs[i]] = i;
  return 1;
}

/* Whether node nd is a slice whose elements are one contiguous run of its operand's bytes (a
   range of the first axis it cuts, step 1, every axis before it of size 1, every one after it
   whole: a split along channels of one image), of a workspace tensor: then it is a view, at
   *at bytes into its operand, and needs no step. */
static int fuse__slice_view(const fuse_graph *g, const fuse__node *nd, const fuse__tensor *src,
                            size_t *at) {
  const fuse__node *x;
  int d, cut = -1;
  if (nd->op != FUSE__OP_SLICE || src->kind != FUSE__LOC_WORK) return 0;
  x = &g->nodes[nd->in[0]];
  for (d = 0; d < nd->rank; d++) {
    if (nd->a.slice.step[d] != 1) return 0;
    if (cut < 0 && nd->shape[d] != x->shape[d]) cut = d;
    else if (cut >= 0 && nd->shape[d] != x->shape[d]) return 0;
  }
  if (cut < 0) cut = 0;
  for (d = 0; d < cut; d++)
    if (x->shape[d] != 1) return 0;
  *at = (size_t)(nd->a.slice.start[cut] * fuse__numel(nd->rank - cut - 1, nd->shape + cut + 1)) *
        sizeof(float);
  return 1;
}

/* Where a needed node's tensor lives: the caller's input or output, the constants (at a
   provisional offset), the workspace, or a view's operand. Counts the steps it needs. */
static void fuse__place_node(fuse__compiler *c, int i, size_t *const_bytes) {
  const fuse_graph *g = c->g;
  const fuse__node *nd = &g->nodes[i];
  fuse__tensor *t = &c->p->tensors[i];
  int k, out_pos = -1;
  size_t at = 0;
  if (nd->op == FUSE__OP_INPUT) {
    t->kind = FUSE__LOC_INPUT;
    t->index = c->input_pos[i];
    return;
  }
  if (nd->op == FUSE__OP_CONST) {
    t->kind = FUSE__LOC_CONST;
    t->offset = *const_bytes;
    *const_bytes += fuse__tensor_bytes(t);
    return;
  }
  for (k = 0; k < g->num_outputs && out_pos < 0; k++)
    if (g->outputs[k] == i) out_pos = k;
  /* a slice is a view only off the reference kernels: they keep its copy, as the oracle */
  if ((fuse__is_view(nd->op) ||
       (!(c->opt && c->opt->reference_kernels) &&
        fuse__slice_view(g, nd, &c->p->tensors[nd->in[0]], &at))) &&
      out_pos < 0) { /* same bytes as its operand (a slice: from `at` on) */
    const fuse__tensor *src = &c->p->tensors[nd->in[0]];
    t->kind = src->kind;
    t->index = src->index;
    t->offset = src->offset;
    t->view_at = src->view_at + at;
    c->root[i] = c->root[nd->in[0]];
    return;
  }
  if (out_pos >= 0) {
    t->kind = FUSE__LOC_OUTPUT;
    t->index = out_pos;
  } else {
    t->kind = FUSE__LOC_WORK;
  }
  c->n_ops++;
}

/* where each tensor lives; outputs not written in place by their op get a copy step */
static int fuse__place_tensors(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  fuse_plan *p = c->p;
  size_t const_bytes = 0;
  int i, n = c->n;
  memset(p->tensors, 0, (size_t)p->num_tensors * sizeof(fuse__tensor));
  for (i = 0; i < p->num_tensors; i++) c->root[i] = i;
  for (i = 0; i < n; i++) {
    const fuse__node *nd = &g->nodes[i];
    fuse__tensor *t = &p->tensors[i];
    t->rank = nd->rank;
    t->type = nd->type;
    t->value = i;
    memcpy(t->shape, nd->shape, sizeof t->shape);
    if (!c->needed[i]) continue;
    if ((uint64_t)fuse__numel(t->rank, t->shape) > (uint64_t)((size_t)-1 / 4 / sizeof(float))) {
      /* FUSE_ERROR_OUT_OF_MEMORY, with this message */
      fuse__compile_error(c->opt, g, "compile: %V %S does not fit this target's address space",
                          i, t->rank, t->shape);
      c->reported = 1;
      return 0;
    }
    fuse__place_node(c, i, &const_bytes);
  }
  for (i = 0; i < g->num_outputs; i++) {
    const fuse__tensor *src = &p->tensors[g->outputs[i]];
    fuse__tensor *t = &p->tensors[n + i];
    *t = *src;
    t->value = g->outputs[i];
    t->kind = FUSE__LOC_OUTPUT;
    t->index = i;
    t->offset = 0;
    if (!(src->kind == FUSE__LOC_OUTPUT && src->index == i)) c->n_ops++;
  }
  return 1;
}

/* Node i's step: its own op, or for a fused composite's root the conv2d / matmul with the
   epilogue's bias and post-ops (bias and residuals become operands 2, 3, ...). */
static void fuse__node_step(fuse__compiler *c, int i, fuse__step *st, int in_first) {
  const fuse_graph *g = c->g;
  const fuse__node *nd = &g->nodes[i];
  int k;
  st->op = nd->op;
  st->out = i;
  st->a = nd->a;
  st->bias = -1;
  st->in_first = in_first;
  st->num_in = fuse__step_inputs(g, c->fz, i, c->ins);
  if (nd->composite >= 0 && c->fz[nd->composite].quant && g->composites[nd->composite].root == i) {
    static const int ops[] = {0, FUSE__OP_QCONV2D, FUSE__OP_QADD, FUSE__OP_QLUT,
                              FUSE__OP_QMAX_POOL2D, FUSE__OP_QMATMUL,
                              FUSE__OP_QGLOBAL_AVG_POOL2D};
    const fuse__qparts *q = &c->fz[nd->composite].q;
    st->op = ops[q->kind];
    memset(&st->a, 0, sizeof st->a);
    if (q->conv != FUSE_NONE) st->a = g->nodes[q->conv].a;
    if (q->pool != FUSE_NONE) st->a = g->nodes[q->pool].a;
    return;
  }
  if (nd->composite >= 0 && c->fz[nd->composite].fused && g->composites[nd->composite].root == i) {
    const fuse_epilogue *e = &c->fz[nd->composite].e;
    int next = 2;
    st->op = g->nodes[e->reduction].op;
    st->a = g->nodes[e->reduction].a;
    if (e->bias != FUSE_NONE) st->bias = next++;
    st->num_post = e->num_post;
    for (k = 0; k < e->num_post; k++) {
      st->post[k] = e->post[k];
      st->post[k].operand = fuse__post_has_tensor(e->post[k].kind) ? next++ : -1;
    }
  }
}

/* steps and operands, op by op, then the output copies */
static int fuse__build_steps(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  fuse_plan *p = c->p;
  int n_operands = g->num_outputs, s = 0, o = 0, i, k, n = c->n;
  for (i = 0; i < n; i++)
    if (c->needed[i] && g->nodes[i].op > FUSE__OP_CONST)
      n_operands += fuse__step_inputs(g, c->fz, i, NULL);
  c->cap_steps = c->n_ops + c->cap_tensors + 1; /* room for the conversions */
  c->cap_operands = n_operands + c->cap_tensors + 1;
  p->steps = (fuse__step *)fuse__alloc(c->a, (size_t)c->cap_steps * sizeof(fuse__step), 16);
  p->operands = (int *)fuse__alloc(c->a, (size_t)c->cap_operands * sizeof(int), 16);
  if (!p->steps || !p->operands) return 0;
  memset(p->steps, 0, (size_t)c->cap_steps * sizeof(fuse__step));
  for (i = 0; i < n; i++) {
    if (!c->needed[i] || g->nodes[i].op <= FUSE__OP_CONST || c->root[i] != i) continue;
    fuse__node_step(c, i, &p->steps[s], o);
    for (k = 0; k < p->steps[s].num_in; k++) p->operands[o++] = c->ins[k];
    s++;
  }
  for (i = 0; i < g->num_outputs; i++) {
    const fuse__tensor *src = &p->tensors[g->outputs[i]];
    if (src->kind == FUSE__LOC_OUTPUT && src->index == i) continue;
    p->steps[s].op = FUSE__OP_COPY;
    p->steps[s].out = n + i;
    p->steps[s].bias = -1;
    p->steps[s].in_first = o;
    p->steps[s].num_in = 1;
    p->operands[o++] = g->outputs[i];
    s++;
  }
  p->num_steps = s;
  return 1;
}

/* the kernel table's conv2d / matmul kernels: chosen and their weights packed here, once */
static int fuse__choose_kernels(fuse__compiler *c) {
  fuse_plan *p = c->p;
  int i;
  for (i = 0; i < p->num_steps; i++) {
    fuse__step *st = &p->steps[i];
    if (fuse__ops[st->op].run == FUSE__RUN_QINT) { /* its constants, packed (plan/quant_pack.c) */
      if (!fuse__quant_pack(p, c->g, &c->fz[c->g->nodes[st->out].composite].q, st, &c->scratch))
        return 0;
    } else if (st->kernel != FUSE__KERNEL_BACKEND &&
               !fuse__choose_kernel(p, c->g, st, &c->zeros, &c->scratch)) {
      return 0;
    }
  }
  return 1;
}

/* a qadd's relu, quantized on its own, inside the qadd step (plan/quant_pack.c) */
static int fuse__merge_qlut_steps(fuse__compiler *c) {
  return fuse__merge_qluts(c->p, c->root, c->needed, c->first, c->last);
}

/* layouts: NHWC between the SIMD convs and the ops that follow them, conversions between;
   the steps are copied into new arrays with the conversions in place */
static int fuse__choose_layouts(fuse__compiler *c) {
  fuse_plan *p = c->p;
  const fuse_allocator *a = c->a;
  fuse__relayout x;
  int i, relayout = 0;
  for (i = 0; i < p->num_steps && !relayout; i++) relayout = fuse__writes_nhwc(&p->steps[i]);
  if (!relayout) return 1;
  x.steps = (fuse__step *)fuse__alloc(a, (size_t)c->cap_steps * sizeof(fuse__step), 16);
  x.operands = (int *)fuse__alloc(a, (size_t)c->cap_operands * sizeof(int), 16);
  if (!x.steps || !x.operands) {
    fuse__free(a, x.steps);
    fuse__free(a, x.operands);
    return 0;
  }
  memset(x.steps, 0, (size_t)c->cap_steps * sizeof(fuse__step));
  for (i = 0; i < c->cap_tensors; i++) c->alt[i] = -1;
  x.p = p;
  x.root = c->root;
  x.alt = c->alt;
  x.num_steps = x.num_operands = 0;
  fuse__relayout_steps(&x, p->steps, p->num_steps, p->operands);
  fuse__free(a, p->steps);
  fuse__free(a, p->operands);
  p->steps = x.steps;
  p->operands = x.operands;
  p->num_steps = x.num_steps;
  return 1;
}

/* runs of element-wise steps become one chain step each (plan/chains.c) */
static int fuse__chain_steps(fuse__compiler *c) {
  return fuse__group_chains(c->g, c->p, c->root, c->needed, c->first, c->last);
}

/* squeeze-excite gates become their conv's prologue (plan/chains.c) */
static int fuse__gate_steps(fuse__compiler *c) {
  return fuse__gate_prologues(c->g, c->p, &c->users, c->root, c->needed, c->first, &c->gate_bytes);
}

/* concat inputs written in place into the concat's output (plan/in_place.c); first, last and order
   are free for scratch until the lifetimes are found */
static int fuse__concats_in_place(fuse__compiler *c) {
  return fuse__concat_in_place(c->p, c->g, c->root, c->number, c->first, c->last, c->order);
}

/* lifetimes in steps: written first, read last (a root's, through its views too); and the
   description, step by step */
static int fuse__find_lifetimes(fuse__compiler *c) {
  fuse_plan *p = c->p;
  int i, k;
  for (i = 0; i < p->num_tensors; i++) c->first[i] = c->last[i] = -1;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    for (k = 0; k < st->num_in; k++) c->last[c->root[p->operands[st->in_first + k]]] = i;
    if (c->first[c->root[st->out]] < 0) c->first[c->root[st->out]] = i;
    fuse__describe(&c->text, c->g, p, st, i, p->tensors[st->out].value, c->number, p->isa);
  }
  return 1;
}

/* Rounds n up to FUSE__ALIGN. */
static size_t fuse__workspace_align(size_t n) {
  return (n + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
}

/* the workspace: the work tensors where their lifetimes allow, then the SIMD kernels'
   scratch per chunk and the backends' scratch at its end; the row of zeros */
static int fuse__plan_memory(fuse__compiler *c) {
  fuse_plan *p = c->p;
  int i, n_work = 0;
  for (i = 0; i < p->num_tensors; i++)
    if ((i >= c->n || c->needed[i]) && c->root[i] == i && p->tensors[i].kind == FUSE__LOC_WORK) {
      /* written, never read: still needs room */
      if (c->last[i] < c->first[i]) c->last[i] = c->first[i];
      c->order[n_work++] = i;
    }
  fuse__place(p, c->first, c->last, c->order, n_work, c->ranges);
  p->tensors_size = p->workspace_size;
  p->zeros_floats = c->zeros;
  if (c->zeros) { /* a row of zeros the SIMD conv reads where a tap falls into the padding */
    p->zeros = (float *)fuse__alloc(c->a, c->zeros * sizeof(float), FUSE__ALIGN);
    if (!p->zeros) return 0;
    memset(p->zeros, 0, c->zeros * sizeof(float));
  }
  if (c->scratch) { /* per chunk: the SIMD kernels' row pointers and padded rows */
    p->scratch_offset = fuse__workspace_align(p->workspace_size);
    p->scratch_slot = fuse__workspace_align(c->scratch);
    p->workspace_size = p->scratch_offset + p->scratch_slot * (size_t)p->chunks;
  }
  if (c->backend_scratch) { /* one block: steps run one after another */
    p->backend_offset = fuse__workspace_align(p->workspace_size);
    p->backend_scratch = fuse__workspace_align(c->backend_scratch);
    p->workspace_size = p->backend_offset + p->backend_scratch;
  }
  if (c->gate_bytes) { /* one block: the gated convs run one after another */
    p->gate_offset = fuse__workspace_align(p->workspace_size);
    p->gate_bytes = fuse__workspace_align(c->gate_bytes);
    p->workspace_size = p->gate_offset + fuse__workspace_align(c->gate_bytes);
  }
  for (i = 0; i < p->num_tensors; i++) /* views follow their root; a concat's slice sits at its
                                           offset into it */
    if (c->root[i] != i && p->tensors[c->root[i]].kind == FUSE__LOC_WORK) {
      p->tensors[i].kind = FUSE__LOC_WORK;
      p->tensors[i].offset = p->tensors[c->root[i]].offset + p->tensors[i].view_at;
    }
  return 1;
}

/* the plan's own copies of the constants a step reads: a SIMD kernel reads its packed
   weights instead (order[] is free again: it marks what is read) */
static int fuse__copy_constants(fuse__compiler *c) {
  const fuse_graph *g = c->g;
  fuse_plan *p = c->p;
  int *read = c->order, i, k, n = c->n;
  size_t const_bytes = 0;
  for (i = 0; i < n; i++) read[i] = 0;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    for (k = 0; k < st->num_in; k++)
      if (!(k == 1 && st->kernel != FUSE__KERNEL_REF)) {
        int t = c->root[p->operands[st->in_first + k]];
        if (t < n) read[t] = 1;
      }
  }
  for (i = 0; i < n; i++)
    if (c->needed[i] && g->nodes[i].op == FUSE__OP_CONST) {
      p->tensors[i].offset = const_bytes;
      if (read[i]) const_bytes += fuse__tensor_bytes(&p->tensors[i]);
    }
  for (i = 0; i < n; i++) /* views of constants follow them */
    if (c->root[i] != i && p->tensors[c->root[i]].kind == FUSE__LOC_CONST)
      p->tensors[i].offset = p->tensors[c->root[i]].offset + p->tensors[i].view_at;
  p->const_bytes = const_bytes;
  p->consts = (float *)fuse__alloc(c->a, const_bytes, FUSE__ALIGN);
  if (!p->consts) return 0;
  p->weights_size += const_bytes;
  for (i = 0; i < n; i++)
    if (c->needed[i] && g->nodes[i].op == FUSE__OP_CONST && read[i])
      fuse__const_read(&g->nodes[i], 0, fuse__numel(g->nodes[i].rank, g->nodes[i].shape),
                       (float *)((char *)p->consts + p->tensors[i].offset));
  return 1;
}

/* the plan's own workspace (used when fuse_run is given none) and its description */
static int fuse__compile_finish(fuse__compiler *c) {
  fuse_plan *p = c->p;
  if (p->workspace_size && !p->elsewhere) {
    p->own_workspace = fuse__alloc(c->a, p->workspace_size, FUSE__ALIGN);
    if (!p->own_workspace) return 0;
  }
  if (c->text.failed) return 0;
  p->description = c->text.buf;
  c->text.buf = NULL;
  return 1;
}

/* Frees what the phases allocated, and the plan unless it was handed out. */
static void fuse__compiler_free(fuse__compiler *c) {
  const fuse_allocator *a = c->a;
  fuse_plan_destroy(c->p);
  fuse__free(a, c->needed);
  fuse__free(a, c->root);
  fuse__free(a, c->first);
  fuse__free(a, c->last);
  fuse__free(a, c->order);
  fuse__free(a, c->input_pos);
  fuse__free(a, c->ranges);
  fuse__free(a, c->alt);
  fuse__free(a, c->fz);
  fuse__free(a, c->ins);
  fuse__free(a, c->text.buf);
  fuse__users_free(c->g, &c->users);
  if (c->w.g) fuse__writer_free(&c->w, c->number);
}

FUSE_API fuse_result fuse_compile(const fuse_graph *g, const fuse_compile_options *opt,
                                  fuse_plan **out) {
  fuse__compiler c;
  fuse_result status;
  int ok;
  if (out) *out = NULL;
  status = fuse__compile_check(g, opt, out);
  if (status != FUSE_OK) return status;
  memset(&c, 0, sizeof c);
  c.g = g;
  c.opt = opt;
  c.a = &g->alloc;
  c.n = g->num_nodes;
  ok = /* the plan and the arrays every phase shares */
       fuse__compile_start(&c) &&
       /* first: a fused composite becomes one step and its inner ops none */
       fuse__decide_fusion(&c) &&
       /* walks the steps' inputs back from the outputs, so fusion must be decided */
       fuse__find_needed(&c) &&
       /* only needed nodes get a place; a view shares its operand's */
       fuse__place_tensors(&c) &&
       /* a step per placed op, sized by the counts placing made */
       fuse__build_steps(&c) &&
       /* backends before our kernels: a step one takes gets no kernel of ours */
       fuse__offer_backends(c.p, g, c.fz, opt, c.root, &c.backend_scratch) &&
       fuse__choose_kernels(&c) &&
       /* after the packing: merges two integer steps' packed bytes */
       fuse__merge_qlut_steps(&c) &&
       /* after the kernels: an NHWC conv decides its neighbours' layout */
       fuse__choose_layouts(&c) &&
       /* after the layouts: a chain's links share one layout */
       fuse__chain_steps(&c) &&
       /* after the chains: a gate multiply is a one-op chain step */
       fuse__gate_steps(&c) &&
       /* once the steps are final but for the concats it drops; before the lifetimes */
       fuse__concats_in_place(&c) &&
       /* once the steps are final, conversions included */
       fuse__find_lifetimes(&c) &&
       /* every size is known now: tensors, backend layouts, the kernels' scratch */
       fuse__plan_memory(&c) &&
       /* last: the kernels chose which weights they pack, the rest are copied */
       fuse__copy_constants(&c) &&
       /* only a plan that is complete gets its workspace and description */
       fuse__compile_finish(&c);
  if (ok) { /* a plan that needs what a FUSE_NO_* define left out of this build: refused */
    char why[256];
    fuse__out o;
    o.buf = why, o.len = 0, o.cap = sizeof why, o.write = NULL, o.user = NULL;
    why[0] = 0;
    if (fuse__plan_lacks(c.p, &o)) {
      fuse__compile_error(opt, g, "compile: %s", why);
      fuse__compiler_free(&c);
      return FUSE_ERROR_UNSUPPORTED;
    }
    *out = c.p;
    c.p = NULL;
  } else if (!c.reported) {
    fuse__compile_error(opt, g, "compile: out of memory");
  }
  fuse__compiler_free(&c);
  return ok ? FUSE_OK : FUSE_ERROR_OUT_OF_MEMORY;
}
