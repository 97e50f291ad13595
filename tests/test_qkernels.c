/* test_qkernels.c - the integer conv2d tiles (kernels/qconv.c), each against a plain int64
   reference of the same rows and panel, bit for bit: every tile this CPU and build have (the
   scalar twin; AVX2's vpmaddwd; AVX-VNNI's and AVX-512 VNNI's vpdpbusd), on taps 1, 2 and 9,
   channel steps 1 to 40, the extremes that saturate 16-bit pair sums (x - x_zero = +-255
   against w = -128 and 127 everywhere), zero points 0, 128, 255, uint8 and int8 outputs,
   clamps, and sums that land exactly on x.5 after scaling (ties to even). Self-contained: the
   tiles are internal functions. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 12345;
static uint32_t next(void) { return rng = rng * 1664525u + 1013904223u; }

typedef struct tile_case {
  int layout, taps, csteps, extreme;
  int32_t x_zero, y_zero, lo, hi, y_signed;
} tile_case;

/* Runs tile on one case; compares with the reference; 1 when equal. */
static int check_tile(fuse__qtile_fn tile, int mr, const tile_case *tc, const char *name) {
  int step = tc->layout == FUSE__QL_PAIRS ? 2 : 4, esize = tc->layout == FUSE__QL_PAIRS ? 2 : 1;
  int cols = tc->csteps * step, t, r, j, c, ok = 1;
  size_t wbytes = (size_t)tc->taps * tc->csteps * FUSE__QNR * step * esize;
  unsigned char *rowbuf = (unsigned char *)malloc((size_t)tc->taps * mr * cols * esize);
  void *w = malloc(wbytes);
  const void **rows = (const void **)malloc((size_t)tc->taps * mr * sizeof(void *));
  unsigned char y[8 * FUSE__QNR];
  int32_t bias[FUSE__QNR];
  float scale[FUSE__QNR];
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
  for (t = 0; t < (int)(wbytes / esize); t++) {
    int8_t v = tc->extreme ? (int8_t)(t % 3 ? -128 : 127) : (int8_t)(next() % 256);
    if (esize == 2) ((int16_t *)w)[t] = v;
    else ((int8_t *)w)[t] = v;
  }
  for (j = 0; j < FUSE__QNR; j++) {
    bias[j] = (int32_t)(next() % 20001) - 10000;
    scale[j] = j % 4 == 0 ? 0.5f : j % 4 == 1 ? 0.25f : 1.0f / (float)(3 + next() % 500);
  }
  memset(y, 0xcd, sizeof y);
  tile(tc->taps, tc->csteps, rows, w, y, FUSE__QNR, bias, scale, &h);
  for (r = 0; r < mr; r++)
    for (j = 0; j < FUSE__QNR; j++) {
      int64_t acc = bias[j];
      int32_t want, have;
      for (t = 0; t < tc->taps; t++)
        for (c = 0; c < cols; c++) {
          const unsigned char *row = (const unsigned char *)rows[t * mr + r];
          int64_t x, wv;
          size_t at = ((size_t)t * tc->csteps + (size_t)(c / step)) * FUSE__QNR * step + (size_t)j * step + (size_t)(c % step);
          if (esize == 2) {
            int16_t d;
            memcpy(&d, row + 2 * c, 2);
            x = d, wv = ((int16_t *)w)[at];
          } else {
            x = row[c], wv = ((int8_t *)w)[at];
          }
          acc += x * wv;
        }
      want = fuse__qtile_requant((int32_t)acc, scale[j], &h);
      have = tc->y_signed ? (int32_t)(int8_t)y[r * FUSE__QNR + j] : (int32_t)y[r * FUSE__QNR + j];
      if (have != want && ok) {
        fprintf(stderr, "  %s: layout %d taps %d csteps %d extreme %d: [%d][%d] %d, want %d\n",
                name, tc->layout, tc->taps, tc->csteps, tc->extreme, r, j, have, want);
        ok = 0;
      }
    }
  free(rowbuf), free(w), free(rows);
  return ok;
}

TEST(tiles_match_the_reference) {
  static const int taps[3] = {1, 2, 9}, csteps[6] = {1, 2, 3, 8, 17, 40};
  static const int32_t zeros[3] = {0, 128, 255};
  int layout, ti, ci, zi, ext, sgn, isa, runs = 0;
  for (layout = FUSE__QL_PAIRS; layout <= FUSE__QL_QUADS; layout++)
    for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++) {
      int mr, cpu = (int)fuse_cpu_isa();
      fuse__qtile_fn tile;
      if (!(isa == FUSE_ISA_SCALAR || isa == cpu || (isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512)))
        continue; /* (plans for isa do not run here) */
      tile = fuse__qtile_pick((fuse_isa)isa, layout, fuse__cpu_vnni(), &mr);
      if (!tile) continue;
      for (ti = 0; ti < 3; ti++)
        for (ci = 0; ci < 6; ci++)
          for (zi = 0; zi < 3; zi++)
            for (ext = 0; ext < 2; ext++)
              for (sgn = 0; sgn < 2; sgn++) {
                tile_case tc;
                tc.layout = layout, tc.taps = taps[ti], tc.csteps = csteps[ci], tc.extreme = ext;
                tc.x_zero = zeros[zi], tc.y_signed = sgn;
                tc.y_zero = sgn ? -7 : 9;
                tc.lo = sgn ? (zi == 1 ? -7 : -128) : (zi == 1 ? 9 : 0);
                tc.hi = sgn ? 127 : (zi == 2 ? 200 : 255);
                CHECK(check_tile(tile, mr, &tc, fuse__isa_name((fuse_isa)isa)));
                runs++;
              }
    }
  CHECK(runs > 0);
  fprintf(stderr, "  (%d tile runs; VNNI on this CPU: %d)\n", runs, fuse__cpu_vnni());
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
  RUN(requantization_rounds_ties_to_even);
  return runner_finish("qkernels");
}
