//! One probe: `commbench pairs --scheme all` over a set of hosts through
//! the launcher (one rank per host, two on a host probed alone), run like
//! a suite benchmark ([`crate::launch::exec::run`]: its own process group,
//! stopped at the bound) in a directory of its own, then read back from
//! its pairs record: whether it ended by itself, and which hosts and links
//! its criteria called slow.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::search::{Prober, Ran, Seen};
use crate::launch::exec::{self, Status};
use crate::launch::{self, LaunchContext, Launcher, LauncherKind, Layout, MpiFlavor};

/// How long a stopped probe's launcher has between SIGTERM and SIGKILL:
/// a probe is a throwaway job (its ranks' records end themselves on
/// SIGTERM), and a frozen host would hold it for the whole grace.
const GRACE: Duration = Duration::from_secs(2);

/// How one probe ended, for the record and the report.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ProbeLog {
    /// 1-based.
    pub index: usize,
    pub hosts: Vec<String>,
    pub np: usize,
    /// `passed`, `slow` (ended, every direction measured, criteria
    /// failed), `hung` (stopped at the bound, or its own watchdog ended
    /// it), `failed` (pairs started and failed), `not_started` (the
    /// launcher gave up before pairs started), `probe_failed` (the probe
    /// itself could not run: see [`judge`]) or `interrupted`.
    pub outcome: &'static str,
    pub exit_code: Option<i32>,
    pub took_s: f64,
    pub detail: Option<String>,
    /// The launcher's or pairs' words alone, for a finding's line.
    #[serde(skip)]
    pub words: Option<String>,
    pub dir: String,
    pub command: String,
}

/// Runs probes for [`super::search::locate`].
pub(crate) struct Runner<'a> {
    pub hosts: &'a [String],
    pub launcher: &'a Launcher,
    pub flavor: MpiFlavor,
    pub launcher_args: &'a [String],
    pub env: Vec<(String, String)>,
    /// This commbench (probes run its `pairs`).
    pub exe: PathBuf,
    pub pairs_args: &'a [String],
    pub bound: Duration,
    /// The run directory; probe k goes in `probeK/`.
    pub dir: PathBuf,
    pub log: Vec<ProbeLog>,
    /// Where each probe's line goes as it ends.
    pub out: &'a mut dyn Write,
}

/// A hostfile in the launcher's own form.
fn hostfile_text(kind: LauncherKind, hosts: &[&str], slots: usize) -> String {
    hosts
        .iter()
        .map(|h| match kind {
            LauncherKind::Hydra => format!("{h}:{slots}\n"),
            _ => format!("{h} slots={slots}\n"),
        })
        .collect()
}

/// The pairs record a probe left in `dir`.
fn record_in(dir: &Path) -> Option<Value> {
    let rd = std::fs::read_dir(dir).ok()?;
    let path = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with("_pairs.json")))?;
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// What a finished pairs record's criteria single out, as host indices
/// (`idx[rank]`: one rank per host).
fn slow_parts(v: &Value, idx: &[usize]) -> Seen {
    let mut seen = Seen::works();
    let host_of = |r: &Value| r.as_u64().and_then(|r| idx.get(r as usize)).copied();
    if let Some(hosts) = v["outcome"]["hosts"].as_array() {
        for h in hosts.iter().filter(|h| h["bad"] == true) {
            if let Some(i) = host_of(&h["ranks"][0]) {
                seen.slow_hosts.push(i);
            }
        }
    }
    if let Some(failing) = v["outcome"]["failing"].as_array() {
        for f in failing {
            match &f["cause"] {
                Value::String(c) if c == "link" => {
                    if let (Some(a), Some(b)) = (host_of(&f["a"]), host_of(&f["b"])) {
                        let link = (a.min(b), a.max(b));
                        if a != b && !seen.slow_links.contains(&link) {
                            seen.slow_links.push(link);
                        }
                    }
                }
                Value::String(c) if c == "everything" => seen.all_slow = true,
                _ => {}
            }
        }
    }
    seen
}

fn clip(s: &str) -> String {
    const MAX: usize = 240;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

impl Runner<'_> {
    /// Names of hosts `idx`, for a line: all of them up to 6, else the
    /// first 4 and a count.
    pub fn names(&self, idx: &[usize]) -> String {
        if idx.len() == self.hosts.len() && idx.len() > 2 {
            return format!("all {} hosts", idx.len());
        }
        let shown = if idx.len() > 6 { &idx[..4] } else { idx };
        let mut s: Vec<&str> = shown.iter().map(|&i| self.hosts[i].as_str()).collect();
        let more = format!("and {} more", idx.len() - shown.len());
        if shown.len() < idx.len() {
            s.push(&more);
        }
        s.join(" ")
    }

    fn run(&mut self, idx: &[usize]) -> (ProbeLog, Seen) {
        let index = self.log.len() + 1;
        let dir = self.dir.join(format!("probe{index}"));
        let names: Vec<&str> = idx.iter().map(|&i| self.hosts[i].as_str()).collect();
        let alone = idx.len() == 1;
        let (np, per) = if alone { (2, 2) } else { (idx.len(), 1) };
        let mut log = ProbeLog {
            index,
            hosts: names.iter().map(|s| s.to_string()).collect(),
            np,
            outcome: "failed",
            exit_code: None,
            took_s: 0.0,
            detail: None,
            words: None,
            dir: dir.display().to_string(),
            command: String::new(),
        };
        let hostfile = dir.join("hosts");
        let made = std::fs::create_dir(&dir).and_then(|_| {
            crate::report::safe_file::write_new(&hostfile, hostfile_text(self.launcher.kind, &names, per).as_bytes())
        });
        if let Err(e) = made {
            // No place to write: the probe's failure, not its hosts'.
            let words = format!("cannot make {}: {e}", dir.display());
            log.outcome = "probe_failed";
            (log.detail, log.words) = (Some(words.clone()), Some(words));
            return (log, Seen::ran(Ran::Broken));
        }
        let owned: Vec<String> = log.hosts.clone();
        let ctx = LaunchContext {
            flavor: Some(self.flavor),
            hostfile: Some((&hostfile, &owned)),
            launcher_args: self.launcher_args,
            unbind: false,
        };
        let layout = Layout { np, ppn: Some(per), nodes: Some(idx.len()) };
        let mut args = vec!["pairs".to_string()];
        args.extend(self.pairs_args.iter().cloned());
        args.extend(["--results-dir".to_string(), dir.display().to_string()]);
        let argv = launch::command(self.launcher, &layout, &ctx, &self.exe, &args);
        log.command = launch::shell_line(&argv);
        let (out, err) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
        let o = exec::Output { out: &out, err: &err, echo: false, record: None };
        let stop = exec::Stop { max_time: Some(self.bound.as_secs_f64()), grace: GRACE };
        let mut quiet = crate::launch::progress::Progress::with_output(1, false, Box::new(std::io::sink()));
        let ended = exec::run(&argv, &self.env, &o, stop, &mut quiet);
        log.exit_code = ended.exit_code;
        log.took_s = ended.took.as_secs_f64();
        let record = record_in(&dir);
        let judged = judge(&ended, record.as_ref(), np, self.bound, &dir);
        log.outcome = judged.outcome;
        log.detail = judged.detail;
        log.words = judged.words;
        let seen = match (judged.ran, record) {
            (Ran::Works, Some(v)) if judged.outcome == "slow" => slow_parts(&v, idx),
            (ran, _) => Seen::ran(ran),
        };
        (log, seen)
    }
}

/// How a probe ended, from the launcher's end and pairs' record.
struct Judged {
    outcome: &'static str,
    ran: Ran,
    /// For the probe's line and record.
    detail: Option<String>,
    /// The launcher's or pairs' own words, or locate's, for a finding.
    words: Option<String>,
}

/// Whether pairs' record shows every direction of its schedule measured
/// on `np` ranks; else what it shows.
fn all_measured(v: &Value, np: usize) -> Result<(), String> {
    let ranks = v["ranks"].as_array().map_or(0, Vec::len);
    let expected = v["schedule"]["directions"].as_u64().unwrap_or(0);
    let measured: u64 =
        v["paths"].as_array().map(|p| p.iter().filter_map(|g| g["directions"].as_u64()).sum()).unwrap_or(0);
    if ranks != np {
        return Err(format!("pairs' record shows {ranks} of the {np} ranks"));
    }
    if expected == 0 || measured != expected {
        return Err(format!("pairs' record shows {measured} of {expected} directions measured"));
    }
    Ok(())
}

/// What exec's [`exec::run`] says when it could not start the launcher at
/// all (its files or the program): locate's own failure, not a host's.
fn not_launched(ended: &exec::Ended) -> bool {
    const LOCAL: [&str; 4] = ["cannot create ", "cannot start ", "cannot hand ", "empty command"];
    ended.exit_code.is_none() && ended.detail.as_deref().is_some_and(|d| LOCAL.iter().any(|p| d.starts_with(p)))
}

/// Judges one probe. It works only when it ended by itself and pairs'
/// record shows every direction measured; it is the probe's own failure
/// (no host to blame) when it could not be launched, when it exited 0
/// without that record, or when pairs refused its arguments or could not
/// set up (its exit status 2, in its own words); a failure with no pairs
/// record is the launcher giving up before the job started; the rest ran
/// on the hosts and failed.
fn judge(ended: &exec::Ended, record: Option<&Value>, np: usize, bound: Duration, dir: &Path) -> Judged {
    let record_detail = record.and_then(|v| v["status_detail"].as_str().map(str::to_string));
    let status = record.and_then(|v| v["status"].as_str()).unwrap_or("");
    let measured = record.map(|v| all_measured(v, np));
    let code = ended.exit_code.map(|c| format!("exit {c}")).unwrap_or_else(|| "killed".into());
    let why = ended.detail.clone().or(record_detail.clone()).map(|d| clip(&d));
    let broken = |words: String| Judged {
        outcome: "probe_failed",
        ran: Ran::Broken,
        detail: Some(format!("{code}: {words}")),
        words: Some(words),
    };
    if ended.status == Status::Interrupted {
        let detail = crate::job::signals::caught().map(|s| format!("stopped by {}", crate::job::signals::name(s)));
        return Judged { outcome: "interrupted", ran: Ran::Interrupted, detail, words: None };
    }
    if not_launched(ended) {
        return broken(why.unwrap_or_else(|| "the launcher could not be started".into()));
    }
    match ended.status {
        Status::Passed => match (record, measured) {
            (Some(_), Some(Ok(()))) if matches!(status, "passed" | "complete") => {
                Judged { outcome: "passed", ran: Ran::Works, detail: None, words: None }
            }
            (None, _) => broken(format!(
                "the launcher exited 0 but left no pairs record in {}: nothing was measured",
                dir.display()
            )),
            (Some(_), Some(Err(e))) => broken(format!("the launcher exited 0 but {e}")),
            (Some(_), _) => broken(format!("the launcher exited 0 but pairs' record says `{status}`")),
        },
        Status::Failed
            if ended.exit_code == Some(1)
                && status == "failed"
                && record.is_some_and(|v| v["outcome"]["passed"] == false)
                && matches!(measured, Some(Ok(()))) =>
        {
            let v = record.unwrap_or(&Value::Null);
            let detail = v["outcome"]["verdict"].as_str().map(|s| {
                let n = v["outcome"]["failing_pairs"].as_u64().unwrap_or(0);
                format!("{s}: {n} of {} pairs below the criteria", v["outcome"]["pairs"].as_u64().unwrap_or(0))
            });
            Judged { outcome: "slow", ran: Ran::Works, detail, words: None }
        }
        Status::Timeout => {
            let detail = if ended.took >= bound {
                let why = record_detail.map(|d| format!(" ({})", clip(&d))).unwrap_or_default();
                format!("had not ended after the {} s bound{why}", bound.as_secs_f64())
            } else {
                clip(&record_detail.or(ended.detail.clone()).unwrap_or_else(|| "its watchdog ended it".into()))
            };
            Judged { outcome: "hung", ran: Ran::Fails, detail: Some(detail), words: None }
        }
        _ => {
            let words = why.unwrap_or_else(|| "no reason given".into());
            if ended.exit_code == Some(crate::pairs::EXIT_USAGE) && words.starts_with("commbench pairs") {
                return broken(words);
            }
            let ran = if record.is_some() { Ran::Fails } else { Ran::NotStarted };
            let outcome = if record.is_some() { "failed" } else { "not_started" };
            Judged { outcome, ran, detail: Some(format!("{code}: {words}")), words: Some(words) }
        }
    }
}

impl Prober for Runner<'_> {
    fn probe(&mut self, idx: &[usize]) -> Seen {
        // A signal between probes: none more starts.
        if crate::job::signals::caught().is_some() {
            return Seen::ran(Ran::Interrupted);
        }
        let (log, seen) = self.run(idx);
        let hosts = if idx.len() == 1 { format!("{} alone", self.names(idx)) } else { self.names(idx) };
        let detail = log.detail.as_ref().map(|d| format!("  {}", crate::diag::printable(d))).unwrap_or_default();
        let _ = writeln!(
            self.out,
            "probe {:<3} {:<40} {:<12} {:>6.1} s{detail}",
            log.index, hosts, log.outcome, log.took_s
        );
        let _ = self.out.flush();
        self.log.push(log);
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostfiles_in_each_launchers_form() {
        assert_eq!(hostfile_text(LauncherKind::OpenMpi, &["a", "b"], 1), "a slots=1\nb slots=1\n");
        assert_eq!(hostfile_text(LauncherKind::Hydra, &["a"], 2), "a:2\n");
    }

    #[test]
    fn slow_hosts_and_links_from_a_pairs_record() {
        let v: Value = serde_json::from_str(
            r#"{"outcome":{"hosts":[{"name":"x","ranks":[0],"bad":false},{"name":"y","ranks":[2],"bad":true}],
                "failing":[{"a":0,"b":2,"cause":{"host":"y"}},{"a":0,"b":1,"cause":"link"},
                           {"a":1,"b":0,"cause":"link"}]}}"#,
        )
        .unwrap();
        let s = slow_parts(&v, &[4, 6, 9]);
        assert!(s.ok() && !s.all_slow);
        assert_eq!((s.slow_hosts, s.slow_links), (vec![9], vec![(4, 6)]));
        let v: Value = serde_json::from_str(r#"{"outcome":{"failing":[{"a":0,"b":1,"cause":"everything"}]}}"#).unwrap();
        assert!(slow_parts(&v, &[0, 1]).all_slow);
    }

    fn ended(status: Status, code: Option<i32>, detail: Option<&str>) -> exec::Ended {
        exec::Ended { status, exit_code: code, took: Duration::from_millis(100), detail: detail.map(str::to_string) }
    }

    fn judged(e: &exec::Ended, record: Option<&str>) -> (&'static str, Ran, Option<String>) {
        let v: Option<Value> = record.map(|r| serde_json::from_str(r).unwrap());
        let j = judge(e, v.as_ref(), 2, Duration::from_secs(8), Path::new("/r/probe1"));
        (j.outcome, j.ran, j.words)
    }

    const MEASURED: &str = r#"{"status":"passed","ranks":[{},{}],"schedule":{"directions":2},
        "paths":[{"directions":2}],"outcome":{"passed":true}}"#;

    /// A probe passes only on a record showing every direction measured;
    /// exit 0 without one is the probe's failure, in words that say so.
    #[test]
    fn a_probe_passes_only_with_every_direction_measured() {
        let ok = ended(Status::Passed, Some(0), None);
        assert_eq!(judged(&ok, Some(MEASURED)).1, Ran::Works);
        let (outcome, ran, words) = judged(&ok, None);
        assert_eq!((outcome, ran), ("probe_failed", Ran::Broken));
        assert!(words.unwrap().starts_with("the launcher exited 0 but left no pairs record in /r/probe1: nothing"));
        let half = MEASURED.replace(r#""paths":[{"directions":2}]"#, r#""paths":[{"directions":1}]"#);
        let (_, ran, words) = judged(&ok, Some(&half));
        assert_eq!(ran, Ran::Broken);
        assert_eq!(words.unwrap(), "the launcher exited 0 but pairs' record shows 1 of 2 directions measured");
        let one_rank = MEASURED.replace(r#""ranks":[{},{}]"#, r#""ranks":[{}]"#);
        assert_eq!(
            judged(&ok, Some(&one_rank)).2.unwrap(),
            "the launcher exited 0 but pairs' record shows 1 of the 2 ranks"
        );
    }

    /// Who a failure is blamed on: pairs refusing its arguments and a
    /// launcher that could not be started are the probe's; a failure with
    /// no pairs record is the launcher giving up before the job started;
    /// with one, the job ran on its hosts.
    #[test]
    fn failures_are_the_probes_or_the_hosts() {
        let pairs = ended(Status::Failed, Some(2), Some("commbench pairs: unexpected argument '--bogus' found"));
        assert_eq!(judged(&pairs, None), ("probe_failed", Ran::Broken, Some(pairs.detail.clone().unwrap())));
        let start = ended(Status::Failed, None, Some("cannot start mpirun: No such file or directory (os error 2)"));
        assert_eq!(judged(&start, None).1, Ran::Broken);
        let refused = ended(Status::Failed, Some(1), Some("mpirun: Error: unknown option \"--bogus-option\""));
        assert_eq!(judged(&refused, None), ("not_started", Ran::NotStarted, refused.detail.clone()));
        let died = ended(Status::Failed, Some(1), Some("rank 1 died"));
        assert_eq!(judged(&died, Some(r#"{"status":"rank_failed"}"#)).1, Ran::Fails);
        // Exit 2 from the launcher itself is not pairs' refusal.
        let launcher_two = ended(Status::Failed, Some(2), Some("srun: error: invalid node name"));
        assert_eq!(judged(&launcher_two, None).1, Ran::NotStarted);
        let hung = ended(Status::Timeout, None, Some("stopped by the suite after --max-time 8 s"));
        assert_eq!(judged(&hung, None).1, Ran::Fails);
    }
}
