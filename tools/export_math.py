#!/usr/bin/env python3
"""export_math.py - small PyTorch models of the element-wise math ops, exported to ONNX.

Usage (from the repository root):

    /usr/bin/python3 tools/export_math.py [out_dir]
    # default: the PyTorch models in tests/data/onnx (tests/test_networks.c runs them too),
    # the hand-written one in tests/data/math

Writes, for opset 13 and opset 14 (13: PyTorch 1.13 decomposes GELU into Div, Erf, Add, Mul,
hardswish into HardSigmoid + Mul, SiLU into Sigmoid + Mul; 14: HardSwish is one op):

    mathnet_op<N>.onnx          the model (input x [2, 3, 5, 7])
    mathnet_op<N>.input.bin     the input, raw float32 little-endian
    mathnet_op<N>.output.bin    PyTorch's float32 output (one [2, 3, 5, 7] tensor)

and, in tests/data/math (not tests/data/onnx: test_networks wants models fuse_optimize can
shrink), gelu_op20.{onnx,input.bin,output.bin}: Gelu at opset 20 (approximate left out,
"none", "tanh"), written as protobuf by hand (PyTorch 1.13 cannot export opset 20), input
x [3, 11], the three results joined into one output [9, 11], PyTorch's float64 values rounded
to float32.

tests/test_math.c loads each model, runs it and compares (normwise relative error 1e-4 for
the exports, 1e-5 for Gelu). Deterministic: fixed seeds.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)


class MathNet(torch.nn.Module):
    """Every activation PyTorch exports as the math ops, in a chain and side by side."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3, padding=1)
        self.prelu = torch.nn.PReLU(3)
        with torch.no_grad():
            self.prelu.weight.copy_(torch.tensor([0.1, -0.2, 0.3]))

    def forward(self, x):
        y = self.prelu(self.conv(x))
        a = F.gelu(y) + F.hardswish(y) + F.silu(y) + F.elu(y, 0.7) + F.selu(y)
        b = F.softplus(y) + F.leaky_relu(y, 0.15) + F.hardsigmoid(y) + torch.tanh(y)
        c = torch.sqrt(torch.abs(y) + 1) / (torch.exp(-y) + 1) + torch.log(y * y + 0.5)
        d = torch.erf(y) * torch.reciprocal(y * y + 1) - torch.floor(y) + torch.ceil(-y)
        e = torch.pow(torch.abs(y) + 0.5, 1.5) + y ** 2 - torch.neg(y)
        f = torch.maximum(a, b) - torch.minimum(c, d)
        return f + e / 4


# ------------------------------------------------------------------ a hand-written model
# PyTorch 1.13 cannot export opset 20, where Gelu is one op: this writes the protobuf itself.
def pb_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def pb_field(num, value):
    """value: int (varint) or bytes / str (length-delimited)"""
    if isinstance(value, int):
        return pb_varint(num << 3) + pb_varint(value)
    if isinstance(value, str):
        value = value.encode()
    return pb_varint(num << 3 | 2) + pb_varint(len(value)) + value


def pb_value_info(name, shape):
    dims = b"".join(pb_field(1, pb_field(1, d)) for d in shape)  # Dimension.dim_value
    tensor = pb_field(1, 1) + pb_field(2, dims)                  # elem_type FLOAT, shape
    return pb_field(1, name) + pb_field(2, pb_field(1, tensor))   # name, TypeProto.tensor_type


def pb_node(op, inputs, outputs, attrs=b""):
    return (b"".join(pb_field(1, i) for i in inputs) + b"".join(pb_field(2, o) for o in outputs)
            + pb_field(4, op) + attrs)


def gelu_op20(out_dir):
    """Gelu (opset 20) with approximate left out, "none" and "tanh"; input x [3, 11], the three
    joined along axis 0 into the one output y [9, 11]."""
    shape = (3, 11)
    tanh = pb_field(5, pb_field(1, "approximate") + pb_field(4, "tanh") + pb_field(20, 3))
    none = pb_field(5, pb_field(1, "approximate") + pb_field(4, "none") + pb_field(20, 3))
    graph = (pb_field(1, pb_node("Gelu", ["x"], ["a"]))
             + pb_field(1, pb_node("Gelu", ["x"], ["b"], none))
             + pb_field(1, pb_node("Gelu", ["x"], ["c"], tanh))
             + pb_field(1, pb_node("Concat", ["a", "b", "c"], ["y"],
                                   pb_field(5, pb_field(1, "axis") + pb_field(3, 0)
                                            + pb_field(20, 2))))
             + pb_field(2, "gelu_op20")
             + pb_field(11, pb_value_info("x", shape))
             + pb_field(12, pb_value_info("y", (3 * shape[0], shape[1]))))
    model = pb_field(1, 9) + pb_field(8, pb_field(2, 20)) + pb_field(7, graph)
    x = np.random.RandomState(20).uniform(-5, 5, size=shape).astype(np.float32)
    xt = torch.from_numpy(x).double()
    ys = [F.gelu(xt), F.gelu(xt), F.gelu(xt, approximate="tanh")]
    base = os.path.join(out_dir, "gelu_op20")
    with open(base + ".onnx", "wb") as f:
        f.write(model)
    x.astype("<f4").tofile(base + ".input.bin")
    np.concatenate([y.numpy().reshape(-1) for y in ys]).astype("<f4").tofile(base + ".output.bin")
    print("wrote %s.{onnx,input.bin,output.bin}" % base)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "data", "onnx")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(7)
    model = MathNet().eval()
    x = torch.from_numpy(np.random.RandomState(7).uniform(-3, 3, size=(2, 3, 5, 7)).astype(np.float32))
    with torch.no_grad():
        y = model(x)
    for opset in (13, 14):
        base = os.path.join(out_dir, "mathnet_op%d" % opset)
        torch.onnx.export(model, x, base + ".onnx", opset_version=opset, input_names=["x"],
                          output_names=["y"])
        x.numpy().astype("<f4").tofile(base + ".input.bin")
        y.numpy().astype("<f4").tofile(base + ".output.bin")
        print("wrote %s.{onnx,input.bin,output.bin}" % base)
    gelu_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "data", "math")
    os.makedirs(gelu_dir, exist_ok=True)
    gelu_op20(gelu_dir)


if __name__ == "__main__":
    main()
