//! osu_scatter: MPI_Scatter of size bytes to every rank from a root (rank
//! 0, `-k fixed:R` or `-k rotate`); every rank checks the block it got.
//! algbw counts the scattered size * np bytes; busbw = algbw * (n-1)/n.

use crate::backend::Collectives;
use crate::bench::collective::{inputs, Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::{check_values, fill_zero, write_values, Mismatch};
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec =
    BenchSpec { name: "osu_scatter", title: "OSU MPI Scatter Latency Test", ..crate::bench::collective::gather::SPEC };

pub struct Scatter;

/// The value of every element of the block for rank b in iteration i.
fn block_value(b: usize, i: usize) -> u64 {
    b as u64 + (i as u64 + 1) * (b as u64 + 1)
}

impl Collective for Scatter {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Scatter;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        Scatter
    }

    /// The receive buffer has room for every block: in place, the root
    /// scatters from it.
    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        (size * np, size * np)
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some(((size * np) as f64, Nccl::Scatter.bus_factor(np)))
    }

    /// Every rank writes the blocks (only the root's are sent); in place
    /// they go into the receive buffer.
    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        let (c, dt) = (case.count, case.datatype);
        if job.in_place && job.rank == job.root_of(i) {
            write_values(recv, dt, 0..c * job.np, |k| block_value(k / c, i));
        } else {
            write_values(send, dt, 0..c * job.np, |k| block_value(k / c, i));
            fill_zero(recv, dt, c);
        }
    }

    /// This rank's block: at the start of the receive buffer, or where it
    /// stayed at an in-place root.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        let (c, me) = (case.count, job.rank);
        let first = if job.in_place && me == job.root_of(i) { me * c } else { 0 };
        check_values(recv, case.datatype, first..first + c, |_| block_value(me, i), 1)
    }

    /// nccl-tests' data: the root's stream; each rank receives its block
    /// of it (the root, in place, where the block lies).
    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        let (c, me, s) = (case.count, job.rank, Ranks::shared_stream(i));
        let root = me == job.root_of(i);
        let input = if root { vec![inputs(0, c * job.np, 0, s)] } else { Vec::new() };
        let first = if job.in_place && root { me * c } else { 0 };
        let expect = vec![inputs(first, c, (me * c) as u64, s)];
        Some(Verifiable::mover(input, job.in_place && root, first..first + c, expect))
    }
}

impl<T: Collectives> Call<T> for Scatter {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, i: usize) {
        let root = job.root_of(i);
        let io = job.rooted(send, recv, root);
        t.scatter(io, case.count, case.datatype, root);
    }
}
