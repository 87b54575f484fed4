//! osu_bibw: both ranks post a window of receives, then a window of sends,
//! to each other at once. Rank 0 times from the first post until all of
//! its sends and receives completed; MB/s counts both directions.

use super::bw::mb_per_s;
use super::{Kernel, Metric, Setup, SizeCase};
use crate::backend::mpi::{Envelope, Mpi, Requests};
use crate::buffer::{AllocError, BufferSet, Mismatch, RECV_FILL, SEND_FILL};
use crate::cli::BufferMode;
use crate::stats::Samples;

/// Tags as OSU: rank 0 sends with 100 and receives with 10.
const TAG_FROM_0: i32 = 100;
const TAG_FROM_1: i32 = 10;

pub struct Bibw {
    rank0: bool,
    peer: i32,
    send: BufferSet,
    recv: BufferSet,
    reqs: Requests,
}

impl Bibw {
    pub fn new(s: &Setup) -> Result<Bibw, AllocError> {
        let rank = s.mpi.rank();
        let multiple = s.opts.buffers == BufferMode::Multiple;
        let bytes = if multiple { 1 } else { s.opts.max_size };
        Ok(Bibw {
            rank0: rank == 0,
            peer: 1 - rank,
            send: BufferSet::new(bytes, s.max_window, multiple)?,
            recv: BufferSet::new(bytes, s.max_window, multiple)?,
            reqs: Requests::new(2 * s.max_window),
        })
    }
}

impl Kernel for Bibw {
    fn prepare(&mut self, _mpi: &Mpi, case: &SizeCase) -> Result<(), AllocError> {
        self.send.reshape(case.size, case.window)?;
        self.recv.reshape(case.size, case.window)?;
        self.send.fill(case.size, SEND_FILL);
        self.recv.fill(case.size, RECV_FILL);
        Ok(())
    }

    fn fill_validation(&mut self, case: &SizeCase, i: usize) {
        self.send.fill_patterns(case.datatype, case.count, case.size, i);
        self.recv.zero(case.datatype, case.count);
    }

    #[inline(always)]
    fn step(&mut self, mpi: &Mpi, case: &SizeCase) -> Option<f64> {
        let w = case.window;
        let from_0 = Envelope { count: case.count, datatype: case.datatype, peer: self.peer, tag: TAG_FROM_0 };
        let from_1 = Envelope { tag: TAG_FROM_1, ..from_0 };
        if self.rank0 {
            let t0 = mpi.wtime();
            mpi.irecv_window(&mut self.recv, from_1, &mut self.reqs, 0);
            mpi.isend_window(&self.send, from_0, &mut self.reqs, w);
            mpi.waitall(&mut self.reqs, w, w);
            mpi.waitall(&mut self.reqs, 0, w);
            Some(mpi.wtime() - t0)
        } else {
            mpi.irecv_window(&mut self.recv, from_0, &mut self.reqs, 0);
            mpi.isend_window(&self.send, from_1, &mut self.reqs, w);
            mpi.waitall(&mut self.reqs, 0, w);
            mpi.waitall(&mut self.reqs, w, w);
            None
        }
    }

    fn check(&self, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.recv.check_patterns(case.datatype, case.count, case.size, i)
    }

    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64 {
        mb_per_s((case.size * case.window * 2) as f64, secs)
    }

    fn metric(&mut self, _mpi: &Mpi, case: &SizeCase, samples: &Samples) -> Metric {
        let bytes = case.size as f64 * case.iterations as f64 * case.window as f64 * 2.0;
        Metric { value: mb_per_s(bytes, samples.total()), ..Metric::default() }
    }
}
