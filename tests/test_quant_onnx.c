/* test_quant_onnx.c - quantized ONNX models through the loader: the committed models of
   tools/make_quant_models.py (tests/data/onnx_quant/: a QDQ conv net with per-channel int8
   weights, an int32 bias and an int8 output; QLinearConv -> QLinearMatMul on a uint8 image;
   ConvInteger and MatMulInteger; DynamicQuantizeLinear -> MatMulInteger; Round and Cast),
   each with its inputs and the outputs numpy computed, in the element types the graph says.
   Every model runs four ways, each checked against those outputs (integers exactly, floats
   to 1e-6): as loaded on the reference kernels and on this CPU's kernels, after fuse_optimize
   (which folds the dequantized constant weights into float32 ones: fewer dequantize nodes),
   and as a plan blob saved and loaded back (bit for bit the plan it was saved from). And the
   quantized MatMul / Gemm models of tools/make_qdq_matmul_models.py (tests/data/onnx_qmatmul/)
   and the global average pools of tools/make_qdq_gap_models.py (tests/data/onnx_qgap/), each
   one integer step, bit for bit ONNX Runtime's outputs.

   Usage: build/test_quant_onnx [-v]   (run from the repository root) */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include "blob_buffer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIR "tests/data/onnx_quant/"
#define MAX_IO 4

static int verbose;

typedef struct quant_case {
  const char *name;
  int num_in, num_out;
  fuse_type in_types[MAX_IO], out_types[MAX_IO];
} quant_case;

static const quant_case cases[] = {
    {"qdq_conv", 1, 1, {FUSE_FLOAT32}, {FUSE_INT8}},
    {"qlinear", 1, 2, {FUSE_UINT8}, {FUSE_INT8, FUSE_FLOAT32}},
    {"integer", 2, 2, {FUSE_UINT8, FUSE_INT8}, {FUSE_INT32, FUSE_INT32}},
    {"dynamic", 1, 2, {FUSE_FLOAT32}, {FUSE_FLOAT32, FUSE_UINT8}},
    {"round", 2, 2, {FUSE_FLOAT32, FUSE_FLOAT32}, {FUSE_FLOAT32, FUSE_UINT8}},
};
#define NUM_CASES ((int)(sizeof cases / sizeof cases[0]))

static size_t type_size(fuse_type t) { return t == FUSE_UINT8 || t == FUSE_INT8 ? 1 : 4; }

static size_t numel(const fuse_graph *g, fuse_value v) {
  size_t n = 1;
  int d;
  for (d = 0; d < fuse_value_rank(g, v); d++) n *= (size_t)fuse_value_shape(g, v)[d];
  return n;
}

/* A whole file of exactly `bytes` bytes; NULL otherwise. */
static void *read_exact(const char *path, size_t bytes) {
  FILE *f = fopen(path, "rb");
  unsigned char *d;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || (size_t)n != bytes ||
      fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  d = (unsigned char *)malloc(bytes ? bytes : 1);
  if (d && fread(d, 1, bytes, f) != bytes) {
    free(d);
    d = NULL;
  }
  fclose(f);
  return d;
}

/* Element j of a typed array as a double (exact for every type). */
static double at(const void *data, fuse_type t, size_t j) {
  switch (t) {
  case FUSE_UINT8: return ((const uint8_t *)data)[j];
  case FUSE_INT8: return ((const int8_t *)data)[j];
  case FUSE_INT32: return ((const int32_t *)data)[j];
  default: return ((const float *)data)[j];
  }
}

/* got against want: integers equal, floats within 1e-6 of the largest |want| (NaN where NaN,
   infinities equal); prints the first difference. Returns the number of elements that
   differ. */
static size_t compare(const char *what, const void *got, const void *want, fuse_type t,
                      size_t n) {
  size_t j, wrong = 0;
  double big = 1;
  for (j = 0; j < n; j++) {
    double w = at(want, t, j);
    if (!isnan(w) && !isinf(w) && fabs(w) > big) big = fabs(w);
  }
  for (j = 0; j < n; j++) {
    double g = at(got, t, j), w = at(want, t, j);
    int same = t != FUSE_FLOAT32 ? g == w
               : isnan(w)        ? isnan(g)
               : isinf(w)        ? g == w
                                 : fabs(g - w) <= 1e-6 * big;
    if (!same && !wrong++)
      fprintf(stderr, "  %s: element %lu: got %.9g, want %.9g\n", what, (unsigned long)j, g, w);
  }
  return wrong;
}

typedef struct io {
  void *in[MAX_IO], *want[MAX_IO], *got[MAX_IO];
  size_t in_n[MAX_IO], out_n[MAX_IO];
} io;

static void io_free(io *b) {
  int k;
  for (k = 0; k < MAX_IO; k++) free(b->in[k]), free(b->want[k]), free(b->got[k]);
  memset(b, 0, sizeof *b);
}

/* The inputs and expected outputs of case c, sized by graph g; 0 when a file is missing or
   of another size. */
static int io_read(io *b, const quant_case *c, const fuse_graph *g) {
  char path[256];
  int k;
  memset(b, 0, sizeof *b);
  for (k = 0; k < c->num_in; k++) {
    b->in_n[k] = numel(g, fuse_graph_input(g, k));
    snprintf(path, sizeof path, DIR "%s.input_%d.bin", c->name, k);
    if (!(b->in[k] = read_exact(path, b->in_n[k] * type_size(c->in_types[k])))) {
      fprintf(stderr, "  cannot read %s (%lu elements)\n", path, (unsigned long)b->in_n[k]);
      return 0;
    }
  }
  for (k = 0; k < c->num_out; k++) {
    b->out_n[k] = numel(g, fuse_graph_output(g, k));
    snprintf(path, sizeof path, DIR "%s.output_%d.bin", c->name, k);
    b->want[k] = read_exact(path, b->out_n[k] * type_size(c->out_types[k]));
    b->got[k] = malloc(b->out_n[k] * type_size(c->out_types[k]) + 1);
    if (!b->want[k] || !b->got[k]) {
      fprintf(stderr, "  cannot read %s (%lu elements)\n", path, (unsigned long)b->out_n[k]);
      return 0;
    }
  }
  return 1;
}

/* Runs plan p on the case's inputs and compares every output; `how` names the run. The
   outputs stay in b->got. */
static void run_and_check(fuse_plan *p, const quant_case *c, io *b, const char *how) {
  char what[128];
  int k;
  CHECK_EQ_INT(fuse_plan_input_count(p), c->num_in);
  CHECK_EQ_INT(fuse_plan_output_count(p), c->num_out);
  for (k = 0; k < c->num_out; k++) {
    CHECK_EQ_INT(fuse_plan_output_type(p, k), c->out_types[k]);
    memset(b->got[k], 0xa5, b->out_n[k] * type_size(c->out_types[k]));
  }
  for (k = 0; k < c->num_in; k++) CHECK_EQ_INT(fuse_plan_input_type(p, k), c->in_types[k]);
  CHECK_EQ_INT(fuse_run_typed(p, (const void *const *)b->in, b->got, NULL), FUSE_OK);
  for (k = 0; k < c->num_out; k++) {
    snprintf(what, sizeof what, "%s, %s, output %d", c->name, how, k);
    CHECK(compare(what, b->got[k], b->want[k], c->out_types[k], b->out_n[k]) == 0);
  }
  if (verbose) printf("  %s: %s\n", c->name, how);
}

static fuse_plan *compile(const fuse_graph *g, int reference) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  char err[256] = "";
  memset(&o, 0, sizeof o);
  o.reference_kernels = reference;
  o.error = err;
  o.error_size = sizeof err;
  if (fuse_compile(g, &o, &p) != FUSE_OK) fprintf(stderr, "  fuse_compile: %s\n", err);
  return p;
}

typedef struct text_buf {
  char *s;
  size_t n, cap;
} text_buf;

static void text_sink(void *user, const char *text, size_t len) {
  text_buf *t = (text_buf *)user;
  if (t->n + len + 1 > t->cap) {
    size_t cap = (t->n + len + 1) * 2;
    char *s = (char *)realloc(t->s, cap);
    if (!s) return;
    t->s = s, t->cap = cap;
  }
  memcpy(t->s + t->n, text, len);
  t->n += len;
  t->s[t->n] = 0;
}

/* How many times the graph's text form says `word`. */
static int count_word(const fuse_graph *g, const char *word) {
  text_buf t;
  const char *at;
  int count = 0;
  memset(&t, 0, sizeof t);
  fuse_graph_write(g, text_sink, &t);
  for (at = t.s ? strstr(t.s, word) : NULL; at; at = strstr(at + 1, word)) count++;
  free(t.s);
  return count;
}

static void one_case(const quant_case *c) {
  char path[256];
  fuse_graph *g = NULL;
  fuse_plan *p = NULL, *loaded = NULL;
  blob bl;
  io b;
  int k, before, after;
  void *first[MAX_IO];
  snprintf(path, sizeof path, DIR "%s.onnx", c->name);
  CHECK_EQ_INT(fuse_onnx_load_file(path, NULL, &g), FUSE_OK);
  if (!g || fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "  %s: %s\n", path, g ? fuse_graph_error(g) : "(no graph)");
    fuse_graph_destroy(g);
    return;
  }
  CHECK_EQ_INT(fuse_graph_input_count(g), c->num_in);
  CHECK_EQ_INT(fuse_graph_output_count(g), c->num_out);
  for (k = 0; k < c->num_in; k++)
    CHECK_EQ_INT(fuse_value_type(g, fuse_graph_input(g, k)), c->in_types[k]);
  for (k = 0; k < c->num_out; k++)
    CHECK_EQ_INT(fuse_value_type(g, fuse_graph_output(g, k)), c->out_types[k]);
  if (runner_test_failed || !io_read(&b, c, g)) {
    runner_test_failed = 1;
    io_free(&b);
    fuse_graph_destroy(g);
    return;
  }
  /* as loaded: the reference kernels, then this CPU's */
  if ((p = compile(g, 1)) != NULL) run_and_check(p, c, &b, "reference kernels");
  else runner_test_failed = 1;
  fuse_plan_destroy(p);
  if ((p = compile(g, 0)) != NULL) run_and_check(p, c, &b, "as loaded");
  else runner_test_failed = 1;
  fuse_plan_destroy(p);
  /* fuse_optimize: a dequantize of constants (a weight, a bias) becomes a float32 constant, or
     the conv it feeds runs in integers (a fuse.qconv2d composite, which keeps it) */
  before = count_word(g, "= dequantize(");
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  after = count_word(g, "= dequantize(");
  if (!strcmp(c->name, "qdq_conv") || !strcmp(c->name, "qlinear"))
    CHECK(after < before || count_word(g, "composite \"fuse.qconv2d\"") > 0);
  if (verbose) printf("  %s: %d dequantize nodes, %d after fuse_optimize\n", c->name, before, after);
  p = compile(g, 0);
  CHECK(p != NULL);
  if (p) {
    run_and_check(p, c, &b, "optimized");
    /* the blob: saved, loaded, the same outputs bit for bit */
    for (k = 0; k < c->num_out; k++) {
      first[k] = b.got[k];
      b.got[k] = malloc(b.out_n[k] * type_size(c->out_types[k]) + 1);
    }
    memset(&bl, 0, sizeof bl);
    CHECK_EQ_INT(fuse_plan_save(p, blob_write, &bl), FUSE_OK);
    CHECK(!bl.failed);
    CHECK_EQ_INT(fuse_plan_load(bl.data, bl.len, NULL, &loaded), FUSE_OK);
    if (loaded) {
      run_and_check(loaded, c, &b, "blob");
      for (k = 0; k < c->num_out; k++)
        CHECK(memcmp(first[k], b.got[k], b.out_n[k] * type_size(c->out_types[k])) == 0);
    }
    for (k = 0; k < c->num_out; k++) free(first[k]);
    fuse_plan_destroy(loaded);
    free(bl.raw);
  }
  fuse_plan_destroy(p);
  io_free(&b);
  fuse_graph_destroy(g);
}

TEST(qdq_conv) { one_case(&cases[0]); }
TEST(qlinear) { one_case(&cases[1]); }
TEST(integer) { one_case(&cases[2]); }
TEST(dynamic) { one_case(&cases[3]); }
TEST(round) { one_case(&cases[4]); }

/* ------------------------------------------ integer matmuls against ONNX Runtime -- */
/* tests/data/onnx_qmatmul/ (tools/make_qdq_matmul_models.py): QDQ Gemm with transB and an
   int32 bias, a batched QDQ MatMul with per-tensor weights and a Relu into int8, a QDQ MatMul
   with per-column weights and an Add of an int32 bias, a QLinearMatMul; float32 in and out, the
   quantize and dequantize inside, and ONNX Runtime 1.30's outputs (.ort.bin, one thread). After
   fuse_optimize each product is one qmatmul step (no float32 matmul left) on the reference
   kernels, the scalar tiles and this CPU's; every plan and a blob of it give ONNX Runtime's
   outputs bit for bit. */
/* The model `name` in `dir` against ONNX Runtime's outputs, bit for bit, on the reference
   kernels, the scalar rows and this CPU's, each plan and a blob of it; listing_ok says whether
   the plan's listing has the steps the test is about. */
static void ort_model(const char *dir, const char *name, int (*listing_ok)(const char *listing)) {
  static const fuse_isa isas[3] = {FUSE_ISA_AUTO, FUSE_ISA_SCALAR, FUSE_ISA_AUTO};
  char path[256];
  fuse_graph *g = NULL;
  size_t n_in, n_out;
  float *in = NULL, *want = NULL, *got = NULL;
  int i;
  snprintf(path, sizeof path, "%s%s.onnx", dir, name);
  CHECK_EQ_INT(fuse_onnx_load_file(path, NULL, &g), FUSE_OK);
  if (!g || fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "  %s: %s\n", path, g ? fuse_graph_error(g) : "(no graph)");
    fuse_graph_destroy(g);
    return;
  }
  n_in = numel(g, fuse_graph_input(g, 0)), n_out = numel(g, fuse_graph_output(g, 0));
  snprintf(path, sizeof path, "%s%s.input.bin", dir, name);
  in = (float *)read_exact(path, n_in * 4);
  snprintf(path, sizeof path, "%s%s.ort.bin", dir, name);
  want = (float *)read_exact(path, n_out * 4);
  got = (float *)malloc(n_out * 4);
  CHECK(in && want && got);
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  for (i = 0; i < 3 && in && want && got; i++) {
    fuse_compile_options o;
    fuse_plan *p = NULL, *loaded = NULL;
    const float *ins[1];
    float *outs[1];
    text_buf t;
    blob bl;
    memset(&o, 0, sizeof o);
    o.reference_kernels = i == 0;
    o.isa = isas[i];
    o.num_threads = 1;
    CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
    if (!p) continue;
    memset(&t, 0, sizeof t);
    fuse_plan_write(p, text_sink, &t);
    CHECK(t.s && listing_ok(t.s));
    if (verbose && t.s) printf("%s\n", t.s);
    free(t.s);
    ins[0] = in, outs[0] = got;
    memset(got, 0xa5, n_out * 4);
    CHECK_EQ_INT(fuse_run(p, ins, outs, NULL), FUSE_OK);
    if (memcmp(got, want, n_out * 4) != 0) {
      fprintf(stderr, "  %s, plan %d: not ONNX Runtime's outputs\n", name, i);
      compare(name, got, want, FUSE_FLOAT32, n_out);
      CHECK(!"bit for bit");
    }
    memset(&bl, 0, sizeof bl);
    CHECK_EQ_INT(fuse_plan_save(p, blob_write, &bl), FUSE_OK);
    CHECK_EQ_INT(fuse_plan_load(bl.data, bl.len, NULL, &loaded), FUSE_OK);
    if (loaded) {
      memset(got, 0xa5, n_out * 4);
      CHECK_EQ_INT(fuse_run(loaded, ins, outs, NULL), FUSE_OK);
      CHECK(memcmp(got, want, n_out * 4) == 0);
    }
    fuse_plan_destroy(loaded);
    free(bl.raw);
    fuse_plan_destroy(p);
  }
  free(in), free(want), free(got);
  fuse_graph_destroy(g);
}

#define QM_DIR "tests/data/onnx_qmatmul/"

/* every product one qmatmul step, no float32 matmul left */
static int qmatmul_listing(const char *t) {
  return strstr(t, "qmatmul ->") != NULL && strstr(t, " matmul ->") == NULL;
}
static void qmatmul_model(const char *name) { ort_model(QM_DIR, name, qmatmul_listing); }

TEST(qmatmul_gemm_transb) { qmatmul_model("gemm_transb"); }
TEST(qmatmul_matmul_nd) { qmatmul_model("matmul_nd"); }
TEST(qmatmul_matmul_bias) { qmatmul_model("matmul_bias"); }
TEST(qmatmul_qlinear) { qmatmul_model("qlinear"); }

/* ------------------------------------ integer global average pools against ONNX Runtime -- */
/* tests/data/onnx_qgap/ (tools/make_qdq_gap_models.py): a classifier's tail (uint8 conv 3x3 +
   relu, GlobalAveragePool, Flatten between Q -> DQ pairs of one scale, Gemm), an int8 pool of a
   graph input, a pool of one pixel a channel and its Flatten; float32 in and out, ONNX Runtime
   1.30's outputs (.ort.bin, one thread: its QLinearGlobalAveragePool, NHWC after its conv).
   After fuse_optimize each pool is one qglobal_avg_pool2d step reading its input's layout
   (no qto_nchw, no dequantize before it, the Flatten a view of its integers) on the reference
   kernels, the scalar rows and this CPU's; every plan and a blob of it give ONNX Runtime's
   outputs bit for bit. */
#define QG_DIR "tests/data/onnx_qgap/"

/* each pool one qglobal_avg_pool2d step, no float pool or qto_nchw, nothing float before it
   (but the model's first quantize) */
static int qgap_listing(const char *t) {
  const char *pool = strstr(t, "qglobal_avg_pool2d ->"), *dq = strstr(t, "dequantize ->");
  return pool != NULL && strstr(t, " global_avg_pool2d ->") == NULL && strstr(t, "qto_nchw") == NULL &&
         (dq == NULL || dq > pool);
}
static void qgap_model(const char *name) { ort_model(QG_DIR, name, qgap_listing); }

TEST(qgap_tail_u8) { qgap_model("tail_u8"); }
TEST(qgap_nchw_i8) { qgap_model("nchw_i8"); }
TEST(qgap_pixel1_u8) { qgap_model("pixel1_u8"); }

int main(int argc, char **argv) {
  const uint32_t one = 1;
  unsigned char first_byte;
  verbose = argc > 1 && !strcmp(argv[1], "-v");
  memcpy(&first_byte, &one, 1);
  if (first_byte != 1) { /* the .bin files are little-endian */
    printf("quant_onnx: a big-endian host: the committed data is little-endian, not run\n");
    return runner_finish("quant_onnx");
  }
  RUN(qdq_conv);
  RUN(qlinear);
  RUN(integer);
  RUN(dynamic);
  RUN(round);
  RUN(qmatmul_gemm_transb);
  RUN(qmatmul_matmul_nd);
  RUN(qmatmul_matmul_bias);
  RUN(qmatmul_qlinear);
  RUN(qgap_tail_u8);
  RUN(qgap_nchw_i8);
  RUN(qgap_pixel1_u8);
  return runner_finish("quant_onnx");
}
