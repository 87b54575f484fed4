//! osu_bcast: MPI_Bcast from rank 0 (OSU's osu_bcast has no root option;
//! broadcast_perf's `-r` chooses another). As in OSU, there is no barrier
//! before the first iteration of a size. busbw = algbw.

use crate::backend::Collectives;
use crate::bench::collective::{inputs, Call, Collective, Ranks, Verifiable};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::{check_values, fill_zero, write_values, Mismatch};
use crate::report::nccl_tests::Collective as Nccl;
use crate::spec::{BenchSpec, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_bcast",
    title: "OSU MPI Broadcast Latency Test",
    letters: "hvfmixMacuGDPTIz",
    ..crate::bench::collective::allreduce::SPEC
};

/// `apart`: nccl-tests' table, whose out-of-place cell broadcasts from
/// the root's send buffer into every receive buffer (OSU's has one).
pub struct Bcast {
    apart: bool,
}

fn root_value(i: usize) -> u64 {
    1 + 2 * (i as u64 + 1)
}

impl Collective for Bcast {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Bcast;
    type Needs = needs::Collectives;

    fn new(_np: usize) -> Self {
        Bcast { apart: false }
    }

    fn for_run(opts: &crate::options::Options, _np: usize) -> Self {
        Bcast { apart: opts.format == crate::options::Format::NcclTests }
    }

    /// One buffer (the receive side), sent from at the root; nccl-tests'
    /// two.
    fn buffer_bytes(&self, size: usize, _np: usize) -> (usize, usize) {
        (if self.apart { size } else { 0 }, size)
    }

    fn warm_up_elsewhere(&self) -> bool {
        false
    }

    fn sync_before_size(&self) -> bool {
        false
    }

    fn sync_after_loop(&self) -> bool {
        true
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        Some((size as f64, Nccl::Broadcast.bus_factor(np)))
    }

    /// The root's input (in its send buffer out of place, whose receive
    /// buffer then starts clear like every other rank's).
    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        let apart = self.apart && !job.in_place;
        fill_zero(recv, case.datatype, case.count);
        if job.rank == job.root_of(i) {
            let input = if apart { send } else { recv };
            write_values(input, case.datatype, 0..case.count, |_| root_value(i));
        }
    }

    fn check(&self, recv: &[u8], case: &SizeCase, _job: &Ranks, i: usize) -> Option<Mismatch> {
        check_values(recv, case.datatype, 0..case.count, |_| root_value(i), 1)
    }

    /// nccl-tests' data: the root's stream, at every rank.
    fn verifiable(&self, case: &SizeCase, job: &Ranks, i: usize) -> Option<Verifiable> {
        let (c, s) = (case.count, Ranks::shared_stream(i));
        let input = if job.rank == job.root_of(i) { vec![inputs(0, c, 0, s)] } else { Vec::new() };
        let in_recv = job.in_place || !self.apart;
        Some(Verifiable::mover(input, in_recv, 0..c, vec![inputs(0, c, 0, s)]))
    }
}

impl<T: Collectives> Call<T> for Bcast {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, i: usize) {
        if self.apart {
            t.bcast_apart(job.operands(send, recv), case.count, case.datatype, job.root_of(i));
        } else {
            t.bcast(recv, case.count, case.datatype, job.root_of(i));
        }
    }
}
