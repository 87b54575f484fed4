#!/usr/bin/env bash
# UCX benchmark (not a test): commbench's `--backend ucx` against UCX's own
# ucx_perftest (ucx-utils), tag matching both ways: osu_latency against
# `-t tag_lat`, osu_bw against `-t tag_bw`, at every size from 8 B to
# MAX_SIZE (default 4 MiB), for each UCX transport set in TRANSPORTS
# (UCX_TLS, the same for both). A thin wrapper around `commbench ab`: per
# transport set and benchmark, ROUNDS rounds (default 9, at least 9), each
# running both sides once, which goes first alternating from round to round
# so that drift hits both alike; `commbench ab` prints per size the median
# of each side, their ratio (ours / perftest, the target's measure), each
# side's spread (interquartile range over the median) and the A/A band
# (ours run twice a round: what noise alone moves in the same rounds;
# CONTROL=0 leaves it out).
#
#   A (ours): mpirun -np 2 --bind-to core -x UCX_TLS osu_latency|osu_bw
#             --backend ucx -m 8:MAX_SIZE --csv {csv}: one launch sweeps
#             every size, read from its CSV at full precision.
#   B (perftest): scripts/ucx-perftest-table.sh lat|bw MAX_SIZE: a server
#             and a client, pinned to cores 0 and 1 with taskset, started
#             afresh for each size; the results printed as an OSU table
#             (values as ucx_perftest prints them, not rounded).
#
# Targets, at every size: latency ours / perftest <= 1.05; bandwidth
# ours / perftest >= 0.95 (`commbench ab --max-worse 5%`; a size beyond 5%
# but within the A/A band is marked ~, noise, not a miss). Exit 0 when
# every target is met, 1 when some is missed outside its band (marked *),
# 2 on bad settings or a run that failed; the last line, RESULT, says which.
#
#   scripts/bench-ucx.sh
#   ROUNDS=15 TRANSPORTS=shm MAX_SIZE=65536 scripts/bench-ucx.sh
#   CONTROL=0 scripts/bench-ucx.sh          without the A/A control
#   RAW_DIR=DIR     keep every run's stdout, stderr and CSV there
#                   (<tls>-<lat|bw>/<a|b|a2>-<round>.txt/.err/.csv; a is
#                   ours, b perftest); default: temporary, removed
#   RUN_TIMEOUT=600 seconds one run (one whole sweep) may take
#   PORT=13451      base of ucx_perftest's ports
#
# Iterations are OSU's defaults for both (latency 10000 up to 8 KiB, 1000
# above; bandwidth 100 windows of 64 messages up to 8 KiB, 20 above, i.e.
# 6400 and 1280 messages for perftest), and so is the bandwidth warm-up
# (10 and 2 windows). ucx_perftest's latency warm-up is ten times OSU's
# (1000 and 100 against 100 and 10), and it starts a fresh process pair for
# each size where ours runs all sizes in one launch: more warm-up can only
# favour it. ucx_perftest reports latency as half the round trip, as OSU
# does, and bandwidth in MiB/s: it is converted to OSU's MB/s (10^6 B/s).
# ucx_perftest's tag_bw keeps messages flowing without OSU's per-window
# acknowledgement, so some gap at small sizes is the method, not overhead.
# Noise: this kind of VM moves 8-byte latency between 0.2 and 0.7 us from
# minute to minute; a single miss with a wide spread is weather, a miss at
# many neighbouring sizes is a finding.
set -euo pipefail
# Paths given by the caller are relative to where they called from.
here=$PWD
abspath() { case $1 in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
[ -z "${RAW_DIR:-}" ] || RAW_DIR=$(abspath "$RAW_DIR")
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-9}
transports=${TRANSPORTS:-"shm tcp"}
max=${MAX_SIZE:-4194304}
run_timeout=${RUN_TIMEOUT:-600}

die() { echo "bench-ucx.sh: $*" >&2; exit 2; }
case $rounds in '' | *[!0-9]*) die "ROUNDS must be a whole number, not '$rounds'" ;; esac
[ "$rounds" -ge 9 ] || die "ROUNDS must be at least 9 (medians of fewer rounds are noise here)"
case $max in '' | *[!0-9]*) die "MAX_SIZE must be a whole number, not '$max'" ;; esac
[ "$max" -ge 8 ] || die "MAX_SIZE must be at least 8"
[ -n "$transports" ] || die "TRANSPORTS is empty"
command -v ucx_perftest >/dev/null || die "ucx_perftest not found (apt install ucx-utils)"
command -v taskset >/dev/null || die "taskset not found (util-linux)"

if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
cargo build --release --quiet --bins || die "cargo build failed"
bin=$(abspath "${CARGO_TARGET_DIR:-target}")/release
ab=$bin/commbench
table=$PWD/scripts/ucx-perftest-table.sh

worst=0
for tls in $transports; do
  for kind in lat bw; do
    if [ "$kind" = lat ]; then bench=osu_latency; else bench=osu_bw; fi
    tls_env=$(printf 'UCX_TLS=%q' "$tls")
    a="$tls_env mpirun -np 2 --bind-to core -x UCX_TLS $(printf %q "$bin/$bench") --backend ucx -m 8:$max --csv {csv}"
    b="$tls_env $(printf %q "$table") $kind $max"
    opts=(--label-a "commbench --backend ucx" --label-b "ucx_perftest -t tag_$kind" --rounds "$rounds"
      --max-worse 5% --timeout "$run_timeout")
    [ "${CONTROL:-1}" = 1 ] && opts+=(--control)
    [ -n "${RAW_DIR:-}" ] && opts+=(--raw-dir "$RAW_DIR/$tls-$kind")
    echo
    echo "### UCX_TLS=$tls: $bench --backend ucx against ucx_perftest -t tag_$kind"
    rc=0
    "$ab" ab "${opts[@]}" --a "$a" --b "$b" || rc=$?
    if [ "$rc" -eq 2 ] || { [ "$rc" -eq 1 ] && [ "$worst" -eq 0 ]; }; then worst=$rc; fi
  done
done
echo
case $worst in
  0) echo "RESULT: ALL TARGETS MET" ;;
  1) echo "RESULT: TARGETS MISSED (the * sizes above)" ;;
  *) echo "RESULT: INCOMPLETE (a run failed or a size was missing, see above)" ;;
esac
exit "$worst"
