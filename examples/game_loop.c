/* game_loop.c - a network run across a game's frames: fuse_run_steps under a per-frame budget.

       game_loop [model.onnx] [--frames N] [--budget-ms X] [--threads N] [--pace] [--short]

   A game cannot stop for a network that takes longer than the time it can spare in a frame,
   so it runs the plan a few steps at a time. Each frame here first does the game's own work
   (a software render of a 320x180 framebuffer), then spends at most --budget-ms (default 2 ms
   of a 16.7 ms frame) on the network: fuse_run_steps(plan, inputs, outputs, workspace, first,
   count) runs the next steps whose costs fit in what is left of the budget (at least one step
   per frame, so an inference always progresses), and the next frame resumes where it stopped;
   the workspace, the caller's own, carries the values from one call to the next. The costs
   are each step's time alone at warm-up (fuse_run_steps(..., i, 1), the median of 5), scaled
   by a running factor of what the frames measure (caches the render evicted, clock, load).

   When the last step has run the result is ready: the two sets of output buffers swap (the
   game reads the finished result while the next inference writes the other set), and the next
   inference starts, in the same frame if its first step fits, on a new snapshot of the
   framebuffer copied into the input at its start: the network reads one picture however many
   frames it spans while the game keeps drawing (and at most one per frame: within a frame the
   picture does not change). The plan's threads are the host's: a job pool (job_pool.h) gives
   fuse_compile_options its parallel_for; the library runs no threads of its own.

   The network: by default built here in C, so it runs with no files: conv2d -> reshape(bias)
   -> add -> relu as PyTorch's importer writes it, eight times (3 -> 256 channels, two strided,
   a max pool after the fourth), then a global average pool, a matmul and its bias, on a
   1x3x128x128 image (3 GFLOP), the weights from a fixed seed; fuse_optimize(g, "fuse") makes
   each chain one fused step. Or an ONNX model (tests/data/onnx/tinynet_bn.onnx, say), fed
   from the framebuffer too.

   The check, which makes this a test: every inference spread across frames must give, bit for
   bit, what one plain fuse_run of the same plan (same threads) gives on the same snapshot;
   the exit status is 1 the first time one does not. The check runs between frames and is not
   counted in them (a game would not run it).

   Prints the plan's steps with their warm-up times, a line per frame for the first frames
   (steps run, network and render time, an inference finished), then the summary: frames,
   inferences completed, frames per inference and how many frames after its snapshot a result
   is ready, the budget against each frame's network time (mean, worst, how many frames went
   over and by how much, and how many of those had to run a step estimated above the whole
   budget), the render's time. --short prints the summary only. Nothing is allocated inside
   the frame loop.

   Options: --frames N (default 600, --short 60), --budget-ms X (default 2), --threads N (the
   job pool's threads including the caller; default 0 = the CPUs online), --pace (sleep to the
   next 60 Hz tick after each frame, as a game waiting for vsync does, so the CPUs idle between
   frames), --short. Exit status: 0 success, 1 a load, compile or run failure or a result that
   differs from fuse_run's, 2 bad command line.

   Build and run: make build/game_loop && ./build/game_loop   (or: cc -std=c99 -O2 -I.
   examples/game_loop.c -o game_loop -lm -lpthread) */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#endif
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "job_pool.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MS (1000.0 / 60.0) /* the frame the budget is a part of */
#define FB_W 320                 /* the framebuffer the game renders, RGB bytes */
#define FB_H 180
#define DISCS 64                 /* the sprites it draws */
#define MAX_IO 8                 /* inputs and outputs a model may have */
#define WARM_ROUNDS 5            /* warm-up inferences timed step by step (the median counts) */
#define SHOW_FRAMES 12           /* frames listed one by one (not with --short) */
#define SIZE 128                 /* the built-in network's image: 1x3xSIZExSIZE */
#define WIDTH 256                /* its widest layer */
#define CLASSES 10

typedef struct options {
  const char *model; /* NULL: the built-in network */
  long frames, threads;
  double budget_ms;
  int pace, short_report;
} options;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static float uniform(uint32_t *state) { /* xorshift32 -> [-1, 1) */
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return (float)((double)(*state >> 8) / 8388608.0 - 1.0);
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ------------------------------------------------------------------ the network -- */

/* conv2d 3x3 (padding 1) -> reshape(bias) -> add -> relu, the chain PyTorch's importer writes
   for Conv2d(bias=True) + ReLU; w is scratch for the weights (copied by fuse_constant). */
static fuse_value conv_bias_relu(fuse_graph *g, fuse_value x, int cin, int cout, int stride,
                                 int layer, uint32_t *rng, float *w) {
  const int64_t w_shape[4] = {cout, cin, 3, 3}, b_shape[1] = {cout}, b_4d[4] = {1, cout, 1, 1};
  const float scale = (float)sqrt(6.0 / (cin * 9.0)); /* He-uniform: activations keep their size */
  fuse_conv2d_attrs conv = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  float b[WIDTH];
  char w_name[32], b_name[32];
  fuse_value wv, bv, y, b4;
  int i;
  conv.strides[0] = conv.strides[1] = stride;
  for (i = 0; i < cout * cin * 9; i++) w[i] = uniform(rng) * scale;
  for (i = 0; i < cout; i++) b[i] = uniform(rng) * 0.1f;
  sprintf(w_name, "conv%d.weight", layer);
  sprintf(b_name, "conv%d.bias", layer);
  wv = fuse_constant(g, w_name, 4, w_shape, w);
  bv = fuse_constant(g, b_name, 1, b_shape, b);
  y = fuse_conv2d(g, x, wv, &conv);
  b4 = fuse_reshape(g, bv, 4, b_4d);
  return fuse_relu(g, fuse_add(g, y, b4));
}

/* The built-in network, about 3 GFLOP (1.5 G multiply-adds): eight conv + bias + relu layers,
   3 -> 256 channels, 128x128 -> 16x16 (two strided, a 2x2 max pool after the fourth), then a
   global average pool -> [1, 256] -> matmul [256, 10] + bias. NULL if out of memory. */
static fuse_graph *build_network(void) {
  static const struct {
    int cin, cout, stride, pool_after;
  } layers[] = {{3, 32, 1, 0},     {32, 64, 2, 0},    {64, 128, 1, 0},   {128, 128, 1, 1},
                {128, 128, 1, 0}, {128, 256, 2, 0}, {256, 256, 1, 0}, {256, 256, 1, 0}};
  const int64_t x_shape[4] = {1, 3, SIZE, SIZE}, fc_shape[2] = {WIDTH, CLASSES};
  const int64_t fcb_shape[1] = {CLASSES};
  fuse_pool2d_attrs halve = {{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0, 0}; /* 2x2 max pool */
  uint32_t rng = 2024u;
  fuse_graph *g = fuse_graph_create(NULL);
  float *w = (float *)malloc(WIDTH * WIDTH * 9 * sizeof(float));
  float fcb[CLASSES];
  fuse_value v;
  size_t l;
  int i;
  if (!g || !w) {
    fuse_graph_destroy(g);
    free(w);
    return NULL;
  }
  v = fuse_input(g, "image", 4, x_shape);
  for (l = 0; l < sizeof layers / sizeof layers[0]; l++) {
    v = conv_bias_relu(g, v, layers[l].cin, layers[l].cout, layers[l].stride, (int)l + 1, &rng, w);
    if (layers[l].pool_after) v = fuse_max_pool2d(g, v, &halve);
  }
  v = fuse_flatten(g, fuse_global_avg_pool2d(g, v), 1);
  for (i = 0; i < WIDTH * CLASSES; i++) w[i] = uniform(&rng) * 0.2f;
  for (i = 0; i < CLASSES; i++) fcb[i] = uniform(&rng) * 0.1f;
  v = fuse_add(g, fuse_matmul(g, v, fuse_constant(g, "fc.weight", 2, fc_shape, w)),
               fuse_constant(g, "fc.bias", 1, fcb_shape, fcb));
  fuse_output(g, v);
  free(w);
  return g;
}

/* ------------------------------------------------------------ the game's own work -- */

static int clamp(float v, int size) { /* a pixel coordinate inside [0, size) */
  return v < 0.0f ? 0 : v >= (float)(size - 1) ? size - 1 : (int)v;
}

/* A frame of the game: a scrolling background and DISCS shaded sprites on Lissajous paths,
   tinted by the class the last finished inference gave (the game reacting to the network). */
static void render(unsigned char *fb, long frame, int tint) {
  const float t = (float)frame * (1.0f / 60.0f);
  int d, x, y;
  for (y = 0; y < FB_H; y++) {
    unsigned char *row = fb + (size_t)y * FB_W * 3;
    for (x = 0; x < FB_W; x++) {
      row[3 * x + 0] = (unsigned char)((x + frame * 2) & 255);
      row[3 * x + 1] = (unsigned char)((y * 3 + frame) & 255);
      row[3 * x + 2] = (unsigned char)(((x ^ y) + tint * 25) & 255);
    }
  }
  for (d = 0; d < DISCS; d++) {
    const float cx = FB_W * (0.5f + 0.4f * sinf(t * (0.7f + 0.13f * (float)d) + (float)d));
    const float cy = FB_H * (0.5f + 0.4f * cosf(t * (0.5f + 0.11f * (float)d) + 2.0f * (float)d));
    const float r = 12.0f + (float)(d % 6) * 4.0f;
    const int x0 = clamp(cx - r, FB_W), x1 = clamp(cx + r, FB_W);
    const int y0 = clamp(cy - r, FB_H), y1 = clamp(cy + r, FB_H);
    for (y = y0; y <= y1; y++)
      for (x = x0; x <= x1; x++) {
        const float dx = (float)x - cx, dy = (float)y - cy;
        const float q = 1.0f - (dx * dx + dy * dy) / (r * r);
        unsigned char *p = fb + ((size_t)y * FB_W + (size_t)x) * 3;
        if (q > 0.0f) { /* a lit sphere: brighter toward the middle */
          const float light = sqrtf(q);
          p[0] = (unsigned char)(255.0f * light * (float)((d * 37) % 5 + 1) / 5.0f);
          p[1] = (unsigned char)(255.0f * light * (float)((d * 11 + tint) % 5 + 1) / 5.0f);
          p[2] = (unsigned char)(p[2] / 2 + (unsigned char)(100.0f * light));
        }
      }
  }
}

/* The network's input, copied from the framebuffer at the start of an inference: an image
   [N, C, H, W] samples it (channel c reads colour c % 3) scaled to [-1, 1]; an input of
   another rank takes its bytes in order. */
static void snapshot(const unsigned char *fb, float *x, int rank, const int64_t *dims) {
  if (rank == 4) {
    const int64_t n = dims[0], c = dims[1], h = dims[2], w = dims[3];
    int64_t in, ic, iy, ix;
    for (in = 0; in < n; in++)
      for (ic = 0; ic < c; ic++)
        for (iy = 0; iy < h; iy++) {
          const unsigned char *row = fb + (size_t)(iy * FB_H / h) * FB_W * 3 + (size_t)(ic % 3);
          for (ix = 0; ix < w; ix++)
            *x++ = (float)row[(size_t)(ix * FB_W / w) * 3] / 127.5f - 1.0f;
        }
  } else {
    int64_t count = 1, i;
    int k;
    for (k = 0; k < rank; k++) count *= dims[k];
    for (i = 0; i < count; i++) x[i] = (float)fb[i % (FB_W * FB_H * 3)] / 127.5f - 1.0f;
  }
}

static int argmax(const float *v, int64_t n) {
  int64_t i, best = 0;
  for (i = 1; i < n; i++)
    if (v[i] > v[best]) best = i;
  return (int)best;
}

/* "3-5" (or "3") appended to a frame's list of the steps it ran, comma-separated */
static size_t append_steps(char *list, size_t len, size_t cap, int first, int last) {
  char item[32];
  size_t n = first == last ? (size_t)sprintf(item, "%s%d", len ? "," : "", first)
                           : (size_t)sprintf(item, "%s%d-%d", len ? "," : "", first, last);
  if (first < 0 || len + n + 1 > cap) return len;
  memcpy(list + len, item, n + 1);
  return len + n;
}

/* --------------------------------------------------------------- command line -- */

static int usage(FILE *f) {
  fprintf(f,
          "usage: game_loop [model.onnx] [--frames N] [--budget-ms X] [--threads N] [--pace]\n"
          "                 [--short]\n"
          "  model.onnx      run this model (default: a conv net built in C, 1x3x128x128)\n"
          "  --frames N      frames to run (default 600; with --short 60)\n"
          "  --budget-ms X   the network's time per %.1f ms frame (default 2)\n"
          "  --threads N     the job pool's threads, the caller's included (0 = the CPUs online,\n"
          "                  the default)\n"
          "  --pace          sleep to the next 60 Hz tick after each frame (as with vsync)\n"
          "  --short         the summary only\n",
          FRAME_MS);
  return 2;
}

static int parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  long v;
  if (!s || !*s) return 0;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static int parse_options(int argc, char **argv, options *o) {
  int i, frames_given = 0;
  memset(o, 0, sizeof *o);
  o->frames = 600;
  o->budget_ms = 2.0;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--short") == 0) o->short_report = 1;
    else if (strcmp(a, "--pace") == 0) o->pace = 1;
    else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      exit(0);
    } else if (strcmp(a, "--frames") == 0 || strcmp(a, "--threads") == 0 ||
               strcmp(a, "--budget-ms") == 0) {
      const char *value = i + 1 < argc ? argv[++i] : NULL;
      if (strcmp(a, "--frames") == 0) {
        if (!parse_long(value, 1, 100000000L, &o->frames)) {
          fprintf(stderr, "game_loop: --frames expects a whole number from 1 up\n");
          return 0;
        }
        frames_given = 1;
      } else if (strcmp(a, "--threads") == 0) {
        if (!parse_long(value, 0, 64, &o->threads)) {
          fprintf(stderr, "game_loop: --threads expects a whole number from 0 to 64\n");
          return 0;
        }
      } else {
        char *end;
        o->budget_ms = value ? strtod(value, &end) : 0.0;
        if (!value || !*value || *end || !(o->budget_ms > 0.0 && o->budget_ms <= 1000.0)) {
          fprintf(stderr, "game_loop: --budget-ms expects milliseconds above 0, at most 1000\n");
          return 0;
        }
      }
    } else if (a[0] == '-' || o->model) {
      fprintf(stderr, "game_loop: unexpected argument '%s'\n", a);
      return 0;
    } else
      o->model = a;
  }
  if (o->short_report && !frames_given) o->frames = 60;
  if (o->threads == 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = online < 1 ? 1 : online > 64 ? 64 : online;
  }
  return 1;
}

/* fuse_plan_write's text, gathered before the loop to list the steps */
typedef struct text_buffer {
  char *data;
  size_t len, cap;
  int failed;
} text_buffer;

static void text_append(void *user, const char *text, size_t len) {
  text_buffer *b = (text_buffer *)user;
  if (b->failed) return;
  if (b->len + len + 1 > b->cap) {
    size_t cap = (b->len + len + 1) * 2;
    char *data = (char *)realloc(b->data, cap);
    if (!data) {
      b->failed = 1;
      return;
    }
    b->data = data;
    b->cap = cap;
  }
  memcpy(b->data + b->len, text, len);
  b->len += len;
  b->data[b->len] = '\0';
}

/* the text of step i's line of fuse_plan_write ("step 3: conv2d + bias ..."), without "step 3: " */
static const char *step_text(const char *listing, int i, int *len) {
  char head[32];
  const char *p = listing, *end;
  sprintf(head, "step %d: ", i);
  while (p && *p) {
    if (strncmp(p, head, strlen(head)) == 0) {
      p += strlen(head);
      end = strchr(p, '\n');
      *len = end ? (int)(end - p) : (int)strlen(p);
      return p;
    }
    p = strchr(p, '\n');
    if (p) p++;
  }
  *len = 0;
  return "";
}

/* ------------------------------------------------------------------------ main -- */

/* What the frames add up to, kept as running sums: the loop stores nothing per frame. */
typedef struct loop_stats {
  double infer_sum, infer_worst, render_sum, render_worst, over_sum, over_worst;
  long worst_frame, over, over_forced, over_worst_frame;
  long inferences, latency_min, latency_max, steps_run;
} loop_stats;

int main(int argc, char **argv) {
  options o;
  pool jobs;
  pool_worker *workers = NULL;
  fuse_compile_options copt;
  fuse_graph *g = NULL;
  fuse_plan *plan = NULL;
  fuse_result r;
  text_buffer listing = {NULL, 0, 0, 0};
  int n_in = 0, n_out = 0, n_steps, i, k, exit_code = 1;
  int in_rank[MAX_IO];
  int64_t in_dims[MAX_IO][FUSE_MAX_RANK], out_dims[FUSE_MAX_RANK], in_n[MAX_IO], out_n[MAX_IO];
  float *in[MAX_IO] = {NULL}, *out_a[MAX_IO] = {NULL}, *out_b[MAX_IO] = {NULL};
  float *ref[MAX_IO] = {NULL};
  float **pending = out_a, **ready = out_b; /* the inference writes pending; the game reads ready */
  unsigned char *fb = NULL;
  void *ws_block = NULL, *ws;
  size_t ws_size;
  double *cost = NULL, *samples = NULL; /* each step's warm-up time; the warm-up's times */
  double snapshot_cost, whole_ms = 0.0, sum_cost = 0.0, worst_cost = 0.0;
  loop_stats st;
  char error[512] = "";

  if (!parse_options(argc, argv, &o)) return usage(stderr);

  /* the host's job system: the library runs no threads of its own */
  if (o.threads > 1) workers = pool_start(&jobs, (int)o.threads);

  /* the network, fused and compiled */
  if (o.model) {
    r = fuse_onnx_load_file(o.model, NULL, &g);
    if (r != FUSE_OK) {
      fprintf(stderr, "game_loop: cannot load '%s': %s\n", o.model,
              g ? fuse_graph_error(g) : fuse_result_string(r));
      goto done;
    }
  } else if (!(g = build_network())) {
    fprintf(stderr, "game_loop: out of memory\n");
    goto done;
  }
  if (fuse_graph_status(g) != FUSE_OK || fuse_optimize(g, "fuse") != FUSE_OK) {
    fprintf(stderr, "game_loop: %s\n", fuse_graph_error(g));
    goto done;
  }
  memset(&copt, 0, sizeof copt);
  copt.num_threads = (int)o.threads;
  if (workers) copt.parallel_for = pool_parallel_for, copt.parallel_user = &jobs;
  copt.error = error;
  copt.error_size = sizeof error;
  r = fuse_compile(g, &copt, &plan);
  fuse_graph_destroy(g); /* the plan owns what it needs */
  g = NULL;
  if (r != FUSE_OK) {
    fprintf(stderr, "game_loop: fuse_compile failed: %s: %s\n", fuse_result_string(r), error);
    goto done;
  }
  n_steps = fuse_plan_step_count(plan);
  n_in = fuse_plan_input_count(plan);
  n_out = fuse_plan_output_count(plan);
  if (n_steps < 1 || n_in > MAX_IO || n_out < 1 || n_out > MAX_IO) {
    fprintf(stderr, "game_loop: the plan has %d steps, %d inputs and %d outputs: this example "
                    "needs a step, at most %d inputs and 1 to %d outputs\n",
            n_steps, n_in, n_out, MAX_IO, MAX_IO);
    goto done;
  }

  /* everything the loop uses, allocated before it: the snapshot inputs, two sets of outputs,
     the check's outputs, the framebuffer, the workspace (ours, 64-byte aligned: fuse_run_steps
     carries the values between frames in it), the steps' costs */
  for (i = 0; i < n_in; i++) {
    in_rank[i] = fuse_plan_input_shape(plan, i, in_dims[i]);
    for (in_n[i] = 1, k = 0; k < in_rank[i]; k++) in_n[i] *= in_dims[i][k];
    if (!(in[i] = (float *)malloc((size_t)in_n[i] * sizeof(float) + 1))) goto oom;
  }
  for (i = 0; i < n_out; i++) {
    int rank = fuse_plan_output_shape(plan, i, out_dims);
    for (out_n[i] = 1, k = 0; k < rank; k++) out_n[i] *= out_dims[k];
    out_a[i] = (float *)calloc((size_t)out_n[i] + 1, sizeof(float));
    out_b[i] = (float *)calloc((size_t)out_n[i] + 1, sizeof(float));
    ref[i] = (float *)calloc((size_t)out_n[i] + 1, sizeof(float));
    if (!out_a[i] || !out_b[i] || !ref[i]) goto oom;
  }
  fb = (unsigned char *)malloc((size_t)FB_W * FB_H * 3);
  ws_size = fuse_plan_workspace_size(plan);
  ws_block = malloc(ws_size + 64);
  cost = (double *)malloc((size_t)n_steps * sizeof *cost);
  samples = (double *)malloc((size_t)n_steps * WARM_ROUNDS * sizeof *samples);
  if (!fb || !ws_block || !cost || !samples) goto oom;
  ws = (void *)(((uintptr_t)ws_block + 63) & ~(uintptr_t)63);

  /* warm-up: the snapshot timed, two whole runs (the first touches every weight; the second
     is timed), then every step timed alone with fuse_run_steps(..., i, 1): the median of
     WARM_ROUNDS is the cost the frames plan with */
  render(fb, 0, 0);
  for (k = 0; k < WARM_ROUNDS; k++) {
    double t0 = now_ms();
    for (i = 0; i < n_in; i++) snapshot(fb, in[i], in_rank[i], in_dims[i]);
    samples[k] = now_ms() - t0;
  }
  qsort(samples, WARM_ROUNDS, sizeof *samples, compare_doubles);
  snapshot_cost = samples[WARM_ROUNDS / 2];
  for (k = 0; k < 2; k++) {
    double t0 = now_ms();
    if ((r = fuse_run(plan, (const float *const *)in, pending, ws)) != FUSE_OK) goto run_failed;
    whole_ms = now_ms() - t0;
  }
  for (k = 0; k < WARM_ROUNDS; k++)
    for (i = 0; i < n_steps; i++) {
      double t0 = now_ms();
      if ((r = fuse_run_steps(plan, (const float *const *)in, pending, ws, i, 1)) != FUSE_OK)
        goto run_failed;
      samples[(size_t)i * WARM_ROUNDS + (size_t)k] = now_ms() - t0;
    }
  for (i = 0; i < n_steps; i++) {
    qsort(samples + (size_t)i * WARM_ROUNDS, WARM_ROUNDS, sizeof *samples, compare_doubles);
    cost[i] = samples[(size_t)i * WARM_ROUNDS + WARM_ROUNDS / 2];
    sum_cost += cost[i];
    if (cost[i] > worst_cost) worst_cost = cost[i];
  }

  printf("network: %s, input", o.model ? o.model : "built in C (8 x conv2d + bias + relu, max "
                                                   "pool, global pool, matmul + bias)");
  for (i = 0; i < n_in; i++) {
    printf(" [");
    for (k = 0; k < in_rank[i]; k++) printf("%s%lld", k ? ", " : "", (long long)in_dims[i][k]);
    printf("]");
  }
  printf("\nplan: %d steps, workspace %.2f MiB, %ld thread%s%s\n", n_steps,
         (double)ws_size / (1024.0 * 1024.0), o.threads, o.threads == 1 ? "" : "s",
         workers ? " from a job pool's parallel_for" : "");
  printf("warm-up: an inference takes %.3f ms with fuse_run, %.3f ms as its steps alone (medians "
         "of %d), the largest %.3f ms\n",
         whole_ms, sum_cost, WARM_ROUNDS, worst_cost);
  if (!o.short_report) {
    fuse_plan_write(plan, text_append, &listing);
    for (i = 0; i < n_steps; i++) {
      int len;
      const char *text = step_text(listing.failed ? "" : listing.data, i, &len);
      printf("  step %2d %8.3f ms  %.*s\n", i, cost[i], len, text);
    }
  }
  printf("budget: %.2f ms of each %.1f ms frame for the network%s\n", o.budget_ms, FRAME_MS,
         worst_cost > o.budget_ms ? " (a step alone takes more: the frames that run it go over)"
                                  : "");

  /* the frame loop: nothing allocated from here to its end */
  {
    int next = 0;         /* the next step of the inference in flight */
    int in_flight = 0;    /* an inference has its snapshot and steps to run */
    long started = 0;     /* the frame the inference in flight took its snapshot in */
    long done_started = 0; /* the same, of the last inference finished */
    int shown_class = 0;  /* what the game shows: the last finished inference's argmax */
    double drift = 1.0;   /* the steps' time in the frames over their warm-up time */
    double next_tick = now_ms() + FRAME_MS;
    long f;
    memset(&st, 0, sizeof st);
    st.latency_min = -1;
    if (!o.short_report)
      printf("frame  steps            network ms  render ms\n");
    for (f = 0; f < o.frames; f++) {
      double spent = 0.0, t0, render_ms;
      int steps_now = 0, forced = 0, finished = 0, snapped = 0, seg_first = -1, seg_last = -2;
      char ran[64]; /* the steps this frame ran: "4-6" or "10-11,0-2" */
      size_t ran_len = 0;
      ran[0] = '\0';

      /* the game's own work */
      t0 = now_ms();
      render(fb, f, shown_class);
      render_ms = now_ms() - t0;

      /* the network's slice of the frame */
      for (;;) {
        double remaining = o.budget_ms - spent, warm = 0.0, took;
        int count = 0, first = in_flight ? next : 0;
        if (!in_flight) {
          if (snapped) break; /* one picture per frame: the next inference reads the next one */
          remaining -= snapshot_cost * drift; /* a new one starts with its snapshot */
        }
        /* as many consecutive steps as their measured costs fit in what is left */
        while (first + count < n_steps && (warm + cost[first + count]) * drift <= remaining)
          warm += cost[first + count++];
        if (count == 0) {
          if (steps_now > 0) break; /* the rest waits for the next frame */
          count = 1; /* at least one step per frame: the inference always progresses */
          warm = cost[first];
          forced = 1;
        }
        if (!in_flight) { /* a new inference reads a snapshot of the frame just drawn */
          t0 = now_ms();
          for (i = 0; i < n_in; i++) snapshot(fb, in[i], in_rank[i], in_dims[i]);
          spent += now_ms() - t0;
          in_flight = 1;
          next = 0;
          started = f;
          snapped = 1;
        }
        t0 = now_ms();
        r = fuse_run_steps(plan, (const float *const *)in, pending, ws, next, count);
        took = now_ms() - t0;
        if (r != FUSE_OK) goto run_failed;
        spent += took;
        /* the estimates follow what the frames measure: drift, a running average of the time
           steps take here over their warm-up time (caches the render evicted, the clock, other
           work on the machine), scales every cost. It rises fast and falls slowly: a frame
           over the budget costs the game more than a little of the budget left unused. */
        if (warm > 1e-6) {
          double ratio = took / warm;
          drift += (ratio > drift ? 0.5 : 0.05) * (ratio - drift);
        }
        drift = drift < 0.25 ? 0.25 : drift > 16.0 ? 16.0 : drift;
        if (next == seg_last + 1) seg_last = next + count - 1;
        else {
          ran_len = append_steps(ran, ran_len, sizeof ran, seg_first, seg_last);
          seg_first = next;
          seg_last = next + count - 1;
        }
        next += count;
        steps_now += count;
        if (next < n_steps) continue;

        /* the result is ready. The check (not part of the frame, not timed): bit for bit what
           one plain fuse_run of the plan gives on the same snapshot */
        if ((r = fuse_run(plan, (const float *const *)in, ref, NULL)) != FUSE_OK) goto run_failed;
        for (i = 0; i < n_out; i++)
          if (memcmp(ref[i], pending[i], (size_t)out_n[i] * sizeof(float)) != 0) {
            int64_t j = 0;
            while (memcmp(&ref[i][j], &pending[i][j], sizeof(float)) == 0) j++;
            fprintf(stderr, "game_loop: inference %ld (frames %ld-%ld): output %d differs from "
                            "fuse_run's at element %lld: %.9g, not %.9g\n",
                    st.inferences, started, f, i, (long long)j, (double)pending[i][j],
                    (double)ref[i][j]);
            goto done;
          }
        {
          float **swap = ready;
          ready = pending; /* the game reads it from the next frame on */
          pending = swap;
        }
        shown_class = argmax(ready[0], out_n[0]);
        if (st.latency_min < 0 || f - started + 1 < st.latency_min)
          st.latency_min = f - started + 1;
        if (f - started + 1 > st.latency_max) st.latency_max = f - started + 1;
        st.inferences++;
        finished++;
        done_started = started;
        in_flight = 0;
      }

      ran_len = append_steps(ran, ran_len, sizeof ran, seg_first, seg_last);
      st.steps_run += steps_now;
      st.infer_sum += spent;
      st.render_sum += render_ms;
      if (spent > st.infer_worst) st.infer_worst = spent, st.worst_frame = f;
      if (render_ms > st.render_worst) st.render_worst = render_ms;
      if (spent > o.budget_ms) {
        st.over++;
        st.over_forced += forced;
        st.over_sum += spent - o.budget_ms;
        if (spent - o.budget_ms > st.over_worst)
          st.over_worst = spent - o.budget_ms, st.over_worst_frame = f;
      }
      if (!o.short_report && f < SHOW_FRAMES) {
        printf("%5ld  %-16s %9.3f%s %9.3f", f, ran, spent, spent > o.budget_ms ? "!" : " ",
               render_ms);
        if (finished)
          printf("   inference %ld done (snapshot of frame %ld): class %d, equal to fuse_run's",
                 st.inferences - 1, done_started, shown_class);
        printf("\n");
      } else if (!o.short_report && f == SHOW_FRAMES)
        printf("  ... (%ld frames more; '!' marks a frame over the budget)\n", o.frames - f);
      if (o.pace) { /* sleep to the next tick, as a game waiting for vsync */
        double now = now_ms();
        if (next_tick > now) {
          struct timespec ts;
          double wait = next_tick - now;
          ts.tv_sec = (time_t)(wait / 1e3);
          ts.tv_nsec = (long)((wait - (double)ts.tv_sec * 1e3) * 1e6);
          nanosleep(&ts, NULL);
          next_tick += FRAME_MS;
        } else
          next_tick = now + FRAME_MS; /* late: the next frame starts now */
      }
    }
  }

  /* the summary */
  printf("%ld frames, %ld inferences completed: %.2f frames per inference (%.1f steps per "
         "frame),\n  each spanning %ld to %ld frames, its snapshot's to its result's\n",
         o.frames, st.inferences, st.inferences ? (double)o.frames / (double)st.inferences : 0.0,
         (double)st.steps_run / (double)o.frames, st.latency_min < 0 ? 0 : st.latency_min,
         st.latency_max);
  printf("network per frame: budget %.2f ms, mean %.3f ms, worst %.3f ms (frame %ld)\n",
         o.budget_ms, st.infer_sum / (double)o.frames, st.infer_worst, st.worst_frame);
  printf("  over the budget in %ld frame%s (%.1f%%)", st.over, st.over == 1 ? "" : "s",
         100.0 * (double)st.over / (double)o.frames);
  if (st.over)
    printf(", by %.3f ms at most (frame %ld), %.3f ms on average;\n  %ld of them ran a step "
           "estimated above the whole budget (at least one step a frame)",
           st.over_worst, st.over_worst_frame, st.over_sum / (double)st.over, st.over_forced);
  printf("\nrender per frame: mean %.3f ms, worst %.3f ms\n", st.render_sum / (double)o.frames,
         st.render_worst);
  printf("check: all %ld inferences bit for bit equal to fuse_run's on the same snapshot\n",
         st.inferences);
  exit_code = 0;
  goto done;

run_failed:
  fprintf(stderr, "game_loop: run failed: %s\n", fuse_result_string(r));
  goto done;
oom:
  fprintf(stderr, "game_loop: out of memory\n");
done:
  for (i = 0; i < MAX_IO; i++) {
    free(in[i]);
    free(out_a[i]);
    free(out_b[i]);
    free(ref[i]);
  }
  free(fb);
  free(ws_block);
  free(cost);
  free(samples);
  free(listing.data);
  fuse_plan_destroy(plan);
  fuse_graph_destroy(g);
  if (workers) pool_stop(&jobs, workers);
  return exit_code;
}
