//! The persistent collectives (osu_allreduce_persistent, ...): MPI-4's
//! `MPI_X_init` binds the operation to its buffers once per size, outside
//! the timed region; each iteration times `MPI_Start` and `MPI_Wait` on
//! that request, and the request is freed after the size. Everything else
//! (buffers, fills, checks, barriers, OSU's statistics) is the blocking
//! twin's [`CollKernel`]: a persistent benchmark is a [`Collective`] that
//! delegates to its twin and issues through a bound request ([`Call`]).
//!
//! What is bound is one start of the non-blocking twin (osu_iallreduce's
//! `MPI_Iallreduce` becomes `MPI_Allreduce_init`), so a persistent
//! benchmark is a spec and one `persistent_collective!` line.
//!
//! Unlike OSU 7.4, whose osu_allreduce_persistent binds the warm-up
//! buffers and then checks the real ones (so its `-c` always fails), the
//! timed request is bound to the real buffers and the validation
//! repetitions get a request of their own on the warm-up buffer; and `-l`
//! binds in place, as the blocking twin calls. (MPICH 4.0.2's default
//! persistent allgather, gather and scatter are right only on their first
//! start; `-c` says so, for OSU's binaries as for these.)
//!
//! An MPI library without MPI-4's persistent collectives (Open MPI 4.1)
//! refuses in one line before anything is bound
//! ([`PersistentCollectives::persistent_refusal`]), as OSU's configure
//! leaves these programs out there.

pub mod allgather_persistent;
pub mod allgatherv_persistent;
pub mod allreduce_persistent;
pub mod alltoall_persistent;
pub mod alltoallv_persistent;
pub mod alltoallw_persistent;
pub mod barrier_persistent;
pub mod bcast_persistent;
pub mod gather_persistent;
pub mod gatherv_persistent;
pub mod reduce_persistent;
pub mod reduce_scatter_persistent;
pub mod scatter_persistent;
pub mod scatterv_persistent;

use crate::backend::Buffer;
use crate::backend::{Bound, PersistentCollectives};
use crate::bench::collective::{Call, CollBuffers, Collective, Ranks, Sync};
use crate::bench::nonblocking::NonBlocking;
use crate::bench::{needs, SizeCase};
use crate::buffer::Mismatch;
use crate::spec::{BenchSpec, Op};

/// What one persistent collective is: its spec and the non-blocking twin
/// whose start it binds.
pub trait PersistentOp {
    const SPEC: &'static BenchSpec;
    type Twin: NonBlocking;
}

/// The twin's blocking collective, for short.
type Twin<P> = <<P as PersistentOp>::Twin as NonBlocking>::Blocking;

/// A persistent collective `P`: its twin's collective and whether a
/// request of its own serves the validation repetitions.
pub struct Persistent<P: PersistentOp> {
    c: Twin<P>,
    warm_bound: bool,
}

impl<P: PersistentOp> Collective for Persistent<P> {
    const SPEC: &'static BenchSpec = P::SPEC;
    type Needs = needs::PersistentCollectives;
    const OP: Op = <Twin<P> as Collective>::OP;

    fn new(np: usize) -> Self {
        Persistent { c: Twin::<P>::new(np), warm_bound: false }
    }

    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        self.c.buffer_bytes(size, np)
    }

    fn prepare(&mut self, case: &SizeCase, job: &Ranks) {
        self.c.prepare(case, job)
    }

    fn warm_up_elsewhere(&self) -> bool {
        self.c.warm_up_elsewhere()
    }

    fn sync(&self) -> Sync {
        self.c.sync()
    }

    fn in_place_checked(&self) -> bool {
        self.c.in_place_checked()
    }

    fn sync_before_size(&self) -> bool {
        self.c.sync_before_size()
    }

    fn sync_after_loop(&self) -> bool {
        self.c.sync_after_loop()
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        self.c.bandwidth(size, np)
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        self.c.fill(send, recv, case, job, i)
    }

    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        self.c.check(recv, case, job, i)
    }
}

impl<P: PersistentOp> Persistent<P> {
    /// One start of the twin on the receive buffer of `slot`.
    ///
    /// # Safety
    /// As [`NonBlocking::start`]: the buffers stay untouched until the
    /// operation completes.
    #[inline(always)]
    unsafe fn start_twin<T: PersistentCollectives>(
        &self,
        t: &T,
        bufs: &mut CollBuffers<T::Buf>,
        slot: Bound,
        case: &SizeCase,
        job: &Ranks,
        i: usize,
    ) {
        let CollBuffers { send, recv, warm } = bufs;
        let recv = if slot == Bound::Warm { warm } else { recv };
        // SAFETY: passed on from the caller.
        unsafe { P::Twin::start(&self.c, t, send, recv, case, job, i) }
    }
}

impl<P: PersistentOp, T: PersistentCollectives> Call<T> for Persistent<P> {
    /// The operation on these buffers through the timed request (what
    /// [`Call::issue`] does for the real buffers).
    #[inline(always)]
    fn call(&self, t: &T, _: &T::Buf, _: &mut T::Buf, _: &SizeCase, _: &Ranks, _: usize) {
        t.start_bound(Bound::Timed);
        t.wait_bound(Bound::Timed);
    }

    /// Binds the timed request to the real buffers and, when validation
    /// repetitions write elsewhere, one more to the warm-up buffer. The
    /// root is fixed (these programs have no `-k`), so iteration 0's
    /// arguments are every iteration's.
    fn bind(&mut self, t: &T, bufs: &mut CollBuffers<T::Buf>, case: &SizeCase, job: &Ranks, validating: bool) {
        // Only where the warm-up buffer exists (validation repetitions).
        self.warm_bound = validating && self.c.warm_up_elsewhere() && !bufs.warm.is_empty();
        // SAFETY: the buffers and the twin's layouts live in the kernel and
        // stay in place until `unbind` frees the requests at the end of the
        // size; between completions only the untimed fills write to them.
        unsafe {
            t.bind(Bound::Timed, || self.start_twin(t, bufs, Bound::Timed, case, job, 0));
            if self.warm_bound {
                t.bind(Bound::Warm, || self.start_twin(t, bufs, Bound::Warm, case, job, 0));
            }
        }
    }

    fn unbind(&mut self, t: &T) {
        t.free_bound(Bound::Timed);
        t.free_bound(Bound::Warm);
    }

    #[inline(always)]
    fn issue(&self, t: &T, _: &mut CollBuffers<T::Buf>, warm: bool, _: &SizeCase, _: &Ranks, _: usize) {
        let slot = if warm && self.warm_bound { Bound::Warm } else { Bound::Timed };
        t.start_bound(slot);
        t.wait_bound(slot);
    }
}

/// Declares a persistent collective over its non-blocking twin:
/// `persistent_collective!(AllreducePersistent over Iallreduce, SPEC);`
/// makes `AllreducePersistent` the benchmark.
macro_rules! persistent_collective {
    ($(#[$doc:meta])* $name:ident over $twin:ty, $spec:expr) => {
        /// The [`PersistentOp`](crate::bench::persistent::PersistentOp) of
        #[doc = concat!("[`", stringify!($name), "`].")]
        pub struct Op;

        impl $crate::bench::persistent::PersistentOp for Op {
            const SPEC: &'static $crate::spec::BenchSpec = &$spec;
            type Twin = $twin;
        }

        $(#[$doc])*
        pub type $name = $crate::bench::persistent::Persistent<Op>;
    };
}
pub(crate) use persistent_collective;
