//! osu_barrier: the time of the barrier itself, with no other
//! synchronisation and no message size.

use crate::bench::collective::{Call, Collective, Ranks, Sync};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::Mismatch;
use crate::spec::{BenchSpec, MetricKind, Op};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_barrier",
    title: "OSU MPI Barrier Latency Test",
    letters: "hvfmixMauGPIz",
    metric: MetricKind::Barrier,
    ..crate::bench::collective::allreduce::SPEC
};

pub struct Barrier;

impl Collective for Barrier {
    const SPEC: &'static BenchSpec = &SPEC;
    const OP: Op = Op::Barrier;
    type Needs = needs::Barrier;

    fn new(_np: usize) -> Self {
        Barrier
    }

    fn buffer_bytes(&self, _size: usize, _np: usize) -> (usize, usize) {
        (0, 0)
    }

    fn warm_up_elsewhere(&self) -> bool {
        false
    }

    fn sync(&self) -> Sync {
        Sync::None
    }

    fn sync_after_loop(&self) -> bool {
        true
    }

    fn bandwidth(&self, _size: usize, _np: usize) -> Option<(f64, f64)> {
        None
    }

    /// osu_barrier has no validation (-c is not one of its options).
    fn fill(&self, _send: &mut [u8], _recv: &mut [u8], _case: &SizeCase, _job: &Ranks, _i: usize) {}

    fn check(&self, _recv: &[u8], _case: &SizeCase, _job: &Ranks, _i: usize) -> Option<Mismatch> {
        None
    }
}

impl<T: crate::backend::DataBarrier> Call<T> for Barrier {
    #[inline(always)]
    fn call(&self, t: &T, _send: &T::Buf, _recv: &mut T::Buf, _case: &SizeCase, _job: &Ranks, _i: usize) {
        t.barrier();
    }
}
