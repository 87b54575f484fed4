//! osu_scatterv: MPI_Scatterv of size bytes to every rank from a root
//! (rank 0, `-k fixed:R` or `-k rotate`), with OSU's layout: every rank's
//! count the same, the blocks end to end in rank order. Buffers, fills,
//! checks and bandwidths are osu_scatter's; only the call differs.

use super::needs;
use super::collective::{Call, Collective, Job};
use super::scatter::Scatter;
use super::spec::{BenchSpec, Op};
use super::SizeCase;
use crate::backend::{Blocks, Operands, VectorCollectives};
use crate::buffer::Mismatch;

pub const SPEC: BenchSpec =
    BenchSpec { name: "osu_scatterv", title: "OSU MPI Scatterv Latency Test", ..super::scatter::SPEC };

pub struct Scatterv {
    blocks: Blocks,
}

impl Scatterv {
    /// The layout at the current size (its non-blocking twin passes it on).
    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }
}

impl Collective for Scatterv {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Scatterv;
    type Needs = needs::VectorCollectives;

    fn new(_np: usize) -> Self {
        Scatterv { blocks: Blocks::default() }
    }

    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        Scatter.buffer_bytes(size, np)
    }

    fn prepare(&mut self, case: &SizeCase, job: &Job) {
        self.blocks = Blocks::end_to_end(job.np, case.count, case.datatype, false);
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Scatter.bandwidth(size, np)
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Job, i: usize) {
        Scatter.fill(send, recv, case, job, i)
    }

    fn check(&self, recv: &[u8], case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        Scatter.check(recv, case, job, i)
    }
}

impl<T: VectorCollectives> Call<T> for Scatterv {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Job, i: usize) {
        let root = job.root_of(i);
        let io = if job.in_place && job.rank == root { Operands::InPlace(recv) } else { Operands::Apart { send, recv } };
        t.scatterv(io, &self.blocks, case.count, case.datatype, root);
    }
}
