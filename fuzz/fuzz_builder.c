/* libFuzzer target: the builder API driven by the fuzzer's bytes.

   The bytes are a small program: a header byte, then one opcode byte per builder call, each
   followed by the bytes its arguments take (dims, attributes, constants' data, which earlier
   value to use). Missing bytes read as zero, so every input is a program. In the normal mode
   the arguments are kept valid and small (dims 1..6), so most programs build a graph that
   runs; the header's "wild" bit lets raw values through instead (FUSE_NONE and foreign value
   ids, negative, zero and huge dims, ranks past FUSE_MAX_RANK, NaN / inf / reversed clip
   bounds, bad attributes, duplicate names), and then every call must either succeed or fail
   with a sticky status and a message.

   What a graph that builds goes through, with the checks that abort (a finding) when broken:
     - print, parse the printout, print again: the two listings are equal;
     - compile for the scalar ISA, unfused, and run: the reference outputs;
     - fuse_optimize ("fuse" or "dnnl"), or the default rules with allow_escaping through
       fuse_ops_by_pattern + fuse_merge_composites: OK (or out of memory);
     - compile again (ISA, threads through a host parallel_for, from the header) and run:
       every output element within the error bound this file tracks for it (the magnitude
       each op can reach and the rounding error it can add; inputs and constants are in
       [-1, 1]) of the reference;
     - the same plan run step by step (fuse_run_steps) in a caller's workspace filled with
       garbage gives the same bytes as fuse_run.
   A graph that fails to build: fuse_graph_error is not empty, and fuse_compile and
   fuse_optimize return its status.

   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_builder.c -lm */
#include "fuzz_common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

/* In the fuzzer a broken check aborts (the input is kept as a crash); replayed by
   tests/test_fuzz_regress.c it is counted and the run goes on. */
static long fuzz_builder_failures;
static void fb_fail(const char *what, int line) {
  fprintf(stderr, "fuzz_builder.c:%d: check failed: %s\n", line, what);
  fuzz_builder_failures++;
#ifndef FUZZ_REPLAY
  abort();
#endif
}
#define FB_CHECK(cond)                                 \
  do {                                                 \
    if (!(cond)) fb_fail(#cond, __LINE__);             \
  } while (0)

#define FB_MAX_IDS 1024   /* value ids this file tracks bounds for */
#define FB_POOL_SIZE 128  /* values a later call may use */
#define FB_MAX_CALLS 40   /* builder calls per input */
#define FB_RUN_LIMIT 4096 /* elements per input / output of a graph that runs */
#define FB_ROUND 1e-5     /* rounding error an op may add, relative to its magnitude */

typedef struct fb {
  const unsigned char *p, *end;
  fuse_graph *g;
  int wild;
  fuse_value pool[FB_POOL_SIZE];
  int npool, ninputs;
  double bound[FB_MAX_IDS]; /* max |value| an element can reach */
  double err[FB_MAX_IDS];   /* how far a correct fused run may be from the reference */
  float data[FB_RUN_LIMIT];
} fb;

static unsigned fb_byte(fb *s) { return s->p < s->end ? *s->p++ : 0u; }

static int fb_small(fb *s, int lo, int hi) { /* lo..hi */
  return lo + (int)(fb_byte(s) % (unsigned)(hi - lo + 1));
}

/* the value's bounds, or "unknown" (infinite) for ids this file did not see made */
static double fb_bound(const fb *s, fuse_value v) {
  return v >= 0 && v < FB_MAX_IDS ? s->bound[v] : HUGE_VAL;
}
static double fb_err(const fb *s, fuse_value v) {
  return v >= 0 && v < FB_MAX_IDS ? s->err[v] : HUGE_VAL;
}

/* Records a builder's result: its bounds, and the pool entry that later calls may pick. */
static fuse_value fb_made(fb *s, fuse_value v, double bound, double err) {
  if (v == FUSE_NONE) {
    FB_CHECK(fuse_graph_status(s->g) != FUSE_OK);
    FB_CHECK(fuse_graph_error(s->g)[0] != 0);
    return v;
  }
  FB_CHECK(fuse_graph_status(s->g) == FUSE_OK);
  FB_CHECK(fuse_value_rank(s->g, v) >= 0 && fuse_value_rank(s->g, v) <= FUSE_MAX_RANK);
  if (v >= 0 && v < FB_MAX_IDS) {
    s->bound[v] = bound;
    s->err[v] = err + FB_ROUND * bound;
  }
  if (s->npool < FB_POOL_SIZE) s->pool[s->npool++] = v;
  return v;
}

/* A wild integer: the edges of every range an argument has. */
static int64_t fb_wild_int(fb *s) {
  static const int64_t table[16] = {0, -1, 1, 2, 3, 4, 7, -2, 0x7fffffff, -0x7fffffff - 1,
                                    (int64_t)1 << 31, (int64_t)1 << 40, INT64_MAX, INT64_MIN,
                                    (int64_t)1 << 62, 1000000};
  unsigned b = fb_byte(s);
  return b < 240 ? (int64_t)(b % 9) - 1 : table[b % 16];
}
static int fb_wild_i32(fb *s) {
  int64_t v = fb_wild_int(s);
  return v > 0x7fffffff ? 0x7fffffff : v < -0x7fffffff - 1 ? -0x7fffffff - 1 : (int)v;
}
static float fb_wild_float(fb *s) {
  static const float table[12] = {0.0f, 1.0f, -1.0f, 6.0f, -0.0f, 0.5f, 1e30f, -1e30f,
                                  FLT_MIN, FLT_MAX, 0, 0};
  unsigned b = fb_byte(s);
  if (b % 16 == 12) return (float)NAN;
  if (b % 16 == 13) return (float)INFINITY;
  if (b % 16 == 14) return -(float)INFINITY;
  if (b % 16 == 15) return (float)((int)(b >> 4) - 8);
  return table[b % 16];
}

/* Picks an earlier value; wild programs also pass FUSE_NONE and ids that are not values. */
static fuse_value fb_pick(fb *s) {
  unsigned b = fb_byte(s);
  if (s->wild && b >= 250) {
    static const fuse_value odd[6] = {FUSE_NONE, -2, 100000, 0x7fffffff, -0x7fffffff - 1, 3};
    return odd[b - 250];
  }
  if (!s->npool) return FUSE_NONE;
  return s->pool[b % (unsigned)s->npool];
}

/* Picks an earlier value of rank >= min_rank (exactly `rank` when rank >= 0); FUSE_NONE when
   there is none. */
static fuse_value fb_pick_rank(fb *s, int min_rank, int rank) {
  int i, start;
  if (s->wild) return fb_pick(s);
  if (!s->npool) return FUSE_NONE;
  start = (int)(fb_byte(s) % (unsigned)s->npool);
  for (i = 0; i < s->npool; i++) {
    fuse_value v = s->pool[(start + i) % s->npool];
    int r = fuse_value_rank(s->g, v);
    if (r >= min_rank && (rank < 0 || r == rank)) return v;
  }
  return FUSE_NONE;
}

static int64_t fb_numel(const fuse_graph *g, fuse_value v) {
  int64_t n = 1;
  int k, r = fuse_value_rank(g, v);
  for (k = 0; k < r; k++) n *= fuse_value_shape(g, v)[k];
  return n;
}

/* A constant of the given shape with data from the bytes (values k/100, k in -100..100), or
   zeros when it is large. */
static fuse_value fb_constant(fb *s, int rank, const int64_t *shape, int positive) {
  int64_t n = 1, i;
  double m = 0;
  const float *data = NULL;
  int k;
  for (k = 0; k < rank; k++) {
    if (shape[k] < 1 || shape[k] > FB_RUN_LIMIT || n > FB_RUN_LIMIT) n = FB_RUN_LIMIT + 1;
    else n *= shape[k];
  }
  if (n <= FB_RUN_LIMIT) {
    unsigned seed = fb_byte(s) * 2654435761u + 12345u;
    for (i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      s->data[i] = positive ? 0.5f + (float)((seed >> 16) % 101) / 100.0f
                            : (float)((int)((seed >> 16) % 201) - 100) / 100.0f;
      if (fabs(s->data[i]) > m) m = fabs(s->data[i]);
    }
    data = s->data;
  }
  return fb_made(s, fuse_constant(s->g, NULL, rank, shape, data), m, 0);
}

static fuse_value fb_input(fb *s, int rank, const int64_t *shape) {
  char name[16];
  do /* a fresh name: FB_NAME may have taken one */
    snprintf(name, sizeof name, "in%d", s->ninputs++);
  while (fuse_graph_find(s->g, name) != FUSE_NONE);
  return fb_made(s, fuse_input(s->g, name, rank, shape), 1, 0);
}

/* A shape of `rank` dims, 1..6 each (wild: any of the edge values). */
static void fb_shape(fb *s, int rank, int64_t *shape) {
  int k;
  for (k = 0; k < rank && k < FUSE_MAX_RANK + 4; k++)
    shape[k] = s->wild ? fb_wild_int(s) : fb_small(s, 1, 6);
}

/* A 4-D value to convolve or pool: an earlier one, or a new input. */
static fuse_value fb_image(fb *s) {
  fuse_value x = fb_pick_rank(s, 4, 4);
  if (x == FUSE_NONE && !s->wild) {
    int64_t xs[4];
    xs[0] = fb_small(s, 1, 2);
    xs[1] = fb_small(s, 1, 4);
    xs[2] = fb_small(s, 3, 8);
    xs[3] = fb_small(s, 3, 8);
    x = fb_input(s, 4, xs);
  }
  return x;
}

enum {
  FB_INPUT, FB_CONST, FB_SCALAR, FB_CONV2D, FB_MATMUL, FB_ADD, FB_SUB, FB_MUL, FB_MAXIMUM,
  FB_MINIMUM, FB_RELU, FB_CLIP, FB_SIGMOID, FB_RESHAPE, FB_FLATTEN, FB_TRANSPOSE, FB_CONCAT,
  FB_SOFTMAX, FB_BATCH_NORM, FB_MAX_POOL, FB_AVG_POOL, FB_GLOBAL_POOL, FB_OUTPUT, FB_NAME,
  FB_OPS
};

static void fb_conv2d(fb *s) {
  fuse_conv2d_attrs a;
  fuse_value x = fb_image(s), w, y;
  int64_t ws[4], C, H, W;
  int k, mode, use_attrs;
  double b;
  memset(&a, 0, sizeof a);
  if (s->wild) {
    for (k = 0; k < 2; k++) a.strides[k] = fb_wild_i32(s), a.dilation[k] = fb_wild_i32(s);
    for (k = 0; k < 4; k++) a.padding[k] = fb_wild_i32(s);
    a.groups = fb_wild_i32(s);
    w = fb_byte(s) & 1 ? fb_pick(s) : fb_constant(s, 4, (fb_shape(s, 4, ws), ws), 0);
    fb_made(s, fuse_conv2d(s->g, x, w, fb_byte(s) == 7 ? NULL : &a), HUGE_VAL, HUGE_VAL);
    return;
  }
  if (x == FUSE_NONE) return;
  C = fuse_value_shape(s->g, x)[1];
  H = fuse_value_shape(s->g, x)[2];
  W = fuse_value_shape(s->g, x)[3];
  a.groups = fb_byte(s) % 3 == 0 ? (int)C : 1; /* depthwise or dense */
  ws[0] = (int64_t)a.groups * fb_small(s, 1, 3);
  ws[1] = C / a.groups;
  ws[2] = fb_small(s, 1, 3);
  ws[3] = fb_small(s, 1, 3);
  for (k = 0; k < 2; k++) {
    a.strides[k] = fb_small(s, 0, 2); /* 0: the default */
    a.dilation[k] = fb_small(s, 0, 2);
  }
  for (k = 0; k < 4; k++) a.padding[k] = fb_small(s, 0, 2);
  use_attrs = fb_byte(s) & 1;
  if (!use_attrs) { /* NULL attributes: the defaults */
    int groups = a.groups;
    memset(&a, 0, sizeof a);
    a.groups = groups;
  }
  /* the kernel's extent must fit the padded input */
  if ((a.dilation[0] > 1 ? a.dilation[0] : 1) * (ws[2] - 1) + 1 > H + a.padding[0] + a.padding[2])
    ws[2] = 1;
  if ((a.dilation[1] > 1 ? a.dilation[1] : 1) * (ws[3] - 1) + 1 > W + a.padding[1] + a.padding[3])
    ws[3] = 1;
  mode = (int)(fb_byte(s) % 8);
  w = mode == 0 ? fb_input(s, 4, ws) : fb_constant(s, 4, ws, 0); /* weights as an input: slow path */
  b = fb_bound(s, x) * fb_bound(s, w) * (double)(ws[1] * ws[2] * ws[3]);
  y = fb_made(s, fuse_conv2d(s->g, x, w, use_attrs || a.groups > 1 ? &a : NULL),
              b, (fb_err(s, x) * fb_bound(s, w) + fb_bound(s, x) * fb_err(s, w)) *
                     (double)(ws[1] * ws[2] * ws[3]));
  if (y == FUSE_NONE || mode < 4) return;
  { /* a bias in one of its forms, on either side: what the fusion rules look for */
    int64_t bs[4], K = ws[0], OW = fuse_value_shape(s->g, y)[3];
    int form = (int)(fb_byte(s) % 4);
    fuse_value bias;
    bs[0] = 1;
    bs[1] = ws[0];
    bs[2] = bs[3] = 1;
    if (form == 0) bias = fb_constant(s, 4, bs, 0);
    else if (form == 1) bias = fb_constant(s, 3, bs + 1, 0);
    else {
      bias = fb_constant(s, 1, bs + 1, 0);
      if (form == 3) bias = fb_made(s, fuse_reshape(s->g, bias, 4, bs), 1, 0);
    }
    /* a [K] bias broadcasts along the width: only when it fits (and is then no bias) */
    if (bias == FUSE_NONE || (fuse_value_rank(s->g, bias) == 1 && K != 1 && OW != 1 && K != OW))
      return;
    y = fb_made(s, mode & 1 ? fuse_add(s->g, y, bias) : fuse_add(s->g, bias, y),
                fb_bound(s, y) + 1, fb_err(s, y));
    if (y != FUSE_NONE && mode >= 6)
      fb_made(s, mode == 6 ? fuse_relu(s->g, y) : fuse_clip(s->g, y, 0.0f, 6.0f), fb_bound(s, y),
              fb_err(s, y));
  }
}

static void fb_matmul(fb *s) {
  fuse_value a = fb_pick_rank(s, 1, -1), b;
  int64_t bs[3], K;
  int rb;
  if (s->wild) {
    fb_made(s, fuse_matmul(s->g, a, fb_pick(s)), HUGE_VAL, HUGE_VAL);
    return;
  }
  if (a == FUSE_NONE) return;
  K = fuse_value_shape(s->g, a)[fuse_value_rank(s->g, a) - 1];
  rb = fb_small(s, 1, 3);
  if (rb == 1) bs[0] = K;
  else if (rb == 2) bs[0] = K, bs[1] = fb_small(s, 1, 6);
  else bs[0] = 1, bs[1] = K, bs[2] = fb_small(s, 1, 6);
  b = fb_byte(s) % 4 == 0 ? fb_input(s, rb, bs) : fb_constant(s, rb, bs, 0);
  fb_made(s, fuse_matmul(s->g, a, b),
          fb_bound(s, a) * fb_bound(s, b) * (double)K,
          (fb_err(s, a) * fb_bound(s, b) + fb_bound(s, a) * fb_err(s, b)) * (double)K);
}

/* The second operand of a binary op: the same value, a constant that broadcasts against a
   (some dims 1, leading dims dropped), a scalar, or an earlier value of a's shape. */
static fuse_value fb_other(fb *s, fuse_value a) {
  int mode = (int)(fb_byte(s) % 4), r = fuse_value_rank(s->g, a), k, drop;
  int64_t shape[FUSE_MAX_RANK];
  if (mode == 0) return a;
  if (mode == 1) return fb_made(s, fuse_scalar(s->g, (float)fb_small(s, -8, 8) / 8.0f), 1, 0);
  if (mode == 3) {
    fuse_value b = fb_pick_rank(s, r, r);
    if (b != FUSE_NONE && memcmp(fuse_value_shape(s->g, a), fuse_value_shape(s->g, b),
                                 (size_t)r * sizeof(int64_t)) == 0)
      return b;
  }
  drop = r ? fb_small(s, 0, r) : 0;
  for (k = drop; k < r; k++) shape[k - drop] = fb_byte(s) & 1 ? fuse_value_shape(s->g, a)[k] : 1;
  return fb_constant(s, r - drop, shape, 0);
}

static void fb_binary(fb *s, int op) {
  fuse_value a = s->wild ? fb_pick(s) : fb_pick_rank(s, 0, -1), b, y;
  double ba, bb, ea, eb;
  if (a == FUSE_NONE && !s->wild) return;
  b = s->wild ? fb_pick(s) : fb_other(s, a);
  if (b == FUSE_NONE && !s->wild) return;
  if (fb_byte(s) & 1) { /* either operand order */
    fuse_value t = a;
    a = b;
    b = t;
  }
  ba = fb_bound(s, a), bb = fb_bound(s, b), ea = fb_err(s, a), eb = fb_err(s, b);
  switch (op) {
  case FB_ADD: y = fuse_add(s->g, a, b); break;
  case FB_SUB: y = fuse_sub(s->g, a, b); break;
  case FB_MUL: y = fuse_mul(s->g, a, b); break;
  case FB_MAXIMUM: y = fuse_maximum(s->g, a, b); break;
  default: y = fuse_minimum(s->g, a, b); break;
  }
  if (op == FB_MUL) fb_made(s, y, ba * bb, ea * bb + ba * eb);
  else if (op == FB_ADD || op == FB_SUB) fb_made(s, y, ba + bb, ea + eb);
  else fb_made(s, y, ba > bb ? ba : bb, ea > eb ? ea : eb);
}

static void fb_reshape(fb *s, fuse_value x) {
  int64_t shape[FUSE_MAX_RANK + 4], n;
  int r = fuse_value_rank(s->g, x), rank = 1, k;
  const int64_t *d = fuse_value_shape(s->g, x);
  if (s->wild) {
    rank = fb_small(s, -1, FUSE_MAX_RANK + 2);
    fb_shape(s, rank, shape);
    if (fb_byte(s) & 1 && rank > 0) shape[fb_byte(s) % (unsigned)rank] = -1;
    fb_made(s, fuse_reshape(s->g, x, rank, fb_byte(s) == 9 ? NULL : shape), fb_bound(s, x),
            fb_err(s, x));
    return;
  }
  n = fb_numel(s->g, x);
  switch (fb_byte(s) % 6) {
  case 0: shape[0] = -1; break;
  case 1: rank = 2, shape[0] = 1, shape[1] = -1; break;
  case 2: shape[0] = n; break;
  case 3: /* the dims reversed */
    rank = r;
    for (k = 0; k < r; k++) shape[k] = d[r - 1 - k];
    break;
  case 4: /* [1, n, 1, 1]: the bias form */
    rank = 4, shape[0] = 1, shape[1] = n, shape[2] = shape[3] = 1;
    break;
  default: /* the first dim kept, the rest inferred */
    if (r) rank = 2, shape[0] = d[0], shape[1] = -1;
    else shape[0] = 1;
    break;
  }
  fb_made(s, fuse_reshape(s->g, x, rank, shape), fb_bound(s, x), fb_err(s, x));
}

static void fb_pool(fb *s, int op) {
  fuse_pool2d_attrs a;
  fuse_value x = fb_image(s);
  int k;
  memset(&a, 0, sizeof a);
  if (s->wild) {
    for (k = 0; k < 2; k++) {
      a.kernel[k] = fb_wild_i32(s);
      a.strides[k] = fb_wild_i32(s);
      a.dilation[k] = fb_wild_i32(s);
    }
    for (k = 0; k < 4; k++) a.padding[k] = fb_wild_i32(s);
    a.ceil_mode = fb_wild_i32(s);
    a.count_include_pad = fb_wild_i32(s);
  } else {
    if (x == FUSE_NONE) return;
    for (k = 0; k < 2; k++) {
      int64_t in = fuse_value_shape(s->g, x)[2 + k], eff;
      a.kernel[k] = fb_small(s, 1, 3);
      a.strides[k] = fb_small(s, 0, 3);
      a.dilation[k] = op == FB_MAX_POOL ? fb_small(s, 0, 2) : 1;
      eff = (int64_t)(a.dilation[k] ? a.dilation[k] : 1) * (a.kernel[k] - 1) + 1;
      a.padding[k] = fb_small(s, 0, (int)eff - 1);
      a.padding[k + 2] = fb_small(s, 0, (int)eff - 1);
      if (eff > in + a.padding[k] + a.padding[k + 2]) a.kernel[k] = 1, a.padding[k] = a.padding[k + 2] = 0;
    }
    a.ceil_mode = fb_byte(s) & 1;
    a.count_include_pad = fb_byte(s) & 1;
  }
  fb_made(s, op == FB_MAX_POOL ? fuse_max_pool2d(s->g, x, fb_byte(s) == 3 && s->wild ? NULL : &a)
                               : fuse_avg_pool2d(s->g, x, &a),
          fb_bound(s, x), fb_err(s, x));
}

static void fb_concat(fb *s) {
  fuse_value xs[4], x = fb_pick_rank(s, 1, -1);
  int n = fb_small(s, 1, 4), i, r, axis;
  double b, e;
  if (x == FUSE_NONE && !s->wild) return;
  r = fuse_value_rank(s->g, x);
  axis = s->wild ? fb_wild_i32(s) : fb_small(s, -r, r - 1);
  xs[0] = x;
  b = fb_bound(s, x), e = fb_err(s, x);
  for (i = 1; i < n; i++) {
    fuse_value y = s->wild ? fb_pick(s) : fb_pick_rank(s, r, r);
    int d, ok = y != FUSE_NONE;
    for (d = 0; ok && !s->wild && d < r; d++)
      ok = d == (axis < 0 ? axis + r : axis) || fuse_value_shape(s->g, y)[d] == fuse_value_shape(s->g, x)[d];
    xs[i] = ok ? y : x;
    if (fb_bound(s, xs[i]) > b) b = fb_bound(s, xs[i]);
    if (fb_err(s, xs[i]) > e) e = fb_err(s, xs[i]);
  }
  fb_made(s, fuse_concat(s->g, s->wild ? fb_wild_i32(s) % 5 : n, xs, axis), b, e);
}

static void fb_batch_norm(fb *s) {
  fuse_value x = fb_pick_rank(s, 2, -1), p[4];
  int64_t C;
  int k;
  float eps;
  if (s->wild) {
    for (k = 0; k < 4; k++) p[k] = fb_pick(s);
    fb_made(s, fuse_batch_norm(s->g, x, p[0], p[1], p[2], p[3], fb_wild_float(s)), HUGE_VAL,
            HUGE_VAL);
    return;
  }
  if (x == FUSE_NONE) return;
  C = fuse_value_shape(s->g, x)[1];
  for (k = 0; k < 4; k++) p[k] = fb_constant(s, 1, &C, k == 3); /* var in [0.5, 1.5] */
  eps = fb_byte(s) & 1 ? 1e-5f : 0.0f;
  /* |(x - mean) / sqrt(var + eps) * scale + bias| <= (|x| + 1) * sqrt(2) + 1 */
  fb_made(s, fuse_batch_norm(s->g, x, p[0], p[1], p[2], p[3], eps),
          (fb_bound(s, x) + 1) * 1.5 + 1, fb_err(s, x) * 1.5);
}

static void fb_call(fb *s, int op) {
  int64_t shape[FUSE_MAX_RANK + 4];
  fuse_value x;
  int r, k;
  switch (op) {
  case FB_INPUT:
  case FB_CONST:
    r = s->wild ? fb_small(s, -1, FUSE_MAX_RANK + 2) : fb_small(s, 0, 4);
    fb_shape(s, r, shape);
    if (op == FB_INPUT) {
      unsigned b = s->wild ? fb_byte(s) : 0;
      if (b == 5) fb_made(s, fuse_input(s->g, "in0", r, shape), 1, 0); /* a name again */
      else if (b == 6) fb_made(s, fuse_input(s->g, NULL, r, shape), 1, 0);
      else if (b == 7) fb_made(s, fuse_input(s->g, "nullshape", r, NULL), 1, 0);
      else fb_input(s, r, shape);
    } else {
      fb_constant(s, r, shape, 0);
    }
    break;
  case FB_SCALAR:
  {
    float v = s->wild ? fb_wild_float(s) : (float)fb_small(s, -8, 8) / 8.0f;
    fb_made(s, fuse_scalar(s->g, v), isfinite(v) ? fabs(v) : HUGE_VAL, 0);
    break;
  }
  case FB_CONV2D: fb_conv2d(s); break;
  case FB_MATMUL: fb_matmul(s); break;
  case FB_ADD:
  case FB_SUB:
  case FB_MUL:
  case FB_MAXIMUM:
  case FB_MINIMUM: fb_binary(s, op); break;
  case FB_RELU:
  case FB_SIGMOID:
    x = fb_pick(s);
    if (x == FUSE_NONE && !s->wild) break;
    if (op == FB_RELU) fb_made(s, fuse_relu(s->g, x), fb_bound(s, x), fb_err(s, x));
    else fb_made(s, fuse_sigmoid(s->g, x), 1, fb_err(s, x) / 4);
    break;
  case FB_CLIP: {
    float lo, hi;
    double b;
    x = fb_pick(s);
    if (x == FUSE_NONE && !s->wild) break;
    if (s->wild) {
      lo = fb_wild_float(s), hi = fb_wild_float(s);
    } else {
      lo = (float)fb_small(s, -8, 8) / 4.0f;
      hi = fb_byte(s) % 5 == 0 ? (float)INFINITY : lo + (float)fb_small(s, 0, 8) / 4.0f;
      if (fb_byte(s) % 5 == 0) lo = -(float)INFINITY;
    }
    b = fb_bound(s, x);
    if (isfinite(lo) && fabs(lo) > b) b = fabs(lo);
    if (isfinite(hi) && fabs(hi) > b) b = fabs(hi);
    fb_made(s, fuse_clip(s->g, x, lo, hi), b, fb_err(s, x));
    break;
  }
  case FB_RESHAPE:
    x = fb_pick(s);
    if (x != FUSE_NONE || s->wild) fb_reshape(s, x);
    break;
  case FB_FLATTEN:
    x = fb_pick(s);
    if (x == FUSE_NONE && !s->wild) break;
    r = fuse_value_rank(s->g, x);
    fb_made(s, fuse_flatten(s->g, x, s->wild ? fb_wild_i32(s) : fb_small(s, -r, r)),
            fb_bound(s, x), fb_err(s, x));
    break;
  case FB_TRANSPOSE: {
    int perm[FUSE_MAX_RANK];
    x = fb_pick(s);
    if (x == FUSE_NONE && !s->wild) break;
    r = fuse_value_rank(s->g, x);
    for (k = 0; k < FUSE_MAX_RANK; k++) perm[k] = k;
    for (k = r - 1; k > 0; k--) { /* a permutation from the bytes */
      int j = (int)(fb_byte(s) % (unsigned)(k + 1)), t = perm[k];
      perm[k] = perm[j];
      perm[j] = t;
    }
    if (s->wild && r > 0 && fb_byte(s) & 1) perm[fb_byte(s) % (unsigned)r] = fb_wild_i32(s);
    fb_made(s, fuse_transpose(s->g, x, fb_byte(s) % 4 == 0 ? NULL : perm), fb_bound(s, x),
            fb_err(s, x));
    break;
  }
  case FB_CONCAT: fb_concat(s); break;
  case FB_SOFTMAX:
    x = s->wild ? fb_pick(s) : fb_pick_rank(s, 1, -1);
    if (x == FUSE_NONE && !s->wild) break;
    r = fuse_value_rank(s->g, x);
    { /* inputs off by d move an output by at most exp(2 d) - 1 (and it stays in [0, 1]) */
      double d = fb_err(s, x), e = d < 0.5 ? exp(2 * d) - 1 : 1;
      fb_made(s, fuse_softmax(s->g, x, s->wild ? fb_wild_i32(s) : fb_small(s, -r, r - 1)), 1, e);
    }
    break;
  case FB_BATCH_NORM: fb_batch_norm(s); break;
  case FB_MAX_POOL:
  case FB_AVG_POOL: fb_pool(s, op); break;
  case FB_GLOBAL_POOL:
    x = s->wild ? fb_pick(s) : fb_pick_rank(s, 3, -1);
    if (x == FUSE_NONE && !s->wild) x = fb_image(s);
    fb_made(s, fuse_global_avg_pool2d(s->g, x), fb_bound(s, x), fb_err(s, x));
    break;
  case FB_OUTPUT:
    x = fb_pick(s);
    if (x == FUSE_NONE && !s->wild) break;
    if (fuse_output(s->g, x) != FUSE_OK) FB_CHECK(fuse_graph_error(s->g)[0] != 0);
    break;
  default: { /* FB_NAME: names from a small set, so that they clash */
    static const char *const names[6] = {"a", "in0", "b.c", "with space", "", "%x"};
    const char *name = names[fb_byte(s) % 6];
    fuse_result r2;
    x = fb_pick(s);
    if (!s->wild && (x == FUSE_NONE || !name[0] || fuse_graph_find(s->g, name) != FUSE_NONE)) break;
    r2 = fuse_value_set_name(s->g, x, name);
    if (r2 != FUSE_OK) FB_CHECK(fuse_graph_status(s->g) == r2 && fuse_graph_error(s->g)[0]);
    else FB_CHECK(fuse_graph_find(s->g, name) == x);
    break;
  }
  }
}

/* ------------------------------------------------------------ after building -- */

typedef struct fb_text {
  char *p;
  size_t len, cap;
  int failed;
} fb_text;

static void fb_text_write(void *user, const char *t, size_t n) {
  fb_text *b = (fb_text *)user;
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = (b->len + n + 1) * 2;
    char *q = (char *)realloc(b->p, cap);
    if (!q) {
      b->failed = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, t, n);
  b->len += n;
  b->p[b->len] = 0;
}

/* print(parse(print(g))) == print(g) */
static void fb_roundtrip(const fuse_graph *g) {
  fb_text t1, t2;
  fuse_graph *g2 = NULL;
  memset(&t1, 0, sizeof t1);
  memset(&t2, 0, sizeof t2);
  if (fuse_graph_write(g, fb_text_write, &t1) == FUSE_OK && !t1.failed && t1.p) {
    fuse_result r = fuse_graph_parse(t1.p, NULL, &g2);
    FB_CHECK(r == FUSE_OK || r == FUSE_ERROR_OUT_OF_MEMORY);
    if (r != FUSE_OK && g2) fprintf(stderr, "parse: %s\n%s", fuse_graph_error(g2), t1.p);
    if (r == FUSE_OK && fuse_graph_write(g2, fb_text_write, &t2) == FUSE_OK && !t2.failed) {
      FB_CHECK(t2.p && strcmp(t1.p, t2.p) == 0);
      FB_CHECK(fuse_graph_op_count(g2) == fuse_graph_op_count(g));
    }
  }
  fuse_graph_destroy(g2);
  free(t1.p);
  free(t2.p);
}

/* a host job system that runs the chunks one after another, last first */
static void fb_parallel_for(void *user, fuse_task_fn task, void *ctx, int n) {
  int i;
  (void)user;
  for (i = n - 1; i >= 0; i--) task(ctx, i, i + 1);
}

/* Compiles g and runs it: outs[i] gets output i (calloc'd), NULL when the graph is too big to
   run. With `steps`, also runs the plan step by step in a garbage-filled caller workspace and
   checks that the bytes agree with fuse_run. Returns 1 when it ran. */
static int fb_run(const fuse_graph *g, const fuse_compile_options *opt, float **outs, int steps) {
  fuse_plan *p = NULL;
  float *ins[FUZZ_MAX_IO], *again[FUZZ_MAX_IO];
  const float *cins[FUZZ_MAX_IO];
  int64_t counts[FUZZ_MAX_IO];
  int n_in = fuse_graph_input_count(g), n_out = fuse_graph_output_count(g), i, ok = 1;
  fuse_result r = fuse_compile(g, opt, &p);
  if (r != FUSE_OK) {
    FB_CHECK(r == FUSE_ERROR_OUT_OF_MEMORY);
    return 0;
  }
  if (n_in > FUZZ_MAX_IO || n_out > FUZZ_MAX_IO) ok = 0;
  for (i = 0; i < FUZZ_MAX_IO; i++) ins[i] = outs[i] = again[i] = NULL;
  for (i = 0; ok && i < n_in; i++) {
    long n = fuzz_numel(g, fuse_graph_input(g, i), FB_RUN_LIMIT), k;
    ins[i] = n >= 0 ? (float *)malloc(((size_t)n + 1) * sizeof(float)) : NULL;
    if (!ins[i]) ok = 0;
    for (k = 0; ok && k < n; k++) ins[i][k] = (float)((k * 7 + i * 13) % 17 - 8) / 8.0f;
    cins[i] = ins[i];
  }
  for (i = 0; ok && i < n_out; i++) {
    long n = fuzz_numel(g, fuse_graph_output(g, i), FB_RUN_LIMIT);
    counts[i] = n;
    outs[i] = n >= 0 ? (float *)calloc((size_t)n + 1, sizeof(float)) : NULL;
    again[i] = n >= 0 ? (float *)calloc((size_t)n + 1, sizeof(float)) : NULL;
    if (!outs[i] || !again[i]) ok = 0;
  }
  if (ok && fuse_plan_workspace_size(p) > ((size_t)16 << 20)) ok = 0;
  if (ok) FB_CHECK(fuse_run(p, cins, outs, NULL) == FUSE_OK);
  if (ok && steps) {
    size_t ws = fuse_plan_workspace_size(p);
    unsigned char *raw = (unsigned char *)malloc(ws + 64), *w;
    int k;
    if (raw) {
      w = raw + (64 - (uintptr_t)raw % 64) % 64;
      memset(w, 0xA5, ws); /* nothing may be read before it is written */
      for (k = 0; k < fuse_plan_step_count(p); k++)
        FB_CHECK(fuse_run_steps(p, cins, again, w, k, 1) == FUSE_OK);
      for (i = 0; i < n_out; i++)
        FB_CHECK(memcmp(outs[i], again[i], (size_t)counts[i] * sizeof(float)) == 0);
      free(raw);
    }
  }
  for (i = 0; i < FUZZ_MAX_IO; i++) {
    free(ins[i]);
    free(again[i]);
    if (!ok) {
      free(outs[i]);
      outs[i] = NULL;
    }
  }
  fuse_plan_destroy(p);
  return ok;
}

static int fuzz_builder(const unsigned char *data, size_t size) {
  static fb s; /* large; one input at a time */
  unsigned head;
  int calls, i, n_out;
  float *ref[FUZZ_MAX_IO], *got[FUZZ_MAX_IO];
  double out_bound[FUZZ_MAX_IO], out_err[FUZZ_MAX_IO];
  fuse_compile_options scalar, opt;
  fuse_result st;
  fuzz_cap = (size_t)64 << 20;
  memset(&s, 0, sizeof s);
  s.p = data;
  s.end = data + size;
  head = fb_byte(&s);
  s.wild = (head & 0x80) != 0;
  s.g = fuse_graph_create(NULL);
  if (!s.g) return 0;
  for (i = 0; i < FB_MAX_IDS; i++) s.bound[i] = s.err[i] = HUGE_VAL;
  for (calls = 0; calls < FB_MAX_CALLS && s.p < s.end; calls++) {
    fuse_result before = fuse_graph_status(s.g);
    fb_call(&s, (int)(fb_byte(&s) % FB_OPS));
    if (before != FUSE_OK) FB_CHECK(fuse_graph_status(s.g) == before); /* the first error sticks */
  }
  st = fuse_graph_status(s.g);
  if (st != FUSE_OK) { /* a graph that failed to build stays failed */
    fuse_plan *p = NULL;
    FB_CHECK(fuse_graph_error(s.g)[0] != 0);
    FB_CHECK(fuse_compile(s.g, NULL, &p) == st && p == NULL);
    FB_CHECK(fuse_optimize(s.g, NULL) == st);
    FB_CHECK(fuse_graph_status(s.g) == st);
    fuse_graph_destroy(s.g);
    return 0;
  }
  if (fuse_graph_output_count(s.g) == 0 && s.npool) fuse_output(s.g, s.pool[s.npool - 1]);
  if (fuse_graph_output_count(s.g) == 0 || fuse_graph_status(s.g) != FUSE_OK) {
    fuse_graph_destroy(s.g);
    return 0;
  }
  fb_roundtrip(s.g);
  if (getenv("FUZZ_VERBOSE")) fuse_graph_print(s.g, stderr);
  n_out = fuse_graph_output_count(s.g);
  for (i = 0; i < n_out && i < FUZZ_MAX_IO; i++) {
    fuse_value v = fuse_graph_output(s.g, i);
    out_bound[i] = fb_bound(&s, v);
    out_err[i] = fb_err(&s, v);
  }
  memset(&scalar, 0, sizeof scalar);
  scalar.isa = FUSE_ISA_SCALAR;
  memset(&opt, 0, sizeof opt);
  opt.isa = (fuse_isa)((head >> 1) & 3); /* auto, scalar, avx2, avx512: one the CPU lacks is */
  if (opt.isa > FUSE_ISA_SCALAR && opt.isa != fuse_cpu_isa() && /* its best (NEON on ARM) */
      !(opt.isa == FUSE_ISA_AVX2 && fuse_cpu_isa() == FUSE_ISA_AVX512))
    opt.isa = fuse_cpu_isa();
  if (head & 8) {
    opt.parallel_for = fb_parallel_for;
    opt.num_threads = 1 + (int)((head >> 4) & 3);
  }
  if (!fb_run(s.g, &scalar, ref, 0)) {
    fuse_graph_destroy(s.g);
    return 0;
  }
  /* fuse, then the same numbers within the bounds */
  if (head & 0x40) {
    const fuse_rule *rules;
    fuse_pattern_options po;
    int n = fuse_rules_default(head & 1 ? "dnnl" : "fuse", &rules);
    memset(&po, 0, sizeof po);
    po.allow_escaping = 1;
    st = fuse_ops_by_pattern(s.g, rules, n, &po);
    if (st == FUSE_OK) st = fuse_merge_composites(s.g);
  } else {
    st = fuse_optimize(s.g, head & 1 ? "dnnl" : "fuse");
  }
  FB_CHECK(st == FUSE_OK || st == FUSE_ERROR_OUT_OF_MEMORY);
  for (i = 0; i < fuse_composite_count(s.g); i++) {
    fuse_composite_info info;
    FB_CHECK(fuse_composite_get(s.g, i, &info) == FUSE_OK);
  }
  if (st == FUSE_OK) fb_roundtrip(s.g);
  if (getenv("FUZZ_VERBOSE")) fuse_graph_print(s.g, stderr);
  if (st == FUSE_OK && fb_run(s.g, &opt, got, 1)) {
    for (i = 0; i < n_out && i < FUZZ_MAX_IO; i++) {
      long n = fuzz_numel(s.g, fuse_graph_output(s.g, i), FB_RUN_LIMIT), k;
      double tol = out_err[i] + 1e-6;
      if (!(out_bound[i] < 1e6) || !(tol < 1e6)) continue; /* too loose to say anything */
      for (k = 0; k < n; k++) {
        double d = fabs((double)got[i][k] - (double)ref[i][k]);
        if (got[i][k] == ref[i][k] || (got[i][k] != got[i][k] && ref[i][k] != ref[i][k]))
          continue; /* equal, also as infinities (an all-padding max-pool window) or NaNs */
        if (!(d <= tol)) {
          fprintf(stderr, "output %d element %ld: fused %.9g, unfused scalar %.9g, bound %g\n", i,
                  k, (double)got[i][k], (double)ref[i][k], tol);
          FB_CHECK(d <= tol);
          break;
        }
      }
    }
    for (i = 0; i < FUZZ_MAX_IO; i++) free(got[i]);
  }
  for (i = 0; i < FUZZ_MAX_IO; i++) free(ref[i]);
  fuse_graph_destroy(s.g);
  return 0;
}
FUZZ_TARGET(fuzz_builder)
