/* test_blob.c - plan blobs (fuse_plan_save / fuse_plan_load): a loaded plan runs bit for bit as
   the plan it was saved from (in place, copied, misaligned, other threads); damaged blobs
   (every structure byte changed, every truncation, zeroed runs, changed weights) are refused
   with a message or, when only the weights changed and are not verified, run without reading
   outside the blob; the header's refusals say which (format version, byte order, word size,
   ISA); out of memory at every allocation of a load; save_only plans for other machines; a
   scalar blob made on x86-64 (tests/data/blob/, written by `test_blob --write-data`) loaded
   and run on whatever machine runs this test, aarch64 and armhf under qemu included, within
   1e-5 of x86-64's output; and an int8 plan (the committed QDQ model, its integer steps)
   through a blob bit for bit. Given a directory (default tests/data) it reads blob/ and onnx/
   there. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "blob_buffer.h"
#include "counting_alloc.h"
#include "runner.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A small network with most kernel families: a strided conv with bias and relu6 (the fused
   epilogue), a depthwise conv with relu, a 1x1 conv with a residual add, a pool, a matmul,
   a sigmoid. */
static const char *blob_graph_text =
    "graph(%x: [1, 3, 16, 16]) {\n"
    "  %w1: [8, 3, 3, 3] = const\n"
    "  %b1: [8] = const\n"
    "  %wd: [8, 1, 3, 3] = const\n"
    "  %w2: [8, 8, 1, 1] = const\n"
    "  %fc: [8, 10] = const\n"
    "  %0 = conv2d(%x, %w1, strides=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1)\n"
    "  %1 = reshape(%b1, shape=[1, 8, 1, 1])\n"
    "  %2 = add(%0, %1)\n"
    "  %3 = clip(%2, lo=0, hi=6)\n"
    "  %4 = conv2d(%3, %wd, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=8)\n"
    "  %5 = relu(%4)\n"
    "  %6 = conv2d(%5, %w2, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1)\n"
    "  %7 = add(%6, %3)\n"
    "  %8 = global_avg_pool2d(%7)\n"
    "  %9 = flatten(%8, axis=1)\n"
    "  %10 = matmul(%9, %fc)\n"
    "  %11 = sigmoid(%10)\n"
    "  return %11\n"
    "}\n";

/* conv -> bias -> relu6: the plan the Cortex-M firmware and the cross-machine test run */
static const char *blob_small_text =
    "graph(%x: [1, 4, 8, 8]) {\n"
    "  %w: [8, 4, 3, 3] = const\n"
    "  %b: [8] = const\n"
    "  %0 = conv2d(%x, %w, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1)\n"
    "  %1 = reshape(%b, shape=[1, 8, 1, 1])\n"
    "  %2 = add(%0, %1)\n"
    "  %3 = clip(%2, lo=0, hi=6)\n"
    "  return %3\n"
    "}\n";

static uint32_t blob_rng = 12345u;
static float blob_uniform(void) {
  blob_rng = blob_rng * 1664525u + 1013904223u;
  return (float)((double)(blob_rng >> 8) / 8388608.0 * 2.0 - 1.0);
}

/* The graph with its constants filled (seeded: each "%name: [dims] = const" line of the
   text in order), optimized. */
static fuse_graph *blob_graph(const char *text) {
  fuse_graph *g = NULL;
  const char *line;
  CHECK_EQ_INT(fuse_graph_parse(text, NULL, &g), FUSE_OK);
  if (!g) return NULL;
  blob_rng = 12345u;
  for (line = strstr(text, "\n  %"); line; line = strstr(line + 1, "\n  %")) {
    static float data[4096];
    const char *name = line + 4, *colon = strchr(name, ':'), *d;
    char label[16];
    size_t n = 1, i;
    if (!colon || !strstr(colon, "= const") || strstr(colon, "= const") > strchr(colon, '\n'))
      continue;
    snprintf(label, sizeof label, "%.*s", (int)(colon - name), name);
    for (d = strchr(colon, '['); d && *d != ']';) n *= (size_t)strtol(d + 1, (char **)&d, 10);
    CHECK(n <= 4096);
    for (i = 0; i < n && i < 4096; i++) data[i] = 0.5f * blob_uniform();
    CHECK_EQ_INT(fuse_graph_set_constant(g, label, data, n), FUSE_OK);
  }
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  return g;
}

/* ---------------------------------------------------------------- blobs in memory -- */

static blob blob_save(const fuse_plan *p) {
  blob b;
  memset(&b, 0, sizeof b);
  CHECK_EQ_INT(fuse_plan_save(p, blob_write, &b), FUSE_OK);
  CHECK(!b.failed && b.len > 64);
  return b;
}

/* A copy of b at `shift` bytes past a 64-byte boundary. */
static blob blob_copy(const blob *b, size_t shift) {
  blob c;
  memset(&c, 0, sizeof c);
  c.shift = shift;
  blob_write(&c, (const char *)b->data, b->len);
  CHECK(!c.failed);
  return c;
}

static uint64_t blob_u64(const blob *b, size_t at) {
  uint64_t v;
  memcpy(&v, b->data + at, 8);
  return v;
}

/* The format's checksum (plan_blob.c's, written again from the format's description: four
   lanes of murmur3's block step over 32-bit words, folded with the length, murmur3's finish),
   to forge a structure that passes it and reach the checks behind it. */
static uint32_t blob_rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
static uint32_t blob_step(uint32_t h, uint32_t k) {
  k *= 0xcc9e2d51u, k = blob_rotl(k, 15), k *= 0x1b873593u;
  h ^= k, h = blob_rotl(h, 13);
  return h * 5 + 0xe6546b64u;
}
static uint32_t blob_sum(const unsigned char *header, const unsigned char *s, size_t n) {
  uint32_t h[4] = {0x9747b28cu, 0x9e3779b9u, 0x85ebca6bu, 0xc2b2ae35u}, f, w;
  static unsigned char all[1 << 16];
  size_t total = 60 + n, i, k;
  CHECK(total + 16 <= sizeof all);
  if (total + 16 > sizeof all) return 0;
  memcpy(all, header, 48), memcpy(all + 48, header + 52, 12), memcpy(all + 60, s, n);
  memset(all + total, 0, 16); /* the last block, zero-padded */
  for (i = 0; i < total; i += 16)
    for (k = 0; k < 4; k++) memcpy(&w, all + i + 4 * k, 4), h[k] = blob_step(h[k], w);
  f = blob_step((uint32_t)total, 0);
  for (k = 0; k < 4; k++) f = blob_step(f, h[k]);
  f ^= f >> 16, f *= 0x85ebca6bu, f ^= f >> 13, f *= 0xc2b2ae35u, f ^= f >> 16;
  return f;
}
static void blob_forge(blob *b) {
  uint32_t v = blob_sum(b->data, b->data + 64, (size_t)blob_u64(b, 24));
  memcpy(b->data + 48, &v, 4);
}

/* ------------------------------------------------------------------- running -- */

#define BLOB_MAX_OUT 4096

/* Runs p on the seeded input into out (the first output, at most BLOB_MAX_OUT floats);
   returns its length, or 0 when the run failed. */
static size_t blob_run(fuse_plan *p, float *out) {
  static float in[4096];
  int64_t dims[FUSE_MAX_RANK];
  const float *ins[1] = {in};
  float *outs[1] = {out};
  size_t n = 1, m = 1, i;
  int r = fuse_plan_input_shape(p, 0, dims), k;
  for (k = 0; k < r; k++) n *= (size_t)dims[k];
  r = fuse_plan_output_shape(p, 0, dims);
  for (k = 0; k < r; k++) m *= (size_t)dims[k];
  CHECK(n <= 4096 && m <= BLOB_MAX_OUT);
  if (n > 4096 || m > BLOB_MAX_OUT) return 0;
  blob_rng = 777u;
  for (i = 0; i < n; i++) in[i] = blob_uniform();
  return fuse_run(p, ins, outs, NULL) == FUSE_OK ? m : 0;
}

static fuse_plan *blob_compile(const char *text, fuse_isa isa, int reference, int save_only) {
  fuse_graph *g = blob_graph(text);
  fuse_plan *p = NULL;
  fuse_compile_options opt;
  memset(&opt, 0, sizeof opt);
  opt.isa = isa;
  opt.reference_kernels = reference;
  opt.save_only = save_only;
  if (g) CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
  fuse_graph_destroy(g);
  return p;
}

/* Loads b (options as given), runs it, compares with want[n] bit for bit. */
static void blob_check_load(const blob *b, const fuse_plan_load_options *lo, const float *want,
                            size_t n, const char *what) {
  fuse_plan *q = NULL;
  static float got[BLOB_MAX_OUT];
  fuse_result r = fuse_plan_load(b->data, b->len, lo, &q);
  if (r != FUSE_OK) fprintf(stderr, "  %s: %s\n", what, lo && lo->error ? lo->error : "");
  CHECK_EQ_INT(r, FUSE_OK);
  if (q) {
    CHECK_EQ_INT(blob_run(q, got), n);
    if (memcmp(got, want, n * sizeof(float)) != 0) {
      fprintf(stderr, "  %s: the loaded plan's output differs\n", what);
      CHECK(!"bit for bit");
    }
  }
  fuse_plan_destroy(q);
}

static void serial_for(void *user, fuse_task_fn task, void *ctx, int n) {
  int i;
  (void)user;
  for (i = n - 1; i >= 0; i--) task(ctx, i, i + 1); /* backwards: order must not matter */
}

TEST(round_trip_every_isa) {
  static const fuse_isa isas[] = {FUSE_ISA_AUTO, FUSE_ISA_SCALAR, FUSE_ISA_AUTO};
  int k;
  for (k = 0; k < 3; k++) {
    fuse_plan *p = blob_compile(blob_graph_text, isas[k], k == 2, 0), *q = NULL;
    static float want[BLOB_MAX_OUT];
    fuse_plan_load_options lo;
    char why[256];
    size_t n;
    blob b, c, again;
    if (!p) continue;
    n = blob_run(p, want);
    CHECK(n == 10);
    b = blob_save(p);
    memset(&lo, 0, sizeof lo);
    lo.error = why, lo.error_size = sizeof why;
    blob_check_load(&b, &lo, want, n, "in place");
    lo.copy = 1;
    blob_check_load(&b, &lo, want, n, "copied");
    lo.copy = 0, lo.verify_weights = 1;
    blob_check_load(&b, &lo, want, n, "verified");
    c = blob_copy(&b, 4); /* weights not 64-aligned in memory: copied anyway */
    blob_check_load(&c, &lo, want, n, "misaligned");
    lo.num_threads = 3, lo.parallel_for = serial_for; /* other threads: same bits here */
    blob_check_load(&b, &lo, want, n, "three chunks");
    /* the loaded plan's queries, and its blob: byte for byte the one it came from */
    memset(&lo, 0, sizeof lo);
    CHECK_EQ_INT(fuse_plan_load(b.data, b.len, &lo, &q), FUSE_OK);
    if (q) {
      int64_t d1[FUSE_MAX_RANK], d2[FUSE_MAX_RANK];
      CHECK_EQ_INT(fuse_plan_step_count(q), fuse_plan_step_count(p));
      CHECK_EQ_INT(fuse_plan_weights_size(q), fuse_plan_weights_size(p));
      CHECK_EQ_INT(fuse_plan_input_count(q), 1);
      CHECK_EQ_INT(fuse_plan_output_count(q), 1);
      CHECK_EQ_INT(fuse_plan_input_shape(q, 0, d1), 4);
      CHECK_EQ_INT(fuse_plan_input_shape(p, 0, d2), 4);
      CHECK(memcmp(d1, d2, 4 * sizeof d1[0]) == 0 && d1[1] == 3 && d1[3] == 16);
      CHECK_EQ_INT(fuse_plan_output_shape(q, 0, d1), 2);
      CHECK(d1[0] == 1 && d1[1] == 10);
      CHECK_EQ_INT(fuse_plan_output_shape(q, 1, d1), -1);
      again = blob_save(q);
      CHECK(again.len == b.len && memcmp(again.data, b.data, b.len) == 0);
      free(again.raw);
    }
    fuse_plan_destroy(q);
    free(b.raw);
    free(c.raw);
    fuse_plan_destroy(p);
  }
}

/* A load that must be refused, with a message that starts as the loader's do and holds
   `says` (NULL: anything). */
static void blob_refused(const blob *b, size_t len, const char *says, const char *what) {
  fuse_plan_load_options lo;
  fuse_plan *q = NULL;
  char why[256];
  fuse_result r;
  memset(&lo, 0, sizeof lo);
  lo.error = why, lo.error_size = sizeof why;
  r = fuse_plan_load(b->data, len, &lo, &q);
  if (r == FUSE_OK) fprintf(stderr, "  %s: loaded\n", what);
  CHECK(r == FUSE_ERROR_PARSE || r == FUSE_ERROR_UNSUPPORTED);
  CHECK(q == NULL);
  CHECK(strncmp(why, "plan blob: ", 11) == 0);
  if (says) CHECK_STR_CONTAINS(why, says);
  fuse_plan_destroy(q);
}

TEST(every_structure_byte_changed_is_refused) {
  fuse_plan *p = blob_compile(blob_graph_text, FUSE_ISA_AUTO, 0, 0);
  blob b;
  size_t at, weights_at;
  if (!p) return;
  b = blob_save(p);
  weights_at = (size_t)blob_u64(&b, 32);
  CHECK(weights_at > 64 && weights_at < b.len);
  for (at = 0; at < weights_at; at++) {
    unsigned char was = b.data[at];
    char what[64];
    int bit;
    for (bit = 0; bit < 8; bit += 3) { /* bits 0, 3, 6 of every byte */
      snprintf(what, sizeof what, "byte %lu bit %d", (unsigned long)at, bit);
      b.data[at] = (unsigned char)(was ^ (1u << bit));
      blob_refused(&b, b.len, NULL, what);
    }
    b.data[at] = was;
  }
  free(b.raw);
  fuse_plan_destroy(p);
}

TEST(changed_weights_run_or_are_refused_when_verified) {
  fuse_plan *p = blob_compile(blob_graph_text, FUSE_ISA_AUTO, 0, 0);
  static float out[BLOB_MAX_OUT];
  fuse_plan_load_options lo;
  char why[256];
  blob b;
  size_t at, weights_at;
  if (!p) return;
  b = blob_save(p);
  weights_at = (size_t)blob_u64(&b, 32);
  memset(&lo, 0, sizeof lo);
  lo.error = why, lo.error_size = sizeof why;
  for (at = weights_at; at < b.len; at += 13) {
    unsigned char was = b.data[at];
    fuse_plan *q = NULL;
    b.data[at] = (unsigned char)(was ^ 0xff); /* NaN and inf patterns among them */
    lo.verify_weights = 0;
    CHECK_EQ_INT(fuse_plan_load(b.data, b.len, &lo, &q), FUSE_OK);
    if (q) CHECK_EQ_INT(blob_run(q, out), 10); /* wrong numbers, no stray read (ASan) */
    fuse_plan_destroy(q);
    q = NULL;
    lo.verify_weights = 1;
    CHECK_EQ_INT(fuse_plan_load(b.data, b.len, &lo, &q), FUSE_ERROR_PARSE);
    CHECK_STR_CONTAINS(why, "weights' checksum");
    CHECK(q == NULL);
    b.data[at] = was;
  }
  free(b.raw);
  fuse_plan_destroy(p);
}

TEST(truncated_and_zeroed_blobs_are_refused) {
  fuse_plan *p = blob_compile(blob_graph_text, FUSE_ISA_AUTO, 0, 0);
  unsigned char saved[64];
  blob b;
  size_t len, at, weights_at;
  if (!p) return;
  b = blob_save(p);
  weights_at = (size_t)blob_u64(&b, 32);
  for (len = 0; len < b.len; len += len < weights_at + 256 ? 1 : 97)
    blob_refused(&b, len, len < 64 ? "not a plan blob" : NULL, "truncated");
  for (at = 0; at + 16 <= weights_at; at += 8) { /* 16 zero bytes at every 8th offset */
    size_t k;
    int changed = 0;
    memcpy(saved, b.data + at, 16);
    for (k = 0; k < 16; k++) changed |= saved[k] != 0;
    if (!changed) continue;
    memset(b.data + at, 0, 16);
    blob_refused(&b, b.len, NULL, "zeroed");
    memcpy(b.data + at, saved, 16);
  }
  free(b.raw);
  fuse_plan_destroy(p);
}

/* The header's refusals say why; structures forged to pass the checksum meet the checks
   behind it. */
TEST(refusals_say_why) {
  fuse_plan *p = blob_compile(blob_graph_text, FUSE_ISA_AUTO, 0, 0);
  blob b;
  uint32_t v;
  uint64_t u;
  if (!p) return;
  b = blob_save(p);
  memcpy(b.data, "FUSEPLAX", 8);
  blob_refused(&b, b.len, "not a plan blob", "magic");
  memcpy(b.data, "FUSEPLAN", 8);
  memcpy(&u, b.data + 8, 4); /* (the format version this build writes, in u's low half) */
  v = 1, memcpy(b.data + 8, &v, 4); /* version 1's tensors had no element type */
  blob_refused(&b, b.len, "format version 1; this build reads version 2", "version");
  v = 99, memcpy(b.data + 8, &v, 4);
  blob_refused(&b, b.len, "format version 99", "version");
  memcpy(b.data + 8, &u, 4);
  v = 0x04030201u, memcpy(b.data + 12, &v, 4);
  blob_refused(&b, b.len, "other byte order", "byte order");
  v = 0x01020304u, memcpy(b.data + 12, &v, 4);
  v = 2, memcpy(b.data + 20, &v, 4);
  blob_refused(&b, b.len, "16-bit host", "word size");
  v = (uint32_t)sizeof(void *), memcpy(b.data + 20, &v, 4);
  v = fuse_cpu_isa() == FUSE_ISA_NEON ? (uint32_t)FUSE_ISA_AVX512 : (uint32_t)FUSE_ISA_NEON;
  memcpy(b.data + 16, &v, 4);
  blob_refused(&b, b.len, "a plan for", "isa");
  v = 99, memcpy(b.data + 16, &v, 4);
  blob_refused(&b, b.len, "ISA 99", "isa 99");
  {
    fuse_plan *q = NULL;
    blob c;
    memset(&c, 0, sizeof c);
    free(b.raw);
    b = blob_save(p);
    /* forged: counts beyond the structure, attribute words of another build, a tensor's
       offset past the workspace */
    c = blob_copy(&b, 0);
    v = 0x7fffffff, memcpy(c.data + 64, &v, 4), blob_forge(&c);
    blob_refused(&c, c.len, "damaged counts", "forged tensor count");
    memcpy(c.data, b.data, b.len);
    v = 5, memcpy(c.data + 64 + 28, &v, 4), blob_forge(&c);
    blob_refused(&c, c.len, "attributes take 5 words", "forged attribute words");
    memcpy(c.data, b.data, b.len);
    u = 1, memcpy(c.data + 64 + 32, &u, 8), blob_forge(&c); /* tensors_size: 1 byte */
    blob_refused(&c, c.len, "outside", "forged workspace size");
    memcpy(c.data, b.data, b.len);
    blob_forge(&c); /* the checksum as it was: loads */
    CHECK_EQ_INT(fuse_plan_load(c.data, c.len, NULL, &q), FUSE_OK);
    fuse_plan_destroy(q);
    free(c.raw);
  }
  free(b.raw);
  fuse_plan_destroy(p);
}

TEST(out_of_memory_at_every_allocation) {
  fuse_plan *p = blob_compile(blob_graph_text, FUSE_ISA_AUTO, 0, 0);
  blob b;
  long k, total;
  if (!p) return;
  b = blob_save(p);
  for (k = 1;; k++) {
    counting_alloc ca;
    fuse_allocator a;
    fuse_plan_load_options lo;
    fuse_plan *q = NULL;
    fuse_result r;
    memset(&ca, 0, sizeof ca);
    a = ca_make(&ca);
    ca.fail_at = k;
    memset(&lo, 0, sizeof lo);
    lo.alloc = &a;
    lo.copy = k & 1;
    r = fuse_plan_load(b.data, b.len, &lo, &q);
    total = ca.calls;
    if (r == FUSE_OK) {
      static float out[BLOB_MAX_OUT];
      CHECK_EQ_INT(blob_run(q, out), 10);
    } else {
      CHECK_EQ_INT(r, FUSE_ERROR_OUT_OF_MEMORY);
    }
    fuse_plan_destroy(q);
    CHECK_EQ_INT(ca.allocs, ca.frees); /* nothing leaks */
    ca_done(&ca);
    if (r == FUSE_OK && k > total) break;
    if (r != FUSE_OK && r != FUSE_ERROR_OUT_OF_MEMORY) break; /* reported above */
  }
  CHECK(k > 4);
  free(b.raw);
  fuse_plan_destroy(p);
}

/* Plans for other machines: scalar runs anywhere; a plan for an ISA this CPU lacks is made
   to be saved and refused at run and at load; one this build has no kernels for, refused. */
TEST(save_only) {
  fuse_graph *g = blob_graph(blob_small_text);
  fuse_compile_options opt;
  fuse_plan *p = NULL;
  char why[256];
  fuse_isa cpu = fuse_cpu_isa();
  static const fuse_isa others[] = {FUSE_ISA_AVX512, FUSE_ISA_AVX2, FUSE_ISA_NEON};
  int k;
  if (!g) return;
  memset(&opt, 0, sizeof opt);
  opt.error = why, opt.error_size = sizeof why;
  opt.save_only = 1;
  opt.isa = FUSE_ISA_SCALAR;
  CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
  if (p) {
    static float out[BLOB_MAX_OUT];
    CHECK_EQ_INT(blob_run(p, out), 8 * 64);
  }
  fuse_plan_destroy(p);
  for (k = 0; k < 3; k++) {
    fuse_isa isa = others[k];
    int runs_here = isa == cpu || (isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512);
    fuse_result r;
    p = NULL;
    opt.isa = isa;
    r = fuse_compile(g, &opt, &p);
    if (r != FUSE_OK) { /* this build has no such kernels */
      CHECK_EQ_INT(r, FUSE_ERROR_UNSUPPORTED);
      CHECK_STR_CONTAINS(why, "this build has no");
      CHECK(!runs_here);
      continue;
    }
    if (!runs_here) {
      static float out[BLOB_MAX_OUT];
      blob b = blob_save(p);
      CHECK_EQ_INT(blob_run(p, out), 0); /* fuse_run: FUSE_ERROR_UNSUPPORTED */
      blob_refused(&b, b.len, "a plan for", "another CPU's plan");
      free(b.raw);
    }
    fuse_plan_destroy(p);
  }
  fuse_graph_destroy(g);
}

/* ------------------------------------------- a blob made on x86-64, run everywhere -- */

static const char *blob_dir = "tests/data";

/* The file blob_dir/name, malloc'd (its size in *size); NULL when it cannot be read. */
static unsigned char *blob_read(const char *name, size_t *size) {
  char path[1024];
  FILE *f;
  unsigned char *raw, *data = NULL;
  long n;
  snprintf(path, sizeof path, "%s/%s", blob_dir, name);
  f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "  cannot open %s\n", path);
    return NULL;
  }
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    raw = (unsigned char *)malloc((size_t)n + 64);
    if (raw) {
      data = raw; /* malloc's alignment: the loader copies the weights when it must */
      if (fread(data, 1, (size_t)n, f) != (size_t)n) free(raw), data = NULL;
      *size = (size_t)n;
    }
  }
  fclose(f);
  return data;
}

TEST(scalar_blob_from_x86_64) {
  size_t size = 0, out_size = 0, n, i;
  unsigned char *data = blob_read("blob/conv_bias_relu6.scalar.fplan", &size);
  unsigned char *want = blob_read("blob/conv_bias_relu6.output.bin", &out_size);
  static float got[BLOB_MAX_OUT];
  fuse_plan_load_options lo;
  fuse_plan *q = NULL;
  char why[256];
  CHECK(data && want);
  memset(&lo, 0, sizeof lo);
  lo.error = why, lo.error_size = sizeof why;
  lo.verify_weights = 1;
  if (data && fuse_plan_load(data, size, &lo, &q) != FUSE_OK) fprintf(stderr, "  %s\n", why);
  CHECK(q != NULL);
  if (q && want) {
    double max_diff = 0, max_want = 0;
    n = blob_run(q, got);
    CHECK_EQ_INT(n * sizeof(float), out_size);
    for (i = 0; n * sizeof(float) == out_size && i < n; i++) {
      float w;
      memcpy(&w, want + 4 * i, 4);
      if (fabs((double)w) > max_want) max_want = fabs((double)w);
      if (fabs((double)got[i] - w) > max_diff) max_diff = fabs((double)got[i] - w);
    }
    CHECK(max_want > 1 && max_diff <= 1e-5 * max_want); /* compilers contract to FMA apart */
  }
  fuse_plan_destroy(q);
  free(data);
  free(want);
}

/* ------------------------------------------------- an int8 plan from a QDQ model -- */

/* plan's first output on the float input `in`, into out[n] */
static int blob_run_float(fuse_plan *p, const float *in, float *out, size_t n) {
  const float *ins[1];
  float *outs[1];
  int64_t dims[FUSE_MAX_RANK];
  size_t m = 1;
  int r = fuse_plan_output_shape(p, 0, dims), k;
  for (k = 0; k < r; k++) m *= (size_t)dims[k];
  if (r < 0 || m != n) return 0;
  ins[0] = in, outs[0] = out;
  return fuse_run(p, ins, outs, NULL) == FUSE_OK;
}

/* tests/data/onnx/tinynet_qdq.onnx (tinynet_bn quantized by tools/quantize.py: QDQ around
   every conv, add and pool) as a user deploys it: loaded, fuse_optimize'd (its convs, adds and
   element-wise ops become integer steps), compiled for the scalar kernels and for this CPU's,
   saved; the blob loaded in place, copied and with its weights verified runs on the committed
   input (float32: the quantize happens inside) bit for bit as the plan it came from, and
   saves to the same bytes. */
TEST(int8_plan_from_qdq_model) {
  static const fuse_isa isas[2] = {FUSE_ISA_SCALAR, FUSE_ISA_AUTO};
  char path[1024];
  size_t in_size = 0, k;
  float *in = (float *)(void *)blob_read("onnx/tinynet_qdq.input.bin", &in_size);
  fuse_graph *g = NULL;
  int i;
  snprintf(path, sizeof path, "%s/onnx/tinynet_qdq.onnx", blob_dir);
  CHECK(in != NULL);
  CHECK_EQ_INT(fuse_onnx_load_file(path, NULL, &g), FUSE_OK);
  if (g && fuse_graph_status(g) != FUSE_OK) fprintf(stderr, "  %s\n", fuse_graph_error(g));
  if (!in || !g || fuse_graph_status(g) != FUSE_OK) {
    fuse_graph_destroy(g);
    free(in);
    return;
  }
  { /* the input file holds the input, exactly */
    fuse_value x = fuse_graph_input(g, 0);
    size_t n = 1;
    int d;
    for (d = 0; d < fuse_value_rank(g, x); d++) n *= (size_t)fuse_value_shape(g, x)[d];
    CHECK_EQ_INT(in_size, n * sizeof(float));
    if (in_size != n * sizeof(float)) {
      fuse_graph_destroy(g);
      free(in);
      return;
    }
  }
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  for (i = 0; i < 2; i++) {
    static float want[100], got[100];
    fuse_compile_options opt;
    fuse_plan_load_options lo;
    fuse_plan *p = NULL, *q = NULL;
    blob b, again;
    char why[256], *listing;
    int round, nonzero = 0;
    memset(&opt, 0, sizeof opt);
    opt.isa = isas[i];
    opt.num_threads = 1;
    CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
    if (!p) continue;
    /* the plan runs in integers: its listing names the integer steps */
    memset(&b, 0, sizeof b);
    CHECK_EQ_INT(fuse_plan_write(p, blob_write, &b), FUSE_OK);
    blob_write(&b, "", 1);
    listing = (char *)b.data;
    CHECK(listing && strstr(listing, "qconv2d") && strstr(listing, "qadd"));
    free(b.raw);
    CHECK_EQ_INT(fuse_plan_input_type(p, 0), FUSE_FLOAT32);
    CHECK_EQ_INT(fuse_plan_output_type(p, 0), FUSE_FLOAT32);
    CHECK(blob_run_float(p, in, want, 100));
    for (k = 0; k < 100; k++) nonzero |= want[k] != 0.0f;
    CHECK(nonzero); /* (not a plan that writes nothing) */
    b = blob_save(p);
    for (round = 0; round < 3; round++) {
      memset(&lo, 0, sizeof lo);
      lo.error = why, lo.error_size = sizeof why;
      lo.copy = round == 1;
      lo.verify_weights = round == 2;
      q = NULL;
      if (fuse_plan_load(b.data, b.len, &lo, &q) != FUSE_OK) fprintf(stderr, "  load: %s\n", why);
      CHECK(q != NULL);
      if (!q) continue;
      CHECK_EQ_INT(fuse_plan_step_count(q), fuse_plan_step_count(p));
      memset(got, 0xff, sizeof got);
      CHECK(blob_run_float(q, in, got, 100));
      if (memcmp(got, want, sizeof got) != 0) {
        fprintf(stderr, "  isa %d, load %d: the loaded int8 plan's output differs\n", (int)isas[i],
                round);
        CHECK(!"bit for bit");
      }
      if (round == 0) { /* the loaded plan's blob: the same bytes */
        again = blob_save(q);
        CHECK(again.len == b.len && memcmp(again.data, b.data, b.len) == 0);
        free(again.raw);
      }
      fuse_plan_destroy(q);
    }
    free(b.raw);
    fuse_plan_destroy(p);
  }
  fuse_graph_destroy(g);
  free(in);
}

/* test_blob --write-data DIR: writes DIR/blob/ (on x86-64: the committed files) */
static int blob_write_data(const char *dir) {
  fuse_plan *p = blob_compile(blob_small_text, FUSE_ISA_SCALAR, 0, 1);
  static float out[BLOB_MAX_OUT];
  char path[1024];
  size_t n;
  FILE *f;
  blob b;
  if (!p) return 1;
  n = blob_run(p, out);
  b = blob_save(p);
  snprintf(path, sizeof path, "%s/blob/conv_bias_relu6.scalar.fplan", dir);
  f = fopen(path, "wb");
  if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) return 1;
  snprintf(path, sizeof path, "%s/blob/conv_bias_relu6.output.bin", dir);
  f = fopen(path, "wb");
  if (!f || fwrite(out, sizeof(float), n, f) != n || fclose(f) != 0) return 1;
  printf("wrote %s/blob/: a scalar plan blob (%lu bytes) and its output (%lu floats)\n", dir,
         (unsigned long)b.len, (unsigned long)n);
  free(b.raw);
  fuse_plan_destroy(p);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[1], "--write-data") == 0) return blob_write_data(argv[2]);
  if (argc > 1) blob_dir = argv[1];
  RUN(round_trip_every_isa);
  RUN(every_structure_byte_changed_is_refused);
  RUN(changed_weights_run_or_are_refused_when_verified);
  RUN(truncated_and_zeroed_blobs_are_refused);
  RUN(refusals_say_why);
  RUN(out_of_memory_at_every_allocation);
  RUN(save_only);
  RUN(scalar_blob_from_x86_64);
  RUN(int8_plan_from_qdq_model);
  return runner_finish("blob");
}
