/* test_qkernels.c - the integer conv2d tiles (kernels/qconv.c), each against a plain int64
   reference of the same rows and panels, bit for bit: every tile this CPU and build have (the
   scalar twin; AVX2's vpmaddwd; AVX-VNNI's and AVX-512 VNNI's vpdpbusd on 1 to 4 panels;
   NEON's smlal on pairs, and sdot on signed quads where the build targets dotprod and the CPU
   has it),
   whole and partial (fewer pixels and channels stored, nothing else written), on taps 1, 2 and 9,
   channel steps 1 to 40, the extremes that saturate 16-bit pair sums (x - x_zero = +-255
   against w = -128 and 127 everywhere), zero points 0, 128, 255, uint8 and int8 outputs,
   clamps, and sums that land exactly on x.5 after scaling (ties to even). Self-contained: the
   tiles are internal functions. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

static uint32_t rng = 12345;
static uint32_t next(void) { return rng = rng * 1664525u + 1013904223u; }

typedef struct tile_case {
  int layout, taps, csteps, extreme;
  int wide; /* 0: scales below 1; else sums near the int32 ends and scales that take the
               products past +-2^31 (1: up to 3e5 of both signs; 2: exactly 1 at most; 3: just
               below 1) */
  int32_t x_zero, y_zero, lo, hi, y_signed;
} tile_case;

/* Runs kind k's tile on one case, storing mvalid pixels and kvalid channels of its nb * 16
   into a buffer of 0xcd; compares with the reference, and that nothing else was written; 1
   when all agree. */
static int check_tile(const fuse__qtile_kind *k, const tile_case *tc, int mvalid, int kvalid,
                      const char *name) {
  int step = tc->layout == FUSE__QL_PAIRS ? 2 : 4, esize = tc->layout == FUSE__QL_PAIRS ? 2 : 1;
  int mr = k->mr, nch = k->nb * FUSE__QNR, cols = tc->csteps * step, t, r, j, c, ok = 1;
  size_t panel = (size_t)tc->taps * tc->csteps * FUSE__QNR * step * esize; /* bytes */
  int64_t ldy = nch + 3; /* (a row wider than the tile: what lies past kvalid must stay) */
  unsigned char *rowbuf = (unsigned char *)malloc((size_t)tc->taps * mr * cols * esize);
  unsigned char *w = (unsigned char *)malloc(panel * (size_t)k->nb);
  const void **rows = (const void **)malloc((size_t)tc->taps * mr * sizeof(void *));
  unsigned char *y = (unsigned char *)malloc((size_t)(FUSE__QMR_MAX * ldy));
  int32_t bias[4 * FUSE__QNR];
  float scale[4 * FUSE__QNR];
  fuse__qhead h;
  memset(&h, 0, sizeof h);
  h.x_zero = tc->x_zero, h.y_zero = tc->y_zero, h.lo = tc->lo, h.hi = tc->hi;
  h.y_signed = tc->y_signed, h.layout = tc->layout;
  for (t = 0; t < tc->taps * mr; t++) rows[t] = rowbuf + (size_t)t * cols * esize;
  for (t = 0; t < tc->taps * mr * cols; t++) { /* the rows: x - x_zero (pairs) or x (quads) */
    int32_t x = tc->extreme ? (t % 2 ? 255 : 0) : (int32_t)(next() % 256);
    if (tc->layout == FUSE__QL_PAIRS) {
      int16_t d = (int16_t)(x - tc->x_zero);
      memcpy(rowbuf + 2 * t, &d, 2);
    } else {
      rowbuf[t] = (unsigned char)x;
    }
  }
  for (t = 0; t < (int)(panel * (size_t)k->nb / (size_t)esize); t++) {
    int8_t v = tc->extreme ? (int8_t)(t % 3 ? -128 : 127) : (int8_t)(next() % 256);
    if (esize == 2) ((int16_t *)(void *)w)[t] = v;
    else ((int8_t *)w)[t] = v;
  }
  for (j = 0; j < nch; j++) {
    static const float wide[3][4] = {{3e5f, -3e5f, 1.0f, 0.25f},
                                     {1.0f, -1.0f, 0.99999994f, 0.5f},
                                     {0.99999994f, -0.99999994f, 0.99999994f, 0.75f}};
    bias[j] = (int32_t)(next() % 20001) - 10000;
    scale[j] = j % 4 == 0 ? 0.5f : j % 4 == 1 ? 0.25f : 1.0f / (float)(3 + next() % 500);
    if (tc->wide) { /* (the sums wrap mod 2^32 in the tile and in the reference's cast alike) */
      bias[j] = j % 3 == 0 ? INT32_MAX - (int32_t)(next() % 70000)
              : j % 3 == 1 ? INT32_MIN + (int32_t)(next() % 70000) : bias[j];
      scale[j] = wide[tc->wide - 1][(j + j / 3) % 4];
    }
  }
  memset(y, 0xcd, (size_t)(FUSE__QMR_MAX * ldy));
  k->fn(tc->taps, tc->csteps, rows, w, (int64_t)panel, y, ldy, mvalid, kvalid, bias, scale, &h);
  for (r = 0; r < FUSE__QMR_MAX; r++)
    for (j = 0; j < ldy; j++) {
      int32_t want, have = tc->y_signed ? (int32_t)(int8_t)y[r * ldy + j] : (int32_t)y[r * ldy + j];
      if (r < mvalid && j < kvalid) {
        const unsigned char *wp = w + (size_t)(j / FUSE__QNR) * panel;
        int64_t acc = bias[j];
        for (t = 0; t < tc->taps; t++)
          for (c = 0; c < cols; c++) {
            const unsigned char *row = (const unsigned char *)rows[t * mr + r];
            int64_t x, wv;
            size_t at = ((size_t)t * tc->csteps + (size_t)(c / step)) * FUSE__QNR * step +
                        (size_t)(j % FUSE__QNR) * step + (size_t)(c % step);
            if (esize == 2) {
              int16_t d;
              memcpy(&d, row + 2 * c, 2);
              x = d, wv = ((const int16_t *)(const void *)wp)[at];
            } else {
              x = row[c], wv = ((const int8_t *)wp)[at];
              if (tc->layout == FUSE__QL_SQUADS) x -= 128; /* (the tile's x - 128) */
            }
            acc += x * wv;
          }
        want = fuse__qtile_requant((int32_t)acc, scale[j], &h);
      } else {
        want = tc->y_signed ? (int32_t)(int8_t)0xcd : 0xcd; /* untouched */
      }
      if (have != want && ok) {
        fprintf(stderr, "  %s %dx%d: layout %d taps %d csteps %d extreme %d wide %d valid %dx%d: [%d][%d] %d, want %d\n",
                name, k->nb, k->mr, tc->layout, tc->taps, tc->csteps, tc->extreme, tc->wide, mvalid,
                kvalid, r, j, have, want);
        ok = 0;
      }
    }
  free(rowbuf), free(w), free(rows), free(y);
  return ok;
}

/* Whether plans for isa run on this CPU. */
static int isa_runs_here(int isa) {
  int cpu = (int)fuse_cpu_isa();
  return isa == FUSE_ISA_SCALAR || isa == cpu || (isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512);
}

/* Whether the tests run tile kind k on isa: each kind once, on its own ISA (AVX2's on AVX2, or
   on AVX-512 where AVX2 plans cannot run). */
static int tile_kind_on(const fuse__qtile_kind *k, int isa) {
  if (!isa_runs_here(isa) || !fuse__qtile_runs(k, (fuse_isa)isa, k->layout, fuse__cpu_vnni()) ||
      (k->isa != isa && !(k->isa == FUSE_ISA_AVX2 && isa == FUSE_ISA_AVX512)))
    return 0;
  return !(k->isa == FUSE_ISA_AVX2 && isa == FUSE_ISA_AVX512 && isa_runs_here(FUSE_ISA_AVX2));
}

TEST(tiles_match_the_reference) {
  static const int taps[3] = {1, 2, 9}, csteps[6] = {1, 2, 3, 8, 17, 40};
  static const int32_t zeros[3] = {0, 128, 255};
  const fuse__qtile_kind *k;
  int ti, ci, zi, ext, sgn, isa, runs = 0;
  for (k = fuse__qtile_kinds; k->fn; k++)
    for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++) {
      if (!tile_kind_on(k, isa)) continue;
      for (ti = 0; ti < 3; ti++)
        for (ci = 0; ci < 6; ci++)
          for (zi = 0; zi < 3; zi++)
            for (ext = 0; ext < 2; ext++)
              for (sgn = 0; sgn < 2; sgn++) {
                tile_case tc;
                int part = (ti + ci + zi) % 2; /* every other case: a partial tile */
                memset(&tc, 0, sizeof tc);
                tc.layout = k->layout, tc.taps = taps[ti], tc.csteps = csteps[ci], tc.extreme = ext;
                tc.x_zero = zeros[zi], tc.y_signed = sgn;
                tc.y_zero = sgn ? -7 : 9;
                tc.lo = sgn ? (zi == 1 ? -7 : -128) : (zi == 1 ? 9 : 0);
                tc.hi = sgn ? 127 : (zi == 2 ? 200 : 255);
                CHECK(check_tile(k, &tc, part ? k->mr - 1 - ci % 3 : k->mr,
                                 part ? k->nb * FUSE__QNR - 1 - (4 * ci) % 15 : k->nb * FUSE__QNR,
                                 fuse__isa_name((fuse_isa)isa)));
                runs++;
              }
    }
  CHECK(runs > 0);
  fprintf(stderr, "  (%d tile runs; VNNI on this CPU: %d)\n", runs, fuse__cpu_vnni());
}

/* The tiles where the scaled sums pass +-2^31 (cvtps2dq gives INT_MIN there; AVX-512's
   4-panel tiles keep a float clamp only where some |scale| >= 1): sums near the int32 ends,
   scales of 3e5 of both signs, exactly 1 at most and just below 1; uint8 and int8, the type's
   range and a narrower clamp, whole tiles (AVX-512's one 64-byte store a pixel) and partial. */
TEST(tiles_saturate_products_past_int32) {
  static const int csteps[2] = {1, 17};
  const fuse__qtile_kind *k;
  int ci, wide, narrow, sgn, part, isa, runs = 0;
  for (k = fuse__qtile_kinds; k->fn; k++)
    for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++) {
      if (!tile_kind_on(k, isa)) continue;
      for (ci = 0; ci < 2; ci++)
        for (wide = 1; wide <= 3; wide++)
          for (narrow = 0; narrow < 2; narrow++)
            for (sgn = 0; sgn < 2; sgn++)
              for (part = 0; part < 2; part++) {
                tile_case tc;
                memset(&tc, 0, sizeof tc);
                tc.layout = k->layout, tc.taps = 1, tc.csteps = csteps[ci], tc.wide = wide;
                tc.x_zero = 128, tc.y_signed = sgn, tc.y_zero = sgn ? -7 : 9;
                tc.lo = sgn ? (narrow ? -100 : -128) : (narrow ? 9 : 0);
                tc.hi = sgn ? (narrow ? 90 : 127) : (narrow ? 200 : 255);
                CHECK(check_tile(k, &tc, part ? k->mr - 1 : k->mr,
                                 part ? k->nb * FUSE__QNR - 5 : k->nb * FUSE__QNR,
                                 fuse__isa_name((fuse_isa)isa)));
                runs++;
              }
    }
  CHECK(runs > 0);
  fprintf(stderr, "  (%d tile runs)\n", runs);
}

/* The depthwise kernel of each ISA that runs here against the scalar twin's arithmetic
   written out: runs of 1, 3 and 9 pixels (each next one two pixels further on) and of 13
   pixels side by side (stride 1: the AVX-512 VNNI kernel's flat vectors where C is 16, 32 or
   64), channel counts around the vector widths, taps 1, 9 (the kernels' register path), 10
   and 25, weights and inputs at their extremes, uint8 and int8 outputs; the bytes past the
   run stay. */
TEST(depthwise_kernels_match_the_reference) {
  static const int64_t counts[10] = {1, 7, 8, 16, 24, 32, 33, 64, 96, 144};
  static const int ntaps[4] = {1, 9, 10, 25};
  static const int64_t pixels[4] = {1, 3, 9, 13};
  int isa, ci, ti, pi, sgn, runs = 0, form;
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++)
    for (form = 0; form < 2; form++) { /* this CPU's extensions, then none (AVX-512 without VNNI) */
      fuse__qdw_fn fn =
          isa_runs_here(isa) ? fuse__qdw_pick((fuse_isa)isa, form ? 0 : fuse__cpu_vnni()) : NULL;
      if (!fn || (form && fn == fuse__qdw_pick((fuse_isa)isa, fuse__cpu_vnni()))) continue;
      for (ci = 0; ci < 10; ci++)
        for (ti = 0; ti < 4; ti++)
          for (pi = 0; pi < 4; pi++)
            for (sgn = 0; sgn < 2; sgn++) {
              int64_t C = counts[ci], Cp = (C + 15) / 16 * 16, c, npix = pixels[pi];
              int64_t step = pi == 3 ? C : 2 * C, region = npix * step, i;
              int taps = ntaps[ti], t, ok = 1;
              unsigned char *px = (unsigned char *)malloc((size_t)(taps * region)), y[13 * 144 + 32];
              const unsigned char *src[25];
              int16_t *w = (int16_t *)calloc((size_t)(taps * Cp), sizeof(int16_t));
              int32_t bias[144];
              float scale[144];
              fuse__qhead h;
              memset(&h, 0, sizeof h);
              h.y_signed = sgn, h.y_zero = sgn ? -3 : 17, h.lo = sgn ? -128 : 0,
              h.hi = sgn ? 127 : 255;
              for (t = 0; t < taps; t++) src[t] = px + t * region;
              for (c = 0; c < taps * region; c++)
                px[c] = (unsigned char)(sgn ? (c % 2 ? 255 : 0) : next() % 256);
              for (t = 0; t < taps; t++)
                for (c = 0; c < C; c++)
                  w[t * Cp + c] = (int16_t)(sgn ? (c % 3 ? -128 : 127) : (int8_t)(next() % 256));
              for (c = 0; c < Cp; c++) {
                bias[c] = (int32_t)(next() % 20001) - 10000;
                scale[c] = c % 2 ? 0.5f : 1.0f / (float)(50 + next() % 3000);
              }
              memset(y, 0xcd, sizeof y);
              fn(src, step, npix, taps, w, Cp, C, bias, scale, &h, y);
              for (i = 0; i < npix * C + 32; i++) {
                int64_t p = i / C;
                int32_t want = 0xcd, have = y[i];
                c = i % C;
                if (p < npix) {
                  int32_t acc = bias[c];
                  for (t = 0; t < taps; t++) acc += (int32_t)src[t][p * step + c] * w[t * Cp + c];
                  want = fuse__qtile_requant(acc, scale[c], &h) & 0xff;
                }
                if (have != want && ok) {
                  fprintf(stderr, "  %s: C %d taps %d pixels %d step %d: [%d][%d] %d, want %d\n",
                          fuse__isa_name((fuse_isa)isa), (int)C, taps, (int)npix, (int)step,
                          (int)p, (int)c, have, want);
                  ok = 0;
                }
              }
              CHECK(ok);
              runs++;
              free(px), free(w);
            }
    }
  CHECK(runs > 0);
  fprintf(stderr, "  (%d depthwise runs)\n", runs);
}

#if defined(FUSE__HAVE_QWINO) || defined(FUSE__HAVE_QWINO3)
/* A Winograd test's output y (npix x K bytes, then 64 of 0xcd past it) against the direct
   conv's sums requantized; the sums within what the exactness needs (4 times them fit int32). */
static int check_wino_out(const char *name, const unsigned char *y, const int64_t *sum,
                          const int32_t *bias, const float *scale, const fuse__qhead *h,
                          int64_t H, int64_t W, int64_t C, int64_t K, int x_zero, int extreme,
                          int64_t block) {
  int64_t i, npix = H * W;
  int ok = 1;
  for (i = 0; i < npix * K + 64 && ok; i++) {
    int32_t want = 0xcd, have = y[i];
    if (i < npix * K) {
      want = fuse__qtile_requant((int32_t)(bias[i % K] + sum[i]), scale[i % K], h) & 0xff;
      CHECK(sum[i] >= -(1 << 29) && sum[i] < (1 << 29)); /* (4 times it fits int32) */
    }
    if (have != want) {
      fprintf(stderr, "  %s: %dx%d C %d K %d x_zero %d extreme %d block %d: pixel %d channel %d: %d, want %d\n",
              name, (int)H, (int)W, (int)C, (int)K, x_zero, extreme, (int)block, (int)(i / K),
              (int)(i % K), have, want);
      ok = 0;
    }
  }
  return ok;
}
#endif

#ifdef FUSE__HAVE_QWINO
/* One Winograd qconv2d (fuse__qwino_tiles: 3x3, stride 1, padding 1) of an H x W image of C
   channels into K, in blocks of `block` tiles, against a direct int64 conv, bit for bit; the
   bytes past the output stay. extreme 1: every x at the end away from x_zero, every weight
   -128 (the largest sums: with C = 1024, 4 times them near the int32 limit); 2: x 0 / 255 and
   the weights -128 / 127 in a checkerboard (the transforms' largest values). With extremes
   the bias takes back the sum of a pixel, so that an error of 1 shows after the scale. */
static int check_wino(fuse__qtile_fn tile, int mr, fuse__qwino_in_fn in, fuse__qwino_out_fn out,
                      int64_t H, int64_t W, int64_t C, int64_t K, int32_t x_zero, int extreme,
                      int y_signed, int64_t block, const char *name) {
  int64_t Kp, npix = H * W, tiles = ((H + 1) / 2) * ((W + 1) / 2), i, c, k, t0, oy, ox;
  size_t wbytes = fuse__qconv_weight_bytes(FUSE__QL_WINO, K, C, 9, &Kp);
  unsigned char *x = (unsigned char *)malloc((size_t)(npix * C)), *y = (unsigned char *)malloc((size_t)(npix * K + 64));
  int8_t *w = (int8_t *)malloc((size_t)(K * C * 9));
  int16_t *packed = (int16_t *)calloc(wbytes, 1);
  int64_t *sum = (int64_t *)malloc((size_t)(npix * K) * sizeof(int64_t));
  int32_t *bias = (int32_t *)calloc((size_t)Kp, sizeof(int32_t));
  float *scale = (float *)calloc((size_t)Kp, sizeof(float));
  unsigned char *work = (unsigned char *)malloc(fuse__qconv_scratch(FUSE__QL_WINO, 1, C, H, W, 0, 9, npix, Kp));
  fuse__qwino q;
  fuse__qhead h;
  int ok = 1;
  for (i = 0; i < npix; i++)
    for (c = 0; c < C; c++)
      x[i * C + c] = (unsigned char)(extreme == 1 ? (x_zero < 128 ? 255 : 0)
                                     : extreme == 2 ? ((i / W + i % W + c) % 2 ? 255 : 0)
                                                    : next() % 256);
  for (i = 0; i < K * C * 9; i++)
    w[i] = (int8_t)(extreme == 1 ? -128 : extreme == 2 ? (((i % 9) / 3 + i % 3 + i / 9) % 2 ? -128 : 127)
                                                       : (int8_t)(next() % 256));
  fuse__qwino_pack(w, K, C, packed);
  for (oy = 0; oy < H; oy++) /* the direct conv */
    for (ox = 0; ox < W; ox++)
      for (k = 0; k < K; k++) {
        int64_t acc = 0, ky, kx;
        for (c = 0; c < C; c++)
          for (ky = 0; ky < 3; ky++)
            for (kx = 0; kx < 3; kx++) {
              int64_t iy = oy + ky - 1, ix = ox + kx - 1;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                acc += (int64_t)(x[(iy * W + ix) * C + c] - x_zero) * w[((k * C + c) * 3 + ky) * 3 + kx];
            }
        sum[(oy * W + ox) * K + k] = acc;
      }
  for (k = 0; k < K; k++) {
    bias[k] = extreme ? (int32_t)(-sum[(npix / 2) * K + k]) + (int32_t)(next() % 7) - 3
                      : (int32_t)(next() % 20001) - 10000;
    scale[k] = k % 4 == 0 ? 0.5f : k % 4 == 1 ? 0.25f : 1.0f / (float)(3 + next() % 500);
  }
  memset(&h, 0, sizeof h);
  h.x_zero = x_zero, h.y_signed = y_signed, h.y_zero = y_signed ? -7 : 9;
  h.lo = y_signed ? -128 : 0, h.hi = y_signed ? 127 : 255, h.layout = FUSE__QL_WINO;
  q.x = x, q.y = y, q.w = packed, q.bias = bias, q.scale = scale, q.h = &h;
  q.H = H, q.W = W, q.C = C, q.K = K, q.csteps = (C + 1) / 2;
  q.tile = tile, q.mr = mr, q.in = in, q.out = out;
  memset(y, 0xcd, (size_t)(npix * K + 64));
  for (t0 = 0; t0 < tiles; t0 += block)
    fuse__qwino_tiles(&q, t0, t0 + block < tiles ? t0 + block : tiles, work);
  ok = check_wino_out(name, y, sum, bias, scale, &h, H, W, C, K, x_zero, extreme, block);
  free(x), free(y), free(w), free(packed), free(sum), free(bias), free(scale), free(work);
  return ok;
}

/* Winograd (FUSE__QL_WINO) on each pairs tile and transforms that run here (the scalar twin's;
   AVX2's, and AVX2's tile with the scalar transforms) against the direct conv: images from 1x1
   (one tile, mostly outside) to odd and even sizes, channels 1 to 64 (odd ones: a padding
   channel), output channels off the panels, zero points 0, 128, 255, blocks of whole and
   partial MR groups; the extremes with C 16 and 1024. */
TEST(winograd_matches_the_direct_conv) {
  static const int64_t sizes[6][2] = {{1, 1}, {2, 2}, {3, 5}, {6, 4}, {7, 7}, {10, 9}};
  static const int64_t chans[5] = {1, 2, 15, 33, 64}, outs[4] = {1, 16, 21, 40};
  static const int32_t zeros[3] = {0, 128, 255};
  int form, si, ci, ki, zi, runs = 0;
  for (form = 0; form < 3; form++) {
    fuse__qtile_fn tile = fuse__qtile_pairs_scalar;
    fuse__qwino_in_fn in = fuse__qwino_in_scalar;
    fuse__qwino_out_fn out = fuse__qwino_out_scalar;
    int mr = 4;
    const char *name = "scalar";
    if (form) { /* (FUSE__HAVE_QWINO: AVX2's kernels are built; FUSE__SIMD is #undef'd by now) */
#ifdef FUSE__HAVE_QWINO
      if (!isa_runs_here(FUSE_ISA_AVX2)) continue;
      tile = fuse__qtile_pairs_avx2, mr = FUSE__QMR_AVX2, name = form == 1 ? "avx2" : "avx2 tile";
      if (form == 1) fuse__qwino_pick(FUSE_ISA_AVX2, &in, &out);
#else
      continue;
#endif
    }
    for (si = 0; si < 6; si++)
      for (ci = 0; ci < 5; ci++)
        for (ki = 0; ki < 4; ki++)
          for (zi = 0; zi < 3; zi++) {
            int64_t H = sizes[si][0], W = sizes[si][1], tiles = ((H + 1) / 2) * ((W + 1) / 2);
            int64_t block = (si + ci + zi) % 3 == 0 ? tiles : (si + ci + zi) % 3 == 1 ? 5 : mr;
            CHECK(check_wino(tile, mr, in, out, H, W, chans[ci], outs[ki], zeros[zi], 0,
                             (ki + zi) % 2, block, name));
            runs++;
          }
    for (ci = 0; ci < 2; ci++)
      for (zi = 0; zi < 3; zi += 2)
        for (ki = 1; ki <= 2; ki++) {
          CHECK(check_wino(tile, mr, in, out, 4, 5, ci ? 1024 : 16, 16, zeros[zi], ki, zi > 0,
                           mr, name));
          runs++;
        }
  }
  fprintf(stderr, "  (%d Winograd runs)\n", runs);
}
#endif

#ifdef FUSE__HAVE_QWINO3
/* One F(3x3) Winograd qconv2d (fuse__qwino3_tiles: 3x3, stride 1, padding 1) of an H x W
   image of C channels into K, in blocks of `block` tiles, against a direct int64 conv, bit for
   bit; the bytes past the output stay. The kernels take the uint8 input as it is and the bias
   with x_zero * the weights' sum taken out (plan/quant_pack.c), so the reference sums the raw
   input (x_zero where a tap falls outside) and the requantized value is that sum + the bias.
   extreme 1: every x 255, every weight -128 (the largest sums: with C = 1827, 4 times them
   just fit int32); 2: x 0 / 255 and the weights -128 / 127 in a checkerboard; 3: x 0 / 255
   and the weights -128 / 127 at random (the transforms' largest values, both signs). With
   extremes the bias takes back the sum of a pixel, so that an error of 1 shows after the
   scale. form: 0 the scalar twin (pairs tile, scalar transforms); 1 AVX-512 VNNI's tiles and
   transforms; 2 its tiles with the scalar transforms; 3 the scalar tile with its transforms;
   mr5: its tiles of 5 tiles a group, else of 6. */
static int check_wino3(int form, int mr5, int64_t H, int64_t W, int64_t C, int64_t K, int32_t x_zero,
                       int extreme, int y_signed, int64_t block, const char *name) {
  int64_t Kp, npix = H * W, tiles = ((H + 2) / 3) * ((W + 2) / 3), i, c, k, t0, oy, ox, kpart;
  size_t wbytes = fuse__qconv_weight_bytes(FUSE__QL_WINO3, K, C, 9, &Kp);
  unsigned char *x = (unsigned char *)malloc((size_t)(npix * C)), *y = (unsigned char *)malloc((size_t)(npix * K + 64));
  int8_t *w = (int8_t *)malloc((size_t)(K * C * 9));
  int16_t *packed = (int16_t *)calloc(wbytes, 1);
  int64_t *sum = (int64_t *)malloc((size_t)(npix * K) * sizeof(int64_t));
  int32_t *bias = (int32_t *)calloc((size_t)Kp, sizeof(int32_t));
  float *scale = (float *)calloc((size_t)Kp, sizeof(float));
  unsigned char *work = (unsigned char *)malloc(fuse__qconv_scratch(FUSE__QL_WINO3, 1, C, H, W, 0, 9, npix, Kp));
  fuse__qwino3 q, simd;
  fuse__qhead h;
  int ok = 1;
  for (i = 0; i < npix; i++)
    for (c = 0; c < C; c++)
      x[i * C + c] = (unsigned char)(extreme == 1 ? 255
                                     : extreme == 2 ? ((i / W + i % W + c) % 2 ? 255 : 0)
                                     : extreme == 3 ? (next() >> 7) % 2 * 255
                                                    : next() % 256);
  for (i = 0; i < K * C * 9; i++)
    w[i] = (int8_t)(extreme == 1 ? -128 : extreme == 2 ? (((i % 9) / 3 + i % 3 + i / 9) % 2 ? -128 : 127)
                    : extreme == 3 ? ((next() >> 9) % 2 ? -128 : 127)
                                   : (int8_t)(next() % 256));
  fuse__qwino3_pack(w, K, C, packed);
  for (oy = 0; oy < H; oy++) /* the direct conv on the raw input */
    for (ox = 0; ox < W; ox++)
      for (k = 0; k < K; k++) {
        int64_t acc = 0, ky, kx;
        for (c = 0; c < C; c++)
          for (ky = 0; ky < 3; ky++)
            for (kx = 0; kx < 3; kx++) {
              int64_t iy = oy + ky - 1, ix = ox + kx - 1;
              int64_t xv = iy >= 0 && iy < H && ix >= 0 && ix < W ? x[(iy * W + ix) * C + c] : x_zero;
              acc += xv * w[((k * C + c) * 3 + ky) * 3 + kx];
            }
        sum[(oy * W + ox) * K + k] = acc;
      }
  for (k = 0; k < K; k++) {
    bias[k] = extreme ? (int32_t)(-sum[(npix / 2) * K + k]) + (int32_t)(next() % 7) - 3
                      : (int32_t)(next() % 20001) - 10000;
    scale[k] = k % 4 == 0 ? 0.5f : k % 4 == 1 ? 0.25f : 1.0f / (float)(3 + next() % 500);
  }
  memset(&h, 0, sizeof h);
  h.x_zero = x_zero, h.y_signed = y_signed, h.y_zero = y_signed ? -7 : 9;
  h.lo = y_signed ? -128 : 0, h.hi = y_signed ? 127 : 255, h.layout = FUSE__QL_WINO3;
  q.x = x, q.y = y, q.w = packed, q.bias = bias, q.scale = scale, q.h = &h;
  q.H = H, q.W = W, q.C = C, q.K = K, q.csteps = (C + 1) / 2;
  fuse__qwino3_pick(&q, form == 0 || form == 3, mr5 ? 25 : 24);
  simd.C = C;
  fuse__qwino3_pick(&simd, 0, 24);
  kpart = K > q.nb * 16 && (H + W + C) % 2 ? q.nb * 16 : K;
  if (form == 2) q.in = fuse__qwino3_in_scalar, q.out = fuse__qwino3_out_scalar;
  if (form == 3) q.in = simd.in, q.out = simd.out;
  memset(y, 0xcd, (size_t)(npix * K + 64));
  for (t0 = 0; t0 < tiles; t0 += block) /* (in two parts of the output channels, some runs) */
    for (k = 0; k < K; k += kpart)
      fuse__qwino3_tiles(&q, t0, t0 + block < tiles ? t0 + block : tiles, k, k + kpart < K ? k + kpart : K, work);
  ok = check_wino_out(name, y, sum, bias, scale, &h, H, W, C, K, x_zero, extreme, block);
  free(x), free(y), free(w), free(packed), free(sum), free(bias), free(scale), free(work);
  return ok;
}

/* Winograd F(3x3) (FUSE__QL_WINO3): the scalar twin always; AVX-512 VNNI's tiles and
   transforms, alone and mixed with the twin's, where the CPU has them; against the direct
   conv: images from 1x1 (one tile, mostly outside) to sizes off the tiles' 3, channels 1 to 70
   (odd ones: a padding channel; past 32 and 64: the transforms' masked steps), output channels
   1 to 88 (1 to 4 panels a tile and the tails), zero points 0, 128, 255, blocks of whole and
   partial groups of tiles; the extremes with C 16, 1024 (the plans' bound) and 1827 (the
   exactness bound). */
TEST(winograd3_matches_the_direct_conv) {
  static const int64_t sizes[7][2] = {{1, 1}, {2, 2}, {3, 5}, {6, 4}, {7, 7}, {10, 9}, {4, 14}};
  static const int64_t chans[6] = {1, 2, 15, 33, 64, 70}, outs[5] = {1, 16, 21, 40, 88};
  static const int32_t zeros[3] = {0, 128, 255};
  static const char *names[4] = {"scalar", "avx512", "avx512 tile", "avx512 transforms"};
  int form, si, ci, ki, zi, runs = 0, simd = isa_runs_here(FUSE_ISA_AVX512) && (fuse__cpu_vnni() & 1);
  for (form = 0; form < 4; form++) {
    if (form && !simd) continue;
    for (si = 0; si < 7; si++)
      for (ci = 0; ci < 6; ci++)
        for (ki = 0; ki < 5; ki++)
          for (zi = 0; zi < 3; zi++) {
            int64_t H = sizes[si][0], W = sizes[si][1], tiles = ((H + 2) / 3) * ((W + 2) / 3);
            int64_t block = (si + ci + zi + ki) % 3 == 0 ? tiles : (si + ci + zi + ki) % 3 == 1 ? 5 : 6;
            if ((form == 2 || form == 3) && (si + ci + ki + zi) % 3) continue; /* (mixed: a third) */
            CHECK(check_wino3(form, (si + ki) % 2, H, W, chans[ci], outs[ki], zeros[zi], 0, (ki + zi) % 2, block,
                              names[form]));
            runs++;
          }
    for (ci = 0; ci < 3; ci++)
      for (zi = 0; zi < 3; zi += 2)
        for (ki = 1; ki <= 3; ki++) {
          int64_t C = ci == 0 ? 16 : ci == 1 ? 1024 : 1827;
          if (form != 1 && ci) continue; /* (the large ones on the plans' kernels) */
          CHECK(check_wino3(form, zi > 0, 4, 5, C, ci ? 16 : 40, zeros[zi], ki, zi > 0, 6, names[form]));
          runs++;
        }
  }
  fprintf(stderr, "  (%d Winograd F(3x3) runs; AVX-512 VNNI here: %d)\n", runs, simd);
}
#endif

/* qadd's SIMD rows against the scalar row, byte for byte: every pair of uint8 / int8
   operands (all 65536 pairs of values), outputs of both types, zero points at the ends and in
   the middle, scales whose quotients land on ties, a relu and a clip, lengths off the vector
   widths. */
TEST(qadd_rows_match_the_scalar_row) {
  static const float scales[7][3] = {{0.5f, 0.25f, 0.5f},          {0.0173f, 0.0291f, 0.0412f},
                                     {1.0f, 1.0f, 3.0f},            {0.0123f, 0.0456f, 0.00789f},
                                     {0.031f, 0.017f, 0.0234567f},  {3.0f, 0.001f, 1e-6f},
                                     {0.02f, 0.03f, 0.05f}};
  int isa, ta, tb, tyi, si, runs = 0, fast = 0, fixed = 0, x86 = 0;
  unsigned char *a = (unsigned char *)malloc(65536 + 37), *b = (unsigned char *)malloc(65536 + 37);
  unsigned char *want = (unsigned char *)malloc(65536 + 37), *have = (unsigned char *)malloc(65536 + 37);
  int i;
  for (i = 0; i < 65536 + 37; i++) a[i] = (unsigned char)(i & 0xff), b[i] = (unsigned char)((i >> 8) & 0xff);
  for (isa = FUSE_ISA_AVX2; isa <= FUSE_ISA_NEON; isa++) {
    fuse__qadd_fn fn = isa_runs_here(isa) ? fuse__qadd_pick((fuse_isa)isa) : NULL;
    if (!fn || fn == fuse__qadd_scalar) continue;
    for (ta = 0; ta < 2; ta++)
      for (tb = 0; tb < 2; tb++)
        for (tyi = 0; tyi < 2; tyi++)
          for (si = 0; si < 7; si++) {
            fuse__qadd_args q;
            int64_t n = 65536 + 37 - si * 5;
            memset(&q, 0, sizeof q);
            q.a_scale = scales[si][0], q.b_scale = scales[si][1], q.y_scale = scales[si][2];
            q.y_recip = 1.0 / (double)q.y_scale;
            q.a_signed = ta, q.b_signed = tb, q.y_signed = tyi;
            q.a_zero = ta ? -5 : 128, q.b_zero = tb ? 0 : 255, q.y_zero = tyi ? 3 : 100;
            q.lo = (tyi ? -128 : 0) - q.y_zero, q.hi = (tyi ? 127 : 255) - q.y_zero;
            if (si == 4) q.lo += 7, q.hi -= 20; /* (a range inside the type's) */
            q.num_clamps = si == 6 ? 2 : si % 3; /* none, a relu, a relu and a clip */
            q.clo[0] = 0.0, q.chi[0] = 1e30, q.clo[1] = -0.5, q.chi[1] = 1.25;
            if (si == 6) q.clo[1] = -2.0, q.chi[1] = -1.0; /* (a clip past the relu: all -1) */
            fuse__qadd_prepare(&q);
            fast += q.fast; /* (the float lanes: all but the scales of 3e6 and 1e3) */
            fixed += q.fixed; /* (x86's fixed-point lanes: as many) */
            fuse__qadd_scalar(a, b, want, n, &q);
            memset(have, 0xcd, (size_t)n);
            fn(a, b, have, n, &q);
            for (i = 0; i < (int)n && have[i] == want[i]; i++) {
            }
            if (i < (int)n)
              fprintf(stderr, "  %s: types %d %d -> %d, scales %d: [%d] (a %d, b %d) %d, want %d\n",
                      fuse__isa_name((fuse_isa)isa), ta, tb, tyi, si, i, a[i], b[i], have[i], want[i]);
            CHECK(i == (int)n);
            if (si == 1 || si == 5) { /* in place: y is a (the rows read a lane they redo first) */
              memcpy(have, a, (size_t)n);
              fn(have, b, have, n, &q);
              CHECK(memcmp(have, want, (size_t)n) == 0);
            }
            runs++;
            x86 += isa != FUSE_ISA_NEON;
          }
  }
  fprintf(stderr, "  (%d qadd row runs against the scalar row, %d on float lanes, %d fixed-point)\n", runs,
          fast, fixed);
  CHECK(fast == runs / 7 * 6);
  CHECK(fixed == x86 / 7 * 6);
  free(a), free(b), free(want), free(have);
}

/* The quantize row against the reference's per-tensor loop (fuse__quant_per_tensor on the
   scalar ISA), byte for byte: values around every output level and its ties, NaN, infinities,
   huge values, zero points at the ends, uint8 and int8, a length off the vector width. */
TEST(quantize_row_matches_the_loop) {
  static const float scales[3] = {0.5f, 0.0173f, 3.0f};
  static const int32_t zeros[2][3] = {{0, 128, 255}, {-128, 0, 127}};
  enum { N = 2 * 1024 + 5 };
  float *x = (float *)malloc(N * sizeof(float));
  unsigned char want[N], have[N];
  int isa, si, zi, sgn, i, runs = 0;
  for (isa = FUSE_ISA_AVX2; isa <= FUSE_ISA_NEON; isa++) {
    fuse__quantize_fn row = isa_runs_here(isa) ? fuse__quantize_pick((fuse_isa)isa) : NULL;
    if (!row) continue;
    for (si = 0; si < 3; si++)
      for (sgn = 0; sgn < 2; sgn++)
        for (zi = 0; zi < 3; zi++) {
          int64_t done;
          for (i = 0; i < N; i++) /* levels -300 .. 300 and the halves between */
            x[i] = (float)(i % 1201 - 600) * 0.5f * scales[si] + (i % 7 == 0 ? 1e-3f * scales[si] : 0.0f);
          x[0] = NAN, x[1] = INFINITY, x[2] = -INFINITY, x[3] = 3e38f, x[4] = -3e38f, x[5] = -0.0f;
          CHECK(fuse__quant_per_tensor(FUSE_ISA_SCALAR, FUSE__OP_QUANTIZE, x, FUSE_FLOAT32, want,
                                       sgn ? FUSE_INT8 : FUSE_UINT8, N, scales[si], zeros[sgn][zi]));
          memset(have, 0xcd, sizeof have);
          done = row(x, have, N, scales[si], zeros[sgn][zi], sgn);
          CHECK(done > N - 8 && done <= N);
          CHECK(memcmp(have, want, (size_t)done) == 0);
          runs++;
        }
  }
  fprintf(stderr, "  (%d quantize row runs)\n", runs);
  free(x);
}

/* The max window of each ISA that runs here against the largest byte picked out directly:
   1 to 9 rows and 70 (more than the driver hands over at once: its 64 rows, then the output so
   far and 6 more), lengths around the vector width, uint8 and int8 order (flip 0x80), rows
   holding 0, 127, 128 and 255. */
TEST(max_windows_match_the_largest_byte) {
  static const int64_t lens[6] = {1, 31, 32, 33, 64, 100};
  static const int counts[4] = {1, 2, 9, 70};
  int isa, li, ci, fl, runs = 0;
  unsigned char *px = (unsigned char *)malloc(70 * 100);
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++) {
    fuse__qmax_fn fn = isa_runs_here(isa) ? fuse__qmax_pick((fuse_isa)isa) : NULL;
    if (!fn || (isa != FUSE_ISA_SCALAR && fn == fuse__qmax_scalar)) continue;
    for (li = 0; li < 6; li++)
      for (ci = 0; ci < 4; ci++)
        for (fl = 0; fl < 2; fl++) {
          static const unsigned char edge[4] = {0, 127, 128, 255};
          const unsigned char *rows[64];
          unsigned char y[101];
          int64_t n = lens[li], i;
          int nv = counts[ci], k, ok = 1;
          unsigned char flip = fl ? 0x80 : 0;
          for (i = 0; i < 70 * 100; i++) px[i] = (unsigned char)(i % 7 == 0 ? edge[i % 4] : next() % 256);
          memset(y, 0xcd, sizeof y);
          for (k = 0; k < nv && k < 64; k++) rows[k] = px + k * 100;
          fn(y, rows, nv < 64 ? nv : 64, n, flip);
          if (nv > 64) { /* the rest, the output so far among them */
            rows[0] = y;
            for (k = 64; k < nv; k++) rows[k - 63] = px + k * 100;
            fn(y, rows, nv - 63, n, flip);
          }
          for (i = 0; i < n + 1; i++) {
            int want = 0xcd;
            if (i < n) {
              int best = -1000;
              for (k = 0; k < nv; k++) {
                int v = fl ? (int)(signed char)px[k * 100 + i] : px[k * 100 + i];
                best = v > best ? v : best;
              }
              want = best & 0xff;
            }
            if (y[i] != want && ok) {
              fprintf(stderr, "  %s: %d rows of %d, flip %d: [%d] %d, want %d\n",
                      fuse__isa_name((fuse_isa)isa), nv, (int)n, flip, (int)i, y[i], want);
              ok = 0;
            }
          }
          CHECK(ok);
          runs++;
        }
  }
  CHECK(runs > 0);
  fprintf(stderr, "  (%d max window runs)\n", runs);
  free(px);
}

#ifdef FUSE__HAVE_QQUADS
/* The quads rows of each ISA that runs here (a stem's NCHW planes into pixel quads) against
   the bytes placed directly: 1 to 4 planes, lengths around the vector width; the byte past
   the row stays. */
TEST(quads_rows_match_the_bytes) {
  static const int64_t lens[5] = {1, 31, 32, 33, 100};
  int isa, li, C, runs = 0;
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++) {
    fuse__qquads_fn fn = isa_runs_here(isa) ? fuse__qquads_pick((fuse_isa)isa) : NULL;
    if (!fn || (isa != FUSE_ISA_SCALAR && fn == fuse__qquads_scalar)) continue;
    for (li = 0; li < 5; li++)
      for (C = 1; C <= 4; C++) {
        unsigned char planes[4][100], y[401];
        const unsigned char *x[4];
        int64_t n = lens[li], i;
        int c, ok = 1;
        for (c = 0; c < 4; c++) {
          x[c] = planes[c];
          for (i = 0; i < 100; i++) planes[c][i] = (unsigned char)(next() % 256);
        }
        memset(y, 0xcd, sizeof y);
        fn(y, x, C, n, 77);
        for (i = 0; i <= 4 * n; i++) {
          int want = i == 4 * n ? 0xcd : i % 4 < C ? planes[i % 4][i / 4] : 77;
          if (y[i] != want && ok) {
            fprintf(stderr, "  %s: %d planes of %d: [%d] %d, want %d\n", fuse__isa_name((fuse_isa)isa),
                    C, (int)n, (int)i, y[i], want);
            ok = 0;
          }
        }
        CHECK(ok);
        runs++;
      }
  }
  CHECK(runs > 0);
  fprintf(stderr, "  (%d quads row runs)\n", runs);
}
#endif

/* Packed qconv2d steps against the reference plan's direct loops, bit for bit: the driver of
   the tiles (run/quant_run.c) on convs of few input channels, window mode's (kernels/qconv.c,
   FUSE__QL_WINDOW: each pixel's window gathered into one tap) where this CPU runs quads, row
   mode elsewhere; C 1, 2, 3, 5, 7, 8; kernels 7x7 (a stem's), 3x3, 5x3, 2x5; strides 1 and 2,
   uneven padding, row dilation; K 64, 20 (a panel and a tail), 70, 250 and 200 (4 blocks of
   4 panels and more: the tile-major order); NCHW input. Counts the steps that ran in window
   mode. */
static const char *qconv_few_net =
    "graph(%xq: u8[1, %C, %H, %W]) {\n"
    "  %xs: [] = const{0.05}\n"
    "  %xz: u8[] = const{%XZ}\n"
    "  %wq: i8[%K, %C, %KH, %KW] = const\n"
    "  %ws: [] = const{0.01}\n"
    "  %ys: [] = const{%YS}\n"
    "  %yz: u8[] = const{9}\n"
    "  %x = dequantize(%xq, %xs, %xz)\n"
    "  %w = dequantize(%wq, %ws)\n"
    "  %c = conv2d(%x, %w, strides=[%SY, %SX], padding=[%PT, %PL, %PB, %PR], dilation=[%DY, 1], groups=1)\n"
    "  %r = relu(%c)\n"
    "  %yq = quantize(%r, %ys, %yz)\n"
    "  return %yq\n"
    "}\n";

static void replace_all(char *s, const char *key, const char *with) {
  char *at;
  size_t kl = strlen(key), wl = strlen(with);
  while ((at = strstr(s, key)) != NULL) {
    memmove(at + wl, at + kl, strlen(at + kl) + 1);
    memcpy(at, with, wl);
  }
}

static int qconv_window_steps(const fuse_plan *p) {
  int i, n = 0;
  for (i = 0; i < p->num_steps; i++)
    if (p->steps[i].op == FUSE__OP_QCONV2D &&
        ((const fuse__qhead *)(const void *)p->steps[i].packed)->layout == FUSE__QL_WINDOW)
      n++;
  return n;
}

TEST(packed_convs_of_few_channels_match_the_direct_loops) {
  static const int cases[][13] = { /* C, H, W, K, KH, KW, SY, SX, PT, PL, PB, PR, DY */
      {3, 30, 28, 64, 7, 7, 2, 2, 3, 3, 3, 3, 1}, {3, 9, 40, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {1, 12, 11, 70, 5, 3, 1, 2, 2, 0, 1, 2, 1}, {2, 10, 13, 64, 3, 3, 2, 1, 0, 1, 2, 1, 2},
      {5, 8, 9, 32, 2, 5, 1, 1, 1, 2, 0, 2, 1}, {7, 7, 12, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1},
      {3, 17, 17, 48, 3, 3, 2, 2, 1, 1, 1, 1, 2}, {3, 9, 10, 250, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {8, 7, 9, 200, 3, 3, 2, 1, 1, 1, 1, 1, 1}};
  int ci, isa, windows = 0, runs = 0;
  for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++)
    for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++) {
      const int *c = cases[ci];
      static const char *keys[13] = {"%C", "%H", "%W", "%K", "%KH", "%KW", "%SY", "%SX", "%PT", "%PL", "%PB", "%PR", "%DY"};
      int C = c[0], H = c[1], W = c[2], K = c[3], KH = c[4], KW = c[5], OH, OW, i, xz = ci % 2 ? 0 : 131;
      char text[2048], num[32];
      fuse_graph *g = NULL, *ref = NULL;
      fuse_plan *pg = NULL, *pr = NULL;
      fuse_compile_options o;
      float *wf;
      unsigned char *x, *got, *want;
      const void *ins[1];
      void *outs[1];
      if (!isa_runs_here(isa)) continue;
      OH = (H + c[8] + c[10] - ((KH - 1) * c[12] + 1)) / c[6] + 1;
      OW = (W + c[9] + c[11] - KW) / c[7] + 1;
      strcpy(text, qconv_few_net);
      for (i = 12; i >= 0; i--) { /* (longer keys first: %KH before %K) */
        snprintf(num, sizeof num, "%d", c[i]);
        if (i != 3) replace_all(text, keys[i], num);
      }
      snprintf(num, sizeof num, "%d", K), replace_all(text, "%K", num);
      snprintf(num, sizeof num, "%d", xz), replace_all(text, "%XZ", num);
      replace_all(text, "%YS", ci % 3 ? "0.2" : "0.9");
      CHECK_EQ_INT(fuse_graph_parse(text, NULL, &g), FUSE_OK);
      CHECK_EQ_INT(fuse_graph_parse(text, NULL, &ref), FUSE_OK);
      wf = (float *)malloc(sizeof(float) * (size_t)(K * C * KH * KW));
      x = (unsigned char *)malloc((size_t)(C * H * W));
      got = (unsigned char *)malloc((size_t)(K * OH * OW));
      want = (unsigned char *)malloc((size_t)(K * OH * OW));
      for (i = 0; i < K * C * KH * KW; i++) wf[i] = (float)((int)(next() % 256) - 128);
      for (i = 0; i < C * H * W; i++) x[i] = (unsigned char)(next() >> 24);
      CHECK_EQ_INT(fuse_graph_set_constant(g, "wq", wf, (size_t)(K * C * KH * KW)), FUSE_OK);
      CHECK_EQ_INT(fuse_graph_set_constant(ref, "wq", wf, (size_t)(K * C * KH * KW)), FUSE_OK);
      CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
      CHECK_EQ_INT(fuse_optimize(ref, NULL), FUSE_OK);
      memset(&o, 0, sizeof o);
      o.num_threads = 1;
      o.isa = (fuse_isa)isa;
      CHECK_EQ_INT(fuse_compile(g, &o, &pg), FUSE_OK);
      o.reference_kernels = 1;
      CHECK_EQ_INT(fuse_compile(ref, &o, &pr), FUSE_OK);
      if (pg && pr) {
        windows += qconv_window_steps(pg);
        ins[0] = x;
        outs[0] = got, memset(got, 0xcd, (size_t)(K * OH * OW));
        CHECK_EQ_INT(fuse_run_typed(pg, ins, outs, NULL), FUSE_OK);
        outs[0] = want;
        CHECK_EQ_INT(fuse_run_typed(pr, ins, outs, NULL), FUSE_OK);
        if (memcmp(got, want, (size_t)(K * OH * OW))) {
          for (i = 0; i < K * OH * OW && got[i] == want[i]; i++) continue;
          fprintf(stderr, "  case %d (%s): at %d got %d, want %d\n", ci, fuse__isa_name((fuse_isa)isa), i, got[i], want[i]);
          CHECK(0);
        }
        runs++;
      }
      fuse_plan_destroy(pg), fuse_plan_destroy(pr);
      fuse_graph_destroy(g), fuse_graph_destroy(ref);
      free(wf), free(x), free(got), free(want);
    }
  CHECK(runs > 0);
#ifdef FUSE__HAVE_QWINDOW
  if (fuse__cpu_vnni() & 3) CHECK(windows > 0); /* (a VNNI CPU: the quads, in window mode) */
#endif
  fprintf(stderr, "  (%d conv runs, %d in window mode)\n", runs, windows);
}

/* The table rows (AVX-512 VBMI where the CPU has it) against the scalar row: every index, a
   length off the vector width, in place and apart. */
TEST(table_rows_match_the_scalar_row) {
  enum { N = 3 * 256 + 61 };
  unsigned char table[256], x[N], want[N], have[N];
  int isa, i, form, runs = 0;
  for (i = 0; i < 256; i++) table[i] = (unsigned char)(next() >> 24);
  for (i = 0; i < N; i++) x[i] = (unsigned char)(i * 97 + i / 256);
  fuse__qtable_scalar(want, x, N, table);
  for (isa = FUSE_ISA_AVX2; isa <= FUSE_ISA_NEON; isa++)
    for (form = 0; form < 2; form++) { /* this CPU's extensions, then none (AVX-512 without VBMI) */
      fuse__qtable_fn fn = isa_runs_here(isa) ? fuse__qtable_pick((fuse_isa)isa, form ? 0 : fuse__cpu_vnni()) : NULL;
      if (!fn || fn == fuse__qtable_scalar || (form && fn == fuse__qtable_pick((fuse_isa)isa, fuse__cpu_vnni())))
        continue;
      memset(have, 0xcd, sizeof have);
      fn(have, x, N, table);
      CHECK(memcmp(have, want, N) == 0);
      memcpy(have, x, N);
      fn(have, have, N, table);
      CHECK(memcmp(have, want, N) == 0);
      runs++;
    }
  fprintf(stderr, "  (%d table row runs; this CPU's extensions: %d)\n", runs, fuse__cpu_vnni());
}

/* The direct loops' and the tiles' requantization agree with round half to even on ties. */
TEST(requantization_rounds_ties_to_even) {
  fuse__qhead h;
  memset(&h, 0, sizeof h);
  h.lo = -128, h.hi = 127;
  CHECK_EQ_INT(fuse__qtile_requant(5, 0.5f, &h), 2);   /* 2.5 -> 2 */
  CHECK_EQ_INT(fuse__qtile_requant(7, 0.5f, &h), 4);   /* 3.5 -> 4 */
  CHECK_EQ_INT(fuse__qtile_requant(-5, 0.5f, &h), -2); /* -2.5 -> -2 */
  CHECK_EQ_INT(fuse__qtile_requant(1000, 1.0f, &h), 127);
  CHECK_EQ_INT(fuse__qtile_requant(-1000, 1.0f, &h), -128);
}

int main(void) {
  RUN(tiles_match_the_reference);
  RUN(tiles_saturate_products_past_int32);
  RUN(depthwise_kernels_match_the_reference);
#ifdef FUSE__HAVE_QWINO
  RUN(winograd_matches_the_direct_conv);
#endif
#ifdef FUSE__HAVE_QWINO3
  RUN(winograd3_matches_the_direct_conv);
#endif
  RUN(qadd_rows_match_the_scalar_row);
  RUN(quantize_row_matches_the_loop);
  RUN(table_rows_match_the_scalar_row);
  RUN(max_windows_match_the_largest_byte);
#ifdef FUSE__HAVE_QQUADS
  RUN(quads_rows_match_the_bytes);
#endif
  RUN(requantization_rounds_ties_to_even);
  RUN(packed_convs_of_few_channels_match_the_direct_loops);
  return runner_finish("qkernels");
}
