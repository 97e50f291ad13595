/* test_threads.c - one plan, several threads: the contract DESIGN.md makes for concurrency.

   A compiled plan is immutable; callers that each pass their own workspace may run it at
   the same time. With the committed network (tests/data/onnx/tinynet_bn.onnx, optimized:
   fused conv GEMMs on the best ISA, pools, matmul) this test checks:

     1. many_callers: 4 threads x 50 runs of one plan, each thread with its own 64-byte
        aligned workspace (filled with garbage first), each run on its own input (the
        network's input scaled per run); every output equals, bit for bit, the serial run of
        the same input made before the threads started. Every 5th run goes through
        fuse_run_steps in two halves instead of fuse_run.
     2. nested_threads: a plan compiled with a host parallel_for that runs each chunk on its
        own pthread (3 chunks), run by 3 caller threads at once (up to 9 threads): bit for bit
        the serial plan's outputs.
     3. independent_pipelines: 4 threads each load the model, optimize, compile and run it
        (no shared graph or plan; nothing global may be shared behind the caller's back), and
        also compile the same shared, const graph at the same time: every plan gives the same
        bytes.
     4. int8_chunks: the same as 2. for the network's QDQ form (tinynet_qdq.onnx), whose
        integer steps share their work among the chunks.
   Built with -fsanitize=thread by `make test-tsan` (with test_run.c and test_kernels.c),
   where any data race is a failure; in `make test` it checks the results only.

   Usage: build/test_threads   (run from the repository root) */
#define _POSIX_C_SOURCE 200809L
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define RUNS 50
#define OUT_N 100
#define IN_N (3 * 64 * 64)

static unsigned char *model;
static size_t model_size;
static float *base_input; /* the network's committed input */

static unsigned char *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  long size;
  unsigned char *d = NULL;
  *n = 0;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    d = (unsigned char *)malloc((size_t)size);
    if (d && fread(d, 1, (size_t)size, f) == (size_t)size) *n = (size_t)size;
    else {
      free(d);
      d = NULL;
    }
  }
  fclose(f);
  return d;
}

static float *read_floats(const char *path, size_t want) { /* little-endian float32 */
  size_t bytes, i;
  unsigned char *d = read_bytes(path, &bytes);
  float *f = NULL;
  if (d && bytes == want * 4 && (f = (float *)malloc(bytes)) != NULL)
    for (i = 0; i < want; i++) {
      uint32_t u = (uint32_t)d[4 * i] | (uint32_t)d[4 * i + 1] << 8 |
                   (uint32_t)d[4 * i + 2] << 16 | (uint32_t)d[4 * i + 3] << 24;
      memcpy(&f[i], &u, 4);
    }
  free(d);
  return f;
}

/* the optimized network, or NULL */
static fuse_graph *load_optimized(void) {
  fuse_graph *g = NULL;
  if (fuse_onnx_load_memory(model, model_size, NULL, &g) != FUSE_OK ||
      fuse_optimize(g, "fuse") != FUSE_OK || fuse_graph_input_count(g) != 1 ||
      fuse_graph_output_count(g) != 1) {
    fuse_graph_destroy(g);
    return NULL;
  }
  return g;
}

static void input_for(size_t k, float *x) { /* run k's input */
  size_t i;
  float s = 1.0f + (float)(k % 37) * 0.03f - (float)(k % 5) * 0.1f;
  for (i = 0; i < IN_N; i++) x[i] = base_input[i] * s + (float)((i + k) % 7) * 0.01f;
}

static void *aligned_block(size_t n, void **raw) {
  unsigned char *p = (unsigned char *)malloc(n + 64);
  *raw = p;
  if (!p) return NULL;
  p += (64 - (uintptr_t)p % 64) % 64;
  memset(p, 0xA5, n); /* garbage: nothing may be read before it is written */
  return p;
}

/* ---------------------------------------------------------------- many callers -- */

typedef struct caller {
  fuse_plan *p;
  const float *want; /* THREADS * RUNS serial outputs */
  int tid, first_run, runs, errors, mismatches;
} caller;

static void *caller_main(void *arg) {
  caller *c = (caller *)arg;
  float y[OUT_N], *x = (float *)malloc(IN_N * sizeof(float));
  void *raw;
  void *ws = aligned_block(fuse_plan_workspace_size(c->p), &raw);
  int i, steps = fuse_plan_step_count(c->p);
  if (!ws || !x) {
    c->errors++;
    free(raw);
    free(x);
    return NULL;
  }
  for (i = 0; i < c->runs; i++) {
    size_t k = (size_t)c->first_run + (size_t)i;
    const float *in[1];
    float *out[1];
    fuse_result r;
    input_for(k, x);
    in[0] = x;
    out[0] = y;
    if (i % 5 == 4) /* in two halves, the workspace carrying the values between them */
      r = fuse_run_steps(c->p, in, out, ws, 0, steps / 2) == FUSE_OK
              ? fuse_run_steps(c->p, in, out, ws, steps / 2, steps - steps / 2)
              : FUSE_ERROR_BACKEND;
    else
      r = fuse_run(c->p, in, out, ws);
    if (r != FUSE_OK) c->errors++;
    if (memcmp(y, c->want + k * OUT_N, sizeof y) != 0) c->mismatches++;
  }
  free(raw);
  free(x);
  return NULL;
}

/* Runs `threads` callers of p over runs [0, threads * RUNS) against want. */
static void run_callers(fuse_plan *p, const float *want, int threads) {
  caller c[THREADS];
  pthread_t th[THREADS];
  int t, started[THREADS];
  for (t = 0; t < threads; t++) {
    memset(&c[t], 0, sizeof c[t]);
    c[t].p = p;
    c[t].want = want;
    c[t].tid = t;
    c[t].first_run = t * RUNS;
    c[t].runs = RUNS;
  }
  for (t = 0; t < threads; t++) started[t] = pthread_create(&th[t], NULL, caller_main, &c[t]) == 0;
  for (t = 0; t < threads; t++) {
    CHECK(started[t]);
    if (started[t]) pthread_join(th[t], NULL);
    CHECK_EQ_INT(c[t].errors, 0);
    CHECK_EQ_INT(c[t].mismatches, 0);
  }
}

/* serial outputs of runs [0, n) through p */
static float *serial_outputs(fuse_plan *p, int n) {
  float *want = (float *)malloc((size_t)n * OUT_N * sizeof(float));
  float *x = (float *)malloc(IN_N * sizeof(float));
  int k;
  if (!want || !x) {
    free(want);
    free(x);
    return NULL;
  }
  for (k = 0; k < n; k++) {
    const float *in[1];
    float *out[1];
    input_for((size_t)k, x);
    in[0] = x;
    out[0] = want + (size_t)k * OUT_N;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
  }
  free(x);
  return want;
}

TEST(many_callers) {
  fuse_graph *g = load_optimized();
  fuse_plan *p = NULL;
  float *want;
  CHECK(g != NULL);
  if (!g) return;
  CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
  fuse_graph_destroy(g); /* the plan owns what it needs */
  if (!p) return;
  want = serial_outputs(p, THREADS * RUNS);
  if (want) run_callers(p, want, THREADS);
  printf("  many_callers: %d threads x %d runs of one plan (%d steps), own workspaces\n",
         THREADS, RUNS, fuse_plan_step_count(p));
  free(want);
  fuse_plan_destroy(p);
}

/* ------------------------------------------------------------- nested threads -- */

typedef struct job {
  fuse_task_fn task;
  void *ctx;
  int i;
} job;

static void *job_main(void *arg) {
  job *j = (job *)arg;
  j->task(j->ctx, j->i, j->i + 1);
  return NULL;
}

/* the host's job system: one pthread per chunk, joined before returning */
static void pthread_for(void *user, fuse_task_fn task, void *ctx, int n) {
  pthread_t th[16];
  job jobs[16];
  int i, made[16];
  (void)user;
  for (i = 0; i < n && i < 16; i++) {
    jobs[i].task = task;
    jobs[i].ctx = ctx;
    jobs[i].i = i;
    made[i] = pthread_create(&th[i], NULL, job_main, &jobs[i]) == 0;
    if (!made[i]) job_main(&jobs[i]);
  }
  for (i = 0; i < n && i < 16; i++)
    if (made[i]) pthread_join(th[i], NULL);
}

TEST(nested_threads) {
  fuse_graph *g = load_optimized();
  fuse_compile_options serial, par;
  fuse_plan *ps = NULL, *pp = NULL;
  float *want;
  CHECK(g != NULL);
  if (!g) return;
  memset(&serial, 0, sizeof serial);
  memset(&par, 0, sizeof par);
  par.parallel_for = pthread_for;
  par.num_threads = 3;
  CHECK_EQ_INT(fuse_compile(g, &serial, &ps), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, &par, &pp), FUSE_OK);
  fuse_graph_destroy(g);
  if (ps && pp) {
    /* chunks have their own packing buffers: the same bytes as the serial plan */
    want = serial_outputs(ps, 3 * RUNS);
    if (want) run_callers(pp, want, 3);
    free(want);
  }
  printf("  nested_threads: 3 callers of a plan cut into 3 chunks on pthreads\n");
  fuse_plan_destroy(ps);
  fuse_plan_destroy(pp);
}

/* ------------------------------------------------------ independent pipelines -- */

typedef struct pipeline {
  const fuse_graph *shared;
  float out_own[OUT_N], out_shared[OUT_N];
  int errors;
} pipeline;

static void *pipeline_main(void *arg) {
  pipeline *pl = (pipeline *)arg;
  int round;
  for (round = 0; round < 3; round++) {
    fuse_graph *g = load_optimized();
    fuse_plan *p = NULL, *q = NULL;
    const float *in[1];
    float *out[1];
    in[0] = base_input;
    if (!g || fuse_compile(g, NULL, &p) != FUSE_OK ||
        fuse_compile(pl->shared, NULL, &q) != FUSE_OK) { /* a const graph, read by all */
      pl->errors++;
    } else {
      out[0] = pl->out_own;
      if (fuse_run(p, in, out, NULL) != FUSE_OK) pl->errors++;
      out[0] = pl->out_shared;
      if (fuse_run(q, in, out, NULL) != FUSE_OK) pl->errors++;
    }
    fuse_plan_destroy(p);
    fuse_plan_destroy(q);
    fuse_graph_destroy(g);
  }
  return NULL;
}

TEST(independent_pipelines) {
  fuse_graph *shared = load_optimized();
  pipeline pl[THREADS];
  pthread_t th[THREADS];
  int t, started[THREADS];
  CHECK(shared != NULL);
  if (!shared) return;
  for (t = 0; t < THREADS; t++) {
    memset(&pl[t], 0, sizeof pl[t]);
    pl[t].shared = shared;
  }
  for (t = 0; t < THREADS; t++) started[t] = pthread_create(&th[t], NULL, pipeline_main, &pl[t]) == 0;
  for (t = 0; t < THREADS; t++) {
    CHECK(started[t]);
    if (started[t]) pthread_join(th[t], NULL);
    CHECK_EQ_INT(pl[t].errors, 0);
    CHECK(memcmp(pl[t].out_own, pl[0].out_own, sizeof pl[t].out_own) == 0);
    CHECK(memcmp(pl[t].out_shared, pl[0].out_own, sizeof pl[t].out_shared) == 0);
  }
  fuse_graph_destroy(shared);
}

/* ---------------------------------------------------------------- int8 chunks -- */

/* The QDQ form of the network (tinynet_qdq.onnx: its convs, adds and pools in integers, the
   conv tiles, depthwise, qadd and max pool rows cut among chunks) compiled with 3 chunks on
   pthreads and run by 3 callers at once: bit for bit the serial plan's outputs. */
TEST(int8_chunks) {
  size_t size = 0;
  unsigned char *qdq = read_bytes("tests/data/onnx/tinynet_qdq.onnx", &size);
  fuse_graph *g = NULL;
  fuse_compile_options serial, par;
  fuse_plan *ps = NULL, *pp = NULL;
  float *want;
  CHECK(qdq != NULL);
  if (!qdq) return;
  CHECK_EQ_INT(fuse_onnx_load_memory(qdq, size, NULL, &g), FUSE_OK);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  memset(&serial, 0, sizeof serial);
  memset(&par, 0, sizeof par);
  serial.num_threads = 1;
  par.parallel_for = pthread_for;
  par.num_threads = 3;
  CHECK_EQ_INT(fuse_compile(g, &serial, &ps), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, &par, &pp), FUSE_OK);
  fuse_graph_destroy(g);
  free(qdq);
  if (ps && pp) {
    want = serial_outputs(ps, 3 * RUNS);
    if (want) run_callers(pp, want, 3);
    free(want);
  }
  printf("  int8_chunks: 3 callers of an int8 plan cut into 3 chunks on pthreads\n");
  fuse_plan_destroy(ps);
  fuse_plan_destroy(pp);
}

int main(void) {
  model = read_bytes("tests/data/onnx/tinynet_bn.onnx", &model_size);
  base_input = read_floats("tests/data/onnx/tinynet.input.bin", IN_N);
  if (model && base_input) {
    RUN(many_callers);
    RUN(nested_threads);
    RUN(independent_pipelines);
    RUN(int8_chunks);
  } else {
    fprintf(stderr, "FAIL threads: tests/data/onnx/tinynet_bn.onnx or tinynet.input.bin missing\n");
    runner_failed++;
  }
  free(model);
  free(base_input);
  return runner_finish("threads");
}
