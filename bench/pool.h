/* pool.h - shared by bench/layers.c and bench/nets.c (include after fuse.h):

   - a small pthread parallel_for for fuse_compile_options.parallel_for: pool_start(&p, n)
     starts n - 1 workers that wait for a job, pool_parallel_for splits [0, n) into n equal
     parts and runs the first in the caller, pool_stop(&p, w) joins them;
   - plan_steps(plan, &info): reads fuse_plan_write's description and counts the compute
     steps (every step but the layout conversions to_nhwc / to_nchw the planner adds around
     the SIMD convolutions) and finds the first conv2d step;
   - load_avg, cpu_model, isa_name: what the result tables say about the run. */
#ifndef BENCH_POOL_H
#define BENCH_POOL_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_UNUSED __attribute__((unused))
#else
#define BENCH_UNUSED
#endif

static BENCH_UNUSED void pool_fail(const char *why) {
  fprintf(stderr, "bench: threads: %s\n", why);
  exit(2);
}

typedef struct pool {
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  pthread_t *threads;
  int n; /* threads including the caller */
  long generation;
  int pending, quit;
  fuse_task_fn task;
  void *ctx;
  int total;
} pool;

typedef struct pool_worker {
  pool *p;
  int index; /* 1 .. n-1 */
} pool_worker;

static BENCH_UNUSED void pool_part(const pool *p, int index, int *b, int *e) {
  *b = (int)((long)p->total * index / p->n);
  *e = (int)((long)p->total * (index + 1) / p->n);
}

/* A job system keeps its workers hot between jobs: a worker (and the caller waiting for the
   parts) spins for a while on the job counter before it sleeps on the condition variable,
   as game engines' job systems and OpenMP's default policy do. fuse_run hands over one job
   per parallel step, tens per network, a few microseconds apart. */
#define POOL_SPINS 20000

static BENCH_UNUSED void pool_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static BENCH_UNUSED void *pool_main(void *arg) {
  pool_worker *w = (pool_worker *)arg;
  pool *p = w->p;
  long seen = 0;
  for (;;) {
    int b, e, spins;
    for (spins = 0; spins < POOL_SPINS && __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE) == seen &&
                    !__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE);
         spins++)
      pool_pause();
    pthread_mutex_lock(&p->mu);
    while (p->generation == seen && !p->quit)
      pthread_cond_wait(&p->go, &p->mu);
    if (p->quit) {
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    seen = p->generation;
    pool_part(p, w->index, &b, &e);
    pthread_mutex_unlock(&p->mu);
    if (b < e)
      p->task(p->ctx, b, e);
    if (__atomic_sub_fetch(&p->pending, 1, __ATOMIC_ACQ_REL) == 0) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

static BENCH_UNUSED void pool_parallel_for(void *user, fuse_task_fn task, void *ctx, int n) {
  pool *p = (pool *)user;
  int b, e, spins;
  if (n <= 0)
    return;
  if (n == 1 || p->n == 1) {
    task(ctx, 0, n);
    return;
  }
  pthread_mutex_lock(&p->mu);
  p->task = task;
  p->ctx = ctx;
  p->total = n;
  __atomic_store_n(&p->pending, p->n - 1, __ATOMIC_RELEASE);
  __atomic_add_fetch(&p->generation, 1, __ATOMIC_ACQ_REL);
  pthread_cond_broadcast(&p->go);
  pthread_mutex_unlock(&p->mu);
  pool_part(p, 0, &b, &e);
  if (b < e)
    task(ctx, b, e);
  for (spins = 0; spins < POOL_SPINS && __atomic_load_n(&p->pending, __ATOMIC_ACQUIRE) > 0; spins++)
    pool_pause();
  pthread_mutex_lock(&p->mu);
  while (__atomic_load_n(&p->pending, __ATOMIC_ACQUIRE) > 0)
    pthread_cond_wait(&p->done, &p->mu);
  pthread_mutex_unlock(&p->mu);
}

static BENCH_UNUSED pool_worker *pool_start(pool *p, int n) {
  pool_worker *w;
  int i;
  memset(p, 0, sizeof *p);
  p->n = n;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->go, NULL);
  pthread_cond_init(&p->done, NULL);
  p->threads = (pthread_t *)calloc((size_t)n, sizeof(pthread_t));
  w = (pool_worker *)calloc((size_t)n, sizeof *w);
  if (!p->threads || !w)
    pool_fail("out of memory");
  for (i = 1; i < n; i++) {
    w[i].p = p;
    w[i].index = i;
    if (pthread_create(&p->threads[i], NULL, pool_main, &w[i]) != 0)
      pool_fail("pthread_create");
  }
  return w;
}

static BENCH_UNUSED void pool_stop(pool *p, pool_worker *w) {
  int i;
  pthread_mutex_lock(&p->mu);
  __atomic_store_n(&p->quit, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&p->go);
  pthread_mutex_unlock(&p->mu);
  for (i = 1; i < p->n; i++)
    pthread_join(p->threads[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->go);
  pthread_cond_destroy(&p->done);
  free(p->threads);
  free(w);
}

/* ------------------------------------------------------------- plan steps -- */

typedef struct plan_info {
  int steps;         /* fuse_plan_step_count */
  int compute_steps; /* steps that are not to_nhwc / to_nchw */
  int conversions;   /* to_nhwc / to_nchw steps */
  int first_conv;    /* index of the first step whose op is conv2d; -1 = none */
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
  info->first_conv = -1;
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
        if (info->first_conv < 0 && !strncmp(op, "conv2d", 6) &&
            (op[6] == ' ' || op[6] == '\n' || op[6] == 0))
          info->first_conv = (int)index;
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
