//! osu_cas_latency: MPI_Compare_and_swap latency on one element of rank
//! 1's window, with the window and synchronisation of -w and -s
//! (bench/rma.rs has the kernel). One row per `-T` type (mpi_char,
//! mpi_int, mpi_float or all), its size that of the element; `-m` only
//! bounds the buffers, 1 MiB by default as in OSU. `-s lock` locks
//! exclusively, as OSU does. `-c` is refused.

use super::rma::{self, Op, Shape};
use super::spec::{BenchSpec, MetricKind, ProcRule, LAT_ITERS};

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_cas_latency",
    title: "OSU MPI_Compare_and_swap latency Test",
    letters: rma::TYPED_LAT_LETTERS,
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Latency,
    defaults: LAT_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: 1 << 20,
    from_zero: true,
    windowed: false,
    buffer_times_np: false,
    accel_slot: false,
    one_sided: Some(&rma::ONE_ELEMENT),
};

rma::one_sided_bench!(CasLatency, Op::CompareAndSwap, Shape::Latency);
