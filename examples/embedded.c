/* embedded.c - fuse.h on a bare-metal target (Cortex-M7): no stdio, no ONNX, no malloc.

   Every allocation comes from a static arena through the allocator the program passes to
   fuse_graph_create (the plan inherits it). The program builds the chain PyTorch's importer
   writes for Conv2d(bias=True) + ReLU,

       conv2d(x, w, padding 1) -> reshape(b, [1, K, 1, 1]) -> add -> relu

   runs fuse_optimize (one fused step: conv2d + bias + clamp), compiles, runs, compares the
   result with a direct loop, and returns a checksum of the output.

   Cortex-M7 (gcc-arm-none-eabi, libnewlib-arm-none-eabi); `make test-m7` does this, checks the
   C library calls and runs it under qemu-arm (see README.md, Supported targets):

       arm-none-eabi-gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -I. \
         -mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard -mthumb -Os \
         -ffunction-sections -fdata-sections -Wl,--gc-sections --specs=nano.specs \
         --specs=nosys.specs examples/embedded.c -o build/embedded-m7.elf -lm
       arm-none-eabi-size build/embedded-m7.elf

   On a host it builds with the other examples (make examples) and exits 0 when the fused
   result matches the direct loop. */
#define FUSE_NO_STDIO
#define FUSE_NO_ONNX
/* No default allocator: every graph and plan here gets the arena's (a NULL allocator would
   fail cleanly with FUSE_ERROR_OUT_OF_MEMORY), so malloc / free are not linked. */
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

#include <stdint.h>
#include <string.h>

#define C 3  /* input channels */
#define K 8  /* output channels */
#define S 16 /* height = width */

/* ---- a bump allocator over a static arena. Each block keeps a small header just below it;
   freeing the newest block gives its space back (fuse.h frees most of its scratch blocks in
   reverse order), any other block stays until the arena is reset. */
#define ARENA_BYTES (256u * 1024u)
static union {
  unsigned char bytes[ARENA_BYTES];
  uint64_t align;
} arena;
static size_t arena_top, arena_peak;

typedef struct block_head {
  size_t start, end; /* arena_top before the block, and the block's end */
} block_head;

static void *arena_alloc(size_t size, size_t alignment, void *user) {
  block_head h;
  uintptr_t base = (uintptr_t)arena.bytes, at;
  (void)user;
  at = base + arena_top + sizeof h;
  at = (at + alignment - 1) & ~(uintptr_t)(alignment - 1);
  if (size > ARENA_BYTES || at - base > ARENA_BYTES - size) return 0;
  h.start = arena_top;
  h.end = (size_t)(at - base) + size;
  memcpy((void *)(at - sizeof h), &h, sizeof h); /* the header may be unaligned */
  arena_top = h.end;
  if (arena_top > arena_peak) arena_peak = arena_top;
  return (void *)at;
}

static void arena_free(void *ptr, void *user) {
  block_head h;
  (void)user;
  if (!ptr) return;
  memcpy(&h, (unsigned char *)ptr - sizeof h, sizeof h);
  if (h.end == arena_top) arena_top = h.start;
}

/* ---- data */
static float x_data[C * S * S], w_data[K * C * 3 * 3], b_data[K];
static float y_fused[K * S * S], y_ref[K * S * S];

static uint32_t rng_state = 2024u;
static float uniform(void) { /* xorshift32 -> [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return (float)(rng_state >> 8) / 8388608.0f - 1.0f;
}

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
        y_ref[(k * S + i) * S + j] = acc > 0.0f ? acc : 0.0f;
      }
}

/* 0 = ok; else the step that failed (1 graph, 2 optimize, 3 compile, 4 run, 5 mismatch) */
static int run_fused(uint32_t *checksum) {
  const int64_t x_shape[4] = {1, C, S, S}, w_shape[4] = {K, C, 3, 3};
  const int64_t b_shape[1] = {K}, b_4d[4] = {1, K, 1, 1};
  fuse_conv2d_attrs pad1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  fuse_allocator alloc;
  fuse_compile_options opt;
  fuse_graph *g;
  fuse_plan *plan = 0;
  fuse_value x, w, b, y;
  const float *in[1];
  float *out[1];
  uint32_t sum = 0;
  int i;

  memset(&opt, 0, sizeof opt);
  alloc.alloc = arena_alloc;
  alloc.free = arena_free;
  alloc.user = 0;
  g = fuse_graph_create(&alloc);
  if (!g) return 1;
  x = fuse_input(g, "x", 4, x_shape);
  w = fuse_constant(g, "w", 4, w_shape, w_data);
  b = fuse_constant(g, "b", 1, b_shape, b_data);
  y = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, w, &pad1), fuse_reshape(g, b, 4, b_4d)));
  fuse_output(g, y);
  if (fuse_graph_status(g) != FUSE_OK) return fuse_graph_destroy(g), 1;
  if (fuse_optimize(g, "fuse") != FUSE_OK || fuse_composite_count(g) != 1)
    return fuse_graph_destroy(g), 2;
  /* the scalar kernels, as on the Cortex-M (on x86 the SIMD kernels would add their 1 MB
     packing buffer to the workspace) */
  opt.isa = FUSE_ISA_SCALAR;
  if (fuse_compile(g, &opt, &plan) != FUSE_OK) return fuse_graph_destroy(g), 3;
  fuse_graph_destroy(g);
  in[0] = x_data;
  out[0] = y_fused;
  if (fuse_run(plan, in, out, 0) != FUSE_OK) return fuse_plan_destroy(plan), 4;
  fuse_plan_destroy(plan);

  reference();
  for (i = 0; i < K * S * S; i++) {
    float d = y_fused[i] - y_ref[i];
    if (d > 1e-4f || d < -1e-4f) return 5;
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
  int i, rc;
  for (i = 0; i < C * S * S; i++) x_data[i] = uniform();
  for (i = 0; i < K * C * 9; i++) w_data[i] = uniform() * 0.5f;
  for (i = 0; i < K; i++) b_data[i] = uniform() * 0.1f;
  rc = run_fused(&sum);
  embedded_checksum = sum;
  embedded_arena_peak = (uint32_t)arena_peak;
  return rc;
}
