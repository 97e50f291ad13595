/* epilogue_helpers.h - what test_epilogue.c and test_optimize.c share: the reference plan,
   graph builders, runs fused against unfused, the analyzer's checks. */
#ifndef EPILOGUE_HELPERS_H
#define EPILOGUE_HELPERS_H

#define TOL 1e-5

/* The reference plan (reference_kernels): one step per op or fused chain. Plans on the kernel
   table (SIMD or scalar twins) add layout conversions around the convs (test_kernels counts
   their compute steps). */
RUNNER_UNUSED
static const fuse_compile_options *scalar_plan(void) {
  static fuse_compile_options o; /* zero but for these */
  o.isa = FUSE_ISA_SCALAR;
  o.reference_kernels = 1;
  return &o;
}

RUNNER_UNUSED
static const float INF = HUGE_VALF;

/* ------------------------------------------------------------------ helpers -- */

RUNNER_UNUSED
static uint32_t rng_state = 1;
RUNNER_UNUSED
static float frand(void) { /* uniform in [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) / 8388608.0 - 1.0);
}
RUNNER_UNUSED
static size_t numel(int rank, const int64_t *s) {
  size_t n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= (size_t)s[i];
  return n;
}
RUNNER_UNUSED
static float *frandom(size_t n, uint32_t seed) {
  float *p = (float *)malloc((n ? n : 1) * sizeof(float));
  size_t i;
  rng_state = seed * 2654435761u + 7u;
  for (i = 0; i < n; i++) p[i] = frand();
  return p;
}

RUNNER_UNUSED
static fuse_value inp(fuse_graph *g, const char *name, int rank, const int64_t *s) {
  return fuse_input(g, name, rank, s);
}
/* A constant with random values in [-1, 1) (seeded, so two builds of a graph agree). */
RUNNER_UNUSED
static fuse_value cst(fuse_graph *g, int rank, const int64_t *s, uint32_t seed) {
  float *d = frandom(numel(rank, s), seed);
  fuse_value v = fuse_constant(g, NULL, rank, s, d);
  free(d);
  return v;
}
RUNNER_UNUSED
static fuse_value cst_vals(fuse_graph *g, int rank, const int64_t *s, const float *d) {
  return fuse_constant(g, NULL, rank, s, d);
}

RUNNER_UNUSED
static const fuse_conv2d_attrs PAD1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};

/* conv2d(x [1, C, H, W], w const [K, C, 3, 3], padding 1) -> [1, K, H, W] */
RUNNER_UNUSED
static fuse_value conv_xw(fuse_graph *g, int C, int K, int H, int W, fuse_value *x_out) {
  int64_t xs[4], ws[4];
  fuse_value x, w;
  xs[0] = 1, xs[1] = C, xs[2] = H, xs[3] = W;
  ws[0] = K, ws[1] = C, ws[2] = 3, ws[3] = 3;
  x = inp(g, "x", 4, xs);
  w = cst(g, 4, ws, 11);
  if (x_out) *x_out = x;
  return fuse_conv2d(g, x, w, &PAD1);
}

/* matmul(a [M, Kd], W const [Kd, N]) -> [M, N] */
RUNNER_UNUSED
static fuse_value mm_aw(fuse_graph *g, int M, int Kd, int N) {
  int64_t as[2], ws[2];
  as[0] = M, as[1] = Kd;
  ws[0] = Kd, ws[1] = N;
  return fuse_matmul(g, inp(g, "a", 2, as), cst(g, 2, ws, 12));
}

/* A growable string that fuse_graph_write / fuse_plan_write append to. */
typedef struct sbuf {
  char s[32768];
  size_t len;
} sbuf;
RUNNER_UNUSED
static void sbuf_write(void *user, const char *text, size_t n) {
  sbuf *b = (sbuf *)user;
  if (n > sizeof b->s - 1 - b->len) n = sizeof b->s - 1 - b->len;
  memcpy(b->s + b->len, text, n);
  b->len += n;
  b->s[b->len] = 0;
}
RUNNER_UNUSED
static const char *graph_text(const fuse_graph *g, sbuf *b) {
  b->len = 0;
  b->s[0] = 0;
  fuse_graph_write(g, sbuf_write, b);
  return b->s;
}
RUNNER_UNUSED
static int count_substr(const char *h, const char *needle) {
  int n = 0;
  size_t k = strlen(needle);
  while ((h = strstr(h, needle)) != NULL) n++, h += k;
  return n;
}

/* Outputs of one run: compiled, inputs made from the input index (or given), run once. */
typedef struct outs {
  int n;
  float *d[8];
  size_t len[8];
} outs;

RUNNER_UNUSED
static void outs_free(outs *o) {
  int i;
  for (i = 0; i < o->n; i++) free(o->d[i]);
  o->n = 0;
}

/* 1 = ran. `given` may be NULL: input i gets random values seeded 100 + i. */
RUNNER_UNUSED
static int eval(const fuse_graph *g, const float *const *given, outs *o) {
  fuse_plan *p = NULL;
  const float *ins[8];
  float *made[8], *outp[8];
  int ni = fuse_graph_input_count(g), no = fuse_graph_output_count(g), i, ok;
  fuse_result r;
  char err[256];
  fuse_compile_options opt;
  memset(o, 0, sizeof *o);
  memset(&opt, 0, sizeof opt);
  opt.error = err;
  opt.error_size = sizeof err;
  err[0] = 0;
  if (ni > 8 || no > 8) return 0;
  r = fuse_compile(g, &opt, &p);
  if (r != FUSE_OK) {
    fprintf(stderr, "    fuse_compile: %s: %s (graph: %s)\n", fuse_result_string(r), err,
            fuse_graph_error(g));
    return 0;
  }
  for (i = 0; i < ni; i++) {
    fuse_value v = fuse_graph_input(g, i);
    made[i] = given ? NULL : frandom(numel(fuse_value_rank(g, v), fuse_value_shape(g, v)), 100u + (uint32_t)i);
    ins[i] = given ? given[i] : made[i];
  }
  for (i = 0; i < no; i++) {
    fuse_value v = fuse_graph_output(g, i);
    size_t k, n = numel(fuse_value_rank(g, v), fuse_value_shape(g, v));
    o->d[i] = (float *)malloc(n * sizeof(float));
    for (k = 0; k < n; k++) o->d[i][k] = NAN; /* an unwritten output shows */
    o->len[i] = n;
    outp[i] = o->d[i];
  }
  o->n = no;
  r = fuse_run(p, ins, outp, NULL);
  ok = r == FUSE_OK;
  if (!ok) fprintf(stderr, "    fuse_run: %s\n", fuse_result_string(r));
  for (i = 0; i < ni; i++) free(made[i]);
  fuse_plan_destroy(p);
  return ok;
}

/* Both runs have the same outputs, each within TOL. */
RUNNER_UNUSED
static int outs_match(const outs *got, const outs *want, const char *what) {
  int i, ok = got->n == want->n;
  for (i = 0; ok && i < got->n; i++) {
    double e;
    if (got->len[i] != want->len[i]) {
      ok = 0;
      break;
    }
    e = runner_rel_error(got->d[i], want->d[i], got->len[i]);
    if (!(e <= TOL)) {
      fprintf(stderr, "    %s: output %d relative error %.3g > %.3g\n", what, i, e, TOL);
      ok = 0;
    }
  }
  return ok;
}

/* ----------------------------------------------------------- epilogue checks -- */

RUNNER_UNUSED
static fuse_post_op CL(float lo, float hi) {
  fuse_post_op p;
  memset(&p, 0, sizeof p);
  p.kind = FUSE_POST_CLAMP;
  p.lo = lo;
  p.hi = hi;
  p.tensor = FUSE_NONE;
  return p;
}
RUNNER_UNUSED
static fuse_post_op AD(fuse_value t) {
  fuse_post_op p;
  memset(&p, 0, sizeof p);
  p.kind = FUSE_POST_ADD;
  p.tensor = t;
  return p;
}

RUNNER_UNUSED
static void epi_print(const fuse_epilogue *e) {
  int i;
  fprintf(stderr, "      got: reduction %d, bias %d, %d post-ops:", (int)e->reduction, (int)e->bias,
          e->num_post);
  for (i = 0; i < e->num_post && i < FUSE_MAX_POST_OPS; i++) {
    if (e->post[i].kind == FUSE_POST_ADD) fprintf(stderr, " add(%d)", (int)e->post[i].tensor);
    else fprintf(stderr, " clamp[%g, %g]", (double)e->post[i].lo, (double)e->post[i].hi);
  }
  fprintf(stderr, "; why \"%s\"\n", e->why);
}

/* The wanted epilogue of one graph. bias_opt: the bias after fuse_optimize (a reshape of a
   constant is folded into a constant that keeps the reshape's id). name: the composite the
   root lands in after fuse_optimize, without the "<codegen>." prefix (NULL: not checked). */
typedef struct want {
  fuse_value root, red, bias, bias_opt;
  int n;
  fuse_post_op post[FUSE_MAX_POST_OPS];
  const char *name;
  int extra_ops; /* ops outside the chain (they stay ops of their own after fuse_optimize) */
} want;

RUNNER_UNUSED
static int epi_equal(const fuse_epilogue *e, fuse_value red, fuse_value bias, int n,
                     const fuse_post_op *post) {
  int i;
  if (e->reduction != red || e->bias != bias || e->num_post != n) return 0;
  for (i = 0; i < n; i++) {
    if (e->post[i].kind != post[i].kind) return 0;
    if (post[i].kind == FUSE_POST_ADD && e->post[i].tensor != post[i].tensor) return 0;
    if (post[i].kind == FUSE_POST_CLAMP && (e->post[i].lo != post[i].lo || e->post[i].hi != post[i].hi))
      return 0;
  }
  return 1;
}

/* fuse_analyze_epilogue(root) gives the wanted epilogue. */
RUNNER_UNUSED
static int analyze_is(const char *what, const fuse_graph *g, const want *w, fuse_value bias) {
  fuse_epilogue e;
  fuse_result r = fuse_analyze_epilogue(g, w->root, &e);
  if (r != FUSE_OK || !epi_equal(&e, w->red, bias, w->n, w->post)) {
    fprintf(stderr, "    %s: fuse_analyze_epilogue(%d) = %s, want reduction %d bias %d, %d post-ops\n",
            what, (int)w->root, fuse_result_string(r), (int)w->red, (int)bias, w->n);
    epi_print(&e);
    return 0;
  }
  return 1;
}

/* The root is in a composite whose fuse_composite_get reports the wanted epilogue. */
RUNNER_UNUSED
static int composite_is(const char *what, const fuse_graph *g, const want *w, fuse_value bias,
                        const char *name) {
  fuse_composite_info info;
  int c = fuse_value_composite(g, w->root);
  if (c < 0) {
    fprintf(stderr, "    %s: root %d is in no composite\n", what, (int)w->root);
    return 0;
  }
  if (fuse_composite_get(g, c, &info) != FUSE_OK) return 0;
  if (info.root != w->root || !info.has_epilogue ||
      !epi_equal(&info.epilogue, w->red, bias, w->n, w->post)) {
    fprintf(stderr, "    %s: composite %d (%s) root %d has_epilogue %d\n", what, c,
            info.name ? info.name : "?", (int)info.root, info.has_epilogue);
    epi_print(&info.epilogue);
    return 0;
  }
  if (name && (!info.name || strcmp(info.name, name) != 0)) {
    fprintf(stderr, "    %s: composite name \"%s\", want \"%s\"\n", what, info.name ? info.name : "(null)",
            name);
    return 0;
  }
  if (fuse_value_composite(g, w->red) != c) {
    fprintf(stderr, "    %s: the reduction %d is not in the root's composite\n", what, (int)w->red);
    return 0;
  }
  return 1;
}

typedef void (*build_fn)(fuse_graph *g, int variant, want *w);

/* Builds the graph four times: (1) plain, analyzed; reference numbers. (2) fuse_ops_by_pattern
   with the default "fuse" rules: the root's composite has the epilogue; numbers. (3), (4)
   fuse_optimize "fuse" / "dnnl": one op when w->name is set, that composite, the epilogue
   (with bias_opt), numbers. */
RUNNER_UNUSED
static int epilogue_case(const char *what, build_fn build, int variant) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  const fuse_rule *rules;
  fuse_graph *g;
  want w;
  outs ref, got;
  int ok = 1, mode, n_rules = fuse_rules_default("fuse", &rules);
  char label[160];

  g = fuse_graph_create(NULL);
  memset(&w, 0, sizeof w);
  build(g, variant, &w);
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "    %s/%d: building failed: %s\n", what, variant, fuse_graph_error(g));
    fuse_graph_destroy(g);
    return 0;
  }
  sprintf(label, "%s/%d plain", what, variant);
  ok &= analyze_is(label, g, &w, w.bias);
  ok &= eval(g, NULL, &ref);
  fuse_graph_destroy(g);
  if (!ok) return outs_free(&ref), 0;

  for (mode = 0; mode < 3; mode++) {
    g = fuse_graph_create(NULL);
    build(g, variant, &w);
    if (mode == 0) {
      sprintf(label, "%s/%d fuse_ops_by_pattern", what, variant);
      ok &= fuse_ops_by_pattern(g, rules, n_rules, NULL) == FUSE_OK;
      if (w.name) { /* the default rules hold this chain */
        ok &= composite_is(label, g, &w, w.bias, NULL);
        ok &= analyze_is(label, g, &w, w.bias);
      }
    } else {
      char name[128];
      int ops_before = fuse_graph_op_count(g);
      sprintf(label, "%s/%d fuse_optimize %s", what, variant, cgs[mode - 1]);
      ok &= fuse_optimize(g, cgs[mode - 1]) == FUSE_OK;
      if (w.name) {
        sprintf(name, "%s.%s", cgs[mode - 1], w.name);
        ok &= composite_is(label, g, &w, w.bias_opt, name);
        ok &= analyze_is(label, g, &w, w.bias_opt);
        if (fuse_graph_op_count(g) != 1 + w.extra_ops) {
          fprintf(stderr, "    %s: %d ops before, %d after; want %d\n", label, ops_before,
                  fuse_graph_op_count(g), 1 + w.extra_ops);
          ok = 0;
        }
      }
    }
    if (!eval(g, NULL, &got)) ok = 0;
    else ok &= outs_match(&got, &ref, label);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
  outs_free(&ref);
  if (!ok) fprintf(stderr, "    ^ %s/%d\n", what, variant);
  return ok;
}

/* The analysis of the plain graph fails with FUSE_ERROR_UNSUPPORTED and a reason that contains
   `keyword`; the value `not_bias` (FUSE_NONE: none) is never reported as a bias, neither by the
   analysis nor by any composite fuse_optimize makes; the optimized graph gives the same numbers;
   the fused plan (when available) has no "+ bias" step when not_bias is set. */
RUNNER_UNUSED
static int refused_case(const char *what, build_fn build, int variant, const char *keyword,
                        fuse_value not_bias) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_epilogue e;
  fuse_result r;
  want w;
  outs ref, got;
  int ok = 1, c, mode;
  memset(&w, 0, sizeof w);
  build(g, variant, &w);
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "    %s/%d: building failed: %s\n", what, variant, fuse_graph_error(g));
    fuse_graph_destroy(g);
    return 0;
  }
  r = fuse_analyze_epilogue(g, w.root, &e);
  if (getenv("SHOW_WHY")) fprintf(stderr, "%s/%d: %s\n", what, variant, e.why);
  if (r != FUSE_ERROR_UNSUPPORTED || !strstr(e.why, keyword) ||
      (not_bias != FUSE_NONE && e.bias == not_bias)) {
    fprintf(stderr, "    %s/%d: analysis = %s, want FUSE_ERROR_UNSUPPORTED with \"%s\" in why\n", what,
            variant, fuse_result_string(r), keyword);
    epi_print(&e);
    ok = 0;
  }
  ok &= eval(g, NULL, &ref);
  fuse_graph_destroy(g);
  for (mode = 0; mode < 2 && ok; mode++) {
    g = fuse_graph_create(NULL);
    build(g, variant, &w);
    ok &= fuse_optimize(g, mode ? "dnnl" : "fuse") == FUSE_OK;
    for (c = 0; c < fuse_composite_count(g); c++) {
      fuse_composite_info info;
      fuse_composite_get(g, c, &info);
      if (not_bias != FUSE_NONE && info.has_epilogue && info.epilogue.bias == not_bias) {
        fprintf(stderr, "    %s/%d: composite %s reports %d as a bias\n", what, variant, info.name,
                (int)not_bias);
        ok = 0;
      }
    }
    if (not_bias != FUSE_NONE) {
      fuse_plan *p = NULL;
      sbuf b;
      b.len = 0;
      b.s[0] = 0;
      if (fuse_compile(g, NULL, &p) == FUSE_OK) {
        fuse_plan_write(p, sbuf_write, &b);
        if (strstr(b.s, "bias")) {
          fprintf(stderr, "    %s/%d: the plan fuses a bias:\n%s", what, variant, b.s);
          ok = 0;
        }
        fuse_plan_destroy(p);
      }
    }
    if (!eval(g, NULL, &got)) ok = 0;
    else ok &= outs_match(&got, &ref, what);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
  outs_free(&ref);
  if (!ok) fprintf(stderr, "    ^ %s/%d\n", what, variant);
  return ok;
}

enum { CK = 4, CC = 3, CH = 5, CW = 6 }; /* conv: x [1, 3, 5, 6], w [4, 3, 3, 3] -> [1, 4, 5, 6] */

/* conv2d + bias, variant = form * 2 + side (side 1: bias on the left of add).
   forms: 0 const [K,1,1]; 1 const [1,K,1,1]; 2 reshape(const [K], [1,K,1,1]);
          3 reshape(const [K], [K,1,1]); 4 reshape(input [K], [1,K,1,1]); 5 input [1,K,1,1];
          6 reshape(relu(input [K]), [1,K,1,1]) (the bias is an op's result) */
RUNNER_UNUSED
static void build_conv_bias(fuse_graph *g, int variant, want *w) {
  int form = variant / 2, left = variant % 2;
  int64_t k11[3] = {CK, 1, 1}, k1111[4] = {1, CK, 1, 1}, k[1] = {CK};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b, src = FUSE_NONE;
  switch (form) {
  case 0: b = cst(g, 3, k11, 21); break;
  case 1: b = cst(g, 4, k1111, 21); break;
  case 2: src = cst(g, 1, k, 21); b = fuse_reshape(g, src, 4, k1111); break;
  case 3: src = cst(g, 1, k, 21); b = fuse_reshape(g, src, 3, k11); break;
  case 4: src = inp(g, "b", 1, k); b = fuse_reshape(g, src, 4, k1111); break;
  case 5: b = inp(g, "b", 4, k1111); break;
  default: src = fuse_relu(g, inp(g, "b", 1, k)); b = fuse_reshape(g, src, 4, k1111); break;
  }
  w->root = left ? fuse_add(g, b, conv) : fuse_add(g, conv, b);
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = src != FUSE_NONE ? src : b;
  /* after fuse_optimize a reshape of a constant is itself a constant [1,K,1,1] / [K,1,1] */
  w->bias_opt = (form == 2 || form == 3) ? b : w->bias;
  w->n = 0;
  w->name = "conv2d_bias";
  w->extra_ops = form == 6; /* the relu that makes the bias */
}

#endif
