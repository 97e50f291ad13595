/* embedded_int8_model.h - the int8 layers examples/embedded_int8.c runs on the device and
   examples/embedded_plan.c (--int8) compiles for it on the build host: a residual block as a
   QDQ export (ONNX Runtime's quantizer) writes it, on a uint8 image x [C, S, S] (scale 2^-7,
   zero point 128), every value between two ops quantized and dequantized again:

     q1 = quantize(clip(conv1(x) + b1, 0, 6))    uint8 [K, S, S], scale 2^-5, zero point 0
     q2 = quantize(conv2(q1) + b2)               uint8 [K, S, S], scale 2^-4, zero point 128
     y  = quantize(relu(q1 + q2))                int8  [K, S, S], scale 2^-4, zero point -60

   conv1 [K, C, 3, 3] and conv2 [K, K, 3, 3] have padding 1, int8 weights with a scale per
   output channel and int32 biases in units of x_scale * w_scale[k]. Each weight scale is an
   odd number below 8 times a power of two, so every product the integer steps form in
   floating point (the requantization sum * x_scale * w_scale[k] / y_scale, the add's sum of
   dequantized values) is exact: the device's direct loop needs no float (a multiply and a
   shift, rounding half to even), and ties (x.5), where rounding half to even differs from
   other roundings, are frequent. Both sides make the integers from one seed. */
#ifndef EMBEDDED_INT8_MODEL_H
#define EMBEDDED_INT8_MODEL_H

#include <stdint.h>

#define EMBEDDED_INT8_C 3  /* input channels */
#define EMBEDDED_INT8_K 8  /* output channels of both convs */
#define EMBEDDED_INT8_S 16 /* height = width */

#define EMBEDDED_INT8_X_ZERO 128
#define EMBEDDED_INT8_Q2_ZERO 128
#define EMBEDDED_INT8_Y_ZERO (-60)
/* the scales' powers of two: x 2^-7, q1 2^-5, q2 and y 2^-4 */
#define EMBEDDED_INT8_X_LOG2 (-7)
#define EMBEDDED_INT8_Q1_LOG2 (-5)
#define EMBEDDED_INT8_Q2_LOG2 (-4)
#define EMBEDDED_INT8_Y_LOG2 (-4)

/* conv `layer` (0: conv1, 1: conv2), output channel k: w_scale = odd[k] * 2^-shift[k] */
static const int32_t embedded_int8_wscale_odd[2][EMBEDDED_INT8_K] = {{1, 3, 5, 7, 3, 1, 7, 5},
                                                                     {5, 1, 3, 7, 1, 5, 3, 7}};
static const int embedded_int8_wscale_shift[2][EMBEDDED_INT8_K] = {{7, 8, 9, 9, 8, 6, 9, 8},
                                                                   {10, 8, 9, 11, 9, 10, 10, 11}};

/* xorshift32 */
static uint32_t embedded_int8_next(uint32_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

/* x [C, S, S], w1 [K, C, 3, 3], b1 [K], w2 [K, K, 3, 3], b2 [K] */
static void embedded_int8_model_data(uint8_t *x, int8_t *w1, int32_t *b1, int8_t *w2, int32_t *b2) {
  uint32_t state = 2026u;
  int i;
  for (i = 0; i < EMBEDDED_INT8_C * EMBEDDED_INT8_S * EMBEDDED_INT8_S; i++)
    x[i] = (uint8_t)(embedded_int8_next(&state) >> 24);
  for (i = 0; i < EMBEDDED_INT8_K * EMBEDDED_INT8_C * 9; i++)
    w1[i] = (int8_t)((int32_t)(embedded_int8_next(&state) >> 24) - 128);
  for (i = 0; i < EMBEDDED_INT8_K * EMBEDDED_INT8_K * 9; i++)
    w2[i] = (int8_t)((int32_t)(embedded_int8_next(&state) >> 24) - 128);
  for (i = 0; i < EMBEDDED_INT8_K; i++) b1[i] = (int32_t)(embedded_int8_next(&state) % 8001u) - 4000;
  for (i = 0; i < EMBEDDED_INT8_K; i++) b2[i] = (int32_t)(embedded_int8_next(&state) % 40001u) - 20000;
}

#endif
