//! What every reader produces and every consumer (the judge, the plots)
//! reads: tables of measured points, one per (benchmark, datatype) block of
//! one output, plus notes about what a reader could not use.

use serde::Serialize;

/// A quantity compared between runs, with the direction that is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    Latency,
    Bandwidth,
    MessageRate,
    /// A bandwidth's share of its path's peak, percent (the CSV's
    /// `efficiency_pct`): judged instead of the others with
    /// `--by-efficiency`, for runs on machines that differ.
    Efficiency,
}

impl Quantity {
    /// What a comparison judges by default (not efficiency).
    pub const ALL: [Quantity; 3] = [Quantity::Latency, Quantity::Bandwidth, Quantity::MessageRate];

    /// Bandwidth and message rate: more is better. Latency: less is better.
    pub(crate) fn higher_is_better(self) -> bool {
        !matches!(self, Quantity::Latency)
    }

    pub fn name(self) -> &'static str {
        match self {
            Quantity::Latency => "latency",
            Quantity::Bandwidth => "bandwidth",
            Quantity::MessageRate => "message rate",
            Quantity::Efficiency => "efficiency",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Quantity::Latency => "us",
            Quantity::Bandwidth => "MB/s",
            Quantity::MessageRate => "messages/s",
            Quantity::Efficiency => "% of peak",
        }
    }
}

/// The smallest value of any metric taken as a measurement (1e-9 us is a
/// femtosecond): below it, a subnormal say, no clock or counter produced
/// it, and a log axis down to it has no end.
pub(crate) const MIN_PLAUSIBLE: f64 = 1e-9;

impl Quantity {
    /// The largest value taken as a measurement of this metric: a latency
    /// of 1e12 us is 11.6 days per iteration, 1e12 MB/s an exabyte a
    /// second, 1e15 messages a second a million times any network's rate.
    pub(crate) fn max_plausible(self) -> f64 {
        match self {
            Quantity::Latency | Quantity::Bandwidth => 1e12,
            Quantity::MessageRate => 1e15,
            // A hundred times a path's peak is a wrong peak, not a result.
            Quantity::Efficiency => 1e4,
        }
    }

    /// Why `v` cannot be a measured value of this metric (not a positive
    /// number, or out of [`MIN_PLAUSIBLE`] to [`Quantity::max_plausible`]),
    /// as words after the value; None when it can be one.
    pub(crate) fn implausible(self, v: f64) -> Option<String> {
        if !(v.is_finite() && v > 0.0) {
            return Some("is not a positive number".into());
        }
        let unit = self.unit();
        if v < MIN_PLAUSIBLE {
            return Some(format!("is not a plausible {} (below {MIN_PLAUSIBLE:e} {unit})", self.name()));
        }
        let max = self.max_plausible();
        (v > max).then(|| format!("is not a plausible {} (above {max:e} {unit})", self.name()))
    }
}

/// A value as a line shows it: as written from 1e-4 to 1e9, in exponent
/// form beyond (1e308 has 309 digits, 1e-310 as many zeros).
pub fn shown(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-4..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// One row of a table: a message size and whatever columns the output had.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SizeRow {
    /// Bytes; 0 for benchmarks without a size (barrier).
    pub size: u64,
    pub latency_us: Option<f64>,
    pub bw_mbps: Option<f64>,
    pub msg_rate: Option<f64>,
    pub min_lat_us: Option<f64>,
    pub max_lat_us: Option<f64>,
    pub iterations: Option<u64>,
    pub validation: Option<bool>,
    /// Tail columns as printed, e.g. ("P99", 1.25).
    pub tails: Vec<(String, f64)>,
    /// Half-width of the 95% confidence interval of the reported value
    /// (whichever of latency, bandwidth or message rate the row reports),
    /// in percent of that value: the CSV's `ci95_rel_pct`. None where the
    /// output carries no spread (OSU's text, an older CSV).
    pub ci95_rel_pct: Option<f64>,
    /// The 10th and 90th percentiles of the per-iteration time over its
    /// mean (e.g. (0.9, 1.3)): the CSV's `p10_us` and `p90_us` over
    /// `iter_mean_us`. None where the output carries no distribution.
    pub time_band: Option<(f64, f64)>,
    /// A non-blocking collective's parts beside its overall time (in
    /// `latency_us`): compute time, pure communication time and overlap.
    pub compute_us: Option<f64>,
    pub pure_comm_us: Option<f64>,
    pub overlap_pct: Option<f64>,
    /// The bandwidth's share of its path's peak, percent (our CSV's
    /// `efficiency_pct`); None elsewhere.
    pub efficiency_pct: Option<f64>,
    /// The median time of one iteration (the CSV's `iter_p50_us`) and the
    /// larger side of its 95% interval in percent of it (from
    /// `median_ci95_low_us` and `median_ci95_high_us`), where the output
    /// has them: the typical iteration, which a few stalled ones do not
    /// move.
    pub median_us: Option<f64>,
    pub median_ci95_rel_pct: Option<f64>,
}

impl SizeRow {
    pub fn value(&self, m: Quantity) -> Option<f64> {
        match m {
            Quantity::Latency => self.latency_us,
            Quantity::Bandwidth => self.bw_mbps,
            Quantity::MessageRate => self.msg_rate,
            Quantity::Efficiency => self.efficiency_pct,
        }
    }

    /// The p10 to p90 band of metric `m` around its value, low first: a
    /// latency scales with the iteration time, a bandwidth or message rate
    /// (a constant over the mean time) with its inverse.
    pub fn band(&self, m: Quantity) -> Option<(f64, f64)> {
        let v = self.value(m)?;
        let (lo, hi) = self.time_band?;
        let band = match m {
            Quantity::Latency => (v * lo, v * hi),
            Quantity::Bandwidth | Quantity::MessageRate | Quantity::Efficiency => (v / hi, v / lo),
        };
        (band.0.is_finite() && band.1.is_finite() && band.0 > 0.0 && band.0 <= band.1).then_some(band)
    }
}

/// Where the measured buffers were: results on device memory and on host
/// memory measure different things and are not judged against each other
/// unless the user says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Memory {
    Host,
    Device,
    /// Managed (unified) memory: OSU's `M`.
    Managed,
}

impl Memory {
    pub fn name(self) -> &'static str {
        match self {
            Memory::Host => "host memory",
            Memory::Device => "device memory",
            Memory::Managed => "managed memory",
        }
    }

    /// A run record's or a CSV's word for it (`host`, `device`, `cuda`, ...).
    pub(crate) fn from_word(w: &str) -> Option<Memory> {
        let w = w.trim().to_ascii_lowercase();
        match w.as_str() {
            "host" | "h" | "cpu" => Some(Memory::Host),
            "managed" | "m" | "unified" => Some(Memory::Managed),
            "device" | "d" | "gpu" | "cuda" | "rocm" | "hip" | "ze" | "sycl" | "openacc" => Some(Memory::Device),
            _ => None,
        }
    }
}

/// Where a table's buffers were, and what says so (`title 'OSU MPI-CUDA'`,
/// `run record`, ...), for the line that refuses or warns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryInfo {
    pub memory: Memory,
    pub from: String,
    /// True when only a plain `OSU MPI` title says host: weaker than a
    /// buffer line, a file name marker or a run record.
    pub weak: bool,
}

/// Where and on what a run was made, from the JSON run record beside it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunInfo {
    pub hosts: Vec<String>,
    /// The MPI library, shortened to its name and version.
    pub mpi_library: Option<String>,
    /// `mpi.world_size`.
    pub world_size: Option<u64>,
    /// Where the buffers were (`memory`): what ran, whatever buffer words
    /// were given on the command line.
    pub memory: Option<Memory>,
    /// The record's `options` object.
    pub options: Option<serde_json::Map<String, serde_json::Value>>,
    /// The record's `status` (`complete`, `running`, `error` ...), if it
    /// has one.
    pub status: Option<String>,
    /// The line saying the run's host was busy during it
    /// (crate::procs::load's rule over the record's ranks), if it was.
    pub busy: Option<String>,
}

impl RunInfo {
    /// The run ended on its own and measured what it was asked to (or
    /// judged it: pairs' `passed`/`failed`; a validation failure is judged
    /// by its rows). A record without a status (another tool's) counts as
    /// complete.
    pub fn completed(&self) -> bool {
        matches!(self.status.as_deref(), None | Some("complete" | "passed" | "failed" | "validation_failed"))
    }
}

/// One block of results: a benchmark at one datatype from one output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Binary name, e.g. `osu_latency`.
    pub benchmark: String,
    /// As printed (`MPI_CHAR`); `None` where the output names none.
    pub datatype: Option<String>,
    /// OSU version from the title (`5.6.2`); `None` for commbench CSV.
    pub osu_version: Option<String>,
    /// False where the output has no size column (barrier).
    pub sized: bool,
    pub pairs: Option<u64>,
    pub window: Option<String>,
    /// Processes in the job, where the output says (CSV `np`, run record).
    pub np: Option<u64>,
    /// Where the buffers were, where the output says.
    pub memory: Option<MemoryInfo>,
    pub points: Vec<SizeRow>,
    /// The file it came from.
    pub path: String,
    /// 1-based line of its column header (text outputs).
    pub line: Option<usize>,
    /// A short name for the run in tables and legends.
    pub run_label: String,
    pub run: Option<RunInfo>,
    /// The spreads (`ci95_rel_pct`) are a band for one new run (`history
    /// check`'s baseline), which holds a run's own scatter already: the
    /// noise rule then allows the band alone, adding no run interval.
    pub band_for_one_run: bool,
}

impl Table {
    /// Outputs without a `# Datatype:` line (before OSU 7) measured bytes.
    pub(crate) fn datatype_key(&self) -> &str {
        self.datatype.as_deref().unwrap_or("MPI_CHAR")
    }

    /// Where it came from, as `path:line` or `path`.
    pub fn origin(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}", self.path),
            None => self.path.clone(),
        }
    }

    /// Metrics with at least one value.
    pub(crate) fn metrics(&self) -> Vec<Quantity> {
        Quantity::ALL.into_iter().filter(|m| self.points.iter().any(|p| p.value(*m).is_some())).collect()
    }
}

/// Something a reader saw and did not use, said instead of guessed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Note {
    pub path: String,
    pub line: Option<usize>,
    pub message: String,
}

impl Note {
    /// A file whose last line (`line`) has no newline: cut off while a
    /// row was written.
    pub(crate) fn cut_last_line(path: &str, line: usize) -> Note {
        let message = "the last line has no newline: the file was cut off in the middle of a row".to_string();
        Note { path: path.into(), line: Some(line), message }
    }

    /// A CSV row with `cells` where its header has `columns`: cut short or
    /// damaged; None when they match.
    pub(crate) fn short_row(path: &str, line: usize, cells: usize, columns: usize) -> Option<Note> {
        (cells != columns).then(|| Note {
            path: path.into(),
            line: Some(line),
            message: format!("{cells} cells where the header has {columns}: the row is cut short or damaged"),
        })
    }

    /// [`Note::cut_last_line`] for a CSV `text` that does not end in a
    /// newline.
    pub(crate) fn unfinished_csv(path: &str, text: &str) -> Option<Note> {
        (!text.is_empty() && !text.ends_with('\n')).then(|| Note::cut_last_line(path, text.lines().count()))
    }
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.path, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

/// What reading one input gave.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    pub tables: Vec<Table>,
    pub notes: Vec<Note>,
    /// Where a file is cut short (a last line with no newline, a row with
    /// fewer or more cells than the header): compare judges no such file.
    pub cut: Vec<Note>,
}
