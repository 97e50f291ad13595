#!/usr/bin/env python3
"""export_shape_onnx.py - PyTorch-exported ONNX models of the data movement family, for
tests/test_shape.c: F.interpolate (nearest / bilinear / bicubic, align_corners, scale_factor
or size), F.pad (reflect / replicate / constant with a crop), pixel_shuffle / pixel_unshuffle,
repeat, expand, indexing, squeeze / unsqueeze, each at opsets 9, 11 and 13, as torch.onnx
exports them (Shape / Slice / Concat subgraphs included: the loader folds them).

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
    print("wrote %d models to %s" % (len(os.listdir(out)) // 3, out))


if __name__ == "__main__":
    main()
