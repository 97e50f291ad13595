/* ------------------------------------------------ integer conv2d micro-kernels -- */
/* The quantized conv2d (a qconv2d step, groups 1) as an indirect GEMM over NHWC rows: for a
   tile of MR output pixels, the row of each tap (its input channels, or the padding row)
   times a panel of 16 output channels, int32 sums kept in registers over every tap and
   channel, then requantized on registers (bias, * scale, clamp, round half to even, + zero
   point) and stored as 16 bytes per pixel. Two packed forms, the step's `layout`:

   FUSE__QL_PAIRS  int16 pairs: the input as (x - x_zero) int16, channels padded to even; the
                   weights [K / 16][taps][C / 2][16][2] int16. A pair of products per 32-bit
                   lane: vpmaddwd on AVX2 (exact: |x - x_zero| <= 255, |w| <= 128, the pair
                   sum fits int32 with room; vpmaddubsw's 16-bit sums would saturate with
                   full-range weights), and the scalar twin (16 x 16 -> 32-bit products, as a
                   Cortex-M's dual MAC takes them).
   FUSE__QL_QUADS  int8 quads: the input as uint8 as it is, channels padded to 4; the weights
                   [K / 16][taps][C / 4][16][4] int8; vpdpbusd (AVX-512 VNNI, or AVX-VNNI on
                   256-bit registers) sums four u8 x s8 products per lane exactly. The zero
                   point comes out of the bias at pack time: bias[k] - x_zero * sum(w[k]); the
                   padding row holds x_zero, so a padded tap adds x_zero * w as an inside one.

   Rounding: the SIMD tiles round with cvtps2dq under the caller's rounding mode, the default
   (nearest, ties to even), as ONNX Runtime's do; the scalar twin rounds half to even
   whatever the mode. */
enum { FUSE__QL_DIRECT = 0, FUSE__QL_PAIRS = 1, FUSE__QL_QUADS = 2 };
#define FUSE__QNR 16

/* A tile: MR pixels' rows (rows[t * MR + r], tap-major), csteps channel pairs / quads, the
   panel w of 16 output channels, written to y (ldy bytes between pixels), bias and scale
   those 16 channels' (padded channels have bias 0, scale 0). */
typedef void (*fuse__qtile_fn)(int ntaps, int csteps, const void *const *rows, const void *w,
                               unsigned char *y, int64_t ldy, const int32_t *bias,
                               const float *scale, const fuse__qhead *h);

/* The requantization of one sum, as fuse__requantize (run/quant_run.c) and the SIMD tiles. */
static int32_t fuse__qtile_requant(int32_t acc, float scale, const fuse__qhead *h) {
  float f = (float)acc * scale, lo = (float)(h->lo - h->y_zero), hi = (float)(h->hi - h->y_zero);
  f = f < lo ? lo : f > hi ? hi : f;
  return (int32_t)fuse__round_half_even(f) + h->y_zero;
}

#define FUSE__QMR_SCALAR 4
static void fuse__qtile_pairs_scalar(int ntaps, int csteps, const void *const *rows,
                                     const void *wv, unsigned char *y, int64_t ldy,
                                     const int32_t *bias, const float *scale,
                                     const fuse__qhead *h) {
  const int16_t *w = (const int16_t *)wv;
  int32_t acc[FUSE__QMR_SCALAR][FUSE__QNR];
  int t, c, r, j;
  for (r = 0; r < FUSE__QMR_SCALAR; r++)
    for (j = 0; j < FUSE__QNR; j++) acc[r][j] = bias[j];
  for (t = 0; t < ntaps; t++)
    for (c = 0; c < csteps; c++, w += 2 * FUSE__QNR)
      for (r = 0; r < FUSE__QMR_SCALAR; r++) {
        const int16_t *x = (const int16_t *)rows[t * FUSE__QMR_SCALAR + r] + 2 * c;
        for (j = 0; j < FUSE__QNR; j++) /* two 16 x 16 products per lane */
          acc[r][j] += (int32_t)x[0] * w[2 * j] + (int32_t)x[1] * w[2 * j + 1];
      }
  for (r = 0; r < FUSE__QMR_SCALAR; r++)
    for (j = 0; j < FUSE__QNR; j++)
      y[r * ldy + j] = (unsigned char)(fuse__qtile_requant(acc[r][j], scale[j], h) & 0xff);
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* 16 int32 sums (two vectors) + bias, requantized, as 16 bytes at y. */
__attribute__((target("avx2,fma"))) static inline void fuse__qstore16_avx2(
    __m256i a0, __m256i a1, const int32_t *bias, const float *scale, const fuse__qhead *h,
    unsigned char *y) {
  const __m256 lo = _mm256_set1_ps((float)(h->lo - h->y_zero));
  const __m256 hi = _mm256_set1_ps((float)(h->hi - h->y_zero));
  const __m256i zero = _mm256_set1_epi32(h->y_zero);
  __m256 f0 = _mm256_cvtepi32_ps(_mm256_add_epi32(a0, _mm256_loadu_si256((const __m256i *)bias)));
  __m256 f1 = _mm256_cvtepi32_ps(_mm256_add_epi32(a1, _mm256_loadu_si256((const __m256i *)(bias + 8))));
  __m256i q0, q1, p16;
  __m128i b;
  f0 = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(f0, _mm256_loadu_ps(scale)), lo), hi);
  f1 = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(f1, _mm256_loadu_ps(scale + 8)), lo), hi);
  q0 = _mm256_add_epi32(_mm256_cvtps_epi32(f0), zero);
  q1 = _mm256_add_epi32(_mm256_cvtps_epi32(f1), zero);
  p16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xd8); /* 16 int16, in order */
  b = h->y_signed ? _mm_packs_epi16(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1))
                  : _mm_packus_epi16(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1));
  _mm_storeu_si128((__m128i *)(void *)y, b);
}

/* AVX2: MR = 6 pixels x 16 channels, 12 accumulators; vpmaddwd on int16 pairs. */
#define FUSE__QMR_AVX2 6
__attribute__((target("avx2,fma"))) static void fuse__qtile_pairs_avx2(
    int ntaps, int csteps, const void *const *rows, const void *wv, unsigned char *y,
    int64_t ldy, const int32_t *bias, const float *scale, const fuse__qhead *h) {
  const int16_t *w = (const int16_t *)wv;
  __m256i acc[FUSE__QMR_AVX2][2];
  int t, c, r;
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_AVX2; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (t = 0; t < ntaps; t++) {
    const int16_t *x[FUSE__QMR_AVX2];
    FUSE__UNROLL
    for (r = 0; r < FUSE__QMR_AVX2; r++) x[r] = (const int16_t *)rows[t * FUSE__QMR_AVX2 + r];
    for (c = 0; c < csteps; c++, w += 2 * FUSE__QNR) {
      const __m256i w0 = _mm256_loadu_si256((const __m256i *)w);
      const __m256i w1 = _mm256_loadu_si256((const __m256i *)(w + 16));
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
  for (r = 0; r < FUSE__QMR_AVX2; r++) fuse__qstore16_avx2(acc[r][0], acc[r][1], bias, scale, h, y + r * ldy);
}

/* AVX-VNNI: the same tile on int8 quads, vpdpbusd on 256-bit registers. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 || defined(__clang__) && __clang_major__ >= 12
#define FUSE__HAVE_AVXVNNI 1
__attribute__((target("avx2,fma,avxvnni"))) static void fuse__qtile_quads_avxvnni(
    int ntaps, int csteps, const void *const *rows, const void *wv, unsigned char *y,
    int64_t ldy, const int32_t *bias, const float *scale, const fuse__qhead *h) {
  const int8_t *w = (const int8_t *)wv;
  __m256i acc[FUSE__QMR_AVX2][2];
  int t, c, r;
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_AVX2; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
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
  for (r = 0; r < FUSE__QMR_AVX2; r++) fuse__qstore16_avx2(acc[r][0], acc[r][1], bias, scale, h, y + r * ldy);
}
#endif
#endif

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
/* AVX-512 VNNI: MR = 8 pixels x 16 channels (one register each), vpdpbusd. */
#define FUSE__QMR_AVX512 8
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"))) static void
fuse__qtile_quads_avx512(int ntaps, int csteps, const void *const *rows, const void *wv,
                         unsigned char *y, int64_t ldy, const int32_t *bias, const float *scale,
                         const fuse__qhead *h) {
  const int8_t *w = (const int8_t *)wv;
  const __m512 lo = _mm512_set1_ps((float)(h->lo - h->y_zero));
  const __m512 hi = _mm512_set1_ps((float)(h->hi - h->y_zero));
  const __m512i zero = _mm512_set1_epi32(h->y_zero), b = _mm512_loadu_si512(bias);
  const __m512 s = _mm512_loadu_ps(scale);
  __m512i acc[FUSE__QMR_AVX512];
  int t, c, r;
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_AVX512; r++) acc[r] = _mm512_setzero_si512();
  for (t = 0; t < ntaps; t++) {
    const uint8_t *x[FUSE__QMR_AVX512];
    FUSE__UNROLL
    for (r = 0; r < FUSE__QMR_AVX512; r++) x[r] = (const uint8_t *)rows[t * FUSE__QMR_AVX512 + r];
    for (c = 0; c < csteps; c++, w += 4 * FUSE__QNR) {
      const __m512i w0 = _mm512_loadu_si512(w);
      FUSE__UNROLL
      for (r = 0; r < FUSE__QMR_AVX512; r++) {
        int32_t quad;
        memcpy(&quad, x[r] + 4 * c, 4);
        acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(quad), w0);
      }
    }
  }
  FUSE__UNROLL
  for (r = 0; r < FUSE__QMR_AVX512; r++) {
    /* (the maskz forms: g++ 12 warns on the unmasked ones' undefined source) */
    const __mmask16 all = (__mmask16)-1;
    __m512 f = _mm512_maskz_cvtepi32_ps(all, _mm512_add_epi32(acc[r], b));
    __m512i q;
    f = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, _mm512_mul_ps(f, s), lo), hi);
    q = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, f), zero); /* in the type's range */
    if (h->y_signed) _mm512_mask_cvtsepi32_storeu_epi8(y + r * ldy, all, q);
    else _mm512_mask_cvtusepi32_storeu_epi8(y + r * ldy, all, q);
  }
}
#endif

/* The CPU's VNNI: 1 AVX-512 VNNI (with AVX-512 F, BW, VL and the OS saving their state),
   2 AVX-VNNI, 3 both, 0 none. */
static int fuse__cpu_vnni(void) {
  int v = 0;
#ifdef FUSE__X86
  unsigned r[4];
  fuse__cpuid(0, 0, r);
  if (r[0] < 7 || fuse_cpu_isa() == FUSE_ISA_SCALAR) return 0;
  fuse__cpuid(7, 0, r);
  if (fuse_cpu_isa() == FUSE_ISA_AVX512 && (r[2] & (1u << 11))) v |= 1;
  fuse__cpuid(7, 1, r);
  if (r[0] & (1u << 4)) v |= 2;
#endif
  return v;
}

/* The tile for a plan's ISA and a packed layout, on a CPU of fuse__cpu_vnni() `vnni` (NULL:
   none); its MR in *mr. */
static fuse__qtile_fn fuse__qtile_pick(fuse_isa isa, int layout, int vnni, int *mr) {
  (void)vnni;
  *mr = FUSE__QMR_SCALAR;
  if (layout == FUSE__QL_PAIRS) {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
    if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) return *mr = FUSE__QMR_AVX2, fuse__qtile_pairs_avx2;
#endif
    return isa == FUSE_ISA_AUTO ? NULL : fuse__qtile_pairs_scalar;
  }
  if (layout == FUSE__QL_QUADS) {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
    if (isa == FUSE_ISA_AVX512 && (vnni & 1)) return *mr = FUSE__QMR_AVX512, fuse__qtile_quads_avx512;
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2) && defined(FUSE__HAVE_AVXVNNI)
    if ((isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) && (vnni & 2))
      return *mr = FUSE__QMR_AVX2, fuse__qtile_quads_avxvnni;
#endif
  }
  return NULL;
}


/* Bytes of a qconv2d's weights in `layout` (kernels/qconv.c), and its Kp. */
static size_t fuse__qconv_weight_bytes(int layout, int64_t K, int64_t Cg, int64_t taps,
                                       int64_t *Kp) {
  int64_t KB = (K + FUSE__QNR - 1) / FUSE__QNR;
  *Kp = layout == FUSE__QL_DIRECT ? K : KB * FUSE__QNR;
  if (layout == FUSE__QL_PAIRS) return (size_t)(KB * taps * ((Cg + 1) / 2) * FUSE__QNR * 2 * 2);
  if (layout == FUSE__QL_QUADS) return (size_t)(KB * taps * ((Cg + 3) / 4) * FUSE__QNR * 4);
  return (size_t)(K * Cg * taps);
}

/* Scratch bytes of a qconv2d step in a packed layout (run/quant_run.c): the input as NHWC
   rows, the padding row, the tile's row pointers, one image's NHWC output. */
static size_t fuse__qconv_scratch(int layout, int64_t N, int64_t C, int64_t H, int64_t W,
                                  int64_t taps, int64_t npix, int64_t Kp) {
  int64_t cs = layout == FUSE__QL_PAIRS ? 2 * ((C + 1) / 2) * 2 : 4 * ((C + 3) / 4);
  size_t a = FUSE__ALIGN - 1;
  return (((size_t)(N * H * W * cs) + a) & ~a) + (((size_t)cs + a) & ~a) +
         (((size_t)taps * 8 * sizeof(void *) + a) & ~a) + (size_t)((npix + 8) * Kp) + FUSE__ALIGN;
}

/* A depthwise qconv2d's padded plane (int16 elements; with stride 2 its even and odd columns
   as two planes), rounded up to 16 elements; then its scratch bytes (run/quant_run.c): the
   plane, an int32 output row. */
static int64_t fuse__qdw_plane(int64_t H, int64_t W, const fuse_conv2d_attrs *a) {
  int64_t HP = H + a->padding[0] + a->padding[2], WP = W + a->padding[1] + a->padding[3];
  int64_t n = a->strides[1] == 2 ? 2 * HP * ((WP + 1) / 2) : HP * WP;
  return (n + 15) & ~(int64_t)15;
}
static size_t fuse__qdw_scratch(int64_t H, int64_t W, const fuse_conv2d_attrs *a, int64_t OW) {
  return (size_t)(fuse__qdw_plane(H, W, a) * 2 + OW * 4 + 32) + FUSE__ALIGN;
}

static void fuse__qdw_fill(int32_t *acc, int64_t n, int32_t v) {
  int64_t i;
  for (i = 0; i < n; i++) acc[i] = v;
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* acc[0..n) += x[0..n) * w, 8 lanes a step; the tail in C. */
__attribute__((target("avx2,fma"))) static void fuse__qdw_row_avx2(int32_t *acc, const int16_t *x,
                                                                   int64_t n, int32_t w) {
  const __m256i wv = _mm256_set1_epi32(w);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i xv = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(x + i)));
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(acc + i));
    _mm256_storeu_si256((__m256i *)(void *)(acc + i), _mm256_add_epi32(a, _mm256_mullo_epi32(xv, wv)));
  }
  for (; i < n; i++) acc[i] += x[i] * w;
}
/* y[0..n) = the requantized acc[0..n), 8 a step. */
__attribute__((target("avx2,fma"))) static void fuse__qdw_requant_avx2(unsigned char *y,
                                                                       const int32_t *acc,
                                                                       int64_t n, float scale,
                                                                       const fuse__qhead *h) {
  const __m256 s = _mm256_set1_ps(scale), lo = _mm256_set1_ps((float)(h->lo - h->y_zero));
  const __m256 hi = _mm256_set1_ps((float)(h->hi - h->y_zero));
  const __m256i z = _mm256_set1_epi32(h->y_zero);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)(acc + i))), s);
    __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(f, lo), hi)), z);
    __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    __m128i b = h->y_signed ? _mm_packs_epi16(p16, p16) : _mm_packus_epi16(p16, p16);
    _mm_storel_epi64((__m128i *)(void *)(y + i), b);
  }
  for (; i < n; i++) y[i] = (unsigned char)(fuse__qtile_requant(acc[i], scale, h) & 0xff);
}
#endif

static void fuse__qdw_row(int simd, int32_t *acc, const int16_t *x, int64_t n, int32_t w) {
  int64_t i;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (simd) {
    fuse__qdw_row_avx2(acc, x, n, w);
    return;
  }
#endif
  (void)simd;
  for (i = 0; i < n; i++) acc[i] += x[i] * w;
}
static void fuse__qdw_requant(int simd, unsigned char *y, const int32_t *acc, int64_t n,
                              float scale, const fuse__qhead *h) {
  int64_t i;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (simd) {
    fuse__qdw_requant_avx2(y, acc, n, scale, h);
    return;
  }
#endif
  (void)simd;
  for (i = 0; i < n; i++) y[i] = (unsigned char)(fuse__qtile_requant(acc[i], scale, h) & 0xff);
}
