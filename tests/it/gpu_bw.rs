//! `commbench gpu-bw` as a user meets it on a machine without CUDA: one
//! line naming the host and the missing library, exit status 1, nothing on
//! stdout and no result files, within 5 s; `--help` exits 0; a bad option
//! is one line and exit status 2. On a machine that has the driver the
//! no-driver checks are skipped (they would measure instead).

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Runs `commbench gpu-bw ARGS` in `dir` and how long it took.
fn gpu_bw(dir: &Path, args: &[&str]) -> (Output, Duration) {
    let began = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_commbench"))
        .arg("gpu-bw")
        .args(args)
        .current_dir(dir)
        .env_remove("COMMBENCH_RESULTS_DIR")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("commbench runs");
    (o, began.elapsed())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn no_driver_is_one_line_and_status_1() {
    if commbench::gpu_bw::driver::driver_present() {
        eprintln!("libcuda loads here: the no-driver case cannot be checked on this machine");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for args in [&[][..], &["--tests", "p2p", "--gpus", "0,1", "--min-bw", "300"][..]] {
        let (o, took) = gpu_bw(d.path(), args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(took < Duration::from_secs(5), "{args:?} took {took:?}");
        assert_eq!(text(&o.stdout), "", "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        let host = commbench::topo::hostname();
        let start = format!("commbench gpu-bw: no CUDA driver on {host}: libcuda.so.1 cannot be loaded (");
        assert!(err.starts_with(&start), "{args:?}: {err}");
        assert!(err.trim_end().ends_with(')'), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    }
    assert!(!d.path().join("results").exists(), "no result files without a driver");
}

#[test]
fn help_exits_0() {
    let d = tempfile::tempdir().unwrap();
    let (o, _) = gpu_bw(d.path(), &["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    for word in ["--tests", "--gpus", "--size", "--reps", "--latency-size", "--min-bw", "--results-dir", "Exit status"]
    {
        assert!(out.contains(word), "{word} missing from:\n{out}");
    }
    assert_eq!(text(&o.stderr), "");
    // The command is listed in commbench's own help.
    let all = Command::new(env!("CARGO_BIN_EXE_commbench")).arg("--help").output().unwrap();
    assert!(text(&all.stdout).contains("\n  gpu-bw    "), "{}", text(&all.stdout));
}

#[test]
fn bad_options_are_one_line_and_status_2() {
    let d = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--bogus"], "commbench gpu-bw: unexpected argument '--bogus' found (see commbench gpu-bw --help)"),
        (
            &["--tests", "h2d,xyz"],
            "commbench gpu-bw: invalid value 'h2d,xyz' for '--tests <LIST>': 'xyz' is not a test",
        ),
        (&["--gpus", "2-1"], "range '2-1' runs backwards"),
        (&["--size", "0"], "size '0' is out of range"),
        (&["--tests", "d2d", "--min-bw", "10"], "commbench gpu-bw: --min-bw judges GPU-to-GPU bandwidth"),
    ];
    for (args, want) in cases {
        let (o, took) = gpu_bw(d.path(), args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert_eq!(text(&o.stdout), "");
        assert!(took < Duration::from_secs(5));
    }
    assert!(!d.path().join("results").exists());
}

use crate::common;

use commbench::topo::describe::{self, GpuLinkKind};
use std::collections::HashMap;

/// `commbench gpu-bw ARGS` on the GPU stand-in pretending to be `machine`
/// (tests/it/common/standin.rs), with `--machine` so that the paths come from
/// the same description; the long CSV's rows and the run record.
fn on_stand_in(
    machine: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Vec<HashMap<String, String>>, serde_json::Value) {
    let gpu = common::standin::stand_in(machine);
    let d = tempfile::tempdir().unwrap();
    let desc = common::standin::description(machine);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_commbench"));
    cmd.arg("gpu-bw").args(args).args(["--results-dir", "res", "--machine"]).arg(&desc).current_dir(d.path());
    gpu.apply(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("commbench runs");
    assert_eq!(o.status.code(), Some(0), "{machine} {args:?}: {}\n{}", text(&o.stdout), text(&o.stderr));
    let res = d.path().join("res");
    let csv = std::fs::read_dir(&res)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "csv") && p.to_string_lossy().ends_with("_gpu-bw.csv"))
        .expect("the long CSV");
    let rows = common::read_csv(&csv);
    let record = serde_json::from_str(&std::fs::read_to_string(csv.with_extension("json")).unwrap()).unwrap();
    (rows, record)
}

/// What the stand-in's description says a timing should give: bytes per
/// copy over (the copy's fixed cost + bytes / the path's rate), in GB/s,
/// times how the tool counts (twice within a GPU, both ways added); for a
/// latency, microseconds per copy.
struct Expect {
    rates: describe::GpuRates,
    links: Vec<describe::GpuLink>,
}

impl Expect {
    fn of(machine: &str) -> Expect {
        let m = describe::load_gpu_model(&common::standin::description(machine)).unwrap();
        Expect { rates: m.rates.unwrap(), links: m.links }
    }

    fn link(&self, a: usize, b: usize) -> Option<GpuLinkKind> {
        self.links.iter().find(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a)).map(|l| l.kind)
    }

    /// GB/s of the path of a row; `index` maps CUDA's GPU numbers to the
    /// description's.
    fn path_gbs(&self, row: &HashMap<String, String>, index: &dyn Fn(usize) -> usize) -> f64 {
        let r = &self.rates;
        let gpu = |k: &str| row[k].parse::<usize>().ok().map(index);
        let pinned = row["host_memory"] == "pinned";
        match row["test"].as_str() {
            "h2d" if pinned => r.h2d_pinned_gbs,
            "h2d" => r.h2d_pageable_gbs,
            "d2h" if pinned => r.d2h_pinned_gbs,
            "d2h" => r.d2h_pageable_gbs,
            _ => {
                let (s, d) = (gpu("src_gpu").unwrap(), gpu("dst_gpu").unwrap());
                if s == d {
                    return r.d2d_gbs;
                }
                match (row["peer_access"].as_str(), self.link(s, d)) {
                    ("on", Some(GpuLinkKind::NvLink(n))) => n as f64 * r.nvlink_gbs,
                    ("on", Some(GpuLinkKind::Pcie)) => r.pcie_peer_gbs,
                    _ => r.staged_peer_gbs,
                }
            }
        }
    }

    fn value(&self, row: &HashMap<String, String>, index: &dyn Fn(usize) -> usize) -> f64 {
        let bytes: f64 = row["bytes"].parse().unwrap();
        let seconds = self.rates.copy_latency_us * 1e-6 + bytes / (self.path_gbs(row, index) * 1e9);
        let test = row["test"].as_str();
        if test == "p2p_latency" {
            return seconds * 1e6;
        }
        // A copy within one GPU counts its bytes twice (read and write);
        // both ways add the two directions, which run at once.
        let within = if test == "d2d" || row["src_gpu"] == row["dst_gpu"] { 2.0 } else { 1.0 };
        let ways = if test == "p2p_bidir" { 2.0 } else { 1.0 };
        within * ways * bytes / seconds / 1e9
    }
}

/// Every timing gpu-bw takes on 1, 2 and 8 stand-in GPUs of a DGX-1 (cube
/// mesh of one and two NVLinks, pairs across the sockets without peer
/// access) and an 8-GPU NVSwitch box comes back as the description's rate
/// within 5% (the CUDA-event timings; pageable copies are timed with the
/// host's clock and are never faster), and each pair's path says what the
/// description says it is. Takes about 10 s: 8-GPU matrices are 56 pairs
/// each way.
#[test]
fn matrices_come_back_as_the_described_links() {
    type Case<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);
    let cases: &[Case] = &[
        ("dgx1", &["--tests", "h2d,d2h,d2d"], &[("CUDA_VISIBLE_DEVICES", "5")]),
        ("dgx1", &["--gpus", "0,3"], &[]),
        ("dgx1", &["--gpus", "0,5"], &[]),
        ("dgx1", &[], &[]),
        ("dgx-h100", &["--tests", "h2d,d2h,d2d"], &[("CUDA_VISIBLE_DEVICES", "7")]),
        ("dgx-h100", &[], &[("CUDA_VISIBLE_DEVICES", "6,2")]),
        ("dgx-h100", &[], &[]),
    ];
    for (machine, args, env) in cases {
        let expect = Expect::of(machine);
        let args = [*args, &["--size", "4M", "--reps", "3"]].concat();
        let (rows, record) = on_stand_in(machine, &args, env);
        let what = format!("{machine} {args:?} {env:?}");
        assert!(!rows.is_empty(), "{what}");
        // CUDA numbers the visible GPUs from 0; the description, all of them.
        let visible: Option<Vec<usize>> = env
            .iter()
            .find(|(k, _)| *k == "CUDA_VISIBLE_DEVICES")
            .map(|(_, v)| v.split(',').map(|g| g.parse().unwrap()).collect());
        let machine_index = |i: usize| visible.as_ref().map_or(i, |v| v[i]);
        for row in &rows {
            let got: f64 = row["value"].parse().unwrap();
            let want = expect.value(row, &machine_index);
            if row["clock"] == "host_clock" {
                assert!(got <= want * 1.05, "{what}: faster than the model: {got} > {want}: {row:?}");
            } else {
                assert!((got - want).abs() <= 0.05 * want + 0.011, "{what}: {got}, the model says {want}: {row:?}");
            }
        }
        // The matrices: every ordered pair both ways with peer access off,
        // and on where the description gives the pair a link.
        let gpus: Vec<usize> =
            record["gpus"].as_array().unwrap().iter().map(|g| g["index"].as_u64().unwrap() as usize).collect();
        for &s in &gpus {
            for &d in gpus.iter().filter(|&&d| d != s) {
                let (ms, md) = (machine_index(s), machine_index(d));
                let count = |peer: &str| {
                    rows.iter()
                        .filter(|r| r["test"] == "p2p_uni" && r["peer_access"] == peer)
                        .filter(|r| r["src_gpu"] == s.to_string() && r["dst_gpu"] == d.to_string())
                        .count()
                };
                assert_eq!(count("off"), 1, "{what}: {s} -> {d}");
                assert_eq!(count("on"), usize::from(expect.link(ms, md).is_some()), "{what}: {s} -> {d}");
                let path = record["pairs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["src"] == s && p["dst"] == d)
                    .unwrap_or_else(|| panic!("{what}: no path {s} -> {d}"));
                let want = match expect.link(ms, md) {
                    Some(GpuLinkKind::NvLink(_)) => "NVLink?",
                    // DGX-1's GPUs without NVLink between them sit on the two
                    // sockets.
                    _ => "across sockets",
                };
                assert_eq!(path["label"], want, "{what}: {path}");
            }
        }
    }
}
