# The two commands a user runs on a fresh machine: `make demo` and `make test`.
# Each does its own set-up (Debian packages, Python packages, Maven), configures, builds, runs.
# Language-specific targets live in mk/*.mk, one file per area, so they can change apart.

PRESET ?= release
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: all setup build test demo bench clean test-cpp
all: build

setup:
	@bash scripts/setup.sh

build: setup
	cmake --preset $(PRESET) >/dev/null
	cmake --build --preset $(PRESET) -j $(JOBS)

test-cpp: build
	ctest --preset $(PRESET) -j $(JOBS)

test: test-cpp
	@echo "make test: all suites passed"

clean:
	rm -rf build out

include $(wildcard mk/*.mk)
