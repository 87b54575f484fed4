//! What the one-sided benchmarks share: the `-w`/`-s` rules each accepts,
//! and one kernel over [`OneSided`] that every one of them runs in the
//! shared timed loop, one step per OSU iteration:
//!
//! - passive target (lock, flush, flush_local, lock_all): only rank 0 acts
//!   and keeps time; rank 1 waits for the next size's window. flush and
//!   flush_local hold one shared lock for the whole size (taken in
//!   `prepare`, released in `end_size`, both untimed, as OSU does);
//! - active target (fence, pscw): both ranks take part in each epoch;
//!   for a latency rank 1 puts (or gets) back, so an iteration is a round
//!   trip and the latency half of it, as in OSU.
//!
//! Each size gets a fresh window of size x window bytes (OSU makes one per
//! size); dropping the old one frees it on every rank. The timing
//! differs from OSU's in one place only: OSU's pscw reads its start clock
//! after the first timed MPI_Win_start, ours before every iteration's, so
//! one MPI_Win_start call in a count more is inside the total.

use super::spec::{BenchSpec, MetricKind};
use super::{Kernel, Metric, Setup, SizeCase};
use crate::backend::rma::{OneSided, SyncMode, WinKind};
use crate::buffer::{AllocError, Mismatch};
use crate::stats::Samples;

/// OSU's one-sided letters: `+:w:s:hvm:x:i:G:Iz::` then `P:`.
pub const LAT_LETTERS: &str = "wshvmxiGIzP";
/// The bandwidth tests add `W:` before `P:`.
pub const BW_LETTERS: &str = "wshvmxiGIzWP";

/// The `-w` and `-s` a one-sided benchmark accepts and its defaults.
#[derive(Debug)]
pub struct Rules {
    /// The `-s` words OSU's option parser accepts for it, in its help's
    /// order; any other is refused as OSU refuses it.
    pub syncs: &'static [SyncMode],
    pub default_sync: SyncMode,
    pub default_win: WinKind,
}

/// Every synchronisation (OSU's ALL_SYNC benchmarks), help order.
pub const ALL_SYNCS: &[SyncMode] =
    &[SyncMode::Pscw, SyncMode::Fence, SyncMode::Lock, SyncMode::Flush, SyncMode::FlushLocal, SyncMode::LockAll];
/// Active target only (OSU's ACTIVE_SYNC: osu_put_bibw).
pub const ACTIVE_SYNCS: &[SyncMode] = &[SyncMode::Pscw, SyncMode::Fence];

/// put/get latency and bandwidth: MPI-3 defaults, every synchronisation.
pub const PASSIVE_DEFAULT: Rules =
    Rules { syncs: ALL_SYNCS, default_sync: SyncMode::Flush, default_win: WinKind::Allocate };
/// osu_put_bibw.
pub const ACTIVE_ONLY: Rules =
    Rules { syncs: ACTIVE_SYNCS, default_sync: SyncMode::Pscw, default_win: WinKind::Allocate };

impl Rules {
    /// `-s WORD`, or OSU's refusal with what this benchmark takes.
    pub fn sync(&self, name: &str, word: &str) -> Result<SyncMode, String> {
        match SyncMode::parse(word) {
            Some(s) if self.syncs.contains(&s) => Ok(s),
            _ => {
                let takes: Vec<&str> = self.syncs.iter().map(|s| s.word()).collect();
                Err(format!("Invalid option or invalid argument [-s {word}] ({name} takes {})", takes.join(", ")))
            }
        }
    }

    /// `-w WORD`, or OSU's refusal.
    pub fn win(word: &str) -> Result<WinKind, String> {
        WinKind::parse(word)
            .ok_or_else(|| format!("Invalid option or invalid argument [-w {word}] (give create, allocate or dynamic)"))
    }
}

/// The one-sided operation a benchmark times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Put,
    Get,
}

/// What one iteration is and what the row reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One operation per epoch; microseconds per operation.
    Latency,
    /// A window of operations per epoch, rank 0 to rank 1; MB/s.
    Bandwidth,
    /// Both ranks put a window to each other in each epoch; twice the MB/s.
    BiBandwidth,
}

/// A one-sided benchmark: its spec, and what it times.
pub trait RmaBench {
    const SPEC: &'static BenchSpec;
    const OP: Op;
    const SHAPE: Shape;
}

/// The window and synchronisation a run uses (the options, or the
/// benchmark's defaults).
pub fn choice(spec: &BenchSpec, opts: &crate::cli::Options) -> (WinKind, SyncMode) {
    let rules = spec.one_sided.expect("a one-sided benchmark");
    (opts.win.unwrap_or(rules.default_win), opts.sync.unwrap_or(rules.default_sync))
}

/// The kernel of every one-sided benchmark.
pub struct RmaKernel<T: OneSided> {
    op: Op,
    shape: Shape,
    kind: WinKind,
    sync: SyncMode,
    /// Rank 0: the origin that keeps time.
    origin: bool,
    peer: usize,
    /// What puts read and gets write: the largest size times the window.
    local: T::Buf,
    win: Option<T::Win>,
    /// Whether rank 0 holds the size's lock (flush, flush_local).
    locked: bool,
}

impl<T: OneSided> RmaKernel<T> {
    pub fn new<B: RmaBench>(s: &Setup<T>) -> Result<Self, AllocError> {
        let rank = s.rank();
        let (kind, sync) = choice(B::SPEC, s.opts);
        let window = if B::SHAPE == Shape::Latency { 1 } else { s.max_window };
        let mut local = s.t.alloc(s.opts.max_size.saturating_mul(window))?;
        s.t.write_host(&mut local, |b| b.fill(b'a'));
        Ok(RmaKernel {
            op: B::OP,
            shape: B::SHAPE,
            kind,
            sync,
            origin: rank == 0,
            peer: 1 - rank,
            local,
            win: None,
            locked: false,
        })
    }

    /// The operations of one epoch from this rank to its peer.
    #[inline(always)]
    fn ops(&mut self, t: &T, win: &T::Win, size: usize, n: usize) {
        for j in 0..n {
            match self.op {
                Op::Put => t.put(win, &self.local, j * size, size, self.peer),
                Op::Get => t.get(win, &mut self.local, j * size, size, self.peer),
            }
        }
    }

    /// Messages per epoch.
    fn per_epoch(&self, case: &SizeCase) -> usize {
        if self.shape == Shape::Latency {
            1
        } else {
            case.window
        }
    }

    /// How many times the row's value counts an iteration's operations:
    /// a latency round trip is two, a bidirectional epoch moves twice.
    fn both_ways(&self) -> bool {
        match self.shape {
            Shape::Latency => self.sync.active(),
            Shape::Bandwidth => false,
            Shape::BiBandwidth => true,
        }
    }
}

impl<T: OneSided> Kernel<T> for RmaKernel<T> {
    fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        // The previous size's window is freed first, on every rank alike.
        self.win = None;
        let win = t.win_new(self.kind, case.size * self.per_epoch(case), self.peer)?;
        if self.origin && matches!(self.sync, SyncMode::Flush | SyncMode::FlushLocal) {
            t.lock_shared(&win, self.peer);
            self.locked = true;
        }
        self.win = Some(win);
        Ok(())
    }

    fn end_size(&mut self, t: &T, _case: &SizeCase) {
        if let (true, Some(win)) = (std::mem::take(&mut self.locked), &self.win) {
            t.unlock(win, self.peer);
        }
    }

    // Never called: the one-sided benchmarks take no -c.
    fn fill_validation(&mut self, _t: &T, _case: &SizeCase, _i: usize) {}

    #[inline(always)]
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        let win = self.win.take().expect("prepare made the window");
        let (size, n) = (case.size, self.per_epoch(case));
        let both = self.shape == Shape::BiBandwidth;
        let t0 = t.now();
        match (self.sync, self.origin) {
            (SyncMode::Lock, true) => {
                t.lock_shared(&win, self.peer);
                self.ops(t, &win, size, n);
                t.unlock(&win, self.peer);
            }
            (SyncMode::LockAll, true) => {
                t.lock_all(&win);
                self.ops(t, &win, size, n);
                t.unlock_all(&win);
            }
            (SyncMode::Flush, true) => {
                self.ops(t, &win, size, n);
                t.flush(&win, self.peer);
            }
            (SyncMode::FlushLocal, true) => {
                self.ops(t, &win, size, n);
                t.flush_local(&win, self.peer);
            }
            // Passive target: the target does nothing.
            (SyncMode::Lock | SyncMode::LockAll | SyncMode::Flush | SyncMode::FlushLocal, false) => {}
            (SyncMode::Fence, origin) if self.shape == Shape::Latency => {
                // Rank 0 goes first; rank 1 answers in the next epoch.
                t.fence(&win);
                if origin {
                    self.ops(t, &win, size, n);
                }
                t.fence(&win);
                if !origin {
                    self.ops(t, &win, size, n);
                }
                t.fence(&win);
            }
            (SyncMode::Fence, origin) => {
                t.fence(&win);
                if origin || both {
                    self.ops(t, &win, size, n);
                }
                t.fence(&win);
            }
            (SyncMode::Pscw, origin) if self.shape == Shape::Latency => {
                if origin {
                    t.win_start(&win);
                    self.ops(t, &win, size, n);
                    t.win_complete(&win);
                    t.win_post(&win);
                    t.win_wait(&win);
                } else {
                    t.win_post(&win);
                    t.win_wait(&win);
                    t.win_start(&win);
                    self.ops(t, &win, size, n);
                    t.win_complete(&win);
                }
            }
            (SyncMode::Pscw, _) if both => {
                t.win_post(&win);
                t.win_start(&win);
                self.ops(t, &win, size, n);
                t.win_complete(&win);
                t.win_wait(&win);
            }
            (SyncMode::Pscw, true) => {
                t.win_start(&win);
                self.ops(t, &win, size, n);
                t.win_complete(&win);
            }
            (SyncMode::Pscw, false) => {
                t.win_post(&win);
                t.win_wait(&win);
            }
        }
        let elapsed = t.now() - t0;
        self.win = Some(win);
        self.origin.then_some(elapsed)
    }

    fn check(&self, _t: &T, _case: &SizeCase, _i: usize) -> Option<Mismatch> {
        None
    }

    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64 {
        value(self.shape, self.both_ways(), case.size, self.per_epoch(case), 1, secs)
    }

    fn iteration_time_scale(&self) -> f64 {
        if self.shape == Shape::Latency && self.both_ways() {
            0.5
        } else {
            1.0
        }
    }

    /// Rank 0's total, as OSU prints it.
    fn metric(&mut self, _t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let v = value(self.shape, self.both_ways(), case.size, self.per_epoch(case), case.iterations, samples.total());
        Metric { value: v, ..Metric::default() }
    }
}

/// OSU's formulas: a latency is microseconds per iteration (half of it for
/// a round trip); a bandwidth is size x window x iterations bytes in MB
/// (10^6) per second, twice that both ways.
pub fn value(shape: Shape, both_ways: bool, size: usize, window: usize, iterations: usize, secs: f64) -> f64 {
    let factor = if both_ways { 2.0 } else { 1.0 };
    match shape {
        Shape::Latency => secs * 1e6 / iterations as f64 / factor,
        Shape::Bandwidth | Shape::BiBandwidth => size as f64 / 1e6 * iterations as f64 * window as f64 / secs * factor,
    }
}

/// The message memory of one rank: the origin buffer and this rank's
/// window, each the largest size times the window (1 for a latency).
pub fn message_bytes(spec: &BenchSpec, opts: &crate::cli::Options, max_window: usize) -> u128 {
    let window = if spec.metric == MetricKind::Bandwidth { max_window } else { 1 };
    2 * opts.max_size as u128 * window as u128
}

/// Makes `$bench` (in a file with `SPEC`) a one-sided benchmark doing
/// `$op` in `$shape`, run by [`super::runner::run_rma`] and listed in the
/// registry.
macro_rules! one_sided_bench {
    ($bench:ident, $op:expr, $shape:expr) => {
        pub struct $bench;

        impl $crate::bench::rma::RmaBench for $bench {
            const SPEC: &'static $crate::bench::spec::BenchSpec = &SPEC;
            const OP: $crate::bench::rma::Op = $op;
            const SHAPE: $crate::bench::rma::Shape = $shape;
        }

        impl $crate::bench::registry::Registered for $bench {
            const ENTRY: $crate::bench::registry::Entry =
                $crate::bench::registry::Entry { spec: &SPEC, run: $crate::bench::runner::run_rma::<$bench> };
        }
    };
}
pub(crate) use one_sided_bench;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas() {
        // 10 passive iterations of 2 us each: 2 us.
        assert!((value(Shape::Latency, false, 8, 1, 10, 20e-6) - 2.0).abs() < 1e-9);
        // a round trip halves it
        assert!((value(Shape::Latency, true, 8, 1, 10, 20e-6) - 1.0).abs() < 1e-9);
        // 64 x 1 MB in 1 s x 10 iterations = 640 MB/s; both ways twice that
        assert!((value(Shape::Bandwidth, false, 1_000_000, 64, 10, 1.0) - 640.0).abs() < 1e-9);
        assert!((value(Shape::BiBandwidth, true, 1_000_000, 64, 10, 1.0) - 1280.0).abs() < 1e-9);
    }

    #[test]
    fn sync_words_per_benchmark() {
        assert_eq!(PASSIVE_DEFAULT.sync("osu_put_latency", "LOCK_ALL"), Ok(SyncMode::LockAll));
        assert_eq!(ACTIVE_ONLY.sync("osu_put_bibw", "Fence"), Ok(SyncMode::Fence));
        assert_eq!(
            ACTIVE_ONLY.sync("osu_put_bibw", "lock"),
            Err("Invalid option or invalid argument [-s lock] (osu_put_bibw takes pscw, fence)".into())
        );
        assert!(PASSIVE_DEFAULT.sync("osu_put_latency", "foo").unwrap_err().starts_with("Invalid option or invalid"));
        assert_eq!(Rules::win("Dynamic"), Ok(WinKind::Dynamic));
        assert!(Rules::win("shared").unwrap_err().starts_with("Invalid option or invalid argument [-w shared]"));
    }
}

#[cfg(test)]
mod on_mock;
