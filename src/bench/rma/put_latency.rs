//! osu_put_latency: MPI_Put latency, rank 0 to rank 1, with the window and
//! synchronisation of -w and -s (bench/rma/mod.rs has the kernel).

use crate::bench::rma::{self, Op, Shape};
use crate::spec::{BenchSpec, MetricKind, ProcRule, LAT_ITERS, PT2PT_MAX};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_put_latency",
    title: "OSU MPI_Put Latency Test",
    letters: rma::LAT_LETTERS,
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Latency,
    defaults: LAT_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: PT2PT_MAX,
    from_zero: true,
    one_sided: Some(&rma::PASSIVE_DEFAULT),
    ..BenchSpec::DEFAULT
};

rma::one_sided_bench!(PutLatency, Op::Put, Shape::Latency);
