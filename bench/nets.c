/* nets.c - whole networks: resnet18, resnet50, mobilenet_v2 through fuse.h against PyTorch.

   For each network <name> in --dir (default build/models, written by
   `/usr/bin/python3 tools/export_torchvision.py`: <name>.onnx with batch norm folded,
   <name>.input.bin, <name>.output.bin):

     fuse.h    fuse_onnx_load_file, fuse_optimize, then for each thread count (--threads, 1,2 by
               default) fuse_compile with isa auto and num_threads = N (for N > 1 with the
               pthread parallel_for of bench/pool.h); fuse_run with the NCHW input and output
               and the plan's own workspace: --warmup runs (default 3), then --runs single runs
               (default 20) timed; the median and the fastest are reported. The output of the
               first run at each thread count is checked against PyTorch's (<name>.output.bin):
               max|got - want| / max|want| <= 1e-3, else the net is marked MISMATCH and the
               exit status is 1.
     via dnnl  when built with oneDNN (-DBENCH_DNNL=1 -ldnnl, as make bench-nets does where it
               is installed): the same file loaded again, fuse_optimize(g, "dnnl"), fuse_compile
               with fuse_dnnl_backend() (the composites run on oneDNN, tensors between two of
               its steps stay in its layout; pools and the rest on fuse.h's kernels with
               num_threads = N as above), oneDNN's OpenMP set to N threads
               (omp_set_num_threads); timed and checked the same way. --no-dnnl leaves it out
     PyTorch   bench/nets_torch.py, run once per network with --python (default
               /usr/bin/python3; "none" leaves it out): the same torchvision model (weights
               rebuilt as the export script makes them, its output checked against the same
               file), torch.jit.optimize_for_inference(torch.jit.script(model.eval())), batch
               1, torch.set_num_threads(N) for each N, the same warm-up / runs / median. When
               Python or torch is missing, its columns say n/a.

   Both run one after the other per network, fuse.h first. The ratio is PyTorch ms / fuse.h ms
   (above 1: fuse.h is faster); the speedup of N threads is (1-thread median) / (N-thread
   median) for each. Also per network: fuse_plan_workspace_size (the activations) and
   fuse_plan_weights_size (constants and packed weights), the plan's compute steps and its layout conversions
   (to_nhwc / to_nchw), and load + optimize + compile time.

   Output: a markdown table on stdout (also <out>/nets.md) and <out>/nets.csv (default
   bench/results). The machine is shared: compare ratios from one run, not absolute times
   across runs; the load average before and after is in the header.

   Build: cc -O2 -I. bench/nets.c -o build/nets -lm -lpthread     (make bench-nets)
          cc -O2 -I. -DBENCH_DNNL=1 bench/nets.c -o build/nets -ldnnl -ldl -lm -lpthread
   Run:   ./build/nets [--dir DIR] [--out DIR] [--runs N] [--warmup N] [--threads 1,2]
                       [--python PATH|none] [--no-dnnl] [name ...]   (from the repository root) */
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
  int loaded;                      /* 0: the model files are missing or did not load */
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
} net_result;

/* ------------------------------------------------------------------- fuse.h -- */

/* warm-up runs (the first checked against want: the largest error into *err), then `runs`
   timed single runs into *tm (t: room for runs doubles) */
static void time_plan(fuse_plan *plan, const float *x, float *y, size_t ny, const float *want,
                      int runs, int warmup, double *t, timing *tm, double *err) {
  const float *ins[1];
  float *outs[1];
  fuse_result r;
  int i;
  ins[0] = x, outs[0] = y;
  memset(y, 0, ny * sizeof *y);
  for (i = 0; i < (warmup > 0 ? warmup : 1); i++) {
    r = fuse_run(plan, ins, outs, NULL);
    if (r != FUSE_OK)
      die("fuse_run", fuse_result_string(r));
    if (i == 0) {
      double e = rel_error(y, want, ny);
      if (!(e <= *err))
        *err = e;
    }
  }
  for (i = 0; i < runs; i++) {
    double s = now_s();
    fuse_run(plan, ins, outs, NULL);
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
  *worker_mem = threads > 1 ? pool_start(workers, threads) : NULL;
  plan = pool_compile(g, &o, threads, workers, err, sizeof err);
  if (!plan)
    die(what, err);
  return plan;
}

/* The same network routed to oneDNN: loaded again, fuse_optimize(g, "dnnl"), compiled with
   fuse_dnnl_backend() for each thread count, timed as run_fuse_net does. */
static void run_dnnl_net(net_result *R, const char *path, const float *x, float *y, size_t ny,
                         const float *want, const int *threads, int n_threads, int runs,
                         int warmup, double *t) {
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
    time_plan(plan, x, y, ny, want, runs, warmup, t, &R->dnnl[ti], &R->dnnl_err);
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
  float *x = NULL, *want = NULL, *y = NULL;
  size_t nx = 0, nwant = 0, ny = 1;
  const int64_t *shape;
  int i, ti, rank;
  double t0 = now_s(), *t;

  snprintf(path, sizeof path, "%s/%s.input.bin", dir, R->name);
  x = read_floats(path, &nx);
  snprintf(path, sizeof path, "%s/%s.output.bin", dir, R->name);
  want = read_floats(path, &nwant);
  snprintf(path, sizeof path, "%s/%s.onnx", dir, R->name);
  if (!x || !want || access(path, R_OK) != 0) {
    snprintf(R->why, sizeof R->why, "%s/%s{.onnx,.input.bin,.output.bin} missing", dir, R->name);
    goto done;
  }
  r = fuse_onnx_load_file(path, NULL, &g);
  if (r != FUSE_OK) {
    snprintf(R->why, sizeof R->why, "fuse_onnx_load_file: %.200s", g ? fuse_graph_error(g) : "?");
    goto done;
  }
  if (fuse_graph_input_count(g) != 1 || fuse_graph_output_count(g) != 1) {
    snprintf(R->why, sizeof R->why, "expected one input and one output");
    goto done;
  }
  rank = fuse_value_rank(g, fuse_graph_input(g, 0));
  shape = fuse_value_shape(g, fuse_graph_input(g, 0));
  {
    size_t n = 1;
    for (i = 0; i < rank; i++)
      n *= (size_t)shape[i];
    if (n != nx) {
      snprintf(R->why, sizeof R->why, "input file has %lu floats, the model takes %lu",
               (unsigned long)nx, (unsigned long)n);
      goto done;
    }
  }
  rank = fuse_value_rank(g, fuse_graph_output(g, 0));
  shape = fuse_value_shape(g, fuse_graph_output(g, 0));
  for (i = 0; i < rank; i++)
    ny *= (size_t)shape[i];
  if (ny != nwant) {
    snprintf(R->why, sizeof R->why, "output file has %lu floats, the model gives %lu",
             (unsigned long)nwant, (unsigned long)ny);
    goto done;
  }
  if (fuse_optimize(g, NULL) != FUSE_OK) {
    snprintf(R->why, sizeof R->why, "fuse_optimize: %.200s", fuse_graph_error(g));
    goto done;
  }
  y = (float *)malloc(ny * sizeof *y);
  t = (double *)malloc((size_t)(runs > 0 ? runs : 1) * sizeof *t);
  if (!y || !t)
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
    time_plan(plan, x, y, ny, want, runs, warmup, t, &R->fuse[ti], &R->fuse_err);
    fuse_plan_destroy(plan);
    if (worker_mem)
      pool_stop(&workers, worker_mem);
    fprintf(stderr, "  %-14s fuse.h  %d thread%s %9.2f ms (fastest %.2f)\n", R->name,
            threads[ti], threads[ti] == 1 ? " " : "s", R->fuse[ti].ms, R->fuse[ti].best_ms);
  }
  if (!(R->fuse_err <= TOLERANCE))
    R->mismatch = 1;
  if (with_dnnl)
    run_dnnl_net(R, path, x, y, ny, want, threads, n_threads, runs, warmup, t);
  else
    snprintf(R->dnnl_why, sizeof R->dnnl_why, "left out (--no-dnnl)");
  free(t);
done:
  fuse_graph_destroy(g);
  free(x), free(want), free(y);
}

/* ------------------------------------------------------------------ PyTorch -- */

/* Runs bench/nets_torch.py for one network; its lines "result NAME THREADS MEDIAN_MS BEST_MS
   RUNS RELERR" fill R->torch. Returns 0 when nothing came back. */
static int run_torch_net(net_result *R, const char *python, const char *script, const char *dir,
                         const char *thread_list, int runs, int warmup, char *version,
                         size_t version_size, const int *threads, int n_threads) {
  char cmd[2048], line[512];
  FILE *p;
  int got = 0, ti;
  if (strchr(python, '\'') || strchr(script, '\'') || strchr(dir, '\'') || strchr(R->name, '\''))
    die("--python / --dir", "no quotes in paths, please");
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
      for (ti = 0; ti < n_threads; ti++)
        if (threads[ti] == th) {
          R->torch[ti].ms = ms, R->torch[ti].best_ms = best, R->torch[ti].runs = n;
          if (err >= 0 && !(err <= R->torch_err))
            R->torch_err = err;
          got = 1;
          fprintf(stderr, "  %-14s PyTorch %d thread%s %9.2f ms (fastest %.2f)\n", R->name, th,
                  th == 1 ? " " : "s", ms, best);
        }
    } else if (!strncmp(line, "torch ", 6)) {
      char *e = line + strlen(line);
      while (e > line && (e[-1] == '\n' || e[-1] == '\r'))
        *--e = 0;
      snprintf(version, version_size, "PyTorch %.100s", line + 6);
    } else
      fprintf(stderr, "  nets_torch.py: %s", line);
  }
  if (pclose(p) != 0)
    fprintf(stderr, "nets: %s exited with an error\n", script);
  return got;
}

/* --------------------------------------------------------------------- main -- */

static void usage(void) {
  fprintf(stderr, "usage: nets [--dir DIR] [--out DIR] [--runs N] [--warmup N] [--threads 1,2]\n"
                  "            [--python PATH|none] [--no-dnnl] [name ...]\n");
  exit(2);
}

static void fmt_ms(char *buf, size_t n, double ms) {
  if (ms > 0)
    snprintf(buf, n, "%.2f", ms);
  else
    snprintf(buf, n, "n/a");
}

static void fmt_ratio(char *buf, size_t n, double num, double den) {
  if (num > 0 && den > 0)
    snprintf(buf, n, "%.2f", num / den);
  else
    snprintf(buf, n, "n/a");
}

int main(int argc, char **argv) {
  const char *dir = "build/models", *outdir = "bench/results", *python = "/usr/bin/python3";
  const char *script = "bench/nets_torch.py", *thread_list = "1,2";
  const char *default_names[] = {"resnet18", "resnet50", "mobilenet_v2"};
  const char *names[MAX_NETS];
  int n_names = 0, runs = 20, warmup = 3, threads[MAX_THREADS], n_threads = 0, i, ni, ti;
  int any_loaded = 0, any_mismatch = 0, have_torch = 0, with_dnnl = 1, have_dnnl = 0;
  net_result *res;
  char cpu[256], load0[64], load1[64], date[64], torch_version[128], path[1024];
  char dnnl_version_text[64] = "";
  double t_start = now_s();
  time_t now = time(NULL);
  FILE *md, *csv;

  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dir") && i + 1 < argc)
      dir = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc)
      outdir = argv[++i];
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
      warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      thread_list = argv[++i];
    else if (!strcmp(argv[i], "--python") && i + 1 < argc)
      python = argv[++i];
    else if (!strcmp(argv[i], "--no-dnnl"))
      with_dnnl = 0;
    else if (argv[i][0] == '-')
      usage();
    else if (n_names < MAX_NETS)
      names[n_names++] = argv[i];
  }
  if (runs < 1)
    runs = 1;
  if (warmup < 1)
    warmup = 1;
  {
    const char *s = thread_list;
    while (*s && n_threads < MAX_THREADS) {
      char *e;
      long v = strtol(s, &e, 10);
      if (e == s || v < 1 || v > 256)
        usage();
      threads[n_threads++] = (int)v;
      s = *e == ',' ? e + 1 : e;
      if (*e && *e != ',')
        usage();
    }
    if (!n_threads)
      usage();
  }
  if (!n_names)
    for (i = 0; i < 3; i++)
      names[n_names++] = default_names[i];
  if (!strcmp(python, "none"))
    python = NULL;

#if BENCH_DNNL
  {
    const dnnl_version_t *v = dnnl_version();
    snprintf(dnnl_version_text, sizeof dnnl_version_text, "%d.%d.%d", v->major, v->minor,
             v->patch);
  }
#endif
  cpu_model(cpu, sizeof cpu);
  load_avg(load0, sizeof load0);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&now));
  snprintf(torch_version, sizeof torch_version, "PyTorch: n/a");

  res = (net_result *)calloc((size_t)n_names, sizeof *res);
  if (!res)
    die("main", "out of memory");
  for (ni = 0; ni < n_names; ni++) {
    net_result *R = &res[ni];
    R->name = names[ni];
    R->fuse_err = R->torch_err = R->dnnl_err = -1;
    run_fuse_net(R, dir, threads, n_threads, runs, warmup, with_dnnl);
    if (!R->loaded) {
      fprintf(stderr, "nets: %s: %s\n", R->name, R->why);
      continue;
    }
    any_loaded = 1;
    if (R->dnnl_err >= 0)
      have_dnnl = 1;
    if (R->mismatch)
      any_mismatch = 1;
    if (python && run_torch_net(R, python, script, dir, thread_list, runs, warmup, torch_version,
                                sizeof torch_version, threads, n_threads))
      have_torch = 1;
    if (R->torch_err > TOLERANCE)
      fprintf(stderr, "nets: %s: PyTorch's output differs from %s.output.bin by %.2g (the "
                      "rebuilt weights are not the exported ones?)\n", R->name, R->name,
              R->torch_err);
  }
  load_avg(load1, sizeof load1);
  if (!any_loaded) {
    fprintf(stderr,
            "nets: no model in %s; export them with\n"
            "  nice -n 19 /usr/bin/python3 tools/export_torchvision.py\n",
            dir);
    return 2;
  }

  /* ----- the table ----- */
  snprintf(path, sizeof path, "%s/nets.md", outdir);
  md = fopen(path, "w");
  if (!md)
    fprintf(stderr, "nets: cannot write %s\n", path);
  for (i = 0; i < 2; i++) {
    FILE *f = i == 0 ? stdout : md;
    if (!f)
      continue;
    fprintf(f, "Networks: batch 1, FP32, 224x224, fuse.h (fuse_run, NCHW in/out) against "
               "PyTorch (TorchScript, optimize_for_inference).\n\n");
    fprintf(f, "- machine: %s, %ld logical CPUs; %s; load %s before, %s after (shared machine)\n",
            cpu, sysconf(_SC_NPROCESSORS_ONLN), date, load0, load1);
    fprintf(f,
            "- fuse.h %s, isa %s (fuse_cpu_isa), fuse_optimize, pthread parallel_for for 2+ "
            "threads; %s%s\n",
            FUSE_VERSION_STRING, isa_name(fuse_cpu_isa()),
            python ? torch_version : "PyTorch: left out (--python none)",
            have_torch ? ", torch.set_num_threads(N)" : "");
    fprintf(f,
            "- medians of %d single runs after %d warm-up run%s (ms); ratio = PyTorch ms / fuse.h "
            "ms (above 1: fuse.h faster); speedup = 1-thread ms / N-thread ms\n\n",
            runs, warmup, warmup == 1 ? "" : "s");
    if (have_dnnl)
      fprintf(f, "- via dnnl: the same net through fuse.h routed to oneDNN %s (fuse_optimize(g, "
                 "\"dnnl\"), fuse_dnnl_backend(), NCHW in/out, oneDNN on N OpenMP threads)\n\n",
              dnnl_version_text);
    fprintf(f, "| net | threads | fuse.h ms | PyTorch ms | PyTorch / fuse.h | fuse.h speedup | "
               "PyTorch speedup | via dnnl ms | PyTorch / via dnnl | via dnnl speedup |\n");
    fprintf(f, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (ni = 0; ni < n_names; ni++) {
      const net_result *R = &res[ni];
      if (!R->loaded) {
        fprintf(f, "| %s | | not run: %s | | | | |\n", R->name, R->why);
        continue;
      }
      for (ti = 0; ti < n_threads; ti++) {
        char a[32], b[32], r[32], sa[32], sb[32], d[32], rd[32], sd[32];
        fmt_ms(a, sizeof a, R->fuse[ti].ms);
        fmt_ms(b, sizeof b, R->torch[ti].ms);
        fmt_ms(d, sizeof d, R->dnnl[ti].ms);
        fmt_ratio(r, sizeof r, R->torch[ti].ms, R->fuse[ti].ms);
        fmt_ratio(rd, sizeof rd, R->torch[ti].ms, R->dnnl[ti].ms);
        if (threads[ti] == 1 || threads[0] != 1) {
          snprintf(sa, sizeof sa, "%s", "");
          snprintf(sb, sizeof sb, "%s", "");
          snprintf(sd, sizeof sd, "%s", "");
        } else {
          fmt_ratio(sa, sizeof sa, R->fuse[0].ms, R->fuse[ti].ms);
          fmt_ratio(sb, sizeof sb, R->torch[0].ms, R->torch[ti].ms);
          fmt_ratio(sd, sizeof sd, R->dnnl[0].ms, R->dnnl[ti].ms);
        }
        fprintf(f, "| %s%s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", R->name,
                R->mismatch ? " **MISMATCH**" : "", threads[ti], a, b, r, sa, sb, d, rd, sd);
      }
    }
    fprintf(f, "\n| net | fuse.h workspace (MB, %s) | weights (MB) | plan steps (compute + layout conversions) | "
               "load + optimize + compile | error fuse.h | error PyTorch | via dnnl: steps on "
               "oneDNN (outputs kept in its layout) | error via dnnl |\n",
            thread_list);
    fprintf(f, "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (ni = 0; ni < n_names; ni++) {
      const net_result *R = &res[ni];
      char te[32], ws[128], ds[300], de[32];
      size_t used = 0;
      if (!R->loaded)
        continue;
      ws[0] = 0;
      for (ti = 0; ti < n_threads && used < sizeof ws; ti++)
        used += (size_t)snprintf(ws + used, sizeof ws - used, "%s%.1f", ti ? " / " : "",
                                 (double)R->workspace[ti] / 1e6);
      if (R->torch_err >= 0)
        snprintf(te, sizeof te, "%.2g", R->torch_err);
      else
        snprintf(te, sizeof te, "n/a");
      if (R->dnnl_err >= 0) {
        snprintf(ds, sizeof ds, "%d (%d)", R->dnnl_steps, R->dnnl_kept);
        snprintf(de, sizeof de, "%.2g", R->dnnl_err);
      } else {
        snprintf(ds, sizeof ds, "n/a: %s", R->dnnl_why);
        snprintf(de, sizeof de, "n/a");
      }
      fprintf(f, "| %s | %s | %.1f | %d (%d + %d) | %.0f ms | %.2g | %s | %s | %s |\n", R->name,
              ws, (double)R->weights / 1e6, R->info.steps, R->info.compute_steps,
              R->info.conversions, R->setup_ms, R->fuse_err, te, ds, de);
    }
    fprintf(f,
            "\nworkspace: fuse_plan_workspace_size per thread count (activations and scratch); "
            "weights: fuse_plan_weights_size (the constants the plan keeps and the weights packed "
            "at compile); errors: "
            "max|out - PyTorch's exported output| / max|output|, tolerance %g.\n",
            TOLERANCE);
  }
  if (md)
    fclose(md);

  /* ----- the CSV ----- */
  snprintf(path, sizeof path, "%s/nets.csv", outdir);
  csv = fopen(path, "w");
  if (!csv)
    die("cannot write", path);
  fprintf(csv, "net,threads,fuse_ms,fuse_best_ms,fuse_runs,torch_ms,torch_best_ms,torch_runs,"
               "ratio_torch_fuse,fuse_speedup,torch_speedup,fuse_relerr,torch_relerr,"
               "workspace_bytes,steps,compute_steps,conversions,setup_ms,isa,"
               "dnnl_ms,dnnl_best_ms,dnnl_runs,ratio_torch_dnnl,dnnl_relerr,dnnl_steps,dnnl_kept\n");
  for (ni = 0; ni < n_names; ni++) {
    const net_result *R = &res[ni];
    if (!R->loaded)
      continue;
    for (ti = 0; ti < n_threads; ti++) {
      fprintf(csv, "%s,%d,", R->name, threads[ti]);
      if (R->fuse[ti].ms > 0)
        fprintf(csv, "%.4f,%.4f,%d,", R->fuse[ti].ms, R->fuse[ti].best_ms, R->fuse[ti].runs);
      else
        fprintf(csv, ",,,");
      if (R->torch[ti].ms > 0)
        fprintf(csv, "%.4f,%.4f,%d,", R->torch[ti].ms, R->torch[ti].best_ms, R->torch[ti].runs);
      else
        fprintf(csv, ",,,");
      if (R->torch[ti].ms > 0 && R->fuse[ti].ms > 0)
        fprintf(csv, "%.4f", R->torch[ti].ms / R->fuse[ti].ms);
      fprintf(csv, ",");
      if (threads[0] == 1 && R->fuse[0].ms > 0 && R->fuse[ti].ms > 0)
        fprintf(csv, "%.4f", R->fuse[0].ms / R->fuse[ti].ms);
      fprintf(csv, ",");
      if (threads[0] == 1 && R->torch[0].ms > 0 && R->torch[ti].ms > 0)
        fprintf(csv, "%.4f", R->torch[0].ms / R->torch[ti].ms);
      fprintf(csv, ",%.3g,", R->fuse_err);
      if (R->torch_err >= 0)
        fprintf(csv, "%.3g", R->torch_err);
      fprintf(csv, ",%lu,%d,%d,%d,%.1f,%s,", (unsigned long)R->workspace[ti], R->info.steps,
              R->info.compute_steps, R->info.conversions, R->setup_ms, isa_name(fuse_cpu_isa()));
      if (R->dnnl[ti].ms > 0)
        fprintf(csv, "%.4f,%.4f,%d,", R->dnnl[ti].ms, R->dnnl[ti].best_ms, R->dnnl[ti].runs);
      else
        fprintf(csv, ",,,");
      if (R->torch[ti].ms > 0 && R->dnnl[ti].ms > 0)
        fprintf(csv, "%.4f", R->torch[ti].ms / R->dnnl[ti].ms);
      fprintf(csv, ",");
      if (R->dnnl_err >= 0)
        fprintf(csv, "%.3g,%d,%d\n", R->dnnl_err, R->dnnl_steps, R->dnnl_kept);
      else
        fprintf(csv, ",,\n");
    }
  }
  fclose(csv);
  fprintf(stderr, "nets: %d network%s in %.1f s; wrote %s/nets.md, %s/nets.csv\n", n_names,
          n_names == 1 ? "" : "s", now_s() - t_start, outdir, outdir);
  free(res);
  return any_mismatch ? 1 : 0;
}
