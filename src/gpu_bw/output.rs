//! The result files of a `gpu-bw` run, all named after one unique stem
//! (`<UTC stamp>_gpu-bw[_job<id>]`, from the shared result-file naming):
//! `.json` run record; `.csv` one row per timing, appended whole after each
//! GPU and each pair so a run cut short keeps what it measured; and at the
//! end, for every GPU-by-GPU matrix, `_<matrix>.csv` (the matrix CSV
//! shared with `pairs`) and `_<matrix>.svg` (the shared heatmap, diagonal
//! left out so the colours compare links, not on-GPU copies).

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use super::results::{MatrixId, Measurement};
use crate::matrix::heatmap::{self, HeatmapSpec};
use crate::matrix::Matrix;
use crate::options::ResultsDest;
use crate::report::files::{self, ResultsError};
use crate::report::safe_file::{self, RowFile};

/// Columns of the long-form CSV.
pub const COLUMNS: &[&str] = &[
    "test",
    "src_gpu",
    "dst_gpu",
    "host_memory",
    "peer_access",
    "bytes",
    "reps",
    "bytes_counted",
    "seconds",
    "clock",
    "value",
    "unit",
];

/// `ms` as CSV rows (no header).
pub(crate) fn csv_rows(ms: &[Measurement]) -> io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let side = |g: Option<usize>| g.map_or("host".to_string(), |g| g.to_string());
    for m in ms {
        w.write_record([
            m.kind.name().to_string(),
            side(m.src),
            side(m.dst),
            m.host_memory.map_or("", |h| h.name()).to_string(),
            m.peer_access.map_or("", |p| if p { "on" } else { "off" }).to_string(),
            m.bytes.to_string(),
            m.reps.to_string(),
            m.bytes_counted.to_string(),
            format!("{:.9}", m.seconds),
            m.clock.name().to_string(),
            format!("{:.2}", m.value),
            m.unit().to_string(),
        ])
        .map_err(io::Error::other)?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

/// The CSV's first row: plain words, no cell needs quoting.
fn header() -> String {
    COLUMNS.join(",") + "\n"
}

/// The open files of a run.
pub(crate) struct GpuBwFiles {
    stem: PathBuf,
    pub record_path: PathBuf,
    pub csv_path: PathBuf,
    rows: RowFile,
    /// Every file written so far, by kind.
    pub written: BTreeMap<String, String>,
}

impl GpuBwFiles {
    /// Creates the CSV (with its header) and the record file; None with
    /// `--no-results`.
    pub fn create(dest: &ResultsDest, stamp: &str, job: Option<&str>) -> Result<Option<GpuBwFiles>, ResultsError> {
        let Some(f) = files::create_with_header(dest, "gpu-bw", stamp, job, header().as_bytes())? else {
            return Ok(None);
        };
        let mut written = BTreeMap::new();
        written.insert("measurements".to_string(), f.csv_path.display().to_string());
        written.insert("record".to_string(), f.record_path.display().to_string());
        let stem = f.csv_path.with_extension("");
        Ok(Some(GpuBwFiles { stem, record_path: f.record_path, csv_path: f.csv_path, rows: f.rows, written }))
    }

    /// Takes the record and the CSV away again (a record that could not
    /// be written): no empty file is left.
    pub(crate) fn discard(self) {
        let GpuBwFiles { record_path, csv_path, rows, .. } = self;
        files::RowResults { csv_path, record_path, rows }.discard();
    }

    /// Appends timings as whole rows (all of them or, on error, none).
    pub(crate) fn append(&mut self, ms: &[Measurement]) -> io::Result<()> {
        if ms.is_empty() {
            return Ok(());
        }
        self.rows.append(&csv_rows(ms)?)
    }

    fn write_new(&mut self, kind: String, suffix: &str, bytes: &[u8]) -> io::Result<()> {
        write_sibling(&self.stem, &mut self.written, kind, suffix, bytes)
    }

    /// Writes one matrix as CSV and as a heatmap.
    pub(crate) fn write_matrix(&mut self, id: MatrixId, m: &Matrix, spec: &HeatmapSpec) -> io::Result<()> {
        let kind = id.file_kind();
        let mut text = Vec::new();
        m.write_csv(&mut text, &format!("src\\dst ({})", spec.unit), 1.0)?;
        self.write_new(format!("{kind}_matrix"), &format!("_{kind}.csv"), &text)?;
        let svg = heatmap::svg(&off_diagonal(m), spec);
        self.write_new(format!("{kind}_heatmap"), &format!("_{kind}.svg"), svg.as_bytes())
    }
}

/// Writes `bytes` as a new file beside the run's CSV (`<stem><suffix>`)
/// and notes it in `written` as `kind`; the error names the file.
pub(crate) fn write_sibling(
    stem: &std::path::Path,
    written: &mut BTreeMap<String, String>,
    kind: String,
    suffix: &str,
    bytes: &[u8],
) -> io::Result<()> {
    let path = safe_file::sibling(stem, suffix);
    safe_file::write_new(&path, bytes).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    written.insert(kind, path.display().to_string());
    Ok(())
}

/// `m` without its diagonal.
pub(crate) fn off_diagonal(m: &Matrix) -> Matrix {
    let mut x = Matrix::new(m.size());
    for r in 0..m.size() {
        for c in (0..m.size()).filter(|&c| c != r) {
            if let Some(v) = m.get(r, c) {
                x.set(r, c, v);
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_bw::results::{Clock, HostMemory, Kind};

    fn sample() -> Vec<Measurement> {
        vec![
            Measurement::bandwidth(
                Kind::H2d,
                None,
                Some(0),
                Some(HostMemory::Pinned),
                None,
                (32_000_000, 100, 1),
                0.128,
                Clock::GpuEvents,
            ),
            Measurement::bandwidth(
                Kind::D2h,
                Some(1),
                None,
                Some(HostMemory::Pageable),
                None,
                (32_000_000, 100, 1),
                0.4,
                Clock::HostClock,
            ),
            Measurement::bandwidth(
                Kind::P2pBidir,
                Some(0),
                Some(1),
                None,
                Some(true),
                (160_000_000, 5, 2),
                0.004,
                Clock::GpuEvents,
            ),
            Measurement::latency(1, 0, Some(false), 16, 100, 0.000_2),
        ]
    }

    #[test]
    fn csv_contents() {
        let text = String::from_utf8(csv_rows(&sample()).unwrap()).unwrap();
        let want = "h2d,host,0,pinned,,32000000,100,3200000000,0.128000000,gpu_events,25.00,GB/s\n\
                    d2h,1,host,pageable,,32000000,100,3200000000,0.400000000,host_clock,8.00,GB/s\n\
                    p2p_bidir,0,1,,on,160000000,5,1600000000,0.004000000,gpu_events,400.00,GB/s\n\
                    p2p_latency,1,0,,off,16,100,1600,0.000200000,gpu_events,2.00,us\n";
        assert_eq!(text, want);
        assert_eq!(header().trim_end().split(',').collect::<Vec<_>>(), COLUMNS);
    }

    #[test]
    fn files_are_written_once_each() {
        let d = tempfile::tempdir().unwrap();
        let dest = ResultsDest::Dir(d.path().join("r"));
        let mut f = GpuBwFiles::create(&dest, "20260101T000000Z", None).unwrap().unwrap();
        f.append(&sample()).unwrap();
        f.append(&[]).unwrap();
        let id = MatrixId::ALL[0];
        let mut m = Matrix::new(2);
        m.set(0, 0, 900.0);
        m.set(0, 1, 12.346);
        let hosts = vec!["numa0".to_string(), "numa1".to_string()];
        let spec = HeatmapSpec {
            title: "t",
            subtitle: "s",
            axes: "row: source GPU, column: destination GPU",
            unit: "GB/s",
            scale: 1.0,
            higher_is_better: true,
            hosts: &hosts,
            failed: &|_, _| false,
        };
        f.write_matrix(id, &m, &spec).unwrap();
        assert!(f.write_matrix(id, &m, &spec).is_err(), "a matrix file is never overwritten");
        let csv = std::fs::read_to_string(&f.csv_path).unwrap();
        assert_eq!(csv.lines().count(), 5);
        assert!(csv.starts_with("test,src_gpu,dst_gpu,host_memory,peer_access,bytes,"));
        let matrix = std::fs::read_to_string(d.path().join("r/20260101T000000Z_gpu-bw_uni_p2p_off_GBps.csv")).unwrap();
        assert_eq!(matrix, "src\\dst (GB/s),0,1\n0,900.00,12.35\n1,,\n");
        let svg = std::fs::read_to_string(d.path().join("r/20260101T000000Z_gpu-bw_uni_p2p_off_GBps.svg")).unwrap();
        assert_eq!(svg.matches("<title>").count(), 1, "the diagonal is left out of the heatmap");
        assert!(svg.contains("row: source GPU, column: destination GPU"));
        assert_eq!(f.written.len(), 4);
    }
}
