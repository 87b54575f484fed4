//! osu_fop_latency: MPI_Fetch_and_op (MPI_SUM) latency on one element of
//! rank 1's window, with the window and synchronisation of -w and -s
//! (bench/rma.rs has the kernel). One row per `-T` type (mpi_char,
//! mpi_int, mpi_float or all), its size that of the element; `-m` only
//! bounds the buffers. `-s lock` locks exclusively, as OSU does. `-c` is
//! refused.

use super::rma::{self, Op, Shape};
use super::spec::{BenchSpec, MetricKind, ProcRule, LAT_ITERS, PT2PT_MAX};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_fop_latency",
    title: "OSU MPI_Fetch_and_op latency Test",
    letters: rma::TYPED_LAT_LETTERS,
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Latency,
    defaults: LAT_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: PT2PT_MAX,
    from_zero: true,
    windowed: false,
    buffer_times_np: false,
    accel_slot: false,
    one_sided: Some(&rma::ONE_ELEMENT),
};

rma::one_sided_bench!(FopLatency, Op::FetchAndOp, Shape::Latency);
