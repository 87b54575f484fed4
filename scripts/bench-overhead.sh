#!/usr/bin/env bash
# Overhead benchmark (not a test): alternates commbench's osu_latency and
# osu_bw with a minimal C program making the same MPI calls
# (benches/overhead/minimal.c), under the same launcher and binding, for
# ROUNDS rounds (default 9, at least 9), and prints per size the median of
# each and their ratio.
#
# Targets: latency ratio (commbench / C) <= 1.05, bandwidth ratio >= 0.95.
#
#   ROUNDS=15 MAX_SIZE=1048576 scripts/bench-overhead.sh
#   BW_ITERS=1000:100 LAT_ITERS=20000:200 ...   fixed iterations:warm-up for
#       every size (default: OSU's, which switch above 8192 bytes); more
#       iterations per round make each round less noisy
#   MPIRUN="mpiexec.mpich" ... to use another launcher (build accordingly)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-9}
max=${MAX_SIZE:-4194304}
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

counts() { # ITERS:WARMUP -> "-i ITERS -x WARMUP" for ours, "ITERS WARMUP" for C
  local spec=$1 style=$2
  [ -n "$spec" ] || return 0
  if [ "$style" = ours ]; then echo "-i ${spec%%:*} -x ${spec##*:}"; else echo "${spec%%:*} ${spec##*:}"; fi
}
run_ours() { # bench csv counts
  # shellcheck disable=SC2046
  "$launcher" -np 2 "${launcher_args[@]}" "target/release/$1" -m "1:$max" $(counts "$3" ours) --csv "$2" >/dev/null
}
run_c() { # mode out counts
  # shellcheck disable=SC2046
  "$launcher" -np 2 "${launcher_args[@]}" target/overhead/minimal "$1" "$max" $(counts "$3" c) >"$2"
}
lat_iters=${LAT_ITERS:-}
bw_iters=${BW_ITERS:-}

for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds" >&2
  # Alternate which program goes first, so drift hits both alike.
  if [ $((r % 2)) -eq 1 ]; then
    run_ours osu_latency "$work/ours_lat_$r.csv" "$lat_iters"; run_c lat "$work/c_lat_$r.txt" "$lat_iters"
    run_ours osu_bw "$work/ours_bw_$r.csv" "$bw_iters"; run_c bw "$work/c_bw_$r.txt" "$bw_iters"
  else
    run_c lat "$work/c_lat_$r.txt" "$lat_iters"; run_ours osu_latency "$work/ours_lat_$r.csv" "$lat_iters"
    run_c bw "$work/c_bw_$r.txt" "$bw_iters"; run_ours osu_bw "$work/ours_bw_$r.csv" "$bw_iters"
  fi
done

python3 - "$work" "$rounds" <<'PY'
import csv, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])

def ours(kind, col):
    per = {}
    for r in range(1, rounds + 1):
        with open(f"{work}/ours_{kind}_{r}.csv") as f:
            for row in csv.DictReader(f):
                per.setdefault(int(row["size_bytes"]), []).append(float(row[col]))
    return per

def theirs(kind):
    per = {}
    for r in range(1, rounds + 1):
        with open(f"{work}/c_{kind}_{r}.txt") as f:
            for line in f:
                s, v = line.split()
                per.setdefault(int(s), []).append(float(v))
    return per

ok = True
for kind, col, unit, better, target in (
    ("lat", "avg_lat_us", "us", "lower", 1.05),
    ("bw", "bw_MBps", "MB/s", "higher", 0.95),
):
    a, c = ours(kind, col), theirs(kind)
    name = "osu_latency" if kind == "lat" else "osu_bw"
    print(f"\n{name} vs minimal C, median of {rounds} alternating rounds ({unit}; {better} is better)")
    print(f"{'size':>8} {'commbench':>12} {'C':>12} {'ratio':>7}  {'spread C (min-max)':>22}")
    for size in sorted(a):
        ma, mc = statistics.median(a[size]), statistics.median(c[size])
        ratio = ma / mc
        good = ratio <= target if kind == "lat" else ratio >= target
        ok &= good
        print(f"{size:>8} {ma:>12.3f} {mc:>12.3f} {ratio:>7.3f}{'' if good else ' *'}  {min(c[size]):>10.3f}-{max(c[size]):<10.3f}")
    print(f"target: ratio {'<=' if kind == 'lat' else '>='} {target}; * marks a miss")
print("\nALL TARGETS MET" if ok else "\nSOME TARGETS MISSED (see *)")
PY
