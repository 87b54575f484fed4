//! `commbench suite` outside Slurm: the default eight benchmarks under Open
//! MPI's mpirun and MPICH's mpiexec with a localhost hostfile from
//! hostfiles/, the run directory it leaves, a failing benchmark reported
//! while the others still run, placement options passed to every
//! benchmark, and bad usage.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{bin, files_with_ext, have_mpich, mpi_lock, read_csv, repo_root, run_cmd, Mpi, Run, SUITE_DEFAULT};

/// Runs `commbench suite ARGS` (the build of `mpi`) with results in a
/// fresh directory; returns the run and its run directory (if one).
fn suite(mpi: Mpi, args: &[&str]) -> (Run, Option<PathBuf>, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    let mut c = Command::new(bin(mpi, "commbench"));
    c.arg("suite").args(args).arg("--results-dir").arg(work.path().join("res")).current_dir(work.path());
    let run = run_cmd(c, Duration::from_secs(180));
    run.assert_no_panic();
    let dirs: Vec<PathBuf> = std::fs::read_dir(work.path().join("res"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    assert!(dirs.len() <= 1, "{dirs:?}");
    (run, dirs.into_iter().next(), work)
}

fn hostfile(name: &str) -> String {
    repo_root().join("hostfiles").join(name).display().to_string()
}

/// Every benchmark's OSU output, CSV with rows, run record and stderr,
/// plus the summary and suite.json.
fn check_complete(dir: &Path, benches: &[&str]) -> String {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(regex::Regex::new(r"^\d{8}T\d{6}Z_suite$").unwrap().is_match(&name), "{name}");
    assert_eq!(files_with_ext(dir, "txt").len(), benches.len());
    assert_eq!(files_with_ext(dir, "csv").len(), benches.len());
    for b in benches {
        let txt = std::fs::read_to_string(dir.join(format!("{b}.txt"))).unwrap();
        assert!(txt.contains(" v7.4\n"), "{b}.txt:\n{txt}");
        assert!(!read_csv(&dir.join(format!("{b}.csv"))).is_empty(), "{b}.csv has rows");
        let rec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{b}.json"))).unwrap()).unwrap();
        assert_eq!(rec["status"], "complete", "{b}");
        if std::env::var_os("SLURM_JOB_ID").is_none() {
            assert!(rec["slurm"].is_null(), "{b}: no Slurm job here: {}", rec["slurm"]);
        }
        assert!(dir.join(format!("{b}.stderr")).is_file());
        assert!(dir.join(format!("{b}.svg")).is_file(), "{b}.svg (commbench plot) missing");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("suite.json")).unwrap()).unwrap();
    assert_eq!(report["schema"], "commbench-suite/1");
    assert_eq!(report["benchmarks"].as_array().unwrap().len(), benches.len());
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains(&format!("![{0} plot]({0}.svg)", benches[0])), "{md}");
    md
}

#[test]
fn eight_benchmarks_under_open_mpi_with_a_hostfile_and_placement() {
    let _g = mpi_lock();
    let hf = hostfile("localhost.openmpi");
    let (run, dir, _w) =
        suite(Mpi::OpenMpi, &["--np", "2", "--hostfile", &hf, "-m", "1:1024", "-i", "10", "-x", "2", "--bind", "core"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let dir = dir.expect("run directory");
    let md = check_complete(&dir, SUITE_DEFAULT);
    assert!(md.starts_with("# commbench suite: 8 of 8 passed\n"), "{md}");
    assert!(md.contains("| MPI library | Open MPI"), "{md}");
    assert!(md.contains(&format!("mpirun -np 2 --hostfile {hf} ")), "{md}");
    assert!(md.contains("| benchmark arguments | `-m 1:1024 -i 10 -x 2 --bind core` |"), "{md}");
    assert!(md.contains("| 8 B | "), "key sizes: {md}");
    // stdout: the OSU tables one after another, then one line per benchmark.
    for title in ["# OSU MPI Latency Test v7.4", "# OSU MPI All-to-All Personalized Exchange Latency Test v7.4"] {
        assert!(run.stdout.contains(title), "{}", run.stdout);
    }
    assert!(run.stdout.contains("8 of 8 passed; summary: "), "{}", run.stdout);
    // Not a terminal: one plain line per start and end.
    assert_eq!(run.stderr.matches("suite: [").count(), 16, "{}", run.stderr);
    // The placement option reached the benchmark itself.
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("osu_allreduce.json")).unwrap()).unwrap();
    assert_eq!(rec["command_line"].as_array().unwrap().iter().filter(|a| *a == "--bind").count(), 1);
}

#[test]
fn eight_benchmarks_under_mpich_with_a_hostfile() {
    if !have_mpich() {
        eprintln!("SKIPPED: mpiexec.mpich is not installed");
        return;
    }
    let _g = mpi_lock();
    let hf = hostfile("localhost.mpich");
    let (run, dir, _w) = suite(Mpi::Mpich, &["--hostfile", &hf, "-m", "1:1024", "-i", "10", "-x", "2", "-q"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let md = check_complete(&dir.expect("run directory"), SUITE_DEFAULT);
    assert!(md.contains("| MPI library | MPICH"), "{md}");
    assert!(md.contains(&format!("mpiexec.mpich -n 2 -f {hf} ")), "{md}");
    assert!(!run.stdout.contains("# OSU MPI"), "-q keeps the tables off stdout: {}", run.stdout);
}

#[test]
fn a_failing_benchmark_is_reported_and_the_rest_still_run() {
    let _g = mpi_lock();
    let (run, dir, _w) = suite(
        Mpi::OpenMpi,
        &["--bench", "latency,bw,barrier", "-m", "1:64", "-i", "10", "-x", "2", "--bench-args", "bw=--no-such-option"],
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let dir = dir.expect("run directory");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.starts_with("# commbench suite: 2 of 3 passed\n"), "{md}");
    assert!(md.contains("**Not passed: osu_bw**"), "{md}");
    assert!(md.contains("| [osu_bw](#osu_bw) | **FAILED** | 1 | 2 |"), "{md}");
    assert!(md.contains("Invalid option [--no-such-option]"), "{md}");
    for b in ["osu_latency", "osu_barrier"] {
        assert!(!read_csv(&dir.join(format!("{b}.csv"))).is_empty(), "{b} still ran");
    }
    assert!(run.stdout.contains("osu_bw               failed"), "{}", run.stdout);
}

#[test]
fn placement_options_reach_every_benchmark_command() {
    let (run, _, _w) = suite(
        Mpi::OpenMpi,
        &["--dry-run", "--np", "4", "--ppn", "2", "--nodes", "2", "--bind", "nic", "--nic", "mlx5_2:1", "--gpu", "0,1"],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 8, "{}", run.stdout);
    for l in &lines {
        assert!(l.contains(" --bind nic --nic mlx5_2:1 --gpu 0,1 --csv RUN_DIR/osu_"), "{l}");
    }
    // Point-to-point: 2 ranks, one per node; the rest 4 ranks, 2 per node.
    assert!(lines[0].starts_with("mpirun -np 2 --map-by ppr:1:node "), "{}", lines[0]);
    assert!(
        lines[3].starts_with("mpirun -np 4 --map-by ppr:2:node ") && lines[3].contains("osu_mbw_mr"),
        "{}",
        lines[3]
    );
    let (run, _, _w) = suite(Mpi::OpenMpi, &["--dry-run", "--launcher", "srun", "--np", "4", "--", "--exclusive"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.lines().all(|l| l.starts_with("srun --mpi=pmix -n ")), "{}", run.stdout);
    assert!(run.stdout.contains("srun --mpi=pmix -n 4 -N 1 --exclusive "), "{}", run.stdout);
}

#[test]
fn bad_usage_is_one_line_and_exit_2() {
    for args in [
        &["--bench", "latnecy"][..],
        &["--np", "1"],
        &["--launcher", "aprun"],
        &["--hostfile", "/nonexistent/hosts"],
        &["--launcher", "mpiexec.mpich"],
    ] {
        let (run, dir, _w) = suite(Mpi::OpenMpi, args);
        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("commbench suite: "), "{}", run.stderr);
        assert!(dir.is_none(), "{args:?} left a run directory");
    }
}

#[test]
fn a_missing_binary_is_a_failed_benchmark_not_a_crash() {
    let empty = tempfile::tempdir().unwrap();
    let bins = empty.path().display().to_string();
    let (run, dir, _w) = suite(Mpi::OpenMpi, &["--bench", "latency", "--bin-dir", &bins]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let md = std::fs::read_to_string(dir.expect("run directory").join("summary.md")).unwrap();
    assert!(md.contains("| **FAILED** | - | 2 |"), "{md}");
    assert!(md.contains(&format!("{bins}/osu_latency not found")), "{md}");
}
