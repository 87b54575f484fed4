//! osu_allgatherv: MPI_Allgatherv of size bytes from every rank into
//! every rank, with OSU's layout: every rank's count the same, the blocks
//! end to end in rank order. Buffers, fills, checks, synchronisation and
//! bandwidths are osu_allgather's; only the call differs.

use super::allgather::Allgather;
use super::collective::{Call, Collective, Job};
use super::needs;
use super::spec::{BenchSpec, Op};
use super::SizeCase;
use crate::backend::{Blocks, VectorCollectives};
use crate::buffer::Mismatch;

pub const SPEC: BenchSpec =
    BenchSpec { name: "osu_allgatherv", title: "OSU MPI Allgatherv Latency Test", ..super::allgather::SPEC };

pub struct Allgatherv {
    blocks: Blocks,
}

impl Allgatherv {
    /// The layout at the current size (its non-blocking twin passes it on).
    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }
}

impl Collective for Allgatherv {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Allgatherv;
    type Needs = needs::VectorCollectives;

    fn new(_np: usize) -> Self {
        Allgatherv { blocks: Blocks::default() }
    }

    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        Allgather.buffer_bytes(size, np)
    }

    fn prepare(&mut self, case: &SizeCase, job: &Job) {
        self.blocks = Blocks::end_to_end(job.np, case.count, case.datatype, false);
    }

    fn warm_up_elsewhere(&self) -> bool {
        Allgather.warm_up_elsewhere()
    }

    fn sync_after_loop(&self) -> bool {
        Allgather.sync_after_loop()
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Allgather.bandwidth(size, np)
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Job, i: usize) {
        Allgather.fill(send, recv, case, job, i)
    }

    fn check(&self, recv: &[u8], case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        Allgather.check(recv, case, job, i)
    }
}

impl<T: VectorCollectives> Call<T> for Allgatherv {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Job, _i: usize) {
        t.allgatherv(job.operands(send, recv), case.count, &self.blocks, case.datatype);
    }
}
