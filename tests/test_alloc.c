/* test_alloc.c - allocator discipline of the entry points the other tests leave out.

   test_graph.c (graph building), test_text.c (parsing) and test_run.c (compiling a graph as
   built, fuse_run allocating nothing) refuse each allocation in turn already. This file does
   the same for: loading ONNX from memory and from a file, fuse_onnx_load_tensor,
   fuse_optimize (batch-norm folding, constant reshapes, the default rules, merging; also on
   weights still in the mapped file),
   fuse_ops_by_pattern + fuse_merge_composites with user rules, fuse_compile of an optimized
   graph (packed weights; also cut into chunks for a host's parallel_for; also packed straight
   from the mapped file), fuse_graph_write of
   an optimized graph, fuse_graph_parse of its listing (composite blocks) and
   fuse_value_set_name.

   Each scenario sets up (nothing refused), then refuses allocation k of the call under test -
   only that one, then (second mode) that one and every one after it - for k = 1, 2, ... until
   the call makes fewer than k allocations. Every attempt must:
     - return FUSE_OK, or FUSE_ERROR_OUT_OF_MEMORY with a message saying "out of memory"
       (a refused allocation is never swallowed: the call then reports it);
     - leave a graph that still works: when its status is still FUSE_OK, it compiles (nothing
       refused) and computes the same output as before, within 1e-4 (tinynet against
       PyTorch's reference output);
     - free everything it allocated (counted), and ask for alignments of at most 64.
   The committed network tests/data/onnx/tinynet.onnx (and tinynet_bn.onnx, whose batch-norms
   fuse_optimize folds) with its input and PyTorch's output serve as the data.

   Usage: build/test_alloc   (run from the repository root) */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include "counting_alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NET_TOL 1e-4

static counting_alloc ca;
static fuse_allocator al;
static unsigned char *net_bytes, *net_bn_bytes;
static size_t net_size, net_bn_size;
static float *net_in, *net_want;
static size_t net_in_n, net_want_n;

/* ------------------------------------------------------------------ helpers -- */

static unsigned char *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  long size;
  unsigned char *d = NULL;
  *n = 0;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    d = (unsigned char *)malloc((size_t)size);
    if (d && fread(d, 1, (size_t)size, f) == (size_t)size) {
      *n = (size_t)size;
    } else {
      free(d);
      d = NULL;
    }
  }
  fclose(f);
  return d;
}

static float *read_floats(const char *path, size_t *n) { /* little-endian float32 */
  size_t bytes, i;
  unsigned char *d = read_bytes(path, &bytes);
  float *f;
  *n = 0;
  if (!d || bytes % 4) {
    free(d);
    return NULL;
  }
  f = (float *)malloc(bytes);
  if (f)
    for (i = 0; i < bytes / 4; i++) {
      uint32_t u = (uint32_t)d[4 * i] | (uint32_t)d[4 * i + 1] << 8 |
                   (uint32_t)d[4 * i + 2] << 16 | (uint32_t)d[4 * i + 3] << 24;
      memcpy(&f[i], &u, 4);
    }
  free(d);
  *n = f ? bytes / 4 : 0;
  return f;
}

/* Compiles g (nothing refused) and runs it on tinynet's input: 1 when the output matches
   PyTorch's. */
static int net_matches(const fuse_graph *g, const fuse_compile_options *opt) {
  fuse_plan *p = NULL;
  float out[128];
  const float *in[1];
  float *outs[1];
  int ok;
  long saved = ca.fail_at;
  ca.fail_at = 0;
  ok = fuse_graph_input_count(g) == 1 && fuse_graph_output_count(g) == 1 &&
       fuse_compile(g, opt, &p) == FUSE_OK;
  if (ok) {
    in[0] = net_in;
    outs[0] = out;
    ok = net_want_n <= 128 && fuse_run(p, in, outs, NULL) == FUSE_OK &&
         runner_rel_error(out, net_want, net_want_n) <= NET_TOL;
  }
  fuse_plan_destroy(p);
  ca.fail_at = saved;
  return ok;
}

/* The state of one round: refuse allocation k (counted from `base`) of the call under test. */
typedef struct attempt {
  long k;
  int after;
  long base;    /* allocation calls before the call under test */
  int refused;  /* whether the call reached allocation k */
  fuse_result r;
  char msg[512];
  int no_channel; /* the call has no message to give (fuse_graph_write) */
  int graph_ok; /* a graph left with status FUSE_OK still computes the right output */
} attempt;

static void arm(attempt *rd) {
  rd->base = ca.calls;
  ca.fail_at = rd->base + rd->k;
  ca.fail_after = rd->after;
}
static void disarm(attempt *rd, fuse_result r, const char *msg) {
  rd->refused = ca.calls >= ca.fail_at;
  ca.fail_at = 0;
  ca.fail_after = 0;
  rd->r = r;
  rd->no_channel = msg == NULL;
  if (msg) {
    size_t n = strlen(msg) < sizeof rd->msg - 1 ? strlen(msg) : sizeof rd->msg - 1;
    memcpy(rd->msg, msg, n);
    rd->msg[n] = 0;
  }
}

static fuse_graph *load(const unsigned char *bytes, size_t n) { /* nothing refused */
  fuse_graph *g = NULL;
  if (fuse_onnx_load_memory(bytes, n, &al, &g) != FUSE_OK) {
    fuse_graph_destroy(g);
    return NULL;
  }
  return g;
}

/* tinynet_bn from its bytes, or a network from its file (then its weights stay in the mapped
   file, borrowed, until a pass or the compiler copies them out); nothing refused */
static fuse_graph *load_bn(const char *path) {
  fuse_graph *g = NULL;
  if (!path) return load(net_bn_bytes, net_bn_size);
  if (fuse_onnx_load_file(path, &al, &g) != FUSE_OK) {
    fuse_graph_destroy(g);
    return NULL;
  }
  return g;
}

/* --------------------------------------------------------------- scenarios -- */

static void sc_load_memory(attempt *rd, const unsigned char *bytes, size_t n) {
  fuse_graph *g = NULL;
  fuse_result r;
  arm(rd);
  r = fuse_onnx_load_memory(bytes, n, &al, &g);
  disarm(rd, r, g ? fuse_graph_error(g) : "out of memory (no graph: *out is NULL)");
  rd->graph_ok = r != FUSE_OK || net_matches(g, NULL);
  if (!g && r != FUSE_ERROR_OUT_OF_MEMORY) rd->graph_ok = 0; /* NULL only when out of memory */
  fuse_graph_destroy(g);
}
static void sc_load_net(attempt *rd) { sc_load_memory(rd, net_bytes, net_size); }
static void sc_load_net_bn(attempt *rd) { sc_load_memory(rd, net_bn_bytes, net_bn_size); }

static void sc_load_file(attempt *rd) {
  fuse_graph *g = NULL;
  fuse_result r;
  arm(rd);
  r = fuse_onnx_load_file("tests/data/onnx/tinynet.onnx", &al, &g);
  disarm(rd, r, g ? fuse_graph_error(g) : "out of memory (no graph: *out is NULL)");
  rd->graph_ok = (r != FUSE_OK || net_matches(g, NULL)) && (g || r == FUSE_ERROR_OUT_OF_MEMORY);
  fuse_graph_destroy(g);
}

static void sc_load_tensor(attempt *rd) {
  /* TensorProto: dims [2, 3], FLOAT, float_data packed, name "t" */
  static const unsigned char t[] = {0x08, 0x02, 0x08, 0x03, 0x10, 0x01, 0x22, 0x18,
                                    0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40,
                                    0, 0, 0x80, 0x40, 0, 0, 0xa0, 0x40, 0, 0, 0xc0, 0x40,
                                    0x42, 0x01, 't'};
  fuse_onnx_tensor out;
  fuse_result r;
  arm(rd);
  r = fuse_onnx_load_tensor(t, sizeof t, &al, &out);
  disarm(rd, r, out.error);
  rd->graph_ok = r != FUSE_OK || (out.rank == 2 && out.data && out.data[5] == 6.0f);
  if (r == FUSE_OK) fuse_onnx_tensor_free(&out, &al);
  else rd->graph_ok = rd->graph_ok && out.data == NULL;
}

static void optimize_net_bn(attempt *rd, const char *path) {
  fuse_graph *g = load_bn(path);
  fuse_result r;
  if (!g) {
    rd->graph_ok = 0;
    return;
  }
  arm(rd);
  r = fuse_optimize(g, "fuse");
  disarm(rd, r, fuse_graph_error(g));
  /* a pass that failed leaves a graph that still computes the same (or a sticky status) */
  rd->graph_ok = fuse_graph_status(g) != FUSE_OK || net_matches(g, NULL);
  fuse_graph_destroy(g);
}
static void sc_optimize_net_bn(attempt *rd) { optimize_net_bn(rd, NULL); }
static void sc_optimize_net_bn_file(attempt *rd) {
  optimize_net_bn(rd, "tests/data/onnx/tinynet_bn.onnx");
}

/* conv -> reshape(const bias) -> add -> relu; matmul -> add(bias) -> clip: constant reshapes
   fold, both chains fuse. Outputs compared with the graph before the pass. */
static fuse_graph *seed_graph(void) {
  static float w[4 * 3 * 9], b[4], fc[4 * 36 * 5], fb[5];
  const int64_t xs[4] = {1, 3, 6, 6}, ws[4] = {4, 3, 3, 3}, bs[1] = {4}, b4[4] = {1, 4, 1, 1};
  const int64_t fs[2] = {144, 5}, fbs[1] = {5}, flat[2] = {1, 144};
  fuse_conv2d_attrs a;
  fuse_graph *g = fuse_graph_create(&al);
  fuse_value y;
  int i;
  for (i = 0; i < 108; i++) w[i] = (float)(i % 7) * 0.1f - 0.3f;
  for (i = 0; i < 4; i++) b[i] = (float)i * 0.25f - 0.5f;
  for (i = 0; i < 720; i++) fc[i] = (float)(i % 11) * 0.02f - 0.1f;
  for (i = 0; i < 5; i++) fb[i] = (float)i * 0.1f;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  y = fuse_conv2d(g, fuse_input(g, "x", 4, xs), fuse_constant(g, "w", 4, ws, w), &a);
  y = fuse_relu(g, fuse_add(g, y, fuse_reshape(g, fuse_constant(g, "b", 1, bs, b), 4, b4)));
  fuse_output(g, y);
  y = fuse_matmul(g, fuse_reshape(g, y, 2, flat), fuse_constant(g, "fc", 2, fs, fc));
  fuse_output(g, fuse_clip(g, fuse_add(g, fuse_constant(g, "fb", 1, fbs, fb), y), -1.0f, 1.0f));
  return g;
}

/* runs a 2-output seed graph: outputs into o0 [144] and o1 [5] */
static int seed_run(const fuse_graph *g, float *o0, float *o1) {
  static float x[108];
  fuse_plan *p = NULL;
  const float *in[1];
  float *outs[2];
  long saved = ca.fail_at;
  int i, ok;
  for (i = 0; i < 108; i++) x[i] = (float)(i % 13) * 0.15f - 0.9f;
  ca.fail_at = 0;
  in[0] = x;
  outs[0] = o0;
  outs[1] = o1;
  ok = fuse_compile(g, NULL, &p) == FUSE_OK && fuse_run(p, in, outs, NULL) == FUSE_OK;
  fuse_plan_destroy(p);
  ca.fail_at = saved;
  return ok;
}

static void seed_pass(attempt *rd, int which) {
  fuse_graph *g = seed_graph();
  float want0[144], want1[5], got0[144], got1[5];
  fuse_result r = FUSE_OK;
  if (!g || fuse_graph_status(g) != FUSE_OK || !seed_run(g, want0, want1)) {
    rd->graph_ok = 0;
    fuse_graph_destroy(g);
    return;
  }
  arm(rd);
  if (which == 0) {
    r = fuse_optimize(g, "dnnl");
  } else if (which == 1) {
    static const fuse_rule rules[2] = {
        {"mine.conv_relu", "relu(add(conv2d($x, $w), reshape?($b, *)))", NULL, NULL},
        {"mine.matmul_clip", "clip(add(*, matmul(*, *)))", NULL, NULL}};
    fuse_pattern_options o;
    memset(&o, 0, sizeof o);
    o.allow_escaping = 1;
    o.keep_constants_as_params = 1;
    r = fuse_ops_by_pattern(g, rules, 2, &o);
    if (r == FUSE_OK) r = fuse_merge_composites(g);
  } else {
    r = fuse_value_set_name(g, fuse_graph_output(g, 1), "a rather long name for the head output");
  }
  disarm(rd, r, fuse_graph_error(g));
  rd->graph_ok = fuse_graph_status(g) != FUSE_OK ||
                 (seed_run(g, got0, got1) && runner_rel_error(got0, want0, 144) <= 1e-5 &&
                  runner_rel_error(got1, want1, 5) <= 1e-5);
  fuse_graph_destroy(g);
}
static void sc_optimize_seed(attempt *rd) { seed_pass(rd, 0); }
static void sc_rules_and_merge(attempt *rd) { seed_pass(rd, 1); }
static void sc_set_name(attempt *rd) { seed_pass(rd, 2); }

static void serial_for(void *user, fuse_task_fn task, void *ctx, int n) {
  int i;
  (void)user;
  for (i = 0; i < n; i++) task(ctx, i, i + 1);
}

/* fuse_compile of the optimized tinynet_bn; with `chunks`, cut into 3 chunks for a host's
   parallel_for (a packing buffer each); or tinynet from its file, packed from the mapping */
static void compile_optimized(attempt *rd, int chunks, const char *path) {
  fuse_graph *g = load_bn(path);
  fuse_compile_options opt;
  fuse_plan *p = NULL;
  fuse_result r;
  char error[300];
  memset(&opt, 0, sizeof opt);
  error[0] = 0;
  opt.error = error;
  opt.error_size = sizeof error;
  if (chunks) {
    opt.num_threads = 3;
    opt.parallel_for = serial_for;
  }
  if (!g || fuse_optimize(g, "fuse") != FUSE_OK) {
    rd->graph_ok = 0;
    fuse_graph_destroy(g);
    return;
  }
  arm(rd);
  r = fuse_compile(g, &opt, &p);
  disarm(rd, r, error);
  rd->graph_ok = (r == FUSE_OK) == (p != NULL);
  if (p) {
    float out[128];
    const float *in[1];
    float *outs[1];
    in[0] = net_in;
    outs[0] = out;
    rd->graph_ok = rd->graph_ok && fuse_run(p, in, outs, NULL) == FUSE_OK &&
                   runner_rel_error(out, net_want, net_want_n) <= NET_TOL;
  }
  fuse_plan_destroy(p);
  rd->graph_ok = rd->graph_ok && net_matches(g, NULL); /* a failed compile leaves g as it was */
  fuse_graph_destroy(g);
}
static void sc_compile_optimized(attempt *rd) { compile_optimized(rd, 0, NULL); }
static void sc_compile_chunks(attempt *rd) { compile_optimized(rd, 1, NULL); }
static void sc_compile_file(attempt *rd) { compile_optimized(rd, 0, "tests/data/onnx/tinynet.onnx"); }

static void sink(void *u, const char *t, size_t n) {
  (void)u;
  (void)t;
  (void)n;
}

typedef struct text {
  char *p;
  size_t len, cap;
} text;
static void text_write(void *u, const char *t, size_t n) {
  text *b = (text *)u;
  if (b->len + n + 1 > b->cap) {
    char *q = (char *)realloc(b->p, b->cap = (b->len + n + 1) * 2);
    if (!q) return;
    b->p = q;
  }
  memcpy(b->p + b->len, t, n);
  b->len += n;
  b->p[b->len] = 0;
}

static void sc_write_optimized(attempt *rd) {
  fuse_graph *g = load(net_bn_bytes, net_bn_size);
  fuse_result r;
  if (!g || fuse_optimize(g, "fuse") != FUSE_OK) {
    rd->graph_ok = 0;
    fuse_graph_destroy(g);
    return;
  }
  arm(rd);
  r = fuse_graph_write(g, sink, NULL);
  disarm(rd, r, NULL); /* only a result code */
  rd->graph_ok = fuse_graph_status(g) == FUSE_OK;
  fuse_graph_destroy(g);
}

static text listing; /* the optimized network's listing, made once */

static void sc_parse_optimized(attempt *rd) {
  fuse_graph *g = NULL;
  fuse_result r;
  if (!listing.p) {
    fuse_graph *src = load(net_bn_bytes, net_bn_size);
    if (src && fuse_optimize(src, "fuse") == FUSE_OK) fuse_graph_write(src, text_write, &listing);
    fuse_graph_destroy(src);
  }
  if (!listing.p) {
    rd->graph_ok = 0;
    return;
  }
  arm(rd);
  r = fuse_graph_parse(listing.p, &al, &g);
  disarm(rd, r, g ? fuse_graph_error(g) : "out of memory (no graph: *out is NULL)");
  rd->graph_ok = (g != NULL || r == FUSE_ERROR_OUT_OF_MEMORY) &&
                 (r != FUSE_OK || fuse_composite_count(g) == 11);
  fuse_graph_destroy(g);
}

/* ------------------------------------------------------------------ driver -- */

typedef struct scenario {
  const char *name;
  void (*fn)(attempt *rd);
} scenario;

static const scenario scenarios[] = {
    {"onnx_load_memory(tinynet)", sc_load_net},
    {"onnx_load_memory(tinynet_bn)", sc_load_net_bn},
    {"onnx_load_file(tinynet)", sc_load_file},
    {"onnx_load_tensor", sc_load_tensor},
    {"optimize(tinynet_bn)", sc_optimize_net_bn},
    {"optimize(seed graph, dnnl)", sc_optimize_seed},
    {"ops_by_pattern + merge (user rules)", sc_rules_and_merge},
    {"value_set_name", sc_set_name},
    {"compile(optimized tinynet)", sc_compile_optimized},
    {"compile(optimized, 3 chunks)", sc_compile_chunks},
    {"graph_write(optimized)", sc_write_optimized},
    {"graph_parse(optimized listing)", sc_parse_optimized},
    {"optimize(tinynet_bn, its file)", sc_optimize_net_bn_file},
    {"compile(optimized tinynet, its file)", sc_compile_file},
};

static void run_scenario(const scenario *sc) {
  int after;
  for (after = 0; after < 2; after++) {
    long k, bad = 0, rounds = 0;
    for (k = 1; k < 100000; k++) {
      attempt rd;
      memset(&rd, 0, sizeof rd);
      rd.k = k;
      rd.after = after;
      al = ca_make(&ca);
      sc->fn(&rd);
      rounds++;
      if (rd.r != FUSE_OK && (rd.r != FUSE_ERROR_OUT_OF_MEMORY ||
                              (!rd.no_channel && !strstr(rd.msg, "out of memory")))) {
        if (bad++ < 3)
          fprintf(stderr, "  FAIL %s, allocation %ld refused%s: %s (\"%s\")\n", sc->name, k,
                  after ? " and after" : "", fuse_result_string(rd.r), rd.msg);
      } else if (rd.refused && rd.r == FUSE_OK && after) {
        /* with every later allocation refused too, success means one was swallowed */
        if (bad++ < 3)
          fprintf(stderr, "  FAIL %s, allocations from %ld refused: FUSE_OK\n", sc->name, k);
      } else if (!rd.graph_ok) {
        if (bad++ < 3)
          fprintf(stderr, "  FAIL %s, allocation %ld refused%s: %s, and the result is wrong "
                          "afterwards (\"%s\")\n",
                  sc->name, k, after ? " and after" : "", fuse_result_string(rd.r), rd.msg);
      }
      if (ca.allocs != ca.frees || ca.bad_free || ca.bad_align) {
        if (bad++ < 3)
          fprintf(stderr, "  FAIL %s, allocation %ld refused%s: %ld allocations, %ld frees, %ld "
                          "bad frees, %ld misaligned\n",
                  sc->name, k, after ? " and after" : "", ca.allocs, ca.frees, ca.bad_free,
                  ca.bad_align);
      }
      ca_done(&ca);
      if (!rd.refused) break; /* the call made fewer than k allocations: all were refused once */
    }
    if (!after) printf("  %-36s %4ld allocations, each refused in turn\n", sc->name, rounds - 1);
    CHECK(rounds > 1);
    CHECK_EQ_INT(bad, 0);
  }
}

#define SCENARIO_TEST(id, index) \
  TEST(id) { run_scenario(&scenarios[index]); }
SCENARIO_TEST(onnx_load_memory, 0)
SCENARIO_TEST(onnx_load_memory_bn, 1)
SCENARIO_TEST(onnx_load_file, 2)
SCENARIO_TEST(onnx_load_tensor, 3)
SCENARIO_TEST(optimize_net_bn, 4)
SCENARIO_TEST(optimize_seed, 5)
SCENARIO_TEST(rules_and_merge, 6)
SCENARIO_TEST(set_name, 7)
SCENARIO_TEST(compile_optimized, 8)
SCENARIO_TEST(compile_chunks, 9)
SCENARIO_TEST(write_optimized, 10)
SCENARIO_TEST(parse_optimized, 11)
SCENARIO_TEST(optimize_net_bn_file, 12)
SCENARIO_TEST(compile_file, 13)

TEST(data_present) {
  CHECK(net_bytes && net_bn_bytes && net_in && net_want);
  CHECK_EQ_INT(net_in_n, 3 * 64 * 64);
  CHECK_EQ_INT(net_want_n, 100);
}

int main(void) {
  net_bytes = read_bytes("tests/data/onnx/tinynet.onnx", &net_size);
  net_bn_bytes = read_bytes("tests/data/onnx/tinynet_bn.onnx", &net_bn_size);
  net_in = read_floats("tests/data/onnx/tinynet.input.bin", &net_in_n);
  net_want = read_floats("tests/data/onnx/tinynet.output.bin", &net_want_n);
  RUN(data_present);
  if (net_bytes && net_bn_bytes && net_in && net_want && net_want_n == 100) {
    RUN(onnx_load_memory);
    RUN(onnx_load_memory_bn);
    RUN(onnx_load_file);
    RUN(onnx_load_tensor);
    RUN(optimize_net_bn);
    RUN(optimize_seed);
    RUN(rules_and_merge);
    RUN(set_name);
    RUN(compile_optimized);
    RUN(compile_chunks);
    RUN(write_optimized);
    RUN(parse_optimized);
    RUN(optimize_net_bn_file);
    RUN(compile_file);
  }
  free(net_bytes);
  free(net_bn_bytes);
  free(net_in);
  free(net_want);
  free(listing.p);
  return runner_finish("alloc");
}
