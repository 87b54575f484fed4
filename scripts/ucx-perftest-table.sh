#!/usr/bin/env bash
# B side of scripts/bench-ucx.sh: runs UCX's ucx_perftest once per size,
# from 8 bytes to MAX_SIZE doubling, and prints the results as an OSU table
# that `commbench ab` (compare's OSU-text reader) reads like osu_latency's or
# osu_bw's stdout. One run of this script is one round's B.
#
#   scripts/ucx-perftest-table.sh lat|bw MAX_SIZE
#
# lat: `-t tag_lat`, its average latency (half the round trip, as OSU's).
# bw:  `-t tag_bw`, its overall bandwidth, converted from ucx_perftest's
#      MiB/s to OSU's MB/s (10^6 B/s).
# Iterations (-n) and warm-up (-w) per size are OSU's defaults where the
# two programs count alike: latency 10000 up to 8 KiB, 1000 above, with
# warm-up 1000 / 100 (ten times OSU's 100 / 10); bandwidth 6400 and 1280
# messages (OSU's 100 and 20 windows of 64) with warm-up 640 / 128 (OSU's
# 10 and 2 windows).
# The server runs on core 0, the client on core 1 (taskset); UCX_TLS and
# the rest of UCX's environment are the caller's. PORT (default 13451) is
# the base of the ports tried. No per-run timeout here: `timeout` would put
# ucx_perftest in a process group of its own, out of reach of `commbench
# ab --timeout`, which kills this script's group.
#
# What it prints: a comment naming the source, then OSU's title, datatype
# and column header lines, which the reader needs to know the benchmark
# (osu_latency / osu_bw) and the column; the title's version is UCX's, as
# the reader requires one. Values are printed as ucx_perftest gave them
# (not rounded to OSU's two decimals). Exit 2, with a line on stderr, when
# a run fails; no table is then printed past the sizes that worked.
set -uo pipefail

kind=${1:-}
max=${2:-}
case $kind in
  lat) test=tag_lat title="OSU MPI Latency Test" header="Avg Latency(us)" ;;
  bw) test=tag_bw title="OSU MPI Bandwidth Test" header="Bandwidth (MB/s)" ;;
  *) echo "usage: $0 lat|bw MAX_SIZE" >&2; exit 2 ;;
esac
case $max in '' | *[!0-9]*) echo "ucx-perftest-table.sh: MAX_SIZE must be a whole number, not '$max'" >&2; exit 2 ;; esac
port_base=${PORT:-13451}
command -v ucx_perftest >/dev/null || { echo "ucx-perftest-table.sh: ucx_perftest not found (apt install ucx-utils)" >&2; exit 2; }
version=$(ucx_info -v 2>/dev/null | sed -n 's/^# Version \([0-9][^ ]*\).*/\1/p')

# run_one <size> <iters> <warmup>: prints ucx_perftest's final CSV line
# (iterations, p50 latency, average latency, overall latency, average bw,
# overall bw (MiB/s), average and overall message rate).
run_one() {
  local port=$((port_base + RANDOM % 500)) out="" server
  taskset -c 0 ucx_perftest -p "$port" >/dev/null 2>&1 &
  server=$!
  # The client retries until the server listens (about 2 s at most).
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 0.2
    out=$(taskset -c 1 ucx_perftest 127.0.0.1 -p "$port" -t "$test" -s "$1" -n "$2" -w "$3" -v -f 2>/dev/null | tail -1) &&
      [[ $out =~ ^[0-9]+(,[0-9.]+){7}$ ]] && break
    out=""
  done
  [ -n "$out" ] || kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
  [ -n "$out" ] || { echo "ucx-perftest-table.sh: ucx_perftest -t $test -s $1 (UCX_TLS=${UCX_TLS:-}) failed" >&2; return 2; }
  echo "$out"
}

echo "# ucx_perftest -t $test (UCX ${version:-?}, UCX_TLS=${UCX_TLS:-default}), one run per size, in OSU's table form"
echo "# $title v${version:-0}"
echo "# Datatype: MPI_CHAR."
echo "# Size $header"
for ((s = 8; s <= max; s *= 2)); do
  if [ "$kind" = lat ]; then
    if [ "$s" -le 8192 ]; then n=10000 w=1000; else n=1000 w=100; fi
    line=$(run_one "$s" $n $w) || exit 2
    echo "$line" | awk -F, -v s="$s" '{ printf "%-10d %s\n", s, $3 }'
  else
    if [ "$s" -le 8192 ]; then n=6400 w=640; else n=1280 w=128; fi
    line=$(run_one "$s" $n $w) || exit 2
    # MiB/s to MB/s: 2^20 / 10^6.
    echo "$line" | awk -F, -v s="$s" '{ printf "%-10d %.3f\n", s, $6 * 1.048576 }'
  fi
done
