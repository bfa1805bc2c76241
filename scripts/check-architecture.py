#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make lint`: docs/architecture.md names what the code has, where a name can be compared without judgement:
- the modules: every target of Package.swift's Sources is described in bold (`**ShakeTrace**`) under "Data flow",
  every C library shim named; a target without a test target of its own (`<Name>Tests`) is named under "Tests";
- the threads: every name a `BlockingThread` is started with (`BlockingThread.start(name: "shaked-source", ...)`)
  is in the page, the daemon's in the first column of the threads table, and every `shaked-*` thread that table
  lists is started somewhere; the type that starts each is named in its row (in the section, for the others);
- the services: every type of Sources/ShakeDaemon that conforms to `Service` is in the services table, in a row
  that names its file;
- the pure state machines: each type in the table's first column is declared in the module its second column
  names, and each shell of its last column is declared in Sources/;
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


def table_rows(table_text):
    """The cells of a Markdown table's rows (header and rule excluded)."""
    rows = [line for line in table_text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.split("|")[1:-1]] for row in rows[2:]]


def first_column(table_text):
    """The first cells of a Markdown table's rows (header and rule excluded)."""
    return [cells[0] for cells in table_rows(table_text)]


def declares(text, name):
    """Whether Swift source declares `name`: a type (`Type`) or a member of one (`Type.member`)."""
    kind, _, member = name.partition(".")
    if not re.search(r"\b(?:struct|enum|class|actor|protocol|extension)\s+%s\b" % re.escape(kind), text):
        return False
    return not member or re.search(r"\b(?:func|var|let|case)\s+%s\b" % re.escape(member), text) is not None


def enclosing_type(text, offset):
    """The type whose body holds `offset`: the last declaration at the file's top level before it."""
    found = re.findall(r"^(?:(?:public|package|internal|final|private|fileprivate)\s+)*"
                       r"(?:struct|enum|class|actor|extension)\s+(\w+)", text[:offset], re.M)
    return found[-1] if found else None


# Modules: Package.swift's targets against the page's descriptions and its Tests section.
manifest = open("Package.swift", encoding="utf-8").read()
declarations = list(re.finditer(r'\.(target|executableTarget|systemLibrary|testTarget)\(\s*name:\s*"([^"]+)"', manifest))
# Each target with its declaration's text (up to the next target), to tell the test helpers under Tests/ apart.
targets = [(match.group(1), match.group(2),
            manifest[match.start():declarations[index + 1].start() if index + 1 < len(declarations) else None])
           for index, match in enumerate(declarations)]
flow_section = section("## Data flow")
tests_section = section("### Tests")
test_targets = {name for kind, name, _ in targets if kind == "testTarget"}
for kind, name, declaration in targets:
    if kind == "systemLibrary":
        if f"`{name}`" not in document:
            problems.append(f"the page does not name the C library shim `{name}`")
    elif kind != "testTarget" and 'path: "Tests/' not in declaration:
        if f"**{name}**" not in flow_section:
            problems.append(f"the module list under \"Data flow\" does not describe {name} (`**{name}**`)")
        if f"{name}Tests" not in test_targets and not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), tests_section):
            problems.append(f"{name} has no test target {name}Tests, and the Tests section does not say where it is tested")


# Threads: names given in code against the page and the daemon's threads table.
threads_section = section("## Threads and tasks")
table = threads_section.split("| thread |", 1)[1].split("\n\n", 1)[0]
listed = {name for cell in first_column("| thread |" + table) for name in re.findall(r"`([^`]+)`", cell)}
rows_by_thread = {name: " | ".join(cells) for cells in table_rows("| thread |" + table)
                  for name in re.findall(r"`([^`]+)`", cells[0])}
started = {}
for path, text in sources.items():
    for match in re.finditer(r'BlockingThread\.start\(\s*name:\s*"([^"]+)"', text):
        started[match.group(1)] = (path, enclosing_type(text, match.start()))
for name, (path, starter) in sorted(started.items()):
    if name.startswith("shaked-") and name not in listed:
        problems.append(f"the threads table does not list `{name}` ({path})")
    elif not name.startswith("shaked-") and f"`{name}`" not in threads_section:
        problems.append(f"the threads section does not name the thread `{name}` ({path})")
    elif starter and not re.search(r"\b%s\b" % starter, rows_by_thread.get(name, threads_section)):
        problems.append(f"the threads section does not name {starter}, which starts `{name}` ({path})")
for name in sorted(listed):
    if name.startswith("shaked-") and name not in started:
        problems.append(f"the threads table lists `{name}`, which no BlockingThread is started with")

# Services: every Service of the daemon in the services table, with its file.
services_table = threads_section.split("| what | runs on | service", 1)[1].split("\n\n", 1)[0]
service_rows = [" | ".join(cells) for cells in table_rows("| what |" + services_table)]
for path, text in sorted(sources.items()):
    if not path.startswith("Sources/ShakeDaemon/"):
        continue
    for name in re.findall(r"^(?:(?:public|package|internal|final)\s+)*(?:struct|class|actor)\s+(\w+)\s*:[^{]*\bService\b",
                           text, re.M):
        file = os.path.basename(path)
        if not any(re.search(r"`%s`" % name, row) and f"`{file}`" in row for row in service_rows):
            problems.append(f"the services table has no row naming the service {name} with its file {file}")

# Pure state machines: each in the module named, each shell declared somewhere.
all_text = "\n".join(sources.values())
for cells in table_rows(section("## Pure state machines")):
    machine, module, shells = re.findall(r"`([^`]+)`", cells[0])[0], cells[1], cells[3]
    module_text = "\n".join(text for path, text in sources.items() if path.startswith(f"Sources/{module}/"))
    if not declares(module_text, machine):
        problems.append(f"the state machines table puts {machine} in {module}, which does not declare it")
    for shell in re.findall(r"`([^`(]+)[^`]*`", shells):
        if not declares(all_text, shell):
            problems.append(f"the state machines table names {shell} as {machine}'s shell, which Sources/ does not declare")

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
