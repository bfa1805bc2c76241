#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The relay scenario's turns, one timeline each, from a serial log (VM_KEEP_LOG): when the feeder ended the turn,
the reads shaked planned and the opens it timed (PollPhase), the readings it wrote to the relay, iio-sensor-proxy's
polls (the reading each found, and the orientation iio-sensor-proxy computes from it), and when monitor-sensor
printed the new orientation; and, per turn, the polls it took and why (a poll with a reading older than the one
before it; a write that came after the poll it was read for).

Usage: relay-timeline.py SERIAL.LOG [--all]
All times are the guest's CLOCK_MONOTONIC: the feeder's, monitor-sensor's stamps and shaked's own are read from
the clock; iio-sensor-proxy's are the journal's (when journald received the line, a few milliseconds late).
"""
import json
import math
import re
import sys

TURNS = ["bottom-up", "left-up", "normal", "right-up", "normal"]  # scripts/vm/orientation-trace.py
# (the journal's lines with their brackets taken out: "  103.618076 host iio-sensor-prox501: Accel read ...")
ISP_READ = re.compile(r"^\s*([0-9.]+) \S+ iio-sensor-prox\S*: Accel read from input on '[^']*': (-?\d+), (-?\d+), (-?\d+)")
ORIENTATION = re.compile(r"orientation changed: ([a-z-]+)|\(orientation: ([a-z-]+)\)")


def orientation(prev, x, y, z):
    """iio-sensor-proxy's orientation_calc (1 g = 256, identity mount matrix)."""
    portrait = round(math.degrees(math.atan2(x, math.sqrt(y * y + z * z))))
    landscape = round(math.degrees(math.atan2(y, math.sqrt(x * x + z * z))))
    if abs(portrait) > 35 and abs(landscape) > 35:
        return prev
    if abs(portrait) > 35:
        ret = "left-up" if portrait > 0 else "right-up"
        if prev in ("left-up", "right-up") and abs(portrait) < 5:
            ret = prev
        return ret
    if abs(landscape) > 35:
        ret = "bottom-up" if landscape > 0 else "normal"
        if prev in ("bottom-up", "normal") and abs(landscape) < 5:
            ret = prev
        return ret
    return prev


def parse(path):
    events, turn_ends, monitor = [], [], []
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\r\n")
            if not line.startswith("@@ relay "):
                continue
            rest = line[len("@@ relay "):]
            kind, _, rest = rest.partition(" ")
            if kind == "info" and rest.startswith("turn_ends="):
                turn_ends = [float(t) for t in rest.split("=", 1)[1].split(",") if t]
            elif kind == "monitor-times":
                t, _, text = rest.partition(" ")
                m = ORIENTATION.search(text)
                if m:
                    monitor.append((float(t), m.group(1) or m.group(2)))
            elif kind == "log" and rest.startswith("journal "):
                m = ISP_READ.match(rest[len("journal "):])
                if m:
                    events.append((float(m.group(1)), "poll", tuple(int(v) for v in m.group(2, 3, 4))))
            elif kind == "phase":
                try:
                    entry = json.loads(rest)
                except ValueError:
                    continue
                message = entry.get("MESSAGE", "")
                if message == "relay reading written":
                    events.append((float(entry["AT"]), "write", (int(entry["X"]), int(entry["Y"]), int(entry["Z"]))))
                elif message == "relay node opened":
                    events.append((float(entry["AT"]), "timed", (entry.get("POLLS"), entry.get("PERIOD"))))
                elif message == "relay read planned":
                    events.append((float(entry["NOW"]), "plan", (entry.get("PLAN"), entry.get("OPENS"),
                                                                 entry.get("PERIOD"), entry.get("LAST_OPEN"),
                                                                 entry.get("LEAD", "?"), entry.get("LOST", "?"))))
    events.sort(key=lambda e: e[0])
    return events, turn_ends, monitor


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    events, ends, monitor = parse(sys.argv[1])
    show_all = "--all" in sys.argv[2:]
    # iio-sensor-proxy's orientation after each poll, and the age of the reading each poll found (from the last
    # write of the same values before it).
    state, prev_poll = "undefined", None
    annotated = []
    last_write = None
    writes = []
    for t, kind, data in events:
        if kind == "write":
            last_write = (t, data)
            writes.append((t, data))
        if kind == "poll":
            state = orientation(state, *data)
            source = next((w for w in reversed(writes) if w[1] == data and w[0] <= t + 0.05), None)
            age = t - source[0] if source else None
            interval = t - prev_poll if prev_poll is not None else None
            prev_poll = t
            annotated.append((t, kind, data, state, age, interval))
        else:
            annotated.append((t, kind, data, None, None, None))
    if show_all:
        for row in annotated:
            print(format_row(row))
        return
    for index, (end, target) in enumerate(zip(ends, TURNS[1:])):
        shown = [m for m in monitor if m[1] == target and m[0] > end - 1.0]
        seen = shown[0][0] if shown else None
        print("turn %d to %s: end %.3f, monitor-sensor %s" % (
            index + 1, target, end, "%.3f (%+.2f s)" % (seen, seen - end) if seen else "never"))
        stop = (seen if seen else end + 3) + 0.1
        polls = 0
        for row in annotated:
            if end - 1.2 <= row[0] <= stop:
                print("   " + format_row(row, end))
                if row[1] == "poll" and row[0] > end - 0.4:
                    polls += 1
        print()


def format_row(row, end=0.0):
    t, kind, data, state, age, interval = row
    if kind == "poll":
        return "%8.3f %+6.2f  poll   %-16s -> %-9s reading %s old%s" % (
            t, t - end, "%d,%d,%d" % data, state, "%.2f s" % age if age is not None else "?",
            ", %.2f s after the last poll" % interval if interval is not None else "")
    if kind == "write":
        return "%8.3f %+6.2f  write  %-16s (%s)" % (t, t - end, "%d,%d,%d" % data, orientation("?", *data))
    if kind == "timed":
        return "%8.3f %+6.2f  open timed, polls %s, period %s" % (t, t - end, data[0], data[1])
    return "%8.3f %+6.2f  plan   %s (opens drained %s, period %s, last open %s, lead %s, lost %s)" % (
        (t, t - end) + data)


if __name__ == "__main__":
    main()
