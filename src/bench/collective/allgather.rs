//! osu_allgather: MPI_Allgather of size bytes from every rank into every
//! rank. algbw counts the gathered size * np bytes; busbw = algbw *
//! (n-1)/n.

use crate::backend::Collectives;
use crate::bench::collective::{inputs, Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::{check_values, fill_zero, write_values, Mismatch};
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_allgather",
    title: "OSU MPI Allgather Latency Test",
    letters: "hvfmixMacuGDPTIlz",
    buffer_times_np: true,
    accel_slot: true,
    one_sided: None,
    ..crate::bench::collective::allreduce::SPEC
};

pub struct Allgather;

/// The value every element of rank s's block carries in iteration i (also
/// what each rank sends in osu_gather).
pub(crate) fn block_value(s: usize, np: usize, i: usize) -> u64 {
    let sn = (s * np) as u64;
    sn + (i as u64 + 1) * (sn + 1)
}

impl Collective for Allgather {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Allgather;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        Allgather
    }

    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        (size, size * np)
    }

    fn warm_up_elsewhere(&self) -> bool {
        false
    }

    fn sync_after_loop(&self) -> bool {
        true
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some(((size * np) as f64, Nccl::AllGather.bus_factor(np)))
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        fill_blocks(send, recv, case, job, i);
    }

    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        check_blocks(recv, case, job, i)
    }

    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        Some(verifiable_blocks(case, job, i))
    }
}

/// An allgather's inputs in iteration `i`: this rank's block (in place,
/// at its own place of the output), every element alike, and the rest of
/// the output zero. Also hypercube_perf's, which gathers the same way.
pub(crate) fn fill_blocks(send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
    let (c, dt) = (case.count, case.datatype);
    fill_zero(recv, dt, c * job.np);
    let mine = block_value(job.rank, job.np, i);
    if job.in_place {
        write_values(recv, dt, job.rank * c..(job.rank + 1) * c, |_| mine);
    } else {
        write_values(send, dt, 0..c, |_| mine);
    }
}

/// nccl-tests' data of an allgather (and hypercube_perf): each rank's own
/// stream, its block in place at its place of the output; every rank's
/// block in its place after.
pub(crate) fn verifiable_blocks(case: &SizeCase, job: &Ranks, i: usize) -> Verifiable {
    let (c, np, me) = (case.count, job.np, job.rank);
    let at = if job.in_place { me * c } else { 0 };
    let input = vec![inputs(at, c, 0, Ranks::own_stream(me, i))];
    let expect = (0..np).map(|j| inputs(j * c, c, 0, Ranks::own_stream(j, i))).collect();
    Verifiable::mover(input, job.in_place, 0..c * np, expect)
}

/// An allgather's result: every rank's block in its place.
pub(crate) fn check_blocks(recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
    let c = case.count;
    check_values(recv, case.datatype, 0..c * job.np, |k| block_value(k / c, job.np, i), 1)
}

impl<T: Collectives> Call<T> for Allgather {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, _i: usize) {
        t.allgather(job.operands(send, recv), case.count, case.datatype);
    }
}
