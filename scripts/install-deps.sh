#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages the build and the tests need, when they are missing.
# As root it installs them with apt-get; otherwise it names what is missing and how to install it.
#
#   scripts/install-deps.sh         what building and the whole test suite need (make test, make demo)
#   scripts/install-deps.sh build   what building alone needs (make install, make release)
set -euo pipefail
# binutils: GNU ld links the release binaries (scripts/release-flags.mk: packed relative relocations, 2.38 or later).
# libmosquitto-dev: the MQTT client library of shaked-mqtt (docs/mqtt.md).
build_packages=(pkg-config libiio-dev libsystemd-dev binutils libmosquitto-dev)
# The tests: simulated devices, libiio's tools, the socket activator, PNG plots, man page lint, the package, a
# private message bus with its clients (busctl is systemd's; python3-dbus runs the D-Bus example and, with
# python3-gi, a stand-in logind); an MQTT broker, its clients and openssl (a test CA) for shaked-mqtt's tests.
test_packages=(libiio-utils umockdev libumockdev0 python3 systemd librsvg2-bin mandoc groff-base
    dpkg-dev debhelper lintian dbus-daemon python3-dbus python3-gi
    mosquitto mosquitto-clients openssl)
case ${1:-all} in
    build) packages=("${build_packages[@]}") ;;
    all) packages=("${build_packages[@]}" "${test_packages[@]}") ;;
    *) echo "usage: $0 [build|all]" >&2; exit 64 ;;
esac
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ! command -v swift >/dev/null 2>&1 && [ ! -x /opt/swift/usr/bin/swift ]; then
  echo "install-deps: Swift 6.1 or later is needed (swift.org); it is not a Debian package" >&2
  exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: missing packages: ${missing[*]}; run: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
