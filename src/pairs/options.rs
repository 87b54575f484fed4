//! `commbench pairs` options (clap) and the checked run configuration they
//! become: scheme, message size, window and counts, PASS criteria, where
//! results go. Errors are one line, for rank 0 to print.

use std::path::PathBuf;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::Parser;
use serde::Serialize;
use thiserror::Error;

use super::criteria::Criteria;
use super::schedule::{RandomRounds, Scheme, SchemeError};
use super::units::{parse_fraction, parse_size, parse_time};
use crate::cli::options::parse_seconds;
use crate::matrix::units::parse_rate;
use crate::options::{Backend, ResultsDest};
use crate::topo::request::{PlacementArgs, PlacementError, PlacementRequest};

/// Above this size the defaults are those of OSU's large messages.
const LARGE_ABOVE: usize = 8192;
/// The default window keeps at most this many bytes in flight per
/// direction (and never more than OSU's 64 messages).
const DEFAULT_WINDOW_BYTES: usize = 256 << 20;
const MAX_DEFAULT_WINDOW: usize = 64;
/// Seed of `--scheme random` when none is given (recorded either way).
pub(crate) const DEFAULT_SEED: u64 = 1;
pub(crate) const DEFAULT_RANDOM_ROUNDS: usize = 4;

#[derive(Parser, Debug)]
#[command(
    name = "commbench pairs",
    disable_version_flag = true,
    about = "Bandwidth (and optionally latency) between pairs of ranks, every pair of a round at once, with PASS \
             criteria.",
    after_help = "Exit status: 0 when every pair meets the criteria, 1 when any fails, 2 for bad options or a run \
                  that could not be set up.\nSizes are binary (64MB = 64 MiB = 67108864 bytes); bandwidth is \
                  printed in MB/s (10^6 bytes/s) and limits take decimal or binary units (68GB/s, 25GiB/s, \
                  400Gbit/s)."
)]
struct Args {
    /// Pairing: xor:K (rank ^ K), half (rank ^ np/2, or rank + np/2), all (every pair once, in rounds of
    /// disjoint pairs), shift (rank -> rank+k for k = 1..np-1), shift:K (one shift), random (seeded matchings)
    #[arg(long, default_value = "all", value_parser = parse_scheme)]
    scheme: Scheme,
    /// Bytes per message (K, M, G and KB, MB, GB are binary, like KiB, MiB, GiB)
    #[arg(long, value_name = "BYTES", default_value = "64MB", value_parser = parse_size)]
    size: usize,
    /// Messages in flight per direction [default: 64, fewer for large sizes so at most 256 MiB is in flight]
    #[arg(long, short = 'W', value_name = "N", value_parser = parse_positive)]
    window: Option<usize>,
    /// Timed batches of `window` messages per round [default: 100, or 20 above 8 KiB]
    #[arg(long, short = 'i', value_name = "N", value_parser = parse_positive)]
    iterations: Option<usize>,
    /// Untimed batches before them [default: 10, or 2 above 8 KiB]
    #[arg(long, short = 'x', value_name = "N", value_parser = parse_count)]
    warmup: Option<usize>,
    /// Also measure small-message latency (ping-pong, half the round trip) for each pair
    #[arg(long)]
    latency: bool,
    /// Bytes per latency message
    #[arg(long, value_name = "BYTES", default_value = "8", value_parser = parse_size)]
    latency_size: usize,
    /// Timed round trips per pair
    #[arg(long, value_name = "N", default_value = "1000", value_parser = parse_positive)]
    latency_iterations: usize,
    /// Untimed round trips before them
    #[arg(long, value_name = "N", default_value = "100", value_parser = parse_count)]
    latency_warmup: usize,
    /// Fail a pair when either direction is below this bandwidth (e.g. 68GB/s)
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    min_bw: Option<f64>,
    /// Fail a pair whose latency is above this (e.g. 5us); implies --latency
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    max_lat: Option<f64>,
    /// Fail a direction below this share of the median of all directions (e.g. 80%)
    #[arg(long, value_name = "SHARE", value_parser = parse_fraction)]
    min_fraction_of_median: Option<f64>,
    /// Fail a direction below this share of its path's peak (e.g. 80%): the slower rank's copy rate for shared
    /// memory, the slower NIC's link across hosts; a direction whose peak is unknown fails
    #[arg(long, value_name = "PCT", value_parser = parse_efficiency)]
    min_efficiency: Option<f64>,
    /// Seed of --scheme random [default: 1]
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Matchings drawn by --scheme random [default: 4]
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    rounds: Option<usize>,
    /// Directory for the result files [default: results, or $COMMBENCH_RESULTS_DIR]
    #[arg(long, value_name = "DIR")]
    results_dir: Option<PathBuf>,
    /// Write no result files
    #[arg(long, conflicts_with = "results_dir")]
    no_results: bool,
    /// At the end, add the run to this history file (rank 0, as `commbench history add`)
    #[arg(long, value_name = "FILE", conflicts_with = "no_results")]
    history: Option<PathBuf>,
    /// End the job with an error when a round makes no progress for SECONDS
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    timeout: Option<Duration>,
    /// What carries the measured messages: mpi, or ucx (UCP tagged messages)
    #[arg(long, value_name = "NAME", default_value = "mpi", value_parser = parse_backend)]
    backend: PairsBackend,
    #[command(flatten)]
    placement: PlacementArgs,
}

/// What pairs measures over: the transports it has a front end for, a set
/// of its own, so a backend added elsewhere is not one pairs must handle
/// (NCCL has no pairs) and pairs' choice stays an exhaustive match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairsBackend {
    Mpi,
    Ucx,
}

impl PairsBackend {
    const ALL: [PairsBackend; 2] = [PairsBackend::Mpi, PairsBackend::Ucx];

    /// The backend it is, whose word `--backend` takes.
    pub fn backend(self) -> Backend {
        match self {
            PairsBackend::Mpi => Backend::Mpi,
            PairsBackend::Ucx => Backend::Ucx,
        }
    }
}

fn parse_backend(s: &str) -> Result<PairsBackend, String> {
    PairsBackend::ALL.into_iter().find(|b| b.backend().word() == s).ok_or_else(|| {
        let words = PairsBackend::ALL.map(|b| b.backend().word());
        format!("'{s}' is not a backend (give {})", crate::text::or_list(&words))
    })
}
fn parse_scheme(s: &str) -> Result<Scheme, SchemeError> {
    s.parse()
}
fn parse_count(s: &str) -> Result<usize, String> {
    let max = crate::cli::options::MAX_COUNT;
    match s.trim().parse::<usize>() {
        Ok(n) if n <= max => Ok(n),
        Ok(_) => Err(format!("'{s}' is larger than {max}")),
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}
fn parse_positive(s: &str) -> Result<usize, String> {
    match parse_count(s)? {
        0 => Err(format!("'{s}' must be at least 1")),
        v => Ok(v),
    }
}
/// `80` or `80%` as the fraction 0.8.
fn parse_efficiency(s: &str) -> Result<f64, String> {
    crate::cli::options::parse_percent(s).map(|p| p / 100.0).ok_or_else(|| {
        format!("'{s}' is not a percentage of the path's peak (give one above 0 and at most 100, e.g. 80 or 80%)")
    })
}
fn parse_timeout(s: &str) -> Result<Duration, String> {
    parse_seconds(s).ok_or_else(|| format!("'{s}' is not a time in seconds from 1 to 2592000 (e.g. 60, 2.5, 5m)"))
}

/// A checked run configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Config {
    #[serde(serialize_with = "as_text")]
    pub scheme: Scheme,
    pub size_bytes: usize,
    pub window: usize,
    pub iterations: usize,
    pub warmup: usize,
    /// Latency message bytes and counts (None: no latency test).
    pub latency: Option<LatencyPlan>,
    pub criteria: Criteria,
    /// For `random` only.
    pub random_rounds: Option<usize>,
    pub seed: Option<u64>,
    pub results: ResultsDest,
    #[serde(rename = "timeout_s", serialize_with = "crate::options::seconds")]
    pub timeout: Option<Duration>,
    /// `--backend`.
    pub backend: PairsBackend,
    /// `--bind`, `--cpu-list`, `--nic`, `--gpu`.
    pub placement: PlacementRequest,
    /// `--history`: rank 0 adds the run to this file at the end. Not in
    /// the record: where a run is kept does not change what it measured.
    #[serde(skip)]
    pub history: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LatencyPlan {
    pub size_bytes: usize,
    pub iterations: usize,
    pub warmup: usize,
}

fn as_text<S: serde::Serializer>(s: &Scheme, ser: S) -> Result<S::Ok, S::Error> {
    ser.collect_str(s)
}

impl Config {
    /// The random schedule's parameters (defaults when not random).
    pub fn random(&self) -> RandomRounds {
        RandomRounds {
            rounds: self.random_rounds.unwrap_or(DEFAULT_RANDOM_ROUNDS),
            seed: self.seed.unwrap_or(DEFAULT_SEED),
        }
    }
}

/// A command line `pairs` cannot run, in one line.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum OptionsError {
    /// clap's own first line, without its "error: ", and where to look.
    #[error("{0} (see commbench pairs --help)")]
    Usage(String),
    #[error("{option} applies to --scheme random only (the scheme is {scheme})")]
    RandomOnly { option: &'static str, scheme: Scheme },
    #[error(
        "--latency and --max-lat need a pairing scheme (xor:K, half, all or random); {0} sends and receives with \
         different ranks"
    )]
    LatencyNeedsPairs(Scheme),
    #[error(transparent)]
    Placement(#[from] PlacementError),
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Print this help and exit 0.
    Help(String),
    Run(Box<Config>),
}

/// Window that keeps at most DEFAULT_WINDOW_BYTES in flight.
pub(crate) fn default_window(size: usize) -> usize {
    (DEFAULT_WINDOW_BYTES / size.max(1)).clamp(1, MAX_DEFAULT_WINDOW)
}

/// Parses the arguments after `pairs`. Errors are one line.
pub fn parse(args: &[String]) -> Result<Parsed, OptionsError> {
    crate::args::check_arg_lengths(args).map_err(OptionsError::Usage)?;
    let argv = std::iter::once("commbench pairs".to_string()).chain(args.iter().cloned());
    let a = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp) => return Ok(Parsed::Help(e.to_string())),
        Err(e) => return Err(OptionsError::Usage(first_line(&e.to_string()))),
    };
    let random = a.scheme == Scheme::Random;
    if !random && (a.seed.is_some() || a.rounds.is_some()) {
        let option = if a.seed.is_some() { "--seed" } else { "--rounds" };
        return Err(OptionsError::RandomOnly { option, scheme: a.scheme });
    }
    let large = a.size > LARGE_ABOVE;
    let latency = (a.latency || a.max_lat.is_some()).then_some(LatencyPlan {
        size_bytes: a.latency_size,
        iterations: a.latency_iterations,
        warmup: a.latency_warmup,
    });
    if latency.is_some() && matches!(a.scheme, Scheme::Shift(_)) {
        return Err(OptionsError::LatencyNeedsPairs(a.scheme));
    }
    let placement = a.placement.request()?;
    let results = if a.no_results {
        ResultsDest::Off
    } else {
        let dir = a
            .results_dir
            .or_else(|| std::env::var_os("COMMBENCH_RESULTS_DIR").filter(|v| !v.is_empty()).map(PathBuf::from));
        ResultsDest::Dir(dir.unwrap_or_else(|| PathBuf::from("results")))
    };
    Ok(Parsed::Run(Box::new(Config {
        scheme: a.scheme,
        size_bytes: a.size,
        window: a.window.unwrap_or_else(|| default_window(a.size)),
        iterations: a.iterations.unwrap_or(if large { 20 } else { 100 }),
        warmup: a.warmup.unwrap_or(if large { 2 } else { 10 }),
        latency,
        criteria: Criteria {
            min_bw: a.min_bw,
            max_lat: a.max_lat,
            min_fraction_of_median: a.min_fraction_of_median,
            min_efficiency: a.min_efficiency,
        },
        random_rounds: random.then(|| a.rounds.unwrap_or(DEFAULT_RANDOM_ROUNDS)),
        seed: random.then(|| a.seed.unwrap_or(DEFAULT_SEED)),
        results,
        timeout: a.timeout,
        backend: a.backend,
        placement,
        history: a.history,
    })))
}

/// clap's first line without its "error: " prefix.
fn first_line(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("invalid arguments");
    first.trim().trim_start_matches("error: ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Config {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&v) {
            Ok(Parsed::Run(c)) => *c,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn err(args: &[&str]) -> String {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&v) {
            Err(e) => e.to_string(),
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn defaults() {
        let c = run(&[]);
        assert_eq!(c.scheme, Scheme::All);
        assert_eq!(c.size_bytes, 64 << 20);
        assert_eq!(c.window, 4);
        assert_eq!((c.iterations, c.warmup), (20, 2));
        assert_eq!(c.latency, None);
        assert!(!c.criteria.any());
        assert_eq!((c.seed, c.random_rounds), (None, None));
        let small = run(&["--size", "4KB"]);
        assert_eq!((small.window, small.iterations, small.warmup), (64, 100, 10));
        assert_eq!(run(&["--size", "1GB"]).window, 1);
    }

    #[test]
    fn backends_are_pairs_own_and_recorded_by_their_word() {
        assert_eq!(run(&[]).backend, PairsBackend::Mpi);
        assert_eq!(run(&["--backend", "ucx"]).backend, PairsBackend::Ucx);
        assert!(err(&["--backend", "nccl"]).contains("'nccl' is not a backend (give mpi or ucx)"));
        for b in PairsBackend::ALL {
            assert_eq!(serde_json::to_value(b).ok(), serde_json::to_value(b.backend()).ok());
        }
    }

    #[test]
    fn everything_given() {
        let c = run(&[
            "--scheme=xor:8",
            "--size",
            "1MiB",
            "-W",
            "8",
            "-i",
            "3",
            "-x",
            "0",
            "--min-bw",
            "68GB/s",
            "--max-lat",
            "5us",
            "--min-fraction-of-median",
            "80%",
            "--min-efficiency",
            "75",
            "--no-results",
            "--timeout",
            "30",
        ]);
        assert_eq!(c.scheme, Scheme::Xor(8));
        assert_eq!((c.size_bytes, c.window, c.iterations, c.warmup), (1 << 20, 8, 3, 0));
        assert_eq!(
            c.criteria,
            Criteria {
                min_bw: Some(68e9),
                max_lat: Some(5e-6),
                min_fraction_of_median: Some(0.8),
                min_efficiency: Some(0.75)
            }
        );
        assert_eq!(run(&["--min-efficiency", "12.5%"]).criteria.min_efficiency, Some(0.125));
        assert_eq!(
            c.latency,
            Some(LatencyPlan { size_bytes: 8, iterations: 1000, warmup: 100 }),
            "--max-lat implies it"
        );
        assert_eq!(c.results, ResultsDest::Off);
        assert_eq!(c.timeout, Some(Duration::from_secs(30)));
        let r = run(&["--scheme", "random", "--seed", "9", "--rounds", "2"]);
        assert_eq!(r.random(), RandomRounds { rounds: 2, seed: 9 });
        assert_eq!(run(&["--scheme", "random"]).seed, Some(DEFAULT_SEED));
    }

    #[test]
    fn bad_input_is_one_line() {
        let cases: &[(&[&str], &str)] = &[
            (&["--bogus"], "unexpected argument '--bogus' found"),
            (&["--size", "64XB"], "invalid value '64XB' for '--size <BYTES>'"),
            (&["--min-bw", "68"], "is not a bandwidth"),
            (&["--max-lat", "5"], "is not a time"),
            (&["--scheme", "ring"], "'ring' is not a scheme"),
            (&["-i", "0"], "'0' must be at least 1"),
            (&["--window", "x"], "'x' is not a whole number"),
            (&["--seed", "3"], "--seed applies to --scheme random only (the scheme is all)"),
            (&["--scheme", "shift", "--latency"], "need a pairing scheme"),
            (&["--no-results", "--results-dir", "x"], "cannot be used with"),
            (&["--timeout", "soon"], "is not a time in seconds"),
            (&["--min-efficiency", "0"], "'0' is not a percentage of the path's peak"),
            (&["--min-efficiency", "101%"], "'101%' is not a percentage of the path's peak"),
            (&["--min-efficiency", "0.8x"], "'0.8x' is not a percentage of the path's peak"),
            (&["extra"], "unexpected argument 'extra' found"),
        ];
        for (args, want) in cases {
            let e = err(args);
            assert!(e.contains(want), "{args:?}: {e}");
            assert!(!e.contains('\n'), "{args:?}: {e}");
        }
    }

    #[test]
    fn size_errors_word_for_word() {
        assert_eq!(
            err(&["--size", "64XB"]),
            "invalid value '64XB' for '--size <BYTES>': '64XB' is not a size (give bytes, or a number with K, KB, \
             KiB, M, MB, MiB, G, GB or GiB; all binary) (see commbench pairs --help)"
        );
        assert_eq!(
            err(&["--latency-size", "0"]),
            "invalid value '0' for '--latency-size <BYTES>': size '0' is out of range (1 byte to 2147483647 bytes, \
             the most one MPI message can carry) (see commbench pairs --help)"
        );
        assert_eq!(run(&["--size", "1.5K"]).size_bytes, 1536);
        assert_eq!(run(&["--size", "2147483647"]).size_bytes, 2147483647);
    }

    #[test]
    fn help_is_not_an_error() {
        match parse(&["--help".to_string()]) {
            Ok(Parsed::Help(text)) => {
                assert!(text.contains("--min-bw"));
                assert!(text.contains("Exit status"));
            }
            other => panic!("{other:?}"),
        }
    }
}
