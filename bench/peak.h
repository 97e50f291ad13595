/* peak.h - this machine's single-core FP32 FMA peak, measured (bench/layers.c includes it).

   Independent FMA chains: 24 zmm accumulators (AVX-512) or 12 ymm accumulators (AVX2+FMA),
   enough to cover an FMA latency of 4-5 cycles on two FMA ports. The functions carry their
   own target attributes, so the program builds with plain -O2 (no -m flags) and only calls
   a function when cpuid says the CPU has the ISA.

   peak_gflops(isa, seconds, &best): the median over about seconds / PEAK_BURST bursts of
   PEAK_BURST seconds each, in GFLOP/s (one FMA = 2 FLOP); *best gets the fastest burst. 0 when
   the CPU or compiler lacks the ISA. Short bursts, because on a shared machine a long one is
   nearly always preempted somewhere (a 70 ms burst here measured half the rate of 1 ms ones
   under load); the median of short ones is what the core does while the program has it,
   which is also how bench/layers.c times each layer (median of single runs). */
#ifndef BENCH_PEAK_H
#define BENCH_PEAK_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define PEAK_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define PEAK_X86 0
#endif

enum { PEAK_AVX2 = 2, PEAK_AVX512 = 3 };
#define PEAK_BURST 1e-3 /* seconds */

static double peak_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The kernels store their result here: a side effect, so the compiler can neither merge
   repeated calls nor move them across the clock reads. */
static volatile float peak_sink;

#if PEAK_X86
static uint64_t peak_xgetbv0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

/* 1 when the CPU and the OS support the ISA */
static int peak_cpu_has(int isa) {
  unsigned a, b, c, d, b7;
  uint64_t xcr0;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return 0;
  if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 12)))
    return 0; /* osxsave avx fma */
  xcr0 = peak_xgetbv0();
  if ((xcr0 & 6) != 6)
    return 0;
  if (__get_cpuid_max(0, NULL) < 7)
    return 0;
  __cpuid_count(7, 0, a, b7, c, d);
  if (isa == PEAK_AVX2)
    return (b7 >> 5) & 1;
  return ((b7 >> 16) & 1) && (xcr0 & 0xe6) == 0xe6; /* avx512f, opmask + zmm state */
}

/* clang-format off */
/* 24 chains x 16 lanes x 2 FLOP per iteration */
__attribute__((target("avx512f"), noinline)) static void peak_run_avx512(long iters) {
  /* distinct starting values: equal chains would be merged into one by the compiler */
#define PEAK_S(k) _mm512_set1_ps(1.0f + 0.01f * (float)(k))
  __m512 a0 = PEAK_S(0), a1 = PEAK_S(1), a2 = PEAK_S(2), a3 = PEAK_S(3), a4 = PEAK_S(4);
  __m512 a5 = PEAK_S(5), a6 = PEAK_S(6), a7 = PEAK_S(7), a8 = PEAK_S(8), a9 = PEAK_S(9);
  __m512 a10 = PEAK_S(10), a11 = PEAK_S(11), a12 = PEAK_S(12), a13 = PEAK_S(13);
  __m512 a14 = PEAK_S(14), a15 = PEAK_S(15), a16 = PEAK_S(16), a17 = PEAK_S(17);
  __m512 a18 = PEAK_S(18), a19 = PEAK_S(19), a20 = PEAK_S(20), a21 = PEAK_S(21);
  __m512 a22 = PEAK_S(22), a23 = PEAK_S(23);
#undef PEAK_S
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  long i;
  for (i = 0; i < iters; i++) {
    a0 = _mm512_fmadd_ps(a0, m, c);   a1 = _mm512_fmadd_ps(a1, m, c);
    a2 = _mm512_fmadd_ps(a2, m, c);   a3 = _mm512_fmadd_ps(a3, m, c);
    a4 = _mm512_fmadd_ps(a4, m, c);   a5 = _mm512_fmadd_ps(a5, m, c);
    a6 = _mm512_fmadd_ps(a6, m, c);   a7 = _mm512_fmadd_ps(a7, m, c);
    a8 = _mm512_fmadd_ps(a8, m, c);   a9 = _mm512_fmadd_ps(a9, m, c);
    a10 = _mm512_fmadd_ps(a10, m, c); a11 = _mm512_fmadd_ps(a11, m, c);
    a12 = _mm512_fmadd_ps(a12, m, c); a13 = _mm512_fmadd_ps(a13, m, c);
    a14 = _mm512_fmadd_ps(a14, m, c); a15 = _mm512_fmadd_ps(a15, m, c);
    a16 = _mm512_fmadd_ps(a16, m, c); a17 = _mm512_fmadd_ps(a17, m, c);
    a18 = _mm512_fmadd_ps(a18, m, c); a19 = _mm512_fmadd_ps(a19, m, c);
    a20 = _mm512_fmadd_ps(a20, m, c); a21 = _mm512_fmadd_ps(a21, m, c);
    a22 = _mm512_fmadd_ps(a22, m, c); a23 = _mm512_fmadd_ps(a23, m, c);
  }
  a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                     _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  a8 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
                     _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15)));
  a16 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a16, a17), _mm512_add_ps(a18, a19)),
                      _mm512_add_ps(_mm512_add_ps(a20, a21), _mm512_add_ps(a22, a23)));
  peak_sink = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a8), a16));
}

/* 12 chains x 8 lanes x 2 FLOP per iteration (12 accumulators + 2 constants of 16 ymm) */
__attribute__((target("avx2,fma"), noinline)) static void peak_run_avx2(long iters) {
#define PEAK_S(k) _mm256_set1_ps(1.0f + 0.01f * (float)(k))
  __m256 a0 = PEAK_S(0), a1 = PEAK_S(1), a2 = PEAK_S(2), a3 = PEAK_S(3), a4 = PEAK_S(4);
  __m256 a5 = PEAK_S(5), a6 = PEAK_S(6), a7 = PEAK_S(7), a8 = PEAK_S(8), a9 = PEAK_S(9);
  __m256 a10 = PEAK_S(10), a11 = PEAK_S(11);
#undef PEAK_S
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  float out[8];
  long i;
  for (i = 0; i < iters; i++) {
    a0 = _mm256_fmadd_ps(a0, m, c);   a1 = _mm256_fmadd_ps(a1, m, c);
    a2 = _mm256_fmadd_ps(a2, m, c);   a3 = _mm256_fmadd_ps(a3, m, c);
    a4 = _mm256_fmadd_ps(a4, m, c);   a5 = _mm256_fmadd_ps(a5, m, c);
    a6 = _mm256_fmadd_ps(a6, m, c);   a7 = _mm256_fmadd_ps(a7, m, c);
    a8 = _mm256_fmadd_ps(a8, m, c);   a9 = _mm256_fmadd_ps(a9, m, c);
    a10 = _mm256_fmadd_ps(a10, m, c); a11 = _mm256_fmadd_ps(a11, m, c);
  }
  a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                     _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  a0 = _mm256_add_ps(a0, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  _mm256_storeu_ps(out, a0);
  peak_sink = out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}
/* clang-format on */
#endif

static int peak_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double peak_gflops(int isa, double seconds, double *best) {
#if PEAK_X86
  double flop_per_iter = isa == PEAK_AVX512 ? 24.0 * 16 * 2 : 12.0 * 8 * 2, t0, *t, med;
  long iters = 1 << 10;
  int r, n;
  if (best)
    *best = 0;
  if (!peak_cpu_has(isa))
    return 0;
  /* grow the burst to PEAK_BURST seconds (this also wakes the vector unit up) */
  for (;;) {
    t0 = peak_now();
    if (isa == PEAK_AVX512)
      peak_run_avx512(iters);
    else
      peak_run_avx2(iters);
    t0 = peak_now() - t0;
    if (t0 >= PEAK_BURST || iters > (1L << 40))
      break;
    iters = t0 < 1e-5 ? iters * 8 : (long)((double)iters * PEAK_BURST / t0 * 1.05) + 1;
  }
  n = (int)(seconds / PEAK_BURST);
  if (n < 15)
    n = 15;
  t = (double *)malloc((size_t)n * sizeof *t);
  if (!t)
    return 0;
  for (r = 0; r < n; r++) {
    t0 = peak_now();
    if (isa == PEAK_AVX512)
      peak_run_avx512(iters);
    else
      peak_run_avx2(iters);
    t[r] = peak_now() - t0;
  }
  qsort(t, (size_t)n, sizeof *t, peak_cmp);
  med = flop_per_iter * (double)iters / t[n / 2] * 1e-9;
  if (best)
    *best = flop_per_iter * (double)iters / t[0] * 1e-9;
  free(t);
  return med;
#else
  (void)isa;
  (void)seconds;
  (void)peak_now;
  (void)peak_cmp;
  if (best)
    *best = 0;
  return 0;
#endif
}

#endif /* BENCH_PEAK_H */
