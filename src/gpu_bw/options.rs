//! `commbench gpu-bw` options (clap) and the checked configuration they
//! become: which tests, which GPUs, bytes and copies per timing, the
//! optional bandwidth floor, and where result files go. Every error is
//! one line for the caller to print.

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::Parser;
use serde::Serialize;
use thiserror::Error;

use crate::bytes::{self, ParseSizeError};
use crate::matrix::units::parse_rate;
use crate::options::ResultsDest;

/// Bytes per host<->GPU and on-GPU copy when `--size` is not given: the
/// single transfer of bandwidthTest's quick mode (32e6, decimal).
pub(crate) const HOST_BYTES: usize = 32_000_000;
/// Bytes per GPU-to-GPU copy when `--size` is not given: 40 million
/// 4-byte integers, as p2pBandwidthLatencyTest moves.
pub(crate) const PEER_BYTES: usize = 160_000_000;
/// Copies per timing of host<->GPU and on-GPU copies (bandwidthTest).
pub(crate) const HOST_REPS: usize = 100;
/// Copies per timing between GPUs (p2pBandwidthLatencyTest).
pub(crate) const PEER_REPS: usize = 5;
/// Bytes of one latency copy: four 4-byte integers.
pub(crate) const LATENCY_BYTES: usize = 16;
/// Copies per latency timing.
pub(crate) const LATENCY_REPS: usize = 100;
/// The largest copy accepted: 1 TiB.
pub(crate) const MAX_BYTES: u64 = 1 << 40;

/// One group of measurements, as named after `--tests`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Host to GPU, pinned and pageable host memory.
    H2d,
    /// GPU to host, pinned and pageable host memory.
    D2h,
    /// Within one GPU.
    D2d,
    /// GPU to GPU bandwidth, one way and both ways, peer access off and on.
    P2p,
    /// GPU to GPU latency of a small copy, peer access off and on.
    Latency,
}

impl Test {
    /// Every test, in the order they run.
    pub const ALL: [Test; 5] = [Test::H2d, Test::D2h, Test::D2d, Test::P2p, Test::Latency];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Test::H2d => "h2d",
            Test::D2h => "d2h",
            Test::D2d => "d2d",
            Test::P2p => "p2p",
            Test::Latency => "latency",
        }
    }
}

/// Which GPUs to use: `None` means every GPU the driver shows.
pub(crate) type GpuList = Option<Vec<usize>>;

/// A checked run configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Config {
    /// Tests to run, in run order, each once.
    pub tests: Vec<Test>,
    /// CUDA device ordinals (after CUDA_VISIBLE_DEVICES), ascending.
    pub gpus: GpuList,
    /// Bytes per host<->GPU and on-GPU copy.
    pub host_bytes: usize,
    /// Copies per timing of host<->GPU and on-GPU copies.
    pub host_reps: usize,
    /// Bytes per GPU-to-GPU copy.
    pub peer_bytes: usize,
    /// Copies per GPU-to-GPU bandwidth timing.
    pub peer_reps: usize,
    /// Bytes per latency copy.
    pub latency_bytes: usize,
    /// Copies per latency timing.
    pub latency_reps: usize,
    /// PASS floor for GPU-to-GPU bandwidth with peer access, bytes/s.
    #[serde(rename = "min_bw_bytes_per_s")]
    pub min_bw: Option<f64>,
    /// PASS share of each bandwidth's path peak, percent.
    #[serde(rename = "min_efficiency_pct")]
    pub min_efficiency: Option<f64>,
    /// Where result files go.
    pub results: ResultsDest,
    /// A described machine (`--machine`) that says where the GPUs sit,
    /// instead of hwloc and sysfs.
    pub machine: Option<PathBuf>,
}

impl Config {
    /// Whether `t` is to run.
    pub fn runs(&self, t: Test) -> bool {
        self.tests.contains(&t)
    }
}

/// A command line `gpu-bw` cannot run, in one line.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum OptionsError {
    /// clap's first line without its "error: ", and where to look.
    #[error("{0} (see commbench gpu-bw --help)")]
    Usage(String),
    #[error("--min-bw judges GPU-to-GPU bandwidth: add p2p to --tests")]
    MinBwWithoutP2p,
    #[error("--min-efficiency judges host<->GPU and GPU-to-GPU bandwidth: add h2d, d2h or p2p to --tests")]
    MinEfficiencyWithoutBandwidth,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Print this text and exit 0.
    Help(String),
    /// Measure.
    Run(Box<Config>),
}

#[derive(Parser, Debug)]
#[command(
    name = "commbench gpu-bw",
    disable_version_flag = true,
    about = "Copy bandwidth and latency of CUDA GPUs: host to GPU and back (pinned and pageable host memory), \
             within each GPU, and between every ordered pair of GPUs with peer access off and on, printed as \
             matrices (rows: source GPU, columns: destination GPU).",
    after_help = "Timing: CUDA events around the copies of one timing, on non-blocking streams, after one \
                  untimed copy; pageable copies are synchronous and timed with the host clock. GB/s is 10^9 \
                  bytes per second. A copy within one GPU counts its bytes twice (read and write), as CUDA's \
                  bandwidthTest and p2pBandwidthLatencyTest do; a bidirectional figure adds both directions.\n\
                  Sizes take K, M and G (binary, 1K = 1024); the defaults are decimal byte counts.\n\
                  Peaks: a GPU's PCIe link from sysfs (COMMBENCH_SYSFS_ROOT names another tree), NVLinks between \
                  GPUs from NVML (libnvidia-ml.so.1, or COMMBENCH_NVML), GPUs without peer access through host \
                  memory at the slower PCIe link; unknown where the machine does not tell.\n\
                  Exit status: 0 measured (and, with --min-bw and --min-efficiency, everything passes), 1 a pair \
                  below --min-bw or a bandwidth below --min-efficiency, no CUDA driver or GPU, or a CUDA error, 2 \
                  bad options."
)]
struct Args {
    /// Tests to run, comma-separated: h2d, d2h, d2d, p2p, latency, or all
    #[arg(long, value_name = "LIST", default_value = "all", value_parser = parse_tests)]
    tests: TestList,
    /// GPUs to use by CUDA device number, e.g. 0,2 or 0-3 [default: every GPU the driver shows]
    #[arg(long, value_name = "LIST", value_parser = parse_gpus)]
    gpus: Option<GpuNumbers>,
    /// Bytes per bandwidth copy, for every test [default: 32000000 for host and on-GPU copies, 160000000 between
    /// GPUs]
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    size: Option<usize>,
    /// Copies per bandwidth timing, for every test [default: 100 for host and on-GPU copies, 5 between GPUs]
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    reps: Option<usize>,
    /// Bytes per latency copy
    #[arg(long, value_name = "BYTES", default_value_t = LATENCY_BYTES, value_parser = parse_bytes)]
    latency_size: usize,
    /// Copies per latency timing
    #[arg(long, value_name = "N", default_value_t = LATENCY_REPS, value_parser = parse_positive)]
    latency_reps: usize,
    /// Fail when a GPU-to-GPU copy with peer access (one way) is below this: a number of GB/s, or a rate with
    /// its unit (e.g. 300, 300GB/s, 2400Gbit/s); a pair without peer access fails
    #[arg(long, value_name = "GBPS", allow_negative_numbers = true, value_parser = parse_min_bw)]
    min_bw: Option<f64>,
    /// Fail when a bandwidth is below this share of its path's peak: each GPU pair one way against its NVLinks,
    /// PCIe peer link or path through host memory, and pinned host<->GPU copies against the GPU's PCIe link
    /// (e.g. 80 or 80%); a bandwidth whose peak is unknown cannot be judged and fails
    #[arg(long, value_name = "PCT", allow_negative_numbers = true, value_parser = parse_min_efficiency)]
    min_efficiency: Option<f64>,
    /// Directory for the result files [default: results, or $COMMBENCH_RESULTS_DIR]
    #[arg(long, value_name = "DIR")]
    results_dir: Option<PathBuf>,
    /// Write no result files
    #[arg(long, conflicts_with = "results_dir")]
    no_results: bool,
    /// Take where each GPU sits (NUMA node, PCI switch) from this described machine, in the format of `commbench
    /// topo --machine`, matched by PCI bus id, instead of from hwloc and sysfs: for a node whose PCI tree they
    /// cannot see (some containers)
    #[arg(long, value_name = "FILE")]
    machine: Option<PathBuf>,
}

/// The tests named on the command line (a newtype, so clap does not read
/// a `Vec` as a repeated option).
#[derive(Clone, Debug)]
struct TestList(Vec<Test>);

fn parse_tests(text: &str) -> Result<TestList, String> {
    let mut wanted = Vec::new();
    for word in text.split(',').map(str::trim) {
        if word.eq_ignore_ascii_case("all") {
            wanted.extend(Test::ALL);
            continue;
        }
        match Test::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(word)) {
            Some(t) => wanted.push(t),
            None => {
                let names: Vec<&str> = Test::ALL.iter().map(|t| t.name()).collect();
                return Err(format!("'{word}' is not a test (give {} or all)", names.join(", ")));
            }
        }
    }
    // Run order is fixed; each test once.
    Ok(TestList(Test::ALL.into_iter().filter(|t| wanted.contains(t)).collect()))
}

/// The GPUs of `--gpus` (a newtype for the same reason).
#[derive(Clone, Debug)]
struct GpuNumbers(Vec<usize>);

fn parse_gpus(text: &str) -> Result<GpuNumbers, String> {
    parse_gpu_list(text).map(GpuNumbers)
}

/// Reads `0,2`, `0-3` or `1,4-5` into ascending device numbers.
pub(crate) fn parse_gpu_list(text: &str) -> Result<Vec<usize>, String> {
    let number = |s: &str| -> Result<usize, String> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("'{s}' is not a GPU number (give numbers and ranges such as 0,2 or 0-3)"));
        }
        s.parse::<usize>().ok().filter(|&n| n < 4096).ok_or_else(|| format!("GPU number '{s}' is too large"))
    };
    let mut gpus = Vec::new();
    for part in text.split(',') {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        if last < first {
            return Err(format!("range '{}' runs backwards", part.trim()));
        }
        for g in first..=last {
            if gpus.contains(&g) {
                return Err(format!("GPU {g} is listed twice"));
            }
            gpus.push(g);
        }
    }
    gpus.sort_unstable();
    Ok(gpus)
}

fn parse_bytes(text: &str) -> Result<usize, String> {
    match bytes::parse_size(text) {
        Ok(b) if (1..=MAX_BYTES).contains(&b) => Ok(b as usize),
        Ok(_) | Err(ParseSizeError::OutOfRange(_)) => Err(format!("size '{text}' is out of range (1 byte to 1 TiB)")),
        Err(e @ ParseSizeError::Malformed(_)) => Err(e.to_string()),
    }
}

fn parse_positive(text: &str) -> Result<usize, String> {
    let max = crate::cli::options::MAX_COUNT;
    match text.trim().parse::<usize>() {
        Ok(0) => Err(format!("'{text}' must be at least 1")),
        Ok(n) if n <= max => Ok(n),
        Ok(_) => Err(format!("'{text}' is larger than {max}")),
        Err(_) => Err(format!("'{text}' is not a whole number")),
    }
}

/// A bare number is GB/s (10^9 bytes/s); anything else goes through the
/// rate grammar `pairs` uses too (`crate::matrix::units`). The result is
/// in bytes/s.
fn parse_min_bw(text: &str) -> Result<f64, String> {
    if let Ok(v) = text.trim().parse::<f64>() {
        return if v.is_finite() && v > 0.0 {
            Ok(v * 1e9)
        } else {
            Err(format!("'{text}' is not a bandwidth above 0 (give GB/s, e.g. 300, or a rate such as 300GB/s)"))
        };
    }
    parse_rate(text).map_err(|e| e.to_string())
}

fn parse_min_efficiency(text: &str) -> Result<f64, String> {
    crate::cli::options::parse_percent(text).ok_or_else(|| {
        format!("'{text}' is not a percentage of the path's peak (give above 0 and at most 100, e.g. 80 or 80%)")
    })
}

/// clap's first line without its "error: " prefix.
fn first_line(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("invalid arguments");
    first.trim().trim_start_matches("error: ").to_string()
}

/// Parses the arguments after `gpu-bw`.
pub fn parse(args: &[String]) -> Result<Parsed, OptionsError> {
    crate::args::check_arg_lengths(args).map_err(OptionsError::Usage)?;
    let argv = std::iter::once("commbench gpu-bw".to_string()).chain(args.iter().cloned());
    let a = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp) => return Ok(Parsed::Help(e.to_string())),
        Err(e) => return Err(OptionsError::Usage(first_line(&e.to_string()))),
    };
    let tests = a.tests.0;
    if a.min_bw.is_some() && !tests.contains(&Test::P2p) {
        return Err(OptionsError::MinBwWithoutP2p);
    }
    if a.min_efficiency.is_some() && ![Test::H2d, Test::D2h, Test::P2p].iter().any(|t| tests.contains(t)) {
        return Err(OptionsError::MinEfficiencyWithoutBandwidth);
    }
    let results = if a.no_results {
        ResultsDest::Off
    } else {
        let dir = a
            .results_dir
            .or_else(|| std::env::var_os("COMMBENCH_RESULTS_DIR").filter(|v| !v.is_empty()).map(PathBuf::from));
        ResultsDest::Dir(dir.unwrap_or_else(|| PathBuf::from("results")))
    };
    Ok(Parsed::Run(Box::new(Config {
        tests,
        gpus: a.gpus.map(|g| g.0),
        host_bytes: a.size.unwrap_or(HOST_BYTES),
        host_reps: a.reps.unwrap_or(HOST_REPS),
        peer_bytes: a.size.unwrap_or(PEER_BYTES),
        peer_reps: a.reps.unwrap_or(PEER_REPS),
        latency_bytes: a.latency_size,
        latency_reps: a.latency_reps,
        min_bw: a.min_bw,
        min_efficiency: a.min_efficiency,
        results,
        machine: a.machine,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn run(a: &[&str]) -> Config {
        match parse(&args(a)) {
            Ok(Parsed::Run(c)) => *c,
            other => panic!("{a:?}: {other:?}"),
        }
    }

    fn err(a: &[&str]) -> String {
        match parse(&args(a)) {
            Err(e) => e.to_string(),
            other => panic!("{a:?}: {other:?}"),
        }
    }

    #[test]
    fn defaults_follow_the_cuda_samples() {
        let c = run(&["--no-results"]);
        assert_eq!(c.tests, Test::ALL.to_vec());
        assert_eq!(c.gpus, None);
        assert_eq!((c.host_bytes, c.host_reps), (32_000_000, 100));
        assert_eq!((c.peer_bytes, c.peer_reps), (160_000_000, 5));
        assert_eq!((c.latency_bytes, c.latency_reps), (16, 100));
        assert_eq!(c.min_bw, None);
        assert_eq!(c.results, ResultsDest::Off);
    }

    #[test]
    fn everything_given() {
        let c = run(&[
            "--tests",
            "latency,p2p",
            "--gpus",
            "3,0-1",
            "--size",
            "64M",
            "--reps",
            "7",
            "--latency-size",
            "4",
            "--latency-reps",
            "1000",
            "--min-bw",
            "300",
            "--results-dir",
            "/tmp/r",
        ]);
        assert_eq!(c.tests, vec![Test::P2p, Test::Latency], "run order, not command-line order");
        assert_eq!(c.gpus, Some(vec![0, 1, 3]));
        assert_eq!((c.host_bytes, c.peer_bytes), (64 << 20, 64 << 20), "--size sets both");
        assert_eq!((c.host_reps, c.peer_reps), (7, 7));
        assert_eq!((c.latency_bytes, c.latency_reps), (4, 1000));
        assert_eq!(c.min_bw, Some(300e9));
        assert_eq!(c.results, ResultsDest::Dir(PathBuf::from("/tmp/r")));
        assert!(c.runs(Test::P2p) && !c.runs(Test::H2d));
    }

    #[test]
    fn min_bw_units() {
        assert_eq!(
            run(&["--machine", "tests/machines/dgx1.json"]).machine,
            Some(PathBuf::from("tests/machines/dgx1.json"))
        );
        assert_eq!(run(&[]).machine, None);
        assert_eq!(run(&["--min-bw", "25.5"]).min_bw, Some(25.5e9));
        assert_eq!(run(&["--min-bw", "400Gbit/s"]).min_bw, Some(50e9));
        assert_eq!(run(&["--min-bw", "1GiB/s"]).min_bw, Some(1073741824.0));
        assert_eq!(run(&["--min-efficiency", "80%"]).min_efficiency, Some(80.0));
        assert_eq!(run(&["--tests", "h2d", "--min-efficiency", "12.5"]).min_efficiency, Some(12.5));
        assert_eq!(run(&[]).min_efficiency, None);
    }

    #[test]
    fn test_lists() {
        assert_eq!(run(&["--tests", "D2H,h2d,h2d"]).tests, vec![Test::H2d, Test::D2h]);
        assert_eq!(run(&["--tests", "all,d2d"]).tests, Test::ALL.to_vec());
    }

    #[test]
    fn gpu_lists() {
        assert_eq!(parse_gpu_list("2"), Ok(vec![2]));
        assert_eq!(parse_gpu_list("4-5,1"), Ok(vec![1, 4, 5]));
        assert_eq!(parse_gpu_list("1,1"), Err("GPU 1 is listed twice".into()));
        assert_eq!(parse_gpu_list("3-1"), Err("range '3-1' runs backwards".into()));
        assert!(parse_gpu_list("a").unwrap_err().contains("'a' is not a GPU number"));
        assert!(parse_gpu_list("").unwrap_err().contains("is not a GPU number"));
        assert!(parse_gpu_list("99999").unwrap_err().contains("too large"));
    }

    #[test]
    fn bad_input_is_one_line() {
        let cases: &[(&[&str], &str)] = &[
            (&["--bogus"], "unexpected argument '--bogus' found"),
            (&["--tests", "h2d,bw"], "'bw' is not a test (give h2d, d2h, d2d, p2p, latency or all)"),
            (&["--gpus", "x"], "'x' is not a GPU number"),
            (&["--size", "0"], "size '0' is out of range (1 byte to 1 TiB)"),
            (&["--size", "2T"], "is not a byte size"),
            (&["--size", "2048G"], "out of range"),
            (&["--reps", "0"], "'0' must be at least 1"),
            (&["--latency-reps", "many"], "'many' is not a whole number"),
            (&["--min-bw", "-3"], "is not a bandwidth above 0"),
            (&["--min-efficiency", "0"], "'0' is not a percentage of the path's peak"),
            (&["--min-efficiency", "101%"], "'101%' is not a percentage"),
            (&["--tests", "d2d,latency", "--min-efficiency", "80"], "--min-efficiency judges host<->GPU"),
            (&["--min-bw", "fast"], "'fast' is not a bandwidth"),
            (&["--no-results", "--results-dir", "x"], "cannot be used with"),
            (&["--tests", "h2d", "--min-bw", "10"], "--min-bw judges GPU-to-GPU bandwidth: add p2p to --tests"),
            (&["extra"], "unexpected argument 'extra' found"),
        ];
        for (a, want) in cases {
            let e = err(a);
            assert!(e.contains(want), "{a:?}: {e}");
            assert!(!e.contains('\n'), "{a:?}: {e}");
        }
        assert!(err(&["--bogus"]).ends_with("(see commbench gpu-bw --help)"));
    }

    #[test]
    fn help_is_not_an_error() {
        match parse(&args(&["--help"])) {
            Ok(Parsed::Help(text)) => {
                for word in ["--tests", "--gpus", "--size", "--reps", "--min-bw", "--no-results", "Exit status"] {
                    assert!(text.contains(word), "{word} missing from help");
                }
            }
            other => panic!("{other:?}"),
        }
    }
}
