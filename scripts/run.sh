#!/usr/bin/env bash
# The main job: install what is missing, build, then run the eight
# benchmarks of the project card (`commbench list --default`: latency, bw,
# bibw, mbw_mr, barrier, allreduce, allgather, alltoall) with two ranks on
# this machine. Each size runs until its value is known within 5%
# (--precision 5%, at most OSU's count), so the tables come seconds after
# the build. OSU tables go to stdout; each run's CSV and JSON run
# record go under results/ (or $COMMBENCH_RESULTS_DIR), listed at the end
# with the commands to try next.
#
#   scripts/run.sh          the card's eight, --precision 5%
#   scripts/run.sh --all    every benchmark `commbench list` names, at OSU's
#                           fixed counts (those that need two or more nodes
#                           are skipped, said so, unless MPIRUN_ARGS is set)
#
#   MPIRUN        launcher to use (default: mpirun)
#   MPIRUN_ARGS   extra launcher arguments (default: none); when set, the
#                 benchmarks that need two or more nodes are run too
#   BENCH_ARGS    extra benchmark arguments, e.g. "-m 1:65536" (default: none)
#   CARGO_TARGET_DIR, MPI_PKG_CONFIG   where to build, against which MPI (as
#                 for cargo; e.g. target/mpich and mpich, with MPIRUN=mpiexec.mpich)
set -euo pipefail
cd "$(dirname "$0")/.."

all=0
case "${1:-}" in
  "") ;;
  --all) all=1 ;;
  -h | --help)
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "run.sh: unexpected argument '$1' (give --all, or nothing)" >&2
    exit 2
    ;;
esac

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

bin=${CARGO_TARGET_DIR:-target}/release
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

if [ "$all" -eq 1 ]; then
  benches=$("$bin/commbench" list)
else
  benches=$("$bin/commbench" list --default)
  bench_args=(--precision 5% "${bench_args[@]}")
fi

failed=()
skipped=()
# Benchmarks that need ranks on two or more nodes (osu_bw_fan_in/out):
# skipped here unless MPIRUN_ARGS is given (it may spread the ranks).
multi_node=$("$bin/commbench" list --long | awk '/or more nodes/ {print $1}')
for bench in $benches; do
  if [ ${#launcher_args[@]} -eq 0 ] && grep -qx "$bench" <<<"$multi_node"; then
    echo "run.sh: $bench skipped: it needs ranks on 2 or more nodes, and this runs 2 ranks on this machine (set MPIRUN_ARGS to spread them, e.g. \"--host a,b\")" >&2
    skipped+=("$bench")
    continue
  fi
  if ! "$launcher" -np 2 "${launcher_args[@]}" "$bin/$bench" "${bench_args[@]}"; then
    failed+=("$bench")
  fi
done

echo
echo "Results written under $results_dir/:"
find "$results_dir" -maxdepth 1 -type f \( -name '*.csv' -o -name '*.json' \) -newer "$marker" | sort | sed 's/^/  /'
if [ ${#skipped[@]} -gt 0 ]; then
  echo "Skipped (need 2 or more nodes): ${skipped[*]}"
fi
first_csv=$(find "$results_dir" -maxdepth 1 -type f -name '*osu_latency.csv' -newer "$marker" | sort | head -1)
cat <<EOF

Next:
  # the same eight as one run directory, with summary.md
  $bin/commbench suite
  # judge a run against OSU's output (or another run's CSV), with tolerances
  $bin/commbench compare REFERENCE ${first_csv:-$results_dir/<run>.csv}
  # one SVG chart per benchmark
  $bin/commbench plot $results_dir --out plots
  # every benchmark, at OSU's fixed counts
  scripts/run.sh --all
EOF
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
