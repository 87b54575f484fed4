//! osu_alltoallv: MPI_Alltoallv, size bytes from every rank to every
//! rank, with OSU's layout (the same count for every peer, blocks end to
//! end in rank order, send and receive alike). Buffers, fills, checks and
//! bandwidths are osu_alltoall's; only the call differs.

use crate::backend::{Blocks, VectorCollectives};
use crate::bench::collective::alltoall::Alltoall;
use crate::bench::collective::vector::{Vector, VectorOp};
use crate::bench::collective::Ranks;
use crate::bench::SizeCase;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoallv",
    title: "OSU MPI All-to-Allv Personalized Exchange Latency Test",
    ..crate::bench::collective::alltoall::SPEC
};

/// osu_alltoallv's call over osu_alltoall's buffers and patterns.
pub struct AlltoallvOp;

impl VectorOp for AlltoallvOp {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Alltoallv;
    type Twin = Alltoall;

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
        t.alltoallv(job.operands(send, recv), blocks, blocks, case.datatype);
    }
}

/// The benchmark (its kernel is the shared collective one).
pub type Alltoallv = Vector<AlltoallvOp>;
