//! MPI: the data plane as OSU times it. Each operation is the one C call
//! OSU makes (MPI_Send/Recv, Isend/Irecv + Waitall, Barrier, the
//! collectives), timed with `MPI_Wtime`; the length checks are one compare
//! each. The buffers are host memory ([`MpiHost`]: page-aligned, as OSU's)
//! or another [`Memory`] MPI can read and write, such as CUDA device
//! memory for a CUDA-aware MPI.

use std::ffi::{c_int, c_void};

use mpi::ffi;

use super::shim::{init, Handles};
use super::world::World;
use super::{
    check_len, Adjacency, Blocks, Bound, Buffer, ByteBlocks, Collectives, Control, DataBarrier, Envelope, HostMemory,
    Lane, Memory, NeighborCollectives, NeighborGraph, NonBlockingCollectives, Operands, PersistentCollectives,
    PersistentPointToPoint, RawBuffer, Threaded, Transport, VectorCollectives,
};
use crate::backend::buffer_set::BufferSet;
use crate::datatype::Datatype;

/// MPI point-to-point and collectives over buffers in memory `M`, on the
/// world's communicator.
pub struct Mpi<'w, M: Memory = HostMemory> {
    world: &'w World,
    comm: ffi::MPI_Comm,
    h: Handles,
    mem: M,
    /// Each datatype's handle once per rank: the type arrays of
    /// MPI_Alltoallw, built here so that no call allocates.
    per_rank_types: [Vec<ffi::MPI_Datatype>; 3],
    /// The request of the non-blocking collective in flight.
    pending: std::cell::Cell<ffi::MPI_Request>,
    /// Set while [`PersistentCollectives::bind`] runs: a start binds.
    binding: std::cell::Cell<bool>,
    /// The persistent requests, by [`Bound`] slot.
    bound: [std::cell::Cell<ffi::MPI_Request>; 2],
}

/// MPI on host memory: what OSU's non-GPU build measures.
pub(crate) type MpiHost<'w> = Mpi<'w, HostMemory>;

impl<'w> MpiHost<'w> {
    pub fn new(world: &'w World) -> MpiHost<'w> {
        Mpi::with_memory(world, HostMemory)
    }
}

impl<'w, M: Memory> Mpi<'w, M> {
    /// MPI moving buffers of `mem`.
    pub(crate) fn with_memory(world: &'w World, mem: M) -> Mpi<'w, M> {
        let h = world.handles();
        let np = world.size();
        let per_rank_types = Datatype::ALL.map(|dt| vec![h.dt(dt); np]);
        // SAFETY: reads a constant of the MPI library.
        let null = unsafe { ffi::RSMPI_REQUEST_NULL };
        let (pending, binding) = (std::cell::Cell::new(null), std::cell::Cell::new(false));
        let bound = [std::cell::Cell::new(null), std::cell::Cell::new(null)];
        Mpi { world, comm: world.comm(), h, mem, per_rank_types, pending, binding, bound }
    }

    /// How a non-blocking start runs: started, or bound while
    /// [`PersistentCollectives::bind`] runs.
    #[inline(always)]
    fn start_form(&self) -> Form {
        if self.binding.get() {
            Form::Init
        } else {
            Form::Start
        }
    }

    /// Where the buffers live.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// The communicator the operations use (windows are made on it).
    pub(super) fn comm(&self) -> ffi::MPI_Comm {
        self.comm
    }

    /// The MPI handle of an element type for the one-sided calls (MPI_CHAR
    /// for put and get, `-T`'s for the atomics).
    #[inline(always)]
    pub(super) fn mpi_type(&self, dt: Datatype) -> ffi::MPI_Datatype {
        self.h.dt(dt)
    }

    /// MPI_SUM, the operation of the one-sided accumulates.
    #[inline(always)]
    pub(super) fn sum_op(&self) -> ffi::MPI_Op {
        self.h.sum
    }

    /// The (send, receive) pointers of an all-to-all with layouts, their
    /// buffers checked against the layouts; in place, the send side is
    /// MPI_IN_PLACE and the receive buffer holds the input.
    #[inline(always)]
    fn alltoall_operands(&self, io: Operands<M::Buf>, send: &Blocks, recv: &Blocks) -> (*const c_void, *mut c_void) {
        let np = self.world.size();
        assert!(send.counts.len() == np && recv.counts.len() == np);
        if let Operands::Apart { send: s, .. } = &io {
            check_len(s.len(), send.extent);
        }
        let (s, r) = self.operands(io);
        check_len(r.len(), recv.extent);
        (s, r.as_mut_ptr() as *mut c_void)
    }

    /// (send pointer, receive buffer) of a collective; in place, the send
    /// side is MPI_IN_PLACE.
    #[inline(always)]
    fn operands<'a>(&self, io: Operands<'a, M::Buf>) -> (*const c_void, &'a mut M::Buf) {
        match io {
            Operands::Apart { send, recv } => (send.as_ptr() as *const c_void, recv),
            Operands::InPlace(buf) => (self.h.in_place as *const c_void, buf),
        }
    }
}

/// Request slots reused by every windowed step of a run.
pub struct Requests {
    reqs: Vec<ffi::MPI_Request>,
}

/// Posts one operation per message slot of a window into
/// `reqs[offset..offset + n]`: `post` gets the slot's buffer (`addr`, asked
/// once when all slots share one buffer) and its request.
#[inline(always)]
fn post_window(
    reqs: &mut Requests,
    offset: usize,
    n: usize,
    distinct: usize,
    mut addr: impl FnMut(usize) -> *mut c_void,
    post: impl Fn(*mut c_void, &mut ffi::MPI_Request),
) {
    let slots = &mut reqs.reqs[offset..offset + n];
    if distinct == 1 {
        let p = addr(0);
        for req in slots {
            post(p, req);
        }
    } else {
        for (j, req) in slots.iter_mut().enumerate() {
            post(addr(j), req);
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
        let f = if self.binding.get() { init } else { start };
        // SAFETY: both buffers were checked; the caller keeps them.
        unsafe { f(send, count as c_int, t, recv, count as c_int, t, self.comm, self.pending.as_ptr()) };
    }
}

/// Which form of a collective a shared body calls: the blocking MPI
/// function, or its non-blocking twin with the transport's request slot
/// (same arguments, one more).
/// A third form binds the operation into the request slot as a persistent
/// request instead (MPI-4's MPI_X_init, through the shim), what
/// [`PersistentCollectives::bind`] asks for.
#[derive(Clone, Copy)]
enum Form {
    Now,
    Start,
    Init,
}

/// `call_or_start!(self, form, MPI_X / MPI_IX / commbench_x_init(args))`:
/// MPI_X(args), or MPI_IX(args, &pending), or the shim's MPI_X_init(args,
/// &pending).
macro_rules! call_or_start {
    // Without a persistent form (the neighbourhood collectives: OSU has no
    // persistent ones, so nothing binds them).
    ($me:ident, $form:expr, $now:ident / $start:ident($($arg:expr),* $(,)?)) => {
        match $form {
            Form::Now => ffi::$now($($arg),*),
            Form::Start => ffi::$start($($arg,)* $me.pending.as_ptr()),
            Form::Init => unreachable!("no persistent form is bound"),
        }
    };
    ($me:ident, $form:expr, $now:ident / $start:ident / $init:ident($($arg:expr),* $(,)?)) => {
        match $form {
            Form::Now => ffi::$now($($arg),*),
            Form::Start => ffi::$start($($arg,)* $me.pending.as_ptr()),
            Form::Init => super::shim::init::$init($($arg,)* $me.pending.as_ptr()),
        }
    };
}

impl<'w, M: Memory> Mpi<'w, M> {
    /// MPI_Allreduce, or MPI_Iallreduce into the request slot.
    ///
    /// # Safety
    /// Started, the buffers stay untouched until the request completes.
    #[inline(always)]
    unsafe fn allreduce_sum_as(&self, form: Form, io: Operands<M::Buf>, count: usize, dt: Datatype) {
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
                        self.h.sum,
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
    unsafe fn reduce_sum_as(&self, form: Form, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
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
                        self.h.sum,
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
    unsafe fn reduce_scatter_sum_as(&self, form: Form, io: Operands<M::Buf>, counts: &[i32], dt: Datatype) {
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
                        self.h.sum,
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
        let (send, recv): (*const c_void, *mut c_void) = if self.world.rank() == root {
            match io {
                Operands::Apart { send, recv } => {
                    check_len(send.len(), need);
                    check_len(recv.len(), all);
                    (send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void)
                }
                Operands::InPlace(buf) => {
                    check_len(buf.len(), all);
                    (self.h.in_place as *const c_void, buf.as_mut_ptr() as *mut c_void)
                }
            }
        } else {
            // Only the root receives.
            let send = match io {
                Operands::Apart { send, .. } => send,
                Operands::InPlace(buf) => &*buf,
            };
            check_len(send.len(), need);
            (send.as_ptr() as *const c_void, std::ptr::null_mut())
        };
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
        let (send, recv): (*const c_void, *mut c_void) = if self.world.rank() == root {
            match io {
                Operands::Apart { send, recv } => {
                    check_len(send.len(), all);
                    check_len(recv.len(), need);
                    (send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void)
                }
                Operands::InPlace(buf) => {
                    check_len(buf.len(), all);
                    (buf.as_ptr() as *const c_void, self.h.in_place)
                }
            }
        } else {
            // Only the root sends.
            let recv = match io {
                Operands::Apart { recv, .. } => recv,
                Operands::InPlace(buf) => buf,
            };
            check_len(recv.len(), need);
            (std::ptr::null(), recv.as_mut_ptr() as *mut c_void)
        };
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
        let (send, recv): (*const c_void, *mut c_void) = if self.world.rank() == root {
            match io {
                Operands::Apart { send, recv } => {
                    check_len(send.len(), need);
                    check_len(recv.len(), blocks.extent);
                    (send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void)
                }
                Operands::InPlace(buf) => {
                    check_len(buf.len(), blocks.extent);
                    (self.h.in_place as *const c_void, buf.as_mut_ptr() as *mut c_void)
                }
            }
        } else {
            let send = match io {
                Operands::Apart { send, .. } => send,
                Operands::InPlace(buf) => &*buf,
            };
            check_len(send.len(), need);
            (send.as_ptr() as *const c_void, std::ptr::null_mut())
        };
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
        let (send, recv): (*const c_void, *mut c_void) = if self.world.rank() == root {
            match io {
                Operands::Apart { send, recv } => {
                    check_len(send.len(), blocks.extent);
                    check_len(recv.len(), need);
                    (send.as_ptr() as *const c_void, recv.as_mut_ptr() as *mut c_void)
                }
                Operands::InPlace(buf) => {
                    check_len(buf.len(), blocks.extent);
                    (buf.as_ptr() as *const c_void, self.h.in_place)
                }
            }
        } else {
            let recv = match io {
                Operands::Apart { recv, .. } => recv,
                Operands::InPlace(buf) => buf,
            };
            check_len(recv.len(), need);
            (std::ptr::null(), recv.as_mut_ptr() as *mut c_void)
        };
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

impl<'w, M: Memory> Transport for Mpi<'w, M> {
    type World = World;
    type Buf = M::Buf;
    type Mem = M;
    type Requests = Requests;

    const BACKEND: &'static str = "mpi";

    fn world(&self) -> &World {
        self.world
    }

    fn memory(&self) -> &M {
        &self.mem
    }

    fn requests(&self, n: usize) -> Requests {
        // SAFETY: reading an extern constant.
        let null = unsafe { ffi::RSMPI_REQUEST_NULL };
        Requests { reqs: vec![null; n.max(1)] }
    }

    #[inline(always)]
    fn now(&self) -> f64 {
        self.world.wtime()
    }

    fn tick(&self) -> f64 {
        self.world.wtick()
    }

    #[inline(always)]
    fn send(&self, buf: &M::Buf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        // SAFETY: the buffer holds count elements (checked above).
        unsafe {
            ffi::MPI_Send(
                buf.as_ptr() as *const c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
            )
        };
    }

    #[inline(always)]
    fn recv(&self, buf: &mut M::Buf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        // SAFETY: as for send.
        unsafe {
            ffi::MPI_Recv(
                buf.as_mut_ptr() as *mut c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
    }

    #[inline(always)]
    fn isend_window(&self, bufs: &BufferSet<M::Buf>, env: Envelope, reqs: &mut Requests, offset: usize) {
        check_len(bufs.slot(0).len(), env.bytes());
        let (count, dt, peer, comm) = (env.count as c_int, self.h.dt(env.datatype), env.peer as c_int, self.comm);
        let addr = |j: usize| bufs.slot(j).as_ptr() as *mut c_void;
        // SAFETY: every buffer of the set has the same length (checked
        // once); the buffers outlive the requests because callers complete
        // them with `waitall` or `testall` while the set is borrowed.
        let post = |p: *mut c_void, req: &mut ffi::MPI_Request| unsafe {
            ffi::MPI_Isend(p as *const c_void, count, dt, peer, env.tag, comm, req);
        };
        post_window(reqs, offset, bufs.slots(), bufs.distinct(), addr, post);
    }

    #[inline(always)]
    fn irecv_window(&self, bufs: &mut BufferSet<M::Buf>, env: Envelope, reqs: &mut Requests, offset: usize) {
        check_len(bufs.slot(0).len(), env.bytes());
        let (count, dt, peer, comm) = (env.count as c_int, self.h.dt(env.datatype), env.peer as c_int, self.comm);
        let (slots, distinct) = (bufs.slots(), bufs.distinct());
        let addr = |j: usize| bufs.slot_mut(j).as_mut_ptr() as *mut c_void;
        // SAFETY: as in isend_window.
        let post = |p: *mut c_void, req: &mut ffi::MPI_Request| unsafe {
            ffi::MPI_Irecv(p, count, dt, peer, env.tag, comm, req);
        };
        post_window(reqs, offset, slots, distinct, addr, post);
    }

    #[inline(always)]
    fn waitall(&self, reqs: &mut Requests, offset: usize, n: usize) {
        assert!(offset + n <= reqs.reqs.len());
        // SAFETY: in-bounds request slice.
        unsafe { ffi::MPI_Waitall(n as c_int, reqs.reqs.as_mut_ptr().add(offset), ffi::RSMPI_STATUSES_IGNORE) };
    }

    #[inline(always)]
    fn testall(&self, reqs: &mut Requests, offset: usize, n: usize) -> bool {
        assert!(offset + n <= reqs.reqs.len());
        let mut flag: c_int = 0;
        // SAFETY: in-bounds request slice.
        unsafe {
            ffi::MPI_Testall(n as c_int, reqs.reqs.as_mut_ptr().add(offset), &mut flag, ffi::RSMPI_STATUSES_IGNORE)
        };
        flag != 0
    }
}

impl<'w, M: Memory> Collectives for Mpi<'w, M> {
    #[inline(always)]
    fn allreduce_sum(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.allreduce_sum_as(Form::Now, io, count, dt) }
    }

    #[inline(always)]
    fn reduce_sum(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.reduce_sum_as(Form::Now, io, count, dt, root) }
    }

    #[inline(always)]
    fn reduce_scatter_sum(&self, io: Operands<M::Buf>, counts: &[i32], dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.reduce_scatter_sum_as(Form::Now, io, counts, dt) }
    }

    #[inline(always)]
    fn allgather(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        self.exchange(ffi::MPI_Allgather, io, count, dt, 1);
    }

    #[inline(always)]
    fn alltoall(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        let np = self.world.size();
        self.exchange(ffi::MPI_Alltoall, io, count, dt, np);
    }

    #[inline(always)]
    fn bcast(&self, buf: &mut M::Buf, count: usize, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.bcast_as(Form::Now, buf, count, dt, root) }
    }

    #[inline(always)]
    fn gather(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.gather_as(Form::Now, io, count, dt, root) }
    }

    #[inline(always)]
    fn scatter(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.scatter_as(Form::Now, io, count, dt, root) }
    }
}

impl<'w, M: Memory> DataBarrier for Mpi<'w, M> {
    #[inline(always)]
    fn barrier(&self) {
        self.world.barrier();
    }
}

impl<'w, M: Memory> VectorCollectives for Mpi<'w, M> {
    #[inline(always)]
    fn gatherv(&self, io: Operands<M::Buf>, count: usize, blocks: &Blocks, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.gatherv_as(Form::Now, io, count, blocks, dt, root) }
    }

    #[inline(always)]
    fn scatterv(&self, io: Operands<M::Buf>, blocks: &Blocks, count: usize, dt: Datatype, root: usize) {
        // SAFETY: a blocking call.
        unsafe { self.scatterv_as(Form::Now, io, blocks, count, dt, root) }
    }

    #[inline(always)]
    fn allgatherv(&self, io: Operands<M::Buf>, count: usize, blocks: &Blocks, dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.allgatherv_as(Form::Now, io, count, blocks, dt) }
    }

    #[inline(always)]
    fn alltoallv(&self, io: Operands<M::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.alltoallv_as(Form::Now, io, send, recv, dt) }
    }

    #[inline(always)]
    fn alltoallw(&self, io: Operands<M::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.alltoallw_as(Form::Now, io, send, recv, dt) }
    }

    #[inline(always)]
    fn reduce_scatter_block_sum(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        // SAFETY: a blocking call.
        unsafe { self.reduce_scatter_block_sum_as(Form::Now, io, count, dt) }
    }
}

impl<'w, M: Memory> NonBlockingCollectives for Mpi<'w, M> {
    #[inline(always)]
    fn ibarrier(&self) {
        // SAFETY: the request slot is this transport's.
        unsafe {
            match self.start_form() {
                Form::Init => init::commbench_barrier_init(self.comm, self.pending.as_ptr()),
                _ => ffi::MPI_Ibarrier(self.comm, self.pending.as_ptr()),
            }
        };
    }

    #[inline(always)]
    unsafe fn iallreduce_sum(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        // SAFETY: passed on from the caller.
        unsafe { self.allreduce_sum_as(self.start_form(), io, count, dt) }
    }

    #[inline(always)]
    unsafe fn ibcast(&self, buf: &mut M::Buf, count: usize, dt: Datatype, root: usize) {
        // SAFETY: passed on from the caller.
        unsafe { self.bcast_as(self.start_form(), buf, count, dt, root) }
    }

    #[inline(always)]
    unsafe fn iallgather(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        // SAFETY: passed on from the caller.
        unsafe { self.iexchange((ffi::MPI_Iallgather, init::commbench_allgather_init), io, count, dt, 1) };
    }

    #[inline(always)]
    unsafe fn ialltoall(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        let np = self.world.size();
        // SAFETY: passed on from the caller.
        unsafe { self.iexchange((ffi::MPI_Ialltoall, init::commbench_alltoall_init), io, count, dt, np) };
    }

    #[inline(always)]
    unsafe fn ireduce_sum(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        // SAFETY: passed on from the caller.
        unsafe { self.reduce_sum_as(self.start_form(), io, count, dt, root) }
    }

    #[inline(always)]
    unsafe fn ireduce_scatter_sum(&self, io: Operands<M::Buf>, counts: &[i32], dt: Datatype) {
        // SAFETY: passed on from the caller.
        unsafe { self.reduce_scatter_sum_as(self.start_form(), io, counts, dt) }
    }

    #[inline(always)]
    unsafe fn igather(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        // SAFETY: passed on from the caller.
        unsafe { self.gather_as(self.start_form(), io, count, dt, root) }
    }

    #[inline(always)]
    unsafe fn iscatter(&self, io: Operands<M::Buf>, count: usize, dt: Datatype, root: usize) {
        // SAFETY: passed on from the caller.
        unsafe { self.scatter_as(self.start_form(), io, count, dt, root) }
    }

    #[inline(always)]
    unsafe fn igatherv(&self, io: Operands<M::Buf>, count: usize, blocks: &Blocks, dt: Datatype, root: usize) {
        // SAFETY: passed on from the caller.
        unsafe { self.gatherv_as(self.start_form(), io, count, blocks, dt, root) }
    }

    #[inline(always)]
    unsafe fn iscatterv(&self, io: Operands<M::Buf>, blocks: &Blocks, count: usize, dt: Datatype, root: usize) {
        // SAFETY: passed on from the caller.
        unsafe { self.scatterv_as(self.start_form(), io, blocks, count, dt, root) }
    }

    #[inline(always)]
    unsafe fn iallgatherv(&self, io: Operands<M::Buf>, count: usize, blocks: &Blocks, dt: Datatype) {
        // SAFETY: passed on from the caller.
        unsafe { self.allgatherv_as(self.start_form(), io, count, blocks, dt) }
    }

    #[inline(always)]
    unsafe fn ialltoallv(&self, io: Operands<M::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        // SAFETY: passed on from the caller.
        unsafe { self.alltoallv_as(self.start_form(), io, send, recv, dt) }
    }

    #[inline(always)]
    unsafe fn ialltoallw(&self, io: Operands<M::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        // SAFETY: passed on from the caller.
        unsafe { self.alltoallw_as(self.start_form(), io, send, recv, dt) }
    }

    #[inline(always)]
    unsafe fn ireduce_scatter_block_sum(&self, io: Operands<M::Buf>, count: usize, dt: Datatype) {
        // SAFETY: passed on from the caller.
        unsafe { self.reduce_scatter_block_sum_as(self.start_form(), io, count, dt) }
    }

    #[inline(always)]
    unsafe fn ineighbor_allgather(
        &self,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        count: usize,
        dt: Datatype,
    ) {
        // SAFETY: passed on from the caller.
        unsafe { self.neighbor_allgather_as(Form::Start, g, send, recv, count, None, dt) }
    }

    #[inline(always)]
    unsafe fn ineighbor_allgatherv(
        &self,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        count: usize,
        rl: &Blocks,
        dt: Datatype,
    ) {
        // SAFETY: passed on from the caller.
        unsafe { self.neighbor_allgather_as(Form::Start, g, send, recv, count, Some(rl), dt) }
    }

    #[inline(always)]
    unsafe fn ineighbor_alltoall(
        &self,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        count: usize,
        dt: Datatype,
    ) {
        // SAFETY: passed on from the caller.
        unsafe { self.neighbor_alltoall_as(Form::Start, g, send, recv, count, dt) }
    }

    #[inline(always)]
    unsafe fn ineighbor_alltoallv(
        &self,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        sl: &Blocks,
        rl: &Blocks,
        dt: Datatype,
    ) {
        // SAFETY: passed on from the caller.
        unsafe { self.neighbor_alltoallv_as(Form::Start, g, send, recv, sl, rl, dt) }
    }

    #[inline(always)]
    unsafe fn ineighbor_alltoallw(
        &self,
        g: &NeighborGraph,
        send: &M::Buf,
        recv: &mut M::Buf,
        sl: &ByteBlocks,
        rl: &ByteBlocks,
        dt: Datatype,
    ) {
        // SAFETY: passed on from the caller.
        unsafe { self.neighbor_alltoallw_as(Form::Start, g, send, recv, sl, rl, dt) }
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

/// Frees the persistent requests a run left bound, before MPI ends.
impl<'w, M: Memory> Drop for Mpi<'w, M> {
    fn drop(&mut self) {
        self.free_bound(Bound::Timed);
        self.free_bound(Bound::Warm);
    }
}

impl<'w, M: Memory> PersistentCollectives for Mpi<'w, M> {
    fn persistent_refusal(&self) -> Option<String> {
        (!super::shim::persistent_collectives()).then(|| {
            let library = self.world.library_version();
            let name = library.split([',', '\n']).next().unwrap_or("unknown");
            format!(
                "this MPI library has no persistent collectives (MPI_*_init are MPI-4; {name} is MPI {})",
                self.world.standard_version()
            )
        })
    }

    unsafe fn bind(&self, slot: Bound, start: impl FnOnce()) {
        self.free_bound(slot);
        self.binding.set(true);
        start();
        self.binding.set(false);
        // SAFETY: reads a constant of the MPI library.
        let null = unsafe { ffi::RSMPI_REQUEST_NULL };
        self.bound[slot as usize].set(self.pending.replace(null));
    }

    #[inline(always)]
    fn start_bound(&self, slot: Bound, _reissue: impl FnOnce()) {
        // SAFETY: the slot holds a request bound by `bind` (MPI reports
        // an error on a null one).
        unsafe { ffi::MPI_Start(self.bound[slot as usize].as_ptr()) };
    }

    #[inline(always)]
    fn wait_bound(&self, slot: Bound) {
        // SAFETY: as in start_bound; a persistent request stays allocated.
        unsafe { ffi::MPI_Wait(self.bound[slot as usize].as_ptr(), ffi::RSMPI_STATUS_IGNORE) };
    }

    fn free_bound(&self, slot: Bound) {
        let req = &self.bound[slot as usize];
        // SAFETY: a request this transport bound, inactive (every start is
        // waited for); MPI_Request_free sets the slot back to null.
        unsafe {
            if req.get() != ffi::RSMPI_REQUEST_NULL {
                ffi::MPI_Request_free(req.as_ptr());
            }
        }
    }
}

impl<'w, M: Memory> PersistentPointToPoint for Mpi<'w, M> {
    unsafe fn bind_send(&self, buf: &M::Buf, env: Envelope, reqs: &mut Requests, slot: usize) {
        check_len(buf.len(), env.bytes());
        let req = &mut reqs.reqs[slot];
        // SAFETY: the buffer holds count elements; the caller keeps it.
        unsafe {
            ffi::MPI_Send_init(
                buf.as_ptr() as *const c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
                req,
            )
        };
    }

    unsafe fn bind_recv(&self, buf: &mut M::Buf, env: Envelope, reqs: &mut Requests, slot: usize) {
        check_len(buf.len(), env.bytes());
        let req = &mut reqs.reqs[slot];
        // SAFETY: as in bind_send.
        unsafe {
            ffi::MPI_Recv_init(
                buf.as_mut_ptr() as *mut c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
                req,
            )
        };
    }

    #[inline(always)]
    fn startall(&self, reqs: &mut Requests, offset: usize, n: usize) {
        assert!(offset + n <= reqs.reqs.len());
        // SAFETY: in-bounds requests, bound by bind_send / bind_recv.
        unsafe { ffi::MPI_Startall(n as c_int, reqs.reqs.as_mut_ptr().add(offset)) };
    }

    fn free_requests(&self, reqs: &mut Requests, offset: usize, n: usize) {
        for req in &mut reqs.reqs[offset..offset + n] {
            // SAFETY: an inactive request of this transport; freeing sets
            // it back to null.
            unsafe {
                if *req != ffi::RSMPI_REQUEST_NULL {
                    ffi::MPI_Request_free(req);
                }
            }
        }
    }
}

/// MPI's blocking send and receive for the threads of one rank
/// (osu_latency_mt).
pub(crate) struct MpiLane<'w> {
    world: &'w World,
    comm: ffi::MPI_Comm,
    h: Handles,
}

// SAFETY: the lane only passes the communicator and datatype handles to
// MPI_Send, MPI_Recv and MPI_Wtime, which MPI_THREAD_MULTIPLE (asserted
// when the lane is made) lets any thread call at any time; nothing in it
// is written after it is made.
unsafe impl Sync for MpiLane<'_> {}

impl<'w> Threaded for Mpi<'w, HostMemory> {
    type Lane<'a>
        = MpiLane<'a>
    where
        Self: 'a;

    fn lane(&self) -> MpiLane<'_> {
        // The runner refuses a job whose library gave less (OSU's words).
        assert!(
            self.world.threads() == crate::backend::world::ThreadLevel::Multiple,
            "threads need MPI_THREAD_MULTIPLE"
        );
        MpiLane { world: self.world, comm: self.comm, h: self.h }
    }
}

impl Lane<crate::buffer::AlignedBuf> for MpiLane<'_> {
    fn send(&self, buf: &crate::buffer::AlignedBuf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        // SAFETY: the buffer holds count elements (checked above).
        unsafe {
            ffi::MPI_Send(
                buf.as_ptr() as *const c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
            )
        };
    }

    fn recv(&self, buf: &mut crate::buffer::AlignedBuf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        // SAFETY: as for send.
        unsafe {
            ffi::MPI_Recv(
                buf.as_mut_ptr() as *mut c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
    }

    fn now(&self) -> f64 {
        self.world.wtime()
    }
}

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
    unsafe fn neighbor_allgather_as(
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
    unsafe fn neighbor_alltoall_as(
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
    unsafe fn neighbor_alltoallv_as(
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
    unsafe fn neighbor_alltoallw_as(
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
        unsafe { self.neighbor_allgather_as(Form::Now, g, send, recv, count, None, dt) }
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
        unsafe { self.neighbor_allgather_as(Form::Now, g, send, recv, count, Some(rl), dt) }
    }

    #[inline(always)]
    fn neighbor_alltoall(&self, g: &NeighborGraph, send: &M::Buf, recv: &mut M::Buf, count: usize, dt: Datatype) {
        // SAFETY: blocking.
        unsafe { self.neighbor_alltoall_as(Form::Now, g, send, recv, count, dt) }
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
        unsafe { self.neighbor_alltoallv_as(Form::Now, g, send, recv, sl, rl, dt) }
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
        unsafe { self.neighbor_alltoallw_as(Form::Now, g, send, recv, sl, rl, dt) }
    }
}
