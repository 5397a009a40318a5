# hwcheck: `make test` (fast tier), `make test-all` (with the slow tier), `make check` (the
# scenario suite: its counterexamples and their report, counterexamples/index.html), `make bench`
# (local engine), `make bench-spark` (Spark engine).
PY ?= python3

.PHONY: install test test-all check bench bench-spark clean

install:
	$(PY) -m pip install -e '.[test]'

test:
	$(PY) -m pytest -q

test-all:
	$(PY) -m pytest -q -m ''

check:
	hwcheck suite --out counterexamples

bench:
	$(PY) bench/bench_local.py

bench-spark:
	$(PY) bench/bench_spark.py

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis
