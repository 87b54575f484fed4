//! Running one benchmark of the suite: starts its launcher command with
//! stdout going to `<bench>.txt` in the run directory (which the suite
//! follows, passing whole lines to its own stdout as they land) and stderr
//! to `<bench>.stderr`; waits for it (stopping it after `--max-time`), and
//! says how it ended and, when it failed, why in one line.
//!
//! The launcher writes its files itself, never into a pipe the suite
//! reads: when the suite dies, what the job still says (Open MPI's mpirun
//! writes a note to its stdout as it ends its ranks) lands in the file
//! instead of a pipe with no reader, where it would be lost or raise
//! SIGPIPE in the launcher. The launcher runs under a keeper
//! ([`super::keeper`]) that passes the suite's death on to it.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::progress::Progress;

/// How a benchmark ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
    /// Its own watchdog (exit 124) or the suite's --max-time ended it.
    Timeout,
    /// The suite got a signal while it ran, or before it started.
    Interrupted,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Timeout => "timeout",
            Status::Interrupted => "interrupted",
        }
    }
}

/// What running a command gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    pub status: Status,
    pub exit_code: Option<i32>,
    pub took: Duration,
    /// Why it did not pass, in one line.
    pub detail: Option<String>,
}

/// Exit status of a benchmark stopped by its own watchdog.
pub(crate) const WATCHDOG_EXIT: i32 = crate::job::watchdog::TIMEOUT_EXIT;

/// Where a benchmark's output goes: its stdout into `out` (and, with
/// `echo`, to the suite's stdout as whole lines arrive), its stderr into
/// `err`.
pub struct Output<'a> {
    pub out: &'a Path,
    pub err: &'a Path,
    pub echo: bool,
    /// The run record the benchmark writes (commbench's binaries): once it
    /// says the run ended, the launcher has [`linger`] to exit.
    pub record: Option<&'a Path>,
}

/// How long the launcher may go on after the run record says the run
/// ended before the suite stops it: a launcher that waits for a daemon on
/// a host it can no longer reach (Open MPI's mpirun does, for as long as
/// TCP keeps retrying: over 14 minutes here) would otherwise hold the
/// suite. A run that failed (`timeout`, `rank_failed`, `interrupted`,
/// `error`) has its ranks gone or going: 5 s. One that ended well still
/// has MPI_Finalize and the launcher's teardown to do, which take longer
/// on large jobs: 60 s.
pub(crate) fn linger(status: crate::report::record::RunStatus) -> Duration {
    use crate::report::record::RunStatus::*;
    match status {
        Complete | Passed | Failed | ValidationFailed => Duration::from_secs(60),
        _ => Duration::from_secs(5),
    }
}

/// How often the run record is read while the launcher runs.
const RECORD_POLL: Duration = Duration::from_millis(500);

/// How long the suite goes on reading the launcher's output once the
/// launcher has exited (a rank left behind may still be writing).
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// How long the launcher's process group has after SIGTERM (the suite's
/// signal or --max-time) before it gets SIGKILL.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);

/// When [`run`] stops a launcher: after `max_time` seconds (none: never),
/// SIGTERM to its group, then SIGKILL `grace` later.
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    pub max_time: Option<f64>,
    pub grace: Duration,
}

/// Signals process group `pgid` (the launcher's, which the suite made).
fn signal_group(pgid: i32, sig: i32) {
    // SAFETY: signals the process group the suite created for its child.
    unsafe { libc::kill(-pgid, sig) };
}

/// Runs `argv`, its output as `o` says, in a process group of its own:
/// the suite's SIGTERM, SIGINT or SIGHUP ([`crate::job::signals::caught`]) is
/// passed to that group, and `stop.max_time` sends it SIGTERM; either way
/// the group gets SIGKILL after `stop.grace`, and what is left of it once
/// the launcher has exited. The suite's own death (even SIGKILL) sends the
/// launcher one SIGTERM, from its keeper ([`super::keeper`]).
pub fn run(argv: &[String], env: &[(String, String)], o: &Output, stop: Stop, progress: &mut Progress) -> Ended {
    run_split(argv, env, o, stop, progress, &mut Whole { echo: o.echo, record: o.record })
}

/// What the suite does with a launch's stdout as it lands: one benchmark's
/// output ([`Whole`]), or several benchmarks' of one shared launch, cut
/// into each one's files (suite/shared.rs).
pub(crate) trait Split {
    /// Whole lines of the launch's stdout (each with its newline).
    fn stdout(&mut self, lines: &[u8], progress: &mut Progress);
    /// The run record watched now for the launcher's [`linger`].
    fn record(&self) -> Option<&Path>;
    /// Since when `--max-time` counts (None: the launch's start).
    fn since(&self) -> Option<Instant>;
}

/// One benchmark's launch: its stdout echoed when asked.
struct Whole<'a> {
    echo: bool,
    record: Option<&'a Path>,
}

impl Split for Whole<'_> {
    fn stdout(&mut self, lines: &[u8], progress: &mut Progress) {
        if self.echo {
            progress.echo(lines);
        }
    }

    fn record(&self) -> Option<&Path> {
        self.record
    }

    fn since(&self) -> Option<Instant> {
        None
    }
}

/// [`run`], with the launch's stdout handed to `split` as it lands (it is
/// in `o.out` too) and the record and `--max-time` it says.
pub(crate) fn run_split(
    argv: &[String],
    env: &[(String, String)],
    o: &Output,
    stop: Stop,
    progress: &mut Progress,
    split: &mut dyn Split,
) -> Ended {
    let max_time = stop.max_time;
    let start = Instant::now();
    let failed =
        |detail: String| Ended { status: Status::Failed, exit_code: None, took: start.elapsed(), detail: Some(detail) };
    let Some((program, rest)) = argv.split_first() else { return failed("empty command".into()) };
    use crate::report::safe_file::{create_new, create_new_readable};
    let (stdout, stderr) = match (create_new_readable(o.out), create_new(o.err)) {
        (Ok(out), Ok(e)) => (out, e),
        (Err(e), _) => return failed(format!("cannot create {}: {e}", o.out.display())),
        (_, Err(e)) => return failed(format!("cannot create {}: {e}", o.err.display())),
    };
    let (mut follow, child_out) = match stdout.try_clone() {
        Ok(c) => (Follow { file: stdout, at: 0 }, c),
        Err(e) => return failed(format!("cannot hand {} to {program}: {e}", o.out.display())),
    };
    let mut cmd = Command::new(program);
    cmd.args(rest).stdin(Stdio::null()).stdout(child_out).stderr(stderr);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let suite = std::process::id();
    // SAFETY: `split` is made for a pre_exec hook. The launcher runs under
    // a keeper ([`super::keeper`]), the suite's child, which passes the
    // suite's death (SIGKILL included) on to it exactly once, so that it
    // ends its ranks, which end their run records, instead of living on
    // without the suite.
    unsafe { std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || super::keeper::split(suite)) };
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot start {program}: {e}")),
    };
    let pgid = child.id() as i32;
    let mut interrupted: Option<i32> = None;
    let mut lines = LineBuffer::default();
    let limit = max_time.map(Duration::from_secs_f64);
    let mut record = RecordWatch::new(split.record());
    let mut stopped_at: Option<Instant> = None;
    let mut exited_at: Option<Instant> = None;
    let mut status = None;
    loop {
        if status.is_none() {
            match child.try_wait() {
                Ok(Some(st)) => {
                    status = Some(Ok(st));
                    exited_at = Some(Instant::now());
                }
                Ok(None) => {}
                Err(e) => status = Some(Err(e)),
            }
        }
        let now = Instant::now();
        if split.record() != record.path.as_deref() {
            // A shared launch's next benchmark: its own record.
            record = RecordWatch { lingered: record.lingered.take(), ..RecordWatch::new(split.record()) };
        }
        let signal = crate::job::signals::caught();
        match (&status, limit, stopped_at) {
            (None, _, None) if signal.is_some() => {
                interrupted = signal;
                signal_group(pgid, signal.unwrap_or(libc::SIGTERM));
                stopped_at = Some(now);
            }
            (None, Some(l), None) if now.duration_since(split.since().unwrap_or(start)) > l => {
                // The launcher ends its ranks on SIGTERM.
                signal_group(pgid, libc::SIGTERM);
                stopped_at = Some(now);
            }
            (None, _, None) if record.launcher_lingers(now) => {
                signal_group(pgid, libc::SIGTERM);
                stopped_at = Some(now);
            }
            (None, _, Some(t)) if now.duration_since(t) > stop.grace => {
                signal_group(pgid, libc::SIGKILL);
                let _ = child.kill();
            }
            _ => {}
        }
        progress.tick();
        let chunk = follow.next_chunk();
        let more = !chunk.is_empty();
        if more {
            split.stdout(&lines.push(&chunk), progress);
        }
        if !more {
            std::thread::sleep(Duration::from_millis(50));
        }
        match (&status, exited_at) {
            (Some(Err(_)), _) => break,
            (Some(Ok(_)), Some(t)) if !more || t.elapsed() > DRAIN_AFTER_EXIT => break,
            _ => {}
        }
    }
    // A last line without its newline still reaches stdout, on its own line.
    split.stdout(&lines.rest(), progress);
    if stopped_at.is_some() {
        // Ranks the launcher left behind.
        signal_group(pgid, libc::SIGKILL);
    }
    let took = start.elapsed();
    let st = match status {
        Some(Ok(st)) => st,
        Some(Err(e)) => return failed(format!("waiting for {program}: {e}")),
        None => return failed(format!("waiting for {program}: no status")),
    };
    let stderr_text = std::fs::read_to_string(o.err).unwrap_or_default();
    if let Some(sig) = interrupted {
        return Ended {
            status: Status::Interrupted,
            exit_code: st.code(),
            took,
            detail: Some(format!("interrupted: the suite got {} and passed it on", crate::job::signals::name(sig))),
        };
    }
    if let Some((status, detail)) = record.lingered {
        use crate::report::record::RunStatus;
        let word = serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let why = format!(
            "the launcher had not exited {} s after the run record said `{word}`, so the suite stopped it (a host \
             it cannot reach any more, most likely)",
            linger(status).as_secs()
        );
        return Ended {
            status: if status == RunStatus::Timeout { Status::Timeout } else { Status::Failed },
            exit_code: st.code(),
            took,
            detail: Some(detail.map(|d| format!("{d}; {why}")).unwrap_or(why)),
        };
    }
    if let (Some(l), Some(_)) = (max_time, stopped_at) {
        return Ended {
            status: Status::Timeout,
            exit_code: st.code(),
            took,
            detail: Some(format!("stopped by the suite after --max-time {l} s")),
        };
    }
    match (st.code(), st.signal()) {
        (Some(c), _) => ended_with(c, took, &stderr_text),
        (None, sig) => Ended {
            status: Status::Failed,
            exit_code: None,
            took,
            detail: Some(format!("{program} was killed by signal {}", sig.unwrap_or(0))),
        },
    }
}

/// How a benchmark that exited with `code` after `took` ended, and why
/// (from its stderr) when it did not pass.
pub(crate) fn ended_with(code: i32, took: Duration, stderr: &str) -> Ended {
    match code {
        0 => Ended { status: Status::Passed, exit_code: Some(0), took, detail: None },
        WATCHDOG_EXIT => Ended {
            status: Status::Timeout,
            exit_code: Some(WATCHDOG_EXIT),
            took,
            detail: failure_reason(stderr).or_else(|| Some("ended by its --timeout watchdog".into())),
        },
        c => Ended { status: Status::Failed, exit_code: Some(c), took, detail: failure_reason(stderr) },
    }
}

/// The run record as [`run`] watches it.
struct RecordWatch {
    path: Option<std::path::PathBuf>,
    read_at: Option<Instant>,
    /// When the record was first seen ended, with its status and detail.
    ended: Option<(Instant, crate::report::record::RunStatus, Option<String>)>,
    /// The record's status and detail, once the launcher outlived it.
    lingered: Option<(crate::report::record::RunStatus, Option<String>)>,
}

impl RecordWatch {
    fn new(path: Option<&Path>) -> RecordWatch {
        RecordWatch { path: path.map(Path::to_path_buf), read_at: None, ended: None, lingered: None }
    }

    /// Whether the launcher (still running at `now`) has outlived the
    /// record's end by [`linger`]; reads the record every
    /// [`RECORD_POLL`] until it says the run ended.
    fn launcher_lingers(&mut self, now: Instant) -> bool {
        use crate::report::record::RunStatus;
        let Some(path) = self.path.as_deref() else { return false };
        if self.ended.is_none() && self.read_at.is_none_or(|t| now.duration_since(t) >= RECORD_POLL) {
            self.read_at = Some(now);
            if let Some((status, detail)) = crate::report::record_end::status_on_disk(path) {
                if status != RunStatus::Running {
                    self.ended = Some((now, status, detail));
                }
            }
        }
        match &self.ended {
            Some((t, status, detail)) if now.duration_since(*t) > linger(*status) => {
                self.lingered = Some((*status, detail.clone()));
                true
            }
            _ => false,
        }
    }
}

/// The launcher's stdout file as the suite reads it: positioned reads
/// from the suite's own offset, so the launcher's writes (through the
/// same open file, which shares one offset) stay where they belong.
struct Follow {
    file: File,
    at: u64,
}

impl Follow {
    /// What has landed since the last call (empty when nothing has).
    fn next_chunk(&mut self) -> Vec<u8> {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match self.file.read_at(&mut buf, self.at) {
                Ok(n) => {
                    self.at += n as u64;
                    buf.truncate(n);
                    return buf;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return Vec::new(),
            }
        }
    }
}

/// Bytes cut into whole lines: what `push` returns ends with a newline
/// (or is empty); a partial line waits for the rest.
#[derive(Default)]
pub(crate) struct LineBuffer {
    partial: Vec<u8>,
}

impl LineBuffer {
    /// Adds `chunk`; returns the whole lines now complete.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.partial.extend_from_slice(chunk);
        match self.partial.iter().rposition(|&b| b == b'\n') {
            Some(i) => {
                let rest = self.partial.split_off(i + 1);
                std::mem::replace(&mut self.partial, rest)
            }
            None => Vec::new(),
        }
    }

    /// What is left at the end, given its newline.
    pub fn rest(&mut self) -> Vec<u8> {
        let mut r = std::mem::take(&mut self.partial);
        if !r.is_empty() {
            r.push(b'\n');
        }
        r
    }
}

/// Whether a line of stderr is a launcher's own chatter rather than the
/// benchmark's message: tagged `[host:pid]`, srun's, or the "results in"
/// note.
fn is_noise(l: &str) -> bool {
    l.starts_with('[') || l.contains(": results in ") || l.starts_with("srun: ")
}

/// Why a failed run failed, in one line: the benchmark's own message (the
/// first line that is not blank, not inside a launcher's dashed banner and
/// not launcher chatter); failing that, the launcher's first error sentence
/// whole (its lines joined: Open MPI wraps its prose inside the banner),
/// with a hint where the suite knows one.
pub(crate) fn failure_reason(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().map(str::trim).collect();
    let mut in_banner = false;
    // (index, inside a banner) of the first non-blank line; srun's first error.
    let mut first: Option<(usize, bool)> = None;
    let mut srun_error: Option<usize> = None;
    let mut own = None;
    // The first banner that is not a warning (Open MPI warns of an
    // unusable option in one banner, then says why it stopped in another).
    let (mut opened, mut banner_error) = (false, None);
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("---") || l.starts_with("===") {
            in_banner = !in_banner;
            opened = in_banner;
            continue;
        }
        if l.is_empty() {
            continue;
        }
        if std::mem::take(&mut opened) && !l.starts_with("WARNING") {
            banner_error = banner_error.or(Some(i));
        }
        first = first.or(Some((i, in_banner)));
        if l.starts_with("srun: error:") {
            srun_error = srun_error.or(Some(i));
        }
        if !in_banner && !is_noise(l) {
            own = Some(i);
            break;
        }
    }
    let text = match (own, srun_error, first) {
        (Some(i), ..) => lines[i].to_string(),
        (None, Some(i), _) => lines[i].to_string(),
        (None, None, Some((i, true))) => sentence(&lines[banner_error.unwrap_or(i)..]),
        (None, None, Some((i, false))) => lines[i].to_string(),
        (None, None, None) => return None,
    };
    let mut text = clip(&text);
    if let Some(h) = hint(&text) {
        text.push_str(" (");
        text.push_str(h);
        text.push(')');
    }
    Some(text)
}

/// The first sentence of a banner's prose starting at `lines[0]`: lines
/// joined until one ends a sentence, a paragraph ends or the banner does.
/// A sentence that ends in a colon says what follows; the colon goes.
fn sentence(lines: &[&str]) -> String {
    let mut s = String::new();
    for l in lines {
        if l.is_empty() || l.starts_with("---") || l.starts_with("===") {
            break;
        }
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(l);
        if let Some(end) = sentence_end(&s) {
            s.truncate(end);
            break;
        }
    }
    s.trim_end_matches(':').trim_end().to_string()
}

/// Where the first sentence of `s` ends (after its `.`, `!`, `?`, or a
/// colon that ends the line).
fn sentence_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let last = i + 1 == b.len();
        let before_space = b.get(i + 1) == Some(&b' ');
        if matches!(c, b'.' | b'!' | b'?') && (last || before_space) {
            return Some(i + 1);
        }
        if c == b':' && last {
            return Some(i + 1);
        }
    }
    None
}

/// At most 400 characters (a reason is one line of a table).
fn clip(l: &str) -> String {
    const MAX: usize = 400;
    let mut s: String = l.chars().take(MAX).collect();
    if s.len() < l.len() {
        s.push_str(" ...");
    }
    s
}

/// What to do about a launcher error the suite recognises.
fn hint(reason: &str) -> Option<&'static str> {
    const HINTS: &[(&str, &str)] = &[
        (
            "not enough slots available",
            "hint: more ranks than slots; let Open MPI oversubscribe with `commbench suite ... -- \
             --oversubscribe`, give a hostfile with more slots, or lower --np",
        ),
        (
            "More processors requested than permitted",
            "hint: more ranks than the allocation's tasks; lower --np or ask sbatch/salloc for more tasks",
        ),
    ];
    HINTS.iter().find(|(pat, _)| reason.contains(pat)).map(|(_, h)| *h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    use std::sync::{Arc, Mutex};

    /// What the echo wrote, each write with when it came; with a path,
    /// the first write also makes that file.
    #[derive(Clone, Default)]
    struct Echoed(Arc<Mutex<Vec<Write1>>>, Option<std::path::PathBuf>);

    /// One write: when, and what.
    type Write1 = (Instant, Vec<u8>);

    impl Write for Echoed {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().push((Instant::now(), b.to_vec()));
            if let Some(p) = &self.1 {
                let _ = std::fs::write(p, b"");
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn sh_echo(script: &str, max_time: Option<f64>, echo: &Echoed) -> (Ended, String, String) {
        let d = tempfile::tempdir().unwrap();
        let (out, err) = (d.path().join("o.txt"), d.path().join("e.txt"));
        let argv: Vec<String> = ["sh", "-c", script].iter().map(|s| s.to_string()).collect();
        let mut p = Progress::with_output(1, false, Box::new(echo.clone()));
        let o = Output { out: &out, err: &err, echo: true, record: None };
        let ended = run(&argv, &[("SUITE_T".into(), "v".into())], &o, Stop { max_time, grace: STOP_GRACE }, &mut p);
        (ended, std::fs::read_to_string(out).unwrap(), std::fs::read_to_string(err).unwrap())
    }

    fn sh(script: &str, max_time: Option<f64>) -> (Ended, String, String) {
        sh_echo(script, max_time, &Echoed::default())
    }

    /// Each line reaches the echo when the program prints it, not when it
    /// ends; only whole lines, and a last line without its newline gets one.
    /// The program goes on past its first line only once the echo has
    /// passed that line on (it waits for the file the echo makes), so the
    /// order of events shows it whatever the machine's load; were lines
    /// held to the end, it would give up waiting (after a minute) and say
    /// so.
    #[test]
    fn output_streams_as_it_comes() {
        let m = tempfile::tempdir().unwrap();
        let mark = m.path().join("echoed");
        let echo = Echoed(Default::default(), Some(mark.clone()));
        let script = format!(
            "echo first; printf 'sec'; i=0; while [ ! -e '{m}' ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); \
             done; if [ -e '{m}' ]; then echo ond; else echo ond, unechoed; fi; printf tail",
            m = mark.display()
        );
        let (e, out, _) = sh_echo(&script, None, &echo);
        assert_eq!(e.status, Status::Passed);
        assert_eq!(out, "first\nsecond\ntail");
        let w = echo.0.lock().unwrap().clone();
        let texts: Vec<&[u8]> = w.iter().map(|(_, b)| b.as_slice()).collect();
        assert_eq!(texts, [&b"first\n"[..], b"second\n", b"tail\n"]);
    }

    #[test]
    fn line_buffer() {
        let mut b = LineBuffer::default();
        assert_eq!(b.push(b"ab"), b"");
        assert_eq!(b.push(b"c\nd\ne"), b"abc\nd\n");
        assert_eq!(b.push(b"\n"), b"e\n");
        assert_eq!(b.rest(), b"");
        b.push(b"x");
        assert_eq!(b.rest(), b"x\n");
    }

    /// A launcher's prose, wrapped over several lines inside its banner,
    /// comes back as its whole first sentence, with the suite's hint.
    #[test]
    fn launcher_sentence_whole_with_hint() {
        let err = "------------------------------------------\n\
                   Sorry: there are not enough slots available in the system to satisfy the 4\n\
                   slots this application asked for:\n\
                   \n\
                   \x20 /bin/osu_allreduce\n\
                   \n\
                   More words. And more.\n\
                   ------------------------------------------\n";
        let r = failure_reason(err).unwrap();
        assert!(
            r.starts_with(
                "Sorry: there are not enough slots available in the system to satisfy the 4 slots this \
                 application asked for (hint: "
            ),
            "{r}"
        );
        assert!(r.contains("-- --oversubscribe"), "{r}");
        let err = "-----\nA first sentence. A second one\nwrapped.\n-----\n";
        assert_eq!(failure_reason(err).as_deref(), Some("A first sentence."));
        let err = "srun: Job 3 step creation temporarily disabled\n\
                   srun: error: Unable to create step for job 3: More processors requested than permitted\n";
        let r = failure_reason(err).unwrap();
        assert!(r.starts_with("srun: error: Unable to create step for job 3: More processors"), "{r}");
        assert!(r.contains("lower --np"), "{r}");
        let long = "x".repeat(1000);
        assert_eq!(failure_reason(&long).unwrap().len(), 404);
        // A host cut off: Open MPI warns of the option first, then says
        // why it stopped; the reason is the second banner.
        let err =
            "-----\nWARNING: An invalid value was given for oob_tcp_if_include.  This\nvalue will be ignored.\n\n\
                   \x20 Local host: h2\n-----\n-----\nORTE was unable to reliably start one or more daemons.\n\
                   This usually is caused by:\n-----\n";
        assert_eq!(failure_reason(err).as_deref(), Some("ORTE was unable to reliably start one or more daemons."));
        let err = "-----\nWARNING: only a warning.\n-----\n";
        assert_eq!(failure_reason(err).as_deref(), Some("WARNING: only a warning."));
    }

    #[test]
    fn passes_and_keeps_output() {
        let (e, out, err) = sh("echo table; echo note $SUITE_T >&2", None);
        assert_eq!((e.status, e.exit_code, e.detail), (Status::Passed, Some(0), None));
        assert_eq!((out.as_str(), err.as_str()), ("table\n", "note v\n"));
    }

    #[test]
    fn failure_says_why() {
        let (e, ..) = sh("echo '' >&2; echo 'osu_bw: results in x.csv (run record x.json)' >&2; echo 'Invalid option [-W]' >&2; exit 1", None);
        assert_eq!((e.status, e.exit_code), (Status::Failed, Some(1)));
        assert_eq!(e.detail.as_deref(), Some("Invalid option [-W]"));
        let (e, ..) = sh("echo 'osu_bw: no progress for 1 s' >&2; exit 124", None);
        assert_eq!((e.status, e.detail.as_deref()), (Status::Timeout, Some("osu_bw: no progress for 1 s")));
    }

    #[test]
    fn launcher_noise_is_not_the_reason() {
        let err = "[vm:01234] shmem: mmap: an error occurred\n\
                   --------------------------------------\n\
                   WARNING: There was an error initializing an OpenFabrics device.\n\
                   --------------------------------------\n\
                   srun: error: task 0 exited\n\
                   osu_bw: This test requires exactly two processes\n";
        assert_eq!(failure_reason(err).as_deref(), Some("osu_bw: This test requires exactly two processes"));
        assert_eq!(failure_reason("[proxy:0:0@vm] oops\n").as_deref(), Some("[proxy:0:0@vm] oops"));
        assert_eq!(failure_reason(" \n"), None);
    }

    #[test]
    fn max_time_stops_it() {
        let (e, ..) = sh("sleep 30", Some(0.3));
        assert_eq!(e.status, Status::Timeout);
        assert!(e.took < crate::procs::under_load(Duration::from_secs(5)), "{:?}", e.took);
        assert_eq!(e.detail.as_deref(), Some("stopped by the suite after --max-time 0.3 s"));
    }

    #[test]
    fn missing_program() {
        let d = tempfile::tempdir().unwrap();
        let argv = vec!["/nonexistent/mpirun".to_string()];
        let (out, err) = (d.path().join("o"), d.path().join("e"));
        let o = Output { out: &out, err: &err, echo: false, record: None };
        let e = run(&argv, &[], &o, Stop { max_time: None, grace: STOP_GRACE }, &mut Progress::new(1));
        assert_eq!(e.status, Status::Failed);
        assert!(e.detail.unwrap().starts_with("cannot start /nonexistent/mpirun"));
    }
}
