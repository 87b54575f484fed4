//! hypercube (nccl-tests' `hypercube_perf`; OSU has no twin): an
//! allgather whose schedule is a hypercube's. Each rank first holds its
//! own block at its place of the output; at step k (k = 0, 1, ...) it
//! sends everything it holds (2^k blocks) to the rank whose number differs
//! in bit k and receives as much back, so after log2(np) steps every
//! block is everywhere. Only a power-of-two rank count has such partners.
//! algbw counts the np - 1 blocks that came over links; busbw = algbw.
//! Not in [`crate::bench::BENCHMARKS`] (the OSU suite): only the
//! nccl-tests front end runs it.

use crate::backend::Collectives;
use crate::bench::collective::allgather::{check_blocks, fill_blocks, verifiable_blocks};
use crate::bench::collective::{Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::Mismatch;
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "hypercube",
    title: "Allgather by hypercube exchanges (nccl-tests' hypercube)",
    ..crate::bench::collective::allgather::SPEC
};

pub struct HyperCube;

impl Collective for HyperCube {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::HyperCube;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        HyperCube
    }

    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        (size, size * np)
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some(((size * np.saturating_sub(1)) as f64, Nccl::HyperCube.bus_factor(np)))
    }

    /// As an allgather's: each rank's block, every element alike.
    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        fill_blocks(send, recv, case, job, i);
    }

    /// Every rank's block in its place.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        check_blocks(recv, case, job, i)
    }

    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        Some(verifiable_blocks(case, job, i))
    }
}

impl<T: Collectives> Call<T> for HyperCube {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, _i: usize) {
        t.hypercube(job.operands(send, recv), case.count, case.datatype);
    }
}

#[cfg(test)]
mod tests {
    use crate::backend::hypercube_steps as steps;

    /// Followed on every rank, the steps leave every block everywhere,
    /// each received once, from a partner that held it.
    #[test]
    fn every_block_reaches_every_rank_once() {
        for np in [1, 2, 4, 8, 16] {
            let mut held: Vec<Vec<bool>> = (0..np).map(|r| (0..np).map(|b| b == r).collect()).collect();
            let rounds: Vec<Vec<_>> = (0..np).map(|r| steps(r, np).collect()).collect();
            // Step by step over every rank at once (each step reads the
            // partners' holdings before it).
            #[allow(clippy::needless_range_loop)]
            for k in 0..rounds[0].len() {
                let before = held.clone();
                for r in 0..np {
                    let (peer, sent, got, n) = rounds[r][k];
                    assert_eq!(rounds[peer][k], (r, got, sent, n), "np {np} step {k}: the partner agrees");
                    for b in got..got + n {
                        assert!(before[peer][b] && !before[r][b], "np {np} rank {r} block {b}");
                        held[r][b] = true;
                    }
                }
            }
            assert!(held.iter().all(|h| h.iter().all(|&x| x)), "np {np}");
        }
    }
}
