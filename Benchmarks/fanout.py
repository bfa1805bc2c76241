#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The fan-out figures on the median of several runs: `make bench-fanout`.

One run of the EventLatency benchmark executable gives, for N subscribers, the plain write loop (the baseline)
and the server's fan-out beside it in the same process, minutes apart at most; on a shared machine the load
moves between runs far more than within one. So each run's figures are taken as ratios to that run's own
baseline, and the median over the runs is reported (the figure the aims are stated on), with every run's ratio
beside it to show the spread.

Given several executables (a build before a change and one after), the runs alternate between them, so that a
change of load falls on both alike.

Usage: Benchmarks/fanout.py [--runs 5] [--sizes 100,1000] [BINARY ...]
       (default binary: Benchmarks/.build/release/EventLatency, built by
       `swift build -c release --product EventLatency` in Benchmarks/). A build kept aside for comparison
       needs libMallocInterposerSwift.so from the same folder beside it (copy both): the executable does not
       start without it.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys

# The aims, as (subscribers, kind, percentile, most times the baseline).
AIMS = [(1000, "socket", 99, 2.0), (100, "ShakeClient", 50, 3.0)]


def percentiles(output):
    """Each benchmark's p50 and p99 in nanoseconds, from the executable's own histogram print-out (the value at
    which the cumulative count first reaches the percentile's share of the samples, as HdrHistogram reads it)."""
    results = {}
    for block in re.split(r"Debug results for ", output)[1:]:
        name = block.split(":\n", 1)[0]
        rows = [
            (float(value), int(count))
            for value, count in re.findall(r"^ *([\d.]+) +[\d.]+ +(\d+)", block, re.MULTILINE)
        ]
        total = int(re.search(r"Total count\s+=\s+(\d+)", block).group(1))

        def at(share):
            needed = max(1, math.ceil(share * total))
            return next(value for value, count in rows if count >= needed)

        results[name] = (at(0.50), at(0.99))
    return results


def run(binary, size):
    output = subprocess.run(
        [binary, "--filter", f".* {size} .*"], capture_output=True, text=True, errors="replace", check=True
    ).stdout
    return percentiles(output)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("binaries", nargs="*")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    binaries = args.binaries or [os.path.join(here, ".build/release/EventLatency")]
    sizes = [int(s) for s in args.sizes.split(",")]
    # figures[binary][(size, kind, percentile)] = [ratio per run]; absolute[...] = [ns per run]
    figures = {b: {} for b in binaries}
    absolute = {b: {} for b in binaries}
    for index in range(args.runs):
        for binary in binaries:
            for size in sizes:
                results = run(binary, size)
                base = results.get(f"plain write to {size} sockets (baseline)")
                if base is None:
                    sys.exit(f"fanout: no baseline in the output of {binary}")
                for kind in ("socket", "ShakeClient"):
                    measured = results.get(f"event to {size} subscribers ({kind})")
                    if measured is None:
                        continue
                    for slot, percentile in enumerate((50, 99)):
                        key = (size, kind, percentile)
                        figures[binary].setdefault(key, []).append(measured[slot] / base[slot])
                        absolute[binary].setdefault(key, []).append(measured[slot])
                    for slot, percentile in enumerate((50, 99)):
                        absolute[binary].setdefault((size, "baseline", percentile), []).append(base[slot])
                print(f"fanout: run {index + 1}/{args.runs} of {os.path.basename(binary)}, {size} done, "
                      f"load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    for binary in binaries:
        print(f"{binary} ({args.runs} runs; ratio to the plain write loop of the same run, median [runs])")
        for key in sorted(figures[binary]):
            size, kind, percentile = key
            ratios = figures[binary][key]
            aim = next((f" (aim <= {most}x)" for s, k, p, most in AIMS if (s, k, p) == key), "")
            spread = ", ".join(f"{r:.2f}" for r in sorted(ratios))
            print(f"  {size:>5} {kind:<11} p{percentile}: {statistics.median(ratios):.2f}x [{spread}]{aim}"
                  f"  (median {statistics.median(absolute[binary][key]) / 1e6:.3f} ms, baseline "
                  f"{statistics.median(absolute[binary][(size, 'baseline', percentile)]) / 1e6:.3f} ms)")


if __name__ == "__main__":
    main()
