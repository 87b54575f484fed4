#!/usr/bin/env python3
"""The whole suite's wall time: `commbench suite` over OSU 7.4's own binaries
at their fixed counts (A), against commbench's binaries in one launch with
the precision rule (B), in alternating rounds (run by scripts/bench-suite.sh,
which builds what it needs).

Each round runs A, then B, then A again (the control, A2: the A/A band), the
order of A and B turned round every other round. Reports each mode's median
wall time over the rounds (from the suite's start to its exit: launches, MPI
start-up, warm-up and timed loops, everything a user waits for), the ratio
B / A beside its A/A band (how far A2's median lies from A's, or what
resampling both modes' runs moves the median by, whichever is larger:
scripts/support/aa_band.py), and per
benchmark and size whether B's median value lies inside the spread of the
fixed-count runs (every A and A2 value of that size: the default runs'
spread), with the control's A2 median judged against A alone the same way.

Target: ratio <= TARGET (0.25 by default), a miss only beyond TARGET * (1 +
band); every size of B inside the default runs' spread. Exit 0 when both
hold, 1 when one does not, 2 when a run failed."""

import argparse
import csv
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

from aa_band import aa_band


def fail(line):
    print(line, file=sys.stderr)
    sys.exit(2)


def run_suite(commbench, args, results, limit):
    """Runs one suite into `results`; its wall time in seconds."""
    argv = [commbench, "suite", "-q", "--results-dir", results] + args
    start = time.monotonic()
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=limit)
    except subprocess.TimeoutExpired:
        fail(f"bench-suite: {' '.join(argv)} ran past {limit} s")
    took = time.monotonic() - start
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        fail(f"bench-suite: {' '.join(argv)} exited {done.returncode}: {' / '.join(tail)}")
    return took


VALUE_COLUMNS = ("avg_lat_us", "bw_MBps")


def values(results):
    """{(benchmark, size): value} from a suite's CSVs (latency, else bandwidth)."""
    out = {}
    for path in glob.glob(os.path.join(results, "*", "*.csv")):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                for col in VALUE_COLUMNS:
                    v = row.get(col) or ""
                    if v:
                        out[(row["benchmark"], int(row["size_bytes"] or 0))] = float(v)
                        break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commbench", required=True)
    ap.add_argument("--osu-bin", required=True)
    ap.add_argument("--ours-bin", required=True)
    ap.add_argument("--ab", required=True, help="this checkout's commbench, for the A/A band (ab --band-of)")
    ap.add_argument("--np", default="2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--precision", default="5%", help="B's --precision, or none for fixed counts")
    ap.add_argument("--target", type=float, default=0.25)
    ap.add_argument("--suite-args", default="", help="more suite options for both modes")
    ap.add_argument("--launcher-args", default="", help="launcher options (after --) for both modes")
    ap.add_argument("--raw-dir", default="")
    ap.add_argument("--timeout", type=float, default=3600)
    a = ap.parse_args()
    raw = a.raw_dir or tempfile.mkdtemp(prefix="bench-suite-")
    common = ["--np", a.np] + a.suite_args.split()
    tail = ["--"] + a.launcher_args.split() if a.launcher_args else []
    modes = {
        "A": ["--bin-dir", a.osu_bin] + common + tail,
        "B": ["--bin-dir", a.ours_bin, "--one-launch"]
        + ([] if a.precision == "none" else ["--precision", a.precision])
        + common
        + tail,
    }
    walls = {"A": [], "B": [], "A2": []}
    for r in range(a.rounds):
        order = ["A", "B"] if r % 2 == 0 else ["B", "A"]
        for mode in order + ["A2"]:
            results = os.path.join(raw, f"{mode}-{r + 1}")
            took = run_suite(a.commbench, modes["A" if mode == "A2" else mode], results, a.timeout)
            walls[mode].append(took)
            print(f"round {r + 1}: {mode} {took:.2f} s", file=sys.stderr, flush=True)

    med = {m: statistics.median(w) for m, w in walls.items()}
    ratio = med["B"] / med["A"]
    band = aa_band(a.ab, walls["A"], walls["A2"])
    b_mode = "fixed counts" if a.precision == "none" else f"--precision {a.precision}"
    print(f"suite wall time, median of {a.rounds} rounds (s): A ({a.osu_bin}) at fixed counts {med['A']:.2f} "
          f"(control {med['A2']:.2f}); B commbench --one-launch {b_mode} {med['B']:.2f}")
    print(f"ratio {ratio:.3f} (target <= {a.target}; A/A band +-{band * 100:.1f}%)")

    per = {m: [values(os.path.join(raw, f"{m}-{r + 1}")) for r in range(a.rounds)] for m in walls}
    keys = sorted(set().union(*[set(v) for v in per["A"]]), key=lambda k: (k[0], k[1]))
    outside, control_outside, rows = [], [], 0
    print("\n| benchmark | size | fixed counts: min / median / max | B median | B inside | A2 median | A2 inside |")
    print("|---|---:|---|---:|---|---:|---|")
    for k in keys:
        a_vals = [v[k] for v in per["A"] if k in v]
        a2_vals = [v[k] for v in per["A2"] if k in v]
        b_vals = [v[k] for v in per["B"] if k in v]
        if not a_vals or not b_vals:
            fail(f"bench-suite: {k[0]} {k[1]} B has no value in some mode")
        rows += 1
        spread = a_vals + a2_vals
        b = statistics.median(b_vals)
        b_in = min(spread) <= b <= max(spread)
        c = statistics.median(a2_vals) if a2_vals else None
        c_in = c is None or min(a_vals) <= c <= max(a_vals)
        if not b_in:
            outside.append(k)
        if not c_in:
            control_outside.append(k)
        print(f"| {k[0]} | {k[1]} | {min(spread):.2f} / {statistics.median(spread):.2f} / {max(spread):.2f} | "
              f"{b:.2f} | {'yes' if b_in else '**no**'} | {c:.2f} | {'yes' if c_in else 'no'} |")
    print(f"\n{rows - len(outside)} of {rows} sizes of B inside the fixed-count runs' spread; "
          f"the control: {rows - len(control_outside)} of {rows} inside the first runs' spread")
    time_ok = ratio <= a.target * (1 + band)
    print(f"raw results: {raw}")
    if time_ok and not outside:
        print(f"RESULT: TARGETS MET (ratio {ratio:.3f}, every size inside the spread)")
        return 0
    print(f"RESULT: TARGETS MISSED (ratio {ratio:.3f}{'' if time_ok else ' beyond the target and its band'}; "
          f"{len(outside)} size(s) outside)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
