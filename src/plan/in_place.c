/* --------------------------------------------------------- concat in place -- */
/* A concat along channels is a pass over memory that only moves bytes. Instead, the step that
   produces an input may write it straight into its slice of the concat's output: the input
   becomes a view of the concat's bytes (its root), at the slice's first float, its rows
   fuse__tensor.stride floats apart. In NHWC a row is a pixel's channels (stride: the concat's
   channel count); in NCHW a row is an image's planes (stride: the concat's channels x pixels).
   When every input is written so, the concat step disappears; else it copies the others.

   An input qualifies when: it is a workspace tensor (not a graph input, constant or output, not
   in a backend's layout), with no view of it; one step writes it, and that step can write rows
   with a stride (fuse__writes_strided); it appears once in the concat; and every step that
   reads it is a concat (which reads strided inputs): nothing else has to read strided rows.
   Its bytes are the concat's from its write to its last read, and the liveness planner sees
   them so (fuse__find_lifetimes: the root's lifetime spans its views' writes and reads). A
   value in several concats is written into the first; the others copy it from there, unless
   they are nested (fuse__concat_nest: densenet's concats, each the first channels of the
   block's last, where every feature then lands once). The reference kernels
   (reference_kernels = 1) keep the copies: the oracle. */

/* The concat's view of a rank-4 tensor in the bytes' order: rows of `row` floats, each row of
   the concat `ct` floats apart once the inputs' rows are laid side by side (NHWC: a pixel's
   channels; NCHW: an image's planes). */
static int64_t fuse__concat_row(const fuse__tensor *t, int nhwc) {
  return nhwc ? t->shape[1] : t->shape[1] * t->shape[2] * t->shape[3];
}

/* Whether step st can write its output's rows `stride` floats apart: in NHWC a conv2d on the
   NHWC GEMM (its tiles store rows ldy apart), a conversion to NHWC (fuse__to_nhwc_strided) or
   a max / average pool on NHWC (a pixel's channels ldy apart); in NCHW the reference conv2d (a
   plane at a time); a conv2d not with a residual, which the kernels read with the output's
   own row stride. */
static int fuse__writes_strided(const fuse_plan *p, const fuse__step *st, int nhwc) {
  int q;
  if (nhwc && st->op == FUSE__OP_TO_NHWC) return 1;
  if (nhwc && (st->op == FUSE__OP_MAX_POOL2D || st->op == FUSE__OP_AVG_POOL2D))
    return p->tensors[p->operands[st->in_first]].nhwc; /* fuse__kernel_pool_nhwc */
  if (st->op != FUSE__OP_CONV2D) return 0;
  for (q = 0; q < st->num_post; q++)
    if (st->post[q].kind == FUSE_POST_ADD) return 0;
  return nhwc ? st->kernel == FUSE__KERNEL_IGEMM : st->kernel == FUSE__KERNEL_REF;
}

/* Appends `text` to a step's note (the description prints it). 0: out of memory. */
static int fuse__note_append(fuse_plan *p, fuse__step *st, const char *text) {
  size_t had = st->note ? strlen(st->note) : 0, len = strlen(text);
  char *note = (char *)fuse__alloc(&p->alloc, had + len + 3, 16);
  if (!note) return 0;
  if (had) memcpy(note, st->note, had), memcpy(note + had, "; ", 2), had += 2;
  memcpy(note + had, text, len + 1);
  fuse__free(&p->alloc, st->note);
  st->note = note;
  return 1;
}

/* Notes on a concat step that copies the inputs not written in place. 0: out of memory. */
static int fuse__note_copies(fuse_plan *p, const fuse_graph *g, fuse__step *st, int placed) {
  char line[96];
  fuse__out o;
  o.buf = line, o.len = 0, o.cap = sizeof line, o.write = NULL, o.user = NULL;
  fuse__format(&o, g, "copies %d of %d inputs, the others written in place", st->num_in - placed,
               st->num_in);
  return fuse__note_append(p, st, line);
}

/* ---------------------------------------------------- channel shuffles on NHWC -- */
/* A channel shuffle (ShuffleNet: reshape [N, C, H, W] to [N, g, C/g, H, W], transpose
   (0, 2, 1, 3, 4), reshape back; in v2 then split in halves) is all NCHW ops, so between NHWC
   convs the plan converted the tensor to NCHW, transposed it and converted each half back:
   three passes over it, four steps. Instead a conversion to NHWC of a channel slice of the
   shuffle (or of all of it) gathers its channels straight from the NHWC tensor (a TO_NHWC step
   with fuse__step.shuffle: per pixel a g x Cs/g transpose, fuse__kernel_layout), which the
   concat pass below may then write in place; the transpose and the conversion to NCHW go when
   nothing else reads them. ShuffleNet v2: per unit one pass over the tensor, a step per half.
   Not for the reference kernels (the oracle keeps the ops as they are), and only for one
   image (a channel slice of NCHW bytes is a view only then). */

/* The step that writes tensor t, or -1. */
static int fuse__writer_of(const fuse_plan *p, int t) {
  int i;
  for (i = 0; i < p->num_steps; i++)
    if (p->steps[i].op >= 0 && p->steps[i].out == t) return i;
  return -1;
}

/* Whether t is a workspace tensor that no live step reads, itself or through a view (its
   writer can go; a graph output stays). */
static int fuse__unread_work(const fuse_plan *p, const int *root, int t) {
  int i, k;
  if (p->tensors[t].kind != FUSE__LOC_WORK) return 0;
  for (i = 0; i < p->num_steps; i++)
    for (k = 0; k < p->steps[i].num_in && p->steps[i].op >= 0; k++)
      if (root[p->operands[p->steps[i].in_first + k]] == t) return 0;
  return 1;
}

/* Step c's operand 0: when it is a channel slice (or all) of a shuffle's transpose, the NHWC
   tensor the shuffle converted to NCHW, with the shuffle's groups, the slice's first channel
   per group, its channels and the transpose's and the conversion's output tensors; else -1. */
static int fuse__shuffle_source(const fuse_plan *p, const int *root, const fuse__step *c,
                                int *groups, int64_t *from, int64_t *channels, int *t, int *xn) {
  static const int perm[5] = {0, 2, 1, 3, 4};
  int s = p->operands[c->in_first], r1, x, d, w;
  const fuse__tensor *ts = &p->tensors[s], *tt, *tr, *tx;
  const fuse__step *b, *a;
  int64_t N, C, H, W, g, plane;
  *t = root[s], tt = &p->tensors[*t];
  if (c->num_in < 1 || *t == s || tt->rank != 5 || ts->rank != 4 || ts->stride ||
      (w = fuse__writer_of(p, *t)) < 0)
    return -1;
  b = &p->steps[w];
  for (d = 0; d < 5; d++)
    if (b->op != FUSE__OP_TRANSPOSE || b->a.perm[d] != perm[d]) return -1;
  r1 = p->operands[b->in_first], *xn = root[r1], tr = &p->tensors[r1];
  if (*xn == r1 || tr->rank != 5 || tr->view_at || tr->stride || (w = fuse__writer_of(p, *xn)) < 0)
    return -1;
  a = &p->steps[w];
  x = p->operands[a->in_first], tx = &p->tensors[x];
  if (a->op != FUSE__OP_TO_NCHW || !tx->nhwc || tx->rank != 4 || tx->bytes) return -1;
  N = tx->shape[0], C = tx->shape[1], H = tx->shape[2], W = tx->shape[3], g = tr->shape[1];
  plane = H * W * (int64_t)sizeof(float);
  if (N != 1 || g < 2 || C % g || tr->shape[0] != N || tr->shape[2] != C / g ||
      tr->shape[3] != H || tr->shape[4] != W || tt->shape[1] != C / g || tt->shape[2] != g ||
      ts->shape[0] != N || ts->shape[2] != H || ts->shape[3] != W || ts->view_at % plane ||
      ts->shape[1] % g || (int64_t)(ts->view_at / plane) % g ||
      (int64_t)(ts->view_at / plane) + ts->shape[1] > C)
    return -1;
  *groups = (int)g;
  *from = (int64_t)(ts->view_at / plane) / g;
  *channels = ts->shape[1];
  return x;
}

/* A depthwise conv d that reads a whole shuffle of x in NCHW (ShuffleNet v2's stride-2 units:
   the first branch's depthwise conv, which the layouts pass gave NCHW, its input being the
   transpose's) reads instead the NHWC gather of the whole shuffle that a rewritten conversion
   makes for the unit's other branch, that conversion moved before it, and writes its output
   in NHWC where the one reader of its NCHW output is a conversion to NHWC (which goes). Not
   with a residual (an operand in the output's layout). Returns 0 when d is left as it was, 1
   when it was changed in place, 2 when the gather moved in before it (d is now d + 1). */
static int fuse__shuffle_dw(fuse_plan *p, const int *root, int d, int x, int groups) {
  const fuse__step *dw = &p->steps[d];
  int o = dw->out, i, k, g = -1, conv = -1, readers = 0;
  fuse__step moved;
  if (dw->op != FUSE__OP_CONV2D || dw->kernel != FUSE__KERNEL_DW || p->tensors[o].nhwc ||
      p->tensors[o].kind != FUSE__LOC_WORK)
    return 0;
  for (k = 0; k < dw->num_post; k++)
    if (dw->post[k].kind == FUSE_POST_ADD) return 0;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    if (st->op == FUSE__OP_TO_NHWC && st->shuffle == groups && !st->shuffle_from &&
        p->operands[st->in_first] == x &&
        p->tensors[st->out].shape[1] == p->tensors[x].shape[1])
      g = i;
    for (k = 0; k < st->num_in && st->op >= 0; k++)
      if (root[p->operands[st->in_first + k]] == o) {
        readers++;
        if (st->op == FUSE__OP_TO_NHWC && !st->shuffle && p->operands[st->in_first] == o) conv = i;
      }
  }
  if (g < 0 || readers != 1 || conv < 0 || p->tensors[p->steps[conv].out].stride) return 0;
  p->steps[d].out = p->steps[conv].out; /* NHWC, the conversion's tensor */
  p->operands[p->steps[d].in_first] = p->steps[g].out;
  p->steps[conv].op = -1;
  if (g < d) return 1;
  for (i = g; i > d; i--) { /* the gather before its new reader, swapped down (a loop of
                               moves would compile to memmove, which the Cortex-M build lacks) */
    moved = p->steps[i];
    p->steps[i] = p->steps[i - 1];
    p->steps[i - 1] = moved;
  }
  return 2;
}

/* The rewrites above over the plan's steps, then the transposes and conversions to NCHW they
   left unread go. 0: out of memory. */
static int fuse__shuffle_in_nhwc(fuse_plan *p, const fuse_graph *g, int *root, const int *number) {
  int i, k, kept = 0, done = 0, t, xn, groups, *left;
  int64_t from, channels;
  left = (int *)fuse__alloc(&p->alloc, (size_t)(2 * p->num_steps + 1) * sizeof(int), 16);
  if (!left) return 0;
  for (i = 0; i < p->num_steps; i++) { /* the conversions of the shuffles' slices */
    fuse__step *c = &p->steps[i];
    int x = c->op == FUSE__OP_TO_NHWC ? fuse__shuffle_source(p, root, c, &groups, &from,
                                                              &channels, &t, &xn) : -1;
    char line[256];
    fuse__out o;
    if (x < 0) continue;
    p->operands[c->in_first] = x;
    c->shuffle = groups;
    c->shuffle_from = from;
    o.buf = line, o.len = 0, o.cap = sizeof line, o.write = NULL, o.user = NULL;
    fuse__format(&o, g, "channels of a channel shuffle (%d groups) gathered from ", groups);
    fuse__put_label(&o, g, p->tensors[x].value, number);
    fuse__puts(&o, " in NHWC");
    if (!fuse__note_append(p, c, line)) {
      fuse__free(&p->alloc, left);
      return 0;
    }
    left[done++] = t, left[done++] = xn;
  }
  for (i = 0; i < p->num_steps && done; i++) { /* depthwise readers of whole shuffles */
    int x = p->steps[i].op == FUSE__OP_CONV2D ? fuse__shuffle_source(p, root, &p->steps[i],
                                                 &groups, &from, &channels, &t, &xn) : -1;
    if (x >= 0 && !from && channels == p->tensors[x].shape[1] &&
        fuse__shuffle_dw(p, root, i, x, groups) == 2)
      i++; /* the depthwise conv moved one on */
  }
  for (k = 0; k < done; k++) /* the transposes, then their conversions, where unread now */
    if (fuse__unread_work(p, root, left[k]) && (i = fuse__writer_of(p, left[k])) >= 0)
      p->steps[i].op = -1;
  fuse__free(&p->alloc, left);
  if (!done) return 1;
  for (i = 0; i < p->num_steps; i++)
    if (p->steps[i].op >= 0) p->steps[kept++] = p->steps[i];
    else fuse__free(&p->alloc, p->steps[i].note);
  p->num_steps = kept;
  return 1;
}

/* Whether operand k of concat step st may be written in place (see above); writer[t]: the step
   that writes t (-1 none, -2 several), reads[t] / concat_reads[t]: how often steps / concat
   steps read it. */
static int fuse__in_place_ok(const fuse_plan *p, const int *root, const fuse__step *st, int k,
                             int nhwc, const int *writer, const int *reads,
                             const int *concat_reads) {
  const int *ops = p->operands + st->in_first;
  int x = ops[k], i;
  const fuse__tensor *t = &p->tensors[x];
  if (root[x] != x || t->kind != FUSE__LOC_WORK || t->bytes || t->stride || t->rank != 4 ||
      x == st->out || writer[x] < 0 || reads[x] != concat_reads[x] ||
      (fuse__two_layouts(t) && t->nhwc != nhwc) ||
      !fuse__writes_strided(p, &p->steps[writer[x]], nhwc))
    return 0;
  for (i = 0; i < st->num_in; i++)
    if (i != k && ops[i] == x) return 0; /* the same value twice: two slices, one write */
  for (i = 0; i < p->num_tensors; i++)
    if (i != x && root[i] == x) return 0; /* a view reads it as a whole tensor */
  return 1;
}

/* A channel concat the passes below may place: rank 4, in the workspace, not a view. */
static int fuse__concat_placeable(const fuse_plan *p, const int *root, const fuse__step *st) {
  const fuse__tensor *t = &p->tensors[st->out];
  return st->op == FUSE__OP_CONCAT && st->a.axis == 1 && t->rank == 4 &&
         t->kind == FUSE__LOC_WORK && !t->bytes && !t->stride && root[st->out] == st->out;
}

/* Whether every step that reads t reads rows a stride apart: concats and chains. */
static int fuse__read_strided(const fuse_plan *p, int t) {
  int i, k;
  for (i = 0; i < p->num_steps; i++)
    for (k = 0; k < p->steps[i].num_in; k++)
      if (p->operands[p->steps[i].in_first + k] == t && p->steps[i].op != FUSE__OP_CONCAT &&
          p->steps[i].op != FUSE__OP_CHAIN)
        return 0;
  return 1;
}

/* Concats nested in place: a concat whose inputs are the first inputs of a larger one
   (densenet: each layer concats the block's features so far, all of them the first inputs of
   the block's last concat) becomes the first channels of the largest such concat, a view with
   its rows. The features are then written once, into the largest, and the smaller concats
   have nothing left to copy (fuse__concat_in_place drops them). Taken where every step that
   reads the smaller one reads strided rows (concats, chains) and nothing views it. */
static void fuse__concat_nest(fuse_plan *p, int *root) {
  int i, j, k;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *a = &p->steps[i];
    fuse__tensor *ta = &p->tensors[a->out];
    int nhwc = fuse__two_layouts(ta) && ta->nhwc, best = -1;
    if (!fuse__concat_placeable(p, root, a)) continue;
    for (j = 0; j < p->num_steps; j++) {
      const fuse__step *b = &p->steps[j];
      const fuse__tensor *tb = &p->tensors[b->out];
      if (j == i || b->num_in <= (best >= 0 ? p->steps[best].num_in : a->num_in) ||
          !fuse__concat_placeable(p, root, b) || (fuse__two_layouts(tb) && tb->nhwc) != nhwc ||
          tb->shape[0] != ta->shape[0] || tb->shape[2] != ta->shape[2] ||
          tb->shape[3] != ta->shape[3])
        continue;
      for (k = 0; k < a->num_in && p->operands[a->in_first + k] == p->operands[b->in_first + k];)
        k++;
      if (k == a->num_in) best = j;
    }
    if (best < 0 || !fuse__read_strided(p, a->out)) continue;
    for (k = 0; k < p->num_tensors && (k == a->out || root[k] != a->out);) k++;
    if (k < p->num_tensors) continue; /* a view reads it as a whole tensor */
    root[a->out] = p->steps[best].out;
    ta->stride = fuse__concat_row(&p->tensors[p->steps[best].out], nhwc);
    ta->view_at = 0;
  }
}

/* Places the inputs of each channel concat that qualify inside its output and drops the concat
   steps left with nothing to copy. writer, reads, concat_reads: scratch of p->num_tensors ints.
   0: out of memory. */
static int fuse__concat_in_place(fuse_plan *p, const fuse_graph *g, int *root, const int *number,
                                 int *writer, int *reads, int *concat_reads) {
  int i, k, kept = 0;
  if (p->isa == FUSE_ISA_AUTO) return 1; /* the reference kernels */
  if (!fuse__shuffle_in_nhwc(p, g, root, number)) return 0;
  for (i = 0; i < p->num_tensors; i++) writer[i] = -1, reads[i] = concat_reads[i] = 0;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *st = &p->steps[i];
    writer[st->out] = writer[st->out] == -1 ? i : -2;
    for (k = 0; k < st->num_in; k++) {
      reads[p->operands[st->in_first + k]]++;
      if (st->op == FUSE__OP_CONCAT) concat_reads[p->operands[st->in_first + k]]++;
    }
  }
  fuse__concat_nest(p, root);
  for (i = 0; i < p->num_steps; i++) {
    fuse__step *st = &p->steps[i];
    const fuse__tensor *ty = &p->tensors[st->out];
    int nhwc = fuse__two_layouts(ty) && ty->nhwc, placed = 0;
    int64_t at = 0, ct;
    if (!fuse__concat_placeable(p, root, st)) continue;
    ct = fuse__concat_row(ty, nhwc);
    for (k = 0; k < st->num_in; k++) {
      int x = p->operands[st->in_first + k];
      fuse__tensor *tx = &p->tensors[x];
      if (fuse__in_place_ok(p, root, st, k, nhwc, writer, reads, concat_reads)) {
        char line[256];
        fuse__out o;
        root[x] = st->out;
        tx->stride = ct;
        tx->view_at = (size_t)at * sizeof(float);
        o.buf = line, o.len = 0, o.cap = sizeof line, o.write = NULL, o.user = NULL;
        fuse__puts(&o, "written in place into ");
        fuse__put_label(&o, g, ty->value, number);
        if (!fuse__note_append(p, &p->steps[writer[x]], line)) return 0;
        placed++;
      }
      at += nhwc ? tx->shape[1] : fuse__concat_row(tx, 0);
    }
    if (placed && placed < st->num_in) {
      if (!fuse__note_copies(p, g, st, placed)) return 0;
    } else if (placed) {
      st->op = -1; /* nothing left to copy: dropped below */
    }
  }
  for (i = 0; i < p->num_steps; i++) { /* the nested concats: their inputs where they copy them */
    fuse__step *st = &p->steps[i];
    const fuse__tensor *ty = &p->tensors[st->out];
    int nhwc = fuse__two_layouts(ty) && ty->nhwc, placed = 0;
    size_t at = ty->view_at;
    if (st->op != FUSE__OP_CONCAT || root[st->out] == st->out || !ty->stride) continue;
    for (k = 0; k < st->num_in; k++) {
      int x = p->operands[st->in_first + k];
      const fuse__tensor *tx = &p->tensors[x];
      placed += root[x] == root[st->out] && tx->view_at == at && tx->stride == ty->stride;
      at += (size_t)(nhwc ? tx->shape[1] : fuse__concat_row(tx, 0)) * sizeof(float);
    }
    if (placed == st->num_in) {
      st->op = -1;
    } else if (placed && !fuse__note_copies(p, g, st, placed)) {
      return 0;
    }
  }
  for (i = 0; i < p->num_steps; i++)
    if (p->steps[i].op >= 0) p->steps[kept++] = p->steps[i];
    else fuse__free(&p->alloc, p->steps[i].note);
  p->num_steps = kept;
  return 1;
}
