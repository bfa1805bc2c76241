#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make lint`: docs/architecture.md names what the code has, where a name can be compared without judgement:
- the threads: every name a `BlockingThread` is started with (`BlockingThread.start(name: "shaked-source", ...)`)
  is in the page, the daemon's in the first column of the threads table, and every `shaked-*` thread that table
  lists is started somewhere;
- the event consumers: every type that conforms to `EventConsumer` in Sources/ is in the data-flow diagram;
- the file tables: every file of Sources/ShakeDaemon and Sources/ShakeServer is in its module's table, and every
  file a table names exists.
Usage: scripts/check-architecture.py"""
import glob
import os
import re
import sys

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
document = open("docs/architecture.md", encoding="utf-8").read()
sources = {path: open(path, encoding="utf-8").read() for path in glob.glob("Sources/**/*.swift", recursive=True)}
problems = []


def section(heading):
    """The text under a heading (`## Threads and tasks`), up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = document.index(heading + "\n") + len(heading) + 1
    following = re.compile(r"^#{1,%d} " % len(level), re.M)
    match = following.search(document, start)
    return document[start:match.start() if match else len(document)]


def first_column(table_text):
    """The first cells of a Markdown table's rows (header and rule excluded)."""
    rows = [line for line in table_text.splitlines() if line.startswith("|")]
    return [row.split("|")[1].strip() for row in rows[2:]]


# Threads: names given in code against the page and the daemon's threads table.
threads_section = section("## Threads and tasks")
table = threads_section.split("| thread |", 1)[1].split("\n\n", 1)[0]
listed = {name for cell in first_column("| thread |" + table) for name in re.findall(r"`([^`]+)`", cell)}
started = {}
for path, text in sources.items():
    for name in re.findall(r'BlockingThread\.start\(\s*name:\s*"([^"]+)"', text):
        started[name] = path
for name, path in sorted(started.items()):
    if name.startswith("shaked-") and name not in listed:
        problems.append(f"the threads table does not list `{name}` ({path})")
    elif not name.startswith("shaked-") and f"`{name}`" not in threads_section:
        problems.append(f"the threads section does not name the thread `{name}` ({path})")
for name in sorted(listed):
    if name.startswith("shaked-") and name not in started:
        problems.append(f"the threads table lists `{name}`, which no BlockingThread is started with")

# Event consumers: every conforming type is in the data-flow diagram.
flow = section("## Data flow").split("```", 2)[1]
for path, text in sorted(sources.items()):
    for name in re.findall(r"^(?:extension|(?:final )?class|struct|actor)\s+(\w+)\s*:[^{]*\bEventConsumer\b", text,
                           re.M):
        if not re.search(r"\b%s\b" % name, flow):
            problems.append(f"the data-flow diagram does not show the event consumer {name} ({path})")

# File tables: a module's files against its table.
for module in ("ShakeDaemon", "ShakeServer"):
    table_text = section(f"### {module}'s files")
    named = {name for cell in first_column(table_text) for name in re.findall(r"`([^`]+\.swift)`", cell)}
    present = {os.path.basename(path) for path in sources if path.startswith(f"Sources/{module}/")}
    for name in sorted(present - named):
        problems.append(f"the table of {module}'s files does not list {name}")
    for name in sorted(named - present):
        problems.append(f"the table of {module}'s files lists {name}, which is not in Sources/{module}")

for problem in problems:
    print(f"check-architecture: docs/architecture.md: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
