#!/usr/bin/env bash
# tests/matrix.sh - the configuration matrix: fuse.h built with gcc and clang, as C99, C11,
# C++11 and C++17, with each configuration macro, with OpenMP, and split over two
# translation units; every build -Werror. Each configuration builds a few test programs once
# and runs them; they check their results against fixed references (test_golden: 134 graphs
# against PyTorch, on every ISA the build has; test_networks: the committed ONNX networks
# against PyTorch; test_badinput: every error path; test_threads: concurrent runs bit for bit
# against serial ones), so a configuration that passes computes what the default one does.
# FUSE_NO_STDIO / FUSE_NO_ONNX run only what applies to them.
#
#   tests/matrix.sh [NAME...]      (from the repository root; `make test-matrix`)
#
# NAME limits the run to those configurations (see `tests/matrix.sh --list`). Environment:
# MATRIX_JOBS (default 1) configurations built at once; CC_GCC, CXX_GCC, CC_CLANG, CXX_CLANG
# (gcc, g++, clang, clang++); MATRIX_OPT (-O1: a third of -O2's build time, and every
# configuration still -Werror with the optimizer's flow warnings; `make test` is the -O2
# build of the default configuration). A configuration whose compiler is missing
# fails (a CI without clang must not pass by skipping it); MATRIX_SKIP_MISSING=1 skips it.
# Work goes to build-matrix/<name>/ (build.log, run.log). Prints one line per configuration,
# then "total: N passed, N failed" (a build failure counts as one failure).
set -u
cd "$(dirname "$0")/.."

cc_gcc=${CC_GCC:-gcc}
cxx_gcc=${CXX_GCC:-g++}
cc_clang=${CC_CLANG:-clang}
cxx_clang=${CXX_CLANG:-clang++}
opt=${MATRIX_OPT:--O1}
jobs=${MATRIX_JOBS:-1}
out=build-matrix

cwarn="-Wall -Wextra -Wpedantic -Werror"
cxxwarn="-x c++ -Wall -Wextra -Wpedantic -Werror"

# name | compiler | flags | programs (test_<name>) [| environment for the runs]; "two-units"
# builds fuse.h's implementation alone (tests/header/impl.c, C99) and the test programs
# without it (C, or C++ with "cxx"). OpenMP: test_threads runs 4 callers that each start an
# OpenMP team; libgomp's default spin-waiting makes that 20x slower on 2 cores, so passive.
# The axes are combined where they are independent (each compiler / standard, each macro, at
# least once, each a build of the whole implementation of about a minute): gcc C99 with the
# default macros is `make test` itself, C++ with g++ is `make test`'s header checks (C++11
# and FUSE_STATIC) and two-units-c++ here; clang++ runs C++17.
configs=(
  "gcc-c11-no-avx512|$cc_gcc|-std=c11 $cwarn -DFUSE_NO_AVX512|golden badinput badinput_onnx networks threads"
  "clang-c11|$cc_clang|-std=c11 $cwarn|golden badinput badinput_onnx networks threads"
  "clang++-c++17|$cxx_clang|-std=c++17 $cxxwarn|golden networks threads"
  "static|$cc_gcc|-std=c99 $cwarn -DFUSE_STATIC|golden badinput badinput_onnx"
  "no-simd|$cc_gcc|-std=c99 $cwarn -DFUSE_NO_SIMD|golden badinput badinput_onnx networks threads"
  "no-avx2|$cc_gcc|-std=c99 $cwarn -DFUSE_NO_AVX2|golden networks"
  "no-avx2-avx512-clang|$cc_clang|-std=c99 $cwarn -DFUSE_NO_AVX2 -DFUSE_NO_AVX512|golden networks"
  "no-stdio|$cc_gcc|-std=c99 $cwarn -DFUSE_NO_STDIO|golden badinput badinput_onnx threads"
  "no-stdio-no-onnx|$cc_clang|-std=c99 $cwarn -DFUSE_NO_STDIO -DFUSE_NO_ONNX|golden badinput"
  "openmp|$cc_gcc|-std=c99 $cwarn -fopenmp|golden networks threads|OMP_WAIT_POLICY=passive"
  "two-units-c++|$cxx_gcc|-std=c++11 $cxxwarn|golden two-units cxx"
)

if [ "${1:-}" = --list ]; then
  for c in "${configs[@]}"; do IFS='|' read -r name compiler flags programs envs <<<"$c"; echo "$name: $compiler $flags; $programs${envs:+; $envs}"; done
  exit 0
fi
wanted=("$@")

# The networks test gets the committed models only (build/models would take minutes here).
args_for() {
  case "$1" in
    networks) echo "tests/data/onnx $out/no-models" ;;
    *) echo "" ;;
  esac
}

run_config() { # name compiler flags programs envs -> build-matrix/<name>/summary
  local name=$1 compiler=$2 flags=$3 programs=$4 envs=$5 dir=$out/$1 two=0 p progs=() start built
  mkdir -p "$dir"
  rm -f "$dir"/test_* "$dir"/summary "$dir"/build.log "$dir"/run.log "$dir"/*.o
  start=$(date +%s)
  case " $programs " in *" two-units "*) two=1 ;; esac
  if ! command -v "${compiler%% *}" >/dev/null 2>&1; then
    if [ "${MATRIX_SKIP_MISSING:-0}" = 1 ]; then
      echo "$name: skipped, no ${compiler%% *}" >"$dir/summary"
    else
      echo "$name: 0 passed, 1 failed (no ${compiler%% *})" >"$dir/summary"
    fi
    return
  fi
  # The implementation is compiled once per configuration (impl.o) and the programs link it,
  # except with FUSE_STATIC, where every function is private to its unit. "two-units": the
  # implementation as C99 with gcc, the programs with the configuration's compiler.
  local link=1 linkflags=
  case " $flags " in *" -DFUSE_STATIC "*) link=0 ;; esac
  case " $flags " in *" -fopenmp "*) linkflags=-fopenmp ;; esac
  if [ "$two" = 1 ]; then
    $cc_gcc -std=c99 $cwarn $opt -I. -c tests/header/impl.c -o "$dir/impl.o" >>"$dir/build.log" 2>&1 ||
      echo "impl.o did not build" >>"$dir/build.log"
  elif [ "$link" = 1 ]; then
    $compiler $flags $opt -I. -c tests/header/impl.c -o "$dir/impl.o" >>"$dir/build.log" 2>&1 ||
      echo "impl.o did not build" >>"$dir/build.log"
  fi
  for p in $programs; do
    case "$p" in two-units | cxx) continue ;; esac
    local src=tests/test_$p.c bin=$dir/test_$p.bin a
    if [ "$two" = 1 ] || [ "$link" = 1 ]; then
      # FUSE_IMPLEMENTATION_DONE: the implementation guard of fuse.h; set, the test's own
      # FUSE_IMPLEMENTATION compiles nothing and the program links impl.o instead (linked by
      # the compiler's driver without the flags: "-x c++" would take the objects for source)
      { $compiler $flags $opt -I. -DFUSE_IMPLEMENTATION_DONE -c "$src" -o "$dir/test_$p.o" &&
          ${compiler%% *} $linkflags "$dir/test_$p.o" "$dir/impl.o" -o "$bin" -lm -lpthread; } >>"$dir/build.log" 2>&1
    else
      $compiler $flags $opt -I. "$src" -o "$bin" -lm -lpthread >>"$dir/build.log" 2>&1
    fi
    if [ -x "$bin" ]; then
      a=$(args_for "$p")
      printf '#!/bin/sh\nexec "$0.bin" %s "$@"\n' "$a" >"$dir/test_$p"
      chmod +x "$dir/test_$p"
    else
      echo "test_$p did not build ($compiler $flags)" >>"$dir/build.log"
    fi
    progs+=("$dir/test_$p")
  done
  built=$(date +%s)
  env $envs bash tests/run.sh "${progs[@]}" >"$dir/run.log" 2>&1
  local last passed failed
  last=$(tail -n 1 "$dir/run.log")
  passed=$(printf '%s\n' "$last" | sed -n 's/^total: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
  failed=$(printf '%s\n' "$last" | sed -n 's/^total: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
  if [ -z "$passed" ]; then passed=0 failed=1; fi
  echo "$name: $passed passed, $failed failed (build $((built - start)) s, run $(($(date +%s) - built)) s; $programs)" >"$dir/summary"
}

mkdir -p "$out"
selected=()
for c in "${configs[@]}"; do
  IFS='|' read -r name compiler flags programs envs <<<"$c"
  if [ ${#wanted[@]} -gt 0 ]; then
    keep=0
    for w in "${wanted[@]}"; do [ "$w" = "$name" ] && keep=1; done
    [ "$keep" = 1 ] || continue
  fi
  selected+=("$c")
done
if [ ${#selected[@]} -eq 0 ]; then
  echo "matrix: no configuration named ${wanted[*]} (see tests/matrix.sh --list)"
  echo "total: 0 passed, 1 failed"
  exit 1
fi

echo "matrix: ${#selected[@]} configurations, $jobs at a time, into $out/"
running=0
for c in "${selected[@]}"; do
  IFS='|' read -r name compiler flags programs envs <<<"$c"
  run_config "$name" "$compiler" "$flags" "$programs" "$envs" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

sum_p=0
sum_f=0
for c in "${selected[@]}"; do
  IFS='|' read -r name compiler flags programs envs <<<"$c"
  line=$(cat "$out/$name/summary" 2>/dev/null || echo "$name: 0 passed, 1 failed (no summary)")
  echo "$line"
  p=$(printf '%s\n' "$line" | sed -n 's/^[^:]*: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
  f=$(printf '%s\n' "$line" | sed -n 's/^[^:]*: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
  sum_p=$((sum_p + ${p:-0}))
  sum_f=$((sum_f + ${f:-0}))
  if [ "${f:-0}" != 0 ]; then # show why
    [ -s "$out/$name/build.log" ] && sed 's/^/    /' "$out/$name/build.log" | tail -n 30
    [ -f "$out/$name/run.log" ] && grep -E 'FAIL|failures:|^  ' "$out/$name/run.log" | sed 's/^/    /' | tail -n 30
  fi
done
echo "total: $sum_p passed, $sum_f failed"
[ "$sum_f" -eq 0 ]
