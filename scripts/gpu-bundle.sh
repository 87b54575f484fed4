#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs on a GPU machine that has CUDA (and
# NCCL in a Python environment) but no MPI: the GPU-facing binaries built
# against MPICH, MPICH's launcher (mpiexec.hydra + hydra_pmi_proxy), and
# every shared library they load that is not part of the C library itself,
# into gpu-bundle.tar.xz at the repository root (ignored by git).
#
#   scripts/gpu-bundle.sh            # build, then pack
#   tar xJf gpu-bundle.tar.xz && gpu-bundle/gpu-check.sh    # on the GPU machine
#
# With the device tool: carry gpu-bundle.tar.xz and run
#   tar xJf gpu-bundle.tar.xz -C /tmp && /tmp/gpu-bundle/gpu-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=gpu-bundle
target=target/mpich
CARGO_TARGET_DIR=$target MPI_PKG_CONFIG=mpich cargo build --release --quiet --bins
rm -rf "$out" "$out.tar.xz"
mkdir -p "$out/bin" "$out/lib"
bins=(osu_latency osu_bw osu_allreduce osu_allgather osu_alltoall osu_reduce_scatter osu_bcast osu_reduce commbench
  all_reduce_perf all_gather_perf alltoall_perf reduce_scatter_perf broadcast_perf reduce_perf sendrecv_perf
  gather_perf scatter_perf hypercube_perf alltoallv_perf bandwidthTest p2pBandwidthLatencyTest nvbandwidth)
for b in "${bins[@]}"; do cp "$target/release/$b" "$out/bin/"; done
for b in mpiexec.hydra hydra_pmi_proxy; do cp "$(command -v "$b")" "$out/bin/"; done
# glibc's own libraries (the C library, its loader and every companion it
# ships: libresolv, libnss_*, libutil ...) and the compiler's runtime
# (libgcc_s, libstdc++) come from the GPU machine: a copy from here would
# shadow a newer one there and break what loads it (NCCL needs libstdc++);
# everything else (MPICH, UCX, hwloc, libfabric ...) travels.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libmvec\.so|libdl\.so|libpthread\.so|librt\.so|libresolv\.so|libnsl\.so|libnss_|libutil\.so|libanl\.so|libcrypt\.so|libBrokenLocale\.so|libthread_db\.so|libc_malloc_debug\.so|libgcc_s\.so|libstdc\+\+\.so)'
for f in "$out"/bin/*; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ $name =~ $skip ]]; then cp -L "$path" "$out/lib/$name"; fi
done
# UCX loads its transports as plugins from a directory beside libucs.
ucx_modules=$(dirname "$(ldconfig -p | awk '/libucs.so.0 / {print $NF; exit}')")/ucx
if [ -d "$ucx_modules" ]; then cp -rL "$ucx_modules" "$out/lib/ucx"; fi
cp scripts/gpu-check.sh scripts/build-gpu-anchors.sh scripts/gpu-side-by-side.py "$out/"
# The reference tools' source, built there by build-gpu-anchors.sh.
for t in "${GPU_ANCHORS_SRC:-}" ../shared/reference/gpu-anchors-src.tar.gz; do
  if [ -n "$t" ] && [ -f "$t" ]; then
    mkdir -p "$out/.gpu-anchors"
    cp "$t" "$out/.gpu-anchors/gpu-anchors-src.tar.gz"
    break
  fi
done
# nvbandwidth's source, where one was given (NVBANDWIDTH_SRC, a tarball
# of its v0.8 tree): built there beside the samples.
if [ -n "${NVBANDWIDTH_SRC:-}" ] && [ -f "$NVBANDWIDTH_SRC" ]; then
  mkdir -p "$out/.gpu-anchors"
  cp "$NVBANDWIDTH_SRC" "$out/.gpu-anchors/nvbandwidth-src.tar.gz"
fi
tar cJf "$out.tar.xz" "$out"
rm -rf "$out"
echo "gpu-bundle: $(du -h "$out.tar.xz" | cut -f1) in $out.tar.xz"
