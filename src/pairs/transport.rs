//! What a pair measurement needs from a transport: buffers sized for a
//! batch, non-blocking batches of sends and receives to one peer that can
//! be polled, and a small-message round trip. The host MPI implementation
//! is here; device buffers (CUDA) and NCCL send/recv implement the same
//! trait, so the measurement loop does not change when they arrive.

use thiserror::Error;

use crate::backend::mpi::{Envelope, Mpi, Requests};
use crate::buffer::{AllocError, BufferSet};
use crate::datatype::Datatype;

#[derive(Debug, Error)]
pub enum TransportError {
    #[error(transparent)]
    Alloc(#[from] AllocError),
}

/// The shape of the traffic a transport must be ready for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferPlan {
    /// Bytes per bandwidth message.
    pub bytes: usize,
    /// Messages per batch (in flight at once, per direction).
    pub window: usize,
    /// Bytes per latency message (0: no latency test).
    pub latency_bytes: usize,
}

/// A point-to-point transport between ranks of the job.
pub trait PairTransport {
    /// Name recorded with the results, e.g. "mpi-host".
    fn name(&self) -> &'static str;
    /// Allocates whatever the plan needs; called once before any round.
    fn prepare(&mut self, plan: BufferPlan) -> Result<(), TransportError>;
    /// Starts a batch of `window` receives from `peer`.
    fn start_recvs(&mut self, peer: usize);
    /// Starts a batch of `window` sends to `peer`.
    fn start_sends(&mut self, peer: usize);
    /// Whether the receive batch started last is complete. Never blocks.
    fn recvs_done(&mut self) -> bool;
    /// Whether the send batch started last is complete. Never blocks.
    fn sends_done(&mut self) -> bool;
    /// One round trip of a latency message with `peer`; the initiator
    /// sends first, the other side answers.
    fn round_trip(&mut self, peer: usize, initiator: bool);
}

/// Message tags: bandwidth traffic and latency traffic never match each
/// other.
const TAG_BW: i32 = 71;
const TAG_LAT: i32 = 72;

/// Host memory over MPI point-to-point. One page-aligned send buffer and
/// one receive buffer serve every message of a batch (as OSU's default
/// `-b single`), so memory stays at two messages per rank whatever the
/// window.
pub struct HostMpi<'a> {
    mpi: &'a Mpi,
    plan: BufferPlan,
    send: Option<BufferSet>,
    recv: Option<BufferSet>,
    ping: Option<BufferSet>,
    send_reqs: Requests,
    recv_reqs: Requests,
}

impl<'a> HostMpi<'a> {
    pub fn new(mpi: &'a Mpi) -> HostMpi<'a> {
        HostMpi {
            mpi,
            plan: BufferPlan { bytes: 0, window: 1, latency_bytes: 0 },
            send: None,
            recv: None,
            ping: None,
            send_reqs: Requests::new(1),
            recv_reqs: Requests::new(1),
        }
    }

    fn envelope(&self, peer: usize) -> Envelope {
        Envelope { count: self.plan.bytes, datatype: Datatype::Char, peer: peer as i32, tag: TAG_BW }
    }
}

impl PairTransport for HostMpi<'_> {
    fn name(&self) -> &'static str {
        "mpi-host"
    }

    fn prepare(&mut self, plan: BufferPlan) -> Result<(), TransportError> {
        self.plan = plan;
        self.send = Some(BufferSet::new(plan.bytes, plan.window, false)?);
        self.recv = Some(BufferSet::new(plan.bytes, plan.window, false)?);
        self.ping = Some(BufferSet::new(plan.latency_bytes.max(1), 1, false)?);
        self.send_reqs = Requests::new(plan.window);
        self.recv_reqs = Requests::new(plan.window);
        Ok(())
    }

    fn start_recvs(&mut self, peer: usize) {
        let env = self.envelope(peer);
        if let Some(bufs) = self.recv.as_mut() {
            self.mpi.irecv_window(bufs, env, &mut self.recv_reqs, 0);
        }
    }

    fn start_sends(&mut self, peer: usize) {
        let env = self.envelope(peer);
        if let Some(bufs) = self.send.as_ref() {
            self.mpi.isend_window(bufs, env, &mut self.send_reqs, 0);
        }
    }

    fn recvs_done(&mut self) -> bool {
        self.mpi.testall(&mut self.recv_reqs, 0, self.plan.window)
    }

    fn sends_done(&mut self) -> bool {
        self.mpi.testall(&mut self.send_reqs, 0, self.plan.window)
    }

    fn round_trip(&mut self, peer: usize, initiator: bool) {
        let Some(bufs) = self.ping.as_mut() else { return };
        let (n, p) = (self.plan.latency_bytes, peer as i32);
        let ptr = bufs.slot_mut_ptr(0);
        if initiator {
            self.mpi.send(ptr, n, Datatype::Char, p, TAG_LAT);
            self.mpi.recv(ptr, n, Datatype::Char, p, TAG_LAT);
        } else {
            self.mpi.recv(ptr, n, Datatype::Char, p, TAG_LAT);
            self.mpi.send(ptr, n, Datatype::Char, p, TAG_LAT);
        }
    }
}
