//! Benchmarks. Each benchmark file holds its spec (name, title, options,
//! process rule, defaults) and its kernel: what one timed step does on each
//! rank over any transport, how the reported metric follows from the
//! timings, and what a correct message looks like.
//!
//! The folders show the layers; every module is still `bench::<name>`:
//! - `engine/`: what runs any benchmark: [`plan`] (the run as one value),
//!   [`measure`] (one loop over the plan), [`timed_loop`], [`memory`],
//!   [`dry_run`], [`validation`] and [`runner`] (the process around it);
//! - the families, each a file per benchmark beside what they share:
//!   `pt2pt/` (with [`fan`]), `collective/` ([`collective`], [`vector`]),
//!   `nonblocking/` ([`nonblocking`]), `neighborhood/` ([`neighborhood`]),
//!   `rma/` ([`rma`]) and `startup/`;
//! - [`spec`] (the descriptor every file fills in) and [`registry`] (every
//!   benchmark, in the suite's order).

pub mod collective;
#[path = "engine/dry_run.rs"]
pub mod dry_run;
#[path = "engine/efficiency.rs"]
pub mod efficiency;
#[path = "pt2pt/fan.rs"]
pub mod fan;
#[path = "engine/measure.rs"]
pub mod measure;
#[path = "engine/memory.rs"]
pub mod memory;
pub mod neighborhood;
pub mod nonblocking;
pub mod persistent;
#[path = "engine/plan.rs"]
pub mod plan;
#[path = "pt2pt/posting.rs"]
pub mod posting;
pub mod registry;
pub mod rma;
#[path = "engine/runner.rs"]
pub mod runner;
pub mod spec;
#[path = "engine/timed_loop.rs"]
pub mod timed_loop;
#[path = "engine/validation.rs"]
pub mod validation;
#[path = "collective/vector.rs"]
pub mod vector;

/// Declares each benchmark's module from its family's folder and lists it,
/// in the suite's order, in [`BENCHMARKS`] (what [`registry`] serves). A
/// new benchmark is its file, its binary and one line here.
macro_rules! benchmarks {
    ($($path:literal => $module:ident :: $bench:ident),* $(,)?) => {
        $(#[path = $path] pub mod $module;)*
        /// Every benchmark, in the suite's order.
        pub const BENCHMARKS: &[registry::Entry] = &[$(<$module::$bench as registry::Registered>::ENTRY),*];
    };
}

benchmarks! {
    "pt2pt/latency.rs" => latency::Latency,
    "pt2pt/bw.rs" => bw::Bw,
    "pt2pt/bibw.rs" => bibw::Bibw,
    "pt2pt/mbw_mr.rs" => mbw_mr::MbwMr,
    "pt2pt/bw_fan_in.rs" => bw_fan_in::BwFanIn,
    "pt2pt/bw_fan_out.rs" => bw_fan_out::BwFanOut,
    "pt2pt/multi_lat.rs" => multi_lat::MultiLat,
    "pt2pt/latency_mt.rs" => latency_mt::LatencyMt,
    "pt2pt/latency_mp.rs" => latency_mp::LatencyMp,
    "pt2pt/latency_persistent.rs" => latency_persistent::LatencyPersistent,
    "pt2pt/bw_persistent.rs" => bw_persistent::BwPersistent,
    "pt2pt/bibw_persistent.rs" => bibw_persistent::BibwPersistent,
    "collective/barrier.rs" => barrier::Barrier,
    "collective/allreduce.rs" => allreduce::Allreduce,
    "collective/allgather.rs" => allgather::Allgather,
    "collective/allgatherv.rs" => allgatherv::Allgatherv,
    "collective/alltoall.rs" => alltoall::Alltoall,
    "collective/alltoallv.rs" => alltoallv::Alltoallv,
    "collective/alltoallw.rs" => alltoallw::Alltoallw,
    "collective/reduce_scatter.rs" => reduce_scatter::ReduceScatter,
    "collective/reduce_scatter_block.rs" => reduce_scatter_block::ReduceScatterBlock,
    "collective/bcast.rs" => bcast::Bcast,
    "collective/reduce.rs" => reduce::Reduce,
    "collective/gather.rs" => gather::Gather,
    "collective/gatherv.rs" => gatherv::Gatherv,
    "collective/scatter.rs" => scatter::Scatter,
    "collective/scatterv.rs" => scatterv::Scatterv,
    "startup/init.rs" => init::Init,
    "startup/hello.rs" => hello::Hello,
    "nonblocking/iallreduce.rs" => iallreduce::Iallreduce,
    "nonblocking/ibarrier.rs" => ibarrier::Ibarrier,
    "nonblocking/ibcast.rs" => ibcast::Ibcast,
    "nonblocking/iallgather.rs" => iallgather::Iallgather,
    "nonblocking/ialltoall.rs" => ialltoall::Ialltoall,
    "nonblocking/ireduce.rs" => ireduce::Ireduce,
    "nonblocking/igather.rs" => igather::Igather,
    "nonblocking/iscatter.rs" => iscatter::Iscatter,
    "nonblocking/ireduce_scatter.rs" => ireduce_scatter::IreduceScatter,
    "nonblocking/ireduce_scatter_block.rs" => ireduce_scatter_block::IreduceScatterBlock,
    "nonblocking/iallgatherv.rs" => iallgatherv::Iallgatherv,
    "nonblocking/igatherv.rs" => igatherv::Igatherv,
    "nonblocking/iscatterv.rs" => iscatterv::Iscatterv,
    "nonblocking/ialltoallv.rs" => ialltoallv::Ialltoallv,
    "nonblocking/ialltoallw.rs" => ialltoallw::Ialltoallw,
    "rma/put_latency.rs" => put_latency::PutLatency,
    "rma/get_latency.rs" => get_latency::GetLatency,
    "rma/put_bw.rs" => put_bw::PutBw,
    "rma/get_bw.rs" => get_bw::GetBw,
    "rma/get_mbw.rs" => get_mbw::GetMbw,
    "rma/put_bibw.rs" => put_bibw::PutBibw,
    "rma/acc_latency.rs" => acc_latency::AccLatency,
    "rma/fop_latency.rs" => fop_latency::FopLatency,
    "rma/cas_latency.rs" => cas_latency::CasLatency,
    "rma/get_acc_latency.rs" => get_acc_latency::GetAccLatency,
    "neighborhood/neighbor_allgather.rs" => neighbor_allgather::NeighborAllgather,
    "neighborhood/neighbor_allgatherv.rs" => neighbor_allgatherv::NeighborAllgatherv,
    "neighborhood/neighbor_alltoall.rs" => neighbor_alltoall::NeighborAlltoall,
    "neighborhood/neighbor_alltoallv.rs" => neighbor_alltoallv::NeighborAlltoallv,
    "neighborhood/neighbor_alltoallw.rs" => neighbor_alltoallw::NeighborAlltoallw,
    "neighborhood/ineighbor_allgather.rs" => ineighbor_allgather::IneighborAllgather,
    "neighborhood/ineighbor_allgatherv.rs" => ineighbor_allgatherv::IneighborAllgatherv,
    "neighborhood/ineighbor_alltoall.rs" => ineighbor_alltoall::IneighborAlltoall,
    "neighborhood/ineighbor_alltoallv.rs" => ineighbor_alltoallv::IneighborAlltoallv,
    "neighborhood/ineighbor_alltoallw.rs" => ineighbor_alltoallw::IneighborAlltoallw,
    "persistent/allgather_persistent.rs" => allgather_persistent::AllgatherPersistent,
    "persistent/allgatherv_persistent.rs" => allgatherv_persistent::AllgathervPersistent,
    "persistent/allreduce_persistent.rs" => allreduce_persistent::AllreducePersistent,
    "persistent/alltoall_persistent.rs" => alltoall_persistent::AlltoallPersistent,
    "persistent/alltoallv_persistent.rs" => alltoallv_persistent::AlltoallvPersistent,
    "persistent/alltoallw_persistent.rs" => alltoallw_persistent::AlltoallwPersistent,
    "persistent/barrier_persistent.rs" => barrier_persistent::BarrierPersistent,
    "persistent/bcast_persistent.rs" => bcast_persistent::BcastPersistent,
    "persistent/gather_persistent.rs" => gather_persistent::GatherPersistent,
    "persistent/gatherv_persistent.rs" => gatherv_persistent::GathervPersistent,
    "persistent/reduce_persistent.rs" => reduce_persistent::ReducePersistent,
    "persistent/reduce_scatter_persistent.rs" => reduce_scatter_persistent::ReduceScatterPersistent,
    "persistent/scatter_persistent.rs" => scatter_persistent::ScatterPersistent,
    "persistent/scatterv_persistent.rs" => scatterv_persistent::ScattervPersistent,
}

use crate::backend::{Capability, Control, Transport};
use crate::buffer::{AllocError, Mismatch};
use crate::datatype::Datatype;
use crate::options::Options;
use crate::stats::{RankSpread, Samples};
use spec::{BenchSpec, LARGE_MESSAGE_SIZE};

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
    pub fn new(t: &'a T, plan: &plan::Plan<'a>) -> Setup<'a, T> {
        Setup { t, opts: plan.opts, pairs: plan.pairs, max_window: plan.max_window(), max_size: plan.max_size }
    }

    pub fn rank(&self) -> usize {
        self.t.world().rank()
    }

    pub fn np(&self) -> usize {
        self.t.world().size()
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
}

/// The part of a benchmark that differs from the others, over any
/// transport `T`.
pub trait Kernel<T: Transport> {
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
/// (`runner::Launch`), and refuses the other backends with the
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
    /// default is the point-to-point shape ([`memory::pt2pt_buffers`]).
    fn message_bytes(plan: &plan::Plan, _np: usize) -> u128 {
        memory::pt2pt_buffers(plan)
    }
}

/// A benchmark's kernel over transport `T` (implemented for every `T` that
/// has what [`Bench::Needs`] names).
pub trait BenchOn<T: Transport>: Bench {
    type Kernel: Kernel<T>;
    fn kernel(s: &Setup<T>) -> Result<Self::Kernel, AllocError>;
}

/// A benchmark whose kernel needs only point-to-point messages, so that it
/// runs over every transport, those without collectives too (UCX).
pub trait PointToPoint: Bench {
    type P2pKernel<T: Transport>: Kernel<T>;
    fn p2p_kernel<T: Transport>(s: &Setup<T>) -> Result<Self::P2pKernel<T>, AllocError>;
}

/// The [`Bench`] of a [`PointToPoint`] benchmark `$bench` whose file has
/// `SPEC` and whose kernel type is `$kernel<T>`, over every transport; it
/// needs [`needs::PointToPoint`] unless another need is named.
macro_rules! point_to_point_bench {
    ($bench:ident, $kernel:ident) => {
        $crate::bench::point_to_point_bench!($bench, $kernel, PointToPoint);
    };
    ($bench:ident, $kernel:ident, $need:ident) => {
        impl $crate::bench::Bench for $bench {
            const SPEC: &'static $crate::bench::spec::BenchSpec = &SPEC;
            type Needs = $crate::bench::needs::$need;
        }

        impl<T: $crate::backend::Transport> $crate::bench::BenchOn<T> for $bench {
            type Kernel = $kernel<T>;

            fn kernel(s: &$crate::bench::Setup<T>) -> Result<$kernel<T>, $crate::buffer::AllocError> {
                <Self as $crate::bench::PointToPoint>::p2p_kernel(s)
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
    use super::allreduce::SPEC as ALLREDUCE;
    use super::barrier::SPEC as BARRIER;
    use super::bw::SPEC as BW;
    use super::latency::SPEC as LATENCY;
    use super::mbw_mr::SPEC as MBW_MR;
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
        use super::acc_latency::SPEC as ACC;
        use super::put_latency::SPEC as PUT;
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
        use super::{cas_latency::SPEC as CAS, fop_latency::SPEC as FOP, get_acc_latency::SPEC as GET_ACC};
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
