//! osu_mbw_mr: every sending rank i streams windows to rank i + np/2 at the
//! same time, with barriers around each window. Bandwidth and message rate
//! are summed over pairs from the senders' average time.

use super::bw::{mb_per_s, WindowSender};
use super::{Kernel, Metric, Setup, SizeCase};
use crate::backend::mpi::{Mpi, ReduceOp};
use crate::buffer::{AllocError, Mismatch};
use crate::stats::Samples;

pub struct MbwMr {
    /// None on ranks outside the pairs (only with -p below np/2).
    side: Option<WindowSender>,
    pairs: usize,
}

impl MbwMr {
    pub fn new(s: &Setup) -> Result<MbwMr, AllocError> {
        let rank = s.mpi.rank() as usize;
        let half = s.mpi.size() as usize / 2;
        let role = if rank < s.pairs {
            Some((true, rank + half))
        } else if rank >= half && rank < half + s.pairs {
            Some((false, rank - half))
        } else {
            None
        };
        let side = match role {
            Some((sender, peer)) => {
                Some(WindowSender::new(sender, peer as i32, s.opts.max_size, s.max_window, s.opts.buffers)?)
            }
            None => None,
        };
        Ok(MbwMr { side, pairs: s.pairs })
    }
}

impl Kernel for MbwMr {
    fn prepare(&mut self, _mpi: &Mpi, case: &SizeCase) -> Result<(), AllocError> {
        match &mut self.side {
            Some(s) => s.prepare(case),
            None => Ok(()),
        }
    }

    fn begin_iteration(&mut self, mpi: &Mpi, case: &SizeCase, i: usize, validation: Option<usize>) {
        if validation.is_some() {
            self.fill_validation(case, i);
        }
        mpi.barrier();
        for _ in 0..validation.unwrap_or(0) {
            self.step(mpi, case);
        }
    }

    fn fill_validation(&mut self, case: &SizeCase, i: usize) {
        if let Some(s) = &mut self.side {
            s.fill_validation(case, i);
        }
    }

    #[inline(always)]
    fn step(&mut self, mpi: &Mpi, case: &SizeCase) -> Option<f64> {
        mpi.barrier();
        match &mut self.side {
            Some(s) => s.window(mpi, case),
            None => None,
        }
    }

    fn check(&self, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.side.as_ref().and_then(|s| s.check(case, i))
    }

    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64 {
        mb_per_s((case.size * self.pairs * case.window) as f64, secs)
    }

    fn metric(&mut self, mpi: &Mpi, case: &SizeCase, samples: &Samples) -> Metric {
        let sender = self.side.as_ref().is_some_and(|s| s.sender);
        let sum = mpi.reduce_f64(if sender { samples.total() } else { 0.0 }, ReduceOp::Sum);
        let avg = sum / self.pairs as f64;
        let messages = (self.pairs * case.iterations * case.window) as f64;
        Metric {
            value: mb_per_s(messages * case.size as f64, avg),
            msg_rate: Some(messages / avg),
            ..Metric::default()
        }
    }
}
