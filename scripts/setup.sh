#!/usr/bin/env bash
# Installs everything commbench needs to build and test on Debian/Ubuntu:
# Debian packages, cargo-nextest (the test runner scripts/test.sh uses), and
# pip's NCCL wheel, NVRTC and ptxas, and reframe-hpc, each in a test virtual
# environment.
# Idempotent: packages already present are not reinstalled and apt (or pip)
# is not even consulted when nothing is missing.
#
# Run as root (or with sudo). Without root, ask your administrator for the
# packages listed below, or on a cluster `module load` an MPI (and hwloc) and
# build against it as docs/suite-and-slurm.md describes; the Slurm and MPICH tests are then
# skipped with a visible reason where their programs are absent.
set -euo pipefail

PACKAGES=(
  build-essential pkg-config clang libclang-dev
  openmpi-bin libopenmpi-dev
  mpich libmpich-dev
  libucx-dev ucx-utils
  hwloc libhwloc-dev libudev-dev
  slurm-wlm munge
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
  echo "setup: installing: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO="sudo"
    else
      echo "setup: not root and no sudo; please install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "setup: packages installed"
fi

cd "$(dirname "$0")/.."

# fresh_venv NAME VENV PACKAGE...: a new virtual environment at VENV (never
# activated) holding pip's PACKAGEs; whatever was at VENV is replaced.
fresh_venv() {
  echo "setup: installing ${*:3} into $2"
  rm -rf "$2"
  mkdir -p "$(dirname "$2")"
  python3 -m venv "$2"
  "$2/bin/python3" -m pip install -q --disable-pip-version-check "${@:3}"
  echo "setup: $1 venv ready"
}

# The real NCCL, for the tests that prove the library search and the
# version query against NCCL itself (tests/it/nccl_lib.rs): pip's wheel in a
# virtual environment of its own, as a GPU machine keeps it. Only the
# library is used (no GPU is needed to load it and ask its version).
# COMMBENCH_TEST_VENV moves it.
NCCL_WHEEL="nvidia-nccl-cu12==2.32.3"
venv=${COMMBENCH_TEST_VENV:-target/nccl-venv}
if ls "$venv"/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 >/dev/null 2>&1; then
  echo "setup: NCCL test venv present ($venv)"
else
  fresh_venv "NCCL test" "$venv" "$NCCL_WHEEL"
fi

# NVRTC and ptxas, for the SM copy and latency kernels (src/gpu/kernels.cu):
# tests/it/kernels.rs compiles them with the real NVRTC (libnvrtc.so.12 from
# nvidia-cuda-nvrtc-cu12, found as a GPU machine's pip install is) and checks
# every PTX with the real ptxas (nvidia-cuda-nvcc-cu12's bin/ptxas). No GPU
# is needed for either. Downloads: about 90 MB (nvrtc) and 41 MB (nvcc)
# wheels, 337 MB installed. COMMBENCH_CUDA_VENV moves it (the tests read the
# same variable).
CUDA_WHEELS=("nvidia-cuda-nvrtc-cu12==12.9.86" "nvidia-cuda-nvcc-cu12==12.9.86")
cvenv=${COMMBENCH_CUDA_VENV:-target/cuda-venv}
# Present means both wheels at the pinned version (their dist-info) with the
# library and ptxas in place.
site=("$cvenv"/lib/python3*/site-packages)
if [ -d "${site[0]}/nvidia_cuda_nvrtc_cu12-12.9.86.dist-info" ] &&
  [ -d "${site[0]}/nvidia_cuda_nvcc_cu12-12.9.86.dist-info" ] &&
  [ -f "${site[0]}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ] && [ -x "${site[0]}/nvidia/cuda_nvcc/bin/ptxas" ]; then
  echo "setup: CUDA compiler venv present ($cvenv)"
else
  fresh_venv "CUDA compiler" "$cvenv" "${CUDA_WHEELS[@]}"
fi

# ReFrame, for the test that runs the ReFrame checks of contrib/reframe
# under the real reframe-hpc (tests/it/reframe.rs). COMMBENCH_REFRAME_VENV
# moves it (the test reads the same variable).
REFRAME_PKG="reframe-hpc==4.10.4"
rvenv=${COMMBENCH_REFRAME_VENV:-target/reframe-venv}
if [ "$("$rvenv/bin/reframe" --version 2>/dev/null)" = "${REFRAME_PKG#*==}" ]; then
  echo "setup: ReFrame venv present ($rvenv)"
else
  fresh_venv "ReFrame" "$rvenv" "$REFRAME_PKG"
fi

# The test runner: scripts/test.sh runs the tests with cargo-nextest (each
# test in its own process, its time reported). Built from crates.io when
# absent.
if cargo nextest --version >/dev/null 2>&1; then
  echo "setup: cargo-nextest present"
else
  echo "setup: installing cargo-nextest from crates.io (a few minutes, once)"
  cargo install --locked --quiet cargo-nextest
  echo "setup: cargo-nextest ready"
fi
