/* embedded_arena.h - the allocator the firmware examples (embedded.c, embedded_int8.c) give
   fuse_plan_load: a bump allocator over a static arena of ARENA_BYTES (define it first to
   change the default). Each block keeps a small header just below it; freeing the newest
   block gives its space back (fuse.h frees in reverse order what it frees early), any other
   block stays until the arena is reset. arena_peak: the most the arena held. */
#ifndef EMBEDDED_ARENA_H
#define EMBEDDED_ARENA_H

#include <stdint.h>
#include <string.h>

#ifndef ARENA_BYTES
#define ARENA_BYTES (32u * 1024u)
#endif
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

#endif
