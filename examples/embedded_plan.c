/* embedded_plan.c - makes the plans examples/embedded.c and examples/embedded_int8.c run on a
   Cortex-M7, on the build host.

       embedded_plan OUT.fplan          the float plan (embedded.c)
       embedded_plan --int8 OUT.fplan   the int8 plan (embedded_int8.c)

   The float plan: the layer of embedded_model.h as PyTorch's exporter writes Conv2d(bias=True)
   + ReLU6,

       conv2d(x, w, padding 1) -> add(reshape(b, [1, K, 1, 1])) -> clip(0, 6)

   which fuse_optimize makes one composite (conv2d + bias + clamp[0, 6], one fused step). The
   int8 plan: the residual block of embedded_int8_model.h as a QDQ export writes it (a uint8
   image, dequantize -> conv2d with dequantized int8 weights -> add(dequantized int32 bias) ->
   clip / none -> quantize, twice, then dequantize both -> add -> relu -> quantize to int8),
   which fuse_optimize makes three integer steps (fuse.qconv2d, fuse.qconv2d, fuse.qadd: no
   float step). Either is compiled for
   FUSE_ISA_SCALAR with save_only (the device has no SIMD unit the kernels use: its plan is
   the scalar twins') and saved (fuse_plan_save) to OUT.fplan. `make test-m7` then turns it
   into a 64-byte aligned C array (fuse_run OUT.fplan --emit-c NAME) and into the header of
   what the device's build can leave out (fuse_run --emit-config OUT.fplan), and builds the
   firmware with both. Prints the plan. Exit status 0: the plan is saved. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "embedded_int8_model.h"
#include "embedded_model.h"

#include <stdio.h>
#include <string.h>

static void file_write(void *user, const char *text, size_t len) {
  fwrite(text, 1, len, (FILE *)user);
}

/* The float layer of embedded_model.h. */
static fuse_graph *float_graph(void) {
  static float x[EMBEDDED_C * EMBEDDED_S * EMBEDDED_S], w[EMBEDDED_K * EMBEDDED_C * 9],
      b[EMBEDDED_K];
  const int64_t x_shape[4] = {1, EMBEDDED_C, EMBEDDED_S, EMBEDDED_S};
  const int64_t w_shape[4] = {EMBEDDED_K, EMBEDDED_C, 3, 3}, b_shape[1] = {EMBEDDED_K};
  const int64_t b_4d[4] = {1, EMBEDDED_K, 1, 1};
  fuse_conv2d_attrs pad1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value in, y;
  embedded_model_data(x, w, b);
  in = fuse_input(g, "x", 4, x_shape);
  y = fuse_conv2d(g, in, fuse_constant(g, "w", 4, w_shape, w), &pad1);
  y = fuse_add(g, y, fuse_reshape(g, fuse_constant(g, "b", 1, b_shape, b), 4, b_4d));
  fuse_output(g, fuse_clip(g, y, 0.0f, 6.0f));
  return g;
}

/* 2^e */
static float power_of_two(int e) {
  float v = 1.0f;
  for (; e > 0; e--) v *= 2.0f;
  for (; e < 0; e++) v *= 0.5f;
  return v;
}

/* quantize(x, scale, zero point of `type`) or dequantize(x, scale, zero point) */
static fuse_value quantize(fuse_graph *g, fuse_value x, int scale_log2, fuse_type type, int zero) {
  uint8_t z8 = (uint8_t)zero;
  int8_t zs8 = (int8_t)zero;
  return fuse_quantize(g, x, fuse_scalar(g, power_of_two(scale_log2)),
                       fuse_typed_constant(g, NULL, type, 0, NULL, type == FUSE_INT8 ? (void *)&zs8 : (void *)&z8), 0);
}
static fuse_value dequantize(fuse_graph *g, fuse_value q, int scale_log2, int zero) {
  uint8_t z8 = (uint8_t)zero;
  return fuse_dequantize(g, q, fuse_scalar(g, power_of_two(scale_log2)),
                         fuse_typed_constant(g, NULL, FUSE_UINT8, 0, NULL, &z8), 0);
}

/* conv2d(x, dequantize(w), padding 1) + reshape(dequantize(b)), the int8 weights [K, cin, 3, 3]
   of conv `layer` with their scales per output channel, the int32 bias in units of x_scale *
   w_scale[k] */
static fuse_value int8_conv(fuse_graph *g, fuse_value x, int x_log2, int layer, int cin,
                            const int8_t *w, const int32_t *b) {
  const int64_t w_shape[4] = {EMBEDDED_INT8_K, cin, 3, 3}, k_shape[1] = {EMBEDDED_INT8_K};
  const int64_t b_4d[4] = {1, EMBEDDED_INT8_K, 1, 1};
  fuse_conv2d_attrs pad1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  float w_scale[EMBEDDED_INT8_K], b_scale[EMBEDDED_INT8_K];
  char w_name[8] = "w1", b_name[8] = "b1";
  fuse_value wq, bq, y;
  int k;
  for (k = 0; k < EMBEDDED_INT8_K; k++) {
    w_scale[k] = (float)embedded_int8_wscale_odd[layer][k] *
                 power_of_two(-embedded_int8_wscale_shift[layer][k]);
    b_scale[k] = power_of_two(x_log2) * w_scale[k];
  }
  w_name[1] = b_name[1] = (char)('1' + layer);
  wq = fuse_typed_constant(g, w_name, FUSE_INT8, 4, w_shape, w);
  bq = fuse_typed_constant(g, b_name, FUSE_INT32, 1, k_shape, b);
  y = fuse_conv2d(g, x, fuse_dequantize(g, wq, fuse_constant(g, NULL, 1, k_shape, w_scale), FUSE_NONE, 0),
                  &pad1);
  return fuse_add(g, y, fuse_reshape(g, fuse_dequantize(g, bq, fuse_constant(g, NULL, 1, k_shape, b_scale),
                                                        FUSE_NONE, 0),
                                     4, b_4d));
}

/* The int8 block of embedded_int8_model.h. */
static fuse_graph *int8_graph(void) {
  static uint8_t x[EMBEDDED_INT8_C * EMBEDDED_INT8_S * EMBEDDED_INT8_S];
  static int8_t w1[EMBEDDED_INT8_K * EMBEDDED_INT8_C * 9], w2[EMBEDDED_INT8_K * EMBEDDED_INT8_K * 9];
  static int32_t b1[EMBEDDED_INT8_K], b2[EMBEDDED_INT8_K];
  const int64_t x_shape[4] = {1, EMBEDDED_INT8_C, EMBEDDED_INT8_S, EMBEDDED_INT8_S};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value in, q1, q2, d1, y;
  embedded_int8_model_data(x, w1, b1, w2, b2); /* (x: the device's input, not needed here) */
  in = fuse_typed_input(g, "x", FUSE_UINT8, 4, x_shape);
  y = int8_conv(g, dequantize(g, in, EMBEDDED_INT8_X_LOG2, EMBEDDED_INT8_X_ZERO), EMBEDDED_INT8_X_LOG2,
                0, EMBEDDED_INT8_C, w1, b1);
  q1 = quantize(g, fuse_clip(g, y, 0.0f, 6.0f), EMBEDDED_INT8_Q1_LOG2, FUSE_UINT8, 0);
  d1 = dequantize(g, q1, EMBEDDED_INT8_Q1_LOG2, 0);
  y = int8_conv(g, d1, EMBEDDED_INT8_Q1_LOG2, 1, EMBEDDED_INT8_K, w2, b2);
  q2 = quantize(g, y, EMBEDDED_INT8_Q2_LOG2, FUSE_UINT8, EMBEDDED_INT8_Q2_ZERO);
  y = fuse_add(g, d1, dequantize(g, q2, EMBEDDED_INT8_Q2_LOG2, EMBEDDED_INT8_Q2_ZERO));
  fuse_output(g, quantize(g, fuse_relu(g, y), EMBEDDED_INT8_Y_LOG2, FUSE_INT8, EMBEDDED_INT8_Y_ZERO));
  return g;
}

int main(int argc, char **argv) {
  fuse_compile_options opt;
  char why[512] = "";
  fuse_graph *g;
  fuse_plan *plan = NULL;
  FILE *f;
  int bad, int8 = argc == 3 && strcmp(argv[1], "--int8") == 0;
  if (argc != 2 + int8) {
    fprintf(stderr, "usage: embedded_plan [--int8] OUT.fplan\n");
    return 2;
  }
  g = int8 ? int8_graph() : float_graph();
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
  f = fopen(argv[1 + int8], "wb");
  bad = !f || fuse_plan_save(plan, file_write, f) != FUSE_OK;
  if (f && fclose(f) != 0) bad = 1;
  fuse_plan_destroy(plan);
  if (bad) {
    fprintf(stderr, "embedded_plan: cannot write '%s'\n", argv[1 + int8]);
    return 1;
  }
  return 0;
}
