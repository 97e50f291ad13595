/* --------------------------------------------------------------- AVX2 instances -- */
/* Every kernel template on the AVX2 + FMA layer (vec_avx2.h), once each (the GEMM family's once
   per tile), and this instruction set's rows of the kernel tables (table.c; see
   isa_avx512.c). The transposes here serve the AVX-512 CPUs too. Compiled out with
   FUSE_NO_AVX2 or without SIMD: then it has no rows. */
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

/* the vector math and the epilogue routine (common.c): every family's kernels call them */
#include "vmath.inc"
#include "post.inc"

/* the GEMM family (gemm.c): the indirect-GEMM tiles, each also as name_blocks; the
   few-channel stem kernel's two tiles; the NCHW GEMM's packer */
#define FUSE__GEMM_NAME fuse__igemm_6x16
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 2
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_6x16_blocks
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_4x24
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 3
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_4x24_blocks
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 3
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_12x8
#define FUSE__GEMM_MR 12
#define FUSE__GEMM_NV 1
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_12x8_blocks
#define FUSE__GEMM_MR 12
#define FUSE__GEMM_NV 1
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_6x16
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 2
#include "few_channels_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_6x8
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 1
#include "few_channels_tile.inc"
#include "nchw_pack.inc"

/* depthwise conv (depthwise.c). SiLU and sigmoid after the row: with 16 vector registers the
   math's temporaries spill beside the eight accumulators, and the row pass was measured faster
   (bench/layers --isa avx2). Stride-2 blocks of four pixels: blocks of eight (17 input pixels
   a kernel row) left gcc 12 spilling accumulators and the pixels' offsets in the loop; four:
   96 channels at 112x112, 3x3, 1 thread, five alternating runs 0.24 -> 0.21 ms (six: 0.31; at
   stride 1 four and six were 8 % slower). */
#define FUSE__DW_MATH_IN_REGISTERS 0
#define FUSE__DW_PIX_S2 4 /* see above */
#include "depthwise_nhwc.inc"
#include "depthwise_nchw.inc"
#undef FUSE__DW_MATH_IN_REGISTERS
#undef FUSE__DW_PIX_S2

/* narrow-group conv (grouped.c); pool and element-wise rows, the transposes (pool_eltwise.c);
   element-wise chains and row kernels (chain_rows.c); the Winograd transforms, F(2,3),
   F(4,3) and F(6,3) (winograd.c) */
#include "grouped_rows.inc"
#define FUSE__V_TRANSPOSE_BLOCK(x, ldx, y, ldy) fuse__transpose_block_avx2(x, ldx, y, ldy)
#define FUSE__V_INTERLEAVE3(x, ldx, y, cols) fuse__interleave3_avx2(x, ldx, y, cols)
#include "pool.inc"
#include "eltwise.inc"
#include "transpose.inc"
#undef FUSE__V_TRANSPOSE_BLOCK
#undef FUSE__V_INTERLEAVE3
#include "chain.inc"
#include "matmul_rows.inc"
#include "winograd_sizes.inc"
#include "vec_end.h"

/* AVX2's rows of the kernel tables (table.c), in the order the picks read them */
#define FUSE__AVX2_IGEMM_ROWS                                                                     \
    {FUSE_ISA_AVX2, 6, 16, 100, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_6x16_avx2),               \
     FUSE__KERNEL_OF(NCHW_GEMM, fuse__nchw_pack_avx2),                                            \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_6x16_blocks_avx2)},                                  \
    {FUSE_ISA_AVX2, 4, 24, 95, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x24_avx2), NULL,          \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x24_blocks_avx2)},                                  \
    {FUSE_ISA_AVX2, 12, 8, 75, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_12x8_avx2), NULL,          \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_12x8_blocks_avx2)},
#define FUSE__AVX2_FEW_CHANNELS_ROWS                                                              \
    {FUSE_ISA_AVX2, 6, 16, 2, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_6x16_avx2)},       \
    {FUSE_ISA_AVX2, 6, 8, 1, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_6x8_avx2)},
#define FUSE__AVX2_GROUPED_ROWS                                                                   \
    {FUSE_ISA_AVX2, 8, FUSE__KERNEL_OF(GROUPED, fuse__grouped_avx2)},
#define FUSE__AVX2_ISA_OPS_ROWS                                                                   \
    {FUSE_ISA_AVX2, FUSE__KERNEL_OF(DW_NHWC, fuse__dw_avx2),                                      \
     FUSE__KERNEL_OF(DW_NCHW, fuse__dwc_avx2),                                                    \
     FUSE__KERNEL_OF(FEW_CHANNELS, fuse__dwc_row_avx2), FUSE__KERNEL_OF(POOL, fuse__pool_avx2),   \
     FUSE__KERNEL_OF(ELTWISE, fuse__elt_avx2)},
#define FUSE__AVX2_ROW_OPS_ROWS                                                                   \
    {FUSE_ISA_AVX2, FUSE__KERNEL_OF(CHAIN, fuse__chain_rows_avx2),                                \
     FUSE__KERNEL_OF(ROWS, fuse__row_sum_avx2), FUSE__KERNEL_OF(ROWS, fuse__row_max_avx2),        \
     FUSE__KERNEL_OF(ROWS, fuse__softmax_row_avx2), FUSE__KERNEL_OF(ROWS, fuse__norm_row_avx2),   \
     FUSE__KERNEL_OF(ROWS, fuse__col_sum_avx2),                                                   \
     FUSE__KERNEL_OF(MATMUL_ROWS, fuse__matmul_rows_avx2)},
#define FUSE__AVX2_WINO_ROWS                                                                      \
    {FUSE_ISA_AVX2, 2, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input2_avx2),                         \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output2_avx2)},                                         \
    {FUSE_ISA_AVX2, 4, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input4_avx2),                         \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output4_avx2)},                                         \
    {FUSE_ISA_AVX2, 6, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input6_avx2),                         \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output6_avx2)},
#else /* compiled out: no rows */
#define FUSE__AVX2_IGEMM_ROWS
#define FUSE__AVX2_FEW_CHANNELS_ROWS
#define FUSE__AVX2_GROUPED_ROWS
#define FUSE__AVX2_ISA_OPS_ROWS
#define FUSE__AVX2_ROW_OPS_ROWS
#define FUSE__AVX2_WINO_ROWS
#endif
