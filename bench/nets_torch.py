#!/usr/bin/env python3
"""nets_torch.py - the PyTorch side of bench/nets: torchvision networks, batch 1, median ms.

Usage (from the repository root; bench/nets runs it once per network):

    /usr/bin/python3 bench/nets_torch.py [--dir build/models] [--models a,b,...]
        [--threads 1,2] [--runs 20] [--warmup 3] [--no-check]

For each network (default resnet18,resnet50,mobilenet_v2) it builds the torchvision model the
way tools/export_torchvision.py does (same seeds: the weights, folded batch norm statistics
and classifier bias of the exported ONNX file), reads <dir>/<name>.input.bin, and makes

    torch.jit.optimize_for_inference(torch.jit.script(model.eval()))

(freezes the module, folds conv + batch norm, MKL-DNN where it helps). Then for each thread
count N: torch.set_num_threads(N), --warmup runs (the profiling executor specializes on
them), --runs single runs timed with time.perf_counter under torch.no_grad(). The output
of the first run is compared with <dir>/<name>.output.bin: max|got - want| / max|want|
(-1 when the file is missing). --no-check skips rebuilding the exported weights (random
initialization: the same time, no meaningful check).

A name it does not know (not one of KNOWN) gets a line "unknown model NAME: ..." and no
result. Prints one line per network and thread count, for bench/nets.c to read:

    torch <version>
    result <name> <threads> <median ms> <fastest ms> <runs> <relative error>
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import export_torchvision as ex  # noqa: E402 (sets torch's thread count; main sets its own)


# the models ex.build makes; other names (such as the stems of tools/export_zoo.py's files,
# whose weights come from another seed) are reported as unknown, not run
KNOWN = ("resnet18", "resnet50", "mobilenet_v2", "tinynet")


def build_model(name, check):
    """The model of tools/export_torchvision.py (weights included when check) and its input
    shape."""
    model, shape = ex.build(name)
    if check:  # the same sequence of random draws as ex.export_one
        gen = torch.Generator().manual_seed(ex.SEED + 1)
        ex.randomize_batch_norm(model, (8,) + tuple(shape[1:]), gen)
        ex.randomize_classifier_bias(model, gen)
    model.eval()
    return model, shape


def rel_error(got, want):
    diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    top = float(np.max(np.abs(want)))
    if not np.isfinite(diff):
        return float("inf")
    return diff / top if top > 0 else diff


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="build/models")
    ap.add_argument("--models", default="resnet18,resnet50,mobilenet_v2")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",") if t]
    print("torch %s" % torch.__version__, flush=True)

    for name in [m for m in args.models.split(",") if m]:
        # building and calibrating the weights: as many threads as the largest count measured
        torch.set_num_threads(max(threads))
        if name not in KNOWN:  # e.g. a zoo file stem: bench/nets says n/a
            print("unknown model %s: nets_torch.py knows %s" % (name, ", ".join(KNOWN)),
                  flush=True)
            continue
        model, shape = build_model(name, not args.no_check)
        in_path = os.path.join(args.dir, name + ".input.bin")
        out_path = os.path.join(args.dir, name + ".output.bin")
        if os.path.exists(in_path):
            x = torch.from_numpy(np.fromfile(in_path, dtype="<f4").reshape(shape).copy())
        else:
            x = torch.randn(*shape)
        want = None
        if not args.no_check and os.path.exists(out_path):
            want = np.fromfile(out_path, dtype="<f4")
        with torch.no_grad():
            fast = torch.jit.optimize_for_inference(torch.jit.script(model.eval()))
            for n in threads:
                torch.set_num_threads(n)
                err = -1.0
                for i in range(max(1, args.warmup)):
                    y = fast(x)
                    if i == 0 and want is not None:
                        got = y.contiguous().numpy().reshape(-1)
                        err = rel_error(got, want) if got.size == want.size else float("inf")
                times = []
                for _ in range(max(1, args.runs)):
                    t0 = time.perf_counter()
                    fast(x)
                    times.append((time.perf_counter() - t0) * 1e3)
                print("result %s %d %.4f %.4f %d %.6g"
                      % (name, n, statistics.median(times), min(times), len(times), err),
                      flush=True)


if __name__ == "__main__":
    main()
