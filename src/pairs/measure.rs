//! One round on one rank: an optional small-message ping-pong with its
//! partner, then bandwidth, with every pair of the round running at once.
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
use super::transport::PairTransport;
use crate::backend::mpi::Mpi;
use crate::watchdog::{Progress, Step};

/// Counts for one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundPlan {
    pub bytes: usize,
    pub window: usize,
    pub iterations: usize,
    pub warmup: usize,
    /// Round trips timed for latency (0: no latency test).
    pub latency_iterations: usize,
    pub latency_warmup: usize,
}

/// What one rank measured in a round.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RankResult {
    /// Bytes per second received from `flow.from`.
    pub recv_bw: Option<f64>,
    /// Half the mean round trip with the partner, in seconds (on the
    /// lower rank of the pair, which starts each round trip).
    pub latency: Option<f64>,
}

/// Runs the round's share of this rank. Every rank calls this for every
/// round, busy or idle (it holds barriers).
pub fn run_round<T: PairTransport>(
    mpi: &Mpi,
    t: &mut T,
    me: usize,
    flow: Flow,
    plan: &RoundPlan,
    progress: &Progress,
) -> RankResult {
    let mut out = RankResult::default();
    if plan.latency_iterations > 0 {
        progress.enter(Step::Warmup, None, plan.bytes);
        mpi.barrier();
        if let Some(p) = flow.partner() {
            let initiator = me < p;
            for _ in 0..plan.latency_warmup {
                t.round_trip(p, initiator);
            }
            progress.set_step(Step::Timed);
            let t0 = mpi.wtime();
            for _ in 0..plan.latency_iterations {
                t.round_trip(p, initiator);
            }
            let dt = mpi.wtime() - t0;
            if initiator {
                out.latency = Some(dt / (2.0 * plan.latency_iterations as f64));
            }
        }
    }
    progress.enter(Step::Warmup, None, plan.bytes);
    if plan.warmup > 0 {
        streams(mpi, t, flow, plan.warmup, progress);
    }
    mpi.barrier();
    progress.set_step(Step::Timed);
    let t0 = mpi.wtime();
    let end = streams(mpi, t, flow, plan.iterations, progress);
    if let Some(end) = end {
        let bytes = (plan.bytes * plan.window * plan.iterations) as f64;
        out.recv_bw = Some(bytes / (end - t0).max(mpi.wtick()));
    }
    progress.set_step(Step::Results);
    out
}

/// Runs `batches` receive batches from `flow.from` and send batches to
/// `flow.to` side by side; returns when the last receive batch completed.
fn streams<T: PairTransport>(mpi: &Mpi, t: &mut T, flow: Flow, batches: usize, progress: &Progress) -> Option<f64> {
    let mut recvs_left = if flow.from.is_some() { batches } else { 0 };
    let mut sends_left = if flow.to.is_some() { batches } else { 0 };
    let mut recv_end = None;
    if let (Some(src), true) = (flow.from, recvs_left > 0) {
        t.start_recvs(src);
    }
    if let (Some(dst), true) = (flow.to, sends_left > 0) {
        t.start_sends(dst);
    }
    while recvs_left > 0 || sends_left > 0 {
        if recvs_left > 0 && t.recvs_done() {
            recvs_left -= 1;
            if recvs_left == 0 {
                recv_end = Some(mpi.wtime());
            } else if let Some(src) = flow.from {
                t.start_recvs(src);
            }
            progress.iteration(batches - recvs_left);
        }
        if sends_left > 0 && t.sends_done() {
            sends_left -= 1;
            if let (Some(dst), true) = (flow.to, sends_left > 0) {
                t.start_sends(dst);
            }
        }
    }
    recv_end
}
