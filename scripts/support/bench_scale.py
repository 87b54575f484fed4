#!/usr/bin/env python3
"""Start-up and memory of commbench's binaries against OSU 7.4's own at
growing process counts (run by scripts/bench-scale.sh, which builds what it
needs and says how to read the table).

For each process count, in rounds, one job per binary is timed from the
launcher's start to the first row on stdout, and a second is run with every
rank under rsswrap (peak resident memory and CPU time of each rank); with the
control (the default), ours runs twice a round, on either side of OSU's, the
order turned round every other round. Reports medians over the rounds as a
Markdown table, each ratio beside its A/A band (how far ours' second runs lie
from its first, or what resampling both moves the median by, whichever is
larger: what noise alone moves; scripts/support/aa_band.py), and the bytes
rank 0 gathered at
start-up (from our run record; OSU's gathers nothing of its own).

Targets, at every count: start-up (first row) ours / OSU <= 1.2, median RSS
per rank ours / OSU <= 1.5. A ratio misses only beyond the target stretched
by its band, target * (1 + band); the exit status is 1 when one does, 0
otherwise."""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from aa_band import aa_band

ROW = re.compile(rb"^\s*\d+\s+\d")


def fail(line):
    """A run that failed: one line on stderr, exit status 2."""
    print(line, file=sys.stderr)
    sys.exit(2)


def first_row(argv, env, limit):
    """(seconds to the first row, seconds to the end, exit code)."""
    start = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    first = None
    for line in p.stdout:
        if first is None and ROW.match(line):
            first = time.monotonic() - start
        if time.monotonic() - start > limit:
            p.kill()
            break
    code = p.wait()
    return first, time.monotonic() - start, code


def peak_rss(argv, env, limit):
    """({rank: peak KiB}, {rank: CPU ms}, exit code) from rsswrap's lines."""
    out = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=limit)
    rss, cpu = {}, {}
    for line in out.stderr.decode(errors="replace").splitlines():
        m = re.match(r"rsswrap (\d+) (\d+) (\d+)$", line.strip())
        if m:
            rss[int(m.group(1))] = int(m.group(2))
            cpu[int(m.group(1))] = int(m.group(3))
    return rss, cpu, out.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--commbench", required=True, help="commbench itself, for the A/A band")
    ap.add_argument("--osu", required=True)
    ap.add_argument("--rsswrap", required=True)
    ap.add_argument("--np", default="2 8 32 64 128")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--launcher", default="mpirun --oversubscribe --bind-to none")
    ap.add_argument("--args", default="-m 8:8 -i 100 -x 10")
    ap.add_argument("--limit", type=float, default=600)
    ap.add_argument("--label", default="")
    ap.add_argument("--no-control", action="store_true")
    a = ap.parse_args()
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    launcher = a.launcher.split()
    bench_args = a.args.split()
    rows = []
    tmp = tempfile.mkdtemp(prefix="bench-scale-")
    for np_ in [int(x) for x in a.np.split()]:
        n_flag = ["-n", str(np_)] if "mpiexec" in launcher[0] else ["-np", str(np_)]
        got = {"ours": [], "osu": [], "ours2": []}
        gathered = []
        for r in range(a.rounds):
            order = [("ours", a.ours), ("osu", a.osu)] + ([] if a.no_control else [("ours2", a.ours)])
            if r % 2 == 1:
                order.reverse()
            for who, binary in order:
                extra = []
                if who != "osu":
                    csv = os.path.join(tmp, f"s{np_}_{r}.csv")
                    extra = ["--csv", csv]
                argv = launcher + n_flag + [binary] + bench_args + extra
                first, total, code = first_row(argv, env, a.limit)
                if code != 0 or first is None:
                    fail(f"bench-scale: {' '.join(argv)} failed (exit {code})")
                if who != "osu":
                    rec = json.load(open(csv[:-4] + ".json"))
                    st = rec.get("startup") or {}
                    gathered.append(st.get("gathered_bytes", 0))
                    os.remove(csv)
                    os.remove(csv[:-4] + ".json")
                rss_extra = ["--csv", os.path.join(tmp, f"m{np_}_{r}_{who}.csv")] if who != "osu" else []
                rss, cpu, code = peak_rss(launcher + n_flag + [a.rsswrap, binary] + bench_args + rss_extra, env, a.limit)
                if code != 0 or len(rss) != np_:
                    fail(f"bench-scale: rss run of {binary} at np {np_} failed (exit {code}, {len(rss)} ranks)")
                got[who].append((first, total, statistics.median(rss.values()), rss[0], statistics.median(cpu.values())))
                print(f"# np {np_} round {r + 1} {who}: first row {first:.2f} s, end {total:.2f} s, "
                      f"rss median {statistics.median(rss.values()) / 1024:.1f} MiB, rank 0 {rss[0] / 1024:.1f} MiB",
                      file=sys.stderr, flush=True)
        med = {w: [statistics.median(x[i] for x in got[w]) for i in range(5)] for w in got if got[w]}
        # Each ratio's band: ours against its second runs (start-up, RSS).
        bands = [aa_band(a.commbench, [x[i] for x in got["ours"]], [x[i] for x in got["ours2"]]) for i in (0, 2)]
        rows.append((np_, med, max(gathered) if gathered else 0, bands))
    print(f"\n{a.label}" if a.label else "")
    print("| np | first row: ours / OSU (s) | ratio | A/A band | CPU per rank: ours / OSU (ms) "
          "| RSS per rank, median: ours / OSU (MiB) | ratio | A/A band | rank 0 RSS: ours / OSU (MiB) "
          "| rank 0 gathered at start-up | per rank |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    misses = []
    for np_, m, g, bands in rows:
        o, c = m["ours"], m["osu"]
        cells = []
        for i, band, target, what in ((0, bands[0], 1.2, "start-up"), (2, bands[1], 1.5, "RSS per rank")):
            ratio, noise = o[i] / c[i], band or 0.0
            miss = ratio > target * (1 + noise)
            if miss:
                misses.append(f"np {np_}: {what} {ratio:.2f} > {target} x (1 + {noise * 100:.1f}%)")
            cells.append((f"{ratio:.2f}{' *' if miss else ''}", "-" if band is None else f"±{band * 100:.1f}%"))
        print(f"| {np_} | {o[0]:.2f} / {c[0]:.2f} | {cells[0][0]} | {cells[0][1]} | {o[4]:.0f} / {c[4]:.0f} "
              f"| {o[2] / 1024:.1f} / {c[2] / 1024:.1f} | {cells[1][0]} | {cells[1][1]} "
              f"| {o[3] / 1024:.1f} / {c[3] / 1024:.1f} | {g} B | {g / np_:.0f} B |")
    if misses:
        print("RESULT: TARGETS MISSED beyond the A/A band: " + "; ".join(misses))
        sys.exit(1)
    print("RESULT: ALL TARGETS MET (start-up <= 1.2x, RSS per rank <= 1.5x of OSU's, each within its A/A band)")


if __name__ == "__main__":
    main()
