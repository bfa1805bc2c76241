#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the committed trace fixtures with `shakectl synth`, plus a few hand-edited variants
# (NaN samples, a gap, time going backwards). Run from the repository: `make fixtures`.
# What each fixture must produce is listed in expectations.txt beside this script.
set -euo pipefail
cd "$(dirname "$0")"
shakectl=${SHAKECTL:-../../.build/debug/shakectl}
synth() { local out=$1; shift; "$shakectl" synth --out "$out" "$@"; }

# Clean shakes in every direction at every supported rate, held in different orientations, with jitter.
orientations=(portrait face-up landscape-left face-down portrait-upside-down)
seed=10
for direction in horizontal vertical rotate both; do
  i=0
  for rate in 25 50 100 200 400; do
    seed=$((seed + 1))
    synth "shake-$direction-${rate}hz.csv" --direction "$direction" --rate "$rate" --duration 1.2 \
      --before 1.5 --after 1.2 --orientation "${orientations[$i]}" --jitter 0.05 --seed "$seed"
    i=$((i + 1))
  done
done

# Too long: six seconds of continuous shaking.
synth long-shake.csv --duration 6 --before 1.5 --after 1.5 --seed 3
# Not shakes: one fling, a tap, a drop onto a table, a slow tilt, turning the device over, walking.
synth fling.csv --motion fling --force 0.9 --before 1.5 --after 1.5 --seed 4
synth tap.csv --motion tap --force 0.9 --background still --orientation face-up --before 1.5 --after 1.5 --seed 5
synth drop.csv --motion drop --force 1 --background still --orientation face-up --before 1.5 --after 1.5 --seed 6
synth tilt.csv --motion tilt --before 1.5 --after 1.5 --seed 7
synth turn-over.csv --motion turn-over --orientation face-up --background still --before 1.5 --after 1.5 --seed 8
synth walking.csv --motion none --background walking --before 20 --after 0 --rate 50 --seed 9

# Hand edits of a clean shake at 100 Hz (shake from 1.5 s to 2.7 s).
base=shake-horizontal-100hz.csv
# Every 7th sample of the shake becomes NaN: dropped, the shake still ends.
awk -F, 'BEGIN{OFS=","} /^[0-9]/ && $1 > 1.5 && $1 < 2.7 && (++n % 7 == 0) {$2="nan"} {print}' "$base" > nan-samples.csv
# The sensor stops for 2 s in the middle of the shake: the shake is interrupted.
awk -F, 'BEGIN{OFS=","} /^[0-9]/ && $1 > 2.2 {$1 = sprintf("%.6f", $1 + 2.0)} {print}' "$base" > gap-mid-shake.csv
# Time jumps back 10 s in the middle of the shake: also an interruption.
awk -F, 'BEGIN{OFS=","} /^[0-9]/ && $1 > 2.2 {$1 = sprintf("%.6f", $1 - 10.0)} {print}' "$base" > backwards-mid-shake.csv
