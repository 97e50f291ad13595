/* test_chains.c - element-wise chains outside epilogues (one step, one pass over memory) and
   the vector row kernels (softmax, log-softmax, norms, reductions): every ISA the CPU has, the
   scalar twin included, against the op-by-op reference kernels (reference_kernels = 1). */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <math.h>
#include <stdlib.h>

static uint32_t rng = 2026;
static float urand(void) { /* [-1, 1) */
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}
static int irand(int n) {
  rng = rng * 1664525u + 1013904223u;
  return (int)((rng >> 8) % (uint32_t)n);
}

#define MAX_IN 4
typedef struct case_data {
  int n_in;
  float *in[MAX_IN];
  fuse_value y; /* the output */
} case_data;

static void fill(float *x, size_t n, float scale) {
  size_t i;
  for (i = 0; i < n; i++) x[i] = scale * urand();
}

static size_t numel_of(const fuse_graph *g, fuse_value v) {
  size_t n = 1;
  int i;
  for (i = 0; i < fuse_value_rank(g, v); i++) n *= (size_t)fuse_value_shape(g, v)[i];
  return n;
}

static fuse_value input(fuse_graph *g, case_data *d, const char *name, int rank,
                        const int64_t *shape, float scale) {
  fuse_value v = fuse_input(g, name, rank, shape);
  size_t n = numel_of(g, v);
  d->in[d->n_in] = (float *)malloc(n * sizeof(float));
  fill(d->in[d->n_in++], n, scale);
  return v;
}

static fuse_value constant(fuse_graph *g, int rank, const int64_t *shape, float lo, float hi) {
  float buf[4096];
  size_t n = 1, i;
  int k;
  for (k = 0; k < rank; k++) n *= (size_t)shape[k];
  for (i = 0; i < n && i < 4096; i++) buf[i] = lo + (hi - lo) * (0.5f + 0.5f * urand());
  return fuse_constant(g, NULL, rank, shape, buf);
}

static void finish(fuse_graph *g, case_data *d, fuse_value y) {
  d->y = y;
  fuse_output(g, y);
}

static void free_case(case_data *d) {
  int i;
  for (i = 0; i < d->n_in; i++) free(d->in[i]);
  d->n_in = 0;
}

static runner_text listing;

/* Runs g (one output) on isa (reference: the reference kernels); the plan's step count in
   *steps and its listing in `listing.s`. */
static float *run(fuse_graph *g, const case_data *d, fuse_isa isa, int reference, int *steps) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  float *y;
  float *outs[1];
  size_t ny = numel_of(g, d->y);
  memset(&o, 0, sizeof o);
  o.isa = isa;
  o.reference_kernels = reference;
  if (fuse_compile(g, &o, &p) != FUSE_OK) return NULL;
  y = (float *)calloc(ny, sizeof(float));
  outs[0] = y;
  if (fuse_run(p, (const float *const *)d->in, outs, NULL) != FUSE_OK) {
    free(y);
    y = NULL;
  }
  if (steps) *steps = fuse_plan_step_count(p);
  runner_text_clear(&listing);
  fuse_plan_write(p, runner_text_write, &listing);
  fuse_plan_destroy(p);
  return y;
}

/* Whether this CPU (and build) runs the kernels of isa: the scalar twins anywhere, AVX2 where
   AVX-512 is, NEON on ARM. */
static int isa_runs(int isa) {
  int cpu = (int)fuse_cpu_isa();
  return isa == FUSE_ISA_SCALAR || isa == cpu || (isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512);
}

/* Every ISA against the reference, normwise <= tol; each plan of `steps` steps (0: any). */
static int check_all_isas(fuse_graph *g, const case_data *d, int steps, double tol,
                          const char *what) {
  float *want, *got;
  size_t ny;
  int isa, ok = 1, got_steps = 0;
  CHECK(fuse_graph_status(g) == FUSE_OK);
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "    %s: %s\n", what, fuse_graph_error(g));
    return 0;
  }
  ny = numel_of(g, d->y);
  want = run(g, d, FUSE_ISA_SCALAR, 1, NULL);
  CHECK(want != NULL);
  if (!want) return 0;
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++) {
    double e;
    if (!isa_runs(isa)) continue;
    got = run(g, d, (fuse_isa)isa, 0, &got_steps);
    CHECK(got != NULL);
    if (!got) {
      ok = 0;
      continue;
    }
    e = runner_rel_error(got, want, ny);
    if (!(e <= tol)) {
      fprintf(stderr, "    %s, isa %d: error %.3g > %g\n%s", what, isa, e, tol, listing.s);
      ok = 0;
    }
    if (steps && got_steps != steps) {
      fprintf(stderr, "    %s, isa %d: %d steps, want %d\n%s", what, isa, got_steps, steps,
              listing.s);
      ok = 0;
    }
    free(got);
  }
  free(want);
  CHECK(ok);
  return ok;
}

static const int64_t S4[4] = {2, 3, 5, 7};

/* each unary op alone: one step */
TEST(unary_ops_vectorized) {
  int op;
  for (op = 0; op < 20; op++) {
    fuse_graph *g = fuse_graph_create(NULL);
    case_data d = {0};
    fuse_value x = input(g, &d, "x", 4, S4, 3.0f), y;
    char what[32];
    switch (op) {
    case 0: y = fuse_sqrt(g, x); break;
    case 1: y = fuse_reciprocal(g, x); break;
    case 2: y = fuse_exp(g, x); break;
    case 3: y = fuse_log(g, x); break;
    case 4: y = fuse_neg(g, x); break;
    case 5: y = fuse_abs(g, x); break;
    case 6: y = fuse_floor(g, x); break;
    case 7: y = fuse_ceil(g, x); break;
    case 8: y = fuse_erf(g, x); break;
    case 9: y = fuse_tanh(g, x); break;
    case 10: y = fuse_sigmoid(g, x); break;
    case 11: y = fuse_softplus(g, x); break;
    case 12: y = fuse_hardswish(g, x); break;
    case 13: y = fuse_hardsigmoid(g, x, 0.2f, 0.5f); break;
    case 14: y = fuse_leaky_relu(g, x, 0.1f); break;
    case 15: y = fuse_elu(g, x, 1.3f); break;
    case 16: y = fuse_selu(g, x, 1.6732632f, 1.0507010f); break;
    case 17: y = fuse_gelu(g, x, 0); break;
    case 18: y = fuse_gelu(g, x, 1); break;
    default: y = fuse_clip(g, x, -0.5f, 0.75f); break;
    }
    finish(g, &d, y);
    snprintf(what, sizeof what, "unary op %d", op);
    check_all_isas(g, &d, 1, 1e-5, what);
    free_case(&d);
    fuse_graph_destroy(g);
  }
}

/* a run of unary and binary ops after a pool: the pool, then one chain step */
TEST(chain_after_pool_is_one_step) {
  fuse_graph *g = fuse_graph_create(NULL);
  case_data d = {0};
  const int64_t xs[4] = {2, 8, 9, 9}, cs[3] = {8, 1, 1}, ws[1] = {4};
  fuse_pool2d_attrs a;
  fuse_value x = input(g, &d, "x", 4, xs, 2.0f), v;
  memset(&a, 0, sizeof a);
  a.kernel[0] = a.kernel[1] = 2;
  a.strides[0] = a.strides[1] = 2;
  v = fuse_max_pool2d(g, x, &a); /* [2, 8, 4, 4] */
  v = fuse_sigmoid(g, v);
  v = fuse_mul(g, v, fuse_scalar(g, 2.0f));
  v = fuse_add(g, v, constant(g, 3, cs, -1, 1));      /* per channel */
  v = fuse_sub(g, constant(g, 1, ws, -1, 1), v);      /* along W, swapped */
  v = fuse_tanh(g, v);
  v = fuse_div(g, v, constant(g, 3, cs, 0.5f, 2.0f));
  finish(g, &d, v);
  check_all_isas(g, &d, 2, 1e-5, "pool + chain");
  CHECK_STR_CONTAINS(listing.s, "chain(sigmoid, mul, add, sub, tanh, div)");
  free_case(&d);
  fuse_graph_destroy(g);
}

/* a squeeze-excite block: x * hardsigmoid(pool(x)) with the gate broadcast per channel */
TEST(squeeze_excite_broadcast) {
  fuse_graph *g = fuse_graph_create(NULL);
  case_data d = {0};
  const int64_t xs[4] = {2, 16, 7, 7};
  fuse_value x = input(g, &d, "x", 4, xs, 2.0f), s, v;
  s = fuse_global_avg_pool2d(g, x);
  s = fuse_hardsigmoid(g, s, 1.0f / 6, 0.5f);
  v = fuse_mul(g, s, x);  /* the gate first: the chain walks x */
  v = fuse_relu(g, v);
  v = fuse_add(g, v, x);
  finish(g, &d, v);
  /* pool, hardsigmoid on [2, 16, 1, 1], one chain mul + relu + add */
  check_all_isas(g, &d, 3, 1e-5, "squeeze-excite");
  free_case(&d);
  fuse_graph_destroy(g);
}

/* an intermediate read twice is materialized; the chains end there */
TEST(multi_user_intermediate_is_kept) {
  fuse_graph *g = fuse_graph_create(NULL);
  case_data d = {0};
  fuse_value x = input(g, &d, "x", 4, S4, 1.0f), a, b, c, y;
  a = fuse_exp(g, fuse_neg(g, x));        /* chain 1: neg, exp -> a */
  b = fuse_mul(g, a, fuse_scalar(g, 3));  /* chain 2: mul, sqrt */
  b = fuse_sqrt(g, b);
  c = fuse_add(g, a, fuse_scalar(g, 1));  /* chain 3: add */
  y = fuse_sub(g, b, c);                  /* walks b: merged into chain 2 */
  y = fuse_mul(g, y, y);                  /* x * x of the chain's value */
  finish(g, &d, y);
  check_all_isas(g, &d, 3, 1e-5, "multi-user");
  free_case(&d);
  fuse_graph_destroy(g);
}

/* two inputs of the same shape, one with a broadcast row, and a chain that starts at a
   binary op of two inputs */
TEST(chain_of_inputs) {
  fuse_graph *g = fuse_graph_create(NULL);
  case_data d = {0};
  const int64_t rs[4] = {1, 3, 1, 7};
  fuse_value x = input(g, &d, "x", 4, S4, 1.0f), z = input(g, &d, "z", 4, S4, 1.0f);
  fuse_value r = input(g, &d, "r", 4, rs, 1.0f), v;
  v = fuse_add(g, x, z);
  v = fuse_maximum(g, v, r);
  v = fuse_gelu(g, v, 0);
  v = fuse_minimum(g, r, v);
  v = fuse_prelu(g, v, fuse_scalar(g, 0.25f));
  v = fuse_pow(g, fuse_abs(g, v), fuse_scalar(g, 1.7f)); /* libm powf lane by lane */
  v = fuse_pow(g, v, fuse_scalar(g, 2.0f));
  finish(g, &d, v);
  check_all_isas(g, &d, 1, 1e-5, "inputs");
  free_case(&d);
  fuse_graph_destroy(g);
}

/* after an NHWC conv (the kernel table's): the chain runs on the NHWC bytes */
TEST(chain_after_nhwc_conv) {
  fuse_graph *g = fuse_graph_create(NULL);
  case_data d = {0};
  const int64_t xs[4] = {1, 8, 10, 10}, ws[4] = {16, 8, 3, 3}, cs[3] = {16, 1, 1};
  fuse_value x = input(g, &d, "x", 4, xs, 1.0f), v;
  v = fuse_conv2d(g, x, constant(g, 4, ws, -0.3f, 0.3f), NULL);
  v = fuse_sqrt(g, fuse_abs(g, v));
  v = fuse_mul(g, v, constant(g, 3, cs, -2, 2));
  v = fuse_prelu(g, v, constant(g, 3, cs, 0, 0.5f));
  v = fuse_softplus(g, v);
  finish(g, &d, v);
  check_all_isas(g, &d, 0, 1e-5, "nhwc");
  free_case(&d);
  fuse_graph_destroy(g);
}

/* random chains of unary and binary ops with broadcast operands */
TEST(random_chains) {
  int trial;
  for (trial = 0; trial < 60; trial++) {
    fuse_graph *g = fuse_graph_create(NULL);
    case_data d = {0};
    const int64_t xs[4] = {2, 1 + irand(6), 1 + irand(9), 1 + irand(40)};
    int len = 1 + irand(8), k, ops = 0;
    fuse_value x = input(g, &d, "x", 4, xs, 2.0f), z = FUSE_NONE, v = x;
    char what[48];
    if (irand(2)) z = input(g, &d, "z", 4, xs, 2.0f);
    for (k = 0; k < len; k++) {
      int64_t bs[4] = {1, xs[1], 1, 1};
      fuse_value o;
      int shape = irand(4);
      if (shape == 1) bs[1] = 1, bs[3] = xs[3];
      if (shape == 2) bs[0] = 2, bs[2] = xs[2];
      o = shape == 3 ? (z != FUSE_NONE ? z : fuse_scalar(g, 0.5f + urand() * 0.25f))
                     : constant(g, 4, bs, 0.5f, 1.5f);
      switch (irand(12)) {
      case 0: v = fuse_add(g, v, o); break;
      case 1: v = fuse_sub(g, o, v); break;
      case 2: v = fuse_mul(g, v, o); break;
      case 3: v = fuse_div(g, v, fuse_add(g, fuse_abs(g, o), fuse_scalar(g, 0.5f))); ops += 2; break;
      case 4: v = fuse_maximum(g, o, v); break;
      case 5: v = fuse_tanh(g, v); break;
      case 6: v = fuse_sigmoid(g, v); break;
      case 7: v = fuse_sqrt(g, fuse_abs(g, v)); ops++; break;
      case 8: v = fuse_hardswish(g, v); break;
      case 9: v = fuse_exp(g, fuse_clip(g, v, -5, 5)); ops++; break;
      case 10: v = fuse_leaky_relu(g, v, 0.05f); break;
      default: v = fuse_erf(g, v); break;
      }
      ops++;
    }
    finish(g, &d, v);
    snprintf(what, sizeof what, "random chain %d (%d ops)", trial, ops);
    check_all_isas(g, &d, 0, 1e-5, what);
    free_case(&d);
    fuse_graph_destroy(g);
  }
}

/* got against want: the same NaN / infinities where want has them; elsewhere normwise */
static double special_error(const float *got, const float *want, size_t n) {
  double max_diff = 0, max_ref = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    if (want[i] != want[i] || got[i] != got[i] || isinf(want[i]) || isinf(got[i])) {
      int same = (want[i] != want[i] && got[i] != got[i]) || want[i] == got[i];
      if (!same) return INFINITY;
      continue;
    }
    if (fabs((double)got[i] - want[i]) > max_diff) max_diff = fabs((double)got[i] - want[i]);
    if (fabs((double)want[i]) > max_ref) max_ref = fabs((double)want[i]);
  }
  return max_diff == 0 ? 0 : max_diff / (max_ref > 1e-30 ? max_ref : 1e-30);
}

/* softmax, log-softmax, the norms and the reductions along rows of 1, 7, 17, 1000 with a
   NaN row, +inf and -inf rows, a row of -inf and a row of large values */
TEST(row_kernels_awkward_shapes) {
  static const int64_t lens[4] = {1, 7, 17, 1000};
  int li, op, isa;
  for (li = 0; li < 4; li++)
    for (op = 0; op < 12; op++) {
      fuse_graph *g = fuse_graph_create(NULL);
      case_data d = {0};
      int64_t L = lens[li], xs[3] = {2, 4, L}, ls[1] = {L}, cs[1] = {4};
      int axis = 2, ax01[2] = {1, 2}, k;
      fuse_value x = input(g, &d, "x", 3, xs, 3.0f), y;
      float *xd = d.in[0], *want;
      size_t ny;
      for (k = 0; k < L; k++) {
        if (k == L / 2) xd[1 * L + k] = NAN;      /* row 1 */
        if (k == L / 3) xd[2 * L + k] = INFINITY; /* row 2 */
        if (k == 0) xd[3 * L + k] = -INFINITY;    /* row 3 */
        xd[4 * L + k] = -INFINITY;                /* row 4: all -inf */
        xd[5 * L + k] = 1000.0f + (float)k;       /* row 5 */
      }
      switch (op) {
      case 0: y = fuse_softmax(g, x, 2); break;
      case 1: y = fuse_log_softmax(g, x, 2); break;
      case 2: y = fuse_layer_norm(g, x, constant(g, 1, ls, -2, 2), constant(g, 1, ls, -1, 1), 2, 1e-5f); break;
      case 3: y = fuse_instance_norm(g, x, constant(g, 1, cs, -2, 2), constant(g, 1, cs, -1, 1), 1e-5f); break;
      case 4: y = fuse_group_norm(g, x, constant(g, 1, cs, -2, 2), constant(g, 1, cs, -1, 1), 2, 1e-5f); break;
      case 5: y = fuse_reduce(g, x, FUSE_REDUCE_MEAN, 1, &axis, 1); break;
      case 6: y = fuse_reduce(g, x, FUSE_REDUCE_SUM, 1, &axis, 0); break;
      case 7: y = fuse_reduce(g, x, FUSE_REDUCE_MAX, 1, &axis, 1); break;
      case 8: y = fuse_reduce(g, x, FUSE_REDUCE_MIN, 1, &axis, 1); break;
      case 9: y = fuse_reduce(g, x, FUSE_REDUCE_SUM_SQUARE, 1, &axis, 1); break;
      case 10: y = fuse_reduce(g, x, FUSE_REDUCE_L2, 2, ax01, 1); break;
      default: y = fuse_reduce(g, x, FUSE_REDUCE_MEAN, 1, ax01, 1); break; /* strided */
      }
      finish(g, &d, y);
      ny = numel_of(g, y);
      want = run(g, &d, FUSE_ISA_SCALAR, 1, NULL);
      CHECK(want != NULL);
      for (isa = FUSE_ISA_SCALAR; want && isa <= FUSE_ISA_NEON; isa++) {
        float *got;
        double e;
        if (!isa_runs(isa)) continue;
        got = run(g, &d, (fuse_isa)isa, 0, NULL);
        CHECK(got != NULL);
        if (!got) continue;
        e = special_error(got, want, ny);
        if (!(e <= 1e-5)) {
          fprintf(stderr, "    op %d, length %d, isa %d: error %.3g\n", op, (int)L, isa, e);
          CHECK(e <= 1e-5);
        }
        free(got);
      }
      free(want);
      free_case(&d);
      fuse_graph_destroy(g);
    }
}

/* reduce_mean -> sub -> pow 2 (or mul d d) -> reduce_mean -> add eps -> sqrt -> div -> mul
   gamma -> add beta, as PyTorch <= 1.13 exports LayerNorm: one layer_norm after fuse_optimize */
TEST(decomposed_layer_norm_is_one_op) {
  int variant;
  for (variant = 0; variant < 3; variant++) {
    fuse_graph *g = fuse_graph_create(NULL);
    case_data d = {0};
    const int64_t xs[3] = {2, 5, 17}, gs[1] = {17}, bs[3] = {1, 1, 17};
    int axis = -1, isa, steps;
    fuse_value x = input(g, &d, "x", 3, xs, 3.0f), m, dd, q, y;
    float *want, *got;
    size_t ny;
    m = fuse_reduce(g, x, FUSE_REDUCE_MEAN, 1, &axis, 1);
    dd = fuse_sub(g, x, m);
    q = variant == 1 ? fuse_mul(g, dd, dd) : fuse_pow(g, dd, fuse_scalar(g, 2.0f));
    q = fuse_reduce(g, q, FUSE_REDUCE_MEAN, 1, &axis, 1);
    q = fuse_sqrt(g, fuse_add(g, q, fuse_scalar(g, 1e-5f)));
    y = fuse_div(g, dd, q);
    if (variant < 2) { /* variant 2: no affine */
      y = fuse_mul(g, constant(g, 1, gs, -2, 2), y);
      y = fuse_add(g, y, constant(g, 3, bs, -1, 1));
    }
    finish(g, &d, fuse_relu(g, y));
    ny = numel_of(g, d.y);
    want = run(g, &d, FUSE_ISA_SCALAR, 1, &steps);
    CHECK_EQ_INT(steps, variant < 2 ? 10 : 8);
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    free(run(g, &d, FUSE_ISA_SCALAR, 1, &steps));
    CHECK_EQ_INT(steps, 2); /* layer_norm, relu */
    CHECK_STR_CONTAINS(listing.s, "layer_norm");
    for (isa = FUSE_ISA_SCALAR; want && isa <= FUSE_ISA_NEON; isa++) {
      if (!isa_runs(isa)) continue;
      got = run(g, &d, (fuse_isa)isa, 0, NULL);
      CHECK(got != NULL);
      if (got) CHECK_NEAR_ARRAY(got, want, ny, 1e-5);
      free(got);
    }
    free(want);
    free_case(&d);
    fuse_graph_destroy(g);
  }
}

/* not a layer norm: the centered value is read by a third op (kept as it is) */
TEST(layer_norm_lookalike_is_kept) {
  fuse_graph *g = fuse_graph_create(NULL);
  case_data d = {0};
  const int64_t xs[2] = {4, 9};
  int axis = 1, steps;
  fuse_value x = input(g, &d, "x", 2, xs, 1.0f), m, dd, q, y;
  m = fuse_reduce(g, x, FUSE_REDUCE_MEAN, 1, &axis, 1);
  dd = fuse_sub(g, x, m);
  q = fuse_reduce(g, fuse_mul(g, dd, dd), FUSE_REDUCE_MEAN, 1, &axis, 1);
  y = fuse_div(g, dd, fuse_sqrt(g, fuse_add(g, q, fuse_scalar(g, 1e-5f))));
  y = fuse_add(g, y, dd);
  finish(g, &d, y);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  free(run(g, &d, FUSE_ISA_SCALAR, 1, &steps));
  CHECK(strstr(listing.s, "layer_norm") == NULL);
  check_all_isas(g, &d, 0, 1e-5, "lookalike");
  free_case(&d);
  fuse_graph_destroy(g);
}

/* the global average pool on the plan's ISA: column sums over the pixels of an NHWC image
   (after a conv: channels in blocks of 128 and a masked last vector), rows on NCHW; awkward
   channel counts and pixel counts past one 128-pixel block, against the reference kernels */
TEST(global_avg_pool_awkward_shapes) {
  static const int64_t shapes[][3] = {{1, 1, 1},  {5, 3, 7},    {17, 12, 12}, {33, 1, 130},
                                      {130, 9, 9}, {300, 4, 5}, {16, 40, 41}};
  int i, nhwc;
  for (i = 0; i < (int)(sizeof shapes / sizeof shapes[0]); i++)
    for (nhwc = 0; nhwc < 2; nhwc++) {
      fuse_graph *g = fuse_graph_create(NULL);
      case_data d = {0};
      const int64_t C = shapes[i][0], xs[4] = {2, nhwc ? 8 : C, shapes[i][1], shapes[i][2]};
      const int64_t ws[4] = {C, 8, 1, 1};
      fuse_value v = input(g, &d, "x", 4, xs, 1.0f);
      char what[64];
      if (nhwc) v = fuse_conv2d(g, v, constant(g, 4, ws, -0.3f, 0.3f), NULL);
      finish(g, &d, fuse_global_avg_pool2d(g, v));
      snprintf(what, sizeof what, "gap C %d, %dx%d, %s", (int)C, (int)xs[2], (int)xs[3],
               nhwc ? "after a conv" : "input");
      check_all_isas(g, &d, 0, 1e-6, what);
      free_case(&d);
      fuse_graph_destroy(g);
    }
}

int main(void) {
  RUN(unary_ops_vectorized);
  RUN(chain_after_pool_is_one_step);
  RUN(squeeze_excite_broadcast);
  RUN(multi_user_intermediate_is_kept);
  RUN(chain_of_inputs);
  RUN(chain_after_nhwc_conv);
  RUN(random_chains);
  RUN(row_kernels_awkward_shapes);
  RUN(decomposed_layer_norm_is_one_op);
  RUN(layer_norm_lookalike_is_kept);
  RUN(global_avg_pool_awkward_shapes);
  return runner_finish("chains");
}
