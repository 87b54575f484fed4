//! osu_alltoall: MPI_Alltoall, size bytes from every rank to every rank.
//! algbw counts size * np bytes; busbw = algbw * (n-1)/n.

use crate::backend::Collectives;
use crate::bench::collective::{inputs, Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::{check_values, fill_zero, write_values, Mismatch};
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_alltoall",
    title: "OSU MPI All-to-All Personalized Exchange Latency Test",
    ..crate::bench::collective::allgather::SPEC
};

pub struct Alltoall;

/// The value of every element rank `from` sends to rank `to` in iteration i.
pub(crate) fn pair_value(from: usize, to: usize, np: usize, i: usize) -> u64 {
    let sn = (from * np) as u64;
    sn + to as u64 + (i as u64 + 1) * (sn + 1) * (to as u64 + 1)
}

impl Collective for Alltoall {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Alltoall;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        Alltoall
    }

    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        (size * np, size * np)
    }

    /// nccl-tests leaves an in-place all-to-all unchecked (`N/A`): over
    /// grouped sends and receives its result is undefined.
    fn in_place_checked(&self) -> bool {
        false
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some(((size * np) as f64, Nccl::AllToAll.bus_factor(np)))
    }

    /// Block d of the input goes to rank d.
    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        let (c, dt, np, me) = (case.count, case.datatype, job.np, job.rank);
        let input = if job.in_place { &mut *recv } else { &mut *send };
        write_values(input, dt, 0..c * np, |k| pair_value(me, k / c, np, i));
        if !job.in_place {
            fill_zero(recv, dt, c * np);
        }
    }

    /// Block s of the output came from rank s.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        let (c, np, me) = (case.count, job.np, job.rank);
        check_values(recv, case.datatype, 0..c * np, |k| pair_value(k / c, me, np, i), 1)
    }

    /// nccl-tests' data: each rank's own stream, block d for rank d;
    /// block s of the output is rank s's block for this rank.
    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        let (c, np, me) = (case.count, job.np, job.rank);
        let input = vec![inputs(0, c * np, 0, Ranks::own_stream(me, i))];
        let expect = (0..np).map(|s| inputs(s * c, c, (me * c) as u64, Ranks::own_stream(s, i))).collect();
        Some(Verifiable::mover(input, job.in_place, 0..c * np, expect))
    }
}

impl<T: Collectives> Call<T> for Alltoall {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, _i: usize) {
        t.alltoall(job.operands(send, recv), case.count, case.datatype);
    }
}
