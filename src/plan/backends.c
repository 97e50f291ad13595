/* What fuse__offer_backends shares between its pieces: the per-tensor layout bookkeeping of
   one round of offers. */
typedef struct fuse__offers {
  fuse_plan *p;
  const fuse_graph *g;
  const fuse__fusion *fz;
  const fuse_compile_options *opt;
  const fuse_backend *const *list;
  const fuse_backend **made_by; /* per tensor: whose layout it is in, or NULL */
  fuse_backend_layout *layout;  /* per tensor: what its producer declared */
  const char **kept;            /* per tensor: fuse__keepable's backend name, or NULL */
  unsigned char *nchw;          /* per tensor: an earlier round turned it back to NCHW */
  size_t *scratch;
  char why[160];                /* the last backend's reason for declining */
} fuse__offers;

/* What a backend's prepare is told about a fused step: op, operands (shape, layout, the data
   of constants), output, bias and post-ops. Sets *in_layout when an operand is in some
   backend's own layout. A constant still in the model file is copied out for prepare into
   copies[k] (the caller frees them). 0: out of memory. */
static int fuse__backend_step_of(fuse__offers *f, const fuse__step *st, const fuse__composite *c,
                                 fuse_backend_step *d, int *in_layout, float **copies) {
  const fuse_plan *p = f->p;
  const fuse_graph *g = f->g;
  int k;
  d->op = st->op == FUSE__OP_CONV2D ? FUSE_BACKEND_CONV2D : FUSE_BACKEND_MATMUL;
  if (st->op == FUSE__OP_CONV2D) d->conv = st->a.conv;
  d->num_operands = st->num_in;
  for (k = 0; k < st->num_in; k++) {
    fuse_value v = p->operands[st->in_first + k];
    d->operands[k].rank = p->tensors[v].rank;
    memcpy(d->operands[k].shape, p->tensors[v].shape, sizeof d->operands[k].shape);
    d->operands[k].layout = f->layout[v];
    if (f->made_by[v]) *in_layout = 1;
    while (fuse__is_view(g->nodes[v].op)) v = g->nodes[v].in[0]; /* same bytes */
    if (g->nodes[v].op == FUSE__OP_CONST) d->operands[k].data = g->nodes[v].data;
    if (g->nodes[v].op == FUSE__OP_CONST && !g->nodes[v].data && g->nodes[v].raw) {
      int64_t count = fuse__numel(g->nodes[v].rank, g->nodes[v].shape);
      copies[k] = (float *)fuse__alloc(&p->alloc, (size_t)count * sizeof(float), FUSE__ALIGN);
      if (!copies[k]) return 0;
      fuse__const_read(&g->nodes[v], 0, count, copies[k]);
      d->operands[k].data = copies[k];
    }
  }
  d->output.rank = p->tensors[st->out].rank;
  memcpy(d->output.shape, p->tensors[st->out].shape, sizeof d->output.shape);
  d->bias = st->bias;
  d->num_post = st->num_post;
  for (k = 0; k < st->num_post; k++) d->post[k] = st->post[k];
  d->composite = c->name;
  d->num_threads = f->opt->num_threads;
  if (f->kept[st->out]) d->output_layout = &f->layout[st->out];
  return 1;
}

/* Offers step st to the backends named `codegen`, in list order, until one takes it (only
   finds the first's name when the step is not fused). *name: the name, or NULL when no
   backend has it. 0: out of memory. */
static int fuse__offer_step(fuse__offers *f, fuse__step *st, const char *codegen, int fused,
                            fuse_backend_step *d, const char **name) {
  int b, k;
  f->why[0] = 0;
  for (b = 0; f->list[b] && !st->backend; b++) {
    const fuse_backend *be = f->list[b];
    void *state = NULL;
    size_t need = 0;
    fuse_result r;
    int foreign = 0;
    if (!be->name || strcmp(be->name, codegen) != 0 || !be->prepare || !be->run) continue;
    *name = be->name;
    if (!fused) break;
    for (k = 0; k < st->num_in; k++) { /* an operand in another backend's layout */
      const fuse_backend *m = f->made_by[f->p->operands[st->in_first + k]];
      if (m && m != be) foreign = 1;
    }
    if (foreign) continue;
    f->why[0] = 0;
    if (d->output_layout) memset(d->output_layout, 0, sizeof *d->output_layout);
    r = be->prepare(be, d, &state, &need, f->why, sizeof f->why);
    f->why[sizeof f->why - 1] = 0;
    if (r == FUSE_OK) {
      st->kernel = FUSE__KERNEL_BACKEND;
      st->backend = be;
      st->backend_state = state;
      if (need > *f->scratch) *f->scratch = need;
      if (d->output_layout && d->output_layout->id) {
        f->made_by[st->out] = be;
        f->p->tensors[st->out].bytes = d->output_layout->bytes;
        st->backend_layout = d->output_layout->bytes ? d->output_layout->bytes : 1;
      }
    } else if (r == FUSE_ERROR_OUT_OF_MEMORY) {
      return 0;
    }
  }
  return 1;
}

/* The description's note on a step backend `name` did not take. 0: out of memory. */
static int fuse__note_declined(fuse__offers *f, fuse__step *st, int ci, int fused,
                               const char *name) {
  const fuse_epilogue *e = &f->fz[ci].e;
  fuse__out o;
  st->note = (char *)fuse__alloc(&f->p->alloc, sizeof f->why + 64, 16);
  if (!st->note) return 0;
  o.buf = st->note;
  o.len = 0;
  o.cap = sizeof f->why + 64;
  o.write = NULL;
  o.user = NULL;
  if (!fused)
    fuse__format(&o, f->g, "%s: runs op by op: %s", name,
                 e->why[0] ? e->why : "a value inside it is read outside it");
  else
    fuse__format(&o, f->g, "%s declined: %s", name, f->why[0] ? f->why : "no reason given");
  return 1;
}

/* Offers step i, when it is the root of a composite whose codegen names a backend. 1: done;
   2: it reads a tensor in a backend's layout and no backend took it (its operands are marked
   NCHW: start over); 0: out of memory. */
static int fuse__offer_step_at(fuse__offers *f, int i) {
  fuse__step *st = &f->p->steps[i];
  const fuse_graph *g = f->g;
  const fuse__composite *c;
  const char *name = NULL;
  fuse_backend_step d;
  float *copies[FUSE_BACKEND_MAX_OPERANDS];
  int k, ci, fused, in_layout = 0, ok;
  if (st->out >= g->num_nodes || g->nodes[st->out].composite < 0) return 1; /* output copies */
  ci = g->nodes[st->out].composite;
  c = &g->composites[ci];
  if (!c->codegen || c->root != st->out) return 1;
  fused = f->fz[ci].fused; /* then the step is the conv2d / matmul with its epilogue */
  memset(&d, 0, sizeof d);
  memset(copies, 0, sizeof copies);
  ok = !fused || fuse__backend_step_of(f, st, c, &d, &in_layout, copies);
  ok = ok && fuse__offer_step(f, st, c->codegen, fused, &d, &name);
  for (k = 0; k < FUSE_BACKEND_MAX_OPERANDS; k++) fuse__free(&f->p->alloc, copies[k]);
  if (!ok) return 0;
  if (fused && !st->backend && in_layout) { /* its operands must be NCHW: start over */
    for (k = 0; k < st->num_in; k++) {
      int v = f->p->operands[st->in_first + k];
      if (f->made_by[v]) f->nchw[v] = 1;
    }
    return 2;
  }
  if (!name || st->backend) return 1;
  return fuse__note_declined(f, st, ci, fused, name);
}

/* Undoes every step's offer, for the next round. */
static void fuse__withdraw_offers(fuse_plan *p) {
  int i;
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
  for (i = 0; i < p->num_tensors; i++) p->tensors[i].bytes = 0;
}

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
  fuse__offers f;
  size_t scratch0 = *scratch;
  int i, nt = p->num_tensors, again, ok = 0;
  memset(&f, 0, sizeof f);
  f.list = opt ? opt->backends : NULL;
  if (!f.list || !f.list[0]) return 1;
  f.p = p;
  f.g = g;
  f.fz = fz;
  f.opt = opt;
  f.scratch = scratch;
  f.made_by = (const fuse_backend **)fuse__alloc(&p->alloc, (size_t)nt * sizeof *f.made_by + 1, 16);
  f.layout = (fuse_backend_layout *)fuse__alloc(&p->alloc, (size_t)nt * sizeof *f.layout + 1, 16);
  f.kept = (const char **)fuse__alloc(&p->alloc, (size_t)nt * sizeof *f.kept + 1, 16);
  f.nchw = (unsigned char *)fuse__alloc(&p->alloc, (size_t)nt + 1, 16);
  if (!f.made_by || !f.layout || !f.kept || !f.nchw) goto done;
  memset(f.nchw, 0, (size_t)nt);
  do {
    again = 0;
    memset(f.made_by, 0, (size_t)nt * sizeof *f.made_by);
    memset(f.layout, 0, (size_t)nt * sizeof *f.layout);
    fuse__keepable(p, g, fz, f.list, root, f.nchw, f.kept);
    for (i = 0; i < p->num_steps && !again; i++) {
      int r = fuse__offer_step_at(&f, i);
      if (!r) goto done;
      again = r == 2;
    }
    if (again) {
      fuse__withdraw_offers(p);
      *scratch = scratch0;
    }
  } while (again);
  ok = 1;
done:
  fuse__free(&p->alloc, f.made_by);
  fuse__free(&p->alloc, f.layout);
  fuse__free(&p->alloc, f.kept);
  fuse__free(&p->alloc, f.nchw);
  return ok;
}
