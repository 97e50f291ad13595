/* host_threads.h - the host job system the tests hand fuse_compile_options.parallel_for:
   every chunk index 0 .. n - 1 runs on a pthread of its own (up to HOST_THREADS at once,
   then the next round), joined before returning; where a thread cannot be made, the chunk
   runs inline. What a game engine's job system does, without the pool. */
#ifndef HOST_THREADS_H
#define HOST_THREADS_H

#include <pthread.h>

#define HOST_THREADS 16

typedef struct host_job {
  fuse_task_fn task;
  void *ctx;
  int i;
} host_job;

static void *host_job_main(void *arg) {
  host_job *j = (host_job *)arg;
  j->task(j->ctx, j->i, j->i + 1);
  return NULL;
}

static void host_parallel_for(void *user, fuse_task_fn task, void *ctx, int n) {
  pthread_t th[HOST_THREADS];
  host_job jobs[HOST_THREADS];
  int i0, i, m, made[HOST_THREADS];
  (void)user;
  for (i0 = 0; i0 < n; i0 += HOST_THREADS) {
    m = n - i0 < HOST_THREADS ? n - i0 : HOST_THREADS;
    for (i = 0; i < m; i++) {
      jobs[i].task = task, jobs[i].ctx = ctx, jobs[i].i = i0 + i;
      made[i] = pthread_create(&th[i], NULL, host_job_main, &jobs[i]) == 0;
      if (!made[i]) host_job_main(&jobs[i]);
    }
    for (i = 0; i < m; i++)
      if (made[i]) pthread_join(th[i], NULL);
  }
}

#endif
