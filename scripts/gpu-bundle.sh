#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs on a GPU machine that has CUDA (and
# NCCL in a Python environment) but no MPI: the GPU-facing binaries built
# against MPICH, MPICH's launcher (mpiexec.hydra + hydra_pmi_proxy), and
# every shared library they load that is not part of the C library itself,
# into gpu-bundle.tar.xz at the repository root (ignored by git).
#
#   scripts/gpu-bundle.sh            # build, then pack
#   tar xJf gpu-bundle.tar.xz && gpu-bundle/gpu-check.sh    # on the GPU machine
set -euo pipefail
cd "$(dirname "$0")/.."
out=gpu-bundle
target=target/mpich
CARGO_TARGET_DIR=$target MPI_PKG_CONFIG=mpich cargo build --release --quiet --bins
rm -rf "$out" "$out.tar.xz"
mkdir -p "$out/bin" "$out/lib"
bins=(osu_latency osu_bw osu_allreduce osu_allgather osu_alltoall osu_reduce_scatter osu_bcast osu_reduce commbench)
for b in "${bins[@]}"; do cp "$target/release/$b" "$out/bin/"; done
for b in mpiexec.hydra hydra_pmi_proxy; do cp "$(command -v "$b")" "$out/bin/"; done
# The C library, its loader and its small companions come from the GPU
# machine; everything else (MPICH, UCX, hwloc, libfabric ...) travels.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s\.so)'
for f in "$out"/bin/*; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ $name =~ $skip ]]; then cp -L "$path" "$out/lib/$name"; fi
done
# UCX loads its transports as plugins from a directory beside libucs.
ucx_modules=$(dirname "$(ldconfig -p | awk '/libucs.so.0 / {print $NF; exit}')")/ucx
if [ -d "$ucx_modules" ]; then cp -rL "$ucx_modules" "$out/lib/ucx"; fi
cp scripts/gpu-check.sh "$out/"
tar cJf "$out.tar.xz" "$out"
rm -rf "$out"
echo "gpu-bundle: $(du -h "$out.tar.xz" | cut -f1) in $out.tar.xz"
