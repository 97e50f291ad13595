/* Header check (runtime-only): fuse.h's implementation with FUSE_RUNTIME_ONLY (loading and
   running plans, the kernels; no graph, passes, compiler or ONNX) builds warning-free and runs
   a plan blob as the full build does, bit for bit.

       runtime_only PLAN.fplan INPUT.bin WANT.bin [NEEDS_MORE.fplan]

   loads PLAN.fplan (in place, from a 64-byte aligned copy), runs it on INPUT.bin (its one input,
   raw float32) and compares the output with WANT.bin (the full build's output of the same
   blob, fuse_run --output) byte for byte. Built with RUNTIME_ONLY_CONFIG="file.h", the header
   fuse_run --emit-config wrote for PLAN.fplan, the build leaves out everything that plan does
   not use; NEEDS_MORE.fplan, a plan that needs some of it, must then be refused with
   FUSE_ERROR_UNSUPPORTED and a message naming a FUSE_NO_ define (an empty message with
   FUSE_NO_MESSAGES). Exit status 0: all of that held. */
#ifdef RUNTIME_ONLY_CONFIG
#include RUNTIME_ONLY_CONFIG
#endif
#define FUSE_RUNTIME_ONLY
#define FUSE_IMPLEMENTATION
#include "fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a whole file, 64-byte aligned (so the plan reads its weights in place): its bytes at *data,
   the block to free returned; NULL if it cannot be read */
static void *read_file(const char *path, void **data, size_t *size) {
  FILE *f = fopen(path, "rb");
  long n;
  unsigned char *block = NULL;
  *data = NULL;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (block = (unsigned char *)malloc((size_t)n + 64)) != NULL) {
    unsigned char *at = block + (64 - (size_t)((uintptr_t)block % 64)) % 64;
    if (fread(at, 1, (size_t)n, f) == (size_t)n) *data = at, *size = (size_t)n;
    else free(block), block = NULL;
  }
  fclose(f);
  return block;
}

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "runtime_only: %s%s%s\n", what, detail && *detail ? ": " : "", detail ? detail : "");
  return 1;
}

int main(int argc, char **argv) {
  char why[512] = "";
  fuse_plan_load_options opt;
  fuse_plan *plan = NULL;
  size_t blob_size = 0, in_size = 0, want_size = 0;
  void *blob_block, *in_block, *want_block, *blob, *in, *want;
  float *out = NULL;
  int64_t dims[FUSE_MAX_RANK];
  int64_t n = 1;
  int rank, d, status = 1;
  fuse_result r;
  if (argc < 4) return fail("usage: runtime_only PLAN.fplan INPUT.bin WANT.bin [NEEDS_MORE.fplan]", NULL);
  blob_block = read_file(argv[1], &blob, &blob_size);
  in_block = read_file(argv[2], &in, &in_size);
  want_block = read_file(argv[3], &want, &want_size);
  if (!blob || !in || !want) {
    fail("cannot read", !blob ? argv[1] : !in ? argv[2] : argv[3]);
    goto done;
  }
  memset(&opt, 0, sizeof opt);
  opt.error = why;
  opt.error_size = sizeof why;
  r = fuse_plan_load(blob, blob_size, &opt, &plan);
  if (r != FUSE_OK) {
    fail(fuse_result_string(r), why);
    goto done;
  }
  rank = fuse_plan_output_shape(plan, 0, dims);
  for (d = 0; d < rank; d++) n *= dims[d];
  if (fuse_plan_input_count(plan) != 1 || fuse_plan_output_count(plan) != 1 || rank < 0 ||
      (size_t)n * sizeof(float) != want_size) {
    fail("the plan's inputs and outputs are not those of the files", argv[1]);
    goto done;
  }
  out = (float *)malloc((size_t)n * sizeof(float));
  {
    const float *ins[1];
    float *outs[1];
    ins[0] = (const float *)in;
    outs[0] = out;
    if (!out || (r = fuse_run(plan, ins, outs, NULL)) != FUSE_OK) {
      fail("fuse_run", out ? fuse_result_string(r) : "out of memory");
      goto done;
    }
  }
  if (memcmp(out, want, want_size) != 0) {
    fail("the output differs from the full build's", argv[3]);
    goto done;
  }
  fuse_plan_destroy(plan);
  plan = NULL;
  if (argc > 4) { /* a plan that needs what the configuration left out */
    size_t more_size = 0;
    void *more, *more_block = read_file(argv[4], &more, &more_size);
    if (!more) {
      fail("cannot read", argv[4]);
      goto done;
    }
    r = fuse_plan_load(more, more_size, &opt, &plan);
    if (r == FUSE_OK) fuse_plan_destroy(plan); /* (the plan read the blob in place) */
    plan = NULL;
    free(more_block);
#ifdef RUNTIME_ONLY_CONFIG
#ifdef FUSE_NO_MESSAGES
    if (r != FUSE_ERROR_UNSUPPORTED || why[0]) {
#else
    if (r != FUSE_ERROR_UNSUPPORTED || !strstr(why, "FUSE_NO_")) {
#endif
      fail("a plan that needs what the build left out was not refused as it should be", why);
      goto done;
    }
#else
    if (r != FUSE_OK) {
      fail(fuse_result_string(r), why);
      goto done;
    }
#endif
  }
  status = 0;
done:
  fuse_plan_destroy(plan);
  free(blob_block);
  free(in_block);
  free(want_block);
  free(out);
  return status;
}
