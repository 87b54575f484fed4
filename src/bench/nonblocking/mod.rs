//! The kernel shared by the non-blocking collectives (osu_iallreduce,
//! osu_ibarrier, ...), after OSU's overlap method. Each size takes two
//! passes of the shared timed loop ([`Kernel::phases`]):
//!
//! 1. pure communication: start the operation and wait for it at once;
//!    each rank's mean of this pass is its communication time;
//! 2. overlap: start, then a dummy computation as long as that rank's own
//!    communication time ([`NonBlockingCollectives::compute_for`], our busy loop on
//!    the transport's clock), broken into `-t` pieces with one MPI_Test
//!    after each, then wait. The pass's iteration time is the overall time;
//!    the start, the computation (tests included), the tests and the wait
//!    are timed apart.
//!
//! Every rank's means are averaged over ranks (the pure time also as min
//! and max), and the overlap is
//! `max(0, 100 - 100 * (overall - (computation - tests)) / pure)`: the
//! share of the communication hidden behind the computation.
//!
//! What differs between the benchmarks (buffers, fills, checks) is their
//! blocking twin's [`Collective`]; a [`NonBlocking`] type names that twin
//! and how to start the operation. Barriers and validation repetitions are
//! OSU's: a barrier after each iteration (except in osu_ibarrier's first
//! pass), validation repetitions of the non-blocking call into the
//! warm-up buffer.

pub mod iallgather;
pub mod iallgatherv;
pub mod iallreduce;
pub mod ialltoall;
pub mod ialltoallv;
pub mod ialltoallw;
pub mod ibarrier;
pub mod ibcast;
pub mod igather;
pub mod igatherv;
pub mod ireduce;
pub mod ireduce_scatter;
pub mod ireduce_scatter_block;
pub mod iscatter;
pub mod iscatterv;

use crate::backend::{Control, NonBlockingCollectives, ReduceOp};
use crate::bench::collective::{CollBuffers, Collective, Ranks};
use crate::bench::{Kernel, Metric, Setup, SizeCase};
use crate::buffer::{AllocError, Mismatch};
use crate::report::OverlapTimes;
use crate::spec::BenchSpec;
use crate::stats::Samples;

/// What one non-blocking collective is.
pub trait NonBlocking {
    const SPEC: &'static BenchSpec;
    /// The blocking collective with the same buffers, fills and checks.
    type Blocking: Collective;

    /// Starts the operation of iteration `i` (what the blocking twin's
    /// `call` does, without waiting).
    ///
    /// # Safety
    /// `send` and `recv` stay untouched until `t.nb_wait()`.
    unsafe fn start<T: NonBlockingCollectives>(
        c: &Self::Blocking,
        t: &T,
        send: &T::Buf,
        recv: &mut T::Buf,
        case: &SizeCase,
        job: &Ranks,
        i: usize,
    );

    /// Whether the pure-communication pass has a barrier after each
    /// iteration (osu_ibarrier's has none).
    fn barrier_in_first_pass() -> bool {
        true
    }
}

/// Makes a [`NonBlocking`] type a benchmark (a blanket implementation
/// would overlap the blocking collectives' one).
macro_rules! nonblocking_bench {
    ($t:ty) => {
        impl $crate::bench::Bench for $t {
            const SPEC: &'static $crate::spec::BenchSpec = <$t as $crate::bench::nonblocking::NonBlocking>::SPEC;
            type Needs = $crate::bench::needs::NonBlockingCollectives;
            const COLLECTIVE: Option<$crate::spec::CollectiveCall> = Some($crate::spec::CollectiveCall {
                op: <<$t as $crate::bench::nonblocking::NonBlocking>::Blocking as $crate::bench::collective::Collective>::OP,
                nonblocking: true,
            });

            fn message_bytes(plan: &$crate::bench::engine::plan::Plan, np: usize) -> u128 {
                $crate::bench::nonblocking::message_bytes::<$t>(plan, np)
            }
        }

        impl<T: $crate::backend::NonBlockingCollectives> $crate::bench::BenchOn<T> for $t {
            type Kernel = $crate::bench::nonblocking::NbcKernel<$t, T>;

            fn kernel(s: &$crate::bench::Setup<T>) -> Result<Self::Kernel, $crate::buffer::AllocError> {
                $crate::bench::nonblocking::NbcKernel::new(s)
            }
        }
    };
}
pub(crate) use nonblocking_bench;

/// Declares a non-blocking collective over its blocking twin in a few
/// lines: the unit type, its [`NonBlocking`] start (the body, run with
/// the twin `c`, the transport `t`, the buffers `send` and `recv`, the
/// size `case`, the `job` and the iteration `i`) and its benchmark.
///
/// ```ignore
/// nonblocking_collective!(Ireduce over Reduce, SPEC, |c, t, send, recv, case, job, i| {
///     t.start(|t| t.reduce(job.operands(send, recv), case.count, case.datatype, job.reduction, job.root_of(i)))
/// });
/// ```
macro_rules! nonblocking_collective {
    ($(#[$doc:meta])* $name:ident over $twin:ty, $spec:expr,
     |$c:ident, $t:ident, $send:ident, $recv:ident, $case:ident, $job:ident, $i:ident| $start:block) => {
        $(#[$doc])*
        pub struct $name;

        impl $crate::bench::nonblocking::NonBlocking for $name {
            const SPEC: &'static $crate::spec::BenchSpec = &$spec;
            type Blocking = $twin;

            #[inline(always)]
            #[allow(unused_variables)]
            unsafe fn start<T: $crate::backend::NonBlockingCollectives>(
                $c: &$twin,
                $t: &T,
                $send: &T::Buf,
                $recv: &mut T::Buf,
                $case: &$crate::bench::SizeCase,
                $job: &$crate::bench::collective::Ranks,
                $i: usize,
            ) {
                // SAFETY: the caller keeps the buffers untouched until the
                // wait, and the twin (its layouts) lives in the kernel.
                unsafe { $start }
            }
        }

        $crate::bench::nonblocking::nonblocking_bench!($name);
    };
}
pub(crate) use nonblocking_collective;

/// The send, receive and warm-up buffers [`NbcKernel::new`] allocates.
pub(crate) fn message_bytes<N: NonBlocking>(plan: &crate::bench::engine::plan::Plan, np: usize) -> u128 {
    let c = N::Blocking::new(np);
    let (send, recv) = c.buffer_bytes(plan.max_size, np);
    let warm = if crate::bench::collective::warm_buffer(&c, plan.opts) { recv } else { 0 };
    (send as u128) + (recv as u128) + (warm as u128)
}

/// Sums of the overlap pass's parts over the timed iterations (seconds).
#[derive(Clone, Copy, Debug, Default)]
struct Parts {
    init: f64,
    compute: f64,
    test: f64,
    wait: f64,
}

/// A non-blocking collective with its buffers and the state of the two
/// passes.
pub(crate) struct NbcKernel<N: NonBlocking, T: NonBlockingCollectives> {
    c: N::Blocking,
    bufs: CollBuffers<T::Buf>,
    job: Ranks,
    iteration: usize,
    /// 0: pure communication; 1: overlap.
    phase: usize,
    /// This rank's mean pure communication time, seconds.
    pure_secs: f64,
    parts: Parts,
    test_calls: usize,
}

impl<N: NonBlocking, T: NonBlockingCollectives> NbcKernel<N, T> {
    pub fn new(s: &Setup<T>) -> Result<Self, AllocError> {
        Self::with(s, N::Blocking::for_run(s.opts, s.np()))
    }

    /// The kernel over twin `c` built by the benchmark (the neighbourhood
    /// collectives' carries its process topology).
    pub fn with(s: &Setup<T>, c: N::Blocking) -> Result<Self, AllocError> {
        let (bufs, job) = (CollBuffers::new(s, &c)?, Ranks::new(s));
        Ok(NbcKernel {
            c,
            bufs,
            job,
            iteration: 0,
            phase: 0,
            pure_secs: 0.0,
            parts: Parts::default(),
            test_calls: s.opts.test_calls,
        })
    }

    /// Starts the operation and waits for it (validation repetitions).
    fn start_and_wait(&mut self, t: &T, case: &SizeCase, warm: bool) {
        self.start(t, case, warm);
        t.nb_wait();
    }

    #[inline(always)]
    fn start(&mut self, t: &T, case: &SizeCase, warm: bool) {
        let recv = if warm && self.c.warm_up_elsewhere() { &mut self.bufs.warm } else { &mut self.bufs.recv };
        // SAFETY: the buffers belong to this kernel and nothing touches
        // them before the nb_wait that every caller issues next.
        unsafe { N::start(&self.c, t, &self.bufs.send, recv, case, &self.job, self.iteration) };
    }

    /// OSU's dummy computation with its tests: `-t N` splits it into N
    /// pieces, each followed by one test. Returns the seconds the tests
    /// took.
    #[inline(always)]
    fn compute_and_test(&self, t: &T) -> f64 {
        if self.test_calls == 0 {
            t.compute_for(self.pure_secs);
            return 0.0;
        }
        let piece = self.pure_secs / self.test_calls as f64;
        let mut tests = 0.0;
        for _ in 0..self.test_calls {
            t.compute_for(piece);
            let t0 = t.now();
            t.nb_test();
            tests += t.now() - t0;
        }
        tests
    }
}

impl<N: NonBlocking, T: NonBlockingCollectives> Kernel<T> for NbcKernel<N, T> {
    fn prepare(&mut self, _t: &T, case: &SizeCase) -> Result<(), AllocError> {
        self.c.prepare(case, &self.job);
        self.phase = 0;
        Ok(())
    }

    /// As the blocking twin (OSU's osu_ibcast has no barrier there either).
    fn sync_before_size(&self) -> bool {
        self.c.sync_before_size()
    }

    fn begin_iteration(&mut self, t: &T, case: &SizeCase, i: usize, validation: Option<usize>) {
        self.iteration = i;
        if let Some(reps) = validation {
            self.fill_validation(t, case, i);
            for _ in 0..reps {
                t.world().barrier();
                self.start_and_wait(t, case, true);
            }
            t.world().barrier();
        }
    }

    fn end_iteration(&mut self, t: &T, _case: &SizeCase) {
        if self.phase > 0 || N::barrier_in_first_pass() {
            t.world().barrier();
        }
    }

    fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        self.bufs.fill_validation(t, &self.c, case, &self.job, i);
    }

    #[inline(always)]
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        let t0 = t.now();
        self.start(t, case, false);
        if self.phase == 0 {
            t.nb_wait();
            return Some(t.now() - t0);
        }
        let init = t.now() - t0;
        let c0 = t.now();
        let test = self.compute_and_test(t);
        let compute = t.now() - c0;
        let w0 = t.now();
        t.nb_wait();
        let t1 = t.now();
        if self.iteration >= case.warmup {
            let p = &mut self.parts;
            p.init += init;
            p.compute += compute;
            p.test += test;
            p.wait += t1 - w0;
        }
        Some(t1 - t0)
    }

    fn phases(&self) -> usize {
        2
    }

    /// After the pure-communication pass: this rank's mean is the length
    /// of its dummy computation in the overlap pass.
    fn begin_phase(&mut self, t: &T, case: &SizeCase, phase: usize, samples: &Samples) {
        t.world().barrier();
        self.pure_secs = samples.total() / case.iterations.max(1) as f64;
        self.parts = Parts::default();
        self.phase = phase;
        t.world().barrier();
    }

    fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.bufs.check(t, &self.c, case, &self.job, i)
    }

    fn per_iteration(&self, _case: &SizeCase, secs: f64) -> f64 {
        secs * 1e6
    }

    /// OSU's sums over ranks divided by the number of ranks, the pure
    /// time's min and max, and the overlap formula; the tails describe
    /// each overlap-pass iteration averaged over ranks.
    fn metric(&mut self, t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let w = t.world();
        w.barrier();
        let per = |secs: f64| secs * 1e6 / case.iterations.max(1) as f64;
        let np = self.job.np as f64;
        let mine = [
            per(samples.total()),
            per(self.parts.compute),
            per(self.parts.init),
            per(self.parts.test),
            per(self.parts.wait),
            self.pure_secs * 1e6,
        ];
        let sums = w.reduce_f64_slice(&mine, ReduceOp::Sum);
        let min_pure = w.reduce_f64(self.pure_secs * 1e6, ReduceOp::Min);
        let max_pure = w.reduce_f64(self.pure_secs * 1e6, ReduceOp::Max);
        let per_iter = w.reduce_f64_slice(samples.as_slice(), ReduceOp::Sum);
        self.phase = 0;
        let avg = |k: usize| sums.get(k).copied().unwrap_or(0.0) / np;
        let times = overlap_times(avg(0), avg(1), avg(2), avg(3), avg(4), avg(5), min_pure, max_pure);
        Metric {
            value: times.overall_us,
            iteration_secs: Some(per_iter.iter().map(|t| t / np).collect()),
            overlap: Some(times),
            ..Metric::default()
        }
    }
}

/// OSU's columns from the averages over ranks (microseconds): the
/// computation column leaves the tests out, and the overlap is the share
/// of the pure communication time that the overall time does not add to
/// the computation, never below 0.
#[allow(clippy::too_many_arguments)]
pub(crate) fn overlap_times(
    overall: f64,
    compute_with_tests: f64,
    init: f64,
    test: f64,
    wait: f64,
    pure: f64,
    min_pure: f64,
    max_pure: f64,
) -> OverlapTimes {
    let compute = compute_with_tests - test;
    let overlap_pct = (100.0 - (overall - compute) / pure * 100.0).max(0.0);
    OverlapTimes {
        overall_us: overall,
        compute_us: compute,
        init_us: init,
        test_us: test,
        wait_us: wait,
        pure_us: pure,
        min_pure_us: min_pure,
        max_pure_us: max_pure,
        overlap_pct,
    }
}
