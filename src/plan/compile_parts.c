/* ------------------------------------------------- what the compile phases share -- */
/* The pieces of fuse_compile (plan/compile.c) that the phases before it use too: whether this
   build has an ISA's kernels, a tensor's workspace bytes, views, the compile's error message,
   the workspace placement, how a composite runs (fuse__fusion) with the operands of its step,
   and whether this build has what a plan needs. A runtime-only build (FUSE_RUNTIME_ONLY) has
   none of it. */

/* Whether this build has kernels of `isa` (a row of the GEMM table), whatever the CPU. */
static int fuse__isa_built(fuse_isa isa) {
  int i;
  for (i = 0; fuse__igemm_kinds[i].fn; i++)
    if (fuse__igemm_kinds[i].isa == isa) return 1;
  return 0;
}

static size_t fuse__tensor_bytes(const fuse__tensor *t) {
  size_t b = (size_t)fuse__numel(t->rank, t->shape) * fuse__type_size(t->type);
  if (t->bytes > b) b = t->bytes;
  return (b + FUSE__ALIGN - 1) & ~(size_t)(FUSE__ALIGN - 1);
}

static int fuse__is_view(int op) { return op == FUSE__OP_RESHAPE || op == FUSE__OP_FLATTEN; }

static void fuse__compile_error(const fuse_compile_options *opt, const fuse_graph *g,
                                const char *fmt, ...) {
  va_list ap;
  fuse__out o;
  if (!opt || !opt->error || !opt->error_size) return;
  o.buf = opt->error;
  o.len = 0;
  o.cap = opt->error_size;
  o.write = NULL;
  o.user = NULL;
  o.buf[0] = 0;
  va_start(ap, fmt);
  fuse__vformat(&o, g, fmt, ap);
  va_end(ap);
}

/* Places workspace tensors: largest first, each at the lowest offset that does not overlap a
   placed tensor whose lifetime [first, last] (in steps) meets its own. */
static int fuse__place(fuse_plan *p, const int *first, const int *last, int *order, int n_work,
                       size_t *ranges) {
  int i, j, k;
  size_t total = 0;
  for (i = 1; i < n_work; i++) { /* insertion sort by size, largest first */
    int t = order[i];
    size_t bt = fuse__tensor_bytes(&p->tensors[t]);
    for (j = i; j > 0 && fuse__tensor_bytes(&p->tensors[order[j - 1]]) < bt; j--)
      order[j] = order[j - 1];
    order[j] = t;
  }
  for (i = 0; i < n_work; i++) {
    int t = order[i], n_conf = 0;
    size_t size = fuse__tensor_bytes(&p->tensors[t]), at = 0;
    for (j = 0; j < i; j++) { /* busy ranges [start, end) of placed tensors alive meanwhile */
      int u = order[j];
      if (first[u] <= last[t] && first[t] <= last[u]) {
        size_t start = p->tensors[u].offset, end = start + fuse__tensor_bytes(&p->tensors[u]);
        for (k = n_conf; k > 0 && ranges[2 * (k - 1)] > start; k--) {
          ranges[2 * k] = ranges[2 * (k - 1)];
          ranges[2 * k + 1] = ranges[2 * (k - 1) + 1];
        }
        ranges[2 * k] = start;
        ranges[2 * k + 1] = end;
        n_conf++;
      }
    }
    for (k = 0; k < n_conf; k++) {
      if (ranges[2 * k] >= at + size) break; /* the gap before this range fits */
      if (ranges[2 * k + 1] > at) at = ranges[2 * k + 1];
    }
    p->tensors[t].offset = at;
    if (at + size > total) total = at + size;
  }
  p->workspace_size = total;
  return 1;
}

/* How a composite runs: fused (one step, its epilogue on registers) when the analyzer accepts
   it and no op inside it but the root is read from outside; else op by op. */
typedef struct fuse__fusion {
  fuse_epilogue e;
  int fused;
  int quant;             /* an integer composite (passes/quant.c): its FUSE__Q_* kind */
  fuse__qparts q;        /* its parts */
} fuse__fusion;

/* The operands a node's step reads: its own, or, for a fused root, x, w, bias, residuals. */
static int fuse__step_inputs(const fuse_graph *g, const fuse__fusion *fz, fuse_value v,
                             fuse_value *out) {
  const fuse__node *n = &g->nodes[v];
  int k, count = 0;
  if (n->composite >= 0 && fz[n->composite].quant && g->composites[n->composite].root == v) {
    const fuse__qparts *q = &fz[n->composite].q; /* the quantized inputs; the rest is packed */
    if (out) out[0] = g->nodes[q->x_dq].in[0];
    if (q->kind != FUSE__Q_ADD) return 1;
    if (out) out[1] = g->nodes[q->y_dq].in[0];
    return 2;
  }
  if (n->composite >= 0 && fz[n->composite].fused && g->composites[n->composite].root == v) {
    const fuse_epilogue *e = &fz[n->composite].e;
    const fuse__node *red = &g->nodes[e->reduction];
    if (out) out[0] = red->in[0], out[1] = red->in[1];
    count = 2;
    if (e->bias != FUSE_NONE) {
      if (out) out[count] = e->bias;
      count++;
    }
    for (k = 0; k < e->num_post; k++)
      if (fuse__post_has_tensor(e->post[k].kind)) {
        if (out) out[count] = e->post[k].tensor;
        count++;
      }
    return count;
  }
  if (out && n->num_in) memcpy(out, n->in, (size_t)n->num_in * sizeof(fuse_value));
  return n->num_in;
}

/* Why plan p cannot run on this build, into o ("step 3 (conv2d) needs what this build leaves
   out: FUSE_NO_KERNEL_DW_NHWC ..."); 0 when it can. */
static int fuse__plan_lacks(const fuse_plan *p, fuse__out *o) {
  int i, lack;
  for (i = 0; i < p->num_steps; i++)
    if (p->steps[i].kernel != FUSE__KERNEL_BACKEND && (lack = fuse__step_lacks(p, &p->steps[i]))) {
      fuse__format(o, NULL, FUSE__LACKS_FORMAT, i, fuse__ops[p->steps[i].op].name,
                   fuse__lack_kind(lack), fuse__lack_name(lack));
      return 1;
    }
  return 0;
}
