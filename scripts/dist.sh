#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make dist: the source tarball of a release, shaked-VERSION.tar.gz, made from a commit with git archive (the files
# git tracks, nothing built), compressed reproducibly (gzip -n: no name or time of its own), with its SHA-256 beside
# it. VERSION is debian/changelog's newest entry, which `--version` prints too (a test holds them together).
#
#   scripts/dist.sh [OUT] [COMMIT]   OUT defaults to .build-dist, COMMIT to HEAD
#
# Changes in the work tree that are not committed are not in the tarball: it says so.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-.build-dist}")
commit=${2:-HEAD}
git rev-parse --verify --quiet "$commit^{commit}" >/dev/null || { echo "dist: $commit is not a commit" >&2; exit 1; }
version=$(sed -n '1s/^shaked (\([^)]*\)).*/\1/p' debian/changelog)
[ -n "$version" ] || { echo "dist: debian/changelog's first line names no version" >&2; exit 1; }
if [ "$commit" = HEAD ] && [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "dist: the work tree has changes that are not committed; the tarball holds $commit only" >&2
fi
mkdir -p "$out"
name=shaked-$version
tarball=$out/$name.tar.gz
git archive --format=tar --prefix="$name/" "$commit" | gzip -n -9 >"$tarball.tmp"
mv "$tarball.tmp" "$tarball"
for required in LICENSE README.md NEWS.md Package.swift debian/changelog; do
    tar -tzf "$tarball" "$name/$required" >/dev/null 2>&1 || { echo "dist: $required is not in the tarball" >&2; exit 1; }
done
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "dist: $tarball ($(stat -c %s "$tarball") bytes, $(tar -tzf "$tarball" | grep -vc '/$') files, from $(git rev-parse --short "$commit"))"
