//! osu_barrier: the time of MPI_Barrier itself, with no other
//! synchronisation and no message size.

use super::collective::{CollBuffers, CollKernel, Collective, Job, Sync};
use super::{Setup, SizeCase};
use crate::backend::mpi::Mpi;
use crate::buffer::{AllocError, Mismatch};

pub struct Barrier;

pub fn new(s: &Setup) -> Result<CollKernel<Barrier>, AllocError> {
    CollKernel::new(s, Barrier)
}

impl Collective for Barrier {
    fn buffer_bytes(&self, _size: usize, _np: usize) -> (usize, usize) {
        (0, 0)
    }

    #[inline(always)]
    fn call(&self, mpi: &Mpi, _send: *const u8, _recv: *mut u8, _case: &SizeCase, _job: &Job, _i: usize) {
        mpi.barrier();
    }

    fn warm_up_elsewhere(&self) -> bool {
        false
    }

    fn sync(&self) -> Sync {
        Sync::None
    }

    fn sync_after_loop(&self) -> bool {
        true
    }

    fn bandwidth(&self, _size: usize, _np: usize) -> Option<(f64, f64)> {
        None
    }

    /// osu_barrier has no validation (-c is not one of its options).
    fn fill(&self, _b: &mut CollBuffers, _case: &SizeCase, _job: &Job, _i: usize) {}

    fn check(&self, _b: &CollBuffers, _case: &SizeCase, _job: &Job, _i: usize) -> Option<Mismatch> {
        None
    }
}
