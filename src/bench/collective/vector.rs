//! The vector collectives (osu_allgatherv, osu_alltoallv, osu_alltoallw,
//! osu_gatherv, osu_scatterv) over their plain twins: OSU gives every rank
//! the same count, so their buffers, fills, checks, synchronisation and
//! bandwidths are the twin's, and what a vector collective adds is its
//! layout ([`Blocks`], end to end in rank order) and its call. A file says
//! those in a [`VectorOp`]; [`Vector`] is the [`Collective`] over it.

use crate::backend::{Blocks, VectorCollectives};
use crate::bench::collective::{Call, Collective, Ranks, Sync};
use crate::bench::needs;
use crate::bench::SizeCase;
use crate::buffer::Mismatch;
use crate::spec::{BenchSpec, Op};

/// What one vector collective is beyond its twin.
pub trait VectorOp {
    const SPEC: &'static BenchSpec;
    const OP: Op;
    /// The plain collective whose buffers and patterns it shares.
    type Twin: Collective;
    /// Displacements in bytes (MPI_Alltoallw) rather than elements.
    const BYTE_DISPLACEMENTS: bool = false;
    /// Whether ranks synchronise once more after the last iteration, where
    /// it differs from the twin's (OSU's osu_gatherv does; its osu_gather
    /// does not).
    const SYNC_AFTER_LOOP: Option<bool> = None;

    /// The call, with the size's layout.
    fn call<T: VectorCollectives>(
        t: &T,
        send: &T::Buf,
        recv: &mut T::Buf,
        blocks: &Blocks,
        case: &SizeCase,
        job: &Ranks,
        i: usize,
    );
}

/// A vector collective: its twin and the layout of the current size.
pub struct Vector<V: VectorOp> {
    twin: V::Twin,
    blocks: Blocks,
}

impl<V: VectorOp> Vector<V> {
    /// The layout at the current size (its non-blocking form passes it on).
    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }
}

impl<V: VectorOp> Collective for Vector<V> {
    const SPEC: &'static BenchSpec = V::SPEC;
    const OP: Op = V::OP;
    type Needs = needs::VectorCollectives;

    fn new(np: usize) -> Self {
        Vector { twin: V::Twin::new(np), blocks: Blocks::default() }
    }

    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        self.twin.buffer_bytes(size, np)
    }

    fn prepare(&mut self, case: &SizeCase, job: &Ranks) {
        self.blocks = Blocks::end_to_end(job.np, case.count, case.datatype, V::BYTE_DISPLACEMENTS);
    }

    fn warm_up_elsewhere(&self) -> bool {
        self.twin.warm_up_elsewhere()
    }

    fn sync(&self) -> Sync {
        self.twin.sync()
    }

    fn sync_before_size(&self) -> bool {
        self.twin.sync_before_size()
    }

    fn sync_after_loop(&self) -> bool {
        V::SYNC_AFTER_LOOP.unwrap_or_else(|| self.twin.sync_after_loop())
    }

    fn bandwidth(&self, size: usize, np: usize) -> Option<(f64, f64)> {
        self.twin.bandwidth(size, np)
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        self.twin.fill(send, recv, case, job, i)
    }

    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        self.twin.check(recv, case, job, i)
    }
}

impl<V: VectorOp, T: VectorCollectives> Call<T> for Vector<V> {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, job: &Ranks, i: usize) {
        V::call(t, send, recv, &self.blocks, case, job, i)
    }
}
