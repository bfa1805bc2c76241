#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make lint`: every target of Package.swift declares the modules its sources import, and imports every module it
declares (system libraries and the toolchain's modules aside); and the import graph in docs/architecture.md lists
exactly what each target of Sources/ declares. Usage: scripts/check-imports.py [SWIFT]"""
import glob
import json
import os
import re
import subprocess
import sys

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
swift = sys.argv[1] if len(sys.argv) > 1 else "swift"
package = json.loads(subprocess.run([swift, "package", "dump-package"], check=True, capture_output=True,
                                    text=True).stdout)
# Modules of the toolchain and the C libraries: imported without a declared dependency.
toolchain = {"Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Musl", "Darwin", "Testing",
             "XCTest", "Synchronization", "Dispatch", "_Concurrency", "os"}
# `import X` alone on its line (indented under `#if canImport(...)` too); the lines of the Python scripts that some
# tests embed in strings (`import socket, sys`) list several modules and do not match.
pattern = re.compile(r"^(\s*)(?:@testable\s+)?(?:(?:public|package|internal)\s+)?import\s+"
                     r"(?:(?:struct|enum|class|func|protocol)\s+)?([A-Za-z_]\w*)\s*$", re.M)
problems = []
for target in package["targets"]:
    if target["type"] in ("system", "plugin", "binary", "macro"):
        continue
    name = target["name"]
    path = target.get("path") or ("Tests/" if target["type"] == "test" else "Sources/") + name
    declared = set()
    for dependency in target["dependencies"]:
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                declared.add(dependency[kind][0])
    imported = set()
    for file in glob.glob(f"{path}/**/*.swift", recursive=True):
        for match in pattern.finditer(open(file, encoding="utf-8").read()):
            imported.add(match.group(2))
    unused = declared - imported
    missing = imported - declared - toolchain
    if unused:
        problems.append(f"{name}: declares {', '.join(sorted(unused))} without importing it")
    if missing:
        problems.append(f"{name}: imports {', '.join(sorted(missing))} without declaring it")
# docs/architecture.md's import graph says what each target of Sources/ declares, no more and no less.
declared_by = {}
for target in package["targets"]:
    if target["type"] in ("regular", "executable") and not (target.get("path") or "").startswith("Tests/"):
        declared_by[target["name"]] = {dependency[kind][0] for dependency in target["dependencies"]
                                       for kind in ("byName", "target", "product") if kind in dependency}
document = open("docs/architecture.md", encoding="utf-8").read()
graph = document.split("### The import graph", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
rows = {}
for line in graph.splitlines():
    if not line.strip() or line.strip().startswith("("):
        continue
    if line.startswith(" "):
        rows[current] += "," + line
    else:
        current, rest = line.split(None, 1)
        rows[current] = rest
for name, rest in rows.items():
    listed = set() if rest.strip() == "(nothing)" else {module.strip() for module in rest.split(",") if module.strip()}
    if name not in declared_by:
        problems.append(f"docs/architecture.md: the import graph lists {name}, which is not a target of Sources/")
    elif listed != declared_by[name]:
        extra, absent = sorted(listed - declared_by[name]), sorted(declared_by[name] - listed)
        problems.append(f"docs/architecture.md: the import graph's {name} row differs from Package.swift"
                        + (f"; lists {', '.join(extra)} it does not declare" if extra else "")
                        + (f"; leaves out {', '.join(absent)}" if absent else ""))
for name in sorted(set(declared_by) - set(rows)):
    problems.append(f"docs/architecture.md: the import graph has no row for {name}")
for problem in problems:
    print(f"check-imports: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
