//! osu_alltoall: MPI_Alltoall, size bytes from every rank to every rank.
//! algbw counts size * np bytes; busbw = algbw * (n-1)/n.

use super::collective::{CollBuffers, CollKernel, Collective, Job};
use super::{Setup, SizeCase};
use crate::backend::mpi::{in_place, Mpi};
use crate::buffer::{check_values, fill_zero, write_values, AllocError, Mismatch};

pub struct Alltoall;

pub fn new(s: &Setup) -> Result<CollKernel<Alltoall>, AllocError> {
    CollKernel::new(s, Alltoall)
}

/// The value of every element rank `from` sends to rank `to` in iteration i.
fn pair_value(from: usize, to: usize, np: usize, i: usize) -> u64 {
    let sn = (from * np) as u64;
    sn + to as u64 + (i as u64 + 1) * (sn + 1) * (to as u64 + 1)
}

impl Collective for Alltoall {
    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        (size * np, size * np)
    }

    #[inline(always)]
    fn call(&self, mpi: &Mpi, send: *const u8, recv: *mut u8, case: &SizeCase, job: &Job, _i: usize) {
        let send = if job.in_place { in_place() } else { send };
        mpi.alltoall(send, recv, case.count, case.datatype);
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some(((size * np) as f64, (np as f64 - 1.0) / np as f64))
    }

    /// Block d of the input goes to rank d.
    fn fill(&self, b: &mut CollBuffers, case: &SizeCase, job: &Job, i: usize) {
        let (c, dt, np, me) = (case.count, case.datatype, job.np, job.rank);
        let input = if job.in_place { &mut b.recv } else { &mut b.send };
        write_values(input.as_mut_slice(), dt, 0..c * np, |k| pair_value(me, k / c, np, i));
        if !job.in_place {
            fill_zero(b.recv.as_mut_slice(), dt, c * np);
        }
    }

    /// Block s of the output came from rank s.
    fn check(&self, b: &CollBuffers, case: &SizeCase, job: &Job, i: usize) -> Option<Mismatch> {
        let (c, np, me) = (case.count, job.np, job.rank);
        check_values(b.recv.as_slice(), case.datatype, 0..c * np, |k| pair_value(k / c, me, np, i), 1)
    }
}
