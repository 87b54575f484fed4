//! What distinguishes one benchmark binary from another before any
//! communication happens: its name and title, which OSU option letters it
//! takes, how many processes it needs, its size range and iteration defaults.

/// How many processes a benchmark needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcRule {
    /// latency, bw, bibw.
    ExactlyTwo,
    /// mbw_mr, multi_lat: rank i works with rank i + np/2.
    Pairs,
    /// collectives.
    AtLeastTwo,
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
pub const LARGE_MESSAGE_SIZE: usize = 8192;
/// OSU's default window (`-W`).
pub const DEFAULT_WINDOW: usize = 64;
/// OSU's default validation warm-up (`-u`) and its maximum.
pub const DEFAULT_VALIDATION_WARMUP: usize = 5;
pub const MAX_VALIDATION_WARMUP: usize = 10;

/// What a benchmark reports per size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// One-way latency in microseconds.
    Latency,
    /// MB/s (10^6 bytes per second).
    Bandwidth,
    /// MB/s and messages/s over all pairs (osu_mbw_mr).
    MultiBandwidth,
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
}

impl BenchSpec {
    pub fn takes(&self, letter: char) -> bool {
        self.letters.contains(letter)
    }

    /// The title line, e.g. `# OSU MPI Latency Test v7.4`.
    pub fn title_line(&self) -> String {
        format!("# {} v{}", self.title, crate::OSU_VERSION)
    }
}

const LAT_ITERS: IterDefaults =
    IterDefaults { small_iterations: 10000, small_warmup: 100, large_iterations: 1000, large_warmup: 10 };
const BW_ITERS: IterDefaults =
    IterDefaults { small_iterations: 100, small_warmup: 10, large_iterations: 20, large_warmup: 2 };
const MBW_ITERS: IterDefaults =
    IterDefaults { small_iterations: 100, small_warmup: 10, large_iterations: 100, large_warmup: 10 };

const PT2PT_MAX: usize = 1 << 22;

pub const LATENCY: BenchSpec = BenchSpec {
    name: "osu_latency",
    title: "OSU MPI Latency Test",
    letters: "hvmxibcuGDPTIz",
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Latency,
    defaults: LAT_ITERS,
    large_switch: true,
    min_size: 0,
    max_size: PT2PT_MAX,
    from_zero: true,
    windowed: false,
};

pub const MULTI_LAT: BenchSpec =
    BenchSpec { name: "osu_multi_lat", title: "OSU MPI Multi Latency Test", procs: ProcRule::Pairs, ..LATENCY };

pub const BW: BenchSpec = BenchSpec {
    name: "osu_bw",
    title: "OSU MPI Bandwidth Test",
    letters: "hvmxitWbcuGDPTIz",
    procs: ProcRule::ExactlyTwo,
    metric: MetricKind::Bandwidth,
    defaults: BW_ITERS,
    large_switch: true,
    min_size: 1,
    max_size: PT2PT_MAX,
    from_zero: false,
    windowed: true,
};

pub const BIBW: BenchSpec = BenchSpec { name: "osu_bibw", title: "OSU MPI Bi-Directional Bandwidth Test", ..BW };

pub const MBW_MR: BenchSpec = BenchSpec {
    name: "osu_mbw_mr",
    title: "OSU MPI Multiple Bandwidth / Message Rate Test",
    letters: "pWRximVhvbcuGDPTIz",
    procs: ProcRule::Pairs,
    metric: MetricKind::MultiBandwidth,
    defaults: MBW_ITERS,
    large_switch: false,
    min_size: 1,
    max_size: PT2PT_MAX,
    from_zero: false,
    windowed: true,
};
