//! Helpers for the integration tests: launching the real binaries under
//! Open MPI's mpirun and MPICH's mpiexec, with a hard time limit, masking
//! measured numbers, and reading the result files.
#![allow(dead_code)]

pub mod golden;
pub mod jobs;
pub mod netns;
pub mod slurm_cluster;
pub mod standin;

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// The MPI library a binary was built against, with its launcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mpi {
    OpenMpi,
    Mpich,
}

/// The eight benchmarks `commbench suite` runs by default, in its order.
pub const SUITE_DEFAULT: &[&str] = commbench::bench::registry::DEFAULT_SET;

/// MPI jobs share two cores: one at a time.
pub fn mpi_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Directory of the binaries cargo built for this test run (Open MPI).
fn cargo_bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>
    exe.parent().and_then(Path::parent).expect("target dir").to_path_buf()
}

/// Binaries built against MPICH in their own target directory (rsmpi's
/// build does not notice a change of MPI). Built on first use unless
/// COMMBENCH_MPICH_BIN_DIR points at them.
fn mpich_bin_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(d) = std::env::var_os("COMMBENCH_MPICH_BIN_DIR") {
            return PathBuf::from(d);
        }
        let target = repo_root().join("target/mpich");
        let status = Command::new(env!("CARGO"))
            .args(["build", "--release", "--bins"])
            .current_dir(repo_root())
            .env("CARGO_TARGET_DIR", &target)
            .env("MPI_PKG_CONFIG", "mpich")
            .status()
            .expect("cargo build for MPICH");
        assert!(status.success(), "building the MPICH binaries failed");
        target.join("release")
    })
    .clone()
}

pub fn bin(mpi: Mpi, name: &str) -> PathBuf {
    let p = match mpi {
        Mpi::OpenMpi => cargo_bin_dir().join(name),
        Mpi::Mpich => mpich_bin_dir().join(name),
    };
    assert!(p.exists(), "{} missing", p.display());
    p
}

/// What a launched job did.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub timed_out: bool,
}

impl Run {
    /// Lines of stderr that come from our program, not from the launcher's
    /// own banners.
    pub fn our_stderr_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| {
                let t = l.trim();
                !t.is_empty() && !t.starts_with("----") && !launcher_noise(t)
            })
            .collect()
    }

    pub fn assert_no_panic(&self) {
        for bad in ["panicked", "RUST_BACKTRACE", "stack backtrace", "Segmentation fault"] {
            assert!(!self.stderr.contains(bad), "stderr shows '{bad}':\n{}", self.stderr);
        }
    }
}

/// Text that Open MPI's mpirun and MPICH's mpiexec print themselves.
fn launcher_noise(t: &str) -> bool {
    const NOISE: &[&str] = &[
        "Primary job",
        "a non-zero exit code",
        "mpirun detected",
        "the job to be terminated",
        "Process name:",
        "Exit code:",
        "mpirun noticed",
        "Signal:",
        "Local host:",
        "PID:",
        "Node:",
        "exited on signal",
        "BAD TERMINATION",
        "EXIT CODE:",
        "CLEANING UP REMAINING PROCESSES",
        "YOU CAN IGNORE THE BELOW CLEANUP MESSAGES",
        "===",
        "MPI_ABORT was invoked",
        "with errorcode",
        "NOTE: invoking MPI_ABORT",
        "You may or may not see output",
        "exactly when Open MPI kills them",
        "[proxy:",
        "abort:",
        "process manager",
        RSH_SETPGID_RACE,
    ];
    NOISE.iter().any(|n| t.contains(n))
}

/// What Open MPI's mpirun says when it starts a daemon through its remote
/// shell and the daemon's shell has already run its command by the time
/// mpirun puts it in a process group of its own (a race between the two,
/// which a loaded machine makes likely): a warning, the job unharmed.
pub const RSH_SETPGID_RACE: &str = "plm:rsh: Warning: setpgid(";

/// `stderr` without the launcher's warnings of a race that does the job no
/// harm ([`RSH_SETPGID_RACE`]), for the checks that nothing else is there.
pub fn without_launcher_races(stderr: &str) -> String {
    stderr.lines().filter(|l| !l.contains(RSH_SETPGID_RACE)).map(|l| format!("{l}\n")).collect()
}

/// Options for `launch`.
#[derive(Default, Clone)]
pub struct Launch {
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    /// Extra launcher arguments before the binary.
    pub launcher_args: Vec<String>,
    /// Program to put in front of the binary (e.g. the rank exit recorder).
    pub wrapper: Option<PathBuf>,
    pub timeout: Option<Duration>,
    /// stdout and stderr into one pipe (`2>&1`), as Slurm's slurm-%j.out
    /// and many harnesses capture them: the whole text is in `Run::stdout`.
    pub merge_streams: bool,
}

fn read_all(mut r: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    })
}

/// A limit on a hang, stretched by how busy the machine is
/// (`commbench::procs::under_load`: the load average over the CPU count,
/// between 1 and 8). CI shares its cores; a job that takes 1 s alone can
/// take minutes at load 9. For hang limits only: no test bounds how fast
/// anything must be.
pub fn under_load(limit: Duration) -> Duration {
    commbench::procs::under_load(limit)
}

/// A fresh temporary directory for one launch, set as its TMPDIR; removed
/// when the returned guard is dropped (after the launch). Open MPI keeps
/// its session directory, `ompi.<host>.<uid>`, under TMPDIR, shared by
/// every mpirun of the user: each creates it when missing and removes it
/// when it leaves it empty, so two started at once race on it (`A call to
/// mkdir was unable to create the desired directory`, orte_init failed),
/// whether both are this test's or one is another test run's on the same
/// machine. The directory is made inside the TMPDIR `cmd` already sets, if
/// any (what was asked for still holds everything), else inside this
/// process's.
pub fn own_tmpdir(cmd: &mut Command) -> tempfile::TempDir {
    let given = cmd.get_envs().find(|(k, _)| *k == "TMPDIR").and_then(|(_, v)| v.map(PathBuf::from));
    let base = given.unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::Builder::new()
        .prefix("launch-")
        .tempdir_in(&base)
        .unwrap_or_else(|e| panic!("a TMPDIR for the launch in {}: {e}", base.display()));
    cmd.env("TMPDIR", dir.path());
    dir
}

/// Starting a command in a session of its own (`setsid`): its own process
/// group, so a test can signal the whole job, and its own scheduler
/// autogroup, so CPU-bound work in the test runner's session cannot starve
/// it. (Measured: Open MPI's oversubscribed ranks yield when idle, and with
/// two busy loops in their session one `mpirun -np 4 osu_alltoall -l`
/// took 70 s where the same in its own session took 1.5 s; nextest's hang
/// guard then killed `open_mpi_collectives_np3` at 600 s.)
pub trait OwnSession {
    fn own_session(&mut self) -> &mut Self;
}

impl OwnSession for Command {
    fn own_session(&mut self) -> &mut Command {
        // SAFETY: setsid is async-signal-safe; it fails only for a process
        // group leader, which the freshly forked child is not.
        unsafe { self.pre_exec(|| if libc::setsid() < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }) }
    }
}

/// Runs `program args` (no launcher), in a session of its own
/// ([`OwnSession`]), killed with its process group after
/// the timeout (stretched by `under_load`). Unless `cmd` sets TMPDIR
/// itself, it gets one of its own ([`own_tmpdir`]), so that whatever it
/// launches keeps its session files apart from every other launch.
pub fn run_cmd(mut cmd: Command, timeout: Duration) -> Run {
    let _tmpdir = match cmd.get_envs().any(|(k, v)| k == "TMPDIR" && v.is_some()) {
        true => None,
        false => Some(own_tmpdir(&mut cmd)),
    };
    let timeout = under_load(timeout);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::null());
    cmd.own_session();
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    let out = read_all(child.stdout.take().expect("stdout"));
    let err = read_all(child.stderr.take().expect("stderr"));
    let mut timed_out = false;
    let code = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st.code();
        }
        if start.elapsed() > timeout {
            timed_out = true;
            // SAFETY: signals the process group we created (its id is the
            // child's pid).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    Run { code, stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default(), elapsed, timed_out }
}

/// The launcher command for `np` ranks.
pub fn launcher(mpi: Mpi, np: usize) -> Command {
    match mpi {
        Mpi::OpenMpi => {
            let mut c = Command::new("mpirun");
            c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
            c.args(["-np", &np.to_string()]);
            if np > 2 {
                c.arg("--oversubscribe");
            }
            c
        }
        Mpi::Mpich => {
            let mut c = Command::new("mpiexec.mpich");
            c.args(["-n", &np.to_string()]);
            c
        }
    }
}

/// Launches `binary` (built for `built`) with `np` ranks under the launcher
/// of `launcher_mpi`.
pub fn launch_with(launcher_mpi: Mpi, built: Mpi, np: usize, name: &str, args: &[&str], o: &Launch) -> Run {
    let mut c = launcher(launcher_mpi, np);
    c.args(&o.launcher_args);
    if let Some(w) = &o.wrapper {
        c.arg(w);
    }
    c.arg(bin(built, name));
    c.args(args);
    if let Some(d) = &o.cwd {
        c.current_dir(d);
    }
    for (k, v) in &o.env {
        c.env(k, v);
    }
    // Its own session directory, whatever TMPDIR the caller gave.
    let _tmpdir = own_tmpdir(&mut c);
    if o.merge_streams {
        c = merged(c);
    }
    run_cmd(c, o.timeout.unwrap_or(Duration::from_secs(120)))
}

/// `cmd` run through `sh -c 'exec "$@" 2>&1'`: one pipe for both streams.
pub fn merged(cmd: Command) -> Command {
    let mut sh = Command::new("sh");
    sh.args(["-c", "exec \"$@\" 2>&1", "sh"]).arg(cmd.get_program()).args(cmd.get_args());
    if let Some(d) = cmd.get_current_dir() {
        sh.current_dir(d);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    sh
}

pub fn launch(mpi: Mpi, np: usize, name: &str, args: &[&str], o: &Launch) -> Run {
    launch_with(mpi, mpi, np, name, args, o)
}

/// Replaces every measured value (a number with a decimal point, and the
/// spaces before it) by a right-aligned `#` of the same width, so layout,
/// sizes, iteration counts and Pass/Fail still compare exactly.
pub fn mask(text: &str) -> String {
    let re = regex::Regex::new(r" +-?\d+\.\d+").expect("regex");
    let text = re.replace_all(text, |c: &regex::Captures| format!("{:>width$}", "#", width = c[0].len()));
    // The neighbourhood collectives' topology line: its time, at any width.
    let topology = regex::Regex::new(r"(?m)^(Time took to create topology graph:)\d+\.\d+").expect("regex");
    topology.replace_all(&text, "${1}#").into_owned()
}

/// Data rows of an OSU table, split on whitespace: lines whose first word
/// is a number (a size, or osu_barrier's average).
pub fn osu_rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .filter(|l| l.split_whitespace().next().is_some_and(|w| w.parse::<f64>().is_ok()))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

/// Reads a CSV file into header-keyed rows.
pub fn read_csv(path: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let headers = r.headers().expect("csv header").clone();
    r.records()
        .map(|rec| {
            let rec = rec.expect("csv record");
            headers.iter().zip(rec.iter()).map(|(h, v)| (h.to_string(), v.to_string())).collect()
        })
        .collect()
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    p
}

/// Files in `dir` with `ext`, sorted.
/// The data rows of nccl-tests' table (lines that start with a size),
/// each split into its 13 words.
pub fn nccl_tests_rows(stdout: &str) -> Vec<Vec<String>> {
    nccl_tests_rows_of(stdout, 13)
}

/// [`nccl_tests_rows`] of a table whose rows have `columns` columns (21
/// with `-I 1`'s).
pub fn nccl_tests_rows_of(stdout: &str, columns: usize) -> Vec<Vec<String>> {
    stdout
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let t: Vec<String> = l.split_whitespace().map(str::to_string).collect();
            assert_eq!(t.len(), columns, "{l}");
            t
        })
        .collect()
}

/// The one run record and CSV a run left in `dir/res`: the record, and
/// the CSV's rows by column name.
pub fn run_results(dir: &Path) -> (serde_json::Value, Vec<HashMap<String, String>>) {
    let rd = dir.join("res");
    let json = files_with_ext(&rd, "json");
    let csv = files_with_ext(&rd, "csv");
    assert_eq!((json.len(), csv.len()), (1, 1), "{json:?} {csv:?}");
    let record = serde_json::from_str(&std::fs::read_to_string(&json[0]).unwrap()).unwrap();
    (record, read_csv(&csv[0]))
}

pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == ext)).collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A value as OSU prints it.
pub fn two_decimals(v: &str) -> String {
    format!("{:.2}", v.parse::<f64>().unwrap_or_else(|_| panic!("not a number: {v}")))
}

/// Ends the calling test early, saying so, where MPICH's launcher is not
/// installed (scripts/setup.sh installs it): the MPICH half of a test.
macro_rules! require_mpich {
    () => {
        if !$crate::common::have_mpich() {
            eprintln!("SKIPPED: mpiexec.mpich is not installed (scripts/setup.sh installs it)");
            return;
        }
    };
}

/// Whether MPICH's launcher is installed (checked once per process).
pub fn have_mpich() -> bool {
    static HAVE: OnceLock<bool> = OnceLock::new();
    *HAVE.get_or_init(|| Command::new("mpiexec.mpich").arg("--version").output().is_ok_and(|o| o.status.success()))
}

pub struct Outcome {
    pub run: Run,
    pub csv: Vec<HashMap<String, String>>,
    pub record: serde_json::Value,
    pub csv_path: PathBuf,
    /// Removes the results when the outcome is dropped.
    pub _dir: tempfile::TempDir,
}

/// Runs with results into a fresh directory and reads them back.
pub fn run_with_results(mpi: Mpi, np: usize, bench: &str, args: &[&str]) -> Outcome {
    let o = run_with_results_env(mpi, np, bench, args, &[]);
    assert_eq!(o.run.code, Some(0), "{:?}", o.run);
    o
}

/// As `run_with_results`, with extra environment variables for the job,
/// and whatever its exit status.
pub fn run_with_results_env(mpi: Mpi, np: usize, bench: &str, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("res");
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.extend(["--results-dir".to_string(), rd.display().to_string()]);
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let run = launch(mpi, np, bench, &refs, &Launch { cwd: Some(dir.path().to_path_buf()), env, ..Launch::default() });
    let csvs = files_with_ext(&rd, "csv");
    let jsons = files_with_ext(&rd, "json");
    assert_eq!((csvs.len(), jsons.len()), (1, 1), "{:?} {:?}", csvs, jsons);
    assert_eq!(csvs[0].with_extension("json"), jsons[0]);
    let name = csvs[0].file_name().unwrap().to_string_lossy().into_owned();
    let re = regex::Regex::new(&format!(r"^\d{{8}}T\d{{6}}Z_{bench}\.csv$")).unwrap();
    assert!(re.is_match(&name), "file name {name}");
    let record: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&jsons[0]).unwrap()).unwrap();
    let csv = read_csv(&csvs[0]);
    let csv_path = rd.join(name);
    Outcome { run, csv, record, csv_path, _dir: dir }
}

/// A golden file: OSU 7.4's own output for a command.
pub fn golden(name: &str) -> String {
    let p = repo_root().join("tests/golden").join(format!("{name}.txt"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Launcher arguments that end a failed job without Open MPI's grace
/// between SIGTERM and SIGKILL (`odls_base_sigkill_timeout`, 1 s), which
/// mpirun waits out even when every rank has already exited: about a
/// second of every failing Open MPI job. Stricter for a test of what a
/// failing job prints, since the teardown gives no rank extra time.
pub fn no_kill_grace(launcher_mpi: Mpi) -> Vec<String> {
    match launcher_mpi {
        Mpi::OpenMpi => ["--mca", "odls_base_sigkill_timeout", "0"].map(String::from).to_vec(),
        Mpi::Mpich => Vec::new(),
    }
}

/// Launches with every rank's exit status recorded; returns the run and
/// the statuses in rank order.
pub fn launch_recorded(
    launcher_mpi: Mpi,
    built: Mpi,
    np: usize,
    bench: &str,
    args: &[&str],
    cwd: &Path,
) -> (Run, Vec<i32>) {
    let base = Launch { cwd: Some(cwd.to_path_buf()), ..Launch::default() };
    launch_recorded_with(launcher_mpi, built, np, bench, args, base)
}

/// [`launch_recorded`] with more environment and launcher arguments (in
/// `base`; its wrapper and timeout are the recorder's).
pub fn launch_recorded_with(
    launcher_mpi: Mpi,
    built: Mpi,
    np: usize,
    bench: &str,
    args: &[&str],
    base: Launch,
) -> (Run, Vec<i32>) {
    let rc_dir = tempfile::tempdir().unwrap();
    let mut o = Launch {
        wrapper: Some(repo_root().join("tests/support/rank_rc.sh")),
        timeout: Some(Duration::from_secs(30)),
        ..base
    };
    o.env.push(("RANK_RC_DIR".into(), rc_dir.path().display().to_string()));
    if launcher_mpi == Mpi::OpenMpi {
        // Let every rank finish on its own so each status can be checked.
        o.launcher_args.extend(["--mca".into(), "orte_abort_on_non_zero_status".into(), "0".into()]);
    }
    let run = launch_with(launcher_mpi, built, np, bench, args, &o);
    let mut codes = Vec::new();
    for r in 0..np {
        let f = rc_dir.path().join(format!("rank-{r}"));
        let text = std::fs::read_to_string(&f)
            .unwrap_or_else(|_| panic!("{bench} {args:?}: rank {r} left no exit status; {run:?}"));
        codes.push(text.trim().parse().unwrap());
    }
    (run, codes)
}

/// OSU 7.4's source tarball: `$OSU_TARBALL`, else `shared/reference/`
/// beside the repository or beside any folder above it (a clone in another
/// place than the working copy), else /work/shared/reference.
pub fn osu_tarball() -> Option<PathBuf> {
    reference_tarball("OSU_TARBALL", "osu-micro-benchmarks-7.4.tar.gz")
}

/// A reference tarball: `$var` where set, else `shared/reference/name`
/// beside the repository or any folder above it, else under /work.
fn reference_tarball(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var).map(PathBuf::from) {
        return p.is_file().then_some(p);
    }
    let rel = Path::new("shared/reference").join(name);
    let root = repo_root();
    root.ancestors().map(|a| a.join(&rel)).chain([PathBuf::from("/work").join(&rel)]).find(|p| p.is_file())
}

/// The GPU tools' source tarball (nccl-tests 2.19.6, the CUDA samples):
/// `$GPU_ANCHORS_SRC`, else `shared/reference/` found as for
/// [`osu_tarball`].
pub fn gpu_anchors_tarball() -> Option<PathBuf> {
    reference_tarball("GPU_ANCHORS_SRC", "gpu-anchors-src.tar.gz")
}

/// OSU 7.4's own C binaries built against `mpi` (scripts/build-osu.sh builds
/// them on first use into target/osu-7.4/<mpi>/bin and only prints the
/// directory afterwards). None, said on stderr, when OSU's source is not on
/// this machine: the tests that run OSU's binaries then have nothing to run.
pub fn osu_bin_dir(mpi: Mpi) -> Option<PathBuf> {
    let name = match mpi {
        Mpi::OpenMpi => "openmpi",
        Mpi::Mpich => "mpich",
    };
    let Some(tarball) = osu_tarball() else {
        eprintln!("SKIPPED: OSU 7.4's source tarball is not here (set OSU_TARBALL to run OSU's own binaries)");
        return None;
    };
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/build-osu.sh"))
        .env("OSU_MPI", name)
        .env("OSU_TARBALL", &tarball)
        .stdin(Stdio::null())
        .output()
        .expect("run scripts/build-osu.sh");
    assert!(out.status.success(), "scripts/build-osu.sh failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(dir.join("osu_latency").is_file(), "no osu_latency in {}", dir.display());
    Some(dir)
}

/// One line from rank 0, status 1 on every rank, within 5 s.
pub fn refused(bench: &str, args: &[&str], env: &[(&str, &str)], line: impl Fn(&str) -> bool) {
    refused_under(Mpi::OpenMpi, bench, args, env, line);
}

/// [`refused`] for a build of `mpi` under its own launcher; the run.
pub fn refused_under(mpi: Mpi, bench: &str, args: &[&str], env: &[(&str, &str)], line: impl Fn(&str) -> bool) -> Run {
    let cwd = tempfile::tempdir().unwrap();
    let base = Launch {
        cwd: Some(cwd.path().to_path_buf()),
        env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Launch::default()
    };
    let (run, codes) = launch_recorded_with(mpi, mpi, 2, bench, args, base);
    let what = format!("{bench} {args:?} {env:?}");
    assert!(codes.iter().all(|&c| c == 1), "{what}: statuses {codes:?}: {}", run.stderr);
    run.assert_no_panic();
    assert!(run.elapsed < under_load(Duration::from_secs(5)), "{what}: took {:?}", run.elapsed);
    let lines = run.our_stderr_lines();
    assert_eq!(lines.len(), 1, "{what}: {}", run.stderr);
    assert!(line(lines[0]), "{what}: {}", lines[0]);
    run
}

/// How many jobs that end at start-up (refused options, refused job
/// shapes) run at once: such a job spends its second or two waiting (MPI's
/// start, the leader-first pause of failing ranks), not computing.
pub const REFUSALS_AT_ONCE: usize = 4;

/// How many bad-input cases run at once: each is two such jobs at once.
pub const CASES_AT_ONCE: usize = 3;

/// How many short measuring jobs (a few iterations of small messages, for
/// layout and files) run at once on this 2-core machine. Under Open MPI
/// two: most of such a job's second is mpirun starting and ending it, so
/// two keep both cores busy. Under MPICH one: its jobs start in a tenth of
/// that, and its ranks spin while they wait, so two jobs at once starve
/// each other (a table of 35 took 45 s two at a time, 3 s one at a time).
pub fn short_jobs_at_once(mpi: Mpi) -> usize {
    match mpi {
        Mpi::OpenMpi => 2,
        Mpi::Mpich => 1,
    }
}

/// Runs `check` on every item, `width` at a time, and fails once all have
/// run, with every failing item's message (each item's own assertions, not
/// only the first to fail). The caller holds [`mpi_lock`] for the batch.
pub fn each_at_once<T: Sync>(items: &[T], width: usize, check: impl Fn(&T) + Sync) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    thread::scope(|s| {
        for _ in 0..width.clamp(1, items.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(item))) {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "a panic without a message".into());
                    failures.lock().unwrap_or_else(|e| e.into_inner()).push((i, msg));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    failures.sort();
    if !failures.is_empty() {
        let all: Vec<String> = failures.iter().map(|(i, m)| format!("item {i}: {m}")).collect();
        panic!("{} of {} failed:\n{}", failures.len(), items.len(), all.join("\n---\n"));
    }
}

/// One [`refused_under`] check of a [`Refusals`] batch: the MPI, the
/// benchmark, its arguments and environment, and the test its one line
/// must pass.
type Refusal = (Mpi, String, Vec<String>, Vec<(String, String)>, Box<dyn Fn(&str) -> bool + Send + Sync>);

/// A batch of [`refused`] checks run [`REFUSALS_AT_ONCE`] at a time:
/// each job ends at start-up, so they need not wait for one another.
#[derive(Default)]
pub struct Refusals {
    cases: Vec<Refusal>,
}

impl Refusals {
    pub fn new() -> Refusals {
        Refusals::default()
    }

    /// Adds a [`refused`] check (Open MPI).
    pub fn refused(
        &mut self,
        bench: &str,
        args: &[&str],
        env: &[(&str, &str)],
        line: impl Fn(&str) -> bool + Send + Sync + 'static,
    ) {
        self.refused_under(Mpi::OpenMpi, bench, args, env, line);
    }

    /// Adds a [`refused_under`] check.
    pub fn refused_under(
        &mut self,
        mpi: Mpi,
        bench: &str,
        args: &[&str],
        env: &[(&str, &str)],
        line: impl Fn(&str) -> bool + Send + Sync + 'static,
    ) {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        self.cases.push((mpi, bench.to_string(), owned(args), env, Box::new(line)));
    }

    /// Runs every check (the caller holds [`mpi_lock`]).
    pub fn check(self) {
        each_at_once(&self.cases, REFUSALS_AT_ONCE, |(mpi, bench, args, env, line)| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            refused_under(*mpi, bench, &args, &env, line);
        });
    }
}
