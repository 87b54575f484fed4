//! osu_alltoallw: MPI_Alltoallw, size bytes from every rank to every
//! rank, with OSU's layout: the same count and datatype for every peer,
//! blocks end to end in rank order, displacements in bytes. Buffers,
//! fills, checks and bandwidths are osu_alltoall's; only the call differs.

use crate::backend::{Blocks, VectorCollectives};
use crate::bench::collective::alltoall::Alltoall;
use crate::bench::collective::vector::{Vector, VectorOp};
use crate::bench::collective::Ranks;
use crate::bench::SizeCase;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoallw",
    title: "OSU MPI All-to-Allw Personalized Exchange Latency Test",
    ..crate::bench::collective::alltoall::SPEC
};

/// osu_alltoallw's call over osu_alltoall's buffers and patterns.
pub struct AlltoallwOp;

impl VectorOp for AlltoallwOp {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Alltoallw;
    type Twin = Alltoall;
    const BYTE_DISPLACEMENTS: bool = true;

    #[inline(always)]
    fn call<T: VectorCollectives>(
        t: &T,
        send: &T::Buf,
        recv: &mut T::Buf,
        blocks: &Blocks,
        case: &SizeCase,
        job: &Ranks,
        _i: usize,
    ) {
        t.alltoallw(job.operands(send, recv), blocks, blocks, case.datatype);
    }
}

/// The benchmark (its kernel is the shared collective one).
pub type Alltoallw = Vector<AlltoallwOp>;
