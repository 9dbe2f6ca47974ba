# spatial_manip: every command sets itself up first (idempotent: seconds when nothing changed).
SHELL := /bin/bash
ENV := source scripts/env.sh
PYTEST_ARGS ?=
# pytest-xdist workers for test and test-fast. One process (0) by default: on two workers a worker crashed in
# pyrealsense2's recorder (test_record_replay, run late in a worker) and the run then hung (session 27)
TEST_WORKERS ?= 0
# pytest in a temporary folder of its own (--basetemp) rather than the shared /tmp/pytest-of-$USER, where
# concurrent runs on one machine number and clean each other's folders; removed when the run passes,
# kept and named when it fails
RUN_PYTEST = bt=$$(mktemp -d /tmp/spatial-manip-pytest.XXXXXX) && { python -m pytest -q -p no:cacheprovider \
	-n $(TEST_WORKERS) --basetemp=$$bt $(1) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc = 0 ]; then rm -rf $$bt; else echo "this run's temporary files: $$bt"; fi; exit $$rc; }

.PHONY: setup demo test test-fast lint bench clean

setup:            ## venv, ROS 2 wheels, interfaces build, project install (apt packages as root)
	bash scripts/setup.sh

demo: setup       ## the main job: the sim graph, one instruction from a real action client, a trace page
	$(ENV) && python -m spatial_manip.cli demo

test: setup       ## the linter, then the whole test suite on TEST_WORKERS workers (CI runs exactly this)
	$(ENV) && ruff check . && $(call RUN_PYTEST,)

lint: setup       ## ruff (ruff.toml) alone
	$(ENV) && ruff check .

test-fast: setup  ## everything but the slow and cross-process tests
	$(ENV) && $(call RUN_PYTEST,-m "not slow and not ros")

bench: setup      ## the benchmark commands that print figures (minutes; not part of the tests)
	$(ENV) && bash scripts/bench.sh

clean:
	rm -rf build install log .venv traces out
