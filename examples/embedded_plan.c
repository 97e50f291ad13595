/* embedded_plan.c - makes the plan examples/embedded.c runs on a Cortex-M7, on the build host.

       embedded_plan OUT.fplan

   Builds the layer of embedded_model.h as PyTorch's exporter writes Conv2d(bias=True) + ReLU6,

       conv2d(x, w, padding 1) -> add(reshape(b, [1, K, 1, 1])) -> clip(0, 6)

   runs fuse_optimize (one composite: conv2d + bias + clamp[0, 6], one fused step), compiles it
   for FUSE_ISA_SCALAR with save_only (the device has no SIMD unit the kernels use: its plan is
   the scalar twins'), and saves the blob (fuse_plan_save) to OUT.fplan. `make test-m7` then
   turns it into a 64-byte aligned C array (fuse_run OUT.fplan --emit-c embedded_blob) and
   into the header of what the device's build can leave out (fuse_run --emit-config OUT.fplan),
   and builds embedded.c with both. Prints the plan. Exit status 0: the plan is saved. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "embedded_model.h"

#include <stdio.h>
#include <string.h>

static void file_write(void *user, const char *text, size_t len) {
  fwrite(text, 1, len, (FILE *)user);
}

int main(int argc, char **argv) {
  static float x[EMBEDDED_C * EMBEDDED_S * EMBEDDED_S], w[EMBEDDED_K * EMBEDDED_C * 9],
      b[EMBEDDED_K];
  const int64_t x_shape[4] = {1, EMBEDDED_C, EMBEDDED_S, EMBEDDED_S};
  const int64_t w_shape[4] = {EMBEDDED_K, EMBEDDED_C, 3, 3}, b_shape[1] = {EMBEDDED_K};
  const int64_t b_4d[4] = {1, EMBEDDED_K, 1, 1};
  fuse_conv2d_attrs pad1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  fuse_compile_options opt;
  char why[512] = "";
  fuse_graph *g;
  fuse_plan *plan = NULL;
  fuse_value in, y;
  FILE *f;
  int bad;
  if (argc != 2) {
    fprintf(stderr, "usage: embedded_plan OUT.fplan\n");
    return 2;
  }
  embedded_model_data(x, w, b);
  g = fuse_graph_create(NULL);
  in = fuse_input(g, "x", 4, x_shape);
  y = fuse_conv2d(g, in, fuse_constant(g, "w", 4, w_shape, w), &pad1);
  y = fuse_add(g, y, fuse_reshape(g, fuse_constant(g, "b", 1, b_shape, b), 4, b_4d));
  fuse_output(g, fuse_clip(g, y, 0.0f, 6.0f));
  if (fuse_graph_status(g) != FUSE_OK || fuse_optimize(g, "fuse") != FUSE_OK) {
    fprintf(stderr, "embedded_plan: %s\n", g ? fuse_graph_error(g) : "out of memory");
    fuse_graph_destroy(g);
    return 1;
  }
  memset(&opt, 0, sizeof opt);
  opt.isa = FUSE_ISA_SCALAR;
  opt.save_only = 1; /* (scalar runs here too; a NEON plan would be made the same way) */
  opt.num_threads = 1;
  opt.error = why;
  opt.error_size = sizeof why;
  if (fuse_compile(g, &opt, &plan) != FUSE_OK) {
    fprintf(stderr, "embedded_plan: fuse_compile: %s\n", why);
    fuse_graph_destroy(g);
    return 1;
  }
  fuse_graph_destroy(g);
  fuse_plan_write(plan, file_write, stdout);
  f = fopen(argv[1], "wb");
  bad = !f || fuse_plan_save(plan, file_write, f) != FUSE_OK;
  if (f && fclose(f) != 0) bad = 1;
  fuse_plan_destroy(plan);
  if (bad) {
    fprintf(stderr, "embedded_plan: cannot write '%s'\n", argv[1]);
    return 1;
  }
  return 0;
}
