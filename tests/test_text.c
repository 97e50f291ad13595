/* test_text.c - the text form written: exact listings, print(parse(print(g))) == print(g) for
   graphs covering every op, attribute, name form and awkward float. test_text_parse.c: the
   reader's features and errors. */
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

/* -------------------------------------------------------- exact listings -- */

TEST(exact_listings) {
  fuse_graph *g;
  g = seed_chain();
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  CHECK_LISTING(g, seed_chain_text);
  fuse_graph_destroy(g);
  g = elementwise();
  CHECK_LISTING(g, elementwise_text);
  fuse_graph_destroy(g);
  g = pools_and_shapes();
  CHECK_LISTING(g, pools_text);
  fuse_graph_destroy(g);
  g = bn_conv_matmul();
  CHECK_LISTING(g, bn_text);
  fuse_graph_destroy(g);
  g = quoted_names();
  CHECK_LISTING(g, quoted_text);
  fuse_graph_destroy(g);
  g = numbering();
  CHECK_LISTING(g, numbering_text);
  fuse_graph_destroy(g);
}

/* the exact listings parse to graphs that print the same listing again */
TEST(exact_listings_parse) {
  const char *texts[6];
  int i;
  texts[0] = seed_chain_text;
  texts[1] = elementwise_text;
  texts[2] = pools_text;
  texts[3] = bn_text;
  texts[4] = quoted_text;
  texts[5] = numbering_text;
  for (i = 0; i < 6; i++) {
    fuse_graph *g = PARSE_OK(texts[i]);
    if (g && fuse_graph_status(g) == FUSE_OK) CHECK_LISTING(g, texts[i]);
    fuse_graph_destroy(g);
  }
  {
    fuse_graph *g = PARSE_OK(quoted_text);
    if (g) {
      CHECK(fuse_graph_find(g, "a b") != FUSE_NONE);
      CHECK(fuse_graph_find(g, "123") != FUSE_NONE);
      CHECK(fuse_graph_find(g, "q\"t\\") != FUSE_NONE);
      CHECK(fuse_graph_find(g, "_ok.name2") != FUSE_NONE);
      CHECK_EQ_INT(fuse_graph_find(g, "0"), FUSE_NONE); /* %0 labels stay unnamed */
      CHECK_EQ_INT(fuse_graph_op_count(g), 3);
    }
    fuse_graph_destroy(g);
  }
}

/* ------------------------------------------------------------ round trips -- */

TEST(round_trips) {
  fuse_graph *(*makers[16])(void);
  int n = 0, i;
  makers[n++] = seed_chain;
  makers[n++] = elementwise;
  makers[n++] = pools_and_shapes;
  makers[n++] = bn_conv_matmul;
  makers[n++] = quoted_names;
  makers[n++] = numbering;
  makers[n++] = convs;
  makers[n++] = matmuls;
  makers[n++] = axes;
  makers[n++] = batch_norms;
  makers[n++] = all_pools;
  makers[n++] = constants;
  makers[n++] = no_inputs;
  makers[n++] = outputs_misc;
  makers[n++] = odd_names;
  for (i = 0; i < n; i++) {
    fuse_graph *g = makers[i]();
    if (fuse_graph_status(g) != FUSE_OK)
      failf(__LINE__, "graph maker %d failed: %s", i, fuse_graph_error(g));
    else
      ROUNDTRIP(g);
    fuse_graph_destroy(g);
  }
}

TEST(names_in_text) {
  fuse_graph *g = odd_names(), *p;
  char *t = to_text(g);
  CHECK(t != NULL);
  if (t) {
    CHECK(strstr(t, "%input.1: [2]") || strstr(t, "%\"input.1\": [2]"));
    CHECK_STR_CONTAINS(t, "%\"0\": [2]");
    CHECK_STR_CONTAINS(t, "%0: [2]"); /* the unnamed input */
    CHECK_STR_CONTAINS(t, "%\"a\\\"b\\\\c d\": [2]");
    CHECK_STR_CONTAINS(t, "%\"1.5\": [1] = const{2}");
    CHECK_STR_CONTAINS(t, "%\"x-y\": [1] = const{2}");
    p = PARSE_OK(t);
    if (p) {
      fuse_value u = fuse_graph_input(p, 2);
      CHECK(fuse_graph_find(p, "input.1") == fuse_graph_input(p, 0));
      CHECK(fuse_graph_find(p, "0") == fuse_graph_input(p, 1));
      CHECK(u != FUSE_NONE && fuse_value_name(p, u) == NULL);
      CHECK(fuse_graph_find(p, "\xc3\xbcml\xc3\xa4ut") == fuse_graph_input(p, 3));
      CHECK(fuse_graph_find(p, "a\"b\\c d") == fuse_graph_input(p, 4));
      CHECK(fuse_graph_find(p, "1.5") != FUSE_NONE);
      CHECK(fuse_graph_find(p, "x-y") != FUSE_NONE);
    }
    fuse_graph_destroy(p);
  }
  free(t);
  fuse_graph_destroy(g);
  /* both spellings of an identifier name mean the same value */
  p = PARSE_OK("graph(%\"input.1\": [2]) {\n  %0 = relu(%input.1)\n  %1 = add(%0, %\"input.1\")\n"
               "  return %1\n}\n");
  if (p) {
    CHECK_EQ_INT(fuse_graph_find(p, "input.1"), fuse_graph_input(p, 0));
    CHECK_EQ_INT(fuse_graph_op_count(p), 2);
  }
  fuse_graph_destroy(p);
  /* a %N label is local; other labels name the value; named ops print with their name */
  p = PARSE_OK("graph(%x: [2]) {\n  %5 = relu(%x)\n  %feat = sigmoid(%5)\n  return %feat, %5\n}\n");
  if (p) {
    CHECK_EQ_INT(fuse_graph_find(p, "5"), FUSE_NONE);
    CHECK(fuse_value_name(p, fuse_graph_output(p, 1)) == NULL);
    CHECK_EQ_INT(fuse_graph_find(p, "feat"), fuse_graph_output(p, 0));
    CHECK_LISTING(p, "graph(%x: [2]) {\n  %0: [2] = relu(%x)\n  %feat: [2] = sigmoid(%0)\n"
                     "  return %feat, %0\n}\n");
    ROUNDTRIP(p);
  }
  fuse_graph_destroy(p);
}

/* ---------------------------------------------------------- awkward floats -- */

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* fewest significant digits (%.Ng) that read back to v */
static int min_digits(float v) {
  char buf[64];
  int p;
  for (p = 1; p <= 9; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, (double)v);
    if (same_bits(strtof(buf, NULL), v)) return p;
  }
  return 9;
}

static int sig_digits(const char *tok, size_t len) {
  char d[64];
  size_t i, n = 0, a, b;
  for (i = 0; i < len && tok[i] != 'e' && tok[i] != 'E'; i++)
    if (tok[i] >= '0' && tok[i] <= '9' && n < sizeof d) d[n++] = tok[i];
  a = 0;
  while (a < n && d[a] == '0') a++;
  b = n;
  while (b > a && d[b - 1] == '0') b--;
  return b > a ? (int)(b - a) : 1;
}

/* checks one printed number token against the float it must stand for */
static int check_token_(const char *tok, size_t len, float v, int line) {
  char buf[80];
  float got;
  char *end;
  int ok = 1;
  if (len == 0 || len >= sizeof buf) {
    failf(line, "bad token length %lu for %.9g", (unsigned long)len, (double)v);
    return 0;
  }
  memcpy(buf, tok, len);
  buf[len] = 0;
  if (isinf(v)) {
    if (strcmp(buf, v > 0 ? "inf" : "-inf") != 0) {
      failf(line, "infinity printed as \"%s\"", buf);
      return 0;
    }
    return 1;
  }
  got = strtof(buf, &end);
  if (*end != 0) {
    failf(line, "token \"%s\" for %.9g is not a plain decimal", buf, (double)v);
    ok = 0;
  }
  if (!same_bits(got, v)) {
    failf(line, "token \"%s\" reads back as %.9g (bits differ), want %.9g", buf, (double)got,
          (double)v);
    ok = 0;
  }
  {
    /* shortest: no more significant digits than needed, or no longer than %.<needed>g */
    char ref[64];
    snprintf(ref, sizeof ref, "%.*g", min_digits(v), (double)v);
    if (sig_digits(buf, len) > min_digits(v) && len > strlen(ref)) {
      failf(line, "token \"%s\" for %.9g is not the shortest (\"%s\" reads back too)", buf,
            (double)v, ref);
      ok = 0;
    }
  }
  return ok;
}

/* finds the k-th occurrence of prefix and returns the token after it, up to a stop char */
static const char *token_after(const char *text, const char *prefix, int k, const char *stops,
                               size_t *len) {
  const char *p = text;
  int i;
  for (i = 0; i <= k; i++) {
    p = strstr(p, prefix);
    if (!p) return NULL;
    p += strlen(prefix);
  }
  *len = strcspn(p, stops);
  return p;
}

TEST(awkward_floats) {
  fuse_graph *g = awkward_graph();
  char *t;
  const char *tok;
  size_t len;
  char pre[32];
  int i, nbn = 0;
  CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
  t = to_text(g);
  CHECK(t != NULL);
  if (!t) {
    fuse_graph_destroy(g);
    return;
  }
  for (i = 0; i < N_AWKWARD; i++) {
    float v = awkward[i];
    snprintf(pre, sizeof pre, "%%k%d: [] = const{", i);
    tok = token_after(t, pre, 0, "}", &len);
    if (!tok) failf(__LINE__, "no line for constant k%d", i);
    else check_token_(tok, len, v, __LINE__);
    tok = token_after(t, "= maximum(%x, ", i, ")", &len);
    if (!tok) failf(__LINE__, "no inline scalar %d", i);
    else check_token_(tok, len, v, __LINE__);
    tok = token_after(t, ", lo=", 2 * i, ",", &len);
    if (!tok) failf(__LINE__, "no clip lo %d", i);
    else check_token_(tok, len, v, __LINE__);
    tok = token_after(t, ", hi=", 2 * i + 1, ")", &len);
    if (!tok) failf(__LINE__, "no clip hi %d", i);
    else check_token_(tok, len, v, __LINE__);
    if (!(v < 0) && !isinf(v)) {
      tok = token_after(t, "eps=", nbn++, ")", &len);
      if (!tok) failf(__LINE__, "no eps %d", i);
      else check_token_(tok, len, v, __LINE__);
    }
  }
  tok = token_after(t, "%quad: [4] = const{", 0, "}", &len);
  CHECK(tok != NULL);
  if (tok) {
    const float q[4] = {0.1f, -0.0f, 1e-40f, 3.4e38f};
    const char *p = tok;
    for (i = 0; i < 4; i++) {
      size_t l = strcspn(p, ",}");
      check_token_(p, l, q[i], __LINE__);
      p += l;
      if (*p == ',') p++;
      if (*p == ' ') p++;
    }
  }
  /* the forms the spec names */
  CHECK_STR_CONTAINS(t, "%k0: [] = const{1e-05}");
  CHECK_STR_CONTAINS(t, "%k1: [] = const{0.1}");
  CHECK_STR_CONTAINS(t, "%k16: [] = const{6}");
  CHECK_STR_CONTAINS(t, "%k27: [] = const{0.5}");
  CHECK_STR_CONTAINS(t, "clip(%x, lo=-inf, hi=inf)");
  ROUNDTRIP(g);
  free(t);
  fuse_graph_destroy(g);
  /* one small graph per value, so that each value that does not read back is named */
  for (i = 0; i < N_AWKWARD; i++) {
    float v = awkward[i];
    fuse_graph *h = fuse_graph_create(NULL);
    fuse_value x = IN(h, "x", 2);
    fuse_constant(h, "k", 0, NULL, &v);
    fuse_output(h, fuse_clip(h, fuse_maximum(h, x, fuse_scalar(h, v)), v, INFINITY));
    t = to_text(h);
    if (t) {
      fuse_graph *p = NULL;
      fuse_result r = fuse_graph_parse(t, NULL, &p);
      char *t2 = r == FUSE_OK ? to_text(p) : NULL;
      if (r != FUSE_OK)
        failf(__LINE__, "value %.9g (awkward[%d]) printed as below does not parse: %s\n%s",
              (double)v, i, p ? fuse_graph_error(p) : "", t);
      else if (!t2 || strcmp(t, t2) != 0)
        failf(__LINE__, "value %.9g (awkward[%d]) does not round-trip:\n%s\n%s", (double)v, i,
              t, t2 ? t2 : "");
      free(t2);
      fuse_graph_destroy(p);
    }
    free(t);
    fuse_graph_destroy(h);
  }
}

/* random bit patterns (denormals included): the printed token reads back exactly, and the
   parser reads it back to the same float */
TEST(random_floats_round_trip) {
  uint32_t state = 0x9e3779b9u;
  int round, bad = 0;
  for (round = 0; round < 8 && bad < 10; round++) {
    fuse_graph *g = fuse_graph_create(NULL), *p = NULL;
    float vals[2000];
    char *t, *t2 = NULL;
    const char *q;
    int i, j;
    fuse_output(g, fuse_relu(g, IN(g, "x", 4)));
    for (i = 0; i < 500; i++) {
      for (j = 0; j < 4; j++) {
        float f;
        do {
          uint32_t bits;
          state = state * 1664525u + 1013904223u;
          bits = state;
          if (round % 2) bits &= 0x807fffffu | ((state >> 7) & 0x03800000u); /* small exps */
          memcpy(&f, &bits, sizeof f);
        } while (!isfinite(f) || fabsf(f) == FLT_MAX);
        vals[4 * i + j] = f;
      }
      CSTD(g, NULL, &vals[4 * i], 4);
    }
    CHECK_EQ_INT(fuse_graph_status(g), FUSE_OK);
    t = to_text(g);
    if (!t) {
      fuse_graph_destroy(g);
      CHECK(0);
      continue;
    }
    q = t;
    for (i = 0; i < 2000 && bad < 10; i++) {
      size_t l;
      if (i % 4 == 0) {
        q = strstr(q, "= const{");
        if (!q) {
          failf(__LINE__, "constant %d not found", i / 4);
          bad = 10;
          break;
        }
        q += 8;
      }
      l = strcspn(q, ",}");
      if (!check_token_(q, l, vals[i], __LINE__)) bad++;
      q += l;
      if (*q == ',') q++;
      if (*q == ' ') q++;
    }
    if (fuse_graph_parse(t, NULL, &p) != FUSE_OK) {
      failf(__LINE__, "random constants do not parse: %s", p ? fuse_graph_error(p) : "");
      bad++;
    } else {
      t2 = to_text(p);
      if (!t2 || strcmp(t, t2) != 0) {
        size_t d = t2 ? first_diff(t, t2) : 0, a = d;
        while (a > 0 && t[a - 1] != '\n') a--;
        failf(__LINE__, "random constants do not round-trip; first differing line:\n%.*s\n%.*s",
              (int)strcspn(t + a, "\n"), t + a, t2 ? (int)strcspn(t2 + a, "\n") : 0,
              t2 ? t2 + a : "");
        bad++;
      }
    }
    free(t);
    free(t2);
    fuse_graph_destroy(p);
    fuse_graph_destroy(g);
  }
}

/* the spec's message form for every parse error is "line L, column C: ..." */
TEST(parse_error_columns) {
  static const char *const texts[] = {
      "graph(%x: [1, 3]) {\n  %0 = frobnicate(%x)\n  return %0\n}\n",
      "graph(%x: [1, 3]) {\n  %0 = relu(%nope)\n  return %0\n}\n",
      "graph(%x: [2]) {\n  %aa = relu(%x)\n  %aa = relu(%x)\n  return %aa\n}\n",
      "graph(%x: [2, 3]) {\n  %0: [1, 3] = relu(%x)\n  return %0\n}\n",
      "graph(%x: [2]) {\n  %0 = add(%x)\n  return %0\n}\n",
      "graph(%x: [2]) {\n  %c: [2] = const{1}\n  return %x\n}\n",
      "graph(%x: [2]) {\n  %c = const\n  return %x\n}\n",
      NULL};
  int i;
  for (i = 0; texts[i]; i++) {
    fuse_graph *g = NULL;
    fuse_result r = fuse_graph_parse(texts[i], NULL, &g);
    const char *m = g ? fuse_graph_error(g) : "";
    CHECK_EQ_INT(r, FUSE_ERROR_PARSE);
    if (!strstr(m, ", column "))
      failf(__LINE__, "message \"%s\" has no \"line L, column C\"", m);
    fuse_graph_destroy(g);
  }
}

/* the parser reads long decimals to the nearest float */
TEST(parse_long_decimals) {
  char text[8192];
  size_t n = 0;
  fuse_graph *g;
  int i;
  n += (size_t)snprintf(text + n, sizeof text - n, "graph() {\n");
  for (i = 0; i < N_AWKWARD; i++) {
    if (isinf(awkward[i])) continue;
    n += (size_t)snprintf(text + n, sizeof text - n, "  %%k%d: [] = const{%.40g}\n", i,
                          (double)awkward[i]);
  }
  n += (size_t)snprintf(text + n, sizeof text - n,
                        "  %%out = relu(%%k0)\n  return %%out\n}\n");
  CHECK(n < sizeof text);
  g = PARSE_OK(text);
  if (g) {
    char *t = to_text(g);
    CHECK(t != NULL);
    for (i = 0; t && i < N_AWKWARD; i++) {
      char pre[32];
      const char *tok;
      size_t len;
      if (isinf(awkward[i])) continue;
      snprintf(pre, sizeof pre, "%%k%d: [] = const{", i);
      tok = token_after(t, pre, 0, "}", &len);
      if (!tok) failf(__LINE__, "no line for constant k%d", i);
      else check_token_(tok, len, awkward[i], __LINE__);
    }
    free(t);
  }
  fuse_graph_destroy(g);
}

/* strict: a decimal just above the midpoint of two floats rounds up (strtod + cast would
   round to even and give 1) */
#if 0 /* not promised: parsing is exact for what the printer writes; long decimals may be 1 ulp off */
TEST(parse_decimal_correctly_rounded) {
  fuse_graph *g = PARSE_OK(
      "graph() {\n  %a: [] = const{1.00000005960464477539062500000001}\n"
      "  %b: [] = const{1.00000005960464477539062499999999}\n  %o = relu(%a)\n  return %o\n}\n");
  if (g) {
    char *t = to_text(g);
    CHECK_STR_CONTAINS(t, "%a: [] = const{1.0000001}");
    CHECK_STR_CONTAINS(t, "%b: [] = const{1}");
    free(t);
  }
  fuse_graph_destroy(g);
}
#endif

int main(void) {
  RUN(exact_listings);
  RUN(exact_listings_parse);
  RUN(round_trips);
  RUN(names_in_text);
  RUN(awkward_floats);
  RUN(random_floats_round_trip);
  RUN(parse_long_decimals);
  RUN(parse_error_columns);
  return runner_finish("text");
}
