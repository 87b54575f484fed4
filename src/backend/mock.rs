//! An in-process stand-in for a job: `np` ranks as threads of one process,
//! each with a control plane ([`MockWorld`]) and a data plane
//! ([`MockTransport`]) that really move bytes between the ranks' host
//! buffers, so fills, validation and reductions are exercised for real.
//!
//! Time is virtual and deterministic: every rank has its own clock, and
//! each operation moves it by a fixed cost model (see [`Model`]) instead of
//! by what the machine happens to do. A message sent at virtual time t on
//! an idle link arrives at t + overhead + bytes / bandwidth + latency; a
//! link carries one message at a time; a receive completes at the later of
//! its own clock and the arrival; barriers and collectives end every rank
//! at the latest clock plus the operation's cost. So a ping-pong of S bytes
//! takes exactly 2 (overhead + latency + S / bandwidth), whatever the
//! threads' scheduling, and the measurement loop, the runner's size logic
//! and the metric formulas can be tested without a launcher.
//!
//! Blocking operations, windows completed with `waitall` and collectives
//! are exactly reproducible. `testall` completes receives whose messages
//! have been sent by then in real time (moving the clock to their
//! arrival), so a loop that polls and posts new sends in between may leave
//! a link idle for up to one latency, depending on the threads' timing.
//!
//! A rank that waits more than [`STUCK_AFTER`] for its peers panics with
//! what it waited for, so a broken test fails instead of hanging.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::{
    check_len, Adjacency, Blocks, Bound, ByteBlocks, Collectives, Control, DataBarrier, Envelope, NeighborCollectives,
    NeighborGraph, NonBlockingCollectives, Operands, PersistentCollectives, PersistentPointToPoint, ReduceOp,
    Transport, VectorCollectives,
};
use crate::backend::buffer_set::BufferSet;
use crate::buffer::AlignedBuf;
use crate::datatype::{Datatype, Reduction};

mod one_sided;

/// How long a mock rank waits for the others before declaring the test
/// stuck.
pub(crate) const STUCK_AFTER: Duration = Duration::from_secs(30);

/// The cost model of the virtual clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Seconds from the end of a transfer to its arrival.
    pub latency_s: f64,
    /// Seconds each posted operation costs the rank that posts it.
    pub overhead_s: f64,
    /// Bytes per second of every link and of the collectives.
    pub bytes_per_s: f64,
    /// Up to this many extra seconds on each posted operation and each
    /// collective, drawn from a fixed pseudo-random sequence per rank: noisy
    /// but reproducible timings (0: every iteration alike).
    pub jitter_s: f64,
    /// A second, slower mode, in spans of virtual time (None: one mode).
    pub modes: Option<Modes>,
}

/// Two modes of a rank, as osu_bibw shows at small sizes on a busy host:
/// a posted operation or a collective costs `slow_extra_s` more while the
/// rank's clock is in a slow span. The clock runs fast for `fast_s`, then
/// slow for `slow_s`, then fast again for `fast_s`, and so on; an infinite
/// `slow_s` stays slow for good once the first fast span is over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Modes {
    pub fast_s: f64,
    pub slow_s: f64,
    pub slow_extra_s: f64,
}

impl Modes {
    /// Whether virtual time `t` is in a slow span.
    fn slow_at(&self, t: f64) -> bool {
        if t < self.fast_s {
            return false;
        }
        let cycle = self.fast_s + self.slow_s;
        !cycle.is_finite() || t % cycle >= self.fast_s
    }
}

impl Default for Model {
    /// 1 us latency, 0.1 us per call, 10 GB/s.
    fn default() -> Model {
        Model { latency_s: 1e-6, overhead_s: 1e-7, bytes_per_s: 1e10, jitter_s: 0.0, modes: None }
    }
}

impl Model {
    /// One-way time of one `bytes` message on an idle link.
    pub(crate) fn one_way(&self, bytes: usize) -> f64 {
        self.overhead_s + bytes as f64 / self.bytes_per_s + self.latency_s
    }

    /// Rounds of a tree or dissemination algorithm over `np` ranks.
    pub fn steps(np: usize) -> f64 {
        (np.max(1) as f64).log2().ceil()
    }

    /// Time of a barrier over `np` ranks.
    pub fn barrier(&self, np: usize) -> f64 {
        Model::steps(np) * (self.overhead_s + self.latency_s)
    }

    /// Time of a collective that moves `bytes` through each rank's link.
    pub fn collective(&self, np: usize, bytes: f64) -> f64 {
        self.barrier(np) + bytes / self.bytes_per_s
    }
}

/// A deliberate fault, for tests of what happens when data goes wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Every point-to-point message that `to` receives, the result of
    /// every allreduce and vector collective on `to`, every one-sided
    /// update of `to`'s window and every value a one-sided call fetches
    /// back to `to` has its first byte flipped.
    CorruptTo { to: usize },
}

struct Parcel {
    data: Vec<u8>,
    arrival: f64,
}

#[derive(Default)]
struct Mail {
    /// Messages in flight, by (source, destination, tag), in send order.
    queues: HashMap<(usize, usize, i32), VecDeque<Parcel>>,
    /// When each directed link is free again.
    link_free: HashMap<(usize, usize), f64>,
}

/// Contributions to the collective under way.
struct Round {
    generation: u64,
    arrived: usize,
    slots: Vec<Option<(Vec<u8>, f64)>>,
    /// Everyone's contributions and the latest clock, once all arrived.
    done: Option<Arc<(Vec<Vec<u8>>, f64)>>,
    /// Ranks that have taken the result of the finished round.
    taken: usize,
}

struct Shared {
    np: usize,
    model: Model,
    fault: Option<Fault>,
    mail: Mutex<Mail>,
    mail_moved: Condvar,
    round: Mutex<Round>,
    round_moved: Condvar,
    /// Window memory while a window is being made (mock/one_sided.rs).
    windows: Mutex<HashMap<(u64, usize), one_sided::WinMemory>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` on `np` mock ranks, one thread each, and returns what each
/// rank returned, in rank order.
pub fn run<R: Send>(np: usize, model: Model, f: impl Fn(&MockTransport) -> R + Sync) -> Vec<R> {
    run_with(np, model, None, f)
}

/// [`run`] with a fault injected.
pub(crate) fn run_with<R: Send>(
    np: usize,
    model: Model,
    fault: Option<Fault>,
    f: impl Fn(&MockTransport) -> R + Sync,
) -> Vec<R> {
    let shared = Arc::new(Shared {
        np,
        model,
        fault,
        mail: Mutex::new(Mail::default()),
        mail_moved: Condvar::new(),
        round: Mutex::new(Round { generation: 0, arrived: 0, slots: vec![None; np], done: None, taken: 0 }),
        round_moved: Condvar::new(),
        windows: Mutex::new(HashMap::new()),
    });
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..np)
            .map(|rank| {
                let shared = shared.clone();
                s.spawn(move || {
                    let t = MockTransport {
                        world: MockWorld { rank, shared, clock: Cell::new(0.0), draws: Cell::new(0) },
                        marks: RefCell::default(),
                        pending: Cell::new(None),
                        rma: one_sided::RmaClock::default(),
                        binding: Cell::new(false),
                        kept: RefCell::default(),
                        bound: Default::default(),
                        groups: Cell::new((0, 0)),
                        capture: Cell::new(None),
                        graph: Cell::new(None),
                        launches: Cell::new(0),
                    };
                    f(&t)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    })
}

/// One rank's control plane (and clock).
pub(crate) struct MockWorld {
    rank: usize,
    shared: Arc<Shared>,
    clock: Cell<f64>,
    /// Jitter drawn so far (the position in this rank's sequence).
    draws: Cell<u64>,
}

impl MockWorld {
    /// This rank's virtual time.
    pub fn clock(&self) -> f64 {
        self.clock.get()
    }

    fn advance(&self, by: f64) {
        self.clock.set(self.clock.get() + by);
    }

    /// The model's jitter: the next value of this rank's sequence (a
    /// SplitMix64 of rank and draw number), uniform in [0, jitter_s).
    fn jitter(&self) {
        let max = self.shared.model.jitter_s;
        if max <= 0.0 {
            return;
        }
        let n = self.draws.get();
        self.draws.set(n + 1);
        let mut z = (self.rank as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ n.wrapping_add(0x6a09_e667_f3bc_c909);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        self.advance((z >> 11) as f64 / (1u64 << 53) as f64 * max);
    }

    /// The model's slow mode: its extra cost where the clock is in a slow
    /// span.
    fn mode(&self) {
        if let Some(m) = self.shared.model.modes.filter(|m| m.slow_at(self.clock())) {
            self.advance(m.slow_extra_s);
        }
    }

    fn at_least(&self, t: f64) {
        if t > self.clock.get() {
            self.clock.set(t);
        }
    }

    /// Every rank's `mine`, in rank order, everywhere, and the latest
    /// clock among the ranks as they arrived. Every rank must call this in
    /// the same order, as with any collective.
    fn exchange(&self, mine: Vec<u8>) -> Arc<(Vec<Vec<u8>>, f64)> {
        let sh = &*self.shared;
        let mut r = lock(&sh.round);
        // A previous round still being collected by slower ranks: wait.
        while r.done.is_some() {
            r = self.wait(r, "the previous collective to be collected");
        }
        let generation = r.generation;
        r.slots[self.rank] = Some((mine, self.clock.get()));
        r.arrived += 1;
        if r.arrived == sh.np {
            let mut all = Vec::with_capacity(sh.np);
            let mut latest = f64::NEG_INFINITY;
            for slot in r.slots.iter_mut() {
                let (data, clock) = slot.take().unwrap_or_default();
                latest = latest.max(clock);
                all.push(data);
            }
            r.done = Some(Arc::new((all, latest)));
            r.arrived = 0;
            sh.round_moved.notify_all();
        }
        while r.generation == generation && r.done.is_none() {
            r = self.wait(r, "the other ranks to join a collective");
        }
        let result = r.done.clone().unwrap_or_else(|| unreachable!("a finished round has a result"));
        r.taken += 1;
        if r.taken == sh.np {
            r.taken = 0;
            r.done = None;
            r.generation += 1;
            sh.round_moved.notify_all();
        }
        result
    }

    fn wait<'a>(&self, g: MutexGuard<'a, Round>, what: &str) -> MutexGuard<'a, Round> {
        let (g, t) = self.shared.round_moved.wait_timeout(g, STUCK_AFTER).unwrap_or_else(|p| p.into_inner());
        if t.timed_out() {
            panic!("mock rank {} stuck waiting for {what}", self.rank);
        }
        g
    }

    /// All ranks meet; every clock moves to the latest one plus `cost`.
    fn meet(&self, cost: f64) -> Arc<(Vec<Vec<u8>>, f64)> {
        let all = self.exchange(Vec::new());
        self.clock.set(all.1 + cost);
        all
    }
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap_or([0; 8]))).collect()
}

fn f64_bytes(xs: &[f64]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

impl Control for MockWorld {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.shared.np
    }

    fn barrier(&self) {
        self.meet(self.shared.model.barrier(self.shared.np));
    }

    fn gather_f64(&self, x: f64) -> Vec<f64> {
        self.gather_f64_slice(&[x])
    }

    fn gather_f64_slice(&self, xs: &[f64]) -> Vec<f64> {
        let all = self.exchange(f64_bytes(xs));
        if self.rank != 0 {
            return Vec::new();
        }
        all.0.iter().flat_map(|b| f64s(b)).collect()
    }

    fn reduce_f64(&self, x: f64, op: ReduceOp) -> f64 {
        self.reduce_f64_slice(&[x], op)[0]
    }

    fn reduce_f64_slice(&self, xs: &[f64], op: ReduceOp) -> Vec<f64> {
        let all = self.exchange(f64_bytes(xs));
        let mut out = f64s(&all.0[0]);
        for other in &all.0[1..] {
            for (o, v) in out.iter_mut().zip(f64s(other)) {
                *o = match op {
                    ReduceOp::Sum => *o + v,
                    ReduceOp::Min => o.min(v),
                    ReduceOp::Max => o.max(v),
                };
            }
        }
        out
    }

    fn allreduce_sum_u64(&self, x: u64) -> u64 {
        let all = self.exchange(x.to_ne_bytes().to_vec());
        all.0.iter().map(|b| u64::from_ne_bytes(b[..8].try_into().unwrap_or([0; 8]))).sum()
    }

    fn bcast_u64(&self, x: u64) -> u64 {
        let all = self.exchange(x.to_ne_bytes().to_vec());
        u64::from_ne_bytes(all.0[0][..8].try_into().unwrap_or([0; 8]))
    }

    fn bcast_bytes(&self, mine: &[u8]) -> Vec<u8> {
        self.exchange(mine.to_vec()).0[0].clone()
    }

    fn gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let all = self.exchange(mine.to_vec());
        if self.rank == 0 {
            all.0.clone()
        } else {
            Vec::new()
        }
    }

    /// Every mock rank is on one node.
    fn host_name(&self) -> String {
        "mock".into()
    }

    /// Every mock rank is on one node.
    fn node_ranks(&self) -> (usize, usize) {
        (self.shared.np, self.rank)
    }
}

/// A request slot of the mock.
#[derive(Clone, Copy, Debug)]
enum Req {
    /// Nothing pending (a completed or never used slot).
    Null,
    /// A receive into `len` bytes at `ptr` from `peer` with `tag`. The
    /// buffer outlives the request as with MPI: callers complete it while
    /// the buffer set is borrowed.
    Recv { peer: usize, tag: i32, ptr: *mut u8, len: usize },
}

pub(crate) struct MockRequests {
    reqs: Vec<Req>,
    /// Each slot's persistent operation ([`PersistentPointToPoint`]): a
    /// send from, or a receive into, the buffer it was bound to.
    bound: Vec<Option<BoundOp>>,
}

/// A bound point-to-point operation of the mock, as MPI keeps it: the
/// buffer's address and length and the envelope, fixed when bound.
#[derive(Clone, Copy)]
enum BoundOp {
    Send { ptr: *const u8, len: usize, env: Envelope },
    Recv { ptr: *mut u8, len: usize, env: Envelope },
}

/// One rank's data plane: host buffers, virtual time.
pub(crate) struct MockTransport {
    world: MockWorld,
    /// Device timestamps ([`Transport::mark`]): the virtual clock.
    marks: RefCell<Vec<f64>>,
    /// When the non-blocking collective in flight completes.
    pending: Cell<Option<f64>>,
    /// One-sided operations in flight (mock/one_sided.rs).
    rma: one_sided::RmaClock,
    /// Set while [`PersistentCollectives::bind`] runs a start: the
    /// collective it names is kept ([`MockTransport::keep`]), not run.
    binding: Cell<bool>,
    /// The collective the start being bound named.
    kept: RefCell<Option<BoundColl>>,
    /// The collective bound in each [`Bound`] slot.
    bound: [RefCell<Option<BoundColl>>; 2],
    /// Groups open now, and outermost groups closed so far
    /// ([`Transport::begin_group`]).
    groups: Cell<(usize, usize)>,
    /// A graph ([`Transport::begin_capture`]): the clock where the capture
    /// began while it lasts, then the virtual time one launch takes.
    /// The captured calls run (and move the data) as they are captured;
    /// the clock is wound back once the capture ends, and each launch
    /// moves it on by what they took, so only the launches' time shows.
    capture: Cell<Option<f64>>,
    graph: Cell<Option<f64>>,
    /// Graph launches so far.
    pub launches: Cell<usize>,
}

/// A persistent collective of the mock, as MPI keeps one: the blocking
/// call with its buffers by address and its arguments by value, all fixed
/// when bound; each start re-issues it.
type BoundColl = Box<dyn Fn(&MockTransport)>;

/// The buffers of a collective by address, kept in a bound request.
#[derive(Clone, Copy)]
enum RawOperands {
    Apart { send: *const AlignedBuf, recv: *mut AlignedBuf },
    InPlace(*mut AlignedBuf),
}

impl RawOperands {
    fn of(io: Operands<AlignedBuf>) -> RawOperands {
        match io {
            Operands::Apart { send, recv } => RawOperands::Apart { send, recv },
            Operands::InPlace(buf) => RawOperands::InPlace(buf),
        }
    }

    /// # Safety
    /// The buffers are alive and in place, and nothing else writes to
    /// them while the operation runs ([`PersistentCollectives::bind`]'s
    /// contract, as for MPI's bound requests).
    unsafe fn get<'a>(self) -> Operands<'a, AlignedBuf> {
        // SAFETY: passed on from the caller.
        unsafe {
            match self {
                RawOperands::Apart { send, recv } => Operands::Apart { send: &*send, recv: &mut *recv },
                RawOperands::InPlace(buf) => Operands::InPlace(&mut *buf),
            }
        }
    }
}

impl MockTransport {
    /// Outermost groups closed so far; panics while one is open.
    pub(crate) fn groups_closed(&self) -> usize {
        let (open, closed) = self.groups.get();
        assert_eq!(open, 0, "a group is still open");
        closed
    }

    fn model(&self) -> &Model {
        &self.world.shared.model
    }

    /// Sends `data` to `env.peer`: the rank pays the call, the link
    /// carries it after whatever it is still carrying.
    fn post(&self, data: &[u8], env: Envelope) {
        let me = self.world.rank;
        self.world.advance(self.model().overhead_s);
        self.world.jitter();
        self.world.mode();
        let done = self.carry(me, env.peer, self.world.clock(), data.len());
        let sh = &*self.world.shared;
        let mut mail = lock(&sh.mail);
        let mut data = data.to_vec();
        if let (Some(Fault::CorruptTo { to }), Some(b)) = (sh.fault, data.first_mut()) {
            if to == env.peer {
                *b ^= 0xff;
            }
        }
        mail.queues
            .entry((me, env.peer, env.tag))
            .or_default()
            .push_back(Parcel { data, arrival: done + sh.model.latency_s });
        sh.mail_moved.notify_all();
    }

    /// Carries `bytes` on the link from `from` to `to`, after whatever it
    /// is still carrying and no earlier than `start`; when the last byte
    /// has left.
    fn carry(&self, from: usize, to: usize, start: f64, bytes: usize) -> f64 {
        let sh = &*self.world.shared;
        let mut mail = lock(&sh.mail);
        let free = mail.link_free.get(&(from, to)).copied().unwrap_or(0.0);
        let done = start.max(free) + bytes as f64 / sh.model.bytes_per_s;
        mail.link_free.insert((from, to), done);
        done
    }

    /// Takes the next message from `peer` with `tag`, waiting for it.
    fn take(&self, peer: usize, tag: i32) -> Parcel {
        let sh = &*self.world.shared;
        let mut mail = lock(&sh.mail);
        loop {
            if let Some(p) = mail.queues.get_mut(&(peer, self.world.rank, tag)).and_then(VecDeque::pop_front) {
                return p;
            }
            let (m, t) = sh.mail_moved.wait_timeout(mail, STUCK_AFTER).unwrap_or_else(|p| p.into_inner());
            if t.timed_out() {
                panic!("mock rank {} stuck waiting for a message from rank {peer} with tag {tag}", self.world.rank);
            }
            mail = m;
        }
    }

    /// Writes a received message into `len` bytes at `dst`.
    fn deliver(&self, p: Parcel, dst: &mut [u8]) {
        assert!(p.data.len() <= dst.len(), "message of {} bytes truncated to {}", p.data.len(), dst.len());
        dst[..p.data.len()].copy_from_slice(&p.data);
        self.world.at_least(p.arrival);
    }

    /// Completes every receive in `reqs`.
    fn complete_recvs(&self, reqs: &mut [Req]) {
        for r in reqs.iter_mut() {
            if let Req::Recv { peer, tag, ptr, len } = *r {
                let p = self.take(peer, tag);
                // SAFETY: the request was posted on a live buffer of `len`
                // bytes that its owner keeps borrowed until completion.
                let dst = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
                self.deliver(p, dst);
            }
            *r = Req::Null;
        }
    }

    /// Ends a collective: every rank's contribution, every clock at the
    /// latest plus the cost of moving `bytes` through each link.
    fn collective(&self, mine: Vec<u8>, bytes: f64) -> Arc<(Vec<Vec<u8>>, f64)> {
        let all = self.world.exchange(mine);
        self.world.clock.set(all.1 + self.model().collective(self.world.shared.np, bytes));
        self.world.jitter();
        self.world.mode();
        all
    }

    fn np(&self) -> usize {
        self.world.shared.np
    }

    /// While a start is being bound, keeps the collective `op` re-issues
    /// on `io` and gives nothing back; otherwise gives `io` back to run.
    /// `op` is made only then, so a plain call copies no arguments.
    fn keep_or_run<'a, F: Fn(&MockTransport, Operands<AlignedBuf>) + 'static>(
        &self,
        io: Operands<'a, AlignedBuf>,
        op: impl FnOnce() -> F,
    ) -> Option<Operands<'a, AlignedBuf>> {
        if !self.binding.get() {
            return Some(io);
        }
        let (raw, op) = (RawOperands::of(io), op());
        // SAFETY: the kernel keeps the buffers as bind's contract says.
        self.keep(move |t| op(t, unsafe { raw.get() }));
        None
    }

    /// Keeps `op` as the collective the start being bound names.
    fn keep(&self, op: impl Fn(&MockTransport) + 'static) {
        let earlier = self.kept.replace(Some(Box::new(op)));
        assert!(earlier.is_none(), "one start bound two collectives");
    }
}

/// The input and output of a collective, as host slices.
fn split_io<'a>(io: &'a mut Operands<AlignedBuf>) -> (Vec<u8>, &'a mut AlignedBuf) {
    match io {
        Operands::Apart { send, recv } => (send.as_slice().to_vec(), recv),
        Operands::InPlace(buf) => (buf.as_slice().to_vec(), buf),
    }
}

/// Element-wise `op` over `count` elements of every input, from element
/// `first` on, as MPI (or NCCL) computes it on `dt`: integers wrap and
/// compare with their sign or without; an average is the sum divided by
/// the inputs (integers truncate); a pre-multiplied sum multiplies input r
/// (rank r's) by [`Reduction::pre_mul_scalar`] first. A narrow float rounds
/// to its type after each step, and its average multiplies each input by
/// the reciprocal of the inputs first, as NCCL's does.
fn reduce_elements(inputs: &[Vec<u8>], count: usize, dt: Datatype, first: usize, op: Reduction) -> Vec<u8> {
    fn fold<T: Copy + PartialOrd>(
        mut xs: impl Iterator<Item = T>,
        op: Reduction,
        add: impl Fn(T, T) -> T,
        mul: impl Fn(T, T) -> T,
    ) -> T {
        let first = xs.next().expect("one input at least");
        xs.fold(first, |a, b| match op {
            Reduction::Sum | Reduction::Avg | Reduction::MulSum => add(a, b),
            Reduction::Prod => mul(a, b),
            Reduction::Max if b > a => b,
            Reduction::Min if b < a => b,
            Reduction::Max | Reduction::Min => a,
        })
    }
    let (w, n) = (dt.size(), inputs.len());
    let mut out = vec![0u8; count * w];
    // One element of type $t: the inputs' values (in a pre-multiplied sum,
    // each times its rank's scalar) folded, an average divided by the
    // inputs, written back.
    macro_rules! reduce_as {
        ($t:ty, $add:expr, $mul:expr, $k:expr) => {{
            const W: usize = std::mem::size_of::<$t>();
            let at = (first + $k) * W;
            let read = |(r, b): (usize, &Vec<u8>)| {
                let x = <$t>::from_ne_bytes(b[at..at + W].try_into().expect("an element"));
                if op == Reduction::MulSum {
                    $mul(x, Reduction::pre_mul_scalar(r) as $t)
                } else {
                    x
                }
            };
            let v = fold(inputs.iter().enumerate().map(read), op, $add, $mul);
            let v = if op == Reduction::Avg { v / n as $t } else { v };
            out[$k * W..($k + 1) * W].copy_from_slice(&v.to_ne_bytes());
        }};
    }
    if let Some(f) = dt.narrow() {
        let w = dt.size();
        let reciprocal = f.round(1.0 / n as f64);
        let scale = |r: usize| match op {
            Reduction::Avg => reciprocal,
            Reduction::MulSum => Reduction::pre_mul_scalar(r) as f64,
            _ => 1.0,
        };
        for k in 0..count {
            let at = (first + k) * w;
            let xs = inputs.iter().enumerate().map(|(r, b)| f.round(f.decode(f.read(&b[at..at + w])) * scale(r)));
            let v = fold(xs, op, |a, b| f.round(a + b), |a, b| f.round(a * b));
            f.write(f.encode(v), &mut out[k * w..(k + 1) * w]);
        }
        return out;
    }
    for k in 0..count {
        match dt {
            Datatype::Char => reduce_as!(i8, i8::wrapping_add, i8::wrapping_mul, k),
            Datatype::Uint8 => reduce_as!(u8, u8::wrapping_add, u8::wrapping_mul, k),
            Datatype::Int => reduce_as!(i32, i32::wrapping_add, i32::wrapping_mul, k),
            Datatype::Uint32 => reduce_as!(u32, u32::wrapping_add, u32::wrapping_mul, k),
            Datatype::Int64 => reduce_as!(i64, i64::wrapping_add, i64::wrapping_mul, k),
            Datatype::Uint64 => reduce_as!(u64, u64::wrapping_add, u64::wrapping_mul, k),
            Datatype::Float => reduce_as!(f32, |a, b| a + b, |a, b| a * b, k),
            Datatype::Double => reduce_as!(f64, |a, b| a + b, |a, b| a * b, k),
            Datatype::Half | Datatype::Bfloat16 | Datatype::F8e4m3 | Datatype::F8e5m2 => unreachable!("reduced above"),
        }
    }
    out
}

impl Transport for MockTransport {
    type World = MockWorld;
    type Buf = AlignedBuf;
    type Mem = super::HostMemory;
    type Requests = MockRequests;

    const BACKEND: &'static str = "mock";

    fn world(&self) -> &MockWorld {
        &self.world
    }

    fn memory(&self) -> &super::HostMemory {
        &super::HostMemory
    }

    fn requests(&self, n: usize) -> MockRequests {
        MockRequests { reqs: vec![Req::Null; n.max(1)], bound: vec![None; n.max(1)] }
    }

    fn now(&self) -> f64 {
        self.world.clock()
    }

    fn tick(&self) -> f64 {
        1e-9
    }

    fn begin_group(&self) {
        let (open, closed) = self.groups.get();
        self.groups.set((open + 1, closed));
    }

    fn end_group(&self) {
        let (open, closed) = self.groups.get();
        assert!(open > 0, "end_group without begin_group");
        self.groups.set((open - 1, closed + usize::from(open == 1)));
    }

    fn begin_capture(&self) -> bool {
        assert!(self.capture.get().is_none() && self.graph.get().is_none(), "one graph at a time");
        self.capture.set(Some(self.world.clock()));
        true
    }

    fn end_capture(&self) {
        let began = self.capture.take().expect("end_capture without begin_capture");
        self.graph.set(Some(self.world.clock() - began));
        self.world.clock.set(began);
    }

    fn launch_capture(&self) {
        self.world.advance(self.graph.get().expect("a launch without a graph"));
        self.launches.set(self.launches.get() + 1);
    }

    fn free_capture(&self) {
        assert!(self.graph.take().is_some(), "free_capture without a graph");
    }

    fn device_marks(&self, n: usize) -> bool {
        self.marks.borrow_mut().resize(n + 1, 0.0);
        true
    }

    fn mark(&self, i: usize) {
        self.marks.borrow_mut()[i] = self.world.clock();
    }

    fn mark_intervals(&self, n: usize, out: &mut crate::stats::Samples) {
        for pair in self.marks.borrow()[..=n].windows(2) {
            out.push(pair[1] - pair[0]);
        }
    }

    fn send(&self, buf: &AlignedBuf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        self.post(&buf.as_slice()[..env.bytes()], env);
    }

    fn recv(&self, buf: &mut AlignedBuf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        self.world.advance(self.model().overhead_s);
        let p = self.take(env.peer, env.tag);
        self.deliver(p, &mut buf.as_mut_slice()[..env.bytes()]);
    }

    fn isend_window(&self, bufs: &BufferSet<AlignedBuf>, env: Envelope, reqs: &mut MockRequests, offset: usize) {
        let n = bufs.slots();
        assert!(offset + n <= reqs.reqs.len());
        for j in 0..n {
            let b = bufs.slot(j);
            check_len(b.len(), env.bytes());
            // Sends are buffered: complete once posted.
            self.post(&b.as_slice()[..env.bytes()], env);
            reqs.reqs[offset + j] = Req::Null;
        }
    }

    fn irecv_window(&self, bufs: &mut BufferSet<AlignedBuf>, env: Envelope, reqs: &mut MockRequests, offset: usize) {
        let n = bufs.slots();
        assert!(offset + n <= reqs.reqs.len());
        for j in 0..n {
            let b = bufs.slot_mut(j);
            check_len(b.len(), env.bytes());
            self.world.advance(self.model().overhead_s);
            reqs.reqs[offset + j] = Req::Recv { peer: env.peer, tag: env.tag, ptr: b.as_mut_ptr(), len: env.bytes() };
        }
    }

    fn waitall(&self, reqs: &mut MockRequests, offset: usize, n: usize) {
        self.complete_recvs(&mut reqs.reqs[offset..offset + n]);
    }

    /// All or nothing, as MPI_Testall: true when every pending receive's
    /// message has been sent (its arrival then moves the clock).
    fn testall(&self, reqs: &mut MockRequests, offset: usize, n: usize) -> bool {
        let range = &mut reqs.reqs[offset..offset + n];
        {
            let mail = lock(&self.world.shared.mail);
            let mut wanted: HashMap<(usize, i32), usize> = HashMap::new();
            for r in range.iter() {
                if let Req::Recv { peer, tag, .. } = *r {
                    *wanted.entry((peer, tag)).or_default() += 1;
                }
            }
            let me = self.world.rank;
            let ready =
                wanted.iter().all(|(&(peer, tag), &k)| mail.queues.get(&(peer, me, tag)).map_or(0, VecDeque::len) >= k);
            if !ready {
                return false;
            }
        }
        self.complete_recvs(range);
        true
    }
}

impl Collectives for MockTransport {
    fn allreduce(&self, io: Operands<AlignedBuf>, count: usize, dt: Datatype, op: Reduction) {
        let Some(mut io) = self.keep_or_run(io, || move |t, io| t.allreduce(io, count, dt, op)) else {
            return;
        };
        let bytes = count * dt.size();
        let (input, out) = split_io(&mut io);
        check_len(input.len(), bytes);
        check_len(out.len(), bytes);
        let np = self.np() as f64;
        let all = self.collective(input, 2.0 * (np - 1.0) / np * bytes as f64);
        out.as_mut_slice()[..bytes].copy_from_slice(&reduce_elements(&all.0, count, dt, 0, op));
        if let (Some(Fault::CorruptTo { to }), Some(b)) = (self.world.shared.fault, out.as_mut_slice().first_mut()) {
            if to == self.world.rank && bytes > 0 {
                *b ^= 0xff;
            }
        }
    }

    fn reduce(&self, io: Operands<AlignedBuf>, count: usize, dt: Datatype, op: Reduction, root: usize) {
        let Some(mut io) = self.keep_or_run(io, || move |t, io| t.reduce(io, count, dt, op, root)) else {
            return;
        };
        let bytes = count * dt.size();
        let (input, out) = split_io(&mut io);
        check_len(input.len(), bytes);
        let all = self.collective(input, bytes as f64);
        if self.world.rank == root {
            check_len(out.len(), bytes);
            out.as_mut_slice()[..bytes].copy_from_slice(&reduce_elements(&all.0, count, dt, 0, op));
        }
    }

    fn reduce_scatter(&self, io: Operands<AlignedBuf>, counts: &[i32], dt: Datatype, op: Reduction) {
        let Some(mut io) = self.keep_or_run(io, || {
            let counts = counts.to_vec();
            move |t, io| t.reduce_scatter(io, &counts, dt, op)
        }) else {
            return;
        };
        assert_eq!(counts.len(), self.np());
        let me = self.world.rank;
        let first: usize = counts[..me].iter().map(|&c| c as usize).sum();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let (input, out) = split_io(&mut io);
        check_len(input.len(), total * dt.size());
        let np = self.np() as f64;
        let all = self.collective(input, (np - 1.0) / np * (total * dt.size()) as f64);
        let mine = reduce_elements(&all.0, counts[me] as usize, dt, first, op);
        check_len(out.len(), mine.len());
        out.as_mut_slice()[..mine.len()].copy_from_slice(&mine);
    }

    fn allgather(&self, io: Operands<AlignedBuf>, count: usize, dt: Datatype) {
        let Some(mut io) = self.keep_or_run(io, || move |t, io| t.allgather(io, count, dt)) else {
            return;
        };
        let (np, me, bytes) = (self.np(), self.world.rank, count * dt.size());
        let in_place = matches!(io, Operands::InPlace(_));
        let (input, out) = split_io(&mut io);
        check_len(out.len(), bytes * np);
        let block = if in_place { input[me * bytes..(me + 1) * bytes].to_vec() } else { input[..bytes].to_vec() };
        let all = self.collective(block, ((np - 1) * bytes) as f64);
        for (r, b) in all.0.iter().enumerate() {
            out.as_mut_slice()[r * bytes..(r + 1) * bytes].copy_from_slice(b);
        }
    }

    fn alltoall(&self, io: Operands<AlignedBuf>, count: usize, dt: Datatype) {
        let Some(mut io) = self.keep_or_run(io, || move |t, io| t.alltoall(io, count, dt)) else {
            return;
        };
        let (np, me, bytes) = (self.np(), self.world.rank, count * dt.size());
        let (input, out) = split_io(&mut io);
        check_len(input.len(), bytes * np);
        check_len(out.len(), bytes * np);
        let all = self.collective(input, ((np - 1) * bytes) as f64);
        for (r, b) in all.0.iter().enumerate() {
            out.as_mut_slice()[r * bytes..(r + 1) * bytes].copy_from_slice(&b[me * bytes..(me + 1) * bytes]);
        }
    }

    fn bcast(&self, buf: &mut AlignedBuf, count: usize, dt: Datatype, root: usize) {
        if self.binding.get() {
            let buf: *mut AlignedBuf = buf;
            // SAFETY: the kernel keeps the buffer as bind's contract says.
            return self.keep(move |t| t.bcast(unsafe { &mut *buf }, count, dt, root));
        }
        let bytes = count * dt.size();
        check_len(buf.len(), bytes);
        let mine = if self.world.rank == root { buf.as_slice()[..bytes].to_vec() } else { Vec::new() };
        let all = self.collective(mine, bytes as f64);
        buf.as_mut_slice()[..bytes].copy_from_slice(&all.0[root]);
    }

    fn gather(&self, io: Operands<AlignedBuf>, count: usize, dt: Datatype, root: usize) {
        let Some(mut io) = self.keep_or_run(io, || move |t, io| t.gather(io, count, dt, root)) else {
            return;
        };
        let (np, me, bytes) = (self.np(), self.world.rank, count * dt.size());
        let in_place_root = me == root && matches!(io, Operands::InPlace(_));
        let (input, out) = split_io(&mut io);
        let block = if in_place_root { &input[me * bytes..(me + 1) * bytes] } else { &input[..bytes] };
        let all = self.collective(block.to_vec(), ((np - 1) * bytes) as f64);
        if me == root {
            check_len(out.len(), bytes * np);
            for (r, b) in all.0.iter().enumerate() {
                out.as_mut_slice()[r * bytes..(r + 1) * bytes].copy_from_slice(b);
            }
        }
    }

    fn scatter(&self, io: Operands<AlignedBuf>, count: usize, dt: Datatype, root: usize) {
        let Some(mut io) = self.keep_or_run(io, || move |t, io| t.scatter(io, count, dt, root)) else {
            return;
        };
        let (np, me, bytes) = (self.np(), self.world.rank, count * dt.size());
        let in_place = matches!(io, Operands::InPlace(_));
        let (input, out) = split_io(&mut io);
        let mine = if me == root {
            check_len(input.len(), bytes * np);
            input[..bytes * np].to_vec()
        } else {
            Vec::new()
        };
        let all = self.collective(mine, ((np - 1) * bytes) as f64);
        // In place, the root keeps its block where it is.
        if !(in_place && me == root) {
            check_len(out.len(), bytes);
            out.as_mut_slice()[..bytes].copy_from_slice(&all.0[root][me * bytes..(me + 1) * bytes]);
        }
    }

    fn sendrecv(&self, io: Operands<AlignedBuf>, count: usize, dt: Datatype) {
        let Some(mut io) = self.keep_or_run(io, || move |t, io| t.sendrecv(io, count, dt)) else {
            return;
        };
        let (np, me, bytes) = (self.np(), self.world.rank, count * dt.size());
        let (input, out) = split_io(&mut io);
        check_len(input.len(), bytes);
        check_len(out.len(), bytes);
        // One block out and one in on each rank's link.
        let all = self.collective(input[..bytes].to_vec(), bytes as f64);
        out.as_mut_slice()[..bytes].copy_from_slice(&all.0[super::ring_neighbours(me, np).1]);
    }

    /// Every rank hands in its counts ahead of its blocks, so each finds
    /// where in a sender's blocks its own starts.
    fn alltoallv_counts(&self, io: Operands<AlignedBuf>, send: &[usize], recv: &[usize], dt: Datatype) {
        let Some(mut io) = self.keep_or_run(io, || {
            let (send, recv) = (send.to_vec(), recv.to_vec());
            move |t, io| t.alltoallv_counts(io, &send, &recv, dt)
        }) else {
            return;
        };
        let (np, me, es) = (self.np(), self.world.rank, dt.size());
        let (input, out) = split_io(&mut io);
        let sent: usize = send.iter().sum::<usize>() * es;
        check_len(input.len(), sent);
        check_len(out.len(), recv.iter().sum::<usize>() * es);
        let head = np * 8;
        let mut mine: Vec<u8> = send.iter().flat_map(|&c| (c as u64).to_le_bytes()).collect();
        mine.extend_from_slice(&input[..sent]);
        let all = self.collective(mine, sent as f64 * (np as f64 - 1.0) / np as f64);
        let mut at = 0;
        for (r, theirs) in all.0.iter().enumerate() {
            let count = |k: usize| u64::from_le_bytes(theirs[k * 8..k * 8 + 8].try_into().expect("8 bytes")) as usize;
            let from = head + (0..me).map(count).sum::<usize>() * es;
            let n = recv[r] * es;
            assert_eq!(count(me) * es, n, "rank {r} sends rank {me} what it expects");
            out.as_mut_slice()[at..at + n].copy_from_slice(&theirs[from..from + n]);
            at += n;
        }
        self.tamper(out.as_mut_slice());
    }
}

impl DataBarrier for MockTransport {
    fn barrier(&self) {
        if self.binding.get() {
            return self.keep(|t| t.barrier());
        }
        self.world.barrier();
    }
}

impl VectorCollectives for MockTransport {
    fn gatherv(&self, io: Operands<AlignedBuf>, count: usize, blocks: &Blocks, dt: Datatype, root: usize) {
        let Some(mut io) = self.keep_or_run(io, || {
            let blocks = blocks.clone();
            move |t, io| t.gatherv(io, count, &blocks, dt, root)
        }) else {
            return;
        };
        let (np, me, bytes) = (self.np(), self.world.rank, count * dt.size());
        assert_eq!(blocks.counts.len(), np);
        let in_place_root = me == root && matches!(io, Operands::InPlace(_));
        let (input, out) = split_io(&mut io);
        let at = |r: usize| blocks.offset(r, dt, false);
        let block = if in_place_root { &input[at(me)..at(me) + bytes] } else { &input[..bytes] };
        let all = self.collective(block.to_vec(), ((np - 1) * bytes) as f64);
        if me == root {
            check_len(out.len(), blocks.extent);
            for (r, b) in all.0.iter().enumerate() {
                let n = blocks.counts[r] as usize * dt.size();
                out.as_mut_slice()[at(r)..at(r) + n].copy_from_slice(&b[..n]);
            }
            self.tamper(out.as_mut_slice());
        }
    }

    fn scatterv(&self, io: Operands<AlignedBuf>, blocks: &Blocks, count: usize, dt: Datatype, root: usize) {
        let Some(mut io) = self.keep_or_run(io, || {
            let blocks = blocks.clone();
            move |t, io| t.scatterv(io, &blocks, count, dt, root)
        }) else {
            return;
        };
        let (np, me, bytes) = (self.np(), self.world.rank, count * dt.size());
        assert_eq!(blocks.counts.len(), np);
        let in_place = matches!(io, Operands::InPlace(_));
        let (input, out) = split_io(&mut io);
        let mine = if me == root {
            check_len(input.len(), blocks.extent);
            input[..blocks.extent].to_vec()
        } else {
            Vec::new()
        };
        let all = self.collective(mine, ((np - 1) * bytes) as f64);
        if !(in_place && me == root) {
            check_len(out.len(), bytes);
            let at = blocks.offset(me, dt, false);
            out.as_mut_slice()[..bytes].copy_from_slice(&all.0[root][at..at + bytes]);
            self.tamper(out.as_mut_slice());
        }
    }

    fn allgatherv(&self, io: Operands<AlignedBuf>, count: usize, blocks: &Blocks, dt: Datatype) {
        let Some(mut io) = self.keep_or_run(io, || {
            let blocks = blocks.clone();
            move |t, io| t.allgatherv(io, count, &blocks, dt)
        }) else {
            return;
        };
        let (np, me, bytes) = (self.np(), self.world.rank, count * dt.size());
        assert_eq!(blocks.counts.len(), np);
        let in_place = matches!(io, Operands::InPlace(_));
        let (input, out) = split_io(&mut io);
        check_len(out.len(), blocks.extent);
        let at = |r: usize| blocks.offset(r, dt, false);
        let block = if in_place { input[at(me)..at(me) + bytes].to_vec() } else { input[..bytes].to_vec() };
        let all = self.collective(block, ((np - 1) * bytes) as f64);
        for (r, b) in all.0.iter().enumerate() {
            let n = blocks.counts[r] as usize * dt.size();
            out.as_mut_slice()[at(r)..at(r) + n].copy_from_slice(&b[..n]);
        }
        self.tamper(out.as_mut_slice());
    }

    fn alltoallv(&self, io: Operands<AlignedBuf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        let Some(io) = self.keep_or_run(io, || {
            let (send, recv) = (send.clone(), recv.clone());
            move |t, io| t.alltoallv(io, &send, &recv, dt)
        }) else {
            return;
        };
        self.alltoall_blocks(io, send, recv, dt, false);
    }

    fn alltoallw(&self, io: Operands<AlignedBuf>, send: &Blocks, recv: &Blocks, dt: Datatype) {
        let Some(io) = self.keep_or_run(io, || {
            let (send, recv) = (send.clone(), recv.clone());
            move |t, io| t.alltoallw(io, &send, &recv, dt)
        }) else {
            return;
        };
        self.alltoall_blocks(io, send, recv, dt, true);
    }

    fn reduce_scatter_block_sum(&self, io: Operands<AlignedBuf>, count: usize, dt: Datatype) {
        let Some(mut io) = self.keep_or_run(io, || move |t, io| t.reduce_scatter_block_sum(io, count, dt)) else {
            return;
        };
        let (np, me, bytes) = (self.np(), self.world.rank, count * dt.size());
        let (input, out) = split_io(&mut io);
        check_len(input.len(), bytes * np);
        let all = self.collective(input, (np as f64 - 1.0) / np as f64 * (bytes * np) as f64);
        let mine = reduce_elements(&all.0, count, dt, me * count, Reduction::Sum);
        check_len(out.len(), bytes);
        out.as_mut_slice()[..bytes].copy_from_slice(&mine);
        self.tamper(out.as_mut_slice());
    }
}

/// Bound operations keep the buffer's address, as MPI's do: a start sends
/// what the buffer holds then, or posts the receive into it.
impl PersistentPointToPoint for MockTransport {
    unsafe fn bind_send(&self, buf: &AlignedBuf, env: Envelope, reqs: &mut MockRequests, slot: usize) {
        check_len(buf.len(), env.bytes());
        reqs.bound[slot] = Some(BoundOp::Send { ptr: buf.as_slice().as_ptr(), len: env.bytes(), env });
    }

    unsafe fn bind_recv(&self, buf: &mut AlignedBuf, env: Envelope, reqs: &mut MockRequests, slot: usize) {
        check_len(buf.len(), env.bytes());
        reqs.bound[slot] = Some(BoundOp::Recv { ptr: buf.as_mut_ptr(), len: env.bytes(), env });
    }

    fn startall(&self, reqs: &mut MockRequests, offset: usize, n: usize) {
        for j in offset..offset + n {
            match reqs.bound[j].expect("started a point-to-point request that is not bound") {
                BoundOp::Send { ptr, len, env } => {
                    // SAFETY: bound to a live buffer of `len` bytes that its
                    // owner keeps until the request is freed.
                    self.post(unsafe { std::slice::from_raw_parts(ptr, len) }, env);
                    reqs.reqs[j] = Req::Null;
                }
                BoundOp::Recv { ptr, len, env } => {
                    self.world.advance(self.model().overhead_s);
                    reqs.reqs[j] = Req::Recv { peer: env.peer, tag: env.tag, ptr, len };
                }
            }
        }
    }

    fn free_requests(&self, reqs: &mut MockRequests, offset: usize, n: usize) {
        reqs.bound[offset..offset + n].fill(None);
    }
}

/// Binding runs the start with the collective kept instead of run
/// ([`BoundColl`]); each start re-issues it as the non-blocking call would
/// start it. A start or wait on an empty slot (before a bind, after a
/// free) is a kernel's mistake.
impl PersistentCollectives for MockTransport {
    fn persistent_refusal(&self) -> Option<String> {
        None
    }

    unsafe fn bind(&self, slot: Bound, start: impl FnOnce()) {
        self.binding.set(true);
        start();
        self.binding.set(false);
        let op = self.kept.take().expect("the bound start issued no collective the mock can keep");
        self.bound[slot as usize].replace(Some(op));
    }

    fn start_bound(&self, slot: Bound) {
        let bound = self.bound[slot as usize].borrow();
        let op = bound.as_ref().unwrap_or_else(|| panic!("started the unbound persistent request {slot:?}"));
        self.started(|| op(self));
    }

    fn wait_bound(&self, slot: Bound) {
        assert!(self.bound[slot as usize].borrow().is_some(), "waited on the unbound persistent request {slot:?}");
        self.nb_wait();
    }

    fn free_bound(&self, slot: Bound) {
        self.bound[slot as usize].take();
    }
}

impl NonBlockingCollectives for MockTransport {
    /// Runs the blocking call at once and completes it in the background
    /// at the end it would have had ([`MockTransport::started`]); while a
    /// start is being bound, the call only keeps its collective.
    unsafe fn start(&self, call: impl FnOnce(&Self)) {
        if self.binding.get() {
            call(self)
        } else {
            self.started(|| call(self))
        }
    }

    /// Costs one call's overhead; done once the clock has reached the
    /// operation's completion.
    fn nb_test(&self) -> bool {
        self.world.advance(self.model().overhead_s);
        match self.pending.get() {
            Some(end) if self.world.clock() < end => false,
            _ => {
                self.pending.set(None);
                true
            }
        }
    }

    fn nb_wait(&self) {
        if let Some(end) = self.pending.take() {
            self.world.at_least(end);
        }
    }

    /// The virtual clock moves on by exactly `secs`.
    fn compute_for(&self, secs: f64) {
        self.world.advance(secs);
    }
}

impl MockTransport {
    /// A non-blocking collective: the blocking one moves the data at once
    /// and tells when it would end; the rank's clock goes back to the start
    /// plus one call's overhead, and the operation completes in the
    /// background at that end (perfect overlap).
    fn started(&self, op: impl FnOnce()) {
        let start = self.world.clock();
        op();
        self.pending.set(Some(self.world.clock()));
        self.world.clock.set(start + self.model().overhead_s);
    }

    /// Flips the first byte of a vector collective's result on the rank a
    /// [`Fault::CorruptTo`] names.
    fn tamper(&self, out: &mut [u8]) {
        if let (Some(Fault::CorruptTo { to }), Some(b)) = (self.world.shared.fault, out.first_mut()) {
            if to == self.world.rank {
                *b ^= 0xff;
            }
        }
    }

    /// MPI_Alltoallv (displacements in elements) or MPI_Alltoallw (in
    /// bytes): block r of each rank's send layout lands in rank r's
    /// receive layout at the sender's place. In place, the receive buffer
    /// and layout are the input too.
    fn alltoall_blocks(
        &self,
        mut io: Operands<AlignedBuf>,
        send: &Blocks,
        recv: &Blocks,
        dt: Datatype,
        bytes_displs: bool,
    ) {
        let (np, me) = (self.np(), self.world.rank);
        assert!(send.counts.len() == np && recv.counts.len() == np);
        let in_place = matches!(io, Operands::InPlace(_));
        let send = if in_place { recv } else { send };
        let (input, out) = split_io(&mut io);
        check_len(input.len(), send.extent);
        check_len(out.len(), recv.extent);
        let moved: usize = send.counts.iter().map(|&c| c as usize * dt.size()).sum();
        let all = self.collective(input, moved as f64 * (np as f64 - 1.0) / np as f64);
        // Every rank's send layout is the same shape here (OSU's), so the
        // sender's block for me is at my place of its layout.
        for (r, b) in all.0.iter().enumerate() {
            let n = recv.counts[r] as usize * dt.size();
            let from = send.offset(me, dt, bytes_displs);
            let to = recv.offset(r, dt, bytes_displs);
            out.as_mut_slice()[to..to + n].copy_from_slice(&b[from..from + n]);
        }
        self.tamper(out.as_mut_slice());
    }
}

/// The neighbourhood collectives: every rank hands in its blocks, each
/// addressed to a destination, and takes from each source the block that
/// source addressed to it (an edge is listed once, so there is one).
impl NeighborCollectives for MockTransport {
    fn neighbor_graph(&self, adjacency: Adjacency) -> NeighborGraph {
        self.world.barrier();
        NeighborGraph::detached(adjacency)
    }

    fn neighbor_allgather(
        &self,
        g: &NeighborGraph,
        send: &AlignedBuf,
        recv: &mut AlignedBuf,
        count: usize,
        dt: Datatype,
    ) {
        let bytes = count * dt.size();
        let rl = Blocks::end_to_end(g.adjacency().sources.len(), count, dt, false);
        let spans = vec![(0, bytes); g.adjacency().destinations.len()];
        self.neighbor_move(g, send, recv, &spans, |k| rl.offset(k, dt, false));
    }

    fn neighbor_allgatherv(
        &self,
        g: &NeighborGraph,
        send: &AlignedBuf,
        recv: &mut AlignedBuf,
        count: usize,
        rl: &Blocks,
        dt: Datatype,
    ) {
        assert_eq!(rl.counts.len(), g.adjacency().sources.len());
        check_len(recv.len(), rl.extent);
        let spans = vec![(0, count * dt.size()); g.adjacency().destinations.len()];
        self.neighbor_move(g, send, recv, &spans, |k| rl.offset(k, dt, false));
    }

    fn neighbor_alltoall(
        &self,
        g: &NeighborGraph,
        send: &AlignedBuf,
        recv: &mut AlignedBuf,
        count: usize,
        dt: Datatype,
    ) {
        let bytes = count * dt.size();
        let spans: Vec<_> = (0..g.adjacency().destinations.len()).map(|k| (k * bytes, bytes)).collect();
        self.neighbor_move(g, send, recv, &spans, |k| k * bytes);
    }

    fn neighbor_alltoallv(
        &self,
        g: &NeighborGraph,
        send: &AlignedBuf,
        recv: &mut AlignedBuf,
        sl: &Blocks,
        rl: &Blocks,
        dt: Datatype,
    ) {
        let adj = g.adjacency();
        assert!(sl.counts.len() == adj.destinations.len() && rl.counts.len() == adj.sources.len());
        check_len(recv.len(), rl.extent);
        let spans: Vec<_> =
            (0..sl.counts.len()).map(|k| (sl.offset(k, dt, false), sl.counts[k] as usize * dt.size())).collect();
        self.neighbor_move(g, send, recv, &spans, |k| rl.offset(k, dt, false));
    }

    fn neighbor_alltoallw(
        &self,
        g: &NeighborGraph,
        send: &AlignedBuf,
        recv: &mut AlignedBuf,
        sl: &ByteBlocks,
        rl: &ByteBlocks,
        dt: Datatype,
    ) {
        let adj = g.adjacency();
        assert!(sl.counts.len() == adj.destinations.len() && rl.counts.len() == adj.sources.len());
        check_len(recv.len(), rl.extent);
        let spans: Vec<_> = (0..sl.counts.len()).map(|k| (sl.offset(k), sl.counts[k] as usize * dt.size())).collect();
        self.neighbor_move(g, send, recv, &spans, |k| rl.offset(k));
    }
}

impl MockTransport {
    /// Sends `send[at..at + len]` for each `(at, len)` of `spans` to
    /// destination k, and writes what source k sent this rank at
    /// `place(k)` of `recv`. Costs one collective moving the bytes sent.
    fn neighbor_move(
        &self,
        g: &NeighborGraph,
        send: &AlignedBuf,
        recv: &mut AlignedBuf,
        spans: &[(usize, usize)],
        place: impl Fn(usize) -> usize,
    ) {
        let (adj, me) = (g.adjacency(), self.world.rank);
        // Mine: for each destination, its rank (8 bytes), length (8) and block.
        let mut mine = Vec::new();
        for (&d, &(at, len)) in adj.destinations.iter().zip(spans) {
            check_len(send.len(), at + len);
            mine.extend_from_slice(&(d as u64).to_le_bytes());
            mine.extend_from_slice(&(len as u64).to_le_bytes());
            mine.extend_from_slice(&send.as_slice()[at..at + len]);
        }
        let moved: usize = spans.iter().map(|s| s.1).sum();
        let all = self.collective(mine, moved as f64);
        for (k, &src) in adj.sources.iter().enumerate() {
            let block = addressed(&all.0[src], me).unwrap_or_else(|| panic!("rank {src} sent rank {me} nothing"));
            let to = place(k);
            check_len(recv.len(), to + block.len());
            recv.as_mut_slice()[to..to + block.len()].copy_from_slice(block);
        }
        self.tamper(recv.as_mut_slice());
    }
}

/// The block addressed to rank `to` in one rank's [`MockTransport::neighbor_move`] contribution.
fn addressed(packed: &[u8], to: usize) -> Option<&[u8]> {
    let word = |at: usize| u64::from_le_bytes(packed[at..at + 8].try_into().expect("8 bytes")) as usize;
    let mut at = 0;
    while at < packed.len() {
        let (d, len) = (word(at), word(at + 8));
        if d == to {
            return Some(&packed[at + 16..at + 16 + len]);
        }
        at += 16 + len;
    }
    None
}

#[cfg(test)]
mod tests;
