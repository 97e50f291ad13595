/* test_badinput_onnx.c - bad input to the ONNX reader, as a table (rows as in
   test_badinput.c: a bad model or tensor, the result it must load with and a word its message
   must contain; nothing leaks), then the committed ONNX network tests/data/onnx/tinynet.onnx
   cut at every length and with single bits flipped.

   The cuts: at every length each must fail with a message, unless the cut falls between two
   top-level fields (a complete protobuf; only dropping the trailing opset_import does that).
   The flips: every bit of the model's header, of every 8th byte of the 32 nodes, of the
   first 32 bytes of each initializer and of the graph's inputs, outputs and opset at the end,
   and of one weight byte in 512 (13,712 flips, see flip_byte_wanted). Each flip must
   load or fail with a message; every 4th model that loads is also compiled, every 32nd run.
   Cuts within 4 KB of either end and every flip load an exact-size copy, so the sanitizers
   see any read past the end (built with them, half of the bits are flipped).

   Usage: build/test_badinput_onnx [-v]   (run from the repository root; -v prints every row) */
#define FUSE_IMPLEMENTATION
#include "fuse.h"
#include "runner.h"

#include "counting_alloc.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "badinput_helpers.h"

/* ---- ONNX: a tiny protobuf writer makes the models */

#ifndef FUSE_NO_ONNX
typedef struct pb {
  unsigned char d[2048];
  size_t n;
} pb;
static void pb_raw(pb *b, const void *p, size_t n) {
  if (b->n + n <= sizeof b->d) memcpy(b->d + b->n, p, n);
  b->n += n;
}
static void pb_varint(pb *b, uint64_t v) {
  unsigned char c;
  do {
    c = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) c |= 0x80;
    pb_raw(b, &c, 1);
  } while (v);
}
static void pb_int(pb *b, int field, int64_t v) {
  pb_varint(b, (uint64_t)field << 3);
  pb_varint(b, (uint64_t)v);
}
static void pb_float(pb *b, int field, float v) {
  unsigned char le[4];
  uint32_t u;
  memcpy(&u, &v, 4);
  le[0] = (unsigned char)u, le[1] = (unsigned char)(u >> 8), le[2] = (unsigned char)(u >> 16);
  le[3] = (unsigned char)(u >> 24);
  pb_varint(b, (uint64_t)field << 3 | 5);
  pb_raw(b, le, 4);
}
static void pb_bytes(pb *b, int field, const void *p, size_t n) {
  pb_varint(b, (uint64_t)field << 3 | 2);
  pb_varint(b, n);
  pb_raw(b, p, n);
}
static void pb_str(pb *b, int field, const char *s) { pb_bytes(b, field, s, strlen(s)); }
static void pb_sub(pb *b, int field, const pb *sub) { pb_bytes(b, field, sub->d, sub->n); }

/* ValueInfoProto: a tensor of TensorProto data type `elem` with dims (rank < 0: no shape at
   all) */
static void pb_value_info_typed(pb *graph, int field, const char *name, int elem, int rank,
                                const int64_t *dims) {
  pb vi, type, tt, shape, dim;
  int i;
  memset(&vi, 0, sizeof vi);
  memset(&type, 0, sizeof type);
  memset(&tt, 0, sizeof tt);
  memset(&shape, 0, sizeof shape);
  pb_int(&tt, 1, elem);
  for (i = 0; i < rank; i++) {
    dim.n = 0;
    pb_int(&dim, 1, dims[i]);
    pb_sub(&shape, 1, &dim);
  }
  if (rank >= 0) pb_sub(&tt, 2, &shape);
  pb_sub(&type, 1, &tt);
  pb_str(&vi, 1, name);
  pb_sub(&vi, 2, &type);
  pb_sub(graph, field, &vi);
}
/* ValueInfoProto: a float tensor with dims (rank < 0: no shape at all) */
static void pb_value_info(pb *graph, int field, const char *name, int rank, const int64_t *dims) {
  pb_value_info_typed(graph, field, name, 1, rank, dims);
}
/* NodeProto with up to 3 inputs ("" = absent) and one output */
static void pb_node(pb *graph, const char *op, const char *in0, const char *in1, const char *in2,
                    const char *out, const pb *attr) {
  pb node;
  memset(&node, 0, sizeof node);
  if (in0) pb_str(&node, 1, in0);
  if (in1) pb_str(&node, 1, in1);
  if (in2) pb_str(&node, 1, in2);
  pb_str(&node, 2, out);
  pb_str(&node, 4, op);
  if (attr) pb_sub(&node, 5, attr);
  pb_sub(graph, 1, &node);
}
/* TensorProto: float dims, float_data values */
static void pb_tensor(pb *t, const char *name, int rank, const int64_t *dims, int count,
                      float value) {
  int i;
  memset(t, 0, sizeof *t);
  for (i = 0; i < rank; i++) pb_int(t, 1, dims[i]);
  pb_int(t, 2, 1);
  for (i = 0; i < count; i++) pb_float(t, 4, value);
  pb_str(t, 8, name);
}
/* NodeProto with inputs in[0..n) ("" = left out) and one output */
static void pb_node_n(pb *graph, const char *op, int n, const char *const *in, const char *out,
                      const pb *attr) {
  pb node;
  int i;
  memset(&node, 0, sizeof node);
  for (i = 0; i < n; i++) pb_str(&node, 1, in[i]);
  pb_str(&node, 2, out);
  pb_str(&node, 4, op);
  if (attr) pb_sub(&node, 5, attr);
  pb_sub(graph, 1, &node);
}
/* TensorProto of data type dt (2 uint8, 3 int8, 6 int32, 7 int64, 17 float8e4m3fn, ...) with
   `bytes` of raw_data */
static void pb_tensor_raw(pb *t, const char *name, int dt, int rank, const int64_t *dims,
                          const void *raw, size_t bytes) {
  int i;
  memset(t, 0, sizeof *t);
  for (i = 0; i < rank; i++) pb_int(t, 1, dims[i]);
  pb_int(t, 2, dt);
  pb_str(t, 8, name);
  pb_bytes(t, 9, raw, bytes);
}
static void onnx_row_bytes(outcome *o, const void *data, size_t n) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_onnx_load_memory(data, n, &al, &g);
  if (!g) {
    o->r = r;
    set_msg(o, "(no graph)");
    return;
  }
  status(o, g, r);
}
/* ModelProto around a graph: opset 13 */
static void onnx_row(outcome *o, const pb *graph) {
  static pb model, opset;
  memset(&model, 0, sizeof model);
  memset(&opset, 0, sizeof opset);
  pb_int(&model, 1, 7); /* ir_version */
  pb_str(&opset, 1, "");
  pb_int(&opset, 2, 13);
  pb_sub(&model, 8, &opset);
  pb_sub(&model, 7, graph);
  onnx_row_bytes(o, model.d, model.n);
}
static const int64_t d2[1] = {2};
static void r_onnx_cycle(outcome *o) { /* y = relu(y) */
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "y", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_two_node_cycle(outcome *o) { /* a = relu(b), b = relu(a) */
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "b", NULL, NULL, "a", NULL);
  pb_node(&g, "Relu", "a", NULL, NULL, "b", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "a", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_unreachable_output(outcome *o) { /* the output is made by no node */
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "nowhere", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_duplicate_output(outcome *o) { /* two nodes make "y" */
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_node(&g, "Sigmoid", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_duplicate_input(outcome *o) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_unknown_op(outcome *o) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Frobnicate", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_missing_input(outcome *o) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Add", "x", "ghost", NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void onnx_input_dims_row(outcome *o, int rank, const int64_t *dims) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", rank, dims);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_input_dim_zero(outcome *o) { onnx_input_dims_row(o, 2, D(0, 3)); }
static void r_onnx_input_dim_negative(outcome *o) { onnx_input_dims_row(o, 2, D(-5, 3)); }
static void r_onnx_input_dims_overflow(outcome *o) {
  onnx_input_dims_row(o, 3, D(0x7fffffff, 0x7fffffff, 0x7fffffff));
}
static void r_onnx_input_rank_9(outcome *o) { onnx_input_dims_row(o, 9, D(1, 1, 1, 1, 1, 1, 1, 1, 1)); }
static void r_onnx_input_no_shape(outcome *o) { onnx_input_dims_row(o, -1, NULL); }
static void r_onnx_initializer_overflow(outcome *o) { /* dims multiply past 2^63 */
  static pb g, t;
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "w", 3, D(0x7fffffff, 0x7fffffff, 0x7fffffff), 1, 1.0f);
  pb_sub(&g, 5, &t);
  pb_node(&g, "Add", "x", "w", NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_initializer_short(outcome *o) { /* [4] with 3 values */
  static pb g, t;
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "w", 1, D(4), 3, 1.0f);
  pb_sub(&g, 5, &t);
  pb_node(&g, "Add", "x", "w", NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, D(4));
  pb_value_info(&g, 12, "y", 1, D(4));
  onnx_row(o, &g);
}
static void onnx_clip_row(outcome *o, float lo, float hi) { /* Clip-11: min and max as inputs */
  static pb g, t;
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "lo", 0, NULL, 1, lo);
  pb_sub(&g, 5, &t);
  pb_tensor(&t, "hi", 0, NULL, 1, hi);
  pb_sub(&g, 5, &t);
  pb_node(&g, "Clip", "x", "lo", "hi", "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_clip_reversed(outcome *o) { /* not an error: ONNX gives max everywhere */
  static pb g, t;
  static const float x[2] = {-1.0f, 7.0f};
  float y[2] = {5, 5};
  const float *in[1];
  float *out[1];
  fuse_graph *graph = NULL;
  fuse_plan *p = NULL;
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "lo", 0, NULL, 1, 6.0f);
  pb_sub(&g, 5, &t);
  pb_tensor(&t, "hi", 0, NULL, 1, 0.0f);
  pb_sub(&g, 5, &t);
  pb_node(&g, "Clip", "x", "lo", "hi", "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g); /* loads (and frees) it once, for the result */
  if (o->r != FUSE_OK) return;
  {
    static pb model, opset;
    memset(&model, 0, sizeof model);
    memset(&opset, 0, sizeof opset);
    pb_int(&model, 1, 7);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 13);
    pb_sub(&model, 8, &opset);
    pb_sub(&model, 7, &g);
    fuse_onnx_load_memory(model.d, model.n, &al, &graph);
  }
  in[0] = x;
  out[0] = y;
  if (fuse_compile(graph, NULL, &p) != FUSE_OK || fuse_run(p, in, out, NULL) != FUSE_OK ||
      y[0] != 0.0f || y[1] != 0.0f)
    o->r = FUSE_ERROR_BACKEND;
  fuse_plan_destroy(p);
  fuse_graph_destroy(graph);
}
static void r_onnx_clip_nan(outcome *o) { onnx_clip_row(o, (float)NAN, 1.0f); }
static void r_onnx_conv_negative_pads(outcome *o) {
  static pb g, t, attr;
  int i;
  memset(&g, 0, sizeof g);
  memset(&attr, 0, sizeof attr);
  pb_tensor(&t, "w", 4, D(1, 1, 1, 1), 1, 1.0f);
  pb_sub(&g, 5, &t);
  pb_str(&attr, 1, "pads");
  for (i = 0; i < 4; i++) pb_int(&attr, 8, -1);
  pb_int(&attr, 20, 7); /* INTS */
  pb_node(&g, "Conv", "x", "w", NULL, "y", &attr);
  pb_value_info(&g, 11, "x", 4, D(1, 1, 4, 4));
  pb_value_info(&g, 12, "y", 4, D(1, 1, 4, 4));
  onnx_row(o, &g);
}
/* ---- quantized models */
static const unsigned char u8_128[1] = {128}, u8_zeros[4] = {0, 0, 0, 0};
static const int8_t i8_one[1] = {1};
/* DequantizeLinear of x (uint8 [1, 3, 2, 2] unless x_elem says else) with scale `scale_n`
   values of 0.5 and zero point zp (NULL: none; dt, bytes) */
static void onnx_dequantize_row(outcome *o, int x_elem, int scale_n, int zp_dt, const void *zp,
                                size_t zp_bytes) {
  static pb g, t;
  static const char *const in[3] = {"x", "s", "z"};
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "s", scale_n > 1 ? 1 : 0, D(scale_n), scale_n, 0.5f);
  pb_sub(&g, 5, &t);
  if (zp) {
    pb_tensor_raw(&t, "z", zp_dt, scale_n > 1 ? 1 : 0, D(scale_n), zp, zp_bytes);
    pb_sub(&g, 5, &t);
  }
  pb_node_n(&g, "DequantizeLinear", zp ? 3 : 2, in, "y", NULL);
  pb_value_info_typed(&g, 11, "x", x_elem, 4, D(1, 3, 2, 2));
  pb_value_info(&g, 12, "y", 4, D(1, 3, 2, 2));
  onnx_row(o, &g);
}
static void r_onnx_dequantize_float(outcome *o) { onnx_dequantize_row(o, 1, 1, 2, u8_128, 1); }
static void r_onnx_dequantize_zero_point_type(outcome *o) {
  onnx_dequantize_row(o, 2, 1, 3, i8_one, 1); /* uint8 data, int8 zero point */
}
static void r_onnx_dequantize_scale_count(outcome *o) {
  onnx_dequantize_row(o, 2, 4, 2, u8_zeros, 4); /* 4 scales for the 3 channels of axis 1 */
}
static void r_onnx_dequantize_int64(outcome *o) { onnx_dequantize_row(o, 7, 1, 0, NULL, 0); }
static void r_onnx_quantize_float8(outcome *o) { /* a float8e4m3fn zero point */
  static pb g, t;
  static const char *const in[3] = {"x", "s", "z"};
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "s", 0, NULL, 1, 0.5f);
  pb_sub(&g, 5, &t);
  pb_tensor_raw(&t, "z", 17, 0, NULL, u8_zeros, 1);
  pb_sub(&g, 5, &t);
  pb_node_n(&g, "QuantizeLinear", 3, in, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info_typed(&g, 12, "y", 17, 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_quantize_scale_zero(outcome *o) { /* a constant scale of 0 */
  static pb g, t;
  static const char *const in[2] = {"x", "s"};
  memset(&g, 0, sizeof g);
  pb_tensor(&t, "s", 0, NULL, 1, 0.0f);
  pb_sub(&g, 5, &t);
  pb_node_n(&g, "QuantizeLinear", 2, in, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info_typed(&g, 12, "y", 2, 1, d2);
  onnx_row(o, &g);
}
/* QLinearConv of x uint8 [1, 1, 3, 3] with a 1 x 1 weight: `bad` picks what is wrong (1: the
   bias needs x_scale, a graph input here; 2: an int8 bias; 3: x_scale of 3 values; 4: a
   run-time w_zero_point of one value for two w_scales) */
static void onnx_qlinear_conv_row(outcome *o, int bad) {
  static pb g, t;
  static const char *const in[9] = {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "B"};
  static const int32_t bias[2] = {5, -5};
  static const int8_t w[2] = {1, 2};
  int m = bad == 4 ? 2 : 1;
  memset(&g, 0, sizeof g);
  if (bad != 1) {
    pb_tensor(&t, "xs", bad == 3 ? 1 : 0, D(3), bad == 3 ? 3 : 1, 0.5f);
    pb_sub(&g, 5, &t);
  }
  pb_tensor_raw(&t, "xz", 2, 0, NULL, u8_128, 1);
  pb_sub(&g, 5, &t);
  pb_tensor_raw(&t, "w", 3, 4, D(m, 1, 1, 1), w, (size_t)m);
  pb_sub(&g, 5, &t);
  pb_tensor(&t, "ws", 1, D(m), m, 0.25f);
  pb_sub(&g, 5, &t);
  if (bad != 4) {
    pb_tensor_raw(&t, "wz", 3, 1, D(1), u8_zeros, 1);
    pb_sub(&g, 5, &t);
  }
  pb_tensor(&t, "ys", 0, NULL, 1, 0.125f);
  pb_sub(&g, 5, &t);
  pb_tensor_raw(&t, "yz", 2, 0, NULL, u8_128, 1);
  pb_sub(&g, 5, &t);
  if (bad == 2) pb_tensor_raw(&t, "B", 3, 1, D(1), i8_one, 1);
  else pb_tensor_raw(&t, "B", 6, 1, D(m), bias, (size_t)m * 4);
  pb_sub(&g, 5, &t);
  pb_node_n(&g, "QLinearConv", 9, in, "y", NULL);
  pb_value_info_typed(&g, 11, "x", 2, 4, D(1, 1, 3, 3));
  if (bad == 1) pb_value_info(&g, 11, "xs", 0, NULL);
  if (bad == 4) pb_value_info_typed(&g, 11, "wz", 3, 0, NULL);
  pb_value_info_typed(&g, 12, "y", 2, 4, D(1, m, 3, 3));
  onnx_row(o, &g);
}
static void r_onnx_qlinear_conv_scale_run_time(outcome *o) { onnx_qlinear_conv_row(o, 1); }
static void r_onnx_qlinear_conv_bias_int8(outcome *o) { onnx_qlinear_conv_row(o, 2); }
static void r_onnx_qlinear_conv_x_scale_3(outcome *o) { onnx_qlinear_conv_row(o, 3); }
static void r_onnx_qlinear_conv_zero_point_run_time(outcome *o) { onnx_qlinear_conv_row(o, 4); }
static void r_onnx_qlinear_conv_fine(outcome *o) { onnx_qlinear_conv_row(o, 0); }
static void r_onnx_conv_integer_one_input(outcome *o) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "ConvInteger", "x", NULL, NULL, "y", NULL);
  pb_value_info_typed(&g, 11, "x", 2, 4, D(1, 1, 3, 3));
  pb_value_info_typed(&g, 12, "y", 6, 4, D(1, 1, 3, 3));
  onnx_row(o, &g);
}
static void r_onnx_add_uint8(outcome *o) { /* a float32-only op on a uint8 input */
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Add", "x", "x", NULL, "y", NULL);
  pb_value_info_typed(&g, 11, "x", 2, 1, d2);
  pb_value_info_typed(&g, 12, "y", 2, 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_input_int64(outcome *o) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_value_info_typed(&g, 11, "x", 7, 1, d2);
  pb_value_info(&g, 12, "y", 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_cast_fraction_to_uint8(outcome *o) { /* Cast truncates; quantize would round */
  static pb g, attr;
  memset(&g, 0, sizeof g);
  memset(&attr, 0, sizeof attr);
  pb_str(&attr, 1, "to");
  pb_int(&attr, 3, 2);
  pb_int(&attr, 20, 2); /* INT */
  pb_node(&g, "Cast", "x", NULL, NULL, "y", &attr);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info_typed(&g, 12, "y", 2, 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_output_declared_uint8(outcome *o) {
  static pb g;
  memset(&g, 0, sizeof g);
  pb_node(&g, "Relu", "x", NULL, NULL, "y", NULL);
  pb_value_info(&g, 11, "x", 1, d2);
  pb_value_info_typed(&g, 12, "y", 2, 1, d2);
  onnx_row(o, &g);
}
static void r_onnx_no_graph(outcome *o) {
  static const unsigned char model[2] = {0x08, 0x07}; /* ir_version only */
  onnx_row_bytes(o, model, sizeof model);
}
static void r_onnx_empty(outcome *o) {
  static const unsigned char nothing[1] = {0};
  onnx_row_bytes(o, nothing, 0);
}
static void r_onnx_garbage(outcome *o) {
  static const char text[] = "this is not a protobuf file at all";
  onnx_row_bytes(o, text, sizeof text - 1);
}
static void r_onnx_huge_length(outcome *o) { /* graph field whose length runs past the end */
  static const unsigned char model[12] = {0x3a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0};
  onnx_row_bytes(o, model, sizeof model);
}
static void r_onnx_null_data(outcome *o) { onnx_row_bytes(o, NULL, 10); }
static void r_onnx_null_out(outcome *o) {
  sentinel(o, fuse_onnx_load_memory("x", 1, &al, NULL) == INV);
}
#ifndef FUSE_NO_STDIO
static void r_onnx_file_null_path(outcome *o) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_onnx_load_file(NULL, &al, &g);
  if (!g) {
    o->r = r;
    return;
  }
  status(o, g, r);
}
static void r_onnx_file_missing(outcome *o) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_onnx_load_file("tests/data/onnx/no-such-file.onnx", &al, &g);
  if (!g) {
    o->r = r;
    return;
  }
  status(o, g, r);
}
static void r_onnx_file_directory(outcome *o) {
  fuse_graph *g = NULL;
  fuse_result r = fuse_onnx_load_file("tests/data/onnx", &al, &g);
  if (!g) {
    o->r = r;
    return;
  }
  status(o, g, r);
}
static void r_onnx_file_half_allocator(outcome *o) {
  fuse_allocator half = al;
  fuse_graph *g = NULL;
  half.free = NULL;
  sentinel(o, fuse_onnx_load_file("tests/data/onnx/tinynet.onnx", &half, &g) == INV && g == NULL);
  fuse_graph_destroy(g);
}
#endif
static void tensor_row(outcome *o, const void *data, size_t n, int null_out) {
  fuse_onnx_tensor t;
  o->r = fuse_onnx_load_tensor(data, n, &al, null_out ? NULL : &t);
  if (null_out) {
    o->no_channel = 1;
    return;
  }
  set_msg(o, t.error);
  if (o->r == FUSE_OK) fuse_onnx_tensor_free(&t, &al);
  else if (t.data) o->r = FUSE_OK; /* a failed load must leave no data behind */
}
static void r_tensor_null(outcome *o) { tensor_row(o, NULL, 8, 0); }
static void r_tensor_null_out(outcome *o) { tensor_row(o, "x", 1, 1); }
static void r_tensor_garbage(outcome *o) { tensor_row(o, "\xff\xff\xff", 3, 0); }
static void r_tensor_dims_overflow(outcome *o) {
  pb t;
  pb_tensor(&t, "t", 3, D(0x7fffffff, 0x7fffffff, 0x7fffffff), 2, 1.0f);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_dim_zero(outcome *o) {
  pb t;
  pb_tensor(&t, "t", 2, D(3, 0), 0, 1.0f);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_short(outcome *o) {
  pb t;
  pb_tensor(&t, "t", 1, D(5), 4, 1.0f);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_rank_9(outcome *o) {
  pb t;
  pb_tensor(&t, "t", 9, D(1, 1, 1, 1, 1, 1, 1, 1, 1), 1, 1.0f);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_int64(outcome *o) {
  pb t;
  memset(&t, 0, sizeof t);
  pb_int(&t, 1, 2);
  pb_int(&t, 2, 7); /* INT64 */
  pb_int(&t, 7, 1);
  pb_int(&t, 7, 2);
  tensor_row(o, t.d, t.n, 0);
}
static void r_tensor_int8(outcome *o) { /* read: the values as floats, the type int8 */
  pb t;
  fuse_onnx_tensor got;
  static const int8_t v[3] = {-128, 0, 127};
  pb_tensor_raw(&t, "q", 3, 1, D(3), v, 3);
  o->r = fuse_onnx_load_tensor(t.d, t.n, &al, &got);
  set_msg(o, got.error);
  if (o->r != FUSE_OK) return;
  if (got.type != FUSE_INT8 || got.rank != 1 || got.shape[0] != 3 || got.data[0] != -128.0f ||
      got.data[1] != 0.0f || got.data[2] != 127.0f)
    o->r = FUSE_ERROR_BACKEND;
  fuse_onnx_tensor_free(&got, &al);
}
static void r_tensor_half_allocator(outcome *o) {
  fuse_allocator half = al;
  fuse_onnx_tensor t;
  pb tp;
  half.free = NULL;
  pb_tensor(&tp, "t", 1, D(2), 2, 1.0f);
  o->r = fuse_onnx_load_tensor(tp.d, tp.n, &half, &t);
  set_msg(o, t.error);
  if (o->r == FUSE_OK) fuse_onnx_tensor_free(&t, &al); /* the counting allocator's own free */
  fuse_onnx_tensor_free(NULL, &al);                  /* a no-op */
}
#endif

/* ------------------------------------------------------------------ the table -- */

#ifndef FUSE_NO_ONNX
static const row rows[] = {
    {"onnx: node reads its own output (cycle)", r_onnx_cycle,                   PRS, INV, "y"},
    {"onnx: two nodes in a cycle",              r_onnx_two_node_cycle,          PRS, INV, "b"},
    {"onnx: output made by no node",            r_onnx_unreachable_output,      PRS, INV, "output 'nowhere'"},
    {"onnx: two nodes make one name",           r_onnx_duplicate_output,        PRS, INV, "already made"},
    {"onnx: input listed twice",                r_onnx_duplicate_input,         PRS, INV, "'x' is listed twice"},
    {"onnx: unknown op",                        r_onnx_unknown_op,              UNS, 0, "Frobnicate"},
    {"onnx: node input made by nothing",        r_onnx_missing_input,           PRS, INV, "ghost"},
    {"onnx: input dim 0",                       r_onnx_input_dim_zero,          UNS, INV, "x"},
    {"onnx: input dim -5",                      r_onnx_input_dim_negative,      PRS, INV, "negative"},
    {"onnx: input dims past 2^63",              r_onnx_input_dims_overflow,     PRS, INV, "'x'"},
    {"onnx: input rank 9",                      r_onnx_input_rank_9,            UNS, INV, "x"},
    {"onnx: input without a shape",             r_onnx_input_no_shape,          UNS, 0, "x"},
    {"onnx: initializer dims past 2^63",        r_onnx_initializer_overflow,    PRS, 0, "w"},
    {"onnx: initializer short of values",       r_onnx_initializer_short,       PRS, 0, "'w'"},
    {"onnx: Clip min > max is max (not an error)", r_onnx_clip_reversed,        FUSE_OK, 0, NULL},
    {"onnx: Clip min NaN",                      r_onnx_clip_nan,                INV, 0, "Clip"},
    {"onnx: Conv negative pads",                r_onnx_conv_negative_pads,      PRS, INV, "'pads'"},
    {"onnx: DequantizeLinear of float32",       r_onnx_dequantize_float,        INV, 0, "'x' is float32"},
    {"onnx: DequantizeLinear zero point int8 for uint8", r_onnx_dequantize_zero_point_type, INV, 0, "zero point 'z' is i8"},
    {"onnx: DequantizeLinear 4 scales, 3 channels", r_onnx_dequantize_scale_count, SHP, 0, "[1,3,2,2] has 3"},
    {"onnx: DequantizeLinear of int64",         r_onnx_dequantize_int64,        UNS, 0, "int64"},
    {"onnx: QuantizeLinear float8 zero point",  r_onnx_quantize_float8,         UNS, 0, "float8e4m3fn"},
    {"onnx: QuantizeLinear scale 0",            r_onnx_quantize_scale_zero,     INV, 0, "positive"},
    {"onnx: QLinearConv bias, x_scale run-time", r_onnx_qlinear_conv_scale_run_time, UNS, 0, "known at load"},
    {"onnx: QLinearConv int8 bias",             r_onnx_qlinear_conv_bias_int8,  INV, 0, "'B' is int8 [1]"},
    {"onnx: QLinearConv x_scale of 3 values",   r_onnx_qlinear_conv_x_scale_3,  SHP, 0, "x_scale 'xs' is [3]"},
    {"onnx: QLinearConv run-time w_zero_point, 2 w_scales", r_onnx_qlinear_conv_zero_point_run_time, UNS, 0, "'wz'"},
    {"onnx: QLinearConv with bias (not an error)", r_onnx_qlinear_conv_fine,    FUSE_OK, 0, NULL},
    {"onnx: ConvInteger without w",             r_onnx_conv_integer_one_input,  PRS, 0, "missing"},
    {"onnx: Add of uint8",                      r_onnx_add_uint8,               UNS, 0, "('x') is uint8 [2]"},
    {"onnx: graph input int64",                 r_onnx_input_int64,             UNS, 0, "'x' is a tensor of int64"},
    {"onnx: Cast of fractions to uint8",        r_onnx_cast_fraction_to_uint8,  UNS, 0, "whole numbers"},
    {"onnx: output declared uint8, is float32", r_onnx_output_declared_uint8,   PRS, 0, "declared uint8"},
    {"onnx: model without a graph",             r_onnx_no_graph,                PRS, 0, "graph"},
    {"onnx: zero bytes",                        r_onnx_empty,                   PRS, 0, "onnx"},
    {"onnx: not protobuf",                      r_onnx_garbage,                 PRS, 0, "onnx"},
    {"onnx: length past the end",               r_onnx_huge_length,             PRS, 0, "onnx"},
    {"onnx: data NULL",                         r_onnx_null_data,               INV, 0, "NULL"},
    {"onnx: out NULL",                          r_onnx_null_out,                INV, 0, NULL},
#ifndef FUSE_NO_STDIO
    {"onnx_load_file: path NULL",               r_onnx_file_null_path,          EIO, 0, "NULL"},
    {"onnx_load_file: no such file",            r_onnx_file_missing,            EIO, 0, "no-such-file"},
    {"onnx_load_file: a directory",             r_onnx_file_directory,          EIO, PRS, "onnx"},
    {"onnx_load_file: alloc without free",      r_onnx_file_half_allocator,     INV, 0, NULL},
#endif
    {"onnx_load_tensor: data NULL",             r_tensor_null,                  INV, 0, "NULL"},
    {"onnx_load_tensor: out NULL",              r_tensor_null_out,              INV, 0, NULL},
    {"onnx_load_tensor: garbage",               r_tensor_garbage,               PRS, 0, "malformed"},
    {"onnx_load_tensor: dims past 2^63",        r_tensor_dims_overflow,         PRS, 0, "dimension"},
    {"onnx_load_tensor: dim 0",                 r_tensor_dim_zero,              UNS, 0, "dimension"},
    {"onnx_load_tensor: short of values",       r_tensor_short,                 PRS, 0, "dimensions"},
    {"onnx_load_tensor: rank 9",                r_tensor_rank_9,                PRS, UNS, "8 dimensions"},
    {"onnx_load_tensor: int64 data",            r_tensor_int64,                 UNS, 0, "data type 7"},
    {"onnx_load_tensor: int8 data (read)",      r_tensor_int8,                  FUSE_OK, 0, NULL},
    {"onnx_load_tensor: alloc without free",    r_tensor_half_allocator,        INV, 0, "alloc"},
};

#define NUM_ROWS ((int)(sizeof rows / sizeof rows[0]))

TEST(table) {
  CHECK_EQ_INT(run_table(rows, NUM_ROWS), 0);
}

/* ------------------------------------------------- truncated and flipped ONNX -- */

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *d;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  d = (unsigned char *)malloc((size_t)n + 1);
  if (d && fread(d, 1, (size_t)n, f) != (size_t)n) {
    free(d);
    d = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return d;
}

/* Loads a copy of exactly n bytes; returns the result, -100 for a broken contract (no
   graph, or an error without a message, or a leak). With `compile`, a model that loads is
   compiled (and, when `run` is set, run on zeros). */
static int load_copy(const unsigned char *src, size_t n, int compile, int run) {
  unsigned char *copy = (unsigned char *)malloc(n ? n : 1);
  fuse_graph *g = NULL;
  fuse_result r;
  int bad = 0;
  if (!copy) return -100;
  if (n) memcpy(copy, src, n);
  al = ca_make(&ca);
  r = fuse_onnx_load_memory(copy, n, &al, &g);
  if (!g || (r != FUSE_OK && !fuse_graph_error(g)[0]) || fuse_graph_status(g) != r) bad = 1;
  if (r == FUSE_OK && compile) {
    fuse_plan *p = NULL;
    fuse_result rc = fuse_compile(g, NULL, &p);
    if (rc == FUSE_OK && run) {
      static float zeros[1 << 16], out[1 << 16];
      int ok = fuse_graph_input_count(g) == 1 && fuse_graph_output_count(g) == 1;
      int k;
      for (k = 0; ok && k < 2; k++) {
        fuse_value v = k ? fuse_graph_output(g, 0) : fuse_graph_input(g, 0);
        int64_t e = 1;
        int d;
        for (d = 0; d < fuse_value_rank(g, v); d++) e *= fuse_value_shape(g, v)[d];
        ok = e <= (1 << 16);
      }
      if (ok) {
        const float *in[1];
        float *outs[1];
        in[0] = zeros;
        outs[0] = out;
        if (fuse_run(p, in, outs, NULL) != FUSE_OK) bad = 1;
      }
    }
    if (rc == FUSE_OK) fuse_plan_destroy(p);
    else if (rc != OOM && rc != UNS) bad = 1;
  }
  fuse_graph_destroy(g);
  if (ca.allocs != ca.frees || ca.bad_free) bad = 1;
  ca_done(&ca);
  free(copy);
  return bad ? -100 : (int)r;
}

/* Whether `at` is where a top-level field of the ModelProto ends: the file cut there is a
   complete protobuf message (e.g. without its trailing opset_import), which may load. */
static int field_boundary(const unsigned char *d, size_t n, size_t at) {
  size_t p = 0;
  while (p < n) {
    uint64_t tag = 0, len = 0;
    int shift = 0;
    while (p < n && shift < 64) { /* the tag */
      tag |= (uint64_t)(d[p] & 0x7f) << shift;
      shift += 7;
      if (!(d[p++] & 0x80)) break;
    }
    if ((tag & 7) == 2 || (tag & 7) == 0) {
      shift = 0;
      while (p < n && shift < 64) { /* a length or a varint value */
        len |= (uint64_t)(d[p] & 0x7f) << shift;
        shift += 7;
        if (!(d[p++] & 0x80)) break;
      }
      if ((tag & 7) == 2) p += (size_t)len;
    } else {
      return 0; /* tinynet.onnx has no other wire types at the top level */
    }
    if (p == at) return 1;
  }
  return 0;
}

TEST(onnx_truncated_every_length) {
  size_t n = 0, cut;
  unsigned char *data = read_file("tests/data/onnx/tinynet.onnx", &n);
  long bad = 0, loaded = 0;
  clock_t t0 = clock();
  CHECK(data != NULL);
  if (!data) return;
  CHECK_EQ_INT(load_copy(data, n, 1, 1), FUSE_OK); /* the whole file loads, compiles, runs */
  for (cut = 0; cut < n; cut++) {
    /* an exact copy for the first and last 4 KB, where the structure is (the sanitizers see
       any over-read); in between the file itself, cut by the size argument */
    int r;
    if (cut < 4096 || cut + 4096 > n) {
      r = load_copy(data, cut, 0, 0);
    } else {
      fuse_graph *g = NULL;
      al = ca_make(&ca);
      r = fuse_onnx_load_memory(data, cut, &al, &g);
      if (!g || (r != FUSE_OK && !fuse_graph_error(g)[0])) r = -100;
      fuse_graph_destroy(g);
      if (ca.allocs != ca.frees) r = -100;
      ca_done(&ca);
    }
    if (r == FUSE_OK) loaded++;
    if ((r == FUSE_OK && !field_boundary(data, n, cut)) || r == -100) {
      if (bad++ < 5) fprintf(stderr, "  FAIL truncated at %lu of %lu bytes: %s\n", (unsigned long)cut,
                             (unsigned long)n, r == FUSE_OK ? "loaded" : "no graph, no message or a leak");
    }
  }
  printf("  tinynet.onnx truncated at each of %lu lengths: %ld loaded (cut between two top-level "
         "fields), %ld broke the contract (%.1f s)\n",
         (unsigned long)n, loaded, bad, (double)(clock() - t0) / CLOCKS_PER_SEC);
  CHECK_EQ_INT(bad, 0);
  free(data);
}

/* Which bytes of tinynet.onnx get every bit flipped: its structure, found by walking the
   protobuf (see field_boundary): the model's header, every 8th byte of the nodes, the first
   32 bytes of each initializer (name, dims, type, the raw data's length), and the graph's
   inputs, outputs and the opset at the end. The weights' bytes between get a sample. */
typedef struct flip_plan {
  size_t nodes_end, tail_start;
  size_t init_start[64];
  int num_init;
} flip_plan;

static size_t pb_read_varint(const unsigned char *d, size_t n, size_t *p) {
  uint64_t r = 0;
  int shift = 0;
  while (*p < n && shift < 64) {
    unsigned char c = d[(*p)++];
    r |= (uint64_t)(c & 0x7f) << shift;
    shift += 7;
    if (!(c & 0x80)) break;
  }
  return (size_t)r;
}

static void plan_flips(const unsigned char *d, size_t n, flip_plan *fp) {
  size_t p = 0;
  memset(fp, 0, sizeof *fp);
  fp->tail_start = n;
  while (p < n) { /* ModelProto: find the graph (field 7) */
    size_t tag = pb_read_varint(d, n, &p), len;
    if ((tag & 7) != 2) {
      if ((tag & 7) == 0) pb_read_varint(d, n, &p);
      continue;
    }
    len = pb_read_varint(d, n, &p);
    if (tag >> 3 == 7) { /* GraphProto: nodes (1) first, initializers (5), then the rest */
      size_t q = p, end = p + len;
      while (q < end) {
        size_t at = q, gtag = pb_read_varint(d, n, &q), glen = pb_read_varint(d, n, &q);
        if (gtag >> 3 == 1) fp->nodes_end = q + glen;
        if (gtag >> 3 == 5 && fp->num_init < 64) fp->init_start[fp->num_init++] = at;
        if (gtag >> 3 == 11 && fp->tail_start == n) fp->tail_start = at;
        q += glen;
      }
    }
    p += len;
  }
}

static int flip_byte_wanted(const flip_plan *fp, size_t byte, uint32_t *seed) {
  int i;
  if (byte >= fp->tail_start) return 1;
  if (byte < fp->nodes_end) return byte < 32 || byte % 8 == 0;
  for (i = 0; i < fp->num_init; i++)
    if (byte >= fp->init_start[i] && byte < fp->init_start[i] + 32) return 1;
  *seed = *seed * 1664525u + 1013904223u;
  return (*seed >> 8) % 512u == 0; /* one weight byte in 512 */
}

TEST(onnx_bit_flips) {
  size_t n = 0, byte;
  unsigned char *data = read_file("tests/data/onnx/tinynet.onnx", &n);
  long tried = 0, loaded = 0, bad = 0;
  uint32_t seed = 20240607u;
  flip_plan fp;
  clock_t t0 = clock();
  CHECK(data != NULL);
  if (!data) return;
  plan_flips(data, n, &fp);
  CHECK(fp.nodes_end > 0 && fp.num_init > 0 && fp.tail_start < n);
  for (byte = 0; byte < n; byte++) {
    int bit;
    if (!flip_byte_wanted(&fp, byte, &seed)) continue;
    for (bit = SANITIZED ? (int)(byte & 1) : 0; bit < 8; bit += SANITIZED ? 2 : 1) {
      int r;
      data[byte] ^= (unsigned char)(1u << bit);
      /* every 4th model that loads is compiled; every 32nd flip also runs */
      r = load_copy(data, n, tried % 4 == 0, tried % 32 == 0);
      data[byte] ^= (unsigned char)(1u << bit);
      tried++;
      if (r == FUSE_OK) loaded++;
      if (r == -100 && bad++ < 5)
        fprintf(stderr, "  FAIL bit %d of byte %lu flipped: no graph, no message, a leak or a failed run\n",
                bit, (unsigned long)byte);
    }
  }
  printf("  tinynet.onnx with one bit flipped: %ld flips (nodes %lu bytes, %d initializers), %ld "
         "loaded (a quarter compiled), %ld broke the contract (%.1f s)\n",
         tried, (unsigned long)fp.nodes_end, fp.num_init, loaded, bad,
         (double)(clock() - t0) / CLOCKS_PER_SEC);
  CHECK_EQ_INT(bad, 0);
  free(data);
}

/* A Concat of 40 inputs (densenet's reach 49): it loads and runs; its inputs once went into a
   16-slot array on the stack (AddressSanitizer: stack-buffer-overflow) */
TEST(onnx_concat_of_40_inputs) {
  static pb g, node, attr, model, opset;
  static const int64_t d12[2] = {1, 2};
  const int64_t d80[2] = {1, 80};
  char names[40][16];
  float x[2] = {1.5f, -2.0f}, y[80];
  fuse_graph *graph = NULL;
  fuse_plan *plan = NULL;
  const float *ins[1];
  float *outs[1];
  int i, ok = 1;
  memset(&g, 0, sizeof g), memset(&node, 0, sizeof node), memset(&attr, 0, sizeof attr);
  memset(&model, 0, sizeof model), memset(&opset, 0, sizeof opset);
  pb_node(&g, "Relu", "x", NULL, NULL, "r", NULL);
  for (i = 0; i < 40; i++) { /* r, then 39 negations alternating with r */
    snprintf(names[i], sizeof names[i], "n%d", i);
    if (i % 2) pb_node(&g, "Neg", "r", NULL, NULL, names[i], NULL);
  }
  for (i = 0; i < 40; i++) pb_str(&node, 1, i % 2 ? names[i] : "r");
  pb_str(&node, 2, "y");
  pb_str(&node, 4, "Concat");
  pb_str(&attr, 1, "axis");
  pb_int(&attr, 3, 1);
  pb_int(&attr, 20, 2); /* type INT */
  pb_sub(&node, 5, &attr);
  pb_sub(&g, 1, &node);
  pb_value_info(&g, 11, "x", 2, d12);
  pb_value_info(&g, 12, "y", 2, d80);
  pb_int(&model, 1, 7);
  pb_str(&opset, 1, "");
  pb_int(&opset, 2, 13);
  pb_sub(&model, 8, &opset);
  pb_sub(&model, 7, &g);
  CHECK(model.n <= sizeof model.d);
  CHECK_EQ_INT(fuse_onnx_load_memory(model.d, model.n, NULL, &graph), FUSE_OK);
  if (graph && fuse_graph_status(graph) == FUSE_OK &&
      fuse_compile(graph, NULL, &plan) == FUSE_OK) {
    ins[0] = x, outs[0] = y;
    CHECK_EQ_INT(fuse_run(plan, ins, outs, NULL), FUSE_OK);
    for (i = 0; i < 40; i++) /* relu(x) = [1.5, 0]; Neg of it in the odd slots */
      ok = ok && y[2 * i] == (i % 2 ? -1.5f : 1.5f) && y[2 * i + 1] == (i % 2 ? -0.0f : 0.0f);
    CHECK(ok);
  } else {
    CHECK(!"the 40-input Concat did not load and compile");
  }
  fuse_plan_destroy(plan);
  fuse_graph_destroy(graph);
}
#endif

int main(int argc, char **argv) {
  verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
#ifndef FUSE_NO_ONNX /* without the reader there is nothing to test here */
  RUN(table);
  RUN(onnx_truncated_every_length);
  RUN(onnx_bit_flips);
  RUN(onnx_concat_of_40_inputs);
#endif
  return runner_finish("badinput_onnx");
}
