//! osu_get_latency: MPI_Get latency, rank 0 reading rank 1, with the window
//! and synchronisation of -w and -s (bench/rma/mod.rs has the kernel). OSU spells
//! its title with a small l.

use crate::bench::rma::{self, Op, Shape};
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec =
    BenchSpec { name: "osu_get_latency", title: "OSU MPI_Get latency Test", ..crate::bench::rma::put_latency::SPEC };

rma::one_sided_bench!(GetLatency, Op::Get, Shape::Latency);
