#!/usr/bin/env bash
# The main job: make sure everything is installed and built, then run every
# benchmark `commbench list` names (point-to-point and collective) with two ranks on
# this machine (those that need two or more nodes are skipped, said so, unless
# MPIRUN_ARGS is set). OSU tables go to stdout; each run's CSV and JSON run record
# go under results/ (or $COMMBENCH_RESULTS_DIR), listed at the end.
#
#   MPIRUN        launcher to use (default: mpirun)
#   MPIRUN_ARGS   extra launcher arguments (default: none); when set, the
#                 benchmarks that need two or more nodes are run too
#   BENCH_ARGS    extra benchmark arguments, e.g. "-m 1:65536" (default: none)
set -euo pipefail
cd "$(dirname "$0")/.."

need_setup=0
for tool in mpirun mpicc pkg-config clang; do
  command -v "$tool" >/dev/null 2>&1 || need_setup=1
done
if [ "$need_setup" -eq 1 ]; then
  scripts/setup.sh
fi
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# Cargo's own progress on stderr: a first build takes a few minutes.
echo "run.sh: building the benchmarks (cargo build --release --bins; the first build takes a few minutes)" >&2
cargo build --release --bins

results_dir=${COMMBENCH_RESULTS_DIR:-results}
export COMMBENCH_RESULTS_DIR=$results_dir
mkdir -p "$results_dir"
marker=$(mktemp)
trap 'rm -f "$marker"' EXIT

launcher=${MPIRUN:-mpirun}
# shellcheck disable=SC2206
launcher_args=(${MPIRUN_ARGS:-})
# shellcheck disable=SC2206
bench_args=(${BENCH_ARGS:-})

failed=()
skipped=()
# Benchmarks that need ranks on two or more nodes (osu_bw_fan_in/out):
# skipped here unless MPIRUN_ARGS is given (it may spread the ranks).
multi_node=$(target/release/commbench list --long | awk '/or more nodes/ {print $1}')
# Every benchmark this build has, in the suite's order.
for bench in $(target/release/commbench list); do
  if [ ${#launcher_args[@]} -eq 0 ] && grep -qx "$bench" <<<"$multi_node"; then
    echo "run.sh: $bench skipped: it needs ranks on 2 or more nodes, and this runs 2 ranks on this machine (set MPIRUN_ARGS to spread them, e.g. \"--host a,b\")" >&2
    skipped+=("$bench")
    continue
  fi
  if ! "$launcher" -np 2 "${launcher_args[@]}" "target/release/$bench" "${bench_args[@]}"; then
    failed+=("$bench")
  fi
done

echo
echo "Results written under $results_dir/:"
find "$results_dir" -maxdepth 1 -type f \( -name '*.csv' -o -name '*.json' \) -newer "$marker" | sort | sed 's/^/  /'
if [ ${#skipped[@]} -gt 0 ]; then
  echo "Skipped (need 2 or more nodes): ${skipped[*]}"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
