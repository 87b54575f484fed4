//! The two planes every benchmark runs on.
//!
//! The control plane ([`Control`]) is what ranks use to agree between
//! timed regions: rank and size, barriers, the small gathers, reductions
//! and broadcasts of results, node ranks, abort. In a real job it is
//! always MPI ([`world::World`]), whatever carries the measured traffic.
//!
//! The data plane ([`Transport`]) is what is timed: its own buffer type
//! (host memory here; device or registered memory for other transports)
//! with host staging for fill and check, a clock and a completion point,
//! blocking and windowed point-to-point, and the collectives. Kernels are
//! generic over it and monomorphised, so nothing dynamic sits between the
//! timer reads.
//!
//! Transports: MPI ([`mpi_host::Mpi`]) on host memory or, for a
//! CUDA-aware MPI, on GPU memory ([`cuda_memory`]); UCX's tagged messages
//! ([`ucx`], when built with UCX); and an in-process mock with a
//! deterministic clock ([`mock`]) for unit tests.

mod agree;
pub(crate) mod buffer_set;
pub(crate) mod cuda_memory;
#[cfg(test)]
pub(crate) mod mock;
pub(crate) mod mpi_host;
pub mod nccl;
pub(crate) mod neighbor;
pub mod rma;
mod shim;
pub mod split;
pub(crate) mod team;
#[cfg(ucx)]
pub mod ucx;
pub mod world;

use crate::buffer::AllocError;
use crate::datatype::{Datatype, Reduction};
use buffer_set::BufferSet;

/// Reduction operators used on results between sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Min,
    Max,
}

/// The control plane: how ranks agree between timed regions.
pub trait Control {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Synchronises every rank.
    fn barrier(&self);
    /// Every rank's `x`, in rank order, at rank 0 (empty elsewhere).
    fn gather_f64(&self, x: f64) -> Vec<f64>;
    /// Every rank's `xs` (all of the same length), concatenated in rank
    /// order at rank 0; other ranks get an empty vector.
    fn gather_f64_slice(&self, xs: &[f64]) -> Vec<f64>;
    /// Reduces `x` over all ranks to rank 0; the result is meaningful there.
    fn reduce_f64(&self, x: f64, op: ReduceOp) -> f64;
    /// Element-wise reduction of a slice to rank 0 (result valid there).
    fn reduce_f64_slice(&self, xs: &[f64], op: ReduceOp) -> Vec<f64>;
    /// Sum of `x` over all ranks, known everywhere.
    fn allreduce_sum_u64(&self, x: u64) -> u64;
    /// Rank 0's `x`, everywhere.
    fn bcast_u64(&self, x: u64) -> u64;
    /// Rank 0's bytes, everywhere (`mine` is ignored on other ranks).
    fn bcast_bytes(&self, mine: &[u8]) -> Vec<u8>;
    /// Every rank's bytes at rank 0, in rank order; empty elsewhere.
    fn gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>>;
    /// How many ranks share this rank's node, and this rank's index among
    /// them.
    fn node_ranks(&self) -> (usize, usize);
    /// This rank's host as MPI names it (`MPI_Get_processor_name`).
    fn host_name(&self) -> String;
}

/// A message buffer of some transport.
pub trait Buffer {
    /// Usable bytes.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A buffer whose address a C library takes (MPI, NCCL): host memory, or
/// device memory a GPU-aware library reads and writes itself.
pub trait RawBuffer: Buffer {
    fn as_ptr(&self) -> *const u8;
    fn as_mut_ptr(&mut self) -> *mut u8;
}

impl Buffer for crate::buffer::AlignedBuf {
    fn len(&self) -> usize {
        crate::buffer::AlignedBuf::len(self)
    }
}

impl RawBuffer for crate::buffer::AlignedBuf {
    #[inline(always)]
    fn as_ptr(&self) -> *const u8 {
        crate::buffer::AlignedBuf::as_ptr(self)
    }

    #[inline(always)]
    fn as_mut_ptr(&mut self) -> *mut u8 {
        crate::buffer::AlignedBuf::as_mut_ptr(self)
    }
}

/// The `bytes` of [`Memory::write_host`] (and `read_host`) that reach
/// the whole buffer.
pub(crate) const WHOLE: usize = usize::MAX;

/// Where a transport's message buffers live, and how the host reaches
/// into them outside timed regions (fills and validation).
pub trait Memory {
    type Buf: RawBuffer;
    /// What the CSV and run record call it (`host`, `cuda`).
    const MEMORY: &'static str;
    /// A zeroed buffer of `bytes`.
    fn alloc(&self, bytes: usize) -> Result<Self::Buf, AllocError>;
    /// Lets `write` change the first `bytes` of the contents (at most the
    /// buffer's length; [`WHOLE`] for all of it) through host memory. Only
    /// those bytes are staged: a fill or check of a small message in a
    /// buffer sized for the largest one costs the small message's copies.
    fn write_host(&self, buf: &mut Self::Buf, bytes: usize, write: impl FnOnce(&mut [u8]));
    /// Lets `read` see the first `bytes` of the contents in host memory.
    fn read_host<R>(&self, buf: &Self::Buf, bytes: usize, read: impl FnOnce(&[u8]) -> R) -> R;
    /// The GPU this rank's buffers are in and how (`device`, `managed`);
    /// None for host memory.
    fn gpu_buffers(&self) -> Option<(&crate::gpu::cuda::GpuInfo, &'static str)> {
        None
    }
    /// What the run record says about this memory (collective: every
    /// rank calls it; the value matters at rank 0).
    fn record_info<C: Control>(&self, _w: &C) -> Option<serde_json::Value> {
        None
    }
}

/// Page-aligned host memory, as OSU allocates it.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostMemory;

impl Memory for HostMemory {
    type Buf = crate::buffer::AlignedBuf;
    const MEMORY: &'static str = "host";

    fn alloc(&self, bytes: usize) -> Result<Self::Buf, AllocError> {
        crate::buffer::AlignedBuf::zeroed(bytes)
    }

    fn write_host(&self, buf: &mut Self::Buf, bytes: usize, write: impl FnOnce(&mut [u8])) {
        let s = buf.as_mut_slice();
        let n = bytes.min(s.len());
        write(&mut s[..n])
    }

    fn read_host<R>(&self, buf: &Self::Buf, bytes: usize, read: impl FnOnce(&[u8]) -> R) -> R {
        let s = buf.as_slice();
        read(&s[..bytes.min(s.len())])
    }
}

/// Who a message goes to or comes from, and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// Elements of `datatype`.
    pub count: usize,
    pub datatype: Datatype,
    pub peer: usize,
    pub tag: i32,
}

impl Envelope {
    pub fn bytes(&self) -> usize {
        self.count * self.datatype.size()
    }
}

/// The buffers of a collective call: apart, or one buffer holding input
/// and output (MPI_IN_PLACE).
pub enum Operands<'a, B> {
    Apart { send: &'a B, recv: &'a mut B },
    InPlace(&'a mut B),
}

/// The count and displacement arrays of a vector collective (MPI's
/// `counts` and `displs`, one entry per rank), with the bytes a buffer
/// needs to hold every block, worked out once outside the timed region.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Blocks {
    /// Elements of rank r's block.
    pub counts: Vec<i32>,
    /// Where rank r's block starts: in elements, or in bytes where the
    /// call takes byte displacements (MPI_Alltoallw).
    pub displs: Vec<i32>,
    /// Bytes from the start of the buffer to the end of the furthest
    /// block.
    pub extent: usize,
}

impl Blocks {
    /// Blocks of `counts[r]` elements of `dt` at `displs[r]` (elements,
    /// or bytes when `displs_in_bytes`).
    pub fn new(counts: Vec<i32>, displs: Vec<i32>, dt: Datatype, displs_in_bytes: bool) -> Blocks {
        let unit = if displs_in_bytes { 1 } else { dt.size() };
        let extent = counts
            .iter()
            .zip(&displs)
            .filter(|(&c, _)| c > 0)
            .map(|(&c, &d)| d.max(0) as usize * unit + c as usize * dt.size())
            .max()
            .unwrap_or(0);
        Blocks { counts, displs, extent }
    }

    /// `count` elements for each of `np` ranks, laid end to end in rank
    /// order (the layout OSU's vector benchmarks use).
    pub(crate) fn end_to_end(np: usize, count: usize, dt: Datatype, displs_in_bytes: bool) -> Blocks {
        let unit = if displs_in_bytes { dt.size() } else { 1 };
        let counts = vec![count as i32; np];
        let displs = (0..np).map(|r| (r * count * unit) as i32).collect();
        Blocks::new(counts, displs, dt, displs_in_bytes)
    }

    /// Blocks of `counts[r]` elements for each rank r, end to end in rank
    /// order (displacements in elements); None where a count or
    /// displacement does not fit MPI's `int`.
    pub(crate) fn end_to_end_of(counts: &[usize], dt: Datatype) -> Option<Blocks> {
        let mut displs = Vec::with_capacity(counts.len());
        let mut at = 0usize;
        for &c in counts {
            displs.push(i32::try_from(at).ok()?);
            at = at.checked_add(c)?;
        }
        let counts = counts.iter().map(|&c| i32::try_from(c).ok()).collect::<Option<Vec<_>>>()?;
        Some(Blocks::new(counts, displs, dt, false))
    }

    /// Byte offset of rank r's block.
    pub fn offset(&self, r: usize, dt: Datatype, displs_in_bytes: bool) -> usize {
        self.displs[r].max(0) as usize * if displs_in_bytes { 1 } else { dt.size() }
    }
}

/// The data plane: what a benchmark times. Every operation checks that
/// the buffers it is given hold the elements it moves; the unsafe calls
/// stay inside the implementation.
pub trait Transport {
    /// The control plane this transport runs beside.
    type World: Control;
    /// A message buffer of this transport.
    type Buf: Buffer;
    /// The memory its buffers come from ([`Transport::memory`]).
    type Mem: Memory<Buf = Self::Buf>;
    /// Room for the requests of windowed non-blocking operations.
    type Requests;

    /// The `backend` column of the CSV (`mpi`).
    const BACKEND: &'static str;

    /// This rank and the ranks of the communicator the data moves over:
    /// the world's, except where NCCL_TESTS_SPLIT splits it (the world
    /// stays the control plane, as nccl-tests' barriers and averages
    /// span every process).
    fn comm_rank(&self) -> usize {
        self.world().rank()
    }
    fn comm_size(&self) -> usize {
        self.world().size()
    }

    /// Registers a buffer the kernel made with the library (nccl-tests'
    /// `-R` over NCCL); nothing elsewhere.
    fn register_buffer(&self, _buf: &mut Self::Buf) {}
    /// Whether a kernel that can is timed as nccl-tests times: one clock
    /// read before a batch of operations, one completion and one read
    /// after ([`crate::bench::engine::timed_loop`]), instead of a completion and
    /// two reads around every operation (OSU's way, the default).
    const BATCHED: bool = false;

    fn world(&self) -> &Self::World;

    /// Where its message buffers live: they are allocated, filled and
    /// checked there (untimed), and it names them in the CSV and record.
    fn memory(&self) -> &Self::Mem;
    /// Request slots for `n` operations in flight.
    fn requests(&self, n: usize) -> Self::Requests;

    /// The clock timed regions read, in seconds.
    fn now(&self) -> f64;
    /// Seconds between ticks of that clock.
    fn tick(&self) -> f64;
    /// Waits until the operations issued so far have finished, before the
    /// closing clock read (a stream synchronisation for GPU transports;
    /// nothing where calls return complete).
    #[inline(always)]
    fn complete(&self) {}

    /// Opens a group: the calls up to the matching [`Transport::end_group`]
    /// are issued together (NCCL's `ncclGroupStart`, nccl-tests' `-m`).
    /// Groups nest. Nothing where calls are issued one by one.
    #[inline(always)]
    fn begin_group(&self) {}
    /// Closes the group [`Transport::begin_group`] opened, issuing its
    /// calls once it is the outermost (`ncclGroupEnd`).
    #[inline(always)]
    fn end_group(&self) {}

    /// Starts recording the calls issued from now on into a graph instead
    /// of running them (nccl-tests' `-G`: CUDA stream capture); true when
    /// recording. False where the transport has no graphs: the calls then
    /// run as issued (only nccl-tests' front end asks, and it runs over
    /// NCCL, which has them).
    fn begin_capture(&self) -> bool {
        false
    }
    /// Ends the recording [`Transport::begin_capture`] started and makes
    /// the graph ready to launch, untimed.
    fn end_capture(&self) {}
    /// Launches the recorded graph once, without waiting for it.
    #[inline(always)]
    fn launch_capture(&self) {}
    /// Frees the recorded graph once its launches are complete.
    fn free_capture(&self) {}

    /// Device timestamps for per-iteration times in a batch (CUDA events
    /// recorded between calls issued back to back): makes room for `n` + 1
    /// of them, untimed. False where the transport has none; the loop
    /// then completes and reads the clock around every call instead.
    fn device_marks(&self, _n: usize) -> bool {
        false
    }
    /// Records timestamp `i` once the work issued so far is done, without
    /// waiting for it.
    #[inline(always)]
    fn mark(&self, _i: usize) {}
    /// After `complete`: seconds from timestamp `i` to `i + 1` for every
    /// `i < n`, in order, into `out`.
    fn mark_intervals(&self, _n: usize, _out: &mut crate::stats::Samples) {}

    /// The datatype of the sizes that follow, before their buffers are
    /// filled (nccl-tests' `-u` moves the buffers' starts with it).
    fn use_datatype(&self, _dt: crate::datatype::Datatype) {}

    /// Device memory free now on this transport's GPU, bytes; None where
    /// it has none (nccl-tests' `-M` reads it around the measurement).
    fn device_free(&self) -> Option<u64> {
        None
    }
    /// The device memory this transport's setup took: (its communicator's,
    /// the buffers made on it since), bytes; None where it has no device.
    fn setup_memory(&self) -> Option<(i64, i64)> {
        None
    }

    /// What the run record says about this transport beyond its name
    /// (`backend_details`), at rank 0; collective (every rank calls it).
    /// By default what its memory says.
    fn record_info(&self) -> Option<serde_json::Value> {
        self.memory().record_info(self.world())
    }

    /// Blocking send of `env.count` elements from `buf`.
    fn send(&self, buf: &Self::Buf, env: Envelope);
    /// Blocking receive into `buf`.
    fn recv(&self, buf: &mut Self::Buf, env: Envelope);
    /// Posts one non-blocking send per slot of `bufs` into
    /// `reqs[offset..]`.
    fn isend_window(&self, bufs: &BufferSet<Self::Buf>, env: Envelope, reqs: &mut Self::Requests, offset: usize);
    /// Posts one non-blocking receive per slot of `bufs` into
    /// `reqs[offset..]`.
    fn irecv_window(&self, bufs: &mut BufferSet<Self::Buf>, env: Envelope, reqs: &mut Self::Requests, offset: usize);
    /// Posts a window of receives into `recv` (`reqs[0..w]`) and a window
    /// of sends from `send` (`reqs[w..2w]`) at once, as osu_bibw does on
    /// both ranks. The receives go first, then the sends; a transport
    /// whose windows run one after the other on one stream (NCCL) posts
    /// both in one group instead, or each rank's receives would wait for
    /// sends its peer has queued behind its own receives.
    fn exchange_windows(
        &self,
        recv: &mut BufferSet<Self::Buf>,
        inn: Envelope,
        send: &BufferSet<Self::Buf>,
        out: Envelope,
        reqs: &mut Self::Requests,
    ) {
        self.irecv_window(recv, inn, reqs, 0);
        self.isend_window(send, out, reqs, recv.slots());
    }
    /// Waits for `reqs[offset..offset + n]`.
    fn waitall(&self, reqs: &mut Self::Requests, offset: usize, n: usize);
    /// Whether `reqs[offset..offset + n]` have all completed. Never blocks.
    fn testall(&self, reqs: &mut Self::Requests, offset: usize, n: usize) -> bool;
}

/// What a benchmark needs of a transport: the point-to-point messages
/// every [`Transport`] has, or one capability trait beyond them
/// ([`Collectives`], [`DataBarrier`], [`VectorCollectives`],
/// [`NonBlockingCollectives`], [`PersistentCollectives`],
/// [`PersistentPointToPoint`], [`rma::OneSided`], [`Threaded`],
/// [`neighbor::NeighborCollectives`]). A transport implements the ones it
/// has and nothing else; a benchmark names the one it needs
/// (`bench::Bench::Needs`), and which `--backend` runs it follows from
/// that ([`capabilities`], checked against src/runner.rs's `Launch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    PointToPoint,
    Collectives,
    Barrier,
    VectorCollectives,
    NonBlockingCollectives,
    PersistentCollectives,
    /// Point-to-point requests bound once and started many times
    /// (MPI_Send_init, MPI_Recv_init, MPI_Startall).
    PersistentPointToPoint,
    OneSided,
    /// Blocking messages from several threads of a rank at once.
    Threads,
    NeighborCollectives,
}

impl Capability {
    /// What it is, for the line that refuses a backend without it.
    pub fn describe(self) -> &'static str {
        match self {
            Capability::PointToPoint => "point-to-point messages",
            Capability::Collectives => "the collectives",
            Capability::Barrier => "a barrier of its own",
            Capability::VectorCollectives => "the vector collectives",
            Capability::NonBlockingCollectives => "non-blocking collectives",
            Capability::PersistentCollectives => "persistent collectives",
            Capability::PersistentPointToPoint => "persistent point-to-point requests",
            Capability::OneSided => "one-sided communication",
            Capability::Threads => "messages from several threads at once",
            Capability::NeighborCollectives => "the neighbourhood collectives",
        }
    }
}

/// What carries the timed messages (`--backend`): a transport of this
/// module, with what it implements in [`capabilities`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The MPI library the binary was built with.
    Mpi,
    /// UCX's UCP tagged messages, straight (point-to-point benchmarks).
    Ucx,
    /// NCCL on each rank's GPU.
    Nccl,
}

impl Backend {
    /// Every backend, in `--backend`'s order.
    pub const ALL: [Backend; 3] = [Backend::Mpi, Backend::Ucx, Backend::Nccl];

    /// The backend whose `--backend` word this is.
    pub(crate) fn from_word(word: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.word() == word)
    }

    /// Its `--backend` word.
    pub fn word(self) -> &'static str {
        match self {
            Backend::Mpi => "mpi",
            Backend::Ucx => "ucx",
            Backend::Nccl => "nccl",
        }
    }

    /// Its line under `--backend` in `-h`.
    pub fn about(self) -> &'static str {
        match self {
            Backend::Mpi => "the MPI library (the default)",
            Backend::Ucx => "UCP tagged messages, straight (point-to-point)",
            Backend::Nccl => "NCCL on each rank's GPU",
        }
    }
}

/// What each `--backend`'s transport implements. src/runner.rs's
/// `Launch` builds each benchmark over exactly these (checked when it is
/// compiled), and the options refuse a backend without what the benchmark
/// needs, from this table.
pub(crate) const fn capabilities(backend: Backend) -> &'static [Capability] {
    use Capability::*;
    match backend {
        // Mpi<M>: Transport, Collectives, DataBarrier, VectorCollectives,
        // NonBlockingCollectives, NeighborCollectives, PersistentCollectives
        // (where the library is MPI-4: persistent_refusal),
        // PersistentPointToPoint; MpiHost: OneSided, Threaded.
        Backend::Mpi => &[
            PointToPoint,
            Collectives,
            Barrier,
            VectorCollectives,
            NonBlockingCollectives,
            PersistentCollectives,
            PersistentPointToPoint,
            OneSided,
            Threads,
            NeighborCollectives,
        ],
        // Ucx: Transport.
        Backend::Ucx => &[PointToPoint],
        // Nccl: Transport (one window at a time), Collectives.
        Backend::Nccl => &[PointToPoint, Collectives],
    }
}

/// Whether `backend` has `cap` ([`capabilities`]).
pub(crate) const fn provides(backend: Backend, cap: Capability) -> bool {
    let caps = capabilities(backend);
    let mut i = 0;
    while i < caps.len() {
        if caps[i] as u8 == cap as u8 {
            return true;
        }
        i += 1;
    }
    false
}

/// The blocking collectives that move data, of a transport that has them
/// (MPI, NCCL, the mock; UCX's tag API has none).
pub trait Collectives: Transport {
    /// Where an in-place reduce-scatter leaves a rank's share of the
    /// result: at the start of the buffer, as MPI_IN_PLACE does (false), or
    /// at the rank's own block of it, as NCCL does (`recvbuff = sendbuff +
    /// rank * recvcount`; true).
    const IN_PLACE_RESULT_AT_OWN_BLOCK: bool = false;
    /// `op` over ranks, everywhere. MPI has no [`Reduction::Avg`]: the
    /// options offer it on NCCL alone.
    fn allreduce(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype, op: Reduction);
    /// `op` over ranks at `root`. In place, the root's buffer holds its
    /// input and receives the result; other ranks send from theirs.
    fn reduce(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype, op: Reduction, root: usize);
    /// `op` over ranks, rank r keeping `counts[r]` elements of the result.
    fn reduce_scatter(&self, io: Operands<Self::Buf>, counts: &[i32], dt: Datatype, op: Reduction);
    /// `count` elements from every rank to every rank (in place: each
    /// rank's block already sits at its offset of the receive buffer).
    fn allgather(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype);
    /// `count` elements from every rank to each rank.
    fn alltoall(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype);
    /// `count` elements of `root`'s buffer to every rank.
    fn bcast(&self, buf: &mut Self::Buf, count: usize, dt: Datatype, root: usize);
    /// `count` elements from every rank, concatenated at `root` (the
    /// receive side matters only there). In place, the root's own block
    /// already sits at its offset of the buffer; other ranks send from
    /// theirs.
    fn gather(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype, root: usize);
    /// Block r of `root`'s send buffer (`count` elements) to rank r. In
    /// place, the root's buffer holds every block and keeps its own; other
    /// ranks receive into theirs.
    fn scatter(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype, root: usize);
    /// `count` elements to rank `rank + 1` and `count` from rank `rank -
    /// 1` (around the ring), at once. In place, one buffer is sent from
    /// and received into: MPI replaces its contents; over NCCL's grouped
    /// send and receive the result is undefined (nccl-tests leaves it
    /// unchecked).
    fn sendrecv(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype);
    /// [`Collectives::allgather`]'s result by a hypercube's exchanges
    /// (nccl-tests' hypercube). Only the nccl-tests front end runs it,
    /// always over NCCL, whose transport has the exchanges of its own; the
    /// others (the mock, for the engine's tests) give the same result
    /// through their allgather.
    fn hypercube(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype) {
        self.allgather(io, count, dt)
    }
    /// An all-to-all of `send[r]` elements to each rank r and `recv[r]`
    /// from each, blocks end to end in rank order on both sides (nccl-tests'
    /// alltoallv; every rank's counts may differ). In place the input is
    /// the receive buffer and the result undefined (nccl-tests leaves it
    /// unchecked).
    fn alltoallv_counts(&self, io: Operands<Self::Buf>, send: &[usize], recv: &[usize], dt: Datatype);
    /// A broadcast out of the root's send buffer into every rank's receive
    /// buffer (nccl-tests' out-of-place broadcast), or in place. Where the
    /// library's broadcast has one buffer (MPI's), the root first copies
    /// its input over through the host, untimed by any front end (only
    /// NCCL's, which has both, is timed so).
    fn bcast_apart(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype, root: usize) {
        match io {
            Operands::InPlace(buf) => self.bcast(buf, count, dt, root),
            Operands::Apart { send, recv } => {
                if self.world().rank() == root {
                    let (m, n) = (self.memory(), count * dt.size());
                    m.read_host(send, n, |s| m.write_host(recv, n, |r| r[..n].copy_from_slice(&s[..n])));
                }
                self.bcast(recv, count, dt, root)
            }
        }
    }
}

/// The partner and the blocks exchanged at each step of rank `rank`'s
/// hypercube among `np` ranks (a power of two; [`Collectives::hypercube`]):
/// (peer, first block sent, first block received, blocks each way).
pub(crate) fn hypercube_steps(rank: usize, np: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    std::iter::successors(Some(1usize), |m| m.checked_mul(2)).take_while(move |&m| m < np).map(move |mask| {
        // What this rank holds: the aligned run of `mask` blocks its
        // own is in; the partner holds the run beside it.
        let mine = rank & !(mask - 1);
        (rank ^ mask, mine, mine ^ mask, mask)
    })
}

/// The device memory taken between two readings of the free memory
/// ([`Transport::device_free`]), bytes; 0 where either is missing.
pub(crate) fn used_between(before: Option<u64>, after: Option<u64>) -> i64 {
    match (before, after) {
        (Some(b), Some(a)) => b as i64 - a as i64,
        _ => 0,
    }
}

/// The rank after and the rank before `rank` around the ring of `np`
/// ranks ([`Collectives::sendrecv`]'s peers; itself for one rank).
pub(crate) fn ring_neighbours(rank: usize, np: usize) -> (usize, usize) {
    ((rank + 1) % np, (rank + np - 1) % np)
}

/// Blocking point-to-point messages from several threads of a rank at
/// once (osu_latency_mt; MPI started with `MPI_THREAD_MULTIPLE`): each
/// thread holds a [`Lane`] and buffers of its own.
pub(crate) trait Threaded: Transport {
    type Lane<'a>: Lane<Self::Buf>
    where
        Self: 'a;
    /// What the rank's threads share to send and receive.
    fn lane(&self) -> Self::Lane<'_>;
}

/// The calls one thread makes, shared by all of a rank's threads.
pub(crate) trait Lane<B>: Sync {
    fn send(&self, buf: &B, env: Envelope);
    fn recv(&self, buf: &mut B, env: Envelope);
    /// The transport's clock, as [`Transport::now`].
    fn now(&self) -> f64;
}

/// A barrier on the data plane (what osu_barrier times): MPI's and the
/// mock's. NCCL has none.
pub trait DataBarrier: Transport {
    fn barrier(&self);
}

/// The vector collectives, and MPI-3's block reduce-scatter (MPI and the
/// mock; NCCL has neither: its reduce-scatter, which osu_reduce_scatter
/// times, is the equal-blocks case of [`Collectives::reduce_scatter`]).
pub trait VectorCollectives: Collectives {
    /// `count` elements from every rank to `root`, rank r's block landing
    /// where `blocks` says (MPI_Gatherv). In place as [`Collectives::gather`]:
    /// the root's own block already sits at its place.
    fn gatherv(&self, io: Operands<Self::Buf>, count: usize, blocks: &Blocks, dt: Datatype, root: usize);
    /// Rank r receives `count` elements, block r of `root`'s send buffer as
    /// `blocks` lays it out (MPI_Scatterv). In place as
    /// [`Collectives::scatter`].
    fn scatterv(&self, io: Operands<Self::Buf>, blocks: &Blocks, count: usize, dt: Datatype, root: usize);
    /// `count` elements from every rank into every rank's receive buffer,
    /// laid out by `blocks` (MPI_Allgatherv). In place, each rank's own
    /// block already sits at its place.
    fn allgatherv(&self, io: Operands<Self::Buf>, count: usize, blocks: &Blocks, dt: Datatype);
    /// Block r of the send layout to rank r, block s of the receive layout
    /// from rank s (MPI_Alltoallv); in place, the receive buffer and
    /// layout hold the input too.
    fn alltoallv(&self, io: Operands<Self::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype);
    /// As [`VectorCollectives::alltoallv`], with byte displacements and a type
    /// per peer, every one `dt` (MPI_Alltoallw).
    fn alltoallw(&self, io: Operands<Self::Buf>, send: &Blocks, recv: &Blocks, dt: Datatype);
    /// Sum over ranks of `np * count` elements, rank r keeping elements
    /// `r * count ..` of the result (MPI_Reduce_scatter_block); in place
    /// the receive buffer holds the whole input and the result lands at
    /// its start.
    fn reduce_scatter_block_sum(&self, io: Operands<Self::Buf>, count: usize, dt: Datatype);
}

/// The non-blocking collectives (OSU's osu_i* benchmarks; MPI and the
/// mock), in the shape of [`PersistentCollectives`]: a transport writes each
/// collective once, blocking, and [`NonBlockingCollectives::start`] starts
/// instead of completing the one call a closure makes (MPI_Iallreduce for
/// MPI_Allreduce, with the same arguments). The transport holds its one
/// request until [`NonBlockingCollectives::nb_wait`] (or an
/// [`NonBlockingCollectives::nb_test`] that finds it done). One is in
/// flight at a time.
pub trait NonBlockingCollectives: VectorCollectives + DataBarrier + NeighborCollectives {
    /// Starts, without waiting for it, the one collective call that `call`
    /// makes on this transport (a [`Collectives`], [`VectorCollectives`],
    /// [`DataBarrier`] or [`NeighborCollectives`] method).
    ///
    /// # Safety
    /// The buffers and layouts that call names stay allocated, and are not
    /// read or written, until the operation has completed (`nb_wait`, or
    /// `nb_test` returning true): MPI writes them in the meantime.
    unsafe fn start(&self, call: impl FnOnce(&Self));
    /// MPI_Test on the operation in flight: whether it has completed (true
    /// also when none is in flight).
    fn nb_test(&self) -> bool;
    /// MPI_Wait on the operation in flight (returns at once when none is).
    fn nb_wait(&self);

    /// The non-blocking benchmarks' dummy computation: busy work on this
    /// rank's CPU for `secs` seconds of this transport's clock, checked
    /// between short bursts of arithmetic (so it may run over by one
    /// burst, as OSU's does). The mock's virtual clock just moves on.
    fn compute_for(&self, secs: f64) {
        let start = self.now();
        let mut x = [1.0f64, 2.0, 3.0, 4.0];
        while self.now() - start < secs {
            for v in x.iter_mut() {
                *v = std::hint::black_box(*v * 0.999_999 + 0.5);
            }
        }
        std::hint::black_box(x);
    }
}

/// Point-to-point requests bound once to a buffer and an envelope
/// (`MPI_Send_init`, `MPI_Recv_init`), then started as often as needed
/// (`MPI_Startall`) and completed with [`Transport::waitall`]; what the
/// osu_*_persistent point-to-point programs time.
pub(crate) trait PersistentPointToPoint: Transport {
    /// Binds a send of `env` from `buf` into request `reqs[slot]`.
    ///
    /// # Safety
    /// `buf` stays alive and in place until the request is freed, and
    /// unwritten while it is active.
    unsafe fn bind_send(&self, buf: &Self::Buf, env: Envelope, reqs: &mut Self::Requests, slot: usize);

    /// Binds a receive of `env` into `buf` as request `reqs[slot]`.
    ///
    /// # Safety
    /// As [`PersistentPointToPoint::bind_send`].
    unsafe fn bind_recv(&self, buf: &mut Self::Buf, env: Envelope, reqs: &mut Self::Requests, slot: usize);

    /// Starts the bound requests `reqs[offset..offset + n]`.
    fn startall(&self, reqs: &mut Self::Requests, offset: usize, n: usize);

    /// Frees the bound requests among `reqs[offset..offset + n]` (they must
    /// be inactive).
    fn free_requests(&self, reqs: &mut Self::Requests, offset: usize, n: usize);
}

/// One of the two persistent requests a transport keeps
/// ([`PersistentCollectives`]): the one the timed calls start, and the one
/// OSU's untimed validation repetitions start (bound to the warm-up receive
/// buffer where the collective has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Timed = 0,
    Warm = 1,
}

/// MPI-4's persistent collectives: an operation bound once to its buffers
/// and arguments (`MPI_Allreduce_init`, ...), then started and completed as
/// often as needed (`MPI_Start`, `MPI_Wait`) and freed
/// (`MPI_Request_free`). What is bound is what one start of the transport's
/// [`NonBlockingCollectives`] would start, so each persistent benchmark
/// reuses its non-blocking twin's start.
pub trait PersistentCollectives: NonBlockingCollectives {
    /// Why this transport's library cannot run them (an MPI-3 library has
    /// no `MPI_X_init`), asked before anything is bound.
    fn persistent_refusal(&self) -> Option<String>;

    /// Binds into request `slot` the operation that `start` (one start of
    /// a [`NonBlockingCollectives`] call on this transport) would start,
    /// instead of starting it. A request already in `slot` is freed first.
    ///
    /// # Safety
    /// The buffers and layouts `start` names stay alive and in place until
    /// the request is freed, and untouched while it is active.
    unsafe fn bind(&self, slot: Bound, start: impl FnOnce());

    /// Starts the request in `slot` (`MPI_Start`).
    fn start_bound(&self, slot: Bound);

    /// Waits for the request in `slot` to complete (`MPI_Wait`; the request
    /// stays bound).
    fn wait_bound(&self, slot: Bound);

    /// Frees the request in `slot`, if one is bound.
    fn free_bound(&self, slot: Bound);
}

/// Panics (an internal error: the runner sized the buffers) when a buffer
/// of `len` bytes cannot hold `need`. Kept out of line so the check costs
/// one compare in a timed region.
#[inline(always)]
#[track_caller]
pub(crate) fn check_len(len: usize, need: usize) {
    if need > len {
        too_short(len, need)
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn too_short(len: usize, need: usize) -> ! {
    panic!("a {len}-byte message buffer was given {need} bytes to move")
}

/// Keeps UCX's own log lines (warnings about transports or devices it
/// cannot use, errors it then reports to us) off stderr, where OSU prints
/// nothing, unless the user set `UCX_LOG_LEVEL`: every failure still ends
/// in one line of ours with UCX's status. UCX reads the level when the
/// library is first loaded (Open MPI may load it during MPI_Init), so this
/// runs before MPI starts, while the process has one thread.
pub(crate) fn quiet_ucx_by_default() {
    if std::env::var_os("UCX_LOG_LEVEL").is_none() {
        std::env::set_var("UCX_LOG_LEVEL", "fatal");
    }
}

pub(crate) use agree::agree_failures;
pub(crate) use neighbor::{Adjacency, ByteBlocks, NeighborCollectives, NeighborGraph};
