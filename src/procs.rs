//! Processes of this host as /proc shows them: whether a pid is a running
//! process (a zombie is not) and when it started, so that a process can be
//! told from a later one that was given the same pid. Used by the signal
//! thread (are rank 0's neighbours still there?) and by the readers that
//! end a run record nobody could end (are its ranks gone?). Also how busy
//! the host is ([`under_load`]), for the tests' limits on a hang, and what
//! competed with a rank during its run ([`load`]).

pub mod load;

/// What /proc says of one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcState {
    /// Field 22 of /proc/<pid>/stat: clock ticks after boot when it started.
    pub start_ticks: u64,
    /// Running or sleeping: not a zombie, not dead.
    pub running: bool,
}

/// The process with `pid`, None when there is none.
pub fn state(pid: u32) -> Option<ProcState> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // After the name: the state is field 3, the start time field 22.
    Some(ProcState {
        start_ticks: fields.get(19)?.parse().ok()?,
        running: fields.first().is_some_and(|s| *s != "Z" && *s != "X"),
    })
}

/// When the process with `pid` started, in seconds since the Unix epoch
/// (to the second of the boot time /proc/stat gives); None when there is
/// no such process or /proc does not say.
pub(crate) fn started_unix(p: &ProcState) -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let boot: f64 = stat.lines().find_map(|l| l.strip_prefix("btime "))?.trim().parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks > 0).then(|| boot + p.start_ticks as f64 / ticks as f64)
}

/// Whether `pid` is, as far as this host can tell, the process that was
/// running at `since` (seconds since the epoch): it runs, and it started
/// no later than that (give or take `slack` seconds for the clocks'
/// grain); a process given the pid later is another one.
pub(crate) fn still_running(pid: u32, since: Option<f64>, slack: f64) -> bool {
    let Some(p) = state(pid).filter(|p| p.running) else { return false };
    match (since, started_unix(&p)) {
        (Some(since), Some(started)) => started <= since + slack,
        _ => true,
    }
}

/// A time limit on a hang stretched by how busy this host is: the
/// 1-minute load average over the CPU count, between 1 and 8 (1 when /proc
/// does not say). For the tests (unit and integration alike): a job that
/// takes a second alone can take many on two cores shared with other
/// builds (MPI ranks poll, and wait for the scheduler to run their
/// partner), while a real hang still meets the stretched limit. Never a
/// bound on how fast something must be.
pub fn under_load(limit: std::time::Duration) -> std::time::Duration {
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|w| w.parse::<f64>().ok()))
        .unwrap_or(0.0);
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as f64;
    limit.mul_f64((load / cpus).clamp(1.0, 8.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_stretch_with_the_load_and_no_further() {
        let s = std::time::Duration::from_secs(1);
        let got = under_load(s);
        assert!(got >= s && got <= 8 * s, "{got:?}");
    }

    #[test]
    fn this_process_runs_and_started_before_now() {
        let me = state(std::process::id()).unwrap();
        assert!(me.running);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
        let started = started_unix(&me).unwrap();
        assert!(started <= now + 1.0, "{started} {now}");
        assert!(still_running(std::process::id(), Some(now), 2.0));
        // Taken for a process that started an hour after this one did: not it.
        assert!(!still_running(std::process::id(), Some(started - 3600.0), 2.0));
        assert!(state(u32::MAX - 1).is_none());
        assert!(!still_running(u32::MAX - 1, None, 2.0));
    }
}
