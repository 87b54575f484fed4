//! osu_bw: rank 0 sends a window of messages to rank 1, which acknowledges
//! the whole window with one byte. MB/s = bytes in the window over the time
//! from the first send to the acknowledgement.

use super::{Kernel, Metric, Setup, SizeCase};
use crate::backend::mpi::{Envelope, Mpi, Requests};
use crate::buffer::{AlignedBuf, AllocError, BufferSet, Mismatch, RECV_FILL, SEND_FILL};
use crate::cli::BufferMode;
use crate::datatype::Datatype;
use crate::stats::Samples;

const TAG_DATA: i32 = 100;
const TAG_ACK: i32 = 101;

/// One side of a windowed one-way transfer; shared with osu_mbw_mr.
pub struct WindowSender {
    pub sender: bool,
    pub peer: i32,
    data: BufferSet,
    ack: AlignedBuf,
    reqs: Requests,
}

impl WindowSender {
    pub fn new(
        sender: bool,
        peer: i32,
        max_size: usize,
        max_window: usize,
        mode: BufferMode,
    ) -> Result<WindowSender, AllocError> {
        let multiple = mode == BufferMode::Multiple;
        Ok(WindowSender {
            sender,
            peer,
            data: BufferSet::new(if multiple { 1 } else { max_size }, max_window, multiple)?,
            ack: AlignedBuf::zeroed(1)?,
            reqs: Requests::new(max_window),
        })
    }

    pub fn prepare(&mut self, case: &SizeCase) -> Result<(), AllocError> {
        self.data.reshape(case.size, case.window)?;
        self.data.fill(case.size, if self.sender { SEND_FILL } else { RECV_FILL });
        Ok(())
    }

    pub fn fill_validation(&mut self, case: &SizeCase, i: usize) {
        if self.sender {
            self.data.fill_patterns(case.datatype, case.count, case.size, i);
        } else {
            self.data.zero(case.datatype, case.count);
        }
    }

    /// One window; the sender returns the time until the acknowledgement.
    #[inline(always)]
    pub fn window(&mut self, mpi: &Mpi, case: &SizeCase) -> Option<f64> {
        let w = case.window;
        let env = Envelope { count: case.count, datatype: case.datatype, peer: self.peer, tag: TAG_DATA };
        if self.sender {
            let t0 = mpi.wtime();
            mpi.isend_window(&self.data, env, &mut self.reqs, 0);
            mpi.waitall(&mut self.reqs, 0, w);
            mpi.recv(self.ack.as_mut_ptr(), 1, Datatype::Char, self.peer, TAG_ACK);
            Some(mpi.wtime() - t0)
        } else {
            mpi.irecv_window(&mut self.data, env, &mut self.reqs, 0);
            mpi.waitall(&mut self.reqs, 0, w);
            mpi.send(self.ack.as_ptr(), 1, Datatype::Char, self.peer, TAG_ACK);
            None
        }
    }

    pub fn check(&self, case: &SizeCase, i: usize) -> Option<Mismatch> {
        if self.sender {
            None
        } else {
            self.data.check_patterns(case.datatype, case.count, case.size, i)
        }
    }
}

/// MB/s for `bytes` moved in `secs`.
pub fn mb_per_s(bytes: f64, secs: f64) -> f64 {
    bytes / 1e6 / secs
}

pub struct Bw {
    side: WindowSender,
}

impl Bw {
    pub fn new(s: &Setup) -> Result<Bw, AllocError> {
        let rank = s.mpi.rank();
        Ok(Bw { side: WindowSender::new(rank == 0, 1 - rank, s.opts.max_size, s.max_window, s.opts.buffers)? })
    }
}

impl Kernel for Bw {
    fn prepare(&mut self, _mpi: &Mpi, case: &SizeCase) -> Result<(), AllocError> {
        self.side.prepare(case)
    }

    fn fill_validation(&mut self, case: &SizeCase, i: usize) {
        self.side.fill_validation(case, i)
    }

    #[inline(always)]
    fn step(&mut self, mpi: &Mpi, case: &SizeCase) -> Option<f64> {
        self.side.window(mpi, case)
    }

    fn check(&self, case: &SizeCase, i: usize) -> Option<Mismatch> {
        self.side.check(case, i)
    }

    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64 {
        mb_per_s((case.size * case.window) as f64, secs)
    }

    fn metric(&mut self, _mpi: &Mpi, case: &SizeCase, samples: &Samples) -> Metric {
        let bytes = case.size as f64 * case.iterations as f64 * case.window as f64;
        Metric { value: mb_per_s(bytes, samples.total()), ..Metric::default() }
    }
}
