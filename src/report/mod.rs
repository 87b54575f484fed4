//! Where results go. Every output is a [`Sink`] that takes the same size
//! points: the CSV file always (csv.rs), and on stdout the layout
//! `--format` names ([`stdout_sink`]: OSU's table, osu.rs; nccl-tests',
//! nccl_table.rs; JSON Lines, json_lines.rs). The JSON run record
//! describes the run as a whole and is written by the runner. A new stdout
//! format is a [`crate::options::Format`] variant, its sink file, and its
//! module line and arm here.

pub mod csv;
pub mod files;
pub(crate) mod json_lines;
pub(crate) mod nccl_json;
pub(crate) mod nccl_table;
pub(crate) mod nccl_tests;
pub mod osu;
pub mod placement;
pub mod record;
pub(crate) mod record_end;
pub(crate) mod safe_file;
pub(crate) mod sinks;
pub mod slurm;
pub mod time;

use std::io::{self, Write};

use crate::datatype::Datatype;
use crate::stats::spread::Spread;
use crate::stats::{RankSpread, Summary};

/// The times of a non-blocking collective as OSU reports them: each an
/// average over ranks of the rank's mean per iteration, in microseconds,
/// except the fastest and slowest rank's pure communication time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OverlapTimes {
    /// Start, compute with tests, and wait, timed as one.
    pub overall_us: f64,
    /// The dummy computation alone (the tests taken out).
    pub compute_us: f64,
    /// The call that starts the operation.
    pub init_us: f64,
    /// The `-t` test calls during the computation.
    pub test_us: f64,
    /// The wait after the computation.
    pub wait_us: f64,
    /// Start and wait with nothing in between (the first pass).
    pub pure_us: f64,
    pub min_pure_us: f64,
    pub max_pure_us: f64,
    /// max(0, 100 - 100 (overall - compute) / pure).
    pub overlap_pct: f64,
}

/// Facts that hold for every row of one run.
#[derive(Clone, Debug)]
pub struct RunContext {
    pub benchmark: &'static str,
    pub backend: &'static str,
    pub np: usize,
    /// Pairs that communicate (1 for latency/bw/bibw; none for collectives).
    pub pairs: Option<usize>,
    /// The path whose peak bounds every row's bandwidth (crate::peak), for
    /// a run that reports one.
    pub path: Option<std::sync::Arc<crate::peak::PathPeak>>,
}

impl RunContext {
    /// The bandwidth `row` reports, 10^6 bytes/s: osu_bw's MB/s, or a
    /// collective's bus bandwidth (the figure a link's peak bounds).
    pub(crate) fn bandwidth_mbps(&self, row: &Row) -> Option<f64> {
        row.bw_mbps.or_else(|| row.algbw_busbw.map(|(_, bus)| bus * 1e3))
    }

    /// `row`'s bandwidth as a percentage of its path's peak.
    pub fn efficiency_pct(&self, row: &Row) -> Option<f64> {
        self.path.as_ref()?.efficiency(self.bandwidth_mbps(row)?)
    }
}

/// The result of one (datatype, size[, window]) measurement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    pub datatype: Option<Datatype>,
    pub size: usize,
    /// Messages in flight per iteration, for windowed benchmarks.
    pub window: Option<usize>,
    pub iterations: usize,
    pub warmup: usize,
    /// One-way latency in microseconds (latency benchmarks).
    pub avg_lat_us: Option<f64>,
    /// MB/s = 10^6 bytes per second (bandwidth benchmarks).
    pub bw_mbps: Option<f64>,
    /// Messages per second (osu_mbw_mr).
    pub msg_rate: Option<f64>,
    /// Fastest and slowest rank's mean latency (collectives; OSU's Min and
    /// Max columns).
    pub spread: Option<RankSpread>,
    /// nccl-tests algorithm and bus bandwidth, GB/s (collectives).
    pub algbw_busbw: Option<(f64, f64)>,
    /// Some(true) = Pass, Some(false) = Fail; None without -c.
    pub validation: Option<bool>,
    /// Wrong elements summed over ranks, where checked and counted
    /// (nccl-tests' `#wrong`).
    pub wrong_elements: Option<u64>,
    /// nccl-tests' two passes: Some(false) out-of-place, Some(true) in
    /// place; None for a run of one form (OSU's).
    pub in_place: Option<bool>,
    /// Non-blocking collectives: OSU's overlap columns.
    pub overlap: Option<OverlapTimes>,
    /// `-z` values as printed (same unit as the main metric).
    pub tails: Vec<(u32, f64)>,
    /// Distribution of the per-iteration time.
    pub iter: Option<Summary>,
    /// Timed iterations behind the row (the samples of `iter`); None where
    /// nothing was timed.
    pub iterations_run: Option<usize>,
    /// 95% intervals, p10/p90 and noise verdict of the per-iteration time
    /// (microseconds, same series and scale as `iter`); None where the
    /// iterations have no time of their own (a batch timed as one).
    pub iter_spread: Option<Spread>,
    /// Under `--precision`: the count the size could have run (OSU's, or
    /// `-i`) and why it stopped where it did. None without the option and
    /// for kernels it does not judge.
    pub precision: Option<PrecisionStop>,
    /// When the row was finished (RFC 3339, UTC).
    pub finished_utc: String,
    /// Its operation, where the run swept several (nccl-tests' `-o all`).
    pub reduction: Option<crate::datatype::Reduction>,
    /// Its root, where the run swept every rank as the root (`-r -1`).
    pub root: Option<usize>,
    /// Rank 0's host time per call up to the batch's last completion (a
    /// batched transport's; nccl-tests' `-C 1` cputime), in µs.
    pub issue_us: Option<f64>,
    /// The time the bandwidths come from, which nccl-tests' `-a` picks
    /// ([`crate::bench::Metric::time_us`]), in µs.
    pub time_us: Option<f64>,
    /// Each timed iteration's device time and its summary (nccl-tests'
    /// `-I 1`), on rank 0.
    pub per_iteration: Option<crate::stats::iterations::PerIteration>,
}

/// Where `--precision` ended a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrecisionStop {
    /// The fixed count the rule replaced: its ceiling.
    pub ceiling: usize,
    pub reason: crate::stats::precision::StopReason,
    /// How many times the drift test held the size back after its
    /// interval was met (stats::precision).
    pub drift_holds: u64,
}

/// A consumer of result rows: one output format.
pub trait Sink {
    /// A new datatype block starts.
    fn begin_datatype(&mut self, _dt: Datatype) -> io::Result<()> {
        Ok(())
    }
    /// Within a datatype block, a sweep of operation `op` and, where the
    /// sweep has one of its own (nccl-tests' `-r -1`), root `root`.
    fn begin_operation(&mut self, _op: crate::datatype::Reduction, _root: Option<usize>) -> io::Result<()> {
        Ok(())
    }
    /// One size point: its rows, one per cell (window, pass) in the plan's
    /// order (`bench::engine::plan::Point`), written out before returning. A point
    /// cut short by a failure brings the rows it has.
    fn point(&mut self, rows: &[Row]) -> io::Result<()>;
    /// A point of one row.
    fn row(&mut self, row: &Row) -> io::Result<()> {
        self.point(std::slice::from_ref(row))
    }
    /// The datatype block is complete.
    fn end_datatype(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Every size has been measured (not called when the run ends early).
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// The GPUs' memory the run took (nccl-tests' `-M 1`), just before
    /// [`Sink::finish`].
    fn memory_usage(&mut self, _usage: &MemoryUsage) -> io::Result<()> {
        Ok(())
    }
}

/// The device memory a run took on its GPUs (nccl-tests' `-M 1`): each
/// the most over every GPU of the job, bytes (negative where memory was
/// given back).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUsage {
    /// The communicator's making.
    pub init: i64,
    /// The benchmark's own buffers.
    pub buffers: i64,
    /// Held after the measurement that was not before it (NCCL's lazily
    /// made resources).
    pub collective: i64,
}

/// What the outputs need of a run, as the plan resolved it
/// (`bench::engine::plan::Plan::layout`): the benchmark, its options, its
/// largest size and OSU's table layout with the one-sided choice made. The
/// outputs take this value, never the plan.
pub struct RunLayout<'a> {
    pub spec: &'static crate::spec::BenchSpec,
    pub opts: &'a crate::options::Options,
    pub max_size: usize,
    /// The collective the benchmark times, if any (nccl-tests' table).
    pub collective: Option<crate::spec::CollectiveCall>,
    pub table: osu::TableLayout,
    /// nccl-tests' largest size where the GPUs' memory lowered it (the
    /// preamble shows the one asked for, then says so).
    pub lowered_max_bytes: Option<u64>,
}

/// The sink `--format` puts on stdout for the run laid out as `run`, its
/// preamble (title and header lines) written; `ctx` names the run's rows,
/// and `devices` are every rank's GPU for nccl-tests' table.
pub(crate) fn stdout_sink(
    run: &RunLayout,
    ctx: RunContext,
    devices: Vec<nccl_tests::Device>,
) -> io::Result<Box<dyn Sink>> {
    use crate::options::Format;
    let (spec, opts) = (run.spec, run.opts);
    match opts.format {
        Format::Json => {
            let title = osu::title_line(spec, opts.accel, opts.backend);
            let title = title.trim_start_matches("# ").to_string();
            let mut lines = json_lines::JsonLines::new(io::stdout(), ctx, title, opts.in_place);
            lines.preamble()?;
            Ok(Box::new(lines))
        }
        Format::NcclTests => {
            // The options refuse a benchmark nccl-tests has no program for.
            // The version line names the NCCL the run loaded (it is loaded
            // by now: the transport is NCCL's).
            let library = crate::gpu::nccl_lib::load().ok().map(|lib| lib.version_code());
            let table = nccl_table::NcclTestsTable::new(
                io::stdout(),
                spec,
                run.collective,
                opts,
                run.max_size,
                ctx.np,
                devices,
            );
            let table = table.map(|t| t.with_library(library).with_lowered_max(run.lowered_max_bytes));
            let mut table =
                table.ok_or_else(|| io::Error::other(format!("nccl-tests has no table for {}", spec.name)))?;
            table.preamble()?;
            Ok(Box::new(table))
        }
        Format::Osu => {
            let mut table = osu::OsuTable::new(io::stdout(), spec, run.table.clone());
            table.preamble()?;
            Ok(Box::new(table))
        }
        Format::Csv => Ok(Box::new(csv::CsvSink::new(StdoutRows, ctx)?)),
    }
}

/// Rows on stdout (`--format csv`): each written whole and flushed, so
/// whatever reads the pipe has every finished row at once.
struct StdoutRows;

impl safe_file::RowSink for StdoutRows {
    fn append_rows(&mut self, rows: &[u8]) -> io::Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(rows)?;
        out.flush()
    }
}
