#!/usr/bin/env bash
# Installs everything commbench needs to build and test on Debian/Ubuntu.
# Idempotent: packages already present are not reinstalled and apt is not even
# consulted when nothing is missing.
#
# Run as root (or with sudo). Without root, ask your administrator for the
# packages listed below, or on a cluster `module load` an MPI (and hwloc) and
# build against it as the README describes; the Slurm and MPICH tests are then
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
  exit 0
fi

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
echo "setup: done"
