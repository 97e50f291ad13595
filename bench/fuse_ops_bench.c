/* fuse_ops_bench.c - how long the fusion passes take on a large graph.

   The graph: 2,500 chains conv2d -> reshape(bias) -> add -> relu on 1x4x4x4 tensors, each
   chain feeding the next (10,000 ops). Timed, each on 5 freshly built graphs (median):
     - fuse_ops_by_pattern with the seed rule
         dnnl.conv2d_reshape_add_relu: relu(add(conv2d($data, $weight), reshape($bias, *)))
     - fuse_merge_composites after it
     - fuse_optimize(g, "dnnl") (fold batch-norm and constant reshapes, 16 default rules, merge)
   Build: cc -O2 -I. bench/fuse_ops_bench.c -lm        Run: ./a.out [chains] */
#define _POSIX_C_SOURCE 200809L
#define FUSE_IMPLEMENTATION
#include "fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 5

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static fuse_graph *build(int chains) {
  static const int64_t xs[4] = {1, 4, 4, 4}, ws[4] = {4, 4, 3, 3}, bs[1] = {4}, rs[4] = {1, 4, 1, 1};
  float w[4 * 4 * 3 * 3], b[4];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs a;
  fuse_value v;
  int i, k;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  for (k = 0; k < 144; k++) w[k] = (float)((k * 37) % 11 - 5) * 0.02f;
  for (k = 0; k < 4; k++) b[k] = 0.1f * (float)k;
  v = fuse_input(g, "data", 4, xs);
  for (i = 0; i < chains; i++) {
    fuse_value wt = fuse_constant(g, NULL, 4, ws, w), bias = fuse_constant(g, NULL, 1, bs, b);
    fuse_value c = fuse_conv2d(g, v, wt, &a);
    v = fuse_relu(g, fuse_add(g, c, fuse_reshape(g, bias, 4, rs)));
  }
  fuse_output(g, v);
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "build: %s\n", fuse_graph_error(g));
    exit(1);
  }
  return g;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *t) {
  qsort(t, RUNS, sizeof *t, cmp_double);
  return t[RUNS / 2];
}

static void report(const char *what, double ms, int ops) {
  printf("  %-44s %9.2f ms  %12.0f ops/s\n", what, ms, ops / (ms * 1e-3));
}

int main(int argc, char **argv) {
  int chains = argc > 1 ? atoi(argv[1]) : 2500, r, ops = 0, comps = 0, after = 0;
  double t_pat[RUNS], t_merge[RUNS], t_opt[RUNS], t_build[RUNS];
  fuse_rule rule;
  if (chains < 1) chains = 1;
  rule.name = "dnnl.conv2d_reshape_add_relu";
  rule.pattern = "relu(add(conv2d($data, $weight), reshape($bias, *)))";
  rule.check = NULL;
  rule.user = NULL;
  for (r = 0; r < RUNS; r++) {
    double t0 = now_ms(), t1, t2, t3;
    fuse_graph *g = build(chains);
    t1 = now_ms();
    ops = fuse_graph_op_count(g);
    if (fuse_ops_by_pattern(g, &rule, 1, NULL) != FUSE_OK) {
      fprintf(stderr, "fuse_ops_by_pattern: %s\n", fuse_graph_error(g));
      return 1;
    }
    t2 = now_ms();
    if (fuse_merge_composites(g) != FUSE_OK) {
      fprintf(stderr, "fuse_merge_composites: %s\n", fuse_graph_error(g));
      return 1;
    }
    t3 = now_ms();
    comps = fuse_composite_count(g);
    t_build[r] = t1 - t0;
    t_pat[r] = t2 - t1;
    t_merge[r] = t3 - t2;
    fuse_graph_destroy(g);
  }
  printf("graph: %d chains conv2d -> reshape(bias) -> add -> relu, 1x4x4x4, %d ops\n", chains, ops);
  printf("median of %d fresh graphs:\n", RUNS);
  report("build the graph", median(t_build), ops);
  report("fuse_ops_by_pattern (seed rule)", median(t_pat), ops);
  report("fuse_merge_composites (after it)", median(t_merge), ops);
  printf("  -> %d composites\n", comps);
  for (r = 0; r < RUNS; r++) {
    fuse_graph *g = build(chains);
    double t0 = now_ms();
    if (fuse_optimize(g, "dnnl") != FUSE_OK) {
      fprintf(stderr, "fuse_optimize: %s\n", fuse_graph_error(g));
      return 1;
    }
    t_opt[r] = now_ms() - t0;
    comps = fuse_composite_count(g);
    after = fuse_graph_op_count(g);
    fuse_graph_destroy(g);
  }
  report("fuse_optimize(g, \"dnnl\")", median(t_opt), ops);
  printf("  -> %d composites, %d ops after\n", comps, after);
  return 0;
}
