//! osu_gatherv: MPI_Gatherv of size bytes from every rank to a root (rank
//! 0, `-k fixed:R` or `-k rotate`), with OSU's layout: every rank's count
//! the same, the blocks end to end in rank order. So buffers, fills,
//! checks and bandwidths are osu_gather's; only the call differs, and (as
//! in OSU) ranks meet once more after a size's last iteration.

use crate::backend::{Blocks, VectorCollectives};
use crate::bench::collective::gather::Gather;
use crate::bench::collective::vector::{Vector, VectorOp};
use crate::bench::collective::Ranks;
use crate::bench::SizeCase;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec =
    BenchSpec { name: "osu_gatherv", title: "OSU MPI Gatherv Latency Test", ..crate::bench::collective::gather::SPEC };

/// osu_gatherv's call over osu_gather's buffers and patterns.
pub struct GathervOp;

impl VectorOp for GathervOp {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Gatherv;
    type Twin = Gather;
    const SYNC_AFTER_LOOP: Option<bool> = Some(true);

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
        t.gatherv(job.rooted(send, recv, root), case.count, blocks, case.datatype, root);
    }
}

/// The benchmark (its kernel is the shared collective one).
pub type Gatherv = Vector<GathervOp>;
