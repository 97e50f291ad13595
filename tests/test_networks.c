/* test_networks.c - real networks exported from PyTorch as ONNX, run through fuse.h.

   Every <name>.onnx in tests/data/onnx/ (committed; the test FAILS when there is none) and in
   build/models/ (written by `tools/export_torchvision.py`, not committed; skipped when the
   directory is missing, and under AddressSanitizer builds, where resnet50 would take minutes)
   is one test. The input and PyTorch's output are raw float32 little-endian files next to it:
   <name>.input.bin and <name>.output.bin, where a <name>_bn.onnx (BatchNormalization nodes
   kept) shares the files of <name>.onnx (batch norm folded by the exporter).

   For each network the test
     1. loads it with fuse_onnx_load_file (one input, one output, sizes matching the files),
     2. compiles and runs the graph as loaded and compares with PyTorch's output,
     3. runs fuse_optimize(g, "fuse"), checks that no batch_norm and no conv2d / matmul is left
        outside a composite (DESIGN.md: every conv / matmul chain becomes ONE top-level op),
        compiles, runs and compares again,
     4. for the committed networks, also compiles the optimized graph for each kernel path the
        CPU has (scalar, avx2, avx512) and compares each,
   and prints the op counts (by kind) before and after fuse_optimize, the composites (by rule),
   the plan's step count, the errors and the time per run of a short timing loop.

   TOLERANCE: normwise relative error max|got - want| / max|want| <= 1e-3 (NET_TOL). The
   reference is PyTorch's float32 output, so it carries float32 rounding of its own.

   Usage: build/test_networks [committed_dir [models_dir]]   (run from the repository root;
   defaults tests/data/onnx and build/models). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "files.h"

#define NET_TOL 1e-3

#if defined(__SANITIZE_ADDRESS__)
#define NET_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NET_SANITIZED 1
#endif
#endif
#ifndef NET_SANITIZED
#define NET_SANITIZED 0
#endif

/* ------------------------------------------------------------------- files -- */

/* The *.onnx files of dir, sorted; -1 when the directory cannot be opened. */
static int list_onnx(const char *dir, char ***out) { return list_onnx_matching(dir, NULL, out); }

/* ---------------------------------------------------------- text form stats -- */

typedef struct text_buf {
  char *buf;
  size_t len, cap;
  int failed;
} text_buf;

static void text_append(void *user, const char *s, size_t n) {
  text_buf *t = (text_buf *)user;
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = (t->len + n + 1) * 2;
    char *grown = (char *)realloc(t->buf, cap);
    if (!grown) {
      t->failed = 1;
      return;
    }
    t->buf = grown;
    t->cap = cap;
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = 0;
}

#define MAX_KINDS 64
typedef struct kind_count {
  char name[64];
  int count;
} kind_count;

typedef struct graph_stats {
  kind_count ops[MAX_KINDS];   /* every op by kind, inside composites or not */
  int num_ops;
  kind_count comps[MAX_KINDS]; /* composites by rule name */
  int num_comps;
  int top_batch_norm;  /* batch_norm outside any composite */
  int top_reductions;  /* conv2d / matmul outside any composite */
  int ok;
} graph_stats;

static void count_kind(kind_count *k, int *n, const char *name, size_t len) {
  int i;
  if (len >= sizeof k[0].name) len = sizeof k[0].name - 1;
  for (i = 0; i < *n; i++)
    if (strlen(k[i].name) == len && memcmp(k[i].name, name, len) == 0) {
      k[i].count++;
      return;
    }
  if (*n == MAX_KINDS) return;
  memcpy(k[*n].name, name, len);
  k[*n].name[len] = 0;
  k[*n].count = 1;
  (*n)++;
}

/* Op kinds and composites from the text form (lines "%v: [..] = op(", "composite "name" ..{"). */
static void graph_stats_get(const fuse_graph *g, graph_stats *s) {
  text_buf t = {NULL, 0, 0, 0};
  const char *line;
  int in_comp = 0;
  memset(s, 0, sizeof *s);
  if (fuse_graph_write(g, text_append, &t) != FUSE_OK || t.failed || !t.buf) {
    free(t.buf);
    return;
  }
  for (line = t.buf; *line; ) {
    const char *end = strchr(line, '\n'), *p = line, *eq;
    if (!end) end = line + strlen(line);
    while (p < end && *p == ' ') p++;
    if (strncmp(p, "composite \"", 11) == 0) {
      const char *q = (const char *)memchr(p + 11, '"', (size_t)(end - p - 11)); /* C++ too */
      if (q) count_kind(s->comps, &s->num_comps, p + 11, (size_t)(q - p - 11));
      in_comp = 1;
    } else if (p + 1 == end && *p == '}') {
      in_comp = 0; /* the end of a composite (or of the graph) */
    } else if (*p == '%' && (eq = strstr(p, " = ")) != NULL && eq < end) {
      const char *op = eq + 3, *q = op;
      while (q < end && ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')) q++;
      if (q < end && *q == '(' && q > op) {
        size_t len = (size_t)(q - op);
        count_kind(s->ops, &s->num_ops, op, len);
        if (!in_comp && len == 10 && memcmp(op, "batch_norm", 10) == 0) s->top_batch_norm++;
        if (!in_comp && ((len == 6 && memcmp(op, "conv2d", 6) == 0) ||
                         (len == 6 && memcmp(op, "matmul", 6) == 0)))
          s->top_reductions++;
      }
    }
    line = *end ? end + 1 : end;
  }
  free(t.buf);
  s->ok = 1;
}

static void print_kinds(const kind_count *k, int n) {
  int i;
  for (i = 0; i < n; i++) printf("%s%s %d", i ? ", " : "", k[i].name, k[i].count);
}

/* ------------------------------------------------------------------ running -- */

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Compiles g with the given ISA, runs it on in, returns the relative error against want
   (negative when compile / run failed; the reason is printed). With ms_per_run, also times
   a short loop after that first (warm-up) run: until 1 s has passed, at least 1 run and at
   most 50 (resnet50 takes seconds per run). */
static double run_graph(const fuse_graph *g, fuse_isa isa, const float *in, const float *want,
                        float *got, size_t out_n, double *ms_per_run, int *steps) {
  fuse_compile_options opt;
  fuse_plan *plan = NULL;
  char why[512] = "";
  const float *ins[1];
  float *outs[1];
  fuse_result r;
  double err;
  memset(&opt, 0, sizeof opt);
  opt.isa = isa;
  opt.error = why;
  opt.error_size = sizeof why;
  r = fuse_compile(g, &opt, &plan);
  if (r != FUSE_OK) {
    printf("    fuse_compile: %s: %s\n", fuse_result_string(r), why);
    return -1;
  }
  if (steps) *steps = fuse_plan_step_count(plan);
  ins[0] = in;
  outs[0] = got;
  memset(got, 0xff, out_n * sizeof *got); /* NaN: a missing write shows */
  r = fuse_run(plan, ins, outs, NULL);
  if (r != FUSE_OK) {
    printf("    fuse_run: %s\n", fuse_result_string(r));
    fuse_plan_destroy(plan);
    return -1;
  }
  err = runner_rel_error(got, want, out_n);
  if (ms_per_run) {
    double t0 = now_seconds(), t;
    int runs = 0;
    do {
      fuse_run(plan, ins, outs, NULL);
      runs++;
      t = now_seconds() - t0;
    } while (runs < 50 && t < 1.0);
    *ms_per_run = t * 1e3 / runs;
  }
  fuse_plan_destroy(plan);
  return err;
}

static const char *isa_name(fuse_isa isa) {
  switch (isa) {
  case FUSE_ISA_SCALAR: return "scalar";
  case FUSE_ISA_AVX2: return "avx2";
  case FUSE_ISA_AVX512: return "avx512";
  case FUSE_ISA_NEON: return "neon";
  default: return "auto";
  }
}

/* ------------------------------------------------------------------ the test -- */

static const char *net_dir;  /* the network runner_run is testing */
static const char *net_file;
static int net_all_isas;     /* committed networks: every kernel path */

static char *path_join(const char *dir, const char *file, const char *suffix) {
  size_t n = strlen(dir) + strlen(file) + strlen(suffix) + 2;
  char *p = (char *)malloc(n);
  if (p) snprintf(p, n, "%s/%s%s", dir, file, suffix);
  return p;
}

/* <stem>.input.bin, or for <stem>_bn the files of <stem>. */
static float *read_companion(const char *stem, const char *what, size_t *n) {
  char *path = path_join(net_dir, stem, what);
  float *data = path ? read_floats(path, n) : NULL;
  if (!data && ends_with(stem, "_bn")) {
    char *base = (char *)malloc(strlen(stem) + 1);
    if (base) {
      strcpy(base, stem);
      base[strlen(stem) - 3] = 0;
      free(path);
      path = path_join(net_dir, base, what);
      data = path ? read_floats(path, n) : NULL;
      free(base);
    }
  }
  if (!data) printf("  cannot read %s (nor the file of the model without _bn)\n", path ? path : stem);
  free(path);
  return data;
}

static size_t shape_numel(const fuse_graph *g, fuse_value v) {
  int i, rank = fuse_value_rank(g, v);
  const int64_t *shape = fuse_value_shape(g, v);
  size_t n = 1;
  if (rank < 0 || !shape) return 0;
  for (i = 0; i < rank; i++) n *= (size_t)shape[i];
  return n;
}

static void print_shape(const fuse_graph *g, fuse_value v) {
  int i, rank = fuse_value_rank(g, v);
  const int64_t *shape = fuse_value_shape(g, v);
  printf("[");
  for (i = 0; shape && i < rank; i++) printf("%s%lld", i ? "," : "", (long long)shape[i]);
  printf("]");
}

TEST(network) {
  char *path = path_join(net_dir, net_file, "");
  char *stem = NULL;
  float *in = NULL, *want = NULL, *got = NULL;
  size_t in_n = 0, want_n = 0;
  fuse_graph *g = NULL;
  fuse_result r;
  graph_stats before, after;
  int ops_before, ops_after, steps0 = 0, steps1 = 0;
  double e0, e1, ms0 = 0, ms1 = 0, t0;
  fuse_value x, y;

  CHECK(path != NULL);
  if (!path) return;
  stem = (char *)malloc(strlen(net_file) + 1);
  CHECK(stem != NULL);
  if (!stem) goto done;
  strcpy(stem, net_file);
  stem[strlen(stem) - 5] = 0; /* ".onnx" */
  printf("%s:\n", path);
  in = read_companion(stem, ".input.bin", &in_n);
  want = read_companion(stem, ".output.bin", &want_n);
  CHECK(in != NULL);
  CHECK(want != NULL);
  if (!in || !want) goto done;

  t0 = now_seconds();
  r = fuse_onnx_load_file(path, NULL, &g);
  if (r != FUSE_OK) printf("  fuse_onnx_load_file: %s: %s\n", fuse_result_string(r),
                           g ? fuse_graph_error(g) : "(no graph)");
  CHECK_EQ_INT(r, FUSE_OK);
  if (r != FUSE_OK || !g) goto done;
  CHECK_EQ_INT(fuse_graph_input_count(g), 1);
  CHECK_EQ_INT(fuse_graph_output_count(g), 1);
  if (fuse_graph_input_count(g) != 1 || fuse_graph_output_count(g) != 1) goto done;
  x = fuse_graph_input(g, 0);
  y = fuse_graph_output(g, 0);
  printf("  loaded in %.0f ms: input ", (now_seconds() - t0) * 1e3);
  print_shape(g, x);
  printf(" -> output ");
  print_shape(g, y);
  printf("\n");
  CHECK(shape_numel(g, x) == in_n);
  CHECK(shape_numel(g, y) == want_n);
  if (shape_numel(g, x) != in_n || shape_numel(g, y) != want_n) goto done;
  got = (float *)malloc(want_n * sizeof *got);
  CHECK(got != NULL);
  if (!got) goto done;

  /* as loaded */
  ops_before = fuse_graph_op_count(g);
  graph_stats_get(g, &before);
  CHECK(before.ok);
  printf("  as loaded: %d ops (", ops_before);
  print_kinds(before.ops, before.num_ops);
  printf(")\n");
  e0 = run_graph(g, FUSE_ISA_AUTO, in, want, got, want_n, &ms0, &steps0);
  CHECK(e0 >= 0);
  CHECK(e0 <= NET_TOL);

  /* optimized */
  r = fuse_optimize(g, "fuse");
  if (r != FUSE_OK) printf("  fuse_optimize: %s: %s\n", fuse_result_string(r), fuse_graph_error(g));
  CHECK_EQ_INT(r, FUSE_OK);
  if (r != FUSE_OK) goto done;
  ops_after = fuse_graph_op_count(g);
  graph_stats_get(g, &after);
  CHECK(after.ok);
  printf("  optimized: %d ops (composites count once), %d composites (", ops_after,
         fuse_composite_count(g));
  print_kinds(after.comps, after.num_comps);
  printf(")\n             ops inside and outside composites: ");
  print_kinds(after.ops, after.num_ops);
  printf("\n");
  CHECK_EQ_INT(after.top_batch_norm, 0);
  CHECK_EQ_INT(after.top_reductions, 0);
  CHECK(ops_after < ops_before);
  e1 = run_graph(g, FUSE_ISA_AUTO, in, want, got, want_n, &ms1, &steps1);
  CHECK(e1 >= 0);
  CHECK(e1 <= NET_TOL);
  printf("  relative error vs PyTorch: as loaded %.3g, optimized %.3g (tolerance %g)\n", e0, e1,
         NET_TOL);
  printf("  plan steps: as loaded %d, optimized %d\n", steps0, steps1);
  printf("  time per run (%s): as loaded %.3f ms, optimized %.3f ms\n",
         isa_name(fuse_cpu_isa()), ms0, ms1);

  if (net_all_isas) {
    static const fuse_isa isas[4] = {FUSE_ISA_SCALAR, FUSE_ISA_AVX2, FUSE_ISA_AVX512,
                                     FUSE_ISA_NEON};
    fuse_isa cpu = fuse_cpu_isa();
    int i;
    for (i = 0; i < 4; i++) {
      double e;
      if (isas[i] != FUSE_ISA_SCALAR && isas[i] != cpu &&
          !(isas[i] == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512))
        continue;
      e = run_graph(g, isas[i], in, want, got, want_n, NULL, NULL);
      printf("  optimized, isa %s: relative error %.3g\n", isa_name(isas[i]), e);
      CHECK(e >= 0);
      CHECK(e <= NET_TOL);
    }
  }

done:
  fuse_graph_destroy(g);
  free(got);
  free(in);
  free(want);
  free(stem);
  free(path);
}

/* Runs every network in dir; returns how many there were (-1: no directory). */
static int run_dir(const char *dir, int all_isas) {
  char **names;
  int i, n = list_onnx(dir, &names);
  if (n < 0) return -1;
  net_dir = dir;
  net_all_isas = all_isas;
  for (i = 0; i < n; i++) {
    net_file = names[i];
    runner_run(names[i], test_network);
    fflush(stdout);
  }
  free_list(names, n);
  return n;
}

static int committed_count;
TEST(committed_networks_present) { CHECK(committed_count > 0); }

/* A whole file's bytes (*n of them), or NULL; free() it. */
static unsigned char *read_file_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  long size;
  unsigned char *d = NULL;
  *n = 0;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (d = (unsigned char *)malloc((size_t)size)) != NULL) {
    if (fread(d, 1, (size_t)size, f) == (size_t)size) *n = (size_t)size;
    else free(d), d = NULL;
  }
  fclose(f);
  return d;
}

/* One plan's output for tinynet: loaded from its file (weights borrowed from the mapping) or
   from its bytes; optimized or not; with the stem's weights set to w (NULL: as they are). The
   graph is destroyed before the plan runs: the plan holds what it reads. 0: a step failed. */
static int tinynet_output(int from_file, int optimize, const float *w, float *out) {
  const char *path = "tests/data/onnx/tinynet.onnx";
  fuse_graph *g = NULL;
  fuse_plan *p = NULL;
  size_t in_n = 0, n = 0;
  float *in = read_floats("tests/data/onnx/tinynet.input.bin", &in_n);
  unsigned char *bytes = from_file ? NULL : read_file_bytes(path, &n);
  const float *ins[1];
  float *outs[1];
  int ok;
  ok = in && (from_file ? fuse_onnx_load_file(path, NULL, &g)
                        : fuse_onnx_load_memory(bytes, n, NULL, &g)) == FUSE_OK;
  ok = ok && (!w || fuse_graph_set_constant(g, "onnx::Conv_106", w, 16 * 3 * 3 * 3) == FUSE_OK);
  ok = ok && (!optimize || fuse_optimize(g, "fuse") == FUSE_OK);
  ok = ok && fuse_compile(g, NULL, &p) == FUSE_OK;
  fuse_graph_destroy(g);
  ins[0] = in;
  outs[0] = out;
  ok = ok && fuse_run(p, ins, outs, NULL) == FUSE_OK;
  fuse_plan_destroy(p);
  free(in);
  free(bytes);
  return ok;
}

/* fuse_onnx_load_file leaves the weights in the mapped file; the plans must compute exactly
   what they compute from weights copied out of the bytes (fuse_onnx_load_memory), also after
   fuse_graph_set_constant replaces a borrowed constant. */
TEST(weights_borrowed_from_the_file) {
  float a[100], b[100], w[16 * 3 * 3 * 3];
  int optimize, i;
  for (i = 0; i < 16 * 3 * 3 * 3; i++) w[i] = (float)(i % 7) * 0.05f - 0.15f;
  for (optimize = 0; optimize < 2; optimize++) {
    CHECK(tinynet_output(1, optimize, NULL, a));
    CHECK(tinynet_output(0, optimize, NULL, b));
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(tinynet_output(1, optimize, w, a));
    CHECK(tinynet_output(0, optimize, w, b));
    CHECK(memcmp(a, b, sizeof a) == 0);
  }
}

/* A batch norm that no conv2d can absorb (after a concat, on the graph input: densenet's
   pre-activations) is a per-channel multiply-add: no batch_norm step in the plan, the ReLU
   after it merged into its chain, and no layout conversion around it (the conv after it reads
   NHWC: one to_nhwc before the conv, one to_nchw after it). The model's output is checked
   against numpy by tests/test_zoo.c. */
TEST(batch_norm_after_concat_runs_nhwc) {
  fuse_graph *g = NULL;
  fuse_plan *p = NULL;
  text_buf t;
  memset(&t, 0, sizeof t);
  CHECK_EQ_INT(fuse_onnx_load_file("tests/data/zoo/fold_batch_norm_preact.onnx", NULL, &g),
               FUSE_OK);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
  if (p && fuse_plan_write(p, text_append, &t) == FUSE_OK && t.buf) {
    const char *c = t.buf;
    int to_nhwc = 0, to_nchw = 0;
    CHECK(strstr(t.buf, "batch_norm") == NULL);
    CHECK(strstr(t.buf, "chain(mul, add, relu)") != NULL);
    while ((c = strstr(c, "to_nhwc")) != NULL) to_nhwc++, c++;
    for (c = t.buf; (c = strstr(c, "to_nchw")) != NULL; c++) to_nchw++;
    CHECK(to_nhwc <= 1 && to_nchw <= 1);
  } else {
    CHECK(0);
  }
  free(t.buf);
  fuse_plan_destroy(p);
  fuse_graph_destroy(g);
}

int main(int argc, char **argv) {
  const char *committed = argc > 1 ? argv[1] : "tests/data/onnx";
  const char *models = argc > 2 ? argv[2] : "build/models";
  int n = run_dir(committed, 1);
  committed_count = n;
  RUN(weights_borrowed_from_the_file);
  RUN(batch_norm_after_concat_runs_nhwc);
  if (n <= 0) {
    printf("%s: %s - there must be at least one committed network\n", committed,
           n < 0 ? "cannot open the directory" : "no .onnx file");
    RUN(committed_networks_present);
  }
  if (NET_SANITIZED) {
    printf("%s: skipped under AddressSanitizer (too slow); run the -O2 build for them\n", models);
  } else {
    n = run_dir(models, 0);
    if (n < 0)
      printf("%s: not present (tools/export_torchvision.py writes it); only the committed "
             "networks ran\n", models);
    else
      printf("%s: %d network%s found\n", models, n, n == 1 ? "" : "s");
  }
  return runner_finish("networks");
}
