/* test_depthwise.c - the NHWC depthwise kernels' eight-pixel blocks (3x3 and 5x5, column
   stride 1 and 2), through the public API on every ISA this CPU has (the scalar twin always),
   against the reference kernels (fuse_compile_options.reference_kernels = 1).

   Each case is x [N,C,H,W] -> a 1x1 conv C>C (the NHWC GEMM, so the depthwise conv reads and
   writes NHWC) -> depthwise conv + bias -> an epilogue. The shapes leave every tail of the
   blocks: output widths 1 .. 19 and 56 (blocks of eight inside the row, at its ends, both at
   once, short last blocks), channel counts 1, 7, 17, 33, 100 and 16 / 32 (a last vector of
   channels under a mask on every vector width, or none), padding symmetric, none, one-sided
   and wider than the kernel, batch 2. The epilogues: relu6, SiLU and sigmoid (which the
   blocks run on their registers), hardswish, a residual add and a clamp after SiLU, SiLU then
   tanh then a residual (tanh over the stored pixels after the registers' SiLU), a
   per-channel scale after sigmoid. Tolerance: normwise relative error 1e-5 against the
   reference kernels, as test_kernels. Every case also runs on 3 host threads (a job system
   of pthreads) and must equal the serial plan bit for bit: rows are split, never a sum. */
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

typedef struct dw_shape {
  int N, C, H, W, K, stride, pt, pl, pb, pr;
} dw_shape;

static const dw_shape shapes[] = {
    /* N   C   H   W  K  s  pt pl pb pr */
    {1, 17, 9, 19, 3, 1, 1, 1, 1, 1},  {1, 33, 7, 16, 3, 1, 1, 1, 1, 1},
    {2, 7, 6, 9, 3, 1, 0, 0, 0, 0},    {1, 100, 5, 14, 3, 1, 1, 1, 1, 1},
    {1, 16, 8, 56, 3, 1, 1, 1, 1, 1},  {1, 1, 4, 1, 3, 1, 1, 1, 1, 1},
    {1, 32, 9, 23, 3, 2, 1, 1, 1, 1},  {2, 17, 8, 17, 3, 2, 0, 1, 1, 0},
    {1, 33, 5, 38, 3, 2, 1, 0, 0, 1},  {1, 17, 7, 14, 5, 1, 2, 2, 2, 2},
    {1, 33, 9, 7, 5, 1, 2, 2, 2, 2},   {1, 7, 6, 18, 5, 1, 0, 4, 1, 0},
    {1, 100, 5, 11, 5, 2, 2, 2, 2, 2}, {2, 17, 9, 35, 5, 2, 1, 2, 3, 2},
    {1, 16, 6, 8, 3, 1, 3, 4, 3, 4},   {1, 7, 5, 10, 5, 2, 5, 6, 5, 6},
};
#define NUM_SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

enum { E_RELU6, E_SILU, E_SIGMOID, E_HARDSWISH, E_SILU_ADD_CLAMP, E_SILU_TANH_ADD,
       E_SIGMOID_SCALE, NUM_EPILOGUES };

static void fill(float *p, size_t n, uint32_t seed, float lo, float hi) {
  uint32_t s = seed * 2654435761u + 12345u;
  size_t i;
  for (i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = lo + (hi - lo) * (float)((s >> 8) / 16777216.0);
  }
}

static float *falloc(size_t n) {
  float *p = (float *)malloc((n ? n : 1) * sizeof(float));
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}


static const char *isa_name(fuse_isa isa) {
  return isa == FUSE_ISA_AVX512 ? "avx512" : isa == FUSE_ISA_AVX2 ? "avx2"
         : isa == FUSE_ISA_NEON ? "neon" : "scalar";
}

static int compared[FUSE_ISA_NEON + 1];
static double worst[FUSE_ISA_NEON + 1];

/* Runs the graph (inputs x and r) on isa (threads host threads; reference: the reference
   kernels) into out; 0 when it does not compile or run. */
static int run_plan(const fuse_graph *g, fuse_isa isa, int reference, int threads,
                    const float *x, const float *r, float *out, size_t ny) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  const float *ins[2];
  float *outs[1];
  int ok;
  memset(&o, 0, sizeof o);
  o.isa = isa, o.reference_kernels = reference, o.num_threads = threads;
  if (threads > 1) o.parallel_for = host_parallel_for;
  if (fuse_compile(g, &o, &p) != FUSE_OK) return 0;
  ins[0] = x, ins[1] = r, outs[0] = out;
  memset(out, 0xff, ny * sizeof(float)); /* NaN: an element never written shows */
  ok = fuse_run(p, ins, outs, NULL) == FUSE_OK;
  fuse_plan_destroy(p);
  return ok;
}

static void dw_case(const dw_shape *k, int epi, uint32_t seed, const fuse_isa *isas, int n_isas) {
  int OH = (k->H + k->pt + k->pb - k->K) / k->stride + 1;
  int OW = (k->W + k->pl + k->pr - k->K) / k->stride + 1, i;
  int64_t xs[4], w1s[4], ws[4], cs[3], ys[4];
  size_t nx = (size_t)k->N * k->C * k->H * k->W, ny = (size_t)k->N * k->C * OH * OW;
  float *x = falloc(nx), *r = falloc(ny), *want = falloc(ny), *got = falloc(ny), *par = falloc(ny);
  float *w1 = falloc((size_t)k->C * k->C), *w = falloc((size_t)k->C * k->K * k->K);
  float *b = falloc((size_t)k->C), *scale = falloc((size_t)k->C);
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs one, a;
  fuse_value y, res;
  xs[0] = k->N, xs[1] = k->C, xs[2] = k->H, xs[3] = k->W;
  w1s[0] = k->C, w1s[1] = k->C, w1s[2] = 1, w1s[3] = 1;
  ws[0] = k->C, ws[1] = 1, ws[2] = k->K, ws[3] = k->K;
  cs[0] = k->C, cs[1] = 1, cs[2] = 1;
  ys[0] = k->N, ys[1] = k->C, ys[2] = OH, ys[3] = OW;
  fill(x, nx, seed * 8 + 0, -1, 1);
  fill(r, ny, seed * 8 + 1, -1, 1);
  fill(w1, (size_t)k->C * k->C, seed * 8 + 2, -1, 1);
  fill(w, (size_t)k->C * k->K * k->K, seed * 8 + 3, -1, 1);
  fill(b, (size_t)k->C, seed * 8 + 4, -1, 1);
  fill(scale, (size_t)k->C, seed * 8 + 5, -2, 2);
  memset(&one, 0, sizeof one);
  memset(&a, 0, sizeof a);
  a.strides[0] = a.strides[1] = k->stride;
  a.padding[0] = k->pt, a.padding[1] = k->pl, a.padding[2] = k->pb, a.padding[3] = k->pr;
  a.groups = k->C;
  y = fuse_conv2d(g, fuse_input(g, "x", 4, xs), fuse_constant(g, "w1", 4, w1s, w1), &one);
  y = fuse_conv2d(g, y, fuse_constant(g, "w", 4, ws, w), &a);
  y = fuse_add(g, y, fuse_constant(g, "b", 3, cs, b));
  res = epi == E_SILU_ADD_CLAMP || epi == E_SILU_TANH_ADD ? fuse_input(g, "r", 4, ys) : FUSE_NONE;
  switch (epi) {
  case E_RELU6: y = fuse_clip(g, y, 0.0f, 6.0f); break;
  case E_SILU: y = fuse_mul(g, y, fuse_sigmoid(g, y)); break; /* as PyTorch exports SiLU */
  case E_SIGMOID: y = fuse_sigmoid(g, y); break;
  case E_HARDSWISH: y = fuse_hardswish(g, y); break;
  case E_SILU_ADD_CLAMP:
    y = fuse_clip(g, fuse_add(g, fuse_mul(g, y, fuse_sigmoid(g, y)), res), -0.5f, 1.5f);
    break;
  case E_SILU_TANH_ADD:
    y = fuse_add(g, fuse_tanh(g, fuse_mul(g, y, fuse_sigmoid(g, y))), res);
    break;
  default: y = fuse_mul(g, fuse_sigmoid(g, y), fuse_constant(g, "s", 3, cs, scale)); break;
  }
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK(run_plan(g, FUSE_ISA_SCALAR, 1, 1, x, r, want, ny));
  for (i = 0; i < n_isas; i++) {
    double err;
    CHECK(run_plan(g, isas[i], 0, 1, x, r, got, ny));
    CHECK(run_plan(g, isas[i], 0, 3, x, r, par, ny));
    err = runner_rel_error(got, want, ny);
    compared[isas[i]]++;
    if (!(err <= worst[isas[i]])) worst[isas[i]] = err;
    if (!(err <= TOL) || memcmp(got, par, ny * sizeof(float))) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: %s N=%d C=%d %dx%d k%d s%d pad %d,%d,%d,%d epilogue %d: "
              "error %.3g, 3 threads %s the serial plan\n", runner_current, isa_name(isas[i]),
              k->N, k->C, k->H, k->W, k->K, k->stride, k->pt, k->pl, k->pb, k->pr, epi, err,
              memcmp(got, par, ny * sizeof(float)) ? "differ from" : "equal");
    }
  }
  fuse_graph_destroy(g);
  free(x), free(r), free(want), free(got), free(par), free(w1), free(w), free(b), free(scale);
}

static fuse_isa isas[4];
static int n_isas;

TEST(nhwc_blocks) {
  int s, e;
  for (s = 0; s < NUM_SHAPES; s++)
    for (e = 0; e < NUM_EPILOGUES; e++)
      dw_case(&shapes[s], e, 100u + (uint32_t)(s * NUM_EPILOGUES + e), isas, n_isas);
  printf("nhwc_blocks: %d shapes x %d epilogues\n", NUM_SHAPES, NUM_EPILOGUES);
}

int main(void) {
  fuse_isa cpu = fuse_cpu_isa();
  int i;
  isas[n_isas++] = FUSE_ISA_SCALAR;
  if (cpu == FUSE_ISA_AVX2 || cpu == FUSE_ISA_AVX512) isas[n_isas++] = FUSE_ISA_AVX2;
  if (cpu == FUSE_ISA_AVX512) isas[n_isas++] = FUSE_ISA_AVX512;
  if (cpu == FUSE_ISA_NEON) isas[n_isas++] = FUSE_ISA_NEON;
  RUN(nhwc_blocks);
  for (i = 0; i < n_isas; i++)
    printf("depthwise: %s: %d cases against the reference kernels, worst normwise relative "
           "error %.3g (tolerance %g)\n", isa_name(isas[i]), compared[isas[i]], worst[isas[i]], TOL);
  return runner_finish("depthwise");
}
