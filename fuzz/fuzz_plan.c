/* libFuzzer target: fuse_plan_load on damaged plan blobs.

   The first byte is a mode: 0x80 set, the rest of the input is the blob itself; else the rest
   is edits (two bytes of position, little-endian, modulo the blob's length, and a byte to put
   there) to a valid blob this target makes once (a conv -> bias -> relu6 -> depthwise -> pool
   -> matmul network, compiled for this CPU's best ISA). 0x01: verify the weights; 0x02: copy
   them; 0x04: the blob at an odd address; 0x08: cut the blob where the last edit's position
   says; 0x10: edit the committed QDQ network's blob instead (tests/data/onnx/tinynet_qdq.onnx,
   its convs, adds and pools as integer steps, when the file is there). What loads runs once
   on a fixed input and is described (fuse_plan_write).

   Checks (a failure aborts: a finding), besides no crash, leak or undefined behaviour:
     - an edited blob whose structure bytes (before the weights) changed is refused, with a
       message that starts "plan blob: ";
     - one whose weights alone changed loads unverified (and runs: reading nothing outside
       the blob, which ASan watches) and is refused verified; for the QDQ network's blob,
       whose integer steps keep their headers (sizes, layouts, zero points) in the weights,
       unverified it loads or is refused saying why;
     - an unchanged blob loads; a cut one is refused.
   A structure forged to pass its checksum is outside the loader's guarantee (its checks of
   counts, indices, offsets, regions and tiles still run; not every kernel's invariants).

   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_plan.c -lm */
#include "fuzz_common.h"

#include <stdio.h>

static long fuzz_plan_failures; /* replayed: counted, the run goes on */
static void fuzz_plan_check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_plan.c: check failed: %s\n", what);
  fuzz_plan_failures++;
#ifndef FUZZ_REPLAY
  abort();
#endif
}

typedef struct fuzz_plan_blob {
  unsigned char *data;
  size_t len, cap;
} fuzz_plan_blob;

static void fuzz_plan_write(void *user, const char *text, size_t len) {
  fuzz_plan_blob *b = (fuzz_plan_blob *)user;
  if (!b->data || b->len + len > b->cap) return;
  memcpy(b->data + b->len, text, len);
  b->len += len;
}

static void fuzz_plan_sink(void *u, const char *t, size_t n) { (void)u, (void)t, (void)n; }

/* Graph g optimized, compiled for this CPU and saved into b; g destroyed. Whether b holds a
   blob. */
static int fuzz_plan_base_of(fuse_graph *g, fuzz_plan_blob *b) {
  fuse_plan *p = NULL;
  if (g && fuse_optimize(g, "fuse") == FUSE_OK && fuse_compile(g, NULL, &p) == FUSE_OK) {
    b->cap = (size_t)1 << 20;
    b->data = (unsigned char *)malloc(b->cap);
    if (fuse_plan_save(p, fuzz_plan_write, b) != FUSE_OK) b->len = 0;
  }
  fuse_plan_destroy(p);
  fuse_graph_destroy(g);
  return b->len > 64;
}

/* The QDQ network's blob, made on the first call that asks for it (len 0: not there). */
static fuzz_plan_blob fuzz_plan_qbase;
static int fuzz_plan_qtried;
static int fuzz_plan_make_qbase(void) {
  fuse_graph *g = NULL;
  if (fuzz_plan_qtried) return fuzz_plan_qbase.len > 64;
  fuzz_plan_qtried = 1;
  if (fuse_onnx_load_file("tests/data/onnx/tinynet_qdq.onnx", NULL, &g) != FUSE_OK)
    fuse_graph_destroy(g), g = NULL;
  return fuzz_plan_base_of(g, &fuzz_plan_qbase);
}

/* The valid blob the edits apply to, made on the first call. */
static fuzz_plan_blob fuzz_plan_base;
static int fuzz_plan_make_base(void) {
  static const char *text =
      "graph(%x: [1, 3, 12, 12]) {\n"
      "  %w: [8, 3, 3, 3] = const\n"
      "  %b: [8] = const\n"
      "  %wd: [8, 1, 3, 3] = const\n"
      "  %fc: [8, 6] = const\n"
      "  %0 = conv2d(%x, %w, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1)\n"
      "  %1 = reshape(%b, shape=[1, 8, 1, 1])\n"
      "  %2 = add(%0, %1)\n"
      "  %3 = clip(%2, lo=0, hi=6)\n"
      "  %4 = conv2d(%3, %wd, strides=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1], groups=8)\n"
      "  %5 = global_avg_pool2d(%4)\n"
      "  %6 = flatten(%5, axis=1)\n"
      "  %7 = matmul(%6, %fc)\n"
      "  return %7\n"
      "}\n";
  static const char *names[] = {"w", "b", "wd", "fc"};
  static const size_t counts[] = {216, 8, 72, 48};
  static float data[216];
  fuse_graph *g = NULL;
  size_t k, i;
  if (fuzz_plan_base.len) return 1;
  if (fuse_graph_parse(text, NULL, &g) != FUSE_OK) return fuse_graph_destroy(g), 0;
  for (k = 0; k < 4; k++) {
    for (i = 0; i < counts[k]; i++) data[i] = (float)((int)((i * 7 + k) % 13) - 6) / 8.0f;
    fuse_graph_set_constant(g, names[k], data, counts[k]);
  }
  return fuzz_plan_base_of(g, &fuzz_plan_base);
}

static int fuzz_plan(const unsigned char *in, size_t size) {
  static float input[3 * 64 * 64], output[4096];
  const fuzz_plan_blob *base = &fuzz_plan_base;
  unsigned char *raw, *blob;
  size_t len, weights_at = 0, i, cut = 0;
  int mode, structure_changed = 0, weights_changed = 0;
  fuse_plan_load_options lo;
  fuse_plan *p = NULL;
  fuse_result r;
  char why[256];
  if (size < 1 || !fuzz_plan_make_base()) return 0;
  mode = in[0];
  if ((mode & 0x90) == 0x10 && fuzz_plan_make_qbase()) base = &fuzz_plan_qbase;
  len = mode & 0x80 ? size - 1 : base->len;
  raw = (unsigned char *)malloc(len + 128);
  if (!raw) return 0;
  blob = (unsigned char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63) + (mode & 0x04 ? 1 : 0);
  if (mode & 0x80) {
    memcpy(blob, in + 1, len);
  } else {
    memcpy(blob, base->data, len);
    {
      uint64_t w;
      memcpy(&w, base->data + 32, 8); /* the header's weights offset */
      weights_at = (size_t)w;
    }
    for (i = 1; i + 3 <= size; i += 3) {
      size_t at = ((size_t)in[i] | (size_t)in[i + 1] << 8) % len;
      blob[at] = in[i + 2];
      cut = at;
    }
    for (i = 0; i < len; i++) /* what differs once every edit is made (a later one may undo) */
      if (blob[i] != base->data[i]) {
        if (i < weights_at) structure_changed = 1;
        else weights_changed = 1;
      }
    if ((mode & 0x08) && cut < len) len = cut;
  }
  memset(&lo, 0, sizeof lo);
  lo.error = why, lo.error_size = sizeof why;
  lo.verify_weights = mode & 0x01;
  lo.copy = (mode >> 1) & 1;
  r = fuse_plan_load(blob, len, &lo, &p);
  if (r == FUSE_OK) {
    const float *ins[1] = {input};
    float *outs[1] = {output};
    int64_t dims[FUSE_MAX_RANK];
    size_t n = 1;
    int k, rank = fuse_plan_input_shape(p, 0, dims);
    for (k = 0; k < rank; k++) n *= (size_t)dims[k];
    for (i = 0; i < n && i < sizeof input / sizeof input[0]; i++) input[i] = (float)(i % 7) - 3;
    rank = fuse_plan_output_shape(p, 0, dims);
    for (n = 1, k = 0; k < rank; k++) n *= (size_t)dims[k];
    /* a raw input may name any shapes: run only what fits the buffers */
    if (fuse_plan_input_count(p) == 1 && fuse_plan_output_count(p) == 1 &&
        n <= sizeof output / sizeof output[0] && fuse_plan_workspace_size(p) <= fuzz_cap) {
      rank = fuse_plan_input_shape(p, 0, dims);
      for (n = 1, k = 0; k < rank; k++) n *= (size_t)dims[k];
      if (n <= sizeof input / sizeof input[0]) fuse_run(p, ins, outs, NULL);
    }
    fuse_plan_write(p, fuzz_plan_sink, NULL);
  } else {
    fuzz_plan_check(strncmp(why, "plan blob: ", 11) == 0, "a refusal says why");
  }
  if (!(mode & 0x80)) {
    int cut_short = (mode & 0x08) && len < base->len;
    if (structure_changed || cut_short) fuzz_plan_check(r != FUSE_OK, "damage is refused");
    else if (weights_changed && lo.verify_weights)
      fuzz_plan_check(r == FUSE_ERROR_PARSE, "changed weights are refused when verified");
    else if (!(weights_changed && base == &fuzz_plan_qbase)) /* (else: loads, or says why) */
      fuzz_plan_check(r == FUSE_OK, "a blob with its structure intact loads");
  }
  fuse_plan_destroy(p);
  free(raw);
  return 0;
}
FUZZ_TARGET(fuzz_plan)
