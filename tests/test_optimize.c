/* test_optimize.c - what follows the epilogue analyzer (test_epilogue.c):
   2. Once versus per step: an epilogue runs once on the finished sum, not on every partial sum
      (TVM's fuse_reduction_epilogue clamps each step, seed 002 - a bug we do not copy).
   3. fuse_fold_batch_norm: when it folds (numbers unchanged) and when it must not.
   4. fuse_optimize "fuse" / "dnnl": one op per conv / matmul chain, composite names, numbers.
   5. Fused execution: fuse_plan_step_count / fuse_plan_write.

   Numbers: every optimized graph is compared with the same graph before optimization, which
   runs op by op. Tolerance TOL = 1e-5, normwise relative error. Folding a batch norm
   reassociates (W * s) . x + b versus (W . x - mean) * s + bias, which stays well inside 1e-5
   for these sizes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUSE_IMPLEMENTATION
#include "../fuse.h"
#include "runner.h"
#include "epilogue_helpers.h"

/* ================================================= 2. once, not per step == */

/* Why this matters. A reduction computes acc = sum_k p_k. TVM's fuse_reduction_epilogue
   (seed 002) rewrites the reduction block so that the clamp is applied to the accumulator on
   EVERY step of the sum (init: clamp(0); update: acc = clamp(acc + p_k)). That is not the
   same function: with the products -1 and then +2, the true result is relu(-1 + 2) = 1, but
   per-step clamping gives relu(relu(0 - 1) + 2) = relu(0 + 2) = 2. A clamp is not linear, so
   it may only run once, on the finished sum - which is what DESIGN.md says fuse.h does.
   The cases below are chosen so that the two answers differ; the fused graph (after
   fuse_optimize, one composite, and in the fused plan one step) must give the true one
   exactly (small integers and halves: float sums are exact). */

/* variant: 0 conv 1x1 + relu, 1 matmul K=2 + relu, 2 conv 1x1 + clip(0, 1.5),
   3 matmul + min(max(t, -0.5), 1) with products +3 then -2.5 */
static fuse_graph *build_once(int variant, fuse_value *root) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x, w, t;
  if (variant == 0 || variant == 2) {
    int64_t xs[4] = {1, 2, 1, 1}, ws[4] = {1, 2, 1, 1};
    const float wd[2] = {-1, 2};
    x = inp(g, "x", 4, xs);
    w = cst_vals(g, 4, ws, wd);
    t = fuse_conv2d(g, x, w, NULL);
  } else {
    int64_t as[2] = {1, 2}, ws[2] = {2, 1};
    const float wd1[2] = {-1, 2}, wd3[2] = {3, -2.5f};
    x = inp(g, "a", 2, as);
    w = cst_vals(g, 2, ws, variant == 1 ? wd1 : wd3);
    t = fuse_matmul(g, x, w);
  }
  if (variant < 2) *root = fuse_relu(g, t);
  else if (variant == 2) *root = fuse_clip(g, t, 0, 1.5f);
  else *root = fuse_minimum(g, fuse_maximum(g, t, fuse_scalar(g, -0.5f)), fuse_scalar(g, 1));
  fuse_output(g, *root);
  return g;
}

TEST(epilogue_runs_once_not_per_step) {
  /* x = (1, 1): the products are w0 * 1, w1 * 1, summed in that order */
  static const float ones[2] = {1, 1};
  static const float want_once[4] = {1, 1, 1, 0.5f};    /* clamp(sum) */
  static const float per_step[4] = {2, 2, 1.5f, -0.5f}; /* what per-step clamping would give */
  const float *in[1];
  int v;
  in[0] = ones;
  for (v = 0; v < 4; v++) {
    fuse_value root;
    fuse_graph *g = build_once(v, &root);
    fuse_epilogue e;
    outs o;
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK(want_once[v] != per_step[v]);
    CHECK(eval(g, in, &o)); /* op by op */
    CHECK(o.n == 1 && o.d[0][0] == want_once[v]);
    outs_free(&o);
    CHECK_EQ_INT(fuse_optimize(g, v % 2 ? "dnnl" : "fuse"), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_op_count(g), 1);
    CHECK(fuse_value_composite(g, root) >= 0);
    CHECK_EQ_INT(fuse_analyze_epilogue(g, root, &e), FUSE_OK);
    CHECK_EQ_INT(e.num_post, 1);
    CHECK(eval(g, in, &o)); /* fused */
    CHECK(o.n == 1);
    if (o.n == 1) {
      if (o.d[0][0] != want_once[v])
        fprintf(stderr, "    variant %d: fused result %g, want %g (per-step clamping: %g)\n", v,
                (double)o.d[0][0], (double)want_once[v], (double)per_step[v]);
      CHECK(o.d[0][0] == want_once[v]);
    }
    outs_free(&o);
    {
      fuse_plan *p = NULL;
      sbuf b;
      b.len = 0;
      b.s[0] = 0;
      CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
      CHECK_EQ_INT(fuse_plan_step_count(p), 1); /* one fused step */
      CHECK_EQ_INT(fuse_plan_write(p, sbuf_write, &b), FUSE_OK);
      CHECK_STR_CONTAINS(b.s, "clamp[");
      fuse_plan_destroy(p);
    }
    fuse_graph_destroy(g);
  }
}

/* Bias is added once too (not once per product): conv 1x1 with 3 input channels + bias 10. */
TEST(bias_added_once) {
  int64_t xs[4] = {1, 3, 1, 1}, ws[4] = {1, 3, 1, 1}, bs[4] = {1, 1, 1, 1};
  const float wd[3] = {1, 2, 3}, bd[1] = {10}, xd[3] = {1, 1, 1};
  const float *in[1];
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value y;
  outs o;
  in[0] = xd;
  y = fuse_clip(g, fuse_add(g, fuse_conv2d(g, inp(g, "x", 4, xs), cst_vals(g, 4, ws, wd), NULL),
                            cst_vals(g, 4, bs, bd)),
                -100, 100);
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  CHECK(eval(g, in, &o));
  CHECK(o.n == 1 && o.d[0][0] == 16);
  outs_free(&o);
  fuse_graph_destroy(g);
}

/* ================================================ 3. fold batch norm == */

/* conv2d(x [N, C, 6, 5], w [K, C/groups, 3, 3]) -> batch_norm(const scale, bias, mean, var).
   kind: 0 folds; 1 the conv is also used by relu (a second output); 2 the conv is a graph output;
   3 the weight is a graph input; 4 mean is a graph input; 5 bn after add(conv, b);
   6 bn directly on the input x (no conv); 7 folds, groups = 2, batch 2, named bn;
   8 the weight is shared by a second conv that has no bn (folds; the other conv must keep the
   old weight); 9 scale is an op's result (relu of a constant), not a constant. */
typedef struct bn_ids {
  fuse_value conv, bn;
} bn_ids;

static fuse_graph *build_bn(int kind, bn_ids *ids) {
  fuse_graph *g = fuse_graph_create(NULL);
  int N = kind == 7 ? 2 : 1, K = 6, C = kind == 6 ? K : 4, groups = kind == 7 ? 2 : 1;
  int64_t xs[4], ws[4], ks[1];
  fuse_conv2d_attrs a = PAD1;
  fuse_value x, w, conv, scale, bias, mean, var, bn;
  float *vd;
  int i;
  xs[0] = N, xs[1] = C, xs[2] = 6, xs[3] = 5;
  ws[0] = K, ws[1] = C / groups, ws[2] = 3, ws[3] = 3;
  ks[0] = K;
  a.groups = groups;
  x = inp(g, "x", 4, xs);
  w = kind == 3 ? inp(g, "w", 4, ws) : cst(g, 4, ws, 41);
  scale = cst(g, 1, ks, 42);
  if (kind == 9) scale = fuse_relu(g, scale);
  bias = cst(g, 1, ks, 43);
  mean = kind == 4 ? inp(g, "mean", 1, ks) : cst(g, 1, ks, 44);
  vd = frandom((size_t)K, 45);
  for (i = 0; i < K; i++) vd[i] = vd[i] * vd[i] + 0.05f; /* positive variances */
  var = cst_vals(g, 1, ks, vd);
  free(vd);
  conv = kind == 6 ? x : fuse_conv2d(g, x, w, &a);
  if (kind == 5) {
    int64_t k1111[4] = {1, K, 1, 1};
    conv = fuse_add(g, conv, cst(g, 4, k1111, 46));
  }
  bn = fuse_batch_norm(g, conv, scale, bias, mean, var, 1e-5f);
  if (kind == 7) fuse_value_set_name(g, bn, "bn1");
  fuse_output(g, bn);
  if (kind == 1) fuse_output(g, fuse_relu(g, conv));
  if (kind == 2) fuse_output(g, conv);
  if (kind == 8) fuse_output(g, fuse_conv2d(g, x, w, &a));
  ids->conv = conv;
  ids->bn = bn;
  return g;
}

TEST(fold_batch_norm_folds_and_matches) {
  static const int kinds[3] = {0, 7, 8};
  int i;
  for (i = 0; i < 3; i++) {
    bn_ids ids;
    fuse_graph *g = build_bn(kinds[i], &ids);
    int rank, ops;
    int64_t shape[4];
    outs ref, got;
    fuse_epilogue e;
    sbuf b;
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    rank = fuse_value_rank(g, ids.bn);
    memcpy(shape, fuse_value_shape(g, ids.bn), sizeof shape);
    ops = fuse_graph_op_count(g);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_fold_batch_norm(g), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK(strstr(graph_text(g, &b), "batch_norm") == NULL);
    CHECK_EQ_INT(fuse_graph_op_count(g), ops); /* the batch norm became the bias add */
    /* the batch norm's id is the folded result, same shape, still the output */
    CHECK_EQ_INT(fuse_graph_output(g, 0), ids.bn);
    CHECK_EQ_INT(fuse_value_rank(g, ids.bn), rank);
    CHECK(fuse_value_shape(g, ids.bn) && memcmp(fuse_value_shape(g, ids.bn), shape, sizeof shape) == 0);
    if (kinds[i] == 7) {
      CHECK_EQ_INT(fuse_graph_find(g, "bn1"), ids.bn);
    }
    /* now an epilogue: conv + per-channel bias [1,K,1,1] */
    CHECK_EQ_INT(fuse_analyze_epilogue(g, ids.bn, &e), FUSE_OK);
    CHECK_EQ_INT(e.reduction, ids.conv);
    CHECK(e.bias != FUSE_NONE);
    if (e.bias != FUSE_NONE) {
      int64_t want_b[4] = {1, 6, 1, 1};
      CHECK_EQ_INT(fuse_value_rank(g, e.bias), 4);
      CHECK(memcmp(fuse_value_shape(g, e.bias), want_b, sizeof want_b) == 0);
    }
    CHECK_EQ_INT(e.num_post, 0);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "fold_batch_norm"));
    outs_free(&got);
    /* folding again changes nothing */
    CHECK_EQ_INT(fuse_fold_batch_norm(g), FUSE_OK);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "fold_batch_norm twice"));
    outs_free(&got);
    outs_free(&ref);
    fuse_graph_destroy(g);
  }
}

TEST(fold_batch_norm_refuses) {
  static const int kinds[7] = {1, 2, 3, 4, 5, 6, 9};
  int i;
  for (i = 0; i < 7; i++) {
    bn_ids ids;
    fuse_graph *g = build_bn(kinds[i], &ids);
    outs ref, got;
    sbuf b;
    int ops;
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    ops = fuse_graph_op_count(g);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_fold_batch_norm(g), FUSE_OK);
    if (!strstr(graph_text(g, &b), "batch_norm"))
      fprintf(stderr, "    kind %d folded but must not:\n%s", kinds[i], b.s);
    CHECK(strstr(b.s, "batch_norm") != NULL);
    CHECK_EQ_INT(fuse_graph_op_count(g), ops);
    CHECK_EQ_INT(fuse_graph_output(g, 0), ids.bn);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "not folded"));
    outs_free(&got);
    /* fuse_optimize does not fold it either, and the numbers stay */
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK(strstr(graph_text(g, &b), "batch_norm") != NULL);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "not folded, optimized"));
    outs_free(&got);
    outs_free(&ref);
    fuse_graph_destroy(g);
  }
}

/* =========================================================== 4. fuse_optimize == */

static int composite_named(const fuse_graph *g, fuse_value v, const char *name,
                           fuse_composite_info *info) {
  int c = fuse_value_composite(g, v);
  if (c < 0 || fuse_composite_get(g, c, info) != FUSE_OK) {
    fprintf(stderr, "    value %d is in no composite (want %s)\n", (int)v, name);
    return 0;
  }
  if (strcmp(info->name, name) != 0) {
    fprintf(stderr, "    value %d is in composite \"%s\", want \"%s\"\n", (int)v, info->name, name);
    return 0;
  }
  return 1;
}

/* The seed chain (seeds 000 / 001): relu(add(conv2d(x, w), reshape(b, [1, K, 1, 1]))). */
static fuse_graph *build_seed(fuse_value *conv_out, fuse_value *root) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t k[1] = {8}, k1111[4] = {1, 8, 1, 1};
  fuse_value conv = conv_xw(g, 3, 8, 7, 9, NULL);
  fuse_value b = fuse_constant(g, "bias", 1, k, NULL);
  float *bd = frandom(8, 50);
  fuse_graph_set_constant(g, "bias", bd, 8);
  free(bd);
  *root = fuse_relu(g, fuse_add(g, conv, fuse_reshape(g, b, 4, k1111)));
  *conv_out = conv;
  fuse_output(g, *root);
  return g;
}

TEST(optimize_seed_chain) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  int i;
  for (i = 0; i < 2; i++) {
    fuse_value conv, root;
    fuse_graph *g = build_seed(&conv, &root);
    fuse_composite_info info;
    char name[64];
    outs ref, got;
    sbuf b;
    CHECK_EQ_INT(fuse_graph_op_count(g), 4);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_op_count(g), 1);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    sprintf(name, "%s.conv2d_bias_relu", cgs[i]);
    CHECK(composite_named(g, root, name, &info));
    CHECK(info.codegen && strcmp(info.codegen, cgs[i]) == 0);
    CHECK_EQ_INT(info.region, 0);
    CHECK_EQ_INT(info.root, root);
    CHECK(info.has_epilogue);
    CHECK_EQ_INT(info.epilogue.reduction, conv);
    CHECK(info.epilogue.bias != FUSE_NONE);
    CHECK_EQ_INT(fuse_value_composite(g, conv), fuse_value_composite(g, root));
    CHECK_STR_CONTAINS(graph_text(g, &b), name);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, name));
    outs_free(&got);
    outs_free(&ref);
    fuse_graph_destroy(g);
  }
}

/* conv2d -> batch_norm -> relu: folded, then one composite. */
TEST(optimize_conv_bn_relu) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  int i;
  for (i = 0; i < 2; i++) {
    bn_ids ids;
    fuse_graph *g;
    fuse_composite_info info;
    fuse_value y;
    char name[64];
    outs ref, got;
    {
      int64_t xs[4] = {1, 4, 6, 5}, ws[4] = {6, 4, 3, 3}, ks[1] = {6};
      float *vd = frandom(6, 45);
      int k;
      fuse_value x, w, bn;
      g = fuse_graph_create(NULL);
      x = inp(g, "x", 4, xs);
      w = cst(g, 4, ws, 41);
      for (k = 0; k < 6; k++) vd[k] = vd[k] * vd[k] + 0.05f;
      ids.conv = fuse_conv2d(g, x, w, &PAD1);
      bn = fuse_batch_norm(g, ids.conv, cst(g, 1, ks, 42), cst(g, 1, ks, 43), cst(g, 1, ks, 44),
                           cst_vals(g, 1, ks, vd), 1e-5f);
      free(vd);
      y = fuse_relu(g, bn);
      fuse_output(g, y);
    }
    CHECK_EQ_INT(fuse_graph_op_count(g), 3);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_op_count(g), 1);
    sprintf(name, "%s.conv2d_bias_relu", cgs[i]);
    CHECK(composite_named(g, y, name, &info));
    CHECK(info.has_epilogue);
    CHECK_EQ_INT(info.epilogue.reduction, ids.conv);
    CHECK(info.epilogue.bias != FUSE_NONE);
    CHECK_EQ_INT(info.epilogue.num_post, 1);
    CHECK(info.epilogue.post[0].kind == FUSE_POST_CLAMP && info.epilogue.post[0].lo == 0 &&
          info.epilogue.post[0].hi == INF);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, name));
    outs_free(&got);
    outs_free(&ref);
    fuse_graph_destroy(g);
  }
}

/* The same chain with the weight given as reshape(const [K*C*9], [K, C, 3, 3]) (as importers
   often write it): fuse_optimize folds reshapes of constants, so the weight is a constant and
   the batch norm must fold too; afterwards the chain is ONE op (spec: "Afterwards each
   conv2d/matmul chain is ONE op"). */
TEST(optimize_conv_bn_relu_reshaped_weight) {
  int64_t xs[4] = {1, 4, 6, 5}, flat[1] = {6 * 4 * 9}, ws[4] = {6, 4, 3, 3}, ks[1] = {6};
  fuse_graph *g = fuse_graph_create(NULL);
  float *vd = frandom(6, 45);
  fuse_value conv, y;
  fuse_composite_info info;
  outs ref, got;
  sbuf b;
  int k;
  for (k = 0; k < 6; k++) vd[k] = vd[k] * vd[k] + 0.05f;
  conv = fuse_conv2d(g, inp(g, "x", 4, xs), fuse_reshape(g, cst(g, 1, flat, 41), 4, ws), &PAD1);
  y = fuse_relu(g, fuse_batch_norm(g, conv, cst(g, 1, ks, 42), cst(g, 1, ks, 43), cst(g, 1, ks, 44),
                                   cst_vals(g, 1, ks, vd), 1e-5f));
  free(vd);
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK(eval(g, NULL, &ref));
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  if (fuse_graph_op_count(g) != 1) fprintf(stderr, "    after fuse_optimize:\n%s", graph_text(g, &b));
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  CHECK(strstr(graph_text(g, &b), "batch_norm") == NULL);
  CHECK(composite_named(g, y, "fuse.conv2d_bias_relu", &info));
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "reshaped weight"));
  outs_free(&got);
  outs_free(&ref);
  fuse_graph_destroy(g);
}

/* ResNet basic block: h = relu(bn1(conv1(s))); y = relu(add(bn2(conv2(h)), s)), where the
   identity s is the graph input x, or (stem = 1) the output of a stem s = relu(bn0(conv0(x))). */
typedef struct block_ids {
  fuse_value conv0, stem, conv1, h, conv2, bn2, sum, y;
} block_ids;

static fuse_value conv_bn(fuse_graph *g, fuse_value x, int C, int K, uint32_t seed, fuse_value *conv) {
  int64_t ws[4], ks[1];
  float *vd = frandom((size_t)K, seed + 4);
  int k;
  fuse_value r;
  ws[0] = K, ws[1] = C, ws[2] = 3, ws[3] = 3;
  ks[0] = K;
  for (k = 0; k < K; k++) vd[k] = vd[k] * vd[k] + 0.1f;
  *conv = fuse_conv2d(g, x, cst(g, 4, ws, seed), &PAD1);
  r = fuse_batch_norm(g, *conv, cst(g, 1, ks, seed + 1), cst(g, 1, ks, seed + 2),
                      cst(g, 1, ks, seed + 3), cst_vals(g, 1, ks, vd), 1e-5f);
  free(vd);
  return r;
}

static fuse_graph *build_block(block_ids *b, int identity_left, int stem) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t xs[4] = {1, 3, 6, 7}, xs8[4] = {1, 8, 6, 7};
  fuse_value x = inp(g, "x", 4, stem ? xs : xs8);
  b->conv0 = FUSE_NONE;
  b->stem = stem ? fuse_relu(g, conv_bn(g, x, 3, 8, 60, &b->conv0)) : x;
  b->h = fuse_relu(g, conv_bn(g, b->stem, 8, 8, 70, &b->conv1));
  b->bn2 = conv_bn(g, b->h, 8, 8, 80, &b->conv2);
  b->sum = identity_left ? fuse_add(g, b->stem, b->bn2) : fuse_add(g, b->bn2, b->stem);
  b->y = fuse_relu(g, b->sum);
  fuse_output(g, b->y);
  return g;
}

TEST(optimize_resnet_block) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  int i, left, stem;
  for (i = 0; i < 2; i++)
    for (left = 0; left < 2; left++)
      for (stem = 0; stem < 2; stem++) {
        block_ids b;
        fuse_graph *g = build_block(&b, left, stem), *back = NULL;
        fuse_composite_info info;
        char name[64];
        outs ref, got;
        sbuf t1, t2;
        int c0 = -1, c1, c2, chains = stem ? 3 : 2;
        CHECK_EQ_INT(fuse_graph_op_count(g), stem ? 10 : 7);
        CHECK(eval(g, NULL, &ref));
        CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
        CHECK_EQ_INT(fuse_graph_op_count(g), chains); /* one per conv chain */
        CHECK_EQ_INT(fuse_composite_count(g), chains);
        sprintf(name, "%s.conv2d_bias_relu", cgs[i]);
        if (stem) {
          CHECK(composite_named(g, b.stem, name, &info));
          c0 = fuse_value_composite(g, b.stem);
        }
        CHECK(composite_named(g, b.h, name, &info));
        sprintf(name, "%s.conv2d_bias_add_relu", cgs[i]);
        CHECK(composite_named(g, b.y, name, &info));
        c1 = fuse_value_composite(g, b.h);
        c2 = fuse_value_composite(g, b.y);
        CHECK(c1 >= 0 && c2 >= 0 && c1 != c2 && c0 != c1 && c0 != c2);
        /* the residual add and the second bias (the folded bn2) are inside the last one */
        CHECK_EQ_INT(fuse_value_composite(g, b.sum), c2);
        CHECK_EQ_INT(fuse_value_composite(g, b.bn2), c2);
        CHECK_EQ_INT(fuse_value_composite(g, b.conv2), c2);
        CHECK_EQ_INT(fuse_value_composite(g, b.conv1), c1);
        CHECK(info.has_epilogue);
        CHECK_EQ_INT(info.epilogue.reduction, b.conv2);
        CHECK(info.epilogue.bias != FUSE_NONE);
        CHECK_EQ_INT(info.epilogue.num_post, 2);
        CHECK(info.epilogue.post[0].kind == FUSE_POST_ADD && info.epilogue.post[0].tensor == b.stem);
        CHECK(info.epilogue.post[1].kind == FUSE_POST_CLAMP && info.epilogue.post[1].lo == 0 &&
              info.epilogue.post[1].hi == INF);
        /* one codegen, each feeding the next: one region */
        CHECK_EQ_INT(info.region, 0);
        CHECK(fuse_composite_get(g, c1, &info) == FUSE_OK && info.region == 0);
        if (stem) CHECK(fuse_composite_get(g, c0, &info) == FUSE_OK && info.region == 0);
        CHECK(eval(g, NULL, &got));
        CHECK(outs_match(&got, &ref, name));
        outs_free(&got);
        /* a second fuse_optimize changes nothing */
        graph_text(g, &t1);
        CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
        CHECK(strcmp(graph_text(g, &t2), t1.s) == 0);
        CHECK_EQ_INT(fuse_graph_op_count(g), chains);
        /* the text form with its composites reads back to the same text and epilogue */
        CHECK_EQ_INT(fuse_graph_parse(t1.s, NULL, &back), FUSE_OK);
        if (back) {
          fuse_composite_info bi;
          int c = fuse_value_composite(back, b.y);
          if (strcmp(graph_text(back, &t2), t1.s) != 0)
            fprintf(stderr, "    printed:\n%s    re-printed:\n%s", t1.s, t2.s);
          CHECK(strcmp(t2.s, t1.s) == 0);
          CHECK_EQ_INT(fuse_composite_count(back), chains);
          CHECK_EQ_INT(fuse_graph_op_count(back), chains);
          CHECK(c >= 0 && fuse_composite_get(back, c, &bi) == FUSE_OK && bi.has_epilogue &&
                bi.epilogue.num_post == 2 && bi.epilogue.bias != FUSE_NONE);
          fuse_graph_destroy(back);
        }
        {
          fuse_plan *p = NULL;
          sbuf t;
          t.len = 0;
          t.s[0] = 0;
          CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
          CHECK_EQ_INT(fuse_plan_step_count(p), chains);
          fuse_plan_write(p, sbuf_write, &t);
          CHECK_STR_CONTAINS(t.s, "conv2d + bias + add + clamp[0, inf]");
          CHECK_EQ_INT(count_substr(t.s, "conv2d + bias + clamp[0, inf]"), chains - 1);
          fuse_plan_destroy(p);
        }
        outs_free(&ref);
        fuse_graph_destroy(g);
      }
}

/* matmul + bias + clip, seed 002 style: variant 0 clip(add(matmul, b), -0.5, 0.5);
   1 minimum(maximum(add(matmul, b), -0.5), 0.5); 2 the same without a bias. */
TEST(optimize_matmul_bias_clip) {
  static const char *const cgs[2] = {"fuse", "dnnl"};
  int i, v;
  for (i = 0; i < 2; i++)
    for (v = 0; v < 3; v++) {
      fuse_graph *g = fuse_graph_create(NULL);
      int64_t n[1] = {6};
      fuse_value mm = mm_aw(g, 4, 9, 6), b = cst(g, 1, n, 51), t, y;
      fuse_composite_info info;
      char name[64];
      outs ref, got;
      int ops;
      t = v == 2 ? mm : fuse_add(g, mm, b);
      y = v == 0 ? fuse_clip(g, t, -0.5f, 0.5f)
                 : fuse_minimum(g, fuse_maximum(g, t, fuse_scalar(g, -0.5f)), fuse_scalar(g, 0.5f));
      fuse_output(g, y);
      ops = fuse_graph_op_count(g);
      CHECK_EQ_INT(ops, v == 0 ? 3 : v == 1 ? 4 : 3);
      CHECK(eval(g, NULL, &ref));
      CHECK_EQ_INT(fuse_optimize(g, cgs[i]), FUSE_OK);
      CHECK_EQ_INT(fuse_graph_op_count(g), 1);
      sprintf(name, "%s.matmul_%s", cgs[i], v == 2 ? "relu" : "bias_relu");
      CHECK(composite_named(g, y, name, &info));
      CHECK(info.has_epilogue && info.epilogue.num_post == 1 &&
            info.epilogue.post[0].lo == -0.5f && info.epilogue.post[0].hi == 0.5f);
      CHECK_EQ_INT(info.epilogue.bias, v == 2 ? FUSE_NONE : b);
      CHECK(eval(g, NULL, &got));
      CHECK(outs_match(&got, &ref, name));
      outs_free(&got);
      outs_free(&ref);
      fuse_graph_destroy(g);
    }
}

TEST(optimize_unknown_codegen) {
  fuse_value conv, root;
  fuse_graph *g = build_seed(&conv, &root);
  outs ref, got;
  sbuf b1, b2;
  CHECK(eval(g, NULL, &ref));
  graph_text(g, &b1);
  CHECK(fuse_optimize(g, "nope") != FUSE_OK);
  CHECK_STR_CONTAINS(fuse_graph_error(g), "nope");
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK); /* the graph stays usable */
  CHECK_EQ_INT(fuse_composite_count(g), 0);
  CHECK_EQ_INT(fuse_graph_op_count(g), 4);
  CHECK(strcmp(graph_text(g, &b2), b1.s) == 0); /* untouched */
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "after a failed optimize"));
  outs_free(&got);
  CHECK(fuse_optimize(g, "") != FUSE_OK);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  /* and a good call afterwards works (and clears the message) */
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  CHECK_EQ_INT(fuse_graph_error(g)[0], 0);
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "dnnl after nope"));
  outs_free(&got);
  outs_free(&ref);
  fuse_graph_destroy(g);
  /* NULL codegen is "fuse" */
  g = build_seed(&conv, &root);
  CHECK_EQ_INT(fuse_optimize(g, NULL), FUSE_OK);
  {
    fuse_composite_info info;
    CHECK(composite_named(g, root, "fuse.conv2d_bias_relu", &info));
  }
  fuse_graph_destroy(g);
}

TEST(rules_default) {
  static const char *const kinds[8] = {"_bias_add_relu", "_bias_add", "_add_relu", "_add",
                                       "_bias_relu",     "_bias",     "_relu",     ""};
  static const char *const cgs[2] = {"fuse", "dnnl"};
  const fuse_rule *r = NULL, *r_null = NULL;
  int i, k, j;
  CHECK_EQ_INT(fuse_rules_default("fuse", &r), 16);
  CHECK_EQ_INT(fuse_rules_default(NULL, &r_null), 16);
  CHECK(r != NULL && r == r_null);
  CHECK_EQ_INT(fuse_rules_default("dnnl", &r), 16);
  r = (const fuse_rule *)&r; /* must be reset */
  CHECK_EQ_INT(fuse_rules_default("nope", &r), 0);
  CHECK(r == NULL);
  CHECK_EQ_INT(fuse_rules_default("nope", NULL), 0);
  CHECK_EQ_INT(fuse_rules_default("dnnl", NULL), 16);
  CHECK_EQ_INT(fuse_rules_default("DNNL", NULL), 0);
  for (i = 0; i < 2; i++) {
    CHECK_EQ_INT(fuse_rules_default(cgs[i], &r), 16);
    for (j = 0; j < 2; j++)
      for (k = 0; k < 8; k++) {
        char name[64];
        sprintf(name, "%s.%s%s", cgs[i], j ? "matmul" : "conv2d", kinds[k]);
        /* every expected name is there, once */
        {
          int m, found = 0;
          for (m = 0; m < 16; m++)
            if (r[m].name && strcmp(r[m].name, name) == 0) found++;
          if (found != 1) fprintf(stderr, "    rule %s found %d times\n", name, found);
          CHECK_EQ_INT(found, 1);
        }
      }
    for (k = 0; k < 16; k++) CHECK(r[k].pattern && r[k].pattern[0]);
    /* the rules parse: applying them to an empty graph is fine */
    {
      fuse_graph *g = fuse_graph_create(NULL);
      CHECK_EQ_INT(fuse_ops_by_pattern(g, r, 16, NULL), FUSE_OK);
      CHECK_EQ_INT(fuse_graph_error(g)[0], 0);
      fuse_graph_destroy(g);
    }
  }
}

/* ============================================================ 5. fused plans == */

TEST(plan_seed_chain_one_step) {
  fuse_value conv, root;
  fuse_graph *g = build_seed(&conv, &root);
  fuse_plan *p = NULL;
  outs ref, got;
  sbuf t;
  int steps_before;
  CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
  steps_before = fuse_plan_step_count(p);
  CHECK_EQ_INT(steps_before, 3); /* conv2d, add, relu; the reshape is a view */
  fuse_plan_destroy(p);
  CHECK(eval(g, NULL, &ref));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
  CHECK_EQ_INT(fuse_plan_step_count(p), 1);
  t.len = 0;
  t.s[0] = 0;
  CHECK_EQ_INT(fuse_plan_write(p, sbuf_write, &t), FUSE_OK);
  CHECK_STR_CONTAINS(t.s, "step 0: conv2d + bias + clamp[0, inf]");
  CHECK_STR_CONTAINS(t.s, "(composite dnnl.conv2d_bias_relu)");
  CHECK_EQ_INT(count_substr(t.s, "\n"), 1);
  CHECK_EQ_INT(fuse_plan_write(NULL, sbuf_write, &t), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_plan_write(p, NULL, &t), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_plan_step_count(NULL), 0);
  fuse_plan_destroy(p);
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "seed chain fused"));
  outs_free(&got);
  /* the plan outlives the graph */
  CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
  fuse_graph_destroy(g);
  {
    int64_t xs[4] = {1, 3, 7, 9};
    float *x = frandom(numel(4, xs), 100), *y = (float *)malloc(ref.len[0] * sizeof(float));
    const float *in[1];
    float *out[1];
    in[0] = x;
    out[0] = y;
    CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
    CHECK_NEAR_ARRAY(y, ref.d[0], ref.len[0], TOL);
    free(x);
    free(y);
  }
  fuse_plan_destroy(p);
  outs_free(&ref);
}

/* matmul + bias + clip (seed 002), a clamp [lo, hi] in one step. */
TEST(plan_matmul_bias_clip_one_step) {
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t n[1] = {6};
  fuse_value mm = mm_aw(g, 4, 9, 6), b = cst(g, 1, n, 51), y;
  fuse_plan *p = NULL;
  outs ref, got;
  sbuf t;
  y = fuse_minimum(g, fuse_scalar(g, 0.5f), fuse_maximum(g, fuse_add(g, b, mm), fuse_scalar(g, -0.5f)));
  fuse_output(g, y);
  CHECK(eval(g, NULL, &ref));
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
  CHECK_EQ_INT(fuse_plan_step_count(p), 1);
  t.len = 0;
  t.s[0] = 0;
  fuse_plan_write(p, sbuf_write, &t);
  CHECK_STR_CONTAINS(t.s, "matmul + bias + clamp[-0.5, 0.5]");
  CHECK_STR_CONTAINS(t.s, "fuse.matmul_bias_relu");
  fuse_plan_destroy(p);
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "matmul bias clip fused"));
  outs_free(&got);
  outs_free(&ref);
  fuse_graph_destroy(g);
}

/* A composite whose intermediate is read outside (allow_escaping) must not run fused as one
   step that skips the intermediate; numbers still match. */
TEST(plan_escaping_intermediate_still_correct) {
  static const fuse_rule rule = {"fuse.conv2d_bias_relu", "relu(add(conv2d(*, *), const))", NULL, NULL};
  fuse_pattern_options o;
  fuse_graph *g = fuse_graph_create(NULL);
  int64_t k1111[4] = {1, CK, 1, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), sum = fuse_add(g, conv, cst(g, 4, k1111, 52));
  fuse_value y = fuse_relu(g, sum);
  outs ref, got;
  fuse_output(g, y);
  fuse_output(g, sum); /* the intermediate escapes */
  CHECK(eval(g, NULL, &ref));
  memset(&o, 0, sizeof o);
  o.allow_escaping = 1;
  CHECK_EQ_INT(fuse_ops_by_pattern(g, &rule, 1, &o), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK(eval(g, NULL, &got));
  CHECK(outs_match(&got, &ref, "escaping composite"));
  outs_free(&got);
  outs_free(&ref);
  fuse_graph_destroy(g);
}

/* Every bias form and every clamp order above, fused through the plan: covered by
   epilogue_case's number checks (fuse_optimize then fuse_compile); here the plan's text for the
   conv bias forms says "+ bias" and has one step. */
TEST(plan_bias_forms_one_step) {
  int v;
  for (v = 0; v < 14; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_plan *p = NULL;
    want w;
    sbuf t;
    build_conv_bias(g, v, &w);
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK_EQ_INT(fuse_compile(g, scalar_plan(), &p), FUSE_OK);
    t.len = 0;
    t.s[0] = 0;
    fuse_plan_write(p, sbuf_write, &t);
    /* form 6 computes its bias (a relu) in a step of its own first */
    if (fuse_plan_step_count(p) != (v / 2 == 6 ? 2 : 1) || !strstr(t.s, "conv2d + bias ->"))
      fprintf(stderr, "    variant %d plan:\n%s", v, t.s);
    CHECK_EQ_INT(fuse_plan_step_count(p), v / 2 == 6 ? 2 : 1);
    CHECK_STR_CONTAINS(t.s, "conv2d + bias ->");
    fuse_plan_destroy(p);
    fuse_graph_destroy(g);
  }
}

int main(void) {
  RUN(epilogue_runs_once_not_per_step);
  RUN(bias_added_once);
  RUN(fold_batch_norm_folds_and_matches);
  RUN(fold_batch_norm_refuses);
  RUN(optimize_seed_chain);
  RUN(optimize_conv_bn_relu);
  RUN(optimize_conv_bn_relu_reshaped_weight);
  RUN(optimize_resnet_block);
  RUN(optimize_matmul_bias_clip);
  RUN(optimize_unknown_codegen);
  RUN(rules_default);
  RUN(plan_seed_chain_one_step);
  RUN(plan_matmul_bias_clip_one_step);
  RUN(plan_escaping_intermediate_still_correct);
  RUN(plan_bias_forms_one_step);
  return runner_finish("optimize");
}
