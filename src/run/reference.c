/* ------------------------------------------------------- reference kernels -- */
/* Plain C, one per op, written for clarity; they are the oracle for every faster path. */

typedef struct fuse__run {
  const fuse_plan *p;
  const float *const *inputs;
  float *const *outputs;
  unsigned char *work;
} fuse__run;

static float *fuse__data(const fuse__run *r, int t) {
  const fuse__tensor *x = &r->p->tensors[t];
  switch (x->kind) {
  case FUSE__LOC_INPUT: return (float *)(uintptr_t)r->inputs[x->index]; /* read only */
  case FUSE__LOC_OUTPUT: return r->outputs[x->index];
  case FUSE__LOC_WORK: return (float *)(void *)(r->work + x->offset);
  default: return (float *)(void *)((char *)r->p->consts + x->offset);
  }
}

static const fuse__tensor *fuse__in_t(const fuse__run *r, const fuse__step *s, int i) {
  return &r->p->tensors[r->p->operands[s->in_first + i]];
}
static const float *fuse__in(const fuse__run *r, const fuse__step *s, int i) {
  return fuse__data(r, r->p->operands[s->in_first + i]);
}

/* An element-wise loop of one operand, y[i] = f(x[i]) for i < n (the step holds f's
   parameters), and the lists that key such loops by op (one lookup a step, not an element). */
typedef void (*fuse__unary_loop)(float *y, const float *x, int64_t n, const fuse__step *s);
typedef struct fuse__unary_loop_row {
  int op;
  fuse__unary_loop loop;
} fuse__unary_loop_row;
static fuse__unary_loop fuse__unary_loop_of(const fuse__unary_loop_row *rows, int n, int op) {
  int i;
  for (i = 0; i < n; i++)
    if (rows[i].op == op) return rows[i].loop;
  return NULL;
}

/* Element strides of t seen from an output of rank `rank` (numpy broadcasting: 0 where t has
   size 1 or no dimension). */
static void fuse__broadcast_strides(const fuse__tensor *t, int rank, const int64_t *oshape,
                                    int64_t *strides) {
  int i;
  int64_t s = 1;
  for (i = rank - 1; i >= 0; i--) {
    int d = i - (rank - t->rank);
    if (d < 0 || t->shape[d] != oshape[i]) {
      strides[i] = 0;
    } else {
      strides[i] = s;
    }
    if (d >= 0) s *= t->shape[d];
  }
}

/* Output dims shape[0 .. rank) walked by num operands, operand k stepping st[k][d] floats
   along dim d: size-1 dims dropped, and a dim merged into the one before it where every
   operand steps across the pair as across one dim (the outer stride is the inner's times the
   inner size). The merged shape and strides go to mshape and mst; returns their count (0: one
   element). Element-wise chains and transposes walk the fewest dims this way. */
static int fuse__merge_dims(int rank, const int64_t *shape, int num, int64_t (*st)[FUSE_MAX_RANK],
                            int64_t *mshape, int64_t (*mst)[FUSE_MAX_RANK]) {
  int n = 0, d, k, merge;
  for (d = 0; d < rank; d++) {
    if (shape[d] == 1) continue; /* nothing to walk */
    for (merge = n > 0, k = 0; k < num; k++) merge = merge && mst[k][n - 1] == st[k][d] * shape[d];
    if (!merge) mshape[n++] = 1;
    mshape[n - 1] *= shape[d];
    for (k = 0; k < num; k++) mst[k][n - 1] = st[k][d];
  }
  return n;
}

/* The shape of t's bytes when it is NHWC (or broadcasts against an NHWC tensor): aligned to
   rank 4, then [N, H, W, C]. */
static void fuse__nhwc_shape(const fuse__tensor *t, fuse__tensor *v) {
  int64_t s4[4] = {1, 1, 1, 1};
  int d;
  *v = *t;
  for (d = 0; d < t->rank && d < 4; d++) s4[4 - t->rank + d] = t->shape[d];
  v->rank = 4;
  v->shape[0] = s4[0], v->shape[1] = s4[2], v->shape[2] = s4[3], v->shape[3] = s4[1];
}

/* add, sub, mul, maximum, minimum along a row: y[j] = a[j * ia] op b[j * ib] for j < n, op
   the row's chain kind (FUSE__CHAIN_ADD .. FUSE__CHAIN_MIN), one loop each. */
static void fuse__binary_row(int kind, float *y, const float *a, int64_t ia, const float *b,
                             int64_t ib, int64_t n) {
  int64_t j;
  switch (kind) {
  case FUSE__CHAIN_ADD:
    for (j = 0; j < n; j++) y[j] = a[j * ia] + b[j * ib];
    break;
  case FUSE__CHAIN_SUB:
    for (j = 0; j < n; j++) y[j] = a[j * ia] - b[j * ib];
    break;
  case FUSE__CHAIN_MUL:
    for (j = 0; j < n; j++) y[j] = a[j * ia] * b[j * ib];
    break;
  case FUSE__CHAIN_MAX: /* NaN propagates, as in numpy */
    for (j = 0; j < n; j++) {
      float u = a[j * ia], v = b[j * ib];
      y[j] = (u > v || u != u) ? u : v;
    }
    break;
  default: /* FUSE__CHAIN_MIN */
    for (j = 0; j < n; j++) {
      float u = a[j * ia], v = b[j * ib];
      y[j] = (u < v || u != u) ? u : v;
    }
    break;
  }
}

/* One element of binary op `op` (a rank-0 step; test_kernels' oracle of the SIMD rows) */
static float fuse__binary_op(int op, float a, float b) {
  float y;
  fuse__binary_row(fuse__ops[op].chain, &y, &a, 0, &b, 0, 1);
  return y;
}

static void fuse__kernel_binary(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out], *ta = fuse__in_t(r, s, 0), *tb = fuse__in_t(r, s, 1);
  const float *a = fuse__in(r, s, 0), *b = fuse__in(r, s, 1);
  fuse__tensor vy, va, vb;
  float *y = fuse__data(r, s->out);
  int64_t sa[FUSE_MAX_RANK], sb[FUSE_MAX_RANK], idx[FUSE_MAX_RANK], inner, outer, o;
  int64_t ia, ib, na, nb; /* strides along a row; element counts of a and b */
  int rank = ty->rank, d;
  fuse__elt_fn fn = NULL;
  if (rank == 0) {
    y[0] = fuse__binary_op(s->op, a[0], b[0]);
    return;
  }
  if (ty->nhwc) { /* the same loops over the bytes' [N, H, W, C] shapes */
    fuse__nhwc_shape(ty, &vy);
    fuse__nhwc_shape(ta, &va);
    fuse__nhwc_shape(tb, &vb);
    ty = &vy, ta = &va, tb = &vb;
  }
  fuse__broadcast_strides(ta, rank, ty->shape, sa);
  fuse__broadcast_strides(tb, rank, ty->shape, sb);
  inner = ty->shape[rank - 1];
  outer = fuse__numel(rank - 1, ty->shape);
  ia = sa[rank - 1], ib = sb[rank - 1];
  na = fuse__numel(ta->rank, ta->shape), nb = fuse__numel(tb->rank, tb->shape);
  if ((na == inner * outer || na == 1) && (nb == inner * outer || nb == 1)) { /* one row */
    ia = na > 1 || inner * outer == 1, ib = nb > 1 || inner * outer == 1;
    inner *= outer, outer = 1;
  }
  if (ia <= 1 && ib <= 1) fn = fuse__elt_pick(r->p->isa); /* rows of whole or scalar operands */
  memset(idx, 0, sizeof idx);
  for (o = 0; o < outer; o++) {
    int64_t oa = 0, ob = 0;
    float *yr = y + o * inner;
    for (d = 0; d < rank - 1; d++) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    if (fn)
      fn(s->op, yr, a + oa, (int)ia, b + ob, (int)ib, inner, 0, 0);
    else
      fuse__binary_row(fuse__ops[s->op].chain, yr, a + oa, ia, b + ob, ib, inner);
    for (d = rank - 2; d >= 0 && ++idx[d] == ty->shape[d]; d--) idx[d] = 0;
  }
}

/* relu, clip and sigmoid, one loop each (the step holds clip's bounds) */
static void fuse__relu_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) y[i] = x[i] < 0 ? 0.0f : x[i]; /* NaN stays NaN */
}
static void fuse__clip_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  const float lo = s->a.clip.lo, hi = s->a.clip.hi;
  int64_t i;
  for (i = 0; i < n; i++) y[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
}
static void fuse__sigmoid_loop(float *y, const float *x, int64_t n, const fuse__step *s) {
  int64_t i;
  (void)s;
  for (i = 0; i < n; i++) { /* never exp of a large positive number */
    float e = expf(-fabsf(x[i]));
    y[i] = x[i] >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
  }
}
/* the ops of kind FUSE__RUN_UNARY that compute: the others (copy, and reshape / flatten that
   are outputs) copy */
static const fuse__unary_loop_row fuse__unary_loops[] = {
    {FUSE__OP_RELU, fuse__relu_loop},
    {FUSE__OP_CLIP, fuse__clip_loop},
    {FUSE__OP_SIGMOID, fuse__sigmoid_loop},
};

static void fuse__kernel_unary(const fuse__run *r, const fuse__step *s) {
  const fuse__tensor *ty = &r->p->tensors[s->out];
  const float *x = fuse__in(r, s, 0);
  float *y = fuse__data(r, s->out);
  int64_t count = fuse__numel(ty->rank, ty->shape);
  fuse__elt_fn fn = fuse__elt_pick(r->p->isa);
  fuse__unary_loop loop;
  if (fn && fuse__ops[s->op].post == FUSE_POST_CLAMP) { /* relu, clip: the ISA's rows */
    fn(s->op, y, x, 1, x, 1, count, s->a.clip.lo, s->a.clip.hi);
    return;
  }
  loop = fuse__unary_loop_of(fuse__unary_loops,
                             (int)(sizeof fuse__unary_loops / sizeof *fuse__unary_loops), s->op);
  if (loop)
    loop(y, x, count, s);
  else if (y != x) /* the copies: of any element type */
    memcpy(y, x, (size_t)count * fuse__type_size(ty->type));
}

/* Post-op q's tensor operand (a residual) at its first element, or NULL when the post-op has
   none: where every kernel's epilogue gets its data at run time. */
static const float *fuse__post_operand(const fuse__run *r, const fuse__step *s, int q) {
  return s->post[q].operand >= 0 ? fuse__in(r, s, s->post[q].operand) : NULL;
}

/* The epilogue, once per finished output element: bias, then the post-ops in order.
   y[0..count) sits at element `at` of the output, its first element in output channel c0;
   the channel advances by c_step per element (the bias and the per-channel post-ops). */
static void fuse__epilogue(const fuse__run *r, const fuse__step *s, float *y, int64_t count,
                           int64_t at, int64_t c0, int c_step) {
  const float *res[FUSE_MAX_POST_OPS], *bias = s->bias >= 0 ? fuse__in(r, s, s->bias) + c0 : NULL;
  int64_t i;
  int k;
  for (k = 0; k < s->num_post; k++)
    if ((res[k] = fuse__post_operand(r, s, k)) != NULL)
      res[k] += s->post[k].kind == FUSE_POST_ADD ? at : c0;
  for (i = 0; i < count; i++) {
    float v = y[i];
    if (bias) v += bias[i * c_step];
    for (k = 0; k < s->num_post; k++) { /* the scalar instance of the kernels' one routine */
      const float *o = res[k] ? res[k] + (s->post[k].kind == FUSE_POST_ADD ? i : i * c_step) : NULL;
      v = fuse__post_apply_scalar(v, &s->post[k], o, 1, o ? *o : 0.0f);
    }
    y[i] = v;
  }
}

