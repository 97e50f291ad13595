#!/bin/sh
# tools/make_qdq_models.sh - the committed QDQ test models, made from tests/data/onnx/tinynet_bn.onnx
# by tools/quantize.py (8 calibration inputs drawn with seed 1234: the same files every run).
#
#   tools/make_qdq_models.sh            (from the repository root; no make needed)
#
#   tests/data/onnx/tinynet_qdq.*       Relu / Clip after a Conv quantized after the activation
#   tests/data/onnx/tinynet_qdq_sep.*   --no-fuse-activations: a QuantizeLinear -> DequantizeLinear
#                                       pair between each Conv and its Relu / Clip too
#
# each as .onnx, .input.bin (the first calibration input), .output.bin (the fake-quantized
# reference, tools/onnx_torch.py in float32), .ref.txt (the float model's distance from it) and
# .ort.bin (ONNX Runtime's output on the input, one thread, from tools/qdq_compare.js).
# PYTHON (default /usr/bin/python3: torch, onnx) and NODE (default node, with onnxruntime-node
# where tools/qdq_compare.js looks) choose the interpreters.
set -eu
python=${PYTHON:-/usr/bin/python3}
node=${NODE:-node}
dir=tests/data/onnx

for variant in "tinynet_qdq" "tinynet_qdq_sep --no-fuse-activations"; do
  set -- $variant
  name=$1
  shift
  "$python" tools/quantize.py "$dir/tinynet_bn.onnx" --out "$dir/$name" --calib 8 --seed 1234 "$@"
  "$node" tools/qdq_compare.js --model "$dir/$name.onnx" --input "$dir/$name.input.bin" \
    --output "$dir/$name.output.bin" --threads 1 --runs 0 --save-output "$dir/$name.ort.bin"
done
