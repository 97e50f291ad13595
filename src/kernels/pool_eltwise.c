/* ------------------------------------------- pool, element-wise, transpose kernels -- */
/* Plain-C templates instantiated once per vector layer by the instance files (isa_avx512.c,
   ...): fuse__pool_* (pool.inc), fuse__elt_* (eltwise.inc), fuse__transpose_avx2 / _neon /
   _scalar (transpose.inc: the AVX-512 CPUs take the AVX2 one, whose 8 x 8 blocks are as fast
   as the conversions need; fuse__transpose_isa in table.c picks). */
struct fuse__pool_args {
  const float *x;
  float *y;
  const fuse_pool2d_attrs *a;
  int is_max;
  int64_t C, H, W, OH, OW;
  int64_t ldy; /* floats between output pixels: C, or a concat's channels (plan/in_place.c) */
  void (*fn)(const fuse__pool_args *d, int64_t r0, int64_t r1);
};

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
