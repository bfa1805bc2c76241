#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""MobiFall v2.0's accelerometer recordings as traces for `shakectl eval` (docs/detection.md, "Where it stands").

    scripts/mobifall-traces.py SRC OUT
    shakectl eval OUT --sensitivity medium

SRC is the dataset as its authors distribute it (Vavoulas, Pediaditis, Spanakis and Tsiknakis, IEEE BIBE 2013: a
Galaxy S3 in a trouser pocket): folders subN/ADL/CODE and subN/FALLS/CODE holding CODE_acc_SUBJECT_TRIAL.txt, each
a text header, then lines `nanoseconds,x,y,z` in m/s² with gravity (at rest the vector points up, as a trace's
does). Only the `_acc_` files are read. Research data: keep SRC and OUT out of the repository.

Each recording becomes OUT/mobifall/sub_SUBJECT/CODE_TRIAL.csv (`time,x,y,z`), resampled by linear interpolation
onto a uniform grid at the sensor's own rate (the reciprocal of its median interval, about 90-100 Hz): the source's
intervals are irregular (9-15 ms) and it drops out now and then (2,163 gaps over 50 ms, up to 1.1 s), which the
grid bridges with straight lines. OUT/manifest.csv lists them: kind `fall` for the falls (FOL, FKL, SDL, BSC),
`adl` for daily living, dataset `mobifall`, the source's activity codes (`eval` explains them).
"""
import os
import statistics
import sys

FALLS = {"FOL", "FKL", "SDL", "BSC"}


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line[:1].isdigit():
                t, x, y, z = (float(v) for v in line.split(",")[:4])
                if not rows or t > rows[-1][0]:
                    rows.append((t / 1e9, x, y, z))
    return rows


def resample(rows):
    """The rows on a uniform grid at the median interval, and that rate, rounded to 0.1 Hz."""
    rate = round(1 / statistics.median(b[0] - a[0] for a, b in zip(rows, rows[1:])), 1)
    start, out, j = rows[0][0], [], 0
    for i in range(int((rows[-1][0] - start) * rate) + 1):
        t = start + i / rate
        while j + 2 < len(rows) and rows[j + 1][0] < t:
            j += 1
        (t0, *a), (t1, *b) = rows[j], rows[j + 1]
        w = min(1.0, max(0.0, (t - t0) / (t1 - t0)))
        out.append((i / rate, *(p + (q - p) * w for p, q in zip(a, b))))
    return out, rate


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, out = sys.argv[1], sys.argv[2]
    manifest = ["file,dataset,kind,activity,label_start,label_end,rate"]
    for folder, _, files in sorted(os.walk(source)):
        for name in sorted(files):
            if "_acc_" not in name or not name.endswith(".txt"):
                continue
            code, _, subject, trial = name[:-4].split("_")
            rows = read(os.path.join(folder, name))
            if len(rows) < 2:
                print(f"mobifall-traces: {name}: fewer than two samples, skipped", file=sys.stderr)
                continue
            samples, rate = resample(rows)
            file = f"mobifall/sub_{subject}/{code}_{trial}.csv"
            os.makedirs(os.path.dirname(os.path.join(out, file)), exist_ok=True)
            with open(os.path.join(out, file), "w") as f:
                f.write(f"# MobiFall v2.0 {name}, resampled to {rate} Hz\ntime,x,y,z\n")
                f.writelines("%.4f,%.4f,%.4f,%.4f\n" % s for s in samples)
            manifest.append(f"{file},mobifall,{'fall' if code in FALLS else 'adl'},{code},,,{rate}")
    with open(os.path.join(out, "manifest.csv"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    print(f"mobifall-traces: {len(manifest) - 1} recordings in {out}")


if __name__ == "__main__":
    main()
