#!/usr/bin/env python3
"""make_qdq_gap_models.py - small QDQ models around a GlobalAveragePool for
fuse.qglobal_avg_pool2d's tests, as ONNX Runtime's quantize_static writes them (a Q -> DQ pair on
every activation), each with a float32 input and output (a QuantizeLinear first, a
DequantizeLinear last) so that tools/qdq_compare.js runs them in ONNX Runtime, which turns each
DQ -> GlobalAveragePool -> Q into its QLinearGlobalAveragePool (com.microsoft).

Usage (from the repository root, with Debian's /usr/bin/python3: onnx, numpy):

    /usr/bin/python3 tools/make_qdq_gap_models.py [DIR]    (default tests/data/onnx_qgap)

then ONNX Runtime's outputs (one thread), the goldens tests/test_quant_onnx.c checks bit for
bit:

    for m in DIR/*.onnx; do node tools/qdq_compare.js --model $m --input ${m%.onnx}.input.bin \\
      --threads 1 --runs 0 --save-output ${m%.onnx}.ort.bin; done

Models (activation scales and zero points from the data's range; the pool's output scale a
fraction of its input's, so that its multiplier x_scale / (y_scale * H * W) is not a power of
two and ties are rare but its rounding matters):

  tail_u8     x [2, 56, 9, 11] -> Q (uint8) -> DQ -> Conv 3x3 (int8 weights per output
              channel, int32 bias) -> Relu -> Q -> DQ -> GlobalAveragePool -> Q -> DQ ->
              Flatten -> Q -> DQ -> Gemm (transB, int8 per tensor) -> Q -> DQ: a classifier's
              tail in miniature; fuse.h's pool reads the conv's NHWC output (56 channels: 32,
              16 and 8 on the AVX2 rows), ONNX Runtime's the NHWC one its NhwcTransformer makes.
  nchw_i8     x [3, 19, 6, 5] -> Q (int8, zero point 23) -> DQ -> GlobalAveragePool -> Q (int8,
              zero point -7) -> DQ: int8, the pool's input a graph input (NCHW).
  pixel1_u8   x [4, 33, 1, 1] -> Q (uint8) -> DQ -> GlobalAveragePool -> Q -> DQ -> Flatten
              -> Q -> DQ: one pixel a channel (the multiplier x_scale / y_scale).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def f32(v):
    return np.asarray(v, dtype=np.float32)


def act_params(x, signed=False):
    """scale and zero point of uint8 (int8) activations covering x's range and 0."""
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = f32((hi - lo) / 255.0)
    zero = int(round(-lo / float(scale)))
    if signed:
        return scale, np.int8(min(max(zero - 128, -128), 127))
    return scale, np.uint8(min(max(zero, 0), 255))


def model(name, x, y_shape, nodes, inits):
    g = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="make_qdq_gap_models.py")
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    return m


def qdq(src, dst, s, z):
    return [helper.make_node("QuantizeLinear", [src, s, z], [dst + "_q"]),
            helper.make_node("DequantizeLinear", [dst + "_q", s, z], [dst])]


def tail_u8(rng):
    n, c, h, w, k = 2, 56, 9, 11, 10
    x = f32(rng.uniform(-1.0, 2.0, (n, c, h, w)))
    xs, xz = act_params(x)
    wf = rng.standard_normal((c, c, 3, 3)).astype(np.float32) * 0.05
    ws = f32(np.abs(wf).max(axis=(1, 2, 3)) / 127.0)
    wq = np.clip(np.rint(wf / ws.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
    bq = rng.randint(-2000, 2000, c).astype(np.int32)
    bs = f32(xs * ws)
    # the conv's output range, roughly (the scales need not be exact: ORT and fuse.h read the
    # same constants)
    cs, cz = f32(0.02), np.uint8(0)
    ps, pz = f32(0.0071), np.uint8(3)
    gq = np.clip(np.rint(rng.standard_normal((k, c)) * 40), -127, 127).astype(np.int8)
    gs, ys, yz = f32(0.004), f32(0.05), np.uint8(128)
    inits = [("xs", xs), ("xz", xz), ("wq", wq), ("ws", ws), ("bq", bq), ("bs", bs),
             ("cs", cs), ("cz", cz), ("ps", ps), ("pz", pz), ("gq", gq), ("gs", gs),
             ("ys", ys), ("yz", yz)]
    nodes = qdq("x", "xd", "xs", "xz") + [
        helper.make_node("DequantizeLinear", ["wq", "ws"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["bq", "bs"], ["bd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"])] + qdq("relu", "rd", "cs", "cz") + [
        helper.make_node("GlobalAveragePool", ["rd"], ["pool"])] + qdq("pool", "pd", "ps", "pz") + [
        helper.make_node("Flatten", ["pd"], ["flat"])] + qdq("flat", "fd", "ps", "pz") + [
        helper.make_node("DequantizeLinear", ["gq", "gs"], ["gd"]),
        helper.make_node("Gemm", ["fd", "gd"], ["gemm"], transB=1)] + [
        helper.make_node("QuantizeLinear", ["gemm", "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    return model("tail_u8", x, (n, k), nodes, inits), x


def nchw_i8(rng):
    x = f32(rng.uniform(-0.7, 1.3, (3, 19, 6, 5)))
    xs, xz, ps, pz = f32(0.0083), np.int8(23), f32(0.0031), np.int8(-7)
    inits = [("xs", xs), ("xz", xz), ("ps", ps), ("pz", pz)]
    nodes = qdq("x", "xd", "xs", "xz") + [helper.make_node("GlobalAveragePool", ["xd"], ["pool"]),
                                          helper.make_node("QuantizeLinear", ["pool", "ps", "pz"], ["pq"]),
                                          helper.make_node("DequantizeLinear", ["pq", "ps", "pz"], ["y"])]
    return model("nchw_i8", x, (3, 19, 1, 1), nodes, inits), x


def pixel1_u8(rng):
    x = f32(rng.uniform(-1.0, 1.0, (4, 33, 1, 1)))
    xs, xz = act_params(x)
    ps, pz = f32(float(xs) * 0.37), np.uint8(100)
    inits = [("xs", xs), ("xz", xz), ("ps", ps), ("pz", pz)]
    nodes = qdq("x", "xd", "xs", "xz") + [helper.make_node("GlobalAveragePool", ["xd"], ["pool"])] + \
        qdq("pool", "pd", "ps", "pz") + [helper.make_node("Flatten", ["pd"], ["flat"])] + [
        helper.make_node("QuantizeLinear", ["flat", "ps", "pz"], ["fq"]),
        helper.make_node("DequantizeLinear", ["fq", "ps", "pz"], ["y"])]
    return model("pixel1_u8", x, (4, 33), nodes, inits), x


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/onnx_qgap"
    os.makedirs(out, exist_ok=True)
    made = [tail_u8(np.random.RandomState(21)), nchw_i8(np.random.RandomState(22)),
            pixel1_u8(np.random.RandomState(23))]
    for m, x in made:
        name = m.graph.name
        onnx.save(m, os.path.join(out, name + ".onnx"))
        x.astype("<f4").tofile(os.path.join(out, name + ".input.bin"))
        print("%s: input %s" % (name, list(x.shape)))


if __name__ == "__main__":
    main()
