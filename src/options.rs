//! The parsed options of one benchmark run, as a value: what `cli` makes of
//! the command line (OSU's grammar and its checks live there) and what every
//! layer below the runner reads. Nothing changes an `Options` after parsing;
//! what a run does with it is worked out once, in `bench::engine::plan`.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::backend::rma::{SyncMode, WinKind};
pub(crate) use crate::backend::Backend;
use crate::datatype::{Datatype, Reduction};
use crate::stats::precision::Precision;
use crate::stats::RankTime;
use crate::topo::request::PlacementRequest;

/// OSU's `-b`: one buffer reused, or a fresh one per message in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BufferMode {
    Single,
    Multiple,
}

/// Where results go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultsDest {
    /// A new, uniquely named CSV + run record in this directory.
    Dir(PathBuf),
    /// This CSV file, with the run record beside it.
    Csv(PathBuf),
    /// No files.
    Off,
}

/// OSU's positional buffer locations, `SRC DST` after the options (`H`
/// host, `D` device, `M`/`MD`/`MH` managed), as given. Without `-d`, an
/// OSU build with no GPU support runs them on host memory, and so do we;
/// the run record says so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BufferLocations {
    pub send: String,
    pub recv: String,
}

impl BufferLocations {
    /// Whether either side asks for something other than host memory.
    pub(crate) fn asks_for_device(&self) -> bool {
        [&self.send, &self.recv].iter().any(|w| !w.starts_with('H'))
    }

    /// `SRC DST` as typed.
    pub fn words(&self) -> String {
        format!("{} {}", self.send, self.recv)
    }
}

/// Which rank is the root of osu_reduce (`-k`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RootRank {
    Fixed(usize),
    /// Iteration i uses root i mod np.
    Rotate,
}

/// The process topology of the neighbourhood collectives (`-N`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Neighborhood {
    /// `-N cart:D:R` (default cart:1:1): a periodic grid of D dimensions
    /// as MPI_Dims_create shapes it; each rank's neighbours are every rank
    /// within R steps along every dimension at once (its (2R+1)^D - 1
    /// surrounding cells), in and out alike.
    Cart { dims: usize, radius: usize },
    /// `-N graph:FILE`: the directed edges `from,to` FILE lists, read when
    /// the options are (the path is kept for the run record).
    Graph { path: PathBuf, edges: Vec<(usize, usize)> },
}

/// Validation (`-c`), optionally logging failures (`-clog[:DIR]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Validation {
    pub log_dir: Option<PathBuf>,
}

/// Largest message: MPI counts are C ints.
pub(crate) const MAX_MESSAGE_BYTES: usize = i32::MAX as usize;

/// Default directory for `-clog` without a directory (OSU's).
pub(crate) const DEFAULT_VALIDATION_LOG_DIR: &str = "validation_output";
/// Most `-z` percentiles at once (OSU's array size).
pub(crate) const MAX_TAIL_PERCENTILES: usize = 5;
/// Percentiles printed by a bare `-z`, in print order.
pub(crate) const DEFAULT_TAILS: [u32; 3] = [50, 90, 99];

/// osu_latency_mt's threads or osu_latency_mp's forked processes on each
/// side (`-t R` or `-t S:R`), as OSU counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WorkerCounts {
    /// The sender's count when set (`S:R`, or osu_latency_mp's default);
    /// None after `-t R`.
    pub sender: Option<usize>,
    pub receiver: usize,
}

impl WorkerCounts {
    /// Threads on the sender: one unless `S:R` gave another count.
    pub(crate) fn sender_threads(&self) -> usize {
        self.sender.unwrap_or(1)
    }

    /// Processes the sender forks: none unless set (OSU's osu_latency_mp
    /// forks none after `-t R`).
    pub(crate) fn sender_processes(&self) -> usize {
        self.sender.unwrap_or(0)
    }
}

pub use crate::backend::split::Split;

/// How buffers are registered with NCCL's communicators (nccl-tests'
/// `-R 1` and `-R 2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Registration {
    /// `ncclCommRegister` (NCCL 2.19 on).
    Local,
    /// `ncclCommWindowRegister` with NCCL_WIN_COLL_SYMMETRIC (2.27 on).
    Symmetric,
}

#[derive(Clone, Debug, Serialize)]
pub struct Options {
    pub min_size: usize,
    pub max_size: usize,
    /// `-i` (both small and large counts), if given.
    pub iterations: Option<usize>,
    /// `-x` (both small and large counts), if given.
    pub warmup: Option<usize>,
    pub window: usize,
    pub window_given: bool,
    pub buffers: BufferMode,
    pub validation: Option<Validation>,
    /// `-u`; 0 when validation is off.
    pub validation_warmup: usize,
    pub datatypes: Vec<Datatype>,
    /// `-z` percentiles, in the order given.
    pub tails: Option<Vec<u32>>,
    /// `-p` (mbw_mr), if given.
    pub pairs: Option<usize>,
    /// `-R` (mbw_mr); default on.
    pub print_rate: bool,
    /// `-V` (mbw_mr).
    pub vary_window: bool,
    /// `-f` (collectives): Min, Max and Iterations columns.
    pub full: bool,
    /// `-t` (non-blocking collectives): test calls during the dummy
    /// computation (0: none, the default).
    pub test_calls: usize,
    /// `-t` (osu_latency_mt, osu_latency_mp): the sender's and the
    /// receiver's threads or forked processes, as OSU prints them.
    pub workers: Option<WorkerCounts>,
    /// `-M` (collectives), if given: bytes one buffer may take.
    pub mem_limit: Option<usize>,
    /// `-l` (collectives with an in-place form).
    pub in_place: bool,
    /// `-k` (osu_reduce).
    pub root: RootRank,
    /// What the reducing collectives apply (nccl-tests' `-o`; OSU's
    /// binaries always sum, and a record of a sum leaves it out).
    #[serde(skip_serializing_if = "Reduction::is_sum")]
    pub reduction: Reduction,
    /// nccl-tests' `-o all`: each operation in turn, one sweep apiece, on
    /// the tests that loop over operations (empty: `reduction` alone).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reductions: Vec<Reduction>,
    /// nccl-tests' `-r -1`: each rank in turn as the root, one sweep
    /// apiece, on the rooted tests (false: `root` alone).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub every_root: bool,
    /// Host threads per process, each driving `gpus_per_thread` GPUs
    /// (nccl-tests' `-t` and `-g`): a process drives their product, one
    /// thread per GPU (src/backend/team.rs); 1 and 1 elsewhere.
    #[serde(skip_serializing_if = "is_one")]
    pub threads_per_process: usize,
    #[serde(skip_serializing_if = "is_one")]
    pub gpus_per_thread: usize,
    /// nccl-tests' `-y 1`: NCCL's operations on the legacy default (NULL)
    /// stream instead of a non-blocking stream of their own.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub default_stream: bool,
    /// nccl-tests' `-C 1`: its table's time columns show rank 0's host
    /// time per call up to the last completion.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cputime: bool,
    /// nccl-tests' `-I 1` with `-K`'s skip: each timed iteration also
    /// timed on the device (CUDA events), its table and JSON gain the
    /// iterations' summary over all but the first `skip`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration_events: Option<usize>,
    /// nccl-tests' `-u N`: every GPU buffer starts N elements of the
    /// datatype past its allocation (misaligned; 0: aligned).
    #[serde(skip_serializing_if = "is_zero")]
    pub unalign: usize,
    /// nccl-tests' alltoallv: what each pair of ranks moves (its
    /// `NCCL_TESTS_ALLTOALLV_*` variables); None for every other run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traffic: Option<crate::traffic::Traffic>,
    /// `NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY`: each alltoallv cell is
    /// preceded by the pattern's line and every rank's bytes and
    /// bandwidths, where nccl-tests prints them (inside the row).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub traffic_summary: bool,
    /// nccl-tests' `NCCL_TESTS_SPLIT` / `NCCL_TESTS_SPLIT_MASK`: the
    /// processes split into communicators by colour, each timed at once.
    #[serde(skip_serializing_if = "Split::is_none")]
    pub split: Split,
    /// nccl-tests' `-R`: the send and receive buffers registered with each
    /// communicator (`local`, or a `symmetric` window); None unregistered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    /// nccl-tests' `-x P`: every communicator is made with CTA policy P
    /// (NCCL 2.27 on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cta_policy: Option<i32>,
    /// nccl-tests' `-c N` as given: N checked calls after each size's
    /// timed ones (ending at the first wrong one), none at 0 or below;
    /// 1 for every other front end.
    #[serde(skip_serializing_if = "is_one_check")]
    pub check_rounds: i32,
    /// nccl-tests' `-M 1`: after its table's footer, the GPU memory the
    /// communicator, the buffers and the collectives took.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub memory_report: bool,
    /// nccl-tests' `-p 1`: its preamble says the threads make their
    /// communicators concurrently (as every GPU's thread here always does).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub parallel_init: bool,
    /// nccl-tests' `-J FILE.json`: its JSON document, written beside its
    /// table by rank 0 (a name without the `.json` extension is ignored,
    /// as by nccl-tests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_output: Option<std::path::PathBuf>,
    /// nccl-tests' `-S 1`: each row of its table ends with the local time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timestamps: bool,
    /// Which rank's time a collective's row reports (nccl-tests' `-a`;
    /// OSU's binaries average over ranks, and a record of that leaves it
    /// out).
    #[serde(skip_serializing_if = "RankTime::is_avg")]
    pub rank_time: RankTime,
    /// Timed calls issued as one group, between one `ncclGroupStart` and
    /// its `ncclGroupEnd` (nccl-tests' `-m`); 1: each call alone. The
    /// iteration counts count calls.
    #[serde(skip_serializing_if = "is_one")]
    pub aggregate: usize,
    /// What follows each timed call or group (nccl-tests' `-z`).
    #[serde(skip_serializing_if = "Blocking::is_none")]
    pub blocking: Blocking,
    /// nccl-tests' `-G N`: each size's timed calls captured into a CUDA
    /// graph, which is then launched N times and timed per launch; 0:
    /// the calls are issued directly.
    #[serde(skip_serializing_if = "is_zero")]
    pub graph_launches: usize,
    /// `-N` (neighbourhood collectives).
    pub neighborhood: Neighborhood,
    pub results: ResultsDest,
    /// Whether the user chose where results go (`--results-dir`, `--csv`,
    /// `--no-results` or `$COMMBENCH_RESULTS_DIR`). When not, results
    /// that cannot be written cost a warning, never the OSU table.
    pub results_chosen: bool,
    /// `--verbose`: the placement table and the results line on stderr.
    pub verbose: bool,
    /// `SRC DST` after the options, if given.
    pub buffer_locations: Option<BufferLocations>,
    /// `--backend`: what carries the timed messages.
    pub backend: Backend,
    /// `-d`: the accelerator whose memory buffers may live in.
    pub accel: Option<Accel>,
    /// `--timeout`: the watchdog's stall limit; 10 minutes unless given,
    /// None with `--timeout 0`.
    #[serde(rename = "timeout_s", serialize_with = "seconds")]
    pub timeout: Option<Duration>,
    /// `--bind`, `--cpu-list`, `--nic`, `--gpu`.
    pub placement: PlacementRequest,
    /// `--format`: the layout of stdout (OSU's table, nccl-tests', JSON Lines).
    pub format: Format,
    /// `--min-busbw`: the least average bus bandwidth (GB/s) a run of a
    /// collective passes with.
    pub min_busbw: Option<f64>,
    /// `--min-efficiency`: the least share of its path's peak, percent, a
    /// run's bandwidth plateau passes with (crate::peak).
    pub min_efficiency: Option<f64>,
    /// `--precision`: each size stops once the 95% interval of its value
    /// is within this share of it (None: OSU's fixed counts).
    pub precision: Option<Precision>,
    /// `--min-iterations`: the floor under `--precision` (None: a tenth of
    /// the size's count, see stats::precision::suggested_floor).
    pub min_iterations: Option<u64>,
    /// `--max-time-per-size`: a size's time limit under `--precision`.
    #[serde(rename = "max_time_per_size_s", serialize_with = "seconds")]
    pub max_time_per_size: Option<Duration>,
    /// OSU options given to osu_init or osu_hello, which take none of
    /// them: accepted, warned about and ignored (as typed: `-x 10`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
    /// `-w` (one-sided benchmarks), if given.
    pub win: Option<WinKind>,
    /// `-s` (one-sided benchmarks), if given.
    pub sync: Option<SyncMode>,
    /// `--dry-run`: print the plan and exit, nothing started.
    pub dry_run: bool,
    /// `--dry-run=NP`: the ranks it plans for.
    pub dry_run_ranks: Option<usize>,
    /// nccl-tests' sweep (`-b -e -f -i` of the `*_perf` binaries): the
    /// sizes as its table's size column shows them, instead of OSU's
    /// powers of two from `min_size` to `max_size` (which then bound it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
}

impl Options {
    /// GPUs each process drives, one thread apiece: 1 but under
    /// nccl-tests' `-t`/`-g`.
    pub fn lanes(&self) -> usize {
        self.threads_per_process.max(1) * self.gpus_per_thread.max(1)
    }
}

/// A size sweep as nccl-tests gives one: from `min` to `max` bytes, each
/// size the last times a factor or plus a step. Sizes are u64 so that a
/// sweep to 8G or 16G is whole on every target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Sweep {
    pub min: u64,
    pub max: u64,
    pub step: SweepStep,
    /// How many times the whole sweep runs, one after another (nccl-tests'
    /// `-N`); 0: again and again until the job is stopped (`-N 0`).
    pub cycles: u32,
}

/// How a [`Sweep`] goes from one size to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepStep {
    /// Multiply by this factor (nccl-tests' `-f`, when above 1).
    Factor(u64),
    /// Add this many bytes (`-i`, when `-f` is 1 or less).
    Bytes(u64),
}

impl Sweep {
    /// The sizes of one pass in order, from `min` while not above `max`. Ends where
    /// the next size would not grow or would pass 2^64 (nccl-tests' own
    /// loop wraps there and never ends; its front end refuses a step that
    /// cannot grow before a sweep starts).
    pub fn pass(self) -> impl Iterator<Item = u64> {
        let next = move |size: &u64| {
            let n = match self.step {
                SweepStep::Factor(f) => size.checked_mul(f),
                SweepStep::Bytes(b) => size.checked_add(b),
            };
            n.filter(|n| n > size && *n <= self.max)
        };
        std::iter::successors((self.min <= self.max).then_some(self.min), next)
    }

    /// The sizes nccl-tests warms up at before a sweep: from `min`,
    /// doubling, while not above `max`, whatever the sweep's own step.
    /// From 0 the next is 1 (nccl-tests' own loop would stay at 0 for
    /// ever).
    pub fn warmup_sizes(self) -> impl Iterator<Item = u64> {
        let next = move |size: &u64| {
            let n = if *size == 0 { Some(1) } else { size.checked_mul(2) };
            n.filter(|n| *n <= self.max)
        };
        std::iter::successors((self.min <= self.max).then_some(self.min), next)
    }

    /// Every size measured, in order: [`Sweep::pass`] `cycles` times (once
    /// for a sweep that repeats until stopped: the measurement repeats it,
    /// [`Sweep::forever`]).
    pub fn sizes(self) -> impl Iterator<Item = u64> {
        (0..self.cycles.max(1)).flat_map(move |_| self.pass())
    }

    /// Whether the sweep runs until the job is stopped (`-N 0`).
    pub fn forever(self) -> bool {
        self.cycles == 0
    }

    /// The last size a pass reaches (None when `min` is above `max`).
    pub fn last(self) -> Option<u64> {
        self.pass().last()
    }
}

/// `--format`: the layout of stdout, one of three. The CSV and run record
/// are the same whichever it is; each property below is a match over every
/// format, so a new one decides each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// OSU 7.4's table (the default).
    Osu,
    /// nccl-tests' table: each size out-of-place then in-place, with time,
    /// algbw, busbw and the wrong elements of each, and its footer.
    NcclTests,
    /// JSON Lines: a `run` object, one object per measured row, an `end`
    /// object; nothing else (report/json_lines.rs).
    Json,
    /// The results CSV's header and rows on stdout, each row as its size
    /// finishes (report/csv.rs); nothing else.
    Csv,
}

/// What a format is to everything outside its sink: its `--format` word,
/// its help line, and which of OSU's lines outside the table it keeps on
/// stdout. A new format is a variant here, a sink in src/report and its
/// wiring in report::sinks; the options, help text and runner read these.
impl Format {
    /// Every format, in the order `-h` and the refusal list them.
    pub const ALL: [Format; 4] = [Format::Osu, Format::NcclTests, Format::Json, Format::Csv];

    /// Its `--format` word (the run record's word too).
    pub fn word(self) -> &'static str {
        match self {
            Format::Osu => "osu",
            Format::NcclTests => "nccl-tests",
            Format::Json => "json",
            Format::Csv => "csv",
        }
    }

    /// The format a `--format` word names.
    pub(crate) fn from_word(word: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.word() == word)
    }

    /// Its line under `--format` in `-h`.
    pub fn about(self) -> &'static str {
        match self {
            Format::Osu => "OSU 7.4's table (the default)",
            Format::NcclTests => {
                "nccl-tests' table (NCCL collectives: out-of-place and in-place, algbw, busbw, #wrong)"
            }
            Format::Json => "JSON Lines: a run object, one object per measured row, an end object",
            Format::Csv => "the results CSV's header, then one row per measured row as it finishes",
        }
    }

    /// Whether stdout starts as OSU's binaries start it before the table
    /// (`#Using NCCL` on every rank of an NCCL run).
    pub(crate) fn osu_preamble(self) -> bool {
        match self {
            Format::Osu => true,
            Format::NcclTests | Format::Json | Format::Csv => false,
        }
    }

    /// Whether the runner's own text lines may follow the table on stdout
    /// (OSU's `DATA VALIDATION ERROR: ...`). False for a format whose every
    /// stdout line a program parses: the failing row and the exit status
    /// say it there, stderr and the run record as always.
    pub(crate) fn runner_lines(self) -> bool {
        match self {
            Format::Osu | Format::NcclTests => true,
            Format::Json | Format::Csv => false,
        }
    }

    /// The passes of every size: nccl-tests' table times each size out of
    /// place then in place (`Some(in_place)`); OSU's one pass has no such
    /// switch (`None`).
    pub fn passes(self) -> &'static [Option<bool>] {
        match self {
            Format::NcclTests => &[Some(false), Some(true)],
            Format::Osu | Format::Json | Format::Csv => &[None],
        }
    }

    /// Whether `-c` checks as nccl-tests does: every rank's wrong elements
    /// counted into the row, and the sizes after a wrong one still run;
    /// otherwise OSU's way, the run ending at the first wrong size.
    pub(crate) fn counts_wrong_elements(self) -> bool {
        match self {
            Format::NcclTests => true,
            Format::Osu | Format::Json | Format::Csv => false,
        }
    }
}

/// nccl-tests' `-z`: what the timed loop does after each call (or each
/// group of `-m` calls) beyond issuing it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Blocking {
    /// Nothing: the calls go back to back, one completion at the end.
    #[default]
    None,
    /// `-z 1`: wait for each call, then a barrier, both timed.
    WaitAndBarrier,
    /// `-z 2`: wait for each call, no barrier.
    Wait,
    /// `-z 3`: wait for each group of `-m` calls and time it, then a
    /// barrier outside the time.
    WaitEachGroupBarrierUntimed,
}

impl Blocking {
    pub fn is_none(&self) -> bool {
        *self == Blocking::None
    }
}

/// Whether a count is one (serde: a record leaves such a default out).
fn is_one(n: &usize) -> bool {
    *n == 1
}

/// Whether a check count is one (serde: likewise).
fn is_one_check(n: &i32) -> bool {
    *n == 1
}

/// Whether a count is zero (serde: likewise).
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// An optional duration as seconds (a float) in JSON, for every options
/// value that records one (`timeout_s`, `max_time_per_size_s`).
pub fn seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// `-d TYPE`: the accelerator whose memory holds the message buffers. As
/// in OSU, point-to-point buffers follow the `SRC DST` words (`-d` alone
/// leaves them on the host), and collectives put every buffer there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// CUDA device memory (`cuMemAlloc`).
    Cuda,
    /// CUDA managed memory (`cuMemAllocManaged`).
    Managed,
}

impl Accel {
    /// The slot OSU's title gets (`# OSU MPI-CUDA Latency Test v7.4`).
    pub(crate) fn title_slot(self) -> &'static str {
        "-CUDA"
    }
}
