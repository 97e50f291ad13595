/* ------------------------------------------------------------------ kernels -- */
/* The kernels every plan step runs, by family: the GEMM family (gemm.c: NHWC indirect GEMM for
   conv2d and matmul, the NCHW GEMM, the few-input-channel stem kernel), depthwise conv
   (depthwise.c), pools, element-wise rows and layout transposes (pool_eltwise.c); their
   drivers (conv_drivers.c, other_ops.c) and the op-by-op reference kernels (reference.c), the
   oracle every other kernel is tested against.

   Each kernel is written once, as a plain-C template (the .inc files here) over the names of
   a vector layer (vec_avx512.h, vec_avx2.h, vec_scalar.h), and instantiated once per layer and
   tile by including it between the layer and vec_end.h; the generator pastes every instance
   into fuse.h, so a debugger steps through ordinary C. The scalar instance of each template
   is its scalar twin: the fallback where no SIMD is compiled in and the implementation of
   FUSE_ISA_SCALAR, with the same tiles, packing and drivers. The kernel table (table.c) lists
   every instance with its instruction set and tile; kernel choice reads it.

   The x86 instances carry function target attributes, so a unit built with plain -O2 still
   has them; fuse_cpu_isa() decides at run time. */
#if defined(FUSE__X86) && (defined(__GNUC__) || defined(__clang__)) && \
    (!defined(FUSE_NO_AVX2) || !defined(FUSE_NO_AVX512))
#define FUSE__SIMD 1
#include <immintrin.h>
#endif

/* The templates' register tiles are small arrays in loops of constant trip count under
   FUSE__UNROLL, which the compiler unrolls fully so that the arrays live in registers: the
   count covers the longest such loop (the 19 input rows of a 5x5 stride-2 depthwise tile).
   Under AddressSanitizer the arrays stay in memory with their redzones whatever is unrolled,
   and unrolled they make clang's builds take many minutes: there the loops stay loops; so
   they do in a build for size (-Os: the Cortex-M7 build, whose kernels are the scalar twins). */
#if defined(__SANITIZE_ADDRESS__)
#define FUSE__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUSE__ASAN 1
#endif
#endif
#if ((defined(__GNUC__) && __GNUC__ >= 8) || defined(__clang__)) && !defined(FUSE__ASAN) && \
    !defined(__OPTIMIZE_SIZE__)
#define FUSE__UNROLL _Pragma("GCC unroll 32")
#else
#define FUSE__UNROLL
#endif
/* A helper of a tile whose loops take their bounds from the caller's constants: always
   inlined, so that the bounds are constants there (clang warns of an unroll pragma it cannot
   honour in an outlined copy). */
#if defined(__GNUC__) || defined(__clang__)
#define FUSE__TILE_INLINE __attribute__((always_inline)) inline
#else
#define FUSE__TILE_INLINE inline
#endif

/* the depthwise and pool kernels' arguments (depthwise.c, pool_eltwise.c) */
typedef struct fuse__dw_args fuse__dw_args;
typedef struct fuse__pool_args fuse__pool_args;

/* The epilogue routine (post.inc), once per vector layer: every kernel family uses it. */
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX512)
#include "vec_avx512.h"
#include "vmath.inc"
#include "post.inc"
#include "vec_end.h"
#endif
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
#include "vec_avx2.h"
#include "vmath.inc"
#include "post.inc"
#include "vec_end.h"
#endif
#include "vec_scalar.h"
#include "vmath.inc"
#include "post.inc"
#include "vec_end.h"
