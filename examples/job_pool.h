/* job_pool.h - a small job system for fuse_compile_options.parallel_for, shared by
   examples/fuse_run.c and the benchmarks (include after fuse.h; link -lpthread):
   pool_start(&p, n) starts n - 1 workers that wait for a job, pool_parallel_for (the
   parallel_for, with &p as parallel_user) splits [0, n) into n equal parts and runs the first
   in the caller, pool_stop(&p, w) joins them. What a game engine's job system does: the
   library runs no threads of its own. */
#ifndef JOB_POOL_H
#define JOB_POOL_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define POOL_UNUSED __attribute__((unused))
#else
#define POOL_UNUSED
#endif

static POOL_UNUSED void pool_fail(const char *why) {
  fprintf(stderr, "threads: %s\n", why);
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

static POOL_UNUSED void pool_part(const pool *p, int index, int *b, int *e) {
  *b = (int)((long)p->total * index / p->n);
  *e = (int)((long)p->total * (index + 1) / p->n);
}

/* A job system keeps its workers hot between jobs: a worker (and the caller waiting for the
   parts) spins for a while on the job counter before it sleeps on the condition variable,
   as game engines' job systems and OpenMP's default policy do. fuse_run hands over one job
   per parallel step, tens per network, a few microseconds apart. */
#define POOL_SPINS 20000

static POOL_UNUSED void pool_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static POOL_UNUSED void *pool_main(void *arg) {
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

static POOL_UNUSED void pool_parallel_for(void *user, fuse_task_fn task, void *ctx, int n) {
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

static POOL_UNUSED pool_worker *pool_start(pool *p, int n) {
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

static POOL_UNUSED void pool_stop(pool *p, pool_worker *w) {
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

#endif
