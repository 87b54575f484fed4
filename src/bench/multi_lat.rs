//! osu_multi_lat: np/2 concurrent ping-pongs, rank i with rank i + np/2,
//! with a barrier before every exchange. Latency is the senders' average
//! round trip, halved.

use super::latency::{one_way_us, PingPong};
use super::{Kernel, Metric, Setup, SizeCase};
use crate::backend::mpi::{Mpi, ReduceOp};
use crate::buffer::{AllocError, Mismatch};

pub struct MultiLat {
    pp: PingPong,
    pairs: usize,
}

impl MultiLat {
    pub fn new(s: &Setup) -> Result<MultiLat, AllocError> {
        let rank = s.mpi.rank() as usize;
        let half = s.mpi.size() as usize / 2;
        let (initiator, peer) = if rank < half { (true, rank + half) } else { (false, rank - half) };
        Ok(MultiLat { pp: PingPong::new(initiator, peer as i32, s.opts.max_size, s.opts.buffers)?, pairs: half })
    }
}

impl Kernel for MultiLat {
    fn prepare(&mut self, _mpi: &Mpi, case: &SizeCase) -> Result<(), AllocError> {
        self.pp.prepare(case)
    }

    fn begin_iteration(&mut self, _mpi: &Mpi, case: &SizeCase, i: usize, validating: bool) {
        // The barrier before each exchange is part of the step.
        if validating {
            self.pp.fill_validation(case, i);
        }
    }

    fn fill_validation(&mut self, case: &SizeCase, i: usize) {
        self.pp.fill_validation(case, i)
    }

    #[inline(always)]
    fn step(&mut self, mpi: &Mpi, case: &SizeCase) -> Option<f64> {
        mpi.barrier();
        self.pp.exchange(mpi, case)
    }

    fn check(&self, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.pp.check(case, i)
    }

    fn per_iteration(&self, _case: &SizeCase, secs: f64) -> f64 {
        one_way_us(secs)
    }

    fn iteration_time_scale(&self) -> f64 {
        0.5
    }

    fn metric(&mut self, mpi: &Mpi, case: &SizeCase, total_secs: f64) -> Metric {
        let mine = if self.pp.initiator { total_secs } else { 0.0 };
        let avg = mpi.reduce_f64(mine, ReduceOp::Sum) / self.pairs as f64;
        Metric { value: avg * 1e6 / (2.0 * case.iterations as f64), msg_rate: None }
    }
}
