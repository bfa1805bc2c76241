# shaked: the two set-up commands are `make demo` and `make test`.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

SWIFT ?= swift
BUILD := .build/debug
RELEASE := .build/release
DEV_DATA ?= ../shared/data/dev

.PHONY: all deps build release test demo fixtures bench bench-daemon eval lint format clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# The whole test suite: unit tests, replayed trace fixtures, property tests, command-line tests.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# The real daemon on a simulated accelerometer replaying the bundled demo trace, and a subscriber printing
# the events as they happen.
demo: build
	@scripts/demo.sh

# Regenerates the committed test fixtures with `shakectl synth`.
fixtures: build
	Tests/Fixtures/generate.sh

# Detector throughput and event latency to 1, 100 and 1,000 subscribers (ordo-one/benchmark, release build).
bench: deps
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --no-progress

# The daemon's CPU, wake-ups and memory while capturing at 100 Hz on a simulated sensor, and while idle.
bench-daemon: release
	Benchmarks/daemon-cost.sh 60 10

# Accuracy on the development recordings, when they are present beside the repository.
eval: release
	@if [ -f "$(DEV_DATA)/manifest.csv" ]; then \
	  for s in light medium hard; do $(RELEASE)/shakectl eval --sensitivity $$s "$(DEV_DATA)"; done; \
	else echo "eval: no recordings at $(DEV_DATA) (set DEV_DATA=DIR)"; fi

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Benchmarks/Benchmarks

format:
	$(SWIFT) format --in-place --recursive Sources Tests Benchmarks/Benchmarks

clean:
	rm -rf .build Benchmarks/.build
