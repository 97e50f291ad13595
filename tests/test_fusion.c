/* test_fusion.c - the fusion passes: fuse_ops_by_pattern semantics (priority, largest match,
   the seed 000/001/003 scenarios, escaping intermediates, convexity, check callbacks, options,
   repeated calls); fuse_merge_composites (chains, codegens, the diamond, numbering); the text
   form of composites (round trip, parse, parse errors); composite counting; and a randomized
   check that fuse_optimize makes each conv2d / matmul chain one op that compiles to one fused
   step (fuse_plan_write) computing the same numbers as the unfused graph. */
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

/* ================================================ 3. fuse_ops_by_pattern == */

TEST(seed_000_001_conv2d_reshape_add_relu) {
  int swap;
  for (swap = 0; swap < 2; swap++) {
    seed_graph s = build_seed(swap, 1), ref = build_seed(swap, 1);
    fuse_graph *g = s.g;
    fuse_composite_info info;
    char *text;
    CHECK_EQ_INT(fuse_graph_op_count(g), 4);
    CHECK_EQ_INT(fuse1(g, "dnnl.conv2d_reshape_add_relu", SEED_PATTERN, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(g), 1);
    CHECK_EQ_INT(fuse_graph_op_count(g), 1);
    CHECK_COMP(g, s.relu, "dnnl.conv2d_reshape_add_relu", "fused_conv2d_reshape_add_relu", "dnnl", 4);
    CHECK(comp_of_(g, s.relu, &info, __LINE__));
    CHECK_EQ_INT(info.root, s.relu);
    CHECK_EQ_INT(info.region, -1);
    CHECK(info.has_epilogue);
    CHECK_EQ_INT(info.epilogue.reduction, s.conv);
    CHECK_EQ_INT(info.epilogue.bias, s.bias);
    CHECK_EQ_INT(info.epilogue.num_post, 1);
    CHECK(info.epilogue.post[0].kind == FUSE_POST_CLAMP && info.epilogue.post[0].lo == 0 &&
          info.epilogue.post[0].hi == INFINITY);
    CHECK_EQ_INT(fuse_value_composite(g, s.conv), 0);
    CHECK_EQ_INT(fuse_value_composite(g, s.reshape), 0);
    CHECK_EQ_INT(fuse_value_composite(g, s.add), 0);
    CHECK_EQ_INT(fuse_value_composite(g, s.bias), -1); /* bound constants are not members */
    CHECK_EQ_INT(fuse_value_composite(g, s.data), -1);
    text = to_text(g);
    CHECK_STR_CONTAINS(text, "composite \"dnnl.conv2d_reshape_add_relu\" \"fused_conv2d_reshape_add_relu\" codegen=\"dnnl\" region=-1 bind_constants=1 {");
    free(text);
    CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
    CHECK(comp_of_(g, s.relu, &info, __LINE__));
    CHECK_EQ_INT(info.region, 0);
    text = to_text(g);
    CHECK_STR_CONTAINS(text, "codegen=\"dnnl\" region=0 bind_constants=1 {");
    free(text);
    CHECK_TEXT(g);
    CHECK_SAME_NUMBERS(ref.g, g, 31);
    {
      int steps;
      char *plan = plan_text(g, &steps);
      CHECK_EQ_INT(steps, 1); /* conv2d + bias + relu as one step */
      CHECK_STR_CONTAINS(plan, "step 0: conv2d + bias + clamp[");
      CHECK_STR_CONTAINS(plan, "(composite dnnl.conv2d_reshape_add_relu)");
      free(plan);
    }
    fuse_graph_destroy(g);
    fuse_graph_destroy(ref.g);
  }
}

/* Seed 003's models, with the seed's shapes; weights bound as constants (BindParams). */
static fuse_graph *build_conv2d_relu_x(int n_conv, int relu_on_first, fuse_value *relus,
                                       fuse_value *convs) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs a;
  fuse_value v = IN(g, "data", 1, 64, 56, 56);
  int i;
  for (i = 0; i < n_conv; i++) {
    char name[32];
    snprintf(name, sizeof name, "weight%d", i + 1);
    memset(&a, 0, sizeof a);
    if (i == 0) a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
    v = convs[i] = fuse_conv2d(g, v, CST(g, name, 40 + (uint32_t)i, 64, 64, 3, 3), &a);
    relus[i] = FUSE_NONE;
    if (i > 0 || relu_on_first) v = relus[i] = fuse_relu(g, v);
  }
  fuse_output(g, v);
  return g;
}

static const char *CONV2D_RELU_PAT = "relu(conv2d($data, $weight))"; /* make_fused_bias_activation_pattern */
static const char *CONV2D_PAT = "conv2d($data, $weight)";           /* ... with activation=None */

static int weight_is_bound(const fuse_graph *g, const fuse_match *m, void *user) {
  fuse_value w = fuse_match_capture(m, "weight");
  int *seen = (int *)user;
  if (w != FUSE_NONE && fuse_value_rank(g, w) == 4 && fuse_value_name(g, w) &&
      strncmp(fuse_value_name(g, w), "weight", 6) == 0)
    (*seen)++;
  return 1;
}

TEST(seed_003_conv2d_relu) {
  fuse_value relus[2], convs[2];
  fuse_graph *g = build_conv2d_relu_x(1, 1, relus, convs);
  fuse_pattern_options o;
  fuse_rule rule = {"dnnl.conv2d_relu", NULL, weight_is_bound, NULL};
  int seen = 0;
  char *before = to_text(g), *after;
  memset(&o, 0, sizeof o); /* bind_constants=True, annotate_codegen=True */
  /* empty rule list: nothing happens */
  CHECK_EQ_INT(fuse_ops_by_pattern(g, NULL, 0, &o), FUSE_OK);
  CHECK_EQ_INT(fuse_ops_by_pattern(g, &rule, 0, &o), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 0);
  after = to_text(g);
  CHECK(before && after && strcmp(before, after) == 0);
  free(after);
  free(before);
  rule.pattern = CONV2D_RELU_PAT;
  rule.user = &seen;
  CHECK_EQ_INT(fuse_ops_by_pattern(g, &rule, 1, &o), FUSE_OK);
  CHECK_EQ_INT(seen, 1);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK_COMP(g, relus[0], "dnnl.conv2d_relu", "fused_conv2d_relu", "dnnl", 2);
  CHECK_EQ_INT(fuse_graph_op_count(g), 1);
  after = to_text(g);
  CHECK_STR_CONTAINS(after, "composite \"dnnl.conv2d_relu\" \"fused_conv2d_relu\" codegen=\"dnnl\" region=-1 bind_constants=1 {");
  CHECK_STR_CONTAINS(after, "= conv2d(%data, %weight1, "); /* the weight, a constant, is its operand */
  free(after);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}

TEST(seed_003_conv2d_relu_x2_and_priority) {
  fuse_value relus[2], convs[2];
  fuse_rule conv2d_relu = {"dnnl.conv2d_relu", NULL, NULL, NULL};
  fuse_rule conv2d = {"dnnl.conv2d", NULL, NULL, NULL};
  fuse_rule rules[2];
  fuse_graph *g;
  conv2d_relu.pattern = CONV2D_RELU_PAT;
  conv2d.pattern = CONV2D_PAT;
  /* Conv2dReLUx2 with [conv2d_relu]: two composites */
  g = build_conv2d_relu_x(2, 1, relus, convs);
  CHECK_EQ_INT(fuse_graph_op_count(g), 4);
  CHECK_EQ_INT(fuse_ops_by_pattern(g, &conv2d_relu, 1, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 2);
  CHECK_COMP(g, relus[0], "dnnl.conv2d_relu", "fused_conv2d_relu", "dnnl", 2);
  CHECK_COMP(g, relus[1], "dnnl.conv2d_relu", "fused_conv2d_relu", "dnnl", 2);
  CHECK(fuse_value_composite(g, relus[0]) != fuse_value_composite(g, relus[1]));
  CHECK_EQ_INT(fuse_graph_op_count(g), 2);
  CHECK_TEXT(g);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  {
    fuse_composite_info a, b;
    CHECK(comp_of_(g, relus[0], &a, __LINE__) && comp_of_(g, relus[1], &b, __LINE__));
    CHECK_EQ_INT(a.region, 0);
    CHECK_EQ_INT(b.region, 0);
  }
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
  /* the order surprise: [conv2d, conv2d_relu] fuses both convs alone, the relus stay */
  g = build_conv2d_relu_x(2, 1, relus, convs);
  rules[0] = conv2d;
  rules[1] = conv2d_relu;
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 2);
  CHECK_COMP(g, convs[0], "dnnl.conv2d", "fused_conv2d", "dnnl", 1);
  CHECK_COMP(g, convs[1], "dnnl.conv2d", "fused_conv2d", "dnnl", 1);
  CHECK_EQ_INT(fuse_value_composite(g, relus[0]), -1);
  CHECK_EQ_INT(fuse_value_composite(g, relus[1]), -1);
  CHECK_EQ_INT(fuse_graph_op_count(g), 4);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
  /* [conv2d_relu, conv2d]: two conv2d_relu composites */
  g = build_conv2d_relu_x(2, 1, relus, convs);
  rules[0] = conv2d_relu;
  rules[1] = conv2d;
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 2);
  CHECK_COMP(g, relus[0], "dnnl.conv2d_relu", "fused_conv2d_relu", "dnnl", 2);
  CHECK_COMP(g, relus[1], "dnnl.conv2d_relu", "fused_conv2d_relu", "dnnl", 2);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
  /* Conv2dConv2dReLU with [conv2d_relu, conv2d]: conv1 alone, conv2 + relu */
  g = build_conv2d_relu_x(2, 0, relus, convs);
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 2);
  CHECK_COMP(g, convs[0], "dnnl.conv2d", "fused_conv2d", "dnnl", 1);
  CHECK_COMP(g, relus[1], "dnnl.conv2d_relu", "fused_conv2d_relu", "dnnl", 2);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}

TEST(priority_first_rule_wins) {
  seed_graph s = build_seed(0, 1);
  fuse_rule rules[2] = {{"x.small", "relu(add(*, *))", NULL, NULL},
                        {"x.big", "relu(add(conv2d(*, *), *))", NULL, NULL}};
  CHECK_EQ_INT(fuse_ops_by_pattern(s.g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(s.g), 1);
  CHECK_COMP(s.g, s.relu, "x.small", "fused_add_relu", "x", 2);
  CHECK_EQ_INT(fuse_value_composite(s.g, s.conv), -1);
  CHECK_EQ_INT(fuse_graph_op_count(s.g), 3); /* conv, reshape, composite */
  CHECK_TEXT(s.g);
  fuse_graph_destroy(s.g);
  s = build_seed(0, 1);
  rules[0].name = "x.big";
  rules[0].pattern = "relu(add(conv2d(*, *), *))";
  rules[1].name = "x.small";
  rules[1].pattern = "relu(add(*, *))";
  CHECK_EQ_INT(fuse_ops_by_pattern(s.g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(s.g), 1);
  CHECK_COMP(s.g, s.relu, "x.big", "fused_conv2d_add_relu", "x", 3);
  CHECK_TEXT(s.g);
  fuse_graph_destroy(s.g);
}

TEST(largest_match_of_a_rule_wins) {
  seed_graph s = build_seed(0, 1);
  fuse_value relus[2], convs[2];
  fuse_graph *g;
  /* the add (earlier in graph order) and the relu both root a match; the relu's is larger */
  CHECK_EQ_INT(fuse1(s.g, "fuse.r", "relu?(add(*, reshape?(*, *)))", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(s.g), 1);
  CHECK_COMP(s.g, s.relu, "fuse.r", "fused_reshape_add_relu", "fuse", 3);
  CHECK_TEXT(s.g);
  fuse_graph_destroy(s.g);
  /* a chain where each relu could take its conv or not */
  g = build_conv2d_relu_x(2, 1, relus, convs);
  CHECK_EQ_INT(fuse1(g, "fuse.cr", "relu?(conv2d(*, *))", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 2);
  CHECK_COMP(g, relus[0], "fuse.cr", "fused_conv2d_relu", "fuse", 2);
  CHECK_COMP(g, relus[1], "fuse.cr", "fused_conv2d_relu", "fuse", 2);
  fuse_graph_destroy(g);
  /* overlapping matches of different sizes: relu(relu(relu(x))) with `relu(relu?(*))`:
     largest first (2 ops at the last relu), then the first relu alone */
  {
    fuse_graph *h = fuse_graph_create(NULL);
    fuse_value x = IN(h, "x", 3), r1 = fuse_relu(h, x), r2 = fuse_relu(h, r1), r3 = fuse_relu(h, r2);
    fuse_output(h, r3);
    CHECK_EQ_INT(fuse1(h, "fuse.rr", "relu(relu?(*))", NULL), FUSE_OK);
    /* 2-op candidates (r1,r2) at r2 and (r2,r3) at r3, ties in graph order: r2's wins; r3's
       match overlaps it and each op roots one match, so r3 stays alone (as the spec says) */
    CHECK_EQ_INT(fuse_composite_count(h), 1);
    CHECK_EQ_INT(fuse_value_composite(h, r1), fuse_value_composite(h, r2));
    CHECK_COMP(h, r2, "fuse.rr", "fused_relu_relu", "fuse", 2);
    CHECK_EQ_INT(fuse_value_composite(h, r3), -1);
    CHECK_TEXT(h);
    fuse_graph_destroy(h);
  }
}

/* conv -> add(bias) -> relu, where the add is also used by a sigmoid (escape) */
typedef struct esc_graph {
  fuse_graph *g;
  fuse_value conv, add, relu, sig;
} esc_graph;

static esc_graph build_escape(int add_is_output) {
  esc_graph e;
  fuse_value x, w, b;
  e.g = fuse_graph_create(NULL);
  x = IN(e.g, "x", 1, 2, 5, 5);
  w = CST(e.g, "w", 21, 3, 2, 3, 3);
  b = CST(e.g, "b", 22, 3);
  e.conv = fuse_conv2d(e.g, x, w, NULL);
  e.add = fuse_add(e.g, e.conv, fuse_reshape(e.g, b, 4, D(1, 3, 1, 1)));
  e.relu = fuse_relu(e.g, e.add);
  e.sig = FUSE_NONE;
  fuse_output(e.g, e.relu);
  if (add_is_output) fuse_output(e.g, e.add);
  else fuse_output(e.g, e.sig = fuse_sigmoid(e.g, e.add));
  return e;
}

TEST(escaping_intermediates) {
  int as_output;
  for (as_output = 0; as_output < 2; as_output++) {
    esc_graph e = build_escape(as_output), ref = build_escape(as_output);
    fuse_pattern_options o;
    memset(&o, 0, sizeof o);
    /* rejected by default: the add is used outside (or is a graph output) */
    CHECK_EQ_INT(fuse1(e.g, "dnnl.seed", SEED_PATTERN, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(e.g), 0);
    CHECK_EQ_INT(fuse1(e.g, "dnnl.seed", SEED_PATTERN, &o), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(e.g), 0);
    /* the smaller match whose root is the escaping value is fine */
    CHECK_EQ_INT(fuse1(e.g, "dnnl.cba", "add(conv2d(*, *), reshape(*, *))", NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(e.g), 1);
    CHECK_COMP(e.g, e.add, "dnnl.cba", "fused_conv2d_reshape_add", "dnnl", 3);
    CHECK_TEXT(e.g);
    CHECK_SAME_NUMBERS(ref.g, e.g, 41);
    fuse_graph_destroy(e.g);
    /* accepted with allow_escaping, computing the same numbers */
    e = build_escape(as_output);
    o.allow_escaping = 1;
    CHECK_EQ_INT(fuse1(e.g, "dnnl.seed", SEED_PATTERN, &o), FUSE_OK);
    CHECK_EQ_INT(fuse_composite_count(e.g), 1);
    CHECK_COMP(e.g, e.relu, "dnnl.seed", "fused_conv2d_reshape_add_relu", "dnnl", 4);
    CHECK_TEXT(e.g);
    CHECK_SAME_NUMBERS(ref.g, e.g, 42);
    {
      /* the add is needed outside: the composite must run op by op, not as one fused step */
      int steps;
      char *plan = plan_text(e.g, &steps);
      CHECK(steps >= 3);
      CHECK(plan && !strstr(plan, "+ bias"));
      free(plan);
    }
    CHECK_EQ_INT(fuse_merge_composites(e.g), FUSE_OK);
    CHECK_TEXT(e.g);
    CHECK_SAME_NUMBERS(ref.g, e.g, 43);
    fuse_graph_destroy(e.g);
    fuse_graph_destroy(ref.g);
  }
  {
    /* the same value used twice by a member is not an escape */
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value x = IN(g, "x", 4), s = fuse_sigmoid(g, x), m = fuse_mul(g, s, s), r = fuse_relu(g, m);
    fuse_output(g, r);
    CHECK_EQ_INT(fuse1(g, "fuse.sq", "relu(mul($a:sigmoid(*), $a))", NULL), FUSE_OK);
    CHECK_COMP(g, r, "fuse.sq", "fused_sigmoid_mul_relu", "fuse", 3);
    CHECK_TEXT(g);
    fuse_graph_destroy(g);
  }
}

/* With escaping allowed a match must still be convex: conv -> sigmoid -> add(conv, sigmoid). */
TEST(escaping_needs_convexity) {
  fuse_graph *g = fuse_graph_create(NULL), *ref;
  fuse_pattern_options o;
  fuse_value x = IN(g, "x", 1, 2, 5, 5), w = named_const(g, "w", 4, D(3, 2, 3, 3), 51);
  fuse_value c = fuse_conv2d(g, x, w, NULL), s = fuse_sigmoid(g, c), a = fuse_add(g, c, s);
  fuse_value r = fuse_relu(g, a);
  fuse_output(g, r);
  ref = copy_graph(g);
  CHECK(ref && refill_constants(ref));
  memset(&o, 0, sizeof o);
  o.allow_escaping = 1;
  CHECK_EQ_INT(fuse1(g, "fuse.nc", "relu(add(conv2d(*, *), *))", &o), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 0);
  CHECK_EQ_INT(fuse1(g, "fuse.nc", "relu(add(conv2d(*, *), *))", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 0);
  /* including the sigmoid makes it convex */
  CHECK_EQ_INT(fuse1(g, "fuse.c", "relu(add($c:conv2d(*, *), sigmoid($c)))", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 1);
  CHECK_COMP(g, r, "fuse.c", "fused_conv2d_sigmoid_add_relu", "fuse", 4);
  CHECK_TEXT(g);
  if (ref) CHECK_SAME_NUMBERS(ref, g, 52);
  fuse_graph_destroy(ref);
  fuse_graph_destroy(g);
  consts_reset();
}

typedef struct check_log {
  int calls, accept;
  fuse_value root, data, weight, bias, other, null_name, missing;
} check_log;

static int log_check(const fuse_graph *g, const fuse_match *m, void *user) {
  check_log *l = (check_log *)user;
  (void)g;
  l->calls++;
  l->root = fuse_match_root(m);
  l->data = fuse_match_capture(m, "data");
  l->weight = fuse_match_capture(m, "weight");
  l->bias = fuse_match_capture(m, "bias");
  l->other = fuse_match_capture(m, "other");
  l->null_name = fuse_match_capture(m, NULL);
  l->missing = fuse_match_capture(m, "no_such_capture");
  return l->accept;
}

TEST(check_callback) {
  int accept;
  CHECK_EQ_INT(fuse_match_capture(NULL, "x"), FUSE_NONE);
  CHECK_EQ_INT(fuse_match_root(NULL), FUSE_NONE);
  for (accept = 0; accept < 2; accept++) {
    seed_graph s = build_seed(1, 1);
    check_log l;
    fuse_rule rule;
    memset(&l, 0, sizeof l);
    l.accept = accept;
    rule.name = "dnnl.conv2d_reshape_add_relu";
    /* $other is in a branch that does not match: unbound */
    rule.pattern = "relu(add(conv2d($data, $weight), reshape($bias, *))) | relu($other)";
    rule.check = log_check;
    rule.user = &l;
    CHECK_EQ_INT(fuse_ops_by_pattern(s.g, &rule, 1, NULL), FUSE_OK);
    CHECK_EQ_INT(l.calls, 1);
    CHECK_EQ_INT(l.root, s.relu);
    CHECK_EQ_INT(l.data, s.data);
    CHECK_EQ_INT(l.weight, s.weight);
    CHECK_EQ_INT(l.bias, s.bias);
    CHECK_EQ_INT(l.other, FUSE_NONE);
    CHECK_EQ_INT(l.null_name, FUSE_NONE);
    CHECK_EQ_INT(l.missing, FUSE_NONE);
    CHECK_EQ_INT(fuse_composite_count(s.g), accept ? 1 : 0);
    CHECK_EQ_INT(fuse_graph_op_count(s.g), accept ? 1 : 4);
    CHECK_EQ_INT(fuse_graph_status(s.g), FUSE_OK);
    CHECK_TEXT(s.g);
    fuse_graph_destroy(s.g);
  }
}

TEST(options_codegen_and_constants) {
  seed_graph s = build_seed(0, 1);
  fuse_pattern_options o;
  fuse_composite_info info;
  char *text;
  memset(&o, 0, sizeof o);
  o.no_codegen_annotation = 1;
  CHECK_EQ_INT(fuse1(s.g, "dnnl.conv2d_reshape_add_relu", SEED_PATTERN, &o), FUSE_OK);
  CHECK_COMP(s.g, s.relu, "dnnl.conv2d_reshape_add_relu", "fused_conv2d_reshape_add_relu", NULL, 4);
  text = to_text(s.g);
  CHECK_STR_CONTAINS(text, "codegen=none region=-1 bind_constants=1 {");
  free(text);
  CHECK_EQ_INT(fuse_merge_composites(s.g), FUSE_OK);
  CHECK(comp_of_(s.g, s.relu, &info, __LINE__));
  CHECK_EQ_INT(info.region, -1);
  CHECK_TEXT(s.g);
  fuse_graph_destroy(s.g);

  s = build_seed(0, 1);
  memset(&o, 0, sizeof o);
  o.keep_constants_as_params = 1;
  CHECK_EQ_INT(fuse1(s.g, "dnnl.conv2d_reshape_add_relu", SEED_PATTERN, &o), FUSE_OK);
  CHECK_COMP(s.g, s.relu, "dnnl.conv2d_reshape_add_relu", "fused_conv2d_reshape_add_relu", "dnnl", 4);
  text = to_text(s.g);
  CHECK_STR_CONTAINS(text, "codegen=\"dnnl\" region=-1 bind_constants=0 {");
  free(text);
  CHECK_TEXT(s.g);
  fuse_graph_destroy(s.g);

  /* a name without '.' has no codegen */
  s = build_seed(0, 1);
  CHECK_EQ_INT(fuse1(s.g, "conv_block", SEED_PATTERN, NULL), FUSE_OK);
  CHECK_COMP(s.g, s.relu, "conv_block", "fused_conv2d_reshape_add_relu", NULL, 4);
  CHECK_TEXT(s.g);
  fuse_graph_destroy(s.g);
}

TEST(second_call_leaves_composites_alone) {
  seed_graph s = build_seed(0, 1);
  fuse_composite_info info;
  CHECK_EQ_INT(fuse1(s.g, "dnnl.add_relu", "relu(add(*, *))", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(s.g), 1);
  CHECK_EQ_INT(fuse1(s.g, "dnnl.seed", SEED_PATTERN, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse1(s.g, "dnnl.relu", "relu(*)", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse1(s.g, "dnnl.add", "add(*, *)", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(s.g), 1);
  CHECK_COMP(s.g, s.relu, "dnnl.add_relu", "fused_add_relu", "dnnl", 2);
  CHECK_EQ_INT(fuse1(s.g, "dnnl.conv", "conv2d(*, *)", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(s.g), 2);
  CHECK_COMP(s.g, s.conv, "dnnl.conv", "fused_conv2d", "dnnl", 1);
  CHECK_COMP(s.g, s.relu, "dnnl.add_relu", "fused_add_relu", "dnnl", 2);
  CHECK_EQ_INT(fuse_graph_op_count(s.g), 3); /* reshape + two composites */
  CHECK_EQ_INT(fuse_merge_composites(s.g), FUSE_OK);
  CHECK(comp_of_(s.g, s.conv, &info, __LINE__));
  CHECK_EQ_INT(info.region, 0);
  CHECK(comp_of_(s.g, s.relu, &info, __LINE__));
  CHECK_EQ_INT(info.region, 0); /* conv feeds add_relu directly; the reshape is not in between */
  CHECK_TEXT(s.g);
  fuse_graph_destroy(s.g);
}

/* ================================================ 4. fuse_merge_composites == */

static int region_of(const fuse_graph *g, fuse_value v) {
  fuse_composite_info info;
  int c = fuse_value_composite(g, v);
  if (c < 0 || fuse_composite_get(g, c, &info) != FUSE_OK) return -99;
  return info.region;
}

/* x -> conv -> act -> conv -> act -> conv -> act with act[i] = relu or clip */
static fuse_graph *build_chain3(const int *clip, fuse_value *acts) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_conv2d_attrs a;
  fuse_value v = IN(g, "x", 1, 3, 6, 6);
  int i;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  for (i = 0; i < 3; i++) {
    char name[32];
    snprintf(name, sizeof name, "w%d", i);
    v = fuse_conv2d(g, v, CST(g, name, 60 + (uint32_t)i, 3, 3, 3, 3), &a);
    v = acts[i] = clip[i] ? fuse_clip(g, v, 0, 6) : fuse_relu(g, v);
  }
  fuse_output(g, v);
  return g;
}

TEST(merge_chain_same_codegen) {
  static const int no_clip[3] = {0, 0, 0};
  fuse_value acts[3];
  fuse_graph *g = build_chain3(no_clip, acts);
  CHECK_EQ_INT(fuse1(g, "dnnl.conv2d_relu", "relu(conv2d(*, *))", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 3);
  CHECK_EQ_INT(region_of(g, acts[0]), -1);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  CHECK_EQ_INT(region_of(g, acts[0]), 0);
  CHECK_EQ_INT(region_of(g, acts[1]), 0);
  CHECK_EQ_INT(region_of(g, acts[2]), 0);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK); /* idempotent */
  CHECK_EQ_INT(region_of(g, acts[2]), 0);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}

TEST(merge_different_codegens) {
  static const int mid_clip[3] = {0, 1, 0};
  fuse_value acts[3];
  fuse_graph *g = build_chain3(mid_clip, acts);
  fuse_rule rules[2] = {{"aa.conv2d_relu", "relu(conv2d(*, *))", NULL, NULL},
                        {"bb.conv2d_clip", "clip(conv2d(*, *))", NULL, NULL}};
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 3);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  /* aa, bb, aa: the two aa composites are joined only through bb, which is outside them */
  CHECK_EQ_INT(region_of(g, acts[0]), 0);
  CHECK_EQ_INT(region_of(g, acts[1]), 1);
  CHECK_EQ_INT(region_of(g, acts[2]), 2);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
  /* composites without codegen keep -1 and take no number */
  g = build_chain3(mid_clip, acts);
  rules[1].name = "conv2d_clip";
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  CHECK_EQ_INT(region_of(g, acts[0]), 0);
  CHECK_EQ_INT(region_of(g, acts[1]), -1);
  CHECK_EQ_INT(region_of(g, acts[2]), 1);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
  /* the first composite has no codegen: numbering still starts at 0 */
  {
    static const int first_clip[3] = {1, 0, 0};
    g = build_chain3(first_clip, acts);
    CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
    CHECK_EQ_INT(region_of(g, acts[0]), -1);
    CHECK_EQ_INT(region_of(g, acts[1]), 0);
    CHECK_EQ_INT(region_of(g, acts[2]), 0);
    CHECK_TEXT(g);
    fuse_graph_destroy(g);
  }
}

/* A = relu(conv(x)); s = sigmoid(A) outside; B = relu(add(conv(A), s)). Merging A and B would
   make a region that both feeds s and depends on it. */
TEST(merge_diamond_not_merged) {
  fuse_graph *g = fuse_graph_create(NULL), *ref;
  fuse_value x = IN(g, "x", 1, 2, 5, 5);
  fuse_value w1 = named_const(g, "w1", 4, D(2, 2, 1, 1), 71), w2 = named_const(g, "w2", 4, D(2, 2, 1, 1), 72);
  fuse_value a = fuse_relu(g, fuse_conv2d(g, x, w1, NULL));
  fuse_value s = fuse_sigmoid(g, a);
  fuse_value b = fuse_relu(g, fuse_add(g, fuse_conv2d(g, a, w2, NULL), s));
  fuse_rule rules[2] = {{"dnnl.b", "relu(add(conv2d(*, *), *))", NULL, NULL},
                        {"dnnl.a", "relu(conv2d(*, *))", NULL, NULL}};
  fuse_output(g, b);
  ref = copy_graph(g);
  CHECK(ref && refill_constants(ref));
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 2);
  CHECK_EQ_INT(fuse_value_composite(g, s), -1);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  CHECK_EQ_INT(region_of(g, a), 0);
  CHECK_EQ_INT(region_of(g, b), 1);
  CHECK_TEXT(g);
  if (ref) CHECK_SAME_NUMBERS(ref, g, 73);
  fuse_graph_destroy(ref);
  fuse_graph_destroy(g);
  consts_reset();
}

/* Two independent branches of one codegen: two regions, numbered in graph order; then a third
   composite consuming both joins them all. */
TEST(merge_branches_numbering) {
  int join;
  for (join = 0; join < 2; join++) {
    fuse_graph *g = fuse_graph_create(NULL);
    fuse_value x = IN(g, "x", 1, 2, 4, 4);
    fuse_value b1 = fuse_relu(g, fuse_conv2d(g, x, CST(g, "w1", 81, 2, 2, 1, 1), NULL));
    fuse_value b2 = fuse_relu(g, fuse_conv2d(g, x, CST(g, "w2", 82, 2, 2, 1, 1), NULL));
    fuse_value y = fuse_add(g, b2, b1), z;
    fuse_rule rules[2] = {{"dnnl.cr", "relu(conv2d(*, *))", NULL, NULL}, {"dnnl.add", "add(*, *)", NULL, NULL}};
    z = fuse_sigmoid(g, y);
    fuse_output(g, z);
    CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, join ? 2 : 1, NULL), FUSE_OK);
    CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
    if (!join) {
      CHECK_EQ_INT(region_of(g, b1), 0);
      CHECK_EQ_INT(region_of(g, b2), 1);
    } else {
      CHECK_EQ_INT(region_of(g, b1), 0);
      CHECK_EQ_INT(region_of(g, b2), 0);
      CHECK_EQ_INT(region_of(g, y), 0);
    }
    CHECK_EQ_INT(fuse_value_composite(g, z), -1);
    CHECK_TEXT(g);
    fuse_graph_destroy(g);
  }
  {
    fuse_graph *g = fuse_graph_create(NULL);
    CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK); /* no composites */
    CHECK_EQ_INT(fuse_merge_composites(NULL), FUSE_ERROR_INVALID_ARGUMENT);
    fuse_graph_destroy(g);
  }
}


/* A -> C (another codegen's composite) -> B and A -> B: C is outside A and B, so no merge. */
TEST(merge_cycle_through_other_codegen) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 1, 2, 5, 5);
  fuse_value a = fuse_relu(g, fuse_conv2d(g, x, CST(g, "w1", 101, 2, 2, 1, 1), NULL));
  fuse_value c = fuse_sigmoid(g, a);
  fuse_value b = fuse_relu(g, fuse_add(g, fuse_conv2d(g, a, CST(g, "w2", 102, 2, 2, 1, 1), NULL), c));
  fuse_rule rules[3] = {{"dnnl.b", "relu(add(conv2d(*, *), *))", NULL, NULL},
                        {"dnnl.a", "relu(conv2d(*, *))", NULL, NULL},
                        {"other.sig", "sigmoid(*)", NULL, NULL}};
  fuse_output(g, b);
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 3, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 3);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  CHECK_EQ_INT(region_of(g, a), 0);
  CHECK_EQ_INT(region_of(g, c), 1);
  CHECK_EQ_INT(region_of(g, b), 2);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}

/* A -> B -> C all one codegen, plus A -> X (plain op) -> C: A and B merge, C cannot join. */
TEST(merge_partial_chain) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 1, 2, 5, 5);
  fuse_value a = fuse_relu(g, fuse_conv2d(g, x, CST(g, "w1", 111, 2, 2, 1, 1), NULL));
  fuse_value b = fuse_relu(g, fuse_conv2d(g, a, CST(g, "w2", 112, 2, 2, 1, 1), NULL));
  fuse_value xo = fuse_sigmoid(g, a);
  fuse_value c = fuse_relu(g, fuse_add(g, fuse_conv2d(g, b, CST(g, "w3", 113, 2, 2, 1, 1), NULL), xo));
  fuse_rule rules[2] = {{"dnnl.c", "relu(add(conv2d(*, *), *))", NULL, NULL},
                        {"dnnl.ab", "relu(conv2d(*, *))", NULL, NULL}};
  fuse_output(g, c);
  CHECK_EQ_INT(fuse_ops_by_pattern(g, rules, 2, NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 3);
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  CHECK_EQ_INT(region_of(g, a), 0);
  CHECK_EQ_INT(region_of(g, b), 0);
  CHECK_EQ_INT(region_of(g, c), 1);
  CHECK_EQ_INT(fuse_value_composite(g, xo), -1);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}

/* ============================================ 5. text form of composites == */

static const char *COMPOSITE_TEXT =
    "graph(%x: [1, 2, 4, 4]) {\n"
    "  %w: [3, 2, 1, 1] = const\n"
    "  %b: [3] = const{0.5, -1, 2}\n"
    "  composite \"dnnl.conv2d_reshape_add_relu\" \"fused_conv2d_reshape_add_relu\" codegen=\"dnnl\" region=4 bind_constants=0 {\n"
    "    %c: [1, 3, 4, 4] = conv2d(%x, %w)\n"
    "    %r = reshape(%b, shape=[1, -1, 1, 1])\n"
    "    %a = add(%r, %c)\n"
    "    %y = relu(%a)\n"
    "  }\n"
    "  %z = sigmoid(%y)\n"
    "  composite \"plain\" \"fused_relu\" codegen=none {\n"
    "    %q = relu(%z)\n"
    "  }\n"
    "  return %q\n"
    "}\n";

TEST(text_parse_composite_block) {
  fuse_graph *g = NULL;
  fuse_composite_info info;
  fuse_result r = fuse_graph_parse(COMPOSITE_TEXT, NULL, &g);
  CHECK_EQ_INT(r, FUSE_OK);
  if (r != FUSE_OK) {
    fprintf(stderr, "    %s\n", fuse_graph_error(g));
    fuse_graph_destroy(g);
    return;
  }
  CHECK_EQ_INT(fuse_composite_count(g), 2);
  CHECK_EQ_INT(fuse_graph_op_count(g), 3);
  CHECK(comp_of_(g, fuse_graph_find(g, "y"), &info, __LINE__));
  CHECK(same_str(info.name, "dnnl.conv2d_reshape_add_relu"));
  CHECK(same_str(info.function, "fused_conv2d_reshape_add_relu"));
  CHECK(same_str(info.codegen, "dnnl"));
  CHECK_EQ_INT(info.region, 4);
  CHECK_EQ_INT(info.num_ops, 4);
  CHECK_EQ_INT(info.root, fuse_graph_find(g, "y"));
  CHECK(info.has_epilogue);
  CHECK_EQ_INT(info.epilogue.bias, fuse_graph_find(g, "b"));
  CHECK_EQ_INT(fuse_value_composite(g, fuse_graph_find(g, "c")), fuse_value_composite(g, fuse_graph_find(g, "y")));
  CHECK_EQ_INT(fuse_value_composite(g, fuse_graph_find(g, "z")), -1);
  CHECK(comp_of_(g, fuse_graph_find(g, "q"), &info, __LINE__));
  CHECK(same_str(info.name, "plain"));
  CHECK(same_str(info.function, "fused_relu"));
  CHECK(info.codegen == NULL);
  CHECK_EQ_INT(info.region, -1);
  CHECK_EQ_INT(info.num_ops, 1);
  {
    char *t = to_text(g);
    CHECK_STR_CONTAINS(t, "codegen=\"dnnl\" region=4 bind_constants=0 {");
    CHECK_STR_CONTAINS(t, "composite \"plain\" \"fused_relu\" codegen=none region=-1 bind_constants=1 {");
    free(t);
  }
  CHECK_TEXT(g);
  /* merge renumbers the parsed region */
  CHECK_EQ_INT(fuse_merge_composites(g), FUSE_OK);
  CHECK_EQ_INT(region_of(g, fuse_graph_find(g, "y")), 0);
  CHECK_TEXT(g);
  fuse_graph_destroy(g);
}

static void expect_text_error_(const char *from, const char *to, int line) {
  const char *at = strstr(COMPOSITE_TEXT, from);
  char text[2048];
  fuse_graph *g = NULL;
  fuse_result r;
  if (!at) {
    failf(line, "test bug: \"%s\" not in the text", from);
    return;
  }
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - COMPOSITE_TEXT), COMPOSITE_TEXT, to, at + strlen(from));
  r = fuse_graph_parse(text, NULL, &g);
  if (r != PRS) failf(line, "\"%s\" -> \"%s\": %s, want FUSE_ERROR_PARSE", from, to, fuse_result_string(r));
  if (!g || !strstr(fuse_graph_error(g), "line "))
    failf(line, "\"%s\" -> \"%s\": message \"%s\"", from, to, g ? fuse_graph_error(g) : "(no graph)");
  fuse_graph_destroy(g);
}
#define TEXT_ERROR(from, to) expect_text_error_((from), (to), __LINE__)

TEST(text_composite_parse_errors) {
  TEXT_ERROR("composite \"dnnl.conv2d_reshape_add_relu\"", "composite dnnl.conv2d_reshape_add_relu");
  TEXT_ERROR("\"fused_conv2d_reshape_add_relu\"", "fused_conv2d_reshape_add_relu");
  TEXT_ERROR("\"fused_conv2d_reshape_add_relu\" codegen", "codegen");
  TEXT_ERROR("codegen=\"dnnl\"", "codegen=dnnl");
  TEXT_ERROR("codegen=\"dnnl\"", "codegen=\"dnnl");
  TEXT_ERROR("region=4", "color=4");
  TEXT_ERROR("region=4", "region=");
  TEXT_ERROR("region=4", "region=1.5");
  TEXT_ERROR("region=4", "region=x");
  TEXT_ERROR("region=4", "region 4");
  TEXT_ERROR("codegen=none {\n    %q = relu(%z)\n  }", "codegen=none {\n  }\n  %q = relu(%z)");
  TEXT_ERROR("codegen=none {\n    %q = relu(%z)\n  }", "codegen=none {\n    %k: [] = const{1}\n  }\n  %q = relu(%z)");
  TEXT_ERROR("codegen=none {", "codegen=none");
  TEXT_ERROR("    %q = relu(%z)\n  }\n", "    %q = relu(%z)\n");
  TEXT_ERROR("    %y = relu(%a)\n", "    %y = relu(%a)\n    composite \"n\" \"f\" codegen=none { %v = relu(%y) }\n");
  TEXT_ERROR("  %z = sigmoid(%y)\n", "  %z = sigmoid(%y)\n  composite \"n\" \"f\" codegen=none { return %z }\n");
}


/* Rule names with quotes, backslashes, control characters and a long codegen prefix. */
TEST(text_odd_rule_names) {
  static const char *names[] = {"dnnl.we\"ird\\name", "tab\there.x", "my codegen.conv 2d",
                                "a_codegen_name_that_is_much_longer_than_sixty_four_characters_in_all_x.conv"};
  static const char *codegens[] = {"dnnl", "tab\there", "my codegen",
                                   "a_codegen_name_that_is_much_longer_than_sixty_four_characters_in_all_x"};
  int i;
  for (i = 0; i < 4; i++) {
    seed_graph s = build_seed(0, 1);
    CHECK_EQ_INT(fuse1(s.g, names[i], SEED_PATTERN, NULL), FUSE_OK);
    CHECK_COMP(s.g, s.relu, names[i], "fused_conv2d_reshape_add_relu", codegens[i], 4);
    CHECK_EQ_INT(fuse_merge_composites(s.g), FUSE_OK);
    CHECK_EQ_INT(region_of(s.g, s.relu), 0);
    CHECK_TEXT(s.g);
    fuse_graph_destroy(s.g);
  }
}

/* ============================================ 6. counting and accessors == */

TEST(op_count_and_composite_get) {
  seed_graph s = build_seed(0, 1);
  fuse_composite_info info;
  CHECK_EQ_INT(fuse_graph_op_count(s.g), 4);
  CHECK_EQ_INT(fuse_composite_count(s.g), 0);
  CHECK_EQ_INT(fuse_composite_get(s.g, 0, &info), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse1(s.g, "dnnl.ra", "relu(add(*, *))", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(s.g), 3);
  CHECK_EQ_INT(fuse1(s.g, "dnnl.c", "conv2d(*, *)", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(s.g), 3); /* conv became a one-op composite */
  CHECK_EQ_INT(fuse_composite_count(s.g), 2);
  CHECK_EQ_INT(fuse_composite_get(s.g, 0, &info), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_get(s.g, 1, &info), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_get(s.g, 2, &info), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_composite_get(s.g, -1, &info), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_composite_get(s.g, 0, NULL), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_composite_get(NULL, 0, &info), FUSE_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(fuse_composite_count(NULL), 0);
  CHECK_EQ_INT(fuse_value_composite(s.g, FUSE_NONE), -1);
  CHECK_EQ_INT(fuse_value_composite(s.g, 9999), -1);
  CHECK_EQ_INT(fuse_value_composite(NULL, 0), -1);
  CHECK_EQ_INT(fuse1(s.g, "dnnl.rs", "reshape(*, *)", NULL), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(s.g), 3);
  CHECK_EQ_INT(fuse_composite_count(s.g), 3);
  CHECK_TEXT(s.g);
  fuse_graph_destroy(s.g);
}

/* A graph with a sticky builder error: the passes return that error and do nothing. */
TEST(passes_on_a_failed_graph) {
  seed_graph s = build_seed(0, 1);
  fuse_value bad = fuse_add(s.g, s.conv, IN(s.g, "bad", 7, 7));
  CHECK_EQ_INT(bad, FUSE_NONE);
  CHECK_EQ_INT(fuse1(s.g, "dnnl.seed", SEED_PATTERN, NULL), FUSE_ERROR_SHAPE);
  CHECK_EQ_INT(fuse_composite_count(s.g), 0);
  CHECK_EQ_INT(fuse_merge_composites(s.g), FUSE_ERROR_SHAPE);
  CHECK_EQ_INT(fuse_optimize(s.g, "fuse"), FUSE_ERROR_SHAPE);
  CHECK_EQ_INT(fuse_composite_count(s.g), 0);
  fuse_graph_destroy(s.g);
}

/* ================================================ 7. randomized chains == */

typedef struct chain_desc {
  int matmul, bias, bias_left, residual, residual_left, residual_input, nclamp;
  int clamp_kind[2], clamp_swap[2];
} chain_desc;

/* conv2d or matmul -> bias (none / [K,1,1] / [1,K,1,1] / reshape(b[K]) ; matmul: [N] / [1,N] /
   reshape(b[N])) -> residual add (input or constant) -> 0..2 clamps (relu, clip, maximum c,
   minimum c, either operand order). All constants are named. */
static fuse_graph *build_chain(const chain_desc *d, char *desc, size_t cap) {
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x, y, b = FUSE_NONE;
  int64_t K, outshape[4];
  int rank, i;
  size_t n = 0;
  if (!d->matmul) {
    int64_t C = 1 + rnd_int(4), H = 3 + rnd_int(4), W = 3 + rnd_int(4);
    int kh = 1 + rnd_int(3), kw = 1 + rnd_int(3);
    fuse_conv2d_attrs a;
    memset(&a, 0, sizeof a);
    K = 1 + rnd_int(5);
    a.padding[0] = a.padding[2] = kh / 2;
    a.padding[1] = a.padding[3] = kw / 2;
    x = fuse_input(g, "x", 4, D(1 + rnd_int(2), C, H, W));
    y = fuse_conv2d(g, x, named_const(g, "w", 4, D(K, C, kh, kw), rnd()), &a);
    n += (size_t)snprintf(desc + n, cap - n, "conv2d k%dx%d", kh, kw);
    switch (d->bias) {
    case 1: b = named_const(g, "b", 3, D(K, 1, 1), rnd()); break;
    case 2: b = named_const(g, "b", 4, D(1, K, 1, 1), rnd()); break;
    case 3: b = fuse_reshape(g, named_const(g, "b", 1, D(K), rnd()), 4, D(1, K, 1, 1)); break;
    case 4: b = fuse_reshape(g, named_const(g, "b", 1, D(K), rnd()), 3, D(K, 1, 1)); break;
    default: break;
    }
  } else {
    int64_t M = 2 + rnd_int(4), Kin = 1 + rnd_int(6);
    K = 1 + rnd_int(6);
    x = fuse_input(g, "x", 2, D(M, Kin));
    y = fuse_matmul(g, x, named_const(g, "w", 2, D(Kin, K), rnd()));
    n += (size_t)snprintf(desc + n, cap - n, "matmul");
    switch (d->bias) {
    case 1: b = named_const(g, "b", 1, D(K), rnd()); break;
    case 2: b = named_const(g, "b", 2, D(1, K), rnd()); break;
    case 3: b = fuse_reshape(g, named_const(g, "b", 1, D(K), rnd()), 2, D(1, K)); break;
    case 4: b = named_const(g, "b", 1, D(K), rnd()); break;
    default: break;
    }
  }
  if (b != FUSE_NONE) {
    y = d->bias_left ? fuse_add(g, b, y) : fuse_add(g, y, b);
    n += (size_t)snprintf(desc + n, cap - n, " + bias%d%s", d->bias, d->bias_left ? "(left)" : "");
  }
  rank = fuse_value_rank(g, y);
  memcpy(outshape, fuse_value_shape(g, y), (size_t)rank * sizeof(int64_t));
  if (d->residual) {
    fuse_value r = d->residual_input ? fuse_input(g, "res", rank, outshape)
                                     : named_const(g, "res", rank, outshape, rnd());
    y = d->residual_left ? fuse_add(g, r, y) : fuse_add(g, y, r);
    n += (size_t)snprintf(desc + n, cap - n, " + residual(%s%s)", d->residual_input ? "input" : "const",
                          d->residual_left ? ",left" : "");
  }
  for (i = 0; i < d->nclamp; i++) {
    float lo = rnd_float() * 0.5f, hi = lo + 0.1f + (float)rnd_int(10) * 0.1f;
    char cname[32];
    fuse_value c;
    snprintf(cname, sizeof cname, "c%d", i);
    switch (d->clamp_kind[i]) {
    case 0: y = fuse_relu(g, y); break;
    case 1: y = fuse_clip(g, y, lo, hi); break;
    case 2:
    case 3:
      /* a named rank-0 constant half of the time, else an inline scalar */
      if (d->clamp_kind[i] == 3) lo = hi;
      c = rnd_int(2) ? fuse_constant(g, cname, 0, NULL, &lo) : fuse_scalar(g, lo);
      if (d->clamp_kind[i] == 3) {
        y = d->clamp_swap[i] ? fuse_minimum(g, c, y) : fuse_minimum(g, y, c);
      } else {
        y = d->clamp_swap[i] ? fuse_maximum(g, c, y) : fuse_maximum(g, y, c);
      }
      break;
    }
    n += (size_t)snprintf(desc + n, cap - n, " -> %s%s", (const char *[]){"relu", "clip", "maximum", "minimum"}[d->clamp_kind[i]],
                          d->clamp_kind[i] >= 2 && d->clamp_swap[i] ? "(c,x)" : "");
  }
  fuse_output(g, y);
  return g;
}

TEST(random_chains_fuse_optimize) {
  int t, fused_ok = 0;
  rng_state = 20240611u;
  for (t = 0; t < 60; t++) {
    chain_desc d;
    char desc[256];
    fuse_graph *g, *copy;
    int i, ops_before;
    memset(&d, 0, sizeof d);
    d.matmul = rnd_int(2);
    d.bias = rnd_int(d.matmul ? 4 : 5);
    d.bias_left = rnd_int(2);
    d.residual = rnd_int(2);
    d.residual_left = rnd_int(2);
    d.residual_input = rnd_int(2);
    d.nclamp = rnd_int(3);
    for (i = 0; i < 2; i++) {
      d.clamp_kind[i] = rnd_int(4);
      d.clamp_swap[i] = rnd_int(2);
    }
    g = build_chain(&d, desc, sizeof desc);
    if (fuse_graph_status(g) != FUSE_OK) {
      failf(__LINE__, "chain %d (%s): builder error %s", t, desc, fuse_graph_error(g));
      fuse_graph_destroy(g);
      consts_reset();
      continue;
    }
    ops_before = fuse_graph_op_count(g);
    copy = copy_graph(g);
    if (!copy || !refill_constants(copy)) {
      failf(__LINE__, "chain %d (%s): copy failed", t, desc);
      fuse_graph_destroy(copy);
      fuse_graph_destroy(g);
      consts_reset();
      continue;
    }
    CHECK_EQ_INT(fuse_optimize(copy, "fuse"), FUSE_OK);
    if (fuse_composite_count(copy) != 1 || fuse_graph_op_count(copy) != 1) {
      char *text = to_text(copy);
      failf(__LINE__, "chain %d (%s): %d composites, %d ops (before: %d ops), want 1 and 1:\n%s", t,
            desc, fuse_composite_count(copy), fuse_graph_op_count(copy), ops_before, text);
      free(text);
    } else {
      fuse_composite_info info;
      fuse_composite_get(copy, 0, &info);
      if (!info.has_epilogue || !info.codegen || strcmp(info.codegen, "fuse") != 0 || info.region != 0)
        failf(__LINE__, "chain %d (%s): composite %s epilogue %d codegen %s region %d", t, desc,
              info.name, info.has_epilogue, info.codegen ? info.codegen : "NULL", info.region);
      else
        fused_ok++;
    }
    CHECK_TEXT(copy);
    CHECK_SAME_NUMBERS(g, copy, 1000 + (uint32_t)t);
    {
      int steps;
      char *plan = plan_text(copy, &steps);
      int ok = plan && steps == 1 && strstr(plan, "(composite fuse.") &&
               !strstr(plan, "+ bias") == !d.bias && !strstr(plan, "+ add") == !d.residual &&
               !strstr(plan, "+ clamp[") == !d.nclamp;
      if (!ok)
        failf(__LINE__, "chain %d (%s): plan with %d steps, want one fused step:\n%s", t, desc, steps,
              plan ? plan : "(compile failed)");
      free(plan);
    }
    fuse_graph_destroy(copy);
    fuse_graph_destroy(g);
    consts_reset();
  }
  printf("  random chains: %d of 60 fused into one op\n", fused_ok);
}

/* fuse_optimize with both codegens on the seed graph, and an unknown codegen */
TEST(optimize_seed_graph) {
  seed_graph s = build_seed(1, 1), ref = build_seed(1, 1);
  fuse_composite_info info;
  CHECK_EQ_INT(fuse_optimize(s.g, "dnnl"), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(s.g), 1);
  CHECK(comp_of_(s.g, s.relu, &info, __LINE__));
  CHECK(same_str(info.name, "dnnl.conv2d_bias_relu"));
  CHECK(same_str(info.codegen, "dnnl"));
  CHECK_EQ_INT(info.region, 0);
  CHECK_TEXT(s.g);
  CHECK_SAME_NUMBERS(ref.g, s.g, 91);
  fuse_graph_destroy(s.g);
  s = build_seed(0, 1);
  CHECK_EQ_INT(fuse_optimize(s.g, NULL), FUSE_OK);
  CHECK(comp_of_(s.g, s.relu, &info, __LINE__));
  CHECK(same_str(info.name, "fuse.conv2d_bias_relu"));
  fuse_graph_destroy(s.g);
  s = build_seed(0, 1);
  CHECK_EQ_INT(fuse_optimize(s.g, "cuda"), FUSE_ERROR_UNSUPPORTED);
  CHECK_EQ_INT(fuse_composite_count(s.g), 0);
  CHECK_EQ_INT(fuse_graph_status(s.g), FUSE_OK);
  fuse_graph_destroy(s.g);
  fuse_graph_destroy(ref.g);
}


/* conv -> batch_norm -> relu, and a ResNet basic block, through fuse_optimize. */
TEST(optimize_batch_norm_and_resnet_block) {
  fuse_graph *g = fuse_graph_create(NULL), *ref;
  fuse_conv2d_attrs a;
  fuse_value x, c1, r1, c2, bn, r2;
  memset(&a, 0, sizeof a);
  a.padding[0] = a.padding[1] = a.padding[2] = a.padding[3] = 1;
  x = IN(g, "x", 1, 4, 6, 6);
  c1 = fuse_conv2d(g, x, named_const(g, "w1", 4, D(4, 4, 3, 3), 121), &a);
  {
    float var[4] = {0.5f, 1.0f, 2.0f, 0.25f};
    const_rec *cr;
    bn = fuse_batch_norm(g, c1, named_const(g, "scale", 1, D(4), 122), named_const(g, "shift", 1, D(4), 123),
                         named_const(g, "mean", 1, D(4), 124), fuse_constant(g, "var", 1, D(4), var), 1e-5f);
    cr = &consts_[num_consts_++];
    snprintf(cr->name, sizeof cr->name, "var");
    cr->n = 4;
    cr->data = (float *)malloc(sizeof var);
    memcpy(cr->data, var, sizeof var);
  }
  r1 = fuse_relu(g, bn);
  c2 = fuse_conv2d(g, r1, named_const(g, "w2", 4, D(4, 4, 3, 3), 125), &a);
  c2 = fuse_add(g, c2, fuse_reshape(g, named_const(g, "b2", 1, D(4), 126), 4, D(1, 4, 1, 1)));
  r2 = fuse_relu(g, fuse_add(g, r1, c2)); /* residual first */
  fuse_output(g, r2);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  ref = copy_graph(g);
  CHECK(ref && refill_constants(ref));
  CHECK_EQ_INT(fuse_optimize(g, "dnnl"), FUSE_OK);
  CHECK_EQ_INT(fuse_composite_count(g), 2);
  CHECK_EQ_INT(fuse_graph_op_count(g), 2);
  CHECK_COMP(g, r1, "dnnl.conv2d_bias_relu", "fused_conv2d_add_relu", "dnnl", 3);
  CHECK_COMP(g, r2, "dnnl.conv2d_bias_add_relu", "fused_conv2d_add_add_relu", "dnnl", 4);
  CHECK_EQ_INT(region_of(g, r1), 0);
  CHECK_EQ_INT(region_of(g, r2), 0);
  CHECK_TEXT(g);
  if (ref) CHECK_SAME_NUMBERS(ref, g, 127);
  {
    int steps;
    char *plan = plan_text(g, &steps);
    CHECK_EQ_INT(steps, 2);
    CHECK_STR_CONTAINS(plan, "step 0: conv2d + bias + clamp[");
    CHECK_STR_CONTAINS(plan, "step 1: conv2d + bias + add + clamp[");
    free(plan);
  }
  fuse_graph_destroy(ref);
  fuse_graph_destroy(g);
  consts_reset();
}

/* A linear bottleneck (mobilenet_v2): the block's input a is itself conv + bias, read by the
   block's conv and by the residual add(a, y). Both operands of the add fit the rule's
   conv + bias side; taking a would escape (the block's conv reads it), so the matcher takes
   y, and each block becomes one fused step with its residual. */
TEST(optimize_residual_whose_other_side_is_a_conv) {
  fuse_graph *g = fuse_graph_create(NULL), *ref;
  fuse_conv2d_attrs a;
  fuse_value x, c0, y, out;
  memset(&a, 0, sizeof a);
  x = IN(g, "x", 1, 4, 5, 5);
  c0 = fuse_conv2d(g, x, named_const(g, "w0", 4, D(8, 4, 1, 1), 131), &a);
  c0 = fuse_add(g, c0, fuse_reshape(g, named_const(g, "b0", 1, D(8), 132), 4, D(1, 8, 1, 1)));
  y = fuse_conv2d(g, c0, named_const(g, "w1", 4, D(8, 8, 1, 1), 133), &a);
  y = fuse_add(g, y, fuse_reshape(g, named_const(g, "b1", 1, D(8), 134), 4, D(1, 8, 1, 1)));
  out = fuse_add(g, c0, y); /* the residual first, as torchvision exports x + conv(x) */
  fuse_output(g, out);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  ref = copy_graph(g);
  CHECK(ref && refill_constants(ref));
  CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_op_count(g), 2);
  CHECK_COMP(g, out, "fuse.conv2d_bias_add", "fused_conv2d_add_add", "fuse", 3);
  CHECK_TEXT(g);
  if (ref) CHECK_SAME_NUMBERS(ref, g, 135);
  {
    int steps;
    char *plan = plan_text(g, &steps);
    CHECK_EQ_INT(steps, 2);
    CHECK_STR_CONTAINS(plan, "step 1: conv2d + bias + add -> ");
    free(plan);
  }
  fuse_graph_destroy(ref);
  fuse_graph_destroy(g);
  consts_reset();
}

/* DESIGN: the clamp runs once on the finished accumulator. Products -1 then +2 sum to 1;
   a clamp applied at every reduction step would give 2. */
TEST(fused_clamp_once_per_output) {
  int kind;
  for (kind = 0; kind < 2; kind++) {
    fuse_graph *g = fuse_graph_create(NULL);
    float wdata[2] = {-1, 1}, xin[2] = {1, 2}, y = NAN;
    const float *in[1];
    float *out[1];
    fuse_plan *p = NULL;
    fuse_value x, w, r;
    if (kind == 0) {
      x = IN(g, "x", 1, 2);
      w = fuse_constant(g, "w", 2, D(2, 1), wdata);
      r = fuse_relu(g, fuse_matmul(g, x, w));
    } else {
      x = IN(g, "x", 1, 2, 1, 1);
      w = fuse_constant(g, "w", 4, D(1, 2, 1, 1), wdata);
      r = fuse_clip(g, fuse_conv2d(g, x, w, NULL), 0, 6);
    }
    fuse_output(g, r);
    CHECK_EQ_INT(fuse_optimize(g, "fuse"), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_op_count(g), 1);
    CHECK_EQ_INT(fuse_compile(g, NULL, &p), FUSE_OK);
    if (p) {
      CHECK_EQ_INT(fuse_plan_step_count(p), 1);
      in[0] = xin;
      out[0] = &y;
      CHECK_EQ_INT(fuse_run(p, in, out, NULL), FUSE_OK);
      CHECK(y == 1.0f);
      fuse_plan_destroy(p);
    }
    fuse_graph_destroy(g);
  }
}

int main(void) {
  RUN(seed_000_001_conv2d_reshape_add_relu);
  RUN(seed_003_conv2d_relu);
  RUN(seed_003_conv2d_relu_x2_and_priority);
  RUN(priority_first_rule_wins);
  RUN(largest_match_of_a_rule_wins);
  RUN(escaping_intermediates);
  RUN(escaping_needs_convexity);
  RUN(check_callback);
  RUN(options_codegen_and_constants);
  RUN(second_call_leaves_composites_alone);
  RUN(merge_chain_same_codegen);
  RUN(merge_different_codegens);
  RUN(merge_diamond_not_merged);
  RUN(merge_branches_numbering);
  RUN(merge_cycle_through_other_codegen);
  RUN(merge_partial_chain);
  RUN(text_parse_composite_block);
  RUN(text_composite_parse_errors);
  RUN(text_odd_rule_names);
  RUN(op_count_and_composite_get);
  RUN(passes_on_a_failed_graph);
  RUN(random_chains_fuse_optimize);
  RUN(optimize_seed_graph);
  RUN(optimize_batch_norm_and_resnet_block);
  RUN(optimize_residual_whose_other_side_is_a_conv);
  RUN(fused_clamp_once_per_output);
  return runner_finish("fusion");
}
