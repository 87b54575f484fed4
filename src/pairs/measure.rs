//! One round on one rank: an optional small-message ping-pong with its
//! partner, then bandwidth, with every pair of the round running at once,
//! over any transport.
//!
//! Bandwidth timing: each rank runs two independent streams, batches of
//! `window` receives from its source and batches of `window` sends to its
//! destination, polling both so that neither direction waits for the
//! other. After warm-up batches and a barrier (so all pairs start
//! together), the receiver times its own stream: the bandwidth of
//! source -> me is the bytes it received divided by the time from the
//! start to the completion of its last receive batch. Both directions of a
//! pair are thus measured concurrently and reported separately.

use super::schedule::Flow;
use crate::backend::buffer_set::BufferSet;
use crate::backend::{Control, Envelope, Memory, Transport};
use crate::buffer::AllocError;
use crate::datatype::Datatype;
use crate::job::watchdog::{Progress, Step};

/// Counts for one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RoundPlan {
    pub bytes: usize,
    pub window: usize,
    pub iterations: usize,
    pub warmup: usize,
    /// Round trips timed for latency (0: no latency test).
    pub latency_iterations: usize,
    pub latency_warmup: usize,
    /// Bytes per latency message.
    pub latency_bytes: usize,
}

/// What one rank measured in a round.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RankResult {
    /// Bytes per second received from `flow.from`.
    pub recv_bw: Option<f64>,
    /// Half the mean round trip with the partner, in seconds (on the
    /// lower rank of the pair, which starts each round trip).
    pub latency: Option<f64>,
}

/// Message tags: bandwidth traffic and latency traffic never match each
/// other.
const TAG_BW: i32 = 71;
const TAG_LAT: i32 = 72;

/// The buffers and requests of one rank, sized once for every round. One
/// send buffer and one receive buffer serve every message of a batch (as
/// OSU's default `-b single`), so memory stays at two messages per rank
/// whatever the window.
pub(crate) struct PairBuffers<T: Transport> {
    plan: RoundPlan,
    send: BufferSet<T::Buf>,
    recv: BufferSet<T::Buf>,
    ping: T::Buf,
    send_reqs: T::Requests,
    recv_reqs: T::Requests,
}

impl<T: Transport> PairBuffers<T> {
    pub fn new(t: &T, plan: RoundPlan) -> Result<Self, AllocError> {
        Ok(PairBuffers {
            plan,
            send: BufferSet::new(t, plan.bytes, plan.window, false)?,
            recv: BufferSet::new(t, plan.bytes, plan.window, false)?,
            ping: t.memory().alloc(plan.latency_bytes.max(1))?,
            send_reqs: t.requests(plan.window),
            recv_reqs: t.requests(plan.window),
        })
    }

    fn envelope(&self, peer: usize) -> Envelope {
        Envelope { count: self.plan.bytes, datatype: Datatype::Char, peer, tag: TAG_BW }
    }

    fn start_recvs(&mut self, t: &T, peer: usize) {
        let env = self.envelope(peer);
        t.irecv_window(&mut self.recv, env, &mut self.recv_reqs, 0);
    }

    fn start_sends(&mut self, t: &T, peer: usize) {
        let env = self.envelope(peer);
        t.isend_window(&self.send, env, &mut self.send_reqs, 0);
    }

    fn recvs_done(&mut self, t: &T) -> bool {
        t.testall(&mut self.recv_reqs, 0, self.plan.window)
    }

    fn sends_done(&mut self, t: &T) -> bool {
        t.testall(&mut self.send_reqs, 0, self.plan.window)
    }

    /// One round trip of a latency message with `peer`; the initiator
    /// sends first, the other side answers.
    fn round_trip(&mut self, t: &T, peer: usize, initiator: bool) {
        let env = Envelope { count: self.plan.latency_bytes, datatype: Datatype::Char, peer, tag: TAG_LAT };
        if initiator {
            t.send(&self.ping, env);
            t.recv(&mut self.ping, env);
        } else {
            t.recv(&mut self.ping, env);
            t.send(&self.ping, env);
        }
    }
}

/// Runs the round's share of this rank. Every rank calls this for every
/// round, busy or idle (it holds barriers).
pub(crate) fn run_round<T: Transport>(
    t: &T,
    b: &mut PairBuffers<T>,
    me: usize,
    flow: Flow,
    progress: &Progress,
) -> RankResult {
    let plan = b.plan;
    let mut out = RankResult::default();
    if plan.latency_iterations > 0 {
        progress.enter(Step::Warmup, None, plan.bytes);
        t.world().barrier();
        if let Some(p) = flow.partner() {
            let initiator = me < p;
            // Each round trip is a move the --timeout watchdog sees (one
            // relaxed store, as the OSU loops make per iteration), so a
            // long latency phase is progress, not a hang.
            for i in 0..plan.latency_warmup {
                b.round_trip(t, p, initiator);
                progress.iteration(i);
            }
            progress.enter(Step::Timed, None, plan.bytes);
            let t0 = t.now();
            for i in 0..plan.latency_iterations {
                b.round_trip(t, p, initiator);
                progress.iteration(i);
            }
            t.complete();
            let dt = t.now() - t0;
            if initiator {
                out.latency = Some(dt / (2.0 * plan.latency_iterations as f64));
            }
        }
    }
    progress.enter(Step::Warmup, None, plan.bytes);
    if plan.warmup > 0 {
        streams(t, b, flow, plan.warmup, progress);
    }
    t.world().barrier();
    progress.set_step(Step::Timed);
    let t0 = t.now();
    let end = streams(t, b, flow, plan.iterations, progress);
    if let Some(end) = end {
        let bytes = (plan.bytes * plan.window * plan.iterations) as f64;
        out.recv_bw = Some(bytes / (end - t0).max(t.tick()));
    }
    progress.set_step(Step::Results);
    out
}

/// Runs `batches` receive batches from `flow.from` and send batches to
/// `flow.to` side by side; returns when the last receive batch completed.
fn streams<T: Transport>(
    t: &T,
    b: &mut PairBuffers<T>,
    flow: Flow,
    batches: usize,
    progress: &Progress,
) -> Option<f64> {
    let mut recvs_left = if flow.from.is_some() { batches } else { 0 };
    let mut sends_left = if flow.to.is_some() { batches } else { 0 };
    let mut recv_end = None;
    if let (Some(src), true) = (flow.from, recvs_left > 0) {
        b.start_recvs(t, src);
    }
    if let (Some(dst), true) = (flow.to, sends_left > 0) {
        b.start_sends(t, dst);
    }
    while recvs_left > 0 || sends_left > 0 {
        if recvs_left > 0 && b.recvs_done(t) {
            recvs_left -= 1;
            if recvs_left == 0 {
                t.complete();
                recv_end = Some(t.now());
            } else if let Some(src) = flow.from {
                b.start_recvs(t, src);
            }
            progress.iteration(batches - recvs_left);
        }
        if sends_left > 0 && b.sends_done(t) {
            sends_left -= 1;
            if let (Some(dst), true) = (flow.to, sends_left > 0) {
                b.start_sends(t, dst);
            }
        }
    }
    recv_end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::mock::{self, Model};

    /// Two ranks exchange both ways at once: each direction's bandwidth is
    /// the model's link rate, and the latency is the model's one-way time.
    #[test]
    fn both_directions_at_the_link_rate_on_mock_ranks() {
        let m = Model { latency_s: 1e-6, overhead_s: 0.0, bytes_per_s: 1e9, jitter_s: 0.0, modes: None };
        let plan = RoundPlan {
            bytes: 1 << 20,
            window: 4,
            iterations: 5,
            warmup: 1,
            latency_iterations: 10,
            latency_warmup: 2,
            latency_bytes: 8,
        };
        let out = mock::run(2, m, |t| {
            let me = t.world().rank();
            let mut b = PairBuffers::new(t, plan).unwrap();
            let flow = Flow { from: Some(1 - me), to: Some(1 - me) };
            run_round(t, &mut b, me, flow, &Progress::default())
        });
        for r in &out {
            // Polling may leave the link idle for up to one latency per
            // batch, depending on thread timing (see backend::mock).
            let bw = r.recv_bw.unwrap();
            assert!((bw - 1e9).abs() / 1e9 < 0.01, "{bw}");
        }
        let lat = out[0].latency.unwrap();
        assert!((lat - m.one_way(8)).abs() < 1e-15, "{lat}");
        assert_eq!(out[1].latency, None);
    }
}
