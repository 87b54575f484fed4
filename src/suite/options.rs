//! `commbench suite`'s command line (clap) and its checks, turned into the
//! settings the rest of the suite works from.

use std::path::PathBuf;

use clap::Parser;

use super::plan::{self, BenchArgs};

/// Runs a set of OSU benchmarks one after another through an MPI launcher and
/// leaves one directory with every benchmark's OSU output, CSV and run record,
/// plus summary.md. The OSU tables also go to stdout, one after another;
/// progress goes to stderr.
#[derive(Parser, Debug)]
#[command(
    name = "commbench suite",
    disable_version_flag = true,
    after_help = "Arguments after `--` go to the launcher, before the binary (e.g. `-- --mca pml ucx`).\n\
                  Point-to-point benchmarks (latency, bw, bibw) always run on 2 ranks, one per node when there \
                  are several nodes;\nmbw_mr and multi_lat on --np rounded down to even; collectives on --np.\n\
                  Exit status: 0 all passed, 1 a benchmark failed (see summary.md), 2 bad usage."
)]
pub(crate) struct SuiteArgs {
    /// Benchmarks to run instead of the default eight (latency, bw, bibw, mbw_mr, barrier,
    /// allreduce, allgather, alltoall); comma-separated, with or without `osu_`
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub bench: Vec<String>,
    /// Benchmarks to run in addition (e.g. `--add bcast,reduce,multi_lat`)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub add: Vec<String>,
    /// Launcher: mpirun, mpiexec, mpiexec.mpich, mpiexec.hydra or srun [default: srun inside a
    /// Slurm allocation, else the launcher of the MPI the binaries were built with]
    #[arg(long, value_name = "PROGRAM")]
    pub launcher: Option<String>,
    /// Ranks for the collectives and mbw_mr [default: SLURM_NTASKS in an allocation, else 2]
    #[arg(long, value_name = "N")]
    pub np: Option<usize>,
    /// Ranks per node for the collectives and mbw_mr [default: the launcher's placement]
    #[arg(long, value_name = "N")]
    pub ppn: Option<usize>,
    /// Nodes available [default: the hosts in --hostfile, else the Slurm allocation's, else 1]
    #[arg(long, value_name = "N")]
    pub nodes: Option<usize>,
    /// Hostfile handed to the launcher (Open MPI `host slots=N` or MPICH `host:N`)
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// Message sizes for every benchmark that takes -m (OSU syntax, e.g. 1:4096)
    #[arg(short = 'm', long = "message-size", value_name = "[MIN:]MAX")]
    pub message_size: Option<String>,
    /// Timed iterations for every benchmark
    #[arg(short = 'i', long, value_name = "N")]
    pub iterations: Option<String>,
    /// Warm-up iterations for every benchmark
    #[arg(short = 'x', long, value_name = "N")]
    pub warmup: Option<String>,
    /// Window for the benchmarks that have one (bw, bibw, mbw_mr)
    #[arg(short = 'W', long = "window-size", value_name = "N")]
    pub window: Option<String>,
    /// Min, max and iterations columns for the collectives (OSU -f)
    #[arg(short = 'f', long)]
    pub full: bool,
    /// Run each size until the 95% interval of its value is within PCT of it (e.g. 2%), at most
    /// OSU's count; passed to every benchmark that can use it. summary.md then compares the
    /// iterations run with the fixed counts they replaced
    #[arg(long, value_name = "PCT")]
    pub precision: Option<String>,
    /// With --precision: iterations every size runs at least
    #[arg(long = "min-iterations", value_name = "N")]
    pub min_iterations: Option<String>,
    /// With --precision: a size's time limit (2, 500ms, 1m)
    #[arg(long = "max-time-per-size", value_name = "SECS")]
    pub max_time_per_size: Option<String>,
    /// Fail a benchmark whose bandwidth plateau is below PCT% of its path's peak (passed to every
    /// benchmark that reports a bandwidth as --min-efficiency)
    #[arg(long = "min-efficiency", value_name = "PCT")]
    pub min_efficiency: Option<String>,
    /// More benchmark arguments, passed as they are to every benchmark (repeatable)
    #[arg(long = "args", value_name = "ARGS", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Arguments for one benchmark only, e.g. `--bench-args "mbw_mr=-W 512"` (repeatable)
    #[arg(long = "bench-args", value_name = "NAME=ARGS", allow_hyphen_values = true)]
    pub bench_args: Vec<String>,
    /// Binding policy, passed to every benchmark as --bind; the launcher's own binding is then
    /// switched off (unless POLICY is none)
    #[arg(long, value_name = "POLICY")]
    pub bind: Option<String>,
    /// CPUs to bind to, passed to every benchmark as --cpu-list; the launcher's own binding is then
    /// switched off
    #[arg(long = "cpu-list", value_name = "LIST")]
    pub cpu_list: Option<String>,
    /// Network device, passed to every benchmark as --nic; the launcher's own binding is then
    /// switched off
    #[arg(long, value_name = "DEV")]
    pub nic: Option<String>,
    /// GPUs, passed to every benchmark as --gpu; the launcher's own binding is then switched off
    #[arg(long, value_name = "LIST")]
    pub gpu: Option<String>,
    /// Where the run directory goes [default: $COMMBENCH_RESULTS_DIR, else results]
    #[arg(long = "results-dir", value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
    /// Each benchmark's stall watchdog: it ends itself (exit 124) when no iteration completes
    /// for SECONDS
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub timeout: Option<f64>,
    /// Wall-clock limit per benchmark: the suite stops its launcher after SECONDS
    #[arg(long = "max-time", value_name = "SECONDS", allow_negative_numbers = true)]
    pub max_time: Option<f64>,
    /// A word added to the run directory's name (e.g. `1ppn`)
    #[arg(long, value_name = "WORD")]
    pub tag: Option<String>,
    /// Where the osu_* binaries are [default: beside this commbench]. The launcher follows the MPI
    /// they are linked with. OSU's own binaries (e.g. its libexec/osu-micro-benchmarks/mpi, whose
    /// subfolders are searched) work too: they get only OSU options, and their output becomes the
    /// same CSV
    #[arg(long = "bin-dir", value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// Keep the OSU tables off stdout (they are always in `<bench>.txt`)
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// After a benchmark hangs (its --timeout watchdog or --max-time stopped it), search the hosts
    /// (the hostfile's, else those its run record names) with `commbench locate`, each probe bounded by
    /// --max-time (else 60 s), and put what it finds in the summary
    #[arg(long = "locate-on-hang")]
    pub locate_on_hang: bool,
    /// Print each benchmark's command line and run nothing
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// Run consecutive benchmarks that need the same job (ranks, placement, --timeout) in one
    /// launch, so MPI starts once for them: each keeps its own files and values
    #[arg(long = "one-launch")]
    pub one_launch: bool,
    /// At the end, add the suite's runs to this history file (`commbench history add`); a run
    /// the history refuses (one that did not complete) is said, the suite's exit status is its own
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Launcher arguments (after `--`)
    #[arg(last = true, value_name = "LAUNCHER ARGS")]
    pub launcher_args: Vec<String>,
}

/// A usage problem (exit 2).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("commbench suite: {0}")]
pub struct UsageError(pub String);

impl From<plan::PlanError> for UsageError {
    fn from(e: plan::PlanError) -> UsageError {
        UsageError(e.to_string())
    }
}

/// The checked settings.
#[derive(Clone, Debug)]
pub struct Settings {
    pub benchmarks: Vec<&'static crate::spec::BenchSpec>,
    pub launcher: Option<String>,
    pub np: Option<usize>,
    pub ppn: Option<usize>,
    pub nodes: Option<usize>,
    pub hostfile: Option<PathBuf>,
    pub bench_args: BenchArgs,
    /// Whether commbench places the ranks (the launcher's binding goes off).
    pub places_ranks: bool,
    pub results_dir: Option<PathBuf>,
    pub max_time: Option<f64>,
    pub tag: Option<String>,
    pub bin_dir: Option<PathBuf>,
    pub dry_run: bool,
    /// `--one-launch`: benchmarks that can share a job share one launch.
    pub one_launch: bool,
    pub quiet: bool,
    pub locate_on_hang: bool,
    pub launcher_args: Vec<String>,
    /// `--history`: the history file the runs are added to at the end.
    pub history: Option<PathBuf>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    Run(Box<Settings>),
    /// Help text for stdout (exit 0).
    Help(String),
}

use crate::launch::MAX_RANKS;

fn positive(name: &str, v: Option<usize>) -> Result<Option<usize>, UsageError> {
    match v {
        Some(0) => Err(UsageError(format!("{name} must be at least 1"))),
        Some(n) if n > MAX_RANKS => Err(UsageError(format!("{name} must be at most {MAX_RANKS}"))),
        v => Ok(v),
    }
}

fn seconds(name: &str, v: Option<f64>) -> Result<Option<f64>, UsageError> {
    match v {
        Some(s) if !crate::cli::options::seconds_in_range(s) => Err(UsageError(format!(
            "{name} must be a positive number of seconds from {} to {} (30 days)",
            crate::cli::options::MIN_SECONDS,
            crate::cli::options::MAX_SECONDS
        ))),
        v => Ok(v),
    }
}

/// `--precision` and its companions, checked as the benchmarks check them
/// (so that a bad value stops the suite before anything runs), as the
/// arguments every benchmark that can use them gets.
fn precision_args(a: &SuiteArgs) -> Result<Vec<String>, UsageError> {
    use crate::stats::precision::{parse_max_time_per_size, parse_min_iterations, parse_precision};
    let usage = |e: crate::stats::precision::PrecisionOptionError| UsageError(e.to_string());
    let mut args = Vec::new();
    let Some(p) = &a.precision else {
        for (flag, given) in
            [("--min-iterations", a.min_iterations.is_some()), ("--max-time-per-size", a.max_time_per_size.is_some())]
        {
            if given {
                return Err(UsageError(format!("{flag} only applies with --precision")));
            }
        }
        return Ok(args);
    };
    parse_precision(p).map_err(usage)?;
    args.extend(["--precision".to_string(), p.clone()]);
    if let Some(n) = &a.min_iterations {
        parse_min_iterations(n).map_err(usage)?;
        args.extend(["--min-iterations".to_string(), n.clone()]);
    }
    if let Some(t) = &a.max_time_per_size {
        parse_max_time_per_size(t).map_err(usage)?;
        args.extend(["--max-time-per-size".to_string(), t.clone()]);
    }
    Ok(args)
}

/// Parses the arguments after `suite`.
pub fn parse(args: &[String]) -> Result<Parsed, UsageError> {
    crate::args::check_arg_lengths(args).map_err(UsageError)?;
    let argv = std::iter::once("commbench suite".to_string()).chain(args.iter().cloned());
    let a = match SuiteArgs::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
                return Ok(Parsed::Help(e.render().to_string()));
            }
            // clap's own message, first line only, without its "error: ".
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_string();
            return Err(UsageError(format!("{first} (see commbench suite --help)")));
        }
    };
    let benchmarks = plan::select(&a.bench, &a.add)?;
    let mut osu = Vec::new();
    for (letter, v) in [('m', &a.message_size), ('i', &a.iterations), ('x', &a.warmup), ('W', &a.window)] {
        if let Some(v) = v {
            osu.push((letter, Some(v.clone())));
        }
    }
    if a.full {
        osu.push(('f', None));
    }
    let mut placement = Vec::new();
    for (name, v) in [("--bind", &a.bind), ("--cpu-list", &a.cpu_list), ("--nic", &a.nic), ("--gpu", &a.gpu)] {
        if let Some(v) = v {
            placement.extend([name.to_string(), v.clone()]);
        }
    }
    let per_bench = a.bench_args.iter().map(|s| plan::parse_bench_args(s)).collect::<Result<Vec<_>, _>>();
    let per_bench = per_bench?;
    if let Some(l) = &a.launcher {
        // Checked again once the MPI library is known; the name is checked here.
        crate::launch::Launcher::named(l, crate::launch::MpiFlavor::Unknown).map_err(UsageError)?;
    }
    if let Some(t) = &a.tag {
        if t.is_empty() || !t.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(UsageError(format!("--tag '{t}' may use only letters, digits, '-', '_' and '.'")));
        }
    }
    let timeout = seconds("--timeout", a.timeout)?;
    let precision = precision_args(&a)?;
    if let Some(p) = &a.min_efficiency {
        if crate::cli::options::parse_percent(p).is_none() {
            return Err(UsageError(format!(
                "--min-efficiency '{p}' is not a percentage above 0 and at most 100 (e.g. 80 or 80%)"
            )));
        }
    }
    let places_ranks = a.cpu_list.is_some()
        || match a.bind.as_deref() {
            Some("none") => false,
            Some(_) => true,
            None => a.nic.is_some() || a.gpu.is_some(),
        };
    Ok(Parsed::Run(Box::new(Settings {
        benchmarks,
        launcher: a.launcher,
        np: positive("--np", a.np)?,
        ppn: positive("--ppn", a.ppn)?,
        nodes: positive("--nodes", a.nodes)?,
        hostfile: a.hostfile,
        bench_args: BenchArgs {
            osu,
            verbatim: a.args.iter().flat_map(|s| crate::launch::split_words(s)).collect(),
            per_bench,
            placement,
            timeout: timeout.map(|t| t.to_string()),
            precision,
            min_efficiency: a.min_efficiency,
        },
        places_ranks,
        results_dir: a.results_dir,
        max_time: seconds("--max-time", a.max_time)?,
        tag: a.tag,
        bin_dir: a.bin_dir,
        dry_run: a.dry_run,
        one_launch: a.one_launch,
        quiet: a.quiet,
        locate_on_hang: a.locate_on_hang,
        launcher_args: a.launcher_args,
        history: a.history,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Settings, UsageError> {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&v)? {
            Parsed::Run(s) => Ok(*s),
            Parsed::Help(_) => panic!("help"),
        }
    }

    #[test]
    fn defaults() {
        let s = run(&[]).unwrap();
        assert_eq!(s.benchmarks.len(), 8);
        assert_eq!((s.np, s.ppn, s.nodes), (None, None, None));
        assert_eq!(s.bench_args, BenchArgs::default());
        assert!(s.launcher_args.is_empty());
    }

    #[test]
    fn everything_passes_through() {
        let s = run(&[
            "--bench",
            "latency,allreduce",
            "--np",
            "4",
            "--ppn",
            "2",
            "-m",
            "1:4096",
            "-i",
            "100",
            "-f",
            "--args",
            "-x 5 --no-results",
            "--bench-args",
            "allreduce=-T mpi_float",
            "--bind",
            "nic",
            "--cpu-list",
            "80",
            "--nic",
            "mlx5_2:1",
            "--gpu",
            "0,1",
            "--timeout",
            "30",
            "--launcher",
            "srun",
            "--",
            "--cpu-bind=none",
            "-v",
        ])
        .unwrap();
        assert_eq!(s.benchmarks.iter().map(|b| b.name).collect::<Vec<_>>(), ["osu_latency", "osu_allreduce"]);
        assert_eq!((s.np, s.ppn), (Some(4), Some(2)));
        let b = &s.bench_args;
        assert_eq!(b.osu, vec![('m', Some("1:4096".into())), ('i', Some("100".into())), ('f', None)]);
        assert_eq!(b.verbatim, ["-x", "5", "--no-results"]);
        assert_eq!(b.per_bench, vec![("osu_allreduce".to_string(), vec!["-T".to_string(), "mpi_float".to_string()])]);
        assert_eq!(b.placement, ["--bind", "nic", "--cpu-list", "80", "--nic", "mlx5_2:1", "--gpu", "0,1"]);
        assert_eq!(b.timeout.as_deref(), Some("30"));
        assert_eq!(s.launcher.as_deref(), Some("srun"));
        assert_eq!(s.launcher_args, ["--cpu-bind=none", "-v"]);
        assert!(s.places_ranks);
    }

    /// Which placement options hand the binding over from the launcher.
    #[test]
    fn who_places_the_ranks() {
        let places = |args: &[&str]| run(args).unwrap().places_ranks;
        assert!(!places(&[]));
        assert!(places(&["--cpu-list", "1,0"]));
        assert!(places(&["--bind", "core"]));
        assert!(places(&["--nic", "mlx5_0"]));
        assert!(!places(&["--bind", "none", "--nic", "mlx5_0"]));
        assert!(places(&["--bind", "none", "--cpu-list", "3"]));
    }

    #[test]
    fn usage_errors() {
        let e = |args: &[&str]| run(args).unwrap_err().0;
        assert!(e(&["--np", "0"]).contains("--np must be at least 1"));
        assert!(e(&["--bench", "nope"]).starts_with("unknown benchmark 'nope'"));
        assert!(e(&["--launcher", "aprun"]).starts_with("unknown launcher 'aprun'"));
        assert!(e(&["--timeout", "-1"]).contains("--timeout must be a positive"));
        assert!(e(&["--tag", "a/b"]).contains("--tag 'a/b'"));
        let m = e(&["--frobnicate"]);
        assert!(m.contains("--frobnicate") && m.ends_with("(see commbench suite --help)"), "{m}");
        assert!(!m.contains('\n'));
    }

    /// --precision and its companions go to the benchmarks as given, after
    /// the same checks the benchmarks make.
    #[test]
    fn precision_passes_through() {
        let s = run(&["--precision", "2%", "--min-iterations", "50", "--max-time-per-size", "500ms"]).unwrap();
        assert_eq!(
            s.bench_args.precision,
            ["--precision", "2%", "--min-iterations", "50", "--max-time-per-size", "500ms"]
        );
        assert!(run(&[]).unwrap().bench_args.precision.is_empty());
        let e = |args: &[&str]| run(args).unwrap_err().to_string();
        assert!(e(&["--precision", "2"]).starts_with("commbench suite: --precision '2': give a percentage"));
        assert!(e(&["--precision", "2%", "--min-iterations", "0"]).contains("--min-iterations '0'"));
        assert_eq!(
            e(&["--max-time-per-size", "2"]),
            "commbench suite: --max-time-per-size only applies with --precision"
        );
    }

    #[test]
    fn help() {
        match parse(&["--help".to_string()]).unwrap() {
            Parsed::Help(h) => assert!(h.contains("--launcher") && h.contains("Exit status"), "{h}"),
            Parsed::Run(_) => panic!("expected help"),
        }
    }
}
