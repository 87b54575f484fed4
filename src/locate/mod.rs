//! `commbench locate`: finds the hosts and links that hang, fail or are
//! slow, with as few short jobs as it can. The search (`search`) is pure
//! logic over probes; a probe (`probe`) is one `commbench pairs` job over
//! a set of the hosts, through the launcher, stopped at a bound. The
//! suite runs the same search after a benchmark hangs
//! (`suite --locate-on-hang`).
//!
//! Output: one line per probe as it ends, then one line per finding, on
//! stdout; `locate.json` (every probe, its command, how it ended, and the
//! findings) and each probe's files in the run directory.
//!
//! Exit status: 0 nothing found, 1 something named, 2 bad usage, no
//! launcher, or the probe itself failed (no host is named then), 128 +
//! the signal when one stopped the search.

pub mod options;
pub mod probe;
pub mod search;

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::launch::{self, Launcher, MpiFlavor};
use crate::report::time::Utc;
use options::{Parsed, Settings};
use probe::{ProbeLog, Runner};
use search::{Findings, Kind, Stopped};

const NAME: &str = "commbench locate";
pub(crate) const SCHEMA: &str = "commbench-locate-record/1";

/// One finding, with host names.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Named {
    pub kind: Kind,
    pub hosts: Vec<String>,
    pub probe: usize,
    /// The line printed for it.
    pub line: String,
}

/// `locate.json` (schema `commbench-locate-record/1`).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct LocateRecord {
    pub schema: String,
    pub started_utc: String,
    pub finished_utc: String,
    pub hosts: Vec<String>,
    pub hosts_from: String,
    pub bound_s: f64,
    pub launcher: Launcher,
    pub launcher_args: Vec<String>,
    pub pairs_args: Vec<String>,
    /// The most probes one bad host or link can take on this many hosts.
    pub probe_bound: usize,
    /// The most probes this search would run (`--max-probes`).
    pub max_probes: usize,
    pub probes: Vec<ProbeLog>,
    pub findings: Vec<Named>,
    /// Slow verdicts a repeat probe did not show (noise), not named.
    pub unconfirmed_slow: usize,
    /// Why the search ended before its end (`interrupted by SIGTERM`, `its
    /// bound of N probes`); absent when it ran to its end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    pub took_s: f64,
    pub exit_code: i32,
}

/// Everything one search needs (from `locate`'s options or the suite's).
pub(crate) struct Search<'a> {
    pub hosts: &'a [String],
    pub hosts_from: String,
    pub bound: Duration,
    /// The most probes to run ([`search::search_bound`] unless told).
    pub max_probes: usize,
    pub pairs_args: &'a [String],
    pub launcher: &'a Launcher,
    pub flavor: MpiFlavor,
    pub launcher_args: &'a [String],
    pub env: Vec<(String, String)>,
    /// The run directory, made already.
    pub dir: PathBuf,
}

/// The line for one finding.
fn describe(kind: &Kind, names: &[String], probe: usize, log: &[ProbeLog]) -> String {
    let logged = log.get(probe.wrapping_sub(1));
    let why = logged.and_then(|l| l.detail.as_deref()).map(|d| crate::diag::printable(d).into_owned());
    let at = match why {
        Some(d) => format!("probe {probe}: {d}"),
        None => format!("probe {probe}"),
    };
    let list = names.join(" ");
    match kind {
        Kind::Host => format!("found: host {list} fails alone ({at})"),
        Kind::Link => {
            format!("found: link {} <-> {}: each end works, the two together fail ({at})", names[0], names[1])
        }
        Kind::SlowHost => format!("found: host {list} is slow: every pair through it is below the criteria ({at})"),
        Kind::SlowLink => format!("found: link {} <-> {} is slow: below the criteria ({at})", names[0], names[1]),
        Kind::AllSlow => {
            format!("found: every pair of {list} is below the criteria; no host or link stands out ({at})")
        }
        Kind::Unresolved => format!(
            "found: {list} fail together though every part tried works: a fault this search cannot take apart ({at})"
        ),
        Kind::ProbeFailed => {
            let words = logged.and_then(|l| l.words.as_deref()).unwrap_or("no reason given");
            let words = crate::diag::printable(words);
            match logged.map(|l| l.outcome) {
                Some("not_started") => format!(
                    "unresolved: the probe itself failed ({words}): no probe got as far as starting pairs on any \
                     host, so no host is blamed (probe {probe})"
                ),
                _ => format!("unresolved: the probe itself failed ({words}): no host is blamed (probe {probe})"),
            }
        }
    }
}

/// Runs the search; its lines go to `out`, its record into the run
/// directory. Returns the record (its `exit_code`: 0 nothing found, 1
/// something named).
pub(crate) fn run_search(s: Search, out: &mut dyn Write) -> LocateRecord {
    let started = Utc::now();
    let t0 = Instant::now();
    let n = s.hosts.len();
    let _ = writeln!(
        out,
        "# {NAME}: {n} host(s) from {}, at most {} probes of `commbench pairs --scheme all`, each stopped after {} s; \
         results in {}",
        s.hosts_from,
        s.max_probes,
        s.bound.as_secs_f64(),
        s.dir.display()
    );
    let _ = out.flush();
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("commbench"));
    let mut runner = Runner {
        hosts: s.hosts,
        launcher: s.launcher,
        flavor: s.flavor,
        launcher_args: s.launcher_args,
        env: s.env,
        exe,
        pairs_args: s.pairs_args,
        bound: s.bound,
        dir: s.dir.clone(),
        log: Vec::new(),
        out,
    };
    let found: Findings = search::locate_within(n, s.max_probes, &mut runner);
    let log = std::mem::take(&mut runner.log);
    let all: Vec<usize> = (0..n).collect();
    let everyone = runner.names(&all);
    let out = runner.out;
    let findings: Vec<Named> = found
        .found
        .iter()
        .map(|f| {
            let names: Vec<String> = f.hosts.iter().map(|&i| s.hosts[i].clone()).collect();
            let line = describe(&f.kind, &names, f.probe, &log);
            Named { kind: f.kind.clone(), hosts: names, probe: f.probe, line }
        })
        .collect();
    for f in &findings {
        let _ = writeln!(out, "{}", f.line);
    }
    if found.unconfirmed > 0 {
        let _ = writeln!(
            out,
            "note: {} slow verdict(s) of one probe were not seen again when its hosts were probed once more (noise): \
             not named",
            found.unconfirmed
        );
    }
    let so_far = match findings.len() {
        0 => "nothing".to_string(),
        k => format!("the {k} line(s) above"),
    };
    let signal = crate::job::signals::caught().map(crate::job::signals::name).unwrap_or_else(|| "a signal".into());
    let stopped = match found.stopped {
        Some(Stopped::Interrupted) => {
            let at = match log.last() {
                Some(l) if l.outcome == "interrupted" => format!("during probe {}", l.index),
                Some(l) => format!("after probe {}", l.index),
                None => "before its first probe".into(),
            };
            let _ = writeln!(out, "interrupted: {signal} stopped the search {at}; found so far: {so_far}");
            Some(format!("interrupted by {signal}"))
        }
        Some(Stopped::Bound) => {
            let _ = writeln!(
                out,
                "stopped: the search ran its bound of {} probes (--max-probes) before its end; found so far: {so_far}",
                s.max_probes
            );
            Some(format!("its bound of {} probes", s.max_probes))
        }
        None => {
            if findings.is_empty() {
                let _ = writeln!(
                    out,
                    "nothing found: {everyone} ran pairs together within the {} s bound and met the criteria",
                    s.bound.as_secs_f64()
                );
            }
            None
        }
    };
    let exit_code = match (found.stopped, found.probe_failed(), findings.is_empty()) {
        (Some(Stopped::Interrupted), ..) => 128 + crate::job::signals::caught().unwrap_or(libc::SIGTERM),
        (_, true, _) => 2,
        (Some(Stopped::Bound), _, true) => 2,
        (None, _, true) => 0,
        (_, _, false) => 1,
    };
    let took = t0.elapsed();
    let record_path = s.dir.join("locate.json");
    let probes = log.len();
    let record = LocateRecord {
        schema: SCHEMA.into(),
        started_utc: started.rfc3339(),
        finished_utc: Utc::now().rfc3339(),
        hosts: s.hosts.to_vec(),
        hosts_from: s.hosts_from,
        bound_s: s.bound.as_secs_f64(),
        launcher: s.launcher.clone(),
        launcher_args: s.launcher_args.to_vec(),
        pairs_args: s.pairs_args.to_vec(),
        probe_bound: search::probe_bound(n),
        max_probes: s.max_probes,
        probes: log,
        exit_code,
        unconfirmed_slow: found.unconfirmed,
        stopped,
        findings,
        took_s: took.as_secs_f64(),
    };
    let written = serde_json::to_string_pretty(&record)
        .map_err(std::io::Error::other)
        .and_then(|j| crate::report::safe_file::write_new(&record_path, (j + "\n").as_bytes()));
    let said = match written {
        Ok(()) => format!("record: {}", record_path.display()),
        Err(e) => {
            crate::say!("{NAME}: cannot write {}: {e}", record_path.display());
            format!("no record: cannot write {}", record_path.display())
        }
    };
    let _ = writeln!(out, "{probes} probe(s) in {:.1} s; {said}", took.as_secs_f64());
    let _ = out.flush();
    record
}

/// The launcher for this build's MPI: the one named, else the detected one.
pub(crate) fn launcher_for(named: Option<&str>) -> Result<(Launcher, MpiFlavor), String> {
    let (flavor, library) = MpiFlavor::of_this_build();
    let in_allocation = crate::report::slurm::SlurmInfo::from_env().is_some();
    let launcher = match named {
        Some(n) => Launcher::named(n, flavor)?,
        None => Launcher::detect(flavor, in_allocation, &launch::on_path),
    };
    if !launcher.matches(flavor) {
        return Err(format!(
            "launcher '{}' belongs to another MPI than this commbench's ({})",
            launcher.program,
            crate::job::launcher::short_library_name(&library)
        ));
    }
    if !launch::on_path(&launcher.program) {
        return Err(format!("launcher '{}' not found", launcher.program));
    }
    Ok((launcher, flavor))
}

fn run(s: &Settings) -> Result<i32, String> {
    let (launcher, flavor) = launcher_for(s.launcher.as_deref())?;
    let job = std::env::var("SLURM_JOB_ID").ok().filter(|j| !j.is_empty());
    let dir = launch::run_dir::create(
        &launch::run_dir::results_root(s.results_dir.as_deref()),
        &Utc::now().compact(),
        "locate",
        None,
        job.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    let mut env = launch::env_for(&launcher);
    // Held until the last probe ended.
    let _tmpdir = launch::own_tmpdir(&launcher, &mut env);
    let search = Search {
        hosts: &s.hosts,
        hosts_from: s.hosts_from.clone(),
        bound: s.bound,
        max_probes: s.max_probes.unwrap_or_else(|| search::search_bound(s.hosts.len())),
        pairs_args: &s.pairs_args,
        launcher: &launcher,
        flavor,
        launcher_args: &s.launcher_args,
        env,
        dir,
    };
    let record = run_search(search, &mut io::stdout().lock());
    Ok(record.exit_code)
}

/// Entry point: the arguments after `locate`; returns the exit status.
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
            // Before any thread starts: a signal stops the probe running.
            crate::job::signals::catch();
            match run(&s) {
                Ok(code) => code,
                Err(e) => {
                    crate::say!("{NAME}: {e}");
                    2
                }
            }
        }
    }
}
