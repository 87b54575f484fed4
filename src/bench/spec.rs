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

    /// How many pairs communicate with `np` ranks (`pairs` is `-p`), or the
    /// line explaining why this benchmark cannot run with `np` ranks.
    pub fn pairs_for(&self, np: usize, pairs: Option<usize>) -> Result<usize, String> {
        match self.procs {
            ProcRule::ExactlyTwo if np != 2 => Err("This test requires exactly two processes".into()),
            ProcRule::ExactlyTwo => Ok(1),
            ProcRule::AtLeastTwo if np < 2 => Err("This test requires at least two processes".into()),
            ProcRule::AtLeastTwo => Ok(np / 2),
            ProcRule::Pairs if np < 2 => Err("This test requires at least two processes".into()),
            ProcRule::Pairs => match pairs {
                Some(p) if p > np / 2 => {
                    Err(format!("Invalid Number of Pairs [-p {p}] (at most np/2 = {} with {np} processes)", np / 2))
                }
                Some(p) => Ok(p),
                None if np % 2 == 1 => Err(format!(
                    "This test requires an even number of processes (rank i is paired with rank i + np/2), \
                     got {np}"
                )),
                None => Ok(np / 2),
            },
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_counts() {
        assert_eq!(LATENCY.pairs_for(2, None), Ok(1));
        assert_eq!(BW.pairs_for(3, None), Err("This test requires exactly two processes".into()));
        assert_eq!(MULTI_LAT.pairs_for(1, None), Err("This test requires at least two processes".into()));
        assert_eq!(MULTI_LAT.pairs_for(8, None), Ok(4));
        assert!(MULTI_LAT.pairs_for(5, None).unwrap_err().starts_with("This test requires an even number"));
        assert_eq!(MBW_MR.pairs_for(5, Some(1)), Ok(1), "-p allows odd np with idle ranks");
        assert_eq!(
            MBW_MR.pairs_for(4, Some(3)),
            Err("Invalid Number of Pairs [-p 3] (at most np/2 = 2 with 4 processes)".into())
        );
    }

    #[test]
    fn titles() {
        assert_eq!(BIBW.title_line(), "# OSU MPI Bi-Directional Bandwidth Test v7.4");
        assert!(LATENCY.takes('b') && !LATENCY.takes('W') && MBW_MR.takes('V'));
    }
}
