//! How a job's end is recorded when it does not end by itself: SIGTERM,
//! SIGINT or SIGHUP to a rank (the launcher forwards Ctrl-C, a Slurm
//! cancel, the suite's `--max-time`, and sends SIGTERM when another rank
//! failed), and a rank on rank 0's node that dies.
//!
//! The three signals are blocked in every thread before the first thread
//! starts (MPI's too), and one thread takes them with `sigtimedwait`: no
//! handler runs inside the timed region and the measuring thread does no
//! extra work. On a signal, rank 0 ends the run record (`interrupted`;
//! `rank_failed` when a rank of its node was already gone; `timeout` when
//! it had itself made no progress for half the `--timeout`, so another
//! rank's watchdog most likely ended the job), says one line, and every
//! rank exits with 128 + the signal (143 for SIGTERM, 130 for SIGINT).
//! Other ranks wait [`OTHERS_AFTER_SIGNAL`] first, so rank 0 can still
//! tell a rank that died from one that is ending as it is.
//!
//! A rank other than 0 that can see rank 0's record ends it when rank 0
//! cannot: `rank_failed` when rank 0 had not ended it shortly after the
//! signal and is gone (or its host is), `interrupted` when rank 0 is
//! still running but had not ended it (the signal came to this rank
//! alone: MPICH's launcher then kills rank 0 with SIGKILL the moment this
//! rank exits, so rank 0 would never end it; under Open MPI rank 0 is sent
//! SIGTERM instead and replaces this fallback with its own view), and
//! `timeout` when its own watchdog fired (see
//! [`crate::report::record_end`]).
//!
//! A rank never outlives its launcher: it asks the kernel for a signal
//! when the launcher ends ([`end_with_launcher`]), SIGKILL before it reads
//! its options and SIGTERM once this thread runs, which then ends the
//! record `interrupted` as for the launcher's own SIGTERM.
//!
//! Liveness: between the record's start and its end, the same thread
//! looks at the other ranks on rank 0's node every [`POLL`] (their pids
//! from the record, in `/proc`). One that is gone ends the record
//! `rank_failed` at once; the launcher then normally tears the job down,
//! and if it has not within [`GRACE`], rank 0 exits 1 itself rather than
//! wait in MPI for a dead peer. Ranks on other nodes are the launcher's
//! to watch (it SIGTERMs rank 0: `interrupted`) and, for a job that hangs
//! instead, the `--timeout` watchdog's.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::job::watchdog::{Progress, Step};
use crate::report::record::{EndMarker, RankInfo, RunStatus};
use crate::report::record_end::{self, RecordPlace};

/// How often the signal thread looks at the other ranks.
pub(crate) const POLL: Duration = Duration::from_millis(250);
/// How long rank 0 waits for the launcher after it saw a rank die.
pub(crate) const GRACE: Duration = Duration::from_secs(5);
/// How long a rank other than 0 waits after a signal before it exits.
pub(crate) const OTHERS_AFTER_SIGNAL: Duration = Duration::from_millis(300);

/// The signals handled.
pub(crate) const HANDLED: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The set of [`HANDLED`] signals.
fn set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local set.
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for sig in HANDLED {
            libc::sigaddset(&mut s, sig);
        }
        s
    }
}

/// Blocks the handled signals in the calling thread and every thread it
/// starts from now on. Call before any other thread exists. Children
/// inherit the mask: unblock it for them ([`unblock`] in `pre_exec`).
pub fn block() -> bool {
    let s = set();
    // SAFETY: changes this thread's mask with a valid set.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &s, std::ptr::null_mut()) == 0 }
}

/// Unblocks the handled signals in the calling thread (a child about to
/// exec: the mask is inherited). Async-signal-safe.
pub fn unblock() {
    let s = set();
    // SAFETY: changes this thread's mask with a valid set.
    unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &s, std::ptr::null_mut()) };
}

/// Ties this process's life to its launcher's (the process that started
/// it: Open MPI's daemon, MPICH's proxy, slurmstepd): when that process
/// ends, however it ends, the kernel sends this one `sig`
/// (PR_SET_PDEATHSIG). Nothing else would tell a rank whose launcher was
/// killed outright (SIGKILL, the OOM killer): busy before MPI is up
/// (options, a graph file) or spinning in MPI over shared memory, it would
/// run on, orphaned. Called first thing with SIGKILL (there is nothing to
/// record yet) and again with SIGTERM once the signal thread runs, which
/// then ends the run record. A launcher already gone sends `sig` now.
///
/// Only for a process a launcher started: the kernel sends the signal when
/// the *thread* that forked this process ends, and every launcher forks
/// its ranks from the thread that lives as long as it does.
pub(crate) fn end_with_launcher(sig: i32) {
    // SAFETY: prctl, getppid and raise on this process only.
    unsafe {
        let launcher = libc::getppid();
        if libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong) != 0 {
            return;
        }
        // The launcher ended before the request took: nothing would send it.
        if libc::getppid() != launcher {
            libc::raise(sig);
        }
    }
}

/// Waits up to `t` for one of the handled (blocked) signals.
pub fn wait(t: Duration) -> Option<i32> {
    let s = set();
    let ts = libc::timespec { tv_sec: t.as_secs() as libc::time_t, tv_nsec: t.subsec_nanos() as libc::c_long };
    // SAFETY: valid set and timeout; no siginfo wanted.
    let r = unsafe { libc::sigtimedwait(&s, std::ptr::null_mut(), &ts) };
    (r > 0).then_some(r)
}

/// The signal's name.
pub fn name(sig: i32) -> String {
    match sig {
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGKILL => "SIGKILL".into(),
        s => format!("signal {s}"),
    }
}

/// The first handled signal the process got since [`catch`], 0 for none.
static CAUGHT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// For a process that ends its own way (the suite): blocks the handled
/// signals and starts a thread that notes the first one for [`caught`].
/// Call before any other thread exists.
pub fn catch() {
    if !block() {
        return;
    }
    let spawned = std::thread::Builder::new().name("commbench-signals".into()).spawn(|| loop {
        if let Some(sig) = wait(Duration::from_secs(3600)) {
            let _ = CAUGHT.compare_exchange(
                0,
                sig,
                std::sync::atomic::Ordering::SeqCst,
                std::sync::atomic::Ordering::SeqCst,
            );
        }
    });
    if let Err(e) = spawned {
        crate::say!("cannot watch for signals: {e}");
    }
}

/// The first signal [`catch`] noted.
pub fn caught() -> Option<i32> {
    match CAUGHT.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// A rank of rank 0's node, as first seen.
#[derive(Clone, Debug)]
struct Peer {
    rank: usize,
    pid: u32,
    host: String,
    /// When it started (see [`crate::procs`]): tells the process from a
    /// later one with its pid.
    started: u64,
}

impl Peer {
    fn alive(&self) -> bool {
        crate::procs::state(self.pid).is_some_and(|p| p.running && p.start_ticks == self.started)
    }
}

/// A rank other than 0 that can see rank 0's record (see
/// [`crate::report::record_end`]).
#[derive(Clone, Debug)]
struct Follow {
    place: RecordPlace,
    rank: usize,
    /// Whether this rank ends a record rank 0 left `running` after a
    /// signal: every rank of rank 0's node (the file is near, and a rank
    /// signalled alone must be able to), and the first rank of each other
    /// node, so a large job does not send every rank to a shared file.
    stands_in: bool,
}

/// What the signal thread shares with the job.
#[derive(Default)]
pub struct Watch {
    marker: Mutex<Option<EndMarker>>,
    peers: Mutex<Vec<Peer>>,
    follow: Mutex<Option<Follow>>,
}

impl Watch {
    /// Rank 0: the record to end and the ranks to watch (`ranks` as the
    /// record lists them; those on rank 0's node other than rank 0 that
    /// can be seen now are watched).
    pub(crate) fn arm(&self, marker: EndMarker, ranks: &[RankInfo]) {
        let me = std::process::id();
        let host = ranks.iter().find(|r| r.rank == 0).map(|r| r.host.clone());
        let peers: Vec<Peer> = ranks
            .iter()
            .filter(|r| Some(&r.host) == host.as_ref() && r.rank != 0 && r.pid != me)
            .filter_map(|r| {
                let p = crate::procs::state(r.pid).filter(|p| p.running)?;
                Some(Peer { rank: r.rank, pid: r.pid, host: r.host.clone(), started: p.start_ticks })
            })
            .collect();
        if let Ok(mut m) = self.marker.lock() {
            *m = Some(marker);
        }
        if let Ok(mut p) = self.peers.lock() {
            *p = peers;
        }
    }

    /// Forgets the record and the ranks it watched: that run has ended (a
    /// shared launch's next benchmark arms its own).
    pub(crate) fn disarm(&self) {
        if let Ok(mut m) = self.marker.lock() {
            *m = None;
        }
        if let Ok(mut p) = self.peers.lock() {
            p.clear();
        }
        if let Ok(mut f) = self.follow.lock() {
            *f = None;
        }
    }

    /// A rank other than 0: where rank 0's record is, for [`on_signal`].
    /// `local` is this rank's index among the ranks of its node.
    pub fn follow(&self, place: RecordPlace, rank: usize, local: usize) {
        let stands_in = local == 0 || place.host == crate::topo::hostname();
        if let Ok(mut f) = self.follow.lock() {
            *f = Some(Follow { place, rank, stands_in });
        }
    }

    /// After a signal on a rank other than 0, rank 0 has had
    /// [`OTHERS_AFTER_SIGNAL`] to end its record; a record still
    /// `running` then means rank 0 is gone (or cut off from the launcher):
    /// a rank that stands in ends it `rank_failed`, naming rank 0. With
    /// rank 0 alive on this same host, the signal came to this rank alone:
    /// it ends the record `interrupted`, a fallback rank 0 replaces if it
    /// lives to end the record itself.
    fn end_for_rank0(&self, signame: &str, at: &str, code: i32) {
        let Some(f) = self.follow.lock().ok().and_then(|f| f.clone()) else { return };
        let p = &f.place;
        if !f.stands_in {
            return;
        }
        let same_host = p.host == crate::topo::hostname();
        let waited = OTHERS_AFTER_SIGNAL.as_millis();
        let (status, detail) = if same_host && crate::procs::state(p.pid).is_some_and(|s| s.running) {
            let detail = format!(
                "interrupted: {signame} came to rank {} alone (it was{at}); rank 0 (pid {}) was still running but \
                 had not ended the run record {waited} ms later, and a launcher may end it with SIGKILL when rank {} \
                 exits",
                f.rank, p.pid, f.rank
            );
            (RunStatus::Interrupted, detail)
        } else {
            let detail = format!(
                "rank 0 (pid {} on {}) had not ended the run record {waited} ms after {signame} came: rank 0 or its \
                 host most likely failed; rank {} was{at}",
                p.pid, p.host, f.rank
            );
            (RunStatus::RankFailed, detail)
        };
        let _ = record_end::end_on_disk(&p.path, status, &detail, code, f.rank);
    }

    fn dead_peer(&self) -> Option<Peer> {
        self.peers.lock().ok()?.iter().find(|p| !p.alive()).cloned()
    }

    /// Ends the record (rank 0): None where this rank holds none; else
    /// whether it now says this rank's judgement (false when it had ended,
    /// or another rank's first-hand end was kept: that rank said why).
    fn mark(&self, status: RunStatus, detail: &str, code: i32) -> Option<bool> {
        match self.marker.lock() {
            Ok(m) => m.as_ref().map(|f| f(status, detail, code)),
            Err(_) => None,
        }
    }
}

/// Starts the signal thread (after [`block`]). The program running at the
/// time ([`crate::fatal::program`]) prefixes its line; `timeout` is the
/// job's `--timeout`.
pub fn start(progress: Arc<Progress>, timeout: Option<Duration>, watch: Arc<Watch>) {
    let spawned = std::thread::Builder::new().name("commbench-signals".into()).spawn(move || {
        let mut failed: Option<Instant> = None;
        loop {
            let name = crate::fatal::program();
            if let Some(sig) = wait(POLL) {
                on_signal(name, sig, &progress, timeout, &watch);
            }
            if progress.step() == Step::Finish {
                continue;
            }
            match failed {
                None => {
                    if let Some(p) = watch.dead_peer() {
                        let at = progress.position();
                        let (status, detail) = judge(Some(p), timeout, progress.still_for(), &at, "rank 0 looked");
                        let code = if status == RunStatus::Timeout { crate::job::watchdog::TIMEOUT_EXIT } else { 1 };
                        if watch.mark(status, &detail, code) == Some(true) {
                            crate::say!("{name}: {detail}");
                        }
                        failed = Some(Instant::now());
                    }
                }
                Some(t) if t.elapsed() >= GRACE => {
                    // SAFETY: ends the process without waiting in MPI for
                    // the dead rank.
                    unsafe { libc::_exit(1) }
                }
                Some(_) => {}
            }
        }
    });
    if let Err(e) = spawned {
        crate::say!("{}: cannot watch for signals: {e}", crate::fatal::program());
    }
}

/// How the run ended, and why, when `what` happened (a signal came, a
/// rank was seen gone): a stall of half the `--timeout` or more on this
/// rank first (another rank's watchdog most likely ended the job, and
/// that rank is then the one gone), then a rank gone, else interrupted.
fn judge(
    dead: Option<Peer>,
    timeout: Option<Duration>,
    still: Option<Duration>,
    at: &str,
    what: &str,
) -> (RunStatus, String) {
    let gone = dead.map(|p| format!("rank {} (pid {} on {}) had ended", p.rank, p.pid, p.host));
    match (gone, timeout, still) {
        (gone, Some(t), Some(s)) if s >= t / 2 => (
            RunStatus::Timeout,
            format!(
                "{what} after this rank had made no progress for {:.1}s (--timeout {}s){at}{}: most likely another \
                 rank's --timeout watchdog ended the job (its line is on stderr)",
                s.as_secs_f64(),
                t.as_secs_f64(),
                gone.map(|g| format!("; {g}")).unwrap_or_default()
            ),
        ),
        (Some(g), ..) => (
            RunStatus::RankFailed,
            format!("{g} when {what} (the launcher ends the job when a rank fails); this rank was{at}"),
        ),
        _ => (
            RunStatus::Interrupted,
            format!(
                "interrupted: {what}{at} (from the launcher: Ctrl-C, a cancel, a time limit, another rank's end or \
                 the launcher's own)"
            ),
        ),
    }
}

/// Ends the run record (rank 0) and the process after signal `sig`.
fn on_signal(name: &str, sig: i32, progress: &Progress, timeout: Option<Duration>, watch: &Watch) -> ! {
    let code = 128 + sig;
    let signame = self::name(sig);
    let at = progress.position();
    let still = progress.still_for();
    let (status, detail) = judge(watch.dead_peer(), timeout, still, &at, &format!("{signame} came"));
    match watch.mark(status, &detail, code) {
        Some(true) => crate::say!("{name}: {detail}"),
        // Another rank ended the record first-hand and said why.
        Some(false) => {}
        None => {
            std::thread::sleep(OTHERS_AFTER_SIGNAL);
            watch.end_for_rank0(&signame, &at, code);
        }
    }
    // SAFETY: ends the process at once; the main thread may be inside MPI.
    unsafe { libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_and_a_missing_one_is_not() {
        let started = crate::procs::state(std::process::id()).unwrap().start_ticks;
        let me = Peer { rank: 1, pid: std::process::id(), host: "h".into(), started };
        assert!(me.alive());
        let reused = Peer { started: started + 1, ..me.clone() };
        assert!(!reused.alive());
        assert!(!Peer { pid: u32::MAX - 1, ..me }.alive());
    }

    #[test]
    fn names() {
        assert_eq!(
            (name(libc::SIGTERM), name(libc::SIGINT), name(libc::SIGHUP)),
            ("SIGTERM".into(), "SIGINT".into(), "SIGHUP".into())
        );
    }
}
