# The simulator (sim/): `make demo` replays the article's experiment (examples/scenarios/seed.json,
# issue 3) against this engine and the peer load balancers, prints the results table and writes
# out/: results.json, CSV series, PNG plots, plus out/tradeoff/ (engine rule variants on the same
# scenario: the success-throughput against error-rate trade-off). Its tests run in ctest.

SIM_BIN := $(BUILD_DIR)/sim/weighted-sim
SIM_OUT ?= out

.PHONY: demo sim
sim: build
	@cmake --preset $(PRESET) -DWT_BUILD_SIM=ON >/dev/null
	@cmake --build --preset $(PRESET) -j $(JOBS) --target weighted-sim >/dev/null

demo: sim
	@mkdir -p $(SIM_OUT)/tradeoff
	@echo '$$ $(SIM_BIN) examples/scenarios/seed.json --out $(SIM_OUT)'
	@$(SIM_BIN) examples/scenarios/seed.json --out $(SIM_OUT) | tee $(SIM_OUT)/table.md
	@$(SIM_BIN) examples/scenarios/seed.json --engines examples/scenarios/engine_variants.json \
	  --out $(SIM_OUT)/tradeoff > $(SIM_OUT)/tradeoff/table.md
	@python3 python/weighted/_plots.py $(SIM_OUT)/results.json $(SIM_OUT) >/dev/null
	@python3 python/weighted/_plots.py $(SIM_OUT)/tradeoff/results.json $(SIM_OUT)/tradeoff \
	  --tradeoff-only >/dev/null
	@echo "make demo: table in $(SIM_OUT)/table.md; results.json, CSV and PNG plots in $(SIM_OUT)/;" \
	  "rule variants in $(SIM_OUT)/tradeoff/"
