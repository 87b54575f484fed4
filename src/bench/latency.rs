//! osu_latency: ping-pong between ranks 0 and 1. Rank 0 times each round
//! trip; latency is half of it. The ping-pong kernel here also serves
//! osu_multi_lat.

use super::{Kernel, Metric, Setup, SizeCase};
use crate::backend::mpi::{Mpi, ReduceOp};
use crate::buffer::{check_pattern, fill_pattern, fill_zero, AlignedBuf, AllocError, Mismatch, RECV_FILL, SEND_FILL};
use crate::cli::BufferMode;
use crate::stats::Samples;

const TAG: i32 = 1;

/// Buffers and role of one side of a ping-pong; shared with osu_multi_lat.
pub struct PingPong {
    /// Whether this rank starts each exchange and keeps time.
    pub initiator: bool,
    pub peer: i32,
    send: AlignedBuf,
    recv: AlignedBuf,
    fresh_per_size: bool,
}

impl PingPong {
    pub fn new(initiator: bool, peer: i32, max_size: usize, mode: BufferMode) -> Result<PingPong, AllocError> {
        let fresh_per_size = mode == BufferMode::Multiple;
        let n = if fresh_per_size { 1 } else { max_size };
        Ok(PingPong { initiator, peer, send: AlignedBuf::zeroed(n)?, recv: AlignedBuf::zeroed(n)?, fresh_per_size })
    }

    pub fn prepare(&mut self, case: &SizeCase) -> Result<(), AllocError> {
        if self.fresh_per_size {
            self.send = AlignedBuf::zeroed(case.size)?;
            self.recv = AlignedBuf::zeroed(case.size)?;
        }
        self.send.as_mut_slice()[..case.size].fill(SEND_FILL);
        self.recv.as_mut_slice()[..case.size].fill(RECV_FILL);
        Ok(())
    }

    pub fn fill_validation(&mut self, case: &SizeCase, i: usize) {
        fill_pattern(self.send.as_mut_slice(), case.datatype, case.count, case.size, i);
        fill_zero(self.recv.as_mut_slice(), case.datatype, case.count);
    }

    /// One exchange; the initiator returns the round-trip time.
    #[inline(always)]
    pub fn exchange(&mut self, mpi: &Mpi, case: &SizeCase) -> Option<f64> {
        if self.initiator {
            let t0 = mpi.wtime();
            mpi.send(self.send.as_ptr(), case.count, case.datatype, self.peer, TAG);
            mpi.recv(self.recv.as_mut_ptr(), case.count, case.datatype, self.peer, TAG);
            Some(mpi.wtime() - t0)
        } else {
            mpi.recv(self.recv.as_mut_ptr(), case.count, case.datatype, self.peer, TAG);
            mpi.send(self.send.as_ptr(), case.count, case.datatype, self.peer, TAG);
            None
        }
    }

    /// Both sides send the same pattern, so both can check what came back.
    pub fn check(&self, case: &SizeCase, i: usize) -> Option<Mismatch> {
        check_pattern(self.recv.as_slice(), case.datatype, case.count, case.size, i)
    }
}

/// Round-trip seconds to one-way microseconds.
pub fn one_way_us(round_trip_secs: f64) -> f64 {
    round_trip_secs * 1e6 / 2.0
}

/// A ping-pong benchmark: osu_latency (one pair) or osu_multi_lat (np/2
/// pairs, with a barrier before every exchange).
pub struct PingPongBench {
    pp: PingPong,
    pairs: usize,
    barrier_each: bool,
}

impl PingPongBench {
    pub fn new(pp: PingPong, pairs: usize, barrier_each: bool) -> PingPongBench {
        PingPongBench { pp, pairs, barrier_each }
    }
}

/// osu_latency: ranks 0 and 1, rank 0 keeps time.
pub fn new(s: &Setup) -> Result<PingPongBench, AllocError> {
    let rank = s.mpi.rank();
    let pp = PingPong::new(rank == 0, 1 - rank, s.opts.max_size, s.opts.buffers)?;
    Ok(PingPongBench::new(pp, 1, false))
}

impl Kernel for PingPongBench {
    fn prepare(&mut self, _mpi: &Mpi, case: &SizeCase) -> Result<(), AllocError> {
        self.pp.prepare(case)
    }

    fn begin_iteration(&mut self, mpi: &Mpi, case: &SizeCase, i: usize, validation: Option<usize>) {
        if let Some(reps) = validation {
            self.pp.fill_validation(case, i);
            // With a barrier in every step, that one synchronises.
            if !self.barrier_each {
                mpi.barrier();
            }
            for _ in 0..reps {
                self.step(mpi, case);
            }
        }
    }

    fn fill_validation(&mut self, case: &SizeCase, i: usize) {
        self.pp.fill_validation(case, i)
    }

    #[inline(always)]
    fn step(&mut self, mpi: &Mpi, case: &SizeCase) -> Option<f64> {
        if self.barrier_each {
            mpi.barrier();
        }
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

    /// One pair: rank 0's own total. Several: the senders' average total.
    fn metric(&mut self, mpi: &Mpi, case: &SizeCase, samples: &Samples) -> Metric {
        let total_secs = samples.total();
        let total = if self.pairs == 1 && !self.barrier_each {
            total_secs
        } else {
            let mine = if self.pp.initiator { total_secs } else { 0.0 };
            mpi.reduce_f64(mine, ReduceOp::Sum) / self.pairs as f64
        };
        Metric { value: total * 1e6 / (2.0 * case.iterations as f64), ..Metric::default() }
    }
}
