//! The rules that turn a benchmark's option words into its `Options`
//! (src/options.rs). Error texts follow OSU 7.4 where OSU reports the problem;
//! where OSU silently accepts something meaningless we say what is wrong.

use std::path::PathBuf;
use std::time::Duration;

use super::getopt::{OptId, Token};
use super::CliError;
use crate::bench::registry;
use crate::datatype::Datatype;
pub use crate::options::*;
use crate::spec::{BenchSpec, Workers, DEFAULT_VALIDATION_WARMUP, MAX_VALIDATION_WARMUP};
use crate::stats::precision;
use crate::text::or_list;
use crate::topo::request::PlacementRequest;

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    Help,
    /// `-v`, with the accelerator of a `-d` given before it (OSU names it
    /// in the title then).
    Version(Option<Accel>),
    Run(Box<Options>),
}

/// The options of `spec` before any word is read: OSU's defaults.
pub(crate) fn defaults(spec: &BenchSpec) -> Options {
    let from_env = std::env::var_os("COMMBENCH_RESULTS_DIR").filter(|v| !v.is_empty()).map(PathBuf::from);
    let results_chosen = from_env.is_some();
    let results = from_env.unwrap_or_else(|| PathBuf::from("results"));
    Options {
        min_size: spec.min_size,
        max_size: spec.max_size,
        iterations: None,
        warmup: None,
        window: crate::spec::DEFAULT_WINDOW,
        window_given: false,
        buffers: BufferMode::Single,
        validation: None,
        validation_warmup: DEFAULT_VALIDATION_WARMUP,
        datatypes: Vec::new(),
        tails: None,
        pairs: None,
        print_rate: true,
        vary_window: false,
        full: false,
        test_calls: 0,
        workers: spec.workers.map(|w| match w {
            // OSU's defaults: one sender thread, two receiver threads; two
            // forked processes on each side.
            Workers::Threads => WorkerCounts { sender: None, receiver: 2 },
            Workers::Processes => WorkerCounts { sender: Some(2), receiver: 2 },
        }),
        mem_limit: None,
        in_place: false,
        root: RootRank::Fixed(0),
        reduction: crate::datatype::Reduction::Sum,
        reductions: Vec::new(),
        every_root: false,
        threads_per_process: 1,
        gpus_per_thread: 1,
        timestamps: false,
        json_output: None,
        parallel_init: false,
        cputime: false,
        iteration_events: None,
        memory_report: false,
        unalign: 0,
        traffic: None,
        registration: None,
        split: crate::options::Split::None,
        traffic_summary: false,
        cta_policy: None,
        check_rounds: 1,
        default_stream: false,
        rank_time: crate::stats::RankTime::Avg,
        aggregate: 1,
        graph_launches: 0,
        blocking: crate::options::Blocking::None,
        neighborhood: Neighborhood::Cart { dims: 1, radius: 1 },
        results: ResultsDest::Dir(results),
        results_chosen,
        verbose: false,
        buffer_locations: None,
        backend: Backend::Mpi,
        accel: None,
        timeout: Some(crate::job::watchdog::DEFAULT_TIMEOUT),
        placement: PlacementRequest::default(),
        format: Format::Osu,
        min_busbw: None,
        min_efficiency: None,
        precision: None,
        min_iterations: None,
        max_time_per_size: None,
        ignored: Vec::new(),
        win: None,
        sync: None,
        dry_run: false,
        dry_run_ranks: None,
        sweep: None,
    }
}

/// `--backend WORD` for `spec`, or why it cannot run there: a backend runs
/// a benchmark when its transport has what the benchmark's kernel needs
/// (the registry's `needs`, `backend::capabilities`).
fn parse_backend(spec: &BenchSpec, v: &str) -> Result<Backend, CliError> {
    let Some(backend) = Backend::from_word(v) else {
        let words = Backend::ALL.map(Backend::word);
        return Err(CliError::Usage(format!("Invalid value [--backend {v}] (give {})", or_list(&words))));
    };
    if backend == Backend::Mpi {
        return Ok(backend);
    }
    if spec.is_startup() {
        return Err(CliError::Usage(format!(
            "Invalid value [--backend {v}] ({} measures MPI's own start-up: only mpi applies)",
            spec.name
        )));
    }
    let entry = registry::lookup(spec.name).expect("every benchmark is in the registry");
    if entry.backends().contains(&backend) {
        return Ok(backend);
    }
    let upper = v.to_ascii_uppercase();
    let runs: Vec<&str> =
        registry::BENCHMARKS.iter().filter(|e| e.backends().contains(&backend)).map(|e| e.name()).collect();
    Err(CliError::Usage(format!(
        "Invalid value [--backend {v}] ({} needs {}, which {upper} does not have; {upper} runs {})",
        spec.name,
        entry.needs.map_or("MPI", |c| c.describe()),
        runs.join(", ")
    )))
}

/// `-d WORD`: OSU's words, matched without regard to case.
fn parse_accel(v: &str) -> Result<Accel, CliError> {
    match v.to_ascii_lowercase().as_str() {
        "cuda" => Ok(Accel::Cuda),
        "managed" => Ok(Accel::Managed),
        w @ ("rocm" | "openacc") => Err(CliError::Usage(format!(
            "Invalid Accel Type Specified [-d {v}] (commbench measures NVIDIA GPUs through CUDA; {} is not \
             supported: give -d cuda or -d managed)",
            if w == "rocm" { "ROCm" } else { "OpenACC" }
        ))),
        _ => Err(bad("Invalid Accel Type Specified", 'd', v)),
    }
}

fn bad(message: &str, letter: char, value: &str) -> CliError {
    CliError::Usage(format!("{message} [-{letter} {value}]"))
}

fn bad_why(message: &str, letter: char, value: &str, why: &str) -> CliError {
    CliError::Usage(format!("{message} [-{letter} {value}] ({why})"))
}

/// Parses a non-negative whole number, with an optional binary suffix
/// K, M or G (`64K` = 65536). Unlike OSU's `atoi`, junk is an error.
pub(crate) fn parse_count(text: &str) -> Option<usize> {
    let t = text.trim();
    let (digits, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1usize << 10),
        Some((i, 'm' | 'M')) => (&t[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<usize>().ok()?.checked_mul(mult)
}

/// OSU's `-m [MIN:]MAX` grammar: `MAX`, `MIN:MAX`, `MIN:` or `:MAX`.
/// Returns (min, max) with absent parts left as None.
pub(crate) fn parse_message_sizes(text: &str) -> Result<(Option<usize>, Option<usize>), &'static str> {
    let parts: Vec<&str> = text.split(':').collect();
    let num = |s: &str| parse_count(s).ok_or("not a size in bytes");
    match parts.as_slice() {
        [max] => Ok((None, Some(num(max)?))),
        ["", ""] => Err("give MIN:MAX, MIN: or :MAX"),
        ["", max] => Ok((None, Some(num(max)?))),
        [min, ""] => Ok((Some(num(min)?), None)),
        [min, max] => Ok((Some(num(min)?), Some(num(max)?))),
        _ => Err("more than one ':'"),
    }
}

/// The most threads or processes `-t` gives one side, as in OSU.
pub(crate) const MAX_WORKERS: usize = 127;
const WORKERS_RANGE: &str = "give R or S:R, each from 1 to 127";

/// OSU's `-t` for osu_latency_mt and osu_latency_mp: `R` sets the
/// receiver's count and unsets the sender's (one thread, no forked
/// process: [`WorkerCounts`]), `S:R` both, each from 1 to [`MAX_WORKERS`].
pub(crate) fn parse_workers(text: &str) -> Option<WorkerCounts> {
    let count = |s: &str| parse_count(s).filter(|n| (1..=MAX_WORKERS).contains(n));
    match text.split_once(':') {
        None => Some(WorkerCounts { sender: None, receiver: count(text)? }),
        Some((s, r)) => Some(WorkerCounts { sender: Some(count(s)?), receiver: count(r)? }),
    }
}

fn positive(value: &str) -> Option<usize> {
    parse_count(value).filter(|&v| v >= 1)
}

/// The largest count `-i`, `-x`, `-W` and `-p` take: OSU keeps them in a C
/// `int`, and nothing larger can be allocated or run in a lifetime.
pub(crate) const MAX_COUNT: usize = i32::MAX as usize;

/// The range of a watchdog or time limit in seconds (`--timeout`, the
/// suite's `--timeout` and `--max-time`, pairs' `--timeout`): below one
/// second a job cannot even start; above 30 days is a typo.
pub(crate) const MIN_SECONDS: f64 = 1.0;
pub(crate) const MAX_SECONDS: f64 = 30.0 * 86400.0;

/// A count from `min` to [`MAX_COUNT`]; OSU's plain message for what is
/// not a count, the range added for a count out of it.
fn bounded(value: &str, min: usize, message: &str, letter: char) -> Result<usize, CliError> {
    match parse_count(value) {
        Some(n) if (min..=MAX_COUNT).contains(&n) => Ok(n),
        Some(n) if n > MAX_COUNT => Err(bad_why(message, letter, value, &format!("give {min} to {MAX_COUNT}"))),
        _ => Err(bad(message, letter, value)),
    }
}

/// Whether `secs` is a usable time limit (see [`MIN_SECONDS`]).
pub(crate) fn seconds_in_range(secs: f64) -> bool {
    secs.is_finite() && (MIN_SECONDS..=MAX_SECONDS).contains(&secs)
}

/// Parses seconds for `--timeout` (`30`, `2.5`, `90s`, `5m`).
pub(crate) fn parse_seconds(text: &str) -> Option<Duration> {
    let t = text.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.parse().ok()?;
    let secs = v * mult;
    seconds_in_range(secs).then(|| Duration::from_secs_f64(secs))
}

/// commbench's own long options that every front end takes, OSU's and
/// nccl-tests' alike: where the results go, placement, `--verbose`,
/// `--dry-run` and `--min-efficiency` (the rest of [`super::EXTENSIONS`]
/// are the OSU front end's alone: nccl-tests has its own timeout, floor
/// and layout).
pub(crate) const SHARED: [&str; 10] =
    ["results-dir", "csv", "no-results", "verbose", "dry-run", "bind", "cpu-list", "nic", "gpu", "min-efficiency"];

/// The shared options read so far ([`SHARED`]), applied one at a time
/// and checked together at the end ([`Ours::finish`]).
#[derive(Default)]
pub(crate) struct Ours {
    /// The option that chose where the results go, if one did.
    dest_flag: Option<&'static str>,
    no_results: bool,
}

impl Ours {
    /// Applies `--name[=value]`, one of [`SHARED`], to `o`.
    pub(crate) fn apply(&mut self, o: &mut Options, name: &str, value: Option<&str>) -> Result<(), CliError> {
        let v = value.unwrap_or("");
        match name {
            "results-dir" => {
                if v.is_empty() {
                    return Err(CliError::Usage("--results-dir needs a directory".into()));
                }
                o.results = ResultsDest::Dir(PathBuf::from(v));
                self.dest_flag = Some("--results-dir");
            }
            "csv" => {
                if v.is_empty() {
                    return Err(CliError::Usage("--csv needs a file name".into()));
                }
                o.results = ResultsDest::Csv(PathBuf::from(v));
                self.dest_flag = Some("--csv");
            }
            "no-results" => self.no_results = true,
            "verbose" => o.verbose = true,
            "dry-run" => {
                o.dry_run = true;
                if let Some(np) = value.filter(|v| !v.is_empty()) {
                    let n = parse_count(np).filter(|&n| (1..=MAX_COUNT).contains(&n));
                    o.dry_run_ranks = Some(n.ok_or_else(|| {
                        CliError::Usage(format!(
                            "Invalid value [--dry-run={np}] (give the ranks to plan for, e.g. 512)"
                        ))
                    })?);
                }
            }
            "bind" | "cpu-list" | "nic" | "gpu" => {
                o.placement
                    .set(name, v)
                    .map_err(|why| CliError::Usage(format!("Invalid value [--{name} {v}] ({why})")))?;
            }
            "min-efficiency" => {
                o.min_efficiency = Some(parse_percent(v).ok_or_else(|| {
                    CliError::Usage(format!(
                        "Invalid value [--min-efficiency {v}] (give a percentage of the path's peak, above 0 and at \
                         most 100, e.g. 80 or 80%)"
                    ))
                })?);
            }
            other => unreachable!("--{other} is not one of the shared options"),
        }
        Ok(())
    }

    /// The checks across the shared options, once all are read.
    pub(crate) fn finish(self, o: &mut Options) -> Result<(), CliError> {
        if self.no_results {
            if let Some(flag) = self.dest_flag {
                return Err(CliError::Usage(format!("--no-results cannot be combined with {flag}")));
            }
            o.results = ResultsDest::Off;
        }
        if self.dest_flag.is_some() || self.no_results {
            o.results_chosen = true;
        }
        o.placement.check().map_err(|e| CliError::Usage(e.to_string()))
    }
}

/// `--min-efficiency` only where `spec` reports a bandwidth.
pub(crate) fn check_min_efficiency(spec: &BenchSpec, o: &Options) -> Result<(), CliError> {
    if o.min_efficiency.is_some() && !crate::bench::engine::efficiency::reports_bandwidth(spec) {
        return Err(CliError::Usage(format!(
            "Invalid option [--min-efficiency] ({} reports no bandwidth to set against a path's peak)",
            spec.name
        )));
    }
    Ok(())
}

/// Applies option tokens in order, as OSU does.
pub fn apply(spec: &BenchSpec, tokens: &[Token], positional: &[String]) -> Result<Parsed, CliError> {
    let mut o = defaults(spec);
    let mut ours = Ours::default();
    for tok in tokens {
        let v = tok.value.as_deref().unwrap_or("");
        match tok.id {
            OptId::Short('h') => return Ok(Parsed::Help),
            OptId::Short('v') => return Ok(Parsed::Version(o.accel)),
            OptId::Short('m') => {
                let (min, max) = parse_message_sizes(v).map_err(|why| bad_why("Invalid Message Size", 'm', v, why))?;
                if let Some(min) = min {
                    // A minimum of 0 means "from the smallest size", as in OSU.
                    o.min_size = min.max(spec.min_size);
                }
                if let Some(max) = max {
                    if max == 0 {
                        return Err(bad_why("Invalid Message Size", 'm', v, "the maximum must be at least 1 byte"));
                    }
                    if max > MAX_MESSAGE_BYTES {
                        return Err(bad_why(
                            "Invalid Message Size",
                            'm',
                            v,
                            "MPI counts stop at 2147483647; the largest size is 2G - 1",
                        ));
                    }
                    o.max_size = max;
                }
                if o.min_size > o.max_size {
                    return Err(bad_why("Invalid Message Size", 'm', v, "minimum is larger than maximum"));
                }
            }
            OptId::Short('i') => {
                o.iterations = Some(bounded(v, 1, "Invalid Number of Iterations", 'i')?);
            }
            OptId::Short('x') => {
                o.warmup = Some(bounded(v, 0, "Invalid Number of Warmup Iterations", 'x')?);
            }
            OptId::Short('W') => {
                o.window = bounded(v, 1, "Invalid Window Size", 'W')?;
                o.window_given = true;
            }
            OptId::Short('t') if spec.is_overlap() => {
                // OSU's non-blocking collectives: MPI_Test calls, 0 or more.
                o.test_calls = bounded(v, 0, "Invalid Number of Probes", 't')?;
            }
            OptId::Short('t') if spec.workers.is_some() => {
                let message = match spec.workers {
                    Some(Workers::Threads) => "Invalid Number of Threads",
                    _ => "Invalid Number of Processes",
                };
                o.workers = Some(parse_workers(v).ok_or_else(|| bad_why(message, 't', v, WORKERS_RANGE))?);
            }
            OptId::Short('t') => {
                // OSU's bw/bibw accept -t and ignore it; so do we.
                parse_count(v).ok_or_else(|| bad("Invalid Number of Threads", 't', v))?;
            }
            OptId::Short('d') => o.accel = Some(parse_accel(v)?),
            OptId::Short('b') => {
                o.buffers = match v.to_ascii_lowercase().as_str() {
                    "single" => BufferMode::Single,
                    "multiple" => BufferMode::Multiple,
                    _ => return Err(bad("Please use 'single' or 'multiple' for buffer type", 'b', v)),
                };
            }
            OptId::Short('c') => {
                let log_dir = match tok.value.as_deref() {
                    None => None,
                    Some("log") => Some(PathBuf::from(DEFAULT_VALIDATION_LOG_DIR)),
                    Some(s) if s.starts_with("log:") && s.len() > 4 => Some(PathBuf::from(&s[4..])),
                    Some(s) => {
                        return Err(bad_why("Invalid validation option", 'c', s, "use -c, -clog or -clog:DIR"));
                    }
                };
                if let Some(dir) = &log_dir {
                    if dir.exists() {
                        return Err(CliError::Usage(format!(
                            "Directory already exists. [-c log] (\"{}\"; choose a new one with -clog:<dir>)",
                            dir.display()
                        )));
                    }
                }
                o.validation = Some(Validation { log_dir });
            }
            OptId::Short('u') => {
                let n = v
                    .trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|&n| n >= 0)
                    .ok_or_else(|| bad("Invalid Number of Validation Warmup  Iterations", 'u', v))?;
                if n as usize > MAX_VALIDATION_WARMUP {
                    return Err(bad("Number of Validation Warmup Iterationsmust be less than 10", 'u', v));
                }
                o.validation_warmup = n as usize;
            }
            OptId::Short('T') => {
                let list = Datatype::parse_list(v)
                    .ok_or_else(|| bad_why("Invalid datatype", 'T', v, "use mpi_char, mpi_int, mpi_float or all"))?;
                for d in list {
                    if !o.datatypes.contains(&d) {
                        o.datatypes.push(d);
                    }
                }
            }
            OptId::Short('z') => {
                let tails =
                    match tok.value.as_deref() {
                        None | Some("") => DEFAULT_TAILS.to_vec(),
                        Some(list) => {
                            let mut out = Vec::new();
                            for item in list.split(',') {
                                let p =
                                    item.trim().parse::<i64>().ok().filter(|p| (0..=100).contains(p)).ok_or_else(
                                        || bad("Percentile range must be in between 0 and 100", 'z', list),
                                    )?;
                                out.push(p as u32);
                            }
                            if out.len() > MAX_TAIL_PERCENTILES {
                                return Err(bad_why("Too many percentiles", 'z', list, "at most 5 can be printed"));
                            }
                            out
                        }
                    };
                o.tails = Some(tails);
            }
            OptId::Short('p') => {
                o.pairs = Some(bounded(v, 1, "Invalid Number of Pairs", 'p')?);
            }
            OptId::Short('R') => {
                o.print_rate = match v.trim() {
                    "0" => false,
                    "1" => true,
                    _ => return Err(bad_why("Invalid message rate option", 'R', v, "use 0 or 1")),
                };
            }
            OptId::Short('V') => o.vary_window = true,
            OptId::Short('f') => o.full = true,
            OptId::Short('l') => o.in_place = true,
            OptId::Short('M') => {
                o.mem_limit = Some(positive(v).ok_or_else(|| bad("Invalid memory limit", 'M', v))?);
            }
            OptId::Short('a') => {
                // Only non-blocking collectives use it; accepted as OSU does.
                positive(v).ok_or_else(|| bad("Invalid Device Array Size", 'a', v))?;
            }
            OptId::Short('k') => o.root = parse_root(v)?,
            OptId::Short('N') => o.neighborhood = parse_neighborhood(v)?,
            OptId::Short('w') => o.win = Some(crate::bench::rma::Rules::win(v).map_err(CliError::Usage)?),
            OptId::Short('s') => {
                let rules = spec.one_sided.ok_or_else(|| CliError::Usage("Invalid option [-s]".into()))?;
                o.sync = Some(rules.sync(spec.name, v).map_err(CliError::Usage)?);
            }
            OptId::Short('G') => {
                return Err(CliError::Usage(format!(
                    "Graph output is not supported by commbench [-G {v}] (the CSV results carry per-size percentiles)"
                )))
            }
            OptId::Short('D') => {
                return Err(CliError::Usage(format!("Derived datatypes are not supported by commbench [-D {v}]")))
            }
            OptId::Short('P') => {
                return Err(CliError::Usage(format!("PAPI counters are not supported by commbench [-P {v}]")))
            }
            OptId::Short('I') => {
                return Err(CliError::Usage(
                    "MPI-4 session initialisation is not supported by commbench [-I]".to_string(),
                ))
            }
            OptId::Short(c) => {
                // A letter in the option table with no meaning here yet.
                return Err(CliError::Usage(format!("Invalid option [-{c}]")));
            }
            OptId::Long(name) if SHARED.contains(&name) => ours.apply(&mut o, name, tok.value.as_deref())?,
            OptId::Long("backend") => o.backend = parse_backend(spec, v)?,
            OptId::Long("timeout") => {
                // 0: no watchdog, wait forever (as before there was a default).
                let off = matches!(v.trim(), "0" | "0s" | "0m");
                o.timeout = if off {
                    None
                } else {
                    Some(parse_seconds(v).ok_or_else(|| {
                        CliError::Usage(format!(
                            "Invalid timeout [--timeout {v}] (give 1 to 2592000 seconds, e.g. 60 or 5m, or 0 for no \
                             watchdog)"
                        ))
                    })?)
                };
            }
            OptId::Long("format") => {
                o.format = Format::from_word(v).ok_or_else(|| {
                    let words = Format::ALL.map(Format::word);
                    CliError::Usage(format!("Invalid value [--format {v}] (give {})", or_list(&words)))
                })?;
            }
            OptId::Long("min-busbw") => {
                let gbs = v.trim().parse::<f64>().ok().filter(|g| g.is_finite() && *g > 0.0);
                o.min_busbw = Some(gbs.ok_or_else(|| {
                    CliError::Usage(format!("Invalid value [--min-busbw {v}] (give a bus bandwidth in GB/s, e.g. 150)"))
                })?);
            }
            OptId::Long("precision") => {
                o.precision = Some(precision::parse_precision(v).map_err(|e| CliError::Usage(e.to_string()))?);
            }
            OptId::Long("min-iterations") => {
                o.min_iterations =
                    Some(precision::parse_min_iterations(v).map_err(|e| CliError::Usage(e.to_string()))?);
            }
            OptId::Long("max-time-per-size") => {
                o.max_time_per_size =
                    Some(precision::parse_max_time_per_size(v).map_err(|e| CliError::Usage(e.to_string()))?);
            }
            OptId::Long(other) => return Err(CliError::Usage(format!("Invalid option [--{other}]"))),
        }
    }
    ours.finish(&mut o)?;
    o.buffer_locations = buffer_locations(positional)?;
    if let (Some(accel), Backend::Ucx) = (o.accel, o.backend) {
        let d = if accel == Accel::Cuda { "cuda" } else { "managed" };
        return Err(CliError::Usage(format!(
            "-d {d} cannot be combined with --backend ucx (commbench's UCX transport moves host memory only; \
             GPU buffers go through --backend mpi, a CUDA-aware MPI)"
        )));
    }
    if o.validation.is_none() {
        o.validation_warmup = 0;
    }
    check_one_sided(spec, &mut o)?;
    check_nccl_tests(spec, &mut o)?;
    if o.min_busbw.is_some() && !spec.has_bus_bandwidth() {
        return Err(CliError::Usage(format!(
            "Invalid option [--min-busbw] ({} reports no bus bandwidth; the check is for collectives that move data)",
            spec.name
        )));
    }
    check_min_efficiency(spec, &o)?;
    check_precision(spec, &o)?;
    if o.datatypes.is_empty() {
        o.datatypes.push(Datatype::Char);
    }
    let op = registry::lookup(spec.name).and_then(|e| e.collective).map(|c| c.op);
    if o.backend == Backend::Nccl && o.in_place && op == Some(crate::spec::Op::Alltoall) {
        // Grouped sends and receives cannot share one buffer.
        return Err(CliError::Usage(
            "Invalid option [-l] (NCCL's all-to-all has no in-place form; drop -l or use --backend mpi)".into(),
        ));
    }
    if o.vary_window && o.window_given {
        return Err(CliError::Usage("Window size (-W) cannot be combined with a varied window (-V)".into()));
    }
    Ok(Parsed::Run(Box::new(o)))
}

/// The one-sided benchmarks run over MPI windows in host memory only;
/// their `-w` and `-s` default to the benchmark's, so that the run record
/// names what ran.
fn check_one_sided(spec: &BenchSpec, o: &mut Options) -> Result<(), CliError> {
    let Some(rules) = spec.one_sided else {
        return Ok(());
    };
    o.win.get_or_insert(rules.default_win);
    o.sync.get_or_insert(rules.default_sync);
    // Another --backend was refused already: only MPI has OneSided.
    if let Some(a) = o.accel {
        let d = if a == Accel::Cuda { "cuda" } else { "managed" };
        return Err(CliError::Usage(format!(
            "Invalid option [-d {d}] ({}'s windows are host memory in commbench; GPU windows are not supported)",
            spec.name
        )));
    }
    Ok(())
}

/// `--precision` and the options that only mean something with it.
/// Refused with NCCL: its collectives are timed as one batch (no
/// per-iteration values to judge), and nccl-tests' fixed counts are part of
/// what its table means; and for benchmarks without one timed pass of
/// iterations to judge (start-up, non-blocking overlap).
fn check_precision(spec: &BenchSpec, o: &Options) -> Result<(), CliError> {
    if o.precision.is_none() {
        let given =
            [("--min-iterations", o.min_iterations.is_some()), ("--max-time-per-size", o.max_time_per_size.is_some())];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return Err(CliError::Usage(format!("Invalid option [{flag}] (it only applies with --precision)")));
        }
        return Ok(());
    }
    if o.backend == Backend::Nccl {
        return Err(CliError::Usage(
            "Invalid option [--precision] (NCCL is timed in batches with no per-iteration values to judge; \
             use --backend mpi or drop --precision)"
                .into(),
        ));
    }
    if let Some(why) = spec.precision_refusal() {
        return Err(CliError::Usage(format!("Invalid option [--precision] ({} cannot use it: {why})", spec.name)));
    }
    Ok(())
}

/// `--format nccl-tests`: NCCL's collectives only, measured out-of-place
/// and in-place both (so `-l` has nothing to add), from one root, checked
/// as nccl-tests checks by default, and in floats unless `-T` says.
fn check_nccl_tests(spec: &BenchSpec, o: &mut Options) -> Result<(), CliError> {
    if o.format != Format::NcclTests {
        return Ok(());
    }
    let refuse = |why: String| Err(CliError::Usage(format!("Invalid value [--format nccl-tests] ({why})")));
    if spec.is_point_to_point() || !spec.has_bus_bandwidth() {
        return refuse(format!("{} is not one of the collectives nccl-tests measures", spec.name));
    }
    if o.backend != Backend::Nccl {
        return refuse("nccl-tests' table is for NCCL's collectives: add --backend nccl".into());
    }
    if o.in_place {
        return refuse("the table has out-of-place and in-place columns already: drop -l".into());
    }
    if o.root == RootRank::Rotate {
        return refuse("the table has one root column: give -k fixed:R".into());
    }
    if o.validation.is_none() {
        o.validation = Some(Validation { log_dir: None });
    }
    if o.datatypes.is_empty() {
        o.datatypes.push(Datatype::Float);
    }
    Ok(())
}

/// `-k rotate` or `-k fixed:R`.
fn parse_root(v: &str) -> Result<RootRank, CliError> {
    let lower = v.to_ascii_lowercase();
    match lower.split_once(':') {
        None if lower == "rotate" => Ok(RootRank::Rotate),
        None if lower == "fixed" => Err(bad("Please pass root node rank. E.g: -k fixed:1", 'k', v)),
        Some(("fixed", r)) => r
            .trim()
            .parse::<usize>()
            .map(RootRank::Fixed)
            .map_err(|_| bad_why("Invalid root rank", 'k', v, "give a rank from 0 to np-1")),
        _ => Err(bad("Invalid root rank rotate type. Valid types[fixed, rotate]", 'k', v)),
    }
}

/// `-N cart:D:R` or `-N graph:FILE` (OSU's words; the type is matched
/// without regard to case). Unlike OSU's `atoi`, D and R must be whole
/// numbers from 1 (D at most 8, R at most 1000), and FILE is read and
/// checked here: one `from,to` edge of ranks per line, `#` lines skipped,
/// at most [`MAX_GRAPH_EDGES`] edges (OSU: 500 per rank).
fn parse_neighborhood(v: &str) -> Result<Neighborhood, CliError> {
    use crate::bench::neighborhood::{EdgesError, MAX_GRAPH_EDGES};
    const CART: &str = "Please pass -Ncart:<dim:rad>";
    let (kind, rest) = v.split_once(':').unwrap_or((v, ""));
    match kind.to_ascii_lowercase().as_str() {
        "cart" => {
            let (d, r) = rest.split_once(':').ok_or_else(|| bad(CART, 'N', v))?;
            let number = |w: &str, max: usize| w.trim().parse::<usize>().ok().filter(|n| (1..=max).contains(n));
            match (number(d, 8), number(r, 1000)) {
                (Some(dims), Some(radius)) => Ok(Neighborhood::Cart { dims, radius }),
                _ => Err(bad_why(CART, 'N', v, "dimensions 1 to 8, radius 1 to 1000")),
            }
        }
        "graph" if rest.is_empty() => Err(bad("Please pass -Ngraph:<adjacency graph file>", 'N', v)),
        "graph" => {
            let path = PathBuf::from(rest);
            let text = crate::input_file::read_to_string(&path)
                .map_err(|e| bad_why("Unable to open graph adjacency list file", 'N', v, &e.to_string()))?;
            let edges = crate::bench::neighborhood::parse_edges(&text).map_err(|e| match e {
                EdgesError::Pattern(e) => {
                    bad_why("Unable to recognise the pattern. Check graph adjacency list file", 'N', v, &e)
                }
                EdgesError::TooMany { line } => bad_why(
                    &format!("Max allowed number of edges is {MAX_GRAPH_EDGES}"),
                    'N',
                    v,
                    &format!("line {line} is one edge too many"),
                ),
            })?;
            Ok(Neighborhood::Graph { path, edges })
        }
        _ => Err(bad("Invalid topology type. Valid topology types[cart,graph]", 'N', v)),
    }
}

/// OSU's `SRC DST` buffer locations after the options. OSU reads the
/// first letter of each word (H host, D device, M managed); we accept the
/// same words and, with no device requested, run on host memory as an OSU
/// build without GPU support does. Any other word, or another number of
/// words, is refused (OSU's GPU builds refuse other counts too; its
/// non-GPU builds ignore every stray word, which hides typos).
fn buffer_locations(words: &[String]) -> Result<Option<BufferLocations>, CliError> {
    let is_location = |w: &str| matches!(w.as_bytes().first(), Some(b'H' | b'D' | b'M'));
    match words {
        [] => Ok(None),
        [send, recv] if is_location(send) && is_location(recv) => {
            Ok(Some(BufferLocations { send: send.clone(), recv: recv.clone() }))
        }
        [one] if is_location(one) => {
            Err(CliError::Usage(format!("Buffer locations come in pairs [{one}] (give SRC DST, e.g. H H or D D)")))
        }
        [_, ..] if words.iter().all(|w| is_location(w)) => Err(CliError::Usage(format!(
            "Too many buffer locations [{}] (give SRC DST, e.g. H H or D D)",
            words.join(" ")
        ))),
        _ => {
            let odd = words.iter().find(|w| !is_location(w)).unwrap_or(&words[0]);
            Err(CliError::Usage(format!("Unexpected argument [{odd}]")))
        }
    }
}

/// `80`, `80%`, `12.5` -> a percentage above 0 and at most 100.
pub(crate) fn parse_percent(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim_end();
    t.parse::<f64>().ok().filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector collectives have no NCCL form: `--backend nccl` is
    /// refused when the options are read, before any GPU is touched.
    #[test]
    fn nccl_refuses_the_vector_collectives() {
        use crate::bench::registry::lookup;
        for name in [
            "osu_gatherv",
            "osu_scatterv",
            "osu_allgatherv",
            "osu_alltoallv",
            "osu_alltoallw",
            "osu_reduce_scatter_block",
        ] {
            let spec = lookup(name).map(|e| e.spec).unwrap_or_else(|| panic!("{name} not in the registry"));
            let e = parse_backend(spec, "nccl").unwrap_err();
            assert!(
                e.to_string().contains(&format!("({name} needs the vector collectives, which NCCL does not have;")),
                "{e}"
            );
            assert_eq!(parse_backend(spec, "mpi").ok(), Some(Backend::Mpi));
        }
    }

    #[test]
    fn worker_counts() {
        let wc = |sender, receiver| Some(WorkerCounts { sender, receiver });
        assert_eq!(parse_workers("4"), wc(None, 4));
        assert_eq!(parse_workers("2:3"), wc(Some(2), 3));
        assert_eq!(parse_workers("127:1"), wc(Some(127), 1));
        let r = parse_workers("4").unwrap();
        assert_eq!((r.sender_threads(), r.sender_processes()), (1, 0));
        for bad in ["0", "128", "200", "2:3:4", "3:", ":3", "", "x", "2:0", "-1", "1.5", "1K"] {
            assert_eq!(parse_workers(bad), None, "{bad}");
        }
    }

    #[test]
    fn counts_with_suffixes() {
        assert_eq!(parse_count("64"), Some(64));
        assert_eq!(parse_count("4K"), Some(4096));
        assert_eq!(parse_count("1m"), Some(1 << 20));
        assert_eq!(parse_count("2G"), Some(2 << 30));
        assert_eq!(parse_count("12abc"), None);
        assert_eq!(parse_count("-1"), None);
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("K"), None);
        assert_eq!(parse_count("99999999999999999999"), None);
    }

    #[test]
    fn message_size_grammar() {
        assert_eq!(parse_message_sizes("128"), Ok((None, Some(128))));
        assert_eq!(parse_message_sizes("2:128"), Ok((Some(2), Some(128))));
        assert_eq!(parse_message_sizes("2:"), Ok((Some(2), None)));
        assert_eq!(parse_message_sizes(":64"), Ok((None, Some(64))));
        assert_eq!(parse_message_sizes("1K:4M"), Ok((Some(1024), Some(4 << 20))));
        assert!(parse_message_sizes(":").is_err());
        assert!(parse_message_sizes("1:2:3").is_err());
        assert!(parse_message_sizes("abc").is_err());
        assert!(parse_message_sizes("-5").is_err());
        assert!(parse_message_sizes("4:x").is_err());
        assert!(parse_message_sizes("").is_err());
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_seconds("30"), Some(Duration::from_secs(30)));
        assert_eq!(parse_seconds("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_seconds("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_seconds("0"), None);
        assert_eq!(parse_seconds("1e20"), None);
        assert_eq!(parse_seconds("1e-12"), None);
        assert_eq!(parse_seconds("0.5"), None);
        assert_eq!(parse_seconds("NaN"), None);
        assert_eq!(parse_seconds("2592000"), Some(Duration::from_secs(2592000)));
        assert_eq!(parse_seconds("43201m"), None);
        assert_eq!(parse_seconds("-3"), None);
        assert_eq!(parse_seconds("inf"), None);
        assert_eq!(parse_seconds("soon"), None);
    }
}
