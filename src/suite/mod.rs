//! `commbench suite`: runs a set of OSU benchmarks one after another through
//! an MPI launcher and leaves one run directory,
//! `<results>/<UTC>_suite[_<tag>][_job<id>]/`, with each benchmark's OSU
//! output (`<bench>.txt`, also streamed to stdout as it comes), stderr, CSV
//! and run record (`<bench>.csv`, `<bench>.json`), plus `summary.md` and
//! `suite.json`. The launcher follows the MPI the binaries are linked with;
//! OSU's own binaries run too (their CSV made from their output). A failing
//! benchmark does not stop the others; the exit status is 0 when all
//! passed, 1 when any did not, 2 for bad usage.

pub mod binaries;
pub mod options;
pub(crate) mod osu_c;
pub mod plan;
mod shared;
pub mod summary;

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::launch::run_dir::{self, RunDirError};
use crate::launch::{self, exec, hostfile, progress, LaunchContext, Launcher, MpiFlavor};
use crate::report::record::RunRecord;
use crate::report::safe_file;
use crate::report::slurm::SlurmInfo;
use crate::report::time::Utc;
use binaries::Maker;
use options::{Parsed, Settings};
use plan::Shape;
use summary::{BenchResult, SuiteReport};

/// Why a suite could not run at all (a benchmark failing is not an error).
#[derive(Debug, Error)]
pub enum SuiteError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Hostfile(#[from] hostfile::ReadError),
    #[error("launcher '{0}' not found (install it, put it on PATH, or choose another with --launcher)")]
    LauncherMissing(String),
    #[error("cannot find the benchmark binaries: {0} (point --bin-dir at the directory holding osu_latency ...)")]
    BinDir(String),
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    #[error("cannot write '{path}': {source}")]
    Write { path: PathBuf, source: io::Error },
}

impl SuiteError {
    pub fn exit_code(&self) -> i32 {
        match self {
            SuiteError::Usage(_) | SuiteError::Hostfile(_) => 2,
            _ => 1,
        }
    }
}

/// Entry point of `commbench suite` (arguments after the subcommand).
pub fn main(args: &[String]) -> i32 {
    match options::parse(args) {
        Err(e) => {
            crate::say!("{e}");
            2
        }
        Ok(Parsed::Help(h)) => {
            print!("{h}");
            0
        }
        Ok(Parsed::Run(s)) => {
            // Before any thread starts: the suite ends its job itself.
            crate::job::signals::catch();
            match run(&s) {
                Ok(code) => code,
                Err(e) => {
                    crate::say!("commbench suite: {e}");
                    e.exit_code()
                }
            }
        }
    }
}

/// One benchmark, ready to start.
struct Job {
    spec: &'static crate::spec::BenchSpec,
    layout: launch::Layout,
    binary: PathBuf,
    args: Vec<String>,
    notes: Vec<String>,
}

/// `suite --dry-run`: each benchmark's command line and, for commbench's
/// binaries, its own `--dry-run` table for the job's ranks (the binary run
/// alone, which starts nothing), then the suite's modelled total, on
/// stdout. Exit 0, or 1 when a benchmark's plan was refused: its line on
/// stdout says why, and stderr says it too, one line per distinct reason
/// naming the benchmarks it refused (a bad option refuses every plan the
/// same way). A closed stdout ends the listing, not the process. With
/// `one_launch`, which benchmarks would share a launch, and the MPI
/// start-ups that saves.
fn dry_run(p: &Prepared, argv_for: &dyn Fn(&Job, String) -> Vec<String>, one_launch: bool) -> i32 {
    let mut total = 0.0;
    // Each distinct reason (as it reads after the benchmarks' names), in
    // the order met, with the benchmarks it refused.
    let mut refused: Vec<(String, Vec<&str>)> = Vec::new();
    let mut note = |why: String, name: &'static str| match refused.iter_mut().find(|(w, _)| *w == why) {
        Some((_, names)) => names.push(name),
        None => refused.push((why, vec![name])),
    };
    let mut out = io::stdout().lock();
    for j in &p.jobs {
        let mut text = format!("{}\n", launch::shell_line(&argv_for(j, format!("RUN_DIR/{}.csv", j.spec.name))));
        if p.maker != Maker::Commbench {
            text.push_str("  # (OSU's own binary: no plan to show)\n");
        } else if !j.binary.is_file() {
            let why = format!(
                "not found in {} (point --bin-dir at the directory holding osu_latency ...)",
                p.bin_dir.display()
            );
            text.push_str(&format!("  # {}: {why}\n", j.binary.display()));
            note(format!(": {why}"), j.spec.name);
        } else {
            let ran = std::process::Command::new(&j.binary)
                .args(&j.args)
                .arg(format!("--dry-run={}", j.layout.np))
                // Not under a launcher: its variables would make this a rank.
                .env_remove("OMPI_COMM_WORLD_RANK")
                .env_remove("PMI_RANK")
                .env_remove("SLURM_PROCID")
                .stdin(std::process::Stdio::null())
                .output();
            match ran {
                Ok(o) if o.status.success() => {
                    // Indented under its command line.
                    let plan = String::from_utf8_lossy(&o.stdout);
                    for line in plan.lines() {
                        text.push_str(&format!("  {line}\n"));
                    }
                    total += plan.lines().find_map(dry_run_seconds).unwrap_or(0.0);
                }
                Ok(o) => {
                    let why = String::from_utf8_lossy(&o.stderr);
                    text.push_str(&format!("  # refused: {}\n", why.trim()));
                    let first = why.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no reason given");
                    note(format!(" refused their plan: {first}"), j.spec.name);
                }
                Err(e) => {
                    text.push_str(&format!("  # {}: cannot run: {e}\n", j.binary.display()));
                    note(format!(": cannot run: {e}"), j.spec.name);
                }
            }
        }
        if out.write_all(text.as_bytes()).is_err() {
            break;
        }
    }
    let launches = if one_launch {
        let groups = shared::groups(&p.jobs);
        for (i, g) in groups.iter().filter(|g| g.len() > 1).enumerate() {
            let names: Vec<&str> = p.jobs[g.clone()].iter().map(|j| j.spec.name).collect();
            let _ = writeln!(
                out,
                "# shared launch {} (np {}): {}: MPI starts once instead of {} times",
                i + 1,
                p.jobs[g.start].layout.np,
                names.join(", "),
                g.len()
            );
        }
        format!(
            " in {} launch(es) with --one-launch ({} MPI start-up(s) saved)",
            groups.len(),
            p.jobs.len() - groups.len()
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "# suite: {} benchmark(s){launches}, estimated {} of timed iterations on the model above",
        p.jobs.len(),
        crate::bench::engine::dry_run::human_secs(total)
    );
    let _ = out.flush();
    for (why, names) in &refused {
        let who = match names.len() {
            0..=4 => names.join(", "),
            k => format!("{} and {} more", names[..3].join(", "), k - 3),
        };
        crate::say!("commbench suite: --dry-run: {who}{}", crate::diag::printable(why));
    }
    i32::from(!refused.is_empty())
}

/// The modelled seconds in a `--dry-run` table's last line.
fn dry_run_seconds(line: &str) -> Option<f64> {
    let rest = line.strip_prefix("# estimated duration: ")?;
    crate::bench::engine::dry_run::parse_human_secs(rest.split(" of ").next()?)
}

/// Everything decided before the first benchmark starts.
struct Prepared {
    flavor: MpiFlavor,
    /// The MPI library: this build's version string, or what the binaries
    /// showed when they use another (replaced by their run records' word
    /// once they ran).
    library: String,
    maker: Maker,
    launcher: Launcher,
    shape: Shape,
    hosts: Vec<String>,
    bin_dir: PathBuf,
    slurm: Option<SlurmInfo>,
    jobs: Vec<Job>,
}

fn bin_dir(s: &Settings) -> Result<PathBuf, SuiteError> {
    let dir = match &s.bin_dir {
        Some(d) => d.clone(),
        None => {
            let exe = std::env::current_exe().map_err(|e| SuiteError::BinDir(e.to_string()))?;
            exe.parent().map(Path::to_path_buf).ok_or_else(|| SuiteError::BinDir("no directory".into()))?
        }
    };
    if !dir.is_dir() {
        return Err(SuiteError::BinDir(format!("'{}' is not a directory", dir.display())));
    }
    Ok(dir)
}

/// `dir/name`, or where an OSU install keeps it one or two folders down
/// (`mpi/pt2pt/osu_latency`, `mpi/pt2pt/standard/osu_latency`,
/// `mpi/collective/blocking/osu_allreduce`); `dir/name` when none is there.
fn find_binary(dir: &Path, name: &str) -> PathBuf {
    let direct = dir.join(name);
    let subdirs = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    let one = subdirs(dir);
    let two = one.iter().flat_map(|d| subdirs(d));
    std::iter::once(dir.to_path_buf())
        .chain(one.clone())
        .chain(two)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or(direct)
}

fn flavor_name(f: MpiFlavor) -> &'static str {
    match f {
        MpiFlavor::OpenMpi => "Open MPI",
        MpiFlavor::Mpich => "MPICH",
        MpiFlavor::Unknown => "an unknown MPI",
    }
}

/// Who made the binaries and which MPI they use, from the first one there
/// is (they come from one build); this build's MPI when they name none.
fn inspect_binaries(binaries: &[PathBuf]) -> Result<(Maker, MpiFlavor, String), SuiteError> {
    let (own_flavor, own_library) = MpiFlavor::of_this_build();
    let Some(probe) = binaries.iter().find(|b| b.is_file()) else {
        // Nothing to run: each benchmark fails as "not found".
        return Ok((Maker::Commbench, own_flavor, own_library));
    };
    let maker = binaries::maker_of(probe).map_err(|e| SuiteError::BinDir(format!("{}: {e}", probe.display())))?;
    Ok(match binaries::mpi_of(probe) {
        Some((f, _)) if f == own_flavor => (maker, f, own_library),
        Some((f, how)) => (maker, f, format!("{}, as {how}", flavor_name(f))),
        None => (maker, own_flavor, own_library),
    })
}

fn prepare(s: &Settings) -> Result<Prepared, SuiteError> {
    let bin_dir = bin_dir(s)?;
    let paths: Vec<PathBuf> = s.benchmarks.iter().map(|spec| find_binary(&bin_dir, spec.name)).collect();
    let (maker, flavor, library) = inspect_binaries(&paths)?;
    let slurm = SlurmInfo::from_env();
    let launcher = match &s.launcher {
        Some(name) => Launcher::named(name, flavor).map_err(SuiteError::Usage)?,
        None => Launcher::detect(flavor, slurm.is_some(), &launch::on_path),
    };
    if !launcher.matches(flavor) {
        return Err(SuiteError::Usage(format!(
            "launcher '{}' belongs to another MPI than the binaries in {} ({}); use --launcher {} or srun",
            launcher.program,
            bin_dir.display(),
            crate::job::launcher::short_library_name(&library),
            if flavor == MpiFlavor::Mpich { "mpiexec.mpich" } else { "mpirun" },
        )));
    }
    if !launch::on_path(&launcher.program) {
        return Err(SuiteError::LauncherMissing(launcher.program.clone()));
    }
    if s.one_launch && maker == Maker::Osu {
        return Err(SuiteError::Usage(format!(
            "--one-launch needs commbench's binaries: OSU's own in {} start MPI in each one",
            bin_dir.display()
        )));
    }
    if s.one_launch && !find_binary(&bin_dir, "commbench").is_file() {
        return Err(SuiteError::BinDir(format!(
            "--one-launch runs `commbench suite-worker`, and there is no commbench in {}",
            bin_dir.display()
        )));
    }
    let hosts: Vec<String> = match &s.hostfile {
        Some(p) => hostfile::read(p)?.into_iter().map(|e| e.host).collect(),
        None => Vec::new(),
    };
    let nodes = s
        .nodes
        .or((!hosts.is_empty()).then_some(hosts.len()))
        .or(slurm.as_ref().and_then(|j| j.num_nodes))
        .unwrap_or(1);
    let np = s.np.or(slurm.as_ref().and_then(|j| j.ntasks)).unwrap_or(2);
    let shape = Shape { np, ppn: s.ppn, nodes };
    let mut jobs = Vec::new();
    for (spec, binary) in s.benchmarks.iter().zip(paths) {
        let layout = plan::layout_for(spec, &shape).map_err(|e| SuiteError::Usage(format!("{}: {e}", spec.name)))?;
        let (args, notes) = match maker {
            Maker::Commbench => s.bench_args.for_bench(spec),
            Maker::Osu => s.bench_args.for_osu_binary(spec),
        };
        jobs.push(Job { spec, layout, binary, args, notes });
    }
    Ok(Prepared { flavor, library, maker, launcher, shape, hosts, bin_dir, slurm, jobs })
}

fn write(path: &Path, text: &str) -> Result<(), SuiteError> {
    safe_file::write_new(path, text.as_bytes()).map_err(|source| SuiteError::Write { path: path.into(), source })
}

/// Runs one benchmark into the run directory (and its output to stdout
/// unless `quiet`).
fn run_job(
    j: &Job,
    argv: &[String],
    env: &[(String, String)],
    dir: &Path,
    s: &Settings,
    ours: bool,
    progress: &mut progress::Progress,
) -> exec::Ended {
    let name = j.spec.name;
    let (out, err) = (dir.join(format!("{name}.txt")), dir.join(format!("{name}.stderr")));
    if j.binary.is_file() {
        let record = dir.join(format!("{name}.json"));
        let o = exec::Output { out: &out, err: &err, echo: !s.quiet, record: ours.then_some(record.as_path()) };
        let stop = exec::Stop { max_time: s.max_time, grace: exec::STOP_GRACE };
        return exec::run(argv, env, &o, stop, progress);
    }
    let _ = safe_file::write_new(&out, b"");
    let _ = safe_file::write_new(&err, b"");
    exec::Ended {
        status: exec::Status::Failed,
        exit_code: None,
        took: std::time::Duration::ZERO,
        detail: Some(format!("{} not found", j.binary.display())),
    }
}

/// What the suite learns back from the benchmarks' own files.
struct ReadBack {
    tables: HashMap<String, summary::KeyTable>,
    hosts: Vec<String>,
    commit: String,
    /// The MPI library the benchmarks ran with, as they said.
    library: Option<String>,
}

/// Reads each benchmark's CSV (key sizes) and run record (hosts, commit,
/// where its ranks ran). A record that cannot be read costs a warning on
/// stderr and that benchmark's placement line, never the run.
fn read_back(dir: &Path, results: &mut [BenchResult]) -> ReadBack {
    let mut back =
        ReadBack { tables: HashMap::new(), hosts: Vec::new(), commit: crate::GIT_COMMIT.to_string(), library: None };
    for b in results {
        if let Some(rows) = b.csv.as_ref().and_then(|c| summary::read_csv(&dir.join(c))) {
            if let Some(t) = summary::key_table(&rows) {
                back.tables.insert(b.benchmark.clone(), t);
            }
            b.precision = summary::precision_tally(&rows);
            b.noise_flags = summary::noise_flags(&rows);
        }
        let Some(name) = &b.record else { continue };
        let run = match RunRecord::read(&dir.join(name)) {
            Ok(r) => r.run,
            Err(e) => {
                crate::say!("suite: {e}");
                continue;
            }
        };
        for h in &run.hosts {
            if !back.hosts.contains(h) {
                back.hosts.push(h.clone());
            }
        }
        back.commit = run.commbench.git_commit.clone();
        if back.library.is_none() && !run.mpi.library_version.is_empty() {
            back.library = Some(run.mpi.library_version.clone());
        }
        b.placement = summary::placement_line(&run);
        b.busy = run.busy_line();
        b.placement_warnings = run.placement_warnings;
    }
    back
}

/// The arguments every benchmark got, for the summary.
fn common_args(a: &plan::BenchArgs) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for (l, val) in &a.osu {
        v.push(format!("-{l}"));
        v.extend(val.clone());
    }
    v.extend(a.verbatim.iter().cloned());
    v.extend(a.placement.iter().cloned());
    if let Some(t) = &a.timeout {
        v.extend(["--timeout".to_string(), t.clone()]);
    }
    v.extend(a.precision.iter().cloned());
    if let Some(p) = &a.min_efficiency {
        v.extend(["--min-efficiency".to_string(), p.clone()]);
    }
    v
}

/// One line per benchmark and the summary's path, on stdout.
fn print_status(report: &SuiteReport, summary_path: &Path, quiet: bool) {
    let mut out = io::stdout().lock();
    if !quiet {
        let _ = writeln!(out);
    }
    let _ = out.write_all(summary::status_lines(report, summary_path).as_bytes());
}

/// Runs the suite; the exit status when it got as far as running.
pub fn run(s: &Settings) -> Result<i32, SuiteError> {
    let p = prepare(s)?;
    let hostfile: Option<(&Path, &[String])> = s.hostfile.as_deref().map(|h| (h, p.hosts.as_slice()));
    // Placement is commbench's when asked for: the launcher's binding goes
    // off. OSU's binaries get no placement options, so theirs stays.
    let unbind = s.places_ranks && p.maker == Maker::Commbench;
    let ctx = LaunchContext { flavor: Some(p.flavor), hostfile, launcher_args: &s.launcher_args, unbind };
    let mut env = launch::env_for(&p.launcher);
    let argv_for = |j: &Job, csv: String| {
        let mut args = j.args.clone();
        if p.maker == Maker::Commbench {
            args.extend(["--csv".to_string(), csv]);
        }
        launch::command(&p.launcher, &j.layout, &ctx, &j.binary, &args)
    };

    if s.dry_run {
        return Ok(dry_run(&p, &argv_for, s.one_launch));
    }
    // Held until every launch (and --locate-on-hang's probes) ended.
    let _tmpdir = launch::own_tmpdir(&p.launcher, &mut env);

    let start = Utc::now();
    let job_id = p.slurm.as_ref().map(|j| j.job_id.as_str());
    let dir = run_dir::create(
        &run_dir::results_root(s.results_dir.as_deref()),
        &start.compact(),
        "suite",
        s.tag.as_deref(),
        job_id,
    )?;
    let whose = match p.maker {
        Maker::Commbench => "",
        Maker::Osu => " (OSU's own binaries: CSV made from their output)",
    };
    crate::say!(
        "suite: {} benchmark(s){whose} with {} for {}; results in {}",
        p.jobs.len(),
        p.launcher.program,
        crate::job::launcher::short_library_name(&p.library),
        dir.display()
    );
    let mut progress = progress::Progress::new(p.jobs.len());
    let worker = find_binary(&p.bin_dir, "commbench");
    let groups = if s.one_launch { shared::groups(&p.jobs) } else { Vec::new() };
    let group_end = |k: usize| groups.iter().find(|g| g.contains(&k)).map_or(k + 1, |g| g.end);
    let command = |layout: &launch::Layout, program: &Path, args: &[String]| {
        launch::command(&p.launcher, layout, &ctx, program, args)
    };
    let alone = |j: &Job| argv_for(j, dir.join(format!("{}.csv", j.spec.name)).display().to_string());
    let mut results = Vec::new();
    let mut launches: Vec<shared::SharedLaunch> = Vec::new();
    // Benchmarks before this index run one launch each: their shared
    // launch ended before its first one began.
    let mut alone_until = 0;
    let mut k = 0;
    while k < p.jobs.len() {
        let end = group_end(k);
        if end - k >= 2 && k >= alone_until && crate::job::signals::caught().is_none() {
            let start = shared::Start {
                worker: &worker,
                command: &command,
                alone: &alone,
                env: &env,
                dir: &dir,
                echo: !s.quiet,
                max_time: s.max_time,
                number: launches.len() + 1,
            };
            let ran = shared::run(&p.jobs, k..end, &start, &mut progress);
            let began = ran.ended.len();
            for (i, mut ended) in ran.ended {
                let j = &p.jobs[i];
                settle(&dir, j.spec.name, p.maker, &mut ended);
                results.push(result_of(&dir, j, alone(j), ended, Some(launches.len())));
            }
            launches.push(ran.launch);
            if began == 0 {
                alone_until = end;
            }
            k += began;
            continue;
        }
        let j = &p.jobs[k];
        let name = j.spec.name;
        let argv = alone(j);
        let ended = match crate::job::signals::caught() {
            Some(sig) => exec::Ended {
                status: exec::Status::Interrupted,
                exit_code: None,
                took: std::time::Duration::ZERO,
                detail: Some(format!("{}: the suite got {}", summary::NOT_STARTED, crate::job::signals::name(sig))),
            },
            None => {
                progress.start(k, name, &launch::shell_line(&argv));
                let mut ended = run_job(j, &argv, &env, &dir, s, p.maker == Maker::Commbench, &mut progress);
                progress.finish(ended.status.word(), ended.took);
                settle(&dir, name, p.maker, &mut ended);
                ended
            }
        };
        if p.maker == Maker::Osu && j.binary.is_file() {
            let known = osu_c::known(j.spec, &j.args, j.layout.np);
            let (txt, csv) = (dir.join(format!("{name}.txt")), dir.join(format!("{name}.csv")));
            if let Err(e) = osu_c::write_csv(&txt, &csv, j.spec, &known, &Utc::now().rfc3339()) {
                crate::say!("suite: no CSV for {name}: {e}");
            }
        }
        results.push(result_of(&dir, j, argv, ended, None));
        k += 1;
    }

    // PLOTS: the one place where the run's plots are made (`<bench>.svg`
    // in the run directory); the summary links each under its benchmark.
    // A plot that cannot be drawn costs a warning, never the run.
    let plots: Vec<PathBuf> = match crate::plot::plot_run_dir(&dir) {
        Ok(p) => p,
        Err(e) => {
            crate::say!("suite: no plots: {e}");
            Vec::new()
        }
    };

    let back = read_back(&dir, &mut results);
    let hung = results.iter().any(|b| b.status == exec::Status::Timeout);
    let locate = (s.locate_on_hang && hung && crate::job::signals::caught().is_none())
        .then(|| locate_after_hang(s, &p, &dir, &back.hosts, &env))
        .flatten();
    let report = SuiteReport {
        schema: summary::SCHEMA.into(),
        started_utc: start.rfc3339(),
        finished_utc: Utc::now().rfc3339(),
        run_dir: dir.display().to_string(),
        host: crate::topo::hostname(),
        commbench_version: crate::VERSION.into(),
        commbench_commit: back.commit,
        mpi_library: back.library.clone().unwrap_or_else(|| p.library.clone()),
        binaries: p.maker,
        launcher: p.launcher.clone(),
        launcher_args: s.launcher_args.clone(),
        launcher_env: env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        shape: p.shape,
        hostfile: s.hostfile.as_ref().map(|h| h.display().to_string()),
        common_args: common_args(&s.bench_args),
        bin_dir: p.bin_dir.display().to_string(),
        hosts: back.hosts,
        slurm: p.slurm.clone(),
        benchmarks: results,
        launches,
        locate,
    };
    let summary_path = dir.join("summary.md");
    write(&summary_path, &summary::render(&report, &back.tables, &plots))?;
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| SuiteError::Write { path: dir.join("suite.json"), source: io::Error::other(e) })?;
    write(&dir.join("suite.json"), &(json + "\n"))?;
    print_status(&report, &summary_path, s.quiet);
    if let Some(h) = &s.history {
        // Its lines say what was added and refused; the suite's verdict
        // is the suite's.
        crate::history::add(h, std::slice::from_ref(&dir), None, true);
    }
    if let Some(sig) = crate::job::signals::caught() {
        return Ok(128 + sig);
    }
    Ok(if report.passed() == report.benchmarks.len() { 0 } else { 1 })
}

/// A benchmark's run record once its launch ended: ended for it when the
/// suite stopped it or the launcher left it `running` with every rank gone.
fn settle(dir: &Path, name: &str, maker: Maker, ended: &mut exec::Ended) {
    let record = dir.join(format!("{name}.json"));
    if matches!(ended.status, exec::Status::Interrupted | exec::Status::Timeout) {
        close_record(&record, ended);
    } else if maker == Maker::Commbench {
        settle_record(&record, ended);
    }
}

/// The summary's entry for benchmark `j`, run by `command` (its own
/// launch's; with `launch`, the index of the shared launch that ran it).
fn result_of(dir: &Path, j: &Job, command: Vec<String>, ended: exec::Ended, launch: Option<usize>) -> BenchResult {
    let name = j.spec.name;
    let exists = |ext: &str| Some(format!("{name}.{ext}")).filter(|f| dir.join(f).is_file());
    BenchResult {
        benchmark: name.to_string(),
        status: ended.status,
        exit_code: ended.exit_code,
        duration_s: ended.took.as_secs_f64(),
        detail: ended.detail,
        layout: j.layout.clone(),
        command,
        launch,
        notes: j.notes.clone(),
        stdout: format!("{name}.txt"),
        stderr: format!("{name}.stderr"),
        csv: exists("csv"),
        record: exists("json"),
        placement: None,
        placement_warnings: Vec::new(),
        precision: None,
        noise_flags: Vec::new(),
        busy: None,
    }
}

/// `--locate-on-hang`: searches the hostfile's hosts (else those the
/// benchmarks ran on) with `commbench locate`'s defaults, each probe
/// bounded by `--max-time` (else 60 s), into `<run dir>/locate`; its lines
/// go to stdout after the benchmarks'.
fn locate_after_hang(
    s: &Settings,
    p: &Prepared,
    dir: &Path,
    ran_on: &[String],
    env: &[(String, String)],
) -> Option<summary::LocateSummary> {
    let hosts = if p.hosts.is_empty() { ran_on } else { &p.hosts[..] };
    if hosts.is_empty() {
        crate::say!("suite: --locate-on-hang: no hosts to search (no hostfile, and no run record named any)");
        return None;
    }
    // The records' hosts go to the launcher as the hostfile's would.
    if let Some(e) = hosts.iter().find_map(|h| hostfile::check_host_name(h).err()) {
        crate::say!("suite: --locate-on-hang: a run record names {e}");
        return None;
    }
    let bound = std::time::Duration::from_secs_f64(s.max_time.unwrap_or(60.0));
    let ldir = dir.join("locate");
    if let Err(e) = std::fs::create_dir(&ldir) {
        crate::say!("suite: --locate-on-hang: cannot make {}: {e}", ldir.display());
        return None;
    }
    let pairs_args = crate::locate::options::pairs_args("1MB", "50%", None, &[], bound);
    let from = if p.hosts.is_empty() { "the hung run's records" } else { "the hostfile" };
    let search = crate::locate::Search {
        hosts,
        hosts_from: from.to_string(),
        bound,
        max_probes: crate::locate::search::search_bound(hosts.len()),
        pairs_args: &pairs_args,
        launcher: &p.launcher,
        flavor: p.flavor,
        launcher_args: &s.launcher_args,
        env: env.to_vec(),
        dir: ldir,
    };
    let rec = crate::locate::run_search(search, &mut io::stdout().lock());
    Some(summary::LocateSummary {
        record: "locate/locate.json".into(),
        exit_code: rec.exit_code,
        probes: rec.probes.len(),
        findings: rec.findings.iter().map(|f| f.line.clone()).collect(),
    })
}

/// A benchmark the suite stopped (its signal or --max-time) whose ranks
/// were killed before rank 0 could end its run record: the suite ends it,
/// `interrupted`, with why.
fn close_record(path: &Path, ended: &exec::Ended) {
    use crate::report::record::RunStatus;
    let Ok(mut rec) = RunRecord::read(path) else { return };
    if rec.run.status != RunStatus::Running {
        return;
    }
    let why = ended.detail.clone().unwrap_or_else(|| "stopped by the suite".into());
    let detail = format!("{why}; its ranks ended before rank 0 could say where it was");
    rec.run.end(RunStatus::Interrupted, Some(detail), ended.exit_code.unwrap_or(1));
    if let Err(e) = rec.write(path) {
        crate::say!("suite: cannot write {}: {e}", path.display());
    }
}

/// A benchmark whose launcher has exited while its run record still says
/// `running` with every rank gone (MPICH's launcher kills every rank with
/// SIGKILL when one dies): the suite ends it `killed`, says so in one line,
/// and the benchmark's detail says it too.
fn settle_record(path: &Path, ended: &mut exec::Ended) {
    let how = match (ended.exit_code, &ended.detail) {
        (Some(c), _) => format!("the launcher exited with status {c}"),
        (None, Some(d)) => d.clone(),
        (None, None) => "the launcher ended".into(),
    };
    let grace = std::time::Duration::from_secs(2);
    let Some(s) = crate::report::record_end::settle_after_launcher(path, "commbench suite", Some(&how), grace) else {
        return;
    };
    match &s.unwritten {
        None => crate::say!("suite: {}: {}", path.display(), s.line),
        Some(e) => crate::say!("suite: {}: {}, but cannot rewrite it: {e}", path.display(), s.line),
    }
    if ended.status == exec::Status::Passed {
        // MPICH's launcher exits 0 after passing a signal on.
        ended.status = exec::Status::Failed;
    }
    let words = "its run record said `running`, but its processes are gone";
    ended.detail = Some(match ended.detail.take() {
        Some(d) => format!("{d}; {words}"),
        None => words.to_string(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suite learns hosts, commit, placement and warnings from the
    /// run records the benchmarks wrote, and key sizes from their CSV; a
    /// record it cannot read costs only that benchmark's placement line.
    #[test]
    fn read_back_from_the_benchmarks_files() {
        use crate::report::record::{samples, RunStatus};
        let d = tempfile::tempdir().unwrap();
        let bench = |name: &str| BenchResult {
            benchmark: name.into(),
            status: exec::Status::Passed,
            exit_code: Some(0),
            duration_s: 1.0,
            detail: None,
            layout: launch::Layout { np: 2, ppn: None, nodes: Some(1) },
            command: Vec::new(),
            launch: None,
            notes: Vec::new(),
            stdout: format!("{name}.txt"),
            stderr: format!("{name}.stderr"),
            csv: Some(format!("{name}.csv")),
            record: Some(format!("{name}.json")),
            placement: None,
            placement_warnings: Vec::new(),
            precision: None,
            noise_flags: Vec::new(),
            busy: None,
        };
        // A run killed before it ended: still `running`, no end time.
        let mut run = samples::header();
        assert_eq!((run.status, run.end_utc.as_ref()), (RunStatus::Running, None));
        run.hosts = vec!["b".into(), "a".into()];
        run.commbench.git_commit = "feed".into();
        samples::record(run).write(&d.path().join("osu_bw.json")).unwrap();
        let header = crate::report::csv::COLUMNS.join(",");
        std::fs::write(
            d.path().join("osu_bw.csv"),
            format!(
                "{header}\nosu_bw,mpi,MPI_CHAR,8,8,64,2,1,10,1,,,,4.5{}\n",
                ",".repeat(crate::report::csv::COLUMNS.len() - 14)
            ),
        )
        .unwrap();
        std::fs::write(d.path().join("osu_latency.json"), "{\"schema\": \"commbench-run-record/1\"}").unwrap();
        let mut results = vec![bench("osu_bw"), bench("osu_latency")];
        let back = read_back(d.path(), &mut results);
        assert_eq!(back.hosts, ["b", "a"]);
        assert_eq!(back.commit, "feed");
        assert_eq!(results[0].placement.as_deref(), Some("rank 0 on a cpus 0; rank 1 on a cpus 1"));
        assert_eq!(results[0].placement_warnings, ["w"]);
        assert_eq!(back.tables["osu_bw"].rows, [["8 B", "4.50"]]);
        assert_eq!((results[1].placement.as_ref(), results[1].placement_warnings.len()), (None, 0));
    }

    /// OSU's install keeps the binaries one folder down.
    #[test]
    fn binaries_in_osu_install_folders() {
        let d = tempfile::tempdir().unwrap();
        for (sub, name) in [("pt2pt", "osu_latency"), ("collective/blocking", "osu_allreduce")] {
            std::fs::create_dir_all(d.path().join(sub)).unwrap();
            std::fs::write(d.path().join(sub).join(name), "").unwrap();
        }
        std::fs::write(d.path().join("osu_bw"), "").unwrap();
        assert_eq!(find_binary(d.path(), "osu_latency"), d.path().join("pt2pt/osu_latency"));
        assert_eq!(find_binary(d.path(), "osu_allreduce"), d.path().join("collective/blocking/osu_allreduce"));
        assert_eq!(find_binary(d.path(), "osu_bw"), d.path().join("osu_bw"));
        assert_eq!(find_binary(d.path(), "osu_bibw"), d.path().join("osu_bibw"));
    }

    #[test]
    fn unwritable_results_dir() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("file");
        std::fs::write(&f, "x").unwrap();
        let e = SuiteError::from(run_dir::create(&f.join("sub"), "s", "suite", None, None).unwrap_err());
        assert!(e.to_string().starts_with("cannot create the run directory"), "{e}");
        assert_eq!(e.exit_code(), 1);
    }
}
