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
        assert!(took < common::under_load(Duration::from_secs(5)), "{args:?} took {took:?}");
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
        assert!(took < common::under_load(Duration::from_secs(5)), "{args:?} took {took:?}");
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
/// (the CUDA-event timings, exactly: the stand-in's event clock counts no
/// host delay, so a gate held too long on a loaded machine changes
/// nothing; pageable copies are timed with the host's clock and are never
/// faster), and each pair's path says what the description says it is.
/// Takes about 10 s: 8-GPU matrices are 56 pairs each way.
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
                assert!((got - want).abs() <= 0.001 * want + 0.011, "{what}: {got}, the model says {want}: {row:?}");
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

/// `commbench gpu-bw ARGS` on the stand-in of `machine` with `env`: its
/// exit status, stdout and run record.
/// The run record gpu-bw left in `res`.
fn run_record(res: &Path) -> std::path::PathBuf {
    std::fs::read_dir(res)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("_gpu-bw.json"))
        .expect("the run record")
}

fn run_stand_in(machine: &str, args: &[&str], env: &[(&str, &Path)]) -> (Option<i32>, String, serde_json::Value) {
    let gpu = common::standin::stand_in(machine);
    let d = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_commbench"));
    cmd.arg("gpu-bw").args(args).args(["--results-dir", "res", "--machine"]);
    cmd.arg(common::standin::description(machine)).current_dir(d.path());
    gpu.apply(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("commbench runs");
    let err = text(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    let json = run_record(&d.path().join("res"));
    let record = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (o.status.code(), text(&o.stdout), record)
}

/// NVML's stand-in answers the DGX-1's cube mesh link by link, and an
/// unknown GPU is an NVML error. In this process (nextest gives each test
/// one): the stand-in reads its machine file once per process.
#[test]
fn nvml_stand_in_counts_the_described_links() {
    let gpu = common::standin::stand_in("dgx1");
    std::env::set_var(common::standin::MACHINE_VAR, &gpu.config);
    std::env::set_var("COMMBENCH_NVML", &gpu.libraries.libnvml);
    let desc = common::standin::description("dgx1");
    let buses: Vec<String> = describe::load(&desc).unwrap().gpus.iter().map(|g| g.pci_bus_id.clone()).collect();
    let model = describe::load_gpu_model(&desc).unwrap();
    let links = commbench::gpu::nvml::links(&buses).unwrap();
    assert_eq!(links.len(), 8);
    for (i, g) in links.iter().enumerate() {
        assert_eq!(g.bus_id, buses[i]);
        for (j, other) in buses.iter().enumerate().filter(|(j, _)| *j != i) {
            let want = match model.links.iter().find(|l| (l.a, l.b) == (i.min(j), i.max(j))).map(|l| l.kind) {
                Some(GpuLinkKind::NvLink(n)) => n as usize,
                _ => 0,
            };
            let got = g.active.iter().filter(|l| &l.remote_bus_id == other).count();
            assert_eq!(got, want, "GPU {i} -> GPU {j}");
        }
        // V100: six links each, all NVLink 2.0 (nvmlNvlinkVersion_t 2),
        // every far end a GPU.
        assert_eq!(g.active.len(), 6, "GPU {i}: {g:?}");
        assert!(g.active.iter().all(|l| l.version == 2 && l.remote_is_gpu), "{g:?}");
    }
    let err = commbench::gpu::nvml::links(&["0000:99:00.0".to_string()]).unwrap_err();
    assert_eq!(err, "NVML has no GPU 0000:99:00.0 (nvmlDeviceGetHandleByPciBusId_v2 returned 6)");
}

/// On the stand-in DGX-1 (PCIe gen3 x16 links in a fixture sysfs), gpu-bw
/// groups its pairs by path with peaks from NVML and sysfs, each class
/// within a sane band of the stand-in's model (test-double numbers, not
/// measurements), and `--min-efficiency` fails below and passes above;
/// without sysfs links or NVML the peaks are unknown and cannot be judged.
/// About 5 s: four runs of the 8-GPU pair matrix.
#[test]
fn pairs_group_by_path_and_min_efficiency_judges_them() {
    let sys = common::standin::sysfs_fixture("dgx1", "8.0 GT/s PCIe", "16");
    let args = ["--tests", "h2d,d2h,p2p", "--size", "4M", "--reps", "3"];
    let env: &[(&str, &Path)] = &[("COMMBENCH_SYSFS_ROOT", sys.path())];
    let (code, out, rec) = run_stand_in("dgx1", &args, env);
    assert_eq!(code, Some(0), "{out}");
    let classes = rec["efficiency"]["classes"].as_array().unwrap();
    let by: HashMap<&str, &serde_json::Value> = classes.iter().map(|c| (c["class"].as_str().unwrap(), c)).collect();
    let mut names: Vec<&str> = by.keys().copied().collect();
    names.sort_unstable();
    assert_eq!(names, ["NVLink x1", "NVLink x2", "through the CPU"], "{out}");
    // The cube mesh: 8 pairs with two links, 8 with one, both ways; the
    // other 12 pairs have no peer access.
    let count = |c: &str| by[c]["pairs"].as_u64().unwrap();
    assert_eq!((count("NVLink x2"), count("NVLink x1"), count("through the CPU")), (16, 16, 24));
    let peak = |c: &str| by[c]["peak_gbps"].as_f64().unwrap();
    assert_eq!((peak("NVLink x2"), peak("NVLink x1")), (50.0, 25.0));
    assert!((peak("through the CPU") - 15.754).abs() < 0.001, "{}", peak("through the CPU"));
    for c in names {
        let e = by[c]["efficiency_pct"].as_f64().unwrap();
        assert!((45.0..=110.0).contains(&e), "{c}: {e}%\n{out}");
        assert!(out.contains(&format!("  {c}: ")), "{c}:\n{out}");
    }
    assert!(out.contains("  NVLink x2: 16 pairs, median "), "{out}");
    let pair = rec["pairs"].as_array().unwrap().iter().find(|p| p["src"] == 0 && p["dst"] == 3).unwrap();
    assert_eq!(pair["peak"]["class"], "NVLink x2");
    assert!(pair["peak"]["sources"][0].as_str().unwrap().contains("NVML: 2 active NVLinks to GPU 3, version 2.0"));
    assert!(out.contains("  GPU 0 H2D: "), "{out}");

    // Above the staged copies' share: they fail, each named; below, all pass.
    let strict = [&args[..], &["--min-efficiency", "90"]].concat();
    let (code, out, rec) = run_stand_in("dgx1", &strict, env);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(rec["status"], "failed");
    assert!(out.contains("\nFAIL: "), "{out}");
    let line = out.lines().find(|l| l.starts_with("  GPU 0 -> GPU 5 through the CPU: ")).expect(&out);
    assert!(line.ends_with("% of 15.75 GB/s (7.94 of 15.75 GB/s expected)"), "{line}");
    assert!(!out.contains("GPU 0 -> GPU 3 NVLink x2:"), "{out}");
    let (code, out, rec) = run_stand_in("dgx1", &[&args[..], &["--min-efficiency", "40%"]].concat(), env);
    assert_eq!((code, rec["status"].as_str()), (Some(0), Some("passed")), "{out}");
    assert!(out.contains("\nPASS: all "), "{out}");

    // No PCIe link in sysfs and no NVML: unknown, said why, and not judged.
    let empty = tempfile::tempdir().unwrap();
    let env: &[(&str, &Path)] =
        &[("COMMBENCH_SYSFS_ROOT", empty.path()), ("COMMBENCH_NVML", Path::new("/nonexistent/libnvidia-ml.so.1"))];
    let (code, out, _) = run_stand_in("dgx1", &[&args[..], &["--min-efficiency", "40"]].concat(), env);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("  NVLink?: 32 pairs, median "), "{out}");
    assert!(out.contains("peak unknown (NVML not found ("), "{out}");
    assert!(out.contains("GPU 0 -> GPU 3 NVLink?: cannot judge: the peak is unknown (NVML not found"), "{out}");
    assert!(out.contains("GPU 0 -> GPU 5 through the CPU: cannot judge: the peak is unknown (GPU 0: "), "{out}");
}

/// The stand-in DGX-H100: every pair through NVSwitch, 18 links of NVLink
/// 4.0 each (450 GB/s one way).
#[test]
fn nvswitch_pairs_take_their_links_to_the_switches() {
    let sys = common::standin::sysfs_fixture("dgx-h100", "32.0 GT/s PCIe", "16");
    let args = ["--tests", "p2p", "--gpus", "0-2", "--size", "64M", "--reps", "2"];
    let (code, out, rec) = run_stand_in("dgx-h100", &args, &[("COMMBENCH_SYSFS_ROOT", sys.path())]);
    assert_eq!(code, Some(0), "{out}");
    let classes = rec["efficiency"]["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 1, "{out}");
    assert_eq!((classes[0]["class"].as_str(), classes[0]["pairs"].as_u64()), (Some("NVSwitch x18"), Some(6)));
    assert_eq!(classes[0]["peak_gbps"].as_f64(), Some(450.0));
    let e = classes[0]["efficiency_pct"].as_f64().unwrap();
    assert!((50.0..=110.0).contains(&e), "{e}\n{out}");
}

/// A FIFO at `path`.
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path this test owns.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// COMMBENCH_NVML naming a FIFO, and a FIFO in the sysfs tree
/// COMMBENCH_SYSFS_ROOT names, each once hung gpu-bw for ever (the
/// loader's open, the read of a link's speed). Each is now refused at
/// once and said where an unknown peak is said; the run measures on.
#[test]
fn fifos_named_through_variables_are_refused_not_waited_on() {
    let gpu = common::standin::stand_in("dgx1");
    let sys = common::standin::sysfs_fixture("dgx1", "8.0 GT/s PCIe", "16");
    let machine = describe::load(&common::standin::description("dgx1")).unwrap();
    let device = sys.path().join("bus/pci/devices").join(&machine.gpus[0].pci_bus_id);
    let speed = device.join("current_link_speed");
    std::fs::remove_file(&speed).unwrap();
    mkfifo(&speed);
    let d = tempfile::tempdir().unwrap();
    let nvml = d.path().join("nvml-fifo");
    mkfifo(&nvml);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_commbench"));
    cmd.arg("gpu-bw").args(["--tests", "h2d", "--gpus", "0,1", "--size", "1M", "--reps", "2", "--results-dir", "res"]);
    cmd.current_dir(d.path());
    gpu.apply(&mut cmd);
    cmd.env("COMMBENCH_NVML", &nvml).env("COMMBENCH_SYSFS_ROOT", sys.path());
    let run = common::run_cmd(cmd, Duration::from_secs(30));
    assert!(!run.timed_out, "gpu-bw hung on a FIFO: {run:?}");
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{run:?}");
    let json = run_record(&d.path().join("res"));
    let text = std::fs::read_to_string(json).unwrap();
    let record: serde_json::Value = serde_json::from_str(&text).unwrap();
    let want = format!("NVML not found (COMMBENCH_NVML={}: not a regular file (a FIFO))", nvml.display());
    assert_eq!(record["nvml_unknown"].as_str(), Some(want.as_str()), "{record}");
    let sysfs = format!("{}: not a regular file (a FIFO)", speed.display());
    assert!(text.contains(&sysfs), "{sysfs} not in {text}");
}

/// `commbench ARGS` in `dir`; its exit status, stdout and stderr.
fn commbench_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_commbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("COMMBENCH_HISTORY")
        .output()
        .expect("commbench runs");
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// gpu-bw's results folder, as it leaves it on the stand-in DGX-1 (its
/// long CSV, the record, the matrices and heatmaps beside them), is taken
/// whole by `history add`, judged by `history check` against an earlier
/// run, and read by `compare`: every cell of every test a table named
/// `gpu-bw <test>`, on `cuda` device memory, of the record's host.
#[test]
fn results_go_to_history_and_compare() {
    let gpu = common::standin::stand_in("dgx1");
    let d = tempfile::tempdir().unwrap();
    for res in ["first", "second"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_commbench"));
        cmd.arg("gpu-bw").args(["--gpus", "0,1", "--tests", "p2p", "--size", "4M", "--reps", "3"]);
        cmd.args(["--results-dir", res, "--machine"]).arg(common::standin::description("dgx1"));
        cmd.current_dir(d.path());
        gpu.apply(&mut cmd);
        let o = cmd.output().expect("commbench runs");
        assert_eq!(o.status.code(), Some(0), "{}\n{}", text(&o.stdout), text(&o.stderr));
    }
    let matrices = std::fs::read_dir(d.path().join("first"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with("GBps.csv"))
        .count();
    assert!(matrices > 0, "gpu-bw wrote its matrices beside its results");

    let (code, _, err) = commbench_in(d.path(), &["history", "--db", "h.sqlite", "add", "first"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains(" run(s) added, 0 already there\n"), "{err}");
    let (code, out, err) = commbench_in(d.path(), &["history", "--db", "h.sqlite", "show", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert!(!runs.is_empty(), "{v}");
    let host = commbench::topo::hostname();
    for r in runs {
        assert!(r["benchmark"].as_str().unwrap().starts_with("gpu-bw p2p_"), "{r}");
        assert_eq!((r["backend"].as_str(), r["memory"].as_str()), (Some("cuda"), Some("device")), "{r}");
        assert_eq!(r["system"].as_str(), Some(host.as_str()), "{r}");
    }
    let uni = runs.iter().find(|r| r["benchmark"] == "gpu-bw p2p_uni" && r["datatype"] == "gpu0 -> gpu1 peer on");
    assert!(uni.is_some(), "{v}");

    // The stand-in's CUDA-event timings are its model, exactly: the
    // second run is within the first's band.
    let (code, out, err) = commbench_in(d.path(), &["history", "--db", "h.sqlite", "check", "second"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let (code, out, err) = commbench_in(d.path(), &["compare", "first", "second"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("gpu-bw p2p_uni"), "{out}");
}
