//! `nvbandwidth`, the drop-in for NVIDIA's tool, on the GPU stand-in: its
//! layout against the tool's format strings (digits masked), `-l`, `-h`
//! and every refusal with its lines and status, `-j` as the tool's JSON
//! library lays it out, and every case's figure against a hand
//! calculation on the stand-in's model (which copies at its modelled
//! rates and counts whole nanoseconds; copies that run together do not
//! slow each other there).

use std::collections::HashMap;
use std::process::Command;

use commbench::topo::describe::{self, GpuLinkKind};

use crate::common;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// `$COMMBENCH_RESULTS_DIR` of the run.
    results: tempfile::TempDir,
}

fn nvbandwidth(machine: Option<&str>, visible: &str, env: &[(&str, &str)], args: &[&str]) -> Run {
    let d = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nvbandwidth"));
    cmd.args(args).current_dir(d.path()).env("CUDA_VISIBLE_DEVICES", visible);
    cmd.env("COMMBENCH_RESULTS_DIR", results.path());
    if let Some(m) = machine {
        common::standin::stand_in(m).apply(&mut cmd);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("nvbandwidth runs");
    assert!(std::fs::read_dir(d.path()).unwrap().next().is_none(), "{args:?} wrote into its directory");
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        results,
    }
}

/// The run's CSV and run record.
fn results_of(r: &Run) -> (Vec<HashMap<String, String>>, serde_json::Value) {
    let files: Vec<std::path::PathBuf> =
        std::fs::read_dir(r.results.path()).unwrap().map(|e| e.unwrap().path()).collect();
    let csv = files.iter().find(|p| p.to_string_lossy().ends_with("_nvbandwidth.csv")).expect("the cells CSV");
    let json = files.iter().find(|p| p.extension().is_some_and(|e| e == "json")).expect("a run record");
    let mut rd = csv::Reader::from_path(csv).unwrap();
    let head = rd.headers().unwrap().clone();
    let rows = rd
        .records()
        .map(|r| head.iter().zip(r.unwrap().iter()).map(|(h, v)| (h.to_string(), v.to_string())).collect())
        .collect();
    (rows, serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap())
}

/// Every printed cell is a CSV row (full precision, where its data goes),
/// and the run record says what ran, with what, how each case ended.
#[test]
fn results_files_hold_every_cell_and_the_run() {
    let r = nvbandwidth(
        Some("dgx1"),
        "0,1",
        &[],
        &["-b", "2", "-i", "2", "-t", "0", "device_to_device_bidirectional_memcpy_write_ce", "34", "nope"],
    );
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let (rows, rec) = results_of(&r);
    // Two cells for case 0, three matrices of two cells for case 7, two
    // for the local copy.
    assert_eq!(rows.len(), 2 + 6 + 2, "{rows:?}");
    let got = matrices(&r.stdout);
    for row in &rows {
        // The SUM key: the case, and which of its matrices.
        let key = match row["matrix"].as_str() {
            "" => row["test"].clone(),
            m => format!("{}_{m}", row["test"]),
        };
        let (_, cells) = &got[&key];
        let printed = cells[row["row"].parse::<usize>().unwrap()][row["column"].parse::<usize>().unwrap()].unwrap();
        let full: f64 = row["value"].parse().unwrap();
        assert!((full - printed).abs() <= 0.005 + 1e-9, "{row:?} against {printed}");
        assert_eq!((row["tool"].as_str(), row["bytes"].as_str()), ("nvbandwidth", "2097152"));
        assert_eq!((row["loops"].as_str(), row["samples"].as_str(), row["statistic"].as_str()), ("16", "2", "median"));
        assert_eq!(row["unit"], "GB/s");
    }
    assert_eq!(
        (rows[0]["test"].as_str(), rows[0]["from"].as_str(), rows[0]["to"].as_str(), rows[0]["host_memory"].as_str()),
        ("host_to_device_memcpy_ce", "host", "gpu0", "pinned")
    );
    let w2 = rows.iter().find(|r| r["matrix"] == "write2" && r["row"] == "0").unwrap();
    assert_eq!((w2["from"].as_str(), w2["to"].as_str(), w2["engine"].as_str()), ("gpu0", "gpu1", "ce"));
    assert_eq!(rec["schema"], "commbench-nvbandwidth-record/1");
    assert_eq!(rec["status"], "complete");
    assert_eq!(rec["exit_code"], 0);
    assert_eq!(rec["follows"], "v0.8");
    assert_eq!(rec["settings"]["buffer_mib"], 2);
    assert_eq!(rec["gpus"].as_array().unwrap().len(), 2);
    assert_eq!(rec["gpus"][0]["numa_node"], 0);
    let ends: Vec<(&str, &str)> = rec["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["case"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ends,
        [
            ("host_to_device_memcpy_ce", "passed"),
            ("device_to_device_bidirectional_memcpy_write_ce", "passed"),
            ("device_local_copy", "passed"),
            ("nope", "not_found")
        ]
    );
    // A run stopped by a corrupted copy keeps the cases it finished and
    // ends its record failed, saying why. Copies of 4 KiB and more, as
    // the stand-in counts them: the local copy's two fills, 4 warm-up and
    // 16 timed copies and its read-back (23), then case 0's fill, 4
    // warm-up copies and 16 timed ones, the last of which is the 44th.
    let r = nvbandwidth(
        Some("dgx1"),
        "0",
        &[("COMMBENCH_STANDIN_CORRUPT", "44")],
        &["-b", "2", "-i", "1", "-t", "34", "0"],
    );
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let (rows, rec) = results_of(&r);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["test"], "device_local_copy");
    assert_eq!(rec["status"], "failed");
    assert!(rec["status_detail"].as_str().unwrap().contains("data check failed"), "{rec}");
}

fn masked(t: &str) -> String {
    regex::Regex::new(r"\d+").unwrap().replace_all(t, "#").into_owned()
}

/// Each printed matrix by its `SUM` key: its title and rows (`None` for
/// `N/A`).
type Matrices = HashMap<String, (String, Vec<Vec<Option<f64>>>)>;

fn matrices(stdout: &str) -> Matrices {
    let mut out = HashMap::new();
    let lines: Vec<&str> = stdout.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].ends_with("(GB/s)") || lines[i].ends_with("(ns)") {
            let title = lines[i].to_string();
            let mut rows = Vec::new();
            let mut k = i + 2;
            while k < lines.len() && !lines[k].is_empty() {
                rows.push(lines[k].split_whitespace().skip(1).map(|w| w.parse().ok()).collect());
                k += 1;
            }
            let key = lines[k + 1].strip_prefix("SUM ").unwrap().split(' ').next().unwrap().to_string();
            out.insert(key, (title, rows));
            i = k;
        }
        i += 1;
    }
    out
}

const HELP: &str = "nvbandwidth CLI:
  -h [ --help ]                  Produce help message
  -b [ --bufferSize ] arg (=512) Memcpy buffer size in MiB
  -l [ --list ]                  List available testcases
  -t [ --testcase ] arg          Testcase(s) to run (by name or index)
  -p [ --testcasePrefixes ] arg  Testcase(s) to run (by prefix))
  -v [ --verbose ]               Verbose output
  -s [ --skipVerification ]      Skips data verification after copy
  -d [ --disableAffinity ]       Disable automatic CPU affinity control
  -i [ --testSamples ] arg (=3)  Iterations of the benchmark
  -m [ --useMean ]               Use mean instead of median for results
  -j [ --json ]                  Print output in json format instead of plain 
                                 text.
";

/// The first lines, digits masked.
fn version() -> String {
    masked(&format!("nvbandwidth Version: v0.8\nBuilt from Git version: commbench-{}\n\n", env!("CARGO_PKG_VERSION")))
}

/// `-h`, `-l` and the refusals, which need no GPU: the tool's lines, its
/// statuses, and one line of ours on stderr where it refuses.
#[test]
fn help_list_and_refusals() {
    let r = nvbandwidth(None, "", &[], &["-h"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(masked(&r.stdout), format!("{}{}\n", version(), masked(HELP)));
    let r = nvbandwidth(None, "", &[], &["--list"]);
    assert_eq!(r.code, Some(0));
    let entries: Vec<&str> =
        r.stdout.lines().filter(|l| regex::Regex::new(r"^\d+, \w+:$").unwrap().is_match(l)).collect();
    assert_eq!(entries.len(), 35, "{}", r.stdout);
    assert_eq!(entries[0], "0, host_to_device_memcpy_ce:");
    assert_eq!(entries[34], "34, device_local_copy:");
    assert!(r
        .stdout
        .contains("Index, Name:\n\tDescription\n=======================\n0, host_to_device_memcpy_ce:\n\t"));
    // `-j` with `-l` or `-h` prints nothing, as the tool's JSON mode does.
    assert_eq!(nvbandwidth(None, "", &[], &["-j", "-l"]).stdout, "");

    let r = nvbandwidth(None, "", &[], &["--bufferSize", "lots"]);
    assert_eq!(r.code, Some(1));
    let bin = env!("CARGO_BIN_EXE_nvbandwidth");
    assert_eq!(
        masked(&r.stdout),
        format!(
            "{}{}",
            version(),
            masked(&format!("ERROR: Invalid Arguments \n{bin} --bufferSize lots  :\n\n{HELP}\n"))
        )
    );
    assert_eq!(r.stderr, "nvbandwidth: the argument ('lots') for option '--bufferSize' is invalid\n");

    // Refused before any GPU is touched: one line on stderr, status 1.
    for (args, says) in [
        (&["-t", "0", "-p", "host"][..], "cannot be given together"),
        (&["-t", "multinode_device_to_device_memcpy_read_ce"], "is a multinode case"),
    ] {
        let r = nvbandwidth(Some("dgx1"), "0,1", &[], args);
        assert_eq!(r.code, Some(1), "{args:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains(says), "{}", r.stderr);
    }
    // No driver: one line naming the host.
    let r = nvbandwidth(None, "", &[("LD_LIBRARY_PATH", "/nonexistent")], &["-t", "0"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("nvbandwidth: no CUDA driver on "), "{}", r.stderr);
}

/// Seconds one copy of `bytes` takes at `gbs` on the stand-in.
fn seconds(lat_us: f64, bytes: f64, gbs: f64) -> f64 {
    lat_us * 1e-6 + bytes / (gbs * 1e9)
}

/// The DGX-1 stand-in's rates, and the peer rate (GB/s) between two of
/// the GPUs 0, 1 and 4 the tests make visible (as 0, 1, 2), where they
/// have peer access.
fn dgx1_model() -> (describe::GpuRates, impl Fn(usize, usize) -> Option<f64>) {
    let m = describe::load_gpu_model(&common::standin::description("dgx1")).unwrap();
    let rates = m.rates.unwrap();
    let described = [0usize, 1, 4];
    let nvlink = rates.nvlink_gbs;
    let pcie = rates.pcie_peer_gbs;
    let peer_rate = move |a: usize, b: usize| {
        let (a, b) = (described[a], described[b]);
        match m.links.iter().find(|l| (l.a, l.b) == (a.min(b), a.max(b))).map(|l| l.kind) {
            Some(GpuLinkKind::NvLink(n)) => Some(f64::from(n) * nvlink),
            Some(GpuLinkKind::Pcie) => Some(pcie),
            None => None,
        }
    };
    (rates, peer_rate)
}

/// Every copy-engine case on three GPUs of the DGX-1 (0 and 1: one
/// NVLink; 0 and 4: two; 1 and 4: none, so no peer access), in the tool's
/// layout, each figure the hand calculation's: bytes x loops over the
/// measured copy's time (the copies beside it do not slow it on the
/// stand-in), N/A where the GPUs cannot map each other's memory; for the
/// all-to-one and one-to-all totals, all copies' bytes over the time from
/// the first copy's start to the last copy's end, each stream starting
/// after its own 4 warm-up copies and no earlier than the first's start.
#[test]
fn every_copy_engine_case_is_the_model_s() {
    let ce: Vec<String> = (0..16).chain([34]).map(|i| i.to_string()).collect();
    let mut args = vec!["-b", "2", "-i", "1", "-t"];
    args.extend(ce.iter().map(String::as_str));
    let r = nvbandwidth(Some("dgx1"), "0,1,4", &[], &args);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let head = format!(
        "{}NOTE: the buffer size (# MiB) is below the default of # MiB; copies this small may not reach the links' full bandwidth.\n\
         CUDA Runtime Version: #\nCUDA Driver Version: #\nDriver Version: #.#.#\n\n{}\n\
         Device #: Tesla V#-SXM#-#GB (#:#:#)\nDevice #: Tesla V#-SXM#-#GB (#:#:#)\nDevice #: Tesla V#-SXM#-#GB (#:#:#)\n\n\
         Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n\
         \x20          #         #         #\n #     #.#     #.#     #.#\n\nSUM host_to_device_memcpy_ce #.#\n\n\
         Running device_to_host_memcpy_ce.\n",
        version(),
        masked(&commbench::topo::hostname())
    );
    assert!(masked(&r.stdout).starts_with(&head), "{}", r.stdout);
    let peer_block = "Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n\
        \x20          #         #         #\n #       N/A     #.#     #.#\n #     #.#       N/A       N/A\n #     #.#       N/A       N/A\n\n\
        SUM device_to_device_memcpy_read_ce #.#\n\n";
    assert!(masked(&r.stdout).contains(peer_block), "{}", r.stdout);
    assert!(r.stdout.ends_with("\n\n"));

    let (rates, peer_rate) = dgx1_model();
    let bytes = 2.0 * 1048576.0;
    let lat = rates.copy_latency_us;
    // The tool's arithmetic: bytes x 16 loops x 10^6 over the whole
    // microseconds the 16 copies took.
    let gbs = |rate: f64| {
        let us = (16.0 * seconds(lat, bytes, rate) * 1e6 + 1e-6).floor();
        (bytes * 16.0 * 1e6 / us).floor() / 1e9
    };
    // The total of copies from (or to) the other GPUs at these rates, run
    // together: stream k starts at max(its warm-up, the first's), and the
    // time runs from the first stream's start to the last end.
    let total = |rates: &[f64]| {
        let d: Vec<f64> = rates.iter().map(|&r| seconds(lat, bytes, r)).collect();
        let start0 = 4.0 * d[0];
        let end = d.iter().map(|&dk| (4.0 * dk).max(start0) + 16.0 * dk).fold(0.0, f64::max);
        rates.len() as f64 * bytes * 16.0 / (end - start0) / 1e9
    };
    let got = matrices(&r.stdout);
    let near = |got: Option<f64>, want: Option<f64>| match (got, want) {
        (Some(g), Some(w)) => (g - w).abs() <= 0.006 + w * 1e-4,
        (None, None) => true,
        _ => false,
    };
    let check = |key: &str, title: &str, want: &dyn Fn(usize, usize) -> Option<f64>| {
        let (t, rows) = got.get(key).unwrap_or_else(|| panic!("no {key} in\n{}", r.stdout));
        assert_eq!(t, title, "{key}");
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row.len(), 3, "{key}");
            for (j, &v) in row.iter().enumerate() {
                assert!(near(v, want(i, j)), "{key} {i},{j}: {v:?}, the model's {:?}\n{}", want(i, j), r.stdout);
            }
        }
    };
    let h2d = |_: usize, _: usize| Some(gbs(rates.h2d_pinned_gbs));
    let d2h = |_: usize, _: usize| Some(gbs(rates.d2h_pinned_gbs));
    let peer = |i: usize, j: usize| if i == j { None } else { peer_rate(i, j).map(gbs) };
    let peer2 = |i: usize, j: usize| peer(i, j).map(|v| 2.0 * v);
    check("host_to_device_memcpy_ce", "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", &h2d);
    check("device_to_host_memcpy_ce", "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)", &d2h);
    check("host_to_device_bidirectional_memcpy_ce", "memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)", &h2d);
    check("device_to_host_bidirectional_memcpy_ce", "memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)", &d2h);
    check("device_to_device_memcpy_read_ce", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", &peer);
    check("device_to_device_memcpy_write_ce", "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)", &peer);
    for (way, word) in [("read", "Read"), ("write", "Write")] {
        let key = format!("device_to_device_bidirectional_memcpy_{way}_ce");
        let t = |what: &str| format!("memcpy CE GPU(row) <-> GPU(column) {what} bandwidth (GB/s)");
        check(&format!("{key}_{way}1"), &t(&format!("{word}1")), &peer);
        check(&format!("{key}_{way}2"), &t(&format!("{word}2")), &peer);
        check(&format!("{key}_total"), &t("Total"), &peer2);
    }
    check("all_to_host_memcpy_ce", "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)", &d2h);
    check("all_to_host_bidirectional_memcpy_ce", "memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)", &d2h);
    check("host_to_all_memcpy_ce", "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", &h2d);
    check("host_to_all_bidirectional_memcpy_ce", "memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)", &h2d);
    // Into (or out of) GPU j from every GPU it has peer access with, in
    // GPU order.
    let many = |_: usize, j: usize| {
        let rs: Vec<f64> = (0..3).filter(|&k| k != j).filter_map(|k| peer_rate(j, k)).collect();
        (!rs.is_empty()).then(|| total(&rs))
    };
    check("all_to_one_write_ce", "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)", &many);
    check("all_to_one_read_ce", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", &many);
    check("one_to_all_write_ce", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", &many);
    check("one_to_all_read_ce", "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)", &many);
    check("device_local_copy", "memcpy local GPU(column) bandwidth (GB/s)", &|_, _| Some(gbs(rates.d2d_gbs)));
}

/// `-j`: one document in the tool's JSON layout, its members as the
/// tool fills them (a case of several matrices gets all their rows in one
/// matrix, and the last one's sum), an unknown case as `ERROR`.
#[test]
fn json_is_one_document_in_the_tool_s_layout() {
    let r = nvbandwidth(Some("dgx1"), "0,1", &[], &["-j", "-b", "2", "-i", "2", "-m", "-t", "0", "6", "nope"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON document");
    let top = &doc["nvbandwidth"];
    assert_eq!(top["version"], "v0.8");
    assert!(top["CUDA Runtime Version"].is_i64());
    assert_eq!(top["GPU Device list"].as_array().unwrap().len(), 2);
    let cases = top["testcases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    assert_eq!(cases[0]["name"], "host_to_device_memcpy_ce");
    assert_eq!(cases[0]["status"], "Passed");
    assert_eq!(cases[0]["bandwidth_description"], "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)");
    assert_eq!(cases[1]["bandwidth_matrix"].as_array().unwrap().len(), 6);
    assert_eq!(cases[1]["bandwidth_description"], "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)");
    assert_eq!(cases[2], serde_json::json!({"name": "nope", "status": "ERROR"}));
    let want = "{\n\t\"nvbandwidth\" : \n\t{\n\t\t\"CUDA Runtime Version\" : #,\n\t\t\"Driver Version\" : \"#.#.#\",\n\
        \t\t\"GPU Device list\" : \n\t\t[\n\t\t\t\"#: Tesla V#-SXM#-#GB (#:#:#): (";
    assert!(masked(&r.stdout).starts_with(want), "{}", r.stdout);
    assert!(
        r.stdout.contains("\t\t\t\t\"bandwidth_matrix\" : \n\t\t\t\t[\n\t\t\t\t\t[\n\t\t\t\t\t\t\""),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with("\n}\n\n"));
}

/// Without a pair of GPUs that can map each other's memory the peer
/// cases are waived; a case the tool does not know is reported and
/// skipped (status 0, as the tool); prefixes that name nothing stop the
/// run (status 1).
#[test]
fn waived_unknown_and_prefixes() {
    let r = nvbandwidth(Some("dgx1"), "1,4", &[], &["-b", "1", "-i", "1", "-t", "4", "12", "99", "x_y"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(
        "\n\nWaived: \nWaived: \nERROR: Testcase index 99 out of bound!\nERROR: Testcase x_y not found!\nNOTE: "
    ));
    // A results place that cannot be written, chosen: one line, status 1,
    // before anything is measured.
    let r = nvbandwidth(Some("dgx1"), "0", &[("COMMBENCH_RESULTS_DIR", "/proc/none")], &["-b", "1", "-t", "0"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(
        r.stderr,
        "nvbandwidth: cannot write results to '/proc/none': No such file or directory (os error 2) \
         (COMMBENCH_RESULTS_DIR chooses another place)\n"
    );
    assert!(!r.stdout.contains("Running"), "{}", r.stdout);
    let r = nvbandwidth(Some("dgx1"), "0", &[], &["-b", "1", "-p", "nothing_", "zz"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("no test case name starts with nothing_ or zz"), "{}", r.stderr);
}

/// The real NVRTC from pip's wheel (scripts/setup.sh), for the kernel
/// cases.
fn with_nvrtc() -> (String, String) {
    ("COMMBENCH_NVRTC".to_string(), crate::kernels::libnvrtc().display().to_string())
}

/// Every kernel case on the DGX-1's GPUs 0, 1 and 4, its kernels compiled
/// by the real NVRTC and run by the stand-in, each figure the hand
/// calculation's: the stand-in's kernels copy at their path's rate with
/// no launch cost, so a one-way figure is the rate (after the tool's
/// whole-microsecond arithmetic over 16 loops); a both-ways kernel runs
/// each direction on half its warps and reports half its bytes, so its
/// figure is the slower direction's rate; totals as the copy engine's.
#[test]
fn every_kernel_case_is_the_model_s() {
    let (k, v) = with_nvrtc();
    let r = nvbandwidth(
        Some("dgx1"),
        "0,1,4",
        &[(&k, &v)],
        &[
            "-b", "2", "-i", "1", "-t", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28",
            "29", "30", "31",
        ],
    );
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let (rates, peer_rate) = dgx1_model();
    let bytes = 2.0 * 1048576.0;
    let gbs = |rate: f64| {
        let us = (16.0 * bytes / (rate * 1e9) * 1e6 + 1e-6).floor();
        (bytes * 16.0 * 1e6 / us).floor() / 1e9
    };
    // Both ways on one kernel: half the bytes each way, the slower
    // direction deciding, half the bytes counted.
    let split = |a: f64, b: f64| {
        let us = (16.0 * (bytes / 2.0) / (a.min(b) * 1e9) * 1e6 + 1e-6).floor();
        ((bytes * 16.0 * 1e6 / us).floor() / 2.0).floor() / 1e9
    };
    let got = matrices(&r.stdout);
    let check = |key: &str, want: &dyn Fn(usize, usize) -> Option<f64>| {
        let (_, rows) = got.get(key).unwrap_or_else(|| panic!("no {key} in\n{}", r.stdout));
        for (i, row) in rows.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let w = want(i, j);
                let ok = match (v, w) {
                    (Some(g), Some(w)) => (g - w).abs() <= 0.006 + w * 1e-4,
                    (None, None) => true,
                    _ => false,
                };
                assert!(ok, "{key} {i},{j}: {v:?}, the model's {w:?}\n{}", r.stdout);
            }
        }
    };
    let (h2d, d2h) = (rates.h2d_pinned_gbs, rates.d2h_pinned_gbs);
    check("host_to_device_memcpy_sm", &|_, _| Some(gbs(h2d)));
    check("device_to_host_memcpy_sm", &|_, _| Some(gbs(d2h)));
    check("host_to_device_bidirectional_memcpy_sm", &|_, _| Some(split(h2d, d2h)));
    check("device_to_host_bidirectional_memcpy_sm", &|_, _| Some(split(h2d, d2h)));
    let peer = |i: usize, j: usize| if i == j { None } else { peer_rate(i, j).map(gbs) };
    check("device_to_device_memcpy_read_sm", &peer);
    check("device_to_device_memcpy_write_sm", &peer);
    check("device_to_device_bidirectional_memcpy_read_sm_read1", &peer);
    check("device_to_device_bidirectional_memcpy_write_sm_total", &|i, j| peer(i, j).map(|v| 2.0 * v));
    check("all_to_host_memcpy_sm", &|_, _| Some(gbs(d2h)));
    check("host_to_all_memcpy_sm", &|_, _| Some(gbs(h2d)));
    check("all_to_host_bidirectional_memcpy_sm", &|_, _| Some(split(h2d, d2h)));
    check("host_to_all_bidirectional_memcpy_sm", &|_, _| Some(split(h2d, d2h)));
    // Without launch costs every stream starts with the first: the total
    // is all copies' bytes over the slowest copy's time.
    let many = |_: usize, j: usize| {
        let rs: Vec<f64> = (0..3).filter(|&k| k != j).filter_map(|k| peer_rate(j, k)).collect();
        let slowest = rs.iter().cloned().fold(f64::INFINITY, f64::min);
        (!rs.is_empty()).then_some(rs.len() as f64 * slowest)
    };
    for key in ["all_to_one_write_sm", "all_to_one_read_sm", "one_to_all_write_sm", "one_to_all_read_sm"] {
        check(key, &many);
    }
}

/// The pointer chases: a GPU's loads from host memory and from each peer
/// it can map, each the stand-in's latency for that memory
/// (`latency.host_access_ns` 900 and `latency.peer_access_ns` 1200 by
/// default), in the tool's layout with `(ns)` titles. Two GPUs: each
/// figure is 80 kernel launches of 12,500 loads on the stand-in's clock.
#[test]
fn latency_cases_are_the_model_s() {
    let (k, v) = with_nvrtc();
    let r = nvbandwidth(Some("dgx1"), "0,1", &[(&k, &v)], &["-t", "32", "33", "-b", "1024"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let got = matrices(&r.stdout);
    let (title, rows) = &got["host_device_latency_sm"];
    assert_eq!(title, "memory latency SM CPU(row) <-> GPU(column) (ns)");
    assert_eq!(rows, &vec![vec![Some(900.0), Some(900.0)]]);
    let (title, rows) = &got["device_to_device_latency_sm"];
    assert_eq!(title, "Device to Device Latency SM GPU(row) <-> GPU(column) (ns)");
    assert_eq!(rows, &vec![vec![None, Some(1200.0)], vec![Some(1200.0), None]]);
    assert!(r.stdout.contains("\nSUM device_to_device_latency_sm 2400.00\n"), "{}", r.stdout);
}

/// Verification: a word corrupted in the last timed copy stops the run
/// with one line naming the case, the copy and the count, status 1 (the
/// tool stops too); one corrupted in a warm-up copy is overwritten by the
/// timed ones and passes; `-s` skips the check. The stand-in counts the
/// copies of 4 KiB and more: the destination's pattern fill (1), 4
/// warm-up copies (2-5) and 16 timed ones (6-21).
#[test]
fn verification_catches_a_corrupted_copy() {
    let args = ["-b", "2", "-i", "1", "-t", "0"];
    let r = nvbandwidth(Some("dgx1"), "0", &[("COMMBENCH_STANDIN_CORRUPT", "21")], &args);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr,
        "nvbandwidth: host_to_device_memcpy_ce: data check failed in sample 0: after Host -> Device 0, \
         1 of 524288 words of Device 0 differ from the source\n"
    );
    assert!(r.stdout.ends_with("Running host_to_device_memcpy_ce.\n"), "{}", r.stdout);
    let r = nvbandwidth(Some("dgx1"), "0", &[("COMMBENCH_STANDIN_CORRUPT", "5")], &args);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let mut skip = args.to_vec();
    skip.push("-s");
    let r = nvbandwidth(Some("dgx1"), "0", &[("COMMBENCH_STANDIN_CORRUPT", "21")], &skip);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    // With kernels the GPU fills and checks its own memory: the two
    // patterns put on it once (copies 1 and 2), then the kernel's warm-up
    // launch (3) and the timed one (4), whose corruption its check sees.
    let (k, v) = with_nvrtc();
    let sm = ["-b", "2", "-i", "1", "-t", "host_to_device_memcpy_sm"];
    let r = nvbandwidth(Some("dgx1"), "0", &[("COMMBENCH_STANDIN_CORRUPT", "4"), (&k, &v)], &sm);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("1 of 524288 words of Device 0 differ"), "{}", r.stderr);
    let (_, rec) = results_of(&r);
    assert!(rec["verification"].as_str().unwrap().starts_with("device memory filled and checked on its GPU"), "{rec}");
    let r = nvbandwidth(Some("dgx1"), "0", &[("COMMBENCH_STANDIN_CORRUPT", "3"), (&k, &v)], &sm);
    assert_eq!(r.code, Some(0), "a warm-up launch's word is overwritten: {}", r.stderr);
    // The copy engine's copy, checked by the kernels: patterns (1, 2),
    // warm-up (3-6), timed (7-22).
    let r = nvbandwidth(Some("dgx1"), "0", &[("COMMBENCH_STANDIN_CORRUPT", "22"), (&k, &v)], &args);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("after Host -> Device 0, 1 of 524288 words"), "{}", r.stderr);
    // In JSON the document is printed with the error in it.
    let r = nvbandwidth(
        Some("dgx1"),
        "0",
        &[("COMMBENCH_STANDIN_CORRUPT", "21")],
        &["-j", "-b", "2", "-i", "1", "-t", "0"],
    );
    assert_eq!(r.code, Some(1));
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON document");
    assert!(doc["nvbandwidth"]["error"].as_str().unwrap().contains("data check failed"), "{}", r.stdout);
}

/// Without NVRTC the kernel cases each say why in one line and are
/// `Error:` in the output; the copy-engine cases still run; status 1.
#[test]
fn kernel_cases_without_nvrtc_say_why() {
    let r = nvbandwidth(
        Some("dgx1"),
        "0",
        &[("COMMBENCH_NVRTC", "/nonexistent/libnvrtc.so.12")],
        &["-b", "1", "-i", "1", "-t", "16", "0"],
    );
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "nvbandwidth: host_to_device_memcpy_sm: cannot build the SM copy kernels: NVRTC is not available: \
             COMMBENCH_NVRTC=/nonexistent/libnvrtc.so.12 does not load"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains("Running host_to_device_memcpy_sm.\nError: cannot build the SM copy kernels: NVRTC"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("SUM host_to_device_memcpy_ce "), "{}", r.stdout);
}
