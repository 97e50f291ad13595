/* ------------------------------------------------------------- depthwise conv -- */
/* Depthwise conv has its own kernels, vectorized over channels on NHWC (depthwise_nhwc.inc)
   and along output rows on NCHW (depthwise_nchw.inc). Both are plain-C templates written
   against the vector layer and instantiated once per layer by the instance files
   (isa_avx512.c, ...): fuse__dw_avx512 / fuse__dw_avx2 / fuse__dw_neon / fuse__dw_scalar,
   fuse__dwc_*, fuse__dwc_row_* (the NCHW band buffer's row builder, which the few-channel NCHW
   kernel shares). */

struct fuse__dw_args {
  const float *x, *w, *bias; /* w: [KH*KW][Cp], Cp = C rounded up to 16 */
  float *y;
  const fuse_post_op *post; /* the step's post-ops, in order */
  int num_post;
  int split; /* post-ops 0 .. split - 1 on the registers, the rest by fuse__post_block */
  int split_math; /* the NHWC blocks: 0 .. split_math - 1 on the registers, SiLU and sigmoid too */
  const float *residual[FUSE_MAX_POST_OPS]; /* ADD: its operand (laid out as y); else NULL */
  const float *chan[FUSE_MAX_POST_OPS]; /* SCALE, SHIFT, PRELU: their C values; else NULL */
  int KH, KW;
  int64_t C, Cp, H, W, OH, OW, sh, sw, pt, pl, dh, dw;
  const float *zeros;     /* NCHW: the plan's zero row, W + 64 floats at least */
  unsigned char *scratch; /* NCHW: the chunk's band buffer is at scratch + slot * chunk */
  size_t slot;
  /* NHWC: output rows r0 .. r1; NCHW: planes, buf the chunk's scratch */
  void (*fn)(const fuse__dw_args *d, void *buf, int64_t r0, int64_t r1);
};

/* The vector math the NHWC depthwise blocks may apply on their registers (fuse__dw_post):
   SiLU and sigmoid, EfficientNet's, whose divisions then overlap the next block's FMAs. */
static int fuse__dw_math_in_registers(fuse_post_kind kind) {
  return kind == FUSE_POST_SILU || kind == FUSE_POST_SIGMOID;
}

/* The NCHW kernel's band buffer (see depthwise_nchw.inc): its tile shape and sizes for a
   vector of vw floats. */
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

/* Each instance file (isa_avx512.c, ...) sets two parameters of the NHWC template for its
   layer: FUSE__DW_MATH_IN_REGISTERS, whether the NHWC blocks run SiLU and sigmoid on their
   registers (split_math) or leave them to the finished row (split); FUSE__DW_PIX_S2, the
   output pixels of a stride-2 block (stride 1: eight). */
