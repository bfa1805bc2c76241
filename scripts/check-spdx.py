#!/usr/bin/env python3
"""`make lint`: every source file the repository tracks names its licence with an SPDX identifier in its first
lines (`SPDX-License-Identifier: Apache-2.0`, LICENSE). Source files: Swift, C and its headers, module maps, Python
and shell scripts, the makefiles, the maintainer scripts and the units, rules and configuration files the package
installs. Data (traces, corpora, images) and documents are not source files.

Usage: scripts/check-spdx.py [--fix]   --fix adds the identifier where it is missing, as a comment of the file's kind
"""
import os
import subprocess
import sys

IDENTIFIER = "SPDX-License-Identifier: Apache-2.0"
# How a comment starts, by file name suffix (or whole name).
COMMENTS = {
    ".swift": "//", ".c": "//", ".h": "//", ".modulemap": "//",
    ".py": "#", ".sh": "#", ".mk": "#", "Makefile": "#", ".service": "#", ".socket": "#", ".rules": "#",
    ".sysusers": "#", ".tmpfiles": "#", ".yaml": "#", ".conf": None, ".postinst": "#", ".postrm": "#",
    ".prerm": "#", ".preinst": "#", "debian/rules": "#", ".supp": "#",
}
# Where a source file's kind is not in its name, or a file that must begin with something else.
SKIP_PREFIXES = ("Fuzz/Corpus/",)
# How many of a file's first lines may come before the identifier (a #! line, swift-tools-version, an XML header).
HEAD_LINES = 5


def comment_for(path):
    name = os.path.basename(path)
    if path in COMMENTS:
        return COMMENTS[path]
    if name in COMMENTS:
        return COMMENTS[name]
    for suffix, comment in COMMENTS.items():
        if suffix.startswith(".") and name.endswith(suffix):
            return comment
    return None


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    fix = "--fix" in sys.argv[1:]
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], check=True,
                           capture_output=True).stdout.decode().split("\0")
    missing = []
    for path in sorted(f for f in files if f and os.path.isfile(f)):
        if path.startswith(SKIP_PREFIXES):
            continue
        comment = comment_for(path)
        if path.endswith(".conf"):  # D-Bus policy: XML
            comment = "<!--"
        if comment is None:
            continue
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().split("\n")
        if any(IDENTIFIER in line for line in lines[:HEAD_LINES]):
            continue
        missing.append(path)
        if fix:
            insert_at = 0
            if lines and lines[0].startswith(("#!", "// swift-tools-version")):
                insert_at = 1
            elif lines and lines[0].startswith("<?xml"):
                insert_at = 1
                while insert_at < len(lines) and lines[insert_at].lstrip().startswith(("<!DOCTYPE", '"')):
                    insert_at += 1
            line = f"<!-- {IDENTIFIER} -->" if comment == "<!--" else f"{comment} {IDENTIFIER}"
            lines.insert(insert_at, line)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("\n".join(lines))
    if missing and not fix:
        print(f"check-spdx: {len(missing)} source files do not name their licence in their first {HEAD_LINES} "
              f"lines ('{IDENTIFIER}'; scripts/check-spdx.py --fix adds it):", file=sys.stderr)
        for path in missing:
            print(f"  {path}", file=sys.stderr)
        sys.exit(1)
    if fix and missing:
        print(f"check-spdx: added the identifier to {len(missing)} files")


if __name__ == "__main__":
    main()
