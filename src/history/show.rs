//! `history show`: the series (one key and metric: how many runs, from
//! when to when) and the runs a history holds, as text or JSON. The text
//! escapes what a terminal would act on (`diag::printable`) and pads
//! columns by hand, up to [`MAX_PAD`].

use std::fmt::Write as _;

use rusqlite::{params, Connection};
use serde::Serialize;

use super::check::date_text;
use super::key::SeriesKey;
use crate::diag::printable;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SeriesRow {
    #[serde(flatten)]
    pub key: SeriesKey,
    pub metric: String,
    pub runs: u64,
    pub first_utc: String,
    pub last_utc: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub started_utc: String,
    pub label: String,
    #[serde(flatten)]
    pub key: SeriesKey,
    pub hosts: String,
    pub status: String,
    pub sizes: u64,
    pub source: String,
    pub added_utc: String,
}

/// Which runs: all, or one benchmark's, or one system's.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub benchmark: Option<String>,
    pub system: Option<String>,
}

impl Filter {
    /// The WHERE clause on `runs`, with `?1` the benchmark and `?2` the
    /// system (NULL matches all).
    pub(crate) const SQL: &'static str = "(?1 IS NULL OR runs.benchmark = ?1) AND (?2 IS NULL OR runs.system = ?2)";
}

const KEY_COLUMNS: &str =
    "runs.system, runs.benchmark, runs.backend, runs.memory, runs.datatype, runs.np, runs.placement, runs.mpi_library, runs.options";

pub fn series(c: &Connection, f: &Filter) -> rusqlite::Result<Vec<SeriesRow>> {
    let sql = format!(
        "SELECT {KEY_COLUMNS}, points.metric, count(DISTINCT runs.id), min(runs.started_utc), max(runs.started_utc) \
         FROM runs JOIN points ON points.run_id = runs.id WHERE {} \
         GROUP BY runs.series_key, points.metric ORDER BY runs.benchmark, runs.system, runs.datatype, runs.np, \
         runs.series_key, points.metric",
        Filter::SQL
    );
    let mut st = c.prepare(&sql)?;
    let rows = st.query_map(params![f.benchmark, f.system], |r| {
        Ok(SeriesRow {
            key: SeriesKey::from_row(r, 0)?,
            metric: r.get(9)?,
            runs: r.get::<_, i64>(10)?.max(0) as u64,
            first_utc: r.get(11)?,
            last_utc: r.get(12)?,
        })
    })?;
    rows.collect()
}

pub fn runs(c: &Connection, f: &Filter) -> rusqlite::Result<Vec<RunRow>> {
    let sql = format!(
        "SELECT runs.id, runs.started_utc, runs.label, {KEY_COLUMNS}, runs.hosts, runs.status, \
         (SELECT count(DISTINCT size_bytes) FROM points WHERE points.run_id = runs.id), runs.source, runs.added_utc \
         FROM runs WHERE {} ORDER BY runs.started_utc, runs.id",
        Filter::SQL
    );
    let mut st = c.prepare(&sql)?;
    let rows = st.query_map(params![f.benchmark, f.system], |r| {
        Ok(RunRow {
            id: r.get(0)?,
            started_utc: r.get(1)?,
            label: r.get(2)?,
            key: SeriesKey::from_row(r, 3)?,
            hosts: r.get(12)?,
            status: r.get(13)?,
            sizes: r.get::<_, i64>(14)?.max(0) as u64,
            source: r.get(15)?,
            added_utc: r.get(16)?,
        })
    })?;
    rows.collect()
}

/// The most a column of `show` is padded to: a longer cell (the hosts of
/// a large job, a long option value) is shown whole and pushes the rest
/// of its line right.
pub(crate) const MAX_PAD: usize = 64;

/// Rows as columns (see [`MAX_PAD`]), every cell escaped as untrusted
/// text (names from results files and records), each line indented.
fn columns<const N: usize>(rows: Vec<[String; N]>) -> String {
    let rows: Vec<[String; N]> = rows.into_iter().map(|r| r.map(|c| printable(&c).into_owned())).collect();
    let mut out = String::new();
    for line in crate::text::capped_columns(&rows, MAX_PAD) {
        let _ = writeln!(out, "  {line}");
    }
    out
}

pub fn text(db: &str, version: i64, series: &[SeriesRow], runs: &[RunRow]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "history {} (schema {version}): {} run{} in {} series",
        printable(db),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        series.len()
    );
    if !series.is_empty() {
        let _ = writeln!(o, "\nSeries:");
        let mut rows = vec![[
            "benchmark",
            "datatype",
            "np",
            "system",
            "backend",
            "memory",
            "MPI",
            "placement",
            "metric",
            "runs",
            "first",
            "last",
            "options",
        ]
        .map(String::from)];
        for s in series {
            let k = &s.key;
            rows.push([
                k.benchmark.clone(),
                k.datatype.clone(),
                k.np.to_string(),
                k.system.clone(),
                k.backend.clone(),
                k.memory.clone(),
                k.mpi_library.clone(),
                k.placement.clone(),
                s.metric.clone(),
                s.runs.to_string(),
                date_text(&s.first_utc),
                date_text(&s.last_utc),
                k.options.clone(),
            ]);
        }
        o.push_str(&columns(rows));
    }
    if !runs.is_empty() {
        let _ = writeln!(o, "\nRuns:");
        let mut rows =
            vec![["id", "started", "benchmark", "datatype", "np", "system", "status", "sizes", "label"]
                .map(String::from)];
        for r in runs {
            rows.push([
                r.id.to_string(),
                date_text(&r.started_utc),
                r.key.benchmark.clone(),
                r.key.datatype.clone(),
                r.key.np.to_string(),
                r.key.system.clone(),
                r.status.clone(),
                r.sizes.to_string(),
                r.label.clone(),
            ]);
        }
        o.push_str(&columns(rows));
    }
    o
}
