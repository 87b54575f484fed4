#!/usr/bin/env bash
# Precision benchmark (not a test): through `commbench ab`, alternates each
# of the eight main benchmarks at OSU's fixed iteration counts (A) with the
# same benchmark under --precision (B), ROUNDS rounds (default 15, at least
# 5), np=2, and reports
#   (a) the wall time of each mode (median over rounds, per benchmark and
#       for the whole sweep) and their ratio, precision / fixed;
#   (b) at every size both medians and their ratio, each mode's spread over
#       the rounds, and with CONTROL=1 (the default) the A/A band: a second
#       fixed-count run in every round, and how far its median lies from
#       the first's. A difference within that band is one the fixed counts
#       could not tell from their own noise; sizes beyond it are marked *.
# Target: a whole-sweep wall-time ratio of 0.5 or less, with every size
# within the band; the wall-time ratio, too, is judged against its A/A
# band (the control's whole-sweep wall time against the fixed counts'
# first): a miss only above 0.5 times (1 + band). Exit 0 when both hold, 1
# when one does not, 2 on bad settings or a run that failed; the last line
# says which.
#
#   scripts/bench-precision.sh
#   ROUNDS=9 PRECISION=1% scripts/bench-precision.sh
#   BENCHES="osu_latency osu_allreduce" ...   a subset
#   EXTRA="--min-iterations 200" ...          more options for precision mode
#   MPIRUN=mpiexec.mpich MPIRUN_ARGS="-bind-to core" CARGO_TARGET_DIR=target/mpich ...
#   OURS_BIN=DIR     binaries to measure instead of this checkout's release build
#   RAW_DIR=DIR      keep every run's stdout, stderr and CSV there
#                    (<bench>/<a|b|a2>-<round>.*: a fixed counts, b precision,
#                    a2 the control)
#   CONTROL=0        no control runs (a third less time; no per-size verdict)
#
# Both modes run the same binaries with the same sizes (OSU's defaults), so
# the wall time counts everything a user waits for: launch, MPI start-up,
# warm-up and the timed loops. Values are the CSV's full-precision reported
# value.
set -euo pipefail
here=$PWD
abspath() { case $1 in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
[ -z "${RAW_DIR:-}" ] || RAW_DIR=$(abspath "$RAW_DIR")
[ -z "${OURS_BIN:-}" ] || OURS_BIN=$(abspath "$OURS_BIN")
cd "$(dirname "$0")/.."

all_benches="osu_latency osu_bw osu_bibw osu_mbw_mr osu_barrier osu_allreduce osu_allgather osu_alltoall"
rounds=${ROUNDS:-15}
benches=${BENCHES:-$all_benches}
precision=${PRECISION:-2%}
run_timeout=${RUN_TIMEOUT:-900}
control=${CONTROL:-1}

die() { echo "bench-precision.sh: $*" >&2; exit 2; }
case $rounds in '' | *[!0-9]*) die "ROUNDS must be a whole number, not '$rounds'" ;; esac
[ "$rounds" -ge 5 ] || die "ROUNDS must be at least 5"
for b in $benches; do
  case " $all_benches " in *" $b "*) ;; *) die "unknown benchmark '$b' in BENCHES (known: $all_benches)" ;; esac
done
[[ $precision =~ ^[0-9.]+%$ ]] || die "PRECISION must be a percentage such as 2%, not '$precision'"
case $control in 0 | 1) ;; *) die "CONTROL must be 0 or 1, not '$control'" ;; esac

if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
launcher=${MPIRUN:-mpirun}
# shellcheck disable=SC2206
launcher_args=(${MPIRUN_ARGS:---bind-to core})
# shellcheck disable=SC2206
extra=(${EXTRA:-})

if [ -n "${OURS_BIN:-}" ]; then
  bin=$OURS_BIN
  cargo build --release --quiet --bin commbench || die "cargo build failed"
else
  cargo build --release --quiet --bins || die "cargo build failed"
  bin=${CARGO_TARGET_DIR:-target}/release
fi
ab=${CARGO_TARGET_DIR:-target}/release/commbench
for b in $benches; do
  [ -x "$bin/$b" ] || die "no binary $bin/$b"
done

echo "binaries: $bin; launcher: $launcher ${launcher_args[*]}; precision mode: --precision $precision ${extra[*]}" >&2
run=("$launcher" -np 2 "${launcher_args[@]}")
worst=0
walls=""
per_round=""
for b in $benches; do
  opts=(--label-a "fixed counts" --label-b "precision $precision" --rounds "$rounds" --timeout "$run_timeout")
  # With the control, every size's difference must lie within what the
  # fixed counts move against themselves (the A/A band).
  [ "$control" = 1 ] && opts+=(--control --max-diff 0%)
  [ -n "${RAW_DIR:-}" ] && opts+=(--raw-dir "$RAW_DIR/$b")
  out=$(mktemp)
  rc=0
  "$ab" ab "${opts[@]}" --a "${run[*]} $bin/$b --csv {csv}" \
    --b "${run[*]} $bin/$b --precision $precision ${extra[*]} --csv {csv}" | tee "$out" || rc=$?
  # A's, B's and (with the control) A's second run's median wall time and
  # the A/A band ab gives it; then every run's wall time, round by round.
  walls+="$b $(sed -n 's/^wall time per run (median): A \([0-9.]*\) s, B \([0-9.]*\) s, A\/B [0-9.]*\(; A\/A \([0-9.]*\) s, band ±\([0-9.]*\)%\)\{0,1\}$/\1 \2 \4 \5/p' "$out")"$'\n'
  per_round+="$(sed -n 's/^wall time per round (s): //p' "$out")"$'\n'
  rm -f "$out"
  if [ "$rc" -eq 2 ] || { [ "$rc" -eq 1 ] && [ "$worst" -eq 0 ]; }; then worst=$rc; fi
done

echo
echo "wall time per run, median over rounds (s):"
# (a): each benchmark's, and the whole sweep's (the sum of the medians).
# The A/A band of a ratio: what the ratio moves by noise alone, as ab
# judges a size (commbench ab --band-of): for a benchmark, ab's own; for
# the sweep, that of the rounds' sums over the benchmarks.
awk 'NF >= 3 {
  printf "  %-15s fixed %8.2f  precision %8.2f  ratio %.3f", $1, $2, $3, $3 / $2
  if (NF == 5) printf "  A/A band +-%.1f%%", $5
  printf "\n" }' <<<"$walls"
ratio=$(awk 'NF >= 3 { a += $2; b += $3 } END { printf "%.3f\n", (a > 0 ? b / a : 99) }' <<<"$walls")
# Each round's whole sweep, fixed counts (A) and the control (A/A).
sweep() {
  awk -v side="$1" -F'; ' '{ for (i = 1; i <= NF; i++) { n = split($i, v, " ")
      if (v[1] == side) for (k = 2; k <= n; k++) sum[k - 1] += v[k]; if (v[1] == side && n - 1 > m) m = n - 1 } }
    END { for (k = 1; k <= m; k++) printf "%s%.3f", (k > 1 ? " " : ""), sum[k]; printf "\n" }' <<<"$per_round"
}
band=0
if [ "$control" = 1 ]; then
  band=$("$ab" ab --band-of "$(sweep A)" "$(sweep A/A)") || die "no A/A band for the sweep"
  band=$(awk -v p="$band" 'BEGIN { printf "%.4f", p / 100 }')
fi
band_pct=$(awk -v d="$band" 'BEGIN { printf "%.1f", d * 100 }')
echo "  whole sweep ratio $ratio (target <= 0.5; A/A band of the sweep +-$band_pct%)"
# A miss only outside the band: the target stretched by what noise moves.
time_ok=$(awk -v r="$ratio" -v d="$band" 'BEGIN { print (r <= 0.5 * (1 + d)) ? 1 : 0 }')
if [ "$worst" -eq 2 ]; then
  echo "RESULT: INCOMPLETE (a run failed, see above)"
  exit 2
fi
if [ "$time_ok" = 1 ] && [ "$worst" -eq 0 ]; then
  echo "RESULT: TARGETS MET (wall-time ratio $ratio; every size within the fixed counts' own A/A band)"
  exit 0
fi
echo "RESULT: TARGETS MISSED (wall-time ratio $ratio; sizes marked * above differ beyond the A/A band)"
exit 1
