//! `commbench history` as a user runs it: runs written as commbench writes
//! them (a CSV and its run record) with chosen numbers, so that every
//! median, band and verdict below is known exactly; one real osu_bw run;
//! two adds at once.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn history(db: &Path, args: &[&str]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
    c.arg("history").args(args).arg("--db").arg(db).env_remove("COMMBENCH_HISTORY");
    let r = run_cmd(c, Duration::from_secs(60));
    r.assert_no_panic();
    r
}

const SIZES: [u64; 3] = [1, 1024, 4194304];

/// A run as commbench writes one: `<dir>/<name>.csv` (osu_bw at SIZES,
/// bandwidth `bw` at every size, 1% intervals) and its record.
fn write_run(dir: &Path, name: &str, start: &str, bw: f64, status: &str, window: u64, iterations: u64) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let mut csv = String::from("benchmark,backend,datatype,size_bytes,window,np,iterations,bw_MBps,ci95_rel_pct\n");
    for s in SIZES {
        csv += &format!("osu_bw,mpi,MPI_CHAR,{s},{window},2,{iterations},{bw},1.0\n");
    }
    let path = dir.join(format!("{name}.csv"));
    std::fs::write(&path, csv).unwrap();
    let record = serde_json::json!({
        "schema": "commbench-run-record/1", "benchmark": "osu_bw", "status": status, "start_utc": start,
        "hosts": ["n2", "n1"],
        "mpi": {"library_version": "Open MPI v4.1.4, package: Debian OpenMPI", "world_size": 2},
        "options": {"backend": "mpi", "window": window, "iterations": iterations, "warmup": 10,
                    "buffers": "single", "precision": null, "placement": {"policy": null}},
        "buffers": {"memory": "host"}
    });
    std::fs::write(path.with_extension("json"), serde_json::to_string_pretty(&record).unwrap()).unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Five steady runs (12000 ± 100 MB/s), on the 1st to the 5th.
fn steady(dir: &Path) -> Vec<PathBuf> {
    [12000.0, 12100.0, 11900.0, 12050.0, 11950.0]
        .iter()
        .enumerate()
        .map(|(i, bw)| {
            let start = format!("2026-11-0{}T10:00:00.000Z", i + 1);
            write_run(dir, &format!("2026110{}T100000Z_osu_bw", i + 1), &start, *bw, "complete", 64, 100)
        })
        .collect()
}

#[test]
fn history_add_is_idempotent_and_show_lists_the_series() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h/history.sqlite");
    let runs = steady(&d.path().join("res"));
    let r = history(&db, &["add", s(&d.path().join("res"))]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.our_stderr_lines(), [format!("commbench history: {}: 5 run(s) added, 0 already there", db.display())]);
    // The same runs again, by CSV and by record: nothing new.
    let r = history(&db, &["add", s(&runs[0]), s(&runs[1].with_extension("json"))]);
    assert_eq!(r.our_stderr_lines(), [format!("commbench history: {}: 0 run(s) added, 2 already there", db.display())]);
    let r = history(&db, &["show"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], format!("history {} (schema 3): 5 runs in 1 series", db.display()));
    let series = lines.iter().find(|l| l.contains("bandwidth")).unwrap();
    let cells: Vec<&str> = series.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "osu_bw",
            "MPI_CHAR",
            "2",
            "n1,n2",
            "mpi",
            "host",
            "Open",
            "MPI",
            "v4.1.4",
            "none",
            "bandwidth",
            "5",
            "2026-11-01T10:00:00Z",
            "2026-11-05T10:00:00Z",
            r#"{"buffers":"single","window":64}"#
        ]
    );
    let r = history(&db, &["show", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["schema_version"], 3);
    assert_eq!(v["series"].as_array().unwrap().len(), 1);
    assert_eq!(v["series"][0]["runs"], 5);
    assert_eq!(v["runs"].as_array().unwrap().len(), 5);
    assert_eq!(v["runs"][4]["label"], "20261105T100000Z_osu_bw");
    assert_eq!(v["runs"][4]["sizes"], 3);
}

#[test]
fn history_add_refuses_incomplete_and_truncated_runs_and_keeps_the_rest() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    let good = write_run(d.path(), "good", "2026-11-01T10:00:00.000Z", 100.0, "complete", 64, 100);
    let failed = write_run(d.path(), "failed", "2026-11-02T10:00:00.000Z", 100.0, "error", 64, 100);
    let cut = write_run(d.path(), "cut", "2026-11-03T10:00:00.000Z", 100.0, "complete", 64, 100);
    let text = std::fs::read_to_string(&cut).unwrap();
    std::fs::write(&cut, text.trim_end_matches('\n').trim_end_matches("1.0")).unwrap();
    let r = history(&db, &["add", s(&good), s(&failed), s(&cut)]);
    assert_eq!(r.code, Some(2), "{r:?}");
    let lines = r.our_stderr_lines();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(
        lines[0],
        format!(
            "commbench history: refused: {}: the run record says 'error': the run did not complete",
            failed.display()
        )
    );
    assert!(lines[1].starts_with(&format!("commbench history: refused: {}:", cut.display())), "{}", lines[1]);
    assert!(lines[1].ends_with("; a truncated results file is not kept"), "{}", lines[1]);
    assert_eq!(
        lines[2],
        format!("commbench history: {}: 1 run(s) added, 0 already there, 2 file(s) refused", db.display())
    );
    let r = history(&db, &["show", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 1);
    assert_eq!(v["runs"][0]["label"], "good");
    // Not a results file at all.
    let r = history(&db, &["add", s(&d.path().join("nothing.csv"))]);
    assert_eq!(r.code, Some(2));
    assert!(r.our_stderr_lines()[0].starts_with("commbench history: refused: "), "{r:?}");
}

#[test]
fn history_check_judges_against_the_baseline_and_names_the_first_departure() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    steady(&d.path().join("res"));
    assert_eq!(history(&db, &["add", s(&d.path().join("res"))]).code, Some(0));

    // A run like the others: inside the band, exit 0; more iterations do
    // not make it another series.
    let ok = write_run(&d.path().join("new"), "ok", "2026-11-06T10:00:00.000Z", 12020.0, "complete", 64, 1000);
    let r = history(&db, &["check", s(&ok)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.starts_with("osu_bw MPI_CHAR: bandwidth in MB/s (higher is better)"), "{}", r.stdout);
    let from = "reference: history baseline: band for one new run (95% for its 3 sizes together) from 5 runs, \
                2026-11-01T10:00:00Z to 2026-11-05T10:00:00Z";
    assert!(r.stdout.contains(from), "{}", r.stdout);
    assert!(r.stdout.contains("PASS: 3 reference sizes in 1 table: 3 pass"), "{}", r.stdout);
    assert!(r.stdout.contains("osu_bw 4194304 B: within its band in all 6 runs"), "{}", r.stdout);
    assert!(r.stdout.contains("osu_bw MPI_CHAR: the whole curve (bandwidth, 3 sizes) is +0.2%"), "{}", r.stdout);
    assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);

    // A slow run: 25% below the centre (the five runs' geometric mean,
    // 11999.8), beyond their band for three sizes, 11662-12348 (SciPy:
    // exp(mean ± t(1 - 0.025/3; 4) · sd · sqrt(1.2)) of their logs), and
    // its whole curve beyond like runs'.
    let slow = write_run(&d.path().join("res2"), "slow", "2026-11-07T10:00:00.000Z", 9000.0, "complete", 64, 100);
    let r = history(&db, &["check", s(&slow)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stdout.contains("25.0% lower than the reference (tolerance 10%)"), "{}", r.stdout);
    assert!(r.stdout.contains("FAIL: 3 reference sizes in 1 table: 0 pass"), "{}", r.stdout);
    assert!(r.stdout.contains("the whole curve (bandwidth, 3 sizes) is -25.0% against the baseline"), "{}", r.stdout);

    // Stored, it widens the per-size bands of the next check (a band
    // carries every run it rests on), but not the whole curve's, which is
    // robust to one slow run: the next slow run still fails. The scan
    // names the stored one as where the series left its band.
    assert_eq!(history(&db, &["add", s(&slow)]).code, Some(0));
    let slow2 = write_run(&d.path().join("new"), "slow2", "2026-11-08T10:00:00.000Z", 9000.0, "complete", 64, 100);
    let r = history(&db, &["check", s(&slow2)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    for size in SIZES {
        let line = format!(
            "osu_bw {size} B: left its band first at run 6 (2026-11-07T10:00:00Z): 9000 MB/s, band 11662-12348"
        );
        assert!(r.stdout.contains(&line), "{line}\n{}", r.stdout);
    }
    assert!(r.stdout.contains("PASS: 3 reference sizes in 1 table: 3 pass"), "{}", r.stdout);
    // Levels: the five steady runs +5.5% against the others' centres, the
    // slow one -24.9%; the new one is -21.3% against all six (SciPy).
    let curve = "osu_bw MPI_CHAR: the whole curve (bandwidth, 3 sizes) is -21.3% against the baseline; a like run is \
                 above +2.7% (6 runs), tolerance 10%: FAIL";
    assert!(r.stdout.contains(curve), "{}", r.stdout);
    assert!(r.stdout.contains("FAIL: the whole curve moved beyond like runs' band in 1 of 1 table"), "{}", r.stdout);
    // Allowed failures count sizes, not curves; a tolerance above the
    // shift passes it; --last 1 judges against the slow run alone, whose
    // own interval is all the band there is, and makes no curve test.
    assert_eq!(history(&db, &["check", s(&slow2), "--allowed-failures", "3"]).code, Some(1));
    assert_eq!(history(&db, &["check", s(&slow2), "--tolerance", "30%"]).code, Some(0));
    let r = history(&db, &["check", s(&slow2), "--last", "1"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let one = "from one run: no run-to-run spread known, its own interval only, 2026-11-07T10:00:00Z to \
               2026-11-07T10:00:00Z";
    assert!(r.stdout.contains(one), "{}", r.stdout);
    assert!(!r.stdout.contains("whole curve"), "{}", r.stdout);
    // --since after every run: no baseline, nothing to judge.
    let r = history(&db, &["check", s(&slow2), "--since", "2026-12-01"]);
    assert_eq!(r.code, Some(3), "{r:?}");
    // JSON: compare's report, the curves and the band lines.
    let r = history(&db, &["check", s(&slow2), "--format", "json", "--sizes", "1K"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["report"]["summary"]["failed"], 0);
    assert_eq!(v["curves"][0]["failed"], true);
    assert_eq!(v["curves"][0]["runs"], 6);
    assert_eq!(v["bands"].as_array().unwrap().len(), 1);
    assert!(v["bands"][0].as_str().unwrap().starts_with("osu_bw 1024 B: left its band first at run 6"));
}

/// `src` (a results CSV) with every time (`*_us`) `factor` times longer,
/// written to `dst` with a copy of its run record beside it.
fn slowed_copy(src: &Path, dst: &Path, factor: f64) {
    let mut r = csv::Reader::from_path(src).unwrap();
    let header = r.headers().unwrap().clone();
    let mut w = csv::Writer::from_path(dst).unwrap();
    w.write_record(&header).unwrap();
    for row in r.records() {
        let row = row.unwrap();
        let cells: Vec<String> = header
            .iter()
            .zip(row.iter())
            .map(|(h, c)| match c.parse::<f64>() {
                Ok(v) if h.ends_with("_us") => format!("{}", v * factor),
                _ => c.to_string(),
            })
            .collect();
        w.write_record(&cells).unwrap();
    }
    w.flush().unwrap();
    std::fs::copy(src.with_extension("json"), dst.with_extension("json")).unwrap();
}

/// Recorded real runs of this machine (tests/data/history/like-runs; how
/// and at what load in docs/measured.md): 30 like runs of `osu_latency -m
/// 1:1024 -i 2000 -x 100`, Open MPI, np 2, one after another, on a host
/// kept busy by other builds (load 2.7-3.3 on 2 cores): 24 of them have a
/// mean of 1-54 us where like sizes take 0.4-0.8 us, 63 of 330 sizes in
/// all (a rank preempted for a time slice). Replayed in order, as a site's nightly check
/// meets them: each run from the fourth is checked against the (up to 10)
/// runs before it and then stored. At least 19 in 20 like runs pass, and
/// the same runs with every time 1.3 times longer (a slower plateau: at
/// these sizes the whole curve is plateau) all fail. 87 short commbench
/// processes: about 5 s.
#[test]
fn history_check_passes_like_runs_and_fails_a_slower_plateau() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/history/like-runs");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 30);
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    let (mut judged, mut like_failed, mut slow_passed) = (0, Vec::new(), Vec::new());
    for (i, run) in runs.iter().enumerate() {
        if i >= 3 {
            judged += 1;
            let r = history(&db, &["check", s(run)]);
            assert!(matches!(r.code, Some(0 | 1)), "{r:?}");
            if r.code == Some(1) {
                like_failed.push((i, r.stdout.lines().filter(|l| l.contains("FAIL")).collect::<Vec<_>>().join("\n")));
            }
            let slow = d.path().join(format!("slow_{}", run.file_name().unwrap().to_str().unwrap()));
            slowed_copy(run, &slow, 1.3);
            let r = history(&db, &["check", s(&slow)]);
            assert!(matches!(r.code, Some(0 | 1)), "{r:?}");
            if r.code != Some(1) {
                slow_passed.push((i, r.stdout));
            }
        }
        let r = history(&db, &["add", s(run)]);
        assert_eq!(r.code, Some(0), "{r:?}");
    }
    assert_eq!(judged, 27);
    // 19 in 20: at most one of 27 (one in 27 is 3.7%).
    assert!(like_failed.len() <= 1, "{} of {judged} like runs failed: {like_failed:#?}", like_failed.len());
    assert!(slow_passed.is_empty(), "slowed runs passed: {slow_passed:#?}");
}

/// The record at `csv`'s side with every rank saying it saw the 1-minute
/// load `load` on 2 online CPUs (written here: real load in a test would
/// make it depend on timing).
fn set_load(csv: &Path, load: f64) {
    let path = csv.with_extension("json");
    let mut rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let sample = serde_json::json!({"at_s": 0.0, "load1": load, "online_cpus": 2});
    let ranks: Vec<serde_json::Value> = ["n1", "n2"]
        .iter()
        .enumerate()
        .map(|(i, h)| {
            serde_json::json!({"rank": i, "host": h, "pid": 1, "cpus": "0", "cpu_count": 1, "local_rank": 0,
                               "load": {"before": sample, "after": sample, "max_load1": load}})
        })
        .collect();
    rec["ranks"] = ranks.into();
    std::fs::write(&path, rec.to_string()).unwrap();
}

/// Beside a failing verdict, `history check` says which of the checked
/// run and the baseline runs it judged against had a busy host (the
/// history keeps the line of each run it stored); a quiet run's failure,
/// and a pass, get no such line.
#[test]
fn history_check_says_which_runs_had_a_busy_host() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    for r in steady(&d.path().join("res")) {
        set_load(&r, 1.0);
    }
    assert_eq!(history(&db, &["add", s(&d.path().join("res"))]).code, Some(0));
    // Quiet and failing: no line.
    let quiet = write_run(&d.path().join("new"), "quiet", "2026-11-07T10:00:00.000Z", 9000.0, "complete", 64, 100);
    set_load(&quiet, 1.5);
    let r = history(&db, &["check", s(&quiet)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(!r.stderr.contains("busy"), "{r:?}");
    // Busy and failing: the line, for the run checked.
    let busy = write_run(&d.path().join("new"), "busy", "2026-11-07T11:00:00.000Z", 9000.0, "complete", 64, 100);
    set_load(&busy, 8.2);
    let checked = "commbench history: the run checked 'busy': the host n1 was busy: load 8.2 on 2 cores during the run";
    let r = history(&db, &["check", s(&busy)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert_eq!(r.our_stderr_lines().iter().filter(|l| l.contains("busy")).collect::<Vec<_>>(), [&checked]);
    // Busy but passing: nothing to explain.
    let r = history(&db, &["check", s(&busy), "--tolerance", "30%"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(!r.stderr.contains("busy"), "{r:?}");
    // A baseline run stored from a busy host (run 6) is named too, while
    // it is among the runs judged against.
    let loaded = write_run(&d.path().join("res2"), "loaded", "2026-11-06T10:00:00.000Z", 12000.0, "complete", 64, 100);
    set_load(&loaded, 5.0);
    assert_eq!(history(&db, &["add", s(&loaded)]).code, Some(0));
    let base = "commbench history: baseline run 6 (2026-11-06T10:00:00Z): the host n1 was busy: load 5.0 on 2 cores \
                during the run";
    let r = history(&db, &["check", s(&busy)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert_eq!(r.our_stderr_lines().iter().filter(|l| l.contains("busy")).collect::<Vec<_>>(), [&checked, &base]);
    let r = history(&db, &["check", s(&quiet)]);
    assert_eq!(r.our_stderr_lines().iter().filter(|l| l.contains("busy")).collect::<Vec<_>>(), [&base]);
}

#[test]
fn history_check_needs_a_baseline_of_the_same_series() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    steady(&d.path().join("res"));
    assert_eq!(history(&db, &["add", s(&d.path().join("res"))]).code, Some(0));
    // Another window: another series, so nothing to judge.
    let w = write_run(&d.path().join("new"), "w32", "2026-11-06T10:00:00.000Z", 12000.0, "complete", 32, 100);
    let r = history(&db, &["check", s(&w)]);
    assert_eq!(r.code, Some(3), "{r:?}");
    let lines = r.our_stderr_lines();
    assert!(lines[0].starts_with("commbench history: osu_bw MPI_CHAR np=2 on n1,n2: no baseline:"), "{lines:?}");
    assert_eq!(
        lines.last().unwrap(),
        &"commbench history: nothing to judge: no baseline runs in the history for the checked results"
    );
    // Under another system label, the same.
    let ok = write_run(&d.path().join("new"), "ok", "2026-11-06T10:00:00.000Z", 12000.0, "complete", 64, 100);
    assert_eq!(history(&db, &["check", s(&ok), "--system", "other"]).code, Some(3));
    assert_eq!(history(&db, &["check", s(&ok)]).code, Some(0));
    // A run that did not complete fails the check, as compare's.
    let bad = write_run(&d.path().join("bad"), "bad", "2026-11-06T10:00:00.000Z", 12000.0, "timeout", 64, 100);
    let r = history(&db, &["check", s(&bad)]);
    assert_eq!(r.code, Some(1), "{r:?}");
    // Bad options: one line, exit 2.
    let r = history(&db, &["check", s(&ok), "--last", "0"]);
    assert_eq!(r.code, Some(2));
    assert_eq!(r.our_stderr_lines().len(), 1, "{r:?}");
}

#[test]
fn history_from_a_newer_version_is_refused_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    let run = write_run(d.path(), "run", "2026-11-01T10:00:00.000Z", 100.0, "complete", 64, 100);
    assert_eq!(history(&db, &["add", s(&run)]).code, Some(0));
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'", []).unwrap();
    drop(c);
    for args in [&["show"][..], &["add", s(&db)][..]] {
        let r = history(&db, args);
        assert_eq!(r.code, Some(2), "{r:?}");
        assert_eq!(
            r.our_stderr_lines(),
            [format!(
                "commbench history: {}: schema version 9 is newer than this commbench knows (3): use a newer commbench",
                db.display()
            )]
        );
    }
    // Not a database at all.
    let junk = d.path().join("junk.sqlite");
    std::fs::write(&junk, "this is not a database, it is a long enough line of text").unwrap();
    let r = history(&junk, &["show"]);
    assert_eq!(r.code, Some(2));
    assert_eq!(r.our_stderr_lines().len(), 1, "{r:?}");
    assert!(r.stderr.contains("not a database"), "{r:?}");
}

/// Two `history add` processes at once, each adding 25 runs one file per
/// transaction: every run is there and SQLite finds the file intact.
/// About 2 s (50 runs, two processes taking turns at the write lock).
#[test]
fn history_two_adds_at_once_lose_no_run() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    let mut procs = Vec::new();
    for side in ["a", "b"] {
        let dir = d.path().join(side);
        let files: Vec<PathBuf> = (0..25)
            .map(|i| {
                let start = format!("2026-11-{:02}T{:02}:00:00.000Z", 1 + i % 28, if side == "a" { 1 } else { 2 });
                write_run(&dir, &format!("{side}{i}"), &start, 1000.0 + i as f64, "complete", 64, 100)
            })
            .collect();
        let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
        c.arg("history").arg("add").arg("--db").arg(&db).args(&files);
        procs.push(c.output_with_timeout());
    }
    for p in procs {
        let out = p.join().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c.query_row("SELECT count(*) FROM runs", [], |r| r.get(0)).unwrap();
    let points: i64 = c.query_row("SELECT count(*) FROM points", [], |r| r.get(0)).unwrap();
    let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!((n, points, ok.as_str()), (50, 150, "ok"));
}

trait Spawned {
    fn output_with_timeout(self) -> std::thread::JoinHandle<std::process::Output>;
}

impl Spawned for Command {
    /// Starts the process now and collects its output on a thread.
    fn output_with_timeout(mut self) -> std::thread::JoinHandle<std::process::Output> {
        let child = self.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        std::thread::spawn(move || child.wait_with_output().unwrap())
    }
}

#[test]
fn history_export_and_plot() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    steady(&d.path().join("res"));
    assert_eq!(history(&db, &["add", s(&d.path().join("res"))]).code, Some(0));
    let r = history(&db, &["export", "--format", "csv"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "run_id,started_utc,label,system,hosts,benchmark,backend,memory,datatype,np,placement,mpi_library,options,\
         status,source,size_bytes,metric,unit,value,ci95_rel_pct"
    );
    assert_eq!(lines.len(), 1 + 5 * 3);
    assert!(lines[3].starts_with("1,2026-11-01T10:00:00.000Z,20261101T100000Z_osu_bw,\"n1,n2\",\"n1,n2\",osu_bw,mpi,host,MPI_CHAR,2,none,Open MPI v4.1.4,"), "{}", lines[3]);
    assert!(lines[3].ends_with(",4194304,bandwidth,MB/s,12000,1"), "{}", lines[3]);
    let out = d.path().join("all.json");
    let r = history(&db, &["export", "--format", "json", "--benchmark", "osu_bw", "--out", s(&out)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 5);
    assert_eq!(v["runs"][1]["points"][2]["value"], 12100.0);
    let r = history(&db, &["export", "--format", "csv", "--system", "elsewhere"]);
    assert_eq!(r.stdout.lines().count(), 1, "only the header");

    // The plot: one SVG at the path given; a link there is replaced, its
    // target untouched.
    let svg = d.path().join("bw.svg");
    let target = d.path().join("target.txt");
    std::fs::write(&target, "keep").unwrap();
    std::os::unix::fs::symlink(&target, &svg).unwrap();
    let r = history(&db, &["plot", "osu_bw", "--out", s(&svg)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    assert!(!std::fs::symlink_metadata(&svg).unwrap().file_type().is_symlink());
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).map(str::trim).collect();
    assert!(texts.contains(&"osu_bw: bandwidth over time"), "{texts:?}");
    for label in ["1 B", "1024 B", "4194304 B"] {
        assert!(texts.contains(&label), "{label}: {texts:?}");
    }
    // Five runs: bands from the fourth on, one polygon per size.
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("polygon")).count(), 3, "{text}");
    let r = history(&db, &["plot", "osu_latency", "--out", s(&svg)]);
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.our_stderr_lines(),
        ["commbench history: no runs of osu_latency in the history (with the filters given)"]
    );
}

/// A real osu_bw run on this machine: its results folder is taken with
/// the host's name, the MPI library and the record's options.
#[test]
fn history_takes_a_real_osu_bw_run() {
    let _g = mpi_lock();
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_bw", &["-m", "1:4096", "-i", "20", "-x", "2"]);
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    let dir = o.csv_path.parent().unwrap();
    let r = history(&db, &["add", s(dir)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let r = history(&db, &["show", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let host = o.record["hosts"][0].as_str().unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["system"], host);
    assert_eq!(run["benchmark"], "osu_bw");
    assert_eq!(run["memory"], "host");
    assert_eq!(run["np"], 2);
    assert_eq!(run["sizes"], 13);
    assert!(run["mpi_library"].as_str().unwrap().starts_with("Open MPI v"), "{run}");
    assert_eq!(run["started_utc"], o.record["start_utc"]);
    // Checked against a history of only itself: no baseline.
    assert_eq!(history(&db, &["check", s(&o.csv_path)]).code, Some(3));
}

/// `commbench suite --np 2 --bench BENCH -m SIZES ... --history DB` in
/// `work` (results in `work/res`), short counts, checked for panics.
fn suite_with_history(work: &Path, bench: &str, sizes: &str, db: &Path) -> Run {
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.args(["suite", "--np", "2", "--bench", bench, "-m", sizes, "-i", "10", "-x", "2", "-q"])
        .arg("--results-dir")
        .arg(work.join("res"))
        .arg("--history")
        .arg(db)
        .current_dir(work);
    let run = run_cmd(c, Duration::from_secs(180));
    run.assert_no_panic();
    run
}

/// `commbench suite --history`: the suite folder's runs are in the
/// history when the suite ends, one per benchmark, labelled by folder.
#[test]
fn history_suite_adds_its_runs_at_the_end() {
    let _g = mpi_lock();
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("h.sqlite");
    let run = suite_with_history(work.path(), "latency,bw", "1:64", &db);
    assert_eq!(run.code, Some(0), "{run:?}");
    let line = format!("commbench history: {}: 2 run(s) added, 0 already there", db.display());
    assert!(run.stderr.lines().any(|l| l == line), "{}", run.stderr);
    let r = history(&db, &["show", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    let mut benches: Vec<&str> = runs.iter().map(|r| r["benchmark"].as_str().unwrap()).collect();
    benches.sort_unstable();
    assert_eq!(benches, ["osu_bw", "osu_latency"]);
    for r in runs {
        assert_eq!(r["sizes"], 7, "{r}");
        assert!(r["label"].as_str().unwrap().ends_with(&format!("_suite/{}", r["benchmark"].as_str().unwrap())), "{r}");
    }
}

/// `commbench pairs --history`: rank 0 adds the run, one table whose one
/// size holds the median bandwidth over the directions of its CSV.
#[test]
fn history_pairs_adds_its_run_on_rank_0() {
    let _g = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let rd = dir.path().join("res");
    let args =
        ["pairs", "--size", "1MB", "-W", "8", "-i", "2", "-x", "1", "--results-dir", s(&rd), "--history", s(&db)];
    let o = Launch { cwd: Some(dir.path().to_path_buf()), timeout: Some(Duration::from_secs(60)), ..Launch::default() };
    let run = launch(Mpi::OpenMpi, 2, "commbench", &args, &o);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{run:?}");
    let added = format!("commbench history: {}: 1 run(s) added, 0 already there", db.display());
    assert_eq!(run.stderr.lines().filter(|l| *l == added).count(), 1, "only rank 0 adds:\n{}", run.stderr);
    let csv = files_with_ext(&rd, "csv").into_iter().find(|p| p.to_string_lossy().ends_with("_pairs.csv")).unwrap();
    let mut bws: Vec<f64> = read_csv(&csv).iter().map(|r| r["bw_MBps"].parse::<f64>().unwrap()).collect();
    assert_eq!(bws.len(), 2, "one pair, both directions");
    bws.sort_by(f64::total_cmp);
    let r = history(&db, &["export", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let run = &v["runs"][0];
    assert_eq!((run["benchmark"].as_str(), run["np"].as_u64()), (Some("commbench_pairs"), Some(2)));
    assert!(run["options"].as_str().unwrap().contains(r#""window":8"#), "{run}");
    assert_eq!(run["points"][0]["size_bytes"], 1048576);
    assert_eq!(run["points"][0]["value"].as_f64().unwrap(), (bws[0] + bws[1]) / 2.0);
}

/// `commbench history ARGS` run in `cwd` with the default file (no
/// `--db`, no `$COMMBENCH_HISTORY`).
fn history_here(cwd: &Path, args: &[&str]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
    c.arg("history").args(args).env_remove("COMMBENCH_HISTORY").current_dir(cwd);
    let r = run_cmd(c, Duration::from_secs(60));
    r.assert_no_panic();
    r
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn beside(db: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", db.display()))
}

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", p.display());
}

/// A character device node of the null device (1, 3) made in `dir`, so
/// that what a command does beside or to a device stays in the test's own
/// folder; without the right to make one, /dev/null itself (which such a
/// process cannot replace or write beside either). None when root cannot
/// make one (a container without CAP_MKNOD).
fn null_device(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let p = dir.join("null");
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mknod only creates a node.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) } == 0 {
        return Some(p);
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some(PathBuf::from("/dev/null"));
    }
    eprintln!("no device node can be made here: the device part is skipped");
    None
}

fn is_char_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(p).unwrap().file_type().is_char_device()
}

fn link_refused(shown: &str) -> String {
    format!(
        "commbench history: {shown}: a symbolic link: the history file is never opened through one (give the file itself)"
    )
}

/// A link planted at the history's name is refused, never followed, at
/// the default place and at `--db`, dangling too, by every subcommand; so
/// is a link or a FIFO at the names SQLite keeps beside the file
/// (`-wal`, `-shm`, `-journal`). What a link points to stays as it was.
#[test]
fn history_refuses_a_link_as_its_file_or_beside_it() {
    let d = tempfile::tempdir().unwrap();
    let run = write_run(&d.path().join("r"), "run", "2026-11-01T10:00:00.000Z", 100.0, "complete", 64, 100);
    let victim = d.path().join("victim");
    std::fs::write(&victim, "").unwrap();
    std::fs::create_dir(d.path().join("results")).unwrap();
    let planted = d.path().join("results/history.sqlite");
    std::os::unix::fs::symlink("../victim", &planted).unwrap();
    for args in [&["add", "r"][..], &["show"][..]] {
        let r = history_here(d.path(), args);
        assert_eq!(r.code, Some(2), "{r:?}");
        assert_eq!(r.our_stderr_lines(), [link_refused("results/history.sqlite")], "{args:?}");
    }
    let dangling = d.path().join("dangling.sqlite");
    std::os::unix::fs::symlink(d.path().join("nowhere.sqlite"), &dangling).unwrap();
    for db in [&planted, &dangling] {
        for args in [&["add", s(&run)][..], &["export", "--format", "csv"][..]] {
            let r = history(db, args);
            assert_eq!(r.code, Some(2), "{r:?}");
            assert_eq!(r.our_stderr_lines(), [link_refused(s(db))], "{args:?}");
        }
    }
    assert_eq!(std::fs::metadata(&victim).unwrap().len(), 0, "the link's target is untouched");
    assert!(!d.path().join("nowhere.sqlite").exists());
    assert_eq!(names_in(&d.path().join("results")), ["history.sqlite"]);

    let db = d.path().join("h.sqlite");
    assert_eq!(history(&db, &["add", s(&run)]).code, Some(0));
    for suffix in ["-wal", "-shm", "-journal"] {
        let name = beside(&db, suffix);
        for (as_link, what) in [(true, "a symbolic link"), (false, "a FIFO")] {
            if as_link {
                std::os::unix::fs::symlink(&victim, &name).unwrap();
            } else {
                mkfifo(&name);
            }
            for args in [&["add", s(&run)][..], &["show"][..]] {
                let r = history(&db, args);
                assert_eq!(r.code, Some(2), "{r:?}");
                assert_eq!(
                    r.our_stderr_lines(),
                    [format!(
                        "commbench history: {}: {what}: SQLite's files beside the history must be its own regular \
                         files (remove it)",
                        name.display()
                    )],
                    "{args:?}"
                );
            }
            std::fs::remove_file(&name).unwrap();
        }
    }
    assert_eq!(std::fs::metadata(&victim).unwrap().len(), 0, "the link's target is untouched");
    assert_eq!(history(&db, &["show"]).code, Some(0), "usable again once the names are clear");
}

/// `--db` a device: one line before SQLite touches it, nothing made
/// beside it, the node still the node.
#[test]
fn history_refuses_a_device_as_its_file() {
    let d = tempfile::tempdir().unwrap();
    let Some(dev) = null_device(d.path()) else { return };
    let run = write_run(&d.path().join("r"), "run", "2026-11-01T10:00:00.000Z", 100.0, "complete", 64, 100);
    for args in [&["add", s(&run)][..], &["show"][..], &["export", "--format", "json"][..]] {
        let r = history(&dev, args);
        assert_eq!(r.code, Some(2), "{r:?}");
        assert_eq!(
            r.our_stderr_lines(),
            [format!(
                "commbench history: {}: a character device, not a regular file: the history is a SQLite database file",
                dev.display()
            )],
            "{args:?}"
        );
    }
    for suffix in ["-journal", "-wal", "-shm"] {
        assert!(!beside(&dev, suffix).exists(), "{suffix}");
    }
    assert!(is_char_device(&dev));
}

/// show, check, export and plot only read: a missing file is one line,
/// exit 2, and nothing is created (no folder, no file); on a history that
/// exists they leave its folder as it was.
#[test]
fn history_reading_commands_create_nothing() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("a/missing/path.sqlite");
    let ok = write_run(&d.path().join("new"), "ok", "2026-11-06T10:00:00.000Z", 12020.0, "complete", 64, 100);
    let svg = d.path().join("x.svg");
    let reading: [&[&str]; 4] =
        [&["show"], &["check", s(&ok)], &["export", "--format", "csv"], &["plot", "osu_bw", "--out", s(&svg)]];
    let no_file = format!(
        "commbench history: {}: no such file: nothing is stored there yet (`commbench history add` creates it)",
        missing.display()
    );
    for args in reading {
        let r = history(&missing, args);
        if args[0] == "check" {
            // Before the first add there is no baseline: check's own "no
            // baseline" status (3), which a CI gate can accept on a first
            // run (contrib/reframe's history_allow_empty), not bad input.
            assert_eq!(r.code, Some(3), "{r:?}");
            let lines = r.our_stderr_lines();
            assert_eq!(lines.first(), Some(&no_file.as_str()), "{r:?}");
            assert_eq!(
                lines.last().copied(),
                Some("commbench history: nothing to judge: no baseline runs in the history for the checked results"),
                "{r:?}"
            );
        } else {
            assert_eq!(r.code, Some(2), "{r:?}");
            assert_eq!(r.our_stderr_lines(), [no_file.as_str()], "{args:?}");
        }
    }
    assert!(!d.path().join("a").exists());
    assert!(!svg.exists());
    // An empty file is no history yet either, and stays empty.
    let empty = d.path().join("empty.sqlite");
    std::fs::write(&empty, "").unwrap();
    let r = history(&empty, &["show"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert_eq!(
        r.our_stderr_lines(),
        [format!(
            "commbench history: {}: holds no history yet (`commbench history add` stores runs in it)",
            empty.display()
        )]
    );
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);

    let db = d.path().join("h/history.sqlite");
    steady(&d.path().join("res"));
    assert_eq!(history(&db, &["add", s(&d.path().join("res"))]).code, Some(0));
    let before = names_in(db.parent().unwrap());
    assert_eq!(before, ["history.sqlite"]);
    for args in &reading[..3] {
        let r = history(&db, args);
        assert_eq!(r.code, Some(0), "{r:?}");
        assert_eq!(names_in(db.parent().unwrap()), before, "{args:?}");
    }
}

/// `--out` a device or a descriptor is written as what it is, never
/// replaced: a character device is written into, `/dev/stdout` and a link
/// to `/proc/self/fd/1` put the text on standard output (the link stays a
/// link), a FIFO gets the text when something reads it and is refused at
/// once when nothing does.
#[test]
fn history_out_writes_devices_and_descriptors_as_they_are() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    steady(&d.path().join("res"));
    assert_eq!(history(&db, &["add", s(&d.path().join("res"))]).code, Some(0));
    if let Some(dev) = null_device(d.path()) {
        for args in [&["export", "--format", "csv", "--out", s(&dev)][..], &["plot", "osu_bw", "--out", s(&dev)][..]] {
            let r = history(&db, args);
            assert_eq!(r.code, Some(0), "{r:?}");
            assert_eq!(r.stdout, "", "{args:?}");
            assert!(is_char_device(&dev), "{args:?}: the device node was replaced");
        }
    }
    let link = d.path().join("out.link");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    for out in ["/dev/stdout", s(&link)] {
        let r = history(&db, &["export", "--format", "csv", "--out", out]);
        assert_eq!(r.code, Some(0), "{r:?}");
        assert!(r.stdout.starts_with("run_id,started_utc,"), "{out}: {r:?}");
        assert_eq!(r.stdout.lines().count(), 1 + 5 * 3, "{out}");
        let r = history(&db, &["plot", "osu_bw", "--out", out]);
        assert_eq!(r.code, Some(0), "{r:?}");
        assert!(roxmltree::Document::parse(&r.stdout).is_ok(), "{out}: not an SVG alone: {}", r.stdout);
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "{out}");
    }
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/proc/self/fd/1"));

    let fifo = d.path().join("out.fifo");
    mkfifo(&fifo);
    let r = history(&db, &["export", "--format", "json", "--out", s(&fifo)]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert_eq!(
        r.our_stderr_lines(),
        [format!("commbench history: {}: a FIFO that no process reads: nothing written", fifo.display())]
    );
    // Held open here for reading (and writing, so the open does not wait
    // for a writer): the JSON goes into the pipe.
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut reader =
        std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
    let r = history(&db, &["export", "--format", "json", "--out", s(&fifo)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let mut got = vec![0u8; 1 << 16];
    let n = reader.read(&mut got).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&got[..n]).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 5);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

/// A CSV's benchmark name holding terminal escapes reaches the terminal
/// escaped through show and check, on stdout and stderr.
#[test]
fn history_show_and_check_escape_names_from_results() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    let evil = "osu_bw\u{1b}]0;owned\u{7}\u{1b}[2J";
    let dir = d.path().join("res");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, bw) in [100.0, 101.0, 99.0, 100.5, 60.0].iter().enumerate() {
        let mut csv = String::from("benchmark,backend,datatype,size_bytes,np,bw_MBps,ci95_rel_pct\n");
        for size in SIZES {
            csv += &format!("{evil},mpi,MPI_CHAR,{size},2,{bw},1.0\n");
        }
        std::fs::write(dir.join(format!("2026110{}T100000Z_evil.csv", i + 1)), csv).unwrap();
    }
    let last = dir.join("20261105T100000Z_evil.csv");
    let moved = d.path().join("20261105T100000Z_evil.csv");
    std::fs::rename(&last, &moved).unwrap();
    assert_eq!(history(&db, &["add", s(&dir)]).code, Some(0));
    let runs: [&[&str]; 3] = [&["show"], &["check", s(&moved)], &["check", s(&moved), "--format", "md"]];
    for args in runs {
        let r = history(&db, args);
        assert!(r.code == Some(0) || r.code == Some(1), "{r:?}");
        assert!(!r.stdout.contains('\u{1b}') && !r.stdout.contains('\u{7}'), "{args:?}: {:?}", r.stdout);
        assert!(!r.stderr.contains('\u{1b}') && !r.stderr.contains('\u{7}'), "{args:?}: {:?}", r.stderr);
        assert!(r.stdout.contains("osu_bw\\u{1b}]0;owned\\u{7}\\u{1b}[2J"), "{args:?}: {}", r.stdout);
    }
    let r = history(&db, &["check", s(&moved)]);
    assert!(
        r.stdout.contains("osu_bw\\u{1b}]0;owned\\u{7}\\u{1b}[2J 1 B: left its band first at run "),
        "{}",
        r.stdout
    );
}

/// Fields longer than a format width can hold (the system of an
/// 8,000-host job, 100,000 characters of options) are shown whole, without a
/// panic; only the padding stops at a column's cap.
#[test]
fn history_show_takes_fields_of_any_length() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    steady(&d.path().join("res"));
    assert_eq!(history(&db, &["add", s(&d.path().join("res"))]).code, Some(0));
    // The system of an 8,000-host job (its hosts' names joined), and a
    // long option value, as stored.
    let system = (0..8000).map(|i| format!("node{i:04}")).collect::<Vec<_>>().join(",");
    assert!(system.len() > 65_535);
    let options = format!("{{\"x\":\"{}\"}}", "o".repeat(100_000));
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute("UPDATE runs SET system = ?1, options = ?2", [&system, &options]).unwrap();
    drop(c);
    let r = history(&db, &["show"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.lines().any(|l| l.contains(&system) && l.ends_with(&options)), "the whole fields are shown");
    for head in r.stdout.lines().filter(|l| l.starts_with("  benchmark") || l.starts_with("  id")) {
        assert!(head.len() < 400, "padding stops at a cap: {} characters", head.len());
    }
}

/// A file that says schema version 0 (or none) but holds tables is not a
/// history to extend: one line saying so, the file unchanged.
#[test]
fn history_with_tables_but_no_schema_version_is_one_line() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    steady(&d.path().join("res"));
    assert_eq!(history(&db, &["add", s(&d.path().join("res"))]).code, Some(0));
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'", []).unwrap();
    drop(c);
    let zero = format!(
        "commbench history: {}: schema version 0, but it holds tables (meta, points, runs): not a history this \
         commbench can use",
        db.display()
    );
    for args in [&["show"][..], &["add", s(&d.path().join("res"))][..]] {
        let r = history(&db, args);
        assert_eq!(r.code, Some(2), "{r:?}");
        assert_eq!(r.our_stderr_lines(), [zero.as_str()], "{args:?}");
    }
    // Another program's database: not taken over.
    let other = d.path().join("other.sqlite");
    let c = rusqlite::Connection::open(&other).unwrap();
    c.execute_batch("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)").unwrap();
    drop(c);
    let r = history(&other, &["add", s(&d.path().join("res"))]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert_eq!(
        r.our_stderr_lines(),
        [format!(
            "commbench history: {}: no schema version, but it holds tables (moz_places): not a history this \
             commbench can use",
            other.display()
        )]
    );
    let c = rusqlite::Connection::open(&other).unwrap();
    let tables: i64 = c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0)).unwrap();
    assert_eq!(tables, 1);
}

/// `--since` takes every real calendar date (leap days, the far future,
/// before 1970) and refuses, in one line with the usage status, a date
/// the calendar does not have.
#[test]
fn history_since_takes_every_calendar_date_and_no_other() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.sqlite");
    steady(&d.path().join("res"));
    assert_eq!(history(&db, &["add", s(&d.path().join("res"))]).code, Some(0));
    let ok = write_run(&d.path().join("new"), "ok", "2026-11-06T10:00:00.000Z", 12020.0, "complete", 64, 100);
    for bad in ["2026-02-30", "2025-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-02-30T00:00:00Z", "26-1-1"]
    {
        let r = history(&db, &["check", s(&ok), "--since", bad]);
        assert_eq!(r.code, Some(2), "{bad}: {r:?}");
        let lines = r.our_stderr_lines();
        assert_eq!(lines.len(), 1, "{bad}: {lines:?}");
        assert!(lines[0].contains(&format!("'{bad}' is not a date")), "{bad}: {lines:?}");
    }
    for (good, code) in [
        ("2024-02-29", 0),
        ("1969-07-20", 0),
        ("2026-11-03", 0),
        ("2026-11-03T10:00:00Z", 0),
        ("9999-12-31", 3),
        ("9999-12-31T23:59:59Z", 3),
    ] {
        let r = history(&db, &["check", s(&ok), "--since", good]);
        assert_eq!(r.code, Some(code), "{good}: {r:?}");
    }
    let r = history(&db, &["check", s(&ok), "--since", "2026-11-04"]);
    assert!(r.stdout.contains("from 2 runs, 2026-11-04T10:00:00Z to 2026-11-05T10:00:00Z"), "{}", r.stdout);
}

/// `commbench suite --history` with a link planted at the file: the
/// suite's runs are kept in its folder, the history says its one line and
/// the link's target is untouched (`pairs --history` goes through the
/// same `history::add`). About 5 s: one short osu_latency run.
#[test]
fn history_suite_refuses_a_linked_history_file() {
    let _g = mpi_lock();
    let work = tempfile::tempdir().unwrap();
    let victim = work.path().join("victim");
    std::fs::write(&victim, "").unwrap();
    let db = work.path().join("h.sqlite");
    std::os::unix::fs::symlink(&victim, &db).unwrap();
    let run = suite_with_history(work.path(), "latency", "1:8", &db);
    assert_eq!(run.code, Some(0), "the suite's status stays its own: {run:?}");
    assert_eq!(run.stderr.lines().filter(|l| *l == link_refused(s(&db))).count(), 1, "{}", run.stderr);
    assert_eq!(std::fs::metadata(&victim).unwrap().len(), 0);
    assert!(std::fs::symlink_metadata(&db).unwrap().file_type().is_symlink());
}
