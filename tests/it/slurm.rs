//! The sbatch scripts in scripts/slurm/ run against a real one-node Slurm
//! (started by the test), with node and task counts overridden to fit one
//! small node: exit status, OSU tables in the job output, and a run
//! directory named with the job id holding every benchmark's files, whose
//! run records carry the Slurm job. Together they run `commbench suite`
//! under srun with Open MPI (PMIx) and MPICH (PMI-2) builds, and under
//! Open MPI's mpirun inside the allocation; and `commbench suite` itself
//! in a batch job handing the binding over from srun with `--cpu-list`,
//! its OSU tables streamed into the job output as they come.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::slurm_cluster::{self, SlurmCluster};
use common::{bin, files_with_ext, mpi_lock, repo_root, run_cmd, under_load, Mpi, SUITE_DEFAULT};

/// Small runs: the tests check plumbing, not numbers.
const SMALL: &str = "-m 1:1024 -i 10 -x 2";

fn cluster() -> Option<SlurmCluster> {
    if let Some(reason) = slurm_cluster::unavailable() {
        eprintln!("SKIPPED: no one-node Slurm here: {reason}");
        return None;
    }
    Some(SlurmCluster::start())
}

/// What one batch job gave.
struct Job {
    id: String,
    code: Option<i32>,
    output: String,
    submit_dir: PathBuf,
}

/// Submits `script` from a fresh directory with `sbatch` on one
/// node with two tasks; `env` is exported to the job.
fn sbatch(c: &SlurmCluster, script: &str, env: &[(&str, &str)], work: &Path) -> Job {
    sbatch_with_args(c, script, &[], env, work)
}

/// As `sbatch`, with arguments after the script.
fn sbatch_with_args(c: &SlurmCluster, script: &str, args: &[&str], env: &[(&str, &str)], work: &Path) -> Job {
    let mut cmd = c.command("sbatch");
    cmd.args(["--parsable", "-N", "1", "-n", "2", "--ntasks-per-node=2", "-o"])
        .arg(work.join("job-%j.out"))
        .arg(repo_root().join("scripts/slurm").join(script))
        .args(args)
        .current_dir(work);
    for (k, v) in env {
        cmd.env(k, v);
    }
    submit_and_wait(c, cmd, work)
}

/// Runs `sbatch --parsable ...` (`cmd`) and waits for its job to end. Not
/// `sbatch --wait`: that polls the job's state 2 s, then 8 s apart, so a
/// job of 3 s took 10; this asks every 100 ms.
fn submit_and_wait(c: &SlurmCluster, mut cmd: Command, work: &Path) -> Job {
    // The job's TMPDIR (sbatch exports it): one of its own that outlives
    // sbatch, which returns once the job is queued (see common::own_tmpdir).
    let tmp = work.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    cmd.env("TMPDIR", &tmp);
    let run = run_cmd(cmd, Duration::from_secs(30));
    assert_eq!(run.code, Some(0), "sbatch failed: {run:?}\n{}", c.logs());
    let id = run.stdout.lines().next().unwrap_or("").split(';').next().unwrap_or("").trim().to_string();
    assert!(id.chars().all(|ch| ch.is_ascii_digit()) && !id.is_empty(), "no job id from sbatch: {run:?}");
    let code = c.wait_for_job(&id, under_load(Duration::from_secs(180)));
    let output = std::fs::read_to_string(work.join(format!("job-{id}.out"))).unwrap_or_default();
    Job { id, code, output, submit_dir: work.to_path_buf() }
}

/// The run directories of a job, named `<UTC>_suite_<tag>_job<id>`.
fn run_dirs(job: &Job) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(job.submit_dir.join("results"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Checks a run directory: every benchmark's four files, summary.md
/// saying all passed, and the Slurm job in the run records.
fn check_run_dir(dir: &Path, job: &Job, tag: &str, benches: &[&str]) {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let re = regex::Regex::new(&format!(r"^\d{{8}}T\d{{6}}Z_suite_{tag}_job{}$", job.id)).unwrap();
    assert!(re.is_match(&name), "run directory name {name}");
    assert_eq!(files_with_ext(dir, "csv").len(), benches.len(), "{}", dir.display());
    for b in benches {
        for ext in ["txt", "csv", "json", "stderr"] {
            assert!(dir.join(format!("{b}.{ext}")).is_file(), "{b}.{ext} missing in {}", dir.display());
        }
        let rec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{b}.json"))).unwrap()).unwrap();
        assert_eq!(rec["status"], "complete", "{b}");
        assert_eq!(rec["slurm"]["job_id"], job.id.as_str(), "{b} record: {}", rec["slurm"]);
        assert_eq!(rec["slurm"]["num_nodes"], 1, "{b}");
        assert!(rec["slurm"]["step_id"].is_string(), "{b} ran as a job step (under srun): {}", rec["slurm"]);
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let head = format!("# commbench suite: {0} of {0} passed", benches.len());
    assert!(summary.starts_with(&head), "{summary}");
    assert!(summary.contains(&format!("| Slurm | job {}", job.id)), "{summary}");
}

fn assert_ok(job: &Job, c: &SlurmCluster) {
    assert_eq!(job.code, Some(0), "job {} failed:\n{}\n{}", job.id, job.output, c.logs());
}

fn bin_dir(mpi: Mpi) -> String {
    bin(mpi, "commbench").parent().unwrap().display().to_string()
}

#[test]
fn pt2pt_script_under_srun_with_pmix() {
    let _g = mpi_lock();
    let Some(c) = cluster() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = bin_dir(Mpi::OpenMpi);
    let job = sbatch(&c, "pt2pt.sbatch", &[("COMMBENCH_BIN", &dir), ("BENCH_ARGS", SMALL)], work.path());
    assert_ok(&job, &c);
    for title in
        ["# OSU MPI Latency Test v7.4", "# OSU MPI Bandwidth Test v7.4", "# OSU MPI Bi-Directional Bandwidth Test v7.4"]
    {
        assert!(job.output.contains(title), "{title} not in job output:\n{}", job.output);
    }
    assert!(job.output.contains("3 of 3 passed"), "{}", job.output);
    let dirs = run_dirs(&job);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    check_run_dir(&dirs[0], &job, "pt2pt", &["osu_latency", "osu_bw", "osu_bibw"]);
    let cmd = std::fs::read_to_string(dirs[0].join("summary.md")).unwrap();
    assert!(cmd.contains("srun --mpi=pmix -n 2 -N 1"), "{cmd}");
    assert!(cmd.contains("--bind nic"), "placement passed through: {cmd}");
    // ... and applied by the benchmark: both ranks placed by the nic policy.
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dirs[0].join("osu_latency.json")).unwrap()).unwrap();
    let ranks = rec["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    for r in ranks {
        assert_eq!(r["placement"]["policy"], "nic", "{r}");
    }
    assert!(cmd.contains("Ranks: rank 0 on "), "{cmd}");
}

#[test]
fn mbw_mr_script_under_open_mpi_mpirun() {
    let _g = mpi_lock();
    let Some(c) = cluster() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = bin_dir(Mpi::OpenMpi);
    let env = [("COMMBENCH_BIN", dir.as_str()), ("BENCH_ARGS", SMALL), ("LAUNCHER", "mpirun")];
    let job = sbatch(&c, "mbw_mr.sbatch", &env, work.path());
    assert_ok(&job, &c);
    assert!(job.output.contains("# OSU MPI Multiple Bandwidth / Message Rate Test v7.4"), "{}", job.output);
    let dirs = run_dirs(&job);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let name = dirs[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(&format!("_suite_mbw_mr_job{}", job.id)), "{name}");
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dirs[0].join("osu_mbw_mr.json")).unwrap()).unwrap();
    assert_eq!(rec["status"], "complete");
    assert_eq!(rec["slurm"]["job_id"], job.id.as_str());
    assert_eq!(rec["launcher"]["kind"], "openmpi", "started by mpirun: {}", rec["launcher"]);
    let summary = std::fs::read_to_string(dirs[0].join("summary.md")).unwrap();
    assert!(summary.contains("mpirun -np 2 --map-by ppr:2:node"), "{summary}");
}

/// With ONE_LAUNCH=1: the four collectives in one srun launch.
#[test]
fn collectives_script_full_nodes_and_skipped_1ppn() {
    let _g = mpi_lock();
    let Some(c) = cluster() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = bin_dir(Mpi::OpenMpi);
    let env = [("COMMBENCH_BIN", dir.as_str()), ("BENCH_ARGS", SMALL), ("ONE_LAUNCH", "1")];
    let job = sbatch(&c, "collectives.sbatch", &env, work.path());
    assert_ok(&job, &c);
    assert!(
        job.output.contains("one launch: 4 benchmark(s), MPI started 1 time(s) (3 start-up(s) saved)"),
        "{}",
        job.output
    );
    assert!(job.output.contains("1 rank per node: skipped (needs 2 or more nodes, this job has 1)"), "{}", job.output);
    for t in ["Barrier", "Allreduce", "Allgather", "All-to-All Personalized Exchange"] {
        assert!(job.output.contains(&format!("# OSU MPI {t}")), "{t}:\n{}", job.output);
    }
    let dirs = run_dirs(&job);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    check_run_dir(&dirs[0], &job, "coll-full", &["osu_barrier", "osu_allreduce", "osu_allgather", "osu_alltoall"]);
}

#[test]
fn suite_script_with_an_mpich_build_under_srun_pmi2() {
    let _g = mpi_lock();
    let Some(c) = cluster() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = bin_dir(Mpi::Mpich);
    // Suite options with a comma as arguments after the script: through
    // `--export=ALL,SUITE_ARGS=--add bcast,reduce` Slurm would split them.
    let env = [("COMMBENCH_BIN", dir.as_str()), ("BENCH_ARGS", SMALL)];
    let job = sbatch_with_args(&c, "suite.sbatch", &["--add", "bcast,reduce"], &env, work.path());
    assert_ok(&job, &c);
    assert!(job.output.contains("10 of 10 passed"), "{}", job.output);
    let dirs = run_dirs(&job);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let name = dirs[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(&format!("_suite_job{}", job.id)), "{name}");
    let benches: Vec<&str> = SUITE_DEFAULT.iter().copied().chain(["osu_bcast", "osu_reduce"]).collect();
    assert_eq!(files_with_ext(&dirs[0], "csv").len(), 10);
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dirs[0].join("osu_allreduce.json")).unwrap()).unwrap();
    assert!(rec["mpi"]["library_version"].as_str().unwrap_or("").contains("MPICH"), "{}", rec["mpi"]);
    assert_eq!(rec["slurm"]["job_id"], job.id.as_str());
    let summary = std::fs::read_to_string(dirs[0].join("summary.md")).unwrap();
    assert!(summary.contains("srun --mpi=pmi2 -n 2"), "{summary}");
    for b in benches {
        assert!(dirs[0].join(format!("{b}.txt")).is_file(), "{b}");
    }
}

/// `commbench suite --cpu-list 1,0` in a batch job: srun gets
/// `--cpu-bind=none` from the suite (no launcher argument needed), every
/// rank sits where the list says, and the job output shows each table
/// before the line saying its benchmark ended.
#[test]
fn suite_in_a_batch_job_hands_binding_over_from_srun() {
    let _g = mpi_lock();
    let Some(c) = cluster() else { return };
    let work = tempfile::tempdir().unwrap();
    let commbench = bin(Mpi::OpenMpi, "commbench");
    let wrap = format!(
        "{} suite --launcher srun --bench latency,allreduce --cpu-list 1,0 -m 1:64 -i 10 -x 2 --tag bind",
        commbench.display()
    );
    let mut cmd = c.command("sbatch");
    cmd.args(["--parsable", "-N", "1", "-n", "2", "--ntasks-per-node=2", "-o"])
        .arg(work.path().join("job-%j.out"))
        .arg("--wrap")
        .arg(&wrap)
        .current_dir(work.path());
    let job = submit_and_wait(&c, cmd, work.path());
    assert_ok(&job, &c);
    let dirs = run_dirs(&job);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    check_run_dir(&dirs[0], &job, "bind", &["osu_latency", "osu_allreduce"]);
    let summary = std::fs::read_to_string(dirs[0].join("summary.md")).unwrap();
    assert!(summary.contains("srun --mpi=pmix -n 2 -N 1 --cpu-bind=none "), "{summary}");
    for b in ["osu_latency", "osu_allreduce"] {
        let rec: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dirs[0].join(format!("{b}.json"))).unwrap()).unwrap();
        let mut ranks: Vec<(u64, String)> = rec["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["rank"].as_u64().unwrap(), r["cpus"].as_str().unwrap_or("").to_string()))
            .collect();
        ranks.sort();
        assert_eq!(ranks, [(0, "1".to_string()), (1, "0".to_string())], "{b}");
    }
    // Streamed: each table's last row comes before its "passed" line.
    for (title, done) in [
        ("# OSU MPI Latency Test v7.4", "[1/2] osu_latency passed"),
        ("# OSU MPI Allreduce Latency Test v7.4", "[2/2] osu_allreduce passed"),
    ] {
        let (t, d) = (job.output.find(title), job.output.find(done));
        assert!(t.is_some() && d.is_some(), "{title} / {done}:\n{}", job.output);
        let table = &job.output[t.unwrap()..];
        let row64 = table.lines().find(|l| l.starts_with("64 ")).and_then(|l| table.find(l)).map(|r| t.unwrap() + r);
        assert!(row64.is_some_and(|r| r < d.unwrap()), "{title} rows before '{done}':\n{}", job.output);
    }
}
