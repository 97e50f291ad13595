/* test_grouped.c - the grouped conv kernel (src/kernels/grouped.c: groups narrower than a vector
   or a GEMM tile, the input permuted across the groups of a vector or broadcast) against the
   plain reference kernels.

   Each case is a conv2d with groups > 1 and a random epilogue (bias, a residual add, relu /
   clip / sigmoid / hardswish - sigmoid runs on the stored rows, fuse__post_block), built once,
   optimized, compiled with fuse_compile_options.reference_kernels = 1 (the oracle) and once
   per ISA the CPU has (AVX-512, AVX2, NEON) and the scalar twin, serial and on 3 host threads
   (a parallel_for of the test's), and run on the same inputs, the outputs NaN-filled first.
   The step must be on the grouped kernel where the choice rule takes the shape (the
   test reads the plan's step), and its result within TOL (normwise relative error: the
   kernel sums in another order than the reference loops).

   1. listed: the shapes of resnext50 (4, 8, 16, 32 channels per group) and regnet (8), odd
      channel totals, Cg != Kg both ways (the permute with fewer groups in the last vector,
      unused lanes), 1x1, 3x3 (the eight-pixel blocks, stride 1 and 2, with their row ends),
      5x5, dilation, asymmetric padding, batch 2.
   2. random: 150 shapes from a fixed-seed RNG - Cg and Kg 1-33, groups 2-6, kernels 1-5,
      strides 1-3, dilation 1-2, padding 0-2, H / W 1-20, batch 1-2.

   Build: cc -std=c99 -O2 -I. tests/test_grouped.c -o /tmp/tg -lm -lpthread */
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

#define TOL 1e-5
#define RANDOM_CASES 150

typedef struct gcase {
  int N, C, K, H, W, KH, KW, groups, sh, sw, dh, dw, pad[4];
  int bias, residual, act; /* act: 0 none, 1 relu, 2 clip[-0.5, 0.7], 3 sigmoid, 4 hardswish */
} gcase;

static const char *const act_names[5] = {"none", "relu", "clip", "sigmoid", "hardswish"};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd_u32(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng >> 33);
}
static int rnd_in(int lo, int hi) { return lo + (int)(rnd_u32() % (uint32_t)(hi - lo + 1)); }
static void fill(float *p, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) p[i] = (float)((rnd_u32() >> 8) / 16777216.0) * 2.0f - 1.0f;
}

static int out_dim(int in, int pa, int pb, int d, int k, int s) {
  return (in + pa + pb - d * (k - 1) - 1) / s + 1;
}

/* the 3 host threads: each task on a thread of its own */

static void describe(const gcase *c, char *buf, size_t cap) {
  snprintf(buf, cap,
           "N%d C%d K%d g%d (Cg %d Kg %d) %dx%d @%dx%d s%d,%d d%d,%d pad %d %d %d %d bias %d "
           "res %d %s",
           c->N, c->C, c->K, c->groups, c->C / c->groups, c->K / c->groups, c->KH, c->KW, c->H,
           c->W, c->sh, c->sw, c->dh, c->dw, c->pad[0], c->pad[1], c->pad[2], c->pad[3], c->bias,
           c->residual, act_names[c->act]);
}

/* x (and the residual r) -> conv2d -> + bias -> + r -> activation */
static fuse_graph *build(const gcase *c, const float *w, const float *b, int oh, int ow) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs[4] = {c->N, c->C, c->H, c->W}, ws[4] = {c->K, c->C / c->groups, c->KH, c->KW};
  int64_t bs[4] = {1, c->K, 1, 1}, ys[4] = {c->N, c->K, oh, ow};
  fuse_conv2d_attrs a;
  fuse_value x = fuse_input(g, "x", 4, xs), r = c->residual ? fuse_input(g, "r", 4, ys) : FUSE_NONE;
  fuse_value y;
  memset(&a, 0, sizeof a);
  a.strides[0] = c->sh, a.strides[1] = c->sw, a.dilation[0] = c->dh, a.dilation[1] = c->dw;
  memcpy(a.padding, c->pad, sizeof a.padding);
  a.groups = c->groups;
  y = fuse_conv2d(g, x, fuse_constant(g, "w", 4, ws, w), &a);
  if (c->bias) y = fuse_add(g, y, fuse_constant(g, "b", 4, bs, b));
  if (c->residual) y = fuse_add(g, r, y);
  if (c->act == 1) y = fuse_relu(g, y);
  if (c->act == 2) y = fuse_clip(g, y, -0.5f, 0.7f);
  if (c->act == 3) y = fuse_sigmoid(g, y);
  if (c->act == 4) y = fuse_hardswish(g, y);
  fuse_output(g, y);
  return g;
}

/* Whether the plan's conv step runs on the grouped kernel: its listing says so, as
   "[avx2 grouped 8x8]". */
static int on_grouped(const fuse_plan *p) {
  static runner_text t;
  runner_text_clear(&t);
  fuse_plan_write(p, runner_text_write, &t);
  return strstr(t.s, " grouped ") != NULL;
}

static int cases_on_grouped[FUSE_ISA_NEON + 1];

/* Whether the choice rule (fuse__choose_grouped) takes a case on an ISA of vw lanes: fewer than
   4 outputs per group, or 3x3, column stride 1 or 2, column dilation 1 and fewer outputs per
   group than two vectors; the scalar twin as AVX-512. */
static int expect_grouped(const gcase *c, int isa) {
  int Kg = c->K / c->groups, vw = isa == FUSE_ISA_AVX2 ? 8 : isa == FUSE_ISA_NEON ? 4 : 16;
  if (c->C / c->groups > 64) return 0;
  return Kg < 4 || (c->KH == 3 && c->KW == 3 && c->sw <= 2 && c->dw == 1 && Kg < 2 * vw);
}

/* One case on every ISA, serial and threaded: on the grouped kernel where the rule takes it. */
static void run_case(const gcase *c) {
  int oh = out_dim(c->H, c->pad[0], c->pad[2], c->dh, c->KH, c->sh);
  int ow = out_dim(c->W, c->pad[1], c->pad[3], c->dw, c->KW, c->sw);
  size_t nx = (size_t)c->N * c->C * c->H * c->W, ny = (size_t)c->N * c->K * oh * ow;
  size_t nw = (size_t)c->K * (c->C / c->groups) * c->KH * c->KW, i;
  float *x = (float *)malloc(nx * sizeof(float)), *w = (float *)malloc(nw * sizeof(float));
  float *b = (float *)malloc((size_t)c->K * sizeof(float)), *r = (float *)malloc(ny * sizeof(float));
  float *want = (float *)malloc(ny * sizeof(float)), *got = (float *)malloc(ny * sizeof(float));
  const float *in[2];
  float *out[1];
  fuse_graph *g;
  fuse_plan *p = NULL;
  fuse_compile_options o;
  char what[256];
  int isa, threaded;
  describe(c, what, sizeof what);
  fill(x, nx), fill(w, nw), fill(b, (size_t)c->K), fill(r, ny);
  in[0] = x, in[1] = r;
  g = build(c, w, b, oh, ow);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  memset(&o, 0, sizeof o);
  o.reference_kernels = 1, o.num_threads = 1;
  CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
  for (i = 0; i < ny; i++) want[i] = NAN;
  out[0] = want;
  if (p) CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
  fuse_plan_destroy(p);
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++) {
    if (isa != FUSE_ISA_SCALAR && (int)fuse_cpu_isa() != isa &&
        !(isa == FUSE_ISA_AVX2 && fuse_cpu_isa() == FUSE_ISA_AVX512))
      continue; /* an ISA this CPU (or build) lacks */
    for (threaded = 0; threaded < 2; threaded++) {
      memset(&o, 0, sizeof o);
      o.isa = (fuse_isa)isa;
      o.num_threads = threaded ? 3 : 1;
      o.parallel_for = threaded ? host_parallel_for : NULL;
      p = NULL;
      CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
      if (!p) continue;
      if (expect_grouped(c, isa) != on_grouped(p)) {
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: %s: %s the grouped kernel (%s)\n", runner_current, what,
                on_grouped(p) ? "on" : "not on",
                isa == FUSE_ISA_SCALAR ? "scalar" : isa == FUSE_ISA_AVX2 ? "avx2" : "avx512");
      }
      if (on_grouped(p) && !threaded) cases_on_grouped[isa]++;
      for (i = 0; i < ny; i++) got[i] = NAN;
      out[0] = got;
      CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
      {
        double e = runner_rel_error(got, want, ny);
        if (!(e <= TOL)) {
          runner_test_failed = 1;
          fprintf(stderr, "  FAIL %s: %s on isa %d%s: relative error %.3g\n", runner_current,
                  what, isa, threaded ? " (3 threads)" : "", e);
        }
      }
      fuse_plan_destroy(p);
    }
  }
  fuse_graph_destroy(g);
  free(x), free(w), free(b), free(r), free(want), free(got);
}

static gcase shape(int N, int Cg, int Kg, int G, int H, int W, int k, int s, int pad) {
  gcase c;
  memset(&c, 0, sizeof c);
  c.N = N, c.C = Cg * G, c.K = Kg * G, c.groups = G, c.H = H, c.W = W, c.KH = c.KW = k;
  c.sh = c.sw = s, c.dh = c.dw = 1;
  c.pad[0] = c.pad[1] = c.pad[2] = c.pad[3] = pad;
  c.bias = 1, c.act = 1;
  return c;
}

TEST(listed) {
  /* N, Cg, Kg, G, H, W, k, stride, pad */
  static const int shapes[][9] = {
      {1, 4, 4, 32, 12, 13, 3, 1, 1},  /* resnext stage 1: four groups per AVX-512 vector */
      {1, 4, 4, 32, 12, 12, 3, 2, 1},  /* its stride-2 form */
      {1, 8, 8, 32, 9, 10, 3, 1, 1},   /* stage 2, regnet: two groups (AVX-512), one (AVX2) */
      {2, 16, 16, 8, 7, 7, 3, 1, 1},   /* stage 3, batch 2 */
      {1, 32, 32, 4, 5, 6, 3, 1, 1},   /* stage 4: a group's two or four vectors */
      {1, 8, 8, 13, 11, 9, 3, 2, 1},   /* regnet 104 / 13: the last vector one group */
      {2, 3, 3, 5, 10, 17, 3, 1, 1},   /* odd totals: 15 channels, groups of 3 */
      {1, 2, 6, 5, 8, 19, 3, 1, 1},    /* Cg < Kg */
      {1, 6, 2, 7, 8, 19, 3, 1, 1},    /* Cg > Kg */
      {1, 1, 2, 9, 9, 9, 3, 1, 1},     /* a depth multiplier of 2 */
      {1, 5, 1, 6, 9, 9, 3, 2, 1},     /* one output per group */
      {1, 4, 3, 8, 9, 11, 1, 1, 0},    /* 1x1 (any shape: with fewer than 4 outputs a group) */
      {1, 4, 2, 8, 9, 11, 5, 1, 2},    /* 5x5 */
      {1, 33, 17, 3, 6, 7, 3, 1, 1},   /* widths past a vector, not multiples of it */
      {2, 4, 4, 6, 3, 2, 3, 1, 1},     /* an image narrower than a block */
      {1, 8, 3, 4, 20, 21, 3, 3, 1},   /* stride 3 */
      {1, 8, 8, 4, 20, 21, 3, 3, 1},   /* stride 3 with 8 outputs: the GEMM's */
  };
  int i, act;
  for (i = 0; i < (int)(sizeof shapes / sizeof shapes[0]); i++)
    for (act = 0; act < 5; act++) {
      const int *s = shapes[i];
      gcase c = shape(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]);
      c.act = act, c.bias = act != 2, c.residual = act >= 2;
      run_case(&c);
    }
  { /* dilation 2 (any shape), asymmetric padding; columns stride 2 and rows dilation 2 */
    gcase c = shape(1, 4, 3, 8, 12, 13, 3, 1, 0);
    c.dh = c.dw = 2, c.pad[0] = 2, c.pad[1] = 1, c.pad[2] = 0, c.pad[3] = 3, c.residual = 1;
    run_case(&c);
    c = shape(2, 8, 4, 6, 10, 15, 3, 1, 1);
    c.sw = 2, c.dh = 2, c.pad[3] = 0, c.act = 3;
    run_case(&c);
  }
}

TEST(random) {
  int n;
  for (n = 0; n < RANDOM_CASES; n++) {
    gcase c;
    int Cg = rnd_in(1, 33), Kg = rnd_in(1, 33);
    memset(&c, 0, sizeof c);
    if (Cg == 1 && Kg == 1) Kg = 2; /* depthwise has its own kernel */
    c.groups = rnd_in(2, 6), c.C = Cg * c.groups, c.K = Kg * c.groups;
    c.N = rnd_in(1, 2), c.H = rnd_in(1, 20), c.W = rnd_in(1, 20);
    c.KH = rnd_in(1, 5), c.KW = rnd_in(1, 5);
    if (rnd_in(0, 2) == 0) c.KH = c.KW = 3; /* often the blocks' shape */
    c.sh = rnd_in(1, 3), c.sw = rnd_in(1, 3), c.dh = rnd_in(1, 2), c.dw = rnd_in(1, 2);
    c.pad[0] = rnd_in(0, 2), c.pad[1] = rnd_in(0, 2), c.pad[2] = rnd_in(0, 2), c.pad[3] = rnd_in(0, 2);
    if (c.H + c.pad[0] + c.pad[2] < c.dh * (c.KH - 1) + 1) c.H = c.dh * (c.KH - 1) + 1;
    if (c.W + c.pad[1] + c.pad[3] < c.dw * (c.KW - 1) + 1) c.W = c.dw * (c.KW - 1) + 1;
    c.bias = rnd_in(0, 1), c.residual = rnd_in(0, 1), c.act = rnd_in(0, 4);
    run_case(&c);
  }
}

int main(void) {
  RUN(listed);
  RUN(random);
  printf("grouped: cases on the grouped kernel: scalar %d, avx2 %d, avx512 %d\n",
         cases_on_grouped[FUSE_ISA_SCALAR], cases_on_grouped[FUSE_ISA_AVX2],
         cases_on_grouped[FUSE_ISA_AVX512]);
  return runner_finish("grouped");
}
