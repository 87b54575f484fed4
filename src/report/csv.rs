//! The results CSV: one header row with units in the column names, then one
//! row per (datatype, size[, window]) written and flushed as soon as that
//! size finishes, so a killed job keeps every finished row. One schema for
//! every benchmark; a column that does not apply is left empty.

use std::io;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::safe_file::RowSink;
use super::{Row, RunContext, Sink};
use crate::datatype::Datatype;

/// Column names, in order: the fields of [`CsvRow`]. Documented in
/// docs/output.md.
pub const COLUMNS: &[&str] = &[
    "benchmark",
    "backend",
    "datatype",
    "size_bytes",
    "elements",
    "window",
    "np",
    "pairs",
    "iterations",
    "warmup",
    "avg_lat_us",
    "min_lat_us",
    "max_lat_us",
    "bw_MBps",
    "msg_rate_per_s",
    "algbw_GBps",
    "busbw_GBps",
    "fastest_rank",
    "slowest_rank",
    "validation",
    "iter_min_us",
    "iter_mean_us",
    "iter_p50_us",
    "iter_p90_us",
    "iter_p99_us",
    "iter_max_us",
    "iter_stddev_us",
    "osu_tails",
    "finished_utc",
    "placement",
    "wrong_elements",
    "ci95_rel_pct",
    "ci95_low_us",
    "ci95_high_us",
    "median_ci95_low_us",
    "median_ci95_high_us",
    "p10_us",
    "p90_us",
    "iterations_run",
    "noise",
    "iterations_ceiling",
    "stop_reason",
    "overall_us",
    "compute_us",
    "pure_comm_us",
    "overlap_pct",
    "path",
    "peak_MBps",
    "efficiency_pct",
    "iter_p999_us",
    "reduction",
    "root",
    "drift_holds",
];

/// One row of the results CSV, as the writer serialises it and every
/// reader (the suite's summary, `commbench compare`, the plots) reads it
/// back. Field names are the column names (`COLUMNS`), in order; a column
/// that does not apply is None and written empty. Numbers are written with
/// Rust's `{}` (the shortest text that reads back to the same value), not
/// the csv crate's float format.
///
/// Reading: `benchmark` and `size_bytes` must be there; every other column
/// may be missing (CSV of older versions, a row cut short by a killed
/// job): Option columns then read as None, the others as empty or 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CsvRow {
    pub benchmark: String,
    #[serde(default, deserialize_with = "or_default")]
    pub backend: String,
    #[serde(default)]
    pub datatype: Option<Datatype>,
    pub size_bytes: usize,
    #[serde(default)]
    pub elements: Option<usize>,
    #[serde(default)]
    pub window: Option<usize>,
    #[serde(default, deserialize_with = "or_default")]
    pub np: usize,
    #[serde(default)]
    pub pairs: Option<usize>,
    #[serde(default, deserialize_with = "or_default")]
    pub iterations: usize,
    #[serde(default, deserialize_with = "or_default")]
    pub warmup: usize,
    #[serde(default, serialize_with = "float")]
    pub avg_lat_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub min_lat_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub max_lat_us: Option<f64>,
    #[serde(rename = "bw_MBps", default, serialize_with = "float")]
    pub bw_mbps: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub msg_rate_per_s: Option<f64>,
    #[serde(rename = "algbw_GBps", default, serialize_with = "float")]
    pub algbw_gbps: Option<f64>,
    #[serde(rename = "busbw_GBps", default, serialize_with = "float")]
    pub busbw_gbps: Option<f64>,
    #[serde(default)]
    pub fastest_rank: Option<usize>,
    #[serde(default)]
    pub slowest_rank: Option<usize>,
    /// `Pass` (true) or `Fail` (false); None without -c.
    #[serde(default, with = "pass_fail")]
    pub validation: Option<bool>,
    #[serde(default, serialize_with = "float")]
    pub iter_min_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub iter_mean_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub iter_p50_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub iter_p90_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub iter_p99_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub iter_max_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub iter_stddev_us: Option<f64>,
    /// `-z` values as (percentile, value), written `P50=0.25;P99=1.5`.
    #[serde(default, with = "tails")]
    pub osu_tails: Vec<(u32, f64)>,
    #[serde(default, deserialize_with = "or_default")]
    pub finished_utc: String,
    /// `--format nccl-tests`' two passes: `out-of-place` (false) or
    /// `in-place` (true); empty for a run of one form.
    #[serde(default, with = "placement")]
    pub placement: Option<bool>,
    /// Wrong elements over every rank (nccl-tests' `#wrong`), where counted.
    #[serde(default)]
    pub wrong_elements: Option<u64>,
    /// Half-width of the 95% confidence interval of the reported value
    /// (OSU's average, the number on stdout), in percent of it. Computed
    /// for the mean per-iteration time; a bandwidth or message rate is a
    /// constant over that mean, so its relative half-width is the same to
    /// first order. `commbench compare` reads this column.
    #[serde(default, serialize_with = "float")]
    pub ci95_rel_pct: Option<f64>,
    /// 95% confidence interval of the mean per-iteration time (the
    /// `iter_mean_us` series), microseconds.
    #[serde(default, serialize_with = "float")]
    pub ci95_low_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub ci95_high_us: Option<f64>,
    /// 95% confidence interval of the median per-iteration time (order
    /// statistics; empty below six iterations), microseconds.
    #[serde(default, serialize_with = "float")]
    pub median_ci95_low_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub median_ci95_high_us: Option<f64>,
    /// Nearest-rank 10th and 90th percentiles of the per-iteration time.
    #[serde(default, serialize_with = "float")]
    pub p10_us: Option<f64>,
    #[serde(default, serialize_with = "float")]
    pub p90_us: Option<f64>,
    /// Timed iterations actually run for this row.
    #[serde(default)]
    pub iterations_run: Option<usize>,
    /// Noise verdict: `ok`, or the failed tests joined by `;` (`drift`,
    /// `bimodal`, `noisy`, `outliers`; see stats::noise).
    #[serde(default)]
    pub noise: Option<String>,
    /// Under `--precision`: the fixed count (OSU's, or `-i`) the size
    /// could have run, and why it stopped (`precision`, `ceiling`,
    /// `time_limit`). Empty without the option.
    #[serde(default)]
    pub iterations_ceiling: Option<usize>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Non-blocking collectives (OSU's overlap method): the time of one
    /// iteration of start + dummy computation + wait, averaged over ranks
    /// (what stdout's Overall column shows and `avg_lat_us` repeats).
    #[serde(default, serialize_with = "float")]
    pub overall_us: Option<f64>,
    /// The dummy computation in that iteration, the `-t` tests taken out.
    #[serde(default, serialize_with = "float")]
    pub compute_us: Option<f64>,
    /// Start and wait with nothing in between (stdout's Pure Comm.).
    #[serde(default, serialize_with = "float")]
    pub pure_comm_us: Option<f64>,
    /// The share of the pure communication time hidden behind the
    /// computation, percent: max(0, 100 - 100 (overall - compute) / pure).
    #[serde(default, serialize_with = "float")]
    pub overlap_pct: Option<f64>,
    /// The path whose peak bounds the row's bandwidth (`shared memory on
    /// node01`, `h1 eth1 -> h2 eth2`; crate::peak), for rows that report
    /// a bandwidth (MB/s, or a collective's bus bandwidth).
    #[serde(default)]
    pub path: Option<String>,
    /// That path's peak, 10^6 bytes/s; empty where it is unknown (the run
    /// record says why).
    #[serde(rename = "peak_MBps", default, serialize_with = "float")]
    pub peak_mbps: Option<f64>,
    /// The row's bandwidth (bw_MBps, or busbw_GBps x 1000) in percent of
    /// the peak.
    #[serde(default, serialize_with = "float")]
    pub efficiency_pct: Option<f64>,
    /// The 99.9th percentile of the `iter_` series (after the older
    /// columns, so their positions hold).
    #[serde(default, serialize_with = "float")]
    pub iter_p999_us: Option<f64>,
    /// The row's operation (`sum`, `mulsum` ...) where the run swept
    /// several (nccl-tests' `-o all`); empty otherwise (the run record
    /// keeps a single one).
    #[serde(default, deserialize_with = "or_default")]
    pub reduction: String,
    /// The row's root rank where the run swept every rank as the root
    /// (nccl-tests' `-r -1`).
    #[serde(default)]
    pub root: Option<u64>,
    /// Under `--precision`: how many times the drift test held the size
    /// back after the interval was met (stats::precision); 0 where it
    /// never did. Empty without the option. Appended after the older
    /// columns, so that each keeps its position.
    #[serde(default)]
    pub drift_holds: Option<u64>,
}

impl CsvRow {
    /// The CSV row of one measured `row` of the run `ctx`.
    pub fn new(ctx: &RunContext, r: &Row) -> CsvRow {
        let it = r.iter.as_ref();
        let sp = r.iter_spread.as_ref();
        let path = ctx.path.as_deref().filter(|_| ctx.bandwidth_mbps(r).is_some());
        CsvRow {
            benchmark: ctx.benchmark.to_string(),
            backend: ctx.backend.to_string(),
            datatype: r.datatype,
            size_bytes: r.size,
            elements: r.datatype.map(|d| r.size / d.size()),
            window: r.window,
            np: ctx.np,
            pairs: ctx.pairs,
            iterations: r.iterations,
            warmup: r.warmup,
            avg_lat_us: r.avg_lat_us,
            min_lat_us: r.spread.map(|s| s.fastest.1),
            max_lat_us: r.spread.map(|s| s.slowest.1),
            bw_mbps: r.bw_mbps,
            msg_rate_per_s: r.msg_rate,
            algbw_gbps: r.algbw_busbw.map(|b| b.0),
            busbw_gbps: r.algbw_busbw.map(|b| b.1),
            fastest_rank: r.spread.map(|s| s.fastest.0),
            slowest_rank: r.spread.map(|s| s.slowest.0),
            validation: r.validation,
            iter_min_us: it.map(|s| s.min_us),
            iter_mean_us: it.map(|s| s.mean_us),
            iter_p50_us: it.map(|s| s.p50_us),
            iter_p90_us: it.map(|s| s.p90_us),
            iter_p99_us: it.map(|s| s.p99_us),
            iter_max_us: it.map(|s| s.max_us),
            iter_stddev_us: it.map(|s| s.stddev_us),
            osu_tails: r.tails.clone(),
            finished_utc: r.finished_utc.clone(),
            placement: r.in_place,
            wrong_elements: r.wrong_elements,
            ci95_rel_pct: sp.and_then(|s| s.ci95_rel_pct()),
            ci95_low_us: sp.and_then(|s| s.mean).map(|i| i.low),
            ci95_high_us: sp.and_then(|s| s.mean).map(|i| i.high),
            median_ci95_low_us: sp.and_then(|s| s.median).map(|i| i.low),
            median_ci95_high_us: sp.and_then(|s| s.median).map(|i| i.high),
            p10_us: sp.map(|s| s.p10),
            p90_us: sp.map(|s| s.p90),
            iterations_run: r.iterations_run,
            noise: sp.map(|s| s.noise.cell()),
            iterations_ceiling: r.precision.map(|p| p.ceiling),
            stop_reason: r.precision.map(|p| p.reason.as_str().to_string()),
            overall_us: r.overlap.map(|o| o.overall_us),
            compute_us: r.overlap.map(|o| o.compute_us),
            pure_comm_us: r.overlap.map(|o| o.pure_us),
            overlap_pct: r.overlap.map(|o| o.overlap_pct),
            path: path.map(|p| p.label.clone()),
            peak_mbps: path.and_then(|p| p.peak_mbps),
            efficiency_pct: ctx.efficiency_pct(r),
            iter_p999_us: it.map(|s| s.p999_us),
            reduction: r.reduction.map(|op| op.name().to_string()).unwrap_or_default(),
            root: r.root.map(|root| root as u64),
            drift_holds: r.precision.map(|p| p.drift_holds),
        }
    }
}

/// An f64 as `{}` writes it: the shortest text that reads back to the same
/// value (`3`, `0.30000000000000004`, `0.0000001`); the csv crate's own
/// float format would write `3.0` and `1e-7`.
fn float<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.collect_str(x),
        None => s.serialize_none(),
    }
}

/// A column the writer always fills, read as its empty value (`""`, 0)
/// where a row leaves it empty or ends before it.
fn or_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The validation column: `Pass`, `Fail`, or empty.
mod pass_fail {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &Option<bool>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(true) => s.serialize_str("Pass"),
            Some(false) => s.serialize_str("Fail"),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        match Option::<String>::deserialize(d)?.as_deref() {
            None | Some("") => Ok(None),
            Some("Pass") => Ok(Some(true)),
            Some("Fail") => Ok(Some(false)),
            Some(other) => Err(serde::de::Error::custom(format!("'{other}' is neither Pass nor Fail"))),
        }
    }
}

/// The placement column: `in-place`, `out-of-place`, or empty.
mod placement {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &Option<bool>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(true) => s.serialize_str("in-place"),
            Some(false) => s.serialize_str("out-of-place"),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        match Option::<String>::deserialize(d)?.as_deref() {
            None | Some("") => Ok(None),
            Some("in-place") => Ok(Some(true)),
            Some("out-of-place") => Ok(Some(false)),
            Some(other) => Err(serde::de::Error::custom(format!("'{other}' is neither in-place nor out-of-place"))),
        }
    }
}

/// The osu_tails column: `P50=0.25;P99=1.5` (values as `{}` writes them).
mod tails {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &[(u32, f64)], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.iter().map(|(p, v)| format!("P{p}={v}")).collect::<Vec<_>>().join(";"))
    }

    /// Entries that do not read as `P<percentile>=<value>` (the end of a
    /// row cut short) are left out, as the readers always did.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u32, f64)>, D::Error> {
        let text = Option::<String>::deserialize(d)?.unwrap_or_default();
        Ok(text
            .split(';')
            .filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.trim().strip_prefix('P')?.parse().ok()?, v.trim().parse().ok()?))
            })
            .collect())
    }
}

/// Writes rows to a [`RowSink`] (a [`RowFile`](super::safe_file::RowFile)
/// in practice): each row in one write, whole or not at all.
pub(crate) struct CsvSink<W: RowSink> {
    out: W,
    ctx: RunContext,
    rows: usize,
}

fn to_io(e: csv::Error) -> io::Error {
    io::Error::other(e)
}

/// `fill`'s records as CSV bytes.
fn csv_bytes(fill: impl FnOnce(&mut csv::Writer<Vec<u8>>) -> csv::Result<()>) -> io::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    fill(&mut w).map_err(to_io)?;
    w.into_inner().map_err(|e| e.into_error())
}

impl<W: RowSink> CsvSink<W> {
    pub fn new(mut out: W, ctx: RunContext) -> io::Result<CsvSink<W>> {
        // The header goes out at once, so a run that ends before its first
        // row still leaves a CSV that says what it would hold; rows then
        // come without a second header.
        out.append_rows(&csv_bytes(|w| w.write_record(COLUMNS))?)?;
        Ok(CsvSink { out, ctx, rows: 0 })
    }

    #[cfg(test)]
    pub fn rows_written(&self) -> usize {
        self.rows
    }

    #[cfg(test)]
    pub fn into_inner(self) -> io::Result<W> {
        Ok(self.out)
    }
}

impl<W: RowSink> Sink for CsvSink<W> {
    fn point(&mut self, rows: &[Row]) -> io::Result<()> {
        rows.iter().try_for_each(|r| self.write_row(r))
    }
}

impl<W: RowSink> CsvSink<W> {
    /// The error says which rows are missing: this one and those after it.
    fn write_row(&mut self, row: &Row) -> io::Result<()> {
        let bytes = csv_bytes(|w| w.serialize(CsvRow::new(&self.ctx, row)))?;
        self.out.append_rows(&bytes).map_err(|e| {
            let what = match row.datatype {
                Some(dt) => format!("{} size {}", dt.mpi_name(), row.size),
                None => format!("size {}", row.size),
            };
            io::Error::new(e.kind(), format!("the rows from {what} on are missing ({e})"))
        })?;
        self.rows += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::noise::NoiseThresholds;
    use crate::stats::spread::spread;
    use crate::stats::{RankSpread, Summary};

    /// 40 iterations whose second half is twice as slow: a drifting size
    /// with both intervals.
    fn noisy_secs() -> Vec<f64> {
        (0..40).map(|i| if i < 20 { 1e-6 + i as f64 * 1e-9 } else { 2e-6 + i as f64 * 1e-9 }).collect()
    }

    /// The row as the writer made it before `CsvRow` (cell by cell, `{}`
    /// for floats): the typed row must write the same bytes.
    fn legacy_record(ctx: &RunContext, r: &Row) -> Vec<String> {
        fn num(v: Option<f64>) -> String {
            v.map(|x| format!("{x}")).unwrap_or_default()
        }
        let it = r.iter.as_ref();
        let sp = r.iter_spread.as_ref();
        let tails = r.tails.iter().map(|(p, v)| format!("P{p}={v}")).collect::<Vec<_>>().join(";");
        vec![
            ctx.benchmark.to_string(),
            ctx.backend.to_string(),
            r.datatype.map(|d| d.mpi_name().to_string()).unwrap_or_default(),
            r.size.to_string(),
            r.datatype.map(|d| (r.size / d.size()).to_string()).unwrap_or_default(),
            r.window.map(|w| w.to_string()).unwrap_or_default(),
            ctx.np.to_string(),
            ctx.pairs.map(|p| p.to_string()).unwrap_or_default(),
            r.iterations.to_string(),
            r.warmup.to_string(),
            num(r.avg_lat_us),
            num(r.spread.map(|s| s.fastest.1)),
            num(r.spread.map(|s| s.slowest.1)),
            num(r.bw_mbps),
            num(r.msg_rate),
            num(r.algbw_busbw.map(|b| b.0)),
            num(r.algbw_busbw.map(|b| b.1)),
            r.spread.map(|s| s.fastest.0.to_string()).unwrap_or_default(),
            r.spread.map(|s| s.slowest.0.to_string()).unwrap_or_default(),
            match r.validation {
                Some(true) => "Pass".into(),
                Some(false) => "Fail".into(),
                None => String::new(),
            },
            num(it.map(|s| s.min_us)),
            num(it.map(|s| s.mean_us)),
            num(it.map(|s| s.p50_us)),
            num(it.map(|s| s.p90_us)),
            num(it.map(|s| s.p99_us)),
            num(it.map(|s| s.max_us)),
            num(it.map(|s| s.stddev_us)),
            tails,
            r.finished_utc.clone(),
            match r.in_place {
                Some(true) => "in-place".into(),
                Some(false) => "out-of-place".into(),
                None => String::new(),
            },
            r.wrong_elements.map(|w| w.to_string()).unwrap_or_default(),
            num(sp.and_then(|s| s.ci95_rel_pct())),
            num(sp.and_then(|s| s.mean).map(|i| i.low)),
            num(sp.and_then(|s| s.mean).map(|i| i.high)),
            num(sp.and_then(|s| s.median).map(|i| i.low)),
            num(sp.and_then(|s| s.median).map(|i| i.high)),
            num(sp.map(|s| s.p10)),
            num(sp.map(|s| s.p90)),
            r.iterations_run.map(|n| n.to_string()).unwrap_or_default(),
            sp.map(|s| s.noise.cell()).unwrap_or_default(),
            r.precision.map(|p| p.ceiling.to_string()).unwrap_or_default(),
            r.precision.map(|p| p.reason.as_str().to_string()).unwrap_or_default(),
            num(r.overlap.map(|o| o.overall_us)),
            num(r.overlap.map(|o| o.compute_us)),
            num(r.overlap.map(|o| o.pure_us)),
            num(r.overlap.map(|o| o.overlap_pct)),
            ctx.path.as_ref().filter(|_| ctx.bandwidth_mbps(r).is_some()).map(|p| p.label.clone()).unwrap_or_default(),
            num(ctx.path.as_ref().filter(|_| ctx.bandwidth_mbps(r).is_some()).and_then(|p| p.peak_mbps)),
            num(ctx.efficiency_pct(r)),
            num(it.map(|s| s.p999_us)),
            r.reduction.map(|op| op.name().to_string()).unwrap_or_default(),
            r.root.map(|root| root.to_string()).unwrap_or_default(),
            r.precision.map(|p| p.drift_holds.to_string()).unwrap_or_default(),
        ]
    }

    /// Rows that exercise every column and the float texts where the csv
    /// crate's own format differs from `{}` (3 vs 3.0, 1e-7, 1e21, NaN).
    fn varied_rows() -> Vec<Row> {
        vec![
            Row {
                datatype: Some(Datatype::Float),
                size: 4096,
                window: Some(64),
                iterations: 1000,
                warmup: 10,
                avg_lat_us: Some(0.1 + 0.2),
                bw_mbps: Some(3.0),
                msg_rate: Some(1e21),
                spread: Some(RankSpread { fastest: (3, 1e-7), slowest: (0, 123456789.125), first: 123456789.125 }),
                algbw_busbw: Some((f64::INFINITY, -0.0)),
                validation: Some(false),
                overlap: None,
                tails: vec![(50, 0.25), (99, 1e-5), (100, 2.0)],
                iter: Summary::from_secs(&[1e-6, 3e-6, 2.5e-6], 1.0),
                iterations_run: Some(3),
                iter_spread: spread(&[1e-6, 3e-6, 2.5e-6], 1e6, &NoiseThresholds::default()),
                precision: Some(crate::report::PrecisionStop {
                    ceiling: 1000,
                    reason: crate::stats::precision::StopReason::Precision,
                    drift_holds: 2,
                }),
                finished_utc: "2026-11-30T00:00:00.000Z".into(),
                reduction: Some(crate::datatype::Reduction::MulSum),
                root: Some(3),
                issue_us: None,
                time_us: None,
                per_iteration: None,
                wrong_elements: Some(7),
                in_place: Some(true),
            },
            Row {
                size: 16,
                iterations_run: Some(40),
                iter_spread: spread(&noisy_secs(), 1e6, &NoiseThresholds::default()),
                ..Row::default()
            },
            Row { size: 8, in_place: Some(false), wrong_elements: Some(0), ..Row::default() },
            Row { size: 0, avg_lat_us: Some(f64::NAN), ..Row::default() },
            Row { datatype: Some(Datatype::Char), size: 1, validation: Some(true), ..Row::default() },
        ]
    }

    fn contexts() -> [RunContext; 2] {
        [
            RunContext { benchmark: "osu_mbw_mr", backend: "mpi", np: 4, pairs: Some(2), path: None },
            RunContext { benchmark: "osu_barrier", backend: "mpi", np: 3, pairs: None, path: None },
        ]
    }

    fn written(ctx: &RunContext, rows: &[Row]) -> String {
        let mut s = CsvSink::new(Vec::new(), ctx.clone()).unwrap();
        for r in rows {
            s.row(r).unwrap();
        }
        String::from_utf8(s.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn typed_rows_write_the_same_bytes_as_before() {
        for ctx in contexts() {
            let rows = varied_rows();
            let mut legacy = csv::Writer::from_writer(Vec::new());
            legacy.write_record(COLUMNS).unwrap();
            for r in &rows {
                legacy.write_record(legacy_record(&ctx, r)).unwrap();
            }
            let legacy = String::from_utf8(legacy.into_inner().unwrap()).unwrap();
            assert_eq!(written(&ctx, &rows), legacy);
        }
    }

    /// The column list is the struct's fields, in order.
    #[test]
    fn columns_are_the_fields() {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(CsvRow::new(&contexts()[0], &varied_rows()[0])).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), COLUMNS.join(","));
    }

    /// What the writer writes reads back as the same rows.
    #[test]
    fn round_trip() {
        for ctx in contexts() {
            let rows = varied_rows();
            let text = written(&ctx, &rows);
            let back: Vec<CsvRow> =
                csv::Reader::from_reader(text.as_bytes()).deserialize().map(Result::unwrap).collect();
            let want: Vec<CsvRow> = rows.iter().map(|r| CsvRow::new(&ctx, r)).collect();
            assert_eq!(back.len(), want.len());
            for (b, w) in back.iter().zip(&want) {
                if w.avg_lat_us.is_some_and(f64::is_nan) {
                    assert!(b.avg_lat_us.is_some_and(f64::is_nan));
                    assert_eq!(CsvRow { avg_lat_us: None, ..b.clone() }, CsvRow { avg_lat_us: None, ..w.clone() });
                } else {
                    assert_eq!(b, w);
                }
            }
        }
    }

    /// CSV of an older version (fewer columns, another order) and a row cut
    /// short by a kill read with what they have.
    #[test]
    fn older_and_short_rows() {
        let text = "benchmark,backend,datatype,size_bytes,bw_MBps,avg_lat_us\n\
                    osu_latency,mpi,MPI_CHAR,1,,0.5\n";
        let r: CsvRow = csv::Reader::from_reader(text.as_bytes()).deserialize().next().unwrap().unwrap();
        assert_eq!((r.benchmark.as_str(), r.datatype, r.size_bytes), ("osu_latency", Some(Datatype::Char), 1));
        assert_eq!((r.avg_lat_us, r.bw_mbps, r.np, r.iterations), (Some(0.5), None, 0, 0));
        assert_eq!((r.osu_tails.len(), r.validation, r.finished_utc.as_str()), (0, None, ""));

        let text = format!("{}\nosu_bw,mpi,MPI_INT,64,16,64,2,1,100\nosu_bw,mpi\n", COLUMNS.join(","));
        let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
        let mut rows = rdr.deserialize::<CsvRow>();
        let r = rows.next().unwrap().unwrap();
        assert_eq!((r.window, r.pairs, r.iterations, r.warmup, r.avg_lat_us), (Some(64), Some(1), 100, 0, None));
        assert!(rows.next().unwrap().is_err(), "a row without a size is no result");
    }

    #[test]
    fn validation_and_tails_words() {
        let read = |validation: &str, tails: &str| {
            let text = format!("benchmark,size_bytes,validation,osu_tails\nb,8,{validation},{tails}\n");
            csv::Reader::from_reader(text.as_bytes()).deserialize::<CsvRow>().next().unwrap()
        };
        let r = read("Pass", "P50=0.25;P99=1.5").unwrap();
        assert_eq!((r.validation, r.osu_tails), (Some(true), vec![(50, 0.25), (99, 1.5)]));
        assert_eq!(read("Fail", "").unwrap().validation, Some(false));
        assert_eq!(read("", "P50=0.25;P9").unwrap().osu_tails, vec![(50, 0.25)], "a cut-off entry is left out");
        let e = read("pass", "").unwrap_err().to_string();
        assert!(e.contains("'pass' is neither Pass nor Fail"), "{e}");
    }

    #[test]
    fn header_and_row() {
        let ctx = RunContext { benchmark: "osu_latency", backend: "mpi", np: 2, pairs: Some(1), path: None };
        let mut s = CsvSink::new(Vec::new(), ctx).unwrap();
        let row = Row {
            datatype: Some(Datatype::Int),
            size: 64,
            iterations: 100,
            warmup: 10,
            avg_lat_us: Some(0.1 + 0.2),
            validation: Some(true),
            tails: vec![(50, 0.25), (99, 1.5)],
            iter: Summary::from_secs(&[1e-6, 3e-6], 1.0),
            finished_utc: "2026-11-30T00:00:00.000Z".into(),
            ..Row::default()
        };
        s.row(&row).unwrap();
        assert_eq!(s.rows_written(), 1);
        let text = String::from_utf8(s.into_inner().unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        let fields: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(fields.len(), COLUMNS.len());
        let col = |name: &str| fields[COLUMNS.iter().position(|c| *c == name).unwrap()];
        assert_eq!(col("datatype"), "MPI_INT");
        assert_eq!(col("elements"), "16");
        assert_eq!(col("window"), "");
        // full precision: reads back to the identical value
        assert_eq!(col("avg_lat_us").parse::<f64>().unwrap(), 0.1 + 0.2);
        assert_eq!(col("validation"), "Pass");
        assert_eq!(col("osu_tails"), "P50=0.25;P99=1.5");
        assert_eq!(col("iter_max_us").parse::<f64>().unwrap(), 3.0);
        // Two samples: the 99.9th percentile is the larger, as p99's.
        assert_eq!(col("iter_p999_us").parse::<f64>().unwrap(), 3.0);
        assert_eq!(&COLUMNS[COLUMNS.len() - 4..], ["iter_p999_us", "reduction", "root", "drift_holds"]);
        assert_eq!((col("pairs"), col("min_lat_us"), col("slowest_rank")), ("1", "", ""));
    }

    /// The non-blocking figures follow the spread columns as one block,
    /// hold the row's overlap times at full precision, and stay empty for
    /// a row without them.
    #[test]
    fn overlap_columns() {
        let names = ["overall_us", "compute_us", "pure_comm_us", "overlap_pct"];
        let first = COLUMNS.iter().position(|c| *c == "overall_us").unwrap();
        assert_eq!(COLUMNS[first - 1], "stop_reason");
        assert_eq!(COLUMNS[first..first + 4], names);
        let ctx = RunContext { benchmark: "osu_igatherv", backend: "mpi", np: 3, pairs: None, path: None };
        let o = crate::report::OverlapTimes {
            overall_us: 10.5,
            compute_us: 0.1 + 0.2,
            pure_us: 4.25,
            overlap_pct: 12.125,
            ..Default::default()
        };
        let text =
            written(&ctx, &[Row { size: 8, overlap: Some(o), ..Row::default() }, Row { size: 16, ..Row::default() }]);
        let lines: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
        let got = |line: usize| names.map(|n| lines[line][COLUMNS.iter().position(|c| *c == n).unwrap()]);
        assert_eq!(got(0).map(|v| v.parse::<f64>().unwrap()), [10.5, 0.1 + 0.2, 4.25, 12.125]);
        assert_eq!(got(1), ["", "", "", ""]);
    }

    /// The spread columns come after the older ones (older readers keep
    /// their positions) and say what the row's spread bundle says.
    #[test]
    fn spread_columns() {
        let first = COLUMNS.iter().position(|c| *c == "ci95_rel_pct").unwrap();
        assert_eq!(COLUMNS[first - 1], "wrong_elements");
        assert_eq!(
            COLUMNS[first..first + 9],
            [
                "ci95_rel_pct",
                "ci95_low_us",
                "ci95_high_us",
                "median_ci95_low_us",
                "median_ci95_high_us",
                "p10_us",
                "p90_us",
                "iterations_run",
                "noise"
            ]
        );
        let ctx = RunContext { benchmark: "osu_latency", backend: "mpi", np: 2, pairs: Some(1), path: None };
        let sp = spread(&noisy_secs(), 1e6, &NoiseThresholds::default()).unwrap();
        let row = Row { size: 8, iterations_run: Some(40), iter_spread: Some(sp.clone()), ..Row::default() };
        let text = written(&ctx, std::slice::from_ref(&row));
        let fields: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        let col = |name: &str| fields[COLUMNS.iter().position(|c| *c == name).unwrap()];
        let num = |name: &str| col(name).parse::<f64>().unwrap();
        let (mean, median) = (sp.mean.unwrap(), sp.median.unwrap());
        assert_eq!((num("ci95_low_us"), num("ci95_high_us")), (mean.low, mean.high));
        assert_eq!((num("median_ci95_low_us"), num("median_ci95_high_us")), (median.low, median.high));
        assert_eq!((num("p10_us"), num("p90_us")), (sp.p10, sp.p90));
        assert!((num("ci95_rel_pct") - mean.half_width() / mean.estimate * 100.0).abs() < 1e-9);
        assert_eq!(col("iterations_run"), "40");
        assert!(col("noise").split(';').any(|f| f == "drift"), "{}", col("noise"));
        // What compare reads is this column.
        assert_eq!(crate::compare::csv_input::SPREAD_COLUMN, "ci95_rel_pct");
        // A row without a spread (nothing timed, a batch) leaves them empty.
        let text = written(&ctx, &[Row { size: 8, ..Row::default() }]);
        let fields: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        assert!(fields[first..first + 9].iter().all(|f| f.is_empty()), "{fields:?}");
    }

    /// `--precision`'s columns: the fixed count, why the size stopped and
    /// how often the drift test held it back; empty for a row it did not
    /// end.
    #[test]
    fn precision_columns() {
        use crate::stats::precision::StopReason;
        let ctx = RunContext { benchmark: "osu_latency", backend: "mpi", np: 2, pairs: Some(1), path: None };
        let stop = |reason, drift_holds| Some(crate::report::PrecisionStop { ceiling: 10000, reason, drift_holds });
        let rows = [
            Row { size: 1, iterations: 1200, precision: stop(StopReason::Precision, 0), ..Row::default() },
            Row { size: 2, iterations: 10000, precision: stop(StopReason::Ceiling, 17), ..Row::default() },
            Row { size: 4, iterations: 300, precision: stop(StopReason::TimeLimit, 1), ..Row::default() },
            Row { size: 8, iterations: 10000, ..Row::default() },
        ];
        let text = written(&ctx, &rows);
        let cells: Vec<(String, String, String)> = text
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                let col = |name: &str| f[COLUMNS.iter().position(|c| *c == name).unwrap()].to_string();
                (col("iterations_ceiling"), col("stop_reason"), col("drift_holds"))
            })
            .collect();
        let want =
            [("10000", "precision", "0"), ("10000", "ceiling", "17"), ("10000", "time_limit", "1"), ("", "", "")];
        assert_eq!(cells, want.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())));
        // And they read back.
        let back: Vec<CsvRow> = csv::Reader::from_reader(text.as_bytes()).deserialize().map(Result::unwrap).collect();
        assert_eq!((back[0].iterations_ceiling, back[0].stop_reason.as_deref()), (Some(10000), Some("precision")));
        assert_eq!((back[3].iterations_ceiling, back[3].stop_reason.as_deref()), (None, None));
        assert_eq!((back[1].drift_holds, back[3].drift_holds), (Some(17), None));
    }

    #[test]
    fn collective_columns() {
        let ctx = RunContext { benchmark: "osu_allreduce", backend: "mpi", np: 4, pairs: None, path: None };
        let mut s = CsvSink::new(Vec::new(), ctx).unwrap();
        let row = Row {
            datatype: Some(Datatype::Char),
            size: 8,
            avg_lat_us: Some(2.0),
            spread: Some(RankSpread { fastest: (3, 1.5), slowest: (1, 2.5), first: 2.0 }),
            algbw_busbw: Some((0.004, 0.006)),
            ..Row::default()
        };
        s.row(&row).unwrap();
        let text = String::from_utf8(s.into_inner().unwrap()).unwrap();
        let fields: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        let col = |name: &str| fields[COLUMNS.iter().position(|c| *c == name).unwrap()];
        assert_eq!(col("pairs"), "");
        assert_eq!((col("min_lat_us"), col("max_lat_us")), ("1.5", "2.5"));
        assert_eq!((col("fastest_rank"), col("slowest_rank")), ("3", "1"));
        assert_eq!((col("algbw_GBps"), col("busbw_GBps")), ("0.004", "0.006"));
    }
}
