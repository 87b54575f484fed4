//! osu_scatterv: MPI_Scatterv of size bytes to every rank from a root
//! (rank 0, `-k fixed:R` or `-k rotate`), with OSU's layout: every rank's
//! count the same, the blocks end to end in rank order. Buffers, fills,
//! checks and bandwidths are osu_scatter's; only the call differs.

use crate::backend::{Blocks, VectorCollectives};
use crate::bench::collective::scatter::Scatter;
use crate::bench::collective::vector::{Vector, VectorOp};
use crate::bench::collective::Ranks;
use crate::bench::SizeCase;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_scatterv",
    title: "OSU MPI Scatterv Latency Test",
    ..crate::bench::collective::scatter::SPEC
};

/// osu_scatterv's call over osu_scatter's buffers and patterns.
pub struct ScattervOp;

impl VectorOp for ScattervOp {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Scatterv;
    type Twin = Scatter;

    #[inline(always)]
    fn call<T: VectorCollectives>(
        t: &T,
        send: &T::Buf,
        recv: &mut T::Buf,
        blocks: &Blocks,
        case: &SizeCase,
        job: &Ranks,
        i: usize,
    ) {
        let root = job.root_of(i);
        t.scatterv(job.rooted(send, recv, root), blocks, case.count, case.datatype, root);
    }
}

/// The benchmark (its kernel is the shared collective one).
pub type Scatterv = Vector<ScattervOp>;
