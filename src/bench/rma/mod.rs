//! What the one-sided benchmarks share: the `-w`/`-s` rules each accepts,
//! and one kernel over [`OneSided`] that every one of them runs in the
//! shared timed loop, one step per OSU iteration:
//!
//! The origin is rank 0 and its target rank 1, or with np/2 pairs
//! (osu_get_mbw) every rank i < np/2, each with its own target i + np/2,
//! all at once (the pairing of osu_mbw_mr):
//!
//! - passive target (lock, flush, flush_local, lock_all): only the origins
//!   act and keep time; a target waits for the next size's window. flush and
//!   flush_local hold one lock for the whole size (taken in `prepare`,
//!   released in `end_size`, both untimed, as OSU does). Locks are shared,
//!   but exclusive where OSU's benchmark for the operation takes them so
//!   (get_accumulate always, fetch_and_op and compare_and_swap for lock);
//! - active target (fence, pscw): both ranks take part in each epoch;
//!   for a latency rank 1 puts (or gets) back, so an iteration is a round
//!   trip and the latency half of it, as in OSU. A fence is collective over
//!   every rank; pscw's groups are the pair's own (the peer alone).
//!
//! Each size gets a fresh window of size x window bytes (OSU makes one per
//! size); dropping the old one frees it on every rank. fetch_and_op and
//! compare_and_swap have one size, one element of the datatype (OSU makes
//! one window of the largest -m bytes for it; ours is that element).
//! The element type of the accumulates is `-T`'s (MPI_CHAR by default),
//! counted as size / element bytes; put, get and get_accumulate move
//! MPI_CHAR. `-c` (acc, fop, cas) refills and checks around every
//! iteration, untimed (`begin_iteration`, `check`; rma/validate.rs says
//! what is expected). The timing
//! differs from OSU's in one place only: OSU's pscw reads its start clock
//! after the first timed MPI_Win_start, ours before every iteration's, so
//! one MPI_Win_start call in a count more is inside the total.

pub mod acc_latency;
pub mod cas_latency;
pub mod fop_latency;
pub mod get_acc_latency;
pub mod get_bw;
pub mod get_latency;
pub mod get_mbw;
pub mod put_bibw;
pub mod put_bw;
pub mod put_latency;

use crate::backend::rma::{OneSided, SyncMode, WinKind};
use crate::backend::{Control, Memory};
use crate::bench::{Kernel, Metric, Setup, SizeCase};
use crate::buffer::{check_values, write_values, AllocError, Mismatch};
pub(crate) use crate::spec::OneSidedRules as Rules;
use crate::spec::{BenchSpec, MetricKind};
use crate::stats::Samples;

pub(crate) mod validate;
use validate::Expect;

/// OSU's one-sided letters: `+:w:s:hvm:x:i:G:Iz::` then `P:`.
pub(crate) const LAT_LETTERS: &str = "wshvmxiGIzP";
/// The atomics that take element types (acc, fop, cas) add `cT:`.
pub(crate) const TYPED_LAT_LETTERS: &str = "wshvmxiGIzPcT";
/// The bandwidth tests add `W:` before `P:`.
pub(crate) const BW_LETTERS: &str = "wshvmxiGIzWP";

/// Every synchronisation (OSU's ALL_SYNC benchmarks), help order.
pub(crate) const ALL_SYNCS: &[SyncMode] =
    &[SyncMode::Pscw, SyncMode::Fence, SyncMode::Lock, SyncMode::Flush, SyncMode::FlushLocal, SyncMode::LockAll];
/// Active target only (OSU's ACTIVE_SYNC: osu_put_bibw).
pub(crate) const ACTIVE_SYNCS: &[SyncMode] = &[SyncMode::Pscw, SyncMode::Fence];

/// put/get latency and bandwidth: MPI-3 defaults, every synchronisation.
pub(crate) const PASSIVE_DEFAULT: Rules = Rules {
    syncs: ALL_SYNCS,
    default_sync: SyncMode::Flush,
    default_win: WinKind::Allocate,
    one_element: false,
    datatype_line: true,
    lock_warms_up_as_timed: false,
};
/// osu_put_bibw.
pub(crate) const ACTIVE_ONLY: Rules = Rules { syncs: ACTIVE_SYNCS, default_sync: SyncMode::Pscw, ..PASSIVE_DEFAULT };
/// osu_acc_latency: put's rules, and OSU's warm-up under `-s lock`.
pub(crate) const ACCUMULATE: Rules = Rules { lock_warms_up_as_timed: true, ..PASSIVE_DEFAULT };
/// osu_fop_latency and osu_cas_latency: one element per datatype.
pub(crate) const ONE_ELEMENT: Rules = Rules { one_element: true, ..PASSIVE_DEFAULT };
/// osu_get_acc_latency: OSU's built-in window and sync (create, lock),
/// MPI_CHAR only and not named.
pub(crate) const GET_ACCUMULATE: Rules =
    Rules { default_sync: SyncMode::Lock, default_win: WinKind::Create, datatype_line: false, ..PASSIVE_DEFAULT };

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

    /// The message sizes of datatype `dt` for a run over `sizes`: one
    /// element for fop and cas, otherwise the sizes themselves (those too
    /// small for one element are skipped by the measurement).
    pub fn sizes(&self, dt: crate::datatype::Datatype, sizes: &[usize]) -> Vec<usize> {
        if self.one_element {
            vec![dt.size()]
        } else {
            sizes.to_vec()
        }
    }

    /// Whether a size above 8192 bytes warms up as many times as it is
    /// timed (osu_acc_latency `-s lock`, see the field).
    pub(crate) fn warms_up_as_timed(&self, sync: Option<SyncMode>) -> bool {
        self.lock_warms_up_as_timed && sync.unwrap_or(self.default_sync) == SyncMode::Lock
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
    /// MPI_Accumulate with MPI_SUM, `-T`'s element type.
    Accumulate,
    /// MPI_Fetch_and_op with MPI_SUM, one element.
    FetchAndOp,
    /// MPI_Compare_and_swap, one element.
    CompareAndSwap,
    /// MPI_Get_accumulate with MPI_SUM, MPI_CHAR.
    GetAccumulate,
}

impl Op {
    /// Whether the origin locks its target exclusively under `sync`, as
    /// OSU's benchmark for the operation does: get_accumulate for every
    /// lock it takes, fetch_and_op and compare_and_swap for `-s lock`'s;
    /// the others share.
    pub fn exclusive(self, sync: SyncMode) -> bool {
        match self {
            Op::GetAccumulate => true,
            Op::FetchAndOp | Op::CompareAndSwap => sync == SyncMode::Lock,
            Op::Put | Op::Get | Op::Accumulate => false,
        }
    }

    /// Bytes of the buffer the operation's old target values come back
    /// to, for `largest` bytes per operation (0: none).
    fn result_bytes(self, largest: usize) -> usize {
        match self {
            Op::GetAccumulate => largest,
            Op::FetchAndOp | Op::CompareAndSwap => std::mem::size_of::<u64>(),
            Op::Put | Op::Get | Op::Accumulate => 0,
        }
    }
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
    /// np/2 pairs at once, each origin a window to its own target per
    /// epoch; the MB/s of each origin over its own time, summed.
    MultiBandwidth,
}

/// A one-sided benchmark: its spec, and what it times.
pub trait RmaBench {
    const SPEC: &'static BenchSpec;
    const OP: Op;
    const SHAPE: Shape;
}

/// The window and synchronisation a run uses (the options, or the
/// benchmark's defaults).
pub fn choice(spec: &BenchSpec, opts: &crate::options::Options) -> (WinKind, SyncMode) {
    let rules = spec.one_sided.expect("a one-sided benchmark");
    (opts.win.unwrap_or(rules.default_win), opts.sync.unwrap_or(rules.default_sync))
}

/// The kernel of every one-sided benchmark.
pub(crate) struct RmaKernel<T: OneSided> {
    op: Op,
    shape: Shape,
    kind: WinKind,
    sync: SyncMode,
    /// An origin (rank 0, or any rank below np/2 for pairs): it acts and
    /// keeps time.
    origin: bool,
    peer: usize,
    /// The pairs acting at once: np/2 for `MultiBandwidth`, else 1.
    pairs: usize,
    /// What puts read and gets write: the largest size times the window.
    local: T::Buf,
    /// Where the atomics' old target values land (one byte when unused).
    result: T::Buf,
    /// compare_and_swap's comparand: one element, zero, or `-c`'s.
    compare: T::Buf,
    /// Whether the origin's locks are exclusive (see [`Op::exclusive`]).
    exclusive: bool,
    win: Option<T::Win>,
    /// Whether rank 0 holds the size's lock (flush, flush_local).
    locked: bool,
    /// What `-c` checks after each iteration (acc, fop, cas).
    expect: Option<Expect>,
}

impl<T: OneSided> RmaKernel<T> {
    pub fn new<B: RmaBench>(s: &Setup<T>) -> Result<Self, AllocError> {
        let rank = s.rank();
        // np is 2 (one pair) but for MultiBandwidth, whose spec asks for an
        // even np (plan.rs refuses the rest).
        let half = s.np() / 2;
        let (kind, sync) = choice(B::SPEC, s.opts);
        let window = if B::SHAPE == Shape::Latency { 1 } else { s.max_window };
        // An atomic's element may be larger than -m (fop, cas: -m 1 -T mpi_int).
        let element = std::mem::size_of::<u64>();
        let mut local = s.t.memory().alloc(s.max_size.saturating_mul(window).max(element))?;
        s.t.memory().write_host(&mut local, crate::backend::WHOLE, |b| b.fill(b'a'));
        let result = s.t.memory().alloc(B::OP.result_bytes(s.max_size).max(element))?;
        let compare = s.t.memory().alloc(element)?;
        let mut k = RmaKernel {
            op: B::OP,
            shape: B::SHAPE,
            kind,
            sync,
            origin: rank < half,
            peer: if rank < half { rank + half } else { rank - half },
            pairs: if B::SHAPE == Shape::MultiBandwidth { half } else { 1 },
            local,
            result,
            compare,
            exclusive: B::OP.exclusive(sync),
            win: None,
            locked: false,
            expect: None,
        };
        // An active-target latency is a round trip: both ranks act.
        let round_trip = k.shape == Shape::Latency && k.both_ways();
        if s.opts.validation.is_some() && Expect::checks(B::OP) {
            k.expect = Some(Expect::new(B::OP, rank, round_trip));
        }
        Ok(k)
    }

    /// The operations of one epoch from this rank to its peer.
    #[inline(always)]
    fn ops(&mut self, t: &T, win: &T::Win, case: &SizeCase, n: usize) {
        let (size, count, dt, peer) = (case.size, case.count, case.datatype, self.peer);
        for j in 0..n {
            let at = j * size;
            match self.op {
                Op::Put => t.put(win, &self.local, at, size, peer),
                Op::Get => t.get(win, &mut self.local, at, size, peer),
                Op::Accumulate => t.accumulate(win, &self.local, at, count, dt, peer),
                Op::GetAccumulate => t.get_accumulate(win, &self.local, &mut self.result, at, count, dt, peer),
                Op::FetchAndOp => t.fetch_and_op(win, &self.local, &mut self.result, dt, peer),
                Op::CompareAndSwap => t.compare_and_swap(win, &self.local, &self.compare, &mut self.result, dt, peer),
            }
        }
    }

    /// Elements `-c` fills and checks: the size's for accumulate, one for
    /// the one-element atomics.
    fn checked_elements(&self, case: &SizeCase) -> usize {
        if self.op == Op::Accumulate {
            case.count
        } else {
            1
        }
    }

    /// Locks the peer's window, shared or exclusive as the operation's
    /// benchmark does.
    #[inline(always)]
    fn lock(&self, t: &T, win: &T::Win) {
        if self.exclusive {
            t.lock_exclusive(win, self.peer);
        } else {
            t.lock_shared(win, self.peer);
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
            Shape::Bandwidth | Shape::MultiBandwidth => false,
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
            self.lock(t, &win);
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

    /// `-c`: the values of iteration `i` (validate.rs), then both ranks
    /// meet, so that no update lands before the target's fill. The
    /// atomics take no `-u`: nothing is repeated untimed.
    fn begin_iteration(&mut self, t: &T, case: &SizeCase, i: usize, validation: Option<usize>) {
        if validation.is_some() {
            self.fill_validation(t, case, i);
            t.world().barrier();
        }
    }

    /// This rank's value in its window and origin buffer, the comparand of
    /// iteration `i`, and a zeroed result.
    fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        let (dt, n) = (case.datatype, self.checked_elements(case));
        let (Some(e), Some(win)) = (self.expect, self.win.as_mut()) else {
            return;
        };
        t.win_write(win, |b| write_values(b, dt, 0..n, |_| e.own));
        t.memory().write_host(&mut self.local, n * dt.size(), |b| write_values(b, dt, 0..n, |_| e.own));
        t.memory().write_host(&mut self.compare, dt.size(), |b| write_values(b, dt, 0..1, |_| e.comparand(i)));
        t.memory().write_host(&mut self.result, crate::backend::WHOLE, |b| b.fill(0));
    }

    #[inline(always)]
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        let win = self.win.take().expect("prepare made the window");
        let n = self.per_epoch(case);
        let both = self.shape == Shape::BiBandwidth;
        let t0 = t.now();
        match (self.sync, self.origin) {
            (SyncMode::Lock, true) => {
                self.lock(t, &win);
                self.ops(t, &win, case, n);
                t.unlock(&win, self.peer);
            }
            (SyncMode::LockAll, true) => {
                t.lock_all(&win);
                self.ops(t, &win, case, n);
                t.unlock_all(&win);
            }
            (SyncMode::Flush, true) => {
                self.ops(t, &win, case, n);
                t.flush(&win, self.peer);
            }
            (SyncMode::FlushLocal, true) => {
                self.ops(t, &win, case, n);
                t.flush_local(&win, self.peer);
            }
            // Passive target: the target does nothing.
            (SyncMode::Lock | SyncMode::LockAll | SyncMode::Flush | SyncMode::FlushLocal, false) => {}
            (SyncMode::Fence, origin) if self.shape == Shape::Latency => {
                // Rank 0 goes first; rank 1 answers in the next epoch.
                t.fence(&win);
                if origin {
                    self.ops(t, &win, case, n);
                }
                t.fence(&win);
                if !origin {
                    self.ops(t, &win, case, n);
                }
                t.fence(&win);
            }
            (SyncMode::Fence, origin) => {
                t.fence(&win);
                if origin || both {
                    self.ops(t, &win, case, n);
                }
                t.fence(&win);
            }
            (SyncMode::Pscw, origin) if self.shape == Shape::Latency => {
                if origin {
                    t.win_start(&win);
                    self.ops(t, &win, case, n);
                    t.win_complete(&win);
                    t.win_post(&win);
                    t.win_wait(&win);
                } else {
                    t.win_post(&win);
                    t.win_wait(&win);
                    t.win_start(&win);
                    self.ops(t, &win, case, n);
                    t.win_complete(&win);
                }
            }
            (SyncMode::Pscw, _) if both => {
                t.win_post(&win);
                t.win_start(&win);
                self.ops(t, &win, case, n);
                t.win_complete(&win);
                t.win_wait(&win);
            }
            (SyncMode::Pscw, true) => {
                t.win_start(&win);
                self.ops(t, &win, case, n);
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

    /// `-c` after iteration `i`, untimed, on both ranks: every update of
    /// the iteration is made complete at its target (flush_local completes
    /// only locally, so the origin flushes), both ranks meet, and each
    /// reads its own window and what it fetched; the next iteration's
    /// barrier comes before its next update. A passive target reads its
    /// window directly after the barrier, which MPI's unified memory model
    /// (that of the windows Open MPI and MPICH make on these machines)
    /// makes current.
    fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch> {
        let (e, win) = (self.expect?, self.win.as_ref()?);
        if e.acts && self.sync == SyncMode::FlushLocal {
            t.flush(win, self.peer);
        }
        t.world().barrier();
        let dt = case.datatype;
        let n = self.checked_elements(case);
        let wrong = t.win_read(win, |b| check_values(b, dt, 0..n, |_| e.window(i), 1));
        wrong.or_else(|| {
            e.fetched().and_then(|want| {
                t.memory().read_host(&self.result, dt.size(), |b| check_values(b, dt, 0..1, |_| want, 1))
            })
        })
    }

    /// Rank 0's iteration; for pairs, as if every pair took its time.
    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64 {
        self.pairs as f64 * value(self.shape, self.both_ways(), case.size, self.per_epoch(case), 1, secs)
    }

    fn iteration_time_scale(&self) -> f64 {
        if self.shape == Shape::Latency && self.both_ways() {
            0.5
        } else {
            1.0
        }
    }

    /// Rank 0's total, as OSU prints it; for pairs, each origin's
    /// bandwidth over its own total, summed at rank 0 (every rank calls).
    fn metric(&mut self, t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let own =
            |k: &Self| value(k.shape, k.both_ways(), case.size, k.per_epoch(case), case.iterations, samples.total());
        let v = if self.shape == Shape::MultiBandwidth {
            t.world().reduce_f64(if self.origin { own(self) } else { 0.0 }, crate::backend::ReduceOp::Sum)
        } else {
            own(self)
        };
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
        Shape::Bandwidth | Shape::MultiBandwidth | Shape::BiBandwidth => {
            size as f64 / 1e6 * iterations as f64 * window as f64 / secs * factor
        }
    }
}

/// Why the MPI library `library` (its version string) will not run `op`
/// over one of `datatypes`, in one line: MPI permits compare-and-swap on
/// integer, logical and byte types only, and MPICH (and the MPIs built on
/// it) aborts on MPI_FLOAT there where Open MPI runs it, as OSU's `-T all`
/// asks. None where it will run.
pub(crate) fn library_refuses(op: Op, datatypes: &[crate::datatype::Datatype], library: &str) -> Option<String> {
    use crate::datatype::Datatype;
    (op == Op::CompareAndSwap && datatypes.contains(&Datatype::Float) && library.contains("MPICH")).then(|| {
        "MPICH refuses MPI_FLOAT in MPI_Compare_and_swap (MPI permits integer, logical and byte types there); \
         give -T mpi_char or -T mpi_int"
            .to_string()
    })
}

/// The message memory of one rank: the origin buffer and this rank's
/// window, each the largest size times the window (1 for a latency).
pub(crate) fn message_bytes(plan: &crate::bench::engine::plan::Plan) -> u128 {
    let window = if plan.spec.metric == MetricKind::Bandwidth { plan.max_window() } else { 1 };
    2 * plan.max_size as u128 * window as u128
}

/// Makes `$bench` (in a file with `SPEC`) a one-sided benchmark doing
/// `$op` in `$shape`, run by [`crate::runner::run_rma`] and listed in the
/// registry.
macro_rules! one_sided_bench {
    ($bench:ident, $op:expr, $shape:expr) => {
        pub struct $bench;

        impl $crate::bench::rma::RmaBench for $bench {
            const SPEC: &'static $crate::spec::BenchSpec = &SPEC;
            const OP: $crate::bench::rma::Op = $op;
            const SHAPE: $crate::bench::rma::Shape = $shape;
        }

        impl $crate::bench::registry::Registered for $bench {
            const ENTRY: $crate::bench::registry::Entry = $crate::bench::registry::Entry {
                spec: &SPEC,
                needs: Some($crate::backend::Capability::OneSided),
                collective: None,
            };
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

    #[test]
    fn mpich_refuses_float_compare_and_swap() {
        use crate::datatype::Datatype;
        let mpich = "MPICH Version:      4.0.2";
        let refusal = library_refuses(Op::CompareAndSwap, &Datatype::ALL, mpich).unwrap();
        assert!(refusal.starts_with("MPICH refuses MPI_FLOAT in MPI_Compare_and_swap"), "{refusal}");
        assert_eq!(library_refuses(Op::CompareAndSwap, &[Datatype::Int], mpich), None);
        assert_eq!(library_refuses(Op::FetchAndOp, &Datatype::ALL, mpich), None);
        assert_eq!(library_refuses(Op::CompareAndSwap, &Datatype::ALL, "Open MPI v4.1.4"), None);
    }

    #[test]
    fn atomics_rules() {
        use crate::datatype::Datatype;
        // fop and cas: one row, one element, whatever -m gives.
        assert_eq!(ONE_ELEMENT.sizes(Datatype::Char, &[1, 2, 4]), vec![1]);
        assert_eq!(ONE_ELEMENT.sizes(Datatype::Float, &[1, 2, 4, 8]), vec![4]);
        assert_eq!(ACCUMULATE.sizes(Datatype::Int, &[1, 2, 4]), vec![1, 2, 4]);
        // get_acc: create and lock, no datatype line; every sync is taken.
        assert_eq!((GET_ACCUMULATE.default_win, GET_ACCUMULATE.default_sync), (WinKind::Create, SyncMode::Lock));
        let lines = [&GET_ACCUMULATE, &ACCUMULATE, &ONE_ELEMENT].map(|r| r.datatype_line);
        assert_eq!(lines, [false, true, true]);
        assert_eq!(GET_ACCUMULATE.sync("osu_get_acc_latency", "pscw"), Ok(SyncMode::Pscw));
        assert_eq!(ONE_ELEMENT.sync("osu_cas_latency", "flush_local"), Ok(SyncMode::FlushLocal));
        assert_eq!((ONE_ELEMENT.default_win, ONE_ELEMENT.default_sync), (WinKind::Allocate, SyncMode::Flush));
        // acc's warm-up quirk is for -s lock only.
        assert!(ACCUMULATE.warms_up_as_timed(Some(SyncMode::Lock)));
        assert!(!ACCUMULATE.warms_up_as_timed(Some(SyncMode::Flush)));
        assert!(!ACCUMULATE.warms_up_as_timed(None));
        assert!(!PASSIVE_DEFAULT.warms_up_as_timed(Some(SyncMode::Lock)));
        // Exclusive locks where OSU takes them.
        assert!(Op::GetAccumulate.exclusive(SyncMode::Flush) && Op::GetAccumulate.exclusive(SyncMode::Lock));
        assert!(Op::FetchAndOp.exclusive(SyncMode::Lock) && !Op::FetchAndOp.exclusive(SyncMode::Flush));
        assert!(Op::CompareAndSwap.exclusive(SyncMode::Lock) && !Op::CompareAndSwap.exclusive(SyncMode::FlushLocal));
        assert!(!Op::Accumulate.exclusive(SyncMode::Lock) && !Op::Put.exclusive(SyncMode::Lock));
    }
}

#[cfg(test)]
mod on_mock;
