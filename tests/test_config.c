/* test_config.c - leaving out of a build what its plans do not use (src/config.h,
   src/plan/needs.c).

   This program's implementation is built with five pieces left out: sigmoid post-ops, resize
   steps, the NHWC depthwise kernels, the integer matmul and the integer global average pool
   (FUSE_NO_POST_SIGMOID, FUSE_NO_RUN_RESIZE, FUSE_NO_KERNEL_DW_NHWC, FUSE_NO_KERNEL_QMATMUL,
   FUSE_NO_KERNEL_QGLOBAL_AVG_POOL). fuse_compile refuses a plan that needs the first two or
   the last two, with FUSE_ERROR_UNSUPPORTED and the define's name; the kernel choice reads the kernel tables, so
   a depthwise conv is planned on another kernel; what the build has compiles and runs as the
   reference kernels do. fuse_plan_write_config writes, for one plan or several, the defines of
   every piece none of them uses and none of those they use; bad arguments are refused. An
   integer qadd step keeps the post-op kinds it runs through the post-op functions (not its
   clamps, which it applies inline): compile and fuse_plan_load refuse one that needs sigmoid.
   (fuse_plan_load's refusal of a blob that needs a piece left out is the runtime-only header
   check's: make check-runtime-only.)

   Build: cc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I. tests/test_config.c \
              -o build/test_config -lm */
#define FUSE_NO_POST_SIGMOID
#define FUSE_NO_RUN_RESIZE
#define FUSE_NO_KERNEL_DW_NHWC
#define FUSE_NO_KERNEL_QMATMUL
#define FUSE_NO_KERNEL_QGLOBAL_AVG_POOL
#define FUSE_IMPLEMENTATION
#include "../fuse.h"
#include "runner.h"

#include <stdlib.h>

/* ---- helpers */

typedef struct text {
  char buf[16384];
  size_t len;
} text;

static void text_write(void *user, const char *s, size_t n) {
  text *t = (text *)user;
  if (t->len + n >= sizeof t->buf) n = sizeof t->buf - 1 - t->len;
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = 0;
}

/* whether the header defines FUSE_NO_<name> */
static int defines(const text *t, const char *name) {
  char line[128];
  snprintf(line, sizeof line, "#define FUSE_NO_%s\n", name);
  return strstr(t->buf, line) != NULL;
}

static float test_value(int i) { return (float)((i * 37 + 11) % 23 - 11) / 8.0f; }

static fuse_value constant(fuse_graph *g, int rank, const int64_t *shape) {
  static float data[4096];
  int64_t n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= shape[i];
  for (i = 0; i < n; i++) data[i] = test_value(i + 5) * 0.25f;
  return fuse_constant(g, NULL, rank, shape, data);
}

/* conv2d 3x3 (padding 1) of x [1, C, 8, 8], then what `act` adds: 0 bias and relu6, 1 bias and
   sigmoid, 2 a depthwise 3x3 conv after it; fuse_optimize'd */
static fuse_graph *conv_graph(int C, int act) {
  const int64_t xs[4] = {1, C, 8, 8}, ws[4] = {C, C, 3, 3}, bs[4] = {1, C, 1, 1};
  const int64_t dws[4] = {C, 1, 3, 3};
  fuse_conv2d_attrs pad = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}, dw = pad;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value y = fuse_conv2d(g, fuse_input(g, "x", 4, xs), constant(g, 4, ws), &pad);
  y = fuse_add(g, y, constant(g, 4, bs));
  if (act == 0) y = fuse_clip(g, y, 0.0f, 6.0f);
  if (act == 1) y = fuse_sigmoid(g, y);
  if (act == 2) {
    dw.groups = C;
    y = fuse_conv2d(g, y, constant(g, 4, dws), &dw);
  }
  fuse_output(g, y);
  fuse_optimize(g, "fuse");
  return g;
}

static fuse_result compile(const fuse_graph *g, fuse_isa isa, int reference, char *why,
                           fuse_plan **out) {
  fuse_compile_options opt;
  memset(&opt, 0, sizeof opt);
  opt.isa = isa;
  opt.reference_kernels = reference;
  opt.num_threads = 1;
  opt.error = why;
  opt.error_size = 256;
  why[0] = 0;
  return fuse_compile(g, &opt, out);
}

/* plan's output on the test input, into y (n floats) */
static int run(fuse_plan *plan, int C, float *y) {
  static float x[4096];
  const float *in[1];
  float *out[1];
  int i;
  for (i = 0; i < C * 64; i++) x[i] = test_value(i);
  in[0] = x, out[0] = y;
  return fuse_run(plan, in, out, NULL) == FUSE_OK;
}

/* ---- a build without some pieces */

TEST(compile_refuses_a_post_op_left_out) {
  char why[256];
  fuse_plan *plan = NULL;
  fuse_graph *g = conv_graph(8, 1);
  CHECK_EQ_INT(fuse_composite_count(g), 1); /* conv2d + bias + sigmoid, one fused step */
  CHECK_EQ_INT(compile(g, FUSE_ISA_SCALAR, 0, why, &plan), FUSE_ERROR_UNSUPPORTED);
  CHECK(plan == NULL);
  CHECK_STR_CONTAINS(why, "FUSE_NO_POST_SIGMOID");
  CHECK_STR_CONTAINS(why, "(conv2d) needs what this build leaves out");
  CHECK_EQ_INT(compile(g, FUSE_ISA_AUTO, 1, why, &plan), FUSE_ERROR_UNSUPPORTED);
  CHECK_STR_CONTAINS(why, "FUSE_NO_POST_SIGMOID");
  fuse_graph_destroy(g);
}

TEST(compile_refuses_a_kind_of_step_left_out) {
  const int64_t xs[4] = {1, 2, 4, 4}, sizes[4] = {1, 2, 8, 8};
  char why[256];
  fuse_plan *plan = NULL;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, fuse_resize(g, fuse_input(g, "x", 4, xs), sizes, NULL, NULL));
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_EQ_INT(compile(g, fuse_cpu_isa(), 0, why, &plan), FUSE_ERROR_UNSUPPORTED);
  CHECK_STR_CONTAINS(why, "FUSE_NO_RUN_RESIZE");
  CHECK_STR_CONTAINS(why, "(resize)");
  fuse_graph_destroy(g);
}

/* a quantized Gemm (dequantize of uint8, matmul by the transpose of dequantized int8 weights,
   quantize): its qmatmul step is refused on every kernel set, naming the define */
TEST(compile_refuses_qmatmul_left_out) {
  const int64_t xs[2] = {3, 8}, ws[2] = {4, 8};
  static const int perm[2] = {1, 0};
  int8_t w[32];
  uint8_t zero = 128;
  char why[256];
  fuse_plan *plan = NULL;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x, y;
  int i;
  for (i = 0; i < 32; i++) w[i] = (int8_t)(i - 16);
  x = fuse_dequantize(g, fuse_typed_input(g, "x", FUSE_UINT8, 2, xs), fuse_scalar(g, 0.1f),
                      fuse_typed_constant(g, NULL, FUSE_UINT8, 0, NULL, &zero), 0);
  y = fuse_matmul(g, x, fuse_transpose(g, fuse_dequantize(g, fuse_typed_constant(g, NULL, FUSE_INT8, 2, ws, w),
                                                         fuse_scalar(g, 0.01f), FUSE_NONE, 0),
                                       perm));
  fuse_output(g, fuse_quantize(g, y, fuse_scalar(g, 0.2f), FUSE_NONE, 0));
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK_EQ_INT(compile(g, FUSE_ISA_SCALAR, 0, why, &plan), FUSE_ERROR_UNSUPPORTED);
  CHECK(plan == NULL);
  CHECK_STR_CONTAINS(why, "(qmatmul) needs what this build leaves out");
  CHECK_STR_CONTAINS(why, "FUSE_NO_KERNEL_QMATMUL");
  CHECK_EQ_INT(compile(g, FUSE_ISA_AUTO, 1, why, &plan), FUSE_ERROR_UNSUPPORTED);
  CHECK_STR_CONTAINS(why, "FUSE_NO_KERNEL_QMATMUL");
  fuse_graph_destroy(g);
}

/* a quantized global average pool (dequantize of int8, global_avg_pool2d, quantize to int8):
   its qglobal_avg_pool2d step is refused on every kernel set, naming the define */
TEST(compile_refuses_qglobal_avg_pool_left_out) {
  const int64_t xs[4] = {1, 3, 4, 4};
  int8_t zero = -5;
  char why[256];
  fuse_plan *plan = NULL;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x, z = fuse_typed_constant(g, NULL, FUSE_INT8, 0, NULL, &zero);
  x = fuse_dequantize(g, fuse_typed_input(g, "x", FUSE_INT8, 4, xs), fuse_scalar(g, 0.1f), z, 0);
  fuse_output(g, fuse_quantize(g, fuse_global_avg_pool2d(g, x), fuse_scalar(g, 0.05f), z, 0));
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK_EQ_INT(compile(g, FUSE_ISA_SCALAR, 0, why, &plan), FUSE_ERROR_UNSUPPORTED);
  CHECK(plan == NULL);
  CHECK_STR_CONTAINS(why, "(qglobal_avg_pool2d) needs what this build leaves out");
  CHECK_STR_CONTAINS(why, "FUSE_NO_KERNEL_QGLOBAL_AVG_POOL");
  CHECK_EQ_INT(compile(g, FUSE_ISA_AUTO, 1, why, &plan), FUSE_ERROR_UNSUPPORTED);
  CHECK_STR_CONTAINS(why, "FUSE_NO_KERNEL_QGLOBAL_AVG_POOL");
  fuse_graph_destroy(g);
}

/* what the build has runs as the reference kernels do: a fused conv + bias + relu6, and a
   depthwise conv on another kernel than the NHWC depthwise one this build left out */
TEST(runs_what_it_has) {
  static float want[4096], got[4096];
  int isa, act;
  for (act = 0; act <= 2; act += 2) {
    fuse_graph *g = conv_graph(16, act);
    fuse_plan *ref = NULL;
    char why[256];
    CHECK_EQ_INT(compile(g, FUSE_ISA_AUTO, 1, why, &ref), FUSE_OK);
    CHECK(ref && run(ref, 16, want));
    for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_AVX512; isa++) {
      fuse_plan *plan = NULL;
      text t;
      if (isa != FUSE_ISA_SCALAR && isa != (int)fuse_cpu_isa()) continue;
      CHECK_EQ_INT(compile(g, (fuse_isa)isa, 0, why, &plan), FUSE_OK);
      if (!plan) continue;
      memset(&t, 0, sizeof t);
      CHECK_EQ_INT(fuse_plan_write(plan, text_write, &t), FUSE_OK);
      if (act == 2) CHECK(strstr(t.buf, "depthwise") == NULL); /* on another kernel */
      CHECK(run(plan, 16, got));
      CHECK(runner_rel_error(got, want, 16 * 64) < 1e-5);
      fuse_plan_destroy(plan);
    }
    fuse_plan_destroy(ref);
    fuse_graph_destroy(g);
  }
}

/* ---- fuse_plan_write_config */

TEST(config_of_one_plan) {
  char why[256];
  fuse_plan *plan = NULL;
  fuse_graph *g = conv_graph(8, 0);
  text t;
  CHECK_EQ_INT(compile(g, FUSE_ISA_SCALAR, 0, why, &plan), FUSE_OK);
  memset(&t, 0, sizeof t);
  CHECK_EQ_INT(fuse_plan_write_config((const fuse_plan *const *)&plan, 1, text_write, &t), FUSE_OK);
  CHECK_STR_CONTAINS(t.buf, "for 1 plan of 3 steps"); /* to NHWC, the conv, back to NCHW */
  /* what it uses: a conv2d step, fused with a clamp, on the scalar kernels */
  CHECK(!defines(&t, "RUN_CONV2D"));
  CHECK(!defines(&t, "POST_CLAMP"));
  /* what it does not */
  CHECK(defines(&t, "AVX512") && defines(&t, "AVX2") && defines(&t, "NEON"));
  CHECK(defines(&t, "RUN_RESIZE") && defines(&t, "RUN_MATMUL") && defines(&t, "RUN_UNARY"));
  CHECK(defines(&t, "POST_SIGMOID") && defines(&t, "POST_ADD") && defines(&t, "POST_GELU"));
  CHECK(defines(&t, "KERNEL_REFERENCE") && defines(&t, "KERNEL_GROUPED") &&
        defines(&t, "KERNEL_ROWS"));
  /* each define guarded: a user's own does not clash */
  CHECK_STR_CONTAINS(t.buf, "#ifndef FUSE_NO_RUN_RESIZE\n#define FUSE_NO_RUN_RESIZE\n#endif\n");
  fuse_plan_destroy(plan);
  fuse_graph_destroy(g);
}

TEST(config_of_several_plans) {
  const int64_t s[2] = {4, 8};
  char why[256];
  fuse_plan *plans[3] = {NULL, NULL, NULL};
  fuse_graph *conv = conv_graph(8, 0), *add = fuse_graph_create(NULL);
  text t;
  fuse_value a = fuse_input(add, "a", 2, s), b = fuse_input(add, "b", 2, s);
  fuse_output(add, fuse_add(add, a, b));
  CHECK_EQ_INT(compile(conv, FUSE_ISA_SCALAR, 0, why, &plans[0]), FUSE_OK);
  CHECK_EQ_INT(compile(add, FUSE_ISA_SCALAR, 0, why, &plans[1]), FUSE_OK);
  CHECK_EQ_INT(compile(conv, FUSE_ISA_AUTO, 1, why, &plans[2]), FUSE_OK); /* reference kernels */
  memset(&t, 0, sizeof t);
  CHECK_EQ_INT(fuse_plan_write_config((const fuse_plan *const *)plans, 3, text_write, &t), FUSE_OK);
  CHECK_STR_CONTAINS(t.buf, "for 3 plans of 5 steps");
  CHECK(!defines(&t, "RUN_CONV2D") && !defines(&t, "RUN_LAYOUT"));
  CHECK(!defines(&t, "RUN_CHAIN") && !defines(&t, "KERNEL_CHAIN")); /* the add: a chain step */
  CHECK(!defines(&t, "KERNEL_REFERENCE")); /* the reference plan's conv */
  CHECK(defines(&t, "RUN_MATMUL") && defines(&t, "AVX512"));
  fuse_plan_destroy(plans[0]);
  fuse_plan_destroy(plans[1]);
  fuse_plan_destroy(plans[2]);
  fuse_graph_destroy(conv);
  fuse_graph_destroy(add);
}

/* An AVX-512 plan keeps AVX2 (its transposes run there) */
TEST(config_keeps_avx2_for_avx512) {
  char why[256];
  fuse_plan *plan = NULL;
  fuse_graph *g;
  text t;
  if (fuse_cpu_isa() != FUSE_ISA_AVX512) return;
  g = conv_graph(16, 0);
  CHECK_EQ_INT(compile(g, FUSE_ISA_AVX512, 0, why, &plan), FUSE_OK);
  memset(&t, 0, sizeof t);
  CHECK_EQ_INT(fuse_plan_write_config((const fuse_plan *const *)&plan, 1, text_write, &t), FUSE_OK);
  CHECK(!defines(&t, "AVX512") && !defines(&t, "AVX2") && defines(&t, "NEON"));
  fuse_plan_destroy(plan);
  fuse_graph_destroy(g);
}

/* ---- the integer steps: a qadd, quantize(f(add(dequantize(a), dequantize(b)))), applies its
   element-wise ops f after the sum: clamps inline, any other op through the post-op functions
   (and the clamps then too), so the build must keep their kinds */

/* f: the ops from %v to %y */
static fuse_graph *qadd_graph(const char *f) {
  char body[1024];
  fuse_graph *g = NULL;
  snprintf(body, sizeof body,
           "graph(%%a: u8[1, 2, 4, 4], %%b: u8[1, 2, 4, 4]) {\n"
           "  %%s: [] = const{0.05}\n"
           "  %%z: u8[] = const{128}\n"
           "  %%so: [] = const{0.00390625}\n"
           "  %%da = dequantize(%%a, %%s, %%z)\n"
           "  %%db = dequantize(%%b, %%s, %%z)\n"
           "  %%v = add(%%da, %%db)\n"
           "%s"
           "  %%q = quantize(%%y, %%so)\n"
           "  return %%q\n"
           "}\n",
           f);
  CHECK_EQ_INT(fuse_graph_parse(body, NULL, &g), FUSE_OK);
  if (g && fuse_graph_status(g) != FUSE_OK) fprintf(stderr, "  %s\n", fuse_graph_error(g));
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  return g;
}

/* the plan of qadd_graph(f) on the scalar kernels, its config into t; NULL if refused */
static fuse_plan *qadd_plan(const char *f, text *t) {
  char why[256];
  fuse_plan *plan = NULL;
  fuse_graph *g = qadd_graph(f);
  CHECK_EQ_INT(compile(g, FUSE_ISA_SCALAR, 0, why, &plan), FUSE_OK);
  fuse_graph_destroy(g);
  if (!plan) return NULL;
  CHECK_EQ_INT(fuse_plan_step_count(plan), 1); /* one integer step */
  memset(t, 0, sizeof *t);
  CHECK_EQ_INT(fuse_plan_write_config((const fuse_plan *const *)&plan, 1, text_write, t), FUSE_OK);
  CHECK(!defines(t, "RUN_QINT") && defines(t, "RUN_BINARY") && defines(t, "RUN_QUANT"));
  return plan;
}

static void blob_sink(void *user, const char *s, size_t n) {
  text *t = (text *)user;
  if (t->len + n > sizeof t->buf) n = sizeof t->buf - t->len;
  memcpy(t->buf + t->len, s, n);
  t->len += n;
}

TEST(qadd_keeps_its_post_ops) {
  static text a, b; /* blobs */
  char why[256];
  fuse_plan *plan = NULL;
  fuse_graph *g = qadd_graph("  %y = sigmoid(%v)\n");
  fuse_plan_load_options lo;
  text t;
  size_t at, weights_at;
  uint64_t u;
  /* this build has no sigmoid: compile refuses the qadd that needs it */
  CHECK_EQ_INT(compile(g, FUSE_ISA_SCALAR, 0, why, &plan), FUSE_ERROR_UNSUPPORTED);
  CHECK(plan == NULL);
  CHECK_STR_CONTAINS(why, "(qadd) needs what this build leaves out: FUSE_NO_POST_SIGMOID");
  fuse_graph_destroy(g);
  /* clamps only: inline, the post-op functions not needed */
  plan = qadd_plan("  %y = relu(%v)\n", &t);
  CHECK(defines(&t, "POST_CLAMP"));
  fuse_plan_destroy(plan);
  /* a tanh among them: tanh and the clamp kept */
  plan = qadd_plan("  %r = relu(%v)\n  %y = tanh(%r)\n", &t);
  CHECK(!defines(&t, "POST_TANH") && !defines(&t, "POST_CLAMP"));
  CHECK(defines(&t, "POST_SOFTPLUS") && defines(&t, "POST_GELU"));
  memset(&a, 0, sizeof a);
  if (plan) CHECK_EQ_INT(fuse_plan_save(plan, blob_sink, &a), FUSE_OK);
  fuse_plan_destroy(plan);
  /* fuse_plan_load reads them from the step's packed bytes: the tanh blob with its tanh made a
     sigmoid (the word where it differs from the softplus one's, in the weights, which the
     structure's checksum does not cover) is refused */
  plan = qadd_plan("  %r = relu(%v)\n  %y = softplus(%r)\n", &t);
  memset(&b, 0, sizeof b);
  if (plan) CHECK_EQ_INT(fuse_plan_save(plan, blob_sink, &b), FUSE_OK);
  fuse_plan_destroy(plan);
  CHECK(a.len > 64 && a.len == b.len && a.len < sizeof a.buf);
  if (!(a.len > 64 && a.len == b.len && a.len < sizeof a.buf)) return;
  memcpy(&u, a.buf + 32, 8); /* the header's offset of the weights */
  weights_at = (size_t)u;
  CHECK(weights_at > 64 && weights_at < a.len);
  for (at = weights_at; at + 4 <= a.len && memcmp(a.buf + at, b.buf + at, 4) == 0; at += 4) {
  }
  CHECK(at + 4 <= a.len);
  if (at + 4 > a.len) return;
  {
    int32_t kind;
    memcpy(&kind, a.buf + at, 4);
    CHECK_EQ_INT(kind, FUSE_POST_TANH);
    memset(&lo, 0, sizeof lo);
    lo.error = why, lo.error_size = sizeof why;
    lo.copy = 1; /* (the buffer is not 64-byte aligned) */
    plan = NULL;
    CHECK_EQ_INT(fuse_plan_load(a.buf, a.len, &lo, &plan), FUSE_OK); /* as saved: loads */
    fuse_plan_destroy(plan);
    kind = FUSE_POST_SIGMOID;
    memcpy(a.buf + at, &kind, 4);
    plan = NULL;
    CHECK_EQ_INT(fuse_plan_load(a.buf, a.len, &lo, &plan), FUSE_ERROR_UNSUPPORTED);
    CHECK(plan == NULL);
    CHECK_STR_CONTAINS(why, "(qadd) needs what this build leaves out: FUSE_NO_POST_SIGMOID");
    fuse_plan_destroy(plan);
  }
}

TEST(config_arguments) {
  const fuse_plan *none[1] = {NULL};
  text t;
  memset(&t, 0, sizeof t);
  CHECK_EQ_INT(fuse_plan_write_config(NULL, 1, text_write, &t), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_plan_write_config(none, 1, text_write, &t), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_plan_write_config(none, -1, text_write, &t), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_plan_write_config(none, 0, NULL, &t), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(t.len, 0);
  /* no plan: everything can go */
  CHECK_EQ_INT(fuse_plan_write_config(NULL, 0, text_write, &t), FUSE_OK);
  CHECK(defines(&t, "RUN_CONV2D") && defines(&t, "RUN_UNARY") && defines(&t, "KERNEL_IGEMM") &&
        defines(&t, "POST_CLAMP") && defines(&t, "POST_PRELU") && defines(&t, "AVX2"));
}

int main(void) {
  RUN(compile_refuses_a_post_op_left_out);
  RUN(compile_refuses_a_kind_of_step_left_out);
  RUN(compile_refuses_qmatmul_left_out);
  RUN(compile_refuses_qglobal_avg_pool_left_out);
  RUN(runs_what_it_has);
  RUN(config_of_one_plan);
  RUN(config_of_several_plans);
  RUN(config_keeps_avx2_for_avx512);
  RUN(qadd_keeps_its_post_ops);
  RUN(config_arguments);
  return runner_finish("config");
}
