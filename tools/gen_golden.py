#!/usr/bin/env python3
"""gen_golden.py - golden data for tests/test_golden.c, computed with PyTorch.

Usage (from the repository root):

    /usr/bin/python3 tools/gen_golden.py [out_dir]       # default out_dir: tests/data

Deterministic: data comes from numpy RandomState seeded by the case name (crc32), the
randomized cases' shapes and attributes from one fixed seed, so running it twice writes the
same bytes. Needs numpy and torch (tested with Debian's torch 1.13).

FILE FORMAT - one case per file, tests/data/<case>.golden

    # <case>: <one-line description>          <- a comment line (part of the text)
    graph(%x: [1, 3, 8, 8]) {                 <- fuse.h's text form, exactly as fuse_graph_parse
      %w: [4, 3, 3, 3] = const                   reads it: ops carry no shape annotations,
      %0 = conv2d(%x, %w, strides=[1, 1], ...)   unnamed ops are labelled %0, %1, ... (local
      return %0                                  labels), scalars appear inline as numbers,
    }                                            constants of <= 4 elements may carry their
    %%                                           values inline (`const{0.5, -1}`)
    <binary records until the end of the file>

The text part ends with "}\n"; the line "%%\n" follows; then binary records, all
little-endian, one after another:

    u8   kind          'C' constant, 'I' input, 'O' output
    u32  name_len      then name_len bytes of name (UTF-8, no terminator)
    u32  rank          then rank x i64 dims
    u64  count         element count (product of dims; 1 for rank 0)
    f32  data[count]

- 'C' records: every named constant of the text whose values are not inline, by its raw
  name (without '%' or quotes); the test fills it with fuse_graph_set_constant.
- 'I' records: the graph inputs in header order (fuse_input order), by raw name.
- 'O' records: the expected outputs in `return` order; the name is the label used in the
  text (informational only).

Inputs and constants are drawn in float32; the reference outputs are computed by PyTorch in
float64 from those float32 values and rounded to float32 only when stored, so the reference
is not limited by float32 rounding. Where PyTorch cannot express fuse.h's semantics
directly (asymmetric padding, the ceil-mode rule with asymmetric padding, the avg-pool
divisors), the reference is written out explicitly below (ref_max_pool2d, ref_avg_pool2d)
and cross-checked against torch on the configurations torch does support.
"""
import math
import os
import re
import struct
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")


def fmt_name(name):
    if IDENT.match(name):
        return "%" + name
    return '%"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fmt_num(v):
    v = np.float32(v)
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = str(v)  # numpy: shortest repr that reads back to the same float32
    if s.endswith(".0"):
        s = s[:-2]
    return s


def fmt_ints(xs):
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


def f64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


# ------------------------------------------------------------------ references
def pool_out_size(size, k, s, d, pad_begin, pad_end, ceil_mode):
    """fuse.h / PyTorch output size, generalized to asymmetric padding."""
    eff = d * (k - 1) + 1
    num = size + pad_begin + pad_end - eff
    assert num >= 0, "window larger than the padded input"
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s - pad_begin >= size:
        out -= 1  # the last window must start inside the input or its top/left padding
    return out


def ref_max_pool2d(x, k, s, p, d, ceil_mode):
    x = x.numpy()
    n, c, h, w = x.shape
    oh = pool_out_size(h, k[0], s[0], d[0], p[0], p[2], ceil_mode)
    ow = pool_out_size(w, k[1], s[1], d[1], p[1], p[3], ceil_mode)
    y = np.empty((n, c, oh, ow))
    for i in range(oh):
        rows = [i * s[0] - p[0] + t * d[0] for t in range(k[0])]
        rows = [r for r in rows if 0 <= r < h]
        for j in range(ow):
            cols = [j * s[1] - p[1] + t * d[1] for t in range(k[1])]
            cols = [q for q in cols if 0 <= q < w]
            if not rows or not cols:
                raise ValueError("empty pooling window")
            y[:, :, i, j] = x[:, :, rows][:, :, :, cols].max(axis=(2, 3))
    return torch.from_numpy(y)


def ref_avg_pool2d(x, k, s, p, ceil_mode, count_include_pad):
    """count_include_pad=1: divide by the window clipped to the padded input (PyTorch);
    0: divide by the number of real input cells in the window."""
    x = x.numpy()
    n, c, h, w = x.shape
    oh = pool_out_size(h, k[0], s[0], 1, p[0], p[2], ceil_mode)
    ow = pool_out_size(w, k[1], s[1], 1, p[1], p[3], ceil_mode)
    y = np.empty((n, c, oh, ow))
    for i in range(oh):
        hs = i * s[0] - p[0]
        he = min(hs + k[0], h + p[2])
        hs0, he0 = max(hs, 0), min(he, h)
        for j in range(ow):
            ws = j * s[1] - p[1]
            we = min(ws + k[1], w + p[3])
            ws0, we0 = max(ws, 0), min(we, w)
            if he0 <= hs0 or we0 <= ws0:
                raise ValueError("empty pooling window")
            div = (he - hs) * (we - ws) if count_include_pad else (he0 - hs0) * (we0 - ws0)
            y[:, :, i, j] = x[:, :, hs0:he0, ws0:we0].sum(axis=(2, 3)) / div
    return torch.from_numpy(y)


def torch_can_pool(k, s, p, ceil_mode):
    return p[0] == p[2] and p[1] == p[3] and p[0] <= k[0] // 2 and p[1] <= k[1] // 2


def ref_conv2d(x, w, s, p, d, g):
    t, l, b, r = p
    return F.conv2d(F.pad(x, (l, r, t, b)), w, stride=tuple(s), dilation=tuple(d), groups=g)


def ref_flatten(x, axis):
    r = x.dim()
    if axis < 0:
        axis += r
    a = int(np.prod(x.shape[:axis], dtype=np.int64)) if axis > 0 else 1
    return x.reshape(a, x.numel() // a)


def ref_batch_norm(x, scale, bias, mean, var, eps):
    shp = [1, x.shape[1]] + [1] * (x.dim() - 2)
    r = lambda t: t.reshape(shp)
    return (x - r(mean)) / torch.sqrt(r(var) + float(np.float32(eps))) * r(scale) + r(bias)


# ------------------------------------------------------------------ case builder
class Case:
    def __init__(self, name, desc):
        self.name, self.desc = name, desc
        self.rng = np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)
        self.inputs, self.consts, self.body, self.outs = [], [], [], []
        self.val = {}
        self.nops = 0

    # data
    def rand(self, shape, lo=-1.0, hi=1.0):
        return self.rng.uniform(lo, hi, size=tuple(shape)).astype(np.float32)

    def _array(self, shape_or_data, lo, hi):
        if isinstance(shape_or_data, np.ndarray):
            return shape_or_data.astype(np.float32)
        return self.rand(shape_or_data, lo, hi)

    def input(self, name, shape_or_data, lo=-1.0, hi=1.0):
        a = self._array(shape_or_data, lo, hi)
        label = fmt_name(name)
        assert label not in self.val
        self.inputs.append((name, a))
        self.val[label] = f64(a)
        return label

    def const(self, name, shape_or_data, lo=-1.0, hi=1.0, inline=False):
        a = self._array(shape_or_data, lo, hi)
        label = fmt_name(name)
        assert label not in self.val
        line = "%s: %s = const" % (label, fmt_ints(a.shape))
        if inline:
            assert a.size <= 4
            line += "{" + ", ".join(fmt_num(v) for v in a.reshape(-1)) + "}"
        self.body.append(line)
        self.consts.append((name, a, inline))
        self.val[label] = f64(a)
        return label

    def T(self, o):
        if isinstance(o, str):
            return self.val[o]
        return torch.tensor(float(np.float32(o)), dtype=torch.float64)

    def emit(self, op, operands, attrs, value):
        label = "%%%d" % self.nops
        self.nops += 1
        args = [o if isinstance(o, str) else fmt_num(o) for o in operands] + attrs
        self.body.append("%s = %s(%s)" % (label, op, ", ".join(args)))
        self.val[label] = value
        return label

    def output(self, *labels):
        self.outs.extend(labels)

    # ops; an attribute passed as None is left out of the text (its default applies)
    def conv2d(self, x, w, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1,
               omit=()):
        y = ref_conv2d(self.T(x), self.T(w), strides, padding, dilation, groups)
        attrs = []
        if "strides" not in omit:
            attrs.append("strides=" + fmt_ints(strides))
        if "padding" not in omit:
            attrs.append("padding=" + fmt_ints(padding))
        if "dilation" not in omit:
            attrs.append("dilation=" + fmt_ints(dilation))
        if "groups" not in omit:
            attrs.append("groups=%d" % groups)
        return self.emit("conv2d", [x, w], attrs, y)

    def matmul(self, a, b):
        return self.emit("matmul", [a, b], [], torch.matmul(self.T(a), self.T(b)))

    def binary(self, op, a, b):
        fn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
              "maximum": torch.maximum, "minimum": torch.minimum}[op]
        return self.emit(op, [a, b], [], fn(self.T(a), self.T(b)))

    def add(self, a, b): return self.binary("add", a, b)
    def sub(self, a, b): return self.binary("sub", a, b)
    def mul(self, a, b): return self.binary("mul", a, b)
    def maximum(self, a, b): return self.binary("maximum", a, b)
    def minimum(self, a, b): return self.binary("minimum", a, b)

    def relu(self, x):
        return self.emit("relu", [x], [], torch.clamp(self.T(x), min=0.0))

    def clip(self, x, lo, hi):
        lo32, hi32 = float(np.float32(lo)), float(np.float32(hi))
        y = torch.minimum(torch.maximum(self.T(x), torch.tensor(lo32, dtype=torch.float64)),
                          torch.tensor(hi32, dtype=torch.float64))
        return self.emit("clip", [x], ["lo=" + fmt_num(lo), "hi=" + fmt_num(hi)], y)

    def sigmoid(self, x):
        return self.emit("sigmoid", [x], [], torch.sigmoid(self.T(x)))

    def reshape(self, x, shape):
        return self.emit("reshape", [x], ["shape=" + fmt_ints(shape)],
                         self.T(x).reshape(tuple(shape)))

    def flatten(self, x, axis):
        return self.emit("flatten", [x], ["axis=%d" % axis], ref_flatten(self.T(x), axis))

    def concat(self, xs, axis):
        return self.emit("concat", list(xs), ["axis=%d" % axis],
                         torch.cat([self.T(v) for v in xs], dim=axis))

    def softmax(self, x, axis):
        return self.emit("softmax", [x], ["axis=%d" % axis], torch.softmax(self.T(x), dim=axis))

    def batch_norm(self, x, scale, bias, mean, var, eps):
        y = ref_batch_norm(self.T(x), self.T(scale), self.T(bias), self.T(mean), self.T(var), eps)
        return self.emit("batch_norm", [x, scale, bias, mean, var], ["eps=" + fmt_num(eps)], y)

    def max_pool2d(self, x, kernel, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
                   ceil_mode=0, omit=()):
        xv = self.T(x)
        y = ref_max_pool2d(xv, kernel, strides, padding, dilation, ceil_mode)
        if torch_can_pool(kernel, strides, padding, ceil_mode):
            t = F.max_pool2d(xv, tuple(kernel), tuple(strides), (padding[0], padding[1]),
                             tuple(dilation), ceil_mode=bool(ceil_mode))
            assert t.shape == y.shape and torch.allclose(t, y), "max_pool2d reference"
        attrs = ["kernel=" + fmt_ints(kernel)]
        for key, v in (("strides", strides), ("padding", padding), ("dilation", dilation)):
            if key not in omit:
                attrs.append(key + "=" + fmt_ints(v))
        if "ceil_mode" not in omit:
            attrs.append("ceil_mode=%d" % ceil_mode)
        return self.emit("max_pool2d", [x], attrs, y)

    def avg_pool2d(self, x, kernel, strides=(1, 1), padding=(0, 0, 0, 0), ceil_mode=0,
                   count_include_pad=0, omit=()):
        xv = self.T(x)
        y = ref_avg_pool2d(xv, kernel, strides, padding, ceil_mode, count_include_pad)
        if torch_can_pool(kernel, strides, padding, ceil_mode):
            t = F.avg_pool2d(xv, tuple(kernel), tuple(strides), (padding[0], padding[1]),
                             ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad))
            assert t.shape == y.shape and torch.allclose(t, y), "avg_pool2d reference"
        attrs = ["kernel=" + fmt_ints(kernel)]
        for key, v in (("strides", strides), ("padding", padding)):
            if key not in omit:
                attrs.append(key + "=" + fmt_ints(v))
        if "ceil_mode" not in omit:
            attrs.append("ceil_mode=%d" % ceil_mode)
        if "count_include_pad" not in omit:
            attrs.append("count_include_pad=%d" % count_include_pad)
        return self.emit("avg_pool2d", [x], attrs, y)

    def global_avg_pool2d(self, x):
        xv = self.T(x)
        return self.emit("global_avg_pool2d", [x], [],
                         xv.mean(dim=tuple(range(2, xv.dim())), keepdim=True))

    # file
    def text(self):
        head = ", ".join("%s: %s" % (fmt_name(n), fmt_ints(a.shape)) for n, a in self.inputs)
        lines = ["# %s: %s" % (self.name, self.desc), "graph(%s) {" % head]
        lines += ["  " + l for l in self.body]
        lines.append("  return " + ", ".join(self.outs))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def encode(self):
        assert self.outs, self.name
        blob = bytearray(self.text().encode("utf-8"))
        blob += b"%%\n"

        def rec(kind, name, a):
            nb = name.encode("utf-8")
            a = np.array(a, dtype="<f4", order="C")  # keeps rank 0
            out = bytearray(kind)
            out += struct.pack("<I", len(nb)) + nb
            out += struct.pack("<I", a.ndim) + b"".join(struct.pack("<q", d) for d in a.shape)
            out += struct.pack("<Q", a.size) + a.tobytes()
            return out

        for name, a, inline in self.consts:
            if not inline:
                blob += rec(b"C", name, a)
        for name, a in self.inputs:
            blob += rec(b"I", name, a)
        for label in self.outs:
            v = self.val[label].numpy()
            assert np.all(np.isfinite(v)), (self.name, label)
            blob += rec(b"O", label, v.astype(np.float32))
        return bytes(blob)


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def new(name, desc):
    return Case(name, desc)


# ------------------------------------------------------------------ conv2d
def conv_case(name, desc, x, w, bias=False, **kw):
    c = new(name, desc)
    xi = c.input("x", x)
    wc = c.const("w", w, -0.5, 0.5)
    y = c.conv2d(xi, wc, **kw)
    if bias:
        b = c.const("b", [w[0]])
        y = c.add(y, c.reshape(b, [1, w[0], 1, 1]))
    c.output(y)
    return c


@case
def conv_cases():
    yield conv_case("conv2d_c3_k5_pad1", "3 -> 5 channels, 3x3, padding 1", [1, 3, 8, 8], [5, 3, 3, 3],
                    padding=(1, 1, 1, 1))
    yield conv_case("conv2d_c5_k7_stride2", "5 -> 7 channels, stride 2, odd sizes", [1, 5, 11, 9],
                    [7, 5, 3, 3], strides=(2, 2), padding=(1, 1, 1, 1))
    yield conv_case("conv2d_asym_pad", "asymmetric padding [t,l,b,r] = [0,2,1,0], stride [1,2]",
                    [1, 3, 7, 6], [4, 3, 3, 2], strides=(1, 2), padding=(0, 2, 1, 0))
    yield conv_case("conv2d_asym_pad2", "asymmetric padding [2,0,0,1], 5x5 kernel", [2, 3, 6, 7],
                    [5, 3, 5, 5], padding=(2, 0, 0, 1))
    yield conv_case("conv2d_dilation2", "dilation 2, padding 2", [1, 3, 9, 10], [5, 3, 3, 3],
                    padding=(2, 2, 2, 2), dilation=(2, 2))
    yield conv_case("conv2d_dilation_mixed", "dilation [2,1], stride [1,2], kernel 3x5",
                    [1, 4, 10, 11], [3, 4, 3, 5], strides=(1, 2), padding=(1, 2, 2, 1),
                    dilation=(2, 1))
    yield conv_case("conv2d_depthwise", "depthwise groups=7, stride 2, batch 2", [2, 7, 8, 8],
                    [7, 1, 3, 3], strides=(2, 2), padding=(1, 1, 1, 1), groups=7)
    yield conv_case("conv2d_depthwise_mult2", "groups=C=4 with 2 outputs per channel",
                    [1, 4, 6, 6], [8, 1, 3, 3], padding=(1, 1, 1, 1), groups=4)
    yield conv_case("conv2d_groups2", "groups=2, 6 -> 4 channels", [1, 6, 7, 7], [4, 3, 3, 3],
                    groups=2)
    yield conv_case("conv2d_groups3", "groups=3, 9 -> 6 channels, stride 2, asym padding, batch 2",
                    [2, 9, 6, 7], [6, 3, 3, 3], strides=(2, 2), padding=(1, 0, 0, 1), groups=3)
    yield conv_case("conv2d_batch2", "batch 2", [2, 3, 5, 5], [4, 3, 3, 3])
    yield conv_case("conv2d_1x1", "1x1 kernel, 5 -> 7", [2, 5, 6, 7], [7, 5, 1, 1])
    yield conv_case("conv2d_1x1_stride2", "1x1 kernel, stride 2 (skips cells)", [1, 6, 7, 8],
                    [5, 6, 1, 1], strides=(2, 2))
    yield conv_case("conv2d_1x1_input", "1x1 spatial input, 1x1 kernel", [1, 5, 1, 1], [7, 5, 1, 1])
    yield conv_case("conv2d_1x1_input_pad", "1x1 spatial input, 3x3 kernel, padding 1",
                    [2, 3, 1, 1], [4, 3, 3, 3], padding=(1, 1, 1, 1))
    yield conv_case("conv2d_kernel_gt_input", "5x5 kernel on a 3x3 input, padding 1",
                    [1, 2, 3, 3], [3, 2, 5, 5], padding=(1, 1, 1, 1))
    yield conv_case("conv2d_stride_gt_kernel", "2x2 kernel, stride 3", [1, 3, 10, 10],
                    [4, 3, 2, 2], strides=(3, 3))
    yield conv_case("conv2d_kernel_1x5", "non-square kernel 1x5", [1, 3, 6, 9], [4, 3, 1, 5],
                    padding=(0, 2, 0, 2))
    yield conv_case("conv2d_kernel_5x1", "non-square kernel 5x1, stride [2,1]", [1, 3, 9, 6],
                    [4, 3, 5, 1], strides=(2, 1), padding=(2, 0, 2, 0))
    yield conv_case("conv2d_attrs_omitted", "conv2d(%x, %w) with every attribute left out",
                    [1, 3, 6, 6], [4, 3, 3, 3],
                    omit=("strides", "padding", "dilation", "groups"))
    yield conv_case("conv2d_wide_channels", "17 -> 33 channels (SIMD tails)", [1, 17, 6, 6],
                    [33, 17, 3, 3], padding=(1, 1, 1, 1), bias=True)
    yield conv_case("conv2d_wide_row", "width 37 (SIMD tails)", [1, 3, 5, 37], [16, 3, 3, 3],
                    padding=(1, 1, 1, 1), bias=True)


# ------------------------------------------------------------------ matmul
@case
def matmul_cases():
    shapes = [
        ("matmul_1d_1d", "[7] x [7] -> []", [7], [7]),
        ("matmul_1d_2d", "[5] x [5,3] -> [3]", [5], [5, 3]),
        ("matmul_2d_1d", "[4,5] x [5] -> [4]", [4, 5], [5]),
        ("matmul_2d_2d", "[3,17] x [17,19]", [3, 17], [17, 19]),
        ("matmul_3d_2d", "batched [2,3,4] x [4,5]", [2, 3, 4], [4, 5]),
        ("matmul_2d_3d", "[3,4] x batched [2,4,5]", [3, 4], [2, 4, 5]),
        ("matmul_bcast_4d_3d", "broadcast batch [2,1,3,4] x [5,4,2]", [2, 1, 3, 4], [5, 4, 2]),
        ("matmul_1d_3d", "[4] x [3,4,2] -> [3,2]", [4], [3, 4, 2]),
        ("matmul_3d_1d", "[2,3,4] x [4] -> [2,3]", [2, 3, 4], [4]),
        ("matmul_1x1", "[1,1] x [1,1]", [1, 1], [1, 1]),
        ("matmul_bcast_both_4d", "both sides broadcast: [2,1,3,4] x [1,5,4,2]", [2, 1, 3, 4],
         [1, 5, 4, 2]),
    ]
    for name, desc, sa, sb in shapes:
        c = new(name, desc)
        a = c.input("a", sa)
        b = c.input("b", sb)
        c.output(c.matmul(a, b))
        yield c
    c = new("matmul_linear", "input x constant weight + bias (a dense layer)")
    x = c.input("x", [3, 10])
    w = c.const("w", [10, 6], -0.5, 0.5)
    b = c.const("b", [6])
    c.output(c.add(c.matmul(x, w), b))
    yield c
    c = new("matmul_bcast_clip", "broadcast matmul [2,1,3,4]x[5,4,2] + bias, clip [-0.25, 0.5]")
    a = c.input("a", [2, 1, 3, 4])
    w = c.const("w", [5, 4, 2])
    b = c.const("b", [2])
    c.output(c.clip(c.add(c.matmul(a, w), b), -0.25, 0.5))
    yield c


# ------------------------------------------------------------------ element-wise
@case
def elementwise_cases():
    c = new("binary_scalars", "inline number operands on either side")
    x = c.input("x", [2, 3, 5])
    c.output(c.add(x, 1.5), c.sub(2, x), c.mul(x, -0.75), c.maximum(x, 0.25),
             c.minimum(-0.25, x), c.sub(x, 0.5))
    yield c

    c = new("binary_bcast_c11", "[N,C,H,W] against a [C,1,1] constant, every binary op")
    x = c.input("x", [2, 3, 4, 5])
    k = c.const("k", [3, 1, 1])
    c.output(c.add(x, k), c.sub(k, x), c.mul(x, k), c.maximum(k, x), c.minimum(x, k))
    yield c

    c = new("binary_bcast_rows_cols", "[2,3,4,5] against [1,5], [4,1] and [5]")
    x = c.input("x", [2, 3, 4, 5])
    r = c.input("r", [1, 5])
    q = c.input("q", [4, 1])
    v = c.input("v", [5])
    c.output(c.add(x, r), c.sub(q, x), c.mul(v, x))
    yield c

    c = new("binary_bcast_both", "[3,1,5] and [1,4,1] both expand to [3,4,5]")
    a = c.input("a", [3, 1, 5])
    b = c.input("b", [1, 4, 1])
    c.output(c.add(a, b), c.sub(a, b), c.mul(b, a), c.maximum(a, b), c.minimum(b, a))
    yield c

    c = new("binary_rank0_input", "a rank-0 graph input broadcast against [2,3]")
    x = c.input("x", [2, 3])
    s = c.input("s", [])
    c.output(c.mul(x, s), c.sub(s, x))
    yield c

    c = new("binary_same_shape_tails", "same-shape ops on [1,7,9,11] (SIMD tails)")
    a = c.input("a", [1, 7, 9, 11])
    b = c.input("b", [1, 7, 9, 11])
    c.output(c.add(a, b), c.sub(a, b), c.mul(a, b), c.maximum(a, b), c.minimum(a, b))
    yield c

    c = new("binary_self", "an op whose two operands are one value: add(%x, %x), mul(%x, %x)")
    x = c.input("x", [4, 6])
    c.output(c.add(x, x), c.mul(x, x))
    yield c

    c = new("binary_named_scalar_consts", "named rank-0 constants, one inline, one filled")
    x = c.input("x", [3, 4])
    lo = c.const("lo", np.array(-0.5, dtype=np.float32), inline=True)
    hi = c.const("hi", np.array(0.625, dtype=np.float32))
    c.output(c.minimum(c.maximum(x, lo), hi))
    yield c

    c = new("relu", "relu on [2,3,5,7], some exact zeros")
    xd = c.rand([2, 3, 5, 7])
    xd.reshape(-1)[::7] = 0.0
    x = c.input("x", xd)
    c.output(c.relu(x))
    yield c

    c = new("clip_bounds", "clip with finite, -inf, inf and lo == hi bounds")
    x = c.input("x", [3, 33], -8, 8)
    c.output(c.clip(x, -0.5, 0.5), c.clip(x, -math.inf, 6), c.clip(x, 0, math.inf),
             c.clip(x, 0.3, 0.3), c.clip(x, -math.inf, math.inf))
    yield c

    c = new("sigmoid_large", "sigmoid of large magnitudes (exp overflow in float32)")
    xd = np.concatenate([np.array([0, 1, -1, 88, -88, 89, -89, 100, -100, 1000, -1000, 1e30, -1e30,
                                   15, -15, 20, -20], dtype=np.float32),
                         c.rand([47], -120, 120)]).reshape(4, 16)
    x = c.input("x", xd)
    c.output(c.sigmoid(x))
    yield c


# ------------------------------------------------------------------ shape ops
@case
def shape_cases():
    c = new("reshape_minus1", "reshape with -1 in different positions")
    x = c.input("x", [2, 3, 4])
    c.output(c.reshape(x, [4, -1]), c.reshape(x, [-1]), c.reshape(x, [1, -1, 2, 1]),
             c.reshape(x, [3, 8]))
    yield c

    c = new("reshape_to_rank0", "reshape [1,1] -> [] (rank 0) and back to [1]")
    x = c.input("x", [1, 1])
    r0 = c.reshape(x, [])
    c.output(r0, c.reshape(r0, [1]))
    yield c

    c = new("flatten_axes", "flatten axis 0, 1, 2, rank and negative on [2,3,4,5]")
    x = c.input("x", [2, 3, 4, 5])
    c.output(c.flatten(x, 0), c.flatten(x, 1), c.flatten(x, 2), c.flatten(x, 4),
             c.flatten(x, -1), c.flatten(x, -4))
    yield c

    c = new("concat_axis0", "concat [2,3] and [4,3] along axis 0")
    a = c.input("a", [2, 3])
    b = c.input("b", [4, 3])
    c.output(c.concat([a, b], 0))
    yield c

    c = new("concat_axis1_nchw", "concat channels [1,2,3,3] ++ [1,5,3,3]")
    a = c.input("a", [1, 2, 3, 3])
    b = c.input("b", [1, 5, 3, 3])
    c.output(c.concat([a, b], 1))
    yield c

    c = new("concat_negative_axis", "concat along axis -1 and -3")
    a = c.input("a", [2, 3, 4])
    b = c.input("b", [2, 3, 1])
    d = c.input("d", [5, 3, 4])
    c.output(c.concat([a, b], -1), c.concat([a, d], -3))
    yield c

    c = new("concat_same_value", "concat(%x, %x, %x) of one value, axis 0")
    x = c.input("x", [2, 3])
    c.output(c.concat([x, x, x], 0))
    yield c

    c = new("concat_three", "concat of 3 values (input, constant, op) along axis 2")
    a = c.input("a", [2, 3, 2, 4])
    k = c.const("k", [2, 3, 3, 4])
    b = c.input("b", [2, 3, 1, 4])
    c.output(c.concat([a, k, c.relu(b)], 2))
    yield c

    for name, desc, shape, axis, scale in [
        ("softmax_axis0", "softmax axis 0 of [3,5]", [3, 5], 0, 1),
        ("softmax_axis1", "softmax axis 1 of [2,3,4]", [2, 3, 4], 1, 1),
        ("softmax_last", "softmax axis 2 (last) of [2,3,19]", [2, 3, 19], 2, 1),
        ("softmax_negative", "softmax axis -1 of [2,3,4,5]", [2, 3, 4, 5], -1, 1),
        ("softmax_negative3", "softmax axis -3 of [2,3,4,5]", [2, 3, 4, 5], -3, 1),
        ("softmax_large", "softmax of values up to +-1000 (needs the max subtracted)", [4, 9], 1,
         1000),
        ("softmax_large_neg", "softmax of values around -1000 (all exp underflow naively)",
         [3, 7], -1, None),
        ("softmax_size1_axis", "softmax along an axis of size 1 -> all ones", [3, 1, 4], 1, 1),
        ("softmax_rank1", "softmax of a rank-1 tensor", [10], 0, 1),
    ]:
        c = new(name, desc)
        if scale is None:
            x = c.input("x", c.rand(shape, -1010, -990))
        else:
            x = c.input("x", c.rand(shape) * np.float32(scale))
        c.output(c.softmax(x, axis))
        yield c

    c = new("batch_norm_rank2", "batch_norm on [4,3] with inline const{...} parameters")
    x = c.input("x", [4, 3])
    s = c.const("scale", [3], 0.5, 1.5, inline=True)
    b = c.const("bias", [3], inline=True)
    m = c.const("mean", [3], -0.5, 0.5, inline=True)
    v = c.const("var", [3], 0.5, 2.0, inline=True)
    c.output(c.batch_norm(x, s, b, m, v, 1e-5))
    yield c

    c = new("batch_norm_c1", "batch_norm with one channel, const{v} parameters")
    x = c.input("x", [3, 1, 4, 4])
    s = c.const("scale", [1], 0.5, 1.5, inline=True)
    b = c.const("bias", [1], inline=True)
    m = c.const("mean", [1], -0.5, 0.5, inline=True)
    v = c.const("var", [1], 0.5, 2.0, inline=True)
    c.output(c.batch_norm(x, s, b, m, v, 1e-5))
    yield c

    for name, desc, shape, eps in [
        ("batch_norm_rank3", "batch_norm on [2,5,7], eps 1e-3", [2, 5, 7], 1e-3),
        ("batch_norm_rank4", "batch_norm on [2,5,4,3], eps 1e-5", [2, 5, 4, 3], 1e-5),
        ("batch_norm_eps0", "batch_norm on [1,6,3,3], eps 0", [1, 6, 3, 3], 0.0),
    ]:
        c = new(name, desc)
        C = shape[1]
        x = c.input("x", shape)
        s = c.const("scale", [C], 0.5, 1.5)
        b = c.const("bias", [C])
        m = c.const("mean", [C], -0.5, 0.5)
        v = c.const("var", [C], 0.1, 2.0)
        c.output(c.batch_norm(x, s, b, m, v, eps))
        yield c


# ------------------------------------------------------------------ pools
@case
def pool_cases():
    mp = [
        ("max_pool_k3_s2_p1", "kernel 3, stride 2, padding 1 (ResNet stem)", [1, 3, 9, 9],
         dict(kernel=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1))),
        ("max_pool_k2_s2", "kernel 2, stride 2, odd input", [2, 3, 7, 9],
         dict(kernel=(2, 2), strides=(2, 2))),
        ("max_pool_asym_pad", "asymmetric padding [0,1,1,0], kernel 2, stride 2", [1, 4, 6, 7],
         dict(kernel=(2, 2), strides=(2, 2), padding=(0, 1, 1, 0))),
        ("max_pool_asym_pad2", "asymmetric padding [2,0,1,2], kernel 3", [1, 2, 5, 6],
         dict(kernel=(3, 3), strides=(1, 1), padding=(2, 0, 1, 2))),
        ("max_pool_ceil", "ceil_mode, kernel 3, stride 2 on 8x8", [1, 3, 8, 8],
         dict(kernel=(3, 3), strides=(2, 2), ceil_mode=1)),
        ("max_pool_ceil_drop", "ceil_mode where the last window would start in the padding",
         [1, 2, 5, 5], dict(kernel=(2, 2), strides=(2, 2), padding=(1, 1, 1, 1), ceil_mode=1)),
        ("max_pool_ceil_asym", "ceil_mode with asymmetric padding [0,1,2,0]", [1, 2, 7, 6],
         dict(kernel=(3, 2), strides=(2, 2), padding=(0, 1, 2, 0), ceil_mode=1)),
        ("max_pool_dilation2", "dilation 2, kernel 3, padding 2", [1, 3, 9, 8],
         dict(kernel=(3, 3), strides=(1, 1), padding=(2, 2, 2, 2), dilation=(2, 2))),
        ("max_pool_dilation_ceil", "dilation [2,1], stride 2, ceil_mode", [2, 2, 10, 9],
         dict(kernel=(2, 3), strides=(2, 2), padding=(1, 1, 1, 1), dilation=(2, 1), ceil_mode=1)),
        ("max_pool_nonsquare", "kernel [2,3], stride [2,1]", [1, 3, 6, 7],
         dict(kernel=(2, 3), strides=(2, 1), padding=(0, 1, 0, 1))),
        ("max_pool_defaults", "kernel only, every other attribute left out", [1, 3, 5, 6],
         dict(kernel=(2, 2), omit=("strides", "padding", "dilation", "ceil_mode"))),
        ("max_pool_whole_input", "one window covering the whole input", [2, 3, 5, 7],
         dict(kernel=(5, 7), strides=(5, 7))),
        ("max_pool_negative", "all-negative input with padding (padded cells never win)",
         [1, 2, 6, 6], dict(kernel=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), ceil_mode=1),
         ),
    ]
    for name, desc, shape, kw in mp:
        c = new(name, desc)
        if name == "max_pool_negative":
            x = c.input("x", c.rand(shape, -5, -1))
        else:
            x = c.input("x", shape)
        c.output(c.max_pool2d(x, **kw))
        yield c

    ap = [
        ("avg_pool_k3_p1_incl", "kernel 3, padding 1, count_include_pad 1", [1, 3, 7, 7],
         dict(kernel=(3, 3), padding=(1, 1, 1, 1), count_include_pad=1)),
        ("avg_pool_k3_p1_excl", "kernel 3, padding 1, count_include_pad 0", [1, 3, 7, 7],
         dict(kernel=(3, 3), padding=(1, 1, 1, 1), count_include_pad=0)),
        ("avg_pool_k2_s2_ceil", "kernel 2, stride 2, ceil_mode on 7x7", [2, 3, 7, 7],
         dict(kernel=(2, 2), strides=(2, 2), ceil_mode=1)),
        ("avg_pool_ceil_pad_incl", "ceil_mode + padding, count_include_pad 1 (window clipped to "
         "the padded input)", [1, 2, 6, 6],
         dict(kernel=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), ceil_mode=1,
              count_include_pad=1)),
        ("avg_pool_ceil_pad_excl", "ceil_mode + padding, count_include_pad 0", [1, 2, 6, 6],
         dict(kernel=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), ceil_mode=1,
              count_include_pad=0)),
        ("avg_pool_asym_incl", "asymmetric padding [1,0,0,1], count_include_pad 1", [1, 3, 5, 6],
         dict(kernel=(2, 2), strides=(1, 1), padding=(1, 0, 0, 1), count_include_pad=1)),
        ("avg_pool_asym_excl", "asymmetric padding [1,0,0,1], count_include_pad 0", [1, 3, 5, 6],
         dict(kernel=(2, 2), strides=(1, 1), padding=(1, 0, 0, 1), count_include_pad=0)),
        ("avg_pool_asym_ceil_incl", "asymmetric padding [0,2,2,1], stride 2, ceil (last row "
         "dropped, last column clipped to the padded input), incl", [1, 2, 6, 9],
         dict(kernel=(3, 3), strides=(2, 2), padding=(0, 2, 2, 1), ceil_mode=1,
              count_include_pad=1)),
        ("avg_pool_nonsquare", "kernel [3,2], stride [2,3]", [1, 3, 8, 9],
         dict(kernel=(3, 2), strides=(2, 3), padding=(1, 0, 1, 0), count_include_pad=0)),
        ("avg_pool_k1_s2", "kernel 1, stride 2 (subsampling)", [1, 4, 7, 6],
         dict(kernel=(1, 1), strides=(2, 2))),
        ("avg_pool_defaults", "kernel only, other attributes left out", [2, 2, 5, 4],
         dict(kernel=(2, 3), omit=("strides", "padding", "ceil_mode", "count_include_pad"))),
    ]
    for name, desc, shape, kw in ap:
        c = new(name, desc)
        x = c.input("x", shape)
        c.output(c.avg_pool2d(x, **kw))
        yield c

    for name, desc, shape in [
        ("global_avg_pool_rank4", "global average pool [2,5,7,6]", [2, 5, 7, 6]),
        ("global_avg_pool_rank3", "global average pool of rank 3 [2,3,9] -> [2,3,1]", [2, 3, 9]),
        ("global_avg_pool_rank5", "global average pool of rank 5 [1,3,2,3,4]", [1, 3, 2, 3, 4]),
        ("global_avg_pool_1x1", "global average pool of [1,17,1,1]", [1, 17, 1, 1]),
        ("global_avg_pool_large", "global average pool over 31x33", [1, 3, 31, 33]),
    ]:
        c = new(name, desc)
        x = c.input("x", shape)
        c.output(c.global_avg_pool2d(x))
        yield c


# ------------------------------------------------------------------ chains
@case
def chain_cases():
    # Built again through the C builder API in tests/test_golden.c: keep the order of
    # inputs, constants and ops in step with build_seed_conv_bias_relu there.
    c = new("seed_conv_bias_relu", "the seed: conv2d -> reshape(bias) -> add -> relu")
    x = c.input("x", [1, 3, 8, 8])
    w = c.const("w", [4, 3, 3, 3], -0.5, 0.5)
    b = c.const("b", [4])
    y = c.conv2d(x, w, padding=(1, 1, 1, 1))
    y = c.add(y, c.reshape(b, [1, 4, 1, 1]))
    c.output(c.relu(y))
    yield c

    # Built again in C (build_grouped_conv_bias_relu6).
    c = new("grouped_conv_bias_relu6", "grouped conv (groups=3, stride 2, asym padding), [K,1,1] "
            "bias on the left, relu6 as maximum/minimum")
    x = c.input("x", [2, 9, 7, 6])
    w = c.const("w", [6, 3, 3, 3], -0.5, 0.5)
    b = c.const("b", [6, 1, 1])
    y = c.conv2d(x, w, strides=(2, 2), padding=(1, 0, 0, 1), groups=3)
    y = c.add(b, y)
    y = c.minimum(c.maximum(y, 0), 6)
    c.output(y)
    yield c

    # Built again in C (build_resnet_block).
    c = new("resnet_block", "conv-bn-relu-conv-bn + identity residual, relu")
    x = c.input("x", [1, 8, 6, 6])
    w1 = c.const("conv1.weight", [8, 8, 3, 3], -0.25, 0.25)
    s1 = c.const("bn1.weight", [8], 0.5, 1.5)
    b1 = c.const("bn1.bias", [8])
    m1 = c.const("bn1.running_mean", [8], -0.2, 0.2)
    v1 = c.const("bn1.running_var", [8], 0.5, 1.5)
    w2 = c.const("conv2.weight", [8, 8, 3, 3], -0.25, 0.25)
    s2 = c.const("bn2.weight", [8], 0.5, 1.5)
    b2 = c.const("bn2.bias", [8])
    m2 = c.const("bn2.running_mean", [8], -0.2, 0.2)
    v2 = c.const("bn2.running_var", [8], 0.5, 1.5)
    y = c.conv2d(x, w1, padding=(1, 1, 1, 1))
    y = c.relu(c.batch_norm(y, s1, b1, m1, v1, 1e-5))
    y = c.conv2d(y, w2, padding=(1, 1, 1, 1))
    y = c.batch_norm(y, s2, b2, m2, v2, 1e-5)
    c.output(c.relu(c.add(y, x)))
    yield c

    # Built again in C (build_matmul_clip).
    c = new("matmul_bias_clip_seed002", "seed 002: minimum(maximum(matmul + bias, lo), hi) with "
            "named scalar bounds")
    a = c.input("a", [2, 1, 3, 4])
    w = c.const("w", [5, 4, 7], -0.5, 0.5)
    b = c.const("b", [7])
    lo = c.const("lo", np.array(-0.125, dtype=np.float32), inline=True)
    hi = c.const("hi", np.array(0.375, dtype=np.float32), inline=True)
    y = c.add(c.matmul(a, w), b)
    c.output(c.minimum(c.maximum(y, lo), hi))
    yield c

    c = new("resnet_downsample", "stride-2 block with a 1x1 stride-2 projection shortcut")
    x = c.input("x", [1, 4, 9, 9])
    w1 = c.const("w1", [6, 4, 3, 3], -0.3, 0.3)
    b1 = c.const("b1", [6])
    w2 = c.const("w2", [6, 6, 3, 3], -0.3, 0.3)
    b2 = c.const("b2", [6])
    wp = c.const("wp", [6, 4, 1, 1], -0.5, 0.5)
    y = c.conv2d(x, w1, strides=(2, 2), padding=(1, 1, 1, 1))
    y = c.relu(c.add(y, c.reshape(b1, [1, 6, 1, 1])))
    y = c.add(c.conv2d(y, w2, padding=(1, 1, 1, 1)), c.reshape(b2, [6, 1, 1]))
    sc = c.conv2d(x, wp, strides=(2, 2))
    c.output(c.relu(c.add(sc, y)))
    yield c

    c = new("multi_outputs", "one conv feeding three outputs (relu, max pool, global pool)")
    x = c.input("x", [2, 3, 6, 6])
    w = c.const("w", [5, 3, 3, 3], -0.5, 0.5)
    y = c.conv2d(x, w, padding=(1, 1, 1, 1))
    r = c.relu(y)
    p = c.max_pool2d(y, (2, 2), (2, 2))
    gp = c.global_avg_pool2d(r)
    c.output(gp, r, p)
    yield c

    c = new("output_used_later", "conv+bias is an output and also feeds relu (not fusable)")
    x = c.input("x", [1, 3, 5, 5])
    w = c.const("w", [4, 3, 3, 3], -0.5, 0.5)
    b = c.const("b", [4])
    y = c.add(c.conv2d(x, w, padding=(1, 1, 1, 1)), c.reshape(b, [1, 4, 1, 1]))
    r = c.relu(y)
    c.output(y, r)
    yield c

    c = new("input_is_output", "a graph input returned directly, next to an op result")
    x = c.input("x", [2, 3, 4])
    z = c.input("z", [4])
    c.output(x, c.relu(c.add(x, z)), z)
    yield c

    c = new("mlp_softmax", "flatten -> dense -> relu -> dense -> softmax")
    x = c.input("x", [2, 3, 4, 4])
    w1 = c.const("w1", [48, 20], -0.2, 0.2)
    b1 = c.const("b1", [20])
    w2 = c.const("w2", [20, 10], -0.3, 0.3)
    b2 = c.const("b2", [1, 10])
    h = c.relu(c.add(c.matmul(c.flatten(x, 1), w1), b1))
    c.output(c.softmax(c.add(b2, c.matmul(h, w2)), -1))
    yield c

    c = new("swish_sub", "x * sigmoid(x), then 1 - that")
    x = c.input("x", [2, 4, 5], -6, 6)
    c.output(c.sub(1, c.mul(x, c.sigmoid(x))))
    yield c

    c = new("inception_concat", "1x1 conv, 3x3 conv and a pool branch concatenated on channels")
    x = c.input("x", [1, 4, 7, 7])
    wa = c.const("wa", [3, 4, 1, 1], -0.5, 0.5)
    wb = c.const("wb", [5, 4, 3, 3], -0.3, 0.3)
    ya = c.relu(c.conv2d(x, wa))
    yb = c.relu(c.conv2d(x, wb, padding=(1, 1, 1, 1)))
    yc = c.max_pool2d(x, (3, 3), (1, 1), (1, 1, 1, 1))
    c.output(c.concat([ya, yb, yc], 1))
    yield c

    c = new("quoted_names", "names that need quoting and escapes in the text form")
    x = c.input("input 0", [1, 2, 4, 4])
    w = c.const('we\\ird"w', [3, 2, 3, 3], -0.5, 0.5)
    b = c.const("1bias", [3, 1, 1])
    c.output(c.add(c.conv2d(x, w, padding=(1, 1, 1, 1)), b))
    yield c

    c = new("conv_bn_pool_chain", "conv (groups 2, dilation 2) -> bn -> clip -> avg pool -> "
            "global pool -> flatten")
    x = c.input("x", [2, 6, 11, 10])
    w = c.const("w", [4, 3, 3, 3], -0.5, 0.5)
    s = c.const("s", [4], 0.5, 1.5)
    b = c.const("b", [4])
    m = c.const("m", [4], -0.2, 0.2)
    v = c.const("v", [4], 0.5, 1.5)
    y = c.conv2d(x, w, padding=(2, 2, 2, 2), dilation=(2, 2), groups=2)
    y = c.clip(c.batch_norm(y, s, b, m, v, 1e-3), -0.5, 1)
    y = c.avg_pool2d(y, (3, 3), (2, 2), (1, 1, 1, 1), ceil_mode=1, count_include_pad=0)
    c.output(c.flatten(c.global_avg_pool2d(y), 1), y)
    yield c


# ------------------------------------------------------------------ randomized
def rand_conv_params(r):
    while True:
        g = int(r.choice([1, 1, 2, 3]))
        C = g * int(r.randint(1, 5))
        K = g * int(r.randint(1, 5))
        kh, kw = int(r.randint(1, 6)), int(r.randint(1, 6))
        sh, sw = int(r.randint(1, 4)), int(r.randint(1, 4))
        dh, dw = int(r.choice([1, 1, 2])), int(r.choice([1, 1, 2]))
        pad = [int(v) for v in r.randint(0, 3, size=4)]
        H, W = int(r.randint(1, 12)), int(r.randint(1, 12))
        N = int(r.randint(1, 3))
        oh = H + pad[0] + pad[2] - dh * (kh - 1) - 1
        ow = W + pad[1] + pad[3] - dw * (kw - 1) - 1
        if oh >= 0 and ow >= 0:
            return N, C, H, W, K, g, (kh, kw), (sh, sw), (dh, dw), pad


def rand_pool_params(r, is_max):
    while True:
        k = (int(r.randint(1, 5)), int(r.randint(1, 5)))
        s = (int(r.randint(1, 4)), int(r.randint(1, 4)))
        d = (int(r.choice([1, 1, 2])), int(r.choice([1, 1, 2]))) if is_max else (1, 1)
        eff = (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1)
        pad = [int(r.randint(0, eff[i % 2])) for i in range(4)]
        H, W = int(r.randint(1, 12)), int(r.randint(1, 12))
        ceil = int(r.randint(0, 2))
        cip = int(r.randint(0, 2))
        if H + pad[0] + pad[2] < eff[0] or W + pad[1] + pad[3] < eff[1]:
            continue
        x = torch.zeros(1, 1, H, W, dtype=torch.float64)
        try:  # reject configurations with a window that holds no input cell
            if is_max:
                ref_max_pool2d(x, k, s, pad, d, ceil)
            else:
                ref_avg_pool2d(x, k, s, pad, ceil, cip)
        except ValueError:
            continue
        return int(r.randint(1, 3)), int(r.randint(1, 5)), H, W, k, s, d, pad, ceil, cip


def bcast_shape(r, out):
    """A shape that broadcasts to out: a random suffix, dims randomly set to 1."""
    n = int(r.randint(0, len(out) + 1))
    return [d if r.rand() < 0.6 else 1 for d in out[len(out) - n:]]


@case
def random_cases():
    r = np.random.RandomState(20240917)
    kinds = ["conv2d", "max_pool2d", "avg_pool2d", "matmul", "binary", "softmax", "concat",
             "batch_norm", "reshape", "chain"]
    for i in range(24):
        kind = kinds[i % len(kinds)]
        name = "rand_%02d_%s" % (i, kind)
        c = new(name, "randomized (seeded) %s case" % kind)
        if kind == "conv2d":
            N, C, H, W, K, g, k, s, d, pad = rand_conv_params(r)
            x = c.input("x", [N, C, H, W])
            w = c.const("w", [K, C // g, k[0], k[1]], -0.5, 0.5)
            y = c.conv2d(x, w, s, pad, d, g)
            if r.rand() < 0.5:
                y = c.add(y, c.const("b", [K, 1, 1]))
            act = int(r.randint(0, 3))
            if act == 1:
                y = c.relu(y)
            elif act == 2:
                y = c.clip(y, -0.25, 0.25)
            c.output(y)
        elif kind in ("max_pool2d", "avg_pool2d"):
            is_max = kind == "max_pool2d"
            N, C, H, W, k, s, d, pad, ceil, cip = rand_pool_params(r, is_max)
            x = c.input("x", [N, C, H, W])
            if is_max:
                c.output(c.max_pool2d(x, k, s, pad, d, ceil))
            else:
                c.output(c.avg_pool2d(x, k, s, pad, ceil, cip))
        elif kind == "matmul":
            M, K, Nn = (int(v) for v in r.randint(1, 10, size=3))
            ra, rb = int(r.randint(1, 5)), int(r.randint(1, 5))
            nb = max(ra - 2, rb - 2, 0)
            batch = [int(v) for v in r.randint(1, 4, size=nb)]
            sa = [K] if ra == 1 else bcast_shape_exact(r, batch, ra - 2) + [M, K]
            sb = [K] if rb == 1 else bcast_shape_exact(r, batch, rb - 2) + [K, Nn]
            a = c.input("a", sa)
            b = c.input("b", sb) if r.rand() < 0.5 else c.const("b", sb)
            c.output(c.matmul(a, b))
        elif kind == "binary":
            rank = int(r.randint(1, 5))
            out = [int(v) for v in r.randint(1, 6, size=rank)]
            sa, sb = bcast_shape(r, out), bcast_shape(r, out)
            if r.rand() < 0.5:
                sa = out
            else:
                sb = out
            ops = ["add", "sub", "mul", "maximum", "minimum"]
            a = c.input("a", sa)
            b = c.input("b", sb) if r.rand() < 0.7 else c.const("b", sb)
            if r.rand() < 0.5:
                a, b = b, a
            c.output(c.binary(ops[int(r.randint(0, 5))], a, b))
            c.output(c.binary(ops[int(r.randint(0, 5))], b, 0.375 if r.rand() < 0.5 else a))
        elif kind == "softmax":
            rank = int(r.randint(1, 5))
            shape = [int(v) for v in r.randint(1, 7, size=rank)]
            axis = int(r.randint(-rank, rank))
            scale = float(r.choice([1, 10, 300]))
            x = c.input("x", c.rand(shape) * np.float32(scale))
            c.output(c.softmax(x, axis))
        elif kind == "concat":
            rank = int(r.randint(1, 5))
            base = [int(v) for v in r.randint(1, 5, size=rank)]
            axis = int(r.randint(-rank, rank))
            xs = []
            for j in range(int(r.randint(2, 5))):
                sh = list(base)
                sh[axis] = int(r.randint(1, 5))
                xs.append(c.input("x%d" % j, sh) if r.rand() < 0.75 else c.const("k%d" % j, sh))
            c.output(c.concat(xs, axis))
        elif kind == "batch_norm":
            rank = int(r.randint(2, 5))
            shape = [int(v) for v in r.randint(1, 6, size=rank)]
            C = shape[1]
            inline = C <= 4 and r.rand() < 0.5
            x = c.input("x", shape)
            s = c.const("scale", [C], 0.5, 1.5, inline=inline)
            b = c.const("bias", [C], inline=inline)
            m = c.const("mean", [C], -0.5, 0.5, inline=inline)
            v = c.const("var", [C], 0.1, 2.0, inline=inline)
            y = c.batch_norm(x, s, b, m, v, float(r.choice([0.0, 1e-5, 1e-3, 0.1])))
            c.output(c.relu(y) if r.rand() < 0.5 else y)
        elif kind == "reshape":
            rank = int(r.randint(1, 6))
            shape = [int(v) for v in r.randint(1, 5, size=rank)]
            x = c.input("x", shape)
            axis = int(r.randint(-rank, rank + 1))
            f = c.flatten(x, axis)
            tgt = [int(v) for v in r.permutation(shape + [1])]
            tgt[int(r.randint(0, len(tgt)))] = -1
            c.output(f, c.reshape(f, tgt))
        else:  # chain
            N = int(r.randint(1, 3))
            C, K = int(r.randint(1, 6)), int(r.randint(2, 9))
            H, W = int(r.randint(4, 10)), int(r.randint(4, 10))
            x = c.input("x", [N, C, H, W])
            w = c.const("w", [K, C, 3, 3], -0.4, 0.4)
            b = c.const("b", [K])
            y = c.conv2d(x, w, padding=(1, 1, 1, 1))
            y = c.relu(c.add(y, c.reshape(b, [1, K, 1, 1])))
            if r.rand() < 0.5:
                y = c.max_pool2d(y, (2, 2), (2, 2), ceil_mode=1)
            else:
                y = c.avg_pool2d(y, (3, 3), (2, 2), (1, 1, 1, 1), count_include_pad=1)
            y = c.flatten(c.global_avg_pool2d(y), 1)
            M = int(r.randint(2, 7))
            y = c.matmul(y, c.const("fc", [K, M]))
            c.output(c.softmax(y, 1))
        yield c


def bcast_shape_exact(r, batch, n):
    """n batch dims that broadcast to the last n of batch (some set to 1)."""
    tail = batch[len(batch) - n:] if n else []
    return [d if r.rand() < 0.7 else 1 for d in tail]


# ------------------------------------------------------------------ operator families
# One module per family of operators (tools/golden_<family>.py), each with a function
# cases(G) that yields cases built with this module's Case (G is this module).
FAMILIES = ("golden_math", "golden_shape", "golden_nn", "golden_layers")


def family_cases():
    import importlib
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    for name in FAMILIES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            continue
        yield from mod.cases(sys.modules[__name__])


CASES.append(family_cases)


# ------------------------------------------------------------------ main
def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "data")
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".golden"):
            os.remove(os.path.join(out_dir, f))
    names, total = set(), 0
    for gen in CASES:
        for c in gen():
            assert c.name not in names, c.name
            names.add(c.name)
            data = c.encode()
            with open(os.path.join(out_dir, c.name + ".golden"), "wb") as f:
                f.write(data)
            total += len(data)
    print("wrote %d cases, %d bytes, to %s" % (len(names), total, out_dir))


if __name__ == "__main__":
    main()
