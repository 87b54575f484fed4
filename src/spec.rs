//! What distinguishes one benchmark binary from another before any
//! communication happens (the type every benchmark file fills in): its name
//! and title, which OSU option letters it takes, how many processes it
//! needs, its size range and iteration defaults; OSU's shared defaults; and
//! why a job's size can rule a run out (bench/engine/plan.rs decides it).

use crate::backend::rma::{SyncMode, WinKind};
use crate::backend::world::ThreadLevel;

/// How many processes a benchmark needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcRule {
    /// latency, bw, bibw.
    ExactlyTwo,
    /// mbw_mr, multi_lat: rank i works with rank i + np/2.
    Pairs,
    /// collectives.
    AtLeastTwo,
    /// osu_init, osu_hello: any number of processes, one included.
    Any,
    /// osu_bw_fan_in, osu_bw_fan_out: ranks on two or more nodes, the same
    /// number on each (checked against the ranks' host names).
    Nodes,
}

/// What OSU's `-t` sets on the two point-to-point programs that spread a
/// rank's work: osu_latency_mt's threads, osu_latency_mp's forked
/// processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workers {
    /// Threads per rank sharing the ping-pongs; MPI must start with
    /// `MPI_THREAD_MULTIPLE`.
    Threads,
    /// Processes each rank forks after MPI starts.
    Processes,
}

/// Iterations and warm-up for small and large messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct IterDefaults {
    pub small_iterations: usize,
    pub small_warmup: usize,
    pub large_iterations: usize,
    pub large_warmup: usize,
}

/// Messages strictly larger than this use the large-message counts.
pub(crate) const LARGE_MESSAGE_SIZE: usize = 8192;
/// OSU's default window (`-W`).
pub(crate) const DEFAULT_WINDOW: usize = 64;
/// OSU's default validation warm-up (`-u`) and its maximum.
pub(crate) const DEFAULT_VALIDATION_WARMUP: usize = 5;
pub(crate) const MAX_VALIDATION_WARMUP: usize = 10;

/// What a benchmark reports per size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// One-way latency in microseconds.
    Latency,
    /// MB/s (10^6 bytes per second).
    Bandwidth,
    /// MB/s and messages/s over all pairs (osu_mbw_mr).
    MultiBandwidth,
    /// Average latency over ranks in microseconds, per message size.
    Collective,
    /// Average latency over ranks, one row without a size (osu_barrier).
    Barrier,
    /// Milliseconds in MPI_Init over ranks: min, max, average (osu_init).
    Startup,
    /// Nothing measured: the job size once MPI is up (osu_hello).
    Hello,
    /// A non-blocking collective with OSU's overlap columns (overall,
    /// compute, pure communication, overlap %), per message size.
    Overlap,
    /// The same, one row without a size (osu_ibarrier).
    OverlapBarrier,
}

/// The collective operation a benchmark times: what the MPI library's own
/// memory, nccl-tests' table and NCCL's limits depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    ReduceScatter,
    ReduceScatterBlock,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    Alltoallw,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    NeighborAllgather,
    NeighborAllgatherv,
    NeighborAlltoall,
    NeighborAlltoallv,
    NeighborAlltoallw,
    /// Each rank sends a block to the next rank and receives one from the
    /// previous, both at once (MPI_Sendrecv around a ring; nccl-tests'
    /// sendrecv, grouped ncclSend and ncclRecv).
    SendRecv,
    /// An allgather by hypercube exchanges (nccl-tests' hypercube: at
    /// step k each rank trades everything it holds with the rank whose
    /// number differs in bit k, as grouped ncclSend and ncclRecv).
    HyperCube,
    /// Each rank sends each peer the bytes a traffic pattern gives the
    /// pair (nccl-tests' alltoallv: [`crate::traffic`]), end to end in
    /// rank order, as grouped ncclSend and ncclRecv.
    AlltoallvTraffic,
}

impl Op {
    /// Whether it combines ranks' elements by an operation (sum, max ...)
    /// rather than moving them.
    pub fn reduces(self) -> bool {
        matches!(self, Op::Reduce | Op::Allreduce | Op::ReduceScatter | Op::ReduceScatterBlock)
    }

    /// Whether each rank's buffer holds one block per rank (the gathers,
    /// scatters and all-to-alls, vector forms included), so that a rank
    /// sends or receives a block to or from every other.
    pub(crate) fn block_per_rank(self) -> bool {
        matches!(
            self,
            Op::Allgather
                | Op::HyperCube
                | Op::Allgatherv
                | Op::Alltoall
                | Op::Alltoallv
                | Op::AlltoallvTraffic
                | Op::Alltoallw
                | Op::Gather
                | Op::Gatherv
                | Op::Scatter
                | Op::Scatterv
        )
    }
}

/// A collective benchmark's operation, and whether it is timed in its
/// non-blocking form (osu_i*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollectiveCall {
    pub op: Op,
    pub nonblocking: bool,
}

/// Why a benchmark cannot run on a job of this size; the text is the one
/// line rank 0 prints (OSU's words where OSU has them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobShapeError {
    #[error("This test requires exactly two processes")]
    ExactlyTwo,
    #[error("This test requires at least two processes")]
    AtLeastTwo,
    /// osu_latency_mt -c with unequal thread counts.
    #[error("Number of sender and receiver threads must be same when validation is enabled. Use option -t to set")]
    ValidationThreads,
    /// The library gave less than `MPI_THREAD_MULTIPLE`.
    #[error("MPI_Init_thread must return MPI_THREAD_MULTIPLE!")]
    ThreadMultiple,
    #[error("This test requires an even number of processes (rank i is paired with rank i + np/2), got {np}")]
    EvenCount { np: usize },
    #[error("Invalid Number of Pairs [-p {pairs}] (at most np/2 = {} with {np} processes)", np / 2)]
    Pairs { pairs: usize, np: usize },
    #[error("Invalid root rank [-k fixed:{root}] (the root must be a rank from 0 to {} with {np} processes)", np - 1)]
    Root { root: usize, np: usize },
    #[error("Please run this benchmark on more than 1 node (all {np} processes are on one node)")]
    OneNode { np: usize },
    #[error("Please run this benchmark with same ppn for all nodes (processes per node: {counts})")]
    UnevenNodes { counts: String },
    #[error(
        "Memory limit too low [-M {limit}] (the largest message needs {need}-byte buffers{with}; raise -M or lower -m)"
    )]
    MemoryLimit { limit: usize, need: usize, with: String },
    #[error(
        "Invalid option [--min-busbw] ({name} on one rank moves nothing between GPUs: its bus bandwidth is 0 by \
         definition, nccl-tests' factor {factor}; run two or more ranks, or leave --min-busbw out)"
    )]
    MinBusbwOneRank { name: &'static str, factor: &'static str },
    /// `-N cart:D:R`: a radius that would reach a rank twice along the
    /// grid's smallest dimension.
    #[error(
        "Neighborhood radius too large [-N cart:{dims}:{radius}] ({np} processes make a {shape} grid, whose \
         smallest dimension allows a radius of at most {max}; add processes or lower the dimensions or radius)"
    )]
    NeighborhoodRadius { dims: usize, radius: usize, np: usize, shape: String, max: usize },
    /// `-N graph:FILE` names a rank the job does not have.
    #[error(
        "Number of processes is less than graph nodes [-N graph:{path}] (it names rank {node}; run at least {} \
         processes)", node + 1
    )]
    NeighborhoodNodes { path: String, node: usize },
    /// The default limit would lower the largest size below the smallest:
    /// no size would be measured.
    #[error(
        "Memory limit too low [-M {limit}, the default] (the smallest message, {min} bytes, needs {need}-byte \
         buffers{with}; raise -M or lower -m)"
    )]
    DefaultMemoryLimit { limit: usize, min: usize, need: usize, with: String },
    /// nccl-tests' alltoallv: a traffic matrix the job does not fit (its
    /// line, [`crate::traffic::Traffic::misfit`]).
    #[error("{0}")]
    Traffic(String),
}

/// The `-w` and `-s` a one-sided benchmark accepts and its defaults
/// (bench/rma/mod.rs holds each benchmark's and what follows from them).
#[derive(Debug)]
pub struct OneSidedRules {
    /// The `-s` words OSU's option parser accepts for it, in its help's
    /// order; any other is refused as OSU refuses it.
    pub syncs: &'static [SyncMode],
    pub default_sync: SyncMode,
    pub default_win: WinKind,
    /// One row per datatype, its size that of one element
    /// (osu_fop_latency, osu_cas_latency): `-m` sizes only the buffers.
    pub one_element: bool,
    /// Whether the header names the datatype (`# Datatype: MPI_CHAR.`);
    /// osu_get_acc_latency's does not.
    pub datatype_line: bool,
    /// osu_acc_latency `-s lock`: above 8192 bytes OSU warms up as many
    /// times as it times (its large-message switch sets the warm-up to the
    /// iteration count), whatever `-x` says.
    pub lock_warms_up_as_timed: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct BenchSpec {
    /// Binary name, as in `Usage:` and file names (`osu_latency`).
    pub name: &'static str,
    /// Title without `# ` and version (`OSU MPI Latency Test`).
    pub title: &'static str,
    /// OSU option letters in OSU's option-string order (help follows it).
    pub letters: &'static str,
    pub procs: ProcRule,
    pub metric: MetricKind,
    pub defaults: IterDefaults,
    /// Whether message sizes above LARGE_MESSAGE_SIZE switch counts.
    pub large_switch: bool,
    pub min_size: usize,
    pub max_size: usize,
    /// Whether the size loop goes 0, 1, 2, 4 ... (latency family) rather
    /// than min, 2*min ... starting at 1.
    pub from_zero: bool,
    /// Whether a window (`-W`) applies.
    pub windowed: bool,
    /// Whether each rank's buffer holds np messages (allgather, alltoall),
    /// which is what the memory limit (`-M`) is compared with.
    pub buffer_times_np: bool,
    /// Whether OSU's GPU builds name the accelerator in the title
    /// (`OSU MPI-CUDA ...`); osu_mbw_mr and osu_multi_lat do not.
    pub accel_slot: bool,
    /// The one-sided benchmarks: the `-s` words this one takes and its
    /// `-w` and `-s` defaults (None for every other benchmark).
    pub one_sided: Option<&'static OneSidedRules>,
    /// What `-t` spreads each rank's work over (osu_latency_mt,
    /// osu_latency_mp); None where `-t` means something else or nothing.
    pub workers: Option<Workers>,
    /// Whether a window of messages goes each way at once (osu_bibw, its
    /// persistent form, osu_put_bibw): twice the traffic, a bandwidth
    /// that adds both directions, and for the two-sided ones twice the
    /// buffers.
    pub duplex: bool,
    /// Whether OSU heads this benchmark's MB/s columns as latencies
    /// (`Avg Latency(us)`, `P50 Tail Lat(us)`), as its congestion tests
    /// osu_bw_fan_in and osu_bw_fan_out do: a quirk of theirs, not of
    /// running on nodes.
    pub bw_headed_as_latency: bool,
}

impl BenchSpec {
    /// What a spec spreads from (`..BenchSpec::DEFAULT`): every switch off
    /// and nothing optional. The name, title, letters, process rule,
    /// metric, iteration defaults and largest size are each benchmark's
    /// own, and every spec in the registry names them (a test checks).
    pub(crate) const DEFAULT: BenchSpec = BenchSpec {
        name: "",
        title: "",
        letters: "",
        procs: ProcRule::ExactlyTwo,
        metric: MetricKind::Latency,
        defaults: LAT_ITERS,
        large_switch: false,
        min_size: 0,
        max_size: 0,
        from_zero: false,
        windowed: false,
        buffer_times_np: false,
        accel_slot: false,
        one_sided: None,
        workers: None,
        duplex: false,
        bw_headed_as_latency: false,
    };

    pub fn takes(&self, letter: char) -> bool {
        self.letters.contains(letter)
    }

    /// How many pairs communicate with `np` ranks (`pairs` is `-p`), or
    /// why this benchmark cannot run with `np` ranks.
    pub(crate) fn pairs_for(&self, np: usize, pairs: Option<usize>) -> Result<usize, JobShapeError> {
        match self.procs {
            ProcRule::ExactlyTwo if np != 2 => Err(JobShapeError::ExactlyTwo),
            ProcRule::ExactlyTwo => Ok(1),
            ProcRule::Any => Ok(0),
            ProcRule::Nodes if np < 2 => Err(JobShapeError::OneNode { np }),
            ProcRule::AtLeastTwo | ProcRule::Pairs if np < 2 => Err(JobShapeError::AtLeastTwo),
            ProcRule::AtLeastTwo => Ok(np / 2),
            // The nodes are checked with the ranks' host names (runner).
            ProcRule::Nodes => Ok(np / 2),
            ProcRule::Pairs => match pairs {
                Some(p) if p > np / 2 => Err(JobShapeError::Pairs { pairs: p, np }),
                Some(p) => Ok(p),
                None if np % 2 == 1 => Err(JobShapeError::EvenCount { np }),
                None => Ok(np / 2),
            },
        }
    }

    pub(crate) fn is_point_to_point(&self) -> bool {
        matches!(self.metric, MetricKind::Latency | MetricKind::Bandwidth | MetricKind::MultiBandwidth)
    }

    /// Whether rows carry nccl-tests' algbw and busbw (the collectives
    /// that move data; not osu_barrier or point-to-point).
    pub(crate) fn has_bus_bandwidth(&self) -> bool {
        self.metric == MetricKind::Collective
    }

    /// Whether the benchmark moves typed elements (`-T`, `# Datatype:`).
    pub(crate) fn typed(&self) -> bool {
        !matches!(
            self.metric,
            MetricKind::Barrier | MetricKind::Startup | MetricKind::Hello | MetricKind::OverlapBarrier
        )
    }

    /// Whether OSU labels this benchmark's MB/s columns as latencies
    /// ([`BenchSpec::bw_headed_as_latency`]).
    pub(crate) fn labels_bw_as_latency(&self) -> bool {
        self.bw_headed_as_latency
    }

    /// Whether the benchmark measures the job's start-up (osu_init,
    /// osu_hello) rather than messages in a timed loop.
    pub(crate) fn is_startup(&self) -> bool {
        matches!(self.metric, MetricKind::Startup | MetricKind::Hello)
    }

    /// Whether rows carry OSU's non-blocking overlap columns.
    pub fn is_overlap(&self) -> bool {
        matches!(self.metric, MetricKind::Overlap | MetricKind::OverlapBarrier)
    }

    /// Why `--precision` cannot judge this benchmark (None where it can):
    /// it needs one timed pass of iterations per size whose mean is the
    /// reported value.
    pub(crate) fn precision_refusal(&self) -> Option<&'static str> {
        if self.is_startup() {
            Some("it times MPI_Init once, not iterations")
        } else if self.is_overlap() {
            Some("its overlap figures come from two passes of the full count")
        } else if self.workers.is_some() {
            Some("its threads or processes share the size's full count")
        } else {
            None
        }
    }

    /// The thread support MPI must give: `MPI_THREAD_MULTIPLE` where the
    /// ping-pongs run on threads.
    pub(crate) fn thread_level(&self) -> ThreadLevel {
        match self.workers {
            Some(Workers::Threads) => ThreadLevel::Multiple,
            _ => ThreadLevel::Single,
        }
    }

    /// The title line, e.g. `# OSU MPI Latency Test v7.4`.
    pub fn title_line(&self) -> String {
        format!("# {} v{}", self.title, crate::OSU_VERSION)
    }
}

pub(crate) const LAT_ITERS: IterDefaults =
    IterDefaults { small_iterations: 10000, small_warmup: 100, large_iterations: 1000, large_warmup: 10 };
pub(crate) const BW_ITERS: IterDefaults =
    IterDefaults { small_iterations: 100, small_warmup: 10, large_iterations: 20, large_warmup: 2 };
pub(crate) const MBW_ITERS: IterDefaults =
    IterDefaults { small_iterations: 100, small_warmup: 10, large_iterations: 100, large_warmup: 10 };
/// Iterations of the non-blocking collectives: OSU's collective defaults.
pub(crate) const NBC_ITERS: IterDefaults = COLL_ITERS;
pub(crate) const COLL_ITERS: IterDefaults =
    IterDefaults { small_iterations: 1000, small_warmup: 100, large_iterations: 100, large_warmup: 10 };

/// Largest default message of the point-to-point benchmarks.
pub(crate) const PT2PT_MAX: usize = 1 << 22;

/// OSU's default per-process memory limit for collective buffers (`-M`).
pub(crate) const DEFAULT_MEM_LIMIT: usize = 512 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::collective::bcast::SPEC as BCAST;
    use crate::bench::pt2pt::bibw::SPEC as BIBW;
    use crate::bench::pt2pt::bw::SPEC as BW;
    use crate::bench::pt2pt::latency::SPEC as LATENCY;
    use crate::bench::pt2pt::mbw_mr::SPEC as MBW_MR;
    use crate::bench::pt2pt::multi_lat::SPEC as MULTI_LAT;

    impl BenchSpec {
        /// The results with errors as the lines rank 0 prints.
        fn pairs_for_text(&self, np: usize, pairs: Option<usize>) -> Result<usize, String> {
            self.pairs_for(np, pairs).map_err(|e| e.to_string())
        }
    }

    #[test]
    fn process_counts() {
        assert_eq!(LATENCY.pairs_for_text(2, None), Ok(1));
        assert_eq!(BCAST.pairs_for_text(1, None), Err("This test requires at least two processes".into()));
        assert_eq!(BW.pairs_for_text(3, None), Err("This test requires exactly two processes".into()));
        assert_eq!(MULTI_LAT.pairs_for_text(1, None), Err("This test requires at least two processes".into()));
        assert_eq!(MULTI_LAT.pairs_for_text(8, None), Ok(4));
        assert!(MULTI_LAT.pairs_for_text(5, None).unwrap_err().starts_with("This test requires an even number"));
        assert_eq!(MBW_MR.pairs_for_text(5, Some(1)), Ok(1), "-p allows odd np with idle ranks");
        assert_eq!(
            MBW_MR.pairs_for_text(4, Some(3)),
            Err("Invalid Number of Pairs [-p 3] (at most np/2 = 2 with 4 processes)".into())
        );
    }

    #[test]
    fn threads_ask_for_thread_multiple() {
        use crate::bench::pt2pt::latency_mp::SPEC as MP;
        use crate::bench::pt2pt::latency_mt::SPEC as MT;
        assert_eq!(MT.thread_level(), ThreadLevel::Multiple);
        assert_eq!((MP.thread_level(), LATENCY.thread_level()), (ThreadLevel::Single, ThreadLevel::Single));
        assert!(ThreadLevel::Single < ThreadLevel::Multiple, "the runner refuses a lower level than asked");
        assert_eq!(JobShapeError::ThreadMultiple.to_string(), "MPI_Init_thread must return MPI_THREAD_MULTIPLE!");
        assert!(MT.precision_refusal().is_some() && MP.precision_refusal().is_some());
    }

    #[test]
    fn titles_and_letters() {
        assert_eq!(BIBW.title_line(), "# OSU MPI Bi-Directional Bandwidth Test v7.4");
        assert!(LATENCY.takes('b') && !LATENCY.takes('W') && MBW_MR.takes('V'));
    }
}
