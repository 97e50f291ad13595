/* graph_helpers.h - what test_graph.c and test_graph_state.c share: shape and error checks,
   a fresh graph with one valid value, the text form into a string, a plain run. */
#ifndef GRAPH_HELPERS_H
#define GRAPH_HELPERS_H

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define IN(g, name, ...) fuse_input((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__))
#define CST(g, name, ...) fuse_constant((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__), NULL)
#define CHECK_SHAPE(g, v, ...) check_shape_((g), (v), NDIM(__VA_ARGS__), D(__VA_ARGS__), __LINE__)
#define CHECK_RANK0(g, v) check_shape_((g), (v), 0, NULL, __LINE__)
#define P20 ((int64_t)1 << 20)

RUNNER_UNUSED
static const char *shape_str(int rank, const int64_t *d, char *buf, size_t cap) {
  size_t n = 0;
  int i;
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (i = 0; i < rank && d && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)d[i]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

RUNNER_UNUSED
static void check_shape_(const fuse_graph *g, fuse_value v, int rank, const int64_t *dims,
                         int line) {
  char a[256], b[256];
  const int64_t *s;
  int r, i;
  if (v == FUSE_NONE) {
    failf(line, "builder returned FUSE_NONE (status %d, \"%s\"), want shape %s",
          (int)fuse_graph_status(g), fuse_graph_error(g) ? fuse_graph_error(g) : "(null)",
          shape_str(rank, dims, b, sizeof b));
    return;
  }
  r = fuse_value_rank(g, v);
  s = fuse_value_shape(g, v);
  if (r != rank) {
    failf(line, "rank %d %s, want %d %s", r, r > 0 && s ? shape_str(r, s, a, sizeof a) : "",
          rank, shape_str(rank, dims, b, sizeof b));
    return;
  }
  if (rank > 0 && !s) {
    failf(line, "fuse_value_shape returned NULL for a rank-%d value", rank);
    return;
  }
  for (i = 0; i < rank; i++)
    if (s[i] != dims[i]) {
      failf(line, "shape %s, want %s", shape_str(r, s, a, sizeof a),
            shape_str(rank, dims, b, sizeof b));
      return;
    }
}

RUNNER_UNUSED
static fuse_value g_x0; /* a valid value of every graph made by fresh() */

/* A graph with one input [2,3] (g_x0) and one output, so that fuse_compile would work
   if it were not for the error the test provokes. */
RUNNER_UNUSED
static fuse_graph *fresh(void) {
  fuse_graph *g = fuse_graph_create(NULL);
  g_x0 = IN(g, "x0", 2, 3);
  fuse_output(g, fuse_relu(g, g_x0));
  if (!g || fuse_graph_status(g) != FUSE_OK)
    failf(__LINE__, "fresh graph is not OK: %s", g ? fuse_graph_error(g) : "NULL");
  return g;
}

RUNNER_UNUSED
static int starts_with_op(const char *msg, const char *prefix) {
  size_t n = strlen(prefix);
  if (strncmp(msg, prefix, n) == 0) return 1;
  if (strncmp(msg, "fuse_", 5) == 0 && strncmp(msg + 5, prefix, n) == 0) return 1;
  return 0;
}

/* Checks that `got` is FUSE_NONE, that the status is c1 (or c2 when c2 != 0), that the
   message starts with needles[0] and contains every other needle; then that the error is
   sticky (later builders fail, status / message are unchanged, fuse_compile returns the
   same status). Destroys g. */
RUNNER_UNUSED
static void expect_fail_(fuse_graph *g, fuse_value got, fuse_result c1, fuse_result c2,
                         const char *const *needles, int line) {
  char saved[2048];
  const char *msg;
  fuse_result st, r;
  fuse_plan *plan = NULL;
  int i;
  if (!g) {
    failf(line, "graph is NULL");
    return;
  }
  st = fuse_graph_status(g);
  msg = fuse_graph_error(g);
  if (got != FUSE_NONE) failf(line, "builder returned %d, want FUSE_NONE", (int)got);
  if (st != c1 && (c2 == FUSE_OK || st != c2))
    failf(line, "status %d (%s), want %d (%s)%s%s; message \"%s\"", (int)st,
          fuse_result_string(st), (int)c1, fuse_result_string(c1), c2 ? " or " : "",
          c2 ? fuse_result_string(c2) : "", msg ? msg : "(null)");
  if (!msg || !*msg) {
    failf(line, "empty error message");
    saved[0] = 0;
  } else {
    if (!starts_with_op(msg, needles[0]))
      failf(line, "message \"%s\" does not start with \"%s\"", msg, needles[0]);
    for (i = 1; needles[i]; i++)
      if (!strstr(msg, needles[i]))
        failf(line, "message \"%s\" does not contain \"%s\"", msg, needles[i]);
    strncpy(saved, msg, sizeof saved - 1);
    saved[sizeof saved - 1] = 0;
  }
  /* stickiness */
  if (fuse_relu(g, g_x0) != FUSE_NONE) failf(line, "sticky: later valid relu succeeded");
  if (fuse_clip(g, g_x0, 1.0f, 0.0f) != FUSE_NONE) failf(line, "sticky: later clip succeeded");
  if (fuse_input(g, "sticky_new_input", 1, D(2)) != FUSE_NONE)
    failf(line, "sticky: later fuse_input succeeded");
  if (fuse_constant(g, NULL, 1, D(2), NULL) != FUSE_NONE)
    failf(line, "sticky: later fuse_constant succeeded");
  if (fuse_scalar(g, 1.0f) != FUSE_NONE) failf(line, "sticky: later fuse_scalar succeeded");
  if (fuse_output(g, g_x0) == FUSE_OK) failf(line, "sticky: later fuse_output returned OK");
  if (fuse_graph_status(g) != st)
    failf(line, "sticky: status changed from %d to %d", (int)st, (int)fuse_graph_status(g));
  msg = fuse_graph_error(g);
  if (!msg || strcmp(msg, saved) != 0)
    failf(line, "sticky: message changed from \"%s\" to \"%s\"", saved, msg ? msg : "(null)");
  r = fuse_compile(g, NULL, &plan);
  if (r != st) failf(line, "fuse_compile returned %d, want the sticky %d", (int)r, (int)st);
  if (r == FUSE_OK && plan) fuse_plan_destroy(plan);
  fuse_graph_destroy(g);
}

/* EXPECT_FAIL(g, got, code, alt_code_or_0, "op:", "needle", ...) - consumes g */
#define EXPECT_FAIL(g, got, c1, c2, ...) \
  expect_fail_((g), (got), (c1), (c2), (const char *const[]){__VA_ARGS__, NULL}, __LINE__)
#define INV FUSE_ERROR_INVALID_ARGUMENT
#define SHP FUSE_ERROR_SHAPE

/* text capture through fuse_graph_write */
typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf;
RUNNER_UNUSED
static void sbuf_write(void *user, const char *text, size_t len) {
  sbuf *b = (sbuf *)user;
  if (b->n + len + 1 > b->cap) {
    size_t cap = (b->n + len + 1) * 2;
    char *p = (char *)realloc(b->p, cap);
    if (!p) return;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, text, len);
  b->n += len;
  b->p[b->n] = 0;
}
RUNNER_UNUSED
static char *to_text(const fuse_graph *g) {
  sbuf b = {NULL, 0, 0};
  if (fuse_graph_write(g, sbuf_write, &b) != FUSE_OK) {
    free(b.p);
    return NULL;
  }
  if (!b.p) {
    b.p = (char *)malloc(1);
    if (b.p) b.p[0] = 0;
  }
  return b.p;
}

/* compile + run with the plan's own workspace */
RUNNER_UNUSED
static fuse_result run_graph(const fuse_graph *g, const float *const *in, float *const *out) {
  fuse_plan *plan = NULL;
  fuse_result r = fuse_compile(g, NULL, &plan);
  if (r != FUSE_OK) return r;
  r = fuse_run(plan, in, out, NULL);
  fuse_plan_destroy(plan);
  return r;
}

/* the binary builders, and their names as messages start */
typedef fuse_value (*binop_fn)(fuse_graph *, fuse_value, fuse_value);
RUNNER_UNUSED
static const binop_fn binops[5] = {fuse_add, fuse_sub, fuse_mul, fuse_maximum, fuse_minimum};
RUNNER_UNUSED
static const char *const binop_names[5] = {"add:", "sub:", "mul:", "maximum:", "minimum:"};

#endif
