/* The AVX-512 vector layer: 16 floats, __mmask16 lane masks. Every kernel template
   (the .inc files in src/kernels) is written against the FUSE__VEC / FUSE__V_* names below and compiled
   once per layer (vec_scalar.h is the reference semantics of each operation); vec_end.h
   undefines them. The functions carry the target attribute, so a unit built with plain -O2
   still has this instance, taken when fuse_cpu_isa() finds AVX-512 at run time. */
#define FUSE__VEC_ISA FUSE_ISA_AVX512
#define FUSE__VEC_FN(name) name##_avx512 /* the instance's name */
#define FUSE__VEC_TARGET __attribute__((target("avx512f")))
#define FUSE__VEC __m512
#define FUSE__VEC_MASK __mmask16
#define FUSE__VEC_WIDTH 16
#define FUSE__V_ZERO() _mm512_setzero_ps()
#define FUSE__V_SET1(x) _mm512_set1_ps(x)
#define FUSE__V_LOAD(p) _mm512_loadu_ps(p)
#define FUSE__V_STORE(p, v) _mm512_storeu_ps(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) _mm512_store_ps(p, v) /* p 64-byte aligned */
/* lanes [0, n) (n may be anything: clamped to 0 .. 16) and [a, b) (0 <= a <= b <= 16) */
#define FUSE__V_MASK_FIRST(n)                                                                \
  ((__mmask16)((n) >= 16 ? 0xffffu : (n) <= 0 ? 0u : (1u << (unsigned)(n)) - 1u))
#define FUSE__V_MASK_RANGE(a, b)                                                             \
  ((__mmask16)(((1u << (unsigned)(b)) - 1u) & ~((1u << (unsigned)(a)) - 1u)))
#define FUSE__V_LOAD_MASK(p, m) _mm512_maskz_loadu_ps(m, p) /* zeros outside m */
#define FUSE__V_STORE_MASK(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define FUSE__V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c) /* a * b + c */
#define FUSE__V_ADD(a, b) _mm512_add_ps(a, b)
#define FUSE__V_SUB(a, b) _mm512_sub_ps(a, b)
#define FUSE__V_MUL(a, b) _mm512_mul_ps(a, b)
/* a > b ? a : b and a < b ? a : b (b where either is NaN); maskz: gcc 12 warns on max_ps */
#define FUSE__V_MAX(a, b) _mm512_maskz_max_ps((__mmask16)-1, a, b)
#define FUSE__V_MIN(a, b) _mm512_maskz_min_ps((__mmask16)-1, a, b)
/* x < t ? t : x and x > t ? t : x (x where either is NaN) */
#define FUSE__V_BELOW(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_LT_OQ), x, t)
#define FUSE__V_ABOVE(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_GT_OQ), x, t)
/* x where x > m (x < m) or x is NaN, else m: max / min that keep a NaN of x */
#define FUSE__V_MAX_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
#define FUSE__V_MIN_NAN(x, m)                                                                \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_LT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
/* the even (odd) floats of the 32 in a, b: a0 a2 .. a14 b0 .. b14 */
#define FUSE__V_EVENS(a, b)                                                                  \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b)
#define FUSE__V_ODDS(a, b)                                                                   \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b)
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
#define FUSE__V_PREFETCH_L1(p) __builtin_prefetch(p, 0, 3)
/* lane k of the result = lane idx[k] of v (the grouped conv's input of several groups);
   FUSE__VEC_INDEX holds the lane numbers, loaded from int32 */
#define FUSE__VEC_INDEX __m512i
#define FUSE__V_INDEX_LOAD(p) _mm512_loadu_si512((const void *)(p))
/* the masked form: g++ 12 warns (maybe-uninitialized) on _mm512_permutexvar_ps's undefined source */
#define FUSE__V_PERMUTE(v, idx) _mm512_mask_permutexvar_ps(v, (__mmask16)0xFFFF, idx, v)
/* x > 0 ? a : b, lane by lane (b where x is NaN) */
#define FUSE__V_IF_POSITIVE(x, a, b) \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), b, a)
/* the math layer's operations (vmath.inc); see vec_scalar.h for what each means. AVX-512F only:
   the float and / or / xor need AVX-512DQ, so the bit operations are on integers. The maskz
   forms with every lane on: gcc 12 warns under C++ of the unmasked ones' undefined source. */
#define FUSE__V_DIV(a, b) _mm512_div_ps(a, b)
#define FUSE__V_BITS(x) _mm512_castps_si512(x)
#define FUSE__V_NEG(x)                                                                       \
  _mm512_castsi512_ps(_mm512_xor_si512(FUSE__V_BITS(x), _mm512_set1_epi32((int)0x80000000u)))
#define FUSE__V_ABS(x)                                                                       \
  _mm512_castsi512_ps(_mm512_and_si512(FUSE__V_BITS(x), _mm512_set1_epi32(0x7fffffff)))
/* bitwise (mask ? x : s) with mask = all but the sign bit: one vpternlogd */
#define FUSE__V_COPYSIGN(x, s)                                                               \
  _mm512_castsi512_ps(_mm512_ternarylogic_epi32(FUSE__V_BITS(x), FUSE__V_BITS(s), _mm512_set1_epi32(0x7fffffff), 0xe4))
#define FUSE__V_ROUND(x)                                                                     \
  _mm512_maskz_roundscale_ps((__mmask16)-1, x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* vscalefps: x * 2^floor(n), rounded once, whatever n */
#define FUSE__V_POW2(n) _mm512_maskz_scalef_ps((__mmask16)-1, _mm512_set1_ps(1.0f), n)
#define FUSE__V_LDEXP(x, n) _mm512_maskz_scalef_ps((__mmask16)-1, x, n)
/* vgetmantps with the interval [0.75, 1.5) (negative x: NaN), vgetexpps the exponent of
   [1, 2), one more where the mantissa came out below 1 */
#define FUSE__V_FREXP(x, m, e)                                                               \
  ((m) = _mm512_maskz_getmant_ps((__mmask16)-1, x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_nan), \
   (e) = _mm512_maskz_getexp_ps((__mmask16)-1, x),                                            \
   (e) = _mm512_mask_add_ps(e, _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.0f), _CMP_LT_OQ), e, _mm512_set1_ps(1.0f)))
#define FUSE__V_LT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define FUSE__V_EQ(a, b) _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ)
#define FUSE__V_SELECT(m, a, b) _mm512_mask_blend_ps(m, b, a)
/* sqrt, floor, ceil (the element-wise chains' unary ops) */
#define FUSE__V_SQRT(x) _mm512_maskz_sqrt_ps((__mmask16)-1, x) /* maskz: see FUSE__V_MAX */
#define FUSE__V_FLOOR(x) \
  _mm512_maskz_roundscale_ps((__mmask16)-1, x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define FUSE__V_CEIL(x) \
  _mm512_maskz_roundscale_ps((__mmask16)-1, x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
