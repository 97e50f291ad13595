/* tests/run/memory.c - part of test_run (one program: the implementation compiled once, with the
   counting FUSE_MALLOC): the memory plan, caller workspaces, concurrent runs, allocation
   accounting and failures, compile, determinism. */

/* -------------------------------------------------------------- memory plan -- */

TEST(long_chain_workspace_reuse) {
  enum { C = 16, HW = 32 * 32, N = C * HW, OPS = 50 };
  int64_t s[4] = {1, C, 32, 32}, cs[3] = {C, 1, 1};
  float *x = frandom(N, 2000), *y = falloc(N), *want = falloc(N), cvec[C];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value v = fuse_input(g, "x", 4, s), vc;
  fuse_plan *p = NULL;
  size_t ws, tensor = (size_t)N * sizeof(float);
  const float *in[1];
  float *out[1];
  int k, i;
  double acc;
  fill(cvec, C, 2001);
  vc = fuse_constant(g, "c", 3, cs, cvec);
  memcpy(want, x, tensor);
  for (k = 0; k < OPS; k++) {
    switch (k % 5) {
      case 0:
        v = fuse_add(g, v, vc);
        for (i = 0; i < N; i++) want[i] = want[i] + cvec[i / HW];
        break;
      case 1:
        v = fuse_mul(g, fuse_scalar(g, 0.75f), v);
        for (i = 0; i < N; i++) want[i] = 0.75f * want[i];
        break;
      case 2:
        v = fuse_clip(g, v, -1.5f, 1.5f);
        for (i = 0; i < N; i++) want[i] = want[i] < -1.5f ? -1.5f : want[i] > 1.5f ? 1.5f : want[i];
        break;
      case 3:
        v = fuse_sigmoid(g, v);
        for (i = 0; i < N; i++) {
          acc = 1.0 / (1.0 + exp(-(double)want[i]));
          want[i] = (float)acc;
        }
        break;
      default:
        v = fuse_sub(g, v, fuse_scalar(g, 0.5f));
        for (i = 0; i < N; i++) want[i] = want[i] - 0.5f;
        break;
    }
  }
  fuse_output(g, v);
  CHECK_EQ_INT(fuse_graph_op_count(g), OPS);
  CHECK_EQ_INT(fuse_compile(g, &g_opt, &p), FUSE_OK);
  if (p) {
    ws = fuse_plan_workspace_size(p);
    printf("  chain of %d ops on %zu-byte tensors: workspace %zu bytes (%.2f tensors)\n", OPS,
           tensor, ws, (double)ws / (double)tensor);
    CHECK(ws <= 3 * tensor + 4096);
    in[0] = x; out[0] = y;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
    CHECK_NEAR_ARRAY(y, want, N, TOL);
    fuse_plan_destroy(p);
  }
  fuse_graph_destroy(g);
  free(x); free(y); free(want);
}

TEST(diamond_graph_liveness) {
  /* a = relu(x) stays live across five branches that are combined in an unbalanced tree; a
     planner that reuses a's buffer (or a branch's) while it is still needed gives wrong data */
  enum { N = 2 * 8 * 9 * 9 };
  int64_t s[4] = {2, 8, 9, 9};
  float *x = frandom(N, 2100), *y = falloc(N), *y2 = falloc(N), *want = falloc(N), *want2 = falloc(N);
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value vx = fuse_input(g, "x", 4, s);
  fuse_value a = fuse_relu(g, vx);
  fuse_value b1 = fuse_sigmoid(g, a);
  fuse_value b2 = fuse_mul(g, a, fuse_scalar(g, 2.0f));
  fuse_value b3 = fuse_sub(g, a, vx);
  fuse_value b4 = fuse_clip(g, b2, 0.1f, 0.9f);
  fuse_value b5 = fuse_maximum(g, b1, b3);
  fuse_value m1 = fuse_add(g, b1, b2);
  fuse_value m2 = fuse_mul(g, m1, b4);
  fuse_value m3 = fuse_sub(g, m2, b5);
  fuse_value m4 = fuse_add(g, m3, a);
  fuse_value m5 = fuse_minimum(g, m4, b3); /* b3 is used by the second-last op */
  const float *in[1];
  float *out[2];
  int i;
  fuse_output(g, m5);
  fuse_output(g, m2);
  for (i = 0; i < N; i++) {
    double va = x[i] > 0 ? x[i] : 0;
    double v1 = (float)(1.0 / (1.0 + exp(-va))), v2 = (float)(va * 2.0), v3 = (float)(va - x[i]);
    double v4 = v2 < 0.1f ? 0.1f : v2 > 0.9f ? 0.9f : v2, v5 = v1 > v3 ? v1 : v3;
    double n1 = (float)(v1 + v2), n2 = (float)(n1 * v4), n3 = (float)(n2 - v5);
    double n4 = (float)(n3 + va);
    want[i] = (float)(n4 < v3 ? n4 : v3);
    want2[i] = (float)n2;
  }
  in[0] = x; out[0] = y; out[1] = y2;
  CHECK(run_graph(g, in, out));
  CHECK_NEAR_ARRAY(y, want, N, TOL);
  CHECK_NEAR_ARRAY(y2, want2, N, TOL);
  fuse_graph_destroy(g);
  free(x); free(y); free(y2); free(want); free(want2);
}

/* --------------------------------------------------------------- workspace -- */

/* A conv net used by several tests: conv3x3 -> +bias -> relu -> conv3x3/2 -> + pooled input
   skip -> sigmoid, plus a matmul head. Weights from fixed seeds. */
typedef struct net {
  fuse_graph *g;
  float w1[16 * 8 * 9], b1[16], w2[8 * 16 * 9], fc[8 * 36 * 10];
} net;
#define NET_IN (1 * 8 * 12 * 12)
#define NET_OUT0 (1 * 8 * 6 * 6)
#define NET_OUT1 (1 * 8 * 10)

static fuse_graph *net_build(net *n, const fuse_allocator *alloc) {
  int64_t xs[4] = {1, 8, 12, 12}, w1s[4] = {16, 8, 3, 3}, b1s[3] = {16, 1, 1};
  int64_t w2s[4] = {8, 16, 3, 3}, fcs[2] = {36, 10}, rs[3] = {1, 8, 36};
  fuse_graph *g = fuse_graph_create(alloc);
  fuse_conv2d_attrs c1, c2;
  fuse_pool2d_attrs pa;
  fuse_value x, v, skip, y, head;
  fill(n->w1, sizeof n->w1 / sizeof(float), 3000);
  fill(n->b1, 16, 3001);
  fill(n->w2, sizeof n->w2 / sizeof(float), 3002);
  fill(n->fc, sizeof n->fc / sizeof(float), 3003);
  n->g = g;
  if (!g) return NULL;
  memset(&c1, 0, sizeof c1);
  memset(&c2, 0, sizeof c2);
  memset(&pa, 0, sizeof pa);
  c1.padding[0] = c1.padding[1] = c1.padding[2] = c1.padding[3] = 1;
  c2 = c1;
  c2.strides[0] = c2.strides[1] = 2;
  pa.kernel[0] = pa.kernel[1] = 2;
  pa.strides[0] = pa.strides[1] = 2;
  x = fuse_input(g, "x", 4, xs);
  v = fuse_conv2d(g, x, fuse_constant(g, "w1", 4, w1s, n->w1), &c1);
  v = fuse_add(g, v, fuse_constant(g, "b1", 3, b1s, n->b1));
  v = fuse_relu(g, v);
  v = fuse_conv2d(g, v, fuse_constant(g, "w2", 4, w2s, n->w2), &c2);
  skip = fuse_avg_pool2d(g, x, &pa);
  y = fuse_sigmoid(g, fuse_add(g, skip, v));
  head = fuse_matmul(g, fuse_reshape(g, y, 3, rs), fuse_constant(g, "fc", 2, fcs, n->fc));
  fuse_output(g, y);
  fuse_output(g, head);
  return g;
}

/* oracle for the net */
static void net_ref(const net *n, const float *x, float *y, float *head) {
  static float t1[16 * 144], t2[NET_OUT0];
  int64_t ys[3] = {1, 8, 36}, fcs[2] = {36, 10}, so[3];
  fuse_pool2d_attrs pa;
  float skip[NET_OUT0];
  int i, ro;
  ref_conv2d(x, n->w1, t1, 1, 8, 12, 12, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 12, 12);
  for (i = 0; i < 16 * 144; i++) {
    float t = t1[i] + n->b1[i / 144];
    t1[i] = t > 0 ? t : 0;
  }
  ref_conv2d(t1, n->w2, t2, 1, 16, 12, 12, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 6, 6);
  memset(&pa, 0, sizeof pa);
  pa.kernel[0] = pa.kernel[1] = 2;
  pa.strides[0] = pa.strides[1] = 2;
  ref_avg_pool(x, skip, 8, 12, 12, 6, 6, &pa);
  for (i = 0; i < NET_OUT0; i++) y[i] = (float)(1.0 / (1.0 + exp(-(double)(skip[i] + t2[i]))));
  ref_matmul(y, 3, ys, n->fc, 2, fcs, head, &ro, so);
}

static void *aligned64(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n ? n : 64)) return NULL;
  return p;
}

TEST(workspace_null_vs_caller) {
  net n;
  fuse_graph *g = net_build(&n, NULL);
  fuse_plan *p = NULL;
  float x[NET_IN], y0[NET_OUT0], h0[NET_OUT1], y1[NET_OUT0], h1[NET_OUT1];
  float wy[NET_OUT0], wh[NET_OUT1];
  const float *in[1];
  float *out[2];
  size_t ws;
  void *block;
  fill(x, NET_IN, 3100);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, &g_opt, &p), FUSE_OK);
  fuse_graph_destroy(g);
  if (!p) return;
  ws = fuse_plan_workspace_size(p);
  CHECK(ws > 0); /* the net has intermediates */
  block = aligned64(ws);
  memset(block, 0xff, ws ? ws : 64); /* NaN garbage: results must not depend on it */
  in[0] = x;
  out[0] = y0; out[1] = h0;
  CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
  out[0] = y1; out[1] = h1;
  CHECK_EQ_INT(fuse_run(p, in, out, block), FUSE_OK);
  CHECK(memcmp(y0, y1, sizeof y0) == 0);
  CHECK(memcmp(h0, h1, sizeof h0) == 0);
  net_ref(&n, x, wy, wh);
  CHECK_NEAR_ARRAY(y0, wy, NET_OUT0, TOL);
  CHECK_NEAR_ARRAY(h0, wh, NET_OUT1, TOL);
  memset(block, 0x00, ws ? ws : 64); /* different garbage, same bytes out */
  CHECK_EQ_INT(fuse_run(p, in, out, block), FUSE_OK);
  CHECK(memcmp(y0, y1, sizeof y0) == 0);
  CHECK(memcmp(h0, h1, sizeof h0) == 0);
  free(block);
  fuse_plan_destroy(p);
}

/* Runs one fuse_run in a child process: its result code, or 1000 + signal / 2000 + exit
   status when the child crashed or aborted (a sanitizer report exits with status 1). */
typedef struct bad_run {
  fuse_plan *p; const float *const *in; float *const *out; void *ws;
} bad_run;
static int run_in_child(const bad_run *b) {
  pid_t pid;
  int st = 0;
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid == 0) {
    fuse_result r = fuse_run(b->p, b->in, b->out, b->ws);
    _exit(100 + (int)r);
  }
  if (pid < 0) return fuse_run(b->p, b->in, b->out, b->ws);
  waitpid(pid, &st, 0);
  if (WIFSIGNALED(st)) return 1000 + WTERMSIG(st);
  if (WIFEXITED(st) && WEXITSTATUS(st) >= 90 && WEXITSTATUS(st) <= 110)
    return WEXITSTATUS(st) - 100;
  return 2000 + (WIFEXITED(st) ? WEXITSTATUS(st) : 0);
}

TEST(run_bad_arguments) {
  net n;
  fuse_graph *g = net_build(&n, NULL);
  fuse_plan *p = NULL;
  float x[NET_IN], y[NET_OUT0], h[NET_OUT1];
  const float *in[1];
  float *out[2];
  const float *in_null[1];
  float *out_null[2];
  size_t ws;
  char *block;
  bad_run b;
  fill(x, NET_IN, 3200);
  CHECK_EQ_INT(fuse_compile(g, &g_opt, &p), FUSE_OK);
  fuse_graph_destroy(g);
  if (!p) return;
  ws = fuse_plan_workspace_size(p);
  block = (char *)aligned64(ws + 128);
  in[0] = x; out[0] = y; out[1] = h;
  b.p = NULL; b.in = in; b.out = out; b.ws = NULL;
  CHECK_EQ_INT(run_in_child(&b), FUSE_ERROR_INVALID_ARGUMENT);
  b.p = p; b.in = NULL;
  CHECK_EQ_INT(run_in_child(&b), FUSE_ERROR_INVALID_ARGUMENT);
  b.in = in; b.out = NULL;
  CHECK_EQ_INT(run_in_child(&b), FUSE_ERROR_INVALID_ARGUMENT);
  b.out = out; b.ws = block + 16; /* float-aligned but not 64-byte aligned */
  CHECK_EQ_INT(run_in_child(&b), FUSE_ERROR_INVALID_ARGUMENT);
  b.ws = block + 1;
  CHECK_EQ_INT(run_in_child(&b), FUSE_ERROR_INVALID_ARGUMENT);
  b.ws = block + 32;
  CHECK_EQ_INT(run_in_child(&b), FUSE_ERROR_INVALID_ARGUMENT);
  /* the same calls in this process (they must fail before touching anything) */
  CHECK_EQ_INT(fuse_run(NULL, in, out, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_run(p, NULL, out, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_run(p, in, NULL, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_run(p, in, out, block + 16), FUSE_ERROR_INVALID_ARGUMENT);
  /* a NULL pointer inside the arrays is a NULL-pointer argument too */
  in_null[0] = NULL;
  out_null[0] = y; out_null[1] = NULL;
  b.in = in_null; b.out = out; b.ws = NULL;
  CHECK_EQ_INT(run_in_child(&b), FUSE_ERROR_INVALID_ARGUMENT);
  b.in = in; b.out = out_null;
  CHECK_EQ_INT(run_in_child(&b), FUSE_ERROR_INVALID_ARGUMENT);
  /* the plan still works after all that */
  CHECK_EQ_INT(fuse_run(p, in, out, block), FUSE_OK);
  CHECK(all_finite(y, NET_OUT0));
  fuse_plan_destroy(NULL); /* no-op */
  free(block);
  fuse_plan_destroy(p);
}

/* ------------------------------------------------------------- concurrency -- */

enum { THREADS = 4, RUNS = 50 };
typedef struct worker {
  fuse_plan *p;
  void *ws;
  const float *inputs; /* THREADS * RUNS inputs of NET_IN */
  const float *serial0, *serial1;
  int tid, mismatches, errors;
} worker;

static void *worker_main(void *arg) {
  worker *w = (worker *)arg;
  float y[NET_OUT0], h[NET_OUT1];
  int i;
  for (i = 0; i < RUNS; i++) {
    size_t k = (size_t)w->tid * RUNS + (size_t)i;
    const float *in[1];
    float *out[2];
    in[0] = w->inputs + k * NET_IN;
    out[0] = y; out[1] = h;
    if (fuse_run(w->p, in, out, w->ws) != FUSE_OK) w->errors++;
    if (memcmp(y, w->serial0 + k * NET_OUT0, sizeof y) != 0 ||
        memcmp(h, w->serial1 + k * NET_OUT1, sizeof h) != 0)
      w->mismatches++;
  }
  return NULL;
}

TEST(concurrent_runs_bit_exact) {
  net n;
  fuse_graph *g = net_build(&n, NULL);
  fuse_plan *p = NULL;
  float *inputs = falloc((size_t)THREADS * RUNS * NET_IN);
  float *s0 = falloc((size_t)THREADS * RUNS * NET_OUT0), *s1 = falloc((size_t)THREADS * RUNS * NET_OUT1);
  worker w[THREADS];
  pthread_t th[THREADS];
  int t, k, started[THREADS];
  float wy[NET_OUT0], wh[NET_OUT1];
  CHECK_EQ_INT(fuse_compile(g, &g_opt, &p), FUSE_OK);
  fuse_graph_destroy(g);
  if (!p) { free(inputs); free(s0); free(s1); return; }
  for (k = 0; k < THREADS * RUNS; k++) {
    const float *in[1];
    float *out[2];
    fill(inputs + (size_t)k * NET_IN, NET_IN, 4000 + (uint32_t)k);
    in[0] = inputs + (size_t)k * NET_IN;
    out[0] = s0 + (size_t)k * NET_OUT0; out[1] = s1 + (size_t)k * NET_OUT1;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
  }
  net_ref(&n, inputs + 17 * NET_IN, wy, wh); /* spot check the serial results */
  CHECK_NEAR_ARRAY(s0 + 17 * NET_OUT0, wy, NET_OUT0, TOL);
  CHECK_NEAR_ARRAY(s1 + 17 * NET_OUT1, wh, NET_OUT1, TOL);
  for (t = 0; t < THREADS; t++) {
    w[t].p = p;
    w[t].ws = aligned64(fuse_plan_workspace_size(p));
    memset(w[t].ws, 0xa5, fuse_plan_workspace_size(p));
    w[t].inputs = inputs;
    w[t].serial0 = s0;
    w[t].serial1 = s1;
    w[t].tid = t;
    w[t].mismatches = w[t].errors = 0;
  }
  for (t = 0; t < THREADS; t++) started[t] = pthread_create(&th[t], NULL, worker_main, &w[t]) == 0;
  for (t = 0; t < THREADS; t++) {
    CHECK(started[t]);
    if (started[t]) pthread_join(th[t], NULL);
    CHECK_EQ_INT(w[t].errors, 0);
    CHECK_EQ_INT(w[t].mismatches, 0);
    free(w[t].ws);
  }
  fuse_plan_destroy(p);
  free(inputs); free(s0); free(s1);
}

/* -------------------------------------------------------------- allocation -- */

typedef struct counter {
  long calls, allocs, frees, fail_at, injected, bad_align;
  int fail_after; /* 1: every call from fail_at on fails, 0: only that one */
} counter;

static void *cnt_alloc(size_t size, size_t alignment, void *user) {
  counter *c = (counter *)user;
  void *p = NULL;
  c->calls++;
  if (c->fail_at && (c->calls == c->fail_at || (c->fail_after && c->calls > c->fail_at))) {
    c->injected++;
    return NULL;
  }
  if (alignment == 0 || (alignment & (alignment - 1)) || alignment > 64) c->bad_align++;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  if (posix_memalign(&p, alignment, size ? size : 1)) return NULL;
  c->allocs++;
  return p;
}
static void cnt_free(void *p, void *user) {
  counter *c = (counter *)user;
  if (!p) return;
  c->frees++;
  free(p);
}

TEST(run_allocates_nothing) {
  counter c;
  fuse_allocator al;
  net n;
  fuse_graph *g;
  fuse_plan *p = NULL;
  float x[NET_IN], y[NET_OUT0], h[NET_OUT1], wy[NET_OUT0], wh[NET_OUT1];
  const float *in[1];
  float *out[2];
  long calls, dm, df;
  void *block;
  int i;
  memset(&c, 0, sizeof c);
  al.alloc = cnt_alloc; al.free = cnt_free; al.user = &c;
  dm = test_default_mallocs; df = test_default_frees;
  g = net_build(&n, &al);
  CHECK(g != NULL);
  if (!g) return;
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK(c.allocs > 0); /* the graph uses the allocator it was given */
  CHECK_EQ_INT(fuse_compile(g, &g_opt, &p), FUSE_OK);
  if (!p) { fuse_graph_destroy(g); return; }
  fill(x, NET_IN, 5000);
  in[0] = x; out[0] = y; out[1] = h;
  calls = c.calls;
  fuse_graph_destroy(g); /* frees only the graph's blocks */
  CHECK(c.calls == calls);
  calls = c.calls;
  block = aligned64(fuse_plan_workspace_size(p));
  for (i = 0; i < 5; i++) {
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_run(p, in, out, block), FUSE_OK);
  }
  CHECK_EQ_INT(c.calls, calls); /* fuse_run allocated nothing through the allocator */
  net_ref(&n, x, wy, wh);
  CHECK_NEAR_ARRAY(y, wy, NET_OUT0, TOL);
  CHECK_NEAR_ARRAY(h, wh, NET_OUT1, TOL);
  fuse_plan_destroy(p);
  free(block);
  CHECK_EQ_INT(c.frees, c.allocs);
  CHECK_EQ_INT(c.bad_align, 0);
  /* with a custom allocator nothing goes through the default FUSE_MALLOC */
  CHECK_EQ_INT(test_default_mallocs - dm, 0);
  CHECK_EQ_INT(test_default_frees - df, 0);

  /* default allocator: fuse_run does not call FUSE_MALLOC either */
  g = net_build(&n, NULL);
  p = NULL;
  CHECK_EQ_INT(fuse_compile(g, &g_opt, &p), FUSE_OK);
  fuse_graph_destroy(g);
  if (p) {
    dm = test_default_mallocs;
    for (i = 0; i < 5; i++) CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
    CHECK_EQ_INT(test_default_mallocs - dm, 0);
    fuse_plan_destroy(p);
  }
  CHECK_EQ_INT(test_default_mallocs, test_default_frees);
}

/* Builds a graph that touches every builder, compiles and runs it, with an allocator that
   fails on call N. Returns 1 when everything succeeded, 0 when an OOM was reported. */
static int oom_round(counter *c, long fail_at, int fail_after) {
  fuse_allocator al;
  fuse_graph *g;
  fuse_plan *p = NULL;
  fuse_result r;
  int64_t xs[4] = {1, 4, 8, 8}, ws[4] = {6, 4, 3, 3}, bs[1] = {6}, br[4] = {1, 6, 1, 1};
  int64_t fs[2] = {24, 5}, rs[2] = {-1, 24};
  float w[6 * 4 * 9], b[6], fc[120], bn[6] = {1, 2, 3, 4, 5, 6};
  fuse_conv2d_attrs ca;
  fuse_pool2d_attrs pa;
  fuse_value x, v, v2, vs[2], out1, out2;
  int ok = 1, bad_seen = 0;
  memset(c, 0, sizeof *c);
  c->fail_at = fail_at;
  c->fail_after = fail_after;
  al.alloc = cnt_alloc; al.free = cnt_free; al.user = c;
  fill(w, sizeof w / sizeof(float), 6000);
  fill(b, 6, 6001);
  fill(fc, 120, 6002);
  memset(&ca, 0, sizeof ca);
  memset(&pa, 0, sizeof pa);
  ca.padding[0] = ca.padding[1] = ca.padding[2] = ca.padding[3] = 1;
  pa.kernel[0] = pa.kernel[1] = 2;
  pa.strides[0] = pa.strides[1] = 2;
  g = fuse_graph_create(&al);
  if (!g) return 0; /* out of memory at creation: nothing to leak */
#define OOM_STEP(expr)                                                                   \
  do {                                                                                   \
    fuse_value oom_v_ = (expr);                                                          \
    if (oom_v_ == FUSE_NONE) {                                                           \
      bad_seen = 1;                                                                      \
      if (fuse_graph_status(g) != FUSE_ERROR_OUT_OF_MEMORY) {                            \
        fprintf(stderr, "    fail_at %ld: %s -> status %d (%s)\n", fail_at, #expr,       \
                (int)fuse_graph_status(g), fuse_graph_error(g));                         \
        CHECK(fuse_graph_status(g) == FUSE_ERROR_OUT_OF_MEMORY);                         \
      }                                                                                  \
    }                                                                                    \
  } while (0)
  OOM_STEP(x = fuse_input(g, "x", 4, xs));
  OOM_STEP(v = fuse_conv2d(g, x, fuse_constant(g, "w", 4, ws, w), &ca));
  OOM_STEP(v = fuse_add(g, v, fuse_reshape(g, fuse_constant(g, "b", 1, bs, b), 4, br)));
  OOM_STEP(v = fuse_batch_norm(g, v, fuse_constant(g, "s", 1, bs, bn), fuse_constant(g, "bb", 1, bs, b),
                               fuse_constant(g, "m", 1, bs, b), fuse_constant(g, "v", 1, bs, bn), 1e-5f));
  OOM_STEP(v = fuse_clip(g, fuse_relu(g, v), 0.0f, 6.0f));
  OOM_STEP(v2 = fuse_max_pool2d(g, v, &pa));
  OOM_STEP(v = fuse_avg_pool2d(g, v, &pa));
  vs[0] = v; vs[1] = v2;
  OOM_STEP(v = fuse_concat(g, 2, vs, 1));
  OOM_STEP(v = fuse_sigmoid(g, fuse_maximum(g, v, fuse_scalar(g, 0.1f))));
  OOM_STEP(v2 = fuse_global_avg_pool2d(g, v));
  OOM_STEP(v = fuse_reshape(g, v, 2, rs));
  OOM_STEP(v = fuse_matmul(g, fuse_flatten(g, fuse_reshape(g, v, 2, rs), 1), fuse_constant(g, "fc", 2, fs, fc)));
  OOM_STEP(v = fuse_minimum(g, fuse_sub(g, v, fuse_scalar(g, 1.0f)), fuse_mul(g, v, v)));
  OOM_STEP(out1 = fuse_softmax(g, v, -1));
  OOM_STEP(out2 = v2);
#undef OOM_STEP
  r = fuse_output(g, out1);
  if (r != FUSE_OK) { ok = 0; CHECK(r == FUSE_ERROR_OUT_OF_MEMORY); }
  r = fuse_output(g, out2);
  if (r != FUSE_OK) { ok = 0; CHECK(r == FUSE_ERROR_OUT_OF_MEMORY); }
  if (bad_seen) ok = 0;
  if (fuse_graph_status(g) != FUSE_OK) {
    ok = 0;
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_ERROR_OUT_OF_MEMORY);
  }
  r = fuse_compile(g, &g_opt, &p);
  if (r != FUSE_OK) {
    ok = 0;
    if (r != FUSE_ERROR_OUT_OF_MEMORY)
      fprintf(stderr, "    fail_at %ld: fuse_compile -> %s\n", fail_at, fuse_result_string(r));
    CHECK_EQ_INT(r, FUSE_ERROR_OUT_OF_MEMORY);
  }
  fuse_graph_destroy(g);
  if (r == FUSE_OK && p) {
    float in_x[256], o1[40], o2[12];
    const float *in[1];
    float *out[2];
    long calls = c->calls;
    fill(in_x, 256, 6003);
    in[0] = in_x; out[0] = o1; out[1] = o2;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
    CHECK_EQ_INT(c->calls, calls);
    CHECK(all_finite(o1, 40));
    CHECK(all_finite(o2, 12));
  }
  if (p) fuse_plan_destroy(p);
  /* an injected failure must not be swallowed silently */
  if (c->injected && ok) {
    fprintf(stderr, "    fail_at %ld: allocation failed but everything reported FUSE_OK\n", fail_at);
    CHECK(!(c->injected && ok));
  }
  return ok;
}

TEST(allocator_failure_at_every_call) {
  int mode;
  for (mode = 0; mode < 2; mode++) {
    counter c;
    long n, first_ok = -1;
    for (n = 1; n <= 20000; n++) {
      int ok = oom_round(&c, n, mode);
      if (c.frees != c.allocs) {
        fprintf(stderr, "    mode %d fail_at %ld: %ld allocs, %ld frees\n", mode, n, c.allocs, c.frees);
        CHECK_EQ_INT(c.frees, c.allocs);
      }
      CHECK_EQ_INT(c.bad_align, 0);
      if (ok && !c.injected) { first_ok = n; break; }
    }
    CHECK(first_ok > 1);
    printf("  allocator failure mode %d: succeeded first with fail_at %ld (%ld allocation calls)\n",
           mode, first_ok, first_ok - 1);
  }
}

/* ----------------------------------------------------------------- compile -- */

TEST(compile_errors) {
  fuse_plan *p = NULL;
  fuse_graph *g;
  int64_t s[2] = {2, 3}, xs[4] = {1, 3, 4, 4}, ws[4] = {2, 4, 1, 1};
  fuse_value x;
  CHECK_EQ_INT(fuse_compile(NULL, NULL, &p), FUSE_ERROR_INVALID_ARGUMENT);
  /* no outputs */
  g = fuse_graph_create(NULL);
  x = fuse_relu(g, fuse_input(g, "x", 2, s));
  CHECK(x != FUSE_NONE);
  p = NULL;
  CHECK(fuse_compile(g, NULL, &p) != FUSE_OK);
  /* NULL out */
  fuse_output(g, x);
  CHECK_EQ_INT(fuse_compile(g, NULL, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  fuse_graph_destroy(g);
  /* sticky shape error */
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 4, xs);
  fuse_output(g, x);
  CHECK(fuse_conv2d(g, x, fuse_constant(g, "w", 4, ws, NULL), NULL) == FUSE_NONE);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_ERROR_SHAPE);
  p = NULL;
  CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_ERROR_SHAPE);
  fuse_graph_destroy(g);
  /* sticky invalid-argument error (clip lo > hi) */
  g = fuse_graph_create(NULL);
  x = fuse_input(g, "x", 2, s);
  fuse_output(g, x);
  CHECK(fuse_clip(g, x, 1.0f, -1.0f) == FUSE_NONE);
  p = NULL;
  CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_ERROR_INVALID_ARGUMENT);
  fuse_graph_destroy(g);
}

TEST(isa_selection) {
  fuse_isa best = fuse_cpu_isa(), isa;
  net n;
  float x[NET_IN], y[NET_OUT0], h[NET_OUT1], wy[NET_OUT0], wh[NET_OUT1];
  const float *in[1];
  float *out[2];
  static const char *names[] = {"auto", "scalar", "avx2", "avx512", "neon"};
  CHECK(best == FUSE_ISA_SCALAR || best == FUSE_ISA_AVX2 || best == FUSE_ISA_AVX512 ||
        best == FUSE_ISA_NEON);
  CHECK(fuse_cpu_isa() == best); /* stable */
  printf("  fuse_cpu_isa: %s\n", best >= 0 && best <= 4 ? names[best] : "?");
#if defined(__aarch64__) && !defined(FUSE_NO_SIMD) && !defined(FUSE_NO_NEON)
  CHECK_EQ_INT(best, FUSE_ISA_NEON); /* every aarch64 CPU has NEON */
#endif
  fill(x, NET_IN, 7000);
  in[0] = x; out[0] = y; out[1] = h;
  for (isa = FUSE_ISA_AUTO; isa <= FUSE_ISA_NEON; isa = (fuse_isa)(isa + 1)) {
    fuse_compile_options o;
    /* auto, scalar, and each ISA the CPU runs (AVX2 where AVX-512 is) */
    if (isa > FUSE_ISA_SCALAR && isa != best && !(isa == FUSE_ISA_AVX2 && best == FUSE_ISA_AVX512))
      continue;
    fuse_plan *p = NULL;
    fuse_graph *g = net_build(&n, NULL);
    memset(&o, 0, sizeof o);
    o.isa = isa;
    CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
    fuse_graph_destroy(g);
    if (!p) continue;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
    net_ref(&n, x, wy, wh);
    CHECK_NEAR_ARRAY(y, wy, NET_OUT0, TOL);
    CHECK_NEAR_ARRAY(h, wh, NET_OUT1, TOL);
    if (runner_rel_error(y, wy, NET_OUT0) > TOL) fprintf(stderr, "    isa %s\n", names[isa]);
    fuse_plan_destroy(p);
  }
}

/* A host job system: runs the chunks in reverse order, one index at a time. */
static int host_calls;
static void host_parallel_for(void *user, fuse_task_fn task, void *ctx, int n) {
  int i;
  (void)user;
  host_calls++;
  for (i = n - 1; i >= 0; i--) task(ctx, i, i + 1);
}

TEST(host_parallel_for) {
  net n;
  fuse_compile_options o;
  fuse_plan *p = NULL;
  fuse_graph *g = net_build(&n, NULL);
  float x[NET_IN], y[NET_OUT0], h[NET_OUT1], wy[NET_OUT0], wh[NET_OUT1];
  const float *in[1];
  float *out[2];
  memset(&o, 0, sizeof o);
  o.num_threads = 4;
  o.parallel_for = host_parallel_for;
  fill(x, NET_IN, 7100);
  CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
  fuse_graph_destroy(g);
  if (!p) return;
  in[0] = x; out[0] = y; out[1] = h;
  CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
  net_ref(&n, x, wy, wh);
  CHECK_NEAR_ARRAY(y, wy, NET_OUT0, TOL);
  CHECK_NEAR_ARRAY(h, wh, NET_OUT1, TOL);
  printf("  host parallel_for called %d times in one run\n", host_calls);
  fuse_plan_destroy(p);
}

/* ------------------------------------------------------------- determinism -- */

TEST(determinism) {
  net n;
  fuse_plan *p = NULL, *q = NULL;
  fuse_graph *g = net_build(&n, NULL);
  float x[NET_IN], y[3][NET_OUT0], h[3][NET_OUT1];
  const float *in[1];
  float *out[2];
  int i;
  fill(x, NET_IN, 8000);
  CHECK_EQ_INT(fuse_compile(g, &g_opt, &p), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, &g_opt, &q), FUSE_OK);
  fuse_graph_destroy(g);
  if (!p || !q) { fuse_plan_destroy(p); fuse_plan_destroy(q); return; }
  in[0] = x;
  for (i = 0; i < 3; i++) {
    out[0] = y[i]; out[1] = h[i];
    CHECK_EQ_INT(fuse_run(i < 2 ? p : q, in, out, NULL), FUSE_OK);
  }
  CHECK(memcmp(y[0], y[1], sizeof y[0]) == 0);
  CHECK(memcmp(h[0], h[1], sizeof h[0]) == 0);
  CHECK(memcmp(y[0], y[2], sizeof y[0]) == 0); /* a second plan of the same graph */
  CHECK(memcmp(h[0], h[2], sizeof h[0]) == 0);
  fuse_plan_destroy(p);
  fuse_plan_destroy(q);
}
