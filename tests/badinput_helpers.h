/* badinput_helpers.h - what test_badinput.c and test_badinput_onnx.c share: a row (a name,
   a function that makes one bad call, the result it must return and a word its message
   must contain), the counting allocator every row's graph uses, and the row runner. */
#ifndef BADINPUT_HELPERS_H
#define BADINPUT_HELPERS_H


#define INV FUSE_ERROR_INVALID_ARGUMENT
#define SHP FUSE_ERROR_SHAPE
#define OOM FUSE_ERROR_OUT_OF_MEMORY
#define UNS FUSE_ERROR_UNSUPPORTED
#define PRS FUSE_ERROR_PARSE
#define EIO FUSE_ERROR_IO

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define IN(g, name, ...) fuse_input((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__))
#define CST(g, name, ...) fuse_constant((g), (name), NDIM(__VA_ARGS__), D(__VA_ARGS__), NULL)

RUNNER_UNUSED
static int verbose;

/* Under AddressSanitizer (make test SANITIZE=1) the bit flips take every other bit of a
   byte (alternating which half from byte to byte), to keep the run short. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* ------------------------------------------------------------------ the rows -- */

typedef struct outcome {
  fuse_result r;   /* what the call returned */
  char msg[600];   /* the message it left, "" when none */
  int no_channel;  /* the function has no way to give a message */
} outcome;

typedef struct row {
  const char *name;
  void (*fn)(outcome *o);
  fuse_result want, want2; /* want2: 0, or a second acceptable result */
  const char *word;        /* the message must contain it */
} row;

RUNNER_UNUSED
static counting_alloc ca;
RUNNER_UNUSED
static fuse_allocator al; /* every graph a row makes uses it */

RUNNER_UNUSED
static fuse_graph *G(void) { return fuse_graph_create(&al); }

RUNNER_UNUSED
static void set_msg(outcome *o, const char *m) {
  size_t n = m ? strlen(m) : 0;
  if (n >= sizeof o->msg) n = sizeof o->msg - 1;
  if (n) memcpy(o->msg, m, n);
  o->msg[n] = 0;
}

/* A builder call that must fail: its result is FUSE_NONE, the graph's status and message say
   why. The graph is destroyed. */
RUNNER_UNUSED
static void built(outcome *o, fuse_graph *g, fuse_value v) {
  o->r = v == FUSE_NONE ? fuse_graph_status(g) : FUSE_OK;
  set_msg(o, fuse_graph_error(g));
  fuse_graph_destroy(g);
}

/* A call that returned a fuse_result on graph g (a builder-like status or a pass error). */
RUNNER_UNUSED
static void status(outcome *o, fuse_graph *g, fuse_result r) {
  o->r = r;
  set_msg(o, fuse_graph_error(g));
  fuse_graph_destroy(g);
}

/* A call without a message channel: `ok_if_bad` is whether it gave its "bad argument" answer. */
RUNNER_UNUSED
static void sentinel(outcome *o, int ok_if_bad) {
  o->no_channel = 1;
  o->r = ok_if_bad ? INV : FUSE_OK;
}

RUNNER_UNUSED
static fuse_value x4(fuse_graph *g) { return IN(g, "x", 1, 3, 8, 8); }

/* Runs one row; returns 1 when it passed. */
RUNNER_UNUSED
static int run_row_checked(const row *rw) {
  outcome o;
  int ok = 1;
  memset(&o, 0, sizeof o);
  al = ca_make(&ca);
  rw->fn(&o);
  if (o.r != rw->want && (rw->want2 == FUSE_OK || o.r != rw->want2)) {
    fprintf(stderr, "  FAIL row \"%s\": result %d (%s), want %d%s (message \"%s\")\n", rw->name,
            (int)o.r, fuse_result_string(o.r), (int)rw->want, rw->want2 ? " or the other" : "",
            o.msg);
    ok = 0;
  }
  if (rw->want == FUSE_OK) {
    /* a documented non-error: no message expected */
  } else if (!o.no_channel && !o.msg[0]) {
    fprintf(stderr, "  FAIL row \"%s\": empty message\n", rw->name);
    ok = 0;
  } else if (!o.no_channel && rw->word && !strstr(o.msg, rw->word)) {
    fprintf(stderr, "  FAIL row \"%s\": message \"%s\" does not name \"%s\"\n", rw->name, o.msg,
            rw->word);
    ok = 0;
  }
  if (ca.allocs != ca.frees || ca.bad_free || ca.bad_align) {
    fprintf(stderr, "  FAIL row \"%s\": %ld allocations, %ld frees, %ld bad frees, %ld misaligned\n",
            rw->name, ca.allocs, ca.frees, ca.bad_free, ca.bad_align);
    ok = 0;
  }
  if (verbose) printf("  %-44s %-16s %s\n", rw->name, fuse_result_string(o.r), o.msg);
  ca_done(&ca);
  return ok;
}

/* Runs every row of a table; the count of those that failed. */
RUNNER_UNUSED
static int run_table(const row *rows, int n) {
  int i, failed = 0;
  for (i = 0; i < n; i++)
    if (!run_row_checked(&rows[i])) failed++;
  printf("  bad-input table: %d rows, %d failed\n", n, failed);
  return failed;
}

#endif
