//! osu_latency_mt: ping-pong between ranks 0 and 1, each rank spreading a
//! size's iterations over its threads (`-t S:R`; MPI started with
//! MPI_THREAD_MULTIPLE). Thread k of a rank takes iterations k, k + n,
//! k + 2n ... of its n threads, all of them running at once, each timing
//! its own round trips; OSU's latency is the sum of those times over
//! `2 * iterations / S`.
//!
//! The threads run a whole size at the start of its first iteration (the
//! shared timed loop's steps then hand out each iteration's measured round
//! trip, in order), since one thread cannot time another's iterations.

use crate::backend::{Envelope, Lane, Memory, Threaded, Transport};
use crate::bench::pt2pt::latency::one_way_us;
use crate::bench::{Bench, BenchOn, Kernel, Metric, SizeCase};
use crate::buffer::{check_pattern, fill_pattern, fill_zero, AllocError, Mismatch, RECV_FILL, SEND_FILL};
use crate::spec::{BenchSpec, MetricKind, ProcRule, Workers, LAT_ITERS, PT2PT_MAX};
use crate::stats::Samples;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_latency_mt",
    title: "OSU MPI Multi-threaded Latency Test",
    letters: "hvmxitcuGDTIz",
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Latency,
    defaults: LAT_ITERS,
    large_switch: true,
    // OSU starts at 0 but skips the empty message.
    min_size: 1,
    max_size: PT2PT_MAX,
    workers: Some(Workers::Threads),
    ..BenchSpec::DEFAULT
};

/// Tags with one sender thread, as OSU: pings on one, pongs on the other,
/// so any receiver thread takes any ping.
const PING: i32 = 1;
const PONG: i32 = 2;
/// With several sender threads each iteration has its own tag (OSU uses
/// the iteration number); ours repeat after a multiple of both thread
/// counts below 30000, so that iterations sharing a tag belong to the same
/// two threads, which run them one after the other, and every tag stays
/// under 32767, the least MPI_TAG_UB the standard allows.
const TAG_LIMIT: usize = 30_000;

fn tag_span(senders: usize, receivers: usize) -> usize {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let lcm = senders / gcd(senders, receivers) * receivers;
    lcm * (TAG_LIMIT / lcm)
}

pub struct LatencyMt;

impl Bench for LatencyMt {
    const SPEC: &'static BenchSpec = &SPEC;
    type Needs = crate::bench::needs::Threads;

    /// Every thread has its own pair of buffers.
    fn message_bytes(plan: &crate::bench::engine::plan::Plan, _np: usize) -> u128 {
        let w = plan.opts.workers.expect("osu_latency_mt has -t");
        crate::bench::engine::memory::pt2pt_buffers(plan) * w.sender_threads().max(w.receiver) as u128
    }
}

impl<T: Threaded<Buf = crate::buffer::AlignedBuf>> BenchOn<T> for LatencyMt {
    type Kernel = ThreadedPingPong<T>;

    fn kernel(s: &crate::bench::Setup<T>) -> Result<ThreadedPingPong<T>, AllocError> {
        let w = s.opts.workers.expect("osu_latency_mt has -t");
        let initiator = s.rank() == 0;
        let mine = if initiator { w.sender_threads() } else { w.receiver };
        let bufs = (0..mine)
            .map(|_| Ok((s.t.memory().alloc(s.max_size)?, s.t.memory().alloc(s.max_size)?)))
            .collect::<Result<_, _>>()?;
        Ok(ThreadedPingPong {
            initiator,
            senders: w.sender_threads(),
            receivers: w.receiver,
            bufs,
            done: Vec::new(),
            next: 0,
        })
    }
}

/// One side of the threaded ping-pong.
pub(crate) struct ThreadedPingPong<T: Transport> {
    initiator: bool,
    senders: usize,
    receivers: usize,
    /// Each thread's send and receive buffers.
    bufs: Vec<(T::Buf, T::Buf)>,
    /// The size's iterations as the threads left them: the round trip
    /// (initiator) and the first wrong element received, by iteration.
    done: Vec<(f64, Option<Mismatch>)>,
    /// The iteration the next step hands out.
    next: usize,
}

/// What one thread does for its iterations of a size (`mine`); returns
/// (iteration, round trip, first wrong element) for each.
fn thread_loop<B, L: Lane<B>>(
    lane: &L,
    bufs: &mut (B, B),
    case: &SizeCase,
    mine: std::iter::StepBy<std::ops::Range<usize>>,
    role: (bool, usize, Option<usize>),
    fill: impl Fn(&mut (B, B), usize),
    check: impl Fn(&B, usize) -> Option<Mismatch>,
) -> Vec<(usize, f64, Option<Mismatch>)> {
    let (initiator, span, validation) = role;
    let mut out = Vec::with_capacity(mine.len());
    let peer = usize::from(initiator);
    let env = |tag| Envelope { count: case.count, datatype: case.datatype, peer, tag };
    for i in mine {
        let (ping, pong) = match span {
            0 => (env(PING), env(PONG)),
            span => (env((i % span) as i32 + 1), env((i % span) as i32 + 1)),
        };
        if validation.is_some() {
            fill(bufs, i);
        }
        let mut secs = 0.0;
        for _ in 0..=validation.unwrap_or(0) {
            if initiator {
                let t0 = lane.now();
                lane.send(&bufs.0, ping);
                lane.recv(&mut bufs.1, pong);
                secs = lane.now() - t0;
            } else {
                lane.recv(&mut bufs.1, ping);
                lane.send(&bufs.0, pong);
            }
        }
        let wrong = validation.and_then(|_| check(&bufs.1, i));
        out.push((i, secs, wrong));
    }
    out
}

impl<T: Threaded<Buf = crate::buffer::AlignedBuf>> ThreadedPingPong<T> {
    /// Runs every iteration of a size on this rank's threads at once.
    fn run_size(&mut self, t: &T, case: &SizeCase, validation: Option<usize>) {
        let lane = t.lane();
        let stride = self.bufs.len();
        // One sender thread: OSU's two fixed tags; several: one per iteration.
        let span = if self.senders > 1 { tag_span(self.senders, self.receivers) } else { 0 };
        let role = (self.initiator, span, validation);
        let bytes = case.count * case.datatype.size();
        let total = case.warmup + case.iterations;
        let fill = |b: &mut (T::Buf, T::Buf), i| {
            fill_pattern(&mut b.0.as_mut_slice()[..bytes], case.datatype, case.count, case.size, i);
            fill_zero(&mut b.1.as_mut_slice()[..bytes], case.datatype, case.count);
        };
        let check = |b: &T::Buf, i| check_pattern(&b.as_slice()[..bytes], case.datatype, case.count, case.size, i);
        let results: Vec<_> = std::thread::scope(|sc| {
            let lane = &lane;
            let handles: Vec<_> = self
                .bufs
                .iter_mut()
                .enumerate()
                .map(|(k, b)| {
                    sc.spawn(move || thread_loop(lane, b, case, (k..total).step_by(stride), role, fill, check))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        });
        self.done.clear();
        self.done.resize(case.warmup + case.iterations, (0.0, None));
        for (i, secs, wrong) in results.into_iter().flatten() {
            self.done[i] = (secs, wrong);
        }
    }
}

impl<T: Threaded<Buf = crate::buffer::AlignedBuf>> Kernel<T> for ThreadedPingPong<T> {
    fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        for (send, recv) in &mut self.bufs {
            t.memory().write_host(send, case.size, |s| s.fill(SEND_FILL));
            t.memory().write_host(recv, case.size, |s| s.fill(RECV_FILL));
        }
        self.next = 0;
        Ok(())
    }

    /// The first iteration runs them all (see the file's comment); the
    /// threads fill and check their own buffers.
    fn begin_iteration(&mut self, t: &T, case: &SizeCase, i: usize, validation: Option<usize>) {
        if i == 0 {
            self.run_size(t, case, validation);
        }
    }

    fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        let bytes = case.count * case.datatype.size();
        let n = self.bufs.len();
        let (send, recv) = &mut self.bufs[i % n];
        t.memory().write_host(send, bytes, |s| fill_pattern(s, case.datatype, case.count, case.size, i));
        t.memory().write_host(recv, bytes, |s| fill_zero(s, case.datatype, case.count));
    }

    fn step(&mut self, _t: &T, _case: &SizeCase) -> Option<f64> {
        let i = self.next;
        self.next += 1;
        self.initiator.then(|| self.done[i].0)
    }

    fn check(&self, _t: &T, _case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.done.get(i).and_then(|d| d.1.clone())
    }

    fn per_iteration(&self, _case: &SizeCase, secs: f64) -> f64 {
        one_way_us(secs)
    }

    fn iteration_time_scale(&self) -> f64 {
        0.5
    }

    /// OSU's: every sender thread's round trips added up, over
    /// `2 * iterations / S`.
    fn metric(&mut self, _t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let per_thread = case.iterations as f64 / self.senders as f64;
        Metric { value: samples.total() * 1e6 / (2.0 * per_thread), ..Metric::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_repeat_only_within_a_thread_pair() {
        for (s, r) in [(2, 2), (2, 3), (127, 126), (4, 6), (127, 127)] {
            let span = tag_span(s, r);
            assert!(span > 0 && span <= TAG_LIMIT && span % s == 0 && span % r == 0, "{s}:{r} -> {span}");
        }
        assert_eq!(tag_span(2, 3), 30_000);
        assert_eq!(tag_span(127, 126), 16_002);
    }
}
