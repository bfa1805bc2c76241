#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The detector's cost as instructions per sample, counted by valgrind's callgrind: repeatable on any machine,
# unlike a time. Only `ShakeDetector.process` (with everything it calls) is counted, on the same stream as
# the throughput benchmark (a hand-held device with eight shakes, then a 20 s walk, at 100 Hz), replayed ten
# times end to end: about 56,000 samples.
# Usage: Benchmarks/instructions.sh [SHAKECTL=.build/release/shakectl, for `synth`]   (run from the repository)
set -euo pipefail
cd "$(dirname "$0")/.."
shakectl=${1:-.build/release/shakectl}
command -v valgrind >/dev/null || { echo "instructions: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
[ -x "$shakectl" ] || { echo "instructions: $shakectl is missing (make release)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$shakectl" synth --repeat 8 --pause 3 --duration 1.5 --out "$work/shakes.csv"
end=$(tail -n 1 "$work/shakes.csv" | cut -d, -f1)
start=$(python3 -c "print(round($end + 0.01, 6))")
"$shakectl" synth --motion none --background walking --before 20 --after 2 --start "$start" --out "$work/walk.csv"
python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
rows = []
for name in ("shakes", "walk"):
    with open(f"{work}/{name}.csv") as f:
        rows += [line.strip().split(",") for line in f if line[0].isdigit() or line[0] == "-"]
period = float(rows[-1][0]) - float(rows[0][0]) + 0.01
with open(f"{work}/stream.csv", "w") as out:
    out.write("time,x,y,z\n")
    for lap in range(10):
        for t, x, y, z in rows:
            out.write(f"{float(t) + lap * period:.6f},{x},{y},{z}\n")
PY
samples=$(($(wc -l <"$work/stream.csv") - 1))
# The detector as `swift build -c release` builds it (its own module, optimized whole), driven by
# Benchmarks/Instructions/main.swift, which does without Foundation: this valgrind cannot follow libdispatch.
swiftc=${SWIFTC:-swiftc}
flags=(-O -wmo -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault)
# ShakeDetection's one dependency (settings' descriptions) first.
"$swiftc" "${flags[@]}" -parse-as-library -module-name NumberFormat -emit-library -static \
  -emit-module -emit-module-path "$work/NumberFormat.swiftmodule" -o "$work/libNumberFormat.a" \
  Sources/NumberFormat/*.swift
"$swiftc" "${flags[@]}" -I "$work" -parse-as-library -module-name ShakeDetection -emit-library -static \
  -emit-module -emit-module-path "$work/ShakeDetection.swiftmodule" -o "$work/libShakeDetection.a" \
  Sources/ShakeDetection/*.swift
"$swiftc" "${flags[@]}" -I "$work" -L "$work" -lShakeDetection -lNumberFormat -lm -o "$work/drive" \
  Benchmarks/Instructions/main.swift
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" \
  --toggle-collect='$s14ShakeDetection0A8DetectorV7process*' \
  "$work/drive" <"$work/stream.csv" >/dev/null 2>"$work/valgrind.log" || { cat "$work/valgrind.log" >&2; exit 1; }
total=$(awk '/^summary:/ {print $2}' "$work/callgrind.out")
python3 -c "print(f'ShakeDetector.process: {$total / $samples:.1f} instructions per sample ({$total:,} over $samples samples)')"
