//! osu_get_bw: MPI_Get bandwidth, a window (-W) of gets by rank 0 from rank 1
//! per epoch (bench/rma.rs has the kernel).

use super::rma::{self, Op, Shape};
use super::spec::{BenchSpec, MetricKind, ProcRule, BW_ITERS, PT2PT_MAX};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_get_bw",
    title: "OSU MPI_Get Bandwidth Test",
    letters: rma::BW_LETTERS,
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Bandwidth,
    defaults: BW_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: PT2PT_MAX,
    from_zero: false,
    windowed: true,
    buffer_times_np: false,
    accel_slot: false,
    one_sided: Some(&rma::PASSIVE_DEFAULT),
};

rma::one_sided_bench!(GetBw, Op::Get, Shape::Bandwidth);
