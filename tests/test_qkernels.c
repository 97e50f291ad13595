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
    bias[j] = (int32_t)(next() % 20001) - 10000;
    scale[j] = j % 4 == 0 ? 0.5f : j % 4 == 1 ? 0.25f : 1.0f / (float)(3 + next() % 500);
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
        fprintf(stderr, "  %s %dx%d: layout %d taps %d csteps %d extreme %d valid %dx%d: [%d][%d] %d, want %d\n",
                name, k->nb, k->mr, tc->layout, tc->taps, tc->csteps, tc->extreme, mvalid, kvalid,
                r, j, have, want);
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

TEST(tiles_match_the_reference) {
  static const int taps[3] = {1, 2, 9}, csteps[6] = {1, 2, 3, 8, 17, 40};
  static const int32_t zeros[3] = {0, 128, 255};
  const fuse__qtile_kind *k;
  int ti, ci, zi, ext, sgn, isa, runs = 0;
  for (k = fuse__qtile_kinds; k->fn; k++)
    for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++) {
      if (!isa_runs_here(isa) || !fuse__qtile_runs(k, (fuse_isa)isa, k->layout, fuse__cpu_vnni()) ||
          (k->isa != isa && !(k->isa == FUSE_ISA_AVX2 && isa == FUSE_ISA_AVX512)))
        continue; /* (each kind once: on its own ISA, AVX2's on AVX2 or AVX-512) */
      if (k->isa == FUSE_ISA_AVX2 && isa == FUSE_ISA_AVX512 && isa_runs_here(FUSE_ISA_AVX2)) continue;
      for (ti = 0; ti < 3; ti++)
        for (ci = 0; ci < 6; ci++)
          for (zi = 0; zi < 3; zi++)
            for (ext = 0; ext < 2; ext++)
              for (sgn = 0; sgn < 2; sgn++) {
                tile_case tc;
                int part = (ti + ci + zi) % 2; /* every other case: a partial tile */
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

/* The depthwise kernel of each ISA that runs here against the scalar twin's arithmetic
   written out: runs of 1, 3 and 9 pixels (each next one two pixels further on: 9 takes the
   kernels' blocks of 2 and 4 pixels and their remainders), channel counts around the vector
   widths, taps 1, 9 (the kernels' register path) and 25, weights and inputs at their extremes,
   uint8 and int8 outputs; the bytes past the run stay. */
TEST(depthwise_kernels_match_the_reference) {
  static const int64_t counts[7] = {1, 7, 8, 16, 24, 33, 96};
  static const int ntaps[3] = {1, 9, 25};
  static const int64_t runs_of[3] = {1, 3, 9};
  int isa, ci, ti, sgn, ri, runs = 0, form;
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++)
    for (form = 0; form < 2; form++) { /* this CPU's extensions, then none (AVX-512 without VNNI) */
      fuse__qdw_fn fn =
          isa_runs_here(isa) ? fuse__qdw_pick((fuse_isa)isa, form ? 0 : fuse__cpu_vnni()) : NULL;
      if (!fn || (form && fn == fuse__qdw_pick((fuse_isa)isa, fuse__cpu_vnni()))) continue;
      for (ci = 0; ci < 7; ci++)
        for (ti = 0; ti < 3; ti++)
          for (sgn = 0; sgn < 2; sgn++)
            for (ri = 0; ri < 3; ri++) {
              int64_t C = counts[ci], Cp = (C + 15) / 16 * 16, c, npix = runs_of[ri], step = 2 * C;
              int64_t region = npix * step, p, ysize = (npix + 1) * C + 16;
              int taps = ntaps[ti], t, ok = 1;
              unsigned char *px = (unsigned char *)malloc((size_t)(taps * region));
              unsigned char *y = (unsigned char *)malloc((size_t)ysize);
              const unsigned char *src[25];
              int16_t *w = (int16_t *)calloc((size_t)(taps * Cp), sizeof(int16_t));
              int32_t bias[112];
              float scale[112];
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
              memset(y, 0xcd, (size_t)ysize);
              fn(src, step, npix, taps, w, Cp, C, bias, scale, &h, y);
              for (p = 0; p <= npix; p++)
                for (c = 0; c < C + 16; c++) {
                  int32_t want = 0xcd, have;
                  if (p * C + c >= ysize) break;
                  have = y[p * C + c];
                  if (p < npix && c < C) {
                    int32_t acc = bias[c];
                    for (t = 0; t < taps; t++) acc += (int32_t)src[t][p * step + c] * w[t * Cp + c];
                    want = fuse__qtile_requant(acc, scale[c], &h) & 0xff;
                  } else if (p * C + c < npix * C) {
                    continue; /* (another pixel's channel) */
                  }
                  if (have != want && ok) {
                    fprintf(stderr, "  %s: C %d taps %d pixels %d: [%d][%d] %d, want %d\n",
                            fuse__isa_name((fuse_isa)isa), (int)C, taps, (int)npix, (int)p, (int)c,
                            have, want);
                    ok = 0;
                  }
                }
              CHECK(ok);
              runs++;
              free(px), free(w), free(y);
            }
    }
  CHECK(runs > 0);
  fprintf(stderr, "  (%d depthwise runs)\n", runs);
}

/* qadd's SIMD rows against the scalar row, byte for byte: every pair of uint8 / int8
   operands (all 65536 pairs of values), outputs of both types, zero points at the ends and in
   the middle, scales whose quotients land on ties, a relu and a clip, lengths off the vector
   widths. */
TEST(qadd_rows_match_the_scalar_row) {
  static const float scales[3][3] = {{0.5f, 0.25f, 0.5f}, {0.0173f, 0.0291f, 0.0412f}, {1.0f, 1.0f, 3.0f}};
  int isa, ta, tb, tyi, si, runs = 0;
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
          for (si = 0; si < 3; si++) {
            fuse__qadd_args q;
            int64_t n = 65536 + 37 - si * 5;
            memset(&q, 0, sizeof q);
            q.a_scale = scales[si][0], q.b_scale = scales[si][1], q.y_scale = scales[si][2];
            q.y_recip = 1.0 / (double)q.y_scale;
            q.a_signed = ta, q.b_signed = tb, q.y_signed = tyi;
            q.a_zero = ta ? -5 : 128, q.b_zero = tb ? 0 : 255, q.y_zero = tyi ? 3 : 100;
            q.lo = (tyi ? -128 : 0) - q.y_zero, q.hi = (tyi ? 127 : 255) - q.y_zero;
            q.num_clamps = si; /* none, a relu, a relu and a clip */
            q.clo[0] = 0.0, q.chi[0] = 1e30, q.clo[1] = -0.5, q.chi[1] = 1.25;
            fuse__qadd_scalar(a, b, want, n, &q);
            memset(have, 0xcd, (size_t)n);
            fn(a, b, have, n, &q);
            for (i = 0; i < (int)n && have[i] == want[i]; i++) {
            }
            if (i < (int)n)
              fprintf(stderr, "  %s: types %d %d -> %d, scales %d: [%d] (a %d, b %d) %d, want %d\n",
                      fuse__isa_name((fuse_isa)isa), ta, tb, tyi, si, i, a[i], b[i], have[i], want[i]);
            CHECK(i == (int)n);
            runs++;
          }
  }
  fprintf(stderr, "  (%d qadd row runs against the scalar row)\n", runs);
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

/* The table rows (AVX-512 VBMI where the CPU has it) against the scalar row: every index, a
   length off the vector width, in place and apart. */
TEST(table_rows_match_the_scalar_row) {
  enum { N = 3 * 256 + 61 };
  unsigned char table[256], x[N], want[N], have[N];
  int isa, i, runs = 0;
  for (i = 0; i < 256; i++) table[i] = (unsigned char)(next() >> 24);
  for (i = 0; i < N; i++) x[i] = (unsigned char)(i * 97 + i / 256);
  fuse__qtable_scalar(want, x, N, table);
  for (isa = FUSE_ISA_AVX2; isa <= FUSE_ISA_NEON; isa++) {
    fuse__qtable_fn fn = isa_runs_here(isa) ? fuse__qtable_pick((fuse_isa)isa, fuse__cpu_vnni()) : NULL;
    if (!fn || fn == fuse__qtable_scalar) continue;
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
  RUN(depthwise_kernels_match_the_reference);
  RUN(qadd_rows_match_the_scalar_row);
  RUN(quantize_row_matches_the_loop);
  RUN(table_rows_match_the_scalar_row);
  RUN(requantization_rounds_ties_to_even);
  return runner_finish("qkernels");
}
