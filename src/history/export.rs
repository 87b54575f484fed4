//! `history export`: every stored value with its run's columns, as one
//! flat CSV table (a row per run, size and metric) or as JSON (the runs,
//! each with its points), for dashboards.

use rusqlite::{params, Connection};
use serde::Serialize;

use super::ingest::{metric_from_name, MEDIAN_METRIC};
use super::show::{self, Filter, RunRow};

/// The CSV's columns, in order.
pub(crate) const CSV_COLUMNS: [&str; 20] = [
    "run_id",
    "started_utc",
    "label",
    "system",
    "hosts",
    "benchmark",
    "backend",
    "memory",
    "datatype",
    "np",
    "placement",
    "mpi_library",
    "options",
    "status",
    "source",
    "size_bytes",
    "metric",
    "unit",
    "value",
    "ci95_rel_pct",
];

#[derive(Clone, Debug, Serialize, PartialEq)]
pub(crate) struct PointRow {
    pub size_bytes: u64,
    pub metric: String,
    pub unit: &'static str,
    pub value: f64,
    pub ci95_rel_pct: Option<f64>,
}

#[derive(Serialize)]
struct RunOut<'a> {
    #[serde(flatten)]
    run: &'a RunRow,
    points: Vec<PointRow>,
}

fn points(c: &Connection, run: i64) -> rusqlite::Result<Vec<PointRow>> {
    let mut st = c.prepare_cached(
        "SELECT size_bytes, metric, value, ci95_rel_pct FROM points WHERE run_id = ?1 ORDER BY metric, size_bytes",
    )?;
    let rows = st.query_map(params![run], |r| {
        let metric: String = r.get(1)?;
        Ok(PointRow {
            size_bytes: r.get::<_, i64>(0)?.max(0) as u64,
            unit: metric_from_name(&metric).map_or(if metric == MEDIAN_METRIC { "us" } else { "" }, |m| m.unit()),
            metric,
            value: r.get(2)?,
            ci95_rel_pct: r.get(3)?,
        })
    })?;
    rows.collect()
}

pub fn csv(c: &Connection, f: &Filter) -> Result<String, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let e = |e: csv::Error| e.to_string();
    w.write_record(CSV_COLUMNS).map_err(e)?;
    for r in show::runs(c, f).map_err(|e| e.to_string())? {
        let k = &r.key;
        for p in points(c, r.id).map_err(|e| e.to_string())? {
            w.write_record([
                r.id.to_string(),
                r.started_utc.clone(),
                r.label.clone(),
                k.system.clone(),
                r.hosts.clone(),
                k.benchmark.clone(),
                k.backend.clone(),
                k.memory.clone(),
                k.datatype.clone(),
                k.np.to_string(),
                k.placement.clone(),
                k.mpi_library.clone(),
                k.options.clone(),
                r.status.clone(),
                r.source.clone(),
                p.size_bytes.to_string(),
                p.metric.clone(),
                p.unit.to_string(),
                p.value.to_string(),
                p.ci95_rel_pct.map(|v| v.to_string()).unwrap_or_default(),
            ])
            .map_err(e)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

pub fn json(c: &Connection, f: &Filter, version: i64) -> Result<String, String> {
    let runs = show::runs(c, f).map_err(|e| e.to_string())?;
    let series = show::series(c, f).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for r in &runs {
        out.push(RunOut { run: r, points: points(c, r.id).map_err(|e| e.to_string())? });
    }
    let v = serde_json::json!({"schema_version": version, "series": series, "runs": out});
    serde_json::to_string_pretty(&v).map(|s| s + "\n").map_err(|e| e.to_string())
}
