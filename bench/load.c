/* bench/load.c - how fast a model loads, against reading its file, in the same process.

   For each ONNX file given, in a fresh child process per measurement (so that page cache and
   the allocator start alike and the child's peak RSS is the load's own), alternating:

     read       fopen + fread of the whole file into memory (the floor: what any loader pays)
     load       fuse_onnx_load_file + fuse_optimize(g, "fuse") + fuse_compile (1 thread)

   and prints the medians of REPEAT runs of each, their ratio (the models issue asks <= 2), and
   the peak resident memory of a load against file size + the plan's packed weights
   (fuse_plan_weights_size; the issue asks <= that + 10 %).

   Build and run:  make bench-load   (or: cc -O2 -I. bench/load.c -o build/bench_load -lm)
                   build/bench_load build/zoo/resnet18.op13.onnx ...  [REPEAT=5] */
#define _POSIX_C_SOURCE 200809L
#define FUSE_IMPLEMENTATION
#include "fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct result {
  double read_s, load_s, optimize_s, compile_s;
  double peak_mb, file_mb, weights_mb;
  int ok;
} result;

static void child(const char *path, int mode, int fd) {
  result r;
  FILE *f;
  struct rusage ru;
  memset(&r, 0, sizeof r);
  if (mode == 0) {
    double t0 = now_s();
    long size;
    void *data;
    f = fopen(path, "rb");
    if (!f) _exit(1);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    data = malloc((size_t)size);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) _exit(1);
    fclose(f);
    r.read_s = now_s() - t0;
    r.file_mb = (double)size / 1e6;
    r.ok = ((volatile unsigned char *)data)[size / 2] + 1 > 0;
    free(data);
  } else {
    fuse_graph *g = NULL;
    fuse_plan *p = NULL;
    fuse_compile_options opt;
    char err[512];
    double t0 = now_s(), t1, t2;
    if (fuse_onnx_load_file(path, NULL, &g) != FUSE_OK) {
      fprintf(stderr, "%s: %s\n", path, g ? fuse_graph_error(g) : "out of memory");
      _exit(1);
    }
    t1 = now_s();
    fuse_optimize(g, "fuse");
    t2 = now_s();
    memset(&opt, 0, sizeof opt);
    opt.num_threads = 1;
    opt.error = err;
    opt.error_size = sizeof err;
    if (fuse_compile(g, &opt, &p) != FUSE_OK) {
      fprintf(stderr, "%s: %s\n", path, err);
      _exit(1);
    }
    r.load_s = t1 - t0;
    r.optimize_s = t2 - t1;
    r.compile_s = now_s() - t2;
    r.weights_mb = (double)fuse_plan_weights_size(p) / 1e6;
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
    r.ok = 1;
  }
  getrusage(RUSAGE_SELF, &ru);
  r.peak_mb = (double)ru.ru_maxrss / 1e3; /* kilobytes on Linux */
  if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
  _exit(0);
}

static int measure(const char *path, int mode, result *r) {
  int fds[2], status;
  pid_t pid;
  if (pipe(fds) != 0) return 0;
  pid = fork();
  if (pid == 0) {
    close(fds[0]);
    child(path, mode, fds[1]);
  }
  close(fds[1]);
  memset(r, 0, sizeof *r);
  if (read(fds[0], r, sizeof *r) != (ssize_t)sizeof *r) r->ok = 0;
  close(fds[0]);
  waitpid(pid, &status, 0);
  return r->ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
  int repeat = getenv("REPEAT") ? atoi(getenv("REPEAT")) : 5, i, k, bad = 0;
  if (repeat < 1) repeat = 1;
  if (repeat > 64) repeat = 64;
  printf("%-40s %8s %8s %8s %8s %8s %6s %9s %9s %6s\n", "model", "file MB", "read s", "load s",
         "optim s", "compile s", "ratio", "peak MB", "file+plan", "peak/");
  for (i = 1; i < argc; i++) {
    double rd[64], ld[64], op[64], cp[64], tot[64], peak[64];
    result r, first;
    memset(&first, 0, sizeof first);
    for (k = 0; k < repeat; k++) { /* alternating, so noise hits both alike */
      if (!measure(argv[i], 0, &r)) break;
      rd[k] = r.read_s;
      first.file_mb = r.file_mb;
      if (!measure(argv[i], 1, &r)) break;
      ld[k] = r.load_s, op[k] = r.optimize_s, cp[k] = r.compile_s;
      tot[k] = r.load_s + r.optimize_s + r.compile_s;
      peak[k] = r.peak_mb;
      first.weights_mb = r.weights_mb;
    }
    if (k < repeat) {
      printf("%-40s failed\n", argv[i]);
      bad = 1;
      continue;
    }
    {
      double mrd = median(rd, k), mtot = median(tot, k), mpeak = median(peak, k);
      printf("%-40s %8.1f %8.3f %8.3f %8.3f %8.3f %6.2f %9.1f %9.1f %6.2f\n", argv[i],
             first.file_mb, mrd, median(ld, k), median(op, k), median(cp, k), mtot / mrd, mpeak,
             first.file_mb + first.weights_mb, mpeak / (first.file_mb + first.weights_mb));
    }
  }
  printf("medians of %d alternating runs; ratio = (load + optimize + compile) / read; peak = the "
         "loading child's maximum resident set\n", repeat);
  return bad;
}
