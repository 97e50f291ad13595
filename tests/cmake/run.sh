#!/usr/bin/env bash
# tests/cmake/run.sh [OUT] - `make test-cmake`: builds the consumer project in this directory
# (main.c + check.c, CMakeLists.txt) against the CMakeLists.txt at the repository root, each
# way a project may take fuse.h, into OUT (default build-cmake; what an earlier run left there
# is removed first):
#   add_subdirectory   static fuse::fuse built in the consumer's tree (with oneDNN hidden from
#                      CMake: fuse::dnnl must be left out and the configure still succeed)
#   FetchContent       static fuse::fuse from a file:// tarball of the files CMake needs
#   install            fuse.h's own build, shared (BUILD_SHARED_LIBS), `cmake --install` into
#                      OUT/prefix; every exported symbol starts with fuse_
#   find_package       find_package(fuse) from OUT/prefix
#   pkg-config         cc $(pkg-config --cflags --libs fuseh) with PKG_CONFIG_PATH into OUT/prefix
#   fuse::dnnl         when oneDNN's header is found: find_package(fuse COMPONENTS dnnl), the
#                      conv routed to oneDNN
# Each way that builds and runs the consumer counts as one test; a failure shows the end of
# its log (OUT/<way>.log). The last line is "total: N passed, N failed".
#
# Environment: CC (default cc), FUSE_CMAKE_CFLAGS (the libraries' Release flags, default -O1:
# the implementation is one large unit and the test only checks that it links and runs),
# JOBS (default: the number of cores).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-build-cmake}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# what an earlier run left (by name: OUT may be any directory)
ways="subdirectory fetchcontent install find_package pkg-config dnnl"
for way in $ways; do rm -rf "${out:?}/$way" "$out/$way.log"; done
rm -rf "$out/prefix" "$out/fuse-src.tar.gz"
cc=${CC:-cc}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
cflags=${FUSE_CMAKE_CFLAGS:--O1}
common=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=$cflags" "-DCMAKE_C_COMPILER=$cc")

passed=0
failed=0
started=$SECONDS

ok() { echo "ok   cmake $1 ($2 s)"; passed=$((passed + 1)); }
bad() { # way, log
  echo "FAIL cmake $1; the end of $2:"
  tail -n 25 "$2" | sed 's/^/    /'
  failed=$((failed + 1))
}

# way (one of $ways): configure, build and run the consumer in OUT/<way>; the arguments go
# to cmake
consumer() {
  local way=$1 t0=$SECONDS
  shift
  local log=$out/$way.log dir=$out/$way
  if cmake -S "$here" -B "$dir" "${common[@]}" "$@" >"$log" 2>&1 &&
    cmake --build "$dir" -j "$jobs" >>"$log" 2>&1 &&
    "$dir/consumer" >>"$log" 2>&1; then
    ok "$way: $(tail -n 1 "$log")" $((SECONDS - t0))
    return 0
  fi
  bad "$way" "$log"
  return 1
}

if ! command -v cmake >/dev/null; then
  echo "test-cmake: needs cmake (and pkg-config; Debian: cmake pkg-config)"
  echo "total: 0 passed, 1 failed"
  exit 1
fi
echo "test-cmake: $(cmake --version | head -n 1), $cc, libraries at $cflags, into $out"

# add_subdirectory, with oneDNN's header directories hidden from find_path
if consumer subdirectory -DFUSE_WAY=subdirectory "-DFUSE_SOURCE_DIR=$root" \
  "-DCMAKE_IGNORE_PATH=/usr/include;/usr/local/include"; then
  if ! grep -q "fuse: oneDNN not found: no fuse::dnnl" "$out/subdirectory.log"; then
    echo "FAIL cmake subdirectory: oneDNN was hidden, yet the log does not say it was not found"
    failed=$((failed + 1))
  fi
fi

# FetchContent from a tarball of what CMake needs (what a release archive would hold)
tar -C "$root" -czf "$out/fuse-src.tar.gz" CMakeLists.txt cmake fuse.h fuse_dnnl.h LICENSE
hash=$(sha256sum "$out/fuse-src.tar.gz" | cut -d' ' -f1)
consumer fetchcontent -DFUSE_WAY=fetchcontent "-DFUSE_URL=file://$out/fuse-src.tar.gz" \
  "-DFUSE_URL_HASH=SHA256=$hash"

# fuse.h's own build, shared, installed into OUT/prefix
prefix=$out/prefix
t0=$SECONDS
log=$out/install.log
if cmake -S "$root" -B "$out/install" "${common[@]}" -DBUILD_SHARED_LIBS=ON \
  "-DCMAKE_INSTALL_PREFIX=$prefix" >"$log" 2>&1 &&
  cmake --build "$out/install" -j "$jobs" >>"$log" 2>&1 &&
  cmake --install "$out/install" >>"$log" 2>&1; then
  libdir=$(dirname "$(find "$prefix" -name 'libfuseh.so' | head -n 1)")
  others=$(nm -D --defined-only "$libdir"/libfuseh*.so 2>>"$log" |
    awk 'NF == 3 && $3 !~ /^fuse_/ && $3 !~ /^_(init|fini)$/ {print $3}')
  if [ -n "$others" ] || [ ! -f "$libdir/libfuseh.so" ]; then
    echo "exported symbols without the fuse_ prefix: $others" >>"$log"
    bad install "$log"
  else
    ok "install: $(find "$prefix" -type f | sed "s|^$prefix/||" | sort | tr '\n' ' ')" \
      $((SECONDS - t0))
  fi
else
  bad install "$log"
fi
export LD_LIBRARY_PATH="${libdir:-$prefix/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

consumer find_package -DFUSE_WAY=package "-DCMAKE_PREFIX_PATH=$prefix"

# pkg-config and the C compiler, no CMake
t0=$SECONDS
log=$out/pkg-config.log
pc=$(find "$prefix" -name fuseh.pc 2>/dev/null | head -n 1)
mkdir -p "$out/pkg-config"
if [ -z "$pc" ]; then
  echo "no fuseh.pc under $prefix" >"$log"
  bad pkg-config "$log"
elif flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs fuseh 2>"$log") &&
  echo "pkg-config --cflags --libs fuseh: $flags" >>"$log" &&
  read -r -a flag_words <<<"$flags" &&
  "$cc" -std=c99 -Wall -Wextra -Wpedantic -Werror "$here/main.c" "$here/check.c" \
    -o "$out/pkg-config/consumer" "${flag_words[@]}" >>"$log" 2>&1 &&
  "$out/pkg-config/consumer" >>"$log" 2>&1; then
  ok "pkg-config: ${flag_words[*]}" $((SECONDS - t0))
else
  bad pkg-config "$log"
fi

# fuse::dnnl, from the installed package
if printf '#include <oneapi/dnnl/dnnl.h>\n' | "$cc" -E -x c - >/dev/null 2>&1; then
  consumer dnnl -DFUSE_WAY=package "-DCMAKE_PREFIX_PATH=$prefix" -DCONSUMER_DNNL=ON
else
  echo "cmake dnnl: not run, no oneDNN header (<oneapi/dnnl/dnnl.h>)"
fi

echo "test-cmake: $((SECONDS - started)) s"
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
