//! One probe: `commbench pairs --scheme all` over a set of hosts through
//! the launcher (one rank per host, two on a host probed alone), run like
//! a suite benchmark ([`crate::suite::exec::run`]: its own process group,
//! stopped at the bound) in a directory of its own, then read back from
//! its pairs record: whether it ended by itself, and which hosts and links
//! its criteria called slow.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::search::{Prober, Seen};
use crate::suite::exec::{self, Status};
use crate::suite::launch::{self, LaunchContext, Launcher, LauncherKind, Layout, MpiFlavor};

/// How long a stopped probe's launcher has between SIGTERM and SIGKILL:
/// a probe is a throwaway job (its ranks' records end themselves on
/// SIGTERM), and a frozen host would hold it for the whole grace.
const GRACE: Duration = Duration::from_secs(2);

/// How one probe ended, for the record and the report.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeLog {
    /// 1-based.
    pub index: usize,
    pub hosts: Vec<String>,
    pub np: usize,
    /// `passed`, `slow` (ended, criteria failed), `hung` (stopped at the
    /// bound, or its own watchdog ended it) or `failed`.
    pub outcome: &'static str,
    pub exit_code: Option<i32>,
    pub took_s: f64,
    pub detail: Option<String>,
    pub dir: String,
    pub command: String,
}

/// Runs probes for [`super::search::locate`].
pub struct Runner<'a> {
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
            dir: dir.display().to_string(),
            command: String::new(),
        };
        let hostfile = dir.join("hosts");
        let made = std::fs::create_dir(&dir).and_then(|_| {
            crate::report::safe_file::write_new(&hostfile, hostfile_text(self.launcher.kind, &names, per).as_bytes())
        });
        if let Err(e) = made {
            log.detail = Some(format!("cannot make {}: {e}", dir.display()));
            return (log, Seen::fails());
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
        let mut quiet = crate::suite::progress::Progress::with_output(1, false, Box::new(std::io::sink()));
        let ended = exec::run(&argv, &self.env, &o, stop, &mut quiet);
        log.exit_code = ended.exit_code;
        log.took_s = ended.took.as_secs_f64();
        let record = record_in(&dir);
        let record_detail = record.as_ref().and_then(|v| v["status_detail"].as_str().map(str::to_string));
        let criteria_failed = ended.exit_code == Some(1)
            && record.as_ref().is_some_and(|v| v["outcome"]["passed"] == false && v["status"] == "failed");
        let seen = match (ended.status, record) {
            (Status::Passed, _) => {
                log.outcome = "passed";
                Seen::works()
            }
            (Status::Failed, Some(v)) if criteria_failed => {
                log.outcome = "slow";
                log.detail = v["outcome"]["verdict"].as_str().map(|s| {
                    let n = v["outcome"]["failing_pairs"].as_u64().unwrap_or(0);
                    format!("{s}: {n} of {} pairs below the criteria", v["outcome"]["pairs"].as_u64().unwrap_or(0))
                });
                slow_parts(&v, idx)
            }
            (Status::Timeout, _) => {
                log.outcome = "hung";
                let stopped = ended.took >= self.bound;
                log.detail = Some(if stopped {
                    let why = record_detail.map(|d| format!(" ({})", clip(&d))).unwrap_or_default();
                    format!("had not ended after the {} s bound{why}", self.bound.as_secs_f64())
                } else {
                    clip(&record_detail.or(ended.detail).unwrap_or_else(|| "its watchdog ended it".into()))
                });
                Seen::fails()
            }
            _ => {
                log.outcome = "failed";
                let code = ended.exit_code.map(|c| format!("exit {c}")).unwrap_or_else(|| "killed".into());
                let why = ended.detail.or(record_detail).map(|d| clip(&d)).unwrap_or_else(|| "no reason given".into());
                log.detail = Some(format!("{code}: {why}"));
                Seen::fails()
            }
        };
        (log, seen)
    }
}

impl Prober for Runner<'_> {
    fn probe(&mut self, idx: &[usize]) -> Seen {
        let (log, seen) = self.run(idx);
        let hosts = if idx.len() == 1 { format!("{} alone", self.names(idx)) } else { self.names(idx) };
        let detail = log.detail.as_ref().map(|d| format!("  {d}")).unwrap_or_default();
        let _ =
            writeln!(self.out, "probe {:<3} {:<40} {:<7} {:>6.1} s{detail}", log.index, hosts, log.outcome, log.took_s);
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
        assert!(s.works && !s.all_slow);
        assert_eq!((s.slow_hosts, s.slow_links), (vec![9], vec![(4, 6)]));
        let v: Value = serde_json::from_str(r#"{"outcome":{"failing":[{"a":0,"b":1,"cause":"everything"}]}}"#).unwrap();
        assert!(slow_parts(&v, &[0, 1]).all_slow);
    }
}
