#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a trace (CSV time,x,y,z at 100 Hz) that turns the device through the four orientations iio-sensor-proxy
reports, then appends a shake trace: for the relay scenario (scripts/vm/relay-test.sh).

Gravity is +9.81 m/s² on y at rest upright (shaked's and the IIO device's convention: iio-sensor-proxy calls it
bottom-up), then it turns to +x (left-up), -y (normal), -x (right-up) and back to -y, each turn taking 1 s, each
pose held 4 s. Usage: orientation-trace.py SHAKES.CSV > relay.csv
"""
import math
import sys

G = 9.81
RATE = 100
POSES = [(0, G), (G, 0), (0, -G), (-G, 0), (0, -G)]  # (x, y): bottom-up, left-up, normal, right-up, normal
HOLD, TURN, LEAD = 4.0, 1.0, 6.0

rows = []
t = 0.0


def emit(x, y):
    global t
    rows.append((t, x, y, 0.0))
    t = round(t + 1 / RATE, 6)


for _ in range(int(LEAD * RATE)):
    emit(*POSES[0])
for (x0, y0), (x1, y1) in zip(POSES, POSES[1:]):
    a0, a1 = math.atan2(y0, x0), math.atan2(y1, x1)
    if a1 - a0 > math.pi:
        a1 -= 2 * math.pi
    elif a0 - a1 > math.pi:
        a1 += 2 * math.pi
    for i in range(int(TURN * RATE)):
        a = a0 + (a1 - a0) * (i + 1) / (TURN * RATE)
        emit(G * math.cos(a), G * math.sin(a))
    for _ in range(int(HOLD * RATE)):
        emit(x1, y1)
# The shakes, upright as they were synthesized, after a second's turn back.
with open(sys.argv[1]) as f:
    shakes = [line.strip().split(",") for line in f if line[:1].isdigit() or line[:1] == "-"]
start = t + 1.0
for _ in range(int(RATE)):
    emit(0, G)
for fields in shakes:
    time, x, y, z = (float(v) for v in fields[:4])
    rows.append((round(start + time, 6), x, y, z))
print("time,x,y,z")
for row in rows:
    print("%.3f,%.4f,%.4f,%.4f" % row)
