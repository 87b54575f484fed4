//! osu_bcast: MPI_Bcast from rank 0. As in OSU, there is no barrier before
//! the first iteration of a size. busbw = algbw.

use super::collective::{CollBuffers, CollKernel, Collective, Job};
use super::{Setup, SizeCase};
use crate::backend::mpi::Mpi;
use crate::buffer::{check_values, fill_zero, write_values, AllocError, Mismatch};

pub struct Bcast;

pub fn new(s: &Setup) -> Result<CollKernel<Bcast>, AllocError> {
    CollKernel::new(s, Bcast)
}

const ROOT: usize = 0;

fn root_value(i: usize) -> u64 {
    1 + 2 * (i as u64 + 1)
}

impl Collective for Bcast {
    /// One buffer (the receive side), sent from at the root.
    fn buffer_bytes(&self, size: usize, _np: usize) -> (usize, usize) {
        (0, size)
    }

    #[inline(always)]
    fn call(&self, mpi: &Mpi, _send: *const u8, recv: *mut u8, case: &SizeCase, _job: &Job, _i: usize) {
        mpi.bcast(recv, case.count, case.datatype, ROOT as i32);
    }

    fn warm_up_elsewhere(&self) -> bool {
        false
    }

    fn sync_before_size(&self) -> bool {
        false
    }

    fn sync_after_loop(&self) -> bool {
        true
    }

    fn bandwidth(&self, size: usize, _np: usize) -> Option<(f64, f64)> {
        Some((size as f64, 1.0))
    }

    fn fill(&self, b: &mut CollBuffers, case: &SizeCase, job: &Job, i: usize) {
        if job.rank == ROOT {
            write_values(b.recv.as_mut_slice(), case.datatype, 0..case.count, |_| root_value(i));
        } else {
            fill_zero(b.recv.as_mut_slice(), case.datatype, case.count);
        }
    }

    fn check(&self, b: &CollBuffers, case: &SizeCase, _job: &Job, i: usize) -> Option<Mismatch> {
        check_values(b.recv.as_slice(), case.datatype, 0..case.count, |_| root_value(i), 1)
    }
}
