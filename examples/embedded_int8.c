/* embedded_int8.c - an int8 plan on a bare-metal target (Cortex-M7): what embedded.c does for
   a float layer, for a quantized one. A uint8 image in, int8 out, integers in between.

   The plan (examples/embedded_plan.c --int8 makes it) is the residual block of
   embedded_int8_model.h as a QDQ export writes it; fuse_optimize made it three integer steps,
   compiled for the scalar kernels:

       qconv2d   conv1 + bias + relu6, uint8 image -> uint8        (fuse.qconv2d)
       qconv2d   conv2 + bias, uint8 -> uint8                      (fuse.qconv2d)
       qadd      relu(the two added), -> int8                      (fuse.qadd)

   Its blob is a 64-byte aligned const array in flash (embedded_int8_blob.h, written by
   `fuse_run PLAN.fplan --emit-c embedded_int8_blob`) which fuse_plan_load reads in place,
   the plan's steps, tensors and workspace from a static arena (embedded_arena.h). The build
   defines FUSE_RUNTIME_ONLY, FUSE_NO_MESSAGES, no malloc, no assert, and includes
   embedded_int8_config.h (`fuse_run --emit-config PLAN.fplan`): it keeps the integer steps
   (no FUSE_NO_RUN_QINT) and leaves out every float kernel and step. The inputs and outputs
   are the plan's types, uint8 and int8, through fuse_run_typed.

   The program checks the plan's output against a direct loop of its own, exactly: int32
   sums, then each requantization rounded half to even as ONNX says. (The model's scales make
   every float product the steps form exact, so the loop needs no float: see
   embedded_int8_model.h.) It returns 0 when every value agrees and the data did meet what
   it is there to test: ties rounded to even, values clamped at both ends.

   `make test-m7` builds it as it builds embedded.c (see there), with:

       build/embedded_plan --int8 int8.fplan
       build/fuse_run int8.fplan --emit-c embedded_int8_blob > embedded_int8_blob.h
       build/fuse_run --emit-config int8.fplan > embedded_int8_config.h

   On a host, make build/embedded_int8 builds the same program; make test runs it. */
#include "embedded_int8_config.h"
#define FUSE_RUNTIME_ONLY
#define FUSE_NO_STDIO
#define FUSE_NO_MESSAGES
#define FUSE_MALLOC(size) ((void)(size), (void *)0)
#define FUSE_FREE(ptr) ((void)(ptr))
static void embedded_halt(void) {
  for (;;) {
  }
}
#define FUSE_ASSERT(cond) ((cond) ? (void)0 : embedded_halt())
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "embedded_int8_model.h"
#include "embedded_int8_blob.h" /* embedded_int8_blob[], embedded_int8_blob_size: the plan */
#include "embedded_arena.h"     /* arena_alloc, arena_free over a static arena */

#include <stdint.h>
#include <string.h>

#define C EMBEDDED_INT8_C
#define K EMBEDDED_INT8_K
#define S EMBEDDED_INT8_S

/* ---- data */
static uint8_t x_data[C * S * S];
static int8_t w1[K * C * 9], w2[K * K * 9];
static int32_t b1[K], b2[K];
static uint8_t q1[K * S * S], q2[K * S * S];
static int8_t y_plan[K * S * S], y_ref[K * S * S];
static uint32_t ties, clamped_low, clamped_high; /* what the direct loop met */

/* ---- the direct loop */

/* v / 2^shift rounded half to even (shift >= 1), for either sign */
static int32_t round_shift(int32_t v, int shift) {
  const int32_t one = (int32_t)1 << shift, half = one / 2;
  int32_t q = v / one, r = v - q * one; /* q toward zero; r has v's sign */
  if (r < 0) q -= 1, r += one;          /* q = floor, 0 <= r < one */
  if (r == half) ties++;
  if (r > half || (r == half && (q & 1))) q += 1;
  return q;
}

static int32_t clamp(int32_t v, int32_t lo, int32_t hi) {
  if (v < lo) return clamped_low++, lo;
  if (v > hi) return clamped_high++, hi;
  return v;
}

/* conv2d 3x3, padding 1, of x [cin, S, S] (uint8, zero point x_zero, scale 2^x_log2) with conv
   `layer`'s int8 weights w [K, cin, 3, 3] and int32 bias b, requantized to scale 2^y_log2,
   zero point y_zero, clamped to [lo, hi] (the type's range, narrowed by a relu6): the int32
   sum of (x - x_zero) * w and the bias, times the multiplier x_scale * w_scale[k] / y_scale =
   odd[k] / 2^(y_log2 - x_log2 + shift[k]), rounded half to even. */
static void conv(const uint8_t *x, int cin, int32_t x_zero, int x_log2, int layer,
                 const int8_t *w, const int32_t *b, int y_log2, int32_t y_zero, int32_t lo,
                 int32_t hi, uint8_t *y) {
  int k, c, i, j, di, dj;
  for (k = 0; k < K; k++) {
    const int32_t odd = embedded_int8_wscale_odd[layer][k];
    const int shift = y_log2 - x_log2 + embedded_int8_wscale_shift[layer][k];
    for (i = 0; i < S; i++)
      for (j = 0; j < S; j++) {
        int32_t acc = b[k];
        for (c = 0; c < cin; c++)
          for (di = 0; di < 3; di++)
            for (dj = 0; dj < 3; dj++) {
              int yy = i + di - 1, xx = j + dj - 1;
              if (yy < 0 || yy >= S || xx < 0 || xx >= S) continue;
              acc += ((int32_t)x[(c * S + yy) * S + xx] - x_zero) *
                     w[((k * cin + c) * 3 + di) * 3 + dj];
            }
        y[(k * S + i) * S + j] = (uint8_t)clamp(round_shift(acc * odd, shift) + y_zero, lo, hi);
      }
  }
}

static void reference(void) {
  int i;
  /* conv1, relu6: quantize(6) = 6 / 2^-5 = 192 */
  conv(x_data, C, EMBEDDED_INT8_X_ZERO, EMBEDDED_INT8_X_LOG2, 0, w1, b1, EMBEDDED_INT8_Q1_LOG2,
       0, 0, 6 << -EMBEDDED_INT8_Q1_LOG2, q1);
  conv(q1, K, 0, EMBEDDED_INT8_Q1_LOG2, 1, w2, b2, EMBEDDED_INT8_Q2_LOG2, EMBEDDED_INT8_Q2_ZERO,
       0, 255, q2);
  /* relu(q1 2^-5 + (q2 - 128) 2^-4) / 2^-4: in units of 2^-5, halved */
  for (i = 0; i < K * S * S; i++) {
    int32_t v = (int32_t)q1[i] + 2 * ((int32_t)q2[i] - EMBEDDED_INT8_Q2_ZERO);
    v = v < 0 ? 0 : v;
    y_ref[i] = (int8_t)clamp(round_shift(v, 1) + EMBEDDED_INT8_Y_ZERO, EMBEDDED_INT8_Y_ZERO, 127);
  }
}

/* 0 = ok; else the step that failed (1 load, 2 run, 3 mismatch, 4 the data met no tie or no
   clamp at one end) */
static int run_plan(uint32_t *checksum) {
  fuse_allocator alloc;
  fuse_plan_load_options opt;
  fuse_plan *plan = 0;
  const void *in[1];
  void *out[1];
  uint32_t sum = 0;
  int i;

  alloc.alloc = arena_alloc;
  alloc.free = arena_free;
  alloc.user = 0;
  memset(&opt, 0, sizeof opt);
  opt.alloc = &alloc; /* the weights are read in place, from flash */
  if (fuse_plan_load(embedded_int8_blob, embedded_int8_blob_size, &opt, &plan) != FUSE_OK) return 1;
  if (fuse_plan_input_type(plan, 0) != FUSE_UINT8 || fuse_plan_output_type(plan, 0) != FUSE_INT8)
    return fuse_plan_destroy(plan), 1;
  in[0] = x_data;
  out[0] = y_plan;
  if (fuse_run_typed(plan, in, out, 0) != FUSE_OK) return fuse_plan_destroy(plan), 2;
  fuse_plan_destroy(plan);

  reference();
  for (i = 0; i < K * S * S; i++) {
    if (y_plan[i] != y_ref[i]) return 3;
    sum = sum * 31u + (uint8_t)y_ref[i];
  }
  if (!ties || !clamped_low || !clamped_high) return 4;
  *checksum = sum;
  return 0;
}

volatile uint32_t embedded_checksum; /* for a debugger */
volatile uint32_t embedded_arena_peak;

int main(void) {
  uint32_t sum = 0;
  int rc;
  embedded_int8_model_data(x_data, w1, b1, w2, b2);
  rc = run_plan(&sum);
  embedded_checksum = sum;
  embedded_arena_peak = (uint32_t)arena_peak;
  return rc;
}
