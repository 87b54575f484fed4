//! commbench inside ReFrame: the real `reframe` (reframe-hpc from PyPI,
//! which scripts/setup.sh installs in target/reframe-venv) runs the shipped
//! checks (contrib/reframe/commbench_checks.py) with the repository's
//! local-scheduler, mpirun configuration (contrib/reframe/config/local.py)
//! on the binaries of this build, and the tests judge from ReFrame's own
//! JSON report and exit status:
//!
//! - the checks pass, and each performance value ReFrame reports is the
//!   number in the CSV the run wrote, exactly (nothing was scraped from
//!   stdout or rounded on the way);
//! - a reference no machine can meet (a test-only subclass in
//!   tests/reframe/commbench_ci_checks.py, not in the shipped library)
//!   makes ReFrame report a performance failure and exit non-zero.
//!
//! - with `history_db` set, `commbench history check` runs in the job and
//!   its exit decides sanity; the runs whose check passed are added.
//!
//! Time: each check is one `mpirun -np 2` of a debug binary on sizes 1 to
//! 1 KiB with 20 iterations, a fraction of a second (mostly Open MPI's
//! start-up); ReFrame itself takes about 1 s to start and load its
//! configuration and the checks, and runs the checks one after another
//! (the partition's `max_jobs` is 1: two ranks fill the two cores CI has).
//! Measured here: the passing run (5 checks) 4.4 s, the failing one 1.8 s,
//! both at once 6.1 s.

use crate::common::{bin, files_with_ext, read_csv, repo_root, run_cmd, write_file, Mpi, Run};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The virtual environment scripts/setup.sh installs reframe-hpc in
/// (COMMBENCH_REFRAME_VENV moves it, as it does for setup.sh).
fn reframe_exe() -> PathBuf {
    let venv = match std::env::var_os("COMMBENCH_REFRAME_VENV") {
        Some(v) => PathBuf::from(v),
        None => repo_root().join("target/reframe-venv"),
    };
    let exe = venv.join("bin/reframe");
    assert!(
        exe.exists(),
        "{} is missing: run scripts/setup.sh, which installs reframe-hpc in {} \
         (COMMBENCH_REFRAME_VENV chooses another place)",
        exe.display(),
        venv.display()
    );
    exe
}

/// What one `reframe -r` did: its exit status and output, and its report.
struct Session {
    run: Run,
    report: Value,
    /// The report as ReFrame wrote it, for the digits of its numbers.
    report_text: String,
    _dir: tempfile::TempDir,
}

impl Session {
    /// The report's test cases by display name.
    fn cases(&self) -> BTreeMap<String, &Value> {
        let runs = self.report["runs"].as_array().expect("report runs");
        assert_eq!(runs.len(), 1, "one run (no retries)");
        runs[0]["testcases"]
            .as_array()
            .expect("testcases")
            .iter()
            .map(|c| (c["display_name"].as_str().expect("display_name").to_string(), c))
            .collect()
    }
}

/// Runs `reframe -r` on the shipped checks and the test-only ones, with
/// `select` choosing among them, in a fresh directory (stage, output, the
/// report, ReFrame's log through TMPDIR).
fn reframe(select: &[&str], settings: &[&str]) -> Session {
    let exe = reframe_exe();
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = bin(Mpi::OpenMpi, "osu_latency").parent().unwrap().to_path_buf();
    let report = dir.path().join("report.json");
    let root = repo_root();
    let mut cmd = Command::new(exe);
    cmd.current_dir(dir.path())
        .env("TMPDIR", dir.path())
        .env("COMMBENCH_BIN_DIR", &bin_dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // Open MPI's byte transfer layer straight away, without probing
        // UCX first: a faster start on one host.
        .env("OMPI_MCA_pml", "ob1")
        .arg("--nocolor")
        .arg("-C")
        .arg(root.join("contrib/reframe/config/local.py"))
        .arg("-c")
        .arg(root.join("contrib/reframe/commbench_checks.py"))
        .arg("-c")
        .arg(root.join("tests/reframe/commbench_ci_checks.py"))
        .arg("--report-file")
        .arg(&report);
    for s in select {
        cmd.args(["-n", s]);
    }
    for s in ["message_sizes=1:1024", "iterations=20", "warmup=2"].iter().chain(settings) {
        cmd.args(["-S", s]);
    }
    cmd.arg("-r");
    let run = run_cmd(cmd, Duration::from_secs(120));
    assert!(!run.timed_out, "reframe timed out:\n{}\n{}", run.stdout, run.stderr);
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("{}: {e}\nstdout:\n{}\nstderr:\n{}", report.display(), run.stdout, run.stderr));
    let report = serde_json::from_str(&text).expect("ReFrame's report is JSON");
    Session { run, report, report_text: text, _dir: dir }
}

/// The rows of the one CSV a check's run wrote in `dir`/results.
fn csv_of(dir: &Path) -> Vec<HashMap<String, String>> {
    let found = files_with_ext(&dir.join("results"), "csv");
    assert_eq!(found.len(), 1, "one CSV in {}: {found:?}", dir.display());
    let rows = read_csv(&found[0]);
    assert!(!rows.is_empty(), "{}: no rows", found[0].display());
    rows
}

/// The row of `size` (None: the largest).
fn row_at(rows: &[HashMap<String, String>], size: Option<u64>) -> &HashMap<String, String> {
    let size_of = |r: &HashMap<String, String>| r["size_bytes"].parse::<u64>().unwrap();
    let size = size.unwrap_or_else(|| rows.iter().map(size_of).max().unwrap());
    rows.iter().find(|r| size_of(r) == size).unwrap_or_else(|| panic!("no row for {size} bytes"))
}

/// The performance variables the library reports for a benchmark, each
/// with the CSV column and size it comes from and its unit.
fn expected_perf(bench: &str, rows: &[HashMap<String, String>]) -> BTreeMap<String, (String, String)> {
    let cols: Vec<(&str, &str, Option<u64>, &str)> = match bench {
        "osu_latency" => vec![("latency", "avg_lat_us", Some(8), "us")],
        "osu_bw" | "osu_bibw" => {
            vec![("bandwidth", "bw_MBps", None, "MB/s"), ("efficiency_pct", "efficiency_pct", None, "%")]
        }
        _ => vec![
            ("latency", "avg_lat_us", None, "us"),
            ("busbw", "busbw_GBps", None, "GB/s"),
            ("efficiency_pct", "efficiency_pct", None, "%"),
        ],
    };
    cols.into_iter()
        .filter_map(|(name, col, size, unit)| {
            let cell = &row_at(rows, size)[col];
            // efficiency_pct only where the path's peak is known.
            (!cell.is_empty()).then(|| (name.to_string(), (cell.clone(), unit.to_string())))
        })
        .collect()
}

/// `perfvalues` of a test case: {"local:default:NAME": [value, ref,
/// lower, upper, unit, result]} as {NAME: that array}.
fn perfvalues(case: &Value) -> BTreeMap<String, Vec<Value>> {
    case["perfvalues"]
        .as_object()
        .expect("perfvalues")
        .iter()
        .map(|(k, v)| {
            let name = k.strip_prefix("local:default:").unwrap_or_else(|| panic!("perf key {k}"));
            (name.to_string(), v.as_array().expect("perf value").clone())
        })
        .collect()
}

/// Each performance value ReFrame reports is the CSV's number, exactly,
/// with the library's unit; the result is `result`.
///
/// Exactly: the CSV's digits (Rust's shortest round-trip form) are in the
/// report (Python's, the same digits for the same double), and both parse
/// to the same number. serde_json's default parser may land one unit in
/// the last place off the true double, so the CSV's text goes through it
/// too rather than through Rust's own `parse`.
fn assert_values_from_csv(s: &Session, name: &str, case: &Value, rows: &[HashMap<String, String>], result: &str) {
    let bench = case["benchmark"].as_str().expect("benchmark parameter");
    let expected = expected_perf(bench, rows);
    let got = perfvalues(case);
    assert_eq!(
        got.keys().collect::<BTreeSet<_>>(),
        expected.keys().collect::<BTreeSet<_>>(),
        "{name}: performance variables"
    );
    for (var, (cell, unit)) in &expected {
        let v = &got[var];
        let value: Value = serde_json::from_str(cell).expect("a CSV number");
        assert_eq!(v[0], value, "{name}: {var} is not the CSV's {cell}: {v:?}");
        assert!(s.report_text.contains(cell.as_str()), "{name}: {var}: the CSV's digits {cell} are not in the report");
        assert_eq!(v[4].as_str(), Some(unit.as_str()), "{name}: {var}'s unit");
        // A variable without a reference always passes.
        let want = if v[1].as_f64() == Some(0.0) { "pass" } else { result };
        assert_eq!(v[5].as_str(), Some(want), "{name}: {var}'s result: {v:?}");
    }
}

/// Point-to-point and collective checks of the shipped library pass, the
/// values ReFrame reports are the CSV's, and a met reference per system
/// and partition (from a site's `site_references`) is compared and passes.
#[test]
fn reframe_checks_pass_with_the_csvs_numbers() {
    let s = reframe(
        &[
            "commbench_pt2pt_check%benchmark=osu_latency",
            "commbench_pt2pt_check%benchmark=osu_bw",
            "commbench_collective_check%benchmark=osu_allreduce",
            "commbench_collective_check%benchmark=osu_alltoall",
            "commbench_ci_met_references%benchmark=osu_bw",
        ],
        &[],
    );
    let cases = s.cases();
    let names: Vec<&str> = cases.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "commbench_ci_met_references %benchmark=osu_bw",
            "commbench_collective_check %benchmark=osu_allreduce",
            "commbench_collective_check %benchmark=osu_alltoall",
            "commbench_pt2pt_check %benchmark=osu_bw",
            "commbench_pt2pt_check %benchmark=osu_latency",
        ],
        "the selected checks, each once"
    );
    for (name, case) in &cases {
        assert_eq!(
            case["result"].as_str(),
            Some("pass"),
            "{name}: {} in {}\nstdout:\n{}",
            case["fail_reason"],
            case["fail_phase"],
            s.run.stdout
        );
        // A passing check's stage is moved to its output directory, with
        // the results the library keeps.
        let out = Path::new(case["outputdir"].as_str().expect("outputdir"));
        assert_values_from_csv(&s, name, case, &csv_of(out), "pass");
    }
    // The reference was there and compared: 0.001 MB/s, no upper bound.
    let met = perfvalues(cases["commbench_ci_met_references %benchmark=osu_bw"]);
    assert_eq!(met["bandwidth"][1].as_f64(), Some(1e-3), "{met:?}");
    assert_eq!(met["bandwidth"][3], Value::Null, "{met:?}");
    assert_eq!(s.run.code, Some(0), "reframe's exit status\n{}\n{}", s.run.stdout, s.run.stderr);
    assert!(s.run.stdout.contains("[  PASSED  ] Ran 5/5 test case(s)"), "{}", s.run.stdout);
}

/// A bandwidth floor of 10^12 MB/s: ReFrame reports a performance failure,
/// names the variable and the reference, and exits non-zero; the value it
/// judged is still the CSV's.
#[test]
fn reframe_fails_a_reference_the_run_misses() {
    let s = reframe(&["commbench_ci_impossible_bandwidth"], &[]);
    let cases = s.cases();
    let name = "commbench_ci_impossible_bandwidth %benchmark=osu_bw";
    assert_eq!(cases.keys().collect::<Vec<_>>(), [name]);
    let case = cases[name];
    assert_eq!(case["result"].as_str(), Some("fail"), "{case:#}");
    assert_eq!(case["fail_phase"].as_str(), Some("performance"), "{case:#}");
    let reason = case["fail_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("failed to meet reference") && reason.contains("bandwidth="), "{reason}");
    // A failed check stays in its stage directory.
    let stage = Path::new(case["stagedir"].as_str().expect("stagedir"));
    assert_values_from_csv(&s, name, case, &csv_of(stage), "fail");
    let bw = &perfvalues(case)["bandwidth"];
    assert_eq!((bw[1].as_f64(), bw[2].as_f64()), (Some(1e12), Some(-0.01)), "{bw:?}");
    assert_ne!(s.run.code, Some(0), "reframe must fail\n{}", s.run.stdout);
    assert!(s.run.code.is_some(), "reframe was killed\n{}", s.run.stderr);
    assert!(s.run.stdout.contains("[  FAILED  ] Ran 1/1 test case(s)"), "{}", s.run.stdout);
}

/// With `history_db`, the job runs `commbench history check` on the run's
/// results after the benchmark and its exit status decides sanity: a new
/// database has nothing to judge (3), which `history_allow_empty` accepts,
/// and `history_add` adds the run; the next run is judged against it (0);
/// a file that is no history database is bad input (2) and fails the
/// check in sanity, naming the status.
#[test]
fn reframe_history_check_decides_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let name = "commbench_pt2pt_check %benchmark=osu_latency";
    let select = ["commbench_pt2pt_check%benchmark=osu_latency"];
    for expected in [3, 0] {
        let s = reframe(
            &select,
            &[
                &format!("history_db={}", db.display()),
                "history_add=1",
                "history_allow_empty=1",
                // Judged against one earlier run of 20 iterations, where
                // one descheduled iteration made a 1-byte latency 11 times
                // the other run's (a run failed at 1000%): a bound no run
                // misses, since the gate is what is tested here.
                "history_tolerance=100000%",
            ],
        );
        let cases = s.cases();
        let case = cases[name];
        assert_eq!(case["result"].as_str(), Some("pass"), "{case:#}\n{}", s.run.stdout);
        assert_eq!(s.run.code, Some(0), "{}", s.run.stdout);
        let out = Path::new(case["outputdir"].as_str().expect("outputdir"));
        let job_out = std::fs::read_to_string(out.join("rfm_job.out")).unwrap();
        assert!(
            job_out.contains(&format!("commbench-history-check-exit: {expected}\n")),
            "history check should have exited {expected}:\n{job_out}"
        );
    }
    // Both runs were added after their checks passed.
    let c = rusqlite::Connection::open(&db).unwrap();
    let runs: i64 = c.query_row("SELECT count(*) FROM runs WHERE benchmark = 'osu_latency'", [], |r| r.get(0)).unwrap();
    assert_eq!(runs, 2);
    let bad = write_file(dir.path(), "not-a-db", "not a history database\n");
    let s = reframe(&select, &[&format!("history_db={}", bad.display())]);
    let cases = s.cases();
    let case = cases[name];
    assert_eq!(case["result"].as_str(), Some("fail"), "{case:#}");
    assert_eq!(case["fail_phase"].as_str(), Some("sanity"), "{case:#}");
    let reason = case["fail_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("commbench history check exited 2"), "{reason}");
    assert_ne!(s.run.code, Some(0), "{}", s.run.stdout);
}
