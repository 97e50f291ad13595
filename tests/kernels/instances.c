/* tests/kernels/instances.c - part of test_kernels (one program: the implementation compiled
   once): the NHWC followers and matmul, depthwise, and the pool, element-wise and transpose
   instances called directly. */

/* ------------------------------------------------- NHWC followers, matmul -- */
/* After a SIMD conv the plan keeps NHWC through the ops that follow it (pools, global average
   pool, element-wise ops with broadcasting, concat along channels), converts where an NCHW-only
   op or a view (reshape / flatten) or the graph output needs it, and runs matmul with constant
   weights on the GEMM kernel. Each graph here runs unoptimized (every op a step of its own) and
   optimized, on every ISA, against the scalar plan of the same graph. */

typedef fuse_graph *(*follow_build)(int variant, const float *w, const float *w2, const float *mw);

static const int64_t FX[4] = {2, 6, 9, 11};   /* the input: N=2, C=6, 9 x 11 */
static const int64_t FW[4] = {20, 6, 3, 3};   /* conv 6 -> 20, 3x3, pad 1 */
static const int64_t FW2[4] = {12, 20, 1, 1}; /* conv 20 -> 12, 1x1 */

static fuse_value follow_conv(fuse_graph *g, fuse_value x, const float *w) {
  fuse_conv2d_attrs a;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  return fuse_conv2d(g, x, fuse_constant(g, "w", 4, FW, w), &a);
}

static fuse_graph *follow_graph(int variant, const float *w, const float *w2, const float *mw) {
  static const float bias[20] = {0.1f, -0.2f, 0.3f, 0.05f, -0.4f, 0.2f, 0.0f, 0.7f, -0.1f, 0.25f,
                                 0.1f, -0.2f, 0.3f, 0.05f, -0.4f, 0.2f, 0.0f, 0.7f, -0.1f, 0.25f};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = fuse_input(g, "x", 4, FX), y = follow_conv(g, x, w), z;
  fuse_pool2d_attrs pa;
  fuse_conv2d_attrs one;
  int64_t b4[4] = {1, 20, 1, 1}, b3[3] = {20, 1, 1}, rs[4] = {2, 20, 9, 11}, ms[2] = {20, 37};
  int64_t fl[2] = {2, 20 * 9 * 11};
  memset(&pa, 0, sizeof pa);
  memset(&one, 0, sizeof one);
  switch (variant) {
  case 0: /* max pool 3x3 stride 2 pad 1, then relu */
    pa.kernel[0] = pa.kernel[1] = 3, pa.strides[0] = pa.strides[1] = 2;
    pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 1;
    y = fuse_relu(g, fuse_max_pool2d(g, y, &pa));
    break;
  case 1: /* average pool 3x2, padding counted, a second conv after it */
    pa.kernel[0] = 3, pa.kernel[1] = 2, pa.strides[0] = pa.strides[1] = 1;
    pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 1;
    pa.count_include_pad = 1;
    y = fuse_conv2d(g, fuse_avg_pool2d(g, y, &pa), fuse_constant(g, "w2", 4, FW2, w2), &one);
    break;
  case 2: /* average pool, padding not counted, dilated max pool */
    pa.kernel[0] = pa.kernel[1] = 3, pa.strides[0] = pa.strides[1] = 1;
    pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 1;
    y = fuse_avg_pool2d(g, y, &pa);
    pa.dilation[0] = pa.dilation[1] = 2;
    pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 2;
    y = fuse_max_pool2d(g, y, &pa);
    break;
  case 3: /* global average pool, flatten, matmul by constant weights, bias, relu */
    z = fuse_flatten(g, fuse_global_avg_pool2d(g, y), 1);
    y = fuse_relu(g, fuse_add(g, fuse_matmul(g, z, fuse_constant(g, "mw", 2, ms, mw)),
                              fuse_constant(g, "mb", 1, ms + 1, mw + 20 * 37)));
    break;
  case 4: /* broadcast operands: [1,20,1,1] and [20,1,1] constants, sigmoid, a second conv */
    y = fuse_sigmoid(g, fuse_mul(g, fuse_constant(g, "s", 4, b4, bias), y));
    y = fuse_sub(g, y, fuse_constant(g, "t", 3, b3, bias));
    y = fuse_conv2d(g, y, fuse_constant(g, "w2", 4, FW2, w2), &one);
    break;
  case 5: /* an NCHW graph input of the full shape as an operand (converted), maximum */
    y = fuse_maximum(g, y, fuse_input(g, "r", 4, rs));
    break;
  case 6: /* concat of two convs' outputs along channels, then clip */
    z = fuse_conv2d(g, y, fuse_constant(g, "w2", 4, FW2, w2), &one);
    {
      fuse_value both[2];
      both[0] = y, both[1] = z;
      y = fuse_clip(g, fuse_concat(g, 2, both, 1), -0.5f, 0.5f);
    }
    break;
  case 7: /* a view of an NHWC tensor: flatten, then matmul by a weight on the flat axis */
    y = fuse_flatten(g, fuse_relu(g, y), 1);
    y = fuse_reshape(g, y, 2, fl);
    y = fuse_relu(g, y);
    break;
  case 9: /* depthwise 3x3 on NHWC (after the conv), bias and relu6, a residual */
  case 10: /* depthwise 5x3, stride 2, dilation 2x1, padding 2 */
    {
      int64_t dws[4] = {20, 1, 3, 3};
      fuse_conv2d_attrs da;
      memset(&da, 0, sizeof da);
      da.groups = 20;
      da.padding[0] = da.padding[1] = da.padding[2] = da.padding[3] = 1;
      if (variant == 10) {
        dws[2] = 5;
        da.strides[0] = da.strides[1] = 2;
        da.dilation[0] = 2;
        da.padding[0] = da.padding[2] = 2;
      }
      z = fuse_conv2d(g, y, fuse_constant(g, "dw", 4, dws, mw), &da);
      z = fuse_add(g, z, fuse_constant(g, "db", 4, b4, bias));
      if (variant == 9) z = fuse_add(g, z, y);
      y = fuse_minimum(g, fuse_relu(g, z), fuse_constant(g, "six", 0, NULL, bias + 7));
    }
    break;
  default: /* the conv output is itself an output and feeds a relu that is another */
    fuse_output(g, y);
    y = fuse_relu(g, fuse_add(g, y, fuse_constant(g, "b", 4, b4, bias)));
    break;
  }
  fuse_output(g, y);
  return g;
}

static void follow_case(int variant, int optimize) {
  float w[20 * 6 * 9], w2[12 * 20], mw[20 * 37 + 37], x[2 * 6 * 9 * 11], r[2 * 20 * 9 * 11];
  float *want[2] = {NULL, NULL}, *got[2] = {NULL, NULL};
  size_t count[2] = {0, 0};
  int isa, o;
  fill(w, sizeof w / sizeof *w, 8000 + variant, -0.4f, 0.4f);
  fill(w2, sizeof w2 / sizeof *w2, 8100 + variant, -0.3f, 0.3f);
  fill(mw, sizeof mw / sizeof *mw, 8200 + variant, -0.2f, 0.2f);
  fill(x, sizeof x / sizeof *x, 8300 + variant, -1, 1);
  fill(r, sizeof r / sizeof *r, 8400 + variant, -1, 1);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++) {
    fuse_graph *g;
    fuse_plan *p = NULL;
    fuse_compile_options opt;
    const float *ins[2];
    float **outs = isa == REFERENCE ? want : got;
    if (!isa_have[isa]) continue;
    g = follow_graph(variant, w, w2, mw);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    if (optimize) CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
    memset(&opt, 0, sizeof opt);
    set_isa(&opt, isa);
    CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
    for (o = 0; o < fuse_graph_output_count(g); o++) {
      fuse_value v = fuse_graph_output(g, o);
      const int64_t *shape = fuse_value_shape(g, v);
      int rank = fuse_value_rank(g, v), d;
      count[o] = 1;
      for (d = 0; d < rank; d++) count[o] *= (size_t)shape[d];
      if (!outs[o]) outs[o] = falloc(count[o]);
    }
    ins[0] = x, ins[1] = r;
    if (p) CHECK_EQ_INT(fuse_run(p, ins, outs, NULL), FUSE_OK);
    fuse_plan_destroy(p);
    if (isa != REFERENCE)
      for (o = 0; o < 2 && got[o]; o++) {
        double err;
        long bad;
        int same = compare(got[o], want[o], count[o], &err, &bad);
        n_compared[isa]++;
        if (err > worst_err[isa]) worst_err[isa] = err;
        if (!same || !(err <= TOL)) {
          runner_test_failed = 1;
          fprintf(stderr, "  FAIL %s: variant %d (%s) output %d on %s: error %.3g (first bad %ld)\n",
                  runner_current, variant, optimize ? "optimized" : "op by op", o, isa_name((fuse_isa)isa),
                  err, bad);
        }
      }
    fuse_graph_destroy(g);
  }
  for (o = 0; o < 2; o++) free(want[o]), free(got[o]);
}

/* ---------------------------------------------------------------- depthwise -- */

/* Depthwise conv on both SIMD kernels against scalar (TOL, normwise) and the double oracle.
   NCHW (graph input straight into the conv: the register kernels for 3x3 / 5x5 with row
   dilation 1 and row stride 1 or 2, straight from the input when the column stride is 1, from
   the band buffer otherwise; the 8-slot band-buffer kernel for the rest): 3x3, 5x5 and 7x3,
   strides 1-3 (also unequal), dilation 1-3, symmetric, asymmetric and no padding, padding
   larger than the kernel reach, channels 1, 3, 17, 33 (no multiple of 16 or 8), widths that
   leave every tail (OW 1 .. 40 and 112: tiles 1x8, 2x4, 4x2, 8x1 with partial vectors and
   rows), batch 1 and 2, every epilogue: none, bias, bias + residual (either order) + clamp,
   relu6. NHWC (a 1x1 conv first, so the depthwise reads the GEMM's NHWC output; 8-pixel
   register blocks for 3x3 / 5x5, column stride 1 or 2, column dilation 1): the same shapes,
   with bias, a residual and relu6 or clip. */
typedef struct dwcase {
  int N, C, H, W, K, sh, sw, dh, dw, pt, pl, pb, pr;
} dwcase;

static const dwcase dw_cases[] = {
    {1, 32, 112, 112, 3, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 17, 56, 56, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    {2, 3, 14, 14, 3, 1, 1, 1, 1, 1, 1, 1, 1},    {1, 33, 7, 7, 5, 1, 1, 1, 1, 2, 2, 2, 2},
    {2, 5, 19, 23, 5, 2, 2, 1, 1, 2, 2, 2, 2},    {1, 1, 40, 40, 3, 1, 1, 2, 2, 2, 2, 2, 2},
    {1, 7, 33, 35, 3, 1, 2, 1, 2, 0, 1, 2, 3},    {1, 9, 21, 17, 7, 3, 3, 1, 1, 3, 3, 3, 3},
    {1, 4, 9, 30, 3, 2, 1, 2, 1, 0, 0, 0, 0},     {2, 18, 5, 3, 3, 1, 1, 1, 1, 4, 5, 4, 5},
    {1, 6, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1},      {1, 19, 12, 47, 5, 1, 3, 2, 1, 1, 4, 0, 2},
    {1, 16, 16, 16, 3, 1, 1, 1, 1, 1, 1, 1, 1},   {1, 24, 28, 28, 3, 2, 2, 1, 1, 0, 0, 1, 1},
    {1, 8, 64, 64, 3, 1, 1, 1, 1, 1, 1, 1, 1},    {1, 2, 130, 66, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 10, 23, 29, 3, 2, 1, 1, 1, 1, 1, 1, 1},   {1, 6, 17, 37, 5, 2, 1, 1, 2, 2, 0, 1, 3},
    {1, 3, 20, 45, 3, 1, 1, 1, 3, 1, 3, 1, 3},    {1, 20, 9, 40, 5, 1, 1, 1, 1, 2, 2, 2, 2},
    {1, 9, 16, 64, 5, 2, 2, 1, 1, 2, 2, 2, 2},
};

static void dw_nchw_case(const dwcase *k, int epi, uint32_t seed) {
  ccase c = plain_case(k->N, k->C, k->C, k->H, k->W, k->K, k->K == 7 ? 3 : k->K, k->C);
  c.a.strides[0] = k->sh, c.a.strides[1] = k->sw;
  c.a.dilation[0] = k->dh, c.a.dilation[1] = k->dw;
  c.a.padding[0] = k->pt, c.a.padding[1] = k->pl, c.a.padding[2] = k->pb, c.a.padding[3] = k->pr;
  c.bias = epi == 0 ? BIAS_NONE : BIAS_RESHAPE;
  c.residual = epi == 2 ? RES_AFTER : epi == 3 ? RES_BEFORE : RES_NONE;
  c.clamp = epi == 0 || epi == 1 ? CL_NONE : epi == 2 ? CL_CLIP : CL_RELU6_MIN;
  if (epi == 3) c.hi = 6.0f;
  if (epi == 1) c.clamp = CL_RELU6_MIN, c.hi = 0.5f;
  run_simple(&c, seed);
}

/* x [N,C,H,W] -> 1x1 conv C>C (GEMM, NHWC) -> depthwise + bias + residual + clamp. */
static void dw_nhwc_case(const dwcase *k, int epi, uint32_t seed) {
  int KW = k->K == 7 ? 3 : k->K, OH, OW, isa;
  int64_t xs[4], w1s[4], ws[4], bs[3], ys[4];
  size_t nx, ny;
  float *x, *w1, *w, *b, *r, *want, *got;
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs one, a;
  fuse_value v, y;
  OH = (k->H + k->pt + k->pb - k->dh * (k->K - 1) - 1) / k->sh + 1;
  OW = (k->W + k->pl + k->pr - k->dw * (KW - 1) - 1) / k->sw + 1;
  xs[0] = k->N, xs[1] = k->C, xs[2] = k->H, xs[3] = k->W;
  w1s[0] = k->C, w1s[1] = k->C, w1s[2] = 1, w1s[3] = 1;
  ws[0] = k->C, ws[1] = 1, ws[2] = k->K, ws[3] = KW;
  bs[0] = k->C, bs[1] = 1, bs[2] = 1;
  ys[0] = k->N, ys[1] = k->C, ys[2] = OH, ys[3] = OW;
  nx = (size_t)k->N * k->C * k->H * k->W, ny = (size_t)k->N * k->C * OH * OW;
  x = falloc(nx), r = falloc(ny), want = falloc(ny), got = falloc(ny);
  w1 = falloc((size_t)k->C * k->C), w = falloc((size_t)k->C * k->K * KW), b = falloc((size_t)k->C);
  fill(x, nx, seed * 8 + 0, -1, 1);
  fill(r, ny, seed * 8 + 1, -1, 1);
  fill(w1, (size_t)k->C * k->C, seed * 8 + 2, -0.5f, 0.5f);
  fill(w, (size_t)k->C * k->K * KW, seed * 8 + 3, -0.5f, 0.5f);
  fill(b, (size_t)k->C, seed * 8 + 4, -0.5f, 0.5f);
  memset(&one, 0, sizeof one);
  memset(&a, 0, sizeof a);
  a.strides[0] = k->sh, a.strides[1] = k->sw, a.dilation[0] = k->dh, a.dilation[1] = k->dw;
  a.padding[0] = k->pt, a.padding[1] = k->pl, a.padding[2] = k->pb, a.padding[3] = k->pr;
  a.groups = k->C;
  v = fuse_conv2d(g, fuse_input(g, "x", 4, xs), fuse_constant(g, "w1", 4, w1s, w1), &one);
  y = fuse_conv2d(g, v, fuse_constant(g, "w", 4, ws, w), &a);
  if (epi) y = fuse_add(g, y, fuse_constant(g, "b", 3, bs, b));
  if (epi >= 2) y = fuse_add(g, y, fuse_input(g, "r", 4, ys));
  if (epi == 2) y = fuse_clip(g, y, -0.25f, 0.5f);
  if (epi == 1 || epi == 3) y = fuse_minimum(g, fuse_relu(g, y), fuse_scalar(g, 6.0f));
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++) {
    fuse_compile_options opt;
    fuse_plan *p = NULL;
    const float *ins[2];
    float *outs[1];
    double err;
    long bad;
    if (!isa_have[isa]) continue;
    memset(&opt, 0, sizeof opt);
    set_isa(&opt, isa);
    ins[0] = x, ins[1] = r;
    outs[0] = isa == REFERENCE ? want : got;
    memset(outs[0], 0xff, ny * sizeof(float));
    CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
    if (!p) continue;
    CHECK_EQ_INT(fuse_run(p, ins, outs, NULL), FUSE_OK);
    fuse_plan_destroy(p);
    if (isa == REFERENCE) continue;
    n_compared[isa]++;
    if (!compare(got, want, ny, &err, &bad) || !(err <= TOL)) {
      runner_test_failed = 1;
      fprintf(stderr, "  FAIL %s: NHWC depthwise %s: N=%d C=%d %dx%d k%dx%d s%d,%d d%d,%d "
              "pad %d,%d,%d,%d epilogue %d: error %.3g (first bad %ld)\n", runner_current,
              isa_name((fuse_isa)isa), k->N, k->C, k->H, k->W, k->K, KW, k->sh, k->sw, k->dh,
              k->dw, k->pt, k->pl, k->pb, k->pr, epi, err, bad);
    }
    if (err > worst_err[isa]) worst_err[isa] = err;
  }
  fuse_graph_destroy(g);
  free(x), free(r), free(want), free(got), free(w1), free(w), free(b);
}

TEST(depthwise) {
  int i, epi;
  for (i = 0; i < (int)(sizeof dw_cases / sizeof dw_cases[0]); i++)
    for (epi = 0; epi < 4; epi++) {
      dw_nchw_case(&dw_cases[i], epi, 7000u + (uint32_t)(i * 4 + epi));
      dw_nhwc_case(&dw_cases[i], epi, 8000u + (uint32_t)(i * 4 + epi));
    }
  printf("depthwise: %d shapes x 4 epilogues, NCHW and NHWC\n", i);
}

/* The depthwise, pool, element-wise and transpose instances called directly (each one the
   CPU runs and always the scalar twin) against plain loops of the op's definition, on random
   shapes: kernels 3x3, 5x5 (the register kernels) and others, strides 1-3, dilation 1-2,
   padding, planes and channel counts narrower than a vector, each post-op kind in random
   order. */
typedef void (*dw_instance_fn)(const fuse__dw_args *d, void *buf, int64_t r0, int64_t r1);
typedef struct kernel_instances {
  fuse_isa isa;
  dw_instance_fn nhwc, nchw;
  void (*pool)(const fuse__pool_args *d, int64_t r0, int64_t r1);
  void (*elt)(int op, float *y, const float *a, int sa, const float *b, int sb, int64_t n,
              float lo, float hi);
  void (*transpose)(const float *x, int64_t ldx, float *y, int64_t ldy, int64_t rows,
                    int64_t cols);
} kernel_instances;

static const kernel_instances instances[] = {
    {FUSE_ISA_SCALAR, fuse__dw_scalar, fuse__dwc_scalar, fuse__pool_scalar, fuse__elt_scalar,
     fuse__transpose_scalar},
#if defined(TEST_X86) && !defined(FUSE_NO_AVX2)
    {FUSE_ISA_AVX2, fuse__dw_avx2, fuse__dwc_avx2, fuse__pool_avx2, fuse__elt_avx2,
     fuse__transpose_avx2},
#endif
#if defined(TEST_X86) && !defined(FUSE_NO_AVX512)
    {FUSE_ISA_AVX512, fuse__dw_avx512, fuse__dwc_avx512, fuse__pool_avx512, fuse__elt_avx512,
     NULL},
#endif
#ifdef TEST_NEON
    {FUSE_ISA_NEON, fuse__dw_neon, fuse__dwc_neon, fuse__pool_neon, fuse__elt_neon,
     fuse__transpose_neon},
#endif
};
#define NUM_INSTANCES ((int)(sizeof instances / sizeof instances[0]))

static int close_to(const float *got, const float *want, size_t n, size_t *bad) {
  size_t i;
  for (i = 0; i < n; i++)
    if (got[i] != want[i] && !(fabsf(got[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i])))) {
      *bad = i;
      return 0;
    }
  return 1;
}

static void *aligned_scratch(size_t n, void **raw) {
  unsigned char *p = (unsigned char *)malloc(n + 64);
  *raw = p;
  return p + (64 - (uintptr_t)p % 64) % 64;
}

static void dw_instance_case(uint32_t seed, int *shapes_seen) {
  int N = rnd_in(1, 2), C = rnd_in(1, 40), H = rnd_in(1, 24), W = rnd_in(1, 40);
  int pick = rnd(4), KH = pick < 2 ? 3 : pick == 2 ? 5 : rnd_in(1, 7);
  int KW = pick < 3 ? KH : rnd_in(1, 7);
  int sh = rnd_in(1, 3), sw = rnd_in(1, 3), dh = rnd(3) ? 1 : 2, dw = rnd(3) ? 1 : 2;
  int pt = rnd(KH), pl = rnd(KW), pb = rnd(KH), pr = rnd(KW), OH, OW, q, i, num_post = rnd(4);
  int64_t Cp = (C + 15) / 16 * 16, kh, kw, n, c, oh, ow;
  fuse_post_op post[FUSE_MAX_POST_OPS];
  float *x, *w, *wp, *bias, *res[FUSE_MAX_POST_OPS], *want, *got, *zeros, *xt;
  size_t nx, ny;
  int layout;
  if (rnd(2)) sh = sw = rnd_in(1, 2); /* more of the register kernels */
  OH = (H + pt + pb - dh * (KH - 1) - 1) / sh + 1;
  OW = (W + pl + pr - dw * (KW - 1) - 1) / sw + 1;
  if (OH < 1 || OW < 1) return;
  nx = (size_t)N * C * H * W, ny = (size_t)N * C * OH * OW;
  x = falloc(nx), xt = falloc(nx), want = falloc(ny), got = falloc(ny), bias = falloc((size_t)C);
  w = falloc((size_t)C * KH * KW), wp = falloc((size_t)KH * KW * Cp), zeros = falloc((size_t)W + 64);
  fill(x, nx, seed * 16 + 1, -1, 1);
  fill(w, (size_t)C * KH * KW, seed * 16 + 2, -0.5f, 0.5f);
  fill(bias, (size_t)C, seed * 16 + 3, -0.5f, 0.5f);
  memset(zeros, 0, ((size_t)W + 64) * sizeof(float));
  memset(wp, 0, (size_t)KH * KW * Cp * sizeof(float)); /* packed [tap][Cp] */
  for (c = 0; c < C; c++)
    for (i = 0; i < KH * KW; i++) wp[i * Cp + c] = w[c * KH * KW + i];
  for (q = 0; q < num_post; q++) {
    memset(&post[q], 0, sizeof post[q]);
    post[q].kind = rnd(2) ? FUSE_POST_ADD : FUSE_POST_CLAMP;
    post[q].lo = rnd(2) ? 0.0f : -0.3f;
    post[q].hi = rnd(2) ? 6.0f : rnd(2) ? 0.4f : HUGE_VALF;
    res[q] = falloc(ny);
    fill(res[q], ny, seed * 16 + 4 + (uint32_t)q, -1, 1);
  }
  for (layout = 0; layout < 2; layout++) { /* NCHW, then NHWC (x, y, residuals transposed) */
    int64_t NHWC = layout;
    for (n = 0; n < N; n++) /* the oracle, in the layout's order */
      for (c = 0; c < C; c++)
        for (oh = 0; oh < OH; oh++)
          for (ow = 0; ow < OW; ow++) {
            double s = bias[c];
            int64_t at = NHWC ? ((n * OH + oh) * OW + ow) * C + c : ((n * C + c) * OH + oh) * OW + ow;
            float v;
            for (kh = 0; kh < KH; kh++)
              for (kw = 0; kw < KW; kw++) {
                int64_t ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += (double)x[((n * C + c) * H + ih) * W + iw] * w[(c * KH + kh) * KW + kw];
              }
            v = (float)s;
            for (q = 0; q < num_post; q++)
              v = post[q].kind == FUSE_POST_ADD ? v + res[q][at]
                                                : fminf(post[q].hi, fmaxf(post[q].lo, v));
            want[at] = v;
          }
    for (i = 0; i < NUM_INSTANCES; i++) {
      const kernel_instances *k = &instances[i];
      fuse__dw_args d;
      void *raw = NULL, *scratch = NULL;
      size_t bad = 0;
      if (!isa_have[k->isa]) continue;
      memset(&d, 0, sizeof d);
      d.x = x, d.w = wp, d.bias = bias, d.y = got, d.post = post, d.num_post = num_post;
      for (q = 0; q < num_post; q++) d.residual[q] = post[q].kind == FUSE_POST_ADD ? res[q] : NULL;
      d.KH = KH, d.KW = KW, d.C = C, d.Cp = Cp, d.H = H, d.W = W, d.OH = OH, d.OW = OW;
      d.sh = sh, d.sw = sw, d.pt = pt, d.pl = pl, d.dh = dh, d.dw = dw, d.zeros = zeros;
      memset(got, 0xff, ny * sizeof(float));
      if (NHWC) {
        int64_t p;
        for (n = 0; n < N; n++) /* x to NHWC */
          for (c = 0; c < C; c++)
            for (p = 0; p < (int64_t)H * W; p++) xt[(n * H * W + p) * C + c] = x[(n * C + c) * H * W + p];
        d.x = xt;
        k->nhwc(&d, NULL, 0, (int64_t)N * OH);
      } else {
        scratch = aligned_scratch(fuse__dwc_scratch(OH, OW, KH, KW, sh, sw, dh, dw), &raw);
        k->nchw(&d, scratch, 0, (int64_t)N * C);
      }
      free(raw);
      if (!close_to(got, want, ny, &bad)) {
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: %s %s: N=%d C=%d %dx%d k%dx%d s%d,%d d%d,%d pad %d,%d,%d,%d "
                "posts %d: element %zu is %g, want %g\n", runner_current,
                NHWC ? "fuse__dw" : "fuse__dwc", isa_name(k->isa), N, C, H, W, KH, KW, sh, sw,
                dh, dw, pt, pl, pb, pr, num_post, bad, got[bad], want[bad]);
      }
    }
  }
  if (KH == KW && (KH == 3 || KH == 5) && sh <= 2 && dh == 1) shapes_seen[0]++;
  else shapes_seen[1]++;
  free(x), free(xt), free(w), free(wp), free(bias), free(want), free(got), free(zeros);
  for (q = 0; q < num_post; q++) free(res[q]);
}

TEST(depthwise_instances) {
  int i, seen[2] = {0, 0};
  shape_rng = 0x5eed0d3bu;
  for (i = 0; i < 400; i++) dw_instance_case(20000u + (uint32_t)i, seen);
  printf("depthwise_instances: %d on the register kernels, %d others, each instance and layout\n",
         seen[0], seen[1]);
}

/* Every instance against the oracle; and, bit for bit, against the first instance (the
   scalar twin): every fourth case has 60 to 140 channels (windows inside the input take whole
   groups of four vectors at once, the rest vector by vector; the bits must not tell), every
   eighth NaNs of two payloads (max keeps the last NaN of a window). Max against the oracle
   bit for bit, average within close_to. */
TEST(pool_instances) {
  int t;
  shape_rng = 0x900151u;
  for (t = 0; t < 200; t++) {
    int N = rnd_in(1, 2), C = t % 4 == 3 ? rnd_in(60, 140) : rnd_in(1, 40);
    int H = rnd_in(1, 14), W = rnd_in(1, 14), i, first = -1, nans = t % 8 == 7;
    fuse_pool2d_attrs a;
    int64_t OH, OW, n, oh, ow, c, kh, kw;
    float *x, *want, *got, *first_got;
    size_t nx, ny, bad = 0;
    memset(&a, 0, sizeof a);
    a.kernel[0] = rnd_in(1, 4), a.kernel[1] = rnd_in(1, 4);
    a.strides[0] = rnd_in(1, 3), a.strides[1] = rnd_in(1, 3);
    a.dilation[0] = rnd_in(1, 2), a.dilation[1] = rnd_in(1, 2);
    a.padding[0] = rnd(a.kernel[0]), a.padding[1] = rnd(a.kernel[1]);
    a.padding[2] = rnd(a.kernel[0]), a.padding[3] = rnd(a.kernel[1]);
    a.count_include_pad = rnd(2);
    OH = (H + a.padding[0] + a.padding[2] - a.dilation[0] * (a.kernel[0] - 1) - 1) / a.strides[0] + 1;
    OW = (W + a.padding[1] + a.padding[3] - a.dilation[1] * (a.kernel[1] - 1) - 1) / a.strides[1] + 1;
    if (OH < 1 || OW < 1) continue;
    if (!(t & 1)) a.dilation[0] = a.dilation[1] = 1; /* average pool: no dilation */
    OH = (H + a.padding[0] + a.padding[2] - a.dilation[0] * (a.kernel[0] - 1) - 1) / a.strides[0] + 1;
    OW = (W + a.padding[1] + a.padding[3] - a.dilation[1] * (a.kernel[1] - 1) - 1) / a.strides[1] + 1;
    nx = (size_t)N * H * W * C, ny = (size_t)N * OH * OW * C;
    x = falloc(nx), want = falloc(ny), got = falloc(ny), first_got = falloc(ny);
    fill(x, nx, 31000u + (uint32_t)t, -1, 1);
    for (i = 0; nans && i < (int)nx; i++) { /* a sixth NaNs, two payloads, hashed places */
      uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)t * 40503u, bits;
      h ^= h >> 15;
      bits = h >> 8 & 1 ? 0x7fc00001u : 0xffc00002u;
      if (h % 6 == 0) memcpy(&x[i], &bits, sizeof bits);
    }
    for (n = 0; n < N; n++) /* the oracle on NHWC: max (odd t) or average (even t) */
      for (oh = 0; oh < OH; oh++)
        for (ow = 0; ow < OW; ow++)
          for (c = 0; c < C; c++) {
            int64_t h0 = oh * a.strides[0] - a.padding[0], w0 = ow * a.strides[1] - a.padding[1];
            double s = 0;
            float m = -HUGE_VALF; /* in float, by the rule the kernels keep: the bits */
            int64_t cnt = 0, h1 = h0 + a.kernel[0], w1 = w0 + a.kernel[1];
            float xv;
            for (kh = 0; kh < a.kernel[0]; kh++)
              for (kw = 0; kw < a.kernel[1]; kw++) {
                int64_t ih = h0 + kh * a.dilation[0], iw = w0 + kw * a.dilation[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += x[((n * H + ih) * W + iw) * C + c], cnt++;
                xv = x[((n * H + ih) * W + iw) * C + c];
                if (xv > m || xv != xv) m = xv; /* the last NaN of the window stays */
              }
            if (a.count_include_pad) { /* the window clipped to the padded input */
              if (h1 > H + a.padding[2]) h1 = H + a.padding[2];
              if (w1 > W + a.padding[3]) w1 = W + a.padding[3];
              cnt = (h1 - h0) * (w1 - w0);
            }
            want[((n * OH + oh) * OW + ow) * C + c] = t & 1 ? m : (float)(s / (double)cnt);
          }
    for (i = 0; i < NUM_INSTANCES; i++) {
      fuse__pool_args d;
      if (!isa_have[instances[i].isa]) continue;
      memset(&d, 0, sizeof d);
      d.x = x, d.y = got, d.a = &a, d.is_max = t & 1;
      d.C = C, d.H = H, d.W = W, d.OH = OH, d.OW = OW, d.ldy = C;
      memset(got, 0xff, ny * sizeof(float));
      instances[i].pool(&d, 0, N * OH);
      { /* into a concat's slice: pixels C + 3 floats apart, the same bits, the gaps untouched */
        size_t npix = ny / (size_t)C, q;
        float *wide = falloc(npix * (size_t)(C + 3));
        memset(wide, 0x5a, npix * (size_t)(C + 3) * sizeof(float));
        d.y = wide, d.ldy = C + 3;
        instances[i].pool(&d, 0, N * OH);
        for (q = 0; q < npix; q++) {
          unsigned char gap[3 * sizeof(float)];
          memset(gap, 0x5a, sizeof gap);
          if (memcmp(wide + q * (size_t)(C + 3), got + q * (size_t)C, (size_t)C * sizeof(float)) ||
              memcmp(wide + q * (size_t)(C + 3) + C, gap, sizeof gap)) {
            runner_test_failed = 1;
            fprintf(stderr, "  FAIL %s: %s pool %s: C=%d %dx%d: pixel %zu differs written %d apart\n",
                    runner_current, t & 1 ? "max" : "average", isa_name(instances[i].isa), C, H,
                    W, q, C + 3);
            break;
          }
        }
        free(wide);
        d.y = got, d.ldy = C;
      }
      if (first < 0) {
        first = i;
        memcpy(first_got, got, ny * sizeof(float));
      } else if (memcmp(got, first_got, ny * sizeof(float)) != 0) {
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: %s pool %s: C=%d %dx%d k%dx%d: not the bits of %s\n",
                runner_current, t & 1 ? "max" : "average", isa_name(instances[i].isa), C, H, W,
                a.kernel[0], a.kernel[1], isa_name(instances[first].isa));
      }
      if (t & 1 ? memcmp(got, want, ny * sizeof(float)) != 0 : !close_to(got, want, ny, &bad)) {
        for (bad = 0; t & 1 && bad + 1 < ny && !memcmp(&got[bad], &want[bad], sizeof(float)); bad++) {
        }
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: %s pool %s: C=%d %dx%d k%dx%d: element %zu is %g, want %g\n",
                runner_current, t & 1 ? "max" : "average", isa_name(instances[i].isa), C, H, W,
                a.kernel[0], a.kernel[1], bad, got[bad], want[bad]);
      }
    }
    free(x), free(want), free(got), free(first_got);
  }
}

TEST(elementwise_and_transpose_instances) {
  static const int ops[7] = {FUSE__OP_ADD, FUSE__OP_SUB,  FUSE__OP_MUL, FUSE__OP_MAXIMUM,
                             FUSE__OP_MINIMUM, FUSE__OP_RELU, FUSE__OP_CLIP};
  float a[70], b[70], want[70], got[70], *x, *y;
  int t, i, j;
  shape_rng = 0xe17u;
  for (t = 0; t < 140; t++) {
    int op = ops[t % 7], n = rnd_in(1, 70), sa = rnd(4) != 0, sb = rnd(4) != 0;
    fill(a, 70, 32000u + (uint32_t)t, -2, 2);
    fill(b, 70, 33000u + (uint32_t)t, -2, 2);
    a[rnd(70)] = NAN, b[rnd(70)] = NAN;
    for (j = 0; j < n; j++) {
      float u = a[sa ? j : 0], v = b[sb ? j : 0];
      want[j] = op == FUSE__OP_RELU ? (u < 0 ? 0.0f : u)
                : op == FUSE__OP_CLIP ? (u < -0.5f ? -0.5f : u > 0.75f ? 0.75f : u)
                                      : fuse__binary_op(op, u, v);
    }
    for (i = 0; i < NUM_INSTANCES; i++) {
      if (!isa_have[instances[i].isa]) continue;
      memset(got, 0, sizeof got);
      instances[i].elt(op, got, a, sa, b, sb, n, -0.5f, 0.75f);
      if (memcmp(got, want, (size_t)n * sizeof(float)) != 0) { /* bit-exact, NaN included */
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: element-wise op %d on %s, n %d, sa %d, sb %d\n",
                runner_current, op, isa_name(instances[i].isa), n, sa, sb);
      }
    }
  }
  x = falloc(300 * 70), y = falloc(300 * 70);
  fill(x, 300 * 70, 34000u, -1, 1);
  for (t = 0; t < 40; t++) {
    int rows = rnd_in(1, 300), cols = rnd_in(1, 70), r, c;
    for (i = 0; i < NUM_INSTANCES; i++) {
      if (!isa_have[instances[i].isa] || !instances[i].transpose) continue;
      memset(y, 0, 300 * 70 * sizeof(float));
      instances[i].transpose(x, 70, y, rows + 3, rows, cols);
      for (r = 0; r < rows; r++)
        for (c = 0; c < cols; c++)
          if (y[c * (rows + 3) + r] != x[r * 70 + c]) {
            runner_test_failed = 1;
            fprintf(stderr, "  FAIL %s: transpose on %s, %d x %d at %d, %d\n", runner_current,
                    isa_name(instances[i].isa), rows, cols, r, c);
            r = rows, c = cols;
          }
    }
  }
  for (t = 0; t < 30; t++) { /* three rows into pixels of three (an RGB image to NHWC) */
    int cols = t < 20 ? t + 1 : rnd_in(21, 70), c;
    for (i = 0; i < NUM_INSTANCES; i++) {
      if (!isa_have[instances[i].isa] || !instances[i].transpose) continue;
      memset(y, 0, 300 * 70 * sizeof(float));
      instances[i].transpose(x, 70, y, 3, 3, cols);
      for (c = 0; c < 3 * cols + 8; c++)
        if (y[c] != (c < 3 * cols ? x[c % 3 * 70 + c / 3] : 0.0f)) {
          runner_test_failed = 1;
          fprintf(stderr, "  FAIL %s: 3 rows to pixels on %s, %d columns, at %d\n",
                  runner_current, isa_name(instances[i].isa), cols, c);
          break;
        }
    }
  }
  free(x), free(y);
}

TEST(nhwc_followers_and_matmul) {
  int v;
  for (v = 0; v <= 10; v++) {
    follow_case(v, 0);
    follow_case(v, 1);
  }
}

/* Element-wise steps on the SIMD path (rows of the last axis, whole tensors, scalars) with
   NaN and infinities in the inputs: the same NaN positions and values as the scalar plan. */
TEST(elementwise_nan) {
  static const int64_t xs[4] = {2, 3, 4, 37}, cs[4] = {1, 3, 1, 1}, ls[1] = {37};
  float x[2 * 3 * 4 * 37], c[3] = {0.25f, -0.5f, 0.0f}, l[37], *want[6], *got[6];
  int isa, o, k;
  fill(x, sizeof x / sizeof *x, 9100, -2, 2);
  fill(l, 37, 9101, -1, 1);
  for (k = 0; k < (int)(sizeof x / sizeof *x); k += 7) x[k] = k % 3 ? NAN : k % 2 ? INF : -INF;
  x[1] = -0.0f;
  l[3] = NAN;
  for (o = 0; o < 6; o++) want[o] = falloc(sizeof x / sizeof *x), got[o] = falloc(sizeof x / sizeof *x);
  for (isa = REFERENCE; isa <= LAST_ISA; isa++) {
    fuse_graph *g;
    fuse_plan *p = NULL;
    fuse_compile_options opt;
    fuse_value in, cv, lv;
    const float *ins[1];
    if (!isa_have[isa]) continue;
    g = fuse_graph_create(NULL);
    in = fuse_input(g, "x", 4, xs);
    cv = fuse_constant(g, "c", 4, cs, c);
    lv = fuse_constant(g, "l", 1, ls, l);
    fuse_output(g, fuse_maximum(g, in, cv));
    fuse_output(g, fuse_minimum(g, lv, in));
    fuse_output(g, fuse_relu(g, in));
    fuse_output(g, fuse_clip(g, in, -0.5f, 0.75f));
    fuse_output(g, fuse_sub(g, in, lv));
    fuse_output(g, fuse_mul(g, in, in));
    memset(&opt, 0, sizeof opt);
    set_isa(&opt, isa);
    CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
    ins[0] = x;
    if (p) CHECK_EQ_INT(fuse_run(p, ins, isa == REFERENCE ? want : got, NULL), FUSE_OK);
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
    if (isa == REFERENCE) continue;
    for (o = 0; o < 6; o++)
      if (memcmp(got[o], want[o], sizeof x) != 0) { /* bit-exact: no reassociation here */
        runner_test_failed = 1;
        fprintf(stderr, "  FAIL %s: output %d on %s differs from scalar\n", runner_current, o,
                isa_name((fuse_isa)isa));
      }
  }
  for (o = 0; o < 6; o++) free(want[o]), free(got[o]);
}

TEST(matmul_shapes) {
  CHECK_EQ_INT((int)fuse_plan_weights_size(NULL), 0);
  static const int Ms[] = {1, 5, 13, 64}, Ns[] = {4, 37, 72, 100, 256}, Ks[] = {3, 64, 300};
  int mi, ni, ki, isa;
  for (mi = 0; mi < 4; mi++)
    for (ni = 0; ni < 5; ni++)
      for (ki = 0; ki < 3; ki++) {
        int M = Ms[mi], N = Ns[ni], K = Ks[ki];
        int64_t xs[2], ws[2], bs[1];
        float *x = falloc((size_t)M * K), *w = falloc((size_t)K * N), *b = falloc((size_t)N);
        float *want = falloc((size_t)M * N), *got = falloc((size_t)M * N);
        xs[0] = M, xs[1] = K, ws[0] = K, ws[1] = N, bs[0] = N;
        fill(x, (size_t)M * K, 9000u + (uint32_t)(mi * 100 + ni * 10 + ki), -1, 1);
        fill(w, (size_t)K * N, 9500u + (uint32_t)(mi * 100 + ni * 10 + ki), -0.5f, 0.5f);
        fill(b, (size_t)N, 9900u, -0.5f, 0.5f);
        for (isa = REFERENCE; isa <= LAST_ISA; isa++) {
          fuse_graph *g;
          fuse_plan *p = NULL;
          fuse_compile_options opt;
          const float *ins[1];
          float *outs[1];
          fuse_value y;
          if (!isa_have[isa]) continue;
          g = fuse_graph_create(NULL);
          y = fuse_matmul(g, fuse_input(g, "x", 2, xs), fuse_constant(g, "w", 2, ws, w));
          y = fuse_clip(g, fuse_add(g, y, fuse_constant(g, "b", 1, bs, b)), -1.0f, 1.5f);
          fuse_output(g, y);
          CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
          memset(&opt, 0, sizeof opt);
          set_isa(&opt, isa);
          CHECK_EQ_INT(fuse_compile(g, &opt, &p), FUSE_OK);
          /* the weights once: the constant, or its packed copy (padded to whole tiles) */
          CHECK(fuse_plan_weights_size(p) >= (size_t)(K * N + N) * sizeof(float));
          CHECK(fuse_plan_weights_size(p) < (size_t)(2 * K * N + 2 * N) * sizeof(float) + 65536);
          ins[0] = x;
          outs[0] = isa == REFERENCE ? want : got;
          if (p) CHECK_EQ_INT(fuse_run(p, ins, outs, NULL), FUSE_OK);
          fuse_plan_destroy(p);
          fuse_graph_destroy(g);
          if (isa != REFERENCE) {
            double err;
            long bad;
            int same = compare(got, want, (size_t)M * N, &err, &bad);
            n_compared[isa]++;
            if (err > worst_err[isa]) worst_err[isa] = err;
            if (!same || !(err <= TOL)) {
              runner_test_failed = 1;
              fprintf(stderr, "  FAIL %s: matmul M=%d K=%d N=%d on %s: error %.3g\n", runner_current,
                      M, K, N, isa_name((fuse_isa)isa), err);
            }
          }
        }
        free(x), free(w), free(b), free(want), free(got);
      }
}
