/* pattern_helpers.h - what test_pattern.c and test_fusion.c share: graph and pattern helpers,
   the text round trip and composite checks every fused graph gets, the match probes, the seed
   graph. */
#ifndef PATTERN_HELPERS_H
#define PATTERN_HELPERS_H

/* ------------------------------------------------------------------ helpers -- */

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define IN(g, name, ...) fuse_input((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__))
#define CST(g, name, seed, ...) cst_((g), (name), (seed), NDIM(__VA_ARGS__), D(__VA_ARGS__))
#define PRS FUSE_ERROR_PARSE
#define TOL 1e-5

RUNNER_UNUSED
static uint32_t rng_state = 12345u;
RUNNER_UNUSED
static uint32_t rnd(void) { /* xorshift32 */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}
RUNNER_UNUSED
static int rnd_int(int n) { return (int)(rnd() % (uint32_t)n); }
RUNNER_UNUSED
static float rnd_float(void) { return (float)((rnd() >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0); }

RUNNER_UNUSED
static size_t numel(int rank, const int64_t *s) {
  size_t n = 1;
  int i;
  for (i = 0; i < rank; i++) n *= (size_t)s[i];
  return n;
}

RUNNER_UNUSED
static void fill(float *p, size_t n, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1u;
  size_t i;
  for (i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)((s >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0);
  }
}

/* A constant filled with deterministic values in [-1, 1). */
RUNNER_UNUSED
static fuse_value cst_(fuse_graph *g, const char *name, uint32_t seed, int rank,
                       const int64_t *shape) {
  size_t n = numel(rank, shape);
  float *data = (float *)malloc((n ? n : 1) * sizeof(float));
  fuse_value v;
  fill(data, n, seed);
  v = fuse_constant(g, name, rank, shape, data);
  free(data);
  return v;
}

typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf;

RUNNER_UNUSED
static void sb_write(void *user, const char *text, size_t len) {
  sbuf *s = (sbuf *)user;
  if (s->len + len + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 256;
    while (s->len + len + 1 > cap) cap *= 2;
    s->p = (char *)realloc(s->p, cap);
    s->cap = cap;
  }
  memcpy(s->p + s->len, text, len);
  s->len += len;
  s->p[s->len] = 0;
}

RUNNER_UNUSED
static char *to_text(const fuse_graph *g) {
  sbuf s = {NULL, 0, 0};
  if (fuse_graph_write(g, sb_write, &s) != FUSE_OK) {
    free(s.p);
    return NULL;
  }
  if (!s.p) sb_write(&s, "", 0);
  return s.p;
}

/* Inputs for g in fuse_input order (freed with free_arrays). */
RUNNER_UNUSED
static float **make_inputs(const fuse_graph *g, uint32_t seed) {
  int n = fuse_graph_input_count(g), i;
  float **in = (float **)calloc((size_t)n + 1, sizeof(float *));
  for (i = 0; i < n; i++) {
    fuse_value v = fuse_graph_input(g, i);
    size_t k = numel(fuse_value_rank(g, v), fuse_value_shape(g, v));
    in[i] = (float *)malloc((k ? k : 1) * sizeof(float));
    fill(in[i], k, seed + (uint32_t)i * 7919u);
  }
  return in;
}

RUNNER_UNUSED
static void free_arrays(float **a, int n) {
  int i;
  if (!a) return;
  for (i = 0; i < n; i++) free(a[i]);
  free(a);
}

/* Compiles and runs g; returns its outputs (NaN-prefilled) or NULL on failure. */
RUNNER_UNUSED
static float **run_outputs(const fuse_graph *g, float **in) {
  int n = fuse_graph_output_count(g), i;
  float **out;
  fuse_plan *p = NULL;
  fuse_result r = fuse_compile(g, NULL, &p);
  if (r != FUSE_OK) {
    fprintf(stderr, "    fuse_compile: %s (%s)\n", fuse_result_string(r), fuse_graph_error(g));
    return NULL;
  }
  out = (float **)calloc((size_t)n + 1, sizeof(float *));
  for (i = 0; i < n; i++) {
    fuse_value v = fuse_graph_output(g, i);
    size_t k = numel(fuse_value_rank(g, v), fuse_value_shape(g, v)), j;
    out[i] = (float *)malloc((k ? k : 1) * sizeof(float));
    for (j = 0; j < k; j++) out[i][j] = NAN;
  }
  r = fuse_run(p, (const float *const *)in, out, NULL);
  fuse_plan_destroy(p);
  if (r != FUSE_OK) {
    fprintf(stderr, "    fuse_run: %s\n", fuse_result_string(r));
    free_arrays(out, n);
    return NULL;
  }
  return out;
}

/* Runs a and b (same inputs and outputs) on the same random inputs; fails on a difference. */
#define CHECK_SAME_NUMBERS(a, b, seed) check_same_numbers_((a), (b), (seed), __LINE__)
RUNNER_UNUSED
static void check_same_numbers_(const fuse_graph *a, const fuse_graph *b, uint32_t seed, int line) {
  int ni = fuse_graph_input_count(a), no = fuse_graph_output_count(a), i;
  float **in, **oa, **ob;
  if (ni != fuse_graph_input_count(b) || no != fuse_graph_output_count(b)) {
    failf(line, "graphs differ in inputs/outputs");
    return;
  }
  in = make_inputs(a, seed);
  oa = run_outputs(a, in);
  ob = run_outputs(b, in);
  if (!oa || !ob) failf(line, "compile/run failed (a %s, b %s)", oa ? "ok" : "failed", ob ? "ok" : "failed");
  else
    for (i = 0; i < no; i++) {
      fuse_value v = fuse_graph_output(a, i);
      size_t k = numel(fuse_value_rank(a, v), fuse_value_shape(a, v));
      double e = runner_rel_error(ob[i], oa[i], k);
      if (!(e <= TOL)) failf(line, "output %d: relative error %.3g > %.3g", i, e, TOL);
    }
  free_arrays(in, ni);
  free_arrays(oa, no);
  free_arrays(ob, no);
}

/* The compiled plan's description (fuse_plan_write) and step count; NULL if compile fails. */
RUNNER_UNUSED
static char *plan_text(const fuse_graph *g, int *steps) {
  fuse_plan *p = NULL;
  sbuf s = {NULL, 0, 0};
  fuse_compile_options opt; /* the reference plan: the kernel table's add layout conversions */
  *steps = -1;
  memset(&opt, 0, sizeof opt);
  opt.reference_kernels = 1;
  if (fuse_compile(g, &opt, &p) != FUSE_OK) return NULL;
  *steps = fuse_plan_step_count(p);
  if (fuse_plan_write(p, sb_write, &s) != FUSE_OK) *steps = -2;
  if (!s.p) sb_write(&s, "", 0);
  fuse_plan_destroy(p);
  return s.p;
}

/* A copy of g by print / parse. Constants with more than 4 elements print without values:
   refill_constants sets them by name from what named_const remembered. */
RUNNER_UNUSED
static fuse_graph *copy_graph(const fuse_graph *g) {
  char *text = to_text(g);
  fuse_graph *c = NULL;
  if (!text || fuse_graph_parse(text, NULL, &c) != FUSE_OK) {
    fprintf(stderr, "    copy_graph: %s\n", c ? fuse_graph_error(c) : "(no graph)");
    free(text);
    fuse_graph_destroy(c);
    return NULL;
  }
  free(text);
  return c;
}

/* The test graphs remember their named constants' data so copies can be refilled. */
typedef struct const_rec {
  char name[32];
  float *data;
  size_t n;
} const_rec;
RUNNER_UNUSED
static const_rec consts_[64];
RUNNER_UNUSED
static int num_consts_;

RUNNER_UNUSED
static void consts_reset(void) {
  int i;
  for (i = 0; i < num_consts_; i++) free(consts_[i].data);
  num_consts_ = 0;
}

/* A named constant whose data is remembered for refill_constants. */
RUNNER_UNUSED
static fuse_value named_const(fuse_graph *g, const char *name, int rank, const int64_t *shape,
                              uint32_t seed) {
  const_rec *c = &consts_[num_consts_++];
  fuse_value v;
  c->n = numel(rank, shape);
  c->data = (float *)malloc((c->n ? c->n : 1) * sizeof(float));
  fill(c->data, c->n, seed);
  snprintf(c->name, sizeof c->name, "%s", name);
  v = fuse_constant(g, name, rank, shape, c->data);
  return v;
}

RUNNER_UNUSED
static int refill_constants(fuse_graph *c) {
  int i;
  for (i = 0; i < num_consts_; i++)
    if (fuse_graph_set_constant(c, consts_[i].name, consts_[i].data, consts_[i].n) != FUSE_OK) {
      fprintf(stderr, "    set_constant %s: %s\n", consts_[i].name, fuse_graph_error(c));
      return 0;
    }
  return 1;
}

/* ---- text round trip and composite info, checked for every fused graph ---- */

RUNNER_UNUSED
static int same_str(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

RUNNER_UNUSED
static int same_info(const fuse_composite_info *a, const fuse_composite_info *b) {
  return same_str(a->name, b->name) && same_str(a->function, b->function) &&
         same_str(a->codegen, b->codegen) && a->region == b->region && a->num_ops == b->num_ops &&
         a->has_epilogue == b->has_epilogue;
}

#define CHECK_TEXT(g) check_text_((g), __LINE__)
/* print(parse(print(g))) == print(g), and the parsed graph has the same composites. */
RUNNER_UNUSED
static void check_text_(const fuse_graph *g, int line) {
  char *t1 = to_text(g), *t2 = NULL;
  fuse_graph *p = NULL;
  fuse_result r;
  int i, k, n;
  unsigned char used[256];
  if (!t1) {
    failf(line, "fuse_graph_write failed");
    return;
  }
  r = fuse_graph_parse(t1, NULL, &p);
  if (r != FUSE_OK) {
    failf(line, "parse of printed graph: %s: %s\n%s", fuse_result_string(r), fuse_graph_error(p), t1);
    goto done;
  }
  t2 = to_text(p);
  if (!t2 || strcmp(t1, t2) != 0) {
    failf(line, "round trip differs:\n--- print(g)\n%s--- print(parse(print(g)))\n%s", t1,
          t2 ? t2 : "(null)");
    goto done;
  }
  n = fuse_composite_count(g);
  if (fuse_composite_count(p) != n) {
    failf(line, "composites: %d after parse, %d before", fuse_composite_count(p), n);
    goto done;
  }
  if (fuse_graph_op_count(p) != fuse_graph_op_count(g))
    failf(line, "op count %d after parse, %d before", fuse_graph_op_count(p), fuse_graph_op_count(g));
  memset(used, 0, sizeof used);
  for (i = 0; i < n && i < 256; i++) { /* each composite of g has an equal one in p */
    fuse_composite_info a, b;
    int found = 0;
    fuse_composite_get(g, i, &a);
    for (k = 0; k < n && k < 256 && !found; k++) {
      if (used[k] || fuse_composite_get(p, k, &b) != FUSE_OK) continue;
      if (same_info(&a, &b)) used[k] = 1, found = 1;
    }
    if (!found)
      failf(line, "composite %d (%s %s codegen %s region %d, %d ops) differs after parse", i,
            a.name, a.function, a.codegen ? a.codegen : "none", a.region, a.num_ops);
  }
done:
  free(t1);
  free(t2);
  fuse_graph_destroy(p);
}

/* ---- match probes: a check callback that records every match and refuses it ---- */

typedef struct probe {
  const char *cap;     /* capture to read, or NULL */
  fuse_value root;     /* root asked about */
  int hits;            /* matches rooted at root */
  int total;           /* all matches */
  fuse_value cap_value; /* capture at root's match */
} probe;

RUNNER_UNUSED
static int probe_check(const fuse_graph *g, const fuse_match *m, void *user) {
  probe *p = (probe *)user;
  (void)g;
  p->total++;
  if (fuse_match_root(m) == p->root) {
    p->hits++;
    if (p->cap) p->cap_value = fuse_match_capture(m, p->cap);
  }
  return 0;
}

/* 1 if pattern matches with its root at `root` (the graph is left unfused); -1 on error. */
RUNNER_UNUSED
static int match_at(fuse_graph *g, const char *pattern, fuse_value root, const char *cap,
                    fuse_value *cap_value) {
  fuse_rule rule;
  fuse_pattern_options o;
  probe p;
  fuse_result r;
  memset(&o, 0, sizeof o);
  o.allow_escaping = 1; /* see the matcher, not the escape rule */
  memset(&p, 0, sizeof p);
  p.cap = cap;
  p.root = root;
  p.cap_value = FUSE_NONE;
  rule.name = "probe.p";
  rule.pattern = pattern;
  rule.check = probe_check;
  rule.user = &p;
  r = fuse_ops_by_pattern(g, &rule, 1, &o);
  if (r != FUSE_OK) {
    fprintf(stderr, "    pattern \"%s\": %s: %s\n", pattern, fuse_result_string(r), fuse_graph_error(g));
    return -1;
  }
  if (cap_value) *cap_value = p.cap_value;
  return p.hits > 0;
}

#define MATCH(g, pat, root) expect_match_((g), (pat), (root), 1, __LINE__)
#define NO_MATCH(g, pat, root) expect_match_((g), (pat), (root), 0, __LINE__)
RUNNER_UNUSED
static void expect_match_(fuse_graph *g, const char *pat, fuse_value root, int want, int line) {
  int got = match_at(g, pat, root, NULL, NULL);
  if (got != want)
    failf(line, "pattern \"%s\" at %%%d: %s, want %s", pat, (int)root,
          got < 0 ? "error" : got ? "matches" : "no match", want ? "a match" : "no match");
}

#define CAPTURE(g, pat, root, name, want) expect_capture_((g), (pat), (root), (name), (want), __LINE__)
RUNNER_UNUSED
static void expect_capture_(fuse_graph *g, const char *pat, fuse_value root, const char *name,
                            fuse_value want, int line) {
  fuse_value v = FUSE_NONE;
  int got = match_at(g, pat, root, name, &v);
  if (got != 1) failf(line, "pattern \"%s\" at %%%d: no match", pat, (int)root);
  else if (v != want)
    failf(line, "pattern \"%s\": capture $%s = %d, want %d", pat, name, (int)v, (int)want);
}

/* Applies one rule; returns the result. */
RUNNER_UNUSED
static fuse_result fuse1(fuse_graph *g, const char *name, const char *pattern,
                         const fuse_pattern_options *o) {
  fuse_rule rule;
  rule.name = name;
  rule.pattern = pattern;
  rule.check = NULL;
  rule.user = NULL;
  return fuse_ops_by_pattern(g, &rule, 1, o);
}

/* Info of the composite holding v; fails the check when there is none. */
#define COMP_OF(g, v, info) comp_of_((g), (v), (info), __LINE__)
RUNNER_UNUSED
static int comp_of_(const fuse_graph *g, fuse_value v, fuse_composite_info *info, int line) {
  int c = fuse_value_composite(g, v);
  memset(info, 0, sizeof *info);
  if (c < 0) {
    failf(line, "value %%%d is in no composite", (int)v);
    return 0;
  }
  if (fuse_composite_get(g, c, info) != FUSE_OK) {
    failf(line, "fuse_composite_get(%d) failed", c);
    return 0;
  }
  return 1;
}

#define CHECK_COMP(g, v, name_, function_, codegen_, num_ops_)                                   \
  check_comp_((g), (v), (name_), (function_), (codegen_), (num_ops_), __LINE__)
RUNNER_UNUSED
static void check_comp_(const fuse_graph *g, fuse_value v, const char *name, const char *function,
                        const char *codegen, int num_ops, int line) {
  fuse_composite_info info;
  if (!comp_of_(g, v, &info, line)) return;
  if (!same_str(info.name, name)) failf(line, "name %s, want %s", info.name, name);
  if (!same_str(info.function, function)) failf(line, "function %s, want %s", info.function, function);
  if (!same_str(info.codegen, codegen))
    failf(line, "codegen %s, want %s", info.codegen ? info.codegen : "NULL", codegen ? codegen : "NULL");
  if (info.num_ops != num_ops) failf(line, "num_ops %d, want %d", info.num_ops, num_ops);
}

/* ----------------------------------------------------------- test graphs -- */

/* The PyTorch conv2d(bias=True) form of seeds 000/001:
   relu(add(conv2d(data, weight), reshape(bias, [1, K, 1, 1]))). */
typedef struct seed_graph {
  fuse_graph *g;
  fuse_value data, weight, bias, conv, reshape, add, relu;
} seed_graph;

RUNNER_UNUSED
static seed_graph build_seed(int swap_add, int with_relu) {
  seed_graph s;
  fuse_conv2d_attrs a;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  s.g = fuse_graph_create(NULL);
  s.data = IN(s.g, "data", 1, 3, 8, 8);
  s.weight = CST(s.g, "weight", 1, 4, 3, 3, 3);
  s.bias = CST(s.g, "bias", 2, 4);
  s.conv = fuse_conv2d(s.g, s.data, s.weight, &a);
  s.reshape = fuse_reshape(s.g, s.bias, 4, D(1, 4, 1, 1));
  s.add = swap_add ? fuse_add(s.g, s.reshape, s.conv) : fuse_add(s.g, s.conv, s.reshape);
  s.relu = with_relu ? fuse_relu(s.g, s.add) : FUSE_NONE;
  fuse_output(s.g, with_relu ? s.relu : s.add);
  return s;
}

RUNNER_UNUSED
static const char *SEED_PATTERN = "relu(add(conv2d($data, $weight), reshape($bias, *)))";

#endif
