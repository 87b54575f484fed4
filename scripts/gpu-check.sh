#!/usr/bin/env bash
# The GPU check: one short script (under 5 minutes) for a machine with an
# NVIDIA GPU, run on binaries built elsewhere. It prints what the machine
# is, then measures with commbench:
#   1. host-to-device, device-to-host and device-to-device copy bandwidth
#      (commbench gpu-bw);
#   2. a one-GPU NCCL allreduce sweep (osu_allreduce --backend nccl, one
#      rank, float, validated), with algbw, busbw and the validation
#      verdict from its CSV;
#   3. the same sweep as nccl-tests' table (--format nccl-tests, CUDA
#      events per iteration with -z, --min-busbw); NCCL's point-to-point
#      benchmarks need two GPUs (NCCL refuses two ranks on one device);
#   4. osu_latency -d cuda between two ranks on the GPU (needs a
#      CUDA-aware MPI; otherwise the one line that says so), and the GPU
#      facts the run record holds.
# Each step prints its output; the script goes on after a failed step and
# exits 1 if any failed.
#
# Where the binaries come from, first found:
#   - this script's directory, when it sits in an unpacked gpu-bundle
#     (scripts/gpu-bundle.sh: MPICH-built binaries, mpiexec.hydra and the
#     libraries they need, for a machine with no MPI);
#   - $COMMBENCH_BIN;
#   - target/release beside this script's repository.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/bin/osu_latency" ]; then
  bin=$here/bin
  export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [ -d "$here/lib/ucx" ] && export UCX_MODULE_DIR="$here/lib/ucx"
  launcher=("$bin/mpiexec.hydra" -launcher fork -n 2)
else
  bin=${COMMBENCH_BIN:-$here/../target/release}
  if command -v mpirun >/dev/null; then
    launcher=(mpirun -np 2)
    [ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  else
    launcher=(mpiexec -n 2)
  fi
fi
# NCCL from a Python environment, if the loader path has none.
if [ -z "${COMMBENCH_NCCL:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so'; then
  for py in python3 python; do
    d=$($py -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null) || continue
    [ -e "$d/libnccl.so.2" ] && export COMMBENCH_NCCL="$d/libnccl.so.2" && break
  done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

step() {
  echo
  echo "=== $1"
  shift
  local start=$SECONDS
  timeout 120 "$@"
  local rc=$?
  echo "--- status $rc, $((SECONDS - start)) s"
  [ "$rc" -eq 0 ] || failed=1
  return "$rc"
}

echo "=== machine"
date -u
uname -srm
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv 2>&1 | head -20
nvidia-smi topo -m 2>/dev/null | head -20
echo "binaries: $bin"
echo "NCCL: ${COMMBENCH_NCCL:-(loader path)}"

step "copy bandwidth: commbench gpu-bw" \
  "$bin/commbench" gpu-bw --tests h2d,d2h,d2d,p2p,latency --results-dir "$work/gpu-bw"

if step "NCCL allreduce, one GPU (OSU table)" \
  "$bin/osu_allreduce" --backend nccl -T mpi_float -m 8:268435456 -i 50 -x 5 -c --csv "$work/nccl-allreduce.csv"; then
  echo "size_bytes avg_lat_us algbw_GBps busbw_GBps validation (from the CSV)"
  python3 -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["size_bytes"], r["avg_lat_us"], r["algbw_GBps"], r["busbw_GBps"], r["validation"])' "$work/nccl-allreduce.csv"
fi

step "NCCL allreduce, one GPU, nccl-tests' table (-z: CUDA events per iteration)" \
  "$bin/osu_allreduce" --backend nccl --format nccl-tests -m 1M:64M -i 20 -x 5 -z --min-busbw 1 \
  --csv "$work/nccl-tests.csv"

step "osu_latency -d cuda D D, two ranks" \
  "${launcher[@]}" "$bin/osu_latency" -d cuda -m 1:1048576 -c D D --results-dir "$work/lat"

step "osu_latency -d cuda H H (GPU opened, buffers on the host), two ranks" \
  "${launcher[@]}" "$bin/osu_latency" -d cuda -m 1:64 -i 100 -x 10 H H --results-dir "$work/lat-hh"

echo
echo "=== run records: backend_details"
for r in $(find "$work" -name "*.json" | sort); do
  [ -e "$r" ] || continue
  echo "--- $r"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k: d.get(k) for k in ("benchmark","title","backend_details","buffers")}, indent=1)); print("status:", d.get("run",{}).get("status"))' "$r" 2>/dev/null || head -c 2000 "$r"
done
echo
if [ "$failed" -eq 0 ]; then echo "gpu-check: every step passed"; else echo "gpu-check: some step failed (above)"; fi
exit "$failed"
