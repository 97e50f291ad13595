/* ------------------------------------------------------------------ cpu isa -- */

#if !defined(FUSE_NO_SIMD) && (defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || \
                               defined(_M_IX86))
#define FUSE__X86 1
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static void fuse__cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
  int x[4];
  __cpuidex(x, (int)leaf, (int)sub);
  r[0] = (unsigned)x[0], r[1] = (unsigned)x[1], r[2] = (unsigned)x[2], r[3] = (unsigned)x[3];
}
static unsigned long long fuse__xgetbv(void) { return _xgetbv(0); }
#else
#include <cpuid.h>
static void fuse__cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
  __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
static unsigned long long fuse__xgetbv(void) {
  unsigned lo, hi;
  __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}
#endif
#endif

/* ARM: the NEON kernels are compiled in on aarch64 (where every CPU has NEON) and on armv7
   built for NEON with fused multiply-add (-mfpu=neon-vfpv4 or neon-fp-armv8): such a binary
   needs the unit anyway, so its presence is the build's, not a run-time question. */
#if !defined(FUSE_NO_SIMD) && !defined(FUSE_NO_NEON) && \
    (defined(__GNUC__) || defined(__clang__)) && !defined(__ARM_BIG_ENDIAN) && \
    (defined(__aarch64__) || (defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)))
#define FUSE__NEON 1
#endif

FUSE_API fuse_isa fuse_cpu_isa(void) {
#ifdef FUSE__X86
  unsigned r[4], max_leaf, ebx7;
  unsigned long long xcr0;
  fuse__cpuid(0, 0, r);
  max_leaf = r[0];
  if (max_leaf < 7) return FUSE_ISA_SCALAR;
  fuse__cpuid(1, 0, r);
  /* OSXSAVE (27), AVX (28), FMA (12) */
  if (!(r[2] & (1u << 27)) || !(r[2] & (1u << 28)) || !(r[2] & (1u << 12))) return FUSE_ISA_SCALAR;
  xcr0 = fuse__xgetbv();
  if ((xcr0 & 6) != 6) return FUSE_ISA_SCALAR; /* the OS saves SSE and AVX state */
  fuse__cpuid(7, 0, r);
  ebx7 = r[1];
#ifndef FUSE_NO_AVX512
  /* AVX-512 F (16), DQ (17), BW (30), VL (31), and the OS saves opmask / ZMM state */
  if ((ebx7 & (1u << 16)) && (ebx7 & (1u << 17)) && (ebx7 & (1u << 30)) && (ebx7 & (1u << 31)) &&
      (xcr0 & 0xe6) == 0xe6)
    return FUSE_ISA_AVX512;
#endif
#ifndef FUSE_NO_AVX2
  if (ebx7 & (1u << 5)) return FUSE_ISA_AVX2;
#endif
  (void)ebx7; /* FUSE_NO_AVX2 with FUSE_NO_AVX512: -Wunused-but-set-variable */
#endif
#ifdef FUSE__NEON
  return FUSE_ISA_NEON;
#else
  return FUSE_ISA_SCALAR;
#endif
}

/* "avx512", "avx2", "neon", "scalar"; "reference" for FUSE_ISA_AUTO in a plan (its op-by-op
   reference kernels) */
static const char *fuse__isa_name(fuse_isa isa) {
  switch (isa) {
  case FUSE_ISA_SCALAR: return "scalar";
  case FUSE_ISA_AVX2: return "avx2";
  case FUSE_ISA_AVX512: return "avx512";
  case FUSE_ISA_NEON: return "neon";
  default: return "reference";
  }
}


/* The taps t in [0, k) of a window from `start`, `dil` apart, that fall inside [0, size):
   [*lo, *hi). Found by arithmetic, so a huge window costs nothing. */
static void fuse__taps(int64_t start, int64_t dil, int64_t k, int64_t size, int *lo, int *hi) {
  int64_t l = start >= 0 ? 0 : (-start + dil - 1) / dil;
  int64_t h = start > size - 1 ? 0 : (size - 1 - start) / dil + 1;
  if (h > k) h = k;
  if (l > h) l = h;
  *lo = (int)l, *hi = (int)h;
}

