//! osu_put_bw: MPI_Put bandwidth, a window (-W) of puts from rank 0 to rank 1
//! per epoch (bench/rma/mod.rs has the kernel).

use crate::bench::rma::{self, Op, Shape};
use crate::spec::{BenchSpec, MetricKind, ProcRule, BW_ITERS, PT2PT_MAX};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_put_bw",
    title: "OSU MPI_Put Bandwidth Test",
    letters: rma::BW_LETTERS,
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Bandwidth,
    defaults: BW_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: PT2PT_MAX,
    windowed: true,
    one_sided: Some(&rma::PASSIVE_DEFAULT),
    ..BenchSpec::DEFAULT
};

rma::one_sided_bench!(PutBw, Op::Put, Shape::Bandwidth);
