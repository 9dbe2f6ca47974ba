# spatial_manip: every command sets itself up first (idempotent: seconds when nothing changed).
SHELL := /bin/bash
ENV := source scripts/env.sh
PYTEST_ARGS ?=
# pytest-xdist workers for test and test-fast. One process (0) by default: on two workers a worker crashed in
# pyrealsense2's recorder (test_record_replay, run late in a worker) and the run then hung (session 27)
TEST_WORKERS ?= 0

.PHONY: setup demo test test-fast lint bench clean

setup:            ## venv, ROS 2 wheels, interfaces build, project install (apt packages as root)
	bash scripts/setup.sh

demo: setup       ## the main job: the sim graph, one instruction from a real action client, a trace page
	$(ENV) && python -m spatial_manip.cli demo

test: setup       ## the linter, then the whole test suite on TEST_WORKERS workers (CI runs exactly this)
	$(ENV) && ruff check . && python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) $(PYTEST_ARGS)

lint: setup       ## ruff (ruff.toml) alone
	$(ENV) && ruff check .

test-fast: setup  ## everything but the slow and cross-process tests
	$(ENV) && python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) -m "not slow and not ros" $(PYTEST_ARGS)

bench: setup      ## the benchmark commands that print figures (minutes; not part of the tests)
	$(ENV) && bash scripts/bench.sh

clean:
	rm -rf build install log .venv traces out
