/* ------------------------------------------------------------ AVX-512 instances -- */
/* Every kernel template on the AVX-512 layer (vec_avx512.h), once each (the GEMM family's once
   per tile), and this instruction set's rows of the kernel tables, which table.c puts
   together in the order of the instance files (isa_avx512.c, isa_avx2.c, isa_neon.c,
   isa_scalar.c). What the instances of a family share (argument structs, function types,
   helpers) is in its family file (gemm.c, depthwise.c, ...), which comes before; the drivers
   are in run/. Compiled out with FUSE_NO_AVX512 or without SIMD: then it has no rows. */
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
#include "vec_avx512.h"

/* the vector math and the epilogue routine (common.c): every family's kernels call them */
#include "vmath.inc"
#include "post.inc"

/* the GEMM family (gemm.c): the indirect-GEMM tiles, each also as name_blocks; the
   few-channel stem kernel's two tiles; the NCHW GEMM's packer */
#define FUSE__GEMM_NAME fuse__igemm_6x64
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 4
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_6x64_blocks
#define FUSE__GEMM_MR 6
#define FUSE__GEMM_NV 4
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_8x48
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 3
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_8x48_blocks
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 3
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_7x48
#define FUSE__GEMM_MR 7
#define FUSE__GEMM_NV 3
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_7x48_blocks
#define FUSE__GEMM_MR 7
#define FUSE__GEMM_NV 3
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_12x32
#define FUSE__GEMM_MR 12
#define FUSE__GEMM_NV 2
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_12x32_blocks
#define FUSE__GEMM_MR 12
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_7x32
#define FUSE__GEMM_MR 7
#define FUSE__GEMM_NV 2
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_7x32_blocks
#define FUSE__GEMM_MR 7
#define FUSE__GEMM_NV 2
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_12x16
#define FUSE__GEMM_MR 12
#define FUSE__GEMM_NV 1
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__igemm_12x16_blocks
#define FUSE__GEMM_MR 12
#define FUSE__GEMM_NV 1
#define FUSE__GEMM_BLOCKS
#include "gemm_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_8x32
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 2
#include "few_channels_tile.inc"
#define FUSE__GEMM_NAME fuse__few_channels_8x16
#define FUSE__GEMM_MR 8
#define FUSE__GEMM_NV 1
#include "few_channels_tile.inc"
#include "nchw_pack.inc"

/* depthwise conv (depthwise.c): SiLU and sigmoid on the registers (32 vector registers: the
   math's temporaries fit beside the eight accumulators, faster than the row pass); stride-2
   blocks of eight pixels */
#define FUSE__DW_MATH_IN_REGISTERS 1
#define FUSE__DW_PIX_S2 8
#include "depthwise_nhwc.inc"
#include "depthwise_nchw.inc"
#undef FUSE__DW_MATH_IN_REGISTERS
#undef FUSE__DW_PIX_S2

/* narrow-group conv (grouped.c); pool and element-wise rows (pool_eltwise.c: the AVX-512 CPUs
   take AVX2's transposes); element-wise chains and row kernels (chain_rows.c); the Winograd
   transforms, F(2,3), F(4,3) and F(6,3) (winograd.c) */
#include "grouped_rows.inc"
#include "pool.inc"
#include "eltwise.inc"
#include "chain.inc"
#include "matmul_rows.inc"
#include "winograd_sizes.inc"
#include "vec_end.h"

/* AVX-512's rows of the kernel tables (table.c), in the order the picks read them */
#define FUSE__AVX512_IGEMM_ROWS                                                                   \
    {FUSE_ISA_AVX512, 6, 64, 100, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_6x64_avx512),           \
     FUSE__KERNEL_OF(NCHW_GEMM, fuse__nchw_pack_avx512),                                          \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_6x64_blocks_avx512)},                                \
    {FUSE_ISA_AVX512, 8, 48, 100, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_8x48_avx512),           \
     FUSE__KERNEL_OF(NCHW_GEMM, fuse__nchw_pack_avx512),                                          \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_8x48_blocks_avx512)},                                \
    {FUSE_ISA_AVX512, 7, 48, 100, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_7x48_avx512),           \
     FUSE__KERNEL_OF(NCHW_GEMM, fuse__nchw_pack_avx512),                                          \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_7x48_blocks_avx512)},                                \
    {FUSE_ISA_AVX512, 12, 32, 97, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_12x32_avx512), NULL,    \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_12x32_blocks_avx512)},                               \
    {FUSE_ISA_AVX512, 7, 32, 90, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_7x32_avx512), NULL,      \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_7x32_blocks_avx512)},                                \
    {FUSE_ISA_AVX512, 12, 16, 70, FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_12x16_avx512), NULL,    \
     FUSE__KERNEL_OF(GEMM_TILES, fuse__igemm_12x16_blocks_avx512)},
#define FUSE__AVX512_FEW_CHANNELS_ROWS                                                            \
    {FUSE_ISA_AVX512, 8, 32, 2, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_8x32_avx512)},   \
    {FUSE_ISA_AVX512, 8, 16, 1, FUSE__KERNEL_OF(FEW_CHANNELS, fuse__few_channels_8x16_avx512)},
#define FUSE__AVX512_GROUPED_ROWS                                                                 \
    {FUSE_ISA_AVX512, 16, FUSE__KERNEL_OF(GROUPED, fuse__grouped_avx512)},
#define FUSE__AVX512_ISA_OPS_ROWS                                                                 \
    {FUSE_ISA_AVX512, FUSE__KERNEL_OF(DW_NHWC, fuse__dw_avx512),                                  \
     FUSE__KERNEL_OF(DW_NCHW, fuse__dwc_avx512),                                                  \
     FUSE__KERNEL_OF(FEW_CHANNELS, fuse__dwc_row_avx512),                                         \
     FUSE__KERNEL_OF(POOL, fuse__pool_avx512), FUSE__KERNEL_OF(ELTWISE, fuse__elt_avx512)},
#define FUSE__AVX512_ROW_OPS_ROWS                                                                 \
    {FUSE_ISA_AVX512, FUSE__KERNEL_OF(CHAIN, fuse__chain_rows_avx512),                            \
     FUSE__KERNEL_OF(ROWS, fuse__row_sum_avx512), FUSE__KERNEL_OF(ROWS, fuse__row_max_avx512),    \
     FUSE__KERNEL_OF(ROWS, fuse__softmax_row_avx512),                                             \
     FUSE__KERNEL_OF(ROWS, fuse__norm_row_avx512), FUSE__KERNEL_OF(ROWS, fuse__col_sum_avx512),   \
     FUSE__KERNEL_OF(MATMUL_ROWS, fuse__matmul_rows_avx512)},
#define FUSE__AVX512_WINO_ROWS                                                                    \
    {FUSE_ISA_AVX512, 2, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input2_avx512),                     \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output2_avx512)},                                       \
    {FUSE_ISA_AVX512, 4, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input4_avx512),                     \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output4_avx512)},                                       \
    {FUSE_ISA_AVX512, 6, FUSE__KERNEL_OF(WINOGRAD, fuse__wino_input6_avx512),                     \
     FUSE__KERNEL_OF(WINOGRAD, fuse__wino_output6_avx512)},
#else /* compiled out: no rows */
#define FUSE__AVX512_IGEMM_ROWS
#define FUSE__AVX512_FEW_CHANNELS_ROWS
#define FUSE__AVX512_GROUPED_ROWS
#define FUSE__AVX512_ISA_OPS_ROWS
#define FUSE__AVX512_ROW_OPS_ROWS
#define FUSE__AVX512_WINO_ROWS
#endif
