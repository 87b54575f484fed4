#!/usr/bin/env bash
# Overhead benchmark (not a test): runs commbench's OSU binaries and OSU
# 7.4's own C binaries (built by scripts/build-osu.sh) side by side, np=2,
# under the same launcher, binding and options, through `commbench ab`: for
# ROUNDS rounds (default 9, at least 9) per benchmark, alternating which
# program goes first each round so that drift hits both alike, it prints per
# size the median of each, their ratio (ours / OSU), the spread over rounds
# (interquartile range as a share of the median) and the A/A band (ours run
# twice a round: what noise alone moves in the same rounds; CONTROL=0 leaves
# it out, a third less time, and then every size beyond 5% is a miss).
#
# Benchmarks: osu_latency osu_bw osu_bibw osu_mbw_mr osu_barrier
#             osu_allreduce osu_allgather osu_alltoall
# Targets, at every size: latency-type (latency, barrier, allreduce,
# allgather, alltoall) median ours / median OSU <= 1.05; bandwidth-type
# (bw, bibw, mbw_mr) ratio >= 0.95. Exit 0 when every target is met, 1 when
# some is missed outside its A/A band, 2 on bad settings or a run that
# failed; the last line says which. A size that misses by more than 5% but
# lies within the A/A band is marked ~ (noise), not a miss.
#
#   scripts/bench-overhead.sh
#   CONTROL=0 scripts/bench-overhead.sh         without the A/A control
#   ROUNDS=15 MAX_SIZE=65536 COLL_MAX_SIZE=65536 scripts/bench-overhead.sh
#   BENCHES="osu_allreduce osu_barrier" ...     a subset
#   LAT_ITERS=20000:200 BW_ITERS=1000:100 COLL_ITERS=2000:200 ...
#       fixed iterations:warm-up (-i/-x, given to both programs) for every
#       size of osu_latency / of bw, bibw, mbw_mr / of the collectives;
#       default OSU's own, which switch above 8192 bytes. More iterations
#       make each round less noisy.
#   MAX_SIZE (default 4194304) largest point-to-point size, COLL_MAX_SIZE
#       (default 1048576) largest collective size (-m; barrier has none)
#   MPIRUN=mpiexec.mpich MPIRUN_ARGS="-bind-to core" ...
#       another launcher; MPIRUN_ARGS defaults to "--bind-to core". OSU is
#       then built with MPICH (OSU_MPI, guessed from the launcher's name),
#       and commbench must be built against MPICH too: set CARGO_TARGET_DIR
#       to that build's target dir, e.g. MPI_PKG_CONFIG=mpich
#       CARGO_TARGET_DIR=target/mpich.
#   OSU_BIN=DIR     OSU binaries to use instead of building them
#   OURS_BIN=DIR    the binaries to measure as "ours" instead of this
#                   checkout's release build (not rebuilt): another
#                   commbench build, to compare two commits, or OSU's own
#                   binaries, for an A/A run that shows the noise floor
#   RUN_TIMEOUT=600 seconds one run may take before it counts as failed
#   RAW_DIR=DIR     keep every run's stdout and stderr there
#                   (<bench>/<a|b|a2>-<round>.txt/.err; a is ours, b OSU);
#                   default: temporary directories removed at the end
#
# Why the verdict compares numbers at OSU's printed precision: OSU prints
# two decimals and keeps no other record, so at sub-microsecond latencies
# one printed step (0.01 us) is 4-6% of the value, as large as the target.
# Comparing our full-precision CSV median with OSU's rounded median would
# mix a rounding error of up to +-0.005 us into one side only. So the
# ratio is taken between medians of like with like: our stdout values
# (printed by the same %.2f rule as OSU's) against OSU's stdout values,
# each rounded once the same way. A size whose two medians differ by
# at most one printed step (0.01) counts as met whatever the ratio, marked
# '=': OSU cannot show a smaller difference, so none is claimed. With large
# run-to-run noise the rounding acts as dither and medians over >= 9
# rounds are stable to about that step.
#
# Noise: these machines are shared and noisy (8-byte latency moves between
# about 0.2 and 0.7 us from one run to the next); a single miss with a wide
# spread is weather, a miss at many neighbouring sizes is a finding. With
# Open MPI's shared-memory transport, 1-8 byte collectives can settle into
# one of two levels (e.g. about 0.45 or 0.9 us for allreduce) depending on
# the MPI calls a program made before its loop; commbench makes a few at
# start-up (node split, small agreements, a placement gather) that OSU does
# not, so a persistent 2x at only the smallest collective sizes points
# there, not at the timed loop.
set -euo pipefail
# Paths given by the caller are relative to where they called from.
here=$PWD
abspath() { case $1 in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
[ -z "${OSU_BIN:-}" ] || OSU_BIN=$(abspath "$OSU_BIN")
[ -z "${RAW_DIR:-}" ] || RAW_DIR=$(abspath "$RAW_DIR")
[ -z "${OURS_BIN:-}" ] || OURS_BIN=$(abspath "$OURS_BIN")
cd "$(dirname "$0")/.."

all_benches="osu_latency osu_bw osu_bibw osu_mbw_mr osu_barrier osu_allreduce osu_allgather osu_alltoall"
rounds=${ROUNDS:-9}
max=${MAX_SIZE:-4194304}
coll_max=${COLL_MAX_SIZE:-1048576}
benches=${BENCHES:-$all_benches}
run_timeout=${RUN_TIMEOUT:-600}

die() { echo "bench-overhead.sh: $*" >&2; exit 2; }
case $rounds in '' | *[!0-9]*) die "ROUNDS must be a whole number, not '$rounds'" ;; esac
[ "$rounds" -ge 9 ] || die "ROUNDS must be at least 9 (medians of fewer rounds are noise here)"
for b in $benches; do
  case " $all_benches " in *" $b "*) ;; *) die "unknown benchmark '$b' in BENCHES (known: $all_benches)" ;; esac
done
for v in LAT_ITERS BW_ITERS COLL_ITERS; do
  val=${!v:-}
  [ -z "$val" ] || [[ $val =~ ^[0-9]+:[0-9]+$ ]] || die "$v must be ITERS:WARMUP, not '$val'"
done

if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
launcher=${MPIRUN:-mpirun}
# shellcheck disable=SC2206
launcher_args=(${MPIRUN_ARGS:---bind-to core})
case $(basename "$launcher") in *mpich* | *hydra*) osu_mpi_guess=mpich ;; *) osu_mpi_guess=openmpi ;; esac

if [ -n "${OSU_BIN:-}" ]; then
  osu_bin=$OSU_BIN
else
  osu_bin=$(OSU_MPI=${OSU_MPI:-$osu_mpi_guess} scripts/build-osu.sh) || exit 2
fi
if [ -n "${OURS_BIN:-}" ]; then
  ours_bin=$OURS_BIN
else
  cargo build --release --quiet --bins || die "cargo build failed"
  ours_bin=${CARGO_TARGET_DIR:-target}/release
fi
for b in $benches; do
  [ -x "$osu_bin/$b" ] || die "no OSU binary $osu_bin/$b"
  [ -x "$ours_bin/$b" ] || die "no binary $ours_bin/$b to measure"
done
# commbench binaries also write a full-precision CSV; others only stdout.
ours_csv=0
"$ours_bin/osu_latency" --version 2>/dev/null | grep -q '^commbench' && ours_csv=1

# The harness: this checkout's commbench (built above, or now when
# OURS_BIN names other binaries).
cargo build --release --quiet --bin commbench || die "cargo build failed"
ab=${CARGO_TARGET_DIR:-target}/release/commbench

# Options given to both programs for one benchmark.
args_of() {
  local it=""
  case $1 in
    osu_latency) it=${LAT_ITERS:-}; echo "-m $max" ;;
    osu_bw | osu_bibw | osu_mbw_mr) it=${BW_ITERS:-}; echo "-m $max" ;;
    osu_barrier) it=${COLL_ITERS:-} ;;
    *) it=${COLL_ITERS:-}; echo "-m $coll_max" ;;
  esac
  [ -z "$it" ] || echo "-i ${it%%:*} -x ${it##*:}"
}

echo "OSU binaries: $osu_bin; commbench: $ours_bin; launcher: $launcher ${launcher_args[*]}" >&2
# commbench binaries leave no result files here (stdout is what is compared).
ours_extra=""
[ "$ours_csv" = 1 ] && ours_extra="--no-results"
worst=0
for b in $benches; do
  extra=$(args_of "$b" | tr '\n' ' ')
  run=("$launcher" -np 2 "${launcher_args[@]}")
  opts=(--label-a commbench --label-b "OSU 7.4" --rounds "$rounds" --max-worse 5% --timeout "$run_timeout")
  [ "${CONTROL:-1}" = 1 ] && opts+=(--control)
  [ -n "${RAW_DIR:-}" ] && opts+=(--raw-dir "$RAW_DIR/$b")
  rc=0
  "$ab" ab "${opts[@]}" --a "${run[*]} $ours_bin/$b $extra $ours_extra" --b "${run[*]} $osu_bin/$b $extra" || rc=$?
  if [ "$rc" -eq 2 ] || { [ "$rc" -eq 1 ] && [ "$worst" -eq 0 ]; }; then worst=$rc; fi
done
case $worst in
  0) echo "RESULT: ALL TARGETS MET" ;;
  1) echo "RESULT: TARGETS MISSED (the * sizes above)" ;;
  *) echo "RESULT: INCOMPLETE (a run failed or a size was missing, see above)" ;;
esac
exit "$worst"
