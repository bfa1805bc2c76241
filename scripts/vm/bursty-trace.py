#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a trace as a sensor without timestamps delivers it under load: a few rows held back 20-80 ms and then
sent in a burst (each stamped when it arrives, microseconds apart), every row up to --jitter late.

The VM's HID feeder runs into exactly this under emulation; the detector should still find the shakes. Example:
    python3 scripts/vm/bursty-trace.py --seed 22 TRACE.csv | shakectl detect -
"""
import argparse
import random
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stalls", type=float, default=0.03, help="share of rows held back (default 0.03)")
    parser.add_argument("--jitter", type=float, default=0.008, help="seconds of lateness at most (default 0.008)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    out.write("time,x,y,z\n")
    clock = float("-inf")
    with open(args.trace) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("time"):
                continue
            t, x, y, z = (float(v) for v in line.split(","))
            due = t + rng.random() * args.jitter
            if rng.random() < args.stalls:
                clock = max(clock, due) + rng.uniform(0.02, 0.08)
            clock = max(clock + 0.00005, due)
            # milli-g, as the HID feeder sends them
            q = [round(v / 9.80665 * 1000) * 0.00980665 for v in (x, y, z)]
            out.write("%.6f,%.6f,%.6f,%.6f\n" % (clock, q[0], q[1], q[2]))


if __name__ == "__main__":
    main()
