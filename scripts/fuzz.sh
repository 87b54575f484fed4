#!/usr/bin/env bash
# Fuzzes every parser and reader of user input for a bounded time with the
# mutation fuzzer in examples/fuzz.rs (stable Rust; see its header): the OSU
# option grammar, the suite, pairs, topo, compare and gpu-bw options, the OSU text
# and CSV readers, hostfiles and machine descriptions. Not part of CI.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60, all)
# Prints executions per target and every finding; findings' inputs are kept
# in target/fuzz-findings. Exit 1 when anything was found.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(osu-args suite-args pairs-args topo-args compare-args gpu-bw-args osu-text csv hostfile machine)
cargo build --quiet --example fuzz || exit 1
out=$(pwd)/target/fuzz-findings
mkdir -p "$out"
bin=$(pwd)/target/debug/examples/fuzz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for t in "${targets[@]}"; do
  log="$out/$t.log"
  seed=${FUZZ_SEED:-$RANDOM$RANDOM}
  # Run in an empty folder: subcommands given mutated options cannot
  # write anywhere that matters. Their own output goes to the log.
  (cd "$work" && timeout $((secs * 2 + 60)) "$bin" "$t" "$secs" "$out" "$seed" >"$log" 2>"$out/$t.stderr")
  rc=$?
  grep -E '^(TARGET|FINDING) ' "$log"
  if [ $rc -ne 0 ]; then
    status=1
    if ! grep -q '^TARGET ' "$log"; then
      echo "FINDING $t crash or abort (exit $rc, FUZZ_SEED=$seed); input in $out/$t-crash.txt; $(grep -a -v '^commbench' "$out/$t.stderr" | tail -1 | cut -c1-200)"
      cp "$out/last-input" "$out/$t-crash.txt" 2>/dev/null
    fi
  fi
done
exit $status
