/* test_gates.c - squeeze-excite gates run as the prologue of the conv that reads them: every
   ISA the CPU has and the scalar twins, serial and on 3 host threads, batch 1 and 2, against
   the op-by-op reference kernels (reference_kernels = 1); the plan listing and fuse_explain
   say what fused, and a gate with another reader is left alone. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"
#include "host_threads.h"

#include <stdlib.h>

static uint32_t rng = 4242;
static float urand(void) { /* [-1, 1) */
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}


static size_t numel_of(const fuse_graph *g, fuse_value v) {
  size_t n = 1;
  int i;
  for (i = 0; i < fuse_value_rank(g, v); i++) n *= (size_t)fuse_value_shape(g, v)[i];
  return n;
}

static fuse_value constant(fuse_graph *g, int rank, const int64_t *shape, float scale) {
  size_t n = 1, i;
  float *buf;
  fuse_value v;
  int k;
  for (k = 0; k < rank; k++) n *= (size_t)shape[k];
  buf = (float *)malloc(n * sizeof(float));
  for (i = 0; i < n; i++) buf[i] = scale * urand();
  v = fuse_constant(g, NULL, rank, shape, buf);
  free(buf);
  return v;
}

static runner_text listing;

/* g's one output for input x on isa (reference: the reference kernels), on 3 host threads or
   serial; the plan's listing in `listing.s`. */
static float *run(fuse_graph *g, const float *x, fuse_isa isa, int reference, int threaded) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  float *y, *outs[2] = {NULL, NULL};
  const float *ins[1];
  int k;
  memset(&o, 0, sizeof o);
  o.isa = isa;
  o.reference_kernels = reference;
  o.num_threads = threaded ? 3 : 1;
  if (threaded) o.parallel_for = host_parallel_for;
  if (fuse_compile(g, &o, &p) != FUSE_OK) return NULL;
  for (k = 0; k < 2 && k < fuse_graph_output_count(g); k++) /* the tests have 1 or 2 */
    outs[k] = (float *)calloc(numel_of(g, fuse_graph_output(g, k)), sizeof(float));
  y = outs[0];
  ins[0] = x;
  if (fuse_run(p, ins, outs, NULL) != FUSE_OK) {
    free(y);
    y = NULL;
  }
  free(outs[1]);
  runner_text_clear(&listing);
  fuse_plan_write(p, runner_text_write, &listing);
  fuse_plan_destroy(p);
  return y;
}

static int isa_runs(int isa) {
  int cpu = (int)fuse_cpu_isa();
  return isa == FUSE_ISA_SCALAR || isa == cpu || (isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512);
}

/* Every ISA, serial and threaded, against the reference: normwise error <= tol, and each
   plan's listing containing `listed` (NULL: anything) or, with absent, not containing it. */
static void check_all(fuse_graph *g, double tol, const char *listed, int absent, const char *what) {
  fuse_value xv = fuse_graph_input(g, 0);
  size_t nx = numel_of(g, xv), ny, i;
  float *x = (float *)malloc(nx * sizeof(float)), *want;
  int isa, threaded;
  CHECK(fuse_graph_status(g) == FUSE_OK);
  if (fuse_graph_status(g) != FUSE_OK) {
    fprintf(stderr, "    %s: %s\n", what, fuse_graph_error(g));
    free(x);
    return;
  }
  ny = numel_of(g, fuse_graph_output(g, 0));
  for (i = 0; i < nx; i++) x[i] = urand();
  want = run(g, x, FUSE_ISA_SCALAR, 1, 0);
  CHECK(want != NULL);
  for (isa = FUSE_ISA_SCALAR; want && isa <= FUSE_ISA_NEON; isa++)
    for (threaded = 0; threaded < 2 && isa_runs(isa); threaded++) {
      float *got = run(g, x, (fuse_isa)isa, 0, threaded);
      double e;
      CHECK(got != NULL);
      if (!got) continue;
      e = runner_rel_error(got, want, ny);
      if (!(e <= tol)) {
        fprintf(stderr, "    %s, isa %d, threaded %d: error %.3g > %g\n%s", what, isa, threaded,
                e, tol, listing.s);
        CHECK(e <= tol);
      }
      if (listed && (strstr(listing.s, listed) != NULL) == absent) {
        fprintf(stderr, "    %s, isa %d: the listing %s \"%s\"\n%s", what, isa,
                absent ? "has" : "lacks", listed, listing.s);
        CHECK(0);
      }
      free(got);
    }
  free(want);
  free(x);
}

static runner_text explained;
static const char *explain(const fuse_graph *g) {
  runner_text_clear(&explained);
  CHECK(fuse_explain_write(g, runner_text_write, &explained) == FUSE_OK);
  return explained.s;
}

/* ------------------------------------------------------------------- gates -- */

/* x [n, c, hw, hw] -> conv 3x3 + bias + silu = y; gate s = sigmoid(fc2(relu(fc1(pool(y)))));
   y * s -> conv 1x1 to k channels + bias (kernel kk x kk). other: y * s is also an output
   (a second reader). Returns the graph after fuse_optimize. */
static fuse_graph *se_block(int n, int c, int hw, int k, int kk, int other) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs[4], w1[4], fc1[4] = {4, 0, 1, 1}, fc2[4] = {0, 4, 1, 1}, w2[4], b[4] = {1, 0, 1, 1};
  fuse_conv2d_attrs a3, a1, a0;
  fuse_value x, y, s, gy, out;
  xs[0] = n, xs[1] = c, xs[2] = xs[3] = hw;
  w1[0] = c, w1[1] = c, w1[2] = w1[3] = 3;
  fc1[1] = c, fc2[0] = c;
  w2[0] = k, w2[1] = c, w2[2] = w2[3] = kk;
  memset(&a3, 0, sizeof a3);
  a3.padding[0] = a3.padding[1] = a3.padding[2] = a3.padding[3] = 1;
  memset(&a1, 0, sizeof a1);
  memset(&a0, 0, sizeof a0);
  a1.padding[0] = a1.padding[1] = a1.padding[2] = a1.padding[3] = kk / 2;
  x = fuse_input(g, "x", 4, xs);
  b[1] = c;
  y = fuse_conv2d(g, x, constant(g, 4, w1, 0.3f), &a3);
  y = fuse_add(g, y, constant(g, 4, b, 0.1f));
  y = fuse_mul(g, y, fuse_sigmoid(g, y));
  s = fuse_global_avg_pool2d(g, y);
  s = fuse_relu(g, fuse_conv2d(g, s, constant(g, 4, fc1, 0.5f), &a0));
  s = fuse_sigmoid(g, fuse_conv2d(g, s, constant(g, 4, fc2, 0.5f), &a0));
  gy = fuse_mul(g, y, s);
  b[1] = k;
  out = fuse_conv2d(g, gy, constant(g, 4, w2, 0.3f), &a1);
  out = fuse_add(g, out, constant(g, 4, b, 0.1f));
  fuse_output(g, out);
  if (other) fuse_output(g, gy);
  fuse_optimize(g, "fuse");
  return g;
}

/* the gate as the 1x1 conv's prologue, batch 1 and 2 (one gate per image); a 3x3 conv too */
TEST(gate_is_a_prologue) {
  int n, kk;
  for (n = 1; n <= 2; n++)
    for (kk = 1; kk <= 3; kk += 2) {
      fuse_graph *g = se_block(n, 24, 9, 8, kk, 0);
      char what[64];
      snprintf(what, sizeof what, "se block batch %d, %dx%d", n, kk, kk);
      /* 1e-5: the gate scales the weights, not x (the products round differently) */
      check_all(g, 1e-5, "(prologue: input times the gate", 0, what);
      CHECK_STR_CONTAINS(explain(g), "prologue: input times the gate");
      CHECK_STR_CONTAINS(explained.s, "0 standalone");
      fuse_graph_destroy(g);
    }
}

/* a gated tensor with another reader (here a graph output) stays a multiply of its own */
TEST(gate_with_other_readers_not_fused) {
  fuse_graph *g = se_block(1, 24, 9, 8, 1, 1);
  check_all(g, 1e-5, "prologue", 1, "gate read twice");
  CHECK_STR_CONTAINS(explain(g), "a squeeze-excite gate, not a conv2d's prologue: the gated "
                                 "tensor");
  CHECK_STR_CONTAINS(explained.s, "is a graph output");
  fuse_graph_destroy(g);
}

/* more output channels than pixels: scaling the weights would cost more than the multiply */
TEST(gate_on_small_images_not_fused) {
  fuse_graph *g = se_block(2, 24, 5, 32, 1, 0);
  check_all(g, 1e-5, "prologue", 1, "gate over 25 pixels, 32 output channels");
  CHECK_STR_CONTAINS(explain(g), "costs more than the multiply over 25 pixels");
  fuse_graph_destroy(g);
}

int main(void) {
  RUN(gate_is_a_prologue);
  RUN(gate_with_other_readers_not_fused);
  RUN(gate_on_small_images_not_fused);
  return runner_finish("gates");
}
