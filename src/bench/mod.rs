//! Benchmarks. Each benchmark file holds its spec (name, title, options,
//! process rule, defaults) and its kernel: what one timed step does on each
//! rank over any transport, how the reported metric follows from the
//! timings, and what a correct message looks like.
//!
//! Each module is the folder it is filed in:
//! - [`engine`]: what runs any benchmark: `engine::plan` (the run as one
//!   value), `engine::measure` (one loop over the plan), `timed_loop`,
//!   `memory`, `dry_run`, `validation` and `efficiency` (the process
//!   around it, argv to exit status, is [`crate::runner`]);
//! - the families, each a file per benchmark beside what they share:
//!   [`pt2pt`] (with `fan` and `posting`), [`collective`] (with `vector`),
//!   [`nonblocking`], [`neighborhood`], [`persistent`], [`rma`] and
//!   [`startup`];
//! - [`crate::spec`] (the descriptor every file fills in) and [`registry`] (every
//!   benchmark, in the suite's order, from [`BENCHMARKS`]).

pub mod collective;
pub mod engine;
pub mod neighborhood;
pub mod nonblocking;
pub mod persistent;
pub mod pt2pt;
pub mod registry;
pub mod rma;
pub mod startup;

/// The one list of every benchmark, in the suite's order, each with the
/// way its binary runs it (`bench`: a [`Bench`], `runner::main`; `rma`: a
/// one-sided benchmark, `runner::main_rma`; `startup`: osu_init and
/// osu_hello, `runner::main_startup`), its path under this module. It calls
/// `$then!` with the list: [`BENCHMARKS`] is made from it here, and the
/// runner's table of what runs each benchmark on a started job
/// (src/runner/sequence.rs, `commbench suite --one-launch`), so the two
/// cannot part. A new benchmark is its file (a `pub mod` line in its
/// family's mod.rs), its binary and one line here.
macro_rules! every_benchmark {
    ($then:ident) => {
        $then! {
            bench pt2pt::latency::Latency,
            bench pt2pt::bw::Bw,
            bench pt2pt::bibw::Bibw,
            bench pt2pt::mbw_mr::MbwMr,
            bench pt2pt::bw_fan_in::BwFanIn,
            bench pt2pt::bw_fan_out::BwFanOut,
            bench pt2pt::multi_lat::MultiLat,
            bench pt2pt::latency_mt::LatencyMt,
            bench pt2pt::latency_mp::LatencyMp,
            bench pt2pt::latency_persistent::LatencyPersistent,
            bench pt2pt::bw_persistent::BwPersistent,
            bench pt2pt::bibw_persistent::BibwPersistent,
            bench collective::barrier::Barrier,
            bench collective::allreduce::Allreduce,
            bench collective::allgather::Allgather,
            bench collective::allgatherv::Allgatherv,
            bench collective::alltoall::Alltoall,
            bench collective::alltoallv::Alltoallv,
            bench collective::alltoallw::Alltoallw,
            bench collective::reduce_scatter::ReduceScatter,
            bench collective::reduce_scatter_block::ReduceScatterBlock,
            bench collective::bcast::Bcast,
            bench collective::reduce::Reduce,
            bench collective::gather::Gather,
            bench collective::gatherv::Gatherv,
            bench collective::scatter::Scatter,
            bench collective::scatterv::Scatterv,
            startup startup::init::Init,
            startup startup::hello::Hello,
            bench nonblocking::iallreduce::Iallreduce,
            bench nonblocking::ibarrier::Ibarrier,
            bench nonblocking::ibcast::Ibcast,
            bench nonblocking::iallgather::Iallgather,
            bench nonblocking::ialltoall::Ialltoall,
            bench nonblocking::ireduce::Ireduce,
            bench nonblocking::igather::Igather,
            bench nonblocking::iscatter::Iscatter,
            bench nonblocking::ireduce_scatter::IreduceScatter,
            bench nonblocking::ireduce_scatter_block::IreduceScatterBlock,
            bench nonblocking::iallgatherv::Iallgatherv,
            bench nonblocking::igatherv::Igatherv,
            bench nonblocking::iscatterv::Iscatterv,
            bench nonblocking::ialltoallv::Ialltoallv,
            bench nonblocking::ialltoallw::Ialltoallw,
            rma rma::put_latency::PutLatency,
            rma rma::get_latency::GetLatency,
            rma rma::put_bw::PutBw,
            rma rma::get_bw::GetBw,
            rma rma::get_mbw::GetMbw,
            rma rma::put_bibw::PutBibw,
            rma rma::acc_latency::AccLatency,
            rma rma::fop_latency::FopLatency,
            rma rma::cas_latency::CasLatency,
            rma rma::get_acc_latency::GetAccLatency,
            bench neighborhood::neighbor_allgather::NeighborAllgather,
            bench neighborhood::neighbor_allgatherv::NeighborAllgatherv,
            bench neighborhood::neighbor_alltoall::NeighborAlltoall,
            bench neighborhood::neighbor_alltoallv::NeighborAlltoallv,
            bench neighborhood::neighbor_alltoallw::NeighborAlltoallw,
            bench neighborhood::ineighbor_allgather::IneighborAllgather,
            bench neighborhood::ineighbor_allgatherv::IneighborAllgatherv,
            bench neighborhood::ineighbor_alltoall::IneighborAlltoall,
            bench neighborhood::ineighbor_alltoallv::IneighborAlltoallv,
            bench neighborhood::ineighbor_alltoallw::IneighborAlltoallw,
            bench persistent::allgather_persistent::AllgatherPersistent,
            bench persistent::allgatherv_persistent::AllgathervPersistent,
            bench persistent::allreduce_persistent::AllreducePersistent,
            bench persistent::alltoall_persistent::AlltoallPersistent,
            bench persistent::alltoallv_persistent::AlltoallvPersistent,
            bench persistent::alltoallw_persistent::AlltoallwPersistent,
            bench persistent::barrier_persistent::BarrierPersistent,
            bench persistent::bcast_persistent::BcastPersistent,
            bench persistent::gather_persistent::GatherPersistent,
            bench persistent::gatherv_persistent::GathervPersistent,
            bench persistent::reduce_persistent::ReducePersistent,
            bench persistent::reduce_scatter_persistent::ReduceScatterPersistent,
            bench persistent::scatter_persistent::ScatterPersistent,
            bench persistent::scatterv_persistent::ScattervPersistent,
        }
    };
}
pub(crate) use every_benchmark;

/// Makes [`BENCHMARKS`] from [`every_benchmark`]'s list.
macro_rules! entries {
    ($($kind:ident $($seg:ident)::+),* $(,)?) => {
        /// Every benchmark, in the suite's order (what [`registry`] serves).
        pub const BENCHMARKS: &[registry::Entry] = &[$(<$($seg)::+ as registry::Registered>::ENTRY),*];
    };
}
every_benchmark!(entries);

use crate::backend::{Capability, Control, Transport};
use crate::buffer::{AllocError, Mismatch};
use crate::datatype::Datatype;
use crate::options::{Blocking, Options};
use crate::spec::{self, BenchSpec, LARGE_MESSAGE_SIZE};
use crate::stats::{RankSpread, Samples};

/// One measurement point: a datatype, a message size and its counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeCase {
    pub datatype: Datatype,
    /// Message size in bytes.
    pub size: usize,
    /// Elements per message (size / element size).
    pub count: usize,
    pub iterations: usize,
    pub warmup: usize,
    /// Messages in flight per iteration (1 where there is no window).
    pub window: usize,
    /// How the batched loop issues the timed calls (nccl-tests' `-m` and
    /// `-z`); `iterations` is a multiple of its `grouped`.
    pub calls: Calls,
}

/// How a batch's timed calls are issued ([`SizeCase::calls`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Calls {
    /// Calls issued as one group (nccl-tests' `-m`; 1: each alone).
    pub grouped: usize,
    /// What follows each call or group (nccl-tests' `-z`).
    pub blocking: Blocking,
    /// Read the clock once more after the last issue, before the wait
    /// (nccl-tests' `-C 1`): the host's issue time. Off otherwise, so the
    /// timed span holds nothing but the calls.
    pub host_time: bool,
    /// Each group also between two CUDA events (nccl-tests' `-I 1`), read
    /// after the batch: each group's own device time, besides the host's.
    pub events: bool,
    /// Checked calls after the batch, where the run checks (nccl-tests'
    /// `-c N`): up to this many, ending at the first whose result is
    /// wrong on any rank; 1 for every other front end.
    pub checks: usize,
    /// The timed calls are captured into a graph once and the graph is
    /// launched this many times, the time being per launch, and the
    /// checked call is captured and launched once (nccl-tests' `-G`); 0:
    /// every call is issued directly.
    pub graph_launches: usize,
}

impl Calls {
    /// Each call alone, back to back: nccl-tests' default, and every
    /// front end's but nccl-tests'.
    pub const ALONE: Calls =
        Calls { grouped: 1, blocking: Blocking::None, host_time: false, events: false, checks: 1, graph_launches: 0 };
}

/// What a benchmark needs to set itself up: its transport and the run's
/// plan.
pub struct Setup<'a, T: Transport> {
    pub t: &'a T,
    pub opts: &'a Options,
    /// Ranks that send (and as many that receive).
    pub pairs: usize,
    /// Largest window any size will use.
    pub max_window: usize,
    /// Largest message any size will use (the plan's, which OSU's default
    /// memory limit may have lowered below `-m`'s).
    pub max_size: usize,
}

impl<'a, T: Transport> Setup<'a, T> {
    pub fn new(t: &'a T, plan: &engine::plan::Plan<'a>) -> Setup<'a, T> {
        Setup { t, opts: plan.opts, pairs: plan.pairs, max_window: plan.max_window(), max_size: plan.max_size }
    }

    /// This rank in the communicator the data moves over (the world's,
    /// except NCCL_TESTS_SPLIT's communicators).
    pub fn rank(&self) -> usize {
        self.t.comm_rank()
    }

    pub fn np(&self) -> usize {
        self.t.comm_size()
    }
}

/// The reported value of one size, as OSU computes it (valid on rank 0).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metric {
    /// Latency in microseconds, or MB/s.
    pub value: f64,
    /// Messages per second (osu_mbw_mr).
    pub msg_rate: Option<f64>,
    /// Per-rank spread of the mean (collectives).
    pub spread: Option<RankSpread>,
    /// Algorithm and bus bandwidth in GB/s (collectives, nccl-tests
    /// definitions).
    pub algbw_busbw: Option<(f64, f64)>,
    /// Per-iteration seconds that the tails and the CSV distribution
    /// describe, when they are not rank 0's own samples (collectives: the
    /// average over ranks of each iteration).
    pub iteration_secs: Option<Vec<f64>>,
    /// Non-blocking collectives: OSU's overlap columns.
    pub overlap: Option<crate::report::OverlapTimes>,
    /// The time (us) the bandwidths come from, which nccl-tests' table
    /// reports (collectives): `-a`'s pick over the ranks, or over the
    /// threads where a thread drives several GPUs (`-g`).
    pub time_us: Option<f64>,
}

/// The part of a benchmark that differs from the others, over any
/// transport `T`.
pub trait Kernel<T: Transport> {
    /// The operation its reductions apply from now on, and its root where
    /// the sweep has one of its own (nccl-tests' `-o all`, `-r -1`: one
    /// sweep each); the kernels without either ignore it.
    fn set_operation(&mut self, _reduction: crate::datatype::Reduction, _root: Option<usize>) {}

    /// Sizes buffers and writes OSU's fill bytes before a size (untimed).
    fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError>;

    /// Whether ranks synchronise once before the iterations of a size
    /// (OSU's osu_bcast does not).
    fn sync_before_size(&self) -> bool {
        true
    }

    /// Start of iteration `i`, untimed. `validation` carries the number of
    /// untimed repetitions (`-u`) when validating. The default does what
    /// OSU's point-to-point tests do: write the patterns, synchronise, then
    /// repeat the step untimed.
    fn begin_iteration(&mut self, t: &T, case: &SizeCase, i: usize, validation: Option<usize>) {
        if let Some(reps) = validation {
            self.fill_validation(t, case, i);
            t.world().barrier();
            for _ in 0..reps {
                self.step(t, case);
            }
        }
    }

    /// After the timed step of an iteration, untimed (collectives
    /// synchronise here).
    fn end_iteration(&mut self, _t: &T, _case: &SizeCase) {}

    /// After the last iteration of a size, before its metric, untimed
    /// (the one-sided benchmarks close an epoch held for the whole size).
    fn end_size(&mut self, _t: &T, _case: &SizeCase) {}

    /// Writes the validation pattern of iteration `i` into the buffers.
    fn fill_validation(&mut self, t: &T, case: &SizeCase, i: usize);

    /// One timed operation. Returns this rank's elapsed seconds if this
    /// rank keeps time.
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64>;

    /// Whether [`Kernel::issue`] can stand for a step in a batch timed
    /// as a whole (on transports whose `BATCHED` is set).
    fn batchable(&self) -> bool {
        false
    }

    /// Issues the operation of iteration `i` without waiting for it to
    /// complete (the batch's completion waits for all of them).
    fn issue(&mut self, _t: &T, _case: &SizeCase, _i: usize) {}

    /// Switches the operation to in place (`true`) or out of place, for
    /// nccl-tests' two passes over each size. `None`: the kernel has no
    /// such switch; `Some(checked)`: switched, and whether the result of
    /// that form can be checked.
    fn set_in_place(&mut self, _in_place: bool) -> Option<bool> {
        None
    }

    /// After iteration `i` with validation: the first wrong element this
    /// rank received, if any.
    fn check(&self, t: &T, case: &SizeCase, i: usize) -> Option<Mismatch>;

    /// The value of one iteration that took `secs` (for `-z`).
    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64;

    /// Multiplier that turns one iteration's time into the time the CSV
    /// reports (0.5 for half a round trip).
    fn iteration_time_scale(&self) -> f64 {
        1.0
    }

    /// How many passes of the timed loop each size takes (the
    /// non-blocking collectives: two).
    fn phases(&self) -> usize {
        1
    }

    /// Before pass `phase` (from 1) of a size; `samples` holds the
    /// previous pass's timings.
    fn begin_phase(&mut self, _t: &T, _case: &SizeCase, _phase: usize, _samples: &Samples) {}

    /// Turns this rank's timed samples into the reported metric; may
    /// communicate (averages over senders or ranks).
    fn metric(&mut self, t: &T, case: &SizeCase, samples: &Samples) -> Metric;
}

/// What a benchmark needs of a transport, as a type ([`Bench::Needs`]):
/// the runner launches a benchmark over the transports that have it
/// (`crate::runner::Launch`), and refuses the other backends with the
/// capability's name.
pub trait Need {
    const CAPABILITY: Capability;
}

/// The [`Need`] types, one per [`Capability`] a benchmark can ask for.
pub mod needs {
    use super::{Capability, Need};

    macro_rules! need {
        ($($name:ident),*) => {$(
            #[doc = concat!("Needs [`Capability::", stringify!($name), "`].")]
            pub struct $name;
            impl Need for $name {
                const CAPABILITY: Capability = Capability::$name;
            }
        )*};
    }
    need!(
        PointToPoint,
        Collectives,
        Barrier,
        VectorCollectives,
        NonBlockingCollectives,
        NeighborCollectives,
        PersistentCollectives,
        PersistentPointToPoint,
        Threads
    );
}

/// What a benchmark file provides: its spec, what it needs of a transport,
/// and the memory its kernel takes. The registry and the binaries name
/// benchmarks by the type implementing this; [`BenchOn`] builds the kernel.
pub trait Bench {
    const SPEC: &'static BenchSpec;
    /// The capability the kernel calls on: it is built over every
    /// transport that has it ([`BenchOn`]) and no other.
    type Needs: Need;
    /// The collective operation it times, if it is a collective.
    const COLLECTIVE: Option<spec::CollectiveCall> = None;

    /// The message-buffer memory the kernel allocates on one rank; the
    /// default is the point-to-point shape ([`engine::memory::pt2pt_buffers`]).
    fn message_bytes(plan: &engine::plan::Plan, _np: usize) -> u128 {
        engine::memory::pt2pt_buffers(plan)
    }
}

/// A benchmark's kernel over transport `T` (implemented for every `T` that
/// has what [`Bench::Needs`] names).
pub(crate) trait BenchOn<T: Transport>: Bench {
    type Kernel: Kernel<T>;
    fn kernel(s: &Setup<T>) -> Result<Self::Kernel, AllocError>;
}

/// A benchmark whose kernel needs only point-to-point messages, so that it
/// runs over every transport, those without collectives too (UCX).
pub(crate) trait Pt2ptBench: Bench {
    type P2pKernel<T: Transport>: Kernel<T>;
    fn p2p_kernel<T: Transport>(s: &Setup<T>) -> Result<Self::P2pKernel<T>, AllocError>;
}

/// The [`Bench`] of a [`Pt2ptBench`] benchmark `$bench` whose file has
/// `SPEC` and whose kernel type is `$kernel<T>`, over every transport; it
/// needs [`needs::PointToPoint`] unless another need is named.
macro_rules! point_to_point_bench {
    ($bench:ident, $kernel:ident) => {
        $crate::bench::point_to_point_bench!($bench, $kernel, PointToPoint);
    };
    ($bench:ident, $kernel:ident, $need:ident) => {
        impl $crate::bench::Bench for $bench {
            const SPEC: &'static $crate::spec::BenchSpec = &SPEC;
            type Needs = $crate::bench::needs::$need;
        }

        impl<T: $crate::backend::Transport> $crate::bench::BenchOn<T> for $bench {
            type Kernel = $kernel<T>;

            fn kernel(s: &$crate::bench::Setup<T>) -> Result<$kernel<T>, $crate::buffer::AllocError> {
                <Self as $crate::bench::Pt2ptBench>::p2p_kernel(s)
            }
        }
    };
}
pub(crate) use point_to_point_bench;

/// Message sizes of a run, ascending: 0 (latency family only), then
/// powers of two from the minimum, doubling up to the maximum.
pub fn message_sizes(spec: &BenchSpec, min: usize, max: usize) -> Vec<usize> {
    if !spec.typed() {
        // osu_barrier: one measurement, no message.
        return vec![0];
    }
    let mut sizes = Vec::new();
    let mut s = if spec.from_zero { min } else { min.max(1) };
    while s <= max {
        sizes.push(s);
        s = match if s == 0 { Some(1) } else { s.checked_mul(2) } {
            Some(n) => n,
            None => break,
        };
    }
    sizes
}

/// Iterations and warm-up for a size: `-i`/`-x` when given, otherwise the
/// benchmark's defaults with the switch for sizes above 8192 bytes. Unlike
/// OSU, a switch made for a large size does not stick to later sizes.
pub fn counts(spec: &BenchSpec, opts: &Options, size: usize) -> (usize, usize) {
    let large = spec.large_switch && size > LARGE_MESSAGE_SIZE;
    let d = &spec.defaults;
    let iters = opts.iterations.unwrap_or(if large { d.large_iterations } else { d.small_iterations });
    if large && spec.one_sided.is_some_and(|r| r.warms_up_as_timed(opts.sync)) {
        // osu_acc_latency -s lock: OSU's warm-up above 8192 bytes is the count.
        return (iters, iters);
    }
    let warm = opts.warmup.unwrap_or(if large { d.large_warmup } else { d.small_warmup });
    (iters, warm)
}

#[cfg(test)]
mod tests {
    use super::collective::allreduce::SPEC as ALLREDUCE;
    use super::collective::barrier::SPEC as BARRIER;
    use super::pt2pt::bw::SPEC as BW;
    use super::pt2pt::latency::SPEC as LATENCY;
    use super::pt2pt::mbw_mr::SPEC as MBW_MR;
    use super::*;
    use crate::cli::test_options as opts;

    #[test]
    fn size_sequences() {
        assert_eq!(message_sizes(&LATENCY, 0, 8), vec![0, 1, 2, 4, 8]);
        assert_eq!(message_sizes(&BW, 1, 8), vec![1, 2, 4, 8]);
        assert_eq!(message_sizes(&BW, 3, 20), vec![3, 6, 12]);
        assert_eq!(message_sizes(&LATENCY, 0, 4194304).len(), 24);
        assert_eq!(message_sizes(&BW, 1, 4194304).len(), 23);
        assert!(message_sizes(&BW, 1, usize::MAX).len() >= 63);
        assert_eq!(message_sizes(&ALLREDUCE, 1, 1 << 20).len(), 21);
        assert_eq!(message_sizes(&BARRIER, 1, 1 << 20), vec![0]);
    }

    #[test]
    fn default_counts_switch_above_8192() {
        let o = opts(&LATENCY, &[]);
        assert_eq!(counts(&LATENCY, &o, 8192), (10000, 100));
        assert_eq!(counts(&LATENCY, &o, 16384), (1000, 10));
        let o = opts(&BW, &[]);
        assert_eq!(counts(&BW, &o, 8192), (100, 10));
        assert_eq!(counts(&BW, &o, 8193), (20, 2));
        let o = opts(&MBW_MR, &[]);
        assert_eq!(counts(&MBW_MR, &o, 1 << 22), (100, 10));
    }

    #[test]
    fn acc_lock_warms_up_as_timed_above_8192() {
        use super::rma::acc_latency::SPEC as ACC;
        use super::rma::put_latency::SPEC as PUT;
        let o = opts(&ACC, &["-s", "lock"]);
        assert_eq!(counts(&ACC, &o, 8192), (10000, 100));
        assert_eq!(counts(&ACC, &o, 16384), (1000, 1000));
        // -x does not change it; -i does.
        let o = opts(&ACC, &["-s", "LOCK", "-i", "7", "-x", "1"]);
        assert_eq!((counts(&ACC, &o, 64), counts(&ACC, &o, 16384)), ((7, 1), (7, 7)));
        assert_eq!(counts(&ACC, &opts(&ACC, &[]), 16384), (1000, 10));
        assert_eq!(counts(&ACC, &opts(&ACC, &["-s", "fence"]), 16384), (1000, 10));
        assert_eq!(counts(&PUT, &opts(&PUT, &["-s", "lock"]), 16384), (1000, 10));
    }

    #[test]
    fn atomics_options() {
        use super::{
            rma::cas_latency::SPEC as CAS, rma::fop_latency::SPEC as FOP, rma::get_acc_latency::SPEC as GET_ACC,
        };
        use crate::backend::rma::{SyncMode, WinKind};
        let o = opts(&GET_ACC, &[]);
        assert_eq!((o.win, o.sync), (Some(WinKind::Create), Some(SyncMode::Lock)));
        let o = opts(&FOP, &["-T", "all"]);
        assert_eq!(o.datatypes, Datatype::ALL);
        assert_eq!((o.win, o.sync), (Some(WinKind::Allocate), Some(SyncMode::Flush)));
        assert_eq!(opts(&CAS, &[]).max_size, 1 << 20);
        let refused = |spec: &BenchSpec, args: &[&str]| {
            let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            crate::cli::parse(spec, &v).map(|_| ()).unwrap_err().to_string()
        };
        assert!(opts(&FOP, &["-c"]).validation.is_some(), "acc, fop and cas check their results");
        assert_eq!(refused(&GET_ACC, &["-c"]), "Invalid option [-c]");
        assert_eq!(refused(&GET_ACC, &["-T", "mpi_int"]), "Invalid option [-T]");
    }

    #[test]
    fn given_counts_apply_to_all_sizes() {
        let o = opts(&LATENCY, &["-i", "7", "-x", "0"]);
        assert_eq!(counts(&LATENCY, &o, 1), (7, 0));
        assert_eq!(counts(&LATENCY, &o, 1 << 20), (7, 0));
    }
}
