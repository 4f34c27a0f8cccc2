# Benchmarks (docs/performance.md). Not part of `make test`: timings are measurements, not assertions.
#
#   make bench        the three suites, then docs/performance.md from their JSON:
#                       C++  build/$(PRESET)/benchmarks/weighted_core_bench (Google Benchmark,
#                            BENCH_REPS repetitions, medians), engine vs nginx SWRR and Envoy EDF
#                       Java JMH via java/weighted-bench (BenchMain), JSON result file
#                       Python pytest-benchmark via tests/python/bench (bench-python), JSON
#                     then benchmarks/report.py writes docs/performance.md (medians, same-run
#                     ratios, targets met or missed, the machine). Raw JSON stays in build/bench/.
#   make bench-state  the state file's suite (weighted_state_bench): publishing cost, picks with
#                     the file, a monitor's reads and attach; text and JSON in build/bench/
#   make bench-smoke  builds every benchmark and runs each once, briefly (CI). A suite whose
#                     sources or tools are missing is skipped with a message, not failed.
#
# BENCH_REPS (5), BENCH_MIN_TIME (0.5 s per C++ repetition) and JMH_BENCH_ARGS tune the full run.

BENCH_DIR := build/bench
CORE_BENCH := $(BUILD_DIR)/benchmarks/weighted_core_bench
BENCH_REPS ?= 5
BENCH_MIN_TIME ?= 0.5
JMH_BENCH_ARGS ?= -f 1 -wi 3 -w 1s -i 5 -r 1s
HAVE_JAVA_BENCH = test -d java/weighted-bench && command -v $(MVN) >/dev/null 2>&1 && command -v java >/dev/null 2>&1
HAVE_PY_BENCH = test -d tests/python/bench && $(PYTHON) -c "import pytest_benchmark" 2>/dev/null

.PHONY: bench-state bench-state-smoke
STATE_BENCH := $(BUILD_DIR)/benchmarks/weighted_state_bench

# The state file's targets (docs/state-file.md "Cost"): ratios with and without the file, same run.
bench-state: build
	@mkdir -p $(BENCH_DIR)
	$(STATE_BENCH) --benchmark_repetitions=$(BENCH_REPS) --benchmark_min_time=$(BENCH_MIN_TIME) \
	  --benchmark_report_aggregates_only=true --benchmark_out=$(BENCH_DIR)/state.json \
	  --benchmark_out_format=json | tee $(BENCH_DIR)/state.txt

bench-state-smoke: build
	$(STATE_BENCH) --benchmark_min_time=0.002

.PHONY: bench bench-smoke bench-core bench-core-smoke bench-java bench-java-json bench-py bench-py-smoke

bench: bench-core bench-java bench-py
	$(PYTHON) benchmarks/report.py --core $(BENCH_DIR)/core.json --jmh $(BENCH_DIR)/jmh.json \
	  --python $(BENCH_DIR)/python.json --log $(BENCH_DIR)/run.log --out docs/performance.md \
	  --command "make bench BENCH_REPS=$(BENCH_REPS) BENCH_MIN_TIME=$(BENCH_MIN_TIME)"
	@echo "bench: wrote docs/performance.md"

bench-core: build
	@mkdir -p $(BENCH_DIR)
	@{ echo "start $$(date -u +%FT%TZ) load $$(cut -d' ' -f1-3 /proc/loadavg)"; } > $(BENCH_DIR)/run.log
	$(CORE_BENCH) --benchmark_repetitions=$(BENCH_REPS) --benchmark_min_time=$(BENCH_MIN_TIME) \
	  --benchmark_report_aggregates_only=true --benchmark_out=$(BENCH_DIR)/core.json \
	  --benchmark_out_format=json

bench-java: build
	@mkdir -p $(BENCH_DIR)
	@rm -f $(BENCH_DIR)/jmh.json
	@if $(HAVE_JAVA_BENCH); then \
	  $(MAKE) --no-print-directory bench-java-json; \
	else echo "bench: SKIPPED the JMH suite (java/weighted-bench, mvn or java missing)"; fi

# The Java engineer's module and runner (mk/java.mk builds it the same way for bench-java-smoke),
# with JMH's JSON result file.
bench-java-json:
	$(MVN_JAVA) -DskipTests package -pl weighted-bench -am
	cd java/weighted-bench && java -cp "target/classes:$$(cat target/bench.classpath)" \
	  io.weighted.bench.BenchMain $(JMH_BENCH_ARGS) -rf json -rff $(CURDIR)/$(BENCH_DIR)/jmh.json

bench-py:
	@mkdir -p $(BENCH_DIR)
	@rm -f $(BENCH_DIR)/python.json
	@if $(HAVE_PY_BENCH); then \
	  $(MAKE) --no-print-directory bench-python \
	    PYTEST_ARGS="--benchmark-json=$(CURDIR)/$(BENCH_DIR)/python.json"; \
	else echo "bench: SKIPPED the Python suite (tests/python/bench or pytest-benchmark missing)"; fi
	@echo "end $$(date -u +%FT%TZ) load $$(cut -d' ' -f1-3 /proc/loadavg)" >> $(BENCH_DIR)/run.log

# ---- CI: every benchmark builds and runs one short iteration ----

bench-smoke: bench-core-smoke bench-state-smoke
	@if $(HAVE_JAVA_BENCH); then \
	  $(MAKE) --no-print-directory bench-java-smoke; \
	else echo "bench-smoke: SKIPPED the JMH suite (java/weighted-bench, mvn or java missing)"; fi
	@if $(HAVE_PY_BENCH); then \
	  $(MAKE) --no-print-directory bench-py-smoke; \
	else echo "bench-smoke: SKIPPED the Python suite (tests/python/bench or pytest-benchmark missing)"; fi
	@echo "bench-smoke: every benchmark built and ran"

bench-core-smoke: build
	$(CORE_BENCH) --benchmark_min_time=0.002

bench-py-smoke:
	$(MAKE) --no-print-directory bench-python \
	  PYTEST_ARGS="--benchmark-min-rounds=1 --benchmark-max-time=0.001 --benchmark-warmup=off"
