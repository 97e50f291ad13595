/* ------------------------------------------- pool, element-wise, transpose kernels -- */
/* Plain-C templates instantiated once per vector layer: fuse__pool_* (pool.inc),
   fuse__elt_* (eltwise.inc), fuse__transpose_avx2 / _neon / _scalar (transpose.inc: the AVX-512
   CPUs take the AVX2 one, whose 8 x 8 blocks are as fast as the conversions need). */
struct fuse__pool_args {
  const float *x;
  float *y;
  const fuse_pool2d_attrs *a;
  int is_max;
  int64_t C, H, W, OH, OW;
  int64_t ldy; /* floats between output pixels: C, or a concat's channels (plan/in_place.c) */
  void (*fn)(const fuse__pool_args *d, int64_t r0, int64_t r1);
};

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
#include "vec_avx512.h"
#include "pool.inc"
#include "eltwise.inc"
#include "vec_end.h"
#endif

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* The AVX2 layer's in-register transpose of the 8 x 8 floats at x (rows ldx apart) into y
   (rows ldy apart), for transpose.inc. */
__attribute__((target("avx2,fma"))) static inline void fuse__transpose_block_avx2(const float *x,
                                                                                  int64_t ldx,
                                                                                  float *y,
                                                                                  int64_t ldy) {
  __m256 a0 = _mm256_loadu_ps(x), a1 = _mm256_loadu_ps(x + ldx);
  __m256 a2 = _mm256_loadu_ps(x + 2 * ldx), a3 = _mm256_loadu_ps(x + 3 * ldx);
  __m256 a4 = _mm256_loadu_ps(x + 4 * ldx), a5 = _mm256_loadu_ps(x + 5 * ldx);
  __m256 a6 = _mm256_loadu_ps(x + 6 * ldx), a7 = _mm256_loadu_ps(x + 7 * ldx);
  __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
  __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
  __m256 t4 = _mm256_unpacklo_ps(a4, a5), t5 = _mm256_unpackhi_ps(a4, a5);
  __m256 t6 = _mm256_unpacklo_ps(a6, a7), t7 = _mm256_unpackhi_ps(a6, a7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  _mm256_storeu_ps(y, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(y + ldy, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(y + 2 * ldy, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(y + 3 * ldy, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(y + 4 * ldy, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(y + 5 * ldy, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(y + 6 * ldy, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(y + 7 * ldy, _mm256_permute2f128_ps(u3, u7, 0x31));
}
/* Three rows of x (ldx apart) into pixels of three floats at y, 8 columns a step: each row
   permuted once so that its floats sit where the three output vectors take them, then blended
   (an RGB image to NHWC, transpose.inc). Returns the columns done, a multiple of 8. */
__attribute__((target("avx2,fma"))) static inline int64_t fuse__interleave3_avx2(const float *x,
                                                                                int64_t ldx,
                                                                                float *y,
                                                                                int64_t cols) {
  const __m256i pr = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5); /* r0 r3 r6 r1 r4 r7 r2 r5 */
  const __m256i pg = _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2);
  const __m256i pb = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
  int64_t j = 0;
  for (; j + 8 <= cols; j += 8, y += 24) {
    __m256 r = _mm256_permutevar8x32_ps(_mm256_loadu_ps(x + j), pr);
    __m256 g = _mm256_permutevar8x32_ps(_mm256_loadu_ps(x + ldx + j), pg);
    __m256 b = _mm256_permutevar8x32_ps(_mm256_loadu_ps(x + 2 * ldx + j), pb);
    /* lanes: y[0..7] r g b r g b r g, y[8..15] b r g b r g b r, y[16..23] g b r g b r g b */
    _mm256_storeu_ps(y, _mm256_blend_ps(_mm256_blend_ps(r, g, 0x92), b, 0x24));
    _mm256_storeu_ps(y + 8, _mm256_blend_ps(_mm256_blend_ps(r, g, 0x24), b, 0x49));
    _mm256_storeu_ps(y + 16, _mm256_blend_ps(_mm256_blend_ps(r, g, 0x49), b, 0x92));
  }
  return j;
}
#include "vec_avx2.h"
#define FUSE__V_TRANSPOSE_BLOCK(x, ldx, y, ldy) fuse__transpose_block_avx2(x, ldx, y, ldy)
#define FUSE__V_INTERLEAVE3(x, ldx, y, cols) fuse__interleave3_avx2(x, ldx, y, cols)
#include "pool.inc"
#include "eltwise.inc"
#include "transpose.inc"
#undef FUSE__V_TRANSPOSE_BLOCK
#undef FUSE__V_INTERLEAVE3
#include "vec_end.h"
#endif

#ifdef FUSE__NEON
/* The NEON layer's in-register transpose of the 4 x 4 floats at x into y: pairs of rows
   interleaved (vtrn), then their halves combined. */
static inline void fuse__transpose_block_neon(const float *x, int64_t ldx, float *y, int64_t ldy) {
  float32x4x2_t t01 = vtrnq_f32(vld1q_f32(x), vld1q_f32(x + ldx)); /* a0 b0 a2 b2, a1 b1 a3 b3 */
  float32x4x2_t t23 = vtrnq_f32(vld1q_f32(x + 2 * ldx), vld1q_f32(x + 3 * ldx));
  vst1q_f32(y, vcombine_f32(vget_low_f32(t01.val[0]), vget_low_f32(t23.val[0])));
  vst1q_f32(y + ldy, vcombine_f32(vget_low_f32(t01.val[1]), vget_low_f32(t23.val[1])));
  vst1q_f32(y + 2 * ldy, vcombine_f32(vget_high_f32(t01.val[0]), vget_high_f32(t23.val[0])));
  vst1q_f32(y + 3 * ldy, vcombine_f32(vget_high_f32(t01.val[1]), vget_high_f32(t23.val[1])));
}
/* Three rows of x into pixels of three floats at y, 4 columns a step (vst3). Returns the
   columns done. */
static inline int64_t fuse__interleave3_neon(const float *x, int64_t ldx, float *y,
                                             int64_t cols) {
  int64_t j = 0;
  for (; j + 4 <= cols; j += 4) {
    float32x4x3_t t;
    t.val[0] = vld1q_f32(x + j), t.val[1] = vld1q_f32(x + ldx + j);
    t.val[2] = vld1q_f32(x + 2 * ldx + j);
    vst3q_f32(y + 3 * j, t);
  }
  return j;
}
#include "vec_neon.h"
#define FUSE__V_TRANSPOSE_BLOCK(x, ldx, y, ldy) fuse__transpose_block_neon(x, ldx, y, ldy)
#define FUSE__V_INTERLEAVE3(x, ldx, y, cols) fuse__interleave3_neon(x, ldx, y, cols)
#include "pool.inc"
#include "eltwise.inc"
#include "transpose.inc"
#undef FUSE__V_TRANSPOSE_BLOCK
#undef FUSE__V_INTERLEAVE3
#include "vec_end.h"
#endif

#include "vec_scalar.h"
#define FUSE__V_TRANSPOSE_BLOCK(x, ldx, y, ldy) (*(y) = *(x))
#include "transpose.inc"
#undef FUSE__V_TRANSPOSE_BLOCK
#include "pool.inc"
#include "eltwise.inc"
#include "vec_end.h"

/* The plan's ISA's transpose (transpose.inc) of a rows x cols matrix: y[j][i] = x[i][j]. */
static void fuse__transpose_isa(fuse_isa isa, const float *x, int64_t ldx, float *y, int64_t ldy,
                                int64_t rows, int64_t cols) {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) {
    fuse__transpose_avx2(x, ldx, y, ldy, rows, cols);
    return;
  }
#endif
#ifdef FUSE__NEON
  if (isa == FUSE_ISA_NEON) {
    fuse__transpose_neon(x, ldx, y, ldy, rows, cols);
    return;
  }
#endif
  (void)isa;
  fuse__transpose_scalar(x, ldx, y, ldy, rows, cols);
}

/* y[2 b] = u[b], y[2 b + 1] = v[b] for b < n: two channel runs of a pixel interleaved (a
   channel shuffle of two groups, fuse__kernel_layout). AVX2 (the AVX-512 CPUs too, as for the
   transposes) and NEON interleave whole vectors; the rest one float at a time. */
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
__attribute__((target("avx2,fma"))) static void fuse__zip2_avx2(const float *u, const float *v,
                                                               float *y, int64_t n) {
  int64_t b = 0;
  for (; b + 8 <= n; b += 8) {
    __m256 a = _mm256_loadu_ps(u + b), c = _mm256_loadu_ps(v + b);
    __m256 lo = _mm256_unpacklo_ps(a, c), hi = _mm256_unpackhi_ps(a, c); /* a0 c0 a1 c1 a4 .. */
    _mm256_storeu_ps(y + 2 * b, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(y + 2 * b + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
  for (; b < n; b++) y[2 * b] = u[b], y[2 * b + 1] = v[b];
}
#endif

static void fuse__zip2_isa(fuse_isa isa, const float *u, const float *v, float *y, int64_t n) {
  int64_t b = 0;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) {
    fuse__zip2_avx2(u, v, y, n);
    return;
  }
#endif
#ifdef FUSE__NEON
  if (isa == FUSE_ISA_NEON)
    for (; b + 4 <= n; b += 4) {
      float32x4x2_t t;
      t.val[0] = vld1q_f32(u + b), t.val[1] = vld1q_f32(v + b);
      vst2q_f32(y + 2 * b, t);
    }
#endif
  (void)isa;
  for (; b < n; b++) y[2 * b] = u[b], y[2 * b + 1] = v[b];
}
