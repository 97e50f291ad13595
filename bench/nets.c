/* nets.c - whole networks through fuse.h against ONNX Runtime and PyTorch.

   For each network <name> in --dir (default build/models, written by
   `/usr/bin/python3 tools/export_torchvision.py`: <name>.onnx with batch norm folded,
   <name>.input.bin, <name>.output.bin; resnet18, resnet50, mobilenet_v2 by default). A name is
   a file stem, so `--dir build/zoo resnet18.op13` takes tools/export_zoo.py's files too:

     fuse.h    fuse_onnx_load_file, fuse_optimize, then for each thread count (--threads, 1,2 by
               default) fuse_compile with isa auto (or --isa) and num_threads = N (for N > 1 with the
               pthread parallel_for of bench/pool.h); fuse_run with the NCHW input and output
               and the plan's own workspace: --warmup runs (default 3), then --runs single runs
               (default 20) timed; the median and the fastest are reported. The output of the
               first run at each thread count is checked against the exported one
               (<name>.output.bin): max|got - want| / max|want| <= 1e-3, else the net is marked
               MISMATCH and the exit status is 1.
     via dnnl  when built with oneDNN (-DBENCH_DNNL=1 -ldnnl, as make bench-nets does where it
               is installed): the same file loaded again, fuse_optimize(g, "dnnl"), fuse_compile
               with fuse_dnnl_backend() (the composites run on oneDNN, tensors between two of
               its steps stay in its layout; pools and the rest on fuse.h's kernels with
               num_threads = N as above), oneDNN's OpenMP set to N threads
               (omp_set_num_threads); timed and checked the same way. --no-dnnl leaves it out
     ORT       bench/nets_ort.js, run once per network with --node (default `node`; "none"
               leaves it out): ONNX Runtime's CPU provider through onnxruntime-node (found at
               --ort DIR, $FUSE_ORT_DIR, build/ort of `make bench-ort-setup`, ...), for each N
               a session made with intraOpNumThreads N, interOpNumThreads 1, sequential,
               graphOptimizationLevel all (its creation timed: ORT's load time), the inputs
               with the shapes fuse.h loaded, the same warm-up / runs / median, its output
               checked against the same file. When node or the module is missing, its columns
               say n/a.
     PyTorch   bench/nets_torch.py, run once per network with --python (default
               /usr/bin/python3; "none" leaves it out): the same torchvision model (weights
               rebuilt as the export script makes them, its output checked against the same
               file), torch.jit.optimize_for_inference(torch.jit.script(model.eval())), batch
               1, torch.set_num_threads(N) for each N, the same warm-up / runs / median. When
               Python or torch is missing, or the model is not one it can rebuild (the zoo's),
               its columns say n/a.

   They run one after the other per network: fuse.h, ORT, PyTorch. The ratios are other ms /
   fuse.h ms (above 1: fuse.h is faster); the speedup of N threads is (1-thread median) /
   (N-thread median) for each. Also per network: fuse_plan_workspace_size (the activations) and
   fuse_plan_weights_size (constants and packed weights), the plan's compute steps and its
   layout conversions (to_nhwc / to_nchw), and load + optimize + compile time against ORT's
   session creation.

   Output: a markdown table on stdout (also <out>/nets.md), <out>/nets.csv (default
   bench/results) and, when ORT ran and gnuplot is installed, <out>/nets.png: fuse.h time / ORT
   time per network and thread count with their geometric mean (data: <out>/nets_chart.dat). The machine is shared: compare ratios from one run, not absolute times
   across runs; the load average before and after is in the header.

   Build: cc -O2 -I. bench/nets.c -o build/nets -lm -lpthread     (make bench-nets)
          cc -O2 -I. -DBENCH_DNNL=1 bench/nets.c -o build/nets -ldnnl -ldl -lm -lpthread
   Run:   ./build/nets [--dir DIR] [--out DIR] [--runs N] [--warmup N] [--threads 1,2]
                       [--python PATH|none] [--node PATH|none] [--ort DIR] [--no-dnnl]
                       [--isa auto|avx512|avx2|neon|scalar] [name ...]   (from the repository root)
   --isa avx2 on an AVX-512 machine runs fuse.h's AVX2 path (ORT and PyTorch still take what
   the CPU has: their columns are then no like-for-like comparison). */
#define _GNU_SOURCE
#define FUSE_IMPLEMENTATION
#include "fuse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/pool.h"

#ifndef BENCH_DNNL
#define BENCH_DNNL 0
#endif
#if BENCH_DNNL
#include <dlfcn.h>
#else
#define FUSE_DNNL_AVAILABLE 0 /* no -ldnnl: fuse_dnnl_backend() is NULL */
#endif
#include "fuse_dnnl.h"

#define TOLERANCE 1e-3
#define MAX_THREADS 8 /* entries of --threads */
#define MAX_NETS 16
#define MAX_IO 16 /* inputs or outputs of a network */

static void die(const char *what, const char *why) {
  fprintf(stderr, "nets: %s: %s\n", what, why);
  exit(2);
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

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* max|got - want| / max|want|; INFINITY when a difference is not finite */
static double rel_error(const float *got, const float *want, size_t n) {
  double diff = 0, top = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double d = fabs((double)got[i] - (double)want[i]), w = fabs((double)want[i]);
    if (!(d <= INFINITY) || isinf(d))
      return INFINITY;
    if (d > diff)
      diff = d;
    if (w > top)
      top = w;
  }
  return top > 0 ? diff / top : diff;
}

/* the whole file as floats; NULL when it cannot be read; *n = floats */
static float *read_floats(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  long size;
  float *p;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
      size % 4 != 0) {
    fclose(f);
    return NULL;
  }
  p = (float *)malloc(size ? (size_t)size : 1);
  if (!p || fread(p, 1, (size_t)size, f) != (size_t)size) {
    free(p);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *n = (size_t)size / 4;
  return p;
}

/* ------------------------------------------------------------------ results -- */

typedef struct timing {
  double ms, best_ms; /* median and fastest; 0 = not measured */
  int runs;
} timing;

typedef struct net_result {
  const char *name;
  int files;                       /* 0: the model files are missing (nothing runs) */
  int loaded;                      /* 0: fuse.h did not load the model (ORT, PyTorch may run) */
  char why[256];                   /* why not */
  timing fuse[MAX_THREADS], torch[MAX_THREADS];
  timing dnnl[MAX_THREADS];        /* fuse.h routed to oneDNN (fuse_dnnl.h) */
  double fuse_err, torch_err;      /* against <name>.output.bin; -1 = not checked */
  double dnnl_err;                 /* -1 = not run */
  int dnnl_steps, dnnl_kept;       /* steps oneDNN runs; of them, outputs kept in its layout */
  char dnnl_why[256];              /* why the oneDNN rows are missing */
  size_t workspace[MAX_THREADS];   /* fuse_plan_workspace_size per thread count */
  size_t weights;                  /* fuse_plan_weights_size: constants + packed weights */
  plan_info info;                  /* of the 1st thread count's plan */
  double setup_ms;                 /* load + optimize + the first compile */
  int mismatch;
  char shapes[256];                /* the inputs' shapes for nets_ort.js: 1x3x224x224;... */
  timing ort[MAX_THREADS];         /* ONNX Runtime (bench/nets_ort.js) */
  double ort_create_ms[MAX_THREADS]; /* InferenceSession.create per thread count; 0 = none */
  double ort_init_ms;              /* ORT's environment set-up, once per process; -1 = n/a */
  double ort_err;                  /* -1 = not checked */
} net_result;

/* ------------------------------------------------------------------- fuse.h -- */

/* a network's inputs and outputs: pointers into the input file's floats (the inputs one
   after another in graph order) and into y, which holds the outputs the same way */
typedef struct io_binding {
  const float *ins[MAX_IO];
  float *outs[MAX_IO];
  float *y;
  size_t ny;
} io_binding;

/* the element count of value v */
static size_t value_size(const fuse_graph *g, fuse_value v) {
  const int64_t *shape = fuse_value_shape(g, v);
  size_t n = 1;
  int i, rank = fuse_value_rank(g, v);
  for (i = 0; i < rank; i++)
    n *= (size_t)shape[i];
  return n;
}

/* Splits the input file (nx floats) over g's inputs and allocates y for its outputs (nwant
   floats expected); the inputs' shapes go to R->shapes ("1x3x224x224;..."). 0 with R->why
   when the files do not fit the model. */
static int bind_io(net_result *R, const fuse_graph *g, const float *x, size_t nx, size_t nwant,
                   io_binding *io) {
  int n_in = fuse_graph_input_count(g), n_out = fuse_graph_output_count(g), i, k;
  size_t at = 0, used = 0;
  if (n_in < 1 || n_in > MAX_IO || n_out < 1 || n_out > MAX_IO) {
    snprintf(R->why, sizeof R->why, "%d inputs and %d outputs (1 to %d each)", n_in, n_out,
             MAX_IO);
    return 0;
  }
  for (i = 0; i < n_in; i++) {
    fuse_value v = fuse_graph_input(g, i);
    const int64_t *shape = fuse_value_shape(g, v);
    at += value_size(g, v);
    for (k = 0; k < fuse_value_rank(g, v) && used + 24 < sizeof R->shapes; k++)
      used += (size_t)snprintf(R->shapes + used, sizeof R->shapes - used, "%s%ld",
                               k ? "x" : i ? ";" : "", (long)shape[k]);
  }
  if (at != nx) {
    snprintf(R->why, sizeof R->why, "input file has %lu floats, the model takes %lu",
             (unsigned long)nx, (unsigned long)at);
    return 0;
  }
  for (i = 0, at = 0; i < n_in; i++) {
    io->ins[i] = x + at;
    at += value_size(g, fuse_graph_input(g, i));
  }
  for (i = 0, io->ny = 0; i < n_out; i++)
    io->ny += value_size(g, fuse_graph_output(g, i));
  if (io->ny != nwant) {
    snprintf(R->why, sizeof R->why, "output file has %lu floats, the model gives %lu",
             (unsigned long)nwant, (unsigned long)io->ny);
    return 0;
  }
  io->y = (float *)malloc(io->ny * sizeof *io->y);
  if (!io->y)
    die("alloc", "out of memory");
  for (i = 0, at = 0; i < n_out; i++) {
    io->outs[i] = io->y + at;
    at += value_size(g, fuse_graph_output(g, i));
  }
  return 1;
}

/* warm-up runs (the first checked against want: the largest error into *err), then `runs`
   timed single runs into *tm (t: room for runs doubles) */
static void time_plan(fuse_plan *plan, const io_binding *io, const float *want, int runs,
                      int warmup, double *t, timing *tm, double *err) {
  fuse_result r;
  int i;
  memset(io->y, 0, io->ny * sizeof *io->y);
  for (i = 0; i < (warmup > 0 ? warmup : 1); i++) {
    r = fuse_run(plan, io->ins, io->outs, NULL);
    if (r != FUSE_OK)
      die("fuse_run", fuse_result_string(r));
    if (i == 0) {
      double e = rel_error(io->y, want, io->ny);
      if (!(e <= *err))
        *err = e;
    }
  }
  for (i = 0; i < runs; i++) {
    double s = now_s();
    fuse_run(plan, io->ins, io->outs, NULL);
    t[i] = (now_s() - s) * 1e3;
  }
  if (runs > 0) {
    tm->ms = median(t, runs);
    tm->best_ms = t[0];
    tm->runs = runs;
  }
}

#if BENCH_DNNL
/* oneDNN uses OpenMP; libgomp read OMP_NUM_THREADS when it was loaded, so set the count
   through the library itself (libdnnl links it into the process) */
static void dnnl_set_threads(int n) {
  void (*set)(int) = NULL;
  void *p = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  memcpy(&set, &p, sizeof p);
  if (set)
    set(n);
}
#endif

static int count_text(const char *s, const char *what) {
  int n = 0;
  size_t k = strlen(what);
  while (s && (s = strstr(s, what)) != NULL)
    n++, s += k;
  return n;
}

/* --isa for compile_for (a bench program's one setting, read by every compile) */
static fuse_isa bench_isa = FUSE_ISA_AUTO;

/* Compiles g for `threads` threads and the backends (NULL: fuse.h's kernels only); with more
   than one thread the plan runs on a pool started into *workers (*worker_mem: pool_stop it
   after fuse_plan_destroy). Dies with fuse_compile's message on failure. */
static fuse_plan *compile_for(const fuse_graph *g, int threads, const fuse_backend *const *backends,
                              pool *workers, pool_worker **worker_mem, const char *what) {
  fuse_compile_options o;
  fuse_plan *plan;
  char err[512];
  memset(&o, 0, sizeof o);
  o.backends = backends;
  o.isa = bench_isa;
  *worker_mem = threads > 1 ? pool_start(workers, threads) : NULL;
  plan = pool_compile(g, &o, threads, workers, err, sizeof err);
  if (!plan)
    die(what, err);
  return plan;
}

/* The same network routed to oneDNN: loaded again, fuse_optimize(g, "dnnl"), compiled with
   fuse_dnnl_backend() for each thread count, timed as run_fuse_net does. */
static void run_dnnl_net(net_result *R, const char *path, const io_binding *io, const float *want,
                         const int *threads, int n_threads, int runs, int warmup, double *t) {
  const fuse_backend *backends[2];
  fuse_graph *g = NULL;
  int ti;
  backends[0] = fuse_dnnl_backend();
  backends[1] = NULL;
  if (!backends[0]) {
    snprintf(R->dnnl_why, sizeof R->dnnl_why, "built without oneDNN (BENCH_DNNL=0)");
    return;
  }
  if (fuse_onnx_load_file(path, NULL, &g) != FUSE_OK || fuse_optimize(g, "dnnl") != FUSE_OK) {
    snprintf(R->dnnl_why, sizeof R->dnnl_why, "load / optimize: %.200s",
             g ? fuse_graph_error(g) : "?");
    fuse_graph_destroy(g);
    return;
  }
  R->dnnl_err = 0;
  for (ti = 0; ti < n_threads; ti++) {
    fuse_plan *plan;
    pool workers;
    pool_worker *worker_mem;
#if BENCH_DNNL
    dnnl_set_threads(threads[ti]);
#endif
    plan = compile_for(g, threads[ti], backends, &workers, &worker_mem, "fuse_compile (dnnl)");
    if (ti == 0) {
      plan_text pt;
      memset(&pt, 0, sizeof pt);
      fuse_plan_write(plan, plan_text_write, &pt);
      R->dnnl_steps = count_text(pt.buf, "(dnnl)");
      R->dnnl_kept = count_text(pt.buf, "(output in dnnl's layout");
      if (count_text(pt.buf, "declined"))
        fprintf(stderr, "nets: %s: oneDNN declined steps:\n%s", R->name, pt.buf);
      free(pt.buf);
    }
    time_plan(plan, io, want, runs, warmup, t, &R->dnnl[ti], &R->dnnl_err);
    fuse_plan_destroy(plan);
    if (worker_mem)
      pool_stop(&workers, worker_mem);
    fprintf(stderr, "  %-14s via dnnl %d thread%s %8.2f ms (fastest %.2f)\n", R->name,
            threads[ti], threads[ti] == 1 ? " " : "s", R->dnnl[ti].ms, R->dnnl[ti].best_ms);
  }
  if (!(R->dnnl_err <= TOLERANCE))
    R->mismatch = 1;
  fuse_graph_destroy(g);
}

static void run_fuse_net(net_result *R, const char *dir, const int *threads, int n_threads,
                         int runs, int warmup, int with_dnnl) {
  char path[1024];
  fuse_graph *g = NULL;
  fuse_result r;
  float *x = NULL, *want = NULL;
  size_t nx = 0, nwant = 0;
  io_binding io;
  int ti;
  double t0 = now_s(), *t;

  memset(&io, 0, sizeof io);
  snprintf(path, sizeof path, "%s/%s.input.bin", dir, R->name);
  x = read_floats(path, &nx);
  snprintf(path, sizeof path, "%s/%s.output.bin", dir, R->name);
  want = read_floats(path, &nwant);
  snprintf(path, sizeof path, "%s/%s.onnx", dir, R->name);
  if (!x || !want || access(path, R_OK) != 0) {
    snprintf(R->why, sizeof R->why, "%s/%s{.onnx,.input.bin,.output.bin} missing", dir, R->name);
    goto done;
  }
  R->files = 1;
  r = fuse_onnx_load_file(path, NULL, &g);
  if (r != FUSE_OK) {
    snprintf(R->why, sizeof R->why, "fuse_onnx_load_file: %.200s", g ? fuse_graph_error(g) : "?");
    goto done;
  }
  if (!bind_io(R, g, x, nx, nwant, &io))
    goto done;
  if (fuse_optimize(g, NULL) != FUSE_OK) {
    snprintf(R->why, sizeof R->why, "fuse_optimize: %.200s", fuse_graph_error(g));
    goto done;
  }
  t = (double *)malloc((size_t)(runs > 0 ? runs : 1) * sizeof *t);
  if (!t)
    die("alloc", "out of memory");
  R->loaded = 1;
  R->fuse_err = 0;

  for (ti = 0; ti < n_threads; ti++) {
    pool workers;
    pool_worker *worker_mem;
    fuse_plan *plan = compile_for(g, threads[ti], NULL, &workers, &worker_mem, "fuse_compile");
    if (ti == 0) {
      R->setup_ms = (now_s() - t0) * 1e3;
      plan_steps(plan, &R->info);
    }
    R->workspace[ti] = fuse_plan_workspace_size(plan);
    R->weights = fuse_plan_weights_size(plan);
    time_plan(plan, &io, want, runs, warmup, t, &R->fuse[ti], &R->fuse_err);
    fuse_plan_destroy(plan);
    if (worker_mem)
      pool_stop(&workers, worker_mem);
    fprintf(stderr, "  %-14s fuse.h  %d thread%s %9.2f ms (fastest %.2f)\n", R->name,
            threads[ti], threads[ti] == 1 ? " " : "s", R->fuse[ti].ms, R->fuse[ti].best_ms);
  }
  if (!(R->fuse_err <= TOLERANCE))
    R->mismatch = 1;
  if (with_dnnl)
    run_dnnl_net(R, path, &io, want, threads, n_threads, runs, warmup, t);
  else
    snprintf(R->dnnl_why, sizeof R->dnnl_why, "left out (--no-dnnl)");
  free(t);
done:
  fuse_graph_destroy(g);
  free(x), free(want), free(io.y);
}

/* ------------------------------------------------------ PyTorch, ONNX Runtime -- */

/* the line without its trailing newline */
static void chomp(char *line) {
  char *e = line + strlen(line);
  while (e > line && (e[-1] == '\n' || e[-1] == '\r'))
    *--e = 0;
}

/* index of `th` in threads; -1 when it was not asked for */
static int thread_index(const int *threads, int n_threads, int th) {
  int ti;
  for (ti = 0; ti < n_threads; ti++)
    if (threads[ti] == th)
      return ti;
  return -1;
}

static void no_quotes(const char *s, const char *what) {
  if (strchr(s, '\''))
    die(what, "no quotes in paths or names, please");
}

/* Runs bench/nets_torch.py for one network; its lines "result NAME THREADS MEDIAN_MS BEST_MS
   RUNS RELERR" fill R->torch. Returns 0 when nothing came back (Python or torch missing, or
   a model the script does not know: its columns say n/a). */
static int run_torch_net(net_result *R, const char *python, const char *script, const char *dir,
                         const char *thread_list, int runs, int warmup, char *version,
                         size_t version_size, const int *threads, int n_threads) {
  char cmd[2048], line[512];
  FILE *p;
  int got = 0, ti;
  no_quotes(python, "--python"), no_quotes(script, "script"), no_quotes(dir, "--dir");
  no_quotes(R->name, "name");
  snprintf(cmd, sizeof cmd,
           "'%s' '%s' --dir '%s' --models '%s' --threads '%s' --runs %d --warmup %d 2>&1", python,
           script, dir, R->name, thread_list, runs, warmup);
  fflush(stdout);
  p = popen(cmd, "r");
  if (!p)
    return 0;
  while (fgets(line, sizeof line, p)) {
    char name[128];
    int th, n;
    double ms, best, err;
    if (sscanf(line, "result %127s %d %lf %lf %d %lf", name, &th, &ms, &best, &n, &err) == 6) {
      if ((ti = thread_index(threads, n_threads, th)) < 0)
        continue;
      R->torch[ti].ms = ms, R->torch[ti].best_ms = best, R->torch[ti].runs = n;
      if (err >= 0 && !(err <= R->torch_err))
        R->torch_err = err;
      got = 1;
      fprintf(stderr, "  %-14s PyTorch %d thread%s %9.2f ms (fastest %.2f)\n", R->name, th,
              th == 1 ? " " : "s", ms, best);
    } else if (!strncmp(line, "torch ", 6)) {
      chomp(line);
      snprintf(version, version_size, "PyTorch %.100s", line + 6);
    } else
      fprintf(stderr, "  nets_torch.py: %s", line);
  }
  if (pclose(p) != 0)
    fprintf(stderr, "nets: %s exited with an error\n", script);
  return got;
}

/* one line of bench/nets_ort.js: "result THREADS MEDIAN_MS BEST_MS RUNS RELERR CREATE_MS",
   "ort version V", "ort init MS"; anything else is passed on to stderr. Returns 1 for a
   result. */
static int read_ort_line(net_result *R, char *line, const int *threads, int n_threads,
                         char *version, size_t version_size) {
  int th, n, ti;
  double ms, best, err, create;
  if (sscanf(line, "result %d %lf %lf %d %lf %lf", &th, &ms, &best, &n, &err, &create) == 6) {
    if ((ti = thread_index(threads, n_threads, th)) < 0)
      return 0;
    R->ort[ti].ms = ms, R->ort[ti].best_ms = best, R->ort[ti].runs = n;
    R->ort_create_ms[ti] = create;
    if (err >= 0 && !(err <= R->ort_err))
      R->ort_err = err;
    fprintf(stderr, "  %-14s ORT     %d thread%s %9.2f ms (fastest %.2f; session create %.0f ms)\n",
            R->name, th, th == 1 ? " " : "s", ms, best, create);
    return 1;
  }
  chomp(line);
  if (!strncmp(line, "ort version ", 12))
    snprintf(version, version_size, "ONNX Runtime %.60s", line + 12);
  else if (sscanf(line, "ort init %lf", &ms) == 1)
    R->ort_init_ms = ms;
  else
    fprintf(stderr, "  nets_ort.js: %s\n", line);
  return 0;
}

/* Runs bench/nets_ort.js with node for one network (the inputs' shapes as fuse.h loaded
   them); fills R->ort. Returns 0 when nothing came back (node or onnxruntime-node missing,
   or ORT failed on the model: its columns say n/a). */
static int run_ort_net(net_result *R, const char *node, const char *script, const char *ort_dir,
                       const char *dir, const char *thread_list, int runs, int warmup,
                       char *version, size_t version_size, const int *threads, int n_threads) {
  char cmd[4096], line[1024], ort_arg[1400] = "";
  FILE *p;
  int got = 0;
  no_quotes(node, "--node"), no_quotes(script, "script"), no_quotes(dir, "--dir");
  no_quotes(R->name, "name");
  if (ort_dir) {
    no_quotes(ort_dir, "--ort");
    snprintf(ort_arg, sizeof ort_arg, " --ort '%s'", ort_dir);
  }
  if (R->shapes[0]) /* else fuse.h did not load it: the session's metadata gives them */
    snprintf(ort_arg + strlen(ort_arg), sizeof ort_arg - strlen(ort_arg), " --shapes '%s'",
             R->shapes);
  snprintf(cmd, sizeof cmd,
           "'%s' '%s' --model '%s/%s.onnx' --input '%s/%s.input.bin' --output '%s/%s.output.bin'"
           " --threads '%s' --runs %d --warmup %d%s 2>&1",
           node, script, dir, R->name, dir, R->name, dir, R->name, thread_list, runs, warmup,
           ort_arg);
  fflush(stdout);
  p = popen(cmd, "r");
  if (!p)
    return 0;
  while (fgets(line, sizeof line, p))
    got |= read_ort_line(R, line, threads, n_threads, version, version_size);
  if (pclose(p) != 0)
    fprintf(stderr, "nets: %s exited with an error\n", script);
  return got;
}

/* --------------------------------------------------------------------- main -- */

typedef struct options {
  const char *dir, *outdir, *python, *node, *ort_dir; /* python, node: NULL = left out */
  const char *torch_script, *ort_script, *thread_list;
  const char *names[MAX_NETS];
  int n_names, runs, warmup, threads[MAX_THREADS], n_threads, with_dnnl;
  fuse_isa isa; /* --isa: fuse.h's plans on this instruction set (auto: the best the CPU has) */
} options;


/* what the tables say about the run */
typedef struct run_info {
  char cpu[256], load0[64], load1[64], date[64], torch_version[128], ort_version[128];
  char dnnl_version[64];
  int have_torch, have_dnnl, have_ort;
} run_info;

static void usage(void) {
  fprintf(stderr, "usage: nets [--dir DIR] [--out DIR] [--runs N] [--warmup N] [--threads 1,2]\n"
                  "            [--python PATH|none] [--node PATH|none] [--ort DIR] [--no-dnnl]\n"
                  "            [--isa auto|avx512|avx2|neon|scalar] [name ...]   (names: file stems in DIR, e.g. resnet18.op13)\n");
  exit(2);
}

static void parse_thread_list(options *o) {
  const char *s = o->thread_list;
  while (*s && o->n_threads < MAX_THREADS) {
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s || v < 1 || v > 256)
      usage();
    o->threads[o->n_threads++] = (int)v;
    s = *e == ',' ? e + 1 : e;
    if (*e && *e != ',')
      usage();
  }
  if (!o->n_threads)
    usage();
}

static void parse_options(int argc, char **argv, options *o) {
  static const char *default_names[] = {"resnet18", "resnet50", "mobilenet_v2"};
  int i;
  memset(o, 0, sizeof *o);
  o->dir = "build/models", o->outdir = "bench/results", o->python = "/usr/bin/python3";
  o->node = "node", o->torch_script = "bench/nets_torch.py", o->ort_script = "bench/nets_ort.js";
  o->thread_list = "1,2", o->runs = 20, o->warmup = 3, o->with_dnnl = 1;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--no-dnnl")) {
      o->with_dnnl = 0;
      continue;
    }
    if (a[0] != '-') {
      if (o->n_names < MAX_NETS)
        o->names[o->n_names++] = a;
      continue;
    }
    if (!v)
      usage();
    i++;
    if (!strcmp(a, "--dir"))
      o->dir = v;
    else if (!strcmp(a, "--out"))
      o->outdir = v;
    else if (!strcmp(a, "--runs"))
      o->runs = atoi(v);
    else if (!strcmp(a, "--warmup"))
      o->warmup = atoi(v);
    else if (!strcmp(a, "--threads"))
      o->thread_list = v;
    else if (!strcmp(a, "--python"))
      o->python = v;
    else if (!strcmp(a, "--node"))
      o->node = v;
    else if (!strcmp(a, "--ort"))
      o->ort_dir = v;
    else if (!strcmp(a, "--isa")) {
      static const char *isas[] = {"auto", "scalar", "avx2", "avx512", "neon"};
      static const fuse_isa ids[] = {FUSE_ISA_AUTO, FUSE_ISA_SCALAR, FUSE_ISA_AVX2,
                                     FUSE_ISA_AVX512, FUSE_ISA_NEON};
      int k = 0;
      while (k < 5 && strcmp(v, isas[k])) k++;
      if (k == 5) usage();
      o->isa = ids[k];
    } else
      usage();
  }
  if (o->runs < 1)
    o->runs = 1;
  if (o->warmup < 1)
    o->warmup = 1;
  parse_thread_list(o);
  bench_isa = o->isa;
  if (!o->n_names)
    for (i = 0; i < 3; i++)
      o->names[o->n_names++] = default_names[i];
  if (!strcmp(o->python, "none"))
    o->python = NULL;
  if (!strcmp(o->node, "none"))
    o->node = NULL;
}

static void fmt_ms(char *buf, size_t n, double ms) {
  if (ms > 0)
    snprintf(buf, n, ms < 0.1 ? "%.4f" : "%.2f", ms); /* small nets take microseconds */
  else
    snprintf(buf, n, "n/a");
}

static void fmt_ratio(char *buf, size_t n, double num, double den) {
  if (num > 0 && den > 0)
    snprintf(buf, n, "%.2f", num / den);
  else
    snprintf(buf, n, "n/a");
}

static void fmt_error(char *buf, size_t n, double err) {
  if (err >= 0)
    snprintf(buf, n, "%.2g", err);
  else
    snprintf(buf, n, "n/a");
}

/* the speedup from 1 thread to threads[ti] (empty for the first column or without 1 thread) */
static void fmt_speedup(char *buf, size_t n, const options *o, int ti, const timing *tm) {
  if (o->threads[ti] == 1 || o->threads[0] != 1)
    buf[0] = 0;
  else
    fmt_ratio(buf, n, tm[0].ms, tm[ti].ms);
}

static void write_header(FILE *f, const options *o, const run_info *ri) {
  fprintf(f, "Networks: batch 1, FP32, fuse.h (fuse_run, NCHW in/out) against ONNX Runtime "
             "(onnxruntime-node) and PyTorch (TorchScript, optimize_for_inference).\n\n");
  fprintf(f, "- machine: %s, %ld logical CPUs; %s; load %s before, %s after (shared machine)\n",
          ri->cpu, sysconf(_SC_NPROCESSORS_ONLN), ri->date, ri->load0, ri->load1);
  fprintf(f,
          "- fuse.h %s, isa %s (--isa; fuse_cpu_isa: %s), fuse_optimize, pthread parallel_for for 2+ "
          "threads; %s%s\n",
          FUSE_VERSION_STRING, o->isa ? isa_name(o->isa) : "auto", isa_name(fuse_cpu_isa()),
          o->python ? ri->torch_version : "PyTorch: left out (--python none)",
          ri->have_torch ? ", torch.set_num_threads(N)" : "");
  fprintf(f, "- %s%s\n", o->node ? ri->ort_version : "ONNX Runtime: left out (--node none)",
          ri->have_ort ? " (Node), CPU execution provider, intraOpNumThreads N, interOpNumThreads "
                         "1, sequential, graphOptimizationLevel all"
                       : "");
  fprintf(f,
          "- medians of %d single runs after %d warm-up run%s (ms); ratio = other ms / fuse.h "
          "ms (above 1: fuse.h faster); speedup = 1-thread ms / N-thread ms\n\n",
          o->runs, o->warmup, o->warmup == 1 ? "" : "s");
  if (ri->have_dnnl)
    fprintf(f, "- via dnnl: the same net through fuse.h routed to oneDNN %s (fuse_optimize(g, "
               "\"dnnl\"), fuse_dnnl_backend(), NCHW in/out, oneDNN on N OpenMP threads)\n\n",
            ri->dnnl_version);
}

static void write_speed_table(FILE *f, const options *o, const net_result *res) {
  int ni, ti;
  fprintf(f, "| net | threads | fuse.h ms | ORT ms | ORT / fuse.h | PyTorch ms | PyTorch / fuse.h "
             "| fuse.h speedup | ORT speedup | PyTorch speedup | via dnnl ms | PyTorch / via "
             "dnnl | via dnnl speedup |\n");
  fprintf(f, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (ni = 0; ni < o->n_names; ni++) {
    const net_result *R = &res[ni];
    if (!R->files) {
      fprintf(f, "| %s | | not run: %s | | | | | | | | | | |\n", R->name, R->why);
      continue;
    }
    for (ti = 0; ti < o->n_threads; ti++) {
      char a[32], b[32], c[32], rb[32], rc[32], sa[32], sb[32], sc[32], d[32], rd[32], sd[32];
      fmt_ms(a, sizeof a, R->fuse[ti].ms);
      fmt_ms(b, sizeof b, R->ort[ti].ms);
      fmt_ms(c, sizeof c, R->torch[ti].ms);
      fmt_ms(d, sizeof d, R->dnnl[ti].ms);
      fmt_ratio(rb, sizeof rb, R->ort[ti].ms, R->fuse[ti].ms);
      fmt_ratio(rc, sizeof rc, R->torch[ti].ms, R->fuse[ti].ms);
      fmt_ratio(rd, sizeof rd, R->torch[ti].ms, R->dnnl[ti].ms);
      fmt_speedup(sa, sizeof sa, o, ti, R->fuse);
      fmt_speedup(sb, sizeof sb, o, ti, R->ort);
      fmt_speedup(sc, sizeof sc, o, ti, R->torch);
      fmt_speedup(sd, sizeof sd, o, ti, R->dnnl);
      fprintf(f, "| %s%s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
              R->name, R->mismatch ? " **MISMATCH**" : R->loaded ? "" : " (fuse.h: see below)",
              o->threads[ti], a, b, rb, c, rc, sa, sb, sc, d, rd, sd);
    }
  }
}

/* "a / b / c" of the per-thread-count values (MB or ms); n/a for those below `least` */
static void fmt_list(char *buf, size_t n, const double *v, int count, double least, double scale,
                     const char *format) {
  size_t used = 0;
  int i;
  buf[0] = 0;
  for (i = 0; i < count && used < n; i++) {
    if (i)
      used += (size_t)snprintf(buf + used, n - used, " / ");
    if (used < n)
      used += (size_t)(v[i] >= least ? snprintf(buf + used, n - used, format, v[i] * scale)
                                 : snprintf(buf + used, n - used, "n/a"));
  }
}

static void write_load_table(FILE *f, const options *o, const net_result *res) {
  int ni, ti;
  fprintf(f, "\n| net | fuse.h workspace (MB, %s) | weights (MB) | plan steps (compute + layout "
             "conversions) | fuse.h load + optimize + compile (ms) | ORT session create (ms, %s) "
             "| ORT create / fuse.h load | error fuse.h | error ORT | error PyTorch | via dnnl: "
             "steps on oneDNN (outputs kept in its layout) | error via dnnl |\n",
          o->thread_list, o->thread_list);
  fprintf(f, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (ni = 0; ni < o->n_names; ni++) {
    const net_result *R = &res[ni];
    char ws[128], oc[128], rl[32], fe[32], oe[32], te[32], ds[300], de[32], wt[32], st[64];
    char setup[32];
    double workspace[MAX_THREADS];
    if (!R->files)
      continue;
    for (ti = 0; ti < o->n_threads; ti++)
      workspace[ti] = (double)R->workspace[ti];
    fmt_list(ws, sizeof ws, workspace, o->n_threads, 0, 1e-6, "%.1f");
    fmt_list(oc, sizeof oc, R->ort_create_ms, o->n_threads, 1e-9, 1, "%.1f");
    fmt_ratio(rl, sizeof rl, R->ort_create_ms[0], R->setup_ms);
    snprintf(setup, sizeof setup, "%.1f", R->setup_ms);
    snprintf(wt, sizeof wt, "%.1f", (double)R->weights / 1e6);
    snprintf(st, sizeof st, "%d (%d + %d)", R->info.steps, R->info.compute_steps,
             R->info.conversions);
    if (!R->loaded)
      snprintf(setup, sizeof setup, "n/a"), snprintf(wt, sizeof wt, "n/a"),
          snprintf(st, sizeof st, "n/a"), snprintf(ws, sizeof ws, "n/a");
    fmt_error(fe, sizeof fe, R->fuse_err);
    fmt_error(oe, sizeof oe, R->ort_err);
    fmt_error(te, sizeof te, R->torch_err);
    fmt_error(de, sizeof de, R->dnnl_err);
    if (R->dnnl_err >= 0)
      snprintf(ds, sizeof ds, "%d (%d)", R->dnnl_steps, R->dnnl_kept);
    else
      snprintf(ds, sizeof ds, "n/a%s%s", R->dnnl_why[0] ? ": " : "", R->dnnl_why);
    fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", R->name, ws,
            wt, st, setup, oc, rl, fe, oe, te, ds, de);
  }
}

static void write_markdown(FILE *f, const options *o, const run_info *ri, const net_result *res) {
  int ni, n_init = 0;
  double init = 0;
  for (ni = 0; ni < o->n_names; ni++)
    if (res[ni].ort_init_ms > 0)
      init += res[ni].ort_init_ms, n_init++;
  write_header(f, o, ri);
  write_speed_table(f, o, res);
  write_load_table(f, o, res);
  fprintf(f,
          "\nworkspace: fuse_plan_workspace_size per thread count (activations and scratch); "
          "weights: fuse_plan_weights_size (the constants the plan keeps and the weights packed "
          "at compile); load: fuse.h's fuse_onnx_load_file + fuse_optimize + fuse_compile for "
          "the first thread count, against ORT's InferenceSession.create per thread count (a "
          "fresh session each; the ratio takes the first)");
  if (n_init)
    fprintf(f, ", not counting ORT's environment set-up done once per process before "
               "(%.0f ms on average here)", init / n_init);
  fprintf(f, "; errors: max|out - the exported output| / max|output|, tolerance %g.\n",
          TOLERANCE);
  for (ni = 0; ni < o->n_names; ni++)
    if (res[ni].files && !res[ni].loaded)
      fprintf(f, "\n- %s, not run by fuse.h: %s", res[ni].name, res[ni].why);
  fprintf(f, "\n");
}

static void write_csv_row(FILE *csv, const options *o, const net_result *R, int ti) {
  const timing *tf = &R->fuse[ti], *tt = &R->torch[ti], *td = &R->dnnl[ti], *to = &R->ort[ti];
  fprintf(csv, "%s,%d,", R->name, o->threads[ti]);
  if (tf->ms > 0)
    fprintf(csv, "%.4f,%.4f,%d,", tf->ms, tf->best_ms, tf->runs);
  else
    fprintf(csv, ",,,");
  if (tt->ms > 0)
    fprintf(csv, "%.4f,%.4f,%d,", tt->ms, tt->best_ms, tt->runs);
  else
    fprintf(csv, ",,,");
  if (tt->ms > 0 && tf->ms > 0)
    fprintf(csv, "%.4f", tt->ms / tf->ms);
  fprintf(csv, ",");
  if (o->threads[0] == 1 && R->fuse[0].ms > 0 && tf->ms > 0)
    fprintf(csv, "%.4f", R->fuse[0].ms / tf->ms);
  fprintf(csv, ",");
  if (o->threads[0] == 1 && R->torch[0].ms > 0 && tt->ms > 0)
    fprintf(csv, "%.4f", R->torch[0].ms / tt->ms);
  fprintf(csv, ",");
  if (R->fuse_err >= 0)
    fprintf(csv, "%.3g", R->fuse_err);
  fprintf(csv, ",");
  if (R->torch_err >= 0)
    fprintf(csv, "%.3g", R->torch_err);
  if (R->loaded)
    fprintf(csv, ",%lu,%d,%d,%d,%.1f,", (unsigned long)R->workspace[ti], R->info.steps,
            R->info.compute_steps, R->info.conversions, R->setup_ms);
  else
    fprintf(csv, ",,,,,,");
  fprintf(csv, "%s,", isa_name(bench_isa ? bench_isa : fuse_cpu_isa()));
  if (td->ms > 0)
    fprintf(csv, "%.4f,%.4f,%d,", td->ms, td->best_ms, td->runs);
  else
    fprintf(csv, ",,,");
  if (tt->ms > 0 && td->ms > 0)
    fprintf(csv, "%.4f", tt->ms / td->ms);
  fprintf(csv, ",");
  if (R->dnnl_err >= 0)
    fprintf(csv, "%.3g,%d,%d,", R->dnnl_err, R->dnnl_steps, R->dnnl_kept);
  else
    fprintf(csv, ",,,");
  if (to->ms > 0)
    fprintf(csv, "%.4f,%.4f,%d,", to->ms, to->best_ms, to->runs);
  else
    fprintf(csv, ",,,");
  if (to->ms > 0 && tf->ms > 0)
    fprintf(csv, "%.4f", to->ms / tf->ms);
  fprintf(csv, ",");
  if (o->threads[0] == 1 && R->ort[0].ms > 0 && to->ms > 0)
    fprintf(csv, "%.4f", R->ort[0].ms / to->ms);
  fprintf(csv, ",");
  if (R->ort_err >= 0)
    fprintf(csv, "%.3g", R->ort_err);
  fprintf(csv, ",");
  if (R->ort_create_ms[ti] > 0)
    fprintf(csv, "%.1f", R->ort_create_ms[ti]);
  fprintf(csv, ",");
  if (R->ort_init_ms > 0)
    fprintf(csv, "%.1f", R->ort_init_ms);
  fprintf(csv, "\n");
}

static void write_csv(FILE *csv, const options *o, const net_result *res) {
  int ni, ti;
  fprintf(csv, "net,threads,fuse_ms,fuse_best_ms,fuse_runs,torch_ms,torch_best_ms,torch_runs,"
               "ratio_torch_fuse,fuse_speedup,torch_speedup,fuse_relerr,torch_relerr,"
               "workspace_bytes,steps,compute_steps,conversions,setup_ms,isa,"
               "dnnl_ms,dnnl_best_ms,dnnl_runs,ratio_torch_dnnl,dnnl_relerr,dnnl_steps,dnnl_kept,"
               "ort_ms,ort_best_ms,ort_runs,ratio_ort_fuse,ort_speedup,ort_relerr,"
               "ort_create_ms,ort_init_ms\n");
  for (ni = 0; ni < o->n_names; ni++)
    if (res[ni].files)
      for (ti = 0; ti < o->n_threads; ti++)
        write_csv_row(csv, o, &res[ni], ti);
}

/* fuse.h, then ONNX Runtime, then PyTorch on one network; warnings on stderr */
static void run_net(net_result *R, const options *o, run_info *ri) {
  run_fuse_net(R, o->dir, o->threads, o->n_threads, o->runs, o->warmup, o->with_dnnl);
  if (!R->loaded)
    fprintf(stderr, "nets: %s: %s\n", R->name, R->why);
  if (!R->files)
    return;
  if (R->dnnl_err >= 0)
    ri->have_dnnl = 1;
  if (o->node && run_ort_net(R, o->node, o->ort_script, o->ort_dir, o->dir, o->thread_list,
                             o->runs, o->warmup, ri->ort_version, sizeof ri->ort_version,
                             o->threads, o->n_threads))
    ri->have_ort = 1;
  if (o->python && run_torch_net(R, o->python, o->torch_script, o->dir, o->thread_list, o->runs,
                                 o->warmup, ri->torch_version, sizeof ri->torch_version,
                                 o->threads, o->n_threads))
    ri->have_torch = 1;
  if (R->ort_err > TOLERANCE)
    fprintf(stderr, "nets: %s: ONNX Runtime's output differs from %s.output.bin by %.2g\n",
            R->name, R->name, R->ort_err);
  if (R->torch_err > TOLERANCE)
    fprintf(stderr, "nets: %s: PyTorch's output differs from %s.output.bin by %.2g (the "
                    "rebuilt weights are not the exported ones?)\n", R->name, R->name,
            R->torch_err);
}

/* nets.png: fuse.h time / ORT time per network, a bar per thread count (below 1: fuse.h is
   faster), from nets_chart.dat (written here: a row per network, a column per thread count,
   and a last row with the geometric mean). Needs gnuplot; returns 0 when the chart was made. */
static int write_chart(const options *o, const run_info *ri, const net_result *res) {
  char dat[1100], png[1100];
  double logsum[MAX_THREADS] = {0};
  int counted[MAX_THREADS] = {0}, ni, ti, st;
  FILE *f, *gp;
  snprintf(dat, sizeof dat, "%s/nets_chart.dat", o->outdir);
  snprintf(png, sizeof png, "%s/nets.png", o->outdir);
  if (!ri->have_ort || !(f = fopen(dat, "w")))
    return -1;
  for (ni = 0; ni < o->n_names; ni++) {
    const net_result *R = &res[ni];
    fprintf(f, "%s", R->name);
    for (ti = 0; ti < o->n_threads; ti++) {
      double a = R->fuse[ti].ms, b = R->ort[ti].ms;
      if (a > 0 && b > 0) {
        fprintf(f, " %.4f", a / b);
        logsum[ti] += log(a / b), counted[ti]++;
      } else {
        fprintf(f, " NaN");
      }
    }
    fprintf(f, "\n");
  }
  fprintf(f, "geomean");
  for (ti = 0; ti < o->n_threads; ti++)
    fprintf(f, " %.4f", counted[ti] ? exp(logsum[ti] / counted[ti]) : NAN);
  fprintf(f, "\n");
  fclose(f);
  if (!(gp = popen("gnuplot 2>&1", "w")))
    return -1;
  fprintf(gp, "set terminal pngcairo noenhanced size 1200,600 font 'sans,10'\n");
  fprintf(gp, "set output '%s'\n", png);
  fprintf(gp, "set title 'fuse.h time / ONNX Runtime time, batch 1, FP32 (below 1: fuse.h faster); "
              "%s, fuse.h isa %s'\n",
          ri->cpu, o->isa ? isa_name(o->isa) : isa_name(fuse_cpu_isa()));
  fprintf(gp, "set yrange [0:*]\nset grid ytics\nset key above horizontal\n");
  fprintf(gp, "set style data histograms\nset style histogram clustered gap 1\n");
  fprintf(gp, "set style fill solid 0.85 border -1\nset boxwidth 0.9\n");
  fprintf(gp, "set xtics rotate by -35 left font ',9'\nset bmargin 8\n");
  fprintf(gp, "plot");
  for (ti = 0; ti < o->n_threads; ti++)
    fprintf(gp, "%s '%s' using %d:xtic(1) title '%d thread%s'", ti ? "," : "", dat, ti + 2,
            o->threads[ti], o->threads[ti] == 1 ? "" : "s");
  fprintf(gp, ", 1 with lines lw 2 dt 2 lc rgb '#d62728' title 'ORT'\n");
  st = pclose(gp);
  return st;
}

int main(int argc, char **argv) {
  options o;
  run_info ri;
  int i, ni, any_files = 0, any_mismatch = 0;
  net_result *res;
  char path[1024];
  double t_start = now_s();
  time_t now = time(NULL);
  FILE *md, *csv;

  parse_options(argc, argv, &o);
  memset(&ri, 0, sizeof ri);
#if BENCH_DNNL
  {
    const dnnl_version_t *v = dnnl_version();
    snprintf(ri.dnnl_version, sizeof ri.dnnl_version, "%d.%d.%d", v->major, v->minor, v->patch);
  }
#endif
  cpu_model(ri.cpu, sizeof ri.cpu);
  load_avg(ri.load0, sizeof ri.load0);
  strftime(ri.date, sizeof ri.date, "%Y-%m-%d %H:%M %Z", localtime(&now));
  snprintf(ri.torch_version, sizeof ri.torch_version, "PyTorch: n/a");
  snprintf(ri.ort_version, sizeof ri.ort_version, "ONNX Runtime: n/a");

  res = (net_result *)calloc((size_t)o.n_names, sizeof *res);
  if (!res)
    die("main", "out of memory");
  for (ni = 0; ni < o.n_names; ni++) {
    net_result *R = &res[ni];
    R->name = o.names[ni];
    R->fuse_err = R->torch_err = R->dnnl_err = R->ort_err = R->ort_init_ms = -1;
    run_net(R, &o, &ri);
    any_files |= R->files;
    any_mismatch |= R->mismatch;
  }
  load_avg(ri.load1, sizeof ri.load1);
  if (!any_files) {
    fprintf(stderr,
            "nets: no model in %s; export them with\n"
            "  nice -n 19 /usr/bin/python3 tools/export_torchvision.py\n",
            o.dir);
    return 2;
  }

  snprintf(path, sizeof path, "%s/nets.md", o.outdir);
  md = fopen(path, "w");
  if (!md)
    fprintf(stderr, "nets: cannot write %s\n", path);
  for (i = 0; i < 2; i++)
    if (i == 0 || md)
      write_markdown(i == 0 ? stdout : md, &o, &ri, res);
  if (md)
    fclose(md);
  snprintf(path, sizeof path, "%s/nets.csv", o.outdir);
  csv = fopen(path, "w");
  if (!csv)
    die("cannot write", path);
  write_csv(csv, &o, res);
  fclose(csv);
  if (write_chart(&o, &ri, res) == 0)
    fprintf(stderr, "nets: wrote %s/nets.png\n", o.outdir);
  fprintf(stderr, "nets: %d network%s in %.1f s; wrote %s/nets.md, %s/nets.csv\n", o.n_names,
          o.n_names == 1 ? "" : "s", now_s() - t_start, o.outdir, o.outdir);
  free(res);
  return any_mismatch ? 1 : 0;
}
