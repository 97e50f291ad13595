#!/usr/bin/env python3
"""onnx_torch.py - a small ONNX interpreter on PyTorch (torch.nn.functional), in float32 or
float64, for the zoo's classification models at opsets 13-17 and their QDQ forms.

Why: tools/quantize.py needs every intermediate tensor of a float model (calibration) and a
reference output for a QDQ model that is not ONNX Runtime's own: the QDQ model run in float as
"fake-quantized PyTorch" (each QuantizeLinear -> DequantizeLinear pair rounds a float tensor
to its integer grid and back), which is what fuse.h and ORT are both compared against.

Usage (from the repository root, with Debian's /usr/bin/python3):

    /usr/bin/python3 tools/onnx_torch.py MODEL.onnx --input X.bin [--output Y.bin]
                                         [--expect REF.bin] [--float64]

runs MODEL on X.bin (raw float32 little-endian, the inputs one after another in graph order),
writes the outputs (concatenated in graph order) to Y.bin and prints their normwise distance
||y - ref|| / ||ref|| from REF.bin. From Python:

    from onnx_torch import Interpreter
    outs = Interpreter(onnx.load(path)).run({"input": x})                 # graph outputs
    every = Interpreter(model, torch.float64).run(feeds, keep_all=True)  # every tensor

QUANTIZATION, as ONNX specifies it (and ONNX Runtime computes it):
    QuantizeLinear    q = saturate(round_half_to_even(x / scale) + zero_point), per tensor or
                      per axis; the output type is the zero point's (uint8 when absent).
                      x / scale is a division, as ORT's MLAS kernel does: PyTorch's
                      fake_quantize_* multiply by 1 / scale instead, which can land one step
                      away at a rounding tie.
    DequantizeLinear  x = (q - zero_point) * scale, the difference taken in integers (an int32
                      bias exactly) and then converted, as ORT does.
"""
import argparse
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

torch.set_num_threads(1)

INT_RANGES = {torch.uint8: (0, 255), torch.int8: (-128, 127),
              torch.int32: (-2 ** 31, 2 ** 31 - 1)}


def to_torch(array, dtype):
    """An ONNX tensor's values: floats in the interpreter's dtype, integers as they are."""
    t = torch.from_numpy(np.array(array, copy=True))
    return t.to(dtype) if t.is_floating_point() else t


def attributes(node):
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def normwise(a, b):
    """||a - b|| / ||b||, in float64."""
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


# ------------------------------------------------------------------ padding and pools
def explicit_pads(a, spatial, kernel, strides, dilations):
    """(begins, ends) of each spatial axis from `pads` or `auto_pad`."""
    n = len(kernel)
    mode = a.get("auto_pad", "NOTSET")
    if mode in ("NOTSET", "VALID"):
        pads = list(a.get("pads", [0] * 2 * n)) if mode == "NOTSET" else [0] * 2 * n
        return pads[:n], pads[n:]
    begins, ends = [], []
    for i in range(n):  # SAME_*: the output is ceil(in / stride)
        out = -(-spatial[i] // strides[i])
        total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - spatial[i])
        small, big = total // 2, total - total // 2
        begins.append(small if mode == "SAME_UPPER" else big)
        ends.append(big if mode == "SAME_UPPER" else small)
    return begins, ends


def torch_pad_list(begins, ends):
    """F.pad's order: last axis first, (begin, end) each."""
    out = []
    for b, e in zip(reversed(begins), reversed(ends)):
        out += [b, e]
    return out


def as_2d_pool(x, kernel, strides, pads):
    """1-D pools run as 2-D ones over a height of 1 (avg_pool1d has no divisor_override)."""
    if len(kernel) != 1:
        return x, kernel, strides, pads, False
    return (x.unsqueeze(2), [1] + kernel, [1] + strides,
            ([0] + pads[0], [0] + pads[1]), True)


def op_conv(a, x, w, b=None):
    kernel = list(w.shape[2:])
    n = len(kernel)
    strides = list(a.get("strides", [1] * n))
    dilations = list(a.get("dilations", [1] * n))
    begins, ends = explicit_pads(a, x.shape[2:], kernel, strides, dilations)
    if begins != ends:
        x = F.pad(x, torch_pad_list(begins, ends))
        begins = [0] * n
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    return conv(x, w, b, strides, begins, dilations, a.get("group", 1))


def op_max_pool(a, x):
    kernel = list(a["kernel_shape"])
    n = len(kernel)
    strides = list(a.get("strides", [1] * n))
    dilations = list(a.get("dilations", [1] * n))
    pads = explicit_pads(a, x.shape[2:], kernel, strides, dilations)
    x = F.pad(x, torch_pad_list(*pads), value=float("-inf"))
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[n]
    return pool(x, kernel, strides, 0, dilations, ceil_mode=bool(a.get("ceil_mode", 0)))


def op_average_pool(a, x):
    """Sum over the window divided by the count of what it covers: the input, and the padding
    too with count_include_pad."""
    kernel = list(a["kernel_shape"])
    strides = list(a.get("strides", [1] * len(kernel)))
    pads = explicit_pads(a, x.shape[2:], kernel, strides, [1] * len(kernel))
    x, kernel, strides, pads, squeezed = as_2d_pool(x, kernel, strides, pads)
    pool = F.avg_pool2d if len(kernel) == 2 else F.avg_pool3d
    ceil = bool(a.get("ceil_mode", 0))
    covered = torch.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype)
    covered = F.pad(covered, torch_pad_list(*pads), value=float(a.get("count_include_pad", 0) != 0))
    total = pool(F.pad(x, torch_pad_list(*pads)), kernel, strides, 0, ceil, divisor_override=1)
    y = total / pool(covered, kernel, strides, 0, ceil, divisor_override=1)
    return y.squeeze(2) if squeezed else y


# ------------------------------------------------------------------ quantization
def axis_view(t, rank, axis):
    """A per-axis scale or zero point shaped to broadcast along `axis` of a rank-`rank` tensor."""
    if t.dim() == 0:
        return t
    shape = [1] * rank
    shape[axis % rank] = t.numel()
    return t.reshape(shape)


def op_quantize_linear(a, x, scale, zero_point=None):
    zero_point = zero_point if zero_point is not None else torch.zeros((), dtype=torch.uint8)
    axis = a.get("axis", 1)
    s = axis_view(scale, x.dim(), axis)
    z = axis_view(zero_point, x.dim(), axis).to(x.dtype)
    lo, hi = INT_RANGES[zero_point.dtype]
    return torch.clamp(torch.round(x / s) + z, lo, hi).to(zero_point.dtype)


def op_dequantize_linear(a, q, scale, zero_point=None):
    axis = a.get("axis", 1)
    s = axis_view(scale, q.dim(), axis)
    diff = q.to(torch.int64)
    if zero_point is not None:
        diff = diff - axis_view(zero_point, q.dim(), axis).to(torch.int64)
    return diff.to(scale.dtype) * s


# ------------------------------------------------------------------ shapes
def axes_of(a, given):
    """`axes` from the input (newer opsets) or the attribute (older), or None."""
    if given is not None:
        return [int(v) for v in given.tolist()]
    return list(a["axes"]) if "axes" in a else None


def op_reshape(a, x, shape):
    dims = [int(d) for d in shape.tolist()]
    if not a.get("allowzero", 0):
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return x.reshape(dims)


def op_slice(a, x, starts=None, ends=None, axes=None, steps=None):
    if starts is None:  # opset < 10: attributes
        starts, ends, axes = a["starts"], a["ends"], a.get("axes")
    else:
        starts, ends = starts.tolist(), ends.tolist()
        axes = axes.tolist() if axes is not None else None
        steps = steps.tolist() if steps is not None else None
    axes = axes if axes is not None else list(range(len(starts)))
    steps = steps if steps is not None else [1] * len(starts)
    for s, e, ax, st in zip(starts, ends, axes, steps):
        index = range(x.shape[ax])[slice(int(s), int(e), int(st))]  # ONNX clamps as Python does
        x = torch.index_select(x, ax, torch.tensor(index, dtype=torch.long))
    return x


def op_gather(a, x, indices):
    axis = a.get("axis", 0) % x.dim()
    idx = indices.to(torch.int64) % x.shape[axis]
    y = torch.index_select(x, axis, idx.reshape(-1))
    return y.reshape(tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1:]))


def op_split(a, x, split=None):
    axis = a.get("axis", 0)
    sizes = split.tolist() if split is not None else a.get("split")
    count = a.get("num_outputs", a["_outputs"])
    if sizes is None:
        size = -(-x.shape[axis] // count)
        sizes = [min(size, x.shape[axis] - i * size) for i in range(count)]
    return list(torch.split(x, [int(s) for s in sizes], dim=axis))


def op_resize(a, x, roi=None, scales=None, sizes=None):
    """Nearest-neighbour Resize: each output index mapped back to an input index by ONNX's
    coordinate transformation and nearest mode, then gathered."""
    if a.get("mode", "nearest") != "nearest":
        raise NotImplementedError("Resize mode %s (only nearest)" % a.get("mode"))
    if sizes is not None and sizes.numel():
        out_dims = [int(v) for v in sizes.tolist()]
        factors = [o / i for o, i in zip(out_dims, x.shape)]
    else:
        factors = [float(v) for v in scales.tolist()]
        out_dims = [int(np.floor(i * f)) for i, f in zip(x.shape, factors)]
    transform = a.get("coordinate_transformation_mode", "half_pixel")
    nearest = a.get("nearest_mode", "round_prefer_floor")
    for axis, (n_in, n_out, f) in enumerate(zip(x.shape, out_dims, factors)):
        if n_in == n_out:
            continue
        o = np.arange(n_out, dtype=np.float64)
        if transform == "asymmetric":
            c = o / f
        elif transform == "align_corners":
            c = o * (n_in - 1) / max(n_out - 1, 1)
        elif transform == "pytorch_half_pixel" and n_out == 1:
            c = np.zeros_like(o)
        elif transform in ("half_pixel", "pytorch_half_pixel"):
            c = (o + 0.5) / f - 0.5
        else:
            raise NotImplementedError("Resize coordinate_transformation_mode " + transform)
        if nearest == "floor":
            i = np.floor(c)
        elif nearest == "ceil":
            i = np.ceil(c)
        elif nearest == "round_prefer_ceil":
            i = np.floor(c + 0.5)
        else:
            i = np.ceil(c - 0.5)
        index = torch.from_numpy(np.clip(i, 0, n_in - 1).astype(np.int64))
        x = torch.index_select(x, axis, index)
    return x


def op_softmax(a, x):
    axis = a.get("axis", -1 if a["_opset"] >= 13 else 1)
    if a["_opset"] >= 13:
        return torch.softmax(x, axis)
    flat = x.reshape(int(np.prod(x.shape[:axis])), -1)  # older opsets: coerced to 2-D
    return torch.softmax(flat, 1).reshape(x.shape)


def op_pad(a, x, pads=None, value=None, axes=None):
    pads = pads.tolist() if pads is not None else list(a["pads"])
    n = len(pads) // 2
    axes = [int(v) % x.dim() for v in axes.tolist()] if axes is not None else list(range(n))
    begins, ends = [0] * x.dim(), [0] * x.dim()
    for k, ax in enumerate(axes):
        begins[ax], ends[ax] = int(pads[k]), int(pads[n + k])
    mode = a.get("mode", "constant")
    fill = float(value.item()) if value is not None and value.numel() else a.get("value", 0.0)
    torch_mode = {"constant": "constant", "reflect": "reflect", "edge": "replicate"}[mode]
    if mode == "constant":
        return F.pad(x, torch_pad_list(begins, ends), value=fill)
    first = next(i for i in range(x.dim()) if begins[i] or ends[i])  # torch pads trailing axes
    return F.pad(x, torch_pad_list(begins[first:], ends[first:]), mode=torch_mode)


def op_clip(a, x, lo=None, hi=None):
    lo = lo.item() if lo is not None else a.get("min")
    hi = hi.item() if hi is not None else a.get("max")
    return torch.clamp(x, lo, hi)


def op_gemm(a, x, w, c=None):
    x = x.t() if a.get("transA", 0) else x
    w = w.t() if a.get("transB", 0) else w
    y = a.get("alpha", 1.0) * (x @ w)
    return y if c is None else y + a.get("beta", 1.0) * c


def op_reduce_mean(a, x, axes=None):
    axes = axes_of(a, axes)
    if axes is None:
        axes = list(range(x.dim()))
    return torch.mean(x, dim=axes, keepdim=bool(a.get("keepdims", 1)))


def op_squeeze(a, x, axes=None):
    axes = axes_of(a, axes)
    if axes is None:
        return x.reshape([d for d in x.shape if d != 1])
    axes = [ax % x.dim() for ax in axes]
    return x.reshape([d for i, d in enumerate(x.shape) if i not in axes])


def op_unsqueeze(a, x, axes=None):
    axes = axes_of(a, axes)
    for ax in sorted(ax % (x.dim() + len(axes)) for ax in axes):
        x = x.unsqueeze(ax)
    return x


def op_binary(fn):
    def run(a, x, y):
        if not x.is_floating_point() and fn is torch.div:  # integer Div truncates
            return torch.div(x, y, rounding_mode="trunc")
        return fn(x, y)
    return run


def op_constant(a, dtype):
    if "value" in a:
        return to_torch(numpy_helper.to_array(a["value"]), dtype)
    for key, kind in (("value_float", dtype), ("value_floats", dtype),
                      ("value_int", torch.int64), ("value_ints", torch.int64)):
        if key in a:
            return torch.tensor(a[key], dtype=kind)
    raise NotImplementedError("Constant without a value")


def op_flatten(a, x):
    axis = a.get("axis", 1) % (x.dim() + 1)
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


def op_shape(a, x):
    dims = list(x.shape)[a.get("start", 0):a.get("end", None)]
    return torch.tensor(dims, dtype=torch.int64)


def op_batch_norm(a, x, scale, bias, mean, var):
    view = [1, -1] + [1] * (x.dim() - 2)
    inv = scale / torch.sqrt(var + a.get("epsilon", 1e-5))
    return (x - mean.reshape(view)) * inv.reshape(view) + bias.reshape(view)


def op_layer_norm(a, x, scale, bias=None):
    axis = a.get("axis", -1) % x.dim()
    return F.layer_norm(x, x.shape[axis:], scale, bias, a.get("epsilon", 1e-5))


def hard_sigmoid(x, alpha, beta):
    return torch.clamp(x * alpha + beta, 0.0, 1.0)


# op_type -> f(attributes, *inputs) returning a tensor or a list of them; an omitted optional
# input is None. The attributes also hold _opset (the model's) and _outputs (the node's count).
OPS = {
    "Conv": op_conv,
    "MaxPool": op_max_pool,
    "AveragePool": op_average_pool,
    "GlobalAveragePool": lambda a, x: torch.mean(x, dim=list(range(2, x.dim())), keepdim=True),
    "Relu": lambda a, x: torch.relu(x),
    "Clip": op_clip,
    "Sigmoid": lambda a, x: torch.sigmoid(x),
    "HardSigmoid": lambda a, x: hard_sigmoid(x, a.get("alpha", 0.2), a.get("beta", 0.5)),
    "HardSwish": lambda a, x: x * hard_sigmoid(x, 1.0 / 6.0, 0.5),  # ONNX's definition
    "Erf": lambda a, x: torch.erf(x),
    "Sqrt": lambda a, x: torch.sqrt(x),
    "Pow": lambda a, x, y: torch.pow(x, y),
    "Add": op_binary(torch.add),
    "Sub": op_binary(torch.sub),
    "Mul": op_binary(torch.mul),
    "Div": op_binary(torch.div),
    "Flatten": op_flatten,
    "Gemm": op_gemm,
    "MatMul": lambda a, x, y: torch.matmul(x, y),
    "Concat": lambda a, *xs: torch.cat(xs, dim=a["axis"]),
    "Reshape": op_reshape,
    "Transpose": lambda a, x: x.permute(a.get("perm", list(range(x.dim()))[::-1])),
    "Shape": op_shape,
    "Gather": op_gather,
    "Unsqueeze": op_unsqueeze,
    "Squeeze": op_squeeze,
    "Slice": op_slice,
    "ReduceMean": op_reduce_mean,
    "Identity": lambda a, x: x,
    "Dropout": lambda a, x, *rest: x,
    "Resize": op_resize,
    "BatchNormalization": op_batch_norm,
    "LayerNormalization": op_layer_norm,
    "Split": op_split,
    "Softmax": op_softmax,
    "Pad": op_pad,
    "QuantizeLinear": op_quantize_linear,
    "DequantizeLinear": op_dequantize_linear,
}


class Interpreter:
    """Runs one ONNX model's main graph node by node, in the order the file lists them (ONNX
    requires a topological order). Float initializers and inputs are cast to `dtype`."""

    def __init__(self, model, dtype=torch.float32):
        self.model = model
        self.dtype = dtype
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
        self.initializers = {t.name: to_torch(numpy_helper.to_array(t), dtype)
                             for t in model.graph.initializer}
        self.inputs = [i for i in model.graph.input if i.name not in self.initializers]
        self.outputs = [o.name for o in model.graph.output]
        last = {}
        for k, node in enumerate(model.graph.node):
            for name in node.input:
                last[name] = k
        self.last_use = last

    def input_shapes(self):
        """Each graph input's dims (a symbolic dimension taken as 1)."""
        return [[d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim]
                for i in self.inputs]

    def run(self, feeds, keep_all=False):
        """feeds: input name -> tensor or array. Returns name -> tensor: the graph outputs, or
        with keep_all every value the graph computes (inputs and initializers included)."""
        values = dict(self.initializers)
        for name, x in feeds.items():
            values[name] = to_torch(x, self.dtype) if not torch.is_tensor(x) else (
                x.to(self.dtype) if x.is_floating_point() else x)
        keep = set(self.outputs)
        with torch.no_grad():
            for k, node in enumerate(self.model.graph.node):
                args = [values[n] if n else None for n in node.input]
                outs = self.run_node(node, args)
                for name, y in zip(node.output, outs):
                    if name:
                        values[name] = y
                if not keep_all:
                    for name in set(node.input):
                        if name and self.last_use.get(name) == k and name not in keep \
                                and name not in self.initializers:
                            del values[name]
        return values if keep_all else {n: values[n] for n in self.outputs}

    def run_node(self, node, args):
        a = attributes(node)
        a["_opset"], a["_outputs"] = self.opset, len(node.output)
        try:
            if node.op_type == "Constant":
                return [op_constant(a, self.dtype)]
            if node.op_type not in OPS:
                raise NotImplementedError("no implementation of " + node.op_type)
            y = OPS[node.op_type](a, *args)
        except Exception as e:
            raise RuntimeError("onnx_torch: %s node %r: %s" % (node.op_type, node.name, e)) from e
        return y if isinstance(y, list) else [y]


def read_inputs(interp, path):
    """The graph inputs from one raw float32 file, one after another in graph order."""
    flat = np.fromfile(path, dtype="<f4")
    feeds, at = {}, 0
    for spec, shape in zip(interp.inputs, interp.input_shapes()):
        n = int(np.prod(shape))
        feeds[spec.name] = flat[at:at + n].reshape(shape)
        at += n
    if at != flat.size:
        raise ValueError("%s has %d floats, the inputs take %d" % (path, flat.size, at))
    return feeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--input", required=True, help="raw float32 inputs")
    ap.add_argument("--output", help="write the outputs here, raw float32")
    ap.add_argument("--expect", help="print the outputs' normwise distance from this file")
    ap.add_argument("--float64", action="store_true", help="compute in float64")
    args = ap.parse_args()
    interp = Interpreter(onnx.load(args.model), torch.float64 if args.float64 else torch.float32)
    outs = interp.run(read_inputs(interp, args.input))
    flat = np.concatenate([outs[n].numpy().astype("<f4").ravel() for n in interp.outputs])
    if args.output:
        flat.tofile(args.output)
    if args.expect:
        print("normwise_error %.3e" % normwise(flat, np.fromfile(args.expect, dtype="<f4")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
