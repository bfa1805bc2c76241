#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Splits a development corpus (DIR/manifest.csv) into a tuning part and a held-back part, each a folder
# holding its own manifest.csv and links to DIR's recordings, so that `shakectl eval` scores either alone.
#
#   scripts/dev-split.sh DIR OUT      ->  OUT/tune, OUT/holdout, and OUT/people/NAME for recordings whose person
#                                         is known (one folder a person, for leave-one-person-out figures)
#
# The rule (docs/detection.md, "Tuning and held-back recordings"), fixed before any tuning:
# - SisFall: by person. Subjects SA05 and SA06 are held back, SA01-SA04 are for tuning.
# - Wiimote: the clips carry no person, so within each gesture the clips are ordered by the number in their
#   name (the clip's length) and every third one, starting with the third, is held back.
# - The second set (dev2, fixed before its first use in tuning): UTD-MHAD by person, subject s4 held back, s1-s3
#   for tuning; the phone in a hand or pocket while exercising (itt26, itt26-20hz) by person, marcel held back;
#   the phone shaken, waved or lying (itt23, one person) by recording, numbers 09 and 10 held back.
set -euo pipefail
dir=${1:?usage: dev-split.sh DIR OUT}
out=${2:?usage: dev-split.sh DIR OUT}
dir=$(cd "$dir" && pwd)
for part in tune holdout; do
  mkdir -p "$out/$part"
  for entry in "$dir"/*/; do
    ln -sfn "${entry%/}" "$out/$part/$(basename "$entry")"
  done
done
python3 - "$dir/manifest.csv" "$out" <<'PY'
import csv, re, sys
from collections import defaultdict
manifest, out = sys.argv[1], sys.argv[2]
with open(manifest, newline="") as f:
    rows = list(csv.DictReader(f))
held = set()
by_gesture = defaultdict(list)
people = defaultdict(list)
def person(row):
    name = row["file"].rsplit("/", 1)[-1]
    if row["dataset"] == "sisfall":
        found = re.search(r"_(SA\d\d)_", name)
    elif row["dataset"] == "utd-mhad":
        found = re.search(r"_(s\d+)_t", name)
    elif row["dataset"].startswith("itt26"):
        found = re.match(r"([a-z]+)-", name)
    elif row["dataset"] == "itt23":
        return "itt23"
    else:
        return None
    return found.group(1) if found else None
for row in rows:
    who = person(row)
    if who:
        people[who].append(row)
    if row["dataset"] == "sisfall":
        if re.search(r"_SA0[56]_", row["file"]):
            held.add(row["file"])
    elif row["dataset"] == "utd-mhad":
        if who == "s4":
            held.add(row["file"])
    elif row["dataset"].startswith("itt26"):
        if who == "marcel":
            held.add(row["file"])
    elif row["dataset"] == "itt23":
        if re.search(r"-(09|10)-", row["file"]):
            held.add(row["file"])
    else:
        number = re.search(r"-(\d+)\.csv$", row["file"])
        by_gesture[row["activity"]].append((int(number.group(1)) if number else 0, row["file"]))
for clips in by_gesture.values():
    for index, (_, name) in enumerate(sorted(clips)):
        if index % 3 == 2:
            held.add(name)
columns = ["file", "dataset", "kind", "activity", "label_start", "label_end", "rate"]
for part, keep in (("tune", lambda r: r["file"] not in held), ("holdout", lambda r: r["file"] in held)):
    with open(f"{out}/{part}/manifest.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        count = 0
        for row in rows:
            if keep(row):
                writer.writerow(row)
                count += 1
    print(f"{part}: {count} recordings", file=sys.stderr)
import os
for who, chosen in sorted(people.items()):
    os.makedirs(f"{out}/people/{who}", exist_ok=True)
    with open(f"{out}/people/{who}/manifest.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(chosen)
print(f"people: {', '.join(sorted(people))}", file=sys.stderr)
PY
if [ -d "$out/people" ]; then
  for who in "$out"/people/*/; do
    for entry in "$dir"/*/; do
      ln -sfn "${entry%/}" "$who$(basename "$entry")"
    done
  done
fi
