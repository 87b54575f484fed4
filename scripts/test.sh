#!/usr/bin/env bash
# The whole test suite: installs what is missing (scripts/setup.sh), checks
# formatting and lints, builds the MPICH variant in its own target
# directory, then runs unit and integration tests and names the ten
# slowest. Integration tests launch real mpirun / mpiexec.mpich jobs, one
# at a time. Arguments go to cargo nextest run (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

if [ "$(id -u)" -eq 0 ]; then
  # Open MPI refuses to run as root unless told it is on purpose.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

if [ -z "${OMPI_MCA_pml:-}" ] && ! ls /sys/class/infiniband/mlx* >/dev/null 2>&1; then
  # Open MPI tries its UCX PML at every start, and with no Mellanox device
  # (its pml_ucx_devices default, mlx*) declines it for ob1: 0.2 s of each
  # of the hundreds of mpirun starts below. Name ob1, the PML it then uses.
  export OMPI_MCA_pml=ob1
fi

echo "== format and lints"
if cargo fmt --version >/dev/null 2>&1; then cargo fmt --all --check; else echo "rustfmt not installed: format check skipped"; fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets --quiet -- -D warnings
else
  echo "clippy not installed: lint check skipped"
fi

echo "== module graph (ARCHITECTURE.md's layers)"
# No cycle across top-level modules, no #[path], no arrow up the layers
# that ARCHITECTURE.md does not name (scripts/modgraph.py says which).
python3 scripts/modgraph.py --without-tests --layers --check | sed -n '/^cycles across/,$p'

echo "== MPICH build (target/mpich)"
CARGO_TARGET_DIR=target/mpich MPI_PKG_CONFIG=mpich cargo build --release --bins --quiet
export COMMBENCH_MPICH_BIN_DIR="$PWD/target/mpich/release"

echo "== tests (Open MPI build, plus the MPICH binaries above)"
# cargo-nextest (scripts/setup.sh installs it), configured in
# .config/nextest.toml: the integration tests one at a time, the unit tests
# beside them. --no-fail-fast: one failing test does not hide the others.
log=target/test-times.log
mkdir -p target
status=0
cargo nextest run --workspace --no-fail-fast "$@" 2>&1 | tee "$log" || status=$?
echo "== the ten slowest tests"
# nextest's lines: "        PASS [   1.234s] (12/345) crate::binary test::path"
# (awk reads every line: a `head` closing the pipe early would end sort
# with SIGPIPE, which pipefail turns into the script's status.)
grep -E '^ +(PASS|FAIL|SIGSEGV|SIGABRT|SIGKILL|TIMEOUT|LEAK) +\[' "$log" |
  sed -E 's/^ +([A-Z]+) +\[ *([0-9.]+)s\] +(\( *[0-9]+\/[0-9]+\) +)?/\2 \1 /' |
  sort -rn | awk 'NR <= 10 { printf "%9.1f s  %s %s %s\n", $1, $2, $3, $4 }'
if [ "$status" -ne 0 ]; then
  echo "== tests FAILED (status $status)"
  exit "$status"
fi
echo "== all tests passed"
