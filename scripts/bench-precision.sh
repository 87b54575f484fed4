#!/usr/bin/env bash
# Precision benchmark (not a test): alternates the default sweep of the
# eight main benchmarks at OSU's fixed iteration counts with the same sweep
# under --precision, ROUNDS rounds each (default 15, at least 5), np=2, and
# reports
#   (a) the wall time of each mode (median over rounds, per benchmark and
#       for the whole sweep) and their ratio, precision / default;
#   (b) at every size, the difference between the two modes' medians next
#       to the default mode's own round-to-round spread: the largest
#       distance of a default round from the default median. A difference
#       within that spread is one the fixed counts could not tell from
#       their own noise.
#   (c) with CONTROL=1 (the default), a control: a second default run in
#       every round, judged by (b)'s rule against the same default rounds.
#       Two runs of one mode land outside each other's spread at some
#       sizes by chance alone (with five rounds and independent noise,
#       about one size in eleven; with fifteen, under one in a thousand),
#       so the control's count is what (b)'s count is to be read against,
#       and the default is fifteen rounds.
# Target: a wall-time ratio of 0.5 or less, with every size's difference
# inside the default spread. Exit 0 when both hold, 1 when one does not, 2
# on bad settings or a run that failed; the last line says which, and the
# control's count beside it.
#
#   scripts/bench-precision.sh
#   ROUNDS=9 PRECISION=1% scripts/bench-precision.sh
#   BENCHES="osu_latency osu_allreduce" ...   a subset
#   EXTRA="--min-iterations 200" ...          more options for precision mode
#   MPIRUN=mpiexec.mpich MPIRUN_ARGS="-bind-to core" CARGO_TARGET_DIR=target/mpich ...
#   OURS_BIN=DIR     binaries to measure instead of this checkout's release build
#   RAW_DIR=DIR      keep every run's stdout, stderr and CSV there
#                    (<default|precise|control>-<bench>-<round>.*)
#   CONTROL=0        no control runs (a third less time)
#
# Both modes run the same binaries with the same sizes (OSU's defaults), so
# the wall time counts everything a user waits for: launch, MPI start-up,
# warm-up and the timed loops. Values are the CSV's full-precision reported
# value (avg_lat_us, or bw_MBps / msg_rate_per_s for the bandwidth tests).
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
else
  cargo build --release --quiet --bins || die "cargo build failed"
  bin=${CARGO_TARGET_DIR:-target}/release
fi
for b in $benches; do
  [ -x "$bin/$b" ] || die "no binary $bin/$b"
done

if [ -n "${RAW_DIR:-}" ]; then
  work=$RAW_DIR
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

run_one() { # mode(default|precise) bench round
  local mode=$1 b=$2 r=$3 out=$work/$1-$2-$3
  rm -f "$out".*
  local -a cmd=(timeout "$run_timeout" "$launcher" -np 2 "${launcher_args[@]}" "$bin/$b" --csv "$out.csv")
  [ "$mode" != precise ] || cmd+=(--precision "$precision" "${extra[@]}")
  local t0 t1
  t0=$(date +%s.%N)
  if ! "${cmd[@]}" >"$out.txt" 2>"$out.err"; then
    echo "bench-precision.sh: failed: ${cmd[*]}" >&2
    tail -n 15 "$out.err" "$out.txt" >&2
    exit 2
  fi
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >"$out.wall"
}

echo "binaries: $bin; launcher: $launcher ${launcher_args[*]}; precision mode: --precision $precision ${extra[*]}" >&2
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds" >&2
  for b in $benches; do
    # Rotate which mode goes first, so drift hits every mode alike.
    modes=(default precise)
    [ "$control" = 0 ] || modes+=(control)
    n=${#modes[@]}
    for k in $(seq 0 $((n - 1))); do
      run_one "${modes[$(((k + r) % n))]}" "$b" "$r"
    done
  done
done

python3 - "$work" "$rounds" "$control" "$precision ${extra[*]}" $benches <<'PY'
import csv, statistics, sys

work, rounds, control, mode, benches = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4].strip(), sys.argv[5:]
modes = ("default", "precise", "control") if control else ("default", "precise")
RATES = {"osu_bw", "osu_bibw", "osu_mbw_mr"}


def values(path, bench):
    """size -> the row's reported value, from the CSV at full precision."""
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            col = "bw_MBps" if bench in RATES else "avg_lat_us"
            if row.get(col):
                out[int(row["size_bytes"])] = float(row[col])
    return out


def wall(path):
    with open(path) as f:
        return float(f.read())


def label(size, bench):
    if bench == "osu_barrier":
        return "-"
    for unit, shift in (("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return str(size)


walls = {m: {b: [wall(f"{work}/{m}-{b}-{r}.wall") for r in range(1, rounds + 1)] for b in benches} for m in modes}
print(f"# bench-precision: {rounds} rounds per mode, np 2; precision mode: --precision {mode}")
print()
print("## (a) wall time per benchmark run, median over rounds (s)")
print()
print(f"{'benchmark':<15} {'default':>9} {'precision':>9} {'ratio':>7}")
tot = {m: [sum(walls[m][b][r] for b in benches) for r in range(rounds)] for m in ("default", "precise")}
for b in benches:
    d, p = statistics.median(walls["default"][b]), statistics.median(walls["precise"][b])
    print(f"{b:<15} {d:>9.2f} {p:>9.2f} {p / d:>7.3f}")
d_all, p_all = statistics.median(tot["default"]), statistics.median(tot["precise"])
ratio = p_all / d_all
print(f"{'whole sweep':<15} {d_all:>9.2f} {p_all:>9.2f} {ratio:>7.3f}")
print()
print("## (b) per size: medians of each mode, their difference, and the default rounds' spread")
print("(spread: the largest distance of one default round from the default median; 'in' = |diff| <= spread;")
print(" control: a second default run judged alike)")
print()
outside, control_outside = [], []
for b in benches:
    unit = "MB/s" if b in RATES else "us"
    runs = {m: [values(f"{work}/{m}-{b}-{r}.csv", b) for r in range(1, rounds + 1)] for m in modes}
    sizes = sorted(set.intersection(*(set(v) for m in runs for v in runs[m])))
    print(f"### {b} ({unit})")
    head = f"{'size':>6} {'default':>11} {'precision':>11} {'diff %':>8} {'spread %':>9}  verdict"
    print(head + (f"  {'control %':>9}  verdict" if control else ""))
    for s in sizes:
        dv = [v[s] for v in runs["default"]]
        pv = [v[s] for v in runs["precise"]]
        dm, pm = statistics.median(dv), statistics.median(pv)
        spread = max(abs(x - dm) for x in dv)
        diff = pm - dm
        inside = abs(diff) <= spread
        if not inside:
            outside.append(f"{b} {label(s, b)}")
        pct = lambda x: 100.0 * x / dm if dm else float("nan")
        line = f"{label(s, b):>6} {dm:>11.3f} {pm:>11.3f} {pct(diff):>+8.1f} {pct(spread):>9.1f}  {'in' if inside else 'OUTSIDE'}"
        if control:
            cdiff = statistics.median(v[s] for v in runs["control"]) - dm
            if abs(cdiff) > spread:
                control_outside.append(f"{b} {label(s, b)}")
            line += f"  {pct(cdiff):>+9.1f}  {'in' if abs(cdiff) <= spread else 'OUTSIDE'}"
        print(line)
    print()
ok_time = ratio <= 0.5
print(f"wall-time ratio {ratio:.3f} ({'met' if ok_time else 'missed'}: target <= 0.5); "
      f"{'every size inside the default spread' if not outside else str(len(outside)) + ' size(s) outside the default spread: ' + ', '.join(outside)}"
      + (f"; control (default against itself): {len(control_outside)} outside"
         + (": " + ", ".join(control_outside) if control_outside else "") if control else ""))
sys.exit(0 if ok_time and not outside else 1)
PY
