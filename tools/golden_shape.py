"""golden_shape.py - golden cases of the data movement family (gather, expand, tile, pad,
resize) for tools/gen_golden.py, which imports this module and calls cases(G).

References: PyTorch where it has the op (index_select, expand, repeat, F.pad, F.interpolate);
pad's reflect / edge modes with cropping and resize's ONNX-only modes use the small numpy
references below, cross-checked against PyTorch (and, when installed, against the ONNX
package's own Resize reference) on the configurations both have.
"""
import numpy as np
import torch
import torch.nn.functional as F

PAD_MODES = {"constant": 0, "reflect": 1, "edge": 2}
RESIZE_MODES = {"nearest": 0, "linear": 1, "cubic": 2}
COORDS = {"half_pixel": 0, "asymmetric": 1, "pytorch_half_pixel": 2, "align_corners": 3,
          "half_pixel_symmetric": 4}
NEAREST = {"round_prefer_floor": 0, "round_prefer_ceil": 1, "floor": 2, "ceil": 3}


def ints(xs):
    return "[" + ", ".join(str(int(v)) for v in xs) + "]"


# ------------------------------------------------------------------ pad
def ref_pad(x, begins, ends, mode, value):
    """ONNX Pad: pad the positive amounts (numpy's constant / reflect / edge), then crop the
    negative ones."""
    a = x.numpy()
    width = [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends)]
    if mode == "constant":
        a = np.pad(a, width, mode="constant", constant_values=float(np.float32(value)))
    else:
        a = np.pad(a, width, mode=mode)
    sl = tuple(slice(-min(b, 0), a.shape[i] + min(e, 0)) for i, (b, e) in enumerate(zip(begins, ends)))
    return torch.from_numpy(np.ascontiguousarray(a[sl]))


def emit_pad(c, x, begins, ends, mode="constant", value=0.0):
    xv = c.T(x)
    y = ref_pad(xv, begins, ends, mode, value)
    r = len(begins)
    flat = []  # torch's order: last axis first, (begin, end) pairs
    for i in reversed(range(r)):
        flat += [begins[i], ends[i]]
    if mode == "constant":
        t = F.pad(xv, flat, mode="constant", value=float(np.float32(value)))
        assert torch.equal(t, y), "pad reference (constant)"
    elif r == 4 and min(begins + ends) >= 0 and not any(begins[:2] + ends[:2]):
        tm = {"reflect": "reflect", "edge": "replicate"}[mode]  # torch: H, W of NCHW
        assert torch.allclose(F.pad(xv, flat[:4], mode=tm), y), "pad reference " + mode
    attrs = ["begins=" + ints(begins), "ends=" + ints(ends)]
    if value != 0.0 or mode == "constant":
        attrs.append("value=" + c_fmt(value))
    attrs.append("mode=%d" % PAD_MODES[mode])
    return c.emit("pad", [x], attrs, y)


def c_fmt(v):
    v = np.float32(v)
    s = str(v)
    return s[:-2] if s.endswith(".0") else s


# ------------------------------------------------------------------ resize
def axis_weights(n_in, n_out, scale, mode, coord, nearest, A, exclude):
    """The [n_out, n_in] matrix resizing one axis as ONNX Resize does: scale is the caller's
    (or None: n_out / n_in in double); source coordinates per coordinate mode; taps clamped to
    the axis (the reference pads with edge values)."""
    s = float(n_out) / n_in if scale is None else float(np.float32(scale))
    width = s * n_in
    m = np.zeros((n_out, n_in))
    for x in range(n_out):
        if coord == "align_corners":
            xo = 0.0 if width == 1 else x * (n_in - 1) / (width - 1)
        elif coord == "asymmetric":
            xo = x / s
        elif coord == "pytorch_half_pixel":
            xo = -0.5 if width == 1 else (x + 0.5) / s - 0.5
        elif coord == "half_pixel_symmetric":
            xo = n_in / 2 * (1 - n_out / width) + (x + 0.5) / s - 0.5
        else:
            xo = (x + 0.5) / s - 0.5
        base = int(np.floor(xo))
        ratio = xo - base
        if ratio == 0:  # prefer the pixel on the left: ratio in (0, 1]
            base, ratio = base - 1, 1.0
        if mode == "nearest":
            if ratio == 1:
                right = 1
            else:
                right = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
                         "floor": 0, "ceil": 1}[nearest]
            taps, w = [base + int(right)], [1.0]
        elif mode == "linear":
            taps, w = [base, base + 1], [1 - ratio, ratio]
        else:
            def cub(d):
                d = abs(d)
                if d <= 1:
                    return (A + 2) * d ** 3 - (A + 3) * d ** 2 + 1
                return A * d ** 3 - 5 * A * d ** 2 + 8 * A * d - 4 * A
            taps = [base - 1, base, base + 1, base + 2]
            w = [cub(ratio + 1), cub(ratio), cub(1 - ratio), cub(2 - ratio)]
        if exclude and mode != "nearest":
            w = [0.0 if (t < 0 or t >= n_in) else v for t, v in zip(taps, w)]
            tot = sum(w)
            w = [v / tot for v in w]
        for t, v in zip(taps, w):
            m[x, min(max(t, 0), n_in - 1)] += v
    return m


def ref_resize(x, sizes, scales, mode, coord, nearest, A, exclude):
    a = x.numpy()
    for d in range(a.ndim):
        if sizes[d] == a.shape[d] and (scales is None or scales[d] == 1):
            continue
        m = axis_weights(a.shape[d], sizes[d], None if scales is None else scales[d], mode, coord,
                         nearest, A, exclude)
        a = np.moveaxis(np.tensordot(m, np.moveaxis(a, d, 0), axes=(1, 0)), 0, d)
    return torch.from_numpy(np.ascontiguousarray(a))


def onnx_resize(x, sizes, scales, mode, coord, nearest, A, exclude):
    """The ONNX package's own reference (onnx.backend.test.case.node.resize), or None."""
    try:
        from onnx.backend.test.case.node import resize as R
    except Exception:
        return None
    if coord == "half_pixel_symmetric":
        return None
    if mode == "nearest":
        coeffs = lambda r: R.nearest_coeffs(r, mode=nearest)
    elif mode == "linear":
        coeffs = R.linear_coeffs
    else:
        coeffs = lambda r: R.cubic_coeffs(r, A=A)
    a = x.numpy()
    if scales is None:
        return R.interpolate_nd(a, coeffs, output_size=list(sizes), coordinate_transformation_mode=coord,
                                exclude_outside=exclude)
    return R.interpolate_nd(a, coeffs, scale_factors=[float(np.float32(s)) for s in scales],
                            coordinate_transformation_mode=coord, exclude_outside=exclude)


def emit_resize(c, x, sizes, scales=None, mode="nearest", coord="half_pixel",
                nearest="round_prefer_floor", A=-0.75, exclude=0, torch_ref=None):
    xv = c.T(x)
    y = ref_resize(xv, sizes, scales, mode, coord, nearest, A, exclude)
    o = onnx_resize(xv, sizes, scales, mode, coord, nearest, A, exclude)
    if o is not None:
        assert o.shape == tuple(y.shape) and np.allclose(o, y.numpy(), atol=1e-9), "resize vs onnx"
    if torch_ref is not None:
        assert torch_ref.shape == y.shape and torch.allclose(torch_ref, y, atol=1e-9), \
            "resize vs torch: %g" % float((torch_ref - y).abs().max())
    attrs = ["sizes=" + ints(sizes)]
    if scales is not None:
        attrs.append("scales=[" + ", ".join(c_fmt(s) for s in scales) + "]")
    attrs += ["mode=%d" % RESIZE_MODES[mode], "coordinates=%d" % COORDS[coord],
              "nearest=%d" % NEAREST[nearest], "cubic_coeff_a=" + c_fmt(A),
              "exclude_outside=%d" % exclude]
    return c.emit("resize", [x], attrs, y)


def interp(xv, mode, **kw):
    return F.interpolate(xv, mode=mode, **kw)


# ------------------------------------------------------------------ cases
def cases(G):
    # gather
    c = G.new("gather_axis0_vector", "gather rows of a 3-D input with a repeated index list")
    x = c.input("x", [5, 3, 4])
    i = c.const("idx", np.array([4, 0, 2, 2, 1], dtype=np.float32))
    c.output(c.emit("gather", [x, i], ["axis=0"], torch.index_select(c.T(x), 0, torch.tensor([4, 0, 2, 2, 1]))))
    yield c

    c = G.new("gather_negative_axis_2d_indices", "axis -1, 2-D indices with negative ones")
    x = c.input("x", [2, 3, 7])
    idx = np.array([[-1, 0, 3], [6, -7, -2]])
    i = c.const("idx", idx.astype(np.float32))
    norm = torch.tensor(np.where(idx < 0, idx + 7, idx))
    want = c.T(x)[:, :, norm.reshape(-1)].reshape(2, 3, 2, 3)
    c.output(c.emit("gather", [x, i], ["axis=-1"], want))
    yield c

    c = G.new("gather_scalar_index", "a scalar index drops the axis; inline constants")
    x = c.input("x", [3, 4, 5])
    i = c.const("two", np.array([2, 0], dtype=np.float32), inline=True)
    y1 = c.emit("gather", [x, 2], ["axis=1"], c.T(x)[:, 2, :])
    y2 = c.emit("gather", [x, i], ["axis=2"], c.T(x)[:, :, [2, 0]])
    c.output(y1, y2)
    yield c

    c = G.new("gather_rank1_input", "rank-1 input, 3-D indices (rank 3 result), after a relu")
    x = c.input("x", [6])
    idx = np.array([[[5, 0], [1, 1]], [[2, 3], [4, 5]], [[0, 0], [3, 2]]])
    i = c.const("idx", idx.astype(np.float32))
    r = c.relu(x)
    c.output(c.emit("gather", [r, i], ["axis=0"], c.T(r)[torch.tensor(idx)]))
    yield c

    # expand
    c = G.new("expand_both_directions", "[1,4,1,5] with [2,1,3,1]: numpy broadcasting both ways")
    x = c.input("x", [1, 4, 1, 5])
    c.output(c.emit("expand", [x], ["shape=[2, 4, 3, 5]"], c.T(x).expand(2, 4, 3, 5)))
    yield c

    c = G.new("expand_rank_grows", "[3,1] to [2,3,4]; [1] to [5]; an expand of an expand")
    x = c.input("x", [3, 1])
    s = c.input("s", [1])
    y = c.emit("expand", [x], ["shape=[2, 3, 4]"], c.T(x).expand(2, 3, 4))
    z = c.emit("expand", [y], ["shape=[3, 2, 3, 4]"], c.T(y).expand(3, 2, 3, 4))
    w = c.emit("expand", [s], ["shape=[5]"], c.T(s).expand(5))
    c.output(z, w)
    yield c

    # tile
    r = np.random.RandomState(11)
    for k in range(5):
        rank = k + 1
        shape = [int(v) for v in r.randint(1, 4, size=rank)]
        reps = [int(v) for v in r.randint(1, 4, size=rank)]
        c = G.new("tile_rank%d" % rank, "tile %s by %s" % (shape, reps))
        x = c.input("x", shape)
        c.output(c.emit("tile", [x], ["repeats=" + ints(reps)], c.T(x).repeat(*reps)))
        yield c

    # pad
    c = G.new("pad_constant_nchw", "constant 1.5 on H and W, asymmetric")
    x = c.input("x", [1, 2, 4, 5])
    c.output(emit_pad(c, x, [0, 0, 1, 2], [0, 0, 3, 0], "constant", 1.5))
    yield c

    c = G.new("pad_constant_crop", "negative pads crop, positive pad; all axes of a rank-3 input")
    x = c.input("x", [3, 5, 6])
    c.output(emit_pad(c, x, [1, -2, 0], [-1, 1, -3], "constant", -2.0))
    yield c

    c = G.new("pad_reflect_full", "reflect at full width (pad = size - 1) on H and W")
    x = c.input("x", [2, 3, 4, 5])
    c.output(emit_pad(c, x, [0, 0, 3, 4], [0, 0, 3, 4], "reflect"))
    yield c

    c = G.new("pad_reflect_crop", "reflect with a crop on the other side, rank 5")
    x = c.input("x", [1, 2, 3, 4, 5])
    c.output(emit_pad(c, x, [0, 1, 2, -1, 3], [0, -1, 0, 2, -2], "reflect"))
    yield c

    c = G.new("pad_edge", "edge (replicate) on the last axes and on N, rank 4")
    x = c.input("x", [1, 3, 3, 4])
    c.output(emit_pad(c, x, [0, 0, 2, 5], [0, 0, 4, 1], "edge"))
    y = emit_pad(c, x, [2, 0, 0, -1], [1, 1, 0, 0], "edge")
    c.output(y)
    yield c

    c = G.new("pad_rank1_rank2", "1-D reflect and 2-D edge with default value")
    x = c.input("x", [7])
    z = c.input("z", [2, 3])
    c.output(emit_pad(c, x, [6], [2], "reflect"), emit_pad(c, z, [1, 2], [0, 2], "edge"))
    yield c

    # resize: PyTorch's F.interpolate, as torch.onnx exports it
    c = G.new("resize_nearest_scale2", "F.interpolate nearest, scale_factor 2 (asymmetric, floor)")
    x = c.input("x", [1, 3, 5, 4])
    t = interp(c.T(x), "nearest", scale_factor=2)
    c.output(emit_resize(c, x, [1, 3, 10, 8], [1, 1, 2, 2], "nearest", "asymmetric", "floor", torch_ref=t))
    yield c

    c = G.new("resize_nearest_odd_sizes", "F.interpolate nearest to sizes 7x5 and 3x2 (sizes only)")
    x = c.input("x", [2, 2, 4, 3])
    t1 = interp(c.T(x), "nearest", size=(7, 5))
    t2 = interp(c.T(x), "nearest", size=(3, 2))
    c.output(emit_resize(c, x, [2, 2, 7, 5], None, "nearest", "asymmetric", "floor", torch_ref=t1),
             emit_resize(c, x, [2, 2, 3, 2], None, "nearest", "asymmetric", "floor", torch_ref=t2))
    yield c

    c = G.new("resize_bilinear_align_corners", "F.interpolate bilinear, align_corners=True, up and down")
    x = c.input("x", [1, 2, 5, 6])
    t1 = interp(c.T(x), "bilinear", size=(9, 4), align_corners=True)
    t2 = interp(c.T(x), "bilinear", scale_factor=2, align_corners=True)
    c.output(emit_resize(c, x, [1, 2, 9, 4], None, "linear", "align_corners", torch_ref=t1),
             emit_resize(c, x, [1, 2, 10, 12], [1, 1, 2, 2], "linear", "align_corners", torch_ref=t2))
    yield c

    c = G.new("resize_bilinear_half_pixel", "F.interpolate bilinear, align_corners=False: scale 2, sizes 3x7")
    x = c.input("x", [2, 3, 4, 5])
    t1 = interp(c.T(x), "bilinear", scale_factor=2, align_corners=False)
    t2 = interp(c.T(x), "bilinear", size=(3, 7), align_corners=False)
    t3 = interp(c.T(x), "bilinear", scale_factor=0.5, align_corners=False)
    c.output(emit_resize(c, x, [2, 3, 8, 10], [1, 1, 2, 2], "linear", "pytorch_half_pixel", torch_ref=t1),
             emit_resize(c, x, [2, 3, 3, 7], None, "linear", "half_pixel", torch_ref=t2),
             emit_resize(c, x, [2, 3, 2, 2], [1, 1, 0.5, 0.5], "linear", "pytorch_half_pixel", torch_ref=t3))
    yield c

    c = G.new("resize_bicubic", "F.interpolate bicubic (A = -0.75), align_corners False and True")
    x = c.input("x", [1, 2, 5, 4])
    t1 = interp(c.T(x), "bicubic", scale_factor=2, align_corners=False)
    t2 = interp(c.T(x), "bicubic", size=(3, 7), align_corners=True)
    t3 = interp(c.T(x), "bicubic", size=(2, 3), align_corners=False)
    c.output(emit_resize(c, x, [1, 2, 10, 8], [1, 1, 2, 2], "cubic", "half_pixel", torch_ref=t1),
             emit_resize(c, x, [1, 2, 3, 7], None, "cubic", "align_corners", torch_ref=t2),
             emit_resize(c, x, [1, 2, 2, 3], None, "cubic", "half_pixel", torch_ref=t3))
    yield c

    c = G.new("resize_linear_1d_3d", "linear on a 3-D input (F.interpolate linear) and trilinear 5-D")
    x = c.input("x", [2, 3, 6])
    v = c.input("v", [1, 2, 3, 4, 2])
    t1 = interp(c.T(x), "linear", size=11, align_corners=False)
    t2 = interp(c.T(v), "trilinear", size=(5, 3, 4), align_corners=True)
    c.output(emit_resize(c, x, [2, 3, 11], None, "linear", "half_pixel", torch_ref=t1),
             emit_resize(c, v, [1, 2, 5, 3, 4], None, "linear", "align_corners", torch_ref=t2))
    yield c

    # resize: the other ONNX attribute combinations
    c = G.new("resize_cubic_exclude_outside", "cubic A=-0.5, exclude_outside, half_pixel, up and down")
    x = c.input("x", [1, 1, 5, 6])
    c.output(emit_resize(c, x, [1, 1, 8, 9], [1, 1, 1.6, 1.5], "cubic", "half_pixel", A=-0.5, exclude=1),
             emit_resize(c, x, [1, 1, 3, 4], [1, 1, 0.6, 0.7], "cubic", "half_pixel", A=-0.5, exclude=1))
    yield c

    c = G.new("resize_nearest_modes", "nearest: round_prefer_ceil asymmetric, ceil half_pixel, "
              "round_prefer_floor pytorch_half_pixel, floor align_corners")
    x = c.input("x", [1, 2, 4, 3])
    c.output(emit_resize(c, x, [1, 2, 7, 8], None, "nearest", "asymmetric", "round_prefer_ceil"),
             emit_resize(c, x, [1, 2, 6, 5], None, "nearest", "half_pixel", "ceil"),
             emit_resize(c, x, [1, 2, 3, 1], None, "nearest", "pytorch_half_pixel", "round_prefer_floor"),
             emit_resize(c, x, [1, 2, 8, 2], None, "nearest", "align_corners", "floor"))
    yield c

    c = G.new("resize_half_pixel_symmetric", "linear and cubic half_pixel_symmetric with scales "
              "whose output sizes round down")
    x = c.input("x", [1, 2, 4, 5])
    c.output(emit_resize(c, x, [1, 2, 5, 8], [1, 1, 1.3, 1.7], "linear", "half_pixel_symmetric"),
             emit_resize(c, x, [1, 2, 2, 3], [1, 1, 0.6, 0.7], "cubic", "half_pixel_symmetric"))
    yield c

    c = G.new("resize_channels_axis", "linear on the channel axis and asymmetric cubic on W, "
              "pytorch_half_pixel to size 1")
    x = c.input("x", [2, 3, 4, 5])
    c.output(emit_resize(c, x, [2, 5, 4, 9], None, "linear", "asymmetric"),
             emit_resize(c, x, [2, 3, 4, 1], None, "linear", "pytorch_half_pixel"),
             emit_resize(c, x, [2, 3, 4, 7], [1, 1, 1, 1.5], "cubic", "asymmetric"))
    yield c

    # between convolutions (the SIMD paths keep activations NHWC around these NCHW ops)
    c = G.new("shape_ops_between_convs", "conv, nearest x2, reflect pad, conv, bilinear, edge pad, "
              "gather of channels, tile, expand + add")
    x = c.input("x", [1, 3, 7, 6])
    w1 = c.const("w1", [8, 3, 3, 3], -0.4, 0.4)
    w2 = c.const("w2", [6, 8, 3, 3], -0.3, 0.3)
    y = c.relu(c.conv2d(x, w1, padding=(1, 1, 1, 1)))
    t = interp(c.T(y), "nearest", scale_factor=2)
    y = emit_resize(c, y, [1, 8, 14, 12], [1, 1, 2, 2], "nearest", "asymmetric", "floor", torch_ref=t)
    y = emit_pad(c, y, [0, 0, 1, 1], [0, 0, 1, 1], "reflect")
    y = c.conv2d(y, w2, strides=(2, 2))
    t = interp(c.T(y), "bilinear", size=(9, 11), align_corners=False)
    y = emit_resize(c, y, [1, 6, 9, 11], None, "linear", "half_pixel", torch_ref=t)
    y = emit_pad(c, y, [0, 0, 2, 0], [0, 0, 0, 1], "edge")
    i = c.const("ch", np.array([5, 0, 3], dtype=np.float32), inline=True)
    g = c.emit("gather", [y, i], ["axis=1"], c.T(y)[:, [5, 0, 3]])
    t = c.emit("tile", [g], ["repeats=[1, 2, 1, 1]"], c.T(g).repeat(1, 2, 1, 1))
    b = c.const("b", [6, 1, 1])
    e = c.emit("expand", [b], ["shape=[1, 6, 11, 12]"], c.T(b).expand(1, 6, 11, 12))
    c.output(c.relu(c.add(t, e)))
    yield c
