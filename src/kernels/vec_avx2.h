/* The AVX2 + FMA vector layer: 8 floats, lane masks as __m256i (all ones = lane on). The same
   operations as vec_avx512.h; see there. */
#define FUSE__VEC_ISA FUSE_ISA_AVX2
#define FUSE__VEC_FN(name) name##_avx2
#define FUSE__VEC_TARGET __attribute__((target("avx2,fma")))
#define FUSE__VEC __m256
#define FUSE__VEC_MASK __m256i
#define FUSE__VEC_WIDTH 8
#define FUSE__V_ZERO() _mm256_setzero_ps()
#define FUSE__V_SET1(x) _mm256_set1_ps(x)
#define FUSE__V_LOAD(p) _mm256_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm256_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm256_store_ps(p, v)
#define FUSE__V_LANES _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define FUSE__V_MASK_FIRST(n)                                                                \
  _mm256_cmpgt_epi32(_mm256_set1_epi32((int)((n) >= 8 ? 8 : (n) <= 0 ? 0 : (n))), FUSE__V_LANES)
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)(a)), FUSE__V_LANES),        \
                      _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(b)), FUSE__V_LANES))
#define FUSE__V_LOAD_MASK(p, m) _mm256_maskload_ps(p, m)
#define FUSE__V_STORE_MASK(p, m, v) _mm256_maskstore_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FUSE__V_ADD(a, b) _mm256_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm256_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm256_mul_ps(a, b)
#define FUSE__V_MAX(a, b) _mm256_max_ps(a, b)
#define FUSE__V_MIN(a, b) _mm256_min_ps(a, b)
#define FUSE__V_BELOW(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_LT_OQ))
#define FUSE__V_ABOVE(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_GT_OQ))
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_LT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8))
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8))
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
#define FUSE__V_PREFETCH_L1(p) __builtin_prefetch(p, 0, 3)
#define FUSE__VEC_INDEX __m256i
#define FUSE__V_INDEX_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define FUSE__V_PERMUTE(v, idx) _mm256_permutevar8x32_ps(v, idx)
/* x > 0 ? a : b, lane by lane (b where x is NaN) */
#define FUSE__V_IF_POSITIVE(x, a, b) \
  _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ))
#define FUSE__V_DIV(a, b) _mm256_div_ps(a, b)
#define FUSE__V_SIGN_BIT _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))
#define FUSE__V_NEG(x) _mm256_xor_ps(x, FUSE__V_SIGN_BIT)
#define FUSE__V_ABS(x) _mm256_andnot_ps(FUSE__V_SIGN_BIT, x)
#define FUSE__V_COPYSIGN(x, s) _mm256_or_ps(FUSE__V_ABS(x), _mm256_and_ps(FUSE__V_SIGN_BIT, s))
#define FUSE__V_ROUND(x) _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define FUSE__V_POW2(n)                                                                      \
  _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23))
#define FUSE__V_LDEXP(x, n) fuse__ldexp_avx2(x, n)
#define FUSE__V_FREXP(x, m, e) ((m) = fuse__frexp_avx2(x, &(e)))
#define FUSE__V_LT(a, b) _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_LT_OQ))
#define FUSE__V_EQ(a, b) _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_EQ_OQ))
#define FUSE__V_SELECT(m, a, b) _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m))
/* sqrt, floor, ceil (the element-wise chains' unary ops) */
#define FUSE__V_SQRT(x) _mm256_sqrt_ps(x)
#define FUSE__V_FLOOR(x) _mm256_floor_ps(x)
#define FUSE__V_CEIL(x) _mm256_ceil_ps(x)
