/* ------------------------------------------------ integer conv2d micro-kernels -- */
/* The quantized conv2d (a qconv2d step) on NHWC activations. Groups 1: an indirect GEMM over
   rows, for a tile of MR output pixels the row of each tap (its input channels, or the padding
   row) times nb panels of 16 output channels, int32 sums kept in registers over every tap and
   channel, then requantized on registers (bias, * scale, clamp, round half to even, + zero
   point) and stored as bytes. Depthwise: pixel by pixel, channels across the lanes. The
   packed forms, the step's `layout`:

   FUSE__QL_PAIRS  int16 pairs: the input as (x - x_zero) int16, channels padded to even; the
                   weights [K / 16][taps][C / 2][16][2] int16. A pair of products per 32-bit
                   lane: vpmaddwd on AVX2 (exact: |x - x_zero| <= 255, |w| <= 128, the pair
                   sum fits int32 with room; vpmaddubsw's 16-bit sums would saturate with
                   full-range weights), NEON's smlal by element (the pairs split into even and
                   odd channels by vld2q_s16), and the scalar twin (16 x 16 -> 32-bit products,
                   as a Cortex-M's dual MAC takes them).
   FUSE__QL_QUADS  int8 quads: the input as uint8 as it is (read in place when its channels
                   are a multiple of 4), channels padded to 4; the weights [K / 16][taps][C /
                   4][16][4] int8; vpdpbusd (AVX-512 VNNI on 1 to 4 panels, or AVX-VNNI on
                   256-bit registers) sums four u8 x s8 products per lane exactly. The zero
                   point comes out of the bias at pack time: bias[k] - x_zero * sum(w[k]); the
                   padding row holds x_zero, so a padded tap adds x_zero * w as an inside one.
   FUSE__QL_DW     depthwise: weights [taps][K rounded up to 16] int16, the zero point out of
                   the bias as with quads, the padding pixel x_zero.
   FUSE__QL_SQUADS signed quads, for NEON's sdot (armv8.2 dotprod, s8 x s8: four products a
                   lane): the rows and weights as quads', the tile taking x - 128 as int8 (x ^
                   0x80) as it loads a row; so the bias takes (x_zero - 128) * sum(w[k]) out
                   instead of x_zero * sum(w[k]).
   FUSE__QL_WINO   Winograd F(2x2, 3x3) on int16 pairs, for 3x3 convs of stride 1 and padding
                   1 in plans whose pairs tile is AVX2's (a CPU without VNNI): 16 products a
                   2x2 block of outputs where the direct tile takes 36. Exact in integers: the
                   input transform B'dB adds and subtracts (|v| <= 4 * 255), the weights are
                   transformed with 2G (G's halves doubled: |U| <= 9 * 128, int16), so A'MA is
                   4 times the sum, computed mod 2^32 (vpaddd wraps) and exact while 4 times the
                   sum fits int32 (C <= 1024), then shifted right by 2. The weights
                   [K / 16][16 positions][C / 2][16][2] int16: a pairs panel of 16 "taps"; the
                   products summed over the channels by the pairs tile with h NULL (int32 sums
                   out, one position a call), each 4x4 block of sums transformed and requantized
                   on registers (fuse__qwino_*).
   FUSE__QL_WINO3  Winograd F(3x3, 3x3) on int16 pairs, for those convs in plans for AVX-512 on
                   a CPU with VNNI: 25 products a 3x3 block of outputs where the direct tile
                   takes 81, vpdpwssd (kernels/qwino3.c). The weights [K / 16][25 positions][C
                   / 2][16][2] int16, the zero point out of the bias as with quads.
   FUSE__QL_WINDOW quads of a whole window, for a kernel of few input channels (C % 4, a stem's
                   3; fuse__qconv_window): the input copied as rows of C bytes a pixel with the
                   padding columns (as in row mode), each pixel's KH x KW x C window then
                   gathered (its KH runs of KW x C bytes) into one run of taps x C bytes, and
                   the quads tiles take it as one tap: no quad holds a padding channel (a 7x7
                   stem's 147 bytes are 37 quads, not 49). The weights [K / 16][ceil(taps x C /
                   4)][16][4] int8, [KH][KW][C] flattened, zeros past it. x86 builds only.

   Rounding: the x86 SIMD tiles round with cvtps2dq under the caller's rounding mode, the
   default (nearest, ties to even), as ONNX Runtime's do; NEON's and the scalar twin round
   half to even whatever the mode. */
enum { FUSE__QL_DIRECT = 0, FUSE__QL_PAIRS = 1, FUSE__QL_QUADS = 2, FUSE__QL_DW = 3, FUSE__QL_SQUADS = 4,
       FUSE__QL_WINO = 5, FUSE__QL_WINO3 = 6, FUSE__QL_WINDOW = 7 };
#ifdef FUSE__SIMD
#define FUSE__HAVE_QWINDOW 1 /* (window mode: x86 builds) */
#endif
#define FUSE__QNR 16    /* output channels of a weight panel */
#define FUSE__QMR_MAX 16 /* pixels of a tile, at most */

/* A tile: MR pixels' rows (rows[t * MR + r], tap-major), csteps channel pairs / quads, nb
   panels of 16 output channels (w, the first; pstride bytes between them), written to y
   (ldy bytes between pixels): the first mvalid pixels, the first kvalid channels; bias and
   scale those channels' (padded channels have bias 0, scale 0). Pairs tiles (AVX2's and the
   scalar twin) with h NULL: the int32 sums, no bias, all 16 channels of the first mvalid
   pixels stored as they are (Winograd's products, FUSE__QL_WINO). */
typedef void (*fuse__qtile_fn)(int ntaps, int csteps, const void *const *rows, const void *w,
                               int64_t pstride, unsigned char *y, int64_t ldy, int mvalid,
                               int kvalid, const int32_t *bias, const float *scale,
                               const fuse__qhead *h);

/* The requantization of one sum, as the SIMD tiles compute it (and the direct loops,
   run/quant_run.c). NaN cannot occur: acc and scale are finite. */
static int32_t fuse__qtile_requant(int32_t acc, float scale, const fuse__qhead *h) {
  float f = (float)acc * scale, lo = (float)(h->lo - h->y_zero), hi = (float)(h->hi - h->y_zero);
  f = f < lo ? lo : f > hi ? hi : f;
  return (int32_t)fuse__round_half_even(f) + h->y_zero;
}

static void fuse__qtile_pairs_scalar(int ntaps, int csteps, const void *const *rows,
                                     const void *wv, int64_t pstride, unsigned char *y,
                                     int64_t ldy, int mvalid, int kvalid, const int32_t *bias,
                                     const float *scale, const fuse__qhead *h) {
  enum { MR = 4 };
  const int16_t *w = (const int16_t *)wv;
  uint32_t acc[MR][FUSE__QNR]; /* (sums mod 2^32, as the SIMD tiles' lanes wrap) */
  int t, c, r, j;
  (void)pstride; /* (one panel) */
  for (r = 0; r < MR; r++)
    for (j = 0; j < FUSE__QNR; j++) acc[r][j] = h ? (uint32_t)bias[j] : 0;
  for (t = 0; t < ntaps; t++)
    for (c = 0; c < csteps; c++, w += 2 * FUSE__QNR)
      for (r = 0; r < MR; r++) {
        const int16_t *x = (const int16_t *)rows[t * MR + r] + 2 * c;
        for (j = 0; j < FUSE__QNR; j++) /* two 16 x 16 products per lane */
          acc[r][j] += (uint32_t)((int32_t)x[0] * w[2 * j]) + (uint32_t)((int32_t)x[1] * w[2 * j + 1]);
      }
  if (!h) { /* the raw sums */
    for (r = 0; r < mvalid; r++) memcpy(y + r * ldy, acc[r], sizeof acc[r]);
    return;
  }
  for (r = 0; r < mvalid; r++)
    for (j = 0; j < kvalid; j++)
      y[r * ldy + j] = (unsigned char)(fuse__qtile_requant((int32_t)acc[r][j], scale[j], h) & 0xff);
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* 8 int32 sums (the bias in them), requantized, as 8 int32 in the output type's range. */
__attribute__((target("avx2,fma"))) static inline __m256i fuse__qrequant8_avx2(
    __m256i acc, const float *scale, const fuse__qhead *h) {
  const __m256 lo = _mm256_set1_ps((float)(h->lo - h->y_zero));
  const __m256 hi = _mm256_set1_ps((float)(h->hi - h->y_zero));
  __m256 f = _mm256_cvtepi32_ps(acc);
  f = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(f, _mm256_loadu_ps(scale)), lo), hi);
  return _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(h->y_zero));
}

/* 16 int32 sums (two vectors, the bias in them), requantized, as the first n <= 16 bytes at
   y. */
__attribute__((target("avx2,fma"))) static inline void fuse__qstore16_avx2(
    __m256i a0, __m256i a1, const float *scale, const fuse__qhead *h, unsigned char *y, int n) {
  __m256i q0 = fuse__qrequant8_avx2(a0, scale, h), q1 = fuse__qrequant8_avx2(a1, scale + 8, h);
  __m256i p16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xd8); /* 16 int16, in order */
  __m128i b = h->y_signed ? _mm_packs_epi16(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1))
                          : _mm_packus_epi16(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1));
  unsigned char part[16];
  if (n >= 16) {
    _mm_storeu_si128((__m128i *)(void *)y, b);
    return;
  }
  _mm_storeu_si128((__m128i *)(void *)part, b);
  memcpy(y, part, (size_t)n);
}

/* n bytes x as int16 x - z into y (the pairs' input rows, run/quant_run.c). */
__attribute__((target("avx2,fma"))) static void fuse__qpairs_row_avx2(const uint8_t *x, int16_t *y,
                                                                      int64_t n, int32_t z) {
  const __m256i zv = _mm256_set1_epi16((short)z);
  int64_t i;
  for (i = 0; i + 16 <= n; i += 16)
    _mm256_storeu_si256((__m256i *)(void *)(y + i),
                        _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(x + i))), zv));
  for (; i < n; i++) y[i] = (int16_t)(x[i] - z);
}

/* AVX2: MR = 6 pixels x 16 channels, 12 accumulators; vpmaddwd on int16 pairs. */
#define FUSE__QMR_AVX2 6
__attribute__((target("avx2,fma"))) static void fuse__qtile_pairs_avx2(
    int ntaps, int csteps, const void *const *rows, const void *wv, int64_t pstride,
    unsigned char *y, int64_t ldy, int mvalid, int kvalid, const int32_t *bias,
    const float *scale, const fuse__qhead *h) {
  const int16_t *w = (const int16_t *)wv;
  __m256i acc[FUSE__QMR_AVX2][2];
  int t, c, r;
  (void)pstride;
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_AVX2; r++) { /* the sums start at the bias (raw sums: at 0) */
    acc[r][0] = h ? _mm256_loadu_si256((const __m256i *)(const void *)bias) : _mm256_setzero_si256();
    acc[r][1] = h ? _mm256_loadu_si256((const __m256i *)(const void *)(bias + 8)) : _mm256_setzero_si256();
  }
  for (t = 0; t < ntaps; t++) {
    const int16_t *x[FUSE__QMR_AVX2];
    FUSE__UNROLL
    for (r = 0; r < FUSE__QMR_AVX2; r++) x[r] = (const int16_t *)rows[t * FUSE__QMR_AVX2 + r];
    for (c = 0; c < csteps; c++, w += 2 * FUSE__QNR) {
      const __m256i w0 = _mm256_loadu_si256((const __m256i *)(const void *)w);
      const __m256i w1 = _mm256_loadu_si256((const __m256i *)(const void *)(w + 16));
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_AVX2; r++) {
        int32_t pair;
        __m256i xb;
        memcpy(&pair, x[r] + 2 * c, 4);
        xb = _mm256_set1_epi32(pair);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(xb, w0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(xb, w1));
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_AVX2; r++) { /* (unrolled: constant indices keep the sums in registers) */
    if (r >= mvalid) break;
    if (!h) { /* the raw sums */
      _mm256_storeu_si256((__m256i *)(void *)(y + r * ldy), acc[r][0]);
      _mm256_storeu_si256((__m256i *)(void *)(y + r * ldy + 32), acc[r][1]);
      continue;
    }
    fuse__qstore16_avx2(acc[r][0], acc[r][1], scale, h, y + r * ldy, kvalid);
  }
}

/* AVX-VNNI: the same tile on int8 quads, vpdpbusd on 256-bit registers. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 || defined(__clang__) && __clang_major__ >= 12
#define FUSE__HAVE_AVXVNNI 1
__attribute__((target("avx2,fma,avxvnni"))) static void fuse__qtile_quads_avxvnni(
    int ntaps, int csteps, const void *const *rows, const void *wv, int64_t pstride,
    unsigned char *y, int64_t ldy, int mvalid, int kvalid, const int32_t *bias,
    const float *scale, const fuse__qhead *h) {
  const int8_t *w = (const int8_t *)wv;
  __m256i acc[FUSE__QMR_AVX2][2];
  int t, c, r;
  (void)pstride;
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_AVX2; r++) { /* the sums start at the bias */
    acc[r][0] = _mm256_loadu_si256((const __m256i *)(const void *)bias);
    acc[r][1] = _mm256_loadu_si256((const __m256i *)(const void *)(bias + 8));
  }
  for (t = 0; t < ntaps; t++) {
    const uint8_t *x[FUSE__QMR_AVX2];
    FUSE__UNROLL
    for (r = 0; r < FUSE__QMR_AVX2; r++) x[r] = (const uint8_t *)rows[t * FUSE__QMR_AVX2 + r];
    for (c = 0; c < csteps; c++, w += 4 * FUSE__QNR) {
      const __m256i w0 = _mm256_loadu_si256((const __m256i *)(const void *)w);
      const __m256i w1 = _mm256_loadu_si256((const __m256i *)(const void *)(w + 32));
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_AVX2; r++) {
        int32_t quad;
        __m256i xb;
        memcpy(&quad, x[r] + 4 * c, 4);
        xb = _mm256_set1_epi32(quad);
        acc[r][0] = _mm256_dpbusd_avx_epi32(acc[r][0], xb, w0);
        acc[r][1] = _mm256_dpbusd_avx_epi32(acc[r][1], xb, w1);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_AVX2; r++) { /* (unrolled: constant indices keep the sums in registers) */
    if (r >= mvalid) break;
    fuse__qstore16_avx2(acc[r][0], acc[r][1], scale, h, y + r * ldy, kvalid);
  }
}
#endif
#endif

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
/* AVX-512 (the depthwise kernels, the requantization: any AVX-512 CPU), and AVX-512 with VNNI
   (the tiles; the depthwise kernel's vpdpwssd form), apart so that the compiler cannot put a
   VNNI instruction where a CPU without it runs */
#define FUSE__QV512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define FUSE__QV512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#define FUSE__HAVE_QWINO3 1 /* Winograd F(3x3) on AVX-512 VNNI (kernels/qwino3.c) */
/* 16 int32 sums (the bias in them), requantized, into the type's range, the first bits of
   mask stored. */
FUSE__QV512 static inline void fuse__qstore16_avx512(__m512i acc, const float *scale,
                                                      const fuse__qhead *h, unsigned char *y,
                                                      __mmask16 mask) {
  /* (the maskz forms: g++ 12 warns on the unmasked ones' undefined source) */
  const __mmask16 all = (__mmask16)-1;
  const __m512 lo = _mm512_set1_ps((float)(h->lo - h->y_zero));
  const __m512 hi = _mm512_set1_ps((float)(h->hi - h->y_zero));
  __m512 f = _mm512_maskz_cvtepi32_ps(all, acc);
  __m512i q;
  f = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, _mm512_mul_ps(f, _mm512_loadu_ps(scale)), lo), hi);
  q = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, f), _mm512_set1_epi32(h->y_zero));
  if (h->y_signed) _mm512_mask_cvtsepi32_storeu_epi8(y, mask, q);
  else _mm512_mask_cvtusepi32_storeu_epi8(y, mask, q);
}

/* The AVX-512 VNNI tiles, one function a kind (kernels/qtile_avx512.inc). */
#define FUSE__QT_NB 4
#define FUSE__QT_MR 6
#define FUSE__QT_NAME fuse__qtile_avx512_4x6
#include "qtile_avx512.inc"
#undef FUSE__QT_NB
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_NB 3
#define FUSE__QT_MR 8
#define FUSE__QT_NAME fuse__qtile_avx512_3x8
#include "qtile_avx512.inc"
#undef FUSE__QT_NB
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_NB 2
#define FUSE__QT_MR 12
#define FUSE__QT_NAME fuse__qtile_avx512_2x12
#include "qtile_avx512.inc"
#undef FUSE__QT_NB
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_NB 1
#define FUSE__QT_MR 16
#define FUSE__QT_NAME fuse__qtile_avx512_1x16
#include "qtile_avx512.inc"
#undef FUSE__QT_NB
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_NB 3
#define FUSE__QT_MR 6
#define FUSE__QT_NAME fuse__qtile_avx512_3x6
#include "qtile_avx512.inc"
#undef FUSE__QT_NB
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_NB 2
#define FUSE__QT_MR 6
#define FUSE__QT_NAME fuse__qtile_avx512_2x6
#include "qtile_avx512.inc"
#undef FUSE__QT_NB
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_NB 1
#define FUSE__QT_MR 6
#define FUSE__QT_NAME fuse__qtile_avx512_1x6
#include "qtile_avx512.inc"
#undef FUSE__QT_NB
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
/* the last pixels of an image on 4 panels, 1 to 5 of them: a 4x6 tile would go over all the
   block's weights for 6 (7x7 outputs: 8 tiles of 6 and one of 1) */
#define FUSE__QT_NB 4
#define FUSE__QT_MR 1
#define FUSE__QT_NAME fuse__qtile_avx512_4x1
#include "qtile_avx512.inc"
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_MR 2
#define FUSE__QT_NAME fuse__qtile_avx512_4x2
#include "qtile_avx512.inc"
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_MR 3
#define FUSE__QT_NAME fuse__qtile_avx512_4x3
#include "qtile_avx512.inc"
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_MR 4
#define FUSE__QT_NAME fuse__qtile_avx512_4x4
#include "qtile_avx512.inc"
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#define FUSE__QT_MR 5
#define FUSE__QT_NAME fuse__qtile_avx512_4x5
#include "qtile_avx512.inc"
#undef FUSE__QT_NB
#undef FUSE__QT_MR
#undef FUSE__QT_NAME
#endif

#ifdef FUSE__NEON
/* NEON: the pairs layout, MR pixels x 16 channels (one panel), four int32x4 accumulators a
   pixel. A channel step's 16 weight pairs are split by vld2q_s16 into the even and the odd
   channels' weights (a register of 8 each, two of each a step), and each pixel's pair
   multiply-adds them widening, by lane (smlal by element: 4 exact 16 x 16 -> 32-bit products;
   |x - x_zero| <= 255, |w| <= 128, as on AVX2). Two steps a load of a row (8 bytes). aarch64
   has 32 registers: 5 pixels' 20 accumulators, the two steps' 8 of weights, and the rows;
   armv7 has 16: 2 pixels. */
#if defined(__aarch64__)
#define FUSE__QMR_NEON 5
#else
#define FUSE__QMR_NEON 2
#endif

/* v rounded to the nearest whole number, ties to even, as an int32: aarch64's fcvtns rounds so
   whatever the mode; armv7's NEON always rounds to nearest, so the add and subtract of 1.5 *
   2^23 leaves none of the fraction (|v| < 2^22: the values are clamped to the output's range
   first) and the conversion that truncates is exact. */
static inline int32x4_t fuse__qround_neon(float32x4_t v) {
#if defined(__aarch64__)
  return vcvtnq_s32_f32(v);
#else
  const float32x4_t magic = vdupq_n_f32(12582912.0f);
  return vcvtq_s32_f32(vsubq_f32(vaddq_f32(v, magic), magic));
#endif
}

/* 4 int32 sums + bias, requantized as fuse__qtile_requant does, into the type's range. */
static inline int32x4_t fuse__qrequant4_neon(int32x4_t acc, const int32_t *bias,
                                             const float *scale, const fuse__qhead *h) {
  const float32x4_t lo = vdupq_n_f32((float)(h->lo - h->y_zero));
  const float32x4_t hi = vdupq_n_f32((float)(h->hi - h->y_zero));
  float32x4_t f = vmulq_f32(vcvtq_f32_s32(vaddq_s32(acc, vld1q_s32(bias))), vld1q_f32(scale));
  return vaddq_s32(fuse__qround_neon(vminq_f32(vmaxq_f32(f, lo), hi)), vdupq_n_s32(h->y_zero));
}

/* 16 int32 sums (4 vectors) + bias, requantized, as the first n <= 16 bytes at y. */
static inline void fuse__qstore16_neon(int32x4_t a0, int32x4_t a1, int32x4_t a2, int32x4_t a3,
                                       const int32_t *bias, const float *scale,
                                       const fuse__qhead *h, unsigned char *y, int n) {
  int16x8_t q0 = vcombine_s16(vqmovn_s32(fuse__qrequant4_neon(a0, bias, scale, h)),
                              vqmovn_s32(fuse__qrequant4_neon(a1, bias + 4, scale + 4, h)));
  int16x8_t q1 = vcombine_s16(vqmovn_s32(fuse__qrequant4_neon(a2, bias + 8, scale + 8, h)),
                              vqmovn_s32(fuse__qrequant4_neon(a3, bias + 12, scale + 12, h)));
  uint8x16_t b = h->y_signed ? vreinterpretq_u8_s8(vcombine_s8(vqmovn_s16(q0), vqmovn_s16(q1)))
                             : vcombine_u8(vqmovun_s16(q0), vqmovun_s16(q1));
  unsigned char part[16];
  if (n >= 16) {
    vst1q_u8(y, b);
    return;
  }
  vst1q_u8(part, b);
  memcpy(y, part, (size_t)n);
}

/* acc + a channel step's 4 even channels' weights (the low or high half of we, of 8) times
   lane l of x + the odd ones' (wo) times lane l + 1: smlal by element, twice. (Macros: the
   lane must be a constant.) */
#define FUSE__QMAC_LOW_NEON(acc, we, wo, x, l)                                                 \
  vmlal_lane_s16(vmlal_lane_s16(acc, vget_low_s16(we), x, l), vget_low_s16(wo), x, (l) + 1)
#define FUSE__QMAC_HIGH_NEON(acc, we, wo, x, l)                                                \
  vmlal_lane_s16(vmlal_lane_s16(acc, vget_high_s16(we), x, l), vget_high_s16(wo), x, (l) + 1)

static void fuse__qtile_pairs_neon(int ntaps, int csteps, const void *const *rows,
                                   const void *wv, int64_t pstride, unsigned char *y,
                                   int64_t ldy, int mvalid, int kvalid, const int32_t *bias,
                                   const float *scale, const fuse__qhead *h) {
  const int16_t *w = (const int16_t *)wv;
  int32x4_t acc[FUSE__QMR_NEON][4];
  int t, c, r, j;
  (void)pstride; /* (one panel) */
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_NEON; r++) {
    FUSE__UNROLL
    for (j = 0; j < 4; j++) acc[r][j] = vdupq_n_s32(0);
  }
  for (t = 0; t < ntaps; t++) {
    const int16_t *x[FUSE__QMR_NEON];
    FUSE__UNROLL
    for (r = 0; r < FUSE__QMR_NEON; r++) x[r] = (const int16_t *)rows[t * FUSE__QMR_NEON + r];
    for (c = 0; c + 2 <= csteps; c += 2, w += 4 * FUSE__QNR) { /* two steps: a row's 4 values */
      /* val[0] the even channels' weights, val[1] the odd ones': channels 0-7, 8-15 of step
         c (w0, w1) and of step c + 1 (w2, w3) */
      const int16x8x2_t w0 = vld2q_s16(w), w1 = vld2q_s16(w + 16);
      const int16x8x2_t w2 = vld2q_s16(w + 32), w3 = vld2q_s16(w + 48);
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_NEON; r++) {
        const int16x4_t xv = vld1_s16(x[r] + 2 * c);
        acc[r][0] = FUSE__QMAC_LOW_NEON(acc[r][0], w0.val[0], w0.val[1], xv, 0);
        acc[r][1] = FUSE__QMAC_HIGH_NEON(acc[r][1], w0.val[0], w0.val[1], xv, 0);
        acc[r][2] = FUSE__QMAC_LOW_NEON(acc[r][2], w1.val[0], w1.val[1], xv, 0);
        acc[r][3] = FUSE__QMAC_HIGH_NEON(acc[r][3], w1.val[0], w1.val[1], xv, 0);
        acc[r][0] = FUSE__QMAC_LOW_NEON(acc[r][0], w2.val[0], w2.val[1], xv, 2);
        acc[r][1] = FUSE__QMAC_HIGH_NEON(acc[r][1], w2.val[0], w2.val[1], xv, 2);
        acc[r][2] = FUSE__QMAC_LOW_NEON(acc[r][2], w3.val[0], w3.val[1], xv, 2);
        acc[r][3] = FUSE__QMAC_HIGH_NEON(acc[r][3], w3.val[0], w3.val[1], xv, 2);
      }
    }
    if (c < csteps) { /* the last step of an odd count: a row's 2 values */
      const int16x8x2_t w0 = vld2q_s16(w), w1 = vld2q_s16(w + 16);
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_NEON; r++) {
        int32_t pair;
        int16x4_t xv;
        memcpy(&pair, x[r] + 2 * c, 4);
        xv = vreinterpret_s16_s32(vdup_n_s32(pair));
        acc[r][0] = FUSE__QMAC_LOW_NEON(acc[r][0], w0.val[0], w0.val[1], xv, 0);
        acc[r][1] = FUSE__QMAC_HIGH_NEON(acc[r][1], w0.val[0], w0.val[1], xv, 0);
        acc[r][2] = FUSE__QMAC_LOW_NEON(acc[r][2], w1.val[0], w1.val[1], xv, 0);
        acc[r][3] = FUSE__QMAC_HIGH_NEON(acc[r][3], w1.val[0], w1.val[1], xv, 0);
      }
      w += 2 * FUSE__QNR;
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_NEON; r++) /* (constant indices: the accumulators stay registers) */
    if (r < mvalid)
      fuse__qstore16_neon(acc[r][0], acc[r][1], acc[r][2], acc[r][3], bias, scale, h,
                          y + r * ldy, kvalid);
}
#undef FUSE__QMAC_LOW_NEON
#undef FUSE__QMAC_HIGH_NEON

/* NEON with dotprod (armv8.2): the signed quads layout, 4 pixels x 16 channels, sdot by
   element: a channel step's 16 weight quads are 4 registers (4 channels each), a pixel's quad
   a lane of its row's 16 bytes (4 steps), made x - 128 by one eor. Built where the compiler
   targets dotprod (__ARM_FEATURE_DOTPROD: -march=armv8.2-a+dotprod, -mcpu of such a core,
   armv8.4-a on; gcc 12's sdot intrinsics need armv8.2-a's atomics, CRC32 and rounding
   doubling multiplies too: not for armv8-a+dotprod); a plan takes it where the CPU has it
   (fuse__cpu_vnni's bit 8). */
#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD) &&                                  \
    (defined(__clang__) || (defined(__ARM_FEATURE_ATOMICS) && defined(__ARM_FEATURE_CRC32) &&  \
                            defined(__ARM_FEATURE_QRDMX)))
#define FUSE__HAVE_SDOT 1
#define FUSE__QMR_SDOT 4
#ifdef __linux__
#include <sys/auxv.h> /* getauxval: fuse__cpu_vnni */
#endif

/* acc[0..3] (channels 0-3, ..., 12-15) += a step's weights w[0..3] dotted with lane l of x.
   (A macro: the lane must be a constant.) */
#define FUSE__QSDOT_NEON(acc, w, x, l)                                                         \
  ((acc)[0] = vdotq_laneq_s32((acc)[0], (w)[0], x, l),                                        \
   (acc)[1] = vdotq_laneq_s32((acc)[1], (w)[1], x, l),                                        \
   (acc)[2] = vdotq_laneq_s32((acc)[2], (w)[2], x, l),                                        \
   (acc)[3] = vdotq_laneq_s32((acc)[3], (w)[3], x, l))

/* a step's 16 weight quads at p, into w[0..3] */
static inline void fuse__qload_quads_neon(int8x16_t *w, const int8_t *p) {
  w[0] = vld1q_s8(p), w[1] = vld1q_s8(p + 16), w[2] = vld1q_s8(p + 32), w[3] = vld1q_s8(p + 48);
}

static void fuse__qtile_squads_neon(int ntaps, int csteps, const void *const *rows,
                                    const void *wv, int64_t pstride, unsigned char *y,
                                    int64_t ldy, int mvalid, int kvalid, const int32_t *bias,
                                    const float *scale, const fuse__qhead *h) {
  const int8_t *w = (const int8_t *)wv;
  const uint8x16_t flip = vdupq_n_u8(0x80);
  int32x4_t acc[FUSE__QMR_SDOT][4];
  int8x16_t wq[4];
  int t, c, r, j;
  (void)pstride; /* (one panel) */
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_SDOT; r++) {
    FUSE__UNROLL
    for (j = 0; j < 4; j++) acc[r][j] = vdupq_n_s32(0);
  }
  for (t = 0; t < ntaps; t++) {
    const uint8_t *x[FUSE__QMR_SDOT];
    FUSE__UNROLL
    for (r = 0; r < FUSE__QMR_SDOT; r++) x[r] = (const uint8_t *)rows[t * FUSE__QMR_SDOT + r];
    for (c = 0; c + 4 <= csteps; c += 4, w += 16 * FUSE__QNR) { /* four steps: 16 bytes a row */
      int8x16_t xv[FUSE__QMR_SDOT];
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_SDOT; r++)
        xv[r] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(x[r] + 4 * c), flip));
      fuse__qload_quads_neon(wq, w);
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_SDOT; r++) FUSE__QSDOT_NEON(acc[r], wq, xv[r], 0);
      fuse__qload_quads_neon(wq, w + 4 * FUSE__QNR);
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_SDOT; r++) FUSE__QSDOT_NEON(acc[r], wq, xv[r], 1);
      fuse__qload_quads_neon(wq, w + 8 * FUSE__QNR);
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_SDOT; r++) FUSE__QSDOT_NEON(acc[r], wq, xv[r], 2);
      fuse__qload_quads_neon(wq, w + 12 * FUSE__QNR);
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_SDOT; r++) FUSE__QSDOT_NEON(acc[r], wq, xv[r], 3);
    }
    for (; c < csteps; c++, w += 4 * FUSE__QNR) { /* the last 1 to 3 steps: a quad a row */
      fuse__qload_quads_neon(wq, w);
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_SDOT; r++) {
        int32_t quad;
        int8x16_t xv;
        memcpy(&quad, x[r] + 4 * c, 4);
        xv = vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_s32(vdupq_n_s32(quad)), flip));
        FUSE__QSDOT_NEON(acc[r], wq, xv, 0);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_SDOT; r++) /* (constant indices: the accumulators stay registers) */
    if (r < mvalid)
      fuse__qstore16_neon(acc[r][0], acc[r][1], acc[r][2], acc[r][3], bias, scale, h,
                          y + r * ldy, kvalid);
}
#undef FUSE__QSDOT_NEON
#endif
#endif

/* The CPU's integer extensions, as bits: 1 AVX-512 VNNI (with AVX-512 F, BW, VL and the OS
   saving their state), 2 AVX-VNNI, 4 AVX-512 VBMI (byte permutes: kernels/qeltwise.c's
   tables), 8 ARM's dotprod (sdot; asked of Linux, HWCAP_ASIMDDP; elsewhere assumed where the
   build targets it); 0 none. With FUSE_NO_VNNI defined no VNNI or dotprod bit, whatever the
   CPU: its plans take the int16 pairs, as on a CPU without them. */
static int fuse__cpu_vnni(void) {
  int v = 0;
#ifdef FUSE__HAVE_SDOT
#ifdef __linux__
  if (getauxval(AT_HWCAP) & (1ul << 20)) v |= 8; /* HWCAP_ASIMDDP */
#else
  v |= 8;
#endif
#ifdef FUSE_NO_VNNI
  v = 0;
#endif
#endif
#ifdef FUSE__X86
  unsigned r[4];
  fuse__cpuid(0, 0, r);
  if (r[0] < 7 || fuse_cpu_isa() == FUSE_ISA_SCALAR) return 0;
  fuse__cpuid(7, 0, r);
  if (fuse_cpu_isa() == FUSE_ISA_AVX512 && (r[2] & (1u << 11))) v |= 1;
  if (fuse_cpu_isa() == FUSE_ISA_AVX512 && (r[2] & (1u << 1))) v |= 4;
  fuse__cpuid(7, 1, r);
  if (r[0] & (1u << 4)) v |= 2;
#ifdef FUSE_NO_VNNI
  v &= 4;
#endif
#endif
  return v;
}

/* The tiles, in order of preference: a family per ISA and layout (the first of a family
   that runs here is the plan's), AVX-512's main kinds by panels before the narrower tails. */
typedef struct fuse__qtile_kind {
  fuse__qtile_fn fn;
  signed char isa;    /* FUSE_ISA_AVX512 / NEON: plans for it; AVX2: plans for AVX2 or AVX-512;
                         SCALAR: any */
  signed char layout; /* FUSE__QL_PAIRS / _QUADS / _SQUADS */
  signed char vnni;   /* the fuse__cpu_vnni() bit it needs, or 0 */
  signed char nb, mr; /* panels of 16 output channels, pixels */
} fuse__qtile_kind;

static const fuse__qtile_kind fuse__qtile_kinds[] = {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
    {fuse__qtile_avx512_4x6, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 4, 6},
    {fuse__qtile_avx512_3x8, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 3, 8},
    {fuse__qtile_avx512_2x12, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 2, 12},
    {fuse__qtile_avx512_1x16, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 1, 16},
    {fuse__qtile_avx512_3x6, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 3, 6}, /* tails of 4x6 */
    {fuse__qtile_avx512_2x6, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 2, 6},
    {fuse__qtile_avx512_1x6, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 1, 6},
    {fuse__qtile_avx512_4x1, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 4, 1}, /* the last pixels' */
    {fuse__qtile_avx512_4x2, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 4, 2},
    {fuse__qtile_avx512_4x3, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 4, 3},
    {fuse__qtile_avx512_4x4, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 4, 4},
    {fuse__qtile_avx512_4x5, FUSE_ISA_AVX512, FUSE__QL_QUADS, 1, 4, 5},
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
#ifdef FUSE__HAVE_AVXVNNI
    {fuse__qtile_quads_avxvnni, FUSE_ISA_AVX2, FUSE__QL_QUADS, 2, 1, FUSE__QMR_AVX2},
#endif
    {fuse__qtile_pairs_avx2, FUSE_ISA_AVX2, FUSE__QL_PAIRS, 0, 1, FUSE__QMR_AVX2},
#endif
#ifdef FUSE__NEON
#ifdef FUSE__HAVE_SDOT
    {fuse__qtile_squads_neon, FUSE_ISA_NEON, FUSE__QL_SQUADS, 8, 1, FUSE__QMR_SDOT},
#endif
    {fuse__qtile_pairs_neon, FUSE_ISA_NEON, FUSE__QL_PAIRS, 0, 1, FUSE__QMR_NEON},
#endif
    {fuse__qtile_pairs_scalar, FUSE_ISA_SCALAR, FUSE__QL_PAIRS, 0, 1, 4},
    {NULL, 0, 0, 0, 0, 0}};

/* Whether kind k runs in a plan for isa with `layout` on a CPU of fuse__cpu_vnni() `vnni`. */
static int fuse__qtile_runs(const fuse__qtile_kind *k, fuse_isa isa, int layout, int vnni) {
#ifdef FUSE__HAVE_QWINDOW
  if (layout == FUSE__QL_WINDOW) layout = FUSE__QL_QUADS; /* (the quads tiles, one tap) */
#endif
  if (k->layout != layout || (k->vnni && !(vnni & k->vnni)) || isa == FUSE_ISA_AUTO) return 0;
  if (k->isa == FUSE_ISA_AVX512) return isa == FUSE_ISA_AVX512;
  if (k->isa == FUSE_ISA_AVX2) return isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512;
  if (k->isa == FUSE_ISA_NEON) return isa == FUSE_ISA_NEON;
  return 1;
}

/* The tile of nb panels by mr pixels of the family a plan for isa runs `layout` on; NULL: none. */
static fuse__qtile_fn fuse__qtile_get(fuse_isa isa, int layout, int vnni, int nb, int mr) {
  const fuse__qtile_kind *k, *family = NULL;
  for (k = fuse__qtile_kinds; k->fn; k++) {
    if (!fuse__qtile_runs(k, isa, layout, vnni) || (family && k->isa != family->isa)) continue;
    family = k;
    if (k->nb == nb && k->mr == mr) return k->fn;
  }
  return NULL;
}

/* The main tile for K output channels: of the family a plan for isa runs `layout` on, the
   first kind no wider than K needs (nb panels, in *nb, by *mr pixels); the last block of a
   wider K runs on the family's kind of the same MR and the panels it needs
   (fuse__qtile_get). NULL: the layout does not run here. */
static fuse__qtile_fn fuse__qtile_plan(fuse_isa isa, int layout, int vnni, int64_t K, int *nb,
                                       int *mr) {
  const fuse__qtile_kind *k, *family = NULL;
  int64_t want = (K + FUSE__QNR - 1) / FUSE__QNR;
  if (want > 4 && K % 64 && K % 48 == 0) want = 3; /* 96, 144: whole blocks of 3 panels, no
                                                        narrow tail block */
  for (k = fuse__qtile_kinds; k->fn; k++) {
    if (!fuse__qtile_runs(k, isa, layout, vnni) || (family && k->isa != family->isa)) continue;
    family = k;
    if (k->nb <= want || k->nb == 1) {
      *nb = k->nb, *mr = k->mr;
      return k->fn;
    }
  }
  return NULL;
}

/* Bytes of a qconv2d's weights in `layout`, and its Kp: groups' [K][Cg][taps] (direct);
   panels of 16 output channels [K / 16][taps][Cg / step][16][step] (pairs, int16; quads and
   signed quads, int8), [K / 16][taps x Cg / 4][16][4] (window mode); depthwise [taps][Kp]
   int16 (Cg = 1). */
static size_t fuse__qconv_weight_bytes(int layout, int64_t K, int64_t Cg, int64_t taps,
                                       int64_t *Kp) {
  int64_t KB = (K + FUSE__QNR - 1) / FUSE__QNR;
  *Kp = layout == FUSE__QL_DIRECT ? K : KB * FUSE__QNR;
  if (layout == FUSE__QL_WINO) taps = 16; /* (its positions) */
#ifdef FUSE__HAVE_QWINO3
  if (layout == FUSE__QL_WINO3) taps = 25;
#endif
#ifdef FUSE__HAVE_QWINDOW
  if (layout == FUSE__QL_WINDOW) return (size_t)(KB * ((taps * Cg + 3) / 4) * FUSE__QNR * 4);
#endif
  if (layout == FUSE__QL_PAIRS
#ifdef FUSE__SIMD /* (Winograd: x86 builds) */
      || layout == FUSE__QL_WINO || layout == FUSE__QL_WINO3
#endif
  )
    return (size_t)(KB * taps * ((Cg + 1) / 2) * FUSE__QNR * 2 * 2);
  if (layout == FUSE__QL_QUADS || layout == FUSE__QL_SQUADS)
    return (size_t)(KB * taps * ((Cg + 3) / 4) * FUSE__QNR * 4);
  if (layout == FUSE__QL_DW) return (size_t)(taps * *Kp * 2);
  return (size_t)(K * Cg * taps);
}

/* Whether a pairs / quads qconv2d with C input channels runs in row mode: the input copied
   with its left and right padding columns, each kernel row of KW taps is then one run of KW x
   C contiguous channels, and the tile takes KH "taps" of KW x csteps steps. With a channel
   step or two per tap (a stem's 3 channels) the tile's loop would otherwise go round its taps,
   and its caller round their row pointers, with almost no work in each. The weights' order
   is the same either way: [KH][KW][C / step] flattened. Not with column dilation. */
static int fuse__qconv_rowmode(int layout, int64_t C, int64_t KW, int64_t dilation_w) {
  int64_t step = layout == FUSE__QL_PAIRS ? 2 : 4;
  return KW > 1 && dilation_w == 1 && (C + step - 1) / step <= 2;
}

/* Whether a quads qconv2d with C input channels, a KH x KW kernel, runs in window mode
   (FUSE__QL_WINDOW): channels that leave quads part empty, few enough that a kernel row is
   one run of at most 32 bytes (a gathered window's runs are copied 32 bytes at a time), at
   most 16 kernel rows. x86 builds (the VNNI tiles) only. */
#ifdef FUSE__HAVE_QWINDOW
#define FUSE__QWINDOW_KH 16 /* kernel rows at most */
static int fuse__qconv_window(int64_t C, int64_t KH, int64_t KW, int64_t dilation_w) {
  return C % 4 && C < 8 && KW > 1 && dilation_w == 1 && KW * C <= 32 && KH <= FUSE__QWINDOW_KH;
}

/* The windows of n pixels side by side gathered, ystride bytes apart at y: pixel q's kernel
   row r the run of span <= 32 bytes at rows[r] + q * steps[r], each copied 32 bytes at a
   time in order (a run's excess overwritten by the next; 32 - span bytes written past the last
   one, read past each). */
typedef void (*fuse__qwindow_fn)(unsigned char *y, int64_t ystride, const unsigned char *const *rows,
                                 const int64_t *steps, int kh, int64_t span, int64_t n);
static void fuse__qwindow_gather(unsigned char *y, int64_t ystride,
                                 const unsigned char *const *rows, const int64_t *steps, int kh,
                                 int64_t span, int64_t n) {
  int64_t q;
  int r;
  for (q = 0; q < n; q++)
    for (r = 0; r < kh; r++) memcpy(y + q * ystride + r * span, rows[r] + q * steps[r], 32);
}
#if !defined(FUSE_NO_AVX2)
__attribute__((target("avx2,fma"))) static void fuse__qwindow_gather_avx2(
    unsigned char *y, int64_t ystride, const unsigned char *const *rows, const int64_t *steps,
    int kh, int64_t span, int64_t n) {
  int64_t q;
  int r;
  for (q = 0; q < n; q++)
    for (r = 0; r < kh; r++)
      _mm256_storeu_si256((__m256i *)(void *)(y + q * ystride + r * span),
                          _mm256_loadu_si256((const __m256i *)(const void *)(rows[r] + q * steps[r])));
}
#endif

/* y[C * i + c] = x[c][i], i < n, c < C <= 3: a row of an NCHW image's planes as C bytes a
   pixel (window mode's rows). AVX2 builds, C = 3: 16 pixels at a time, each 16 bytes out the
   OR of a byte shuffle of each plane. */
static void fuse__qpixels(unsigned char *y, const unsigned char *const *x, int C, int64_t n) {
  int64_t i;
  int c;
  for (i = 0; i < n; i++)
    for (c = 0; c < C; c++) y[C * i + c] = x[c][i];
}
#if !defined(FUSE_NO_AVX2)
/* byte b of output vector v of a 16-pixel block of C = 3: plane c's pixel, or 0x80 */
#define FUSE__QPICK3(v, c, b) (char)((16 * (v) + (b)) % 3 == (c) ? (16 * (v) + (b)) / 3 : 0x80)
#define FUSE__QPICK3_ROW(v, c)                                                                 \
  _mm_setr_epi8(FUSE__QPICK3(v, c, 0), FUSE__QPICK3(v, c, 1), FUSE__QPICK3(v, c, 2),          \
                FUSE__QPICK3(v, c, 3), FUSE__QPICK3(v, c, 4), FUSE__QPICK3(v, c, 5),          \
                FUSE__QPICK3(v, c, 6), FUSE__QPICK3(v, c, 7), FUSE__QPICK3(v, c, 8),          \
                FUSE__QPICK3(v, c, 9), FUSE__QPICK3(v, c, 10), FUSE__QPICK3(v, c, 11),        \
                FUSE__QPICK3(v, c, 12), FUSE__QPICK3(v, c, 13), FUSE__QPICK3(v, c, 14),       \
                FUSE__QPICK3(v, c, 15))
__attribute__((target("avx2,fma"))) static void fuse__qpixels_avx2(unsigned char *y,
                                                                  const unsigned char *const *x,
                                                                  int C, int64_t n) {
  int64_t i = 0;
  if (C == 3) {
    const __m128i p00 = FUSE__QPICK3_ROW(0, 0), p01 = FUSE__QPICK3_ROW(0, 1), p02 = FUSE__QPICK3_ROW(0, 2);
    const __m128i p10 = FUSE__QPICK3_ROW(1, 0), p11 = FUSE__QPICK3_ROW(1, 1), p12 = FUSE__QPICK3_ROW(1, 2);
    const __m128i p20 = FUSE__QPICK3_ROW(2, 0), p21 = FUSE__QPICK3_ROW(2, 1), p22 = FUSE__QPICK3_ROW(2, 2);
    for (; i + 16 <= n; i += 16) {
      __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(x[0] + i));
      __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(x[1] + i));
      __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(x[2] + i));
      _mm_storeu_si128((__m128i *)(void *)(y + 3 * i), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, p00), _mm_shuffle_epi8(b, p01)), _mm_shuffle_epi8(c, p02)));
      _mm_storeu_si128((__m128i *)(void *)(y + 3 * i + 16), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, p10), _mm_shuffle_epi8(b, p11)), _mm_shuffle_epi8(c, p12)));
      _mm_storeu_si128((__m128i *)(void *)(y + 3 * i + 32), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, p20), _mm_shuffle_epi8(b, p21)), _mm_shuffle_epi8(c, p22)));
    }
  }
  if (i < n) {
    const unsigned char *rest[3];
    int c;
    for (c = 0; c < C; c++) rest[c] = x[c] + i;
    fuse__qpixels(y + C * i, rest, C, n - i);
  }
}
#undef FUSE__QPICK3_ROW
#undef FUSE__QPICK3
#endif

#endif

/* Winograd (FUSE__QL_WINO): the tiles of 2x2 outputs a block of a chunk takes at most, C
   input channels: their transformed inputs (16 rows of C rounded up to even int16) about 256
   KB, so that they stay in the (L2) cache while every panel of weights goes over them (the
   weights are read once a block: 16 tiles of 512 channels in one); at least the largest
   tile's pixels. */
static int64_t fuse__qwino_block(int64_t C) {
  int64_t b = 262144 / (16 * 4 * ((C + 1) / 2));
  return b > FUSE__QMR_MAX ? b : FUSE__QMR_MAX;
}

/* F(3x3) (FUSE__QL_WINO3, kernels/qwino3.c): the tiles of 3x3 outputs a block takes at most,
   their transformed inputs (25 rows of C rounded up to even int16) about 384 KB, as above; at
   least 16. */
#ifdef FUSE__HAVE_QWINO3
static int64_t fuse__qwino3_block(int64_t C) {
  int64_t b = 393216 / (25 * 4 * ((C + 1) / 2));
  return b > FUSE__QMR_MAX ? b : FUSE__QMR_MAX;
}
#define FUSE__QW3_ACC 24 /* panels times tiles of an F(3x3) products tile, at most */
#endif
#ifdef FUSE__HAVE_QWINDOW
#define FUSE__QWINDOW_AHEAD 8 /* tiles whose windows are gathered at once */
/* Bytes between the gathered windows of window mode: the window's quads and the 32 bytes
   the last run's copy writes past the window. */
static int64_t fuse__qwindow_stride(int64_t C, int64_t taps) {
  return 4 * ((taps * C + 3) / 4) + 32;
}
#endif

/* Scratch bytes of a qconv2d step in a packed layout (run/quant_run.c). Pairs and quads: the
   input as rows (when it is not read in place; with pad_w padding columns in row mode), the
   padding row (of a tap, or of a kernel row in row mode: at most taps x a row), the tile's row
   pointers, the images' NHWC output (when the output is NCHW). Depthwise: the padding pixel,
   the taps' pointers and offsets. Winograd, per chunk: a block's transformed inputs, a tile's
   sums (16 positions of 16 channels of QMR_MAX tiles), the padding pixel, the pointers; F(3x3)
   the same with 25 positions and up to 24 tiles' sums of a panel. */
static size_t fuse__qconv_scratch(int layout, int64_t N, int64_t C, int64_t H, int64_t W,
                                  int64_t pad_w, int64_t taps, int64_t npix, int64_t Kp) {
  int64_t cs = layout == FUSE__QL_PAIRS ? 2 * ((C + 1) / 2) * 2 : 4 * ((C + 3) / 4);
  size_t a = FUSE__ALIGN - 1;
#ifdef FUSE__HAVE_QWINDOW
  if (layout == FUSE__QL_WINDOW) /* the rows (C bytes a pixel; 64 more read past them), the
                                    padding row (32 bytes read of a run), the tile's MR row
                                    pointers and windows (32 bytes written past a window) */
    return (((size_t)(N * H * (W + pad_w) * C + 64) + a) & ~a) + (((size_t)(taps * C + 64) + a) & ~a) +
           (((size_t)FUSE__QMR_MAX * (sizeof(void *) + FUSE__QWINDOW_AHEAD * (size_t)fuse__qwindow_stride(C, taps)) + a) & ~a) +
           (size_t)((N * npix + FUSE__QMR_MAX) * Kp) + FUSE__ALIGN;
#endif
  if (layout == FUSE__QL_DW)
    return (((size_t)Kp + a) & ~a) + (size_t)taps * (sizeof(void *) + sizeof(int64_t)) + FUSE__ALIGN;
  if (layout == FUSE__QL_WINO)
    return (((size_t)(fuse__qwino_block(C) * 16 * cs) + a) & ~a) + 16 * FUSE__QMR_MAX * 16 * 4 +
           (((size_t)C + a) & ~a) + (16 + 4 + FUSE__QMR_MAX) * sizeof(void *) + FUSE__ALIGN;
#ifdef FUSE__HAVE_QWINO3
  if (layout == FUSE__QL_WINO3)
    return (((size_t)(fuse__qwino3_block(C) * 25 * cs) + a) & ~a) + 25 * FUSE__QW3_ACC * 16 * 4 +
           (((size_t)C + a) & ~a) + (25 + 9) * sizeof(void *) + FUSE__ALIGN;
#endif
  return (((size_t)(N * H * (W + pad_w) * cs) + a) & ~a) + (((size_t)(taps * cs) + a) & ~a) +
         (((size_t)taps * FUSE__QMR_MAX * sizeof(void *) + a) & ~a) +
         (size_t)((N * npix + FUSE__QMR_MAX) * Kp) + FUSE__ALIGN;
}

/* Scratch bytes of a qmatmul step in a packed layout: a 1x1 conv over `rows` pixels (one
   image, a row of it each) of C channels, whose output is written in place (row-major, as
   NHWC). */
static size_t fuse__qmatmul_scratch(int layout, int64_t rows, int64_t C, int64_t Kp) {
  return fuse__qconv_scratch(layout, 1, C, rows, 1, 0, 1, 0, Kp);
}

/* ------------------------------------------------------- depthwise, on NHWC -- */
/* A run of npix output pixels of a depthwise qconv2d (layout FUSE__QL_DW), each C channels,
   written C bytes apart from y: the first pixel's taps read src[t] (the padding pixel, x_zero
   in every channel, where a tap falls outside), each next pixel's `step` bytes further on (a
   run inside the image: the stride times C); weights [taps][Cp] int16, the bias with the zero
   point's share taken out (bias - x_zero * sum of the channel's weights), so that sum x * w
   needs no subtraction. Per block of channels the SIMD kernels hold the widened weights of a
   3x3 kernel in registers over the run. */
typedef void (*fuse__qdw_fn)(const unsigned char *const *src, int64_t step, int64_t npix,
                             int ntaps, const int16_t *w, int64_t Cp, int64_t C,
                             const int32_t *bias, const float *scale, const fuse__qhead *h,
                             unsigned char *y);

/* Channel c of pixel p of the run, as a byte. */
static unsigned char fuse__qdw_channel(const unsigned char *const *src, int64_t at, int ntaps,
                                       const int16_t *w, int64_t Cp, int64_t c,
                                       const int32_t *bias, const float *scale,
                                       const fuse__qhead *h) {
  int32_t acc = bias[c];
  int t;
  for (t = 0; t < ntaps; t++) acc += (int32_t)src[t][at + c] * w[t * Cp + c];
  return (unsigned char)(fuse__qtile_requant(acc, scale[c], h) & 0xff);
}

static void fuse__qdw_scalar(const unsigned char *const *src, int64_t step, int64_t npix,
                             int ntaps, const int16_t *w, int64_t Cp, int64_t C,
                             const int32_t *bias, const float *scale, const fuse__qhead *h,
                             unsigned char *y) {
  int64_t p, c;
  for (p = 0; p < npix; p++)
    for (c = 0; c < C; c++)
      y[p * C + c] = fuse__qdw_channel(src, p * step, ntaps, w, Cp, c, bias, scale, h);
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* 8 channels a block: x zero-extended to int32 lanes, the weight's 16 bits in the low half of
   a lane (the high half 0), so vpmaddwd's pair sum is x * w exactly. A 3x3 kernel (taps a
   constant 9) holds its block's widened weights in registers and goes 4 pixels at a time, its
   taps unrolled; other kernels tap by tap. The channels past the last whole block in C. */
__attribute__((target("avx2,fma"))) static inline __attribute__((always_inline)) void
fuse__qdw_avx2_blocks(const int taps, const unsigned char *const *src, int64_t step,
                      int64_t npix, int ntaps, const int16_t *w, int64_t Cp, int64_t C,
                      const int32_t *bias, const float *scale, const fuse__qhead *h,
                      unsigned char *y) {
  const unsigned char *sp[9]; /* (a local copy: the stores to y cannot change it) */
  int64_t c, p = 0;
  int t, q, ys = h->y_signed;
  for (t = 0; t < 9 && t < ntaps; t++) sp[t] = src[t];
  for (c = 0; c + 8 <= C; c += 8) {
    __m256i wv[9];
    FUSE__UNROLL
    for (t = 0; t < taps; t++)
      wv[t] = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(w + t * Cp + c)));
    for (p = 0; taps && p + 4 <= npix; p += 4) {
      __m256i acc[4];
      FUSE__UNROLL
      for (q = 0; q < 4; q++) acc[q] = _mm256_loadu_si256((const __m256i *)(const void *)(bias + c));
      FUSE__UNROLL
      for (t = 0; t < taps; t++) {
        FUSE__UNROLL
        for (q = 0; q < 4; q++) {
          __m256i xv = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(sp[t] + (p + q) * step + c)));
          acc[q] = _mm256_add_epi32(acc[q], _mm256_madd_epi16(xv, wv[t]));
        }
      }
      FUSE__UNROLL
      for (q = 0; q < 4; q++) {
        __m256i r = fuse__qrequant8_avx2(acc[q], scale + c, h);
        __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storel_epi64((__m128i *)(void *)(y + (p + q) * C + c),
                         ys ? _mm_packs_epi16(p16, p16) : _mm_packus_epi16(p16, p16));
      }
    }
    for (; p < npix; p++) {
      __m256i acc = _mm256_loadu_si256((const __m256i *)(const void *)(bias + c)), r;
      __m128i p16;
      for (t = 0; t < ntaps; t++) {
        __m256i xv = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(src[t] + p * step + c)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(xv, _mm256_cvtepu16_epi32(_mm_loadu_si128(
                                                              (const __m128i *)(const void *)(w + t * Cp + c)))));
      }
      r = fuse__qrequant8_avx2(acc, scale + c, h);
      p16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
      _mm_storel_epi64((__m128i *)(void *)(y + p * C + c),
                       ys ? _mm_packs_epi16(p16, p16) : _mm_packus_epi16(p16, p16));
    }
  }
  for (p = 0; p < npix && c < C; p++) {
    int64_t k;
    for (k = c; k < C; k++) y[p * C + k] = fuse__qdw_channel(src, p * step, ntaps, w, Cp, k, bias, scale, h);
  }
}

__attribute__((target("avx2,fma"))) static void fuse__qdw_avx2(
    const unsigned char *const *src, int64_t step, int64_t npix, int ntaps, const int16_t *w,
    int64_t Cp, int64_t C, const int32_t *bias, const float *scale, const fuse__qhead *h,
    unsigned char *y) {
  if (ntaps == 9) fuse__qdw_avx2_blocks(9, src, step, npix, ntaps, w, Cp, C, bias, scale, h, y);
  else fuse__qdw_avx2_blocks(0, src, step, npix, ntaps, w, Cp, C, bias, scale, h, y);
}
#endif

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
#define FUSE__QDW_NAME fuse__qdw_avx512
#define FUSE__QDW_BLOCKS fuse__qdw_avx512_blocks
#define FUSE__QDW_TARGET FUSE__QV512
#define FUSE__QDW_MAC(acc, x, w) _mm512_add_epi32(acc, _mm512_madd_epi16(x, w))
#include "qdw_avx512.inc"
#undef FUSE__QDW_NAME
#undef FUSE__QDW_BLOCKS
#undef FUSE__QDW_TARGET
#undef FUSE__QDW_MAC
#define FUSE__QDW_NAME fuse__qdw_avx512_vnni
#define FUSE__QDW_BLOCKS fuse__qdw_avx512_vnni_blocks
#define FUSE__QDW_TARGET FUSE__QV512_VNNI
#define FUSE__QDW_MAC(acc, x, w) _mm512_dpwssd_epi32(acc, x, w)
#include "qdw_avx512.inc"
#undef FUSE__QDW_NAME
#undef FUSE__QDW_BLOCKS
#undef FUSE__QDW_TARGET
#undef FUSE__QDW_MAC

/* AVX-512 VNNI depthwise on quads: four taps of a channel side by side in a 32-bit lane, so
   that one vpdpbusd adds four of its products (u8 x s8, exact: the weights are int8, held as
   int16 in the layout). 64 bytes a vector: 64 channels of a pixel, or, where the run's pixels
   follow each other (stride 1: step == C) and C is 16, 32 or 64, the channels of 64 / C
   pixels at once ("flat"). Four taps' vectors interleave (two rounds of unpacks within
   128-bit lanes, fuse__qquads4_avx512) into four whose 128-bit lane L holds the quads of
   bytes 16L + 4i .. 16L + 4i + 3 (vector i); a lone last tap goes in by one vpshufb that
   transposes each lane's 4 x 4 bytes, its weights kept in byte i of vector i's lanes. The sums
   come out in that order, so the bias and scale are read in it (a 4 x 4 transpose of 128-bit
   blocks), and the packs that narrow the four vectors back to bytes undo the interleave. The
   weights are interleaved per call: for a lone border pixel that still costs less than the
   vpdpwssd kernel's widening of every tap. Kernels of more than 28 taps take that kernel. */
FUSE__QV512 static inline __attribute__((always_inline)) void fuse__qquads4_avx512(
    __m512i a, __m512i b, __m512i c, __m512i d, __m512i *q) {
  __m512i ab0 = _mm512_unpacklo_epi8(a, b), ab1 = _mm512_unpackhi_epi8(a, b);
  __m512i cd0 = _mm512_unpacklo_epi8(c, d), cd1 = _mm512_unpackhi_epi8(c, d);
  q[0] = _mm512_unpacklo_epi16(ab0, cd0), q[1] = _mm512_unpackhi_epi16(ab0, cd0);
  q[2] = _mm512_unpacklo_epi16(ab1, cd1), q[3] = _mm512_unpackhi_epi16(ab1, cd1);
}

/* Vectors i = 0..3 of 16 lanes: lane 4L + j of vector i is lane 4i + j of v[L] (a 4 x 4
   transpose of 128-bit blocks). */
FUSE__QV512 static inline __attribute__((always_inline)) void fuse__qblocks4_avx512(__m512i *v) {
  const __mmask16 all = (__mmask16)-1; /* (the maskz forms: g++ 12 warns on the unmasked ones) */
  __m512i t0 = _mm512_maskz_shuffle_i32x4(all, v[0], v[1], 0x44), t1 = _mm512_maskz_shuffle_i32x4(all, v[0], v[1], 0xee);
  __m512i t2 = _mm512_maskz_shuffle_i32x4(all, v[2], v[3], 0x44), t3 = _mm512_maskz_shuffle_i32x4(all, v[2], v[3], 0xee);
  v[0] = _mm512_maskz_shuffle_i32x4(all, t0, t2, 0x88), v[1] = _mm512_maskz_shuffle_i32x4(all, t0, t2, 0xdd);
  v[2] = _mm512_maskz_shuffle_i32x4(all, t1, t3, 0x88), v[3] = _mm512_maskz_shuffle_i32x4(all, t1, t3, 0xdd);
}

#define FUSE__QDWQ_GROUPS 7 /* quads of taps kept (25 taps, a 5x5 kernel); more: vpdpwssd */
FUSE__QV512_VNNI static inline __attribute__((always_inline)) void fuse__qdw_quads_blocks(
    const int taps, const unsigned char *const *src, int64_t step, int64_t npix, int ntaps,
    const int16_t *w, int64_t Cp, int64_t C, const int32_t *bias, const float *scale,
    const fuse__qhead *h, unsigned char *y) {
  const __mmask16 all = (__mmask16)-1; /* (maskz forms: see fuse__qblocks4_avx512) */
  const __mmask32 all32 = (__mmask32)-1;
  const __mmask8 all8 = (__mmask8)-1;
  const __m512i transpose = _mm512_maskz_broadcast_i32x4(all, _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  const __m512 lo = _mm512_set1_ps((float)(h->lo - h->y_zero)), hi = _mm512_set1_ps((float)(h->hi - h->y_zero));
  const __m512i zero = _mm512_set1_epi32(h->y_zero);
  const int nt = taps ? taps : ntaps, full = nt / 4, rest = nt % 4, y_signed = h->y_signed;
  const int flat = step == C && (C == 16 || C == 32 || C == 64);
  const int64_t in_step = flat ? 64 : step, out_step = flat ? 64 : C;
  const int64_t units = flat ? (npix * C + 63) / 64 : npix;
  const unsigned char *sp[4 * FUSE__QDWQ_GROUPS]; /* (a local copy: the stores to y cannot change it) */
  int64_t c0, u;
  int t, g, i;
  for (t = 0; t < nt; t++) sp[t] = src[t];
  for (c0 = 0; c0 < (flat ? 1 : C); c0 += 64) {
    __m512i wq[FUSE__QDWQ_GROUPS][4], bv[4], sv[4];
    FUSE__UNROLL
    for (g = 0; g < FUSE__QDWQ_GROUPS; g++) /* (for the compiler, which cannot see nt's bound) */
      for (i = 0; i < 4; i++) wq[g][i] = _mm512_setzero_si512();
    FUSE__UNROLL
    for (g = 0; g * 4 < nt; g++) { /* this block's weights as quads (a lone last tap's in byte i) */
      __m512i wn[4];
      FUSE__UNROLL
      for (i = 0; i < 4; i++) {
        const int16_t *wt = w + (g * 4 + i) * Cp;
        if (g * 4 + i >= nt) wn[i] = _mm512_setzero_si512();
        else if (C == 16 && flat) wn[i] = _mm512_maskz_broadcast_i32x4(all, _mm256_maskz_cvtepi16_epi8(all, _mm256_loadu_si256((const __m256i *)(const void *)wt)));
        else if (C == 32 && flat) wn[i] = _mm512_maskz_broadcast_i64x4(all8, _mm512_maskz_cvtepi16_epi8(all32, _mm512_loadu_si512(wt)));
        else {
          int64_t left = C - c0;
          __mmask32 m0 = left >= 32 ? 0xffffffffu : (1u << left) - 1u;
          __mmask32 m1 = left >= 64 ? 0xffffffffu : left > 32 ? (1u << (left - 32)) - 1u : 0u;
          wn[i] = _mm512_maskz_inserti64x4(all8, _mm512_castsi256_si512(_mm512_maskz_cvtepi16_epi8(all32, _mm512_maskz_loadu_epi16(m0, wt + c0))),
                                     _mm512_maskz_cvtepi16_epi8(all32, _mm512_maskz_loadu_epi16(m1, wt + c0 + 32)), 1);
        }
      }
      if (g < full || rest > 1) {
        fuse__qquads4_avx512(wn[0], wn[1], wn[2], wn[3], wq[g]);
      } else {
        __m512i tw = _mm512_shuffle_epi8(wn[0], transpose);
        FUSE__UNROLL
        for (i = 0; i < 4; i++) wq[g][i] = _mm512_and_si512(tw, _mm512_set1_epi32((int32_t)(0xffu << (8 * i))));
      }
    }
    FUSE__UNROLL
    for (i = 0; i < 4; i++) { /* the bias and scale of the block's 16-channel quarters */
      int64_t at = flat ? (16 * i) % C : c0 + 16 * i, left = C - at;
      __mmask16 m = (__mmask16)(left >= 16 ? 0xffffu : left > 0 ? (1u << left) - 1u : 0u);
      bv[i] = _mm512_maskz_loadu_epi32(m, bias + at);
      sv[i] = _mm512_castps_si512(_mm512_maskz_loadu_ps(m, scale + at));
    }
    fuse__qblocks4_avx512(bv), fuse__qblocks4_avx512(sv);
    for (u = 0; u < units; u++) {
      int64_t bytes = flat ? npix * C - u * 64 : C - c0;
      __mmask64 m = bytes >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << bytes) - 1;
      const int64_t at = u * in_step + c0;
      __m512i acc[4], q[4], r[4];
      FUSE__UNROLL
      for (i = 0; i < 4; i++) acc[i] = bv[i];
      FUSE__UNROLL
      for (g = 0; g * 4 < nt; g++) {
        if (g < full || rest > 1) {
          __m512i x[4];
          FUSE__UNROLL
          for (i = 0; i < 4; i++) /* (absent taps: the group's first row again, its weights 0) */
            x[i] = _mm512_maskz_loadu_epi8(m, sp[g * 4 + (g * 4 + i < nt ? i : 0)] + at);
          fuse__qquads4_avx512(x[0], x[1], x[2], x[3], q);
          FUSE__UNROLL
          for (i = 0; i < 4; i++) acc[i] = _mm512_dpbusd_epi32(acc[i], q[i], wq[g][i]);
        } else {
          __m512i tx = _mm512_shuffle_epi8(_mm512_maskz_loadu_epi8(m, sp[g * 4] + at), transpose);
          FUSE__UNROLL
          for (i = 0; i < 4; i++) acc[i] = _mm512_dpbusd_epi32(acc[i], tx, wq[g][i]);
        }
      }
      FUSE__UNROLL
      for (i = 0; i < 4; i++) { /* requantized, as fuse__qstore16_avx512 */
        __m512 f = _mm512_maskz_cvtepi32_ps(all, acc[i]);
        f = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, _mm512_mul_ps(f, _mm512_castsi512_ps(sv[i])), lo), hi);
        r[i] = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, f), zero); /* in the type's range */
      }
      {
        __m512i p01 = _mm512_packs_epi32(r[0], r[1]), p23 = _mm512_packs_epi32(r[2], r[3]);
        __m512i b = y_signed ? _mm512_packs_epi16(p01, p23) : _mm512_packus_epi16(p01, p23);
        _mm512_mask_storeu_epi8(y + u * out_step + c0, m, b);
      }
    }
  }
}

FUSE__QV512_VNNI static void fuse__qdw_avx512_quads(const unsigned char *const *src, int64_t step,
                                                   int64_t npix, int ntaps, const int16_t *w,
                                                   int64_t Cp, int64_t C, const int32_t *bias,
                                                   const float *scale, const fuse__qhead *h,
                                                   unsigned char *y) {
  if (ntaps > 4 * FUSE__QDWQ_GROUPS)
    fuse__qdw_avx512_vnni(src, step, npix, ntaps, w, Cp, C, bias, scale, h, y);
  else if (ntaps == 9)
    fuse__qdw_quads_blocks(9, src, step, npix, ntaps, w, Cp, C, bias, scale, h, y);
  else
    fuse__qdw_quads_blocks(0, src, step, npix, ntaps, w, Cp, C, bias, scale, h, y);
}
#endif

#ifdef FUSE__NEON
/* 16 channels a block: x's bytes widened to uint16 (uxtl, read as int16: 0..255), then smlal
   into four int32x4 accumulators against the int16 weights, 4 exact products an instruction
   (|x * w| <= 255 * 128). Two pixels at a time; on aarch64 (32 registers) a 3x3 kernel (9
   taps) holds its block's weights in 18 of them over the run (with 8 accumulators), its taps
   unrolled; other kernels, and armv7's 16 registers, load a tap's weights as they use them. The channels past the last whole block through a zeroed 16-byte copy of each tap's
   bytes; the requantization and the partial store fuse__qstore16_neon's. */
static inline __attribute__((always_inline)) void
fuse__qdw_mac16_neon(int32x4_t *acc, uint8x16_t x, int16x8_t w0, int16x8_t w1) {
#if defined(__aarch64__)
  int16x8_t lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(x)));
  int16x8_t hi = vreinterpretq_s16_u16(vmovl_high_u8(x));
  acc[0] = vmlal_s16(acc[0], vget_low_s16(lo), vget_low_s16(w0));
  acc[1] = vmlal_high_s16(acc[1], lo, w0);
  acc[2] = vmlal_s16(acc[2], vget_low_s16(hi), vget_low_s16(w1));
  acc[3] = vmlal_high_s16(acc[3], hi, w1);
#else
  int16x8_t lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(x)));
  int16x8_t hi = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(x)));
  acc[0] = vmlal_s16(acc[0], vget_low_s16(lo), vget_low_s16(w0));
  acc[1] = vmlal_s16(acc[1], vget_high_s16(lo), vget_high_s16(w0));
  acc[2] = vmlal_s16(acc[2], vget_low_s16(hi), vget_low_s16(w1));
  acc[3] = vmlal_s16(acc[3], vget_high_s16(hi), vget_high_s16(w1));
#endif
}

static void fuse__qdw_neon(const unsigned char *const *src, int64_t step, int64_t npix,
                           int ntaps, const int16_t *w, int64_t Cp, int64_t C,
                           const int32_t *bias, const float *scale, const fuse__qhead *head,
                           unsigned char *y) {
  const fuse__qhead copy = *head, *h = &copy; /* (a local copy: the stores to y cannot change
                                                 it, so its clamp and zero point stay loaded) */
  int64_t c, p;
  int t, q;
  for (c = 0; c + 16 <= C; c += 16) {
    const int16_t *wc = w + c;
    p = 0;
#if defined(__aarch64__)
    if (ntaps == 9) { /* (the bound a constant 9 below, not ntaps: the loops unroll) */
      const unsigned char *sp[9]; /* (a local copy: the stores to y cannot change it) */
      int16x8_t wv[9][2];
      FUSE__UNROLL
      for (t = 0; t < 9; t++) {
        sp[t] = src[t];
        wv[t][0] = vld1q_s16(wc + t * Cp), wv[t][1] = vld1q_s16(wc + t * Cp + 8);
      }
      for (; p + 2 <= npix; p += 2) {
        int32x4_t acc[2][4];
        FUSE__UNROLL
        for (q = 0; q < 2; q++)
          acc[q][0] = acc[q][1] = acc[q][2] = acc[q][3] = vdupq_n_s32(0);
        FUSE__UNROLL
        for (t = 0; t < 9; t++) {
          const unsigned char *x = sp[t] + p * step + c;
          fuse__qdw_mac16_neon(acc[0], vld1q_u8(x), wv[t][0], wv[t][1]);
          fuse__qdw_mac16_neon(acc[1], vld1q_u8(x + step), wv[t][0], wv[t][1]);
        }
        FUSE__UNROLL
        for (q = 0; q < 2; q++)
          fuse__qstore16_neon(acc[q][0], acc[q][1], acc[q][2], acc[q][3], bias + c, scale + c, h,
                              y + (p + q) * C + c, 16);
      }
    }
#endif
    for (; p + 2 <= npix; p += 2) {
      int32x4_t acc[2][4];
      for (q = 0; q < 2; q++) acc[q][0] = acc[q][1] = acc[q][2] = acc[q][3] = vdupq_n_s32(0);
      for (t = 0; t < ntaps; t++) {
        const unsigned char *x = src[t] + p * step + c;
        int16x8_t w0 = vld1q_s16(wc + t * Cp), w1 = vld1q_s16(wc + t * Cp + 8);
        fuse__qdw_mac16_neon(acc[0], vld1q_u8(x), w0, w1);
        fuse__qdw_mac16_neon(acc[1], vld1q_u8(x + step), w0, w1);
      }
      for (q = 0; q < 2; q++)
        fuse__qstore16_neon(acc[q][0], acc[q][1], acc[q][2], acc[q][3], bias + c, scale + c, h,
                            y + (p + q) * C + c, 16);
    }
    for (; p < npix; p++) {
      int32x4_t acc[4];
      acc[0] = acc[1] = acc[2] = acc[3] = vdupq_n_s32(0);
      for (t = 0; t < ntaps; t++)
        fuse__qdw_mac16_neon(acc, vld1q_u8(src[t] + p * step + c), vld1q_s16(wc + t * Cp),
                             vld1q_s16(wc + t * Cp + 8));
      fuse__qstore16_neon(acc[0], acc[1], acc[2], acc[3], bias + c, scale + c, h, y + p * C + c,
                          16);
    }
  }
  if (c < C) { /* the last channels, fewer than 16 (bias, scale and w padded to Cp) */
    unsigned char part[16];
    memset(part, 0, sizeof part);
    for (p = 0; p < npix; p++) {
      int32x4_t acc[4];
      acc[0] = acc[1] = acc[2] = acc[3] = vdupq_n_s32(0);
      for (t = 0; t < ntaps; t++) {
        memcpy(part, src[t] + p * step + c, (size_t)(C - c));
        fuse__qdw_mac16_neon(acc, vld1q_u8(part), vld1q_s16(w + t * Cp + c),
                             vld1q_s16(w + t * Cp + c + 8));
      }
      fuse__qstore16_neon(acc[0], acc[1], acc[2], acc[3], bias + c, scale + c, h, y + p * C + c,
                          (int)(C - c));
    }
  }
}
#endif

/* The depthwise kernel of a plan's ISA on a CPU of fuse__cpu_vnni() `ext`. */
static fuse__qdw_fn fuse__qdw_pick(fuse_isa isa, int ext) {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
  if (isa == FUSE_ISA_AVX512) return (ext & 1) ? fuse__qdw_avx512_quads : fuse__qdw_avx512;
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) return fuse__qdw_avx2;
#endif
#ifdef FUSE__NEON
  if (isa == FUSE_ISA_NEON) return fuse__qdw_neon;
#endif
  (void)ext;
  return isa == FUSE_ISA_AUTO ? NULL : fuse__qdw_scalar;
}

/* ------------------------------------------ Winograd F(2x2, 3x3) on int16 pairs -- */
/* (FUSE__QL_WINO, see the top.) Transforms of a tile, 2x2 outputs from a 4x4 patch of the
   input: v = B'dB, and y = A'mA, with B' = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] and
   A' = [1 1 1 0; 0 1 -1 -1] (the weights' 2G, plan/quant_pack.c). Plans take it only with
   AVX2's pairs tile (fuse__qwino_fits), so only builds with AVX2 have it (FUSE__HAVE_QWINO):
   the scalar twin is its test oracle there, and no Cortex-M or NEON build grows by it. */
/* Whether a conv of C input channels and K outputs, kernel KH x KW, attributes a, runs as
   Winograd in a plan for isa on a CPU of fuse__cpu_vnni() `vnni`: 3x3, stride 1, padding 1,
   no dilation, one group, C <= 1024 (4 times the sums fit int32), and the plan's pairs tile
   AVX2's (elsewhere the direct tiles: the scalar twin and NEON stay as they are). */
static int fuse__qwino_fits(fuse_isa isa, int vnni, int64_t C, int64_t K, int64_t KH, int64_t KW,
                            const fuse_conv2d_attrs *a) {
  int nb, mr, d;
  if (KH != 3 || KW != 3 || C > 1024 || a->groups != 1) return 0;
  for (d = 0; d < 2; d++)
    if (a->strides[d] != 1 || a->dilation[d] != 1 || a->padding[d] != 1 || a->padding[2 + d] != 1)
      return 0;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  return fuse__qtile_plan(isa, FUSE__QL_PAIRS, vnni, K, &nb, &mr) == fuse__qtile_pairs_avx2;
#else
  (void)isa, (void)vnni, (void)K, (void)nb, (void)mr;
  return 0;
#endif
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
#define FUSE__HAVE_QWINO 1


/* A patch (16 pixel pointers, row-major; the padding pixel, x_zero in every channel, where one
   falls outside) transformed, d = x - x_zero: v[p * cs + c] for the 16 positions p, channels
   c0 to cs (C rounded up to even; the channels past C 0). */
typedef void (*fuse__qwino_in_fn)(const unsigned char *const *px, int64_t c0, int64_t C,
                                  int64_t cs, int32_t x_zero, int16_t *v);
/* A tile's sums (position p, channel j at m[p * pstride + j], 16 channels) transformed: 4
   times the 2x2 outputs' sums, / 4, + bias, requantized; the first kvalid channels of output
   pixel q (row-major) stored at y[q] (NULL: outside the image). */
typedef void (*fuse__qwino_out_fn)(const int32_t *m, int64_t pstride, unsigned char *const *y,
                                   int kvalid, const int32_t *bias, const float *scale,
                                   const fuse__qhead *h);

static void fuse__qwino_in_scalar(const unsigned char *const *px, int64_t c0, int64_t C,
                                  int64_t cs, int32_t x_zero, int16_t *v) {
  int64_t c;
  int i;
  for (c = c0; c < cs; c++) {
    int32_t d[16], t[16];
    for (i = 0; i < 16; i++) d[i] = c < C ? px[i][c] - x_zero : 0;
    for (i = 0; i < 4; i++) { /* B'd, column i */
      t[i] = d[i] - d[8 + i], t[4 + i] = d[4 + i] + d[8 + i];
      t[8 + i] = d[8 + i] - d[4 + i], t[12 + i] = d[4 + i] - d[12 + i];
    }
    for (i = 0; i < 4; i++) { /* (B'd)B, row i */
      v[(4 * i) * cs + c] = (int16_t)(t[4 * i] - t[4 * i + 2]);
      v[(4 * i + 1) * cs + c] = (int16_t)(t[4 * i + 1] + t[4 * i + 2]);
      v[(4 * i + 2) * cs + c] = (int16_t)(t[4 * i + 2] - t[4 * i + 1]);
      v[(4 * i + 3) * cs + c] = (int16_t)(t[4 * i + 1] - t[4 * i + 3]);
    }
  }
}

static void fuse__qwino_out_scalar(const int32_t *m, int64_t pstride, unsigned char *const *y,
                                   int kvalid, const int32_t *bias, const float *scale,
                                   const fuse__qhead *h) {
  int i, j;
  for (j = 0; j < kvalid; j++) {
    uint32_t a[16], t[8], o[4]; /* (unsigned: mod 2^32, as vpaddd; the outputs fit) */
    for (i = 0; i < 16; i++) a[i] = (uint32_t)m[i * pstride + j];
    for (i = 0; i < 4; i++) { /* A'm, column i */
      t[i] = a[i] + a[4 + i] + a[8 + i];
      t[4 + i] = a[4 + i] - a[8 + i] - a[12 + i];
    }
    for (i = 0; i < 2; i++) { /* (A'm)A, row i */
      o[2 * i] = t[4 * i] + t[4 * i + 1] + t[4 * i + 2];
      o[2 * i + 1] = t[4 * i + 1] - t[4 * i + 2] - t[4 * i + 3];
    }
    for (i = 0; i < 4; i++) {
      int32_t s = o[i] >= 0x80000000u ? -(int32_t)(~o[i]) - 1 : (int32_t)o[i];
      if (y[i]) y[i][j] = (unsigned char)(fuse__qtile_requant(s / 4 + bias[j], scale[j], h) & 0xff);
    }
  }
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* 16 channels a step, int16 (|v| <= 1020); the channels past the last 16 as the scalar twin. */
__attribute__((target("avx2,fma"))) static void fuse__qwino_in_avx2(
    const unsigned char *const *px, int64_t c0, int64_t C, int64_t cs, int32_t x_zero,
    int16_t *v) {
  const __m256i z = _mm256_set1_epi16((short)x_zero);
  int64_t c;
  int i;
  for (c = c0; c + 16 <= C; c += 16) {
    __m256i d[16], t[16];
    FUSE__UNROLL
    for (i = 0; i < 16; i++)
      d[i] = _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(px[i] + c))), z);
    FUSE__UNROLL
    for (i = 0; i < 4; i++) {
      t[i] = _mm256_sub_epi16(d[i], d[8 + i]), t[4 + i] = _mm256_add_epi16(d[4 + i], d[8 + i]);
      t[8 + i] = _mm256_sub_epi16(d[8 + i], d[4 + i]), t[12 + i] = _mm256_sub_epi16(d[4 + i], d[12 + i]);
    }
    FUSE__UNROLL
    for (i = 0; i < 4; i++) {
      _mm256_storeu_si256((__m256i *)(void *)(v + (4 * i) * cs + c), _mm256_sub_epi16(t[4 * i], t[4 * i + 2]));
      _mm256_storeu_si256((__m256i *)(void *)(v + (4 * i + 1) * cs + c), _mm256_add_epi16(t[4 * i + 1], t[4 * i + 2]));
      _mm256_storeu_si256((__m256i *)(void *)(v + (4 * i + 2) * cs + c), _mm256_sub_epi16(t[4 * i + 2], t[4 * i + 1]));
      _mm256_storeu_si256((__m256i *)(void *)(v + (4 * i + 3) * cs + c), _mm256_sub_epi16(t[4 * i + 1], t[4 * i + 3]));
    }
  }
  if (c < cs) fuse__qwino_in_scalar(px, c, C, cs, x_zero, v);
}

/* 8 channels a half; vpaddd wraps as the scalar twin's unsigned sums. */
__attribute__((target("avx2,fma"))) static void fuse__qwino_out_avx2(
    const int32_t *m, int64_t pstride, unsigned char *const *y, int kvalid, const int32_t *bias,
    const float *scale, const fuse__qhead *h) {
  __m256i o[2][4];
  int half, i;
  FUSE__UNROLL
  for (half = 0; half < 2; half++) {
    __m256i a[16], t[8];
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(bias + 8 * half));
    FUSE__UNROLL
    for (i = 0; i < 16; i++) a[i] = _mm256_loadu_si256((const __m256i *)(const void *)(m + i * pstride + 8 * half));
    FUSE__UNROLL
    for (i = 0; i < 4; i++) {
      t[i] = _mm256_add_epi32(_mm256_add_epi32(a[i], a[4 + i]), a[8 + i]);
      t[4 + i] = _mm256_sub_epi32(_mm256_sub_epi32(a[4 + i], a[8 + i]), a[12 + i]);
    }
    FUSE__UNROLL
    for (i = 0; i < 2; i++) {
      __m256i e = _mm256_add_epi32(_mm256_add_epi32(t[4 * i], t[4 * i + 1]), t[4 * i + 2]);
      __m256i f = _mm256_sub_epi32(_mm256_sub_epi32(t[4 * i + 1], t[4 * i + 2]), t[4 * i + 3]);
      o[half][2 * i] = _mm256_add_epi32(_mm256_srai_epi32(e, 2), b);
      o[half][2 * i + 1] = _mm256_add_epi32(_mm256_srai_epi32(f, 2), b);
    }
  }
  FUSE__UNROLL
  for (i = 0; i < 4; i++)
    if (y[i]) fuse__qstore16_avx2(o[0][i], o[1][i], scale, h, y[i], kvalid);
}
#endif

/* What a Winograd qconv2d's blocks run on: one image's input and output (NHWC), the packed
   weights, the pairs tile (with h NULL, fuse__qtile_plan's) and its MR, the transforms. */
typedef struct fuse__qwino {
  const unsigned char *x;
  unsigned char *y;
  const int16_t *w;
  const int32_t *bias;
  const float *scale;
  const fuse__qhead *h;
  int64_t H, W, C, K, csteps;
  fuse__qtile_fn tile;
  int mr;
  fuse__qwino_in_fn in;
  fuse__qwino_out_fn out;
} fuse__qwino;

/* The transforms of a plan's ISA. */
static void fuse__qwino_pick(fuse_isa isa, fuse__qwino_in_fn *in, fuse__qwino_out_fn *out) {
  *in = fuse__qwino_in_scalar, *out = fuse__qwino_out_scalar;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) *in = fuse__qwino_in_avx2, *out = fuse__qwino_out_avx2;
#endif
  (void)isa;
}

/* Tiles [t0, t1) of one image (row-major, (W + 1) / 2 a row; at most fuse__qwino_block(C) of
   them) with the work area `work` (fuse__qconv_scratch's): their patches transformed; then per
   panel of 16 output channels, per MR tiles, the 16 positions' products summed over the
   channels (a tile call each: the MR tiles' rows of that position against the position's
   weights), transformed into the outputs and requantized. */
static void fuse__qwino_tiles(const fuse__qwino *q, int64_t t0, int64_t t1, unsigned char *work) {
  size_t al = FUSE__ALIGN - 1;
  int64_t cs = 2 * q->csteps, TW = (q->W + 1) / 2, n = t1 - t0, t, k, g;
  int16_t *v = (int16_t *)(void *)work;
  int32_t *m = (int32_t *)(void *)(work + (((size_t)(n * 16 * cs * 2) + al) & ~al));
  unsigned char *pad = (unsigned char *)(m + 16 * FUSE__QMR_MAX * 16);
  const unsigned char **px = (const unsigned char **)(void *)(pad + (((size_t)q->C + al) & ~al));
  unsigned char **yp = (unsigned char **)(void *)(px + 16);
  const void **rows = (const void **)(void *)(yp + 4);
  int mr = q->mr, i, p, r;
  memset(pad, q->h->x_zero, (size_t)q->C);
  for (t = t0; t < t1; t++) { /* the patches */
    int64_t iy0 = (t / TW) * 2 - 1, ix0 = (t % TW) * 2 - 1;
    for (i = 0; i < 16; i++) {
      int64_t iy = iy0 + i / 4, ix = ix0 + i % 4;
      px[i] = iy >= 0 && iy < q->H && ix >= 0 && ix < q->W ? q->x + (iy * q->W + ix) * q->C : pad;
    }
    q->in(px, 0, q->C, cs, q->h->x_zero, v + (t - t0) * 16 * cs);
  }
  for (k = 0; k < q->K; k += FUSE__QNR) {
    const int16_t *wk = q->w + k * 16 * cs; /* (panel k / 16: 16 positions of cs x 16) */
    int kvalid = q->K - k < FUSE__QNR ? (int)(q->K - k) : FUSE__QNR;
    for (g = 0; g < n; g += mr) {
      int gv = n - g < mr ? (int)(n - g) : mr;
      for (p = 0; p < 16; p++) {
        for (r = 0; r < mr; r++) rows[r] = v + ((g + (r < gv ? r : gv - 1)) * 16 + p) * cs;
        q->tile(1, (int)q->csteps, rows, wk + p * cs * FUSE__QNR, 0,
                (unsigned char *)(m + p * mr * FUSE__QNR), FUSE__QNR * 4, gv, FUSE__QNR, NULL,
                NULL, NULL);
      }
      for (r = 0; r < gv; r++) {
        int64_t oy = (t0 + g + r) / TW * 2, ox = (t0 + g + r) % TW * 2;
        for (i = 0; i < 4; i++) {
          int64_t y = oy + i / 2, x = ox + i % 2;
          yp[i] = y < q->H && x < q->W ? q->y + (y * q->W + x) * q->K + k : NULL;
        }
        q->out(m + r * FUSE__QNR, mr * FUSE__QNR, yp, kvalid, q->bias + k, q->scale + k, q->h);
      }
    }
  }
}
#endif
