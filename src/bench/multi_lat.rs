//! osu_multi_lat: np/2 concurrent ping-pongs, rank i with rank i + np/2,
//! with a barrier before every exchange. Latency is the senders' average
//! round trip, halved.

use super::latency::{PingPong, PingPongBench};
use super::Setup;
use crate::buffer::AllocError;

pub fn new(s: &Setup) -> Result<PingPongBench, AllocError> {
    let rank = s.mpi.rank() as usize;
    let half = s.mpi.size() as usize / 2;
    let (initiator, peer) = if rank < half { (true, rank + half) } else { (false, rank - half) };
    let pp = PingPong::new(initiator, peer as i32, s.opts.max_size, s.opts.buffers)?;
    Ok(PingPongBench::new(pp, half, true))
}
