#!/usr/bin/env bash
# The GPU check: one prepared script for a machine with an NVIDIA GPU,
# bounded to 6 minutes (GPU_CHECK_LIMIT seconds), that sets commbench's GPU
# numbers beside the reference tools' on the same GPU:
#   1. builds nccl-tests, bandwidthTest, p2pBandwidthLatencyTest (and
#      nvbandwidth, where its source and Boost are there) there
#      (scripts/build-gpu-anchors.sh, with that machine's nvcc and NCCL);
#   2. copy bandwidth: commbench gpu-bw H2D / D2H (pinned and pageable) and
#      D2D at 32 MB against bandwidthTest, with ratios (target: within 3%
#      for pinned memory); pairs of GPUs against p2pBandwidthLatencyTest
#      where there are two or more; commbench's bandwidthTest and
#      p2pBandwidthLatencyTest drop-ins (p2p also with --sm_copy) with the same command lines as the
#      samples', line by line and cell by cell, with ratios; and the
#      nvbandwidth drop-in against NVIDIA's nvbandwidth where it could be
#      built (its source carried by gpu-bundle.sh, Boost there);
#   3. one-GPU NCCL sweeps, 8 B to 1 GiB, of allreduce, allgather,
#      reduce_scatter, alltoall, bcast and reduce in nccl-tests' table
#      (--backend nccl --format nccl-tests), each against the matching
#      nccl-tests binary with -g 1, per size (target: time within 3% from
#      1 MiB up, within 1 us below), and commbench's own all_reduce_perf
#      and its siblings with nccl-tests' command line against the same
#      (gather, scatter, hypercube and alltoallv drop-ins only, to 64 MiB,
#      so that the whole check stays within its bound);
#   4. osu_latency -d cuda between two ranks, H H and D D, as far as the MPI
#      it runs under can move GPU memory.
# A step that cannot run on this machine (one GPU, no CUDA-aware MPI, no
# nvcc) is SKIPPED with the reason; the exit status is 1 only when a step
# that could run failed or ran out of time. Everything printed also goes to
# $OUT/gpu-check.log when OUT is set (the device tool's output folder), so
# a run cut short still leaves its log.
#
# Where the binaries come from, first found:
#   - this script's directory, when it sits in an unpacked gpu-bundle
#     (scripts/gpu-bundle.sh: MPICH-built binaries, mpiexec.hydra and the
#     libraries they need, for a machine with no MPI);
#   - $COMMBENCH_BIN;
#   - target/release beside this script's repository.
# On a machine whose driver is the test stand-in (COMMBENCH_STANDIN_MACHINE
# set; tests/it/gpu_check.rs), the reference tools are not built or run: they
# need a real GPU.
set -uo pipefail
limit=${GPU_CHECK_LIMIT:-360}
deadline=$((SECONDS + limit))
if [ -n "${OUT:-}" ] && [ -d "$OUT" ] && [ -w "$OUT" ]; then
  exec > >(tee -a "$OUT/gpu-check.log") 2>&1
fi
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/bin/osu_latency" ]; then
  bin=$here/bin
  tools=$here
  export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [ -d "$here/lib/ucx" ] && export UCX_MODULE_DIR="$here/lib/ucx"
  launcher=("$bin/mpiexec.hydra" -launcher fork -n 2)
else
  bin=${COMMBENCH_BIN:-$here/../target/release}
  tools=$here
  if command -v mpirun >/dev/null; then
    launcher=(mpirun -np 2)
    [ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # Two ranks on one core each is all this needs.
    launcher+=(--oversubscribe)
  else
    launcher=(mpiexec -n 2)
  fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
standin=${COMMBENCH_STANDIN_MACHINE:+yes}

# Step bookkeeping: one line per step at the end.
summary=()
failed=0
note() { summary+=("$(printf '%-8s %-66s %s' "$1" "$2" "$3")"); }

# step NAME BOUND CMD...: runs CMD within BOUND seconds (less if the whole
# script's limit comes first); PASSED on status 0, FAILED otherwise.
step() {
  local name=$1 bound=$2
  shift 2
  local left=$((deadline - SECONDS - 5))
  if [ "$left" -lt 5 ]; then
    note SKIPPED "$name" "the script's ${limit} s ran out before it"
    failed=1
    return 1
  fi
  [ "$bound" -gt "$left" ] && bound=$left
  echo
  echo "=== $name (at most ${bound} s)"
  local start=$SECONDS
  timeout -k 5 "$bound" "$@"
  local rc=$?
  local took=$((SECONDS - start))
  echo "--- status $rc, $took s"
  if [ "$rc" -eq 0 ]; then
    note PASSED "$name" "${took} s"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    note FAILED "$name" "ran past its ${bound} s"
    failed=1
  else
    note FAILED "$name" "status $rc"
    failed=1
  fi
  return "$rc"
}
skip() {
  echo
  echo "=== $1: SKIPPED ($2)"
  note SKIPPED "$1" "$2"
}

echo "=== machine"
date -u
uname -srm
gpus=0
if command -v nvidia-smi >/dev/null; then
  timeout 20 nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv 2>&1 | head -20
  timeout 20 nvidia-smi topo -m 2>/dev/null | head -20
  gpus=$(timeout 20 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fi
if [ -n "$standin" ]; then
  gpus=$(sed -n 's/^gpus=//p' "$COMMBENCH_STANDIN_MACHINE" 2>/dev/null | head -1)
  if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
    gpus=$(printf '%s\n' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  fi
  echo "GPU driver: the test stand-in ($COMMBENCH_STANDIN_MACHINE, ${gpus:-0} GPU(s)): reference tools are left out"
fi
gpus=${gpus:-0}
echo "GPUs: $gpus"
echo "binaries: $bin"
echo "python3: $(command -v python3 || echo none)"
if [ -n "${COMMBENCH_NCCL:-}" ]; then echo "NCCL: $COMMBENCH_NCCL"; else echo "NCCL: found by commbench's own search"; fi

anchors=$work/anchors
have_anchors=""
if [ -n "$standin" ]; then
  skip "build the reference tools" "a stand-in driver: the reference tools need a real GPU"
elif step "build the reference tools (nccl-tests, bandwidthTest)" 170 "$tools/build-gpu-anchors.sh" "$anchors"; then
  have_anchors=yes
else
  tail -20 "$anchors/build.log" 2>/dev/null
fi
ref() { [ -n "$have_anchors" ] && [ -x "$anchors/bin/$1" ]; }

# 2. Copies.
size=32000000
bw_tests=h2d,d2h,d2d
[ "$gpus" -ge 2 ] && bw_tests=$bw_tests,p2p,latency
step "gpu-bw $bw_tests at $size bytes" 90 \
  "$bin/commbench" gpu-bw --tests "$bw_tests" --size "$size" --results-dir "$work/gpu-bw"
bw_csv=$(find "$work/gpu-bw" -name '*_gpu-bw*.csv' ! -name '*_matrix*' 2>/dev/null | sort | head -1)
if ref bandwidthTest; then
  step "bandwidthTest, pinned" 40 sh -c "'$anchors/bin/bandwidthTest' --memory=pinned --csv > '$work/bt-pinned.txt'; rc=\$?; cat '$work/bt-pinned.txt'; exit \$rc"
  step "bandwidthTest, pageable" 40 sh -c "'$anchors/bin/bandwidthTest' --memory=pageable --csv > '$work/bt-pageable.txt'; rc=\$?; cat '$work/bt-pageable.txt'; exit \$rc"
  if [ -n "$bw_csv" ]; then
    echo
    echo "=== copies side by side (32 MB)"
    python3 "$tools/gpu-side-by-side.py" copies "$bw_csv" "$work/bt-pinned.txt" "$work/bt-pageable.txt"
  fi
elif [ -z "$standin" ]; then
  skip "bandwidthTest" "not built (above)"
fi
for mem in pinned pageable; do
  step "commbench's bandwidthTest --memory=$mem --csv" 40 \
    sh -c "COMMBENCH_RESULTS_DIR='$work/cells' '$bin/bandwidthTest' --memory=$mem --csv > '$work/ours-bt-$mem.txt'; rc=\$?; cat '$work/ours-bt-$mem.txt'; exit \$rc"
  if ref bandwidthTest; then
    echo
    echo "=== bandwidthTest --memory=$mem --csv: commbench's drop-in against the sample"
    python3 "$tools/gpu-side-by-side.py" samples "$work/ours-bt-$mem.txt" "$work/bt-$mem.txt"
  fi
done
# Both p2pBandwidthLatencyTests copy 40 MB (not the sample's 160 MB) so
# that eight GPUs' 64 pairs fit the check's bound.
p2p_args=(--numElems=10000000)
if [ "$gpus" -lt 2 ]; then
  skip "p2pBandwidthLatencyTest" "one GPU: no pair to measure"
else
  if ref p2pBandwidthLatencyTest; then
    step "p2pBandwidthLatencyTest ${p2p_args[*]}" 60 \
      sh -c "'$anchors/bin/p2pBandwidthLatencyTest' ${p2p_args[*]} > '$work/p2p-theirs.txt'; rc=\$?; cat '$work/p2p-theirs.txt'; exit \$rc"
  fi
  step "commbench's p2pBandwidthLatencyTest ${p2p_args[*]}" 60 \
    sh -c "COMMBENCH_RESULTS_DIR='$work/cells' '$bin/p2pBandwidthLatencyTest' ${p2p_args[*]} > '$work/p2p-ours.txt'; rc=\$?; cat '$work/p2p-ours.txt'; exit \$rc"
  if ref p2pBandwidthLatencyTest; then
    echo
    echo "=== p2pBandwidthLatencyTest: commbench's drop-in against the sample"
    python3 "$tools/gpu-side-by-side.py" samples "$work/p2p-ours.txt" "$work/p2p-theirs.txt"
    # The copies between peers by a kernel (ours compiled by NVRTC).
    step "p2pBandwidthLatencyTest --sm_copy ${p2p_args[*]}" 60 \
      sh -c "'$anchors/bin/p2pBandwidthLatencyTest' --sm_copy ${p2p_args[*]} > '$work/p2p-sm-theirs.txt'; rc=\$?; cat '$work/p2p-sm-theirs.txt'; exit \$rc"
    step "commbench's p2pBandwidthLatencyTest --sm_copy ${p2p_args[*]}" 60 \
      sh -c "'$bin/p2pBandwidthLatencyTest' --sm_copy ${p2p_args[*]} > '$work/p2p-sm-ours.txt'; rc=\$?; cat '$work/p2p-sm-ours.txt'; exit \$rc"
    echo
    echo "=== p2pBandwidthLatencyTest --sm_copy: commbench's drop-in against the sample"
    python3 "$tools/gpu-side-by-side.py" samples "$work/p2p-sm-ours.txt" "$work/p2p-sm-theirs.txt"
  fi
fi

# nvbandwidth: the host<->GPU cases (copy engine and kernels), the local
# copy and host latency; with two GPUs or more the peer ones too; 64 MiB
# buffers (the tool's default 512 MiB would not fit the script's bound),
# fewer where GPU_CHECK_MAX_BYTES says so.
nvb_cases=(0 1 2 3 16 17 18 32 34)
[ "$gpus" -ge 2 ] && nvb_cases+=(4 5 6 20 21 33)
nvb_mib=$((${GPU_CHECK_MAX_BYTES:-67108864} >> 20))
[ "$nvb_mib" -gt 64 ] && nvb_mib=64
[ "$nvb_mib" -lt 1 ] && nvb_mib=1
nvb_args=(-b "$nvb_mib" -t "${nvb_cases[@]}")
if ref nvbandwidth; then
  step "nvbandwidth ${nvb_args[*]}" 60 \
    sh -c "'$anchors/bin/nvbandwidth' ${nvb_args[*]} > '$work/nvb-theirs.txt'; rc=\$?; cat '$work/nvb-theirs.txt'; exit \$rc"
elif [ -z "$standin" ]; then
  skip "nvbandwidth" "not built (see the build step's lines for why)"
fi
step "commbench's nvbandwidth ${nvb_args[*]}" 60 \
  sh -c "COMMBENCH_RESULTS_DIR='$work/cells' '$bin/nvbandwidth' ${nvb_args[*]} > '$work/nvb-ours.txt'; rc=\$?; cat '$work/nvb-ours.txt'; exit \$rc"
if ref nvbandwidth; then
  echo
  echo "=== nvbandwidth: commbench's drop-in against NVIDIA's"
  python3 "$tools/gpu-side-by-side.py" samples "$work/nvb-ours.txt" "$work/nvb-theirs.txt"
fi
echo
echo "=== the drop-ins' cells against their paths' peaks (from their CSVs)"
python3 "$tools/gpu-side-by-side.py" paths "$work/cells"

# 3. NCCL, one GPU. GPU_CHECK_MAX_BYTES lowers the sweep's top (tests).
max_bytes=${GPU_CHECK_MAX_BYTES:-1073741824}
declare -A program=([allreduce]=all_reduce [allgather]=all_gather [reduce_scatter]=reduce_scatter
  [alltoall]=alltoall [bcast]=broadcast [reduce]=reduce [sendrecv]=sendrecv [gather]=gather
  [scatter]=scatter [hypercube]=hypercube [alltoallv]=alltoallv)
# The drop-ins checked on a shorter sweep (no OSU table beside them).
short_bytes=$((max_bytes < 67108864 ? max_bytes : 67108864))
if [ "$gpus" -lt 1 ]; then
  skip "NCCL sweeps" "no GPU"
else
  for c in allreduce allgather reduce_scatter alltoall bcast reduce sendrecv gather scatter hypercube alltoallv; do
    p=${program[$c]}_perf
    top=$max_bytes twin=1
    case $c in gather | scatter | hypercube | alltoallv) top=$short_bytes twin=0 ;; sendrecv) twin=0 ;; esac
    # nccl-tests' own defaults for the counts (-n 20, -w 5 here and there);
    # busbw is 0 on one rank by definition, so no --min-busbw. -M: OSU's
    # default limit (512 MiB a buffer) would cut the sweep below 1 GiB.
    # sendrecv, hypercube and alltoallv have no OSU twin: only the drop-in
    # runs them (and gather and scatter, to keep within the bound).
    if [ "$twin" = 1 ]; then
      step "osu_$c --backend nccl --format nccl-tests, 8 B - $max_bytes B" 45 sh -c \
        "'$bin/osu_$c' --backend nccl --format nccl-tests -m 8:$max_bytes -M $max_bytes -i 20 -x 5 -c --results-dir '$work/nccl' > '$work/ours-$c.txt'; rc=\$?; cat '$work/ours-$c.txt'; exit \$rc"
    fi
    # Our drop-in of the same program, with nccl-tests' own command line.
    if [ -x "$bin/$p" ]; then
      step "commbench's $p -g 1, 8 B - $top B" 45 sh -c \
        "COMMBENCH_RESULTS_DIR='$work/nccl-perf' '$bin/$p' -b 8 -e $top -f 2 -g 1 -n 20 -w 5 -c 1 > '$work/ours-perf-$c.txt'; rc=\$?; cat '$work/ours-perf-$c.txt'; exit \$rc"
    fi
    if ref "$p"; then
      step "$p -g 1, 8 B - $top B" 45 sh -c \
        "'$anchors/bin/$p' -b 8 -e $top -f 2 -g 1 -n 20 -w 5 -c 1 > '$work/theirs-$c.txt'; rc=\$?; cat '$work/theirs-$c.txt'; exit \$rc"
      if [ -s "$work/ours-$c.txt" ]; then
        echo
        echo "=== osu_$c against $p, per size (out of place)"
        python3 "$tools/gpu-side-by-side.py" nccl "$work/ours-$c.txt" "$work/theirs-$c.txt"
      fi
      if [ -s "$work/ours-perf-$c.txt" ]; then
        echo
        echo "=== commbench's $p against nccl-tests' $p, per size (out of place)"
        python3 "$tools/gpu-side-by-side.py" nccl "$work/ours-perf-$c.txt" "$work/theirs-$c.txt"
      fi
    elif [ -z "$standin" ]; then
      skip "$p" "not built (above)"
    fi
  done
fi
# -G: the same calls captured into a CUDA graph and launched 10 times,
# ours against theirs (all_reduce_perf, the drop-ins' short sweep).
if [ "$gpus" -ge 1 ] && [ -x "$bin/all_reduce_perf" ]; then
  step "commbench's all_reduce_perf -G 10, 8 B - $short_bytes B" 45 sh -c \
    "COMMBENCH_RESULTS_DIR='$work/nccl-graph' '$bin/all_reduce_perf' -b 8 -e $short_bytes -f 2 -g 1 -n 20 -w 5 -G 10 > '$work/ours-graph.txt'; rc=\$?; cat '$work/ours-graph.txt'; exit \$rc"
  if ref all_reduce_perf; then
    step "all_reduce_perf -G 10, 8 B - $short_bytes B" 45 sh -c \
      "'$anchors/bin/all_reduce_perf' -b 8 -e $short_bytes -f 2 -g 1 -n 20 -w 5 -G 10 > '$work/theirs-graph.txt'; rc=\$?; cat '$work/theirs-graph.txt'; exit \$rc"
    if [ -s "$work/ours-graph.txt" ]; then
      echo
      echo "=== commbench's all_reduce_perf -G 10 against nccl-tests', per size (out of place)"
      python3 "$tools/gpu-side-by-side.py" nccl "$work/ours-graph.txt" "$work/theirs-graph.txt"
    fi
  fi
fi
if [ "$gpus" -lt 2 ]; then
  skip "NCCL point-to-point (osu_latency, osu_bw --backend nccl)" "one GPU: NCCL refuses two ranks on one device"
else
  step "osu_bw --backend nccl, two ranks" 60 "${launcher[@]}" "$bin/osu_bw" --backend nccl -m 8:67108864 \
    --results-dir "$work/nccl-p2p"
fi

# 4. MPI with GPU buffers. Whether the MPI here can move GPU memory is its
# own answer (MPIX_Query_cuda_support): a refusal is a skip, not a failure.
echo
echo "=== osu_latency -d cuda D D, two ranks"
start=$SECONDS
timeout -k 5 60 "${launcher[@]}" "$bin/osu_latency" -d cuda -m 1:1048576 -c D D --results-dir "$work/lat" \
  >"$work/lat.txt" 2>&1
rc=$?
cat "$work/lat.txt"
if [ "$rc" -eq 0 ]; then
  note PASSED "osu_latency -d cuda D D" "$((SECONDS - start)) s"
elif grep -q "cannot move CUDA memory" "$work/lat.txt"; then
  note SKIPPED "osu_latency -d cuda D D" "this MPI is not CUDA-aware (its own answer)"
else
  note FAILED "osu_latency -d cuda D D" "status $rc"
  failed=1
fi
step "osu_latency -d cuda H H (GPU opened, buffers on the host)" 60 \
  "${launcher[@]}" "$bin/osu_latency" -d cuda -m 1:64 -i 100 -x 10 H H --results-dir "$work/lat-hh"

echo
echo "=== run records: backend_details"
for r in $(find "$work" -name "*.json" | sort); do
  echo "--- $r"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k: d.get(k) for k in ("benchmark","backend_details")}, indent=1)); print("status:", d.get("status"))' "$r" 2>/dev/null || head -c 2000 "$r"
done

echo
echo "=== summary ($((SECONDS)) s in all)"
printf '%s\n' "${summary[@]}"
if [ "$failed" -eq 0 ]; then
  echo "gpu-check: nothing that could run failed"
else
  echo "gpu-check: some step that could run failed (above)"
fi
exit "$failed"
