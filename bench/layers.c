/* layers.c - the conv layer suite of the kernels issue: fuse.h against oneDNN and the peak.

   Each layer is conv2d + bias + relu (relu6 for depthwise; SiLU for EfficientNet's layers,
   hardswish for MobileNetV3's, written as PyTorch exports them), batch 1, FP32, shapes from
   resnet18 / resnet50 / mobilenet_v2 plus awkward ones (3-channel stems, stride 2, channel
   counts that are not a multiple of 16, odd sizes). For each layer, in one process:

     fuse.h     fuse_optimize + fuse_compile with isa auto (the best this CPU has), avx2 and
                scalar; fuse_run timed with NCHW input and output (the plan's own workspace).
                On AVX-512 / AVX2 the conv runs on NHWC, so this time includes the plan's
                layout conversions (steps to_nhwc before the conv, to_nchw after it)
     conv step  the conv step of the isa-auto fused plan alone: after one full fuse_run (the
                workspace then holds the converted input), fuse_run_steps(plan, in, out, NULL,
                k, 1) for the index k of the conv step, timed the same way - the number to hold
                against oneDNN, whose time excludes its reorders too. Afterwards the steps
                behind it run once and the output is checked like the others
     unfused    the same graph without fuse_optimize (conv, then the bias add, then relu),
                isa auto
     oneDNN     its C API: convolution (direct) + bias + an eltwise post-op (relu, or clip
                [0, 6]), format_tag any = its preferred layout; the input is reordered to that
                layout once, outside the timing; only the primitive's execution is timed
     via dnnl   the same layer graph through fuse.h routed to oneDNN: fuse_optimize(g, "dnnl"),
                fuse_compile with fuse_dnnl_backend(), fuse_run with NCHW input and output
                (so its time includes the reorders NCHW -> oneDNN's layout -> NCHW and
                fuse_run's own overhead): next to the oneDNN column, the cost of routing
     peak       this core's FMA peak (bench/peak.h), AVX-512 and AVX2

   Outputs are checked before timing, as normwise relative errors ||a - b|| / ||b|| <= 1e-3:
   oneDNN (reordered back to NCHW) against the fused plan of the first column, and every fuse.h
   plan (and the conv step followed by the rest of its plan) against fuse.h's scalar fused plan;
   via dnnl against the fused plan of the first column, as oneDNN.
   A layer that fails is marked MISMATCH (it is still timed) and the program exits with
   status 1.

   Times are medians of single runs; each measurement repeats for about --budget seconds
   (0.3 by default; the scalar plans get 0.1 s, so their slow layers run once, and that one
   run is also the warm-up - the runs columns of the CSV say how many). GFLOP counts 2 *
   multiply-adds of the convolution only. The CSV also keeps each fastest run
   (*_best_gflops). On a busy machine every median drops with the load (the peak's too, it is
   measured the same way); the ratio of two medians taken side by side is the number to track.

   Threads: --threads N (1 by default) for both. fuse.h gets num_threads = N and, for N > 1,
   a small pthread parallel_for (bench/pool.h); oneDNN (OpenMP) gets omp_set_num_threads(N).

   Steps: "(not fused)" marks a layer whose fused plan has more than one compute step; the
   layout conversions do not count (CSV fused_steps / unfused_steps count compute steps too;
   conv_step is k, -1 when the plan has no conv2d step).

   Output: a markdown table on stdout (also bench/results/layers.md), a CSV
   (bench/results/layers.csv: per column fuse, fuse_avx2, fuse_scalar, fuse_unfused, onednn,
   fuse_conv_step, fuse_via_dnnl the fields _ms, _gflops, _best_gflops, _runs, _relerr;
   ratio_fuse_onednn, ratio_conv_step_onednn and ratio_via_dnnl_onednn as oneDNN time / the
   other's time) and a gnuplot chart
   (bench/results/layers.png).

   Build: cc -O2 -I. bench/layers.c -lm -lpthread                        (no oneDNN column)
          cc -O2 -I. -DBENCH_DNNL=1 bench/layers.c -ldnnl -ldl -lm -lpthread
   Run:   ./layers [--threads N] [--budget S] [--quick] [--filter TEXT] [--isa avx2]
                   [--out DIR] [--no-png] [--verbose] [--no-winograd] [--in-network]
   --no-winograd compiles every plan with fuse_compile_options.no_winograd = 1 (3x3 stride-1
   convs on the direct kernels). Whatever it says, each 3x3 stride-1 layer's conv step is also
   timed on the direct kernels and as Winograd, in a table of its own.
   --isa avx2 compares fuse.h's AVX2 plans with oneDNN limited to AVX2 (dnnl_set_max_cpu_isa,
   as DNNL_MAX_CPU_ISA=AVX2 does) and writes layers_avx2.{md,csv,png}. --in-network puts a clip
   before the conv, so fuse.h's plan runs it as inside a network (NHWC kernels, conversions
   around it; compare the conv step column) and writes layers[_avx2]_net.{md,csv,png}. */
#define _GNU_SOURCE
#define FUSE_IMPLEMENTATION
#include "fuse.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/peak.h"
#include "bench/pool.h"

#ifndef BENCH_DNNL
#define BENCH_DNNL 0
#endif
#if BENCH_DNNL
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#else
#define FUSE_DNNL_AVAILABLE 0 /* no -ldnnl: fuse_dnnl_backend() is NULL */
#endif
#include "fuse_dnnl.h"

#define TOLERANCE 1e-3

/* ------------------------------------------------------------------- layers -- */

typedef struct layer {
  const char *name;
  int c, hw, k, ksize, stride, pad, groups, post; /* post: one of the P_* below */
} layer;
enum { P_RELU, P_RELU6, P_SILU, P_HARDSWISH };
static const char *const POST_NAMES[] = {"relu", "relu6", "silu", "hardswish"};

/* clang-format off */
static const layer LAYERS[] = {
    /* name                          C   H=W     K  KxK  s  pad groups post */
    {"r18 conv1 7x7s2 3>64 @224",     3, 224,   64, 7, 2, 3, 1, 0},
    {"r18 3x3 64>64 @56",            64,  56,   64, 3, 1, 1, 1, 0},
    {"r18 3x3s2 64>128 @56",         64,  56,  128, 3, 2, 1, 1, 0},
    {"r18 3x3 128>128 @28",         128,  28,  128, 3, 1, 1, 1, 0},
    {"r18 3x3 256>256 @14",         256,  14,  256, 3, 1, 1, 1, 0},
    {"r18 3x3 512>512 @7",          512,   7,  512, 3, 1, 1, 1, 0},
    {"r50 1x1 256>64 @56",          256,  56,   64, 1, 1, 0, 1, 0},
    {"r50 1x1 64>256 @56",           64,  56,  256, 1, 1, 0, 1, 0},
    {"r50 1x1 1024>256 @14",       1024,  14,  256, 1, 1, 0, 1, 0},
    {"r50 1x1s2 512>1024 @28",      512,  28, 1024, 1, 2, 0, 1, 0},
    {"mv2 conv1 3x3s2 3>32 @224",     3, 224,   32, 3, 2, 1, 1, 0},
    {"mv2 1x1 16>96 @112",           16, 112,   96, 1, 1, 0, 1, 0},
    {"mv2 1x1 144>24 @56",          144,  56,   24, 1, 1, 0, 1, 0},
    {"mv2 1x1 960>160 @7",          960,   7,  160, 1, 1, 0, 1, 0},
    {"mv2 dw3x3 32 @112 relu6",      32, 112,   32, 3, 1, 1, 32, 1},
    {"mv2 dw3x3s2 96 @112 relu6",    96, 112,   96, 3, 2, 1, 96, 1},
    {"mv2 dw3x3 144 @56 relu6",     144,  56,  144, 3, 1, 1, 144, 1},
    {"mv2 dw3x3 576 @14 relu6",     576,  14,  576, 3, 1, 1, 576, 1},
    {"eb0 1x1 16>96 @112 silu",      16, 112,   96, 1, 1, 0, 1, P_SILU},
    {"eb0 dw3x3s2 96 @112 silu",     96, 112,   96, 3, 2, 1, 96, P_SILU},
    {"eb0 1x1 40>240 @28 silu",      40,  28,  240, 1, 1, 0, 1, P_SILU},
    {"eb0 dw5x5 480 @14 silu",      480,  14,  480, 5, 1, 2, 480, P_SILU},
    {"mv3 conv1 3x3s2 3>16 @224 hsw", 3, 224,   16, 3, 2, 1, 1, P_HARDSWISH},
    {"mv3 1x1 40>240 @28 hswish",    40,  28,  240, 1, 1, 0, 1, P_HARDSWISH},
    {"mv3 dw5x5 240 @14 hswish",    240,  14,  240, 5, 1, 2, 240, P_HARDSWISH},
    {"odd 3x3 24>40 @56",            24,  56,   40, 3, 1, 1, 1, 0},
    {"odd 3x3s2 40>72 @57",          40,  57,   72, 3, 2, 1, 1, 0},
    {"odd 1x1 100>36 @30",          100,  30,   36, 1, 1, 0, 1, 0},
    /* the 3x3 stride-1 layers Winograd takes (resnet50's are resnet18's four shapes above) */
    {"vgg16 3x3 64>64 @224",         64, 224,   64, 3, 1, 1, 1, 0},
    {"vgg16 3x3 128>128 @112",      128, 112,  128, 3, 1, 1, 1, 0},
    {"vgg16 3x3 256>256 @56",       256,  56,  256, 3, 1, 1, 1, 0},
    {"vgg16 3x3 512>512 @28",       512,  28,  512, 3, 1, 1, 1, 0},
    {"rx50 3x3 128>128 g32 @56",    128,  56,  128, 3, 1, 1, 32, 0},
    {"rx50 3x3s2 256>256 g32 @56",  256,  56,  256, 3, 2, 1, 32, 0},
    {"rx50 3x3 256>256 g32 @28",    256,  28,  256, 3, 1, 1, 32, 0},
    {"rx50 3x3 512>512 g32 @14",    512,  14,  512, 3, 1, 1, 32, 0},
    {"rx50 3x3 1024>1024 g32 @7",  1024,   7, 1024, 3, 1, 1, 32, 0},
    {"rgy 3x3s2 48>48 g6 @112",      48, 112,   48, 3, 2, 1, 6, 0},
    {"rgy 3x3 48>48 g6 @56",         48,  56,   48, 3, 1, 1, 6, 0},
    {"rgy 3x3s2 104>104 g13 @56",   104,  56,  104, 3, 2, 1, 13, 0},
    {"rgy 3x3 104>104 g13 @28",     104,  28,  104, 3, 1, 1, 13, 0},
    {"rgy 3x3 208>208 g26 @14",     208,  14,  208, 3, 1, 1, 26, 0},
    {"rgy 3x3 440>440 g55 @7",      440,   7,  440, 3, 1, 1, 55, 0},
};
/* clang-format on */
#define NUM_LAYERS ((int)(sizeof LAYERS / sizeof LAYERS[0]))

static int out_hw(const layer *L) { return (L->hw + 2 * L->pad - L->ksize) / L->stride + 1; }
static size_t in_count(const layer *L) { return (size_t)L->c * (size_t)L->hw * (size_t)L->hw; }
static size_t out_count(const layer *L) {
  return (size_t)L->k * (size_t)out_hw(L) * (size_t)out_hw(L);
}
static size_t w_count(const layer *L) {
  return (size_t)L->k * (size_t)(L->c / L->groups) * (size_t)L->ksize * (size_t)L->ksize;
}
static double layer_gflop(const layer *L) {
  return 2.0 * (double)out_count(L) * (double)(L->c / L->groups) * L->ksize * L->ksize * 1e-9;
}

/* ------------------------------------------------------------------ helpers -- */

static void die(const char *what, const char *why) {
  fprintf(stderr, "layers: %s: %s\n", what, why);
  exit(2);
}

static float *alloc_floats(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, (n ? n : 1) * sizeof(float)) != 0)
    die("alloc", "out of memory");
  return (float *)p;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static float frand(void) { /* uniform in [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (float)((double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* normwise relative error ||got - want|| / ||want|| */
static double rel_error(const float *got, const float *want, size_t n) {
  double num = 0, den = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double d = (double)got[i] - (double)want[i];
    num += d * d;
    den += (double)want[i] * (double)want[i];
  }
  if (num != num)
    return INFINITY; /* NaN somewhere */
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

typedef void (*run_fn)(void *ctx);

/* One measurement: a warm-up run, then as many single runs as fit in budget seconds (at
   most 10000); returns the median in seconds, *runs = how many were timed, *best the fastest. When
   the warm-up run alone took the budget (slow scalar plans), it is the one measurement. */
static double measure(run_fn fn, void *ctx, double budget, int *runs, double *best) {
  double t0 = now_s(), first, *t, med;
  int n, i;
  fn(ctx);
  first = now_s() - t0;
  if (first >= budget) {
    *runs = 1;
    *best = first;
    return first;
  }
  n = first > 0 ? (int)(budget / first) : 10000;
  if (n < 1)
    n = 1;
  if (n > 10000)
    n = 10000;
  t = (double *)malloc((size_t)n * sizeof *t);
  if (!t)
    die("measure", "out of memory");
  for (i = 0; i < n; i++) {
    t0 = now_s();
    fn(ctx);
    t[i] = now_s() - t0;
  }
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  *best = t[0];
  free(t);
  *runs = n;
  return med;
}

/* the pthread parallel_for for --threads N > 1 and plan_steps: bench/pool.h */

/* ------------------------------------------------------------------- fuse.h -- */

typedef struct fuse_case {
  fuse_plan *plan;
  const float *in;
  float *out;
  int step; /* run_fuse_step: the step it runs */
} fuse_case;

static void run_fuse(void *ctx) {
  fuse_case *c = (fuse_case *)ctx;
  const float *ins[1];
  float *outs[1];
  fuse_result r;
  ins[0] = c->in;
  outs[0] = c->out;
  r = fuse_run(c->plan, ins, outs, NULL);
  if (r != FUSE_OK)
    die("fuse_run", fuse_result_string(r));
}

/* the conv step alone, on the plan's own workspace (a full fuse_run before the first call
   leaves the converted input there) */
static void run_fuse_step(void *ctx) {
  fuse_case *c = (fuse_case *)ctx;
  const float *ins[1];
  float *outs[1];
  fuse_result r;
  ins[0] = c->in;
  outs[0] = c->out;
  r = fuse_run_steps(c->plan, ins, outs, NULL, c->step, 1);
  if (r != FUSE_OK)
    die("fuse_run_steps", fuse_result_string(r));
}

/* --in-network: the conv reads another op's output (clip to +-FLT_MAX), as every conv but a
   network's first does, so the plan runs it on the NHWC kernels a network uses; alone on the
   graph input a plan may take the NCHW kernels (the few-channel stem kernel, the NCHW GEMM).
   A depthwise conv takes the layout of its input, NHWC in a network between 1x1 convs: there
   it reads the output of a 1x1 conv of identity weights (x exactly), and its conv step is the
   plan's last conv2d step (the whole-plan columns then hold the 1x1 conv as well). */
static int in_network = 0;

static int is_depthwise(const layer *L) { return L->groups > 1 && L->groups == L->c && L->c == L->k; }

/* conv2d -> add(reshape(bias)) -> relu or clip(0, 6) */
static fuse_graph *build_graph(const layer *L, const float *w, const float *b) {
  int64_t xs[4], ws[4], bs[1], rs[4];
  fuse_conv2d_attrs a;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x, y;
  if (!g)
    die("fuse_graph_create", "out of memory");
  xs[0] = 1, xs[1] = L->c, xs[2] = L->hw, xs[3] = L->hw;
  ws[0] = L->k, ws[1] = L->c / L->groups, ws[2] = L->ksize, ws[3] = L->ksize;
  bs[0] = L->k;
  rs[0] = 1, rs[1] = L->k, rs[2] = 1, rs[3] = 1;
  memset(&a, 0, sizeof a);
  a.strides[0] = a.strides[1] = L->stride;
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = L->pad;
  a.groups = L->groups;
  x = fuse_input(g, "x", 4, xs);
  if (in_network && is_depthwise(L)) {
    int64_t is[4], c;
    float *eye = (float *)calloc((size_t)(L->c * L->c), sizeof(float));
    fuse_conv2d_attrs one;
    if (!eye)
      die("build", "out of memory");
    for (c = 0; c < L->c; c++)
      eye[c * L->c + c] = 1.0f;
    is[0] = is[1] = L->c, is[2] = is[3] = 1;
    memset(&one, 0, sizeof one);
    one.strides[0] = one.strides[1] = one.groups = 1;
    x = fuse_conv2d(g, x, fuse_constant(g, "eye", 4, is, eye), &one);
    free(eye);
  } else if (in_network)
    x = fuse_clip(g, x, -FLT_MAX, FLT_MAX);
  y = fuse_conv2d(g, x, fuse_constant(g, "w", 4, ws, w), &a);
  y = fuse_add(g, y, fuse_reshape(g, fuse_constant(g, "b", 1, bs, b), 4, rs));
  switch (L->post) {
  case P_RELU6: y = fuse_clip(g, y, 0.0f, 6.0f); break;
  case P_SILU: y = fuse_mul(g, y, fuse_sigmoid(g, y)); break; /* as PyTorch exports SiLU */
  case P_HARDSWISH: y = fuse_hardswish(g, y); break;
  default: y = fuse_relu(g, y); break;
  }
  fuse_output(g, y);
  if (fuse_graph_status(g) != FUSE_OK)
    die("build", fuse_graph_error(g));
  return g;
}

static void write_stdout(void *user, const char *text, size_t len) {
  (void)user;
  fwrite(text, 1, len, stdout);
}

/* --no-winograd: every plan on the direct kernels (fuse_compile_options.no_winograd = 1) */
static int no_winograd;

static fuse_plan *compile_plan_nw(const fuse_graph *g, fuse_isa isa, int threads, pool *workers,
                                  int nw, char *err, size_t err_size) {
  fuse_compile_options o;
  memset(&o, 0, sizeof o);
  o.isa = isa;
  o.no_winograd = nw;
  return pool_compile(g, &o, threads, workers, err, err_size);
}

static fuse_plan *compile_plan(const fuse_graph *g, fuse_isa isa, int threads, pool *workers,
                               char *err, size_t err_size) {
  return compile_plan_nw(g, isa, threads, workers, no_winograd, err, err_size);
}

/* A 3x3 stride-1 conv (not depthwise): the layers Winograd can take. */
static int winograd_layer(const layer *L) {
  return L->ksize == 3 && L->stride == 1 && L->groups < L->c;
}

/* ------------------------------------------------------------------- oneDNN -- */

#if BENCH_DNNL
typedef struct bd_case {
  dnnl_engine_t eng;
  dnnl_stream_t stream;
  dnnl_primitive_t conv;
  dnnl_memory_t src, wei, bias, dst;
  const char *impl;
} bd_case;

static void bd_check(dnnl_status_t s, const char *what) {
  if (s != dnnl_success) {
    char buf[64];
    snprintf(buf, sizeof buf, "status %d", (int)s);
    die(what, buf);
  }
}

static void bd_run_conv(void *ctx) {
  bd_case *c = (bd_case *)ctx;
  dnnl_exec_arg_t args[4];
  args[0].arg = DNNL_ARG_SRC, args[0].memory = c->src;
  args[1].arg = DNNL_ARG_WEIGHTS, args[1].memory = c->wei;
  args[2].arg = DNNL_ARG_BIAS, args[2].memory = c->bias;
  args[3].arg = DNNL_ARG_DST, args[3].memory = c->dst;
  bd_check(dnnl_primitive_execute(c->conv, c->stream, 4, args), "dnnl execute");
  bd_check(dnnl_stream_wait(c->stream), "dnnl stream wait");
}

/* copies between a user buffer in layout `user` and a memory object in its own layout */
static void bd_reorder(dnnl_engine_t eng, dnnl_stream_t stream, dnnl_memory_t mem,
                       const dnnl_memory_desc_t *user_md, float *user, int to_mem) {
  const dnnl_memory_desc_t *mem_md;
  dnnl_memory_t umem;
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t r;
  dnnl_exec_arg_t args[2];
  bd_check(dnnl_memory_get_memory_desc(mem, &mem_md), "dnnl memory desc");
  bd_check(dnnl_memory_create(&umem, user_md, eng, user), "dnnl memory");
  if (to_mem)
    bd_check(dnnl_reorder_primitive_desc_create(&rpd, user_md, eng, mem_md, eng, NULL), "reorder");
  else
    bd_check(dnnl_reorder_primitive_desc_create(&rpd, mem_md, eng, user_md, eng, NULL), "reorder");
  bd_check(dnnl_primitive_create(&r, rpd), "dnnl reorder");
  args[0].arg = DNNL_ARG_FROM, args[0].memory = to_mem ? umem : mem;
  args[1].arg = DNNL_ARG_TO, args[1].memory = to_mem ? mem : umem;
  bd_check(dnnl_primitive_execute(r, stream, 2, args), "dnnl reorder execute");
  bd_check(dnnl_stream_wait(stream), "dnnl stream wait");
  dnnl_primitive_destroy(r);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_memory_destroy(umem);
}

static void bd_setup(bd_case *c, const layer *L, float *x, float *w, float *b) {
  dnnl_dims_t src_d, dst_d, bias_d, wei_d, strides, dil, pad;
  dnnl_memory_desc_t src_md, wei_md, bias_md, dst_md, user_src, user_wei, user_bias;
  dnnl_convolution_desc_t desc;
  dnnl_post_ops_t po;
  dnnl_primitive_attr_t attr;
  dnnl_primitive_desc_t pd;
  int g = L->groups, oh = out_hw(L);
  src_d[0] = 1, src_d[1] = L->c, src_d[2] = L->hw, src_d[3] = L->hw;
  dst_d[0] = 1, dst_d[1] = L->k, dst_d[2] = oh, dst_d[3] = oh;
  bias_d[0] = L->k;
  strides[0] = strides[1] = L->stride;
  dil[0] = dil[1] = 0; /* oneDNN counts dilation from 0 */
  pad[0] = pad[1] = L->pad;
  bd_check(dnnl_memory_desc_init_by_tag(&src_md, 4, src_d, dnnl_f32, dnnl_format_tag_any), "md");
  bd_check(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_d, dnnl_f32, dnnl_format_tag_any), "md");
  bd_check(dnnl_memory_desc_init_by_tag(&bias_md, 1, bias_d, dnnl_f32, dnnl_format_tag_any), "md");
  bd_check(dnnl_memory_desc_init_by_tag(&user_src, 4, src_d, dnnl_f32, dnnl_nchw), "md");
  bd_check(dnnl_memory_desc_init_by_tag(&user_bias, 1, bias_d, dnnl_f32, dnnl_x), "md");
  if (g == 1) {
    wei_d[0] = L->k, wei_d[1] = L->c, wei_d[2] = L->ksize, wei_d[3] = L->ksize;
    bd_check(dnnl_memory_desc_init_by_tag(&wei_md, 4, wei_d, dnnl_f32, dnnl_format_tag_any), "md");
    bd_check(dnnl_memory_desc_init_by_tag(&user_wei, 4, wei_d, dnnl_f32, dnnl_oihw), "md");
  } else {
    wei_d[0] = g, wei_d[1] = L->k / g, wei_d[2] = L->c / g, wei_d[3] = L->ksize,
    wei_d[4] = L->ksize;
    bd_check(dnnl_memory_desc_init_by_tag(&wei_md, 5, wei_d, dnnl_f32, dnnl_format_tag_any), "md");
    bd_check(dnnl_memory_desc_init_by_tag(&user_wei, 5, wei_d, dnnl_f32, dnnl_goihw), "md");
  }
  bd_check(dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference,
                                                      dnnl_convolution_direct, &src_md, &wei_md,
                                                      &bias_md, &dst_md, strides, dil, pad, pad),
           "dnnl convolution desc");
  bd_check(dnnl_post_ops_create(&po), "dnnl post ops");
  if (L->post == P_RELU6)
    bd_check(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f, 6.0f), "post op");
  else if (L->post == P_SILU)
    bd_check(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_swish, 1.0f, 0.0f), "post op");
  else if (L->post == P_HARDSWISH)
    bd_check(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_hardswish, 0.0f, 0.0f), "post op");
  else
    bd_check(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f), "post op");
  bd_check(dnnl_primitive_attr_create(&attr), "dnnl attr");
  bd_check(dnnl_primitive_attr_set_post_ops(attr, po), "dnnl attr post ops");
  bd_check(dnnl_primitive_desc_create(&pd, &desc, attr, c->eng, NULL), "dnnl convolution pd");
  bd_check(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &c->impl), "dnnl impl");
  c->impl = strdup(c->impl ? c->impl : "?");
  bd_check(dnnl_memory_create(&c->src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                              c->eng, DNNL_MEMORY_ALLOCATE),
           "dnnl memory");
  bd_check(dnnl_memory_create(&c->wei, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                              c->eng, DNNL_MEMORY_ALLOCATE),
           "dnnl memory");
  bd_check(dnnl_memory_create(&c->bias, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1),
                              c->eng, DNNL_MEMORY_ALLOCATE),
           "dnnl memory");
  bd_check(dnnl_memory_create(&c->dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                              c->eng, DNNL_MEMORY_ALLOCATE),
           "dnnl memory");
  bd_check(dnnl_primitive_create(&c->conv, pd), "dnnl convolution");
  bd_reorder(c->eng, c->stream, c->src, &user_src, x, 1);
  bd_reorder(c->eng, c->stream, c->wei, &user_wei, w, 1);
  bd_reorder(c->eng, c->stream, c->bias, &user_bias, b, 1);
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  dnnl_post_ops_destroy(po);
}

static void bd_read_output(bd_case *c, const layer *L, float *y) {
  dnnl_dims_t d;
  dnnl_memory_desc_t md;
  d[0] = 1, d[1] = L->k, d[2] = out_hw(L), d[3] = out_hw(L);
  bd_check(dnnl_memory_desc_init_by_tag(&md, 4, d, dnnl_f32, dnnl_nchw), "md");
  bd_reorder(c->eng, c->stream, c->dst, &md, y, 0);
}

static void bd_teardown(bd_case *c) {
  dnnl_primitive_destroy(c->conv);
  dnnl_memory_destroy(c->src);
  dnnl_memory_destroy(c->wei);
  dnnl_memory_destroy(c->bias);
  dnnl_memory_destroy(c->dst);
  free((void *)c->impl);
}

/* oneDNN uses OpenMP; libgomp read OMP_NUM_THREADS when it was loaded, so set the count
   through the library itself (it is in the process: libdnnl links it). */
static int bd_set_threads(int n) {
  void (*set)(int) = NULL;
  int (*get)(void) = NULL;
  void *p = dlsym(RTLD_DEFAULT, "omp_set_num_threads"),
       *q = dlsym(RTLD_DEFAULT, "omp_get_max_threads");
  memcpy(&set, &p, sizeof p);
  memcpy(&get, &q, sizeof q);
  if (set)
    set(n);
  return get ? get() : -1;
}

static const char *bd_isa_name(dnnl_cpu_isa_t isa) {
  switch ((int)isa) {
  case dnnl_cpu_isa_avx2:
    return "avx2";
  case dnnl_cpu_isa_avx2_vnni:
    return "avx2_vnni";
  case dnnl_cpu_isa_avx512_core:
    return "avx512_core";
  case dnnl_cpu_isa_avx512_core_vnni:
    return "avx512_core_vnni";
  case dnnl_cpu_isa_avx512_core_bf16:
    return "avx512_core_bf16";
  case dnnl_cpu_isa_avx512_core_amx:
    return "avx512_core_amx";
  default:
    return "other";
  }
}
#endif

/* ------------------------------------------------------------------- result -- */

/* V_STEP: the conv step of the V_AUTO plan alone (fuse_run_steps), no layout conversions;
   V_ROUTED: fuse.h routed to oneDNN (fuse_dnnl.h), NCHW in and out; on 3x3 stride-1 layers,
   V_DIRECT and V_WINO: the conv step of the main ISA's plan on the direct kernels
   (no_winograd = 1) and as Winograd (the cost rule's F(m,3), or F(4,3) forced where the rule
   keeps the direct kernels) */
enum { V_AUTO, V_AVX2, V_SCALAR, V_UNFUSED, V_DNNL, V_STEP, V_ROUTED, V_DIRECT, V_WINO, NUM_V };
static const char *const V_NAMES[NUM_V] = {"fuse",   "fuse_avx2",      "fuse_scalar",  "fuse_unfused",
                                           "onednn", "fuse_conv_step", "fuse_via_dnnl",
                                           "fuse_direct_step", "fuse_winograd_step"};

typedef struct result {
  double sec[NUM_V];  /* median; 0 = not measured */
  double best[NUM_V]; /* fastest run (the CSV only: on a busy machine, the less disturbed one) */
  int runs[NUM_V];
  double err[NUM_V]; /* relative error: fuse.h plans against the scalar fused plan, oneDNN
                        against the fused plan timed in the first column; -1 = none */
  int steps;         /* compute steps (not to_nhwc / to_nchw) of the fused auto plan (1 = fused) */
  int unfused_steps; /* compute steps of the unfused plan */
  int conv_step;     /* index of the conv step in the fused auto plan; -1 = none */
  char impl[64];     /* oneDNN's implementation */
  int mismatch;
  int wino_m;        /* V_WINO's F(m,3); 0 = not a Winograd layer */
  int wino_default;  /* 1: the cost rule picks it (else forced) */
} result;

static double gflops(const layer *L, double sec) { return sec > 0 ? layer_gflop(L) / sec : 0; }

/* The conv step of the fused plan alone: one full fuse_run first (the plan's workspace then
   holds the converted input), then fuse_run_steps(plan, ..., conv_step, 1) timed like the rest.
   Afterwards the steps behind it run once and the output is checked against the reference. */
static void measure_step(result *R, int v, int k, fuse_plan *plan, const float *x, float *y,
                         const float *ref, size_t nout, double budget) {
  fuse_case c;
  int n = fuse_plan_step_count(plan);
  const float *ins[1];
  float *outs[1];
  if (k < 0)
    return;
  c.plan = plan, c.in = x, c.out = y, c.step = k;
  run_fuse(&c);
  memset(y, 0, nout * sizeof *y);
  R->sec[v] = measure(run_fuse_step, &c, budget, &R->runs[v], &R->best[v]);
  ins[0] = x, outs[0] = y;
  if (fuse_run_steps(plan, ins, outs, NULL, k + 1, n - k - 1) != FUSE_OK)
    die("fuse_run_steps", "the steps after the conv step");
  R->err[v] = rel_error(y, ref, nout);
  if (!(R->err[v] <= TOLERANCE))
    R->mismatch = 1;
}

static void measure_conv_step(result *R, fuse_plan *plan, const float *x, float *y,
                              const float *ref, size_t nout, double budget) {
  measure_step(R, V_STEP, R->conv_step, plan, x, y, ref, nout, budget);
}

/* The F(m,3) a plan's listing names, 0 if none. */
static int plan_winograd(const fuse_plan *p) {
  plan_text t;
  const char *at;
  int m = 0;
  memset(&t, 0, sizeof t);
  fuse_plan_write(p, plan_text_write, &t);
  at = t.buf && !t.failed ? strstr(t.buf, "winograd F(") : NULL;
  if (at)
    m = atoi(at + 11);
  free(t.buf);
  return m;
}

/* A 3x3 stride-1 layer's conv step on the direct kernels and as Winograd (V_DIRECT, V_WINO). */
static void measure_winograd(result *R, const layer *L, const fuse_graph *g, fuse_isa isa,
                             int threads, pool *workers, const float *x, float *y,
                             const float *ref, size_t nout, double budget) {
  char err[256];
  fuse_plan *direct = compile_plan_nw(g, isa, threads, workers, 1, err, sizeof err), *wino;
  plan_info info;
  if (!direct)
    die("fuse_compile", err);
  plan_steps(direct, &info);
  measure_step(R, V_DIRECT, info.first_conv, direct, x, y, ref, nout, budget);
  fuse_plan_destroy(direct);
  wino = compile_plan_nw(g, isa, threads, workers, 0, err, sizeof err);
  if (!wino)
    die("fuse_compile", err);
  R->wino_default = plan_winograd(wino) > 0;
  if (!R->wino_default) {
    fuse_plan_destroy(wino);
    wino = compile_plan_nw(g, isa, threads, workers, -4, err, sizeof err);
    if (!wino)
      die("fuse_compile", err);
  }
  R->wino_m = plan_winograd(wino);
  if (!R->wino_m)
    fprintf(stderr, "layers: %s: no Winograd plan\n", L->name);
  plan_steps(wino, &info);
  measure_step(R, V_WINO, info.first_conv, wino, x, y, ref, nout, budget);
  fuse_plan_destroy(wino);
}

/* base / sec (how fast sec runs against base) as text, "n/a" when either was not measured;
   a measured ratio joins a geometric mean (*sum_log, *count). */
static void fmt_ratio(char *buf, size_t n, double base, double sec, double *sum_log, int *count) {
  if (base > 0 && sec > 0) {
    snprintf(buf, n, "%.2f", base / sec);
    *sum_log += log(base / sec);
    (*count)++;
  } else {
    snprintf(buf, n, "n/a");
  }
}

static void fmt_rate(char *buf, size_t n, const layer *L, double sec) {
  if (sec > 0)
    snprintf(buf, n, "%.1f", gflops(L, sec));
  else
    snprintf(buf, n, "n/a");
}

/* ---------------------------------------------------------------- the chart -- */

static int write_chart(const char *csv, const char *png, double peak_main, const char *peak_label,
                       double peak_avx2, int have_dnnl, int log_scale, int have_avx2_col,
                       int threads) {
  FILE *gp = popen("gnuplot 2>&1", "w");
  int st;
  if (!gp)
    return -1;
  fprintf(gp, "set terminal pngcairo noenhanced size 1400,760 font 'sans,10'\n");
  fprintf(gp, "set output '%s'\n", png);
  fprintf(gp, "set datafile separator ','\n");
  fprintf(gp, "set title 'conv + bias + relu layers, batch 1, FP32, %d thread%s: GFLOP/s%s'\n",
          threads, threads == 1 ? "" : "s", log_scale ? " (log scale)" : "");
  fprintf(gp, "set ylabel 'GFLOP/s'\n");
  if (log_scale)
    fprintf(gp, "set logscale y\nset yrange [0.5:%g]\n", peak_main * 1.6);
  else
    fprintf(gp, "set yrange [0:%g]\n", peak_main * 1.15);
  fprintf(gp, "set style data histograms\nset style histogram clustered gap 1\n");
  fprintf(gp, "set style fill solid 0.85 border -1\nset boxwidth 0.9\n");
  fprintf(gp, "set xtics rotate by -40 left font ',9'\nset grid ytics\n");
  fprintf(gp, "set key above horizontal\nset bmargin 10\nset rmargin 10\n");
  fprintf(gp,
          "plot '%s' using (column('fuse_gflops')):xtic(1) title 'fuse.h (fused, best isa)' lc rgb "
          "'#1f77b4'",
          csv);
  fprintf(gp, ", '' using (column('fuse_conv_step_gflops')) title 'fuse.h conv step (no layout "
              "conversions)' lc rgb '#17becf'");
  if (have_avx2_col)
    fprintf(gp, ", '' using (column('fuse_avx2_gflops')) title 'fuse.h avx2' lc rgb '#9ecae1'");
  fprintf(gp, ", '' using (column('fuse_unfused_gflops')) title 'fuse.h unfused' lc rgb '#bbbbbb'");
  if (have_dnnl) {
    fprintf(gp, ", '' using (column('onednn_gflops')) title 'oneDNN' lc rgb '#ff7f0e'");
    fprintf(gp, ", '' using (column('fuse_via_dnnl_gflops')) title 'fuse.h via dnnl (NCHW in/out)' "
                "lc rgb '#ffbb78'");
  }
  if (peak_label) /* NULL: no measured peak, peak_main is only the top of the chart */
    fprintf(gp, ", %g with lines lw 2 dt 2 lc rgb '#d62728' title 'FMA peak %s %.0f'", peak_main,
            peak_label, peak_main);
  if (peak_avx2 > 0 && peak_avx2 != peak_main)
    fprintf(gp, ", %g with lines lw 2 dt 3 lc rgb '#2ca02c' title 'FMA peak avx2 %.0f'", peak_avx2,
            peak_avx2);
  fprintf(gp, "\n");
  st = pclose(gp);
  return st;
}

/* ------------------------------------------------------------------- main -- */

static void usage(void) {
  fprintf(stderr,
          "usage: layers [--threads N] [--budget S] [--quick] [--filter TEXT] [--isa avx2]\n"
          "              [--out DIR] [--no-png] [--verbose] [--no-winograd] [--in-network]\n");
  exit(2);
}

int main(int argc, char **argv) {
  int threads = 1, quick = 0, png = 1, verbose = 0, avx2_mode = 0, i, v, li, any_mismatch = 0;
  int have_dnnl = BENCH_DNNL, count = 0, log_scale = 0;
  int runs_lo = 0, runs_hi = 0, scalar_lo = 0, scalar_hi = 0;
  double budget = 0.3, scalar_budget, peak512, peak2, best512, best2, peak_main, t_start;
  double chart_top = 1;
  const char *filter = NULL, *outdir = "bench/results";
  char cpu[256], load0[64], load1[64], date[64], path_csv[512], path_md[512], path_png[512];
  char dnnl_info[128] = "oneDNN: n/a (built without -DBENCH_DNNL=1 -ldnnl)";
  fuse_isa best_isa = fuse_cpu_isa(), main_isa;
  result *res;
  pool workers;
  pool_worker *worker_mem = NULL;
  FILE *csv, *md;
  time_t now = time(NULL);
#if BENCH_DNNL
  dnnl_engine_t eng = NULL;
  dnnl_stream_t stream = NULL;
#endif

  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
      budget = atof(argv[++i]);
    else if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
      filter = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc)
      outdir = argv[++i];
    else if (!strcmp(argv[i], "--no-png"))
      png = 0;
    else if (!strcmp(argv[i], "--in-network"))
      in_network = 1;
    else if (!strcmp(argv[i], "--verbose"))
      verbose = 1;
    else if (!strcmp(argv[i], "--no-winograd"))
      no_winograd = 1;
    else if (!strcmp(argv[i], "--isa") && i + 1 < argc) {
      i++;
      if (!strcmp(argv[i], "avx2"))
        avx2_mode = 1;
      else if (strcmp(argv[i], "auto"))
        usage();
    } else
      usage();
  }
  if (threads < 1)
    threads = 1;
  if (quick)
    budget = 0.05;
  if (budget <= 0)
    budget = 0.3;
  scalar_budget = budget < 0.1 ? budget : 0.1;
  main_isa = avx2_mode ? FUSE_ISA_AVX2 : FUSE_ISA_AUTO;
  if (avx2_mode && best_isa < FUSE_ISA_AVX2)
    die("--isa avx2", "this CPU (or build) has no AVX2");
  if (threads > 1)
    worker_mem = pool_start(&workers, threads);

  cpu_model(cpu, sizeof cpu);
  load_avg(load0, sizeof load0);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&now));
  snprintf(path_csv, sizeof path_csv, "%s/layers%s%s.csv", outdir, avx2_mode ? "_avx2" : "",
           in_network ? "_net" : "");
  snprintf(path_md, sizeof path_md, "%s/layers%s%s.md", outdir, avx2_mode ? "_avx2" : "",
           in_network ? "_net" : "");
  snprintf(path_png, sizeof path_png, "%s/layers%s%s.png", outdir, avx2_mode ? "_avx2" : "",
           in_network ? "_net" : "");

  /* the peak first, while nothing else of ours runs */
  peak512 = peak_gflops(PEAK_AVX512, quick ? 0.1 : 0.3, &best512);
  peak2 = peak_gflops(PEAK_AVX2, quick ? 0.1 : 0.3, &best2);
  peak_main = avx2_mode || best_isa < FUSE_ISA_AVX512 || peak512 <= 0 ? peak2 : peak512;
  /* no x86 peak (another CPU): the chart scales to the fastest result instead */

#if BENCH_DNNL
  {
    int got = bd_set_threads(threads);
    const dnnl_version_t *ver = dnnl_version();
    if (avx2_mode)
      bd_check(dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2), "dnnl_set_max_cpu_isa");
    bd_check(dnnl_engine_create(&eng, dnnl_cpu, 0), "dnnl engine");
    bd_check(dnnl_stream_create(&stream, eng, dnnl_stream_default_flags), "dnnl stream");
    snprintf(dnnl_info, sizeof dnnl_info, "oneDNN %d.%d.%d, isa %s, %d OpenMP thread%s", ver->major,
             ver->minor, ver->patch, bd_isa_name(dnnl_get_effective_cpu_isa()), got,
             got == 1 ? "" : "s");
    if (got != threads)
      fprintf(stderr, "layers: warning: oneDNN runs %d OpenMP threads, asked for %d\n", got,
              threads);
  }
#endif

  res = (result *)calloc((size_t)NUM_LAYERS, sizeof *res);
  if (!res)
    die("main", "out of memory");
  t_start = now_s();

  for (li = 0; li < NUM_LAYERS; li++) {
    const layer *L = &LAYERS[li];
    result *R = &res[li];
    size_t nin = in_count(L), nout = out_count(L), nw = w_count(L);
    float *x = alloc_floats(nin), *w = alloc_floats(nw), *b = alloc_floats((size_t)L->k);
    float *ref = alloc_floats(nout), *y = alloc_floats(nout), *yauto = alloc_floats(nout);
    /* conv outputs of standard deviation about 0.5 (relu), 4 for relu6 (some 7% above 6) */
    float wscale = 1.0f / sqrtf((float)(nw / (size_t)L->k)) * (L->post == P_RELU6 ? 12.0f : 1.5f);
    fuse_graph *g_fused, *g_plain;
    fuse_plan *plans[NUM_V];
    fuse_isa isas[NUM_V];
    char err[256];
    size_t k;

    if (filter && !strstr(L->name, filter)) {
      R->steps = -1;
      free(x), free(w), free(b), free(ref), free(y), free(yauto);
      continue;
    }
    count++;
    for (k = 0; k < nin; k++)
      x[k] = frand();
    for (k = 0; k < nw; k++)
      w[k] = frand() * wscale;
    for (k = 0; k < (size_t)L->k; k++)
      b[k] = 0.5f * frand();
    for (v = 0; v < NUM_V; v++)
      R->err[v] = -1, plans[v] = NULL;

    g_fused = build_graph(L, w, b);
    g_plain = build_graph(L, w, b);
    if (fuse_optimize(g_fused, NULL) != FUSE_OK)
      die("fuse_optimize", fuse_graph_error(g_fused));
    isas[V_AUTO] = main_isa;
    isas[V_AVX2] = FUSE_ISA_AVX2;
    isas[V_SCALAR] = FUSE_ISA_SCALAR;
    isas[V_UNFUSED] = main_isa;
    for (v = 0; v < V_DNNL; v++) {
      if (v == V_AVX2 && (avx2_mode || best_isa < FUSE_ISA_AVX2))
        continue; /* same as the first */
      plans[v] = compile_plan(v == V_UNFUSED ? g_plain : g_fused, isas[v], threads, &workers, err,
                              sizeof err);
      if (!plans[v])
        die("fuse_compile", err);
    }
    {
      plan_info fused_info, plain_info;
      plan_steps(plans[V_AUTO], &fused_info);
      plan_steps(plans[V_UNFUSED], &plain_info);
      R->steps = fused_info.compute_steps;
      R->unfused_steps = plain_info.compute_steps;
      R->conv_step = in_network && is_depthwise(L) ? fused_info.last_conv : fused_info.first_conv;
    }
    if (verbose) {
      printf("== %s (%.3f GFLOP)\n", L->name, layer_gflop(L));
      fuse_plan_write(plans[V_AUTO], write_stdout, NULL);
      printf("-- unfused:\n");
      fuse_plan_write(plans[V_UNFUSED], write_stdout, NULL);
    }

    /* the scalar fused plan is the reference every other result is checked against */
    {
      fuse_case c;
      c.plan = plans[V_SCALAR], c.in = x, c.out = ref;
      run_fuse(&c);
    }
    for (v = 0; v < V_DNNL; v++) {
      fuse_case c;
      if (!plans[v] || v == V_SCALAR)
        continue;
      memset(y, 0, nout * sizeof *y);
      c.plan = plans[v], c.in = x, c.out = y;
      run_fuse(&c);
      R->err[v] = rel_error(y, ref, nout);
      if (!(R->err[v] <= TOLERANCE))
        R->mismatch = 1;
      if (v == V_AUTO)
        memcpy(yauto, y, nout * sizeof *y);
    }

#if BENCH_DNNL
    {
      bd_case dc;
      memset(&dc, 0, sizeof dc);
      dc.eng = eng, dc.stream = stream;
      bd_setup(&dc, L, x, w, b);
      snprintf(R->impl, sizeof R->impl, "%s", dc.impl);
      bd_run_conv(&dc);
      memset(y, 0, nout * sizeof *y);
      bd_read_output(&dc, L, y);
      R->err[V_DNNL] = rel_error(y, yauto, nout); /* oneDNN against the fused plan timed */
      if (!(R->err[V_DNNL] <= TOLERANCE))
        R->mismatch = 1;
      /* fuse.h first, then oneDNN, each measurement on its own */
      for (v = 0; v < V_DNNL; v++) {
        fuse_case c;
        if (!plans[v])
          continue;
        c.plan = plans[v], c.in = x, c.out = y;
        R->sec[v] =
            measure(run_fuse, &c, v == V_SCALAR ? scalar_budget : budget, &R->runs[v], &R->best[v]);
      }
      measure_conv_step(R, plans[V_AUTO], x, y, ref, nout, budget);
      R->sec[V_DNNL] = measure(bd_run_conv, &dc, budget, &R->runs[V_DNNL], &R->best[V_DNNL]);
      bd_teardown(&dc);
    }
    { /* the same graph routed to oneDNN by fuse_dnnl.h */
      fuse_graph *g_routed = build_graph(L, w, b);
      const fuse_backend *backends[2];
      fuse_compile_options o;
      fuse_plan *routed = NULL;
      fuse_case c;
      const char *desc;
      plan_text t;
      memset(&o, 0, sizeof o);
      backends[0] = fuse_dnnl_backend();
      backends[1] = NULL;
      o.backends = backends;
      o.num_threads = threads;
      o.error = err;
      o.error_size = sizeof err;
      if (fuse_optimize(g_routed, "dnnl") != FUSE_OK)
        die("fuse_optimize dnnl", fuse_graph_error(g_routed));
      if (fuse_compile(g_routed, &o, &routed) != FUSE_OK)
        die("fuse_compile dnnl", err);
      memset(&t, 0, sizeof t);
      fuse_plan_write(routed, plan_text_write, &t);
      desc = t.buf && !t.failed ? t.buf : "";
      if (!strstr(desc, "(dnnl)")) /* a declined step would time fuse.h's kernels */
        fprintf(stderr, "layers: %s: not routed to oneDNN:\n%s", L->name, desc);
      if (verbose)
        printf("-- via dnnl:\n%s", desc);
      memset(y, 0, nout * sizeof *y);
      c.plan = routed, c.in = x, c.out = y;
      run_fuse(&c);
      R->err[V_ROUTED] = rel_error(y, yauto, nout);
      if (!(R->err[V_ROUTED] <= TOLERANCE) || !strstr(desc, "(dnnl)"))
        R->mismatch = 1;
      R->sec[V_ROUTED] = measure(run_fuse, &c, budget, &R->runs[V_ROUTED], &R->best[V_ROUTED]);
      free(t.buf);
      fuse_plan_destroy(routed);
      fuse_graph_destroy(g_routed);
    }
#else
    snprintf(R->impl, sizeof R->impl, "n/a");
    for (v = 0; v < V_DNNL; v++) {
      fuse_case c;
      if (!plans[v])
        continue;
      c.plan = plans[v], c.in = x, c.out = y;
      R->sec[v] =
          measure(run_fuse, &c, v == V_SCALAR ? scalar_budget : budget, &R->runs[v], &R->best[v]);
    }
    measure_conv_step(R, plans[V_AUTO], x, y, ref, nout, budget);
#endif
    if (winograd_layer(L))
      measure_winograd(R, L, g_fused, main_isa, threads, &workers, x, y, ref, nout, budget);
    if (R->mismatch)
      any_mismatch = 1;
    fprintf(stderr, "  %-28s fuse.h %7.1f  conv step %7.1f  oneDNN %7.1f  via dnnl %7.1f GFLOP/s%s\n",
            L->name, gflops(L, R->sec[V_AUTO]), gflops(L, R->sec[V_STEP]),
            gflops(L, R->sec[V_DNNL]), gflops(L, R->sec[V_ROUTED]),
            R->mismatch ? "  MISMATCH" : "");
    if (R->wino_m)
      fprintf(stderr, "  %-28s direct %7.1f  winograd F(%d,3)%s %7.1f  (x oneDNN: %.2f, %.2f)\n", "",
              gflops(L, R->sec[V_DIRECT]), R->wino_m, R->wino_default ? "" : " forced",
              gflops(L, R->sec[V_WINO]),
              R->sec[V_DNNL] > 0 ? R->sec[V_DNNL] / R->sec[V_DIRECT] : 0.0,
              R->sec[V_DNNL] > 0 ? R->sec[V_DNNL] / R->sec[V_WINO] : 0.0);
    for (v = 0; v < V_DNNL; v++)
      fuse_plan_destroy(plans[v]);
    fuse_graph_destroy(g_fused);
    fuse_graph_destroy(g_plain);
    free(x), free(w), free(b), free(ref), free(y), free(yauto);
  }
  load_avg(load1, sizeof load1);
  for (li = 0; li < NUM_LAYERS; li++)
    for (v = 0; v < NUM_V; v++) {
      int n = res[li].runs[v];
      if (res[li].steps < 0 || n == 0)
        continue;
      if (v == V_SCALAR) {
        scalar_lo = scalar_lo && scalar_lo < n ? scalar_lo : n;
        scalar_hi = scalar_hi > n ? scalar_hi : n;
      } else {
        runs_lo = runs_lo && runs_lo < n ? runs_lo : n;
        runs_hi = runs_hi > n ? runs_hi : n;
      }
    }

  /* ----- the table ----- */
  md = fopen(path_md, "w");
  if (!md)
    fprintf(stderr, "layers: cannot write %s\n", path_md);
  for (i = 0; i < 2; i++) {
    FILE *f = i == 0 ? stdout : md;
    double sum_ratio_log = 0, sum_step_log = 0, sum_routed_log = 0;
    int n_ratio = 0, n_step = 0, n_routed = 0;
    if (!f)
      continue;
    fprintf(f,
            "Layers: conv2d + bias + relu (relu6 for depthwise, silu / hardswish where named), batch 1, FP32, %d thread%s, "
            "NCHW in/out for fuse.h (layout conversions included), oneDNN in its own layout "
            "(execution only); conv step = the fused plan's conv step alone, without the "
            "conversions.\n\n",
            threads, threads == 1 ? "" : "s");
    fprintf(f,
            "- machine: %s, %ld logical CPUs; %s; load %s before, %s after (preliminary: "
            "shared machine)\n",
            cpu, sysconf(_SC_NPROCESSORS_ONLN), date, load0, load1);
    if (peak_main > 0)
      fprintf(f,
              "- FMA peak, 1 core (median of 1 ms bursts, fastest in brackets): avx512 %.0f "
              "(%.0f), avx2 %.0f (%.0f) GFLOP/s\n",
              peak512, best512, peak2, best2);
    else
      fprintf(f, "- FMA peak: not measured (bench/peak.h knows x86 AVX2 / AVX-512 only)\n");
    fprintf(f,
            "- fuse.h %s: fused plans with isa %s (fuse_cpu_isa: %s), avx2, scalar; unfused = "
            "no fuse_optimize, isa %s\n",
            FUSE_VERSION_STRING, isa_name(main_isa), isa_name(best_isa), isa_name(main_isa));
    fprintf(f, "- %s%s\n", dnnl_info, have_dnnl ? ", convolution_direct + eltwise post-op" : "");
    fprintf(f,
            "- medians of single runs, about %.2f s of runs each (%d..%d runs); scalar plans "
            "%.2f s (%d..%d runs: 1 = a single run); %% peak against the %s peak\n\n",
            budget, runs_lo, runs_hi, scalar_budget, scalar_lo, scalar_hi,
            avx2_mode || best_isa < FUSE_ISA_AVX512 ? "avx2" : "avx512");
    fprintf(f,
            "| layer | GFLOP | fuse.h GFLOP/s | %% peak | fuse.h conv step | fuse.h avx2 | "
            "fuse.h scalar | unfused | oneDNN GFLOP/s | oneDNN impl | fuse.h via dnnl | "
            "fuse.h / oneDNN | conv step / oneDNN | via dnnl / oneDNN |\n");
    fprintf(f, "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|\n");
    for (li = 0; li < NUM_LAYERS; li++) {
      const layer *L = &LAYERS[li];
      const result *R = &res[li];
      char a[32], a2[32], s[32], u[32], d[32], cs[32], ratio[32], step_ratio[32], pct[16];
      char rt[32], rt_ratio[32];
      if (R->steps < 0)
        continue;
      fmt_rate(a, sizeof a, L, R->sec[V_AUTO]);
      fmt_rate(a2, sizeof a2, L, R->sec[V_AVX2]);
      fmt_rate(s, sizeof s, L, R->sec[V_SCALAR]);
      fmt_rate(u, sizeof u, L, R->sec[V_UNFUSED]);
      fmt_rate(d, sizeof d, L, R->sec[V_DNNL]);
      fmt_rate(cs, sizeof cs, L, R->sec[V_STEP]);
      fmt_rate(rt, sizeof rt, L, R->sec[V_ROUTED]);
      fmt_ratio(rt_ratio, sizeof rt_ratio, R->sec[V_DNNL], R->sec[V_ROUTED], &sum_routed_log,
                &n_routed);
      fmt_ratio(ratio, sizeof ratio, R->sec[V_DNNL], R->sec[V_AUTO], &sum_ratio_log, &n_ratio);
      fmt_ratio(step_ratio, sizeof step_ratio, R->sec[V_DNNL], R->sec[V_STEP], &sum_step_log,
                &n_step);
      if (peak_main > 0)
        snprintf(pct, sizeof pct, "%.0f%%", 100.0 * gflops(L, R->sec[V_AUTO]) / peak_main);
      else
        snprintf(pct, sizeof pct, "n/a");
      fprintf(f, "| %s%s%s | %.3f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
              L->name, R->steps != 1 ? " (not fused)" : "", R->mismatch ? " **MISMATCH**" : "",
              layer_gflop(L), a, pct, cs, avx2_mode ? "=" : a2, s, u, d, R->impl, rt, ratio,
              step_ratio, rt_ratio);
    }
    if (n_ratio)
      fprintf(f, "\nGeometric mean fuse.h / oneDNN: %.3f over %d layers.\n",
              exp(sum_ratio_log / n_ratio), n_ratio);
    if (n_step)
      fprintf(f, "Geometric mean conv step / oneDNN: %.3f over %d layers.\n",
              exp(sum_step_log / n_step), n_step);
    if (n_routed)
      fprintf(f,
              "Geometric mean fuse.h via dnnl / oneDNN: %.3f over %d layers (the cost of "
              "routing: NCHW reorders in and out, fuse_run).\n",
              exp(sum_routed_log / n_routed), n_routed);
    fprintf(f,
            "\n3x3 stride-1 layers: the conv step on the direct kernels (no_winograd = 1) and as "
            "Winograd (the cost rule's F(m,3); \"forced\": F(4,3) where the rule keeps the direct "
            "kernels), effective GFLOP/s (the direct convolution's FLOPs / time), against oneDNN.\n\n"
            "| layer | direct GFLOP/s | Winograd GFLOP/s | F(m,3) | oneDNN GFLOP/s | direct / oneDNN "
            "| Winograd / oneDNN |\n|---|--:|--:|---|--:|--:|--:|\n");
    for (li = 0; li < NUM_LAYERS; li++) {
      const layer *L = &LAYERS[li];
      const result *R = &res[li];
      char dr[32], wr[32], dd[32], r1[32], r2[32];
      double unused_log = 0;
      int unused_n = 0;
      if (R->steps < 0 || !R->wino_m)
        continue;
      fmt_rate(dr, sizeof dr, L, R->sec[V_DIRECT]);
      fmt_rate(wr, sizeof wr, L, R->sec[V_WINO]);
      fmt_rate(dd, sizeof dd, L, R->sec[V_DNNL]);
      fmt_ratio(r1, sizeof r1, R->sec[V_DNNL], R->sec[V_DIRECT], &unused_log, &unused_n);
      fmt_ratio(r2, sizeof r2, R->sec[V_DNNL], R->sec[V_WINO], &unused_log, &unused_n);
      fprintf(f, "| %s | %s | %s | F(%d,3)%s | %s | %s | %s |\n", L->name, dr, wr, R->wino_m,
              R->wino_default ? "" : " forced", dd, r1, r2);
    }
    if (any_mismatch) {
      fprintf(f,
              "\nMISMATCH: relative errors (fuse.h plans against the scalar fused plan, oneDNN "
              "against the fused plan; tolerance %g):\n",
              TOLERANCE);
      for (li = 0; li < NUM_LAYERS; li++)
        if (res[li].mismatch) {
          fprintf(f, "- %s:", LAYERS[li].name);
          for (v = 0; v < NUM_V; v++)
            if (v != V_SCALAR && res[li].err[v] >= 0)
              fprintf(f, " %s %.2g", V_NAMES[v], res[li].err[v]);
          fprintf(f, "\n");
        }
    }
  }
  if (md)
    fclose(md);

  /* ----- the CSV ----- */
  csv = fopen(path_csv, "w");
  if (!csv)
    die("cannot write", path_csv);
  fprintf(csv,
          "layer,c,hw,k,ksize,stride,pad,groups,post,gflop,fused_steps,unfused_steps,conv_step");
  for (v = 0; v < NUM_V; v++)
    fprintf(csv, ",%s_ms,%s_gflops,%s_best_gflops,%s_runs,%s_relerr", V_NAMES[v], V_NAMES[v],
            V_NAMES[v], V_NAMES[v], V_NAMES[v]);
  fprintf(csv, ",onednn_impl,ratio_fuse_onednn,ratio_conv_step_onednn,ratio_via_dnnl_onednn,"
               "peak_avx512,peak_avx2,threads\n");
  for (li = 0; li < NUM_LAYERS; li++) {
    const layer *L = &LAYERS[li];
    const result *R = &res[li];
    if (R->steps < 0)
      continue;
    fprintf(csv, "\"%s\",%d,%d,%d,%d,%d,%d,%d,%s,%.6f,%d,%d,%d", L->name, L->c, L->hw, L->k,
            L->ksize, L->stride, L->pad, L->groups, POST_NAMES[L->post], layer_gflop(L),
            R->steps, R->unfused_steps, R->conv_step);
    for (v = 0; v < NUM_V; v++) {
      if (R->sec[v] > 0)
        fprintf(csv, ",%.5f,%.3f,%.3f,%d", R->sec[v] * 1e3, gflops(L, R->sec[v]),
                gflops(L, R->best[v]), R->runs[v]);
      else
        fprintf(csv, ",,,,");
      if (R->err[v] >= 0)
        fprintf(csv, ",%.3g", R->err[v]);
      else
        fprintf(csv, ",");
    }
    fprintf(csv, ",%s,", R->impl);
    if (R->sec[V_DNNL] > 0 && R->sec[V_AUTO] > 0)
      fprintf(csv, "%.4f", R->sec[V_DNNL] / R->sec[V_AUTO]);
    fprintf(csv, ",");
    if (R->sec[V_DNNL] > 0 && R->sec[V_STEP] > 0)
      fprintf(csv, "%.4f", R->sec[V_DNNL] / R->sec[V_STEP]);
    fprintf(csv, ",");
    if (R->sec[V_DNNL] > 0 && R->sec[V_ROUTED] > 0)
      fprintf(csv, "%.4f", R->sec[V_DNNL] / R->sec[V_ROUTED]);
    fprintf(csv, ",%.1f,%.1f,%d\n", peak512, peak2, threads);
  }
  fclose(csv);

  /* ----- the chart: log scale while fuse.h is far below oneDNN / the peak ----- */
  for (li = 0; li < NUM_LAYERS; li++)
    if (res[li].steps >= 0 && gflops(&LAYERS[li], res[li].sec[V_AUTO]) < 0.2 * peak_main)
      log_scale = 1;
  if (peak_main <= 0) {
    for (li = 0; li < NUM_LAYERS; li++)
      for (v = 0; v < NUM_V; v++)
        if (res[li].steps >= 0 && gflops(&LAYERS[li], res[li].sec[v]) > chart_top)
          chart_top = gflops(&LAYERS[li], res[li].sec[v]);
    log_scale = 0;
  }
  if (png && count) {
    int st = write_chart(path_csv, path_png, peak_main > 0 ? peak_main : chart_top,
                         peak_main <= 0                            ? NULL
                         : avx2_mode || best_isa < FUSE_ISA_AVX512 ? "avx2"
                                                                   : "avx512",
                         avx2_mode ? 0 : peak2, have_dnnl, log_scale,
                         !avx2_mode && best_isa >= FUSE_ISA_AVX2, threads);
    if (st != 0)
      fprintf(stderr, "layers: gnuplot failed (status %d); no chart\n", st);
  }
  fprintf(stderr, "layers: %d layers in %.1f s; wrote %s, %s%s%s\n", count, now_s() - t_start,
          path_md, path_csv, png ? ", " : "", png ? path_png : "");

#if BENCH_DNNL
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(eng);
#endif
  if (threads > 1)
    pool_stop(&workers, worker_mem);
  free(res);
  return any_mismatch ? 1 : 0;
}
