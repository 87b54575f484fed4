//! The result files of a pairs run, all named after one unique stem
//! (`<UTC stamp>_pairs[_job<id>]`, from the shared result-file naming):
//! `.json` run record, `.csv` one row per measured direction (appended and
//! flushed after each round, each with its path's peak and the share of it
//! reached), and at the end `_bw_MBps.csv`/`.svg`, `_eff_pct.csv`/`.svg`
//! and `_lat_us.csv`/`.svg` (matrices and heatmaps) and `_hosts.csv`.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::PathBuf;

use super::blame::Blame;
use super::paths::PairPeaks;
use super::results::{Directed, LatencySample};
use crate::matrix::heatmap::{self, HeatmapSpec};
use crate::matrix::Matrix;
use crate::options::ResultsDest;
use crate::report::files::{self, ResultsError};
use crate::report::safe_file::{self, RowFile};
use crate::topo::cpuset::format_list;

/// Columns of the measurements CSV.
pub(crate) const MEASUREMENT_COLUMNS: &[&str] = &[
    "round",
    "src_rank",
    "dst_rank",
    "src_host",
    "dst_host",
    "size_bytes",
    "window",
    "iterations",
    "bw_MBps",
    "latency_us",
    "path",
    "path_class",
    "peak_MBps",
    "efficiency_pct",
];

pub(crate) const HOST_COLUMNS: &[&str] = &[
    "host",
    "ranks",
    "directions",
    "failing_directions",
    "pairs",
    "median_out_MBps",
    "median_in_MBps",
    "min_out_MBps",
    "min_in_MBps",
    "verdict",
];

/// The open files of a run (rank 0 only).
pub(crate) struct PairsFiles {
    stem: PathBuf,
    pub record_path: PathBuf,
    pub measurements_path: PathBuf,
    measurements: RowFile,
    /// Every file written so far, by kind.
    pub written: BTreeMap<String, String>,
}

/// `records` as CSV bytes.
fn csv_bytes<I, R>(records: I) -> io::Result<Vec<u8>>
where
    I: IntoIterator<Item = R>,
    R: IntoIterator,
    R::Item: AsRef<[u8]>,
{
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in records {
        w.write_record(r).map_err(io::Error::other)?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

fn opt(v: Option<f64>, scale: f64) -> String {
    v.map(|x| format!("{:.2}", x * scale)).unwrap_or_default()
}

/// The measurement CSV's rows of one round: peak_MBps as exact as the
/// record's, efficiency_pct with two decimals like the bandwidth.
fn round_rows(
    directed: &[Directed],
    latency: &[LatencySample],
    hosts: &[String],
    peaks: &PairPeaks,
    counts: (usize, usize, usize),
) -> io::Result<Vec<u8>> {
    let (size, window, iterations) = counts;
    let host = |x: usize| hosts.get(x).cloned().unwrap_or_default();
    let lat_of: HashMap<(usize, usize, usize), f64> = latency.iter().map(|l| ((l.round, l.a, l.b), l.secs)).collect();
    let rows = directed.iter().map(|d| {
        let (a, b) = (d.src.min(d.dst), d.src.max(d.dst));
        let lat = lat_of.get(&(d.round, a, b)).copied();
        let path = peaks.path(d.src, d.dst);
        let mbps = d.bytes_per_s / 1e6;
        [
            d.round.to_string(),
            d.src.to_string(),
            d.dst.to_string(),
            host(d.src),
            host(d.dst),
            size.to_string(),
            window.to_string(),
            iterations.to_string(),
            format!("{mbps:.2}"),
            opt(lat, 1e6),
            path.label.clone(),
            peaks.class(d.src, d.dst),
            path.peak_mbps.map(|p| p.to_string()).unwrap_or_default(),
            opt(path.efficiency(mbps), 1.0),
        ]
    });
    csv_bytes(rows)
}

impl PairsFiles {
    /// Creates the record and measurement files (None with --no-results).
    pub fn create(dest: &ResultsDest, stamp: &str, job: Option<&str>) -> Result<Option<PairsFiles>, ResultsError> {
        // Plain words: no cell needs quoting.
        let header = MEASUREMENT_COLUMNS.join(",") + "\n";
        let Some(f) = files::create_with_header(dest, "pairs", stamp, job, header.as_bytes())? else { return Ok(None) };
        let stem = f.csv_path.with_extension("");
        let mut written = BTreeMap::new();
        written.insert("measurements".to_string(), f.csv_path.display().to_string());
        written.insert("record".to_string(), f.record_path.display().to_string());
        Ok(Some(PairsFiles {
            stem,
            record_path: f.record_path,
            measurements_path: f.csv_path,
            measurements: f.rows,
            written,
        }))
    }

    /// Takes the record and measurement files away again (a record that
    /// could not be written): no empty file is left.
    pub(crate) fn discard(self) {
        let PairsFiles { record_path, measurements_path, measurements, .. } = self;
        files::RowResults { csv_path: measurements_path, record_path, rows: measurements }.discard();
    }

    fn sibling(&self, suffix: &str) -> PathBuf {
        safe_file::sibling(&self.stem, suffix)
    }

    /// Appends one round's directions (with that round's latencies and
    /// each direction's path) in one write: the whole round or, on error,
    /// none of it.
    pub(crate) fn append_round(
        &mut self,
        directed: &[Directed],
        latency: &[LatencySample],
        hosts: &[String],
        peaks: &PairPeaks,
        counts: (usize, usize, usize),
    ) -> io::Result<()> {
        self.measurements.append(&round_rows(directed, latency, hosts, peaks, counts)?)
    }

    fn write_new(&mut self, kind: &str, suffix: &str, body: &dyn Fn(&mut Vec<u8>) -> io::Result<()>) -> io::Result<()> {
        let path = self.sibling(suffix);
        let mut bytes = Vec::new();
        body(&mut bytes)
            .and_then(|_| safe_file::write_new(&path, &bytes))
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        self.written.insert(kind.to_string(), path.display().to_string());
        Ok(())
    }

    /// Writes a matrix as CSV and as a heatmap.
    pub(crate) fn write_matrix(&mut self, kind: &str, m: &Matrix, corner: &str, spec: &HeatmapSpec) -> io::Result<()> {
        self.write_new(&format!("{kind}_matrix"), &format!("_{kind}.csv"), &|f| m.write_csv(f, corner, spec.scale))?;
        let svg = heatmap::svg(m, spec);
        self.write_new(&format!("{kind}_heatmap"), &format!("_{kind}.svg"), &|f| f.write_all(svg.as_bytes()))
    }

    /// Writes the per-host summary.
    pub(crate) fn write_hosts(&mut self, blame: &Blame) -> io::Result<()> {
        let mut text = Vec::new();
        {
            let mut w = csv::Writer::from_writer(&mut text);
            w.write_record(HOST_COLUMNS).map_err(io::Error::other)?;
            for h in &blame.hosts {
                let verdict = if h.bad {
                    "bad_host"
                } else if h.failing_directions > 0 {
                    "failing_links"
                } else {
                    "ok"
                };
                w.write_record([
                    h.name.clone(),
                    format_list(&h.ranks),
                    h.directions.to_string(),
                    h.failing_directions.to_string(),
                    h.pairs.to_string(),
                    opt(h.median_out, 1e-6),
                    opt(h.median_in, 1e-6),
                    opt(h.min_out, 1e-6),
                    opt(h.min_in, 1e-6),
                    verdict.to_string(),
                ])
                .map_err(io::Error::other)?;
            }
            w.flush()?;
        }
        self.write_new("hosts", "_hosts.csv", &|f| f.write_all(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peak::copy_rate::CopyRate;
    use crate::peak::RankEnd;

    #[test]
    fn each_direction_names_its_path() {
        let end = |mbps: f64, package| RankEnd {
            host: "vm".into(),
            package: Some(package),
            copy: Some(CopyRate { mbps, bytes: 1 << 20, copies: 5, method: "memcpy".into() }),
            ..RankEnd::default()
        };
        let mut ends = vec![end(45_500.5, 0), end(50_000.0, 1)];
        let hosts = vec!["vm".to_string(), "vm".to_string()];
        let d = |src, dst, bw| Directed { round: 1, src, dst, bytes_per_s: bw };
        let peaks = PairPeaks::new(ends.clone());
        let text = round_rows(&[d(0, 1, 9.1001e9)], &[], &hosts, &peaks, (1 << 20, 8, 2)).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "1,0,1,vm,vm,1048576,8,2,9100.10,,shared memory on vm,across sockets,45500.5,20.00\n"
        );
        ends[1].copy = None;
        let text = round_rows(&[d(1, 0, 1e9)], &[], &hosts, &PairPeaks::new(ends), (1 << 20, 8, 2)).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "1,1,0,vm,vm,1048576,8,2,1000.00,,shared memory on vm,across sockets,,\n"
        );
    }
}
