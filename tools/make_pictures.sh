#!/bin/sh
# tools/make_pictures.sh - the pictures README.md shows (docs/*.png): fuse_run --dot, drawn by
# Graphviz's dot.
#
#   tools/make_pictures.sh [MOBILENET_V3_SMALL.onnx]        (or: make pictures)
#
#   docs/tinynet_before.png      tests/data/onnx/tinynet_bn.onnx as loaded (fuse_run --no-optimize)
#   docs/tinynet_after.png       the same after fuse_optimize: a cluster per composite
#   docs/mobilenet_v3_block.png  one block of torchvision's mobilenet_v3_small after
#                                fuse_optimize (fuse_run --dot-only /features.4/)
#
# The mobilenet model is the argument, else build/zoo/mobilenet_v3_small.op13.onnx, else it is
# exported into build/pictures with /usr/bin/python3 tools/export_zoo.py (torch, torchvision).
# Needs dot (Debian: graphviz) and $BUILD/fuse_run (built here with `make tools` when missing).
# DPI (default 72) sets the pictures' resolution; each should stay under 200 KB.
set -eu
build=${BUILD:-build}
dpi=${DPI:-72}
out=docs
work=$build/pictures
fuse_run=$build/fuse_run

command -v dot >/dev/null 2>&1 || {
  echo "make_pictures: needs Graphviz's dot (Debian: apt-get install graphviz)" >&2
  exit 1
}
[ -x "$fuse_run" ] || make --no-print-directory tools
mkdir -p "$out" "$work"

model=${1:-}
if [ -z "$model" ]; then
  model=$build/zoo/mobilenet_v3_small.op13.onnx
  if [ ! -f "$model" ]; then
    model=$work/mobilenet_v3_small.op13.onnx
    [ -f "$model" ] || /usr/bin/python3 tools/export_zoo.py --only mobilenet_v3_small --opset 13 \
      --out "$work"
  fi
fi

# fuse_run runs the model once (--runs 1) after writing the graph; its report is not needed
"$fuse_run" tests/data/onnx/tinynet_bn.onnx --no-optimize --runs 1 --dot "$work/tinynet_before.dot" >/dev/null
"$fuse_run" tests/data/onnx/tinynet_bn.onnx --runs 1 --dot "$work/tinynet_after.dot" >/dev/null
"$fuse_run" "$model" --runs 1 --dot "$work/mobilenet_v3_block.dot" --dot-only /features.4/ >/dev/null

for name in tinynet_before tinynet_after mobilenet_v3_block; do
  dot -Tpng -Gdpi="$dpi" "$work/$name.dot" -o "$out/$name.png"
  size=$(wc -c < "$out/$name.png")
  echo "$out/$name.png: $size bytes (from $work/$name.dot)"
  [ "$size" -lt 204800 ] || echo "make_pictures: $out/$name.png is over 200 KB: lower DPI" >&2
done
