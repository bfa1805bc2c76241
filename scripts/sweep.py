#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Synthesized shakes, taken or not, at each preset: the sweep (docs/detection.md, "Where it stands").

    scripts/sweep.py [--shakectl PATH] [--sensitivity light,medium,hard] [--by direction,force] [--rows a,b]
                     [--floors scripts/sweep-floors.csv] [--misses]

Every row is the same grid of 192 shakes (four directions; held in portrait, face up and in landscape; forces 0.4,
0.55, 0.7 and 0.9 of a vigorous shake, about 1.6 to 3.6 g at the turning points; 0.18, 0.25, 0.35 and 0.5 s a
back-and-forth; 1.2 s of shaking in a hand, 1.5 s of the hand holding it before and after), written by `shakectl
synth` with a fixed seed per shake, as another kind of device or person makes it: a sensor that clips at 2 g,
lower sample rates (sampled, not filtered), coarse counts, more noise, a person walking, a brief shake of two
back-and-forths (four strokes from rest to rest). `synth` gives whole strokes (half back-and-forths): 1.2 s at
0.18 s a back-and-forth is 13 strokes (1.17 s), at 0.25 s ten (1.25 s). Each trace goes through `shakectl detect` at each preset; a shake is *taken*
when an `ended` comes after it started. The same command prints the same table. `--by` adds, per row, a table
by those properties (direction, orientation, force, iteration; strokes and length for the brisk rows), with the
median and 90th percentile of `began` after the start of the shakes taken in each group, and
`--misses` lists the shakes not taken at medium.

The recall guard: the brisk rows (324 shakes each: 1, 1.5 or 2 back-and-forths from rest in 0.3-0.6 s, 1.8-4 g at
the turning points, every direction and holding, at 50, 100 and 200 Hz) and the gentle rows (144 each: a phone shaken
for 2-3 s at 2.4-3.8 g, 25, 30 and 60 Hz, with jittered times and repeated samples; taken when `began` comes within
2 s and no `not_a_shake` follows), and the bursty row (the VM's three shakes delivered in bursts by
scripts/vm/bursty-trace.py, seeds 1-300; taken when all three end). A second table gives, per row and preset, the median time from a taken shake's
start to its `began`. `--floors FILE` compares `medium` with the checked-in floors (`make sweep` does):
a detector change may raise a floor, never lower one.
"""
import argparse
import collections
import concurrent.futures
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile

DIRECTIONS = ["horizontal", "vertical", "rotate", "both"]
ORIENTATIONS = ["portrait", "face-up", "landscape-left"]
FORCES = [0.4, 0.55, 0.7, 0.9]
ITERATIONS = [0.18, 0.25, 0.35, 0.5]
DURATION = 1.2
BEFORE = 1.5
AFTER = 1.5

# The brisk short shakes: 2, 3 or 4 strokes from rest to rest (one, one and a half, two back-and-forths) in 0.3,
# 0.45 or 0.6 s, about 1.8, 2.8 and 4.1 g at the turning points.
BRISK_STROKES = [2, 3, 4]
BRISK_LENGTHS = [0.3, 0.45, 0.6]
BRISK_FORCES = [0.45, 0.7, 1.0]
# The gentle sustained shakes of a phone: about 2.4, 3.1 and 3.8 g at the turning points, 2 or 3 s long, 1.6 to
# 2.5 back-and-forths a second (a phone shaken in a hand for a while, as the continuous-shaking recordings go),
# with the timestamps' jitter and the repeated samples of an app polling the sensor.
GENTLE_FORCES = [0.6, 0.75, 0.93]
GENTLE_LENGTHS = [2.0, 3.0]
GENTLE_ITERATIONS = [0.4, 0.6]
GENTLE_DEVICE = ["--jitter", "0.3", "--repeats", "0.1", "--noise", "0.1"]
# How long after the start of a sustained shake its `began` must come (docs/detection.md: the continuous rows).
GENTLE_BEGAN = 2.0


def grid(seed, **axes):
    """Every combination of the axes, each a cell (a dict) with its own seed."""
    names = list(axes)
    for index, values in enumerate(itertools.product(*(axes[n] for n in names))):
        yield dict(zip(names, values), seed=seed + index)


def base_cells():
    return grid(1000, direction=DIRECTIONS, orientation=ORIENTATIONS, force=FORCES, iteration=ITERATIONS)


def brisk_cells():
    for cell in grid(5000, direction=DIRECTIONS, orientation=ORIENTATIONS, force=BRISK_FORCES,
                     strokes=BRISK_STROKES, length=BRISK_LENGTHS):
        cell["iteration"] = round(2 * cell["length"] / cell["strokes"], 4)
        yield cell


def gentle_cells():
    return grid(8000, direction=DIRECTIONS, orientation=ORIENTATIONS, force=GENTLE_FORCES, length=GENTLE_LENGTHS,
                iteration=GENTLE_ITERATIONS)


# Samples delivered in bursts: the VM's trace of three shakes (scripts/vm/vm-test.sh writes it the same way), each
# delivery a seed of scripts/vm/bursty-trace.py (rows held back 20-80 ms, then sent stamped microseconds apart).
BURSTY_TRACE = ["--repeat", "3", "--pause", "2", "--duration", "1.2", "--before", "1.5", "--after", "1.5", "--seed", "7"]
BURSTY_SEEDS = range(1, 301)
BURSTY_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vm", "bursty-trace.py")


def bursty_cells():
    for seed in BURSTY_SEEDS:
        yield {"seed": seed, "direction": "horizontal", "orientation": "portrait", "force": 0.7, "iteration": 0.25}


# Each row: its name, what it is, its cells, what `shakectl synth` is told beyond each cell, and how a shake is
# taken: `ended` (an `ended` after its start) or `began` (a `began` within GENTLE_BEGAN s of its start and no
# `not_a_shake` after it: a shake longer than the too-long cutoff ends `too_long`, which is right), or `ended3`
# (three `ended`: a delivery of the three shakes loses none). `bursty` delivers one trace in bursts, a seed a cell.
# `brief` replaces the duration with two back-and-forths.
ROWS = [
    ("base", "a hand, 100 Hz, 0.05 m/s² noise", base_cells, [], "ended"),
    ("range-2g", "a sensor that clips at ±2 g", base_cells, ["--range", "2"], "ended"),
    ("rate-50", "50 Hz", base_cells, ["--rate", "50"], "ended"),
    ("rate-25", "25 Hz", base_cells, ["--rate", "25"], "ended"),
    ("coarse", "0.153 m/s² a count (8 bits over ±2 g)", base_cells, ["--resolution", "0.153"], "ended"),
    ("noisy", "0.3 m/s² RMS noise", base_cells, ["--noise", "0.3"], "ended"),
    ("walking", "shaken while walking", base_cells, ["--background", "walking", "--before", "4"], "ended"),
    ("brief", "two back-and-forths, no more", base_cells, "brief", "ended"),
    ("cheap-phone", "±2 g, 50 Hz, 0.153 m/s² a count, 0.2 m/s² noise", base_cells,
     ["--range", "2", "--rate", "50", "--resolution", "0.153", "--noise", "0.2"], "ended"),
    ("brisk-50", "brisk short: 1-2 back-and-forths in 0.3-0.6 s, 1.8-4 g, 50 Hz", brisk_cells, ["--rate", "50"],
     "ended"),
    ("brisk-100", "the same, 100 Hz", brisk_cells, ["--rate", "100"], "ended"),
    ("brisk-200", "the same, 200 Hz", brisk_cells, ["--rate", "200"], "ended"),
    ("gentle-25", "gentle sustained phone shake: 2.4-3.8 g, 2-3 s, 25 Hz, jittered, repeats (began ≤ 2 s)",
     gentle_cells, ["--rate", "25", *GENTLE_DEVICE], "began"),
    ("gentle-30", "the same, 30 Hz", gentle_cells, ["--rate", "30", *GENTLE_DEVICE], "began"),
    ("gentle-60", "the same, 60 Hz", gentle_cells, ["--rate", "60", *GENTLE_DEVICE], "began"),
    ("bursty", "the VM's three shakes delivered in bursts, 300 ways (scripts/vm/bursty-trace.py); all three ended",
     bursty_cells, "bursty", "ended3"),
]


def synth_arguments(cell, extra):
    duration = cell.get("length", DURATION)
    arguments = []
    if extra == "brief":
        duration = round(2 * cell["iteration"], 3)
    else:
        arguments = list(extra)
    before = BEFORE
    if "--before" in arguments:
        at = arguments.index("--before")
        before = float(arguments[at + 1])
        del arguments[at:at + 2]
    return [
        "--direction", cell["direction"], "--orientation", cell["orientation"], "--force", str(cell["force"]),
        "--iteration", str(cell["iteration"]), "--duration", str(duration), "--before", str(before),
        "--after", str(AFTER), "--seed", str(cell["seed"]), *arguments,
    ], before


def read_floors(path):
    """The checked-in floors: `row,medium` lines (the fewest shakes `medium` may take), `#` comments."""
    floors = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("row,"):
                continue
            row, floor = line.split(",")
            floors[row.strip()] = int(floor)
    return floors


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shakectl", default=os.environ.get("SHAKECTL", ".build/release/shakectl"))
    parser.add_argument("--sensitivity", default="light,medium,hard")
    parser.add_argument("--config", help="a configuration file for shakectl detect (its detector section)")
    parser.add_argument("--rows", help="only these rows (comma-separated): " + ",".join(r[0] for r in ROWS))
    parser.add_argument("--floors", help="fail (exit 1) when medium takes fewer than this file's floor on a row")
    parser.add_argument("--by", default="", help="per row, a table by these: direction,orientation,force,iteration")
    parser.add_argument("--misses", action="store_true", help="list the shakes medium does not take")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    presets = args.sensitivity.split(",")
    rows = [r for r in ROWS if not args.rows or r[0] in args.rows.split(",")]
    if not rows:
        sys.exit("sweep: no such row")
    if not os.access(args.shakectl, os.X_OK):
        sys.exit(f"sweep: no shakectl at {args.shakectl} (make release, or --shakectl PATH)")

    criteria = {r[0]: r[4] for r in rows}
    with tempfile.TemporaryDirectory(prefix="shaked-sweep.") as folder:
        traces = []  # (row, cell, path, start)
        jobs = []
        bursty_source = os.path.join(folder, "bursty-source.csv")
        if any(r[3] == "bursty" for r in rows):
            made = subprocess.run([args.shakectl, "synth", *BURSTY_TRACE, "--out", bursty_source],
                                  capture_output=True, text=True)
            if made.returncode != 0:
                sys.exit(f"sweep: shakectl synth: {made.stderr.strip()}")
        for row, _, cells, extra, _ in rows:
            for cell in cells():
                if extra == "bursty":
                    path = os.path.join(folder, f"{row}-{cell['seed']}.csv")
                    traces.append((row, cell, path, 1.5))
                    jobs.append(["sh", "-c", 'exec "$0" --seed "$1" "$2" >"$3"', BURSTY_SCRIPT, str(cell["seed"]),
                                 bursty_source, path])
                    continue
                arguments, before = synth_arguments(cell, extra)
                path = os.path.join(folder, f"{row}-{cell['seed']}.csv")
                traces.append((row, cell, path, before))
                jobs.append([args.shakectl, "synth", *arguments, "--out", path])
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for result in pool.map(lambda job: subprocess.run(job, capture_output=True, text=True), jobs):
                if result.returncode != 0:
                    sys.exit(f"sweep: {' '.join(result.args)}: {result.stderr.strip()}")

        taken = {}  # (preset, path) -> bool
        latency = {}  # (preset, path) -> seconds from the shake's start to its began, for the shakes taken
        for preset in presets:
            detect = [args.shakectl, "detect", "--sensitivity", preset]
            if args.config:
                detect += ["--config", args.config]
            ended = collections.defaultdict(list)
            began = collections.defaultdict(list)
            rejected = collections.defaultdict(list)
            # In chunks, to keep each command line short.
            for chunk in range(0, len(traces), 500):
                paths = [t[2] for t in traces[chunk:chunk + 500]]
                result = subprocess.run(detect + paths, capture_output=True, text=True)
                if result.returncode != 0:
                    sys.exit(f"sweep: shakectl detect: {result.stderr.strip()}")
                for line in result.stdout.splitlines():
                    event = json.loads(line)
                    if event.get("phase") == "ended":
                        ended[event["source"]].append(event["time"])
                    elif event.get("phase") == "began":
                        began[event["source"]].append(event["time"])
                    elif event.get("reason") == "not_a_shake":
                        rejected[event["source"]].append(event["time"])
            for row, _, path, start in traces:
                first_began = next((time for time in began[path] if time > start - 0.25), None)
                if criteria[row] == "began":
                    first = next((time for time in began[path] if time > start - 0.25), None)
                    taken[(preset, path)] = (
                        first is not None and first <= start + GENTLE_BEGAN
                        and not any(time > first for time in rejected[path]))
                elif criteria[row] == "ended3":
                    taken[(preset, path)] = len(ended[path]) >= 3
                else:
                    taken[(preset, path)] = any(time > start for time in ended[path])
                if taken[(preset, path)] and first_began is not None:
                    latency[(preset, path)] = first_began - start

    def count(preset, selected):
        return sum(taken[(preset, t[2])] for t in selected), len(selected)

    def spread(preset, selected):
        """The median and the 90th percentile of `began` after the start, of the shakes taken (s)."""
        values = sorted(latency[(preset, t[2])] for t in selected if (preset, t[2]) in latency)
        if not values:
            return "-"
        return f"{statistics.median(values):.2f} / {values[min(len(values) - 1, int(0.9 * len(values)))]:.2f}"

    floors = read_floors(args.floors) if args.floors else {}
    below = []
    width = max(len(r[0]) for r in rows)
    print(f"{'row':<{width}}  " + "  ".join(f"{p:>9}" for p in presets) + ("  floor" if floors else "") + "  what")
    for row, what, _, _, _ in rows:
        selected = [t for t in traces if t[0] == row]
        figures = ["%4d/%-4d" % count(p, selected) for p in presets]
        floor = ""
        if floors:
            floor = f"  {floors[row]:>5}" if row in floors else "      "
            if row in floors and "medium" in presets and count("medium", selected)[0] < floors[row]:
                below.append(f"{row}: medium takes {count('medium', selected)[0]}, its floor is {floors[row]}")
        print(f"{row:<{width}}  " + "  ".join(figures) + floor + f"  {what}")
    print(f"\nbegan after the shake's start, median of the shakes taken (s)")
    for row, _, _, _, _ in rows:
        selected = [t for t in traces if t[0] == row]
        cells = []
        for p in presets:
            values = sorted(latency[(p, t[2])] for t in selected if (p, t[2]) in latency)
            cells.append(f"{statistics.median(values):9.2f}" if values else f"{'-':>9}")
        print(f"{row:<{width}}  " + "  ".join(cells))
    keys = [k for k in args.by.split(",") if k]
    for row, _, _, _, _ in rows:
        if not keys:
            break
        print(f"\n{row}, by {', '.join(keys)}")
        groups = collections.OrderedDict()
        for t in traces:
            if t[0] == row:
                groups.setdefault(tuple(t[1].get(k) for k in keys), []).append(t)
        print(f"  {'':<28}" + "  ".join(f"{p:>9}" for p in presets) + "  " +
              "  ".join(f"{'began ' + p:>15}" for p in presets))
        for group, selected in groups.items():
            label = " ".join(str(v) for v in group)
            delays = "  ".join(f"{spread(p, selected):>15}" for p in presets)
            print(f"  {label:<28}" + "  ".join("%4d/%-4d" % count(p, selected) for p in presets) + "  " + delays)
    if args.misses:
        print("\nnot taken at medium:")
        for row, cell, _, _ in (t for t in traces if not taken.get(("medium", t[2]), True)):
            if dict((r[0], r[3]) for r in ROWS)[row] == "bursty":
                print(f"  {row} seed {cell['seed']}")
                continue
            print(f"  {row} {cell['direction']} {cell['orientation']} force {cell['force']} "
                  f"iteration {cell['iteration']} duration {synth_arguments(cell, dict((r[0], r[3]) for r in ROWS)[row])[0][9]}"
                  f" seed {cell['seed']}")
    if below:
        sys.exit("sweep: under the floor at medium (scripts/sweep-floors.csv):\n  " + "\n  ".join(below))


if __name__ == "__main__":
    main()
