//! osu_acc_latency: MPI_Accumulate (MPI_SUM) latency, rank 0 adding into
//! rank 1's window, with the window and synchronisation of -w and -s
//! (bench/rma/mod.rs has the kernel). `-T` picks the element type (mpi_char,
//! mpi_int, mpi_float or all: one table each); sizes smaller than one
//! element are skipped, as in OSU. Under `-s lock`, sizes above 8192 bytes
//! warm up as many times as they are timed, as OSU's do. `-c` checks
//! every element of the target's window (rma/validate.rs).

use crate::bench::rma::{self, Op, Shape};
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_acc_latency",
    title: "OSU MPI_Accumulate latency Test",
    letters: rma::TYPED_LAT_LETTERS,
    one_sided: Some(&rma::ACCUMULATE),
    ..crate::bench::rma::put_latency::SPEC
};

rma::one_sided_bench!(AccLatency, Op::Accumulate, Shape::Latency);
