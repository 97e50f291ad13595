/* test_kernels.c - the kernel table's micro-kernels (the indirect GEMM's tiles, AVX-512 6x64 ..
   12x16, AVX2 6x16 / 12x8, NEON 8x8 / 4x16 / 8x4 (aarch64) or 4x8 / 4x4 (armv7), their scalar
   twins 4x4 / 4x2 / 8x2; the few-channel kernel; the NCHW GEMM's packer; depthwise) against
   the plain reference kernels.

   Every case is built once, run through fuse_optimize, compiled with
   fuse_compile_options.reference_kernels = 1 (the oracle) and once per ISA with
   fuse_compile_options.isa = FUSE_ISA_SCALAR (the scalar twins) / FUSE_ISA_AVX2 /
   FUSE_ISA_AVX512 / FUSE_ISA_NEON, and run on the same inputs. An ISA the CPU lacks
   (fuse_cpu_isa) is skipped, and the skip is printed. kernel_table (0.) calls each table row directly.

   1. random_shapes: 300 conv2d shapes from a fixed-seed RNG - batch 1-3, C and K 1-70 (K < 4,
      which stays on the scalar path, and K that is no multiple of 12 or 6), groups 1, 2-4,
      depthwise and grouped with >= 4 outputs per group, kernels 1x1 .. 7x7 (non-square),
      strides 1-3, dilation 1-3, asymmetric padding 0-3, H / W 1-40 - each with a random
      epilogue that fuse_optimize fuses: none, bias ([1,K,1,1] or [K,1,1] constant, reshape of a
      constant [K]), a residual add (a graph input of the output's shape, either operand
      order), relu, clip(lo, hi), relu6-style minimum(relu(y), c) in both operand orders,
      maximum(minimum(y, c), 0), clip(relu(y)), maximum(y, lo), and their combinations.
      fuse_plan_write must show one fused step with "+ bias" / "+ add" / "+ clamp" as built.
      Work is capped (spatial size shrinks first) so the scalar oracle stays fast.
   2. Targeted: C*KH*KW > 256 and > 512 with bias, a
      residual and relu on inputs whose partial sum after the first taps or channel blocks is
      negative while the total is positive (and the reverse): the epilogue must run once, on
      the finished sum; OH*OW > 1024 and not a multiple of 32 (many tiles and a partial
      one); K = 12, 13, 23, 24, 25 (full and partial row panels); 1x1 stride 1 pad 0 (the copy
      fast path) and 1x1 with stride 2, padding or dilation. These are also compared with an
      independent double-precision oracle written here.
   3. NaN / inf: inputs (and a residual) holding NaN, +inf and -inf: NaN positions identical,
      infinities equal between the kernels and the reference, with relu, clip and relu6 epilogues.
   4. Weights as a graph input: the reference path on every ISA, results bit-identical.
      (Constant weights with fewer than 4 outputs per group must be bit-identical too.)
   5. Concurrency: one plan (AVX-512 when the CPU has it), 2 threads with their own
      workspaces, 20 runs each on different inputs: outputs bit-identical to a serial run.

   Tolerance: TOL = 1e-5, normwise relative error max|got - want| / max|want| over the finite
   entries (runner.h's measure); summation order and FMA contraction differ between the GEMM
   and the scalar loops, so results are close, not equal. The worst error seen per ISA is
   printed at the end.

   Build (from /work/main):
     cc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I. tests/test_kernels.c -o /tmp/tk -lm -lpthread
     cc -std=c99 -O1 -g -fsanitize=address,undefined -Wall -Wextra -Wpedantic -Werror -I. \
        tests/test_kernels.c -o /tmp/tk_san -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUSE_IMPLEMENTATION
#include "../fuse.h"
#include "runner.h"
#include "host_threads.h"

/* The header's SIMD kernels exist (its FUSE__SIMD / FUSE__NEON, undefined at the header's
   end): the tests that look into the plan's steps and the kernel table need them. */
#if !defined(FUSE_NO_SIMD) && (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__)) && (!defined(FUSE_NO_AVX2) || !defined(FUSE_NO_AVX512))
#define TEST_SIMD 1
#define TEST_X86 1
#endif
#if !defined(FUSE_NO_SIMD) && !defined(FUSE_NO_NEON) && \
    (defined(__GNUC__) || defined(__clang__)) && !defined(__ARM_BIG_ENDIAN) && \
    (defined(__aarch64__) || (defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)))
#define TEST_SIMD 1
#define TEST_NEON 1
#endif
#define LAST_ISA FUSE_ISA_NEON /* the per-ISA arrays and loops run to it */

#define TOL 1e-5
#define RANDOM_CASES 300
#define MAC_CAP 12000000.0 /* multiply-adds per random case (the scalar oracle runs them all) */

static const float INF = HUGE_VALF;

/* ------------------------------------------------------------------ helpers -- */

/* The oracle: every op on the plain reference kernels (fuse_compile_options.reference_kernels),
   indexed as FUSE_ISA_AUTO in the per-ISA arrays. FUSE_ISA_SCALAR is the kernel table's scalar
   twins, compared like the SIMD kernels. */
#define REFERENCE FUSE_ISA_AUTO
static const char *isa_name(fuse_isa isa) {
  return isa == FUSE_ISA_AVX512 ? "avx512" : isa == FUSE_ISA_AVX2 ? "avx2"
         : isa == FUSE_ISA_NEON ? "neon" : isa == FUSE_ISA_SCALAR ? "scalar" : "reference";
}
static void set_isa(fuse_compile_options *o, int isa) {
  o->isa = isa == REFERENCE ? FUSE_ISA_SCALAR : (fuse_isa)isa;
  o->reference_kernels = isa == REFERENCE;
}
static int isa_have[LAST_ISA + 1];          /* indexed by fuse_isa */
static double worst_err[LAST_ISA + 1];      /* worst normwise error against scalar, per ISA */
static long n_compared[LAST_ISA + 1];       /* comparisons against scalar, per ISA */
static long n_gemm[LAST_ISA + 1], n_exact[LAST_ISA + 1]; /* cases on the GEMM path (by
                                                              workspace) / required bit-exact */

/* The case RNG (shapes and epilogues). */
static uint64_t shape_rng = 0x243f6a8885a308d3ull;
static uint32_t rnd_u32(void) {
  shape_rng ^= shape_rng << 13;
  shape_rng ^= shape_rng >> 7;
  shape_rng ^= shape_rng << 17;
  return (uint32_t)(shape_rng >> 11);
}
static int rnd(int n) { return (int)(rnd_u32() % (uint32_t)n); } /* 0 .. n-1 */
static int rnd_in(int lo, int hi) { return lo + rnd(hi - lo + 1); }
static float rnd_unit(void) { return (float)((rnd_u32() >> 8) / 16777216.0); } /* [0, 1) */

/* The data RNG: a stream per (case seed, tensor), uniform in [lo, hi). */
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

typedef struct sbuf {
  char s[8192];
  size_t len;
} sbuf;
static void sbuf_write(void *user, const char *text, size_t n) {
  sbuf *b = (sbuf *)user;
  if (n > sizeof b->s - 1 - b->len) n = sizeof b->s - 1 - b->len;
  memcpy(b->s + b->len, text, n);
  b->len += n;
  b->s[b->len] = 0;
}

/* 64-byte aligned block for a caller's workspace (C99: no aligned_alloc). */
static void *ws_alloc(size_t n, void **raw) {
  unsigned char *p = (unsigned char *)malloc(n + 64);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  *raw = p;
  return p + (64 - ((uintptr_t)p & 63));
}

/* NaN-aware comparison: NaN positions must match and infinities must be equal; the normwise
   relative error of the finite entries goes to *err. Returns 1 when the special values agree;
   *first_bad gets the first index where they do not (or -1). */
static int compare(const float *got, const float *want, size_t n, double *err, long *first_bad) {
  double max_diff = 0, max_ref = 0;
  size_t i;
  int ok = 1;
  *first_bad = -1;
  for (i = 0; i < n; i++) {
    float g = got[i], w = want[i];
    if ((g != g) != (w != w) || ((isinf(g) || isinf(w)) && g != w)) {
      if (ok) *first_bad = (long)i;
      ok = 0;
      continue;
    }
    if (g != g || isinf(w)) continue;
    if (fabs((double)g - (double)w) > max_diff) max_diff = fabs((double)g - (double)w);
    if (fabs((double)w) > max_ref) max_ref = fabs((double)w);
  }
  *err = max_diff == 0 ? 0 : max_diff / (max_ref > 1e-30 ? max_ref : 1e-30);
  return ok;
}

/* ---------------------------------------------------------------- the cases -- */

enum {
  BIAS_NONE,
  BIAS_1K11,    /* add(y, const [1,K,1,1]) */
  BIAS_RESHAPE, /* add(y, reshape(const [K], [1,K,1,1])) */
  BIAS_K11,     /* add(const [K,1,1], y) */
  BIAS_KINDS
};
enum { RES_NONE, RES_AFTER, RES_BEFORE, RES_KINDS }; /* add(y, r) / add(r, y) */
enum {
  CL_NONE,
  CL_RELU,          /* relu(y) */
  CL_CLIP,          /* clip(y, lo, hi) */
  CL_RELU6_MIN,     /* minimum(relu(y), hi) - relu6 with the bound hi */
  CL_RELU6_MIN_REV, /* minimum(hi, relu(y)) */
  CL_MAXMIN,        /* maximum(minimum(y, hi), 0) */
  CL_RELU_CLIP,     /* clip(relu(y), lo, hi) */
  CL_MAX_LO,        /* maximum(y, lo) */
  CL_KINDS
};
static const char *const clamp_names[CL_KINDS] = {"none",         "relu",         "clip",
                                                  "min(relu,c)",  "min(c,relu)",  "max(min(y,c),0)",
                                                  "clip(relu)",   "max(y,lo)"};

typedef struct ccase {
  int N, C, K, H, W, KH, KW;
  fuse_conv2d_attrs a; /* a.groups is the group count (>= 1) */
  int bias, residual, clamp;
  float lo, hi;
  int weight_input; /* weights as a graph input instead of a constant */
  int staged;       /* the conv reads clip(x, -FLT_MAX, FLT_MAX), not the graph input: the
                       NHWC kernels run (with conversions) instead of the NCHW GEMM */
  uint32_t seed;
} ccase;

/* The case's tensors. Filled at random from the seed unless a test sets them itself. */
typedef struct cdata {
  float *x, *w, *b, *r;
  size_t nx, nw, nb, ny;
  int OH, OW;
} cdata;

static int out_dim(int in, int pa, int pb, int d, int k, int s) {
  int span = in + pa + pb - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}
static int case_oh(const ccase *c) {
  return out_dim(c->H, c->a.padding[0], c->a.padding[2], c->a.dilation[0], c->KH, c->a.strides[0]);
}
static int case_ow(const ccase *c) {
  return out_dim(c->W, c->a.padding[1], c->a.padding[3], c->a.dilation[1], c->KW, c->a.strides[1]);
}
static double case_macs(const ccase *c) {
  return (double)c->N * c->K * case_oh(c) * case_ow(c) * (c->C / c->a.groups) * c->KH * c->KW;
}

static void describe(const ccase *c, char *buf, size_t cap) {
  snprintf(buf, cap,
           "N=%d C=%d K=%d H=%d W=%d kernel=%dx%d strides=[%d,%d] padding=[%d,%d,%d,%d] "
           "dilation=[%d,%d] groups=%d -> [%d,%d,%d,%d]; bias=%d residual=%d clamp=%s lo=%g hi=%g%s%s "
           "seed=%u",
           c->N, c->C, c->K, c->H, c->W, c->KH, c->KW, c->a.strides[0], c->a.strides[1],
           c->a.padding[0], c->a.padding[1], c->a.padding[2], c->a.padding[3], c->a.dilation[0],
           c->a.dilation[1], c->a.groups, c->N, c->K, case_oh(c), case_ow(c), c->bias, c->residual,
           clamp_names[c->clamp], (double)c->lo, (double)c->hi,
           c->weight_input ? " weights=input" : "", c->staged ? " staged" : "", (unsigned)c->seed);
}

static void data_alloc(const ccase *c, cdata *d) {
  int Kd = c->C / c->a.groups * c->KH * c->KW, i;
  memset(d, 0, sizeof *d);
  d->OH = case_oh(c);
  d->OW = case_ow(c);
  d->nx = (size_t)c->N * c->C * c->H * c->W;
  d->nw = (size_t)c->K * Kd;
  d->nb = (size_t)c->K;
  d->ny = (size_t)c->N * c->K * d->OH * d->OW;
  d->x = falloc(d->nx);
  d->w = falloc(d->nw);
  d->b = falloc(d->nb);
  d->r = falloc(d->ny);
  /* outputs of about unit size: weights scaled by 1 / sqrt(fan-in) */
  fill(d->x, d->nx, c->seed * 4 + 0, -1, 1);
  fill(d->w, d->nw, c->seed * 4 + 1, -1, 1);
  for (i = 0; i < (int)d->nw; i++) d->w[i] *= (float)(1.7 / sqrt((double)Kd));
  fill(d->b, d->nb, c->seed * 4 + 2, -0.5f, 0.5f);
  fill(d->r, d->ny, c->seed * 4 + 3, -1, 1);
}
static void data_free(cdata *d) {
  free(d->x);
  free(d->w);
  free(d->b);
  free(d->r);
  memset(d, 0, sizeof *d);
}

/* The graph: inputs x, then w (weight_input), then r (residual). */
static fuse_graph *case_graph(const ccase *c, const cdata *d) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs[4], ws[4], ys[4], bs[4];
  fuse_value x, w, y, b, r = FUSE_NONE;
  xs[0] = c->N, xs[1] = c->C, xs[2] = c->H, xs[3] = c->W;
  ws[0] = c->K, ws[1] = c->C / c->a.groups, ws[2] = c->KH, ws[3] = c->KW;
  ys[0] = c->N, ys[1] = c->K, ys[2] = d->OH, ys[3] = d->OW;
  x = fuse_input(g, "x", 4, xs);
  if (c->staged) x = fuse_clip(g, x, -FLT_MAX, FLT_MAX);
  w = c->weight_input ? fuse_input(g, "w", 4, ws) : fuse_constant(g, "w", 4, ws, d->w);
  if (c->residual) r = fuse_input(g, "r", 4, ys);
  y = fuse_conv2d(g, x, w, &c->a);
  switch (c->bias) {
  case BIAS_1K11:
    bs[0] = 1, bs[1] = c->K, bs[2] = 1, bs[3] = 1;
    y = fuse_add(g, y, fuse_constant(g, "b", 4, bs, d->b));
    break;
  case BIAS_RESHAPE:
    bs[0] = c->K;
    b = fuse_constant(g, "b", 1, bs, d->b);
    bs[0] = 1, bs[1] = c->K, bs[2] = 1, bs[3] = 1;
    y = fuse_add(g, y, fuse_reshape(g, b, 4, bs));
    break;
  case BIAS_K11:
    bs[0] = c->K, bs[1] = 1, bs[2] = 1;
    y = fuse_add(g, fuse_constant(g, "b", 3, bs, d->b), y);
    break;
  default: break;
  }
  if (c->residual == RES_AFTER) y = fuse_add(g, y, r);
  if (c->residual == RES_BEFORE) y = fuse_add(g, r, y);
  switch (c->clamp) {
  case CL_RELU: y = fuse_relu(g, y); break;
  case CL_CLIP: y = fuse_clip(g, y, c->lo, c->hi); break;
  case CL_RELU6_MIN: y = fuse_minimum(g, fuse_relu(g, y), fuse_scalar(g, c->hi)); break;
  case CL_RELU6_MIN_REV: y = fuse_minimum(g, fuse_scalar(g, c->hi), fuse_relu(g, y)); break;
  case CL_MAXMIN:
    y = fuse_maximum(g, fuse_minimum(g, y, fuse_scalar(g, c->hi)), fuse_scalar(g, 0));
    break;
  case CL_RELU_CLIP: y = fuse_clip(g, fuse_relu(g, y), c->lo, c->hi); break;
  case CL_MAX_LO: y = fuse_maximum(g, y, fuse_scalar(g, c->lo)); break;
  default: break;
  }
  fuse_output(g, y);
  return g;
}

/* Steps of a plan's description other than layout conversions (to_nhwc / to_nchw). */
static int compute_steps(const char *text, const char **first) {
  int n = 0;
  const char *line = text;
  *first = NULL;
  while (line && *line) {
    const char *colon = strstr(line, ": ");
    if (colon && strncmp(colon + 2, "to_nhwc", 7) != 0 && strncmp(colon + 2, "to_nchw", 7) != 0) {
      if (!n) *first = colon + 2;
      n++;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return n;
}

/* The plan must be one fused conv2d step whose epilogue is what the case built (SIMD plans
   add layout conversions before and after it). A residual
   that also has a bias's shape ([1,K,1,1] output, no bias of its own) may be taken as the
   bias; that computes the same numbers. */
/* Returns whether the plan converts layouts (the NHWC kernels), not (scalar, NCHW GEMM). */
static int check_plan(const ccase *c, const cdata *d, fuse_plan *p, const char *what) {
  sbuf b;
  int has_bias, has_add, has_clamp, want_bias = c->bias != BIAS_NONE;
  int want_add = c->residual != RES_NONE, want_clamp = c->clamp != CL_NONE, n_steps;
  const char *step;
  b.len = 0;
  b.s[0] = 0;
  CHECK_EQ_INT(fuse_plan_write(p, sbuf_write, &b), FUSE_OK);
  has_bias = strstr(b.s, "+ bias") != NULL;
  has_add = strstr(b.s, "+ add") != NULL;
  has_clamp = strstr(b.s, "+ clamp") != NULL;
  if (!want_bias && want_add && c->N == 1 && d->OH == 1 && d->OW == 1 && has_bias && !has_add)
    has_bias = 0, has_add = 1;
  n_steps = compute_steps(b.s, &step);
  if (c->staged && n_steps == 2 && strncmp(step, "clip", 4) == 0 && strstr(step, ": conv2d"))
    step = strstr(step, ": conv2d") + 2, n_steps = 1;
  if (n_steps != 1 || strncmp(step, "conv2d", 6) != 0 ||
      has_bias != want_bias || has_add != want_add || has_clamp != want_clamp) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: the plan does not fuse the epilogue as built (%s):\n%s", runner_current,
            what, b.s);
  }
  { /* a step on the kernel table's micro-kernels names their ISA: "[neon igemm 8x8]" */
    int s, table = 0;
    char tag[32];
    for (s = 0; s < p->num_steps; s++)
      table |= p->steps[s].kernel != FUSE__KERNEL_REF && p->steps[s].kernel != FUSE__KERNEL_BACKEND;
    snprintf(tag, sizeof tag, "[%s ", isa_name(p->isa));
    if (table) CHECK_STR_CONTAINS(b.s, tag);
  }
  return strstr(b.s, "to_nhwc") != NULL || strstr(b.s, "to_nchw") != NULL;
}

/* GEMM cases (constant weights, >= 4 outputs per group, not depthwise) with a tensor that has
   two layouts, per ISA: run on NHWC (with conversions) or on NCHW in and out. */
static long n_nhwc_plans[LAST_ISA + 1], n_nchw_plans[LAST_ISA + 1];

/* Compiles g for one ISA, checks the plan, runs it. 1 = ran. *ws gets the workspace size. */
/* 1: plans compiled with no_winograd = 1, for the tests of the direct kernels' own behaviour:
   nan_inf_propagation (Winograd spreads a NaN or inf to every output of its tile,
   test_winograd.c checks how far), dead_taps (taps in the padding skipped; 1830 channels at
   F(4,3) are past this file's 1e-5), host_job_system_threads (the igemm's split among
   threads; test_winograd.c runs Winograd on 3 host threads) */
static int direct_only;

static int run_isa(const ccase *c, const cdata *d, const fuse_graph *g, fuse_isa isa, float *y,
                   size_t *ws, const char *what) {
  fuse_compile_options opt;
  fuse_plan *p = NULL;
  fuse_result rc;
  const float *ins[3];
  float *outs[1];
  char err[256];
  int n = 0, converted;
  memset(&opt, 0, sizeof opt);
  set_isa(&opt, isa);
  opt.error = err;
  opt.error_size = sizeof err;
  opt.no_winograd = direct_only;
  err[0] = 0;
  rc = fuse_compile(g, &opt, &p);
  if (rc != FUSE_OK) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: compile for %s: %s (%s)\n", runner_current, isa_name(isa),
            fuse_result_string(rc), err);
    return 0;
  }
  converted = check_plan(c, d, p, what);
  if (isa != REFERENCE && !c->weight_input && c->K / c->a.groups >= 4 &&
      ((c->C > 1 && c->H * c->W > 1) || (c->K > 1 && d->OH * d->OW > 1))) {
    if (converted) n_nhwc_plans[isa]++;
    else n_nchw_plans[isa]++;
    if (c->staged && !converted) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: %s: a conv after another op did not run on NHWC: %s\n",
              runner_current, isa_name(isa), what);
    }
  }
  ins[n++] = d->x;
  if (c->weight_input) ins[n++] = d->w;
  if (c->residual) ins[n++] = d->r;
  outs[0] = y;
  rc = fuse_run(p, ins, outs, NULL);
  if (rc != FUSE_OK) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: run on %s: %s (%s)\n", runner_current, isa_name(isa),
            fuse_result_string(rc), what);
  }
  *ws = fuse_plan_workspace_size(p);
  fuse_plan_destroy(p);
  return rc == FUSE_OK;
}

/* A double-precision oracle: direct convolution, then the epilogue once. */
static void oracle(const ccase *c, const cdata *d, float *out) {
  int Cg = c->C / c->a.groups, Kg = c->K / c->a.groups, n, k, ci, kh, kw, oh, ow;
  int sh = c->a.strides[0], sw = c->a.strides[1], dh = c->a.dilation[0], dw = c->a.dilation[1];
  for (n = 0; n < c->N; n++)
    for (k = 0; k < c->K; k++)
      for (oh = 0; oh < d->OH; oh++)
        for (ow = 0; ow < d->OW; ow++) {
          size_t at = (((size_t)n * c->K + k) * d->OH + oh) * d->OW + ow;
          double s = 0, lo = -INFINITY, hi = INFINITY;
          for (ci = 0; ci < Cg; ci++)
            for (kh = 0; kh < c->KH; kh++)
              for (kw = 0; kw < c->KW; kw++) {
                int ih = oh * sh - c->a.padding[0] + kh * dh, iw = ow * sw - c->a.padding[1] + kw * dw;
                if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                s += (double)d->w[(((size_t)k * Cg + ci) * c->KH + kh) * c->KW + kw] *
                     d->x[(((size_t)n * c->C + (size_t)(k / Kg) * Cg + ci) * c->H + ih) * c->W + iw];
              }
          if (c->bias) s += d->b[k];
          if (c->residual) s += d->r[at];
          switch (c->clamp) {
          case CL_RELU: lo = 0; break;
          case CL_CLIP: lo = c->lo, hi = c->hi; break;
          case CL_RELU6_MIN:
          case CL_RELU6_MIN_REV:
          case CL_MAXMIN: lo = 0, hi = c->hi; break;
          case CL_RELU_CLIP: lo = c->lo > 0 ? c->lo : 0, hi = c->hi > 0 ? c->hi : 0; break;
          case CL_MAX_LO: lo = c->lo; break;
          default: break;
          }
          out[at] = (float)(s < lo ? lo : s > hi ? hi : s);
        }
}

/* Runs one case on scalar and every SIMD ISA the CPU has; compares SIMD with scalar (bit-exact
   when `exact`), and everything with the oracle when `with_oracle`. Returns a bit mask of the
   ISAs that took the GEMM path (their workspace grew by the packing buffer). want_out, if not
   NULL, receives the scalar result (d->ny floats). */
static int run_case(const ccase *c, const cdata *d, int exact, int with_oracle, float *want_out) {
  fuse_graph *g = case_graph(c, d);
  float *want = falloc(d->ny), *got = falloc(d->ny), *orc = NULL;
  char what[512];
  size_t ws_scalar = 0, ws;
  int isa, gemm = 0;
  long bad;
  double err;
  describe(c, what, sizeof what);
  if (fuse_graph_status(g) != FUSE_OK) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: building %s: %s\n", runner_current, what, fuse_graph_error(g));
    goto done;
  }
  if (fuse_optimize(g, NULL) != FUSE_OK) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: fuse_optimize on %s: %s\n", runner_current, what, fuse_graph_error(g));
    goto done;
  }
  if (with_oracle) {
    orc = falloc(d->ny);
    oracle(c, d, orc);
  }
  memset(want, 0xff, d->ny * sizeof(float)); /* NaN: a missed element shows */
  if (!run_isa(c, d, g, REFERENCE, want, &ws_scalar, what)) goto done;
  if (want_out) memcpy(want_out, want, d->ny * sizeof(float));
  if (orc) {
    if (!compare(want, orc, d->ny, &err, &bad) || !(err <= TOL)) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: scalar vs the double oracle: error %.3g (first bad special %ld) on %s\n",
              runner_current, err, bad, what);
    }
  }
  for (isa = FUSE_ISA_SCALAR; isa <= LAST_ISA; isa++) {
    if (!isa_have[isa]) continue;
    memset(got, 0xff, d->ny * sizeof(float));
    if (!run_isa(c, d, g, (fuse_isa)isa, got, &ws, what)) continue;
    if (ws > ws_scalar) gemm |= 1 << isa, n_gemm[isa]++;
    n_compared[isa]++;
    if (exact) {
      n_exact[isa]++;
      if (memcmp(got, want, d->ny * sizeof(float)) != 0) {
        size_t i = 0;
        while (i < d->ny && memcmp(&got[i], &want[i], sizeof(float)) == 0) i++;
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: %s not bit-identical to scalar at %lu (%.9g vs %.9g) on %s\n",
                runner_current, isa_name((fuse_isa)isa), (unsigned long)i, (double)got[i],
                (double)want[i], what);
      }
    }
    if (!compare(got, want, d->ny, &err, &bad)) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: %s vs scalar: NaN / inf differ at %ld (%g vs %g) on %s\n",
              runner_current, isa_name((fuse_isa)isa), bad, (double)got[bad], (double)want[bad], what);
    }
    if (err > worst_err[isa]) worst_err[isa] = err;
    if (!(err <= TOL)) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: %s vs scalar: normwise relative error %.3g > %g on %s\n",
              runner_current, isa_name((fuse_isa)isa), err, TOL, what);
    }
    if (orc && (!compare(got, orc, d->ny, &err, &bad) || !(err <= TOL))) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: %s vs the double oracle: error %.3g on %s\n", runner_current,
              isa_name((fuse_isa)isa), err, what);
    }
  }
done:
  fuse_graph_destroy(g);
  free(want);
  free(got);
  free(orc);
  return gemm;
}

/* ------------------------------------------------------------ random shapes -- */

static void random_epilogue(ccase *c) {
  if (rnd(10) == 0) { /* 10%: no epilogue at all */
    c->bias = BIAS_NONE, c->residual = RES_NONE, c->clamp = CL_NONE;
  } else {
    c->bias = rnd(BIAS_KINDS);
    c->residual = rnd(RES_KINDS);
    c->clamp = rnd(CL_KINDS);
  }
  c->lo = -0.8f * rnd_unit();
  c->hi = 0.25f + 1.0f * rnd_unit(); /* not tighter: the normwise error divides by max|y| <= hi */
  if (rnd(6) == 0) c->lo = -INF;
  if (rnd(6) == 0) c->hi = rnd(2) ? 6.0f : INF;
}

/* One random shape; spatial size (then batch, then channels) shrinks until MAC_CAP holds. */
static void random_case(ccase *c, uint32_t seed) {
  int kind = rnd(20), cg = 1, kg = 1, g = 1, minH, minW;
  memset(c, 0, sizeof *c);
  c->seed = seed;
  c->N = rnd_in(1, 3);
  if (kind < 10) { /* groups = 1 */
    cg = rnd_in(1, 70);
    kg = rnd(8) == 0 ? rnd_in(1, 3) : rnd_in(1, 70);
  } else if (kind < 15) { /* groups 2-4 */
    g = rnd_in(2, 4);
    cg = rnd_in(1, 70 / g);
    kg = rnd_in(1, 70 / g);
  } else if (kind < 18) { /* depthwise, multiplier 1 or 2 */
    g = rnd_in(1, 35);
    kg = rnd_in(1, 2);
  } else { /* one input channel per group, >= 4 outputs per group: grouped GEMM, tiny Kd */
    g = rnd_in(1, 17);
    kg = rnd_in(4, 70 / g);
  }
  c->a.groups = g;
  if (rnd(5) == 0) {
    c->KH = c->KW = 1;
  } else {
    c->KH = rnd_in(1, 7);
    c->KW = rnd_in(1, 7);
  }
  c->a.strides[0] = rnd_in(1, 3);
  c->a.strides[1] = rnd(2) ? c->a.strides[0] : rnd_in(1, 3);
  c->a.dilation[0] = rnd(5) < 3 ? 1 : rnd_in(2, 3);
  c->a.dilation[1] = rnd(5) < 3 ? 1 : rnd_in(2, 3);
  if (rnd(10) < 3) {
    c->a.padding[0] = c->a.padding[1] = c->a.padding[2] = c->a.padding[3] = 0;
  } else {
    c->a.padding[0] = rnd_in(0, 3);
    c->a.padding[1] = rnd_in(0, 3);
    c->a.padding[2] = rnd_in(0, 3);
    c->a.padding[3] = rnd_in(0, 3);
  }
  /* the smallest input that still gives an output */
  minH = c->a.dilation[0] * (c->KH - 1) + 1 - c->a.padding[0] - c->a.padding[2];
  minW = c->a.dilation[1] * (c->KW - 1) + 1 - c->a.padding[1] - c->a.padding[3];
  if (minH < 1) minH = 1;
  if (minW < 1) minW = 1;
  if (minH > 40) minH = 40; /* cannot happen with 7x7 and dilation 3 (19), kept for safety */
  if (minW > 40) minW = 40;
  c->H = rnd_in(minH, 40);
  c->W = rnd_in(minW, 40);
  c->C = g * cg;
  c->K = g * kg;
  while (case_macs(c) > MAC_CAP) {
    if (c->H > minH || c->W > minW) {
      if (c->H - minH >= c->W - minW) {
        int h = c->H * 3 / 4;
        c->H = h < c->H - 1 ? h : c->H - 1;
        if (c->H < minH) c->H = minH;
      } else {
        int w = c->W * 3 / 4;
        c->W = w < c->W - 1 ? w : c->W - 1;
        if (c->W < minW) c->W = minW;
      }
    } else if (c->N > 1) {
      c->N--;
    } else if (cg > 1) {
      cg = cg * 3 / 4;
      c->C = g * cg;
    } else if (kg > 1) {
      kg = kg * 3 / 4;
      c->K = g * kg;
    } else {
      break;
    }
  }
  random_epilogue(c);
}

TEST(random_shapes) {
  int i, by_kind[3] = {0, 0, 0}, fused_bias = 0, fused_add = 0, fused_clamp = 0;
  shape_rng = 0x243f6a8885a308d3ull; /* the same cases whichever tests ran before */
  for (i = 0; i < RANDOM_CASES; i++) {
    ccase c;
    cdata d;
    int Kg, gemm, scalar_only, depthwise;
    random_case(&c, 1000u + (uint32_t)i);
    c.staged = i & 1; /* half after another op: NHWC kernels; half on the graph input */
    if ((i & 3) == 2) c.a.strides[0] = c.a.strides[1] = 1; /* the NCHW GEMM's usual case */
    data_alloc(&c, &d);
    Kg = c.K / c.a.groups;
    /* fewer than 4 outputs per group and not depthwise: the grouped kernel (tests/test_grouped.c;
       it was the scalar reference loops, bit-identical, before it), within the tolerance */
    depthwise = Kg == 1 && c.C == c.a.groups;
    scalar_only = Kg < 4 && !depthwise;
    gemm = run_case(&c, &d, 0, 0, NULL);
    /* the GEMM shows in the workspace (layout conversions, scratch); NCHW depthwise needs none */
    by_kind[scalar_only ? 0 : gemm || depthwise ? 1 : 2]++;
    if (!scalar_only && !depthwise && isa_have[FUSE_ISA_AVX2] && !(gemm & (1 << FUSE_ISA_AVX2))) {
      char what[512];
      describe(&c, what, sizeof what);
      fprintf(stderr, "  note: %s did not take the GEMM path\n", what);
    }
    fused_bias += c.bias != BIAS_NONE;
    fused_add += c.residual != RES_NONE;
    fused_clamp += c.clamp != CL_NONE;
    data_free(&d);
  }
  printf("random_shapes: %d cases: %d with < 4 outputs per group (scalar path), %d on a SIMD "
         "kernel (indirect GEMM or depthwise), %d other; epilogues with bias %d, residual %d, clamp %d\n",
         RANDOM_CASES, by_kind[0], by_kind[1], by_kind[2], fused_bias, fused_add, fused_clamp);
  for (i = FUSE_ISA_SCALAR; i <= LAST_ISA; i++)
    if (isa_have[i]) {
      printf("random_shapes: %s: %ld GEMM cases on NHWC kernels, %ld on the NCHW GEMM\n",
             isa_name((fuse_isa)i), n_nhwc_plans[i], n_nchw_plans[i]);
      CHECK(n_nhwc_plans[i] >= 25 && n_nchw_plans[i] >= 25);
    }
}

/* ------------------------------------------------------------------ targeted -- */

static ccase plain_case(int N, int C, int K, int H, int W, int KH, int KW, int groups) {
  ccase c;
  memset(&c, 0, sizeof c);
  c.N = N, c.C = C, c.K = K, c.H = H, c.W = W, c.KH = KH, c.KW = KW;
  c.a.strides[0] = c.a.strides[1] = 1;
  c.a.dilation[0] = c.a.dilation[1] = 1;
  c.a.groups = groups;
  c.lo = -0.5f;
  c.hi = 0.75f;
  return c;
}

/* Runs c with random data; the oracle too. Returns the GEMM mask. */
static int run_simple(ccase *c, uint32_t seed) {
  cdata d;
  int gemm;
  c->seed = seed;
  data_alloc(c, &d);
  gemm = run_case(c, &d, 0, 1, NULL);
  data_free(&d);
  return gemm;
}

/* Every ISA the CPU has (the scalar twins included) must have taken the GEMM path for a case
   built to exercise it. */
static void expect_gemm(int gemm, const ccase *c) {
  int isa;
  for (isa = FUSE_ISA_SCALAR; isa <= LAST_ISA; isa++)
    if (isa_have[isa] && !(gemm & (1 << isa))) {
      char what[512];
      describe(c, what, sizeof what);
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: %s did not take the GEMM path on %s\n", runner_current,
              isa_name((fuse_isa)isa), what);
    }
}

/* K blocks: the first block's partial sum has the opposite sign of the total. Weights in flat
   order j = (c*KH + kh)*KW + kw: |w| on j < 256 with one sign, the rest with the other sign and
   scaled so the total flips. Positive inputs, so the sign pattern holds for every output that
   sees the whole window; half the channels get the reverse pattern. */
static void k_blocks_case(ccase *c, uint32_t seed) {
  cdata d;
  int Kd = c->C / c->a.groups * c->KH * c->KW, k, j, oh, ow, n, neg_then_pos = 0, pos_then_neg = 0;
  int Cg = c->C / c->a.groups, Kg = c->K / c->a.groups, gemm;
  double f = 2.0 * 256 / (Kd - 256);
  c->seed = seed;
  data_alloc(c, &d);
  fill(d.x, d.nx, seed * 7 + 1, 0.25f, 1.0f);
  for (k = 0; k < c->K; k++) {
    double sgn = k % 2 ? 1 : -1;
    for (j = 0; j < Kd; j++) {
      float *wj = &d.w[(size_t)k * Kd + j];
      double mag = 0.5 + 0.5 * fabs((double)*wj) * sqrt((double)Kd) / 1.7; /* [0.5, 1) */
      *wj = (float)(j < 256 ? sgn * mag : -sgn * mag * f);
    }
  }
  /* the property, measured on the data: partial sum after block 1 (plus nothing) < 0 and the
     finished value (sum + bias + residual) > 0, or the reverse */
  for (n = 0; n < c->N; n++)
    for (k = 0; k < c->K; k++)
      for (oh = 0; oh < d.OH; oh++)
        for (ow = 0; ow < d.OW; ow++) {
          double s1 = 0, s = 0;
          size_t at = (((size_t)n * c->K + k) * d.OH + oh) * d.OW + ow;
          for (j = 0; j < Kd; j++) {
            int ci = j / (c->KH * c->KW), kh = j / c->KW % c->KH, kw = j % c->KW;
            int ih = oh * c->a.strides[0] - c->a.padding[0] + kh * c->a.dilation[0];
            int iw = ow * c->a.strides[1] - c->a.padding[1] + kw * c->a.dilation[1];
            double t;
            if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
            t = (double)d.w[(size_t)k * Kd + j] *
                d.x[(((size_t)n * c->C + (size_t)(k / Kg) * Cg + ci) * c->H + ih) * c->W + iw];
            s += t;
            if (j < 256) s1 += t;
          }
          s += (c->bias ? d.b[k] : 0) + (c->residual ? d.r[at] : 0);
          if (s1 < 0 && s > 0) neg_then_pos++;
          if (s1 > 0 && s < 0) pos_then_neg++;
        }
  CHECK(neg_then_pos > (int)d.ny / 4);
  CHECK(pos_then_neg > (int)d.ny / 4);
  gemm = run_case(c, &d, 0, 1, NULL);
  expect_gemm(gemm, c);
  data_free(&d);
}

TEST(k_blocks_epilogue_once) {
  ccase c;
  int clamp;
  for (clamp = 0; clamp < 2; clamp++) {
    int cl = clamp ? CL_CLIP : CL_RELU;
    /* Kd = 288: 2 blocks; 16x16 outputs and K = 24: full tiles on both ISAs */
    c = plain_case(1, 32, 24, 18, 18, 3, 3, 1);
    c.bias = BIAS_RESHAPE, c.residual = RES_AFTER, c.clamp = cl, c.lo = 0, c.hi = 1e30f;
    k_blocks_case(&c, 11);
    /* Kd = 576: 3 blocks; 15x15 outputs and K = 13: partial rows and columns */
    c = plain_case(1, 64, 13, 17, 17, 3, 3, 1);
    c.bias = BIAS_1K11, c.residual = RES_BEFORE, c.clamp = cl, c.lo = 0, c.hi = 1e30f;
    k_blocks_case(&c, 12);
    /* Kd = 600, 1x1: the copy path over 3 blocks; 16x16 outputs, K = 24 */
    c = plain_case(2, 600, 24, 16, 16, 1, 1, 1);
    c.bias = BIAS_K11, c.residual = RES_AFTER, c.clamp = cl, c.lo = 0, c.hi = 1e30f;
    k_blocks_case(&c, 13);
    /* Kd = 540 with padding (borders see part of the window), K = 25, batch 2 */
    c = plain_case(2, 60, 25, 16, 16, 3, 3, 1);
    c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 1;
    c.bias = BIAS_1K11, c.residual = RES_AFTER, c.clamp = cl, c.lo = 0, c.hi = 1e30f;
    k_blocks_case(&c, 14);
    /* Kd = 512 exactly (two full blocks) and Kd = 257 (a 1-row last block), groups 2 */
    c = plain_case(1, 256, 24, 12, 12, 2, 2, 2);
    c.residual = RES_AFTER, c.clamp = cl, c.lo = 0, c.hi = 1e30f;
    k_blocks_case(&c, 15);
    c = plain_case(1, 257, 12, 9, 7, 1, 1, 1);
    c.bias = BIAS_1K11, c.residual = RES_AFTER, c.clamp = cl, c.lo = 0, c.hi = 1e30f;
    k_blocks_case(&c, 16);
  }
}

TEST(column_blocks) {
  ccase c;
  /* 45x45 = 2025 outputs: 1024 + 1001 (no multiple of 32 or 16), batch 2 */
  c = plain_case(2, 8, 24, 45, 45, 3, 3, 1);
  c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 1;
  c.bias = BIAS_RESHAPE, c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 21), &c);
  /* 33x40 = 1320 outputs with stride [2,1], a 5x3 kernel, asymmetric padding */
  c = plain_case(1, 3, 12, 66, 40, 5, 3, 1);
  c.a.strides[0] = 2;
  c.a.padding[0] = 2, c.a.padding[1] = 1, c.a.padding[2] = 3, c.a.padding[3] = 1;
  c.residual = RES_AFTER, c.clamp = CL_CLIP;
  expect_gemm(run_simple(&c, 22), &c);
  /* 64x32 = 2048: exactly two column blocks, 1x1 copy path */
  c = plain_case(1, 20, 24, 64, 32, 1, 1, 1);
  c.bias = BIAS_1K11, c.residual = RES_BEFORE, c.clamp = CL_RELU6_MIN;
  expect_gemm(run_simple(&c, 23), &c);
  /* 25x41 = 1025: a second block of one column, 1x1 copy path */
  c = plain_case(1, 7, 13, 25, 41, 1, 1, 1);
  c.bias = BIAS_1K11, c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 24), &c);
  /* 40x41 = 1640 columns, Kd = 300 (2 K blocks), K = 13, 1x1 copy path */
  c = plain_case(1, 300, 13, 40, 41, 1, 1, 1);
  c.bias = BIAS_1K11, c.residual = RES_AFTER, c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 25), &c);
  /* 3 column blocks (2401 = 2*1024 + 353) and 2 K blocks (Kd = 288), groups 2 (Kg = 12) */
  c = plain_case(1, 64, 24, 51, 51, 3, 3, 2);
  c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 1;
  c.a.dilation[0] = c.a.dilation[1] = 2;
  c.a.padding[2] = c.a.padding[3] = 3; /* 51 + 1 + 3 - 5 = 50 -> 51 outputs */
  c.bias = BIAS_1K11, c.residual = RES_AFTER, c.clamp = CL_MAXMIN;
  expect_gemm(run_simple(&c, 26), &c);
}

TEST(row_panels) {
  static const int Ks[5] = {12, 13, 23, 24, 25};
  int i, cols;
  for (cols = 0; cols < 2; cols++)
    for (i = 0; i < 5; i++) {
      /* 8x8 = 64 columns (full strips on both ISAs) or 7x9 = 63 (a partial strip) */
      ccase c = plain_case(1, 5, Ks[i], cols ? 7 : 8, cols ? 9 : 8, 3, 3, 1);
      c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 1;
      c.bias = BIAS_1K11, c.clamp = CL_RELU6_MIN, c.hi = 0.5f;
      c.residual = i % 2 ? RES_AFTER : RES_NONE;
      expect_gemm(run_simple(&c, 30u + (uint32_t)(cols * 5 + i)), &c);
    }
  for (i = 0; i < 5; i++) { /* the same row counts per group, groups 2 */
    ccase c = plain_case(2, 6, 2 * Ks[i], 8, 8, 3, 3, 2);
    c.bias = BIAS_RESHAPE, c.clamp = CL_CLIP;
    c.residual = RES_AFTER;
    expect_gemm(run_simple(&c, 40u + (uint32_t)i), &c);
  }
}

TEST(pointwise_and_1x1) {
  ccase c;
  /* 1x1 stride 1 pad 0: the copy fast path; 12x12 = 144 columns */
  c = plain_case(1, 16, 24, 12, 12, 1, 1, 1);
  c.bias = BIAS_1K11, c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 50), &c);
  /* the same, batch 3, groups 2, partial rows, a residual */
  c = plain_case(3, 10, 26, 7, 11, 1, 1, 2);
  c.residual = RES_AFTER, c.clamp = CL_CLIP;
  expect_gemm(run_simple(&c, 51), &c);
  /* copy path with dilation (irrelevant for 1x1) */
  c = plain_case(1, 9, 12, 10, 13, 1, 1, 1);
  c.a.dilation[0] = 2, c.a.dilation[1] = 3;
  c.bias = BIAS_RESHAPE;
  expect_gemm(run_simple(&c, 52), &c);
  /* 1x1 stride 2 */
  c = plain_case(1, 16, 24, 23, 23, 1, 1, 1);
  c.a.strides[0] = c.a.strides[1] = 2;
  c.bias = BIAS_1K11, c.residual = RES_AFTER, c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 53), &c);
  /* 1x1 stride [1,2] */
  c = plain_case(2, 8, 12, 9, 20, 1, 1, 1);
  c.a.strides[1] = 2;
  c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 54), &c);
  /* 1x1 with padding (zero borders in the output before the epilogue) */
  c = plain_case(1, 16, 24, 10, 10, 1, 1, 1);
  c.a.padding[0] = 1, c.a.padding[1] = 0, c.a.padding[2] = 2, c.a.padding[3] = 1;
  c.bias = BIAS_1K11, c.residual = RES_BEFORE, c.clamp = CL_CLIP;
  expect_gemm(run_simple(&c, 55), &c);
  /* 1x1 with padding and stride 2 */
  c = plain_case(1, 5, 13, 15, 14, 1, 1, 1);
  c.a.strides[0] = c.a.strides[1] = 2;
  c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 3;
  c.bias = BIAS_1K11, c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 56), &c);
}

/* The tile each GEMM shape gets (fuse__igemm_pick: least padding of rows and columns, weighed
   by the kernel's own efficiency), then a conv of that shape on it against the reference: so
   every micro-kernel runs. 7x7 outputs (49 pixels) take the 7-row tiles. */
TEST(tile_kinds) {
  static const struct {
    fuse_isa isa;
    int K, H, mr, nr;
  } want[] = {{FUSE_ISA_AVX512, 64, 12, 6, 64}, {FUSE_ISA_AVX512, 48, 12, 8, 48},
              {FUSE_ISA_AVX512, 48, 7, 7, 48},  {FUSE_ISA_AVX512, 96, 7, 7, 48},
              {FUSE_ISA_AVX512, 32, 12, 12, 32}, {FUSE_ISA_AVX512, 32, 7, 7, 32},
              {FUSE_ISA_AVX512, 16, 12, 12, 16}, {FUSE_ISA_AVX2, 16, 12, 6, 16},
              {FUSE_ISA_AVX2, 8, 12, 12, 8},
#if defined(__aarch64__)
              {FUSE_ISA_NEON, 16, 12, 8, 8},    {FUSE_ISA_NEON, 8, 12, 8, 8},
              {FUSE_ISA_NEON, 16, 7, 4, 16},    {FUSE_ISA_NEON, 4, 12, 8, 4},
#else
              {FUSE_ISA_NEON, 16, 12, 4, 8},    {FUSE_ISA_NEON, 4, 12, 4, 4},
#endif
  };
  int i;
  for (i = 0; i < (int)(sizeof want / sizeof want[0]); i++) {
#ifdef TEST_SIMD
    int kind = -1;
    ccase c = plain_case(1, 20, want[i].K, want[i].H, want[i].H, 3, 3, 1);
    if (!fuse__igemm_pick(want[i].isa, want[i].K, (int64_t)want[i].H * want[i].H, 0, &kind)) continue;
    CHECK_EQ_INT(fuse__igemm_kinds[kind].mr, want[i].mr);
    CHECK_EQ_INT(fuse__igemm_kinds[kind].nr, want[i].nr);
    c.staged = 1;
    c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 1;
    c.bias = BIAS_1K11, c.residual = RES_AFTER, c.clamp = CL_RELU;
    expect_gemm(run_simple(&c, 90u + (uint32_t)i), &c);
#endif
  }
}

/* The conv step of the plan for an ISA (plan internals): its kernel (FUSE__KERNEL_*, -1 when
   there is no conv2d step) and whether it walks the weights tap by tap in channel blocks
   (panels past 1 MB, FUSE__PANEL_BYTES). */
static int conv_kernel(const ccase *c, fuse_isa isa, int *blocked) {
  int kernel = -1;
  *blocked = 0;
#ifdef TEST_SIMD
  {
    cdata d;
    fuse_graph *g;
    fuse_plan *p = NULL;
    fuse_compile_options opt;
    int i;
    data_alloc(c, &d);
    g = case_graph(c, &d);
    memset(&opt, 0, sizeof opt);
    opt.isa = isa;
    if (fuse_optimize(g, NULL) == FUSE_OK && fuse_compile(g, &opt, &p) == FUSE_OK)
      for (i = 0; i < p->num_steps; i++)
        if (p->steps[i].op == FUSE__OP_CONV2D)
          kernel = p->steps[i].kernel, *blocked = p->steps[i].cblock > 0;
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
    data_free(&d);
  }
#else
  (void)c, (void)isa;
#endif
  return kernel;
}

/* Whether the plan for an ISA walks the conv's weights in channel blocks: -1 when the conv is
   not on the NHWC GEMM. */
static int channel_blocked(const ccase *c, fuse_isa isa) {
  int blocked, kernel = conv_kernel(c, isa, &blocked);
#ifdef TEST_SIMD
  if (kernel != FUSE__KERNEL_IGEMM) return -1;
#endif
  (void)kernel;
  return blocked;
}

/* Taps in the padding for every pixel of a tile are skipped (the NHWC kernels): tiles whose
   pixels read nothing at all (bias and post-ops only), a run of dead taps between live ones
   (a tile across two images: the last row of one reads only its kernel's top row, the first
   row of the next only its bottom row), on the plain path, the few-channel row path and the
   channel-blocked path of weight panels past 1 MB (460 channels x 64 outputs on AVX-512,
   1830 x 16 on AVX2). */
TEST(dead_taps) {
  static const int Cs[5] = {8, 3, 130, 460, 1830};
  int i, w, isa;
  direct_only = 1;
  for (i = 0; i < 5; i++)
    for (w = 3; w <= 5; w++) {
      ccase c = plain_case(2, Cs[i], i == 1 || i == 4 ? 16 : 64, 5, w, 3, 3, 1);
      c.staged = 1;
      c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 3;
      if (w != 4) c.a.dilation[0] = 2; /* w 4: whole output rows and tiles in the padding */
      c.bias = BIAS_1K11, c.residual = w == 5 ? RES_AFTER : RES_NONE, c.clamp = CL_CLIP;
      c.lo = -0.25f, c.hi = 0.5f;
      expect_gemm(run_simple(&c, 70u + (uint32_t)(i * 3 + w)), &c);
      if (w == 3)
        for (isa = FUSE_ISA_AVX2; isa <= FUSE_ISA_AVX512; isa++) /* sized for their tiles */
          if (isa_have[isa] && (i == 3 || i == 4) && (isa == FUSE_ISA_AVX512) == (i == 3))
            CHECK_EQ_INT(channel_blocked(&c, (fuse_isa)isa), 1);
    }
  direct_only = 0;
}

/* ------------------------------------------------------------------ NaN / inf -- */

/* Puts NaN, +inf and -inf at a few spread-out places of each image. */
static void sprinkle(float *p, size_t n, uint32_t seed, int count) {
  uint32_t s = seed * 747796405u + 1u;
  int i;
  for (i = 0; i < count; i++) {
    s = s * 1664525u + 1013904223u;
    p[(s >> 4) % n] = i % 3 == 0 ? NAN : i % 3 == 1 ? INF : -INF;
  }
}

static void specials_case(ccase *c, uint32_t seed, int in_residual, int need_inf) {
  cdata d;
  float *want;
  size_t i, nan = 0, inf = 0, finite = 0;
  c->seed = seed;
  data_alloc(c, &d);
  sprinkle(d.x, d.nx, seed, 3 * c->N + 3);
  if (in_residual && c->residual) sprinkle(d.r, d.ny, seed + 99, 6);
  want = falloc(d.ny);
  run_case(c, &d, 0, 0, want);
  for (i = 0; i < d.ny; i++) {
    if (want[i] != want[i]) nan++;
    else if (isinf(want[i])) inf++;
    else finite++;
  }
  CHECK(nan > 0);      /* NaN passes every clamp */
  CHECK(finite > 0);   /* and the data is not all special */
  if (need_inf) CHECK(inf > 0);
  free(want);
  data_free(&d);
}

/* A conv on the graph's input whose output is the graph's output runs on NCHW in and out
   when the layout conversions would cost much against its work and it is a 1x1 conv or has
   at most 4 input channels a group (the NCHW GEMM: tiles of output channels by pixels, the
   taps gathered per block of pixels). Each case must take it on every SIMD ISA and match the
   scalar kernels and the double oracle. */
TEST(nchw_gemm) {
  ccase c;
  long before[LAST_ISA + 1];
  int isa, cases = 0;
  for (isa = 0; isa <= LAST_ISA; isa++) before[isa] = n_nchw_plans[isa];
  /* 1x1 stride 3 with >= 128 outputs: the float-by-float gather; batch 2, bias, residual,
     relu */
  c = plain_case(2, 32, 128, 10, 10, 1, 1, 1);
  c.a.strides[0] = c.a.strides[1] = 3;
  c.bias = BIAS_RESHAPE, c.residual = RES_AFTER, c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 60), &c), cases++;
  /* a 4-channel 3x3 stride 2 (the even floats of two vectors), 136 outputs (a partial row
     tile), padding 1, clip */
  c = plain_case(2, 4, 136, 11, 11, 3, 3, 1);
  c.a.strides[0] = c.a.strides[1] = 2;
  c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 1;
  c.bias = BIAS_1K11, c.clamp = CL_CLIP;
  expect_gemm(run_simple(&c, 61), &c), cases++;
  /* grouped 3x3 (4 channels a group), asymmetric padding and dilation 2, the residual first */
  c = plain_case(1, 12, 48, 20, 17, 3, 3, 3);
  c.a.padding[0] = 2, c.a.padding[1] = 1, c.a.padding[2] = 0, c.a.padding[3] = 3;
  c.a.dilation[0] = c.a.dilation[1] = 2;
  c.bias = BIAS_K11, c.residual = RES_BEFORE, c.clamp = CL_RELU6_MIN;
  expect_gemm(run_simple(&c, 62), &c), cases++;
  /* 1x1 with more pixels than one block (3 blocks of 64 and a partial one), K = 13 */
  c = plain_case(1, 20, 13, 15, 15, 1, 1, 1);
  c.bias = BIAS_RESHAPE, c.residual = RES_AFTER, c.clamp = CL_MAXMIN;
  expect_gemm(run_simple(&c, 63), &c), cases++;
  /* weights past 256 KB (330 x 200 floats): several pixel blocks gathered together, each
     tile's weight rows run over them; 1x1 stride 2, 900 pixels an image: more blocks than
     a band holds, the last band and block partial; batch 2 (a band never crosses an image) */
  c = plain_case(2, 200, 330, 59, 59, 1, 1, 1);
  c.a.strides[0] = c.a.strides[1] = 2;
  c.bias = BIAS_1K11, c.residual = RES_AFTER, c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 64), &c), cases++;
  /* 1x1 stride 1 reads whole blocks in place, P floats between channels: 12 x 16 = 192
     pixels (whole blocks of 48 and 64), batch 2; then 13 x 16 (the last block partial,
     gathered), weights past 256 KB (bands of blocks, one partial) */
  c = plain_case(2, 40, 24, 12, 16, 1, 1, 1);
  c.bias = BIAS_1K11, c.residual = RES_AFTER, c.clamp = CL_RELU;
  expect_gemm(run_simple(&c, 65), &c), cases++;
  c = plain_case(2, 300, 256, 13, 16, 1, 1, 1);
  c.bias = BIAS_RESHAPE, c.residual = RES_BEFORE, c.clamp = CL_CLIP;
  expect_gemm(run_simple(&c, 66), &c), cases++;
  for (isa = FUSE_ISA_AVX2; isa <= LAST_ISA; isa++)
    if (isa_have[isa]) CHECK_EQ_INT((int)(n_nchw_plans[isa] - before[isa]), cases);
}

/* Few input channels on NCHW in and out (the stems' kernel, fuse__conv_few_channels): padded input
   rows split into column phases, tiles of two vectors or one at a row's end. Stems of
   resnet18 (7x7 s2 pad 3) and mobilenet_v2 (3x3 s2 pad 1), small; 1 and 4 channels; stride
   1, [2,1], [1,2] and [3,2]; asymmetric and wide padding; a 1-wide kernel with column stride
   2 (a phase with no taps); output widths that end in a partial vector (49 and 25: one
   column past a vector, on AVX-512 and on AVX2), output channels
   that end in a partial row tile, output rows that end in a partial band; batch 2 with
   residuals, one of them a single output row of 16 pixels; each case must take that
   kernel. */
TEST(few_channels_nchw) {
  static const struct {
    int N, C, K, H, W, KH, KW, sh, sw, pt, pl, pb, pr;
  } cases[] = {
      {1, 3, 64, 45, 52, 7, 7, 2, 2, 3, 3, 3, 3},  {2, 3, 32, 39, 70, 3, 3, 2, 2, 1, 1, 1, 1},
      {1, 1, 13, 19, 33, 3, 3, 1, 1, 1, 1, 1, 1},  {1, 4, 20, 21, 37, 5, 3, 2, 1, 2, 0, 1, 4},
      {2, 2, 9, 12, 47, 3, 5, 1, 2, 0, 2, 3, 1},   {1, 3, 24, 23, 40, 1, 1, 3, 2, 0, 0, 0, 0},
      {1, 3, 17, 10, 16, 4, 6, 1, 1, 3, 5, 2, 0},  {1, 4, 48, 30, 100, 3, 3, 2, 2, 1, 1, 1, 1},
      {1, 3, 8, 9, 49, 3, 3, 1, 1, 1, 1, 1, 1},    {1, 2, 12, 9, 50, 3, 3, 2, 2, 1, 1, 1, 1},
      {1, 3, 9, 3, 18, 3, 3, 1, 1, 0, 0, 0, 0}};
  int i, isa;
  for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
    ccase c = plain_case(cases[i].N, cases[i].C, cases[i].K, cases[i].H, cases[i].W, cases[i].KH,
                         cases[i].KW, 1);
    c.a.strides[0] = cases[i].sh, c.a.strides[1] = cases[i].sw;
    c.a.padding[0] = cases[i].pt, c.a.padding[1] = cases[i].pl;
    c.a.padding[2] = cases[i].pb, c.a.padding[3] = cases[i].pr;
    c.bias = i % 2 ? BIAS_RESHAPE : BIAS_1K11;
    c.residual = i % 3 == 0 ? RES_NONE : i % 3 == 1 ? RES_AFTER : RES_BEFORE;
    c.clamp = i % 4 == 0 ? CL_RELU : i % 4 == 1 ? CL_CLIP : i % 4 == 2 ? CL_RELU6_MIN : CL_NONE;
    expect_gemm(run_simple(&c, 300u + (uint32_t)i), &c);
    for (isa = FUSE_ISA_AVX2; isa <= LAST_ISA; isa++) {
      int blocked;
      if (!isa_have[isa]) continue;
#ifdef TEST_SIMD
      CHECK_EQ_INT(conv_kernel(&c, (fuse_isa)isa, &blocked), FUSE__KERNEL_FEW_CHANNELS);
#else
      (void)blocked;
#endif
    }
  }
}

/* Output channels that leave the last column block mostly empty run it on a narrower tile of
   the same rows (fuse__igemm_last): 72 as 48 + 32 on AVX-512 (7-row tiles); in each of 2
   groups; with the weights walked in channel blocks (5600 channels x 72, a 1.5 MB panel);
   batch 2, bias, residual, clip. */
TEST(mixed_column_blocks) {
  static const int Cs[3] = {24, 16, 5600}, Gs[3] = {1, 2, 1}, Hs[3] = {17, 15, 3};
  int i;
  for (i = 0; i < 3; i++) {
    ccase c = plain_case(2, Cs[i], 72 * Gs[i], Hs[i], Hs[i] + 2, i == 2 ? 1 : 3, i == 2 ? 1 : 3,
                         Gs[i]);
    c.staged = 1;
    c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = i == 2 ? 0 : 1;
    c.bias = BIAS_1K11, c.residual = i == 1 ? RES_BEFORE : RES_AFTER, c.clamp = CL_CLIP;
    expect_gemm(run_simple(&c, 400u + (uint32_t)i), &c);
#ifdef TEST_SIMD
    if (isa_have[FUSE_ISA_AVX512]) {
      int blocked, nr = -1, last = -1;
      cdata d;
      fuse_graph *g;
      fuse_plan *p = NULL;
      fuse_compile_options opt;
      int s;
      CHECK_EQ_INT(conv_kernel(&c, FUSE_ISA_AVX512, &blocked), FUSE__KERNEL_IGEMM);
      CHECK_EQ_INT(blocked, i == 2);
      data_alloc(&c, &d);
      g = case_graph(&c, &d);
      memset(&opt, 0, sizeof opt);
      opt.isa = FUSE_ISA_AVX512;
      if (fuse_optimize(g, NULL) == FUSE_OK && fuse_compile(g, &opt, &p) == FUSE_OK)
        for (s = 0; s < p->num_steps; s++)
          if (p->steps[s].op == FUSE__OP_CONV2D) nr = p->steps[s].nr, last = p->steps[s].nr_last;
      CHECK_EQ_INT(nr, 48);
      CHECK_EQ_INT(last, 32);
      fuse_plan_destroy(p);
      fuse_graph_destroy(g);
      data_free(&d);
    }
#endif
  }
}

/* on the direct kernels: a NaN or inf reaches exactly the outputs whose window reads it */
TEST(nan_inf_propagation) {
  int e;
  direct_only = 1;
  for (e = 0; e < 5; e++) {
    ccase c;
    int clamp = e == 0 ? CL_RELU : e == 1 ? CL_CLIP : e == 2 ? CL_RELU6_MIN : e == 3 ? CL_NONE : CL_MAX_LO;
    int need_inf = clamp == CL_RELU || clamp == CL_NONE || clamp == CL_MAX_LO;
    /* full tiles on both ISAs */
    c = plain_case(1, 8, 24, 16, 16, 3, 3, 1);
    c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 1;
    c.clamp = clamp, c.bias = e % 2 ? BIAS_1K11 : BIAS_NONE;
    specials_case(&c, 60u + (uint32_t)e, 0, need_inf);
    /* partial rows and columns, a residual that holds specials too */
    c = plain_case(2, 5, 13, 11, 11, 3, 3, 1);
    c.clamp = clamp, c.residual = RES_AFTER, c.bias = BIAS_RESHAPE;
    specials_case(&c, 70u + (uint32_t)e, 1, need_inf);
    /* 2 K blocks (Kd = 360) and 1 column block + part */
    c = plain_case(1, 40, 24, 36, 36, 3, 3, 1);
    c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 1;
    c.clamp = clamp, c.residual = RES_BEFORE;
    specials_case(&c, 80u + (uint32_t)e, 0, need_inf);
    /* the 1x1 copy path over 2 K blocks */
    c = plain_case(1, 300, 12, 9, 9, 1, 1, 1);
    c.clamp = clamp, c.bias = BIAS_1K11;
    specials_case(&c, 90u + (uint32_t)e, 0, need_inf);
  }
  direct_only = 0;
}

/* ---------------------------------------------------------- weights as input -- */

TEST(weights_as_input) {
  int i;
  uint64_t saved = shape_rng;
  shape_rng = 0x9e3779b97f4a7c15ull; /* its own stream: random_shapes stays as it is */
  for (i = 0; i < 40; i++) {
    ccase c;
    cdata d;
    int gemm;
    random_case(&c, 5000u + (uint32_t)i);
    c.weight_input = 1;
    data_alloc(&c, &d);
    gemm = run_case(&c, &d, 1, 0, NULL);
    CHECK_EQ_INT(gemm, 0); /* no packing buffer: the weights are not known at compile */
    data_free(&d);
  }
  { /* a shape that would take every GEMM code path with constant weights */
    ccase c = plain_case(2, 40, 25, 40, 41, 3, 3, 1);
    cdata d;
    c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = 1;
    c.bias = BIAS_1K11, c.residual = RES_AFTER, c.clamp = CL_RELU, c.weight_input = 1;
    c.seed = 5999;
    data_alloc(&c, &d);
    CHECK_EQ_INT(run_case(&c, &d, 1, 0, NULL), 0);
    data_free(&d);
  }
  shape_rng = saved;
}

/* The rest of the tests, by what they test: parts of this one program (one build of the
   implementation, which this unit compiles). */
#include "kernels/instances.c"
#include "kernels/threads_table.c"

int main(void) {
  fuse_isa cpu = fuse_cpu_isa();
  int isa;
  isa_have[REFERENCE] = 1;
  isa_have[FUSE_ISA_SCALAR] = 1;
  isa_have[FUSE_ISA_AVX2] = cpu == FUSE_ISA_AVX2 || cpu == FUSE_ISA_AVX512;
  isa_have[FUSE_ISA_AVX512] = cpu == FUSE_ISA_AVX512;
  isa_have[FUSE_ISA_NEON] = cpu == FUSE_ISA_NEON;
#ifdef FUSE_NO_AVX2 /* an AVX-512 CPU, but the build has no AVX2 kernels to compare */
  isa_have[FUSE_ISA_AVX2] = 0;
#endif
  printf("kernels: this CPU: %s\n", isa_name(cpu));
  for (isa = FUSE_ISA_AVX2; isa <= LAST_ISA; isa++)
    if (!isa_have[isa]) printf("kernels: skipping %s: this CPU (or this build) lacks it\n", isa_name((fuse_isa)isa));
  RUN(neon_taken);
  RUN(op_table);
  RUN(kernel_table);
  RUN(random_shapes);
  RUN(k_blocks_epilogue_once);
  RUN(column_blocks);
  RUN(row_panels);
  RUN(pointwise_and_1x1);
  RUN(nchw_gemm);
  RUN(few_channels_nchw);
  RUN(mixed_column_blocks);
  RUN(dead_taps);
  RUN(tile_kinds);
  RUN(nan_inf_propagation);
  RUN(weights_as_input);
  RUN(depthwise);
  RUN(depthwise_instances);
  RUN(pool_instances);
  RUN(elementwise_and_transpose_instances);
  RUN(nhwc_followers_and_matmul);
  RUN(matmul_shapes);
  RUN(runtime_matmul);
  RUN(elementwise_nan);
  RUN(concurrent_runs);
  RUN(host_job_system_threads);
  RUN(row_taps_column_blocks);
  RUN(host_threads_whole_tiles);
  RUN(transpose_plans);
  RUN(transform_matrices_compute_the_correlation);
  for (isa = FUSE_ISA_SCALAR; isa <= LAST_ISA; isa++)
    if (isa_have[isa])
      printf("kernels: %s vs the reference kernels: %ld comparisons (%ld on the GEMM path, %ld required bit-exact), "
             "worst normwise relative error %.3g (tolerance %g)\n",
             isa_name((fuse_isa)isa), n_compared[isa], n_gemm[isa], n_exact[isa], worst_err[isa], TOL);
  return runner_finish("kernels");
}
