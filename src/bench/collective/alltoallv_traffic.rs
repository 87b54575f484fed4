//! alltoallv (nccl-tests' `alltoallv_perf`; OSU's osu_alltoallv sends every
//! peer the same): each rank sends each peer the bytes the run's traffic
//! pattern gives the pair ([`crate::traffic`]: generated from the size,
//! or a matrix file's), its blocks end to end in rank order on both
//! sides. The size is one peer's even share (what nccl-tests' `count`
//! column shows); algbw counts the busiest rank's side, sent or
//! received, and busbw = algbw * (n-1)/n. Not in
//! [`crate::bench::BENCHMARKS`]: only the nccl-tests front end runs it.

use crate::backend::Collectives;
use crate::bench::collective::alltoall::pair_value;
use crate::bench::collective::{inputs, Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::{check_values, fill_zero, write_values, Mismatch};
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};
use crate::traffic::Traffic;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "alltoallv_traffic",
    title: "All-to-all of a traffic pattern's amounts per pair (nccl-tests' alltoallv)",
    ..crate::bench::collective::alltoall::SPEC
};

/// The benchmark with its pattern, and this rank's element counts per
/// peer at the current size.
pub struct AlltoallvTraffic {
    traffic: Traffic,
    send: Vec<usize>,
    recv: Vec<usize>,
}

impl AlltoallvTraffic {
    /// Each rank's total at a per-peer size of `size` bytes.
    fn total(size: usize, np: usize) -> u64 {
        size.saturating_mul(np) as u64
    }
}

impl Collective for AlltoallvTraffic {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::AlltoallvTraffic;
    type Needs = needs::Collectives;

    /// Without options: nccl-tests' default pattern (fully by distance).
    fn new(_np: usize) -> Self {
        AlltoallvTraffic { traffic: Traffic::Generated { spread: 1.0 }, send: Vec::new(), recv: Vec::new() }
    }

    fn for_run(opts: &crate::options::Options, np: usize) -> Self {
        let mut c = Self::new(np);
        if let Some(t) = &opts.traffic {
            c.traffic = t.clone();
        }
        c
    }

    /// Both buffers hold the busiest rank's side, sent or received, as
    /// nccl-tests sizes them: in place a rank sends out of its receive
    /// buffer, and a matrix's busiest sender may send more than any rank
    /// receives.
    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        let most = self.traffic.busiest_bytes(np, Self::total(size, np), 1);
        (most, most)
    }

    fn prepare(&mut self, case: &SizeCase, job: &Ranks) {
        let (total, elt) = (Self::total(case.size, job.np), case.datatype.size());
        self.send = self.traffic.send_counts(job.rank, job.np, total, elt);
        self.recv = self.traffic.recv_counts(job.rank, job.np, total, elt);
    }

    /// In place the blocks would be sent from the buffer they land in:
    /// nccl-tests times it and checks nothing (`N/A`).
    fn in_place_checked(&self) -> bool {
        false
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        let bytes = self.traffic.busiest_bytes(np, Self::total(size, np), 1);
        Some((bytes as f64, Nccl::AllToAllV.bus_factor(np)))
    }

    /// Block d of the input, `send[d]` elements, goes to rank d; the
    /// output is cleared as far as the busiest rank's receipts reach.
    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        let (dt, np, me) = (case.datatype, job.np, job.rank);
        let cleared = recv.len() / dt.size();
        fill_zero(recv, dt, cleared);
        let input = if job.in_place { &mut *recv } else { &mut *send };
        let mut at = 0;
        for (to, &n) in self.send.iter().enumerate() {
            write_values(input, dt, at..at + n, |_| pair_value(me, to, np, i));
            at += n;
        }
    }

    /// Block s of the output, `recv[s]` elements, came from rank s; past
    /// the last block the buffer is still clear.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        let (np, me) = (job.np, job.rank);
        // Where each block ends, to find element k's sender.
        let ends: Vec<usize> = self
            .recv
            .iter()
            .scan(0, |at, &n| {
                *at += n;
                Some(*at)
            })
            .collect();
        let used = ends.last().copied().unwrap_or(0);
        let all = recv.len() / case.datatype.size();
        check_values(
            recv,
            case.datatype,
            0..all,
            |k| if k < used { pair_value(ends.partition_point(|&e| e <= k), me, np, i) } else { 0 },
            1,
        )
    }

    /// nccl-tests' data: each rank's own stream, end to end over its
    /// blocks; the block from rank s holds the part of s's stream that s
    /// sent this rank (after what s sent the ranks before it).
    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        let (dt, np, me) = (case.datatype, job.np, job.rank);
        let total: usize = self.send.iter().sum();
        let input = if total > 0 { vec![inputs(0, total, 0, Ranks::own_stream(me, i))] } else { Vec::new() };
        let mut expect = Vec::new();
        let mut at = 0;
        for (src, &n) in self.recv.iter().enumerate() {
            if n > 0 {
                let theirs = self.traffic.send_counts(src, np, Self::total(case.size, np), dt.size());
                let first: usize = theirs[..me].iter().sum();
                expect.push(inputs(at, n, first as u64, Ranks::own_stream(src, i)));
            }
            at += n;
        }
        let all = self.buffer_bytes(case.size, np).1 / dt.size();
        Some(Verifiable::mover(input, job.in_place, 0..all, expect))
    }
}

impl<T: Collectives> Call<T> for AlltoallvTraffic {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, _i: usize) {
        t.alltoallv_counts(job.operands(send, recv), &self.send, &self.recv, case.datatype);
    }
}
