#!/usr/bin/env bash
# Builds the reference tools commbench's GPU numbers are set beside:
# nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
# alltoall_perf, broadcast_perf, reduce_perf, sendrecv_perf, gather_perf,
# scatter_perf, hypercube_perf, alltoallv_perf) and CUDA samples'
# bandwidthTest and p2pBandwidthLatencyTest, from the source tarball the
# project keeps (../shared/reference/gpu-anchors-src.tar.gz), with the nvcc
# and NCCL found on this machine; and NVIDIA's nvbandwidth (v0.8) where its
# source tarball was carried ($NVBANDWIDTH_SRC or .gpu-anchors/
# nvbandwidth-src.tar.gz, e.g. `git archive --prefix=nvbandwidth/ v0.8`
# of its public repository) and Boost's program_options and nvml.h are
# there (else one line says which is missing). Used by scripts/gpu-check.sh; it also runs
# on a machine without a GPU, where it only builds (a stub libcuda stands in
# for the driver at link time, and the binaries are not run).
#
#   scripts/build-gpu-anchors.sh OUT_DIR
#
# Found, first hit wins:
#   tarball  $GPU_ANCHORS_SRC, ../shared/reference/, shared/reference/,
#            .gpu-anchors/ at the repository root or beside this script (a
#            copy carried to a GPU machine; scripts/gpu-bundle.sh packs one)
#   nvcc     $NVCC, nvcc on PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, the
#            package directories of python3 on PATH (pip's nvidia-cuda-nvcc:
#            nvidia/cu13/bin or nvidia/cuda_nvcc/bin)
#   NCCL     $NCCL_HOME (include/nccl.h, lib/libnccl.so*), else python3's
#            nvidia/nccl (pip's nvidia-nccl-cu13 / -cu12)
#   libcuda  the driver's libcuda.so.1 (ldconfig), else a stub built here
# Writes OUT_DIR/bin/<tool> and OUT_DIR/build.log; prints one line per tool
# (built, or why not) and exits 1 when nothing could be built.
# NVCC_GENCODE defaults to Hopper only (sm_90), which is what the lent GPU
# machine has; set it for another GPU.
set -uo pipefail
out=${1:?usage: build-gpu-anchors.sh OUT_DIR}
mkdir -p "$out/bin" "$out/src" "$out/cuda/lib64" "$out/nccl/lib"
out=$(cd "$out" && pwd)
log=$out/build.log
: >"$log"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
say() { echo "build-gpu-anchors: $*"; }

tarball=""
for t in "${GPU_ANCHORS_SRC:-}" "$repo/../shared/reference/gpu-anchors-src.tar.gz" \
  "$repo/shared/reference/gpu-anchors-src.tar.gz" "$repo/.gpu-anchors/gpu-anchors-src.tar.gz" \
  "$here/.gpu-anchors/gpu-anchors-src.tar.gz"; do
  [ -n "$t" ] && [ -f "$t" ] && tarball=$t && break
done
if [ -z "$tarball" ]; then
  say "no gpu-anchors-src.tar.gz (set GPU_ANCHORS_SRC, or copy it to .gpu-anchors/)"
  exit 1
fi
tar -xzf "$tarball" -C "$out/src" || { say "cannot unpack $tarball"; exit 1; }
src=$out/src/gpu-anchors

# Package directories of the python3 on PATH (a venv's, activated or not).
py_sites() {
  command -v python3 >/dev/null || return 0
  timeout 10 python3 -E -c 'import site
for d in site.getsitepackages() + [site.getusersitepackages()]: print(d)' 2>/dev/null
}

nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  for c in "$(command -v nvcc 2>/dev/null)" "${CUDA_HOME:-/nonexistent}/bin/nvcc" /usr/local/cuda/bin/nvcc; do
    [ -n "$c" ] && [ -x "$c" ] && nvcc=$c && break
  done
fi
if [ -z "$nvcc" ]; then
  while read -r d; do
    for c in "$d/nvidia/cu13/bin/nvcc" "$d/nvidia/cuda_nvcc/bin/nvcc"; do
      [ -x "$c" ] && nvcc=$c && break 2
    done
  done < <(py_sites)
fi
if [ -z "$nvcc" ]; then
  say "no nvcc (PATH, CUDA_HOME, /usr/local/cuda, or pip install nvidia-cuda-nvcc nvidia-cuda-runtime)"
  exit 1
fi
# A CUDA tree as nccl-tests' Makefile expects it (bin, include, lib64 with
# unversioned library names), pointing into wherever nvcc's kit lies.
kit=$(cd "$(dirname "$nvcc")/.." && pwd)
ln -sfn "$kit/bin" "$out/cuda/bin"
ln -sfn "$kit/include" "$out/cuda/include"
for lib in "$kit"/lib64/libcudart.so* "$kit"/lib/libcudart.so* "$kit"/lib/x86_64-linux-gnu/libcudart.so*; do
  [ -e "$lib" ] && ln -sf "$lib" "$out/cuda/lib64/$(basename "$lib")" && ln -sf "$lib" "$out/cuda/lib64/libcudart.so"
done
say "nvcc: $nvcc ($("$nvcc" --version | grep -o 'release [0-9.]*'))"

nccl_inc="" nccl_lib=""
for d in "${NCCL_HOME:-/nonexistent}"; do
  [ -f "$d/include/nccl.h" ] && nccl_inc=$d/include && nccl_lib=$(ls "$d"/lib/libnccl.so* 2>/dev/null | head -1)
done
if [ -z "$nccl_inc" ]; then
  while read -r d; do
    if [ -f "$d/nvidia/nccl/include/nccl.h" ] && [ -e "$d/nvidia/nccl/lib/libnccl.so.2" ]; then
      nccl_inc=$d/nvidia/nccl/include nccl_lib=$d/nvidia/nccl/lib/libnccl.so.2
      break
    fi
  done < <(py_sites)
fi
# The wheel has libnccl.so.2 only; the link needs libnccl.so.
if [ -n "$nccl_lib" ]; then
  ln -sfn "$nccl_inc" "$out/nccl/include"
  ln -sf "$nccl_lib" "$out/nccl/lib/libnccl.so"
  ln -sf "$nccl_lib" "$out/nccl/lib/libnccl.so.2"
  say "NCCL: $nccl_lib"
else
  say "no NCCL headers and library (NCCL_HOME, or pip install nvidia-nccl-cu13): nccl-tests not built"
fi

# The driver for the samples' -lcuda: the real one where there is one
# (the loader's cache, else LD_LIBRARY_PATH and the usual driver places).
libcuda=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
if [ -z "$libcuda" ]; then
  IFS=: read -ra dirs <<<"${LD_LIBRARY_PATH:-}"
  for d in "${dirs[@]}" /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
    [ -n "$d" ] && [ -e "$d/libcuda.so.1" ] && libcuda=$d/libcuda.so.1 && break
  done
fi
gencode=${NVCC_GENCODE:--gencode=arch=compute_90,code=sm_90}
built=0

if [ -n "$nccl_lib" ]; then
  start=$SECONDS
  # Only the eleven programs gpu-check.sh runs.
  if make -C "$src/nccl-tests" -j"$jobs" MPI=0 CUDA_HOME="$out/cuda" NCCL_HOME="$out/nccl" \
    NVCC_GENCODE="$gencode" BUILDDIR="$out/nccl-tests" \
    BIN_FILES_LIST="all_reduce all_gather broadcast reduce_scatter reduce alltoall sendrecv gather scatter hypercube alltoallv" \
    >>"$log" 2>&1; then
    for t in all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv gather scatter hypercube alltoallv; do
      [ -x "$out/nccl-tests/${t}_perf" ] && ln -sf "$out/nccl-tests/${t}_perf" "$out/bin/${t}_perf" && built=$((built + 1))
    done
    say "nccl-tests built in $((SECONDS - start)) s"
  else
    say "nccl-tests did not build (see $log)"
  fi
fi

# CUDA 13 dropped cudaDeviceProp::computeMode, which bandwidthTest's
# start-up guard reads; the unpacked copy asks for the same attribute
# through cudaDeviceGetAttribute instead (the guard's meaning is kept).
sed -i 's/deviceProp\.computeMode ==/({ int mode_ = 0; cudaDeviceGetAttribute(\&mode_, cudaDevAttrComputeMode, currentDevice); mode_; }) ==/' \
  "$src/cuda-samples/bandwidthTest/bandwidthTest.cu"
if [ -z "$libcuda" ]; then
  # Build only: a stub exporting every driver function the samples name.
  say "no libcuda.so.1 here: the samples link against a stub and are built, not run"
  stub=$out/stub
  mkdir -p "$stub"
  for s in bandwidthTest p2pBandwidthLatencyTest; do
    "$nvcc" $gencode -I"$src/cuda-samples/Common" -c "$src/cuda-samples/$s/$s.cu" -o "$stub/$s.o" >>"$log" 2>&1
  done
  nm -u "$stub"/*.o 2>/dev/null | awk '$2 ~ /^cu[A-Z]/ {print "void " $2 "(void) {}"}' | sort -u >"$stub/cuda.c"
  cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stub/libcuda.so" "$stub/cuda.c" >>"$log" 2>&1
  cudadir=$stub
else
  cudadir=$out/driver
  mkdir -p "$cudadir"
  ln -sf "$libcuda" "$cudadir/libcuda.so"
fi
for s in bandwidthTest p2pBandwidthLatencyTest; do
  start=$SECONDS
  if (cd "$src/cuda-samples/$s" && "$nvcc" $gencode -I../Common "$s.cu" -o "$out/bin/$s" \
    -L"$cudadir" -lcuda -Xlinker -rpath -Xlinker "$out/cuda/lib64") >>"$log" 2>&1; then
    say "$s built in $((SECONDS - start)) s"
    built=$((built + 1))
  else
    say "$s did not build (see $log)"
  fi
done

# nvbandwidth: its sources compiled with nvcc directly (its CMake build
# needs nothing more), against Boost program_options, NVML and the driver.
nvb_tar=""
for t in "${NVBANDWIDTH_SRC:-}" "$repo/.gpu-anchors/nvbandwidth-src.tar.gz" "$here/.gpu-anchors/nvbandwidth-src.tar.gz"; do
  [ -n "$t" ] && [ -f "$t" ] && nvb_tar=$t && break
done
nvml_h=""
for d in "$kit/include" "${CUDA_HOME:-/nonexistent}/include" /usr/local/cuda/include /usr/include; do
  [ -f "$d/nvml.h" ] && nvml_h=$d && break
done
boost_h=""
for d in /usr/include /usr/local/include "${BOOST_ROOT:-/nonexistent}/include"; do
  [ -f "$d/boost/program_options.hpp" ] && boost_h=$d && break
done
if [ -z "$nvb_tar" ]; then
  say "nvbandwidth not built: no nvbandwidth-src.tar.gz (set NVBANDWIDTH_SRC)"
elif [ -z "$boost_h" ]; then
  say "nvbandwidth not built: no Boost program_options headers (libboost-program-options-dev) on this machine"
elif [ -z "$nvml_h" ]; then
  say "nvbandwidth not built: no nvml.h in the CUDA kit"
else
  start=$SECONDS
  mkdir -p "$out/src/nvbandwidth"
  tar -xzf "$nvb_tar" -C "$out/src/nvbandwidth" --strip-components=1
  nsrc=$out/src/nvbandwidth
  nvml_lib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-ml\.so\.1 .*x86-64/ {print $NF; exit}')
  [ -n "$nvml_lib" ] && ln -sf "$nvml_lib" "$cudadir/libnvidia-ml.so"
  if "$nvcc" $gencode -std=c++17 -O3 -I"$nsrc" -I"$nvml_h" -I"$boost_h" -o "$out/bin/nvbandwidth" \
    "$nsrc"/*.cpp "$nsrc/kernels.cu" "$nsrc/json/jsoncpp.cpp" -L"$cudadir" -lcuda -lnvidia-ml \
    -lboost_program_options -Xlinker -rpath -Xlinker "$out/cuda/lib64" >>"$log" 2>&1; then
    say "nvbandwidth built in $((SECONDS - start)) s"
    built=$((built + 1))
  else
    say "nvbandwidth did not build (see $log)"
  fi
fi
[ "$built" -gt 0 ]
