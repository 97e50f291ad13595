/* A growable text buffer for the plan's description. */
typedef struct fuse__listing {
  const fuse_allocator *a;
  char *buf;
  size_t len, cap;
  int failed;
} fuse__listing;

static void fuse__listing_write(void *user, const char *s, size_t n) {
  fuse__listing *t = (fuse__listing *)user;
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    char *bigger;
    while (cap < t->len + n + 1) cap *= 2;
    bigger = (char *)fuse__alloc(t->a, cap, 16);
    if (!bigger) {
      t->failed = 1;
      return;
    }
    if (t->buf) memcpy(bigger, t->buf, t->len);
    fuse__free(t->a, t->buf);
    t->buf = bigger;
    t->cap = cap;
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = 0;
}

/* "step 3: conv2d + bias + add + clamp[0, 6] -> %7 (composite dnnl.conv2d_bias_add_relu)", a
   gated conv's " (prologue: input times the gate %5, on weights scaled per image)", and
   for a step on a micro-kernel of the kernel table, its instruction set and tile:
   " [neon igemm 8x8]" (NHWC GEMM), "[avx2 nchw gemm 6x16]", "[avx512 few-channel 8x32]",
   "[neon depthwise]", "[avx2 grouped 8x8]" */
static void fuse__describe(fuse__listing *t, const fuse_graph *g, const fuse_plan *p,
                           const fuse__step *s, int i, fuse_value v, const int *number,
                           fuse_isa isa) {
  char line[512];
  fuse__out o;
  int k;
  o.buf = line;
  o.len = 0;
  o.cap = sizeof line;
  o.write = NULL;
  o.user = NULL;
  if (s->op == FUSE__OP_CHAIN && s->num_chain == 1) { /* one op: named as before */
    fuse__format(&o, g, "step %d: %s", i, fuse__ops[s->chain_ops[0]].name);
  } else {
    fuse__format(&o, g, "step %d: %s", i, fuse__ops[s->op].name);
    for (k = 0; s->op == FUSE__OP_CHAIN && k < s->num_chain; k++) /* "chain(sub, mul, add)" */
      fuse__format(&o, g, "%s%s", k ? ", " : "(", fuse__ops[s->chain_ops[k]].name);
    if (s->op == FUSE__OP_CHAIN) fuse__puts(&o, ")");
  }
  if (s->bias >= 0) fuse__puts(&o, " + bias");
  for (k = 0; k < s->num_post; k++) {
    fuse__puts(&o, " + ");
    fuse__post_write(&o, &s->post[k], "");
  }
  fuse__puts(&o, " -> ");
  fuse__put_label(&o, g, v, number);
  if (v >= 0 && g->nodes[v].composite >= 0 && s->op != FUSE__OP_TO_NHWC && s->op != FUSE__OP_TO_NCHW &&
      s->op != FUSE__OP_QTO_NHWC && s->op != FUSE__OP_QTO_NCHW)
    fuse__format(&o, g, " (composite %s)", g->composites[g->nodes[v].composite].name);
  if (s->gate) { /* the squeeze-excite gate its input is multiplied by: a prologue */
    fuse__puts(&o, " (prologue: input times the gate ");
    fuse__put_label(&o, g, p->tensors[p->operands[s->in_first + s->gate]].value, number);
    fuse__puts(&o, ", on weights scaled per image)");
  }
  if (s->backend) fuse__format(&o, g, " (%s)", s->backend->name);
  if (s->backend_layout)
    fuse__format(&o, g, " (output in %s's layout, %D bytes)", s->backend->name,
                 (int64_t)s->backend_layout);
  if (s->note) fuse__format(&o, g, " (%s)", s->note);
  if (s->kernel == FUSE__KERNEL_IGEMM && s->winograd)
    fuse__format(&o, g, " [%s winograd F(%d,3) %dx%d%s]", fuse__isa_name(isa), s->winograd,
                 s->mr, s->nr, s->wino_shared ? " shared" : "");
  else if (s->kernel == FUSE__KERNEL_IGEMM || s->kernel == FUSE__KERNEL_NCHW_GEMM)
    fuse__format(&o, g, " [%s %s %dx%d]", fuse__isa_name(isa),
                 s->kernel == FUSE__KERNEL_IGEMM ? "igemm" : "nchw gemm", s->mr, s->nr);
  else if (s->kernel == FUSE__KERNEL_FEW_CHANNELS)
    fuse__format(&o, g, " [%s few-channel %dx%d]", fuse__isa_name(isa), s->mr,
                 fuse__few_channels_pick(isa, 2)->nr);
  else if (s->kernel == FUSE__KERNEL_GROUPED)
    fuse__format(&o, g, " [%s grouped %dx%d]", fuse__isa_name(isa), s->mr, s->nr);
  else if (s->kernel == FUSE__KERNEL_DW)
    fuse__format(&o, g, " [%s depthwise]", fuse__isa_name(isa));
  if (o.len == sizeof line - 1) o.len--; /* truncated: keep room for the newline */
  fuse__puts(&o, "\n");
  fuse__listing_write(t, line, o.len);
}

/* The backend name a step is offered to: the codegen of the composite it is the root of, when
   a backend in the list has that name; else NULL. */
static const char *fuse__offered_to(const fuse_plan *p, const fuse_graph *g, const fuse__step *st,
                                    const fuse_backend *const *list) {
  const fuse__composite *c;
  int b;
  (void)p;
  if (st->out >= g->num_nodes || g->nodes[st->out].composite < 0) return NULL; /* output copies */
  c = &g->composites[g->nodes[st->out].composite];
  if (!c->codegen || c->root != st->out) return NULL;
  for (b = 0; list[b]; b++)
    if (list[b]->name && strcmp(list[b]->name, c->codegen) == 0 && list[b]->prepare &&
        list[b]->run)
      return list[b]->name;
  return NULL;
}

/* Which tensors may stay in a backend's own layout (kept[t] = the backend name): the output
   of a fused step offered to a backend, in the workspace, that only fused steps offered to a
   backend of the same name read, directly (not through a view) and as x or a residual; and
   that no earlier attempt had to turn back to NCHW (nchw[t]). */
static void fuse__keepable(const fuse_plan *p, const fuse_graph *g, const fuse__fusion *fz,
                           const fuse_backend *const *list, const int *root,
                           const unsigned char *nchw, const char **kept) {
  int i, k;
  for (i = 0; i < p->num_tensors; i++) kept[i] = NULL;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    const char *name = fuse__offered_to(p, g, st, list);
    if (name && fz[g->nodes[st->out].composite].fused && p->tensors[st->out].kind == FUSE__LOC_WORK &&
        root[st->out] == st->out && !nchw[st->out])
      kept[st->out] = name;
  }
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    const char *name = fuse__offered_to(p, g, st, list);
    int fused = name && fz[g->nodes[st->out].composite].fused;
    for (k = 0; k < st->num_in; k++) {
      int v = p->operands[st->in_first + k], r = root[v];
      if (!kept[r]) continue;
      if (r != v || !fused || k == 1 || k == st->bias || strcmp(kept[r], name) != 0) kept[r] = NULL;
    }
  }
}

