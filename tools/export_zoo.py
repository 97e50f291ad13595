#!/usr/bin/env python3
"""export_zoo.py - the model zoo a new user tries: torchvision's classification models, its
segmentation models, the detection backbones, and small game / embedded networks, as ONNX
files with PyTorch's outputs, for tests/test_zoo.c and bench/nets.

Usage (from the repository root, with Debian's python3-torch / python3-torchvision / onnx):

    /usr/bin/python3 tools/export_zoo.py [--out DIR] [--opset 13|17] [--only a,b] [--list]
                                         [--small] [--skip-existing]

    default   every model below into DIR (default build/zoo/), file names <name>.op<opset>.*
    --small   only the small networks, into tests/data/zoo/ (committed; each well under 1 MB)
    --only    a comma-separated subset (names as --list prints them)

For each model <name> at opset <k> it writes

    <name>.op<k>.onnx        torch.onnx.export, eval mode, constant folding on
    <name>.op<k>.input.bin   the input, raw float32 little-endian
    <name>.op<k>.output.bin  PyTorch's outputs, all of them one after another in the graph's
                             output order (tests/test_zoo.c splits them by the shapes of the
                             loaded graph's outputs), computed in float64 (the model and input
                             cast to double) and rounded to float32 once, so that the test
                             measures fuse.h's own error: PyTorch's float32 output is itself up
                             to 1e-4 (normwise) away from it on resnet50-sized networks with
                             these weights; <name>.op<k>.ref.txt records how far
                             ("pytorch_float32_error E"), and tests/test_zoo.c allows
                             max(1e-4, 2 E)

and one line per model in <DIR>/zoo.txt: name, opset, input shape, output shapes, file size,
export seconds, or the reason the export itself failed (PyTorch 1.13 cannot export some
models at some opsets; those are listed, not hidden).

WEIGHTS: torch.manual_seed(SEED) before each model: torchvision's random initialization, then
batch-norm statistics calibrated on random images in train mode (so activations stay in a sane
range through deep networks) - the same idea as tools/export_torchvision.py. No pretrained
weights exist here; seeded random ones are fine for correctness and speed.

THE SMALL NETWORKS (game / embedded kinds, our own design):

    mlp_tanh        MLP 64 -> 128 -> 128 -> 10 with tanh, leaky relu and GELU (erf)
    audio1d         1-D convolutional keyword spotter: Conv1d / BatchNorm1d / ReLU / MaxPool1d
                    / AvgPool1d, global average pool, Linear; input [1, 1, 4000]
    unet            U-Net denoiser: two down blocks, ConvTranspose2d up, bilinear upsample,
                    skip concats, sigmoid
    style           style-transfer net (Johnson et al.): reflection pad, instance norm,
                    residual blocks, nearest upsample, tanh
    transformer     nn.TransformerEncoderLayer (d_model 64, 4 heads, GELU), batch_first,
                    sequence 16, plus a LayerNorm
    lstm            2-layer bidirectional LSTM over [1, 20, 16] (batch_first) + Linear
    gru             GRU over [3, 12, 8] + Linear
    shuffle         a ShuffleNet channel shuffle written with view / transpose (shape
                    arithmetic the loader folds), hardswish, hardsigmoid, SiLU, pixel_shuffle
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 1234
torch.set_num_threads(1)
warnings.filterwarnings("ignore")


# ------------------------------------------------------------------ small networks
class MlpTanh(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(64, 128), nn.Linear(128, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = torch.tanh(self.a(x))
        x = F.leaky_relu(self.b(x), 0.1)
        return F.gelu(self.c(x))


class Audio1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(
            nn.Conv1d(1, 16, 9, stride=2, padding=4), nn.BatchNorm1d(16), nn.ReLU(),
            nn.MaxPool1d(3, stride=2, padding=1),
            nn.Conv1d(16, 32, 5, padding=2, groups=2), nn.BatchNorm1d(32), nn.ReLU(),
            nn.AvgPool1d(2),
            nn.Conv1d(32, 32, 3, padding=2, dilation=2), nn.ReLU())
        self.fc = nn.Linear(32, 12)

    def forward(self, x):
        x = self.f(x).mean(dim=2)
        return self.fc(x)


class UNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(o, o, 3, padding=1), nn.ReLU())
        self.d1, self.d2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.u2 = block(4 * c, 2 * c)
        self.u1 = block(3 * c, c)
        self.out = nn.Conv2d(c, 3, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        m = self.mid(F.max_pool2d(b, 2))
        u = self.u2(torch.cat([self.up2(m), b], 1))
        u = F.interpolate(u, scale_factor=2, mode="bilinear", align_corners=False)
        u = self.u1(torch.cat([u, a], 1))
        return torch.sigmoid(self.out(u))


class Style(nn.Module):
    def __init__(self, c=8):
        super().__init__()

        def conv(i, o, k, s=1):
            return nn.Sequential(nn.ReflectionPad2d(k // 2), nn.Conv2d(i, o, k, stride=s),
                                 nn.InstanceNorm2d(o, affine=True), nn.ReLU())
        self.down = nn.Sequential(conv(3, c, 9), conv(c, 2 * c, 3, 2), conv(2 * c, 4 * c, 3, 2))
        self.res = nn.ModuleList([nn.Sequential(conv(4 * c, 4 * c, 3), nn.ReflectionPad2d(1),
                                                nn.Conv2d(4 * c, 4 * c, 3),
                                                nn.InstanceNorm2d(4 * c, affine=True))
                                  for _ in range(2)])
        self.up1, self.up2 = conv(4 * c, 2 * c, 3), conv(2 * c, c, 3)
        self.out = nn.Sequential(nn.ReflectionPad2d(4), nn.Conv2d(c, 3, 9))

    def forward(self, x):
        x = self.down(x)
        for r in self.res:
            x = x + r(x)
        x = self.up1(F.interpolate(x, scale_factor=2, mode="nearest"))
        x = self.up2(F.interpolate(x, scale_factor=2, mode="nearest"))
        return torch.tanh(self.out(x))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0,
                                                activation="gelu", batch_first=True)
        self.norm = nn.LayerNorm(64)

    def forward(self, x):
        return self.norm(self.layer(x))


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(16, 24, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(48, 5)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


class Gru(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(8, 16)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        y, h = self.rnn(x)
        return self.fc(y), h


class Shuffle(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(8, 16, 3, padding=1)
        self.b = nn.Conv2d(16, 16, 3, padding=1, groups=4)
        self.c = nn.Conv2d(4, 8, 1)

    def forward(self, x):
        x = F.hardswish(self.a(x))
        n, c, h, w = x.size()
        x = x.view(n, 4, c // 4, h, w).transpose(1, 2).contiguous().view(n, c, h, w)
        x = F.silu(self.b(x)) * F.hardsigmoid(x)
        x = F.pixel_shuffle(x, 2)
        return self.c(x)


SMALL = {
    "mlp_tanh": (MlpTanh, [(2, 64)]),
    "audio1d": (Audio1d, [(1, 1, 4000)]),
    "unet": (UNet, [(1, 3, 64, 64)]),
    "style": (Style, [(1, 3, 64, 64)]),
    "transformer": (Transformer, [(2, 16, 64)]),
    "lstm": (Lstm, [(1, 20, 16)]),
    "gru": (Gru, [(12, 3, 8)]),
    "shuffle": (Shuffle, [(1, 8, 16, 16)]),
}


# ------------------------------------------------------------------ torchvision
class FirstOutput(nn.Module):
    """Segmentation models return {'out': ..., 'aux': ...}; detection backbones an
    OrderedDict of feature maps: export them as a tuple of tensors."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        y = self.m(x)
        if isinstance(y, dict):
            return tuple(y.values())
        return y


def classification_names():
    import torchvision.models as tvm
    return sorted(tvm.list_models(module=tvm))


SEGMENTATION = ["fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]
DETECTION = ["fasterrcnn_resnet50_fpn", "fasterrcnn_mobilenet_v3_large_fpn", "retinanet_resnet50_fpn",
             "ssd300_vgg16", "ssdlite320_mobilenet_v3_large", "fcos_resnet50_fpn"]


def input_size(name):
    if name.startswith("inception") or name.startswith("googlenet"):
        return 299 if name.startswith("inception") else 224
    if name.startswith("vit_h") or name == "vit_h_14":
        return 224
    return 224


def build(name):
    import torchvision.models as tvm
    torch.manual_seed(SEED)
    if name in SMALL:
        ctor, shapes = SMALL[name]
        return ctor(), shapes
    if name in SEGMENTATION:
        m = getattr(tvm.segmentation, name)(weights=None, weights_backbone=None,
                                            aux_loss=False, num_classes=21)
        return FirstOutput(m), [(1, 3, 224, 224)]
    if name.endswith("_backbone"):
        base = name[: -len("_backbone")]
        det = getattr(tvm.detection, base)(weights=None, weights_backbone=None)
        return FirstOutput(det.backbone), [(1, 3, 320, 320)]
    kw = {"weights": None}
    if name.startswith("inception") or name == "googlenet":
        kw["aux_logits"] = False
        kw["init_weights"] = True
    m = getattr(tvm, name)(**kw)
    s = input_size(name)
    return m, [(1, 3, s, s)]


def wake_zero_layers(model, gen):
    """torchvision starts some heads at zero (ViT's classifier): the output would be zeros
    whatever the network computes, so such a layer gets small random weights."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)) and not m.weight.abs().max() > 0:
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * 0.02)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.02)


def calibrate(model, shapes, gen):
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    with torch.no_grad():
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None
        model.train()
        calib = [torch.randn(*((2,) + s[1:]), generator=gen) for s in shapes]
        model(*calib)
        for bn in bns:
            bn.momentum = 0.1
    model.eval()


def as_tuple(y):
    return tuple(y) if isinstance(y, (tuple, list)) else (y,)


def reference64(model, xs):
    """The outputs in float64 (the model cast to double), and float32's normwise distance."""
    with torch.no_grad():
        y32 = as_tuple(model(*xs))
        y64 = as_tuple(model.double()(*(x.double() for x in xs)))
    model.float()
    far = max(float((a.double() - b).abs().max() / max(float(b.abs().max()), 1e-30))
              for a, b in zip(y32, y64))
    return y32, y64, far


def register_missing_symbolics():
    """PyTorch 1.13's exporter has no symbolic for aten::zero, the out-of-place form of
    swin_v2's `qkv_bias[length:2*length].zero_()`: a tensor of zeros of the same shape, as
    ONNX's ConstantOfShape (the default value is float 0)."""
    def zero(g, self):
        return g.op("ConstantOfShape", g.op("Shape", self))
    for opset in range(9, 18):
        torch.onnx.register_custom_op_symbolic("aten::zero", zero, opset)


def one_external_file(path):
    """torch.onnx.export writes a model over 2 GB with each tensor in a file of its own beside
    it, named after the tensor (so two exports in one directory share names): gather them into
    one <model>.data file, as fuse_onnx_load_file reads either way."""
    import onnx
    from onnx import external_data_helper
    m = onnx.load(path, load_external_data=False)
    files = {e.value for t in m.graph.initializer for e in t.external_data if e.key == "location"}
    if not files:
        return
    d = os.path.dirname(path)
    onnx.load_external_data_for_model(m, d)
    data = os.path.splitext(os.path.basename(path))[0] + ".data"
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data, size_threshold=1024)
    for f in files:
        if f != data and os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))


def export_one(name, out_dir, opset, refs_only=False):
    t0 = time.time()
    model, shapes = build(name)
    gen = torch.Generator().manual_seed(SEED + 1)
    calibrate(model, shapes, gen)
    model.eval()
    xs = tuple(torch.randn(*s, generator=gen) for s in shapes)
    wake_zero_layers(model, torch.Generator().manual_seed(SEED + 2))
    base = os.path.join(out_dir, "%s.op%d" % (name, opset))
    if refs_only:
        old = np.fromfile(base + ".input.bin", dtype="<f4")
        new = np.concatenate([x.numpy().astype("<f4").ravel() for x in xs])
        assert old.shape == new.shape and np.array_equal(old, new), "the input changed"
    else:
        with torch.no_grad():
            ys = as_tuple(model(*xs))
        torch.onnx.export(model, xs, base + ".onnx", opset_version=opset, do_constant_folding=True,
                          input_names=["input%d" % i if i else "input" for i in range(len(xs))],
                          output_names=["output%d" % i if i else "output" for i in range(len(ys))])
        one_external_file(base + ".onnx")
        np.concatenate([x.numpy().astype("<f4").ravel() for x in xs]).tofile(base + ".input.bin")
    y32, y64, far = reference64(model, xs)
    np.concatenate([y.detach().numpy().astype("<f4").ravel() for y in y64]).tofile(base + ".output.bin")
    with open(base + ".ref.txt", "w") as f:  # read by tests/test_zoo.c
        f.write("pytorch_float32_error %.3e\n" % far)
    return "%s op%d input %s outputs %s %.1f MB %.1f s; PyTorch float32 vs float64 %.1e" % (
        name, opset, [list(s) for s in shapes], [list(y.shape) for y in y32],
        os.path.getsize(base + ".onnx") / 1e6, time.time() - t0, far)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--opset", type=int, action="append")
    ap.add_argument("--only")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--skip-existing", action="store_true")
    ap.add_argument("--refs-only", action="store_true",
                    help="recompute the float64 .output.bin of exported models (no export)")
    args = ap.parse_args()
    if args.small:
        names = list(SMALL)
    else:
        names = (list(SMALL) + classification_names() + SEGMENTATION +
                 [d + "_backbone" for d in DETECTION])
    if args.only:
        names = [n for n in args.only.split(",") if n]
    if args.list:
        print("\n".join(names))
        return
    register_missing_symbolics()
    out_dir = args.out or ("tests/data/zoo" if args.small else "build/zoo")
    os.makedirs(out_dir, exist_ok=True)
    opsets = args.opset or [13, 17]
    log = open(os.path.join(out_dir, "zoo.txt"), "a")
    for name in names:
        for opset in opsets:
            exported = os.path.exists(os.path.join(out_dir, "%s.op%d.output.bin" % (name, opset)))
            if (args.skip_existing and exported) or (args.refs_only and not exported):
                continue
            try:
                line = export_one(name, out_dir, opset, args.refs_only)
            except Exception as e:  # listed, not hidden
                line = "%s op%d EXPORT FAILED: %s" % (name, opset, str(e).splitlines()[0][:200])
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()


if __name__ == "__main__":
    main()
