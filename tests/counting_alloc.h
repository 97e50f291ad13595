/* counting_alloc.h - a fuse_allocator for tests: counts allocations and frees, checks the
   alignment asked for is honoured, fills new memory with 0xA5 (the library must not expect
   zeroed memory), and can refuse the Nth allocation (fail_at) - or, with fail_after, the Nth
   and every one after it - to test out-of-memory paths. */
#ifndef FUSE_TEST_COUNTING_ALLOC_H
#define FUSE_TEST_COUNTING_ALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define CA_MAYBE_UNUSED __attribute__((unused)) /* each test file uses a part */
#else
#define CA_MAYBE_UNUSED
#endif

typedef struct counting_alloc {
  long allocs, frees, bad_align, bad_free, bad_user;
  long fail_at;   /* 1-based index of the allocation to refuse; 0 = never */
  int fail_after; /* 1: refuse every allocation from fail_at on */
  long calls;     /* allocation calls, refused ones included */
  void **live;
  long nlive, caplive;
} counting_alloc;

static void *ca_alloc(size_t size, size_t alignment, void *user) {
  counting_alloc *c = (counting_alloc *)user;
  unsigned char *raw, *p;
  size_t al = alignment;
  if (!c || c->fail_at < 0) {
    if (c) c->bad_user++;
    return NULL;
  }
  c->calls++;
  if (c->fail_at && (c->calls == c->fail_at || (c->fail_after && c->calls > c->fail_at)))
    return NULL;
  if (al == 0 || (al & (al - 1)) != 0 || al > 64) {
    c->bad_align++;
    if (al == 0 || (al & (al - 1)) != 0) al = 64;
  }
  if (al < sizeof(void *)) al = sizeof(void *);
  raw = (unsigned char *)malloc(size + al + sizeof(void *));
  if (!raw) return NULL;
  p = (unsigned char *)(((uintptr_t)(raw + sizeof(void *)) + al - 1) & ~(uintptr_t)(al - 1));
  memcpy(p - sizeof(void *), &raw, sizeof raw);
  memset(p, 0xA5, size); /* the library must not expect zeroed memory */
  if (c->nlive == c->caplive) {
    long cap = c->caplive ? c->caplive * 2 : 64;
    void **l = (void **)realloc(c->live, (size_t)cap * sizeof *l);
    if (!l) {
      free(raw);
      return NULL;
    }
    c->live = l;
    c->caplive = cap;
  }
  c->live[c->nlive++] = p;
  c->allocs++;
  return p;
}

static void ca_free(void *ptr, void *user) {
  counting_alloc *c = (counting_alloc *)user;
  unsigned char *raw;
  long i;
  if (!c) return;
  if (!ptr) return;
  for (i = 0; i < c->nlive; i++)
    if (c->live[i] == ptr) break;
  if (i == c->nlive) {
    c->bad_free++;
    return;
  }
  c->live[i] = c->live[--c->nlive];
  memcpy(&raw, (unsigned char *)ptr - sizeof(void *), sizeof raw);
  free(raw);
  c->frees++;
}

CA_MAYBE_UNUSED static void ca_done(counting_alloc *c) {
  free(c->live);
  c->live = NULL;
}

CA_MAYBE_UNUSED static fuse_allocator ca_make(counting_alloc *c) {
  fuse_allocator a;
  memset(c, 0, sizeof *c);
  a.alloc = ca_alloc;
  a.free = ca_free;
  a.user = c;
  return a;
}

#endif
