#!/usr/bin/env bash
# UCX benchmark (not a test): commbench's `--backend ucx` against UCX's own
# ucx_perftest (ucx-utils), tag matching both ways: osu_latency against
# `-t tag_lat`, osu_bw against `-t tag_bw`, at every size from 8 B to 4 MiB,
# for each UCX transport set in TRANSPORTS (UCX_TLS, the same for both),
# ROUNDS rounds (default 9, at least 9). Within a round each size is run by
# both programs back to back, which one goes first alternating, both pinned
# to cores 0 and 1. Prints per transport and size the median of each, their
# ratio (the target's measure), the median of the per-round paired ratios and
# each side's spread (interquartile range over the median), as a Markdown
# table.
#
# Targets, at every size: latency ours / perftest <= 1.05; bandwidth
# ours / perftest >= 0.95. Exit 0 when every target is met, 1 when some is
# missed (listed), 2 when a run failed.
#
#   scripts/bench-ucx.sh
#   ROUNDS=15 TRANSPORTS=shm MAX_SIZE=65536 scripts/bench-ucx.sh
#
# Iterations are OSU's defaults for both (latency 10000 up to 8 KiB, 1000
# above; bandwidth 100 windows of 64 messages up to 8 KiB, 20 above, i.e.
# 6400 and 1280 messages for perftest), and so is the bandwidth warm-up
# (10 and 2 windows). ucx_perftest's latency warm-up is ten times OSU's
# (1000 and 100 against 100 and 10): more warm-up can only favour it. ucx_perftest reports latency as half the round trip, as OSU
# does, and bandwidth in MiB/s: it is converted to OSU's MB/s (10^6 B/s).
# ucx_perftest's tag_bw keeps messages flowing without OSU's per-window
# acknowledgement, so some gap at small sizes is the method, not overhead.
set -uo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-9}
TRANSPORTS=${TRANSPORTS:-"shm tcp"}
MAX_SIZE=${MAX_SIZE:-4194304}
PORT=${PORT:-13451}
if [ "$ROUNDS" -lt 9 ]; then echo "bench-ucx: ROUNDS must be at least 9" >&2; exit 2; fi
command -v ucx_perftest >/dev/null || { echo "bench-ucx: ucx_perftest not found (apt install ucx-utils)" >&2; exit 2; }
cargo build --release --quiet --bins || exit 2
bin=target/release
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT

sizes=()
for ((s = 8; s <= MAX_SIZE; s *= 2)); do sizes+=("$s"); done

# ours <tls> <bench> <round> <size>: one size into $raw/ours-<bench>-<tls>-<round>-<size>.csv
ours() {
  UCX_TLS=$1 timeout 600 mpirun -np 2 --bind-to core -x UCX_TLS "$bin/$2" --backend ucx -m "$4:$4" \
    --csv "$raw/ours-$2-$1-$3-$4.csv" >/dev/null 2>"$raw/err" || { echo "bench-ucx: $2 over $1 failed: $(tail -1 "$raw/err")" >&2; exit 2; }
}

# perftest <tls> <test> <size> <iters> <warmup>: prints the CSV line.
perftest() {
  local port=$((PORT + RANDOM % 500))
  UCX_TLS=$1 taskset -c 0 timeout 600 ucx_perftest -p "$port" >/dev/null 2>&1 &
  local server=$!
  local out=""
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 0.2
    out=$(UCX_TLS=$1 taskset -c 1 timeout 600 ucx_perftest 127.0.0.1 -p "$port" -t "$2" -s "$3" -n "$4" -w "$5" -v -f 2>/dev/null | tail -1) && [ -n "$out" ] && break
  done
  wait "$server" 2>/dev/null
  [ -n "$out" ] || { echo "bench-ucx: ucx_perftest -t $2 -s $3 over $1 failed" >&2; exit 2; }
  echo "$out"
}

# theirs <tls> <lat|bw> <round> <size>: appends "size value" to $raw/pt-<lat|bw>-<tls>-<round>.txt
theirs() {
  local n w
  if [ "$2" = lat ]; then
    if [ "$4" -le 8192 ]; then n=10000 w=1000; else n=1000 w=100; fi
    # CSV columns: iterations, p50 latency, average latency, overall
    # latency, average bw, overall bw (MiB/s), ...
    echo "$4 $(perftest "$1" tag_lat "$4" $n $w | cut -d, -f3)" >>"$raw/pt-lat-$1-$3.txt"
  else
    if [ "$4" -le 8192 ]; then n=6400 w=640; else n=1280 w=128; fi
    echo "$4 $(perftest "$1" tag_bw "$4" $n $w | cut -d, -f6)" >>"$raw/pt-bw-$1-$3.txt"
  fi
}

# Each size is measured by both programs back to back, the order
# alternating with the size and the round, so that the machine's slow
# drifts (this kind of VM moves 8-byte latency between 0.2 and 0.7 us from
# minute to minute) land on both sides of each pair.
for tls in $TRANSPORTS; do
  for ((r = 1; r <= ROUNDS; r++)); do
    echo "bench-ucx: $tls round $r/$ROUNDS" >&2
    i=0
    for s in "${sizes[@]}"; do
      for short in lat bw; do
        if [ "$short" = lat ]; then bench=osu_latency; else bench=osu_bw; fi
        if (((r + i) % 2)); then
          ours "$tls" $bench "$r" "$s"; theirs "$tls" $short "$r" "$s"
        else
          theirs "$tls" $short "$r" "$s"; ours "$tls" $bench "$r" "$s"
        fi
        i=$((i + 1))
      done
    done
  done
done

python3 - "$raw" "$ROUNDS" "$TRANSPORTS" <<'EOF'
import csv, glob, statistics, sys
raw, rounds, transports = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()

def quartiles(xs):
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return q[1], q[2] - q[0]

missed = []
for tls in transports:
    for kind, bench, col, better in [("latency (us)", "osu_latency", "avg_lat_us", "lower"), ("bandwidth (MB/s)", "osu_bw", "bw_MBps", "higher")]:
        short = "lat" if bench == "osu_latency" else "bw"
        ours, theirs = {}, {}
        for r in range(1, rounds + 1):
            for path in glob.glob(f"{raw}/ours-{bench}-{tls}-{r}-*.csv"):
                for row in csv.DictReader(open(path)):
                    ours.setdefault(int(row["size_bytes"]), []).append(float(row[col]))
            for line in open(f"{raw}/pt-{short}-{tls}-{r}.txt"):
                s, v = line.split()
                v = float(v) * (1.048576 if short == "bw" else 1.0)
                theirs.setdefault(int(s), []).append(v)
        print(f"\n### UCX_TLS={tls}: {kind}, medians of {rounds} rounds\n")
        print("| size | commbench --backend ucx | ucx_perftest | ratio of medians | median of paired ratios | IQR / median, ours | IQR / median, perftest | target |")
        print("|---:|---:|---:|---:|---:|---:|---:|:---:|")
        for s in sorted(theirs):
            if s not in ours:
                continue
            (mo, iqr), (mt, iqr_t) = quartiles(ours[s]), quartiles(theirs[s])
            ratio = mo / mt if mt else float("inf")
            # Round r's two measurements of a size were taken back to back.
            paired = statistics.median(o / t for o, t in zip(ours[s], theirs[s]) if t)
            ok = ratio <= 1.05 if better == "lower" else ratio >= 0.95
            if not ok:
                missed.append(f"{tls} {short} {s} B ({ratio:.3f})")
            print(f"| {s} | {mo:.2f} | {mt:.2f} | {ratio:.3f} | {paired:.3f} | {iqr / mo * 100:.0f}% | {iqr_t / mt * 100:.0f}% | {'met' if ok else 'MISSED'} |")
print()
if missed:
    print(f"bench-ucx: {len(missed)} size(s) missed their target: " + ", ".join(missed))
    sys.exit(1)
print("bench-ucx: every size met its target")
EOF
