/* test_in_place.c - concat inputs written in place by their producers (src/plan/in_place.c) and
   splits read in place (slice views, plan/compile.c): every
   ISA the CPU has, the scalar twin included, serial and on 3 host threads, bit for bit against
   the reference kernels (reference_kernels = 1), which keep the copies. The data are small
   integers, so every sum is exact in any order and the kernels agree to the bit; the outputs
   are filled with NaN before each run, so a slice nobody wrote shows. Each case also checks
   the plan: which producers write in place, which concat steps are left. */
#include "fuse.h"
#include "runner.h"
#include "host_threads.h"

#include <math.h>
#include <stdlib.h>

static uint32_t rng = 77;
static int irand(int lo, int hi) { /* [lo, hi] */
  rng = rng * 1664525u + 1013904223u;
  return lo + (int)((rng >> 8) % (uint32_t)(hi - lo + 1));
}

#define MAX_IO 4
typedef struct case_data {
  fuse_graph *g;
  int n_in, n_out;
  float *in[MAX_IO];
  fuse_value out[MAX_IO];
} case_data;

static size_t numel_of(const fuse_graph *g, fuse_value v) {
  size_t n = 1;
  int i;
  for (i = 0; i < fuse_value_rank(g, v); i++) n *= (size_t)fuse_value_shape(g, v)[i];
  return n;
}

static fuse_value input(case_data *d, int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t shape[4];
  size_t i, count;
  fuse_value v;
  shape[0] = n, shape[1] = c, shape[2] = h, shape[3] = w;
  v = fuse_input(d->g, NULL, 4, shape);
  count = numel_of(d->g, v);
  d->in[d->n_in] = (float *)malloc(count * sizeof(float));
  for (i = 0; i < count; i++) d->in[d->n_in][i] = (float)irand(-3, 3);
  d->n_in++;
  return v;
}

/* conv2d (k x k, padding k / 2) with integer weights and bias, then relu unless `linear` */
static fuse_value conv(case_data *d, fuse_value x, int64_t K, int k, int linear) {
  float w[64 * 64 * 9], b[64];
  int64_t C = fuse_value_shape(d->g, x)[1], shape[4], bshape[4] = {1, 0, 1, 1};
  fuse_conv2d_attrs a;
  fuse_value y;
  int64_t i;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = k / 2;
  shape[0] = K, shape[1] = C, shape[2] = shape[3] = k;
  for (i = 0; i < K * C * k * k; i++) w[i] = (float)irand(-2, 2);
  for (i = 0; i < K; i++) b[i] = (float)irand(-4, 4);
  bshape[1] = K;
  y = fuse_conv2d(d->g, x, fuse_constant(d->g, NULL, 4, shape, w), &a);
  y = fuse_add(d->g, y, fuse_constant(d->g, NULL, 4, bshape, b));
  return linear ? y : fuse_relu(d->g, y);
}

static void output(case_data *d, fuse_value v) {
  d->out[d->n_out++] = v;
  fuse_output(d->g, v);
}

static void free_case(case_data *d) {
  int i;
  for (i = 0; i < d->n_in; i++) free(d->in[i]);
  fuse_graph_destroy(d->g);
}

static runner_text listing;

static int count_of(const char *text, const char *what) {
  int n = 0;
  for (text = strstr(text, what); text; text = strstr(text + 1, what)) n++;
  return n;
}


/* fuse_compile_options.no_winograd for the runs (-2: every 3x3 stride-1 conv as F(2,3)) */
static int no_winograd;

/* Runs the case's graph on isa (reference: the reference kernels; threads: on host threads);
   the outputs, NaN-filled first, one after another in a new array; the listing in `listing.s`. */
static float *run(const case_data *d, fuse_isa isa, int reference, int threads) {
  fuse_compile_options o;
  fuse_plan *p = NULL;
  float *y, *outs[MAX_IO];
  size_t total = 0, i;
  int k;
  memset(&o, 0, sizeof o);
  o.isa = isa;
  o.reference_kernels = reference;
  o.no_winograd = no_winograd;
  if (threads) o.parallel_for = host_parallel_for, o.num_threads = threads;
  if (fuse_compile(d->g, &o, &p) != FUSE_OK) return NULL;
  for (k = 0; k < d->n_out; k++) total += numel_of(d->g, d->out[k]);
  y = (float *)malloc(total * sizeof(float));
  for (i = 0; i < total; i++) y[i] = NAN;
  for (k = 0, total = 0; k < d->n_out; k++) outs[k] = y + total, total += numel_of(d->g, d->out[k]);
  if (fuse_run(p, (const float *const *)d->in, outs, NULL) != FUSE_OK) free(y), y = NULL;
  runner_text_clear(&listing);
  fuse_plan_write(p, runner_text_write, &listing);
  fuse_plan_destroy(p);
  return y;
}

static int isa_runs(int isa) {
  int cpu = (int)fuse_cpu_isa();
  return isa == FUSE_ISA_SCALAR || isa == cpu || (isa == FUSE_ISA_AVX2 && cpu == FUSE_ISA_AVX512);
}

/* Every ISA, serial and on 3 threads, bit for bit against the reference; each plan has
   `in_place` producers writing in place (-1: any number) and `concats` concat steps left. */
static void check_case(case_data *d, int in_place, int concats, const char *what) {
  float *want, *got;
  size_t total = 0;
  int isa, threads, k;
  CHECK(fuse_graph_status(d->g) == FUSE_OK);
  if (fuse_graph_status(d->g) != FUSE_OK) {
    fprintf(stderr, "    %s: %s\n", what, fuse_graph_error(d->g));
    return;
  }
  CHECK(fuse_optimize(d->g, "fuse") == FUSE_OK);
  for (k = 0; k < d->n_out; k++) total += numel_of(d->g, d->out[k]);
  want = run(d, FUSE_ISA_SCALAR, 1, 0);
  CHECK(want != NULL);
  if (!want) return;
  CHECK_EQ_INT(count_of(listing.s, "written in place into"), 0); /* the oracle keeps its copies */
  for (isa = FUSE_ISA_SCALAR; isa <= FUSE_ISA_NEON; isa++)
    for (threads = 0; threads <= 3; threads += 3) {
      if (!isa_runs(isa)) continue;
      got = run(d, (fuse_isa)isa, 0, threads);
      CHECK(got != NULL);
      if (!got) continue;
      if (memcmp(got, want, total * sizeof(float)) != 0 ||
          (in_place >= 0 && count_of(listing.s, "written in place into") != in_place) ||
          count_of(listing.s, ": concat ->") != concats) {
        size_t i = 0;
        while (i < total && memcmp(got + i, want + i, sizeof(float)) == 0) i++;
        fprintf(stderr, "    %s, isa %d, %d threads: %s (error %.3g, first difference at %d of %d: "
                "%g, want %g); %d written in place (want %d), %d concat steps (want %d)\n%s",
                what, isa, threads, i < total ? "differs" : "same values",
                runner_rel_error(got, want, total), (int)i, (int)total,
                i < total ? got[i] : 0.0, i < total ? want[i] : 0.0,
                count_of(listing.s, "written in place into"), in_place,
                count_of(listing.s, ": concat ->"), concats, listing.s);
        CHECK(0);
      }
      free(got);
    }
  free(want);
}

static const int64_t widths[4] = {4, 7, 13, 20}; /* uneven channel counts */

/* 2-4 conv outputs (1x1 and 3x3, bias, relu) concatenated along channels, read by a 1x1 conv,
   batch 1 and 2: NHWC plans, every input written in place, no concat step left; with
   no_winograd set, each plan's listing must contain `listed` (NULL: anything). */
static void concat_of_convs(const char *label, const char *listed) {
  int batch, n, i;
  for (batch = 1; batch <= 2; batch++)
    for (n = 2; n <= 4; n++) {
      case_data d;
      fuse_value x, parts[4];
      char what[64];
      memset(&d, 0, sizeof d);
      d.g = fuse_graph_create(NULL);
      x = input(&d, batch, 6, 7, 5);
      for (i = 0; i < n; i++) parts[i] = conv(&d, x, widths[i], i % 2 ? 3 : 1, 0);
      output(&d, conv(&d, fuse_concat(d.g, n, parts, 1), 8, 1, 0));
      sprintf(what, "%sbatch %d, %d inputs", label, batch, n);
      check_case(&d, n, 0, what);
      if (listed) CHECK_STR_CONTAINS(listing.s, listed);
      free_case(&d);
    }
}

/* on the NHWC GEMM */
TEST(concat_of_conv_outputs_nhwc) { concat_of_convs("", NULL); }

/* The 3x3 convs on Winograd F(2,3) (its transforms are exact on these small integers): the
   output transform stores each pixel's channels at the concat's row stride. (squeezenet1_1's
   and googlenet's 3x3 convs feed concats, and the cost rule puts them on Winograd.) */
TEST(concat_of_winograd_outputs) {
  no_winograd = -2;
  concat_of_convs("Winograd, ", "winograd F(2,3)");
  no_winograd = 0;
}

/* convs with 2 or 3 outputs run on the reference loops, in NCHW: the concat stays NCHW and each
   conv writes its planes into the concat's, an image's worth of the concat apart */
TEST(concat_of_conv_outputs_nchw) {
  int batch, n, i;
  for (batch = 1; batch <= 2; batch++)
    for (n = 2; n <= 3; n++) {
      case_data d;
      fuse_value x, parts[3];
      char what[64];
      memset(&d, 0, sizeof d);
      d.g = fuse_graph_create(NULL);
      x = input(&d, batch, 3, 6, 5);
      for (i = 0; i < n; i++) parts[i] = conv(&d, x, 2 + i % 2, i % 2 ? 3 : 1, 0);
      output(&d, fuse_sigmoid(d.g, fuse_concat(d.g, n, parts, 1)));
      sprintf(what, "nchw, batch %d, %d inputs", batch, n);
      check_case(&d, n, 0, what);
      free_case(&d);
    }
}

/* an input that is also a graph output, one that appears twice, one read again after the concat
   by another op, a graph input (its NHWC form the convs read too), one with a residual add: each
   stays a copy, the others are written in place (a constant's conversion to NHWC too) */
TEST(concat_inputs_that_stay_copies) {
  int batch;
  for (batch = 1; batch <= 2; batch++) {
    case_data d;
    fuse_value x, a, b, c, e, parts[7];
    int64_t cshape[4] = {0, 2, 6, 6}, i;
    float cdata[2 * 2 * 6 * 6];
    cshape[0] = batch;
    for (i = 0; i < 2 * 2 * 6 * 6; i++) cdata[i] = (float)irand(-3, 3);
    memset(&d, 0, sizeof d);
    d.g = fuse_graph_create(NULL);
    x = input(&d, batch, 5, 6, 6);
    a = conv(&d, x, 4, 1, 0);
    b = conv(&d, x, 7, 3, 0); /* a graph output too */
    c = conv(&d, x, 5, 1, 0); /* twice in the concat */
    e = conv(&d, x, 6, 3, 0); /* read again after the concat */
    parts[0] = a, parts[1] = b, parts[2] = c, parts[3] = c, parts[4] = e;
    parts[5] = x; /* a graph input (in NHWC: its conversion) */
    parts[6] = fuse_constant(d.g, NULL, 4, cshape, cdata); /* its conversion: in place */
    output(&d, conv(&d, fuse_concat(d.g, 7, parts, 1), 4, 1, 0));
    output(&d, b);
    output(&d, fuse_sigmoid(d.g, e));
    check_case(&d, 2, 1, batch == 1 ? "stay copies, batch 1" : "stay copies, batch 2");
    free_case(&d);
  }
  for (batch = 1; batch <= 2; batch++) { /* a residual add: the kernel reads it ldy apart */
    case_data d;
    fuse_value x, a, b, parts[2];
    memset(&d, 0, sizeof d);
    d.g = fuse_graph_create(NULL);
    x = input(&d, batch, 5, 4, 6);
    a = conv(&d, x, 5, 1, 0);
    b = fuse_relu(d.g, fuse_add(d.g, conv(&d, x, 5, 3, 1), x));
    parts[0] = a, parts[1] = b;
    output(&d, conv(&d, fuse_concat(d.g, 2, parts, 1), 4, 1, 0));
    check_case(&d, 1, 1, batch == 1 ? "residual, batch 1" : "residual, batch 2");
    free_case(&d);
  }
}

/* one value in two concats: written into the first, copied from its slice (rows a concat's
   channels apart) into the second */
TEST(value_in_two_concats) {
  int batch;
  for (batch = 1; batch <= 2; batch++) {
    case_data d;
    fuse_value x, a, b, c, p1[2], p2[2];
    memset(&d, 0, sizeof d);
    d.g = fuse_graph_create(NULL);
    x = input(&d, batch, 6, 5, 7);
    a = conv(&d, x, 4, 1, 0);
    b = conv(&d, x, 9, 3, 0);
    c = conv(&d, x, 5, 1, 0);
    p1[0] = a, p1[1] = b;
    p2[0] = b, p2[1] = c;
    output(&d, conv(&d, fuse_concat(d.g, 2, p1, 1), 4, 1, 0));
    output(&d, conv(&d, fuse_concat(d.g, 2, p2, 1), 6, 3, 0));
    check_case(&d, 3, 1, batch == 1 ? "two concats, batch 1" : "two concats, batch 2");
    free_case(&d);
  }
}

/* a conv on the reference loops (2 outputs: NCHW) beside NHWC GEMM convs: its conversion to
   NHWC writes into the concat's slice */
TEST(conversion_written_in_place) {
  int batch;
  for (batch = 1; batch <= 2; batch++) {
    case_data d;
    fuse_value x, parts[3];
    memset(&d, 0, sizeof d);
    d.g = fuse_graph_create(NULL);
    x = input(&d, batch, 4, 6, 5);
    parts[0] = conv(&d, x, 6, 3, 0);
    parts[1] = conv(&d, x, 2, 1, 0);
    parts[2] = conv(&d, x, 5, 1, 0);
    output(&d, conv(&d, fuse_concat(d.g, 3, parts, 1), 4, 3, 0));
    check_case(&d, 3, 0, batch == 1 ? "conversion, batch 1" : "conversion, batch 2");
    CHECK_STR_CONTAINS(listing.s, "to_nhwc -> %10 (written in place into");
    free_case(&d);
  }
}

/* a split along channels of one image is a view of its operand's bytes: the convs read their
   pieces in place (through their conversions to NHWC) and no slice step is left; of two images
   each piece is two runs, and stays a step */
TEST(split_into_convs) {
  static const int64_t sizes[3] = {2, 3, 4};
  int batch;
  for (batch = 1; batch <= 2; batch++) {
    case_data d;
    fuse_value x, parts[3];
    int i;
    memset(&d, 0, sizeof d);
    d.g = fuse_graph_create(NULL);
    x = fuse_relu(d.g, input(&d, batch, 9, 6, 5));
    CHECK(fuse_split(d.g, x, 1, 3, sizes, parts) == FUSE_OK);
    for (i = 0; i < 3; i++) output(&d, conv(&d, parts[i], 5, i == 1 ? 3 : 1, 0));
    check_case(&d, 0, 0, batch == 1 ? "split, batch 1" : "split, batch 2");
    CHECK_EQ_INT(count_of(listing.s, ": slice ->"), batch == 1 ? 0 : 3);
    free_case(&d);
  }
}

/* A dense block as densenet writes it: each layer concats the block's input and every feature
   so far, then a per-channel multiply-add and relu (batch norm) before its convs; the last
   concat holds them all. Each smaller concat is the first channels of the last (plan/in_place.c,
   nested concats): the block's input (a max pool on NHWC) and each feature are written once,
   into the last concat, and no concat step is left; the chains read the smaller concats as
   strided slices of it. */
TEST(dense_block) {
  int batch, layers;
  for (batch = 1; batch <= 2; batch++)
    for (layers = 1; layers <= 3; layers++) {
      case_data d;
      fuse_value x, feats[4];
      fuse_pool2d_attrs pa;
      char what[64];
      int k, n = 1;
      memset(&d, 0, sizeof d);
      memset(&pa, 0, sizeof pa);
      d.g = fuse_graph_create(NULL);
      x = input(&d, batch, 3, 6, 5);
      pa.kernel[0] = pa.kernel[1] = 3, pa.strides[0] = pa.strides[1] = 1;
      pa.padding[0] = pa.padding[1] = pa.padding[2] = pa.padding[3] = 1;
      pa.dilation[0] = pa.dilation[1] = 1;
      feats[0] = fuse_max_pool2d(d.g, conv(&d, x, 6, 1, 0), &pa);
      for (k = 0; k <= layers; k++) {
        fuse_value cat = fuse_concat(d.g, n, feats, 1), scale, shift;
        int64_t C = fuse_value_shape(d.g, cat)[1], cshape[4] = {1, 0, 1, 1}, c;
        float sv[64], tv[64];
        if (k == layers) { /* the block's output: the last concat, read by a 1x1 conv */
          output(&d, conv(&d, cat, 5, 1, 0));
          break;
        }
        cshape[1] = C;
        for (c = 0; c < C; c++) sv[c] = (float)irand(-1, 2), tv[c] = (float)irand(-2, 2);
        scale = fuse_constant(d.g, NULL, 4, cshape, sv);
        shift = fuse_constant(d.g, NULL, 4, cshape, tv);
        cat = fuse_relu(d.g, fuse_add(d.g, fuse_mul(d.g, cat, scale), shift));
        feats[n++] = conv(&d, conv(&d, cat, 4, 1, 0), 3, 3, 1);
      }
      sprintf(what, "dense block, batch %d, %d layers", batch, layers);
      check_case(&d, layers + 1, 0, what);
      free_case(&d);
    }
}

/* ShuffleNet's channel shuffle: [N, C, H, W] as [N, g, C/g, H, W], its two group axes swapped,
   back to [N, C, H, W] */
static fuse_value shuffle(fuse_graph *g, fuse_value x, int64_t groups) {
  static const int perm[5] = {0, 2, 1, 3, 4};
  const int64_t *s = fuse_value_shape(g, x);
  int64_t split[5], back[4];
  split[0] = s[0], split[1] = groups, split[2] = s[1] / groups, split[3] = s[2], split[4] = s[3];
  memcpy(back, s, sizeof back);
  return fuse_reshape(g, fuse_transpose(g, fuse_reshape(g, x, 5, split), perm), 4, back);
}

/* ShuffleNet v2 units (split in halves, the second through two 1x1 convs, concat, channel
   shuffle) on NHWC, batch 1: each half of a shuffle is gathered from the concat's NHWC bytes
   (plan/in_place.c: no conversion to NCHW, no transpose), the first half written in place into the
   next unit's concat; the last shuffle, read whole by a 3x3 conv and a depthwise one (as
   ShuffleNet's stride-2 units read it), is gathered once for both, the depthwise conv moved to
   NHWC. Two groups (the zip) and four (the transpose path); of two images the shuffles stay
   transposes. Bit for bit against the reference on every ISA. */
TEST(channel_shuffle) {
  int batch, groups, units;
  for (batch = 1; batch <= 2; batch++)
    for (groups = 2; groups <= 4; groups += 2)
      for (units = 1; units <= 3; units++) {
        case_data d;
        fuse_value x, halves[2], parts[2], dw;
        int64_t sizes[2] = {8, 8}, dwshape[4] = {16, 1, 3, 3};
        float dww[16 * 9];
        fuse_conv2d_attrs a;
        char what[80];
        int u, i, gathered, transposes;
        memset(&d, 0, sizeof d);
        d.g = fuse_graph_create(NULL);
        x = conv(&d, input(&d, batch, 5, 6, 7), 16, 1, 0);
        for (u = 0; u < units; u++) {
          CHECK(fuse_split(d.g, x, 1, 2, sizes, halves) == FUSE_OK);
          parts[0] = halves[0];
          parts[1] = conv(&d, conv(&d, halves[1], 8, 1, 0), 8, 1, 0);
          x = shuffle(d.g, fuse_concat(d.g, 2, parts, 1), groups);
        }
        memset(&a, 0, sizeof a);
        a.groups = 16;
        a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
        for (i = 0; i < 16 * 9; i++) dww[i] = (float)irand(-2, 2);
        dw = fuse_conv2d(d.g, x, fuse_constant(d.g, NULL, 4, dwshape, dww), &a);
        output(&d, conv(&d, x, 6, 3, 0));
        output(&d, conv(&d, dw, 5, 1, 0));
        sprintf(what, "channel shuffle, batch %d, %d groups, %d units", batch, groups, units);
        check_case(&d, -1, 0, what);
        gathered = count_of(listing.s, "gathered from");
        transposes = count_of(listing.s, ": transpose ->");
        if (batch == 1) { /* two halves a unit but the last, which is gathered once, for the
                             3x3 conv and the depthwise one (on NHWC, no transpose left) */
          CHECK_EQ_INT(gathered, 2 * (units - 1) + 1);
          CHECK_EQ_INT(transposes, 0);
          CHECK_EQ_INT(count_of(listing.s, "to_nchw ->"), 2); /* the two outputs */
        } else {
          CHECK_EQ_INT(gathered, 0);
          CHECK_EQ_INT(transposes, units);
        }
        free_case(&d);
      }
}

/* A shuffle whose transpose is also a graph output (5-D): the user's buffer has no views, so
   its halves are slice steps and nothing is gathered; the transpose stays */
TEST(channel_shuffle_also_an_output) {
  static const int perm[5] = {0, 2, 1, 3, 4};
  case_data d;
  fuse_value x, halves[2], parts[2], t;
  int64_t sizes[2] = {6, 6}, split[5] = {1, 2, 6, 5, 4}, back[4] = {1, 12, 5, 4};
  memset(&d, 0, sizeof d);
  d.g = fuse_graph_create(NULL);
  x = conv(&d, input(&d, 1, 3, 5, 4), 12, 1, 0);
  CHECK(fuse_split(d.g, x, 1, 2, sizes, halves) == FUSE_OK);
  parts[0] = halves[0];
  parts[1] = conv(&d, halves[1], 6, 1, 0);
  t = fuse_transpose(d.g, fuse_reshape(d.g, fuse_concat(d.g, 2, parts, 1), 5, split), perm);
  output(&d, t);
  x = fuse_reshape(d.g, t, 4, back);
  CHECK(fuse_split(d.g, x, 1, 2, sizes, halves) == FUSE_OK);
  output(&d, conv(&d, halves[1], 5, 1, 0));
  output(&d, halves[0]);
  check_case(&d, -1, 0, "channel shuffle whose transpose is an output");
  CHECK_EQ_INT(count_of(listing.s, ": transpose ->"), 1);
  CHECK_EQ_INT(count_of(listing.s, "gathered from"), 0);
  free_case(&d);
}

/* A mean over H and W of an NHWC conv output (x.mean([2, 3]), as shufflenet and mnasnet end)
   runs as the global average pool on NHWC, no conversion to NCHW before it; kept dims or not,
   axes given either way, batch 1 and 2 (4 x 4 pixels: every mean exact) */
TEST(mean_over_pixels_reads_nhwc) {
  static const int axes[2][2] = {{2, 3}, {-1, -2}};
  int batch, keep;
  for (batch = 1; batch <= 2; batch++)
    for (keep = 0; keep <= 1; keep++) {
      case_data d;
      char what[64];
      memset(&d, 0, sizeof d);
      d.g = fuse_graph_create(NULL);
      output(&d, fuse_reduce(d.g, conv(&d, input(&d, batch, 5, 4, 4), 24, 3, 0), FUSE_REDUCE_MEAN,
                             2, axes[keep], keep));
      sprintf(what, "mean over pixels, batch %d, keepdims %d", batch, keep);
      check_case(&d, 0, 0, what);
      CHECK_EQ_INT(count_of(listing.s, "to_nchw"), 0);
      CHECK_EQ_INT(count_of(listing.s, ": global_avg_pool2d ->"), 1);
      free_case(&d);
    }
}

int main(void) {
  RUN(concat_of_conv_outputs_nhwc);
  RUN(concat_of_winograd_outputs);
  RUN(concat_of_conv_outputs_nchw);
  RUN(concat_inputs_that_stay_copies);
  RUN(value_in_two_concats);
  RUN(conversion_written_in_place);
  RUN(split_into_convs);
  RUN(dense_block);
  RUN(channel_shuffle);
  RUN(channel_shuffle_also_an_output);
  RUN(mean_over_pixels_reads_nhwc);
  return runner_finish("in_place");
}

