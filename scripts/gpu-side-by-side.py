#!/usr/bin/env python3
"""Sets commbench's GPU numbers beside the reference tools' (used by
scripts/gpu-check.sh; only Python's standard library).

  gpu-side-by-side.py copies GPU_BW_CSV BANDWIDTHTEST_PINNED BANDWIDTHTEST_PAGEABLE
      commbench gpu-bw's long CSV against bandwidthTest --csv output:
      H2D / D2H pinned and pageable, D2D; target within 3% for pinned.
  gpu-side-by-side.py nccl OURS_TABLE THEIRS_TABLE
      two nccl-tests tables (commbench's --format nccl-tests and an
      nccl-tests binary's), per size, out of place: time and busbw with
      ratios; target: time within 3% from 1 MiB up, within 1 us below.
  gpu-side-by-side.py samples OURS THEIRS
      two outputs of one CUDA sample (bandwidthTest --csv, or
      p2pBandwidthLatencyTest) or of nvbandwidth: commbench's drop-in
      against the tool, value by value (a CSV line's bandwidth per copy
      and size; a matrix's cells per case and title), with ratios; target
      within 3% for bandwidths (pageable copies and latencies are shown,
      not judged).
  gpu-side-by-side.py paths RESULTS_DIR
      the cells CSVs a drop-in (bandwidthTest, p2pBandwidthLatencyTest,
      nvbandwidth) left in RESULTS_DIR: each bandwidth with a known path
      against its peak, grouped by test and path class (median share).

Prints a table and one verdict line; the exit status is 0 (the verdict is
information for a person, the script's caller decides what fails).
"""

import csv
import re
import sys

MIB = 1 << 20


def gpu_bw_copies(path):
    """{(test, memory): GB/s} of GPU 0's h2d, d2h and d2d rows."""
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            test = row.get("test", "")
            if test not in ("h2d", "d2h", "d2d"):
                continue
            gpu = row["dst_gpu"] if test == "h2d" else row["src_gpu"]
            if gpu != "0":
                continue
            memory = row.get("host_memory") or "-"
            try:
                out[(test, memory)] = float(row["value"])
            except ValueError:
                pass
    return out


BT_LINE = re.compile(r"bandwidthTest-(H2D|D2H|D2D)(?:-(Pinned|Paged))?[^,]*, Bandwidth = ([0-9.]+) GB/s")


def bandwidth_test(path):
    """{(test, memory): GB/s} from bandwidthTest --csv output."""
    out = {}
    try:
        text = open(path).read()
    except OSError:
        return out
    for kind, memory, value in BT_LINE.findall(text):
        test = kind.lower()
        mem = {"Pinned": "pinned", "Paged": "pageable", "": "-"}[memory or ""]
        out[(test, mem)] = float(value)
    return out


def ratio(a, b):
    return a / b if b else float("nan")


def within_3(r):
    """Whether ratio r is within 3% of 1, and the verdict's words."""
    ok = abs(r - 1) <= 0.03
    return ok, "within 3%" if ok else "OUTSIDE 3%"


def copies(gpu_bw_csv, pinned, pageable):
    ours = gpu_bw_copies(gpu_bw_csv)
    theirs = bandwidth_test(pinned)
    theirs.update({k: v for k, v in bandwidth_test(pageable).items() if k[1] == "pageable"})
    print(f"{'copy':<5} {'host memory':<12} {'commbench GB/s':>15} {'bandwidthTest GB/s':>19} {'ratio':>7}  target")
    met = judged = 0
    for key in [("h2d", "pinned"), ("h2d", "pageable"), ("d2h", "pinned"), ("d2h", "pageable"), ("d2d", "-")]:
        a, b = ours.get(key), theirs.get(key)
        if a is None or b is None:
            print(f"{key[0]:<5} {key[1]:<12} {fmt(a):>15} {fmt(b):>19} {'':>7}  missing")
            continue
        r = ratio(a, b)
        verdict = ""
        if key[1] != "pageable":
            judged += 1
            ok, verdict = within_3(r)
            met += ok
        print(f"{key[0]:<5} {key[1]:<12} {a:>15.2f} {b:>19.2f} {r:>7.3f}  {verdict}")
    print(f"copies: {met} of {judged} pinned/D2D copies within 3% of bandwidthTest")


def fmt(v):
    return "-" if v is None else f"{v:.2f}"


def nccl_rows(path):
    """{size: (time_us, algbw, busbw)} of a table's out-of-place cells."""
    out = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out
    for line in lines:
        if line.startswith("#"):
            continue
        t = line.split()
        if len(t) < 13:
            continue
        try:
            out[int(t[0])] = (float(t[5]), float(t[6]), float(t[7]))
        except ValueError:
            continue
    return out


def nccl(ours_path, theirs_path):
    ours, theirs = nccl_rows(ours_path), nccl_rows(theirs_path)
    print(f"{'size (B)':>11} {'ours us':>9} {'theirs us':>9} {'time ratio':>10} {'ours busbw':>10} "
          f"{'theirs busbw':>12}  target")
    met = judged = 0
    for size in sorted(set(ours) | set(theirs)):
        a, b = ours.get(size), theirs.get(size)
        if a is None or b is None:
            print(f"{size:>11} {'-' if a is None else a[0]:>9} {'-' if b is None else b[0]:>9}  only one side")
            continue
        r = ratio(a[0], b[0])
        judged += 1
        if size >= MIB:
            ok, verdict = within_3(r)
        else:
            ok = abs(a[0] - b[0]) <= 1.0
            verdict = "within 1 us" if ok else "OUTSIDE 1 us"
        met += ok
        print(f"{size:>11} {a[0]:>9.2f} {b[0]:>9.2f} {r:>10.3f} {a[2]:>10.2f} {b[2]:>12.2f}  {verdict}")
    print(f"nccl: {met} of {judged} sizes within target")


BT_CSV = re.compile(r"^bandwidthTest-(\S+), Bandwidth = ([0-9.]+) GB/s, .* Size = (\d+) bytes")


def sample_values(path):
    """{key: value} of a CUDA sample's or nvbandwidth's output:
    bandwidthTest's CSV lines by (configuration, size), the matrices'
    cells (p2pBandwidthLatencyTest's, nvbandwidth's) by (case and title,
    row, column); N/A cells are left out."""
    out = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out
    title = case = ""
    for line in lines:
        m = BT_CSV.match(line)
        if m:
            out[(m.group(1), m.group(3))] = float(m.group(2))
            continue
        if line.startswith("Running ") and line.endswith("."):
            case = line[len("Running "):-1] + ": "
            continue
        if line.endswith("(GB/s)") or line.endswith("(us)") or line.endswith("(ns)"):
            title = case + line
            continue
        if line.startswith("   CPU"):
            title = title.split(" [")[0] + " [CPU]"
            continue
        if not line.strip() or line.startswith("SUM "):
            continue
        words = line.split()
        if title and len(words) > 1 and "\t" not in line and "D\\D" not in line:
            try:
                row = int(words[0])
            except ValueError:
                continue
            for col, v in enumerate(words[1:]):
                try:
                    out[(title, row, col)] = float(v)
                except ValueError:
                    pass
    return out


def samples(ours_path, theirs_path):
    ours, theirs = sample_values(ours_path), sample_values(theirs_path)
    keys = list(ours) + [k for k in theirs if k not in ours]
    print(f"{'value':<72} {'ours':>9} {'theirs':>9} {'ratio':>7}  target")
    met = judged = 0
    for key in keys:
        a, b = ours.get(key), theirs.get(key)
        name = " ".join(str(k) for k in key)
        if a is None or b is None:
            print(f"{name:<72} {fmt(a):>9} {fmt(b):>9} {'':>7}  only one side")
            continue
        r = ratio(a, b)
        verdict = ""
        text = str(key[0])
        if "Paged" not in text and "(us)" not in text and "(ns)" not in text and "[CPU]" not in text:
            judged += 1
            ok, verdict = within_3(r)
            met += ok
        print(f"{name:<72} {a:>9.2f} {b:>9.2f} {r:>7.3f}  {verdict}")
    print(f"samples: {met} of {judged} bandwidths within 3% of the sample")


def paths(results_dir):
    """Each test's bandwidth cells by path class: cells, median GB/s,
    the class's peak and the median share of it."""
    import glob
    import os
    import statistics
    groups = {}
    for name in sorted(glob.glob(os.path.join(results_dir, "*.csv"))):
        with open(name, newline="") as f:
            reader = csv.DictReader(f)
            if "efficiency_pct" not in (reader.fieldnames or []):
                continue
            for row in reader:
                if row.get("unit") != "GB/s" or not row.get("path"):
                    continue
                key = (row["tool"], row["test"], row["path"])
                g = groups.setdefault(key, {"gbps": [], "peak": [], "eff": []})
                g["gbps"].append(float(row["value"]))
                if row.get("peak_GBps"):
                    g["peak"].append(float(row["peak_GBps"]))
                if row.get("efficiency_pct"):
                    g["eff"].append(float(row["efficiency_pct"]))
    if not groups:
        print(f"no cells with a path in {results_dir}")
        return 0
    print(f"{'tool':<24} {'test':<44} {'path':<16} {'cells':>5} {'median GB/s':>12} {'peak GB/s':>10} {'share':>7}")
    for (tool, test, path), g in groups.items():
        peak = f"{statistics.median(g['peak']):.2f}" if g["peak"] else "unknown"
        share = f"{statistics.median(g['eff']):.0f}%" if g["eff"] else "-"
        print(f"{tool:<24} {test:<44} {path:<16} {len(g['gbps']):>5} {statistics.median(g['gbps']):>12.2f} {peak:>10} {share:>7}")
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "copies":
        copies(*argv[2:])
    elif len(argv) == 4 and argv[1] == "nccl":
        nccl(*argv[2:])
    elif len(argv) == 3 and argv[1] == "paths":
        return paths(argv[2])
    elif len(argv) == 4 and argv[1] == "samples":
        samples(*argv[2:])
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
