//! osu_get_bw: MPI_Get bandwidth, a window (-W) of gets by rank 0 from rank 1
//! per epoch (bench/rma/mod.rs has the kernel).

use crate::bench::rma::{self, Op, Shape};
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec =
    BenchSpec { name: "osu_get_bw", title: "OSU MPI_Get Bandwidth Test", ..crate::bench::rma::put_bw::SPEC };

rma::one_sided_bench!(GetBw, Op::Get, Shape::Bandwidth);
