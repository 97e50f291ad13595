"""golden_nn.py - golden cases for the reductions, log-softmax, the normalizations and einsum
(src/graph/builders_nn.c), computed with PyTorch in float64. Hooked into tools/gen_golden.py
(FAMILIES); cases(G) yields the cases, G being the gen_golden module.

einsum is a builder only: fuse_einsum composes reduce_sum, transpose, reshape and matmul.
einsum_ops() below makes the same ops in the same order as the C builder (tests/test_nn.c
checks that fuse_einsum prints the very text of each einsum_* case), and every case's result
is checked against torch.einsum here."""
import os

import numpy as np
import torch
import torch.nn.functional as F

REDUCE_KINDS = ("reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "reduce_l2",
                "reduce_prod", "reduce_sum_square")


def f32(v):
    return float(np.float32(v))


def ref_reduce(kind, x, axes, keepdims):
    dims = sorted(a % x.dim() for a in axes) if axes else list(range(x.dim()))
    if not dims:  # a scalar: each output folds one element
        y = x
        return {"reduce_l2": y.abs(), "reduce_sum_square": y * y}.get(kind, y)
    if kind == "reduce_mean":
        return x.mean(dim=dims, keepdim=bool(keepdims))
    if kind == "reduce_sum":
        return x.sum(dim=dims, keepdim=bool(keepdims))
    if kind == "reduce_max":
        return x.amax(dim=dims, keepdim=bool(keepdims))
    if kind == "reduce_min":
        return x.amin(dim=dims, keepdim=bool(keepdims))
    if kind == "reduce_l2":
        return torch.linalg.vector_norm(x, 2, dim=dims, keepdim=bool(keepdims))
    if kind == "reduce_sum_square":
        return (x * x).sum(dim=dims, keepdim=bool(keepdims))
    y = x  # reduce_prod: torch.prod takes one dim at a time
    for d in reversed(dims):
        y = y.prod(dim=d, keepdim=True)
    if not keepdims:
        y = y.reshape([s for i, s in enumerate(x.shape) if i not in dims])
    return y


def reduce(c, kind, x, axes=None, keepdims=1, omit_keepdims=False):
    y = ref_reduce(kind, c.T(x), axes, keepdims)
    attrs = []
    if axes is not None:
        attrs.append("axes=" + "[" + ", ".join(str(a) for a in axes) + "]")
    if not omit_keepdims:
        attrs.append("keepdims=%d" % keepdims)
    return c.emit(kind, [x], attrs, y)


def log_softmax(c, x, axis):
    return c.emit("log_softmax", [x], ["axis=%d" % axis], torch.log_softmax(c.T(x), dim=axis))


def layer_norm(c, x, scale, bias, axis, eps):
    xv = c.T(x)
    ax = axis % xv.dim()
    y = F.layer_norm(xv, xv.shape[ax:], c.T(scale), c.T(bias) if bias else None, f32(eps))
    ops = [x, scale] + ([bias] if bias else [])
    return c.emit("layer_norm", ops, ["axis=%d" % axis, "eps=" + G_fmt_num(eps)], y)


def instance_norm(c, x, scale, bias, eps):
    y = F.instance_norm(c.T(x), weight=c.T(scale), bias=c.T(bias), eps=f32(eps))
    return c.emit("instance_norm", [x, scale, bias], ["eps=" + G_fmt_num(eps)], y)


def group_norm(c, x, scale, bias, groups, eps):
    y = F.group_norm(c.T(x), groups, c.T(scale), c.T(bias), f32(eps))
    return c.emit("group_norm", [x, scale, bias],
                  ["groups=%d" % groups, "eps=" + G_fmt_num(eps)], y)


G_fmt_num = None  # gen_golden's fmt_num, set by cases()


# ------------------------------------------------------------------ einsum
def einsum_ops(c, eq, xs):
    """The ops fuse_einsum builds for eq (see fuse_einsum in src/graph/builders_nn.c)."""
    eq = eq.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = [list(t) for t in lhs.split(",")]
    if not arrow:
        once = [ch for ch in sorted(set(lhs) - {","}) if lhs.count(ch) == 1]
        out = "".join(once)
    out = list(out)
    size = {}
    for t, x in zip(terms, xs):
        for ch, d in zip(t, c.T(x).shape):
            size[ch] = d

    def sum_out(x, t, keep):
        axes = [k for k, ch in enumerate(t) if ch not in keep]
        if not axes:
            return x, t
        x = reduce(c, "reduce_sum", x, axes, 0)
        return x, [ch for ch in t if ch in keep]

    def permute(x, t, order):
        perm = [t.index(ch) for ch in order]
        if perm == list(range(len(t))):
            return x
        return c.emit("transpose", [x], ["perm=[" + ", ".join(map(str, perm)) + "]"],
                      c.T(x).permute(perm))

    def reshape(x, dims):
        if list(c.T(x).shape) == list(dims):
            return x
        return c.reshape(x, dims)

    if len(xs) == 1:
        x, t = sum_out(xs[0], terms[0], set(out))
        return permute(x, t, out)
    a, ta = sum_out(xs[0], terms[0], set(out) | set(terms[1]))
    b, tb = sum_out(xs[1], terms[1], set(out) | set(terms[0]))
    batch = [ch for ch in out if ch in ta and ch in tb]
    mi = [ch for ch in out if ch in ta and ch not in tb]
    ni = [ch for ch in out if ch in tb and ch not in ta]
    ki = [ch for ch in ta if ch not in out]
    M = int(np.prod([size[ch] for ch in mi], dtype=np.int64))
    N = int(np.prod([size[ch] for ch in ni], dtype=np.int64))
    K = int(np.prod([size[ch] for ch in ki], dtype=np.int64))
    a = permute(a, ta, batch + mi + ki)
    dims = [size[ch] for ch in batch]
    dims += [size[ch] for ch in mi] if not batch and mi else [M]
    a = reshape(a, dims + [K])
    b = permute(b, tb, batch + ki + ni)
    b = reshape(b, [size[ch] for ch in batch] + [K, N])
    y = c.matmul(a, b)
    have = batch + mi + ni
    y = reshape(y, [size[ch] for ch in have])
    return permute(y, have, out)


def einsum_case(G, name, eq, shapes):
    c = G.new(name, "einsum \"%s\" (composed ops), checked against torch.einsum" % eq)
    xs = [c.input(chr(ord("a") + k), s) for k, s in enumerate(shapes)]
    y = einsum_ops(c, eq, xs)
    want = torch.einsum(eq, *[c.T(x) for x in xs])
    assert want.shape == c.T(y).shape and torch.allclose(want, c.T(y)), (name, eq)
    c.output(y)
    return c


EINSUM_CASES = [
    ("einsum_batch_matmul", "bij,bjk->bik", [[3, 4, 5], [3, 5, 6]]),
    ("einsum_matmul", "ij,jk->ik", [[4, 7], [7, 3]]),
    ("einsum_matmul_bt", "ij,kj->ik", [[5, 6], [4, 6]]),
    ("einsum_attention_scores", "bhqd,bhkd->bhqk", [[2, 3, 5, 4], [2, 3, 7, 4]]),
    ("einsum_attention_values", "bhqk,bhkd->bhqd", [[2, 3, 5, 7], [2, 3, 7, 4]]),
    ("einsum_linear", "bnd,dk->bnk", [[2, 5, 6], [6, 3]]),
    ("einsum_dot", "i,i->", [[9], [9]]),
    ("einsum_transpose", "ij->ji", [[3, 5]]),
    ("einsum_batch_transpose", "bij->bji", [[2, 3, 4]]),
    ("einsum_implicit_spaces", " ij , jk ", [[3, 4], [4, 2]]),
    ("einsum_outer", "i,j->ij", [[4], [3]]),
    ("einsum_row_sum", "ij->i", [[4, 6]]),
    ("einsum_sum_one_side", "bij,jk->bk", [[2, 3, 4], [4, 5]]),
    ("einsum_out_permuted", "bqd,bkd->kbq", [[2, 3, 4], [2, 5, 4]]),
]


def cases(G):
    global G_fmt_num
    G_fmt_num = G.fmt_num

    # ---- reductions
    plan = [
        ("reduce_mean_keep_13", "reduce_mean", [2, 3, 4, 5], [1, 3], 1),
        ("reduce_sum_rank5_nonadjacent", "reduce_sum", [3, 1, 4, 2, 5], [0, 2, 4], 0),
        ("reduce_max_neg_axis", "reduce_max", [3, 4, 5], [-1], 0),
        ("reduce_min_all_rank0", "reduce_min", [3, 5, 2], None, 0),
        ("reduce_l2_neg2_keep", "reduce_l2", [4, 3, 5], [-2], 1),
        ("reduce_prod_axis1", "reduce_prod", [3, 7], [1], 0),
        ("reduce_sum_square_rank1_keep", "reduce_sum_square", [11], None, 1),
        ("reduce_mean_rank1_axis0", "reduce_mean", [13], [0], 0),
        ("reduce_max_outer_inner_keep", "reduce_max", [2, 1, 3, 4], [0, 3], 1),
        ("reduce_min_middle", "reduce_min", [3, 5, 4], [1], 0),
        ("reduce_sum_square_axes_20", "reduce_sum_square", [3, 4, 5], [2, 0], 1),
        ("reduce_l2_all_keep", "reduce_l2", [2, 3, 2], None, 1),
        ("reduce_prod_two_axes", "reduce_prod", [2, 3, 2, 3], [-1, 1], 1),
        ("reduce_sum_scalar", "reduce_sum", [], None, 1),
    ]
    for name, kind, shape, axes, keep in plan:
        c = G.new(name, "%s over axes %s, keepdims %d" % (kind, axes if axes else "all", keep))
        lo, hi = (0.5, 1.5) if kind == "reduce_prod" else (-1.0, 1.0)
        x = c.input("x", shape, lo, hi)
        c.output(reduce(c, kind, x, axes, keep))
        yield c

    c = G.new("reduce_defaults", "reduce_sum and reduce_mean without attributes (all axes, "
              "keepdims 1), next to one another")
    x = c.input("x", [3, 4])
    c.output(reduce(c, "reduce_sum", x, None, 1, omit_keepdims=True),
             reduce(c, "reduce_mean", x, None, 1, omit_keepdims=True))
    yield c

    c = G.new("reduce_large_100k", "reduce_sum / reduce_mean / reduce_l2 over 100017 elements "
              "with an offset (float accumulation would drift)")
    x = c.input("x", [3, 33339], 0.5, 1.5)
    c.output(reduce(c, "reduce_sum", x, None, 0), reduce(c, "reduce_mean", x, [1], 1),
             reduce(c, "reduce_l2", x, [0, 1], 0))
    yield c

    # ---- log-softmax
    for name, shape, axis, scale in [
        ("log_softmax_rank1", [7], 0, 1),
        ("log_softmax_last_large", [3, 9], -1, 300),
        ("log_softmax_axis1_rank4", [2, 5, 3, 4], 1, 10),
        ("log_softmax_axis0_rank3", [4, 3, 2], -3, 1),
    ]:
        c = G.new(name, "log_softmax along axis %d, inputs scaled by %g" % (axis, scale))
        x = c.input("x", c.rand(shape) * np.float32(scale))
        c.output(log_softmax(c, x, axis))
        yield c

    # ---- layer norm
    for name, shape, axis, eps, with_bias in [
        ("layer_norm_last", [2, 5, 7], -1, 1e-5, True),
        ("layer_norm_axis1_no_bias", [3, 4, 6, 5], 1, 1e-5, False),
        ("layer_norm_axis0_rank2", [4, 6], 0, 1e-3, True),
        ("layer_norm_rank1", [33], 0, 1e-5, True),
        ("layer_norm_neg2", [2, 3, 4, 5], -2, 0.1, True),
    ]:
        c = G.new(name, "layer_norm over axes %d.., eps %g%s" % (axis, eps,
                                                               "" if with_bias else ", no bias"))
        x = c.input("x", c.rand(shape) * np.float32(3) + np.float32(0.5))
        nshape = shape[axis % len(shape):]
        s = c.const("scale", nshape, 0.5, 1.5)
        b = c.const("bias", nshape) if with_bias else None
        c.output(layer_norm(c, x, s, b, axis, eps))
        yield c

    # ---- instance norm
    for name, shape, eps in [
        ("instance_norm_rank4", [2, 3, 5, 4], 1e-5),
        ("instance_norm_rank3", [1, 4, 7], 1e-3),
        ("instance_norm_rank5", [2, 2, 3, 2, 3], 1e-5),
    ]:
        c = G.new(name, "instance_norm on %s, eps %g" % (shape, eps))
        x = c.input("x", c.rand(shape) * np.float32(2) - np.float32(0.3))
        C = shape[1]
        inline = C <= 4
        s = c.const("scale", [C], 0.5, 1.5, inline=inline)
        b = c.const("bias", [C], inline=inline)
        c.output(instance_norm(c, x, s, b, eps))
        yield c

    # ---- group norm
    for name, shape, groups, eps in [
        ("group_norm_g3", [2, 6, 5, 3], 3, 1e-5),
        ("group_norm_g1", [2, 4, 3, 3], 1, 1e-5),
        ("group_norm_g_eq_c", [1, 6, 4, 2], 6, 1e-4),
        ("group_norm_rank3", [3, 4, 9], 2, 1e-5),
        ("group_norm_rank2", [5, 8], 4, 1e-2),
    ]:
        c = G.new(name, "group_norm with %d groups on %s, eps %g" % (groups, shape, eps))
        x = c.input("x", c.rand(shape) * np.float32(2) + np.float32(0.7))
        C = shape[1]
        s = c.const("scale", [C], 0.5, 1.5)
        b = c.const("bias", [C])
        c.output(group_norm(c, x, s, b, groups, eps))
        yield c

    # ---- einsum (composed)
    for name, eq, shapes in EINSUM_CASES:
        yield einsum_case(G, name, eq, shapes)

    # ---- after convolutions (their NHWC kernels: the plan converts around these ops)
    c = G.new("conv_norms_head", "conv2d -> group_norm -> relu -> conv2d -> instance_norm -> "
              "reduce_mean over H, W -> log_softmax; and reduce_max over C of the first conv")
    x = c.input("x", [2, 5, 9, 7])
    w1 = c.const("w1", [12, 5, 3, 3], -0.4, 0.4)
    w2 = c.const("w2", [8, 12, 3, 3], -0.3, 0.3)
    y = c.conv2d(x, w1, padding=(1, 1, 1, 1))
    y1 = c.relu(group_norm(c, y, c.const("gn.weight", [12], 0.5, 1.5), c.const("gn.bias", [12]),
                           4, 1e-5))
    y2 = c.conv2d(y1, w2, strides=(2, 2), padding=(1, 1, 1, 1))
    y2 = instance_norm(c, y2, c.const("in.weight", [8], 0.5, 1.5), c.const("in.bias", [8]), 1e-5)
    head = log_softmax(c, reduce(c, "reduce_mean", y2, [2, 3], 0), 1)
    c.output(head, reduce(c, "reduce_max", y, [1], 1))
    yield c

    # ---- together: a transformer block's pieces
    c = G.new("attention_layer_norm", "einsum attention scores, softmax, einsum values, "
              "residual, layer_norm, log_softmax head")
    q = c.input("q", [2, 2, 5, 4])
    k = c.input("k", [2, 2, 5, 4])
    v = c.input("v", [2, 2, 5, 4])
    s = einsum_ops(c, "bhqd,bhkd->bhqk", [q, k])
    p = c.softmax(s, -1)
    o = einsum_ops(c, "bhqk,bhkd->bhqd", [p, v])
    h = c.add(o, q)
    g = c.const("ln.weight", [4], 0.5, 1.5, inline=True)
    bb = c.const("ln.bias", [4], inline=True)
    h = layer_norm(c, h, g, bb, -1, 1e-5)
    c.output(log_softmax(c, h, -1), reduce(c, "reduce_mean", h, [1, 2], 0))
    yield c


# ------------------------------------------------------------------ ONNX models
# Small ONNX models of this family's operators in the forms the backend test suite does not
# cover with float32 data (LayerNormalization with Y only, GroupNormalization 18 / 21, Einsum,
# axes as an int64 initializer, LogSoftmax before opset 13, models exported by PyTorch), in the
# suite's layout: tests/data/onnx_nn/<name>/model.onnx, test_data_set_0/{input,output}_N.pb.
# tests/test_nn.c runs each one; a file "needs" lists operators of other families the model
# uses (while the loader refuses those, the model is skipped with a note).
#
#     /usr/bin/python3 tools/golden_nn.py        # rewrites tests/data/onnx_nn (deterministic)

def onnx_models():
    import onnx
    from onnx import helper, numpy_helper, TensorProto

    rng = np.random.RandomState(20261125)

    def rand(*shape, lo=-1.0, hi=1.0):
        return rng.uniform(lo, hi, size=shape).astype(np.float32)

    def model(nodes, inputs, outputs, inits=(), opset=17):
        vi = lambda n, a: helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape))
        g = helper.make_graph(nodes, "g", [vi(n, a) for n, a in inputs],
                              [vi(n, a) for n, a in outputs],
                              [numpy_helper.from_array(a, n) for n, a in inits])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="golden_nn")
        m.ir_version = 8
        return m.SerializeToString()

    def t64(x):
        return torch.from_numpy(np.asarray(x, dtype=np.float64))

    def ln(x, s, b, axis, eps):
        x = t64(x)
        ax = axis % x.dim()
        y = F.layer_norm(x, x.shape[ax:], None, None, f32(eps))
        y = y * t64(s)
        return (y + t64(b) if b is not None else y).numpy().astype(np.float32)

    def gn(x, s, b, groups, eps):  # s, b per channel
        return F.group_norm(t64(x), groups, t64(s), t64(b), f32(eps)).numpy().astype(np.float32)

    out = []

    # LayerNormalization, opset 17
    x, s, b = rand(2, 3, 8), rand(8, lo=0.5, hi=1.5), rand(8)
    out.append(("layer_norm_last_axis", model(
        [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], epsilon=1e-5)],
        [("x", x)], [("y", ln(x, s, b, -1, 1e-5))], [("s", s), ("b", b)]),
        [x], [ln(x, s, b, -1, 1e-5)], ""))
    x, s = rand(2, 3, 4, 5), rand(4, 5, lo=0.5, hi=1.5)
    out.append(("layer_norm_axis2_no_bias", model(
        [helper.make_node("LayerNormalization", ["x", "s"], ["y"], axis=2, epsilon=1e-3)],
        [("x", x)], [("y", x)], [("s", s)]), [x], [ln(x, s, None, 2, 1e-3)], ""))
    x, s, b = rand(2, 3, 6), rand(1, 6, lo=0.5, hi=1.5), rand(6)
    out.append(("layer_norm_broadcast_scale", model(
        [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=1)],
        [("x", x)], [("y", x)], [("s", s), ("b", b)]), [x], [ln(x, s, b, 1, 1e-5)], ""))
    x, s, b = rand(3, 7), rand(7, lo=0.5, hi=1.5), rand(7)  # scale / bias as graph inputs
    out.append(("layer_norm_inputs", model(
        [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "", ""])],
        [("x", x), ("s", s), ("b", b)], [("y", x)]), [x, s, b], [ln(x, s, b, -1, 1e-5)], ""))

    # GroupNormalization: opset 18 (scale / bias per group), 21 (per channel)
    x, s, b = rand(2, 6, 4, 3), rand(3, lo=0.5, hi=1.5), rand(3)
    want = gn(x, np.repeat(s, 2), np.repeat(b, 2), 3, 1e-5)
    out.append(("group_norm18_constants", model(
        [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3)],
        [("x", x)], [("y", x)], [("s", s), ("b", b)], opset=18), [x], [want], ""))
    out.append(("group_norm18_inputs", model(
        [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3)],
        [("x", x), ("s", s), ("b", b)], [("y", x)], opset=18), [x, s, b], [want], ""))
    x, s, b = rand(2, 8, 5), rand(8, lo=0.5, hi=1.5), rand(8)
    out.append(("group_norm21_channels", model(
        [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=4,
                          epsilon=1e-3)],
        [("x", x)], [("y", x)], [("s", s), ("b", b)], opset=21), [x], [gn(x, s, b, 4, 1e-3)], ""))

    # Einsum (float32)
    for name, eq, shapes in [("einsum_attention", "bhqd, bhkd -> bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
                             ("einsum_implicit", "ij,jk", [(3, 4), (4, 5)]),
                             ("einsum_batch_transpose", "bij->bji", [(2, 3, 4)])]:
        xs = [rand(*sh) for sh in shapes]
        names = ["x%d" % k for k in range(len(xs))]
        y = torch.einsum(eq.replace(" ", ""), *[t64(v) for v in xs]).numpy().astype(np.float32)
        out.append((name, model([helper.make_node("Einsum", names, ["y"], equation=eq)],
                                list(zip(names, xs)), [("y", y)], opset=12), xs, [y], ""))

    # reductions: axes as an int64 initializer (ReduceSum 13, ReduceMean 18), noop, attributes
    x = rand(3, 4, 5)
    axes = np.array([0, -1], dtype=np.int64)
    out.append(("reduce_sum13_axes_input", model(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
        [("x", x)], [("y", x)], [("axes", axes)], opset=13),
        [x], [t64(x).sum(dim=(0, 2)).numpy().astype(np.float32)], ""))
    out.append(("reduce_mean18_axes_input", model(
        [helper.make_node("ReduceMean", ["x", "axes"], ["y"])],
        [("x", x)], [("y", x)], [("axes", np.array([1], dtype=np.int64))], opset=18),
        [x], [t64(x).mean(dim=1, keepdim=True).numpy().astype(np.float32)], ""))
    out.append(("reduce_sum13_noop", model(
        [helper.make_node("ReduceSum", ["x"], ["y"], noop_with_empty_axes=1)],
        [("x", x)], [("y", x)], opset=13), [x], [x], ""))
    out.append(("reduce_l2_11_attr", model(
        [helper.make_node("ReduceL2", ["x"], ["y"], axes=[1, 2], keepdims=0)],
        [("x", x)], [("y", x)], opset=11),
        [x], [torch.linalg.vector_norm(t64(x), 2, dim=(1, 2)).numpy().astype(np.float32)], ""))

    # LogSoftmax before opset 13: over the input flattened to 2-D at axis
    x = rand(2, 3, 4) * np.float32(5)
    y = torch.log_softmax(t64(x).reshape(2, 12), dim=1).reshape(2, 3, 4)
    out.append(("log_softmax11_axis1", model(
        [helper.make_node("LogSoftmax", ["x"], ["y"], axis=1)], [("x", x)], [("y", x)], opset=11),
        [x], [y.numpy().astype(np.float32)], ""))

    # exported by PyTorch (1.13): LayerNorm at opset 17 (one node) and at opset 13 (decomposed:
    # ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add), an attention-like block
    import io
    torch.manual_seed(5)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = torch.nn.LayerNorm(8)
            with torch.no_grad():
                self.ln.weight.uniform_(0.5, 1.5)
                self.ln.bias.uniform_(-0.5, 0.5)

        def forward(self, q, k):
            s = torch.einsum("bqd,bkd->bqk", q, k)
            o = torch.einsum("bqk,bkd->bqd", torch.softmax(s, -1), k) + q
            h = self.ln(o)
            return torch.log_softmax(h, -1), h.mean(dim=(1,), keepdim=False)

    q, k = rand(2, 5, 8), rand(2, 6, 8)
    blk = Block().eval()
    with torch.no_grad():
        want = [t.numpy() for t in blk(torch.from_numpy(q), torch.from_numpy(k))]
    for opset, needs in ((17, ""), (13, "Pow Sqrt Div")):
        f = io.BytesIO()
        torch.onnx.export(blk, (torch.from_numpy(q), torch.from_numpy(k)), f,
                          opset_version=opset, input_names=["q", "k"], output_names=["p", "m"])
        out.append(("torch_block_opset%d" % opset, f.getvalue(), [q, k], want, needs))
    f = io.BytesIO()
    lnm = torch.nn.LayerNorm([3, 8]).eval()
    x = rand(2, 3, 8)
    torch.onnx.export(lnm, torch.from_numpy(x), f, opset_version=13)
    with torch.no_grad():
        y = lnm(torch.from_numpy(x)).numpy()
    out.append(("torch_layer_norm_opset13", f.getvalue(), [x], [y], "Pow Sqrt Div"))

    # refused, with a message naming what (a file "refused" holds a piece of it)
    x, s = rand(2, 4), rand(4)
    out.append(("refuse_layer_norm_mean", model(
        [helper.make_node("LayerNormalization", ["x", "s"], ["y", "mean"])],
        [("x", x)], [("y", x), ("mean", x[:, :1])], [("s", s)]), [x], [], "",
        "Mean output is not supported"))
    xs = [rand(2, 3), rand(3, 4), rand(4, 5)]
    out.append(("refuse_einsum_three", model(
        [helper.make_node("Einsum", ["x0", "x1", "x2"], ["y"], equation="ij,jk,kl->il")],
        [("x%d" % k, v) for k, v in enumerate(xs)], [("y", x)], opset=12), xs, [],
        "", "only 1 or 2 operands"))
    x = rand(2, 3, 3)
    out.append(("refuse_einsum_ellipsis", model(
        [helper.make_node("Einsum", ["x"], ["y"], equation="...ii->...i")],
        [("x", x)], [("y", x[:, 0])], opset=12), [x], [], "", "ellipsis"))
    return out


def write_onnx_models(root):
    import shutil
    from onnx import numpy_helper
    d = os.path.join(root, "tests", "data", "onnx_nn")
    shutil.rmtree(d, ignore_errors=True)
    for name, blob, ins, outs, needs, *refused in onnx_models():
        sub = os.path.join(d, name)
        os.makedirs(os.path.join(sub, "test_data_set_0"))
        with open(os.path.join(sub, "model.onnx"), "wb") as f:
            f.write(blob)
        for fname, text in (("needs", needs), ("refused", refused[0] if refused else "")):
            if text:
                with open(os.path.join(sub, fname), "w") as f:
                    f.write(text + "\n")
        for kind, arrays in (("input", ins), ("output", outs)):
            for i, a in enumerate(arrays):
                t = numpy_helper.from_array(np.ascontiguousarray(a, dtype=np.float32))
                with open(os.path.join(sub, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                    f.write(t.SerializeToString())
    print("wrote %s" % d)


if __name__ == "__main__":
    write_onnx_models(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
