# Python SDK: build and install the package the way a user does (pip install ./python), then run
# its pytest suite. The dashboard test drives Debian's chromium through chromium-driver; the
# Prometheus source's test runs Debian's Prometheus server.
PYTHON ?= python3
PYTEST_ARGS ?=

WT_EXTRA_DEBS += chromium chromium-driver prometheus
export WT_EXTRA_DEBS

.PHONY: python-install test-python bench-python

# --no-build-isolation: the pinned build tools come from requirements-dev.txt (setup installs them)
# and the build folder python/build/ is reused, so a rebuild compiles only what changed.
# `pip install ./python` alone (isolated) works too; docs/python.md.
python-install: setup
	$(PYTHON) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation ./python

test-python: python-install
	$(PYTHON) -m pytest -q tests/python -p no:cacheprovider $(PYTEST_ARGS)

# pytest-benchmark: pick, report and batch, each against the pure-Python code a script would write
# instead (random.choices or nginx SWRR; an outcome count and latency sum), measured in
# the same run; prints the ratios. Not part of `make test` (timings are not assertions).
bench-python: python-install
	WT_BENCH=1 $(PYTHON) -m pytest -q tests/python/bench -p no:cacheprovider --benchmark-only \
	  --benchmark-columns=min,median,mean,ops --benchmark-sort=name $(PYTEST_ARGS)

test: test-python
