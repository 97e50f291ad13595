/* test_epilogue.c - the epilogue analyzer, batch-norm folding, fuse_optimize and fused runs.

   1. fuse_analyze_epilogue on graphs built with the API, three ways each: no composites, inside
      the composites fuse_ops_by_pattern makes with the default rules, and after fuse_optimize
      (which also folds reshapes of constants). Bias in every form, residuals, clamps from relu,
      clip and maximum / minimum with a scalar constant, the five clipping orders of seed 002,
      clamp composition, post-op order; refusals with a reason; bad arguments.
   2. Once versus per step: an epilogue runs once on the finished sum, not on every partial sum
      (TVM's fuse_reduction_epilogue clamps each step, seed 002 - a bug we do not copy).
   3. fuse_fold_batch_norm: when it folds (numbers unchanged) and when it must not.
   4. fuse_optimize "fuse" / "dnnl": one op per conv / matmul chain, composite names, numbers.
   5. Fused execution: fuse_plan_step_count / fuse_plan_write (see TEST_PLAN_WRITE below).

   Numbers: every optimized graph is compared with the same graph before optimization, which
   runs op by op. Tolerance TOL = 1e-5, normwise relative error (runner.h:
   max|got - want| / max|want|). Set SHOW_WHY=1 in the environment to print every refusal's
   reason. Folding a batch norm reassociates (W * s) . x + b versus
   (W . x - mean) * s + bias, which stays well inside 1e-5 for these sizes.

   Build: cc -std=c99 -O1 -g -fsanitize=address,undefined -Wall -Wextra -Wpedantic -Werror -I. \
              tests/test_epilogue.c -o /tmp/tepi -lm -lpthread */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUSE_IMPLEMENTATION
#include "../fuse.h"
#include "runner.h"

/* Part 5 needs fuse_plan_step_count / fuse_plan_write, which the lead added to fuse_compile
   while this file was written (spec "COMING"). They are in fuse.h now, so the checks are on.
   Set this to 0 to build this file against a fuse.h that does not have them yet. */
#define TEST_PLAN_WRITE 1

#define TOL 1e-5

/* The reference plan (reference_kernels): one step per op or fused chain. Plans on the kernel
   table (SIMD or scalar twins) add layout conversions around the convs (test_kernels counts
   their compute steps). */
static const fuse_compile_options *scalar_plan(void) {
  static fuse_compile_options o; /* zero but for these */
  o.isa = FUSE_ISA_SCALAR;
  o.reference_kernels = 1;
  return &o;
}

static const float INF = HUGE_VALF;

/* ------------------------------------------------------------------ helpers -- */

static uint32_t rng_state = 1;
static float frand(void) { /* uniform in [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) / 8388608.0 - 1.0);
}
static size_t numel(int rank, const int64_t *s) {
  size_t n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= (size_t)s[i];
  return n;
}
static float *frandom(size_t n, uint32_t seed) {
  float *p = (float *)malloc((n ? n : 1) * sizeof(float));
  size_t i;
  rng_state = seed * 2654435761u + 7u;
  for (i = 0; i < n; i++) p[i] = frand();
  return p;
}

static fuse_value inp(fuse_graph *g, const char *name, int rank, const int64_t *s) {
  return fuse_input(g, name, rank, s);
}
/* A constant with random values in [-1, 1) (seeded, so two builds of a graph agree). */
static fuse_value cst(fuse_graph *g, int rank, const int64_t *s, uint32_t seed) {
  float *d = frandom(numel(rank, s), seed);
  fuse_value v = fuse_constant(g, NULL, rank, s, d);
  free(d);
  return v;
}
static fuse_value cst_vals(fuse_graph *g, int rank, const int64_t *s, const float *d) {
  return fuse_constant(g, NULL, rank, s, d);
}

static const fuse_conv2d_attrs PAD1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};

/* conv2d(x [1, C, H, W], w const [K, C, 3, 3], padding 1) -> [1, K, H, W] */
static fuse_value conv_xw(fuse_graph *g, int C, int K, int H, int W, fuse_value *x_out) {
  int64_t xs[4], ws[4];
  fuse_value x, w;
  xs[0] = 1, xs[1] = C, xs[2] = H, xs[3] = W;
  ws[0] = K, ws[1] = C, ws[2] = 3, ws[3] = 3;
  x = inp(g, "x", 4, xs);
  w = cst(g, 4, ws, 11);
  if (x_out) *x_out = x;
  return fuse_conv2d(g, x, w, &PAD1);
}

/* matmul(a [M, Kd], W const [Kd, N]) -> [M, N] */
static fuse_value mm_aw(fuse_graph *g, int M, int Kd, int N) {
  int64_t as[2], ws[2];
  as[0] = M, as[1] = Kd;
  ws[0] = Kd, ws[1] = N;
  return fuse_matmul(g, inp(g, "a", 2, as), cst(g, 2, ws, 12));
}

/* A growable string that fuse_graph_write / fuse_plan_write append to. */
typedef struct sbuf {
  char s[32768];
  size_t len;
} sbuf;
static void sbuf_write(void *user, const char *text, size_t n) {
  sbuf *b = (sbuf *)user;
  if (n > sizeof b->s - 1 - b->len) n = sizeof b->s - 1 - b->len;
  memcpy(b->s + b->len, text, n);
  b->len += n;
  b->s[b->len] = 0;
}
static const char *graph_text(const fuse_graph *g, sbuf *b) {
  b->len = 0;
  b->s[0] = 0;
  fuse_graph_write(g, sbuf_write, b);
  return b->s;
}
static int count_substr(const char *h, const char *needle) {
  int n = 0;
  size_t k = strlen(needle);
  while ((h = strstr(h, needle)) != NULL) n++, h += k;
  return n;
}

/* Outputs of one run: compiled, inputs made from the input index (or given), run once. */
typedef struct outs {
  int n;
  float *d[8];
  size_t len[8];
} outs;

static void outs_free(outs *o) {
  int i;
  for (i = 0; i < o->n; i++) free(o->d[i]);
  o->n = 0;
}

/* 1 = ran. `given` may be NULL: input i gets random values seeded 100 + i. */
static int eval(const fuse_graph *g, const float *const *given, outs *o) {
  fuse_plan *p = NULL;
  const float *ins[8];
  float *made[8], *outp[8];
  int ni = fuse_graph_input_count(g), no = fuse_graph_output_count(g), i, ok;
  fuse_result r;
  char err[256];
  fuse_compile_options opt;
  memset(o, 0, sizeof *o);
  memset(&opt, 0, sizeof opt);
  opt.error = err;
  opt.error_size = sizeof err;
  err[0] = 0;
  if (ni > 8 || no > 8) return 0;
  r = fuse_compile(g, &opt, &p);
  if (r != FUSE_OK) {
    fprintf(stderr, "    fuse_compile: %s: %s (graph: %s)\n", fuse_result_string(r), err,
            fuse_graph_error(g));
    return 0;
  }
  for (i = 0; i < ni; i++) {
    fuse_value v = fuse_graph_input(g, i);
    made[i] = given ? NULL : frandom(numel(fuse_value_rank(g, v), fuse_value_shape(g, v)), 100u + (uint32_t)i);
    ins[i] = given ? given[i] : made[i];
  }
  for (i = 0; i < no; i++) {
    fuse_value v = fuse_graph_output(g, i);
    size_t k, n = numel(fuse_value_rank(g, v), fuse_value_shape(g, v));
    o->d[i] = (float *)malloc(n * sizeof(float));
    for (k = 0; k < n; k++) o->d[i][k] = NAN; /* an unwritten output shows */
    o->len[i] = n;
    outp[i] = o->d[i];
  }
  o->n = no;
  r = fuse_run(p, ins, outp, NULL);
  ok = r == FUSE_OK;
  if (!ok) fprintf(stderr, "    fuse_run: %s\n", fuse_result_string(r));
  for (i = 0; i < ni; i++) free(made[i]);
  fuse_plan_destroy(p);
  return ok;
}

/* Both runs have the same outputs, each within TOL. */
static int outs_match(const outs *got, const outs *want, const char *what) {
  int i, ok = got->n == want->n;
  for (i = 0; ok && i < got->n; i++) {
    double e;
    if (got->len[i] != want->len[i]) {
      ok = 0;
      break;
    }
    e = runner_rel_error(got->d[i], want->d[i], got->len[i]);
    if (!(e <= TOL)) {
      fprintf(stderr, "    %s: output %d relative error %.3g > %.3g\n", what, i, e, TOL);
      ok = 0;
    }
  }
  return ok;
}

/* ----------------------------------------------------------- epilogue checks -- */

static fuse_post_op CL(float lo, float hi) {
  fuse_post_op p;
  memset(&p, 0, sizeof p);
  p.kind = FUSE_POST_CLAMP;
  p.lo = lo;
  p.hi = hi;
  p.tensor = FUSE_NONE;
  return p;
}
static fuse_post_op AD(fuse_value t) {
  fuse_post_op p;
  memset(&p, 0, sizeof p);
  p.kind = FUSE_POST_ADD;
  p.tensor = t;
  return p;
}

static void epi_print(const fuse_epilogue *e) {
  int i;
  fprintf(stderr, "      got: reduction %d, bias %d, %d post-ops:", (int)e->reduction, (int)e->bias,
          e->num_post);
  for (i = 0; i < e->num_post && i < FUSE_MAX_POST_OPS; i++) {
    if (e->post[i].kind == FUSE_POST_ADD) fprintf(stderr, " add(%d)", (int)e->post[i].tensor);
    else fprintf(stderr, " clamp[%g, %g]", (double)e->post[i].lo, (double)e->post[i].hi);
  }
  fprintf(stderr, "; why \"%s\"\n", e->why);
}

/* The wanted epilogue of one graph. bias_opt: the bias after fuse_optimize (a reshape of a
   constant is folded into a constant that keeps the reshape's id). name: the composite the
   root lands in after fuse_optimize, without the "<codegen>." prefix (NULL: not checked). */
typedef struct want {
  fuse_value root, red, bias, bias_opt;
  int n;
  fuse_post_op post[FUSE_MAX_POST_OPS];
  const char *name;
  int extra_ops; /* ops outside the chain (they stay ops of their own after fuse_optimize) */
} want;

static int epi_equal(const fuse_epilogue *e, fuse_value red, fuse_value bias, int n,
                     const fuse_post_op *post) {
  int i;
  if (e->reduction != red || e->bias != bias || e->num_post != n) return 0;
  for (i = 0; i < n; i++) {
    if (e->post[i].kind != post[i].kind) return 0;
    if (post[i].kind == FUSE_POST_ADD && e->post[i].tensor != post[i].tensor) return 0;
    if (post[i].kind == FUSE_POST_CLAMP && (e->post[i].lo != post[i].lo || e->post[i].hi != post[i].hi))
      return 0;
  }
  return 1;
}

/* fuse_analyze_epilogue(root) gives the wanted epilogue. */
static int analyze_is(const char *what, const fuse_graph *g, const want *w, fuse_value bias) {
  fuse_epilogue e;
  fuse_result r = fuse_analyze_epilogue(g, w->root, &e);
  if (r != FUSE_OK || !epi_equal(&e, w->red, bias, w->n, w->post)) {
    fprintf(stderr, "    %s: fuse_analyze_epilogue(%d) = %s, want reduction %d bias %d, %d post-ops\n",
            what, (int)w->root, fuse_result_string(r), (int)w->red, (int)bias, w->n);
    epi_print(&e);
    return 0;
  }
  return 1;
}

/* The root is in a composite whose fuse_composite_get reports the wanted epilogue. */
static int composite_is(const char *what, const fuse_graph *g, const want *w, fuse_value bias,
                        const char *name) {
  fuse_composite_info info;
  int c = fuse_value_composite(g, w->root);
  if (c < 0) {
    fprintf(stderr, "    %s: root %d is in no composite\n", what, (int)w->root);
    return 0;
  }
  if (fuse_composite_get(g, c, &info) != FUSE_OK) return 0;
  if (info.root != w->root || !info.has_epilogue ||
      !epi_equal(&info.epilogue, w->red, bias, w->n, w->post)) {
    fprintf(stderr, "    %s: composite %d (%s) root %d has_epilogue %d\n", what, c,
            info.name ? info.name : "?", (int)info.root, info.has_epilogue);
    epi_print(&info.epilogue);
    return 0;
  }
  if (name && (!info.name || strcmp(info.name, name) != 0)) {
    fprintf(stderr, "    %s: composite name \"%s\", want \"%s\"\n", what, info.name ? info.name : "(null)",
            name);
    return 0;
  }
  if (fuse_value_composite(g, w->red) != c) {
    fprintf(stderr, "    %s: the reduction %d is not in the root's composite\n", what, (int)w->red);
    return 0;
  }
  return 1;
}

typedef void (*build_fn)(fuse_graph *g, int variant, want *w);

/* Builds the graph four times: (1) plain, analyzed; reference numbers. (2) fuse_ops_by_pattern
   with the default "fuse" rules: the root's composite has the epilogue; numbers. (3), (4)
   fuse_optimize "fuse" / "dnnl": one op when w->name is set, that composite, the epilogue
   (with bias_opt), numbers. */
static int epilogue_case(const char *what, build_fn build, int variant) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  const fuse_rule *rules;
  fuse_graph *g;
  want w;
  outs ref, got;
  int ok = 1, mode, n_rules = fuse_rules_default("fuse", &rules);
  char label[160];

  g = fuse_graph_create(NULL);
  memset(&w, 0, sizeof w);
  build(g, variant, &w);
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "    %s/%d: building failed: %s\n", what, variant, fuse_graph_error(g));
    fuse_graph_destroy(g);
    return 0;
  }
  sprintf(label, "%s/%d plain", what, variant);
  ok &= analyze_is(label, g, &w, w.bias);
  ok &= eval(g, NULL, &ref);
  fuse_graph_destroy(g);
  if (!ok) return outs_free(&ref), 0;

  for (mode = 0; mode < 3; mode++) {
    g = fuse_graph_create(NULL);
    build(g, variant, &w);
    if (mode == 0) {
      sprintf(label, "%s/%d fuse_ops_by_pattern", what, variant);
      ok &= fuse_ops_by_pattern(g, rules, n_rules, NULL) == FUSE_OK;
      if (w.name) { /* the default rules hold this chain */
        ok &= composite_is(label, g, &w, w.bias, NULL);
        ok &= analyze_is(label, g, &w, w.bias);
      }
    } else {
      char name[128];
      int ops_before = fuse_graph_op_count(g);
      sprintf(label, "%s/%d fuse_optimize %s", what, variant, cgs[mode - 1]);
      ok &= fuse_optimize(g, cgs[mode - 1]) == FUSE_OK;
      if (w.name) {
        sprintf(name, "%s.%s", cgs[mode - 1], w.name);
        ok &= composite_is(label, g, &w, w.bias_opt, name);
        ok &= analyze_is(label, g, &w, w.bias_opt);
        if (fuse_graph_op_count(g) != 1 + w.extra_ops) {
          fprintf(stderr, "    %s: %d ops before, %d after; want %d\n", label, ops_before,
                  fuse_graph_op_count(g), 1 + w.extra_ops);
          ok = 0;
        }
      }
    }
    if (!eval(g, NULL, &got)) ok = 0;
    else ok &= outs_match(&got, &ref, label);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
  outs_free(&ref);
  if (!ok) fprintf(stderr, "    ^ %s/%d\n", what, variant);
  return ok;
}

/* The analysis of the plain graph fails with FUSE_ERROR_UNSUPPORTED and a reason that contains
   `keyword`; the value `not_bias` (FUSE_NONE: none) is never reported as a bias, neither by the
   analysis nor by any composite fuse_optimize makes; the optimized graph gives the same numbers;
   the fused plan (when available) has no "+ bias" step when not_bias is set. */
static int refused_case(const char *what, build_fn build, int variant, const char *keyword,
                        fuse_value not_bias) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_epilogue e;
  fuse_result r;
  want w;
  outs ref, got;
  int ok = 1, c, mode;
  memset(&w, 0, sizeof w);
  build(g, variant, &w);
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "    %s/%d: building failed: %s\n", what, variant, fuse_graph_error(g));
    fuse_graph_destroy(g);
    return 0;
  }
  r = fuse_analyze_epilogue(g, w.root, &e);
  if (getenv("SHOW_WHY")) fprintf(stderr, "%s/%d: %s\n", what, variant, e.why);
  if (r != FUSE_ERROR_UNSUPPORTED || !strstr(e.why, keyword) ||
      (not_bias != FUSE_NONE && e.bias == not_bias)) {
    fprintf(stderr, "    %s/%d: analysis = %s, want FUSE_ERROR_UNSUPPORTED with \"%s\" in why\n", what,
            variant, fuse_result_string(r), keyword);
    epi_print(&e);
    ok = 0;
  }
  ok &= eval(g, NULL, &ref);
  fuse_graph_destroy(g);
  for (mode = 0; mode < 2 && ok; mode++) {
    g = fuse_graph_create(NULL);
    build(g, variant, &w);
    ok &= fuse_optimize(g, mode ? "dnnl" : "fuse") == FUSE_OK;
    for (c = 0; c < fuse_composite_count(g); c++) {
      fuse_composite_info info;
      fuse_composite_get(g, c, &info);
      if (not_bias != FUSE_NONE && info.has_epilogue && info.epilogue.bias == not_bias) {
        fprintf(stderr, "    %s/%d: composite %s reports %d as a bias\n", what, variant, info.name,
                (int)not_bias);
        ok = 0;
      }
    }
#if TEST_PLAN_WRITE
    if (not_bias != FUSE_NONE) {
      fuse_plan *p = NULL;
      sbuf b;
      b.len = 0;
      b.s[0] = 0;
      if (fuse_compile(g, NULL, &p) == FUSE_OK) {
        fuse_plan_write(p, sbuf_write, &b);
        if (strstr(b.s, "bias")) {
          fprintf(stderr, "    %s/%d: the plan fuses a bias:\n%s", what, variant, b.s);
          ok = 0;
        }
        fuse_plan_destroy(p);
      }
    }
#endif
    if (!eval(g, NULL, &got)) ok = 0;
    else ok &= outs_match(&got, &ref, what);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
  outs_free(&ref);
  if (!ok) fprintf(stderr, "    ^ %s/%d\n", what, variant);
  return ok;
}

/* ================================================================ 1. analyzer == */

enum { CK = 4, CC = 3, CH = 5, CW = 6 }; /* conv: x [1, 3, 5, 6], w [4, 3, 3, 3] -> [1, 4, 5, 6] */

/* conv2d + bias, variant = form * 2 + side (side 1: bias on the left of add).
   forms: 0 const [K,1,1]; 1 const [1,K,1,1]; 2 reshape(const [K], [1,K,1,1]);
          3 reshape(const [K], [K,1,1]); 4 reshape(input [K], [1,K,1,1]); 5 input [1,K,1,1];
          6 reshape(relu(input [K]), [1,K,1,1]) (the bias is an op's result) */
static void build_conv_bias(fuse_graph *g, int variant, want *w) {
  int form = variant / 2, left = variant % 2;
  int64_t k11[3] = {CK, 1, 1}, k1111[4] = {1, CK, 1, 1}, k[1] = {CK};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b, src = FUSE_NONE;
  switch (form) {
  case 0: b = cst(g, 3, k11, 21); break;
  case 1: b = cst(g, 4, k1111, 21); break;
  case 2: src = cst(g, 1, k, 21); b = fuse_reshape(g, src, 4, k1111); break;
  case 3: src = cst(g, 1, k, 21); b = fuse_reshape(g, src, 3, k11); break;
  case 4: src = inp(g, "b", 1, k); b = fuse_reshape(g, src, 4, k1111); break;
  case 5: b = inp(g, "b", 4, k1111); break;
  default: src = fuse_relu(g, inp(g, "b", 1, k)); b = fuse_reshape(g, src, 4, k1111); break;
  }
  w->root = left ? fuse_add(g, b, conv) : fuse_add(g, conv, b);
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = src != FUSE_NONE ? src : b;
  /* after fuse_optimize a reshape of a constant is itself a constant [1,K,1,1] / [K,1,1] */
  w->bias_opt = (form == 2 || form == 3) ? b : w->bias;
  w->n = 0;
  w->name = "conv2d_bias";
  w->extra_ops = form == 6; /* the relu that makes the bias */
}

TEST(conv2d_bias_every_form_either_side) {
  int v;
  for (v = 0; v < 14; v++) CHECK(epilogue_case("conv2d_bias", build_conv_bias, v));
}

/* matmul + bias: variant = form * 2 + side; forms: 0 const [N]; 1 const [1,N]; 2 input [N] */
static void build_mm_bias(fuse_graph *g, int variant, want *w) {
  int form = variant / 2, left = variant % 2;
  int64_t n[1] = {5}, n1[2] = {1, 5};
  fuse_value mm = mm_aw(g, 3, 7, 5), b;
  b = form == 0 ? cst(g, 1, n, 22) : form == 1 ? cst(g, 2, n1, 22) : inp(g, "b", 1, n);
  w->root = left ? fuse_add(g, b, mm) : fuse_add(g, mm, b);
  fuse_output(g, w->root);
  w->red = mm;
  w->bias = w->bias_opt = b;
  w->n = 0;
  w->name = "matmul_bias";
}

TEST(matmul_bias_n_and_1n_either_side) {
  int v;
  for (v = 0; v < 6; v++) CHECK(epilogue_case("matmul_bias", build_mm_bias, v));
}

/* Batched matmul [2, 3, 7] x [7, 5] -> [2, 3, 5] with a [5] bias (numpy broadcast). */
static void build_bmm_bias(fuse_graph *g, int variant, want *w) {
  int64_t as[3] = {2, 3, 7}, ws[2] = {7, 5}, n[1] = {5};
  fuse_value a = inp(g, "a", 3, as), mm = fuse_matmul(g, a, cst(g, 2, ws, 12));
  fuse_value b = cst(g, 1, n, 23);
  w->root = fuse_relu(g, variant ? fuse_add(g, b, mm) : fuse_add(g, mm, b));
  fuse_output(g, w->root);
  w->red = mm;
  w->bias = w->bias_opt = b;
  w->n = 1;
  w->post[0] = CL(0, INF);
  w->name = "matmul_bias_relu";
}

TEST(batched_matmul_bias_relu) {
  CHECK(epilogue_case("bmm_bias_relu", build_bmm_bias, 0));
  CHECK(epilogue_case("bmm_bias_relu", build_bmm_bias, 1));
}

/* Residual on either side: variant 0 add(conv, r), 1 add(r, conv); 2, 3 the same for matmul;
   4, 5: conv with a residual that is a reshape (a view) of a flat input. */
static void build_residual(fuse_graph *g, int variant, want *w) {
  int64_t ys[4] = {1, CK, CH, CW}, ms[2] = {3, 5}, flat[1] = {CK * CH * CW};
  fuse_value red, r;
  if (variant < 2) {
    red = conv_xw(g, CC, CK, CH, CW, NULL);
    r = inp(g, "r", 4, ys);
  } else if (variant >= 4) {
    red = conv_xw(g, CC, CK, CH, CW, NULL);
    r = fuse_reshape(g, inp(g, "r", 1, flat), 4, ys);
  } else {
    red = mm_aw(g, 3, 7, 5);
    r = inp(g, "r", 2, ms);
  }
  w->root = variant % 2 ? fuse_add(g, r, red) : fuse_add(g, red, r);
  fuse_output(g, w->root);
  w->red = red;
  w->bias = w->bias_opt = FUSE_NONE;
  w->n = 1;
  w->post[0] = AD(r);
  w->name = variant < 2 || variant >= 4 ? "conv2d_add" : "matmul_add";
  w->extra_ops = variant >= 4; /* the reshape of the residual (a view) */
}

TEST(residual_add_either_side) {
  int v;
  for (v = 0; v < 6; v++) CHECK(epilogue_case("residual", build_residual, v));
}

/* relu(add(add(conv, reshape(b)), r)), the operands of both adds in every order; variant 4..7:
   the same with a clip [-0.5, 0.75] (relu6-like) instead of relu. */
static void build_bias_res_clamp(fuse_graph *g, int variant, want *w) {
  int64_t ys[4] = {1, CK, CH, CW}, k[1] = {CK}, k1111[4] = {1, CK, 1, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), r = inp(g, "r", 4, ys);
  fuse_value src = cst(g, 1, k, 24), b = fuse_reshape(g, src, 4, k1111), biased, sum;
  biased = variant & 1 ? fuse_add(g, b, conv) : fuse_add(g, conv, b);
  sum = variant & 2 ? fuse_add(g, r, biased) : fuse_add(g, biased, r);
  w->root = variant & 4 ? fuse_clip(g, sum, -0.5f, 0.75f) : fuse_relu(g, sum);
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = src;
  w->bias_opt = b;
  w->n = 2;
  w->post[0] = AD(r);
  w->post[1] = variant & 4 ? CL(-0.5f, 0.75f) : CL(0, INF);
  w->name = "conv2d_bias_add_relu";
}

TEST(bias_residual_clamp) {
  int v;
  for (v = 0; v < 8; v++) CHECK(epilogue_case("bias_res_clamp", build_bias_res_clamp, v));
}

/* One clamp op after conv + [1,K,1,1] bias:
   0 relu; 1 clip(-1, 2); 2 maximum(t, 0.25); 3 maximum(0.25, t); 4 minimum(t, 0.5);
   5 minimum(0.5, t); 6 maximum(t, [1,1,1,1] const 0.25) (a one-element constant is a scalar) */
static void build_one_clamp(fuse_graph *g, int variant, want *w) {
  int64_t k1111[4] = {1, CK, 1, 1}, ones[4] = {1, 1, 1, 1};
  const float quarter = 0.25f;
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, k1111, 25);
  fuse_value t = fuse_add(g, conv, b);
  switch (variant) {
  case 0: w->root = fuse_relu(g, t), w->post[0] = CL(0, INF); break;
  case 1: w->root = fuse_clip(g, t, -1, 2), w->post[0] = CL(-1, 2); break;
  case 2: w->root = fuse_maximum(g, t, fuse_scalar(g, 0.25f)), w->post[0] = CL(0.25f, INF); break;
  case 3: w->root = fuse_maximum(g, fuse_scalar(g, 0.25f), t), w->post[0] = CL(0.25f, INF); break;
  case 4: w->root = fuse_minimum(g, t, fuse_scalar(g, 0.5f)), w->post[0] = CL(-INF, 0.5f); break;
  case 5: w->root = fuse_minimum(g, fuse_scalar(g, 0.5f), t), w->post[0] = CL(-INF, 0.5f); break;
  default:
    w->root = fuse_maximum(g, t, cst_vals(g, 4, ones, &quarter));
    w->post[0] = CL(0.25f, INF);
    break;
  }
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = w->bias_opt = b;
  w->n = 1;
  w->name = "conv2d_bias_relu";
}

TEST(clamps_relu_clip_maximum_minimum) {
  int v;
  for (v = 0; v < 7; v++) CHECK(epilogue_case("one_clamp", build_one_clamp, v));
}

/* Seed 002's five clipping orders on matmul + bias [N], lo = -0.25, hi = 0.5:
   0 min(max(t, lo), hi)   1 min(hi, max(t, lo))   2 min(max(lo, t), hi)
   3 max(min(t, hi), lo)   4 max(lo, min(t, hi))
   variants 5..9: the same on conv2d + reshape bias. Each is ONE clamp [lo, hi]. */
static void build_seed002(fuse_graph *g, int variant, want *w) {
  int order = variant % 5;
  fuse_value red, t, lo = fuse_scalar(g, -0.25f), hi = fuse_scalar(g, 0.5f);
  if (variant < 5) {
    int64_t n[1] = {5};
    fuse_value b = cst(g, 1, n, 26);
    red = mm_aw(g, 3, 7, 5);
    t = fuse_add(g, red, b);
    w->bias = w->bias_opt = b;
    w->name = "matmul_bias_relu";
  } else {
    int64_t k[1] = {CK}, k1111[4] = {1, CK, 1, 1};
    fuse_value src = cst(g, 1, k, 26), b;
    red = conv_xw(g, CC, CK, CH, CW, NULL);
    b = fuse_reshape(g, src, 4, k1111);
    t = fuse_add(g, red, b);
    w->bias = src;
    w->bias_opt = b;
    w->name = "conv2d_bias_relu";
  }
  switch (order) {
  case 0: w->root = fuse_minimum(g, fuse_maximum(g, t, lo), hi); break;
  case 1: w->root = fuse_minimum(g, hi, fuse_maximum(g, t, lo)); break;
  case 2: w->root = fuse_minimum(g, fuse_maximum(g, lo, t), hi); break;
  case 3: w->root = fuse_maximum(g, fuse_minimum(g, t, hi), lo); break;
  default: w->root = fuse_maximum(g, lo, fuse_minimum(g, t, hi)); break;
  }
  fuse_output(g, w->root);
  w->red = red;
  w->n = 1;
  w->post[0] = CL(-0.25f, 0.5f);
}

TEST(seed002_five_orders_one_clamp) {
  int v;
  for (v = 0; v < 10; v++) CHECK(epilogue_case("seed002_orders", build_seed002, v));
}

/* Composition of adjacent clamps (applied in graph order: the inner op first):
   0 relu then minimum(., 6)             -> [0, 6]
   1 clip(-1, 2) then clip(0, 3)         -> [0, 2] (intersection)
   2 relu then minimum(., -1)            -> [-1, -1] (disjoint: every value becomes -1)
   3 minimum(., -1) then relu            -> [0, 0]
   4 clip(0, 1) then clip(2, 3)          -> [2, 2]
   5 clip(2, 3) then clip(0, 1)          -> [1, 1]
   6 maximum(., 0.5) then relu           -> [0.5, inf]
   7 relu6 as clip(0, 6) then maximum(., -3) -> [0, 6] */
static void build_compose(fuse_graph *g, int variant, want *w) {
  int64_t k1111[4] = {1, CK, 1, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, k1111, 27);
  fuse_value t = fuse_add(g, conv, b);
  switch (variant) {
  case 0: w->root = fuse_minimum(g, fuse_relu(g, t), fuse_scalar(g, 6)), w->post[0] = CL(0, 6); break;
  case 1: w->root = fuse_clip(g, fuse_clip(g, t, -1, 2), 0, 3), w->post[0] = CL(0, 2); break;
  case 2: w->root = fuse_minimum(g, fuse_relu(g, t), fuse_scalar(g, -1)), w->post[0] = CL(-1, -1); break;
  case 3: w->root = fuse_relu(g, fuse_minimum(g, t, fuse_scalar(g, -1))), w->post[0] = CL(0, 0); break;
  case 4: w->root = fuse_clip(g, fuse_clip(g, t, 0, 1), 2, 3), w->post[0] = CL(2, 2); break;
  case 5: w->root = fuse_clip(g, fuse_clip(g, t, 2, 3), 0, 1), w->post[0] = CL(1, 1); break;
  case 6: w->root = fuse_relu(g, fuse_maximum(g, t, fuse_scalar(g, 0.5f))), w->post[0] = CL(0.5f, INF); break;
  default:
    w->root = fuse_maximum(g, fuse_clip(g, t, 0, 6), fuse_scalar(g, -3));
    w->post[0] = CL(0, 6);
    break;
  }
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = w->bias_opt = b;
  w->n = 1;
  w->name = "conv2d_bias_relu";
}

TEST(adjacent_clamps_compose) {
  int v;
  for (v = 0; v < 8; v++) CHECK(epilogue_case("compose", build_compose, v));
}

/* The order of post-ops is kept: clamp, then residual add, then clamp (not merged across the
   add). variant 1: the residual on the left. Four post-ops (clamp, add, clamp, add) is the
   limit and still analyzes (variant 2). fuse_optimize's rules hold one residual, so these are
   checked for analysis and numbers only. */
static void build_post_order(fuse_graph *g, int variant, want *w) {
  int64_t ys[4] = {1, CK, CH, CW}, k11[3] = {CK, 1, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), r = inp(g, "r", 4, ys), b = cst(g, 3, k11, 28);
  fuse_value c1 = fuse_relu(g, fuse_add(g, conv, b));
  if (variant < 2) {
    fuse_value s = variant ? fuse_add(g, r, c1) : fuse_add(g, c1, r);
    w->root = fuse_clip(g, s, -1, 1.5f);
    w->n = 3;
    w->post[0] = CL(0, INF);
    w->post[1] = AD(r);
    w->post[2] = CL(-1, 1.5f);
  } else {
    fuse_value r2 = inp(g, "r2", 4, ys);
    fuse_value c2 = fuse_clip(g, fuse_add(g, c1, r), -1, 1.5f);
    w->root = fuse_add(g, r2, c2);
    w->n = 4;
    w->post[0] = CL(0, INF);
    w->post[1] = AD(r);
    w->post[2] = CL(-1, 1.5f);
    w->post[3] = AD(r2);
  }
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = w->bias_opt = b;
  w->name = NULL;
}

TEST(post_op_order_kept) {
  int v;
  for (v = 0; v < 3; v++) CHECK(epilogue_case("post_order", build_post_order, v));
}

/* Inside composites made by user rules: the seed rule with a reshape member, and a rule whose
   composite stops short of the conv (then the analysis of its root must fail: it stays inside
   the composite). */
TEST(inside_user_composites) {
  static const fuse_rule seed = {"dnnl.conv2d_reshape_add_relu",
                                 "relu(add(conv2d($data, $weight), reshape($bias, *)))", NULL, NULL};
  static const fuse_rule tail = {"test.add_relu", "relu(add(*, const))", NULL, NULL};
  int64_t k[1] = {CK}, k1111[4] = {1, CK, 1, 1};
  fuse_epilogue e;
  fuse_composite_info info;
  /* the seed rule */
  {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), src = cst(g, 1, k, 29);
    fuse_value b = fuse_reshape(g, src, 4, k1111), y = fuse_relu(g, fuse_add(g, conv, b));
    fuse_output(g, y);
    CHECK_EQ_INT(fuse_ops_by_pattern(g, &seed, 1, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    CHECK_EQ_INT(fuse_value_composite(g, b), 0);
    CHECK_EQ_INT(fuse_composite_get(g, 0, &info), FUSE_OK);
    CHECK(info.has_epilogue);
    CHECK_EQ_INT(info.epilogue.reduction, conv);
    CHECK_EQ_INT(info.epilogue.bias, src);
    CHECK_EQ_INT(info.epilogue.num_post, 1);
    CHECK(info.epilogue.post[0].kind == FUSE_POST_CLAMP && info.epilogue.post[0].lo == 0 &&
          info.epilogue.post[0].hi == INF);
    CHECK_STR_CONTAINS(info.function, "fused_conv2d_reshape_add_relu");
    CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_OK);
    CHECK_EQ_INT(e.bias, src);
    fuse_graph_destroy(g);
  }
  /* a composite {add, relu} that does not hold the conv */
  {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, k1111, 30);
    fuse_value y = fuse_relu(g, fuse_add(g, conv, b));
    fuse_output(g, y);
    CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_OK); /* no composite: the whole graph */
    CHECK_EQ_INT(fuse_ops_by_pattern(g, &tail, 1, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    CHECK_EQ_INT(fuse_value_composite(g, conv), -1);
    CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_ERROR_UNSUPPORTED);
    CHECK_STR_CONTAINS(e.why, "conv2d / matmul"); /* none inside the composite */
    CHECK_EQ_INT(fuse_composite_get(g, 0, &info), FUSE_OK);
    CHECK(!info.has_epilogue);
    fuse_graph_destroy(g);
  }
}

/* ------------------------------------------------------------------ refusals -- */

/* [K] added directly to the conv output [1, K, H, W] with W == K: numpy broadcasts it along
   width (y[n,k,h,w] + b[w]), so it is not a per-channel bias. variant 1: on the left. */
static fuse_value g_not_bias;
static void build_bias_along_width_k(fuse_graph *g, int variant, want *w) {
  int64_t k[1] = {4};
  fuse_value conv = conv_xw(g, CC, 4, CH, 4, NULL), b = cst(g, 1, k, 31); /* W == K == 4 */
  w->root = variant ? fuse_add(g, b, conv) : fuse_add(g, conv, b);
  w->root = fuse_relu(g, w->root);
  fuse_output(g, w->root);
  g_not_bias = b;
}
/* [1, 1, 1, W]: along width. */
static void build_bias_along_width(fuse_graph *g, int variant, want *w) {
  int64_t s[4] = {1, 1, 1, CW};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, s, 32);
  w->root = variant ? fuse_add(g, b, conv) : fuse_add(g, conv, b);
  fuse_output(g, w->root);
  g_not_bias = b;
}
/* [1, 1, H, 1] (along height) and [1, K, H, 1] (per channel and row). */
static void build_bias_along_height(fuse_graph *g, int variant, want *w) {
  int64_t s0[4] = {1, 1, CH, 1}, s1[4] = {1, CK, CH, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, variant ? s1 : s0, 33);
  w->root = fuse_add(g, conv, b);
  fuse_output(g, w->root);
  g_not_bias = b;
}
/* matmul [M, N] with M == N and a [N, 1] operand: along rows, not a bias. */
static void build_mm_bias_rows(fuse_graph *g, int variant, want *w) {
  int64_t s[2] = {4, 1};
  fuse_value mm = mm_aw(g, 4, 3, 4), b = cst(g, 2, s, 34);
  w->root = variant ? fuse_add(g, b, mm) : fuse_add(g, mm, b);
  fuse_output(g, w->root);
  g_not_bias = b;
}

TEST(refuses_bias_that_broadcasts_along_width) {
  int v;
  for (v = 0; v < 2; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    want w;
    build_bias_along_width_k(g, v, &w);
    fuse_graph_destroy(g);
    CHECK(refused_case("bias_K_W==K", build_bias_along_width_k, v, "bias", g_not_bias));
    g = fuse_graph_create(NULL);
    build_bias_along_width(g, v, &w);
    fuse_graph_destroy(g);
    CHECK(refused_case("bias_[1,1,1,W]", build_bias_along_width, v, "bias", g_not_bias));
    g = fuse_graph_create(NULL);
    build_bias_along_height(g, v, &w);
    fuse_graph_destroy(g);
    CHECK(refused_case("bias_along_height", build_bias_along_height, v, "bias", g_not_bias));
    g = fuse_graph_create(NULL);
    build_mm_bias_rows(g, v, &w);
    fuse_graph_destroy(g);
    CHECK(refused_case("matmul_[N,1]", build_mm_bias_rows, v, "bias", g_not_bias));
  }
}

/* Other chains that are not epilogues.
   0 maximum(conv, r) of two tensors         1 maximum(r, conv)
   2 maximum(conv, s) s a rank-0 input        3 minimum(s, conv)
   4 relu(sqrt(conv + b))                     5 sub(conv, b)
   6 add(conv [1,K,H,W], r [2,K,H,W]): the other operand makes the shape bigger
   7 maximum(conv, const [1,1,1,1,1]): the bound makes the rank bigger
   8 nine post-ops: clamp, add, clamp, add, clamp, add, clamp, add, clamp
   9 relu(x): no conv / matmul at all       10 relu(max_pool2d(x))
   11 add(x, y) of two inputs                12 the root is an input
   13 mul(conv, r) of two tensors           14 relu(add(relu(conv), b)), b an input [1,K,1,1] */
static const char *const refuse_keyword[15] = {
    "two tensors", "two tensors", "not a constant", "not a constant", "sqrt", "sub",
    "residual",    "broadcasts",  "more than 8",    "not an epilogue", "max_pool2d",
    "conv2d / matmul", "not an epilogue", "mul", "bias"};
static void build_refused(fuse_graph *g, int variant, want *w) {
  int64_t ys[4] = {1, CK, CH, CW}, y2[4] = {2, CK, CH, CW}, k1111[4] = {1, CK, 1, 1};
  int64_t one5[5] = {1, 1, 1, 1, 1};
  fuse_value x, conv = conv_xw(g, CC, CK, CH, CW, &x), r, s, b;
  const float half = 0.5f;
  fuse_pool2d_attrs pool;
  g_not_bias = FUSE_NONE;
  switch (variant) {
  case 0: r = inp(g, "r", 4, ys), w->root = fuse_maximum(g, conv, r); break;
  case 1: r = inp(g, "r", 4, ys), w->root = fuse_maximum(g, r, conv); break;
  case 2: s = inp(g, "s", 0, NULL), w->root = fuse_maximum(g, conv, s); break;
  case 3: s = inp(g, "s", 0, NULL), w->root = fuse_minimum(g, s, conv); break;
  case 4:
    b = cst(g, 4, k1111, 35);
    w->root = fuse_relu(g, fuse_sqrt(g, fuse_add(g, conv, b)));
    break;
  case 5: b = cst(g, 4, k1111, 35), w->root = fuse_sub(g, conv, b); break;
  case 6: r = inp(g, "r", 4, y2), w->root = fuse_add(g, conv, r); break;
  case 7: w->root = fuse_maximum(g, conv, cst_vals(g, 5, one5, &half)); break;
  case 8: {
    fuse_value t = fuse_relu(g, conv);
    int k;
    for (k = 0; k < 4; k++) {
      char name[8] = {'r', (char)('1' + k), 0};
      t = fuse_relu(g, fuse_add(g, t, inp(g, name, 4, ys)));
    }
    w->root = t;
    break;
  }
  case 9: w->root = fuse_relu(g, x); break;
  case 10:
    memset(&pool, 0, sizeof pool);
    pool.kernel[0] = pool.kernel[1] = 2;
    w->root = fuse_relu(g, fuse_max_pool2d(g, x, &pool));
    break;
  case 11: r = inp(g, "r", 4, ys), w->root = fuse_add(g, r, inp(g, "r2", 4, ys)); break;
  case 12: w->root = x; break;
  case 13: r = inp(g, "r", 4, ys), w->root = fuse_mul(g, conv, r); break;
  default: /* a per-channel tensor that is not a constant: neither bias nor shift */
    b = inp(g, "b", 4, k1111);
    w->root = fuse_relu(g, fuse_add(g, fuse_relu(g, conv), b));
    g_not_bias = b;
    break;
  }
  fuse_output(g, w->root);
  if (variant >= 9 && variant <= 12) fuse_output(g, conv); /* keep the conv used */
}

TEST(refusals_say_why) {
  int v;
  for (v = 0; v < 15; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    want w;
    build_refused(g, v, &w); /* sets g_not_bias for this variant */
    fuse_graph_destroy(g);
    CHECK(refused_case("refused", build_refused, v, refuse_keyword[v], g_not_bias));
  }
}

/* Twenty relus in a row are one clamp; then a residual add: two post-ops, within the limit.
   The analysis may accept it (clamp [0, inf], add r) or refuse it for its length, but a refusal
   must say so truthfully (it must not claim that no operand leads to a conv2d / matmul).
   Seventy relus: the same. */
TEST(long_clamp_chains) {
  static const int lengths[2] = {20, 70};
  int64_t ys[4] = {1, CK, CH, CW};
  int i, k;
  for (i = 0; i < 2; i++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), t = conv, r = inp(g, "r", 4, ys), y;
    fuse_epilogue e;
    fuse_result res;
    outs ref, got;
    for (k = 0; k < lengths[i]; k++) t = fuse_relu(g, t);
    y = fuse_add(g, t, r);
    fuse_output(g, y);
    res = fuse_analyze_epilogue(g, y, &e);
    if (res == FUSE_OK) {
      CHECK_EQ_INT(e.reduction, conv);
      CHECK_EQ_INT(e.num_post, 2);
      CHECK(e.post[0].kind == FUSE_POST_CLAMP && e.post[0].lo == 0 && e.post[0].hi == INF);
      CHECK(e.post[1].kind == FUSE_POST_ADD && e.post[1].tensor == r);
    } else {
      if (strstr(e.why, "neither operand leads"))
        fprintf(stderr, "    %d relus + add: the refusal is not true: \"%s\"\n", lengths[i], e.why);
      CHECK_EQ_INT(res, FUSE_ERROR_UNSUPPORTED);
      CHECK(strstr(e.why, "neither operand leads") == NULL);
    }
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "long clamp chain"));
    outs_free(&ref);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
}

/* Composites from user rules whose other members feed the epilogue: the reduction itself as
   the residual, a second conv as the other operand ([1,K,1,1]: bias-shaped), a sigmoid of the
   conv as the residual. Whatever runs fused, the numbers are those of the plain graph. */
TEST(user_composites_run_correctly) {
  static const char *const pats[3] = {"add(relu($c:conv2d(*, *)), $c)",
                                      "relu(add(conv2d(*, *), conv2d(*, *)))",
                                      "add($c:conv2d(*, *), sigmoid($c))"};
  int v;
  for (v = 0; v < 3; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_rule rule;
    fuse_value y;
    outs ref, got;
    if (v == 1) {
      int64_t xs[4] = {1, 3, 1, 1}, ws[4] = {CK, 3, 1, 1};
      fuse_value c1 = fuse_conv2d(g, inp(g, "x", 4, xs), cst(g, 4, ws, 53), NULL);
      fuse_value c2 = fuse_conv2d(g, inp(g, "x2", 4, xs), cst(g, 4, ws, 54), NULL);
      y = fuse_relu(g, fuse_add(g, c1, c2));
    } else {
      fuse_value c = conv_xw(g, CC, CK, CH, CW, NULL);
      y = v == 0 ? fuse_add(g, fuse_relu(g, c), c) : fuse_add(g, c, fuse_sigmoid(g, c));
    }
    fuse_output(g, y);
    CHECK(eval(g, NULL, &ref));
    rule.name = "test.custom";
    rule.pattern = pats[v];
    rule.check = NULL;
    rule.user = NULL;
    CHECK_EQ_INT(fuse_ops_by_pattern(g, &rule, 1, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    CHECK_EQ_INT(fuse_value_composite(g, y), 0);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, pats[v]));
    outs_free(&ref);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
}

/* A NaN bound is no clamp (max(x, NaN) is not a clamp of x). */
TEST(refuses_nan_bound) {
  int v;
  for (v = 0; v < 2; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), y;
    fuse_epilogue e;
    y = v ? fuse_minimum(g, fuse_scalar(g, NAN), conv) : fuse_maximum(g, conv, fuse_scalar(g, NAN));
    fuse_output(g, y);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_ERROR_UNSUPPORTED);
    CHECK_STR_CONTAINS(e.why, "NaN");
    fuse_graph_destroy(g);
  }
}

TEST(bad_arguments_do_not_crash) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value y = fuse_relu(g, conv_xw(g, CC, CK, CH, CW, NULL));
  fuse_epilogue e;
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_analyze_epilogue(g, y, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  memset(&e, 0x55, sizeof e);
  CHECK_EQ_INT(fuse_analyze_epilogue(g, FUSE_NONE, &e), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(e.reduction, FUSE_NONE);
  CHECK_EQ_INT(e.bias, FUSE_NONE);
  CHECK_EQ_INT(e.num_post, 0);
  CHECK(memchr(e.why, 0, sizeof e.why) != NULL && e.why[0] != 0);
  CHECK_EQ_INT(fuse_analyze_epilogue(g, 100000, &e), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK(e.why[0] != 0);
  CHECK_EQ_INT(fuse_analyze_epilogue(g, -7, &e), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_analyze_epilogue(NULL, 0, &e), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_analyze_epilogue(NULL, 0, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  /* after a failure the result is usable again */
  CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_OK);
  CHECK_EQ_INT(e.num_post, 1);
  CHECK_EQ_INT(e.why[0], 0);
  /* the root is the reduction itself: an empty epilogue */
  CHECK_EQ_INT(fuse_analyze_epilogue(g, fuse_graph_find(g, "x") + 2, &e), FUSE_OK);
  CHECK_EQ_INT(e.num_post, 0);
  CHECK_EQ_INT(e.bias, FUSE_NONE);
  fuse_graph_destroy(g);
  {
    fuse_composite_info info;
    CHECK_EQ_INT(fuse_composite_get(NULL, 0, &info), FUSE_ERROR_INVALID_ARGUMENT);
    g = fuse_graph_create(NULL);
    CHECK_EQ_INT(fuse_composite_get(g, 0, &info), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_composite_get(g, -1, &info), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_value_composite(g, 5), -1);
    CHECK_EQ_INT(fuse_optimize(NULL, "fuse"), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_fold_batch_norm(NULL), FUSE_ERROR_INVALID_ARGUMENT);
    fuse_graph_destroy(g);
  }
}

/* matmul of two vectors has a rank-0 result; a scalar added to it. The analysis reads the
   "last axis" of the result, which does not exist: it must not read outside the shape
   (UBSan) and must not crash. Either answer is fine; the numbers after fuse_optimize must be. */
static void build_mm_rank0(fuse_graph *g, int variant, want *w) {
  int64_t k[1] = {6};
  fuse_value mm = fuse_matmul(g, inp(g, "a", 1, k), cst(g, 1, k, 37));
  fuse_value c = variant ? fuse_scalar(g, 0.5f) : cst(g, 1, (const int64_t[]){1}, 38);
  w->root = fuse_relu(g, fuse_add(g, mm, c));
  fuse_output(g, w->root);
  w->red = mm;
}

TEST(matmul_rank0_result_no_crash) {
  int v;
  for (v = 0; v < 2; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_epilogue e;
    want w;
    outs ref, got;
    fuse_result r;
    build_mm_rank0(g, v, &w);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    r = fuse_analyze_epilogue(g, w.root, &e);
    CHECK(r == FUSE_OK || r == FUSE_ERROR_UNSUPPORTED);
    if (r == FUSE_OK) CHECK_EQ_INT(e.reduction, w.red);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "mm_rank0"));
    outs_free(&ref);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
}

/* matmul with a vector on the right: [M, Kd] x [Kd] -> [M]. Its last (only) axis is M, so a
   [M] operand is "per output channel" by the spec's rule; whatever the analyzer decides, the
   fused result must equal the unfused one. variant 1: batched [2, M, Kd] x [Kd] -> [2, M]. */
static void build_mm_vec(fuse_graph *g, int variant, want *w) {
  int64_t as[3] = {2, 3, 7}, k[1] = {7}, m[1] = {3};
  fuse_value a = variant ? inp(g, "a", 3, as) : inp(g, "a", 2, as + 1);
  fuse_value mm = fuse_matmul(g, a, cst(g, 1, k, 39)), b = cst(g, 1, m, 40);
  w->root = fuse_relu(g, fuse_add(g, mm, b));
  fuse_output(g, w->root);
  w->red = mm;
  w->bias = b;
}

TEST(matmul_vector_rhs_bias_numbers) {
  int v;
  for (v = 0; v < 2; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    want w;
    outs ref, got;
    build_mm_vec(g, v, &w);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "matmul [M,K] x [K] + bias [M], fused"));
    outs_free(&ref);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
}

/* ================================================= 2. once, not per step == */

/* Why this matters. A reduction computes acc = sum_k p_k. TVM's fuse_reduction_epilogue
   (seed 002) rewrites the reduction block so that the clamp is applied to the accumulator on
   EVERY step of the sum (init: clamp(0); update: acc = clamp(acc + p_k)). That is not the
   same function: with the products -1 and then +2, the true result is relu(-1 + 2) = 1, but
   per-step clamping gives relu(relu(0 - 1) + 2) = relu(0 + 2) = 2. A clamp is not linear, so
   it may only run once, on the finished sum - which is what DESIGN.md says fuse.h does.
   The cases below are chosen so that the two answers differ; the fused graph (after
   fuse_optimize, one composite, and in the fused plan one step) must give the true one
   exactly (small integers and halves: float sums are exact). */

/* variant: 0 conv 1x1 + relu, 1 matmul K=2 + relu, 2 conv 1x1 + clip(0, 1.5),
   3 matmul + min(max(t, -0.5), 1) with products +3 then -2.5 */
static fuse_graph *build_once(int variant, fuse_value *root) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x, w, t;
  if (variant == 0 || variant == 2) {
    int64_t xs[4] = {1, 2, 1, 1}, ws[4] = {1, 2, 1, 1};
    const float wd[2] = {-1, 2};
    x = inp(g, "x", 4, xs);
    w = cst_vals(g, 4, ws, wd);
    t = fuse_conv2d(g, x, w, NULL);
  } else {
    int64_t as[2] = {1, 2}, ws[2] = {2, 1};
    const float wd1[2] = {-1, 2}, wd3[2] = {3, -2.5f};
    x = inp(g, "a", 2, as);
    w = cst_vals(g, 2, ws, variant == 1 ? wd1 : wd3);
    t = fuse_matmul(g, x, w);
  }
  if (variant < 2) *root = fuse_relu(g, t);
  else if (variant == 2) *root = fuse_clip(g, t, 0, 1.5f);
  else *root = fuse_minimum(g, fuse_maximum(g, t, fuse_scalar(g, -0.5f)), fuse_scalar(g, 1));
  fuse_output(g, *root);
  return g;
}

TEST(epilogue_runs_once_not_per_step) {
  /* x = (1, 1): the products are w0 * 1, w1 * 1, summed in that order */
  static const float ones[2] = {1, 1};
  static const float want_once[4] = {1, 1, 1, 0.5f};    /* clamp(sum) */
  static const float per_step[4] = {2, 2, 1.5f, -0.5f}; /* what per-step clamping would give */
  const float *in[1];
  int v;
  in[0] = ones;
  for (v = 0; v < 4; v++) {
    fuse_value root;
    fuse_graph *g = build_once(v, &root);
    fuse_epilogue e;
    outs o;
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK(want_once[v] != per_step[v]);
    CHECK(eval(g, in, &o)); /* op by op */
    CHECK(o.n == 1 && o.d[0][0] == want_once[v]);
    outs_free(&o);
    CHECK_EQ_INT(fuse_optimize(g, v % 2 ? "dnnl" : "fuse"), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_op_count(g), 1);
    CHECK(fuse_value_composite(g, root) >= 0);
    CHECK_EQ_INT(fuse_analyze_epilogue(g, root, &e), FUSE_OK);
    CHECK_EQ_INT(e.num_post, 1);
    CHECK(eval(g, in, &o)); /* fused */
    CHECK(o.n == 1);
    if (o.n == 1) {
      if (o.d[0][0] != want_once[v])
        fprintf(stderr, "    variant %d: fused result %g, want %g (per-step clamping: %g)\n", v,
                (double)o.d[0][0], (double)want_once[v], (double)per_step[v]);
      CHECK(o.d[0][0] == want_once[v]);
    }
    outs_free(&o);
#if TEST_PLAN_WRITE
    {
      fuse_plan *p = NULL;
      sbuf b;
      b.len = 0;
      b.s[0] = 0;
      CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
      CHECK_EQ_INT(fuse_plan_step_count(p), 1); /* one fused step */
      CHECK_EQ_INT(fuse_plan_write(p, sbuf_write, &b), FUSE_OK);
      CHECK_STR_CONTAINS(b.s, "clamp[");
      fuse_plan_destroy(p);
    }
#endif
    fuse_graph_destroy(g);
  }
}

/* Bias is added once too (not once per product): conv 1x1 with 3 input channels + bias 10. */
TEST(bias_added_once) {
  int64_t xs[4] = {1, 3, 1, 1}, ws[4] = {1, 3, 1, 1}, bs[4] = {1, 1, 1, 1};
  const float wd[3] = {1, 2, 3}, bd[1] = {10}, xd[3] = {1, 1, 1};
  const float *in[1];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value y;
  outs o;
  in[0] = xd;
  y = fuse_clip(g, fuse_add(g, fuse_conv2d(g, inp(g, "x", 4, xs), cst_vals(g, 4, ws, wd), NULL),
                            cst_vals(g, 4, bs, bd)),
                -100, 100);
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  CHECK(eval(g, in, &o));
  CHECK(o.n == 1 && o.d[0][0] == 16);
  outs_free(&o);
  fuse_graph_destroy(g);
}

/* ================================================ 3. fold batch norm == */

/* conv2d(x [N, C, 6, 5], w [K, C/groups, 3, 3]) -> batch_norm(const scale, bias, mean, var).
   kind: 0 folds; 1 the conv is also used by relu (a second output); 2 the conv is a graph output;
   3 the weight is a graph input; 4 mean is a graph input; 5 bn after add(conv, b);
   6 bn directly on the input x (no conv); 7 folds, groups = 2, batch 2, named bn;
   8 the weight is shared by a second conv that has no bn (folds; the other conv must keep the
   old weight); 9 scale is an op's result (relu of a constant), not a constant. */
typedef struct bn_ids {
  fuse_value conv, bn;
} bn_ids;

static fuse_graph *build_bn(int kind, bn_ids *ids) {
  fuse_graph *g = fuse_graph_create(NULL);
  int N = kind == 7 ? 2 : 1, K = 6, C = kind == 6 ? K : 4, groups = kind == 7 ? 2 : 1;
  int64_t xs[4], ws[4], ks[1];
  fuse_conv2d_attrs a = PAD1;
  fuse_value x, w, conv, scale, bias, mean, var, bn;
  float *vd;
  int i;
  xs[0] = N, xs[1] = C, xs[2] = 6, xs[3] = 5;
  ws[0] = K, ws[1] = C / groups, ws[2] = 3, ws[3] = 3;
  ks[0] = K;
  a.groups = groups;
  x = inp(g, "x", 4, xs);
  w = kind == 3 ? inp(g, "w", 4, ws) : cst(g, 4, ws, 41);
  scale = cst(g, 1, ks, 42);
  if (kind == 9) scale = fuse_relu(g, scale);
  bias = cst(g, 1, ks, 43);
  mean = kind == 4 ? inp(g, "mean", 1, ks) : cst(g, 1, ks, 44);
  vd = frandom((size_t)K, 45);
  for (i = 0; i < K; i++) vd[i] = vd[i] * vd[i] + 0.05f; /* positive variances */
  var = cst_vals(g, 1, ks, vd);
  free(vd);
  conv = kind == 6 ? x : fuse_conv2d(g, x, w, &a);
  if (kind == 5) {
    int64_t k1111[4] = {1, K, 1, 1};
    conv = fuse_add(g, conv, cst(g, 4, k1111, 46));
  }
  bn = fuse_batch_norm(g, conv, scale, bias, mean, var, 1e-5f);
  if (kind == 7) fuse_value_set_name(g, bn, "bn1");
  fuse_output(g, bn);
  if (kind == 1) fuse_output(g, fuse_relu(g, conv));
  if (kind == 2) fuse_output(g, conv);
  if (kind == 8) fuse_output(g, fuse_conv2d(g, x, w, &a));
  ids->conv = conv;
  ids->bn = bn;
  return g;
}

TEST(fold_batch_norm_folds_and_matches) {
  static const int kinds[3] = {0, 7, 8};
  int i;
  for (i = 0; i < 3; i++) {
    bn_ids ids;
    fuse_graph *g = build_bn(kinds[i], &ids);
    int rank, ops;
    int64_t shape[4];
    outs ref, got;
    fuse_epilogue e;
    sbuf b;
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    rank = fuse_value_rank(g, ids.bn);
    memcpy(shape, fuse_value_shape(g, ids.bn), sizeof shape);
    ops = fuse_graph_op_count(g);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_fold_batch_norm(g), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK(strstr(graph_text(g, &b), "batch_norm") == NULL);
    CHECK_EQ_INT(fuse_graph_op_count(g), ops); /* the batch norm became the bias add */
    /* the batch norm's id is the folded result, same shape, still the output */
    CHECK_EQ_INT(fuse_graph_output(g, 0), ids.bn);
    CHECK_EQ_INT(fuse_value_rank(g, ids.bn), rank);
    CHECK(fuse_value_shape(g, ids.bn) && memcmp(fuse_value_shape(g, ids.bn), shape, sizeof shape) == 0);
    if (kinds[i] == 7) {
      CHECK_EQ_INT(fuse_graph_find(g, "bn1"), ids.bn);
    }
    /* now an epilogue: conv + per-channel bias [1,K,1,1] */
    CHECK_EQ_INT(fuse_analyze_epilogue(g, ids.bn, &e), FUSE_OK);
    CHECK_EQ_INT(e.reduction, ids.conv);
    CHECK(e.bias != FUSE_NONE);
    if (e.bias != FUSE_NONE) {
      int64_t want_b[4] = {1, 6, 1, 1};
      CHECK_EQ_INT(fuse_value_rank(g, e.bias), 4);
      CHECK(memcmp(fuse_value_shape(g, e.bias), want_b, sizeof want_b) == 0);
    }
    CHECK_EQ_INT(e.num_post, 0);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "fold_batch_norm"));
    outs_free(&got);
    /* folding again changes nothing */
    CHECK_EQ_INT(fuse_fold_batch_norm(g), FUSE_OK);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "fold_batch_norm twice"));
    outs_free(&got);
    outs_free(&ref);
    fuse_graph_destroy(g);
  }
}

TEST(fold_batch_norm_refuses) {
  static const int kinds[7] = {1, 2, 3, 4, 5, 6, 9};
  int i;
  for (i = 0; i < 7; i++) {
    bn_ids ids;
    fuse_graph *g = build_bn(kinds[i], &ids);
    outs ref, got;
    sbuf b;
    int ops;
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    ops = fuse_graph_op_count(g);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_fold_batch_norm(g), FUSE_OK);
    if (!strstr(graph_text(g, &b), "batch_norm"))
      fprintf(stderr, "    kind %d folded but must not:\n%s", kinds[i], b.s);
    CHECK(strstr(b.s, "batch_norm") != NULL);
    CHECK_EQ_INT(fuse_graph_op_count(g), ops);
    CHECK_EQ_INT(fuse_graph_output(g, 0), ids.bn);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "not folded"));
    outs_free(&got);
    /* fuse_optimize does not fold it either, and the numbers stay */
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK(strstr(graph_text(g, &b), "batch_norm") != NULL);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "not folded, optimized"));
    outs_free(&got);
    outs_free(&ref);
    fuse_graph_destroy(g);
  }
}

/* =========================================================== 4. fuse_optimize == */

static int composite_named(const fuse_graph *g, fuse_value v, const char *name,
                           fuse_composite_info *info) {
  int c = fuse_value_composite(g, v);
  if (c < 0 || fuse_composite_get(g, c, info) != FUSE_OK) {
    fprintf(stderr, "    value %d is in no composite (want %s)\n", (int)v, name);
    return 0;
  }
  if (strcmp(info->name, name) != 0) {
    fprintf(stderr, "    value %d is in composite \"%s\", want \"%s\"\n", (int)v, info->name, name);
    return 0;
  }
  return 1;
}

/* The seed chain (seeds 000 / 001): relu(add(conv2d(x, w), reshape(b, [1, K, 1, 1]))). */
static fuse_graph *build_seed(fuse_value *conv_out, fuse_value *root) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t k[1] = {8}, k1111[4] = {1, 8, 1, 1};
  fuse_value conv = conv_xw(g, 3, 8, 7, 9, NULL);
  fuse_value b = fuse_constant(g, "bias", 1, k, NULL);
  float *bd = frandom(8, 50);
  fuse_graph_set_constant(g, "bias", bd, 8);
  free(bd);
  *root = fuse_relu(g, fuse_add(g, conv, fuse_reshape(g, b, 4, k1111)));
  *conv_out = conv;
  fuse_output(g, *root);
  return g;
}

TEST(optimize_seed_chain) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  int i;
  for (i = 0; i < 2; i++) {
    fuse_value conv, root;
    fuse_graph *g = build_seed(&conv, &root);
    fuse_composite_info info;
    char name[64];
    outs ref, got;
    sbuf b;
    CHECK_EQ_INT(fuse_graph_op_count(g), 4);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_op_count(g), 1);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    sprintf(name, "%s.conv2d_bias_relu", cgs[i]);
    CHECK(composite_named(g, root, name, &info));
    CHECK(info.codegen && strcmp(info.codegen, cgs[i]) == 0);
    CHECK_EQ_INT(info.region, 0);
    CHECK_EQ_INT(info.root, root);
    CHECK(info.has_epilogue);
    CHECK_EQ_INT(info.epilogue.reduction, conv);
    CHECK(info.epilogue.bias != FUSE_NONE);
    CHECK_EQ_INT(fuse_value_composite(g, conv), fuse_value_composite(g, root));
    CHECK_STR_CONTAINS(graph_text(g, &b), name);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, name));
    outs_free(&got);
    outs_free(&ref);
    fuse_graph_destroy(g);
  }
}

/* conv2d -> batch_norm -> relu: folded, then one composite. */
TEST(optimize_conv_bn_relu) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  int i;
  for (i = 0; i < 2; i++) {
    bn_ids ids;
    fuse_graph *g;
    fuse_composite_info info;
    fuse_value y;
    char name[64];
    outs ref, got;
    {
      int64_t xs[4] = {1, 4, 6, 5}, ws[4] = {6, 4, 3, 3}, ks[1] = {6};
      float *vd = frandom(6, 45);
      int k;
      fuse_value x, w, bn;
      g = fuse_graph_create(NULL);
      x = inp(g, "x", 4, xs);
      w = cst(g, 4, ws, 41);
      for (k = 0; k < 6; k++) vd[k] = vd[k] * vd[k] + 0.05f;
      ids.conv = fuse_conv2d(g, x, w, &PAD1);
      bn = fuse_batch_norm(g, ids.conv, cst(g, 1, ks, 42), cst(g, 1, ks, 43), cst(g, 1, ks, 44),
                           cst_vals(g, 1, ks, vd), 1e-5f);
      free(vd);
      y = fuse_relu(g, bn);
      fuse_output(g, y);
    }
    CHECK_EQ_INT(fuse_graph_op_count(g), 3);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_op_count(g), 1);
    sprintf(name, "%s.conv2d_bias_relu", cgs[i]);
    CHECK(composite_named(g, y, name, &info));
    CHECK(info.has_epilogue);
    CHECK_EQ_INT(info.epilogue.reduction, ids.conv);
    CHECK(info.epilogue.bias != FUSE_NONE);
    CHECK_EQ_INT(info.epilogue.num_post, 1);
    CHECK(info.epilogue.post[0].kind == FUSE_POST_CLAMP && info.epilogue.post[0].lo == 0 &&
          info.epilogue.post[0].hi == INF);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, name));
    outs_free(&got);
    outs_free(&ref);
    fuse_graph_destroy(g);
  }
}

/* The same chain with the weight given as reshape(const [K*C*9], [K, C, 3, 3]) (as importers
   often write it): fuse_optimize folds reshapes of constants, so the weight is a constant and
   the batch norm must fold too; afterwards the chain is ONE op (spec: "Afterwards each
   conv2d/matmul chain is ONE op"). */
TEST(optimize_conv_bn_relu_reshaped_weight) {
  int64_t xs[4] = {1, 4, 6, 5}, flat[1] = {6 * 4 * 9}, ws[4] = {6, 4, 3, 3}, ks[1] = {6};
  fuse_graph *g = fuse_graph_create(NULL);
  float *vd = frandom(6, 45);
  fuse_value conv, y;
  fuse_composite_info info;
  outs ref, got;
  sbuf b;
  int k;
  for (k = 0; k < 6; k++) vd[k] = vd[k] * vd[k] + 0.05f;
  conv = fuse_conv2d(g, inp(g, "x", 4, xs), fuse_reshape(g, cst(g, 1, flat, 41), 4, ws), &PAD1);
  y = fuse_relu(g, fuse_batch_norm(g, conv, cst(g, 1, ks, 42), cst(g, 1, ks, 43), cst(g, 1, ks, 44),
                                   cst_vals(g, 1, ks, vd), 1e-5f));
  free(vd);
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK(eval(g, NULL, &ref));
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  if (fuse_graph_op_count(g) != 1) fprintf(stderr, "    after fuse_optimize:\n%s", graph_text(g, &b));
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  CHECK(strstr(graph_text(g, &b), "batch_norm") == NULL);
  CHECK(composite_named(g, y, "fuse.conv2d_bias_relu", &info));
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "reshaped weight"));
  outs_free(&got);
  outs_free(&ref);
  fuse_graph_destroy(g);
}

/* ResNet basic block: h = relu(bn1(conv1(s))); y = relu(add(bn2(conv2(h)), s)), where the
   identity s is the graph input x, or (stem = 1) the output of a stem s = relu(bn0(conv0(x))). */
typedef struct block_ids {
  fuse_value conv0, stem, conv1, h, conv2, bn2, sum, y;
} block_ids;

static fuse_value conv_bn(fuse_graph *g, fuse_value x, int C, int K, uint32_t seed, fuse_value *conv) {
  int64_t ws[4], ks[1];
  float *vd = frandom((size_t)K, seed + 4);
  int k;
  fuse_value r;
  ws[0] = K, ws[1] = C, ws[2] = 3, ws[3] = 3;
  ks[0] = K;
  for (k = 0; k < K; k++) vd[k] = vd[k] * vd[k] + 0.1f;
  *conv = fuse_conv2d(g, x, cst(g, 4, ws, seed), &PAD1);
  r = fuse_batch_norm(g, *conv, cst(g, 1, ks, seed + 1), cst(g, 1, ks, seed + 2),
                      cst(g, 1, ks, seed + 3), cst_vals(g, 1, ks, vd), 1e-5f);
  free(vd);
  return r;
}

static fuse_graph *build_block(block_ids *b, int identity_left, int stem) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs[4] = {1, 3, 6, 7}, xs8[4] = {1, 8, 6, 7};
  fuse_value x = inp(g, "x", 4, stem ? xs : xs8);
  b->conv0 = FUSE_NONE;
  b->stem = stem ? fuse_relu(g, conv_bn(g, x, 3, 8, 60, &b->conv0)) : x;
  b->h = fuse_relu(g, conv_bn(g, b->stem, 8, 8, 70, &b->conv1));
  b->bn2 = conv_bn(g, b->h, 8, 8, 80, &b->conv2);
  b->sum = identity_left ? fuse_add(g, b->stem, b->bn2) : fuse_add(g, b->bn2, b->stem);
  b->y = fuse_relu(g, b->sum);
  fuse_output(g, b->y);
  return g;
}

TEST(optimize_resnet_block) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  int i, left, stem;
  for (i = 0; i < 2; i++)
    for (left = 0; left < 2; left++)
      for (stem = 0; stem < 2; stem++) {
        block_ids b;
        fuse_graph *g = build_block(&b, left, stem), *back = NULL;
        fuse_composite_info info;
        char name[64];
        outs ref, got;
        sbuf t1, t2;
        int c0 = -1, c1, c2, chains = stem ? 3 : 2;
        CHECK_EQ_INT(fuse_graph_op_count(g), stem ? 10 : 7);
        CHECK(eval(g, NULL, &ref));
        CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
        CHECK_EQ_INT(fuse_graph_op_count(g), chains); /* one per conv chain */
        CHECK_EQ_INT(fuse_composite_count(g), chains);
        sprintf(name, "%s.conv2d_bias_relu", cgs[i]);
        if (stem) {
          CHECK(composite_named(g, b.stem, name, &info));
          c0 = fuse_value_composite(g, b.stem);
        }
        CHECK(composite_named(g, b.h, name, &info));
        sprintf(name, "%s.conv2d_bias_add_relu", cgs[i]);
        CHECK(composite_named(g, b.y, name, &info));
        c1 = fuse_value_composite(g, b.h);
        c2 = fuse_value_composite(g, b.y);
        CHECK(c1 >= 0 && c2 >= 0 && c1 != c2 && c0 != c1 && c0 != c2);
        /* the residual add and the second bias (the folded bn2) are inside the last one */
        CHECK_EQ_INT(fuse_value_composite(g, b.sum), c2);
        CHECK_EQ_INT(fuse_value_composite(g, b.bn2), c2);
        CHECK_EQ_INT(fuse_value_composite(g, b.conv2), c2);
        CHECK_EQ_INT(fuse_value_composite(g, b.conv1), c1);
        CHECK(info.has_epilogue);
        CHECK_EQ_INT(info.epilogue.reduction, b.conv2);
        CHECK(info.epilogue.bias != FUSE_NONE);
        CHECK_EQ_INT(info.epilogue.num_post, 2);
        CHECK(info.epilogue.post[0].kind == FUSE_POST_ADD && info.epilogue.post[0].tensor == b.stem);
        CHECK(info.epilogue.post[1].kind == FUSE_POST_CLAMP && info.epilogue.post[1].lo == 0 &&
              info.epilogue.post[1].hi == INF);
        /* one codegen, each feeding the next: one region */
        CHECK_EQ_INT(info.region, 0);
        CHECK(fuse_composite_get(g, c1, &info) == FUSE_OK && info.region == 0);
        if (stem) CHECK(fuse_composite_get(g, c0, &info) == FUSE_OK && info.region == 0);
        CHECK(eval(g, NULL, &got));
        CHECK(outs_match(&got, &ref, name));
        outs_free(&got);
        /* a second fuse_optimize changes nothing */
        graph_text(g, &t1);
        CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
        CHECK(strcmp(graph_text(g, &t2), t1.s) == 0);
        CHECK_EQ_INT(fuse_graph_op_count(g), chains);
        /* the text form with its composites reads back to the same text and epilogue */
        CHECK_EQ_INT(fuse_graph_parse(t1.s, NULL, &back), FUSE_OK);
        if (back) {
          fuse_composite_info bi;
          int c = fuse_value_composite(back, b.y);
          if (strcmp(graph_text(back, &t2), t1.s) != 0)
            fprintf(stderr, "    printed:\n%s    re-printed:\n%s", t1.s, t2.s);
          CHECK(strcmp(t2.s, t1.s) == 0);
          CHECK_EQ_INT(fuse_composite_count(back), chains);
          CHECK_EQ_INT(fuse_graph_op_count(back), chains);
          CHECK(c >= 0 && fuse_composite_get(back, c, &bi) == FUSE_OK && bi.has_epilogue &&
                bi.epilogue.num_post == 2 && bi.epilogue.bias != FUSE_NONE);
          fuse_graph_destroy(back);
        }
#if TEST_PLAN_WRITE
        {
          fuse_plan *p = NULL;
          sbuf t;
          t.len = 0;
          t.s[0] = 0;
          CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
          CHECK_EQ_INT(fuse_plan_step_count(p), chains);
          fuse_plan_write(p, sbuf_write, &t);
          CHECK_STR_CONTAINS(t.s, "conv2d + bias + add + clamp[0, inf]");
          CHECK_EQ_INT(count_substr(t.s, "conv2d + bias + clamp[0, inf]"), chains - 1);
          fuse_plan_destroy(p);
        }
#endif
        outs_free(&ref);
        fuse_graph_destroy(g);
      }
}

/* matmul + bias + clip, seed 002 style: variant 0 clip(add(matmul, b), -0.5, 0.5);
   1 minimum(maximum(add(matmul, b), -0.5), 0.5); 2 the same without a bias. */
TEST(optimize_matmul_bias_clip) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  int i, v;
  for (i = 0; i < 2; i++)
    for (v = 0; v < 3; v++) {
      fuse_graph *g = fuse_graph_create(NULL);
      int64_t n[1] = {6};
      fuse_value mm = mm_aw(g, 4, 9, 6), b = cst(g, 1, n, 51), t, y;
      fuse_composite_info info;
      char name[64];
      outs ref, got;
      int ops;
      t = v == 2 ? mm : fuse_add(g, mm, b);
      y = v == 0 ? fuse_clip(g, t, -0.5f, 0.5f)
                 : fuse_minimum(g, fuse_maximum(g, t, fuse_scalar(g, -0.5f)), fuse_scalar(g, 0.5f));
      fuse_output(g, y);
      ops = fuse_graph_op_count(g);
      CHECK_EQ_INT(ops, v == 0 ? 3 : v == 1 ? 4 : 3);
      CHECK(eval(g, NULL, &ref));
      CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
      CHECK_EQ_INT(fuse_graph_op_count(g), 1);
      sprintf(name, "%s.matmul_%s", cgs[i], v == 2 ? "relu" : "bias_relu");
      CHECK(composite_named(g, y, name, &info));
      CHECK(info.has_epilogue && info.epilogue.num_post == 1 &&
            info.epilogue.post[0].lo == -0.5f && info.epilogue.post[0].hi == 0.5f);
      CHECK_EQ_INT(info.epilogue.bias, v == 2 ? FUSE_NONE : b);
      CHECK(eval(g, NULL, &got));
      CHECK(outs_match(&got, &ref, name));
      outs_free(&got);
      outs_free(&ref);
      fuse_graph_destroy(g);
    }
}

TEST(optimize_unknown_codegen) {
  fuse_value conv, root;
  fuse_graph *g = build_seed(&conv, &root);
  outs ref, got;
  sbuf b1, b2;
  CHECK(eval(g, NULL, &ref));
  graph_text(g, &b1);
  CHECK(fuse_optimize(g, "nope") != FUSE_OK);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "nope");
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK); /* the graph stays usable */
  CHECK_EQ_INT(fuse_composite_count(g), 0);
  CHECK_EQ_INT(fuse_graph_op_count(g), 4);
  CHECK(strcmp(graph_text(g, &b2), b1.s) == 0); /* untouched */
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "after a failed optimize"));
  outs_free(&got);
  CHECK(fuse_optimize(g, "") != FUSE_OK);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  /* and a good call afterwards works (and clears the message) */
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  CHECK_EQ_INT(fuse_graph_error(g)[0], 0);
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "dnnl after nope"));
  outs_free(&got);
  outs_free(&ref);
  fuse_graph_destroy(g);
  /* NULL codegen is "fuse" */
  g = build_seed(&conv, &root);
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  {
    fuse_composite_info info;
    CHECK(composite_named(g, root, "fuse.conv2d_bias_relu", &info));
  }
  fuse_graph_destroy(g);
}

TEST(rules_default) {
  static const char *const kinds[8] = {"_bias_add_relu", "_bias_add", "_add_relu", "_add",
                                       "_bias_relu",     "_bias",     "_relu",     ""};
  static const char *const cgs[2] = {"fuse", "dnnl"};
  const fuse_rule *r = NULL, *r_null = NULL;
  int i, k, j;
  CHECK_EQ_INT(fuse_rules_default("fuse", &r), 16);
  CHECK_EQ_INT(fuse_rules_default(NULL, &r_null), 16);
  CHECK(r != NULL && r == r_null);
  CHECK_EQ_INT(fuse_rules_default("dnnl", &r), 16);
  r = (const fuse_rule *)&r; /* must be reset */
  CHECK_EQ_INT(fuse_rules_default("nope", &r), 0);
  CHECK(r == NULL);
  CHECK_EQ_INT(fuse_rules_default("nope", NULL), 0);
  CHECK_EQ_INT(fuse_rules_default("dnnl", NULL), 16);
  CHECK_EQ_INT(fuse_rules_default("DNNL", NULL), 0);
  for (i = 0; i < 2; i++) {
    CHECK_EQ_INT(fuse_rules_default(cgs[i], &r), 16);
    for (j = 0; j < 2; j++)
      for (k = 0; k < 8; k++) {
        char name[64];
        sprintf(name, "%s.%s%s", cgs[i], j ? "matmul" : "conv2d", kinds[k]);
        /* every expected name is there, once */
        {
          int m, found = 0;
          for (m = 0; m < 16; m++)
            if (r[m].name && strcmp(r[m].name, name) == 0) found++;
          if (found != 1) fprintf(stderr, "    rule %s found %d times\n", name, found);
          CHECK_EQ_INT(found, 1);
        }
      }
    for (k = 0; k < 16; k++) CHECK(r[k].pattern && r[k].pattern[0]);
    /* the rules parse: applying them to an empty graph is fine */
    {
      fuse_graph *g = fuse_graph_create(NULL);
      CHECK_EQ_INT(fuse_ops_by_pattern(g, r, 16, NULL), FUSE_OK);
      CHECK_EQ_INT(fuse_graph_error(g)[0], 0);
      fuse_graph_destroy(g);
    }
  }
}

/* ============================================================ 5. fused plans == */

#if TEST_PLAN_WRITE
TEST(plan_seed_chain_one_step) {
  fuse_value conv, root;
  fuse_graph *g = build_seed(&conv, &root);
  fuse_plan *p = NULL;
  outs ref, got;
  sbuf t;
  int steps_before;
  CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
  steps_before = fuse_plan_step_count(p);
  CHECK_EQ_INT(steps_before, 3); /* conv2d, add, relu; the reshape is a view */
  fuse_plan_destroy(p);
  CHECK(eval(g, NULL, &ref));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
  CHECK_EQ_INT(fuse_plan_step_count(p), 1);
  t.len = 0;
  t.s[0] = 0;
  CHECK_EQ_INT(fuse_plan_write(p, sbuf_write, &t), FUSE_OK);
  CHECK_STR_CONTAINS(t.s, "step 0: conv2d + bias + clamp[0, inf]");
  CHECK_STR_CONTAINS(t.s, "(composite dnnl.conv2d_bias_relu)");
  CHECK_EQ_INT(count_substr(t.s, "\n"), 1);
  CHECK_EQ_INT(fuse_plan_write(NULL, sbuf_write, &t), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_plan_write(p, NULL, &t), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_plan_step_count(NULL), 0);
  fuse_plan_destroy(p);
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "seed chain fused"));
  outs_free(&got);
  /* the plan outlives the graph */
  CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
  fuse_graph_destroy(g);
  {
    int64_t xs[4] = {1, 3, 7, 9};
    float *x = frandom(numel(4, xs), 100), *y = (float *)malloc(ref.len[0] * sizeof(float));
    const float *in[1];
    float *out[1];
    in[0] = x;
    out[0] = y;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
    CHECK_NEAR_ARRAY(y, ref.d[0], ref.len[0], TOL);
    free(x);
    free(y);
  }
  fuse_plan_destroy(p);
  outs_free(&ref);
}

/* matmul + bias + clip (seed 002), a clamp [lo, hi] in one step. */
TEST(plan_matmul_bias_clip_one_step) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t n[1] = {6};
  fuse_value mm = mm_aw(g, 4, 9, 6), b = cst(g, 1, n, 51), y;
  fuse_plan *p = NULL;
  outs ref, got;
  sbuf t;
  y = fuse_minimum(g, fuse_scalar(g, 0.5f), fuse_maximum(g, fuse_add(g, b, mm), fuse_scalar(g, -0.5f)));
  fuse_output(g, y);
  CHECK(eval(g, NULL, &ref));
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
  CHECK_EQ_INT(fuse_plan_step_count(p), 1);
  t.len = 0;
  t.s[0] = 0;
  fuse_plan_write(p, sbuf_write, &t);
  CHECK_STR_CONTAINS(t.s, "matmul + bias + clamp[-0.5, 0.5]");
  CHECK_STR_CONTAINS(t.s, "fuse.matmul_bias_relu");
  fuse_plan_destroy(p);
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "matmul bias clip fused"));
  outs_free(&got);
  outs_free(&ref);
  fuse_graph_destroy(g);
}

/* A composite whose intermediate is read outside (allow_escaping) must not run fused as one
   step that skips the intermediate; numbers still match. */
TEST(plan_escaping_intermediate_still_correct) {
  static const fuse_rule rule = {"fuse.conv2d_bias_relu", "relu(add(conv2d(*, *), const))", NULL, NULL};
  fuse_pattern_options o;
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t k1111[4] = {1, CK, 1, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), sum = fuse_add(g, conv, cst(g, 4, k1111, 52));
  fuse_value y = fuse_relu(g, sum);
  outs ref, got;
  fuse_output(g, y);
  fuse_output(g, sum); /* the intermediate escapes */
  CHECK(eval(g, NULL, &ref));
  memset(&o, 0, sizeof o);
  o.allow_escaping = 1;
  CHECK_EQ_INT(fuse_ops_by_pattern(g, &rule, 1, &o), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "escaping composite"));
  outs_free(&got);
  outs_free(&ref);
  fuse_graph_destroy(g);
}

/* Every bias form and every clamp order above, fused through the plan: covered by
   epilogue_case's number checks (fuse_optimize then fuse_compile); here the plan's text for the
   conv bias forms says "+ bias" and has one step. */
TEST(plan_bias_forms_one_step) {
  int v;
  for (v = 0; v < 14; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_plan *p = NULL;
    want w;
    sbuf t;
    build_conv_bias(g, v, &w);
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
    t.len = 0;
    t.s[0] = 0;
    fuse_plan_write(p, sbuf_write, &t);
    /* form 6 computes its bias (a relu) in a step of its own first */
    if (fuse_plan_step_count(p) != (v / 2 == 6 ? 2 : 1) || !strstr(t.s, "conv2d + bias ->"))
      fprintf(stderr, "    variant %d plan:\n%s", v, t.s);
    CHECK_EQ_INT(fuse_plan_step_count(p), v / 2 == 6 ? 2 : 1);
    CHECK_STR_CONTAINS(t.s, "conv2d + bias ->");
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
  }
}
#endif

int main(void) {
  RUN(conv2d_bias_every_form_either_side);
  RUN(matmul_bias_n_and_1n_either_side);
  RUN(batched_matmul_bias_relu);
  RUN(residual_add_either_side);
  RUN(bias_residual_clamp);
  RUN(clamps_relu_clip_maximum_minimum);
  RUN(seed002_five_orders_one_clamp);
  RUN(adjacent_clamps_compose);
  RUN(post_op_order_kept);
  RUN(inside_user_composites);
  RUN(refuses_bias_that_broadcasts_along_width);
  RUN(refusals_say_why);
  RUN(long_clamp_chains);
  RUN(user_composites_run_correctly);
  RUN(refuses_nan_bound);
  RUN(bad_arguments_do_not_crash);
  RUN(matmul_rank0_result_no_crash);
  RUN(matmul_vector_rhs_bias_numbers);
  RUN(epilogue_runs_once_not_per_step);
  RUN(bias_added_once);
  RUN(fold_batch_norm_folds_and_matches);
  RUN(fold_batch_norm_refuses);
  RUN(optimize_seed_chain);
  RUN(optimize_conv_bn_relu);
  RUN(optimize_conv_bn_relu_reshaped_weight);
  RUN(optimize_resnet_block);
  RUN(optimize_matmul_bias_clip);
  RUN(optimize_unknown_codegen);
  RUN(rules_default);
#if TEST_PLAN_WRITE
  RUN(plan_seed_chain_one_step);
  RUN(plan_matmul_bias_clip_one_step);
  RUN(plan_escaping_intermediate_still_correct);
  RUN(plan_bias_forms_one_step);
#endif
  return runner_finish("epilogue");
}
