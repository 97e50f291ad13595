#!/bin/sh
# bench/int8.sh - quantized (QDQ) models: fuse.h's integer plan against ONNX Runtime's int8 and
# float sessions and fuse.h's float plan, on the same machine, in alternating rounds.
#
#   bench/int8.sh [ZOO] [MODELS] [ROUNDS] [THREADS]        (from the repository root)
#
# ZOO (default /work/zoo) holds, per model M of MODELS (default "resnet18 mobilenet_v2
# resnet50"), M.op17.onnx (tools/export_zoo.py) and M.qdq.onnx with M.qdq.input.bin
# (tools/quantize.py M.op17.onnx --out ZOO/M.qdq). Each of ROUNDS rounds (default 3) runs, in
# turn: fuse_run on the QDQ model (median of 20 whole runs, the " run " line), fuse_run on the
# float model, and tools/qdq_compare.js (ORT int8 then ORT float, 20 runs each); a busy
# neighbour slows all alike. THREADS (default 1) goes to both engines. Needs build/fuse_run
# (make build/fuse_run) and node with onnxruntime-node (tools/qdq_compare.js finds it).
# Prints one markdown table: the medians of the rounds, fuse.h int8 / ORT int8 (below 1:
# fuse.h ahead), each engine's int8 / fp32, both engines' int8 multiply-accumulates a second
# over the whole network (its conv / matmul MACs, as fuse_run counts them on the float model,
# over the time) as a share of this CPU's integer peak (bench/qpeak.c: AVX-512 VNNI's, else
# AVX2's vpmaddwd), and whether fuse.h's output equals ORT's (the normwise error of fuse.h's
# output against ORT's, M.qdq.ort.bin when it is there).
set -eu
zoo=${1:-/work/zoo}
models=${2:-"resnet18 mobilenet_v2 resnet50"}
rounds=${3:-3}
threads=${4:-1}
run=./build/fuse_run
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cc -O2 bench/qpeak.c -o "$tmp/qpeak"
"$tmp/qpeak" > "$tmp/peak"
peak=$(awk -F'gmacs=' 'NR == 1 {split($2, v, " "); print v[1]}' "$tmp/peak")
peak_name=$(awk -F'name=' 'NR == 1 {split($2, v, " "); print v[1]}' "$tmp/peak")

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
fuse_ms() { "$run" "$1" --threads "$threads" --runs 20 2>&1 | awk '$1 == "run" {print $2}'; }
gmac() { "$run" "$1" --threads 1 --runs 1 2>&1 | sed -n 's/.*(\([0-9.]*\) GFLOP per run.*/\1/p' | awk '{print $1 / 2}'; }

echo "| model | fuse.h int8 ms | ORT int8 ms | fuse.h / ORT | fuse.h fp32 ms | ORT fp32 ms | fuse.h int8 / fp32 | ORT int8 / fp32 | GMAC | fuse.h int8 % of peak | ORT int8 % of peak | fuse.h vs ORT output |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in $models; do
  q=$zoo/$m.qdq.onnx f=$zoo/$m.op17.onnx
  : > "$tmp/fi" ; : > "$tmp/ff" ; : > "$tmp/oi" ; : > "$tmp/of"
  r=0
  while [ $r -lt "$rounds" ]; do
    fuse_ms "$q" >> "$tmp/fi"
    fuse_ms "$f" >> "$tmp/ff"
    node tools/qdq_compare.js --model "$q" --input "$zoo/$m.qdq.input.bin" --float "$f" \
      --threads "$threads" --runs 20 --rounds 1 > "$tmp/ort"
    sed -n 's/^result .* int8_ms=\([^ ]*\) fp32_ms=\([^ ]*\) .*/\1 \2/p' "$tmp/ort" > "$tmp/o"
    awk '{print $1}' "$tmp/o" >> "$tmp/oi"
    awk '{print $2}' "$tmp/o" >> "$tmp/of"
    r=$((r + 1))
  done
  fi=$(median < "$tmp/fi") ff=$(median < "$tmp/ff") oi=$(median < "$tmp/oi") of=$(median < "$tmp/of")
  macs=$(gmac "$f")
  same="not checked"
  if [ -f "$zoo/$m.qdq.ort.bin" ]; then
    same=$("$run" "$q" --threads 1 --runs 1 --input "$zoo/$m.qdq.input.bin" \
      --expect "$zoo/$m.qdq.ort.bin" 2>&1 | sed -n 's/.*ort.bin: \([^ ]*\) .*/error \1/p' | head -1)
  fi
  awk -v m="$m" -v fi="$fi" -v ff="$ff" -v oi="$oi" -v of="$of" -v same="$same" -v g="$macs" \
      -v peak="$peak" 'BEGIN {
    printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.3f | %.0f | %.0f | %s |\n",
      m, fi, oi, fi / oi, ff, of, fi / ff, oi / of, g, 100 * g / (fi / 1000) / peak,
      100 * g / (oi / 1000) / peak, same }'
done
echo
vnni=$(grep -o -w -E 'avx512_vnni|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ')
echo "($rounds alternating rounds, $threads thread(s); $(lscpu | sed -n 's/^Model name: *//p' | head -1);" \
  "VNNI: ${vnni:-none}; integer peak $peak_name $peak GMAC/s, bench/qpeak.c)"
