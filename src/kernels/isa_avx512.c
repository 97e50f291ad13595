/* ------------------------------------------------------------ AVX-512 instances -- */
/* Every kernel template on the AVX-512 layer (vec_avx512.h), once each (the GEMM family's once
   per tile); one such instance file per instruction set (isa_avx512.c, isa_avx2.c,
   isa_neon.c, isa_scalar.c). What the instances of a family share (argument structs, function
   types, helpers) is in its family file (gemm.c, depthwise.c, ...), which comes before; the
   kernel tables (table.c) come after, the drivers are in run/. Compiled out with
   FUSE_NO_AVX512 or without SIMD. */
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
#endif
