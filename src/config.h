/* ----------------------------------------------------- what this build leaves out -- */
/* The configuration macros that leave pieces of the runtime out of a build (README:
   "Leaving out what plans do not use"), as the constants the code tests. fuse_run
   --emit-config (fuse_plan_write_config, plan/needs.c) writes the ones a set of plans
   does not need; fuse_plan_load refuses a plan that needs one, naming it; with none defined
   the build has everything. Three kinds, each piece one macro:

     FUSE_NO_RUN_<KIND>     a kind of step (fuse__run_kind, graph/ops.c: the row's `run`), its
                            reference kernel and what only it calls: FUSE_NO_RUN_RESIZE, ...
     FUSE_NO_KERNEL_<FAMILY> a family of micro-kernels and its driver, on every instruction set:
                            REFERENCE (conv2d / matmul on the reference loops), IGEMM (the NHWC
                            GEMM: conv2d, matmul), NCHW_GEMM, FEW_CHANNELS, DW_NHWC, DW_NCHW,
                            GROUPED, WINOGRAD, POOL (NHWC pools), ELTWISE (element-wise rows),
                            CHAIN (chain steps' rows), ROWS (softmax, norm, reduction rows),
                            MATMUL_ROWS (the matmul of two run-time operands); of the integer
                            steps: QDIRECT (qconv2d's and qmatmul's direct loops: the
                            reference plans, grouped convs), QTILES (their pairs / quads tiles
                            and the driver), QDW (qconv2d's depthwise pixel kernels), QPOOL
                            (qmax_pool2d), QMATMUL (qmatmul's step: its rows on the QDIRECT /
                            QTILES kernels), QGLOBAL_AVG_POOL (qglobal_avg_pool2d: its sums
                            and requantization)
     FUSE_NO_POST_<KIND>    a fused post-op kind (fuse_post_kind, api.h) in every kernel's
                            epilogue, with the vector math only it calls: FUSE_NO_POST_GELU, ...

   The code keeps compiling every piece (so no configuration falls behind) and tests these
   constants where it refers to one: a table row's function becomes NULL, a case returns early;
   the compiler then drops what nothing refers to (with -ffunction-sections and
   -Wl,--gc-sections the linker too). The instruction sets have their own macros
   (FUSE_NO_AVX512, FUSE_NO_AVX2, FUSE_NO_NEON), which compile their instances out, and
   FUSE_NO_VNNI has the integer steps ignore the CPU's VNNI (AVX-512 VNNI, AVX-VNNI) and run
   what an AVX2 CPU without it runs. */

/* a table's function, or NULL when its piece is left out */
#define FUSE__IF(has, fn) ((has) ? (fn) : 0)

/* backends (fuse_dnnl.h) run steps of compiled plans only: a blob has none */
#ifdef FUSE_RUNTIME_ONLY
#define FUSE__HAS_BACKENDS 0
#else
#define FUSE__HAS_BACKENDS 1
#endif

/* ---- kinds of step: FUSE__HAS_RUN(FUSE__RUN_CONV2D) */
#ifdef FUSE_NO_RUN_UNARY
#define FUSE__OUT_RUN_UNARY (1ul << FUSE__RUN_UNARY)
#else
#define FUSE__OUT_RUN_UNARY 0ul
#endif
#ifdef FUSE_NO_RUN_CONV2D
#define FUSE__OUT_RUN_CONV2D (1ul << FUSE__RUN_CONV2D)
#else
#define FUSE__OUT_RUN_CONV2D 0ul
#endif
#ifdef FUSE_NO_RUN_MATMUL
#define FUSE__OUT_RUN_MATMUL (1ul << FUSE__RUN_MATMUL)
#else
#define FUSE__OUT_RUN_MATMUL 0ul
#endif
#ifdef FUSE_NO_RUN_BINARY
#define FUSE__OUT_RUN_BINARY (1ul << FUSE__RUN_BINARY)
#else
#define FUSE__OUT_RUN_BINARY 0ul
#endif
#ifdef FUSE_NO_RUN_CONCAT
#define FUSE__OUT_RUN_CONCAT (1ul << FUSE__RUN_CONCAT)
#else
#define FUSE__OUT_RUN_CONCAT 0ul
#endif
#ifdef FUSE_NO_RUN_TRANSPOSE
#define FUSE__OUT_RUN_TRANSPOSE (1ul << FUSE__RUN_TRANSPOSE)
#else
#define FUSE__OUT_RUN_TRANSPOSE 0ul
#endif
#ifdef FUSE_NO_RUN_SOFTMAX
#define FUSE__OUT_RUN_SOFTMAX (1ul << FUSE__RUN_SOFTMAX)
#else
#define FUSE__OUT_RUN_SOFTMAX 0ul
#endif
#ifdef FUSE_NO_RUN_BATCH_NORM
#define FUSE__OUT_RUN_BATCH_NORM (1ul << FUSE__RUN_BATCH_NORM)
#else
#define FUSE__OUT_RUN_BATCH_NORM 0ul
#endif
#ifdef FUSE_NO_RUN_POOL
#define FUSE__OUT_RUN_POOL (1ul << FUSE__RUN_POOL)
#else
#define FUSE__OUT_RUN_POOL 0ul
#endif
#ifdef FUSE_NO_RUN_GLOBAL_AVG_POOL
#define FUSE__OUT_RUN_GLOBAL_AVG_POOL (1ul << FUSE__RUN_GLOBAL_AVG_POOL)
#else
#define FUSE__OUT_RUN_GLOBAL_AVG_POOL 0ul
#endif
#ifdef FUSE_NO_RUN_LAYOUT
#define FUSE__OUT_RUN_LAYOUT (1ul << FUSE__RUN_LAYOUT)
#else
#define FUSE__OUT_RUN_LAYOUT 0ul
#endif
#ifdef FUSE_NO_RUN_CHAIN
#define FUSE__OUT_RUN_CHAIN (1ul << FUSE__RUN_CHAIN)
#else
#define FUSE__OUT_RUN_CHAIN 0ul
#endif
#ifdef FUSE_NO_RUN_MATH_UNARY
#define FUSE__OUT_RUN_MATH_UNARY (1ul << FUSE__RUN_MATH_UNARY)
#else
#define FUSE__OUT_RUN_MATH_UNARY 0ul
#endif
#ifdef FUSE_NO_RUN_MATH_BROADCAST
#define FUSE__OUT_RUN_MATH_BROADCAST (1ul << FUSE__RUN_MATH_BROADCAST)
#else
#define FUSE__OUT_RUN_MATH_BROADCAST 0ul
#endif
#ifdef FUSE_NO_RUN_GATHER
#define FUSE__OUT_RUN_GATHER (1ul << FUSE__RUN_GATHER)
#else
#define FUSE__OUT_RUN_GATHER 0ul
#endif
#ifdef FUSE_NO_RUN_EXPAND
#define FUSE__OUT_RUN_EXPAND (1ul << FUSE__RUN_EXPAND)
#else
#define FUSE__OUT_RUN_EXPAND 0ul
#endif
#ifdef FUSE_NO_RUN_TILE
#define FUSE__OUT_RUN_TILE (1ul << FUSE__RUN_TILE)
#else
#define FUSE__OUT_RUN_TILE 0ul
#endif
#ifdef FUSE_NO_RUN_PAD
#define FUSE__OUT_RUN_PAD (1ul << FUSE__RUN_PAD)
#else
#define FUSE__OUT_RUN_PAD 0ul
#endif
#ifdef FUSE_NO_RUN_RESIZE
#define FUSE__OUT_RUN_RESIZE (1ul << FUSE__RUN_RESIZE)
#else
#define FUSE__OUT_RUN_RESIZE 0ul
#endif
#ifdef FUSE_NO_RUN_REDUCE
#define FUSE__OUT_RUN_REDUCE (1ul << FUSE__RUN_REDUCE)
#else
#define FUSE__OUT_RUN_REDUCE 0ul
#endif
#ifdef FUSE_NO_RUN_LOG_SOFTMAX
#define FUSE__OUT_RUN_LOG_SOFTMAX (1ul << FUSE__RUN_LOG_SOFTMAX)
#else
#define FUSE__OUT_RUN_LOG_SOFTMAX 0ul
#endif
#ifdef FUSE_NO_RUN_NORM
#define FUSE__OUT_RUN_NORM (1ul << FUSE__RUN_NORM)
#else
#define FUSE__OUT_RUN_NORM 0ul
#endif
#ifdef FUSE_NO_RUN_SLICE
#define FUSE__OUT_RUN_SLICE (1ul << FUSE__RUN_SLICE)
#else
#define FUSE__OUT_RUN_SLICE 0ul
#endif
#ifdef FUSE_NO_RUN_CONV_TRANSPOSE2D
#define FUSE__OUT_RUN_CONV_TRANSPOSE2D (1ul << FUSE__RUN_CONV_TRANSPOSE2D)
#else
#define FUSE__OUT_RUN_CONV_TRANSPOSE2D 0ul
#endif
#ifdef FUSE_NO_RUN_QUANT
#define FUSE__OUT_RUN_QUANT (1ul << FUSE__RUN_QUANT)
#else
#define FUSE__OUT_RUN_QUANT 0ul
#endif
#ifdef FUSE_NO_RUN_QINT
#define FUSE__OUT_RUN_QINT (1ul << FUSE__RUN_QINT)
#else
#define FUSE__OUT_RUN_QINT 0ul
#endif
/* a kind added to fuse__run_kind gets its macro above and its term here */
#define FUSE__RUNS_OUT                                                                        \
  (FUSE__OUT_RUN_UNARY | FUSE__OUT_RUN_CONV2D | FUSE__OUT_RUN_MATMUL | FUSE__OUT_RUN_BINARY |    \
   FUSE__OUT_RUN_CONCAT | FUSE__OUT_RUN_TRANSPOSE | FUSE__OUT_RUN_SOFTMAX |                     \
   FUSE__OUT_RUN_BATCH_NORM | FUSE__OUT_RUN_POOL | FUSE__OUT_RUN_GLOBAL_AVG_POOL |              \
   FUSE__OUT_RUN_LAYOUT | FUSE__OUT_RUN_CHAIN | FUSE__OUT_RUN_MATH_UNARY |                      \
   FUSE__OUT_RUN_MATH_BROADCAST | FUSE__OUT_RUN_GATHER | FUSE__OUT_RUN_EXPAND |                 \
   FUSE__OUT_RUN_TILE | FUSE__OUT_RUN_PAD | FUSE__OUT_RUN_RESIZE | FUSE__OUT_RUN_REDUCE |       \
   FUSE__OUT_RUN_LOG_SOFTMAX | FUSE__OUT_RUN_NORM | FUSE__OUT_RUN_SLICE |                       \
   FUSE__OUT_RUN_CONV_TRANSPOSE2D | FUSE__OUT_RUN_QUANT | FUSE__OUT_RUN_QINT)
#define FUSE__HAS_RUN(kind) (!(FUSE__RUNS_OUT >> (kind) & 1ul))
typedef char fuse__run_kinds_fit_a_mask[FUSE__RUN_COUNT <= 32 ? 1 : -1];

/* ---- families of micro-kernels: FUSE__HAS_KERNEL(IGEMM) (0 or 1, for #if too) */
#ifdef FUSE_NO_KERNEL_REFERENCE
#define FUSE__HAS_KERNEL_REFERENCE 0
#else
#define FUSE__HAS_KERNEL_REFERENCE 1
#endif
#ifdef FUSE_NO_KERNEL_IGEMM
#define FUSE__HAS_KERNEL_IGEMM 0
#else
#define FUSE__HAS_KERNEL_IGEMM 1
#endif
#ifdef FUSE_NO_KERNEL_NCHW_GEMM
#define FUSE__HAS_KERNEL_NCHW_GEMM 0
#else
#define FUSE__HAS_KERNEL_NCHW_GEMM 1
#endif
#ifdef FUSE_NO_KERNEL_FEW_CHANNELS
#define FUSE__HAS_KERNEL_FEW_CHANNELS 0
#else
#define FUSE__HAS_KERNEL_FEW_CHANNELS 1
#endif
#ifdef FUSE_NO_KERNEL_DW_NHWC
#define FUSE__HAS_KERNEL_DW_NHWC 0
#else
#define FUSE__HAS_KERNEL_DW_NHWC 1
#endif
#ifdef FUSE_NO_KERNEL_DW_NCHW
#define FUSE__HAS_KERNEL_DW_NCHW 0
#else
#define FUSE__HAS_KERNEL_DW_NCHW 1
#endif
#ifdef FUSE_NO_KERNEL_GROUPED
#define FUSE__HAS_KERNEL_GROUPED 0
#else
#define FUSE__HAS_KERNEL_GROUPED 1
#endif
#ifdef FUSE_NO_KERNEL_WINOGRAD
#define FUSE__HAS_KERNEL_WINOGRAD 0
#else
#define FUSE__HAS_KERNEL_WINOGRAD 1
#endif
#ifdef FUSE_NO_KERNEL_POOL
#define FUSE__HAS_KERNEL_POOL 0
#else
#define FUSE__HAS_KERNEL_POOL 1
#endif
#ifdef FUSE_NO_KERNEL_ELTWISE
#define FUSE__HAS_KERNEL_ELTWISE 0
#else
#define FUSE__HAS_KERNEL_ELTWISE 1
#endif
#ifdef FUSE_NO_KERNEL_CHAIN
#define FUSE__HAS_KERNEL_CHAIN 0
#else
#define FUSE__HAS_KERNEL_CHAIN 1
#endif
#ifdef FUSE_NO_KERNEL_ROWS
#define FUSE__HAS_KERNEL_ROWS 0
#else
#define FUSE__HAS_KERNEL_ROWS 1
#endif
#ifdef FUSE_NO_KERNEL_MATMUL_ROWS
#define FUSE__HAS_KERNEL_MATMUL_ROWS 0
#else
#define FUSE__HAS_KERNEL_MATMUL_ROWS 1
#endif
#ifdef FUSE_NO_KERNEL_QDIRECT
#define FUSE__HAS_KERNEL_QDIRECT 0
#else
#define FUSE__HAS_KERNEL_QDIRECT 1
#endif
#ifdef FUSE_NO_KERNEL_QTILES
#define FUSE__HAS_KERNEL_QTILES 0
#else
#define FUSE__HAS_KERNEL_QTILES 1
#endif
#ifdef FUSE_NO_KERNEL_QDW
#define FUSE__HAS_KERNEL_QDW 0
#else
#define FUSE__HAS_KERNEL_QDW 1
#endif
#ifdef FUSE_NO_KERNEL_QPOOL
#define FUSE__HAS_KERNEL_QPOOL 0
#else
#define FUSE__HAS_KERNEL_QPOOL 1
#endif
#ifdef FUSE_NO_KERNEL_QMATMUL
#define FUSE__HAS_KERNEL_QMATMUL 0
#else
#define FUSE__HAS_KERNEL_QMATMUL 1
#endif
#ifdef FUSE_NO_KERNEL_QGLOBAL_AVG_POOL
#define FUSE__HAS_KERNEL_QGLOBAL_AVG_POOL 0
#else
#define FUSE__HAS_KERNEL_QGLOBAL_AVG_POOL 1
#endif
/* the GEMM micro-kernels serve the NHWC and NCHW GEMMs and Winograd's position GEMMs */
#define FUSE__HAS_KERNEL_GEMM_TILES                                                           \
  (FUSE__HAS_KERNEL_IGEMM || FUSE__HAS_KERNEL_NCHW_GEMM || FUSE__HAS_KERNEL_WINOGRAD)
#define FUSE__HAS_KERNEL(family) FUSE__HAS_KERNEL_##family
/* a kernel table's function of a family (the instance files' rows), NULL when it is left out */
#define FUSE__KERNEL_OF(family, fn) FUSE__IF(FUSE__HAS_KERNEL_##family, fn)

/* The families as the build check (run/build_check.c) counts them: one bit each. */
enum {
  FUSE__FAMILY_REFERENCE,
  FUSE__FAMILY_IGEMM,
  FUSE__FAMILY_NCHW_GEMM,
  FUSE__FAMILY_FEW_CHANNELS,
  FUSE__FAMILY_DW_NHWC,
  FUSE__FAMILY_DW_NCHW,
  FUSE__FAMILY_GROUPED,
  FUSE__FAMILY_WINOGRAD,
  FUSE__FAMILY_POOL,
  FUSE__FAMILY_ELTWISE,
  FUSE__FAMILY_CHAIN,
  FUSE__FAMILY_ROWS,
  FUSE__FAMILY_MATMUL_ROWS,
  FUSE__FAMILY_QDIRECT,
  FUSE__FAMILY_QTILES,
  FUSE__FAMILY_QDW,
  FUSE__FAMILY_QPOOL,
  FUSE__FAMILY_QMATMUL,
  FUSE__FAMILY_QGLOBAL_AVG_POOL,
  FUSE__FAMILY_COUNT
};
#define FUSE__FAMILIES_BUILT                                                                  \
  ((unsigned long)FUSE__HAS_KERNEL_REFERENCE << FUSE__FAMILY_REFERENCE |                      \
   (unsigned long)FUSE__HAS_KERNEL_IGEMM << FUSE__FAMILY_IGEMM |                              \
   (unsigned long)FUSE__HAS_KERNEL_NCHW_GEMM << FUSE__FAMILY_NCHW_GEMM |                      \
   (unsigned long)FUSE__HAS_KERNEL_FEW_CHANNELS << FUSE__FAMILY_FEW_CHANNELS |                \
   (unsigned long)FUSE__HAS_KERNEL_DW_NHWC << FUSE__FAMILY_DW_NHWC |                          \
   (unsigned long)FUSE__HAS_KERNEL_DW_NCHW << FUSE__FAMILY_DW_NCHW |                          \
   (unsigned long)FUSE__HAS_KERNEL_GROUPED << FUSE__FAMILY_GROUPED |                          \
   (unsigned long)FUSE__HAS_KERNEL_WINOGRAD << FUSE__FAMILY_WINOGRAD |                        \
   (unsigned long)FUSE__HAS_KERNEL_POOL << FUSE__FAMILY_POOL |                                \
   (unsigned long)FUSE__HAS_KERNEL_ELTWISE << FUSE__FAMILY_ELTWISE |                          \
   (unsigned long)FUSE__HAS_KERNEL_CHAIN << FUSE__FAMILY_CHAIN |                              \
   (unsigned long)FUSE__HAS_KERNEL_ROWS << FUSE__FAMILY_ROWS |                                \
   (unsigned long)FUSE__HAS_KERNEL_MATMUL_ROWS << FUSE__FAMILY_MATMUL_ROWS |                  \
   (unsigned long)FUSE__HAS_KERNEL_QDIRECT << FUSE__FAMILY_QDIRECT |                          \
   (unsigned long)FUSE__HAS_KERNEL_QTILES << FUSE__FAMILY_QTILES |                            \
   (unsigned long)FUSE__HAS_KERNEL_QDW << FUSE__FAMILY_QDW |                                  \
   (unsigned long)FUSE__HAS_KERNEL_QPOOL << FUSE__FAMILY_QPOOL |                              \
   (unsigned long)FUSE__HAS_KERNEL_QMATMUL << FUSE__FAMILY_QMATMUL |                          \
   (unsigned long)FUSE__HAS_KERNEL_QGLOBAL_AVG_POOL << FUSE__FAMILY_QGLOBAL_AVG_POOL)

/* ---- post-op kinds: FUSE__HAS_POST(FUSE_POST_GELU); FUSE__POST_IS(op, kind) is whether post-op
   op is of that kind in this build (so a kernel's branch for a kind left out is dead code) */
#ifdef FUSE_NO_POST_CLAMP
#define FUSE__OUT_POST_CLAMP (1ul << FUSE_POST_CLAMP)
#else
#define FUSE__OUT_POST_CLAMP 0ul
#endif
#ifdef FUSE_NO_POST_ADD
#define FUSE__OUT_POST_ADD (1ul << FUSE_POST_ADD)
#else
#define FUSE__OUT_POST_ADD 0ul
#endif
#ifdef FUSE_NO_POST_LINEAR
#define FUSE__OUT_POST_LINEAR (1ul << FUSE_POST_LINEAR)
#else
#define FUSE__OUT_POST_LINEAR 0ul
#endif
#ifdef FUSE_NO_POST_SIGMOID
#define FUSE__OUT_POST_SIGMOID (1ul << FUSE_POST_SIGMOID)
#else
#define FUSE__OUT_POST_SIGMOID 0ul
#endif
#ifdef FUSE_NO_POST_TANH
#define FUSE__OUT_POST_TANH (1ul << FUSE_POST_TANH)
#else
#define FUSE__OUT_POST_TANH 0ul
#endif
#ifdef FUSE_NO_POST_SILU
#define FUSE__OUT_POST_SILU (1ul << FUSE_POST_SILU)
#else
#define FUSE__OUT_POST_SILU 0ul
#endif
#ifdef FUSE_NO_POST_HARDSIGMOID
#define FUSE__OUT_POST_HARDSIGMOID (1ul << FUSE_POST_HARDSIGMOID)
#else
#define FUSE__OUT_POST_HARDSIGMOID 0ul
#endif
#ifdef FUSE_NO_POST_HARDSWISH
#define FUSE__OUT_POST_HARDSWISH (1ul << FUSE_POST_HARDSWISH)
#else
#define FUSE__OUT_POST_HARDSWISH 0ul
#endif
#ifdef FUSE_NO_POST_LEAKY_RELU
#define FUSE__OUT_POST_LEAKY_RELU (1ul << FUSE_POST_LEAKY_RELU)
#else
#define FUSE__OUT_POST_LEAKY_RELU 0ul
#endif
#ifdef FUSE_NO_POST_ELU
#define FUSE__OUT_POST_ELU (1ul << FUSE_POST_ELU)
#else
#define FUSE__OUT_POST_ELU 0ul
#endif
#ifdef FUSE_NO_POST_SELU
#define FUSE__OUT_POST_SELU (1ul << FUSE_POST_SELU)
#else
#define FUSE__OUT_POST_SELU 0ul
#endif
#ifdef FUSE_NO_POST_SOFTPLUS
#define FUSE__OUT_POST_SOFTPLUS (1ul << FUSE_POST_SOFTPLUS)
#else
#define FUSE__OUT_POST_SOFTPLUS 0ul
#endif
#ifdef FUSE_NO_POST_MISH
#define FUSE__OUT_POST_MISH (1ul << FUSE_POST_MISH)
#else
#define FUSE__OUT_POST_MISH 0ul
#endif
#ifdef FUSE_NO_POST_GELU
#define FUSE__OUT_POST_GELU (1ul << FUSE_POST_GELU)
#else
#define FUSE__OUT_POST_GELU 0ul
#endif
#ifdef FUSE_NO_POST_GELU_TANH
#define FUSE__OUT_POST_GELU_TANH (1ul << FUSE_POST_GELU_TANH)
#else
#define FUSE__OUT_POST_GELU_TANH 0ul
#endif
#ifdef FUSE_NO_POST_EXP
#define FUSE__OUT_POST_EXP (1ul << FUSE_POST_EXP)
#else
#define FUSE__OUT_POST_EXP 0ul
#endif
#ifdef FUSE_NO_POST_SCALE
#define FUSE__OUT_POST_SCALE (1ul << FUSE_POST_SCALE)
#else
#define FUSE__OUT_POST_SCALE 0ul
#endif
#ifdef FUSE_NO_POST_SHIFT
#define FUSE__OUT_POST_SHIFT (1ul << FUSE_POST_SHIFT)
#else
#define FUSE__OUT_POST_SHIFT 0ul
#endif
#ifdef FUSE_NO_POST_PRELU
#define FUSE__OUT_POST_PRELU (1ul << FUSE_POST_PRELU)
#else
#define FUSE__OUT_POST_PRELU 0ul
#endif
/* a kind added to fuse_post_kind gets its macro above and its term here */
#define FUSE__POSTS_OUT                                                                       \
  (FUSE__OUT_POST_CLAMP | FUSE__OUT_POST_ADD | FUSE__OUT_POST_LINEAR | FUSE__OUT_POST_SIGMOID |  \
   FUSE__OUT_POST_TANH | FUSE__OUT_POST_SILU | FUSE__OUT_POST_HARDSIGMOID |                     \
   FUSE__OUT_POST_HARDSWISH | FUSE__OUT_POST_LEAKY_RELU | FUSE__OUT_POST_ELU |                  \
   FUSE__OUT_POST_SELU | FUSE__OUT_POST_SOFTPLUS | FUSE__OUT_POST_MISH | FUSE__OUT_POST_GELU |  \
   FUSE__OUT_POST_GELU_TANH | FUSE__OUT_POST_EXP | FUSE__OUT_POST_SCALE |                       \
   FUSE__OUT_POST_SHIFT | FUSE__OUT_POST_PRELU)
#define FUSE__HAS_POST(kind) (!(FUSE__POSTS_OUT >> (kind) & 1ul))
#define FUSE__POST_IS(op, k) (FUSE__HAS_POST(k) && (op)->kind == (k))
/* the kinds that call the vector math, out of line (fuse__post_activation): any left in */
#define FUSE__POSTS_MATH                                                                      \
  (1ul << FUSE_POST_SIGMOID | 1ul << FUSE_POST_TANH | 1ul << FUSE_POST_SILU |                 \
   1ul << FUSE_POST_LEAKY_RELU | 1ul << FUSE_POST_ELU | 1ul << FUSE_POST_SELU |               \
   1ul << FUSE_POST_SOFTPLUS | 1ul << FUSE_POST_MISH | 1ul << FUSE_POST_GELU |                \
   1ul << FUSE_POST_GELU_TANH | 1ul << FUSE_POST_EXP)
#define FUSE__HAS_POST_MATH ((FUSE__POSTS_MATH & ~FUSE__POSTS_OUT) != 0)
