/* A program that uses fuse.h as a library (tests/cmake/run.sh builds it with CMake and with
   pkg-config): it includes "fuse.h" only, never FUSE_IMPLEMENTATION, and links fuse::fuse -
   or, built with -DCONSUMER_DNNL, fuse::dnnl, and routes the conv to oneDNN. check.c, the
   second unit, checks the result and the plan. */
#include "fuse.h"
#ifdef CONSUMER_DNNL
#include "fuse_dnnl.h"
#endif

#include <stdio.h>
#include <string.h>

/* check.c */
int check_result(const float *image, const float *weight, const float *bias,
                 const float *result);
int check_plan(const fuse_plan *plan, const char *expect);

int main(void) {
  static float image[1 * 3 * 8 * 8], weight[4 * 3 * 3 * 3], result[1 * 4 * 8 * 8];
  const float bias[4] = {0.5f, -0.25f, 1.0f, 0.0f};
  const int64_t image_shape[4] = {1, 3, 8, 8}, weight_shape[4] = {4, 3, 3, 3};
  const int64_t bias_shape[1] = {4}, bias_4d[4] = {1, 4, 1, 1};
  fuse_conv2d_attrs conv = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  fuse_compile_options options;
  const char *codegen = "fuse", *expect = "composite fuse.";
  fuse_graph *g;
  fuse_plan *plan = NULL;
  fuse_value x, w, b, y;
  fuse_result r;
  int i, failed;
#ifdef CONSUMER_DNNL
  const fuse_backend *backends[2];
#endif

  for (i = 0; i < 1 * 3 * 8 * 8; i++) image[i] = (float)(i % 7) - 3.0f;
  for (i = 0; i < 4 * 3 * 3 * 3; i++) weight[i] = (float)(i % 5) * 0.1f - 0.2f;
  memset(&options, 0, sizeof options);
#ifdef CONSUMER_DNNL
  backends[0] = fuse_dnnl_backend();
  backends[1] = NULL;
  if (backends[0] == NULL) {
    puts("consumer: fuse_dnnl_backend() is NULL: fuse::dnnl was built without oneDNN");
    return 1;
  }
  options.backends = backends;
  codegen = "dnnl";
  expect = "(dnnl)";
#endif

  g = fuse_graph_create(NULL);
  x = fuse_input(g, "image", 4, image_shape);
  w = fuse_constant(g, "weight", 4, weight_shape, weight);
  b = fuse_constant(g, "bias", 1, bias_shape, bias);
  y = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, w, &conv), fuse_reshape(g, b, 4, bias_4d)));
  fuse_output(g, y);
  if (fuse_graph_status(g) != FUSE_OK || fuse_optimize(g, codegen) != FUSE_OK) {
    printf("consumer: graph: %s\n", fuse_graph_error(g));
    fuse_graph_destroy(g);
    return 1;
  }
  r = fuse_compile(g, &options, &plan);
  fuse_graph_destroy(g);
  if (r != FUSE_OK) {
    printf("consumer: fuse_compile: %s\n", fuse_result_string(r));
    return 1;
  }
  {
    const float *inputs[1];
    float *outputs[1];
    inputs[0] = image;
    outputs[0] = result;
    r = fuse_run(plan, inputs, outputs, NULL);
  }
  failed = r != FUSE_OK;
  if (failed) printf("consumer: fuse_run: %s\n", fuse_result_string(r));
  failed |= check_plan(plan, expect) != 0;
  failed |= check_result(image, weight, bias, result) != 0;
  fuse_plan_destroy(plan);
  printf("consumer (fuse.h %s, %s): %s\n", FUSE_VERSION_STRING, codegen,
         failed ? "FAILED" : "the fused conv matches the direct loop");
  return failed;
}
