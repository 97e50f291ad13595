#!/bin/sh
# tools/amalgamate.sh - writes the single-file fuse.h from the source tree in src/.
#
#   tools/amalgamate.sh [ROOT] > fuse.h        (ROOT defaults to src/fuse.h)
#
# Starting at ROOT, every line of the form
#     #include "path"
# whose path names a file (relative to the including file's folder) is replaced by that file's
# text, recursively, between a begin and an end marker that name it:
#     /* ==== begin src/graph/graph.c ==== */ ... /* ==== end src/graph/graph.c ==== */
# A file included twice is pasted twice: that is how a kernel template is instantiated once per
# instruction set and tile (README.md, "Source map"). Includes in <...>, and quoted ones that
# name no file in the tree, stay as they are. POSIX sh and awk only, so `make fuse.h` needs
# nothing that `make test` does not.
set -eu
root=${1:-src/fuse.h}
[ -f "$root" ] || { echo "amalgamate: no file $root" >&2; exit 1; }
awk -v root="$root" '
function dirname(p,    d) {
  d = p
  if (sub(/\/[^\/]*$/, "", d) == 0) return "."
  return d
}
# "a/b/../c" -> "a/c", "./x" -> "x"
function normalize(p,    n, i, k, parts, out) {
  n = split(p, parts, "/")
  k = 0
  for (i = 1; i <= n; i++) {
    if (parts[i] == "." || parts[i] == "") continue
    if (parts[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
    out[++k] = parts[i]
  }
  p = ""
  for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
  return p
}
function exists(p,    line, r) {
  r = (getline line < p)
  if (r >= 0) close(p)
  return r >= 0
}
function emit(path, depth,    line, inc, file, dir) {
  if (depth > 16) { print "amalgamate: includes nested too deep at " path > "/dev/stderr"; exit 1 }
  dir = dirname(path)
  while ((getline line < path) > 0) {
    if (line ~ /^#[ \t]*include[ \t]+"[^"]+"/) {
      inc = line
      sub(/^#[ \t]*include[ \t]+"/, "", inc)
      sub(/".*$/, "", inc)
      file = normalize(dir "/" inc)
      if (exists(file)) {
        print "/* ==== begin " file " ==== */"
        emit(file, depth + 1)
        print "/* ==== end " file " ==== */"
        continue
      }
    }
    print line
  }
  close(path)
}
BEGIN { emit(normalize(root), 0) }
'
