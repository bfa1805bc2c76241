# SPDX-License-Identifier: Apache-2.0
# shaked: the two set-up commands are `make demo` and `make test`.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

SWIFT ?= swift
# RELEASE_SWIFT_FLAGS: how the installed binaries are built, shared with debian/rules.
include scripts/release-flags.mk
BUILD := .build/debug
RELEASE := .build/release
DEV_DATA ?= ../shared/data/dev

.PHONY: all deps build release test vm-test sanitize demo fixtures bench bench-details bench-fanout bench-daemon bench-hostile bench-mqtt bench-session eval sweep lint format clean fuzz

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

release:
	@scripts/install-deps.sh build
	$(SWIFT) build -c release $(INSTALL_SWIFT_FLAGS)

# The whole test suite: unit tests, replayed trace fixtures, property tests, command-line tests, the Debian package as
# `make deb` builds it (release binaries, lintian; where dpkg-buildpackage and lintian are installed: the package
# tests check it), and the scenarios on the real Linux IIO stack in a virtual machine (docs/vm-tests.md; skipped with
# a message where the machine cannot run them: not root, or no distribution archive). The package's release build
# is kept in .build-deb, so later runs rebuild only what changed.
DEB_OUT := .build-deb/out
test: deps
	$(SWIFT) build --build-tests
	@if command -v dpkg-buildpackage >/dev/null && command -v lintian >/dev/null; then scripts/deb.sh $(DEB_OUT); \
	else echo "test: dpkg-buildpackage or lintian missing; the package tests use this run's binaries"; rm -rf $(DEB_OUT); fi
	@echo "$(SWIFT) test --skip-build (its output also in .build/test.log)"
	@set -o pipefail; SHAKED_DEB=$$(ls $(DEB_OUT)/shaked_*.deb 2>/dev/null | head -1) $(SWIFT) test --skip-build 2>&1 \
	  | tee .build/test.log || { status=$$?; echo "test: what failed, again (a log cut to its tail still says it):"; \
	  grep -a -E '✘|Test Case .* failed|(^|: )error: ' .build/test.log | cut -c1-400 | tail -30; exit $$status; }
	@scripts/vm/vm-test.sh

# The daemon on Debian's own kernel with real IIO drivers fed by traces, in QEMU (docs/vm-tests.md).
# VM_SCENARIOS=a,b runs some of them; fails instead of skipping where the machine cannot run them.
vm-test: deps
	$(SWIFT) build
	VM_REQUIRED=1 scripts/vm/vm-test.sh

# The whole test suite under AddressSanitizer (leaks included), then under ThreadSanitizer, built in .build-asan and
# .build-tsan; fails on any report or failed test. Known reports that are not ours are suppressed, each entry with
# its reason, in scripts/asan.supp, scripts/lsan.supp and scripts/tsan.supp.
sanitize: deps
	SWIFT=$(SWIFT) scripts/sanitize.sh

# The real daemon on a simulated accelerometer replaying the bundled demo trace, and a subscriber printing
# the events as they happen.
demo: build
	@scripts/demo.sh

# Regenerates the committed test fixtures with `shakectl synth`.
fixtures: build
	Tests/Fixtures/generate.sh

# Every performance figure in one table: detector throughput, event latency to 1, 100 and 1,000 subscribers
# (ordo-one/benchmark), and the daemon's CPU, wake-ups and memory at 100 Hz with 10 subscribers and with none.
bench: deps release
	SWIFT=$(SWIFT) Benchmarks/report.sh 60

# The ordo-one benchmarks alone, with their full statistics.
bench-details: deps
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --no-progress

# The event fan-out against its aims (1,000 socket subscribers p99 <= 2x the plain write loop, 100 subscribers
# through ShakeClient p50 <= 3x) on the median of FANOUT_RUNS runs, each figure a ratio to the plain loop of its own
# run (Benchmarks/fanout.py; give it two builds of EventLatency to compare them in alternating runs).
FANOUT_RUNS ?= 5
bench-fanout: deps
	cd Benchmarks && $(SWIFT) build -c release --product EventLatency
	python3 Benchmarks/fanout.py --runs $(FANOUT_RUNS)

# The daemon's CPU, wake-ups and memory while capturing at 100 Hz on a simulated sensor, and while idle.
bench-daemon: deps release
	Benchmarks/daemon-cost.sh 60 10

# Hostile local clients against the real daemon: what pipelined unread requests (300 and 2,000 clients), an
# empty-line flood, 50,000 refused requests and one account holding every slot cost in memory, in a fresh client's
# wait and in watchdog gaps, and how many lines they log (the last two need root). SHAKED=PATH measures another
# build.
SHAKED ?= .build/debug/shaked
bench-hostile: build
	python3 Benchmarks/hostile-clients.py --shaked $(SHAKED) pipeline:300 pipeline:2000 empty:8 simulate:50000 hold:2048

# How soon capture follows the listener's session (lock → off, unlock → on; the aim is a second): the real daemon
# on a simulated sensor, a private bus and a stand-in logind, 10 rounds (Benchmarks/session-follow.py).
bench-session: deps release
	python3 Benchmarks/session-follow.py --rounds 10 --bin $(RELEASE)

# The forwarder to MQTT under load: 100 forwarders at 10 events a second for 60 s against one local mosquitto,
# nothing lost, latency p50/p99 from the daemon's event to the broker's subscriber (docs/mqtt.md).
bench-mqtt: deps
	$(SWIFT) build -c release --product shaked-mqtt
	python3 Benchmarks/mqtt-load.py --forwarders 100 --rate 10 --seconds 60 --shaked-mqtt $(RELEASE)/shaked-mqtt

# Accuracy on the development recordings, when they are present beside the repository.
eval: release
	@if [ -f "$(DEV_DATA)/manifest.csv" ]; then \
	  for s in light medium hard; do $(RELEASE)/shakectl eval --sensitivity $$s "$(DEV_DATA)"; done; \
	else echo "eval: no recordings at $(DEV_DATA) (set DEV_DATA=DIR)"; fi

# Synthesized shakes (four directions, three orientations, gentle to vigorous, quick to slow) as other devices and
# people make them (a ±2 g sensor, 25 and 50 Hz, coarse counts, noise, walking, a brief shake), brisk short shakes
# at 50-200 Hz and a phone's gentle sustained shakes at 25-60 Hz: taken/total at light, medium and hard
# (docs/detection.md, "The recall guard"). Fails when medium takes fewer than a row's floor in
# scripts/sweep-floors.csv. SWEEP_FLAGS="--by direction,orientation --misses".
sweep: release
	scripts/sweep.py --shakectl $(RELEASE)/shakectl --floors scripts/sweep-floors.csv $(SWEEP_FLAGS)

# libFuzzer on the request line, trace, configuration and IIO scan parsers, FUZZ_TIME seconds each, from the seeds
# in Fuzz/Corpus; fails on any crash or broken invariant (docs/fuzzing.md). Builds in .build-fuzz.
FUZZ_TIME ?= 60
fuzz: deps
	FUZZ_TIME=$(FUZZ_TIME) SWIFT=$(SWIFT) scripts/fuzz.sh

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Benchmarks/Benchmarks Fuzz/Sources
	scripts/check-imports.py $(SWIFT)
	scripts/check-architecture.py
	scripts/check-spdx.py

format:
	$(SWIFT) format --in-place --recursive Sources Tests Benchmarks/Benchmarks Fuzz/Sources

clean:
	rm -rf .build .build-vm .build-deb Benchmarks/.build

# make install / make uninstall (docs/install.md): the binaries, the systemd units, the udev rule, the system
# user, the configuration, man pages and shell completions. DESTDIR stages everything in a folder.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
DESTDIR ?=
# The folder `make install` builds in (swift build --scratch-path; .build, as `make release`), and the binaries
# install-files installs: install-files alone installs binaries already built.
BUILD_ROOT ?= .build
BINDIR_BUILD ?= $(BUILD_ROOT)/release
# The installed binaries carry the Swift runtime and are linked for size (scripts/release-flags.mk).
INSTALL_SWIFT_FLAGS ?= $(RELEASE_SWIFT_FLAGS)
# Where install-files writes the completions it generates from those binaries (man pages are in man/).
GENERATED_DIR ?= $(BUILD_ROOT)/install-files
INSTALL_VARIABLES = PREFIX="$(PREFIX)" SYSCONFDIR="$(SYSCONFDIR)" DESTDIR="$(DESTDIR)" \
	BINDIR_BUILD="$(BINDIR_BUILD)" GENERATED_DIR="$(GENERATED_DIR)"

.PHONY: install install-files uninstall deb dist

# The Debian package (debian/), built from a copy of the source with dpkg-buildpackage and checked by lintian;
# the .deb lands in .build-deb/out.
deb: deps
	scripts/deb.sh

# The source tarball of a release (RELEASING.md): .build-dist/shaked-VERSION.tar.gz from HEAD with git archive, and
# its SHA-256.
dist:
	scripts/dist.sh

# Installs what is built when both binaries are there (`make release`, then `sudo make install`), so that root
# never builds in the checkout; builds them first otherwise. Installs no test packages.
install:
	@if [ -x "$(BINDIR_BUILD)/shaked" ] && [ -x "$(BINDIR_BUILD)/shakectl" ]; then \
	  echo "install: installing the binaries in $(BINDIR_BUILD) (make release builds them anew)"; \
	else \
	  scripts/install-deps.sh build && \
	  $(SWIFT) build -c release --scratch-path $(BUILD_ROOT) $(INSTALL_SWIFT_FLAGS); \
	fi
	@$(MAKE) --no-print-directory install-files

install-files:
	@$(INSTALL_VARIABLES) scripts/install.sh install

uninstall:
	@$(INSTALL_VARIABLES) scripts/install.sh uninstall
