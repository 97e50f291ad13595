#!/usr/bin/env bash
# fuzz/run.sh - runs the libFuzzer targets built by `make fuzz` (the Makefile calls it; see its
# comment): each from its corpus for SECONDS, FUZZ_JOBS targets at once (default: the CPUs;
# a libFuzzer run is one thread), each one's stats shown in order when it ends. A finding
# prints the log's end; the input is kept as BUILD/fuzz-crashes/<name>-crash-*. Last line:
# "total: N passed, N failed"; exit status 1 when a target found a problem.
#
#   fuzz/run.sh BUILD SECONDS SEED ONNX_DATA TARGET...     (SEED may be empty)
set -u
build=$1 seconds=$2 seed=$3 onnx_data=$4
shift 4
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
mkdir -p "$build/fuzz-crashes"

corpus() { # target -> fills build/corpus-<target>
  local t=$1 c=$build/corpus-$1 d f m
  mkdir -p "$c"
  for d in fuzz/corpus/$t tests/data/fuzz-regress/$t; do
    if [ -d "$d" ]; then find "$d" -maxdepth 1 -type f ! -name README.md -exec cp -n {} "$c/" \; ; fi
  done
  if [ "$t" = text ]; then
    for f in tests/data/*.golden; do
      LC_ALL=C awk '/^%%$/ {exit} {print}' "$f" >"$c/golden-$(basename "$f" .golden).txt"
    done
  fi
  if [ "$t" = onnx ]; then
    if [ -d "$onnx_data/node" ]; then
      for m in "$onnx_data"/node/*/model.onnx "$onnx_data"/pytorch-converted/*/model.onnx; do
        cp -n "$m" "$c/$(basename "$(dirname "$m")").onnx" 2>/dev/null || true
      done
    fi
    cp -n tests/data/onnx/*.onnx tests/data/onnx_quant/*.onnx "$c/" 2>/dev/null || true
  fi
}

targets=("$@")
n=${#targets[@]}
next=0
passed=0
failed=0
for t in "${targets[@]}"; do corpus "$t"; rm -f "$build/fuzz-$t.rc"; done
launch() { # index
  local t=${targets[$1]}
  (
    "./$build/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
      ${seed:+-seed=$seed} -artifact_prefix="$build/fuzz-crashes/$t-" -print_final_stats=1 \
      "$build/corpus-$t" >"$build/fuzz-$t.log" 2>&1
    echo $? >"$build/fuzz-$t.rc"
  ) &
}
for ((i = 0; i < n; i++)); do
  t=${targets[$i]}
  while [ ! -f "$build/fuzz-$t.rc" ]; do
    while [ "$next" -lt "$n" ] && [ "$(jobs -rp | wc -l)" -lt "$jobs" ]; do
      echo "fuzz: ${targets[$next]} for $seconds s ($(ls "$build/corpus-${targets[$next]}" | wc -l) corpus inputs)"
      launch "$next"
      next=$((next + 1))
    done
    wait -n 2>/dev/null || sleep 0.2
  done
  rc=$(cat "$build/fuzz-$t.rc")
  echo "fuzz: $t:"
  grep -E 'stat::number_of_executed_units|stat::new_units_added|^Done' "$build/fuzz-$t.log"
  if [ "$rc" -ne 0 ]; then
    grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED|RELOAD)' "$build/fuzz-$t.log" | tail -n 60
    echo "fuzz: $t FOUND A PROBLEM (exit status $rc); the input: $(ls "$build"/fuzz-crashes/"$t"-* 2>/dev/null | tr '\n' ' ')"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
done
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
