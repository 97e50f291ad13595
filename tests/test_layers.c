/* test_layers.c - the layers family: slice / split, transposed convolution, 1-D convolution
   and pools, LSTM / GRU, and their ONNX operators.

   1. Every tests/data/layers/<case>.layer file (written by `/usr/bin/python3
      tools/golden_layers.py`, references from PyTorch in float64) is one test. Its text part
      is a comment line and a head line naming what to build:

          conv1d strides=2 padding=2,1 dilation=1 groups=1     fuse_conv2d on x [N, C, L]
          max_pool1d / avg_pool1d kernel=3 strides=2 ...        the pools on [N, C, L]
          global_avg_pool1d, conv_transpose1d ...               the same for these
          split axis=1 n=3 [sizes=1,4,2]                         fuse_split
          lstm / gru hidden=5 direction=2 batch_first=1 clip=0 const=1 outputs=1,1,1
                                                                fuse_lstm / fuse_gru (const=1:
                                                                w, r, b, h0, c0 are constants)
          onnx                                                  <case>.onnx, loaded
          onnx_error <text>                                     <case>.onnx, refused with <text>

      then records as in the .golden files of tests/data: 'I' the operands by name (x first), 'O' the
      expected outputs in order. Each graph runs as built on the default kernels and on the
      reference kernels, then after fuse_optimize on every kernel path the CPU has; each output
      must be within a normwise relative error of 1e-4 (LAYER_TOL).
   2. Error paths of each builder: a bad argument gives FUSE_NONE (or the graph's status) and
      a message naming the problem.
   3. A U-Net decoder's 2x2 stride-2 transposed convolution on 64 channels at 64x64 runs in
      reasonable time on the reference kernel (the time is printed), spot-checked.

   Usage: build/test_layers [dir]   (run from the repository root; default tests/data/layers) */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LAYER_TOL 1e-4

/* ============================================================ reading a .layer file */

typedef struct layer_record {
  char kind, name[64];
  int rank;
  int64_t dims[FUSE_MAX_RANK];
  size_t count;
  float *data;
} layer_record;

typedef struct layer_case {
  char head[512]; /* the line after the comment */
  layer_record recs[16];
  int num_recs;
} layer_case;

static const char *layer_dir = "tests/data/layers";
static const char *layer_file; /* the case being run */

static uint64_t layer_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  int i;
  for (i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void layer_free(layer_case *c) {
  int i;
  for (i = 0; i < c->num_recs; i++) free(c->recs[i].data);
  c->num_recs = 0;
}

/* 1 and c filled, or 0 (malformed or unreadable). */
static int layer_load(const char *path, layer_case *c) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf;
  long size;
  size_t pos, end, k;
  const char *nl;
  memset(c, 0, sizeof *c);
  if (!f) return 0;
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
      !(buf = (unsigned char *)malloc((size_t)size + 1))) {
    fclose(f);
    return 0;
  }
  if (fread(buf, 1, (size_t)size, f) != (size_t)size) size = 0;
  fclose(f);
  buf[size] = 0;
  for (end = 0; end + 4 <= (size_t)size && memcmp(buf + end, "\n%%\n", 4) != 0; end++) {
  }
  nl = strchr((const char *)buf, '\n');
  if (end + 4 > (size_t)size || !nl || (size_t)((const unsigned char *)nl - buf) >= end ||
      end - (size_t)((const unsigned char *)nl - buf) >= sizeof c->head)
    goto fail;
  memcpy(c->head, nl + 1, end - (size_t)((const unsigned char *)nl - buf) - 1);
  for (pos = end + 4; pos < (size_t)size;) {
    layer_record *r = &c->recs[c->num_recs];
    uint64_t name_len, rank, count, prod = 1;
    if (c->num_recs == 16 || (size_t)size - pos < 5) goto fail;
    r->kind = (char)buf[pos];
    name_len = layer_le(buf + pos + 1, 4);
    pos += 5;
    if (name_len >= sizeof r->name || (size_t)size - pos < name_len + 4) goto fail;
    memcpy(r->name, buf + pos, (size_t)name_len);
    pos += (size_t)name_len;
    rank = layer_le(buf + pos, 4);
    pos += 4;
    if (rank > FUSE_MAX_RANK || (size_t)size - pos < 8 * rank + 8) goto fail;
    r->rank = (int)rank;
    for (k = 0; k < rank; k++, pos += 8) {
      r->dims[k] = (int64_t)layer_le(buf + pos, 8);
      if (r->dims[k] < 1 || r->dims[k] > (1 << 20)) goto fail;
      prod *= (uint64_t)r->dims[k];
    }
    count = layer_le(buf + pos, 8);
    pos += 8;
    if (count != prod || prod > (1u << 22) || ((size_t)size - pos) / 4 < count) goto fail;
    r->count = (size_t)count;
    if (!(r->data = (float *)malloc(r->count * sizeof(float) + 1))) goto fail;
    c->num_recs++;
    for (k = 0; k < r->count; k++, pos += 4) {
      uint32_t bits = (uint32_t)layer_le(buf + pos, 4);
      memcpy(&r->data[k], &bits, 4);
    }
  }
  free(buf);
  return 1;
fail:
  free(buf);
  layer_free(c);
  return 0;
}

static const layer_record *layer_find(const layer_case *c, char kind, const char *name) {
  int i;
  for (i = 0; i < c->num_recs; i++)
    if (c->recs[i].kind == kind && strcmp(c->recs[i].name, name) == 0) return &c->recs[i];
  return NULL;
}

/* "key=value" in the head line: the number, or def */
static double head_num(const char *head, const char *key, double def) {
  char pat[40];
  const char *p;
  snprintf(pat, sizeof pat, " %s=", key);
  p = strstr(head, pat);
  return p ? strtod(p + strlen(pat), NULL) : def;
}

/* "key=a,b,c": the count read into out (0 when absent) */
static int head_list(const char *head, const char *key, int64_t *out, int max) {
  char pat[40];
  const char *p;
  int n = 0;
  snprintf(pat, sizeof pat, " %s=", key);
  if (!(p = strstr(head, pat))) return 0;
  p += strlen(pat);
  for (;;) {
    char *e;
    if (n == max) break;
    out[n++] = strtoll(p, &e, 10);
    if (*e != ',') break;
    p = e + 1;
  }
  return n;
}

static int head_is(const char *head, const char *op) {
  size_t n = strlen(op);
  return strncmp(head, op, n) == 0 && (head[n] == ' ' || head[n] == '\n' || !head[n]);
}

/* ============================================================ running a case */

typedef struct layer_run {
  fuse_graph *g;
  const float *inputs[16];
  int num_inputs;
  const layer_record *want[16]; /* the expected outputs, in fuse_output order */
  int num_outputs;
} layer_run;

/* An operand from record `name` as a graph input (its data is passed to fuse_run) or a
   constant; FUSE_NONE when the record is absent. */
static fuse_value layer_operand(layer_run *lr, const layer_case *c, const char *name, int constant) {
  const layer_record *r = layer_find(c, 'I', name);
  if (!r) return FUSE_NONE;
  if (constant) return fuse_constant(lr->g, name, r->rank, r->dims, r->data);
  lr->inputs[lr->num_inputs++] = r->data;
  return fuse_input(lr->g, name, r->rank, r->dims);
}

static void layer_output(layer_run *lr, const layer_case *c, fuse_value v, const char *name) {
  const layer_record *r = layer_find(c, 'O', name);
  CHECK(r != NULL);
  if (!r) return;
  CHECK_EQ_INT(fuse_output(lr->g, v), FUSE_OK);
  lr->want[lr->num_outputs++] = r;
}

/* Compiles and runs lr->g with the options, compares every output. */
static void layer_check_run(layer_run *lr, const fuse_compile_options *opt, const char *how) {
  fuse_plan *plan = NULL;
  float *got[16];
  int i;
  fuse_result r = fuse_compile(lr->g, opt, &plan);
  if (r != FUSE_OK) printf("  %s: fuse_compile: %s\n", how, fuse_graph_error(lr->g));
  CHECK_EQ_INT(r, FUSE_OK);
  if (r != FUSE_OK) return;
  for (i = 0; i < lr->num_outputs; i++) got[i] = (float *)malloc(lr->want[i]->count * sizeof(float) + 1);
  CHECK_EQ_INT(fuse_run(plan, lr->inputs, got, NULL), FUSE_OK);
  for (i = 0; i < lr->num_outputs; i++) {
    double e = runner_rel_error(got[i], lr->want[i]->data, lr->want[i]->count);
    if (!(e <= LAYER_TOL)) printf("  %s: output %s: relative error %.3g\n", how, lr->want[i]->name, e);
    CHECK(e <= LAYER_TOL);
    free(got[i]);
  }
  fuse_plan_destroy(plan);
}

/* The outputs' shapes, then runs: as built (default and reference kernels), optimized (each
   kernel path the CPU has). */
static void layer_check(layer_run *lr) {
  static const fuse_isa isas[4] = {FUSE_ISA_SCALAR, FUSE_ISA_AVX2, FUSE_ISA_AVX512,
                                   FUSE_ISA_NEON};
  static const char *const names[4] = {"optimized, scalar", "optimized, avx2",
                                       "optimized, avx512", "optimized, neon"};
  fuse_isa cpu = fuse_cpu_isa();
  fuse_compile_options opt;
  int i;
  if (fuse_graph_status(lr->g) != FUSE_OK) printf("  build: %s\n", fuse_graph_error(lr->g));
  CHECK_EQ_INT(fuse_graph_status(lr->g), FUSE_OK);
  if (fuse_graph_status(lr->g) != FUSE_OK) return;
  CHECK_EQ_INT(fuse_graph_output_count(lr->g), lr->num_outputs);
  for (i = 0; i < lr->num_outputs; i++) {
    fuse_value v = fuse_graph_output(lr->g, i);
    const layer_record *w = lr->want[i];
    int ok = fuse_value_rank(lr->g, v) == w->rank &&
             memcmp(fuse_value_shape(lr->g, v), w->dims, (size_t)w->rank * sizeof(int64_t)) == 0;
    if (!ok) printf("  output %s has the wrong shape\n", w->name);
    CHECK(ok);
    if (!ok) return;
  }
  memset(&opt, 0, sizeof opt);
  layer_check_run(lr, &opt, "as built");
  opt.reference_kernels = 1;
  layer_check_run(lr, &opt, "reference kernels");
  CHECK_EQ_INT(fuse_optimize(lr->g, "fuse"), FUSE_OK);
  for (i = 0; i < 4; i++) { /* scalar, and each ISA the CPU runs (AVX2 where AVX-512 is) */
    if (isas[i] != FUSE_ISA_SCALAR && isas[i] != cpu &&
        !(isas[i] == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512))
      continue;
    memset(&opt, 0, sizeof opt);
    opt.isa = isas[i];
    layer_check_run(lr, &opt, names[i]);
  }
}

static void layer_build_1d(layer_run *lr, const layer_case *c) {
  const char *h = c->head;
  int64_t pad[2] = {0, 0};
  fuse_value x = layer_operand(lr, c, "x", 0), y;
  head_list(h, "padding", pad, 2);
  if (head_is(h, "conv1d")) {
    fuse_conv2d_attrs a;
    memset(&a, 0, sizeof a);
    a.strides[1] = (int)head_num(h, "strides", 1);
    a.padding[1] = (int)pad[0], a.padding[3] = (int)pad[1];
    a.dilation[1] = (int)head_num(h, "dilation", 1);
    a.groups = (int)head_num(h, "groups", 1);
    y = fuse_conv2d(lr->g, x, layer_operand(lr, c, "w", 1), &a);
  } else if (head_is(h, "conv_transpose1d")) {
    fuse_conv_transpose2d_attrs a;
    memset(&a, 0, sizeof a);
    a.strides[1] = (int)head_num(h, "strides", 1);
    a.padding[1] = (int)pad[0], a.padding[3] = (int)pad[1];
    a.output_padding[1] = (int)head_num(h, "output_padding", 0);
    a.dilation[1] = (int)head_num(h, "dilation", 1);
    a.groups = (int)head_num(h, "groups", 1);
    y = fuse_conv_transpose2d(lr->g, x, layer_operand(lr, c, "w", 1), &a);
  } else if (head_is(h, "global_avg_pool1d")) {
    y = fuse_global_avg_pool2d(lr->g, x);
  } else {
    fuse_pool2d_attrs a;
    memset(&a, 0, sizeof a);
    a.kernel[1] = (int)head_num(h, "kernel", 1);
    a.strides[1] = (int)head_num(h, "strides", 1);
    a.padding[1] = (int)pad[0], a.padding[3] = (int)pad[1];
    a.dilation[1] = (int)head_num(h, "dilation", 1);
    a.ceil_mode = (int)head_num(h, "ceil_mode", 0);
    a.count_include_pad = (int)head_num(h, "count_include_pad", 0);
    y = head_is(h, "max_pool1d") ? fuse_max_pool2d(lr->g, x, &a) : fuse_avg_pool2d(lr->g, x, &a);
  }
  layer_output(lr, c, y, "y");
}

static void layer_build_split(layer_run *lr, const layer_case *c) {
  int64_t sizes[8];
  fuse_value out[8];
  int n = (int)head_num(c->head, "n", 1), i;
  int has_sizes = head_list(c->head, "sizes", sizes, 8) > 0;
  fuse_value x = layer_operand(lr, c, "x", 0);
  CHECK_EQ_INT(fuse_split(lr->g, x, (int)head_num(c->head, "axis", 0), n, has_sizes ? sizes : NULL,
                          out), FUSE_OK);
  for (i = 0; i < n && i < 8; i++) {
    char name[16];
    snprintf(name, sizeof name, "y%d", i);
    layer_output(lr, c, out[i], name);
  }
}

static void layer_build_rnn(layer_run *lr, const layer_case *c) {
  const char *h = c->head;
  int lstm = head_is(h, "lstm"), constant = (int)head_num(h, "const", 0);
  int64_t want[3] = {1, 1, lstm};
  fuse_rnn_attrs a;
  fuse_value x, w, r, b, h0, c0, y = FUSE_NONE, y_h = FUSE_NONE, y_c = FUSE_NONE;
  fuse_result res;
  memset(&a, 0, sizeof a);
  a.hidden_size = (int)head_num(h, "hidden", 0);
  a.direction = (fuse_rnn_direction)(int)head_num(h, "direction", 0);
  a.batch_first = (int)head_num(h, "batch_first", 0);
  a.clip = (float)head_num(h, "clip", 0);
  a.linear_before_reset = (int)head_num(h, "linear_before_reset", 0);
  head_list(h, "outputs", want, 3);
  x = layer_operand(lr, c, "x", 0);
  w = layer_operand(lr, c, "w", constant);
  r = layer_operand(lr, c, "r", constant);
  b = layer_operand(lr, c, "b", constant);
  h0 = layer_operand(lr, c, "h0", constant);
  c0 = layer_operand(lr, c, "c0", constant);
  if (lstm)
    res = fuse_lstm(lr->g, x, w, r, b, h0, c0, &a, want[0] ? &y : NULL, want[1] ? &y_h : NULL,
                    want[2] ? &y_c : NULL);
  else
    res = fuse_gru(lr->g, x, w, r, b, h0, &a, want[0] ? &y : NULL, want[1] ? &y_h : NULL);
  CHECK_EQ_INT(res, FUSE_OK);
  if (want[0]) layer_output(lr, c, y, "y");
  if (want[1]) layer_output(lr, c, y_h, "y_h");
  if (want[2] && lstm) layer_output(lr, c, y_c, "y_c");
}

/* <case>.onnx next to the .layer file: loaded (inputs and outputs in the records' order), or
   refused with the head's text in the message. */
static void layer_onnx(layer_run *lr, const layer_case *c, const char *path) {
  char model[512];
  fuse_result r;
  int i;
  snprintf(model, sizeof model, "%.*s.onnx", (int)(strlen(path) - 6), path);
  r = fuse_onnx_load_file(model, NULL, &lr->g);
  if (head_is(c->head, "onnx_error")) {
    const char *text = c->head + strlen("onnx_error ");
    CHECK(r != FUSE_OK);
    CHECK_STR_CONTAINS(lr->g ? fuse_graph_error(lr->g) : NULL, text);
    return;
  }
  if (r != FUSE_OK) printf("  load: %s\n", lr->g ? fuse_graph_error(lr->g) : "(no graph)");
  CHECK_EQ_INT(r, FUSE_OK);
  if (r != FUSE_OK) return;
  for (i = 0; i < c->num_recs; i++) {
    if (c->recs[i].kind == 'I') lr->inputs[lr->num_inputs++] = c->recs[i].data;
    if (c->recs[i].kind == 'O') lr->want[lr->num_outputs++] = &c->recs[i];
  }
  CHECK_EQ_INT(fuse_graph_input_count(lr->g), lr->num_inputs);
  layer_check(lr);
}

static void test_layer_case(void) {
  char path[512];
  layer_case c;
  layer_run lr;
  char *nl;
  snprintf(path, sizeof path, "%s/%s", layer_dir, layer_file);
  CHECK(layer_load(path, &c));
  if (!c.head[0]) return;
  if ((nl = strchr(c.head, '\n')) != NULL) *nl = 0;
  memset(&lr, 0, sizeof lr);
  if (head_is(c.head, "onnx") || head_is(c.head, "onnx_error")) {
    layer_onnx(&lr, &c, path);
  } else {
    lr.g = fuse_graph_create(NULL);
    if (head_is(c.head, "split")) layer_build_split(&lr, &c);
    else if (head_is(c.head, "lstm") || head_is(c.head, "gru")) layer_build_rnn(&lr, &c);
    else layer_build_1d(&lr, &c);
    layer_check(&lr);
  }
  fuse_graph_destroy(lr.g);
  layer_free(&c);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every .layer file of the directory; returns how many (-1: no directory). */
static int run_cases(void) {
  DIR *d = opendir(layer_dir);
  struct dirent *e;
  char *names[256];
  int n = 0, i;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL && n < 256) {
    size_t len = strlen(e->d_name);
    if (len > 6 && strcmp(e->d_name + len - 6, ".layer") == 0) {
      names[n] = (char *)malloc(len + 1);
      if (names[n]) memcpy(names[n++], e->d_name, len + 1);
    }
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  for (i = 0; i < n; i++) {
    layer_file = names[i];
    runner_run(names[i], test_layer_case);
    free(names[i]);
  }
  return n;
}

/* ============================================================ builder error paths */

/* the call failed with code and a message containing text; the graph is made again */
#define EXPECT_FAIL(g, code, text)                              \
  do {                                                          \
    CHECK_EQ_INT(fuse_graph_status(g), code);                   \
    CHECK_STR_CONTAINS(fuse_graph_error(g), text);              \
  } while (0)

TEST(slice_shapes) {
  int64_t s[3] = {4, 5, 6}, starts[2] = {-1, 1}, ends[2] = {INT64_MIN, INT64_MAX}, steps[2] = {-2, 100};
  int axes[2] = {0, -1};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 3, s), y;
  y = fuse_slice(g, x, 2, axes, starts, ends, steps); /* rows 3, 1; column 1 */
  CHECK(y != FUSE_NONE);
  CHECK_EQ_INT(fuse_value_rank(g, y), 3);
  CHECK_EQ_INT(fuse_value_shape(g, y)[0], 2);
  CHECK_EQ_INT(fuse_value_shape(g, y)[1], 5);
  CHECK_EQ_INT(fuse_value_shape(g, y)[2], 1);
  y = fuse_slice(g, x, 0, NULL, NULL, NULL, NULL); /* no axes: the whole tensor */
  CHECK(y != FUSE_NONE && fuse_value_shape(g, y)[2] == 6);
  fuse_graph_destroy(g);
}

TEST(slice_errors) {
  int64_t s[2] = {4, 5}, st[2] = {0, 0}, en[2] = {2, 2}, zero[2] = {0, 1}, back[2] = {3, 3};
  int dup[2] = {1, -1}, far[1] = {2};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_slice(g, x, 2, NULL, st, en, zero), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "slice: the step along axis 0 is 0");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_slice(g, x, 2, dup, st, en, NULL), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "axis 1 of [4,5] is listed twice");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_slice(g, x, 1, far, st, en, NULL), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "slice: axis 2 is outside -2..1");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_slice(g, x, 2, NULL, back, en, NULL), FUSE_NONE); /* 3 .. 2 going up */
  EXPECT_FAIL(g, FUSE_ERROR_UNSUPPORTED, "select no element of axis 0");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_slice(g, x, 3, NULL, st, en, NULL), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "3 axes given for input [4,5]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_slice(g, x, 1, NULL, st, NULL, NULL), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "slice: ends is NULL");
  fuse_graph_destroy(g);
}

TEST(split_errors) {
  int64_t s[2] = {4, 6}, bad[2] = {2, 3}, zero[2] = {6, 0};
  fuse_value out[4];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_split(g, x, 1, 4, NULL, out), FUSE_ERROR_SHAPE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "not divisible into 4 equal pieces");
  CHECK_EQ_INT(out[0], FUSE_NONE);
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_split(g, x, -1, 2, bad, out), FUSE_ERROR_SHAPE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "the sizes add up to 5, but axis 1 of [4,6]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_split(g, x, 1, 2, zero, out), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "piece 1 has size 0");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, s);
  CHECK_EQ_INT(fuse_split(g, x, 0, 2, NULL, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "split: out is NULL");
  fuse_graph_destroy(g);
  CHECK_EQ_INT(fuse_split(NULL, 0, 0, 1, NULL, out), FUSE_ERROR_INVALID_ARGUMENT);
}

TEST(conv_transpose_errors) {
  int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {3, 2, 3, 3}, ws2[4] = {4, 2, 3, 3};
  fuse_conv_transpose2d_attrs a;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 4, xs), w = fuse_constant(g, "w", 4, ws, NULL);
  CHECK_EQ_INT(fuse_conv_transpose2d(g, x, w, NULL), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_SHAPE, "input [1,4,5,5] ('x') has 4 channels, weight [3,2,3,3] ('w') expects 3");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 4, xs), w = fuse_constant(g, "w", 4, ws2, NULL);
  memset(&a, 0, sizeof a);
  a.groups = 3;
  CHECK_EQ_INT(fuse_conv_transpose2d(g, x, w, &a), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_SHAPE, "4 input channels are not divisible by groups=3");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 4, xs), w = fuse_constant(g, "w", 4, ws2, NULL);
  memset(&a, 0, sizeof a);
  a.padding[0] = 4, a.padding[2] = 3; /* the full output has 7 rows */
  CHECK_EQ_INT(fuse_conv_transpose2d(g, x, w, &a), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_SHAPE, "crops all 7 rows");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 4, xs), w = fuse_constant(g, "w", 4, ws2, NULL);
  memset(&a, 0, sizeof a);
  a.output_padding[1] = -1;
  CHECK_EQ_INT(fuse_conv_transpose2d(g, x, w, &a), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "output_padding [0,-1] must be >= 0");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 4, xs), w = fuse_constant(g, "w", 4, ws2, NULL);
  memset(&a, 0, sizeof a);
  a.strides[0] = -2;
  CHECK_EQ_INT(fuse_conv_transpose2d(g, x, w, &a), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "conv_transpose2d: strides [-2,0] must be >= 1");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 4, xs);
  CHECK_EQ_INT(fuse_conv_transpose2d(g, x, 77, NULL), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "conv_transpose2d: operand 2 is 77");
  fuse_graph_destroy(g);
}

TEST(one_d_errors) {
  int64_t xs[3] = {1, 4, 9}, ws[3] = {2, 4, 3}, w4[4] = {2, 4, 1, 3}, wt[3] = {4, 2, 3};
  fuse_conv2d_attrs a;
  fuse_pool2d_attrs p;
  fuse_conv_transpose2d_attrs t;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 3, xs), w = fuse_constant(g, "w", 3, ws, NULL);
  memset(&a, 0, sizeof a);
  a.strides[0] = 2;
  CHECK_EQ_INT(fuse_conv2d(g, x, w, &a), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "conv2d: input [1,4,9] ('x') is 1-D, so the H entry of strides must be 1, not 2");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 3, xs), w = fuse_constant(g, "w", 4, w4, NULL);
  CHECK_EQ_INT(fuse_conv2d(g, x, w, NULL), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_SHAPE, "conv2d: 1-D input [1,4,9] ('x') needs a 3-D weight");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 3, xs);
  memset(&p, 0, sizeof p);
  p.kernel[0] = 3, p.kernel[1] = 3;
  CHECK_EQ_INT(fuse_max_pool2d(g, x, &p), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "max_pool2d: input [1,4,9] ('x') is 1-D, so the H entry of kernel must be 1, not 3");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 3, xs);
  memset(&p, 0, sizeof p);
  p.kernel[1] = 2, p.padding[2] = 1;
  CHECK_EQ_INT(fuse_avg_pool2d(g, x, &p), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "padding (bottom) must be 0, not 1");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 3, xs), w = fuse_constant(g, "w", 3, wt, NULL);
  memset(&t, 0, sizeof t);
  t.output_padding[0] = 1;
  CHECK_EQ_INT(fuse_conv_transpose2d(g, x, w, &t), FUSE_NONE);
  EXPECT_FAIL(g, FUSE_ERROR_INVALID_ARGUMENT, "H entry of output_padding must be 0, not 1");
  fuse_graph_destroy(g);
}

TEST(rnn_errors) {
  int64_t xs[3] = {5, 2, 3}, ws[3] = {1, 16, 3}, rs[3] = {1, 16, 4}, bad[3] = {1, 12, 3}, bs[2] = {1, 30};
  fuse_rnn_attrs a;
  fuse_value y = 7, y_h = 7;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 3, xs), w = fuse_constant(g, "w", 3, ws, NULL);
  fuse_value r = fuse_constant(g, "r", 3, rs, NULL);
  CHECK_EQ_INT(fuse_lstm(g, x, w, r, FUSE_NONE, FUSE_NONE, FUSE_NONE, NULL, &y, NULL, NULL),
               FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(y, FUSE_NONE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "lstm: attributes are NULL (hidden_size is required)");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 3, xs), w = fuse_constant(g, "w", 3, bad, NULL);
  r = fuse_constant(g, "r", 3, rs, NULL);
  memset(&a, 0, sizeof a);
  a.hidden_size = 4;
  CHECK_EQ_INT(fuse_lstm(g, x, w, r, FUSE_NONE, FUSE_NONE, FUSE_NONE, &a, &y, NULL, NULL),
               FUSE_ERROR_SHAPE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "lstm: w [1,12,3] ('w') must be [1,16,3]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 3, xs), w = fuse_constant(g, "w", 3, ws, NULL);
  r = fuse_constant(g, "r", 3, rs, NULL);
  memset(&a, 0, sizeof a);
  a.hidden_size = 4;
  a.direction = (fuse_rnn_direction)7;
  CHECK_EQ_INT(fuse_lstm(g, x, w, r, FUSE_NONE, FUSE_NONE, FUSE_NONE, &a, &y, NULL, NULL),
               FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "direction 7 is not forward (0), reverse (1) or bidirectional (2)");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 3, xs), w = fuse_constant(g, "w", 3, ws, NULL);
  r = fuse_constant(g, "r", 3, rs, NULL);
  memset(&a, 0, sizeof a);
  a.hidden_size = 4;
  a.clip = -1;
  CHECK_EQ_INT(fuse_lstm(g, x, w, r, FUSE_NONE, FUSE_NONE, FUSE_NONE, &a, NULL, &y_h, NULL),
               FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(y_h, FUSE_NONE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "lstm: clip=-1 must be >= 0");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL); /* GRU: 3 gates; a bias of LSTM's size */
  x = fuse_input(g, "x", 3, xs), w = fuse_constant(g, "w", 3, bad, NULL);
  rs[1] = 12;
  r = fuse_constant(g, "r", 3, rs, NULL);
  memset(&a, 0, sizeof a);
  a.hidden_size = 4;
  y_h = 7;
  CHECK_EQ_INT(fuse_gru(g, x, w, r, fuse_constant(g, "b", 2, bs, NULL), FUSE_NONE, &a, NULL, &y_h),
               FUSE_ERROR_SHAPE);
  CHECK_EQ_INT(y_h, FUSE_NONE);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "gru: b [1,30] ('b') must be [1,24]");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 3, xs);
  memset(&a, 0, sizeof a);
  a.hidden_size = 4;
  CHECK_EQ_INT(fuse_gru(g, x, FUSE_NONE, x, FUSE_NONE, FUSE_NONE, &a, NULL, &y_h),
               FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "gru: operand 2 is FUSE_NONE");
  fuse_graph_destroy(g);
}

/* ============================================================ transposed convolution size */

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

TEST(conv_transpose_unet_decoder) {
  int64_t xs[4] = {1, 64, 64, 64}, ws[4] = {64, 64, 2, 2};
  size_t nx = 64 * 64 * 64, nw = 64 * 64 * 4, ny = 64 * 128 * 128, i;
  float *x = (float *)malloc(nx * sizeof(float)), *w = (float *)malloc(nw * sizeof(float));
  float *y = (float *)malloc(ny * sizeof(float));
  fuse_conv_transpose2d_attrs a;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_plan *plan = NULL;
  fuse_value v;
  double t0, ms;
  int k, oh, ow, bad = 0;
  CHECK(x && w && y);
  if (!x || !w || !y) goto done;
  for (i = 0; i < nx; i++) x[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
  for (i = 0; i < nw; i++) w[i] = (float)((i * 104729) % 997) / 997.0f - 0.5f;
  memset(&a, 0, sizeof a);
  a.strides[0] = a.strides[1] = 2;
  v = fuse_conv_transpose2d(g, fuse_input(g, "x", 4, xs), fuse_constant(g, "w", 4, ws, w), &a);
  CHECK_EQ_INT(fuse_output(g, v), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, NULL, &plan), FUSE_OK);
  if (!plan) goto done;
  t0 = now_seconds();
  {
    const float *in[1];
    float *out[1];
    in[0] = x, out[0] = y;
    CHECK_EQ_INT(fuse_run(plan, in, out, NULL), FUSE_OK);
  }
  ms = (now_seconds() - t0) * 1e3;
  printf("  conv_transpose2d [1,64,64,64] * [64,64,2,2] stride 2: %.1f ms\n", ms);
  CHECK(ms < 5000); /* a naive loop over all inputs per output would take minutes */
  for (k = 0; k < 64; k += 21) /* 2x2 stride 2: each output reads one input pixel */
    for (oh = 0; oh < 128; oh += 37)
      for (ow = 0; ow < 128; ow += 29) {
        double want = 0;
        int c;
        for (c = 0; c < 64; c++)
          want += (double)x[(c * 64 + oh / 2) * 64 + ow / 2] *
                  w[((c * 64 + k) * 2 + oh % 2) * 2 + ow % 2];
        bad += fabs(want - y[(k * 128 + oh) * 128 + ow]) > 1e-4;
      }
  CHECK_EQ_INT(bad, 0);
done:
  fuse_plan_destroy(plan);
  fuse_graph_destroy(g);
  free(x);
  free(w);
  free(y);
}

static int case_count;
TEST(layer_cases_present) { CHECK(case_count > 0); }

int main(int argc, char **argv) {
  if (argc > 1) layer_dir = argv[1];
  case_count = run_cases();
  if (case_count <= 0)
    printf("%s: %s (run /usr/bin/python3 tools/golden_layers.py)\n", layer_dir,
           case_count < 0 ? "cannot open the directory" : "no .layer file");
  RUN(layer_cases_present);
  RUN(slice_shapes);
  RUN(slice_errors);
  RUN(split_errors);
  RUN(conv_transpose_errors);
  RUN(one_d_errors);
  RUN(rnn_errors);
  RUN(conv_transpose_unet_decoder);
  return runner_finish("layers");
}
