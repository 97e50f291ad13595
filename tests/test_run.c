/* test_run.c - compile and run semantics of the reference runtime.

   Every op is run on awkward shapes and compared with a small scalar oracle written here
   (plain loops, double accumulation). Tolerance: CHECK_NEAR_ARRAY at 1e-5, the runner's
   normwise relative error max|got - want| / max|want|. The op tests run once per ISA the
   CPU supports (scalar, AVX2, AVX-512). Then: input / output order and aliasing, plans that
   outlive their graph, the memory plan, caller workspaces, bad arguments, concurrent runs,
   allocation accounting (no allocation in fuse_run, allocator failure at every call) and
   determinism.

   Build: cc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I. tests/test_run.c \
              -o build/test_run -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The default allocator is routed through counters, so a test can see whether the library
   allocates through FUSE_MALLOC when it should not (in fuse_run, or when a graph has its own
   allocator). */
static pthread_mutex_t test_default_lock = PTHREAD_MUTEX_INITIALIZER;
static long test_default_mallocs, test_default_frees;
static void *test_default_malloc(size_t n) {
  pthread_mutex_lock(&test_default_lock);
  test_default_mallocs++;
  pthread_mutex_unlock(&test_default_lock);
  return malloc(n);
}
static void test_default_free(void *p) {
  if (p) {
    pthread_mutex_lock(&test_default_lock);
    test_default_frees++;
    pthread_mutex_unlock(&test_default_lock);
  }
  free(p);
}
#define FUSE_MALLOC(n) test_default_malloc(n)
#define FUSE_FREE(p) test_default_free(p)

#define FUSE_IMPLEMENTATION
#include "../fuse.h"
#include "runner.h"

#define TOL 1e-5

/* ------------------------------------------------------------------ helpers -- */

static fuse_compile_options g_opt; /* options every op test compiles with */

static uint32_t rng_state = 12345u;
static float frand(void) { /* uniform in [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) / 8388608.0 - 1.0);
}
static void fill(float *p, size_t n, uint32_t seed) {
  size_t i;
  rng_state = seed * 2654435761u + 1u;
  for (i = 0; i < n; i++) p[i] = frand();
}
static size_t numel(int rank, const int64_t *s) {
  size_t n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= (size_t)s[i];
  return n;
}
static float *falloc(size_t n) { /* NaN-filled, so an unwritten output shows */
  float *p = (float *)malloc((n ? n : 1) * sizeof(float));
  size_t i;
  for (i = 0; i < n; i++) p[i] = NAN;
  return p;
}
static float *frandom(size_t n, uint32_t seed) {
  float *p = falloc(n);
  fill(p, n, seed);
  return p;
}
static int shape_is(const fuse_graph *g, fuse_value v, int rank, const int64_t *s) {
  const int64_t *got = fuse_value_shape(g, v);
  int i;
  if (fuse_value_rank(g, v) != rank || (rank > 0 && !got)) {
    fprintf(stderr, "    value %d: rank %d, expected %d\n", (int)v, fuse_value_rank(g, v), rank);
    return 0;
  }
  for (i = 0; i < rank; i++)
    if (got[i] != s[i]) {
      fprintf(stderr, "    value %d: dim %d is %lld, expected %lld\n", (int)v, i,
              (long long)got[i], (long long)s[i]);
      return 0;
    }
  return 1;
}
static int all_finite(const float *p, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!isfinite(p[i])) return 0;
  return 1;
}

/* Compiles g with g_opt, runs once with the plan's own workspace. 1 = success. */
static int run_graph(fuse_graph *g, const float *const *in, float *const *out) {
  fuse_plan *p = NULL;
  fuse_result r;
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "    graph error: %s\n", fuse_graph_error(g));
    return 0;
  }
  r = fuse_compile(g, &g_opt, &p);
  if (r != FUSE_OK) {
    fprintf(stderr, "    fuse_compile: %s\n", fuse_result_string(r));
    return 0;
  }
  r = fuse_run(p, in, out, NULL);
  fuse_plan_destroy(p);
  if (r != FUSE_OK) {
    fprintf(stderr, "    fuse_run: %s\n", fuse_result_string(r));
    return 0;
  }
  return 1;
}

/* Row-major offset of the broadcast operand (rank r, shape s, right-aligned) at out index. */
static size_t bcast_offset(const int64_t *idx, int ro, int r, const int64_t *s) {
  size_t off = 0;
  int d;
  for (d = 0; d < r; d++) {
    int64_t i = s[d] == 1 ? 0 : idx[ro - r + d];
    off = off * (size_t)s[d] + (size_t)i;
  }
  return off;
}
static void unravel(size_t flat, int rank, const int64_t *s, int64_t *idx) {
  int d;
  for (d = rank - 1; d >= 0; d--) {
    idx[d] = (int64_t)(flat % (size_t)s[d]);
    flat /= (size_t)s[d];
  }
}
static int bcast_shape(int ra, const int64_t *sa, int rb, const int64_t *sb, int64_t *so) {
  int ro = ra > rb ? ra : rb, d;
  for (d = 0; d < ro; d++) {
    int64_t a = d - (ro - ra) >= 0 ? sa[d - (ro - ra)] : 1;
    int64_t b = d - (ro - rb) >= 0 ? sb[d - (ro - rb)] : 1;
    so[d] = a == 1 ? b : a;
  }
  return ro;
}

/* ------------------------------------------------------------------ oracles -- */

enum { OP_ADD, OP_SUB, OP_MUL, OP_MAX, OP_MIN };
static const char *binop_name[] = {"add", "sub", "mul", "maximum", "minimum"};

static void ref_binary(int op, const float *a, int ra, const int64_t *sa, const float *b, int rb,
                       const int64_t *sb, float *y, int ro, const int64_t *so) {
  size_t n = numel(ro, so), i;
  int64_t idx[FUSE_MAX_RANK];
  for (i = 0; i < n; i++) {
    double x, z, r = 0;
    unravel(i, ro, so, idx);
    x = a[bcast_offset(idx, ro, ra, sa)];
    z = b[bcast_offset(idx, ro, rb, sb)];
    switch (op) {
      case OP_ADD: r = x + z; break;
      case OP_SUB: r = x - z; break;
      case OP_MUL: r = x * z; break;
      case OP_MAX: r = x > z ? x : z; break;
      default: r = x < z ? x : z; break;
    }
    y[i] = (float)r;
  }
}

static void ref_conv2d(const float *x, const float *w, float *y, int N, int C, int H, int W,
                       int K, int KH, int KW, int sh, int sw, int pt, int pl, int dh, int dw,
                       int G, int OH, int OW) {
  int cpg = C / G, kpg = K / G, n, k, oh, ow, c, i, j;
  for (n = 0; n < N; n++)
    for (k = 0; k < K; k++)
      for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++) {
          int grp = k / kpg;
          double acc = 0;
          for (c = 0; c < cpg; c++)
            for (i = 0; i < KH; i++) {
              int ih = oh * sh - pt + i * dh;
              if (ih < 0 || ih >= H) continue;
              for (j = 0; j < KW; j++) {
                int iw = ow * sw - pl + j * dw;
                if (iw < 0 || iw >= W) continue;
                acc += (double)x[(((size_t)n * C + grp * cpg + c) * H + ih) * W + iw] *
                       (double)w[(((size_t)k * cpg + c) * KH + i) * KW + j];
              }
            }
          y[(((size_t)n * K + k) * OH + oh) * OW + ow] = (float)acc;
        }
}

/* numpy matmul; fills *ro / so with the result shape. */
static void ref_matmul(const float *a, int ra, const int64_t *sa, const float *b, int rb,
                       const int64_t *sb, float *y, int *ro, int64_t *so) {
  int64_t pa[FUSE_MAX_RANK + 1], pb[FUSE_MAX_RANK + 1], bo[FUSE_MAX_RANK], idx[FUSE_MAX_RANK];
  int rpa = ra, rpb = rb, nb, d, r = 0;
  int64_t M, K, N;
  size_t nbatch, bi;
  if (ra == 1) { pa[0] = 1; pa[1] = sa[0]; rpa = 2; } else memcpy(pa, sa, sizeof(int64_t) * ra);
  if (rb == 1) { pb[0] = sb[0]; pb[1] = 1; rpb = 2; } else memcpy(pb, sb, sizeof(int64_t) * rb);
  M = pa[rpa - 2]; K = pa[rpa - 1]; N = pb[rpb - 1];
  nb = bcast_shape(rpa - 2, pa, rpb - 2, pb, bo);
  nbatch = numel(nb, bo);
  for (d = 0; d < nb; d++) so[r++] = bo[d];
  if (ra != 1) so[r++] = M;
  if (rb != 1) so[r++] = N;
  *ro = r;
  for (bi = 0; bi < nbatch; bi++) {
    size_t oa, ob;
    int64_t m, n, k;
    unravel(bi, nb, bo, idx);
    oa = bcast_offset(idx, nb, rpa - 2, pa) * (size_t)(M * K);
    ob = bcast_offset(idx, nb, rpb - 2, pb) * (size_t)(K * N);
    for (m = 0; m < M; m++)
      for (n = 0; n < N; n++) {
        double acc = 0;
        for (k = 0; k < K; k++) acc += (double)a[oa + m * K + k] * (double)b[ob + k * N + n];
        y[bi * (size_t)(M * N) + m * N + n] = (float)acc;
      }
  }
}

static void ref_softmax(const float *x, float *y, int rank, const int64_t *s, int axis) {
  size_t outer = 1, inner = 1, n = (size_t)s[axis], o, in, i;
  int d;
  for (d = 0; d < axis; d++) outer *= (size_t)s[d];
  for (d = axis + 1; d < rank; d++) inner *= (size_t)s[d];
  for (o = 0; o < outer; o++)
    for (in = 0; in < inner; in++) {
      const float *px = x + o * n * inner + in;
      float *py = y + o * n * inner + in;
      double mx = -INFINITY, sum = 0;
      for (i = 0; i < n; i++)
        if (px[i * inner] > mx) mx = px[i * inner];
      for (i = 0; i < n; i++) sum += exp((double)px[i * inner] - mx);
      for (i = 0; i < n; i++) py[i * inner] = (float)(exp((double)px[i * inner] - mx) / sum);
    }
}

static int pool_out(int H, int pt, int pb, int k, int s, int d, int ceil_mode) {
  int eff = d * (k - 1) + 1, num = H + pt + pb - eff;
  int o = ceil_mode ? (num + s - 1) / s + 1 : num / s + 1;
  if (ceil_mode && (o - 1) * s >= H + pt) o--;
  return o;
}

static void ref_max_pool(const float *x, float *y, int NC, int H, int W, int OH, int OW,
                         const fuse_pool2d_attrs *a) {
  int sh = a->strides[0] ? a->strides[0] : 1, sw = a->strides[1] ? a->strides[1] : 1;
  int dh = a->dilation[0] ? a->dilation[0] : 1, dw = a->dilation[1] ? a->dilation[1] : 1;
  int c, oh, ow, i, j;
  for (c = 0; c < NC; c++)
    for (oh = 0; oh < OH; oh++)
      for (ow = 0; ow < OW; ow++) {
        float best = -INFINITY;
        for (i = 0; i < a->kernel[0]; i++) {
          int ih = oh * sh - a->padding[0] + i * dh;
          if (ih < 0 || ih >= H) continue;
          for (j = 0; j < a->kernel[1]; j++) {
            int iw = ow * sw - a->padding[1] + j * dw;
            if (iw < 0 || iw >= W) continue;
            if (x[((size_t)c * H + ih) * W + iw] > best) best = x[((size_t)c * H + ih) * W + iw];
          }
        }
        y[((size_t)c * OH + oh) * OW + ow] = best;
      }
}

static void ref_avg_pool(const float *x, float *y, int NC, int H, int W, int OH, int OW,
                         const fuse_pool2d_attrs *a) {
  int sh = a->strides[0] ? a->strides[0] : 1, sw = a->strides[1] ? a->strides[1] : 1;
  int c, oh, ow, i, j;
  for (c = 0; c < NC; c++)
    for (oh = 0; oh < OH; oh++)
      for (ow = 0; ow < OW; ow++) {
        int hs = oh * sh - a->padding[0], ws = ow * sw - a->padding[1];
        int he = hs + a->kernel[0], we = ws + a->kernel[1];
        int pool, cnt;
        double sum = 0;
        if (he > H + a->padding[2]) he = H + a->padding[2];
        if (we > W + a->padding[3]) we = W + a->padding[3];
        pool = (he - hs) * (we - ws);
        if (hs < 0) hs = 0;
        if (ws < 0) ws = 0;
        if (he > H) he = H;
        if (we > W) we = W;
        cnt = (he - hs) * (we - ws);
        for (i = hs; i < he; i++)
          for (j = ws; j < we; j++) sum += x[((size_t)c * H + i) * W + j];
        y[((size_t)c * OH + oh) * OW + ow] =
            (float)(sum / (a->count_include_pad ? pool : (cnt > 0 ? cnt : 1)));
      }
}

/* ----------------------------------------------------------------- op tests -- */

typedef struct conv_case {
  int N, C, H, W, K, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, groups, weight_is_input;
} conv_case;

TEST(conv2d_awkward) {
  static const conv_case cases[] = {
      /* N  C  H   W   K  KH KW sh sw pt pl pb pr dh dw  g  win */
      {2, 4, 9, 11, 6, 3, 2, 2, 1, 1, 0, 2, 3, 2, 1, 2, 0},   /* groups, asym pad, dilation */
      {2, 5, 7, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5, 0},    /* depthwise */
      {1, 3, 10, 9, 6, 3, 3, 1, 2, 2, 1, 0, 2, 2, 2, 3, 0},   /* depthwise x2, dilation 2 */
      {2, 17, 5, 3, 19, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0},  /* 1x1, odd channel counts */
      {1, 3, 13, 13, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0}, /* stride 2, K not a multiple */
      {2, 6, 8, 8, 4, 3, 3, 3, 2, 0, 2, 1, 0, 1, 3, 2, 1},    /* weight is a graph input */
      {1, 8, 5, 5, 16, 5, 5, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},   /* all-zero attrs = defaults */
      {2, 16, 6, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},  /* wide, SIMD-friendly */
      {1, 2, 4, 4, 3, 4, 4, 1, 1, 3, 3, 3, 3, 1, 1, 1, 0},    /* padding = kernel - 1 */
  };
  size_t ci;
  for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const conv_case *c = &cases[ci];
    int sh = c->sh ? c->sh : 1, sw = c->sw ? c->sw : 1, dh = c->dh ? c->dh : 1;
    int dw = c->dw ? c->dw : 1, G = c->groups ? c->groups : 1;
    int OH = (c->H + c->pt + c->pb - dh * (c->KH - 1) - 1) / sh + 1;
    int OW = (c->W + c->pl + c->pr - dw * (c->KW - 1) - 1) / sw + 1;
    int64_t xs[4], ws[4], ys[4];
    size_t nx, nw, ny;
    float *x, *w, *y, *want;
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_conv2d_attrs a;
    fuse_value vx, vw, vy;
    xs[0] = c->N; xs[1] = c->C; xs[2] = c->H; xs[3] = c->W;
    ws[0] = c->K; ws[1] = c->C / G; ws[2] = c->KH; ws[3] = c->KW;
    ys[0] = c->N; ys[1] = c->K; ys[2] = OH; ys[3] = OW;
    nx = numel(4, xs); nw = numel(4, ws); ny = numel(4, ys);
    x = frandom(nx, 100 + (uint32_t)ci);
    w = frandom(nw, 200 + (uint32_t)ci);
    y = falloc(ny);
    want = falloc(ny);
    memset(&a, 0, sizeof a);
    a.strides[0] = c->sh; a.strides[1] = c->sw;
    a.padding[0] = c->pt; a.padding[1] = c->pl; a.padding[2] = c->pb; a.padding[3] = c->pr;
    a.dilation[0] = c->dh; a.dilation[1] = c->dw;
    a.groups = c->groups;
    vx = fuse_input(g, "x", 4, xs);
    vw = c->weight_is_input ? fuse_input(g, "w", 4, ws) : fuse_constant(g, "w", 4, ws, w);
    vy = fuse_conv2d(g, vx, vw, &a);
    fuse_output(g, vy);
    CHECK(shape_is(g, vy, 4, ys));
    ref_conv2d(x, w, want, c->N, c->C, c->H, c->W, c->K, c->KH, c->KW, sh, sw, c->pt, c->pl, dh,
               dw, G, OH, OW);
    {
      const float *in[2];
      float *out[1];
      in[0] = x; in[1] = w; out[0] = y;
      CHECK(run_graph(g, in, out));
    }
    CHECK_NEAR_ARRAY(y, want, ny, TOL);
    if (runner_rel_error(y, want, ny) > TOL) fprintf(stderr, "    conv case %d\n", (int)ci);
    fuse_graph_destroy(g);
    free(x); free(w); free(y); free(want);
  }
  { /* NULL attrs = defaults */
    int64_t xs[4] = {1, 2, 4, 5}, ws[4] = {3, 2, 2, 2}, ys[4] = {1, 3, 3, 4};
    float x[40], w[24], y[36], want[36];
    const float *in[1];
    float *out[1];
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value v;
    fill(x, 40, 7); fill(w, 24, 8);
    v = fuse_conv2d(g, fuse_input(g, "x", 4, xs), fuse_constant(g, NULL, 4, ws, w), NULL);
    fuse_output(g, v);
    CHECK(shape_is(g, v, 4, ys));
    ref_conv2d(x, w, want, 1, 2, 4, 5, 3, 2, 2, 1, 1, 0, 0, 1, 1, 1, 3, 4);
    in[0] = x; out[0] = y;
    CHECK(run_graph(g, in, out));
    CHECK_NEAR_ARRAY(y, want, 36, TOL);
    fuse_graph_destroy(g);
  }
}

typedef struct mm_case {
  int ra; int64_t sa[4]; int rb; int64_t sb[4]; int b_const;
} mm_case;

TEST(matmul_shapes) {
  static const mm_case cases[] = {
      {2, {5, 17}, 2, {17, 19}, 1},           /* plain, odd sizes */
      {2, {1, 33}, 2, {33, 40}, 0},           /* one row */
      {4, {2, 3, 4, 5}, 4, {2, 3, 5, 6}, 0},  /* batched */
      {4, {2, 1, 3, 4}, 3, {3, 4, 5}, 1},     /* broadcast batch dims */
      {2, {3, 4}, 3, {2, 4, 5}, 0},           /* 2-D lhs against a batch */
      {3, {2, 3, 4}, 2, {4, 5}, 1},           /* batch against 2-D rhs */
      {1, {4}, 2, {4, 5}, 1},                 /* 1-D lhs */
      {2, {3, 4}, 1, {4}, 0},                 /* 1-D rhs */
      {1, {4}, 3, {2, 4, 5}, 0},              /* 1-D lhs, batched rhs */
      {3, {2, 3, 4}, 1, {4}, 1},              /* batched lhs, 1-D rhs */
      {1, {7}, 1, {7}, 0},                    /* dot product -> rank 0 */
      {3, {1, 18, 20}, 3, {3, 20, 17}, 1},    /* batch 1 broadcast */
  };
  size_t ci;
  for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const mm_case *c = &cases[ci];
    size_t na = numel(c->ra, c->sa), nb = numel(c->rb, c->sb), ny;
    float *a = frandom(na, 300 + (uint32_t)ci), *b = frandom(nb, 400 + (uint32_t)ci);
    float want[4096], *y;
    int ro;
    int64_t so[8];
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value va, vb, vy;
    const float *in[2];
    float *out[1];
    ref_matmul(a, c->ra, c->sa, b, c->rb, c->sb, want, &ro, so);
    ny = numel(ro, so);
    y = falloc(ny);
    va = fuse_input(g, "a", c->ra, c->sa);
    vb = c->b_const ? fuse_constant(g, "b", c->rb, c->sb, b) : fuse_input(g, "b", c->rb, c->sb);
    vy = fuse_matmul(g, va, vb);
    fuse_output(g, vy);
    CHECK(shape_is(g, vy, ro, so));
    in[0] = a; in[1] = b; out[0] = y;
    CHECK(run_graph(g, in, out));
    CHECK_NEAR_ARRAY(y, want, ny, TOL);
    if (runner_rel_error(y, want, ny) > TOL) fprintf(stderr, "    matmul case %d\n", (int)ci);
    fuse_graph_destroy(g);
    free(a); free(b); free(y);
  }
}

typedef struct bin_case {
  int ra; int64_t sa[4]; int rb; int64_t sb[4];
} bin_case;

TEST(binary_broadcast_both_orders) {
  static const bin_case cases[] = {
      {4, {2, 3, 1, 5}, 2, {4, 1}},
      {2, {3, 1}, 2, {1, 4}},
      {1, {5}, 3, {2, 3, 5}},
      {3, {1, 1, 1}, 3, {2, 1, 3}},
      {2, {7, 19}, 2, {7, 19}},
      {4, {2, 16, 3, 3}, 3, {16, 1, 1}},
      {0, {0}, 2, {3, 17}}, /* rank-0 operand: fuse_scalar */
      {1, {1}, 4, {1, 2, 1, 33}},
  };
  size_t ci;
  int op, order;
  for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (op = OP_ADD; op <= OP_MIN; op++)
      for (order = 0; order < 2; order++) {
        const bin_case *c = &cases[ci];
        int ra = order ? c->rb : c->ra, rb = order ? c->ra : c->rb, ro;
        const int64_t *sa = order ? c->sb : c->sa, *sb = order ? c->sa : c->sb;
        int64_t so[8];
        size_t na = numel(ra, sa), nb = numel(rb, sb), ny;
        float *a = frandom(na, 500 + (uint32_t)ci), *b = frandom(nb, 600 + (uint32_t)ci), *y, *want;
        fuse_graph *g = fuse_graph_create(NULL);
        fuse_value va, vb, vy = FUSE_NONE;
        const float *in[2];
        float *out[1];
        int nin = 0;
        ro = bcast_shape(ra, sa, rb, sb, so);
        ny = numel(ro, so);
        y = falloc(ny);
        want = falloc(ny);
        ref_binary(op, a, ra, sa, b, rb, sb, want, ro, so);
        /* rank-0 operands are scalars; otherwise the second operand alternates between a
           constant and an input */
        if (ra == 0) va = fuse_scalar(g, a[0]);
        else { va = fuse_input(g, "a", ra, sa); in[nin++] = a; }
        if (rb == 0) vb = fuse_scalar(g, b[0]);
        else if ((op + order) & 1) vb = fuse_constant(g, "b", rb, sb, b);
        else { vb = fuse_input(g, "b", rb, sb); in[nin++] = b; }
        switch (op) {
          case OP_ADD: vy = fuse_add(g, va, vb); break;
          case OP_SUB: vy = fuse_sub(g, va, vb); break;
          case OP_MUL: vy = fuse_mul(g, va, vb); break;
          case OP_MAX: vy = fuse_maximum(g, va, vb); break;
          default: vy = fuse_minimum(g, va, vb); break;
        }
        fuse_output(g, vy);
        CHECK(shape_is(g, vy, ro, so));
        out[0] = y;
        CHECK(run_graph(g, in, out));
        CHECK_NEAR_ARRAY(y, want, ny, TOL);
        if (runner_rel_error(y, want, ny) > TOL)
          fprintf(stderr, "    %s case %d order %d\n", binop_name[op], (int)ci, order);
        fuse_graph_destroy(g);
        free(a); free(b); free(y); free(want);
      }
}

TEST(unary_relu_clip_sigmoid) {
  enum { N = 67 };
  int64_t s[3] = {1, 1, N};
  float x[N], want[N], y[6][N];
  const float *in[1];
  float *out[6];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value vx = fuse_input(g, "x", 3, s);
  int i;
  fill(x, N, 900);
  for (i = 0; i < N; i++) x[i] *= 4.0f;
  /* sigmoid extremes */
  x[0] = 100.0f; x[1] = -100.0f; x[2] = 1000.0f; x[3] = -1000.0f; x[4] = 0.0f;
  x[5] = 88.75f; x[6] = -88.75f; x[7] = 30.0f; x[8] = -30.0f; x[9] = 3e38f; x[10] = -3e38f;
  fuse_output(g, fuse_relu(g, vx));
  fuse_output(g, fuse_clip(g, vx, -INFINITY, 0.5f));
  fuse_output(g, fuse_clip(g, vx, -0.25f, INFINITY));
  fuse_output(g, fuse_clip(g, vx, -INFINITY, INFINITY));
  fuse_output(g, fuse_clip(g, vx, 0.75f, 0.75f));
  fuse_output(g, fuse_sigmoid(g, vx));
  for (i = 0; i < 6; i++) {
    int j;
    for (j = 0; j < N; j++) y[i][j] = NAN;
    out[i] = y[i];
  }
  in[0] = x;
  CHECK(run_graph(g, in, out));
  for (i = 0; i < N; i++) want[i] = x[i] > 0 ? x[i] : 0;
  CHECK_NEAR_ARRAY(y[0], want, N, TOL);
  for (i = 0; i < N; i++) want[i] = x[i] < 0.5f ? x[i] : 0.5f;
  CHECK_NEAR_ARRAY(y[1], want, N, TOL);
  for (i = 0; i < N; i++) want[i] = x[i] > -0.25f ? x[i] : -0.25f;
  CHECK_NEAR_ARRAY(y[2], want, N, TOL);
  CHECK_NEAR_ARRAY(y[3], x, N, TOL);
  CHECK(memcmp(y[3], x, sizeof x) == 0); /* unbounded clip is the identity, bit for bit */
  for (i = 0; i < N; i++) want[i] = 0.75f;
  CHECK_NEAR_ARRAY(y[4], want, N, TOL);
  for (i = 0; i < N; i++) want[i] = (float)(1.0 / (1.0 + exp(-(double)x[i])));
  CHECK(all_finite(y[5], N));
  for (i = 0; i < N; i++) CHECK(y[5][i] >= 0.0f && y[5][i] <= 1.0f);
  CHECK_NEAR_ARRAY(y[5], want, N, TOL);
  CHECK(y[5][0] == 1.0f || fabs(y[5][0] - 1.0) < 1e-6); /* sigmoid(100) */
  CHECK(y[5][1] >= 0.0f && y[5][1] < 1e-30f);          /* sigmoid(-100) = 3.7e-44 */
  CHECK(fabs(y[5][4] - 0.5) < 1e-6);
  fuse_graph_destroy(g);
}

TEST(softmax_huge_inputs) {
  int64_t s[3] = {3, 4, 5};
  float x[60];
  int axis, i;
  fill(x, 60, 1000);
  for (i = 0; i < 60; i++) {
    if (i % 3 == 0) x[i] *= 1e30f;             /* huge, mixed sign */
    else if (i % 7 == 0) x[i] = 1e30f;         /* repeated maximum */
    else if (i % 11 == 0) x[i] = -1e30f;
  }
  x[59] = 3e38f;
  x[58] = -3e38f;
  for (axis = -3; axis < 3; axis++) {
    int ax = axis < 0 ? axis + 3 : axis;
    float y[60], want[60];
    const float *in[1];
    float *out[1];
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value v = fuse_softmax(g, fuse_input(g, "x", 3, s), axis);
    size_t outer = 1, inner = 1, o, k, j;
    int d;
    fuse_output(g, v);
    CHECK(shape_is(g, v, 3, s));
    for (i = 0; i < 60; i++) y[i] = NAN;
    in[0] = x; out[0] = y;
    CHECK(run_graph(g, in, out));
    ref_softmax(x, want, 3, s, ax);
    CHECK(all_finite(y, 60));
    CHECK_NEAR_ARRAY(y, want, 60, TOL);
    for (d = 0; d < ax; d++) outer *= (size_t)s[d];
    for (d = ax + 1; d < 3; d++) inner *= (size_t)s[d];
    for (o = 0; o < outer; o++)
      for (k = 0; k < inner; k++) {
        double sum = 0;
        for (j = 0; j < (size_t)s[ax]; j++) sum += y[(o * (size_t)s[ax] + j) * inner + k];
        CHECK(fabs(sum - 1.0) < 1e-5);
      }
    if (runner_rel_error(y, want, 60) > TOL) fprintf(stderr, "    softmax axis %d\n", axis);
    fuse_graph_destroy(g);
  }
  { /* moderate values on a long row, rank 2, axis -1 */
    int64_t s2[2] = {2, 37};
    float x2[74], y2[74], w2[74];
    const float *in[1];
    float *out[1];
    fuse_graph *g = fuse_graph_create(NULL);
    fill(x2, 74, 1001);
    for (i = 0; i < 74; i++) x2[i] *= 20.0f;
    fuse_output(g, fuse_softmax(g, fuse_input(g, "x", 2, s2), -1));
    in[0] = x2; out[0] = y2;
    CHECK(run_graph(g, in, out));
    ref_softmax(x2, w2, 2, s2, 1);
    CHECK_NEAR_ARRAY(y2, w2, 74, TOL);
    fuse_graph_destroy(g);
  }
}

typedef struct concat_case {
  int n; int64_t shapes[3][4]; int axis;
} concat_case;

TEST(concat_axes) {
  static const concat_case cases[] = {
      {3, {{1, 3, 4, 5}, {2, 3, 4, 5}, {3, 3, 4, 5}}, 0},
      {2, {{2, 1, 4, 5}, {2, 4, 4, 5}}, 1},
      {3, {{2, 3, 4, 1}, {2, 3, 4, 7}, {2, 3, 4, 2}}, 3},
      {3, {{2, 3, 4, 1}, {2, 3, 4, 7}, {2, 3, 4, 2}}, -1},
      {2, {{2, 2, 4, 5}, {2, 5, 4, 5}}, -3},
      {2, {{2, 3, 1, 5}, {2, 3, 6, 5}}, 2},
  };
  size_t ci;
  for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const concat_case *c = &cases[ci];
    int ax = c->axis < 0 ? c->axis + 4 : c->axis, i, d;
    int64_t so[4];
    size_t outer = 1, inner = 1, ny, o, pos = 0;
    float *xs[3] = {NULL, NULL, NULL}, *y, *want;
    fuse_value vs[3], vy;
    const float *in[3];
    float *out[1];
    int nin = 0;
    fuse_graph *g = fuse_graph_create(NULL);
    memcpy(so, c->shapes[0], sizeof so);
    so[ax] = 0;
    for (i = 0; i < c->n; i++) so[ax] += c->shapes[i][ax];
    for (d = 0; d < ax; d++) outer *= (size_t)so[d];
    for (d = ax + 1; d < 4; d++) inner *= (size_t)so[d];
    ny = numel(4, so);
    y = falloc(ny);
    want = falloc(ny);
    for (i = 0; i < c->n; i++) {
      char name[16];
      xs[i] = frandom(numel(4, c->shapes[i]), 1100 + (uint32_t)(ci * 3 + i));
      sprintf(name, "x%d", i);
      if (i == 1) vs[i] = fuse_constant(g, name, 4, c->shapes[i], xs[i]); /* mixed kinds */
      else { vs[i] = fuse_input(g, name, 4, c->shapes[i]); in[nin++] = xs[i]; }
    }
    for (o = 0; o < outer; o++)
      for (i = 0; i < c->n; i++) {
        size_t blk = (size_t)c->shapes[i][ax] * inner;
        memcpy(want + pos, xs[i] + o * blk, blk * sizeof(float));
        pos += blk;
      }
    vy = fuse_concat(g, c->n, vs, c->axis);
    fuse_output(g, vy);
    CHECK(shape_is(g, vy, 4, so));
    out[0] = y;
    CHECK(run_graph(g, in, out));
    CHECK(memcmp(y, want, ny * sizeof(float)) == 0); /* a copy: exact */
    if (memcmp(y, want, ny * sizeof(float)) != 0) fprintf(stderr, "    concat case %d\n", (int)ci);
    fuse_graph_destroy(g);
    for (i = 0; i < c->n; i++) free(xs[i]);
    free(y); free(want);
  }
  { /* the same value twice, then used by an op */
    int64_t s[2] = {2, 3}, so[2] = {2, 6};
    float x[6] = {1, 2, 3, 4, 5, 6}, y[12], want[12] = {2, 4, 6, 2, 4, 6, 8, 10, 12, 8, 10, 12};
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value vx = fuse_input(g, "x", 2, s), vs[2], vc;
    const float *in[1];
    float *out[1];
    vs[0] = vx; vs[1] = vx;
    vc = fuse_concat(g, 2, vs, 1);
    CHECK(shape_is(g, vc, 2, so));
    fuse_output(g, fuse_add(g, vc, vc));
    in[0] = x; out[0] = y;
    CHECK(run_graph(g, in, out));
    CHECK_NEAR_ARRAY(y, want, 12, TOL);
    fuse_graph_destroy(g);
  }
}

TEST(reshape_flatten) {
  int64_t s[4] = {2, 3, 4, 5}, r1[2] = {6, -1}, e1[2] = {6, 20}, r2[1] = {120}, r3[3] = {-1, 4, 5};
  int64_t e3[3] = {6, 4, 5}, f0[2] = {1, 120}, f2[2] = {6, 20}, f4[2] = {120, 1}, fm1[2] = {24, 5};
  float x[120], y[7][120], want[120];
  const float *in[1];
  float *out[7];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value vx = fuse_input(g, "x", 4, s), v[7];
  int i, j;
  fill(x, 120, 1200);
  v[0] = fuse_reshape(g, vx, 2, r1);
  v[1] = fuse_reshape(g, v[0], 1, r2);
  v[2] = fuse_reshape(g, v[1], 3, r3);
  v[3] = fuse_flatten(g, vx, 0);
  v[4] = fuse_flatten(g, vx, 2);
  v[5] = fuse_flatten(g, vx, 4);
  v[6] = fuse_flatten(g, v[2], -1);
  CHECK(shape_is(g, v[0], 2, e1));
  CHECK(shape_is(g, v[1], 1, r2));
  CHECK(shape_is(g, v[2], 3, e3));
  CHECK(shape_is(g, v[3], 2, f0));
  CHECK(shape_is(g, v[4], 2, f2));
  CHECK(shape_is(g, v[5], 2, f4));
  CHECK(shape_is(g, v[6], 2, fm1));
  /* the last one goes through an op too, so the reshaped data feeds a kernel */
  v[6] = fuse_mul(g, v[6], fuse_scalar(g, 2.0f));
  for (i = 0; i < 7; i++) {
    fuse_output(g, v[i]);
    for (j = 0; j < 120; j++) y[i][j] = NAN;
    out[i] = y[i];
  }
  in[0] = x;
  CHECK(run_graph(g, in, out));
  for (i = 0; i < 6; i++) CHECK(memcmp(y[i], x, sizeof x) == 0);
  for (j = 0; j < 120; j++) want[j] = 2.0f * x[j];
  CHECK_NEAR_ARRAY(y[6], want, 120, TOL);
  fuse_graph_destroy(g);
}

TEST(batch_norm_ranks) {
  static const int64_t shapes[3][4] = {{2, 3, 4, 5}, {5, 3, 0, 0}, {2, 3, 7, 0}};
  static const int ranks[3] = {4, 2, 3};
  static const float eps[3] = {1e-3f, 1e-5f, 0.0f};
  int ci;
  for (ci = 0; ci < 3; ci++) {
    int64_t cs[1] = {3};
    size_t n = numel(ranks[ci], shapes[ci]), inner = n / (size_t)(shapes[ci][0] * 3), i;
    float *x = frandom(n, 1300 + (uint32_t)ci), *y = falloc(n), *want = falloc(n);
    float scale[3] = {1.5f, -0.5f, 2.0f}, bias[3] = {0.1f, -0.2f, 0.3f};
    float mean[3] = {0.05f, -0.3f, 0.2f}, var[3] = {0.8f, 0.01f, 2.5f};
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value vx = fuse_input(g, "x", ranks[ci], shapes[ci]), vy;
    const float *in[1];
    float *out[1];
    vy = fuse_batch_norm(g, vx, fuse_constant(g, "scale", 1, cs, scale),
                         fuse_constant(g, "bias", 1, cs, bias), fuse_constant(g, "mean", 1, cs, mean),
                         fuse_constant(g, "var", 1, cs, var), eps[ci]);
    fuse_output(g, vy);
    CHECK(shape_is(g, vy, ranks[ci], shapes[ci]));
    for (i = 0; i < n; i++) {
      size_t c = (i / inner) % 3;
      want[i] = (float)(((double)x[i] - mean[c]) / sqrt((double)var[c] + eps[ci]) * scale[c] + bias[c]);
    }
    in[0] = x; out[0] = y;
    CHECK(run_graph(g, in, out));
    CHECK_NEAR_ARRAY(y, want, n, TOL);
    fuse_graph_destroy(g);
    free(x); free(y); free(want);
  }
}

typedef struct pool_case {
  int N, C, H, W;
  fuse_pool2d_attrs a;
} pool_case;

static void pool_case_run(const pool_case *c, int is_max, int ci) {
  const fuse_pool2d_attrs *a = &c->a;
  int sh = a->strides[0] ? a->strides[0] : 1, sw = a->strides[1] ? a->strides[1] : 1;
  int dh = a->dilation[0] ? a->dilation[0] : 1, dw = a->dilation[1] ? a->dilation[1] : 1;
  int OH = pool_out(c->H, a->padding[0], a->padding[2], a->kernel[0], sh, is_max ? dh : 1,
                    a->ceil_mode);
  int OW = pool_out(c->W, a->padding[1], a->padding[3], a->kernel[1], sw, is_max ? dw : 1,
                    a->ceil_mode);
  int64_t xs[4], ys[4];
  size_t nx, ny, i;
  float *x, *y, *want;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value vy;
  const float *in[1];
  float *out[1];
  xs[0] = c->N; xs[1] = c->C; xs[2] = c->H; xs[3] = c->W;
  ys[0] = c->N; ys[1] = c->C; ys[2] = OH; ys[3] = OW;
  nx = numel(4, xs); ny = numel(4, ys);
  x = frandom(nx, 1400 + (uint32_t)ci);
  if (is_max)
    for (i = 0; i < nx; i++) x[i] -= 3.0f; /* all negative: a padded zero must never win */
  y = falloc(ny);
  want = falloc(ny);
  vy = is_max ? fuse_max_pool2d(g, fuse_input(g, "x", 4, xs), a)
              : fuse_avg_pool2d(g, fuse_input(g, "x", 4, xs), a);
  fuse_output(g, vy);
  CHECK(shape_is(g, vy, 4, ys));
  if (is_max) ref_max_pool(x, want, c->N * c->C, c->H, c->W, OH, OW, a);
  else ref_avg_pool(x, want, c->N * c->C, c->H, c->W, OH, OW, a);
  in[0] = x; out[0] = y;
  CHECK(run_graph(g, in, out));
  CHECK_NEAR_ARRAY(y, want, ny, TOL);
  if (runner_rel_error(y, want, ny) > TOL)
    fprintf(stderr, "    %s case %d\n", is_max ? "max_pool2d" : "avg_pool2d", ci);
  fuse_graph_destroy(g);
  free(x); free(y); free(want);
}

TEST(max_pool2d_cases) {
  static const pool_case cases[] = {
      /* N C H W   kernel  strides  padding t,l,b,r  dilation ceil cip */
      {2, 3, 7, 7, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 0, 0}},
      {2, 3, 7, 7, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 1, 0}},
      {1, 2, 8, 9, {{2, 3}, {2, 2}, {0, 1, 1, 0}, {2, 1}, 1, 0}},
      {1, 2, 5, 5, {{2, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, 0}}, /* ceil: last window dropped */
      {1, 3, 6, 11, {{3, 2}, {0, 0}, {0, 0, 0, 0}, {0, 0}, 0, 0}}, /* stride 0 = 1 */
      {2, 17, 9, 10, {{3, 3}, {3, 2}, {2, 0, 1, 2}, {1, 2}, 1, 0}},
      {1, 1, 4, 4, {{4, 4}, {1, 1}, {3, 3, 3, 3}, {1, 1}, 0, 0}}, /* padding = kernel - 1 */
  };
  int ci;
  for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++) pool_case_run(&cases[ci], 1, ci);
}

TEST(avg_pool2d_cases) {
  static const pool_case cases[] = {
      {2, 3, 7, 7, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 0, 0}},
      {2, 3, 7, 7, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 0, 1}},
      {2, 3, 7, 7, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 1, 0}},
      {2, 3, 7, 7, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 1, 1}},
      {1, 2, 7, 10, {{3, 2}, {2, 3}, {0, 1, 1, 0}, {0, 0}, 1, 0}},
      {1, 2, 7, 10, {{3, 2}, {2, 3}, {0, 1, 1, 0}, {0, 0}, 1, 1}},
      {1, 2, 5, 5, {{2, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, 0}}, /* last window dropped */
      {1, 2, 5, 5, {{2, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, 1}},
      {1, 2, 6, 6, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 1, 1}}, /* ceil window past pad */
      {1, 2, 6, 6, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 1, 0}},
      {1, 2, 6, 6, {{3, 3}, {2, 2}, {2, 2, 2, 2}, {0, 0}, 1, 1}}, /* padding 2 < kernel 3 */
      {1, 2, 6, 6, {{3, 3}, {2, 2}, {2, 2, 2, 2}, {0, 0}, 1, 0}},
      {1, 3, 6, 11, {{3, 2}, {0, 0}, {0, 0, 0, 0}, {0, 0}, 0, 0}},
      {2, 17, 9, 10, {{3, 3}, {3, 2}, {2, 0, 1, 2}, {0, 0}, 0, 1}},
  };
  int ci;
  for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++) pool_case_run(&cases[ci], 0, ci);
}

TEST(global_avg_pool2d_ranks) {
  static const int64_t shapes[3][5] = {{2, 3, 5, 7, 0}, {2, 4, 9, 0, 0}, {1, 2, 3, 4, 5}};
  static const int ranks[3] = {4, 3, 5};
  int ci;
  for (ci = 0; ci < 3; ci++) {
    int r = ranks[ci], d;
    int64_t ys[5];
    size_t nx = numel(r, shapes[ci]), nc = (size_t)(shapes[ci][0] * shapes[ci][1]);
    size_t sp = nx / nc, i, j;
    float *x = frandom(nx, 1500 + (uint32_t)ci), y[16], want[16];
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value vy = fuse_global_avg_pool2d(g, fuse_input(g, "x", r, shapes[ci]));
    const float *in[1];
    float *out[1];
    fuse_output(g, vy);
    for (d = 0; d < r; d++) ys[d] = d < 2 ? shapes[ci][d] : 1;
    CHECK(shape_is(g, vy, r, ys));
    for (i = 0; i < nc; i++) {
      double s = 0;
      for (j = 0; j < sp; j++) s += x[i * sp + j];
      want[i] = (float)(s / (double)sp);
      y[i] = NAN;
    }
    in[0] = x; out[0] = y;
    CHECK(run_graph(g, in, out));
    CHECK_NEAR_ARRAY(y, want, nc, TOL);
    fuse_graph_destroy(g);
    free(x);
  }
}

/* ------------------------------------------------------- inputs and outputs -- */

TEST(input_output_order) {
  /* inputs created a, b, c; outputs declared o3, o1, o2 */
  int64_t sa[2] = {2, 3}, sb[1] = {3}, sc[3] = {4, 1, 3}, s1[3] = {4, 1, 3}, s3[3] = {4, 2, 3};
  float a[6], b[3], c[12], y1[12], y2[6], y3[24], w1[12], w2[6], w3[24];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value va = fuse_input(g, "a", 2, sa), vb = fuse_input(g, "b", 1, sb);
  fuse_value vc = fuse_input(g, "c", 3, sc);
  fuse_value o1 = fuse_mul(g, vc, vb), o2 = fuse_add(g, va, vb), o3 = fuse_sub(g, vc, va);
  const float *in[3];
  float *out[3];
  int i;
  fill(a, 6, 1600); fill(b, 3, 1601); fill(c, 12, 1602);
  CHECK_EQ_INT(fuse_output(g, o3), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, o1), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, o2), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_input_count(g), 3);
  CHECK_EQ_INT(fuse_graph_output_count(g), 3);
  CHECK_EQ_INT(fuse_graph_input(g, 0), va);
  CHECK_EQ_INT(fuse_graph_input(g, 2), vc);
  CHECK_EQ_INT(fuse_graph_output(g, 0), o3);
  CHECK_EQ_INT(fuse_graph_output(g, 2), o2);
  ref_binary(OP_MUL, c, 3, sc, b, 1, sb, w1, 3, s1);
  ref_binary(OP_ADD, a, 2, sa, b, 1, sb, w2, 2, sa);
  ref_binary(OP_SUB, c, 3, sc, a, 2, sa, w3, 3, s3);
  for (i = 0; i < 12; i++) y1[i] = NAN;
  for (i = 0; i < 6; i++) y2[i] = NAN;
  for (i = 0; i < 24; i++) y3[i] = NAN;
  in[0] = a; in[1] = b; in[2] = c;
  out[0] = y3; out[1] = y1; out[2] = y2;
  CHECK(run_graph(g, in, out));
  CHECK_NEAR_ARRAY(y1, w1, 12, TOL);
  CHECK_NEAR_ARRAY(y2, w2, 6, TOL);
  CHECK_NEAR_ARRAY(y3, w3, 24, TOL);
  fuse_graph_destroy(g);
}

TEST(output_consumed_later) {
  /* y = x + 1 is an output and feeds relu (an in-place candidate) and mul; the outputs are
     declared w, y, z, r */
  int64_t s[2] = {3, 5};
  float x[15], y[15], z[15], w[15], r[15], wy[15], wz[15], ww[15], wr[15];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value vx = fuse_input(g, "x", 2, s);
  fuse_value vy = fuse_add(g, vx, fuse_scalar(g, 1.0f));
  fuse_value vr = fuse_relu(g, vy);
  fuse_value vz = fuse_mul(g, vy, fuse_scalar(g, 2.0f));
  fuse_value vw = fuse_sub(g, vz, vy);
  const float *in[1];
  float *out[4];
  int i;
  fill(x, 15, 1700);
  for (i = 0; i < 15; i++) x[i] *= 3.0f;
  fuse_output(g, vw);
  fuse_output(g, vy);
  fuse_output(g, vz);
  fuse_output(g, vr);
  for (i = 0; i < 15; i++) {
    wy[i] = x[i] + 1.0f;
    wr[i] = wy[i] > 0 ? wy[i] : 0;
    wz[i] = wy[i] * 2.0f;
    ww[i] = wz[i] - wy[i];
    y[i] = z[i] = w[i] = r[i] = NAN;
  }
  in[0] = x;
  out[0] = w; out[1] = y; out[2] = z; out[3] = r;
  CHECK(run_graph(g, in, out));
  CHECK_NEAR_ARRAY(y, wy, 15, TOL);
  CHECK_NEAR_ARRAY(z, wz, 15, TOL);
  CHECK_NEAR_ARRAY(w, ww, 15, TOL);
  CHECK_NEAR_ARRAY(r, wr, 15, TOL);
  fuse_graph_destroy(g);
}

TEST(aliased_outputs) {
  /* outputs: y twice, the input x itself, a named constant, a scalar constant, a reshape of x,
     a flatten of x, and y a third time */
  int64_t s[3] = {2, 3, 4}, cs[2] = {2, 2}, rs[2] = {4, 6}, fs[2] = {2, 12};
  float x[24], k[4] = {1.5f, -2.0f, 0.25f, 8.0f}, wy[24];
  float o_y1[24], o_y2[24], o_x[24], o_k[4], o_s[1], o_r[24], o_f[24], o_y3[24];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value vx = fuse_input(g, "x", 3, s);
  fuse_value vk = fuse_constant(g, "k", 2, cs, k);
  fuse_value vs = fuse_scalar(g, -3.5f);
  fuse_value vy = fuse_sigmoid(g, vx);
  fuse_value vr = fuse_reshape(g, vx, 2, rs);
  fuse_value vf = fuse_flatten(g, vx, 1);
  float *outs[8];
  CHECK(shape_is(g, vr, 2, rs));
  CHECK(shape_is(g, vf, 2, fs));
  const float *in[1];
  int i;
  fill(x, 24, 1800);
  CHECK_EQ_INT(fuse_output(g, vy), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, vy), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, vx), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, vk), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, vs), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, vr), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, vf), FUSE_OK);
  CHECK_EQ_INT(fuse_output(g, vy), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_output_count(g), 8);
  outs[0] = o_y1; outs[1] = o_y2; outs[2] = o_x; outs[3] = o_k;
  outs[4] = o_s; outs[5] = o_r; outs[6] = o_f; outs[7] = o_y3;
  for (i = 0; i < 24; i++) {
    o_y1[i] = o_y2[i] = o_x[i] = o_r[i] = o_f[i] = o_y3[i] = NAN;
    wy[i] = (float)(1.0 / (1.0 + exp(-(double)x[i])));
  }
  for (i = 0; i < 4; i++) o_k[i] = NAN;
  o_s[0] = NAN;
  in[0] = x;
  CHECK(run_graph(g, in, outs));
  CHECK_NEAR_ARRAY(o_y1, wy, 24, TOL);
  CHECK_NEAR_ARRAY(o_y2, wy, 24, TOL);
  CHECK_NEAR_ARRAY(o_y3, wy, 24, TOL);
  CHECK(memcmp(o_y1, o_y2, sizeof o_y1) == 0);
  CHECK(memcmp(o_x, x, sizeof x) == 0);
  CHECK(memcmp(o_k, k, sizeof k) == 0);
  CHECK(o_s[0] == -3.5f);
  CHECK(memcmp(o_r, x, sizeof x) == 0);
  CHECK(memcmp(o_f, x, sizeof x) == 0);
  fuse_graph_destroy(g);
}

TEST(graph_destroyed_after_compile) {
  int64_t xs[4] = {2, 3, 6, 6}, ws[4] = {4, 3, 3, 3}, bs[1] = {4}, br[4] = {1, 4, 1, 1};
  float x[216], w[108], b[4] = {0.5f, -1.0f, 0.25f, 2.0f}, y[72], want[72], wc[108];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs a;
  fuse_value v;
  fuse_plan *p = NULL;
  const float *in[1];
  float *out[1];
  int i;
  fill(x, 216, 1900); fill(w, 108, 1901);
  memcpy(wc, w, sizeof w);
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  a.strides[0] = a.strides[1] = 2;
  v = fuse_conv2d(g, fuse_input(g, "x", 4, xs), fuse_constant(g, "w", 4, ws, w), &a);
  v = fuse_add(g, v, fuse_reshape(g, fuse_constant(g, "b", 1, bs, b), 4, br));
  v = fuse_relu(g, v);
  fuse_output(g, v);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, &g_opt, &p), FUSE_OK);
  fuse_graph_destroy(g);
  memset(w, 0, sizeof w); /* the caller's weights go too */
  memset(b, 0, sizeof b);
  { /* reuse the freed memory so a dangling pointer would read garbage */
    void *junk[8];
    for (i = 0; i < 8; i++) { junk[i] = malloc(4096); memset(junk[i], 0x7f, 4096); }
    for (i = 0; i < 8; i++) free(junk[i]);
  }
  ref_conv2d(x, wc, want, 2, 3, 6, 6, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 3, 3);
  for (i = 0; i < 72; i++) {
    float bb[4] = {0.5f, -1.0f, 0.25f, 2.0f};
    float t = want[i] + bb[(i / 9) % 4];
    want[i] = t > 0 ? t : 0;
    y[i] = NAN;
  }
  in[0] = x; out[0] = y;
  if (p) {
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
    CHECK_NEAR_ARRAY(y, want, 72, TOL);
    for (i = 0; i < 72; i++) y[i] = NAN;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK); /* and again */
    CHECK_NEAR_ARRAY(y, want, 72, TOL);
    fuse_plan_destroy(p);
  }
}

/* The rest of the tests, by what they test: a part of this one program (one build of the
   implementation with the counting FUSE_MALLOC above). */
#include "run/memory.c"

/* -------------------------------------------------------------------- main -- */

static void run_op_tests(const char *suffix) {
  static const struct { const char *name; void (*fn)(void); } ops[] = {
      {"conv2d_awkward", test_conv2d_awkward},
      {"matmul_shapes", test_matmul_shapes},
      {"binary_broadcast_both_orders", test_binary_broadcast_both_orders},
      {"unary_relu_clip_sigmoid", test_unary_relu_clip_sigmoid},
      {"softmax_huge_inputs", test_softmax_huge_inputs},
      {"concat_axes", test_concat_axes},
      {"reshape_flatten", test_reshape_flatten},
      {"batch_norm_ranks", test_batch_norm_ranks},
      {"max_pool2d_cases", test_max_pool2d_cases},
      {"avg_pool2d_cases", test_avg_pool2d_cases},
      {"global_avg_pool2d_ranks", test_global_avg_pool2d_ranks},
  };
  static char names[sizeof ops / sizeof ops[0]][5][64];
  static int round;
  size_t i;
  for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    snprintf(names[i][round], sizeof names[i][round], "%s%s", ops[i].name, suffix);
    runner_run(names[i][round], ops[i].fn);
  }
  round++;
}

int main(void) {
  fuse_isa best = fuse_cpu_isa(), isa;
  test_default_free(test_default_malloc(1)); /* keeps the counters balanced and used */
  memset(&g_opt, 0, sizeof g_opt);
  run_op_tests(""); /* default options: the best ISA */
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa = (fuse_isa)(isa + 1)) {
    static const char *sfx[] = {"", "[scalar]", "[avx2]", "[avx512]", "[neon]"};
    if (isa > FUSE_ISA_SCALAR && isa != best && !(isa == FUSE_ISA_AVX2 && best == FUSE_ISA_AVX512))
      continue;
    g_opt.isa = isa;
    run_op_tests(sfx[isa]);
  }
  memset(&g_opt, 0, sizeof g_opt);
  g_opt.reference_kernels = 1; /* the oracle the kernel table is tested against */
  run_op_tests("[reference]");
  memset(&g_opt, 0, sizeof g_opt);
  RUN(input_output_order);
  RUN(output_consumed_later);
  RUN(aliased_outputs);
  RUN(graph_destroyed_after_compile);
  RUN(long_chain_workspace_reuse);
  RUN(diamond_graph_liveness);
  RUN(workspace_null_vs_caller);
  RUN(run_bad_arguments);
  RUN(concurrent_runs_bit_exact);
  RUN(run_allocates_nothing);
  RUN(allocator_failure_at_every_call);
  RUN(compile_errors);
  RUN(isa_selection);
  RUN(host_parallel_for);
  RUN(determinism);
  return runner_finish("run");
}
