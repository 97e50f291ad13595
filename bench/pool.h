/* pool.h - shared by bench/layers.c and bench/nets.c (include after fuse.h):

   - the job pool of examples/job_pool.h (pool_start, pool_parallel_for, pool_stop);
   - plan_steps(plan, &info): reads fuse_plan_write's description and counts the compute
     steps (every step but the layout conversions to_nhwc / to_nchw the planner adds around
     the SIMD convolutions) and finds the first conv2d step;
   - load_avg, cpu_model, isa_name: what the result tables say about the run. */
#ifndef BENCH_POOL_H
#define BENCH_POOL_H

#include "../examples/job_pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_UNUSED __attribute__((unused))
#else
#define BENCH_UNUSED
#endif

/* ------------------------------------------------------------- plan steps -- */

typedef struct plan_info {
  int steps;         /* fuse_plan_step_count */
  int compute_steps; /* steps that are not to_nhwc / to_nchw */
  int conversions;   /* to_nhwc / to_nchw steps */
  int first_conv;    /* index of the first step whose op is conv2d; -1 = none */
  int last_conv;     /* and of the last one */
} plan_info;

typedef struct plan_text {
  char *buf;
  size_t len, cap;
  int failed;
} plan_text;

static BENCH_UNUSED void plan_text_write(void *user, const char *text, size_t len) {
  plan_text *t = (plan_text *)user;
  if (t->failed)
    return;
  if (t->len + len + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    char *nb;
    while (cap < t->len + len + 1)
      cap *= 2;
    nb = (char *)realloc(t->buf, cap);
    if (!nb) {
      t->failed = 1;
      return;
    }
    t->buf = nb;
    t->cap = cap;
  }
  memcpy(t->buf + t->len, text, len);
  t->len += len;
  t->buf[t->len] = 0;
}

/* 1 when a step's op (its description after "step N: ") is a layout conversion */
static BENCH_UNUSED int plan_is_conversion(const char *op) {
  return (!strncmp(op, "to_nhwc", 7) || !strncmp(op, "to_nchw", 7)) &&
         (op[7] == ' ' || op[7] == 0 || op[7] == '\n');
}

/* Returns 0 when the description could not be read (then info counts every step as a
   compute step and first_conv is -1). */
static BENCH_UNUSED int plan_steps(const fuse_plan *plan, plan_info *info) {
  plan_text t;
  const char *line;
  memset(&t, 0, sizeof t);
  info->steps = fuse_plan_step_count(plan);
  info->compute_steps = info->steps;
  info->conversions = 0;
  info->first_conv = info->last_conv = -1;
  if (fuse_plan_write(plan, plan_text_write, &t) != FUSE_OK || t.failed || !t.buf) {
    free(t.buf);
    return 0;
  }
  info->compute_steps = 0;
  for (line = t.buf; *line;) {
    const char *end = strchr(line, '\n'), *op;
    long index;
    char *after;
    if (!end)
      end = line + strlen(line);
    if (!strncmp(line, "step ", 5)) {
      index = strtol(line + 5, &after, 10);
      op = after[0] == ':' && after[1] == ' ' ? after + 2 : after;
      if (plan_is_conversion(op))
        info->conversions++;
      else {
        info->compute_steps++;
        if (!strncmp(op, "conv2d", 6) && (op[6] == ' ' || op[6] == '\n' || op[6] == 0)) {
          if (info->first_conv < 0) info->first_conv = (int)index;
          info->last_conv = (int)index;
        }
      }
    }
    line = *end ? end + 1 : end;
  }
  free(t.buf);
  return 1;
}

/* ----------------------------------------------- what the tables say about the run -- */

BENCH_UNUSED static void load_avg(char *buf, size_t n) {
  FILE *f = fopen("/proc/loadavg", "r");
  double a = 0, b = 0, c = 0;
  snprintf(buf, n, "?");
  if (!f)
    return;
  if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
    snprintf(buf, n, "%.2f %.2f %.2f", a, b, c);
  fclose(f);
}

BENCH_UNUSED static void cpu_model(char *buf, size_t n) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  snprintf(buf, n, "unknown CPU");
  if (!f)
    return;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0) {
      char *p = strchr(line, ':'), *e;
      if (!p)
        break;
      p++;
      while (*p == ' ')
        p++;
      e = p + strlen(p);
      while (e > p && (e[-1] == '\n' || e[-1] == ' '))
        *--e = 0;
      snprintf(buf, n, "%s", p);
      break;
    }
  }
  fclose(f);
}

/* fuse_compile with the options in *o (isa, backends: the caller's) for `threads` threads,
   on the pool `workers` when more than one; NULL with fuse_compile's message in err. */
static BENCH_UNUSED fuse_plan *pool_compile(const fuse_graph *g, fuse_compile_options *o,
                                            int threads, pool *workers, char *err, size_t n) {
  fuse_plan *plan = NULL;
  o->num_threads = threads;
  if (threads > 1) {
    o->parallel_for = pool_parallel_for;
    o->parallel_user = workers;
  }
  o->error = err;
  o->error_size = n;
  err[0] = 0;
  return fuse_compile(g, o, &plan) == FUSE_OK ? plan : NULL;
}

BENCH_UNUSED static const char *isa_name(fuse_isa i) {
  return i == FUSE_ISA_AVX512   ? "avx512"
         : i == FUSE_ISA_AVX2   ? "avx2"
         : i == FUSE_ISA_SCALAR ? "scalar"
                                : "auto";
}

#endif
