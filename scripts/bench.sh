#!/usr/bin/env bash
# The benchmark commands that print figures (minutes; not part of the tests). Outputs go to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p out
run() { echo; echo "### spatial-manip $*"; spatial-manip "$@"; }
run geometry-bench
run plan-bench
run sim-bench --updates 30
run grasp-bench --backends antipodal --scenes 30 --seed 0 --out out/grasp_bench
run camera-bench
run arm-bench --rounds 50
python -m spatial_manip.bench.perception_bench --repeats 5
echo; echo '### generator and planner agree on the whole suite (left make test: minutes)'
python -m spatial_manip.devtools.generator_equivalence
run tasks --suite all --count 200 --seed 0 --out out/tasks_all
run oracle --tasks out/tasks_all/tasks.jsonl --out out/oracle_all --world mujoco
run bench --suite smoke --episodes 20 --seed 0 --workers 2 --segmenter ground_truth --out out/bench_gt
run bench --suite smoke --episodes 20 --seed 0 --workers 2 --segmenter classical --out out/bench_classical
