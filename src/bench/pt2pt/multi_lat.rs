//! osu_multi_lat: np/2 concurrent ping-pongs, rank i with rank i + np/2,
//! with a barrier before every exchange. Latency is the senders' average
//! round trip, halved.

use crate::backend::Transport;
use crate::bench::pt2pt::latency::{PingPong, PingPongBench};
use crate::bench::{Pt2ptBench, Setup};
use crate::buffer::AllocError;
use crate::spec::{BenchSpec, ProcRule};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_multi_lat",
    title: "OSU MPI Multi Latency Test",
    procs: ProcRule::Pairs,
    accel_slot: false,
    one_sided: None,
    ..crate::bench::pt2pt::latency::SPEC
};

pub struct MultiLat;

crate::bench::point_to_point_bench!(MultiLat, PingPongBench);

impl Pt2ptBench for MultiLat {
    type P2pKernel<T: Transport> = PingPongBench<T>;

    fn p2p_kernel<T: Transport>(s: &Setup<T>) -> Result<PingPongBench<T>, AllocError> {
        let (rank, half) = (s.rank(), s.np() / 2);
        let (initiator, peer) = if rank < half { (true, rank + half) } else { (false, rank - half) };
        let pp = PingPong::new(s.t, initiator, peer, s.max_size, s.opts.buffers)?;
        Ok(PingPongBench::new(pp, half, true))
    }
}
