//! `--format json`: JSON Lines on stdout as a [`Sink`], for a harness to
//! read without scraping the table. One `{"type":"run",...}` object first
//! (benchmark, title, backend, np), one `{"type":"row",...}` object per
//! measured row as it is measured, one `{"type":"end","rows":N}` object
//! when every size has been measured (none when the run ended early: the
//! exit status, stderr and the run record say why). Each line goes out in
//! one write and is flushed. Field names are the CSV's column names
//! (report/csv.rs), and the values are the CSV row's, at full precision; a
//! field that does not apply is left out, and a value that is not a number
//! (NaN, infinite) is `null`.

use std::io::{self, Write};

use serde::{Serialize, Serializer};

use super::csv::CsvRow;
use super::{Row, RunContext, Sink};
use crate::datatype::Datatype;

/// The JSON Lines writer on `out` (stdout on rank 0).
pub(crate) struct JsonLines<W: Write> {
    out: W,
    ctx: RunContext,
    title: String,
    /// `-l`: every row is in place (nccl-tests' passes say it per row).
    in_place: bool,
    rows: usize,
}

#[derive(Serialize)]
struct RunLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    benchmark: &'a str,
    title: &'a str,
    backend: &'a str,
    np: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pairs: Option<usize>,
}

#[derive(Serialize)]
struct EndLine {
    #[serde(rename = "type")]
    kind: &'static str,
    rows: usize,
}

/// One measured row: the CSV's columns of interest, under the CSV's names.
#[derive(Serialize)]
struct RowLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    benchmark: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    datatype: Option<Datatype>,
    size_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<usize>,
    in_place: bool,
    iterations: usize,
    warmup: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_lat_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_lat_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_lat_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fastest_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    slowest_rank: Option<usize>,
    #[serde(rename = "bw_MBps", skip_serializing_if = "Option::is_none")]
    bw_mbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    msg_rate_per_s: Option<f64>,
    #[serde(rename = "algbw_GBps", skip_serializing_if = "Option::is_none")]
    algbw_gbps: Option<f64>,
    #[serde(rename = "busbw_GBps", skip_serializing_if = "Option::is_none")]
    busbw_gbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overall_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    compute_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pure_comm_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overlap_pct: Option<f64>,
    /// `Pass` or `Fail`, the CSV's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    validation: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wrong_elements: Option<u64>,
    /// The CSV's `reduction` and `root` (nccl-tests' `-o all`, `-r -1`).
    #[serde(skip_serializing_if = "str::is_empty")]
    reduction: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    root: Option<u64>,
    /// `-z`: `{"P50": v, "P99": v}`, in the order given.
    #[serde(skip_serializing_if = "<[_]>::is_empty", serialize_with = "percentiles")]
    osu_tails: &'a [(u32, f64)],
    #[serde(skip_serializing_if = "Option::is_none")]
    iterations_run: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ci95_rel_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(rename = "peak_MBps", skip_serializing_if = "Option::is_none")]
    peak_mbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    efficiency_pct: Option<f64>,
}

fn percentiles<S: Serializer>(tails: &&[(u32, f64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(tails.iter().map(|(p, v)| (format!("P{p}"), v)))
}

impl<W: Write> JsonLines<W> {
    /// `title` is OSU's title line without its `# `; `in_place` is `-l`.
    pub fn new(out: W, ctx: RunContext, title: String, in_place: bool) -> Self {
        JsonLines { out, ctx, title, in_place, rows: 0 }
    }

    #[cfg(test)]
    pub fn into_inner(self) -> W {
        self.out
    }

    /// The `run` line, before the first row.
    pub fn preamble(&mut self) -> io::Result<()> {
        let c = &self.ctx;
        let line = RunLine {
            kind: "run",
            benchmark: c.benchmark,
            title: &self.title,
            backend: c.backend,
            np: c.np,
            pairs: c.pairs,
        };
        let bytes = line_bytes(&line)?;
        self.write_line(&bytes)
    }

    /// One whole line in one write, flushed.
    fn write_line(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.out.flush()
    }
}

/// `value` as one JSON line, newline included.
fn line_bytes(value: &impl Serialize) -> io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(value).map_err(io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

impl<W: Write> Sink for JsonLines<W> {
    /// One line per cell of the size.
    fn point(&mut self, rows: &[Row]) -> io::Result<()> {
        rows.iter().try_for_each(|r| self.write_row(r))
    }

    fn finish(&mut self) -> io::Result<()> {
        let bytes = line_bytes(&EndLine { kind: "end", rows: self.rows })?;
        self.write_line(&bytes)
    }
}

impl<W: Write> JsonLines<W> {
    fn write_row(&mut self, row: &Row) -> io::Result<()> {
        let c = CsvRow::new(&self.ctx, row);
        let line = RowLine {
            kind: "row",
            benchmark: &c.benchmark,
            datatype: c.datatype,
            size_bytes: c.size_bytes,
            window: c.window,
            in_place: row.in_place.unwrap_or(self.in_place),
            iterations: c.iterations,
            warmup: c.warmup,
            avg_lat_us: c.avg_lat_us,
            min_lat_us: c.min_lat_us,
            max_lat_us: c.max_lat_us,
            fastest_rank: c.fastest_rank,
            slowest_rank: c.slowest_rank,
            bw_mbps: c.bw_mbps,
            msg_rate_per_s: c.msg_rate_per_s,
            algbw_gbps: c.algbw_gbps,
            busbw_gbps: c.busbw_gbps,
            overall_us: c.overall_us,
            compute_us: c.compute_us,
            pure_comm_us: c.pure_comm_us,
            overlap_pct: c.overlap_pct,
            validation: c.validation.map(|ok| if ok { "Pass" } else { "Fail" }),
            wrong_elements: c.wrong_elements,
            reduction: &c.reduction,
            root: c.root,
            osu_tails: &c.osu_tails,
            iterations_run: c.iterations_run,
            ci95_rel_pct: c.ci95_rel_pct,
            path: c.path.as_deref(),
            peak_mbps: c.peak_mbps,
            efficiency_pct: c.efficiency_pct,
        };
        let bytes = line_bytes(&line)?;
        self.write_line(&bytes)?;
        self.rows += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::OverlapTimes;
    use crate::stats::RankSpread;

    fn ctx(benchmark: &'static str, pairs: Option<usize>) -> RunContext {
        RunContext { benchmark, backend: "mpi", np: 2, pairs, path: None }
    }

    fn lines(sink: JsonLines<Vec<u8>>) -> Vec<String> {
        String::from_utf8(sink.into_inner()).unwrap().lines().map(String::from).collect()
    }

    #[test]
    fn run_rows_and_end() {
        let mut s = JsonLines::new(Vec::new(), ctx("osu_latency", Some(1)), "OSU MPI Latency Test v7.4".into(), false);
        s.preamble().unwrap();
        s.begin_datatype(Datatype::Char).unwrap();
        let row = Row {
            datatype: Some(Datatype::Char),
            size: 8,
            iterations: 10,
            warmup: 1,
            avg_lat_us: Some(0.1 + 0.2),
            iterations_run: Some(10),
            finished_utc: "2026-11-30T00:00:00.000Z".into(),
            ..Row::default()
        };
        s.row(&row).unwrap();
        s.end_datatype().unwrap();
        s.finish().unwrap();
        assert_eq!(
            lines(s),
            [
                r#"{"type":"run","benchmark":"osu_latency","title":"OSU MPI Latency Test v7.4","backend":"mpi","np":2,"pairs":1}"#,
                r#"{"type":"row","benchmark":"osu_latency","datatype":"MPI_CHAR","size_bytes":8,"in_place":false,"iterations":10,"warmup":1,"avg_lat_us":0.30000000000000004,"iterations_run":10}"#,
                r#"{"type":"end","rows":1}"#,
            ]
        );
    }

    /// A collective with `-f -c -z`: min and max over ranks and which
    /// ranks, the bandwidths, the verdict and the tails in the order given.
    #[test]
    fn a_full_collective_row() {
        let mut s = JsonLines::new(Vec::new(), ctx("osu_allreduce", None), "t".into(), true);
        let row = Row {
            datatype: Some(Datatype::Int),
            size: 64,
            iterations: 100,
            warmup: 10,
            avg_lat_us: Some(2.0),
            spread: Some(RankSpread { fastest: (1, 1.5), slowest: (0, 2.5), first: 2.5 }),
            algbw_busbw: Some((0.032, 0.032)),
            validation: Some(false),
            tails: vec![(99, 3.25), (50, 1.75), (100, 4.0)],
            ..Row::default()
        };
        s.row(&row).unwrap();
        assert_eq!(
            lines(s),
            [
                r#"{"type":"row","benchmark":"osu_allreduce","datatype":"MPI_INT","size_bytes":64,"in_place":true,"iterations":100,"warmup":10,"avg_lat_us":2.0,"min_lat_us":1.5,"max_lat_us":2.5,"fastest_rank":1,"slowest_rank":0,"algbw_GBps":0.032,"busbw_GBps":0.032,"validation":"Fail","osu_tails":{"P99":3.25,"P50":1.75,"P100":4.0}}"#
            ]
        );
    }

    /// Bandwidth, message rate, window, nccl-tests' in-place pass and
    /// wrong elements, the overlap figures; a value that is no number is
    /// null, so the line still parses.
    #[test]
    fn other_values_and_non_numbers() {
        let mut s = JsonLines::new(Vec::new(), ctx("osu_mbw_mr", Some(1)), "t".into(), false);
        let bw = Row {
            size: 4,
            window: Some(64),
            bw_mbps: Some(1e21),
            msg_rate: Some(f64::NAN),
            in_place: Some(true),
            wrong_elements: Some(0),
            validation: Some(true),
            ..Row::default()
        };
        let o = OverlapTimes {
            overall_us: 10.5,
            compute_us: 8.0,
            pure_us: 4.25,
            overlap_pct: 12.125,
            ..Default::default()
        };
        s.row(&bw).unwrap();
        s.row(&Row { size: 8, overlap: Some(o), ..Row::default() }).unwrap();
        s.finish().unwrap();
        assert_eq!(
            lines(s),
            [
                r#"{"type":"row","benchmark":"osu_mbw_mr","size_bytes":4,"window":64,"in_place":true,"iterations":0,"warmup":0,"bw_MBps":1e+21,"msg_rate_per_s":null,"validation":"Pass","wrong_elements":0}"#,
                r#"{"type":"row","benchmark":"osu_mbw_mr","size_bytes":8,"in_place":false,"iterations":0,"warmup":0,"overall_us":10.5,"compute_us":8.0,"pure_comm_us":4.25,"overlap_pct":12.125}"#,
                r#"{"type":"end","rows":2}"#,
            ]
        );
    }

    /// Every value is the CSV's, and the relative 95% interval is there
    /// where the CSV has one.
    #[test]
    fn values_are_the_csv_s() {
        let c = ctx("osu_latency", Some(1));
        let secs: Vec<f64> = (0..40).map(|i| 1e-6 * (1.0 + (i % 7) as f64 * 0.01)).collect();
        let row = Row {
            size: 16,
            avg_lat_us: Some(1.03),
            iterations_run: Some(40),
            iter_spread: crate::stats::spread::spread(&secs, 1e6, &Default::default()),
            ..Row::default()
        };
        let csv = CsvRow::new(&c, &row);
        let mut s = JsonLines::new(Vec::new(), c, "t".into(), false);
        s.row(&row).unwrap();
        let v: serde_json::Value = serde_json::from_str(&lines(s)[0]).unwrap();
        let rel = csv.ci95_rel_pct.expect("a spread has an interval");
        assert_eq!(v["ci95_rel_pct"].as_f64(), Some(rel));
        assert_eq!(v["avg_lat_us"].as_f64(), csv.avg_lat_us);
        assert_eq!(v["iterations_run"].as_u64(), Some(40));
    }
}
