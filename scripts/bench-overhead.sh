#!/usr/bin/env bash
# Overhead benchmark (not a test): alternates commbench's osu_latency,
# osu_bw and osu_allreduce with a minimal C program making the same MPI
# calls (benches/overhead/minimal.c), under the same launcher and binding,
# for ROUNDS rounds (default 9, at least 9), and prints per size the median
# of each and their ratio.
#
# Targets: latency ratios (commbench / C) <= 1.05, bandwidth ratio >= 0.95.
#
#   ROUNDS=15 MAX_SIZE=1048576 scripts/bench-overhead.sh
#   LAT_ITERS=20000:200 BW_ITERS=1000:100 COLL_ITERS=2000:200 ...
#       fixed iterations:warm-up for every size (default: OSU's, which
#       switch above 8192 bytes); more iterations make each round less noisy
#   BENCHES="osu_allreduce" ...   a subset
#   MPIRUN="mpiexec.mpich" ...    another launcher (build accordingly)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-9}
max=${MAX_SIZE:-4194304}
coll_max=${COLL_MAX_SIZE:-1048576}
benches=${BENCHES:-osu_latency osu_bw osu_allreduce}
if [ "$rounds" -lt 9 ]; then
  echo "ROUNDS must be at least 9" >&2
  exit 2
fi
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
launcher=${MPIRUN:-mpirun}
# shellcheck disable=SC2206
launcher_args=(${MPIRUN_ARGS:---bind-to core})

cargo build --release --quiet --bins
mkdir -p target/overhead
${MPICC:-mpicc} -O2 -o target/overhead/minimal benches/overhead/minimal.c

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# bench -> C mode, largest size, ITERS:WARMUP override
mode_of() { case $1 in osu_latency) echo lat ;; osu_bw) echo bw ;; osu_allreduce) echo allreduce ;; esac; }
max_of() { case $1 in osu_allreduce) echo "$coll_max" ;; *) echo "$max" ;; esac; }
iters_of() { case $1 in osu_latency) echo "${LAT_ITERS:-}" ;; osu_bw) echo "${BW_ITERS:-}" ;; *) echo "${COLL_ITERS:-}" ;; esac; }

run_ours() { # bench round
  local it; it=$(iters_of "$1")
  local counts=()
  [ -n "$it" ] && counts=(-i "${it%%:*}" -x "${it##*:}")
  "$launcher" -np 2 "${launcher_args[@]}" "target/release/$1" -m "1:$(max_of "$1")" "${counts[@]}" \
    --csv "$work/ours_$1_$2.csv" >/dev/null 2>&1
}
run_c() { # bench round
  local it; it=$(iters_of "$1")
  local counts=()
  [ -n "$it" ] && counts=("${it%%:*}" "${it##*:}")
  "$launcher" -np 2 "${launcher_args[@]}" target/overhead/minimal "$(mode_of "$1")" "$(max_of "$1")" \
    "${counts[@]}" >"$work/c_$1_$2.txt"
}

for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds" >&2
  for b in $benches; do
    # Alternate which program goes first, so drift hits both alike.
    if [ $((r % 2)) -eq 1 ]; then run_ours "$b" "$r"; run_c "$b" "$r"; else run_c "$b" "$r"; run_ours "$b" "$r"; fi
  done
done

python3 - "$work" "$rounds" $benches <<'PY'
import csv, statistics, sys
work, rounds, benches = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
col = {"osu_latency": "avg_lat_us", "osu_bw": "bw_MBps", "osu_allreduce": "avg_lat_us"}
ok = True
for b in benches:
    ours, theirs = {}, {}
    for r in range(1, rounds + 1):
        with open(f"{work}/ours_{b}_{r}.csv") as f:
            for row in csv.DictReader(f):
                ours.setdefault(int(row["size_bytes"]), []).append(float(row[col[b]]))
        with open(f"{work}/c_{b}_{r}.txt") as f:
            for line in f:
                s, v = line.split()
                theirs.setdefault(int(s), []).append(float(v))
    bandwidth = b == "osu_bw"
    unit = "MB/s; higher is better" if bandwidth else "us; lower is better"
    print(f"\n{b} vs minimal C, np=2, median of {rounds} alternating rounds ({unit})")
    print(f"{'size':>8} {'commbench':>12} {'C':>12} {'ratio':>7}  {'spread C (min-max)':>22}")
    for size in sorted(ours):
        a, c = statistics.median(ours[size]), statistics.median(theirs[size])
        ratio = a / c
        good = ratio >= 0.95 if bandwidth else ratio <= 1.05
        ok &= good
        print(f"{size:>8} {a:>12.3f} {c:>12.3f} {ratio:>7.3f}{'' if good else ' *'}  "
              f"{min(theirs[size]):>10.3f}-{max(theirs[size]):<10.3f}")
    print(f"target: ratio {'>= 0.95' if bandwidth else '<= 1.05'}; * marks a miss")
print("\nALL TARGETS MET" if ok else "\nSOME TARGETS MISSED (see *)")
PY
