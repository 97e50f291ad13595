/* ------------------------------------------------------------- scalar instances -- */
/* Every kernel template on the scalar layer (vec_scalar.h), once each (the GEMM family's once
   per tile): the scalar twins, on every target, with the same packing and drivers as the SIMD
   instances (the fallback where no SIMD is compiled in, FUSE_ISA_SCALAR, and the SIMD
   instances' test oracle); and their rows of the kernel tables (table.c; see isa_avx512.c),
   the last of each ISA's. */
#include "vec_scalar.h"

/* the vector math and the epilogue routine (common.c): every family's kernels call them */
#include "vmath.inc"
#include "post.inc"

/* the GEMM family (gemm.c): the indirect-GEMM tiles (no name_blocks: the scalar twins' drivers
   call per column block, which keeps the Cortex-M text as it was); the few-channel stem
   kernel's two tiles; the NCHW GEMM's packer. A scalar tile's accumulators, its NR weights and
   the broadcast input must fit the scalar floating-point registers: 32 on aarch64 and on
   armhf's VFP (s0-s31). 4x4 holds 16 accumulators (21 registers in all), the widest square tile
   that fits; 4x2 is its narrow last column block (mixed column blocks, as 48 + 32 on AVX-512);
   8x2 has the same 16 accumulators for GEMMs of few columns. The few-channel kernel's two tiles
   are one and two pixels by 4 channels. (x86-64's 16 SSE registers spill on 4x4: scalar is only
   the test path there.) */
#define FUSE__GEMM_NAME fuse__igemm_4x4
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 4
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_4x2
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 2
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_8x2
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 2
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_4x2
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 2
#include "few_channels_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_4x1
#define FUSE__GEMM_MR 4
#define FUSE__GEMM_NV 1
#include "few_channels_tile.inc"
#include "nchw_pack.inc"

/* depthwise conv (depthwise.c) */
#define FUSE__DW_MATH_IN_REGISTERS 1
#define FUSE__DW_PIX_S2 8
#include "depthwise_nhwc.inc"
#include "depthwise_nchw.inc"
#undef FUSE__DW_MATH_IN_REGISTERS
#undef FUSE__DW_PIX_S2

/* narrow-group conv (grouped.c); the transposes, pool and element-wise rows
   (pool_eltwise.c); element-wise chains and row kernels (chain_rows.c); the Winograd
   transforms, F(2,3), F(4,3) and F(6,3) (winograd.c) */
#include "grouped_rows.inc"
#define FUSE__V_TRANSPOSE_BLOCK(x, ldx, y, ldy) (*(y) = *(x))
#include "transpose.inc"
#undef FUSE__V_TRANSPOSE_BLOCK
#include "pool.inc"
#include "eltwise.inc"
#include "chain.inc"
#include "matmul_rows.inc"
#include "winograd_sizes.inc"
#include "vec_end.h"

/* the scalar rows of the kernel tables (table.c), in the order the picks read them */
#define FUSE__SCALAR_IGEMM_ROWS                                                                   \
    {FUSE_ISA_SCALAR, 4, 4, 100, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x4_scalar),             \
     FUSE__KERNEL_OF(NCHW_GEMM, fuse__nchw_pack_scalar), NULL},                                   \
    {FUSE_ISA_SCALAR, 4, 2, 90, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_4x2_scalar), NULL,        \
     NULL},                                                                                       \
    {FUSE_ISA_SCALAR, 8, 2, 90, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_8x2_scalar), NULL,        \
     NULL},
#define FUSE__SCALAR_FEW_CHANNELS_ROWS                                                            \
    {FUSE_ISA_SCALAR, 4, 2, 2, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_4x2_scalar)},     \
    {FUSE_ISA_SCALAR, 4, 1, 1, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_4x1_scalar)},
#define FUSE__SCALAR_GROUPED_ROWS                                                                 \
    {FUSE_ISA_SCALAR, 1, FUSE__KERNEL_OF(GROUPED, fuse__grouped_scalar)},
#define FUSE__SCALAR_ISA_OPS_ROWS                                                                 \
    {FUSE_ISA_SCALAR, FUSE__KERNEL_OF(DW_NHWC, fuse__dw_scalar),                                  \
     FUSE__KERNEL_OF(DW_NCHW, fuse__dwc_scalar),                                                  \
     FUSE__KERNEL_OF(FEW_CHANNELS, fuse__dwc_row_scalar),                                         \
     FUSE__KERNEL_OF(POOL, fuse__pool_scalar), FUSE__KERNEL_OF(ELTWISE, fuse__elt_scalar)},
#define FUSE__SCALAR_ROW_OPS_ROWS                                                                 \
    {FUSE_ISA_SCALAR, FUSE__KERNEL_OF(CHAIN, fuse__chain_rows_scalar),                            \
     FUSE__KERNEL_OF(ROWS, fuse__row_sum_scalar), FUSE__KERNEL_OF(ROWS, fuse__row_max_scalar),    \
     FUSE__KERNEL_OF(ROWS, fuse__softmax_row_scalar),                                             \
     FUSE__KERNEL_OF(ROWS, fuse__norm_row_scalar), FUSE__KERNEL_OF(ROWS, fuse__col_sum_scalar),   \
     FUSE__KERNEL_OF(MATMUL_ROWS, fuse__matmul_rows_scalar)},
#define FUSE__SCALAR_WINO_ROWS                                                                    \
    {FUSE_ISA_SCALAR, 2, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input2_scalar),                     \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output2_scalar)},                                       \
    {FUSE_ISA_SCALAR, 4, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input4_scalar),                     \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output4_scalar)},                                       \
    {FUSE_ISA_SCALAR, 6, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input6_scalar),                     \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output6_scalar)},
