#!/bin/sh
# Runs a rank's program and records its exit status in $RANK_RC_DIR, named
# after the rank the launcher gave it, so a test can check every rank.
"$@"
rc=$?
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-unknown}}}
echo "$rc" > "$RANK_RC_DIR/rank-$rank"
exit $rc
