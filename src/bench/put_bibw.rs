//! osu_put_bibw: MPI_Put bandwidth both ways, each rank putting a window (-W)
//! to the other per epoch; active target only (-s pscw or fence), as in OSU
//! (bench/rma.rs has the kernel).

use super::rma::{self, Op, Shape};
use super::spec::{BenchSpec, MetricKind, ProcRule, BW_ITERS, PT2PT_MAX};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_put_bibw",
    title: "OSU MPI_Put Bi-directional Bandwidth Test",
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
    one_sided: Some(&rma::ACTIVE_ONLY),
};

rma::one_sided_bench!(PutBibw, Op::Put, Shape::BiBandwidth);
