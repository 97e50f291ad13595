#!/usr/bin/env bash
# tests/run.sh - runs the header checks and the test programs, adds up their results.
#
#   tests/run.sh [--check NAME]... [PROGRAM]...
#
# --check NAME runs `$MAKE -s check-NAME` (see the Makefile) and counts as one test.
# Each PROGRAM is a test program built from tests/test_*.c; its output stays visible and its
# closing line "area: N passed, N failed" is added to the total. A program that is missing
# (did not build), crashes, times out, or exits non-zero without that line counts as one
# failure; so does one that exits non-zero after a closing line of 0 failures (a sanitizer's
# leak report, say). The last line printed is "total: N passed, N failed"; the exit status is
# 1 when anything failed.
#
# Environment: MAKE (default make), FUSE_TEST_TIMEOUT seconds per program (default 600),
# FUSE_TEST_JOBS header checks and programs at once (default: the CPUs).
set -u

make_cmd=${MAKE:-make}
limit=${FUSE_TEST_TIMEOUT:-600}
closing_re='^[A-Za-z0-9_.-]+: ([0-9]+) passed, ([0-9]+) failed$'

passed=0
failed=0
failures=()

checks=()
programs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) checks+=("$2"); shift 2 ;;
    *) programs+=("$1"); shift ;;
  esac
done

# `make -n test` still runs this script (its line names $(MAKE)): only say what would run.
make_flags=${MAKEFLAGS:-}
make_flags=${make_flags%% *}
case "$make_flags" in
  -* | '') ;;
  *n*)
    echo "tests/run.sh: would run header checks: ${checks[*]:-none}; programs: ${programs[*]:-none}"
    exit 0
    ;;
esac

describe_status() { # exit status -> words
  local rc=$1
  if [ "$rc" -eq 124 ]; then
    echo "timed out after ${limit} s"
  elif [ "$rc" -gt 128 ]; then
    echo "killed by SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"
  else
    echo "exit status $rc"
  fi
}

# ---- header checks
if [ ${#checks[@]} -gt 0 ]; then
  hp=0
  hf=0
  # FUSE_TEST_JOBS checks at once (default: the CPUs); each one's output is shown when it ends
  jobs=${FUSE_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
  cdir=$(mktemp -d)
  i=0
  for name in "${checks[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    ( "$make_cmd" --no-print-directory -s "check-$name" >"$cdir/$i.log" 2>&1; echo $? >"$cdir/$i.rc" ) &
    i=$((i + 1))
  done
  wait
  i=0
  for name in "${checks[@]}"; do
    cat "$cdir/$i.log"
    if [ "$(cat "$cdir/$i.rc" 2>/dev/null)" = 0 ]; then
      hp=$((hp + 1))
    else
      hf=$((hf + 1))
      echo "FAIL header check $name"
      failures+=("header check $name")
    fi
    i=$((i + 1))
  done
  rm -rf "$cdir"
  echo "header: $hp passed, $hf failed"
  passed=$((passed + hp))
  failed=$((failed + hf))
fi

# ---- test programs
timeout_cmd=()
if command -v timeout >/dev/null 2>&1; then
  timeout_cmd=(timeout -k 10 "$limit")
fi
# FUSE_TEST_JOBS programs at once (default: the CPUs; the programs are mostly serial, and under
# the sanitizers or qemu they take most of the time); each one's output is shown when it ends,
# in the order given, with its time.
pdir=$(mktemp -d)
trap 'rm -rf "$pdir"' EXIT
pjobs=${FUSE_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
n=${#programs[@]}
next=0

launch() { # index
  local prog=${programs[$1]} start=$SECONDS
  (
    if [ -x "$prog" ]; then
      "${timeout_cmd[@]}" "$prog" >"$pdir/$1.log" 2>&1 </dev/null
      echo $? >"$pdir/$1.rc.tmp"
    else
      echo missing >"$pdir/$1.rc.tmp"
    fi
    echo $((SECONDS - start)) >"$pdir/$1.time"
    mv "$pdir/$1.rc.tmp" "$pdir/$1.rc"
  ) &
}

for ((i = 0; i < n; i++)); do
  prog=${programs[$i]}
  name=$(basename "$prog")
  while [ ! -f "$pdir/$i.rc" ]; do
    while [ "$next" -lt "$n" ] && [ "$(jobs -rp | wc -l)" -lt "$pjobs" ]; do
      launch "$next"
      next=$((next + 1))
    done
    wait -n 2>/dev/null || sleep 0.2
  done
  rc=$(cat "$pdir/$i.rc")
  if [ "$rc" = missing ]; then
    echo "FAIL $name: did not build"
    failures+=("$name: did not build")
    failed=$((failed + 1))
    continue
  fi
  cat "$pdir/$i.log"
  echo "($name: $(cat "$pdir/$i.time") s)"
  closing=$(grep -E "$closing_re" "$pdir/$i.log" | tail -n 1)
  if [ -z "$closing" ]; then
    echo "FAIL $name: $(describe_status "$rc"), no closing line"
    failures+=("$name: $(describe_status "$rc"), no closing line")
    failed=$((failed + 1))
    continue
  fi
  [[ $closing =~ $closing_re ]]
  p=${BASH_REMATCH[1]}
  f=${BASH_REMATCH[2]}
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$f" -gt 0 ]; then
    failures+=("$name: $f failed")
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL $name: $(describe_status "$rc") after its closing line"
    failures+=("$name: $(describe_status "$rc") after its closing line")
    failed=$((failed + 1))
  fi
done

if [ ${#failures[@]} -gt 0 ]; then
  echo "failures:"
  for f in "${failures[@]}"; do
    echo "  $f"
  done
fi
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
