/* blob_buffer.h - a plan blob in memory for tests: fuse_plan_save's sink into a growing buffer
   whose data starts 64-byte aligned (plus `shift`, for a misaligned blob), as a loader in
   place needs. Zero the struct first; free(raw) after. */
#ifndef FUSE_TEST_BLOB_BUFFER_H
#define FUSE_TEST_BLOB_BUFFER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct blob {
  unsigned char *raw, *data; /* data: 64-byte aligned (+ shift) */
  size_t len, cap, shift;
  int failed;
} blob;

static void blob_write(void *user, const char *text, size_t len) {
  blob *b = (blob *)user;
  if (b->failed) return;
  if (b->len + len > b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 65536;
    unsigned char *raw, *data;
    while (cap < b->len + len) cap *= 2;
    raw = (unsigned char *)malloc(cap + 128);
    if (!raw) {
      b->failed = 1;
      return;
    }
    data = (unsigned char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63) + b->shift;
    if (b->len) memcpy(data, b->data, b->len);
    free(b->raw);
    b->raw = raw, b->data = data, b->cap = cap;
  }
  memcpy(b->data + b->len, text, len);
  b->len += len;
}

#endif
