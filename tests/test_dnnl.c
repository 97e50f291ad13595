/* test_dnnl.c - fuse_dnnl.h: composites routed to oneDNN.

   Needs oneDNN: the Makefile defines FUSE_DNNL_AVAILABLE=1 and links -ldnnl when it finds
   <oneapi/dnnl/dnnl.h>. Built any other way (no oneDNN, or a cross build that sees the host's
   header but has no library for its target) FUSE_DNNL_AVAILABLE is 0 here and the test only
   checks that fuse_dnnl_backend() is NULL (it says it skipped the rest).

   With oneDNN:
     1. every composite kind, fused by fuse_optimize(g, "dnnl") (or a rule of its own), runs
        through oneDNN - the plan's description marks each fused step "(dnnl)" and declines
        none - and matches the built-in kernels within 1e-4 (normwise relative): conv2d + bias,
        + relu, + clip, relu6 (clip and maximum / minimum), residual add in both operand
        orders, relu before the residual, depthwise (stride 1 and 2), grouped, strided +
        dilated + asymmetrically padded, batch 2, matmul + bias + relu (2-D and 3-D x),
        matmul + bias + residual;
     2. what oneDNN does not take falls back with a note: weights that are a graph input;
        composites of another codegen are not offered;
     3. the committed ONNX network (tests/data/onnx/tinynet_bn.onnx) through oneDNN matches
        PyTorch's output and the built-in plan; fuse_run_steps step by step gives the same;
     4. ONEDNN_VERBOSE: the test runs itself again (--verbose-child) with ONEDNN_VERBOSE=1 and
        reads oneDNN's log: the seed composite conv2d -> reshape(bias) -> add -> relu, fused as
        dnnl.conv2d_reshape_add_relu (the seed's rule, merged) and by fuse_optimize(g, "dnnl"),
        runs as ONE oneDNN convolution whose line shows a bias and an eltwise_relu post-op,
        and no other oneDNN primitive but layout reorders runs;
     5. concurrency: 2 threads with their own workspaces run one plan 20 times each, on
        different inputs, with results identical to a serial run; 6 threads (more callers than
        a step's 4 handle sets) likewise; two of its tensors stay in oneDNN's layout.
     6. oneDNN's layout between oneDNN steps: conv -> conv, a ResNet block and a block with a
        projection keep every tensor between two oneDNN steps in oneDNN's layout ("(output in
        dnnl's layout, N bytes)" in the plan) and match the built-in kernels; a tensor that is
        also a graph output, or whose reader oneDNN declines, stays NCHW. ONEDNN_VERBOSE for
        two convs and for a ResNet block (the second conv's residual as a sum post-op) shows
        reorders from NCHW only before the last conv (the entries), one reorder to NCHW after
        it (the exit), never one between two oneDNN layouts, and the second conv reading the
        first one's destination format as is; the same under ONEDNN_MAX_CPU_ISA=AVX2, where
        oneDNN picks aBcd8b and 20 channels take 24 channels' bytes. The mock backend, with a
        layout of its own larger than NCHW, proves the same through the interface alone.

   Usage: build/test_dnnl   (run from the repository root) */
#define _POSIX_C_SOURCE 200809L /* popen, pclose */
#ifndef FUSE_DNNL_AVAILABLE
#define FUSE_DNNL_AVAILABLE 0 /* see above: only the Makefile's detection turns it on */
#endif
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "fuse_dnnl.h"
#include "runner.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-4
#define MAX_IO 4

/* ------------------------------------------------------------------ helpers -- */

static uint32_t rng = 12345u;
static float uniform(void) { /* xorshift32 -> [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return (float)((double)(rng >> 8) / 8388608.0 - 1.0);
}

static float *random_floats(size_t n, float scale) {
  float *p = (float *)malloc((n ? n : 1) * sizeof(float));
  size_t i;
  for (i = 0; p && i < n; i++) p[i] = uniform() * scale;
  return p;
}

static size_t numel(const fuse_graph *g, fuse_value v) {
  size_t n = 1;
  int d;
  for (d = 0; d < fuse_value_rank(g, v); d++) n *= (size_t)fuse_value_shape(g, v)[d];
  return n;
}

typedef struct sbuf {
  char s[8192];
  size_t len;
} sbuf;

static void sbuf_write(void *user, const char *text, size_t len) {
  sbuf *b = (sbuf *)user;
  if (b->len + len >= sizeof b->s) len = sizeof b->s - 1 - b->len;
  memcpy(b->s + b->len, text, len);
  b->len += len;
  b->s[b->len] = 0;
}

static sbuf last_desc; /* check_routed_on's plan */

static int count_substr(const char *s, const char *what) {
  int n = 0;
  size_t k = strlen(what);
  while ((s = strstr(s, what)) != NULL) n++, s += k;
  return n;
}

/* A 64-byte aligned block of n bytes (free with free_aligned). */
static void *alloc_aligned(size_t n) {
  unsigned char *raw = (unsigned char *)malloc(n + 64 + sizeof(void *));
  unsigned char *p;
  if (!raw) return NULL;
  p = (unsigned char *)(((uintptr_t)(raw + sizeof(void *)) + 63) & ~(uintptr_t)63);
  memcpy(p - sizeof(void *), &raw, sizeof raw);
  return p;
}
static void free_aligned(void *p) {
  void *raw;
  if (!p) return;
  memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
  free(raw);
}

/* Compiles g with the one backend b (NULL: none); the plan's description into desc. */
static fuse_plan *compile_with(const fuse_graph *g, const fuse_backend *b, sbuf *desc,
                               fuse_result *result) {
  const fuse_backend *backends[2];
  fuse_compile_options opt;
  fuse_plan *p = NULL;
  fuse_result r;
  char error[512];
  memset(&opt, 0, sizeof opt);
  backends[0] = b;
  backends[1] = NULL;
  opt.backends = b ? backends : NULL;
  opt.error = error;
  opt.error_size = sizeof error;
  error[0] = 0;
  r = fuse_compile(g, &opt, &p);
  if (result) *result = r;
  if (r != FUSE_OK) {
    if (!result) fprintf(stderr, "  compile failed: %s\n", error);
    return NULL;
  }
  if (desc) {
    desc->len = 0;
    desc->s[0] = 0;
    fuse_plan_write(p, sbuf_write, desc);
  }
  return p;
}

/* Random inputs for every graph input. */
typedef struct io {
  int n_in, n_out;
  float *in[MAX_IO], *out[MAX_IO];
  size_t in_n[MAX_IO], out_n[MAX_IO];
} io;

static int io_make(const fuse_graph *g, io *t) {
  int i;
  memset(t, 0, sizeof *t);
  t->n_in = fuse_graph_input_count(g);
  t->n_out = fuse_graph_output_count(g);
  if (t->n_in > MAX_IO || t->n_out > MAX_IO) return 0;
  for (i = 0; i < t->n_in; i++) {
    t->in_n[i] = numel(g, fuse_graph_input(g, i));
    if (!(t->in[i] = random_floats(t->in_n[i], 1.0f))) return 0;
  }
  for (i = 0; i < t->n_out; i++) {
    t->out_n[i] = numel(g, fuse_graph_output(g, i));
    if (!(t->out[i] = (float *)calloc(t->out_n[i], sizeof(float)))) return 0;
  }
  return 1;
}

static void io_free(io *t) {
  int i;
  for (i = 0; i < MAX_IO; i++) free(t->in[i]), free(t->out[i]);
}

static fuse_result run_plan(fuse_plan *p, io *t, float **outs, void *workspace) {
  return fuse_run(p, (const float *const *)t->in, outs, workspace);
}

/* Runs ref (the built-in kernels) and p on t's inputs; p's first output must match ref's
   within tol (normwise, CHECK_NEAR_ARRAY), or bit for bit when tol < 0. */
static void check_same_output(fuse_plan *ref, fuse_plan *p, io *t, double tol) {
  float *want = (float *)calloc(t->out_n[0], sizeof(float));
  if (ref && p && want) {
    CHECK_EQ_INT(run_plan(ref, t, &want, NULL), FUSE_OK);
    CHECK_EQ_INT(run_plan(p, t, t->out, NULL), FUSE_OK);
    if (tol < 0) CHECK(memcmp(want, t->out[0], t->out_n[0] * sizeof(float)) == 0);
    else CHECK_NEAR_ARRAY(t->out[0], want, t->out_n[0], tol);
  }
  free(want);
}

/* The composites of g run on backend b (want steps marked "(<name>)", none declined) and
   match the built-in kernels' plan of the same graph. */
static void check_routed_on(fuse_graph *g, const fuse_backend *b, int want, const char *label) {
  fuse_plan *ref_plan, *dnnl_plan;
  sbuf *desc = &last_desc;
  char mark[64];
  io t;
  float *ref[MAX_IO];
  int i;
  snprintf(mark, sizeof mark, "(%s)", b->name);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "  %s: %s\n", label, fuse_graph_error(g));
    return;
  }
  memset(ref, 0, sizeof ref);
  CHECK(io_make(g, &t));
  ref_plan = compile_with(g, NULL, NULL, NULL);
  dnnl_plan = compile_with(g, b, desc, NULL);
  CHECK(ref_plan != NULL);
  CHECK(dnnl_plan != NULL);
  if (ref_plan && dnnl_plan) {
    CHECK_EQ_INT(count_substr(desc->s, mark), want);
    CHECK_EQ_INT(count_substr(desc->s, "declined"), 0);
    if (count_substr(desc->s, mark) != want || strstr(desc->s, "declined"))
      fprintf(stderr, "  %s: plan:\n%s", label, desc->s);
    for (i = 0; i < t.n_out; i++) ref[i] = (float *)calloc(t.out_n[i], sizeof(float));
    CHECK_EQ_INT(run_plan(ref_plan, &t, ref, NULL), FUSE_OK);
    CHECK_EQ_INT(run_plan(dnnl_plan, &t, t.out, NULL), FUSE_OK);
    for (i = 0; i < t.n_out; i++) {
      double e = runner_rel_error(t.out[i], ref[i], t.out_n[i]);
      CHECK_NEAR_ARRAY(t.out[i], ref[i], t.out_n[i], TOL);
      if (!(e <= TOL)) fprintf(stderr, "  %s: output %d: relative error %.3g\n", label, i, e);
    }
  }
  for (i = 0; i < MAX_IO; i++) free(ref[i]);
  fuse_plan_destroy(ref_plan);
  fuse_plan_destroy(dnnl_plan);
  io_free(&t);
}

/* ----------------------------------------------------------- graph builders -- */

typedef struct conv_case {
  int64_t n, c, h, w, k, kh, kw;
  fuse_conv2d_attrs a;
} conv_case;

static fuse_value weight_for(fuse_graph *g, const conv_case *cc) {
  int groups = cc->a.groups ? cc->a.groups : 1;
  int64_t shape[4];
  size_t n;
  float *data;
  fuse_value w;
  shape[0] = cc->k, shape[1] = cc->c / groups, shape[2] = cc->kh, shape[3] = cc->kw;
  n = (size_t)(shape[0] * shape[1] * shape[2] * shape[3]);
  data = random_floats(n, 0.5f);
  w = fuse_constant(g, NULL, 4, shape, data);
  free(data);
  return w;
}

static fuse_value bias_for(fuse_graph *g, int64_t k, int reshape) {
  int64_t shape[1], s4[4];
  float *data = random_floats((size_t)k, 0.5f);
  fuse_value b;
  shape[0] = k;
  b = fuse_constant(g, NULL, 1, shape, data);
  free(data);
  if (!reshape) return b;
  s4[0] = 1, s4[1] = k, s4[2] = 1, s4[3] = 1;
  return fuse_reshape(g, b, 4, s4);
}

/* x -> conv2d [-> + bias] ; returns the conv (+ bias) value and the graph's x */
static fuse_value conv_input(fuse_graph *g, const conv_case *cc, int bias, int bias_first) {
  int64_t xs[4];
  fuse_value x, y;
  xs[0] = cc->n, xs[1] = cc->c, xs[2] = cc->h, xs[3] = cc->w;
  x = fuse_input(g, "x", 4, xs);
  y = fuse_conv2d(g, x, weight_for(g, cc), &cc->a);
  if (!bias) return y;
  return bias_first ? fuse_add(g, bias_for(g, cc->k, 1), y) : fuse_add(g, y, bias_for(g, cc->k, 1));
}

static const conv_case base = {1, 8, 10, 10, 16, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}};

/* ------------------------------------------- 0. the backend interface (a mock) -- */
/* A backend that needs no library: "mock" runs conv2d steps with a plain loop from the
   description fuse_compile gave it (the weights copied at prepare), declines everything else,
   and records what it was given. These tests run with or without oneDNN. */

typedef struct mock_state {
  fuse_backend_step d;
  float *w;
  int keeps; /* writes its output in the mock's own layout */
} mock_state;

/* The mock's own layout (mock_layout_backend only): NHWC with the channels padded to a
   multiple of 8 - larger than NCHW, so the workspace must be sized by what prepare declared. */
static const char mock_layout_id[] = "mock NHWC8";
#define MOCK_CPAD(c) (((c) + 7) / 8 * 8)
static int64_t mock_at(const fuse_backend_tensor *t, int keeps, int64_t n, int64_t c, int64_t h,
                       int64_t w) {
  const int64_t *s = t->shape;
  if (keeps) return ((n * s[2] + h) * s[3] + w) * MOCK_CPAD(s[1]) + c;
  return ((n * s[1] + c) * s[2] + h) * s[3] + w;
}

static struct {
  int prepared, taken, destroyed, runs, bad_runs, oom_after;
  int offered_layout, got_layout; /* steps told they may keep their output; operands in it */
  fuse_backend_step last;
} mock;

#define MOCK_SCRATCH 1000

static fuse_result mock_prepare(const fuse_backend *self, const fuse_backend_step *d, void **state,
                                size_t *scratch_size, char *why, size_t why_size) {
  mock_state *s;
  size_t n = 1;
  int k;
  mock.prepared++;
  mock.last = *d;
  for (k = 0; k < d->num_operands; k++)
    if (d->operands[k].layout.id) {
      mock.got_layout++;
      if (d->operands[k].layout.id != mock_layout_id || !self->user) mock.bad_runs++;
    }
  if (d->output_layout) mock.offered_layout++;
  if (mock.oom_after && mock.prepared > mock.oom_after) return FUSE_ERROR_OUT_OF_MEMORY;
  if (d->op != FUSE_BACKEND_CONV2D || !d->operands[1].data) {
    snprintf(why, why_size, "mock takes conv2d with constant weights only");
    return FUSE_ERROR_UNSUPPORTED;
  }
  for (k = 0; k < 4; k++) n *= (size_t)d->operands[1].shape[k];
  s = (mock_state *)calloc(1, sizeof *s);
  if (!s || !(s->w = (float *)malloc(n * sizeof(float)))) {
    free(s);
    return FUSE_ERROR_OUT_OF_MEMORY;
  }
  memcpy(s->w, d->operands[1].data, n * sizeof(float));
  s->d = *d;
  for (k = 0; k < d->num_operands; k++) s->d.operands[k].data = NULL; /* prepare only */
  if (d->output_layout && self->user) { /* mock_layout_backend: keep it */
    s->keeps = 1;
    d->output_layout->id = mock_layout_id;
    d->output_layout->bytes = (size_t)(d->output.shape[0] * MOCK_CPAD(d->output.shape[1]) *
                                       d->output.shape[2] * d->output.shape[3]) * sizeof(float);
  }
  s->d.output_layout = NULL;
  *state = s;
  *scratch_size = MOCK_SCRATCH;
  mock.taken++;
  return FUSE_OK;
}

static fuse_result mock_run(void *state, const float *const *ops, float *y, void *scratch) {
  const mock_state *s = (const mock_state *)state;
  const fuse_backend_step *d = &s->d;
  const int64_t *xs = d->operands[0].shape, *ws = d->operands[1].shape, *ys = d->output.shape;
  const fuse_conv2d_attrs *a = &d->conv;
  int64_t n, k, c, oh, ow, kh, kw, G = a->groups, Cg = ws[1], Kg = ys[1] / G;
  int q;
  mock.runs++;
  if (ops[1] != NULL || !scratch || ((uintptr_t)scratch & 63)) {
    mock.bad_runs++;
    return FUSE_ERROR_BACKEND;
  }
  memset(scratch, 0x5a, MOCK_SCRATCH); /* under ASan: must lie inside the workspace */
  if (s->keeps) /* the padding channels too: under ASan they must lie inside the workspace */
    memset(y, 0x7f, (size_t)(ys[0] * MOCK_CPAD(ys[1]) * ys[2] * ys[3]) * sizeof(float));
  for (n = 0; n < ys[0]; n++)
    for (k = 0; k < ys[1]; k++)
      for (oh = 0; oh < ys[2]; oh++)
        for (ow = 0; ow < ys[3]; ow++) {
          int64_t at = mock_at(&d->output, s->keeps, n, k, oh, ow), grp = k / Kg;
          float v = 0;
          for (c = 0; c < Cg; c++)
            for (kh = 0; kh < ws[2]; kh++)
              for (kw = 0; kw < ws[3]; kw++) {
                int64_t ih = oh * a->strides[0] - a->padding[0] + kh * a->dilation[0];
                int64_t iw = ow * a->strides[1] - a->padding[1] + kw * a->dilation[1];
                if (ih < 0 || ih >= xs[2] || iw < 0 || iw >= xs[3]) continue;
                v += ops[0][mock_at(&d->operands[0], d->operands[0].layout.id != NULL, n,
                                    grp * Cg + c, ih, iw)] *
                     s->w[((k * Cg + c) * ws[2] + kh) * ws[3] + kw];
              }
          if (d->bias >= 0) v += ops[d->bias][k];
          for (q = 0; q < d->num_post; q++) {
            if (d->post[q].kind == FUSE_POST_ADD) {
              const fuse_backend_tensor *r = &d->operands[d->post[q].operand];
              v += ops[d->post[q].operand][mock_at(r, r->layout.id != NULL, n, k, oh, ow)];
            }
            else v = v < d->post[q].lo ? d->post[q].lo : v > d->post[q].hi ? d->post[q].hi : v;
          }
          y[at] = v;
        }
  return FUSE_OK;
}

static void mock_destroy(void *state) {
  mock_state *s = (mock_state *)state;
  free(s->w);
  free(s);
  mock.destroyed++;
}

static const fuse_backend mock_backend = {"mock", NULL, mock_prepare, mock_run, mock_destroy};
/* The same, keeping its outputs in its own layout when fuse_compile allows it (user != NULL). */
static const fuse_backend mock_layout_backend = {"mock", (void *)mock_layout_id, mock_prepare,
                                                 mock_run, mock_destroy};

/* A ResNet basic block of c channels: conv-bias-relu, then conv-bias + the block's input +
   relu (residual = 0: without the residual, two convs in a chain). */
static fuse_graph *block_graph_of(int64_t c, int residual) {
  const conv_case cc = {1, c, 14, 14, c, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}};
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs[4] = {1, c, 14, 14};
  fuse_value x = fuse_input(g, "x", 4, xs), h, y;
  h = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, weight_for(g, &cc), &cc.a), bias_for(g, c, 1)));
  y = fuse_add(g, fuse_conv2d(g, h, weight_for(g, &cc), &cc.a), bias_for(g, c, 1));
  fuse_output(g, fuse_relu(g, residual ? fuse_add(g, y, x) : y));
  return g;
}

static fuse_graph *block_graph(void) { return block_graph_of(16, 1); }

/* rule first, then fuse.h's default rules for codegen "fuse"; merged */
static void fuse_with(fuse_graph *g, const fuse_rule *first, int allow_escaping) {
  fuse_rule rules[17];
  const fuse_rule *defaults;
  fuse_pattern_options o;
  int n = fuse_rules_default("fuse", &defaults);
  memset(&o, 0, sizeof o);
  o.allow_escaping = allow_escaping;
  rules[0] = *first;
  memcpy(rules + 1, defaults, (size_t)n * sizeof *defaults);
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, n + 1, &o), FUSE_OK);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
}

/* The block's second conv on the mock: it reads the first conv's output, which fuse.h's own
   kernel may leave NHWC; the backend gets NCHW, a NULL for the constant weights, and scratch
   inside the workspace. */
TEST(mock_takes_the_residual_conv) {
  const fuse_rule rule = {"mock.conv2d_bias_add_relu", "relu(add(add(conv2d(*, *), *), *))", NULL,
                          NULL};
  fuse_graph *g = block_graph();
  fuse_plan *p;
  io t;
  float *steps_out;
  void *work;
  int s;
  fuse_with(g, &rule, 0);
  memset(&mock, 0, sizeof mock);
  check_routed_on(g, &mock_backend, 1, "mock: resnet block, second conv");
  CHECK_EQ_INT(mock.taken, 1);
  CHECK_EQ_INT(mock.destroyed, mock.taken);
  CHECK_EQ_INT(mock.bad_runs, 0);
  CHECK(mock.runs >= 1);
  if (fuse_cpu_isa() != FUSE_ISA_SCALAR) CHECK_STR_CONTAINS(last_desc.s, "to_nchw");
  CHECK_STR_CONTAINS(last_desc.s, "(composite mock.conv2d_bias_add_relu) (mock)");
  /* what prepare was told */
  CHECK(mock.last.op == FUSE_BACKEND_CONV2D);
  CHECK_EQ_INT(mock.last.num_operands, 4); /* x, w, bias, residual */
  CHECK_EQ_INT(mock.last.bias, 2);
  CHECK_EQ_INT(mock.last.num_post, 2);
  CHECK(mock.last.post[0].kind == FUSE_POST_ADD && mock.last.post[0].operand == 3);
  CHECK(mock.last.post[1].kind == FUSE_POST_CLAMP && mock.last.post[1].lo == 0.0f &&
        mock.last.post[1].hi == INFINITY);
  CHECK(mock.last.operands[0].data == NULL && mock.last.operands[3].data == NULL);
  CHECK(mock.last.operands[2].data != NULL); /* the bias is a constant */
  CHECK_EQ_INT(mock.last.operands[1].rank, 4);
  CHECK_EQ_INT(mock.last.operands[1].shape[0], 16);
  CHECK_EQ_INT(mock.last.output.shape[1], 16);
  CHECK(mock.last.conv.strides[0] == 1 && mock.last.conv.padding[2] == 1 &&
        mock.last.conv.dilation[1] == 1 && mock.last.conv.groups == 1);
  CHECK(mock.last.composite && strcmp(mock.last.composite, "mock.conv2d_bias_add_relu") == 0);
  /* step by step in the caller's workspace gives fuse_run's bytes */
  p = compile_with(g, &mock_backend, NULL, NULL);
  CHECK(p != NULL && io_make(g, &t));
  steps_out = (float *)calloc(t.out_n[0], sizeof(float));
  work = alloc_aligned(fuse_plan_workspace_size(p));
  CHECK(fuse_plan_workspace_size(p) >= MOCK_SCRATCH);
  if (p && steps_out && work) {
    CHECK_EQ_INT(run_plan(p, &t, t.out, work), FUSE_OK);
    for (s = 0; s < fuse_plan_step_count(p); s++)
      CHECK_EQ_INT(fuse_run_steps(p, (const float *const *)t.in, &steps_out, work, s, 1), FUSE_OK);
    CHECK(memcmp(steps_out, t.out[0], t.out_n[0] * sizeof(float)) == 0);
  }
  free_aligned(work);
  free(steps_out);
  io_free(&t);
  fuse_plan_destroy(p);
  CHECK_EQ_INT(mock.destroyed, mock.taken);
  CHECK_EQ_INT(mock.bad_runs, 0);
  fuse_graph_destroy(g);
}

TEST(mock_declines_with_a_note) {
  const fuse_rule rule = {"mock.matmul_bias_relu", "relu(add(matmul(*, *), *))", NULL, NULL};
  int64_t xs[2] = {3, 8}, ws[2] = {8, 5}, bs[1] = {5};
  float *wd = random_floats(40, 0.5f), *bd = random_floats(5, 0.5f);
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_plan *ref, *p;
  static sbuf desc;
  io t;
  fuse_output(g, fuse_relu(g, fuse_add(g, fuse_matmul(g, fuse_input(g, "x", 2, xs),
                                                      fuse_constant(g, "w", 2, ws, wd)),
                                       fuse_constant(g, "b", 1, bs, bd))));
  free(wd);
  free(bd);
  fuse_with(g, &rule, 0);
  memset(&mock, 0, sizeof mock);
  ref = compile_with(g, NULL, NULL, NULL);
  p = compile_with(g, &mock_backend, &desc, NULL);
  CHECK(ref && p && io_make(g, &t));
  CHECK_EQ_INT(mock.prepared, 1);
  CHECK_EQ_INT(mock.taken, 0);
  CHECK(mock.last.op == FUSE_BACKEND_MATMUL);
  CHECK_STR_CONTAINS(desc.s, "(composite mock.matmul_bias_relu) (mock declined: mock takes conv2d "
                             "with constant weights only)"); /* then the kernel taken instead */
  check_same_output(ref, p, &t, -1);
  io_free(&t);
  fuse_plan_destroy(ref);
  fuse_plan_destroy(p);
  CHECK_EQ_INT(mock.runs, 0);
  fuse_graph_destroy(g);
}

/* A composite whose intermediate is also a graph output runs op by op: the note says so. */
TEST(mock_composite_not_fused_note) {
  const fuse_rule rule = {"mock.conv2d_bias_relu", "relu(add(conv2d(*, *), *))", NULL, NULL};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value y = conv_input(g, &base, 1, 0);
  fuse_plan *p;
  static sbuf desc;
  fuse_output(g, fuse_relu(g, y));
  fuse_output(g, y);
  fuse_with(g, &rule, 1);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  memset(&mock, 0, sizeof mock);
  p = compile_with(g, &mock_backend, &desc, NULL);
  CHECK(p != NULL);
  CHECK_EQ_INT(mock.prepared, 0);
  CHECK_STR_CONTAINS(desc.s, "(mock: runs op by op: ");
  fuse_plan_destroy(p);
  fuse_graph_destroy(g);
}

/* Out of memory in a backend's prepare fails the compile; states already made are destroyed. */
TEST(mock_out_of_memory_fails_compile) {
  const fuse_rule rule = {"mock.conv2d", "conv2d(*, *)", NULL, NULL};
  fuse_graph *g = block_graph();
  fuse_result r = FUSE_OK;
  fuse_plan *p;
  fuse_with(g, &rule, 0);
  memset(&mock, 0, sizeof mock);
  mock.oom_after = 1;
  p = compile_with(g, &mock_backend, NULL, &r);
  CHECK(p == NULL);
  CHECK_EQ_INT(r, FUSE_ERROR_OUT_OF_MEMORY);
  CHECK_EQ_INT(mock.prepared, 2);
  CHECK_EQ_INT(mock.taken, 1);
  CHECK_EQ_INT(mock.destroyed, 1);
  fuse_plan_destroy(p);
  fuse_graph_destroy(g);
}

/* Both convs of a block on a backend that keeps its outputs in its own, larger layout (NHWC,
   12 channels padded to 16): the tensor between them is never NCHW, the workspace holds the
   declared bytes, the second conv is told the layout of its x (its residual is the graph's
   input: NCHW). The mock that never declares a layout (all-zero, as before) gets NCHW. */
TEST(mock_keeps_its_layout_between_its_steps) {
  const fuse_rule rules[2] = {
      {"mock.conv2d_bias_add_relu", "relu(add(add(conv2d(*, *), *), *))", NULL, NULL},
      {"mock.conv2d_bias_relu", "relu(add(conv2d(*, *), *))", NULL, NULL}};
  int keep;
  for (keep = 0; keep < 2; keep++) {
    fuse_graph *g = block_graph_of(12, 1);
    fuse_plan *p;
    CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
    memset(&mock, 0, sizeof mock);
    check_routed_on(g, keep ? &mock_layout_backend : &mock_backend, 2,
                    keep ? "mock keeps its layout" : "mock, NCHW");
    CHECK_EQ_INT(mock.taken, 2);
    CHECK_EQ_INT(mock.bad_runs, 0);
    CHECK_EQ_INT(mock.offered_layout, 1); /* h: only the second conv reads it */
    CHECK_EQ_INT(mock.got_layout, keep);
    CHECK_EQ_INT(count_substr(last_desc.s, "(output in mock's layout, 12544 bytes)"), keep);
    if (keep) CHECK(strstr(last_desc.s, "to_nchw") == NULL && strstr(last_desc.s, "to_nhwc") == NULL);
    p = compile_with(g, keep ? &mock_layout_backend : &mock_backend, NULL, NULL);
    CHECK(p != NULL);
    if (p) CHECK(fuse_plan_workspace_size(p) >= (keep ? 12544u : 9408u) + MOCK_SCRATCH);
    fuse_plan_destroy(p);
    CHECK_EQ_INT(mock.destroyed, mock.taken);
    fuse_graph_destroy(g);
  }
}

/* A conv keeps its output for a matmul of the same backend that then declines (the mock takes
   conv2d only): fuse_compile offers both again with that tensor NCHW. */
TEST(mock_reader_declines_layout_turned_back) {
  const fuse_rule rules[2] = {{"mock.conv2d_bias_relu", "relu(add(conv2d(*, *), *))", NULL, NULL},
                              {"mock.matmul_bias_relu", "relu(add(matmul(*, *), *))", NULL, NULL}};
  const conv_case cc = {1, 12, 6, 6, 12, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}};
  int64_t ws[2] = {6, 5}, bs[1] = {5};
  float *wd = random_floats(30, 0.5f), *bd = random_floats(5, 0.5f);
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_plan *ref, *p;
  static sbuf desc;
  io t;
  fuse_value h = fuse_relu(g, conv_input(g, &cc, 1, 0));
  fuse_output(g, fuse_relu(g, fuse_add(g, fuse_matmul(g, h, fuse_constant(g, "w", 2, ws, wd)),
                                       fuse_constant(g, "b", 1, bs, bd))));
  free(wd);
  free(bd);
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  memset(&mock, 0, sizeof mock);
  ref = compile_with(g, NULL, NULL, NULL);
  p = compile_with(g, &mock_layout_backend, &desc, NULL);
  CHECK(ref && p && io_make(g, &t));
  CHECK_EQ_INT(mock.prepared, 4); /* conv, matmul (declined: its x in the layout), both again */
  CHECK_EQ_INT(mock.offered_layout, 1);
  CHECK_EQ_INT(mock.got_layout, 1);
  CHECK_EQ_INT(mock.taken, 2);
  CHECK_EQ_INT(mock.destroyed, 1); /* the first conv's state */
  CHECK_EQ_INT(count_substr(desc.s, "(mock)"), 1);
  CHECK(strstr(desc.s, "layout") == NULL);
  CHECK_STR_CONTAINS(desc.s, "(mock declined: mock takes conv2d with constant weights only)");
  check_same_output(ref, p, &t, TOL);
  io_free(&t);
  fuse_plan_destroy(ref);
  fuse_plan_destroy(p);
  CHECK_EQ_INT(mock.destroyed, 2);
  CHECK_EQ_INT(mock.bad_runs, 0);
  fuse_graph_destroy(g);
}

#define RUN_MOCK_TESTS()                             \
  do {                                               \
    RUN(mock_takes_the_residual_conv);               \
    RUN(mock_declines_with_a_note);                  \
    RUN(mock_composite_not_fused_note);              \
    RUN(mock_out_of_memory_fails_compile);           \
    RUN(mock_keeps_its_layout_between_its_steps);    \
    RUN(mock_reader_declines_layout_turned_back);    \
  } while (0)

#if FUSE_DNNL_AVAILABLE

#include <pthread.h>

static const char *self_path; /* argv[0], for the ONEDNN_VERBOSE child */

static fuse_plan *compile(const fuse_graph *g, int dnnl, sbuf *desc) {
  return compile_with(g, dnnl ? fuse_dnnl_backend() : NULL, desc, NULL);
}

static void check_routed(fuse_graph *g, int want, const char *label) {
  check_routed_on(g, fuse_dnnl_backend(), want, label);
}

/* --------------------------------------------------------------- 1. routed -- */

TEST(backend_available) {
  const fuse_backend *b = fuse_dnnl_backend();
  CHECK(b != NULL);
  CHECK(b && strcmp(b->name, "dnnl") == 0 && b->prepare && b->run && b->destroy);
}

TEST(conv_bias) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, conv_input(g, &base, 1, 0));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 1, "conv + bias");
  fuse_graph_destroy(g);
}

TEST(conv_bias_relu) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, fuse_relu(g, conv_input(g, &base, 1, 1)));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 1, "conv + bias + relu");
  fuse_graph_destroy(g);
}

TEST(conv_relu_no_bias) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, fuse_relu(g, conv_input(g, &base, 0, 0)));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 1, "conv + relu");
  fuse_graph_destroy(g);
}

TEST(conv_bias_clip) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, fuse_clip(g, conv_input(g, &base, 1, 0), -0.5f, 0.75f));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 1, "conv + bias + clip");
  fuse_graph_destroy(g);
}

/* Every element-wise post-op kind, written as models write it, fused into the conv and routed
   to oneDNN's eltwise post-ops (hardsigmoid as linear + clip, selu as elu + linear), against
   the built-in kernels. */
TEST(conv_bias_every_activation) {
  int f;
  for (f = 0; f < 16; f++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value y = conv_input(g, &base, 1, 0), t;
    static const char *const names[16] = {
        "sigmoid", "tanh", "x*sigmoid(x)", "hardsigmoid", "hardswish", "x*hardsigmoid(x)",
        "leaky_relu", "elu", "selu", "softplus", "mish", "gelu", "gelu tanh",
        "0.5x(1+erf(x/sqrt2))", "exp(min(x,3))", "(x-0.25)*1.5 then relu"};
    switch (f) {
    case 0: y = fuse_sigmoid(g, y); break;
    case 1: y = fuse_tanh(g, y); break;
    case 2: y = fuse_mul(g, y, fuse_sigmoid(g, y)); break;
    case 3: y = fuse_hardsigmoid(g, y, 0.2f, 0.5f); break;
    case 4: y = fuse_hardswish(g, y); break;
    case 5: y = fuse_mul(g, y, fuse_hardsigmoid(g, y, 1.0f / 6, 0.5f)); break;
    case 6: y = fuse_leaky_relu(g, y, 0.1f); break;
    case 7: y = fuse_elu(g, y, 0.7f); break;
    case 8: y = fuse_selu(g, y, 1.6732632f, 1.0507010f); break;
    case 9: y = fuse_softplus(g, y); break;
    case 10: y = fuse_mul(g, y, fuse_tanh(g, fuse_softplus(g, y))); break;
    case 11: y = fuse_gelu(g, y, 0); break;
    case 12: y = fuse_gelu(g, y, 1); break;
    case 13:
      t = fuse_add(g, fuse_erf(g, fuse_div(g, y, fuse_scalar(g, 1.4142135f))), fuse_scalar(g, 1));
      y = fuse_mul(g, fuse_mul(g, y, t), fuse_scalar(g, 0.5f));
      break;
    case 14: y = fuse_exp(g, fuse_minimum(g, y, fuse_scalar(g, 3))); break;
    default:
      y = fuse_relu(g, fuse_mul(g, fuse_sub(g, y, fuse_scalar(g, 0.25f)), fuse_scalar(g, 1.5f)));
      break;
    }
    fuse_output(g, y);
    CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(g), 1); /* the whole chain in the conv's composite */
    check_routed(g, 1, names[f]);
    fuse_graph_destroy(g);
  }
}

TEST(conv_relu6_clip_and_minmax) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, fuse_clip(g, conv_input(g, &base, 1, 0), 0.0f, 6.0f));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 1, "relu6 as clip");
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL); /* min(max(v, 0), 6) with the constants on either side */
  fuse_output(g, fuse_minimum(g, fuse_scalar(g, 6.0f),
                              fuse_maximum(g, conv_input(g, &base, 1, 0), fuse_scalar(g, 0.0f))));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 1, "relu6 as minimum(maximum)");
  fuse_graph_destroy(g);
}

/* relu(conv + bias + r) with r a graph input, in both operand orders at both adds */
TEST(conv_residual_both_orders) {
  int order;
  for (order = 0; order < 2; order++) {
    fuse_graph *g = fuse_graph_create(NULL);
    int64_t rs[4] = {1, 16, 10, 10};
    fuse_value y = conv_input(g, &base, 1, order), r = fuse_input(g, "r", 4, rs);
    fuse_output(g, fuse_relu(g, order ? fuse_add(g, r, y) : fuse_add(g, y, r)));
    CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
    check_routed(g, 1, order ? "relu(r + (b + conv))" : "relu((conv + b) + r)");
    fuse_graph_destroy(g);
  }
  { /* without a clamp */
    fuse_graph *g = fuse_graph_create(NULL);
    int64_t rs[4] = {1, 16, 10, 10};
    fuse_value y = conv_input(g, &base, 1, 0), r = fuse_input(g, "r", 4, rs);
    fuse_output(g, fuse_add(g, r, y));
    CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
    check_routed(g, 1, "r + (conv + b)");
    fuse_graph_destroy(g);
  }
}

/* a post-op order the default rules do not make: relu, then the residual (eltwise, then sum) */
TEST(conv_relu_then_residual_own_rule) {
  const fuse_rule rule = {"dnnl.conv2d_bias_relu_add", "add(relu(add(conv2d(*, *), *)), *)", NULL,
                          NULL};
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t rs[4] = {1, 16, 10, 10};
  fuse_value y = conv_input(g, &base, 1, 0), r = fuse_input(g, "r", 4, rs);
  fuse_composite_info info;
  fuse_output(g, fuse_add(g, fuse_relu(g, y), r));
  CHECK_EQ_INT(fuse_ops_by_pattern(g, &rule, 1, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK_EQ_INT(fuse_composite_get(g, 0, &info), FUSE_OK);
  CHECK_EQ_INT(info.has_epilogue, 1);
  CHECK_EQ_INT(info.epilogue.num_post, 2);
  CHECK(info.epilogue.post[0].kind == FUSE_POST_CLAMP);
  CHECK(info.epilogue.post[1].kind == FUSE_POST_ADD);
  check_routed(g, 1, "relu then residual");
  fuse_graph_destroy(g);
}

/* two residuals: the first as oneDNN's sum post-op, the second as binary_add */
TEST(conv_two_residuals_own_rule) {
  const fuse_rule rule = {"dnnl.conv2d_bias_add_add_relu",
                          "relu(add(add(add(conv2d(*, *), *), *), *))", NULL, NULL};
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t rs[4] = {1, 16, 10, 10};
  fuse_value y = conv_input(g, &base, 1, 0), r = fuse_input(g, "r", 4, rs);
  fuse_value q = fuse_input(g, "q", 4, rs);
  fuse_composite_info info;
  fuse_output(g, fuse_relu(g, fuse_add(g, q, fuse_add(g, y, r))));
  CHECK_EQ_INT(fuse_ops_by_pattern(g, &rule, 1, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_get(g, 0, &info), FUSE_OK);
  CHECK_EQ_INT(info.epilogue.num_post, 3);
  check_routed(g, 1, "conv + bias + two residuals + relu");
  fuse_graph_destroy(g);
}

TEST(depthwise) {
  conv_case cc = {1, 16, 12, 12, 16, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 16}};
  int stride;
  for (stride = 1; stride <= 2; stride++) {
    fuse_graph *g = fuse_graph_create(NULL);
    cc.a.strides[0] = cc.a.strides[1] = stride;
    fuse_output(g, stride == 1 ? fuse_relu(g, conv_input(g, &cc, 1, 0))
                               : fuse_clip(g, conv_input(g, &cc, 1, 0), 0.0f, 6.0f));
    CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
    check_routed(g, 1, stride == 1 ? "depthwise + bias + relu" : "depthwise s2 + bias + relu6");
    fuse_graph_destroy(g);
  }
}

TEST(grouped) {
  const conv_case cc = {1, 16, 9, 9, 32, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 4}};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, fuse_relu(g, conv_input(g, &cc, 1, 0)));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 1, "grouped (4) + bias + relu");
  fuse_graph_destroy(g);
}

TEST(strided_dilated_padded_batch2) {
  const conv_case cc = {2, 6, 13, 11, 10, 3, 2, {{2, 1}, {1, 0, 2, 1}, {2, 3}, 1}};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, fuse_relu(g, conv_input(g, &cc, 1, 0)));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 1, "stride 2x1, padding 1,0,2,1, dilation 2x3, batch 2");
  fuse_graph_destroy(g);
}

/* A ResNet basic block: conv-bias-relu, then conv-bias + the block's input + relu. */
TEST(resnet_block) {
  const conv_case cc = {1, 16, 14, 14, 16, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}};
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs[4] = {1, 16, 14, 14};
  fuse_value x = fuse_input(g, "x", 4, xs), h, y;
  h = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, weight_for(g, &cc), &cc.a), bias_for(g, 16, 1)));
  y = fuse_add(g, fuse_conv2d(g, h, weight_for(g, &cc), &cc.a), bias_for(g, 16, 1));
  fuse_output(g, fuse_relu(g, fuse_add(g, y, x)));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 2, "resnet block");
  fuse_graph_destroy(g);
}

/* ------------------------------------- 1b. oneDNN's layout between its steps -- */

/* conv -> conv, a ResNet block, and a block with a projection (the stem's output read by two
   convs, once as the sum post-op's residual): each tensor between two oneDNN steps stays in
   oneDNN's layout (the plan says so); results as the built-in kernels'. */
TEST(kept_layout_chain_block_projection) {
  const conv_case c3 = {1, 20, 14, 14, 20, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}};
  const conv_case s2 = {1, 20, 14, 14, 24, 3, 3, {{2, 2}, {1, 1, 1, 1}, {1, 1}, 1}};
  const conv_case c2 = {1, 24, 7, 7, 24, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}};
  const conv_case ds = {1, 20, 14, 14, 24, 1, 1, {{2, 2}, {0, 0, 0, 0}, {1, 1}, 1}};
  int residual;
  fuse_graph *g;
  int64_t xs[4] = {1, 20, 14, 14};
  fuse_value x, z, h, r;
  for (residual = 0; residual < 2; residual++) {
    g = block_graph_of(20, residual);
    CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
    check_routed(g, 2, residual ? "kept: resnet block" : "kept: conv -> conv");
    CHECK_EQ_INT(count_substr(last_desc.s, "(dnnl) (output in dnnl's layout"), 1);
    fuse_graph_destroy(g);
  }
  g = fuse_graph_create(NULL); /* stem, then a block with a 1x1 stride-2 projection */
  x = fuse_input(g, "x", 4, xs);
  z = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, weight_for(g, &c3), &c3.a), bias_for(g, 20, 1)));
  h = fuse_relu(g, fuse_add(g, fuse_conv2d(g, z, weight_for(g, &s2), &s2.a), bias_for(g, 24, 1)));
  r = fuse_add(g, fuse_conv2d(g, z, weight_for(g, &ds), &ds.a), bias_for(g, 24, 1));
  h = fuse_add(g, fuse_conv2d(g, h, weight_for(g, &c2), &c2.a), bias_for(g, 24, 1));
  fuse_output(g, fuse_relu(g, fuse_add(g, h, r)));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 4, "kept: stem + block with projection");
  CHECK_EQ_INT(count_substr(last_desc.s, "(dnnl) (output in dnnl's layout"), 3); /* z, h, r */
  fuse_graph_destroy(g);
}

/* Not kept: a tensor that is also a graph output; one whose reader oneDNN declines (weights
   that are an input: the steps are offered again with it NCHW). */
TEST(kept_layout_not_for_outputs_or_declined_readers) {
  const conv_case cc = {1, 16, 10, 10, 16, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}};
  int64_t ws[4] = {16, 16, 3, 3};
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value h = fuse_relu(g, conv_input(g, &cc, 1, 0));
  fuse_output(g, h);
  fuse_output(g, fuse_relu(g, fuse_add(g, fuse_conv2d(g, h, weight_for(g, &cc), &cc.a),
                                       bias_for(g, 16, 1))));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 2, "h is also a graph output");
  CHECK(strstr(last_desc.s, "layout") == NULL);
  fuse_graph_destroy(g);
  g = fuse_graph_create(NULL);
  h = fuse_relu(g, conv_input(g, &cc, 1, 0));
  fuse_output(g, fuse_relu(g, fuse_add(g, fuse_conv2d(g, h, fuse_input(g, "w", 4, ws), &cc.a),
                                       bias_for(g, 16, 1))));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  {
    fuse_plan *ref = compile(g, 0, NULL), *p;
    static sbuf desc;
    io t;
    p = compile(g, 1, &desc);
    CHECK(ref && p && io_make(g, &t));
    CHECK_EQ_INT(count_substr(desc.s, "(dnnl)"), 1);
    CHECK_STR_CONTAINS(desc.s, "(dnnl declined: the weights are not a constant)");
    CHECK(strstr(desc.s, "layout") == NULL);
    check_same_output(ref, p, &t, TOL);
    io_free(&t);
    fuse_plan_destroy(ref);
    fuse_plan_destroy(p);
  }
  fuse_graph_destroy(g);
}

static fuse_value matmul_graph(fuse_graph *g, int xrank, int residual) {
  int64_t xs[3] = {2, 3, 32}, ws[2] = {32, 24}, bs[1] = {24}, rs[3] = {2, 3, 24};
  float *wd = random_floats(32 * 24, 0.3f), *bd = random_floats(24, 0.3f);
  fuse_value x = fuse_input(g, "x", xrank, xrank == 3 ? xs : xs + 1), y;
  y = fuse_add(g, fuse_matmul(g, x, fuse_constant(g, "w", 2, ws, wd)),
               fuse_constant(g, "b", 1, bs, bd));
  free(wd);
  free(bd);
  if (residual) y = fuse_add(g, fuse_input(g, "r", xrank, xrank == 3 ? rs : rs + 1), y);
  return fuse_relu(g, y);
}

TEST(matmul_bias_relu) {
  int xrank;
  for (xrank = 2; xrank <= 3; xrank++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_output(g, matmul_graph(g, xrank, 0));
    CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
    check_routed(g, 1, xrank == 2 ? "matmul 2-D + bias + relu" : "matmul 3-D + bias + relu");
    fuse_graph_destroy(g);
  }
}

TEST(matmul_bias_residual_relu) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_output(g, matmul_graph(g, 3, 1));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  check_routed(g, 1, "matmul + bias + residual + relu");
  fuse_graph_destroy(g);
}

/* ------------------------------------------------------------- 2. fallback -- */

TEST(weights_as_input_fall_back_with_a_note) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs[4] = {1, 4, 6, 6}, ws[4] = {8, 4, 3, 3};
  fuse_plan *ref, *p;
  sbuf desc;
  io t;
  float *want;
  fuse_output(g, fuse_relu(g, fuse_add(g, fuse_conv2d(g, fuse_input(g, "x", 4, xs),
                                                      fuse_input(g, "w", 4, ws), NULL),
                                       bias_for(g, 8, 1))));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  CHECK(io_make(g, &t));
  want = (float *)calloc(t.out_n[0], sizeof(float));
  ref = compile(g, 0, NULL);
  p = compile(g, 1, &desc);
  CHECK(ref && p);
  CHECK_STR_CONTAINS(desc.s, "(dnnl declined: the weights are not a constant)");
  CHECK_EQ_INT(count_substr(desc.s, "(dnnl)"), 0);
  if (ref && p) {
    CHECK_EQ_INT(run_plan(ref, &t, &want, NULL), FUSE_OK);
    CHECK_EQ_INT(run_plan(p, &t, t.out, NULL), FUSE_OK);
    CHECK_NEAR_ARRAY(t.out[0], want, t.out_n[0], 0.0);
  }
  fuse_plan_destroy(ref);
  fuse_plan_destroy(p);
  free(want);
  io_free(&t);
  fuse_graph_destroy(g);
}

TEST(other_codegen_not_offered) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_plan *p;
  sbuf desc;
  fuse_output(g, fuse_relu(g, conv_input(g, &base, 1, 0)));
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  p = compile(g, 1, &desc);
  CHECK(p != NULL);
  CHECK_STR_CONTAINS(desc.s, "(composite fuse.conv2d_bias_relu)");
  CHECK(strstr(desc.s, "dnnl") == NULL);
  fuse_plan_destroy(p);
  fuse_graph_destroy(g);
}

/* ---------------------------------------------------------- 3. the network -- */

static float *read_floats(const char *path, size_t n) {
  FILE *f = fopen(path, "rb");
  float *d = (float *)malloc(n * sizeof(float));
  int ok = f && d && fread(d, sizeof(float), n, f) == n;
  if (f) fclose(f);
  if (!ok) {
    free(d);
    return NULL;
  }
  return d;
}

TEST(committed_onnx_network) {
  fuse_graph *g = NULL;
  fuse_plan *ref = NULL, *p = NULL;
  sbuf desc;
  size_t in_n, out_n, ws;
  float *x, *want, *got, *got_steps, *builtin;
  void *work;
  int s;
  CHECK_EQ_INT(fuse_onnx_load_file("tests/data/onnx/tinynet_bn.onnx", NULL, &g), FUSE_OK);
  if (!g || fuse_graph_status(g) != FUSE_OK) {
    fuse_graph_destroy(g);
    return;
  }
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  in_n = numel(g, fuse_graph_input(g, 0));
  out_n = numel(g, fuse_graph_output(g, 0));
  x = read_floats("tests/data/onnx/tinynet.input.bin", in_n);
  want = read_floats("tests/data/onnx/tinynet.output.bin", out_n);
  got = (float *)calloc(out_n, sizeof(float));
  got_steps = (float *)calloc(out_n, sizeof(float));
  builtin = (float *)calloc(out_n, sizeof(float));
  CHECK(x && want);
  ref = compile(g, 0, NULL);
  p = compile(g, 1, &desc);
  CHECK(ref && p);
  if (x && want && ref && p) {
    const float *in[1];
    float *out[1];
    CHECK(count_substr(desc.s, "(dnnl)") >= 2);
    CHECK_EQ_INT(count_substr(desc.s, "declined"), 0);
    in[0] = x;
    out[0] = builtin;
    CHECK_EQ_INT(fuse_run(ref, in, out, NULL), FUSE_OK);
    out[0] = got;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
    CHECK_NEAR_ARRAY(got, want, out_n, 1e-3); /* PyTorch's output */
    CHECK_NEAR_ARRAY(got, builtin, out_n, TOL);
    /* step by step in the caller's workspace: the backends' scratch is part of it */
    ws = fuse_plan_workspace_size(p);
    work = alloc_aligned(ws ? ws : 1);
    out[0] = got_steps;
    for (s = 0; s < fuse_plan_step_count(p); s++)
      CHECK_EQ_INT(fuse_run_steps(p, in, out, work, s, 1), FUSE_OK);
    CHECK(memcmp(got_steps, got, out_n * sizeof(float)) == 0);
    free_aligned(work);
  }
  fuse_plan_destroy(ref);
  fuse_plan_destroy(p);
  free(x), free(want), free(got), free(got_steps), free(builtin);
  fuse_graph_destroy(g);
}

/* --------------------------------------------------------- 4. ONEDNN_VERBOSE -- */

#define SEED_C 64
#define SEED_S 56

static int bias_per_channel(const fuse_graph *g, const fuse_match *m, void *user) {
  fuse_value w = fuse_match_capture(m, "weight"), b = fuse_match_capture(m, "bias");
  (void)user;
  return w != FUSE_NONE && b != FUSE_NONE && (int64_t)numel(g, b) == fuse_value_shape(g, w)[0];
}

/* The seed's graph, as examples/conv2d_reshape_add_relu.c builds it, fused by the seed's rule
   (by_rule) or by fuse_optimize(g, "dnnl"). */
static fuse_graph *seed_graph(int by_rule) {
  const fuse_rule rule = {"dnnl.conv2d_reshape_add_relu",
                          "relu(add(conv2d($data, $weight), reshape($bias, *)))", bias_per_channel,
                          NULL};
  const int64_t x_shape[4] = {1, SEED_C, SEED_S, SEED_S}, w_shape[4] = {SEED_C, SEED_C, 3, 3};
  const int64_t b_shape[1] = {SEED_C}, b_4d[4] = {1, SEED_C, 1, 1};
  fuse_conv2d_attrs pad1 = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  float *w = random_floats((size_t)SEED_C * SEED_C * 9, 0.1f), *b = random_floats(SEED_C, 0.5f);
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value data = fuse_input(g, "data", 4, x_shape);
  fuse_value conv = fuse_conv2d(g, data, fuse_constant(g, "weight", 4, w_shape, w), &pad1);
  fuse_value reshaped = fuse_reshape(g, fuse_constant(g, "bias", 1, b_shape, b), 4, b_4d);
  fuse_output(g, fuse_relu(g, fuse_add(g, conv, reshaped)));
  free(w);
  free(b);
  if (by_rule) {
    fuse_ops_by_pattern(g, &rule, 1, NULL);
    fuse_merge_composites(g);
  } else {
    fuse_optimize(g, "dnnl");
  }
  return g;
}

/* What the ONEDNN_VERBOSE child runs: the seed (by its rule or fuse_optimize), or, 20
   channels, 14x14, fuse_optimize(g, "dnnl"): two convs in a chain, a ResNet block. */
enum { V_OPTIMIZE, V_RULE, V_CHAIN, V_BLOCK };
static const char *const v_modes[] = {"optimize", "rule", "chain", "block"};

/* The child: compiles the graph for oneDNN, runs it once between two markers, compares with
   the built-in plan. Its stdout is oneDNN's log with our lines mixed in. */
static int verbose_child(int mode) {
  fuse_graph *g = mode <= V_RULE ? seed_graph(mode == V_RULE) : block_graph_of(20, mode == V_BLOCK);
  fuse_plan *p, *ref;
  size_t n = mode <= V_RULE ? (size_t)SEED_C * SEED_S * SEED_S : 20 * 14 * 14;
  float *x = random_floats(n, 1.0f), *y = (float *)calloc(n, sizeof(float));
  float *want = (float *)calloc(n, sizeof(float));
  const float *in[1];
  float *out[1];
  fuse_composite_info info;
  int ok;
  if (mode > V_RULE) fuse_optimize(g, "dnnl");
  p = compile(g, 1, NULL);
  ref = compile(g, 0, NULL);
  ok = p && ref && x && y && want && fuse_composite_count(g) == (mode <= V_RULE ? 1 : 2) &&
       fuse_composite_get(g, 0, &info) == FUSE_OK;
  if (ok) {
    static sbuf desc;
    char *line, *next;
    fuse_plan_write(p, sbuf_write, &desc);
    printf("child: composite %s, plan:\n", info.name);
    for (line = desc.s; *line; line = next) {
      next = strchr(line, '\n');
      next = next ? next + 1 : line + strlen(line);
      printf("child:   %.*s", (int)(next - line), line);
    }
  }
  in[0] = x;
  if (ok) {
    out[0] = want;
    ok = fuse_run(ref, in, out, NULL) == FUSE_OK;
  }
  fflush(stdout);
  printf("FUSE_RUN_BEGIN\n");
  fflush(stdout);
  if (ok) {
    out[0] = y;
    ok = fuse_run(p, in, out, NULL) == FUSE_OK;
  }
  fflush(stdout);
  printf("FUSE_RUN_END\n");
  printf("FUSE_MATCH %s %.3g\n", ok && runner_rel_error(y, want, n) <= TOL ? "ok" : "bad",
         ok ? runner_rel_error(y, want, n) : -1.0);
  fflush(stdout);
  fuse_plan_destroy(p);
  fuse_plan_destroy(ref);
  fuse_graph_destroy(g);
  free(x), free(y), free(want);
  return ok ? 0 : 1;
}

/* The memory format of argument `arg` ("src", "dst") in a verbose line, e.g. "acdb". */
static void verbose_tag(const char *line, const char *arg, char *tag, size_t size) {
  char key[16];
  const char *p, *end;
  size_t n;
  snprintf(key, sizeof key, " %s_f32:", arg);
  tag[0] = 0;
  p = strstr(line, key);
  if (!p && strncmp(arg, "src", 3) == 0) p = strstr(line, ",src_f32:"); /* first argument */
  if (!p || !(p = strstr(p, "blocked:"))) return;
  p += 8;
  end = strchr(p, ':');
  n = end ? (size_t)(end - p) : 0;
  if (n >= size) n = size - 1;
  memcpy(tag, p, n);
  tag[n] = 0;
}

/* The two-conv modes: the log between the markers must be reorders from NCHW ("abcd") into
   oneDNN's layout before the last conv (entries: x, and in the block x once more as the sum's
   residual), the two convs with the second reading the first one's destination format as is,
   and one reorder back to NCHW after the last conv (the exit); never a reorder between two
   oneDNN layouts, nor of the first conv's output. */
typedef struct vcheck {
  int convs, entries, exits, bad_reorders, exits_early, entries_late;
  char dst0[32], src1[32];
} vcheck;

static void verbose_two_convs(vcheck *v, const char *line) {
  char src[32], dst[32];
  if (strstr(line, ",convolution,")) {
    if (v->convs == 0) verbose_tag(line, "dst", v->dst0, sizeof v->dst0);
    if (v->convs == 1) verbose_tag(line, "src", v->src1, sizeof v->src1);
    v->convs++;
    return;
  }
  verbose_tag(line, "src", src, sizeof src);
  verbose_tag(line, "dst", dst, sizeof dst);
  if (strcmp(src, "abcd") == 0 && strcmp(dst, "abcd") != 0) {
    v->entries++;
    if (v->convs >= 2) v->entries_late++;
  } else if (strcmp(dst, "abcd") == 0 && strcmp(src, "abcd") != 0) {
    v->exits++;
    if (v->convs < 2) v->exits_early++;
  } else {
    v->bad_reorders++;
  }
}

static void check_verbose(int mode, int avx2) {
  char cmd[4096], line[4096];
  FILE *f;
  int inside = 0, convs = 0, others = 0, reorders = 0, begin = 0, end = 0, match = 0, rc;
  int padded_plan = 0;
  vcheck v;
  memset(&v, 0, sizeof v);
  snprintf(cmd, sizeof cmd,
           "%sONEDNN_VERBOSE=1 DNNL_VERBOSE=1 '%s' --verbose-child %s 2>&1",
           avx2 ? "ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 " : "", self_path, v_modes[mode]);
  f = popen(cmd, "r");
  CHECK(f != NULL);
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "FUSE_RUN_BEGIN", 14) == 0) inside = 1, begin = 1;
    else if (strncmp(line, "FUSE_RUN_END", 12) == 0) inside = 0, end = 1;
    else if (strncmp(line, "FUSE_MATCH ok", 13) == 0) match = 1;
    if (strncmp(line, "child:", 6) == 0) printf("  %s", line);
    /* under AVX2 oneDNN picks nChw8c: 20 channels take 24 channels' bytes */
    if (strncmp(line, "child:", 6) == 0 && strstr(line, "(output in dnnl's layout, 18816 bytes)"))
      padded_plan = 1;
    if (!inside || !strstr(line, "_verbose,exec,")) continue;
    if (mode >= V_CHAIN) {
      printf("  %s: %s", v_modes[mode], line);
      if (strstr(line, ",convolution,") || strstr(line, ",reorder,")) verbose_two_convs(&v, line);
      else others++;
      continue;
    }
    if (strstr(line, ",convolution,")) {
      convs++;
      printf("  %s: %s", mode == V_RULE ? "the seed's rule" : "fuse_optimize(g, \"dnnl\")", line);
      CHECK(strstr(line, "bia_f32") != NULL);
      CHECK(strstr(line, "eltwise_relu") != NULL);
      CHECK(strstr(line, "attr-scratchpad:user") != NULL);
      CHECK(strstr(line, "mb1_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1") != NULL);
    } else if (strstr(line, ",reorder,")) {
      reorders++; /* NCHW in and out of oneDNN's blocked layout */
    } else {
      others++;
      printf("  unexpected: %s", line);
    }
  }
  rc = pclose(f);
  CHECK_EQ_INT(rc, 0);
  CHECK(begin && end && match);
  CHECK_EQ_INT(others, 0);
  if (mode <= V_RULE) {
    CHECK_EQ_INT(convs, 1);
    CHECK(reorders <= 2);
    return;
  }
  CHECK_EQ_INT(v.convs, 2);
  CHECK_EQ_INT(v.bad_reorders, 0);
  CHECK_EQ_INT(v.entries, mode == V_BLOCK ? 2 : 1);
  CHECK_EQ_INT(v.exits, 1);
  CHECK_EQ_INT(v.entries_late, 0);
  CHECK_EQ_INT(v.exits_early, 0);
  CHECK(v.dst0[0] && strcmp(v.dst0, "abcd") != 0 && strcmp(v.dst0, v.src1) == 0);
  if (strcmp(v.dst0, v.src1) != 0)
    fprintf(stderr, "  first conv writes %s, second reads %s\n", v.dst0, v.src1);
  if (avx2) {
    CHECK(strcmp(v.dst0, "aBcd8b") == 0);
    CHECK(padded_plan);
  }
}

TEST(verbose_seed_rule_one_convolution_with_bias_and_relu) { check_verbose(V_RULE, 0); }
TEST(verbose_seed_optimize_one_convolution_with_bias_and_relu) { check_verbose(V_OPTIMIZE, 0); }
TEST(verbose_two_convs_no_reorder_between) { check_verbose(V_CHAIN, 0); }
TEST(verbose_resnet_block_reorders_only_at_entry_and_exit) { check_verbose(V_BLOCK, 0); }
TEST(verbose_resnet_block_avx2_padded_blocked_layout) { check_verbose(V_BLOCK, 1); }

/* ------------------------------------------------------------ 5. concurrency -- */

#define CONC_RUNS 20

typedef struct worker {
  fuse_plan *p;
  const float *x;
  const float *want;
  float *y;
  size_t in_n, out_n;
  int runs, mismatches, failures;
} worker;

static void *worker_main(void *arg) {
  worker *w = (worker *)arg;
  void *work = alloc_aligned(fuse_plan_workspace_size(w->p) + 1);
  int i;
  if (!work) {
    w->failures++;
    return NULL;
  }
  memset(work, 0xff, fuse_plan_workspace_size(w->p)); /* garbage: NaN patterns */
  for (i = 0; i < w->runs; i++) {
    const float *in[1];
    float *out[1];
    in[0] = w->x;
    out[0] = w->y;
    memset(w->y, 0, w->out_n * sizeof(float));
    if (fuse_run(w->p, in, out, work) != FUSE_OK) w->failures++;
    if (memcmp(w->y, w->want, w->out_n * sizeof(float)) != 0) w->mismatches++;
  }
  free_aligned(work);
  return NULL;
}

/* A small network: ResNet block (sum post-op into oneDNN's blocked layout), depthwise + relu6,
   matmul + bias. */
static fuse_graph *conc_graph(void) {
  const conv_case cc = {1, 16, 12, 12, 16, 3, 3, {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1}};
  const conv_case dw = {1, 16, 12, 12, 16, 3, 3, {{2, 2}, {1, 1, 1, 1}, {1, 1}, 16}};
  int64_t xs[4] = {1, 16, 12, 12}, flat[2] = {1, 16 * 6 * 6}, ws[2] = {16 * 6 * 6, 10};
  fuse_graph *g = fuse_graph_create(NULL);
  float *wd = random_floats(16 * 6 * 6 * 10, 0.1f);
  fuse_value x = fuse_input(g, "x", 4, xs), h, y;
  h = fuse_relu(g, fuse_add(g, fuse_conv2d(g, x, weight_for(g, &cc), &cc.a), bias_for(g, 16, 1)));
  y = fuse_add(g, fuse_conv2d(g, h, weight_for(g, &cc), &cc.a), bias_for(g, 16, 1));
  y = fuse_relu(g, fuse_add(g, y, x));
  y = fuse_add(g, fuse_conv2d(g, y, weight_for(g, &dw), &dw.a), bias_for(g, 16, 1));
  y = fuse_clip(g, y, 0, 6);
  y = fuse_reshape(g, y, 2, flat);
  y = fuse_add(g, fuse_matmul(g, y, fuse_constant(g, "fc", 2, ws, wd)), bias_for(g, 10, 0));
  fuse_output(g, y);
  free(wd);
  fuse_optimize(g, "dnnl");
  return g;
}

static void check_concurrent(int threads) {
  fuse_graph *g = conc_graph();
  static sbuf desc;
  fuse_plan *p = compile(g, 1, &desc);
  worker w[8];
  pthread_t tid[8];
  size_t in_n = 16 * 12 * 12, out_n = 10;
  int t, started = 0;
  CHECK(p != NULL);
  if (!p) {
    fuse_graph_destroy(g);
    return;
  }
  /* the block's first conv and its output feed oneDNN steps only: kept in oneDNN's layout */
  CHECK_EQ_INT(count_substr(desc.s, "(output in dnnl's layout"), 2);
  for (t = 0; t < threads; t++) { /* each its own input and serial result */
    const float *in[1];
    float *out[1];
    memset(&w[t], 0, sizeof w[t]);
    w[t].p = p;
    w[t].x = random_floats(in_n, 1.0f);
    w[t].want = (float *)calloc(out_n, sizeof(float));
    w[t].y = (float *)calloc(out_n, sizeof(float));
    w[t].in_n = in_n, w[t].out_n = out_n, w[t].runs = CONC_RUNS;
    in[0] = w[t].x;
    out[0] = (float *)(uintptr_t)w[t].want;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
  }
  for (t = 0; t < threads; t++)
    if (pthread_create(&tid[t], NULL, worker_main, &w[t]) == 0) started++;
  CHECK_EQ_INT(started, threads);
  for (t = 0; t < started; t++) pthread_join(tid[t], NULL);
  for (t = 0; t < threads; t++) {
    CHECK_EQ_INT(w[t].failures, 0);
    CHECK_EQ_INT(w[t].mismatches, 0);
    free((void *)(uintptr_t)w[t].x);
    free((void *)(uintptr_t)w[t].want);
    free(w[t].y);
  }
  fuse_plan_destroy(p);
  fuse_graph_destroy(g);
}

TEST(concurrent_two_threads_own_workspaces) { check_concurrent(2); }
TEST(concurrent_six_threads_more_than_handle_sets) { check_concurrent(6); }

int main(int argc, char **argv) {
  self_path = argv[0];
  if (argc > 2 && strcmp(argv[1], "--verbose-child") == 0) {
    int mode = V_OPTIMIZE;
    while (mode < V_BLOCK && strcmp(argv[2], v_modes[mode]) != 0) mode++;
    return verbose_child(mode);
  }
  RUN_MOCK_TESTS();
  RUN(backend_available);
  RUN(conv_bias);
  RUN(conv_bias_relu);
  RUN(conv_relu_no_bias);
  RUN(conv_bias_clip);
  RUN(conv_bias_every_activation);
  RUN(conv_relu6_clip_and_minmax);
  RUN(conv_residual_both_orders);
  RUN(conv_relu_then_residual_own_rule);
  RUN(conv_two_residuals_own_rule);
  RUN(depthwise);
  RUN(grouped);
  RUN(strided_dilated_padded_batch2);
  RUN(resnet_block);
  RUN(kept_layout_chain_block_projection);
  RUN(kept_layout_not_for_outputs_or_declined_readers);
  RUN(matmul_bias_relu);
  RUN(matmul_bias_residual_relu);
  RUN(weights_as_input_fall_back_with_a_note);
  RUN(other_codegen_not_offered);
  RUN(committed_onnx_network);
  RUN(verbose_seed_rule_one_convolution_with_bias_and_relu);
  RUN(verbose_seed_optimize_one_convolution_with_bias_and_relu);
  RUN(verbose_two_convs_no_reorder_between);
  RUN(verbose_resnet_block_reorders_only_at_entry_and_exit);
  RUN(verbose_resnet_block_avx2_padded_blocked_layout);
  RUN(concurrent_two_threads_own_workspaces);
  RUN(concurrent_six_threads_more_than_handle_sets);
  return runner_finish("dnnl");
}

#else /* no oneDNN */

TEST(backend_is_null_without_onednn) { CHECK(fuse_dnnl_backend() == NULL); }

int main(void) {
  printf("dnnl: oneDNN not found by this build (FUSE_DNNL_AVAILABLE 0): routed tests skipped\n");
  RUN_MOCK_TESTS();
  RUN(backend_is_null_without_onednn);
  return runner_finish("dnnl");
}

#endif
