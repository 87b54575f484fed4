//! The hang watchdog (`--timeout`). The measuring thread publishes where it
//! is (step, datatype, size, iteration) with plain atomic stores between
//! timed operations; a background thread polls that position and, when it
//! has not moved for the timeout, reports it and ends the process, so the
//! launcher tears down the job with a non-zero status.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::datatype::Datatype;

/// Exit status when the watchdog ends a run (as coreutils `timeout`).
pub const TIMEOUT_EXIT: i32 = 124;

/// What the measuring thread is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Step {
    Startup = 0,
    Setup = 1,
    Warmup = 2,
    Timed = 3,
    Results = 4,
    Finish = 5,
}

impl Step {
    fn from_u8(v: u8) -> Step {
        match v {
            1 => Step::Setup,
            2 => Step::Warmup,
            3 => Step::Timed,
            4 => Step::Results,
            5 => Step::Finish,
            _ => Step::Startup,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Step::Startup => "start-up (MPI initialisation and rank exchange)",
            Step::Setup => "buffer set-up and synchronisation before the size",
            Step::Warmup => "warm-up iterations",
            Step::Timed => "timed iterations",
            Step::Results => "collecting results across ranks",
            Step::Finish => "finishing (MPI finalisation)",
        }
    }
}

/// Shared position of the measuring thread.
#[derive(Default)]
pub struct Progress {
    step: AtomicU8,
    datatype: AtomicU8,
    size: AtomicU64,
    iteration: AtomicU64,
    /// Milliseconds (since [`epoch`]) the watchdog last saw the position
    /// move; 0 without a watchdog.
    moved_ms: AtomicU64,
}

/// A fixed instant of this process, for [`Progress::still_for`].
fn epoch() -> Instant {
    static E: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *E.get_or_init(Instant::now)
}

impl Progress {
    pub fn enter(&self, step: Step, dt: Option<Datatype>, size: usize) {
        self.step.store(step as u8, Relaxed);
        self.datatype.store(dt.map(|d| d as u8 + 1).unwrap_or(0), Relaxed);
        self.size.store(size as u64, Relaxed);
        self.iteration.store(0, Relaxed);
    }

    pub fn set_step(&self, step: Step) {
        self.step.store(step as u8, Relaxed);
    }

    /// Called once per iteration, outside the timed region.
    #[inline(always)]
    pub fn iteration(&self, i: usize) {
        self.iteration.store(i as u64 + 1, Relaxed);
    }

    /// The step now.
    pub fn step(&self) -> Step {
        Step::from_u8(self.step.load(Relaxed))
    }

    /// How long the position has not moved, as the watchdog saw it (None
    /// without a watchdog).
    pub fn still_for(&self) -> Option<Duration> {
        match self.moved_ms.load(Relaxed) {
            0 => None,
            ms => Some(epoch().elapsed().saturating_sub(Duration::from_millis(ms))),
        }
    }

    fn mark_moved(&self) {
        self.moved_ms.store((epoch().elapsed().as_millis() as u64).max(1), Relaxed);
    }

    /// Where the run is, as the watchdog says it: ` at message size 4096
    /// (MPI_CHAR), step: timed iterations after iteration 17`.
    pub fn position(&self) -> String {
        position(self.snapshot())
    }

    fn snapshot(&self) -> (u8, u8, u64, u64) {
        (self.step.load(Relaxed), self.datatype.load(Relaxed), self.size.load(Relaxed), self.iteration.load(Relaxed))
    }
}

/// Called with the message just before the process ends (e.g. to mark the
/// run record).
pub type OnFire = Box<dyn Fn(&str) + Send>;

/// Starts the watchdog thread. `who` names the process in the message
/// ("osu_latency rank 1 on host x").
pub fn start(progress: Arc<Progress>, timeout: Duration, who: String, on_fire: Arc<Mutex<Option<OnFire>>>) {
    let name = who.clone();
    thread::Builder::new()
        .name("commbench-watchdog".into())
        .spawn(move || {
            let poll = (timeout / 10).clamp(Duration::from_millis(10), Duration::from_millis(200));
            let mut last = progress.snapshot();
            let mut since = Instant::now();
            progress.mark_moved();
            loop {
                thread::sleep(poll);
                let now = progress.snapshot();
                if now != last {
                    last = now;
                    since = Instant::now();
                    progress.mark_moved();
                    continue;
                }
                if since.elapsed() >= timeout {
                    let msg = describe(&who, timeout, now);
                    crate::diag::say(&msg);
                    if let Ok(guard) = on_fire.lock() {
                        if let Some(f) = guard.as_ref() {
                            f(&msg);
                        }
                    }
                    // SAFETY: ends the process at once, without running
                    // destructors that could block on the hung MPI.
                    unsafe { libc::_exit(TIMEOUT_EXIT) };
                }
            }
        })
        .map(|_| ())
        .unwrap_or_else(|e| crate::say!("{name}: cannot start the --timeout watchdog: {e}"));
}

fn describe(who: &str, timeout: Duration, at: (u8, u8, u64, u64)) -> String {
    format!("{who}: no progress for {}s{}; ending the job (--timeout)", timeout.as_secs_f64(), position(at))
}

fn position((step, dt, size, iteration): (u8, u8, u64, u64)) -> String {
    let step = Step::from_u8(step);
    let mut where_ = String::new();
    if matches!(step, Step::Setup | Step::Warmup | Step::Timed | Step::Results) {
        where_.push_str(&format!(" at message size {size}"));
        if dt > 0 {
            where_.push_str(&format!(" ({})", Datatype::ALL[dt as usize - 1].mpi_name()));
        }
    }
    let iter = if matches!(step, Step::Warmup | Step::Timed) && iteration > 0 {
        format!(" after iteration {iteration}")
    } else {
        String::new()
    };
    format!("{where_}, step: {}{iter}", step.describe())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_size_and_step() {
        let m = describe("osu_bw rank 1 on h", Duration::from_secs(5), (Step::Timed as u8, 1, 4096, 17));
        assert_eq!(
            m,
            "osu_bw rank 1 on h: no progress for 5s at message size 4096 (MPI_CHAR), step: timed iterations \
             after iteration 17; ending the job (--timeout)"
        );
        let m = describe("x", Duration::from_millis(1500), (Step::Startup as u8, 0, 0, 0));
        assert_eq!(m, "x: no progress for 1.5s, step: start-up (MPI initialisation and rank exchange); ending the job (--timeout)");
    }

    #[test]
    fn progress_snapshot_moves() {
        let p = Progress::default();
        let a = p.snapshot();
        p.enter(Step::Warmup, Some(Datatype::Int), 64);
        p.iteration(0);
        let b = p.snapshot();
        assert_ne!(a, b);
        assert_eq!(b, (Step::Warmup as u8, 2, 64, 1));
    }
}
