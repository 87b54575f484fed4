//! osu_gatherv: MPI_Gatherv of size bytes from every rank to a root (rank
//! 0, `-k fixed:R` or `-k rotate`), with OSU's layout: every rank's count
//! the same, the blocks end to end in rank order. So buffers, fills,
//! checks and bandwidths are osu_gather's; only the call differs, and (as
//! in OSU) ranks meet once more after a size's last iteration.

use super::needs;
use super::collective::{Call, Collective, Job};
use super::gather::Gather;
use super::spec::{BenchSpec, Op};
use super::SizeCase;
use crate::backend::{Blocks, Operands, VectorCollectives};
use crate::buffer::Mismatch;

pub const SPEC: BenchSpec =
    BenchSpec { name: "osu_gatherv", title: "OSU MPI Gatherv Latency Test", ..super::gather::SPEC };

pub struct Gatherv {
    blocks: Blocks,
}

impl Gatherv {
    /// The layout at the current size (its non-blocking twin passes it on).
    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }
}

impl Collective for Gatherv {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Gatherv;
    type Needs = needs::VectorCollectives;

    fn new(_np: usize) -> Self {
        Gatherv { blocks: Blocks::default() }
    }

    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        Gather.buffer_bytes(size, np)
    }

    fn prepare(&mut self, case: &SizeCase, job: &Job) {
        self.blocks = Blocks::end_to_end(job.np, case.count, case.datatype, false);
    }

    fn sync_after_loop(&self) -> bool {
        true
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Gather.bandwidth(size, np)
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Job, i: usize) {
        Gather.fill(send, recv, case, job, i)
    }

    fn check(&self, recv: &[u8], case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        Gather.check(recv, case, job, i)
    }
}

impl<T: VectorCollectives> Call<T> for Gatherv {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Job, i: usize) {
        let root = job.root_of(i);
        let io = if job.in_place && job.rank == root { Operands::InPlace(recv) } else { Operands::Apart { send, recv } };
        t.gatherv(io, case.count, &self.blocks, case.datatype, root);
    }
}
