/* test_pattern.c - the pattern language: every form matched and not matched (wildcards,
   captures, const, arity, `...`, attribute constraints, optional ops, op alternation,
   `A | B`, grouping, commutative operands at any depth, repeated capture names, reshape's
   target shape as an operand) and every pattern parse error (code, "position N: expected",
   graph untouched). Matches are probed with a check callback that records the match and
   refuses it, so one graph serves many patterns. test_fusion.c: the passes. */
#define _POSIX_C_SOURCE 200809L
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pattern_helpers.h"

/* ===================================================== 1. pattern language == */

TEST(lang_wildcards_captures_const) {
  seed_graph s = build_seed(0, 1);
  fuse_graph *g = s.g;
  char *before = to_text(g);
  MATCH(g, "relu(*)", s.relu);
  NO_MATCH(g, "relu(*)", s.add);
  MATCH(g, "add(*, *)", s.add);
  CAPTURE(g, "relu($a)", s.relu, "a", s.add);
  CAPTURE(g, "conv2d($x, $w)", s.conv, "x", s.data);
  CAPTURE(g, "conv2d($x, $w)", s.conv, "w", s.weight);
  MATCH(g, "conv2d(*, const)", s.conv);
  NO_MATCH(g, "conv2d(const, *)", s.conv);
  MATCH(g, "conv2d($x, $w:const)", s.conv);
  NO_MATCH(g, "conv2d($x:const, $w)", s.conv);
  CAPTURE(g, "add($c:conv2d(*, *), *)", s.add, "c", s.conv);
  CAPTURE(g, "relu(add($c:conv2d(*, *), $r:reshape(*, *)))", s.relu, "r", s.reshape);
  NO_MATCH(g, "add($c:const, *)", s.add);
  NO_MATCH(g, "relu(add(conv2d(*, *), const))", s.relu); /* the bias is a reshape, not a const */
  /* reshape's target shape is its second operand */
  MATCH(g, "reshape(const, *)", s.reshape);
  CAPTURE(g, "reshape($b, *)", s.reshape, "b", s.bias);
  CAPTURE(g, "reshape($b, const)", s.reshape, "b", s.bias);
  NO_MATCH(g, "reshape($b, $s)", s.reshape); /* a capture cannot bind the target shape */
  NO_MATCH(g, "reshape($b)", s.reshape);
  NO_MATCH(g, "reshape(*, *, *)", s.reshape);
  MATCH(g, "reshape($b, ...)", s.reshape);
  CAPTURE(g, SEED_PATTERN, s.relu, "bias", s.bias);
  CAPTURE(g, SEED_PATTERN, s.relu, "data", s.data);
  CAPTURE(g, SEED_PATTERN, s.relu, "weight", s.weight);
  /* a pattern with no op matches no op: nothing fuses, no error */
  CHECK_EQ_INT(fuse1(g, "x.any", "*", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse1(g, "x.cap", "$v", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse1(g, "x.const", "const", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 0);
  {
    char *after = to_text(g);
    CHECK(before && after && strcmp(before, after) == 0); /* probes leave the graph as it was */
    free(after);
  }
  free(before);
  fuse_graph_destroy(g);
}

TEST(lang_arity_and_ellipsis) {
  seed_graph s = build_seed(0, 1);
  fuse_graph *g = s.g;
  MATCH(g, "conv2d(*, *)", s.conv);
  NO_MATCH(g, "conv2d(*)", s.conv);
  NO_MATCH(g, "conv2d(*, *, *)", s.conv);
  MATCH(g, "conv2d(*, ...)", s.conv);
  MATCH(g, "conv2d(...)", s.conv);
  MATCH(g, "conv2d(*, *, ...)", s.conv);
  NO_MATCH(g, "conv2d(*, *, *, ...)", s.conv);
  NO_MATCH(g, "relu(*, *)", s.relu);
  NO_MATCH(g, "relu()", s.relu);
  MATCH(g, "relu(...)", s.relu);
  MATCH(g, "add(conv2d(...), ...)", s.add);
  MATCH(g, "add(reshape(...), ...)", s.add); /* either order for add, with `...` too */
  fuse_graph_destroy(g);
}

TEST(lang_attribute_constraints) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs a1, a2;
  fuse_value x, w1, w2, c1, c2, k3, k4, k5, rs;
  memset(&a1, 0, sizeof a1);
  memset(&a2, 0, sizeof a2);
  a1.padding[0] = a1.padding[1] = a1.padding[2] = a1.padding[3] = 1;
  a2.groups = 2;
  a2.strides[0] = a2.strides[1] = 2;
  x = IN(g, "x", 1, 4, 8, 8);
  w1 = CST(g, "w1", 3, 4, 4, 3, 3);
  w2 = CST(g, "w2", 4, 4, 2, 3, 3);
  c1 = fuse_conv2d(g, x, w1, &a1); /* groups 1, strides 1, padding 1 */
  c2 = fuse_conv2d(g, x, w2, &a2); /* groups 2, strides 2 */
  k3 = fuse_clip(g, c1, 0, 6);
  k4 = fuse_clip(g, c2, 0, 3);
  k5 = fuse_clip(g, c1, -0.1f, 0.3f);
  rs = fuse_reshape(g, k4, 2, D(4, 9));
  fuse_output(g, k3);
  fuse_output(g, rs);
  fuse_output(g, k5);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  MATCH(g, "conv2d[groups=1](*, *)", c1);
  NO_MATCH(g, "conv2d[groups=1](*, *)", c2);
  MATCH(g, "conv2d[groups=2](*, *)", c2);
  NO_MATCH(g, "conv2d[groups=2](*, *)", c1);
  MATCH(g, "conv2d[strides=[2,2]](*, *)", c2);
  NO_MATCH(g, "conv2d[strides=[2,2]](*, *)", c1);
  MATCH(g, "conv2d[strides=[1, 1]](*, *)", c1);
  MATCH(g, "conv2d[strides=[2, 2], groups=2](*, *)", c2);
  NO_MATCH(g, "conv2d[strides=[2, 2], groups=1](*, *)", c2);
  MATCH(g, "conv2d[padding=[1, 1, 1, 1]](*, *)", c1);
  NO_MATCH(g, "conv2d[padding=[1, 1, 1, 1]](*, *)", c2);
  MATCH(g, "conv2d[dilation=[1, 1]](*, *)", c1);
  MATCH(g, "conv2d[dilation=[1, 1]](*, *)", c2);
  NO_MATCH(g, "conv2d[strides=[2]](*, *)", c2); /* a list of another length */
  MATCH(g, "clip[lo=0, hi=6](*)", k3);
  NO_MATCH(g, "clip[lo=0, hi=6](*)", k4);
  MATCH(g, "clip[hi=3](*)", k4);
  MATCH(g, "clip[lo=-0.1, hi=0.3](*)", k5); /* float attributes compare as floats */
  NO_MATCH(g, "clip[lo=-0.1, hi=0.3](*)", k3);
  MATCH(g, "clip[lo=0](conv2d[groups=2](*, *))", k4);
  NO_MATCH(g, "clip[lo=0](conv2d[groups=2](*, *))", k3);
  MATCH(g, "reshape[shape=[4, 9]](clip(*), *)", rs);
  NO_MATCH(g, "reshape[shape=[4, 8]](clip(*), *)", rs);
  NO_MATCH(g, "conv2d[lo=0](*, *)", c1); /* an attribute the op does not have */
  CHECK_EQ_INT(fuse_composite_count(g), 0);
  /* fused for real: the grouped, strided conv and its clip */
  CHECK_EQ_INT(fuse1(g, "dnnl.gconv_clip", "clip[lo=0, hi=3](conv2d[groups=2, strides=[2, 2]](*, const))", NULL),
               FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK_COMP(g, k4, "dnnl.gconv_clip", "fused_conv2d_clip", "dnnl", 2);
  CHECK_EQ_INT(fuse_value_composite(g, c1), -1);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}

TEST(lang_optional_ops) {
  seed_graph s = build_seed(0, 1), t = build_seed(0, 0);
  fuse_graph *g = s.g;
  MATCH(g, "relu?(add(*, *))", s.relu);                /* present */
  MATCH(g, "relu?(add(*, *))", s.add);                 /* absent: the add itself */
  MATCH(t.g, "relu?(add(*, *))", t.add);
  MATCH(g, "relu?(conv2d(*, *))", s.conv);
  NO_MATCH(g, "relu?(sigmoid(*))", s.relu);            /* neither relu(sigmoid) nor sigmoid */
  MATCH(g, "(relu|clip)?(add(*, *))", s.relu);
  MATCH(t.g, "(relu|clip)?(add(*, *))", t.add);
  MATCH(g, "add(conv2d(*, *), reshape?(const, *))", s.add);
  CAPTURE(g, "relu?($a:add(*, *))", s.relu, "a", s.add);
  /* fused: the largest form wins where the op is present; its name skips an absent op */
  CHECK_EQ_INT(fuse1(g, "dnnl.cbr", "relu?(add(conv2d(*, *), reshape(*, *)))", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK_COMP(g, s.relu, "dnnl.cbr", "fused_conv2d_reshape_add_relu", "dnnl", 4);
  CHECK_EQ_INT(fuse1(t.g, "dnnl.cbr", "relu?(add(conv2d(*, *), reshape(*, *)))", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(t.g), 1);
  CHECK_COMP(t.g, t.add, "dnnl.cbr", "fused_conv2d_reshape_add", "dnnl", 3);
  CHECK_TEXT(g);
  CHECK_TEXT(t.g);
  fuse_graph_destroy(g);
  fuse_graph_destroy(t.g);
  {
    /* an optional op in the middle: reshape? with a direct [1,K,1,1] bias */
    fuse_graph *h = fuse_graph_create(NULL);
    fuse_value x = IN(h, "x", 1, 2, 5, 5), w = CST(h, "w", 5, 3, 2, 1, 1);
    fuse_value b = CST(h, "b", 6, 1, 3, 1, 1), c = fuse_conv2d(h, x, w, NULL);
    fuse_value a = fuse_add(h, b, c);
    fuse_output(h, a);
    MATCH(h, "add(conv2d(*, *), reshape?(const, *))", a);
    CHECK_EQ_INT(fuse1(h, "fuse.cb", "add(conv2d(*, *), reshape?(const, *))", NULL), FUSE_OK);
    CHECK_COMP(h, a, "fuse.cb", "fused_conv2d_add", "fuse", 2);
    CHECK_TEXT(h);
    fuse_graph_destroy(h);
  }
}

/* relu / clip / sigmoid heads over one add, for alternation tests */
typedef struct act_graph {
  fuse_graph *g;
  fuse_value x, c, add, mul, relu, clip, sig;
} act_graph;

static act_graph build_act(void) {
  act_graph a;
  a.g = fuse_graph_create(NULL);
  a.x = IN(a.g, "x", 2, 3);
  a.c = CST(a.g, "c", 7, 2, 3);
  a.add = fuse_add(a.g, a.x, a.c);
  a.mul = fuse_mul(a.g, a.x, a.c);
  a.relu = fuse_relu(a.g, a.add);
  a.clip = fuse_clip(a.g, a.add, -0.5f, 0.5f);
  a.sig = fuse_sigmoid(a.g, a.mul);
  fuse_output(a.g, a.relu);
  fuse_output(a.g, a.clip);
  fuse_output(a.g, a.sig);
  return a;
}

TEST(lang_alternation_and_grouping) {
  act_graph a = build_act();
  fuse_graph *g = a.g;
  MATCH(g, "(relu|clip)(add(*, *))", a.relu);
  MATCH(g, "(relu|clip)(add(*, *))", a.clip);
  NO_MATCH(g, "(relu|clip)(*)", a.sig);
  MATCH(g, "( relu | clip | sigmoid )(*)", a.sig);
  MATCH(g, "(relu|clip)(...)", a.clip);
  MATCH(g, "(relu|clip)[hi=0.5](*)", a.clip);
  NO_MATCH(g, "(relu|clip)[hi=0.5](*)", a.relu); /* relu has no hi */
  MATCH(g, "sigmoid(*) | relu(*)", a.relu);
  MATCH(g, "relu(mul(*, *)) | relu(add(*, *))", a.relu);
  NO_MATCH(g, "relu(mul(*, *)) | clip(mul(*, *))", a.relu);
  MATCH(g, "relu((mul(*, *) | add(*, *)))", a.relu);
  NO_MATCH(g, "relu((mul(*, *)))", a.relu);
  MATCH(g, "(relu(*))", a.relu);
  MATCH(g, "((relu(*)))", a.relu);
  MATCH(g, "(sigmoid(*) | clip(*)) | relu(*)", a.relu);
  MATCH(g, "sigmoid(*) | (clip(*) | relu(*))", a.relu);
  MATCH(g, "relu(add($x, *) | mul($x, *))", a.relu);
  CAPTURE(g, "relu($v:(mul(*, *) | add(*, *)))", a.relu, "v", a.add);
  CAPTURE(g, "sigmoid($v:(add(*, *) | mul(*, *)))", a.sig, "v", a.mul);
  /* fused: the function names only the ops of the branch that matched */
  CHECK_EQ_INT(fuse1(g, "fuse.alt", "(relu|clip)(mul(*, *) | add(*, *)) | sigmoid(mul(*, *))", NULL),
               FUSE_OK);
  /* relu and clip share the add: the add escapes from either match, so only sigmoid+mul fuses */
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK_COMP(g, a.sig, "fuse.alt", "fused_mul_sigmoid", "fuse", 2);
  CHECK_EQ_INT(fuse_value_composite(g, a.relu), -1);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}

typedef fuse_value (*binop_fn)(fuse_graph *, fuse_value, fuse_value);

TEST(lang_commutative_ops) {
  static const struct {
    const char *name;
    binop_fn fn;
  } ops[] = {{"add", fuse_add}, {"mul", fuse_mul}, {"maximum", fuse_maximum}, {"minimum", fuse_minimum}};
  int i;
  char pat[160];
  for (i = 0; i < 4; i++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value x = IN(g, "x", 1, 4, 4, 4), s = fuse_sigmoid(g, x), k = CST(g, "k", 8, 1, 4, 4, 4);
    fuse_value t = ops[i].fn(g, s, k), u = ops[i].fn(g, k, s);
    fuse_value sub1 = fuse_sub(g, t, k), sub2 = fuse_sub(g, k, u);
    fuse_output(g, sub1);
    fuse_output(g, sub2);
    snprintf(pat, sizeof pat, "%s(sigmoid(*), const)", ops[i].name);
    MATCH(g, pat, t);
    MATCH(g, pat, u);
    snprintf(pat, sizeof pat, "%s(const, sigmoid(*))", ops[i].name);
    MATCH(g, pat, t);
    MATCH(g, pat, u);
    snprintf(pat, sizeof pat, "%s($a:sigmoid(*), $b)", ops[i].name);
    CAPTURE(g, pat, t, "a", s);
    CAPTURE(g, pat, u, "a", s);
    CAPTURE(g, pat, u, "b", k);
    snprintf(pat, sizeof pat, "%s(const, const)", ops[i].name);
    NO_MATCH(g, pat, t);
    /* sub is not commutative */
    MATCH(g, "sub(*, const)", sub1);
    NO_MATCH(g, "sub(*, const)", sub2);
    MATCH(g, "sub(const, *)", sub2);
    NO_MATCH(g, "sub(const, *)", sub1);
    snprintf(pat, sizeof pat, "sub(const, %s(sigmoid(*), const))", ops[i].name);
    MATCH(g, pat, sub2);
    fuse_graph_destroy(g);
  }
}

/* relu(add(B, mul(K, maximum(0.5, conv)))) with each of the three commutative ops' operands in
   either order: the pattern lists them one way and must match all 8 graphs. */
TEST(lang_commutative_at_depth) {
  int m;
  const char *pat = "relu(add(mul(maximum(conv2d(*, *), const), const), reshape(*, *)))";
  for (m = 0; m < 8; m++) {
    fuse_graph *g = fuse_graph_create(NULL), *copy;
    fuse_value x = IN(g, "x", 1, 2, 6, 6), w = named_const(g, "w", 4, D(3, 2, 3, 3), 11);
    fuse_value b = named_const(g, "b", 1, D(3), 12), k = named_const(g, "k", 4, D(1, 3, 1, 1), 13);
    fuse_value c = fuse_conv2d(g, x, w, NULL), half = fuse_scalar(g, 0.5f);
    fuse_value mx = m & 1 ? fuse_maximum(g, half, c) : fuse_maximum(g, c, half);
    fuse_value mu = m & 2 ? fuse_mul(g, k, mx) : fuse_mul(g, mx, k);
    fuse_value rs = fuse_reshape(g, b, 4, D(1, 3, 1, 1));
    fuse_value ad = m & 4 ? fuse_add(g, rs, mu) : fuse_add(g, mu, rs);
    fuse_value y = fuse_relu(g, ad);
    fuse_output(g, y);
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    MATCH(g, pat, y);
    MATCH(g, "relu(add(reshape(*, *), mul(const, maximum(const, conv2d(*, *)))))", y);
    CAPTURE(g, "relu(add(mul(maximum($c:conv2d(*, *), $lo:const), $k), *))", y, "lo", half);
    CAPTURE(g, "relu(add(mul(maximum($c:conv2d(*, *), $lo:const), $k), *))", y, "k", k);
    NO_MATCH(g, "relu(add(mul(minimum(conv2d(*, *), const), const), *))", y);
    copy = copy_graph(g);
    CHECK(copy && refill_constants(copy));
    CHECK_EQ_INT(fuse1(g, "dnnl.deep", pat, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    /* pattern post-order, whatever the graph's operand order */
    CHECK_COMP(g, y, "dnnl.deep", "fused_conv2d_maximum_mul_reshape_add_relu", "dnnl", 6);
    CHECK_EQ_INT(fuse_graph_op_count(g), 1);
    CHECK_TEXT(g);
    if (copy) CHECK_SAME_NUMBERS(copy, g, 100 + (uint32_t)m);
    fuse_graph_destroy(copy);
    fuse_graph_destroy(g);
    consts_reset();
  }
}

/* Seed 002: min(max(t, lo), hi) in every commutative form, matched by one pattern. */
TEST(lang_seed002_clipping_variants) {
  int m;
  for (m = 0; m < 4; m++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value a = IN(g, "a", 4, 8), b = CST(g, "b", 14, 8, 5), t = fuse_matmul(g, a, b);
    fuse_value lo = fuse_scalar(g, -0.25f), hi = fuse_scalar(g, 0.5f);
    fuse_value mx = m & 1 ? fuse_maximum(g, lo, t) : fuse_maximum(g, t, lo);
    fuse_value mn = m & 2 ? fuse_minimum(g, hi, mx) : fuse_minimum(g, mx, hi);
    const char *pat = "minimum(maximum(matmul($a, $b), $lo:const), $hi:const)";
    fuse_output(g, mn);
    CAPTURE(g, pat, mn, "lo", lo);
    CAPTURE(g, pat, mn, "hi", hi);
    CAPTURE(g, pat, mn, "a", a);
    CAPTURE(g, pat, mn, "b", b);
    NO_MATCH(g, "maximum(minimum(matmul($a, $b), $hi:const), $lo:const)", mn);
    CHECK_EQ_INT(fuse1(g, "dnnl.matmul_clip", pat, NULL), FUSE_OK);
    CHECK_COMP(g, mn, "dnnl.matmul_clip", "fused_matmul_maximum_minimum", "dnnl", 3);
    CHECK_TEXT(g);
    fuse_graph_destroy(g);
  }
}

TEST(lang_repeated_capture) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 3), y = IN(g, "y", 2, 3);
  fuse_value xx = fuse_add(g, x, x), xy = fuse_add(g, x, y);
  fuse_value m1 = fuse_mul(g, x, fuse_add(g, y, x)); /* mul(x, add(y, x)) */
  fuse_value m2 = fuse_mul(g, x, fuse_add(g, y, y)); /* mul(x, add(y, y)) */
  fuse_value m3 = fuse_mul(g, fuse_add(g, x, y), y); /* mul(add(x, y), y) */
  fuse_output(g, xx);
  fuse_output(g, xy);
  fuse_output(g, m1);
  fuse_output(g, m2);
  fuse_output(g, m3);
  MATCH(g, "add($p, $p)", xx);
  NO_MATCH(g, "add($p, $p)", xy);
  MATCH(g, "add($p, $q)", xy);
  CAPTURE(g, "add($p, $p)", xx, "p", x);
  MATCH(g, "mul($x, add($x, *))", m1);    /* the inner add matches with its operands swapped */
  CAPTURE(g, "mul($x, add($x, *))", m1, "x", x);
  NO_MATCH(g, "mul($x, add($x, *))", m2); /* add(y, y) holds no x */
  MATCH(g, "mul($x, add($x, *))", m3);    /* both levels swapped: x = y */
  CAPTURE(g, "mul($x, add($x, *))", m3, "x", y);
  CAPTURE(g, "add($p, $p) | add($p, $q)", xy, "q", y); /* the failed branch binds nothing */
  CAPTURE(g, "add($p, $p) | add($p, $q)", xy, "p", x);
  CAPTURE(g, "mul($v, add($w, $w))", m2, "w", y);
  NO_MATCH(g, "mul($v, add($v, $v))", m2);
  CHECK_EQ_INT(fuse1(g, "fuse.twice", "add($p, $p)", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 2); /* add(x, x) and the add(y, y) inside m2 */
  CHECK_COMP(g, xx, "fuse.twice", "fused_add", "fuse", 1);
  CHECK_EQ_INT(fuse_value_composite(g, xy), -1);
  CHECK_EQ_INT(fuse_value_composite(g, m1), -1);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}


/* Capture names are compared whole: two long names sharing a prefix are two captures. */
TEST(lang_long_capture_names) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 3), y = IN(g, "y", 3), a = fuse_add(g, x, y), b = fuse_add(g, x, x);
  const char *pat = "add($a_very_long_capture_name_that_goes_on_and_on_1, "
                    "$a_very_long_capture_name_that_goes_on_and_on_2)";
  fuse_output(g, a);
  fuse_output(g, b);
  MATCH(g, pat, a);
  MATCH(g, pat, b);
  CAPTURE(g, pat, a, "a_very_long_capture_name_that_goes_on_and_on_2", y);
  CAPTURE(g, "add($a_very_long_capture_name_that_goes_on_and_on_1, *)", a,
          "a_very_long_capture_name_that_goes_on_and_on_1", x);
  fuse_graph_destroy(g);
}

/* One op reached twice through the pattern is one member; two equal-looking ops are two. */
TEST(lang_shared_subpattern) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 1, 2, 4, 4), w = CST(g, "w", 91, 2, 2, 1, 1);
  fuse_value c = fuse_conv2d(g, x, w, NULL), y = fuse_add(g, c, fuse_relu(g, c));
  fuse_value c1 = fuse_conv2d(g, x, w, NULL), c2 = fuse_conv2d(g, x, w, NULL);
  fuse_value z = fuse_add(g, c1, fuse_relu(g, c2));
  const char *pat = "add(conv2d($x, *), relu(conv2d($x, *)))";
  fuse_output(g, y);
  fuse_output(g, z);
  MATCH(g, pat, y);
  MATCH(g, pat, z);
  CHECK_EQ_INT(fuse1(g, "fuse.shared", pat, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 2);
  CHECK_COMP(g, y, "fuse.shared", "fused_conv2d_relu_add", "fuse", 3);
  CHECK_COMP(g, z, "fuse.shared", "fused_conv2d_conv2d_relu_add", "fuse", 4);
  CHECK_EQ_INT(fuse_graph_op_count(g), 2);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}

/* =============================================== 2. pattern parse errors == */

static char *repeat3(const char *head, int n, const char *mid, const char *tail, int m) {
  size_t lh = strlen(head), lm = strlen(mid), lt = strlen(tail);
  char *s = (char *)malloc(lh * (size_t)n + lm + lt * (size_t)m + 1), *p = s;
  int i;
  for (i = 0; i < n; i++, p += lh) memcpy(p, head, lh);
  memcpy(p, mid, lm);
  p += lm;
  for (i = 0; i < m; i++, p += lt) memcpy(p, tail, lt);
  *p = 0;
  return s;
}

/* A bad pattern: FUSE_ERROR_PARSE, "pattern of rule 'NAME', position N: expected ...", the
   graph untouched, still OK, still compiles and computes the same numbers. */
static void expect_pattern_error_(const char *pattern, const char *where, int line) {
  seed_graph s = build_seed(0, 1), ref = build_seed(0, 1);
  fuse_graph *g = s.g;
  char *before = to_text(g), *after;
  fuse_rule rules[2];
  fuse_result r;
  const char *msg;
  rules[0].name = "dnnl.ok";
  rules[0].pattern = "relu(*)";
  rules[0].check = NULL;
  rules[0].user = NULL;
  rules[1].name = "dnnl.bad";
  rules[1].pattern = pattern;
  rules[1].check = NULL;
  rules[1].user = NULL;
  r = fuse_ops_by_pattern(g, rules, 2, NULL); /* the good first rule must not apply either */
  msg = fuse_graph_error(g);
  if (r != PRS)
    failf(line, "pattern \"%.60s\": %s, want FUSE_ERROR_PARSE", pattern ? pattern : "(NULL)",
          fuse_result_string(r));
  if (!msg || !strstr(msg, "position ") || !strstr(msg, "expected") || !strstr(msg, "'dnnl.bad'"))
    failf(line, "pattern \"%.60s\": message \"%s\"", pattern ? pattern : "(NULL)", msg ? msg : "(null)");
  if (where && (!msg || !strstr(msg, where)))
    failf(line, "pattern \"%.60s\": message \"%s\" lacks \"%s\"", pattern ? pattern : "(NULL)",
          msg ? msg : "(null)", where);
  if (fuse_graph_status(g) != FUSE_OK) failf(line, "graph status %d after a pattern error", fuse_graph_status(g));
  if (fuse_composite_count(g) != 0) failf(line, "%d composites after a pattern error", fuse_composite_count(g));
  if (fuse_value_composite(g, s.relu) != -1) failf(line, "relu in a composite");
  after = to_text(g);
  if (!before || !after || strcmp(before, after) != 0) failf(line, "graph text changed:\n%s", after);
  free(before);
  free(after);
  CHECK_SAME_NUMBERS(ref.g, g, 7);
  /* and the graph still fuses afterwards */
  if (fuse1(g, "dnnl.seed", SEED_PATTERN, NULL) != FUSE_OK || fuse_composite_count(g) != 1)
    failf(line, "the graph does not fuse after a pattern error: %s", fuse_graph_error(g));
  else if (fuse_graph_error(g)[0] != 0)
    failf(line, "stale error message after a successful pass: %s", fuse_graph_error(g));
  fuse_graph_destroy(g);
  fuse_graph_destroy(ref.g);
}
#define PATTERN_ERROR(p, where) expect_pattern_error_((p), (where), __LINE__)

TEST(pattern_parse_errors) {
  char *s;
  PATTERN_ERROR("", "position 1:");
  PATTERN_ERROR("   ", "position 4:");
  PATTERN_ERROR(NULL, "position 1:");
  PATTERN_ERROR("foo(*)", "position 1:");
  PATTERN_ERROR("relu(foo(*))", "position 6:");
  PATTERN_ERROR("(relu|foo)(*)", NULL);
  PATTERN_ERROR("relu(*", "position 7:");
  PATTERN_ERROR("relu(add(*, *)", "position 15:");
  PATTERN_ERROR("add(*, , *)", "position 8:");
  PATTERN_ERROR("add(, *)", "position 5:");
  PATTERN_ERROR("add(*, *,)", "position 10:");
  PATTERN_ERROR("relu(*),", "position 8:");
  PATTERN_ERROR("$", "position 2:");
  PATTERN_ERROR("relu($)", "position 7:");
  PATTERN_ERROR("relu($ x)", NULL);
  PATTERN_ERROR("relu($1)", NULL);
  PATTERN_ERROR("relu?()", NULL);
  PATTERN_ERROR("(relu|clip)?()", NULL);
  PATTERN_ERROR("relu(*) x", "position 9:");
  PATTERN_ERROR("relu(*))", "position 8:");
  PATTERN_ERROR("relu(*) relu(*)", "position 9:");
  PATTERN_ERROR("relu", "position 5:");
  PATTERN_ERROR("relu *", NULL);
  PATTERN_ERROR("(relu|clip)", NULL);
  PATTERN_ERROR("relu(*) |", NULL);
  PATTERN_ERROR("| relu(*)", "position 1:");
  PATTERN_ERROR("relu(*) || relu(*)", NULL);
  PATTERN_ERROR("$x:", NULL);
  PATTERN_ERROR("(relu(*)", NULL);
  PATTERN_ERROR("relu(..)", NULL);
  PATTERN_ERROR("add(..., *)", NULL); /* `...` only last */
  PATTERN_ERROR("const(*)", NULL);
  /* attribute lists */
  PATTERN_ERROR("conv2d[groups](*, *)", NULL);
  PATTERN_ERROR("conv2d[groups=](*, *)", NULL);
  PATTERN_ERROR("conv2d[=1](*, *)", "position 8:");
  PATTERN_ERROR("conv2d[groups=1(*, *)", NULL);
  PATTERN_ERROR("conv2d[groups=1,](*, *)", NULL);
  PATTERN_ERROR("conv2d[](*, *)", NULL);
  PATTERN_ERROR("conv2d[strides=[1,1](*, *)", NULL);
  PATTERN_ERROR("conv2d[strides=[1 1]](*, *)", NULL);
  PATTERN_ERROR("conv2d[strides=[1,,1]](*, *)", NULL);
  PATTERN_ERROR("conv2d[groups=one](*, *)", NULL);
  PATTERN_ERROR("conv2d[strides=[1,1,1,1,1,1,1,1,1]](*, *)", NULL);
  PATTERN_ERROR("conv2d[groups=1] (*, *) extra", NULL);
  /* too big: more pattern nodes than the parser keeps */
  s = repeat3("relu(", 300, "*", ")", 300);
  PATTERN_ERROR(s, NULL);
  free(s);
  s = repeat3("relu(*) | ", 300, "relu(*)", "", 0);
  PATTERN_ERROR(s, NULL);
  free(s);
  s = repeat3("add(*, ", 200, "*", ")", 200);
  PATTERN_ERROR(s, NULL);
  free(s);
  s = repeat3("conv2d[groups=1, ", 20, "groups=1", "", 0);
  {
    char *t = (char *)malloc(strlen(s) + 16);
    sprintf(t, "%s](*, *)", s);
    PATTERN_ERROR(t, NULL);
    free(t);
  }
  free(s);
  {
    /* 17 distinct capture names */
    char buf[512];
    int i, n = 0;
    n += sprintf(buf + n, "concat(");
    for (i = 0; i < 17; i++) n += sprintf(buf + n, "%s$c%d", i ? ", " : "", i);
    sprintf(buf + n, ")");
    PATTERN_ERROR(buf, NULL);
  }
  /* a rule without a name is an invalid argument, and also leaves the graph alone */
  {
    seed_graph g = build_seed(0, 1);
    fuse_rule r[2] = {{"dnnl.a", "relu(*)", NULL, NULL}, {NULL, "relu(*)", NULL, NULL}};
    CHECK_EQ_INT(fuse_ops_by_pattern(g.g, r, 2, NULL), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_composite_count(g.g), 0);
    CHECK_EQ_INT(fuse_graph_status(g.g), FUSE_OK);
    CHECK_EQ_INT(fuse_ops_by_pattern(g.g, NULL, 1, NULL), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_ops_by_pattern(g.g, r, -1, NULL), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_ops_by_pattern(NULL, r, 1, NULL), FUSE_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(fuse_graph_status(g.g), FUSE_OK);
    fuse_graph_destroy(g.g);
  }
}

/* Deep nesting that makes no pattern node (groups, captures of captures) must be refused, not
   recurse until the stack runs out. Run in a child so a crash is a failed check. */
static int pattern_in_child(const char *pattern, char *msg, size_t cap) {
  int fds[2], st = 0;
  pid_t pid;
  ssize_t got;
  if (pipe(fds) != 0) return -1;
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid == 0) {
    seed_graph s;
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2); /* a sanitizer's stack-overflow report is long */
    s = build_seed(0, 1);
    fuse_result r = fuse1(s.g, "dnnl.deep", pattern, NULL);
    const char *e = fuse_graph_error(s.g);
    close(fds[0]);
    if (write(fds[1], e, strlen(e) + 1) < 0) _exit(3);
    _exit(r == PRS && fuse_graph_status(s.g) == FUSE_OK && fuse_composite_count(s.g) == 0 ? 0 : 2);
  }
  close(fds[1]);
  got = read(fds[0], msg, cap - 1);
  msg[got > 0 ? got : 0] = 0;
  close(fds[0]);
  waitpid(pid, &st, 0);
  if (WIFSIGNALED(st)) return -WTERMSIG(st);
  return WEXITSTATUS(st);
}

TEST(pattern_deep_nesting_refused) {
  static const struct {
    const char *head, *mid, *tail;
  } cases[] = {{"(", "relu(*)", ")"}, {"$a:", "relu(*)", ""}, {"relu(", "*", ")"}, {"(", "*", ""}};
  int i;
  char msg[600];
  for (i = 0; i < 4; i++) {
    char *s = repeat3(cases[i].head, 200000, cases[i].mid, cases[i].tail, cases[i].tail[0] ? 200000 : 0);
    int r = pattern_in_child(s, msg, sizeof msg);
    if (r != 0)
      failf(__LINE__, "200000 x \"%s\" around \"%s\": child %s %d (want FUSE_ERROR_PARSE): %s",
            cases[i].head, cases[i].mid, r < 0 ? "killed by signal" : "exit", r < 0 ? -r : r, msg);
    else if (!strstr(msg, "position ") || !strstr(msg, "expected"))
      failf(__LINE__, "message \"%s\"", msg);
    free(s);
  }
}

/* A pattern the parser accepts must also be able to match: a chain of 150 relus. */
TEST(pattern_long_chain_matches) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value v = IN(g, "x", 2, 2);
  int i;
  char *pat = repeat3("relu(", 150, "*", ")", 150);
  for (i = 0; i < 150; i++) v = fuse_relu(g, v);
  fuse_output(g, v);
  CHECK_EQ_INT(fuse1(g, "fuse.long", pat, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  free(pat);
  fuse_graph_destroy(g);
}


/* The function name lists every op, however many. */
TEST(long_function_name) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value v = IN(g, "x", 2, 2);
  fuse_composite_info info;
  char *pat = repeat3("relu(", 120, "*", ")", 120), *want = repeat3("_relu", 120, "", "", 0);
  char *function = (char *)malloc(strlen(want) + 8);
  int i;
  sprintf(function, "fused%s", want);
  for (i = 0; i < 120; i++) v = fuse_relu(g, v);
  fuse_output(g, v);
  CHECK_EQ_INT(fuse1(g, "fuse.long", pat, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  if (fuse_composite_count(g) == 1) {
    fuse_composite_get(g, 0, &info);
    CHECK_EQ_INT(info.num_ops, 120);
    CHECK_EQ_INT(strlen(info.function), strlen(function));
    CHECK(strcmp(info.function, function) == 0);
    CHECK_TEXT(g);
  }
  free(pat);
  free(want);
  free(function);
  fuse_graph_destroy(g);
}

int main(void) {
  RUN(lang_wildcards_captures_const);
  RUN(lang_arity_and_ellipsis);
  RUN(lang_attribute_constraints);
  RUN(lang_optional_ops);
  RUN(lang_alternation_and_grouping);
  RUN(lang_commutative_ops);
  RUN(lang_commutative_at_depth);
  RUN(lang_seed002_clipping_variants);
  RUN(lang_repeated_capture);
  RUN(lang_long_capture_names);
  RUN(lang_shared_subpattern);
  RUN(pattern_parse_errors);
  RUN(pattern_deep_nesting_refused);
  RUN(pattern_long_chain_matches);
  RUN(long_function_name);
  return runner_finish("pattern");
}
