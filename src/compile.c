FUSE_API fuse_result fuse_compile(const fuse_graph *g, const fuse_compile_options *opt,
                                  fuse_plan **out) {
  fuse_plan *p = NULL;
  fuse_isa cpu = fuse_cpu_isa(), isa = opt ? opt->isa : FUSE_ISA_AUTO;
  int n, i, k, n_work = 0, n_ops = 0;
  int *needed = NULL, *root = NULL, *first = NULL, *last = NULL, *order = NULL, *input_pos = NULL;
  size_t *ranges = NULL, const_bytes = 0;
  fuse_result status = FUSE_ERROR_OUT_OF_MEMORY;
  const fuse_allocator *a;
  fuse__fusion *fz = NULL;
  fuse__users users;
  fuse__writer w;  /* the text form's numbering, so the plan's labels match a listing */
  size_t scratch = 0, zeros = 0; /* the SIMD conv's scratch per chunk, its zero row (floats) */
  size_t backend_scratch = 0;
  int cap_tensors, n_steps_cap = 0, n_operands_cap = 0, relayout = 0, *alt = NULL;
  int *number = NULL;
  fuse_value *ins = NULL; /* one step's inputs */
  fuse__listing text;
  memset(&users, 0, sizeof users);
  memset(&text, 0, sizeof text);
  memset(&w, 0, sizeof w);
  if (out) *out = NULL;
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
  if ((unsigned)isa > (unsigned)FUSE_ISA_AVX512) { /* enums may be unsigned chars */
    fuse__compile_error(opt, g, "compile: isa %d is not a fuse_isa", (int)isa);
    return FUSE_ERROR_INVALID_ARGUMENT;
  }
  if (isa != FUSE_ISA_AUTO && isa > cpu) {
    fuse__compile_error(opt, g, "compile: isa %s is not supported here (best: %s)",
                        isa == FUSE_ISA_AVX512 ? "avx512" : "avx2",
                        cpu == FUSE_ISA_AVX2 ? "avx2" : "scalar");
    return FUSE_ERROR_UNSUPPORTED;
  }
  a = &g->alloc;
  n = g->num_nodes;
  p = (fuse_plan *)fuse__alloc(a, sizeof *p, 16);
  if (!p) goto fail;
  memset(p, 0, sizeof *p);
  p->alloc = *a;
  /* the kernels' ISA; FUSE_ISA_AUTO on the reference kernels: no kernel table row has it */
  p->isa = opt && opt->reference_kernels ? FUSE_ISA_AUTO : isa == FUSE_ISA_AUTO ? cpu : isa;
  /* threads: the host's parallel_for, else OpenMP, else none. A parallel step is cut into
     exactly `chunks` pieces, each with its own packing buffer, whichever thread runs it. */
  p->chunks = 1;
  if (opt && opt->parallel_for) {
    p->parallel_for = opt->parallel_for;
    p->parallel_user = opt->parallel_user;
    p->chunks = opt->num_threads > 0 ? opt->num_threads : 8;
  }
#ifdef _OPENMP
  else
    p->chunks = opt && opt->num_threads > 0 ? opt->num_threads : omp_get_max_threads();
#endif
  if (p->chunks > 64) p->chunks = 64;
  if (p->chunks < 1) p->chunks = 1;
  p->num_inputs = g->num_inputs;
  p->num_outputs = g->num_outputs;
  p->num_tensors = n + g->num_outputs; /* one extra per output, for copies into it */
  /* room for one copy of each in the other layout, and for outputs written through NHWC */
  cap_tensors = 2 * p->num_tensors + g->num_outputs;
  needed = (int *)fuse__alloc(a, (size_t)n * sizeof(int) + 1, 16);
  root = (int *)fuse__alloc(a, (size_t)cap_tensors * sizeof(int), 16);
  alt = (int *)fuse__alloc(a, (size_t)cap_tensors * sizeof(int), 16);
  first = (int *)fuse__alloc(a, (size_t)cap_tensors * sizeof(int), 16);
  last = (int *)fuse__alloc(a, (size_t)cap_tensors * sizeof(int), 16);
  order = (int *)fuse__alloc(a, (size_t)cap_tensors * sizeof(int), 16);
  input_pos = (int *)fuse__alloc(a, (size_t)n * sizeof(int) + 1, 16);
  ranges = (size_t *)fuse__alloc(a, (size_t)cap_tensors * 2 * sizeof(size_t), 16);
  p->tensors = (fuse__tensor *)fuse__alloc(a, (size_t)cap_tensors * sizeof(fuse__tensor), 16);
  fz = (fuse__fusion *)fuse__alloc(a, (size_t)(g->num_composites + 1) * sizeof(fuse__fusion), 16);
  ins = (fuse_value *)fuse__alloc(a, (size_t)(n + 8) * sizeof(fuse_value), 16);
  if (!needed || !root || !alt || !first || !last || !order || !input_pos || !ranges || !p->tensors ||
      !fz || !ins || !fuse__users_build(g, &users) || !fuse__writer_init(&w, g, &number))
    goto fail;
  text.a = a;

  /* which composites run fused: an epilogue the analyzer accepts, nothing but the root read
     from outside (with allow_escaping an intermediate may be) */
  for (i = 0; i < g->num_composites; i++)
    fz[i].fused = fuse_analyze_epilogue(g, g->composites[i].root, &fz[i].e) == FUSE_OK;
  for (k = 0; k < n; k++) { /* one pass: a member other than the root read from outside */
    int c = g->nodes[k].composite, j;
    if (c < 0 || !fz[c].fused || k == g->composites[c].root) continue;
    if (fuse__is_output(g, k)) fz[c].fused = 0;
    for (j = users.first[k]; j < users.first[k + 1]; j++)
      if (g->nodes[users.list[j]].composite != c) fz[c].fused = 0;
  }

  /* which nodes the outputs depend on (nodes only refer to earlier ones) */
  memset(needed, 0, (size_t)n * sizeof(int));
  for (i = 0; i < g->num_outputs; i++) needed[g->outputs[i]] = 1;
  for (i = n - 1; i >= 0; i--)
    if (needed[i]) {
      int count = fuse__step_inputs(g, fz, i, ins);
      for (k = 0; k < count; k++) needed[ins[k]] = 1;
    }
  for (i = 0; i < g->num_inputs; i++) input_pos[g->inputs[i]] = i;

  /* where each tensor lives */
  memset(p->tensors, 0, (size_t)p->num_tensors * sizeof(fuse__tensor));
  for (i = 0; i < p->num_tensors; i++) {
    root[i] = i;
    first[i] = last[i] = -1;
  }
  for (i = 0; i < n; i++) {
    const fuse__node *nd = &g->nodes[i];
    fuse__tensor *t = &p->tensors[i];
    t->rank = nd->rank;
    t->value = i;
    memcpy(t->shape, nd->shape, sizeof t->shape);
    if (!needed[i]) continue;
    if ((uint64_t)fuse__numel(t->rank, t->shape) > (uint64_t)((size_t)-1 / 4 / sizeof(float))) {
      fuse__compile_error(opt, g, "compile: %V %S does not fit this target's address space", i,
                          t->rank, t->shape);
      status = FUSE_ERROR_OUT_OF_MEMORY;
      goto fail;
    }
    if (nd->op == FUSE__OP_INPUT) {
      t->kind = FUSE__LOC_INPUT;
      t->index = input_pos[i];
    } else if (nd->op == FUSE__OP_CONST) {
      t->kind = FUSE__LOC_CONST;
      t->offset = const_bytes;
      const_bytes += fuse__tensor_bytes(t);
    } else {
      int out_pos = -1;
      for (k = 0; k < g->num_outputs && out_pos < 0; k++)
        if (g->outputs[k] == i) out_pos = k;
      if (fuse__is_view(nd->op) && out_pos < 0) { /* same bytes as its operand */
        const fuse__tensor *src = &p->tensors[nd->in[0]];
        t->kind = src->kind;
        t->index = src->index;
        t->offset = src->offset;
        root[i] = root[nd->in[0]];
        continue;
      }
      if (out_pos >= 0) {
        t->kind = FUSE__LOC_OUTPUT;
        t->index = out_pos;
      } else {
        t->kind = FUSE__LOC_WORK;
      }
      n_ops++;
    }
  }
  /* outputs not written in place by their op get a copy step */
  for (i = 0; i < g->num_outputs; i++) {
    const fuse__tensor *src = &p->tensors[g->outputs[i]];
    fuse__tensor *t = &p->tensors[n + i];
    *t = *src;
    t->value = g->outputs[i];
    t->kind = FUSE__LOC_OUTPUT;
    t->index = i;
    t->offset = 0;
    if (!(src->kind == FUSE__LOC_OUTPUT && src->index == i)) n_ops++;
  }

  /* steps and operands, op by op */
  {
    int n_operands = g->num_outputs, s = 0, o = 0;
    for (i = 0; i < n; i++)
      if (needed[i] && g->nodes[i].op > FUSE__OP_CONST) n_operands += fuse__step_inputs(g, fz, i, NULL);
    n_steps_cap = n_ops + cap_tensors + 1; /* room for the conversions */
    n_operands_cap = n_operands + cap_tensors + 1;
    p->steps = (fuse__step *)fuse__alloc(a, (size_t)n_steps_cap * sizeof(fuse__step), 16);
    p->operands = (int *)fuse__alloc(a, (size_t)n_operands_cap * sizeof(int), 16);
    if (!p->steps || !p->operands) goto fail;
    memset(p->steps, 0, (size_t)n_steps_cap * sizeof(fuse__step));
    for (i = 0; i < n; i++) {
      const fuse__node *nd = &g->nodes[i];
      fuse__step *st;
      int count;
      if (!needed[i] || nd->op <= FUSE__OP_CONST || root[i] != i) continue;
      st = &p->steps[s];
      st->op = nd->op;
      st->out = i;
      st->a = nd->a;
      st->bias = -1;
      st->in_first = o;
      st->num_in = count = fuse__step_inputs(g, fz, i, ins);
      if (nd->composite >= 0 && fz[nd->composite].fused && g->composites[nd->composite].root == i) {
        const fuse_epilogue *e = &fz[nd->composite].e;
        int next = 2;
        st->op = g->nodes[e->reduction].op;
        st->a = g->nodes[e->reduction].a;
        if (e->bias != FUSE_NONE) st->bias = next++;
        st->num_post = e->num_post;
        for (k = 0; k < e->num_post; k++) {
          st->post[k] = e->post[k];
          st->post[k].operand = e->post[k].kind == FUSE_POST_ADD ? next++ : -1;
        }
      }
      for (k = 0; k < count; k++) p->operands[o++] = ins[k];
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
  }
  /* backends first: a step one takes gets no kernel of ours */
  if (!fuse__offer_backends(p, g, fz, opt, root, &backend_scratch)) goto fail;
  /* the kernel table's conv and matmul kernels: chosen and their weights packed here, once */
  for (i = 0; i < p->num_steps; i++)
    if (p->steps[i].kernel != FUSE__KERNEL_BACKEND &&
        !fuse__choose_kernel(p, g, &p->steps[i], &zeros, &scratch))
      goto fail;
  /* layouts: NHWC between the SIMD convs and the ops that follow them, conversions between */
  for (i = 0; i < p->num_steps && !relayout; i++)
    relayout = p->steps[i].op == FUSE__OP_CONV2D && p->steps[i].kernel == FUSE__KERNEL_IGEMM;
  if (relayout) {
    fuse__relayout x;
    fuse__step *steps = (fuse__step *)fuse__alloc(a, (size_t)n_steps_cap * sizeof(fuse__step), 16);
    int *operands = (int *)fuse__alloc(a, (size_t)n_operands_cap * sizeof(int), 16);
    if (!steps || !operands) {
      fuse__free(a, steps);
      fuse__free(a, operands);
      goto fail;
    }
    memset(steps, 0, (size_t)n_steps_cap * sizeof(fuse__step));
    for (i = 0; i < cap_tensors; i++) alt[i] = -1;
    x.p = p;
    x.root = root;
    x.alt = alt;
    x.steps = steps;
    x.operands = operands;
    x.num_steps = x.num_operands = 0;
    fuse__relayout_steps(&x, p->steps, p->num_steps, p->operands);
    fuse__free(a, p->steps);
    fuse__free(a, p->operands);
    p->steps = steps;
    p->operands = operands;
    p->num_steps = x.num_steps;
  }
  /* lifetimes in steps: written first, read last */
  for (i = 0; i < p->num_tensors; i++) first[i] = last[i] = -1;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    for (k = 0; k < st->num_in; k++) last[root[p->operands[st->in_first + k]]] = i;
    if (first[st->out] < 0) first[st->out] = i;
    fuse__describe(&text, g, st, i, p->tensors[st->out].value, number);
  }
  for (i = 0; i < p->num_tensors; i++)
    if ((i >= n || needed[i]) && root[i] == i && p->tensors[i].kind == FUSE__LOC_WORK) {
      if (last[i] < first[i]) last[i] = first[i]; /* written, never read: still needs room */
      order[n_work++] = i;
    }
  fuse__place(p, first, last, order, n_work, ranges);
  if (zeros) { /* a row of zeros the SIMD conv reads where a tap falls into the padding */
    p->zeros = (float *)fuse__alloc(a, zeros * sizeof(float), FUSE__ALIGN);
    if (!p->zeros) goto fail;
    memset(p->zeros, 0, zeros * sizeof(float));
  }
  if (scratch) { /* per chunk: the SIMD conv's row pointers and padded rows */
    p->scratch_offset = (p->workspace_size + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
    p->scratch_slot = (scratch + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
    p->workspace_size = p->scratch_offset + p->scratch_slot * (size_t)p->chunks;
  }
  if (backend_scratch) { /* one block: steps run one after another */
    p->backend_offset = (p->workspace_size + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
    p->backend_scratch = (backend_scratch + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
    p->workspace_size = p->backend_offset + p->backend_scratch;
  }
  for (i = 0; i < n; i++) /* views follow their root */
    if (root[i] != i && p->tensors[root[i]].kind == FUSE__LOC_WORK) {
      p->tensors[i].kind = FUSE__LOC_WORK;
      p->tensors[i].offset = p->tensors[root[i]].offset;
    }

  /* the plan's own copies of the constants a step reads: a SIMD kernel reads its packed
     weights instead (order[] is free again: it marks what is read) */
  for (i = 0; i < n; i++) order[i] = 0;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    for (k = 0; k < st->num_in; k++)
      if (!(k == 1 && st->kernel != FUSE__KERNEL_REF)) {
        int t = root[p->operands[st->in_first + k]];
        if (t < n) order[t] = 1;
      }
  }
  const_bytes = 0;
  for (i = 0; i < n; i++)
    if (needed[i] && g->nodes[i].op == FUSE__OP_CONST) {
      p->tensors[i].offset = const_bytes;
      if (order[i]) const_bytes += fuse__tensor_bytes(&p->tensors[i]);
    }
  for (i = 0; i < n; i++) /* views of constants follow them */
    if (root[i] != i && p->tensors[root[i]].kind == FUSE__LOC_CONST)
      p->tensors[i].offset = p->tensors[root[i]].offset;
  p->consts = (float *)fuse__alloc(a, const_bytes, FUSE__ALIGN);
  if (!p->consts) goto fail;
  p->weights_size += const_bytes;
  for (i = 0; i < n; i++)
    if (needed[i] && g->nodes[i].op == FUSE__OP_CONST && order[i])
      memcpy((char *)p->consts + p->tensors[i].offset, g->nodes[i].data,
             (size_t)fuse__numel(g->nodes[i].rank, g->nodes[i].shape) * sizeof(float));
  if (p->workspace_size) {
    p->own_workspace = fuse__alloc(a, p->workspace_size, FUSE__ALIGN);
    if (!p->own_workspace) goto fail;
  }
  if (text.failed) goto fail;
  p->description = text.buf;
  text.buf = NULL;
  status = FUSE_OK;
  *out = p;
  p = NULL;
fail:
  if (status == FUSE_ERROR_OUT_OF_MEMORY)
    fuse__compile_error(opt, g, "compile: out of memory");
  fuse_plan_destroy(p);
  fuse__free(a, needed);
  fuse__free(a, root);
  fuse__free(a, first);
  fuse__free(a, last);
  fuse__free(a, order);
  fuse__free(a, input_pos);
  fuse__free(a, ranges);
  fuse__free(a, alt);
  fuse__free(a, fz);
  fuse__free(a, ins);
  fuse__free(a, text.buf);
  fuse__users_free(g, &users);
  if (w.g) fuse__writer_free(&w, number);
  return status;
}

FUSE_API size_t fuse_plan_workspace_size(const fuse_plan *p) { return p ? p->workspace_size : 0; }

FUSE_API int fuse_plan_step_count(const fuse_plan *p) { return p ? p->num_steps : 0; }

FUSE_API size_t fuse_plan_weights_size(const fuse_plan *p) { return p ? p->weights_size : 0; }

FUSE_API fuse_result fuse_plan_write(const fuse_plan *p, fuse_write_fn write, void *user) {
  if (!p || !write) return FUSE_ERROR_INVALID_ARGUMENT;
  if (p->description) write(user, p->description, strlen(p->description));
  return FUSE_OK;
}

