/* ------------------------------------------------------------ builders: math -- */
/* element-wise math: unary functions, div, pow, prelu, where, variadic sum / mean / max / min */

/* A unary math op with its parameters (a.unary); the parameters must be numbers. */
static fuse_value fuse__math_unary(fuse_graph *g, int op, fuse_value x, float alpha, float beta,
                                   int mode) {
  fuse__node *n;
  if (g && g->status == FUSE_OK && (alpha != alpha || beta != beta))
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: parameters %f, %f must not be NaN",
                      fuse__ops[op].name, (double)alpha, (double)beta);
  if (!(n = fuse__unary(g, op, x))) return FUSE_NONE;
  n->a.unary.alpha = alpha;
  n->a.unary.beta = beta;
  n->a.unary.mode = mode;
  return fuse__id(g, n);
}

FUSE_API fuse_value fuse_div(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_DIV, a, b);
}
FUSE_API fuse_value fuse_pow(fuse_graph *g, fuse_value a, fuse_value b) {
  return fuse__binary(g, FUSE__OP_POW, a, b);
}

FUSE_API fuse_value fuse_prelu(fuse_graph *g, fuse_value x, fuse_value slope) {
  fuse_value in[2];
  int64_t shape[FUSE_MAX_RANK];
  int rank, i, same;
  fuse__node *nx, *ns, *n;
  in[0] = x;
  in[1] = slope;
  if (!fuse__begin(g, "prelu", 2, in)) return FUSE_NONE;
  nx = fuse__node_of(g, x);
  ns = fuse__node_of(g, slope);
  same = fuse__broadcast(nx->rank, nx->shape, ns->rank, ns->shape, &rank, shape) &&
         rank == nx->rank;
  for (i = 0; same && i < rank; i++) same = shape[i] == nx->shape[i];
  if (!same) /* unidirectional: the output keeps x's shape */
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "prelu: slope %S (%V) does not broadcast to x %S (%V) "
                      "(per channel: [C, 1, 1])",
                      ns->rank, ns->shape, slope, nx->rank, nx->shape, x);
  n = fuse__new_node(g, FUSE__OP_PRELU, 2, in, nx->rank, nx->shape);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_where(fuse_graph *g, fuse_value cond, fuse_value a, fuse_value b) {
  fuse_value in[3];
  int64_t ab[FUSE_MAX_RANK], shape[FUSE_MAX_RANK];
  int rank_ab, rank;
  fuse__node *nc, *na, *nb, *n;
  in[0] = cond;
  in[1] = a;
  in[2] = b;
  if (!fuse__begin(g, "where", 3, in)) return FUSE_NONE;
  nc = fuse__node_of(g, cond);
  na = fuse__node_of(g, a);
  nb = fuse__node_of(g, b);
  if (!fuse__broadcast(na->rank, na->shape, nb->rank, nb->shape, &rank_ab, ab) ||
      !fuse__broadcast(nc->rank, nc->shape, rank_ab, ab, &rank, shape))
    return fuse__fail(g, FUSE_ERROR_SHAPE,
                      "where: condition %S (%V), a %S (%V) and b %S (%V) do not broadcast",
                      nc->rank, nc->shape, cond, na->rank, na->shape, a, nb->rank, nb->shape, b);
  if (!fuse__check_shape(g, "where", rank, shape)) return FUSE_NONE;
  n = fuse__new_node(g, FUSE__OP_WHERE, 3, in, rank, shape);
  return n ? fuse__id(g, n) : FUSE_NONE;
}

FUSE_API fuse_value fuse_sqrt(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_SQRT, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_reciprocal(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_RECIPROCAL, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_exp(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_EXP, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_log(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_LOG, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_neg(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_NEG, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_abs(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_ABS, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_floor(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_FLOOR, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_ceil(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_CEIL, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_erf(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_ERF, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_tanh(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_TANH, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_softplus(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_SOFTPLUS, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_hardswish(fuse_graph *g, fuse_value x) {
  return fuse__math_unary(g, FUSE__OP_HARDSWISH, x, 0, 0, 0);
}
FUSE_API fuse_value fuse_hardsigmoid(fuse_graph *g, fuse_value x, float alpha, float beta) {
  return fuse__math_unary(g, FUSE__OP_HARDSIGMOID, x, alpha, beta, 0);
}
FUSE_API fuse_value fuse_leaky_relu(fuse_graph *g, fuse_value x, float alpha) {
  return fuse__math_unary(g, FUSE__OP_LEAKY_RELU, x, alpha, 0, 0);
}
FUSE_API fuse_value fuse_elu(fuse_graph *g, fuse_value x, float alpha) {
  return fuse__math_unary(g, FUSE__OP_ELU, x, alpha, 0, 0);
}
FUSE_API fuse_value fuse_selu(fuse_graph *g, fuse_value x, float alpha, float gamma) {
  return fuse__math_unary(g, FUSE__OP_SELU, x, alpha, gamma, 0);
}
FUSE_API fuse_value fuse_gelu(fuse_graph *g, fuse_value x, int tanh_approximation) {
  if (g && g->status == FUSE_OK && tanh_approximation != 0 && tanh_approximation != 1)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT,
                      "gelu: tanh_approximation is %d; it must be 0 (erf) or 1 (tanh)",
                      tanh_approximation);
  return fuse__math_unary(g, FUSE__OP_GELU, x, 0, 0, tanh_approximation);
}

/* The variadic ones fold a binary op over the values (n = 1: the value itself). */
static fuse_value fuse__math_fold(fuse_graph *g, const char *name, int op, int n,
                                  const fuse_value *xs) {
  fuse_value y;
  int i;
  if (!g || g->status != FUSE_OK) return FUSE_NONE;
  if (n < 1 || !xs)
    return fuse__fail(g, FUSE_ERROR_INVALID_ARGUMENT, "%s: needs at least one value (n=%d%s)",
                      name, n, xs ? "" : ", xs NULL");
  if (!fuse__begin(g, name, n, xs)) return FUSE_NONE;
  y = xs[0];
  for (i = 1; i < n && y != FUSE_NONE; i++) y = fuse__binary(g, op, y, xs[i]);
  return y;
}

FUSE_API fuse_value fuse_sum(fuse_graph *g, int n, const fuse_value *xs) {
  return fuse__math_fold(g, "sum", FUSE__OP_ADD, n, xs);
}
FUSE_API fuse_value fuse_mean(fuse_graph *g, int n, const fuse_value *xs) {
  fuse_value s = fuse__math_fold(g, "mean", FUSE__OP_ADD, n, xs);
  if (s == FUSE_NONE || n == 1) return s;
  return fuse_mul(g, s, fuse_scalar(g, 1.0f / (float)n));
}
FUSE_API fuse_value fuse_max(fuse_graph *g, int n, const fuse_value *xs) {
  return fuse__math_fold(g, "max", FUSE__OP_MAXIMUM, n, xs);
}
FUSE_API fuse_value fuse_min(fuse_graph *g, int n, const fuse_value *xs) {
  return fuse__math_fold(g, "min", FUSE__OP_MINIMUM, n, xs);
}
