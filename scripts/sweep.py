#!/usr/bin/env python3
"""Synthesized shakes, taken or not, at each preset: the sweep (docs/detection.md, "Where it stands").

    scripts/sweep.py [--shakectl PATH] [--sensitivity light,medium,hard] [--by direction,force] [--rows a,b]

Every row is the same grid of 192 shakes (four directions; held in portrait, face up and in landscape; forces 0.4,
0.55, 0.7 and 0.9 of a vigorous shake, about 1.6 to 3.6 g at the turning points; 0.18, 0.25, 0.35 and 0.5 s a
back-and-forth; 1.2 s of shaking in a hand, 1.5 s of the hand holding it before and after), written by `shakectl
synth` with a fixed seed per shake, as another kind of device or person makes it: a sensor that clips at 2 g,
lower sample rates (sampled, not filtered), coarse counts, more noise, a person walking, a brief shake of two
back-and-forths (four strokes from rest to rest). `synth` gives whole strokes (half back-and-forths): 1.2 s at
0.18 s a back-and-forth is 13 strokes (1.17 s), at 0.25 s ten (1.25 s). Each trace goes through `shakectl detect` at each preset; a shake is *taken*
when an `ended` comes after it started. The same command prints the same table. `--by` adds, per row, a table
by those properties (direction, orientation, force, iteration), and `--misses` lists the shakes not taken at
medium.
"""
import argparse
import collections
import concurrent.futures
import itertools
import json
import os
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

# Each row: its name, and what `shakectl synth` is told beyond the grid's cell. `brief` replaces the duration.
ROWS = [
    ("base", "a hand, 100 Hz, 0.05 m/s² noise", []),
    ("range-2g", "a sensor that clips at ±2 g", ["--range", "2"]),
    ("rate-50", "50 Hz", ["--rate", "50"]),
    ("rate-25", "25 Hz", ["--rate", "25"]),
    ("coarse", "0.153 m/s² a count (8 bits over ±2 g)", ["--resolution", "0.153"]),
    ("noisy", "0.3 m/s² RMS noise", ["--noise", "0.3"]),
    ("walking", "shaken while walking", ["--background", "walking", "--before", "4"]),
    ("brief", "two back-and-forths, no more", "brief"),
    ("cheap-phone", "±2 g, 50 Hz, 0.153 m/s² a count, 0.2 m/s² noise",
     ["--range", "2", "--rate", "50", "--resolution", "0.153", "--noise", "0.2"]),
]


def cells():
    for index, (direction, orientation, force, iteration) in enumerate(
            itertools.product(DIRECTIONS, ORIENTATIONS, FORCES, ITERATIONS)):
        yield {"direction": direction, "orientation": orientation, "force": force, "iteration": iteration,
               "seed": 1000 + index}


def synth_arguments(cell, extra):
    duration = DURATION
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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shakectl", default=os.environ.get("SHAKECTL", ".build/release/shakectl"))
    parser.add_argument("--sensitivity", default="light,medium,hard")
    parser.add_argument("--config", help="a configuration file for shakectl detect (its detector section)")
    parser.add_argument("--rows", help="only these rows (comma-separated): " + ",".join(r[0] for r in ROWS))
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

    with tempfile.TemporaryDirectory(prefix="shaked-sweep.") as folder:
        traces = []  # (row, cell, path, start)
        jobs = []
        for row, _, extra in rows:
            for cell in cells():
                arguments, before = synth_arguments(cell, extra)
                path = os.path.join(folder, f"{row}-{cell['seed']}.csv")
                traces.append((row, cell, path, before))
                jobs.append([args.shakectl, "synth", *arguments, "--out", path])
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for result in pool.map(lambda job: subprocess.run(job, capture_output=True, text=True), jobs):
                if result.returncode != 0:
                    sys.exit(f"sweep: {' '.join(result.args)}: {result.stderr.strip()}")

        taken = {}  # (preset, path) -> bool
        for preset in presets:
            detect = [args.shakectl, "detect", "--sensitivity", preset]
            if args.config:
                detect += ["--config", args.config]
            ended = collections.defaultdict(list)
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
            for _, _, path, start in traces:
                taken[(preset, path)] = any(time > start for time in ended[path])

    def count(preset, selected):
        return sum(taken[(preset, t[2])] for t in selected), len(selected)

    width = max(len(r[0]) for r in rows)
    print(f"{'row':<{width}}  " + "  ".join(f"{p:>9}" for p in presets) + "  what")
    for row, what, _ in rows:
        selected = [t for t in traces if t[0] == row]
        figures = ["%4d/%-4d" % count(p, selected) for p in presets]
        print(f"{row:<{width}}  " + "  ".join(figures) + f"  {what}")
    keys = [k for k in args.by.split(",") if k]
    for row, _, _ in rows:
        if not keys:
            break
        print(f"\n{row}, by {', '.join(keys)}")
        groups = collections.OrderedDict()
        for t in traces:
            if t[0] == row:
                groups.setdefault(tuple(t[1][k] for k in keys), []).append(t)
        for group, selected in groups.items():
            label = " ".join(str(v) for v in group)
            print(f"  {label:<28}" + "  ".join("%4d/%-4d" % count(p, selected) for p in presets))
    if args.misses:
        print("\nnot taken at medium:")
        for row, cell, _, _ in (t for t in traces if not taken.get(("medium", t[2]), True)):
            print(f"  {row} {cell['direction']} {cell['orientation']} force {cell['force']} "
                  f"iteration {cell['iteration']} seed {cell['seed']}")


if __name__ == "__main__":
    main()
