//! osu_mbw_mr: every sending rank i streams windows to rank i + np/2 at the
//! same time, with barriers around each window. Bandwidth and message rate
//! are summed over pairs from the senders' average time.

use crate::backend::{Control, ReduceOp, Transport};
use crate::bench::pt2pt::bw::{mb_per_s, WindowSender};
use crate::bench::{Kernel, Metric, Pt2ptBench, Setup, SizeCase};
use crate::buffer::{AllocError, Mismatch};
use crate::spec::{BenchSpec, MetricKind, ProcRule, MBW_ITERS, PT2PT_MAX};
use crate::stats::Samples;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_mbw_mr",
    title: "OSU MPI Multiple Bandwidth / Message Rate Test",
    letters: "pWRximVhvbcuGDPTIz",
    procs: ProcRule::Pairs,
    metric: MetricKind::MultiBandwidth,
    defaults: MBW_ITERS,
    min_size: 1,
    max_size: PT2PT_MAX,
    windowed: true,
    ..BenchSpec::DEFAULT
};

pub struct MbwMr;

pub(crate) struct MbwMrKernel<T: Transport> {
    /// None on ranks outside the pairs (only with -p below np/2).
    side: Option<WindowSender<T>>,
    pairs: usize,
}

crate::bench::point_to_point_bench!(MbwMr, MbwMrKernel);

impl Pt2ptBench for MbwMr {
    type P2pKernel<T: Transport> = MbwMrKernel<T>;

    fn p2p_kernel<T: Transport>(s: &Setup<T>) -> Result<MbwMrKernel<T>, AllocError> {
        let (rank, half) = (s.rank(), s.np() / 2);
        let role = if rank < s.pairs {
            Some((true, rank + half))
        } else if rank >= half && rank < half + s.pairs {
            Some((false, rank - half))
        } else {
            None
        };
        let side = match role {
            Some((sender, peer)) => {
                Some(WindowSender::new(s.t, sender, peer, s.max_size, s.max_window, s.opts.buffers)?)
            }
            None => None,
        };
        Ok(MbwMrKernel { side, pairs: s.pairs })
    }
}

impl<T: Transport> Kernel<T> for MbwMrKernel<T> {
    fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        match &mut self.side {
            Some(s) => s.prepare(t, case),
            None => Ok(()),
        }
    }

    fn begin_iteration(&mut self, t: &T, case: &SizeCase, i: usize, validation: Option<usize>) {
        if validation.is_some() {
            self.fill_validation(t, case, i);
        }
        t.world().barrier();
        for _ in 0..validation.unwrap_or(0) {
            self.step(t, case);
        }
    }

    fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        if let Some(s) = &mut self.side {
            s.fill_validation(t, case, i);
        }
    }

    #[inline(always)]
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        t.world().barrier();
        match &mut self.side {
            Some(s) => s.window(t, case),
            None => None,
        }
    }

    fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.side.as_ref().and_then(|s| s.check(t, case, i))
    }

    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64 {
        mb_per_s((case.size * self.pairs * case.window) as f64, secs)
    }

    fn metric(&mut self, t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let sender = self.side.as_ref().is_some_and(|s| s.sender);
        let sum = t.world().reduce_f64(if sender { samples.total() } else { 0.0 }, ReduceOp::Sum);
        let avg = sum / self.pairs as f64;
        let messages = (self.pairs * case.iterations * case.window) as f64;
        Metric {
            value: mb_per_s(messages * case.size as f64, avg),
            msg_rate: Some(messages / avg),
            ..Metric::default()
        }
    }
}
