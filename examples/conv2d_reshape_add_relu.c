/* conv2d_reshape_add_relu.c - seeds 000 / 001: the chain PyTorch's importer writes for
   Conv2d(bias=True) + ReLU,

       conv2d(data, weight) -> reshape(bias, [1, 64, 1, 1]) -> add -> relu

   fused by one pattern rule into the composite "dnnl.conv2d_reshape_add_relu", then merged
   (the composite gets codegen "dnnl" and a region, as TVM's MergeCompositeFunctions does).

   The composite's name is only a name: TVM's DNNL runtime picks post-ops from substrings of
   it, and "conv2d_reshape_add_relu" contains no "bias", so the bias is lost there. fuse.h
   hands kernels and backends the analyzed epilogue instead, and the analyzer finds the bias
   through the reshape. Finally the fused and the unfused graph run on the same input.

   Build and run: make examples && ./build/conv2d_reshape_add_relu   (--short: results only) */
#define FUSE_IMPLEMENTATION
#include "fuse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define C 64
#define S 56

static uint32_t rng_state = 2024u;

static float uniform(void) { /* xorshift32 -> [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return (float)((double)(rng_state >> 8) / 8388608.0 - 1.0);
}

static int fail(const char *what, fuse_graph *g) {
  fprintf(stderr, "conv2d_reshape_add_relu: %s failed: %s\n", what, g ? fuse_graph_error(g) : "");
  return 1;
}

/* The seed's module: data 1x64x56x56, weight 64x64x3x3, bias [64]; conv2d with padding 1. */
static fuse_graph *build(const float *weight, const float *bias) {
  const int64_t x_shape[4] = {1, C, S, S}, w_shape[4] = {C, C, 3, 3};
  const int64_t b_shape[1] = {C}, b_4d[4] = {1, C, 1, 1};
  fuse_conv2d_attrs pad1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value data, w, b, conv, reshaped, added, out;
  if (!g) return NULL;
  data = fuse_input(g, "data", 4, x_shape);
  w = fuse_constant(g, "weight", 4, w_shape, weight);
  b = fuse_constant(g, "bias", 1, b_shape, bias);
  conv = fuse_conv2d(g, data, w, &pad1);
  reshaped = fuse_reshape(g, b, 4, b_4d);
  added = fuse_add(g, conv, reshaped);
  out = fuse_relu(g, added);
  fuse_output(g, out);
  return g;
}

static void print_epilogue(const fuse_graph *g, const fuse_epilogue *e) {
  int k;
  const char *bias = e->bias == FUSE_NONE ? NULL : fuse_value_name(g, e->bias);
  printf("  reduction: %s\n", e->reduction == FUSE_NONE ? "none" : "conv2d");
  if (e->bias == FUSE_NONE) printf("  bias: none\n");
  else
    printf("  bias: %%%s [%lld] (the reshape's source: found through the reshape)\n",
           bias ? bias : "?", (long long)fuse_value_shape(g, e->bias)[0]);
  for (k = 0; k < e->num_post; k++) {
    if (e->post[k].kind == FUSE_POST_CLAMP)
      printf("  post-op %d: clamp [%g, %g]%s\n", k, (double)e->post[k].lo, (double)e->post[k].hi,
             e->post[k].lo == 0.0f && isinf(e->post[k].hi) ? "  (relu)" : "");
    else
      printf("  post-op %d: add (residual)\n", k);
  }
}

/* The rule's check (the seed's _check): the bias has one value per output channel. It sees
   the captures; returning 0 rejects the match. */
static int bias_per_channel(const fuse_graph *g, const fuse_match *m, void *user) {
  fuse_value w = fuse_match_capture(m, "weight"), b = fuse_match_capture(m, "bias");
  int64_t count = 1;
  int d;
  (void)user;
  if (w == FUSE_NONE || b == FUSE_NONE) return 0;
  for (d = 0; d < fuse_value_rank(g, b); d++) count *= fuse_value_shape(g, b)[d];
  return count == fuse_value_shape(g, w)[0];
}

static void write_stdout(void *user, const char *text, size_t len) {
  (void)user;
  fwrite(text, 1, len, stdout);
}

/* Runs g once on x into y (C * S * S floats); label != NULL: prints the plan's steps. */
static fuse_result run(const fuse_graph *g, const float *x, float *y, const char *label) {
  fuse_plan *plan = NULL;
  const float *inputs[1];
  float *outputs[1];
  fuse_result r = fuse_compile(g, NULL, &plan);
  if (r != FUSE_OK) return r;
  if (label) {
    printf("plan (%s): %d step%s\n", label, fuse_plan_step_count(plan),
           fuse_plan_step_count(plan) == 1 ? "" : "s");
    fuse_plan_write(plan, write_stdout, NULL);
  }
  inputs[0] = x;
  outputs[0] = y;
  r = fuse_run(plan, inputs, outputs, NULL);
  fuse_plan_destroy(plan);
  return r;
}

int main(int argc, char **argv) {
  const fuse_rule rule = {"dnnl.conv2d_reshape_add_relu",
                          "relu(add(conv2d($data, $weight), reshape($bias, *)))", bias_per_channel,
                          NULL};
  const size_t n_x = (size_t)C * S * S, n_w = (size_t)C * C * 3 * 3;
  float *x = (float *)malloc(n_x * sizeof(float)), *w = (float *)malloc(n_w * sizeof(float));
  float *y_fused = (float *)malloc(n_x * sizeof(float));
  float *y_plain = (float *)malloc(n_x * sizeof(float));
  float bias[C];
  double max_diff = 0.0, max_abs = 0.0;
  fuse_graph *fused = NULL, *plain = NULL;
  fuse_composite_info info;
  fuse_result r;
  size_t i;
  int ops_before;
  const int verbose = !(argc > 1 && strcmp(argv[1], "--short") == 0);

  if (!x || !w || !y_fused || !y_plain) return fail("malloc", NULL);
  for (i = 0; i < n_x; i++) x[i] = uniform();
  for (i = 0; i < n_w; i++) w[i] = uniform() / 24.0f; /* ~ 1 / sqrt(fan_in = 576) */
  for (i = 0; i < C; i++) bias[i] = uniform() * 0.5f;

  fused = build(w, bias);
  plain = build(w, bias);
  if (!fused || !plain) return fail("fuse_graph_create", NULL);
  if (fuse_graph_status(fused) != FUSE_OK) return fail("building the graph", fused);

  ops_before = fuse_graph_op_count(fused);
  if (verbose) {
    printf("== before: %d ops, as PyTorch's importer writes Conv2d(bias=True) + ReLU\n",
           fuse_graph_op_count(fused));
    fuse_graph_print(fused, stdout);
    printf("\n");
  }
  printf("== rule {\"%s\", \"%s\"}\n   check: one bias value per output channel\n", rule.name,
         rule.pattern);
  if (fuse_ops_by_pattern(fused, &rule, 1, NULL) != FUSE_OK) return fail("fuse_ops_by_pattern", fused);
  if (fuse_merge_composites(fused) != FUSE_OK) return fail("fuse_merge_composites", fused);
  if (fuse_composite_count(fused) != 1 || fuse_composite_get(fused, 0, &info) != FUSE_OK)
    return fail("finding the composite", fused);
  if (verbose) {
    printf("== after fuse_ops_by_pattern + fuse_merge_composites: %d op, %d composite\n",
           fuse_graph_op_count(fused), fuse_composite_count(fused));
    fuse_graph_print(fused, stdout);
  }
  printf("%d ops -> %d: composite %s, function %s, codegen %s, region %d, %d ops inside\n",
         ops_before, fuse_graph_op_count(fused), info.name, info.function,
         info.codegen ? info.codegen : "none", info.region, info.num_ops);

  printf("%s== analyzed epilogue (what a kernel or backend receives; never the name)\n",
         verbose ? "\n" : "");
  if (!info.has_epilogue) {
    printf("  not an epilogue: %s\n", info.epilogue.why);
    return 1;
  }
  print_epilogue(fused, &info.epilogue);
  if (verbose)
    printf("  the name \"%s\" has no \"bias\" in it: TVM's DNNL runtime, which reads post-ops\n"
           "  from the name, would run conv2d + relu and drop the bias.\n\n", info.name);

  printf("== run: fused vs unfused on the same input\n");
  if ((r = run(fused, x, y_fused, verbose ? "fused" : NULL)) != FUSE_OK) {
    fprintf(stderr, "fused run: %s\n", fuse_result_string(r));
    return 1;
  }
  if ((r = run(plain, x, y_plain, verbose ? "unfused" : NULL)) != FUSE_OK) {
    fprintf(stderr, "unfused run: %s\n", fuse_result_string(r));
    return 1;
  }
  for (i = 0; i < n_x; i++) {
    double d = fabs((double)y_fused[i] - (double)y_plain[i]);
    if (d > max_diff) max_diff = d;
    if (fabs((double)y_plain[i]) > max_abs) max_abs = fabs((double)y_plain[i]);
  }
  printf("max |fused - unfused| = %.3g (max |y| = %.3g, relative %.3g)\n", max_diff, max_abs,
         max_abs > 0 ? max_diff / max_abs : 0.0);

  fuse_graph_destroy(fused);
  fuse_graph_destroy(plain);
  free(x);
  free(w);
  free(y_fused);
  free(y_plain);
  return max_diff <= 1e-5 * (max_abs > 1 ? max_abs : 1) ? 0 : 1;
}
