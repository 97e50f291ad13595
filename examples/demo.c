/* demo.c - the seeds' network on fuse.h: three layers of
   conv2d 3x3 pad 1 (64 -> 64) -> reshape(bias [64] -> [1, 64, 1, 1]) -> add -> relu
   on a 1x64x56x56 input, the chain PyTorch's importer produces for Conv2d(bias=True) + ReLU.

   Prints the graph, the workspace size, the median time of 5 runs with its GFLOP/s (counting
   the convolutions' multiply-adds), and a checksum of the output.

   v0.1 runs every op as its own step with the scalar reference kernels: four kernels per
   layer. A later version fuses each conv2d -> reshape -> add -> relu chain into one
   composite (fuse_optimize) that runs as one kernel, and this demo will show it.

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

static uint32_t rng_state = 12345u;

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

int main(void) {
  const int64_t x_shape[4] = {1, CHANNELS, SIZE, SIZE};
  const int64_t w_shape[4] = {CHANNELS, CHANNELS, 3, 3};
  const int64_t b_shape[1] = {CHANNELS};
  const int64_t b_4d[4] = {1, CHANNELS, 1, 1};
  const size_t x_count = (size_t)CHANNELS * SIZE * SIZE;
  const size_t w_count = (size_t)CHANNELS * CHANNELS * 3 * 3;
  const float w_scale = (float)(1.0 / sqrt((double)CHANNELS * 3 * 3)); /* ~1/sqrt(fan_in) */
  /* multiply-adds of one convolution, 2 FLOP each; the adds and relus are not counted */
  const double flop = 2.0 * LAYERS * CHANNELS * CHANNELS * 3 * 3 * SIZE * SIZE;
  fuse_conv2d_attrs conv = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_plan *plan = NULL;
  float *x = (float *)malloc(x_count * sizeof(float));
  float *y = (float *)malloc(x_count * sizeof(float));
  float *w = (float *)malloc(w_count * sizeof(float));
  float b[CHANNELS];
  double times[RUNS], sum = 0.0, max = 0.0;
  fuse_value v;
  fuse_result r;
  size_t i;
  int layer, run;

  if (!g || !x || !y || !w) {
    fprintf(stderr, "demo: out of memory\n");
    return 1;
  }
  for (i = 0; i < x_count; i++) x[i] = uniform();

  /* the graph: input, then per layer its weight, bias and the four ops */
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
  if (fuse_graph_status(g) != FUSE_OK) { /* the first failing call's message */
    fprintf(stderr, "demo: building the graph failed: %s\n", fuse_graph_error(g));
    return 1;
  }
  fuse_graph_print(g, stdout);
  printf("ops: %d\n", fuse_graph_op_count(g));

  r = fuse_compile(g, NULL, &plan);
  if (r != FUSE_OK) {
    fprintf(stderr, "demo: fuse_compile failed: %s\n", fuse_result_string(r));
    return 1;
  }
  fuse_graph_destroy(g); /* the plan owns copies of the constants */
  printf("workspace: %lu bytes (%.2f MiB)\n", (unsigned long)fuse_plan_workspace_size(plan),
         (double)fuse_plan_workspace_size(plan) / (1024.0 * 1024.0));

  for (run = 0; run < RUNS; run++) {
    const float *inputs[1];
    float *outputs[1];
    double t0;
    inputs[0] = x;
    outputs[0] = y;
    t0 = now_ms();
    r = fuse_run(plan, inputs, outputs, NULL);
    times[run] = now_ms() - t0;
    if (r != FUSE_OK) {
      fprintf(stderr, "demo: fuse_run failed: %s\n", fuse_result_string(r));
      return 1;
    }
  }
  qsort(times, RUNS, sizeof times[0], compare_doubles);
  printf("time: %.2f ms per run (median of %d), %.2f GFLOP/s (%.3f GFLOP per run)\n",
         times[RUNS / 2], RUNS, flop / (times[RUNS / 2] * 1e-3) * 1e-9, flop * 1e-9);

  for (i = 0; i < x_count; i++) {
    sum += y[i];
    if (y[i] > max) max = y[i];
  }
  printf("checksum: sum %.6e, max %.6e, y[0] %.6e\n", sum, max, (double)y[0]);

  fuse_plan_destroy(plan);
  free(x);
  free(y);
  free(w);
  return 0;
}
