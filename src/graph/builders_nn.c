/* ------------------------------------------------------------ builders: nn -- */
/* reductions, log-softmax, layer / instance / group normalization, einsum */

/* The reduction ops in fuse_reduce_kind order (FUSE_REDUCE_MEAN = 1 is the first). */
static int fuse__reduce_op(fuse_reduce_kind kind) {
  return FUSE__OP_REDUCE_MEAN + ((int)kind - (int)FUSE_REDUCE_MEAN);
}

/* The shape a reduction over the axes in `mask` leaves of x. */
static int fuse__reduced_shape(const fuse__node *x, unsigned mask, int keepdims, int64_t *out) {
  int i, rank = 0;
  for (i = 0; i < x->rank; i++) {
    if (!(mask >> i & 1u)) out[rank++] = x->shape[i];
    else if (keepdims) out[rank++] = 1;
  }
  return rank;
}

FUSE_API fuse_value fuse_reduce(fuse_graph *g, fuse_value x, fuse_reduce_kind kind, int n,
                                const int *axes, int keepdims) {
  fuse__node *nx, *node;
  int64_t out[FUSE_MAX_RANK];
  unsigned mask = 0;
  int i, rank, op;
  if (!fuse__begin(g, "reduce", 1, &x)) return FUSE_NONE;
  if ((int)kind < (int)FUSE_REDUCE_MEAN || (int)kind > (int)FUSE_REDUCE_SUM_SQUARE)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "reduce: kind %d is not a fuse_reduce_kind (FUSE_REDUCE_MEAN .. "
                      "FUSE_REDUCE_SUM_SQUARE)",
                      (int)kind);
  op = fuse__reduce_op(kind);
  nx = fuse__node_of(g, x);
  if (n < 0 || n > nx->rank || (n > 0 && !axes))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "%s: %d axes%s for %V %S (0 .. rank, 0 = all)", fuse__ops[op].name, n,
                      n > 0 && !axes ? " with axes NULL" : "", x, nx->rank, nx->shape);
  for (i = 0; i < n; i++) {
    int ax;
    if (!fuse__axis(g, fuse__ops[op].name, axes[i], nx->rank, 0, nx, &ax)) return FUSE_NONE;
    if (mask >> ax & 1u)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: axis %d is given twice for %S",
                        fuse__ops[op].name, ax, nx->rank, nx->shape);
    mask |= 1u << ax;
  }
  if (n == 0) mask = nx->rank ? (1u << nx->rank) - 1u : 0u;
  rank = fuse__reduced_shape(nx, mask, keepdims != 0, out);
  if (!(node = fuse__new_node(g, op, 1, &x, rank, out))) return FUSE_NONE;
  node->a.reduce.axes = mask;
  node->a.reduce.keepdims = keepdims != 0;
  return fuse__id(g, node);
}

FUSE_API fuse_value fuse_log_softmax(fuse_graph *g, fuse_value x, int axis) {
  fuse__node *nx, *n;
  int ax;
  if (!fuse__begin(g, "log_softmax", 1, &x)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "log_softmax: input %V is a scalar", x);
  if (!fuse__axis(g, "log_softmax", axis, nx->rank, 0, nx, &ax)) return FUSE_NONE;
  if (!(n = fuse__unary(g, FUSE__OP_LOG_SOFTMAX, x))) return FUSE_NONE;
  n->a.axis = ax;
  return fuse__id(g, n);
}

static int fuse__norm_eps(fuse_graph *g, const char *op, float eps) {
  if (eps >= 0 && eps < HUGE_VALF) return 1;
  return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: eps=%f must be a number >= 0", op,
                    (double)eps),
         0;
}

/* scale / bias of a per-channel normalization: [C] for x [N, C, ...]. */
static int fuse__norm_channel_params(fuse_graph *g, const char *op, const fuse_value *in) {
  const fuse__node *nx = fuse__node_of(g, in[0]);
  int i;
  for (i = 1; i < 3; i++) {
    const fuse__node *p = fuse__node_of(g, in[i]);
    if (p->rank != 1 || p->shape[0] != nx->shape[1])
      return fuse__fail(g, FUSE_ERROR_SHAPE, "%s: %s %V %S must be [%D] for input %V %S", op,
                        i == 1 ? "scale" : "bias", in[i], p->rank, p->shape, nx->shape[1], in[0],
                        nx->rank, nx->shape),
             0;
  }
  return 1;
}

FUSE_API fuse_value fuse_layer_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                    fuse_value bias, int axis, float eps) {
  fuse_value in[3];
  fuse__node *nx, *n;
  int ax, i, k, num_in = bias == FUSE_NONE ? 2 : 3;
  in[0] = x;
  in[1] = scale;
  in[2] = bias;
  if (!fuse__begin(g, "layer_norm", num_in, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 1) return fuse__fail(g, FUSE_ERROR_SHAPE, "layer_norm: input %V is a scalar", x);
  if (!fuse__axis(g, "layer_norm", axis, nx->rank, 0, nx, &ax) ||
      !fuse__norm_eps(g, "layer_norm", eps))
    return FUSE_NONE;
  for (k = 1; k < num_in; k++) { /* exactly x.shape[axis:] */
    const fuse__node *p = fuse__node_of(g, in[k]);
    int ok = p->rank == nx->rank - ax;
    for (i = 0; ok && i < p->rank; i++) ok = p->shape[i] == nx->shape[ax + i];
    if (!ok)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "layer_norm: %s %V %S must be %S, the shape of input %V %S from axis %d",
                        k == 1 ? "scale" : "bias", in[k], p->rank, p->shape, nx->rank - ax,
                        nx->shape + ax, x, nx->rank, nx->shape, ax);
  }
  if (!(n = fuse__new_node(g, FUSE__OP_LAYER_NORM, num_in, in, nx->rank, nx->shape)))
    return FUSE_NONE;
  n->a.norm.axis = ax;
  n->a.norm.groups = 0;
  n->a.norm.eps = eps;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_instance_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                       fuse_value bias, float eps) {
  fuse_value in[3];
  fuse__node *nx, *n;
  in[0] = x;
  in[1] = scale;
  in[2] = bias;
  if (!fuse__begin(g, "instance_norm", 3, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 3)
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "instance_norm: input %V %S must have rank >= 3 [N, C, spatial...]", x,
                      nx->rank, nx->shape);
  if (!fuse__norm_channel_params(g, "instance_norm", in) ||
      !fuse__norm_eps(g, "instance_norm", eps))
    return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_INSTANCE_NORM, 3, in, nx->rank, nx->shape)))
    return FUSE_NONE;
  n->a.norm.axis = 2;
  n->a.norm.groups = 0;
  n->a.norm.eps = eps;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_group_norm(fuse_graph *g, fuse_value x, fuse_value scale,
                                    fuse_value bias, int groups, float eps) {
  fuse_value in[3];
  fuse__node *nx, *n;
  in[0] = x;
  in[1] = scale;
  in[2] = bias;
  if (!fuse__begin(g, "group_norm", 3, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  if (nx->rank < 2)
    return fuse__fail(g, FUSE_ERROR_SHAPE, "group_norm: input %V %S must have rank >= 2 [N, C, ...]",
                      x, nx->rank, nx->shape);
  if (groups < 1 || nx->shape[1] % groups)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "group_norm: groups=%d must be >= 1 and divide the %D channels of %V %S",
                      groups, nx->shape[1], x, nx->rank, nx->shape);
  if (!fuse__norm_channel_params(g, "group_norm", in) || !fuse__norm_eps(g, "group_norm", eps))
    return FUSE_NONE;
  if (!(n = fuse__new_node(g, FUSE__OP_GROUP_NORM, 3, in, nx->rank, nx->shape))) return FUSE_NONE;
  n->a.norm.axis = 1;
  n->a.norm.groups = groups;
  n->a.norm.eps = eps;
  return fuse__id(g, n);
}

/* ---- einsum: parsed, then composed of reduce_sum, transpose, reshape and one matmul */

typedef struct fuse__einsum_term {
  char idx[FUSE_MAX_RANK];
  int n;
} fuse__einsum_term;

static int fuse__einsum_letter(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* One term of letters; *p advances past it. 0 with the graph's error when it is malformed. */
static int fuse__einsum_term_parse(fuse_graph *g, const char *eq, const char **p,
                                   fuse__einsum_term *t) {
  char letter[2]; /* for messages */
  t->n = 0;
  letter[1] = 0;
  for (; **p && **p != ',' && **p != '-'; (*p)++) {
    char c = **p;
    int k;
    letter[0] = c;
    if (c == '.')
      return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                        "einsum: \"%s\": the ellipsis '...' (broadcast dimensions) is not "
                        "supported; name every dimension with a letter",
                        eq),
             0;
    if (!fuse__einsum_letter(c))
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "einsum: \"%s\": '%s' is not an index letter (a-z, A-Z), ',' or '->'", eq,
                        letter),
             0;
    for (k = 0; k < t->n; k++)
      if (t->idx[k] == c)
        return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                          "einsum: \"%s\": index '%s' repeats within one term (a diagonal or "
                          "trace is not supported)",
                          eq, letter),
               0;
    if (t->n == FUSE_MAX_RANK)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "einsum: \"%s\": a term has more than %d indices", eq, FUSE_MAX_RANK),
             0;
    t->idx[t->n++] = c;
  }
  return 1;
}

static int fuse__einsum_find(const fuse__einsum_term *t, char c) {
  int k;
  for (k = 0; k < t->n; k++)
    if (t->idx[k] == c) return k;
  return -1;
}

/* Sums x over the indices of t that `keep` lacks (reduce_sum), leaving t with the rest. */
static fuse_value fuse__einsum_sum_out(fuse_graph *g, fuse_value x, fuse__einsum_term *t,
                                       const fuse__einsum_term *keep1,
                                       const fuse__einsum_term *keep2) {
  int axes[FUSE_MAX_RANK], n = 0, k, m = 0;
  for (k = 0; k < t->n; k++)
    if (fuse__einsum_find(keep1, t->idx[k]) < 0 && (!keep2 || fuse__einsum_find(keep2, t->idx[k]) < 0))
      axes[n++] = k;
  if (!n) return x;
  x = fuse_reduce(g, x, FUSE_REDUCE_SUM, n, axes, 0);
  for (k = 0; k < t->n; k++)
    if (fuse__einsum_find(keep1, t->idx[k]) >= 0 || (keep2 && fuse__einsum_find(keep2, t->idx[k]) >= 0))
      t->idx[m++] = t->idx[k];
  t->n = m;
  return x;
}

/* x (indices t) transposed to the order `order` (a permutation of t), when it differs. */
static fuse_value fuse__einsum_permute(fuse_graph *g, fuse_value x, const fuse__einsum_term *t,
                                       const char *order) {
  int perm[FUSE_MAX_RANK], k, same = 1;
  for (k = 0; k < t->n; k++) {
    perm[k] = fuse__einsum_find(t, order[k]);
    same &= perm[k] == k;
  }
  return same ? x : fuse_transpose(g, x, perm);
}

/* x reshaped to [dims], when its shape differs. */
static fuse_value fuse__einsum_reshape(fuse_graph *g, fuse_value x, int rank, const int64_t *dims) {
  const fuse__node *n;
  if (x == FUSE_NONE) return FUSE_NONE;
  n = fuse__node_of(g, x);
  if (n->rank == rank && (rank == 0 || memcmp(n->shape, dims, (size_t)rank * sizeof(int64_t)) == 0))
    return x;
  return fuse_reshape(g, x, rank, dims);
}

FUSE_API fuse_value fuse_einsum(fuse_graph *g, const char *equation, int n, const fuse_value *xs) {
  char eq[65]; /* the equation without its spaces */
  const char *p;
  fuse__einsum_term in[2], out;
  int64_t size[128]; /* by index letter */
  char letter[2]; /* for messages */
  int i, k, len = 0, terms = 1, explicit_out = 0;
  letter[1] = 0;
  if (!g || g->status != FUSE_OK) return FUSE_NONE;
  if (!equation)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "einsum: the equation is NULL");
  if (n < 1 || !xs)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "einsum: \"%s\" with %d operands%s",
                      equation, n, xs ? "" : " (xs NULL)");
  if (n > 2)
    return fuse__fail(g, FUSE_ERROR_UNSUPPORTED,
                      "einsum: \"%s\" with %d operands: only 1 or 2 operands are supported "
                      "(chain two-operand einsums for more)",
                      equation, n);
  if (!fuse__begin(g, "einsum", n, xs)) return FUSE_NONE;
  for (p = equation; *p; p++) { /* spaces go; the rest is checked term by term */
    if (*p == ' ' || *p == '\t') continue;
    if (len == (int)sizeof eq - 1)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "einsum: the equation \"%s\" is too long",
                        equation);
    eq[len++] = *p;
  }
  eq[len] = 0;
  for (p = eq; *p && *p != '-'; p++) terms += *p == ',';
  if (terms != n)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "einsum: \"%s\" has %d input terms for %d operands", equation, terms, n);
  p = eq;
  for (i = 0; i < n; i++) {
    if (!fuse__einsum_term_parse(g, equation, &p, &in[i])) return FUSE_NONE;
    if (*p == ',') p++;
  }
  if (*p == '-') {
    if (p[1] != '>')
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "einsum: \"%s\": '-' must start '->'",
                        equation);
    p += 2;
    explicit_out = 1;
    if (!fuse__einsum_term_parse(g, equation, &p, &out)) return FUSE_NONE;
    if (*p)
      return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                        "einsum: \"%s\": the output term must end the equation", equation);
  }
  for (i = 0; i < 128; i++) size[i] = 0;
  for (i = 0; i < n; i++) {
    const fuse__node *x = fuse__node_of(g, xs[i]);
    if (x->rank != in[i].n)
      return fuse__fail(g, FUSE_ERROR_SHAPE,
                        "einsum: \"%s\": term %d has %d indices but operand %d %V is %S", equation,
                        i + 1, in[i].n, i + 1, xs[i], x->rank, x->shape);
    for (k = 0; k < in[i].n; k++) {
      int c = (unsigned char)in[i].idx[k];
      letter[0] = (char)c;
      if (size[c] && size[c] != x->shape[k])
        return fuse__fail(g, FUSE_ERROR_SHAPE,
                          "einsum: \"%s\": index '%s' is %D in one place and %D in operand %d %V %S",
                          equation, letter, size[c], x->shape[k], i + 1, xs[i],
                          x->rank, x->shape);
      size[c] = x->shape[k];
    }
  }
  if (explicit_out) {
    for (k = 0; k < out.n; k++) {
      letter[0] = out.idx[k];
      if (!size[(unsigned char)out.idx[k]])
        return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                          "einsum: \"%s\": output index '%s' is in no input term", equation,
                          letter);
    }
  } else { /* implicit: the indices that appear once, in alphabetical (ASCII) order */
    out.n = 0;
    for (i = 'A'; i <= 'z'; i++) {
      int count = 0;
      if (!fuse__einsum_letter(i)) continue;
      for (k = 0; k < n; k++) count += fuse__einsum_find(&in[k], (char)i) >= 0;
      if (count == 1) out.idx[out.n++] = (char)i;
    }
  }
  if (n == 1) {
    fuse_value x = fuse__einsum_sum_out(g, xs[0], &in[0], &out, NULL);
    return x == FUSE_NONE ? FUSE_NONE : fuse__einsum_permute(g, x, &in[0], out.idx);
  }
  {
    /* indices: batch (both and the output), m (first and output), n (second and output),
       contracted (both, not the output); an index in one operand only and not in the output
       is summed out of that operand first */
    char batch[FUSE_MAX_RANK], mi[FUSE_MAX_RANK], ni[FUSE_MAX_RANK], ki[FUSE_MAX_RANK];
    char order[FUSE_MAX_RANK];
    int nb = 0, nm = 0, nn = 0, nk = 0, r;
    int64_t M = 1, N = 1, K = 1, dims[FUSE_MAX_RANK + 2];
    fuse_value a, b, y;
    fuse__einsum_term have; /* y's indices */
    a = fuse__einsum_sum_out(g, xs[0], &in[0], &out, &in[1]);
    b = a == FUSE_NONE ? FUSE_NONE : fuse__einsum_sum_out(g, xs[1], &in[1], &out, &in[0]);
    if (b == FUSE_NONE) return FUSE_NONE;
    for (k = 0; k < out.n; k++) {
      char c = out.idx[k];
      int ina = fuse__einsum_find(&in[0], c) >= 0, inb = fuse__einsum_find(&in[1], c) >= 0;
      if (ina && inb) batch[nb++] = c;
      else if (ina) mi[nm++] = c, M *= size[(unsigned char)c];
      else ni[nn++] = c, N *= size[(unsigned char)c];
    }
    for (k = 0; k < in[0].n; k++)
      if (fuse__einsum_find(&out, in[0].idx[k]) < 0) {
        ki[nk++] = in[0].idx[k];
        K *= size[(unsigned char)in[0].idx[k]];
      }
    /* a: [batch..., m..., k...] -> [batch..., M, K] (with no batch index, the m indices stay
       apart: matmul broadcasts b over them) */
    memcpy(order, batch, (size_t)nb);
    memcpy(order + nb, mi, (size_t)nm);
    memcpy(order + nb + nm, ki, (size_t)nk);
    a = fuse__einsum_permute(g, a, &in[0], order);
    r = 0;
    for (k = 0; k < nb; k++) dims[r++] = size[(unsigned char)batch[k]];
    if (nb == 0 && nm > 0) {
      for (k = 0; k < nm; k++) dims[r++] = size[(unsigned char)mi[k]];
    } else {
      dims[r++] = M;
    }
    dims[r++] = K;
    a = fuse__einsum_reshape(g, a, r, dims);
    /* b: [batch..., k..., n...] -> [batch..., K, N] */
    memcpy(order, batch, (size_t)nb);
    memcpy(order + nb, ki, (size_t)nk);
    memcpy(order + nb + nk, ni, (size_t)nn);
    b = a == FUSE_NONE ? FUSE_NONE : fuse__einsum_permute(g, b, &in[1], order);
    r = 0;
    for (k = 0; k < nb; k++) dims[r++] = size[(unsigned char)batch[k]];
    dims[r++] = K;
    dims[r++] = N;
    b = fuse__einsum_reshape(g, b, r, dims);
    y = b == FUSE_NONE ? FUSE_NONE : fuse_matmul(g, a, b);
    /* [batch..., m..., n...] in the output's order */
    r = 0;
    for (k = 0; k < nb; k++) order[r] = batch[k], dims[r++] = size[(unsigned char)batch[k]];
    for (k = 0; k < nm; k++) order[r] = mi[k], dims[r++] = size[(unsigned char)mi[k]];
    for (k = 0; k < nn; k++) order[r] = ni[k], dims[r++] = size[(unsigned char)ni[k]];
    y = fuse__einsum_reshape(g, y, r, dims);
    if (y == FUSE_NONE) return FUSE_NONE;
    have.n = r;
    memcpy(have.idx, order, (size_t)r);
    return fuse__einsum_permute(g, y, &have, out.idx);
  }
}
