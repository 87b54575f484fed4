//! MPI's collectives: one body per collective that calls the blocking
//! function, starts its non-blocking twin or binds its persistent form
//! ([`Form`]), and the capability traits over those bodies.

use super::*;

impl<'w, M: Memory> Mpi<'w, M> {
    /// The (send, receive) pointers of a rooted collective that gathers
    /// every rank's `mine` bytes into `all` bytes at `root` (MPI_Gather,
    /// MPI_Gatherv), checked: at the root the receive buffer holds `all`
    /// and, in place, the send side is MPI_IN_PLACE; elsewhere only the
    /// send side is used (the receive pointer is null).
    #[inline(always)]
    fn gathered_operands(
        &self,
        io: Operands<M::Buf>,
        root: usize,
        mine: usize,
        all: usize,
    ) -> (*const c_void, *mut c_void) {
        if self.world.rank() == root {
            match io {
                Operands::Apart { send, recv } => {
                    check_len(send.len(), mine);
                    check_len(recv.len(), all);
                    (send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void)
                }
                Operands::InPlace(buf) => {
                    check_len(buf.len(), all);
                    (self.h.in_place as *const c_void, buf.as_mut_ptr() as *mut c_void)
                }
            }
        } else {
            let send = match io {
                Operands::Apart { send, .. } => send,
                Operands::InPlace(buf) => &*buf,
            };
            check_len(send.len(), mine);
            (send.as_ptr() as *const c_void, std::ptr::null_mut())
        }
    }

    /// The mirror of [`Mpi::gathered_operands`] for a collective that
    /// scatters `all` bytes from `root` in `mine` bytes to every rank
    /// (MPI_Scatter, MPI_Scatterv): at the root the send buffer holds
    /// `all` and, in place, the receive side is MPI_IN_PLACE; elsewhere
    /// only the receive side is used (the send pointer is null).
    #[inline(always)]
    fn scattered_operands(
        &self,
        io: Operands<M::Buf>,
        root: usize,
        mine: usize,
        all: usize,
    ) -> (*const c_void, *mut c_void) {
        if self.world.rank() == root {
            match io {
                Operands::Apart { send, recv } => {
                    check_len(send.len(), all);
                    check_len(recv.len(), mine);
                    (send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void)
                }
                Operands::InPlace(buf) => {
                    check_len(buf.len(), all);
                    (buf.as_ptr() as *const c_void, self.h.in_place)
                }
            }
        } else {
            let recv = match io {
                Operands::Apart { recv, .. } => recv,
                Operands::InPlace(buf) => buf,
            };
            check_len(recv.len(), mine);
            (std::ptr::null(), recv.as_mut_ptr() as *mut c_void)
        }
    }
}

/// The signature MPI_Allgather and MPI_Alltoall share.
type Exchange = unsafe extern "C" fn(
    *const c_void,
    c_int,
    ffi::MPI_Datatype,
    *mut c_void,
    c_int,
    ffi::MPI_Datatype,
    ffi::MPI_Comm,
) -> c_int;

impl<'w, M: Memory> Mpi<'w, M> {
    /// A collective with the (send, count, type, recv, count, type, comm)
    /// signature; `per_rank` is how many blocks of `count` the buffers hold.
    #[inline(always)]
    fn exchange(&self, f: Exchange, io: Operands<M::Buf>, count: usize, dt: Datatype, send_blocks: usize) {
        let (send, recv) = self.exchange_operands(io, count, dt, send_blocks);
        let t = self.h.dt(dt);
        // SAFETY: both buffers were checked for the elements they carry.
        unsafe { f(send, count as c_int, t, recv, count as c_int, t, self.comm) };
    }

    /// The send and receive addresses of an exchange (blocking or not),
    /// checked: the send side holds `send_blocks` blocks of `count`
    /// elements, the receive side one per rank.
    #[inline(always)]
    fn exchange_operands(
        &self,
        io: Operands<M::Buf>,
        count: usize,
        dt: Datatype,
        send_blocks: usize,
    ) -> (*const c_void, *mut c_void) {
        let need = count * dt.size();
        if let Operands::Apart { send, .. } = &io {
            check_len(send.len(), need * send_blocks);
        }
        let (send, recv) = self.operands(io);
        check_len(recv.len(), need * self.world.size());
        (send, recv.as_mut_ptr() as *mut c_void)
    }
}

/// A collective with the (send, count, type, recv, count, type, comm,
/// request) signature.
type IExchange = unsafe extern "C" fn(
    *const c_void,
    c_int,
    ffi::MPI_Datatype,
    *mut c_void,
    c_int,
    ffi::MPI_Datatype,
    ffi::MPI_Comm,
    *mut ffi::MPI_Request,
) -> c_int;

impl<'w, M: Memory> Mpi<'w, M> {
    /// Starts a non-blocking [`Mpi::exchange`].
    ///
    /// # Safety
    /// The buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn iexchange(
        &self,
        (start, init): (IExchange, IExchange),
        io: Operands<M::Buf>,
        count: usize,
        dt: Datatype,
        send_blocks: usize,
    ) {
        let (send, recv) = self.exchange_operands(io, count, dt, send_blocks);
        let t = self.h.dt(dt);
        let f = match self.form() {
            Form::Init => init,
            _ => start,
        };
        // SAFETY: both buffers were checked; the caller keeps them.
        unsafe { f(send, count as c_int, t, recv, count as c_int, t, self.comm, self.pending.as_ptr()) };
    }
}

impl<'w, M: Memory> Mpi<'w, M> {
    /// MPI_Allreduce, or MPI_Iallreduce into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn allreduce_as(&self, form: Form, io: Operands<M::Buf>, count: usize, dt: Datatype, op: Reduction) {
        let op = self.reduction(op);
        let need = count * dt.size();
        if let Operands::Apart { send, .. } = &io {
            check_len(send.len(), need);
        }
        let (send, recv) = self.operands(io);
        check_len(recv.len(), need);
        // SAFETY: both buffers hold count elements.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Allreduce
                    / MPI_Iallreduce
                    / commbench_allreduce_init(
                        send,
                        recv.as_mut_ptr() as *mut c_void,
                        count as c_int,
                        self.h.dt(dt),
                        op,
                        self.comm,
                    )
            )
        };
    }

    /// MPI_Bcast, or MPI_Ibcast into the request slot.
    ///
    /// # Safety
    /// Started, the buffer stays untouched until the request completes.
    #[inline(always)]
    unsafe fn bcast_as(&self, form: Form, buf: &mut M::Buf, count: usize, dt: Datatype, root: usize) {
        check_len(buf.len(), count * dt.size());
        // SAFETY: buf holds count elements.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Bcast
                    / MPI_Ibcast
                    / commbench_bcast_init(
                        buf.as_mut_ptr() as *mut c_void,
                        count as c_int,
                        self.h.dt(dt),
                        root as c_int,
                        self.comm,
                    )
            )
        };
    }

    /// MPI_Reduce, or MPI_Ireduce into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn reduce_as(
        &self,
        form: Form,
        io: Operands<M::Buf>,
        count: usize,
        dt: Datatype,
        op: Reduction,
        root: usize,
    ) {
        let op = self.reduction(op);
        let need = count * dt.size();
        let is_root = self.world.rank() == root;
        let (send, recv): (*const c_void, &mut M::Buf) = match io {
            Operands::Apart { send, recv } => {
                check_len(send.len(), need);
                (send.as_ptr() as *const c_void, recv)
            }
            Operands::InPlace(buf) if is_root => (self.h.in_place as *const c_void, buf),
            // Other ranks send from their buffer (the receive side is
            // not used there).
            Operands::InPlace(buf) => (buf.as_ptr() as *const c_void, buf),
        };
        check_len(recv.len(), need);
        // SAFETY: every buffer involved holds count elements.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Reduce
                    / MPI_Ireduce
                    / commbench_reduce_init(
                        send,
                        recv.as_mut_ptr() as *mut c_void,
                        count as c_int,
                        self.h.dt(dt),
                        op,
                        root as c_int,
                        self.comm,
                    )
            )
        };
    }

    /// MPI_Reduce_scatter, or MPI_Ireduce_scatter into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn reduce_scatter_as(&self, form: Form, io: Operands<M::Buf>, counts: &[i32], dt: Datatype, op: Reduction) {
        let op = self.reduction(op);
        assert_eq!(counts.len(), self.world.size());
        let total: usize = counts.iter().map(|&c| c as usize).sum::<usize>() * dt.size();
        let mine = counts[self.world.rank()] as usize * dt.size();
        let (send, recv): (*const c_void, &mut M::Buf) = match io {
            Operands::Apart { send, recv } => {
                check_len(send.len(), total);
                check_len(recv.len(), mine);
                (send.as_ptr() as *const c_void, recv)
            }
            // In place the receive buffer holds the whole input vector.
            Operands::InPlace(buf) => {
                check_len(buf.len(), total);
                (self.h.in_place as *const c_void, buf)
            }
        };
        // SAFETY: counts has one entry per rank; buffers checked above.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Reduce_scatter
                    / MPI_Ireduce_scatter
                    / commbench_reduce_scatter_init(
                        send,
                        recv.as_mut_ptr() as *mut c_void,
                        counts.as_ptr(),
                        self.h.dt(dt),
                        op,
                        self.comm,
                    )
            )
        };
    }

    /// MPI_Gather, or MPI_Igather into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn gather_as(&self, form: Form, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        let need = count * dt.size();
        let all = need * self.world.size();
        let (send, recv) = self.gathered_operands(io, root, need, all);
        // SAFETY: the buffers hold what this rank sends and, at the root,
        // receives; elsewhere the receive side is not used.
        let t = self.h.dt(dt);
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Gather
                    / MPI_Igather
                    / commbench_gather_init(send, count as c_int, t, recv, count as c_int, t, root as c_int, self.comm)
            )
        };
    }

    /// MPI_Scatter, or MPI_Iscatter into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn scatter_as(&self, form: Form, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        let need = count * dt.size();
        let all = need * self.world.size();
        let (send, recv) = self.scattered_operands(io, root, need, all);
        // SAFETY: the buffers hold what this rank receives and, at the
        // root, sends; elsewhere the send side is not used.
        let t = self.h.dt(dt);
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Scatter
                    / MPI_Iscatter
                    / commbench_scatter_init(
                        send,
                        count as c_int,
                        t,
                        recv,
                        count as c_int,
                        t,
                        root as c_int,
                        self.comm
                    )
            )
        };
    }

    /// MPI_Gatherv, or MPI_Igatherv into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn gatherv_as(
        &self,
        form: Form,
        io: Operands<M::Buf>,
        count: usize,
        blocks: &Blocks,
        dt: Datatype,
        root: usize,
    ) {
        let need = count * dt.size();
        assert_eq!(blocks.counts.len(), self.world.size());
        let (send, recv) = self.gathered_operands(io, root, need, blocks.extent);
        let t = self.h.dt(dt);
        // SAFETY: the layout has one entry per rank; the buffers hold what
        // this rank sends and, at the root, every block of the layout.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Gatherv
                    / MPI_Igatherv
                    / commbench_gatherv_init(
                        send,
                        count as c_int,
                        t,
                        recv,
                        blocks.counts.as_ptr(),
                        blocks.displs.as_ptr(),
                        t,
                        root as c_int,
                        self.comm,
                    )
            )
        };
    }

    /// MPI_Scatterv, or MPI_Iscatterv into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn scatterv_as(
        &self,
        form: Form,
        io: Operands<M::Buf>,
        blocks: &Blocks,
        count: usize,
        dt: Datatype,
        root: usize,
    ) {
        let need = count * dt.size();
        assert_eq!(blocks.counts.len(), self.world.size());
        let (send, recv) = self.scattered_operands(io, root, need, blocks.extent);
        let t = self.h.dt(dt);
        // SAFETY: as in gatherv, the other way round.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Scatterv
                    / MPI_Iscatterv
                    / commbench_scatterv_init(
                        send,
                        blocks.counts.as_ptr(),
                        blocks.displs.as_ptr(),
                        t,
                        recv,
                        count as c_int,
                        t,
                        root as c_int,
                        self.comm,
                    )
            )
        };
    }

    /// MPI_Allgatherv, or MPI_Iallgatherv into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn allgatherv_as(&self, form: Form, io: Operands<M::Buf>, count: usize, blocks: &Blocks, dt: Datatype) {
        assert_eq!(blocks.counts.len(), self.world.size());
        if let Operands::Apart { send, .. } = &io {
            check_len(send.len(), count * dt.size());
        }
        let (send, recv) = self.operands(io);
        check_len(recv.len(), blocks.extent);
        let t = self.h.dt(dt);
        // SAFETY: the layout has one entry per rank; both buffers checked.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Allgatherv
                    / MPI_Iallgatherv
                    / commbench_allgatherv_init(
                        send,
                        count as c_int,
                        t,
                        recv.as_mut_ptr() as *mut c_void,
                        blocks.counts.as_ptr(),
                        blocks.displs.as_ptr(),
                        t,
                        self.comm,
                    )
            )
        };
    }

    /// MPI_Alltoallv, or MPI_Ialltoallv into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn alltoallv_as(&self, form: Form, io: Operands<M::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        let (s, r) = self.alltoall_operands(io, send, recv);
        let t = self.h.dt(dt);
        // SAFETY: both layouts have one entry per rank; buffers checked.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Alltoallv
                    / MPI_Ialltoallv
                    / commbench_alltoallv_init(
                        s,
                        send.counts.as_ptr(),
                        send.displs.as_ptr(),
                        t,
                        r,
                        recv.counts.as_ptr(),
                        recv.displs.as_ptr(),
                        t,
                        self.comm,
                    )
            )
        };
    }

    /// MPI_Alltoallw, or MPI_Ialltoallw into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn alltoallw_as(&self, form: Form, io: Operands<M::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        let (s, r) = self.alltoall_operands(io, send, recv);
        let types = self.per_rank_types[dt as usize].as_ptr();
        // SAFETY: both layouts and the type array have one entry per rank;
        // buffers checked.
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Alltoallw
                    / MPI_Ialltoallw
                    / commbench_alltoallw_init(
                        s,
                        send.counts.as_ptr(),
                        send.displs.as_ptr(),
                        types,
                        r,
                        recv.counts.as_ptr(),
                        recv.displs.as_ptr(),
                        types,
                        self.comm,
                    )
            )
        };
    }

    /// MPI_Reduce_scatter_block, or MPI_Ireduce_scatter_block into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn reduce_scatter_block_sum_as(&self, form: Form, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        let mine = count * dt.size();
        let total = mine * self.world.size();
        if let Operands::Apart { send, .. } = &io {
            check_len(send.len(), total);
        }
        let in_place = matches!(io, Operands::InPlace(_));
        let (send, recv) = self.operands(io);
        check_len(recv.len(), if in_place { total } else { mine });
        // SAFETY: the input holds np blocks of count elements, the output
        // one (in place, all of them).
        unsafe {
            call_or_start!(
                self,
                form,
                MPI_Reduce_scatter_block
                    / MPI_Ireduce_scatter_block
                    / commbench_reduce_scatter_block_init(
                        send,
                        recv.as_mut_ptr() as *mut c_void,
                        count as c_int,
                        self.h.dt(dt),
                        self.h.sum,
                        self.comm,
                    )
            )
        };
    }
}

impl<'w, M: Memory> Collectives for Mpi<'w, M> {
    #[inline(always)]
    fn allreduce(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, op: Reduction) {
        // SAFETY: a blocking call.
        unsafe { self.allreduce_as(self.form(), io, count, dt, op) }
    }

    #[inline(always)]
    fn reduce(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, op: Reduction, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.reduce_as(self.form(), io, count, dt, op, root) }
    }

    #[inline(always)]
    fn reduce_scatter(&self, io: Operands<M::Buf>, counts: &[i32], dt: Datatype, op: Reduction) {
        // SAFETY: a blocking call.
        unsafe { self.reduce_scatter_as(self.form(), io, counts, dt, op) }
    }

    #[inline(always)]
    fn allgather(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        match self.form() {
            Form::Now => self.exchange(ffi::MPI_Allgather, io, count, dt, 1),
            // SAFETY: started inside `start`, whose caller keeps the buffers.
            _ => unsafe { self.iexchange((ffi::MPI_Iallgather, init::commbench_allgather_init), io, count, dt, 1) },
        }
    }

    #[inline(always)]
    fn alltoall(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        let np = self.world.size();
        match self.form() {
            Form::Now => self.exchange(ffi::MPI_Alltoall, io, count, dt, np),
            // SAFETY: started inside `start`, whose caller keeps the buffers.
            _ => unsafe { self.iexchange((ffi::MPI_Ialltoall, init::commbench_alltoall_init), io, count, dt, np) },
        }
    }

    #[inline(always)]
    fn bcast(&self, buf: &mut M::Buf, count: usize, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.bcast_as(self.form(), buf, count, dt, root) }
    }

    #[inline(always)]
    fn gather(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.gather_as(self.form(), io, count, dt, root) }
    }

    #[inline(always)]
    fn scatter(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.scatter_as(self.form(), io, count, dt, root) }
    }

    #[inline(always)]
    /// MPI_Alltoallv over the counts laid end to end. No front end runs
    /// it over MPI (nccl-tests' alltoallv is NCCL's); MPI's counts and
    /// displacements are `int`s, and a layout beyond them ends the run.
    fn alltoallv_counts(&self, io: Operands<M::Buf>, send: &[usize], recv: &[usize], dt: Datatype) {
        let layout = |counts: &[usize]| {
            crate::backend::Blocks::end_to_end_of(counts, dt).unwrap_or_else(|| {
                crate::fatal::raise(format!(
                    "MPI_Alltoallv cannot lay out {} elements of {} in one call (its counts are ints)",
                    counts.iter().sum::<usize>(),
                    dt.mpi_name()
                ))
            })
        };
        let (send, recv) = (layout(send), layout(recv));
        // SAFETY: a blocking call.
        unsafe { self.alltoallv_as(self.form(), io, &send, &recv, dt) }
    }

    fn sendrecv(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        // No benchmark starts it in a non-blocking or persistent form.
        debug_assert!(matches!(self.form(), Form::Now));
        let (next, prev) = crate::backend::ring_neighbours(self.world.rank(), self.world.size());
        let (next, prev) = (next as c_int, prev as c_int);
        let need = count * dt.size();
        let (t, n) = (self.h.dt(dt), count as c_int);
        match io {
            Operands::Apart { send, recv } => {
                check_len(send.len(), need);
                check_len(recv.len(), need);
                // SAFETY: both buffers hold `count` elements (checked).
                unsafe {
                    ffi::MPI_Sendrecv(
                        send.as_ptr() as *const c_void,
                        n,
                        t,
                        next,
                        SENDRECV_TAG,
                        recv.as_mut_ptr() as *mut c_void,
                        n,
                        t,
                        prev,
                        SENDRECV_TAG,
                        self.comm,
                        ffi::RSMPI_STATUS_IGNORE,
                    )
                };
            }
            Operands::InPlace(buf) => {
                check_len(buf.len(), need);
                // SAFETY: the buffer holds `count` elements (checked).
                unsafe {
                    ffi::MPI_Sendrecv_replace(
                        buf.as_mut_ptr() as *mut c_void,
                        n,
                        t,
                        next,
                        SENDRECV_TAG,
                        prev,
                        SENDRECV_TAG,
                        self.comm,
                        ffi::RSMPI_STATUS_IGNORE,
                    )
                };
            }
        }
    }
}

/// The tag of [`Collectives::sendrecv`]'s messages (a collective
/// benchmark has no other point-to-point message in flight beside them).
const SENDRECV_TAG: c_int = 7;

impl<'w, M: Memory> DataBarrier for Mpi<'w, M> {
    #[inline(always)]
    fn barrier(&self) {
        match self.form() {
            Form::Now => self.world.barrier(),
            // SAFETY: the request slot is this transport's.
            Form::Start => {
                unsafe { ffi::MPI_Ibarrier(self.comm, self.pending.as_ptr()) };
            }
            Form::Init => {
                unsafe { init::commbench_barrier_init(self.comm, self.pending.as_ptr()) };
            }
        }
    }
}

impl<'w, M: Memory> VectorCollectives for Mpi<'w, M> {
    #[inline(always)]
    fn gatherv(&self, io: Operands<M::Buf>, count: usize, blocks: &Blocks, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.gatherv_as(self.form(), io, count, blocks, dt, root) }
    }

    #[inline(always)]
    fn scatterv(&self, io: Operands<M::Buf>, blocks: &Blocks, count: usize, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.scatterv_as(self.form(), io, blocks, count, dt, root) }
    }

    #[inline(always)]
    fn allgatherv(&self, io: Operands<M::Buf>, count: usize, blocks: &Blocks, dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.allgatherv_as(self.form(), io, count, blocks, dt) }
    }

    #[inline(always)]
    fn alltoallv(&self, io: Operands<M::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.alltoallv_as(self.form(), io, send, recv, dt) }
    }

    #[inline(always)]
    fn alltoallw(&self, io: Operands<M::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.alltoallw_as(self.form(), io, send, recv, dt) }
    }

    #[inline(always)]
    fn reduce_scatter_block_sum(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.reduce_scatter_block_sum_as(self.form(), io, count, dt) }
    }
}

impl<'w, M: Memory> NonBlockingCollectives for Mpi<'w, M> {
    /// The blocking call `call` makes finds [`Mpi::form`] saying start (or
    /// bind, inside [`PersistentCollectives::bind`]) and calls MPI_IX (or
    /// MPI_X_init) with its arguments and the request slot.
    #[inline(always)]
    unsafe fn start(&self, call: impl FnOnce(&Self)) {
        // SAFETY: reads a constant of the MPI library.
        let null = unsafe { ffi::RSMPI_REQUEST_NULL };
        debug_assert!(self.pending.get() == null, "a start while another is in flight");
        // Inside `bind` the call binds instead (`Init` stays).
        let outer = self.mode.get();
        if let Form::Now = outer {
            self.mode.set(Form::Start);
        }
        call(self);
        self.mode.set(outer);
        debug_assert!(self.pending.get() != null, "a start whose closure made no collective call");
    }

    #[inline(always)]
    fn nb_test(&self) -> bool {
        let mut flag: c_int = 0;
        // SAFETY: the request slot is this transport's (MPI_REQUEST_NULL
        // when nothing is in flight, which tests as done).
        unsafe { ffi::MPI_Test(self.pending.as_ptr(), &mut flag, ffi::RSMPI_STATUS_IGNORE) };
        flag != 0
    }

    #[inline(always)]
    fn nb_wait(&self) {
        // SAFETY: as in nb_test.
        unsafe { ffi::MPI_Wait(self.pending.as_ptr(), ffi::RSMPI_STATUS_IGNORE) };
    }
}
