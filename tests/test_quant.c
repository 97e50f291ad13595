/* test_quant.c - element types and the quantize / dequantize ops: typed inputs and constants
   through the builders, the text form (written and read back), the plan (its memory plan, its
   typed inputs and outputs, fuse_run_typed, blobs); quantize's rounding (half to even, as ONNX
   says), saturation and per-axis scales against values worked out by hand; dequantize; the
   folding of dequantized constant weights in fuse_optimize; and the errors: a float op given a
   uint8 tensor, a bad scale, a zero point of the wrong type or shape. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct text_buf {
  char s[8192];
  size_t n;
} text_buf;
static void text_sink(void *user, const char *text, size_t len) {
  text_buf *b = (text_buf *)user;
  if (b->n + len < sizeof b->s) memcpy(b->s + b->n, text, len), b->n += len, b->s[b->n] = 0;
}

/* compiles g (reference kernels or not) and runs it with typed arrays */
static fuse_result run_typed(const fuse_graph *g, int reference, const void *const *in,
                             void *const *out) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  fuse_result r;
  memset(&o, 0, sizeof o);
  o.reference_kernels = reference;
  o.num_threads = 1;
  if ((r = fuse_compile(g, &o, &p)) != FUSE_OK) return r;
  r = fuse_run_typed(p, in, out, NULL);
  fuse_plan_destroy(p);
  return r;
}

TEST(quantize_rounds_half_to_even_and_saturates) {
  /* scale 0.5, zero point 10: x / 0.5 = 2x; ties at x = 0.25 (0.5 -> 0), 0.75 (1.5 -> 2),
     -0.25 (-0.5 -> -0), 1.25 (2.5 -> 2); saturation at both ends; NaN to the zero point */
  static const float x[12] = {0.25f, 0.75f, -0.25f, 1.25f, 1.2f, -1.3f, 200.0f, -200.0f,
                              0.0f, -5.0f, 3.0f, 0.0f};
  static const uint8_t want[12] = {10, 12, 10, 12, 12, 7, 255, 0, 10, 0, 16, 10};
  int64_t shape[1] = {12};
  uint8_t got[12], zp = 10;
  float xs[12];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value in = fuse_input(g, "x", 1, shape);
  fuse_value s = fuse_scalar(g, 0.5f), z = fuse_typed_constant(g, NULL, FUSE_UINT8, 0, NULL, &zp);
  fuse_value q = fuse_quantize(g, in, s, z, 1);
  const void *ins[1];
  void *outs[1];
  int i, ref;
  memcpy(xs, x, sizeof xs);
  xs[11] = NAN;
  CHECK(q != FUSE_NONE);
  CHECK_EQ_INT(fuse_value_type(g, q), FUSE_UINT8);
  fuse_output(g, q);
  ins[0] = xs, outs[0] = got;
  for (ref = 0; ref < 2; ref++) {
    memset(got, 0xaa, sizeof got);
    CHECK_EQ_INT(run_typed(g, ref, ins, outs), FUSE_OK);
    for (i = 0; i < 12; i++) {
      if (got[i] != want[i]) fprintf(stderr, "  x = %g: got %d, want %d\n", (double)xs[i], got[i], want[i]);
      CHECK(got[i] == want[i]);
    }
  }
  fuse_graph_destroy(g);
}

TEST(quantize_int8_and_int32_and_no_zero_point) {
  static const float x[6] = {-1000.0f, -64.5f, -63.5f, 0.49f, 63.5f, 1000.0f};
  static const int8_t want8[6] = {-128, -64, -64, 0, 64, 127};
  static const uint8_t want_u8[6] = {0, 0, 0, 0, 64, 255};
  static const int32_t want32[6] = {-1000, -64, -64, 0, 64, 1000};
  int64_t shape[1] = {6};
  int8_t z8 = 0, got8[6];
  int32_t z32 = 0, got32[6];
  uint8_t got_u8[6];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value in = fuse_input(g, "x", 1, shape), one = fuse_scalar(g, 1.0f);
  fuse_value q8 = fuse_quantize(g, in, one, fuse_typed_constant(g, NULL, FUSE_INT8, 0, NULL, &z8), 0);
  fuse_value q32 = fuse_quantize(g, in, one, fuse_typed_constant(g, NULL, FUSE_INT32, 0, NULL, &z32), 0);
  fuse_value qu = fuse_quantize(g, in, one, FUSE_NONE, 0);
  const void *ins[1];
  void *outs[3];
  int i;
  CHECK_EQ_INT(fuse_value_type(g, q8), FUSE_INT8);
  CHECK_EQ_INT(fuse_value_type(g, q32), FUSE_INT32);
  CHECK_EQ_INT(fuse_value_type(g, qu), FUSE_UINT8);
  fuse_output(g, q8), fuse_output(g, q32), fuse_output(g, qu);
  ins[0] = x, outs[0] = got8, outs[1] = got32, outs[2] = got_u8;
  CHECK_EQ_INT(run_typed(g, 0, ins, outs), FUSE_OK);
  for (i = 0; i < 6; i++) {
    CHECK_EQ_INT(got8[i], want8[i]);
    CHECK_EQ_INT(got32[i], want32[i]);
    CHECK_EQ_INT(got_u8[i], want_u8[i]);
  }
  fuse_graph_destroy(g);
}

/* per-axis: x [1, 2, 2] along axis 1, scales {1, 0.25}, zero points {-3, 5} (int8); then
   dequantize with the same parameters gives x rounded to the grid */
TEST(per_axis_quantize_dequantize) {
  static const float x[4] = {1.4f, -2.6f, 0.3f, -0.1f};
  static const float scales[2] = {1.0f, 0.25f};
  static const int8_t zeros[2] = {-3, 5};
  static const int8_t want_q[4] = {-2, -6, 6, 5};
  static const float want_y[4] = {1.0f, -3.0f, 0.25f, 0.0f};
  int64_t shape[3] = {1, 2, 2}, two[1] = {2};
  int8_t q[4];
  float y[4];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value in = fuse_input(g, "x", 3, shape);
  fuse_value s = fuse_constant(g, "s", 1, two, scales);
  fuse_value z = fuse_typed_constant(g, "z", FUSE_INT8, 1, two, zeros);
  fuse_value qv = fuse_quantize(g, in, s, z, -2), yv = fuse_dequantize(g, qv, s, z, 1);
  const void *ins[1];
  void *outs[2];
  int i;
  CHECK(yv != FUSE_NONE);
  CHECK_EQ_INT(fuse_value_type(g, yv), FUSE_FLOAT32);
  fuse_output(g, qv), fuse_output(g, yv);
  ins[0] = x, outs[0] = q, outs[1] = y;
  CHECK_EQ_INT(run_typed(g, 0, ins, outs), FUSE_OK);
  for (i = 0; i < 4; i++) {
    CHECK_EQ_INT(q[i], want_q[i]);
    CHECK(y[i] == want_y[i]);
  }
  fuse_graph_destroy(g);
}

/* A uint8 image in, dequantized, through a float conv, quantized out as int8: typed inputs and
   outputs of a plan, its listing read back, the plan's blob. */
static const char *typed_net =
    "graph(%img: u8[1, 2, 4, 4]) {\n"
    "  %s: [] = const{0.0078125}\n"
    "  %z: u8[] = const{128}\n"
    "  %w: [3, 2, 3, 3] = const\n"
    "  %so: [] = const{0.03125}\n"
    "  %zo: i8[] = const{-5}\n"
    "  %x = dequantize(%img, %s, %z)\n"
    "  %c = conv2d(%x, %w, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1)\n"
    "  %r = relu(%c)\n"
    "  %q: i8[1, 3, 4, 4] = quantize(%r, %so, %zo)\n"
    "  return %q\n"
    "}\n";

static void fill_weights(fuse_graph *g) {
  float w[54];
  int i;
  for (i = 0; i < 54; i++) w[i] = (float)((i * 37) % 17 - 8) / 16.0f;
  fuse_graph_set_constant(g, "w", w, 54);
}

TEST(typed_graph_text_plan_and_blob) {
  fuse_graph *g = NULL, *g2 = NULL;
  fuse_plan *p = NULL, *loaded = NULL;
  text_buf t1, t2;
  uint8_t img[32];
  int8_t out1[48], out2[48], out3[48];
  const void *ins[1];
  void *outs[1];
  fuse_compile_options o;
  int64_t dims[FUSE_MAX_RANK];
  int i;
  CHECK_EQ_INT(fuse_graph_parse(typed_net, NULL, &g), FUSE_OK);
  if (fuse_graph_status(g) != FUSE_OK) fprintf(stderr, "  %s\n", fuse_graph_error(g));
  fill_weights(g);
  CHECK_EQ_INT(fuse_value_type(g, fuse_graph_input(g, 0)), FUSE_UINT8);
  CHECK_EQ_INT(fuse_value_type(g, fuse_graph_output(g, 0)), FUSE_INT8);
  /* the listing says the types and reads back to the same listing */
  t1.n = t2.n = 0;
  CHECK_EQ_INT(fuse_graph_write(g, text_sink, &t1), FUSE_OK);
  CHECK_STR_CONTAINS(t1.s, "%img: u8[1, 2, 4, 4]");
  CHECK_STR_CONTAINS(t1.s, "i8[1, 3, 4, 4] = quantize(");
  CHECK_STR_CONTAINS(t1.s, "u8[] = const{128}");
  CHECK_EQ_INT(fuse_graph_parse(t1.s, NULL, &g2), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_write(g2, text_sink, &t2), FUSE_OK);
  CHECK(strcmp(t1.s, t2.s) == 0);
  for (i = 0; i < 32; i++) img[i] = (uint8_t)(i * 8 + 3);
  ins[0] = img, outs[0] = out1;
  memset(&o, 0, sizeof o);
  o.num_threads = 1;
  o.reference_kernels = 1;
  CHECK_EQ_INT(run_typed(g, 1, ins, outs), FUSE_OK);
  /* optimized (the conv fused with its relu), the SIMD kernels */
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  outs[0] = out2;
  o.reference_kernels = 0;
  CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
  CHECK_EQ_INT(fuse_plan_input_type(p, 0), FUSE_UINT8);
  CHECK_EQ_INT(fuse_plan_output_type(p, 0), FUSE_INT8);
  CHECK_EQ_INT(fuse_plan_input_type(p, 1), -1);
  CHECK_EQ_INT(fuse_plan_output_shape(p, 0, dims), 4);
  CHECK_EQ_INT(fuse_run_typed(p, ins, outs, NULL), FUSE_OK);
  for (i = 0; i < 48; i++) CHECK(abs(out1[i] - out2[i]) <= 1); /* float sums in two orders */
  {
    int saw_low = 0, saw_high = 0;
    for (i = 0; i < 48; i++) saw_low |= out2[i] == -5, saw_high |= out2[i] > 10;
    CHECK(saw_low && saw_high); /* relu's zeros at the zero point; some large values */
  }
  { /* through a blob: the same bytes */
    text_buf *blob = (text_buf *)calloc(1, sizeof *blob);
    size_t k;
    fuse_plan_load_options lo;
    int saved = fuse_plan_save(p, text_sink, blob);
    CHECK_EQ_INT(saved, FUSE_OK);
    memset(&lo, 0, sizeof lo);
    lo.copy = 1;
    CHECK(blob->n > 64 && blob->n < sizeof blob->s - 1);
    CHECK_EQ_INT(fuse_plan_load(blob->s, blob->n, &lo, &loaded), FUSE_OK);
    CHECK_EQ_INT(fuse_plan_input_type(loaded, 0), FUSE_UINT8);
    CHECK_EQ_INT(fuse_plan_output_type(loaded, 0), FUSE_INT8);
    outs[0] = out3;
    CHECK_EQ_INT(fuse_run_typed(loaded, ins, outs, NULL), FUSE_OK);
    for (k = 0; k < 48; k++) CHECK(out3[k] == out2[k]);
    free(blob);
  }
  fuse_plan_destroy(loaded);
  fuse_plan_destroy(p);
  fuse_graph_destroy(g2);
  fuse_graph_destroy(g);
}

/* dequantize of an int8 weight with per-channel scales folds to a float constant in
   fuse_optimize; the conv then fuses with its bias as any float conv */
TEST(optimize_folds_dequantized_weights) {
  static const char *text =
      "graph(%x: [1, 2, 3, 3]) {\n"
      "  %wq: i8[2, 2, 1, 1] = const{-128, 127, 3, -4}\n"
      "  %ws: [2] = const{0.5, 0.25}\n"
      "  %bq: i32[2] = const{8, -8}\n"
      "  %bs: [2] = const{0.125, 0.125}\n"
      "  %w = dequantize(%wq, %ws, axis=0)\n"
      "  %b = dequantize(%bq, %bs, axis=0)\n"
      "  %c = conv2d(%x, %w, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1)\n"
      "  %br = reshape(%b, shape=[1, 2, 1, 1])\n"
      "  %y = add(%c, %br)\n"
      "  return %y\n"
      "}\n";
  fuse_graph *g = NULL;
  fuse_composite_info info;
  float x[18], y[18], want[18];
  const void *ins[1];
  void *outs[1];
  int i, ch;
  CHECK_EQ_INT(fuse_graph_parse(text, NULL, &g), FUSE_OK);
  if (fuse_graph_status(g) != FUSE_OK) fprintf(stderr, "  %s\n", fuse_graph_error(g));
  for (i = 0; i < 18; i++) x[i] = (float)(i % 7) - 3.0f;
  for (ch = 0; ch < 2; ch++)
    for (i = 0; i < 9; i++) {
      const float w0 = ch ? 0.75f : -64.0f, w1 = ch ? -1.0f : 63.5f;
      want[ch * 9 + i] = x[i] * w0 + x[9 + i] * w1 + (ch ? -1.0f : 1.0f);
    }
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK_EQ_INT(fuse_composite_get(g, 0, &info), FUSE_OK);
  CHECK(info.has_epilogue && info.epilogue.bias != FUSE_NONE);
  { /* %w is a float constant now, unless it had no name */
    text_buf t;
    t.n = 0;
    fuse_graph_write(g, text_sink, &t);
    CHECK_STR_CONTAINS(t.s, "%w: [2, 2, 1, 1] = const{-64, 63.5, 0.75, -1}");
    CHECK(strstr(t.s, "dequantize") == NULL);
  }
  ins[0] = x, outs[0] = y;
  CHECK_EQ_INT(run_typed(g, 0, ins, outs), FUSE_OK);
  for (i = 0; i < 18; i++) CHECK(y[i] == want[i]);
  fuse_graph_destroy(g);
}

TEST(errors_name_the_op_and_the_types) {
  int64_t shape[2] = {2, 3}, three[1] = {3}, two[1] = {2}, one[1] = {1};
  static const float s3[3] = {1, 1, 1}, bad[1] = {-1.0f};
  uint8_t z3[3] = {0, 0, 0};
  int8_t z8 = 0;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 2, shape), u = fuse_typed_input(g, "u", FUSE_UINT8, 2, shape);
  CHECK_EQ_INT(fuse_relu(g, u), FUSE_NONE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "relu: operand 0 ('u') is u8; relu takes float32");
  fuse_graph_destroy(g);

  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, shape);
  CHECK_EQ_INT(fuse_quantize(g, x, fuse_constant(g, "s", 1, two, s3), FUSE_NONE, 1), FUSE_NONE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "per axis 1, but 'x' [2,3] has 3 there");
  fuse_graph_destroy(g);

  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, shape);
  CHECK_EQ_INT(fuse_quantize(g, x, fuse_constant(g, "s", 1, three, s3),
                             fuse_typed_constant(g, "z", FUSE_INT8, 0, NULL, &z8), 1),
               FUSE_NONE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "zero point 'z' [] does not match scale 's' [3]");
  fuse_graph_destroy(g);

  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, shape);
  CHECK_EQ_INT(fuse_quantize(g, x, fuse_constant(g, "s", 1, one, bad), FUSE_NONE, 1), FUSE_NONE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "scale 's'[0] = -1; a scale is positive and finite");
  fuse_graph_destroy(g);

  g = fuse_graph_create(NULL);
  u = fuse_typed_input(g, "u", FUSE_UINT8, 2, shape);
  CHECK_EQ_INT(fuse_dequantize(g, u, fuse_constant(g, "s", 1, three, s3),
                               fuse_typed_constant(g, "z", FUSE_INT8, 1, three, z3), 1),
               FUSE_NONE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "zero point 'z' is i8; it must be u8, i8 or i32 as u8");
  fuse_graph_destroy(g);

  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, shape);
  CHECK_EQ_INT(fuse_dequantize(g, x, fuse_scalar(g, 1.0f), FUSE_NONE, 1), FUSE_NONE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "dequantize: 'x' is float32");
  fuse_graph_destroy(g);

  g = NULL; /* the text form: a declared type that is not the op's */
  CHECK(fuse_graph_parse("graph(%x: [2]) {\n  %s: [] = const{1}\n  %q: i8[2] = quantize(%x, %s)\n"
                         "  return %q\n}\n",
                         NULL, &g) != FUSE_OK);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "%q is declared i8 but quantize gives u8");
  fuse_graph_destroy(g);
  g = NULL;
  CHECK(fuse_graph_parse("graph(%x: u9[2]) {\n  return %x\n}\n", NULL, &g) != FUSE_OK);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "an element type (f32, u8, i8, i32)");
  fuse_graph_destroy(g);
  g = NULL;
  CHECK(fuse_graph_parse("graph(%x: [2]) {\n  %z: u8[] = const{300}\n  return %x\n}\n", NULL, &g) !=
        FUSE_OK);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "300 is not a u8 value");
  fuse_graph_destroy(g);
}

/* The QDQ pattern around a conv (dequantize, conv2d with dequantized int8 weights and int32
   bias, relu, quantize) becomes one integer step (fuse.qconv2d): bit for bit the sums worked
   out here in integers and requantized as ONNX Runtime does; within one unit of the float
   path (the same graph unoptimized: dequantize, float conv, quantize); the same through a
   blob. Strided, padded, grouped; relu or clip or nothing; uint8 or int8 out. (Four output channels:
   the text form holds at most four values inline.) */
static const char *qconv_net =
    "graph(%xq: u8[2, 4, 7, 6]) {\n"
    "  %xs: [] = const{0.05}\n"
    "  %xz: u8[] = const{121}\n"
    "  %wq: i8[4, 2, 3, 3] = const\n"
    "  %ws: [4] = const{0.01, 0.02, 0.015, 0.03}\n"
    "  %bq: i32[4] = const{100, -250, 3000, -7}\n"
    "  %bs: [4] = const{0.0005, 0.001, 0.00075, 0.0015}\n"
    "  %ys: [] = const{0.04}\n"
    "  %yz: %YT[] = const{%YZ}\n"
    "  %x = dequantize(%xq, %xs, %xz)\n"
    "  %w = dequantize(%wq, %ws, axis=0)\n"
    "  %b = dequantize(%bq, %bs, axis=0)\n"
    "  %c = conv2d(%x, %w, strides=[2, 1], padding=[1, 0, 1, 2], dilation=[1, 1], groups=2)\n"
    "  %br = reshape(%b, shape=[1, 4, 1, 1])\n"
    "  %a = add(%c, %br)\n"
    "  %r = %ACT\n"
    "  %yq = quantize(%r, %ys, %yz)\n"
    "  return %yq\n"
    "}\n";

/* Whether plans for isa run on this CPU: the scalar twins everywhere, AVX2 on AVX-512 too. */
static int isa_runs_here(int isa) {
  int cpu = (int)fuse_cpu_isa();
  return isa == FUSE_ISA_SCALAR || isa == cpu || (isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512);
}

static void replace(char *s, const char *key, const char *with) {
  char *at = strstr(s, key), rest[4096];
  if (!at) return;
  strcpy(rest, at + strlen(key));
  strcpy(at, with);
  strcat(at, rest);
}

static int32_t ref_requant(int64_t acc, float scale, int32_t zero, int32_t lo, int32_t hi) {
  float f = (float)acc * scale;
  double r;
  f = f < (float)(lo - zero) ? (float)(lo - zero) : f > (float)(hi - zero) ? (float)(hi - zero) : f;
  r = floor((double)f);
  if ((double)f - r > 0.5 || ((double)f - r == 0.5 && fmod(r, 2.0) != 0)) r += 1;
  return (int32_t)r + zero;
}

TEST(qdq_conv_runs_in_integers) {
  static const char *acts[3] = {"relu(%a)", "clip(%a, lo=-0.5, hi=1.5)", "add(%a, 0)"};
  int act, signed_out, G, isa;
  for (G = 1; G <= 4; G *= 2) /* dense, grouped, depthwise */
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++)
  for (act = 0; act < 3; act++)
    for (signed_out = 0; signed_out < 2; signed_out++) {
      char text[4096];
      fuse_graph *g = NULL, *plain = NULL;
      fuse_plan *p = NULL;
      fuse_compile_options o;
      int8_t wq[144];
      int Cg = 4 / G;
      uint8_t xq[2 * 4 * 7 * 6];
      unsigned char got[2 * 4 * 4 * 6], flt[2 * 4 * 4 * 6];
      const void *ins[1];
      void *outs[1];
      const float ws[4] = {0.01f, 0.02f, 0.015f, 0.03f};
      const int32_t bq[4] = {100, -250, 3000, -7};
      int32_t lo = signed_out ? -128 : 0, hi = signed_out ? 127 : 255, yz = signed_out ? -3 : 7;
      int i, n, k, oy, ox, c, ky, kx, exact = 1, near = 1, steps_q = 0;
      if (!isa_runs_here(isa) || (G != 1 && isa != FUSE_ISA_SCALAR))
        continue; /* (grouped, depthwise: the same loops whatever the ISA) */
      strcpy(text, qconv_net);
      if (G == 1) replace(text, "i8[4, 2, 3, 3]", "i8[4, 4, 3, 3]"), replace(text, "groups=2", "groups=1");
      if (G == 4) replace(text, "i8[4, 2, 3, 3]", "i8[4, 1, 3, 3]"), replace(text, "groups=2", "groups=4");
      replace(text, "%YT", signed_out ? "i8" : "u8");
      replace(text, "%YZ", signed_out ? "-3" : "7");
      replace(text, "%ACT", acts[act]);
      if (act == 2) replace(text, "  %r = add(%a, 0)\n", ""), replace(text, "quantize(%r,", "quantize(%a,"); /* none */
      CHECK_EQ_INT(fuse_graph_parse(text, NULL, &g), FUSE_OK);
      CHECK_EQ_INT(fuse_graph_parse(text, NULL, &plain), FUSE_OK);
      if (fuse_graph_status(g) != FUSE_OK) {
        fprintf(stderr, "  %s\n", fuse_graph_error(g));
        fuse_graph_destroy(g), fuse_graph_destroy(plain);
        return;
      }
      for (i = 0; i < 36 * Cg; i++) wq[i] = (int8_t)((i * 53) % 255 - 127);
      wq[0] = -128, wq[1] = 127;
      for (i = 0; i < (int)sizeof xq; i++) xq[i] = (uint8_t)((i * 29 + 7) % 256);
      {
        float wf[144];
        for (i = 0; i < 36 * Cg; i++) wf[i] = wq[i];
        CHECK_EQ_INT(fuse_graph_set_constant(g, "wq", wf, (size_t)(36 * Cg)), FUSE_OK);
        CHECK_EQ_INT(fuse_graph_set_constant(plain, "wq", wf, (size_t)(36 * Cg)), FUSE_OK);
      }
      CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
      memset(&o, 0, sizeof o);
      o.num_threads = 1;
      o.isa = (fuse_isa)isa;
      CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
      ins[0] = xq, outs[0] = got;
      CHECK_EQ_INT(fuse_run_typed(p, ins, outs, NULL), FUSE_OK);
      { /* the one integer step: no dequantize, conv or quantize; layout conversions around
           it where it runs on NHWC */
        text_buf *t = (text_buf *)calloc(1, sizeof *t);
        const char *at;
        fuse_plan_write(p, text_sink, t);
        for (at = t->s; (at = strstr(at, " -> %")) != NULL; at++) steps_q++;
        for (at = t->s; (at = strstr(at, "to_nhwc -> ")) != NULL; at++) steps_q--;
        for (at = t->s; (at = strstr(at, "to_nchw -> ")) != NULL; at++) steps_q--;
        CHECK_EQ_INT(steps_q, 1);
        /* the grouped conv and the reference: NCHW; groups 1: the input read in either
           layout, the output converted back; depthwise: both converted */
        CHECK_EQ_INT(fuse_plan_step_count(p), isa == FUSE_ISA_AUTO || G == 2 ? 1 : G == 1 ? 2 : 3);
        free(t);
      }
      outs[0] = flt;
      CHECK_EQ_INT(run_typed(plain, 1, ins, outs), FUSE_OK);
      /* the integer sums here: x zero point 121, x scale 0.05, y scale 0.04 */
      if (act == 0) lo = lo > yz ? lo : yz;
      if (act == 1) {
        int32_t qa = (int32_t)floor(-0.5 / 0.04 + 0.5) + yz, qb = (int32_t)floor(1.5 / 0.04 + 0.5) + yz;
        lo = lo > qa ? lo : qa, hi = hi < qb ? hi : qb;
      }
      for (n = 0; n < 2; n++)
        for (k = 0; k < 4; k++)
          for (oy = 0; oy < 4; oy++)
            for (ox = 0; ox < 6; ox++) {
              int64_t acc = bq[k];
              int32_t want, g0 = k / (4 / G), at = ((n * 4 + k) * 4 + oy) * 6 + ox;
              int have, have_f;
              for (c = 0; c < Cg; c++)
                for (ky = 0; ky < 3; ky++)
                  for (kx = 0; kx < 3; kx++) {
                    int iy = oy * 2 - 1 + ky, ix = ox + kx;
                    if (iy < 0 || iy >= 7 || ix < 0 || ix >= 6) continue;
                    acc += (int64_t)(xq[((n * 4 + g0 * Cg + c) * 7 + iy) * 6 + ix] - 121) *
                           wq[((k * Cg + c) * 3 + ky) * 3 + kx];
                  }
              want = ref_requant(acc, 0.05f * ws[k] / 0.04f, yz, lo, hi);
              have = signed_out ? (int)(int8_t)got[at] : (int)got[at];
              have_f = signed_out ? (int)(int8_t)flt[at] : (int)flt[at];
              if (have != want && exact)
                fprintf(stderr, "  groups %d isa %d act %d signed %d: at %d got %d, want %d\n", G, isa,
                        act, signed_out, at, have, want);
              exact &= have == want;
              near &= abs(have_f - want) <= 1;
            }
      CHECK(exact);
      CHECK(near);
      { /* the listing names the step; a blob runs it bit for bit */
        text_buf *t = (text_buf *)calloc(1, sizeof *t);
        fuse_plan *loaded = NULL;
        fuse_plan_load_options lo_opt;
        unsigned char again[sizeof got];
        fuse_plan_write(p, text_sink, t);
        CHECK_STR_CONTAINS(t->s, "qconv2d");
        t->n = 0;
        CHECK_EQ_INT(fuse_plan_save(p, text_sink, t), FUSE_OK);
        memset(&lo_opt, 0, sizeof lo_opt);
        lo_opt.copy = 1;
        CHECK_EQ_INT(fuse_plan_load(t->s, t->n, &lo_opt, &loaded), FUSE_OK);
        outs[0] = again;
        CHECK_EQ_INT(fuse_run_typed(loaded, ins, outs, NULL), FUSE_OK);
        CHECK(memcmp(again, got, sizeof got) == 0);
        fuse_plan_destroy(loaded);
        free(t);
      }
      fuse_plan_destroy(p);
      fuse_graph_destroy(plain);
      fuse_graph_destroy(g);
    }
}

/* The QDQ pattern around a matmul / Gemm (dequantize of uint8, matmul with int8 weights
   dequantized per tensor or per output column, bias?, relu / clip?, quantize) becomes one
   integer step (fuse.qmatmul): bit for bit the sums worked out here in int64 and requantized
   as ONNX Runtime does it (x_scale * w_scale / y_scale in float32, the clamp, half to even);
   within one unit of the float path; the same through a blob. Two forms: a MatMul of a
   batched [2, 5, 13] input by [13, 20] weights (per column: axis 1), and a Gemm with transB
   (the transpose of [20, 13] weights, per row: axis 0) of a [7, 13] input; 13 input columns
   (odd), 20 output columns (a panel of 16 and a tail), 10 or 7 rows (no whole tile); the
   activations' zero point 121; bias absent, the dequantize of int32 [20] or a float32 [1, 20]
   (rounded to the sums' units); relu, clip or nothing; uint8 or int8 out; the reference
   kernels (the direct loops), the scalar tiles and every SIMD ISA this CPU runs. */
#define QM_N 20
#define QM_K 13
typedef struct qm_data {
  int8_t wq[QM_N * QM_K]; /* [n][k] */
  float ws[QM_N], bf[QM_N];
  int32_t bq[QM_N];
} qm_data;

/* The graph of one case: xq -> dequantize -> matmul(, W) -> bias? -> act? -> quantize, W the
   dequantize of [13, 20] int8 (MatMul) or the transpose of that of [20, 13] (Gemm with
   transB); act 0 relu, 1 clip(-0.5, 1.5), 2 none. */
static fuse_graph *qmatmul_graph(const qm_data *d, int gemm, int per_channel, int bias, int act,
                                 int signed_out) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs3[3] = {2, 5, QM_K}, xs2[2] = {7, QM_K}, wshape[2], n_shape[1] = {QM_N}, row[2] = {1, QM_N};
  int8_t wt[QM_N * QM_K], yz8 = -3;
  uint8_t xz = 121, yz = 7;
  static const int perm[2] = {1, 0};
  float bs[QM_N];
  fuse_value x, w, y;
  int i;
  for (i = 0; i < QM_N; i++) bs[i] = 0.05f * d->ws[per_channel ? i : 0]; /* x_scale * w_scale[n],
                                                                           as quantizers write it */
  for (i = 0; i < QM_N * QM_K; i++) /* [k][n] for the MatMul */
    wt[gemm ? i : (i % QM_K) * QM_N + i / QM_K] = d->wq[i];
  wshape[0] = gemm ? QM_N : QM_K, wshape[1] = gemm ? QM_K : QM_N;
  x = fuse_typed_input(g, "xq", FUSE_UINT8, gemm ? 2 : 3, gemm ? xs2 : xs3);
  x = fuse_dequantize(g, x, fuse_scalar(g, 0.05f), fuse_typed_constant(g, "xz", FUSE_UINT8, 0, NULL, &xz), 0);
  w = fuse_typed_constant(g, "wq", FUSE_INT8, 2, wshape, wt);
  w = fuse_dequantize(g, w, per_channel ? fuse_constant(g, "ws", 1, n_shape, d->ws) : fuse_scalar(g, d->ws[0]),
                      FUSE_NONE, gemm ? 0 : 1);
  if (gemm) w = fuse_transpose(g, w, perm);
  y = fuse_matmul(g, x, w);
  if (bias == 1)
    y = fuse_add(g, y, fuse_dequantize(g, fuse_typed_constant(g, "bq", FUSE_INT32, 1, n_shape, d->bq),
                                       fuse_constant(g, "bs", 1, n_shape, bs), FUSE_NONE, 0));
  if (bias == 2) y = fuse_add(g, fuse_constant(g, "b", 2, row, d->bf), y);
  if (act == 0) y = fuse_relu(g, y);
  if (act == 1) y = fuse_clip(g, y, -0.5f, 1.5f);
  y = fuse_quantize(g, y, fuse_scalar(g, 0.04f),
                    signed_out ? fuse_typed_constant(g, "yz", FUSE_INT8, 0, NULL, &yz8)
                               : fuse_typed_constant(g, "yz", FUSE_UINT8, 0, NULL, &yz),
                    0);
  fuse_output(g, y);
  return g;
}

/* v / s rounded half to even, + z, clamped (quantize's rounding of a float32 quotient) */
static int32_t ref_quantize(float v, float s, int32_t z, int32_t lo, int32_t hi) {
  double q = (double)(v / s), r = floor(q);
  if (q - r > 0.5 || (q - r == 0.5 && fmod(r, 2.0) != 0)) r += 1;
  r += z;
  return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}

typedef struct big_buf {
  char s[1 << 16];
  size_t n;
} big_buf;
static void big_sink(void *user, const char *text, size_t len) {
  big_buf *b = (big_buf *)user;
  if (b->n + len < sizeof b->s) memcpy(b->s + b->n, text, len), b->n += len, b->s[b->n] = 0;
}

/* The plan's listing; the caller frees it. */
static big_buf *listing_of(const fuse_plan *p) {
  big_buf *t = (big_buf *)calloc(1, sizeof *t);
  if (t) fuse_plan_write(p, big_sink, t);
  return t;
}

TEST(qdq_matmul_runs_in_integers) {
  int gemm, per_channel, bias, act, signed_out, isa, cases = 0;
  qm_data d;
  uint8_t xq[10 * QM_K];
  int i;
  for (i = 0; i < QM_N * QM_K; i++) d.wq[i] = (int8_t)((i * 53) % 255 - 127);
  d.wq[0] = -128, d.wq[1] = 127, d.wq[QM_N * QM_K - 1] = -128;
  for (i = 0; i < (int)sizeof xq; i++) xq[i] = (uint8_t)((i * 29 + 7) % 256);
  xq[0] = 0, xq[1] = 255;
  for (i = 0; i < QM_N; i++) {
    d.ws[i] = 0.004f + 0.001f * (float)(i % 7);
    d.bq[i] = (i * 977) % 6001 - 3000;
    d.bf[i] = 0.01f * (float)(i % 9) - 0.04f;
  }
  for (gemm = 0; gemm < 2; gemm++)
  for (per_channel = 0; per_channel < 2; per_channel++)
  for (bias = 0; bias < 3; bias++)
  for (act = 0; act < 3; act++)
  for (signed_out = 0; signed_out < 2; signed_out++)
  for (isa = FUSE_ISA_AUTO; isa <= FUSE_ISA_NEON; isa++) {
    fuse_graph *g, *plain;
    fuse_plan *p = NULL;
    fuse_compile_options o;
    unsigned char got[10 * QM_N], flt[10 * QM_N];
    const void *ins[1];
    void *outs[1];
    int rows = gemm ? 7 : 10, r, n, k, exact = 1, near = 1;
    int32_t lo = signed_out ? -128 : 0, hi = signed_out ? 127 : 255, yz = signed_out ? -3 : 7;
    big_buf *t;
    if (isa != FUSE_ISA_AUTO && !isa_runs_here(isa)) continue;
    if (isa == FUSE_ISA_AUTO && (bias == 2 || act == 1)) continue; /* (the direct loops: fewer) */
    cases++;
    g = qmatmul_graph(&d, gemm, per_channel, bias, act, signed_out);
    plain = qmatmul_graph(&d, gemm, per_channel, bias, act, signed_out);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    if (fuse_graph_status(g) != FUSE_OK) {
      fprintf(stderr, "  %s\n", fuse_graph_error(g));
      fuse_graph_destroy(g), fuse_graph_destroy(plain);
      return;
    }
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    memset(&o, 0, sizeof o);
    o.num_threads = 1;
    o.isa = isa == FUSE_ISA_AUTO ? FUSE_ISA_AUTO : (fuse_isa)isa;
    o.reference_kernels = isa == FUSE_ISA_AUTO;
    CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
    if (!p) {
      fuse_graph_destroy(g), fuse_graph_destroy(plain);
      continue;
    }
    CHECK_EQ_INT(fuse_plan_step_count(p), 1); /* the one integer step, no layout conversion */
    t = listing_of(p);
    CHECK(t && strstr(t->s, "qmatmul") != NULL);
    if (fuse_plan_step_count(p) != 1 && t) fprintf(stderr, "%s\n", t->s);
    free(t);
    ins[0] = xq, outs[0] = got;
    CHECK_EQ_INT(fuse_run_typed(p, ins, outs, NULL), FUSE_OK);
    outs[0] = flt;
    CHECK_EQ_INT(run_typed(plain, 1, ins, outs), FUSE_OK);
    if (act == 0) lo = lo > yz ? lo : yz;
    if (act == 1) {
      int32_t qa = ref_quantize(-0.5f, 0.04f, yz, lo, hi), qb = ref_quantize(1.5f, 0.04f, yz, lo, hi);
      lo = lo > qa ? lo : qa, hi = hi < qb ? hi : qb;
    }
    for (r = 0; r < rows; r++)
      for (n = 0; n < QM_N; n++) {
        float wscale = d.ws[per_channel ? n : 0], unit = 0.05f * wscale;
        int64_t acc = 0;
        int32_t want;
        int have, have_f, at = r * QM_N + n;
        if (bias == 1) acc = d.bq[n];
        if (bias == 2) acc = ref_quantize(d.bf[n], unit, 0, INT32_MIN, INT32_MAX);
        for (k = 0; k < QM_K; k++) acc += (int64_t)(xq[r * QM_K + k] - 121) * d.wq[n * QM_K + k];
        want = ref_requant(acc, unit / 0.04f, yz, lo, hi);
        have = signed_out ? (int)(int8_t)got[at] : (int)got[at];
        have_f = signed_out ? (int)(int8_t)flt[at] : (int)flt[at];
        if (have != want && exact)
          fprintf(stderr, "  gemm %d per-channel %d bias %d act %d signed %d isa %d: [%d][%d] got %d, want %d\n",
                  gemm, per_channel, bias, act, signed_out, isa, r, n, have, want);
        exact &= have == want;
        near &= abs(have_f - want) <= 1;
      }
    CHECK(exact);
    CHECK(near);
    { /* a blob runs it bit for bit */
      big_buf *b = (big_buf *)calloc(1, sizeof *b);
      fuse_plan *loaded = NULL;
      fuse_plan_load_options lo_opt;
      unsigned char again[sizeof got];
      CHECK_EQ_INT(fuse_plan_save(p, big_sink, b), FUSE_OK);
      memset(&lo_opt, 0, sizeof lo_opt);
      lo_opt.copy = 1;
      CHECK_EQ_INT(fuse_plan_load(b->s, b->n, &lo_opt, &loaded), FUSE_OK);
      outs[0] = again;
      memset(again, 0x5a, sizeof again);
      if (loaded) CHECK_EQ_INT(fuse_run_typed(loaded, ins, outs, NULL), FUSE_OK);
      CHECK(memcmp(again, got, (size_t)(rows * QM_N)) == 0);
      fuse_plan_destroy(loaded);
      free(b);
    }
    fuse_plan_destroy(p);
    fuse_graph_destroy(plain);
    fuse_graph_destroy(g);
  }
  CHECK(cases >= 32 + 2 * 72); /* the direct loops' cases, the scalar tiles' and one ISA's at least */
}

/* One change of a word of a step's packed header (fuse__qhead's int32 words: x_zero, y_zero,
   lo, hi, K, C, KH, KW, layout, b_zero, x_scale (10), b_scale, y_scale (12), num_post,
   y_signed (14), depthwise), its bits. */
typedef struct head_change {
  int word;
  int64_t value;
} head_change;

/* Graph g compiled for isa and saved; the step's packed header, found in the blob by its first
   eight words, changed in each of the n ways in turn: each loads to an error naming the step
   ("(step)") and no plan; unchanged, it loads. */
static void check_blob_header(fuse_graph *g, int isa, const int32_t head[8], const head_change *bad,
                              int n, const char *step) {
  fuse_plan *p = NULL, *q;
  fuse_compile_options o;
  big_buf *b = (big_buf *)calloc(1, sizeof *b);
  size_t at, found = 0;
  int i;
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  memset(&o, 0, sizeof o);
  o.reference_kernels = isa == FUSE_ISA_AUTO;
  o.isa = (fuse_isa)isa;
  o.num_threads = 1;
  CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
  if (p) CHECK_EQ_INT(fuse_plan_save(p, big_sink, b), FUSE_OK);
  for (at = 0; p && at + 8 * sizeof(int32_t) <= b->n; at += 4)
    if (memcmp(b->s + at, head, 8 * sizeof(int32_t)) == 0) found = at + 1;
  CHECK(found != 0);
  for (i = 0; found && i < n; i++) {
    char why[256] = "";
    fuse_plan_load_options lo;
    uint32_t old, value = (uint32_t)bad[i].value;
    fuse_result r;
    memcpy(&old, b->s + found - 1 + 4 * bad[i].word, 4);
    memcpy(b->s + found - 1 + 4 * bad[i].word, &value, 4);
    memset(&lo, 0, sizeof lo);
    lo.copy = 1, lo.error = why, lo.error_size = sizeof why;
    q = NULL;
    r = fuse_plan_load(b->s, b->n, &lo, &q);
    if (r == FUSE_OK || !strstr(why, step))
      fprintf(stderr, "  isa %d: word %d = %u: %d, '%s'\n", isa, bad[i].word, value, (int)r, why);
    CHECK(r != FUSE_OK && q == NULL);
    CHECK_STR_CONTAINS(why, step);
    fuse_plan_destroy(q);
    memcpy(b->s + found - 1 + 4 * bad[i].word, &old, 4);
  }
  q = NULL; /* unchanged, it loads */
  CHECK_EQ_INT(fuse_plan_load(b->s, b->n, NULL, &q), FUSE_OK);
  fuse_plan_destroy(q);
  free(b);
  fuse_plan_destroy(p);
}

/* A saved qmatmul plan whose packed header is changed (the header lives in the weights, which
   only verify_weights checksums): every change that no longer fits the step's tensors or
   bytes is refused when loading, naming the step; none crashes. The header is found in the
   blob by its first eight words (x_zero 121, y_zero 7, lo 0, hi 255, K 20, C 13, KH 1, KW 1). */
TEST(qmatmul_blob_header_checked) {
  static const head_change bad[] = {{4, 21},  {4, 0},   {4, -1},  {4, 1 << 30}, {5, 12}, {5, 14},
                                    {5, 0},   {6, 2},   {7, 0},   {0, 256},     {0, -1}, {8, 3},
                                    {8, 5},   {8, -1},  {15, 1},  {2, 256},     {3, -1}};
  static const int32_t head[8] = {121, 7, 0, 255, QM_N, QM_K, 1, 1};
  qm_data d;
  int i, isa;
  memset(&d, 0, sizeof d);
  for (i = 0; i < QM_N * QM_K; i++) d.wq[i] = (int8_t)(i % 7 - 3);
  for (i = 0; i < QM_N; i++) d.ws[i] = 0.01f;
  for (isa = FUSE_ISA_AUTO; isa <= FUSE_ISA_SCALAR; isa++) { /* the direct form, the pairs */
    fuse_graph *g = qmatmul_graph(&d, 1, 1, 0, 2, 0);
    check_blob_header(g, isa, head, bad, (int)(sizeof bad / sizeof bad[0]), "(qmatmul)");
    fuse_graph_destroy(g);
  }
}

/* --emit-config for a plan of a qmatmul step: it keeps the step and the kernels it runs on
   (the direct loops on the reference kernels, the tiles on the scalar ones), leaves out the
   other integer kernels and the float matmul. */
TEST(qmatmul_config) {
  qm_data d;
  int i, reference;
  memset(&d, 0, sizeof d);
  for (i = 0; i < QM_N * QM_K; i++) d.wq[i] = (int8_t)(i % 5 - 2);
  for (i = 0; i < QM_N; i++) d.ws[i] = 0.02f;
  for (reference = 0; reference < 2; reference++) {
    fuse_graph *g = qmatmul_graph(&d, 0, 0, 1, 0, 1);
    fuse_plan *p = NULL;
    fuse_compile_options o;
    big_buf *t = (big_buf *)calloc(1, sizeof *t);
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    memset(&o, 0, sizeof o);
    o.isa = reference ? FUSE_ISA_AUTO : FUSE_ISA_SCALAR;
    o.reference_kernels = reference;
    CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
    CHECK_EQ_INT(fuse_plan_write_config((const fuse_plan *const *)&p, 1, big_sink, t), FUSE_OK);
    CHECK(strstr(t->s, "#define FUSE_NO_KERNEL_QMATMUL\n") == NULL);
    CHECK(strstr(t->s, "#define FUSE_NO_RUN_QINT\n") == NULL);
    CHECK((strstr(t->s, "#define FUSE_NO_KERNEL_QTILES\n") == NULL) == !reference);
    CHECK((strstr(t->s, "#define FUSE_NO_KERNEL_QDIRECT\n") == NULL) == reference);
    CHECK_STR_CONTAINS(t->s, "#define FUSE_NO_KERNEL_QDW\n");
    CHECK_STR_CONTAINS(t->s, "#define FUSE_NO_KERNEL_QPOOL\n");
    CHECK_STR_CONTAINS(t->s, "#define FUSE_NO_RUN_MATMUL\n");
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
    free(t);
  }
}

/* What stays in float32, and --explain says why: int8 activations, weights with a zero point
   that is not 0 (uint8 ones), per-row scales of [K, N] weights, a product whose result is not
   quantized, a batched right operand. */
TEST(qmatmul_what_stays_float) {
  static const char *texts[5] = {
      "graph(%xq: i8[3, 4]) {\n  %s: [] = const{0.1}\n  %w: [4, 2] = const{1, 2, 3, 4}\n"
      "  %x = dequantize(%xq, %s)\n  %m = matmul(%x, %wd)\n  %y = quantize(%m, %s)\n  return %y\n}\n",
      "graph(%xq: u8[3, 4]) {\n  %s: [] = const{0.1}\n  %z: u8[] = const{3}\n  %wq: u8[4, 2] = const\n"
      "  %x = dequantize(%xq, %s)\n  %wd = dequantize(%wq, %s, %z)\n  %m = matmul(%x, %wd)\n"
      "  %y = quantize(%m, %s)\n  return %y\n}\n",
      "graph(%xq: u8[3, 2]) {\n  %s: [] = const{0.1}\n  %s2: [2] = const{0.1, 0.2}\n  %wq: i8[2, 2] = const\n"
      "  %x = dequantize(%xq, %s)\n  %wd = dequantize(%wq, %s2, axis=0)\n  %m = matmul(%x, %wd)\n"
      "  %y = quantize(%m, %s)\n  return %y\n}\n",
      "graph(%xq: u8[3, 4]) {\n  %s: [] = const{0.1}\n  %wq: i8[4, 2] = const\n"
      "  %x = dequantize(%xq, %s)\n  %wd = dequantize(%wq, %s)\n  %m = matmul(%x, %wd)\n"
      "  %y = sigmoid(%m)\n  return %y\n}\n",
      "graph(%xq: u8[2, 3, 4], %b: u8[2, 4, 2]) {\n  %s: [] = const{0.1}\n"
      "  %x = dequantize(%xq, %s)\n  %wd = dequantize(%b, %s)\n  %m = matmul(%x, %wd)\n"
      "  %y = quantize(%m, %s)\n  return %y\n}\n"};
  static const char *why[5] = {"the dequantize of int8 values (signed activations)",
                               "its weights", "its weights", "its result 'm' is not quantized",
                               "it multiplies [2,3,4] by [2,4,2]"};
  int i;
  for (i = 0; i < 5; i++) {
    char text[1024];
    fuse_graph *g = NULL;
    fuse_plan *p = NULL;
    big_buf *t = (big_buf *)calloc(1, sizeof *t);
    strcpy(text, texts[i]);
    if (i == 0) replace(text, "%w: [4, 2] = const{1, 2, 3, 4}", "%wq: i8[4, 2] = const\n  %wd = dequantize(%wq, %s)");
    CHECK_EQ_INT(fuse_graph_parse(text, NULL, &g), FUSE_OK);
    if (fuse_graph_status(g) != FUSE_OK) fprintf(stderr, "  %d: %s\n", i, fuse_graph_error(g));
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
    if (p) fuse_plan_write(p, big_sink, t);
    CHECK(strstr(t->s, "qmatmul") == NULL && strstr(t->s, "matmul") != NULL);
    t->n = 0, t->s[0] = 0;
    CHECK_EQ_INT(fuse_explain_write(g, big_sink, t), FUSE_OK);
    CHECK_STR_CONTAINS(t->s, "not in fuse.qmatmul's pattern");
    CHECK_STR_CONTAINS(t->s, why[i]);
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
    free(t);
  }
}

/* The other integer steps: qadd (dequantize, add, relu, quantize), qlut (a clip, a sigmoid,
   a requantization), qmax_pool2d; within 1 of the float path (the unoptimized graph on the
   reference kernels, which rounds the dequantized sum and the division in float32 where the
   integer steps round them once, in double), and qadd bit for bit the sums worked out here in
   double. */
TEST(qdq_add_lut_pool_run_in_integers) {
  static const char *text =
      "graph(%a: u8[1, 3, 6, 4], %b: u8[1, 3, 6, 4]) {\n"
      "  %sa: [] = const{0.1}\n"
      "  %za: u8[] = const{12}\n"
      "  %sb: [] = const{0.05}\n"
      "  %zb: u8[] = const{200}\n"
      "  %s1: [] = const{0.07}\n"
      "  %z1: u8[] = const{3}\n"
      "  %s2: [] = const{0.01}\n"
      "  %s4: [] = const{0.00390625}\n"
      "  %z4: i8[] = const{-128}\n"
      "  %da = dequantize(%a, %sa, %za)\n"
      "  %db = dequantize(%b, %sb, %zb)\n"
      "  %sum = add(%da, %db)\n"
      "  %r = relu(%sum)\n"
      "  %q1 = quantize(%r, %s1, %z1)\n"
      "  %d1 = dequantize(%q1, %s1, %z1)\n"
      "  %c = clip(%d1, lo=0.2, hi=1)\n"
      "  %q2 = quantize(%c, %s2)\n"
      "  %d2 = dequantize(%q2, %s2)\n"
      "  %mp = max_pool2d(%d2, kernel=[3, 2], strides=[2, 2], padding=[1, 0, 1, 0], dilation=[1, 1], ceil_mode=0)\n"
      "  %q3 = quantize(%mp, %s2)\n"
      "  %sg = sigmoid(%da)\n"
      "  %q4 = quantize(%sg, %s4, %z4)\n"
      "  %q5 = quantize(%db, %s1, %z1)\n"
      "  return %q1, %q2, %q3, %q4, %q5\n"
      "}\n";
  fuse_graph *g = NULL, *plain = NULL;
  fuse_plan *p = NULL;
  fuse_compile_options o;
  uint8_t a[72], b[72], got[5][72], want[5][72];
  const void *ins[2];
  void *outs[5];
  int i, k, steps;
  const int sizes[5] = {72, 72, 3 * 3 * 2, 72, 72};
  CHECK_EQ_INT(fuse_graph_parse(text, NULL, &g), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_parse(text, NULL, &plain), FUSE_OK);
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "  %s\n", fuse_graph_error(g));
    fuse_graph_destroy(g), fuse_graph_destroy(plain);
    return;
  }
  for (i = 0; i < 72; i++) a[i] = (uint8_t)(i * 37 % 256), b[i] = (uint8_t)(255 - i * 11 % 256);
  ins[0] = a, ins[1] = b;
  for (k = 0; k < 5; k++) outs[k] = want[k];
  CHECK_EQ_INT(run_typed(plain, 1, ins, outs), FUSE_OK);
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  memset(&o, 0, sizeof o);
  o.num_threads = 1;
  CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
  steps = fuse_plan_step_count(p);
  CHECK_EQ_INT(steps, 5); /* qadd, qlut, qmax_pool2d, qlut, qlut: no float step */
  {
    text_buf *t = (text_buf *)calloc(1, sizeof *t);
    fuse_plan_write(p, text_sink, t);
    CHECK_STR_CONTAINS(t->s, "qadd");
    CHECK_STR_CONTAINS(t->s, "qlut");
    CHECK_STR_CONTAINS(t->s, "qmax_pool2d");
    if (steps != 5) fprintf(stderr, "%s\n", t->s);
    free(t);
  }
  for (k = 0; k < 5; k++) outs[k] = got[k];
  CHECK_EQ_INT(fuse_run_typed(p, ins, outs, NULL), FUSE_OK);
  for (i = 0; i < 72; i++) { /* qadd: relu((a - 12) 0.1 + (b - 200) 0.05) / 0.07, half to even */
    double v = (a[i] - 12) * (double)0.1f + (b[i] - 200) * (double)0.05f, r;
    v = (v > 0 ? v : 0) / (double)0.07f;
    r = floor(v);
    if (v - r > 0.5 || (v - r == 0.5 && fmod(r, 2) != 0)) r += 1;
    r = r + 3 > 255 ? 255 : r + 3;
    CHECK_EQ_INT(got[0][i], (int)r);
  }
  for (k = 0; k < 5; k++)
    for (i = 0; i < sizes[k]; i++) {
      int d = k == 3 ? (int)(int8_t)got[k][i] - (int)(int8_t)want[k][i] : got[k][i] - want[k][i];
      if (abs(d) > 1) {
        fprintf(stderr, "  output %d [%d]: %d, the float path %d\n", k, i, got[k][i], want[k][i]);
        CHECK(0);
        break;
      }
    }
  fuse_plan_destroy(p);
  fuse_graph_destroy(plain);
  fuse_graph_destroy(g);
}

/* ---------------------------------------------------------- qglobal_avg_pool2d -- */
/* The QDQ pattern around a global average pool (dequantize of uint8 / int8, global_avg_pool2d,
   quantize to the same type) becomes one integer step (fuse.qglobal_avg_pool2d) that reads its
   input in the layout it is in: bit for bit the sums worked out here (in int64, wrapped to
   int32 as ONNX Runtime's int32 sums wrap) requantized as ONNX Runtime's
   QLinearGlobalAveragePool does it: the multiplier x_scale / (y_scale * H * W) in float32,
   (float)sum times it, clamped, rounded half to even, plus the zero point. Two producers: the
   graph's input (NCHW), and a 1x1 qconv2d that passes the values through (weights the identity,
   scale 1: NHWC on the integer tiles, NCHW on the reference plans' direct loops; its output
   int8 when the pool's type is: the values less 128). Channels 1, 5, 56 (the AVX2 rows' 32,
   16 and 8) and 300 (two blocks of 256); pixels 1, 3 x 5, 7 x 7 and 40 x 41 (more than the 257
   rows the AVX2 rows sum in 16 bits at once); two images; zero points anywhere; uint8 and int8;
   the reference kernels, the scalar rows and every SIMD ISA this CPU runs, one thread and three
   (their chunks run in reverse order); and a blob of the plan. */
typedef struct gap_case {
  int C, H, W, is_signed, conv;
  int32_t xz, yz;
  float xs, ys;
} gap_case;

typedef struct grow_buf {
  unsigned char *d;
  size_t n, cap;
} grow_buf;
static void grow_sink(void *user, const char *text, size_t len) {
  grow_buf *b = (grow_buf *)user;
  if (b->n + len > b->cap) {
    size_t cap = (b->n + len) * 2;
    unsigned char *d = (unsigned char *)realloc(b->d, cap);
    if (!d) return;
    b->d = d, b->cap = cap;
  }
  memcpy(b->d + b->n, text, len), b->n += len;
}

static void reverse_for(void *user, fuse_task_fn task, void *ctx, int n) {
  int i;
  (void)user;
  for (i = n - 1; i >= 0; i--) task(ctx, i, i + 1);
}

/* xq [2, C, H, W] (uint8; int8 unless conv) -> [conv] -> dequantize -> global_avg_pool2d ->
   quantize; the values the pool reads are xq's, less 128 when conv makes them int8. */
static fuse_graph *gap_graph(const gap_case *k) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs[4] = {2, k->C, k->H, k->W};
  fuse_type t = k->is_signed ? FUSE_INT8 : FUSE_UINT8;
  uint8_t z8 = (uint8_t)k->xz, yz8 = (uint8_t)k->yz;
  int8_t zs = (int8_t)k->xz, yzs = (int8_t)k->yz;
  fuse_value x, zero = k->is_signed ? fuse_typed_constant(g, "xz", FUSE_INT8, 0, NULL, &zs)
                                    : fuse_typed_constant(g, "xz", FUSE_UINT8, 0, NULL, &z8);
  if (k->conv) { /* uint8 in, the identity: y = x (uint8) or x - 128 (int8) */
    int64_t ws[4] = {k->C, k->C, 1, 1};
    int8_t *w = (int8_t *)calloc((size_t)(k->C * k->C), 1);
    uint8_t cz = (uint8_t)(k->is_signed ? k->xz + 128 : k->xz);
    int i;
    for (i = 0; i < k->C; i++) w[i * k->C + i] = 1;
    x = fuse_dequantize(g, fuse_typed_input(g, "xq", FUSE_UINT8, 4, xs), fuse_scalar(g, k->xs),
                        fuse_typed_constant(g, "cz", FUSE_UINT8, 0, NULL, &cz), 0);
    x = fuse_conv2d(g, x, fuse_dequantize(g, fuse_typed_constant(g, "w", FUSE_INT8, 4, ws, w),
                                          fuse_scalar(g, 1.0f), FUSE_NONE, 0), NULL);
    x = fuse_quantize(g, x, fuse_scalar(g, k->xs), zero, 0);
    free(w);
  } else {
    x = fuse_typed_input(g, "xq", t, 4, xs);
  }
  x = fuse_global_avg_pool2d(g, fuse_dequantize(g, x, fuse_scalar(g, k->xs), zero, 0));
  x = fuse_quantize(g, x, fuse_scalar(g, k->ys),
                    k->is_signed ? fuse_typed_constant(g, "yz", FUSE_INT8, 0, NULL, &yzs)
                                 : fuse_typed_constant(g, "yz", FUSE_UINT8, 0, NULL, &yz8),
                    0);
  fuse_output(g, x);
  return g;
}

/* ONNX Runtime's result for the values v[0 .. P) (uint8 or int8 bytes) of one channel */
static int32_t gap_want(const uint8_t *v, int64_t P, int is_signed, int32_t xz, float xs, float ys,
                        int32_t yz) {
  int64_t sum = 0, i;
  int32_t lo = is_signed ? -128 : 0, hi = lo + 255, acc;
  float m = xs / (ys * (float)P);
  for (i = 0; i < P; i++) sum += is_signed ? (int8_t)v[i] : v[i];
  sum -= (int64_t)xz * P;
  acc = (int32_t)(uint32_t)(uint64_t)sum; /* (ONNX Runtime's int32 sums wrap) */
  return ref_requant(acc, m, yz, lo, hi);
}

TEST(qdq_global_avg_pool_runs_in_integers) {
  static const int Cs[4] = {1, 5, 56, 300}, Hs[4] = {1, 3, 7, 40}, Ws[4] = {1, 5, 7, 41};
  int ci, pi, sg, conv, isa, threads, cases = 0, steps_ok = 1;
  for (ci = 0; ci < 4; ci++)
  for (pi = 0; pi < 4; pi++)
  for (sg = 0; sg < 2; sg++)
  for (conv = 0; conv < 2; conv++) {
    gap_case k;
    int64_t P, n, c, i, count;
    uint8_t *xq, *vals, *got, *again;
    int32_t lo;
    k.C = Cs[ci], k.H = Hs[pi], k.W = Ws[pi], k.is_signed = sg, k.conv = conv;
    P = (int64_t)k.H * k.W, count = 2 * k.C * P;
    lo = sg ? -128 : 0;
    k.xz = lo + (ci * 67 + pi * 31 + sg * 5 + 17) % 256;
    k.yz = lo + (ci * 13 + pi * 71 + conv * 40 + 3) % 256;
    k.xs = 0.0173f + 0.001f * (float)ci, k.ys = k.xs * (0.137f + 0.11f * (float)pi);
    xq = (uint8_t *)malloc((size_t)count), vals = (uint8_t *)malloc((size_t)count);
    got = (uint8_t *)malloc((size_t)(2 * k.C)), again = (uint8_t *)malloc((size_t)(2 * k.C));
    for (i = 0; i < count; i++) xq[i] = (uint8_t)((i * 2654435761u >> 7) % 256);
    if (count > 3) xq[0] = 0, xq[1] = 255, xq[2] = 128;
    for (i = 0; i < count; i++) vals[i] = (uint8_t)(conv && sg ? xq[i] - 128 : xq[i]);
    for (isa = FUSE_ISA_AUTO; isa <= FUSE_ISA_NEON; isa++)
    for (threads = 1; threads <= 3; threads += 2) {
      fuse_graph *g;
      fuse_plan *p = NULL;
      fuse_compile_options o;
      const void *ins[1];
      void *outs[1];
      big_buf *t;
      int exact = 1;
      if (isa != FUSE_ISA_AUTO && !isa_runs_here(isa)) continue;
      cases++;
      g = gap_graph(&k);
      CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
      CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
      memset(&o, 0, sizeof o);
      o.isa = (fuse_isa)isa;
      o.reference_kernels = isa == FUSE_ISA_AUTO;
      o.num_threads = threads;
      if (threads > 1) o.parallel_for = reverse_for;
      CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
      if (!p) {
        fuse_graph_destroy(g);
        continue;
      }
      t = listing_of(p); /* one integer step for the pool, no layout conversion, no float */
      if (t && (!strstr(t->s, "qglobal_avg_pool2d") || strstr(t->s, "qto_nchw") ||
                strstr(t->s, "dequantize") || fuse_plan_step_count(p) > 1 + 2 * conv)) {
        if (steps_ok) fprintf(stderr, "%s\n", t->s);
        steps_ok = 0;
      }
      free(t);
      ins[0] = xq, outs[0] = got;
      memset(got, 0x5a, (size_t)(2 * k.C));
      CHECK_EQ_INT(fuse_run_typed(p, ins, outs, NULL), FUSE_OK);
      for (n = 0; n < 2; n++)
        for (c = 0; c < k.C; c++) {
          int32_t want = gap_want(vals + (n * k.C + c) * P, P, sg, k.xz, k.xs, k.ys, k.yz);
          int have = sg ? (int)(int8_t)got[n * k.C + c] : (int)got[n * k.C + c];
          if (have != want && exact)
            fprintf(stderr, "  C %d pixels %dx%d signed %d conv %d isa %d threads %d: [%d][%d] got %d, want %d\n",
                    k.C, k.H, k.W, sg, conv, isa, threads, (int)n, (int)c, have, (int)want);
          exact &= have == want;
        }
      CHECK(exact);
      if (threads == 1) { /* a blob runs it bit for bit */
        grow_buf b;
        fuse_plan *loaded = NULL;
        memset(&b, 0, sizeof b);
        CHECK_EQ_INT(fuse_plan_save(p, grow_sink, &b), FUSE_OK);
        CHECK_EQ_INT(fuse_plan_load(b.d, b.n, NULL, &loaded), FUSE_OK);
        outs[0] = again;
        memset(again, 0xa5, (size_t)(2 * k.C));
        if (loaded) CHECK_EQ_INT(fuse_run_typed(loaded, ins, outs, NULL), FUSE_OK);
        CHECK(memcmp(again, got, (size_t)(2 * k.C)) == 0);
        fuse_plan_destroy(loaded);
        free(b.d);
      }
      fuse_plan_destroy(p);
      fuse_graph_destroy(g);
    }
    free(xq), free(vals), free(got), free(again);
  }
  CHECK(steps_ok);
  CHECK(cases >= 64 * 2 * 2); /* the reference plans and the scalar rows at least */
}

/* The rounding: ties (a multiplier of 0.5 and odd sums: half to even, so 2.5 -> 2, -1.5 ->
   -2), and the order of ONNX Runtime's float32 arithmetic, x_scale / (y_scale * H * W) then
   (float)sum times it: for each of two other ways of forming it, (x_scale / y_scale) / (H * W)
   and the exact quotient in double, y_scale is searched (from a fixed start) for a sum whose
   result they change, and that sum is one channel's. Every ISA this CPU runs, the reference
   kernels and the scalar rows. */
static int gap_check_channels(gap_case *k, const int32_t *accs, int C) {
  int64_t P = (int64_t)k->H * k->W, c, i;
  uint8_t *xq = (uint8_t *)malloc((size_t)(2 * C * P)), got[2 * 64];
  int isa, ok = 1;
  k->C = C, k->conv = 0;
  for (c = 0; c < 2 * C; c++) { /* channel c's pixels summing to accs[c % C] + xz * P */
    int64_t rest = (int64_t)accs[c % C] + (int64_t)k->xz * P - (k->is_signed ? -128 * P : 0);
    for (i = 0; i < P; i++) {
      int64_t v = rest > 255 ? 255 : rest;
      rest -= v;
      xq[c * P + i] = (uint8_t)(k->is_signed ? v - 128 : v);
    }
    if (rest) ok = 0; /* (not a sum the pixels can make) */
  }
  for (isa = FUSE_ISA_AUTO; isa <= FUSE_ISA_NEON && ok; isa++) {
    fuse_graph *g;
    fuse_plan *p = NULL;
    fuse_compile_options o;
    const void *ins[1];
    void *outs[1];
    if (isa != FUSE_ISA_AUTO && !isa_runs_here(isa)) continue;
    g = gap_graph(k);
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    memset(&o, 0, sizeof o);
    o.isa = (fuse_isa)isa;
    o.reference_kernels = isa == FUSE_ISA_AUTO;
    CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
    ins[0] = xq, outs[0] = got;
    if (p) CHECK_EQ_INT(fuse_run_typed(p, ins, outs, NULL), FUSE_OK);
    for (c = 0; c < 2 * C && p; c++) {
      int32_t want = gap_want(xq + c * P, P, k->is_signed, k->xz, k->xs, k->ys, k->yz);
      int have = k->is_signed ? (int)(int8_t)got[c] : (int)got[c];
      if (have != want) {
        fprintf(stderr, "  isa %d, channel %d (sum %d): got %d, want %d\n", isa, (int)c,
                (int)accs[c % C], have, (int)want);
        ok = 0;
      }
    }
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
  }
  free(xq);
  return ok;
}

TEST(qglobal_avg_pool_rounding) {
  gap_case k;
  int32_t accs[16];
  int c, way;
  memset(&k, 0, sizeof k);
  k.H = 2, k.W = 2, k.xz = 10, k.yz = 7, k.xs = 0.5f, k.ys = 0.25f; /* 0.5 / (0.25 * 4) = 0.5 */
  for (c = 0; c < 16; c++) accs[c] = 2 * c - 15; /* odd: x.5 each */
  CHECK(gap_check_channels(&k, accs, 16));
  CHECK_EQ_INT(gap_want((const uint8_t *)"\x0a\x0a\x0a\x0f", 4, 0, 10, 0.5f, 0.25f, 7), 2 + 7);
  for (way = 0; way < 2; way++) {
    int found = 0, step;
    k.H = 3, k.W = 5, k.xz = 37, k.yz = 90, k.xs = 0.0173f, k.is_signed = way;
    if (way) k.xz = -20, k.yz = 5;
    for (step = 0; step < 200000 && !found; step++) {
      int32_t acc, lo = k.is_signed ? -128 : 0;
      k.ys = k.xs * (0.05f + 0.0000713f * (float)step);
      for (acc = (lo - k.xz) * 15; acc <= (lo + 255 - k.xz) * 15 && !found; acc++) {
        float m = k.xs / (k.ys * 15.0f), other = (k.xs / k.ys) / 15.0f;
        int32_t want = ref_requant(acc, m, k.yz, lo, lo + 255), alt;
        if (way == 0) {
          alt = ref_requant(acc, other, k.yz, lo, lo + 255);
        } else {
          double e = (double)acc * (double)k.xs / ((double)k.ys * 15.0), r = floor(e);
          if (e - r > 0.5 || (e - r == 0.5 && fmod(r, 2.0) != 0)) r += 1;
          r += k.yz;
          alt = (int32_t)(r < lo ? lo : r > lo + 255 ? lo + 255 : r);
        }
        if (want != alt) found = 1, accs[0] = acc;
      }
    }
    CHECK(found);
    for (c = 1; c < 16; c++) /* the rest anywhere in the range */
      accs[c] = ((k.is_signed ? -128 : 0) - k.xz) * 15 + (c * 211) % (255 * 15 + 1);
    if (found) CHECK(gap_check_channels(&k, accs, 16));
  }
}

/* Large sums: one channel of 3000 x 3000 pixels (under ONNX Runtime's 2^24), all 255 with zero
   point 0 (the int32 sum wraps, as ONNX Runtime's does: 2,295,000,000 - 2^32), and int8 ones
   of -128 (with the zero point's share a sum of -1,197,000,000), through the integer step on the scalar rows and this
   CPU's; and a multiplier that ONNX Runtime refuses (y_scale so small that x_scale / (y_scale
   * H * W) >= 256) leaves the pool in float32. */
TEST(qglobal_avg_pool_large_sums) {
  gap_case k;
  int sg, isa;
  int64_t P = 3000 * 3000;
  uint8_t *xq = (uint8_t *)malloc((size_t)(2 * P));
  memset(&k, 0, sizeof k);
  k.C = 1, k.H = 3000, k.W = 3000, k.xs = 0.5f, k.ys = 0.25f;
  for (sg = 0; sg < 2 && xq; sg++)
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_AVX512; isa++) {
    fuse_graph *g;
    fuse_plan *p = NULL;
    fuse_compile_options o;
    const void *ins[1];
    void *outs[1];
    uint8_t got[2];
    int32_t want;
    if (!isa_runs_here(isa)) continue;
    k.is_signed = sg, k.xz = sg ? 5 : 0, k.yz = sg ? -3 : 1;
    memset(xq, sg ? 0x80 : 0xff, (size_t)(2 * P));
    g = gap_graph(&k);
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    memset(&o, 0, sizeof o);
    o.isa = (fuse_isa)isa;
    o.num_threads = 1;
    CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
    if (p) CHECK_EQ_INT(fuse_plan_step_count(p), 1);
    ins[0] = xq, outs[0] = got;
    if (p) CHECK_EQ_INT(fuse_run_typed(p, ins, outs, NULL), FUSE_OK);
    want = gap_want(xq, P, sg, k.xz, k.xs, k.ys, k.yz);
    CHECK_EQ_INT(sg ? (int)(int8_t)got[0] : (int)got[0], want);
    CHECK_EQ_INT(sg ? (int)(int8_t)got[1] : (int)got[1], want);
    CHECK_EQ_INT(want, sg ? -128 : 0); /* (-1.1e9 x 2 / 9e6 = -256; the wrapped -2e9: 0) */
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
  }
  { /* the multiplier out of ONNX Runtime's range: float32 */
    fuse_graph *g;
    fuse_plan *p = NULL;
    big_buf *t;
    k.H = 2, k.W = 2, k.is_signed = 0, k.xz = 0, k.yz = 0, k.ys = k.xs / 1100.0f;
    g = gap_graph(&k);
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
    t = listing_of(p);
    CHECK(t && !strstr(t->s, "qglobal_avg_pool2d") && strstr(t->s, "global_avg_pool2d"));
    free(t);
    t = (big_buf *)calloc(1, sizeof *t);
    CHECK_EQ_INT(fuse_explain_write(g, big_sink, t), FUSE_OK);
    CHECK_STR_CONTAINS(t->s, "not in fuse.qglobal_avg_pool2d's pattern");
    CHECK_STR_CONTAINS(t->s, "outside [2^-32, 256)");
    free(t);
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
  }
  free(xq);
}

/* A saved qglobal_avg_pool2d plan whose packed header is changed: every change that no longer
   fits its tensors is refused when loading, naming the step. The header is found by its first
   eight words (x_zero 17, y_zero 9, lo 0, hi 255, K 0, C 5, KH 0, KW 0). */
TEST(qglobal_avg_pool_blob_header_checked) {
  static const head_change bad[] = {{5, 4},  {5, 6},  {0, 256},         {0, -1},          {1, 300},
                                    {2, -1}, {3, 256}, {14, 1},         {10, 0},          {10, 0x7fc00000},
                                    {12, 0x36000000}, {12, 0xbf800000}};
  static const int32_t head[8] = {17, 9, 0, 255, 0, 5, 0, 0};
  gap_case k;
  int isa;
  memset(&k, 0, sizeof k);
  k.C = 5, k.H = 3, k.W = 4, k.xz = 17, k.yz = 9, k.xs = 0.02f, k.ys = 0.01f;
  for (isa = FUSE_ISA_AUTO; isa <= FUSE_ISA_SCALAR; isa++) {
    fuse_graph *g = gap_graph(&k);
    check_blob_header(g, isa, head, bad, (int)(sizeof bad / sizeof bad[0]), "(qglobal_avg_pool2d)");
    fuse_graph_destroy(g);
  }
}

/* --emit-config for a plan of a qglobal_avg_pool2d step keeps the step's family and leaves out
   the other integer kernels and the float pool. */
TEST(qglobal_avg_pool_config) {
  gap_case k;
  fuse_graph *g;
  fuse_plan *p = NULL;
  fuse_compile_options o;
  big_buf *t = (big_buf *)calloc(1, sizeof *t);
  memset(&k, 0, sizeof k);
  k.C = 3, k.H = 2, k.W = 2, k.xs = 0.02f, k.ys = 0.01f;
  g = gap_graph(&k);
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  memset(&o, 0, sizeof o);
  o.isa = FUSE_ISA_SCALAR;
  CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
  CHECK_EQ_INT(fuse_plan_write_config((const fuse_plan *const *)&p, 1, big_sink, t), FUSE_OK);
  CHECK(strstr(t->s, "#define FUSE_NO_KERNEL_QGLOBAL_AVG_POOL\n") == NULL);
  CHECK(strstr(t->s, "#define FUSE_NO_RUN_QINT\n") == NULL);
  CHECK_STR_CONTAINS(t->s, "#define FUSE_NO_KERNEL_QPOOL\n");
  CHECK_STR_CONTAINS(t->s, "#define FUSE_NO_KERNEL_QMATMUL\n");
  CHECK_STR_CONTAINS(t->s, "#define FUSE_NO_KERNEL_QTILES\n");
  CHECK_STR_CONTAINS(t->s, "#define FUSE_NO_RUN_GLOBAL_AVG_POOL\n");
  fuse_plan_destroy(p);
  fuse_graph_destroy(g);
  free(t);
}

/* What stays in float32 and --explain says why: the pool quantized to another type, a relu
   between the pool and its quantize; and a quantize -> dequantize pair around a flatten with
   the same scale and zero point is dropped (the flatten of the integers), with another scale
   it is not. */
TEST(qglobal_avg_pool_what_stays_float) {
  static const char *texts[2] = {
      "graph(%xq: u8[1, 4, 3, 3]) {\n  %s: [] = const{0.1}\n  %z: i8[] = const{3}\n"
      "  %x = dequantize(%xq, %s)\n  %p = global_avg_pool2d(%x)\n  %y = quantize(%p, %s, %z)\n"
      "  return %y\n}\n",
      "graph(%xq: u8[1, 4, 3, 3]) {\n  %s: [] = const{0.1}\n"
      "  %x = dequantize(%xq, %s)\n  %p = global_avg_pool2d(%x)\n  %r = relu(%p)\n"
      "  %y = quantize(%r, %s)\n  return %y\n}\n"};
  static const char *why[2] = {"it is quantized to int8 by 'y', its input is uint8",
                               "its result 'p' is not quantized"};
  static const char *flat =
      "graph(%xq: u8[1, 4, 3, 3]) {\n  %s: [] = const{0.1}\n  %s2: [] = const{%S2}\n"
      "  %z: u8[] = const{7}\n  %x = dequantize(%xq, %s, %z)\n  %p = global_avg_pool2d(%x)\n"
      "  %q = quantize(%p, %s, %z)\n  %d = dequantize(%q, %s, %z)\n  %f = flatten(%d, axis=1)\n"
      "  %y = quantize(%f, %s2, %z)\n  return %y\n}\n";
  int i;
  for (i = 0; i < 4; i++) {
    char text[1024];
    fuse_graph *g = NULL;
    fuse_plan *p = NULL;
    big_buf *t = (big_buf *)calloc(1, sizeof *t);
    strcpy(text, i < 2 ? texts[i] : flat);
    replace(text, "%S2", i == 2 ? "0.1" : "0.2");
    CHECK_EQ_INT(fuse_graph_parse(text, NULL, &g), FUSE_OK);
    if (fuse_graph_status(g) != FUSE_OK) fprintf(stderr, "  %d: %s\n", i, fuse_graph_error(g));
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
    if (p) fuse_plan_write(p, big_sink, t);
    if (i < 2) {
      CHECK(strstr(t->s, "qglobal_avg_pool2d") == NULL && strstr(t->s, "global_avg_pool2d") != NULL);
      t->n = 0, t->s[0] = 0;
      CHECK_EQ_INT(fuse_explain_write(g, big_sink, t), FUSE_OK);
      CHECK_STR_CONTAINS(t->s, "not in fuse.qglobal_avg_pool2d's pattern");
      CHECK_STR_CONTAINS(t->s, why[i]);
    } else { /* the pool in integers; then the flatten of its integers, or a requantization */
      CHECK_STR_CONTAINS(t->s, "qglobal_avg_pool2d");
      CHECK((strstr(t->s, "dequantize") == NULL) == (i == 2));
      CHECK_EQ_INT(fuse_plan_step_count(p), i == 2 ? 2 : 3); /* (the copy of the view out) */
      if (fuse_plan_step_count(p) != (i == 2 ? 2 : 3)) fprintf(stderr, "%s\n", t->s);
      if (i == 2) {
        const uint8_t xq[36] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 250, 251, 252, 253, 254, 255, 0, 0, 0};
        uint8_t got[4];
        const void *ins[1];
        void *outs[1];
        ins[0] = xq, outs[0] = got;
        CHECK_EQ_INT(fuse_run_typed(p, ins, outs, NULL), FUSE_OK);
        CHECK_EQ_INT(got[0], 5); /* (the mean of 1..9; of zeros, whose value is -0.7) */
        CHECK_EQ_INT(got[2], 0);
        t->n = 0, t->s[0] = 0;
        CHECK_EQ_INT(fuse_explain_write(g, big_sink, t), FUSE_OK);
        CHECK_STR_CONTAINS(t->s, "global_avg_pool2d 'p': composite fuse.qglobal_avg_pool2d, one step");
      }
    }
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
    free(t);
  }
}

int main(void) {
  RUN(quantize_rounds_half_to_even_and_saturates);
  RUN(quantize_int8_and_int32_and_no_zero_point);
  RUN(per_axis_quantize_dequantize);
  RUN(typed_graph_text_plan_and_blob);
  RUN(optimize_folds_dequantized_weights);
  RUN(errors_name_the_op_and_the_types);
  RUN(qdq_conv_runs_in_integers);
  RUN(qdq_add_lut_pool_run_in_integers);
  RUN(qdq_matmul_runs_in_integers);
  RUN(qmatmul_blob_header_checked);
  RUN(qmatmul_config);
  RUN(qmatmul_what_stays_float);
  RUN(qdq_global_avg_pool_runs_in_integers);
  RUN(qglobal_avg_pool_rounding);
  RUN(qglobal_avg_pool_large_sums);
  RUN(qglobal_avg_pool_blob_header_checked);
  RUN(qglobal_avg_pool_config);
  RUN(qglobal_avg_pool_what_stays_float);
  return runner_finish("quant");
}
