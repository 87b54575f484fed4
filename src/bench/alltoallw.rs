//! osu_alltoallw: MPI_Alltoallw, size bytes from every rank to every
//! rank, with OSU's layout: the same count and datatype for every peer,
//! blocks end to end in rank order, displacements in bytes. Buffers,
//! fills, checks and bandwidths are osu_alltoall's; only the call differs.

use super::needs;
use super::alltoall::Alltoall;
use super::collective::{Call, Collective, Job};
use super::spec::{BenchSpec, Op};
use super::SizeCase;
use crate::backend::{Blocks, VectorCollectives};
use crate::buffer::Mismatch;

pub const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoallw",
    title: "OSU MPI All-to-Allw Personalized Exchange Latency Test",
    ..super::alltoall::SPEC
};

pub struct Alltoallw {
    blocks: Blocks,
}

impl Alltoallw {
    /// The layout at the current size (its non-blocking twin passes it on).
    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }
}

impl Collective for Alltoallw {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Alltoallw;
    type Needs = needs::VectorCollectives;

    fn new(_np: usize) -> Self {
        Alltoallw { blocks: Blocks::default() }
    }

    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        Alltoall.buffer_bytes(size, np)
    }

    fn prepare(&mut self, case: &SizeCase, job: &Job) {
        self.blocks = Blocks::end_to_end(job.np, case.count, case.datatype, true);
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Alltoall.bandwidth(size, np)
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Job, i: usize) {
        Alltoall.fill(send, recv, case, job, i)
    }

    fn check(&self, recv: &[u8], case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        Alltoall.check(recv, case, job, i)
    }
}

impl<T: VectorCollectives> Call<T> for Alltoallw {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Job, _i: usize) {
        t.alltoallw(job.operands(send, recv), &self.blocks, &self.blocks, case.datatype);
    }
}
