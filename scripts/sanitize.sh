#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make sanitize`: the whole test suite under AddressSanitizer, then ThreadSanitizer (or the ones named:
# scripts/sanitize.sh address). Each sanitizer builds in a folder of its own (.build-asan, .build-tsan),
# so the ordinary build is untouched; the daemon and shakectl that the integration tests start are the
# instrumented ones too. Any report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
sanitizers=("$@")
[ ${#sanitizers[@]} -eq 0 ] && sanitizers=(address thread)
# umockdev-run preloads its own library ahead of the sanitizer's runtime: allow that order. Stop at the first
# report, so that a finding cannot scroll by unnoticed. The options reach every process the tests start.
export ASAN_OPTIONS="${ASAN_OPTIONS:-verify_asan_link_order=0:halt_on_error=1:detect_leaks=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}"
# The known reports that are not ours, each explained in its file, are suppressed whatever other options are set;
# absolute paths, since the processes the tests start do not all run in this folder.
ASAN_OPTIONS="suppressions=$PWD/scripts/asan.supp:$ASAN_OPTIONS"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp:print_suppressions=0:$TSAN_OPTIONS"
for sanitizer in "${sanitizers[@]}"; do
  case "$sanitizer" in address) scratch=.build-asan ;; thread) scratch=.build-tsan ;; *) scratch=".build-$sanitizer" ;; esac
  echo "sanitize: building the tests with --sanitize=$sanitizer in $scratch"
  "$swift" build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
  echo "sanitize: running the tests with --sanitize=$sanitizer"
  log=$(mktemp)
  # Swift Testing only: the package has no XCTest tests, and an empty XCTest pass leaks on its own at exit.
  if ! "$swift" test --skip-build --disable-xctest --sanitize="$sanitizer" --scratch-path "$scratch" 2>&1 |
    tee "$log"; then
    echo "sanitize: the tests failed under --sanitize=$sanitizer" >&2
    exit 1
  fi
  if grep -Eq "(ERROR|WARNING|SUMMARY): [A-Za-z]+Sanitizer" "$log"; then
    echo "sanitize: a report under --sanitize=$sanitizer (above)" >&2
    exit 1
  fi
  rm -f "$log"
done
echo "sanitize: clean (${sanitizers[*]})"
