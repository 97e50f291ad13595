/* smoke.h - the small program every header check runs: relu(x + b) on a [2, 3] input with a
   broadcast [3] constant, built, compiled and run through the public API. Returns 0 when the
   output is right, else prints why and returns 1. Include after fuse.h. */
#ifndef FUSE_TEST_SMOKE_H
#define FUSE_TEST_SMOKE_H

#include <stdio.h>

static int smoke(void) {
  const int64_t xs[2] = {2, 3}, bs[1] = {3};
  const float x_data[6] = {-1.0f, 2.0f, -3.0f, 4.0f, -5.0f, 6.0f};
  const float b_data[3] = {0.5f, -2.5f, 1.0f};
  const float want[6] = {0.0f, 0.0f, 0.0f, 4.5f, 0.0f, 7.0f};
  float y_data[6] = {-9.0f, -9.0f, -9.0f, -9.0f, -9.0f, -9.0f};
  const float *inputs[1] = {x_data};
  float *outputs[1] = {y_data};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_plan *plan = NULL;
  fuse_value x, b;
  fuse_result r;
  int i;

  if (!g) {
    fprintf(stderr, "smoke: fuse_graph_create returned NULL\n");
    return 1;
  }
  x = fuse_input(g, "x", 2, xs);
  b = fuse_constant(g, "b", 1, bs, b_data);
  fuse_output(g, fuse_relu(g, fuse_add(g, x, b)));
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "smoke: graph: %s\n", fuse_graph_error(g));
    fuse_graph_destroy(g);
    return 1;
  }
  r = fuse_compile(g, NULL, &plan);
  fuse_graph_destroy(g);
  if (r != FUSE_OK) {
    fprintf(stderr, "smoke: fuse_compile: %s\n", fuse_result_string(r));
    return 1;
  }
  r = fuse_run(plan, inputs, outputs, NULL);
  fuse_plan_destroy(plan);
  if (r != FUSE_OK) {
    fprintf(stderr, "smoke: fuse_run: %s\n", fuse_result_string(r));
    return 1;
  }
  for (i = 0; i < 6; i++) {
    if (y_data[i] != want[i]) {
      fprintf(stderr, "smoke: y[%d] = %g, want %g\n", i, (double)y_data[i], (double)want[i]);
      return 1;
    }
  }
  return 0;
}

#endif
