#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How long `shaked --check-config` takes on large configuration files: a valid file just under the 1 MB limit in
# three shapes (one flow sequence on one line, a block sequence, comments) and 80,000 keys in one section (each
# an unknown key, so the file is refused after every key was read). Reading is linear: CONFIG_READ_BYTES=524288
# (files of half the size, 40,000 keys) should take about half the time.
# Usage: Benchmarks/config-read.sh [SHAKED=.build/release/shaked]   (run from the repository; status is the
# command's exit status: 0 valid, 64 refused, 124 stopped after CONFIG_READ_LIMIT seconds).
#
# Measured on a shared 2-core machine (load 7-10), release builds: before reading was linear, the flow sequence
# took 73.5 s and the 80,000 keys 17.8 s (block 0.11 s, comments 0.09 s); after, 0.32-0.47 s and 0.72-0.83 s
# (block 0.14-0.27 s, comments 0.03-0.07 s), with half the size taking about half the time.
set -euo pipefail
cd "$(dirname "$0")/.."
shaked=${1:-${SHAKED:-.build/release/shaked}}
limit=${CONFIG_READ_LIMIT:-600}  # Seconds a file may take before it is stopped (status 124).
size=${CONFIG_READ_BYTES:-1048576}  # Under the reader's limit of 1 MB; half of it should take half the time.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"

python3 - "$work" "$size" <<'PY'
import sys
work = sys.argv[1]
limit = int(sys.argv[2])
def fill(head, item, separator, tail):
    """head, then items while the whole stays under the limit, then tail."""
    parts, size = [head], len(head) + len(tail)
    while size + len(item) + len(separator) < limit:
        parts.append(item)
        size += len(item) + len(separator)
    return parts[0] + separator.join(parts[1:]) + tail
with open(f"{work}/flow.yaml", "w") as f:
    f.write(fill("access:\n  subscribe: [", "user:0", ", ", "]\n"))
with open(f"{work}/block.yaml", "w") as f:
    f.write(fill("access:\n  subscribe:\n", "    - user:0", "\n", "\n"))
with open(f"{work}/comments.yaml", "w") as f:
    f.write(fill("detector:\n  threshold: 12\n", "# a comment line of some length", "\n", "\n"))
with open(f"{work}/keys.yaml", "w") as f:
    f.write("detector:\n" + "".join(f"  k{i}: 1\n" for i in range(80000 * limit >> 20)))
PY
chmod 0644 "$work"/*.yaml

printf '%-10s %9s %8s %s\n' file bytes seconds status
for name in flow block comments keys; do
  file="$work/$name.yaml"
  start=$(date +%s%N)
  status=0
  timeout "$limit" "$shaked" --check-config "$file" >/dev/null 2>"$work/err" || status=$?
  end=$(date +%s%N)
  printf '%-10s %9d %8s %s\n' "$name" "$(stat -c %s "$file")" "$(awk -v n=$((end - start)) 'BEGIN { printf "%.2f", n / 1e9 }')" "$status"
done
