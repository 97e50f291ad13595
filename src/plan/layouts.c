/* ------------------------------------------------------------------ layouts -- */
/* With the kernel table's conv kernels (SIMD or their scalar twins) the plan keeps activations
   in NHWC between the ops that take it: conv2d on the NHWC GEMM always; depthwise conv,
   element-wise ops, pools, global average pool (a mean over H and W becomes one) and concat
   along channels follow their operands. Every other op, the graph's inputs and outputs and
   reshape / flatten see NCHW. Where the two meet a conversion step is added, once per tensor.
   Only a rank-4 tensor with more than one channel and more than one pixel has two layouts. */

static int fuse__two_layouts(const fuse__tensor *t) {
  return t->rank == 4 && t->shape[1] > 1 && t->shape[2] * t->shape[3] > 1;
}

/* Whether a step writes NHWC whatever its input: conv2d on the NHWC GEMM, a qconv2d packed
   for the integer tiles or the depthwise pixel kernel (plan/quant_pack.c). */
static int fuse__writes_nhwc(const fuse__step *st) {
  if (st->op == FUSE__OP_QCONV2D)
    return ((const fuse__qhead *)(const void *)st->packed)->layout != FUSE__QL_DIRECT;
  return st->op == FUSE__OP_CONV2D &&
         (st->kernel == FUSE__KERNEL_IGEMM || st->kernel == FUSE__KERNEL_GROUPED);
}

/* Ops that run in either layout (their row's FUSE__OPF_FOLLOWS_NHWC: the element-wise ops,
   whose chain steps after the layouts (plan/chains.c) see NHWC too, the pools, concat) take NHWC
   when an operand that has two layouts is NHWC; concat only along the channels of rank-4
   tensors. */
static int fuse__follows_nhwc(const fuse_plan *p, const fuse__step *st, const int *ops) {
  int k, any = 0;
  if (!(fuse__ops[st->op].flags & FUSE__OPF_FOLLOWS_NHWC)) return 0;
  if (st->op == FUSE__OP_CONCAT) {
    if (st->a.axis != 1) return 0;
    for (k = 0; k < st->num_in; k++)
      if (p->tensors[ops[k]].rank != 4) return 0;
  }
  if (p->tensors[st->out].rank != 4 && st->op != FUSE__OP_GLOBAL_AVG_POOL2D) return 0;
  for (k = 0; k < st->num_in; k++) {
    const fuse__tensor *t = &p->tensors[ops[k]];
    if (fuse__two_layouts(t) && t->nhwc) any = 1;
  }
  return any;
}

/* Whether operand k of a step is an activation in the step's layout (a kernel conv's weights
   and bias are not; a qconv2d that copies its input into rows and a qglobal_avg_pool2d read
   it in either layout). */
static int fuse__operand_has_layout(const fuse__step *st, int k) {
  if (st->op == FUSE__OP_QGLOBAL_AVG_POOL2D) return 0;
  if (st->op == FUSE__OP_QCONV2D) {
    const fuse__qhead *h = (const fuse__qhead *)(const void *)st->packed;
    return !(h->layout == FUSE__QL_PAIRS || h->layout == FUSE__QL_WINDOW ||
             ((h->layout == FUSE__QL_QUADS || h->layout == FUSE__QL_SQUADS) &&
              (h->C % 4 || fuse__qconv_rowmode(h->layout, h->C, h->KW, st->a.conv.dilation[1]))));
  }
  if (st->kernel == FUSE__KERNEL_REF || st->kernel == FUSE__KERNEL_BACKEND ||
      st->op != FUSE__OP_CONV2D)
    return 1;
  return k == 0 || (k >= 2 && k != st->bias);
}

typedef struct fuse__relayout {
  fuse_plan *p;
  int *root, *alt; /* alt: the same values in the other layout, or -1 */
  fuse__step *steps;
  int *operands;
  int num_steps, num_operands;
} fuse__relayout;

static int fuse__new_tensor(fuse__relayout *x, int like, int nhwc) {
  fuse_plan *p = x->p;
  int t = p->num_tensors++;
  p->tensors[t] = p->tensors[like];
  p->tensors[t].kind = FUSE__LOC_WORK;
  p->tensors[t].index = 0;
  p->tensors[t].offset = 0;
  p->tensors[t].nhwc = nhwc;
  p->tensors[t].bytes = 0;
  x->root[t] = t;
  x->alt[t] = -1;
  return t;
}

static void fuse__add_conversion(fuse__relayout *x, int from, int to) {
  fuse__step *st = &x->steps[x->num_steps++];
  memset(st, 0, sizeof *st);
  if (x->p->tensors[to].type != FUSE_FLOAT32) /* bytes between integer steps */
    st->op = x->p->tensors[to].nhwc ? FUSE__OP_QTO_NHWC : FUSE__OP_QTO_NCHW;
  else
    st->op = x->p->tensors[to].nhwc ? FUSE__OP_TO_NHWC : FUSE__OP_TO_NCHW;
  st->out = to;
  st->bias = -1;
  st->in_first = x->num_operands;
  st->num_in = 1;
  x->operands[x->num_operands++] = from;
}

/* Tensor `from` in the other layout: a conversion step the first time it is asked for. */
static int fuse__converted(fuse__relayout *x, int from) {
  int to;
  if (x->alt[from] >= 0) return x->alt[from];
  to = fuse__new_tensor(x, from, !x->p->tensors[from].nhwc);
  x->alt[to] = from;
  x->alt[from] = to;
  fuse__add_conversion(x, from, to);
  return to;
}

/* Copies the steps in order into x, choosing each one's layout and adding conversions. */
static void fuse__relayout_steps(fuse__relayout *x, const fuse__step *old, int n_old,
                                 const int *old_ops) {
  fuse_plan *p = x->p;
  int s, k;
  for (s = 0; s < n_old; s++) {
    fuse__step st = old[s];
    const int *ops = old_ops + st.in_first;
    int nhwc;
    /* a mean over H and W (x.mean([2, 3]): shufflenet's, mnasnet's) of an NHWC tensor is the
       global average pool, which reads NHWC; its output ([N, C] or [N, C, 1, 1]) is the same
       bytes in either layout */
    if (st.op == FUSE__OP_REDUCE_MEAN && st.a.reduce.axes == 12u && x->root[ops[0]] == ops[0] &&
        p->tensors[ops[0]].nhwc && fuse__two_layouts(&p->tensors[ops[0]]))
      st.op = FUSE__OP_GLOBAL_AVG_POOL2D;
    nhwc = fuse__writes_nhwc(&st) ||
               (st.kernel == FUSE__KERNEL_DW && p->tensors[ops[0]].nhwc &&
                fuse__two_layouts(&p->tensors[ops[0]])) ||
               fuse__follows_nhwc(p, &st, ops);
    int out = st.out, redirect = 0;
    /* a graph output is copied out of NHWC by the conversion itself */
    if (st.op == FUSE__OP_COPY && x->root[ops[0]] == ops[0] && p->tensors[ops[0]].nhwc &&
        fuse__two_layouts(&p->tensors[ops[0]])) {
      fuse__add_conversion(x, ops[0], out);
      continue;
    }
    for (k = 0; k < st.num_in; k++) { /* conversions first, in operand order */
      int t = ops[k], r = x->root[t];
      if (r != t) { /* a view reads NCHW bytes */
        if (p->tensors[r].nhwc && fuse__two_layouts(&p->tensors[r]))
          x->root[t] = fuse__converted(x, r);
        if (nhwc && fuse__operand_has_layout(&st, k) && fuse__two_layouts(&p->tensors[t]))
          fuse__converted(x, t); /* an NHWC step reads the view converted (a 1-D conv's input) */
      } else if (fuse__operand_has_layout(&st, k) && fuse__two_layouts(&p->tensors[t]) &&
                 p->tensors[t].nhwc != nhwc) {
        fuse__converted(x, t);
      }
    }
    st.in_first = x->num_operands;
    for (k = 0; k < st.num_in; k++) {
      int t = ops[k];
      if (fuse__operand_has_layout(&st, k) && fuse__two_layouts(&p->tensors[t]) &&
          (x->root[t] == t ? p->tensors[t].nhwc != nhwc : nhwc))
        t = x->alt[t];
      x->operands[x->num_operands++] = t;
    }
    if (nhwc && fuse__two_layouts(&p->tensors[out])) {
      if (p->tensors[out].kind == FUSE__LOC_OUTPUT) { /* written in place: through NHWC */
        st.out = fuse__new_tensor(x, out, 1);
        x->alt[st.out] = out;
        x->alt[out] = st.out;
        redirect = 1;
      } else {
        p->tensors[out].nhwc = 1;
      }
    }
    x->steps[x->num_steps++] = st;
    if (redirect) fuse__add_conversion(x, st.out, out);
  }
}

/* ------------------------------------------------ kernel choice and packing -- */
#define FUSE__NCHW_GEMM_WEIGHTS (256 * 1024) /* NCHW GEMM weights beyond which pixel blocks are banded */
#define FUSE__L1_PANEL (32 * 1024)     /* a channel block of weights that stays in L1 */
#define FUSE__NCHW_GEMM_PANEL (512 * 1024) /* the NCHW GEMM's gathered input panel, per chunk, at most */

/* The kind for the last column block of a GEMM `cols` wide on kind `kind`: the narrowest tile
   of the same ISA and rows that holds what is left (72 outputs as 48 + 32, not 48 + 48). */
static int fuse__igemm_last(int kind, int64_t cols) {
  const fuse__igemm_kind *k = &fuse__igemm_kinds[kind];
  int64_t left = cols - (cols - 1) / k->nr * k->nr;
  int i, best = kind;
  for (i = 0; fuse__igemm_kinds[i].fn; i++) {
    const fuse__igemm_kind *c = &fuse__igemm_kinds[i];
    if (c->isa == k->isa && c->mr == k->mr && c->nr >= left && c->nr < fuse__igemm_kinds[best].nr)
      best = i;
  }
  return best;
}

/* How much of a kernel's time goes to useful work on a rows x cols GEMM: the share of its
   tiles inside the GEMM (the last column block on its own kind when `mixed`) times its own
   efficiency (0 .. 1). In double: a fuzzed shape must not overflow. */
static double fuse__igemm_eff(int kind, int64_t cols, int64_t rows, int mixed) {
  const fuse__igemm_kind *k = &fuse__igemm_kinds[kind], *l;
  double cp, cl, rp;
  if (cols <= 0 || rows <= 0) return 0.0; /* an empty GEMM: no kernel (the reference) */
  l = mixed ? &fuse__igemm_kinds[fuse__igemm_last(kind, cols)] : k;
  cp = (double)((cols - 1) / k->nr * k->nr), cl = (double)l->nr;
  rp = (double)((rows + k->mr - 1) / k->mr * k->mr);
  return (double)cols / (cp + cl) * ((double)rows / rp) * (cp * k->weight + cl * l->weight) /
         (cp + cl) / 100.0;
}

/* The micro-kernel for a GEMM of `rows` rows (all tiles together) by `cols` columns (a group's
   output channels): the one that wastes least of its tiles (rows and columns rounded up to
   MR and NR), weighed by its own efficiency; for the NCHW GEMM (nchw) only the kernels with
   a packer. Sets *kind (a row of fuse__igemm_kinds) and returns 1; 0 when the ISA has none
   (the plan's reference kernels). */
static int fuse__igemm_pick(fuse_isa isa, int64_t cols, int64_t rows, int nchw, int *kind) {
  double best = 0.0;
  int i, found = 0;
  for (i = 0; fuse__igemm_kinds[i].fn; i++) {
    const fuse__igemm_kind *k = &fuse__igemm_kinds[i];
    double eff;
    if (k->isa != isa || (nchw && !k->pack)) continue;
    eff = fuse__igemm_eff(i, cols, rows, !nchw);
    if (eff > best * 1.0001) best = eff, found = 1, *kind = i; /* ties: the first */
  }
  /* one column block, on a narrower kind: that kind */
  if (found && !nchw && cols <= fuse__igemm_kinds[fuse__igemm_last(*kind, cols)].nr)
    *kind = fuse__igemm_last(*kind, cols);
  return found;
}

/* Bytes of an NCHW depthwise step's scratch, the most any vector width of the build needs
   (x86: 16, 8 and the scalar twin's 1; ARM: 4 and 1): the tap offsets, then the band buffer. */
static size_t fuse__dwc_scratch(int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                int64_t sw, int64_t dh, int64_t dw) {
#ifdef FUSE__NEON
  static const int64_t widths[] = {1, 4};
#else
  static const int64_t widths[] = {1, 8, 16};
#endif
  int64_t most = 0, f;
  int i;
  for (i = 0; i < (int)(sizeof widths / sizeof widths[0]); i++) {
    fuse__dwc_geom g;
    fuse__dwc_geometry(widths[i], OH, OW, KH, KW, sh, sw, dh, dw, &g);
    f = g.rows * g.rs;
    if (f > most) most = f;
  }
  return ((size_t)(KH * KW) * sizeof(int64_t) + 63) / 64 * 64 + (size_t)most * sizeof(float);
}

/* Picks a step's micro-kernel (fuse__igemm_pick) and keeps its tile in the step. */
static int fuse__igemm_choose(fuse_isa isa, int64_t cols, int64_t rows, int nchw, fuse__step *st) {
  if (!fuse__igemm_pick(isa, cols, rows, nchw, &st->igemm)) return 0;
  st->mr = fuse__igemm_kinds[st->igemm].mr, st->nr = fuse__igemm_kinds[st->igemm].nr;
  st->igemm_last = nchw ? st->igemm : fuse__igemm_last(st->igemm, cols);
  st->nr_last = fuse__igemm_kinds[st->igemm_last].nr;
  return 1;
}

/* A step's packed weights, `floats` of them (counted in the plan's weights): zeros to fill,
   or left as they are when `zero` is 0 (the packer writes every float, its padding too). */
static float *fuse__packed_alloc(fuse_plan *p, fuse__step *st, size_t floats, int zero) {
  st->packed = (float *)fuse__alloc(&p->alloc, floats * sizeof(float), FUSE__ALIGN);
  if (!st->packed) return NULL;
  st->packed_floats = floats;
  p->weights_size += floats * sizeof(float);
  fuse__prefault(st->packed, floats * sizeof(float));
  if (zero) memset(st->packed, 0, floats * sizeof(float));
  return st->packed;
}

/* Whether a conv step reads its input in place, pixel for pixel (1x1, stride 1, no padding). */
static int fuse__conv_pointwise(const fuse__step *st, int64_t taps) {
  const fuse_conv2d_attrs *a = &st->a.conv;
  return taps == 1 && a->strides[0] == 1 && a->strides[1] == 1 && !a->padding[0] &&
         !a->padding[1] && !a->padding[2] && !a->padding[3];
}

/* Packing transposes weights a band at a time: FUSE__PACK_BAND values of each of up to NR rows
   of the weights copied into a band buffer, then transposed into the panel by the plan's ISA's
   vector transpose (fuse__transpose_isa), whole vectors read and written (element by element,
   the copies and the scattered stores took as long as zeroing and filling the plan's fresh
   pages). */
#define FUSE__PACK_BAND 256

/* Columns [j, j + cols) of the constant K x N weights wn as rows dst[k * w ...] of a column
   block's panel. A Gemm's transB weight still in the model file ([N][K], fuse__const_read) is
   transposed on the way, through band (cols x FUSE__PACK_BAND floats). */
static void fuse__pack_matmul_block(const fuse_plan *p, const fuse__node *wn, int64_t K,
                                    int64_t N, int64_t j, int64_t cols, int64_t w, float *dst,
                                    float *band) {
  int64_t k, k0, nk, jj;
  if (!wn->raw || !wn->raw_transposed) {
    for (k = 0; k < K; k++) fuse__const_read(wn, k * N + j, cols, dst + k * w);
    return;
  }
  for (k0 = 0; k0 < K; k0 += nk) {
    nk = K - k0 < FUSE__PACK_BAND ? K - k0 : FUSE__PACK_BAND;
    for (jj = 0; jj < cols; jj++)
      memcpy(band + jj * FUSE__PACK_BAND, wn->raw + (size_t)((j + jj) * K + k0) * sizeof(float),
             (size_t)nk * sizeof(float));
    fuse__transpose_isa(p->isa, band, FUSE__PACK_BAND, dst + k0 * w, w, cols, nk);
  }
}

/* matmul x [..., M, K] by constant weights [K, N]: the indirect GEMM with every row of x a
   pixel and N output channels; the weights packed as [column block][K][NR]. */
static int fuse__choose_matmul(fuse_plan *p, const fuse_graph *g, fuse__step *st, size_t *scratch) {
  const fuse__node *wn = &g->nodes[p->operands[st->in_first + 1]];
  const fuse__tensor *tx = &p->tensors[p->operands[st->in_first]];
  int64_t K, N, nr, j;
  size_t need;
  float *band = NULL;
  if (wn->op != FUSE__OP_CONST || wn->rank != 2) return 1;
  K = wn->shape[0], N = wn->shape[1];
  if (N < 4 || K < 1 || !fuse__igemm_choose(p->isa, N, fuse__numel(tx->rank, tx->shape) / K, 0, st))
    return 1;
  nr = st->nr;
  if (!fuse__packed_alloc(p, st, (size_t)((N + nr - 1) / nr * K * nr), 0)) return 0;
  if (wn->raw && wn->raw_transposed &&
      !(band = (float *)fuse__alloc(&p->alloc, (size_t)(nr * FUSE__PACK_BAND) * sizeof(float),
                                    FUSE__ALIGN)))
    return 0;
  for (j = 0; j < N; j += nr) { /* column block by column block, a row of it at a time */
    int64_t w = j + nr >= N ? st->nr_last : nr, cols = N - j < w ? N - j : w;
    float *dst = st->packed + (size_t)fuse__igemm_at(st, N, K, j, 0);
    if (cols < w) memset(dst, 0, (size_t)(K * w) * sizeof(float)); /* the padding columns */
    fuse__pack_matmul_block(p, wn, K, N, j, cols, w, dst, band);
  }
  fuse__free(&p->alloc, band);
  st->kernel = FUSE__KERNEL_IGEMM;
  st->pointwise = 1;
  if ((size_t)(K * nr) * sizeof(float) > FUSE__PANEL_BYTES)
    st->cblock = (int)(FUSE__L1_PANEL / (st->nr * sizeof(float)));
  need = (size_t)(st->cblock ? FUSE__PTR_CACHE : st->mr) * sizeof(float *);
  if (need > *scratch) *scratch = need;
  return 1;
}

/* Whether a conv2d step is better off on NCHW in and out (the NCHW GEMM): its input is a graph
   input and nothing that reads its output takes NHWC (another GEMM conv, a pool, concat), so
   the NHWC kernel would only add a conversion on each side (a single fused layer). */
static int fuse__nchw_ends(const fuse_plan *p, const fuse_graph *g, const fuse__step *st) {
  int i, k;
  if (g->nodes[p->operands[st->in_first]].op != FUSE__OP_INPUT) return 0;
  for (i = 0; i < p->num_steps; i++) {
    const fuse__step *u = &p->steps[i];
    for (k = 0; k < u->num_in; k++)
      if (p->operands[u->in_first + k] == st->out && u != st &&
          (fuse__ops[u->op].flags & FUSE__OPF_TAKES_NHWC))
        return 0;
  }
  return 1;
}

/* Whether the NCHW GEMM (on micro-kernel cg) beats the NHWC kernels with their two
   conversions. Each GEMM costs its multiply-adds over its tile's efficiency (fuse__igemm_eff:
   the NCHW GEMM's tiles span an image's pixels, the NHWC one's all output pixels), and each
   element converted about 25 multiply-adds on AVX-512, 12 on AVX2 (a conversion takes the
   same time on both, a multiply-add twice as long on AVX2; scalar: 2, a multiply-add 16 times
   as long as on AVX-512; NEON: 6, its 4-float multiply-adds scaled from AVX2's, not
   measured), constants fitted to 1x1 and stem layers on both x86 ISAs (bench/layers): the NCHW
   GEMM wins on large images (resnet50's and mobilenet_v2's 1x1 layers at 28 pixels and more,
   the 3-channel stems), the NHWC kernels at 14 and 7 pixels, whose short rows fill the NCHW
   GEMM's tiles poorly. */
static int fuse__nchw_gemm_pays(fuse_isa isa, const fuse__tensor *tx, const fuse__tensor *ty,
                            int64_t Kg, int64_t macs_per_pixel, int cg) {
  int64_t P = ty->shape[2] * ty->shape[3], npix = ty->shape[0] * P;
  double converted =
      (double)fuse__numel(tx->rank, tx->shape) + (double)fuse__numel(ty->rank, ty->shape);
  double macs = (double)macs_per_pixel * (double)npix;
  double per_element = isa == FUSE_ISA_AVX512 ? 25.0 : isa == FUSE_ISA_AVX2 ? 12.0
                       : isa == FUSE_ISA_NEON ? 6.0 : 2.0;
  int ig;
  if (!fuse__igemm_pick(isa, Kg, npix, 0, &ig)) return 1;
  return macs / fuse__igemm_eff(cg, P, Kg, 0) <
         macs / fuse__igemm_eff(ig, Kg, npix, 1) + per_element * converted;
}

/* A conv2d step's shape, as the kernel choice reads it. */
typedef struct fuse__conv_shape {
  const fuse__node *wn; /* the constant weights [K][Cg][KH][KW] */
  int64_t G, K, Cg, Kg, KH, KW, taps, OH, OW, npix;
} fuse__conv_shape;

/* Depthwise (one input and one output channel per group), on the depthwise kernels of the
   ISA: room for the NCHW kernel's band buffer (the layout is chosen later) and the zero row
   both layouts read (NCHW: a row, NHWC: a pixel). */
static int fuse__choose_dw(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c,
                           size_t *zeros, size_t *scratch) {
  const fuse_conv2d_attrs *ca = &st->a.conv;
  size_t need, row;
  if (!fuse__dw_pick(p->isa, 1)) return 0;
  st->kernel = FUSE__KERNEL_DW;
  need = fuse__dwc_scratch(c->OH, c->OW, c->KH, c->KW, ca->strides[0], ca->strides[1],
                           ca->dilation[0], ca->dilation[1]);
  if (need > *scratch) *scratch = need;
  row = (size_t)p->tensors[p->operands[st->in_first]].shape[3] + 64;
  if (row > *zeros) *zeros = row;
  row = (size_t)(c->K + 15) / 16 * 16; /* NHWC: a pixel of the padding, whole vectors */
  if (row > *zeros) *zeros = row;
  return 1;
}

/* Whether the ISA runs the few-channel kernel: its tiles and the depthwise row builder. */
static int fuse__few_channels_runs(fuse_isa isa) {
  return fuse__few_channels_pick(isa, 1) && fuse__dwc_row_pick(isa);
}

/* Few input channels on NCHW in and out (the stems): the input read in place from rows of it
   copied with their padding, no gather per pixel block (fuse__conv_few_channels), while the
   band buffer stays within FUSE__FEW_CHANNELS_BUF (else the NCHW GEMM). */
static int fuse__choose_few_channels(fuse_plan *p, const fuse_graph *g, fuse__step *st,
                                     const fuse__conv_shape *c, size_t *scratch) {
  const fuse_conv2d_attrs *a = &st->a.conv;
  int64_t sw = a->strides[1], band = c->OH < 8 ? c->OH : 8, fill, wq;
  double bytes;
  if (!fuse__nchw_ends(p, g, st) || c->G != 1 || c->Cg > 4 || a->dilation[0] != 1 ||
      a->dilation[1] != 1 || sw > 2 || c->Cg * c->KH * sw > FUSE__FEW_CHANNELS_SEGS ||
      c->OW < 16 || c->OH < 1 || !fuse__few_channels_runs(p->isa))
    return 0;
  wq = fuse__few_channels_wq(c->OW, c->KW, sw, fuse__few_channels_pick(p->isa, 1)->nr, &fill);
  bytes = (double)c->Cg * (double)((band - 1) * a->strides[0] + c->KH) * (double)(sw * wq) *
          sizeof(float);
  if (bytes > FUSE__FEW_CHANNELS_BUF) return 0;
  st->kernel = FUSE__KERNEL_FEW_CHANNELS;
  st->mr = fuse__few_channels_pick(p->isa, 1)->mr;
  st->band = (int)band;
  if ((size_t)bytes > *scratch) *scratch = (size_t)bytes;
  return 1;
}

/* NCHW in and out: tiles of MR output channels by NR output pixels, the weights read as
   [K][Cg * taps] rows; the input gathered per pixel block, vector by vector for strides 1
   and 2 (a wider stride gathers float by float: only against many outputs). Against the
   NHWC kernels with their conversions it is ahead on 1x1 convs and on 3-channel stems, and
   behind on a KxK conv with more input channels, where every tap is gathered again, so
   those stay NHWC (bench/layers). Weights past
   FUSE__NCHW_GEMM_WEIGHTS would come from beyond L1 once per pixel block: several blocks
   (up to FUSE__NCHW_GEMM_PANEL) are gathered and each tile's weight rows run over them all. */
static int fuse__choose_nchw_gemm(fuse_plan *p, const fuse_graph *g, fuse__step *st,
                                  const fuse__conv_shape *c, size_t *scratch) {
  const fuse_conv2d_attrs *a = &st->a.conv;
  int64_t P = c->OH * c->OW;
  size_t need;
  if (!fuse__nchw_ends(p, g, st) || !((a->strides[0] <= 2 && a->strides[1] <= 2) || c->Kg >= 128) ||
      !(c->taps == 1 || c->Cg <= 4) || !fuse__igemm_choose(p->isa, P, c->Kg, 1, st) ||
      !fuse__nchw_gemm_pays(p->isa, &p->tensors[p->operands[st->in_first]], &p->tensors[st->out],
                            c->Kg, c->K * c->Cg * c->taps, st->igemm) ||
      (size_t)(c->taps * c->Cg * st->nr) * sizeof(float) > FUSE__NCHW_GEMM_PANEL)
    return 0;
  st->kernel = FUSE__KERNEL_NCHW_GEMM;
  st->pointwise = fuse__conv_pointwise(st, c->taps);
  need = (size_t)(c->taps * c->Cg * st->nr) * sizeof(float);
  st->band = 1;
  if ((size_t)(c->Kg * c->Cg * c->taps) * sizeof(float) > FUSE__NCHW_GEMM_WEIGHTS) {
    int64_t blocks = (P + st->nr - 1) / st->nr, fit = (int64_t)(FUSE__NCHW_GEMM_PANEL / need);
    st->band = (int)(blocks < fit ? blocks : fit);
  }
  need *= (size_t)st->band;
  if (need > *scratch) *scratch = need;
  return 1;
}

/* Grouped conv with narrow groups on its own kernel (grouped.c) rather than a GEMM per group:
   - with fewer than 4 outputs per group, whatever the shape (the GEMMs take none: the
     reference loops ran them);
   - a 3x3 kernel with column stride 1 or 2 and column dilation 1 (the kernel's blocks) whose
     groups have fewer outputs than two vectors (Kg < 2 VW): measured ahead of the per-group
     GEMM on resnext50's and regnet_y's layers with 4, 8 and 16 channels per group on AVX-512
     (Kg = 4: 4x, Kg = 16: 1.6x) and 4 and 8 on AVX2, behind it with 32 per group on AVX-512
     and 16 or 32 on AVX2, where the GEMM's tiles fill (bench/layers). NEON: the same rule for
     its 4 lanes, not measured; the scalar twin takes AVX-512's, so that it runs the kernel on
     the layers AVX-512 does.
   Groups of up to FUSE__GROUPED_MAX_CG input channels. */
static int fuse__choose_grouped(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c) {
  const fuse__grouped_kind *k = fuse__grouped_pick(p->isa);
  const fuse_conv2d_attrs *a = &st->a.conv;
  int64_t vw;
  if (!k || c->G < 2 || c->Cg > FUSE__GROUPED_MAX_CG) return 0;
  vw = p->isa == FUSE_ISA_SCALAR ? 16 : k->width;
  if (c->Kg >= 4 && !(c->KH == 3 && c->KW == 3 && a->strides[1] <= 2 && a->dilation[1] == 1 &&
                      c->Kg < 2 * vw))
    return 0;
  st->kernel = FUSE__KERNEL_GROUPED;
  st->mr = 8, st->nr = k->width; /* blocks of eight pixels by a vector of output channels */
  return 1;
}

/* The NHWC indirect GEMM: row pointers per tile (a kernel row per tap with few input
   channels), channel blocks when a column block's panel passes FUSE__PANEL_BYTES. */
static int fuse__choose_igemm(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c,
                              size_t *zeros, size_t *scratch) {
  size_t need;
  if (!fuse__igemm_choose(p->isa, c->Kg, c->npix, 0, st)) return 0;
  st->kernel = FUSE__KERNEL_IGEMM;
  st->pointwise = fuse__conv_pointwise(st, c->taps);
  /* few input channels: a tap is a kernel row, KW * C contiguous floats */
  st->rowmode = c->G == 1 && c->Cg * c->KW <= 64 && c->Cg <= 8 && st->a.conv.dilation[1] == 1;
  st->cblock = 0;
  if (!st->rowmode && c->taps * st->mr <= FUSE__PTR_CACHE &&
      (size_t)(c->taps * c->Cg * st->nr) * sizeof(float) > FUSE__PANEL_BYTES)
    st->cblock = (int)(FUSE__L1_PANEL / (st->nr * sizeof(float)));
  need = (size_t)(st->cblock ? FUSE__PTR_CACHE : c->taps * st->mr) * sizeof(float *);
  if (st->rowmode) need += (size_t)(st->mr * c->KH * c->KW * c->Cg) * sizeof(float) + FUSE__ALIGN;
  if (need > *scratch) *scratch = need;
  if ((size_t)(st->rowmode ? c->KW * c->Cg : c->Cg) > *zeros)
    *zeros = (size_t)(st->rowmode ? c->KW * c->Cg : c->Cg);
  return 1;
}

/* The weights of a chosen conv kernel in its order. Depthwise: [tap][Cp], Cp = K rounded up
   to 16. Few channels: [row tile][step][MR], the steps in the kernel's order (channel,
   kernel row, phase, its columns). NCHW GEMM: as they are, [K][Cg * taps]. NHWC GEMM:
   [group][column block][tap][channel][NR]. The weights may still be in the model file
   (fuse__const_read): the GEMMs read them from there, the small depthwise and few-channel ones
   from a copy. 0: out of memory. */
static int fuse__pack_conv(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c) {
  const float *w = c->wn->data;
  float *copy = NULL;
  int64_t taps = c->taps, t, k, ch, kh, m, ph;
  if (!w && (st->kernel == FUSE__KERNEL_DW || st->kernel == FUSE__KERNEL_FEW_CHANNELS ||
             st->kernel == FUSE__KERNEL_GROUPED)) {
    int64_t count = fuse__numel(c->wn->rank, c->wn->shape);
    if (!(copy = (float *)fuse__alloc(&p->alloc, (size_t)count * sizeof(float), FUSE__ALIGN)))
      return 0;
    fuse__const_read(c->wn, 0, count, copy);
    w = copy;
  }
  if (st->kernel == FUSE__KERNEL_DW) {
    int64_t Cp = (c->K + 15) / 16 * 16;
    if (!fuse__packed_alloc(p, st, (size_t)(taps * Cp), 1)) return fuse__free(&p->alloc, copy), 0;
    for (t = 0; t < taps; t++)
      for (k = 0; k < c->K; k++) st->packed[t * Cp + k] = w[k * taps + t];
  } else if (st->kernel == FUSE__KERNEL_FEW_CHANNELS) {
    int64_t mr = st->mr, Kp = (c->K + mr - 1) / mr * mr, sw = st->a.conv.strides[1];
    if (!fuse__packed_alloc(p, st, (size_t)(Kp * c->Cg * taps), 1)) return fuse__free(&p->alloc, copy), 0;
    for (k = 0; k < c->K; k++) {
      float *dst = st->packed + k / mr * mr * c->Cg * taps + k % mr;
      for (ch = 0; ch < c->Cg; ch++)
        for (kh = 0; kh < c->KH; kh++)
          for (ph = 0; ph < sw; ph++)
            for (m = ph; m < c->KW; m += sw, dst += mr)
              *dst = w[((k * c->Cg + ch) * c->KH + kh) * c->KW + m];
    }
  } else if (st->kernel == FUSE__KERNEL_GROUPED) { /* per vector [tap][i][VW] (grouped.c) */
    int64_t vw = st->nr, gv = fuse__grouped_per_vector(vw, c->Cg, c->Kg), v, i, l;
    int64_t nvec = fuse__grouped_vectors(vw, c->G, c->Cg, c->Kg);
    float *dst;
    if (!fuse__packed_alloc(p, st, (size_t)(nvec * taps * c->Cg * vw), 1))
      return fuse__free(&p->alloc, copy), 0;
    for (v = 0, dst = st->packed; v < nvec; v++) {
      fuse__grouped_vec gvec;
      fuse__grouped_vector(vw, c->G, c->Cg, c->Kg, gv, taps, NULL, v, &gvec);
      for (t = 0; t < taps; t++)
        for (i = 0; i < c->Cg; i++, dst += vw)
          for (l = 0; l < gvec.lanes; l++) dst[l] = w[((gvec.oc0 + l) * c->Cg + i) * taps + t];
    }
  } else if (st->kernel == FUSE__KERNEL_NCHW_GEMM) {
    if (!fuse__packed_alloc(p, st, (size_t)(c->K * c->Cg * taps), 0)) return 0;
    fuse__const_read(c->wn, 0, c->K * c->Cg * taps, st->packed);
  } else { /* each column block: bands of its rows transposed, each row to its place */
    int64_t nr = st->nr, obs = (c->Kg + nr - 1) / nr, grp, panel = obs * taps * c->Cg * nr;
    int64_t ld = c->Cg * taps, c0, nc;
    float *band;
    if (!fuse__packed_alloc(p, st, (size_t)(c->G * panel), 0)) return 0;
    band = (float *)fuse__alloc(&p->alloc, (size_t)(2 * nr * FUSE__PACK_BAND) * sizeof(float),
                                FUSE__ALIGN);
    if (!band) return 0;
    for (grp = 0; grp < c->G; grp++)
      for (k = 0; k < c->Kg; k += nr) { /* a column block */
        int64_t wd = k + nr >= c->Kg ? st->nr_last : nr, cols = c->Kg - k < wd ? c->Kg - k : wd, j;
        int64_t src = ((grp * c->Kg + k) * c->Cg) * taps;
        float *dst = st->packed + (size_t)(grp * panel) + fuse__igemm_at(st, c->Kg, taps * c->Cg, k, 0);
        float *rows = band + nr * FUSE__PACK_BAND; /* the band transposed: nc rows of cols */
        if (cols < wd) memset(dst, 0, (size_t)(taps * c->Cg * wd) * sizeof(float));
        for (c0 = 0; c0 < ld; c0 += nc) {
          nc = ld - c0 < FUSE__PACK_BAND ? ld - c0 : FUSE__PACK_BAND;
          for (j = 0; j < cols; j++)
            fuse__const_read(c->wn, src + j * ld + c0, nc, band + j * FUSE__PACK_BAND);
          if (taps == 1) { /* rows in order: straight into the panel */
            fuse__transpose_isa(p->isa, band, FUSE__PACK_BAND, dst + c0 * wd, wd, cols, nc);
            continue;
          }
          fuse__transpose_isa(p->isa, band, FUSE__PACK_BAND, rows, cols, cols, nc);
          for (m = 0; m < nc; m++) /* weight (channel, tap) is panel row tap * Cg + channel */
            memcpy(dst + ((c0 + m) % taps * c->Cg + (c0 + m) / taps) * wd, rows + m * cols,
                   (size_t)cols * sizeof(float));
        }
      }
    fuse__free(&p->alloc, band);
  }
  fuse__free(&p->alloc, copy);
  return 1;
}

/* Winograd for 3x3 stride-1 convs: the choice and the weight transform (plan/winograd_choice.c) */
static int fuse__choose_winograd(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c,
                                 size_t *scratch);
static int fuse__pack_winograd(fuse_plan *p, fuse__step *st, const fuse__conv_shape *c);

/* Picks the kernel of a conv2d or matmul step with constant weights (a row of the kernel
   table, none on the plan's reference kernels) and packs its weights for it: depthwise, the
   grouped kernel, the few-channel kernel, the NCHW GEMM or the NHWC indirect GEMM (4 or more
   outputs per group), in that order of preference. Grows the zero row and the per-chunk scratch it needs.
   0: out of memory. */
static int fuse__choose_kernel(fuse_plan *p, const fuse_graph *g, fuse__step *st, size_t *zeros,
                               size_t *scratch) {
  const fuse__tensor *tw, *ty = &p->tensors[st->out];
  fuse__conv_shape c;
  if (st->op == FUSE__OP_MATMUL) return fuse__choose_matmul(p, g, st, scratch);
  if (st->op != FUSE__OP_CONV2D) return 1;
  c.wn = &g->nodes[p->operands[st->in_first + 1]];
  tw = &p->tensors[p->operands[st->in_first + 1]];
  if (c.wn->op != FUSE__OP_CONST) return 1; /* weights as an input: the reference */
  c.G = st->a.conv.groups, c.K = tw->shape[0], c.Cg = tw->shape[1], c.Kg = c.K / c.G;
  c.KH = tw->shape[2], c.KW = tw->shape[3], c.taps = c.KH * c.KW;
  c.OH = ty->shape[2], c.OW = ty->shape[3], c.npix = ty->shape[0] * c.OH * c.OW;
  if (c.Cg == 1 && c.Kg == 1) {
    if (!fuse__choose_dw(p, st, &c, zeros, scratch)) return 1;
  } else if (p->no_winograd >= 0 && fuse__choose_grouped(p, st, &c)) {
    /* narrow groups: the grouped kernel before Winograd (unless Winograd is forced, as the
       tests do), whose merged block-diagonal GEMM measured 0.47x oneDNN on resnext's groups
       of 4 where this kernel ran 2.3x */
  } else if (fuse__choose_winograd(p, st, &c, scratch)) {
    return fuse__pack_winograd(p, st, &c);
  } else if (c.Kg < 4 || !(fuse__choose_few_channels(p, g, st, &c, scratch) ||
                           fuse__choose_nchw_gemm(p, g, st, &c, scratch) ||
                           fuse__choose_igemm(p, st, &c, zeros, scratch))) {
    return 1;
  }
  return fuse__pack_conv(p, st, &c);
}
