//! `commbench locate`'s command line (clap) and its checks: the hosts to
//! search (a list, a hostfile or a run record), each probe's bound, the
//! pairs criteria that call a host or link slow, and the launcher.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;

/// Finds the hosts and links that hang, fail or are slow, with as few short jobs as it can: each probe
/// is `commbench pairs --scheme all` over a set of the hosts (one rank per host, two on a host probed
/// alone), stopped when it runs past --bound. All hosts first; a set that fails is halved until a
/// host fails alone (a bad host), or two halves that work alone fail together (down to a bad link);
/// the hosts left then run together once more, and the pairs' criteria name slow hosts and links.
#[derive(Parser, Debug)]
#[command(
    name = "commbench locate",
    disable_version_flag = true,
    after_help = "Arguments after `--` go to the launcher, before the binary (e.g. `-- --mca btl tcp,self`); the \
                  hosts are given to it in a hostfile of locate's own.\nA slow verdict stands only when a second probe \
                  of the same hosts repeats it. With one bad host among N, at most 2*ceil(log2 N)+2 probes run \
                  (one more to confirm a slow one), of which ceil(log2 N)+1 may run into --bound. Whatever fails, \
                  the whole search runs at most --max-probes probes (4*ceil(log2 N)+6 unless given), so it ends \
                  within that many times --bound; SIGTERM or SIGINT stops it at once with what it found so far.\nA \
                  probe that could not run (the launcher refused its arguments, no place to write, pairs refused \
                  its arguments or measured nothing) blames no host: locate says `unresolved: the probe itself \
                  failed (...)`.\nExit status: 0 nothing found, 1 a host or link named (or a fault that could not \
                  be taken apart), 2 bad usage, no launcher, or the probe itself failed, 128+N stopped by signal N."
)]
struct Args {
    /// Hosts to search, comma-separated
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    hosts: Vec<String>,
    /// Hosts from a hostfile (Open MPI `host slots=N`, MPICH `host:N`, or one per line)
    #[arg(long, value_name = "FILE")]
    hostfile: Option<PathBuf>,
    /// Hosts from a run's record: a benchmark's or pairs' .json, or a suite's run directory
    #[arg(long, value_name = "RECORD")]
    from: Option<PathBuf>,
    /// Each probe's limit in seconds: a probe that has not ended by then is stopped, and counts as
    /// failed (allow for the launcher's start-up on this many hosts)
    #[arg(long, value_name = "SECONDS", default_value = "60")]
    bound: f64,
    /// The most probes the whole search runs [default: 4*ceil(log2 N)+6 for N hosts, twice what one bad
    /// host or link takes]
    #[arg(long = "max-probes", value_name = "N")]
    max_probes: Option<usize>,
    /// Bytes per message of each probe's pairs
    #[arg(long, value_name = "BYTES", default_value = "1MB")]
    size: String,
    /// A direction below this share of the probe's median is slow (pairs' --min-fraction-of-median)
    #[arg(long = "min-fraction-of-median", value_name = "SHARE", default_value = "50%")]
    min_fraction_of_median: String,
    /// A direction below this bandwidth is slow (pairs' --min-bw, e.g. 20GB/s)
    #[arg(long = "min-bw", value_name = "RATE")]
    min_bw: Option<String>,
    /// More arguments for every probe's `commbench pairs` (e.g. "--backend ucx --min-efficiency 80")
    #[arg(long = "pairs-args", value_name = "ARGS", allow_hyphen_values = true)]
    pairs_args: Option<String>,
    /// Launcher: mpirun, mpiexec, mpiexec.mpich, mpiexec.hydra or srun [default: srun inside a Slurm
    /// allocation, else the launcher of the MPI this commbench was built with]
    #[arg(long, value_name = "PROGRAM")]
    launcher: Option<String>,
    /// Where the run directory goes [default: $COMMBENCH_RESULTS_DIR, else results]
    #[arg(long = "results-dir", value_name = "DIR")]
    results_dir: Option<PathBuf>,
    /// Launcher arguments (after `--`)
    #[arg(last = true, value_name = "LAUNCHER ARGS")]
    launcher_args: Vec<String>,
}

/// The checked settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub hosts: Vec<String>,
    /// Where the hosts came from, in words.
    pub hosts_from: String,
    pub bound: Duration,
    /// `--max-probes`, when given.
    pub max_probes: Option<usize>,
    /// Every probe's pairs arguments after `pairs` (criteria included).
    pub pairs_args: Vec<String>,
    pub launcher: Option<String>,
    pub results_dir: Option<PathBuf>,
    pub launcher_args: Vec<String>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    Run(Box<Settings>),
    Help(String),
}

/// The most hosts one search takes.
pub(crate) const MAX_HOSTS: usize = 1 << 16;

/// Each probe's fixed pairs arguments besides size and criteria: a window
/// of 16 and 10 timed batches (160 MiB per direction at 1 MiB), enough to
/// tell a slow link from a fast one without long probes.
const PROBE_COUNTS: [&str; 6] = ["-W", "16", "-i", "10", "-x", "2"];

/// The hosts a run record (or a suite's run directory) names. The record
/// is read as any input file ([`crate::input_file`]): a FIFO or a device
/// is refused at once, and at most its cap is read.
pub(crate) fn hosts_of_record(path: &Path) -> Result<Vec<String>, String> {
    let file = if path.is_dir() { path.join("suite.json") } else { path.to_path_buf() };
    let text = crate::input_file::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not a run record: {e}", file.display()))?;
    let hosts: Vec<String> = v["hosts"]
        .as_array()
        .map(|a| a.iter().filter_map(|h| h.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    if hosts.is_empty() {
        return Err(format!("{} names no hosts", file.display()));
    }
    Ok(hosts)
}

/// Each probe's pairs arguments after `pairs`: scheme, size, counts,
/// criteria, the watchdog at half the bound (so a stall inside the job is
/// reported by the job, who stalled included, before the bound stops it)
/// and whatever `--pairs-args` adds.
pub(crate) fn pairs_args(
    size: &str,
    fraction: &str,
    min_bw: Option<&str>,
    extra: &[String],
    bound: Duration,
) -> Vec<String> {
    let timeout = (bound.as_secs_f64() / 2.0).max(1.0);
    let mut v: Vec<String> = ["--scheme", "all", "--size", size].iter().map(|s| s.to_string()).collect();
    v.extend(PROBE_COUNTS.iter().map(|s| s.to_string()));
    v.extend(["--min-fraction-of-median".to_string(), fraction.to_string()]);
    if let Some(b) = min_bw {
        v.extend(["--min-bw".to_string(), b.to_string()]);
    }
    v.extend(["--timeout".to_string(), format!("{timeout}")]);
    v.extend(extra.iter().cloned());
    v
}

fn check(a: Args) -> Result<Settings, String> {
    use crate::pairs::units::{parse_fraction, parse_size};
    let given = [!a.hosts.is_empty(), a.hostfile.is_some(), a.from.is_some()].iter().filter(|g| **g).count();
    if given != 1 {
        return Err("give the hosts to search with exactly one of --hosts, --hostfile or --from".into());
    }
    let (mut hosts, hosts_from) = if let Some(f) = &a.hostfile {
        let entries = crate::launch::hostfile::read(f).map_err(|e| e.to_string())?;
        (entries.into_iter().map(|e| e.host).collect(), format!("hostfile {}", f.display()))
    } else if let Some(r) = &a.from {
        (hosts_of_record(r)?, format!("the hosts of {}", r.display()))
    } else {
        (a.hosts.iter().map(|h| h.trim().to_string()).collect::<Vec<_>>(), "--hosts".to_string())
    };
    for h in &hosts {
        crate::launch::hostfile::check_host_name(h)?;
    }
    let mut seen = std::collections::HashSet::new();
    hosts.retain(|h| seen.insert(h.clone()));
    if hosts.len() > MAX_HOSTS {
        return Err(format!("{} hosts: at most {MAX_HOSTS} are searched at once", hosts.len()));
    }
    if !crate::cli::options::seconds_in_range(a.bound) {
        return Err(format!(
            "--bound must be a positive number of seconds from {} to {}",
            crate::cli::options::MIN_SECONDS,
            crate::cli::options::MAX_SECONDS
        ));
    }
    if a.max_probes == Some(0) {
        return Err("--max-probes must be at least 1".into());
    }
    parse_size(&a.size).map_err(|e| format!("--size: {e}"))?;
    parse_fraction(&a.min_fraction_of_median).map_err(|e| format!("--min-fraction-of-median: {e}"))?;
    if let Some(b) = &a.min_bw {
        crate::matrix::units::parse_rate(b).map_err(|e| format!("--min-bw: {e}"))?;
    }
    let extra = a.pairs_args.as_deref().map(crate::launch::split_words).unwrap_or_default();
    let bound = Duration::from_secs_f64(a.bound);
    Ok(Settings {
        hosts,
        hosts_from,
        bound,
        max_probes: a.max_probes,
        pairs_args: pairs_args(&a.size, &a.min_fraction_of_median, a.min_bw.as_deref(), &extra, bound),
        launcher: a.launcher,
        results_dir: a.results_dir,
        launcher_args: a.launcher_args,
    })
}

/// Parses the arguments after `locate`; errors are one line, prefixed.
pub fn parse(args: &[String]) -> Result<Parsed, String> {
    let prefix = |e: String| format!("commbench locate: {e}");
    crate::args::check_arg_lengths(args).map_err(prefix)?;
    let argv = std::iter::once("commbench locate".to_string()).chain(args.iter().cloned());
    match Args::try_parse_from(argv) {
        Ok(a) => check(a).map(|s| Parsed::Run(Box::new(s))).map_err(prefix),
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
                return Ok(Parsed::Help(e.render().to_string()));
            }
            // clap's own message, first line only, without its "error: ".
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ").to_string();
            Err(prefix(format!("{first} (see commbench locate --help)")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(a: &[&str]) -> Result<Settings, String> {
        match parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())? {
            Parsed::Run(s) => Ok(*s),
            Parsed::Help(_) => Err("help".into()),
        }
    }

    #[test]
    fn hosts_bound_and_probe_arguments() {
        let s = run(&["--hosts", "n1,n2,n1,n3", "--bound", "8", "--", "--mca", "btl", "tcp,self"]).unwrap();
        assert_eq!(s.hosts, ["n1", "n2", "n3"]);
        assert_eq!(s.bound, Duration::from_secs(8));
        assert_eq!(s.launcher_args, ["--mca", "btl", "tcp,self"]);
        assert_eq!(
            s.pairs_args.join(" "),
            "--scheme all --size 1MB -W 16 -i 10 -x 2 --min-fraction-of-median 50% --timeout 4"
        );
        let s =
            run(&["--hosts", "a,b", "--bound", "1", "--min-bw", "20GB/s", "--pairs-args", "--backend ucx"]).unwrap();
        assert!(s.pairs_args.join(" ").ends_with("--min-bw 20GB/s --timeout 1 --backend ucx"), "{:?}", s.pairs_args);
    }

    #[test]
    fn hosts_from_a_hostfile_or_a_record() {
        let d = tempfile::tempdir().unwrap();
        let hf = d.path().join("hosts");
        std::fs::write(&hf, "n1 slots=4\nn2:4\n# n3\nn4\n").unwrap();
        let s = run(&["--hostfile", hf.to_str().unwrap()]).unwrap();
        assert_eq!(s.hosts, ["n1", "n2", "n4"]);
        let rec = d.path().join("r.json");
        std::fs::write(&rec, r#"{"hosts":["x1","x2"],"status":"timeout"}"#).unwrap();
        assert_eq!(run(&["--from", rec.to_str().unwrap()]).unwrap().hosts, ["x1", "x2"]);
        std::fs::write(d.path().join("suite.json"), r#"{"hosts":["s1"]}"#).unwrap();
        assert_eq!(run(&["--from", d.path().to_str().unwrap()]).unwrap().hosts, ["s1"]);
        std::fs::write(&rec, r#"{"hosts":[]}"#).unwrap();
        assert!(run(&["--from", rec.to_str().unwrap()]).unwrap_err().ends_with("names no hosts"));
    }

    /// `-h` states the whole search's bound.
    #[test]
    fn help_states_the_search_bound() {
        let Ok(Parsed::Help(h)) = parse(&["-h".to_string()]) else { panic!("no help") };
        let h = h.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(h.contains("--max-probes <N>"), "{h}");
        assert!(
            h.contains(
                "the whole search runs at most --max-probes probes (4*ceil(log2 N)+6 unless given), so it ends within \
                 that many times --bound; SIGTERM or SIGINT stops it at once"
            ),
            "{h}"
        );
    }

    #[test]
    fn bad_input_is_one_line() {
        let e = |a: &[&str]| run(a).unwrap_err();
        assert!(e(&[]).contains("exactly one of --hosts, --hostfile or --from"));
        assert!(e(&["--hosts", "a", "--from", "x"]).contains("exactly one of"));
        assert!(e(&["--hosts", "a", "--bound", "0"]).contains("--bound must be a positive"));
        assert!(e(&["--hosts", "a", "--size", "lots"]).starts_with("commbench locate: --size: 'lots' is not a size"));
        assert!(e(&["--hosts", "a", "--min-fraction-of-median", "2"]).contains("not a fraction"));
        assert!(e(&["--hosts", "a", "--min-bw", "fast"]).contains("--min-bw"));
        assert!(e(&["--hosts", "a b"]).contains("'a b' is not a host name"));
        assert!(e(&["--hosts", "a,-oProxyCommand=x"]).contains("'-oProxyCommand=x' is not a host name"));
        assert!(e(&["--hosts", "a", "--max-probes", "0"]).contains("--max-probes must be at least 1"));
        let m = e(&["--hosts", "a", "--frobnicate"]);
        assert!(m.contains("--frobnicate") && m.ends_with("(see commbench locate --help)"), "{m}");
        for m in [e(&[]), m] {
            assert!(!m.contains('\n'), "{m}");
        }
    }
}
