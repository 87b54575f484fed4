//! Running one benchmark of the suite: starts its launcher command with
//! stdout and stderr going to `<bench>.txt` and `<bench>.stderr` in the run
//! directory, waits for it (stopping it after `--max-time`), and says how
//! it ended.

use std::fs::File;
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
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Timeout => "timeout",
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
pub const WATCHDOG_EXIT: i32 = crate::watchdog::TIMEOUT_EXIT;

/// Runs `argv` with output into `out` (stdout) and `err` (stderr).
pub fn run(
    argv: &[String],
    env: &[(String, String)],
    out: &Path,
    err: &Path,
    max_time: Option<f64>,
    progress: &mut Progress,
) -> Ended {
    let start = Instant::now();
    let failed =
        |detail: String| Ended { status: Status::Failed, exit_code: None, took: start.elapsed(), detail: Some(detail) };
    let Some((program, rest)) = argv.split_first() else { return failed("empty command".into()) };
    let (stdout, stderr) = match (File::create(out), File::create(err)) {
        (Ok(o), Ok(e)) => (o, e),
        (Err(e), _) => return failed(format!("cannot create {}: {e}", out.display())),
        (_, Err(e)) => return failed(format!("cannot create {}: {e}", err.display())),
    };
    let mut cmd = Command::new(program);
    cmd.args(rest).stdin(Stdio::null()).stdout(stdout).stderr(stderr);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot start {program}: {e}")),
    };
    let limit = max_time.map(Duration::from_secs_f64);
    let mut stopped_at: Option<Instant> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Ok(st),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        let now = Instant::now();
        match (limit, stopped_at) {
            (Some(l), None) if now.duration_since(start) > l => {
                // The launcher ends its ranks on SIGTERM.
                // SAFETY: signals our own child by its pid.
                unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
                stopped_at = Some(now);
            }
            (_, Some(t)) if now.duration_since(t) > Duration::from_secs(10) => {
                let _ = child.kill();
            }
            _ => {}
        }
        progress.tick();
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = start.elapsed();
    let st = match status {
        Ok(st) => st,
        Err(e) => return failed(format!("waiting for {program}: {e}")),
    };
    let stderr_text = std::fs::read_to_string(err).unwrap_or_default();
    if let (Some(l), Some(_)) = (max_time, stopped_at) {
        return Ended {
            status: Status::Timeout,
            exit_code: st.code(),
            took,
            detail: Some(format!("stopped by the suite after --max-time {l} s")),
        };
    }
    match (st.code(), st.signal()) {
        (Some(0), _) => Ended { status: Status::Passed, exit_code: Some(0), took, detail: None },
        (Some(WATCHDOG_EXIT), _) => Ended {
            status: Status::Timeout,
            exit_code: Some(WATCHDOG_EXIT),
            took,
            detail: first_error_line(&stderr_text).or_else(|| Some("ended by its --timeout watchdog".into())),
        },
        (Some(c), _) => {
            Ended { status: Status::Failed, exit_code: Some(c), took, detail: first_error_line(&stderr_text) }
        }
        (None, sig) => Ended {
            status: Status::Failed,
            exit_code: None,
            took,
            detail: Some(format!("{program} was killed by signal {}", sig.unwrap_or(0))),
        },
    }
}

/// The line of a failed run's stderr that says why: the first one that is
/// not blank, not inside a launcher's dashed banner block, not a launcher
/// diagnostic tagged `[host:pid]`, and not the "results in" note; failing
/// that, the first non-blank line.
pub fn first_error_line(stderr: &str) -> Option<String> {
    let mut in_banner = false;
    let mut fallback = None;
    let mut found = None;
    for l in stderr.lines().map(str::trim) {
        if l.starts_with("---") || l.starts_with("===") {
            in_banner = !in_banner;
            continue;
        }
        if l.is_empty() {
            continue;
        }
        fallback = fallback.or(Some(l));
        let noise = in_banner || l.starts_with('[') || l.contains(": results in ") || l.starts_with("srun: ");
        if !noise {
            found = Some(l);
            break;
        }
    }
    found.or(fallback).map(|l| {
        let mut s: String = l.chars().take(200).collect();
        if s.len() < l.len() {
            s.push_str(" ...");
        }
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, max_time: Option<f64>) -> (Ended, String, String) {
        let d = tempfile::tempdir().unwrap();
        let (o, e) = (d.path().join("o.txt"), d.path().join("e.txt"));
        let argv: Vec<String> = ["sh", "-c", script].iter().map(|s| s.to_string()).collect();
        let mut p = Progress::new(1);
        let ended = run(&argv, &[("SUITE_T".into(), "v".into())], &o, &e, max_time, &mut p);
        (ended, std::fs::read_to_string(o).unwrap(), std::fs::read_to_string(e).unwrap())
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
        assert_eq!(first_error_line(err).as_deref(), Some("osu_bw: This test requires exactly two processes"));
        assert_eq!(first_error_line("[proxy:0:0@vm] oops\n").as_deref(), Some("[proxy:0:0@vm] oops"));
        assert_eq!(first_error_line(" \n"), None);
    }

    #[test]
    fn max_time_stops_it() {
        let (e, ..) = sh("sleep 30", Some(0.3));
        assert_eq!(e.status, Status::Timeout);
        assert!(e.took < Duration::from_secs(5), "{:?}", e.took);
        assert_eq!(e.detail.as_deref(), Some("stopped by the suite after --max-time 0.3 s"));
    }

    #[test]
    fn missing_program() {
        let d = tempfile::tempdir().unwrap();
        let argv = vec!["/nonexistent/mpirun".to_string()];
        let e = run(&argv, &[], &d.path().join("o"), &d.path().join("e"), None, &mut Progress::new(1));
        assert_eq!(e.status, Status::Failed);
        assert!(e.detail.unwrap().starts_with("cannot start /nonexistent/mpirun"));
    }
}
