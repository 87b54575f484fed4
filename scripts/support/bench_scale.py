#!/usr/bin/env python3
"""Start-up and memory of commbench's binaries against OSU 7.4's own at
growing process counts (run by scripts/bench-scale.sh, which builds what it
needs and says how to read the table).

For each process count, in alternating rounds (ours, then OSU's), one job
per binary is timed from the launcher's start to the first row on stdout,
and a second is run with every rank under rsswrap (peak resident memory and
CPU time of each rank). Reports medians over the rounds as a Markdown table, and the
bytes rank 0 gathered at start-up (from our run record; OSU's gathers
nothing of its own)."""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROW = re.compile(rb"^\s*\d+\s+\d")


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
    ap.add_argument("--osu", required=True)
    ap.add_argument("--rsswrap", required=True)
    ap.add_argument("--np", default="2 8 32 64 128")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--launcher", default="mpirun --oversubscribe --bind-to none")
    ap.add_argument("--args", default="-m 8:8 -i 100 -x 10")
    ap.add_argument("--limit", type=float, default=600)
    ap.add_argument("--label", default="")
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
        got = {"ours": [], "osu": []}
        gathered = []
        for r in range(a.rounds):
            for who, binary in (("ours", a.ours), ("osu", a.osu)):
                extra = []
                if who == "ours":
                    csv = os.path.join(tmp, f"s{np_}_{r}.csv")
                    extra = ["--csv", csv]
                argv = launcher + n_flag + [binary] + bench_args + extra
                first, total, code = first_row(argv, env, a.limit)
                if code != 0 or first is None:
                    sys.exit(f"bench-scale: {' '.join(argv)} failed (exit {code})")
                if who == "ours":
                    rec = json.load(open(csv[:-4] + ".json"))
                    st = rec.get("startup") or {}
                    gathered.append(st.get("gathered_bytes", 0))
                    os.remove(csv)
                    os.remove(csv[:-4] + ".json")
                rss_extra = ["--csv", os.path.join(tmp, f"m{np_}_{r}.csv")] if who == "ours" else []
                rss, cpu, code = peak_rss(launcher + n_flag + [a.rsswrap, binary] + bench_args + rss_extra, env, a.limit)
                if code != 0 or len(rss) != np_:
                    sys.exit(f"bench-scale: rss run of {binary} at np {np_} failed (exit {code}, {len(rss)} ranks)")
                got[who].append((first, total, statistics.median(rss.values()), rss[0], statistics.median(cpu.values())))
                print(f"# np {np_} round {r + 1} {who}: first row {first:.2f} s, end {total:.2f} s, "
                      f"rss median {statistics.median(rss.values()) / 1024:.1f} MiB, rank 0 {rss[0] / 1024:.1f} MiB",
                      file=sys.stderr, flush=True)
        med = {w: [statistics.median(x[i] for x in got[w]) for i in range(5)] for w in got}
        rows.append((np_, med, max(gathered) if gathered else 0))
    print(f"\n{a.label}" if a.label else "")
    print("| np | first row: ours / OSU (s) | ratio | CPU per rank: ours / OSU (ms) "
          "| RSS per rank, median: ours / OSU (MiB) | ratio | rank 0 RSS: ours / OSU (MiB) "
          "| rank 0 gathered at start-up | per rank |")
    print("|---|---|---|---|---|---|---|---|---|")
    for np_, m, g in rows:
        o, c = m["ours"], m["osu"]
        print(f"| {np_} | {o[0]:.2f} / {c[0]:.2f} | {o[0] / c[0]:.2f} | {o[4]:.0f} / {c[4]:.0f} "
              f"| {o[2] / 1024:.1f} / {c[2] / 1024:.1f} | {o[2] / c[2]:.2f} | {o[3] / 1024:.1f} / {c[3] / 1024:.1f} "
              f"| {g} B | {g / np_:.0f} B |")


if __name__ == "__main__":
    main()
