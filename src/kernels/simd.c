/* --------------------------------------------------------- SIMD convolution -- */
/* On AVX-512 / AVX2, conv2d runs on NHWC tensors (the planner converts where the graph enters
   or leaves them) as an indirect GEMM: Y[pixel, K] = sum over taps t of X[pixel @ t, C] x W_t[C, K].
   For a tile of MR output pixels each tap gives MR row pointers into the input, or into a zero
   row where the tap falls into the padding, so nothing is packed at run time, whatever the
   stride, padding or dilation. The weights are packed once, at compile, into
   [group][NR-column block][tap][C][NR] panels (the last block maybe narrower, on a tile of
   the same MR: fuse__igemm_last). The micro-kernel keeps its MR x NR tile in registers over
   every tap and channel, then adds the bias, runs the post-ops and stores once, masked where
   K is no multiple of NR. A tap that reads only the padding for every pixel of
   the tile is skipped. While a tile computes, its kernel brings the next column block's
   panel into L2 a line per step. Panels past 1 MB are walked tap by tap in channel blocks
   that stay in L1, the tile accumulating in the output between blocks. With few input
   channels (the 3-channel stem) a tap is a whole kernel row: KW*C contiguous floats in NHWC,
   copied with zeros into a row buffer only where the row crosses the padding. A single layer
   may run on NCHW in and out instead: the NCHW GEMM (output channels as tile rows) and, for
   few input channels, its own kernel (fuse__conv_few_channels). Depthwise conv has its own kernel,
   vectorized over channels. Each body is written once, as a macro, and instantiated per ISA
   with that ISA's vector macros. */
/* The kernel templates' register tiles are small arrays in loops of constant trip count under
   FUSE__UNROLL, which the compiler unrolls fully so that the arrays live in registers: the
   count covers the longest such loop (the 19 input rows of a 5x5 stride-2 depthwise tile). */
#if (defined(__GNUC__) && __GNUC__ >= 8) || defined(__clang__)
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
/* the depthwise and pool kernels' arguments (src/kernels/depthwise.c, pool_eltwise.c) */
typedef struct fuse__dw_args fuse__dw_args;
typedef struct fuse__pool_args fuse__pool_args;

#if defined(FUSE__X86) && (defined(__GNUC__) || defined(__clang__)) && \
    (!defined(FUSE_NO_AVX2) || !defined(FUSE_NO_AVX512))
#define FUSE__SIMD 1
#include <immintrin.h>

typedef struct fuse__tile_epi {
  const float *bias;     /* at the tile's first channel, or NULL */
  const float *row_bias; /* NCHW GEMM: one per tile row (output channel), or NULL */
  int num_post;
  int kind[FUSE_MAX_POST_OPS];
  float lo[FUSE_MAX_POST_OPS], hi[FUSE_MAX_POST_OPS];
  const float *res[FUSE_MAX_POST_OPS]; /* ADD: at the tile's first element, same strides as y */
  const float *pf; /* meanwhile: weights of a later block to bring into L2, */
  int64_t npf;     /* a cache line per multiply-add step, npf lines (0: none) */
  int64_t ldw;     /* floats from one row of w to the next; 0: NR (a packed panel) */
} fuse__tile_epi;

/* flags of a micro-kernel call */
#define FUSE__ACCUMULATE 1 /* start from the tile in y (a later channel block), not from zero */
#define FUSE__FINISH 2     /* the last block: bias and post-ops, then the store */

/* X-macro lists: rows of a tile, vectors of a row */
#define FUSE__R6(X, V) X(0, V) X(1, V) X(2, V) X(3, V) X(4, V) X(5, V)
#define FUSE__R7(X, V) FUSE__R6(X, V) X(6, V)
#define FUSE__R8(X, V) FUSE__R7(X, V) X(7, V)
#define FUSE__R12(X, V) FUSE__R8(X, V) X(8, V) X(9, V) X(10, V) X(11, V)
#define FUSE__V1(Y, r) Y(r, 0)
#define FUSE__V2(Y, r) Y(r, 0) Y(r, 1)
#define FUSE__V3(Y, r) Y(r, 0) Y(r, 1) Y(r, 2)
#define FUSE__V4(Y, r) Y(r, 0) Y(r, 1) Y(r, 2) Y(r, 3)

#define FUSE__IG_DECL(r, j) FUSE__V c##r##_##j;
#define FUSE__IG_INIT(r, j)                                                                  \
  c##r##_##j = (flags & FUSE__ACCUMULATE) && r < rows                                        \
                   ? FUSE__VMLOAD(y + r * ldy + j * FUSE__VW, j)                             \
                   : FUSE__VZERO();
#define FUSE__IG_W(r, j) FUSE__V w##j = FUSE__VLOAD(w + j * FUSE__VW);
#define FUSE__IG_FMA(r, j) c##r##_##j = FUSE__VFMA(a##r, w##j, c##r##_##j);
/* The epilogue on the tile's registers, in two orders that each measured faster somewhere.
   FUSE__IG_EPILOGUE: one step at a time over the whole tile (each bound broadcast once): the
   bias (per column, or per row in the NCHW GEMM), the post-ops in order (a residual read on
   the valid rows only), then the one store of each valid row (AVX2: 4-12 % on short
   reductions; the few-channel NCHW kernel: 15 % on mobilenet_v2's stem). FUSE__IG_EPI_ACC:
   every step on one accumulator, then its store (AVX-512's GEMM: the other order measured 14 %
   slower on the 1x1 16 -> 96 @112, a reduction of 16 whose output goes to memory). */
#define FUSE__IG_BIASV(r, j) FUSE__V b##j = FUSE__VMLOAD(e->bias + j * FUSE__VW, j);
#define FUSE__IG_ADDB(r, j) c##r##_##j = FUSE__VADD(c##r##_##j, b##j);
#define FUSE__IG_ADDRB(r, j) c##r##_##j = FUSE__VADD(c##r##_##j, rb_);
#define FUSE__IG_RES(r, j)                                                                   \
  c##r##_##j = FUSE__VADD(c##r##_##j, FUSE__VMLOAD(rq_ + r * ldy + j * FUSE__VW, j));
/* max(lo, v) then min(hi, v): a NaN in v passes through, as in the reference */
#define FUSE__IG_CLAMP(r, j) c##r##_##j = FUSE__VMIN(hv_, FUSE__VMAX(lv_, c##r##_##j));
#define FUSE__IG_STORE(r, j) FUSE__VMSTORE(y + r * ldy + j * FUSE__VW, j, c##r##_##j);
#define FUSE__IG_ROW_ADDB(r, VECS) VECS(FUSE__IG_ADDB, r)
#define FUSE__IG_ROW_ADDRB(r, VECS) /* rows past `rows` have no bias to read */            \
  { FUSE__V rb_ = FUSE__VSET1(e->row_bias[r < rows ? r : 0]); VECS(FUSE__IG_ADDRB, r) }
#define FUSE__IG_ROW_RES(r, VECS) if (r < rows) { VECS(FUSE__IG_RES, r) }
#define FUSE__IG_ROW_CLAMP(r, VECS) VECS(FUSE__IG_CLAMP, r)
#define FUSE__IG_ROW_STORE(r, VECS) if (r < rows) { VECS(FUSE__IG_STORE, r) }
#define FUSE__IG_EPILOGUE(ROWS, VECS)                                                        \
  if (flags & FUSE__FINISH) {                                                                \
    if (e->bias) {                                                                           \
      VECS(FUSE__IG_BIASV, 0)                                                                \
      ROWS(FUSE__IG_ROW_ADDB, VECS)                                                          \
    } else if (e->row_bias) {                                                                \
      ROWS(FUSE__IG_ROW_ADDRB, VECS)                                                         \
    }                                                                                        \
    for (q = 0; q < e->num_post; q++) {                                                      \
      if (e->kind[q] == FUSE_POST_ADD) {                                                     \
        const float *rq_ = e->res[q];                                                        \
        ROWS(FUSE__IG_ROW_RES, VECS)                                                         \
      } else {                                                                               \
        FUSE__V lv_ = FUSE__VSET1(e->lo[q]), hv_ = FUSE__VSET1(e->hi[q]);                    \
        ROWS(FUSE__IG_ROW_CLAMP, VECS)                                                       \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
  ROWS(FUSE__IG_ROW_STORE, VECS)
#define FUSE__IG_ACC(r, j)                                                                   \
  if (flags & FUSE__FINISH) {                                                                \
    if (e->bias) c##r##_##j = FUSE__VADD(c##r##_##j, FUSE__VMLOAD(e->bias + j * FUSE__VW, j)); \
    else if (e->row_bias) c##r##_##j = FUSE__VADD(c##r##_##j, FUSE__VSET1(e->row_bias[r]));  \
    for (q = 0; q < e->num_post; q++) {                                                      \
      if (e->kind[q] == FUSE_POST_ADD) {                                                     \
        c##r##_##j =                                                                         \
            FUSE__VADD(c##r##_##j, FUSE__VMLOAD(e->res[q] + r * ldy + j * FUSE__VW, j));     \
      } else {                                                                               \
        c##r##_##j = FUSE__VMIN(FUSE__VSET1(e->hi[q]), FUSE__VMAX(FUSE__VSET1(e->lo[q]), c##r##_##j)); \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
  FUSE__VMSTORE(y + r * ldy + j * FUSE__VW, j, c##r##_##j);
#define FUSE__IG_ROW_ACC(r, VECS) if (r < rows) { VECS(FUSE__IG_ACC, r) }
#define FUSE__IG_EPI_ACC(ROWS, VECS) ROWS(FUSE__IG_ROW_ACC, VECS)
#define FUSE__IG_MASK(r, j) FUSE__MASK_DECL(j)
#define FUSE__IG_ROW_DECL(r, VECS) VECS(FUSE__IG_DECL, r)
#define FUSE__IG_ROW_INIT(r, VECS) VECS(FUSE__IG_INIT, r)
#define FUSE__IG_ROW_PTR(r, VECS) const float *p##r = a[t * tile_rows + r] + aoff;
#define FUSE__IG_ROW_FMA(r, VECS) { FUSE__V a##r = FUSE__VSET1(p##r[k]); VECS(FUSE__IG_FMA, r) }

/* One micro-kernel: an MR x NR tile (ROWS rows, VECS vectors per row). a: ntaps x MR row
   pointers (+ aoff floats); w: ntaps * L rows of NR packed weights; y: the tile's first
   element, ldy floats between pixels; rows / cols: the valid part of the tile. EPI: the
   order of its epilogue (FUSE__IG_EPILOGUE or FUSE__IG_EPI_ACC). */
#define FUSE__IGEMM(NAME, TARGET, MR, NR, ROWS, VECS, EPI)                                    \
  TARGET static void NAME(int ntaps, int L, const float *const *a, int64_t aoff,             \
                          const float *w, float *y, int64_t ldy, int rows, int cols,         \
                          int flags, const fuse__tile_epi *e) {                              \
    const int tile_rows = MR;                                                                \
    const float *pf = e->pf;                                                                 \
    int64_t npf = e->npf, ldw = e->ldw ? e->ldw : NR;                                        \
    int t, k, q;                                                                             \
    VECS(FUSE__IG_MASK, 0)                                                                   \
    ROWS(FUSE__IG_ROW_DECL, VECS)                                                            \
    ROWS(FUSE__IG_ROW_INIT, VECS)                                                            \
    for (t = 0; t < ntaps; t++) {                                                            \
      ROWS(FUSE__IG_ROW_PTR, VECS)                                                           \
      for (k = 0; k < L; k++, w += ldw) {                                                    \
        if (npf > 0) __builtin_prefetch(pf, 0, 2), pf += 16, npf--;                          \
        VECS(FUSE__IG_W, 0)                                                                  \
        ROWS(FUSE__IG_ROW_FMA, VECS)                                                         \
      }                                                                                      \
    }                                                                                        \
    EPI(ROWS, VECS)                                                                          \
  }

/* The few-channel NCHW kernel (the 3-channel stems on NCHW in and out): a tile is MR output
   channels (rows, their weights broadcast) by VECS vectors of consecutive pixels of one output
   row, read in place from rows of the input copied with their padding and split into sw
   column phases (fuse__conv_few_channels). The reduction runs in segments of one channel, kernel row
   and phase each (kernel columns q, q + sw, ...), whose input moves one float a step: x +
   off[g] is the tile's first input at segment g, wk the weights as [step][MR]. */
#define FUSE__FEW_CHANNELS_ROW_FMA(r, VECS) { FUSE__V a##r = FUSE__VSET1(wk[r]); VECS(FUSE__IG_FMA, r) }
#define FUSE__FEW_CHANNELS(NAME, TARGET, MR, ROWS, VECS)                                              \
  TARGET static void NAME(int nseg, const int64_t *off, const int *len, const float *x,      \
                          const float *wk, float *y, int64_t ldy, int rows, int cols,        \
                          const fuse__tile_epi *e) {                                         \
    const int flags = FUSE__FINISH;                                                          \
    int g, k, q;                                                                             \
    VECS(FUSE__IG_MASK, 0)                                                                   \
    ROWS(FUSE__IG_ROW_DECL, VECS)                                                            \
    ROWS(FUSE__IG_ROW_INIT, VECS)                                                            \
    for (g = 0; g < nseg; g++) {                                                             \
      const float *w = x + off[g];                                                           \
      for (k = len[g]; k > 0; k--, w++, wk += MR) {                                          \
        VECS(FUSE__IG_W, 0)                                                                  \
        ROWS(FUSE__FEW_CHANNELS_ROW_FMA, VECS)                                                        \
      }                                                                                      \
    }                                                                                        \
    FUSE__IG_EPILOGUE(ROWS, VECS)                                                            \
  }

/* The NCHW GEMM's input panel: for the output pixels p0 .. p0 + cols - 1 of one image and
   group (xg: its Cg planes), row (c * KH + kh) * KW + kw holds the input each pixel reads at
   that tap, zero in the padding and past cols (nr floats a row). Runs of pixels along an
   output row are vector copies when the stride is 1, gathers otherwise. */
typedef struct fuse__nchw_pack_args {
  const float *xg;
  int64_t Cg, H, W, OW, KH, KW, sh, sw, dh, dw, pt, pl, nr;
  int pointwise;
} fuse__nchw_pack_args;
/* dst[0 .. n) = V, a vector at a time (V may read at i_, the vector's first index) */
#define FUSE__NCHW_GEMM_STORE(dst, n, V)                                                            \
  for (i_ = 0; i_ < (n); i_ += FUSE__VW) {                                                   \
    int cols = (int)((n) - i_ < FUSE__VW ? (n) - i_ : FUSE__VW);                             \
    FUSE__MASK_DECL(0)                                                                       \
    FUSE__VMSTORE((dst) + i_, 0, V);                                                         \
  }
#define FUSE__NCHW_GEMM_ZERO(dst, n) FUSE__NCHW_GEMM_STORE(dst, n, FUSE__VZERO())
#define FUSE__NCHW_GEMM_COPY(dst, src, n) FUSE__NCHW_GEMM_STORE(dst, n, FUSE__VMLOAD((src) + i_, 0))
/* dst[i] = src[2 i] for i < n: two masked loads, their even floats (FUSE__NCHW_GEMM_EVEN, per ISA) */
#define FUSE__NCHW_GEMM_EVENS(dst, src, n)                                                          \
  for (i_ = 0; i_ < (n); i_ += FUSE__VW) {                                                   \
    FUSE__V ev_;                                                                             \
    {                                                                                        \
      int cols = (int)(2 * ((n) - i_ < FUSE__VW ? (n) - i_ : FUSE__VW)) - 1;                 \
      FUSE__MASK_DECL(0)                                                                     \
      FUSE__MASK_DECL(1)                                                                     \
      ev_ = FUSE__NCHW_GEMM_EVEN(FUSE__VMLOAD((src) + 2 * i_, 0),                                   \
                          FUSE__VMLOAD((src) + 2 * i_ + FUSE__VW, 1));                       \
    }                                                                                        \
    {                                                                                        \
      int cols = (int)((n) - i_ < FUSE__VW ? (n) - i_ : FUSE__VW);                           \
      FUSE__MASK_DECL(0)                                                                     \
      FUSE__VMSTORE((dst) + i_, 0, ev_);                                                     \
    }                                                                                        \
  }
#define FUSE__NCHW_GEMM_RUNS 65 /* runs of a block of at most 64 pixels along output rows */
#define FUSE__NCHW_PACK(NAME, TARGET)                                                           \
  TARGET static void NAME(const fuse__nchw_pack_args *g, int64_t p0, int ncols, float *panel) {  \
    int64_t nr = g->nr, HW = g->H * g->W, c, kh, kw, i_, p = p0, jj = 0;                     \
    int64_t run_at[FUSE__NCHW_GEMM_RUNS], run_len[FUSE__NCHW_GEMM_RUNS], run_ih[FUSE__NCHW_GEMM_RUNS];            \
    int64_t run_iw[FUSE__NCHW_GEMM_RUNS], run_e0[FUSE__NCHW_GEMM_RUNS], run_e1[FUSE__NCHW_GEMM_RUNS];              \
    int runs = 0, k;                                                                         \
    if (g->pointwise) { /* input pixel = output pixel */                                     \
      for (c = 0; c < g->Cg; c++) {                                                          \
        FUSE__NCHW_GEMM_COPY(panel + c * nr, g->xg + c * HW + p0, ncols)                            \
        FUSE__NCHW_GEMM_ZERO(panel + c * nr + ncols, nr - ncols)                                    \
      }                                                                                      \
      return;                                                                                \
    }                                                                                        \
    while (jj < ncols && runs < FUSE__NCHW_GEMM_RUNS) { /* the runs, once per block */              \
      int64_t oh = p / g->OW, ow = p % g->OW, seg = g->OW - ow;                              \
      if (seg > ncols - jj) seg = ncols - jj;                                                \
      run_at[runs] = jj, run_len[runs] = seg;                                                \
      run_ih[runs] = oh * g->sh - g->pt, run_iw[runs] = ow * g->sw - g->pl;                  \
      runs++, jj += seg, p += seg;                                                           \
    }                                                                                        \
    for (kw = 0; kw < g->KW; kw++) {                                                         \
      for (k = 0; k < runs; k++) { /* e0 .. e1: the pixels whose input column is in [0, W) */ \
        int64_t iw0 = run_iw[k] + kw * g->dw;                                                \
        run_e0[k] = iw0 >= 0 ? 0 : (-iw0 + g->sw - 1) / g->sw;                               \
        run_e1[k] = iw0 <= g->W - 1 ? (g->W - 1 - iw0) / g->sw + 1 : 0;                      \
        if (run_e1[k] > run_len[k]) run_e1[k] = run_len[k];                                  \
        if (run_e0[k] > run_e1[k]) run_e0[k] = run_e1[k];                                    \
      }                                                                                      \
      for (c = 0; c < g->Cg; c++)                                                            \
        for (kh = 0; kh < g->KH; kh++) {                                                     \
          float *dst = panel + ((c * g->KH + kh) * g->KW + kw) * nr;                         \
          for (k = 0; k < runs; k++) {                                                       \
            int64_t seg = run_len[k], ih = run_ih[k] + kh * g->dh;                           \
            int64_t e0 = run_e0[k], e1 = run_e1[k], e;                                       \
            float *d = dst + run_at[k];                                                      \
            if (ih < 0 || ih >= g->H) e0 = e1 = 0;                                           \
            FUSE__NCHW_GEMM_ZERO(d, e0)                                                             \
            if (e1 > e0) {                                                                   \
              const float *xr = g->xg + c * HW + ih * g->W + run_iw[k] + kw * g->dw;         \
              if (g->sw == 1) {                                                              \
                FUSE__NCHW_GEMM_COPY(d + e0, xr + e0, e1 - e0)                                      \
              } else if (g->sw == 2) {                                                       \
                FUSE__NCHW_GEMM_EVENS(d + e0, xr + 2 * e0, e1 - e0)                                 \
              } else {                                                                       \
                for (e = e0; e < e1; e++) d[e] = xr[e * g->sw];                              \
              }                                                                              \
            }                                                                                \
            FUSE__NCHW_GEMM_ZERO(d + e1, seg - e1)                                                  \
          }                                                                                  \
          FUSE__NCHW_GEMM_ZERO(dst + ncols, nr - ncols)                                             \
        }                                                                                    \
    }                                                                                        \
  }

/* The depthwise, pool and element-wise kernels are plain-C templates instantiated per vector
   layer after this file (src/kernels/depthwise.c, pool_eltwise.c); the picks below name them. */
#ifndef FUSE_NO_AVX512
__attribute__((target("avx512f"))) static void fuse__dw_avx512(const fuse__dw_args *d, void *buf,
                                                               int64_t r0, int64_t r1);
__attribute__((target("avx512f"))) static void fuse__dwc_avx512(const fuse__dw_args *d, void *buf,
                                                                int64_t u0, int64_t u1);
__attribute__((target("avx512f"))) static void fuse__dwc_row_avx512(float *dst, const float *x,
                                                                    const fuse__dw_args *d,
                                                                    int64_t wq, int64_t fill);
__attribute__((target("avx512f"))) static void fuse__pool_avx512(const fuse__pool_args *d, int64_t r0,
                                                                 int64_t r1);
__attribute__((target("avx512f"))) static void fuse__elt_avx512(int op, float *y, const float *a,
                                                                int sa, const float *b, int sb,
                                                                int64_t n, float lo, float hi);
#endif
#ifndef FUSE_NO_AVX2
__attribute__((target("avx2,fma"))) static void fuse__dw_avx2(const fuse__dw_args *d, void *buf,
                                                              int64_t r0, int64_t r1);
__attribute__((target("avx2,fma"))) static void fuse__dwc_avx2(const fuse__dw_args *d, void *buf,
                                                               int64_t u0, int64_t u1);
__attribute__((target("avx2,fma"))) static void fuse__dwc_row_avx2(float *dst, const float *x,
                                                                   const fuse__dw_args *d,
                                                                   int64_t wq, int64_t fill);
__attribute__((target("avx2,fma"))) static void fuse__pool_avx2(const fuse__pool_args *d, int64_t r0,
                                                                int64_t r1);
__attribute__((target("avx2,fma"))) static void fuse__elt_avx2(int op, float *y, const float *a,
                                                               int sa, const float *b, int sb,
                                                               int64_t n, float lo, float hi);
#endif


#ifndef FUSE_NO_AVX512
#define FUSE__V __m512
#define FUSE__VW 16
#define FUSE__VZERO() _mm512_setzero_ps()
#define FUSE__VLOAD(p) _mm512_loadu_ps(p)
#define FUSE__VSET1(x) _mm512_set1_ps(x)
#define FUSE__VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define FUSE__VADD(a, b) _mm512_add_ps(a, b)
#define FUSE__VMAX(a, b) _mm512_maskz_max_ps((__mmask16)-1, a, b) /* not max_ps: gcc 12 -Wmaybe-uninitialized */
#define FUSE__VMIN(a, b) _mm512_maskz_min_ps((__mmask16)-1, a, b)
#define FUSE__MASK_DECL(j)                                                                   \
  __mmask16 m##j = (__mmask16)(cols >= (j + 1) * 16 ? 0xffffu                                \
                               : cols <= j * 16    ? 0u                                      \
                                                   : (1u << (cols - j * 16)) - 1u);
#define FUSE__VMLOAD(p, j) _mm512_maskz_loadu_ps(m##j, p)
#define FUSE__MASKT __mmask16
#define FUSE__MASK_OF(n) ((__mmask16)((1u << (n)) - 1u)) /* n in 0 .. 16 */
#define FUSE__MASK_RANGE(a, b) ((__mmask16)(((1u << (b)) - 1u) & ~((1u << (a)) - 1u))) /* lanes a .. b-1 */
#define FUSE__VKLOAD(p, m) _mm512_maskz_loadu_ps(m, p)
#define FUSE__VKSTORE(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define FUSE__VMSTORE(p, j, v) _mm512_mask_storeu_ps(p, m##j, v)
#define FUSE__VMUL(a, b) _mm512_mul_ps(a, b)
#define FUSE__VSUB(a, b) _mm512_sub_ps(a, b)
#define FUSE__VBELOW(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_LT_OQ), x, t) /* x < t ? t : x */
#define FUSE__VABOVE(x, t) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, t, _CMP_GT_OQ), x, t) /* x > t ? t : x */
#define FUSE__VMINNAN(x, m) /* x where x < m or x is NaN, else m */                          \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_LT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
#define FUSE__VMAXNAN(x, m) /* x where x > m or x is NaN, else m */                          \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), m, x)
FUSE__IGEMM(fuse__igemm_avx512_6x64, __attribute__((target("avx512f"))), 6, 64, FUSE__R6, FUSE__V4,
            FUSE__IG_EPI_ACC)
FUSE__IGEMM(fuse__igemm_avx512_8x48, __attribute__((target("avx512f"))), 8, 48, FUSE__R8, FUSE__V3,
            FUSE__IG_EPI_ACC)
FUSE__IGEMM(fuse__igemm_avx512_7x48, __attribute__((target("avx512f"))), 7, 48, FUSE__R7, FUSE__V3,
            FUSE__IG_EPI_ACC)
FUSE__IGEMM(fuse__igemm_avx512_7x32, __attribute__((target("avx512f"))), 7, 32, FUSE__R7, FUSE__V2,
            FUSE__IG_EPI_ACC)
FUSE__IGEMM(fuse__igemm_avx512_12x32, __attribute__((target("avx512f"))), 12, 32, FUSE__R12, FUSE__V2,
            FUSE__IG_EPI_ACC)
FUSE__IGEMM(fuse__igemm_avx512_12x16, __attribute__((target("avx512f"))), 12, 16, FUSE__R12, FUSE__V1,
            FUSE__IG_EPI_ACC)
FUSE__FEW_CHANNELS(fuse__few_channels_avx512_8x32, __attribute__((target("avx512f"))), 8, FUSE__R8, FUSE__V2)
FUSE__FEW_CHANNELS(fuse__few_channels_avx512_8x16, __attribute__((target("avx512f"))), 8, FUSE__R8, FUSE__V1)
#define FUSE__NCHW_GEMM_EVEN(a, b)                                                                  \
  _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b)
FUSE__NCHW_PACK(fuse__nchw_pack_avx512, __attribute__((target("avx512f"))))
#undef FUSE__NCHW_GEMM_EVEN
#undef FUSE__V
#undef FUSE__VW
#undef FUSE__VZERO
#undef FUSE__VLOAD
#undef FUSE__VSET1
#undef FUSE__VFMA
#undef FUSE__VADD
#undef FUSE__VMAX
#undef FUSE__VMIN
#undef FUSE__MASK_DECL
#undef FUSE__VMLOAD
#undef FUSE__MASKT
#undef FUSE__MASK_OF
#undef FUSE__MASK_RANGE
#undef FUSE__VKLOAD
#undef FUSE__VKSTORE
#undef FUSE__VMSTORE
#undef FUSE__VMUL
#undef FUSE__VMAXNAN
#undef FUSE__VSUB
#undef FUSE__VMINNAN
#undef FUSE__VBELOW
#undef FUSE__VABOVE
#endif

#ifndef FUSE_NO_AVX2
#define FUSE__V __m256
#define FUSE__VW 8
#define FUSE__VZERO() _mm256_setzero_ps()
#define FUSE__VLOAD(p) _mm256_loadu_ps(p)
#define FUSE__VSET1(x) _mm256_set1_ps(x)
#define FUSE__VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define FUSE__VADD(a, b) _mm256_add_ps(a, b)
#define FUSE__VMAX(a, b) _mm256_max_ps(a, b)
#define FUSE__VMIN(a, b) _mm256_min_ps(a, b)
#define FUSE__MASK_DECL(j)                                                                   \
  __m256i m##j = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - j * 8),                         \
                                    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#define FUSE__VMLOAD(p, j) _mm256_maskload_ps(p, m##j)
#define FUSE__MASKT __m256i
#define FUSE__MASK_OF(n) _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define FUSE__MASK_RANGE(a, b)                                                               \
  _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)(a)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), \
                      FUSE__MASK_OF(b))
#define FUSE__VKLOAD(p, m) _mm256_maskload_ps(p, m)
#define FUSE__VKSTORE(p, m, v) _mm256_maskstore_ps(p, m, v)
#define FUSE__VMSTORE(p, j, v) _mm256_maskstore_ps(p, m##j, v)
#define FUSE__VMUL(a, b) _mm256_mul_ps(a, b)
#define FUSE__VSUB(a, b) _mm256_sub_ps(a, b)
#define FUSE__VBELOW(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_LT_OQ))
#define FUSE__VABOVE(x, t) _mm256_blendv_ps(x, t, _mm256_cmp_ps(x, t, _CMP_GT_OQ))
#define FUSE__VMINNAN(x, m)                                                                  \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_LT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
#define FUSE__VMAXNAN(x, m)                                                                  \
  _mm256_blendv_ps(m, x, _mm256_or_ps(_mm256_cmp_ps(x, m, _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
FUSE__IGEMM(fuse__igemm_avx2_6x16, __attribute__((target("avx2,fma"))), 6, 16, FUSE__R6, FUSE__V2,
            FUSE__IG_EPILOGUE)
FUSE__IGEMM(fuse__igemm_avx2_12x8, __attribute__((target("avx2,fma"))), 12, 8, FUSE__R12, FUSE__V1,
            FUSE__IG_EPILOGUE)
FUSE__FEW_CHANNELS(fuse__few_channels_avx2_6x16, __attribute__((target("avx2,fma"))), 6, FUSE__R6, FUSE__V2)
FUSE__FEW_CHANNELS(fuse__few_channels_avx2_6x8, __attribute__((target("avx2,fma"))), 6, FUSE__R6, FUSE__V1)
#define FUSE__NCHW_GEMM_EVEN(a, b)                                                                  \
  _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8))
FUSE__NCHW_PACK(fuse__nchw_pack_avx2, __attribute__((target("avx2,fma"))))
#undef FUSE__NCHW_GEMM_EVEN
#undef FUSE__V
#undef FUSE__VW
#undef FUSE__VZERO
#undef FUSE__VLOAD
#undef FUSE__VSET1
#undef FUSE__VFMA
#undef FUSE__VADD
#undef FUSE__VMAX
#undef FUSE__VMIN
#undef FUSE__MASK_DECL
#undef FUSE__VMLOAD
#undef FUSE__MASKT
#undef FUSE__MASK_OF
#undef FUSE__MASK_RANGE
#undef FUSE__VKLOAD
#undef FUSE__VKSTORE
#undef FUSE__VMSTORE
#undef FUSE__VMUL
#undef FUSE__VMAXNAN
#undef FUSE__VSUB
#undef FUSE__VMINNAN
#undef FUSE__VBELOW
#undef FUSE__VABOVE
#endif

typedef void (*fuse__igemm_fn)(int ntaps, int L, const float *const *a, int64_t aoff,
                               const float *w, float *y, int64_t ldy, int rows, int cols,
                               int flags, const fuse__tile_epi *e);
typedef void (*fuse__dw_fn)(const fuse__dw_args *d, void *buf, int64_t p0, int64_t p1);
typedef void (*fuse__few_channels_fn)(int nseg, const int64_t *off, const int *len, const float *x,
                             const float *wk, float *y, int64_t ldy, int rows, int cols,
                             const fuse__tile_epi *e);

/* The micro-kernels: an ISA's tiles of MR rows (pixels; output channels in the NCHW GEMM) by
   NR columns, with how close each comes to the FMA peak on its own (the 12x16 and 12x8 tiles
   hold fewer accumulators). */
typedef struct fuse__igemm_kind {
  fuse_isa isa;
  int mr, nr, weight; /* weight: the kernel's own efficiency, in percent */
  fuse__igemm_fn fn;
} fuse__igemm_kind;

static const fuse__igemm_kind fuse__igemm_kinds[] = {
#ifndef FUSE_NO_AVX512
    {FUSE_ISA_AVX512, 6, 64, 100, fuse__igemm_avx512_6x64},
    {FUSE_ISA_AVX512, 8, 48, 100, fuse__igemm_avx512_8x48},
    {FUSE_ISA_AVX512, 7, 48, 100, fuse__igemm_avx512_7x48},
    {FUSE_ISA_AVX512, 12, 32, 97, fuse__igemm_avx512_12x32},
    {FUSE_ISA_AVX512, 7, 32, 90, fuse__igemm_avx512_7x32},
    {FUSE_ISA_AVX512, 12, 16, 70, fuse__igemm_avx512_12x16},
#endif
#ifndef FUSE_NO_AVX2
    {FUSE_ISA_AVX2, 6, 16, 100, fuse__igemm_avx2_6x16},
    {FUSE_ISA_AVX2, 12, 8, 75, fuse__igemm_avx2_12x8},
#endif
    {FUSE_ISA_SCALAR, 0, 0, 0, NULL}};

/* The kind for the last column block of a GEMM `cols` wide on kind `kind`: the narrowest tile
   of the same ISA and rows that holds what is left (72 outputs as 48 + 32, not 48 + 48). */
static int fuse__igemm_last(int kind, int64_t cols) {
  const fuse__igemm_kind *k = &fuse__igemm_kinds[kind];
  int64_t left = cols - (cols - 1) / k->nr * k->nr;
  int i, best = kind;
  for (i = 0; fuse__igemm_kinds[i].fn; i++) {
    const fuse__igemm_kind *c = &fuse__igemm_kinds[i];
    if (c->isa == k->isa && c->mr == k->mr && c->nr >= left && c->nr < fuse__igemm_kinds[best].nr)
      best = i;
  }
  return best;
}

/* How much of a kernel's time goes to useful work on a rows x cols GEMM: the share of its
   tiles inside the GEMM (the last column block on its own kind when `mixed`) times its own
   efficiency (0 .. 1). In double: a fuzzed shape must not overflow. */
static double fuse__igemm_eff(int kind, int64_t cols, int64_t rows, int mixed) {
  const fuse__igemm_kind *k = &fuse__igemm_kinds[kind], *l;
  double cp, cl, rp;
  if (cols <= 0 || rows <= 0) return 0.0; /* an empty GEMM: no kernel (the reference) */
  l = mixed ? &fuse__igemm_kinds[fuse__igemm_last(kind, cols)] : k;
  cp = (double)((cols - 1) / k->nr * k->nr), cl = (double)l->nr;
  rp = (double)((rows + k->mr - 1) / k->mr * k->mr);
  return (double)cols / (cp + cl) * ((double)rows / rp) * (cp * k->weight + cl * l->weight) /
         (cp + cl) / 100.0;
}

/* The micro-kernel for a GEMM of `rows` rows (all tiles together) by `cols` columns (a group's
   output channels): the one that wastes least of its tiles (rows and columns rounded up to
   MR and NR), weighed by its own efficiency. The NCHW GEMM (nchw) takes only the widest
   tiles of its ISA (NR 48 and 64 on AVX-512): its pixel blocks of NR pay their gather and
   block overhead on fewer pixels otherwise (mobilenet-like 1x1 100 -> 36 @30: 106 GFLOP/s
   with 12x32 against 116 with 6x64 or 8x48). Sets *kind (into fuse__igemm_kinds) and
   returns 1; 0 when the ISA has none (scalar). */
static int fuse__igemm_pick(fuse_isa isa, int64_t cols, int64_t rows, int nchw, int *kind) {
  double best = 0.0;
  int i, found = 0;
  for (i = 0; fuse__igemm_kinds[i].fn; i++) {
    const fuse__igemm_kind *k = &fuse__igemm_kinds[i];
    double eff;
    if (k->isa != isa || (nchw && k->nr < (isa == FUSE_ISA_AVX512 ? 48 : 16))) continue;
    eff = fuse__igemm_eff(i, cols, rows, !nchw);
    if (eff > best * 1.0001) best = eff, found = 1, *kind = i; /* ties: the first */
  }
  /* one column block, on a narrower kind: that kind */
  if (found && !nchw && cols <= fuse__igemm_kinds[fuse__igemm_last(*kind, cols)].nr)
    *kind = fuse__igemm_last(*kind, cols);
  return found;
}

typedef void (*fuse__elt_fn)(int op, float *y, const float *a, int sa, const float *b, int sb,
                             int64_t n, float lo, float hi);
/* A kernel's instance for an ISA: f512 / f2 name them; NULL for the scalar ISA and for an ISA
   the build leaves out (FUSE_NO_AVX512, FUSE_NO_AVX2), whose instance does not exist. */
#ifndef FUSE_NO_AVX512
#define FUSE__IF512(f) f
#else
#define FUSE__IF512(f) NULL
#endif
#ifndef FUSE_NO_AVX2
#define FUSE__IF2(f) f
#else
#define FUSE__IF2(f) NULL
#endif
#define FUSE__RETURN_BY_ISA(isa, f512, f2)                                                   \
  if ((isa) == FUSE_ISA_AVX512) return FUSE__IF512(f512);                                    \
  if ((isa) == FUSE_ISA_AVX2) return FUSE__IF2(f2);                                          \
  return NULL

static fuse__elt_fn fuse__elt_pick(fuse_isa isa) {
  FUSE__RETURN_BY_ISA(isa, fuse__elt_avx512, fuse__elt_avx2);
}

static void (*fuse__pool_pick(fuse_isa isa))(const fuse__pool_args *, int64_t, int64_t) {
  FUSE__RETURN_BY_ISA(isa, fuse__pool_avx512, fuse__pool_avx2);
}

typedef void (*fuse__nchw_pack_fn)(const fuse__nchw_pack_args *g, int64_t p0, int cols, float *panel);
static fuse__nchw_pack_fn fuse__nchw_pack_pick(fuse_isa isa) {
  FUSE__RETURN_BY_ISA(isa, fuse__nchw_pack_avx512, fuse__nchw_pack_avx2);
}

/* The few-channel NCHW kernel of an ISA: its tile of two vectors, or of one (a row's end);
   its rows; the band buffer's row builder (the NCHW depthwise kernel's). */
#define FUSE__FEW_CHANNELS_MR(isa) ((isa) == FUSE_ISA_AVX512 ? 8 : 6)
static fuse__few_channels_fn fuse__few_channels_pick(fuse_isa isa, int vectors) {
  if (vectors == 2) {
    FUSE__RETURN_BY_ISA(isa, fuse__few_channels_avx512_8x32, fuse__few_channels_avx2_6x16);
  }
  FUSE__RETURN_BY_ISA(isa, fuse__few_channels_avx512_8x16, fuse__few_channels_avx2_6x8);
}
#define FUSE__FEW_CHANNELS_SEGS 128 /* segments of the reduction: channels x kernel rows x phases */
#define FUSE__FEW_CHANNELS_BUF (4.0 * 1024 * 1024) /* its band buffer's bytes at most */
/* The phase columns the few-channel NCHW kernel reads (*fill: a row's tiles of two vectors
   and the widest tap's offset, in whole vectors) and the floats of a phase row (room past
   fill for the row builder's last vector, which may overhang it). */
static int64_t fuse__few_channels_wq(int64_t OW, int64_t KW, int64_t sw, int64_t vw, int64_t *fill) {
  *fill = ((OW + 2 * vw - 1) / (2 * vw) * 2 * vw + (KW - 1) / sw + vw - 1) / vw * vw;
  return (*fill + 15) / 16 * 16 + 32;
}

typedef void (*fuse__dwc_row_fn)(float *dst, const float *x, const fuse__dw_args *d, int64_t wq,
                                 int64_t fill);
static fuse__dwc_row_fn fuse__dwc_row_pick(fuse_isa isa) {
  FUSE__RETURN_BY_ISA(isa, fuse__dwc_row_avx512, fuse__dwc_row_avx2);
}

/* The depthwise kernel of an ISA for NHWC (rows of the output) or NCHW (planes). */
static fuse__dw_fn fuse__dw_pick(fuse_isa isa, int nhwc) {
  if (nhwc) {
    FUSE__RETURN_BY_ISA(isa, fuse__dw_avx512, fuse__dw_avx2);
  }
  FUSE__RETURN_BY_ISA(isa, fuse__dwc_avx512, fuse__dwc_avx2);
}
#endif /* FUSE__SIMD */

