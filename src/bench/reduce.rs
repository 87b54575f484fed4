//! osu_reduce: MPI_Reduce with MPI_SUM to a fixed root (`-k fixed:R`,
//! default 0) or one that rotates with the iteration (`-k rotate`). OSU
//! synchronises before each call, not after. busbw = algbw.

use super::collective::{reduction_value, CollBuffers, CollKernel, Collective, Job, Sync};
use super::{Setup, SizeCase};
use crate::backend::mpi::{in_place, Mpi};
use crate::buffer::{check_values, fill_zero, write_values, AllocError, Mismatch};

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
        let input = if job.in_place { &mut b.recv } else { &mut b.send };
        write_values(input.as_mut_slice(), case.datatype, 0..case.count, |k| reduction_value(k, i));
        if !job.in_place {
            fill_zero(b.recv.as_mut_slice(), case.datatype, case.count);
        }
    }

    /// Only the root of the iteration holds the result.
    fn check(&self, b: &CollBuffers, case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        if job.rank != job.root_of(i) {
            return None;
        }
        let np = job.np as u64;
        check_values(b.recv.as_slice(), case.datatype, 0..case.count, |k| reduction_value(k, i) * np, job.np)
    }
}
