#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make lint`: every target of Package.swift declares the modules its sources import, and imports every module it
declares (system libraries and the toolchain's modules aside). Usage: scripts/check-imports.py [SWIFT]"""
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
for problem in problems:
    print(f"check-imports: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
