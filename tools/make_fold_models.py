#!/usr/bin/env python3
"""make_fold_models.py - small ONNX graphs for the loader's load-time folding and refusals.

Usage (from the repository root; needs numpy and Debian's python3-onnx):

    /usr/bin/python3 tools/make_fold_models.py [out_dir] [bad_dir]
        (defaults tests/data/zoo and tests/data/onnx_bad; deterministic, committed)

Each fold_<case>.onnx computes a float32 result from a float32 input through the shape
arithmetic PyTorch's exporter writes (Shape, Gather, Unsqueeze, Concat, Div on int64, Range,
Cast, ConstantOfShape, Equal / Where, If on a known condition, Slice to INT64_MAX,
ReduceProd, Mod, Tile, Expand of a parameter, a Pad of zeros), which the loader must fold
away. Next to it,
as tests/test_zoo.c reads them: <case>.input.bin and <case>.output.bin (raw float32 LE),
the output computed here with numpy.

Each bad_<case>.onnx in bad_dir must be refused: <case>.expect holds the result code name
and text the loader's message must contain (one per line: `code UNSUPPORTED`, then
`text ...` lines), checked by tests/test_zoo.c.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
INT64_MAX = np.iinfo(np.int64).max


def const(name, arr):
    arr = np.asarray(arr)
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name))


def model(name, nodes, x_shape, y_shape, inits=(), opset=OPSET):
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_fold_models.py")
    onnx.checker.check_model(m)
    return m


def cases():
    rng = np.random.RandomState(7)

    # x.view(x.size(0), -1)
    x = rng.randn(2, 3, 4, 5).astype(np.float32)
    yield "fold_view", model("fold_view", [
        helper.make_node("Shape", ["x"], ["s"]),
        const("i0", np.array(0, np.int64)),
        helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        const("ax", np.array([0], np.int64)),
        helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
        const("m1", np.array([-1], np.int64)),
        helper.make_node("Concat", ["n1", "m1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ], x.shape, [2, 60]), x, x.reshape(2, -1)

    # ShuffleNet's channel shuffle: view(n, g, c / g, h, w).transpose(1, 2).view(n, c, h, w)
    x = rng.randn(1, 8, 3, 3).astype(np.float32)
    nodes = [helper.make_node("Shape", ["x"], ["s"])]
    for i, nm in enumerate("nchw"):
        nodes += [const("i%d" % i, np.array(i, np.int64)),
                  helper.make_node("Gather", ["s", "i%d" % i], [nm], axis=0),
                  const("ax%d" % i, np.array([0], np.int64)),
                  helper.make_node("Unsqueeze", [nm, "ax%d" % i], [nm + "1"])]
    nodes += [const("g", np.array([4], np.int64)),
              helper.make_node("Div", ["c1", "g"], ["cg"]),
              helper.make_node("Concat", ["n1", "g", "cg", "h1", "w1"], ["s5"], axis=0),
              helper.make_node("Reshape", ["x", "s5"], ["x5"]),
              helper.make_node("Transpose", ["x5"], ["t5"], perm=[0, 2, 1, 3, 4]),
              helper.make_node("Concat", ["n1", "c1", "h1", "w1"], ["s4"], axis=0),
              helper.make_node("Reshape", ["t5", "s4"], ["y"])]
    y = x.reshape(1, 4, 2, 3, 3).transpose(0, 2, 1, 3, 4).reshape(1, 8, 3, 3)
    yield "fold_shuffle", model("fold_shuffle", nodes, x.shape, y.shape), x, y

    # positions: x * float(arange(W)) + ConstantOfShape(shape(x), 0.5)
    x = rng.randn(2, 3, 7).astype(np.float32)
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             const("i2", np.array(2, np.int64)),
             helper.make_node("Gather", ["s", "i2"], ["w"], axis=0),
             const("zero", np.array(0, np.int64)), const("one", np.array(1, np.int64)),
             helper.make_node("Range", ["zero", "w", "one"], ["r"]),
             helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["x", "rf"], ["xr"]),
             helper.make_node("ConstantOfShape", ["s"], ["half"],
                              value=numpy_helper.from_array(np.array([0.5], np.float32))),
             helper.make_node("Add", ["xr", "half"], ["y"])]
    yield "fold_range", model("fold_range", nodes, x.shape, x.shape), x, x * np.arange(7) + 0.5

    # Tile by Where(Not(Equal(shape, [2, 5])), 1, shape); Slice to ReduceProd + Mod of it
    x = rng.randn(2, 3).astype(np.float32)
    nodes = [const("k", np.array([2, 5], np.int64)), const("ones", np.array([1, 1], np.int64)),
             const("three", np.array([3], np.int64)), const("minus1", np.array([-1], np.int64)),
             const("zero1", np.array([0], np.int64)),
             helper.make_node("Shape", ["x"], ["s"]),                      # [2, 3]
             helper.make_node("Equal", ["s", "k"], ["eq"]),                # [T, F]
             helper.make_node("Not", ["eq"], ["ne"]),                      # [F, T]
             helper.make_node("Where", ["ne", "ones", "s"], ["rep"]),      # [2, 1]
             helper.make_node("Tile", ["x", "rep"], ["t"]),                # [4, 3]
             helper.make_node("ReduceProd", ["s"], ["p"], keepdims=1),     # [6]
             helper.make_node("Mod", ["p", "three"], ["pm"]),              # [0]
             helper.make_node("Add", ["pm", "p"], ["total"]),              # [6]
             helper.make_node("Reshape", ["t", "minus1"], ["flat"]),       # [12]
             helper.make_node("Slice", ["flat", "zero1", "total"], ["y"])]  # [6]
    t = np.tile(x, (2, 1))
    yield "fold_where_tile", model("fold_where_tile", nodes, x.shape, [6]), x, t.reshape(-1)[:6]

    # If on a known condition (the exporter's rank checks), a branch reading the outer x
    x = rng.randn(4, 6).astype(np.float32)
    then_g = helper.make_graph([
        const("tshape", np.array([2, 12], np.int64)),
        helper.make_node("Reshape", ["x", "tshape"], ["then_out"])], "then", [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [2, 12])])
    else_g = helper.make_graph([
        helper.make_node("Neg", ["x"], ["else_out"])], "else", [],
        [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [4, 6])])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Size", ["s"], ["rank"]),
             const("two", np.array(2, np.int64)),
             helper.make_node("Equal", ["rank", "two"], ["is2"]),
             helper.make_node("If", ["is2"], ["y"], then_branch=then_g, else_branch=else_g)]
    yield "fold_if", model("fold_if", nodes, x.shape, [2, 12]), x, x.reshape(2, 12)

    # vit's class token: Expand a [1, 1, C] parameter to the batch, Concat with x; Slice to the end
    x = rng.randn(2, 5, 8).astype(np.float32)
    cls = rng.randn(1, 1, 8).astype(np.float32)
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             const("st", np.array([0], np.int64)), const("en", np.array([1], np.int64)),
             helper.make_node("Slice", ["s", "st", "en"], ["n"]),
             const("rest", np.array([1, 8], np.int64)),
             helper.make_node("Concat", ["n", "rest"], ["eshape"], axis=0),
             helper.make_node("Expand", ["cls", "eshape"], ["tok"]),
             helper.make_node("Concat", ["tok", "x"], ["cat"], axis=1),
             const("s1", np.array([1], np.int64)), const("big", np.array([INT64_MAX], np.int64)),
             helper.make_node("Slice", ["s", "s1", "big"], ["tail"]),
             helper.make_node("ReduceProd", ["tail"], ["tp"], keepdims=1),
             const("one1", np.array([1], np.int64)),
             helper.make_node("Add", ["tp", "one1"], ["unused"]),
             helper.make_node("Identity", ["cat"], ["y"])]
    y = np.concatenate([np.broadcast_to(cls, (2, 1, 8)), x], axis=1)
    yield "fold_class_token", model("fold_class_token", nodes, x.shape, y.shape,
                                    inits=[("cls", cls)]), x, y

    # densenet's pre-activation: Concat -> BatchNormalization (constant statistics) -> Relu ->
    # 1x1 Conv, and a batch norm on the graph input itself; neither can fold into a conv's
    # weights, so the loader makes them per-channel multiply-adds (x * s + t)
    x = rng.randn(2, 6, 5, 7).astype(np.float32)
    bn = {}
    for tag, c in (("a", 6), ("b", 12)):
        bn[tag] = [rng.uniform(0.5, 1.5, c).astype(np.float32), rng.randn(c).astype(np.float32),
                   rng.randn(c).astype(np.float32), rng.uniform(0.2, 2.0, c).astype(np.float32)]
    w = (rng.randn(8, 12, 1, 1) * 0.3).astype(np.float32)
    nodes = [helper.make_node("BatchNormalization", ["x", "as", "ab", "am", "av"], ["xa"],
                              epsilon=1e-3),
             helper.make_node("Relu", ["x"], ["xr"]),
             helper.make_node("Concat", ["xa", "xr"], ["cat"], axis=1),
             helper.make_node("BatchNormalization", ["cat", "bs", "bb", "bm", "bv"], ["cn"]),
             helper.make_node("Relu", ["cn"], ["cr"]),
             helper.make_node("Conv", ["cr", "w"], ["y"])]
    inits = [("w", w)]
    for tag in "ab":
        inits += [(tag + k, v) for k, v in zip("sbmv", bn[tag])]

    def batch_norm(v, p, eps):
        sh = (1, -1, 1, 1)
        return ((v - p[2].reshape(sh)) / np.sqrt(p[3].reshape(sh).astype(np.float64) + eps) *
                p[0].reshape(sh) + p[1].reshape(sh))
    xd = x.astype(np.float64)
    cat = np.concatenate([batch_norm(xd, bn["a"], 1e-3), np.maximum(xd, 0)], axis=1)
    cr = np.maximum(batch_norm(cat, bn["b"], 1e-5), 0)
    y = np.einsum("kc,nchw->nkhw", w[:, :, 0, 0].astype(np.float64), cr).astype(np.float32)
    yield "fold_batch_norm_preact", model("fold_batch_norm_preact", nodes, x.shape, y.shape,
                                          inits=inits), x, y

    # densenet's transitions as torch.onnx.export writes them: a Pad of zeros before the
    # average pool, no padding at all (loaded as nothing: tests/test_zoo.c checks the plan)
    x = rng.randn(1, 4, 6, 6).astype(np.float32)
    y = x.reshape(1, 4, 3, 2, 3, 2).mean(axis=(3, 5), dtype=np.float64).astype(np.float32)
    yield "fold_pad_zero", model("fold_pad_zero", [
        helper.make_node("Pad", ["x", "pads"], ["xp"], mode="constant"),
        helper.make_node("AveragePool", ["xp"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
        x.shape, y.shape, inits=[("pads", np.zeros(8, np.int64))]), x, y


def external_case():
    """A model whose every initializer (float weights, an int64 shape) is in an external file
    beside it, as torch.onnx.export writes models over 2 GB."""
    rng = np.random.RandomState(11)
    x = rng.randn(2, 3, 4).astype(np.float32)
    w = rng.randn(12, 5).astype(np.float32)
    b = rng.randn(5).astype(np.float32)
    shape = np.array([2, 12], np.int64)
    y = np.tanh(x.reshape(2, 12) @ w + b)
    m = model("ext_data", [
        helper.make_node("Reshape", ["x", "shape"], ["x2"]),
        helper.make_node("MatMul", ["x2", "w"], ["h"]),
        helper.make_node("Add", ["h", "b"], ["hb"]),
        helper.make_node("Tanh", ["hb"], ["y"])], x.shape, y.shape,
        inits=[("shape", shape), ("w", w), ("b", b)])
    return m, x, y


def with_bad_location(m, location):
    """m with its first initializer pointing outside (or nowhere)."""
    from onnx import external_data_helper
    m = onnx.ModelProto.FromString(m.SerializeToString())
    t = m.graph.initializer[0]
    n = len(t.raw_data) if t.HasField("raw_data") else 0
    external_data_helper.set_external_data(t, location=location, offset=0, length=n)
    t.data_location = TensorProto.EXTERNAL
    t.ClearField("raw_data")
    return m


def bad_cases():
    x_shape = [2, 3]
    # an int64 tensor computed at load used as float data
    yield "bad_int_data", model("bad_int_data", [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Add", ["x", "s"], ["y"])], x_shape, x_shape), \
        ["code UNSUPPORTED", "text input 's' (int64, shape [2]) is computed at load time", "text (Add"]
    # every unsupported operator at once, with counts, and the detection hint
    yield "bad_many_ops", model("bad_many_ops", [
        helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
        helper.make_node("TopK", ["v", "k"], ["v2", "i2"], axis=1),
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["sel"]),
        helper.make_node("Relu", ["v2"], ["y"])], x_shape, [2, 1],
        inits=[("k", np.array([1], np.int64)),
               ("boxes", np.zeros((1, 3, 4), np.float32)),
               ("scores", np.zeros((1, 1, 3), np.float32))]), \
        ["code UNSUPPORTED",
         "text unsupported: TopK (2 nodes), NonZero (1 node), NonMaxSuppression (1 node)",
         "text detection post-processing"]
    # a Cast of a run-time value to an integer type
    yield "bad_cast_runtime", model("bad_cast_runtime", [
        helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT64),
        helper.make_node("Cast", ["xi"], ["y"], to=TensorProto.FLOAT)], x_shape, x_shape), \
        ["code UNSUPPORTED", "text Cast of a run-time value to int64"]
    # external data: a location outside the model's directory, and a file that is not there
    m, _, _ = external_case()
    yield "bad_external_escape", with_bad_location(m, "../../outside.data"), \
        ["code PARSE", "text tensor 'shape': its external data location leaves the model's directory"]
    yield "bad_external_missing", with_bad_location(m, "missing.data"), \
        ["code IO", "text tensor 'shape': cannot read 16 bytes at offset 0 of its external data"]


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/data/zoo"
    bad_dir = sys.argv[2] if len(sys.argv) > 2 else "tests/data/onnx_bad"
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(bad_dir, exist_ok=True)
    for name, m, x, y in cases():
        onnx.save(m, os.path.join(out_dir, name + ".onnx"))
        np.asarray(x, "<f4").tofile(os.path.join(out_dir, name + ".input.bin"))
        np.asarray(y, "<f4").tofile(os.path.join(out_dir, name + ".output.bin"))
        print("%s: %s -> %s" % (name, list(np.shape(x)), list(np.shape(y))))
    m, x, y = external_case()
    for f in ("ext_data.onnx", "ext_data.data"):
        if os.path.exists(os.path.join(out_dir, f)):
            os.remove(os.path.join(out_dir, f))
    onnx.save_model(m, os.path.join(out_dir, "ext_data.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="ext_data.data", size_threshold=0)
    np.asarray(x, "<f4").tofile(os.path.join(out_dir, "ext_data.input.bin"))
    np.asarray(y, "<f4").tofile(os.path.join(out_dir, "ext_data.output.bin"))
    print("ext_data: %s -> %s, initializers in ext_data.data" % (list(x.shape), list(y.shape)))
    for name, m, expect in bad_cases():
        onnx.save(m, os.path.join(bad_dir, name + ".onnx"))
        with open(os.path.join(bad_dir, name + ".expect"), "w") as f:
            f.write("\n".join(expect) + "\n")
        print("%s: must be refused" % name)


if __name__ == "__main__":
    main()
