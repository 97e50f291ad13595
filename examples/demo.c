/* demo.c - the seeds' network on fuse.h: three layers of
   conv2d 3x3 pad 1 (64 -> 64) -> reshape(bias [64] -> [1, 64, 1, 1]) -> add -> relu
   on a 1x64x56x56 input, the chain PyTorch's importer produces for Conv2d(bias=True) + ReLU.

   The same network is built twice. One copy runs as built, one op per step (four steps per
   layer). The other goes through fuse_optimize(g, "fuse") first: the reshape of the constant
   bias folds into a constant, and the built-in rules turn each conv2d -> add -> relu chain
   into one composite whose analyzed epilogue (bias, then clamp [0, inf]) fuse_compile runs
   with the convolution, applied once per output element after the reduction.

   Prints both graphs, the fused plan's steps, the median time of 5 runs of each (the two
   plans run in turn, after one warm-up run each) with its GFLOP/s (counting the
   convolutions' multiply-adds), the speed-up, and the largest difference of the outputs.
   The fused plan runs each layer as one step (the conv kernel applies bias and relu on its
   registers before the one store); the unfused plan also runs the conv on those kernels, then
   an add pass and a relu pass over the output, which fusion saves.

   Build and run: make demo   (or: cc -std=c99 -O2 -I. examples/demo.c -lm -lpthread) */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#define FUSE_IMPLEMENTATION
#include "fuse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LAYERS 3
#define CHANNELS 64
#define SIZE 56
#define RUNS 5

static uint32_t rng_state;

static float uniform(void) { /* xorshift32 -> [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return (float)((double)(rng_state >> 8) / 8388608.0 - 1.0);
}

static double now_ms(void) {
#if defined(CLOCK_MONOTONIC)
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
#else
  return (double)clock() * 1e3 / CLOCKS_PER_SEC;
#endif
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The network; the weights come from a fixed seed, so two calls build the same graph. */
static fuse_graph *build(void) {
  const int64_t x_shape[4] = {1, CHANNELS, SIZE, SIZE};
  const int64_t w_shape[4] = {CHANNELS, CHANNELS, 3, 3};
  const int64_t b_shape[1] = {CHANNELS};
  const int64_t b_4d[4] = {1, CHANNELS, 1, 1};
  const size_t w_count = (size_t)CHANNELS * CHANNELS * 3 * 3;
  const float w_scale = (float)(1.0 / sqrt((double)CHANNELS * 3 * 3)); /* ~1/sqrt(fan_in) */
  fuse_conv2d_attrs conv = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  fuse_graph *g = fuse_graph_create(NULL);
  float *w = (float *)malloc(w_count * sizeof(float));
  float b[CHANNELS];
  fuse_value v;
  size_t i;
  int layer;

  if (!g || !w) {
    fuse_graph_destroy(g);
    free(w);
    return NULL;
  }
  rng_state = 777u;
  v = fuse_input(g, "input", 4, x_shape);
  for (layer = 1; layer <= LAYERS; layer++) {
    char w_name[32], b_name[32];
    fuse_value wv, bv, conv_out, bias_4d, biased;
    sprintf(w_name, "conv%d.weight", layer);
    sprintf(b_name, "conv%d.bias", layer);
    for (i = 0; i < w_count; i++) w[i] = uniform() * w_scale;
    for (i = 0; i < CHANNELS; i++) b[i] = uniform() * 0.1f;
    wv = fuse_constant(g, w_name, 4, w_shape, w); /* copied: w is reused */
    bv = fuse_constant(g, b_name, 1, b_shape, b);
    /* one call per statement, so the ops are created (and printed) in this order */
    conv_out = fuse_conv2d(g, v, wv, &conv);
    bias_4d = fuse_reshape(g, bv, 4, b_4d);
    biased = fuse_add(g, conv_out, bias_4d);
    v = fuse_relu(g, biased);
  }
  fuse_output(g, v);
  free(w);
  return g;
}

static void write_stdout(void *user, const char *text, size_t len) {
  (void)user;
  fwrite(text, 1, len, stdout);
}

/* Compiles g (then destroys it: the plan owns copies of the constants) and prints the plan;
   show_steps: list its steps. NULL on failure. */
static fuse_plan *compile(fuse_graph *g, const char *label, int show_steps) {
  fuse_plan *plan = NULL;
  fuse_result r = fuse_compile(g, NULL, &plan);
  fuse_graph_destroy(g);
  if (r != FUSE_OK) {
    fprintf(stderr, "demo: fuse_compile (%s) failed: %s\n", label, fuse_result_string(r));
    return NULL;
  }
  printf("plan (%s): %d steps, workspace %.2f MiB\n", label, fuse_plan_step_count(plan),
         (double)fuse_plan_workspace_size(plan) / (1024.0 * 1024.0));
  if (show_steps) fuse_plan_write(plan, write_stdout, NULL);
  return plan;
}

/* One run of plan on x into y: its time in ms, or a negative number on failure. */
static double time_run(fuse_plan *plan, const float *x, float *y) {
  const float *inputs[1];
  float *outputs[1];
  double t0 = now_ms();
  inputs[0] = x;
  outputs[0] = y;
  if (fuse_run(plan, inputs, outputs, NULL) != FUSE_OK) return -1.0;
  return now_ms() - t0;
}

int main(void) {
  const size_t x_count = (size_t)CHANNELS * SIZE * SIZE;
  /* multiply-adds of the convolutions, 2 FLOP each; the adds and relus are not counted */
  const double flop = 2.0 * LAYERS * CHANNELS * CHANNELS * 3 * 3 * SIZE * SIZE;
  fuse_graph *plain = build(), *fused = build();
  float *x = (float *)malloc(x_count * sizeof(float));
  float *y_plain = (float *)malloc(x_count * sizeof(float));
  float *y_fused = (float *)malloc(x_count * sizeof(float));
  double t_plain[RUNS], t_fused[RUNS], max_diff = 0.0, max_abs = 0.0;
  fuse_plan *plan_plain, *plan_fused;
  int ops_plain, ops_fused, run;
  fuse_result r;
  size_t i;

  if (!plain || !fused || !x || !y_plain || !y_fused) {
    fprintf(stderr, "demo: out of memory\n");
    return 1;
  }
  if (fuse_graph_status(plain) != FUSE_OK) { /* the first failing call's message */
    fprintf(stderr, "demo: building the graph failed: %s\n", fuse_graph_error(plain));
    return 1;
  }
  rng_state = 12345u;
  for (i = 0; i < x_count; i++) x[i] = uniform();

  ops_plain = fuse_graph_op_count(plain);
  printf("== before: %d ops, four per layer\n", ops_plain);
  fuse_graph_print(plain, stdout);

  r = fuse_optimize(fused, "fuse");
  if (r != FUSE_OK) {
    fprintf(stderr, "demo: fuse_optimize failed: %s: %s\n", fuse_result_string(r),
            fuse_graph_error(fused));
    return 1;
  }
  ops_fused = fuse_graph_op_count(fused);
  printf("\n== after fuse_optimize(g, \"fuse\"): %d ops, %d composites\n", ops_fused,
         fuse_composite_count(fused));
  fuse_graph_print(fused, stdout);

  printf("\n");
  plan_plain = compile(plain, "unfused", 0);
  plan_fused = compile(fused, "fused", 1);
  if (!plan_plain || !plan_fused) return 1;
  /* one warm-up run each, then the two plans in turn, so both see the same machine load */
  if (time_run(plan_plain, x, y_plain) < 0 || time_run(plan_fused, x, y_fused) < 0) {
    fprintf(stderr, "demo: fuse_run failed\n");
    return 1;
  }
  for (run = 0; run < RUNS; run++) {
    t_plain[run] = time_run(plan_plain, x, y_plain);
    t_fused[run] = time_run(plan_fused, x, y_fused);
    if (t_plain[run] < 0 || t_fused[run] < 0) {
      fprintf(stderr, "demo: fuse_run failed\n");
      return 1;
    }
  }
  fuse_plan_destroy(plan_plain);
  fuse_plan_destroy(plan_fused);
  qsort(t_plain, RUNS, sizeof t_plain[0], compare_doubles);
  qsort(t_fused, RUNS, sizeof t_fused[0], compare_doubles);
  printf("unfused: %2d ops: %8.2f ms per run (median of %d), %.2f GFLOP/s\n", ops_plain,
         t_plain[RUNS / 2], RUNS, flop / (t_plain[RUNS / 2] * 1e-3) * 1e-9);
  printf("fused:   %2d ops: %8.2f ms per run (median of %d), %.2f GFLOP/s\n", ops_fused,
         t_fused[RUNS / 2], RUNS, flop / (t_fused[RUNS / 2] * 1e-3) * 1e-9);
  printf("speed-up: %.2fx (%.3f GFLOP per run)\n", t_plain[RUNS / 2] / t_fused[RUNS / 2],
         flop * 1e-9);

  for (i = 0; i < x_count; i++) {
    double d = fabs((double)y_fused[i] - (double)y_plain[i]);
    if (d > max_diff) max_diff = d;
    if (fabs((double)y_plain[i]) > max_abs) max_abs = fabs((double)y_plain[i]);
  }
  printf("max |fused - unfused| = %.3g (max |y| = %.3g)\n", max_diff, max_abs);

  free(x);
  free(y_plain);
  free(y_fused);
  return max_diff <= 1e-5 * (max_abs > 1.0 ? max_abs : 1.0) ? 0 : 1;
}
