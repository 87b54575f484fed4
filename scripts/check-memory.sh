#!/usr/bin/env bash
# Checks the pre-flight memory estimate against what runs really hold: each
# case runs with COMMBENCH_MEMORY_REPORT=1, every rank prints its estimate
# and its VmHWM (peak resident size) at the end, and the highest estimate
# over the ranks must be within 25% of the highest VmHWM; for the cases
# marked "each" (the non-blocking reductions, whose MPI temporaries are
# estimated per rank), every rank's estimate must be within 25% of its own
# VmHWM, and the table shows the rank furthest off. Cases are sized
# for a small machine (about 2.5 GB at most at once); each is bounded by
# CASE_TIMEOUT seconds. Prints a table; exit 1 when a case is off by more
# than 25% or did not finish.
#   scripts/check-memory.sh [BIN_DIR]   (default target/debug, built first)
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/debug}
CASE_TIMEOUT=${CASE_TIMEOUT:-120}
[ -n "${1:-}" ] || cargo build --quiet --bins || exit 1
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export COMMBENCH_MEMORY_REPORT=1

cases=(
  "2 osu_bw -m 1:1 -i 10 -x 0 -W 64"
  "2 osu_bw -m 1:1 -i 1 -x 0 -W 16K"
  "2 osu_bw -m 1:1 -i 1 -x 0 -W 64K"
  "2 osu_bw -m 64K:64K -i 2 -x 0 -W 16K"
  "2 osu_bw -m 1M:1M -i 2 -x 0 -W 64 -b multiple"
  "2 osu_bw -m 1M:1M -i 2 -x 0 -W 512 -b multiple"
  "2 osu_bw -m 4M:4M -i 2 -x 0 -W 64 -b single"
  "2 osu_bibw -m 1:1 -i 1 -x 0 -W 16K"
  "2 osu_bibw -m 1M:1M -i 2 -x 0 -W 256 -b multiple"
  "2 osu_mbw_mr -m 1:1 -i 1 -x 0 -W 16K"
  "2 osu_mbw_mr -m 1M:1M -i 2 -x 0 -W 256 -b multiple"
  "2 osu_latency -m 1:1 -i 2M -x 0"
  "2 osu_latency -m 64M:64M -i 2 -x 0"
  "2 osu_allreduce -m 256M:256M -i 1 -x 0"
  "2 osu_reduce_scatter -m 256M:256M -i 1 -x 0"
  "4 osu_reduce_scatter -m 64M:64M -i 1 -x 0"
  "2 osu_reduce -m 128M:128M -i 1 -x 0"
  "4 osu_reduce -m 32M:32M -i 1 -x 0"
  "2 osu_allgather -m 128M:128M -i 1 -x 0"
  "4 osu_allgather -m 32M:32M -i 1 -x 0"
  "2 osu_alltoall -m 128M:128M -i 1 -x 0"
  "4 osu_alltoall -m 32M:32M -i 1 -x 0"
  "2 osu_reduce_scatter_block -m 256M:256M -i 1 -x 0"
  "4 osu_reduce_scatter_block -m 64M:64M -i 1 -x 0"
  "4 osu_gatherv -m 32M:32M -i 1 -x 0"
  "2 osu_scatterv -m 128M:128M -i 1 -x 0"
  "2 osu_allgatherv -m 128M:128M -i 1 -x 0"
  "2 osu_alltoallv -m 128M:128M -i 1 -x 0"
  "4 osu_alltoallw -m 32M:32M -i 1 -x 0"
  "each 2 osu_ireduce_scatter -m 64M:64M -i 1 -x 0"
  "each 3 osu_ireduce_scatter -m 64M:64M -i 1 -x 0"
  "each 4 osu_ireduce_scatter -m 64M:64M -i 1 -x 0"
  "each 3 osu_ireduce_scatter_block -m 64M:64M -i 1 -x 0"
  "each 4 osu_ireduce_scatter_block -m 64M:64M -i 1 -x 0"
  "each 3 osu_ireduce -m 64M:64M -i 1 -x 0"
  "each 4 osu_ireduce -m 64M:64M -i 1 -x 0"
  "each 4 osu_ireduce -m 64M:64M -i 1 -x 0 -k fixed:2"
  "each 3 osu_iallreduce -m 64M:64M -i 1 -x 0"
  "each 4 osu_iallreduce -m 64M:64M -i 1 -x 0"
)

fail=0
printf '%-52s %12s %12s %7s\n' "case (np benchmark options)" "estimate MB" "VmHWM MB" "est/hwm"
for c in "${cases[@]}"; do
  each=0
  if [ "${c%% *}" = each ]; then each=1 c=${c#each }; fi
  read -r np bench opts <<<"$c"
  # shellcheck disable=SC2086
  out=$(timeout "$CASE_TIMEOUT" mpirun --oversubscribe -np "$np" "$BIN/$bench" $opts --no-results 2>&1 >/dev/null)
  rc=$?
  # Highest over the ranks, or (each) the rank whose ratio is furthest from 1.
  line=$(awk -v each="$each" '/ memory rank / {
      for (i = 1; i <= NF; i++) { if ($i == "estimate") e = $(i+1); if ($i == "vmhwm") h = $(i+1) }
      if (each) {
        off = (e > h) ? e / h : h / e
        if (off > worst) { worst = off; we = e; wh = h }
      } else { if (e > me) me = e; if (h > mh) mh = h }
    } END {
      if (each) { me = we; mh = wh }
      if (mh > 0) printf "%.1f %.1f %.3f", me / 1e6, mh / 1e6, me / mh
    }' <<<"$out")
  if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
    printf '%-52s %s\n' "$np $bench $opts" "FAILED (exit $rc)"
    fail=1
    continue
  fi
  read -r est hwm ratio <<<"$line"
  verdict=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.75 && r <= 1.25) ? "" : "  OFF BY MORE THAN 25%" }')
  [ -z "$verdict" ] || fail=1
  printf '%-52s %12s %12s %7s%s\n' "$np $bench $opts$([ "$each" = 1 ] && echo ' (each)')" "$est" "$hwm" "$ratio" "$verdict"
done
exit $fail
