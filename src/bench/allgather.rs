//! osu_allgather: MPI_Allgather of size bytes from every rank into every
//! rank. algbw counts the gathered size * np bytes; busbw = algbw *
//! (n-1)/n.

use super::collective::{CollBuffers, CollKernel, Collective, Job};
use super::{Setup, SizeCase};
use crate::backend::mpi::{in_place, Mpi};
use crate::buffer::{check_values, fill_zero, write_values, AllocError, Mismatch};

pub struct Allgather;

pub fn new(s: &Setup) -> Result<CollKernel<Allgather>, AllocError> {
    CollKernel::new(s, Allgather)
}

/// The value every element of rank s's block carries in iteration i.
fn block_value(s: usize, np: usize, i: usize) -> u64 {
    let sn = (s * np) as u64;
    sn + (i as u64 + 1) * (sn + 1)
}

impl Collective for Allgather {
    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        (size, size * np)
    }

    #[inline(always)]
    fn call(&self, mpi: &Mpi, send: *const u8, recv: *mut u8, case: &SizeCase, job: &Job, _i: usize) {
        let send = if job.in_place { in_place() } else { send };
        mpi.allgather(send, recv, case.count, case.datatype);
    }

    fn warm_up_elsewhere(&self) -> bool {
        false
    }

    fn sync_after_loop(&self) -> bool {
        true
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some(((size * np) as f64, (np as f64 - 1.0) / np as f64))
    }

    fn fill(&self, b: &mut CollBuffers, case: &SizeCase, job: &Job, i: usize) {
        let (c, dt) = (case.count, case.datatype);
        fill_zero(b.recv.as_mut_slice(), dt, c * job.np);
        let mine = block_value(job.rank, job.np, i);
        if job.in_place {
            write_values(b.recv.as_mut_slice(), dt, job.rank * c..(job.rank + 1) * c, |_| mine);
        } else {
            write_values(b.send.as_mut_slice(), dt, 0..c, |_| mine);
        }
    }

    fn check(&self, b: &CollBuffers, case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        let c = case.count;
        check_values(b.recv.as_slice(), case.datatype, 0..c * job.np, |k| block_value(k / c, job.np, i), 1)
    }
}
