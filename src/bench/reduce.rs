//! osu_reduce: MPI_Reduce with MPI_SUM to a fixed root (`-k fixed:R`,
//! default 0) or one that rotates with the iteration (`-k rotate`). OSU
//! synchronises before each call, not after. busbw = algbw.

use super::collective::{check_reduction, fill_reduction, CollBuffers, CollKernel, Collective, Job, Sync};
use super::{Setup, SizeCase};
use crate::backend::mpi::{in_place, Mpi};
use crate::buffer::{AllocError, Mismatch};

pub struct Reduce;

pub fn new(s: &Setup) -> Result<CollKernel<Reduce>, AllocError> {
    CollKernel::new(s, Reduce)
}

impl Collective for Reduce {
    fn buffer_bytes(&self, size: usize, _np: usize) -> (usize, usize) {
        (size, size)
    }

    /// In place, the root reduces into its receive buffer and the other
    /// ranks send from theirs.
    #[inline(always)]
    fn call(&self, mpi: &Mpi, send: *const u8, recv: *mut u8, case: &SizeCase, job: &Job, i: usize) {
        let root = job.root_of(i);
        let send = match (job.in_place, job.rank == root) {
            (true, true) => in_place(),
            (true, false) => recv as *const u8,
            (false, _) => send,
        };
        mpi.reduce_sum(send, recv, case.count, case.datatype, root as i32);
    }

    fn sync(&self) -> Sync {
        Sync::Before
    }

    fn bandwidth(&self, size: usize, _np: usize) -> Option<(f64, f64)> {
        Some((size as f64, 1.0))
    }

    fn fill(&self, b: &mut CollBuffers, case: &SizeCase, job: &Job, i: usize) {
        fill_reduction(b, case, job, i);
    }

    /// Only the root of the iteration holds the result.
    fn check(&self, b: &CollBuffers, case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        if job.rank != job.root_of(i) {
            return None;
        }
        check_reduction(b, case, job, i, 0, case.count)
    }
}
