//! `commbench suite --one-launch`: benchmarks that need the same job run in
//! one MPI launch and leave the files separate launches leave, the same
//! after masking what is measured (the eight, and a mix of point-to-point,
//! collective, non-blocking and one-sided benchmarks over two layouts); a
//! benchmark whose rank is killed mid-suite is recorded as it would be
//! alone and the rest still run; the dry run shows the start-ups saved;
//! OSU's own binaries are refused.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{bin, mask, mpi_lock, osu_bin_dir, read_csv, run_cmd, Mpi, Run, SUITE_DEFAULT};

/// Runs `commbench suite ARGS --results-dir RESULTS` in `work`; returns the
/// run and its run directory.
fn suite(work: &Path, results: &str, args: &[&str]) -> (Run, PathBuf) {
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.arg("suite").arg("--results-dir").arg(work.join(results)).args(args).current_dir(work);
    let run = run_cmd(c, Duration::from_secs(300));
    run.assert_no_panic();
    let dirs: Vec<PathBuf> =
        std::fs::read_dir(work.join(results)).unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}\n{run:?}");
    (run, dirs.into_iter().next().unwrap())
}

/// The files of a run directory, but for the suite's own (summary.md,
/// suite.json), which say how the suite ran.
fn bench_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f != "summary.md" && f != "suite.json")
        .collect()
}

/// A CSV with what was measured masked: every number and time, and the
/// verdicts drawn from the values (noise, stop reason, drift).
fn masked_csv(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default().to_string();
    let names: Vec<&str> = header.split(',').collect();
    let mut out = vec![header.clone()];
    for l in lines {
        let cells: Vec<String> = l
            .split(',')
            .enumerate()
            .map(|(i, c)| {
                let measured =
                    matches!(names.get(i), Some(&("noise" | "stop_reason" | "drift_holds" | "finished_utc")));
                if measured || c.parse::<f64>().is_ok() {
                    "#".to_string()
                } else {
                    c.to_string()
                }
            })
            .collect();
        out.push(cells.join(","));
    }
    out.join("\n")
}

/// A run record with its numbers masked, its run directory named
/// RUN_DIR, digits in its strings masked, and the launch's own session
/// names (Open MPI makes them at random per launch) blanked.
fn masked_record(path: &Path, dir: &Path) -> serde_json::Value {
    fn walk(v: &serde_json::Value, key: &str, dir: &str) -> serde_json::Value {
        use serde_json::Value;
        let digits = regex::Regex::new(r"\d+").unwrap();
        match v {
            Value::Number(_) => Value::from(0),
            Value::String(_) if ["session_dir", "tmpdir", "precondition"].iter().any(|k| key.contains(k)) => {
                Value::from("#")
            }
            Value::String(s) => Value::from(digits.replace_all(&s.replace(dir, "RUN_DIR"), "#").into_owned()),
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, key, dir)).collect()),
            Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), walk(x, k, dir))).collect()),
            other => other.clone(),
        }
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    walk(&v, "", &dir.display().to_string())
}

/// Every benchmark file of run directory `a` (one launch) against `b`
/// (separate launches): the same names; OSU tables and stderr equal once
/// measured values are masked; CSVs with the same header and rows; run
/// records with the same fields and words; a chart for each.
fn assert_same_files(a: &Path, b: &Path) {
    let (fa, fb) = (bench_files(a), bench_files(b));
    assert_eq!(fa, fb, "the files of {} and {}", a.display(), b.display());
    for f in &fa {
        let (pa, pb) = (a.join(f), b.join(f));
        match f.rsplit('.').next() {
            Some("txt" | "stderr") => {
                let read = |p: &Path| mask(&std::fs::read_to_string(p).unwrap());
                assert_eq!(read(&pa), read(&pb), "{f}");
            }
            Some("csv") => assert_eq!(masked_csv(&pa), masked_csv(&pb), "{f}"),
            Some("json") => {
                assert_eq!(masked_record(&pa, a), masked_record(&pb, b), "{f}");
            }
            Some("svg") => {
                let first = |p: &Path| std::fs::read_to_string(p).unwrap().lines().next().map(str::to_string);
                assert_eq!(first(&pa), first(&pb), "{f}");
            }
            _ => panic!("an unexpected file {f}"),
        }
    }
}

/// The run record of `bench` in run directory `dir`.
fn record(dir: &Path, bench: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{bench}.json"))).unwrap()).unwrap()
}

/// The one run directory under `res`.
fn only_dir(res: &Path) -> PathBuf {
    std::fs::read_dir(res).unwrap().next().unwrap().unwrap().path()
}

/// Both ways of running `args`: one launch, then separate launches, each
/// in its own results folder (the run directories then differ only by
/// their time). Returns both runs and directories.
fn both(work: &Path, args: &[&str]) -> ((Run, PathBuf), (Run, PathBuf)) {
    let one: Vec<&str> = std::iter::once("--one-launch").chain(args.iter().copied()).collect();
    (suite(work, "one", &one), suite(work, "separate", args))
}

/// The eight at np 2: one launch for all of them, and the files separate
/// launches leave.
#[test]
fn the_eight_in_one_launch_leave_the_files_of_eight_launches() {
    let _g = mpi_lock();
    let work = tempfile::tempdir().unwrap();
    let args = ["--np", "2", "-m", "1:1024", "-i", "20", "-x", "2", "-q"];
    let ((one, a), (sep, b)) = both(work.path(), &args);
    assert_eq!(one.code, Some(0), "{one:?}");
    assert_eq!(sep.code, Some(0), "{sep:?}");
    assert_same_files(&a, &b);
    assert_eq!(bench_files(&a).iter().filter(|f| f.ends_with(".txt")).count(), SUITE_DEFAULT.len());
    assert!(
        one.stdout.contains("one launch: 8 benchmark(s), MPI started 1 time(s) (7 start-up(s) saved)\n"),
        "{}",
        one.stdout
    );
    assert!(!sep.stdout.contains("one launch:"), "{}", sep.stdout);
    // Every benchmark starts and ends in the progress lines, as apart.
    assert_eq!(one.stderr.matches("suite: [").count(), 16, "{}", one.stderr);
    let md = std::fs::read_to_string(a.join("summary.md")).unwrap();
    assert!(md.contains("\n## Launches\n"), "{md}");
    assert!(md.contains("| 1 | osu_latency, osu_bw, osu_bibw, osu_mbw_mr, osu_barrier, osu_allreduce, osu_allgather, osu_alltoall |"), "{md}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("suite.json")).unwrap()).unwrap();
    let launches = report["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 1);
    assert!(launches[0]["command"].as_array().unwrap().iter().any(|w| w == "suite-worker"), "{}", launches[0]);
    for b in report["benchmarks"].as_array().unwrap() {
        assert_eq!(b["launch"], 0, "{b}");
        // Its command is the one that runs it alone.
        assert!(b["command"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().ends_with(b["benchmark"].as_str().unwrap())));
    }
    // Nothing left of the launch's own files.
    assert!(std::fs::read_dir(&a).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().starts_with('.')));
}

/// A mix over two layouts at np 4, in the suite's order (about 10 s: two
/// suites of eleven benchmarks, four ranks on two cores): point-to-point
/// on two ranks share a launch; mbw_mr on four, between them and
/// osu_latency_mt (which needs MPI's thread-multiple start), runs alone, as
/// does osu_latency_mt; the collectives on four share one, the one-sided
/// on two another.
#[test]
fn a_mix_over_two_layouts_shares_two_launches_with_the_same_files() {
    let _g = mpi_lock();
    let work = tempfile::tempdir().unwrap();
    let args = [
        "--np",
        "4",
        "--bench",
        "latency,bw,put_latency,get_bw,acc_latency,latency_mt,mbw_mr,allreduce,bcast,iallreduce,alltoallv",
        "-m",
        "1:256",
        "-i",
        "20",
        "-x",
        "2",
        "-q",
        "--",
        "--oversubscribe",
    ];
    let ((one, a), (sep, b)) = both(work.path(), &args);
    assert_eq!(one.code, Some(0), "{one:?}");
    assert_eq!(sep.code, Some(0), "{sep:?}");
    assert_same_files(&a, &b);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("suite.json")).unwrap()).unwrap();
    let launches: Vec<Vec<String>> = report["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["benchmarks"].as_array().unwrap().iter().map(|b| b.as_str().unwrap().to_string()).collect())
        .collect();
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        launches,
        [
            names(&["osu_latency", "osu_bw"]),
            names(&["osu_allreduce", "osu_alltoallv", "osu_bcast", "osu_iallreduce"]),
            names(&["osu_put_latency", "osu_get_bw", "osu_acc_latency"]),
        ],
        "{}",
        report["launches"]
    );
    assert!(
        one.stdout.contains("one launch: 11 benchmark(s), MPI started 5 time(s) (6 start-up(s) saved)\n"),
        "{}",
        one.stdout
    );
    for name in ["osu_mbw_mr", "osu_latency_mt"] {
        let alone = report["benchmarks"].as_array().unwrap().iter().find(|b| b["benchmark"] == name).unwrap();
        assert!(alone.get("launch").is_none(), "{alone}");
    }
}

/// Rank 1 of osu_bw is killed while it runs: osu_bw is recorded as a
/// lost rank, as alone, and the benchmarks after it run on a new launch.
#[test]
fn a_benchmark_killed_mid_suite_is_recorded_and_the_rest_run() {
    let _g = mpi_lock();
    let work = tempfile::tempdir().unwrap();
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.args(["suite", "--one-launch", "--bench", "latency,bw,barrier,allreduce,put_latency", "-m", "1:64", "-i", "20"])
        .args(["-x", "2", "-q", "--bench-args", "bw=-m 1:1 -i 100000000", "--results-dir"])
        .arg(work.path().join("res"))
        .current_dir(work.path());
    let watcher = signal_rank_1(work.path().join("res"), "osu_bw", libc::SIGKILL);
    let run = run_cmd(c, Duration::from_secs(300));
    watcher.join().unwrap();
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{run:?}");
    let dir = only_dir(&work.path().join("res"));
    let rec = record(&dir, "osu_bw");
    assert_eq!(rec["status"], "rank_failed", "{}", rec["status_detail"]);
    assert!(rec["status_detail"].as_str().unwrap().starts_with("rank 1 (pid "), "{}", rec["status_detail"]);
    let stderr = std::fs::read_to_string(dir.join("osu_bw.stderr")).unwrap();
    assert!(stderr.contains("osu_bw: rank 1 (pid "), "{stderr}");
    for b in ["osu_latency", "osu_barrier", "osu_allreduce", "osu_put_latency"] {
        let r = record(&dir, b);
        assert_eq!(r["status"], "complete", "{b}");
        assert!(!read_csv(&dir.join(format!("{b}.csv"))).is_empty(), "{b} has rows");
        // Nothing of osu_bw's end in the others' files.
        assert!(!std::fs::read_to_string(dir.join(format!("{b}.stderr"))).unwrap().contains("osu_bw"), "{b}");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("suite.json")).unwrap()).unwrap();
    let launches = report["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 2, "{launches:?}");
    assert_eq!(launches[0]["benchmarks"], serde_json::json!(["osu_latency", "osu_bw"]));
    assert_eq!(launches[1]["benchmarks"], serde_json::json!(["osu_barrier", "osu_allreduce", "osu_put_latency"]));
    assert!(run.stdout.contains("osu_bw               failed"), "{}", run.stdout);
    assert!(run.stdout.contains("4 of 5 passed"), "{}", run.stdout);
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("(2 of 5 began)"), "{md}");
}

/// Sends `sig` to rank 1 of `bench`, as its run record names it, half a
/// second after the record appears in the one run directory under `res`;
/// returns the rank's pid.
fn signal_rank_1(res: PathBuf, bench: &'static str, sig: i32) -> std::thread::JoinHandle<i32> {
    std::thread::spawn(move || {
        let start = Instant::now();
        loop {
            assert!(start.elapsed() < Duration::from_secs(120), "{bench} never started");
            let rec = std::fs::read_dir(&res)
                .ok()
                .and_then(|mut d| d.next())
                .and_then(|e| std::fs::read_to_string(e.ok()?.path().join(format!("{bench}.json"))).ok())
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
            let pid =
                rec.as_ref().and_then(|r| r["ranks"].as_array()?.iter().find(|x| x["rank"] == 1)?["pid"].as_i64());
            if let Some(pid) = pid {
                std::thread::sleep(Duration::from_millis(500));
                // SAFETY: a signal to the benchmark rank this test started.
                assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
                return pid as i32;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
}

/// Rank 1 of osu_bw stops (SIGSTOP) mid-suite: the `--timeout` watchdog
/// ends the job naming osu_bw and the rank that did not answer, osu_bw is
/// recorded `timeout`, and the rest run on a new launch. About 8 s: the
/// 3 s watchdog and its 2 s wait for an answer.
#[test]
fn a_hang_mid_suite_names_who_stalled_and_the_rest_run() {
    let _g = mpi_lock();
    let work = tempfile::tempdir().unwrap();
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.args(["suite", "--one-launch", "--timeout", "3", "--bench", "latency,bw,barrier,allreduce", "-m", "1:64"])
        .args(["-i", "20", "-x", "2", "-q", "--bench-args", "bw=-m 1:1 -i 100000000", "--results-dir"])
        .arg(work.path().join("res"))
        .current_dir(work.path());
    let stopper = signal_rank_1(work.path().join("res"), "osu_bw", libc::SIGSTOP);
    let run = run_cmd(c, Duration::from_secs(300));
    let pid = stopper.join().unwrap();
    // The stopped rank, if the launcher left it (still stopped: state T).
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    if stat.rsplit(')').next().is_some_and(|s| s.trim_start().starts_with('T')) {
        // SAFETY: a signal to the stopped rank this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{run:?}");
    let dir = only_dir(&work.path().join("res"));
    let rec = record(&dir, "osu_bw");
    assert_eq!(rec["status"], "timeout", "{}", rec["status_detail"]);
    let detail = rec["status_detail"].as_str().unwrap();
    assert!(detail.starts_with("osu_bw: no progress on any rank for 3s"), "{detail}");
    assert!(detail.contains("rank 1 on "), "{detail}");
    assert!(run.stdout.contains("osu_bw               timeout"), "{}", run.stdout);
    for b in ["osu_latency", "osu_barrier", "osu_allreduce"] {
        let r = record(&dir, b);
        assert_eq!(r["status"], "complete", "{b}");
    }
    assert!(run.stdout.contains("3 of 4 passed"), "{}", run.stdout);
}

/// The dry run names the shared launches and the start-ups saved; OSU's
/// own binaries cannot share a launch.
#[test]
fn the_dry_run_shows_the_saving_and_osu_binaries_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.args(["suite", "--one-launch", "--dry-run", "--np", "4", "-m", "1:64", "--add", "latency_mt"])
        .current_dir(work.path());
    let run = run_cmd(c, Duration::from_secs(60));
    assert_eq!(run.code, Some(0), "{run:?}");
    let shared: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("# shared launch")).collect();
    assert_eq!(
        shared,
        [
            "# shared launch 1 (np 2): osu_latency, osu_bw, osu_bibw: MPI starts once instead of 3 times",
            "# shared launch 2 (np 4): osu_barrier, osu_allreduce, osu_allgather, osu_alltoall: MPI starts once instead \
             of 4 times",
        ],
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "# suite: 9 benchmark(s) in 4 launch(es) with --one-launch (5 MPI start-up(s) saved), estimated "
        ),
        "{}",
        run.stdout
    );
    let Some(osu) = osu_bin_dir(Mpi::OpenMpi) else { return };
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.args(["suite", "--one-launch", "--bin-dir"]).arg(&osu).current_dir(work.path());
    let run = run_cmd(c, Duration::from_secs(60));
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("--one-launch needs commbench's binaries"), "{}", run.stderr);
}
