#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the pictures in docs/detection.md from synthesized traces (needs rsvg-convert: librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")"
shakectl=${SHAKECTL:-../../.build/debug/shakectl}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$shakectl" synth --seed 7 --interpolation random --duration 1.6 --out "$work/shake.csv"
"$shakectl" synth --seed 8 --motion none --background jogging --before 12 --after 0 --out "$work/jogging.csv"
"$shakectl" synth --seed 9 --motion jump --orientation portrait --out "$work/jump.csv"
"$shakectl" synth --seed 10 --motion fling --force 0.9 --out "$work/fling.csv"
"$shakectl" synth --seed 11 --direction vertical --force 0.55 --rate 50 --out "$work/gentle-vertical.csv"
images=$PWD
shakectl=$(realpath "$shakectl")
cd "$work"
for name in shake jogging jump fling gentle-vertical; do
  "$shakectl" plot "$name.csv" --out "$images/$name.png" >/dev/null
done
"$shakectl" plot gentle-vertical.csv --sensitivity light --out "$images/gentle-vertical-light.png" >/dev/null
