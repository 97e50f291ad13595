/* ------------------------------------------------------------- GEMM kernels -- */
/* conv2d with 4 or more outputs per group runs on NHWC tensors (the planner converts where the
   graph enters or leaves them) as an indirect GEMM: Y[pixel, K] = sum over taps t of
   X[pixel @ t, C] x W_t[C, K]. For a tile of MR output pixels each tap gives MR row pointers
   into the input, or into a zero row where the tap falls into the padding, so nothing is
   packed at run time, whatever the stride, padding or dilation. The weights are packed once,
   at compile, into [group][NR-column block][tap][C][NR] panels (the last block maybe
   narrower, on a tile of the same MR: fuse__igemm_last). The micro-kernel keeps its MR x NR
   tile in registers over every tap and channel, then adds the bias, runs the post-ops and
   stores once, masked where K is no multiple of NR. A tap that reads only the padding for
   every pixel of the tile is skipped. While a tile computes, its kernel brings the next column
   block's panel into L2 a line per step. Panels past 1 MB are walked tap by tap in channel
   blocks that stay in L1, the tile accumulating in the output between blocks. With few input
   channels (the 3-channel stem) a tap is a whole kernel row: KW*C contiguous floats in NHWC,
   copied with zeros into a row buffer only where the row crosses the padding. A single layer
   may run on NCHW in and out instead: the NCHW GEMM (output channels as tile rows, the input
   gathered into panels by its packer) and, for few input channels, its own kernel
   (fuse__conv_few_channels). The drivers are in run/conv_run.c, the choice of kernel and the
   weight packing in plan/layouts.c.

   The GEMM family's micro-kernels, written once as plain-C templates and instantiated per
   vector layer (vec_avx512.h, vec_avx2.h, vec_neon.h, vec_scalar.h) and tile by the instance
   files (isa_avx512.c, isa_avx2.c, isa_neon.c, isa_scalar.c):
   - gemm_tile.inc: the indirect-GEMM micro-kernel (NHWC conv, matmul, and the NCHW GEMM with
     output channels as tile rows), an MR x NR tile kept in registers over every tap and
     channel, then the bias, the post-ops (fuse__post_apply) and one store; each SIMD tile
     also as name_blocks (FUSE__GEMM_BLOCKS), which walks e->blocks column blocks in one call
     (whole tiles of 1x1 convs and stems, run/conv_run.c; the scalar twins have none: their
     drivers call per block, which keeps the Cortex-M text as it was);
   - few_channels_tile.inc: the few-input-channel NCHW stem kernel;
   - nchw_pack.inc: the NCHW GEMM's input panel packer.
   The drivers (run/conv_run.c) and the kernel table (table.c) use them on every target: the
   scalar instances (the scalar twins) run where no SIMD is compiled in and under
   FUSE_ISA_SCALAR, with tiles sized for a scalar register file, so packing and tiling are
   exercised on every CPU. The op-by-op reference kernels stay the oracle
   (fuse_compile_options.reference_kernels). */


/* The epilogue operands of a micro-kernel call. */
typedef struct fuse__tile_epi {
  const float *bias;     /* at the tile's first column, or NULL */
  const float *row_bias; /* NCHW GEMM and few-channel kernel: one per tile row, or NULL */
  const fuse_post_op *post; /* the step's post-ops, applied in order (fuse__post_apply) */
  int num_post;
  int split; /* post-ops 0 .. split - 1 on the registers, the rest by fuse__post_block */
  const float *res[FUSE_MAX_POST_OPS]; /* ADD: its residual at the tile's first element (same
                                          strides as y); NULL for other kinds */
  const float *chan[FUSE_MAX_POST_OPS]; /* SCALE, SHIFT, PRELU: their values at the tile's
                                           first channel; NULL for other kinds */
  int chan_rows; /* 1: a tile row is one channel (NCHW kernels); 0: a column is (NHWC) */
  const float *pf; /* meanwhile: weights of a later block to bring into L2, */
  int64_t npf;     /* a cache line per multiply-add step, npf lines (0: none); */
  int pf2;         /* 1: two lines a step (a panel with more lines than the tiles' steps) */
  int64_t ldw;     /* floats from one row of w to the next; 0: NR (a packed panel) */
  int blocks;      /* gemm_tile.inc: column blocks of NR full columns the call computes (0, */
  int64_t wblock;  /* 1: one), each wblock floats of w after the last (npf 0, no pf) */
} fuse__tile_epi;

/* flags of a micro-kernel call */
#define FUSE__ACCUMULATE 1 /* start from the tile in y (a later channel block), not from zero */
#define FUSE__FINISH 2     /* the last block: bias and post-ops, then the store */

/* Weights of one column block beyond which taps are blocked (packing and the drivers agree on
   it). Below it the whole panel streams from L2 for every tile, which measured faster than
   blocking on resnet's 3x3 layers (panels of a few hundred KB; L2 is 1-2 MB on the CPUs
   measured). */
#define FUSE__PANEL_BYTES (1024 * 1024)
#define FUSE__PTR_CACHE 4096 /* row pointers cached per chunk by a blocked conv */

/* The NCHW GEMM's input panel: for the output pixels p0 .. p0 + cols - 1 of one image and
   group (xg: its Cg planes), row (c * KH + kh) * KW + kw holds the input each pixel reads at
   that tap, zero in the padding and past cols (nr floats a row). */
typedef struct fuse__nchw_pack_args {
  const float *xg;
  int64_t Cg, H, W, OW, KH, KW, sh, sw, dh, dw, pt, pl, nr;
  int pointwise;
} fuse__nchw_pack_args;
#define FUSE__NCHW_PACK_RUNS 65 /* runs of a block of at most 64 pixels along output rows */

typedef void (*fuse__igemm_fn)(int ntaps, int L, const float *const *a, int64_t aoff,
                               const float *w, float *y, int64_t ldy, int rows, int cols,
                               int flags, const fuse__tile_epi *e);
typedef void (*fuse__few_channels_fn)(int nseg, const int64_t *off, const int *len,
                                      const float *x, const float *wk, float *y, int64_t ldy,
                                      int rows, int cols, const fuse__tile_epi *e);
typedef void (*fuse__nchw_pack_fn)(const fuse__nchw_pack_args *g, int64_t p0, int cols,
                                   float *panel);

/* A template's instance name: name_avx512 / name_avx2 / name_scalar (the argument expanded
   first, so a tile's name may come from a parameter macro). */
#define FUSE__KERNEL_FN(name) FUSE__VEC_FN(name)

/* The instance files (isa_avx512.c, ...) instantiate the GEMM family's templates once per tile,
   each tile given by FUSE__GEMM_NAME, FUSE__GEMM_MR and FUSE__GEMM_NV (vectors per row), and
   FUSE__GEMM_BLOCKS for its name_blocks variant (the template undefines them). */
