#!/usr/bin/env python3
"""export_torchvision.py - real networks as ONNX files, with one input and PyTorch's output.

Usage (from the repository root, with Debian's python3-torch and python3-torchvision):

    /usr/bin/python3 tools/export_torchvision.py [--out DIR] [--models a,b,...]
        torchvision networks (default resnet18,resnet50,mobilenet_v2) into DIR
        (default build/models/; not committed - resnet50 alone is about 100 MB twice)
    /usr/bin/python3 tools/export_torchvision.py --small [--out DIR]
        the small committed network "tinynet" into DIR (default tests/data/onnx/)

For each network <name> it writes

    <name>.onnx          batch norm folded into the convolutions by the exporter
                         (training=TrainingMode.EVAL, do_constant_folding=True)
    <name>_bn.onnx       BatchNormalization nodes kept (training=TrainingMode.PRESERVE with
                         the model in eval mode); the script checks they are there
    <name>.input.bin     the input, raw float32 little-endian, NCHW (1x3x224x224; tinynet
                         1x3x64x64), drawn from a normal distribution
    <name>.output.bin    PyTorch's output for it (eval mode, float32, [1, classes])

Both .onnx files compute the same function, so they share the input and output files.
ONNX opset 13, one graph input "input", one graph output "output".

WEIGHTS: deterministic - torch.manual_seed(SEED) before building each model, so torchvision's
random initialization gives the same weights every run. Batch norm is made to matter when it
is folded: every BatchNorm2d gets a random weight (uniform 0.5..1.5) and bias (normal, 0.2),
its running statistics are first calibrated on random images (a few forward passes in train
mode, so activations stay in a sane range through 50 layers), then randomized again: each
running_mean moves by 0.2 standard deviations (normal), each running_var is scaled by
uniform 0.5..2. The final classifier's bias is randomized too.

THE SMALL NETWORK (tinynet, committed in tests/data/onnx/, well under 1 MB): a narrow
ResNet-style network built from torchvision's own blocks, input 1x3x64x64, 100 classes:

    stem      conv 3x3 s2 (3 -> 16) + BN + ReLU, max pool 3x3 s2 p1
    layer1    torchvision BasicBlock(16, 16)                       (identity residual)
    layer2    BasicBlock(16, 32, stride 2, downsample conv1x1 + BN)  (projection residual)
    layer3    torchvision InvertedResidual(32, 32, stride 1, expand 4)  (MobileNetV2:
              1x1 + BN + ReLU6, depthwise 3x3 + BN + ReLU6, 1x1 + BN, residual add)
    head      conv 1x1 (32 -> 64) + BN + ReLU6, average pool 3x3 s2 p1 (padding not counted),
              global average pool, flatten, linear 64 -> 100 (Gemm)

so one file exercises Conv (strided, depthwise, 1x1), BatchNormalization, Relu, Clip
(ReLU6: min / max as inputs in opset 13), Add (residuals), MaxPool, AveragePool,
GlobalAveragePool, Flatten and Gemm.
"""
import argparse
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

SEED = 1234
OPSET = 13

torch.set_num_threads(max(1, os.cpu_count() or 1))


def randomize_batch_norm(model, calib_shape, gen):
    """Random affine parameters, calibrated then randomized running statistics."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for bn in bns:
            c = bn.num_features
            bn.weight.copy_(torch.rand(c, generator=gen) + 0.5)
            bn.bias.copy_(torch.randn(c, generator=gen) * 0.2)
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over the calibration passes
        model.train()
        for _ in range(3):
            model(torch.randn(*calib_shape, generator=gen))
        for bn in bns:
            c = bn.num_features
            std = bn.running_var.sqrt()
            bn.running_mean.add_(torch.randn(c, generator=gen) * 0.2 * std)
            bn.running_var.mul_(torch.rand(c, generator=gen) * 1.5 + 0.5)
            bn.momentum = 0.1
    model.eval()
    return len(bns)


def randomize_classifier_bias(model, gen):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear) and m.bias is not None:
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)


class TinyNet(nn.Module):
    """See the module docstring."""

    def __init__(self, num_classes=100):
        super().__init__()
        from torchvision.models.mobilenetv2 import InvertedResidual
        from torchvision.models.resnet import BasicBlock

        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        self.layer1 = BasicBlock(16, 16)
        down = nn.Sequential(nn.Conv2d(16, 32, 1, stride=2, bias=False), nn.BatchNorm2d(32))
        self.layer2 = BasicBlock(16, 32, stride=2, downsample=down)
        self.layer3 = InvertedResidual(32, 32, stride=1, expand_ratio=4)
        self.head = nn.Sequential(
            nn.Conv2d(32, 64, 1, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU6(inplace=True),
            # count_include_pad=False: PyTorch exports the default (True) as Pad + AveragePool
            nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
            nn.AdaptiveAvgPool2d((1, 1)),
        )
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.head(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def build(name):
    import torchvision.models as tvm

    torch.manual_seed(SEED)
    if name == "tinynet":
        return TinyNet(), (1, 3, 64, 64)
    ctor = {"resnet18": tvm.resnet18, "resnet50": tvm.resnet50,
            "mobilenet_v2": tvm.mobilenet_v2}.get(name)
    if ctor is None:
        sys.exit("export_torchvision.py: unknown model '%s'" % name)
    return ctor(weights=None), (1, 3, 224, 224)


def op_counts(path):
    import onnx

    m = onnx.load(path)
    onnx.checker.check_model(m)
    counts = {}
    for n in m.graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    return counts


def export(model, x, path, training):
    # PRESERVE with constant folding warns about models in training mode; ours is in eval mode.
    warnings.filterwarnings("ignore", message="It is recommended that constant folding")
    torch.onnx.export(model, x, path, opset_version=OPSET, training=training,
                      do_constant_folding=True, input_names=["input"],
                      output_names=["output"])


def export_one(name, out_dir):
    model, shape = build(name)
    gen = torch.Generator().manual_seed(SEED + 1)
    calib = (8,) + shape[1:] if name != "tinynet" else (16,) + shape[1:]
    nbn = randomize_batch_norm(model, calib, gen)
    randomize_classifier_bias(model, gen)
    model.eval()
    x = torch.randn(*shape, generator=gen)
    with torch.no_grad():
        y = model(x)
    assert torch.isfinite(y).all(), "non-finite output"

    folded = os.path.join(out_dir, name + ".onnx")
    kept = os.path.join(out_dir, name + "_bn.onnx")
    export(model, x, folded, torch.onnx.TrainingMode.EVAL)
    model.eval()
    export(model, x, kept, torch.onnx.TrainingMode.PRESERVE)
    model.eval()
    with torch.no_grad():  # the export must not have touched the model
        y2 = model(x)
    assert torch.equal(y, y2), "exporting changed the model's output"

    x.numpy().astype("<f4").tofile(os.path.join(out_dir, name + ".input.bin"))
    y.numpy().astype("<f4").tofile(os.path.join(out_dir, name + ".output.bin"))

    cf, ck = op_counts(folded), op_counts(kept)
    if cf.get("BatchNormalization", 0) != 0:
        sys.exit("%s: the folded export still has BatchNormalization nodes" % folded)
    if ck.get("BatchNormalization", 0) != nbn:
        sys.exit("%s: %d BatchNormalization nodes, the model has %d BatchNorm2d"
                 % (kept, ck.get("BatchNormalization", 0), nbn))
    ya = y.numpy()
    print("%s: input %s, output %s (max |y| %.3g), %d batch norms"
          % (name, list(shape), list(ya.shape), float(np.abs(ya).max()), nbn))
    for path, c in ((folded, cf), (kept, ck)):
        print("  %-34s %6.1f MB  %s" % (path, os.path.getsize(path) / 1e6,
                                        ", ".join("%s %d" % kv for kv in sorted(c.items()))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", action="store_true", help="the small committed network")
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--models", default="resnet18,resnet50,mobilenet_v2")
    args = ap.parse_args()
    names = ["tinynet"] if args.small else [m for m in args.models.split(",") if m]
    out_dir = args.out or ("tests/data/onnx" if args.small else "build/models")
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        export_one(name, out_dir)


if __name__ == "__main__":
    main()
