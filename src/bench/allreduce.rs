//! osu_allreduce: MPI_Allreduce with MPI_SUM; every rank gets the sum.
//! busbw = algbw * 2(n-1)/n.

use super::collective::{reduction_value, CollBuffers, CollKernel, Collective, Job};
use super::{Setup, SizeCase};
use crate::backend::mpi::{in_place, Mpi};
use crate::buffer::{check_values, fill_zero, write_values, AllocError, Mismatch};

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
        let input = if job.in_place { &mut b.recv } else { &mut b.send };
        write_values(input.as_mut_slice(), case.datatype, 0..case.count, |k| reduction_value(k, i));
        if !job.in_place {
            fill_zero(b.recv.as_mut_slice(), case.datatype, case.count);
        }
    }

    fn check(&self, b: &CollBuffers, case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        let np = job.np as u64;
        check_values(b.recv.as_slice(), case.datatype, 0..case.count, |k| reduction_value(k, i) * np, job.np)
    }
}
