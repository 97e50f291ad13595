/* test_postops.c - every element-wise post-op kind, fused into every kernel path.

   Each case builds conv2d / matmul -> bias -> an activation written the way models write it
   (the ONNX operator, or its decomposed form: x * sigmoid(x), x * relu6(x + 3) / 6,
   x / 2 * (1 + erf(x / sqrt 2)), ...), optimizes it (the default rules, then the growth of
   composites over element-wise ops), and checks:
   - the composite holds the expected post-op kind (fuse_analyze_epilogue on its root);
   - the fused plan on every ISA the CPU has (scalar twin, AVX2, AVX-512) agrees with the same
     graph unoptimized on the reference kernels (each op alone, through libm), normwise within
     1e-5;
   - random chains of up to 8 post-ops, mixed with residual adds, agree the same way;
   - a long reduction (many channel blocks) applies its post-ops once, after the whole sum. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <stdlib.h>

#define TOL 1e-5

static uint32_t rng = 12345;
static float urand(void) { /* [-1, 1) */
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) / 8388608.0 - 1.0);
}

/* The activation forms: the kind the analyzer must find for each. */
enum {
  F_SIGMOID, F_TANH, F_SILU_OP, F_SILU_REV, F_HARDSIGMOID, F_HARDSWISH_OP, F_HARDSWISH_HSIG,
  F_HARDSWISH_RELU6, F_LEAKY, F_PRELU1, F_ELU, F_SELU, F_SOFTPLUS, F_MISH, F_GELU_OP,
  F_GELU_TANH_OP, F_GELU_DECOMPOSED, F_GELU_HALF_FIRST, F_EXP, F_SCALE_SHIFT, F_PRELU_C,
  F_AFFINE_C, F_FORMS
};
static const char *const form_names[F_FORMS] = {
    "sigmoid", "tanh", "x*sigmoid(x)", "sigmoid(x)*x", "hardsigmoid", "hardswish",
    "x*hardsigmoid(x)", "x*relu6(x+3)/6", "leaky_relu", "prelu(one slope)", "elu", "selu",
    "softplus", "x*tanh(softplus(x))", "gelu", "gelu(tanh)", "x*(1+erf(x/sqrt2))*0.5",
    "(x*0.5)*(1+erf(x/sqrt2))", "exp", "(x-0.25)*1.5", "prelu(slope per channel)",
    "relu then mul, add per channel"};
static const int form_kind[F_FORMS] = {
    FUSE_POST_SIGMOID, FUSE_POST_TANH, FUSE_POST_SILU, FUSE_POST_SILU, FUSE_POST_HARDSIGMOID,
    FUSE_POST_HARDSWISH, FUSE_POST_HARDSWISH, FUSE_POST_HARDSWISH, FUSE_POST_LEAKY_RELU,
    FUSE_POST_LEAKY_RELU, FUSE_POST_ELU, FUSE_POST_SELU, FUSE_POST_SOFTPLUS, FUSE_POST_MISH,
    FUSE_POST_GELU, FUSE_POST_GELU_TANH, FUSE_POST_GELU, FUSE_POST_GELU, FUSE_POST_EXP,
    FUSE_POST_LINEAR, FUSE_POST_PRELU, FUSE_POST_CLAMP};

static fuse_value sc(fuse_graph *g, float v) { return fuse_scalar(g, v); }

/* A constant of one value per channel of y, shaped as a model writes it: [K,1,1] for a conv
   output [N,K,H,W] (or [1,K,1,1] when `four`), [K] for a matmul's [M,K]. */
static fuse_value per_channel(fuse_graph *g, fuse_value y, float base, int four) {
  int rank = fuse_value_rank(g, y);
  const int64_t *ys = fuse_value_shape(g, y);
  int64_t K = rank == 4 ? ys[1] : ys[rank - 1], shape[4] = {1, 1, 1, 1}, i;
  float *v = (float *)malloc((size_t)K * sizeof(float));
  fuse_value c;
  for (i = 0; i < K; i++) v[i] = base + 0.05f * (float)((i * 7) % 11) - 0.25f;
  if (rank == 4 && four) shape[1] = K, c = fuse_constant(g, NULL, 4, shape, v);
  else if (rank == 4) shape[0] = K, c = fuse_constant(g, NULL, 3, shape, v);
  else shape[0] = K, c = fuse_constant(g, NULL, 1, shape, v);
  free(v);
  return c;
}

static fuse_value apply_form(fuse_graph *g, fuse_value y, int f) {
  fuse_value t;
  switch (f) {
  case F_SIGMOID: return fuse_sigmoid(g, y);
  case F_TANH: return fuse_tanh(g, y);
  case F_SILU_OP: return fuse_mul(g, y, fuse_sigmoid(g, y));
  case F_SILU_REV: return fuse_mul(g, fuse_sigmoid(g, y), y);
  case F_HARDSIGMOID: return fuse_hardsigmoid(g, y, 0.2f, 0.5f);
  case F_HARDSWISH_OP: return fuse_hardswish(g, y);
  case F_HARDSWISH_HSIG: return fuse_mul(g, y, fuse_hardsigmoid(g, y, 1.0f / 6, 0.5f));
  case F_HARDSWISH_RELU6:
    t = fuse_clip(g, fuse_add(g, y, sc(g, 3)), 0, 6);
    return fuse_div(g, fuse_mul(g, y, t), sc(g, 6));
  case F_LEAKY: return fuse_leaky_relu(g, y, 0.1f);
  case F_PRELU1: return fuse_prelu(g, y, sc(g, 0.25f));
  case F_ELU: return fuse_elu(g, y, 0.7f);
  case F_SELU: return fuse_selu(g, y, 1.6732632f, 1.0507010f);
  case F_SOFTPLUS: return fuse_softplus(g, y);
  case F_MISH: return fuse_mul(g, y, fuse_tanh(g, fuse_softplus(g, y)));
  case F_GELU_OP: return fuse_gelu(g, y, 0);
  case F_GELU_TANH_OP: return fuse_gelu(g, y, 1);
  case F_GELU_DECOMPOSED:
    t = fuse_add(g, fuse_erf(g, fuse_div(g, y, sc(g, 1.4142135f))), sc(g, 1));
    return fuse_mul(g, fuse_mul(g, y, t), sc(g, 0.5f));
  case F_GELU_HALF_FIRST:
    t = fuse_add(g, fuse_erf(g, fuse_div(g, y, sc(g, 1.4142135f))), sc(g, 1));
    return fuse_mul(g, fuse_mul(g, y, sc(g, 0.5f)), t);
  case F_EXP: return fuse_exp(g, fuse_clip(g, y, -INFINITY, 3));
  case F_PRELU_C: return fuse_prelu(g, y, per_channel(g, y, 0.2f, 0));
  case F_AFFINE_C: /* a batch-norm after the activation: relu, then scale and shift */
    t = fuse_mul(g, fuse_relu(g, y), per_channel(g, y, 1.0f, 1));
    return fuse_add(g, per_channel(g, y, 0.1f, 0), t);
  default: return fuse_mul(g, fuse_sub(g, y, sc(g, 0.25f)), sc(g, 1.5f));
  }
}

/* The kernel paths: NCHW GEMM (plain input), NHWC GEMM (input through a clip, so the NHWC
   kernels run), the few-channel stem (3 input channels), depthwise, matmul, and a long
   reduction (many channel blocks). */
enum { P_NCHW, P_NHWC, P_STEM, P_DEPTHWISE, P_DEPTHWISE_NHWC, P_MATMUL, P_LONG, P_PATHS };
static const char *const path_names[P_PATHS] = {"nchw_gemm", "nhwc_gemm", "stem", "depthwise",
                                                "depthwise_nhwc", "matmul", "long_reduction"};

typedef struct built {
  fuse_graph *g;
  fuse_value pre; /* the reduction's output after the bias */
  int64_t ys[4];
  int rank;
  float *xdata;
  size_t nx;
} built;

static float *filled(size_t n, float scale) {
  float *p = (float *)malloc(n * sizeof(float));
  size_t i;
  for (i = 0; i < n; i++) p[i] = urand() * scale;
  return p;
}

static int no_bias; /* build_reduction leaves the bias out */

/* The reduction and its bias (the activation goes after). */
static void build_reduction(built *b, int path) {
  fuse_graph *g = fuse_graph_create(NULL);
  int dw = path == P_DEPTHWISE || path == P_DEPTHWISE_NHWC;
  int C = path == P_STEM ? 3 : path == P_LONG ? 300 : dw ? 40 : 16, K = dw ? C : 24;
  int H = 9, W = 11, KH = path == P_NCHW || path == P_LONG ? 1 : 3;
  int64_t xs[4] = {1, C, H, W}, ws[4], bs[4] = {1, K, 1, 1};
  fuse_value x, y;
  float *w, *bias;
  fuse_conv2d_attrs a;
  b->g = g;
  if (path == P_MATMUL) {
    int64_t mx[2] = {10, 40}, mw[2] = {40, 33}, mb[1] = {33};
    b->nx = 400;
    b->xdata = filled(b->nx, 1);
    w = filled(40 * 33, 0.5f), bias = filled(33, 0.5f);
    x = fuse_input(g, "x", 2, mx);
    y = fuse_matmul(g, x, fuse_constant(g, "w", 2, mw, w));
    if (!no_bias) y = fuse_add(g, y, fuse_constant(g, "b", 1, mb, bias));
    b->rank = 2, b->ys[0] = 10, b->ys[1] = 33;
    b->pre = y;
    free(w), free(bias);
    return;
  }
  memset(&a, 0, sizeof a);
  a.strides[0] = a.strides[1] = 1;
  a.dilation[0] = a.dilation[1] = 1;
  a.groups = dw ? C : 1;
  if (KH == 3) a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  ws[0] = K, ws[1] = C / a.groups, ws[2] = KH, ws[3] = KH;
  b->nx = (size_t)C * H * W;
  b->xdata = filled(b->nx, 1);
  w = filled((size_t)(ws[0] * ws[1] * ws[2] * ws[3]), path == P_LONG ? 0.1f : 0.4f);
  bias = filled((size_t)K, 0.5f);
  if (path == P_DEPTHWISE_NHWC) { /* after a 1x1 conv from 16 channels: the NHWC kernels */
    int64_t x16[4] = {1, 16, H, W}, w1[4] = {C, 16, 1, 1};
    fuse_conv2d_attrs a1 = a;
    float *wp = filled((size_t)C * 16, 0.3f);
    a1.groups = 1;
    a1.padding[0] = a1.padding[1] = a1.padding[2] = a1.padding[3] = 0;
    free(b->xdata);
    b->nx = (size_t)16 * H * W;
    b->xdata = filled(b->nx, 1);
    x = fuse_clip(g, fuse_input(g, "x", 4, x16), -1e30f, 1e30f);
    x = fuse_conv2d(g, x, fuse_constant(g, "w1", 4, w1, wp), &a1);
    free(wp);
  } else {
    x = fuse_input(g, "x", 4, xs);
    if (path == P_NHWC) x = fuse_clip(g, x, -1e30f, 1e30f);
  }
  y = fuse_conv2d(g, x, fuse_constant(g, "w", 4, ws, w), &a);
  if (!no_bias) y = fuse_add(g, y, fuse_constant(g, "b", 4, bs, bias));
  b->rank = 4, b->ys[0] = 1, b->ys[1] = K, b->ys[2] = H, b->ys[3] = W;
  b->pre = y;
  free(w), free(bias);
}

static float *run_graph(fuse_graph *g, const float *x, size_t nx, size_t ny, fuse_isa isa,
                        int reference) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  float *y = (float *)calloc(ny, sizeof(float));
  const float *ins[1];
  float *outs[1];
  (void)nx;
  memset(&o, 0, sizeof o);
  o.isa = isa;
  o.num_threads = 1;
  o.reference_kernels = reference;
  if (fuse_compile(g, &o, &p) != FUSE_OK) {
    free(y);
    return NULL;
  }
  ins[0] = x, outs[0] = y;
  if (fuse_run(p, ins, outs, NULL) != FUSE_OK) { /* the plan's own workspace */
    free(y);
    y = NULL;
  }
  fuse_plan_destroy(p);
  return y;
}

static size_t numel(const built *b) {
  size_t n = 1;
  int i;
  for (i = 0; i < b->rank; i++) n *= (size_t)b->ys[i];
  return n;
}

/* Builds the case twice (one to optimize, one to stay op by op), checks the fused epilogue's
   kinds (want_kinds, n_want; NULL: not checked) and every ISA against the reference. */
typedef fuse_value (*chain_fn)(fuse_graph *g, fuse_value y, int arg, fuse_value *extra_inputs);

static int check_case(int path, chain_fn chain, int arg, const int *want_kinds, int n_want,
                      const char *what) {
  built fused, plain;
  uint32_t seed = rng;
  fuse_value root;
  size_t ny;
  float *want, *got;
  int isa, ok = 1, ci;
  build_reduction(&fused, path);
  root = chain(fused.g, fused.pre, arg, NULL);
  fuse_output(fused.g, root);
  rng = seed; /* the same data again */
  build_reduction(&plain, path);
  fuse_output(plain.g, chain(plain.g, plain.pre, arg, NULL));
  ny = numel(&fused);
  if (fuse_optimize(fused.g, "fuse") != FUSE_OK) {
    fprintf(stderr, "    %s on %s: optimize failed: %s\n", what, path_names[path],
            fuse_graph_error(fused.g));
    ok = 0;
  }
  ci = fuse_value_composite(fused.g, root);
  if (ok && want_kinds) {
    fuse_epilogue e;
    int k;
    if (ci < 0 || fuse_analyze_epilogue(fused.g, root, &e) != FUSE_OK ||
        e.num_post != n_want) {
      fprintf(stderr, "    %s on %s: not fused as wanted (composite %d, %d post-ops: %s)\n",
              what, path_names[path], ci, ci < 0 ? 0 : e.num_post, ci < 0 ? "" : e.why);
      ok = 0;
    } else {
      for (k = 0; k < n_want; k++)
        if ((int)e.post[k].kind != want_kinds[k]) {
          fprintf(stderr, "    %s on %s: post-op %d is kind %d, want %d\n", what,
                  path_names[path], k, (int)e.post[k].kind, want_kinds[k]);
          ok = 0;
        }
    }
  }
  want = run_graph(plain.g, plain.xdata, plain.nx, ny, FUSE_ISA_SCALAR, 1);
  for (isa = FUSE_ISA_SCALAR; ok && want && isa <= FUSE_ISA_NEON; isa++) {
    double err;
    int cpu = (int)fuse_cpu_isa(); /* scalar, and each ISA it runs (AVX2 where AVX-512 is) */
    if (isa != FUSE_ISA_SCALAR && isa != cpu && !(isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512))
      continue;
    got = run_graph(fused.g, fused.xdata, fused.nx, ny, (fuse_isa)isa, 0);
    if (!got) {
      fprintf(stderr, "    %s on %s: compile / run failed\n", what, path_names[path]);
      ok = 0;
      break;
    }
    err = runner_rel_error(got, want, ny);
    if (!(err <= TOL)) {
      fprintf(stderr, "    %s on %s, isa %d: error %.3g > %g\n", what, path_names[path], isa,
              err, TOL);
      ok = 0;
    }
    free(got);
  }
  if (!want) ok = 0;
  free(want);
  free(fused.xdata), free(plain.xdata);
  fuse_graph_destroy(fused.g);
  fuse_graph_destroy(plain.g);
  return ok;
}

static fuse_value one_form(fuse_graph *g, fuse_value y, int f, fuse_value *unused) {
  (void)unused;
  return apply_form(g, y, f);
}

TEST(every_kind_on_every_path) {
  int path, f;
  for (path = 0; path < P_PATHS; path++)
    for (f = 0; f < F_FORMS; f++) {
      int kinds[2] = {form_kind[f], 0}, n = 1;
      if (f == F_HARDSWISH_RELU6 || f == F_GELU_DECOMPOSED || f == F_GELU_HALF_FIRST) n = 1;
      int kinds3[3] = {FUSE_POST_CLAMP, FUSE_POST_SCALE, FUSE_POST_SHIFT};
      if (f == F_EXP) kinds[0] = FUSE_POST_CLAMP, kinds[1] = FUSE_POST_EXP, n = 2;
      if (f == F_AFFINE_C) {
        CHECK(check_case(path, one_form, f, kinds3, 3, form_names[f]));
        continue;
      }
      CHECK(check_case(path, one_form, f, kinds, n, form_names[f]));
    }
}

/* A random chain of 1..8 forms (seeded by arg), some followed by relu: fused as far as the
   analyzer goes, and always equal to the unfused graph. */
static fuse_value random_chain(fuse_graph *g, fuse_value y, int arg, fuse_value *unused) {
  uint32_t s = (uint32_t)arg * 2654435761u + 1;
  int n = 1 + (int)(s % 8), i;
  (void)unused;
  for (i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    y = apply_form(g, y, (int)((s >> 8) % F_FORMS));
    if ((s >> 20) % 3 == 0) y = fuse_relu(g, y);
  }
  return y;
}

TEST(random_chains_match_unfused) {
  int c;
  for (c = 0; c < 60; c++) CHECK(check_case(c % P_PATHS, random_chain, c, NULL, 0, "random chain"));
}

/* The kinds in any order, up to the limit: silu, then a scale, tanh, hardswish, leaky relu,
   elu, gelu, sigmoid: eight post-ops in one composite. */
static fuse_value eight(fuse_graph *g, fuse_value y, int arg, fuse_value *unused) {
  static const int forms[8] = {F_SILU_OP, F_SCALE_SHIFT, F_TANH, F_HARDSWISH_HSIG, F_LEAKY,
                               F_ELU, F_GELU_OP, F_SIGMOID};
  int i;
  (void)arg, (void)unused;
  for (i = 0; i < 8; i++) y = apply_form(g, y, forms[i]);
  return y;
}

TEST(eight_post_ops_in_one_composite) {
  static const int kinds[8] = {FUSE_POST_SILU, FUSE_POST_LINEAR, FUSE_POST_TANH,
                               FUSE_POST_HARDSWISH, FUSE_POST_LEAKY_RELU, FUSE_POST_ELU,
                               FUSE_POST_GELU, FUSE_POST_SIGMOID};
  int path;
  for (path = 0; path < P_PATHS; path++) CHECK(check_case(path, eight, 0, kinds, 8, "eight kinds"));
}

/* Applied per reduction step instead of once, a post-op would act on partial sums. For every
   element-wise kind, on four partial sums, applying it after each step gives a different
   value than applying it once to the whole sum (the seed's bug, for clamps and all the rest);
   check_case's P_LONG path (300 channels, several channel blocks, every kind above) passes
   only when the kernels apply it once. */
static double kind_ref(int kind, double v) {
  double s = 1 / (1 + exp(-v)), hs = v / 6 + 0.5;
  hs = hs < 0 ? 0 : hs > 1 ? 1 : hs;
  switch (kind) {
  case FUSE_POST_CLAMP: return v < 0 ? 0 : v > 0.5 ? 0.5 : v;
  case FUSE_POST_LINEAR: return 1.5 * v - 0.375;
  case FUSE_POST_SIGMOID: return s;
  case FUSE_POST_TANH: return tanh(v);
  case FUSE_POST_SILU: return v * s;
  case FUSE_POST_HARDSIGMOID: return 0.2 * v + 0.5 < 0 ? 0 : 0.2 * v + 0.5 > 1 ? 1 : 0.2 * v + 0.5;
  case FUSE_POST_HARDSWISH: return v * hs;
  case FUSE_POST_LEAKY_RELU: return v > 0 ? v : 0.1 * v;
  case FUSE_POST_ELU: return v > 0 ? v : 0.7 * (exp(v) - 1);
  case FUSE_POST_SELU: return 1.05 * (v > 0 ? v : 1.67 * (exp(v) - 1));
  case FUSE_POST_SOFTPLUS: return log1p(exp(v));
  case FUSE_POST_MISH: return v * tanh(log1p(exp(v)));
  case FUSE_POST_GELU: return v / 2 * (1 + erf(v / sqrt(2)));
  case FUSE_POST_GELU_TANH: return v / 2 * (1 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
  case FUSE_POST_EXP: return exp(v);
  case FUSE_POST_SCALE: return 0.8 * v;
  case FUSE_POST_SHIFT: return v + 0.3;
  default: return v > 0 ? v : 0.2 * v; /* FUSE_POST_PRELU */
  }
}

TEST(once_after_the_reduction) {
  static const double parts[4] = {0.9, -1.4, 1.3, -0.7};
  int kind, i;
  for (kind = FUSE_POST_CLAMP; kind <= FUSE_POST_PRELU; kind++) {
    double per_step = 0, once = 0;
    if (kind == FUSE_POST_ADD) continue; /* a residual added per step would be added 4 times */
    for (i = 0; i < 4; i++) per_step = kind_ref(kind, per_step + parts[i]);
    for (i = 0; i < 4; i++) once += parts[i];
    once = kind_ref(kind, once);
    if (!(fabs(per_step - once) > 1e-3))
      fprintf(stderr, "    kind %d: per step %.6f, once %.6f\n", kind, per_step, once);
    CHECK(fabs(per_step - once) > 1e-3); /* per step is a different function */
  }
  CHECK(check_case(P_LONG, one_form, F_SIGMOID, NULL, 0, "sigmoid after a long reduction"));
  CHECK(check_case(P_LONG, eight, 0, NULL, 0, "eight kinds after a long reduction"));
}

/* Without a bias, a per-channel scale or slope sits right on the reduction. */
TEST(per_channel_without_bias) {
  int path, f;
  no_bias = 1;
  for (path = 0; path < P_PATHS; path++)
    for (f = F_PRELU_C; f <= F_AFFINE_C; f++) {
      int kinds[3] = {FUSE_POST_PRELU, 0, 0};
      if (f == F_AFFINE_C) kinds[0] = FUSE_POST_CLAMP, kinds[1] = FUSE_POST_SCALE, kinds[2] = FUSE_POST_SHIFT;
      CHECK(check_case(path, one_form, f, kinds, f == F_AFFINE_C ? 3 : 1, form_names[f]));
    }
  no_bias = 0;
}

/* Names of grown composites follow their epilogue. */
TEST(grown_composite_names) {
  built b;
  fuse_value root;
  fuse_composite_info info;
  build_reduction(&b, P_NHWC);
  root = fuse_mul(b.g, b.pre, fuse_sigmoid(b.g, b.pre));
  fuse_output(b.g, root);
  CHECK(fuse_optimize(b.g, "fuse") == FUSE_OK);
  CHECK(fuse_value_composite(b.g, root) >= 0);
  CHECK(fuse_composite_get(b.g, fuse_value_composite(b.g, root), &info) == FUSE_OK);
  CHECK_STR_CONTAINS(info.name, "fuse.conv2d_bias_silu");
  free(b.xdata);
  fuse_graph_destroy(b.g);
}

int main(void) {
  RUN(every_kind_on_every_path);
  RUN(random_chains_match_unfused);
  RUN(eight_post_ops_in_one_composite);
  RUN(once_after_the_reduction);
  RUN(per_channel_without_bias);
  RUN(grown_composite_names);
  return runner_finish("postops");
}
