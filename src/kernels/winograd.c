/* --------------------------------------------------------- Winograd kernels -- */
/* 3x3 stride-1 convolutions (dilation 1, any groups, any padding) as Winograd F(m,3), m = 2,
   4 or 6 (Lavin and Gray 2016, on NHWC): the output is cut into m x m tiles; each tile's
   (m+2) x (m+2) input pixels are transformed (V = BT d B) into (m+2)^2 positions; at each
   position the tiles by their input channels multiply the transformed weights (U = G g GT,
   made at compile) as a GEMM [tiles x Cg] x [Cg x Kg] per group; the products go back to
   m x m outputs (Y = AT M A), where the bias and the post-ops are applied before the one
   store. A tile's 9 m^2 multiply-adds per channel pair become (m+2)^2: 2.25x fewer for
   F(2,3), 4x for F(4,3), 5.06x for F(6,3), for the price of the transforms and of rounding
   error that grows with m (tests/test_winograd.c measures it against float64). A NaN or an
   infinity in the input reaches every output of the tiles whose window holds it (inf - inf
   in the transforms is NaN), not only the outputs whose 3x3 window reads it, as in every
   Winograd convolution; no_winograd = 1 keeps the direct kernels' propagation.

   The position GEMMs run on the indirect GEMM's micro-kernels (gemm_tile.inc) and its packed
   weight format: the transformed weights are packed as a conv with (m+2)^2 taps,
   [group][column block][position][channel][NR], and a micro-kernel call takes MR row
   pointers into the transformed input. The driver (run/winograd_run.c) works through blocks
   of tiles: the block's input transformed into the chunk's scratch, the GEMMs position by
   position into a second buffer, then the output transform.

   Transform matrices from the interpolation points (Toom-Cook): AT[i][j] = p_j^i,
   G[j][k] = p_j^k / prod_{l != j}(p_j - p_l), BT row j = the coefficients of
   prod_{l != j}(x - p_l) (monic), and the point at infinity last (AT: 1 in the last row,
   G: [0 0 1], BT: prod_l (x - p_l)). Points: F(2,3) 0, 1, -1; F(4,3) 0, 1, -1, -2, 1/2;
   F(6,3) 0, +-1, +-2, +-1/2. For F(4,3) the usual 0, +-1, +-2 gave 6x the direct kernel's
   error against float64 on 64 channels and 0, 1, -1, -2, 1/2 1.5-2.5x (a float32 simulation
   of every pair of extra points from +-{2, 1/2, 3/2, 2/3, 3, 1/3, 3/4, 4/3, 1/4, 4}, then
   tests/test_winograd.c on the kernels); for F(6,3) no four extra points from that set did
   clearly better than +-2, +-1/2, which stay at about 10x. Every coefficient is exact in
   float but G's, which are applied in double at compile. */
static const float fuse__wino_bt2[4][4] = {
    {-1, 0, 1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, -1, 0, 1}};
static const float fuse__wino_at2[2][4] = {{1, 1, 1, 0}, {0, 1, -1, 1}};
static const double fuse__wino_g2[4][3] = {
    {-1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};

static const float fuse__wino_bt4[6][6] = {
    {1, -1.5f, -2, 1.5f, 1, 0},  {0, -1, 0.5f, 2.5f, 1, 0}, {0, 1, -2.5f, 0.5f, 1, 0},
    {0, 0.5f, -1, -0.5f, 1, 0}, {0, -2, -1, 2, 1, 0},       {0, 1, -1.5f, -2, 1.5f, 1}};
static const float fuse__wino_at4[4][6] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, -2, 0.5f, 0}, {0, 1, 1, 4, 0.25f, 0}, {0, 1, -1, -8, 0.125f, 1}};
static const double fuse__wino_g4[6][3] = {
    {1, 0, 0},
    {1.0 / 3, 1.0 / 3, 1.0 / 3},
    {-1.0 / 3, 1.0 / 3, -1.0 / 3},
    {1.0 / 15, -2.0 / 15, 4.0 / 15},
    {-16.0 / 15, -8.0 / 15, -4.0 / 15},
    {0, 0, 1}};

static const float fuse__wino_bt6[8][8] = {
    {-1, 0, 5.25f, 0, -5.25f, 0, 1, 0},      {0, 1, 1, -4.25f, -4.25f, 1, 1, 0},
    {0, -1, 1, 4.25f, -4.25f, -1, 1, 0},     {0, 0.5f, 0.25f, -2.5f, -1.25f, 2, 1, 0},
    {0, -0.5f, 0.25f, 2.5f, -1.25f, -2, 1, 0}, {0, 2, 4, -2.5f, -5, 0.5f, 1, 0},
    {0, -2, 4, 2.5f, -5, -0.5f, 1, 0},       {0, -1, 0, 5.25f, 0, -5.25f, 0, 1}};
static const float fuse__wino_at6[6][8] = {
    {1, 1, 1, 1, 1, 1, 1, 0},
    {0, 1, -1, 2, -2, 0.5f, -0.5f, 0},
    {0, 1, 1, 4, 4, 0.25f, 0.25f, 0},
    {0, 1, -1, 8, -8, 0.125f, -0.125f, 0},
    {0, 1, 1, 16, 16, 0.0625f, 0.0625f, 0},
    {0, 1, -1, 32, -32, 0.03125f, -0.03125f, 1}};
static const double fuse__wino_g6[8][3] = {
    {-1, 0, 0},
    {-2.0 / 9, -2.0 / 9, -2.0 / 9},
    {-2.0 / 9, 2.0 / 9, -2.0 / 9},
    {1.0 / 90, 1.0 / 45, 2.0 / 45},
    {1.0 / 90, -1.0 / 45, 2.0 / 45},
    {32.0 / 45, 16.0 / 45, 8.0 / 45},
    {32.0 / 45, -16.0 / 45, 8.0 / 45},
    {0, 0, 1}};

/* What a transform reads besides its block: the NHWC input and output and their shapes, the
   tile grid, the strides of the transformed buffers, and the epilogue (as the GEMM kernels'
   fuse__tile_epi holds it, at the step's first element and channel). */
typedef struct fuse__wino_args {
  const float *x;
  float *y;
  int64_t C, H, W, K, OH, OW, pt, pl;
  int64_t th, tw;   /* tiles down and across an image */
  int64_t ldv, ldm; /* floats from one position to the next in the transformed input / output */
  int64_t ldy;      /* floats from one output pixel to the next: K, or a concat's channels when
                       the output is a slice of it (plan/in_place.c); a residual is laid out as y */
  const float *bias;
  const fuse_post_op *post;
  int num_post;
  const float *res[FUSE_MAX_POST_OPS];  /* ADD: the residual (NHWC, as y) */
  const float *chan[FUSE_MAX_POST_OPS]; /* SCALE, SHIFT, PRELU: their K values */
} fuse__wino_args;

typedef void (*fuse__wino_input_fn)(const fuse__wino_args *a, int64_t t0, int nt, float *v);
typedef void (*fuse__wino_output_fn)(const fuse__wino_args *a, int64_t t0, int nt,
                                     const float *m);

/* A term cf * x of a transform's sum acc (cf a constant the compiler sees): none for a zero,
   an addition or subtraction for +-1, the first term without an addition (any counts them). */
#define FUSE__WINO_MADD(cf, x, acc)                                                          \
  ((cf) == 1.0f ? FUSE__V_ADD(acc, x) : (cf) == -1.0f ? FUSE__V_SUB(acc, x) : FUSE__V_FMA(FUSE__V_SET1(cf), x, acc))
#define FUSE__WINO_SCALE(cf, x) ((cf) == 1.0f ? (x) : FUSE__V_MUL(FUSE__V_SET1(cf), x))
#define FUSE__WINO_TERM(cf, x, acc, any)                                                     \
  ((cf) == 0.0f ? (acc) : (any)++ ? FUSE__WINO_MADD(cf, x, acc) : FUSE__WINO_SCALE(cf, x))

/* A transform's instance name: name_avx512, ... (the argument expanded first). The instance
   files (isa_avx512.c, ...) instantiate the transforms of their vector layer, F(2,3), F(4,3)
   and F(6,3) each (winograd_sizes.inc); the macros above and this one end with the
   implementation (undefs.h). */
#define FUSE__WINO_FN(name) FUSE__VEC_FN(name)

/* The transforms of each ISA and m, as the kernel table lists the micro-kernels. */
typedef struct fuse__wino_kind {
  fuse_isa isa;
  int m;
  fuse__wino_input_fn input;
  fuse__wino_output_fn output;
} fuse__wino_kind;
