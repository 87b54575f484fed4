#!/usr/bin/env bash
# A GPU node health check of the kind sites write against NVIDIA's and the
# CUDA samples' tools, reading only what those tools print: bandwidthTest's
# --csv lines and result line, p2pBandwidthLatencyTest's peer-access lines
# and P2P=Enabled write matrix, nvbandwidth's matrices, SUM lines and -j
# document. commbench's tests run it unchanged against commbench's
# drop-ins of the same names (tests/it/gpu_cells.rs).
#
#   gpu-node-health.sh BIN_DIR
#
# Thresholds (GB/s) from the environment: MIN_HOST_GBS (pinned host<->GPU,
# default 5), MIN_PEER_GBS (each GPU pair with peer access, default 10);
# P2P_ELEMS, NVB_MIB and NVB_SAMPLES size the runs (defaults: the tools').
# Prints HEALTHY, or UNHEALTHY with one line per finding; exit 0 or 1
# (2 when a tool could not run).
set -u
bin=${1:?usage: gpu-node-health.sh BIN_DIR}
min_host=${MIN_HOST_GBS:-5}
min_peer=${MIN_PEER_GBS:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
problems=()

below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }

# 1. Host <-> GPU 0 with pinned memory.
if ! "$bin/bandwidthTest" --memory=pinned --htod --dtoh --csv > "$work/bt.txt"; then
  echo "bandwidthTest failed to run"; exit 2
fi
grep -q '^Result = PASS$' "$work/bt.txt" || problems+=("bandwidthTest did not pass")
while IFS= read -r line; do
  name=$(sed -E 's/^bandwidthTest-([^,]+),.*/\1/' <<< "$line")
  gbs=$(sed -E 's/.*Bandwidth = ([0-9.]+) GB\/s.*/\1/' <<< "$line")
  below "$gbs" "$min_host" && problems+=("$name: $gbs GB/s < $min_host")
done < <(grep -E '^bandwidthTest-(H2D|D2H)-Pinned, Bandwidth = ' "$work/bt.txt")
[ "$(grep -c '^bandwidthTest-' "$work/bt.txt")" -eq 2 ] || problems+=("bandwidthTest: not two CSV lines")

# 2. Every GPU pair with peer access, writing, from the samples' matrix.
p2p_args=()
[ -n "${P2P_ELEMS:-}" ] && p2p_args+=("--numElems=$P2P_ELEMS")
if ! "$bin/p2pBandwidthLatencyTest" "${p2p_args[@]}" > "$work/p2p.txt"; then
  echo "p2pBandwidthLatencyTest failed to run"; exit 2
fi
while read -r i j; do
  gbs=$(awk -v i="$i" -v j="$j" '
    /^Unidirectional P2P=Enabled Bandwidth \(P2P Writes\) Matrix/ { on = 1; next }
    on && /D\\D/ { next }
    on && NF == 0 { on = 0 }
    on && $1 == i { print $(j + 2); exit }' "$work/p2p.txt")
  if [ -z "$gbs" ]; then
    problems+=("p2p $i -> $j: no value in the P2P=Enabled writes matrix")
  elif below "$gbs" "$min_peer"; then
    problems+=("p2p $i -> $j: $gbs GB/s < $min_peer")
  fi
done < <(sed -nE 's/^Device=([0-9]+) CAN Access Peer Device=([0-9]+)$/\1 \2/p' "$work/p2p.txt")

# 3. nvbandwidth: peer writes cell by cell, and the host cases' sums.
nvb_args=()
[ -n "${NVB_MIB:-}" ] && nvb_args+=(-b "$NVB_MIB")
[ -n "${NVB_SAMPLES:-}" ] && nvb_args+=(-i "$NVB_SAMPLES")
if ! "$bin/nvbandwidth" "${nvb_args[@]}" -t device_to_device_memcpy_write_ce > "$work/nvb.txt"; then
  echo "nvbandwidth failed to run"; exit 2
fi
grep -q '^Running device_to_device_memcpy_write_ce\.$' "$work/nvb.txt" || problems+=("nvbandwidth: the case did not run")
awk '
  /^memcpy CE GPU\(row\) (<-|->) GPU\(column\) bandwidth \(GB\/s\)$/ { on = 1; next }
  on && /^ +0( |$)/ && !header { header = 1; next }
  on && NF == 0 { on = 0 }
  on { for (c = 2; c <= NF; c++) if ($c != "N/A") print $1, c - 2, $c }' "$work/nvb.txt" > "$work/cells.txt"
[ -s "$work/cells.txt" ] || problems+=("nvbandwidth: no peer cell")
while read -r r c gbs; do
  below "$gbs" "$min_peer" && problems+=("nvbandwidth write $r -> $c: $gbs GB/s < $min_peer")
done < "$work/cells.txt"
grep -qE '^SUM device_to_device_memcpy_write_ce [0-9.]+$' "$work/nvb.txt" || problems+=("nvbandwidth: no SUM line")
if ! "$bin/nvbandwidth" "${nvb_args[@]}" -j -t host_to_device_memcpy_ce device_to_host_memcpy_ce > "$work/nvb.json"; then
  echo "nvbandwidth -j failed to run"; exit 2
fi
python3 - "$work/nvb.json" "$min_host" >> "$work/json.txt" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))["nvbandwidth"]
for case in doc["testcases"]:
    if case["status"] != "Passed":
        print(f"nvbandwidth {case['name']}: {case['status']}")
        continue
    for row in case["bandwidth_matrix"]:
        for gpu, v in enumerate(row):
            if v != "N/A" and float(v) < float(sys.argv[2]):
                print(f"nvbandwidth {case['name']} GPU {gpu}: {v} GB/s < {sys.argv[2]}")
EOF
while IFS= read -r l; do problems+=("$l"); done < "$work/json.txt"

if [ ${#problems[@]} -eq 0 ]; then
  echo HEALTHY
  exit 0
fi
echo UNHEALTHY
printf '  %s\n' "${problems[@]}"
exit 1
