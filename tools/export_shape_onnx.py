#!/usr/bin/env python3
"""export_shape_onnx.py - PyTorch-exported ONNX models of the data movement family, for
tests/test_shape.c: F.interpolate (nearest / bilinear / bicubic, align_corners, scale_factor
or size), F.pad (reflect / replicate / constant with a crop), pixel_shuffle / pixel_unshuffle,
repeat, expand, indexing, squeeze / unsqueeze, each at opsets 9, 11 and 13, as torch.onnx
exports them (Shape / Slice / Concat subgraphs included: the loader folds them); then
hand-built models (onnx.helper) of the forms torch.onnx does not write: Upsample 7 / 9,
Resize 10, Resize 11+ with sizes / cubic / exclude_outside / other modes, Gather with
negative and scalar indices, Pad and Squeeze / Unsqueeze in their attribute forms, ...

Usage (from the repository root): /usr/bin/python3 tools/export_shape_onnx.py
Writes tests/data/onnx_shape/<case>_op<opset>.onnx with <case>_op<opset>.input.pb and
.output.pb (TensorProtos: the input and PyTorch's output). Needs torch and onnx.

Left out: bilinear at opset 9, which exports as Upsample linear: ONNX's asymmetric mapping,
not PyTorch's (torch.onnx warns about it); bicubic and align_corners=True have no opset-9
export.
"""
import os
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from onnx import numpy_helper

warnings.filterwarnings("ignore")
torch.set_num_threads(1)

CASES = {
    "interp_nearest_s2": (lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), [1, 3, 5, 4], (9, 11, 13)),
    "interp_nearest_size": (lambda x: F.interpolate(x, size=(7, 5), mode="nearest"), [1, 2, 4, 3], (9, 11, 13)),
    "interp_nearest_down": (lambda x: F.interpolate(x, size=(3, 2), mode="nearest"), [1, 2, 7, 5], (9, 11, 13)),
    "interp_bilinear_ac": (lambda x: F.interpolate(x, size=(9, 4), mode="bilinear", align_corners=True), [1, 2, 5, 6], (11, 13)),
    "interp_bilinear_s2": (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False), [1, 2, 5, 6], (11, 13)),
    "interp_bilinear_size": (lambda x: F.interpolate(x, size=(3, 7), mode="bilinear", align_corners=False), [1, 2, 5, 6], (11, 13)),
    "interp_bicubic_s2": (lambda x: F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=False), [1, 2, 5, 4], (11, 13)),
    "interp_bicubic_ac": (lambda x: F.interpolate(x, size=(3, 7), mode="bicubic", align_corners=True), [1, 2, 5, 4], (11, 13)),
    "upsample_nearest3": (lambda x: torch.nn.Upsample(scale_factor=3)(x), [1, 2, 3, 4], (9, 11, 13)),
    "pad_reflect": (lambda x: F.pad(x, (1, 2, 3, 0), mode="reflect"), [1, 2, 5, 6], (9, 11, 13)),
    "pad_replicate": (lambda x: F.pad(x, (2, 1, 0, 3), mode="replicate"), [1, 2, 5, 6], (9, 11, 13)),
    "pad_constant_crop": (lambda x: F.pad(x, (1, -1, 2, 0), value=0.5), [1, 2, 5, 6], (9, 11, 13)),
    "pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), [1, 8, 3, 5], (9, 11, 13)),
    "pixel_unshuffle": (lambda x: F.pixel_unshuffle(x, 2), [1, 2, 4, 6], (9, 13)),
    "repeat": (lambda x: x.repeat(2, 1, 3), [2, 3, 4], (9, 13)),
    "expand": (lambda x: x.expand(3, 2, 4, 5), [2, 1, 5], (9, 13)),
    "index_select": (lambda x: x[:, [2, 0, 1, 1]], [3, 4, 5], (9, 13)),
    "select": (lambda x: x[:, 1] * 2, [3, 4, 5], (9, 13)),
    "squeeze_unsqueeze": (lambda x: x.squeeze(1).unsqueeze(-1) + 1, [3, 1, 5], (9, 11, 13)),
}


class Net(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        return self.f(x)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "tests", "data", "onnx_shape")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    for name, (f, shape, opsets) in sorted(CASES.items()):
        rng = np.random.RandomState(len(name) * 7919 + sum(map(ord, name)))
        x = torch.from_numpy(rng.uniform(-1, 1, size=shape).astype(np.float32))
        y = f(x)
        for opset in opsets:
            base = os.path.join(out, "%s_op%d" % (name, opset))
            torch.onnx.export(Net(f), (x,), base + ".onnx", opset_version=opset,
                              input_names=["x"], output_names=["y"])
            with open(base + ".input.pb", "wb") as fp:
                fp.write(numpy_helper.from_array(x.numpy(), "x").SerializeToString())
            with open(base + ".output.pb", "wb") as fp:
                fp.write(numpy_helper.from_array(y.detach().numpy(), "y").SerializeToString())
    hand_built(out)
    print("wrote %d models to %s" % (len(os.listdir(out)) // 3, out))


def hand_built(out):
    """The older and the other attribute forms, which torch.onnx does not write: built with
    onnx.helper; the expected outputs from numpy (golden_shape.py's references for Resize)."""
    import sys
    from onnx import TensorProto, helper
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import golden_shape as GS

    def model(name, opset, node, shape, y, inits=()):
        rng = np.random.RandomState(sum(map(ord, name)))
        x = rng.uniform(-1, 1, size=shape).astype(np.float32)
        yv = np.asarray(y(x), dtype=np.float32)
        g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(yv.shape))],
                              initializer=list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        base = os.path.join(out, name)
        with open(base + ".onnx", "wb") as fp:
            fp.write(m.SerializeToString())
        with open(base + ".input.pb", "wb") as fp:
            fp.write(numpy_helper.from_array(x, "x").SerializeToString())
        with open(base + ".output.pb", "wb") as fp:
            fp.write(numpy_helper.from_array(yv, "y").SerializeToString())

    i64 = lambda n, v: numpy_helper.from_array(np.array(v, dtype=np.int64), n)
    f32 = lambda n, v: numpy_helper.from_array(np.array(v, dtype=np.float32), n)
    rep = lambda x: np.repeat(np.repeat(x, 2, axis=2), 3, axis=3)
    model("hand_upsample7_attr_scales", 7,
          helper.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 2.0, 3.0]),
          [1, 2, 3, 4], rep)
    model("hand_upsample9_input_scales", 9, helper.make_node("Upsample", ["x", "s"], ["y"]),
          [1, 2, 3, 4], rep, [f32("s", [1, 1, 2, 3])])
    model("hand_resize10_nearest", 10, helper.make_node("Resize", ["x", "s"], ["y"]),
          [1, 2, 3, 4], rep, [f32("s", [1, 1, 2, 3])])
    ref = lambda x, sizes, scales, mode, coord, nearest="round_prefer_floor", A=-0.75, ex=0: \
        GS.ref_resize(torch.from_numpy(x.astype(np.float64)), sizes, scales, mode, coord, nearest, A, ex).numpy()
    model("hand_resize11_sizes_cubic_exclude", 11,
          helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="cubic", cubic_coeff_a=-0.5,
                           exclude_outside=1, coordinate_transformation_mode="half_pixel"),
          [1, 2, 5, 4], lambda x: ref(x, [1, 2, 7, 3], None, "cubic", "half_pixel", A=-0.5, ex=1),
          [i64("sz", [1, 2, 7, 3])])
    model("hand_resize13_scales_nearest_ceil", 13,
          helper.make_node("Resize", ["x", "roi", "s"], ["y"], mode="nearest", nearest_mode="ceil",
                           coordinate_transformation_mode="asymmetric"),
          [1, 2, 5, 4], lambda x: ref(x, [1, 2, 8, 6], [1, 1, 1.7, 1.5], "nearest", "asymmetric", "ceil"),
          [f32("roi", []), f32("s", [1, 1, 1.7, 1.5])])
    model("hand_resize13_linear_symmetric", 13,
          helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear",
                           coordinate_transformation_mode="half_pixel_symmetric"),
          [1, 2, 4, 5], lambda x: ref(x, [1, 2, 5, 8], [1, 1, 1.3, 1.7], "linear", "half_pixel_symmetric"),
          [f32("s", [1, 1, 1.3, 1.7])])
    model("hand_gather_negative_2d", 13, helper.make_node("Gather", ["x", "i"], ["y"], axis=1),
          [2, 5, 3], lambda x: x[:, np.array([[-1, 0], [3, -5]]) % 5], [i64("i", [[-1, 0], [3, -5]])])
    model("hand_gather_scalar", 11, helper.make_node("Gather", ["x", "i"], ["y"], axis=-1),
          [2, 5, 3], lambda x: x[:, :, 2], [i64("i", 2)])
    model("hand_pad2_attr_reflect", 2,
          helper.make_node("Pad", ["x"], ["y"], mode="reflect", pads=[0, 0, 2, 1, 0, 0, 1, 3]),
          [1, 2, 4, 5], lambda x: np.pad(x, [(0, 0), (0, 0), (2, 1), (1, 3)], mode="reflect"))
    model("hand_pad11_edge_value", 11,
          helper.make_node("Pad", ["x", "p"], ["y"], mode="edge"),
          [2, 3, 4], lambda x: np.pad(x, [(1, 0), (0, 2), (3, 1)], mode="edge"),
          [i64("p", [1, 0, 3, 0, 2, 1])])
    model("hand_pad11_constant_value", 11,
          helper.make_node("Pad", ["x", "p", "v"], ["y"]),
          [2, 3, 4], lambda x: np.pad(x, [(0, 1), (2, 0), (0, 0)], constant_values=-1.5)[:, :, 1:],
          [i64("p", [0, 2, -1, 1, 0, 0]), f32("v", -1.5)])
    model("hand_squeeze11_attr", 11, helper.make_node("Squeeze", ["x"], ["y"], axes=[-1, 1]),
          [3, 1, 4, 1], lambda x: x.reshape(3, 4))
    model("hand_squeeze13_all", 13, helper.make_node("Squeeze", ["x"], ["y"]),
          [1, 3, 1, 4], lambda x: x.reshape(3, 4))
    model("hand_unsqueeze11_attr", 11, helper.make_node("Unsqueeze", ["x"], ["y"], axes=[4, 0]),
          [3, 2, 4], lambda x: x.reshape(1, 3, 2, 4, 1))
    model("hand_tile13", 13, helper.make_node("Tile", ["x", "r"], ["y"]),
          [2, 3, 1], lambda x: np.tile(x, (2, 1, 4)), [i64("r", [2, 1, 4])])
    model("hand_expand13", 13, helper.make_node("Expand", ["x", "s"], ["y"]),
          [3, 1], lambda x: np.broadcast_to(x, (2, 3, 4)), [i64("s", [2, 1, 4])])
    model("hand_depthtospace_crd", 11, helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD"),
          [1, 8, 2, 3], lambda x: torch.pixel_shuffle(torch.from_numpy(x), 2).numpy())
    model("hand_spacetodepth", 13, helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2),
          [1, 2, 4, 6], lambda x: x.reshape(1, 2, 2, 2, 3, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 3))


if __name__ == "__main__":
    main()
