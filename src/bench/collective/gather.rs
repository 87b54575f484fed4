//! osu_gather: MPI_Gather of size bytes from every rank to a root (rank 0,
//! `-k fixed:R` or `-k rotate`). Only the root of an iteration holds, and
//! checks, the result. algbw counts the gathered size * np bytes; busbw =
//! algbw * (n-1)/n.
//!
//! Unlike OSU, the untimed validation repetitions write into the warm-up
//! buffer, so the check is about the timed call; and the root's receive
//! buffer is cleared, not pre-filled, before each validated iteration.

use crate::backend::Collectives;
use crate::bench::collective::allgather::block_value;
use crate::bench::collective::{inputs, Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::{check_values, fill_zero, write_values, Mismatch};
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_gather",
    title: "OSU MPI Gather Latency Test",
    letters: "hvfmixMacuGDPTIlzk",
    buffer_times_np: true,
    accel_slot: true,
    one_sided: None,
    ..crate::bench::collective::allreduce::SPEC
};

pub struct Gather;

impl Collective for Gather {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Gather;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        Gather
    }

    /// Every rank has room for the gathered vector, as in OSU.
    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        (size, size * np)
    }

    /// In place, the root's own block already sits in its receive buffer.
    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some(((size * np) as f64, Nccl::Gather.bus_factor(np)))
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        let (c, dt, me) = (case.count, case.datatype, job.rank);
        let mine = block_value(me, job.np, i);
        if job.in_place && me == job.root_of(i) {
            fill_zero(recv, dt, c * job.np);
            write_values(recv, dt, me * c..(me + 1) * c, |_| mine);
        } else {
            write_values(send, dt, 0..c, |_| mine);
            fill_zero(recv, dt, c * job.np);
        }
    }

    /// Block b of the root's result came from rank b.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        if job.rank != job.root_of(i) {
            return None;
        }
        let c = case.count;
        check_values(recv, case.datatype, 0..c * job.np, |k| block_value(k / c, job.np, i), 1)
    }

    /// nccl-tests' data: rank r sends block r of one stream; the root
    /// receives the whole stream, the others' receive buffers stay clear.
    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        let (c, np, me, s) = (case.count, job.np, job.rank, Ranks::shared_stream(i));
        let root = me == job.root_of(i);
        let in_recv = job.in_place && root;
        let input = vec![inputs(if in_recv { me * c } else { 0 }, c, (me * c) as u64, s)];
        let expect = if root { vec![inputs(0, c * np, 0, s)] } else { Vec::new() };
        Some(Verifiable::mover(input, in_recv, 0..c * np, expect))
    }
}

impl<T: Collectives> Call<T> for Gather {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, i: usize) {
        let root = job.root_of(i);
        let io = job.rooted(send, recv, root);
        t.gather(io, case.count, case.datatype, root);
    }
}
