# Reliability (docs/reliability.md): the C++ suite under sanitizers, and the fuzzers.
#
#   make test-asan     the C++ tests (tests/cpp, tests/c) under ASan + UBSan (preset asan)
#   make test-tsan     the same under TSan (preset tsan)
#   make fuzz-smoke    builds the libFuzzer targets in fuzz/ with clang and runs each for
#                      FUZZ_SECONDS (60) from its seed corpus (fuzz/corpus/<target>)
#   make fuzz-long     the same for FUZZ_LONG_SECONDS (600) each: the run docs/reliability.md records
#
# CI (.ci/run) runs `make test` and then these. The sanitizer builds compile only what the C++
# tests need (no simulator, no benchmarks, no JNI), so they stay within CI's time budget.

SAN_CMAKE_ARGS := -DWT_BUILD_SIM=OFF -DWT_BUILD_BENCHMARKS=OFF -DWT_BUILD_JNI=OFF
SAN_TARGETS := weighted_tests weighted_c_test weighted_example_c
# The install check builds a consumer project with the host compiler; it tests packaging, not
# memory or threads, and runs in the release suite.
SAN_CTEST_EXCLUDE := install_find_package_and_pkg_config
FUZZ_TARGETS := config api monitor load_report
FUZZ_SECONDS ?= 60
FUZZ_LONG_SECONDS ?= 600
FUZZ_DIR := build/fuzz
FUZZ_DEBS := clang libclang-rt-14-dev

export ASAN_OPTIONS ?= detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS ?= halt_on_error=1:second_deadlock_stack=1

.PHONY: test-asan test-tsan fuzz-setup fuzz-build fuzz-smoke fuzz-long

define san_suite
	cmake --preset $(1) $(SAN_CMAKE_ARGS) >/dev/null
	cmake --build --preset $(1) -j $(JOBS) --target $(SAN_TARGETS)
	ctest --preset $(1) -j $(JOBS) -E '$(SAN_CTEST_EXCLUDE)'
endef

test-asan: setup
	$(call san_suite,asan)

test-tsan: setup
	$(call san_suite,tsan)

fuzz-setup:
	@WT_EXTRA_DEBS="$(WT_EXTRA_DEBS) $(FUZZ_DEBS)" bash scripts/setup.sh

fuzz-build: fuzz-setup
	CC=clang CXX=clang++ cmake -S fuzz -B $(FUZZ_DIR) -G Ninja >/dev/null
	cmake --build $(FUZZ_DIR) -j $(JOBS)

# Each target starts from a copy of its seed corpus (new inputs go to build/, never into the
# repository) and stops at the first crash, leak, timeout or sanitizer report, with the input
# saved under build/fuzz/artifacts/. fuzz_api gets room for long call sequences (libFuzzer would
# otherwise start from the seeds' ~20 bytes and grow the limit slowly).
define fuzz_run
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/artifacts; \
	  dict=; [ -f fuzz/$$t.dict ] && dict=-dict=fuzz/$$t.dict; \
	  extra=; [ $$t = api ] && extra="-max_len=2048 -len_control=0"; \
	  [ $$t = monitor ] && extra="-max_len=16384"; \
	  echo "fuzz: $$t for $(1) s"; \
	  $(FUZZ_DIR)/fuzz_$$t $(FUZZ_DIR)/corpus/$$t fuzz/corpus/$$t $$dict $$extra -max_total_time=$(1) \
	    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- \
	    2>$(FUZZ_DIR)/$$t.log || { tail -60 $(FUZZ_DIR)/$$t.log; echo "fuzz: $$t FAILED"; exit 1; }; \
	  grep -E 'stat::(number_of_executed_units|average_exec_per_sec|new_units_added)|cov:.*DONE|DONE' $(FUZZ_DIR)/$$t.log | tail -4; \
	done
endef

fuzz-smoke: fuzz-build
	$(call fuzz_run,$(FUZZ_SECONDS))

fuzz-long: fuzz-build
	$(call fuzz_run,$(FUZZ_LONG_SECONDS))
