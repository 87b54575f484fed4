//! MPI's neighbourhood collectives over a distributed-graph communicator.

use super::*;

/// The neighbourhood collectives over a distributed-graph communicator;
/// each shared body calls MPI_Neighbor_X or starts MPI_Ineighbor_X.
impl<'w, M: Memory> Mpi<'w, M> {
    /// MPI_Neighbor_allgather, or its v form when the receive layout `rl`
    /// is given; started into the request slot with [`Form::Start`].
    ///
    /// # Safety
    /// Started, the buffers and layout stay untouched until completion.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) unsafe fn neighbor_allgather_as(
        &self,
        form: Form,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        count: usize,
        rl: Option<&Blocks>,
        dt: Datatype,
    ) {
        let (t, bytes, sources) = (self.h.dt(dt), count * dt.size(), g.adjacency().sources.len());
        check_len(send.len(), bytes);
        let (s, r) = (send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void);
        // SAFETY: the send buffer holds one block, the receive buffer one
        // per source (checked here or against the layout, which has an
        // entry per source).
        unsafe {
            match rl {
                None => {
                    check_len(recv.len(), bytes * sources);
                    call_or_start!(
                        self,
                        form,
                        MPI_Neighbor_allgather
                            / MPI_Ineighbor_allgather(s, count as c_int, t, r, count as c_int, t, g.comm())
                    )
                }
                Some(rl) => {
                    assert_eq!(rl.counts.len(), sources);
                    check_len(recv.len(), rl.extent);
                    call_or_start!(
                        self,
                        form,
                        MPI_Neighbor_allgatherv
                            / MPI_Ineighbor_allgatherv(
                                s,
                                count as c_int,
                                t,
                                r,
                                rl.counts.as_ptr(),
                                rl.displs.as_ptr(),
                                t,
                                g.comm()
                            )
                    )
                }
            }
        };
    }

    /// MPI_Neighbor_alltoall, or MPI_Ineighbor_alltoall.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until completion.
    #[inline(always)]
    pub(super) unsafe fn neighbor_alltoall_as(
        &self,
        form: Form,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        count: usize,
        dt: Datatype,
    ) {
        let (t, bytes, adj) = (self.h.dt(dt), count * dt.size(), g.adjacency());
        check_len(send.len(), bytes * adj.destinations.len());
        check_len(recv.len(), bytes * adj.sources.len());
        let (s, r) = (send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void);
        // SAFETY: a block per destination and per source, checked.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Neighbor_alltoall / MPI_Ineighbor_alltoall(s, count as c_int, t, r, count as c_int, t, g.comm())
            )
        };
    }

    /// MPI_Neighbor_alltoallv, or MPI_Ineighbor_alltoallv.
    ///
    /// # Safety
    /// Started, the buffers and layouts stay untouched until completion.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) unsafe fn neighbor_alltoallv_as(
        &self,
        form: Form,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        sl: &Blocks,
        rl: &Blocks,
        dt: Datatype,
    ) {
        let adj = g.adjacency();
        assert!(sl.counts.len() == adj.destinations.len() && rl.counts.len() == adj.sources.len());
        check_len(send.len(), sl.extent);
        check_len(recv.len(), rl.extent);
        let (t, s, r) = (self.h.dt(dt), send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void);
        // SAFETY: a layout entry per neighbour; buffers checked.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Neighbor_alltoallv
                    / MPI_Ineighbor_alltoallv(
                        s,
                        sl.counts.as_ptr(),
                        sl.displs.as_ptr(),
                        t,
                        r,
                        rl.counts.as_ptr(),
                        rl.displs.as_ptr(),
                        t,
                        g.comm()
                    )
            )
        };
    }

    /// MPI_Neighbor_alltoallw, or MPI_Ineighbor_alltoallw: every
    /// neighbour's type `dt`, from the per-rank type array (a rank has at
    /// most np neighbours: the options refuse a graph listing an edge
    /// twice).
    ///
    /// # Safety
    /// Started, the buffers and layouts stay untouched until completion.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) unsafe fn neighbor_alltoallw_as(
        &self,
        form: Form,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        sl: &ByteBlocks,
        rl: &ByteBlocks,
        dt: Datatype,
    ) {
        let (adj, types) = (g.adjacency(), &self.per_rank_types[dt as usize]);
        assert!(sl.counts.len() == adj.destinations.len() && rl.counts.len() == adj.sources.len());
        assert!(sl.counts.len() <= types.len() && rl.counts.len() <= types.len());
        check_len(send.len(), sl.extent);
        check_len(recv.len(), rl.extent);
        let (s, r) = (send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void);
        // SAFETY: a layout entry and a type per neighbour; buffers checked.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Neighbor_alltoallw
                    / MPI_Ineighbor_alltoallw(
                        s,
                        sl.counts.as_ptr(),
                        sl.displs.as_ptr(),
                        types.as_ptr(),
                        r,
                        rl.counts.as_ptr(),
                        rl.displs.as_ptr(),
                        types.as_ptr(),
                        g.comm()
                    )
            )
        };
    }
}

impl<'w, M: Memory> NeighborCollectives for Mpi<'w, M> {
    /// MPI_Dist_graph_create_adjacent on the world's communicator, every
    /// edge of weight 1, no reordering (OSU's call).
    fn neighbor_graph(&self, adjacency: Adjacency) -> NeighborGraph {
        let c = |v: &[usize]| v.iter().map(|&r| r as c_int).collect::<Vec<c_int>>();
        let (sources, destinations) = (c(&adjacency.sources), c(&adjacency.destinations));
        let (sw, dw) = (vec![1 as c_int; sources.len()], vec![1 as c_int; destinations.len()]);
        // SAFETY: reads a constant of the MPI library.
        let mut comm = unsafe { ffi::RSMPI_COMM_NULL };
        // SAFETY: each array has its degree's entries; MPI writes the new
        // communicator's handle.
        unsafe {
            ffi::MPI_Dist_graph_create_adjacent(
                self.comm,
                sources.len() as c_int,
                sources.as_ptr(),
                sw.as_ptr(),
                destinations.len() as c_int,
                destinations.as_ptr(),
                dw.as_ptr(),
                ffi::RSMPI_INFO_NULL,
                0,
                &mut comm,
            )
        };
        NeighborGraph::over(adjacency, comm)
    }

    #[inline(always)]
    fn neighbor_allgather(&self, g: &NeighborGraph, send: &M::Buf, recv: &mut M::Buf, count: usize, dt: Datatype) {
        // SAFETY: blocking: nothing is left in flight.
        unsafe { self.neighbor_allgather_as(self.form(), g, send, recv, count, None, dt) }
    }

    #[inline(always)]
    fn neighbor_allgatherv(
        &self,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        count: usize,
        rl: &Blocks,
        dt: Datatype,
    ) {
        // SAFETY: blocking.
        unsafe { self.neighbor_allgather_as(self.form(), g, send, recv, count, Some(rl), dt) }
    }

    #[inline(always)]
    fn neighbor_alltoall(&self, g: &NeighborGraph, send: &M::Buf, recv: &mut M::Buf, count: usize, dt: Datatype) {
        // SAFETY: blocking.
        unsafe { self.neighbor_alltoall_as(self.form(), g, send, recv, count, dt) }
    }

    #[inline(always)]
    fn neighbor_alltoallv(
        &self,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        sl: &Blocks,
        rl: &Blocks,
        dt: Datatype,
    ) {
        // SAFETY: blocking.
        unsafe { self.neighbor_alltoallv_as(self.form(), g, send, recv, sl, rl, dt) }
    }

    #[inline(always)]
    fn neighbor_alltoallw(
        &self,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        sl: &ByteBlocks,
        rl: &ByteBlocks,
        dt: Datatype,
    ) {
        // SAFETY: blocking.
        unsafe { self.neighbor_alltoallw_as(self.form(), g, send, recv, sl, rl, dt) }
    }
}
