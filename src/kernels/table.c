/* ------------------------------------------------------------ kernel table -- */
/* Every micro-kernel with its instruction set and tile, as XNNPACK's manifests list them: the
   picks below read these tables, and test_kernels runs each row against the reference. Each
   instruction set's rows are in its instance file, next to the functions they name, as one
   macro per table (FUSE__AVX512_IGEMM_ROWS, ...), empty when the instance file is compiled out
   (FUSE_NO_AVX512, FUSE_NO_AVX2, FUSE_NO_NEON, no SIMD: the scalar rows only); a table is
   every instance file's rows in their order, then its all-zero last row. The order matters:
   the picks take the first of equals. */
#define FUSE__ISA_ROWS(table)                                                                     \
  FUSE__AVX512_##table##_ROWS FUSE__AVX2_##table##_ROWS FUSE__NEON_##table##_ROWS                 \
      FUSE__SCALAR_##table##_ROWS

/* The indirect-GEMM micro-kernels: MR rows (pixels; output channels in the NCHW GEMM) by NR
   columns; weight: how close the kernel comes to the FMA peak on its own, in percent (the
   12x16 and 12x8 tiles hold fewer accumulators); pack: the NCHW GEMM's input packer when
   the kernel runs the NCHW GEMM, whose pixel blocks of NR pay their gather and block
   overhead on fewer pixels with narrower tiles (so only the widest tiles of an ISA take it). */
typedef struct fuse__igemm_kind {
  fuse_isa isa;
  int mr, nr, weight;
  fuse__igemm_fn fn;
  fuse__nchw_pack_fn pack;
  fuse__igemm_fn blocks; /* fn walking e->blocks column blocks in one call (SIMD layers; the
                            scalar twins' drivers call fn per block) */
} fuse__igemm_kind;

static const fuse__igemm_kind fuse__igemm_kinds[] = {
    FUSE__ISA_ROWS(IGEMM)
    {FUSE_ISA_AUTO, 0, 0, 0, NULL, NULL, NULL}};

/* The few-channel NCHW kernels: MR output channels by `vectors` vectors of pixels (NR
   pixels); an ISA has a tile of two vectors and one of one (a row's end). */
typedef struct fuse__few_channels_kind {
  fuse_isa isa;
  int mr, nr, vectors;
  fuse__few_channels_fn fn;
} fuse__few_channels_kind;

static const fuse__few_channels_kind fuse__few_channels_kinds[] = {
    FUSE__ISA_ROWS(FEW_CHANNELS)
    {FUSE_ISA_AUTO, 0, 0, 0, NULL}};

/* The few-channel NCHW kernel of an ISA with a tile of `vectors` vectors (a row of
   fuse__few_channels_kinds), or NULL. */
static const fuse__few_channels_kind *fuse__few_channels_pick(fuse_isa isa, int vectors) {
  int i;
  for (i = 0; fuse__few_channels_kinds[i].fn; i++)
    if (fuse__few_channels_kinds[i].isa == isa && fuse__few_channels_kinds[i].vectors == vectors)
      return &fuse__few_channels_kinds[i];
  return NULL;
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

/* The grouped conv kernels (grouped.c), one per ISA: the vector width its weights are packed
   for. */
typedef void (*fuse__grouped_fn)(const fuse__grouped_args *d, int64_t r0, int64_t r1);
typedef struct fuse__grouped_kind {
  fuse_isa isa;
  int width;
  fuse__grouped_fn fn;
} fuse__grouped_kind;

static const fuse__grouped_kind fuse__grouped_kinds[] = {
    FUSE__ISA_ROWS(GROUPED)
    {FUSE_ISA_AUTO, 0, NULL}};

/* The grouped conv kernel of an ISA, or NULL. */
static const fuse__grouped_kind *fuse__grouped_pick(fuse_isa isa) {
  int i;
  for (i = 0; fuse__grouped_kinds[i].fn; i++)
    if (fuse__grouped_kinds[i].isa == isa) return &fuse__grouped_kinds[i];
  return NULL;
}

/* The depthwise, pool and element-wise kernels of each ISA (depthwise.c, pool_eltwise.c), the
   scalar twins on every target. */
typedef void (*fuse__dw_fn)(const fuse__dw_args *d, void *buf, int64_t p0, int64_t p1);
typedef void (*fuse__dwc_row_fn)(float *dst, const float *x, const fuse__dw_args *d, int64_t wq,
                                 int64_t fill);
typedef void (*fuse__pool_fn)(const fuse__pool_args *d, int64_t r0, int64_t r1);
typedef void (*fuse__elt_fn)(int op, float *y, const float *a, int sa, const float *b, int sb,
                             int64_t n, float lo, float hi);
typedef struct fuse__isa_ops {
  fuse_isa isa;
  fuse__dw_fn dw_nhwc, dw_nchw; /* depthwise: rows of an NHWC output, NCHW planes */
  fuse__dwc_row_fn dwc_row; /* the NCHW depthwise band buffer's row builder (few channels too) */
  fuse__pool_fn pool;       /* max / average pool on NHWC */
  fuse__elt_fn elt;         /* element-wise rows */
} fuse__isa_ops;

static const fuse__isa_ops fuse__isa_ops_table[] = {
    FUSE__ISA_ROWS(ISA_OPS)
    {FUSE_ISA_AUTO, NULL, NULL, NULL, NULL, NULL}};

/* The row of an ISA; the all-NULL last row when it has none. */
static const fuse__isa_ops *fuse__isa_ops_of(fuse_isa isa) {
  const fuse__isa_ops *o = fuse__isa_ops_table;
  while (o->isa != FUSE_ISA_AUTO && o->isa != isa) o++;
  return o;
}
static fuse__elt_fn fuse__elt_pick(fuse_isa isa) { return fuse__isa_ops_of(isa)->elt; }
static fuse__pool_fn fuse__pool_pick(fuse_isa isa) { return fuse__isa_ops_of(isa)->pool; }
static fuse__dwc_row_fn fuse__dwc_row_pick(fuse_isa isa) { return fuse__isa_ops_of(isa)->dwc_row; }
/* The depthwise kernel of an ISA for NHWC (rows of the output) or NCHW (planes). */
static fuse__dw_fn fuse__dw_pick(fuse_isa isa, int nhwc) {
  return nhwc ? fuse__isa_ops_of(isa)->dw_nhwc : fuse__isa_ops_of(isa)->dw_nchw;
}

/* The element-wise chain and row kernels of each ISA (chain_rows.c). */
static const fuse__row_ops fuse__row_ops_table[] = {
    FUSE__ISA_ROWS(ROW_OPS)
    {FUSE_ISA_AUTO, NULL, NULL, NULL, NULL, NULL, NULL, NULL}};

/* The row kernels of an ISA; all NULL for the reference kernels (FUSE_ISA_AUTO). An ISA
   compiled out (FUSE_NO_AVX2, ...) gets the scalar twins. */
static const fuse__row_ops *fuse__rows_of(fuse_isa isa) {
  const fuse__row_ops *o = fuse__row_ops_table;
  while (o->isa != FUSE_ISA_AUTO && o->isa != isa) o++;
  if (o->isa == FUSE_ISA_AUTO && isa != FUSE_ISA_AUTO)
    for (o = fuse__row_ops_table; o->isa != FUSE_ISA_SCALAR; o++) {
    }
  return o;
}

/* The Winograd transforms of each ISA and m (winograd.c). */
static const fuse__wino_kind fuse__wino_kinds[] = {
    FUSE__ISA_ROWS(WINO)
    {FUSE_ISA_AUTO, 0, NULL, NULL}};

/* The transforms of F(m,3) on an ISA, or NULL. */
static const fuse__wino_kind *fuse__wino_pick(fuse_isa isa, int m) {
  int i;
  for (i = 0; fuse__wino_kinds[i].input; i++)
    if (fuse__wino_kinds[i].isa == isa && fuse__wino_kinds[i].m == m) return &fuse__wino_kinds[i];
  return NULL;
}

/* The plan's ISA's transpose (transpose.inc) of a rows x cols matrix: y[j][i] = x[i][j]. The
   AVX-512 CPUs take the AVX2 one; an ISA compiled out, the scalar twin. */
static void fuse__transpose_isa(fuse_isa isa, const float *x, int64_t ldx, float *y, int64_t ldy,
                                int64_t rows, int64_t cols) {
#if defined(FUSE__SIMD) && !defined(FUSE_NO_AVX2)
  if (isa == FUSE_ISA_AVX2 || isa == FUSE_ISA_AVX512) {
    fuse__transpose_avx2(x, ldx, y, ldy, rows, cols);
    return;
  }
#endif
#ifdef FUSE__NEON
  if (isa == FUSE_ISA_NEON) {
    fuse__transpose_neon(x, ldx, y, ldy, rows, cols);
    return;
  }
#endif
  (void)isa;
  fuse__transpose_scalar(x, ldx, y, ldy, rows, cols);
}

/* the instance files' rows are in their tables now */
#undef FUSE__ISA_ROWS
#undef FUSE__AVX512_IGEMM_ROWS
#undef FUSE__AVX512_FEW_CHANNELS_ROWS
#undef FUSE__AVX512_GROUPED_ROWS
#undef FUSE__AVX512_ISA_OPS_ROWS
#undef FUSE__AVX512_ROW_OPS_ROWS
#undef FUSE__AVX512_WINO_ROWS
#undef FUSE__AVX2_IGEMM_ROWS
#undef FUSE__AVX2_FEW_CHANNELS_ROWS
#undef FUSE__AVX2_GROUPED_ROWS
#undef FUSE__AVX2_ISA_OPS_ROWS
#undef FUSE__AVX2_ROW_OPS_ROWS
#undef FUSE__AVX2_WINO_ROWS
#undef FUSE__NEON_IGEMM_ROWS
#undef FUSE__NEON_FEW_CHANNELS_ROWS
#undef FUSE__NEON_GROUPED_ROWS
#undef FUSE__NEON_ISA_OPS_ROWS
#undef FUSE__NEON_ROW_OPS_ROWS
#undef FUSE__NEON_WINO_ROWS
#undef FUSE__SCALAR_IGEMM_ROWS
#undef FUSE__SCALAR_FEW_CHANNELS_ROWS
#undef FUSE__SCALAR_GROUPED_ROWS
#undef FUSE__SCALAR_ISA_OPS_ROWS
#undef FUSE__SCALAR_ROW_OPS_ROWS
#undef FUSE__SCALAR_WINO_ROWS
