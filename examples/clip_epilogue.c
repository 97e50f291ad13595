/* clip_epilogue.c - seed 002: clipping after a matmul, min(max(x, lo), hi), in every operand
   order the seed's test writes, plus relu6 and a clip of a clip. For each, the epilogue
   analyzer returns one clamp [lo, hi].

   Then the point where fuse.h and the seed part ways. The seed's fuse_reduction_epilogue
   puts the clamp inside the reduction loop ("per iteration, to keep the semantics"):

       D = clamp(0);  for k: D = clamp(D + a[k] * b[k])      (per step: wrong)

   but the graph says clamp(sum_k a[k] * b[k]): the clamp belongs after the whole sum.

       D = 0;         for k: D = D + a[k] * b[k];  D = clamp(D)   (once: what fuse.h does)

   With products -1 then +2 and a relu, once gives 1 and per step gives 2. The example
   computes both with explicit loops and runs the graph through fuse.h, fused and unfused.

   Build and run: make examples && ./build/clip_epilogue   (--short: results only) */
#define FUSE_IMPLEMENTATION
#include "fuse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 4
#define K 8
#define N 5

/* The ways to write the clipping; x is the matmul, lo / hi scalar constants. */
enum { MIN_MAX, MIN_SWAPPED, MAX_ARGS_SWAPPED, MAX_MIN, MAX_MIN_SWAPPED, RELU6, CLIP_CLIP, VARIANTS };
static const char *const variant_text[VARIANTS] = {
    "minimum(maximum(x, lo), hi)", /* T.min(T.max(temp, lower), upper) */
    "minimum(hi, maximum(x, lo))", /* T.min(upper, T.max(temp, lower)) */
    "minimum(maximum(lo, x), hi)", /* T.min(T.max(lower, temp), upper) */
    "maximum(minimum(x, hi), lo)", /* T.max(T.min(temp, upper), lower) */
    "maximum(lo, minimum(x, hi))", /* T.max(lower, T.min(temp, upper)) */
    "minimum(relu(x), 6)",         /* relu6: relu, then min(., 6) */
    "clip(clip(x, -1, 4), 0, 6)",  /* clip of clip: the intersection [0, 4] */
};

/* A pattern per shape of expression; maximum / minimum match either operand order. */
static const fuse_rule rules[3] = {
    {"fuse.matmul_clip",
     "minimum(maximum(matmul($a, $b), $lo:const), $hi:const)"
     " | maximum(minimum(matmul($a, $b), $hi:const), $lo:const)",
     NULL, NULL},
    {"fuse.matmul_relu6", "minimum(relu(matmul($a, $b)), $hi:const)", NULL, NULL},
    {"fuse.matmul_clip_clip", "clip(clip(matmul($a, $b)))", NULL, NULL},
};

static float a_data[M * K], b_data[K * N];

static fuse_graph *build(int variant, float lo_v, float hi_v) {
  const int64_t a_shape[2] = {M, K}, b_shape[2] = {K, N};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value a = fuse_input(g, "a", 2, a_shape);
  fuse_value b = fuse_constant(g, "b", 2, b_shape, b_data);
  fuse_value x = fuse_matmul(g, a, b), y = FUSE_NONE;
  fuse_value lo = fuse_scalar(g, lo_v), hi = fuse_scalar(g, hi_v);
  switch (variant) {
  case MIN_MAX: y = fuse_minimum(g, fuse_maximum(g, x, lo), hi); break;
  case MIN_SWAPPED: y = fuse_minimum(g, hi, fuse_maximum(g, x, lo)); break;
  case MAX_ARGS_SWAPPED: y = fuse_minimum(g, fuse_maximum(g, lo, x), hi); break;
  case MAX_MIN: y = fuse_maximum(g, fuse_minimum(g, x, hi), lo); break;
  case MAX_MIN_SWAPPED: y = fuse_maximum(g, lo, fuse_minimum(g, x, hi)); break;
  case RELU6: y = fuse_minimum(g, fuse_relu(g, x), fuse_scalar(g, 6.0f)); break;
  case CLIP_CLIP: y = fuse_clip(g, fuse_clip(g, x, -1.0f, 4.0f), 0.0f, 6.0f); break;
  }
  fuse_output(g, y);
  return g;
}

static void print_epilogue(const char *prefix, const fuse_epilogue *e) {
  int k;
  printf("%sbias %s", prefix, e->bias == FUSE_NONE ? "none" : "yes");
  for (k = 0; k < e->num_post; k++) {
    if (e->post[k].kind == FUSE_POST_CLAMP)
      printf(", clamp [%g, %g]", (double)e->post[k].lo, (double)e->post[k].hi);
    else
      printf(", add (residual)");
  }
  printf("  (%d post-op%s)\n", e->num_post, e->num_post == 1 ? "" : "s");
}

/* Runs g (input a [M, K] -> output [M, N] or whatever its output holds) into y. */
static fuse_result run(const fuse_graph *g, const float *a, float *y) {
  fuse_plan *plan = NULL;
  const float *inputs[1];
  float *outputs[1];
  fuse_result r = fuse_compile(g, NULL, &plan);
  if (r != FUSE_OK) return r;
  inputs[0] = a;
  outputs[0] = y;
  r = fuse_run(plan, inputs, outputs, NULL);
  fuse_plan_destroy(plan);
  return r;
}

static float clampf(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }

/* One output element two ways: the clamp once after the sum, or on every step (the seed). */
static void one_element(const char *what, int n, const float *a, const float *b, float lo, float hi,
                        float *once, float *per_step) {
  float d = 0.0f;
  int k;
  for (k = 0; k < n; k++) d += a[k] * b[k];
  *once = clampf(d, lo, hi);
  d = clampf(0.0f, lo, hi); /* the seed also clips the init value */
  for (k = 0; k < n; k++) d = clampf(d + a[k] * b[k], lo, hi);
  *per_step = d;
  printf("  %s, products", what);
  for (k = 0; k < n; k++) printf(" %+g", (double)(a[k] * b[k]));
  printf(": once = %g, per step = %g\n", (double)*once, (double)*per_step);
}

/* The same element through fuse.h: matmul [1, n] x [n, 1] -> clip, fused and unfused. */
static int through_fuse(int n, const float *a, const float *b, float lo, float hi, float want) {
  const int64_t a_shape[2] = {1, n}, b_shape[2] = {n, 1};
  float y[2] = {0, 0};
  fuse_graph *g[2];
  int i, ok = 1;
  for (i = 0; i < 2; i++) {
    fuse_value x;
    g[i] = fuse_graph_create(NULL);
    x = fuse_matmul(g[i], fuse_input(g[i], "a", 2, a_shape), fuse_constant(g[i], "b", 2, b_shape, b));
    fuse_output(g[i], lo == 0.0f && isinf(hi) ? fuse_relu(g[i], x) : fuse_clip(g[i], x, lo, hi));
  }
  if (fuse_optimize(g[1], "fuse") != FUSE_OK || fuse_composite_count(g[1]) != 1 ||
      run(g[0], a, &y[0]) != FUSE_OK || run(g[1], a, &y[1]) != FUSE_OK) {
    fprintf(stderr, "clip_epilogue: %s%s\n", fuse_graph_error(g[0]), fuse_graph_error(g[1]));
    ok = 0;
  }
  printf("  fuse.h: unfused %g, fused %g%s\n", (double)y[0], (double)y[1],
         y[0] == want && y[1] == want ? " (= once)" : "  MISMATCH");
  for (i = 0; i < 2; i++) fuse_graph_destroy(g[i]);
  return ok && y[0] == want && y[1] == want;
}

int main(int argc, char **argv) {
  const float lo = -0.5f, hi = 0.5f;
  float a_plain[M * N], a_fused[M * N], once, per_step;
  int v, i, failed = 0;
  const int verbose = !(argc > 1 && strcmp(argv[1], "--short") == 0);
  for (i = 0; i < M * K; i++) a_data[i] = (float)((i * 7) % 11 - 5) * 0.25f;
  for (i = 0; i < K * N; i++) b_data[i] = (float)((i * 5) % 9 - 4) * 0.125f;

  printf("=== matmul [%d, %d] x [%d, %d] -> clipping, lo = %g, hi = %g\n", M, K, K, N, (double)lo,
         (double)hi);
  if (verbose) {
    printf("rules:\n");
    for (i = 0; i < 3; i++) printf("  {\"%s\", \"%s\"}\n", rules[i].name, rules[i].pattern);
  }
  for (v = 0; v < VARIANTS; v++) {
    fuse_graph *plain = build(v, lo, hi), *g = build(v, lo, hi);
    fuse_composite_info info;
    double diff = 0.0;
    if (fuse_graph_status(g) != FUSE_OK) {
      fprintf(stderr, "clip_epilogue: %s\n", fuse_graph_error(g));
      return 1;
    }
    if (verbose) printf("\n%d. %s\n", v + 1, variant_text[v]);
    else printf("%d. %-28s", v + 1, variant_text[v]);
    if (v == 0 && verbose) {
      printf("--- before\n");
      fuse_graph_print(g, stdout);
    }
    if (fuse_ops_by_pattern(g, rules, 3, NULL) != FUSE_OK || fuse_composite_count(g) != 1 ||
        fuse_composite_get(g, 0, &info) != FUSE_OK) {
      printf("    not fused: %s\n", fuse_graph_error(g));
      failed = 1;
    } else {
      if (v == 0 && verbose) {
        printf("--- after\n");
        fuse_graph_print(g, stdout);
      }
      if (verbose) printf("    composite %s (%s, %d ops)\n", info.name, info.function, info.num_ops);
      if (info.has_epilogue) print_epilogue(verbose ? "    epilogue: " : " -> epilogue: ", &info.epilogue);
      else {
        printf("    not an epilogue: %s\n", info.epilogue.why);
        failed = 1;
      }
    }
    if (run(plain, a_data, a_plain) != FUSE_OK || run(g, a_data, a_fused) != FUSE_OK) {
      fprintf(stderr, "clip_epilogue: running variant %d failed\n", v + 1);
      return 1;
    }
    for (i = 0; i < M * N; i++)
      if (fabs((double)a_plain[i] - (double)a_fused[i]) > diff) diff = fabs((double)a_plain[i] - (double)a_fused[i]);
    if (verbose || diff > 1e-6) printf("    max |fused - unfused| = %g\n", diff);
    failed |= diff > 1e-6;
    fuse_graph_destroy(plain);
    fuse_graph_destroy(g);
  }

  printf("%s=== clamp once (fuse.h) vs on every reduction step (seed 002's fuse_reduction_epilogue)\n",
         verbose ? "\n" : "");
  {
    const float a1[2] = {1.0f, 1.0f}, b1[2] = {-1.0f, 2.0f};
    const float a2[3] = {1.0f, 1.0f, 1.0f}, b2[3] = {5.0f, 5.0f, -4.0f};
    one_element("relu", 2, a1, b1, 0.0f, HUGE_VALF, &once, &per_step);
    failed |= !(once == 1.0f && per_step == 2.0f);
    failed |= !through_fuse(2, a1, b1, 0.0f, HUGE_VALF, once);
    one_element("relu6 = clamp [0, 6]", 3, a2, b2, 0.0f, 6.0f, &once, &per_step);
    failed |= !(once == 6.0f && per_step == 2.0f);
    failed |= !through_fuse(3, a2, b2, 0.0f, 6.0f, once);
  }
  printf("=> the clamp of a sum is not the sum of clamped steps; fuse.h clamps once, after the\n"
         "   whole reduction, before the store.\n");
  return failed;
}
