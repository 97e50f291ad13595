/* embedded.c - fuse.h on a bare-metal target (Cortex-M7): a plan compiled on the build host,
   linked in as a const array and run by a runtime-only build. No graph, no compiler, no
   malloc, no stdio.

   The plan (examples/embedded_plan.c makes it) is one fused step, Conv2d(3, 8, 3, padding 1)
   + bias + ReLU6 on the scalar kernels. Its blob is a 64-byte aligned const array in flash
   (embedded_blob.h, written by `fuse_run PLAN.fplan --emit-c embedded_blob`), which
   fuse_plan_load reads in place: the packed weights stay where they are; the plan's steps,
   tensors and workspace come from a static arena through a fuse_allocator (embedded_arena.h).
   The build defines FUSE_RUNTIME_ONLY (loading and running only), FUSE_NO_MESSAGES (refusals
   without their text: nothing prints them here) and includes embedded_config.h, the header
   `fuse_run --emit-config PLAN.fplan` writes, which leaves out every kind of step, kernel
   family, post-op and instruction set the plan does not use (README.md, Supported targets,
   has the text size this leaves, against the program that built, optimized and compiled the
   graph on the device, as this example did before plan blobs). The program runs the plan, checks the
   result against a direct loop and returns 0 when they agree (a checksum of the output is left
   in embedded_checksum for a debugger).

   `make test-m7` does each step (the plan, the array, the header, this build with
   gcc-arm-none-eabi and newlib-nano, the size, the C library calls, a run under qemu-arm):

       build/embedded_plan plan.fplan
       build/fuse_run plan.fplan --emit-c embedded_blob > embedded_blob.h
       build/fuse_run --emit-config plan.fplan > embedded_config.h
       arm-none-eabi-gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -I. -I<dir of the two> \
         -mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard -mthumb -Os \
         -ffunction-sections -fdata-sections -Wl,--gc-sections --specs=nano.specs \
         --specs=nosys.specs examples/embedded.c -o embedded.elf -lm

   On a host it builds the same way (make build/embedded: a scalar plan runs anywhere) and
   exits 0 when the plan's result matches the direct loop. examples/embedded_int8.c does the
   same for an int8 plan. */
#include "embedded_config.h"
#define FUSE_RUNTIME_ONLY
#define FUSE_NO_STDIO
#define FUSE_NO_MESSAGES
/* No default allocator: the plan gets the arena's (a NULL allocator would fail cleanly with
   FUSE_ERROR_OUT_OF_MEMORY), so malloc / free are not linked. */
#define FUSE_MALLOC(size) ((void)(size), (void *)0)
#define FUSE_FREE(ptr) ((void)(ptr))
/* The library's invariant checks stop here instead of assert(), which would link newlib's
   fprintf to stderr. */
static void embedded_halt(void) {
  for (;;) {
  }
}
#define FUSE_ASSERT(cond) ((cond) ? (void)0 : embedded_halt())
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "embedded_model.h"
#include "embedded_blob.h" /* embedded_blob[], embedded_blob_size: the plan */
#include "embedded_arena.h" /* arena_alloc, arena_free over a static arena */

#include <stdint.h>
#include <string.h>

#define C EMBEDDED_C
#define K EMBEDDED_K
#define S EMBEDDED_S

/* ---- data */
static float x_data[C * S * S], w_data[K * C * 3 * 3], b_data[K];
static float y_fused[K * S * S], y_ref[K * S * S];

static void reference(void) {
  int k, c, i, j, di, dj;
  for (k = 0; k < K; k++)
    for (i = 0; i < S; i++)
      for (j = 0; j < S; j++) {
        float acc = 0.0f;
        for (c = 0; c < C; c++)
          for (di = 0; di < 3; di++)
            for (dj = 0; dj < 3; dj++) {
              int y = i + di - 1, x = j + dj - 1;
              if (y < 0 || y >= S || x < 0 || x >= S) continue;
              acc += x_data[(c * S + y) * S + x] * w_data[((k * C + c) * 3 + di) * 3 + dj];
            }
        acc += b_data[k];
        y_ref[(k * S + i) * S + j] = acc < 0.0f ? 0.0f : acc > 6.0f ? 6.0f : acc;
      }
}

/* 0 = ok; else the step that failed (1 load, 2 run, 3 mismatch) */
static int run_plan(uint32_t *checksum) {
  fuse_allocator alloc;
  fuse_plan_load_options opt;
  fuse_plan *plan = 0;
  const float *in[1];
  float *out[1];
  uint32_t sum = 0;
  int i;

  alloc.alloc = arena_alloc;
  alloc.free = arena_free;
  alloc.user = 0;
  memset(&opt, 0, sizeof opt);
  opt.alloc = &alloc; /* the weights are read in place, from flash */
  if (fuse_plan_load(embedded_blob, embedded_blob_size, &opt, &plan) != FUSE_OK) return 1;
  in[0] = x_data;
  out[0] = y_fused;
  if (fuse_run(plan, in, out, 0) != FUSE_OK) return fuse_plan_destroy(plan), 2;
  fuse_plan_destroy(plan);

  reference();
  for (i = 0; i < K * S * S; i++) {
    float d = y_fused[i] - y_ref[i];
    if (d > 1e-4f || d < -1e-4f) return 3;
    /* the checksum: outputs rounded to 1/1024, so it does not depend on rounding order */
    sum = sum * 31u + (uint32_t)(int32_t)(y_ref[i] * 1024.0f + (y_ref[i] >= 0 ? 0.5f : -0.5f));
  }
  *checksum = sum;
  return 0;
}

volatile uint32_t embedded_checksum; /* for a debugger */
volatile uint32_t embedded_arena_peak;

int main(void) {
  uint32_t sum = 0;
  int rc;
  embedded_model_data(x_data, w_data, b_data);
  rc = run_plan(&sum);
  embedded_checksum = sum;
  embedded_arena_peak = (uint32_t)arena_peak;
  return rc;
}
