//! osu_bw_fan_in: congestion, every child node sends to the parent node: each rank
//! of local index l exchanges windows with the rank of local index l on the
//! other side, all at once (layout, kernel and metric in bench/pt2pt/fan.rs).
//! OSU titles it as osu_bw and prints the same table.

use crate::backend::Transport;
use crate::bench::pt2pt::fan::{Direction, FanKernel};
use crate::bench::{Pt2ptBench, Setup};
use crate::buffer::AllocError;
use crate::spec::{BenchSpec, MetricKind, ProcRule, BW_ITERS, PT2PT_MAX};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_bw_fan_in",
    title: "OSU MPI Bandwidth Test",
    letters: "hvmxiWbGDPTIz",
    procs: ProcRule::Nodes,
    metric: MetricKind::Bandwidth,
    defaults: BW_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: PT2PT_MAX,
    windowed: true,
    accel_slot: true,
    bw_headed_as_latency: true,
    ..BenchSpec::DEFAULT
};

pub struct BwFanIn;

crate::bench::point_to_point_bench!(BwFanIn, FanKernel);

impl Pt2ptBench for BwFanIn {
    type P2pKernel<T: Transport> = FanKernel<T>;

    fn p2p_kernel<T: Transport>(s: &Setup<T>) -> Result<FanKernel<T>, AllocError> {
        FanKernel::new(s, Direction::In)
    }
}
