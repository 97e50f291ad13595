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
#if defined(FUSE__X86) && (defined(__GNUC__) || defined(__clang__)) && \
    (!defined(FUSE_NO_AVX2) || !defined(FUSE_NO_AVX512))
#define FUSE__SIMD 1
#include <immintrin.h>

/* Depthwise conv on NHWC, vectorized over channels, an output row at a time: inside the row
   four pixels share each weight load; at the edges a pixel runs only its taps inside the
   input. The epilogue runs on the register before the one store (masked on the last vector). */
#define FUSE__DW_EPI(acc, pix)                                                               \
  for (q = 0; q < np; q++) {                                                                 \
    if (kind[q] == FUSE_POST_ADD)                                                            \
      acc = FUSE__VADD(acc, FUSE__VMLOAD(res[q] + (pix) * C + c0, 0));                       \
    else                                                                                     \
      acc = FUSE__VMIN(FUSE__VSET1(hi[q]), FUSE__VMAX(FUSE__VSET1(lo[q]), acc));             \
  }                                                                                          \
  FUSE__VMSTORE(d->y + (pix) * C + c0, 0, acc);
#define FUSE__DW(NAME, TARGET)                                                               \
  TARGET static void NAME(const fuse__dw_args *d, void *buf, int64_t r0, int64_t r1) {       \
    int64_t row, c0, ow, C = d->C, sw = d->sw, xs = d->dw * C;                               \
    int q, kh, kw;                                                                           \
    int spec = d->KH == d->KW && (d->KH == 3 || d->KH == 5) && d->dw == 1 && sw <= 2         \
                   ? d->KH * 10 + (int)sw : 0;                                               \
    /* the post-ops in locals: the stores through y cannot change them */                  \
    const float *res[FUSE_MAX_POST_OPS];                                                     \
    int kind[FUSE_MAX_POST_OPS], np = d->num_post;                                           \
    float lo_[FUSE_MAX_POST_OPS], hi_[FUSE_MAX_POST_OPS], *lo = lo_, *hi = hi_;              \
    for (q = 0; q < np; q++) res[q] = d->res[q], kind[q] = d->kind[q], lo[q] = d->lo[q], hi[q] = d->hi[q]; \
    (void)buf;                                                                               \
    /* output columns whose taps all fall inside the input: [in0, in1) */                   \
    int64_t in0 = d->pl <= 0 ? 0 : (d->pl + sw - 1) / sw;                                    \
    int64_t in1 = d->W - 1 - (d->KW - 1) * d->dw + d->pl < 0                                 \
                      ? 0 : (d->W - 1 - (d->KW - 1) * d->dw + d->pl) / sw + 1;               \
    if (in1 > d->OW) in1 = d->OW;                                                            \
    if (in0 > in1) in0 = in1;                                                                \
    for (row = r0; row < r1; row++) {                                                        \
      int64_t n = row / d->OH, oh = row % d->OH, ih0 = oh * d->sh - d->pt;                   \
      int64_t pix0 = row * d->OW;                                                            \
      int kh0 = 0, kh1 = d->KH;                                                              \
      const float *xn = d->x + n * d->H * d->W * C;                                          \
      while (kh0 < kh1 && ih0 + kh0 * d->dh < 0) kh0++;                                      \
      while (kh1 > kh0 && ih0 + (kh1 - 1) * d->dh >= d->H) kh1--;                            \
      for (c0 = 0; c0 < C; c0 += FUSE__VW) {                                                 \
        int cols = (int)(C - c0 < FUSE__VW ? C - c0 : FUSE__VW);                             \
        FUSE__MASK_DECL(0)                                                                   \
        FUSE__V b = d->bias ? FUSE__VMLOAD(d->bias + c0, 0) : FUSE__VZERO();                 \
        for (ow = 0; spec && ow < d->OW; ow += 8) { /* blocks of eight pixels (below) */    \
          int64_t iw0 = ow * sw - d->pl, npix = d->OW - ow < 8 ? d->OW - ow : 8;              \
          switch (spec * 2 + (ow < in0 || ow + 8 > in1)) {                                   \
          case 62: FUSE__DWN_BLOCK(3, 1, 0) break;                                           \
          case 63: FUSE__DWN_BLOCK(3, 1, 1) break;                                           \
          case 64: FUSE__DWN_BLOCK(3, 2, 0) break;                                           \
          case 65: FUSE__DWN_BLOCK(3, 2, 1) break;                                           \
          case 102: FUSE__DWN_BLOCK(5, 1, 0) break;                                          \
          case 103: FUSE__DWN_BLOCK(5, 1, 1) break;                                          \
          case 104: FUSE__DWN_BLOCK(5, 2, 0) break;                                          \
          default: FUSE__DWN_BLOCK(5, 2, 1) break;                                           \
          }                                                                                  \
        }                                                                                    \
        for (ow = 0; !spec && ow < d->OW;) {                                                 \
          int64_t iw0 = ow * sw - d->pl;                                                     \
          if (ow >= in0 && ow + 4 <= in1) { /* four pixels, every tap inside */              \
            FUSE__V a0 = b, a1 = b, a2 = b, a3 = b;                                          \
            for (kh = kh0; kh < kh1; kh++) {                                                 \
              const float *xr = xn + ((ih0 + kh * d->dh) * d->W + iw0) * C + c0;             \
              const float *wr = d->w + (int64_t)kh * d->KW * d->Cp + c0;                     \
              for (kw = 0; kw < d->KW; kw++) {                                               \
                FUSE__V wv = FUSE__VLOAD(wr + kw * d->Cp);                                   \
                const float *xp = xr + kw * xs;                                              \
                a0 = FUSE__VFMA(FUSE__VMLOAD(xp, 0), wv, a0);                                \
                a1 = FUSE__VFMA(FUSE__VMLOAD(xp + sw * C, 0), wv, a1);                       \
                a2 = FUSE__VFMA(FUSE__VMLOAD(xp + 2 * sw * C, 0), wv, a2);                   \
                a3 = FUSE__VFMA(FUSE__VMLOAD(xp + 3 * sw * C, 0), wv, a3);                   \
              }                                                                              \
            }                                                                                \
            FUSE__DW_EPI(a0, pix0 + ow)                                                      \
            FUSE__DW_EPI(a1, pix0 + ow + 1)                                                  \
            FUSE__DW_EPI(a2, pix0 + ow + 2)                                                  \
            FUSE__DW_EPI(a3, pix0 + ow + 3)                                                  \
            ow += 4;                                                                         \
          } else { /* one pixel, its taps inside the input */                                \
            FUSE__V acc = b;                                                                 \
            int kw0 = 0, kw1 = d->KW;                                                        \
            while (kw0 < kw1 && iw0 + kw0 * d->dw < 0) kw0++;                                \
            while (kw1 > kw0 && iw0 + (kw1 - 1) * d->dw >= d->W) kw1--;                      \
            for (kh = kh0; kh < kh1; kh++) {                                                 \
              const float *xr = xn + ((ih0 + kh * d->dh) * d->W + iw0 + kw0 * d->dw) * C + c0; \
              const float *wr = d->w + ((int64_t)kh * d->KW + kw0) * d->Cp + c0;             \
              for (kw = 0; kw < kw1 - kw0; kw++)                                             \
                acc = FUSE__VFMA(FUSE__VMLOAD(xr + kw * xs, 0), FUSE__VLOAD(wr + kw * d->Cp), acc); \
            }                                                                                \
            FUSE__DW_EPI(acc, pix0 + ow)                                                     \
            ow++;                                                                            \
          }                                                                                  \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

/* NHWC, 3x3 or 5x5 with column dilation 1 and column stride 1 or 2: the row in blocks of eight
   pixels, a kernel row's weights in registers, and each input pixel loaded once per kernel
   row for every output pixel that uses it (10 loads for 24 FMAs on 3x3 stride 1, where the
   four-pixel block needs 15 for 12). Blocks at the row's ends read zeros for the taps
   outside and store only the pixels that exist. kk, swk, edge: constants, so only existing
   taps and checks remain. */
#define FUSE__P8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define FUSE__J19(X)                                                                         \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18)
#define FUSE__DWN_W(u, kw) FUSE__V wv##kw = kw < kk ? FUSE__VLOAD(wr + kw * d->Cp) : FUSE__VZERO();
/* input pixel J of the block, tap column kw: output pixel (J - kw) / swk */
#define FUSE__DWN_T(J, kw)                                                                   \
  if (kw < kk && J >= kw && (J - kw) % swk == 0 && (J - kw) / swk < 8) {                     \
    if ((J - kw) / swk == 0) e0 = FUSE__VFMA(xv, wv##kw, e0);                                 \
    else if ((J - kw) / swk == 1) e1 = FUSE__VFMA(xv, wv##kw, e1);                            \
    else if ((J - kw) / swk == 2) e2 = FUSE__VFMA(xv, wv##kw, e2);                            \
    else if ((J - kw) / swk == 3) e3 = FUSE__VFMA(xv, wv##kw, e3);                            \
    else if ((J - kw) / swk == 4) e4 = FUSE__VFMA(xv, wv##kw, e4);                            \
    else if ((J - kw) / swk == 5) e5 = FUSE__VFMA(xv, wv##kw, e5);                            \
    else if ((J - kw) / swk == 6) e6 = FUSE__VFMA(xv, wv##kw, e6);                            \
    else e7 = FUSE__VFMA(xv, wv##kw, e7);                                                    \
  }
#define FUSE__DWN_J(J)                                                                       \
  if (J < 7 * swk + kk) {                                                                    \
    FUSE__V xv = !edge || (iw0 + J >= 0 && iw0 + J < d->W) ? FUSE__VMLOAD(xr + (iw0 + J) * C, 0) \
                                                           : FUSE__VZERO();                  \
    FUSE__L5A(FUSE__DWN_T, J)                                                                \
  }
#define FUSE__DWN_DECL(p) FUSE__V e##p = b;
#define FUSE__DWN_ADD(p)                                                                     \
  if (!edge || p < npix) e##p = FUSE__VADD(e##p, FUSE__VMLOAD(res[q] + (pix0 + ow + p) * C + c0, 0));
#define FUSE__DWN_CLAMP(p) e##p = FUSE__VMIN(hv, FUSE__VMAX(lv, e##p));
#define FUSE__DWN_STORE(p) if (!edge || p < npix) FUSE__VMSTORE(d->y + (pix0 + ow + p) * C + c0, 0, e##p);
/* EDGE: some taps fall outside the row (they read zeros) or some pixels past it */
#define FUSE__DWN_BLOCK(K, SW, EDGE)                                                         \
  {                                                                                          \
    const int64_t kk = K, swk = SW, edge = EDGE;                                             \
    FUSE__P8(FUSE__DWN_DECL)                                                                 \
    for (kh = kh0; kh < kh1; kh++) {                                                         \
      const float *xr = xn + (ih0 + kh * d->dh) * d->W * C + c0;                             \
      const float *wr = d->w + (int64_t)kh * kk * d->Cp + c0;                                \
      FUSE__L5A(FUSE__DWN_W, 0)                                                              \
      FUSE__J19(FUSE__DWN_J)                                                                 \
    }                                                                                        \
    for (q = 0; q < np; q++) {                                                               \
      if (kind[q] == FUSE_POST_ADD) {                                                        \
        FUSE__P8(FUSE__DWN_ADD)                                                              \
      } else {                                                                               \
        FUSE__V lv = FUSE__VSET1(lo[q]), hv = FUSE__VSET1(hi[q]);                            \
        FUSE__P8(FUSE__DWN_CLAMP)                                                            \
      }                                                                                      \
    }                                                                                        \
    FUSE__P8(FUSE__DWN_STORE)                                                                \
  }

typedef struct fuse__dw_args fuse__dw_args;
struct fuse__dw_args {
  const float *x, *w, *bias; /* w: [KH*KW][Cp], Cp = C rounded up to 16 */
  float *y;
  const float *res[FUSE_MAX_POST_OPS];
  int kind[FUSE_MAX_POST_OPS];
  float lo[FUSE_MAX_POST_OPS], hi[FUSE_MAX_POST_OPS];
  int num_post, KH, KW;
  int64_t C, Cp, H, W, OH, OW, sh, sw, pt, pl, dh, dw;
  const float *zeros;     /* NCHW: the plan's zero row, W + 64 floats at least */
  unsigned char *scratch; /* NCHW: the chunk's band buffer is at scratch + slot * chunk */
  size_t slot;
  /* NHWC: output rows r0 .. r1; NCHW: planes, buf the chunk's scratch */
  void (*fn)(const fuse__dw_args *d, void *buf, int64_t r0, int64_t r1);
};

/* Depthwise conv on NCHW (when its input comes NCHW: the graph's input, an NCHW-only op),
   vectorized along output rows. Units are (image, channel) planes. Three kernels:
   - 3x3 / 5x5, row dilation 1, row stride 1 or 2, column stride 1 (MobileNet's): straight
     from the input, tiles of 4 or 8 rows x 1 vector with the weights in registers (below);
     the vectors that cross the row's ends load under masks, rows above or below the plane
     read a zero row.
   - the same kernels with another column stride: from a band buffer (next).
   - anything else: a plane is cut into bands of output rows; a band's input rows are copied
     into a buffer (in L1), zero-padded and split into sw column phases (phase p holds padded
     columns p, p + sw, ...), so that for any stride, dilation or padding the VW outputs from
     column ow need, for each tap, one contiguous load at a fixed offset from the tile. A
     tile is 8 output vectors (rows x vectors = 1x8, 2x4, 4x2 or 8x1, as the row is wide),
     each tap one broadcast weight and 8 FMAs.
   Each runs the epilogue on the registers before the one store (masked at the plane's
   edges). Measured on a Sapphire Rapids core, the loop order (row tiles outer, vectors
   inner) matters most: the tile's input and output rows stay in L1. */
#define FUSE__DWC_BUF 6144 /* floats of a band buffer: it and the band's output stay in L1 */
typedef struct fuse__dwc_geom {
  int64_t nb, rb; /* a tile: rb output rows x nb vectors */
  int64_t wq;     /* floats of a phase row (a multiple of 16: rows stay 64-byte aligned) */
  int64_t rs;     /* floats of a buffer row: sw phase rows */
  int64_t band;   /* output rows per band, a multiple of 8 */
  int64_t rows;   /* buffer rows of a band */
} fuse__dwc_geom;

static void fuse__dwc_geometry(int64_t vw, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                               int64_t sh, int64_t sw, int64_t dh, int64_t dw, fuse__dwc_geom *g) {
  int64_t nv = (OW + vw - 1) / vw, span = (KH - 1) * dh + 1, ncb, band;
  g->nb = nv >= 8 ? 8 : nv >= 4 ? 4 : nv >= 2 ? 2 : 1;
  g->rb = 8 / g->nb;
  ncb = (nv + g->nb - 1) / g->nb; /* column tiles of a row; the last may overhang OW */
  g->wq = (ncb * g->nb * vw + (KW - 1) * dw / sw + 15) / 16 * 16 + 32; /* + a row's tail */
  g->rs = sw * g->wq;
  band = FUSE__DWC_BUF / g->rs < span + sh ? 1 : (FUSE__DWC_BUF / g->rs - span) / sh + 1;
  band = band < 8 ? 8 : band / 8 * 8; /* whole tiles of every kind: 8, 4, 2 or 1 rows */
  if (band > (OH + 7) / 8 * 8) band = (OH + 7) / 8 * 8;
  g->band = band;
  g->rows = (band - 1) * sh + span;
}

/* Bytes of an NCHW depthwise step's scratch, the most either vector width needs: the tap
   offsets, then the band buffer. */
static size_t fuse__dwc_scratch(int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                int64_t sw, int64_t dh, int64_t dw) {
  fuse__dwc_geom g8, g16;
  int64_t f8, f16;
  fuse__dwc_geometry(8, OH, OW, KH, KW, sh, sw, dh, dw, &g8);
  fuse__dwc_geometry(16, OH, OW, KH, KW, sh, sw, dh, dw, &g16);
  f8 = g8.rows * g8.rs, f16 = g16.rows * g16.rs;
  return ((size_t)(KH * KW) * sizeof(int64_t) + 63) / 64 * 64 + (size_t)(f8 > f16 ? f8 : f16) * sizeof(float);
}

/* slots of a tile: s / nbk its row, s % nbk its vector */
#define FUSE__S8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define FUSE__DWC_AT(s) ((s / nbk) * d->OW + (s % nbk) * FUSE__VW) /* from the tile's first output */
#define FUSE__DWC_DECL(s) FUSE__V a##s = bias;
#define FUSE__DWC_FMA(s) a##s = FUSE__VFMA(FUSE__VLOAD(tp + (s / nbk) * rstep + (s % nbk) * FUSE__VW), wv, a##s);
#define FUSE__DWC_ADD(s) a##s = FUSE__VADD(a##s, FUSE__VLOAD(rp + FUSE__DWC_AT(s)));
#define FUSE__DWC_CLAMP(s) a##s = FUSE__VMIN(hv, FUSE__VMAX(lv, a##s));
/* A tile's epilogue on its accumulators a0 .. a7: each post-op over the whole tile in turn
   (ADD(s) reads the residual at rp), then STORE(s). */
#define FUSE__DW_POSTS(ADD, CLAMP, STORE)                                                    \
  for (q = 0; q < np; q++) {                                                                 \
    if (kind[q] == FUSE_POST_ADD) {                                                          \
      const float *rp = res[q] + tile;                                                       \
      FUSE__S8(ADD)                                                                          \
    } else {                                                                                 \
      FUSE__V lv = FUSE__VSET1(lo[q]), hv = FUSE__VSET1(hi[q]);                              \
      FUSE__S8(CLAMP)                                                                        \
    }                                                                                        \
  }                                                                                          \
  FUSE__S8(STORE)
#define FUSE__DWC_STORE(s) FUSE__VSTOREU(yp + FUSE__DWC_AT(s), a##s);
#define FUSE__DWC_KADD(s)                                                                    \
  if (oh0 + s / nbk < d->OH) a##s = FUSE__VADD(a##s, FUSE__VKLOAD(rp + FUSE__DWC_AT(s), cm[s % nbk]));
#define FUSE__DWC_KSTORE(s) if (oh0 + s / nbk < d->OH) FUSE__VKSTORE(yp + FUSE__DWC_AT(s), cm[s % nbk], a##s);
/* the tiles of a band, NBK vectors wide; the epilogue one post-op at a time over the tile */
#define FUSE__DWC_TILES(NBK)                                                                 \
  {                                                                                          \
    const int64_t nbk = NBK;                                                                 \
    for (ow0 = 0; ow0 < d->OW; ow0 += nbk * FUSE__VW) {                                      \
      FUSE__MASKT cm[8]; /* the valid lanes of the tile's vectors */                        \
      for (k = 0; k < nbk; k++) {                                                            \
        int64_t n_ = d->OW - ow0 - k * FUSE__VW;                                             \
        cm[k] = FUSE__MASK_OF(n_ < 0 ? 0 : n_ > FUSE__VW ? FUSE__VW : n_);                   \
      }                                                                                      \
      for (r0 = 0; r0 < g.band && b0 + r0 < d->OH; r0 += 8 / nbk) {                          \
        const float *bp = buf + r0 * rstep + ow0;                                            \
        int64_t oh0 = b0 + r0, tile = plane + oh0 * d->OW + ow0;                             \
        FUSE__S8(FUSE__DWC_DECL)                                                             \
        for (t = 0; t < taps; t++) {                                                         \
          const float *tp = bp + off[t]; /* the tap's first input vector */                  \
          FUSE__V wv = FUSE__VSET1(wc[t * d->Cp]);                                           \
          FUSE__S8(FUSE__DWC_FMA)                                                            \
        }                                                                                    \
        if (oh0 + 8 / nbk <= d->OH && ow0 + nbk * FUSE__VW <= d->OW) {                       \
          float *yp = d->y + tile;                                                           \
          FUSE__DW_POSTS(FUSE__DWC_ADD, FUSE__DWC_CLAMP, FUSE__DWC_STORE)                    \
        } else { /* the plane's edge: masked, the same steps */                             \
          float *yp = d->y + tile;                                                           \
          FUSE__DW_POSTS(FUSE__DWC_KADD, FUSE__DWC_CLAMP, FUSE__DWC_KSTORE)                  \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }
/* 3x3 and 5x5 with row dilation 1, row stride 1 or 2: a tile is rbk output rows x 1 vector
   (rbk = 4, or 8 straight from the input on AVX-512) with the kernel's weights held in
   registers; each input row the tile reads is loaded once per tap column and feeds every
   output row that uses it (3x3 stride 1: 18 loads for 36 FMAs, 30 for 72, where the 8-slot
   tile needs 81 loads for 72). Written with constants kk (kernel size), shk (row stride) and
   rbk so that the compiler drops every combination that does not exist. */
#define FUSE__L5A(X, a) X(a, 0) X(a, 1) X(a, 2) X(a, 3) X(a, 4)
#define FUSE__L5B(X, a, b) X(a, b, 0) X(a, b, 1) X(a, b, 2) X(a, b, 3) X(a, b, 4)
#define FUSE__DWK_W(u, kh, kw)                                                               \
  FUSE__V w##kh##_##kw = kh < kk && kw < kk ? FUSE__VSET1(wc[(kh * kk + kw) * d->Cp]) : FUSE__VZERO();
#define FUSE__DWK_WROW(u, kh) FUSE__L5B(FUSE__DWK_W, u, kh)
/* input row J, tap column kw, kernel row kh: output row (J - kh) / shk of the tile */
#define FUSE__DWK_T(J, kw, kh)                                                               \
  if (kh < kk && J >= kh && (J - kh) % shk == 0 && (J - kh) / shk < rbk) {                   \
    if ((J - kh) / shk == 0) a0 = FUSE__VFMA(xv, w##kh##_##kw, a0);                           \
    else if ((J - kh) / shk == 1) a1 = FUSE__VFMA(xv, w##kh##_##kw, a1);                      \
    else if ((J - kh) / shk == 2) a2 = FUSE__VFMA(xv, w##kh##_##kw, a2);                      \
    else if ((J - kh) / shk == 3) a3 = FUSE__VFMA(xv, w##kh##_##kw, a3);                      \
    else if ((J - kh) / shk == 4) a4 = FUSE__VFMA(xv, w##kh##_##kw, a4);                      \
    else if ((J - kh) / shk == 5) a5 = FUSE__VFMA(xv, w##kh##_##kw, a5);                      \
    else if ((J - kh) / shk == 6) a6 = FUSE__VFMA(xv, w##kh##_##kw, a6);                      \
    else a7 = FUSE__VFMA(xv, w##kh##_##kw, a7);                                              \
  }
#define FUSE__DWK_X(J, kw)                                                                   \
  if (kw < kk) {                                                                             \
    FUSE__V xv = FUSE__VLOAD(p + J * g.rs + co[kw]);                                         \
    FUSE__L5B(FUSE__DWK_T, J, kw)                                                            \
  }
#define FUSE__DWK_J(J) if (J < (rbk - 1) * shk + kk) { FUSE__L5A(FUSE__DWK_X, J) }
/* slot s of a tile of rbk rows (4 or 8): the 8-slot steps, on the rows that exist; the
   epilogue of the tile, whole or masked at the plane's edge */
#define FUSE__DWK_ADD(s) if (s < rbk) { FUSE__DWC_ADD(s) }
#define FUSE__DWK_CLAMP(s) if (s < rbk) { FUSE__DWC_CLAMP(s) }
#define FUSE__DWK_STORE(s) if (s < rbk) { FUSE__DWC_STORE(s) }
#define FUSE__DWK_KADD(s) if (s < rbk) { FUSE__DWC_KADD(s) }
#define FUSE__DWK_KSTORE(s) if (s < rbk) { FUSE__DWC_KSTORE(s) }
#define FUSE__DWK_EPI                                                                        \
  if (oh0 + rbk <= d->OH && ow0 + FUSE__VW <= d->OW) {                                         \
    FUSE__DW_POSTS(FUSE__DWK_ADD, FUSE__DWK_CLAMP, FUSE__DWK_STORE)                          \
  } else {                                                                                   \
    FUSE__DW_POSTS(FUSE__DWK_KADD, FUSE__DWK_CLAMP, FUSE__DWK_KSTORE)                        \
  }
#define FUSE__DWK_TILES(K, SH)                                                               \
  {                                                                                          \
    const int64_t kk = K, shk = SH, nbk = 1, rbk = 4; /* 8 rows measured slower here */     \
    int64_t co[5];                                                                           \
    FUSE__L5A(FUSE__DWK_WROW, 0)                                                             \
    for (k = 0; k < 5; k++) co[k] = k < kk ? off[k] : 0;                                     \
    for (ow0 = 0; ow0 < d->OW; ow0 += FUSE__VW) {                                            \
      FUSE__MASKT cm[1];                                                                     \
      cm[0] = FUSE__MASK_OF(d->OW - ow0 < FUSE__VW ? d->OW - ow0 : FUSE__VW);                \
      for (r0 = 0; r0 < g.band && b0 + r0 < d->OH; r0 += rbk) {                              \
        const float *p = buf + r0 * shk * g.rs + ow0;                                        \
        int64_t oh0 = b0 + r0, tile = plane + oh0 * d->OW + ow0;                             \
        float *yp = d->y + tile;                                                             \
        FUSE__S8(FUSE__DWC_DECL)                                                             \
        FUSE__J19(FUSE__DWK_J)                                                               \
        FUSE__DWK_EPI                                                                        \
      }                                                                                      \
    }                                                                                        \
  }
/* The same with column stride 1, straight from the input (no band buffer): rw[J] is input
   row J of the tile at the vector's first column (a zero row above and below the plane);
   vectors that cross the left or right edge load under a mask per tap column. */
#define FUSE__DWK_XD(J, kw)                                                                  \
  if (kw < kk) {                                                                             \
    FUSE__V xv = FUSE__VLOAD(rw[J] + kw * d->dw);                                            \
    FUSE__L5B(FUSE__DWK_T, J, kw)                                                            \
  }
#define FUSE__DWK_XM(J, kw)                                                                  \
  if (kw < kk) {                                                                             \
    FUSE__V xv = FUSE__VKLOAD(rw[J] + kw * d->dw, mp[kw]);                                   \
    FUSE__L5B(FUSE__DWK_T, J, kw)                                                            \
  }
#define FUSE__DWK_JD(J) if (J < (rbk - 1) * shk + kk) { FUSE__L5A(FUSE__DWK_XD, J) }
#define FUSE__DWK_JM(J) if (J < (rbk - 1) * shk + kk) { FUSE__L5A(FUSE__DWK_XM, J) }
#define FUSE__DWK_ROW(J)                                                                     \
  if (J < (rbk - 1) * shk + kk) rb[J] = ihb + J >= 0 && ihb + J < d->H ? xp + (ihb + J) * d->W : zrow;
#define FUSE__DWK_COL(J) if (J < (rbk - 1) * shk + kk) rw[J] = rb[J] + c0;
/* the load masks of the vector from output column o: lanes whose input is inside the row */
#define FUSE__DWK_MASKS(m, o)                                                                \
  for (k = 0; k < kk; k++) {                                                                 \
    int64_t a_ = (o) - d->pl + k * d->dw, lo_ = a_ < 0 ? -a_ : 0, hi_ = d->W - a_;           \
    lo_ = lo_ > FUSE__VW ? FUSE__VW : lo_;                                                   \
    hi_ = hi_ < lo_ ? lo_ : hi_ > FUSE__VW ? FUSE__VW : hi_;                                 \
    m[k] = FUSE__MASK_RANGE(lo_, hi_);                                                       \
  }
/* row tiles outer, vectors inner: the tile's input rows and output rows stay in L1 */
#define FUSE__DWK_DIRECT(K, SH)                                                              \
  {                                                                                          \
    const int64_t kk = K, shk = SH, nbk = 1, rbk = FUSE__VW == 16 ? 8 : 4;                   \
    const float *rb[19], *rw[19];                                                            \
    FUSE__MASKT mk[3][5]; /* per tap column: the first vector, the last, another */         \
    const FUSE__MASKT *mp;                                                                   \
    int64_t last = (d->OW - 1) / FUSE__VW * FUSE__VW;                                        \
    FUSE__DWK_MASKS(mk[0], 0)                                                                \
    FUSE__DWK_MASKS(mk[1], last)                                                             \
    for (u = u0; u < u1; u++) {                                                              \
      int64_t c = u % d->C, plane = u * d->OH * d->OW;                                       \
      const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;                              \
      FUSE__V bias = FUSE__VSET1(d->bias ? d->bias[c] : 0.0f);                               \
      FUSE__L5A(FUSE__DWK_WROW, 0)                                                           \
      for (r0 = 0; r0 < d->OH; r0 += rbk) {                                                  \
        int64_t ihb = r0 * shk - d->pt;                                                      \
        FUSE__J19(FUSE__DWK_ROW)                                                             \
        for (ow0 = 0; ow0 < d->OW; ow0 += FUSE__VW) {                                        \
          int64_t c0 = ow0 - d->pl, oh0 = r0, tile = plane + oh0 * d->OW + ow0;              \
          float *yp = d->y + tile;                                                           \
          FUSE__MASKT cm[1];                                                                 \
          FUSE__S8(FUSE__DWC_DECL)                                                           \
          cm[0] = FUSE__MASK_OF(d->OW - ow0 < FUSE__VW ? d->OW - ow0 : FUSE__VW);            \
          FUSE__J19(FUSE__DWK_COL)                                                           \
          if (c0 < 0 || c0 + (kk - 1) * d->dw + FUSE__VW > d->W) {                           \
            mp = mk[ow0 == 0 ? 0 : ow0 == last ? 1 : 2];                                     \
            if (ow0 != 0 && ow0 != last) FUSE__DWK_MASKS(mk[2], ow0)                         \
            FUSE__J19(FUSE__DWK_JM)                                                          \
          } else {                                                                           \
            FUSE__J19(FUSE__DWK_JD)                                                          \
          }                                                                                  \
          FUSE__DWK_EPI                                                                      \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }
#define FUSE__DWC(NAME, TARGET)                                                              \
  /* one buffer row: input row x (NULL: a padding row) as padded columns in sw phases. A row \
     writes its input columns (and zeros past them) and nothing else: the padding, zeroed   \
     once, stays zero. Only the phase columns below fill matter. */                         \
  TARGET static void NAME##_row(float *dst, const float *x, const fuse__dw_args *d,         \
                                int64_t wq, int64_t fill) {                                  \
    int64_t i, p, sw = d->sw, pl = d->pl, W = sw * fill - pl, n;                             \
    if (W > d->W) W = d->W; /* the input columns that land below fill */                    \
    if (!x) {                                                                                \
      for (p = 0; p < sw; p++)                                                               \
        for (i = 0; i < fill; i += FUSE__VW) FUSE__VSTORE(dst + p * wq + i, FUSE__VZERO());  \
    } else if (sw == 1) {                                                                    \
      for (i = 0; i + FUSE__VW <= W; i += FUSE__VW) FUSE__VSTOREU(dst + pl + i, FUSE__VLOAD(x + i)); \
      if (i < W) FUSE__VSTOREU(dst + pl + i, FUSE__VKLOAD(x + i, FUSE__MASK_OF(W - i)));     \
    } else if (sw == 2) { /* x[2k] to padded column 2k + pl, x[2k + 1] to 2k + 1 + pl */    \
      float *ev = dst + (pl & 1) * wq + pl / 2, *od = dst + ((pl + 1) & 1) * wq + (pl + 1) / 2; \
      for (i = 0; 2 * i < W; i += FUSE__VW) {                                                \
        FUSE__V v0, v1, e, o;                                                                \
        if (2 * i + 2 * FUSE__VW <= W) {                                                     \
          v0 = FUSE__VLOAD(x + 2 * i), v1 = FUSE__VLOAD(x + 2 * i + FUSE__VW);               \
        } else {                                                                             \
          n = W - 2 * i;                                                                     \
          v0 = FUSE__VKLOAD(x + 2 * i, FUSE__MASK_OF(n < FUSE__VW ? n : FUSE__VW));           \
          v1 = n > FUSE__VW ? FUSE__VKLOAD(x + 2 * i + FUSE__VW, FUSE__MASK_OF(n - FUSE__VW)) \
                            : FUSE__VZERO();                                                 \
        }                                                                                    \
        FUSE__VDEINT(v0, v1, e, o);                                                          \
        FUSE__VSTOREU(ev + i, e);                                                            \
        FUSE__VSTOREU(od + i, o);                                                            \
      }                                                                                      \
    } else {                                                                                 \
      for (i = 0; i < W; i++) dst[(i + pl) % sw * wq + (i + pl) / sw] = x[i];               \
    }                                                                                        \
  }                                                                                          \
  TARGET static void NAME(const fuse__dw_args *d, void *scratch, int64_t u0, int64_t u1) {   \
    fuse__dwc_geom g;                                                                        \
    int64_t u, b0, r0, ow0, t, j, k, taps = (int64_t)d->KH * d->KW, rstep, fill;             \
    const float *zrow = d->zeros + 32; /* a zero input row, with room on both sides */     \
    int64_t *off = (int64_t *)scratch;                                                       \
    float *buf = (float *)((unsigned char *)scratch + (taps * (int64_t)sizeof(int64_t) + 63) / 64 * 64); \
    /* the post-ops in locals: the stores through y cannot change them */                  \
    const float *res[FUSE_MAX_POST_OPS];                                                     \
    int kind[FUSE_MAX_POST_OPS], np = d->num_post, q;                                        \
    float lo[FUSE_MAX_POST_OPS], hi[FUSE_MAX_POST_OPS];                                      \
    for (q = 0; q < np; q++) res[q] = d->res[q], kind[q] = d->kind[q], lo[q] = d->lo[q], hi[q] = d->hi[q]; \
    /* the register kernels: 3x3 or 5x5, row dilation 1, row stride 1 or 2 */              \
    int spec = d->KH == d->KW && (d->KH == 3 || d->KH == 5) && d->dh == 1 && d->sh <= 2      \
                   ? d->KH * 10 + (int)d->sh : 0;                                            \
    fuse__dwc_geometry(FUSE__VW, d->OH, d->OW, d->KH, d->KW, d->sh, d->sw, d->dh, d->dw, &g); \
    rstep = d->sh * g.rs;                                                                    \
    /* valid outputs read phase columns below fill; the rest stays zero from here */        \
    fill = (d->OW + (d->KW - 1) * d->dw / d->sw + FUSE__VW - 1) / FUSE__VW * FUSE__VW;       \
    if (fill > g.wq) fill = g.wq;                                                            \
    for (j = 0; !(spec && d->sw == 1) && j < g.rows * g.rs; j += FUSE__VW)                   \
      FUSE__VSTORE(buf + j, FUSE__VZERO());                                                  \
    for (t = 0; t < taps; t++) { /* tap kh, kw: buffer row kh * dh, padded column kw * dw */ \
      int64_t cw = (t % d->KW) * d->dw;                                                      \
      off[t] = (t / d->KW) * d->dh * g.rs + (cw % d->sw) * g.wq + cw / d->sw;                \
    }                                                                                        \
    if (spec && d->sw == 1) { /* every plane straight from the input */                     \
      switch (spec) {                                                                        \
      case 31: FUSE__DWK_DIRECT(3, 1) break;                                                 \
      case 32: FUSE__DWK_DIRECT(3, 2) break;                                                 \
      case 51: FUSE__DWK_DIRECT(5, 1) break;                                                 \
      default: FUSE__DWK_DIRECT(5, 2) break;                                                 \
      }                                                                                      \
      return;                                                                                \
    }                                                                                        \
    for (u = u0; u < u1; u++) {                                                              \
      int64_t c = u % d->C, plane = u * d->OH * d->OW;                                       \
      const float *xp = d->x + u * d->H * d->W, *wc = d->w + c;                              \
      FUSE__V bias = FUSE__VSET1(d->bias ? d->bias[c] : 0.0f);                               \
      for (b0 = 0; b0 < d->OH; b0 += g.band) {                                               \
        for (j = 0; j < g.rows; j++) {                                                       \
          int64_t ih = b0 * d->sh - d->pt + j;                                               \
          NAME##_row(buf + j * g.rs, ih >= 0 && ih < d->H ? xp + ih * d->W : NULL, d, g.wq, fill); \
        }                                                                                    \
        switch (spec ? spec : g.nb) {                                                        \
        case 31: FUSE__DWK_TILES(3, 1) break;                                                \
        case 32: FUSE__DWK_TILES(3, 2) break;                                                \
        case 51: FUSE__DWK_TILES(5, 1) break;                                                \
        case 52: FUSE__DWK_TILES(5, 2) break;                                                \
        case 8: FUSE__DWC_TILES(8) break;                                                    \
        case 4: FUSE__DWC_TILES(4) break;                                                    \
        case 2: FUSE__DWC_TILES(2) break;                                                    \
        default: FUSE__DWC_TILES(1) break;                                                   \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

/* Element-wise rows: y[i] = op(a[i * sa], b[i * sb]) with sa, sb 0 or 1 (add, sub, mul,
   maximum, minimum: a NaN in a is kept, as in the reference), relu and clip of a. */
#define FUSE__ELT(NAME, TARGET)                                                              \
  TARGET static void NAME(int op, float *y, const float *a, int sa, const float *b, int sb,  \
                          int64_t n, float lo, float hi) {                                   \
    int64_t i;                                                                               \
    for (i = 0; i < n; i += FUSE__VW) {                                                      \
      int cols = (int)(n - i < FUSE__VW ? n - i : FUSE__VW);                                 \
      FUSE__MASK_DECL(0)                                                                     \
      FUSE__V x = sa ? FUSE__VMLOAD(a + i, 0) : FUSE__VSET1(a[0]), v, z;                     \
      z = op == FUSE__OP_RELU || op == FUSE__OP_CLIP ? x                                     \
          : sb ? FUSE__VMLOAD(b + i, 0) : FUSE__VSET1(b[0]);                                 \
      switch (op) {                                                                          \
      case FUSE__OP_ADD: v = FUSE__VADD(x, z); break;                                        \
      case FUSE__OP_SUB: v = FUSE__VSUB(x, z); break;                                        \
      case FUSE__OP_MUL: v = FUSE__VMUL(x, z); break;                                        \
      case FUSE__OP_MAXIMUM: v = FUSE__VMAXNAN(x, z); break;                                 \
      case FUSE__OP_MINIMUM: v = FUSE__VMINNAN(x, z); break;                                 \
      case FUSE__OP_RELU: v = FUSE__VBELOW(x, FUSE__VZERO()); break; /* x < 0 ? 0 : x */    \
      default: v = FUSE__VABOVE(FUSE__VBELOW(x, FUSE__VSET1(lo)), FUSE__VSET1(hi)); break;   \
      }                                                                                      \
      FUSE__VMSTORE(y + i, 0, v);                                                            \
    }                                                                                        \
  }

/* Max / average pool on NHWC, vectorized over channels, output rows r0 .. r1. Max keeps a NaN
   (x > m or x unordered takes x), as the reference does; average divides by the window as
   the reference clips it. */
typedef struct fuse__pool_args fuse__pool_args;
struct fuse__pool_args {
  const float *x;
  float *y;
  const fuse_pool2d_attrs *a;
  int is_max;
  int64_t C, H, W, OH, OW;
  void (*fn)(const fuse__pool_args *d, int64_t r0, int64_t r1);
};
#define FUSE__POOL(NAME, TARGET)                                                             \
  TARGET static void NAME(const fuse__pool_args *d, int64_t r0, int64_t r1) {                \
    const fuse_pool2d_attrs *a = d->a;                                                       \
    int64_t row, ow, c0, C = d->C, ih, iw;                                                   \
    for (row = r0; row < r1; row++) {                                                        \
      int64_t n = row / d->OH, oh = row % d->OH, h0 = oh * a->strides[0] - a->padding[0];    \
      const float *xn = d->x + n * d->H * d->W * C;                                          \
      for (ow = 0; ow < d->OW; ow++) {                                                       \
        int64_t w0 = ow * a->strides[1] - a->padding[1];                                     \
        float *yp = d->y + (row * d->OW + ow) * C;                                           \
        if (d->is_max) {                                                                     \
          int kh, kw, kh0, kh1, kw0, kw1;                                                    \
          fuse__taps(h0, a->dilation[0], a->kernel[0], d->H, &kh0, &kh1);                    \
          fuse__taps(w0, a->dilation[1], a->kernel[1], d->W, &kw0, &kw1);                    \
          for (c0 = 0; c0 < C; c0 += FUSE__VW) {                                             \
            int cols = (int)(C - c0 < FUSE__VW ? C - c0 : FUSE__VW);                         \
            FUSE__MASK_DECL(0)                                                               \
            FUSE__V m = FUSE__VSET1(-HUGE_VALF);                                             \
            for (kh = kh0; kh < kh1; kh++) {                                                 \
              ih = h0 + (int64_t)kh * a->dilation[0];                                        \
              for (kw = kw0; kw < kw1; kw++) {                                               \
                iw = w0 + (int64_t)kw * a->dilation[1];                                      \
                m = FUSE__VMAXNAN(FUSE__VMLOAD(xn + (ih * d->W + iw) * C + c0, 0), m);       \
              }                                                                              \
            }                                                                                \
            FUSE__VMSTORE(yp + c0, 0, m);                                                    \
          }                                                                                  \
        } else {                                                                             \
          int64_t h1 = h0 + a->kernel[0], w1 = w0 + a->kernel[1], hs = h0, ws = w0, area;    \
          FUSE__V inv;                                                                       \
          if (h1 > d->H + a->padding[2]) h1 = d->H + a->padding[2];                          \
          if (w1 > d->W + a->padding[3]) w1 = d->W + a->padding[3];                          \
          area = (h1 - hs) * (w1 - ws);                                                      \
          if (hs < 0) hs = 0;                                                                \
          if (ws < 0) ws = 0;                                                                \
          if (h1 > d->H) h1 = d->H;                                                          \
          if (w1 > d->W) w1 = d->W;                                                          \
          if (!a->count_include_pad) area = (h1 - hs) * (w1 - ws);                           \
          inv = FUSE__VSET1((float)(1.0 / (double)area));                                   \
          for (c0 = 0; c0 < C; c0 += FUSE__VW) {                                             \
            int cols = (int)(C - c0 < FUSE__VW ? C - c0 : FUSE__VW);                         \
            FUSE__MASK_DECL(0)                                                               \
            FUSE__V sum = FUSE__VZERO();                                                     \
            for (ih = hs; ih < h1; ih++)                                                     \
              for (iw = ws; iw < w1; iw++)                                                   \
                sum = FUSE__VADD(sum, FUSE__VMLOAD(xn + (ih * d->W + iw) * C + c0, 0));      \
            FUSE__VMSTORE(yp + c0, 0, FUSE__VMUL(sum, inv));                                 \
          }                                                                                  \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

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
FUSE__DW(fuse__dw_avx512, __attribute__((target("avx512f"))))
#define FUSE__VSTORE(p, v) _mm512_store_ps(p, v)
#define FUSE__VSTOREU(p, v) _mm512_storeu_ps(p, v)
#define FUSE__VDEINT(v0, v1, ev, od) /* the even and the odd floats of v0, v1 */           \
  {                                                                                          \
    __m512i ix_ = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); \
    ev = _mm512_permutex2var_ps(v0, ix_, v1);                                                \
    od = _mm512_permutex2var_ps(v0, _mm512_add_epi32(ix_, _mm512_set1_epi32(1)), v1);        \
  }
FUSE__DWC(fuse__dwc_avx512, __attribute__((target("avx512f"))))
#undef FUSE__VSTORE
#undef FUSE__VSTOREU
#undef FUSE__VDEINT
FUSE__POOL(fuse__pool_avx512, __attribute__((target("avx512f"))))
FUSE__ELT(fuse__elt_avx512, __attribute__((target("avx512f"))))
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
FUSE__DW(fuse__dw_avx2, __attribute__((target("avx2,fma"))))
#define FUSE__VSTORE(p, v) _mm256_store_ps(p, v)
#define FUSE__VSTOREU(p, v) _mm256_storeu_ps(p, v)
#define FUSE__VDEINT(v0, v1, ev, od) /* the even and the odd floats of v0, v1 */           \
  {                                                                                          \
    ev = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(v0, v1, 0x88)), 0xd8)); \
    od = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(v0, v1, 0xdd)), 0xd8)); \
  }
FUSE__DWC(fuse__dwc_avx2, __attribute__((target("avx2,fma"))))
#undef FUSE__VSTORE
#undef FUSE__VSTOREU
#undef FUSE__VDEINT
FUSE__POOL(fuse__pool_avx2, __attribute__((target("avx2,fma"))))
FUSE__ELT(fuse__elt_avx2, __attribute__((target("avx2,fma"))))
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
/* y[j][i] = x[i][j] for a rows x cols matrix (ldx floats between rows of x, ldy between rows
   of y): 8 x 8 blocks transposed in registers, the ragged edges one float at a time. For
   layout conversions (AVX-512 CPUs have AVX2). */
__attribute__((target("avx2,fma"))) static void fuse__transpose_avx2(const float *x, int64_t ldx,
                                                                     float *y, int64_t ldy,
                                                                     int64_t rows, int64_t cols) {
  int64_t i0, j0, i, j, r8 = rows / 8 * 8, c8 = cols / 8 * 8, h;
  /* a band of 256 rows of x (in L2), then 8 columns at a time down the band: y is written
     8 rows at a time, each in one run */
  for (i0 = 0; i0 < r8; i0 += 256)
    for (j0 = 0; j0 < c8; j0 += 8)
      for (h = i0; h < i0 + 256 && h < r8; h += 8) {
      const float *xp = x + h * ldx + j0;
      float *yp = y + j0 * ldy + h;
      __m256 a0 = _mm256_loadu_ps(xp), a1 = _mm256_loadu_ps(xp + ldx);
      __m256 a2 = _mm256_loadu_ps(xp + 2 * ldx), a3 = _mm256_loadu_ps(xp + 3 * ldx);
      __m256 a4 = _mm256_loadu_ps(xp + 4 * ldx), a5 = _mm256_loadu_ps(xp + 5 * ldx);
      __m256 a6 = _mm256_loadu_ps(xp + 6 * ldx), a7 = _mm256_loadu_ps(xp + 7 * ldx);
      __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
      __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
      __m256 t4 = _mm256_unpacklo_ps(a4, a5), t5 = _mm256_unpackhi_ps(a4, a5);
      __m256 t6 = _mm256_unpacklo_ps(a6, a7), t7 = _mm256_unpackhi_ps(a6, a7);
      __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
      __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
      __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
      __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
      _mm256_storeu_ps(yp, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(yp + ldy, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(yp + 2 * ldy, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(yp + 3 * ldy, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(yp + 4 * ldy, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(yp + 5 * ldy, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(yp + 6 * ldy, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(yp + 7 * ldy, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
  for (i = 0; i < rows; i++) /* the right edge of the full rows, then the bottom rows */
    for (j = i < r8 ? c8 : 0; j < cols; j++) y[j * ldy + i] = x[i * ldx + j];
}
#endif

#endif /* FUSE__SIMD */

