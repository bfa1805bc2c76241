#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make demo: the real daemon on a simulated accelerometer (umockdev) replaying the bundled demo trace, with a
# subscriber (shakectl listen) printing the events as they happen.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-.build/debug}
out=demo-out
rm -rf "$out" && mkdir -p "$out"
trace=demo/demo-trace.csv
speed=${DEMO_SPEED:-2}

echo "== simulated accelerometer: $trace ($(grep -m1 '^#' "$trace" | cut -c3-))"
"$build/shakectl" simulate-device "$trace" --out "$out/device" --shape rotated --speed "$speed" >/dev/null
socket="$PWD/$out/shaked.sock"

echo "== starting shaked on it (log: $out/shaked.log), socket $socket"
umockdev-run --device "$out/device/device.umockdev" --script "/dev/iio:device0=$out/device/iio:device0.script" \
  -- "$build/shaked" --socket "$socket" > "$out/shaked.log" 2>&1 &
daemon=$!
trap 'kill -INT $daemon 2>/dev/null || true; wait $daemon 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done

duration=$(awk -F, '/^[0-9.-]+,/ {last=$1} NR==1 {} END {print last}' "$trace")
seconds=$(awk -v d="$duration" -v s="$speed" 'BEGIN {printf "%d", d / s + 3}')
echo "== a subscriber: shakectl listen (the trace plays for about $seconds s at ${speed}x)"
timeout "$seconds" "$build/shakectl" listen --socket "$socket" || true
echo "== the daemon's view of it:"
grep -E "using accelerometer|capturing|capture is" "$out/shaked.log" | sed 's/^/   /' | head -6
