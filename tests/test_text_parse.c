/* test_text_parse.c - the text form read: parse features, every parse error (code, "line N",
   message, no leaks, out of memory), fuse_graph_set_constant, fuse_graph_write vs
   fuse_graph_print, and locale independence. */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text_helpers.h"

/* ---------------------------------------------------------- parse features -- */

TEST(parse_comments_whitespace_defaults) {
  /* the same graph as built below, written with comments, odd spacing, no annotations on
     ops, %N labels and omitted attributes */
  const char *text =
      "# a comment before everything\n"
      "graph ( %x : [ 1 ,3, 4,4 ] ,%y:[1,3,4,4] )   # trailing comment\n"
      "{\n"
      "\t%w: [2, 3, 1, 1] = const   # weights\n"
      "  %7 = conv2d(%x,%w)\n"
      "  %3\n     =\n  max_pool2d( %7 , kernel = [ 2 , 2 ] )   \n"
      "  %9: [1, 2, 2, 2] = avg_pool2d(%3, kernel=[2, 2], count_include_pad=1)\n"
      "\n\n   # blank lines and comments\n"
      "  %1 = relu( %9 )  return %1 ,%y ,  %3  # return on the same line\n"
      "}\n"
      "# a comment after everything\n";
  fuse_graph *p = PARSE_OK(text), *g;
  fuse_pool2d_attrs mp = pool(2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  fuse_pool2d_attrs ap = pool(2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
  fuse_value x, y, w, c, m, a;
  char *want, *got;
  g = fuse_graph_create(NULL);
  x = IN(g, "x", 1, 3, 4, 4);
  y = IN(g, "y", 1, 3, 4, 4);
  w = CST(g, "w", 2, 3, 1, 1);
  c = fuse_conv2d(g, x, w, NULL);
  m = fuse_max_pool2d(g, c, &mp);
  a = fuse_avg_pool2d(g, m, &ap);
  fuse_output(g, fuse_relu(g, a));
  fuse_output(g, y);
  fuse_output(g, m);
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  if (p) {
    want = to_text(g);
    got = to_text(p);
    CHECK(want && got && strcmp(want, got) == 0);
    if (want && got && strcmp(want, got) != 0)
      fprintf(stderr, "--- parsed ---\n%s--- built ---\n%s", got, want);
    free(want);
    free(got);
    CHECK_EQ_INT(fuse_graph_op_count(p), 4);
    CHECK_EQ_INT(fuse_graph_output_count(p), 3);
  }
  fuse_graph_destroy(p);
  fuse_graph_destroy(g);
}

TEST(parse_reshape_minus_one_and_annotations) {
  fuse_graph *p = PARSE_OK("graph(%x: [2, 3, 4]) {\n"
                           "  %a = reshape(%x, shape=[-1, 4])\n"
                           "  %b: [2, 12] = reshape(%x, shape=[2, -1])\n"
                           "  %c: [24] = reshape(%x, shape=[-1])\n"
                           "  return %a, %b, %c\n}\n");
  if (p) {
    fuse_value a = fuse_graph_output(p, 0), c = fuse_graph_output(p, 2);
    CHECK_EQ_INT(fuse_value_rank(p, a), 2);
    if (fuse_value_rank(p, a) == 2) {
      CHECK_EQ_INT(fuse_value_shape(p, a)[0], 6);
      CHECK_EQ_INT(fuse_value_shape(p, a)[1], 4);
    }
    CHECK_EQ_INT(fuse_value_rank(p, c), 1);
    if (fuse_value_rank(p, c) == 1) CHECK_EQ_INT(fuse_value_shape(p, c)[0], 24);
    ROUNDTRIP(p);
  }
  fuse_graph_destroy(p);
}

TEST(parse_number_operands) {
  fuse_graph *p = PARSE_OK("graph(%x: [2, 3]) {\n"
                           "  %0 = maximum(%x, 0)\n"
                           "  %1 = add(2.5, %0)\n"
                           "  %2 = mul(%1, -1)\n"
                           "  %3 = minimum(%2, 1e-05)\n"
                           "  %4 = sub(%3, -inf)\n"
                           "  %5 = sub(0.25, 1.5)\n"
                           "  return %4, %5\n}\n");
  fuse_graph *g = fuse_graph_create(NULL);
  fuse_value x = IN(g, "x", 2, 3), y;
  y = fuse_maximum(g, x, fuse_scalar(g, 0.0f));
  y = fuse_add(g, fuse_scalar(g, 2.5f), y);
  y = fuse_mul(g, y, fuse_scalar(g, -1.0f));
  y = fuse_minimum(g, y, fuse_scalar(g, 1e-5f));
  y = fuse_sub(g, y, fuse_scalar(g, -INFINITY));
  fuse_output(g, y);
  fuse_output(g, fuse_sub(g, fuse_scalar(g, 0.25f), fuse_scalar(g, 1.5f)));
  if (p) {
    char *a = to_text(p), *b = to_text(g);
    CHECK(a && b && strcmp(a, b) == 0);
    if (a && b && strcmp(a, b) != 0) fprintf(stderr, "--- parsed ---\n%s--- built ---\n%s", a, b);
    CHECK_STR_CONTAINS(a, "maximum(%x, 0)");
    CHECK_STR_CONTAINS(a, "add(2.5, %0)");
    CHECK_STR_CONTAINS(a, "sub(0.25, 1.5)");
    free(a);
    free(b);
    CHECK_EQ_INT(fuse_graph_op_count(p), 6);
    {
      fuse_value o = fuse_graph_output(p, 1);
      CHECK_EQ_INT(fuse_value_rank(p, o), 0);
    }
  }
  fuse_graph_destroy(p);
  fuse_graph_destroy(g);
}

TEST(parse_every_attribute_explicit) {
  const char *text =
      "graph(%x: [1, 4, 9, 8], %m: [2, 3]) {\n"
      "  %w: [4, 2, 3, 3] = const\n"
      "  %s: [4] = const{1, 2, 3, 4}\n"
      "  %c = conv2d(%x, %w, strides=[2, 1], padding=[1, 2, 0, 1], dilation=[1, 2], groups=2)\n"
      "  %bn = batch_norm(%c, %s, %s, %s, %s, eps=0.01)\n"
      "  %mp = max_pool2d(%bn, kernel=[2, 3], strides=[1, 2], padding=[1, 1, 0, 2], "
      "dilation=[2, 1], ceil_mode=1)\n"
      "  %ap = avg_pool2d(%mp, kernel=[2, 2], strides=[2, 2], padding=[1, 0, 1, 0], ceil_mode=1, "
      "count_include_pad=1)\n"
      "  %cl = clip(%ap, lo=-1.5, hi=inf)\n"
      "  %f = flatten(%cl, axis=2)\n"
      "  %sm = softmax(%m, axis=-1)\n"
      "  %cc = concat(%sm, %m, axis=0)\n"
      "  %r = reshape(%cc, shape=[3, -1])\n"
      "  return %f, %r\n}\n";
  fuse_graph *p = PARSE_OK(text);
  if (p) {
    /* conv: H (9+1-3)/2+1 = 4, W (8+3-5)/1+1 = 7; groups 2 */
    fuse_value c = fuse_graph_find(p, "c"), mp = fuse_graph_find(p, "mp");
    fuse_value f = fuse_graph_output(p, 0), r = fuse_graph_output(p, 1);
    CHECK(c != FUSE_NONE);
    if (fuse_value_rank(p, c) == 4) {
      CHECK_EQ_INT(fuse_value_shape(p, c)[2], 4);
      CHECK_EQ_INT(fuse_value_shape(p, c)[3], 7);
    }
    /* max pool: eff 3 x 3, H (4+1-3)/1+1 = 3, W ceil((7+3-3)/2)+1 = 5, start 8 >= 7+1 -> 4 */
    if (fuse_value_rank(p, mp) == 4) {
      CHECK_EQ_INT(fuse_value_shape(p, mp)[2], 3);
      CHECK_EQ_INT(fuse_value_shape(p, mp)[3], 4);
    }
    CHECK_EQ_INT(fuse_value_rank(p, f), 2);
    if (fuse_value_rank(p, r) == 2) {
      CHECK_EQ_INT(fuse_value_shape(p, r)[0], 3);
      CHECK_EQ_INT(fuse_value_shape(p, r)[1], 4);
    }
    ROUNDTRIP(p);
  }
  fuse_graph_destroy(p);
}

/* ------------------------------------------------------------ parse errors -- */

TEST(parse_errors) {
  PARSE_ERR("", PRS, 0, 1, "expected");
  PARSE_ERR("   \n# only a comment\n", PRS, 0, 0, "expected");
  PARSE_ERR("grph(%x: [1]) {\n  return %x\n}\n", PRS, 0, 1, "expected", "graph");
  PARSE_ERR("(%x: [1]) {\n  return %x\n}\n", PRS, 0, 1, "expected", "graph");
  PARSE_ERR("graph %x: [1]) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  /* unknown / bad op */
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = frobnicate(%x)\n  return %0\n}\n", PRS, 0, 2,
            "frobnicate", "expected");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = 42(%x)\n  return %0\n}\n", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = cosnt\n  return %0\n}\n", PRS, 0, 2, "cosnt",
            "expected");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = Relu(%x)\n  return %0\n}\n", PRS, 0, 2, "Relu",
            "expected");
  /* unknown attribute */
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = softmax(%x, axes=1)\n  return %0\n}\n", PRS, 0, 2,
            "axes", "expected");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%x, axis=1)\n  return %0\n}\n", PRS, 0, 2, "axis",
            "expected");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %0 = avg_pool2d(%x, kernel=[2, 2], dilation=[1, 1])\n"
            "  return %0\n}\n",
            PRS, 0, 2, "dilation", "expected");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %w: [3, 3, 1, 1] = const\n"
            "  %0 = conv2d(%x, %w, stride=[1, 1])\n  return %0\n}\n",
            PRS, 0, 3, "stride", "expected");
  /* wrong attribute type */
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = softmax(%x, axis=[1])\n  return %0\n}\n", PRS, 0, 2,
            "expected", "must be");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = softmax(%x, axis=1.5)\n  return %0\n}\n", PRS, 0, 2,
            "expected", "must be");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %w: [3, 3, 1, 1] = const\n"
            "  %0 = conv2d(%x, %w, strides=1)\n  return %0\n}\n",
            PRS, 0, 3, "expected", "must be");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %w: [3, 3, 1, 1] = const\n"
            "  %0 = conv2d(%x, %w, padding=[1, 1])\n  return %0\n}\n",
            PRS, INV, 3, "expected", "padding");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %0 = max_pool2d(%x, kernel=[2, 2, 2])\n"
            "  return %0\n}\n",
            PRS, INV, 2, "expected", "kernel");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = clip(%x, lo=[0], hi=1)\n  return %0\n}\n", PRS, 0, 2,
            "expected", "must be");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = clip(%x, lo=%x, hi=1)\n  return %0\n}\n", PRS, 0, 2,
            "expected");
  /* undefined value */
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%nope)\n  return %0\n}\n", PRS, 0, 2, "nope");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%x)\n  return %zz\n}\n", PRS, 0, 3, "zz");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%x)\n  %1 = add(%0, %7)\n  return %1\n}\n", PRS, 0,
            3, "%7", "7");
  PARSE_ERR("graph(%x: [1, 3]) {\n  %0 = relu(%0)\n  return %0\n}\n", PRS, 0, 2, "%0", "0");
  /* redefined name */
  PARSE_ERR("graph(%dup: [2]) {\n  %dup = relu(%dup)\n  return %dup\n}\n", PRS, INV, 2, "dup");
  PARSE_ERR("graph(%x: [2]) {\n  %aa = relu(%x)\n  %aa = relu(%x)\n  return %aa\n}\n", PRS, INV,
            3, "aa");
  PARSE_ERR("graph(%x: [2], %x: [3]) {\n  return %x\n}\n", PRS, INV, 1, "x");
  PARSE_ERR("graph(%x: [2]) {\n  %cc: [2] = const\n  %cc: [2] = const\n  return %x\n}\n", PRS,
            INV, 3, "cc");
  /* missing ) */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = add(%x, %x %x)\n  return %0\n}\n", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: [2] {\n  return %x\n}\n", PRS, 0, 1, "expected");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu(%x ]\n  return %0\n}\n", PRS, 0, 2, "expected");
  /* missing ] */
  PARSE_ERR("graph(%x: [2, 3) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  /* missing } */
  PARSE_ERR("graph(%x: [2]) {\n  return %x", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: [2]) {\n  return %x ]", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: [2]) \n  return %x\n}\n", PRS, 0, 2, "expected");
  /* missing return */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu(%x)\n}\n", PRS, 0, 3, "expected", "return");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu(%x)\n  retrun %0\n}\n", PRS, 0, 3, "expected");
  /* trailing garbage */
  PARSE_ERR("graph(%x: [2]) {\n  return %x\n}\nfoo\n", PRS, 0, 4, "expected", "trailing", "end");
  PARSE_ERR("graph(%x: [2]) {\n  return %x\n} }", PRS, 0, 3, "expected", "trailing", "end");
  PARSE_ERR("graph(%x: [2]) {\n  return %x\n}\ngraph(%y: [2]) {\n  return %y\n}\n", PRS, 0, 4,
            "expected", "trailing", "end");
  /* unterminated quoted name */
  PARSE_ERR("graph(%\"abc: [1]) { return %abc }", PRS, 0, 1, "expected", "unterminated", "\"");
  PARSE_ERR("graph(%x: [2]) {\n  %\"half = relu(%x)\n  return %x\n}\n", PRS, 0, 0, "expected",
            "unterminated", "\"");
  /* missing / malformed names and shapes */
  PARSE_ERR("graph(%x) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  PARSE_ERR("graph(x: [2]) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  PARSE_ERR("graph(%x: [2]) {\n  %c = const\n  return %x\n}\n", PRS, 0, 2, "expected",
            "needs its shape");
  PARSE_ERR("graph(%x: [2]) {\n  %0 relu(%x)\n  return %0\n}\n", PRS, 0, 2, "expected");
  PARSE_ERR("graph(%x: 2) {\n  return %x\n}\n", PRS, 0, 1, "expected");
  PARSE_ERR("graph(%: [2]) {\n  return %\n}\n", PRS, 0, 1, "expected");
  /* bad numbers */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = maximum(%x, 1.5.3)\n  return %0\n}\n", PRS, 0, 2,
            "expected", "number");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = maximum(%x, -)\n  return %0\n}\n", PRS, 0, 2, "expected",
            "number");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = maximum(%x, 1e)\n  return %0\n}\n", PRS, 0, 2, "expected",
            "number");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = maximum(%x, .)\n  return %0\n}\n", PRS, 0, 2, "expected",
            "number");
  PARSE_ERR("graph(%x: [2, 2.5]) {\n  return %x\n}\n", PRS, 0, 1, "expected", "integer");
  PARSE_ERR("graph(%x: [2, 99999999999999999999999]) {\n  return %x\n}\n", PRS, INV, 1,
            "expected", "integer", "range", "overflow", "input");
  PARSE_ERR("graph(%x: [2]) {\n  %c: [2] = const{1, 2q}\n  return %x\n}\n", PRS, 0, 2,
            "expected", "number");
  /* constant values that do not match the shape */
  PARSE_ERR("graph(%x: [2]) {\n  %c: [2] = const{1}\n  return %x\n}\n", PRS, INV, 2, "const",
            "expected", "value");
  PARSE_ERR("graph(%x: [2]) {\n  %c: [2] = const{1, 2, 3}\n  return %x\n}\n", PRS, INV, 2,
            "const", "expected", "value");
  /* wrong shape annotations */
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0: [1, 3] = relu(%x)\n  return %0\n}\n", PRS, 0, 2,
            "[1, 3]", "[1,3]", "[2, 3]", "[2,3]", "expected");
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0: [2, 3] = relu(%x)\n  %1: [3, 2, 1] = reshape(%0, "
            "shape=[3, 2])\n  return %1\n}\n",
            PRS, 0, 3, "[3, 2, 1]", "[3,2,1]", "[3, 2]", "[3,2]", "expected");
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0: [] = relu(%x)\n  return %0\n}\n", PRS, 0, 2, "[]",
            "expected");
  /* wrong arity */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = add(%x)\n  return %0\n}\n", PRS, 0, 2, "expected", "add");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu(%x, %x)\n  return %0\n}\n", PRS, 0, 2, "expected",
            "relu");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = relu()\n  return %0\n}\n", PRS, 0, 2, "expected", "relu");
  PARSE_ERR("graph(%x: [1, 2]) {\n  %0 = concat(axis=0)\n  return %0\n}\n", PRS, INV, 2,
            "expected", "concat");
  PARSE_ERR("graph(%x: [2]) {\n  %0 = softmax(axis=0, %x)\n  return %0\n}\n", PRS, 0, 2,
            "expected");
  /* builder errors inside the text keep the builder's code and say the line */
  PARSE_ERR("graph(%x: [2]) {\n  %0 = clip(%x, lo=1, hi=0)\n  return %0\n}\n", INV, 0, 2,
            "clip");
  PARSE_ERR("graph(%x: [2, 3], %y: [4]) {\n  %0 = relu(%x)\n  %1 = add(%0, %y)\n"
            "  return %1\n}\n",
            SHP, 0, 3, "add");
  PARSE_ERR("graph(%x: [2, 0]) {\n  return %x\n}\n", INV, PRS, 1, "input", "expected", "0");
  PARSE_ERR("graph(%x: [2, -3]) {\n  return %x\n}\n", INV, PRS, 1, "input", "expected", "-3");
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0 = softmax(%x, axis=2)\n  return %0\n}\n", INV, 0, 2,
            "softmax");
  PARSE_ERR("graph(%x: [2, 3]) {\n  %0 = reshape(%x, shape=[-1, -1])\n  return %0\n}\n", INV, 0,
            2, "reshape");
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n  %0 = max_pool2d(%x)\n  return %0\n}\n", INV, PRS, 2,
            "max_pool2d"); /* kernel omitted = 0 */
  PARSE_ERR("graph(%x: [1, 3, 4, 4]) {\n\n  %0 = max_pool2d(%x, kernel=[2, 2], padding=[2, 0, 0, "
            "0])\n  return %0\n}\n",
            INV, 0, 3, "max_pool2d");
  /* the channel mismatch of the spec's example, with its shapes */
  {
    const char *text = "graph(%x: [1, 3, 8, 8]) {\n"
                       "  %w: [8, 4, 3, 3] = const\n"
                       "  %y = conv2d(%x, %w)\n"
                       "  return %y\n"
                       "}\n";
    fuse_graph *g = NULL;
    fuse_result r = fuse_graph_parse(text, NULL, &g);
    CHECK_EQ_INT(r, FUSE_ERROR_SHAPE);
    CHECK(g != NULL);
    if (g) {
      const char *m = fuse_graph_error(g);
      CHECK_EQ_INT(fuse_graph_status(g), FUSE_ERROR_SHAPE);
      CHECK(has_line(m, 3));
      CHECK_STR_CONTAINS(m, "conv2d");
      CHECK_STR_CONTAINS(m, "[1,3,8,8]");
      CHECK_STR_CONTAINS(m, "[8,4,3,3]");
    }
    fuse_graph_destroy(g);
  }
  /* bad arguments */
  {
    fuse_graph *g = NULL;
    fuse_result r = fuse_graph_parse(NULL, NULL, &g);
    CHECK(r == INV || r == PRS);
    fuse_graph_destroy(g);
    CHECK_EQ_INT(fuse_graph_parse(seed_chain_text, NULL, NULL), INV);
  }
}

/* every prefix of a valid listing is an error with a line number, never a crash or leak */
TEST(parse_truncations) {
  size_t len = strlen(bn_text), cut;
  char buf[2048];
  int bad = 0;
  for (cut = 0; cut + 2 < len; cut++) {
    counting_alloc c;
    fuse_allocator al = ca_make(&c);
    fuse_graph *g = NULL;
    fuse_result r;
    memcpy(buf, bn_text, cut);
    buf[cut] = 0;
    r = fuse_graph_parse(buf, &al, &g);
    if (r == FUSE_OK || !g || !strstr(fuse_graph_error(g), "line ")) {
      if (bad++ < 5)
        failf(__LINE__, "prefix of %lu bytes: result %d, message \"%s\"", (unsigned long)cut,
              (int)r, g ? fuse_graph_error(g) : "(no graph)");
    }
    fuse_graph_destroy(g);
    ca_check_(&c, __LINE__, "truncated parse");
  }
}

TEST(parse_out_of_memory) {
  counting_alloc c;
  fuse_allocator al;
  fuse_graph *g = NULL;
  long total, k;
  al = ca_make(&c);
  CHECK_EQ_INT(fuse_graph_parse(bn_text, &al, &g), FUSE_OK);
  fuse_graph_destroy(g);
  total = c.calls;
  ca_check_(&c, __LINE__, "parse");
  for (k = 1; k <= total; k++) {
    fuse_result r;
    al = ca_make(&c);
    c.fail_at = k;
    g = NULL;
    r = fuse_graph_parse(bn_text, &al, &g);
    if (r != FUSE_OK && r != FUSE_ERROR_OUT_OF_MEMORY)
      failf(__LINE__, "allocation %ld refused: parse returned %d (%s)", k, (int)r,
            g ? fuse_graph_error(g) : "(no graph)");
    if (!g && r != FUSE_ERROR_OUT_OF_MEMORY)
      failf(__LINE__, "allocation %ld refused: *out NULL with %d", k, (int)r);
    if (g && fuse_graph_status(g) != r)
      failf(__LINE__, "allocation %ld refused: graph status %d, returned %d", k,
            (int)fuse_graph_status(g), (int)r);
    fuse_graph_destroy(g);
    ca_check_(&c, __LINE__, "parse under OOM");
  }
}

/* ------------------------------------------------------------ set_constant -- */

TEST(set_constant) {
  const char *text = "graph(%x: [2, 3]) {\n"
                     "  %w: [2, 3] = const\n"
                     "  %b: [3] = const{1, 2, 3}\n"
                     "  %0 = mul(%x, %w)\n"
                     "  %y = add(%0, %b)\n"
                     "  return %y\n}\n";
  const float wd[6] = {1, -2, 3, -4, 5, -6}, bd[3] = {0.5f, 0.25f, -1};
  const float ones[6] = {1, 1, 1, 1, 1, 1};
  const float want[6] = {1.5f, -1.75f, 2, -3.5f, 5.25f, -7};
  float out[6] = {0};
  const float *in[1];
  float *outs[1];
  fuse_graph *g = PARSE_OK(text);
  char *t;
  if (!g) return;
  CHECK_EQ_INT(fuse_graph_set_constant(g, "w", wd, 6), FUSE_OK);
  CHECK_EQ_INT(fuse_graph_set_constant(g, "b", bd, 3), FUSE_OK);
  t = to_text(g);
  CHECK_STR_CONTAINS(t, "%b: [3] = const{0.5, 0.25, -1}");
  CHECK_STR_CONTAINS(t, "%w: [2, 3] = const\n");
  free(t);
  in[0] = ones;
  outs[0] = out;
  CHECK_EQ_INT(run_graph(g, in, outs), FUSE_OK);
  CHECK_NEAR_ARRAY(out, want, 6, 0);
  fuse_graph_destroy(g);

  /* errors, each on a fresh graph (a failed fill may be sticky): each is refused and leaves
     the constant as it was */
  {
    static const char *const names[] = {"nope", "b", "b", "b", "w", "x", "y", "b", NULL, "", "0"};
    const float *datas[11];
    const size_t counts[11] = {3, 2, 4, 0, 5, 6, 6, 3, 3, 3, 3};
    int k;
    for (k = 0; k < 11; k++) datas[k] = wd;
    datas[7] = NULL; /* NULL data */
    /* "x" is an input, "y" an op, "0" a %0 label (not a name) */
    for (k = 0; k < 11; k++) {
      fuse_result r;
      g = PARSE_OK(text);
      if (!g) return;
      r = fuse_graph_set_constant(g, names[k], datas[k], counts[k]);
      if (r == FUSE_OK)
        failf(__LINE__, "set_constant case %d (name %s, n %lu) succeeded", k,
              names[k] ? names[k] : "NULL", (unsigned long)counts[k]);
      if (fuse_graph_status(g) == FUSE_OK) { /* unless the failure is sticky, b is as it was */
        t = to_text(g);
        CHECK_STR_CONTAINS(t, "%b: [3] = const{1, 2, 3}");
        free(t);
      }
      fuse_graph_destroy(g);
    }
    CHECK(fuse_graph_set_constant(NULL, "b", bd, 3) != FUSE_OK);
  }

  /* also on a graph built with the API; a NULL-data constant; a rank-0 constant */
  {
    fuse_graph *h = fuse_graph_create(NULL);
    const float v = -0.125f, q[4] = {4, 3, 2, 1};
    fuse_value x = IN(h, "x", 4), c = CST(h, "c", 4), s = fuse_constant(h, "s", 0, NULL, NULL);
    fuse_output(h, fuse_mul(h, fuse_add(h, x, c), s));
    CHECK_EQ_INT(fuse_graph_set_constant(h, "c", q, 4), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_set_constant(h, "s", &v, 1), FUSE_OK);
    CHECK(fuse_graph_set_constant(h, "s", q, 2) != FUSE_OK);
    t = to_text(h);
    CHECK_STR_CONTAINS(t, "%c: [4] = const{4, 3, 2, 1}");
    CHECK_STR_CONTAINS(t, "%s: [] = const{-0.125}");
    free(t);
    fuse_graph_destroy(h);
  }
}

/* ------------------------------------------------------------ write / print -- */

TEST(write_and_print_agree) {
  fuse_graph *(*makers[4])(void);
  int i;
  makers[0] = seed_chain;
  makers[1] = awkward_graph;
  makers[2] = odd_names;
  makers[3] = all_pools;
  for (i = 0; i < 4; i++) {
    fuse_graph *g = makers[i]();
    sbuf b;
    FILE *f = tmpfile();
    char *fbytes = NULL;
    long flen = 0;
    memset(&b, 0, sizeof b);
    CHECK_EQ_INT(fuse_graph_write(g, sbuf_write, &b), FUSE_OK);
    CHECK(b.calls > 0);
    CHECK(b.n > 0 && b.p && strlen(b.p) == b.n); /* no NUL bytes inside */
    CHECK(f != NULL);
    if (f) {
      CHECK_EQ_INT(fuse_graph_print(g, f), FUSE_OK);
      fflush(f);
      fseek(f, 0, SEEK_END);
      flen = ftell(f);
      fseek(f, 0, SEEK_SET);
      fbytes = (char *)malloc((size_t)flen + 1);
      if (fbytes && fread(fbytes, 1, (size_t)flen, f) == (size_t)flen) {
        CHECK_EQ_INT(flen, (long)b.n);
        CHECK(b.p && (size_t)flen == b.n && memcmp(fbytes, b.p, b.n) == 0);
      } else {
        CHECK(0);
      }
      free(fbytes);
      fclose(f);
    }
    free(b.p);
    fuse_graph_destroy(g);
  }
  {
    fuse_graph *g = seed_chain();
    sbuf b;
    memset(&b, 0, sizeof b);
    CHECK(fuse_graph_write(NULL, sbuf_write, &b) != FUSE_OK);
    CHECK(fuse_graph_write(g, NULL, &b) != FUSE_OK);
    CHECK(fuse_graph_print(NULL, stdout) != FUSE_OK);
    CHECK(fuse_graph_print(g, NULL) != FUSE_OK);
    free(b.p);
    fuse_graph_destroy(g);
  }
}

/* --------------------------------------------------------------- locale -- */

TEST(locale_independence) {
  static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE", "fr_FR.UTF-8",
                                      "fr_FR.utf8", "fr_FR", "ru_RU.UTF-8", "nl_NL.UTF-8",
                                      "it_IT.UTF-8", "es_ES.UTF-8", "pt_BR.UTF-8", "de_AT.UTF-8",
                                      "da_DK.UTF-8", "pl_PL.UTF-8", NULL};
  fuse_graph *g1 = awkward_graph(), *g2 = bn_conv_matmul();
  char *c1 = to_text(g1), *c2 = to_text(g2), *l1, *l2;
  const char *used = NULL;
  int i;
  for (i = 0; names[i]; i++) {
    if (setlocale(LC_ALL, names[i]) && localeconv()->decimal_point[0] == ',') {
      used = names[i];
      break;
    }
  }
  if (!used) {
    setlocale(LC_ALL, "C");
    fprintf(stderr, "  note: locale_independence skipped: no locale with a comma decimal point "
                    "is installed (locale -a)\n");
  } else {
    fuse_graph *p1 = NULL, *p2 = NULL;
    char check[32];
    snprintf(check, sizeof check, "%.1f", 1.5);
    CHECK(strcmp(check, "1,5") == 0); /* the locale is really active */
    l1 = to_text(g1);
    l2 = to_text(g2);
    CHECK(c1 && l1 && strcmp(c1, l1) == 0);
    CHECK(c2 && l2 && strcmp(c2, l2) == 0);
    CHECK_EQ_INT(fuse_graph_parse(c1, NULL, &p1), FUSE_OK);
    CHECK_EQ_INT(fuse_graph_parse(c2, NULL, &p2), FUSE_OK);
    free(l1);
    free(l2);
    l1 = p1 ? to_text(p1) : NULL;
    l2 = p2 ? to_text(p2) : NULL;
    CHECK(c1 && l1 && strcmp(c1, l1) == 0);
    CHECK(c2 && l2 && strcmp(c2, l2) == 0);
    free(l1);
    free(l2);
    fuse_graph_destroy(p1);
    fuse_graph_destroy(p2);
    setlocale(LC_ALL, "C");
    fprintf(stderr, "  note: locale_independence ran under %s\n", used);
  }
  free(c1);
  free(c2);
  fuse_graph_destroy(g1);
  fuse_graph_destroy(g2);
}

int main(void) {
  RUN(parse_comments_whitespace_defaults);
  RUN(parse_reshape_minus_one_and_annotations);
  RUN(parse_number_operands);
  RUN(parse_every_attribute_explicit);
  RUN(parse_errors);
  RUN(parse_truncations);
  RUN(parse_out_of_memory);
  RUN(set_constant);
  RUN(write_and_print_agree);
  RUN(locale_independence);
  return runner_finish("text_parse");
}
