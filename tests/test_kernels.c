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

/* ------------------------------------------------- NHWC followers, matmul -- */
/* After a SIMD conv the plan keeps NHWC through the ops that follow it (pools, global average
   pool, element-wise ops with broadcasting, concat along channels), converts where an NCHW-only
   op or a view (reshape / flatten) or the graph output needs it, and runs matmul with constant
   weights on the GEMM kernel. Each graph here runs unoptimized (every op a step of its own) and
   optimized, on every ISA, against the scalar plan of the same graph. */

typedef fuse_graph *(*follow_build)(int variant, const float *w, const float *w2, const float *mw);

static const int64_t FX[4] = {2, 6, 9, 11};   /* the input: N=2, C=6, 9 x 11 */
static const int64_t FW[4] = {20, 6, 3, 3};   /* conv 6 -> 20, 3x3, pad 1 */
static const int64_t FW2[4] = {12, 20, 1, 1}; /* conv 20 -> 12, 1x1 */

static fuse_value follow_conv(fuse_graph *g, fuse_value x, const float *w) {
  fuse_conv2d_attrs a;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  return fuse_conv2d(g, x, fuse_constant(g, "w", 4, FW, w), &a);
}

static fuse_graph *follow_graph(int variant, const float *w, const float *w2, const float *mw) {
  static const float bias[20] = {0.1f, -0.2f, 0.3f, 0.05f, -0.4f, 0.2f, 0.0f, 0.7f, -0.1f, 0.25f,
                                 0.1f, -0.2f, 0.3f, 0.05f, -0.4f, 0.2f, 0.0f, 0.7f, -0.1f, 0.25f};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 4, FX), y = follow_conv(g, x, w), z;
  fuse_pool2d_attrs pa;
  fuse_conv2d_attrs one;
  int64_t b4[4] = {1, 20, 1, 1}, b3[3] = {20, 1, 1}, rs[4] = {2, 20, 9, 11}, ms[2] = {20, 37};
  int64_t fl[2] = {2, 20 * 9 * 11};
  memset(&pa, 0, sizeof pa);
  memset(&one, 0, sizeof one);
  switch (variant) {
  case 0: /* max pool 3x3 stride 2 pad 1, then relu */
    pa.kernel[0] = pa.kernel[1] = 3, pa.strides[0] = pa.strides[1] = 2;
    pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 1;
    y = fuse_relu(g, fuse_max_pool2d(g, y, &pa));
    break;
  case 1: /* average pool 3x2, padding counted, a second conv after it */
    pa.kernel[0] = 3, pa.kernel[1] = 2, pa.strides[0] = pa.strides[1] = 1;
    pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 1;
    pa.count_include_pad = 1;
    y = fuse_conv2d(g, fuse_avg_pool2d(g, y, &pa), fuse_constant(g, "w2", 4, FW2, w2), &one);
    break;
  case 2: /* average pool, padding not counted, dilated max pool */
    pa.kernel[0] = pa.kernel[1] = 3, pa.strides[0] = pa.strides[1] = 1;
    pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 1;
    y = fuse_avg_pool2d(g, y, &pa);
    pa.dilation[0] = pa.dilation[1] = 2;
    pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 2;
    y = fuse_max_pool2d(g, y, &pa);
    break;
  case 3: /* global average pool, flatten, matmul by constant weights, bias, relu */
    z = fuse_flatten(g, fuse_global_avg_pool2d(g, y), 1);
    y = fuse_relu(g, fuse_add(g, fuse_matmul(g, z, fuse_constant(g, "mw", 2, ms, mw)),
                              fuse_constant(g, "mb", 1, ms + 1, mw + 20 * 37)));
    break;
  case 4: /* broadcast operands: [1,20,1,1] and [20,1,1] constants, sigmoid, a second conv */
    y = fuse_sigmoid(g, fuse_mul(g, fuse_constant(g, "s", 4, b4, bias), y));
    y = fuse_sub(g, y, fuse_constant(g, "t", 3, b3, bias));
    y = fuse_conv2d(g, y, fuse_constant(g, "w2", 4, FW2, w2), &one);
    break;
  case 5: /* an NCHW graph input of the full shape as an operand (converted), maximum */
    y = fuse_maximum(g, y, fuse_input(g, "r", 4, rs));
    break;
  case 6: /* concat of two convs' outputs along channels, then clip */
    z = fuse_conv2d(g, y, fuse_constant(g, "w2", 4, FW2, w2), &one);
    {
      fuse_value both[2];
      both[0] = y, both[1] = z;
      y = fuse_clip(g, fuse_concat(g, 2, both, 1), -0.5f, 0.5f);
    }
    break;
  case 7: /* a view of an NHWC tensor: flatten, then matmul by a weight on the flat axis */
    y = fuse_flatten(g, fuse_relu(g, y), 1);
    y = fuse_reshape(g, y, 2, fl);
    y = fuse_relu(g, y);
    break;
  case 9: /* depthwise 3x3 on NHWC (after the conv), bias and relu6, a residual */
  case 10: /* depthwise 5x3, stride 2, dilation 2x1, padding 2 */
    {
      int64_t dws[4] = {20, 1, 3, 3};
      fuse_conv2d_attrs da;
      memset(&da, 0, sizeof da);
      da.groups = 20;
      da.padding[0] = da.padding[1] = da.padding[2] = da.padding[3] = 1;
      if (variant == 10) {
        dws[2] = 5;
        da.strides[0] = da.strides[1] = 2;
        da.dilation[0] = 2;
        da.padding[0] = da.padding[2] = 2;
      }
      z = fuse_conv2d(g, y, fuse_constant(g, "dw", 4, dws, mw), &da);
      z = fuse_add(g, z, fuse_constant(g, "db", 4, b4, bias));
      if (variant == 9) z = fuse_add(g, z, y);
      y = fuse_minimum(g, fuse_relu(g, z), fuse_constant(g, "six", 0, NULL, bias + 7));
    }
    break;
  default: /* the conv output is itself an output and feeds a relu that is another */
    fuse_output(g, y);
    y = fuse_relu(g, fuse_add(g, y, fuse_constant(g, "b", 4, b4, bias)));
    break;
  }
  fuse_output(g, y);
  return g;
}

static void follow_case(int variant, int optimize) {
  float w[20 * 6 * 9], w2[12 * 20], mw[20 * 37 + 37], x[2 * 6 * 9 * 11], r[2 * 20 * 9 * 11];
  float *want[2] = {NULL, NULL}, *got[2] = {NULL, NULL};
  size_t count[2] = {0, 0};
  int isa, o;
  fill(w, sizeof w / sizeof *w, 8000 + variant, -0.4f, 0.4f);
  fill(w2, sizeof w2 / sizeof *w2, 8100 + variant, -0.3f, 0.3f);
  fill(mw, sizeof mw / sizeof *mw, 8200 + variant, -0.2f, 0.2f);
  fill(x, sizeof x / sizeof *x, 8300 + variant, -1, 1);
  fill(r, sizeof r / sizeof *r, 8400 + variant, -1, 1);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++) {
    fuse_graph *g;
    fuse_plan *p = NULL;
    fuse_compile_options opt;
    const float *ins[2];
    float **outs = isa == REFERENCE ? want : got;
    if (!isa_have[isa]) continue;
    g = follow_graph(variant, w, w2, mw);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    if (optimize) CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    memset(&opt, 0, sizeof opt);
    set_isa(&opt, isa);
    CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
    for (o = 0; o < fuse_graph_output_count(g); o++) {
      fuse_value v = fuse_graph_output(g, o);
      const int64_t *shape = fuse_value_shape(g, v);
      int rank = fuse_value_rank(g, v), d;
      count[o] = 1;
      for (d = 0; d < rank; d++) count[o] *= (size_t)shape[d];
      if (!outs[o]) outs[o] = falloc(count[o]);
    }
    ins[0] = x, ins[1] = r;
    if (p) CHECK_EQ_INT(fuse_run(p, ins, outs, NULL), FUSE_OK);
    fuse_plan_destroy(p);
    if (isa != REFERENCE)
      for (o = 0; o < 2 && got[o]; o++) {
        double err;
        long bad;
        int same = compare(got[o], want[o], count[o], &err, &bad);
        n_compared[isa]++;
        if (err > worst_err[isa]) worst_err[isa] = err;
        if (!same || !(err <= TOL)) {
          runner_test_failed = 1;
          fprintf(stderr, "  FAIL %s: variant %d (%s) output %d on %s: error %.3g (first bad %ld)\n",
                  runner_current, variant, optimize ? "optimized" : "op by op", o, isa_name((fuse_isa)isa),
                  err, bad);
        }
      }
    fuse_graph_destroy(g);
  }
  for (o = 0; o < 2; o++) free(want[o]), free(got[o]);
}

/* ---------------------------------------------------------------- depthwise -- */

/* Depthwise conv on both SIMD kernels against scalar (TOL, normwise) and the double oracle.
   NCHW (graph input straight into the conv: the register kernels for 3x3 / 5x5 with row
   dilation 1 and row stride 1 or 2, straight from the input when the column stride is 1, from
   the band buffer otherwise; the 8-slot band-buffer kernel for the rest): 3x3, 5x5 and 7x3,
   strides 1-3 (also unequal), dilation 1-3, symmetric, asymmetric and no padding, padding
   larger than the kernel reach, channels 1, 3, 17, 33 (no multiple of 16 or 8), widths that
   leave every tail (OW 1 .. 40 and 112: tiles 1x8, 2x4, 4x2, 8x1 with partial vectors and
   rows), batch 1 and 2, every epilogue: none, bias, bias + residual (either order) + clamp,
   relu6. NHWC (a 1x1 conv first, so the depthwise reads the GEMM's NHWC output; 8-pixel
   register blocks for 3x3 / 5x5, column stride 1 or 2, column dilation 1): the same shapes,
   with bias, a residual and relu6 or clip. */
typedef struct dwcase {
  int N, C, H, W, K, sh, sw, dh, dw, pt, pl, pb, pr;
} dwcase;

static const dwcase dw_cases[] = {
    {1, 32, 112, 112, 3, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 17, 56, 56, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    {2, 3, 14, 14, 3, 1, 1, 1, 1, 1, 1, 1, 1},    {1, 33, 7, 7, 5, 1, 1, 1, 1, 2, 2, 2, 2},
    {2, 5, 19, 23, 5, 2, 2, 1, 1, 2, 2, 2, 2},    {1, 1, 40, 40, 3, 1, 1, 2, 2, 2, 2, 2, 2},
    {1, 7, 33, 35, 3, 1, 2, 1, 2, 0, 1, 2, 3},    {1, 9, 21, 17, 7, 3, 3, 1, 1, 3, 3, 3, 3},
    {1, 4, 9, 30, 3, 2, 1, 2, 1, 0, 0, 0, 0},     {2, 18, 5, 3, 3, 1, 1, 1, 1, 4, 5, 4, 5},
    {1, 6, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1},      {1, 19, 12, 47, 5, 1, 3, 2, 1, 1, 4, 0, 2},
    {1, 16, 16, 16, 3, 1, 1, 1, 1, 1, 1, 1, 1},   {1, 24, 28, 28, 3, 2, 2, 1, 1, 0, 0, 1, 1},
    {1, 8, 64, 64, 3, 1, 1, 1, 1, 1, 1, 1, 1},    {1, 2, 130, 66, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 10, 23, 29, 3, 2, 1, 1, 1, 1, 1, 1, 1},   {1, 6, 17, 37, 5, 2, 1, 1, 2, 2, 0, 1, 3},
    {1, 3, 20, 45, 3, 1, 1, 1, 3, 1, 3, 1, 3},    {1, 20, 9, 40, 5, 1, 1, 1, 1, 2, 2, 2, 2},
    {1, 9, 16, 64, 5, 2, 2, 1, 1, 2, 2, 2, 2},
};

static void dw_nchw_case(const dwcase *k, int epi, uint32_t seed) {
  ccase c = plain_case(k->N, k->C, k->C, k->H, k->W, k->K, k->K == 7 ? 3 : k->K, k->C);
  c.a.strides[0] = k->sh, c.a.strides[1] = k->sw;
  c.a.dilation[0] = k->dh, c.a.dilation[1] = k->dw;
  c.a.padding[0] = k->pt, c.a.padding[1] = k->pl, c.a.padding[2] = k->pb, c.a.padding[3] = k->pr;
  c.bias = epi == 0 ? BIAS_NONE : BIAS_RESHAPE;
  c.residual = epi == 2 ? RES_AFTER : epi == 3 ? RES_BEFORE : RES_NONE;
  c.clamp = epi == 0 || epi == 1 ? CL_NONE : epi == 2 ? CL_CLIP : CL_RELU6_MIN;
  if (epi == 3) c.hi = 6.0f;
  if (epi == 1) c.clamp = CL_RELU6_MIN, c.hi = 0.5f;
  run_simple(&c, seed);
}

/* x [N,C,H,W] -> 1x1 conv C>C (GEMM, NHWC) -> depthwise + bias + residual + clamp. */
static void dw_nhwc_case(const dwcase *k, int epi, uint32_t seed) {
  int KW = k->K == 7 ? 3 : k->K, OH, OW, isa;
  int64_t xs[4], w1s[4], ws[4], bs[3], ys[4];
  size_t nx, ny;
  float *x, *w1, *w, *b, *r, *want, *got;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs one, a;
  fuse_value v, y;
  OH = (k->H + k->pt + k->pb - k->dh * (k->K - 1) - 1) / k->sh + 1;
  OW = (k->W + k->pl + k->pr - k->dw * (KW - 1) - 1) / k->sw + 1;
  xs[0] = k->N, xs[1] = k->C, xs[2] = k->H, xs[3] = k->W;
  w1s[0] = k->C, w1s[1] = k->C, w1s[2] = 1, w1s[3] = 1;
  ws[0] = k->C, ws[1] = 1, ws[2] = k->K, ws[3] = KW;
  bs[0] = k->C, bs[1] = 1, bs[2] = 1;
  ys[0] = k->N, ys[1] = k->C, ys[2] = OH, ys[3] = OW;
  nx = (size_t)k->N * k->C * k->H * k->W, ny = (size_t)k->N * k->C * OH * OW;
  x = falloc(nx), r = falloc(ny), want = falloc(ny), got = falloc(ny);
  w1 = falloc((size_t)k->C * k->C), w = falloc((size_t)k->C * k->K * KW), b = falloc((size_t)k->C);
  fill(x, nx, seed * 8 + 0, -1, 1);
  fill(r, ny, seed * 8 + 1, -1, 1);
  fill(w1, (size_t)k->C * k->C, seed * 8 + 2, -0.5f, 0.5f);
  fill(w, (size_t)k->C * k->K * KW, seed * 8 + 3, -0.5f, 0.5f);
  fill(b, (size_t)k->C, seed * 8 + 4, -0.5f, 0.5f);
  memset(&one, 0, sizeof one);
  memset(&a, 0, sizeof a);
  a.strides[0] = k->sh, a.strides[1] = k->sw, a.dilation[0] = k->dh, a.dilation[1] = k->dw;
  a.padding[0] = k->pt, a.padding[1] = k->pl, a.padding[2] = k->pb, a.padding[3] = k->pr;
  a.groups = k->C;
  v = fuse_conv2d(g, fuse_input(g, "x", 4, xs), fuse_constant(g, "w1", 4, w1s, w1), &one);
  y = fuse_conv2d(g, v, fuse_constant(g, "w", 4, ws, w), &a);
  if (epi) y = fuse_add(g, y, fuse_constant(g, "b", 3, bs, b));
  if (epi >= 2) y = fuse_add(g, y, fuse_input(g, "r", 4, ys));
  if (epi == 2) y = fuse_clip(g, y, -0.25f, 0.5f);
  if (epi == 1 || epi == 3) y = fuse_minimum(g, fuse_relu(g, y), fuse_scalar(g, 6.0f));
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++) {
    fuse_compile_options opt;
    fuse_plan *p = NULL;
    const float *ins[2];
    float *outs[1];
    double err;
    long bad;
    if (!isa_have[isa]) continue;
    memset(&opt, 0, sizeof opt);
    set_isa(&opt, isa);
    ins[0] = x, ins[1] = r;
    outs[0] = isa == REFERENCE ? want : got;
    memset(outs[0], 0xff, ny * sizeof(float));
    CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
    if (!p) continue;
    CHECK_EQ_INT(fuse_run(p, ins, outs, NULL), FUSE_OK);
    fuse_plan_destroy(p);
    if (isa == REFERENCE) continue;
    n_compared[isa]++;
    if (!compare(got, want, ny, &err, &bad) || !(err <= TOL)) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: NHWC depthwise %s: N=%d C=%d %dx%d k%dx%d s%d,%d d%d,%d "
              "pad %d,%d,%d,%d epilogue %d: error %.3g (first bad %ld)\n", runner_current,
              isa_name((fuse_isa)isa), k->N, k->C, k->H, k->W, k->K, KW, k->sh, k->sw, k->dh,
              k->dw, k->pt, k->pl, k->pb, k->pr, epi, err, bad);
    }
    if (err > worst_err[isa]) worst_err[isa] = err;
  }
  fuse_graph_destroy(g);
  free(x), free(r), free(want), free(got), free(w1), free(w), free(b);
}

TEST(depthwise) {
  int i, epi;
  for (i = 0; i < (int)(sizeof dw_cases / sizeof dw_cases[0]); i++)
    for (epi = 0; epi < 4; epi++) {
      dw_nchw_case(&dw_cases[i], epi, 7000u + (uint32_t)(i * 4 + epi));
      dw_nhwc_case(&dw_cases[i], epi, 8000u + (uint32_t)(i * 4 + epi));
    }
  printf("depthwise: %d shapes x 4 epilogues, NCHW and NHWC\n", i);
}

/* The depthwise, pool, element-wise and transpose instances called directly (each one the
   CPU runs and always the scalar twin) against plain loops of the op's definition, on random
   shapes: kernels 3x3, 5x5 (the register kernels) and others, strides 1-3, dilation 1-2,
   padding, planes and channel counts narrower than a vector, each post-op kind in random
   order. */
typedef void (*dw_instance_fn)(const fuse__dw_args *d, void *buf, int64_t r0, int64_t r1);
typedef struct kernel_instances {
  fuse_isa isa;
  dw_instance_fn nhwc, nchw;
  void (*pool)(const fuse__pool_args *d, int64_t r0, int64_t r1);
  void (*elt)(int op, float *y, const float *a, int sa, const float *b, int sb, int64_t n,
              float lo, float hi);
  void (*transpose)(const float *x, int64_t ldx, float *y, int64_t ldy, int64_t rows,
                    int64_t cols);
} kernel_instances;

static const kernel_instances instances[] = {
    {FUSE_ISA_SCALAR, fuse__dw_scalar, fuse__dwc_scalar, fuse__pool_scalar, fuse__elt_scalar,
     fuse__transpose_scalar},
#if defined(TEST_X86) && !defined(FUSE_NO_AVX2)
    {FUSE_ISA_AVX2, fuse__dw_avx2, fuse__dwc_avx2, fuse__pool_avx2, fuse__elt_avx2,
     fuse__transpose_avx2},
#endif
#if defined(TEST_X86) && !defined(FUSE_NO_AVX512)
    {FUSE_ISA_AVX512, fuse__dw_avx512, fuse__dwc_avx512, fuse__pool_avx512, fuse__elt_avx512,
     NULL},
#endif
#ifdef TEST_NEON
    {FUSE_ISA_NEON, fuse__dw_neon, fuse__dwc_neon, fuse__pool_neon, fuse__elt_neon,
     fuse__transpose_neon},
#endif
};
#define NUM_INSTANCES ((int)(sizeof instances / sizeof instances[0]))

static int close_to(const float *got, const float *want, size_t n, size_t *bad) {
  size_t i;
  for (i = 0; i < n; i++)
    if (got[i] != want[i] && !(fabsf(got[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i])))) {
      *bad = i;
      return 0;
    }
  return 1;
}

static void *aligned_scratch(size_t n, void **raw) {
  unsigned char *p = (unsigned char *)malloc(n + 64);
  *raw = p;
  return p + (64 - (uintptr_t)p % 64) % 64;
}

static void dw_instance_case(uint32_t seed, int *shapes_seen) {
  int N = rnd_in(1, 2), C = rnd_in(1, 40), H = rnd_in(1, 24), W = rnd_in(1, 40);
  int pick = rnd(4), KH = pick < 2 ? 3 : pick == 2 ? 5 : rnd_in(1, 7);
  int KW = pick < 3 ? KH : rnd_in(1, 7);
  int sh = rnd_in(1, 3), sw = rnd_in(1, 3), dh = rnd(3) ? 1 : 2, dw = rnd(3) ? 1 : 2;
  int pt = rnd(KH), pl = rnd(KW), pb = rnd(KH), pr = rnd(KW), OH, OW, q, i, num_post = rnd(4);
  int64_t Cp = (C + 15) / 16 * 16, kh, kw, n, c, oh, ow;
  fuse_post_op post[FUSE_MAX_POST_OPS];
  float *x, *w, *wp, *bias, *res[FUSE_MAX_POST_OPS], *want, *got, *zeros, *xt;
  size_t nx, ny;
  int layout;
  if (rnd(2)) sh = sw = rnd_in(1, 2); /* more of the register kernels */
  OH = (H + pt + pb - dh * (KH - 1) - 1) / sh + 1;
  OW = (W + pl + pr - dw * (KW - 1) - 1) / sw + 1;
  if (OH < 1 || OW < 1) return;
  nx = (size_t)N * C * H * W, ny = (size_t)N * C * OH * OW;
  x = falloc(nx), xt = falloc(nx), want = falloc(ny), got = falloc(ny), bias = falloc((size_t)C);
  w = falloc((size_t)C * KH * KW), wp = falloc((size_t)KH * KW * Cp), zeros = falloc((size_t)W + 64);
  fill(x, nx, seed * 16 + 1, -1, 1);
  fill(w, (size_t)C * KH * KW, seed * 16 + 2, -0.5f, 0.5f);
  fill(bias, (size_t)C, seed * 16 + 3, -0.5f, 0.5f);
  memset(zeros, 0, ((size_t)W + 64) * sizeof(float));
  memset(wp, 0, (size_t)KH * KW * Cp * sizeof(float)); /* packed [tap][Cp] */
  for (c = 0; c < C; c++)
    for (i = 0; i < KH * KW; i++) wp[i * Cp + c] = w[c * KH * KW + i];
  for (q = 0; q < num_post; q++) {
    memset(&post[q], 0, sizeof post[q]);
    post[q].kind = rnd(2) ? FUSE_POST_ADD : FUSE_POST_CLAMP;
    post[q].lo = rnd(2) ? 0.0f : -0.3f;
    post[q].hi = rnd(2) ? 6.0f : rnd(2) ? 0.4f : HUGE_VALF;
    res[q] = falloc(ny);
    fill(res[q], ny, seed * 16 + 4 + (uint32_t)q, -1, 1);
  }
  for (layout = 0; layout < 2; layout++) { /* NCHW, then NHWC (x, y, residuals transposed) */
    int64_t NHWC = layout;
    for (n = 0; n < N; n++) /* the oracle, in the layout's order */
      for (c = 0; c < C; c++)
        for (oh = 0; oh < OH; oh++)
          for (ow = 0; ow < OW; ow++) {
            double s = bias[c];
            int64_t at = NHWC ? ((n * OH + oh) * OW + ow) * C + c : ((n * C + c) * OH + oh) * OW + ow;
            float v;
            for (kh = 0; kh < KH; kh++)
              for (kw = 0; kw < KW; kw++) {
                int64_t ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += (double)x[((n * C + c) * H + ih) * W + iw] * w[(c * KH + kh) * KW + kw];
              }
            v = (float)s;
            for (q = 0; q < num_post; q++)
              v = post[q].kind == FUSE_POST_ADD ? v + res[q][at]
                                                : fminf(post[q].hi, fmaxf(post[q].lo, v));
            want[at] = v;
          }
    for (i = 0; i < NUM_INSTANCES; i++) {
      const kernel_instances *k = &instances[i];
      fuse__dw_args d;
      void *raw = NULL, *scratch = NULL;
      size_t bad = 0;
      if (!isa_have[k->isa]) continue;
      memset(&d, 0, sizeof d);
      d.x = x, d.w = wp, d.bias = bias, d.y = got, d.post = post, d.num_post = num_post;
      for (q = 0; q < num_post; q++) d.residual[q] = post[q].kind == FUSE_POST_ADD ? res[q] : NULL;
      d.KH = KH, d.KW = KW, d.C = C, d.Cp = Cp, d.H = H, d.W = W, d.OH = OH, d.OW = OW;
      d.sh = sh, d.sw = sw, d.pt = pt, d.pl = pl, d.dh = dh, d.dw = dw, d.zeros = zeros;
      memset(got, 0xff, ny * sizeof(float));
      if (NHWC) {
        int64_t p;
        for (n = 0; n < N; n++) /* x to NHWC */
          for (c = 0; c < C; c++)
            for (p = 0; p < (int64_t)H * W; p++) xt[(n * H * W + p) * C + c] = x[(n * C + c) * H * W + p];
        d.x = xt;
        k->nhwc(&d, NULL, 0, (int64_t)N * OH);
      } else {
        scratch = aligned_scratch(fuse__dwc_scratch(OH, OW, KH, KW, sh, sw, dh, dw), &raw);
        k->nchw(&d, scratch, 0, (int64_t)N * C);
      }
      free(raw);
      if (!close_to(got, want, ny, &bad)) {
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: %s %s: N=%d C=%d %dx%d k%dx%d s%d,%d d%d,%d pad %d,%d,%d,%d "
                "posts %d: element %zu is %g, want %g\n", runner_current,
                NHWC ? "fuse__dw" : "fuse__dwc", isa_name(k->isa), N, C, H, W, KH, KW, sh, sw,
                dh, dw, pt, pl, pb, pr, num_post, bad, got[bad], want[bad]);
      }
    }
  }
  if (KH == KW && (KH == 3 || KH == 5) && sh <= 2 && dh == 1) shapes_seen[0]++;
  else shapes_seen[1]++;
  free(x), free(xt), free(w), free(wp), free(bias), free(want), free(got), free(zeros);
  for (q = 0; q < num_post; q++) free(res[q]);
}

TEST(depthwise_instances) {
  int i, seen[2] = {0, 0};
  shape_rng = 0x5eed0d3bu;
  for (i = 0; i < 400; i++) dw_instance_case(20000u + (uint32_t)i, seen);
  printf("depthwise_instances: %d on the register kernels, %d others, each instance and layout\n",
         seen[0], seen[1]);
}

/* Every instance against the oracle; and, bit for bit, against the first instance (the
   scalar twin): every fourth case has 60 to 140 channels (windows inside the input take whole
   groups of four vectors at once, the rest vector by vector; the bits must not tell), every
   eighth NaNs of two payloads (max keeps the last NaN of a window). Max against the oracle
   bit for bit, average within close_to. */
TEST(pool_instances) {
  int t;
  shape_rng = 0x900151u;
  for (t = 0; t < 200; t++) {
    int N = rnd_in(1, 2), C = t % 4 == 3 ? rnd_in(60, 140) : rnd_in(1, 40);
    int H = rnd_in(1, 14), W = rnd_in(1, 14), i, first = -1, nans = t % 8 == 7;
    fuse_pool2d_attrs a;
    int64_t OH, OW, n, oh, ow, c, kh, kw;
    float *x, *want, *got, *first_got;
    size_t nx, ny, bad = 0;
    memset(&a, 0, sizeof a);
    a.kernel[0] = rnd_in(1, 4), a.kernel[1] = rnd_in(1, 4);
    a.strides[0] = rnd_in(1, 3), a.strides[1] = rnd_in(1, 3);
    a.dilation[0] = rnd_in(1, 2), a.dilation[1] = rnd_in(1, 2);
    a.padding[0] = rnd(a.kernel[0]), a.padding[1] = rnd(a.kernel[1]);
    a.padding[2] = rnd(a.kernel[0]), a.padding[3] = rnd(a.kernel[1]);
    a.count_include_pad = rnd(2);
    OH = (H + a.padding[0] + a.padding[2] - a.dilation[0] * (a.kernel[0] - 1) - 1) / a.strides[0] + 1;
    OW = (W + a.padding[1] + a.padding[3] - a.dilation[1] * (a.kernel[1] - 1) - 1) / a.strides[1] + 1;
    if (OH < 1 || OW < 1) continue;
    if (!(t & 1)) a.dilation[0] = a.dilation[1] = 1; /* average pool: no dilation */
    OH = (H + a.padding[0] + a.padding[2] - a.dilation[0] * (a.kernel[0] - 1) - 1) / a.strides[0] + 1;
    OW = (W + a.padding[1] + a.padding[3] - a.dilation[1] * (a.kernel[1] - 1) - 1) / a.strides[1] + 1;
    nx = (size_t)N * H * W * C, ny = (size_t)N * OH * OW * C;
    x = falloc(nx), want = falloc(ny), got = falloc(ny), first_got = falloc(ny);
    fill(x, nx, 31000u + (uint32_t)t, -1, 1);
    for (i = 0; nans && i < (int)nx; i++) { /* a sixth NaNs, two payloads, hashed places */
      uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)t * 40503u, bits;
      h ^= h >> 15;
      bits = h >> 8 & 1 ? 0x7fc00001u : 0xffc00002u;
      if (h % 6 == 0) memcpy(&x[i], &bits, sizeof bits);
    }
    for (n = 0; n < N; n++) /* the oracle on NHWC: max (odd t) or average (even t) */
      for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++)
          for (c = 0; c < C; c++) {
            int64_t h0 = oh * a.strides[0] - a.padding[0], w0 = ow * a.strides[1] - a.padding[1];
            double s = 0;
            float m = -HUGE_VALF; /* in float, by the rule the kernels keep: the bits */
            int64_t cnt = 0, h1 = h0 + a.kernel[0], w1 = w0 + a.kernel[1];
            float xv;
            for (kh = 0; kh < a.kernel[0]; kh++)
              for (kw = 0; kw < a.kernel[1]; kw++) {
                int64_t ih = h0 + kh * a.dilation[0], iw = w0 + kw * a.dilation[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += x[((n * H + ih) * W + iw) * C + c], cnt++;
                xv = x[((n * H + ih) * W + iw) * C + c];
                if (xv > m || xv != xv) m = xv; /* the last NaN of the window stays */
              }
            if (a.count_include_pad) { /* the window clipped to the padded input */
              if (h1 > H + a.padding[2]) h1 = H + a.padding[2];
              if (w1 > W + a.padding[3]) w1 = W + a.padding[3];
              cnt = (h1 - h0) * (w1 - w0);
            }
            want[((n * OH + oh) * OW + ow) * C + c] = t & 1 ? m : (float)(s / (double)cnt);
          }
    for (i = 0; i < NUM_INSTANCES; i++) {
      fuse__pool_args d;
      if (!isa_have[instances[i].isa]) continue;
      memset(&d, 0, sizeof d);
      d.x = x, d.y = got, d.a = &a, d.is_max = t & 1;
      d.C = C, d.H = H, d.W = W, d.OH = OH, d.OW = OW, d.ldy = C;
      memset(got, 0xff, ny * sizeof(float));
      instances[i].pool(&d, 0, N * OH);
      { /* into a concat's slice: pixels C + 3 floats apart, the same bits, the gaps untouched */
        size_t npix = ny / (size_t)C, q;
        float *wide = falloc(npix * (size_t)(C + 3));
        memset(wide, 0x5a, npix * (size_t)(C + 3) * sizeof(float));
        d.y = wide, d.ldy = C + 3;
        instances[i].pool(&d, 0, N * OH);
        for (q = 0; q < npix; q++) {
          unsigned char gap[3 * sizeof(float)];
          memset(gap, 0x5a, sizeof gap);
          if (memcmp(wide + q * (size_t)(C + 3), got + q * (size_t)C, (size_t)C * sizeof(float)) ||
              memcmp(wide + q * (size_t)(C + 3) + C, gap, sizeof gap)) {
            runner_test_failed = 1;
            fprintf(stderr, "  FAIL %s: %s pool %s: C=%d %dx%d: pixel %zu differs written %d apart\n",
                    runner_current, t & 1 ? "max" : "average", isa_name(instances[i].isa), C, H,
                    W, q, C + 3);
            break;
          }
        }
        free(wide);
        d.y = got, d.ldy = C;
      }
      if (first < 0) {
        first = i;
        memcpy(first_got, got, ny * sizeof(float));
      } else if (memcmp(got, first_got, ny * sizeof(float)) != 0) {
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: %s pool %s: C=%d %dx%d k%dx%d: not the bits of %s\n",
                runner_current, t & 1 ? "max" : "average", isa_name(instances[i].isa), C, H, W,
                a.kernel[0], a.kernel[1], isa_name(instances[first].isa));
      }
      if (t & 1 ? memcmp(got, want, ny * sizeof(float)) != 0 : !close_to(got, want, ny, &bad)) {
        for (bad = 0; t & 1 && bad + 1 < ny && !memcmp(&got[bad], &want[bad], sizeof(float)); bad++) {
        }
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: %s pool %s: C=%d %dx%d k%dx%d: element %zu is %g, want %g\n",
                runner_current, t & 1 ? "max" : "average", isa_name(instances[i].isa), C, H, W,
                a.kernel[0], a.kernel[1], bad, got[bad], want[bad]);
      }
    }
    free(x), free(want), free(got), free(first_got);
  }
}

TEST(elementwise_and_transpose_instances) {
  static const int ops[7] = {FUSE__OP_ADD, FUSE__OP_SUB,  FUSE__OP_MUL, FUSE__OP_MAXIMUM,
                             FUSE__OP_MINIMUM, FUSE__OP_RELU, FUSE__OP_CLIP};
  float a[70], b[70], want[70], got[70], *x, *y;
  int t, i, j;
  shape_rng = 0xe17u;
  for (t = 0; t < 140; t++) {
    int op = ops[t % 7], n = rnd_in(1, 70), sa = rnd(4) != 0, sb = rnd(4) != 0;
    fill(a, 70, 32000u + (uint32_t)t, -2, 2);
    fill(b, 70, 33000u + (uint32_t)t, -2, 2);
    a[rnd(70)] = NAN, b[rnd(70)] = NAN;
    for (j = 0; j < n; j++) {
      float u = a[sa ? j : 0], v = b[sb ? j : 0];
      want[j] = op == FUSE__OP_RELU ? (u < 0 ? 0.0f : u)
                : op == FUSE__OP_CLIP ? (u < -0.5f ? -0.5f : u > 0.75f ? 0.75f : u)
                                      : fuse__binary_op(op, u, v);
    }
    for (i = 0; i < NUM_INSTANCES; i++) {
      if (!isa_have[instances[i].isa]) continue;
      memset(got, 0, sizeof got);
      instances[i].elt(op, got, a, sa, b, sb, n, -0.5f, 0.75f);
      if (memcmp(got, want, (size_t)n * sizeof(float)) != 0) { /* bit-exact, NaN included */
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: element-wise op %d on %s, n %d, sa %d, sb %d\n",
                runner_current, op, isa_name(instances[i].isa), n, sa, sb);
      }
    }
  }
  x = falloc(300 * 70), y = falloc(300 * 70);
  fill(x, 300 * 70, 34000u, -1, 1);
  for (t = 0; t < 40; t++) {
    int rows = rnd_in(1, 300), cols = rnd_in(1, 70), r, c;
    for (i = 0; i < NUM_INSTANCES; i++) {
      if (!isa_have[instances[i].isa] || !instances[i].transpose) continue;
      memset(y, 0, 300 * 70 * sizeof(float));
      instances[i].transpose(x, 70, y, rows + 3, rows, cols);
      for (r = 0; r < rows; r++)
        for (c = 0; c < cols; c++)
          if (y[c * (rows + 3) + r] != x[r * 70 + c]) {
            runner_test_failed = 1;
            fprintf(stderr, "  FAIL %s: transpose on %s, %d x %d at %d, %d\n", runner_current,
                    isa_name(instances[i].isa), rows, cols, r, c);
            r = rows, c = cols;
          }
    }
  }
  for (t = 0; t < 30; t++) { /* three rows into pixels of three (an RGB image to NHWC) */
    int cols = t < 20 ? t + 1 : rnd_in(21, 70), c;
    for (i = 0; i < NUM_INSTANCES; i++) {
      if (!isa_have[instances[i].isa] || !instances[i].transpose) continue;
      memset(y, 0, 300 * 70 * sizeof(float));
      instances[i].transpose(x, 70, y, 3, 3, cols);
      for (c = 0; c < 3 * cols + 8; c++)
        if (y[c] != (c < 3 * cols ? x[c % 3 * 70 + c / 3] : 0.0f)) {
          runner_test_failed = 1;
          fprintf(stderr, "  FAIL %s: 3 rows to pixels on %s, %d columns, at %d\n",
                  runner_current, isa_name(instances[i].isa), cols, c);
          break;
        }
    }
  }
  free(x), free(y);
}

TEST(nhwc_followers_and_matmul) {
  int v;
  for (v = 0; v <= 10; v++) {
    follow_case(v, 0);
    follow_case(v, 1);
  }
}

/* Element-wise steps on the SIMD path (rows of the last axis, whole tensors, scalars) with
   NaN and infinities in the inputs: the same NaN positions and values as the scalar plan. */
TEST(elementwise_nan) {
  static const int64_t xs[4] = {2, 3, 4, 37}, cs[4] = {1, 3, 1, 1}, ls[1] = {37};
  float x[2 * 3 * 4 * 37], c[3] = {0.25f, -0.5f, 0.0f}, l[37], *want[6], *got[6];
  int isa, o, k;
  fill(x, sizeof x / sizeof *x, 9100, -2, 2);
  fill(l, 37, 9101, -1, 1);
  for (k = 0; k < (int)(sizeof x / sizeof *x); k += 7) x[k] = k % 3 ? NAN : k % 2 ? INF : -INF;
  x[1] = -0.0f;
  l[3] = NAN;
  for (o = 0; o < 6; o++) want[o] = falloc(sizeof x / sizeof *x), got[o] = falloc(sizeof x / sizeof *x);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++) {
    fuse_graph *g;
    fuse_plan *p = NULL;
    fuse_compile_options opt;
    fuse_value in, cv, lv;
    const float *ins[1];
    if (!isa_have[isa]) continue;
    g = fuse_graph_create(NULL);
    in = fuse_input(g, "x", 4, xs);
    cv = fuse_constant(g, "c", 4, cs, c);
    lv = fuse_constant(g, "l", 1, ls, l);
    fuse_output(g, fuse_maximum(g, in, cv));
    fuse_output(g, fuse_minimum(g, lv, in));
    fuse_output(g, fuse_relu(g, in));
    fuse_output(g, fuse_clip(g, in, -0.5f, 0.75f));
    fuse_output(g, fuse_sub(g, in, lv));
    fuse_output(g, fuse_mul(g, in, in));
    memset(&opt, 0, sizeof opt);
    set_isa(&opt, isa);
    CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
    ins[0] = x;
    if (p) CHECK_EQ_INT(fuse_run(p, ins, isa == REFERENCE ? want : got, NULL), FUSE_OK);
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
    if (isa == REFERENCE) continue;
    for (o = 0; o < 6; o++)
      if (memcmp(got[o], want[o], sizeof x) != 0) { /* bit-exact: no reassociation here */
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: output %d on %s differs from scalar\n", runner_current, o,
                isa_name((fuse_isa)isa));
      }
  }
  for (o = 0; o < 6; o++) free(want[o]), free(got[o]);
}

TEST(matmul_shapes) {
  CHECK_EQ_INT((int)fuse_plan_weights_size(NULL), 0);
  static const int Ms[] = {1, 5, 13, 64}, Ns[] = {4, 37, 72, 100, 256}, Ks[] = {3, 64, 300};
  int mi, ni, ki, isa;
  for (mi = 0; mi < 4; mi++)
    for (ni = 0; ni < 5; ni++)
      for (ki = 0; ki < 3; ki++) {
        int M = Ms[mi], N = Ns[ni], K = Ks[ki];
        int64_t xs[2], ws[2], bs[1];
        float *x = falloc((size_t)M * K), *w = falloc((size_t)K * N), *b = falloc((size_t)N);
        float *want = falloc((size_t)M * N), *got = falloc((size_t)M * N);
        xs[0] = M, xs[1] = K, ws[0] = K, ws[1] = N, bs[0] = N;
        fill(x, (size_t)M * K, 9000u + (uint32_t)(mi * 100 + ni * 10 + ki), -1, 1);
        fill(w, (size_t)K * N, 9500u + (uint32_t)(mi * 100 + ni * 10 + ki), -0.5f, 0.5f);
        fill(b, (size_t)N, 9900u, -0.5f, 0.5f);
        for (isa = REFERENCE; isa <= LAST_ISA; isa++) {
          fuse_graph *g;
          fuse_plan *p = NULL;
          fuse_compile_options opt;
          const float *ins[1];
          float *outs[1];
          fuse_value y;
          if (!isa_have[isa]) continue;
          g = fuse_graph_create(NULL);
          y = fuse_matmul(g, fuse_input(g, "x", 2, xs), fuse_constant(g, "w", 2, ws, w));
          y = fuse_clip(g, fuse_add(g, y, fuse_constant(g, "b", 1, bs, b)), -1.0f, 1.5f);
          fuse_output(g, y);
          CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
          memset(&opt, 0, sizeof opt);
          set_isa(&opt, isa);
          CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
          /* the weights once: the constant, or its packed copy (padded to whole tiles) */
          CHECK(fuse_plan_weights_size(p) >= (size_t)(K * N + N) * sizeof(float));
          CHECK(fuse_plan_weights_size(p) < (size_t)(2 * K * N + 2 * N) * sizeof(float) + 65536);
          ins[0] = x;
          outs[0] = isa == REFERENCE ? want : got;
          if (p) CHECK_EQ_INT(fuse_run(p, ins, outs, NULL), FUSE_OK);
          fuse_plan_destroy(p);
          fuse_graph_destroy(g);
          if (isa != REFERENCE) {
            double err;
            long bad;
            int same = compare(got, want, (size_t)M * N, &err, &bad);
            n_compared[isa]++;
            if (err > worst_err[isa]) worst_err[isa] = err;
            if (!same || !(err <= TOL)) {
              runner_test_failed = 1;
              fprintf(stderr, "  FAIL %s: matmul M=%d K=%d N=%d on %s: error %.3g\n", runner_current,
                      M, K, N, isa_name((fuse_isa)isa), err);
            }
          }
        }
        free(x), free(w), free(b), free(want), free(got);
      }
}

/* --------------------------------------------------------------- concurrency -- */

#define THREAD_RUNS 20
#define THREADS 2

typedef struct worker {
  fuse_plan *p;
  void *ws;
  const float *x, *r, *serial; /* THREADS * THREAD_RUNS inputs / serial outputs */
  size_t nx, ny;
  int tid, errors, mismatches;
} worker;

static void *worker_main(void *arg) {
  worker *w = (worker *)arg;
  float *y = falloc(w->ny);
  int i;
  for (i = 0; i < THREAD_RUNS; i++) {
    size_t k = (size_t)w->tid * THREAD_RUNS + (size_t)i;
    const float *ins[2];
    float *outs[1];
    ins[0] = w->x + k * w->nx;
    ins[1] = w->r + k * w->ny;
    outs[0] = y;
    if (fuse_run(w->p, ins, outs, w->ws) != FUSE_OK) w->errors++;
    if (memcmp(y, w->serial + k * w->ny, w->ny * sizeof(float)) != 0) w->mismatches++;
  }
  free(y);
  return NULL;
}

TEST(concurrent_runs) {
  /* x [1,32,40,40] -> conv 3x3 (Kd 288: 2 K blocks; 1600 columns: 2 column blocks) + bias +
     relu -> conv 3x3 K=24 + residual r + clip: two GEMM steps and a workspace tensor */
  fuse_isa isa = isa_have[FUSE_ISA_AVX512] ? FUSE_ISA_AVX512
                 : isa_have[FUSE_ISA_AVX2] ? FUSE_ISA_AVX2
                 : isa_have[FUSE_ISA_NEON] ? FUSE_ISA_NEON
                                           : FUSE_ISA_SCALAR;
  int64_t xs[4] = {1, 32, 40, 40}, w1s[4] = {24, 32, 3, 3}, w2s[4] = {24, 24, 3, 3}, bs[4] = {1, 24, 1, 1};
  int64_t ys[4] = {1, 24, 40, 40};
  size_t nx = 32 * 40 * 40, ny = 24 * 40 * 40, k;
  float *w1 = falloc(24 * 32 * 9), *w2 = falloc(24 * 24 * 9), *b = falloc(24);
  float *xin = falloc(nx * THREADS * THREAD_RUNS), *rin = falloc(ny * THREADS * THREAD_RUNS);
  float *serial = falloc(ny * THREADS * THREAD_RUNS);
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs pad1;
  fuse_compile_options opt;
  fuse_plan *p = NULL;
  fuse_value x, r, y;
  worker w[THREADS];
  pthread_t th[THREADS];
  int t, started[THREADS];
  sbuf text;
  memset(&pad1, 0, sizeof pad1);
  pad1.padding[0] = pad1.padding[1] = pad1.padding[2] = pad1.padding[3] = 1;
  fill(w1, 24 * 32 * 9, 7001, -0.06f, 0.06f);
  fill(w2, 24 * 24 * 9, 7002, -0.07f, 0.07f);
  fill(b, 24, 7003, -0.2f, 0.2f);
  fill(xin, nx * THREADS * THREAD_RUNS, 7004, -1, 1);
  fill(rin, ny * THREADS * THREAD_RUNS, 7005, -1, 1);
  x = fuse_input(g, "x", 4, xs);
  r = fuse_input(g, "r", 4, ys);
  y = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, fuse_constant(g, "w1", 4, w1s, w1), &pad1),
                            fuse_constant(g, "b", 4, bs, b)));
  y = fuse_clip(g, fuse_add(g, fuse_conv2d(g, y, fuse_constant(g, "w2", 4, w2s, w2), &pad1), r),
                -0.5f, 0.5f);
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  memset(&opt, 0, sizeof opt);
  opt.isa = isa;
  CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
  fuse_graph_destroy(g);
  if (!p) goto done;
  printf("concurrent_runs: %d threads x %d runs on a %s plan\n", THREADS, THREAD_RUNS, isa_name(isa));
  text.len = 0;
  text.s[0] = 0;
  fuse_plan_write(p, sbuf_write, &text);
  {
    const char *step;
    CHECK_EQ_INT(compute_steps(text.s, &step), 2);
  }
  CHECK_STR_CONTAINS(text.s, "conv2d + bias + clamp");
  CHECK_STR_CONTAINS(text.s, "conv2d + add + clamp");
  for (k = 0; k < THREADS * THREAD_RUNS; k++) {
    const float *ins[2];
    float *outs[1];
    ins[0] = xin + k * nx;
    ins[1] = rin + k * ny;
    outs[0] = serial + k * ny;
    CHECK_EQ_INT(fuse_run(p, ins, outs, NULL), FUSE_OK);
  }
  { /* the serial runs agree with a scalar plan */
    fuse_graph *g2 = fuse_graph_create(NULL);
    fuse_plan *ps = NULL;
    float *ys_ = falloc(ny);
    const float *ins[2];
    float *outs[1];
    x = fuse_input(g2, "x", 4, xs);
    r = fuse_input(g2, "r", 4, ys);
    y = fuse_relu(g2, fuse_add(g2, fuse_conv2d(g2, x, fuse_constant(g2, "w1", 4, w1s, w1), &pad1),
                               fuse_constant(g2, "b", 4, bs, b)));
    y = fuse_clip(g2, fuse_add(g2, fuse_conv2d(g2, y, fuse_constant(g2, "w2", 4, w2s, w2), &pad1), r),
                  -0.5f, 0.5f);
    fuse_output(g2, y);
    CHECK_EQ_INT(fuse_optimize(g2, NULL), FUSE_OK);
    set_isa(&opt, REFERENCE);
    CHECK_EQ_INT(fuse_compile(g2, &opt, &ps), FUSE_OK);
    fuse_graph_destroy(g2);
    if (ps) {
      ins[0] = xin + 7 * nx;
      ins[1] = rin + 7 * ny;
      outs[0] = ys_;
      CHECK_EQ_INT(fuse_run(ps, ins, outs, NULL), FUSE_OK);
      CHECK_NEAR_ARRAY(serial + 7 * ny, ys_, ny, TOL);
      fuse_plan_destroy(ps);
    }
    free(ys_);
  }
  {
    void *raw[THREADS];
    size_t wsz = fuse_plan_workspace_size(p);
    for (t = 0; t < THREADS; t++) {
      w[t].p = p;
      w[t].ws = ws_alloc(wsz, &raw[t]);
      memset(w[t].ws, 0xa5, wsz); /* garbage: nothing may be read before it is written */
      w[t].x = xin;
      w[t].r = rin;
      w[t].serial = serial;
      w[t].nx = nx;
      w[t].ny = ny;
      w[t].tid = t;
      w[t].errors = w[t].mismatches = 0;
    }
    for (t = 0; t < THREADS; t++) started[t] = pthread_create(&th[t], NULL, worker_main, &w[t]) == 0;
    for (t = 0; t < THREADS; t++) {
      CHECK(started[t]);
      if (started[t]) pthread_join(th[t], NULL);
      CHECK_EQ_INT(w[t].errors, 0);
      CHECK_EQ_INT(w[t].mismatches, 0);
      free(raw[t]);
    }
  }
  fuse_plan_destroy(p);
done:
  free(w1);
  free(w2);
  free(b);
  free(xin);
  free(rin);
  free(serial);
}

/* ------------------------------------------------------------ host threads -- */
/* A job system (host_threads.h) that counts its calls: every index on its own pthread. The
   plan cuts a GEMM conv into exactly num_threads chunks, each with its own packing buffer, so
   the results must equal a serial plan's bit for bit, whatever runs where. */
static int job_calls;
static void job_parallel_for(void *user, fuse_task_fn task, void *ctx, int n) {
  job_calls++;
  host_parallel_for(user, task, ctx, n);
}

/* g optimized, then compiled serial (*p1) and for `threads` host threads (*p2) */
static void optimize_and_compile_pair(fuse_graph *g, int threads, fuse_plan **p1, fuse_plan **p2) {
  fuse_compile_options serial, par;
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  memset(&serial, 0, sizeof serial);
  memset(&par, 0, sizeof par);
  par.parallel_for = job_parallel_for;
  par.num_threads = threads;
  serial.no_winograd = par.no_winograd = direct_only;
  CHECK_EQ_INT(fuse_compile(g, &serial, p1), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, &par, p2), FUSE_OK);
}

TEST(host_job_system_threads) {
  /* batch 2 with groups 2; a 7x7 output (one column block: the row panels are split); an
     output of 48x48 = 2304 columns (three column blocks) with bias, residual and relu */
  static const int shapes[3][6] = {{2, 8, 24, 9, 9, 2}, {1, 64, 200, 7, 7, 1}, {1, 16, 40, 48, 48, 1}};
  int si, threads;
  direct_only = 1;
  for (si = 0; si < 3; si++)
    for (threads = 2; threads <= 5; threads += 3) {
      int N = shapes[si][0], C = shapes[si][1], K = shapes[si][2], H = shapes[si][3];
      int W = shapes[si][4], G = shapes[si][5];
      int64_t xs[4], ws[4], bs[4], ys[4];
      size_t nx = (size_t)N * C * H * W, nw = (size_t)K * (C / G) * 9, ny = (size_t)N * K * H * W, i;
      float *x = (float *)malloc(nx * 4), *w = (float *)malloc(nw * 4), *b = (float *)malloc((size_t)K * 4);
      float *res = (float *)malloc(ny * 4), *y1 = (float *)malloc(ny * 4), *y2 = (float *)malloc(ny * 4);
      fuse_graph *g = fuse_graph_create(NULL);
      fuse_conv2d_attrs a;
      fuse_plan *p1 = NULL, *p2 = NULL;
      fuse_value vx, vr, y;
      const float *in[2];
      float *out[1];
      unsigned seed = 99u + (unsigned)si;
      for (i = 0; i < nx; i++) x[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;
      for (i = 0; i < nw; i++) w[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;
      for (i = 0; i < (size_t)K; i++) b[i] = (float)i * 0.01f - 0.5f;
      for (i = 0; i < ny; i++) res[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;
      xs[0] = N, xs[1] = C, xs[2] = H, xs[3] = W;
      ws[0] = K, ws[1] = C / G, ws[2] = 3, ws[3] = 3;
      bs[0] = 1, bs[1] = K, bs[2] = 1, bs[3] = 1;
      ys[0] = N, ys[1] = K, ys[2] = H, ys[3] = W;
      memset(&a, 0, sizeof a);
      a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
      a.groups = G;
      vx = fuse_input(g, "x", 4, xs);
      vr = fuse_input(g, "r", 4, ys);
      y = fuse_conv2d(g, vx, fuse_constant(g, "w", 4, ws, w), &a);
      y = fuse_relu(g, fuse_add(g, fuse_add(g, y, fuse_constant(g, "b", 4, bs, b)), vr));
      fuse_output(g, y);
      optimize_and_compile_pair(g, threads, &p1, &p2);
      if (p1 && p2) {
        int before = job_calls;
        in[0] = x, in[1] = res;
        out[0] = y1;
        CHECK_EQ_INT(fuse_run(p1, in, out, NULL), FUSE_OK);
        out[0] = y2;
        CHECK_EQ_INT(fuse_run(p2, in, out, NULL), FUSE_OK);
        CHECK(memcmp(y1, y2, ny * 4) == 0);
        if (fuse_cpu_isa() >= FUSE_ISA_AVX2) CHECK(job_calls > before); /* the GEMM path split */
      }
      fuse_plan_destroy(p1);
      fuse_plan_destroy(p2);
      fuse_graph_destroy(g);
      free(x), free(w), free(b), free(res), free(y1), free(y2);
    }
  direct_only = 0;
}

/* ------------------------------------------------------------ kernel table -- */
/* Every row of the kernel table (fuse__igemm_kinds, fuse__few_channels_kinds and the NCHW
   packers), on every ISA the CPU has and always the scalar twins, called directly on random
   problems and held against a double-precision loop of the same sums (the reference kernels'
   arithmetic; the error relative to the largest sum of magnitudes, as sums cancel): full and
   partial tiles (rows < MR, columns < NR across every vector), taps in the padding (row
   pointers to a zero row), a reduction split into runs of taps and into
   channel blocks (a later call accumulating in the output), weights ldw apart (the NCHW
   GEMM reading its input in place), per-column and per-row bias, and each post-op kind in
   either order (a residual ADD, a CLAMP). Nothing outside the tile's valid part is written.
   The graph-level tests above run the same kernels through fuse_compile against the
   reference kernels (reference_kernels = 1). */
#define TILE_ACCUMULATE 1 /* the micro-kernel flags (FUSE__ACCUMULATE, FUSE__FINISH) */
#define TILE_FINISH 2
#define TILE_SENTINEL 1234.5f

/* The error of a tile against its expected values, relative to the largest sum of magnitudes
   of its terms (scale: sums can cancel); the elements outside the tile (TILE_SENTINEL in
   want) must be untouched. Returns 0 when one was written. */
static int tile_check(const float *y, const float *want, const double *scale, size_t n,
                      double *err) {
  double max_diff = 0, max_scale = 1e-30;
  size_t i;
  for (i = 0; i < n; i++) {
    if (want[i] == TILE_SENTINEL) {
      if (y[i] != TILE_SENTINEL) return 0;
      continue;
    }
    if (!(fabs((double)y[i] - want[i]) <= max_diff)) max_diff = fabs((double)y[i] - want[i]);
    if (scale[i] > max_scale) max_scale = scale[i];
  }
  *err = max_diff / max_scale;
  return 1;
}

/* y = the tile's expected result, in double: sum over taps and channels, then bias and the
   post-ops in order. */
static void tile_expect(const float *const *a, int ntaps, int L, const float *w, int64_t ldw,
                        const float *bias, const float *row_bias, const fuse_post_op *post,
                        int num_post, const float *res, int ldy, int rows, int cols, float *y,
                        double *scale) {
  int r, j, t, k, q;
  for (r = 0; r < rows; r++)
    for (j = 0; j < cols; j++) {
      double s = 0, m = 0;
      for (t = 0; t < ntaps; t++)
        for (k = 0; k < L; k++) {
          double v = (double)a[t * 64 + r][k] * w[(t * L + k) * ldw + j];
          s += v, m += fabs(v);
        }
      if (bias) s += bias[j], m += fabs(bias[j]);
      if (row_bias) s += row_bias[r], m += fabs(row_bias[r]);
      for (q = 0; q < num_post; q++)
        if (post[q].kind == FUSE_POST_ADD) s += res[r * ldy + j], m += fabs(res[r * ldy + j]);
        else s = s < post[q].lo ? post[q].lo : s > post[q].hi ? post[q].hi : s;
      y[r * ldy + j] = (float)s;
      scale[r * ldy + j] = m;
    }
}

/* One random problem on the indirect-GEMM kind `kind`; `mode` picks the call pattern: 0 one
   call, 1 runs of taps, 2 channel blocks (one tap a call, channel offset aoff). */
static void table_igemm_case(int kind, int mode, uint32_t seed) {
  const fuse__igemm_kind *kk = &fuse__igemm_kinds[kind];
  int MR = kk->mr, NR = kk->nr, ntaps = mode == 2 ? rnd_in(1, 3) : rnd_in(1, 4);
  int L = rnd_in(1, 40), rows = rnd(3) ? MR : rnd_in(1, MR), cols = rnd(3) ? NR : rnd_in(1, NR);
  int ldy = NR + rnd_in(0, 9), t, i, q, num_post = rnd(4), bias_kind = rnd(3);
  int64_t ldw = rnd(4) ? NR : NR + rnd_in(1, 20);
  float *x = falloc((size_t)ntaps * 64 * L), *zeros = falloc((size_t)L);
  float *w = falloc((size_t)(ntaps * L) * (size_t)ldw), *bias = falloc((size_t)NR);
  float *res = falloc((size_t)MR * ldy), *y = falloc((size_t)MR * ldy), *want = falloc((size_t)MR * ldy);
  double *scale = (double *)calloc((size_t)MR * ldy, sizeof(double)), err = 0;
  const float *ptr[4 * 64], *expect_ptr[4 * 64];
  fuse_post_op post[3];
  fuse__tile_epi e;
  fill(x, (size_t)ntaps * 64 * L, seed, -1, 1);
  fill(w, (size_t)(ntaps * L) * (size_t)ldw, seed + 1, -0.5f, 0.5f);
  fill(bias, (size_t)NR, seed + 2, -0.5f, 0.5f);
  fill(res, (size_t)MR * ldy, seed + 3, -1, 1);
  memset(zeros, 0, (size_t)L * sizeof(float));
  for (t = 0; t < ntaps; t++) /* a tap reads the padding for some pixels, or for all */
    for (i = 0; i < MR; i++) {
      int dead = rnd(5) == 0 || (t == ntaps - 1 && ntaps > 1 && rnd(4) == 0);
      ptr[t * MR + i] = dead ? zeros : x + ((size_t)t * 64 + (size_t)i) * L;
      expect_ptr[t * 64 + i] = ptr[t * MR + i];
    }
  memset(post, 0, sizeof post);
  for (q = 0; q < num_post; q++) {
    post[q].kind = rnd(2) ? FUSE_POST_ADD : FUSE_POST_CLAMP;
    post[q].lo = rnd(2) ? 0.0f : -0.3f;
    post[q].hi = rnd(2) ? INF : 0.6f;
    post[q].operand = -1;
  }
  memset(&e, 0, sizeof e);
  e.bias = bias_kind == 1 ? bias : NULL;
  e.row_bias = bias_kind == 2 ? bias : NULL; /* MR <= NR floats */
  e.post = post, e.num_post = num_post;
  e.split = fuse__post_split(post, num_post); /* as the drivers set it */
  for (q = 0; q < num_post; q++) e.res[q] = post[q].kind == FUSE_POST_ADD ? res : NULL;
  e.ldw = ldw == NR ? 0 : ldw;
  if (MR > NR) e.row_bias = NULL; /* the bias buffer holds NR floats */
  for (i = 0; i < MR * ldy; i++) y[i] = want[i] = TILE_SENTINEL;
  tile_expect(expect_ptr, ntaps, L, w, ldw, e.bias, e.row_bias, post, num_post, res, ldy, rows,
              cols, want, scale);
  if (mode == 0) {
    kk->fn(ntaps, L, ptr, 0, w, y, ldy, rows, cols, TILE_FINISH, &e);
  } else if (mode == 1) { /* taps [0, t1), then [t1, ntaps) accumulating */
    int t1 = rnd_in(0, ntaps);
    kk->fn(t1, L, ptr, 0, w, y, ldy, rows, cols, 0, &e);
    kk->fn(ntaps - t1, L, ptr + t1 * MR, 0, w + (size_t)t1 * L * ldw, y, ldy, rows, cols,
           TILE_ACCUMULATE | TILE_FINISH, &e);
  } else { /* tap by tap in channel blocks of cb */
    int cb = rnd_in(1, L), c0;
    for (t = 0; t < ntaps; t++)
      for (c0 = 0; c0 < L; c0 += cb) {
        int n = L - c0 < cb ? L - c0 : cb, last = t == ntaps - 1 && c0 + n >= L;
        kk->fn(1, n, ptr + t * MR, c0, w + ((size_t)t * L + (size_t)c0) * ldw, y, ldy, rows,
               cols, (t || c0 ? TILE_ACCUMULATE : 0) | (last ? TILE_FINISH : 0), &e);
      }
  }
  if (!tile_check(y, want, scale, (size_t)MR * ldy, &err) || !(err <= TOL)) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: %s %dx%d mode %d: taps %d L %d rows %d cols %d ldy %d ldw %d "
            "bias %d posts %d: error %.3g (or a write outside the tile)\n", runner_current,
            isa_name(kk->isa), MR, NR, mode, ntaps, L, rows, cols, ldy, (int)ldw, bias_kind,
            num_post, err);
  }
  free(x), free(zeros), free(w), free(bias), free(res), free(y), free(want), free(scale);
}

/* One random problem on the column-block walker of kind `kind` (fuse__igemm_kind.blocks):
   nb full blocks of NR columns in one call, their packed panels wblock floats apart, each
   block against its own expected tile (its bias, residuals and output NR columns on); the
   taps in one call, or split in two with the second accumulating (a stem's runs of taps). */
static void table_igemm_blocks_case(int kind, uint32_t seed) {
  const fuse__igemm_kind *kk = &fuse__igemm_kinds[kind];
  int MR = kk->mr, NR = kk->nr, nb = rnd_in(2, 4), ntaps = rnd_in(1, 3), L = rnd_in(1, 40);
  int rows = rnd(3) ? MR : rnd_in(1, MR), ldy = nb * NR + rnd_in(0, 9), split = rnd(2);
  int num_post = rnd(3), has_bias = rnd(2), t, i, q, b;
  int64_t panel = (int64_t)ntaps * L * NR, wblock = panel + 16 * rnd_in(0, 2);
  float *x = falloc((size_t)ntaps * 64 * L), *w = falloc((size_t)(nb * wblock));
  float *bias = falloc((size_t)(nb * NR)), *res = falloc((size_t)MR * ldy);
  float *y = falloc((size_t)MR * ldy), *want = falloc((size_t)MR * ldy);
  double *scale = (double *)calloc((size_t)MR * ldy, sizeof(double)), err = 0;
  const float *ptr[3 * 64], *expect_ptr[3 * 64];
  fuse_post_op post[2];
  fuse__tile_epi e;
  fill(x, (size_t)ntaps * 64 * L, seed, -1, 1);
  fill(w, (size_t)(nb * wblock), seed + 1, -0.5f, 0.5f);
  fill(bias, (size_t)(nb * NR), seed + 2, -0.5f, 0.5f);
  fill(res, (size_t)MR * ldy, seed + 3, -1, 1);
  for (t = 0; t < ntaps; t++)
    for (i = 0; i < MR; i++)
      ptr[t * MR + i] = expect_ptr[t * 64 + i] = x + ((size_t)t * 64 + (size_t)i) * L;
  memset(post, 0, sizeof post);
  for (q = 0; q < num_post; q++) {
    post[q].kind = rnd(2) ? FUSE_POST_ADD : FUSE_POST_CLAMP;
    post[q].lo = rnd(2) ? 0.0f : -0.3f, post[q].hi = rnd(2) ? INF : 0.6f, post[q].operand = -1;
  }
  memset(&e, 0, sizeof e);
  e.bias = has_bias ? bias : NULL;
  e.post = post, e.num_post = num_post;
  e.split = fuse__post_split(post, num_post);
  for (q = 0; q < num_post; q++) e.res[q] = post[q].kind == FUSE_POST_ADD ? res : NULL;
  e.blocks = nb, e.wblock = wblock;
  for (i = 0; i < MR * ldy; i++) y[i] = want[i] = TILE_SENTINEL;
  for (b = 0; b < nb; b++)
    tile_expect(expect_ptr, ntaps, L, w + b * wblock, NR, has_bias ? bias + b * NR : NULL, NULL,
                post, num_post, res + b * NR, ldy, rows, NR, want + b * NR, scale + b * NR);
  if (split && ntaps > 1) {
    kk->blocks(1, L, ptr, 0, w, y, ldy, rows, NR, 0, &e);
    kk->blocks(ntaps - 1, L, ptr + MR, 0, w + (size_t)L * NR, y, ldy, rows, NR,
               TILE_ACCUMULATE | TILE_FINISH, &e);
  } else {
    kk->blocks(ntaps, L, ptr, 0, w, y, ldy, rows, NR, TILE_FINISH, &e);
  }
  if (!tile_check(y, want, scale, (size_t)MR * ldy, &err) || !(err <= TOL)) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: %s %dx%d blocks %d: taps %d L %d rows %d ldy %d bias %d posts %d: "
            "error %.3g (or a write outside the tiles)\n", runner_current, isa_name(kk->isa), MR,
            NR, nb, ntaps, L, rows, ldy, has_bias, num_post, err);
  }
  free(x), free(w), free(bias), free(res), free(y), free(want), free(scale);
}

/* One random problem on the few-channel kind `kind`: nseg segments of len[g] steps whose
   input moves a float a step from x + off[g]. */
static void table_few_channels_case(int kind, uint32_t seed) {
  const fuse__few_channels_kind *kk = &fuse__few_channels_kinds[kind];
  int MR = kk->mr, NR = kk->nr, nseg = rnd_in(1, 6), rows = rnd(2) ? MR : rnd_in(1, MR);
  int cols = rnd(2) ? NR : rnd_in(1, NR), ldy = NR + rnd_in(0, 7), len[6], g, k, r, j, q;
  int steps = 0, s, num_post = rnd(3);
  int64_t off[6];
  size_t nx = 6 * 64 + 80;
  float *x = falloc(nx), *wk, *rb = falloc((size_t)MR), *res = falloc((size_t)MR * ldy);
  float *y = falloc((size_t)MR * ldy), *want = falloc((size_t)MR * ldy);
  double *scale = (double *)calloc((size_t)MR * ldy, sizeof(double)), err = 0;
  fuse_post_op post[2];
  fuse__tile_epi e;
  for (g = 0; g < nseg; g++) len[g] = rnd_in(1, 7), off[g] = rnd_in(0, 300), steps += len[g];
  wk = falloc((size_t)steps * MR);
  fill(x, nx, seed, -1, 1);
  fill(wk, (size_t)steps * MR, seed + 1, -0.5f, 0.5f);
  fill(rb, (size_t)MR, seed + 2, -0.5f, 0.5f);
  fill(res, (size_t)MR * ldy, seed + 3, -1, 1);
  memset(post, 0, sizeof post);
  for (q = 0; q < num_post; q++) {
    post[q].kind = rnd(2) ? FUSE_POST_ADD : FUSE_POST_CLAMP;
    post[q].lo = 0.0f, post[q].hi = rnd(2) ? INF : 0.5f, post[q].operand = -1;
  }
  memset(&e, 0, sizeof e);
  e.row_bias = rnd(2) ? rb : NULL;
  e.post = post, e.num_post = num_post;
  e.split = fuse__post_split(post, num_post); /* as the drivers set it */
  for (q = 0; q < num_post; q++) e.res[q] = post[q].kind == FUSE_POST_ADD ? res : NULL;
  for (k = 0; k < MR * ldy; k++) y[k] = want[k] = TILE_SENTINEL;
  for (r = 0; r < rows; r++)
    for (j = 0; j < cols; j++) {
      double sum = 0, m = 0;
      for (g = 0, s = 0; g < nseg; g++)
        for (k = 0; k < len[g]; k++, s++) {
          double v = (double)x[off[g] + k + j] * wk[s * MR + r];
          sum += v, m += fabs(v);
        }
      if (e.row_bias) sum += rb[r], m += fabs(rb[r]);
      for (q = 0; q < num_post; q++)
        if (post[q].kind == FUSE_POST_ADD) sum += res[r * ldy + j], m += fabs(res[r * ldy + j]);
        else sum = sum < post[q].lo ? post[q].lo : sum > post[q].hi ? post[q].hi : sum;
      want[r * ldy + j] = (float)sum;
      scale[r * ldy + j] = m;
    }
  kk->fn(nseg, off, len, x, wk, y, ldy, rows, cols, &e);
  if (!tile_check(y, want, scale, (size_t)MR * ldy, &err) || !(err <= TOL)) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: few channels %s %dx%d: segments %d rows %d cols %d: error %.3g "
            "(or a write outside the tile)\n", runner_current, isa_name(kk->isa), MR, NR, nseg,
            rows, cols, err);
  }
  free(x), free(wk), free(rb), free(res), free(y), free(want), free(scale);
}

/* One random panel of the NCHW packer of `kind` against the gather it stands for. */
static void table_pack_case(int kind, uint32_t seed) {
  const fuse__igemm_kind *kk = &fuse__igemm_kinds[kind];
  fuse__nchw_pack_args g;
  int64_t OH, P, p0, c, kh, kw, jj, nrows;
  int ncols;
  float *x, *panel, *want;
  memset(&g, 0, sizeof g);
  g.Cg = rnd_in(1, 3), g.H = rnd_in(1, 12), g.W = rnd_in(1, 40);
  g.KH = rnd_in(1, 3), g.KW = rnd_in(1, 3), g.sh = rnd_in(1, 2), g.sw = rnd_in(1, 3);
  g.dh = rnd_in(1, 2), g.dw = rnd_in(1, 2), g.pt = rnd_in(0, 2), g.pl = rnd_in(0, 2);
  g.pointwise = rnd(5) == 0;
  if (g.pointwise) g.KH = g.KW = g.sh = g.sw = g.dh = g.dw = 1, g.pt = g.pl = 0;
  g.nr = kk->nr;
  OH = (g.H + 2 * g.pt - g.dh * (g.KH - 1) - 1) / g.sh + 1;
  g.OW = (g.W + 2 * g.pl - g.dw * (g.KW - 1) - 1) / g.sw + 1;
  if (OH < 1 || g.OW < 1) return;
  P = OH * g.OW;
  p0 = rnd((int)P);
  ncols = (int)(P - p0 < g.nr ? P - p0 : g.nr);
  nrows = g.Cg * g.KH * g.KW;
  x = falloc((size_t)(g.Cg * g.H * g.W));
  panel = falloc((size_t)(nrows * g.nr));
  want = falloc((size_t)(nrows * g.nr));
  fill(x, (size_t)(g.Cg * g.H * g.W), seed, -1, 1);
  g.xg = x;
  for (c = 0; c < g.Cg; c++)
    for (kh = 0; kh < g.KH; kh++)
      for (kw = 0; kw < g.KW; kw++)
        for (jj = 0; jj < g.nr; jj++) {
          int64_t p = p0 + jj, ih = p / g.OW * g.sh - g.pt + kh * g.dh;
          int64_t iw = p % g.OW * g.sw - g.pl + kw * g.dw;
          want[((c * g.KH + kh) * g.KW + kw) * g.nr + jj] =
              jj < ncols && ih >= 0 && ih < g.H && iw >= 0 && iw < g.W
                  ? x[(c * g.H + ih) * g.W + iw] : 0.0f;
        }
  kk->pack(&g, p0, ncols, panel);
  if (memcmp(panel, want, (size_t)(nrows * g.nr) * sizeof(float)) != 0) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: NCHW packer %s (nr %d): Cg %d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d "
            "pointwise %d p0 %d cols %d\n", runner_current, isa_name(kk->isa), (int)g.nr,
            (int)g.Cg, (int)g.H, (int)g.W, (int)g.KH, (int)g.KW, (int)g.sh, (int)g.sw,
            (int)g.dh, (int)g.dw, (int)g.pt, (int)g.pl, g.pointwise, (int)p0, ncols);
  }
  free(x), free(panel), free(want);
}

/* NHWC GEMM convs (two 1x1 convs in a row) whose column blocks differ in width or do not
   divide among the threads: the plan hands each thread whole tiles (tile_outer in
   run/conv_run.c); bit for bit the serial plan's result */
TEST(host_threads_whole_tiles) {
  static const int shapes[3][3] = {{240, 80, 14}, {480, 112, 14}, {24, 144, 9}}; /* C, K, H */
  int si, threads;
  for (si = 0; si < 3; si++)
    for (threads = 2; threads <= 3; threads++) {
      int C = shapes[si][0], K = shapes[si][1], H = shapes[si][2];
      int64_t xs[4] = {1, C, H, H}, w1s[4] = {K, C, 1, 1}, w2s[4] = {C, K, 1, 1}, bs[3] = {K, 1, 1};
      size_t nx = (size_t)C * H * H, i;
      float *x = (float *)malloc(nx * 4), *w1 = (float *)malloc((size_t)K * C * 4);
      float *w2 = (float *)malloc((size_t)K * C * 4), *b = (float *)malloc((size_t)K * 4);
      float *y1 = (float *)malloc(nx * 4), *y2 = (float *)malloc(nx * 4);
      fuse_graph *g = fuse_graph_create(NULL);
      fuse_plan *p1 = NULL, *p2 = NULL;
      fuse_value v;
      const float *in[1];
      float *out[1];
      unsigned seed = 7u + (unsigned)si;
      for (i = 0; i < nx; i++) x[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;
      for (i = 0; i < (size_t)K * C; i++) {
        w1[i] = ((float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f) * 0.1f;
        w2[i] = ((float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f) * 0.1f;
      }
      for (i = 0; i < (size_t)K; i++) b[i] = (float)i * 0.01f - 0.5f;
      v = fuse_input(g, "x", 4, xs);
      v = fuse_conv2d(g, v, fuse_constant(g, "w1", 4, w1s, w1), NULL);
      v = fuse_add(g, v, fuse_constant(g, "b", 3, bs, b));
      v = fuse_mul(g, v, fuse_sigmoid(g, v));
      v = fuse_conv2d(g, v, fuse_constant(g, "w2", 4, w2s, w2), NULL);
      fuse_output(g, v);
      optimize_and_compile_pair(g, threads, &p1, &p2);
      if (p1 && p2) {
        in[0] = x;
        out[0] = y1;
        CHECK_EQ_INT(fuse_run(p1, in, out, NULL), FUSE_OK);
        out[0] = y2;
        CHECK_EQ_INT(fuse_run(p2, in, out, NULL), FUSE_OK);
        CHECK(memcmp(y1, y2, nx * 4) == 0);
      }
      fuse_plan_destroy(p1);
      fuse_plan_destroy(p2);
      fuse_graph_destroy(g);
      free(x), free(w1), free(w2), free(b), free(y1), free(y2);
    }
}

/* g compiled for isa (REFERENCE: the reference kernels), serial or on `threads` host threads
   of the job system; NULL (counted as a failure) when it does not compile. */
static fuse_plan *plan_for(fuse_graph *g, int isa, int threads) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  memset(&o, 0, sizeof o);
  set_isa(&o, isa);
  if (threads > 1) o.parallel_for = job_parallel_for, o.num_threads = threads;
  CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
  return p;
}

/* Few input channels on the NHWC indirect GEMM (a tap per kernel row, the stems inside a
   network): several column blocks per tile (one set of row pointers for all of them), tiles
   inside one output row read in place and tiles crossing rows and the padding; every ISA
   against the reference and the double oracle, and on 3 host threads bit for bit as serial. */
TEST(row_taps_column_blocks) {
  static const int cfg[6][8] = {/* C, K, KH, KW, stride, pad, H, W */
                                {3, 64, 7, 7, 2, 3, 37, 41}, {3, 40, 3, 3, 2, 1, 29, 33},
                                {1, 70, 5, 5, 1, 2, 17, 23}, {4, 20, 3, 3, 1, 1, 19, 27},
                                {8, 36, 3, 5, 2, 0, 21, 25}, {3, 17, 7, 7, 2, 3, 15, 15}};
  int i, isa;
  for (i = 0; i < 6; i++) {
    ccase c = plain_case(i & 1 ? 2 : 1, cfg[i][0], cfg[i][1], cfg[i][6], cfg[i][7], cfg[i][2],
                         cfg[i][3], 1);
    cdata d;
    fuse_graph *g;
    c.a.strides[0] = c.a.strides[1] = cfg[i][4];
    c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = cfg[i][5];
    if (i == 4) c.a.dilation[0] = 2; /* rows apart, a kernel row still contiguous */
    c.staged = 1;
    c.bias = BIAS_RESHAPE, c.residual = i & 1 ? RES_AFTER : RES_NONE;
    c.clamp = i & 2 ? CL_RELU6_MIN : CL_RELU;
    expect_gemm(run_simple(&c, 300u + (uint32_t)i), &c);
    data_alloc(&c, &d);
    g = case_graph(&c, &d);
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    for (isa = FUSE_ISA_SCALAR; isa <= LAST_ISA; isa++) {
      fuse_plan *p1, *p3;
      float *y1, *y3;
      const float *in[2];
      float *out[1];
      if (!isa_have[isa]) continue;
      p1 = plan_for(g, isa, 1), p3 = plan_for(g, isa, 3);
      y1 = falloc(d.ny), y3 = falloc(d.ny);
      memset(y1, 0xff, d.ny * sizeof(float)), memset(y3, 0xff, d.ny * sizeof(float));
      in[0] = d.x, in[1] = d.r;
      if (p1 && p3) {
        out[0] = y1;
        CHECK_EQ_INT(fuse_run(p1, in, out, NULL), FUSE_OK);
        out[0] = y3;
        CHECK_EQ_INT(fuse_run(p3, in, out, NULL), FUSE_OK);
        CHECK(memcmp(y1, y3, d.ny * sizeof(float)) == 0);
      }
      fuse_plan_destroy(p1), fuse_plan_destroy(p3);
      free(y1), free(y3);
    }
    fuse_graph_destroy(g);
    data_free(&d);
  }
}

/* matmul of two run-time operands (attention's q k^T): no packed weights, the row kernels'
   fuse__matmul_rows on every ISA, serial and on 3 host threads, against the reference kernels;
   batches broadcast both ways, rank-1 operands, rows and columns around the 4-row and
   2-vector tiles, and a bias + clip epilogue fused by fuse_optimize. */
static void runtime_matmul_case(int ra, const int64_t *as, int rb, const int64_t *bs, int epi,
                                uint32_t seed) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value y;
  size_t na = 1, nb = 1, ny;
  float *a, *b, *want = NULL, *got = NULL, bias[128];
  int k, isa, threads;
  int64_t N = rb == 1 ? 1 : bs[rb - 1], bsh[1];
  for (k = 0; k < ra; k++) na *= (size_t)as[k];
  for (k = 0; k < rb; k++) nb *= (size_t)bs[k];
  a = falloc(na), b = falloc(nb);
  fill(a, na, seed, -1, 1);
  fill(b, nb, seed + 1, -1, 1);
  fill(bias, 128, seed + 2, -0.5f, 0.5f);
  y = fuse_input(g, "a", ra, as); /* input 0, then input 1 (not in one call: its argument */
  y = fuse_matmul(g, y, fuse_input(g, "b", rb, bs)); /* order is the compiler's) */
  if (epi) {
    bsh[0] = N;
    y = fuse_clip(g, fuse_add(g, y, fuse_constant(g, "bias", 1, bsh, bias)), -2.0f, 2.5f);
  }
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  if (epi) CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  ny = 1;
  for (k = 0; k < fuse_value_rank(g, y); k++) ny *= (size_t)fuse_value_shape(g, y)[k];
  want = falloc(ny), got = falloc(ny);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++)
    for (threads = 1; threads <= 3; threads += 2) {
      fuse_plan *p;
      const float *in[2];
      float *out[1];
      if (!isa_have[isa] || (isa == REFERENCE && threads > 1)) continue;
      if (!(p = plan_for(g, isa, threads))) continue;
      in[0] = a, in[1] = b;
      out[0] = isa == REFERENCE ? want : got;
      memset(got, 0xff, ny * sizeof(float)); /* NaN: every element must be written */
      CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
      fuse_plan_destroy(p);
      if (isa != REFERENCE) {
        double err;
        long bad;
        int same = compare(got, want, ny, &err, &bad);
        n_compared[isa]++;
        if (err > worst_err[isa]) worst_err[isa] = err;
        if (!same || !(err <= TOL)) {
          runner_test_failed = 1;
          fprintf(stderr, "  FAIL %s: run-time matmul (ranks %d, %d; M=%lld K=%lld N=%lld) on %s, "
                  "%d threads: error %.3g\n", runner_current, ra, rb,
                  (long long)(ra == 1 ? 1 : as[ra - 2]), (long long)as[ra - 1], (long long)N,
                  isa_name((fuse_isa)isa), threads, err);
          if (bad >= 0) fprintf(stderr, "    first bad %ld: %g, want %g\n", bad, got[bad], want[bad]);
        }
      }
    }
  fuse_graph_destroy(g);
  free(a), free(b), free(want), free(got);
}

TEST(runtime_matmul) {
  static const int Ms[] = {1, 3, 4, 5, 49, 70, 130}, Ns[] = {1, 7, 16, 31, 32, 33, 49, 100};
  static const int Ks[] = {1, 7, 32, 49};
  int mi, ni, ki;
  uint32_t seed = 61000u;
  for (mi = 0; mi < 7; mi++)
    for (ni = 0; ni < 8; ni++)
      for (ki = 0; ki < 4; ki++, seed += 10) {
        int64_t as[4] = {2, 1, Ms[mi], Ks[ki]}, bs[3] = {3, Ks[ki], Ns[ni]};
        if ((mi + ni + ki) % 3 == 0) { /* batches broadcast: [2, 1, M, K] x [3, K, N] */
          runtime_matmul_case(4, as, 3, bs, (mi + ki) % 2, seed);
        } else { /* plain 2-D */
          runtime_matmul_case(2, as + 2, 2, bs + 1, (ni + ki) % 2, seed);
        }
      }
  { /* rank-1 operands: [K] x [K, N] and [M, K] x [K] */
    int64_t v[1] = {33}, m[2] = {33, 20}, m2[2] = {9, 33};
    runtime_matmul_case(1, v, 2, m, 0, 62000u);
    runtime_matmul_case(2, m2, 1, v, 0, 62010u);
  }
}

/* The Transpose op's plans on every ISA, serial and on 3 host threads, bit for bit against the
   reference kernels: permutations that merge to runs copied whole (a channel shuffle), to 2-D
   transposes (NCHW <-> NHWC, a matrix of more than 256 x 256 floats: several blocks), size-1
   dims anywhere, and random shapes and permutations of rank 1 to 6. */
static void transpose_case(int rank, const int64_t *shape, const int *perm) {
  fuse_graph *g = fuse_graph_create(NULL);
  size_t n = 1, i;
  float *x, *want, *got;
  int isa, threads, k;
  char what[160];
  for (k = 0; k < rank; k++) n *= (size_t)shape[k];
  x = falloc(n), want = falloc(n), got = falloc(n);
  for (i = 0; i < n; i++) x[i] = (float)i * 0.5f - 7.0f; /* every element its own value */
  fuse_output(g, fuse_transpose(g, fuse_input(g, "x", rank, shape), perm));
  for (k = 0, what[0] = 0; k < rank; k++)
    snprintf(what + strlen(what), sizeof what - strlen(what), "%s%lld/%d", k ? " " : "",
             (long long)shape[k], perm[k]);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++)
    for (threads = 1; threads <= 3; threads += 2) {
      fuse_plan *p;
      const float *in[1];
      float *out[1];
      if (!isa_have[isa] || (isa == REFERENCE && threads > 1)) continue;
      if (!(p = plan_for(g, isa, threads))) continue;
      in[0] = x;
      out[0] = isa == REFERENCE ? want : got;
      memset(got, 0, n * sizeof(float));
      CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
      if (isa != REFERENCE && memcmp(got, want, n * sizeof(float)) != 0) {
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: transpose (dim/perm) %s on %s, %d threads\n", runner_current,
                what, isa_name((fuse_isa)isa), threads);
      }
      fuse_plan_destroy(p);
    }
  fuse_graph_destroy(g);
  free(x), free(want), free(got);
}

TEST(transpose_plans) {
  static const int64_t s0[5] = {1, 2, 58, 28, 28}, s1[4] = {1, 96, 56, 56}, s2[4] = {1, 56, 56, 96};
  static const int64_t s3[2] = {300, 520}, s4[4] = {2, 3, 1, 5}, s5[1] = {7}, s6[3] = {3, 260, 270};
  static const int p0[5] = {0, 2, 1, 3, 4}, p1[4] = {0, 2, 3, 1}, p2[4] = {0, 3, 1, 2};
  static const int p3[2] = {1, 0}, p4[4] = {3, 2, 1, 0}, p5[1] = {0}, p6[3] = {2, 0, 1};
  static const int64_t s7[4] = {2, 3, 17, 19}, s8[4] = {1, 3, 224, 224}; /* RGB to NHWC */
  int t;
  transpose_case(4, s7, p1);
  transpose_case(4, s8, p1);
  transpose_case(5, s0, p0);
  transpose_case(4, s1, p1);
  transpose_case(4, s2, p2);
  transpose_case(2, s3, p3);
  transpose_case(4, s4, p4);
  transpose_case(1, s5, p5);
  transpose_case(3, s6, p6);
  shape_rng = 0x7a5u;
  for (t = 0; t < 80; t++) {
    int64_t shape[6];
    int perm[6], rank = rnd_in(1, 6), k;
    size_t n = 1;
    for (k = 0; k < rank; k++) {
      shape[k] = rnd(4) == 0 ? 1 : rnd_in(2, rnd(5) == 0 ? 40 : 9);
      n *= (size_t)shape[k];
      perm[k] = k;
    }
    if (n > 200000) continue;
    for (k = rank - 1; k > 0; k--) { /* a random permutation */
      int o = rnd(k + 1), tmp = perm[k];
      perm[k] = perm[o], perm[o] = tmp;
    }
    transpose_case(rank, shape, perm);
  }
}

TEST(kernel_table) {
  int i, n, rows = 0, ran = 0;
  for (i = 0; fuse__igemm_kinds[i].fn; i++, rows++) {
    if (!isa_have[fuse__igemm_kinds[i].isa]) continue;
    for (n = 0; n < 60; n++) table_igemm_case(i, n % 3, 20000u + (uint32_t)(i * 100 + n));
    if (fuse__igemm_kinds[i].pack)
      for (n = 0; n < 60; n++) table_pack_case(i, 30000u + (uint32_t)(i * 100 + n));
    if (fuse__igemm_kinds[i].blocks)
      for (n = 0; n < 40; n++) table_igemm_blocks_case(i, 50000u + (uint32_t)(i * 100 + n));
    ran++;
  }
  for (i = 0; fuse__few_channels_kinds[i].fn; i++, rows++) {
    if (!isa_have[fuse__few_channels_kinds[i].isa]) continue;
    for (n = 0; n < 40; n++) table_few_channels_case(i, 40000u + (uint32_t)(i * 100 + n));
    ran++;
  }
  printf("kernel_table: %d of %d micro-kernels run (the others' ISA is missing here)\n", ran, rows);
  CHECK(ran >= 5); /* the scalar twins at least */
}

/* On ARM with NEON compiled in (aarch64; armv7 with -mfpu=neon-vfpv4), fuse_cpu_isa reports it
   and a plan compiled with the defaults runs the NEON micro-kernels: its listing names them
   ("[neon igemm 8x8]", "[neon nchw gemm 8x8]"); FUSE_ISA_SCALAR still gives the scalar twins. */
TEST(neon_taken) {
#ifdef TEST_NEON
  static const fuse_isa isas[2] = {FUSE_ISA_AUTO, FUSE_ISA_SCALAR};
  int k;
  CHECK_EQ_INT(fuse_cpu_isa(), FUSE_ISA_NEON);
  for (k = 0; k < 2; k++) {
    ccase c = plain_case(1, 16, 32, 12, 12, 3, 3, 1);
    cdata d;
    fuse_graph *g;
    fuse_plan *p = NULL;
    fuse_compile_options opt;
    sbuf b;
    c.staged = 1;
    c.bias = BIAS_1K11, c.clamp = CL_RELU;
    data_alloc(&c, &d);
    g = case_graph(&c, &d);
    memset(&opt, 0, sizeof opt);
    opt.isa = isas[k];
    b.len = 0;
    b.s[0] = 0;
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
    if (p) {
      CHECK_EQ_INT(p->isa, k ? FUSE_ISA_SCALAR : FUSE_ISA_NEON);
      fuse_plan_write(p, sbuf_write, &b);
      CHECK_STR_CONTAINS(b.s, k ? "[scalar igemm 4x4]" : "[neon igemm ");
      printf("neon_taken: %s plan:\n%s", k ? "scalar" : "default", b.s);
    }
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
    data_free(&d);
  }
#else
  printf("neon_taken: not an ARM build with NEON: nothing to check\n");
#endif
}

/* --------------------------------------------------------- Winograd matrices -- */
/* AT ((G g) . (BT d)) is the correlation of d with g, in double, for F(2,3), F(4,3), F(6,3)
   (winograd.c's tables; test_winograd.c runs the layers). */

static double dot_row(const float *row, const double *v, int n) {
  double s = 0;
  int i;
  for (i = 0; i < n; i++) s += (double)row[i] * v[i];
  return s;
}

static void check_matrices(int m, const float *bt, const float *at, const double *g) {
  int alpha = m + 2, trial, i, j, k;
  for (trial = 0; trial < 20; trial++) {
    double d[8], w[3], gg[8], bd[8], y, want, worst = 0;
    for (i = 0; i < alpha; i++) d[i] = 2 * rnd_unit() - 1;
    for (k = 0; k < 3; k++) w[k] = 2 * rnd_unit() - 1;
    for (j = 0; j < alpha; j++) {
      gg[j] = g[j * 3] * w[0] + g[j * 3 + 1] * w[1] + g[j * 3 + 2] * w[2];
      bd[j] = dot_row(bt + j * alpha, d, alpha);
    }
    for (i = 0; i < m; i++) {
      double prod[8];
      for (j = 0; j < alpha; j++) prod[j] = gg[j] * bd[j];
      y = dot_row(at + i * alpha, prod, alpha);
      want = w[0] * d[i] + w[1] * d[i + 1] + w[2] * d[i + 2];
      if (fabs(y - want) > worst) worst = fabs(y - want);
    }
    CHECK(worst < 1e-12);
  }
}

TEST(transform_matrices_compute_the_correlation) {
  check_matrices(2, &fuse__wino_bt2[0][0], &fuse__wino_at2[0][0], &fuse__wino_g2[0][0]);
  check_matrices(4, &fuse__wino_bt4[0][0], &fuse__wino_at4[0][0], &fuse__wino_g4[0][0]);
  check_matrices(6, &fuse__wino_bt6[0][0], &fuse__wino_at6[0][0], &fuse__wino_g6[0][0]);
}

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
