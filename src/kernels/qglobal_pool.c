/* --------------------------------------------- integer global average pool's sums -- */
/* The rows of a qglobal_avg_pool2d (run/quant_run.c): the sums of an NCHW plane's bytes, or of
   NHWC pixels' channels, column by column, and their requantization. Bytes are read as unsigned, each xor `flip` (0x80 for
   int8: v + 128, whose 128 a byte the caller takes back), into uint32 that wrap as ONNX
   Runtime's int32 sums do (the caller's result is the same modulo 2^32). */

/* The sum of x[0] .. x[n - 1], each xor flip. */
typedef uint32_t (*fuse__qsum_fn)(const unsigned char *x, int64_t n, unsigned char flip);
/* acc[c] += x[r * stride + c] ^ flip for r < rows, c < n: n channels of `rows` NHWC pixels. */
typedef void (*fuse__qcolumns_fn)(uint32_t *acc, const unsigned char *x, int64_t stride,
                                  int64_t rows, int64_t n, unsigned char flip);

static uint32_t fuse__qsum_scalar(const unsigned char *x, int64_t n, unsigned char flip) {
  uint32_t s = 0;
  int64_t i;
  for (i = 0; i < n; i++) s += (uint32_t)(x[i] ^ flip);
  return s;
}

static void fuse__qcolumns_scalar(uint32_t *acc, const unsigned char *x, int64_t stride,
                                  int64_t rows, int64_t n, unsigned char flip) {
  int64_t r, c;
  for (r = 0; r < rows; r++, x += stride)
    for (c = 0; c < n; c++) acc[c] += (uint32_t)(x[c] ^ flip);
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* 32 bytes a step, vpsadbw against zero: four 64-bit sums of 8 bytes each. */
__attribute__((target("avx2,fma"))) static uint32_t fuse__qsum_avx2(const unsigned char *x, int64_t n,
                                                                   unsigned char flip) {
  const __m256i f = _mm256_set1_epi8((char)flip), zero = _mm256_setzero_si256();
  __m256i s = _mm256_setzero_si256();
  __m128i h;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    s = _mm256_add_epi64(s, _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(x + i)), f), zero));
  h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  h = _mm_add_epi64(h, _mm_unpackhi_epi64(h, h));
  return (uint32_t)_mm_cvtsi128_si32(h) + fuse__qsum_scalar(x + i, n - i, flip);
}

/* 32 channels a step in two vectors of 16-bit sums, over up to 257 pixels at a time (257 x 255
   fits 16 bits), then widened into acc; 16 channels the same way; the rest on the scalar loop. */
__attribute__((target("avx2,fma"))) static void fuse__qcolumns_avx2(uint32_t *acc,
                                                                   const unsigned char *x,
                                                                   int64_t stride, int64_t rows,
                                                                   int64_t n, unsigned char flip) {
  const __m128i f = _mm_set1_epi8((char)flip);
  int64_t c = 0, r0, r;
  while (c + 16 <= n) {
    int vectors = c + 32 <= n ? 2 : 1, k;
    for (r0 = 0; r0 < rows; r0 += 257) {
      int64_t r1 = r0 + 257 < rows ? r0 + 257 : rows;
      const unsigned char *at = x + r0 * stride + c;
      __m256i s[2];
      s[0] = s[1] = _mm256_setzero_si256();
      for (r = r0; r < r1; r++, at += stride)
        for (k = 0; k < vectors; k++)
          s[k] = _mm256_add_epi16(s[k], _mm256_cvtepu8_epi16(_mm_xor_si128(
                                            _mm_loadu_si128((const __m128i *)(const void *)(at + 16 * k)), f)));
      for (k = 0; k < vectors; k++) {
        __m256i lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(s[k]));
        __m256i hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(s[k], 1));
        uint32_t *a = acc + c + 16 * k;
        _mm256_storeu_si256((__m256i *)(void *)a, _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)a), lo));
        _mm256_storeu_si256((__m256i *)(void *)(a + 8), _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(a + 8)), hi));
      }
    }
    c += 16 * vectors;
  }
  if (c < n) fuse__qcolumns_scalar(acc + c, x + c, stride, rows, n - c, flip);
}
#endif

/* y[c] = the requantized acc[c] - share, c < n: (float)(int32)(acc[c] - share) * scale clamped
   to [h->lo, h->hi] less h->y_zero, rounded half to even, plus h->y_zero (fuse__qtile_requant,
   ONNX Runtime's MlasRequantizeOutput), as a byte of the output's type. */
typedef void (*fuse__qgap_requant_fn)(unsigned char *y, const uint32_t *acc, int64_t n,
                                      uint32_t share, float scale, const fuse__qhead *h);

static void fuse__qgap_requant_scalar(unsigned char *y, const uint32_t *acc, int64_t n,
                                      uint32_t share, float scale, const fuse__qhead *h) {
  int64_t c;
  for (c = 0; c < n; c++)
    y[c] = (unsigned char)(fuse__qtile_requant((int32_t)(acc[c] - share), scale, h) & 0xff);
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* 8 a step (cvtps2dq rounds half to even under the default rounding mode); the rest on the
   scalar loop. */
__attribute__((target("avx2,fma"))) static void fuse__qgap_requant_avx2(unsigned char *y,
                                                                       const uint32_t *acc, int64_t n,
                                                                       uint32_t share, float scale,
                                                                       const fuse__qhead *h) {
  const __m256 lo = _mm256_set1_ps((float)(h->lo - h->y_zero)), hi = _mm256_set1_ps((float)(h->hi - h->y_zero));
  const __m256 m = _mm256_set1_ps(scale);
  const __m256i s = _mm256_set1_epi32((int32_t)share), z = _mm256_set1_epi32(h->y_zero);
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    __m256i v = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(acc + c)), s);
    __m256 f = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v), m), lo), hi);
    __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(f), z); /* (in the type's range) */
    __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64((__m128i *)(void *)(y + c), h->y_signed ? _mm_packs_epi16(p16, p16) : _mm_packus_epi16(p16, p16));
  }
  fuse__qgap_requant_scalar(y + c, acc + c, n - c, share, scale, h);
}
#endif

/* The rows of a plan's ISA (AVX-512 plans take AVX2's; NEON: the scalar loops). */
static void fuse__qgap_pick(fuse_isa isa, fuse__qsum_fn *sum, fuse__qcolumns_fn *columns,
                            fuse__qgap_requant_fn *requant) {
  *sum = fuse__qsum_scalar, *columns = fuse__qcolumns_scalar, *requant = fuse__qgap_requant_scalar;
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512)
    *sum = fuse__qsum_avx2, *columns = fuse__qcolumns_avx2, *requant = fuse__qgap_requant_avx2;
#endif
  (void)isa;
}
