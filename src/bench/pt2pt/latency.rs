//! osu_latency: ping-pong between ranks 0 and 1. Rank 0 times each round
//! trip; latency is half of it. The ping-pong kernel here also serves
//! osu_multi_lat.

use crate::backend::{Control, Envelope, Memory, ReduceOp, Transport};
use crate::bench::pt2pt::posting::{Direct, Posting};
use crate::bench::{Kernel, Metric, Pt2ptBench, Setup, SizeCase};
use crate::buffer::{check_pattern, fill_pattern, fill_zero, AllocError, Mismatch, RECV_FILL, SEND_FILL};
use crate::options::BufferMode;
use crate::spec::{BenchSpec, MetricKind, ProcRule, LAT_ITERS, PT2PT_MAX};
use crate::stats::Samples;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_latency",
    title: "OSU MPI Latency Test",
    letters: "hvmxibcuGDPTIz",
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Latency,
    defaults: LAT_ITERS,
    large_switch: true,
    max_size: PT2PT_MAX,
    from_zero: true,
    accel_slot: true,
    ..BenchSpec::DEFAULT
};

const TAG: i32 = 1;

/// Buffers and role of one side of a ping-pong, posting its messages as
/// `P` says; shared with osu_multi_lat and osu_latency_persistent.
pub(crate) struct PingPong<T: Transport, P = Direct> {
    /// Whether this rank starts each exchange and keeps time.
    pub initiator: bool,
    pub peer: usize,
    send: T::Buf,
    recv: T::Buf,
    fresh_per_size: bool,
    /// The bound send (slot 0) and receive (slot 1) of [`Bound`](crate::bench::pt2pt::posting::Bound).
    reqs: T::Requests,
    posting: std::marker::PhantomData<P>,
}

/// The send slot and the receive slot of a ping-pong's requests.
const SEND: usize = 0;
const RECV: usize = 1;

impl<T: Transport, P: Posting<T>> PingPong<T, P> {
    pub fn new(t: &T, initiator: bool, peer: usize, max_size: usize, mode: BufferMode) -> Result<Self, AllocError> {
        let fresh_per_size = mode == BufferMode::Multiple;
        let n = if fresh_per_size { 1 } else { max_size };
        let (send, recv, reqs) = (t.memory().alloc(n)?, t.memory().alloc(n)?, t.requests(2));
        Ok(PingPong { initiator, peer, send, recv, fresh_per_size, reqs, posting: std::marker::PhantomData })
    }

    pub(crate) fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        if self.fresh_per_size {
            self.send = t.memory().alloc(case.size)?;
            self.recv = t.memory().alloc(case.size)?;
        }
        t.memory().write_host(&mut self.send, case.size, |s| s.fill(SEND_FILL));
        t.memory().write_host(&mut self.recv, case.size, |s| s.fill(RECV_FILL));
        let env = self.envelope(case);
        P::bind_send(t, &self.send, env, &mut self.reqs, SEND);
        P::bind_recv(t, &mut self.recv, env, &mut self.reqs, RECV);
        Ok(())
    }

    /// After a size: frees what `prepare` bound.
    pub(crate) fn end_size(&mut self, t: &T) {
        P::unbind(t, &mut self.reqs, 0, 2);
    }

    #[inline(always)]
    fn envelope(&self, case: &SizeCase) -> Envelope {
        Envelope { count: case.count, datatype: case.datatype, peer: self.peer, tag: TAG }
    }

    pub(crate) fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        let bytes = case.count * case.datatype.size();
        t.memory().write_host(&mut self.send, bytes, |s| fill_pattern(s, case.datatype, case.count, case.size, i));
        t.memory().write_host(&mut self.recv, bytes, |s| fill_zero(s, case.datatype, case.count));
    }

    /// One exchange; the initiator returns the round-trip time.
    #[inline(always)]
    pub(crate) fn exchange(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        let env = self.envelope(case);
        if self.initiator {
            let t0 = t.now();
            P::send(t, &self.send, env, &mut self.reqs, SEND);
            P::recv(t, &mut self.recv, env, &mut self.reqs, RECV);
            t.complete();
            Some(t.now() - t0)
        } else {
            P::recv(t, &mut self.recv, env, &mut self.reqs, RECV);
            P::send(t, &self.send, env, &mut self.reqs, SEND);
            None
        }
    }

    /// Both sides send the same pattern, so both can check what came back.
    pub fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch> {
        let bytes = case.count * case.datatype.size();
        t.memory().read_host(&self.recv, bytes, |s| check_pattern(s, case.datatype, case.count, case.size, i))
    }
}

/// Round-trip seconds to one-way microseconds.
pub(crate) fn one_way_us(round_trip_secs: f64) -> f64 {
    round_trip_secs * 1e6 / 2.0
}

/// A ping-pong benchmark: osu_latency (one pair) or osu_multi_lat (np/2
/// pairs, with a barrier before every exchange).
pub(crate) struct PingPongBench<T: Transport, P = Direct> {
    pp: PingPong<T, P>,
    pairs: usize,
    barrier_each: bool,
}

impl<T: Transport, P: Posting<T>> PingPongBench<T, P> {
    /// Ranks 0 and 1, rank 0 keeping time (osu_latency and its persistent
    /// form).
    pub fn pair(s: &Setup<T>) -> Result<Self, AllocError> {
        let rank = s.rank();
        let pp = PingPong::new(s.t, rank == 0, 1 - rank, s.max_size, s.opts.buffers)?;
        Ok(PingPongBench::new(pp, 1, false))
    }

    pub fn new(pp: PingPong<T, P>, pairs: usize, barrier_each: bool) -> Self {
        PingPongBench { pp, pairs, barrier_each }
    }
}

/// osu_latency: ranks 0 and 1, rank 0 keeps time.
pub struct Latency;

crate::bench::point_to_point_bench!(Latency, PingPongBench);

impl Pt2ptBench for Latency {
    type P2pKernel<T: Transport> = PingPongBench<T>;

    fn p2p_kernel<T: Transport>(s: &Setup<T>) -> Result<PingPongBench<T>, AllocError> {
        PingPongBench::pair(s)
    }
}

impl<T: Transport, P: Posting<T>> Kernel<T> for PingPongBench<T, P> {
    fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        self.pp.prepare(t, case)
    }

    fn end_size(&mut self, t: &T, _case: &SizeCase) {
        self.pp.end_size(t);
    }

    fn begin_iteration(&mut self, t: &T, case: &SizeCase, i: usize, validation: Option<usize>) {
        if let Some(reps) = validation {
            self.pp.fill_validation(t, case, i);
            // With a barrier in every step, that one synchronises.
            if !self.barrier_each {
                t.world().barrier();
            }
            for _ in 0..reps {
                self.step(t, case);
            }
        }
    }

    fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        self.pp.fill_validation(t, case, i)
    }

    #[inline(always)]
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        if self.barrier_each {
            t.world().barrier();
        }
        self.pp.exchange(t, case)
    }

    fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.pp.check(t, case, i)
    }

    fn per_iteration(&self, _case: &SizeCase, secs: f64) -> f64 {
        one_way_us(secs)
    }

    fn iteration_time_scale(&self) -> f64 {
        0.5
    }

    /// One pair: rank 0's own total. Several: the senders' average total.
    fn metric(&mut self, t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let total_secs = samples.total();
        let total = if self.pairs == 1 && !self.barrier_each {
            total_secs
        } else {
            let mine = if self.pp.initiator { total_secs } else { 0.0 };
            t.world().reduce_f64(mine, ReduceOp::Sum) / self.pairs as f64
        };
        Metric { value: total * 1e6 / (2.0 * case.iterations as f64), ..Metric::default() }
    }
}
