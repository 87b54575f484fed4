//! The results CSV: one header row with units in the column names, then one
//! row per (datatype, size[, window]) written and flushed as soon as that
//! size finishes, so a killed job keeps every finished row. One schema for
//! every benchmark; a column that does not apply is left empty.

use std::io::{self, Write};

use super::{Row, RunContext, Sink};

/// Column names, in order. Documented in the README.
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
];

/// Writes rows to any `Write` (a file in practice).
pub struct CsvSink<W: Write> {
    w: csv::Writer<W>,
    ctx: RunContext,
    rows: usize,
}

fn num(v: Option<f64>) -> String {
    // `{}` on f64 is the shortest text that reads back to the same value.
    v.map(|x| format!("{x}")).unwrap_or_default()
}

fn to_io(e: csv::Error) -> io::Error {
    io::Error::other(e)
}

impl<W: Write> CsvSink<W> {
    pub fn new(out: W, ctx: RunContext) -> io::Result<CsvSink<W>> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record(COLUMNS).map_err(to_io)?;
        w.flush()?;
        Ok(CsvSink { w, ctx, rows: 0 })
    }

    pub fn rows_written(&self) -> usize {
        self.rows
    }

    pub fn into_inner(self) -> io::Result<W> {
        self.w.into_inner().map_err(|e| e.into_error())
    }

    fn record(&self, r: &Row) -> Vec<String> {
        let it = r.iter.as_ref();
        let tails = r.tails.iter().map(|(p, v)| format!("P{p}={v}")).collect::<Vec<_>>().join(";");
        vec![
            self.ctx.benchmark.to_string(),
            self.ctx.backend.to_string(),
            r.datatype.map(|d| d.mpi_name().to_string()).unwrap_or_default(),
            r.size.to_string(),
            r.datatype.map(|d| (r.size / d.size()).to_string()).unwrap_or_default(),
            r.window.map(|w| w.to_string()).unwrap_or_default(),
            self.ctx.np.to_string(),
            self.ctx.pairs.map(|p| p.to_string()).unwrap_or_default(),
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
        ]
    }
}

impl<W: Write> Sink for CsvSink<W> {
    fn row(&mut self, row: &Row) -> io::Result<()> {
        let rec = self.record(row);
        self.w.write_record(&rec).map_err(to_io)?;
        self.w.flush()?;
        self.rows += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Datatype;
    use crate::stats::{RankSpread, Summary};

    #[test]
    fn header_and_row() {
        let ctx = RunContext { benchmark: "osu_latency", backend: "mpi", np: 2, pairs: Some(1) };
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
        assert_eq!((col("pairs"), col("min_lat_us"), col("slowest_rank")), ("1", "", ""));
    }

    #[test]
    fn collective_columns() {
        let ctx = RunContext { benchmark: "osu_allreduce", backend: "mpi", np: 4, pairs: None };
        let mut s = CsvSink::new(Vec::new(), ctx).unwrap();
        let row = Row {
            datatype: Some(Datatype::Char),
            size: 8,
            avg_lat_us: Some(2.0),
            spread: Some(RankSpread { fastest: (3, 1.5), slowest: (1, 2.5) }),
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
