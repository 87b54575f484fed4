//! osu_get_acc_latency: MPI_Get_accumulate (MPI_SUM, MPI_CHAR) latency,
//! rank 0 adding into rank 1's window and reading back what was there,
//! with the window and synchronisation of -w and -s (bench/rma/mod.rs has the
//! kernel). OSU's defaults differ from the other one-sided latencies
//! (MPI_Win_create, lock/unlock), its header names no datatype, it takes
//! neither -c nor -T, and every lock it takes is exclusive.

use crate::bench::rma::{self, Op, Shape};
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_get_acc_latency",
    title: "OSU MPI_Get_accumulate latency Test",
    one_sided: Some(&rma::GET_ACCUMULATE),
    ..crate::bench::rma::put_latency::SPEC
};

rma::one_sided_bench!(GetAccLatency, Op::GetAccumulate, Shape::Latency);
