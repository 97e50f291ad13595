/* Offers each fused conv2d / matmul step whose composite's codegen names a backend to the
   backends of that name, in list order, until one takes it; a step none takes keeps a note of
   why, as does the root of such a composite that runs op by op. A tensor fuse__keepable allows
   may stay in the layout its producer's prepare declares; when a step that reads it is then
   not taken by that same backend, every state is destroyed and the steps are offered again
   with that tensor NCHW (each round turns one more back, so this ends). *scratch grows to the
   most scratch a taken step needs. 0: out of memory. */
static int fuse__offer_backends(fuse_plan *p, const fuse_graph *g, const fuse__fusion *fz,
                                const fuse_compile_options *opt, const int *root,
                                size_t *scratch) {
  const fuse_backend *const *list = opt ? opt->backends : NULL;
  const fuse_backend **made_by = NULL; /* per tensor: whose layout it is in, or NULL */
  fuse_backend_layout *layout = NULL;  /* per tensor: what its producer declared */
  const char **kept = NULL;
  unsigned char *nchw = NULL;
  char why[160];
  size_t scratch0 = *scratch;
  int i, k, b, nt = p->num_tensors, again, ok = 0;
  if (!list || !list[0]) return 1;
  made_by = (const fuse_backend **)fuse__alloc(&p->alloc, (size_t)nt * sizeof *made_by + 1, 16);
  layout = (fuse_backend_layout *)fuse__alloc(&p->alloc, (size_t)nt * sizeof *layout + 1, 16);
  kept = (const char **)fuse__alloc(&p->alloc, (size_t)nt * sizeof *kept + 1, 16);
  nchw = (unsigned char *)fuse__alloc(&p->alloc, (size_t)nt + 1, 16);
  if (!made_by || !layout || !kept || !nchw) goto done;
  memset(nchw, 0, (size_t)nt);
  do {
    again = 0;
    memset(made_by, 0, (size_t)nt * sizeof *made_by);
    memset(layout, 0, (size_t)nt * sizeof *layout);
    fuse__keepable(p, g, fz, list, root, nchw, kept);
    for (i = 0; i < p->num_steps; i++) {
      fuse__step *st = &p->steps[i];
      const fuse__composite *c;
      const char *name = NULL;
      fuse_backend_step d;
      fuse__out o;
      int ci, fused, in_layout = 0;
      if (st->out >= g->num_nodes || g->nodes[st->out].composite < 0) continue; /* output copies */
      ci = g->nodes[st->out].composite;
      c = &g->composites[ci];
      if (!c->codegen || c->root != st->out) continue;
      fused = fz[ci].fused; /* then the step is the conv2d / matmul with its epilogue */
      memset(&d, 0, sizeof d);
      if (fused) {
        d.op = st->op == FUSE__OP_CONV2D ? FUSE_BACKEND_CONV2D : FUSE_BACKEND_MATMUL;
        if (st->op == FUSE__OP_CONV2D) d.conv = st->a.conv;
        d.num_operands = st->num_in;
        for (k = 0; k < st->num_in; k++) {
          fuse_value v = p->operands[st->in_first + k];
          d.operands[k].rank = p->tensors[v].rank;
          memcpy(d.operands[k].shape, p->tensors[v].shape, sizeof d.operands[k].shape);
          d.operands[k].layout = layout[v];
          if (made_by[v]) in_layout = 1;
          while (fuse__is_view(g->nodes[v].op)) v = g->nodes[v].in[0]; /* same bytes */
          if (g->nodes[v].op == FUSE__OP_CONST) d.operands[k].data = g->nodes[v].data;
        }
        d.output.rank = p->tensors[st->out].rank;
        memcpy(d.output.shape, p->tensors[st->out].shape, sizeof d.output.shape);
        d.bias = st->bias;
        d.num_post = st->num_post;
        for (k = 0; k < st->num_post; k++) d.post[k] = st->post[k];
        d.composite = c->name;
        d.num_threads = opt->num_threads;
        if (kept[st->out]) d.output_layout = &layout[st->out];
      }
      why[0] = 0;
      for (b = 0; list[b] && !st->backend; b++) {
        const fuse_backend *be = list[b];
        void *state = NULL;
        size_t need = 0;
        fuse_result r;
        int foreign = 0;
        if (!be->name || strcmp(be->name, c->codegen) != 0 || !be->prepare || !be->run) continue;
        name = be->name;
        if (!fused) break;
        for (k = 0; k < st->num_in; k++) { /* an operand in another backend's layout */
          const fuse_backend *m = made_by[p->operands[st->in_first + k]];
          if (m && m != be) foreign = 1;
        }
        if (foreign) continue;
        why[0] = 0;
        if (d.output_layout) memset(d.output_layout, 0, sizeof *d.output_layout);
        r = be->prepare(be, &d, &state, &need, why, sizeof why);
        why[sizeof why - 1] = 0;
        if (r == FUSE_OK) {
          st->kernel = FUSE__KERNEL_BACKEND;
          st->backend = be;
          st->backend_state = state;
          if (need > *scratch) *scratch = need;
          if (d.output_layout && d.output_layout->id) {
            made_by[st->out] = be;
            p->tensors[st->out].bytes = d.output_layout->bytes;
            st->backend_layout = d.output_layout->bytes ? d.output_layout->bytes : 1;
          }
        } else if (r == FUSE_ERROR_OUT_OF_MEMORY) {
          goto done;
        }
      }
      if (fused && !st->backend && in_layout) { /* its operands must be NCHW: start over */
        for (k = 0; k < st->num_in; k++) {
          int v = p->operands[st->in_first + k];
          if (made_by[v]) nchw[v] = 1;
        }
        again = 1;
        break;
      }
      if (!name || st->backend) continue;
      st->note = (char *)fuse__alloc(&p->alloc, sizeof why + 64, 16);
      if (!st->note) goto done;
      o.buf = st->note;
      o.len = 0;
      o.cap = sizeof why + 64;
      o.write = NULL;
      o.user = NULL;
      if (!fused)
        fuse__format(&o, g, "%s: runs op by op: %s", name,
                     fz[ci].e.why[0] ? fz[ci].e.why : "a value inside it is read outside it");
      else
        fuse__format(&o, g, "%s declined: %s", name, why[0] ? why : "no reason given");
    }
    if (again) { /* undo every step's offer */
      for (i = 0; i < p->num_steps; i++) {
        fuse__step *st = &p->steps[i];
        if (st->backend && st->backend->destroy) st->backend->destroy(st->backend_state);
        fuse__free(&p->alloc, st->note);
        st->note = NULL;
        st->backend = NULL;
        st->backend_state = NULL;
        st->backend_layout = 0;
        st->kernel = FUSE__KERNEL_REF;
      }
      for (i = 0; i < nt; i++) p->tensors[i].bytes = 0;
      *scratch = scratch0;
    }
  } while (again);
  ok = 1;
done:
  fuse__free(&p->alloc, made_by);
  fuse__free(&p->alloc, layout);
  fuse__free(&p->alloc, kept);
  fuse__free(&p->alloc, nchw);
  return ok;
}

