/* fuzz_common.h - what every libFuzzer target in fuzz/ shares: fuse.h's implementation with a
   default allocator that refuses blocks above fuzz_cap bytes (a fuzz input may ask for a huge
   tensor; the library must then report FUSE_ERROR_OUT_OF_MEMORY, not take the machine's
   memory), and FUZZ_TARGET(fn), which makes fn the target's entry point.

   Each target is one function `static int fn(const unsigned char *data, size_t size)`. Built
   alone (clang -fsanitize=fuzzer,...), FUZZ_TARGET defines LLVMFuzzerTestOneInput to call it.
   With FUZZ_REPLAY or FUZZ_MANY defined, FUZZ_TARGET defines nothing: tests/test_fuzz_regress.c
   includes every target into one program and replays the committed inputs through the
   functions; fuzz/all_targets.c includes them into the one libFuzzer program `make fuzz` runs. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdlib.h>
#include <string.h>

static size_t fuzz_cap = (size_t)64 << 20; /* a target may raise it for its own inputs */
static void *fuzz_capped_malloc(size_t n) { return n > fuzz_cap ? NULL : malloc(n); }
#define FUSE_MALLOC(n) fuzz_capped_malloc(n)
#define FUSE_FREE(p) free(p)
#define FUSE_IMPLEMENTATION
#include "../fuse.h"

#if defined(FUZZ_REPLAY) || defined(FUZZ_MANY)
#define FUZZ_TARGET(fn)
#else
#define FUZZ_TARGET(fn)                                                        \
  int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);          \
  int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {         \
    return fn(data, size);                                                     \
  }
#endif

/* The element count of a value, or -1 when it is above `limit` (a fuzz run stays small). */
static long fuzz_numel(const fuse_graph *g, fuse_value v, long limit) {
  long n = 1;
  int k, r = fuse_value_rank(g, v);
  const int64_t *s = fuse_value_shape(g, v);
  if (r < 0 || !s) return -1;
  for (k = 0; k < r; k++) {
    if (s[k] < 1 || s[k] > limit || n > limit / (long)s[k]) return -1;
    n *= (long)s[k];
  }
  return n;
}

/* Compiles g (options may be NULL) and, when every input and output has at most `limit`
   elements and the workspace is at most 64 MB, runs it once on inputs filled with `fill`
   (cycled; zeros when NULL or empty). The outputs go to *outs_out (one calloc'd block per
   output, freed by the caller with fuzz_free_outputs) when it is not NULL. Returns the result
   of fuse_run, or the compile error, or FUSE_ERROR_UNSUPPORTED when the graph was too big to
   run. Never fails on its own: any error code is a normal outcome for a fuzz input. */
#define FUZZ_MAX_IO 16
static fuse_result fuzz_compile_run(const fuse_graph *g, const fuse_compile_options *opt,
                                    long limit, const float *fill, size_t nfill,
                                    float **outs_out) {
  fuse_plan *p = NULL;
  float *bufs[2 * FUZZ_MAX_IO];
  const float *ins[FUZZ_MAX_IO];
  int i, n_in = fuse_graph_input_count(g), n_out = fuse_graph_output_count(g), n = 0;
  fuse_result r = fuse_compile(g, opt, &p);
  if (r != FUSE_OK) return r;
  r = FUSE_ERROR_UNSUPPORTED;
  if (n_in <= FUZZ_MAX_IO && n_out <= FUZZ_MAX_IO &&
      fuse_plan_workspace_size(p) <= ((size_t)64 << 20)) {
    for (n = 0; n < n_in + n_out; n++) {
      fuse_value v = n < n_in ? fuse_graph_input(g, n) : fuse_graph_output(g, n - n_in);
      long count = fuzz_numel(g, v, limit), k;
      bufs[n] = count >= 0 ? (float *)calloc((size_t)count + 1, sizeof(float)) : NULL;
      if (!bufs[n]) break;
      if (n < n_in && fill && nfill)
        for (k = 0; k < count; k++) bufs[n][k] = fill[(size_t)k % nfill];
      if (n < n_in) ins[n] = bufs[n];
    }
    if (n == n_in + n_out) r = fuse_run(p, ins, bufs + n_in, NULL);
  }
  for (i = 0; i < n; i++) {
    if (outs_out && i >= n_in && r == FUSE_OK) outs_out[i - n_in] = bufs[i];
    else free(bufs[i]);
  }
  fuse_plan_destroy(p);
  return r;
}

#endif
