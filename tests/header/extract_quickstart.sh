#!/usr/bin/env bash
# extract_quickstart.sh README OUT.c - writes the ```c block that follows the line
# <!-- quickstart --> in README to OUT.c. Fails when there is no such block.
set -euo pipefail
readme=$1
out=$2
mkdir -p "$(dirname "$out")"
awk '
  /^<!-- quickstart -->[[:space:]]*$/ { marker = 1; next }
  marker && !inside && /^```c[[:space:]]*$/ { inside = 1; next }
  inside && /^```[[:space:]]*$/ { done = 1; exit }
  inside { print }
  END { if (!done) exit 1 }
' "$readme" > "$out" || {
  echo "extract_quickstart.sh: no \`\`\`c block after <!-- quickstart --> in $readme" >&2
  exit 1
}
