/* test_vmath.c - the math functions of the vector layers (src/kernels/vmath.inc: exp, expm1,
   log, log1p, tanh, sigmoid, erf) on each instruction set compiled in and supported by the CPU
   (AVX-512, AVX2, NEON, the scalar twin), against libm in double.

   Each result is compared with the double reference d: its error in ulps is
   |result - d| / ulp(d), the ulp of a float of d's magnitude (2^-149 in the denormals; an
   infinite result counts as 2^128 where d is finite), and must stay within the function's bound
   (BOUND below; README.md, "Math functions"). Where d is NaN the result must be NaN, and the
   reverse; where d is exactly +-0, +-1 or +-inf the result must be the same float, the sign of
   a zero included (exp(-inf) = 0, tanh(-0) = -0, erf(+-inf) = +-1, sigmoid(+inf) = 1, ...).
   Named special values are checked once more, one by one (special_values).

     test_vmath                 the quick part (`make test`): edge cases and a few million
                                random inputs, per function and instruction set
     test_vmath --exhaustive    all 2^32 floats (`make test-vmath`), split over --threads N
                                (default 2); the reference is computed once per block of 2^16
                                inputs and every instruction set is compared with it. Prints per
                                function and instruction set the largest error, its input and
                                the time spent.
     test_vmath --every K       the same on one block in K (a sample, for a quick look)
     test_vmath --bench         ns per element of each function and instruction set.

   Build (from the repository root):
     cc -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror -I. tests/test_vmath.c -o /tmp/tv -lm -lpthread */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FUSE_IMPLEMENTATION
#include "../fuse.h"
#include "runner.h"

/* The header's SIMD instances exist (its FUSE__SIMD, undefined at the header's end). */
#if !defined(FUSE_NO_SIMD) && (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__)) && (!defined(FUSE_NO_AVX2) || !defined(FUSE_NO_AVX512))
#include <immintrin.h>
#if !defined(FUSE_NO_AVX512)
#define TEST_AVX512 1
#endif
#if !defined(FUSE_NO_AVX2)
#define TEST_AVX2 1
#endif
#endif
/* its NEON instance (FUSE__NEON: aarch64, armv7 with NEON and FMA) */
#if !defined(FUSE_NO_SIMD) && !defined(FUSE_NO_NEON) && \
    (defined(__GNUC__) || defined(__clang__)) && !defined(__ARM_BIG_ENDIAN) && \
    (defined(__aarch64__) || (defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)))
#define TEST_NEON 1
#endif
/* armv7's NEON flushes denormal inputs and results to zero whatever the FPSCR says (aarch64's
   does not): a result there may also be that of the flushed input (a denormal x as a zero of
   its sign), and a zero is accepted where the exact result is below twice the smallest normal
   float (expm1 halves its result on the way; exp's last product may round up from below) */
#if defined(TEST_NEON) && !defined(__aarch64__)
#define TEST_NEON_FLUSHES 1
#endif

enum { EXP, EXPM1, LOG, LOG1P, TANH, SIGMOID, ERF, FUNCTIONS };
static const char *const function_name[FUNCTIONS] = {"exp",  "expm1",   "log", "log1p",
                                                     "tanh", "sigmoid", "erf"};
/* the largest error allowed, in ulps (README.md states the same bounds): over all 2^32 inputs
   the largest seen on any instruction set, rounded up to the next half ulp at least 0.05 away */
static const double BOUND[FUNCTIONS] = {1.5, 2.0, 1.5, 1.5, 1.5, 2.5, 2.5};

enum { SCALAR, AVX2, AVX512, NEON, ISAS };
static const char *const isa_name[ISAS] = {"scalar", "avx2", "avx512", "neon"};
static int isa_have[ISAS];

#define BLOCK 65536 /* inputs per block, a multiple of every vector width */

/* ------------------------------------------------------------ the reference -- */

static double reference(int f, double x) {
  switch (f) {
  case EXP: return exp(x);
  case EXPM1: return expm1(x);
  case LOG: return log(x);
  case LOG1P: return log1p(x);
  case TANH: return tanh(x);
  case SIGMOID: return 1.0 / (1.0 + exp(-x));
  default: return erf(x);
  }
}

/* ------------------------------------------------ the functions under test -- */

/* out[i] = f(in[i]) for i < n, n a multiple of 16, on one instruction set */
#define APPLY_CASES(SUFFIX, WIDTH, LOAD, STORE)                                           \
  case EXP: for (i = 0; i < n; i += WIDTH) STORE(out + i, fuse__vexp_##SUFFIX(LOAD(in + i))); break;     \
  case EXPM1: for (i = 0; i < n; i += WIDTH) STORE(out + i, fuse__vexpm1_##SUFFIX(LOAD(in + i))); break; \
  case LOG: for (i = 0; i < n; i += WIDTH) STORE(out + i, fuse__vlog_##SUFFIX(LOAD(in + i))); break;     \
  case LOG1P: for (i = 0; i < n; i += WIDTH) STORE(out + i, fuse__vlog1p_##SUFFIX(LOAD(in + i))); break; \
  case TANH: for (i = 0; i < n; i += WIDTH) STORE(out + i, fuse__vtanh_##SUFFIX(LOAD(in + i))); break;   \
  case SIGMOID: for (i = 0; i < n; i += WIDTH) STORE(out + i, fuse__vsigmoid_##SUFFIX(LOAD(in + i))); break; \
  default: for (i = 0; i < n; i += WIDTH) STORE(out + i, fuse__verf_##SUFFIX(LOAD(in + i))); break;

#define SCALAR_LOAD(p) (*(p))
#define SCALAR_STORE(p, v) (*(p) = (v))
static void apply_scalar(int f, const float *in, float *out, size_t n) {
  size_t i;
  switch (f) { APPLY_CASES(scalar, 1, SCALAR_LOAD, SCALAR_STORE) }
}
#ifdef TEST_AVX2
__attribute__((target("avx2,fma"))) static void apply_avx2(int f, const float *in, float *out,
                                                           size_t n) {
  size_t i;
  switch (f) { APPLY_CASES(avx2, 8, _mm256_loadu_ps, _mm256_storeu_ps) }
}
#endif
#ifdef TEST_AVX512
__attribute__((target("avx512f"))) static void apply_avx512(int f, const float *in, float *out,
                                                            size_t n) {
  size_t i;
  switch (f) { APPLY_CASES(avx512, 16, _mm512_loadu_ps, _mm512_storeu_ps) }
}
#endif

#ifdef TEST_NEON
static void apply_neon(int f, const float *in, float *out, size_t n) {
  size_t i;
  switch (f) { APPLY_CASES(neon, 4, vld1q_f32, vst1q_f32) }
}
#endif

static void apply(int isa, int f, const float *in, float *out, size_t n) {
#ifdef TEST_NEON
  if (isa == NEON) {
    apply_neon(f, in, out, n);
    return;
  }
#endif
#ifdef TEST_AVX512
  if (isa == AVX512) {
    apply_avx512(f, in, out, n);
    return;
  }
#endif
#ifdef TEST_AVX2
  if (isa == AVX2) {
    apply_avx2(f, in, out, n);
    return;
  }
#endif
  (void)isa;
  apply_scalar(f, in, out, n);
}

/* ------------------------------------------------------------- comparison -- */

static uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static float float_of(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* the ulp of a float of want's magnitude (want finite, below 2^128): 2^(e - 23) for want in
   [2^e, 2^(e+1)), 2^-149 in the denormals; from the bits, as libm's frexp costs more than the
   functions under test */
static double ulp_of(double want) {
  uint64_t b;
  double ulp;
  int e;
  memcpy(&b, &want, sizeof b);
  e = (int)((b >> 52) & 0x7ff) - 1023;
  if (e < -126) e = -126;
  b = (uint64_t)(e - 23 + 1023) << 52;
  memcpy(&ulp, &b, sizeof ulp);
  return ulp;
}

/* |got - want| in ulps of a float of want's magnitude; INFINITY where the rules above say the
   result is wrong whatever its distance (NaN, or an exact special value missed) */
static double ulp_error(float got, double want) {
  double g;
  if (want != want) return got != got ? 0 : INFINITY;
  if (got != got) return INFINITY;
  if (want == 0 || want == 1 || want == -1 || isinf(want))
    return bits_of(got) == bits_of((float)want) ? 0 : INFINITY;
  if (fabs(want) >= 0x1p128) return isinf(got) && (got > 0) == (want > 0) ? 0 : INFINITY;
  g = isinf(got) ? copysign(0x1p128, (double)got) : (double)got;
  return fabs(g - want) / ulp_of(want);
}

typedef struct stats {
  double max_ulp;   /* the largest error seen */
  float worst;      /* its input */
  double seconds;   /* time in the function */
  long failures;    /* results beyond the bound */
  float first_bad;  /* the first of them */
} stats;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* f over in[0, n) on every instruction set, each compared with ref. A result equal to ref
   rounded to float (most are) is within 0.5 ulp: only the others are measured. rounded and out
   are scratch for n floats. */
static void check_block(int f, const float *in, const double *ref, uint32_t *rounded, float *out,
                        size_t n, stats *s /* [ISAS] */) {
  int isa;
  size_t i;
  for (i = 0; i < n; i++) rounded[i] = bits_of((float)ref[i]);
  for (isa = 0; isa < ISAS; isa++) {
    double t;
    if (!isa_have[isa]) continue;
    t = now();
    apply(isa, f, in, out, n);
    s[isa].seconds += now() - t;
    for (i = 0; i < n; i++) {
      double err, want = ref[i];
      if (bits_of(out[i]) == rounded[i]) continue;
#ifdef TEST_NEON_FLUSHES
      if (isa == NEON && in[i] != 0 && fabsf(in[i]) < 1.17549435e-38f) { /* flushed to +-0 */
        double flushed = reference(f, in[i] < 0 ? -0.0 : 0.0);
        if (bits_of(out[i]) == bits_of((float)flushed)) continue;
      }
      if (isa == NEON && out[i] == 0 && fabs(want) < 2.0001 * 1.17549435e-38) continue;
#endif
      err = ulp_error(out[i], want);
      if (err > s[isa].max_ulp || (err != err && s[isa].max_ulp == s[isa].max_ulp)) {
        s[isa].max_ulp = err;
        s[isa].worst = in[i];
      }
      if (!(err <= BOUND[f])) {
        if (s[isa].failures++ == 0) s[isa].first_bad = in[i];
      }
    }
  }
}

static void report(int f, const stats *s) {
  int isa;
  for (isa = ISAS - 1; isa >= 0; isa--) {
    if (!isa_have[isa]) continue;
    printf("  %-7s %-6s max %.3f ulp at x = %.9g (0x%08x), %.2f s\n", function_name[f],
           isa_name[isa], s[isa].max_ulp, (double)s[isa].worst, (unsigned)bits_of(s[isa].worst),
           s[isa].seconds);
    if (s[isa].failures)
      printf("  FAIL %s %s: %ld results beyond %.1f ulp, the first at x = %.9g (0x%08x)\n",
             function_name[f], isa_name[isa], s[isa].failures, BOUND[f],
             (double)s[isa].first_bad, (unsigned)bits_of(s[isa].first_bad));
  }
}

/* ---------------------------------------------------------- the quick part -- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd_u32(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}
static float rnd_range(float lo, float hi) {
  return lo + (hi - lo) * (float)((rnd_u32() >> 8) / 16777216.0);
}

/* edge cases: zeros, denormals, the ends of the ranges, each function's thresholds and the
   seams of its pieces, and their neighbours one ulp away */
static const float EDGES[] = {
    0.0f, 1.4e-45f, 1e-40f, 1.17549435e-38f, 1e-30f, 1e-10f, 2.98e-8f, 1e-4f, 0.1f, 0.25f,
    0.34657359f, 0.5f, 0.625f, 0.75f, 0.921875f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.92f, 4.0f, 5.0f,
    8.0f, 9.0f, 9.1f, 10.0f, 15.0f, 17.0f, 25.0f, 44.0f, 50.0f, 87.3365479f, 88.0f,
    88.7228394f, 88.7228470f, 89.0f, 100.0f, 103.972076f, 103.972084f, 104.0f, 110.0f, 1e10f,
    3.40282347e38f, INFINITY};

static size_t quick_inputs(float *in) {
  size_t n = 0, i;
  int d;
  for (i = 0; i < sizeof EDGES / sizeof EDGES[0]; i++) {
    for (d = -2; d <= 2; d++) {
      uint32_t b = bits_of(EDGES[i]);
      if ((d < 0 && b < (uint32_t)-d) || (d > 0 && b >= 0x7f800000u)) continue;
      in[n++] = float_of(b + (uint32_t)d);
      in[n++] = -float_of(b + (uint32_t)d);
    }
  }
  in[n++] = NAN;
  in[n++] = -NAN;
  in[n++] = float_of(0x7f800001u); /* a signalling NaN */
  in[n++] = -1.0f; /* log1p's pole and its neighbours */
  in[n++] = float_of(0xbf7fffffu);
  in[n++] = float_of(0xbf800001u);
  return n;
}

#define QUICK_RANDOM 250000 /* random inputs of each kind (4 kinds), per function */

static void quick_check(int f) {
  size_t cap = 4 * QUICK_RANDOM + 1024, n, i;
  float *in = (float *)malloc(cap * sizeof(float)), *out = (float *)malloc(cap * sizeof(float));
  double *ref = (double *)malloc(cap * sizeof(double));
  uint32_t *rounded = (uint32_t *)malloc(cap * sizeof(uint32_t));
  stats s[ISAS];
  memset(s, 0, sizeof s);
  if (!in || !out || !ref || !rounded) {
    CHECK(!"out of memory");
    free(in), free(out), free(ref), free(rounded);
    return;
  }
  n = quick_inputs(in);
  for (i = 0; i < QUICK_RANDOM; i++) {
    in[n++] = float_of(rnd_u32());           /* any float */
    in[n++] = rnd_range(-20.0f, 20.0f);      /* where the functions bend */
    in[n++] = rnd_range(-1.0f, 1.0f);        /* near 0 and 1 */
    in[n++] = rnd_range(-110.0f, 110.0f);    /* exp's whole range, its denormals included */
  }
  while (n % 16) in[n++] = 0.0f;
  for (i = 0; i < n; i++) ref[i] = reference(f, (double)in[i]);
  check_block(f, in, ref, rounded, out, n, s);
  report(f, s);
  for (i = 0; i < ISAS; i++) CHECK(s[i].failures == 0);
  free(in), free(out), free(ref), free(rounded);
}

TEST(exp) { quick_check(EXP); }
TEST(expm1) { quick_check(EXPM1); }
TEST(log) { quick_check(LOG); }
TEST(log1p) { quick_check(LOG1P); }
TEST(tanh) { quick_check(TANH); }
TEST(sigmoid) { quick_check(SIGMOID); }
TEST(erf) { quick_check(ERF); }

/* Named special values, exactly (NaN: any NaN); the sign of a zero counts. */
TEST(special_values) {
  static const struct {
    int f;
    float x, want;
  } cases[] = {
      {EXP, INFINITY, INFINITY},   {EXP, -INFINITY, 0.0f},       {EXP, 89.0f, INFINITY},
      {EXP, -104.0f, 0.0f},        {EXP, 0.0f, 1.0f},            {EXP, -0.0f, 1.0f},
      {EXP, 1e30f, INFINITY},      {EXP, -1e30f, 0.0f},          {EXPM1, -0.0f, -0.0f},
      {EXPM1, 0.0f, 0.0f},         {EXPM1, INFINITY, INFINITY},  {EXPM1, -INFINITY, -1.0f},
      {EXPM1, 100.0f, INFINITY},   {EXPM1, -30.0f, -1.0f},       {LOG, 0.0f, -INFINITY},
      {LOG, -0.0f, -INFINITY},     {LOG, INFINITY, INFINITY},    {LOG, 1.0f, 0.0f},
      {LOG, -1.0f, NAN},           {LOG, -INFINITY, NAN},        {LOG, -1e-45f, NAN},
      {LOG1P, -1.0f, -INFINITY},   {LOG1P, -2.0f, NAN},          {LOG1P, -INFINITY, NAN},
      {LOG1P, -0.0f, -0.0f},       {LOG1P, 0.0f, 0.0f},          {LOG1P, INFINITY, INFINITY},
      {TANH, INFINITY, 1.0f},      {TANH, -INFINITY, -1.0f},     {TANH, -0.0f, -0.0f},
      {TANH, 0.0f, 0.0f},          {TANH, 20.0f, 1.0f},          {TANH, -20.0f, -1.0f},
      {SIGMOID, -INFINITY, 0.0f},  {SIGMOID, INFINITY, 1.0f},    {SIGMOID, 0.0f, 0.5f},
      {SIGMOID, -0.0f, 0.5f},      {SIGMOID, 40.0f, 1.0f},       {SIGMOID, -200.0f, 0.0f},
      {ERF, INFINITY, 1.0f},       {ERF, -INFINITY, -1.0f},      {ERF, -0.0f, -0.0f},
      {ERF, 0.0f, 0.0f},           {ERF, 6.0f, 1.0f},            {ERF, -6.0f, -1.0f},
  };
  size_t c;
  int f, isa;
  float in[16], out[16];
  for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (isa = 0; isa < ISAS; isa++) {
      float got, want = cases[c].want;
      int ok;
      if (!isa_have[isa]) continue;
      for (f = 0; f < 16; f++) in[f] = cases[c].x;
      apply(isa, cases[c].f, in, out, 16);
      got = out[0];
      ok = want != want ? got != got : bits_of(got) == bits_of(want);
      if (!ok) {
        fprintf(stderr, "  %s %s(%g) = %g, want %g\n", isa_name[isa],
                function_name[cases[c].f], (double)cases[c].x, (double)got, (double)want);
        CHECK(ok);
      }
    }
  }
  /* NaN in, NaN out, whatever its sign or payload */
  for (f = 0; f < FUNCTIONS; f++)
    for (isa = 0; isa < ISAS; isa++) {
      if (!isa_have[isa]) continue;
      in[0] = NAN, in[1] = -NAN, in[2] = float_of(0x7f800001u), in[3] = float_of(0xffc00001u);
      for (c = 4; c < 16; c++) in[c] = NAN;
      apply(isa, f, in, out, 16);
      for (c = 0; c < 4; c++) CHECK(out[c] != out[c]);
    }
}

/* -------------------------------------------------- the exhaustive part -- */

typedef struct worker {
  int index, threads, every; /* blocks index, index + threads * every, ... */
  stats s[FUNCTIONS][ISAS];
  double reference_seconds;
} worker;

static void *exhaustive_worker(void *arg) {
  worker *w = (worker *)arg;
  float *in = (float *)malloc(BLOCK * sizeof(float)), *out = (float *)malloc(BLOCK * sizeof(float));
  double *ref = (double *)malloc(BLOCK * sizeof(double));
  uint32_t *rounded = (uint32_t *)malloc(BLOCK * sizeof(uint32_t)), block;
  size_t i;
  int f;
  if (!in || !out || !ref || !rounded) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  /* blocks interleaved between the threads: each sees every part of the range */
  for (block = (uint32_t)w->index; block < 65536u; block += (uint32_t)(w->threads * w->every)) {
    for (i = 0; i < BLOCK; i++) in[i] = float_of(block << 16 | (uint32_t)i);
    for (f = 0; f < FUNCTIONS; f++) {
      double t = now();
      for (i = 0; i < BLOCK; i++) ref[i] = reference(f, (double)in[i]);
      w->reference_seconds += now() - t;
      check_block(f, in, ref, rounded, out, BLOCK, w->s[f]);
    }
  }
  free(in), free(out), free(ref), free(rounded);
  return NULL;
}

static int exhaustive(int threads, int every) {
  worker *w = (worker *)calloc((size_t)threads, sizeof(worker));
  pthread_t *th = (pthread_t *)calloc((size_t)threads, sizeof(pthread_t));
  double start = now(), reference_seconds = 0;
  int t, f, isa, failed = 0;
  if (!w || !th) return 1;
  if (every > 1) printf("vmath: one block of 2^16 inputs in %d, %d threads\n", every, threads);
  else printf("vmath: all 2^32 inputs, %d threads\n", threads);
  fflush(stdout);
  for (t = 0; t < threads; t++) {
    w[t].index = t, w[t].threads = threads, w[t].every = every;
    if (pthread_create(&th[t], NULL, exhaustive_worker, &w[t]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (t = 0; t < threads; t++) pthread_join(th[t], NULL);
  for (f = 0; f < FUNCTIONS; f++) {
    stats s[ISAS];
    memset(s, 0, sizeof s);
    for (isa = 0; isa < ISAS; isa++)
      for (t = 0; t < threads; t++) {
        const stats *o = &w[t].s[f][isa];
        if (o->max_ulp > s[isa].max_ulp || (o->max_ulp != o->max_ulp)) {
          s[isa].max_ulp = o->max_ulp;
          s[isa].worst = o->worst;
        }
        if (o->failures && !s[isa].failures) s[isa].first_bad = o->first_bad;
        s[isa].failures += o->failures;
        s[isa].seconds += o->seconds;
      }
    report(f, s);
    for (isa = 0; isa < ISAS; isa++) failed += s[isa].failures != 0;
  }
  for (t = 0; t < threads; t++) reference_seconds += w[t].reference_seconds;
  printf("vmath: the libm reference took %.1f s (all threads), the whole run %.1f s\n",
         reference_seconds, now() - start);
  free(w), free(th);
  return failed;
}

/* ----------------------------------------------------------------- --bench -- */

/* ns per element of each function on each instruction set: 4096 inputs in [-8, 8] (in L1),
   applied until 0.2 s have passed, the best of three such runs */
static void bench(void) {
  enum { N = 4096 };
  static float in[N], out[N];
  int f, isa, run;
  size_t i;
  for (i = 0; i < N; i++) in[i] = rnd_range(-8.0f, 8.0f);
  for (f = 0; f < FUNCTIONS; f++) {
    printf("  %-7s", function_name[f]);
    for (isa = ISAS - 1; isa >= 0; isa--) {
      double best = 1e30;
      if (!isa_have[isa]) continue;
      for (run = 0; run < 3; run++) {
        double start = now(), t;
        long reps = 0;
        do {
          apply(isa, f, in, out, N);
          reps++;
        } while ((t = now() - start) < 0.2);
        if (t / (double)reps / N < best) best = t / (double)reps / N;
      }
      printf("  %s %.3f ns", isa_name[isa], best * 1e9);
    }
    printf("  (per element)\n");
  }
}

int main(int argc, char **argv) {
  fuse_isa cpu = fuse_cpu_isa();
  int i, full = 0, threads = 2, every = 1;
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--exhaustive")) full = 1;
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--bench")) full = 2;
    else if (!strcmp(argv[i], "--every") && i + 1 < argc) full = 1, every = atoi(argv[++i]);
  }
  if (threads < 1) threads = 1;
  isa_have[SCALAR] = 1;
#ifdef TEST_AVX2
  isa_have[AVX2] = cpu >= FUSE_ISA_AVX2;
  if (!isa_have[AVX2]) printf("vmath: this CPU has no AVX2: its instance is not tested\n");
#endif
#ifdef TEST_AVX512
  isa_have[AVX512] = cpu >= FUSE_ISA_AVX512;
  if (!isa_have[AVX512]) printf("vmath: this CPU has no AVX-512: its instance is not tested\n");
#endif
#ifdef TEST_NEON
  isa_have[NEON] = cpu == FUSE_ISA_NEON;
#endif
  (void)cpu;
  if (full == 2) {
    bench();
    return 0;
  }
  RUN(special_values);
  if (full) {
    runner_current = "exhaustive";
    runner_test_failed = 0;
    if (exhaustive(threads, every < 1 ? 1 : every)) runner_test_failed = 1;
    if (runner_test_failed) runner_failed++;
    else runner_passed++;
  } else {
    RUN(exp);
    RUN(expm1);
    RUN(log);
    RUN(log1p);
    RUN(tanh);
    RUN(sigmoid);
    RUN(erf);
  }
  return runner_finish("vmath");
}
