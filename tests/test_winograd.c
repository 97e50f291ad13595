/* test_winograd.c - Winograd F(2,3), F(4,3), F(6,3) for 3x3 stride-1 convs (kernels/winograd.c).

   - Layers of odd shapes (H, W not multiples of m, 1x1 and 1-wide images, W < m), padding
     0 / 1 / asymmetric, C and K not multiples of the vector width, groups, batch 2, bias and
     every post-op kind and a residual add, forced onto each F(m,3) (no_winograd = -m) on every
     ISA this CPU has and the scalar twins, serial and with 3 host threads: the plan must say
     it runs Winograd, and its output (NaN-filled before the run, so an element it does not
     write fails) must match the reference kernels within the tolerance of its m.
   - Numerics: each variant's normwise error against the layer computed in double, beside the
     direct kernel's, printed per layer: F(2,3) and F(4,3) within 4x the direct kernel's,
     F(6,3) within 16x (it measures 8-30x; no choice of points brought it to 4x, see
     winograd.c: the cost rule leaves it out), the direct error floored at 4 float32 ulp of
     the largest output (a sum of few products can be nearly exact).
   - The cost rule: the default picks Winograd on a large layer, never on a tiny one;
     no_winograd = 1 turns it off.

   (The transform matrices themselves, internal tables, are checked in test_kernels.c.)
   Build: cc -std=c99 -O2 -I. tests/test_winograd.c -o /tmp/tw -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUSE_IMPLEMENTATION
#include "../fuse.h"
#include "runner.h"
#include "host_threads.h"

/* Normwise error against the reference kernels, per m: the reference itself is float32 with
   its own summation order, so this bounds the sum of both errors (measured: F(2,3) about
   2e-7, F(4,3) 5e-7, F(6,3) 3e-6 on unit-sized data). */
static const double TOL_M[7] = {0, 0, 2e-6, 0, 5e-6, 0, 3e-5};

static uint32_t rng_state = 2463534242u;
static float urand(void) { /* [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return (float)((rng_state >> 8) / 8388608.0 - 1.0);
}

static float *filled(size_t n, float scale) {
  float *p = (float *)malloc((n ? n : 1) * sizeof(float));
  size_t i;
  if (!p) exit(2);
  for (i = 0; i < n; i++) p[i] = urand() * scale;
  return p;
}

/* ------------------------------------------------------------------ layers -- */

/* epilogues: after the bias (or none), a post-op written as a model writes it */
enum {
  E_NONE, E_BIAS, E_RELU, E_CLIP, E_LINEAR, E_SIGMOID, E_TANH, E_SILU, E_HARDSIGMOID,
  E_HARDSWISH, E_LEAKY, E_ELU, E_SELU, E_SOFTPLUS, E_MISH, E_GELU, E_GELU_TANH, E_EXP,
  E_SCALE_SHIFT, E_PRELU, E_RESIDUAL, E_RESIDUAL_RELU, E_KINDS
};
static const char *const epi_names[E_KINDS] = {
    "none",      "bias",  "relu",      "clip",     "linear", "sigmoid",    "tanh", "silu",
    "hardsigmoid", "hardswish", "leaky", "elu", "selu", "softplus", "mish", "gelu", "gelu_tanh",
    "exp", "scale+shift", "prelu", "residual", "residual+relu"};

typedef struct wcase {
  int N, C, K, H, W, groups, pad[4], epi;
} wcase;

static fuse_value per_channel(fuse_graph *g, int K, float base) {
  int64_t shape[3] = {K, 1, 1};
  float *v = (float *)malloc((size_t)K * sizeof(float));
  fuse_value c;
  int i;
  for (i = 0; i < K; i++) v[i] = base + 0.05f * (float)((i * 7) % 11) - 0.25f;
  c = fuse_constant(g, NULL, 3, shape, v);
  free(v);
  return c;
}

static int out_size(int in, int pa, int pb) { return in + pa + pb - 2; }

/* The graph of a case: x (and r for a residual) as inputs, conv + bias + its epilogue. */
static fuse_graph *case_graph(const wcase *c, const float *w, const float *b) {
  fuse_graph *g = fuse_graph_create(NULL);
  int OH = out_size(c->H, c->pad[0], c->pad[2]), OW = out_size(c->W, c->pad[1], c->pad[3]);
  int64_t xs[4] = {c->N, c->C, c->H, c->W}, ws[4] = {c->K, c->C / c->groups, 3, 3};
  int64_t ys[4] = {c->N, c->K, OH, OW}, bs[3] = {c->K, 1, 1};
  fuse_conv2d_attrs a;
  fuse_value x, y, r = FUSE_NONE;
  memset(&a, 0, sizeof a);
  memcpy(a.padding, c->pad, sizeof a.padding);
  a.groups = c->groups;
  x = fuse_input(g, "x", 4, xs);
  if (c->epi >= E_RESIDUAL) r = fuse_input(g, "r", 4, ys);
  y = fuse_conv2d(g, x, fuse_constant(g, "w", 4, ws, w), &a);
  if (c->epi != E_NONE) y = fuse_add(g, y, fuse_constant(g, "b", 3, bs, b));
  switch (c->epi) {
  case E_RELU: y = fuse_relu(g, y); break;
  case E_CLIP: y = fuse_clip(g, y, -0.5f, 0.75f); break;
  case E_LINEAR: y = fuse_add(g, fuse_mul(g, y, fuse_scalar(g, 1.5f)), fuse_scalar(g, -0.25f)); break;
  case E_SIGMOID: y = fuse_sigmoid(g, y); break;
  case E_TANH: y = fuse_tanh(g, y); break;
  case E_SILU: y = fuse_mul(g, y, fuse_sigmoid(g, y)); break;
  case E_HARDSIGMOID: y = fuse_hardsigmoid(g, y, 0.2f, 0.5f); break;
  case E_HARDSWISH: y = fuse_hardswish(g, y); break;
  case E_LEAKY: y = fuse_leaky_relu(g, y, 0.1f); break;
  case E_ELU: y = fuse_elu(g, y, 0.7f); break;
  case E_SELU: y = fuse_selu(g, y, 1.67f, 1.05f); break;
  case E_SOFTPLUS: y = fuse_softplus(g, y); break;
  case E_MISH: y = fuse_mul(g, y, fuse_tanh(g, fuse_softplus(g, y))); break;
  case E_GELU: y = fuse_gelu(g, y, 0); break;
  case E_GELU_TANH: y = fuse_gelu(g, y, 1); break;
  case E_EXP: y = fuse_exp(g, y); break;
  case E_SCALE_SHIFT: y = fuse_add(g, fuse_mul(g, y, per_channel(g, c->K, 1.0f)), per_channel(g, c->K, 0.1f)); break;
  case E_PRELU: y = fuse_prelu(g, y, per_channel(g, c->K, 0.2f)); break;
  case E_RESIDUAL: y = fuse_add(g, y, r); break;
  case E_RESIDUAL_RELU: y = fuse_relu(g, fuse_add(g, r, y)); break;
  default: break;
  }
  fuse_output(g, y);
  return g;
}


typedef struct plan_text {
  char s[8192];
  size_t len;
} plan_text;
static void text_write(void *user, const char *t, size_t n) {
  plan_text *b = (plan_text *)user;
  if (b->len + n + 1 > sizeof b->s) n = sizeof b->s - b->len - 1;
  memcpy(b->s + b->len, t, n);
  b->len += n;
  b->s[b->len] = 0;
}

/* Runs g (optimized) on isa (FUSE_ISA_AUTO: the reference kernels) with no_winograd = nw and
   `threads` host threads into y (NaN-filled first); the plan's listing into text. 0: failed. */
static int run_plan(fuse_graph *g, fuse_isa isa, int nw, int threads, const float *const *in,
                    float *y, size_t ny, plan_text *text) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  size_t i;
  int ok;
  memset(&o, 0, sizeof o);
  o.isa = isa == FUSE_ISA_AUTO ? FUSE_ISA_SCALAR : isa;
  o.reference_kernels = isa == FUSE_ISA_AUTO;
  o.no_winograd = nw;
  if (threads > 1) o.parallel_for = host_parallel_for, o.num_threads = threads;
  if (fuse_compile(g, &o, &p) != FUSE_OK) return 0;
  for (i = 0; i < ny; i++) y[i] = NAN;
  text->len = 0;
  text->s[0] = 0;
  fuse_plan_write(p, text_write, text);
  ok = fuse_run(p, in, &y, NULL) == FUSE_OK;
  fuse_plan_destroy(p);
  return ok;
}

static int isas[4], n_isas;
static int shared_seen; /* plans whose listing says their threads share blocks */

static void find_isas(void) {
  fuse_isa best = fuse_cpu_isa();
  n_isas = 0;
  if (best == FUSE_ISA_AVX512) isas[n_isas++] = FUSE_ISA_AVX512;
  if (best == FUSE_ISA_AVX512 || best == FUSE_ISA_AVX2) isas[n_isas++] = FUSE_ISA_AVX2;
  if (best == FUSE_ISA_NEON) isas[n_isas++] = FUSE_ISA_NEON;
  isas[n_isas++] = FUSE_ISA_SCALAR;
}

static const char *isa_str(int isa) {
  return isa == FUSE_ISA_AVX512 ? "avx512" : isa == FUSE_ISA_AVX2 ? "avx2"
         : isa == FUSE_ISA_NEON ? "neon" : "scalar";
}

/* One case on every ISA, m and thread count against the reference kernels. */
static void check_case(const wcase *c) {
  int OH = out_size(c->H, c->pad[0], c->pad[2]), OW = out_size(c->W, c->pad[1], c->pad[3]);
  size_t nx = (size_t)c->N * c->C * c->H * c->W, ny = (size_t)c->N * c->K * OH * OW;
  size_t nw = (size_t)c->K * (c->C / c->groups) * 9;
  float *x = filled(nx, 1), *w = filled(nw, (float)(1.7 / sqrt(9.0 * c->C / c->groups)));
  float *b = filled((size_t)c->K, 0.5f), *r = filled(ny, 1);
  float *want = (float *)malloc(ny * sizeof(float)), *y = (float *)malloc(ny * sizeof(float));
  float *y1 = (float *)malloc(ny * sizeof(float)); /* the same ISA and m on one thread */
  const float *in[2];
  fuse_graph *g = case_graph(c, w, b);
  plan_text text;
  int i, m, threads;
  in[0] = x, in[1] = r;
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK(run_plan(g, FUSE_ISA_AUTO, 0, 1, in, want, ny, &text));
  for (i = 0; i < n_isas; i++)
    for (m = 2; m <= 6; m += 2)
      for (threads = 1; threads <= 3; threads += 2) {
        char tag[64];
        double err;
        snprintf(tag, sizeof tag, "[%s winograd F(%d,3)", isa_str(isas[i]), m);
        CHECK(run_plan(g, (fuse_isa)isas[i], -m, threads, in, y, ny, &text));
        CHECK_STR_CONTAINS(text.s, tag);
        err = runner_rel_error(y, want, ny);
        if (!(err <= TOL_M[m]))
          fprintf(stderr,
                  "  N=%d C=%d K=%d H=%d W=%d groups=%d pad=[%d,%d,%d,%d] epi=%s %s F(%d,3) "
                  "threads=%d: error %.3g > %.3g\n",
                  c->N, c->C, c->K, c->H, c->W, c->groups, c->pad[0], c->pad[1], c->pad[2],
                  c->pad[3], epi_names[c->epi], isa_str(isas[i]), m, threads, err, TOL_M[m]);
        CHECK(err <= TOL_M[m]);
        /* more threads (blocks of their own, or shared: the same arithmetic) or not, the
           same bits */
        if (threads == 1) memcpy(y1, y, ny * sizeof(float));
        else CHECK(memcmp(y1, y, ny * sizeof(float)) == 0);
        if (strstr(text.s, "shared]")) shared_seen++;
      }
  fuse_graph_destroy(g);
  free(x), free(w), free(b), free(r), free(want), free(y), free(y1);
}

TEST(odd_shapes_on_every_isa_and_m) {
  static const wcase cases[] = {
      /* N  C   K   H   W  g  pad          epi */
      {1, 16, 16, 8, 8, 1, {1, 1, 1, 1}, E_BIAS},
      {1, 5, 7, 11, 13, 1, {1, 1, 1, 1}, E_RELU},        /* C, K below a vector; odd sizes */
      {2, 19, 37, 9, 10, 1, {1, 1, 1, 1}, E_RESIDUAL},   /* batch 2, K past a column block */
      {1, 8, 12, 1, 1, 1, {1, 1, 1, 1}, E_BIAS},         /* 1x1 image */
      {1, 12, 20, 7, 3, 1, {1, 1, 1, 1}, E_CLIP},        /* W < m */
      {1, 9, 17, 6, 5, 1, {0, 0, 0, 0}, E_NONE},         /* no padding */
      {1, 10, 9, 12, 7, 1, {0, 1, 2, 0}, E_RESIDUAL_RELU}, /* asymmetric padding */
      {1, 3, 70, 5, 23, 1, {2, 1, 1, 2}, E_BIAS},        /* padding 2, K of two column blocks */
      {2, 32, 32, 7, 9, 4, {1, 1, 1, 1}, E_RELU},        /* groups of 8 channels */
      {1, 24, 48, 6, 6, 8, {1, 1, 1, 1}, E_BIAS},        /* groups of 3 in, 6 out */
      {1, 70, 36, 14, 14, 1, {1, 1, 1, 1}, E_SCALE_SHIFT},
  };
  size_t i;
  shared_seen = 0;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
  CHECK(shared_seen > 0); /* the cases run both ways of cutting among threads */
}

TEST(every_post_op_kind) {
  int e;
  for (e = E_NONE; e < E_KINDS; e++) {
    wcase c = {1, 13, 21, 9, 11, 1, {1, 1, 1, 1}, 0};
    c.epi = e;
    check_case(&c);
  }
}

/* ---------------------------------------------------------------- numerics -- */

/* The layer in double (NCHW), no epilogue. */
static void conv_double(const wcase *c, const float *x, const float *w, double *y) {
  int OH = out_size(c->H, c->pad[0], c->pad[2]), OW = out_size(c->W, c->pad[1], c->pad[3]);
  int Cg = c->C / c->groups, Kg = c->K / c->groups, n, k, ch, oh, ow, kh, kw;
  for (n = 0; n < c->N; n++)
    for (k = 0; k < c->K; k++)
      for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++) {
          double s = 0;
          int grp = k / Kg;
          for (ch = 0; ch < Cg; ch++)
            for (kh = 0; kh < 3; kh++)
              for (kw = 0; kw < 3; kw++) {
                int ih = oh + kh - c->pad[0], iw = ow + kw - c->pad[1];
                if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                s += (double)x[((n * c->C + grp * Cg + ch) * c->H + ih) * c->W + iw] *
                     (double)w[((k * Cg + ch) * 3 + kh) * 3 + kw];
              }
          y[((n * c->K + k) * OH + oh) * OW + ow] = s;
        }
}

static double error_vs_double(const float *y, const double *want, size_t n) {
  double diff = 0, ref = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double d = fabs((double)y[i] - want[i]);
    if (d != d) return INFINITY;
    if (d > diff) diff = d;
    if (fabs(want[i]) > ref) ref = fabs(want[i]);
  }
  return ref > 0 ? diff / ref : diff;
}

/* The resnet / vgg / resnext 3x3 layers (spatial sizes cut so the double loops stay quick;
   the error depends on C and the transform, not on H and W). Within 4x the direct kernel's
   error, which is itself floored at 4 float32 ulp of the largest output (2^-21: a sum of a
   few products can be nearly exact). */
TEST(error_against_float64) {
  static const wcase layers[] = {
      {1, 64, 64, 12, 12, 1, {1, 1, 1, 1}, E_NONE},   {1, 128, 128, 12, 12, 1, {1, 1, 1, 1}, E_NONE},
      {1, 256, 256, 8, 8, 1, {1, 1, 1, 1}, E_NONE},   {1, 512, 512, 7, 7, 1, {1, 1, 1, 1}, E_NONE},
      {1, 128, 128, 12, 12, 32, {1, 1, 1, 1}, E_NONE}, {1, 3, 64, 12, 12, 1, {1, 1, 1, 1}, E_NONE},
  };
  size_t l;
  int i, m;
  for (l = 0; l < sizeof layers / sizeof layers[0]; l++) {
    const wcase *c = &layers[l];
    int OH = out_size(c->H, c->pad[0], c->pad[2]), OW = out_size(c->W, c->pad[1], c->pad[3]);
    size_t nx = (size_t)c->N * c->C * c->H * c->W, ny = (size_t)c->N * c->K * OH * OW;
    size_t nw = (size_t)c->K * (c->C / c->groups) * 9;
    float *x = filled(nx, 1), *w = filled(nw, (float)(1.0 / sqrt(9.0 * c->C / c->groups)));
    float *y = (float *)malloc(ny * sizeof(float));
    double *want = (double *)malloc(ny * sizeof(double));
    fuse_graph *g = case_graph(c, w, NULL);
    const float *in[1];
    plan_text text;
    in[0] = x;
    conv_double(c, x, w, want);
    for (i = 0; i < n_isas; i++) {
      double direct, err[7], floor_err = ldexp(1.0, -21);
      CHECK(run_plan(g, (fuse_isa)isas[i], 1, 1, in, y, ny, &text));
      direct = error_vs_double(y, want, ny);
      for (m = 2; m <= 6; m += 2) {
        CHECK(run_plan(g, (fuse_isa)isas[i], -m, 1, in, y, ny, &text));
        err[m] = error_vs_double(y, want, ny);
        CHECK(err[m] <= (m == 6 ? 16 : 4) * (direct > floor_err ? direct : floor_err));
      }
      printf("  %-6s 3x3 %3d>%-3d g%-2d @%-2d: error vs float64 direct %.2e  F(2,3) %.2e (%.1fx)  "
             "F(4,3) %.2e (%.1fx)  F(6,3) %.2e (%.1fx)\n",
             isa_str(isas[i]), c->C, c->K, c->groups, c->H, direct, err[2], err[2] / direct,
             err[4], err[4] / direct, err[6], err[6] / direct);
    }
    fuse_graph_destroy(g);
    free(x), free(w), free(y), free(want);
  }
}

/* ------------------------------------------------------------------ NaN, inf -- */

/* A NaN in the input reaches every output of the tiles whose (m+2) x (m+2) window holds it
   (the transforms mix a tile's pixels), and no other: an output whose 3x3 window reads it is
   NaN, one whose tile's window does not is finite. (The direct kernels keep NaN to the 3x3
   windows; test_kernels' nan_inf_propagation checks them.) */
TEST(nan_stays_in_its_tiles) {
  wcase c = {1, 8, 16, 12, 12, 1, {1, 1, 1, 1}, E_BIAS};
  size_t nx = (size_t)8 * 12 * 12, ny = (size_t)16 * 12 * 12;
  float *x = filled(nx, 1), *w = filled((size_t)16 * 8 * 9, 0.1f), *b = filled(16, 0.5f);
  float *y = (float *)malloc(ny * sizeof(float));
  const float *in[1];
  fuse_graph *g;
  plan_text text;
  int i, m, k, oh, ow, ih = 5, iw = 6; /* the NaN's pixel */
  x[(3 * 12 + ih) * 12 + iw] = NAN;
  g = case_graph(&c, w, b);
  in[0] = x;
  fuse_optimize(g, "fuse");
  for (i = 0; i < n_isas; i++)
    for (m = 2; m <= 6; m += 2) {
      int bad = 0;
      CHECK(run_plan(g, (fuse_isa)isas[i], -m, 1, in, y, ny, &text));
      for (k = 0; k < 16; k++)
        for (oh = 0; oh < 12; oh++)
          for (ow = 0; ow < 12; ow++) {
            float v = y[(k * 12 + oh) * 12 + ow];
            int reads = oh - 1 <= ih && ih <= oh + 1 && ow - 1 <= iw && iw <= ow + 1;
            int th0 = oh / m * m - 1, tw0 = ow / m * m - 1; /* the tile's window, padding 1 */
            int in_tile = th0 <= ih && ih < th0 + m + 2 && tw0 <= iw && iw < tw0 + m + 2;
            if ((reads && v == v) || (!in_tile && v != v)) bad++;
          }
      if (bad) fprintf(stderr, "  %s F(%d,3): %d outputs with NaN out of place\n", isa_str(isas[i]), m, bad);
      CHECK(bad == 0);
    }
  fuse_graph_destroy(g);
  free(x), free(w), free(b), free(y);
}

/* ------------------------------------------------------------ the cost rule -- */

/* Whether the plan of case c (no_winograd = nw) lists `want` ("winograd", "F(2,3)", ...). */
static int plan_lists(const wcase *c, int nw, const char *want) {
  int OH = out_size(c->H, c->pad[0], c->pad[2]), OW = out_size(c->W, c->pad[1], c->pad[3]);
  size_t nx = (size_t)c->N * c->C * c->H * c->W, ny = (size_t)c->N * c->K * OH * OW;
  float *x = filled(nx, 1), *w = filled((size_t)c->K * c->C / c->groups * 9, 0.05f);
  float *b = filled((size_t)c->K, 0.5f), *y = (float *)malloc(ny * sizeof(float));
  const float *in[1];
  fuse_graph *g = case_graph(c, w, b);
  plan_text text;
  int ok;
  in[0] = x;
  fuse_optimize(g, "fuse");
  ok = run_plan(g, (fuse_isa)isas[0], nw, 1, in, y, ny, &text);
  CHECK(ok);
  fuse_graph_destroy(g);
  free(x), free(w), free(b), free(y);
  return ok && strstr(text.s, want) != NULL;
}

static int winograd_steps(const wcase *c, int nw) { return plan_lists(c, nw, "winograd"); }

TEST(cost_rule_and_the_switch) {
  wcase big = {1, 64, 64, 56, 56, 1, {1, 1, 1, 1}, E_RELU};
  wcase tiny = {1, 4, 8, 4, 4, 1, {1, 1, 1, 1}, E_RELU};
  wcase strided = {1, 64, 64, 56, 56, 1, {1, 1, 1, 1}, E_RELU};
  CHECK(winograd_steps(&big, 0));
  CHECK(!winograd_steps(&big, 1));
  CHECK(!winograd_steps(&tiny, 0));
  CHECK(winograd_steps(&tiny, -4)); /* forced */
  (void)strided;
  if (isas[0] == FUSE_ISA_AVX512 || isas[0] == FUSE_ISA_AVX2) {
    /* resnet's 512-channel layers at 7x7: F(2,3), its 17 MB of transformed weights streamed
       from memory under the GEMMs (which prefetch the next panel); not the direct kernels,
       and not F(4,3)'s 37 MB for 4 tiles */
    wcase deep = {1, 512, 512, 7, 7, 1, {1, 1, 1, 1}, E_RELU};
    CHECK(plan_lists(&deep, 0, "F(2,3)"));
  }
}

int main(void) {
  find_isas();
  RUN(odd_shapes_on_every_isa_and_m);
  RUN(every_post_op_kind);
  RUN(error_against_float64);
  RUN(nan_stays_in_its_tiles);
  RUN(cost_rule_and_the_switch);
  return runner_finish("winograd");
}
