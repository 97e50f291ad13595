/* The NEON vector layer: 4 floats (float32x4_t), lane masks as uint32x4_t (all ones = lane on).
   The same operations as vec_avx512.h, with the meaning vec_scalar.h gives each; the
   operations of more than one instruction are the fuse__*_neon helpers in common.c. Compiled
   in on aarch64 and on armv7 with NEON and FMA (FUSE__NEON, plan/cpu.c); the unit's whole build has
   NEON there, so the functions need no target attribute.

   aarch64 has every operation as an instruction. armv7 lacks the vector divide, square root
   and rounding (frint*): those are computed lane by lane with the VFP's IEEE instructions, or
   by the add-and-subtract of 1.5 * 2^23 (round, as the scalar layer does). armv7's NEON also
   flushes denormal inputs and results to zero whatever the FPSCR says, where the scalar twin
   on its VFP does not: results that are denormal (below 1.2e-38) come out as zero there.
   Lane-indexed multiply-add (fmla by element) exists on aarch64 only: there the GEMM template
   takes FUSE__V_LANE. */
#define FUSE__VEC_ISA FUSE_ISA_NEON
#define FUSE__VEC_FN(name) name##_neon
#define FUSE__VEC_TARGET
#define FUSE__VEC float32x4_t
#define FUSE__VEC_MASK uint32x4_t
#define FUSE__VEC_WIDTH 4
#define FUSE__V_ZERO() vdupq_n_f32(0.0f)
#define FUSE__V_SET1(x) vdupq_n_f32(x)
#define FUSE__V_LOAD(p) vld1q_f32(p)
#define FUSE__V_STORE(p, v) vst1q_f32(p, v)
#define FUSE__V_STORE_ALIGNED(p, v) vst1q_f32(p, v)
#define FUSE__V_MASK_FIRST(n) fuse__mask_range_neon(0, (int64_t)(n))
#define FUSE__V_MASK_RANGE(a, b) fuse__mask_range_neon((int64_t)(a), (int64_t)(b))
/* lane by lane where the mask is not whole: nothing outside it is read or written */
#define FUSE__V_LOAD_MASK(p, m) fuse__load_mask_neon(p, m)
#define FUSE__V_STORE_MASK(p, m, v) fuse__store_mask_neon(p, m, v)
#define FUSE__V_FMA(a, b, c) vfmaq_f32(c, a, b) /* a * b + c, rounded once */
#define FUSE__V_ADD(a, b) vaddq_f32(a, b)
#define FUSE__V_SUB(a, b) vsubq_f32(a, b)
#define FUSE__V_MUL(a, b) vmulq_f32(a, b)
/* vmaxq / vminq give NaN where either is NaN and +0 for max(-0, +0): selects, as the scalar
   layer's comparisons */
#define FUSE__V_MAX(a, b) fuse__select_gt_neon(a, b, a, b)
#define FUSE__V_MIN(a, b) fuse__select_gt_neon(b, a, a, b)
#define FUSE__V_BELOW(x, t) fuse__select_gt_neon(t, x, t, x)
#define FUSE__V_ABOVE(x, t) fuse__select_gt_neon(x, t, t, x)
#define FUSE__V_MAX_NAN(x, m) fuse__keep_nan_neon(vcgtq_f32(x, m), x, m)
#define FUSE__V_MIN_NAN(x, m) fuse__keep_nan_neon(vcltq_f32(x, m), x, m)
#if defined(__aarch64__)
#define FUSE__V_EVENS(a, b) vuzp1q_f32(a, b)
#define FUSE__V_ODDS(a, b) vuzp2q_f32(a, b)
#else
#define FUSE__V_EVENS(a, b) vuzpq_f32(a, b).val[0]
#define FUSE__V_ODDS(a, b) vuzpq_f32(a, b).val[1]
#endif
#define FUSE__V_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
#define FUSE__V_PREFETCH_L1(p) __builtin_prefetch(p, 0, 3)
/* a lane permute as a byte table lookup: lane number n becomes bytes 4n .. 4n + 3
   (fuse__index_neon, fuse__permute_neon in common.c) */
#define FUSE__VEC_INDEX uint8x16_t
#define FUSE__V_INDEX_LOAD(p) fuse__index_neon(p)
#define FUSE__V_PERMUTE(v, idx) fuse__permute_neon(v, idx)
/* x > 0 ? a : b, lane by lane (b where x is NaN) */
#define FUSE__V_IF_POSITIVE(x, a, b) vbslq_f32(vcgtq_f32(x, vdupq_n_f32(0.0f)), a, b)
/* the math layer's operations (vmath.inc) */
#define FUSE__V_NEG(x) vnegq_f32(x) /* the sign bit flipped, NaN included */
#define FUSE__V_ABS(x) vabsq_f32(x)
#define FUSE__V_COPYSIGN(x, s) vbslq_f32(vdupq_n_u32(0x80000000u), s, x)
#define FUSE__V_POW2(n) fuse__pow2_neon(n)
#define FUSE__V_LDEXP(x, n) fuse__ldexp_neon(x, n)
#define FUSE__V_FREXP(x, m, e) ((m) = fuse__frexp_neon(x, &(e)))
#define FUSE__V_LT(a, b) vcltq_f32(a, b)
#define FUSE__V_EQ(a, b) vceqq_f32(a, b)
#define FUSE__V_SELECT(m, a, b) vbslq_f32(m, a, b)
#if defined(__aarch64__)
#define FUSE__V_DIV(a, b) vdivq_f32(a, b)
#define FUSE__V_ROUND(x) vrndnq_f32(x) /* ties to even */
#define FUSE__V_SQRT(x) vsqrtq_f32(x)
#define FUSE__V_FLOOR(x) vrndmq_f32(x)
#define FUSE__V_CEIL(x) vrndpq_f32(x)
/* lane l (a constant once the loop over lanes is unrolled) of v, broadcast: the GEMM
   micro-kernel's multiply-adds take their input from a lane (fmla by element) */
#define FUSE__V_LANE(v, l) vdupq_n_f32((v)[l])
#else
#define FUSE__V_DIV(a, b) fuse__div_neon(a, b)
#define FUSE__V_ROUND(x)                                                                     \
  vsubq_f32(vaddq_f32(x, vdupq_n_f32(12582912.0f)), vdupq_n_f32(12582912.0f))
#define FUSE__V_SQRT(x) fuse__lanes_neon(x, 0)
#define FUSE__V_FLOOR(x) fuse__lanes_neon(x, 1)
#define FUSE__V_CEIL(x) fuse__lanes_neon(x, 2)
#endif
