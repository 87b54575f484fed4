//! What the GPU copy drop-ins (`bandwidthTest`, `p2pBandwidthLatencyTest`,
//! `nvbandwidth`) leave besides their stdout, on the GPU stand-in's DGX-1
//! (GPUs 0, 1 and 4: one NVLink between 0 and 1, two between 0 and 4,
//! none between 1 and 4) with PCIe gen3 x16 links in a fixture sysfs:
//! one cells CSV schema, each cell's path and share of its peak (NVLinks
//! counted by the stand-in's NVML, 25 GB/s each; PCIe 15.75 GB/s), the
//! pairs grouped by path class in the record, GPU-by-GPU heatmaps, and
//! `--min-efficiency` naming the cells below it on stderr, with status 1
//! and stdout as without it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

const COLUMNS: &str = "tool,test,engine,matrix,row,column,from,to,host_memory,peer_access,bytes,loops,samples,\
                       statistic,value,unit,path,peak_GBps,efficiency_pct,finished_utc";

/// One PCIe gen3 x16 link, one direction, GB/s.
const GEN3_X16: f64 = 8.0 * 16.0 * 128.0 / 130.0 / 8.0;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    results: tempfile::TempDir,
}

fn run(bin: &str, sys: &Path, args: &[&str]) -> Run {
    let d = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(d.path()).env("CUDA_VISIBLE_DEVICES", "0,1,4");
    cmd.env("COMMBENCH_RESULTS_DIR", results.path()).env("COMMBENCH_SYSFS_ROOT", sys);
    common::standin::stand_in("dgx1").apply(&mut cmd);
    let o = cmd.output().expect("the drop-in runs");
    assert!(std::fs::read_dir(d.path()).unwrap().next().is_none(), "{args:?} wrote into its directory");
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        results,
    }
}

type Row = HashMap<String, String>;

/// The run's files by name, its cells CSV's rows and its record.
fn results_of(r: &Run, tool: &str) -> (Vec<PathBuf>, Vec<Row>, serde_json::Value) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(r.results.path()).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let cells = files.iter().find(|p| p.to_string_lossy().ends_with(&format!("_{tool}.csv"))).expect("a cells CSV");
    let text = std::fs::read_to_string(cells).unwrap();
    assert_eq!(text.lines().next(), Some(COLUMNS));
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let head = rd.headers().unwrap().clone();
    let rows = rd
        .records()
        .map(|r| head.iter().zip(r.unwrap().iter()).map(|(h, v)| (h.to_string(), v.to_string())).collect())
        .collect();
    let record = cells.with_extension("json");
    (files, rows, serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap())
}

fn num(row: &Row, col: &str) -> f64 {
    row[col].parse().unwrap_or_else(|_| panic!("{col} of {row:?}"))
}

/// The share of its peak a cell's CSV row gives, against its own value.
fn check_share(row: &Row, peak: f64) {
    assert!((num(row, "peak_GBps") - peak).abs() < 1e-6, "{row:?}: peak {peak}");
    let share = 100.0 * num(row, "value") / peak;
    assert!((num(row, "efficiency_pct") - share).abs() <= 0.05 + 1e-9, "{row:?}: {share}");
}

fn masked(t: &str) -> String {
    regex::Regex::new(r"\d+(\.\d+)?").unwrap().replace_all(t, "#").into_owned()
}

/// p2pBandwidthLatencyTest: every printed value a CSV row with where its
/// data went; one-way and two-way cells against their path (two ways:
/// twice the peak; peer access off: through the CPU), the diagonal and
/// latencies without one; the record's classes per matrix; a heatmap per
/// matrix; `--min-efficiency` above every share fails every judged cell
/// and below them passes, stdout unchanged; a bad value is one line.
#[test]
fn p2p_cells_paths_classes_heatmaps_and_min_efficiency() {
    let sys = common::standin::sysfs_fixture("dgx1", "8.0 GT/s PCIe", "16");
    let bin = env!("CARGO_BIN_EXE_p2pBandwidthLatencyTest");
    let r = run(bin, sys.path(), &["--numElems=1000000"]);
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""), "{}", r.stdout);
    let (files, rows, rec) = results_of(&r, "p2pBandwidthLatencyTest");
    // Four bandwidth matrices and two latency ones (GPU and CPU time each)
    // of 3 x 3.
    assert_eq!(rows.len(), 4 * 9 + 2 * 2 * 9, "{rows:?}");
    let cell = |test: &str, matrix: &str, r: &str, c: &str| {
        rows.iter()
            .find(|x| x["test"] == test && x["matrix"] == matrix && x["row"] == r && x["column"] == c)
            .unwrap_or_else(|| panic!("{test} {matrix} {r},{c}"))
    };
    let w = "unidirectional_p2p_enabled_writes";
    let one = cell(w, "", "0", "1");
    assert_eq!((one["from"].as_str(), one["to"].as_str(), one["peer_access"].as_str()), ("gpu0", "gpu1", "on"));
    assert_eq!((one["path"].as_str(), one["bytes"].as_str(), one["loops"].as_str()), ("NVLink x1", "4000000", "5"));
    check_share(one, 25.0);
    let two = cell(w, "", "2", "0");
    assert_eq!((two["from"].as_str(), two["to"].as_str(), two["path"].as_str()), ("gpu2", "gpu0", "NVLink x2"));
    check_share(two, 50.0);
    let none = cell(w, "", "1", "2");
    assert_eq!((none["peer_access"].as_str(), none["path"].as_str()), ("off", "through the CPU"));
    check_share(none, GEN3_X16);
    let off = cell("unidirectional_p2p_disabled", "", "0", "1");
    assert_eq!((off["peer_access"].as_str(), off["path"].as_str()), ("off", "through the CPU"));
    check_share(cell("bidirectional_p2p_enabled", "", "0", "2"), 100.0);
    let diagonal = cell(w, "", "1", "1");
    assert_eq!(
        (diagonal["from"].as_str(), diagonal["path"].as_str(), diagonal["efficiency_pct"].as_str()),
        ("gpu1", "", "")
    );
    let lat = cell("latency_p2p_enabled_writes", "cpu", "0", "1");
    assert_eq!((lat["unit"].as_str(), lat["bytes"].as_str(), lat["path"].as_str()), ("us", "16", "NVLink x1"));
    assert_eq!(lat["efficiency_pct"], "");
    // The printed matrix holds the CSV's values, rounded.
    let printed: Vec<f64> = r
        .stdout
        .split("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n")
        .nth(1)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    assert!((printed[1] - num(one, "value")).abs() <= 0.005 + 1e-9, "{printed:?} {one:?}");

    assert_eq!(rec["schema"], "commbench-gpu-copy-record/1");
    assert_eq!((rec["command"].as_str(), rec["status"].as_str()), (Some("p2pBandwidthLatencyTest"), Some("complete")));
    assert_eq!(rec["settings"]["num_elems"], 1_000_000);
    assert_eq!(rec["pairs"].as_array().unwrap().len(), 6);
    // 4 matrices x 6 pairs are judged; seed 002's grouping of one
    // matrix's pairs by NVLink count.
    assert_eq!(rec["efficiency"]["rows"].as_array().unwrap().len(), 24);
    let classes = rec["efficiency"]["classes"].as_array().unwrap();
    let of = classes.iter().find(|c| c["test"] == w).unwrap()["classes"].as_array().unwrap();
    let mut got: Vec<(&str, u64)> =
        of.iter().map(|c| (c["class"].as_str().unwrap(), c["pairs"].as_u64().unwrap())).collect();
    got.sort_unstable();
    assert_eq!(got, [("NVLink x1", 2), ("NVLink x2", 2), ("through the CPU", 2)]);
    // A heatmap and a matrix CSV per matrix.
    let named = |suffix: &str| files.iter().any(|p| p.to_string_lossy().ends_with(suffix));
    for m in [w, "bidirectional_p2p_disabled", "latency_p2p_disabled_gpu", "latency_p2p_enabled_writes_cpu"] {
        assert!(named(&format!("_{m}.svg")) && named(&format!("_{m}.csv")), "{m}: {files:?}");
    }
    assert_eq!(rec["files"].as_object().unwrap().len(), 2 + 8 * 2, "{}", rec["files"]);

    // Above every share: every judged cell fails, worst first; stdout
    // is the same but for its digits.
    let f = run(bin, sys.path(), &["--numElems=1000000", "--min-efficiency=99.9"]);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert_eq!(masked(&f.stdout), masked(&r.stdout));
    let lines: Vec<&str> = f.stderr.lines().collect();
    assert_eq!(
        lines[0],
        "p2pBandwidthLatencyTest: --min-efficiency 99.9%: 24 of 24 bandwidths below their path's share:"
    );
    assert_eq!(lines.len(), 25, "{}", f.stderr);
    assert!(lines[1..].iter().all(|l| l.starts_with("p2pBandwidthLatencyTest:   ")), "{}", f.stderr);
    assert!(f.stderr.contains(&format!("   {w} GPU 0 -> GPU 1 NVLink x1: ")), "{}", f.stderr);
    let (_, _, rec) = results_of(&f, "p2pBandwidthLatencyTest");
    assert_eq!((rec["status"].as_str(), rec["exit_code"].as_i64()), (Some("failed"), Some(1)));
    assert_eq!(rec["efficiency"]["passed"], false);
    let p = run(bin, sys.path(), &["--numElems=1000000", "--min-efficiency=1%"]);
    assert_eq!((p.code, p.stderr.as_str()), (Some(0), ""));
    let bad = run(bin, sys.path(), &["--min-efficiency=most"]);
    assert_eq!((bad.code, bad.stdout.as_str()), (Some(1), ""));
    assert_eq!(
        bad.stderr,
        "p2pBandwidthLatencyTest: --min-efficiency=most: give a percentage of the path's peak, above 0 and at most \
         100 (e.g. 80 or 80%)\n"
    );
}

/// bandwidthTest with `--device=all`: stdout sums the GPUs, the CSV keeps
/// each GPU's cell with its PCIe link; only a series' largest size is
/// judged; `--min-efficiency` above the shares turns `Result = PASS` into
/// `FAIL`, status 1.
#[test]
fn bandwidth_test_cells_per_gpu_and_min_efficiency() {
    let sys = common::standin::sysfs_fixture("dgx1", "8.0 GT/s PCIe", "16");
    let bin = env!("CARGO_BIN_EXE_bandwidthTest");
    let args = ["--device=all", "--htod", "--mode=range", "--start=1000000", "--end=2000000", "--increment=1000000"];
    let r = run(bin, sys.path(), &args);
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""), "{}", r.stdout);
    assert!(r.stdout.contains("Result = PASS\n"));
    let (files, rows, rec) = results_of(&r, "bandwidthTest");
    assert_eq!(files.len(), 2, "no matrix: {files:?}");
    assert_eq!(rows.len(), 3 * 2, "{rows:?}");
    for row in &rows {
        assert_eq!(
            (row["test"].as_str(), row["from"].as_str(), row["host_memory"].as_str()),
            ("H2D-Pinned", "host", "pinned")
        );
        assert_eq!((row["path"].as_str(), row["loops"].as_str(), row["unit"].as_str()), ("PCIe link", "100", "GB/s"));
        check_share(row, GEN3_X16);
    }
    // The printed line at 2 MB is the three GPUs' sum.
    let sum: f64 = rows.iter().filter(|x| x["bytes"] == "2000000").map(|x| num(x, "value")).sum();
    let line = r.stdout.lines().find(|l| l.starts_with("   2000000\t")).unwrap();
    let printed: f64 = line.split('\t').next_back().unwrap().parse().unwrap();
    assert!((printed - sum).abs() <= 0.05 + 1e-9, "{line} against {sum}");
    let judged = rec["efficiency"]["rows"].as_array().unwrap();
    assert_eq!(judged.len(), 3);
    assert!(judged.iter().all(|j| j["name"].as_str().unwrap().starts_with("H2D-Pinned host -> GPU ")), "{judged:?}");
    assert_eq!(rec["settings"]["sizes"], serde_json::json!([1000000, 2000000]));

    let mut strict = args.to_vec();
    strict.push("--min-efficiency=100");
    let f = run(bin, sys.path(), &strict);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert_eq!(masked(&f.stdout), masked(&r.stdout).replace("Result = PASS", "Result = FAIL"));
    assert!(f.stderr.starts_with("bandwidthTest: --min-efficiency 100%: 3 of 3 bandwidths below"), "{}", f.stderr);
    assert_eq!(f.stderr.lines().count(), 4, "{}", f.stderr);
}

/// nvbandwidth: peer cases' cells against their NVLinks and the host
/// cases' against the PCIe link; the all-to-one totals (several paths at
/// once) and within-GPU copies are not judged; a heatmap for the
/// GPU-by-GPU matrix only; `--min-efficiency` (not in `-h`) as the other
/// options are read, and its failures on stderr.
#[test]
fn nvbandwidth_cells_against_their_paths() {
    let sys = common::standin::sysfs_fixture("dgx1", "8.0 GT/s PCIe", "16");
    let bin = env!("CARGO_BIN_EXE_nvbandwidth");
    let cases = ["-t", "host_to_device_memcpy_ce", "device_to_device_memcpy_write_ce", "all_to_one_write_ce", "34"];
    let mut args = vec!["-b", "2", "-i", "1"];
    args.extend(cases);
    let r = run(bin, sys.path(), &args);
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""), "{}", r.stdout);
    let (files, rows, rec) = results_of(&r, "nvbandwidth");
    let find = |test: &str, from: &str, to: &str| {
        rows.iter().find(|x| x["test"] == test && x["from"] == from && x["to"] == to).unwrap()
    };
    check_share(find("host_to_device_memcpy_ce", "host", "gpu1"), GEN3_X16);
    let w = "device_to_device_memcpy_write_ce";
    assert_eq!(find(w, "gpu0", "gpu1")["path"], "NVLink x1");
    check_share(find(w, "gpu0", "gpu1"), 25.0);
    check_share(find(w, "gpu2", "gpu0"), 50.0);
    let total = find("all_to_one_write_ce", "peers", "gpu0");
    assert_eq!((total["path"].as_str(), total["efficiency_pct"].as_str()), ("", ""));
    assert_eq!(find("device_local_copy", "gpu0", "gpu0")["path"], "");
    let svgs: Vec<&PathBuf> = files.iter().filter(|p| p.extension().is_some_and(|e| e == "svg")).collect();
    assert_eq!(svgs.len(), 1, "{files:?}");
    assert!(svgs[0].to_string_lossy().ends_with(&format!("_{w}.svg")));
    // Three host cells and four peer cells are judged.
    assert_eq!(rec["efficiency"]["rows"].as_array().unwrap().len(), 3 + 4);
    assert_eq!(rec["efficiency"]["classes"][0]["test"], w);
    assert_eq!((rec["pairs"].as_array().unwrap().len(), rec["host_links"].as_array().unwrap().len()), (6, 3));

    let mut strict = args.clone();
    strict.extend(["--min-efficiency", "99.99"]);
    let f = run(bin, sys.path(), &strict);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert_eq!(masked(&f.stdout), masked(&r.stdout));
    assert!(f.stderr.starts_with("nvbandwidth: --min-efficiency 99.99%: 7 of 7 bandwidths below"), "{}", f.stderr);
    let bad = run(bin, sys.path(), &["--min-efficiency=0", "-l"]);
    assert_eq!(bad.code, Some(1));
    assert_eq!(bad.stderr, "nvbandwidth: the argument ('0') for option '--min-efficiency' is invalid\n");
    let help = run(bin, sys.path(), &["-h"]);
    assert!(!help.stdout.contains("efficiency"), "{}", help.stdout);
}

/// The drop-ins' results go to `history add`, `history check` and
/// `compare` as they are: each test and cell a series of its tool
/// (`bandwidthTest H2D-Pinned`, `host -> gpu0 pinned`), every size a
/// point, the matrices beside the CSV passed over; a second like run (the
/// stand-in's event-timed model, exactly) is within the first's band.
/// p2pBandwidthLatencyTest's CPU latency grids are the host's time to
/// queue copies, which a busy host changes from run to run: its runs are
/// kept but not judged here.
#[test]
fn drop_in_results_go_to_history_and_compare() {
    let sys = common::standin::sysfs_fixture("dgx1", "8.0 GT/s PCIe", "16");
    let d = tempfile::tempdir().unwrap();
    let bt = ["--mode=range", "--start=1000000", "--end=3000000", "--increment=1000000", "--htod"];
    for run_dir in ["first", "second"] {
        for (bin, args, place) in [
            (env!("CARGO_BIN_EXE_bandwidthTest"), &bt[..], run_dir),
            (env!("CARGO_BIN_EXE_p2pBandwidthLatencyTest"), &["--numElems=100000"][..], "p2p"),
            (env!("CARGO_BIN_EXE_nvbandwidth"), &["-b", "1", "-i", "1", "-t", "0", "5"][..], run_dir),
        ] {
            let place = d.path().join(place);
            let mut cmd = Command::new(bin);
            cmd.args(args).current_dir(d.path()).env("CUDA_VISIBLE_DEVICES", "0,1");
            cmd.env("COMMBENCH_RESULTS_DIR", &place).env("COMMBENCH_SYSFS_ROOT", sys.path());
            common::standin::stand_in("dgx1").apply(&mut cmd);
            let o = cmd.output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{bin}: {}", String::from_utf8_lossy(&o.stderr));
        }
    }
    let commbench = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_commbench")).args(args).current_dir(d.path()).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    for dir in ["first", "p2p"] {
        let (code, _, err) = commbench(&["history", "--db", "h.sqlite", "add", dir]);
        assert_eq!(code, Some(0), "{err}");
    }
    let (code, out, err) = commbench(&["history", "--db", "h.sqlite", "show", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let runs = v["runs"].as_array().unwrap();
    let series: Vec<String> = runs.iter().map(|r| format!("{} | {}", r["benchmark"], r["datatype"])).collect();
    let has = |bench: &str, cell: &str| runs.iter().any(|r| r["benchmark"] == bench && r["datatype"] == cell);
    assert!(has("bandwidthTest H2D-Pinned", "host -> gpu0 pinned"), "{series:#?}");
    assert!(has("p2pBandwidthLatencyTest unidirectional_p2p_enabled_writes", "gpu0 -> gpu1 peer on"), "{series:#?}");
    assert!(has("nvbandwidth device_to_device_memcpy_write_ce", "gpu0 -> gpu1"), "{series:#?}");
    assert!(runs.iter().all(|r| r["backend"] == "cuda"), "{series:#?}");
    let sizes = runs.iter().find(|r| r["benchmark"] == "bandwidthTest H2D-Pinned").unwrap()["sizes"].as_u64();
    assert_eq!(sizes, Some(3));
    let (code, out, err) = commbench(&["history", "--db", "h.sqlite", "check", "second"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let (code, out, err) = commbench(&["compare", "first", "second"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("bandwidthTest H2D-Pinned") && out.contains("nvbandwidth host_to_device_memcpy_ce"), "{out}");
}

/// A health check written against the real tools' output (bandwidthTest's
/// CSV and result lines, p2pBandwidthLatencyTest's peer-access lines and
/// write matrix, nvbandwidth's matrices, SUM lines and JSON document;
/// tests/health/gpu-node-health.sh) runs unchanged on the drop-ins: it
/// finds the node healthy at low thresholds, and above the stand-in's
/// NVLink rate names every pair it fails. About 3 s: two checks of five
/// tool runs each, bandwidthTest's at its quick mode's 32 MB.
#[test]
fn a_health_check_written_for_the_tools_runs_unchanged() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/health/gpu-node-health.sh");
    let bins = Path::new(env!("CARGO_BIN_EXE_nvbandwidth")).parent().unwrap();
    let results = tempfile::tempdir().unwrap();
    let check = |env: &[(&str, &str)]| {
        let mut cmd = Command::new("bash");
        cmd.arg(&script).arg(bins).env("CUDA_VISIBLE_DEVICES", "0,1");
        cmd.env("COMMBENCH_RESULTS_DIR", results.path()).current_dir(results.path());
        cmd.envs([("P2P_ELEMS", "1000000"), ("NVB_MIB", "2"), ("NVB_SAMPLES", "1")]);
        common::standin::stand_in("dgx1").apply(&mut cmd);
        cmd.envs(env.iter().copied());
        let o = cmd.output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, out, err) = check(&[]);
    assert_eq!((code, out.as_str()), (Some(0), "HEALTHY\n"), "{err}");
    let (code, out, err) = check(&[("MIN_PEER_GBS", "30")]);
    assert_eq!(code, Some(1), "{out}{err}");
    let found: Vec<&str> = out.lines().collect();
    assert_eq!(found[0], "UNHEALTHY");
    for pair in ["p2p 0 -> 1: ", "p2p 1 -> 0: ", "nvbandwidth write 0 -> 1: ", "nvbandwidth write 1 -> 0: "] {
        assert!(found.iter().any(|l| l.trim_start().starts_with(pair) && l.ends_with(" GB/s < 30")), "{pair}: {out}");
    }
    assert_eq!(found.len(), 5, "{out}");
}
