//! osu_allgatherv: MPI_Allgatherv of size bytes from every rank into
//! every rank, with OSU's layout: every rank's count the same, the blocks
//! end to end in rank order. Buffers, fills, checks, synchronisation and
//! bandwidths are osu_allgather's; only the call differs.

use crate::backend::{Blocks, VectorCollectives};
use crate::bench::collective::allgather::Allgather;
use crate::bench::collective::vector::{Vector, VectorOp};
use crate::bench::collective::Ranks;
use crate::bench::SizeCase;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_allgatherv",
    title: "OSU MPI Allgatherv Latency Test",
    ..crate::bench::collective::allgather::SPEC
};

/// osu_allgatherv's call over osu_allgather's buffers and patterns.
pub struct AllgathervOp;

impl VectorOp for AllgathervOp {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Allgatherv;
    type Twin = Allgather;

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
        t.allgatherv(job.operands(send, recv), case.count, blocks, case.datatype);
    }
}

/// The benchmark (its kernel is the shared collective one).
pub type Allgatherv = Vector<AllgathervOp>;
