//! osu_allreduce: MPI_Allreduce with MPI_SUM; every rank gets the sum.
//! busbw = algbw * 2(n-1)/n.

use super::collective::{check_reduction, fill_reduction, CollBuffers, CollKernel, Collective, Job};
use super::{Setup, SizeCase};
use crate::backend::mpi::{in_place, Mpi};
use crate::buffer::{AllocError, Mismatch};

pub struct Allreduce;

pub fn new(s: &Setup) -> Result<CollKernel<Allreduce>, AllocError> {
    CollKernel::new(s, Allreduce)
}

impl Collective for Allreduce {
    fn buffer_bytes(&self, size: usize, _np: usize) -> (usize, usize) {
        (size, size)
    }

    #[inline(always)]
    fn call(&self, mpi: &Mpi, send: *const u8, recv: *mut u8, case: &SizeCase, job: &Job, _i: usize) {
        let send = if job.in_place { in_place() } else { send };
        mpi.allreduce_sum(send, recv, case.count, case.datatype);
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some((size as f64, 2.0 * (np as f64 - 1.0) / np as f64))
    }

    fn fill(&self, b: &mut CollBuffers, case: &SizeCase, job: &Job, i: usize) {
        fill_reduction(b, case, job, i);
    }

    fn check(&self, b: &CollBuffers, case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        check_reduction(b, case, job, i, 0, case.count)
    }
}
