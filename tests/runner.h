/* runner.h - the tiny test runner shared by every tests/test_*.c file.

   Each test file is its own program:

       #include "runner.h"
       TEST(adds_two_numbers) { CHECK(1 + 1 == 2); CHECK_EQ_INT(fuse_graph_op_count(g), 3); }
       int main(void) { RUN(adds_two_numbers); return runner_finish("graph"); }

   runner_finish prints "<area>: N passed, N failed" as its last line; `make test` adds the
   lines of every file up and prints the total the same way. A test passes when none of its
   CHECKs failed. Relative error, where a test compares tensors, is normwise:
   max_i |got_i - want_i| / max_i |want_i| (see runner_rel_error). */
#ifndef FUSE_TEST_RUNNER_H
#define FUSE_TEST_RUNNER_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define RUNNER_UNUSED __attribute__((unused)) /* a helper not every test program calls */
#else
#define RUNNER_UNUSED
#endif

static int runner_passed, runner_failed, runner_test_failed;
static const char *runner_current;

#define TEST(name) static void test_##name(void)
#define RUN(name) runner_run(#name, test_##name)

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      runner_test_failed = 1;                                                         \
      fprintf(stderr, "  FAIL %s (%s:%d): %s\n", runner_current, __FILE__, __LINE__, \
              #cond);                                                                 \
    }                                                                                 \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                              \
  do {                                                                                  \
    long long runner_a_ = (long long)(a), runner_b_ = (long long)(b);                   \
    if (runner_a_ != runner_b_) {                                                       \
      runner_test_failed = 1;                                                           \
      fprintf(stderr, "  FAIL %s (%s:%d): %s == %s: %lld != %lld\n", runner_current,    \
              __FILE__, __LINE__, #a, #b, runner_a_, runner_b_);                        \
    }                                                                                   \
  } while (0)

#define CHECK_STR_CONTAINS(haystack, needle)                                               \
  do {                                                                                     \
    const char *runner_h_ = (haystack);                                                    \
    if (!runner_h_ || !strstr(runner_h_, (needle))) {                                      \
      runner_test_failed = 1;                                                              \
      fprintf(stderr, "  FAIL %s (%s:%d): \"%s\" does not contain \"%s\"\n", runner_current, \
              __FILE__, __LINE__, runner_h_ ? runner_h_ : "(null)", (needle));             \
    }                                                                                      \
  } while (0)

/* Fails when the normwise relative error of got against want exceeds tol. */
#define CHECK_NEAR_ARRAY(got, want, n, tol)                                                 \
  do {                                                                                      \
    double runner_e_ = runner_rel_error((got), (want), (n));                                \
    if (!(runner_e_ <= (tol))) {                                                            \
      runner_test_failed = 1;                                                               \
      fprintf(stderr, "  FAIL %s (%s:%d): relative error %.3g > %.3g (%s vs %s)\n",         \
              runner_current, __FILE__, __LINE__, runner_e_, (double)(tol), #got, #want);   \
    }                                                                                       \
  } while (0)

static RUNNER_UNUSED double runner_rel_error(const float *got, const float *want, size_t n) {
  double max_diff = 0, max_ref = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    double d = fabs((double)got[i] - (double)want[i]);
    if (got[i] != got[i] && want[i] != want[i]) continue; /* NaN where NaN is expected */
    if (d != d) return INFINITY; /* NaN */
    if (d > max_diff) max_diff = d;
    if (fabs((double)want[i]) > max_ref) max_ref = fabs((double)want[i]);
  }
  if (max_diff == 0) return 0;
  return max_diff / (max_ref > 1e-30 ? max_ref : 1e-30);
}

/* Text a fuse_*_write callback hands over (a plan listing, fuse_explain's), kept whole up to
   its size: fuse_plan_write(p, runner_text_write, &t), then t.s. */
typedef struct runner_text {
  char s[1 << 16];
  size_t len;
} runner_text;
static RUNNER_UNUSED void runner_text_clear(runner_text *t) {
  t->len = 0;
  t->s[0] = 0;
}
static RUNNER_UNUSED void runner_text_write(void *user, const char *s, size_t n) {
  runner_text *t = (runner_text *)user;
  if (t->len + n + 1 > sizeof t->s) return;
  memcpy(t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = 0;
}

/* A failure at a line of the test program's file, with a printf message (the helpers that
   check for a caller pass its __LINE__); the file is the program's source, not this header. */
#if defined(__GNUC__) || defined(__clang__)
#define RUNNER_SOURCE __BASE_FILE__
#else
#define RUNNER_SOURCE __FILE__
#endif
static RUNNER_UNUSED void failf(int line, const char *fmt, ...) {
  va_list ap;
  runner_test_failed = 1;
  fprintf(stderr, "  FAIL %s (%s:%d): ", runner_current, RUNNER_SOURCE, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* Pool attributes, field by field. */
static RUNNER_UNUSED fuse_pool2d_attrs pool(int kh, int kw, int sh, int sw, int pt, int pl,
                                            int pb, int pr, int dh, int dw, int ceil_mode,
                                            int cip) {
  fuse_pool2d_attrs a;
  a.kernel[0] = kh;
  a.kernel[1] = kw;
  a.strides[0] = sh;
  a.strides[1] = sw;
  a.padding[0] = pt;
  a.padding[1] = pl;
  a.padding[2] = pb;
  a.padding[3] = pr;
  a.dilation[0] = dh;
  a.dilation[1] = dw;
  a.ceil_mode = ceil_mode;
  a.count_include_pad = cip;
  return a;
}

static void runner_run(const char *name, void (*fn)(void)) {
  runner_current = name;
  runner_test_failed = 0;
  fn();
  if (runner_test_failed) {
    runner_failed++;
    fprintf(stderr, "FAIL %s\n", name);
  } else {
    runner_passed++;
  }
}

static int runner_finish(const char *area) {
  printf("%s: %d passed, %d failed\n", area, runner_passed, runner_failed);
  fflush(stdout); /* a sanitizer's exit must not lose the closing line */
  return runner_failed ? 1 : 0;
}

#endif
