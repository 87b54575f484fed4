//! The kernel shared by the blocking collectives. Each collective file says
//! only what differs (buffer sizes, the call, its bus-bandwidth factor, the
//! validation pattern, where the barrier sits); this file times the call on
//! every rank, keeps OSU's barriers and validation repetitions, and turns
//! every rank's timings into OSU's average, min and max, the per-rank
//! spread, nccl-tests bandwidths, and the per-iteration average over ranks.

pub mod allgather;
pub mod allgatherv;
pub mod allreduce;
pub mod alltoall;
pub mod alltoallv;
pub mod alltoallv_traffic;
pub mod alltoallw;
pub mod barrier;
pub mod bcast;
pub mod gather;
pub mod gatherv;
pub mod hypercube;
pub mod reduce;
pub mod reduce_scatter;
pub mod reduce_scatter_block;
pub mod scatter;
pub mod scatterv;
pub mod sendrecv;
pub mod vector;

use crate::backend::{Collectives, Control, Memory, Operands, ReduceOp, Transport};
use crate::bench::{Bench, BenchOn, Kernel, Metric, Need, Setup, SizeCase};
use crate::buffer::verifiable::{self as buffer_data, Stretch};
use crate::buffer::{check_as, fill_zero, write_as, AllocError, Encoding, Mismatch};
use crate::datatype::verifiable::Stream;
use crate::datatype::{Datatype, Reduction};
use crate::options::RootRank;
use crate::spec::{BenchSpec, CollectiveCall, Op};
use crate::stats::{RankSpread, RankTime, Samples};

/// Where a collective's synchronisation sits around the timed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    /// A barrier after each call, outside the timed region.
    After,
    /// A barrier before each call (osu_reduce).
    Before,
    /// None (osu_barrier, which is itself the synchronisation).
    None,
}

/// Facts about the ranks a collective's pattern depends on: who this
/// rank is, how many there are, the root and whether the call is in place.
#[derive(Clone, Copy, Debug)]
pub struct Ranks {
    pub rank: usize,
    pub np: usize,
    pub in_place: bool,
    pub root: RootRank,
    /// What a reducing collective applies (nccl-tests' `-o`; OSU sums).
    pub reduction: Reduction,
    /// Which rank's time the row reports and its bandwidths follow
    /// (nccl-tests' `-a`; OSU averages).
    pub rank_time: RankTime,
    /// GPUs each thread drives (nccl-tests' `-g`): consecutive ranks, one
    /// thread's, share one time in nccl-tests' `-a`.
    pub gpus_per_thread: usize,
    /// Where an in-place reduce-scatter leaves a rank's result: at the
    /// rank's own block of the buffer (NCCL) rather than at its start (MPI);
    /// see [`Collectives::IN_PLACE_RESULT_AT_OWN_BLOCK`].
    pub result_at_own_block: bool,
    /// Whether `-c` writes and checks nccl-tests' data
    /// ([`Collective::verifiable`]) rather than OSU's patterns: in
    /// nccl-tests' format.
    pub nccl_data: bool,
}

impl Ranks {
    /// This rank's part in the run `s` sets up.
    pub fn new<T: Collectives>(s: &Setup<T>) -> Ranks {
        Ranks {
            rank: s.rank(),
            np: s.np(),
            in_place: s.opts.in_place,
            root: s.opts.root,
            reduction: s.opts.reduction,
            rank_time: s.opts.rank_time,
            gpus_per_thread: s.opts.gpus_per_thread.max(1),
            result_at_own_block: T::IN_PLACE_RESULT_AT_OWN_BLOCK,
            nccl_data: s.opts.format.counts_wrong_elements(),
        }
    }

    /// This rank's stream of nccl-tests' data in a reduction over every
    /// rank, in iteration `i`.
    pub(crate) fn reduction_stream(&self, i: usize) -> Stream {
        Stream { seed: repetition(i), rank_n: self.np, rank_me: self.rank }
    }

    /// Rank `r`'s own stream of nccl-tests' data where every rank sends
    /// its own (the gathering and all-to-all collectives), in iteration
    /// `i`.
    pub(crate) fn own_stream(r: usize, i: usize) -> Stream {
        Stream { seed: 33 * repetition(i) + r as u64, rank_n: 1, rank_me: 0 }
    }

    /// The one stream of a rooted or ring data mover in iteration `i`:
    /// each rank's part at its own indices of it.
    pub(crate) fn shared_stream(i: usize) -> Stream {
        Stream { seed: repetition(i), rank_n: 1, rank_me: 0 }
    }

    /// The root of iteration `i`.
    pub(crate) fn root_of(&self, i: usize) -> usize {
        match self.root {
            RootRank::Fixed(r) => r,
            RootRank::Rotate => i % self.np,
        }
    }

    /// The buffers of a call: apart, or the receive buffer alone with
    /// `-l`.
    #[inline(always)]
    pub(crate) fn operands<'a, B>(&self, send: &'a B, recv: &'a mut B) -> Operands<'a, B> {
        if self.in_place {
            Operands::InPlace(recv)
        } else {
            Operands::Apart { send, recv }
        }
    }

    /// The buffers of a rooted call (gather, scatter and their forms):
    /// with `-l` only `root` is in place, as MPI_IN_PLACE is only the
    /// root's.
    #[inline(always)]
    pub fn rooted<'a, B>(&self, send: &'a B, recv: &'a mut B, root: usize) -> Operands<'a, B> {
        if self.in_place && self.rank == root {
            Operands::InPlace(recv)
        } else {
            Operands::Apart { send, recv }
        }
    }
}

/// Whether collective `c` run with `opts` needs the warm-up receive
/// buffer: only when validation repetitions will write into it (`-c` with
/// `-u` above 0; nccl-tests' check has none), so a run without them holds
/// a send and a receive buffer alone, as nccl-tests' do.
pub(crate) fn warm_buffer<C: Collective>(c: &C, opts: &crate::options::Options) -> bool {
    c.warm_up_elsewhere() && opts.validation.is_some() && opts.validation_warmup > 0
}

/// The buffers of one rank: send, receive, and the receive buffer OSU's
/// validation repetitions write into so the checked result stays intact.
pub struct CollBuffers<B> {
    pub send: B,
    pub recv: B,
    pub warm: B,
}

impl<B> CollBuffers<B> {
    /// The buffers collective `c` needs at the run's largest size, as OSU
    /// starts them: send buffers of 1s and receive buffers of 0s, written
    /// (so every page is in place) before the first size.
    pub fn new<C: Collective, T: Collectives<Buf = B>>(s: &Setup<T>, c: &C) -> Result<Self, AllocError> {
        let (t, np) = (s.t, s.np());
        let (send, recv) = c.buffer_bytes(s.max_size, np);
        let mut bufs = CollBuffers {
            send: t.memory().alloc(send)?,
            recv: t.memory().alloc(recv)?,
            warm: t.memory().alloc(if warm_buffer(c, s.opts) { recv } else { 0 })?,
        };
        // nccl-tests registers its send and receive buffers (-R).
        t.register_buffer(&mut bufs.send);
        t.register_buffer(&mut bufs.recv);
        t.memory().write_host(&mut bufs.send, crate::backend::WHOLE, |b| b.fill(1));
        t.memory().write_host(&mut bufs.recv, crate::backend::WHOLE, |b| b.fill(0));
        t.memory().write_host(&mut bufs.warm, crate::backend::WHOLE, |b| b.fill(0));
        Ok(bufs)
    }

    /// Writes iteration `i`'s validation data for `c` at `case`'s size,
    /// staging only the bytes that size uses.
    pub(crate) fn fill_validation<C: Collective, T: Collectives<Buf = B>>(
        &mut self,
        t: &T,
        c: &C,
        case: &SizeCase,
        job: &Ranks,
        i: usize,
    ) {
        let (sb, rb) = c.buffer_bytes(case.size, job.np);
        let CollBuffers { send, recv, .. } = self;
        if let Some(v) = nccl_data(c, case, job, i) {
            t.memory().write_host(send, sb, |s| t.memory().write_host(recv, rb, |r| v.fill(s, r, case.datatype)));
            return;
        }
        t.memory().write_host(send, sb, |s| t.memory().write_host(recv, rb, |r| c.fill(s, r, case, job, i)));
    }

    /// Checks iteration `i`'s result of `c` at `case`'s size.
    pub fn check<C: Collective, T: Collectives<Buf = B>>(
        &self,
        t: &T,
        c: &C,
        case: &SizeCase,
        job: &Ranks,
        i: usize,
    ) -> Option<Mismatch> {
        let (_, rb) = c.buffer_bytes(case.size, job.np);
        if let Some(v) = nccl_data(c, case, job, i) {
            return t.memory().read_host(&self.recv, rb, |r| v.check(r, case.datatype));
        }
        t.memory().read_host(&self.recv, rb, |r| c.check(r, case, job, i))
    }
}

/// nccl-tests' data for iteration `i` of `c`, where the run checks with
/// it and `c` is one of nccl-tests' collectives.
fn nccl_data<C: Collective>(c: &C, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
    if !job.nccl_data {
        return None;
    }
    c.verifiable(case, job, i)
}

/// nccl-tests' repetition number (its seed) for iteration `i`: counted
/// from 1 as nccl-tests counts its checked calls, the same on every rank.
fn repetition(i: usize) -> u64 {
    i as u64 + 1
}

/// nccl-tests' checkable data for one call of a collective (its `-c`):
/// the stretches written into each buffer (the receive buffer cleared
/// first, as nccl-tests does), and the part of the receive buffer it then
/// compares, with the stretches that part must hold (zero elsewhere).
#[derive(Debug, PartialEq)]
pub struct Verifiable {
    /// The operation the values are made for (a data mover's: the sum,
    /// with one contributor, a copy).
    op: Reduction,
    send: Vec<Stretch>,
    recv: Vec<Stretch>,
    check: std::ops::Range<usize>,
    expect: Vec<Stretch>,
}

impl Verifiable {
    /// The data of a data mover (no reduction): `input` written into the
    /// receive buffer in place, else the send buffer.
    pub(crate) fn mover(
        input: Vec<Stretch>,
        in_recv: bool,
        check: std::ops::Range<usize>,
        expect: Vec<Stretch>,
    ) -> Self {
        Self::reducing(Reduction::Sum, input, in_recv, check, expect)
    }

    /// The data of a reduction `op`: as [`Verifiable::mover`]'s.
    pub(crate) fn reducing(
        op: Reduction,
        input: Vec<Stretch>,
        in_recv: bool,
        check: std::ops::Range<usize>,
        expect: Vec<Stretch>,
    ) -> Self {
        let (send, recv) = if in_recv { (Vec::new(), input) } else { (input, Vec::new()) };
        Verifiable { op, send, recv, check, expect }
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], dt: Datatype) {
        recv.fill(0);
        for s in &self.send {
            buffer_data::write(send, dt, self.op, s);
        }
        for s in &self.recv {
            buffer_data::write(recv, dt, self.op, s);
        }
    }

    fn check(&self, recv: &[u8], dt: Datatype) -> Option<Mismatch> {
        buffer_data::check(recv, dt, self.op, self.check.clone(), &self.expect)
    }
}

/// A stretch of `count` elements at element `at`: stream `stream`'s
/// inputs from index `first`.
pub(crate) fn inputs(at: usize, count: usize, first: u64, stream: Stream) -> Stretch {
    Stretch { at, count, first, stream, output: false }
}

/// A stretch of `count` elements at element `at`: the reduction of
/// stream `stream`'s inputs over its ranks, from index `first`.
pub(crate) fn reduced(at: usize, count: usize, first: u64, stream: Stream) -> Stretch {
    Stretch { at, count, first, stream, output: true }
}

/// What one blocking collective is. A type implementing it is a benchmark
/// (see the [`Bench`] implementation below).
pub trait Collective: Sized {
    const SPEC: &'static BenchSpec;
    /// What its [`Call`] needs of a transport ([`crate::bench::needs`]).
    type Needs: Need;
    /// The operation it times.
    const OP: Op;

    /// The collective for a job of `np` ranks.
    fn new(np: usize) -> Self;

    /// The collective for a run with `opts` on `np` ranks: [`Collective::new`]
    /// plus what only the options say (nccl-tests' alltoallv: its traffic
    /// pattern).
    fn for_run(_opts: &crate::options::Options, np: usize) -> Self {
        Self::new(np)
    }

    /// Bytes of the send and receive buffers for messages of `size` bytes.
    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize);

    /// Called before each size (e.g. to work out per-rank counts).
    fn prepare(&mut self, _case: &SizeCase, _job: &Ranks) {}

    /// Whether untimed validation repetitions write into the separate
    /// warm-up receive buffer (OSU: allreduce, alltoall, reduce_scatter,
    /// reduce) rather than the real one.
    fn warm_up_elsewhere(&self) -> bool {
        true
    }

    fn sync(&self) -> Sync {
        Sync::After
    }

    /// Whether an in-place call's result is defined, so nccl-tests' table
    /// checks it (not NCCL's all-to-all, whose grouped sends and receives
    /// would share one buffer).
    fn in_place_checked(&self) -> bool {
        true
    }

    /// Whether ranks synchronise before the first iteration of a size.
    fn sync_before_size(&self) -> bool {
        true
    }

    /// Whether ranks synchronise once more after the last iteration.
    fn sync_after_loop(&self) -> bool {
        false
    }

    /// nccl-tests' data size S (algbw = S / time) and bus-bandwidth factor
    /// (busbw = algbw * factor); None for osu_barrier.
    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)>;

    /// Writes the inputs of iteration `i` (and clears the outputs), in the
    /// host views of the send and receive buffers.
    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize);

    /// First wrong output element after iteration `i` on this rank, from
    /// the host view of the receive buffer.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch>;

    /// nccl-tests' checkable data for iteration `i`'s call, for the
    /// collectives nccl-tests has (what its `InitData` writes and
    /// expects); None: OSU's patterns alone.
    fn verifiable(&self, _case: &SizeCase, _job: &Ranks, _i: usize) -> Option<Verifiable> {
        None
    }
}

/// The operation of a [`Collective`] over the transports that have what it
/// calls (`impl<T: Collectives> Call<T> for Allreduce`, `impl<T:
/// VectorCollectives> Call<T> for Allgatherv`, ...).
pub trait Call<T: Transport>: Collective {
    /// The operation. `recv` is the real receive buffer, or the warm-up one
    /// for untimed validation repetitions where the collective has one.
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, i: usize);

    /// Untimed, before a size's iterations: what the calls of this size
    /// will use, for a form that binds it once (the persistent collectives,
    /// bench/persistent/mod.rs). `validating`: whether validation
    /// repetitions will run.
    fn bind(&mut self, _t: &T, _bufs: &mut CollBuffers<T::Buf>, _case: &SizeCase, _job: &Ranks, _validating: bool) {}

    /// Untimed, after a size's last iteration: undoes [`Call::bind`].
    fn unbind(&mut self, _t: &T) {}

    /// One operation, into the warm-up receive buffer (`warm`, where the
    /// collective has one) or the real one: [`Call::call`] on them.
    #[inline(always)]
    fn issue(&self, t: &T, bufs: &mut CollBuffers<T::Buf>, warm: bool, case: &SizeCase, job: &Ranks, i: usize) {
        let recv = if warm && self.warm_up_elsewhere() { &mut bufs.warm } else { &mut bufs.recv };
        self.call(t, &bufs.send, recv, case, job, i);
    }
}

impl<C: Collective> Bench for C {
    const SPEC: &'static BenchSpec = <C as Collective>::SPEC;
    type Needs = C::Needs;
    const COLLECTIVE: Option<CollectiveCall> = Some(CollectiveCall { op: C::OP, nonblocking: false });

    /// The send, receive and warm-up buffers [`CollKernel::new`] allocates.
    fn message_bytes(plan: &crate::bench::engine::plan::Plan, np: usize) -> u128 {
        let c = C::for_run(plan.opts, np);
        let (send, recv) = c.buffer_bytes(plan.max_size, np);
        let warm = if warm_buffer(&c, plan.opts) { recv } else { 0 };
        (send as u128) + (recv as u128) + (warm as u128)
    }
}

impl<C: Call<T>, T: Collectives> BenchOn<T> for C {
    type Kernel = CollKernel<C, T>;

    fn kernel(s: &Setup<T>) -> Result<CollKernel<C, T>, AllocError> {
        CollKernel::new(s, C::for_run(s.opts, s.np()))
    }
}

/// A collective with its buffers: the [`Kernel`] the runner drives.
pub(crate) struct CollKernel<C: Call<T>, T: Collectives> {
    c: C,
    bufs: CollBuffers<T::Buf>,
    job: Ranks,
    iteration: usize,
    validating: bool,
}

impl<C: Call<T>, T: Collectives> CollKernel<C, T> {
    pub fn new(s: &Setup<T>, c: C) -> Result<Self, AllocError> {
        let (bufs, job) = (CollBuffers::new(s, &c)?, Ranks::new(s));
        Ok(CollKernel { c, bufs, job, iteration: 0, validating: s.opts.validation.is_some() })
    }

    #[inline(always)]
    fn run_call(&mut self, t: &T, case: &SizeCase, warm: bool) {
        self.c.issue(t, &mut self.bufs, warm, case, &self.job, self.iteration);
    }
}

impl<C: Call<T>, T: Collectives> Kernel<T> for CollKernel<C, T> {
    fn set_operation(&mut self, reduction: Reduction, root: Option<usize>) {
        self.job.reduction = reduction;
        if let Some(r) = root {
            self.job.root = RootRank::Fixed(r);
        }
    }

    fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        self.c.prepare(case, &self.job);
        self.c.bind(t, &mut self.bufs, case, &self.job, self.validating);
        Ok(())
    }

    fn end_size(&mut self, t: &T, _case: &SizeCase) {
        self.c.unbind(t);
    }

    fn sync_before_size(&self) -> bool {
        self.c.sync_before_size()
    }

    fn begin_iteration(&mut self, t: &T, case: &SizeCase, i: usize, validation: Option<usize>) {
        self.iteration = i;
        if let Some(reps) = validation {
            self.fill_validation(t, case, i);
            for _ in 0..reps {
                t.world().barrier();
                self.run_call(t, case, true);
            }
            // On a stream (NCCL) the calls are only queued: they must be
            // done before the timed call starts, or its time holds theirs.
            t.complete();
        }
        if validation.is_some() || self.c.sync() == Sync::Before {
            t.world().barrier();
        }
    }

    fn end_iteration(&mut self, t: &T, _case: &SizeCase) {
        if self.c.sync() == Sync::After {
            t.world().barrier();
        }
    }

    fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        self.bufs.fill_validation(t, &self.c, case, &self.job, i);
    }

    #[inline(always)]
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        let t0 = t.now();
        self.run_call(t, case, false);
        t.complete();
        Some(t.now() - t0)
    }

    /// The collectives OSU separates with a barrier after or before each
    /// call run back to back in a batch (nccl-tests has no barrier between
    /// calls; a rotating root still rotates, each call with its
    /// iteration's); not osu_barrier, whose calls are the barriers.
    fn batchable(&self) -> bool {
        matches!(self.c.sync(), Sync::After | Sync::Before)
    }

    #[inline(always)]
    fn issue(&mut self, t: &T, case: &SizeCase, i: usize) {
        self.iteration = i;
        self.run_call(t, case, false);
    }

    fn set_in_place(&mut self, in_place: bool) -> Option<bool> {
        self.job.in_place = in_place;
        Some(!in_place || self.c.in_place_checked())
    }

    fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.bufs.check(t, &self.c, case, &self.job, i)
    }

    fn per_iteration(&self, _case: &SizeCase, secs: f64) -> f64 {
        secs * 1e6
    }

    /// OSU: each rank's mean, then min, max and average over ranks. Also
    /// which ranks were fastest and slowest, and each iteration's average
    /// over ranks (what OSU's `-z` describes).
    fn metric(&mut self, t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let w = t.world();
        if self.c.sync_after_loop() {
            w.barrier();
        }
        let mean_us = samples.total() * 1e6 / case.iterations as f64;
        let means = w.gather_f64(mean_us);
        let per_iter = w.reduce_f64_slice(samples.as_slice(), ReduceOp::Sum);
        // Over every rank timed: the world's (NCCL_TESTS_SPLIT's
        // communicators all time at once, and nccl-tests averages over
        // them all).
        let np = w.size() as f64;
        let avg = means.iter().sum::<f64>() / np;
        let spread = RankSpread::of(&means);
        // nccl-tests' bandwidths come from the time its `-a` picks: over
        // ranks, or where a thread drives several GPUs (each a rank here,
        // with a thread and a clock of its own) over nccl-tests' threads,
        // whose one timer runs until the last of its GPUs completes.
        let time = if self.job.gpus_per_thread > 1 {
            let threads: Vec<f64> =
                means.chunks(self.job.gpus_per_thread).map(|g| g.iter().copied().fold(f64::MIN, f64::max)).collect();
            let avg = threads.iter().sum::<f64>() / threads.len().max(1) as f64;
            RankSpread::of(&threads).map_or(avg, |s| s.time(self.job.rank_time, avg))
        } else {
            spread.map_or(avg, |s| s.time(self.job.rank_time, avg))
        };
        let algbw_busbw = self.c.bandwidth(case.size, self.job.np).map(|(bytes, factor)| {
            let algbw = bytes / (time * 1e-6) / 1e9;
            (algbw, algbw * factor)
        });
        Metric {
            value: avg,
            msg_rate: None,
            spread,
            algbw_busbw,
            iteration_secs: Some(per_iter.iter().map(|t| t / np).collect()),
            overlap: None,
            time_us: Some(time),
        }
    }
}

/// The value each element of a sum's input carries in iteration i, on
/// every rank: ((k mod 100) + 1) * (i + 1); the sum over np ranks is np
/// times that.
pub(crate) fn reduction_value(k: usize, i: usize) -> u64 {
    ((k % 100) as u64 + 1) * (i as u64 + 1)
}

/// The other operations' base value of element k in iteration i, written
/// as it is (no OSU multiplier): small (2 to 51) so that a product with
/// ones, a maximum or a minimum fits a signed char; 1 for an average of
/// one-byte elements, whose sum over the ranks must fit one too (up to 127
/// ranks); 2 to 7 in a narrow float, so that it, one either side and
/// twice it are exact even in E5M2's three significant bits; 1, 2 or 4 in
/// a narrow float's pre-multiplied sum, whose result (up to 4w) must be.
fn base_value(dt: Datatype, op: Reduction, k: usize, i: usize) -> u64 {
    if dt.narrow().is_some() && op == Reduction::MulSum {
        1 << ((k + i) % 3)
    } else if dt.narrow().is_some() {
        ((k + i) % 6) as u64 + 2
    } else if op == Reduction::Avg && dt.size() == 1 {
        1
    } else {
        ((k + i) % 50) as u64 + 2
    }
}

/// Element k of rank `rank`'s input to reduction `op` in iteration i, on
/// `np` ranks. A sum keeps OSU's pattern, the same on every rank. The
/// other operations give ranks values of their own, so that a result
/// taken from one rank, or made by another operation, reads differently:
/// with w the base value and the element's owner rank (k + i) mod np,
/// prod: the owner w, the others 1; max: the owner w, the others w - 1;
/// min: the owner w, the others w + 1; avg: w + 1 on even ranks, w - 1 on
/// the odd rank after each (w on a last rank without a pair), which sum
/// to np * w.
///
/// A narrow float has too few digits for a sum over many ranks, in
/// whatever order NCCL adds: its sum and average take w from the owner
/// and the rank after it and 0 from the others (every partial sum, 0, w
/// or 2w, is exact), as nccl-tests lets at most two ranks contribute to
/// an average of floats. A pre-multiplied sum (each rank's input times
/// [`Reduction::pre_mul_scalar`], 1 or 2) takes the sum's inputs.
pub(crate) fn reduction_input(op: Reduction, dt: Datatype, k: usize, i: usize, rank: usize, np: usize) -> u64 {
    let w = base_value(dt, op, k, i);
    let np = np.max(1);
    let owner = rank == (k + i) % np;
    let after_owner = np > 1 && rank == (k + i + 1) % np;
    match op {
        Reduction::Sum | Reduction::Avg | Reduction::MulSum if dt.narrow().is_some() => {
            if owner || after_owner {
                w
            } else {
                0
            }
        }
        Reduction::Sum | Reduction::MulSum => reduction_value(k, i),
        Reduction::Prod if owner => w,
        Reduction::Prod => 1,
        Reduction::Max | Reduction::Min if owner => w,
        Reduction::Max => w - 1,
        Reduction::Min => w + 1,
        Reduction::Avg if rank % 2 == 0 && rank + 1 < np => w + 1,
        Reduction::Avg if rank % 2 == 1 => w - 1,
        Reduction::Avg => w,
    }
}

/// Element k of the result of reduction `op` over `np` ranks' inputs
/// ([`reduction_input`]) in iteration i, before the division by
/// [`result_encoding`]'s divisor where it has one.
pub(crate) fn reduced_value(op: Reduction, dt: Datatype, k: usize, i: usize, np: usize) -> u64 {
    let contributors = np.clamp(1, 2) as u64;
    match op {
        Reduction::Sum | Reduction::Avg if dt.narrow().is_some() => base_value(dt, op, k, i) * contributors,
        Reduction::MulSum if dt.narrow().is_some() => {
            let np = np.max(1);
            let owner = (k + i) % np;
            let after = if np > 1 { Reduction::pre_mul_scalar((owner + 1) % np) } else { 0 };
            base_value(dt, op, k, i) * (Reduction::pre_mul_scalar(owner) + after)
        }
        Reduction::Sum => reduction_value(k, i) * np as u64,
        Reduction::MulSum => reduction_value(k, i).wrapping_mul(Reduction::pre_mul_total(np)),
        _ => base_value(dt, op, k, i),
    }
}

/// Writes the reduction input of iteration `i` (into the receive buffer
/// when in place) and clears the output otherwise.
pub(crate) fn fill_reduction(send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
    let input = if job.in_place { &mut *recv } else { &mut *send };
    let (op, dt) = (job.reduction, case.datatype);
    write_as(encoding(op, dt), input, dt, 0..case.count, |k| reduction_input(op, dt, k, i, job.rank, job.np));
    if !job.in_place {
        fill_zero(recv, case.datatype, case.count);
    }
}

/// Checks `len` result elements at the start of the receive buffer: they
/// are the reductions over ranks of input elements `first..first + len`.
pub(crate) fn check_reduction(
    recv: &[u8],
    case: &SizeCase,
    job: &Ranks,
    i: usize,
    first: usize,
    len: usize,
) -> Option<Mismatch> {
    let (op, dt) = (job.reduction, case.datatype);
    let enc = result_encoding(op, dt, job.np);
    check_as(enc, recv, dt, 0..len, |l| reduced_value(op, dt, first + l, i, job.np), job.np)
}

/// How reduction `op`'s inputs are written: OSU's multipliers commute
/// with a sum (pre-multiplied or not) alone, and a narrow float has no
/// room for them.
fn encoding(op: Reduction, dt: Datatype) -> Encoding {
    if matches!(op, Reduction::Sum | Reduction::MulSum) && dt.narrow().is_none() {
        Encoding::Osu
    } else {
        Encoding::Exact
    }
}

/// How its result is: as the inputs, but a narrow float's average is its
/// sum divided by the ranks, rounded.
fn result_encoding(op: Reduction, dt: Datatype, np: usize) -> Encoding {
    if op == Reduction::Avg && dt.narrow().is_some() {
        Encoding::Over(np.max(1) as u64)
    } else {
        encoding(op, dt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots() {
        let fixed = Ranks {
            rank: 0,
            np: 4,
            in_place: false,
            root: RootRank::Fixed(2),
            reduction: Reduction::Sum,
            rank_time: RankTime::Avg,
            gpus_per_thread: 1,
            result_at_own_block: false,
            nccl_data: false,
        };
        assert_eq!((fixed.root_of(0), fixed.root_of(7)), (2, 2));
        let rot = Ranks { root: RootRank::Rotate, ..fixed };
        assert_eq!((rot.root_of(0), rot.root_of(5), rot.root_of(7)), (0, 1, 3));
    }

    #[test]
    fn reduction_values() {
        assert_eq!(reduction_value(0, 0), 1);
        assert_eq!(reduction_value(99, 1), 200);
        assert_eq!(reduction_value(100, 2), 3);
    }

    /// Each operation's inputs reduce to the value the check expects, in
    /// exact arithmetic, at one to five ranks; the operations other than
    /// sum give ranks different inputs, the result being one rank's input
    /// (prod, max, min) or only that of a last rank without a pair (avg);
    /// and the inputs (an average of chars: its sum) fit a char. A narrow
    /// float's sum and average come from two ranks at most, and its
    /// average is checked as that sum over the ranks.
    #[test]
    fn every_operation_s_inputs_reduce_to_the_expected_value() {
        let ops = [Reduction::Sum, Reduction::Prod, Reduction::Max, Reduction::Min, Reduction::Avg, Reduction::MulSum];
        for (op, dt, np, k, i) in reduction_cases(&ops) {
            let inputs: Vec<u64> = (0..np).map(|r| reduction_input(op, dt, k, i, r, np)).collect();
            let narrow = dt.narrow().is_some();
            let exact = match op {
                Reduction::Sum => inputs.iter().sum(),
                Reduction::MulSum => inputs.iter().enumerate().map(|(r, v)| v * Reduction::pre_mul_scalar(r)).sum(),
                Reduction::Prod => inputs.iter().product(),
                Reduction::Max => *inputs.iter().max().unwrap(),
                Reduction::Min => *inputs.iter().min().unwrap(),
                Reduction::Avg if narrow => inputs.iter().sum(),
                Reduction::Avg => inputs.iter().sum::<u64>() / np as u64,
            };
            assert_eq!(exact, reduced_value(op, dt, k, i, np), "{op:?} {dt:?} np {np} k {k} i {i}: {inputs:?}");
            if op == Reduction::MulSum && !narrow {
                // The sum's inputs, checked against their weighted sum above.
                continue;
            }
            let want = if narrow && matches!(op, Reduction::Sum | Reduction::Avg | Reduction::MulSum) {
                assert!(inputs.iter().filter(|&&v| v != 0).count() <= 2, "{inputs:?}");
                assert_eq!(
                    result_encoding(op, dt, np),
                    if op == Reduction::Avg { Encoding::Over(np as u64) } else { Encoding::Exact }
                );
                continue;
            } else if op == Reduction::Avg {
                np % 2
            } else {
                1
            };
            if op == Reduction::Avg {
                assert_eq!(inputs.iter().sum::<u64>() % np as u64, 0, "{inputs:?}");
            }
            if op != Reduction::Sum && np > 1 {
                // prod, max, min: only the owner holds the result; avg: only
                // a last rank without a pair.
                let holding = inputs.iter().filter(|&&v| v == exact).count();
                assert_eq!(holding, want, "{op:?} np {np}: {inputs:?}");
            }
            let fits_a_char = matches!(op, Reduction::Sum | Reduction::MulSum) || inputs.iter().all(|&v| v <= 127);
            assert!(fits_a_char, "{op:?} {dt:?}: {inputs:?}");
            if op == Reduction::Avg && dt.size() == 1 {
                assert!(inputs.iter().sum::<u64>() <= 127, "{inputs:?}");
            }
        }
    }

    /// In a narrow float every input, every partial result in any order,
    /// and the result are exact, so a check needs no tolerance but an
    /// average's rounding.
    #[test]
    fn a_narrow_float_s_reductions_are_exact_in_it() {
        let ops = [Reduction::Sum, Reduction::Prod, Reduction::Max, Reduction::Min, Reduction::Avg, Reduction::MulSum];
        for (op, dt, np, k, i) in reduction_cases(&ops) {
            let Some(f) = dt.narrow() else { continue };
            let inputs: Vec<u64> = (0..np).map(|r| reduction_input(op, dt, k, i, r, np)).collect();
            let mut partial = if op == Reduction::Prod { 1 } else { 0 };
            for (r, &v) in inputs.iter().enumerate() {
                assert_eq!(f.round(v as f64), v as f64, "{dt:?} {op:?} input {v}");
                partial = match op {
                    Reduction::Prod => partial * v,
                    Reduction::Max | Reduction::Min => v,
                    Reduction::MulSum => partial + v * Reduction::pre_mul_scalar(r),
                    _ => partial + v,
                };
                assert_eq!(f.round(partial as f64), partial as f64, "{dt:?} {op:?} {inputs:?}");
            }
        }
    }

    /// Every (operation, type, ranks, element, iteration) the test above
    /// checks.
    fn reduction_cases(ops: &[Reduction]) -> Vec<(Reduction, Datatype, usize, usize, usize)> {
        let mut all = Vec::new();
        for &op in ops {
            for dt in Datatype::EVERY {
                for np in 1..=5 {
                    for k in [0, 1, 49, 50, 77] {
                        for i in [0, 1, 3] {
                            all.push((op, dt, np, k, i));
                        }
                    }
                }
            }
        }
        all
    }
}

/// nccl-tests' data end to end on mock ranks: what `-c` in its format
/// writes into the buffers is nccl-tests' inputs, and what arrives is
/// what nccl-tests expects, as its `InitData` lays them out (stated here
/// from nccl-tests, not from the layouts above): a reduction's seed is
/// the repetition, every rank reducing; an all-to-all's is 33 times the
/// repetition plus the sending rank, block d of the sender's stream
/// going to rank d at the receiver's own indices; a gather's one stream,
/// rank r's block at indices r * count.
#[cfg(test)]
mod nccl_data_tests {
    use super::*;
    use crate::backend::mock::{self, Model};
    use crate::bench::engine::plan::Plan;
    use crate::bench::Calls;
    use crate::cli::test_options;
    use crate::datatype::verifiable::{input, output, tolerance};

    /// Rank by rank: its send buffer after the fill, its receive buffer
    /// after one call of `C`, and the check's verdict, for `count`
    /// elements of `dt` with operation `op`, iteration `i`.
    fn one_call<C: Collective + Call<mock::MockTransport>>(
        np: usize,
        dt: Datatype,
        op: Reduction,
        count: usize,
        in_place: bool,
        i: usize,
    ) -> Vec<(Vec<u8>, Vec<u8>, Option<Mismatch>)> {
        mock::run(np, Model::default(), |t| {
            let size = count * dt.size();
            let m = format!("{size}:{size}");
            let mut opts = test_options(C::SPEC, &["--backend", "nccl", "--format", "nccl-tests", "-m", &m]);
            // As nccl-tests' in-place pass sets it.
            opts.in_place = in_place;
            opts.reduction = op;
            let plan = Plan::for_test(C::SPEC, &opts, np);
            let s = Setup::new(t, &plan);
            let c = C::new(np);
            let mut bufs = CollBuffers::new(&s, &c).expect("buffers");
            let job = Ranks::new(&s);
            assert!(job.nccl_data);
            let case = SizeCase { datatype: dt, size, count, iterations: 1, warmup: 0, window: 1, calls: Calls::ALONE };
            let (sb, rb) = c.buffer_bytes(size, np);
            bufs.fill_validation(t, &c, &case, &job, i);
            let sent = t.memory().read_host(&bufs.send, sb, |b| b.to_vec());
            let CollBuffers { send, recv, .. } = &mut bufs;
            c.call(t, send, recv, &case, &job, i);
            t.complete();
            let got = t.memory().read_host(&bufs.recv, rb, |b| b.to_vec());
            (sent, got, bufs.check(t, &c, &case, &job, i))
        })
    }

    fn element(buf: &[u8], dt: Datatype, k: usize) -> u64 {
        let w = dt.size();
        let mut b = [0u8; 8];
        b[..w].copy_from_slice(&buf[k * w..(k + 1) * w]);
        u64::from_le_bytes(b)
    }

    #[test]
    fn the_buffers_hold_nccl_tests_data() {
        let (i, rep) = (4, 5);
        for (dt, op) in
            [(Datatype::Float, Reduction::Sum), (Datatype::Int, Reduction::Avg), (Datatype::Half, Reduction::Avg)]
        {
            let np = 3;
            for (me, (sent, got, check)) in
                one_call::<allreduce::Allreduce>(np, dt, op, 40, false, i).into_iter().enumerate()
            {
                assert_eq!(check, None, "{dt:?} {op:?}");
                for k in 0..40 {
                    let stream = Stream { seed: rep, rank_n: np, rank_me: me };
                    assert_eq!(element(&sent, dt, k), input(dt, op, stream, k as u64), "{dt:?} {op:?} rank {me} {k}");
                    let want = output(dt, op, np, rep, k as u64);
                    assert!(element(&got, dt, k).abs_diff(want) <= tolerance(dt, op), "{dt:?} {op:?} rank {me} {k}");
                }
            }
        }
        let (np, c, dt) = (3, 8, Datatype::Uint32);
        let own = |r: usize| Stream { seed: 33 * rep + r as u64, rank_n: 1, rank_me: 0 };
        for (me, (sent, got, check)) in
            one_call::<alltoall::Alltoall>(np, dt, Reduction::Sum, c, false, i).into_iter().enumerate()
        {
            assert_eq!(check, None);
            for k in 0..c * np {
                assert_eq!(element(&sent, dt, k), input(dt, Reduction::Sum, own(me), k as u64), "rank {me} {k}");
                let (from, at) = (k / c, me * c + k % c);
                assert_eq!(element(&got, dt, k), input(dt, Reduction::Sum, own(from), at as u64), "rank {me} {k}");
            }
        }
        let shared = Stream { seed: rep, rank_n: 1, rank_me: 0 };
        for in_place in [false, true] {
            let calls = one_call::<gather::Gather>(np, dt, Reduction::Sum, c, in_place, i);
            for (me, (sent, got, check)) in calls.into_iter().enumerate() {
                assert_eq!(check, None, "in place {in_place}");
                // The root (iteration 4 of a fixed root 0) in place sends
                // from its receive buffer.
                if !(in_place && me == 0) {
                    for k in 0..c {
                        assert_eq!(element(&sent, dt, k), input(dt, Reduction::Sum, shared, (me * c + k) as u64));
                    }
                }
                for k in 0..c * np {
                    let want = if me == 0 { input(dt, Reduction::Sum, shared, k as u64) } else { 0 };
                    assert_eq!(element(&got, dt, k), want, "rank {me} in place {in_place} {k}");
                }
            }
        }
    }

    /// A changed element of a checked result is counted.
    #[test]
    fn a_changed_result_is_caught() {
        let calls = one_call::<allreduce::Allreduce>(2, Datatype::Int, Reduction::Sum, 16, false, 0);
        let (_, mut got, _) = calls.into_iter().next().expect("rank 0");
        let v = Verifiable::reducing(
            Reduction::Sum,
            Vec::new(),
            false,
            0..16,
            vec![reduced(0, 16, 0, Stream { seed: 1, rank_n: 2, rank_me: 0 })],
        );
        assert_eq!(v.check(&got, Datatype::Int), None);
        got[4 * 7] ^= 1;
        assert_eq!(v.check(&got, Datatype::Int).map(|m| (m.index, m.count)), Some((7, 1)));
    }
}
