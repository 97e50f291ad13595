/* embedded_model.h - the layer examples/embedded.c runs on the device and
   examples/embedded_plan.c compiles for it on the build host: Conv2d(3, 8, 3, padding 1) with
   its bias, then ReLU6, on a 3 x 16 x 16 image. Both make its weights, bias and input from
   one seed, so the device checks the plan's output against a direct loop of its own without
   carrying a second copy of the weights. Include after fuse.h. */
#ifndef EMBEDDED_MODEL_H
#define EMBEDDED_MODEL_H

#include <stdint.h>

#define EMBEDDED_C 3  /* input channels */
#define EMBEDDED_K 8  /* output channels */
#define EMBEDDED_S 16 /* height = width */

/* xorshift32 -> [-1, 1) */
static float embedded_uniform(uint32_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return (float)(*state >> 8) / 8388608.0f - 1.0f;
}

/* x [C, S, S], w [K, C, 3, 3], b [K] */
static void embedded_model_data(float *x, float *w, float *b) {
  uint32_t state = 2024u;
  int i;
  for (i = 0; i < EMBEDDED_C * EMBEDDED_S * EMBEDDED_S; i++) x[i] = embedded_uniform(&state);
  for (i = 0; i < EMBEDDED_K * EMBEDDED_C * 9; i++) /* some outputs pass 6 */
    w[i] = embedded_uniform(&state) * 2.0f;
  for (i = 0; i < EMBEDDED_K; i++) b[i] = embedded_uniform(&state) * 0.1f;
}

#endif
