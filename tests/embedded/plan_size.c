/* plan_size.c - `make m7-size M7_PLAN=plan.fplan`: the Cortex-M7 firmware of
   examples/embedded.c for any plan blob, to measure its text: the blob as a const array
   (embedded_blob.h, fuse_run --emit-c), the header of what the plan does not use
   (embedded_config.h, fuse_run --emit-config), FUSE_RUNTIME_ONLY, FUSE_NO_MESSAGES, a static
   arena of ARENA_BYTES. It loads the plan in place, runs it once on zeros and exits 0 (1: the
   load failed, 2: the run, 3: an input or output is larger than the buffers). */
#include "embedded_config.h"
#define FUSE_RUNTIME_ONLY
#define FUSE_NO_STDIO
#define FUSE_NO_MESSAGES
#define FUSE_MALLOC(size) ((void)(size), (void *)0)
#define FUSE_FREE(ptr) ((void)(ptr))
static void plan_size_halt(void) {
  for (;;) {
  }
}
#define FUSE_ASSERT(cond) ((cond) ? (void)0 : plan_size_halt())
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "embedded_blob.h"

#include <stdint.h>
#include <string.h>

#ifndef ARENA_BYTES
#define ARENA_BYTES (64u * 1024u * 1024u)
#endif
#define MAX_PORTS 8
#define MAX_FLOATS (1 << 18) /* per input and output */

static union {
  unsigned char bytes[ARENA_BYTES];
  uint64_t align;
} arena;
static size_t arena_top;
static float ports[2 * MAX_PORTS][MAX_FLOATS];

/* a bump allocator: nothing is given back */
static void *arena_alloc(size_t size, size_t alignment, void *user) {
  uintptr_t at = ((uintptr_t)arena.bytes + arena_top + alignment - 1) & ~(uintptr_t)(alignment - 1);
  (void)user;
  if (at - (uintptr_t)arena.bytes > ARENA_BYTES || size > ARENA_BYTES - (at - (uintptr_t)arena.bytes))
    return 0;
  arena_top = at - (uintptr_t)arena.bytes + size;
  return (void *)at;
}
static void arena_free(void *ptr, void *user) { (void)ptr, (void)user; }

int main(void) {
  fuse_allocator alloc;
  fuse_plan_load_options opt;
  fuse_plan *plan = 0;
  const float *in[MAX_PORTS];
  float *out[MAX_PORTS];
  int64_t dims[FUSE_MAX_RANK];
  int i, d, rank;
  alloc.alloc = arena_alloc, alloc.free = arena_free, alloc.user = 0;
  memset(&opt, 0, sizeof opt);
  opt.alloc = &alloc;
  if (fuse_plan_load(embedded_blob, embedded_blob_size, &opt, &plan) != FUSE_OK) return 1;
  if (fuse_plan_input_count(plan) > MAX_PORTS || fuse_plan_output_count(plan) > MAX_PORTS) return 3;
  for (i = 0; i < fuse_plan_input_count(plan) + fuse_plan_output_count(plan); i++) {
    int64_t n = 1;
    rank = i < fuse_plan_input_count(plan)
               ? fuse_plan_input_shape(plan, i, dims)
               : fuse_plan_output_shape(plan, i - fuse_plan_input_count(plan), dims);
    for (d = 0; d < rank; d++) n *= dims[d];
    if (n > MAX_FLOATS) return 3;
    if (i < fuse_plan_input_count(plan)) in[i] = ports[i];
    else out[i - fuse_plan_input_count(plan)] = ports[i];
  }
  if (fuse_run(plan, in, out, 0) != FUSE_OK) return 2;
  fuse_plan_destroy(plan);
  return 0;
}
