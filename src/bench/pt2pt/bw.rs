//! osu_bw: rank 0 sends a window of messages to rank 1, which acknowledges
//! the whole window with one byte. MB/s = bytes in the window over the time
//! from the first send to the acknowledgement.

use crate::backend::buffer_set::BufferSet;
use crate::backend::{Envelope, Memory, Transport};
use crate::bench::pt2pt::posting::{Direct, Posting};
use crate::bench::{Kernel, Metric, Pt2ptBench, Setup, SizeCase};
use crate::buffer::{AllocError, Mismatch, RECV_FILL, SEND_FILL};
use crate::datatype::Datatype;
use crate::options::BufferMode;
use crate::spec::{BenchSpec, MetricKind, ProcRule, BW_ITERS, PT2PT_MAX};
use crate::stats::Samples;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_bw",
    title: "OSU MPI Bandwidth Test",
    letters: "hvmxitWbcuGDPTIz",
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Bandwidth,
    defaults: BW_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: PT2PT_MAX,
    windowed: true,
    accel_slot: true,
    ..BenchSpec::DEFAULT
};

const TAG_DATA: i32 = 100;
const TAG_ACK: i32 = 101;

/// One side of a windowed one-way transfer, posting as `P` says; shared
/// with osu_mbw_mr and osu_bw_persistent.
pub(crate) struct WindowSender<T: Transport, P = Direct> {
    pub sender: bool,
    pub peer: usize,
    data: BufferSet<T::Buf>,
    ack: T::Buf,
    reqs: T::Requests,
    posting: std::marker::PhantomData<P>,
}

impl<T: Transport, P: Posting<T>> WindowSender<T, P> {
    pub fn new(
        t: &T,
        sender: bool,
        peer: usize,
        max_size: usize,
        max_window: usize,
        mode: BufferMode,
    ) -> Result<Self, AllocError> {
        let multiple = mode == BufferMode::Multiple;
        Ok(WindowSender {
            sender,
            peer,
            data: BufferSet::new(t, if multiple { 1 } else { max_size }, max_window, multiple)?,
            ack: t.memory().alloc(1)?,
            reqs: t.requests(max_window),
            posting: std::marker::PhantomData,
        })
    }

    pub(crate) fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        self.data.reshape(t, case.size, case.window)?;
        self.data.fill(t, case.size, if self.sender { SEND_FILL } else { RECV_FILL });
        let (env, w) = (self.envelope(case), case.window);
        if self.sender {
            P::bind_sends(t, &self.data, env, &mut self.reqs, 0, w);
        } else {
            P::bind_recvs(t, &mut self.data, env, &mut self.reqs, 0, w);
        }
        Ok(())
    }

    /// After a size: frees what `prepare` bound.
    pub(crate) fn end_size(&mut self, t: &T, case: &SizeCase) {
        P::unbind(t, &mut self.reqs, 0, case.window);
    }

    #[inline(always)]
    fn envelope(&self, case: &SizeCase) -> Envelope {
        Envelope { count: case.count, datatype: case.datatype, peer: self.peer, tag: TAG_DATA }
    }

    pub(crate) fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        if self.sender {
            self.data.fill_patterns(t, case.datatype, case.count, case.size, i);
        } else {
            self.data.zero(t, case.datatype, case.count);
        }
    }

    /// One window; the sender returns the time until the acknowledgement.
    #[inline(always)]
    pub fn window(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        let (w, env) = (case.window, self.envelope(case));
        let ack = Envelope { count: 1, datatype: Datatype::Char, peer: self.peer, tag: TAG_ACK };
        if self.sender {
            let t0 = t.now();
            P::send_window(t, &self.data, env, &mut self.reqs, 0, w);
            t.waitall(&mut self.reqs, 0, w);
            t.recv(&mut self.ack, ack);
            t.complete();
            Some(t.now() - t0)
        } else {
            P::recv_window(t, &mut self.data, env, &mut self.reqs, 0, w);
            t.waitall(&mut self.reqs, 0, w);
            t.send(&self.ack, ack);
            None
        }
    }

    pub fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch> {
        if self.sender {
            None
        } else {
            self.data.check_patterns(t, case.datatype, case.count, case.size, i)
        }
    }
}

/// MB/s for `bytes` moved in `secs`.
pub(crate) fn mb_per_s(bytes: f64, secs: f64) -> f64 {
    bytes / 1e6 / secs
}

pub struct Bw;

pub(crate) struct BwKernel<T: Transport, P = Direct> {
    side: WindowSender<T, P>,
}

impl<T: Transport, P: Posting<T>> BwKernel<T, P> {
    /// Rank 0 sends to rank 1.
    pub fn new(s: &Setup<T>) -> Result<Self, AllocError> {
        let rank = s.rank();
        let side = WindowSender::new(s.t, rank == 0, 1 - rank, s.max_size, s.max_window, s.opts.buffers)?;
        Ok(BwKernel { side })
    }
}

crate::bench::point_to_point_bench!(Bw, BwKernel);

impl Pt2ptBench for Bw {
    type P2pKernel<T: Transport> = BwKernel<T>;

    fn p2p_kernel<T: Transport>(s: &Setup<T>) -> Result<BwKernel<T>, AllocError> {
        BwKernel::new(s)
    }
}

impl<T: Transport, P: Posting<T>> Kernel<T> for BwKernel<T, P> {
    fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        self.side.prepare(t, case)
    }

    fn end_size(&mut self, t: &T, case: &SizeCase) {
        self.side.end_size(t, case);
    }

    fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize) {
        self.side.fill_validation(t, case, i)
    }

    #[inline(always)]
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        self.side.window(t, case)
    }

    fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.side.check(t, case, i)
    }

    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64 {
        mb_per_s((case.size * case.window) as f64, secs)
    }

    fn metric(&mut self, _t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let bytes = case.size as f64 * case.iterations as f64 * case.window as f64;
        Metric { value: mb_per_s(bytes, samples.total()), ..Metric::default() }
    }
}
