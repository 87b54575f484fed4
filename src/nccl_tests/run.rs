//! A `*_perf` binary from argv to exit status: NCCL found and asked its
//! version (which options and types nccl-tests offers depends on it), the
//! command line and environment read as nccl-tests reads them ([`super::cli`],
//! [`super::env`]), the settings turned into the shared core's [`Options`],
//! and the run handed to the runner as any OSU binary's is, with
//! nccl-tests' exit statuses ([`Front::NcclTests`]).
//!
//! What cannot run is refused before anything starts, in one line naming
//! the option: the device API (`-D`), with nccl-tests' own status for a
//! test that does not implement something (5), and CUDA graphs where CUDA
//! cannot capture (`-G` with `-y 1`, `-z 1` or `-z 2`), with its status
//! for a CUDA failure (2). Each is a setting nccl-tests reads; none is
//! silently ignored. `NCCL_TESTS_DEVICE` names every process's GPU, as in
//! nccl-tests. commbench's own long options that make sense here
//! (`--dry-run`, where the results go, placement, `--min-efficiency`) are
//! applied last, by the code the OSU binaries use
//! ([`crate::cli::options::Ours`]).

use std::io::{self, Write};
use std::time::Duration;

use super::cli::{self, Choice, Line, NcclType, NcclVersion, Parsed, RedOp, Settings, BAD_VALUE};
use super::env::Environment;
use crate::bench::registry::Registered;
use crate::bench::Bench;
use crate::datatype::{Datatype, Reduction};
use crate::options::{Backend, Blocking, Format, Options, RootRank, Validation};
use crate::runner::{self, Front, Launch};
use crate::spec::BenchSpec;
use crate::stats::RankTime;

/// nccl-tests' status for a setting the test does not implement
/// (`testNotImplemented`).
pub const NOT_IMPLEMENTED: i32 = 5;

/// nccl-tests' status for a failure of the test's own
/// (`testInternalError`): alltoallv's traffic matrix it cannot use.
pub const INTERNAL_ERROR: i32 = 1;

/// nccl-tests' status when CUDA refuses (`testCudaError`): a device that
/// does not exist.
pub const CUDA_ERROR: i32 = 2;

/// Why settings cannot run, each with its exit status.
#[derive(Debug, PartialEq)]
pub(crate) enum Refusal {
    /// A setting the core cannot honour yet ([`NOT_IMPLEMENTED`]).
    NotYet(String),
    /// A device no CUDA call can open ([`CUDA_ERROR`]).
    NoDevice(String),
    /// Settings CUDA itself refuses once the run starts ([`CUDA_ERROR`]).
    Cuda(String),
    /// A value of one of commbench's own options that means nothing
    /// ([`BAD_VALUE`], as nccl-tests' refused values).
    BadValue(String),
}

/// The status of a program whose shared library cannot be loaded, as the
/// dynamic loader ends a nccl-tests binary without libnccl.
pub const NO_LIBRARY: i32 = 127;

/// Runs nccl-tests' test of benchmark `B`'s collective and exits with its
/// status.
pub fn main<B: Bench + Launch<<B as Bench>::Needs>>() -> ! {
    let code = run::<B>();
    let _ = io::stdout().flush();
    crate::job::exit(code)
}

/// [`main`] without the exit: the process's arguments and environment,
/// the run, its status.
pub fn run<B: Bench + Launch<<B as Bench>::Needs>>() -> i32 {
    let entry = <B as Registered>::ENTRY;
    crate::topo::hwloc::skip_unused_plugins();
    let argv = crate::job::argv();
    let env = crate::job::launcher::detect();
    if env.rank.is_some() {
        // A rank whose launcher goes away ends with it.
        crate::job::signals::end_with_launcher(libc::SIGKILL);
    }
    let argv0 = argv.first().cloned().unwrap_or_else(|| entry.spec.name.to_string());
    let program = runner::program_name(&argv0).to_string();
    let version = match crate::gpu::nccl_lib::load() {
        Ok(lib) => {
            let (major, minor, patch) = lib.version();
            NcclVersion::of(major, minor, patch)
        }
        Err(e) => {
            crate::diag::say(&format!("{program}: {e}"));
            return NO_LIBRARY;
        }
    };
    // Every process reads its own command line and says what it finds,
    // as nccl-tests' processes do before MPI starts.
    let args = argv.get(1..).unwrap_or(&[]);
    let opts = match read(entry.spec, &argv0, args, version, |name| std::env::var(name).ok()) {
        Ok((opts, said)) => {
            print(&said);
            opts
        }
        Err((said, status)) => {
            print(&said);
            return status;
        }
    };
    if !opts.dry_run {
        if let Some(lines) = too_few_gpus(&opts, env.local_rank, crate::gpu::cuda::device_count()) {
            crate::diag::say(&lines);
            return NOT_IMPLEMENTED;
        }
    }
    runner::run_options(Front::NcclTests, entry, &argv, env, opts, B::message_bytes, |s| B::measure(s))
}

/// nccl-tests' check of a process's GPUs, before anything starts: its
/// first is `NCCL_TESTS_DEVICE` (or `--gpu`'s entry for the local rank),
/// else local rank x GPUs per process, and every one of its GPUs must
/// exist (no wrap-around, as nccl-tests). The two lines nccl-tests prints
/// where they do not (its status: 5), or None; None too where the driver
/// cannot say how many GPUs there are (the job then says why).
fn too_few_gpus(opts: &Options, local_rank: Option<usize>, count: Option<usize>) -> Option<String> {
    let count = count?;
    let lanes = opts.lanes();
    let lr = local_rank.unwrap_or(0);
    let first = match opts.placement.gpu.as_deref() {
        Some(list) if !list.is_empty() => list[lr % list.len()],
        _ => lr * lanes,
    };
    let need = first + lanes;
    (need > count).then(|| {
        format!(
            "Invalid number of GPUs: {need} requested but only {count} were found.\n\
             Please check the number of processes and GPUs per process."
        )
    })
}

/// The benchmark whose kernel each nccl-tests program runs over: its OSU
/// twin, or one only this front end runs
/// ([`crate::bench::registry::NCCL_TESTS_ONLY`]).
pub const PROGRAMS: [(&str, &str); 11] = [
    ("all_reduce_perf", "osu_allreduce"),
    ("all_gather_perf", "osu_allgather"),
    ("broadcast_perf", "osu_bcast"),
    ("reduce_scatter_perf", "osu_reduce_scatter"),
    ("reduce_perf", "osu_reduce"),
    ("alltoall_perf", "osu_alltoall"),
    ("gather_perf", "osu_gather"),
    ("scatter_perf", "osu_scatter"),
    ("sendrecv_perf", "sendrecv"),
    ("hypercube_perf", "hypercube"),
    ("alltoallv_perf", "alltoallv_traffic"),
];

/// Whether `program` (one of [`PROGRAMS`]) would run `args` with NCCL
/// `nccl` loaded and the environment `get` gives, without starting
/// anything: Ok, or every line it would print before it ends and its
/// status. For checking documented command lines.
pub fn accepts(
    program: &str,
    args: &[String],
    nccl: NcclVersion,
    get: impl Fn(&str) -> Option<String>,
) -> Result<(), (Vec<Line>, i32)> {
    let Some((_, osu)) = PROGRAMS.iter().find(|(p, _)| *p == program) else {
        return Err((vec![Line::Err(format!("{program} is not one of the nccl-tests programs"))], NOT_IMPLEMENTED));
    };
    let spec = crate::bench::registry::lookup(osu).map(|e| e.spec).expect("every program's twin is registered");
    read(spec, program, args, nccl, get).map(|_| ())
}

/// What a `*_perf` program started as `argv0` makes of `args` and its
/// environment (`get`) with NCCL `nccl` loaded: the core's options for
/// `spec` and the lines nccl-tests prints while reading, or every line to
/// print before it ends and its exit status.
fn read(
    spec: &BenchSpec,
    argv0: &str,
    args: &[String],
    nccl: NcclVersion,
    get: impl Fn(&str) -> Option<String>,
) -> Result<(Options, Vec<Line>), (Vec<Line>, i32)> {
    let program = runner::program_name(argv0);
    let (settings, mut said) = match cli::parse(argv0, args, nccl) {
        Parsed::Exit { said, status } => return Err((said, status)),
        Parsed::Run { settings, said } => (settings, said),
    };
    match options_from(spec, &settings, get, nccl) {
        Ok(opts) => Ok((opts, said)),
        Err((Line::Err(line), status)) => {
            said.push(Line::Err(format!("{program}: {line}")));
            Err((said, status))
        }
        Err((line, status)) => {
            said.push(line);
            Err((said, status))
        }
    }
}

/// The core's options for `settings` and the environment `get` gives, or
/// the line that refuses them and its status: ours on stderr (to be
/// prefixed with the program's name), or nccl-tests' own on stdout.
fn options_from(
    spec: &BenchSpec,
    settings: &Settings,
    get: impl Fn(&str) -> Option<String>,
    nccl: NcclVersion,
) -> Result<Options, (Line, i32)> {
    let environment = Environment::read(&get).map_err(|line| (Line::Err(line), BAD_VALUE))?;
    let mut opts = options(spec, settings, &environment, nccl).map_err(|refusal| match refusal {
        Refusal::NotYet(line) => (Line::Err(line), NOT_IMPLEMENTED),
        Refusal::NoDevice(line) | Refusal::Cuda(line) => (Line::Err(line), CUDA_ERROR),
        Refusal::BadValue(line) => (Line::Err(line), BAD_VALUE),
    })?;
    if spec.name == crate::bench::collective::alltoallv_traffic::SPEC.name {
        // alltoallv's pattern; what nccl-tests refuses in it, it says on
        // stdout in its own words and ends with testInternalError.
        let refuse = |line: String| (Line::Out(line), INTERNAL_ERROR);
        let (traffic, summary) = super::traffic_file::read(&get).map_err(refuse)?;
        if let (crate::traffic::Traffic::Matrix(_), Some(sweep)) = (&traffic, opts.sweep) {
            if sweep.min != sweep.max {
                return Err(refuse(
                    "-b and -e options must be set to the same value (e.g., -b 32M -e 32M) when using alltoallv \
                     traffic matrix mode."
                        .to_string(),
                ));
            }
        }
        opts.traffic = Some(traffic);
        opts.traffic_summary = summary;
    }
    Ok(opts)
}

/// `said`'s lines, each on its stream; a line on stderr in one write
/// ([`crate::diag::say`]), so that two ranks' lines merged by a launcher
/// never interleave.
fn print(said: &[Line]) {
    for line in said {
        match line {
            Line::Out(text) => println!("{text}"),
            Line::Err(text) => crate::diag::say(text),
        }
    }
    let _ = io::stdout().flush();
}

/// The core's reduction for nccl-tests' `-o` word.
fn reduction(op: RedOp) -> Reduction {
    match op {
        RedOp::Sum => Reduction::Sum,
        RedOp::Prod => Reduction::Prod,
        RedOp::Max => Reduction::Max,
        RedOp::Min => Reduction::Min,
        RedOp::Avg => Reduction::Avg,
        RedOp::MulSum => Reduction::MulSum,
    }
}

/// The core's datatype for nccl-tests' `-d` word.
fn datatype(t: NcclType) -> Datatype {
    match t {
        NcclType::Int8 => Datatype::Char,
        NcclType::Uint8 => Datatype::Uint8,
        NcclType::Int32 => Datatype::Int,
        NcclType::Uint32 => Datatype::Uint32,
        NcclType::Int64 => Datatype::Int64,
        NcclType::Uint64 => Datatype::Uint64,
        NcclType::Half => Datatype::Half,
        NcclType::Float => Datatype::Float,
        NcclType::Double => Datatype::Double,
        NcclType::Bfloat16 => Datatype::Bfloat16,
        NcclType::F8e4m3 => Datatype::F8e4m3,
        NcclType::F8e5m2 => Datatype::F8e5m2,
    }
}

/// The shared core's options for nccl-tests' `settings` and environment
/// with NCCL `nccl` loaded, or the line that says which setting the core
/// cannot honour yet.
pub(crate) fn options(
    spec: &BenchSpec,
    s: &Settings,
    env: &Environment,
    nccl: NcclVersion,
) -> Result<Options, Refusal> {
    // -t and -g: nccl-tests reads them with strtol and runs nothing for a
    // count below 1 (its loops do not start); the core needs one or more.
    let (Ok(threads @ 1..), Ok(gpus @ 1..)) = (usize::try_from(s.threads), usize::try_from(s.gpus)) else {
        return Err(Refusal::BadValue(format!(
            "-t {} -g {} (give 1 or more threads per process and GPUs per thread)",
            s.threads, s.gpus
        )));
    };
    // `-d all`: each type the loaded NCCL has, in nccl-tests' order, one
    // sweep after another (the job leaves out fp8 where its GPUs cannot
    // reduce it, as nccl-tests: `Plan::reducible_on`).
    let datatypes: Vec<Datatype> = match s.datatype {
        Choice::One(t) => vec![datatype(t)],
        Choice::All => NcclType::ALL.into_iter().filter(|t| t.offered(nccl)).map(datatype).collect(),
    };
    // `-o all`: each operation the loaded NCCL has, one sweep apiece on
    // the tests that loop over operations.
    let (reduction, reductions) = match s.op {
        Choice::One(op) => (reduction(op), Vec::new()),
        Choice::All => {
            let all: Vec<Reduction> = RedOp::ALL.into_iter().filter(|o| o.offered(nccl)).map(reduction).collect();
            (all[0], all)
        }
    };
    // `-r -1`: each rank in turn as the root, one sweep apiece on the
    // rooted tests.
    let (root, every_root) = match (usize::try_from(s.root), s.root) {
        (Ok(r), _) => (RootRank::Fixed(r), false),
        (_, -1) => (RootRank::Fixed(0), true),
        _ => return Err(Refusal::BadValue(format!("-r {} (give a rank, or -1 for each rank in turn)", s.root))),
    };
    let rank_time = match s.average {
        0 => RankTime::Rank0,
        1 => RankTime::Avg,
        2 => RankTime::Min,
        3 => RankTime::Max,
        n => {
            return Err(Refusal::BadValue(format!(
                "-a {n} (give 0 for rank 0's time, 1 the average over ranks, 2 the least or 3 the most)"
            )))
        }
    };
    let aggregate = match usize::try_from(s.agg_iters) {
        Ok(n) if n >= 1 => n,
        _ => {
            return Err(Refusal::BadValue(format!(
                "-m {} (give the calls to aggregate into one group, 1 or more)",
                s.agg_iters
            )))
        }
    };
    let blocking = match s.blocking {
        0 => Blocking::None,
        1 => Blocking::WaitAndBarrier,
        2 => Blocking::Wait,
        3 => Blocking::WaitEachGroupBarrierUntimed,
        n => {
            return Err(Refusal::BadValue(format!(
                "-z {n} (give 0 for calls back to back, 1 a wait and a barrier after each call, 2 a wait \
                 after each call, or 3 a wait and an untimed barrier after each group of -m calls)"
            )))
        }
    };
    // -D: nccl-tests' own CUDA kernels over NCCL's device API, which a
    // drop-in that loads NCCL at run time and compiles no CUDA cannot
    // offer; said as such, with the status for what a test lacks.
    if s.device_impl != 0 {
        return Err(Refusal::NotYet(format!(
            "-D {}: nccl-tests' device-side implementations (its own CUDA kernels over NCCL's device API) are not \
             offered by this drop-in; leave -D out to time NCCL's own collectives",
            s.device_impl
        )));
    }
    // -G: each size's timed calls captured into a CUDA graph, launched
    // N times (off at 0 or below: nccl-tests tests for 1 or more). CUDA
    // captures no work on the legacy default stream (-y 1), and no wait
    // for a call inside a capture (-z 1 and -z 2 wait after each call),
    // so nccl-tests fails on both with CUDA's error once the first size
    // starts; here they are refused before anything starts, with its
    // status.
    let graph_launches = usize::try_from(s.graph_launches).unwrap_or(0);
    if graph_launches > 0 {
        let why = "operation not permitted when stream is capturing";
        if s.stream_null != 0 {
            return Err(Refusal::Cuda(format!(
                "-G {graph_launches} with -y {}: CUDA cannot capture work on the legacy default stream into a \
                 graph ({why}); leave out -y, or -G",
                s.stream_null
            )));
        }
        if matches!(blocking, Blocking::WaitAndBarrier | Blocking::Wait) {
            return Err(Refusal::Cuda(format!(
                "-G {graph_launches} with -z {}: a call inside a CUDA graph capture cannot be waited for ({why}); \
                 give -z 0, or leave out -G",
                s.blocking
            )));
        }
    }
    let mut o = crate::cli::options::defaults(spec);
    if let Some(first) = env.first_device {
        // Every process starts at this GPU (nccl-tests adds only the
        // GPU's number within the process), wherever its local rank is;
        // nothing is bound, as nccl-tests binds nothing.
        let Ok(device) = usize::try_from(first) else {
            return Err(Refusal::NoDevice(format!("NCCL_TESTS_DEVICE={first} names no CUDA device")));
        };
        o.placement.gpu = Some(vec![device]);
        o.placement.policy = Some(crate::topo::request::BindPolicy::None);
    }
    o.backend = Backend::Nccl;
    o.format = Format::NcclTests;
    o.datatypes = datatypes;
    o.reduction = reduction;
    o.reductions = reductions;
    o.every_root = every_root;
    // -p: nccl-tests' threads make their own communicators (1) or the main
    // thread makes them all in one group (0); here every GPU's thread
    // always makes its own (src/runner/lanes.rs), which is -p 1, and -p 0
    // ends in the same communicators, so either is accepted; the preamble
    // says which was asked, as nccl-tests'.
    o.parallel_init = s.parallel_init != 0;
    o.timestamps = s.report_timestamps != 0;
    o.default_stream = s.stream_null != 0;
    o.cputime = s.report_cputime != 0;
    o.memory_report = s.memory_report != 0;
    // NCCL_TESTS_SPLIT: a communicator per colour, all timed at once
    // (of whatever sizes the colours give).
    o.split = env.split;
    // -R: 1 local, 2 symmetric (the command line made 2 local before NCCL
    // 2.27 and ignored -R before 2.19); any other non-zero value registers
    // locally, as nccl-tests' test of it does.
    o.registration = match s.local_register {
        0 => None,
        2 => Some(crate::options::Registration::Symmetric),
        _ => Some(crate::options::Registration::Local),
    };
    // -x: nccl-tests sets the policy where it is 0 or more (the command
    // line left -1 where the loaded NCCL lacks it).
    o.cta_policy = (s.cta_policy >= 0).then_some(s.cta_policy);
    // -u: nccl-tests reads it with strtol and offsets by it as a count.
    o.unalign = match usize::try_from(s.unalign) {
        Ok(n) => n,
        Err(_) => return Err(Refusal::BadValue(format!("-u {} (give 0 or more elements)", s.unalign))),
    };
    // -I 1 (the command line said why any other value is off), with -K's
    // skip (likewise, 0 where out of range).
    o.iteration_events = (s.per_iter_timing == 1).then(|| usize::try_from(s.per_iter_skip).unwrap_or(0));
    // -J: JSON where the name ends in .json; any other name is ignored, as
    // nccl-tests ignores it.
    o.json_output = s.output_file.as_deref().filter(|p| crate::report::nccl_json::is_json_path(p)).map(Into::into);
    o.threads_per_process = threads;
    o.gpus_per_thread = gpus;
    o.root = root;
    o.rank_time = rank_time;
    o.aggregate = aggregate;
    o.graph_launches = graph_launches;
    o.blocking = blocking;
    o.iterations = Some(usize::try_from(s.iters).unwrap_or(0));
    o.warmup = Some(usize::try_from(s.warmup_iters).unwrap_or(0));
    // -c N: N checks (a count below 0 prints its #wrong, as nccl-tests
    // does, but checks nothing).
    o.validation = (s.check != 0).then_some(Validation { log_dir: None });
    o.check_rounds = s.check;
    // nccl-tests checks one more call after the timed ones, with no
    // repetitions before it (OSU's -u).
    o.validation_warmup = 0;
    let sweep = s.sweep();
    o.min_size = usize::try_from(sweep.min).unwrap_or(usize::MAX);
    o.max_size = usize::try_from(sweep.max).unwrap_or(usize::MAX);
    o.sweep = Some(sweep);
    // nccl-tests' verdict: below 0.9 times the floor fails the run.
    o.min_busbw = env.min_bw.map(|floor| floor * 0.9);
    if s.timeout_s > 0 {
        o.timeout = Some(Duration::from_secs(s.timeout_s as u64));
    }
    // commbench's own options last, over nccl-tests' settings.
    let bad = |e: crate::cli::CliError| Refusal::BadValue(e.to_string());
    let mut ours = crate::cli::options::Ours::default();
    for (name, value) in &s.commbench {
        if *name == "gpu" && env.first_device.is_some() {
            return Err(Refusal::BadValue(
                "--gpu and NCCL_TESTS_DEVICE both choose the GPUs: give one of them".to_string(),
            ));
        }
        ours.apply(&mut o, name, value.as_deref()).map_err(bad)?;
    }
    ours.finish(&mut o).map_err(bad)?;
    crate::cli::options::check_min_efficiency(spec, &o).map_err(bad)?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ResultsDest;
    use std::path::PathBuf;

    const V: NcclVersion = NcclVersion::of(2, 19, 3);

    /// The options `./all_reduce_perf args` runs with in environment
    /// `env`, or its last line (which names the program without its
    /// directory) and status.
    fn opts(args: &[&str], env: &[(&str, &str)]) -> Result<Options, (String, i32)> {
        let spec = crate::bench::registry::lookup("osu_allreduce").expect("registered").spec;
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let get = |name: &str| env.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
        read(spec, "./all_reduce_perf", &args, V, get).map(|(o, _)| o).map_err(|(said, status)| {
            let last = match said.last() {
                Some(Line::Err(t) | Line::Out(t)) => t.clone(),
                None => String::new(),
            };
            (last, status)
        })
    }

    #[test]
    fn commbench_s_options_apply_over_nccl_tests_settings() {
        let o = opts(&["-b", "8", "-e", "16G", "-f", "2", "--dry-run=64", "--no-results", "--verbose"], &[]).unwrap();
        assert_eq!((o.dry_run, o.dry_run_ranks, o.verbose), (true, Some(64), true));
        assert_eq!(o.results, ResultsDest::Off);
        assert_eq!(o.sweep.map(|s| s.last()), Some(Some(16 << 30)));
        let o = opts(&["--csv", "x.csv", "--gpu", "1,0", "--min-efficiency", "80"], &[]).unwrap();
        assert_eq!(o.results, ResultsDest::Csv(PathBuf::from("x.csv")));
        assert!(o.results_chosen);
        assert_eq!(o.placement.gpu, Some(vec![1, 0]));
        assert_eq!(o.min_efficiency, Some(80.0));
        // Without ours, nccl-tests' own settings only.
        let o = opts(&[], &[]).unwrap();
        assert!(!o.dry_run && !o.verbose && o.min_efficiency.is_none() && o.placement.gpu.is_none());
    }

    #[test]
    fn graph_launches_reach_the_core_where_cuda_can_capture() {
        assert_eq!(opts(&[], &[]).unwrap().graph_launches, 0);
        assert_eq!(opts(&["-G", "-3"], &[]).unwrap().graph_launches, 0, "below 1: off, as nccl-tests");
        assert_eq!(opts(&["-G", "5", "-m", "2", "-C", "1"], &[]).unwrap().graph_launches, 5);
        // -z 3 beside -G is turned off by nccl-tests' command line.
        let o = opts(&["-G", "2", "-z", "3"], &[]).unwrap();
        assert_eq!((o.graph_launches, o.blocking), (2, Blocking::None));
        let (line, status) = opts(&["-G", "2", "-z", "1"], &[]).unwrap_err();
        assert_eq!(status, CUDA_ERROR);
        assert!(
            line.starts_with(
                "all_reduce_perf: -G 2 with -z 1: a call inside a CUDA graph capture cannot be waited for"
            ),
            "{line}"
        );
        let (line, status) = opts(&["-G", "1", "-y", "1"], &[]).unwrap_err();
        assert_eq!(status, CUDA_ERROR);
        assert!(
            line.starts_with("all_reduce_perf: -G 1 with -y 1: CUDA cannot capture work on the legacy default stream"),
            "{line}"
        );
        // Nothing to capture, nothing refused.
        assert_eq!(opts(&["-G", "0", "-z", "1", "-y", "1"], &[]).unwrap().graph_launches, 0);
    }

    #[test]
    fn averaging_aggregation_and_blocking_reach_the_core() {
        let o = opts(&[], &[]).unwrap();
        assert_eq!((o.rank_time, o.aggregate), (RankTime::Avg, 1));
        for (a, want) in [("0", RankTime::Rank0), ("1", RankTime::Avg), ("2", RankTime::Min), ("3", RankTime::Max)] {
            let o = opts(&["-a", a, "-m", "4", "-n", "5"], &[]).unwrap();
            assert_eq!((o.rank_time, o.aggregate, o.iterations), (want, 4, Some(5)), "-a {a}");
        }
        for (z, want) in [
            ("0", Blocking::None),
            ("1", Blocking::WaitAndBarrier),
            ("2", Blocking::Wait),
            ("3", Blocking::WaitEachGroupBarrierUntimed),
        ] {
            assert_eq!(opts(&["-z", z], &[]).unwrap().blocking, want, "-z {z}");
        }
        for args in [&["-a", "-1"][..], &["-a", "4"], &["-m", "0"], &["-m", "-2"], &["-z", "4"], &["-z", "-1"]] {
            let (line, status) = opts(args, &[]).unwrap_err();
            assert_eq!(status, BAD_VALUE, "{args:?}: {line}");
            assert!(line.starts_with(&format!("all_reduce_perf: {} {} (give ", args[0], args[1])), "{line}");
        }
    }

    /// `-d all`: every type the loaded NCCL has, in nccl-tests' order
    /// (2.19 has no fp8; 2.24 adds it; the job drops it on older GPUs).
    #[test]
    fn every_type_runs_in_nccl_tests_order() {
        let names = |o: Options| o.datatypes.iter().map(|d| d.nccl_name()).collect::<Vec<_>>().join(" ");
        let o = opts(&["-d", "all"], &[]).unwrap();
        assert_eq!(names(o), "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16");
        let spec = crate::bench::registry::lookup("osu_allgather").expect("registered").spec;
        let args: Vec<String> = ["-d", "all"].iter().map(|a| a.to_string()).collect();
        let (o, _) = read(spec, "all_gather_perf", &args, NcclVersion::of(2, 24, 3), |_| None).unwrap();
        assert!(names(o).ends_with("double bfloat16 f8e4m3 f8e5m2"));
        assert_eq!(names(opts(&["-d", "half"], &[]).unwrap()), "half");
    }

    /// `-D` (with the `-R 2` it needs, on an NCCL that has the device
    /// API) is refused in one line that says why, with status 5.
    #[test]
    fn the_device_api_is_refused_in_one_line() {
        let spec = crate::bench::registry::lookup("osu_allreduce").expect("registered").spec;
        let args: Vec<String> = ["-D", "1", "-R", "2"].iter().map(|a| a.to_string()).collect();
        let Err((said, status)) = read(spec, "./all_reduce_perf", &args, NcclVersion::of(2, 28, 3), |_| None) else {
            panic!("-D 1 ran");
        };
        assert_eq!(status, NOT_IMPLEMENTED);
        assert_eq!(
            said,
            [Line::Err(
                "all_reduce_perf: -D 1: nccl-tests' device-side implementations (its own CUDA kernels over NCCL's \
                 device API) are not offered by this drop-in; leave -D out to time NCCL's own collectives"
                    .into()
            )]
        );
    }

    #[test]
    fn a_bad_value_of_ours_is_one_line_and_nccl_tests_status_for_bad_values() {
        for (args, env, line) in [
            (&["--dry-run=0"][..], &[][..], "all_reduce_perf: Invalid value [--dry-run=0] (give the ranks to plan for, e.g. 512)"),
            (&["--csv", "a.csv", "--no-results"], &[], "all_reduce_perf: --no-results cannot be combined with --csv"),
            (&["--min-efficiency", "120"], &[], "all_reduce_perf: Invalid value [--min-efficiency 120] (give a percentage of the path's peak, above 0 and at most 100, e.g. 80 or 80%)"),
            (
                &["--gpu", "1"],
                &[("NCCL_TESTS_DEVICE", "2")],
                "all_reduce_perf: --gpu and NCCL_TESTS_DEVICE both choose the GPUs: give one of them",
            ),
        ] {
            assert_eq!(opts(args, env).unwrap_err(), (line.to_string(), BAD_VALUE), "{args:?}");
        }
        let (line, status) = opts(&["--bind", "sideways"], &[]).unwrap_err();
        assert!(line.starts_with("all_reduce_perf: Invalid value [--bind sideways] ("), "{line}");
        assert_eq!(status, BAD_VALUE);
    }
}
