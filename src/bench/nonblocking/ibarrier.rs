//! osu_ibarrier: MPI_Ibarrier timed by OSU's overlap method (see
//! [`crate::bench::nonblocking`]); one row without a size, no validation, and
//! OSU's large-message counts (100 iterations, 10 warm-up) by default.

use crate::backend::NonBlockingCollectives;
use crate::bench::collective::barrier::Barrier;
use crate::bench::collective::Ranks;
use crate::bench::nonblocking::{nonblocking_bench, NonBlocking};
use crate::bench::SizeCase;
use crate::spec::{BenchSpec, IterDefaults, MetricKind};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_ibarrier",
    title: "OSU MPI Non-blocking Barrier Latency Test",
    letters: "hvfmixMtaGPIz",
    metric: MetricKind::OverlapBarrier,
    defaults: IterDefaults { small_iterations: 100, small_warmup: 10, large_iterations: 100, large_warmup: 10 },
    ..crate::bench::collective::barrier::SPEC
};

pub struct Ibarrier;

impl NonBlocking for Ibarrier {
    const SPEC: &'static BenchSpec = &SPEC;
    type Blocking = Barrier;

    #[inline(always)]
    unsafe fn start<T: NonBlockingCollectives>(
        _c: &Barrier,
        t: &T,
        _send: &T::Buf,
        _recv: &mut T::Buf,
        _case: &SizeCase,
        _job: &Ranks,
        _i: usize,
    ) {
        t.start(|t| crate::backend::DataBarrier::barrier(t));
    }

    /// OSU's osu_ibarrier times its first pass back to back.
    fn barrier_in_first_pass() -> bool {
        false
    }
}

nonblocking_bench!(Ibarrier);
