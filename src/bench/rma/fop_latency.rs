//! osu_fop_latency: MPI_Fetch_and_op (MPI_SUM) latency on one element of
//! rank 1's window, with the window and synchronisation of -w and -s
//! (bench/rma/mod.rs has the kernel). One row per `-T` type (mpi_char,
//! mpi_int, mpi_float or all), its size that of the element; `-m` only
//! bounds the buffers. `-s lock` locks exclusively, as OSU does. `-c` checks
//! the element fetched and the target's (rma/validate.rs).

use crate::bench::rma::{self, Op, Shape};
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_fop_latency",
    title: "OSU MPI_Fetch_and_op latency Test",
    letters: rma::TYPED_LAT_LETTERS,
    one_sided: Some(&rma::ONE_ELEMENT),
    ..crate::bench::rma::put_latency::SPEC
};

rma::one_sided_bench!(FopLatency, Op::FetchAndOp, Shape::Latency);
