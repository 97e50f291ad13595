#!/usr/bin/env python3
"""make_quant_models.py - small quantized ONNX models and their outputs, for tests/test_quant_onnx.c.

Usage (from the repository root; needs numpy and Debian's python3-onnx):

    /usr/bin/python3 tools/make_quant_models.py [out_dir]
        (default tests/data/onnx_quant; seeded, deterministic, committed)

For each case, <case>.onnx and its inputs and expected outputs as raw little-endian arrays of
their element types (float32, uint8, int8, int32): <case>.input_<k>.bin, <case>.output_<k>.bin.
The outputs are computed here with numpy, by ONNX's definitions (QuantizeLinear rounds half to
even and saturates; DequantizeLinear is (q - zero point) * scale in float32), independently of
fuse.h: quantized values from integers exactly, sums of products in float64.

  qdq_conv   float32 input -> QuantizeLinear (uint8) -> DequantizeLinear -> Conv (int8 weights
             per output channel, int32 bias, both DequantizeLinear of initializers) ->
             QuantizeLinear (uint8) -> DequantizeLinear -> Relu -> QuantizeLinear (int8): the
             QDQ form ONNX Runtime's quantize_static writes; int8 output.
  qlinear    uint8 image -> QLinearConv (stride 2, int8 weights per channel, int32 bias) ->
             DequantizeLinear -> GlobalAveragePool -> Flatten -> QuantizeLinear ->
             QLinearMatMul (uint8 weights with a zero point) -> int8 logits, and their
             DequantizeLinear as float32.
  integer    ConvInteger (uint8, x zero point, a w zero point per output channel) and
             MatMulInteger (int8, an a zero point per row, b per column): int32 outputs.
  dynamic    DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by x_scale * w_scale: ONNX
             Runtime's quantize_dynamic of a MatMul; float32 output and the uint8 zero point.
  round      Round (ties to even, 2^22 + 0.5, 2^23 - 0.5, infinities, NaN) and Clip -> Round ->
             Cast to uint8.

Where a float32 result is quantized (the conv's and the matmul's outputs), the data is chosen
(the seed advanced) so that no value lies within 0.002 of a rounding tie in quantized units:
the float32 sums fuse.h forms then round to the integers float64 sums give, and integer
outputs are compared exactly.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
TIE_MARGIN = 0.002

ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.uint8): TensorProto.UINT8,
        np.dtype(np.int8): TensorProto.INT8, np.dtype(np.int32): TensorProto.INT32}


def f32(v):
    return np.asarray(v, np.float32)


def quantize(x, scale, zero, axis=1):
    """ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zero) in zero's type; x / scale
    in float32, as the kernels divide."""
    x = f32(x)
    scale, zero = f32(scale), np.asarray(zero)
    if scale.size > 1:
        shape = [1] * x.ndim
        shape[axis] = scale.size
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    info = np.iinfo(zero.dtype)
    q = np.rint(x / scale).astype(np.float64) + zero.astype(np.float64)
    return np.clip(q, info.min, info.max).astype(zero.dtype)


def dequantize(q, scale, zero=None, axis=1):
    """ONNX DequantizeLinear in float32: (q - zero) * scale, q - zero exact."""
    q = np.asarray(q)
    scale = f32(scale)
    zero = np.zeros(scale.shape, q.dtype) if zero is None else np.asarray(zero)
    if scale.size > 1:
        shape = [1] * q.ndim
        shape[axis] = scale.size
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return f32(f32(q.astype(np.int64) - zero.astype(np.int64)) * scale)


def near_tie(x, scale):
    """Whether any x / scale lies within TIE_MARGIN of a rounding tie (k + 0.5)."""
    r = np.asarray(x, np.float64) / np.float64(scale)
    return bool(np.any(np.abs(r - np.floor(r) - 0.5) < TIE_MARGIN))


def conv2d(x, w, b=None, stride=1, pad=0):
    """NCHW convolution in float64 (exact for integers)."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, c, h, wd = x.shape
    k, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, k, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    if b is not None:
        y += np.asarray(b, np.float64).reshape(1, k, 1, 1)
    return y


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(name, nodes, inputs, outputs, inits, opset=OPSET):
    """inputs / outputs: (name, array) pairs (the array gives the type and shape)."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, ELEM[a.dtype], list(a.shape)) for n, a in inputs],
        [helper.make_tensor_value_info(n, ELEM[a.dtype], list(a.shape)) for n, a in outputs],
        initializer=[init(k, v) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_quant_models.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def scale_for(y):
    """A float32 scale putting y's range (with 0) into 255 steps, with room to spare."""
    lo, hi = min(float(np.min(y)), 0.0), max(float(np.max(y)), 0.0)
    return f32((hi - lo) / 255.0 * 1.05)


def qdq_conv(seed):
    rng = np.random.RandomState(seed)
    x = f32(rng.uniform(-1.0, 1.5, (1, 3, 8, 8)))
    sx, zx = f32(0.01), np.uint8(100)
    wq = rng.randint(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    sw = f32(rng.uniform(0.002, 0.01, 4))
    zw = np.zeros(4, np.int8)
    b = rng.randint(-3000, 3000, 4).astype(np.int32)
    sb = f32(sx * sw)  # the float32 product, as ONNX Runtime's quantizer stores it
    xd = dequantize(quantize(x, sx, zx), sx, zx)
    wd = dequantize(wq, sw, zw, axis=0)
    bd = dequantize(b, sb, None, axis=0)
    y = conv2d(xd, wd, bd, pad=1)
    s1, z1 = scale_for(y), np.uint8(120)
    if near_tie(y, s1):
        return None
    q1 = quantize(y, s1, z1)
    r = np.maximum(dequantize(q1, s1, z1), 0)
    s2, z2 = f32(float(np.max(r)) / 250.0 + 1e-3), np.int8(-128)
    if near_tie(r, s2):
        return None
    out = quantize(r, s2, z2)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "sb"], ["bd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["conv", "s1", "z1"], ["q1"]),
        helper.make_node("DequantizeLinear", ["q1", "s1", "z1"], ["d1"]),
        helper.make_node("Relu", ["d1"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "s2", "z2"], ["y"]),
    ]
    inits = [("sx", sx), ("zx", zx), ("wq", wq), ("sw", sw), ("zw", zw), ("b", b), ("sb", sb),
             ("s1", s1), ("z1", z1), ("s2", s2), ("z2", z2)]
    return model("qdq_conv", nodes, [("x", x)], [("y", out)], inits), [x], [out]


def qlinear(seed):
    rng = np.random.RandomState(seed)
    x = rng.randint(0, 256, (1, 3, 8, 8)).astype(np.uint8)
    sx, zx = f32(0.02), np.uint8(128)
    wq = rng.randint(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    sw = f32(rng.uniform(0.002, 0.01, 4))
    zw = np.zeros(4, np.int8)
    b = rng.randint(-2000, 2000, 4).astype(np.int32)
    bscale = f32(sx * sw)  # the float32 product fuse.h forms at load, as ONNX Runtime does
    y = conv2d(dequantize(x, sx, zx), dequantize(wq, sw, zw, axis=0),
               dequantize(b, bscale, None, axis=0), stride=2, pad=1)
    s1, z1 = scale_for(y), np.uint8(128)
    if near_tie(y, s1):
        return None
    q1 = quantize(y, s1, z1)
    pooled = dequantize(q1, s1, z1).astype(np.float64).mean(axis=(2, 3))  # [1, 4]
    s2, z2 = scale_for(pooled), np.uint8(128)
    if near_tie(pooled, s2):
        return None
    a = quantize(pooled, s2, z2)
    bq = rng.randint(0, 256, (4, 5)).astype(np.uint8)
    sbq, zbq = f32(0.004), np.uint8(131)
    prod = dequantize(a, s2, z2).astype(np.float64) @ dequantize(bq, sbq, zbq).astype(np.float64)
    sy, zy = scale_for(prod), np.int8(3)
    if near_tie(prod, sy):
        return None
    logits_q = quantize(prod, sy, zy)
    logits = dequantize(logits_q, sy, zy)
    nodes = [
        helper.make_node("QLinearConv", ["x", "sx", "zx", "wq", "sw", "zw", "s1", "z1", "b"],
                         ["q1"], strides=[2, 2], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("DequantizeLinear", ["q1", "s1", "z1"], ["d1"]),
        helper.make_node("GlobalAveragePool", ["d1"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("QuantizeLinear", ["flat", "s2", "z2"], ["a"]),
        helper.make_node("QLinearMatMul", ["a", "s2", "z2", "bq", "sbq", "zbq", "sy", "zy"],
                         ["logits_q"]),
        helper.make_node("DequantizeLinear", ["logits_q", "sy", "zy"], ["logits"]),
    ]
    inits = [("sx", sx), ("zx", zx), ("wq", wq), ("sw", sw), ("zw", zw), ("s1", s1), ("z1", z1),
             ("b", b), ("s2", s2), ("z2", z2), ("bq", bq), ("sbq", sbq), ("zbq", zbq),
             ("sy", sy), ("zy", zy)]
    m = model("qlinear", nodes, [("x", x)], [("logits_q", logits_q), ("logits", logits)], inits)
    return m, [x], [logits_q, logits]


def integer(seed):
    rng = np.random.RandomState(seed)
    x = rng.randint(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    w = rng.randint(0, 256, (3, 2, 3, 3)).astype(np.uint8)
    zx, zw = np.uint8(7), rng.randint(0, 256, 3).astype(np.uint8)
    a = rng.randint(-128, 128, (3, 4)).astype(np.int8)
    bm = rng.randint(-128, 128, (4, 2)).astype(np.int8)
    za, zb = rng.randint(-10, 10, 3).astype(np.int8), rng.randint(-10, 10, 2).astype(np.int8)
    y1 = conv2d(x.astype(np.int64) - int(zx),
                w.astype(np.int64) - zw.astype(np.int64).reshape(3, 1, 1, 1), pad=1)
    y1 = y1.astype(np.int32)
    y2 = ((a.astype(np.int64) - za.astype(np.int64).reshape(3, 1)) @
          (bm.astype(np.int64) - zb.astype(np.int64).reshape(1, 2))).astype(np.int32)
    nodes = [
        helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y1"], pads=[1, 1, 1, 1]),
        helper.make_node("MatMulInteger", ["a", "bm", "za", "zb"], ["y2"]),
    ]
    inits = [("w", w), ("zx", zx), ("zw", zw), ("bm", bm), ("za", za), ("zb", zb)]
    m = model("integer", nodes, [("x", x), ("a", a)], [("y1", y1), ("y2", y2)], inits, opset=10)
    return m, [x, a], [y1, y2]


def dynamic(seed):
    rng = np.random.RandomState(seed)
    x = f32(rng.uniform(-2.0, 3.0, (2, 6)))
    wq = rng.randint(-127, 128, (6, 3)).astype(np.int8)
    ws, wz = f32(0.05), np.int8(0)
    # DynamicQuantizeLinear, in float32 as ONNX defines it
    lo, hi = np.minimum(f32(0), np.min(x)), np.maximum(f32(0), np.max(x))
    xs = f32(f32(hi - lo) / f32(255))
    xz = quantize(f32(-lo) / xs, f32(1), np.uint8(0))
    xq = quantize(x, xs, xz)
    acc = ((xq.astype(np.int64) - int(xz)) @ (wq.astype(np.int64) - int(wz))).astype(np.int32)
    y = f32(f32(acc) * f32(xs * ws))
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("MatMulInteger", ["xq", "wq", "xz", "wz"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "ws"], ["scale"]),
        helper.make_node("Mul", ["accf", "scale"], ["y"]),
    ]
    inits = [("wq", wq), ("ws", ws), ("wz", wz)]
    m = model("dynamic", nodes, [("x", x)], [("y", y), ("xz", np.asarray(xz))], inits, opset=11)
    return m, [x], [y, np.asarray(xz)]


def round_case(seed):
    """Round's ties, the largest fractions a float32 has, whole numbers beyond 2^23,
    infinities and NaN; Clip -> Round -> Cast to uint8 of the same values, NaN replaced (a
    Cast of NaN is undefined)."""
    del seed
    x = f32([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -2.7, 300.6, 4194304.5, 8388607.5,
             16777216.0, 3e9, -3e9, np.inf, -np.inf, np.nan, 254.5])
    xc = x.copy()
    xc[np.isnan(xc)] = 0.25
    y1 = f32(np.rint(x))
    y2 = np.rint(np.clip(xc, 0, 255)).astype(np.uint8)
    nodes = [
        helper.make_node("Round", ["x"], ["y1"]),
        helper.make_node("Clip", ["xc", "lo", "hi"], ["c"]),
        helper.make_node("Round", ["c"], ["r"]),
        helper.make_node("Cast", ["r"], ["y2"], to=TensorProto.UINT8),
    ]
    inits = [("lo", f32(0)), ("hi", f32(255))]
    m = model("round", nodes, [("x", x), ("xc", xc)], [("y1", y1), ("y2", y2)], inits)
    return m, [x, xc], [y1, y2]


CASES = [("qdq_conv", qdq_conv), ("qlinear", qlinear), ("integer", integer),
         ("dynamic", dynamic), ("round", round_case)]


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/data/onnx_quant"
    os.makedirs(out_dir, exist_ok=True)
    for name, make in CASES:
        seed = 1
        made = make(seed)
        while made is None:  # a value near a rounding tie: the next seed
            seed += 1
            made = make(seed)
        m, ins, outs = made
        onnx.save(m, os.path.join(out_dir, name + ".onnx"))
        for k, a in enumerate(ins):
            np.asarray(a).astype(np.asarray(a).dtype.newbyteorder("<")).tofile(
                os.path.join(out_dir, "%s.input_%d.bin" % (name, k)))
        for k, a in enumerate(outs):
            np.asarray(a).astype(np.asarray(a).dtype.newbyteorder("<")).tofile(
                os.path.join(out_dir, "%s.output_%d.bin" % (name, k)))
        print("%s (seed %d): inputs %s, outputs %s" % (
            name, seed, ", ".join("%s%s" % (a.dtype, list(a.shape)) for a in ins),
            ", ".join("%s%s" % (np.asarray(a).dtype, list(np.shape(a))) for a in outs)))


if __name__ == "__main__":
    main()
