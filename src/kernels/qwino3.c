/* ------------------------------------------------- Winograd F(3x3, 3x3) on int16 pairs -- */
/* (FUSE__QL_WINO3, kernels/qconv.c's top.) For 3x3 convs of stride 1 and padding 1 in plans
   for AVX-512 on a CPU with VNNI: a 5x5 patch of the input gives a tile of 3x3 outputs with 25
   products an input and output channel where the direct tile takes 81; vpdpwssd takes half
   vpdpbusd's products an instruction, at the same rate, so about 1.6 times fewer instructions
   for the products. Exact in integers, so the outputs are the direct conv's bit for bit:

     points 0, 1, -1, 2 and infinity;
     V = B'dB on the uint8 input as it is (the padding pixel x_zero, and the zero point out of
       the bias, bias - x_zero * sum(w), as quads do), B' = [2 -1 -2 1 0; 0 -2 -1 1 0;
       0 2 -3 1 0; 0 -1 0 1 0; 0 2 -1 -2 1]: rows of absolute sum 6 at most, |V| <= 36 * 255;
     U = (6G) g (6G)' on the int8 weights (plan/quant_pack.c), 6G = [3 0 0; -3 -3 -3;
       -1 1 -1; 1 2 4; 0 0 6]: 36 times the transformed weights, |U| <= 81 * 128; both int16;
     M = the sum over the channels of U V per position, two products a lane (each pair's sum
       < 2^28), mod 2^32 as vpdpwssd and vpaddd wrap;
     A'MA, A' = [1 1 1 1 0; 0 1 -1 2 0; 0 1 1 4 1]: 36 times the sum mod 2^32; times the
       inverse of 9 mod 2^32 (vpmulld wraps): 4 times the sum mod 2^32, shifted right by 2:
       exact while 4 times the sum fits int32, |sum| <= 9 * C * 255 * 128 < 2^29: C <= 1827
       (plans take C <= 1024, as F(2x2) does).

   The weights [K / 16][25 positions][C / 2][16][2] int16, 25 / 9 as many values as the direct
   form's and twice its bytes a value (the direct quads are int8): 50 / 9 of its bytes. A block
   of tiles has its patches transformed ([tile][position][C rounded up to even] int16); then
   per nb panels of 16 output channels, per MR tiles, each position's products summed over the
   channels by a products tile (qwino3_tile.inc: nb panels by MR tiles, the 25 positions in
   one call, raw int32 sums; the scalar pairs tile with h NULL is its twin), each tile's 25
   sums of a panel transformed into its 3x3 outputs and requantized on registers. Only builds with AVX-512 have it
   (FUSE__HAVE_QWINO3): the scalar transforms are the test oracle there, and no Cortex-M or
   NEON build grows by it. */

/* Whether a conv of C input channels, kernel KH x KW, attributes a, runs as F(3x3) in a plan
   for isa on a CPU of fuse__cpu_vnni() `vnni`: 3x3, stride 1, padding 1, no dilation, one
   group, C <= 1024, AVX-512 with VNNI. */
static int fuse__qwino3_fits(fuse_isa isa, int vnni, int64_t C, int64_t KH, int64_t KW,
                             const fuse_conv2d_attrs *a) {
#ifdef FUSE__HAVE_QWINO3
  int d;
  if (isa != FUSE_ISA_AVX512 || !(vnni & 1) || KH != 3 || KW != 3 || C > 1024 || a->groups != 1)
    return 0;
  for (d = 0; d < 2; d++)
    if (a->strides[d] != 1 || a->dilation[d] != 1 || a->padding[d] != 1 || a->padding[2 + d] != 1)
      return 0;
  return 1;
#else
  (void)isa, (void)vnni, (void)C, (void)KH, (void)KW, (void)a;
  return 0;
#endif
}

#ifdef FUSE__HAVE_QWINO3

/* A patch (25 pixel pointers, row-major; the padding pixel where one falls outside)
   transformed: v[p * pstride + c] for the 25 positions p, channels 0 to cs (C rounded up to
   even; the channels past C 0). */
typedef void (*fuse__qwino3_in_fn)(const unsigned char *const *px, int64_t C, int64_t cs,
                                   int64_t pstride, int16_t *v);
/* A tile's sums of one panel (position p, channel j at m[p * pstride + j], 16 channels)
   transformed: 36 times the 3x3 outputs' sums, / 36, + bias, requantized; the first kvalid
   channels of output pixel q (row-major) stored at y[q] + at (y[q] NULL: outside the image). */
typedef void (*fuse__qwino3_out_fn)(const int32_t *m, int64_t pstride, unsigned char *const *y,
                                    int64_t at, int kvalid, const int32_t *bias,
                                    const float *scale, const fuse__qhead *h);

/* The products of a group of tiles: for each position p (0 to 24), the rows of gv tiles (int16
   pairs, csteps of them; tile r's at v + p * vpos + r * vtile) against the position's weights
   (w + p * wpos: nb panels of 16 output channels, pstride bytes apart, 16 pairs a step), the
   int32 sums of tile r, channel j at m[p * mpos + r * ld + j]. */
typedef void (*fuse__qwino3_group_fn)(int csteps, const int16_t *v, int64_t vpos, int64_t vtile,
                                      int gv, const int16_t *w, int64_t wpos, int64_t pstride,
                                      int32_t *m, int64_t mpos, int ld);

/* The scalar twin: the pairs tile (with h NULL: the raw sums, one panel by 4 tiles) a position. */
static void fuse__qwino3_group_scalar(int csteps, const int16_t *v, int64_t vpos, int64_t vtile,
                                      int gv, const int16_t *w, int64_t wpos, int64_t pstride,
                                      int32_t *m, int64_t mpos, int ld) {
  const void *rows[4];
  int p, r;
  for (p = 0; p < 25; p++) {
    for (r = 0; r < 4; r++) rows[r] = v + p * vpos + (r < gv ? r : gv - 1) * vtile;
    fuse__qtile_pairs_scalar(1, csteps, rows, w + p * wpos, pstride, (unsigned char *)(m + p * mpos),
                             ld * 4, gv, ld, NULL, NULL, NULL);
  }
}

/* B'a of a column (or row) of 5, in any integer type: 2(a0 - a2) + (a3 - a1), (a3 - a2) - 2a1,
   2(a1 - a2) + (a3 - a2), a3 - a1, 2(a1 - a3) + (a4 - a2). */
#define FUSE__QW3_BT(T, ADD, SUB, a, o)                                                            \
  do {                                                                                         \
    T db_ = SUB((a)[3], (a)[1]), dc_ = SUB((a)[3], (a)[2]), ac_ = SUB((a)[0], (a)[2]);          \
    T bc_ = SUB((a)[1], (a)[2]), bd_ = SUB((a)[1], (a)[3]), ec_ = SUB((a)[4], (a)[2]);          \
    (o)[0] = ADD(ADD(ac_, ac_), db_), (o)[1] = SUB(SUB(dc_, (a)[1]), (a)[1]);                  \
    (o)[2] = ADD(ADD(bc_, bc_), dc_), (o)[3] = db_, (o)[4] = ADD(ADD(bd_, bd_), ec_);           \
  } while (0)
/* A'a of 5: a0 + (a1 + a2) + a3, (a1 - a2) + 2a3, (a1 + a2) + 4a3 + a4. */
#define FUSE__QW3_AT(T, ADD, SUB, a, o)                                                            \
  do {                                                                                         \
    T s_ = ADD((a)[1], (a)[2]), d_ = SUB((a)[1], (a)[2]), a3_ = ADD((a)[3], (a)[3]);            \
    (o)[0] = ADD(ADD((a)[0], s_), (a)[3]), (o)[1] = ADD(d_, a3_);                              \
    (o)[2] = ADD(ADD(s_, ADD(a3_, a3_)), (a)[4]);                                              \
  } while (0)
#define FUSE__QW3_ADDI(a, b) ((a) + (b))
#define FUSE__QW3_SUBI(a, b) ((a) - (b))

static void fuse__qwino3_in_scalar(const unsigned char *const *px, int64_t C, int64_t cs,
                                   int64_t pstride, int16_t *v) {
  int64_t c;
  int i, j;
  for (c = 0; c < cs; c++) {
    int32_t d[5], t[25], o[5];
    for (j = 0; j < 5; j++) { /* B'd, column j */
      for (i = 0; i < 5; i++) d[i] = c < C ? px[5 * i + j][c] : 0;
      FUSE__QW3_BT(int32_t, FUSE__QW3_ADDI, FUSE__QW3_SUBI, d, o);
      for (i = 0; i < 5; i++) t[5 * i + j] = o[i];
    }
    for (i = 0; i < 5; i++) { /* (B'd)B, row i */
      FUSE__QW3_BT(int32_t, FUSE__QW3_ADDI, FUSE__QW3_SUBI, t + 5 * i, o);
      for (j = 0; j < 5; j++) v[(5 * i + j) * pstride + c] = (int16_t)o[j];
    }
  }
}

static void fuse__qwino3_out_scalar(const int32_t *m, int64_t pstride, unsigned char *const *y,
                                    int64_t at, int kvalid, const int32_t *bias,
                                    const float *scale, const fuse__qhead *h) {
  int i, j, q;
  for (j = 0; j < kvalid; j++) {
    uint32_t a[5], t[15], o[3]; /* (unsigned: mod 2^32, as vpaddd) */
    for (i = 0; i < 5; i++) { /* A'm, column i */
      for (q = 0; q < 5; q++) a[q] = (uint32_t)m[(5 * q + i) * pstride + j];
      FUSE__QW3_AT(uint32_t, FUSE__QW3_ADDI, FUSE__QW3_SUBI, a, o);
      for (q = 0; q < 3; q++) t[5 * q + i] = o[q];
    }
    for (i = 0; i < 3; i++) { /* (A'm)A, row i */
      FUSE__QW3_AT(uint32_t, FUSE__QW3_ADDI, FUSE__QW3_SUBI, t + 5 * i, o);
      for (q = 0; q < 3; q++) {
        uint32_t four = o[q] * 0x38e38e39u; /* / 9: 4 times the sum, mod 2^32 */
        int32_t s = four >= 0x80000000u ? -(int32_t)(~four) - 1 : (int32_t)four, acc;
        uint32_t b = (uint32_t)(s >> 2) + (uint32_t)bias[j]; /* (mod 2^32, as the tiles) */
        acc = b >= 0x80000000u ? -(int32_t)(~b) - 1 : (int32_t)b;
        if (y[3 * i + q]) y[3 * i + q][at + j] = (unsigned char)(fuse__qtile_requant(acc, scale[j], h) & 0xff);
      }
    }
  }
}

/* 32 channels a step (int16 lanes of a zmm; |V| <= 9180), the last step's masked. */
FUSE__QV512 static void fuse__qwino3_in_avx512(const unsigned char *const *px, int64_t C,
                                               int64_t cs, int64_t pstride, int16_t *v) {
  int64_t c;
  int i, j;
  for (c = 0; c < cs; c += 32) { /* (c < C: cs is C or C + 1) */
    const __mmask32 in = C - c >= 32 ? 0xffffffffu : (1u << (C - c)) - 1u;
    const __mmask32 out = cs - c >= 32 ? 0xffffffffu : (1u << (cs - c)) - 1u;
    __m512i t[25];
    FUSE__UNROLL
    for (j = 0; j < 5; j++) { /* B'd, column j */
      __m512i d[5], o[5];
      FUSE__UNROLL
      for (i = 0; i < 5; i++) d[i] = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(in, px[5 * i + j] + c));
      FUSE__QW3_BT(__m512i, _mm512_add_epi16, _mm512_sub_epi16, d, o);
      FUSE__UNROLL
      for (i = 0; i < 5; i++) t[5 * i + j] = o[i];
    }
    FUSE__UNROLL
    for (i = 0; i < 5; i++) { /* (B'd)B, row i */
      __m512i o[5];
      FUSE__QW3_BT(__m512i, _mm512_add_epi16, _mm512_sub_epi16, t + 5 * i, o);
      FUSE__UNROLL
      for (j = 0; j < 5; j++) _mm512_mask_storeu_epi16(v + (5 * i + j) * pstride + c, out, o[j]);
    }
  }
}

/* 16 channels (a zmm of int32; vpaddd and vpmulld wrap as the scalar twin's unsigned sums). */
FUSE__QV512 static void fuse__qwino3_out_avx512(const int32_t *m, int64_t pstride,
                                                unsigned char *const *y, int64_t at, int kvalid,
                                                const int32_t *bias, const float *scale,
                                                const fuse__qhead *h) {
  const __mmask16 all = (__mmask16)-1, mask = (__mmask16)(kvalid >= 16 ? 0xffffu : (1u << kvalid) - 1u);
  const __m512 lo = _mm512_set1_ps((float)(h->lo - h->y_zero));
  const __m512 hi = _mm512_set1_ps((float)(h->hi - h->y_zero));
  const __m512i zero = _mm512_set1_epi32(h->y_zero), inv9 = _mm512_set1_epi32(0x38e38e39);
  const __m512i b = _mm512_loadu_si512(bias);
  const __m512 sv = _mm512_loadu_ps(scale);
  const int y_signed = h->y_signed;
  __m512i t[15];
  int i, q;
  FUSE__UNROLL
  for (i = 0; i < 5; i++) { /* A'm, column i */
    __m512i a[5], o[3];
    FUSE__UNROLL
    for (q = 0; q < 5; q++) a[q] = _mm512_loadu_si512(m + (5 * q + i) * pstride);
    FUSE__QW3_AT(__m512i, _mm512_add_epi32, _mm512_sub_epi32, a, o);
    FUSE__UNROLL
    for (q = 0; q < 3; q++) t[5 * q + i] = o[q];
  }
  FUSE__UNROLL
  for (i = 0; i < 3; i++) { /* (A'm)A, row i */
    __m512i o[3];
    FUSE__QW3_AT(__m512i, _mm512_add_epi32, _mm512_sub_epi32, t + 5 * i, o);
    FUSE__UNROLL
    for (q = 0; q < 3; q++) {
      unsigned char *dst = y[3 * i + q];
      __m512i s, r;
      __m512 f;
      if (!dst) continue;
      s = _mm512_add_epi32(_mm512_maskz_srai_epi32(all, _mm512_mullo_epi32(o[q], inv9), 2), b);
      f = _mm512_maskz_cvtepi32_ps(all, s); /* (maskz: see fuse__qstore16_avx512) */
      f = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, _mm512_mul_ps(f, sv), lo), hi);
      r = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, f), zero); /* in the type's range */
      if (y_signed) _mm512_mask_cvtsepi32_storeu_epi8(dst + at, mask, r);
      else _mm512_mask_cvtusepi32_storeu_epi8(dst + at, mask, r);
    }
  }
}
#undef FUSE__QW3_BT
#undef FUSE__QW3_AT
#undef FUSE__QW3_ADDI
#undef FUSE__QW3_SUBI

/* The products tiles: 1 to 4 panels by 6 or by 5 tiles (25 tiles of a 14x14 image: 5 groups
   of 5, not 30 rows for 25). */
#define FUSE__QW3_MR 6
#define FUSE__QW3_NB 4
#define FUSE__QW3_NAME fuse__qwino3_tile_4x6
#include "qwino3_tile.inc"
#undef FUSE__QW3_NB
#undef FUSE__QW3_NAME
#define FUSE__QW3_NB 3
#define FUSE__QW3_NAME fuse__qwino3_tile_3x6
#include "qwino3_tile.inc"
#undef FUSE__QW3_NB
#undef FUSE__QW3_NAME
#define FUSE__QW3_NB 2
#define FUSE__QW3_NAME fuse__qwino3_tile_2x6
#include "qwino3_tile.inc"
#undef FUSE__QW3_NB
#undef FUSE__QW3_NAME
#define FUSE__QW3_NB 1
#define FUSE__QW3_NAME fuse__qwino3_tile_1x6
#include "qwino3_tile.inc"
#undef FUSE__QW3_NB
#undef FUSE__QW3_NAME
#undef FUSE__QW3_MR
#define FUSE__QW3_MR 5
#define FUSE__QW3_NB 4
#define FUSE__QW3_NAME fuse__qwino3_tile_4x5
#include "qwino3_tile.inc"
#undef FUSE__QW3_NB
#undef FUSE__QW3_NAME
#define FUSE__QW3_NB 3
#define FUSE__QW3_NAME fuse__qwino3_tile_3x5
#include "qwino3_tile.inc"
#undef FUSE__QW3_NB
#undef FUSE__QW3_NAME
#define FUSE__QW3_NB 2
#define FUSE__QW3_NAME fuse__qwino3_tile_2x5
#include "qwino3_tile.inc"
#undef FUSE__QW3_NB
#undef FUSE__QW3_NAME
#define FUSE__QW3_NB 1
#define FUSE__QW3_NAME fuse__qwino3_tile_1x5
#include "qwino3_tile.inc"
#undef FUSE__QW3_NB
#undef FUSE__QW3_NAME
#undef FUSE__QW3_MR

/* What a F(3x3) qconv2d's blocks run on: one image's input and output (NHWC), the packed
   weights, the products tiles of 1 to nb panels (tile[n - 1]) by mr tiles, the transforms. */
typedef struct fuse__qwino3 {
  const unsigned char *x;
  unsigned char *y;
  const int16_t *w;
  const int32_t *bias;
  const float *scale;
  const fuse__qhead *h;
  int64_t H, W, C, K, csteps;
  fuse__qwino3_group_fn tile[4];
  int nb, mr;
  fuse__qwino3_in_fn in;
  fuse__qwino3_out_fn out;
} fuse__qwino3;

/* The blocks of an image of `tiles` tiles, C channels, with products tiles of mr: at most
   fuse__qwino3_block(C) tiles a block, as even as whole groups of mr make them (*block of
   them, *blocks); returns the rows the products tiles compute (whole groups of mr). */
static int64_t fuse__qwino3_blocks(int64_t tiles, int64_t C, int mr, int64_t *block, int64_t *blocks) {
  int64_t b = fuse__qwino3_block(C) / mr * mr, n;
  n = (tiles + b - 1) / b;
  b = (tiles + n - 1) / n;
  b = (b + mr - 1) / mr * mr;
  n = (tiles + b - 1) / b;
  *block = b, *blocks = n;
  return (n - 1) * b + (tiles - (n - 1) * b + mr - 1) / mr * mr;
}

/* The tiles and transforms of a plan (AVX-512 with VNNI) for an image of `tiles` tiles: of 6
   tiles a group, or of 5 where that computes fewer rows; or with `twin` the scalar ones (the
   pairs tile, one panel by 4 tiles: the tests' oracle). */
static void fuse__qwino3_pick(fuse__qwino3 *q, int twin, int64_t tiles) {
  int64_t block, blocks;
  memset(q->tile, 0, sizeof q->tile);
  if (twin) {
    q->tile[0] = fuse__qwino3_group_scalar, q->nb = 1, q->mr = 4;
    q->in = fuse__qwino3_in_scalar, q->out = fuse__qwino3_out_scalar;
    return;
  }
  q->nb = 4;
  if (fuse__qwino3_blocks(tiles, q->C, 5, &block, &blocks) <
      fuse__qwino3_blocks(tiles, q->C, 6, &block, &blocks)) {
    q->tile[0] = fuse__qwino3_tile_1x5, q->tile[1] = fuse__qwino3_tile_2x5;
    q->tile[2] = fuse__qwino3_tile_3x5, q->tile[3] = fuse__qwino3_tile_4x5;
    q->mr = 5;
  } else {
    q->tile[0] = fuse__qwino3_tile_1x6, q->tile[1] = fuse__qwino3_tile_2x6;
    q->tile[2] = fuse__qwino3_tile_3x6, q->tile[3] = fuse__qwino3_tile_4x6;
    q->mr = 6;
  }
  q->in = fuse__qwino3_in_avx512, q->out = fuse__qwino3_out_avx512;
}

/* The outputs of tiles [t, t + gv) of an image, channels k to k + 16 * nbv, from their sums
   (tile r's position p at m[p * pstride + r * 16 * nbv]). */
static void fuse__qwino3_outputs(const fuse__qwino3 *q, int64_t t, int gv, int64_t k, int nbv,
                                 const int32_t *m, int64_t pstride, unsigned char **yp) {
  int64_t TW = (q->W + 2) / 3;
  int r, i, j, b, ld = nbv * FUSE__QNR;
  for (r = 0; r < gv; r++) {
    int64_t oy = (t + r) / TW * 3, ox = (t + r) % TW * 3;
    unsigned char *row = q->y + (oy * q->W + ox) * q->K;
    for (i = 0; i < 9; i += 3, row += q->W * q->K)
      for (j = 0; j < 3; j++) yp[i + j] = oy + i / 3 < q->H && ox + j < q->W ? row + j * q->K : NULL;
    for (b = 0; b < nbv; b++) {
      int64_t kb = k + b * FUSE__QNR;
      int kvalid = q->K - kb < FUSE__QNR ? (int)(q->K - kb) : FUSE__QNR;
      q->out(m + r * ld + b * FUSE__QNR, pstride, yp, kb, kvalid, q->bias + kb, q->scale + kb, q->h);
    }
  }
}

/* Tiles [t0, t1) of one image (row-major, (W + 2) / 3 a row; at most fuse__qwino3_block(C)
   of them), output channels [k0, k1) (k0 a multiple of 16 * nb), with the work area `work`
   (fuse__qconv_scratch's): their patches transformed ([position][tile][cs]); then per nb
   panels of 16 output channels, per group of mr tiles, the 25 positions' products (a products
   tile call: the group's rows of each position against the position's weights; the group's
   sums stay in the L1 cache, the nb panels' weights in L2), transformed into the outputs and
   requantized. */
static void fuse__qwino3_tiles(const fuse__qwino3 *q, int64_t t0, int64_t t1, int64_t k0,
                               int64_t k1, unsigned char *work) {
  size_t al = FUSE__ALIGN - 1;
  int64_t cs = 2 * q->csteps, TW = (q->W + 2) / 3, n = t1 - t0, t, k, g;
  int64_t panel = 25 * cs * FUSE__QNR; /* int16 of a panel's weights */
  int16_t *v = (int16_t *)(void *)work;
  int32_t *m = (int32_t *)(void *)(work + (((size_t)(n * 25 * cs * 2) + al) & ~al));
  unsigned char *pad = (unsigned char *)(m + 25 * FUSE__QW3_ACC * FUSE__QNR);
  const unsigned char **px = (const unsigned char **)(void *)(pad + (((size_t)q->C + al) & ~al));
  unsigned char **yp = (unsigned char **)(void *)(px + 25);
  int mr = q->mr, i, j;
  memset(pad, q->h->x_zero, (size_t)q->C);
  for (t = t0; t < t1; t++) { /* the patches */
    int64_t iy0 = (t / TW) * 3 - 1, ix0 = (t % TW) * 3 - 1;
    if (iy0 >= 0 && iy0 + 5 <= q->H && ix0 >= 0 && ix0 + 5 <= q->W) { /* inside the image */
      const unsigned char *row = q->x + (iy0 * q->W + ix0) * q->C;
      for (i = 0; i < 25; i += 5, row += q->W * q->C)
        for (j = 0; j < 5; j++) px[i + j] = row + j * q->C;
    } else {
      for (i = 0; i < 25; i++) {
        int64_t iy = iy0 + i / 5, ix = ix0 + i % 5;
        px[i] = iy >= 0 && iy < q->H && ix >= 0 && ix < q->W ? q->x + (iy * q->W + ix) * q->C : pad;
      }
    }
    q->in(px, q->C, cs, n * cs, v + (t - t0) * cs);
  }
  for (k = k0; k < k1; k += q->nb * FUSE__QNR) {
    int64_t left = (k1 - k + FUSE__QNR - 1) / FUSE__QNR;
    int nbv = left < q->nb ? (int)left : q->nb, ld = nbv * FUSE__QNR;
    const int16_t *wk = q->w + k / FUSE__QNR * panel;
    for (g = 0; g < n; g += mr) { /* m[(p * mr + r) * ld + j]: position p, tile r, channel j */
      int gv = n - g < mr ? (int)(n - g) : mr;
      q->tile[nbv - 1]((int)q->csteps, v + g * cs, n * cs, cs, gv, wk, cs * FUSE__QNR, panel * 2, m,
                       mr * ld, ld);
      fuse__qwino3_outputs(q, t0 + g, gv, k, nbv, m, mr * ld, yp);
    }
  }
}
#endif
