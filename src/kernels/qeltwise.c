/* ------------------------------------------------- integer element-wise rows -- */
/* The rows of the integer steps that are not convs: qadd, the max of qmax_pool2d, a table of
   256 outputs (qlut, a qlut merged into a qadd), and a per-tensor quantize of float32 into
   uint8 / int8. */

/* qadd's arithmetic (run/quant_run.c) on rows of n elements, when its ops are clamps: v =
   (a - a_zero) * a_scale + (b - b_zero) * b_scale in double (both products exact: an 8-bit
   integer times a float's 24-bit significand; the sum rounded once), the clamps in order,
   v / y_scale rounded once, clamped to the output's range less its zero point, rounded half
   to even, plus the zero point. The SIMD rows compute exactly that, lanes of doubles; each
   clamp as max then min, so the caller takes them only where every clamp has lo <= hi (the
   scalar row takes the chain as written). They divide only where it matters: v times the
   reciprocal of y_scale is within |v / y_scale| * 2^-51 of the quotient, so it rounds to the
   same whole number unless it lies within 2^-20 of a half; a vector with such a lane divides
   (rounding after the output clamp instead of before is the same: its bounds are whole). */
typedef struct fuse__qadd_args {
  float a_scale, b_scale, y_scale; /* (floats: a product with an 8-bit integer is exact in double) */
  double lo, hi;                    /* the output's range less y_zero */
  double y_recip;                   /* 1 / y_scale, for the SIMD rows */
  double clo[4], chi[4];                    /* the clamps, in order */
  int num_clamps;
  int32_t a_zero, b_zero, y_zero;
  int a_signed, b_signed, y_signed; /* int8 (else uint8) */
  /* NEON's float lanes (fuse__qadd_prepare): with a' = a ^ xa and b' = b ^ xb read as uint8,
     t = a' alpha + (b' beta + c) in float, clamped to [flo, fhi], is within err of v / y_scale +
     y_zero clamped as the rows above clamp it (the clamps, then the output's range); a vector
     with a lane within err of a half takes the scalar row. fast 0: the scalar row only. */
  float alpha, beta, c, flo, fhi, near_half; /* near_half: 0.5 - err */
  unsigned char xa, xb;                      /* 0x80 for an int8 operand */
  int fast;
  /* x86's fixed-point float lanes: t + m = a' alpha + (b' beta + c_fixed) lies in one binade
     [2^e, 2^(e+1)), so its float's bits less fixed_sub are u = (t + 1/2) 2^f + d, f = 23 - e: a
     lane is t rounded (u >> f), unless t lies within err of a half, where the scalar row redoes
     it: then u's low f bits lie below 2 d, a power of two (u & near_mask == 0). Then the clamp
     [level_lo, level_hi] on the output levels (fuse__qadd_level). fixed 0: the double lanes. */
  float c_fixed;
  int32_t fixed_sub, near_mask, level_lo, level_hi;
  int f, fixed;
} fuse__qadd_args;

typedef void (*fuse__qadd_fn)(const unsigned char *a, const unsigned char *b, unsigned char *y,
                              int64_t n, const fuse__qadd_args *q);

/* v rounded half to even (|v| < 2^51) under the default rounding mode, as the SIMD rows'
   rounding does: through 1.5 * 2^52, where a double's last bit is 1. */
static double fuse__qround(double v) {
  double t = v + 6755399441055744.0;
  return t - 6755399441055744.0;
}

/* The output level of the sum v: the clamps in order, v / y_scale clamped to the range, rounded,
   plus the zero point. */
static int32_t fuse__qadd_level(const fuse__qadd_args *q, double v) {
  int k;
  for (k = 0; k < q->num_clamps; k++) v = v < q->clo[k] ? q->clo[k] : v > q->chi[k] ? q->chi[k] : v;
  v /= (double)q->y_scale;
  v = v == v ? (v < q->lo ? q->lo : v > q->hi ? q->hi : v) : 0.0; /* NaN: the zero point */
  return (int32_t)fuse__qround(v) + q->y_zero;
}

static void fuse__qadd_scalar(const unsigned char *a, const unsigned char *b, unsigned char *y,
                              int64_t n, const fuse__qadd_args *q) {
  int64_t i;
  for (i = 0; i < n; i++) {
    int32_t ai = q->a_signed ? (int32_t)(int8_t)a[i] : (int32_t)a[i];
    int32_t bi = q->b_signed ? (int32_t)(int8_t)b[i] : (int32_t)b[i];
    double v = (double)(ai - q->a_zero) * (double)q->a_scale + (double)(bi - q->b_zero) * (double)q->b_scale;
    y[i] = (unsigned char)(fuse__qadd_level(q, v) & 0xff);
  }
}

#ifdef FUSE__SIMD
/* x86's fixed-point lanes (the fields' note) for q's float lanes. t = a' alpha + b' beta + c (c
   in double) lies in [tlo, thi]; e is the least binade [2^e, 2^(e+1)) that holds it shifted by a
   whole m, with room for the errors, and the inner sum b' beta + c + m keeps below 2^(e+1) too.
   Then each float rounding (c + m to c_fixed, the two fmas) moves t by at most 2^(e-24), a half
   step of the lanes' grid 2^-f; alpha's and beta's by s 2^-24 in all; so err = s 2^-24 + 3
   2^(e-24) (and 2^-30 for the double arithmetic's own slips). The clamps and the output's range
   compose into one clamp, and it commutes with the monotone division and rounding: the output is
   the rounded level clamped to the levels of v = -inf and +inf. */
static void fuse__qadd_prepare_fixed(fuse__qadd_args *q, double c, double s) {
  double al = (double)q->alpha, be = (double)q->beta, err, m = 0;
  double tlo = c + (al < 0 ? 255.0 * al : 0.0) + (be < 0 ? 255.0 * be : 0.0);
  double thi = c + (al > 0 ? 255.0 * al : 0.0) + (be > 0 ? 255.0 * be : 0.0);
  double ilo = c + (be < 0 ? 255.0 * be : 0.0), ihi = c + (be > 0 ? 255.0 * be : 0.0); /* b' beta + c */
  float mf;
  int32_t bits, H, E, d;
  int e = 1;
  q->fixed = 0;
  while (e <= 20 && ldexp(1.0, e) < thi - tlo + 4.0) e++;
  for (; e <= 20; e++) {
    m = ceil(ldexp(1.0, e) - tlo + 1.0);
    if (thi + m + 1.0 < ldexp(1.0, e + 1) && fabs(ilo + m) < ldexp(1.0, e + 1) &&
        fabs(ihi + m) < ldexp(1.0, e + 1))
      break;
  }
  if (e > 20) return;
  q->f = 23 - e;
  err = s / 16777216.0 + 3.0 * ldexp(1.0, e - 24) + 1.0 / 1073741824.0;
  if (!(err <= 0.125)) return;
  H = (int32_t)1 << (q->f - 1), E = (int32_t)ldexp(err, q->f) + 1; /* (err in steps of 2^-f) */
  for (d = 1; d <= E; d <<= 1) { /* d > E: a fraction within E steps of a half is below 2 d */
  }
  q->c_fixed = (float)(c + m);
  mf = (float)ldexp(1.0, e);
  memcpy(&bits, &mf, 4);
  q->fixed_sub = bits - ((int32_t)1 << 23) + (int32_t)m * (H << 1) - H - d;
  q->near_mask = ((H << 1) - 1) & ~(2 * d - 1);
  q->level_lo = fuse__qadd_level(q, -HUGE_VAL), q->level_hi = fuse__qadd_level(q, HUGE_VAL);
  q->fixed = 1;
}

/* The lanes of `bad` (lane l: a[l], b[l]) on the scalar row into fix[l], read before a row
   stores its vector (y may be a or b); fuse__qadd_patch then puts them into y. */
static void fuse__qadd_redo(const unsigned char *a, const unsigned char *b, unsigned char *fix,
                            uint64_t bad, const fuse__qadd_args *q) {
  for (; bad; bad &= bad - 1) {
    int l = __builtin_ctzll(bad);
    fuse__qadd_scalar(a + l, b + l, fix + l, 1, q);
  }
}

static void fuse__qadd_patch(unsigned char *y, const unsigned char *fix, uint64_t bad) {
  for (; bad; bad &= bad - 1) {
    int l = __builtin_ctzll(bad);
    y[l] = fix[l];
  }
}
#endif

/* q's float lanes from its other fields. An int8 operand a is a' - 128 (a' = a ^ 0x80), so
   (a - a_zero) alpha = a' alpha - (a_zero + 128) alpha: c gathers those constants and y_zero
   (whole, so it moves no fraction). alpha = a_scale / y_scale rounded to float, and beta; the
   rest in double, c rounded to float. With s = 255 (|alpha| + |beta|) (|a'| alpha + |b'| beta <=
   s, |c| <= s + 256): alpha's and beta's roundings move t by at most s 2^-24, c's by (s + 256)
   2^-24, the inner fma's by (2 s + 256) 2^-24 and the outer one's as much; so err = (6 s + 1024)
   2^-24 (the double lanes' own slips, 2^-50 relative, in the 2^-30). The clamps and the output's
   range, each a clamp in turn, are one clamp [flo, fhi] (a clamp of a clamp clamps to the images
   of the first one's bounds); its bounds lie in the range (integers: rounding and clamping
   commute), each within 256 2^-24 of its float. Scales whose float lanes would land far from
   whole numbers (err > 1/8) keep the double lanes. */
static void fuse__qadd_prepare(fuse__qadd_args *q) {
#if defined(FUSE__SIMD) || defined(FUSE__NEON) /* (a build with the scalar row only has no use for it) */
  double sa = (double)q->a_scale / (double)q->y_scale, sb = (double)q->b_scale / (double)q->y_scale;
  double err, s, c, lo = q->lo + q->y_zero, hi = q->hi + q->y_zero, l, h;
  int k;
#endif
  q->fast = 0, q->fixed = 0;
#if defined(FUSE__SIMD) || defined(FUSE__NEON)
  if (!(q->y_scale > 0) || !(fabs(sa) < 1e30) || !(fabs(sb) < 1e30)) return;
  q->alpha = (float)sa, q->beta = (float)sb;
  q->xa = q->a_signed ? 0x80 : 0, q->xb = q->b_signed ? 0x80 : 0;
  c = (double)q->y_zero - (double)(q->a_zero + (q->a_signed ? 128 : 0)) * (double)q->alpha -
      (double)(q->b_zero + (q->b_signed ? 128 : 0)) * (double)q->beta;
  q->c = (float)c;
  s = 255.0 * (fabs((double)q->alpha) + fabs((double)q->beta));
  err = (6.0 * s + 1024.0) / 16777216.0 + 1.0 / 1073741824.0;
  l = -HUGE_VAL, h = HUGE_VAL;
  for (k = 0; k <= q->num_clamps; k++) { /* (the last: the range) */
    double cl = k < q->num_clamps ? q->clo[k] / (double)q->y_scale + q->y_zero : lo;
    double ch = k < q->num_clamps ? q->chi[k] / (double)q->y_scale + q->y_zero : hi;
    if (!(cl <= ch)) return; /* (unordered: the scalar row's) */
    l = l < cl ? cl : l > ch ? ch : l;
    h = h < cl ? cl : h > ch ? ch : h;
  }
  q->flo = (float)l, q->fhi = (float)h;
#ifdef FUSE__SIMD
  fuse__qadd_prepare_fixed(q, c, s);
#endif
  if (!(err <= 0.125)) return;
  q->near_half = (float)(0.5 - err), q->fast = 1;
#endif
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* 4 elements of int32 lanes (their zero points taken out) through the arithmetic. */
__attribute__((target("avx2,fma"))) static inline __m128i fuse__qadd4_avx2(__m128i a, __m128i b,
                                                                          const fuse__qadd_args *q) {
  __m256d v = _mm256_fmadd_pd(_mm256_cvtepi32_pd(a), _mm256_set1_pd((double)q->a_scale),
                              _mm256_mul_pd(_mm256_cvtepi32_pd(b), _mm256_set1_pd((double)q->b_scale)));
  int k;
  for (k = 0; k < q->num_clamps; k++)
    v = _mm256_min_pd(_mm256_max_pd(v, _mm256_set1_pd(q->clo[k])), _mm256_set1_pd(q->chi[k]));
  {
    __m256d t = _mm256_mul_pd(v, _mm256_set1_pd(q->y_recip));
    __m256d n = _mm256_round_pd(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d d = _mm256_andnot_pd(_mm256_set1_pd(-0.0), _mm256_sub_pd(t, n)); /* |t - n| */
    if (_mm256_movemask_pd(_mm256_cmp_pd(d, _mm256_set1_pd(0.5 - 1.0 / 1048576.0), _CMP_GT_OQ)))
      n = _mm256_round_pd(_mm256_div_pd(v, _mm256_set1_pd((double)q->y_scale)),
                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    n = _mm256_min_pd(_mm256_max_pd(n, _mm256_set1_pd(q->lo)), _mm256_set1_pd(q->hi));
    return _mm_add_epi32(_mm256_cvtpd_epi32(n), _mm_set1_epi32(q->y_zero));
  }
}

/* 32 elements a step on the fixed-point lanes (q->fixed), 8 on the double lanes (the rest, or
   all where the lanes do not fit); the tail on the scalar row. */
__attribute__((target("avx2,fma"))) static void fuse__qadd_avx2(const unsigned char *a,
                                                               const unsigned char *b,
                                                               unsigned char *y, int64_t n,
                                                               const fuse__qadd_args *qp) {
  const fuse__qadd_args args = *qp, *q = &args; /* (a copy: the stores to y could alias *qp) */
  const __m256i az = _mm256_set1_epi32(q->a_zero), bz = _mm256_set1_epi32(q->b_zero);
  const __m256 alpha = _mm256_set1_ps(q->alpha), beta = _mm256_set1_ps(q->beta);
  const __m256 c = _mm256_set1_ps(q->c_fixed);
  const __m256i sub = _mm256_set1_epi32(q->fixed_sub), near = _mm256_set1_epi32(q->near_mask);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7); /* (the packs' lanes) */
  const __m256i llo = _mm256_set1_epi8((char)q->level_lo), lhi = _mm256_set1_epi8((char)q->level_hi);
  const __m128i xa = _mm_set1_epi8((char)q->xa), xb = _mm_set1_epi8((char)q->xb);
  const __m128i f = _mm_cvtsi32_si128(q->f);
  int64_t i = 0;
  for (; q->fixed && i + 32 <= n; i += 32) {
    __m256i r[4], p;
    unsigned char fix[32];
    uint32_t bad = 0;
    int k;
    for (k = 0; k < 4; k++) {
      __m128i a8 = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)(a + i + 8 * k)), xa);
      __m128i b8 = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)(b + i + 8 * k)), xb);
      __m256i u = _mm256_sub_epi32(_mm256_castps_si256(_mm256_fmadd_ps(
                                       _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(a8)), alpha,
                                       _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b8)), beta, c))),
                                   sub);
      bad |= (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(
                 _mm256_cmpeq_epi32(_mm256_and_si256(u, near), _mm256_setzero_si256())))
             << (8 * k);
      r[k] = _mm256_sra_epi32(u, f);
    }
    r[0] = _mm256_packs_epi32(r[0], r[1]), r[2] = _mm256_packs_epi32(r[2], r[3]);
    if (q->y_signed) {
      p = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(r[0], r[2]), order);
      p = _mm256_min_epi8(_mm256_max_epi8(p, llo), lhi);
    } else {
      p = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(r[0], r[2]), order);
      p = _mm256_min_epu8(_mm256_max_epu8(p, llo), lhi);
    }
    if (bad) fuse__qadd_redo(a + i, b + i, fix, bad, q); /* (before the store: y may be a or b) */
    _mm256_storeu_si256((__m256i *)(void *)(y + i), p);
    if (bad) fuse__qadd_patch(y + i, fix, bad);
  }
  for (; i + 8 <= n; i += 8) {
    __m128i a8 = _mm_loadl_epi64((const __m128i *)(const void *)(a + i));
    __m128i b8 = _mm_loadl_epi64((const __m128i *)(const void *)(b + i));
    __m256i ai = q->a_signed ? _mm256_cvtepi8_epi32(a8) : _mm256_cvtepu8_epi32(a8);
    __m256i bi = q->b_signed ? _mm256_cvtepi8_epi32(b8) : _mm256_cvtepu8_epi32(b8);
    __m128i l4, h4, p16;
    ai = _mm256_sub_epi32(ai, az), bi = _mm256_sub_epi32(bi, bz);
    l4 = fuse__qadd4_avx2(_mm256_castsi256_si128(ai), _mm256_castsi256_si128(bi), q);
    h4 = fuse__qadd4_avx2(_mm256_extracti128_si256(ai, 1), _mm256_extracti128_si256(bi, 1), q);
    p16 = _mm_packs_epi32(l4, h4); /* (in the type's range: the clamp above) */
    _mm_storel_epi64((__m128i *)(void *)(y + i),
                     q->y_signed ? _mm_packs_epi16(p16, p16) : _mm_packus_epi16(p16, p16));
  }
  fuse__qadd_scalar(a + i, b + i, y + i, n - i, q);
}
#endif

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
/* 8 elements of int32 lanes through the arithmetic. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) static inline __m256i
fuse__qadd8_avx512(__m256i a, __m256i b, const fuse__qadd_args *q) {
  /* (the maskz forms: g++ 12 warns on the unmasked ones' undefined source) */
  const __mmask8 all = (__mmask8)-1;
  __m512d v = _mm512_fmadd_pd(_mm512_maskz_cvtepi32_pd(all, a), _mm512_set1_pd((double)q->a_scale),
                              _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(all, b), _mm512_set1_pd((double)q->b_scale)));
  int k;
  for (k = 0; k < q->num_clamps; k++)
    v = _mm512_maskz_min_pd(all, _mm512_maskz_max_pd(all, v, _mm512_set1_pd(q->clo[k])), _mm512_set1_pd(q->chi[k]));
  {
    __m512d t = _mm512_mul_pd(v, _mm512_set1_pd(q->y_recip));
    __m512d n = _mm512_maskz_roundscale_pd(all, t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512d d = _mm512_andnot_pd(_mm512_set1_pd(-0.0), _mm512_sub_pd(t, n)); /* |t - n| */
    if (_mm512_cmp_pd_mask(d, _mm512_set1_pd(0.5 - 1.0 / 1048576.0), _CMP_GT_OQ))
      n = _mm512_maskz_roundscale_pd(all, _mm512_div_pd(v, _mm512_set1_pd((double)q->y_scale)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    n = _mm512_maskz_min_pd(all, _mm512_maskz_max_pd(all, n, _mm512_set1_pd(q->lo)), _mm512_set1_pd(q->hi));
    return _mm256_add_epi32(_mm512_maskz_cvtpd_epi32(all, n), _mm256_set1_epi32(q->y_zero));
  }
}

/* 16 elements on the double lanes. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) static inline void
fuse__qadd16_avx512(const unsigned char *a, const unsigned char *b, unsigned char *y,
                    const fuse__qadd_args *q) {
  int half;
  for (half = 0; half < 16; half += 8) {
    __m128i a8 = _mm_loadl_epi64((const __m128i *)(const void *)(a + half));
    __m128i b8 = _mm_loadl_epi64((const __m128i *)(const void *)(b + half));
    __m256i ai = _mm256_sub_epi32(q->a_signed ? _mm256_cvtepi8_epi32(a8) : _mm256_cvtepu8_epi32(a8),
                                  _mm256_set1_epi32(q->a_zero));
    __m256i bi = _mm256_sub_epi32(q->b_signed ? _mm256_cvtepi8_epi32(b8) : _mm256_cvtepu8_epi32(b8),
                                  _mm256_set1_epi32(q->b_zero));
    __m256i r = fuse__qadd8_avx512(ai, bi, q); /* (in the type's range: the clamp) */
    if (q->y_signed) _mm256_mask_cvtsepi32_storeu_epi8(y + half, (__mmask8)0xff, r);
    else _mm256_mask_cvtusepi32_storeu_epi8(y + half, (__mmask8)0xff, r);
  }
}

/* 64 elements a step on the fixed-point lanes (q->fixed; as the AVX2 row's), 16 on the double
   lanes (the rest, or all where the lanes do not fit); the tail on the scalar row. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) static void fuse__qadd_avx512(
    const unsigned char *a, const unsigned char *b, unsigned char *y, int64_t n,
    const fuse__qadd_args *qp) {
  const fuse__qadd_args args = *qp, *q = &args; /* (a copy: the stores to y could alias *qp) */
  const __m512 alpha = _mm512_set1_ps(q->alpha), beta = _mm512_set1_ps(q->beta);
  const __m512 c = _mm512_set1_ps(q->c_fixed);
  const __m512i sub = _mm512_set1_epi32(q->fixed_sub), near = _mm512_set1_epi32(q->near_mask);
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i llo = _mm512_set1_epi8((char)q->level_lo), lhi = _mm512_set1_epi8((char)q->level_hi);
  const __m128i xa = _mm_set1_epi8((char)q->xa), xb = _mm_set1_epi8((char)q->xb);
  const __m128i f = _mm_cvtsi32_si128(q->f);
  const __mmask16 all = (__mmask16)-1;
  int64_t i = 0;
  for (; q->fixed && i + 64 <= n; i += 64) {
    __m512i r[4], p;
    unsigned char fix[64];
    uint64_t bad = 0;
    int k;
    for (k = 0; k < 4; k++) {
      __m128i a16 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(a + i + 16 * k)), xa);
      __m128i b16 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(b + i + 16 * k)), xb);
      __m512i u = _mm512_sub_epi32(_mm512_castps_si512(_mm512_fmadd_ps(
          _mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepu8_epi32(all, a16)), alpha,
          _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepu8_epi32(all, b16)), beta, c))), sub);
      bad |= (uint64_t)_mm512_testn_epi32_mask(u, near) << (16 * k);
      r[k] = _mm512_maskz_sra_epi32(all, u, f);
    }
    r[0] = _mm512_packs_epi32(r[0], r[1]), r[2] = _mm512_packs_epi32(r[2], r[3]);
    if (q->y_signed) {
      p = _mm512_maskz_permutexvar_epi32(all, order, _mm512_packs_epi16(r[0], r[2]));
      p = _mm512_min_epi8(_mm512_max_epi8(p, llo), lhi);
    } else {
      p = _mm512_maskz_permutexvar_epi32(all, order, _mm512_packus_epi16(r[0], r[2]));
      p = _mm512_min_epu8(_mm512_max_epu8(p, llo), lhi);
    }
    if (bad) fuse__qadd_redo(a + i, b + i, fix, bad, q); /* (before the store: y may be a or b) */
    _mm512_storeu_si512(y + i, p);
    if (bad) fuse__qadd_patch(y + i, fix, bad);
  }
  for (; i + 16 <= n; i += 16) fuse__qadd16_avx512(a + i, b + i, y + i, q);
  fuse__qadd_scalar(a + i, b + i, y + i, n - i, q);
}
#endif

#ifdef FUSE__NEON
/* v rounded to a whole number, ties to even (|v| < 2^22), as a float. */
static inline float32x4_t fuse__qrint_neon(float32x4_t v) {
#if defined(__aarch64__)
  return vrndnq_f32(v);
#else /* (armv7's NEON rounds to nearest: see fuse__qround_neon) */
  const float32x4_t magic = vdupq_n_f32(12582912.0f);
  return vsubq_f32(vaddq_f32(v, magic), magic);
#endif
}

/* The float lanes of the AVX2 row, 8 elements a step; a step with a lane near a half, and the
   tail, on the scalar row. */
static void fuse__qadd_neon(const unsigned char *a, const unsigned char *b, unsigned char *y,
                            int64_t n, const fuse__qadd_args *qp) {
  const fuse__qadd_args args = *qp, *q = &args; /* (a copy: the stores to y could alias *qp) */
  const float32x4_t alpha = vdupq_n_f32(q->alpha), beta = vdupq_n_f32(q->beta), c = vdupq_n_f32(q->c);
  const float32x4_t flo = vdupq_n_f32(q->flo), fhi = vdupq_n_f32(q->fhi);
  const float32x4_t near_half = vdupq_n_f32(q->near_half);
  const uint8x8_t xa = vdup_n_u8(q->xa), xb = vdup_n_u8(q->xb);
  int64_t i = 0;
  int half;
  for (; q->fast && i + 8 <= n; i += 8) {
    uint16x8_t a16 = vmovl_u8(veor_u8(vld1_u8(a + i), xa)), b16 = vmovl_u8(veor_u8(vld1_u8(b + i), xb));
    uint32x4_t far = vdupq_n_u32(0);
    uint32x2_t any;
    int32x4_t v[2];
    int16x8_t p;
    for (half = 0; half < 2; half++) {
      uint32x4_t ai = vmovl_u16(half ? vget_high_u16(a16) : vget_low_u16(a16));
      uint32x4_t bi = vmovl_u16(half ? vget_high_u16(b16) : vget_low_u16(b16));
      float32x4_t t = vfmaq_f32(vfmaq_f32(c, vcvtq_f32_u32(bi), beta), vcvtq_f32_u32(ai), alpha), r;
      t = vminq_f32(vmaxq_f32(t, flo), fhi);
      r = fuse__qrint_neon(t);
      far = vorrq_u32(far, vcgtq_f32(vabsq_f32(vsubq_f32(t, r)), near_half));
      v[half] = vcvtq_s32_f32(r); /* (r whole: the conversion is exact) */
    }
    any = vpmax_u32(vget_low_u32(far), vget_high_u32(far));
    if (vget_lane_u32(vpmax_u32(any, any), 0)) {
      fuse__qadd_scalar(a + i, b + i, y + i, 8, q);
      continue;
    }
    p = vcombine_s16(vmovn_s32(v[0]), vmovn_s32(v[1])); /* (in the output's range: the clamp) */
    vst1_u8(y + i, vreinterpret_u8_s8(vmovn_s16(p))); /* (the low bytes are the values) */
  }
  fuse__qadd_scalar(a + i, b + i, y + i, n - i, q);
}
#endif

/* The qadd row of a plan's ISA. */
static fuse__qadd_fn fuse__qadd_pick(fuse_isa isa) {
#ifdef FUSE__NEON
  if (isa == FUSE_ISA_NEON) return fuse__qadd_neon;
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
  if (isa == FUSE_ISA_AVX512) return fuse__qadd_avx512;
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) return fuse__qadd_avx2;
#endif
  (void)isa;
  return fuse__qadd_scalar;
}

/* y[i] = the largest of v[0][i] .. v[nv - 1][i], i < n: a max pool's window, its pixels' rows
   (1 <= nv <= 64: run/quant_run.c hands a larger window over in pieces). flip 0x80 makes int8 compare as uint8: each byte is flipped as it is read, the
   largest flipped back. y may be one of the rows (a window of more rows than a call takes). */
typedef void (*fuse__qmax_fn)(unsigned char *y, const unsigned char *const *v, int nv, int64_t n,
                              unsigned char flip);

static void fuse__qmax_scalar(unsigned char *y, const unsigned char *const *v, int nv, int64_t n,
                              unsigned char flip) {
  int64_t i;
  int k;
  for (i = 0; i < n; i++) {
    unsigned char best = (unsigned char)(v[0][i] ^ flip);
    for (k = 1; k < nv; k++) {
      unsigned char u = (unsigned char)(v[k][i] ^ flip);
      best = u > best ? u : best;
    }
    y[i] = (unsigned char)(best ^ flip);
  }
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* 32 bytes at a time, the window's rows in turn into one register. */
__attribute__((target("avx2,fma"))) static void fuse__qmax_avx2(unsigned char *y,
                                                               const unsigned char *const *v,
                                                               int nv, int64_t n,
                                                               unsigned char flip) {
  const __m256i f = _mm256_set1_epi8((char)flip);
  int64_t i = 0;
  int k;
  for (; i + 32 <= n; i += 32) {
    __m256i best = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(v[0] + i)), f);
    for (k = 1; k < nv; k++)
      best = _mm256_max_epu8(best, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(v[k] + i)), f));
    _mm256_storeu_si256((__m256i *)(void *)(y + i), _mm256_xor_si256(best, f));
  }
  if (i < n) {
    const unsigned char *rest[64];
    for (k = 0; k < nv && k < 64; k++) rest[k] = v[k] + i;
    fuse__qmax_scalar(y + i, rest, nv < 64 ? nv : 64, n - i, flip);
  }
}
#endif

/* The max window of a plan's ISA (AVX-512 plans take AVX2's; NEON: the scalar loop). */
static fuse__qmax_fn fuse__qmax_pick(fuse_isa isa) {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) return fuse__qmax_avx2;
#endif
  (void)isa;
  return fuse__qmax_scalar;
}

/* y[4 * i + c] = the byte of channel c of pixel i, i < n: x[c][i] for c < C (at most 4 planes
   of an NCHW image), fill for the rest: a row of a stem's few channels as quads. x86 builds
   only (run/quant_run.c's rows elsewhere do as well without it). */
#ifdef FUSE__SIMD
#define FUSE__HAVE_QQUADS 1
typedef void (*fuse__qquads_fn)(unsigned char *y, const unsigned char *const *x, int C, int64_t n,
                                unsigned char fill);

static void fuse__qquads_scalar(unsigned char *y, const unsigned char *const *x, int C, int64_t n,
                                unsigned char fill) {
  int64_t i;
  int c;
  for (c = 0; c < 4; c++)
    for (i = 0; i < n; i++) y[4 * i + c] = c < C ? x[c][i] : fill;
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* 32 pixels at a time: two rounds of unpacks make quads within 128-bit lanes, whose halves
   then go out in pixel order. */
__attribute__((target("avx2,fma"))) static void fuse__qquads_avx2(unsigned char *y,
                                                                 const unsigned char *const *x,
                                                                 int C, int64_t n,
                                                                 unsigned char fill) {
  const __m256i f = _mm256_set1_epi8((char)fill);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i v[4], ab0, ab1, cd0, cd1, q0, q1, q2, q3;
    int c;
    for (c = 0; c < 4; c++) v[c] = c < C ? _mm256_loadu_si256((const __m256i *)(const void *)(x[c] + i)) : f;
    ab0 = _mm256_unpacklo_epi8(v[0], v[1]), ab1 = _mm256_unpackhi_epi8(v[0], v[1]);
    cd0 = _mm256_unpacklo_epi8(v[2], v[3]), cd1 = _mm256_unpackhi_epi8(v[2], v[3]);
    q0 = _mm256_unpacklo_epi16(ab0, cd0), q1 = _mm256_unpackhi_epi16(ab0, cd0); /* pixels 0-7, 16-23 */
    q2 = _mm256_unpacklo_epi16(ab1, cd1), q3 = _mm256_unpackhi_epi16(ab1, cd1); /* 8-15, 24-31 */
    _mm256_storeu_si256((__m256i *)(void *)(y + 4 * i), _mm256_permute2x128_si256(q0, q1, 0x20));
    _mm256_storeu_si256((__m256i *)(void *)(y + 4 * i + 32), _mm256_permute2x128_si256(q2, q3, 0x20));
    _mm256_storeu_si256((__m256i *)(void *)(y + 4 * i + 64), _mm256_permute2x128_si256(q0, q1, 0x31));
    _mm256_storeu_si256((__m256i *)(void *)(y + 4 * i + 96), _mm256_permute2x128_si256(q2, q3, 0x31));
  }
  if (i < n) {
    const unsigned char *rest[4];
    int c;
    for (c = 0; c < C; c++) rest[c] = x[c] + i;
    fuse__qquads_scalar(y + 4 * i, rest, C, n - i, fill);
  }
}
#endif

/* The quads row of a plan's ISA (AVX-512 plans take AVX2's; NEON: the scalar loop). */
static fuse__qquads_fn fuse__qquads_pick(fuse_isa isa) {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) return fuse__qquads_avx2;
#endif
  (void)isa;
  return fuse__qquads_scalar;
}
#endif

/* y[i] = saturate(round(x[i] / scale) + zero), NaN giving the zero point, i < n, as
   run/reference_quant.c's per-tensor loop computes it: the quotient in float32, clamped to
   the type's range less the zero point, rounded half to even under the default rounding mode
   (cvtps2dq); the tail on that loop. Returns the elements done. */
typedef int64_t (*fuse__quantize_fn)(const float *x, unsigned char *y, int64_t n, float scale,
                                     int32_t zero, int y_signed);

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
__attribute__((target("avx2,fma"))) static int64_t fuse__quantize_avx2(const float *x,
                                                                      unsigned char *y, int64_t n,
                                                                      float scale, int32_t zero,
                                                                      int y_signed) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256 lo = _mm256_set1_ps((float)((y_signed ? -128 : 0) - zero));
  const __m256 hi = _mm256_set1_ps((float)((y_signed ? 127 : 255) - zero));
  const __m256i z = _mm256_set1_epi32(zero);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), s);
    __m256i q;
    __m128i p16;
    v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q)); /* NaN: 0, the zero point */
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    q = _mm256_add_epi32(_mm256_cvtps_epi32(v), z);
    p16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64((__m128i *)(void *)(y + i), y_signed ? _mm_packs_epi16(p16, p16) : _mm_packus_epi16(p16, p16));
  }
  return i;
}
#endif

/* The quantize row of a plan's ISA (AVX-512 plans take AVX2's); NULL: the loop alone. */
static fuse__quantize_fn fuse__quantize_pick(fuse_isa isa) {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) return fuse__quantize_avx2;
#endif
  (void)isa;
  return NULL;
}

/* y[i] = table[x[i]], i < n (y may be x). */
typedef void (*fuse__qtable_fn)(unsigned char *y, const unsigned char *x, int64_t n,
                                const unsigned char *table);

static void fuse__qtable_scalar(unsigned char *y, const unsigned char *x, int64_t n,
                                const unsigned char *table) {
  int64_t i;
  for (i = 0; i < n; i++) y[i] = table[x[i]];
}

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
/* AVX-512 VBMI: 64 bytes a step, each 128-entry half of the table by vpermi2b on the index's
   low 7 bits, the half picked by its top bit. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void fuse__qtable_vbmi(
    unsigned char *y, const unsigned char *x, int64_t n, const unsigned char *table) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i idx = _mm512_loadu_si512(x + i);
    __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1), hi = _mm512_permutex2var_epi8(t2, idx, t3);
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
  }
  fuse__qtable_scalar(y + i, x + i, n - i, table);
}
#endif

#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
/* AVX2: 32 bytes a step, the table as 16 rows of 16 bytes looked up by vpshufb on the index's
   low nibble, each row's bytes taken where the high nibble names it (a third of the scalar
   loop's time). */
__attribute__((target("avx2"))) static void fuse__qtable_avx2(unsigned char *y, const unsigned char *x,
                                                             int64_t n, const unsigned char *table) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  __m256i rows[16];
  int64_t i = 0;
  int k;
  for (k = 0; k < 16; k++)
    rows[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(table + 16 * k)));
  for (; i + 32 <= n; i += 32) {
    __m256i idx = _mm256_loadu_si256((const __m256i *)(const void *)(x + i));
    __m256i lo = _mm256_and_si256(idx, nibble), hi = _mm256_and_si256(_mm256_srli_epi16(idx, 4), nibble);
    __m256i r = _mm256_shuffle_epi8(rows[0], lo);
    for (k = 1; k < 16; k++)
      r = _mm256_blendv_epi8(r, _mm256_shuffle_epi8(rows[k], lo), _mm256_cmpeq_epi8(hi, _mm256_set1_epi8((char)k)));
    _mm256_storeu_si256((__m256i *)(void *)(y + i), r);
  }
  fuse__qtable_scalar(y + i, x + i, n - i, table);
}
#endif

/* The table row of a plan's ISA on a CPU of fuse__cpu_vnni() `ext` (VBMI on AVX-512). */
static fuse__qtable_fn fuse__qtable_pick(fuse_isa isa, int ext) {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
  if (isa == FUSE_ISA_AVX512 && (ext & 4)) return fuse__qtable_vbmi;
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) return fuse__qtable_avx2;
#endif
  (void)isa, (void)ext;
  return fuse__qtable_scalar;
}
