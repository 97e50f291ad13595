/* test_epilogue.c - the epilogue analyzer: fuse_analyze_epilogue on graphs built with the
   API, three ways each: no composites, inside the composites fuse_ops_by_pattern makes with the
   default rules, and after fuse_optimize (which also folds reshapes of constants). Bias in
   every form, residuals, clamps from relu, clip and maximum / minimum with a scalar constant,
   the five clipping orders of seed 002, clamp composition, post-op order; refusals with a
   reason; bad arguments. test_optimize.c: what runs after it.

   Numbers: every optimized graph is compared with the same graph before optimization, which
   runs op by op. Tolerance TOL = 1e-5, normwise relative error (runner.h:
   max|got - want| / max|want|). Set SHOW_WHY=1 in the environment to print every refusal's
   reason. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUSE_IMPLEMENTATION
#include "../fuse.h"
#include "runner.h"
#include "epilogue_helpers.h"

/* ================================================================ 1. analyzer == */

TEST(conv2d_bias_every_form_either_side) {
  int v;
  for (v = 0; v < 14; v++) CHECK(epilogue_case("conv2d_bias", build_conv_bias, v));
}

/* matmul + bias: variant = form * 2 + side; forms: 0 const [N]; 1 const [1,N]; 2 input [N] */
static void build_mm_bias(fuse_graph *g, int variant, want *w) {
  int form = variant / 2, left = variant % 2;
  int64_t n[1] = {5}, n1[2] = {1, 5};
  fuse_value mm = mm_aw(g, 3, 7, 5), b;
  b = form == 0 ? cst(g, 1, n, 22) : form == 1 ? cst(g, 2, n1, 22) : inp(g, "b", 1, n);
  w->root = left ? fuse_add(g, b, mm) : fuse_add(g, mm, b);
  fuse_output(g, w->root);
  w->red = mm;
  w->bias = w->bias_opt = b;
  w->n = 0;
  w->name = "matmul_bias";
}

TEST(matmul_bias_n_and_1n_either_side) {
  int v;
  for (v = 0; v < 6; v++) CHECK(epilogue_case("matmul_bias", build_mm_bias, v));
}

/* Batched matmul [2, 3, 7] x [7, 5] -> [2, 3, 5] with a [5] bias (numpy broadcast). */
static void build_bmm_bias(fuse_graph *g, int variant, want *w) {
  int64_t as[3] = {2, 3, 7}, ws[2] = {7, 5}, n[1] = {5};
  fuse_value a = inp(g, "a", 3, as), mm = fuse_matmul(g, a, cst(g, 2, ws, 12));
  fuse_value b = cst(g, 1, n, 23);
  w->root = fuse_relu(g, variant ? fuse_add(g, b, mm) : fuse_add(g, mm, b));
  fuse_output(g, w->root);
  w->red = mm;
  w->bias = w->bias_opt = b;
  w->n = 1;
  w->post[0] = CL(0, INF);
  w->name = "matmul_bias_relu";
}

TEST(batched_matmul_bias_relu) {
  CHECK(epilogue_case("bmm_bias_relu", build_bmm_bias, 0));
  CHECK(epilogue_case("bmm_bias_relu", build_bmm_bias, 1));
}

/* Residual on either side: variant 0 add(conv, r), 1 add(r, conv); 2, 3 the same for matmul;
   4, 5: conv with a residual that is a reshape (a view) of a flat input. */
static void build_residual(fuse_graph *g, int variant, want *w) {
  int64_t ys[4] = {1, CK, CH, CW}, ms[2] = {3, 5}, flat[1] = {CK * CH * CW};
  fuse_value red, r;
  if (variant < 2) {
    red = conv_xw(g, CC, CK, CH, CW, NULL);
    r = inp(g, "r", 4, ys);
  } else if (variant >= 4) {
    red = conv_xw(g, CC, CK, CH, CW, NULL);
    r = fuse_reshape(g, inp(g, "r", 1, flat), 4, ys);
  } else {
    red = mm_aw(g, 3, 7, 5);
    r = inp(g, "r", 2, ms);
  }
  w->root = variant % 2 ? fuse_add(g, r, red) : fuse_add(g, red, r);
  fuse_output(g, w->root);
  w->red = red;
  w->bias = w->bias_opt = FUSE_NONE;
  w->n = 1;
  w->post[0] = AD(r);
  w->name = variant < 2 || variant >= 4 ? "conv2d_add" : "matmul_add";
  w->extra_ops = variant >= 4; /* the reshape of the residual (a view) */
}

TEST(residual_add_either_side) {
  int v;
  for (v = 0; v < 6; v++) CHECK(epilogue_case("residual", build_residual, v));
}

/* relu(add(add(conv, reshape(b)), r)), the operands of both adds in every order; variant 4..7:
   the same with a clip [-0.5, 0.75] (relu6-like) instead of relu. */
static void build_bias_res_clamp(fuse_graph *g, int variant, want *w) {
  int64_t ys[4] = {1, CK, CH, CW}, k[1] = {CK}, k1111[4] = {1, CK, 1, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), r = inp(g, "r", 4, ys);
  fuse_value src = cst(g, 1, k, 24), b = fuse_reshape(g, src, 4, k1111), biased, sum;
  biased = variant & 1 ? fuse_add(g, b, conv) : fuse_add(g, conv, b);
  sum = variant & 2 ? fuse_add(g, r, biased) : fuse_add(g, biased, r);
  w->root = variant & 4 ? fuse_clip(g, sum, -0.5f, 0.75f) : fuse_relu(g, sum);
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = src;
  w->bias_opt = b;
  w->n = 2;
  w->post[0] = AD(r);
  w->post[1] = variant & 4 ? CL(-0.5f, 0.75f) : CL(0, INF);
  w->name = "conv2d_bias_add_relu";
}

TEST(bias_residual_clamp) {
  int v;
  for (v = 0; v < 8; v++) CHECK(epilogue_case("bias_res_clamp", build_bias_res_clamp, v));
}

/* One clamp op after conv + [1,K,1,1] bias:
   0 relu; 1 clip(-1, 2); 2 maximum(t, 0.25); 3 maximum(0.25, t); 4 minimum(t, 0.5);
   5 minimum(0.5, t); 6 maximum(t, [1,1,1,1] const 0.25) (a one-element constant is a scalar) */
static void build_one_clamp(fuse_graph *g, int variant, want *w) {
  int64_t k1111[4] = {1, CK, 1, 1}, ones[4] = {1, 1, 1, 1};
  const float quarter = 0.25f;
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, k1111, 25);
  fuse_value t = fuse_add(g, conv, b);
  switch (variant) {
  case 0: w->root = fuse_relu(g, t), w->post[0] = CL(0, INF); break;
  case 1: w->root = fuse_clip(g, t, -1, 2), w->post[0] = CL(-1, 2); break;
  case 2: w->root = fuse_maximum(g, t, fuse_scalar(g, 0.25f)), w->post[0] = CL(0.25f, INF); break;
  case 3: w->root = fuse_maximum(g, fuse_scalar(g, 0.25f), t), w->post[0] = CL(0.25f, INF); break;
  case 4: w->root = fuse_minimum(g, t, fuse_scalar(g, 0.5f)), w->post[0] = CL(-INF, 0.5f); break;
  case 5: w->root = fuse_minimum(g, fuse_scalar(g, 0.5f), t), w->post[0] = CL(-INF, 0.5f); break;
  default:
    w->root = fuse_maximum(g, t, cst_vals(g, 4, ones, &quarter));
    w->post[0] = CL(0.25f, INF);
    break;
  }
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = w->bias_opt = b;
  w->n = 1;
  w->name = "conv2d_bias_relu";
}

TEST(clamps_relu_clip_maximum_minimum) {
  int v;
  for (v = 0; v < 7; v++) CHECK(epilogue_case("one_clamp", build_one_clamp, v));
}

/* Seed 002's five clipping orders on matmul + bias [N], lo = -0.25, hi = 0.5:
   0 min(max(t, lo), hi)   1 min(hi, max(t, lo))   2 min(max(lo, t), hi)
   3 max(min(t, hi), lo)   4 max(lo, min(t, hi))
   variants 5..9: the same on conv2d + reshape bias. Each is ONE clamp [lo, hi]. */
static void build_seed002(fuse_graph *g, int variant, want *w) {
  int order = variant % 5;
  fuse_value red, t, lo = fuse_scalar(g, -0.25f), hi = fuse_scalar(g, 0.5f);
  if (variant < 5) {
    int64_t n[1] = {5};
    fuse_value b = cst(g, 1, n, 26);
    red = mm_aw(g, 3, 7, 5);
    t = fuse_add(g, red, b);
    w->bias = w->bias_opt = b;
    w->name = "matmul_bias_relu";
  } else {
    int64_t k[1] = {CK}, k1111[4] = {1, CK, 1, 1};
    fuse_value src = cst(g, 1, k, 26), b;
    red = conv_xw(g, CC, CK, CH, CW, NULL);
    b = fuse_reshape(g, src, 4, k1111);
    t = fuse_add(g, red, b);
    w->bias = src;
    w->bias_opt = b;
    w->name = "conv2d_bias_relu";
  }
  switch (order) {
  case 0: w->root = fuse_minimum(g, fuse_maximum(g, t, lo), hi); break;
  case 1: w->root = fuse_minimum(g, hi, fuse_maximum(g, t, lo)); break;
  case 2: w->root = fuse_minimum(g, fuse_maximum(g, lo, t), hi); break;
  case 3: w->root = fuse_maximum(g, fuse_minimum(g, t, hi), lo); break;
  default: w->root = fuse_maximum(g, lo, fuse_minimum(g, t, hi)); break;
  }
  fuse_output(g, w->root);
  w->red = red;
  w->n = 1;
  w->post[0] = CL(-0.25f, 0.5f);
}

TEST(seed002_five_orders_one_clamp) {
  int v;
  for (v = 0; v < 10; v++) CHECK(epilogue_case("seed002_orders", build_seed002, v));
}

/* Composition of adjacent clamps (applied in graph order: the inner op first):
   0 relu then minimum(., 6)             -> [0, 6]
   1 clip(-1, 2) then clip(0, 3)         -> [0, 2] (intersection)
   2 relu then minimum(., -1)            -> [-1, -1] (disjoint: every value becomes -1)
   3 minimum(., -1) then relu            -> [0, 0]
   4 clip(0, 1) then clip(2, 3)          -> [2, 2]
   5 clip(2, 3) then clip(0, 1)          -> [1, 1]
   6 maximum(., 0.5) then relu           -> [0.5, inf]
   7 relu6 as clip(0, 6) then maximum(., -3) -> [0, 6] */
static void build_compose(fuse_graph *g, int variant, want *w) {
  int64_t k1111[4] = {1, CK, 1, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, k1111, 27);
  fuse_value t = fuse_add(g, conv, b);
  switch (variant) {
  case 0: w->root = fuse_minimum(g, fuse_relu(g, t), fuse_scalar(g, 6)), w->post[0] = CL(0, 6); break;
  case 1: w->root = fuse_clip(g, fuse_clip(g, t, -1, 2), 0, 3), w->post[0] = CL(0, 2); break;
  case 2: w->root = fuse_minimum(g, fuse_relu(g, t), fuse_scalar(g, -1)), w->post[0] = CL(-1, -1); break;
  case 3: w->root = fuse_relu(g, fuse_minimum(g, t, fuse_scalar(g, -1))), w->post[0] = CL(0, 0); break;
  case 4: w->root = fuse_clip(g, fuse_clip(g, t, 0, 1), 2, 3), w->post[0] = CL(2, 2); break;
  case 5: w->root = fuse_clip(g, fuse_clip(g, t, 2, 3), 0, 1), w->post[0] = CL(1, 1); break;
  case 6: w->root = fuse_relu(g, fuse_maximum(g, t, fuse_scalar(g, 0.5f))), w->post[0] = CL(0.5f, INF); break;
  default:
    w->root = fuse_maximum(g, fuse_clip(g, t, 0, 6), fuse_scalar(g, -3));
    w->post[0] = CL(0, 6);
    break;
  }
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = w->bias_opt = b;
  w->n = 1;
  w->name = "conv2d_bias_relu";
}

TEST(adjacent_clamps_compose) {
  int v;
  for (v = 0; v < 8; v++) CHECK(epilogue_case("compose", build_compose, v));
}

/* The order of post-ops is kept: clamp, then residual add, then clamp (not merged across the
   add). variant 1: the residual on the left. Four post-ops (clamp, add, clamp, add) is the
   limit and still analyzes (variant 2). fuse_optimize's rules hold one residual, so these are
   checked for analysis and numbers only. */
static void build_post_order(fuse_graph *g, int variant, want *w) {
  int64_t ys[4] = {1, CK, CH, CW}, k11[3] = {CK, 1, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), r = inp(g, "r", 4, ys), b = cst(g, 3, k11, 28);
  fuse_value c1 = fuse_relu(g, fuse_add(g, conv, b));
  if (variant < 2) {
    fuse_value s = variant ? fuse_add(g, r, c1) : fuse_add(g, c1, r);
    w->root = fuse_clip(g, s, -1, 1.5f);
    w->n = 3;
    w->post[0] = CL(0, INF);
    w->post[1] = AD(r);
    w->post[2] = CL(-1, 1.5f);
  } else {
    fuse_value r2 = inp(g, "r2", 4, ys);
    fuse_value c2 = fuse_clip(g, fuse_add(g, c1, r), -1, 1.5f);
    w->root = fuse_add(g, r2, c2);
    w->n = 4;
    w->post[0] = CL(0, INF);
    w->post[1] = AD(r);
    w->post[2] = CL(-1, 1.5f);
    w->post[3] = AD(r2);
  }
  fuse_output(g, w->root);
  w->red = conv;
  w->bias = w->bias_opt = b;
  w->name = NULL;
}

TEST(post_op_order_kept) {
  int v;
  for (v = 0; v < 3; v++) CHECK(epilogue_case("post_order", build_post_order, v));
}

/* Inside composites made by user rules: the seed rule with a reshape member, and a rule whose
   composite stops short of the conv (then the analysis of its root must fail: it stays inside
   the composite). */
TEST(inside_user_composites) {
  static const fuse_rule seed = {"dnnl.conv2d_reshape_add_relu",
                                 "relu(add(conv2d($data, $weight), reshape($bias, *)))", NULL, NULL};
  static const fuse_rule tail = {"test.add_relu", "relu(add(*, const))", NULL, NULL};
  int64_t k[1] = {CK}, k1111[4] = {1, CK, 1, 1};
  fuse_epilogue e;
  fuse_composite_info info;
  /* the seed rule */
  {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), src = cst(g, 1, k, 29);
    fuse_value b = fuse_reshape(g, src, 4, k1111), y = fuse_relu(g, fuse_add(g, conv, b));
    fuse_output(g, y);
    CHECK_EQ_INT(fuse_ops_by_pattern(g, &seed, 1, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    CHECK_EQ_INT(fuse_value_composite(g, b), 0);
    CHECK_EQ_INT(fuse_composite_get(g, 0, &info), FUSE_OK);
    CHECK(info.has_epilogue);
    CHECK_EQ_INT(info.epilogue.reduction, conv);
    CHECK_EQ_INT(info.epilogue.bias, src);
    CHECK_EQ_INT(info.epilogue.num_post, 1);
    CHECK(info.epilogue.post[0].kind == FUSE_POST_CLAMP && info.epilogue.post[0].lo == 0 &&
          info.epilogue.post[0].hi == INF);
    CHECK_STR_CONTAINS(info.function, "fused_conv2d_reshape_add_relu");
    CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_OK);
    CHECK_EQ_INT(e.bias, src);
    fuse_graph_destroy(g);
  }
  /* a composite {add, relu} that does not hold the conv */
  {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, k1111, 30);
    fuse_value y = fuse_relu(g, fuse_add(g, conv, b));
    fuse_output(g, y);
    CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_OK); /* no composite: the whole graph */
    CHECK_EQ_INT(fuse_ops_by_pattern(g, &tail, 1, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    CHECK_EQ_INT(fuse_value_composite(g, conv), -1);
    CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_ERROR_UNSUPPORTED);
    CHECK_STR_CONTAINS(e.why, "conv2d / matmul"); /* none inside the composite */
    CHECK_EQ_INT(fuse_composite_get(g, 0, &info), FUSE_OK);
    CHECK(!info.has_epilogue);
    fuse_graph_destroy(g);
  }
}

/* ------------------------------------------------------------------ refusals -- */

/* [K] added directly to the conv output [1, K, H, W] with W == K: numpy broadcasts it along
   width (y[n,k,h,w] + b[w]), so it is not a per-channel bias. variant 1: on the left. */
static fuse_value g_not_bias;
static void build_bias_along_width_k(fuse_graph *g, int variant, want *w) {
  int64_t k[1] = {4};
  fuse_value conv = conv_xw(g, CC, 4, CH, 4, NULL), b = cst(g, 1, k, 31); /* W == K == 4 */
  w->root = variant ? fuse_add(g, b, conv) : fuse_add(g, conv, b);
  w->root = fuse_relu(g, w->root);
  fuse_output(g, w->root);
  g_not_bias = b;
}
/* [1, 1, 1, W]: along width. */
static void build_bias_along_width(fuse_graph *g, int variant, want *w) {
  int64_t s[4] = {1, 1, 1, CW};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, s, 32);
  w->root = variant ? fuse_add(g, b, conv) : fuse_add(g, conv, b);
  fuse_output(g, w->root);
  g_not_bias = b;
}
/* [1, 1, H, 1] (along height) and [1, K, H, 1] (per channel and row). */
static void build_bias_along_height(fuse_graph *g, int variant, want *w) {
  int64_t s0[4] = {1, 1, CH, 1}, s1[4] = {1, CK, CH, 1};
  fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), b = cst(g, 4, variant ? s1 : s0, 33);
  w->root = fuse_add(g, conv, b);
  fuse_output(g, w->root);
  g_not_bias = b;
}
/* matmul [M, N] with M == N and a [N, 1] operand: along rows, not a bias. */
static void build_mm_bias_rows(fuse_graph *g, int variant, want *w) {
  int64_t s[2] = {4, 1};
  fuse_value mm = mm_aw(g, 4, 3, 4), b = cst(g, 2, s, 34);
  w->root = variant ? fuse_add(g, b, mm) : fuse_add(g, mm, b);
  fuse_output(g, w->root);
  g_not_bias = b;
}

TEST(refuses_bias_that_broadcasts_along_width) {
  int v;
  for (v = 0; v < 2; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    want w;
    build_bias_along_width_k(g, v, &w);
    fuse_graph_destroy(g);
    CHECK(refused_case("bias_K_W==K", build_bias_along_width_k, v, "bias", g_not_bias));
    g = fuse_graph_create(NULL);
    build_bias_along_width(g, v, &w);
    fuse_graph_destroy(g);
    CHECK(refused_case("bias_[1,1,1,W]", build_bias_along_width, v, "bias", g_not_bias));
    g = fuse_graph_create(NULL);
    build_bias_along_height(g, v, &w);
    fuse_graph_destroy(g);
    CHECK(refused_case("bias_along_height", build_bias_along_height, v, "bias", g_not_bias));
    g = fuse_graph_create(NULL);
    build_mm_bias_rows(g, v, &w);
    fuse_graph_destroy(g);
    CHECK(refused_case("matmul_[N,1]", build_mm_bias_rows, v, "bias", g_not_bias));
  }
}

/* Other chains that are not epilogues.
   0 maximum(conv, r) of two tensors         1 maximum(r, conv)
   2 maximum(conv, s) s a rank-0 input        3 minimum(s, conv)
   4 relu(sqrt(conv + b))                     5 sub(conv, b)
   6 add(conv [1,K,H,W], r [2,K,H,W]): the other operand makes the shape bigger
   7 maximum(conv, const [1,1,1,1,1]): the bound makes the rank bigger
   8 nine post-ops: clamp, add, clamp, add, clamp, add, clamp, add, clamp
   9 relu(x): no conv / matmul at all       10 relu(max_pool2d(x))
   11 add(x, y) of two inputs                12 the root is an input
   13 mul(conv, r) of two tensors           14 relu(add(relu(conv), b)), b an input [1,K,1,1] */
static const char *const refuse_keyword[15] = {
    "two tensors", "two tensors", "not a constant", "not a constant", "sqrt", "sub",
    "residual",    "broadcasts",  "more than 8",    "not an epilogue", "max_pool2d",
    "conv2d / matmul", "not an epilogue", "mul", "bias"};
static void build_refused(fuse_graph *g, int variant, want *w) {
  int64_t ys[4] = {1, CK, CH, CW}, y2[4] = {2, CK, CH, CW}, k1111[4] = {1, CK, 1, 1};
  int64_t one5[5] = {1, 1, 1, 1, 1};
  fuse_value x, conv = conv_xw(g, CC, CK, CH, CW, &x), r, s, b;
  const float half = 0.5f;
  fuse_pool2d_attrs pool;
  g_not_bias = FUSE_NONE;
  switch (variant) {
  case 0: r = inp(g, "r", 4, ys), w->root = fuse_maximum(g, conv, r); break;
  case 1: r = inp(g, "r", 4, ys), w->root = fuse_maximum(g, r, conv); break;
  case 2: s = inp(g, "s", 0, NULL), w->root = fuse_maximum(g, conv, s); break;
  case 3: s = inp(g, "s", 0, NULL), w->root = fuse_minimum(g, s, conv); break;
  case 4:
    b = cst(g, 4, k1111, 35);
    w->root = fuse_relu(g, fuse_sqrt(g, fuse_add(g, conv, b)));
    break;
  case 5: b = cst(g, 4, k1111, 35), w->root = fuse_sub(g, conv, b); break;
  case 6: r = inp(g, "r", 4, y2), w->root = fuse_add(g, conv, r); break;
  case 7: w->root = fuse_maximum(g, conv, cst_vals(g, 5, one5, &half)); break;
  case 8: {
    fuse_value t = fuse_relu(g, conv);
    int k;
    for (k = 0; k < 4; k++) {
      char name[8] = {'r', (char)('1' + k), 0};
      t = fuse_relu(g, fuse_add(g, t, inp(g, name, 4, ys)));
    }
    w->root = t;
    break;
  }
  case 9: w->root = fuse_relu(g, x); break;
  case 10:
    memset(&pool, 0, sizeof pool);
    pool.kernel[0] = pool.kernel[1] = 2;
    w->root = fuse_relu(g, fuse_max_pool2d(g, x, &pool));
    break;
  case 11: r = inp(g, "r", 4, ys), w->root = fuse_add(g, r, inp(g, "r2", 4, ys)); break;
  case 12: w->root = x; break;
  case 13: r = inp(g, "r", 4, ys), w->root = fuse_mul(g, conv, r); break;
  default: /* a per-channel tensor that is not a constant: neither bias nor shift */
    b = inp(g, "b", 4, k1111);
    w->root = fuse_relu(g, fuse_add(g, fuse_relu(g, conv), b));
    g_not_bias = b;
    break;
  }
  fuse_output(g, w->root);
  if (variant >= 9 && variant <= 12) fuse_output(g, conv); /* keep the conv used */
}

TEST(refusals_say_why) {
  int v;
  for (v = 0; v < 15; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    want w;
    build_refused(g, v, &w); /* sets g_not_bias for this variant */
    fuse_graph_destroy(g);
    CHECK(refused_case("refused", build_refused, v, refuse_keyword[v], g_not_bias));
  }
}

/* Twenty relus in a row are one clamp; then a residual add: two post-ops, within the limit.
   The analysis may accept it (clamp [0, inf], add r) or refuse it for its length, but a refusal
   must say so truthfully (it must not claim that no operand leads to a conv2d / matmul).
   Seventy relus: the same. */
TEST(long_clamp_chains) {
  static const int lengths[2] = {20, 70};
  int64_t ys[4] = {1, CK, CH, CW};
  int i, k;
  for (i = 0; i < 2; i++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), t = conv, r = inp(g, "r", 4, ys), y;
    fuse_epilogue e;
    fuse_result res;
    outs ref, got;
    for (k = 0; k < lengths[i]; k++) t = fuse_relu(g, t);
    y = fuse_add(g, t, r);
    fuse_output(g, y);
    res = fuse_analyze_epilogue(g, y, &e);
    if (res == FUSE_OK) {
      CHECK_EQ_INT(e.reduction, conv);
      CHECK_EQ_INT(e.num_post, 2);
      CHECK(e.post[0].kind == FUSE_POST_CLAMP && e.post[0].lo == 0 && e.post[0].hi == INF);
      CHECK(e.post[1].kind == FUSE_POST_ADD && e.post[1].tensor == r);
    } else {
      if (strstr(e.why, "neither operand leads"))
        fprintf(stderr, "    %d relus + add: the refusal is not true: \"%s\"\n", lengths[i], e.why);
      CHECK_EQ_INT(res, FUSE_ERROR_UNSUPPORTED);
      CHECK(strstr(e.why, "neither operand leads") == NULL);
    }
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "long clamp chain"));
    outs_free(&ref);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
}

/* Composites from user rules whose other members feed the epilogue: the reduction itself as
   the residual, a second conv as the other operand ([1,K,1,1]: bias-shaped), a sigmoid of the
   conv as the residual. Whatever runs fused, the numbers are those of the plain graph. */
TEST(user_composites_run_correctly) {
  static const char *const pats[3] = {"add(relu($c:conv2d(*, *)), $c)",
                                      "relu(add(conv2d(*, *), conv2d(*, *)))",
                                      "add($c:conv2d(*, *), sigmoid($c))"};
  int v;
  for (v = 0; v < 3; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_rule rule;
    fuse_value y;
    outs ref, got;
    if (v == 1) {
      int64_t xs[4] = {1, 3, 1, 1}, ws[4] = {CK, 3, 1, 1};
      fuse_value c1 = fuse_conv2d(g, inp(g, "x", 4, xs), cst(g, 4, ws, 53), NULL);
      fuse_value c2 = fuse_conv2d(g, inp(g, "x2", 4, xs), cst(g, 4, ws, 54), NULL);
      y = fuse_relu(g, fuse_add(g, c1, c2));
    } else {
      fuse_value c = conv_xw(g, CC, CK, CH, CW, NULL);
      y = v == 0 ? fuse_add(g, fuse_relu(g, c), c) : fuse_add(g, c, fuse_sigmoid(g, c));
    }
    fuse_output(g, y);
    CHECK(eval(g, NULL, &ref));
    rule.name = "test.custom";
    rule.pattern = pats[v];
    rule.check = NULL;
    rule.user = NULL;
    CHECK_EQ_INT(fuse_ops_by_pattern(g, &rule, 1, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    CHECK_EQ_INT(fuse_value_composite(g, y), 0);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, pats[v]));
    outs_free(&ref);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
}

/* A NaN bound is no clamp (max(x, NaN) is not a clamp of x). */
TEST(refuses_nan_bound) {
  int v;
  for (v = 0; v < 2; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value conv = conv_xw(g, CC, CK, CH, CW, NULL), y;
    fuse_epilogue e;
    y = v ? fuse_minimum(g, fuse_scalar(g, NAN), conv) : fuse_maximum(g, conv, fuse_scalar(g, NAN));
    fuse_output(g, y);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_ERROR_UNSUPPORTED);
    CHECK_STR_CONTAINS(e.why, "NaN");
    fuse_graph_destroy(g);
  }
}

TEST(bad_arguments_do_not_crash) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value y = fuse_relu(g, conv_xw(g, CC, CK, CH, CW, NULL));
  fuse_epilogue e;
  fuse_output(g, y);
  CHECK_EQ_INT(fuse_analyze_epilogue(g, y, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  memset(&e, 0x55, sizeof e);
  CHECK_EQ_INT(fuse_analyze_epilogue(g, FUSE_NONE, &e), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(e.reduction, FUSE_NONE);
  CHECK_EQ_INT(e.bias, FUSE_NONE);
  CHECK_EQ_INT(e.num_post, 0);
  CHECK(memchr(e.why, 0, sizeof e.why) != NULL && e.why[0] != 0);
  CHECK_EQ_INT(fuse_analyze_epilogue(g, 100000, &e), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK(e.why[0] != 0);
  CHECK_EQ_INT(fuse_analyze_epilogue(g, -7, &e), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_analyze_epilogue(NULL, 0, &e), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_analyze_epilogue(NULL, 0, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  /* after a failure the result is usable again */
  CHECK_EQ_INT(fuse_analyze_epilogue(g, y, &e), FUSE_OK);
  CHECK_EQ_INT(e.num_post, 1);
  CHECK_EQ_INT(e.why[0], 0);
  /* the root is the reduction itself: an empty epilogue */
  CHECK_EQ_INT(fuse_analyze_epilogue(g, fuse_graph_find(g, "x") + 2, &e), FUSE_OK);
  CHECK_EQ_INT(e.num_post, 0);
  CHECK_EQ_INT(e.bias, FUSE_NONE);
  fuse_graph_destroy(g);
  {
    fuse_composite_info info;
    CHECK_EQ_INT(fuse_composite_get(NULL, 0, &info), FUSE_ERROR_INVALID_ARGUMENT);
    g = fuse_graph_create(NULL);
    CHECK_EQ_INT(fuse_composite_get(g, 0, &info), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_composite_get(g, -1, &info), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_value_composite(g, 5), -1);
    CHECK_EQ_INT(fuse_optimize(NULL, "fuse"), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_fold_batch_norm(NULL), FUSE_ERROR_INVALID_ARGUMENT);
    fuse_graph_destroy(g);
  }
}

/* matmul of two vectors has a rank-0 result; a scalar added to it. The analysis reads the
   "last axis" of the result, which does not exist: it must not read outside the shape
   (UBSan) and must not crash. Either answer is fine; the numbers after fuse_optimize must be. */
static void build_mm_rank0(fuse_graph *g, int variant, want *w) {
  int64_t k[1] = {6};
  fuse_value mm = fuse_matmul(g, inp(g, "a", 1, k), cst(g, 1, k, 37));
  fuse_value c = variant ? fuse_scalar(g, 0.5f) : cst(g, 1, (const int64_t[]){1}, 38);
  w->root = fuse_relu(g, fuse_add(g, mm, c));
  fuse_output(g, w->root);
  w->red = mm;
}

TEST(matmul_rank0_result_no_crash) {
  int v;
  for (v = 0; v < 2; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_epilogue e;
    want w;
    outs ref, got;
    fuse_result r;
    build_mm_rank0(g, v, &w);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    r = fuse_analyze_epilogue(g, w.root, &e);
    CHECK(r == FUSE_OK || r == FUSE_ERROR_UNSUPPORTED);
    if (r == FUSE_OK) CHECK_EQ_INT(e.reduction, w.red);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "mm_rank0"));
    outs_free(&ref);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
}

/* matmul with a vector on the right: [M, Kd] x [Kd] -> [M]. Its last (only) axis is M, so a
   [M] operand is "per output channel" by the spec's rule; whatever the analyzer decides, the
   fused result must equal the unfused one. variant 1: batched [2, M, Kd] x [Kd] -> [2, M]. */
static void build_mm_vec(fuse_graph *g, int variant, want *w) {
  int64_t as[3] = {2, 3, 7}, k[1] = {7}, m[1] = {3};
  fuse_value a = variant ? inp(g, "a", 3, as) : inp(g, "a", 2, as + 1);
  fuse_value mm = fuse_matmul(g, a, cst(g, 1, k, 39)), b = cst(g, 1, m, 40);
  w->root = fuse_relu(g, fuse_add(g, mm, b));
  fuse_output(g, w->root);
  w->red = mm;
  w->bias = b;
}

TEST(matmul_vector_rhs_bias_numbers) {
  int v;
  for (v = 0; v < 2; v++) {
    fuse_graph *g = fuse_graph_create(NULL);
    want w;
    outs ref, got;
    build_mm_vec(g, v, &w);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    CHECK(eval(g, NULL, &ref));
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK(eval(g, NULL, &got));
    CHECK(outs_match(&got, &ref, "matmul [M,K] x [K] + bias [M], fused"));
    outs_free(&ref);
    outs_free(&got);
    fuse_graph_destroy(g);
  }
}

int main(void) {
  RUN(conv2d_bias_every_form_either_side);
  RUN(matmul_bias_n_and_1n_either_side);
  RUN(batched_matmul_bias_relu);
  RUN(residual_add_either_side);
  RUN(bias_residual_clamp);
  RUN(clamps_relu_clip_maximum_minimum);
  RUN(seed002_five_orders_one_clamp);
  RUN(adjacent_clamps_compose);
  RUN(post_op_order_kept);
  RUN(inside_user_composites);
  RUN(refuses_bias_that_broadcasts_along_width);
  RUN(refusals_say_why);
  RUN(long_clamp_chains);
  RUN(user_composites_run_correctly);
  RUN(refuses_nan_bound);
  RUN(bad_arguments_do_not_crash);
  RUN(matmul_rank0_result_no_crash);
  RUN(matmul_vector_rhs_bias_numbers);
  return runner_finish("epilogue");
}
