/* The consumer's second unit: fuse.h's declarations again (no second implementation), the
   plan's description through fuse_plan_write, the result against a direct loop. */
#include "fuse.h"

#include <stdio.h>
#include <string.h>

int check_result(const float *image, const float *weight, const float *bias,
                 const float *result);
int check_plan(const fuse_plan *plan, const char *expect);

typedef struct text {
  char buffer[4096];
  size_t length;
} text;

static void append(void *user, const char *s, size_t n) {
  text *t = (text *)user;
  if (n > sizeof t->buffer - 1 - t->length) n = sizeof t->buffer - 1 - t->length;
  memcpy(t->buffer + t->length, s, n);
  t->length += n;
  t->buffer[t->length] = '\0';
}

/* one fused step, described with `expect` in it */
int check_plan(const fuse_plan *plan, const char *expect) {
  text t;
  t.length = 0;
  t.buffer[0] = '\0';
  if (fuse_plan_write(plan, append, &t) != FUSE_OK || fuse_plan_step_count(plan) != 1 ||
      strstr(t.buffer, expect) == NULL) {
    printf("consumer: expected one step with \"%s\", the plan is:\n%s", expect, t.buffer);
    return 1;
  }
  return 0;
}

static float magnitude(float v) { return v < 0.0f ? -v : v; }

/* relu(conv2d 3x3, padding 1, of 1x3x8x8 by 4x3x3x3 + bias) */
int check_result(const float *image, const float *weight, const float *bias,
                 const float *result) {
  int o, i, y, x, ky, kx, bad = 0;
  for (o = 0; o < 4; o++)
    for (y = 0; y < 8; y++)
      for (x = 0; x < 8; x++) {
        float sum = bias[o], got = result[(o * 8 + y) * 8 + x];
        for (i = 0; i < 3; i++)
          for (ky = 0; ky < 3; ky++)
            for (kx = 0; kx < 3; kx++) {
              int iy = y + ky - 1, ix = x + kx - 1;
              if (iy >= 0 && iy < 8 && ix >= 0 && ix < 8)
                sum += image[(i * 8 + iy) * 8 + ix] * weight[((o * 3 + i) * 3 + ky) * 3 + kx];
            }
        if (sum < 0.0f) sum = 0.0f;
        if (magnitude(got - sum) > 1e-4f * (1.0f + magnitude(sum)) && bad++ < 3)
          printf("consumer: output [%d][%d][%d] is %g, expected %g\n", o, y, x, got, sum);
      }
  return bad != 0;
}
