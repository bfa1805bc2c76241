#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make deb: the Debian binary package, built with the distribution's own tools (dpkg-buildpackage, debhelper)
# from a copy of the source, so that nothing is written beside the checkout or as root inside it.
#
#   scripts/deb.sh [OUT]   the packages, .buildinfo and .changes land in OUT (default .build-deb/out), then
#                          lintian checks them
#
# SHAKED_PREBUILT=DIR packages the shaked, shakectl and shaked-mqtt already built in DIR instead of building them.
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$PWD
out=$(realpath -m "${1:-.build-deb/out}")
for tool in dpkg-buildpackage dh lintian; do
    command -v "$tool" >/dev/null || { echo "deb: $tool is missing (apt-get install dpkg-dev debhelper lintian)" >&2; exit 1; }
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/shaked-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/shaked" "$out"
# The files git knows (tracked, or new and not ignored), as they are in the working tree, copied with tar
# (essential on Debian, unlike cpio).
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
    [ -e "$file" ] && printf '%s\0' "$file"
done | tar --null --no-recursion -T - -cf - | tar -xf - -C "$stage/shaked"

echo "deb: building in $stage/shaked"
(
    cd "$stage/shaked"
    export SHAKED_SCRATCH=${SHAKED_SCRATCH:-$repository/.build-deb}
    dpkg-buildpackage -b -us -uc --no-pre-clean >"$stage/build.log" 2>&1
) || { cat "$stage/build.log" >&2; echo "deb: dpkg-buildpackage failed" >&2; exit 1; }
rm -f "$out"/shaked_* "$out"/shaked-dbgsym_* "$out"/shaked-mqtt_* "$out"/shaked-mqtt-dbgsym_*
shopt -s nullglob
built=("$stage"/shaked_* "$stage"/shaked-dbgsym_* "$stage"/shaked-mqtt_* "$stage"/shaked-mqtt-dbgsym_*)
[ ${#built[@]} -gt 0 ] || { cat "$stage/build.log" >&2; echo "deb: dpkg-buildpackage made no package" >&2; exit 1; }
mv "${built[@]}" "$out"/
changes=$(ls "$out"/shaked_*.changes)
suppress=()
if [ -n "${SHAKED_PREBUILT:-}" ] && readelf -d "$SHAKED_PREBUILT/shaked" | grep -q 'RUNPATH.*swift'; then
    # Binaries built for the tests load the Swift runtime from the toolchain; the package's own build links it in.
    echo "deb: lintian, without custom-library-search-path (prebuilt binaries that use the toolchain's runtime)"
    suppress=(--suppress-tags custom-library-search-path)
else
    echo "deb: lintian"
fi
lintian --fail-on error,warning --info "${suppress[@]}" "$changes"
ls -1 "$out"/*.deb
