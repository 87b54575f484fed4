#!/usr/bin/env bash
# The whole test suite: installs what is missing (scripts/setup.sh), checks
# formatting and lints, builds the MPICH variant in its own target
# directory, then runs unit and integration tests. Integration tests launch
# real mpirun / mpiexec.mpich jobs, one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

if [ "$(id -u)" -eq 0 ]; then
  # Open MPI refuses to run as root unless told it is on purpose.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

echo "== format and lints"
if cargo fmt --version >/dev/null 2>&1; then cargo fmt --all --check; else echo "rustfmt not installed: format check skipped"; fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets --quiet -- -D warnings
else
  echo "clippy not installed: lint check skipped"
fi

echo "== MPICH build (target/mpich)"
CARGO_TARGET_DIR=target/mpich MPI_PKG_CONFIG=mpich cargo build --release --bins --quiet
export COMMBENCH_MPICH_BIN_DIR="$PWD/target/mpich/release"

echo "== tests (Open MPI build, plus the MPICH binaries above)"
# --no-fail-fast: one failing test binary does not hide the others' results.
cargo test --workspace --no-fail-fast --quiet -- --test-threads=1 "$@"
echo "== all tests passed"
