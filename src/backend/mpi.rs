//! The MPI transport: initialisation and finalisation (through rsmpi), and
//! thin wrappers over the exact C calls OSU times (MPI_Send/Recv,
//! Isend/Irecv + Waitall, Barrier, Wtime) so the timed region holds nothing
//! but the library call. Collective helpers used between sizes (reductions,
//! broadcasts, gathers) live here too.

use std::ffi::{c_int, c_void};

use mpi::ffi;

use crate::buffer::BufferSet;
use crate::datatype::Datatype;

extern "C" {
    fn commbench_mpi_char() -> ffi::MPI_Datatype;
    fn commbench_mpi_int() -> ffi::MPI_Datatype;
    fn commbench_mpi_float() -> ffi::MPI_Datatype;
    fn commbench_mpi_double() -> ffi::MPI_Datatype;
    fn commbench_mpi_unsigned_long_long() -> ffi::MPI_Datatype;
    fn commbench_mpi_sum() -> ffi::MPI_Op;
    fn commbench_mpi_min() -> ffi::MPI_Op;
    fn commbench_mpi_max() -> ffi::MPI_Op;
    fn commbench_mpi_in_place() -> *mut c_void;
}

/// `MPI_IN_PLACE`, for the send side of in-place collectives.
pub fn in_place() -> *const u8 {
    // SAFETY: returns a predefined constant address.
    unsafe { commbench_mpi_in_place() as *const u8 }
}

/// MPI_Allgather and MPI_Alltoall share this signature.
type Exchange = unsafe extern "C" fn(
    *const c_void,
    c_int,
    ffi::MPI_Datatype,
    *mut c_void,
    c_int,
    ffi::MPI_Datatype,
    ffi::MPI_Comm,
) -> c_int;

/// Reduction operators used on results between sizes.
#[derive(Clone, Copy, Debug)]
pub enum ReduceOp {
    Sum,
    Min,
    Max,
}

/// An initialised MPI world. Dropping it finalises MPI.
pub struct Mpi {
    universe: Option<mpi::environment::Universe>,
    world: ffi::MPI_Comm,
    rank: i32,
    size: i32,
    types: [ffi::MPI_Datatype; 3],
    byte: ffi::MPI_Datatype,
    f64_t: ffi::MPI_Datatype,
    u64_t: ffi::MPI_Datatype,
    sum: ffi::MPI_Op,
}

/// Who a window of messages goes to or comes from, and what it holds.
#[derive(Clone, Copy, Debug)]
pub struct Envelope {
    pub count: usize,
    pub datatype: Datatype,
    pub peer: i32,
    pub tag: i32,
}

/// A request array sized once per run, reused by every windowed step.
pub struct Requests {
    reqs: Vec<ffi::MPI_Request>,
}

impl Requests {
    pub fn new(n: usize) -> Requests {
        // SAFETY: reading an extern constant.
        let null = unsafe { ffi::RSMPI_REQUEST_NULL };
        Requests { reqs: vec![null; n.max(1)] }
    }
}

impl Mpi {
    /// Initialises MPI (`MPI_Init_thread` with MPI_THREAD_SINGLE, like
    /// `MPI_Init`). Returns None if MPI was already initialised.
    pub fn init() -> Option<Mpi> {
        let universe = mpi::initialize()?;
        // SAFETY: MPI is initialised; these read predefined handles.
        unsafe {
            let world = ffi::RSMPI_COMM_WORLD;
            let mut rank = 0;
            let mut size = 0;
            ffi::MPI_Comm_rank(world, &mut rank);
            ffi::MPI_Comm_size(world, &mut size);
            Some(Mpi {
                universe: Some(universe),
                world,
                rank,
                size,
                types: [commbench_mpi_char(), commbench_mpi_int(), commbench_mpi_float()],
                byte: commbench_mpi_char(),
                f64_t: commbench_mpi_double(),
                u64_t: commbench_mpi_unsigned_long_long(),
                sum: commbench_mpi_sum(),
            })
        }
    }

    pub fn rank(&self) -> i32 {
        self.rank
    }

    pub fn size(&self) -> i32 {
        self.size
    }

    /// `MPI_Wtime`.
    #[inline(always)]
    pub fn wtime(&self) -> f64 {
        // SAFETY: plain library call.
        unsafe { ffi::RSMPI_Wtime() }
    }

    /// Seconds between ticks of `MPI_Wtime`.
    pub fn wtick(&self) -> f64 {
        // SAFETY: plain library call.
        unsafe { ffi::RSMPI_Wtick() }
    }

    #[inline(always)]
    fn dt(&self, dt: Datatype) -> ffi::MPI_Datatype {
        self.types[dt as usize]
    }

    #[inline(always)]
    pub fn barrier(&self) {
        // SAFETY: valid communicator.
        unsafe { ffi::MPI_Barrier(self.world) };
    }

    /// `MPI_Send` of `count` elements from `buf`.
    #[inline(always)]
    pub fn send(&self, buf: *const u8, count: usize, dt: Datatype, dest: i32, tag: i32) {
        // SAFETY: callers pass a buffer of at least count elements (checked
        // when the buffers were sized for the run).
        unsafe { ffi::MPI_Send(buf as *const c_void, count as c_int, self.dt(dt), dest, tag, self.world) };
    }

    /// `MPI_Recv` of `count` elements into `buf`.
    #[inline(always)]
    pub fn recv(&self, buf: *mut u8, count: usize, dt: Datatype, src: i32, tag: i32) {
        // SAFETY: as for send.
        unsafe {
            ffi::MPI_Recv(
                buf as *mut c_void,
                count as c_int,
                self.dt(dt),
                src,
                tag,
                self.world,
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
    }

    /// Posts `bufs.slots()` `MPI_Isend`s into `reqs[offset..]`.
    #[inline(always)]
    pub fn isend_window(&self, bufs: &BufferSet, env: Envelope, reqs: &mut Requests, offset: usize) {
        let n = bufs.slots();
        assert!(offset + n <= reqs.reqs.len());
        let (count, dt, world) = (env.count as c_int, self.dt(env.datatype), self.world);
        let slots = reqs.reqs[offset..offset + n].iter_mut();
        // SAFETY (both loops): each request slot is in bounds; the buffers
        // outlive the requests because callers complete them with `waitall`
        // within the same step, while the set is borrowed.
        if bufs.distinct() == 1 {
            let p = bufs.slot_ptr(0) as *const c_void;
            for req in slots {
                unsafe { ffi::MPI_Isend(p, count, dt, env.peer, env.tag, world, req) };
            }
        } else {
            for (j, req) in slots.enumerate() {
                let p = bufs.slot_ptr(j) as *const c_void;
                unsafe { ffi::MPI_Isend(p, count, dt, env.peer, env.tag, world, req) };
            }
        }
    }

    /// Posts `bufs.slots()` `MPI_Irecv`s into `reqs[offset..]`.
    #[inline(always)]
    pub fn irecv_window(&self, bufs: &mut BufferSet, env: Envelope, reqs: &mut Requests, offset: usize) {
        let n = bufs.slots();
        assert!(offset + n <= reqs.reqs.len());
        let (count, dt, world) = (env.count as c_int, self.dt(env.datatype), self.world);
        let slots = reqs.reqs[offset..offset + n].iter_mut();
        // SAFETY: as in isend_window.
        if bufs.distinct() == 1 {
            let p = bufs.slot_mut_ptr(0) as *mut c_void;
            for req in slots {
                unsafe { ffi::MPI_Irecv(p, count, dt, env.peer, env.tag, world, req) };
            }
        } else {
            for (j, req) in slots.enumerate() {
                let p = bufs.slot_mut_ptr(j) as *mut c_void;
                unsafe { ffi::MPI_Irecv(p, count, dt, env.peer, env.tag, world, req) };
            }
        }
    }

    /// `MPI_Waitall` on `reqs[offset..offset + n]`.
    #[inline(always)]
    pub fn waitall(&self, reqs: &mut Requests, offset: usize, n: usize) {
        assert!(offset + n <= reqs.reqs.len());
        // SAFETY: in-bounds request slice.
        unsafe { ffi::MPI_Waitall(n as c_int, reqs.reqs.as_mut_ptr().add(offset), ffi::RSMPI_STATUSES_IGNORE) };
    }

    /// `MPI_Testall` on `reqs[offset..offset + n]`: whether every request
    /// there has completed (completed ones become null requests). Never
    /// blocks.
    #[inline(always)]
    pub fn testall(&self, reqs: &mut Requests, offset: usize, n: usize) -> bool {
        assert!(offset + n <= reqs.reqs.len());
        let mut flag: c_int = 0;
        // SAFETY: in-bounds request slice.
        unsafe {
            ffi::MPI_Testall(n as c_int, reqs.reqs.as_mut_ptr().add(offset), &mut flag, ffi::RSMPI_STATUSES_IGNORE)
        };
        flag != 0
    }

    /// `MPI_Allreduce` with MPI_SUM (`send` may be `in_place()`).
    #[inline(always)]
    pub fn allreduce_sum(&self, send: *const u8, recv: *mut u8, count: usize, dt: Datatype) {
        // SAFETY: callers size both buffers for count elements.
        unsafe {
            ffi::MPI_Allreduce(
                send as *const c_void,
                recv as *mut c_void,
                count as c_int,
                self.dt(dt),
                self.sum,
                self.world,
            )
        };
    }

    /// `MPI_Reduce` with MPI_SUM to `root` (`send` may be `in_place()` on
    /// the root).
    #[inline(always)]
    pub fn reduce_sum(&self, send: *const u8, recv: *mut u8, count: usize, dt: Datatype, root: i32) {
        // SAFETY: as above.
        unsafe {
            ffi::MPI_Reduce(
                send as *const c_void,
                recv as *mut c_void,
                count as c_int,
                self.dt(dt),
                self.sum,
                root,
                self.world,
            )
        };
    }

    /// `MPI_Reduce_scatter` with MPI_SUM.
    #[inline(always)]
    pub fn reduce_scatter_sum(&self, send: *const u8, recv: *mut u8, counts: &[c_int], dt: Datatype) {
        // SAFETY: counts has one entry per rank; buffers sized by callers.
        unsafe {
            ffi::MPI_Reduce_scatter(
                send as *const c_void,
                recv as *mut c_void,
                counts.as_ptr(),
                self.dt(dt),
                self.sum,
                self.world,
            )
        };
    }

    /// `MPI_Allgather` of `count` elements per rank.
    #[inline(always)]
    pub fn allgather(&self, send: *const u8, recv: *mut u8, count: usize, dt: Datatype) {
        self.exchange(ffi::MPI_Allgather, send, recv, count, dt);
    }

    /// `MPI_Alltoall` of `count` elements per pair of ranks.
    #[inline(always)]
    pub fn alltoall(&self, send: *const u8, recv: *mut u8, count: usize, dt: Datatype) {
        self.exchange(ffi::MPI_Alltoall, send, recv, count, dt);
    }

    /// A collective with the (send, count, type, recv, count, type, comm)
    /// signature, the same count and type on both sides.
    #[inline(always)]
    fn exchange(&self, f: Exchange, send: *const u8, recv: *mut u8, count: usize, dt: Datatype) {
        let t = self.dt(dt);
        // SAFETY: callers size recv (and send, unless it is MPI_IN_PLACE)
        // for count elements per rank.
        unsafe { f(send as *const c_void, count as c_int, t, recv as *mut c_void, count as c_int, t, self.world) };
    }

    /// `MPI_Bcast` of `count` elements from `root`.
    #[inline(always)]
    pub fn bcast(&self, buf: *mut u8, count: usize, dt: Datatype, root: i32) {
        // SAFETY: buf holds count elements.
        unsafe { ffi::MPI_Bcast(buf as *mut c_void, count as c_int, self.dt(dt), root, self.world) };
    }

    /// Every rank's `x`, in rank order, at rank 0 (empty elsewhere).
    pub fn gather_f64(&self, x: f64) -> Vec<f64> {
        let mut all = vec![0.0f64; if self.rank == 0 { self.size as usize } else { 1 }];
        // SAFETY: rank 0 receives one double per rank.
        unsafe {
            ffi::MPI_Gather(
                &x as *const f64 as *const c_void,
                1,
                self.f64_t,
                all.as_mut_ptr() as *mut c_void,
                1,
                self.f64_t,
                0,
                self.world,
            )
        };
        if self.rank == 0 {
            all
        } else {
            Vec::new()
        }
    }

    /// Every rank's `xs` (all of the same length), concatenated in rank
    /// order at rank 0; other ranks get an empty vector.
    pub fn gather_f64_slice(&self, xs: &[f64]) -> Vec<f64> {
        let k = xs.len();
        let mut all = vec![0.0f64; if self.rank == 0 { self.size as usize * k } else { 1 }];
        // SAFETY: rank 0 receives k doubles per rank; every rank sends k.
        unsafe {
            ffi::MPI_Gather(
                xs.as_ptr() as *const c_void,
                k as c_int,
                self.f64_t,
                all.as_mut_ptr() as *mut c_void,
                k as c_int,
                self.f64_t,
                0,
                self.world,
            )
        };
        if self.rank == 0 {
            all
        } else {
            Vec::new()
        }
    }

    fn op(op: ReduceOp) -> ffi::MPI_Op {
        // SAFETY: predefined handles.
        unsafe {
            match op {
                ReduceOp::Sum => commbench_mpi_sum(),
                ReduceOp::Min => commbench_mpi_min(),
                ReduceOp::Max => commbench_mpi_max(),
            }
        }
    }

    /// Reduces `x` over all ranks to rank 0; the result is meaningful there.
    pub fn reduce_f64(&self, x: f64, op: ReduceOp) -> f64 {
        let mut out = 0.0f64;
        // SAFETY: one double in, one out.
        unsafe {
            ffi::MPI_Reduce(
                &x as *const f64 as *const c_void,
                &mut out as *mut f64 as *mut c_void,
                1,
                self.f64_t,
                Self::op(op),
                0,
                self.world,
            )
        };
        out
    }

    /// Element-wise reduction of a slice to rank 0 (result valid there).
    pub fn reduce_f64_slice(&self, x: &[f64], op: ReduceOp) -> Vec<f64> {
        let mut out = vec![0.0f64; x.len()];
        // SAFETY: equal-length buffers.
        unsafe {
            ffi::MPI_Reduce(
                x.as_ptr() as *const c_void,
                out.as_mut_ptr() as *mut c_void,
                x.len() as c_int,
                self.f64_t,
                Self::op(op),
                0,
                self.world,
            )
        };
        out
    }

    /// Sum of `x` over all ranks, known everywhere.
    pub fn allreduce_sum_u64(&self, x: u64) -> u64 {
        let mut out = 0u64;
        // SAFETY: one value in, one out.
        unsafe {
            ffi::MPI_Allreduce(
                &x as *const u64 as *const c_void,
                &mut out as *mut u64 as *mut c_void,
                1,
                self.u64_t,
                Self::op(ReduceOp::Sum),
                self.world,
            )
        };
        out
    }

    /// Rank 0's `x`, everywhere.
    pub fn bcast_u64(&self, x: u64) -> u64 {
        let mut v = x;
        // SAFETY: one value.
        unsafe { ffi::MPI_Bcast(&mut v as *mut u64 as *mut c_void, 1, self.u64_t, 0, self.world) };
        v
    }

    /// Gathers every rank's bytes at rank 0 (in rank order); other ranks get
    /// an empty vector.
    pub fn gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let n = self.size as usize;
        let len = mine.len() as c_int;
        let mut lens = vec![0 as c_int; if self.rank == 0 { n } else { 1 }];
        // SAFETY: rank 0 receives n ints; others pass a dummy receive buffer.
        unsafe {
            ffi::MPI_Gather(
                &len as *const c_int as *const c_void,
                1,
                commbench_mpi_int(),
                lens.as_mut_ptr() as *mut c_void,
                1,
                commbench_mpi_int(),
                0,
                self.world,
            )
        };
        let (displs, total) = if self.rank == 0 {
            let mut d = Vec::with_capacity(n);
            let mut acc: c_int = 0;
            for &l in &lens {
                d.push(acc);
                acc += l;
            }
            (d, acc as usize)
        } else {
            (vec![0], 0)
        };
        let mut all = vec![0u8; total.max(1)];
        // SAFETY: counts and displacements describe `all` on rank 0.
        unsafe {
            ffi::MPI_Gatherv(
                mine.as_ptr() as *const c_void,
                len,
                self.byte,
                all.as_mut_ptr() as *mut c_void,
                lens.as_ptr(),
                displs.as_ptr(),
                self.byte,
                0,
                self.world,
            )
        };
        if self.rank != 0 {
            return Vec::new();
        }
        (0..n)
            .map(|r| {
                let s = displs[r] as usize;
                all[s..s + lens[r] as usize].to_vec()
            })
            .collect()
    }

    /// How many ranks share this rank's node (`MPI_Comm_split_type` with
    /// MPI_COMM_TYPE_SHARED), and this rank's index among them.
    pub fn node_ranks(&self) -> (usize, usize) {
        // SAFETY: collective over the world; the new communicator is freed.
        unsafe {
            let mut node = ffi::RSMPI_COMM_NULL;
            ffi::MPI_Comm_split_type(
                self.world,
                ffi::RSMPI_COMM_TYPE_SHARED,
                self.rank,
                ffi::RSMPI_INFO_NULL,
                &mut node,
            );
            let (mut size, mut rank) = (1, 0);
            ffi::MPI_Comm_size(node, &mut size);
            ffi::MPI_Comm_rank(node, &mut rank);
            ffi::MPI_Comm_free(&mut node);
            (size as usize, rank as usize)
        }
    }

    /// The MPI library's own version string (`MPI_Get_library_version`).
    pub fn library_version(&self) -> String {
        mpi::environment::library_version()
            .map(|s| s.trim_end_matches(['\0', '\n', ' ']).to_string())
            .unwrap_or_else(|_| "unknown".into())
    }

    /// MPI standard version (`MPI_Get_version`), e.g. "3.1".
    pub fn standard_version(&self) -> String {
        let (a, b) = mpi::environment::version();
        format!("{a}.{b}")
    }

    /// `MPI_Get_processor_name`.
    pub fn processor_name(&self) -> String {
        mpi::environment::processor_name().unwrap_or_else(|_| "unknown".into())
    }

    /// `MPI_Abort` on the world: ends every rank with `code`.
    pub fn abort(&self, code: i32) -> ! {
        // SAFETY: valid communicator.
        unsafe { ffi::MPI_Abort(self.world, code) };
        std::process::exit(code)
    }

    /// Finalises MPI now.
    pub fn finalize(mut self) {
        self.universe.take();
    }
}

impl Drop for Mpi {
    fn drop(&mut self) {
        self.universe.take();
    }
}
