#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make fuzz`: builds the libFuzzer targets of Fuzz/ and runs each for FUZZ_TIME seconds (default 60), or only
# the ones named: scripts/fuzz.sh protocol scan. Targets: protocol, trace, config, scan (docs/fuzzing.md).
#
# Each run starts from a copy of the committed seeds (Fuzz/Corpus/TARGET) in Fuzz/Scratch/corpus/TARGET, where
# libFuzzer also keeps the new inputs it finds; Fuzz/Scratch is not committed. A crash, a sanitizer report or a
# broken invariant fails the run, and the input that caused it is left in Fuzz/Scratch/artifacts/TARGET.
set -euo pipefail

# Everything is inside a function, read whole before it runs, so that editing this file during a run is safe.
main() {
  cd "$(dirname "$0")/.."
  swift=${SWIFT:-swift}
  time=${FUZZ_TIME:-60}
  scratch=.build-fuzz
  work=Fuzz/Scratch
  targets=("$@")
  [ ${#targets[@]} -eq 0 ] && targets=(protocol trace config scan)
  for target in "${targets[@]}"; do
    case "$target" in protocol | trace | config | scan) ;; *)
      echo "fuzz: unknown target '$target' (protocol, trace, config, scan)" >&2
      exit 2
      ;;
    esac
  done

  # SwiftPM's --sanitize flags reach C targets (NIO's shims) as -fsanitize=fuzzer,address, but it hands
  # swiftc two separate -sanitize= flags of which only the last one counts; the trailing -Xswiftc gives Swift
  # code both coverage and AddressSanitizer. --sanitize=fuzzer also makes the executables use libFuzzer's main.
  echo "fuzz: building the fuzzers in $scratch"
  # (gold warns about every AddressSanitizer helper it cannot export: noise, left out.)
  (cd Fuzz && "$swift" build -c debug --scratch-path "../$scratch" \
    --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address) 2>&1 |
    { grep -v "warning: Cannot export local symbol" || true; }
  bin=$("$swift" build -c debug --package-path Fuzz --scratch-path "$scratch" --show-bin-path)

  # The Swift runtime's own crash reporter would race libFuzzer for the signal; libFuzzer reports crashes itself.
  export SWIFT_BACKTRACE=enable=no
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
  failed=()
  for target in "${targets[@]}"; do
    executable="$bin/Fuzz${target^}"
    corpus="$work/corpus/$target"
    artifacts="$work/artifacts/$target"
    mkdir -p "$corpus" "$artifacts"
    cp Fuzz/Corpus/"$target"/* "$corpus"/
    log="$work/$target.log"
    echo "fuzz: $target for ${time}s (log: $log)"
    if "$executable" -max_total_time="$time" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -dict="Fuzz/Dictionaries/$target.dict" -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1; then
      grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1 || true
      grep -E "^stat::(number_of_executed_units|average_exec_per_sec)" "$log" || true
    else
      echo "fuzz: $target FAILED; the report:" >&2
      grep -E -A 30 "INVARIANT BROKEN|ERROR: (libFuzzer|AddressSanitizer)|Fatal error" "$log" | head -60 >&2 || true
      echo "fuzz: the input: $artifacts/$(ls -1t "$artifacts" | head -1)" >&2
      failed+=("$target")
    fi
  done
  if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}; inputs in $work/artifacts (docs/fuzzing.md: adding a regression)" >&2
    exit 1
  fi
  echo "fuzz: no crash in ${targets[*]}"
}

main "$@"
