/* bench/qpeak.c - the integer multiply-accumulate peak of this x86 CPU, one thread, as
   bench/int8.sh reports against it: 16 independent accumulators, register operands only, best
   of 5 runs of 2e7 iterations:

     avx512_vnni  vpdpbusd zmm: 64 u8 x s8 products summed into 16 int32 lanes per instruction
     avx2_pairs   vpmaddwd + vpaddd ymm: 16 int16 products per pair of instructions (fuse.h's
                  exact AVX2 path without VNNI, kernels/qconv.c)

   Prints `peak name=N gmacs=G` per line, G in 1e9 multiply-accumulates a second; a kind the CPU
   lacks is left out. cc -O2 bench/qpeak.c -o qpeak (gcc or clang, x86-64). */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* (the empty asm keeps every accumulator in a register and the loop from being folded) */
#define KEEP8(a, b, c, d, e, f, g, h) \
  __asm__ volatile("" : "+v"(a), "+v"(b), "+v"(c), "+v"(d), "+v"(e), "+v"(f), "+v"(g), "+v"(h))

__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) static int vnni512(long n) {
  const __m512i x = _mm512_set1_epi32(0x01020304), w = _mm512_set1_epi32(0x02fe01ff);
  __m512i a0 = x, a1 = w, a2 = x, a3 = w, a4 = x, a5 = w, a6 = x, a7 = w;
  __m512i a8 = x, a9 = w, a10 = x, a11 = w, a12 = x, a13 = w, a14 = x, a15 = w;
  long i;
  for (i = 0; i < n; i++) {
#define D(a) a = _mm512_dpbusd_epi32(a, x, w)
    D(a0), D(a1), D(a2), D(a3), D(a4), D(a5), D(a6), D(a7);
    D(a8), D(a9), D(a10), D(a11), D(a12), D(a13), D(a14), D(a15);
#undef D
    KEEP8(a0, a1, a2, a3, a4, a5, a6, a7);
    KEEP8(a8, a9, a10, a11, a12, a13, a14, a15);
  }
  a0 = _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a14, a15));
  return _mm512_reduce_add_epi32(a0);
}

__attribute__((target("avx2"), noinline)) static int pairs256(long n) {
  const __m256i x = _mm256_set1_epi32(0x00ff0011), w = _mm256_set1_epi32(0xff800071);
  __m256i a0 = x, a1 = w, a2 = x, a3 = w, a4 = x, a5 = w, a6 = x, a7 = w;
  __m256i a8 = x, a9 = w, a10 = x, a11 = w, a12 = x, a13 = w;
  long i;
  for (i = 0; i < n; i++) {
#define D(a) a = _mm256_add_epi32(a, _mm256_madd_epi16(x, w))
    D(a0), D(a1), D(a2), D(a3), D(a4), D(a5), D(a6), D(a7);
    D(a8), D(a9), D(a10), D(a11), D(a12), D(a13);
#undef D
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6));
    __asm__ volatile("" : "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11), "+x"(a12), "+x"(a13));
  }
  a0 = _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a12, a13));
  return _mm256_extract_epi32(a0, 0);
}

static void measure(const char *name, int (*fn)(long), double macs_per_iter) {
  const long n = 20000000;
  double best = 1e30;
  int k, sink = 0;
  for (k = 0; k < 5; k++) {
    double t0 = now(), t;
    sink += fn(n);
    t = now() - t0;
    if (t < best) best = t;
  }
  printf("peak name=%s gmacs=%.1f (%d)\n", name, (double)n * macs_per_iter / best / 1e9, sink & 1);
}

int main(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512vnni")) measure("avx512_vnni", vnni512, 16.0 * 64);
  if (__builtin_cpu_supports("avx2")) measure("avx2_pairs", pairs256, 14.0 * 16);
  return 0;
}
