# hwcheck: `make test` (fast tier), `make test-slow`, `make test-all` (both), `make lint` (ruff,
# mypy), `make check` (the scenario suite: its counterexamples and their report,
# counterexamples/index.html), `make bench` (local engine; its curve over worker counts alone:
# `make bench-scaling`; the KRaft v3.5 shipped configuration's rate against TLC's alone:
# `make bench-wide`), `make bench-ports` (the TLA+ ports
# against TLC), `make bench-tla` (TLA+ modules through `check --spec` against their hand ports and
# TLC), `make bench-spark` (Spark engine).
PY ?= python3
# Test files spread over the machine's cores, a file's tests on one worker (its module fixtures
# built once); JOBS=0 runs them in this process.
JOBS ?= auto
XDIST = $(if $(filter 0,$(JOBS)),,-n $(JOBS) --dist loadfile)

.PHONY: install test test-slow test-all lint check bench bench-scaling bench-wide bench-ports bench-tla bench-spark clean

install:
	$(PY) -m pip install -e '.[test]'

test:
	$(PY) -m pytest -q $(XDIST)

test-slow:
	$(PY) -m pytest -q -m slow $(XDIST)

test-all:
	$(PY) -m pytest -q -m '' $(XDIST)

lint:
	$(PY) -m ruff check checker spec tests bench
	$(PY) -m mypy

check:
	hwcheck suite --out counterexamples

bench:
	$(PY) bench/bench_local.py
	$(PY) bench/bench_scaling.py
	$(PY) bench/bench_wide.py $(if $(TLC),--tlc $(TLC),)

bench-wide:  # TLC=tla2tools.jar:CommunityModules.jar SECONDS=180: hwcheck and TLC by rate
	$(PY) bench/bench_wide.py $(if $(TLC),--tlc $(TLC),) $(if $(SECONDS),--seconds $(SECONDS),)

bench-scaling:  # WORKERS="1 2 4" SIZE=6.2M|68M BASELINE=folder holding another version's hwcheck/
	$(PY) bench/bench_scaling.py $(if $(WORKERS),--workers $(WORKERS),) $(if $(SIZE),--size $(SIZE),) $(if $(BASELINE),--baseline $(BASELINE),)

bench-ports:  # TLC=tla2tools.jar[:CommunityModules.jar] TLA=folder of the TLA+ modules: TLC in the same run; ONLY=names
	$(PY) bench/bench_ports.py $(if $(TLC),--tlc $(TLC) --tla $(TLA),) $(if $(ONLY),--only $(ONLY),)

bench-tla:  # TLC=tla2tools.jar: TLC in the same run; ONLY=rows; RUNS=timed hwcheck runs (3)
	$(PY) bench/bench_tla.py $(if $(TLC),--tlc $(TLC),) $(if $(ONLY),--only $(ONLY),) $(if $(RUNS),--runs $(RUNS),)

bench-spark:
	$(PY) bench/bench_spark.py

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis
