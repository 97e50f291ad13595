/* The scalar vector layer: one float, a lane mask is 0 or 1. It gives every kernel template a
   plain-C instance (the scalar twin) with the same tiles, packing and drivers as the SIMD
   ones: the fallback where no SIMD is compiled in (ARM today, FUSE_NO_SIMD), the oracle the
   SIMD instances are tested against, and the definition of what each operation means
   (NaN handling included; the SIMD layers match it lane by lane). */
#define FUSE__VEC_ISA FUSE_ISA_SCALAR
#define FUSE__VEC_FN(name) name##_scalar
#define FUSE__VEC_TARGET
#define FUSE__VEC float
#define FUSE__VEC_MASK int
#define FUSE__VEC_WIDTH 1
#define FUSE__V_ZERO() 0.0f
#define FUSE__V_SET1(x) ((float)(x))
#define FUSE__V_LOAD(p) (*(p))
#define FUSE__V_STORE(p, v) (*(p) = (v))
#define FUSE__V_STORE_ALIGNED(p, v) (*(p) = (v))
#define FUSE__V_MASK_FIRST(n) ((n) > 0)
#define FUSE__V_MASK_RANGE(a, b) ((a) <= 0 && (b) > 0)
#define FUSE__V_LOAD_MASK(p, m) ((m) ? *(p) : 0.0f)
#define FUSE__V_STORE_MASK(p, m, v) ((m) ? (void)(*(p) = (v)) : (void)0)
#define FUSE__V_FMA(a, b, c) ((a) * (b) + (c))
#define FUSE__V_ADD(a, b) ((a) + (b))
#define FUSE__V_SUB(a, b) ((a) - (b))
#define FUSE__V_MUL(a, b) ((a) * (b))
#define FUSE__V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FUSE__V_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FUSE__V_BELOW(x, t) ((x) < (t) ? (t) : (x))
#define FUSE__V_ABOVE(x, t) ((x) > (t) ? (t) : (x))
#define FUSE__V_MAX_NAN(x, m) ((x) > (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_MIN_NAN(x, m) ((x) < (m) || (x) != (x) ? (x) : (m))
#define FUSE__V_EVENS(a, b) ((void)(b), (a))
#define FUSE__V_ODDS(a, b) ((void)(a), (b))
#define FUSE__V_PREFETCH_L2(p) ((void)(p))
#define FUSE__V_PREFETCH_L1(p) ((void)(p))
/* lane k of the result = lane idx[k] of v, the lane numbers loaded from int32 (one lane here:
   the index is 0) */
#define FUSE__VEC_INDEX int32_t
#define FUSE__V_INDEX_LOAD(p) (*(p))
#define FUSE__V_PERMUTE(v, idx) ((void)(idx), (v))
/* x > 0 ? a : b, lane by lane (b where x is NaN) */
#define FUSE__V_IF_POSITIVE(x, a, b) ((x) > 0 ? (a) : (b))
/* The math layer's operations (vmath.inc): division, bit operations on the sign, rounding,
   scaling by powers of two, the exponent split, comparisons and selection. Masks are 0 or 1. */
#define FUSE__V_DIV(a, b) ((a) / (b))
#define FUSE__V_NEG(x) (-(x))                                         /* the sign bit flipped */
#define FUSE__V_ABS(x) fuse__bits_float(fuse__float_bits(x) & 0x7fffffffu) /* sign bit cleared */
#define FUSE__V_COPYSIGN(x, s)                                         /* |x| with the sign of s */ \
  fuse__bits_float((fuse__float_bits(x) & 0x7fffffffu) | (fuse__float_bits(s) & 0x80000000u))
#define FUSE__V_ROUND(x) fuse__round_scalar(x) /* nearest integer, ties to even; |x| < 2^22 */
/* 2^n for integral n in [-126, 127]; x * 2^n for integral n in [-252, 254], rounded once (to a
   denormal, or to inf) when x * 2^floor(n/2) is a normal float; NaN where n is NaN */
#define FUSE__V_POW2(n) fuse__pow2_scalar(n)
#define FUSE__V_LDEXP(x, n) fuse__ldexp_scalar(x, n)
/* x = m * 2^e, m in [0.75, 1.5), e integral, for positive x (denormals included); x = +inf:
   e = +inf; x = +-0: e = -inf; x < 0 or NaN: m = NaN. m is finite in each case but the last,
   so e * ln2 + log(m) is log(x) whatever x is. Assigns m and e. */
#define FUSE__V_FREXP(x, m, e) ((m) = fuse__frexp_scalar(x, &(e)))
#define FUSE__V_LT(a, b) ((a) < (b)) /* the masks of comparisons: false where either is NaN */
#define FUSE__V_EQ(a, b) ((a) == (b))
#define FUSE__V_SELECT(m, a, b) ((m) ? (a) : (b)) /* a in the lanes of m, b elsewhere */
/* sqrt, floor, ceil (the element-wise chains' unary ops) */
#define FUSE__V_SQRT(x) sqrtf(x)
#define FUSE__V_FLOOR(x) floorf(x)
#define FUSE__V_CEIL(x) ceilf(x)
