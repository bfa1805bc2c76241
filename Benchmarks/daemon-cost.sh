#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The daemon's cost while capturing at 100 Hz from a simulated accelerometer (umockdev) with N subscribers, and
# while nobody listens: CPU seconds per minute (from /proc/PID/stat), wake-ups per second (voluntary context
# switches of its threads) and RSS. The simulated FIFO hands over 20 scans per read, as a sensor with a
# watermark does. Usage: Benchmarks/daemon-cost.sh [SECONDS=60] [SUBSCRIBERS=10] (release build first).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
subscribers=${2:-10}
bin=.build/release
work=$(mktemp -d)
trap 'pkill -f "shakectl listen --socket $work" 2>/dev/null || true; [ -n "${pid:-}" ] && kill -INT "$pid" 2>/dev/null; rm -rf "$work"' EXIT
"$bin/shakectl" synth --motion none --background hand --before $((seconds + 15)) --after 0 --out "$work/hand.csv"
"$bin/shakectl" simulate-device "$work/hand.csv" --out "$work/device" --shape buffered --batch 20 >/dev/null
umockdev-run --device "$work/device/device.umockdev" --script "/dev/iio:device0=$work/device/iio:device0.script" \
  -- "$bin/shaked" --socket "$work/s.sock" >"$work/daemon.log" 2>&1 &
for _ in $(seq 100); do [ -S "$work/s.sock" ] && break; sleep 0.1; done
pid=$(pgrep -f "release/shaked --socket $work/s.sock" | head -1)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
switches() { cat /proc/"$pid"/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'; }
tick=$(getconf CLK_TCK)
for _ in $(seq "$subscribers"); do "$bin/shakectl" listen --socket "$work/s.sock" >/dev/null 2>&1 & done
sleep 3
c1=$(cpu); w1=$(switches)
sleep "$seconds"
c2=$(cpu); w2=$(switches)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
awk -v c="$((c2 - c1))" -v t="$tick" -v s="$seconds" -v w="$((w2 - w1))" -v r="$rss" -v n="$subscribers" 'BEGIN {
  printf "capturing at 100 Hz, %d subscribers: %.3f CPU s per minute (%.3f%% of a core), %.1f wake-ups/s, RSS %.1f MB\n",
    n, c / t * 60 / s, c / t / s * 100, w / s, r / 1024 }'
pkill -f "shakectl listen --socket $work" || true
sleep 3
c3=$(cpu)
sleep 20
c4=$(cpu)
awk -v c="$((c4 - c3))" -v t="$tick" 'BEGIN { printf "nobody listening: %.3f CPU s in 20 s\n", c / t }'
grep -q "capture is off" "$work/daemon.log" && echo "nobody listening: capture is off (buffer disabled)"
