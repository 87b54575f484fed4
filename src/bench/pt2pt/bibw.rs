//! osu_bibw: both ranks post a window of receives, then a window of sends,
//! to each other at once. Rank 0 times from the first post until all of
//! its sends and receives completed; MB/s counts both directions.

use crate::backend::buffer_set::BufferSet;
use crate::backend::{Envelope, Transport};
use crate::bench::pt2pt::bw::mb_per_s;
use crate::bench::pt2pt::posting::{Direct, Posting};
use crate::bench::{Kernel, Metric, Pt2ptBench, Setup, SizeCase};
use crate::buffer::{AllocError, Mismatch, RECV_FILL, SEND_FILL};
use crate::options::BufferMode;
use crate::spec::BenchSpec;
use crate::stats::Samples;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_bibw",
    title: "OSU MPI Bi-Directional Bandwidth Test",
    duplex: true,
    ..crate::bench::pt2pt::bw::SPEC
};

/// Tags as OSU: rank 0 sends with 100 and receives with 10.
const TAG_FROM_0: i32 = 100;
const TAG_FROM_1: i32 = 10;

pub struct Bibw;

/// Both sides of osu_bibw, posting as `P` says (osu_bibw_persistent:
/// [`Bound`](crate::bench::pt2pt::posting::Bound)): receives in request slots 0..w, sends
/// in w..2w.
pub(crate) struct BibwKernel<T: Transport, P = Direct> {
    rank0: bool,
    peer: usize,
    send: BufferSet<T::Buf>,
    recv: BufferSet<T::Buf>,
    reqs: T::Requests,
    posting: std::marker::PhantomData<P>,
}

impl<T: Transport, P: Posting<T>> BibwKernel<T, P> {
    pub fn new(s: &Setup<T>) -> Result<Self, AllocError> {
        let rank = s.rank();
        let multiple = s.opts.buffers == BufferMode::Multiple;
        let bytes = if multiple { 1 } else { s.max_size };
        Ok(BibwKernel {
            rank0: rank == 0,
            peer: 1 - rank,
            send: BufferSet::new(s.t, bytes, s.max_window, multiple)?,
            recv: BufferSet::new(s.t, bytes, s.max_window, multiple)?,
            reqs: s.t.requests(2 * s.max_window),
            posting: std::marker::PhantomData,
        })
    }

    /// What this rank sends and what it receives.
    #[inline(always)]
    fn envelopes(&self, case: &SizeCase) -> (Envelope, Envelope) {
        let from_0 = Envelope { count: case.count, datatype: case.datatype, peer: self.peer, tag: TAG_FROM_0 };
        let from_1 = Envelope { tag: TAG_FROM_1, ..from_0 };
        if self.rank0 {
            (from_0, from_1)
        } else {
            (from_1, from_0)
        }
    }
}

crate::bench::point_to_point_bench!(Bibw, BibwKernel);

impl Pt2ptBench for Bibw {
    type P2pKernel<T: Transport> = BibwKernel<T>;

    fn p2p_kernel<T: Transport>(s: &Setup<T>) -> Result<BibwKernel<T>, AllocError> {
        BibwKernel::new(s)
    }
}

impl<T: Transport, P: Posting<T>> Kernel<T> for BibwKernel<T, P> {
    fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        self.send.reshape(t, case.size, case.window)?;
        self.recv.reshape(t, case.size, case.window)?;
        self.send.fill(t, case.size, SEND_FILL);
        self.recv.fill(t, case.size, RECV_FILL);
        let ((out, inn), w) = (self.envelopes(case), case.window);
        P::bind_recvs(t, &mut self.recv, inn, &mut self.reqs, 0, w);
        P::bind_sends(t, &self.send, out, &mut self.reqs, w, w);
        Ok(())
    }

    fn end_size(&mut self, t: &T, case: &SizeCase) {
        P::unbind(t, &mut self.reqs, 0, 2 * case.window);
    }

    fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        self.send.fill_patterns(t, case.datatype, case.count, case.size, i);
        self.recv.zero(t, case.datatype, case.count);
    }

    #[inline(always)]
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        let ((out, inn), w) = (self.envelopes(case), case.window);
        if self.rank0 {
            let t0 = t.now();
            P::exchange_windows(t, &mut self.recv, inn, &self.send, out, &mut self.reqs, w);
            t.waitall(&mut self.reqs, w, w);
            t.waitall(&mut self.reqs, 0, w);
            t.complete();
            Some(t.now() - t0)
        } else {
            P::exchange_windows(t, &mut self.recv, inn, &self.send, out, &mut self.reqs, w);
            t.waitall(&mut self.reqs, 0, w);
            t.waitall(&mut self.reqs, w, w);
            None
        }
    }

    fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.recv.check_patterns(t, case.datatype, case.count, case.size, i)
    }

    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64 {
        mb_per_s((case.size * case.window * 2) as f64, secs)
    }

    fn metric(&mut self, _t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let bytes = case.size as f64 * case.iterations as f64 * case.window as f64 * 2.0;
        Metric { value: mb_per_s(bytes, samples.total()), ..Metric::default() }
    }
}
