/* tests/kernels/threads_table.c - part of test_kernels: concurrent runs, the host job system,
   the kernel table and its picks, run-time matmul, transpose plans, NEON taken where compiled
   in, the Winograd matrices. */

/* --------------------------------------------------------------- concurrency -- */

#define THREAD_RUNS 20
#define THREADS 2

typedef struct worker {
  fuse_plan *p;
  void *ws;
  const float *x, *r, *serial; /* THREADS * THREAD_RUNS inputs / serial outputs */
  size_t nx, ny;
  int tid, errors, mismatches;
} worker;

static void *worker_main(void *arg) {
  worker *w = (worker *)arg;
  float *y = falloc(w->ny);
  int i;
  for (i = 0; i < THREAD_RUNS; i++) {
    size_t k = (size_t)w->tid * THREAD_RUNS + (size_t)i;
    const float *ins[2];
    float *outs[1];
    ins[0] = w->x + k * w->nx;
    ins[1] = w->r + k * w->ny;
    outs[0] = y;
    if (fuse_run(w->p, ins, outs, w->ws) != FUSE_OK) w->errors++;
    if (memcmp(y, w->serial + k * w->ny, w->ny * sizeof(float)) != 0) w->mismatches++;
  }
  free(y);
  return NULL;
}

TEST(concurrent_runs) {
  /* x [1,32,40,40] -> conv 3x3 (Kd 288: 2 K blocks; 1600 columns: 2 column blocks) + bias +
     relu -> conv 3x3 K=24 + residual r + clip: two GEMM steps and a workspace tensor */
  fuse_isa isa = isa_have[FUSE_ISA_AVX512] ? FUSE_ISA_AVX512
                 : isa_have[FUSE_ISA_AVX2] ? FUSE_ISA_AVX2
                 : isa_have[FUSE_ISA_NEON] ? FUSE_ISA_NEON
                                           : FUSE_ISA_SCALAR;
  int64_t xs[4] = {1, 32, 40, 40}, w1s[4] = {24, 32, 3, 3}, w2s[4] = {24, 24, 3, 3}, bs[4] = {1, 24, 1, 1};
  int64_t ys[4] = {1, 24, 40, 40};
  size_t nx = 32 * 40 * 40, ny = 24 * 40 * 40, k;
  float *w1 = falloc(24 * 32 * 9), *w2 = falloc(24 * 24 * 9), *b = falloc(24);
  float *xin = falloc(nx * THREADS * THREAD_RUNS), *rin = falloc(ny * THREADS * THREAD_RUNS);
  float *serial = falloc(ny * THREADS * THREAD_RUNS);
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs pad1;
  fuse_compile_options opt;
  fuse_plan *p = NULL;
  fuse_value x, r, y;
  worker w[THREADS];
  pthread_t th[THREADS];
  int t, started[THREADS];
  sbuf text;
  memset(&pad1, 0, sizeof pad1);
  pad1.padding[0] = pad1.padding[1] = pad1.padding[2] = pad1.padding[3] = 1;
  fill(w1, 24 * 32 * 9, 7001, -0.06f, 0.06f);
  fill(w2, 24 * 24 * 9, 7002, -0.07f, 0.07f);
  fill(b, 24, 7003, -0.2f, 0.2f);
  fill(xin, nx * THREADS * THREAD_RUNS, 7004, -1, 1);
  fill(rin, ny * THREADS * THREAD_RUNS, 7005, -1, 1);
  x = fuse_input(g, "x", 4, xs);
  r = fuse_input(g, "r", 4, ys);
  y = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, fuse_constant(g, "w1", 4, w1s, w1), &pad1),
                            fuse_constant(g, "b", 4, bs, b)));
  y = fuse_clip(g, fuse_add(g, fuse_conv2d(g, y, fuse_constant(g, "w2", 4, w2s, w2), &pad1), r),
                -0.5f, 0.5f);
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  memset(&opt, 0, sizeof opt);
  opt.isa = isa;
  CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
  fuse_graph_destroy(g);
  if (!p) goto done;
  printf("concurrent_runs: %d threads x %d runs on a %s plan\n", THREADS, THREAD_RUNS, isa_name(isa));
  text.len = 0;
  text.s[0] = 0;
  fuse_plan_write(p, sbuf_write, &text);
  {
    const char *step;
    CHECK_EQ_INT(compute_steps(text.s, &step), 2);
  }
  CHECK_STR_CONTAINS(text.s, "conv2d + bias + clamp");
  CHECK_STR_CONTAINS(text.s, "conv2d + add + clamp");
  for (k = 0; k < THREADS * THREAD_RUNS; k++) {
    const float *ins[2];
    float *outs[1];
    ins[0] = xin + k * nx;
    ins[1] = rin + k * ny;
    outs[0] = serial + k * ny;
    CHECK_EQ_INT(fuse_run(p, ins, outs, NULL), FUSE_OK);
  }
  { /* the serial runs agree with a scalar plan */
    fuse_graph *g2 = fuse_graph_create(NULL);
    fuse_plan *ps = NULL;
    float *ys_ = falloc(ny);
    const float *ins[2];
    float *outs[1];
    x = fuse_input(g2, "x", 4, xs);
    r = fuse_input(g2, "r", 4, ys);
    y = fuse_relu(g2, fuse_add(g2, fuse_conv2d(g2, x, fuse_constant(g2, "w1", 4, w1s, w1), &pad1),
                               fuse_constant(g2, "b", 4, bs, b)));
    y = fuse_clip(g2, fuse_add(g2, fuse_conv2d(g2, y, fuse_constant(g2, "w2", 4, w2s, w2), &pad1), r),
                  -0.5f, 0.5f);
    fuse_output(g2, y);
    CHECK_EQ_INT(fuse_optimize(g2, NULL), FUSE_OK);
    set_isa(&opt, REFERENCE);
    CHECK_EQ_INT(fuse_compile(g2, &opt, &ps), FUSE_OK);
    fuse_graph_destroy(g2);
    if (ps) {
      ins[0] = xin + 7 * nx;
      ins[1] = rin + 7 * ny;
      outs[0] = ys_;
      CHECK_EQ_INT(fuse_run(ps, ins, outs, NULL), FUSE_OK);
      CHECK_NEAR_ARRAY(serial + 7 * ny, ys_, ny, TOL);
      fuse_plan_destroy(ps);
    }
    free(ys_);
  }
  {
    void *raw[THREADS];
    size_t wsz = fuse_plan_workspace_size(p);
    for (t = 0; t < THREADS; t++) {
      w[t].p = p;
      w[t].ws = ws_alloc(wsz, &raw[t]);
      memset(w[t].ws, 0xa5, wsz); /* garbage: nothing may be read before it is written */
      w[t].x = xin;
      w[t].r = rin;
      w[t].serial = serial;
      w[t].nx = nx;
      w[t].ny = ny;
      w[t].tid = t;
      w[t].errors = w[t].mismatches = 0;
    }
    for (t = 0; t < THREADS; t++) started[t] = pthread_create(&th[t], NULL, worker_main, &w[t]) == 0;
    for (t = 0; t < THREADS; t++) {
      CHECK(started[t]);
      if (started[t]) pthread_join(th[t], NULL);
      CHECK_EQ_INT(w[t].errors, 0);
      CHECK_EQ_INT(w[t].mismatches, 0);
      free(raw[t]);
    }
  }
  fuse_plan_destroy(p);
done:
  free(w1);
  free(w2);
  free(b);
  free(xin);
  free(rin);
  free(serial);
}

/* ------------------------------------------------------------ host threads -- */
/* A job system (host_threads.h) that counts its calls: every index on its own pthread. The
   plan cuts a GEMM conv into exactly num_threads chunks, each with its own packing buffer, so
   the results must equal a serial plan's bit for bit, whatever runs where. */
static int job_calls;
static void job_parallel_for(void *user, fuse_task_fn task, void *ctx, int n) {
  job_calls++;
  host_parallel_for(user, task, ctx, n);
}

/* g optimized, then compiled serial (*p1) and for `threads` host threads (*p2) */
static void optimize_and_compile_pair(fuse_graph *g, int threads, fuse_plan **p1, fuse_plan **p2) {
  fuse_compile_options serial, par;
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  memset(&serial, 0, sizeof serial);
  memset(&par, 0, sizeof par);
  par.parallel_for = job_parallel_for;
  par.num_threads = threads;
  serial.no_winograd = par.no_winograd = direct_only;
  CHECK_EQ_INT(fuse_compile(g, &serial, p1), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, &par, p2), FUSE_OK);
}

TEST(host_job_system_threads) {
  /* batch 2 with groups 2; a 7x7 output (one column block: the row panels are split); an
     output of 48x48 = 2304 columns (three column blocks) with bias, residual and relu */
  static const int shapes[3][6] = {{2, 8, 24, 9, 9, 2}, {1, 64, 200, 7, 7, 1}, {1, 16, 40, 48, 48, 1}};
  int si, threads;
  direct_only = 1;
  for (si = 0; si < 3; si++)
    for (threads = 2; threads <= 5; threads += 3) {
      int N = shapes[si][0], C = shapes[si][1], K = shapes[si][2], H = shapes[si][3];
      int W = shapes[si][4], G = shapes[si][5];
      int64_t xs[4], ws[4], bs[4], ys[4];
      size_t nx = (size_t)N * C * H * W, nw = (size_t)K * (C / G) * 9, ny = (size_t)N * K * H * W, i;
      float *x = (float *)malloc(nx * 4), *w = (float *)malloc(nw * 4), *b = (float *)malloc((size_t)K * 4);
      float *res = (float *)malloc(ny * 4), *y1 = (float *)malloc(ny * 4), *y2 = (float *)malloc(ny * 4);
      fuse_graph *g = fuse_graph_create(NULL);
      fuse_conv2d_attrs a;
      fuse_plan *p1 = NULL, *p2 = NULL;
      fuse_value vx, vr, y;
      const float *in[2];
      float *out[1];
      unsigned seed = 99u + (unsigned)si;
      for (i = 0; i < nx; i++) x[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;
      for (i = 0; i < nw; i++) w[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;
      for (i = 0; i < (size_t)K; i++) b[i] = (float)i * 0.01f - 0.5f;
      for (i = 0; i < ny; i++) res[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;
      xs[0] = N, xs[1] = C, xs[2] = H, xs[3] = W;
      ws[0] = K, ws[1] = C / G, ws[2] = 3, ws[3] = 3;
      bs[0] = 1, bs[1] = K, bs[2] = 1, bs[3] = 1;
      ys[0] = N, ys[1] = K, ys[2] = H, ys[3] = W;
      memset(&a, 0, sizeof a);
      a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
      a.groups = G;
      vx = fuse_input(g, "x", 4, xs);
      vr = fuse_input(g, "r", 4, ys);
      y = fuse_conv2d(g, vx, fuse_constant(g, "w", 4, ws, w), &a);
      y = fuse_relu(g, fuse_add(g, fuse_add(g, y, fuse_constant(g, "b", 4, bs, b)), vr));
      fuse_output(g, y);
      optimize_and_compile_pair(g, threads, &p1, &p2);
      if (p1 && p2) {
        int before = job_calls;
        in[0] = x, in[1] = res;
        out[0] = y1;
        CHECK_EQ_INT(fuse_run(p1, in, out, NULL), FUSE_OK);
        out[0] = y2;
        CHECK_EQ_INT(fuse_run(p2, in, out, NULL), FUSE_OK);
        CHECK(memcmp(y1, y2, ny * 4) == 0);
        if (fuse_cpu_isa() >= FUSE_ISA_AVX2) CHECK(job_calls > before); /* the GEMM path split */
      }
      fuse_plan_destroy(p1);
      fuse_plan_destroy(p2);
      fuse_graph_destroy(g);
      free(x), free(w), free(b), free(res), free(y1), free(y2);
    }
  direct_only = 0;
}

/* ------------------------------------------------------------ kernel table -- */
/* Every row of the kernel table (fuse__igemm_kinds, fuse__few_channels_kinds and the NCHW
   packers), on every ISA the CPU has and always the scalar twins, called directly on random
   problems and held against a double-precision loop of the same sums (the reference kernels'
   arithmetic; the error relative to the largest sum of magnitudes, as sums cancel): full and
   partial tiles (rows < MR, columns < NR across every vector), taps in the padding (row
   pointers to a zero row), a reduction split into runs of taps and into
   channel blocks (a later call accumulating in the output), weights ldw apart (the NCHW
   GEMM reading its input in place), per-column and per-row bias, and each post-op kind in
   either order (a residual ADD, a CLAMP). Nothing outside the tile's valid part is written.
   The graph-level tests above run the same kernels through fuse_compile against the
   reference kernels (reference_kernels = 1). */
#define TILE_ACCUMULATE 1 /* the micro-kernel flags (FUSE__ACCUMULATE, FUSE__FINISH) */
#define TILE_FINISH 2
#define TILE_SENTINEL 1234.5f

/* The error of a tile against its expected values, relative to the largest sum of magnitudes
   of its terms (scale: sums can cancel); the elements outside the tile (TILE_SENTINEL in
   want) must be untouched. Returns 0 when one was written. */
static int tile_check(const float *y, const float *want, const double *scale, size_t n,
                      double *err) {
  double max_diff = 0, max_scale = 1e-30;
  size_t i;
  for (i = 0; i < n; i++) {
    if (want[i] == TILE_SENTINEL) {
      if (y[i] != TILE_SENTINEL) return 0;
      continue;
    }
    if (!(fabs((double)y[i] - want[i]) <= max_diff)) max_diff = fabs((double)y[i] - want[i]);
    if (scale[i] > max_scale) max_scale = scale[i];
  }
  *err = max_diff / max_scale;
  return 1;
}

/* y = the tile's expected result, in double: sum over taps and channels, then bias and the
   post-ops in order. */
static void tile_expect(const float *const *a, int ntaps, int L, const float *w, int64_t ldw,
                        const float *bias, const float *row_bias, const fuse_post_op *post,
                        int num_post, const float *res, int ldy, int rows, int cols, float *y,
                        double *scale) {
  int r, j, t, k, q;
  for (r = 0; r < rows; r++)
    for (j = 0; j < cols; j++) {
      double s = 0, m = 0;
      for (t = 0; t < ntaps; t++)
        for (k = 0; k < L; k++) {
          double v = (double)a[t * 64 + r][k] * w[(t * L + k) * ldw + j];
          s += v, m += fabs(v);
        }
      if (bias) s += bias[j], m += fabs(bias[j]);
      if (row_bias) s += row_bias[r], m += fabs(row_bias[r]);
      for (q = 0; q < num_post; q++)
        if (post[q].kind == FUSE_POST_ADD) s += res[r * ldy + j], m += fabs(res[r * ldy + j]);
        else s = s < post[q].lo ? post[q].lo : s > post[q].hi ? post[q].hi : s;
      y[r * ldy + j] = (float)s;
      scale[r * ldy + j] = m;
    }
}

/* One random problem on the indirect-GEMM kind `kind`; `mode` picks the call pattern: 0 one
   call, 1 runs of taps, 2 channel blocks (one tap a call, channel offset aoff). */
static void table_igemm_case(int kind, int mode, uint32_t seed) {
  const fuse__igemm_kind *kk = &fuse__igemm_kinds[kind];
  int MR = kk->mr, NR = kk->nr, ntaps = mode == 2 ? rnd_in(1, 3) : rnd_in(1, 4);
  int L = rnd_in(1, 40), rows = rnd(3) ? MR : rnd_in(1, MR), cols = rnd(3) ? NR : rnd_in(1, NR);
  int ldy = NR + rnd_in(0, 9), t, i, q, num_post = rnd(4), bias_kind = rnd(3);
  int64_t ldw = rnd(4) ? NR : NR + rnd_in(1, 20);
  float *x = falloc((size_t)ntaps * 64 * L), *zeros = falloc((size_t)L);
  float *w = falloc((size_t)(ntaps * L) * (size_t)ldw), *bias = falloc((size_t)NR);
  float *res = falloc((size_t)MR * ldy), *y = falloc((size_t)MR * ldy), *want = falloc((size_t)MR * ldy);
  double *scale = (double *)calloc((size_t)MR * ldy, sizeof(double)), err = 0;
  const float *ptr[4 * 64], *expect_ptr[4 * 64];
  fuse_post_op post[3];
  fuse__tile_epi e;
  fill(x, (size_t)ntaps * 64 * L, seed, -1, 1);
  fill(w, (size_t)(ntaps * L) * (size_t)ldw, seed + 1, -0.5f, 0.5f);
  fill(bias, (size_t)NR, seed + 2, -0.5f, 0.5f);
  fill(res, (size_t)MR * ldy, seed + 3, -1, 1);
  memset(zeros, 0, (size_t)L * sizeof(float));
  for (t = 0; t < ntaps; t++) /* a tap reads the padding for some pixels, or for all */
    for (i = 0; i < MR; i++) {
      int dead = rnd(5) == 0 || (t == ntaps - 1 && ntaps > 1 && rnd(4) == 0);
      ptr[t * MR + i] = dead ? zeros : x + ((size_t)t * 64 + (size_t)i) * L;
      expect_ptr[t * 64 + i] = ptr[t * MR + i];
    }
  memset(post, 0, sizeof post);
  for (q = 0; q < num_post; q++) {
    post[q].kind = rnd(2) ? FUSE_POST_ADD : FUSE_POST_CLAMP;
    post[q].lo = rnd(2) ? 0.0f : -0.3f;
    post[q].hi = rnd(2) ? INF : 0.6f;
    post[q].operand = -1;
  }
  memset(&e, 0, sizeof e);
  e.bias = bias_kind == 1 ? bias : NULL;
  e.row_bias = bias_kind == 2 ? bias : NULL; /* MR <= NR floats */
  e.post = post, e.num_post = num_post;
  e.split = fuse__post_split(post, num_post); /* as the drivers set it */
  for (q = 0; q < num_post; q++) e.res[q] = post[q].kind == FUSE_POST_ADD ? res : NULL;
  e.ldw = ldw == NR ? 0 : ldw;
  if (MR > NR) e.row_bias = NULL; /* the bias buffer holds NR floats */
  for (i = 0; i < MR * ldy; i++) y[i] = want[i] = TILE_SENTINEL;
  tile_expect(expect_ptr, ntaps, L, w, ldw, e.bias, e.row_bias, post, num_post, res, ldy, rows,
              cols, want, scale);
  if (mode == 0) {
    kk->fn(ntaps, L, ptr, 0, w, y, ldy, rows, cols, TILE_FINISH, &e);
  } else if (mode == 1) { /* taps [0, t1), then [t1, ntaps) accumulating */
    int t1 = rnd_in(0, ntaps);
    kk->fn(t1, L, ptr, 0, w, y, ldy, rows, cols, 0, &e);
    kk->fn(ntaps - t1, L, ptr + t1 * MR, 0, w + (size_t)t1 * L * ldw, y, ldy, rows, cols,
           TILE_ACCUMULATE | TILE_FINISH, &e);
  } else { /* tap by tap in channel blocks of cb */
    int cb = rnd_in(1, L), c0;
    for (t = 0; t < ntaps; t++)
      for (c0 = 0; c0 < L; c0 += cb) {
        int n = L - c0 < cb ? L - c0 : cb, last = t == ntaps - 1 && c0 + n >= L;
        kk->fn(1, n, ptr + t * MR, c0, w + ((size_t)t * L + (size_t)c0) * ldw, y, ldy, rows,
               cols, (t || c0 ? TILE_ACCUMULATE : 0) | (last ? TILE_FINISH : 0), &e);
      }
  }
  if (!tile_check(y, want, scale, (size_t)MR * ldy, &err) || !(err <= TOL)) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: %s %dx%d mode %d: taps %d L %d rows %d cols %d ldy %d ldw %d "
            "bias %d posts %d: error %.3g (or a write outside the tile)\n", runner_current,
            isa_name(kk->isa), MR, NR, mode, ntaps, L, rows, cols, ldy, (int)ldw, bias_kind,
            num_post, err);
  }
  free(x), free(zeros), free(w), free(bias), free(res), free(y), free(want), free(scale);
}

/* One random problem on the column-block walker of kind `kind` (fuse__igemm_kind.blocks):
   nb full blocks of NR columns in one call, their packed panels wblock floats apart, each
   block against its own expected tile (its bias, residuals and output NR columns on); the
   taps in one call, or split in two with the second accumulating (a stem's runs of taps). */
static void table_igemm_blocks_case(int kind, uint32_t seed) {
  const fuse__igemm_kind *kk = &fuse__igemm_kinds[kind];
  int MR = kk->mr, NR = kk->nr, nb = rnd_in(2, 4), ntaps = rnd_in(1, 3), L = rnd_in(1, 40);
  int rows = rnd(3) ? MR : rnd_in(1, MR), ldy = nb * NR + rnd_in(0, 9), split = rnd(2);
  int num_post = rnd(3), has_bias = rnd(2), t, i, q, b;
  int64_t panel = (int64_t)ntaps * L * NR, wblock = panel + 16 * rnd_in(0, 2);
  float *x = falloc((size_t)ntaps * 64 * L), *w = falloc((size_t)(nb * wblock));
  float *bias = falloc((size_t)(nb * NR)), *res = falloc((size_t)MR * ldy);
  float *y = falloc((size_t)MR * ldy), *want = falloc((size_t)MR * ldy);
  double *scale = (double *)calloc((size_t)MR * ldy, sizeof(double)), err = 0;
  const float *ptr[3 * 64], *expect_ptr[3 * 64];
  fuse_post_op post[2];
  fuse__tile_epi e;
  fill(x, (size_t)ntaps * 64 * L, seed, -1, 1);
  fill(w, (size_t)(nb * wblock), seed + 1, -0.5f, 0.5f);
  fill(bias, (size_t)(nb * NR), seed + 2, -0.5f, 0.5f);
  fill(res, (size_t)MR * ldy, seed + 3, -1, 1);
  for (t = 0; t < ntaps; t++)
    for (i = 0; i < MR; i++)
      ptr[t * MR + i] = expect_ptr[t * 64 + i] = x + ((size_t)t * 64 + (size_t)i) * L;
  memset(post, 0, sizeof post);
  for (q = 0; q < num_post; q++) {
    post[q].kind = rnd(2) ? FUSE_POST_ADD : FUSE_POST_CLAMP;
    post[q].lo = rnd(2) ? 0.0f : -0.3f, post[q].hi = rnd(2) ? INF : 0.6f, post[q].operand = -1;
  }
  memset(&e, 0, sizeof e);
  e.bias = has_bias ? bias : NULL;
  e.post = post, e.num_post = num_post;
  e.split = fuse__post_split(post, num_post);
  for (q = 0; q < num_post; q++) e.res[q] = post[q].kind == FUSE_POST_ADD ? res : NULL;
  e.blocks = nb, e.wblock = wblock;
  for (i = 0; i < MR * ldy; i++) y[i] = want[i] = TILE_SENTINEL;
  for (b = 0; b < nb; b++)
    tile_expect(expect_ptr, ntaps, L, w + b * wblock, NR, has_bias ? bias + b * NR : NULL, NULL,
                post, num_post, res + b * NR, ldy, rows, NR, want + b * NR, scale + b * NR);
  if (split && ntaps > 1) {
    kk->blocks(1, L, ptr, 0, w, y, ldy, rows, NR, 0, &e);
    kk->blocks(ntaps - 1, L, ptr + MR, 0, w + (size_t)L * NR, y, ldy, rows, NR,
               TILE_ACCUMULATE | TILE_FINISH, &e);
  } else {
    kk->blocks(ntaps, L, ptr, 0, w, y, ldy, rows, NR, TILE_FINISH, &e);
  }
  if (!tile_check(y, want, scale, (size_t)MR * ldy, &err) || !(err <= TOL)) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: %s %dx%d blocks %d: taps %d L %d rows %d ldy %d bias %d posts %d: "
            "error %.3g (or a write outside the tiles)\n", runner_current, isa_name(kk->isa), MR,
            NR, nb, ntaps, L, rows, ldy, has_bias, num_post, err);
  }
  free(x), free(w), free(bias), free(res), free(y), free(want), free(scale);
}

/* One random problem on the few-channel kind `kind`: nseg segments of len[g] steps whose
   input moves a float a step from x + off[g]. */
static void table_few_channels_case(int kind, uint32_t seed) {
  const fuse__few_channels_kind *kk = &fuse__few_channels_kinds[kind];
  int MR = kk->mr, NR = kk->nr, nseg = rnd_in(1, 6), rows = rnd(2) ? MR : rnd_in(1, MR);
  int cols = rnd(2) ? NR : rnd_in(1, NR), ldy = NR + rnd_in(0, 7), len[6], g, k, r, j, q;
  int steps = 0, s, num_post = rnd(3);
  int64_t off[6];
  size_t nx = 6 * 64 + 80;
  float *x = falloc(nx), *wk, *rb = falloc((size_t)MR), *res = falloc((size_t)MR * ldy);
  float *y = falloc((size_t)MR * ldy), *want = falloc((size_t)MR * ldy);
  double *scale = (double *)calloc((size_t)MR * ldy, sizeof(double)), err = 0;
  fuse_post_op post[2];
  fuse__tile_epi e;
  for (g = 0; g < nseg; g++) len[g] = rnd_in(1, 7), off[g] = rnd_in(0, 300), steps += len[g];
  wk = falloc((size_t)steps * MR);
  fill(x, nx, seed, -1, 1);
  fill(wk, (size_t)steps * MR, seed + 1, -0.5f, 0.5f);
  fill(rb, (size_t)MR, seed + 2, -0.5f, 0.5f);
  fill(res, (size_t)MR * ldy, seed + 3, -1, 1);
  memset(post, 0, sizeof post);
  for (q = 0; q < num_post; q++) {
    post[q].kind = rnd(2) ? FUSE_POST_ADD : FUSE_POST_CLAMP;
    post[q].lo = 0.0f, post[q].hi = rnd(2) ? INF : 0.5f, post[q].operand = -1;
  }
  memset(&e, 0, sizeof e);
  e.row_bias = rnd(2) ? rb : NULL;
  e.post = post, e.num_post = num_post;
  e.split = fuse__post_split(post, num_post); /* as the drivers set it */
  for (q = 0; q < num_post; q++) e.res[q] = post[q].kind == FUSE_POST_ADD ? res : NULL;
  for (k = 0; k < MR * ldy; k++) y[k] = want[k] = TILE_SENTINEL;
  for (r = 0; r < rows; r++)
    for (j = 0; j < cols; j++) {
      double sum = 0, m = 0;
      for (g = 0, s = 0; g < nseg; g++)
        for (k = 0; k < len[g]; k++, s++) {
          double v = (double)x[off[g] + k + j] * wk[s * MR + r];
          sum += v, m += fabs(v);
        }
      if (e.row_bias) sum += rb[r], m += fabs(rb[r]);
      for (q = 0; q < num_post; q++)
        if (post[q].kind == FUSE_POST_ADD) sum += res[r * ldy + j], m += fabs(res[r * ldy + j]);
        else sum = sum < post[q].lo ? post[q].lo : sum > post[q].hi ? post[q].hi : sum;
      want[r * ldy + j] = (float)sum;
      scale[r * ldy + j] = m;
    }
  kk->fn(nseg, off, len, x, wk, y, ldy, rows, cols, &e);
  if (!tile_check(y, want, scale, (size_t)MR * ldy, &err) || !(err <= TOL)) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: few channels %s %dx%d: segments %d rows %d cols %d: error %.3g "
            "(or a write outside the tile)\n", runner_current, isa_name(kk->isa), MR, NR, nseg,
            rows, cols, err);
  }
  free(x), free(wk), free(rb), free(res), free(y), free(want), free(scale);
}

/* One random panel of the NCHW packer of `kind` against the gather it stands for. */
static void table_pack_case(int kind, uint32_t seed) {
  const fuse__igemm_kind *kk = &fuse__igemm_kinds[kind];
  fuse__nchw_pack_args g;
  int64_t OH, P, p0, c, kh, kw, jj, nrows;
  int ncols;
  float *x, *panel, *want;
  memset(&g, 0, sizeof g);
  g.Cg = rnd_in(1, 3), g.H = rnd_in(1, 12), g.W = rnd_in(1, 40);
  g.KH = rnd_in(1, 3), g.KW = rnd_in(1, 3), g.sh = rnd_in(1, 2), g.sw = rnd_in(1, 3);
  g.dh = rnd_in(1, 2), g.dw = rnd_in(1, 2), g.pt = rnd_in(0, 2), g.pl = rnd_in(0, 2);
  g.pointwise = rnd(5) == 0;
  if (g.pointwise) g.KH = g.KW = g.sh = g.sw = g.dh = g.dw = 1, g.pt = g.pl = 0;
  g.nr = kk->nr;
  OH = (g.H + 2 * g.pt - g.dh * (g.KH - 1) - 1) / g.sh + 1;
  g.OW = (g.W + 2 * g.pl - g.dw * (g.KW - 1) - 1) / g.sw + 1;
  if (OH < 1 || g.OW < 1) return;
  P = OH * g.OW;
  p0 = rnd((int)P);
  ncols = (int)(P - p0 < g.nr ? P - p0 : g.nr);
  nrows = g.Cg * g.KH * g.KW;
  x = falloc((size_t)(g.Cg * g.H * g.W));
  panel = falloc((size_t)(nrows * g.nr));
  want = falloc((size_t)(nrows * g.nr));
  fill(x, (size_t)(g.Cg * g.H * g.W), seed, -1, 1);
  g.xg = x;
  for (c = 0; c < g.Cg; c++)
    for (kh = 0; kh < g.KH; kh++)
      for (kw = 0; kw < g.KW; kw++)
        for (jj = 0; jj < g.nr; jj++) {
          int64_t p = p0 + jj, ih = p / g.OW * g.sh - g.pt + kh * g.dh;
          int64_t iw = p % g.OW * g.sw - g.pl + kw * g.dw;
          want[((c * g.KH + kh) * g.KW + kw) * g.nr + jj] =
              jj < ncols && ih >= 0 && ih < g.H && iw >= 0 && iw < g.W
                  ? x[(c * g.H + ih) * g.W + iw] : 0.0f;
        }
  kk->pack(&g, p0, ncols, panel);
  if (memcmp(panel, want, (size_t)(nrows * g.nr) * sizeof(float)) != 0) {
    runner_test_failed = 1;
    fprintf(stderr, "  FAIL %s: NCHW packer %s (nr %d): Cg %d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d "
            "pointwise %d p0 %d cols %d\n", runner_current, isa_name(kk->isa), (int)g.nr,
            (int)g.Cg, (int)g.H, (int)g.W, (int)g.KH, (int)g.KW, (int)g.sh, (int)g.sw,
            (int)g.dh, (int)g.dw, (int)g.pt, (int)g.pl, g.pointwise, (int)p0, ncols);
  }
  free(x), free(panel), free(want);
}

/* NHWC GEMM convs (two 1x1 convs in a row) whose column blocks differ in width or do not
   divide among the threads: the plan hands each thread whole tiles (tile_outer in
   run/conv_run.c); bit for bit the serial plan's result */
TEST(host_threads_whole_tiles) {
  static const int shapes[3][3] = {{240, 80, 14}, {480, 112, 14}, {24, 144, 9}}; /* C, K, H */
  int si, threads;
  for (si = 0; si < 3; si++)
    for (threads = 2; threads <= 3; threads++) {
      int C = shapes[si][0], K = shapes[si][1], H = shapes[si][2];
      int64_t xs[4] = {1, C, H, H}, w1s[4] = {K, C, 1, 1}, w2s[4] = {C, K, 1, 1}, bs[3] = {K, 1, 1};
      size_t nx = (size_t)C * H * H, i;
      float *x = (float *)malloc(nx * 4), *w1 = (float *)malloc((size_t)K * C * 4);
      float *w2 = (float *)malloc((size_t)K * C * 4), *b = (float *)malloc((size_t)K * 4);
      float *y1 = (float *)malloc(nx * 4), *y2 = (float *)malloc(nx * 4);
      fuse_graph *g = fuse_graph_create(NULL);
      fuse_plan *p1 = NULL, *p2 = NULL;
      fuse_value v;
      const float *in[1];
      float *out[1];
      unsigned seed = 7u + (unsigned)si;
      for (i = 0; i < nx; i++) x[i] = (float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f;
      for (i = 0; i < (size_t)K * C; i++) {
        w1[i] = ((float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f) * 0.1f;
        w2[i] = ((float)((seed = seed * 1103515245u + 12345u) >> 9) / 8388608.0f - 1.0f) * 0.1f;
      }
      for (i = 0; i < (size_t)K; i++) b[i] = (float)i * 0.01f - 0.5f;
      v = fuse_input(g, "x", 4, xs);
      v = fuse_conv2d(g, v, fuse_constant(g, "w1", 4, w1s, w1), NULL);
      v = fuse_add(g, v, fuse_constant(g, "b", 3, bs, b));
      v = fuse_mul(g, v, fuse_sigmoid(g, v));
      v = fuse_conv2d(g, v, fuse_constant(g, "w2", 4, w2s, w2), NULL);
      fuse_output(g, v);
      optimize_and_compile_pair(g, threads, &p1, &p2);
      if (p1 && p2) {
        in[0] = x;
        out[0] = y1;
        CHECK_EQ_INT(fuse_run(p1, in, out, NULL), FUSE_OK);
        out[0] = y2;
        CHECK_EQ_INT(fuse_run(p2, in, out, NULL), FUSE_OK);
        CHECK(memcmp(y1, y2, nx * 4) == 0);
      }
      fuse_plan_destroy(p1);
      fuse_plan_destroy(p2);
      fuse_graph_destroy(g);
      free(x), free(w1), free(w2), free(b), free(y1), free(y2);
    }
}

/* g compiled for isa (REFERENCE: the reference kernels), serial or on `threads` host threads
   of the job system; NULL (counted as a failure) when it does not compile. */
static fuse_plan *plan_for(fuse_graph *g, int isa, int threads) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  memset(&o, 0, sizeof o);
  set_isa(&o, isa);
  if (threads > 1) o.parallel_for = job_parallel_for, o.num_threads = threads;
  CHECK_EQ_INT(fuse_compile(g, &o, &p), FUSE_OK);
  return p;
}

/* Few input channels on the NHWC indirect GEMM (a tap per kernel row, the stems inside a
   network): several column blocks per tile (one set of row pointers for all of them), tiles
   inside one output row read in place and tiles crossing rows and the padding; every ISA
   against the reference and the double oracle, and on 3 host threads bit for bit as serial. */
TEST(row_taps_column_blocks) {
  static const int cfg[6][8] = {/* C, K, KH, KW, stride, pad, H, W */
                                {3, 64, 7, 7, 2, 3, 37, 41}, {3, 40, 3, 3, 2, 1, 29, 33},
                                {1, 70, 5, 5, 1, 2, 17, 23}, {4, 20, 3, 3, 1, 1, 19, 27},
                                {8, 36, 3, 5, 2, 0, 21, 25}, {3, 17, 7, 7, 2, 3, 15, 15}};
  int i, isa;
  for (i = 0; i < 6; i++) {
    ccase c = plain_case(i & 1 ? 2 : 1, cfg[i][0], cfg[i][1], cfg[i][6], cfg[i][7], cfg[i][2],
                         cfg[i][3], 1);
    cdata d;
    fuse_graph *g;
    c.a.strides[0] = c.a.strides[1] = cfg[i][4];
    c.a.padding[0] = c.a.padding[1] = c.a.padding[2] = c.a.padding[3] = cfg[i][5];
    if (i == 4) c.a.dilation[0] = 2; /* rows apart, a kernel row still contiguous */
    c.staged = 1;
    c.bias = BIAS_RESHAPE, c.residual = i & 1 ? RES_AFTER : RES_NONE;
    c.clamp = i & 2 ? CL_RELU6_MIN : CL_RELU;
    expect_gemm(run_simple(&c, 300u + (uint32_t)i), &c);
    data_alloc(&c, &d);
    g = case_graph(&c, &d);
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    for (isa = FUSE_ISA_SCALAR; isa <= LAST_ISA; isa++) {
      fuse_plan *p1, *p3;
      float *y1, *y3;
      const float *in[2];
      float *out[1];
      if (!isa_have[isa]) continue;
      p1 = plan_for(g, isa, 1), p3 = plan_for(g, isa, 3);
      y1 = falloc(d.ny), y3 = falloc(d.ny);
      memset(y1, 0xff, d.ny * sizeof(float)), memset(y3, 0xff, d.ny * sizeof(float));
      in[0] = d.x, in[1] = d.r;
      if (p1 && p3) {
        out[0] = y1;
        CHECK_EQ_INT(fuse_run(p1, in, out, NULL), FUSE_OK);
        out[0] = y3;
        CHECK_EQ_INT(fuse_run(p3, in, out, NULL), FUSE_OK);
        CHECK(memcmp(y1, y3, d.ny * sizeof(float)) == 0);
      }
      fuse_plan_destroy(p1), fuse_plan_destroy(p3);
      free(y1), free(y3);
    }
    fuse_graph_destroy(g);
    data_free(&d);
  }
}

/* matmul of two run-time operands (attention's q k^T): no packed weights, the row kernels'
   fuse__matmul_rows on every ISA, serial and on 3 host threads, against the reference kernels;
   batches broadcast both ways, rank-1 operands, rows and columns around the 4-row and
   2-vector tiles, and a bias + clip epilogue fused by fuse_optimize. */
static void runtime_matmul_case(int ra, const int64_t *as, int rb, const int64_t *bs, int epi,
                                uint32_t seed) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value y;
  size_t na = 1, nb = 1, ny;
  float *a, *b, *want = NULL, *got = NULL, bias[128];
  int k, isa, threads;
  int64_t N = rb == 1 ? 1 : bs[rb - 1], bsh[1];
  for (k = 0; k < ra; k++) na *= (size_t)as[k];
  for (k = 0; k < rb; k++) nb *= (size_t)bs[k];
  a = falloc(na), b = falloc(nb);
  fill(a, na, seed, -1, 1);
  fill(b, nb, seed + 1, -1, 1);
  fill(bias, 128, seed + 2, -0.5f, 0.5f);
  y = fuse_input(g, "a", ra, as); /* input 0, then input 1 (not in one call: its argument */
  y = fuse_matmul(g, y, fuse_input(g, "b", rb, bs)); /* order is the compiler's) */
  if (epi) {
    bsh[0] = N;
    y = fuse_clip(g, fuse_add(g, y, fuse_constant(g, "bias", 1, bsh, bias)), -2.0f, 2.5f);
  }
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  if (epi) CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  ny = 1;
  for (k = 0; k < fuse_value_rank(g, y); k++) ny *= (size_t)fuse_value_shape(g, y)[k];
  want = falloc(ny), got = falloc(ny);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++)
    for (threads = 1; threads <= 3; threads += 2) {
      fuse_plan *p;
      const float *in[2];
      float *out[1];
      if (!isa_have[isa] || (isa == REFERENCE && threads > 1)) continue;
      if (!(p = plan_for(g, isa, threads))) continue;
      in[0] = a, in[1] = b;
      out[0] = isa == REFERENCE ? want : got;
      memset(got, 0xff, ny * sizeof(float)); /* NaN: every element must be written */
      CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
      fuse_plan_destroy(p);
      if (isa != REFERENCE) {
        double err;
        long bad;
        int same = compare(got, want, ny, &err, &bad);
        n_compared[isa]++;
        if (err > worst_err[isa]) worst_err[isa] = err;
        if (!same || !(err <= TOL)) {
          runner_test_failed = 1;
          fprintf(stderr, "  FAIL %s: run-time matmul (ranks %d, %d; M=%lld K=%lld N=%lld) on %s, "
                  "%d threads: error %.3g\n", runner_current, ra, rb,
                  (long long)(ra == 1 ? 1 : as[ra - 2]), (long long)as[ra - 1], (long long)N,
                  isa_name((fuse_isa)isa), threads, err);
          if (bad >= 0) fprintf(stderr, "    first bad %ld: %g, want %g\n", bad, got[bad], want[bad]);
        }
      }
    }
  fuse_graph_destroy(g);
  free(a), free(b), free(want), free(got);
}

TEST(runtime_matmul) {
  static const int Ms[] = {1, 3, 4, 5, 49, 70, 130}, Ns[] = {1, 7, 16, 31, 32, 33, 49, 100};
  static const int Ks[] = {1, 7, 32, 49};
  int mi, ni, ki;
  uint32_t seed = 61000u;
  for (mi = 0; mi < 7; mi++)
    for (ni = 0; ni < 8; ni++)
      for (ki = 0; ki < 4; ki++, seed += 10) {
        int64_t as[4] = {2, 1, Ms[mi], Ks[ki]}, bs[3] = {3, Ks[ki], Ns[ni]};
        if ((mi + ni + ki) % 3 == 0) { /* batches broadcast: [2, 1, M, K] x [3, K, N] */
          runtime_matmul_case(4, as, 3, bs, (mi + ki) % 2, seed);
        } else { /* plain 2-D */
          runtime_matmul_case(2, as + 2, 2, bs + 1, (ni + ki) % 2, seed);
        }
      }
  { /* rank-1 operands: [K] x [K, N] and [M, K] x [K] */
    int64_t v[1] = {33}, m[2] = {33, 20}, m2[2] = {9, 33};
    runtime_matmul_case(1, v, 2, m, 0, 62000u);
    runtime_matmul_case(2, m2, 1, v, 0, 62010u);
  }
}

/* The Transpose op's plans on every ISA, serial and on 3 host threads, bit for bit against the
   reference kernels: permutations that merge to runs copied whole (a channel shuffle), to 2-D
   transposes (NCHW <-> NHWC, a matrix of more than 256 x 256 floats: several blocks), size-1
   dims anywhere, and random shapes and permutations of rank 1 to 6. */
static void transpose_case(int rank, const int64_t *shape, const int *perm) {
  fuse_graph *g = fuse_graph_create(NULL);
  size_t n = 1, i;
  float *x, *want, *got;
  int isa, threads, k;
  char what[160];
  for (k = 0; k < rank; k++) n *= (size_t)shape[k];
  x = falloc(n), want = falloc(n), got = falloc(n);
  for (i = 0; i < n; i++) x[i] = (float)i * 0.5f - 7.0f; /* every element its own value */
  fuse_output(g, fuse_transpose(g, fuse_input(g, "x", rank, shape), perm));
  for (k = 0, what[0] = 0; k < rank; k++)
    snprintf(what + strlen(what), sizeof what - strlen(what), "%s%lld/%d", k ? " " : "",
             (long long)shape[k], perm[k]);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++)
    for (threads = 1; threads <= 3; threads += 2) {
      fuse_plan *p;
      const float *in[1];
      float *out[1];
      if (!isa_have[isa] || (isa == REFERENCE && threads > 1)) continue;
      if (!(p = plan_for(g, isa, threads))) continue;
      in[0] = x;
      out[0] = isa == REFERENCE ? want : got;
      memset(got, 0, n * sizeof(float));
      CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
      if (isa != REFERENCE && memcmp(got, want, n * sizeof(float)) != 0) {
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: transpose (dim/perm) %s on %s, %d threads\n", runner_current,
                what, isa_name((fuse_isa)isa), threads);
      }
      fuse_plan_destroy(p);
    }
  fuse_graph_destroy(g);
  free(x), free(want), free(got);
}

TEST(transpose_plans) {
  static const int64_t s0[5] = {1, 2, 58, 28, 28}, s1[4] = {1, 96, 56, 56}, s2[4] = {1, 56, 56, 96};
  static const int64_t s3[2] = {300, 520}, s4[4] = {2, 3, 1, 5}, s5[1] = {7}, s6[3] = {3, 260, 270};
  static const int p0[5] = {0, 2, 1, 3, 4}, p1[4] = {0, 2, 3, 1}, p2[4] = {0, 3, 1, 2};
  static const int p3[2] = {1, 0}, p4[4] = {3, 2, 1, 0}, p5[1] = {0}, p6[3] = {2, 0, 1};
  static const int64_t s7[4] = {2, 3, 17, 19}, s8[4] = {1, 3, 224, 224}; /* RGB to NHWC */
  int t;
  transpose_case(4, s7, p1);
  transpose_case(4, s8, p1);
  transpose_case(5, s0, p0);
  transpose_case(4, s1, p1);
  transpose_case(4, s2, p2);
  transpose_case(2, s3, p3);
  transpose_case(4, s4, p4);
  transpose_case(1, s5, p5);
  transpose_case(3, s6, p6);
  shape_rng = 0x7a5u;
  for (t = 0; t < 80; t++) {
    int64_t shape[6];
    int perm[6], rank = rnd_in(1, 6), k;
    size_t n = 1;
    for (k = 0; k < rank; k++) {
      shape[k] = rnd(4) == 0 ? 1 : rnd_in(2, rnd(5) == 0 ? 40 : 9);
      n *= (size_t)shape[k];
      perm[k] = k;
    }
    if (n > 200000) continue;
    for (k = rank - 1; k > 0; k--) { /* a random permutation */
      int o = rnd(k + 1), tmp = perm[k];
      perm[k] = perm[o], perm[o] = tmp;
    }
    transpose_case(rank, shape, perm);
  }
}

/* The operator table (graph/graph.c): a row per op in the enum's order (the count is checked
   at compile time), each with a name, unique, and an attribute list. */
TEST(op_table) {
  int i, j;
  for (i = 0; i < FUSE__OP_COUNT; i++) {
    CHECK_EQ_INT(fuse__ops[i].op, i);
    CHECK(fuse__ops[i].name != NULL && fuse__ops[i].name[0] != 0 && fuse__ops[i].attrs != NULL);
    for (j = 0; j < i; j++) CHECK(strcmp(fuse__ops[i].name, fuse__ops[j].name) != 0);
  }
}

TEST(kernel_table) {
  int i, n, rows = 0, ran = 0;
  for (i = 0; fuse__igemm_kinds[i].fn; i++, rows++) {
    if (!isa_have[fuse__igemm_kinds[i].isa]) continue;
    for (n = 0; n < 60; n++) table_igemm_case(i, n % 3, 20000u + (uint32_t)(i * 100 + n));
    if (fuse__igemm_kinds[i].pack)
      for (n = 0; n < 60; n++) table_pack_case(i, 30000u + (uint32_t)(i * 100 + n));
    if (fuse__igemm_kinds[i].blocks)
      for (n = 0; n < 40; n++) table_igemm_blocks_case(i, 50000u + (uint32_t)(i * 100 + n));
    ran++;
  }
  for (i = 0; fuse__few_channels_kinds[i].fn; i++, rows++) {
    if (!isa_have[fuse__few_channels_kinds[i].isa]) continue;
    for (n = 0; n < 40; n++) table_few_channels_case(i, 40000u + (uint32_t)(i * 100 + n));
    ran++;
  }
  printf("kernel_table: %d of %d micro-kernels run (the others' ISA is missing here)\n", ran, rows);
  CHECK(ran >= 5); /* the scalar twins at least */
}

/* On ARM with NEON compiled in (aarch64; armv7 with -mfpu=neon-vfpv4), fuse_cpu_isa reports it
   and a plan compiled with the defaults runs the NEON micro-kernels: its listing names them
   ("[neon igemm 8x8]", "[neon nchw gemm 8x8]"); FUSE_ISA_SCALAR still gives the scalar twins. */
TEST(neon_taken) {
#ifdef TEST_NEON
  static const fuse_isa isas[2] = {FUSE_ISA_AUTO, FUSE_ISA_SCALAR};
  int k;
  CHECK_EQ_INT(fuse_cpu_isa(), FUSE_ISA_NEON);
  for (k = 0; k < 2; k++) {
    ccase c = plain_case(1, 16, 32, 12, 12, 3, 3, 1);
    cdata d;
    fuse_graph *g;
    fuse_plan *p = NULL;
    fuse_compile_options opt;
    sbuf b;
    c.staged = 1;
    c.bias = BIAS_1K11, c.clamp = CL_RELU;
    data_alloc(&c, &d);
    g = case_graph(&c, &d);
    memset(&opt, 0, sizeof opt);
    opt.isa = isas[k];
    b.len = 0;
    b.s[0] = 0;
    CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
    if (p) {
      CHECK_EQ_INT(p->isa, k ? FUSE_ISA_SCALAR : FUSE_ISA_NEON);
      fuse_plan_write(p, sbuf_write, &b);
      CHECK_STR_CONTAINS(b.s, k ? "[scalar igemm 4x4]" : "[neon igemm ");
      printf("neon_taken: %s plan:\n%s", k ? "scalar" : "default", b.s);
    }
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
    data_free(&d);
  }
#else
  printf("neon_taken: not an ARM build with NEON: nothing to check\n");
#endif
}

/* --------------------------------------------------------- Winograd matrices -- */
/* AT ((G g) . (BT d)) is the correlation of d with g, in double, for F(2,3), F(4,3), F(6,3)
   (winograd.c's tables; test_winograd.c runs the layers). */

static double dot_row(const float *row, const double *v, int n) {
  double s = 0;
  int i;
  for (i = 0; i < n; i++) s += (double)row[i] * v[i];
  return s;
}

static void check_matrices(int m, const float *bt, const float *at, const double *g) {
  int alpha = m + 2, trial, i, j, k;
  for (trial = 0; trial < 20; trial++) {
    double d[8], w[3], gg[8], bd[8], y, want, worst = 0;
    for (i = 0; i < alpha; i++) d[i] = 2 * rnd_unit() - 1;
    for (k = 0; k < 3; k++) w[k] = 2 * rnd_unit() - 1;
    for (j = 0; j < alpha; j++) {
      gg[j] = g[j * 3] * w[0] + g[j * 3 + 1] * w[1] + g[j * 3 + 2] * w[2];
      bd[j] = dot_row(bt + j * alpha, d, alpha);
    }
    for (i = 0; i < m; i++) {
      double prod[8];
      for (j = 0; j < alpha; j++) prod[j] = gg[j] * bd[j];
      y = dot_row(at + i * alpha, prod, alpha);
      want = w[0] * d[i] + w[1] * d[i + 1] + w[2] * d[i + 2];
      if (fabs(y - want) > worst) worst = fabs(y - want);
    }
    CHECK(worst < 1e-12);
  }
}

TEST(transform_matrices_compute_the_correlation) {
  check_matrices(2, &fuse__wino_bt2[0][0], &fuse__wino_at2[0][0], &fuse__wino_g2[0][0]);
  check_matrices(4, &fuse__wino_bt4[0][0], &fuse__wino_at4[0][0], &fuse__wino_g4[0][0]);
  check_matrices(6, &fuse__wino_bt6[0][0], &fuse__wino_at6[0][0], &fuse__wino_g6[0][0]);
}
