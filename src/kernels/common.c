/* ------------------------------------------------------------------ kernels -- */
/* The kernels every plan step runs, by family: the GEMM family (gemm.c: NHWC indirect GEMM for
   conv2d and matmul, the NCHW GEMM, the few-input-channel stem kernel), depthwise conv
   (depthwise.c), narrow-group conv (grouped.c), pools, element-wise rows and layout transposes
   (pool_eltwise.c), element-wise chains and row kernels (chain_rows.c), Winograd (winograd.c);
   their drivers (run/conv_run.c, run/steps.c, ...) and the op-by-op reference kernels
   (run/reference.c), the oracle every other kernel is tested against.

   Each kernel is written once, as a plain-C template (the .inc files here) over the names of
   a vector layer (vec_avx512.h, vec_avx2.h, vec_neon.h, vec_scalar.h), and instantiated once
   per layer and tile by including it between the layer and vec_end.h. One instance file per
   instruction set does that for every template (isa_avx512.c, isa_avx2.c, isa_neon.c,
   isa_scalar.c) and holds that instruction set's rows of the kernel tables; the family files
   before them hold what the instances share. The generator pastes every instance into fuse.h,
   so a debugger steps through ordinary C. The scalar instance of each template is its scalar
   twin: the fallback where no SIMD is compiled in and the implementation of FUSE_ISA_SCALAR,
   with the same tiles, packing and drivers. The kernel tables (table.c) list every instance
   with its instruction set and tile; kernel choice reads them.

   The x86 instances carry function target attributes, so a unit built with plain -O2 still
   has them; fuse_cpu_isa() decides at run time. */
#if defined(FUSE__X86) && (defined(__GNUC__) || defined(__clang__)) && \
    (!defined(FUSE_NO_AVX2) || !defined(FUSE_NO_AVX512))
#define FUSE__SIMD 1
#include <immintrin.h>
#endif
#ifdef FUSE__NEON /* plan/cpu.c: aarch64, or armv7 with NEON and FMA */
#include <arm_neon.h>
#endif

/* The templates' register tiles are small arrays in loops of constant trip count under
   FUSE__UNROLL, which the compiler unrolls fully so that the arrays live in registers: the
   count covers the longest such loop (the 19 input rows of a 5x5 stride-2 depthwise tile).
   Under AddressSanitizer the arrays stay in memory with their redzones whatever is unrolled,
   and unrolled they make clang's builds take many minutes: there the loops stay loops; so
   they do in a build for size (-Os: the Cortex-M7 build, whose kernels are the scalar twins). */
#if defined(__SANITIZE_ADDRESS__)
#define FUSE__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUSE__ASAN 1
#endif
#endif
#if ((defined(__GNUC__) && __GNUC__ >= 8) || defined(__clang__)) && !defined(FUSE__ASAN) && \
    !defined(__OPTIMIZE_SIZE__)
#define FUSE__UNROLL _Pragma("GCC unroll 32")
#else
#define FUSE__UNROLL
#endif
/* A helper of a tile whose loops take their bounds from the caller's constants: always
   inlined, so that the bounds are constants there (clang warns of an unroll pragma it cannot
   honour in an outlined copy). */
#if defined(__GNUC__) || defined(__clang__)
#define FUSE__TILE_INLINE __attribute__((always_inline)) inline
#else
#define FUSE__TILE_INLINE inline
#endif

/* the depthwise and pool kernels' arguments (depthwise.c, pool_eltwise.c) */
typedef struct fuse__dw_args fuse__dw_args;
typedef struct fuse__pool_args fuse__pool_args;

/* The vector layers' operations that take more than one line: the scalar layer's bit
   operations on floats (through memcpy, which is how C reads a float's bits), its rounding, and
   the AVX2 layer's FUSE__V_LDEXP and FUSE__V_FREXP (AVX-512 has instructions for both). What
   each one means is written at its macro in vec_scalar.h. */
static inline uint32_t fuse__float_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static inline float fuse__bits_float(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}
/* 1.5 * 2^23: x + it lies in [2^23, 2^24), where the floats are the integers (|x| < 2^22) */
static inline float fuse__round_scalar(float x) {
  const float magic = 12582912.0f;
  float shifted = x + magic; /* a float again, whatever the excess precision of the FPU */
  return shifted - magic;
}
/* (a NaN n gives NaN: converting it to an integer is undefined in C) */
static inline float fuse__pow2_scalar(float n) {
  if (n != n) return n;
  return fuse__bits_float((uint32_t)((int32_t)n + 127) << 23);
}
/* two factors 2^floor(n/2) and 2^(n - floor(n/2)), both normal: the first product is exact,
   the second rounds once */
static inline float fuse__ldexp_scalar(float x, float n) {
  int32_t k, half;
  if (n != n) return x + n;
  k = (int32_t)n, half = k >= 0 ? k / 2 : -((1 - k) / 2);
  return x * fuse__bits_float((uint32_t)(half + 127) << 23) *
         fuse__bits_float((uint32_t)(k - half + 127) << 23);
}
static inline float fuse__frexp_scalar(float x, float *e) {
  uint32_t bits;
  int32_t k, scaled = 0;
  if (x != x || x < 0) { /* NaN, negative */
    *e = 0.0f;
    return NAN;
  }
  if (x == 0) {
    *e = -INFINITY;
    return 1.0f;
  }
  if (x == INFINITY) {
    *e = INFINITY;
    return 1.0f;
  }
  if (x < 1.17549435e-38f) { /* a denormal: scaled by 2^24 into the normal range */
    x *= 16777216.0f;
    scaled = 24;
  }
  /* the exponent of x / 0.75 (0x3f400000: 0.75's bits); the mantissa field with that exponent
     taken out of x's is in [0.75, 1.5) */
  bits = fuse__float_bits(x);
  k = (int32_t)((bits - 0x3f400000u) >> 23) - ((bits < 0x3f400000u) ? 512 : 0);
  *e = (float)(k - scaled);
  return fuse__bits_float(bits - ((uint32_t)k << 23));
}
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
__attribute__((target("avx2,fma"))) static inline __m256 fuse__ldexp_avx2(__m256 x, __m256 n) {
  __m256i k = _mm256_cvtps_epi32(n), half = _mm256_srai_epi32(k, 1), bias = _mm256_set1_epi32(127);
  __m256 first = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
  __m256 second = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(k, half), bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(x, first), second);
}
__attribute__((target("avx2,fma"))) static inline __m256 fuse__frexp_avx2(__m256 x, __m256 *e) {
  const __m256 zero = _mm256_setzero_ps(), inf = _mm256_set1_ps(INFINITY);
  __m256 denormal = _mm256_cmp_ps(x, _mm256_set1_ps(1.17549435e-38f), _CMP_LT_OQ);
  __m256 scaled = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(16777216.0f)), denormal);
  __m256i bits = _mm256_castps_si256(scaled);
  __m256i k = _mm256_srai_epi32(_mm256_sub_epi32(bits, _mm256_set1_epi32(0x3f400000)), 23);
  __m256 m = _mm256_castsi256_ps(_mm256_sub_epi32(bits, _mm256_slli_epi32(k, 23)));
  __m256 exponent = _mm256_sub_ps(_mm256_cvtepi32_ps(k),
                                  _mm256_and_ps(denormal, _mm256_set1_ps(24.0f)));
  exponent = _mm256_blendv_ps(exponent, _mm256_set1_ps(-INFINITY), _mm256_cmp_ps(x, zero, _CMP_EQ_OQ));
  *e = _mm256_blendv_ps(exponent, inf, _mm256_cmp_ps(x, inf, _CMP_EQ_OQ));
  /* NaN where x is NaN or negative (-0 is not) */
  return _mm256_blendv_ps(m, _mm256_set1_ps(NAN), _mm256_cmp_ps(x, zero, _CMP_NGE_UQ));
}
#endif

/* The post-op kinds a micro-kernel applies to its accumulators before the store: a few
   instructions each. The others (the vector math) run over the stored tile. */
static int fuse__post_in_registers(fuse_post_kind kind) {
  return kind == FUSE_POST_CLAMP || kind == FUSE_POST_ADD || kind == FUSE_POST_LINEAR ||
         kind == FUSE_POST_SCALE || kind == FUSE_POST_SHIFT || kind == FUSE_POST_PRELU ||
         kind == FUSE_POST_HARDSWISH || kind == FUSE_POST_HARDSIGMOID;
}

/* How many of a step's post-ops, from the first, a kernel applies on its registers; the rest
   run over the stored output (fuse__post_block). Found once per step by the drivers. */
static int fuse__post_split(const fuse_post_op *post, int num_post) {
  int split = 0;
  while (split < num_post && fuse__post_in_registers(post[split].kind)) split++;
  return split;
}

#ifdef FUSE__NEON
/* The NEON layer's operations of more than one instruction (vec_neon.h). */
/* lanes a <= l < b on (a, b clamped to 0 .. 4 by the comparisons) */
static inline uint32x4_t fuse__mask_range_neon(int64_t a, int64_t b) {
  static const int32_t lanes[4] = {0, 1, 2, 3};
  int32x4_t l = vld1q_s32(lanes);
  int32_t lo = a < 0 ? 0 : a > 4 ? 4 : (int32_t)a, hi = b < 0 ? 0 : b > 4 ? 4 : (int32_t)b;
  return vandq_u32(vcgeq_s32(l, vdupq_n_s32(lo)), vcltq_s32(l, vdupq_n_s32(hi)));
}
/* whether every lane of m is on */
static inline int fuse__mask_all_neon(uint32x4_t m) {
#if defined(__aarch64__)
  return vminvq_u32(m) != 0;
#else
  uint32x2_t t = vpmin_u32(vget_low_u32(m), vget_high_u32(m));
  return vget_lane_u32(vpmin_u32(t, t), 0) != 0;
#endif
}
static inline float32x4_t fuse__load_mask_neon(const float *p, uint32x4_t m) {
  float32x4_t v = vdupq_n_f32(0.0f);
  if (fuse__mask_all_neon(m)) return vld1q_f32(p);
  if (vgetq_lane_u32(m, 0)) v = vld1q_lane_f32(p, v, 0);
  if (vgetq_lane_u32(m, 1)) v = vld1q_lane_f32(p + 1, v, 1);
  if (vgetq_lane_u32(m, 2)) v = vld1q_lane_f32(p + 2, v, 2);
  if (vgetq_lane_u32(m, 3)) v = vld1q_lane_f32(p + 3, v, 3);
  return v;
}
static inline void fuse__store_mask_neon(float *p, uint32x4_t m, float32x4_t v) {
  if (fuse__mask_all_neon(m)) {
    vst1q_f32(p, v);
    return;
  }
  if (vgetq_lane_u32(m, 0)) vst1q_lane_f32(p, v, 0);
  if (vgetq_lane_u32(m, 1)) vst1q_lane_f32(p + 1, v, 1);
  if (vgetq_lane_u32(m, 2)) vst1q_lane_f32(p + 2, v, 2);
  if (vgetq_lane_u32(m, 3)) vst1q_lane_f32(p + 3, v, 3);
}
/* p > q ? a : b (b where either is NaN) */
static inline float32x4_t fuse__select_gt_neon(float32x4_t p, float32x4_t q, float32x4_t a,
                                               float32x4_t b) {
  return vbslq_f32(vcgtq_f32(p, q), a, b);
}
/* x in the lanes of m and where x is NaN, else y */
static inline float32x4_t fuse__keep_nan_neon(uint32x4_t m, float32x4_t x, float32x4_t y) {
  return vbslq_f32(vornq_u32(m, vceqq_f32(x, x)), x, y);
}
/* 2^n for integral n (the conversion truncates; n is integral) */
static inline float32x4_t fuse__pow2_neon(float32x4_t n) {
  int32x4_t k = vcvtq_s32_f32(n);
  return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k, vdupq_n_s32(127)), 23));
}
/* x * 2^floor(n/2) * 2^(n - floor(n/2)): both factors normal, the first product exact */
static inline float32x4_t fuse__ldexp_neon(float32x4_t x, float32x4_t n) {
  int32x4_t k = vcvtq_s32_f32(n), half = vshrq_n_s32(k, 1), bias = vdupq_n_s32(127);
  float32x4_t first = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(half, bias), 23));
  float32x4_t second = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vsubq_s32(k, half), bias), 23));
  return vmulq_f32(vmulq_f32(x, first), second);
}
/* The exponent split on the bits alone (armv7's NEON would read a denormal x as zero): a
   denormal's significand is shifted up to a normal one's (by s = its leading zeros - 8) and s
   taken off the exponent after; the special values as vec_scalar.h says. */
static inline float32x4_t fuse__frexp_neon(float32x4_t x, float32x4_t *e) {
  uint32x4_t bits = vreinterpretq_u32_f32(x);
  uint32x4_t denormal = vcltq_u32(bits, vdupq_n_u32(0x00800000u)); /* +0 too: shifted by 24 */
  int32x4_t shift = vandq_s32(vreinterpretq_s32_u32(denormal),
                              vsubq_s32(vreinterpretq_s32_u32(vclzq_u32(bits)), vdupq_n_s32(8)));
  int32x4_t scaled = vreinterpretq_s32_u32(vshlq_u32(bits, shift));
  int32x4_t k = vshrq_n_s32(vsubq_s32(scaled, vdupq_n_s32(0x3f400000)), 23);
  float32x4_t m = vreinterpretq_f32_s32(vsubq_s32(scaled, vshlq_n_s32(k, 23)));
  float32x4_t exponent = vcvtq_f32_s32(vsubq_s32(k, shift));
  exponent = vbslq_f32(vceqq_u32(bits, vdupq_n_u32(0)), vdupq_n_f32(-INFINITY), exponent);
  exponent = vbslq_f32(vceqq_u32(bits, vdupq_n_u32(0x80000000u)), vdupq_n_f32(-INFINITY), exponent);
  *e = vbslq_f32(vceqq_u32(bits, vdupq_n_u32(0x7f800000u)), vdupq_n_f32(INFINITY), exponent);
  /* NaN where x is NaN or negative (-0 is not): the bits above +inf's but -0's */
  return vbslq_f32(vandq_u32(vcgtq_u32(bits, vdupq_n_u32(0x7f800000u)),
                             vmvnq_u32(vceqq_u32(bits, vdupq_n_u32(0x80000000u)))),
                   vdupq_n_f32(NAN), m);
}
/* The lane permute (FUSE__V_PERMUTE) as a byte table lookup: lane numbers n (int32) become
   the byte numbers 4n .. 4n + 3; armv7 looks up each half of the result in the two halves
   of v. */
static inline uint8x16_t fuse__index_neon(const int32_t *p) {
  uint32x4_t n = vreinterpretq_u32_s32(vld1q_s32(p));
  return vreinterpretq_u8_u32(vmlaq_n_u32(vdupq_n_u32(0x03020100u), n, 0x04040404u));
}
static inline float32x4_t fuse__permute_neon(float32x4_t v, uint8x16_t idx) {
#if defined(__aarch64__)
  return vreinterpretq_f32_u8(vqtbl1q_u8(vreinterpretq_u8_f32(v), idx));
#else
  uint8x16_t b = vreinterpretq_u8_f32(v);
  uint8x8x2_t t;
  t.val[0] = vget_low_u8(b);
  t.val[1] = vget_high_u8(b);
  return vreinterpretq_f32_u8(vcombine_u8(vtbl2_u8(t, vget_low_u8(idx)), vtbl2_u8(t, vget_high_u8(idx))));
#endif
}
#if !defined(__aarch64__)
/* armv7: the operations NEON lacks, lane by lane on the VFP (IEEE, as the scalar layer) */
static inline float32x4_t fuse__div_neon(float32x4_t a, float32x4_t b) {
  float x[4], y[4];
  int i;
  vst1q_f32(x, a);
  vst1q_f32(y, b);
  for (i = 0; i < 4; i++) x[i] /= y[i];
  return vld1q_f32(x);
}
/* what: 0 sqrt, 1 floor, 2 ceil */
static inline float32x4_t fuse__lanes_neon(float32x4_t a, int what) {
  float x[4];
  int i;
  vst1q_f32(x, a);
  for (i = 0; i < 4; i++) x[i] = what == 0 ? sqrtf(x[i]) : what == 1 ? floorf(x[i]) : ceilf(x[i]);
  return vld1q_f32(x);
}
#endif
#endif
