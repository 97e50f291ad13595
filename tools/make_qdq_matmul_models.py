#!/usr/bin/env python3
"""make_qdq_matmul_models.py - small quantized MatMul / Gemm models for fuse.qmatmul's tests,
in the forms ONNX Runtime's quantize_static (QDQ) and its QOperator format write them, each with
a float32 input and output (a QuantizeLinear first, a DequantizeLinear last), as
tools/quantize.py's models are, so that tools/qdq_compare.js runs them in ONNX Runtime.

Usage (from the repository root, with Debian's /usr/bin/python3: onnx, numpy):

    /usr/bin/python3 tools/make_qdq_matmul_models.py [DIR]    (default tests/data/onnx_qmatmul)

then ONNX Runtime's outputs (one thread), the goldens tests/test_quant_onnx.c checks bit for
bit:

    for m in DIR/*.onnx; do node tools/qdq_compare.js --model $m --input ${m%.onnx}.input.bin \\
      --threads 1 --runs 0 --save-output ${m%.onnx}.ort.bin; done

Models (weights int8, zero point 0, symmetric: scale = max|w| / 127; biases int32 in units of
x_scale * w_scale, as quantize_static writes them; activations uint8 with a zero point that is
not 0):

  gemm_transb   Gemm(transB=1) of x [9, 101] by the transpose of [70, 101] weights, per output
                channel (axis 0), + an int32 bias -> uint8 (torchvision's fc).
  matmul_nd     MatMul of a batched x [2, 3, 24] by [24, 40] weights, per tensor, no bias ->
                Relu -> int8 with zero point -128 (ONNX Runtime drops the Relu: the
                quantize's range starts at 0).
  matmul_bias   MatMul of x [5, 29] by [29, 20] weights per column (axis 1), Add of an int32
                bias -> uint8.
  qlinear       QLinearMatMul (the QOperator form) of x [4, 24] uint8 by [24, 40] int8 weights
                per column -> uint8 (ONNX Runtime's kernel for uint8 x has uint8 y).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def f32(v):
    return np.asarray(v, dtype=np.float32)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def act_params(x, signed=False):
    """scale and zero point of uint8 (int8) activations covering x's range and 0."""
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = f32((hi - lo) / 255.0)
    zero = int(round(-lo / float(scale)))
    if signed:
        return scale, np.int8(zero - 128)
    return scale, np.uint8(min(max(zero, 0), 255))


def weights(rng, shape, axis):
    """int8 weights, symmetric, per channel along axis (None: per tensor), and their scales."""
    w = rng.standard_normal(shape).astype(np.float32) * 0.2
    if axis is None:
        s = f32(np.abs(w).max() / 127.0)
        return np.clip(np.rint(w / s), -127, 127).astype(np.int8), s
    other = tuple(d for d in range(w.ndim) if d != axis)
    s = f32(np.abs(w).max(axis=other) / 127.0)
    shape_b = [1] * w.ndim
    shape_b[axis] = -1
    return np.clip(np.rint(w / s.reshape(shape_b)), -127, 127).astype(np.int8), s


def model(name, x, y_shape, nodes, inits):
    g = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))],
        initializer=[init(k, v) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="make_qdq_matmul_models.py")
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    return m


def qdq_product(name, rng, x_shape, k, n, gemm, axis, bias, relu, signed_out):
    """x -> Q -> DQ -> MatMul / Gemm (DQ'd weights) -> Add bias? -> Relu? -> Q -> DQ -> y."""
    x = f32(rng.uniform(-1.0, 2.0, x_shape))
    xs, xz = act_params(x)
    if gemm:
        wq, ws = weights(rng, (n, k), axis)
    else:
        wq, ws = weights(rng, (k, n), axis)
    wf = (wq.astype(np.float32) * (ws.reshape(-1, 1) if gemm and axis == 0 else ws)).astype(np.float32)
    y = x @ (wf.T if gemm else wf)
    b = f32(rng.uniform(-0.5, 0.5, (n,)))
    bscale = f32(xs * ws) if np.ndim(ws) else f32(np.full((n,), xs * ws))
    bq = np.rint(b / bscale).astype(np.int32)
    if bias:
        y = y + bq * bscale
    if relu:
        y = np.maximum(y, 0)
    if relu and signed_out:
        ys, yz = f32(max(float(y.max()), 1e-3) / 255.0), np.int8(-128)
    else:
        ys, yz = act_params(y, signed_out)
    inits = [("xs", xs), ("xz", xz), ("wq", wq), ("ws", ws), ("ys", ys), ("yz", yz)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "ws"], ["wd"],
                              **({"axis": axis} if axis is not None else {}))]
    if bias:
        inits += [("bq", bq), ("bs", bscale)]
        nodes.append(helper.make_node("DequantizeLinear", ["bq", "bs"], ["bd"], axis=0))
    if gemm:
        nodes.append(helper.make_node("Gemm", ["xd", "wd"] + (["bd"] if bias else []), ["p"],
                                      transB=1))
    else:
        nodes.append(helper.make_node("MatMul", ["xd", "wd"], ["p"]))
        if bias:
            nodes.append(helper.make_node("Add", ["p", "bd"], ["pb"]))
    last = "pb" if bias and not gemm else "p"
    if relu:
        nodes.append(helper.make_node("Relu", [last], ["r"]))
        last = "r"
    nodes += [helper.make_node("QuantizeLinear", [last, "ys", "yz"], ["yq"]),
              helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    return model(name, x, y.shape, nodes, inits), x


def qlinear(name, rng):
    x = f32(rng.uniform(-1.0, 2.0, (4, 24)))
    xs, xz = act_params(x)
    wq, ws = weights(rng, (24, 40), 1)
    y = x @ (wq.astype(np.float32) * ws)
    ys, yz = act_params(y)
    inits = [("xs", xs), ("xz", xz), ("wq", wq), ("ws", ws), ("wz", np.zeros(40, np.int8)),
             ("ys", ys), ("yz", yz)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "wq", "ws", "wz", "ys", "yz"],
                              ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    return model(name, x, y.shape, nodes, inits), x


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/onnx_qmatmul"
    os.makedirs(out, exist_ok=True)
    made = [
        qdq_product("gemm_transb", np.random.RandomState(11), (9, 101), 101, 70, True, 0, True,
                    False, False),
        qdq_product("matmul_nd", np.random.RandomState(12), (2, 3, 24), 24, 40, False, None,
                    False, True, True),
        qdq_product("matmul_bias", np.random.RandomState(13), (5, 29), 29, 20, False, 1, True,
                    False, False),
        qlinear("qlinear", np.random.RandomState(14)),
    ]
    for m, x in made:
        name = m.graph.name
        onnx.save(m, os.path.join(out, name + ".onnx"))
        x.astype("<f4").tofile(os.path.join(out, name + ".input.bin"))
        print("%s: input %s" % (name, list(x.shape)))


if __name__ == "__main__":
    main()
