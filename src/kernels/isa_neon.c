/* --------------------------------------------------------------- NEON instances -- */
/* Every kernel template on the NEON layer (vec_neon.h), once each (the GEMM family's once per
   tile), and this instruction set's rows of the kernel tables (table.c; see isa_avx512.c).
   aarch64 and armv7 share the layer but not the GEMM tiles (below). Compiled in where
   plan/cpu.c sets FUSE__NEON (aarch64, armv7 with NEON and FMA), else it has no rows. */
#ifdef FUSE__NEON
/* The NEON layer's in-register transpose of the 4 x 4 floats at x into y: pairs of rows
   interleaved (vtrn), then their halves combined. */
static inline void fuse__transpose_block_neon(const float *x, int64_t ldx, float *y, int64_t ldy) {
  float32x4x2_t t01 = vtrnq_f32(vld1q_f32(x), vld1q_f32(x + ldx)); /* a0 b0 a2 b2, a1 b1 a3 b3 */
  float32x4x2_t t23 = vtrnq_f32(vld1q_f32(x + 2 * ldx), vld1q_f32(x + 3 * ldx));
  vst1q_f32(y, vcombine_f32(vget_low_f32(t01.val[0]), vget_low_f32(t23.val[0])));
  vst1q_f32(y + ldy, vcombine_f32(vget_low_f32(t01.val[1]), vget_low_f32(t23.val[1])));
  vst1q_f32(y + 2 * ldy, vcombine_f32(vget_high_f32(t01.val[0]), vget_high_f32(t23.val[0])));
  vst1q_f32(y + 3 * ldy, vcombine_f32(vget_high_f32(t01.val[1]), vget_high_f32(t23.val[1])));
}
/* Three rows of x into pixels of three floats at y, 4 columns a step (vst3). Returns the
   columns done. */
static inline int64_t fuse__interleave3_neon(const float *x, int64_t ldx, float *y,
                                             int64_t cols) {
  int64_t j = 0;
  for (; j + 4 <= cols; j += 4) {
    float32x4x3_t t;
    t.val[0] = vld1q_f32(x + j), t.val[1] = vld1q_f32(x + ldx + j);
    t.val[2] = vld1q_f32(x + 2 * ldx + j);
    vst3q_f32(y + 3 * j, t);
  }
  return j;
}

#include "vec_neon.h"

/* the vector math and the epilogue routine (common.c): every family's kernels call them */
#include "vmath.inc"
#include "post.inc"

/* the GEMM family (gemm.c): the indirect-GEMM tiles, each also as name_blocks; the few-channel
   stem kernel's two tiles; the NCHW GEMM's packer. aarch64 has 32 vector registers and
   multiply-adds by lane: a tile's accumulators, its MR pixels' inputs (one register of four
   steps each) and NR / 4 weight vectors must fit. 8x8: 16 accumulators + 8 inputs + 2 weights =
   26; 4x16: 16 + 4 + 4 = 24; 8x4 is 8x8's narrow last column block. 16 accumulators cover the
   FMA latency of a core with four FMA pipes (4 cycles x 4). armv7 has 16 registers, only 4 of
   them kept across a call (q4-q7), and no multiply-add by lane (each input is loaded
   broadcast): 4x8 holds 8 accumulators + 2 weights + the inputs; 6x8 (12 + 2 + 1) left gcc 12
   three accumulators on the stack in the loop (the few-channel 4x8 keeps one there with gcc,
   none with clang). The epilogue calls no function while the accumulators are live (the vector
   math runs over the stored tile). 4x4 is 4x8's narrow block. */
#if defined(__aarch64__)
#define FUSE__GEMM_NAME fuse__igemm_8x8
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 2
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_8x8_blocks
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_4x16
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 4
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_4x16_blocks
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 4
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_8x4
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 1
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_8x4_blocks
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 1
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_8x8
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 2
#include "few_channels_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_8x4
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 1
#include "few_channels_tile.inc"
#else
#define FUSE__GEMM_NAME fuse__igemm_4x8
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 2
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_4x8_blocks
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_4x4
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 1
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_4x4_blocks
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 1
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_4x8
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 2
#include "few_channels_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_4x4
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 1
#include "few_channels_tile.inc"
#endif
#include "nchw_pack.inc"

/* depthwise conv (depthwise.c): SiLU and sigmoid on the registers; stride-2 blocks of eight
   pixels */
#define FUSE__DW_MATH_IN_REGISTERS 1 /* 32 registers, as AVX-512 */
#define FUSE__DW_PIX_S2 8
#include "depthwise_nhwc.inc"
#include "depthwise_nchw.inc"
#undef FUSE__DW_MATH_IN_REGISTERS
#undef FUSE__DW_PIX_S2

/* narrow-group conv (grouped.c); pool and element-wise rows, the transposes (pool_eltwise.c);
   element-wise chains and row kernels (chain_rows.c); the Winograd transforms, F(2,3),
   F(4,3) and F(6,3) (winograd.c) */
#include "grouped_rows.inc"
#define FUSE__V_TRANSPOSE_BLOCK(x, ldx, y, ldy) fuse__transpose_block_neon(x, ldx, y, ldy)
#define FUSE__V_INTERLEAVE3(x, ldx, y, cols) fuse__interleave3_neon(x, ldx, y, cols)
#include "pool.inc"
#include "eltwise.inc"
#include "transpose.inc"
#undef FUSE__V_TRANSPOSE_BLOCK
#undef FUSE__V_INTERLEAVE3
#include "chain.inc"
#include "matmul_rows.inc"
#include "winograd_sizes.inc"
#include "vec_end.h"

/* NEON's rows of the kernel tables (table.c), in the order the picks read them */
#if defined(__aarch64__)
#define FUSE__NEON_IGEMM_ROWS                                                                     \
    {FUSE_ISA_NEON, 8, 8, 100, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_8x8_neon),                 \
     FUSE__KERNEL_OF(NCHW_GEMM, fuse__nchw_pack_neon),                                            \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_8x8_blocks_neon)},                                   \
    {FUSE_ISA_NEON, 4, 16, 100, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x16_neon),               \
     FUSE__KERNEL_OF(NCHW_GEMM, fuse__nchw_pack_neon),                                            \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x16_blocks_neon)},                                  \
    {FUSE_ISA_NEON, 8, 4, 75, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_8x4_neon), NULL,            \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_8x4_blocks_neon)},
#define FUSE__NEON_FEW_CHANNELS_ROWS                                                              \
    {FUSE_ISA_NEON, 8, 8, 2, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_8x8_neon)},         \
    {FUSE_ISA_NEON, 8, 4, 1, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_8x4_neon)},
#else
#define FUSE__NEON_IGEMM_ROWS                                                                     \
    {FUSE_ISA_NEON, 4, 8, 100, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x8_neon),                 \
     FUSE__KERNEL_OF(NCHW_GEMM, fuse__nchw_pack_neon),                                            \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x8_blocks_neon)},                                   \
    {FUSE_ISA_NEON, 4, 4, 75, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x4_neon), NULL,            \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x4_blocks_neon)},
#define FUSE__NEON_FEW_CHANNELS_ROWS                                                              \
    {FUSE_ISA_NEON, 4, 8, 2, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_4x8_neon)},         \
    {FUSE_ISA_NEON, 4, 4, 1, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_4x4_neon)},
#endif
#define FUSE__NEON_GROUPED_ROWS                                                                   \
    {FUSE_ISA_NEON, 4, FUSE__KERNEL_OF(GROUPED, fuse__grouped_neon)},
#define FUSE__NEON_ISA_OPS_ROWS                                                                   \
    {FUSE_ISA_NEON, FUSE__KERNEL_OF(DW_NHWC, fuse__dw_neon),                                      \
     FUSE__KERNEL_OF(DW_NCHW, fuse__dwc_neon),                                                    \
     FUSE__KERNEL_OF(FEW_CHANNELS, fuse__dwc_row_neon), FUSE__KERNEL_OF(POOL, fuse__pool_neon),   \
     FUSE__KERNEL_OF(ELTWISE, fuse__elt_neon)},
#define FUSE__NEON_ROW_OPS_ROWS                                                                   \
    {FUSE_ISA_NEON, FUSE__KERNEL_OF(CHAIN, fuse__chain_rows_neon),                                \
     FUSE__KERNEL_OF(ROWS, fuse__row_sum_neon), FUSE__KERNEL_OF(ROWS, fuse__row_max_neon),        \
     FUSE__KERNEL_OF(ROWS, fuse__softmax_row_neon), FUSE__KERNEL_OF(ROWS, fuse__norm_row_neon),   \
     FUSE__KERNEL_OF(ROWS, fuse__col_sum_neon),                                                   \
     FUSE__KERNEL_OF(MATMUL_ROWS, fuse__matmul_rows_neon)},
#define FUSE__NEON_WINO_ROWS                                                                      \
    {FUSE_ISA_NEON, 2, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input2_neon),                         \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output2_neon)},                                         \
    {FUSE_ISA_NEON, 4, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input4_neon),                         \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output4_neon)},                                         \
    {FUSE_ISA_NEON, 6, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input6_neon),                         \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output6_neon)},
#else /* not compiled in: no rows */
#define FUSE__NEON_IGEMM_ROWS
#define FUSE__NEON_FEW_CHANNELS_ROWS
#define FUSE__NEON_GROUPED_ROWS
#define FUSE__NEON_ISA_OPS_ROWS
#define FUSE__NEON_ROW_OPS_ROWS
#define FUSE__NEON_WINO_ROWS
#endif
