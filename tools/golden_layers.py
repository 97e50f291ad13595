#!/usr/bin/env python3
"""golden_layers.py - reference data for the layers family (slice / split, transposed
convolution, 1-D convolution and pools, LSTM / GRU), computed with PyTorch.

Two outputs:

  cases(G)       the text-form cases (slice, conv_transpose2d) for tests/data/*.golden, called
                 by tools/gen_golden.py (G is that module): /usr/bin/python3 tools/gen_golden.py

  main()         /usr/bin/python3 tools/golden_layers.py  writes
                   tests/data/layers/<case>.layer   builder cases tests/test_layers.c runs:
                                                    the ops that exist only as builders (1-D
                                                    conv / pools / conv_transpose, split, LSTM,
                                                    GRU), which the text form shows as the ops
                                                    they compose
                   tests/data/onnx/lstm_tiny.{onnx,input.bin,output.bin}
                                                    a small bidirectional batch-first LSTM +
                                                    Linear exported from PyTorch, which
                                                    tests/test_networks.c runs

A .layer file is a .golden file (see tools/gen_golden.py) whose text part is one line

    # <case>: <description>
    <builder> key=value ...            e.g. "lstm hidden=5 direction=2 batch_first=1 const=1"

followed by "%%\n" and the records: 'I' the builder's operands by name (x, w, r, b, h0, c0),
'O' the expected outputs (y, y_h, y_c; split: y0, y1, ...). Deterministic (seeded by the case
name).

References: PyTorch in float64 (F.conv1d, F.conv_transpose1d / 2d with the padding cropped
and output padding appended explicitly, torch.nn.LSTM / GRU with the weights rearranged from
ONNX's gate order i, o, f, c / z, r, h to PyTorch's i, f, g, o / r, z, n). ONNX semantics that
PyTorch lacks (clip, GRU linear_before_reset=0) come from ref_lstm / ref_gru below, an
explicit float64 transcription of the ONNX operator definitions, cross-checked against torch
on every case torch can express.
"""
import os
import struct
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
INT_END = 2147483647  # "to the end" in the text form (ONNX uses INT64_MAX)


# ------------------------------------------------------------------ references
def ref_slice(x, starts, ends, steps, axes):
    """numpy slicing clamps exactly as ONNX Slice does"""
    a = x.numpy()
    idx = [slice(None)] * a.ndim
    for s, e, st, ax in zip(starts, ends, steps, axes):
        idx[ax] = slice(s, e, st)
    return torch.from_numpy(np.array(a[tuple(idx)], copy=True, order="C"))


def ref_conv_transpose(x, w, strides, padding, output_padding, dilation, groups):
    """[N,C,L] or [N,C,H,W]; padding (begins..., ends...) cropped from the full output,
    output_padding zeros appended at the ends"""
    nd = x.dim() - 2
    fn = F.conv_transpose1d if nd == 1 else F.conv_transpose2d
    y = fn(x, w, stride=tuple(strides), dilation=tuple(dilation), groups=groups)
    pad = []
    for i in reversed(range(nd)):  # F.pad: last dimension first
        pad += [0, output_padding[i]]
    y = F.pad(y, pad)
    for i in range(nd):
        size = y.shape[2 + i]
        y = y.narrow(2 + i, padding[i], size - padding[i] - padding[nd + i])
    return y


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def ref_lstm(x, w, r, b, h0, c0, H, direction, clip, batch_first):
    """ONNX LSTM (gates i, o, f, c; default activations) in float64 numpy."""
    x = np.asarray(x, np.float64)
    if batch_first:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    T, N, _ = x.shape
    D = 2 if direction == 2 else 1
    y = np.zeros((T, D, N, H))
    yh, yc = np.zeros((D, N, H)), np.zeros((D, N, H))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip > 0 else (lambda v: v)
    for d in range(D):
        h = np.zeros((N, H)) if h0 is None else h0[d].astype(np.float64)
        c = np.zeros((N, H)) if c0 is None else c0[d].astype(np.float64)
        wb = np.zeros(4 * H) if b is None else b[d, :4 * H]
        rb = np.zeros(4 * H) if b is None else b[d, 4 * H:]
        order = range(T - 1, -1, -1) if (direction == 1 or d == 1) else range(T)
        for t in order:
            g = cl(x[t] @ w[d].T.astype(np.float64) + h @ r[d].T.astype(np.float64) + wb + rb)
            i, o, f = sigmoid(g[:, :H]), sigmoid(g[:, H:2 * H]), sigmoid(g[:, 2 * H:3 * H])
            c = f * c + i * np.tanh(g[:, 3 * H:])
            h = o * np.tanh(c)
            y[t, d] = h
        yh[d], yc[d] = h, c
    if batch_first:
        return y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2), yc.transpose(1, 0, 2)
    return y, yh, yc


def ref_gru(x, w, r, b, h0, H, direction, clip, batch_first, lbr):
    """ONNX GRU (gates z, r, h; default activations) in float64 numpy."""
    x = np.asarray(x, np.float64)
    if batch_first:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
    T, N, _ = x.shape
    D = 2 if direction == 2 else 1
    y = np.zeros((T, D, N, H))
    yh = np.zeros((D, N, H))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip > 0 else (lambda v: v)
    for d in range(D):
        h = np.zeros((N, H)) if h0 is None else h0[d].astype(np.float64)
        wb = np.zeros(3 * H) if b is None else b[d, :3 * H]
        rb = np.zeros(3 * H) if b is None else b[d, 3 * H:]
        W, R = w[d].astype(np.float64), r[d].astype(np.float64)
        order = range(T - 1, -1, -1) if (direction == 1 or d == 1) else range(T)
        for t in order:
            xw = x[t] @ W.T + wb
            zr = sigmoid(cl(xw[:, :2 * H] + h @ R[:2 * H].T + rb[:2 * H]))
            z, rr = zr[:, :H], zr[:, H:]
            if lbr:
                cand = xw[:, 2 * H:] + rr * (h @ R[2 * H:].T + rb[2 * H:])
            else:
                cand = xw[:, 2 * H:] + (rr * h) @ R[2 * H:].T + rb[2 * H:]
            cand = np.tanh(cl(cand))
            h = (1 - z) * cand + z * h
            y[t, d] = h
        yh[d] = h
    if batch_first:
        return y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2)
    return y, yh


def torch_lstm(x, w, r, b, h0, c0, H, direction, batch_first):
    """torch.nn.LSTM with ONNX's weights (i, o, f, c -> i, f, g, o), float64"""
    D = 2 if direction == 2 else 1
    I = w.shape[2]
    m = torch.nn.LSTM(I, H, bidirectional=D == 2, batch_first=bool(batch_first),
                      bias=True).double()
    perm = lambda a: np.concatenate([a[0:H], a[2 * H:3 * H], a[3 * H:], a[H:2 * H]])
    dirs = range(D)  # reverse: torch's forward layer on x flipped in time
    with torch.no_grad():
        for k, d in enumerate(dirs):
            sfx = "_reverse" if k == 1 else ""
            getattr(m, "weight_ih_l0" + sfx).copy_(torch.from_numpy(perm(w[d]).astype(np.float64)))
            getattr(m, "weight_hh_l0" + sfx).copy_(torch.from_numpy(perm(r[d]).astype(np.float64)))
            bb = np.zeros(8 * H) if b is None else b[d].astype(np.float64)
            getattr(m, "bias_ih_l0" + sfx).copy_(torch.from_numpy(perm(bb[:4 * H])))
            getattr(m, "bias_hh_l0" + sfx).copy_(torch.from_numpy(perm(bb[4 * H:])))
    xt = torch.from_numpy(np.asarray(x, np.float64))
    tax = 1 if batch_first else 0
    if direction == 1:
        xt = xt.flip(tax)
    st = None
    if h0 is not None:
        hh = h0.transpose(1, 0, 2) if batch_first else h0
        cc = c0.transpose(1, 0, 2) if batch_first else c0
        st = (torch.from_numpy(hh.astype(np.float64)), torch.from_numpy(cc.astype(np.float64)))
    with torch.no_grad():
        out, (hn, cn) = m(xt, st)
    if direction == 1:
        out = out.flip(tax)
    T, N = x.shape[tax], x.shape[1 - tax]
    out = out.reshape(out.shape[0], out.shape[1], D, H).numpy()
    if batch_first:
        return out, hn.numpy().transpose(1, 0, 2), cn.numpy().transpose(1, 0, 2)
    return out.transpose(0, 2, 1, 3), hn.numpy(), cn.numpy()


def torch_gru(x, w, r, b, h0, H, direction, batch_first):
    """torch.nn.GRU (linear_before_reset=1) with ONNX's weights (z, r, h -> r, z, n)"""
    D = 2 if direction == 2 else 1
    I = w.shape[2]
    m = torch.nn.GRU(I, H, bidirectional=D == 2, batch_first=bool(batch_first)).double()
    perm = lambda a: np.concatenate([a[H:2 * H], a[0:H], a[2 * H:]])
    dirs = range(D)
    with torch.no_grad():
        for k, d in enumerate(dirs):
            sfx = "_reverse" if k == 1 else ""
            getattr(m, "weight_ih_l0" + sfx).copy_(torch.from_numpy(perm(w[d]).astype(np.float64)))
            getattr(m, "weight_hh_l0" + sfx).copy_(torch.from_numpy(perm(r[d]).astype(np.float64)))
            bb = np.zeros(6 * H) if b is None else b[d].astype(np.float64)
            getattr(m, "bias_ih_l0" + sfx).copy_(torch.from_numpy(perm(bb[:3 * H])))
            getattr(m, "bias_hh_l0" + sfx).copy_(torch.from_numpy(perm(bb[3 * H:])))
    xt = torch.from_numpy(np.asarray(x, np.float64))
    tax = 1 if batch_first else 0
    if direction == 1:
        xt = xt.flip(tax)
    st = None
    if h0 is not None:
        st = torch.from_numpy((h0.transpose(1, 0, 2) if batch_first else h0).astype(np.float64))
    with torch.no_grad():
        out, hn = m(xt, st)
    if direction == 1:
        out = out.flip(tax)
    out = out.reshape(out.shape[0], out.shape[1], D, H).numpy()
    if batch_first:
        return out, hn.numpy().transpose(1, 0, 2)
    return out.transpose(0, 2, 1, 3), hn.numpy()


# ------------------------------------------------------------------ text-form cases
def slice_case(G, name, desc, shape, starts, ends=None, steps=None, axes=None, sizes=None):
    c = G.new(name, desc)
    x = c.input("x", list(shape))
    n = len(starts)
    steps_ = steps if steps is not None else [1] * n
    axes_ = axes if axes is not None else list(range(n))
    attrs = ["starts=" + G.fmt_ints(starts)]
    if sizes is not None:
        ends_ = [s + z * st if s + z * st >= 0 else None for s, z, st in zip(starts, sizes, steps_)]
        attrs.append("sizes=" + G.fmt_ints(sizes))
    else:
        ends_ = list(ends)  # numpy clamps -INT_END / INT_END as ONNX does
        attrs.append("ends=" + G.fmt_ints(ends))
    if steps is not None:
        attrs.append("steps=" + G.fmt_ints(steps))
    if axes is not None:
        attrs.append("axes=" + G.fmt_ints(axes))
    y = c.emit("slice", [x], attrs, ref_slice(c.T(x), starts, ends_, steps_, axes_))
    c.output(y)
    return c


def conv_transpose_case(G, name, desc, x, w, strides=(1, 1), padding=(0, 0, 0, 0),
                        output_padding=(0, 0), dilation=(1, 1), groups=1, bias=False,
                        relu=False, omit=False):
    c = G.new(name, desc)
    xi = c.input("x", list(x))
    wc = c.const("w", list(w), -0.5, 0.5)
    K = w[1] * groups
    y_ref = ref_conv_transpose(c.T(xi), c.T(wc), strides, padding, output_padding, dilation,
                               groups)
    attrs = [] if omit else ["strides=" + G.fmt_ints(strides), "padding=" + G.fmt_ints(padding),
                             "output_padding=" + G.fmt_ints(output_padding),
                             "dilation=" + G.fmt_ints(dilation), "groups=%d" % groups]
    y = c.emit("conv_transpose2d", [xi, wc], attrs, y_ref)
    if bias:
        b = c.const("b", [K])
        y = c.add(y, c.reshape(b, [1, K, 1, 1]))
    if relu:
        y = c.relu(y)
    c.output(y)
    return c


def cases(G):
    # ---- slice
    yield slice_case(G, "slice_rank1", "rank 1, one range", [9], [2], [7])
    yield slice_case(G, "slice_rank1_neg_step", "rank 1, step -2 from the end to the start",
                     [9], [-1], [-INT_END], [-2])
    yield slice_case(G, "slice_rank2_neg_axes", "rank 2, negative axes and indices",
                     [6, 7], [-5, 1], [-1, INT_END], None, [-1, 0])
    yield slice_case(G, "slice_rank3_steps", "rank 3: step 3 inner, step -1 middle, a whole axis",
                     [4, 5, 11], [10, 1], [0, 4], [-3, 2], [2, 1])
    yield slice_case(G, "slice_rank4_channels", "rank 4: channels 2..5 (contiguous runs)",
                     [2, 7, 5, 6], [2], [5], None, [1])
    yield slice_case(G, "slice_rank4_spatial", "rank 4: a crop of rows and columns",
                     [1, 3, 9, 8], [1, 2], [8, -1], None, [2, 3])
    yield slice_case(G, "slice_rank5_mixed", "rank 5, every axis cut, mixed signs of steps",
                     [3, 4, 5, 3, 6], [2, 0, 4, 1, 1], [-INT_END, 4, 0, 3, 6], [-1, 3, -2, 1, 2])
    yield slice_case(G, "slice_out_of_bounds", "starts and ends past the ends clamp",
                     [5, 6], [-100, 3], [100, 1000], [1, 2])
    yield slice_case(G, "slice_big_step", "a step larger than the axis keeps one element",
                     [5, 6], [4, 1], [0, 6], [-9, 99])
    yield slice_case(G, "slice_sizes_form", "the printed form: starts, sizes, steps",
                     [6, 8], [5, 1], None, [-2, 3], None, [3, 3])

    c = G.new("slice_chain", "slices feeding add and concat (split by hand), batch 2")
    x = c.input("x", [2, 6, 5])
    a = c.emit("slice", [x], ["starts=[0]", "ends=[3]", "axes=[1]"],
               ref_slice(c.T(x), [0], [3], [1], [1]))
    b = c.emit("slice", [x], ["starts=[3]", "ends=[6]", "axes=[1]"],
               ref_slice(c.T(x), [3], [6], [1], [1]))
    r = c.emit("slice", [x], ["starts=[-1]", "ends=[-" + str(INT_END) + "]", "steps=[-1]",
                              "axes=[2]"], ref_slice(c.T(x), [-1], [None], [-1], [2]))
    c.output(c.add(a, b), c.concat([b, a], 1), r)
    yield c

    # ---- conv_transpose2d
    yield conv_transpose_case(G, "convt_basic", "3 -> 4 channels, 3x3, stride 1", [1, 3, 5, 5],
                              [3, 4, 3, 3])
    yield conv_transpose_case(G, "convt_stride2_k2", "U-Net style 2x2 stride 2, bias, relu",
                              [2, 8, 6, 7], [8, 5, 2, 2], strides=(2, 2), bias=True, relu=True)
    yield conv_transpose_case(G, "convt_stride3_outpad", "stride 3, output_padding 2 / 1",
                              [1, 2, 4, 5], [2, 3, 3, 3], strides=(3, 3), output_padding=(2, 1))
    yield conv_transpose_case(G, "convt_asym_pad", "stride [2,3], asymmetric crop [1,0,2,2]",
                              [1, 3, 5, 4], [3, 2, 4, 3], strides=(2, 3), padding=(1, 0, 2, 2))
    yield conv_transpose_case(G, "convt_groups3_dilation", "groups 3, dilation [2,3], stride 2",
                              [2, 6, 4, 5], [6, 2, 3, 2], strides=(2, 2), padding=(1, 1, 1, 1),
                              dilation=(2, 3), groups=3)
    yield conv_transpose_case(G, "convt_depthwise", "groups = channels = 5, stride 2, padding 1",
                              [1, 5, 6, 6], [5, 1, 3, 3], strides=(2, 2), padding=(1, 1, 1, 1),
                              output_padding=(1, 1), groups=5)
    yield conv_transpose_case(G, "convt_1x1_input", "a 1x1 input, kernel 4x3", [2, 3, 1, 1],
                              [3, 2, 4, 3])
    yield conv_transpose_case(G, "convt_outpad_past_stride", "output_padding 3 > stride 1: rows "
                              "of zeros", [1, 2, 3, 3], [2, 2, 2, 2], output_padding=(3, 0))
    yield conv_transpose_case(G, "convt_attrs_omitted", "conv_transpose2d(%x, %w), no attributes",
                              [1, 2, 3, 4], [2, 3, 2, 2], omit=True)
    yield conv_transpose_case(G, "convt_wide", "17 -> 9 channels, stride 2, crop 1, bias",
                              [1, 17, 5, 6], [17, 9, 3, 3], strides=(2, 2), padding=(1, 1, 1, 1),
                              output_padding=(1, 1), bias=True)

    r = np.random.RandomState(20261125)
    for i in range(8):
        g = int(r.choice([1, 1, 2, 3]))
        C, Kg = g * int(r.randint(1, 4)), int(r.randint(1, 4))
        k = (int(r.randint(1, 5)), int(r.randint(1, 5)))
        s = (int(r.randint(1, 4)), int(r.randint(1, 4)))
        d = (int(r.choice([1, 1, 2])), int(r.choice([1, 1, 2])))
        H, W, N = int(r.randint(1, 7)), int(r.randint(1, 7)), int(r.randint(1, 3))
        op = (int(r.randint(0, max(s[0], d[0]))), int(r.randint(0, max(s[1], d[1]))))
        full = [(H - 1) * s[0] + d[0] * (k[0] - 1) + 1 + op[0],
                (W - 1) * s[1] + d[1] * (k[1] - 1) + 1 + op[1]]
        pad = [int(r.randint(0, 3)) for _ in range(4)]
        for j in range(2):  # leave at least one row / column
            while pad[j] + pad[j + 2] >= full[j]:
                pad[j + (2 if pad[j + 2] else 0)] -= 1
        yield conv_transpose_case(G, "rand_convt_%02d" % i, "randomized (seeded) conv_transpose2d",
                                  [N, C, H, W], [C, Kg, k[0], k[1]], s, pad, op, d, g,
                                  bias=bool(r.rand() < 0.5))


# ------------------------------------------------------------------ builder cases (.layer)
class LayerCase:
    def __init__(self, name, desc, head):
        self.name, self.desc, self.head = name, desc, head
        self.rng = np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)
        self.recs = []

    def rand(self, shape, lo=-1.0, hi=1.0):
        return self.rng.uniform(lo, hi, size=tuple(shape)).astype(np.float32)

    def add(self, kind, name, a):
        a = np.asarray(a)
        assert np.all(np.isfinite(a)), (self.name, name)
        self.recs.append((kind, name, a.astype(np.float32)))

    def encode(self):
        blob = bytearray(("# %s: %s\n%s\n" % (self.name, self.desc, self.head)).encode())
        blob += b"%%\n"
        for kind, name, a in self.recs:
            nb = name.encode()
            a = np.array(a, dtype="<f4", order="C")
            blob += kind + struct.pack("<I", len(nb)) + nb
            blob += struct.pack("<I", a.ndim) + b"".join(struct.pack("<q", d) for d in a.shape)
            blob += struct.pack("<Q", a.size) + a.tobytes()
        return bytes(blob)


def f64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def fmt_list(v):
    return ",".join(str(int(t)) for t in v)


def conv1d_case(name, desc, x, w, stride=1, pad=(0, 0), dil=1, groups=1):
    c = LayerCase(name, desc, "conv1d strides=%d padding=%s dilation=%d groups=%d"
                  % (stride, fmt_list(pad), dil, groups))
    xv, wv = c.rand(x), c.rand(w, -0.5, 0.5)
    y = F.conv1d(F.pad(f64(xv), tuple(pad)), f64(wv), stride=stride, dilation=dil, groups=groups)
    c.add(b"I", "x", xv)
    c.add(b"I", "w", wv)
    c.add(b"O", "y", y.numpy())
    return c


def pool1d_case(G, name, desc, kind, x, k, stride=1, pad=(0, 0), dil=1, ceil=0, cip=0):
    head = "%s kernel=%d strides=%d padding=%s ceil_mode=%d" % (kind, k, stride, fmt_list(pad), ceil)
    head += " dilation=%d" % dil if kind == "max_pool1d" else " count_include_pad=%d" % cip
    c = LayerCase(name, desc, head)
    xv = c.rand(x)
    x4 = f64(xv).unsqueeze(2)
    p4 = (0, pad[0], 0, pad[1])
    if kind == "max_pool1d":
        y = G.ref_max_pool2d(x4, (1, k), (1, stride), p4, (1, dil), ceil)
        if pad[0] == pad[1] and pad[0] <= k // 2:
            t = F.max_pool1d(f64(xv), k, stride, pad[0], dil, ceil_mode=bool(ceil))
            assert torch.allclose(t, y.squeeze(2)), name
    else:
        y = G.ref_avg_pool2d(x4, (1, k), (1, stride), p4, ceil, cip)
        if pad[0] == pad[1] and pad[0] <= k // 2:
            t = F.avg_pool1d(f64(xv), k, stride, pad[0], ceil_mode=bool(ceil),
                             count_include_pad=bool(cip))
            assert torch.allclose(t, y.squeeze(2)), name
    c.add(b"I", "x", xv)
    c.add(b"O", "y", y.squeeze(2).numpy())
    return c


def convt1d_case(name, desc, x, w, stride=1, pad=(0, 0), outpad=0, dil=1, groups=1):
    c = LayerCase(name, desc, "conv_transpose1d strides=%d padding=%s output_padding=%d "
                  "dilation=%d groups=%d" % (stride, fmt_list(pad), outpad, dil, groups))
    xv, wv = c.rand(x), c.rand(w, -0.5, 0.5)
    y = ref_conv_transpose(f64(xv), f64(wv), [stride], list(pad), [outpad], [dil], groups)
    c.add(b"I", "x", xv)
    c.add(b"I", "w", wv)
    c.add(b"O", "y", y.numpy())
    return c


def split_case(name, desc, shape, axis, n, sizes=None):
    head = "split axis=%d n=%d" % (axis, n) + (" sizes=%s" % fmt_list(sizes) if sizes else "")
    c = LayerCase(name, desc, head)
    xv = c.rand(shape)
    c.add(b"I", "x", xv)
    dim = shape[axis]
    sizes = sizes or [dim // n] * n
    at = 0
    for i, z in enumerate(sizes):
        c.add(b"O", "y%d" % i, np.take(xv, range(at, at + z), axis=axis))
        at += z
    return c


def rnn_case(name, desc, cell, T, N, I, H, direction=0, batch_first=0, bias=True,
             init=True, clip=0.0, lbr=0, const=0, outputs=(1, 1, 1)):
    G_ = 4 if cell == "lstm" else 3
    D = 2 if direction == 2 else 1
    head = "%s hidden=%d direction=%d batch_first=%d clip=%s const=%d outputs=%s" % (
        cell, H, direction, batch_first, repr(float(np.float32(clip))), const,
        fmt_list(outputs))
    if cell == "gru":
        head += " linear_before_reset=%d" % lbr
    c = LayerCase(name, desc, head)
    x = c.rand([N, T, I] if batch_first else [T, N, I])
    w = c.rand([D, G_ * H, I], -0.6, 0.6)
    r = c.rand([D, G_ * H, H], -0.6, 0.6)
    b = c.rand([D, 2 * G_ * H], -0.4, 0.4) if bias else None
    st = [N, D, H] if batch_first else [D, N, H]
    h0 = c.rand(st, -0.5, 0.5) if init else None
    c0 = c.rand(st, -0.5, 0.5) if init and cell == "lstm" else None
    for nm, a in (("x", x), ("w", w), ("r", r), ("b", b), ("h0", h0), ("c0", c0)):
        if a is not None:
            c.add(b"I", nm, a)
    if cell == "lstm":
        outs = ref_lstm(x, w, r, b, h0, c0, H, direction, clip, batch_first)
        if clip == 0:
            t = torch_lstm(x, w, r, b, h0, c0, H, direction, batch_first)
            for u, v in zip(outs, t):
                assert np.allclose(u, v, atol=1e-10), (name, np.abs(u - v).max())
        names = ("y", "y_h", "y_c")
    else:
        outs = ref_gru(x, w, r, b, h0, H, direction, clip, batch_first, lbr)
        if clip == 0 and lbr == 1:
            t = torch_gru(x, w, r, b, h0, H, direction, batch_first)
            for u, v in zip(outs, t):
                assert np.allclose(u, v, atol=1e-10), (name, np.abs(u - v).max())
        names = ("y", "y_h")
    for nm, a, want in zip(names, outs, outputs):
        if want:
            c.add(b"O", nm, a)
    return c


def layer_cases(G):
    yield conv1d_case("conv1d_basic", "3 -> 5 channels, kernel 3", [2, 3, 11], [5, 3, 3])
    yield conv1d_case("conv1d_stride_pad", "stride 2, padding [2, 1]", [1, 4, 13], [6, 4, 5], 2,
                      (2, 1))
    yield conv1d_case("conv1d_groups_dilation", "groups 2, dilation 3, padding 3", [2, 6, 10],
                      [4, 3, 3], 1, (3, 3), 3, 2)
    yield conv1d_case("conv1d_depthwise", "depthwise (groups 7), stride 3", [1, 7, 16], [7, 1, 4],
                      3, (1, 2), 1, 7)
    yield conv1d_case("conv1d_length1", "length 1, kernel 3, padding 1", [2, 4, 1], [8, 4, 3], 1,
                      (1, 1))
    yield pool1d_case(G, "max_pool1d_basic", "kernel 3, stride 2", "max_pool1d", [2, 3, 11], 3, 2)
    yield pool1d_case(G, "max_pool1d_pad_dil_ceil", "kernel 3, dilation 2, padding [2, 1], ceil",
                      "max_pool1d", [1, 4, 12], 3, 2, (2, 1), 2, 1)
    yield pool1d_case(G, "avg_pool1d_pad_incl", "kernel 4, stride 3, padding 2, count_include_pad",
                      "avg_pool1d", [2, 3, 13], 4, 3, (2, 2), 1, 0, 1)
    yield pool1d_case(G, "avg_pool1d_ceil_excl", "kernel 3, stride 2, padding [1, 0], ceil, "
                      "exclusive", "avg_pool1d", [1, 5, 10], 3, 2, (1, 0), 1, 1, 0)
    c = LayerCase("global_avg_pool1d", "[N, C, L] -> [N, C, 1]", "global_avg_pool1d")
    xv = c.rand([3, 4, 9])
    c.add(b"I", "x", xv)
    c.add(b"O", "y", xv.astype(np.float64).mean(axis=2, keepdims=True))
    yield c
    yield convt1d_case("conv_transpose1d_basic", "2 -> 3 channels, kernel 3", [1, 2, 5], [2, 3, 3])
    yield convt1d_case("conv_transpose1d_stride3", "stride 3, crop [1, 2], output_padding 2, "
                       "dilation 2, groups 2", [2, 4, 6], [4, 2, 3], 3, (1, 2), 2, 2, 2)
    yield split_case("split_equal", "3 equal pieces along axis 1", [2, 9, 4], 1, 3)
    yield split_case("split_sizes_neg_axis", "sizes [1, 4, 2] along axis -1", [3, 2, 7], -1, 3,
                     [1, 4, 2])
    yield split_case("split_rank1", "rank 1 into 2", [6], 0, 2)

    yield rnn_case("lstm_forward", "forward, bias and initial states, batch 3", "lstm",
                   5, 3, 4, 6)
    yield rnn_case("lstm_reverse_nobias", "reverse, no bias, zero states", "lstm", 4, 2, 3, 5,
                   direction=1, bias=False, init=False)
    yield rnn_case("lstm_bidir_batch_first", "bidirectional, batch_first, constants", "lstm",
                   6, 2, 5, 4, direction=2, batch_first=1, const=1)
    yield rnn_case("lstm_bidir_clip", "bidirectional, clip 0.7, time-major, batch 1", "lstm",
                   4, 1, 3, 3, direction=2, clip=0.7, const=1)
    yield rnn_case("lstm_one_step_yh", "one time step, only y_h asked for", "lstm", 1, 2, 3, 4,
                   outputs=(0, 1, 0))
    yield rnn_case("gru_forward_lbr0", "forward, linear_before_reset 0", "gru", 5, 2, 4, 5)
    yield rnn_case("gru_bidir_lbr1", "bidirectional, linear_before_reset 1 (PyTorch), "
                   "batch_first, constants", "gru", 4, 3, 3, 4, direction=2, batch_first=1,
                   lbr=1, const=1)
    yield rnn_case("gru_reverse_clip", "reverse, clip 0.5, no initial state", "gru", 6, 2, 2, 3,
                   direction=1, clip=0.5, init=False, lbr=1)
    yield rnn_case("gru_nobias_lbr0_const", "no bias, linear_before_reset 0, constants", "gru",
                   3, 1, 5, 6, bias=False, const=1)


# ------------------------------------------------------------------ ONNX cases
def onnx_case(name, desc, nodes, inputs, outputs, inits=(), opset=13, error=None):
    """A one-node (or few-node) ONNX model, tests/data/layers/<name>.onnx, and its .layer file:
    head "onnx" with the inputs ('I', graph input order) and expected outputs ('O'), or
    "onnx_error <text>" when the loader must refuse it with a message containing <text>."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    c = LayerCase(name, desc, "onnx" if error is None else "onnx_error " + error)
    vi = lambda n, a: helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape))
    graph = helper.make_graph(
        nodes, name, [vi(n, a) for n, a in inputs], [vi(n, a) for n, a in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if opset <= 17:  # the onnx package here (1.12) knows opsets up to 17
        onnx.checker.check_model(model)
    for n, a in inputs:
        c.add(b"I", n, a)
    for n, a in outputs:
        if error is None:
            c.add(b"O", n, a)
    return c, model.SerializeToString()


def onnx_cases():
    from onnx import helper
    I64 = np.iinfo(np.int64)
    r = np.random.RandomState(7)
    f32 = lambda *shape: r.uniform(-1, 1, size=shape).astype(np.float32)
    mk = helper.make_node

    x = f32(4, 5, 6)
    yield onnx_case("onnx_slice_opset9", "Slice with attributes (opset 9), INT64_MAX end",
                    [mk("Slice", ["x"], ["y"], starts=[1, -4], ends=[int(I64.max), -1],
                        axes=[0, 2])],
                    [("x", x)], [("y", x[1:, :, -4:-1])], opset=9)
    yield onnx_case("onnx_slice_opset13", "Slice with constant inputs, a negative step to the "
                    "start (INT64_MIN end)",
                    [mk("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
                    [("x", x)], [("y", np.array(x[::2, :, ::-2], copy=True))],
                    inits=[("starts", np.array([0, -1], np.int64)),
                           ("ends", np.array([int(I64.max), int(I64.min)], np.int64)),
                           ("axes", np.array([0, -1], np.int64)),
                           ("steps", np.array([2, -2], np.int64))])
    x = f32(3, 4, 7)
    yield onnx_case("onnx_split_opset11", "Split with attribute split=[1, 3] on axis 1",
                    [mk("Split", ["x"], ["a", "b"], axis=1, split=[1, 3])],
                    [("x", x)], [("a", x[:, :1]), ("b", x[:, 1:])], opset=11)
    yield onnx_case("onnx_split_opset13", "Split with input split=[2, 1, 4] on axis -1",
                    [mk("Split", ["x", "split"], ["a", "b", "c"], axis=-1)],
                    [("x", x)], [("a", x[..., :2]), ("b", x[..., 2:3]), ("c", x[..., 3:])],
                    inits=[("split", np.array([2, 1, 4], np.int64))])
    yield onnx_case("onnx_split_opset18", "Split num_outputs=3 on 7: pieces 3, 3, 1",
                    [mk("Split", ["x"], ["a", "b", "c"], axis=2, num_outputs=3)],
                    [("x", x)], [("a", x[..., :3]), ("b", x[..., 3:6]), ("c", x[..., 6:])],
                    opset=18)
    x4 = f32(2, 6, 3)
    yield onnx_case("onnx_split_equal_opset13", "Split into 2 equal pieces, no split input",
                    [mk("Split", ["x"], ["a", "b"], axis=1)],
                    [("x", x4)], [("a", x4[:, :3]), ("b", x4[:, 3:])])

    x, w, b = f32(1, 2, 5), f32(2, 3, 3), f32(3)
    y = ref_conv_transpose(f64(x), f64(w), [2], [0, 0], [1], [1], 1).numpy() + b[None, :, None]
    yield onnx_case("onnx_convtranspose_1d_output_shape", "1-D ConvTranspose, output_shape 12 "
                    "(one row past the full output), bias",
                    [mk("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2], output_shape=[12])],
                    [("x", x)], [("y", y)], inits=[("w", w), ("b", b)])
    x, w = f32(1, 2, 4, 3), f32(2, 2, 3, 3)
    # SAME_LOWER: output = input * stride; total = 2 * 3 + 3 - 8 = 1 (rows), 2 * 2 + 3 - 6 = 1
    y = ref_conv_transpose(f64(x), f64(w), [2, 2], [1, 1, 0, 0], [0, 0], [1, 1], 1).numpy()
    yield onnx_case("onnx_convtranspose_same_lower", "ConvTranspose auto_pad SAME_LOWER, stride 2",
                    [mk("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2],
                        auto_pad="SAME_LOWER")],
                    [("x", x)], [("y", y)], inits=[("w", w)])
    x, w, b = f32(2, 3, 9), f32(4, 3, 4), f32(4)
    # SAME_UPPER, stride 2: output 5, total = (5 - 1) * 2 + 4 - 9 = 3: pads [1, 2]
    y = F.conv1d(F.pad(f64(x), (1, 2)), f64(w), stride=2).numpy() + b[None, :, None]
    yield onnx_case("onnx_conv1d_same_upper", "1-D Conv auto_pad SAME_UPPER, stride 2, bias",
                    [mk("Conv", ["x", "w", "b"], ["y"], strides=[2], auto_pad="SAME_UPPER")],
                    [("x", x)], [("y", y)], inits=[("w", w), ("b", b)])

    T, N, I, H = 4, 2, 3, 5
    x, w, rr, b = f32(T, N, I), f32(2, 4 * H, I), f32(2, 4 * H, H), f32(2, 8 * H)
    h0, c0 = f32(2, N, H), f32(2, N, H)
    y, yh, yc = ref_lstm(x, w, rr, b, h0, c0, H, 2, 0, 0)
    yield onnx_case("onnx_lstm_all_outputs", "bidirectional LSTM, every input (sequence_lens "
                    "all T) and output",
                    [mk("LSTM", ["x", "w", "r", "b", "lens", "h0", "c0"], ["y", "y_h", "y_c"],
                        hidden_size=H, direction="bidirectional",
                        activations=["Sigmoid", "Tanh", "Tanh"] * 2)],
                    [("x", x)], [("y", y), ("y_h", yh), ("y_c", yc)],
                    inits=[("w", w), ("r", rr), ("b", b), ("lens", np.full(N, T, np.int32)),
                           ("h0", h0), ("c0", c0)], opset=14)
    x, w, rr, b = f32(N, T, I), f32(1, 3 * H, I), f32(1, 3 * H, H), f32(1, 6 * H)
    y, yh = ref_gru(x, w, rr, b, None, H, 1, 0.4, 1, 0)
    yield onnx_case("onnx_gru_reverse_clip_layout1", "reverse GRU, clip 0.4, layout 1, "
                    "linear_before_reset 0, W / R as graph inputs",
                    [mk("GRU", ["x", "w", "r", "b"], ["y", "y_h"], hidden_size=H,
                        direction="reverse", clip=0.4, layout=1)],
                    [("x", x), ("w", w), ("r", rr)], [("y", y), ("y_h", yh)],
                    inits=[("b", b)], opset=14)
    x, w, rr = f32(T, N, I), f32(1, 4 * H, I), f32(1, 4 * H, H)
    outs = [("y", np.zeros((T, 1, N, H), np.float32))]
    yield onnx_case("onnx_lstm_error_activation", "LSTM with a Relu activation: refused",
                    [mk("LSTM", ["x", "w", "r"], ["y"], hidden_size=H,
                        activations=["Sigmoid", "Relu", "Tanh"])],
                    [("x", x)], outs, inits=[("w", w), ("r", rr)],
                    error="activation 'Relu' is not supported")
    yield onnx_case("onnx_lstm_error_seq_lens", "LSTM with sequence_lens shorter than T: refused",
                    [mk("LSTM", ["x", "w", "r", "", "lens"], ["y"], hidden_size=H)],
                    [("x", x)], outs,
                    inits=[("w", w), ("r", rr), ("lens", np.array([T, T - 1], np.int32))],
                    error="sequence_lens shorter than the sequence")
    yield onnx_case("onnx_lstm_error_peepholes", "LSTM with peepholes P: refused",
                    [mk("LSTM", ["x", "w", "r", "", "", "", "", "p"], ["y"], hidden_size=H)],
                    [("x", x)], outs,
                    inits=[("w", w), ("r", rr), ("p", f32(1, 3 * H))],
                    error="peepholes (input P)")


def export_lstm_net(out_dir):
    """A bidirectional batch-first LSTM (initial states as buffers) and a Linear layer: the
    exported graph is Transpose, LSTM, Transpose, Reshape, Transpose, MatMul, Add."""
    import onnx  # noqa: F401  (torch.onnx needs it)

    class LstmNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(6, 8, batch_first=True, bidirectional=True)
            self.fc = torch.nn.Linear(16, 5)
            self.register_buffer("h0", torch.randn(2, 2, 8) * 0.2)
            self.register_buffer("c0", torch.randn(2, 2, 8) * 0.2)

        def forward(self, x):
            y, _ = self.lstm(x, (self.h0, self.c0))
            return self.fc(y)

    torch.manual_seed(20261125)
    m = LstmNet().eval()
    x = torch.randn(2, 9, 6)
    with torch.no_grad():
        y = m(x)
    path = os.path.join(out_dir, "lstm_tiny")
    torch.onnx.export(m, x, path + ".onnx", opset_version=14, input_names=["x"],
                      output_names=["y"])
    x.numpy().astype("<f4").tofile(path + ".input.bin")
    y.numpy().astype("<f4").tofile(path + ".output.bin")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_golden as G
    out = os.path.join(root, "tests", "data", "layers")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".layer") or f.endswith(".onnx"):
            os.remove(os.path.join(out, f))
    n = 0
    for c in layer_cases(G):
        with open(os.path.join(out, c.name + ".layer"), "wb") as f:
            f.write(c.encode())
        n += 1
    for c, model in onnx_cases():
        with open(os.path.join(out, c.name + ".onnx"), "wb") as f:
            f.write(model)
        with open(os.path.join(out, c.name + ".layer"), "wb") as f:
            f.write(c.encode())
        n += 1
    export_lstm_net(os.path.join(root, "tests", "data", "onnx"))
    print("wrote %d builder cases to %s and tests/data/onnx/lstm_tiny.*" % (n, out))


if __name__ == "__main__":
    main()
