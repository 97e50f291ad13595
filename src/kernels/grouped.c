/* -------------------------------------------------------- grouped conv -- */
/* Grouped conv whose groups are narrower than the GEMM's tiles (resnext's 4 to 32 channels
   per group, regnet's 8): on the NHWC indirect GEMM each group is its own GEMM, a tap's depth
   is Cg (4) and its tile Kg columns wide, so most of each vector and each step is overhead.
   This kernel works as the depthwise one does (depthwise_nhwc.inc): along an NHWC output row,
   a vector of output channels at a time, eight pixels per block sharing each weight vector.
   A vector of output channels spans several whole groups when they are narrow (gv groups:
   "permute"): for each input channel i of a group, lane k needs the input
   x[group(k) * Cg + i], which is one load of the gv * Cg input channels of those groups (at
   most a vector) and a lane permute (FUSE__V_PERMUTE with the lane numbers of i). A wider
   group fills its vectors on its own ("broadcast"): each lane of a vector reads the same
   input, broadcast from memory. Either way the weights are packed per vector as
   [tap][i][VW] and each loaded input vector is multiplied into every output pixel that reads
   it: 3x3 kernels with column stride 1 or 2 and column dilation 1 load an input pixel once per
   kernel row and input channel for the (up to three) outputs of the block that read it
   (grouped_block.inc), any other shape runs four pixels or one at a time. The bias, the
   post-ops and the residual add run on the registers before the one store (the vector math
   post-ops over each finished row, fuse__post_block). The template (grouped_rows.inc) is
   instantiated per vector layer by the instance files (isa_avx512.c, ...):
   fuse__grouped_avx512 / _avx2 / _neon / _scalar; the driver is fuse__conv_grouped
   (run/grouped_run.c), the choice and the packing fuse__choose_grouped and fuse__pack_grouped
   (plan/layouts.c). */

/* the blocks and the general path stay functions of their own: inlined into the row loop they
   spilled their accumulators (gcc) */
#if defined(__GNUC__) || defined(__clang__)
#define FUSE__GROUPED_OUTLINED __attribute__((noinline))
#else
#define FUSE__GROUPED_OUTLINED
#endif
#define FUSE__GROUPED_INDEX 128 /* lane numbers of the permutes: Cg x VW (Cg <= VW / 2 <= 8) */

typedef struct fuse__grouped_args fuse__grouped_args;
struct fuse__grouped_args {
  const float *x, *w, *bias; /* w: per vector of output channels, [tap][i][VW] */
  float *y;
  const fuse_post_op *post; /* the step's post-ops, in order */
  int num_post;
  int split; /* post-ops 0 .. split - 1 on the registers, the rest by fuse__post_block */
  const float *residual[FUSE_MAX_POST_OPS]; /* ADD: its operand (laid out as y); else NULL */
  const float *chan[FUSE_MAX_POST_OPS]; /* SCALE, SHIFT, PRELU: their K values; else NULL */
  int KH, KW;
  int64_t C, K, H, W, OH, OW, sh, sw, pt, pl, dh, dw;
  int64_t G, Cg, Kg;
  int64_t gv;   /* groups per vector: >= 2 permute, 1 broadcast (a vector inside one group) */
  int64_t nvec; /* vectors of output channels per pixel */
  int32_t index[FUSE__GROUPED_INDEX]; /* permute: lane k of input i reads lane index[i*VW+k] */
  /* output rows r0 .. r1 (image-major) */
  void (*fn)(const fuse__grouped_args *d, int64_t r0, int64_t r1);
};

/* what a pixel outside the input reads: a vector of zeros, or (broadcast) input i of them; the
   kernel takes groups of at most FUSE__GROUPED_MAX_CG input channels */
#define FUSE__GROUPED_MAX_CG 64
static const float fuse__grouped_zeros[FUSE__GROUPED_MAX_CG] = {0};

/* One vector of output channels: its first output channel, its lanes (the rest is masked),
   its groups' first input channel, the input floats its groups read (span) and its weights. */
typedef struct fuse__grouped_vec {
  int64_t oc0, xb;
  int lanes, span;
  const float *w;
} fuse__grouped_vec;

/* Groups per vector of vw lanes: as many whole groups as fit when both their outputs and
   their inputs fit in one vector (two or more: a permute), else 1 (broadcast). */
static int64_t fuse__grouped_per_vector(int64_t vw, int64_t Cg, int64_t Kg) {
  int64_t by_out = vw / Kg, by_in = vw / Cg;
  int64_t gv = by_out < by_in ? by_out : by_in;
  return gv >= 2 && Cg * vw <= FUSE__GROUPED_INDEX ? gv : 1;
}

/* Vectors of output channels per pixel for vw lanes. */
static int64_t fuse__grouped_vectors(int64_t vw, int64_t G, int64_t Cg, int64_t Kg) {
  int64_t gv = fuse__grouped_per_vector(vw, Cg, Kg);
  return gv > 1 ? (G + gv - 1) / gv : G * ((Kg + vw - 1) / vw);
}

/* Vector v of a step packed for vw lanes (wbase: its packed weights). */
static void fuse__grouped_vector(int64_t vw, int64_t G, int64_t Cg, int64_t Kg, int64_t gv,
                                 int64_t taps, const float *wbase, int64_t v,
                                 fuse__grouped_vec *o) {
  if (gv > 1) { /* groups g0 .. g0 + ng - 1 */
    int64_t g0 = v * gv, ng = G - g0 < gv ? G - g0 : gv;
    o->oc0 = g0 * Kg, o->xb = g0 * Cg, o->lanes = (int)(ng * Kg), o->span = (int)(ng * Cg);
  } else { /* part u of group g */
    int64_t per = (Kg + vw - 1) / vw, g = v / per, u = v % per;
    o->oc0 = g * Kg + u * vw, o->xb = g * Cg, o->span = (int)Cg;
    o->lanes = (int)(Kg - u * vw < vw ? Kg - u * vw : vw);
  }
  o->w = wbase ? wbase + (size_t)(v * taps * Cg * vw) : NULL;
}
