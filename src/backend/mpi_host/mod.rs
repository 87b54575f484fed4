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
use crate::datatype::{Datatype, Reduction};

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
    /// How a collective's body calls MPI ([`Mpi::form`]): `Now`, `Start`
    /// while [`NonBlockingCollectives::start`] runs, `Init` while
    /// [`PersistentCollectives::bind`] runs.
    mode: std::cell::Cell<Form>,
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
        let (pending, mode) = (std::cell::Cell::new(null), std::cell::Cell::new(Form::Now));
        let bound = [std::cell::Cell::new(null), std::cell::Cell::new(null)];
        Mpi { world, comm: world.comm(), h, mem, per_rank_types, pending, mode, bound }
    }

    /// How a collective's body calls MPI: the blocking function, or, inside
    /// [`NonBlockingCollectives::start`], its non-blocking twin, or its
    /// persistent form while [`PersistentCollectives::bind`] runs.
    #[inline(always)]
    fn form(&self) -> Form {
        self.mode.get()
    }

    /// MPI's operation for `op`. The options offer NCCL's average and
    /// pre-multiplied sum on NCCL alone; were one asked of MPI, the job ends
    /// in one line.
    #[inline(always)]
    fn reduction(&self, op: Reduction) -> ffi::MPI_Op {
        match self.h.reduction(op) {
            Some(mpi_op) => mpi_op,
            None => self.world.fail(&format!("MPI has no '{}' reduction (NCCL has)", op.name()), 1),
        }
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
            Form::Init => $crate::backend::shim::init::$init($($arg,)* $me.pending.as_ptr()),
        }
    };
}

mod collective;
mod neighbor;
mod persistent;
mod threaded;

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
