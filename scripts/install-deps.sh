#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, when they are missing.
# As root it installs them with apt-get; otherwise it names what is missing and how to install it.
set -euo pipefail
packages=(pkg-config libiio-dev libiio-utils umockdev libumockdev0 libsystemd-dev python3 systemd librsvg2-bin mandoc groff-base)
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
