//! `commbench suite` outside Slurm: the default eight benchmarks under Open
//! MPI's mpirun and MPICH's mpiexec with a localhost hostfile from
//! hostfiles/, the run directory it leaves, a failing benchmark reported
//! while the others still run, placement options passed to every
//! benchmark (with the launcher's binding handed over), the OSU tables
//! streamed to stdout, the launcher following the binaries' MPI, OSU's own
//! binaries judged against ours by `commbench compare`, and bad usage.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{bin, files_with_ext, mask, mpi_lock, osu_bin_dir, read_csv, repo_root, run_cmd, Mpi, Run, SUITE_DEFAULT};

/// `compare --allowed-failures` for A/B tests of two live runs: more than
/// any of them has sizes, so speed never decides their exit status.
const ALL_FAILURES: &str = "1000000";

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

/// Suites side by side never share mpirun's session directory
/// (docs/suite-and-slurm.md): each suite gives its launcher a TMPDIR of its
/// own inside the user's, removed at the end. Here the user's TMPDIR holds
/// a plain file where Open MPI's session directory (`ompi.<host>.<uid>`)
/// would go, as if another mpirun were making or removing it: a launcher
/// that used it would fail at start-up. Both suites pass and leave nothing
/// there.
#[test]
fn suites_side_by_side_give_mpirun_a_tmpdir_of_its_own() {
    let _g = mpi_lock();
    let tmp = tempfile::tempdir().unwrap();
    let blocker = tmp.path().join(crate::harness::open_mpi_session_dir_name());
    std::fs::write(&blocker, "").unwrap();
    common::each_at_once(&[0, 1], 2, |i| {
        let work = tempfile::tempdir().unwrap();
        let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
        c.args(["suite", "--bench", "latency", "--np", "2", "-q", "--bench-args", "latency=-m 1:8 -i 10 -x 1"])
            .arg("--results-dir")
            .arg(work.path().join("res"))
            .current_dir(work.path())
            .env("TMPDIR", tmp.path());
        let run = run_cmd(c, Duration::from_secs(60));
        assert_eq!(run.code, Some(0), "suite {i}: {run:?}");
    });
    let left: Vec<PathBuf> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(left, [blocker], "what the suites left in their TMPDIR");
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
    require_mpich!();
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

/// The command lines of a `--dry-run`'s output (each benchmark's plan
/// table is indented under its command, the suite's total starts `#`).
fn commands(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|l| !l.starts_with([' ', '#'])).collect()
}

/// The suite's dry run shows each benchmark's command and its own plan
/// table for the job's ranks, then a modelled total; nothing runs.
#[test]
fn dry_run_plans_every_benchmark_and_adds_them_up() {
    let (run, dir, _w) =
        suite(Mpi::OpenMpi, &["--dry-run", "--np", "4", "--bench", "latency,alltoall", "-m", "1:1024"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(dir.is_none(), "a dry run makes no run directory");
    let out = &run.stdout;
    assert_eq!(commands(out).len(), 2, "{out}");
    assert!(out.contains("\n  # osu_latency dry run on 2 ranks: nothing is started or sent\n"), "{out}");
    assert!(out.contains("\n  # osu_alltoall dry run on 4 ranks: nothing is started or sent\n"), "{out}");
    let plan_rows = out.lines().filter(|l| l.starts_with("  MPI_CHAR ")).count();
    assert_eq!(plan_rows, 11 + 11, "1 to 1024 bytes for each: {out}");
    assert_eq!(out.lines().filter(|l| l.starts_with("  # estimated duration: ")).count(), 2, "{out}");
    assert!(out.lines().last().is_some_and(|l| l.starts_with("# suite: 2 benchmark(s), estimated ")), "{out}");
}

#[test]
fn placement_options_reach_every_benchmark_command() {
    let (run, _, _w) = suite(
        Mpi::OpenMpi,
        &["--dry-run", "--np", "4", "--ppn", "2", "--nodes", "2", "--bind", "nic", "--nic", "mlx5_2:1", "--gpu", "0,1"],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = commands(&run.stdout);
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
    assert!(commands(&run.stdout).iter().all(|l| l.starts_with("srun --mpi=pmix -n ")), "{}", run.stdout);
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

fn record(dir: &Path, bench: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{bench}.json"))).unwrap()).unwrap()
}

/// Each rank's cpu list in its run record, in rank order.
fn cpus(rec: &serde_json::Value) -> Vec<String> {
    let mut ranks: Vec<(u64, String)> = rec["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["rank"].as_u64().unwrap(), r["cpus"].as_str().unwrap_or("").to_string()))
        .collect();
    ranks.sort();
    ranks.into_iter().map(|(_, c)| c).collect()
}

/// The suite's stdout holds every benchmark's OSU output whole, in the
/// order they ran, before the status lines (digits masked: the same text).
fn assert_tables_streamed(stdout: &str, dir: &Path, benches: &[&str]) {
    let mut expected = String::new();
    for b in benches {
        expected.push_str(&std::fs::read_to_string(dir.join(format!("{b}.txt"))).unwrap());
    }
    assert!(expected.contains("# OSU MPI"), "{expected}");
    assert!(mask(stdout).starts_with(&mask(&expected)), "stdout:\n{stdout}\nexpected first:\n{expected}");
}

/// `--cpu-list 1,0` needs no launcher argument: Open MPI's mpirun gets
/// `--bind-to none` and each rank sits where the list says.
#[test]
fn cpu_list_hands_binding_over_under_open_mpi() {
    let _g = mpi_lock();
    let (run, dir, _w) = suite(
        Mpi::OpenMpi,
        &["--bench", "latency,allreduce", "--cpu-list", "1,0", "-m", "1:64", "-i", "10", "-x", "2"],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let dir = dir.expect("run directory");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("mpirun -np 2 --bind-to none "), "{md}");
    for b in ["osu_latency", "osu_allreduce"] {
        assert_eq!(cpus(&record(&dir, b)), ["1", "0"], "{b}");
    }
    assert_tables_streamed(&run.stdout, &dir, &["osu_latency", "osu_allreduce"]);
    // A binding of the user's own is left alone.
    let (run, _, _w) = suite(Mpi::OpenMpi, &["--dry-run", "--bind", "core", "--", "--bind-to", "socket"]);
    assert!(commands(&run.stdout).iter().all(|l| l.starts_with("mpirun -np 2 --bind-to socket ")), "{}", run.stdout);
}

/// `commbench` built against Open MPI runs MPICH binaries with MPICH's
/// launcher (`-bind-to none` with placement), and srun with PMI-2.
#[test]
fn an_mpich_bin_dir_gets_the_mpich_launcher() {
    require_mpich!();
    let _g = mpi_lock();
    let mpich = bin(Mpi::Mpich, "osu_latency").parent().unwrap().display().to_string();
    let (run, dir, _w) = suite(
        Mpi::OpenMpi,
        &["--bin-dir", &mpich, "--bench", "latency,barrier", "--cpu-list", "1,0", "-m", "1:64", "-i", "10", "-x", "2"],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let dir = dir.expect("run directory");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains(&format!("mpiexec.mpich -n 2 -bind-to none {mpich}/osu_latency ")), "{md}");
    assert!(md.contains("| MPI library | MPICH"), "{md}");
    assert!(run.stderr.contains("with mpiexec.mpich for MPICH"), "{}", run.stderr);
    for b in ["osu_latency", "osu_barrier"] {
        let rec = record(&dir, b);
        assert!(rec["mpi"]["library_version"].as_str().unwrap().contains("MPICH"), "{b}: {}", rec["mpi"]);
        assert_eq!(cpus(&rec), ["1", "0"], "{b}");
    }
    let (run, _, _w) = suite(Mpi::OpenMpi, &["--bin-dir", &mpich, "--dry-run", "--launcher", "srun", "--bind", "core"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(commands(&run.stdout).iter().all(|l| l.starts_with("srun --mpi=pmi2 -n ")), "{}", run.stdout);
    assert!(commands(&run.stdout).iter().all(|l| l.contains(" --cpu-bind=none ")), "{}", run.stdout);
    // Open MPI's launcher for MPICH binaries would start singletons: refused.
    let (run, dir, _w) = suite(Mpi::OpenMpi, &["--bin-dir", &mpich, "--launcher", "mpirun.openmpi"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("belongs to another MPI than the binaries"), "{}", run.stderr);
    assert!(dir.is_none());
}

/// A/B against OSU itself: the suite runs OSU's own C binaries with OSU
/// options only, keeps their output and makes our CSV of it, so that one
/// `commbench compare` judges our run directory against theirs.
#[test]
fn osu_own_binaries_then_compare() {
    let _g = mpi_lock();
    let Some(osu) = osu_bin_dir(Mpi::OpenMpi) else { return };
    let osu = osu.display().to_string();
    let work = tempfile::tempdir().unwrap();
    let res = work.path().join("res");
    let res_s = res.display().to_string();
    let common = ["--bench", "latency,bw,mbw_mr,barrier,allreduce", "-m", "1:1024", "-i", "20", "-x", "2", "-f"];
    let mut dirs = Vec::new();
    for (tag, extra) in [("osu", vec!["--bin-dir", osu.as_str(), "--bind", "core"]), ("ours", vec!["--bind", "core"])] {
        let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
        c.arg("suite").args(common).args(&extra).args(["--tag", tag, "--results-dir", &res_s]).current_dir(work.path());
        let run = run_cmd(c, Duration::from_secs(180));
        run.assert_no_panic();
        assert_eq!(run.code, Some(0), "{tag}: {run:?}");
        let dir = files_in(&res).into_iter().find(|d| d.to_string_lossy().ends_with(&format!("_suite_{tag}"))).unwrap();
        let names = ["osu_latency", "osu_bw", "osu_mbw_mr", "osu_barrier", "osu_allreduce"];
        assert_tables_streamed(&run.stdout, &dir, &names);
        if tag == "osu" {
            let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
            assert!(md.contains("(OSU's own: no run records; CSV made from their output)"), "{md}");
            assert!(md.contains("--bind core left out: OSU's own binaries do not take it"), "{md}");
            assert!(md.contains(&format!("mpirun -np 2 {osu}/osu_latency -m 1:1024 -i 20 -x 2\n")), "{md}");
            for b in names {
                let txt = std::fs::read_to_string(dir.join(format!("{b}.txt"))).unwrap();
                let rows = common::osu_rows(&txt);
                let csv = read_csv(&dir.join(format!("{b}.csv")));
                assert_eq!(csv.len(), rows.len(), "{b}: one CSV row per OSU row\n{txt}");
                assert!(csv.iter().all(|r| r["benchmark"] == b && r["np"] == "2"), "{b}: {csv:?}");
                assert!(!dir.join(format!("{b}.json")).exists());
            }
            let bw = read_csv(&dir.join("osu_bw.csv"));
            assert_eq!((bw[0]["size_bytes"].as_str(), bw[0]["window"].as_str()), ("1", "64"));
            assert_eq!((bw[0]["iterations"].as_str(), bw[0]["datatype"].as_str()), ("20", "MPI_CHAR"));
            let ar = read_csv(&dir.join("osu_allreduce.csv"));
            assert!(ar.iter().all(|r| !r["min_lat_us"].is_empty() && r["iterations"] == "20"), "{ar:?}");
        }
        dirs.push(dir);
    }
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    // Two live runs on a shared machine can differ by any factor at any
    // size (one descheduled iteration is enough), so no tolerance holds:
    // every failure is allowed and the test checks what was paired and
    // judged, not which run was faster.
    c.args(["compare"]).arg(&dirs[0]).arg(&dirs[1]).args(["--allowed-failures", ALL_FAILURES]);
    let run = run_cmd(c, Duration::from_secs(60));
    assert_eq!(run.code, Some(0), "{run:?}");
    for b in ["osu_latency MPI_CHAR: latency", "osu_bw MPI_CHAR: bandwidth", "osu_mbw_mr MPI_CHAR: message rate"] {
        assert!(run.stdout.contains(b), "{b}:\n{}", run.stdout);
    }
    assert!(run.stdout.contains("osu_allreduce") && run.stdout.contains("osu_barrier"), "{}", run.stdout);
    assert!(run.stdout.contains("PASS: "), "{}", run.stdout);
}

/// The vector collectives, A/B against OSU's own binaries: the suite
/// runs both, keeps each table whole and makes CSV of OSU's; compare
/// judges every one of them and the plots exist.
#[test]
fn vector_collectives_against_osu_own_binaries() {
    let _g = mpi_lock();
    let Some(osu) = osu_bin_dir(Mpi::OpenMpi) else { return };
    let osu = osu.display().to_string();
    let names =
        ["osu_allgatherv", "osu_alltoallv", "osu_alltoallw", "osu_reduce_scatter_block", "osu_gatherv", "osu_scatterv"];
    let list = names.map(|n| n.trim_start_matches("osu_")).join(",");
    let work = tempfile::tempdir().unwrap();
    let res = work.path().join("res");
    let res_s = res.display().to_string();
    let common = ["--bench", list.as_str(), "-m", "1:1024", "-i", "20", "-x", "2", "-f"];
    let mut dirs = Vec::new();
    for (tag, extra) in [("osu", vec!["--bin-dir", osu.as_str()]), ("ours", vec![])] {
        let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
        c.arg("suite").args(common).args(&extra).args(["--tag", tag, "--results-dir", &res_s]).current_dir(work.path());
        let run = run_cmd(c, Duration::from_secs(180));
        run.assert_no_panic();
        assert_eq!(run.code, Some(0), "{tag}: {run:?}");
        let dir = files_in(&res).into_iter().find(|d| d.to_string_lossy().ends_with(&format!("_suite_{tag}"))).unwrap();
        assert_tables_streamed(&run.stdout, &dir, &names);
        for b in names {
            let txt = std::fs::read_to_string(dir.join(format!("{b}.txt"))).unwrap();
            let csv = read_csv(&dir.join(format!("{b}.csv")));
            assert_eq!(csv.len(), common::osu_rows(&txt).len(), "{tag} {b}: one CSV row per OSU row\n{txt}");
            assert!(csv.iter().all(|r| r["benchmark"] == b && r["np"] == "2"), "{tag} {b}: {csv:?}");
            assert!(dir.join(format!("{b}.svg")).is_file(), "{tag} {b}.svg (commbench plot) missing");
        }
        dirs.push(dir);
    }
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    // Every failure allowed, as above: the pairing is under test.
    c.args(["compare"]).arg(&dirs[0]).arg(&dirs[1]).args(["--allowed-failures", ALL_FAILURES]);
    let run = run_cmd(c, Duration::from_secs(60));
    assert_eq!(run.code, Some(0), "{run:?}");
    for b in names {
        assert!(run.stdout.contains(&format!("{b} MPI_CHAR: latency in us")), "{b}:\n{}", run.stdout);
    }
    // 11 sizes (1 to 1024) of each of the six, all judged.
    assert!(run.stdout.contains("PASS: 66 reference sizes in 6 tables: "), "{}", run.stdout);
}

/// OSU's MPICH build gets MPICH's launcher.
#[test]
fn osu_own_mpich_binaries_get_the_mpich_launcher() {
    require_mpich!();
    let _g = mpi_lock();
    let Some(osu) = osu_bin_dir(Mpi::Mpich) else { return };
    let osu = osu.display().to_string();
    let (run, dir, _w) = suite(Mpi::OpenMpi, &["--bin-dir", &osu, "--bench", "latency", "-m", "1:64", "-i", "10"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let dir = dir.expect("run directory");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains(&format!("mpiexec.mpich -n 2 {osu}/osu_latency -m 1:64 -i 10\n")), "{md}");
    assert_eq!(read_csv(&dir.join("osu_latency.csv")).len(), 7, "sizes 1 to 64");
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default()
}

/// Rows reach the suite's stdout while the benchmark still runs: a stand-in
/// benchmark prints its row and goes on only once this test has read that
/// row from the suite's stdout (it waits for a file the test makes then;
/// were rows held to the end, it would give up after a minute and say
/// so). An order of events, which no load on the machine can change.
#[test]
fn rows_stream_while_the_benchmark_runs() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let _g = mpi_lock();
    let bins = tempfile::tempdir().unwrap();
    let (mark, verdict) = (bins.path().join("row-read"), bins.path().join("verdict"));
    let fake = bins.path().join("osu_barrier");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\n[ \"${{OMPI_COMM_WORLD_RANK:-0}}\" = 0 ] || exit 0\n\
             printf '# OSU MPI Barrier Latency Test v7.4\\n# Avg Latency(us)\\n             1.25\\n'\n\
             i=0; while [ ! -e '{m}' ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done\n\
             if [ -e '{m}' ]; then echo streamed > '{v}'; else echo held > '{v}'; fi\n",
            m = mark.display(),
            v = verdict.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.args(["suite", "--bench", "barrier", "--launcher", "mpirun", "--bin-dir"])
        .arg(bins.path())
        .arg("--results-dir")
        .arg(work.path().join("res"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut all = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.trim() == "1.25" {
            std::fs::write(&mark, "").unwrap();
        }
        all.push_str(&line);
        all.push('\n');
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{all}");
    assert!(mark.exists(), "no row on stdout:\n{all}");
    assert_eq!(std::fs::read_to_string(&verdict).unwrap(), "streamed\n", "{all}");
    let csv = std::fs::read_to_string(files_in(&work.path().join("res"))[0].join("osu_barrier.csv")).unwrap();
    assert!(csv.lines().nth(1).is_some_and(|l| l.starts_with("osu_barrier,mpi,,0,")), "{csv}");
}

/// A benchmark the launcher cannot start: its reason is the launcher's
/// whole first sentence, with the suite's hint.
#[test]
fn a_launcher_refusal_is_reported_in_a_whole_sentence_with_a_hint() {
    let _g = mpi_lock();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let np = (cores + 2).to_string();
    let (run, dir, _w) = suite(Mpi::OpenMpi, &["--bench", "barrier", "--np", &np, "-i", "10"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let md = std::fs::read_to_string(dir.expect("run directory").join("summary.md")).unwrap();
    let sentence = format!(
        "There are not enough slots available in the system to satisfy the {np} slots that were requested by the \
         application (hint: more ranks than slots; let Open MPI oversubscribe with `commbench suite ... -- \
         --oversubscribe`"
    );
    assert!(md.contains(&sentence), "{md}");
    assert!(run.stdout.contains(&sentence), "{}", run.stdout);
}

/// `--precision` reaches the benchmarks that can judge it; the others run
/// OSU's counts with a note. Each CSV row says what the rule did, and
/// summary.md and suite.json tally the iterations run against the fixed
/// counts they replaced.
#[test]
fn precision_passes_through_and_is_tallied() {
    let _g = mpi_lock();
    let (run, dir, _w) = suite(
        Mpi::OpenMpi,
        &["--bench", "latency,allreduce,iallreduce", "-m", "1:64", "-i", "400", "-x", "10", "--precision", "50%"],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    let dir = dir.expect("run directory");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("| benchmark arguments | `-m 1:64 -i 400 -x 10 --precision 50%` |"), "{md}");
    assert!(
        md.contains("--precision 50% left out: osu_iallreduce cannot use it (its overlap figures come from two passes"),
        "{md}"
    );
    assert!(md.contains("\n## Precision\n"), "{md}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("suite.json")).unwrap()).unwrap();
    for (i, bench) in ["osu_latency", "osu_allreduce"].iter().enumerate() {
        let b = &report["benchmarks"][i];
        assert_eq!(b["benchmark"], *bench);
        let rows = read_csv(&dir.join(format!("{bench}.csv")));
        let (mut run_total, mut fixed_total) = (0u64, 0u64);
        for r in &rows {
            // Every row stopped for a stated reason, at most at -i.
            assert_eq!(r["iterations_ceiling"], "400", "{bench}: {r:?}");
            assert!(["precision", "ceiling", "time_limit"].contains(&r["stop_reason"].as_str()), "{r:?}");
            let n: u64 = r["iterations_run"].parse().unwrap();
            assert!((1..=400).contains(&n) && r["iterations"] == r["iterations_run"], "{r:?}");
            run_total += n;
            fixed_total += 400;
        }
        let t = &b["precision"];
        assert_eq!(t["sizes"].as_u64(), Some(rows.len() as u64), "{t}");
        assert_eq!(
            (t["iterations_run"].as_u64(), t["iterations_fixed"].as_u64()),
            (Some(run_total), Some(fixed_total))
        );
        let share = format!("{:.1}%", 100.0 * run_total as f64 / fixed_total as f64);
        assert!(md.contains(&format!("| [{bench}](#{bench}) | {} |", rows.len())) && md.contains(&share), "{md}");
    }
    // The non-blocking one ran its fixed counts: no tally, empty columns.
    assert!(report["benchmarks"][2]["precision"].is_null());
    for r in read_csv(&dir.join("osu_iallreduce.csv")) {
        assert_eq!((r["iterations_ceiling"].as_str(), r["stop_reason"].as_str()), ("", ""));
    }
}

/// `commbench list` names every benchmark in the suite's order, `--default`
/// the suite's eight (what scripts/run.sh runs), `--long` what each needs;
/// anything else is one line and status 2.
#[test]
fn list_names_every_benchmark_and_the_default_eight() {
    let list = |args: &[&str]| {
        let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
        c.arg("list").args(args);
        run_cmd(c, Duration::from_secs(10))
    };
    let all = list(&[]);
    let names: Vec<&str> = commbench::bench::registry::specs().map(|s| s.name).collect();
    assert_eq!((all.code, all.stdout.lines().collect::<Vec<_>>()), (Some(0), names.clone()));
    let default = list(&["--default"]);
    assert_eq!((default.code, default.stdout.lines().collect::<Vec<_>>()), (Some(0), SUITE_DEFAULT.to_vec()));
    let long = list(&["--long", "--default"]);
    assert_eq!(long.stdout.lines().count(), SUITE_DEFAULT.len(), "{}", long.stdout);
    assert!(long.stdout.starts_with("osu_latency") && long.stdout.contains("2 ranks"), "{}", long.stdout);
    let bad = list(&["--bogus"]);
    assert_eq!(bad.code, Some(2));
    assert_eq!(bad.stderr, "commbench list: unexpected argument '--bogus' (use --long or --default)\n");
}

/// `commbench list` has every MPI program of OSU 7.4's tarball (each
/// c/mpi/**/osu_*.c with a `main`, the 78 of them, osu_get_mbw too, which
/// OSU's Makefile leaves out), and nothing OSU lacks. A few tenths of a second (one tar).
#[test]
fn list_has_every_mpi_program_of_osu_7_4() {
    let Some(tarball) = common::osu_tarball() else {
        eprintln!("SKIPPED: OSU 7.4's source tarball is not here (set OSU_TARBALL)");
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let mut untar = Command::new("tar");
    untar.arg("xzf").arg(&tarball).arg("-C").arg(src.path()).args(["--wildcards", "*/c/mpi/*"]);
    let run = run_cmd(untar, Duration::from_secs(60));
    assert_eq!(run.code, Some(0), "{run:?}");
    let mut osu = Vec::new();
    let mut dirs = vec![src.path().to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            let (path, name) = (e.path(), e.file_name().to_string_lossy().into_owned());
            if path.is_dir() {
                dirs.push(path);
            } else if let Some(prog) = name.strip_prefix("osu_").and_then(|n| n.strip_suffix(".c")) {
                let text = std::fs::read_to_string(&path).unwrap();
                if path.to_string_lossy().contains("/c/mpi/") && text.contains("int main(") {
                    osu.push(format!("osu_{prog}"));
                }
            }
        }
    }
    osu.sort();
    assert_eq!(osu.len(), 78, "{osu:?}");
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.arg("list");
    let list = run_cmd(c, Duration::from_secs(10));
    let ours: Vec<&str> = list.stdout.lines().collect();
    let missing: Vec<&str> = osu.iter().map(String::as_str).filter(|n| !ours.contains(n)).collect();
    assert!(missing.is_empty(), "OSU 7.4 programs missing from commbench list: {missing:?}");
    let extra: Vec<&&str> = ours.iter().filter(|n| !osu.iter().any(|o| o == *n)).collect();
    assert!(extra.is_empty(), "commbench list names programs OSU 7.4 does not have: {extra:?}");
}

/// The README's main job, `scripts/run.sh`, as a newcomer runs it: the
/// card's eight benchmarks (`--precision 5%`), each table on stdout, its
/// CSV and run record in the results directory, and the next commands;
/// exit 0. Under MPICH's build, which scripts/test.sh has already made
/// (so its `cargo build` has nothing to do); a few seconds.
#[test]
fn run_sh_runs_the_eight_and_says_what_next() {
    require_mpich!();
    let _g = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let mpich_target = bin(Mpi::Mpich, "osu_latency").parent().and_then(Path::parent).unwrap().to_path_buf();
    let mut c = Command::new(repo_root().join("scripts/run.sh"));
    c.env("CARGO_TARGET_DIR", &mpich_target)
        .env("MPI_PKG_CONFIG", "mpich")
        .env("MPIRUN", "mpiexec.mpich")
        .env("COMMBENCH_RESULTS_DIR", dir.path());
    let run = run_cmd(c, Duration::from_secs(600));
    assert_eq!(run.code, Some(0), "{run:?}");
    let titles: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("# OSU MPI")).collect();
    assert_eq!(titles.len(), SUITE_DEFAULT.len(), "{}", run.stdout);
    for bench in SUITE_DEFAULT {
        for ext in ["csv", "json"] {
            let files: Vec<PathBuf> = files_with_ext(dir.path(), ext)
                .into_iter()
                .filter(|p| p.to_string_lossy().ends_with(&format!("_{bench}.{ext}")))
                .collect();
            assert_eq!(files.len(), 1, "{bench}.{ext} in {}", dir.path().display());
            assert!(run.stdout.contains(&files[0].display().to_string()), "{bench}: not listed\n{}", run.stdout);
        }
    }
    let record = std::fs::read_to_string(files_with_ext(dir.path(), "json")[0].clone()).unwrap();
    assert!(record.contains("\"precision\""), "{record}");
    assert!(run.stdout.contains("\nNext:\n"), "{}", run.stdout);
    for next in ["commbench suite", "commbench compare REFERENCE ", "commbench plot ", "scripts/run.sh --all"] {
        assert!(run.stdout.contains(next), "{next}: {}", run.stdout);
    }
    run.assert_no_panic();
}

/// A dry run whose plans are refused says why on stderr, one line per
/// distinct reason (not once per benchmark), and keeps every plan on
/// stdout: a bad option refused by every binary, and a --bin-dir without
/// the binaries.
#[test]
fn a_refused_dry_run_says_why_on_stderr() {
    let (run, dir, _w) = suite(Mpi::OpenMpi, &["--dry-run", "-m", "1:bad"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(dir.is_none(), "a dry run makes no run directory");
    assert_eq!(commands(&run.stdout).len(), 8, "{}", run.stdout);
    assert_eq!(run.stdout.matches("  # refused: ").count(), 8, "{}", run.stdout);
    assert_eq!(
        run.stderr,
        "commbench suite: --dry-run: osu_latency, osu_bw, osu_bibw and 5 more refused their plan: Invalid Message \
         Size [-m 1:bad] (not a size in bytes)\n",
        "{run:?}"
    );

    let empty = tempfile::tempdir().unwrap();
    let bins = empty.path().display().to_string();
    let (run, _, _w) = suite(Mpi::OpenMpi, &["--dry-run", "--bench", "latency,bw", "--bin-dir", &bins]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(commands(&run.stdout).len(), 2, "{}", run.stdout);
    assert_eq!(
        run.stderr,
        format!("commbench suite: --dry-run: osu_latency, osu_bw: not found in {bins} (point --bin-dir at the directory holding osu_latency ...)\n"),
        "{run:?}"
    );
}

/// A hostfile line whose host is no host name (an ssh option) is refused
/// in one line before anything runs, dry run included.
#[test]
fn a_hostfile_host_that_is_not_a_host_name_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let hf = d.path().join("hosts");
    std::fs::write(&hf, "localhost slots=2\n-oProxyCommand=sh slots=2\n").unwrap();
    let (run, _, _w) = suite(Mpi::OpenMpi, &["--dry-run", "--hostfile", hf.to_str().unwrap()]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    assert!(
        run.stderr.starts_with(&format!(
            "commbench suite: cannot read hostfile '{}': line 2: '-oProxyCommand=sh' is not a host name",
            hf.display()
        )),
        "{run:?}"
    );
}

/// A dry run whose reader stops early (`| head -1`) ends its listing
/// quietly: no panic on the closed pipe.
#[test]
fn a_dry_run_into_a_closed_pipe_ends_quietly() {
    let line = format!("{} suite --dry-run | head -1", bin(Mpi::OpenMpi, "commbench").display());
    let mut c = Command::new("sh");
    c.args(["-c", &line]);
    let run = run_cmd(c, Duration::from_secs(60));
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.starts_with("mpirun -np 2 "), "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");
}
