//! NCCL (`--backend nccl`): the collectives and point-to-point messages
//! of NCCL on each rank's GPU, one rank per GPU, with the communicator
//! bootstrapped over the team (rank 0's unique id broadcast to every
//! rank) and the team kept as the control plane: MPI between processes,
//! shared memory between the lanes of a process that drives several GPUs,
//! a thread each (team.rs). Every buffer is device memory (OSU's
//! NCCL benchmarks force `D D` too); fills and checks copy through the
//! host. Operations are enqueued on one non-blocking stream; `complete`
//! waits for it as nccl-tests does (polling the stream, and while it is
//! busy the communicator's asynchronous error, yielding between polls), so
//! the clock closes when the GPU has finished, not when the call was
//! issued.
//!
//! Failures end the job from the rank that sees them, since the others may
//! be waiting inside NCCL where MPI cannot reach them: a call that returns
//! an error, an asynchronous error of the communicator (a peer gone, a
//! network failure) or a CUDA error of the stream gives one line naming the
//! rank, the NCCL call last issued and NCCL's (or CUDA's) words; the
//! communicator is aborted, the run record ended `error` and the job ended
//! with MPI_Abort. An asynchronous error is seen at the next poll, so the
//! job ends within the launcher's abort time (about a second here) of NCCL
//! reporting it. An operation that never completes and reports nothing
//! (a peer that hangs) is what `--timeout` ends.

use std::ffi::c_void;

use std::cell::{Cell, RefCell};

use cudarc::driver::result::{self as cu, stream::StreamKind};
use cudarc::driver::sys as cusys;
use cudarc::nccl::sys::{cudaStream_t, ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclUniqueId};
use serde_json::json;

use super::cuda_memory::{CudaMemory, GpuBuf, Place};
use super::team::Team;
use super::used_between;
use super::world::{self, World};
use super::{
    agree_failures, check_len, Buffer, Collectives, Control, Envelope, Memory, Operands, RawBuffer, Transport,
};
use crate::backend::buffer_set::BufferSet;
use crate::datatype::{Datatype, Reduction};
use crate::gpu::cuda::{self, GpuInfo};
use crate::gpu::nccl_lib::{self, NcclCallError};

/// NCCL's element type for one of ours.
fn nccl_type(dt: Datatype) -> ncclDataType_t {
    match dt {
        Datatype::Char => ncclDataType_t::ncclInt8,
        Datatype::Int => ncclDataType_t::ncclInt32,
        Datatype::Float => ncclDataType_t::ncclFloat32,
        Datatype::Uint8 => ncclDataType_t::ncclUint8,
        Datatype::Uint32 => ncclDataType_t::ncclUint32,
        Datatype::Int64 => ncclDataType_t::ncclInt64,
        Datatype::Uint64 => ncclDataType_t::ncclUint64,
        Datatype::Double => ncclDataType_t::ncclFloat64,
        Datatype::Half => ncclDataType_t::ncclFloat16,
        Datatype::Bfloat16 => ncclDataType_t::ncclBfloat16,
        Datatype::F8e4m3 => ncclDataType_t::ncclFloat8e4m3,
        Datatype::F8e5m2 => ncclDataType_t::ncclFloat8e5m2,
    }
}

/// Whether NCCL can reduce elements of `dt` on `gpu`, or the line that
/// says why not: NCCL builds its fp8 reductions for compute capability
/// 9.0 and later only, and below that they run as empty kernels (a wrong
/// result, no error), which is why nccl-tests leaves the fp8 types out of
/// `-d all` on such GPUs.
pub fn can_reduce(dt: Datatype, gpu: &GpuInfo) -> Result<(), String> {
    if reduces_on(dt, gpu.compute_major()) {
        return Ok(());
    }
    // No GPU index: ranks on like GPUs say the same line, so it is said once.
    Err(format!(
        "{} reductions need a GPU of compute capability 9.0 or later (NCCL has no fp8 arithmetic below it): \
         the {} is {}",
        dt.nccl_name(),
        gpu.name,
        gpu.compute_capability
    ))
}

/// Whether NCCL reduces elements of `dt` on a GPU of compute capability
/// `major`.x: every type but fp8, which needs 9.0 (Hopper) or later.
pub fn reduces_on(dt: Datatype, major: u32) -> bool {
    !matches!(dt, Datatype::F8e4m3 | Datatype::F8e5m2) || major >= 9
}

/// NCCL's predefined operation for a reduction (None: a pre-multiplied
/// sum, made for each call).
fn nccl_op(op: Reduction) -> Option<ncclRedOp_t> {
    match op {
        Reduction::Sum => Some(ncclRedOp_t::ncclSum),
        Reduction::Prod => Some(ncclRedOp_t::ncclProd),
        Reduction::Max => Some(ncclRedOp_t::ncclMax),
        Reduction::Min => Some(ncclRedOp_t::ncclMin),
        Reduction::Avg => Some(ncclRedOp_t::ncclAvg),
        Reduction::MulSum => None,
    }
}

/// The current context's free device memory, bytes (None where the
/// driver cannot say).
fn free_now() -> Option<u64> {
    cu::mem_get_info().ok().map(|(free, _)| free as u64)
}

/// How a rank's communicator, stream and buffers are made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NcclSetup {
    /// nccl-tests' `-y 1`: the work goes on the context's legacy default
    /// (NULL) stream instead of a non-blocking stream of its own.
    pub default_stream: bool,
    /// nccl-tests' `-u N`: every buffer starts N elements of the current
    /// datatype past its allocation.
    pub unalign: usize,
    /// nccl-tests' `-x P`: the communicator is made with CTA policy P
    /// (`ncclCommInitRankConfig`); None leaves NCCL's default.
    pub cta_policy: Option<i32>,
    /// nccl-tests' buffers: made by `ncclMemAlloc` where the library has
    /// it (as nccl-tests makes them from NCCL 2.19 on), and with `-R`
    /// registered with the communicator (true: a symmetric window).
    pub nccl_memory: bool,
    pub register: Option<bool>,
    /// nccl-tests' NCCL_TESTS_SPLIT: the processes (of `lanes` ranks
    /// each) split into communicators by colour.
    pub split: super::split::Split,
    pub lanes: usize,
}

/// A windowed operation's "requests": NCCL has none, the stream orders
/// everything; only how many operations are outstanding is kept.
pub struct Requests {
    pending: usize,
}

/// NCCL on this rank's GPU.
pub(crate) struct Nccl<'w> {
    world: &'w Team<'w, World>,
    lib: &'static nccl_lib::NcclLib,
    comm: ncclComm_t,
    stream: cusys::CUstream,
    mem: CudaMemory,
    rank: usize,
    np: usize,
    /// CUDA events for per-iteration device times (`-z`), made on demand.
    events: RefCell<Vec<cusys::CUevent>>,
    /// The NCCL call last issued, for the line a failure gives.
    last_call: Cell<&'static str>,
    /// Device memory free once the communicator was made, bytes, and what
    /// making it took (nccl-tests' `-M`).
    free_after_init: Option<u64>,
    init_used: i64,
    /// What the buffers made since took ([`Nccl::buffers_made`]).
    buffers_used: Cell<i64>,
    /// nccl-tests' `-R`: each buffer registered with the communicator
    /// (true: a symmetric window).
    register: Option<bool>,
    /// nccl-tests' `-G`: the graph captured on the stream and its
    /// executable form, between `end_capture` and `free_capture`.
    graph: Cell<Option<(cusys::CUgraph, cusys::CUgraphExec)>>,
}

impl<'w> Nccl<'w> {
    /// The communicator of every rank of `world` on the GPU each opened
    /// (`gpu`). Collective: every rank must call it. The phases agree
    /// between them (library, unique id, stream), so a rank that cannot
    /// go on never leaves the others waiting in NCCL's bootstrap; the
    /// error is the line rank 0 prints (empty elsewhere).
    /// With `default_stream` (nccl-tests' `-y 1`) the operations go on
    /// the context's legacy default stream (the NULL stream, which
    /// synchronises with every blocking stream) instead of a stream of
    /// their own.
    /// `setup` says how the communicator, its stream and its buffers are
    /// made (nccl-tests' `-y`, `-u` and `-x`).
    pub fn new(world: &'w Team<'w, World>, gpu: &GpuInfo, setup: NcclSetup) -> Result<Nccl<'w>, String> {
        let NcclSetup { default_stream, unalign, cta_policy, nccl_memory, register, split, lanes } = setup;
        let agree = |mine: Option<String>| agree_failures(world, mine.as_deref()).map_err(Option::unwrap_or_default);
        let lib = nccl_lib::load();
        agree(lib.as_ref().err().map(ToString::to_string))?;
        let lib = lib.map_err(|e| e.to_string())?;
        // This rank in its communicator: the world's, or NCCL_TESTS_SPLIT's
        // (the processes of one colour, in world order, each `lanes`
        // ranks).
        let lanes = lanes.max(1);
        let (proc, procs) = (world.rank() / lanes, world.size() / lanes);
        let (place, members) = split.group_of(proc, procs);
        let (rank, np) = (place * lanes + world.rank() % lanes, members * lanes);
        // Each communicator's first rank makes its unique id; every id
        // goes to the world's rank 0, which sends them all to every rank,
        // with a status byte in front so that a failure anywhere stops
        // every rank.
        let id = (rank == 0).then(|| lib.get_unique_id());
        let mine: Vec<u8> = match &id {
            Some(Ok(id)) => std::iter::once(1u8).chain(id.internal.iter().map(|&c| c as u8)).collect(),
            Some(Err(_)) => vec![0],
            None => vec![2],
        };
        let all = world.gather_bytes(&mine);
        let table: Vec<u8> = if all.iter().any(|m| m.first() == Some(&0)) {
            vec![0]
        } else {
            std::iter::once(1u8).chain(all.iter().filter(|m| m.len() == 129).flat_map(|m| m[1..].to_vec())).collect()
        };
        let got = world.bcast_bytes(&table);
        // My communicator's place among them: the order of the colours'
        // first processes.
        let at = split.group_index(proc, procs);
        if got.first() != Some(&1) || got.len() < 1 + 128 * (at + 1) {
            let why = match id {
                Some(Err(e)) => e.to_string(),
                _ if world.rank() == 0 => "ncclGetUniqueId failed on the first rank of a communicator".to_string(),
                _ => String::new(),
            };
            return Err(if world.rank() == 0 || !why.is_empty() { why } else { String::new() });
        }
        let mut unique = ncclUniqueId { internal: [0; 128] };
        for (d, &s) in unique.internal.iter_mut().zip(&got[1 + 128 * at..1 + 128 * (at + 1)]) {
            *d = s as _;
        }
        let stream =
            if default_stream { Ok(std::ptr::null_mut()) } else { cu::stream::create(StreamKind::NonBlocking) };
        agree(stream.as_ref().err().map(|e| format!("cuStreamCreate failed: {}", cuda::status_text(*e))))?;
        let stream = stream.map_err(cuda::status_text)?;
        let free_before = free_now();
        // SAFETY: the id came from rank 0's ncclGetUniqueId; rank and size
        // are this rank's in a world every rank of which calls this.
        let comm = match cta_policy {
            None => unsafe { lib.comm_init_rank(np as i32, unique, rank as i32) },
            // -x: the policy goes in the communicator's config.
            Some(policy) => {
                let config = nccl_lib::Config::with_cta_policy(policy);
                // SAFETY: as above.
                unsafe { lib.comm_init_rank_config(np as i32, unique, rank as i32, config) }
                    .unwrap_or_else(|| Err(NcclCallError::missing("ncclCommInitRankConfig")))
            }
        };
        agree(comm.as_ref().err().map(ToString::to_string))?;
        let comm = comm.map_err(|e| e.to_string())?;
        let free_after_init = free_now();
        let init_used = used_between(free_before, free_after_init);
        let mem = CudaMemory::new(Place::Device, gpu.clone(), None).unaligned(unalign);
        let mem = if nccl_memory { mem.allocated_by(lib) } else { mem };
        Ok(Nccl {
            world,
            lib,
            comm,
            stream,
            mem,
            rank,
            np,
            events: RefCell::new(Vec::new()),
            last_call: Cell::new("no NCCL call yet"),
            free_after_init,
            init_used,
            buffers_used: Cell::new(0),
            register,
            graph: Cell::new(None),
        })
    }

    /// Notes the device memory the buffers made since the communicator
    /// took (nccl-tests' `-M` "User-Allocated").
    pub fn buffers_made(&self) {
        self.buffers_used.set(used_between(self.free_after_init, free_now()));
    }

    #[inline(always)]
    fn stream(&self) -> cudaStream_t {
        self.stream as cudaStream_t
    }

    /// Destroys the captured graph, if any (its launches are complete).
    fn drop_graph(&self) {
        if let Some((graph, exec)) = self.graph.take() {
            // SAFETY: made by end_capture on this transport's stream, and
            // not launched since the stream was last drained.
            unsafe {
                let _ = cusys::cuGraphExecDestroy(exec);
                let _ = cusys::cuGraphDestroy(graph);
            }
        }
    }

    /// Ends the job after a failed NCCL call or an asynchronous error of
    /// the communicator (see the module's note).
    #[cold]
    #[inline(never)]
    fn fail(&self, e: NcclCallError) -> ! {
        let line = format!("NCCL failed on rank {} (last call {}): {e}", self.rank, self.last_call.get());
        self.end_job(&line)
    }

    /// Ends the job after a CUDA error on this rank's stream or context.
    #[cold]
    #[inline(never)]
    fn fail_cuda(&self, call: &str, e: cu::DriverError) -> ! {
        let line = format!(
            "CUDA failed on rank {} (last NCCL call {}): {call}: {}",
            self.rank,
            self.last_call.get(),
            cuda::status_text(e)
        );
        self.end_job(&line)
    }

    /// Aborts the communicator (so that nothing of ours is left running
    /// on the GPU), then ends the job with `line` from this rank.
    fn end_job(&self, line: &str) -> ! {
        // SAFETY: the communicator this transport made; nothing uses it
        // after this, the process ends below.
        let _ = unsafe { self.lib.comm_abort(self.comm) };
        world::fail_job(line, 1)
    }

    /// Ok while the communicator holds no asynchronous error.
    #[inline(always)]
    fn check_async(&self) {
        // SAFETY: the communicator this transport made.
        if let Err(e) = unsafe { self.lib.comm_get_async_error(self.comm) } {
            self.fail(e)
        }
    }

    /// Whether the stream has run everything enqueued: true when done,
    /// false while busy (after checking the communicator's asynchronous
    /// error); any other answer ends the job (a sticky CUDA error never
    /// turns into "done", and waiting on it would spin forever).
    #[inline(always)]
    fn stream_done(&self) -> bool {
        // SAFETY: the stream this transport created.
        match unsafe { cusys::cuStreamQuery(self.stream) } {
            cusys::CUresult::CUDA_SUCCESS => true,
            cusys::CUresult::CUDA_ERROR_NOT_READY => {
                self.check_async();
                false
            }
            other => self.fail_cuda("cuStreamQuery", cu::DriverError(other)),
        }
    }

    #[inline(always)]
    fn ok(&self, r: Result<(), NcclCallError>) {
        if let Err(e) = r {
            self.fail(e)
        }
    }

    /// Waits for everything enqueued, as nccl-tests does: polls the stream
    /// and, while it is busy, the communicator's asynchronous error,
    /// letting other threads run between polls. A failure ends the job.
    #[inline(always)]
    fn sync(&self) {
        while !self.stream_done() {
            std::thread::yield_now();
        }
    }

    /// Enqueues a send (no wait).
    #[inline(always)]
    fn post_send(&self, p: *const c_void, count: usize, dt: Datatype, peer: usize) {
        self.last_call.set("ncclSend");
        // SAFETY: callers checked that `p` holds `count` elements.
        self.ok(unsafe { self.lib.send(p, count, nccl_type(dt), peer as i32, self.comm, self.stream()) });
    }

    /// Enqueues a receive (no wait).
    #[inline(always)]
    fn post_recv(&self, p: *mut c_void, count: usize, dt: Datatype, peer: usize) {
        self.last_call.set("ncclRecv");
        // SAFETY: as for post_send.
        self.ok(unsafe { self.lib.recv(p, count, nccl_type(dt), peer as i32, self.comm, self.stream()) });
    }

    /// Issues `call` with NCCL's operation for `op` on elements of `dt`,
    /// ending the job if anything fails: a predefined operation, or a
    /// pre-multiplied sum made for this one call with this rank's scalar and
    /// destroyed once the call returns, as nccl-tests does around each call
    /// (so its cost is in the time, as there).
    #[inline(always)]
    fn with_op(&self, op: Reduction, dt: Datatype, call: impl FnOnce(nccl_lib::RedOp) -> Result<(), NcclCallError>) {
        let Some(op) = nccl_op(op) else {
            let mut scalar = crate::buffer::exact_element(dt, Reduction::pre_mul_scalar(self.rank));
            self.last_call.set("ncclRedOpCreatePreMulSum");
            // SAFETY: our communicator; `scalar` holds one element of dt.
            let made = unsafe { self.lib.red_op_create_pre_mul_sum(&mut scalar, nccl_type(dt), self.comm) };
            let made = made.unwrap_or_else(|e| self.fail(e));
            self.ok(call(made));
            let issued = self.last_call.replace("ncclRedOpDestroy");
            // SAFETY: made on our communicator; its one call has returned.
            self.ok(unsafe { self.lib.red_op_destroy(made, self.comm) });
            self.last_call.set(issued);
            return;
        };
        self.ok(call(op.into()))
    }

    /// reduce_scatter's blocks of different lengths: one ncclReduce per
    /// block, to its rank, in one group.
    #[allow(clippy::too_many_arguments)]
    fn group_of_reduces(
        &self,
        counts: &[i32],
        op: nccl_lib::RedOp,
        t: ncclDataType_t,
        es: usize,
        in_place: bool,
        send: *const c_void,
        base: *mut u8,
    ) {
        self.group(|| {
            let mut at = 0usize;
            for (r, &c) in counts.iter().enumerate() {
                let c = c as usize;
                let src = if in_place {
                    base.wrapping_add(at * es) as *const c_void
                } else {
                    send.wrapping_byte_add(at * es)
                };
                let dst = if r != self.rank {
                    std::ptr::null_mut()
                } else if in_place {
                    base.wrapping_add(at * es) as *mut c_void
                } else {
                    base as *mut c_void
                };
                // SAFETY: block r of the input is `c` elements at `at`;
                // only rank r writes its output.
                let res = unsafe { self.lib.reduce(src, dst, c, t, op, r as i32, self.comm, self.stream()) };
                self.ok(res);
                at += c;
            }
        });
    }

    /// One group of point-to-point operations (NCCL runs them together).
    #[inline(always)]
    fn group(&self, body: impl FnOnce()) {
        self.ok(self.lib.group_start());
        body();
        self.ok(self.lib.group_end());
    }

    /// A device-to-device copy of `bytes` on the stream (a rooted
    /// collective's own block); a CUDA failure ends the job.
    fn copy(&self, dst: *mut c_void, src: *const c_void, bytes: usize) {
        // SAFETY: callers pass two device ranges of `bytes` each.
        if let Err(e) = unsafe { cu::memcpy_dtod_async(dst as u64, src as u64, bytes, self.stream) } {
            self.fail_cuda("cuMemcpyDtoDAsync", e)
        }
    }

    /// [`Nccl::operands`] with the lengths checked: the input (apart)
    /// holds `send_bytes`, the output `recv_bytes`.
    #[inline(always)]
    fn checked<'a>(
        io: Operands<'a, GpuBuf>,
        send_bytes: usize,
        recv_bytes: usize,
        offset: usize,
    ) -> (*const c_void, &'a mut GpuBuf) {
        if let Operands::Apart { send, .. } = &io {
            check_len(send.len(), send_bytes);
        }
        let (send, recv) = Self::operands(io, offset);
        check_len(recv.len(), recv_bytes);
        (send, recv)
    }

    /// The send pointer of a collective (in place: `recv` plus the
    /// rank's own block at `offset` bytes) and the receive buffer.
    #[inline(always)]
    fn operands<'a>(io: Operands<'a, GpuBuf>, offset: usize) -> (*const c_void, &'a mut GpuBuf) {
        match io {
            Operands::Apart { send, recv } => (send.as_ptr() as *const c_void, recv),
            // SAFETY (of the pointer arithmetic): callers check that the
            // buffer holds the block at `offset`.
            Operands::InPlace(buf) => (buf.as_ptr().wrapping_add(offset) as *const c_void, buf),
        }
    }
}

impl Drop for Nccl<'_> {
    fn drop(&mut self) {
        // SAFETY: the communicator and stream this transport made; nothing
        // is in flight once the benchmark has ended.
        unsafe {
            let _ = cu::stream::synchronize(self.stream);
            self.drop_graph();
            for e in self.events.get_mut().drain(..) {
                let _ = cu::event::destroy(e);
            }
            let _ = self.lib.comm_destroy(self.comm);
            if !self.stream.is_null() {
                let _ = cu::stream::destroy(self.stream);
            }
        }
    }
}

impl<'w> Transport for Nccl<'w> {
    type World = Team<'w, World>;
    type Buf = GpuBuf;
    type Mem = CudaMemory;
    type Requests = Requests;

    const BACKEND: &'static str = "nccl";
    const BATCHED: bool = true;

    fn world(&self) -> &Team<'w, World> {
        self.world
    }

    fn memory(&self) -> &CudaMemory {
        &self.mem
    }

    fn comm_rank(&self) -> usize {
        self.rank
    }

    fn comm_size(&self) -> usize {
        self.np
    }

    /// nccl-tests' `-R`: the buffer (its whole allocation) registered with
    /// the communicator, undone when the buffer goes, before the
    /// communicator does (a kernel's buffers go before its transport).
    fn register_buffer(&self, buf: &mut GpuBuf) {
        let (Some(window), GpuBuf::Device(d)) = (self.register, buf) else { return };
        self.last_call.set(nccl_lib::NcclLib::registration_calls(window).0);
        let r = d.register(self.lib, self.comm, window);
        self.ok(r);
    }

    fn requests(&self, _n: usize) -> Requests {
        Requests { pending: 0 }
    }

    #[inline(always)]
    fn now(&self) -> f64 {
        world::wtime()
    }

    fn tick(&self) -> f64 {
        world::wtick()
    }

    #[inline(always)]
    fn complete(&self) {
        self.sync()
    }

    /// CUDA stream capture in thread-local mode, as nccl-tests captures:
    /// each GPU's thread captures its own stream, and what other threads
    /// do meanwhile (another lane's calls, NCCL's own) stays out of it.
    fn begin_capture(&self) -> bool {
        let mode = cusys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        // SAFETY: the stream this transport created, with nothing of
        // this thread capturing.
        if let Err(e) = unsafe { cusys::cuStreamBeginCapture_v2(self.stream, mode) }.result() {
            self.fail_cuda("cuStreamBeginCapture", e)
        }
        true
    }

    fn end_capture(&self) {
        let mut graph = std::ptr::null_mut();
        // SAFETY: the capture begin_capture started on this stream.
        if let Err(e) = unsafe { cusys::cuStreamEndCapture(self.stream, &mut graph) }.result() {
            self.fail_cuda("cuStreamEndCapture", e)
        }
        let mut exec = std::ptr::null_mut();
        // SAFETY: the graph the capture just made.
        if let Err(e) = unsafe { cusys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }.result() {
            // SAFETY: as above; nothing else holds it.
            let _ = unsafe { cusys::cuGraphDestroy(graph) };
            self.fail_cuda("cuGraphInstantiateWithFlags", e)
        }
        self.drop_graph();
        self.graph.set(Some((graph, exec)));
    }

    #[inline(always)]
    fn launch_capture(&self) {
        let Some((_, exec)) = self.graph.get() else { return };
        // SAFETY: instantiated by end_capture, for this stream's device.
        if let Err(e) = unsafe { cusys::cuGraphLaunch(exec, self.stream) }.result() {
            self.fail_cuda("cuGraphLaunch", e)
        }
    }

    fn free_capture(&self) {
        self.drop_graph();
    }

    #[inline(always)]
    fn begin_group(&self) {
        self.last_call.set("ncclGroupStart");
        self.ok(self.lib.group_start());
    }

    #[inline(always)]
    fn end_group(&self) {
        self.last_call.set("ncclGroupEnd");
        self.ok(self.lib.group_end());
    }

    /// CUDA events with timing (the default flags), kept for the next size.
    fn device_marks(&self, n: usize) -> bool {
        let mut events = self.events.borrow_mut();
        while events.len() < n + 1 {
            match cu::event::create(cusys::CUevent_flags::CU_EVENT_DEFAULT) {
                Ok(e) => events.push(e),
                Err(e) => self.fail_cuda("cuEventCreate", e),
            }
        }
        true
    }

    #[inline(always)]
    fn mark(&self, i: usize) {
        let e = self.events.borrow()[i];
        // SAFETY: an event device_marks made, on this transport's stream.
        if let Err(e) = unsafe { cu::event::record(e, self.stream) } {
            self.fail_cuda("cuEventRecord", e)
        }
    }

    fn mark_intervals(&self, n: usize, out: &mut crate::stats::Samples) {
        let events = self.events.borrow();
        for pair in events[..=n].windows(2) {
            // SAFETY: both recorded on one stream, which `complete` drained.
            match unsafe { cu::event::elapsed(pair[0], pair[1]) } {
                Ok(ms) => out.push(f64::from(ms) * 1e-3),
                Err(e) => self.fail_cuda("cuEventElapsedTime", e),
            }
        }
    }

    fn use_datatype(&self, dt: Datatype) {
        self.mem.use_datatype(dt.size());
    }

    fn device_free(&self) -> Option<u64> {
        free_now()
    }

    fn setup_memory(&self) -> Option<(i64, i64)> {
        Some((self.init_used, self.buffers_used.get()))
    }

    fn record_info(&self) -> Option<serde_json::Value> {
        let (major, minor, patch) = self.lib.version();
        let nccl_env: serde_json::Map<String, serde_json::Value> =
            std::env::vars().filter(|(k, _)| k.starts_with("NCCL_")).map(|(k, v)| (k, v.into())).collect();
        let mut info = self.mem.record_info(self.world).unwrap_or_default();
        if let Some(o) = info.as_object_mut() {
            // NCCL moves the data, not MPI: MPI's CUDA support is moot.
            o.remove("mpi_cuda_support");
            o.insert(
                "nccl".into(),
                json!({
                    "version": format!("{major}.{minor}.{patch}"),
                    "library": self.lib.path().display().to_string(),
                    "environment": nccl_env,
                }),
            );
        }
        Some(info)
    }

    #[inline(always)]
    fn send(&self, buf: &GpuBuf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        self.post_send(buf.as_ptr() as *const c_void, env.count, env.datatype, env.peer);
        self.sync();
    }

    #[inline(always)]
    fn recv(&self, buf: &mut GpuBuf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        self.post_recv(buf.as_mut_ptr() as *mut c_void, env.count, env.datatype, env.peer);
        self.sync();
    }

    #[inline(always)]
    fn isend_window(&self, bufs: &BufferSet<GpuBuf>, env: Envelope, reqs: &mut Requests, _offset: usize) {
        check_len(bufs.slot(0).len(), env.bytes());
        self.group(|| {
            for j in 0..bufs.slots() {
                self.post_send(bufs.slot(j).as_ptr() as *const c_void, env.count, env.datatype, env.peer);
            }
        });
        reqs.pending += bufs.slots();
    }

    #[inline(always)]
    fn irecv_window(&self, bufs: &mut BufferSet<GpuBuf>, env: Envelope, reqs: &mut Requests, _offset: usize) {
        check_len(bufs.slot(0).len(), env.bytes());
        let n = bufs.slots();
        self.group(|| {
            for j in 0..n {
                self.post_recv(bufs.slot_mut(j).as_mut_ptr() as *mut c_void, env.count, env.datatype, env.peer);
            }
        });
        reqs.pending += n;
    }

    /// Both windows in one group, a send then a receive per slot (as
    /// nccl-tests' and OSU's NCCL programs pair them): two groups on one
    /// stream would each wait for the peer's group queued behind its own.
    #[inline(always)]
    fn exchange_windows(
        &self,
        recv: &mut BufferSet<GpuBuf>,
        inn: Envelope,
        send: &BufferSet<GpuBuf>,
        out: Envelope,
        reqs: &mut Requests,
    ) {
        check_len(send.slot(0).len(), out.bytes());
        check_len(recv.slot(0).len(), inn.bytes());
        let n = send.slots().min(recv.slots());
        self.group(|| {
            for j in 0..n {
                self.post_send(send.slot(j).as_ptr() as *const c_void, out.count, out.datatype, out.peer);
                self.post_recv(recv.slot_mut(j).as_mut_ptr() as *mut c_void, inn.count, inn.datatype, inn.peer);
            }
        });
        reqs.pending += 2 * n;
    }

    #[inline(always)]
    fn waitall(&self, reqs: &mut Requests, _offset: usize, _n: usize) {
        self.sync();
        reqs.pending = 0;
    }

    #[inline(always)]
    fn testall(&self, reqs: &mut Requests, _offset: usize, _n: usize) -> bool {
        let done = self.stream_done();
        if done {
            reqs.pending = 0;
        }
        done
    }
}

impl<'w> Collectives for Nccl<'w> {
    const IN_PLACE_RESULT_AT_OWN_BLOCK: bool = true;

    fn allreduce(&self, io: Operands<GpuBuf>, count: usize, dt: Datatype, op: Reduction) {
        let need = count * dt.size();
        let (send, recv) = Self::checked(io, need, need, 0);
        let t = nccl_type(dt);
        self.with_op(op, dt, |op| {
            self.last_call.set("ncclAllReduce");
            // SAFETY: both sides hold `count` elements.
            unsafe {
                self.lib.all_reduce(send, recv.as_mut_ptr() as *mut c_void, count, t, op, self.comm, self.stream())
            }
        });
    }

    fn reduce(&self, io: Operands<GpuBuf>, count: usize, dt: Datatype, op: Reduction, root: usize) {
        let need = count * dt.size();
        let (send, recv) = Self::checked(io, need, need, 0);
        let t = nccl_type(dt);
        self.with_op(op, dt, |op| {
            self.last_call.set("ncclReduce");
            // SAFETY: both sides hold `count` elements (in place they are
            // one buffer, which NCCL allows).
            unsafe {
                self.lib.reduce(
                    send,
                    recv.as_mut_ptr() as *mut c_void,
                    count,
                    t,
                    op,
                    root as i32,
                    self.comm,
                    self.stream(),
                )
            }
        });
    }

    fn reduce_scatter(&self, io: Operands<GpuBuf>, counts: &[i32], dt: Datatype, op: Reduction) {
        assert_eq!(counts.len(), self.np);
        let es = dt.size();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let offset = counts[..self.rank].iter().map(|&c| c as usize).sum::<usize>() * es;
        let mine = counts[self.rank] as usize;
        if let Operands::Apart { send, recv } = &io {
            check_len(send.len(), total * es);
            check_len(recv.len(), mine * es);
        }
        let in_place = matches!(io, Operands::InPlace(_));
        let (send, recv) = Self::operands(io, 0);
        if in_place {
            check_len(recv.len(), total * es);
        }
        let t = nccl_type(dt);
        let equal = counts.iter().all(|&c| c == counts[0]);
        if equal {
            // In place, NCCL's output is the rank's block of the input.
            let out = if in_place { recv.as_mut_ptr().wrapping_add(offset) } else { recv.as_mut_ptr() };
            self.with_op(op, dt, |op| {
                self.last_call.set("ncclReduceScatter");
                // SAFETY: the input holds np blocks of `mine`, the output one.
                unsafe { self.lib.reduce_scatter(send, out as *mut c_void, mine, t, op, self.comm, self.stream()) }
            });
            return;
        }
        // Blocks of different lengths (a size np does not divide): one
        // reduce per block, to its rank, in one group.
        let base = recv.as_mut_ptr();
        self.with_op(op, dt, |op| {
            self.last_call.set("ncclReduce (one per block of a reduce-scatter)");
            self.group_of_reduces(counts, op, t, es, in_place, send, base);
            Ok(())
        });
    }

    fn allgather(&self, io: Operands<GpuBuf>, count: usize, dt: Datatype) {
        let need = count * dt.size();
        let (send, recv) = Self::checked(io, need, need * self.np, need * self.rank);
        self.last_call.set("ncclAllGather");
        // SAFETY: the input holds one block, the output np.
        let r = unsafe {
            self.lib.all_gather(send, recv.as_mut_ptr() as *mut c_void, count, nccl_type(dt), self.comm, self.stream())
        };
        self.ok(r);
    }

    fn alltoall(&self, io: Operands<GpuBuf>, count: usize, dt: Datatype) {
        let need = count * dt.size();
        // In place (nccl-tests' second pass; options refuse -l) the blocks
        // are sent from the buffer they are received into, as nccl-tests
        // does: timed, never checked.
        let (send, recv) = Self::checked(io, need * self.np, need * self.np, 0);
        let base = recv.as_mut_ptr();
        // NCCL's own all-to-all from 2.28 on, as nccl-tests calls it;
        // grouped sends and receives before.
        self.last_call.set("ncclAlltoAll");
        let p = base as *mut c_void;
        // SAFETY: both buffers hold np blocks of `count` (checked).
        if let Some(r) = unsafe { self.lib.all_to_all(send, p, count, nccl_type(dt), self.comm, self.stream()) } {
            return self.ok(r);
        }
        self.group(|| {
            for peer in 0..self.np {
                self.post_send(send.wrapping_byte_add(peer * need), count, dt, peer);
                self.post_recv(base.wrapping_add(peer * need) as *mut c_void, count, dt, peer);
            }
        });
    }

    /// ncclBroadcast from the root's input into every rank's output,
    /// as nccl-tests' out-of-place pass calls it.
    fn bcast_apart(&self, io: Operands<GpuBuf>, count: usize, dt: Datatype, root: usize) {
        let need = count * dt.size();
        let (send, recv) = Self::checked(io, need, need, 0);
        self.last_call.set("ncclBroadcast");
        let p = recv.as_mut_ptr() as *mut c_void;
        // SAFETY: both buffers hold `count` elements (checked).
        let r = unsafe { self.lib.broadcast(send, p, count, nccl_type(dt), root as i32, self.comm, self.stream()) };
        self.ok(r);
    }

    fn bcast(&self, buf: &mut GpuBuf, count: usize, dt: Datatype, root: usize) {
        check_len(buf.len(), count * dt.size());
        let p = buf.as_mut_ptr() as *mut c_void;
        self.last_call.set("ncclBroadcast");
        // SAFETY: the buffer holds `count` elements; in place.
        let r = unsafe { self.lib.broadcast(p, p, count, nccl_type(dt), root as i32, self.comm, self.stream()) };
        self.ok(r);
    }

    fn gather(&self, io: Operands<GpuBuf>, count: usize, dt: Datatype, root: usize) {
        let need = count * dt.size();
        let is_root = self.rank == root;
        let (send, recv) = Self::operands(io, if is_root { need * root } else { 0 });
        check_len(recv.len(), if is_root { need * self.np } else { need });
        let base = recv.as_mut_ptr();
        self.last_call.set("ncclGather");
        let (t, r) = (nccl_type(dt), root as i32);
        // SAFETY: the root's output holds np blocks, the input one (checked).
        if let Some(res) =
            unsafe { self.lib.rooted(false, send, base as *mut c_void, count, t, r, self.comm, self.stream()) }
        {
            return self.ok(res);
        }
        self.group(|| {
            if is_root {
                for peer in (0..self.np).filter(|&p| p != root) {
                    self.post_recv(base.wrapping_add(peer * need) as *mut c_void, count, dt, peer);
                }
            } else {
                self.post_send(send, count, dt, root);
            }
        });
        if is_root && send != base.wrapping_add(root * need) as *const c_void {
            // The root's own block (apart), on the stream.
            self.copy(base.wrapping_add(root * need) as *mut c_void, send, need);
        }
    }

    fn scatter(&self, io: Operands<GpuBuf>, count: usize, dt: Datatype, root: usize) {
        let need = count * dt.size();
        let is_root = self.rank == root;
        let in_place = matches!(io, Operands::InPlace(_));
        let (send, recv) = Self::operands(io, 0);
        let out = recv.as_mut_ptr();
        // NCCL's own scatter: in place the root's block stays where it is
        // in the input (NCCL's in-place rule for a scatter).
        let into = if in_place { out.wrapping_add(root * need) } else { out };
        self.last_call.set("ncclScatter");
        let (t, r) = (nccl_type(dt), root as i32);
        // SAFETY: the root's input holds np blocks, every output one.
        if let Some(res) =
            unsafe { self.lib.rooted(true, send, into as *mut c_void, count, t, r, self.comm, self.stream()) }
        {
            return self.ok(res);
        }
        self.group(|| {
            if is_root {
                for peer in (0..self.np).filter(|&p| p != root) {
                    self.post_send(send.wrapping_byte_add(peer * need), count, dt, peer);
                }
            } else {
                self.post_recv(out as *mut c_void, count, dt, root);
            }
        });
        if is_root && !in_place {
            self.copy(out as *mut c_void, send.wrapping_byte_add(root * need), need);
        }
    }

    /// nccl-tests' hypercube: the own block copied to its place (unless it
    /// is there already, in place), then one group of a send and a receive
    /// per step ([`super::hypercube_steps`]).
    fn hypercube(&self, io: Operands<GpuBuf>, count: usize, dt: Datatype) {
        let need = count * dt.size();
        let (send, recv) = Self::checked(io, need, need * self.np, need * self.rank);
        let base = recv.as_mut_ptr();
        let own = base.wrapping_add(self.rank * need);
        if own as *const c_void != send {
            self.copy(own as *mut c_void, send, need);
        }
        for (peer, sent, got, blocks) in super::hypercube_steps(self.rank, self.np) {
            let out = base.wrapping_add(sent * need) as *const c_void;
            let into = base.wrapping_add(got * need) as *mut c_void;
            self.group(|| {
                self.post_send(out, count * blocks, dt, peer);
                self.post_recv(into, count * blocks, dt, peer);
            });
        }
    }

    /// nccl-tests' alltoallv: one group of a send and a receive per peer
    /// that moves anything, each block after the last.
    fn alltoallv_counts(&self, io: Operands<GpuBuf>, send: &[usize], recv: &[usize], dt: Datatype) {
        let es = dt.size();
        let (sent, got) = (send.iter().sum::<usize>() * es, recv.iter().sum::<usize>() * es);
        // In place (nccl-tests' second pass) the blocks go out of the
        // buffer they come into: timed, never checked.
        let holds = if matches!(io, Operands::InPlace(_)) { got.max(sent) } else { got };
        let (input, out) = Self::checked(io, sent, holds, 0);
        let base = out.as_mut_ptr();
        self.group(|| {
            let (mut s, mut r) = (0usize, 0usize);
            for peer in 0..self.np {
                if send[peer] > 0 {
                    self.post_send(input.wrapping_byte_add(s), send[peer], dt, peer);
                    s += send[peer] * es;
                }
                if recv[peer] > 0 {
                    self.post_recv(base.wrapping_add(r) as *mut c_void, recv[peer], dt, peer);
                    r += recv[peer] * es;
                }
            }
        });
    }

    fn sendrecv(&self, io: Operands<GpuBuf>, count: usize, dt: Datatype) {
        let need = count * dt.size();
        // In place the block is sent from the buffer it is received into,
        // as nccl-tests' in-place pass does: timed, never checked.
        let (send, recv) = Self::checked(io, need, need, 0);
        let (next, prev) = super::ring_neighbours(self.rank, self.np);
        let out = recv.as_mut_ptr() as *mut c_void;
        self.group(|| {
            self.post_send(send, count, dt, next);
            self.post_recv(out, count, dt, prev);
        });
    }
}
