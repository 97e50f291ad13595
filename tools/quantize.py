#!/usr/bin/env python3
"""quantize.py - a float ONNX model and calibration inputs -> a QDQ ONNX model, in the form ONNX
Runtime's quantize_static (QDQ format) and PyTorch's fake-quant exports write, with its
fake-quantized reference output, for fuse.h's int8 tests and benchmarks.

Usage (from the repository root, with Debian's /usr/bin/python3: torch, onnx, numpy):

    /usr/bin/python3 tools/quantize.py MODEL.onnx --out PREFIX [--calib N | --calib-files a,b]
        [--seed S] [--opset K] [--no-fuse-activations] [--per-tensor-weights]
        [--signed-activations]

    --calib N           N random calibration inputs (default 8), standard normal as
                        tools/export_zoo.py draws its inputs, from torch.Generator seeded with
                        --seed (default 1234): the same files every run
    --calib-files       raw float32 files instead, the graph's inputs one after another
    --opset K           the output's opset (default: the model's, at least 13, which per-axis
                        scales need): raised with onnx's version converter, never lowered
    --no-fuse-activations  also put QuantizeLinear -> DequantizeLinear between a Conv / Gemm and
                        the Relu / Clip after it (a requantization with a clamp)
    --per-tensor-weights   one weight scale per tensor instead of one per output channel
    --signed-activations   int8 activations, symmetric (scale = max|x| / 127, zero point 0)

It writes PREFIX.onnx (passes onnx.checker with full_check; loads in ONNX Runtime),
PREFIX.input.bin (the first calibration input, raw float32 little-endian, as export_zoo writes
inputs), PREFIX.output.bin (the QDQ model's output on it from tools/onnx_torch.py in float32:
fake-quantized PyTorch, the reference fuse.h and ORT are compared against) and PREFIX.ref.txt
(for information, as ||a - b|| / ||b||: float_vs_fake_quant_error, the float model's output
against it, the cost of quantizing; fake_quant_float32_vs_float64, the same QDQ model run in
float64 against it: the reference's own noise, a few float32 sums landing one step apart at a
QuantizeLinear, which the layers after it amplify; ONNX Runtime's integer kernels sum exactly,
so its distance from the float32 reference is of the same size).

WHAT IT WRITES:
  - Conv -> BatchNormalization pairs are folded first (as ORT's pre-processing and PyTorch's
    fuse_modules do): the int8 weights then hold the normalization.
  - Weights of Conv, Gemm and MatMul (initializers): int8, symmetric per output channel, scale
    = max|w| / 127, zero point 0, values in [-127, 127], then DequantizeLinear (axis 0 for Conv
    and Gemm with transB, 1 for Gemm without, the last for MatMul).
  - Their biases (Conv's; Gemm's when 1-D with alpha = beta = 1): int32, scale = input scale x
    weight scale[c], zero point 0, then DequantizeLinear. A weight scale is widened in the rare
    channel whose bias would not fit in int32.
  - Activations: uint8 per tensor, asymmetric: min / max over the calibration set, the range
    widened to hold 0, scale = (max - min) / 255, zero point round(-min / scale). Written as
    QuantizeLinear -> DequantizeLinear on the graph inputs, on the output of every quantized op
    (Conv, Gemm, MatMul, Add, Mul, MaxPool, AveragePool, GlobalAveragePool, Concat, Relu, Clip,
    HardSwish, Sigmoid) and on any other activation input of a quantized op. MaxPool's output
    keeps its input's scale and zero point (the max of a quantized tensor is on its grid, so
    ORT runs the pool on the integers). Flatten, Reshape, Transpose, Squeeze, Unsqueeze,
    Identity and Dropout pass through unquantized; a quantized op after one gets the pair with
    its source's scale and zero point (a no-op on the values, but the DequantizeLinear -> op
    pattern ORT's integer kernels need). Other ops (Softmax, HardSigmoid, ...) stay float; a
    constant operand of Add / Mul stays float32.
  - A Relu / Clip right after a Conv / Gemm that has no other consumer is quantized after the
    activation only, as PyTorch's fused ConvReLU2d (unless --no-fuse-activations).
"""
import argparse
import os
import sys

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper, version_converter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_torch import Interpreter, normwise, read_inputs  # noqa: E402

SEED = 1234
torch.set_num_threads(1)

QUANTIZED_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "MaxPool", "AveragePool",
                 "GlobalAveragePool", "Concat", "Relu", "Clip", "HardSwish", "Sigmoid"}
PASS_THROUGH = {"Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Dropout"}
INT32_MAX = 2 ** 31 - 1


# ------------------------------------------------------------------ the float model
def fold_batch_norms(model):
    """Conv -> BatchNormalization, when the conv's output goes nowhere else and its weights
    are initializers of its own, becomes one Conv with new weights and bias (computed in
    float64, stored under the names of the conv's weight and the normalization's bias)."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    uses = {}
    for n in g.node:
        for name in n.input:
            uses[name] = uses.get(name, 0) + 1
    producer = {n.output[0]: n for n in g.node if n.output}
    removed = []
    for bn in g.node:
        conv = producer.get(bn.input[0]) if bn.op_type == "BatchNormalization" else None
        if (conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1
                or any(name not in inits for name in list(conv.input[1:]) + list(bn.input[1:5]))
                or uses[conv.input[1]] != 1 or uses[bn.input[2]] != 1):
            continue
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (numpy_helper.to_array(inits[n]).astype(np.float64)
                                  for n in bn.input[1:5])
        w = numpy_helper.to_array(inits[conv.input[1]]).astype(np.float64)
        b = (numpy_helper.to_array(inits[conv.input[2]]).astype(np.float64)
             if len(conv.input) > 2 and conv.input[2] else np.zeros(w.shape[0]))
        k = gamma / np.sqrt(var + eps)
        w = w * k.reshape((-1,) + (1,) * (w.ndim - 1))
        b = (b - mean) * k + beta
        for name, values in ((conv.input[1], w), (bn.input[2], b)):
            inits[name].CopyFrom(numpy_helper.from_array(values.astype(np.float32), name))
        conv.input[:] = [conv.input[0], conv.input[1], bn.input[2]]
        conv.output[0] = bn.output[0]
        removed.append(bn)
    for bn in removed:
        g.node.remove(bn)
    used = {name for n in g.node for name in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    return len(removed)


def calibration_feeds(interp, args):
    """The calibration inputs, each a dict input name -> float32 array."""
    if args.calib_files:
        return [read_inputs(interp, f) for f in args.calib_files.split(",") if f]
    gen = torch.Generator().manual_seed(args.seed)
    return [{spec.name: torch.randn(*shape, generator=gen).numpy()
             for spec, shape in zip(interp.inputs, interp.input_shapes())}
            for _ in range(args.calib)]


def observe_ranges(interp, feeds):
    """name -> [min, max] over the calibration set of every float tensor the graph computes
    (inputs included, initializers not)."""
    ranges = {}
    for feed in feeds:
        for name, t in interp.run(feed, keep_all=True).items():
            if name in interp.initializers or not t.is_floating_point() or t.numel() == 0:
                continue
            lo, hi = float(t.min()), float(t.max())
            r = ranges.setdefault(name, [lo, hi])
            r[0], r[1] = min(r[0], lo), max(r[1], hi)
    return ranges


# ------------------------------------------------------------------ parameters
def activation_params(lo, hi, signed):
    """(scale as float32, zero point as a uint8 / int8 scalar) for a tensor seen in [lo, hi]."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if signed:
        scale = np.float32(max(-lo, hi) / 127.0)
        return (scale if scale > 0 else np.float32(1.0)), np.int8(0)
    scale = np.float32((hi - lo) / 255.0)
    if not scale > 0:
        return np.float32(1.0), np.uint8(0)
    return scale, np.uint8(np.clip(np.round(-lo / np.float64(scale)), 0, 255))


def weight_params(w, axis, bias=None, input_scale=None):
    """int8 values and float32 scales (per `axis`, or one when axis is None), symmetric, zero
    point 0, the scale widened where the bias quantized with it would overflow int32."""
    if axis is None:
        absmax = np.abs(w).max(keepdims=True).reshape(1)
    else:
        absmax = np.abs(np.moveaxis(w, axis, 0)).reshape(w.shape[axis], -1).max(axis=1)
    scale = absmax.astype(np.float64) / 127.0
    if bias is not None:
        need = np.abs(bias.astype(np.float64)) / (float(input_scale) * INT32_MAX)
        scale = np.maximum(scale, need if axis is not None else need.max(keepdims=True))
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    view = scale.reshape([-1 if d == axis else 1 for d in range(w.ndim)]) if axis is not None \
        else scale.reshape(())
    q = np.clip(np.round(w.astype(np.float32) / view), -127, 127).astype(np.int8)
    return q, scale if axis is not None else scale.reshape(())


def bias_params(b, input_scale, w_scale):
    """int32 values and float32 scales input_scale * w_scale (per channel or one)."""
    scale = (np.float32(input_scale) * w_scale).astype(np.float32)
    q = np.clip(np.round(b.astype(np.float64) / scale.astype(np.float64)), -INT32_MAX - 1, INT32_MAX)
    return q.astype(np.int32), scale


# ------------------------------------------------------------------ the QDQ graph
class QdqWriter:
    """Builds the QDQ graph from the (batch-norm-folded) float model and its tensor ranges."""

    def __init__(self, model, ranges, args):
        self.g = model.graph
        self.ranges = ranges
        self.args = args
        self.inits = {t.name: t for t in self.g.initializer}
        self.constants = set(self.inits) | {o for n in self.g.node
                                            if n.op_type == "Constant" for o in n.output}
        self.consumers = {}
        for n in self.g.node:
            for name in n.input:
                self.consumers.setdefault(name, []).append(n)
        self.producer = {o: n for n in self.g.node for o in n.output}
        self.graph_outputs = {o.name for o in self.g.output}
        self.names = ({t.name for t in self.g.initializer} | {i.name for i in self.g.input}
                      | {o for n in self.g.node for o in n.output} | {n.name for n in self.g.node})
        self.params = {}     # tensor -> (scale, zero point): gets QuantizeLinear -> DequantizeLinear
        self.source = {}     # a pass-through op's output -> the quantized tensor it carries
        self.new_inits = []
        self.weights = 0

    def unique(self, base):
        name, k = base, 1
        while name in self.names:
            name, k = "%s_%d" % (base, k), k + 1
        self.names.add(name)
        return name

    def is_quantized(self, n):
        return n.op_type in QUANTIZED_OPS and n.output[0] in self.ranges

    def folded_activation(self, n):
        """Whether n is a Relu / Clip whose input is a Conv / Gemm's output used only by it."""
        if not self.args.fuse_activations or n.op_type not in ("Relu", "Clip"):
            return False
        if any(name and name not in self.constants for name in n.input[1:]):
            return False
        p = self.producer.get(n.input[0])
        return (p is not None and p.op_type in ("Conv", "Gemm") and self.is_quantized(p)
                and len(self.consumers[n.input[0]]) == 1 and n.input[0] not in self.graph_outputs)

    def activation_inputs(self, n):
        """The inputs of quantized op n that are float activations (not weights, biases or
        constants such as Clip's bounds)."""
        if self.folded_activation(n):
            return []
        names = n.input[:1] if n.op_type in ("Conv", "Gemm", "Clip") else n.input
        if n.op_type == "Gemm" and n.input[1] not in self.inits:
            names = n.input[:2]
        return [x for x in names if x and x not in self.constants and x in self.ranges]

    def own_params(self, name):
        return activation_params(*self.ranges[name], self.args.signed_activations)

    def plan(self):
        """Decides which tensors get a QuantizeLinear -> DequantizeLinear pair, and with what."""
        for spec in self.g.input:
            if spec.name in self.ranges:
                self.params[spec.name] = self.own_params(spec.name)
        for n in self.g.node:
            if n.op_type in PASS_THROUGH:
                x = n.input[0]
                src = self.source.get(x, x if x in self.params else None)
                if src:
                    self.source[n.output[0]] = src
            if not self.is_quantized(n):
                continue
            for x in self.activation_inputs(n):
                if x not in self.params:
                    src = self.source.get(x)
                    self.params[x] = self.params[src] if src else self.own_params(x)
            out = n.output[0]
            consumers = self.consumers.get(out, [])
            if len(consumers) == 1 and self.folded_activation(consumers[0]):
                continue
            if n.op_type == "MaxPool":
                self.params[out] = self.params[n.input[0]]
            else:
                self.params[out] = self.own_params(out)

    def add_init(self, base, values):
        name = self.unique(base)
        self.new_inits.append(numpy_helper.from_array(np.asarray(values), name))
        return name

    def dequantized_constant(self, base, q, scale, axis):
        """Initializers q, scale, zero point (zeros of q's type) and the DequantizeLinear node
        that reads them; returns (node, its output name)."""
        qn = self.add_init(base + "_quantized", q)
        sn = self.add_init(base + "_scale", scale)
        zn = self.add_init(base + "_zero_point", np.zeros(scale.shape, q.dtype))
        out = self.unique(base + "_dequantized")
        attrs = {"axis": axis} if axis is not None and scale.ndim else {}
        return helper.make_node("DequantizeLinear", [qn, sn, zn], [out],
                                name=self.unique(base + "_DequantizeLinear"), **attrs), out

    def quantize_weights(self, n):
        """Replaces n's float weight (and bias) initializers by int8 (int32) ones with
        DequantizeLinear; returns the new nodes to put before n."""
        if n.op_type not in ("Conv", "Gemm", "MatMul") or n.input[1] not in self.inits:
            return []
        w_name = n.input[1]
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        w = numpy_helper.to_array(self.inits[w_name])
        if n.op_type == "Conv":
            axis = 0
        elif n.op_type == "Gemm":
            axis = 0 if a.get("transB", 0) else 1
        else:
            axis = w.ndim - 1
        has_bias = len(n.input) > 2 and n.input[2] in self.inits and (
            n.op_type == "Conv" or (a.get("alpha", 1.0) == 1.0 and a.get("beta", 1.0) == 1.0
                                    and len(self.inits[n.input[2]].dims) == 1))
        bias = numpy_helper.to_array(self.inits[n.input[2]]) if has_bias else None
        in_scale = self.params[n.input[0]][0]
        per_axis = None if self.args.per_tensor_weights else axis
        q, w_scale = weight_params(w, per_axis, bias, in_scale)
        node, out = self.dequantized_constant(w_name, q, w_scale, per_axis)
        nodes = [node]
        n.input[1] = out
        self.weights += 1
        if has_bias:
            qb, b_scale = bias_params(bias, in_scale, w_scale)
            node, out = self.dequantized_constant(n.input[2], qb, b_scale, 0)
            nodes.append(node)
            n.input[2] = out
        return nodes

    def qdq_pair(self, name):
        """QuantizeLinear -> DequantizeLinear for tensor `name`; returns (nodes, the name the
        consumers read). A graph output keeps its name on the DequantizeLinear's output."""
        scale, zp = self.params[name]
        sn = self.add_init(name + "_scale", np.array(scale, np.float32))
        zn = self.add_init(name + "_zero_point", np.array(zp))
        source, dq_out = name, self.unique(name + "_dequantized")
        if name in self.graph_outputs:
            source, dq_out = self.unique(name + "_float"), name
            self.producer[name].output[list(self.producer[name].output).index(name)] = source
        q_out = self.unique(name + "_quantized")
        return [helper.make_node("QuantizeLinear", [source, sn, zn], [q_out],
                                 name=self.unique(name + "_QuantizeLinear")),
                helper.make_node("DequantizeLinear", [q_out, sn, zn], [dq_out],
                                 name=self.unique(name + "_DequantizeLinear"))], dq_out

    def write(self):
        """The new node list: each tensor's pair right after its producer (graph inputs'
        first), weights' DequantizeLinear right before their op, consumers rewired."""
        self.plan()
        rename = {}
        nodes = []
        for spec in self.g.input:
            if spec.name in self.params:
                pair, rename[spec.name] = self.qdq_pair(spec.name)
                nodes += pair
        for n in list(self.g.node):
            if self.is_quantized(n):
                nodes += self.quantize_weights(n)
            for i, name in enumerate(n.input):
                n.input[i] = rename.get(name, name)
            nodes.append(n)
            for out in list(n.output):
                if out in self.params:
                    pair, dq_out = self.qdq_pair(out)
                    nodes += pair
                    if dq_out != out:
                        rename[out] = dq_out
        del self.g.node[:]
        self.g.node.extend(nodes)
        used = {name for n in nodes for name in n.input}
        keep = [t for t in self.g.initializer if t.name in used]
        del self.g.initializer[:]
        self.g.initializer.extend(keep + self.new_inits)
        del self.g.value_info[:]


def output_flat(interp, feed):
    outs = interp.run(feed)
    return np.concatenate([outs[n].numpy().astype("<f4").ravel() for n in interp.outputs])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--out", required=True, help="output prefix: PREFIX.onnx, .input.bin, ...")
    ap.add_argument("--calib", type=int, default=8, help="random calibration inputs")
    ap.add_argument("--calib-files", help="comma-separated raw float32 input files instead")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--opset", type=int)
    ap.add_argument("--no-fuse-activations", dest="fuse_activations", action="store_false")
    ap.add_argument("--per-tensor-weights", action="store_true")
    ap.add_argument("--signed-activations", action="store_true")
    args = ap.parse_args()
    prefix = args.out[:-5] if args.out.endswith(".onnx") else args.out

    original = onnx.load(args.model)
    current = next(o.version for o in original.opset_import if o.domain in ("", "ai.onnx"))
    opset = args.opset or max(13, current)
    if opset < 13 and not args.per_tensor_weights:
        ap.error("per-axis weight scales need opset 13 or later (or --per-tensor-weights)")
    if opset < 10:
        ap.error("QuantizeLinear needs opset 10 or later")
    if opset < current:
        ap.error("--opset %d is below the model's %d (onnx's version converter does not "
                 "lower opsets reliably)" % (opset, current))
    model = onnx.load(args.model)
    if opset > current:
        model = version_converter.convert_version(model, opset)
    folded = fold_batch_norms(model)
    float_interp = Interpreter(model)
    feeds = calibration_feeds(float_interp, args)
    if not feeds:
        ap.error("no calibration inputs")
    ranges = observe_ranges(float_interp, feeds)

    writer = QdqWriter(model, ranges, args)
    writer.write()
    model.producer_name, model.producer_version = "fuse.h tools/quantize.py", "1"
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, prefix + ".onnx")

    first = feeds[0]
    np.concatenate([first[s.name].astype("<f4").ravel() for s in float_interp.inputs]) \
        .tofile(prefix + ".input.bin")
    reference = output_flat(Interpreter(model), first)
    reference.tofile(prefix + ".output.bin")
    error = normwise(reference, output_flat(Interpreter(original), first))
    noise = normwise(reference, output_flat(Interpreter(model, torch.float64), first))
    with open(prefix + ".ref.txt", "w") as f:
        f.write("float_vs_fake_quant_error %.3e\n" % error)
        f.write("fake_quant_float32_vs_float64 %.3e\n" % noise)
    print("%s: %d calibration inputs, %d batch norms folded, %d weights int8, %d tensors "
          "quantized; float vs fake-quant %.3e, fake-quant float32 vs float64 %.3e"
          % (prefix + ".onnx", len(feeds), folded, writer.weights, len(writer.params), error, noise))
    return 0


if __name__ == "__main__":
    sys.exit(main())
