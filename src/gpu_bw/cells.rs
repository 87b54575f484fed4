//! What the GPU copy drop-ins (`bandwidthTest`, `p2pBandwidthLatencyTest`,
//! `nvbandwidth`) leave besides their stdout, through one piece of code:
//! every figure they print as a [`Cell`] (which test, which matrix and
//! cell, from where to where, how many bytes, the value), each cell's path
//! and its share of that path's peak ([`super::survey::Survey`]), a CSV
//! of the cells appended as each test ends, GPU-by-GPU matrices as CSV
//! and heatmap, the one-way GPU pairs of each test grouped by path class
//! (NVLink count, NVSwitch, PCIe, through the CPU), and
//! `--min-efficiency`'s verdict. The files go to `$COMMBENCH_RESULTS_DIR`
//! or `results/`.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use serde::Serialize;

use super::efficiency::{self, ClassSummary, Row};
use super::peaks::GpuPeak;
use super::results::Kind;
use super::survey::{End, Survey};
use crate::matrix::heatmap::{self, HeatmapSpec};
use crate::matrix::Matrix;
use crate::options::ResultsDest;
use crate::report::files::{self, ResultsError};
use crate::report::record::{relevant_environment, write_json, write_json_with_room, LocalRun, RunStatus};
use crate::report::safe_file::{self, RowFile};
use crate::report::time::Utc;

/// Columns of the cells CSV, one schema for the three tools.
pub const COLUMNS: &[&str] = &[
    "tool",
    "test",
    "engine",
    "matrix",
    "row",
    "column",
    "from",
    "to",
    "host_memory",
    "peer_access",
    "bytes",
    "loops",
    "samples",
    "statistic",
    "value",
    "unit",
    "path",
    "peak_GBps",
    "efficiency_pct",
    "finished_utc",
];

/// The unit of a cell's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    GBps,
    Us,
    Ns,
}

impl Unit {
    pub fn text(self) -> &'static str {
        match self {
            Unit::GBps => "GB/s",
            Unit::Us => "us",
            Unit::Ns => "ns",
        }
    }
}

/// One printed figure.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cell {
    /// The test, series or case (`H2D-Pinned`,
    /// `unidirectional_p2p_enabled_writes`, `device_local_copy`).
    pub test: String,
    /// `ce` (copy engine) or `sm` (a kernel).
    pub engine: &'static str,
    /// Which of a test's matrices (empty where it has one).
    pub matrix: String,
    pub row: Option<usize>,
    pub column: Option<usize>,
    /// `host`, `gpuN`, or another word (`peers`, `both`, `gpus`).
    pub from: String,
    pub to: String,
    /// `pinned`, `pageable`, `write_combined`, or empty.
    pub host_memory: &'static str,
    /// Whether peer access was on, for a copy between two GPUs.
    pub peer_access: Option<bool>,
    pub bytes: u64,
    pub loops: Option<u64>,
    pub samples: Option<u32>,
    /// `median`, `mean`, or empty where one timing gives the value.
    pub statistic: &'static str,
    pub value: f64,
    pub unit: Unit,
    /// The value adds both directions' bytes (the peak doubles).
    pub both_ways: bool,
    /// Whether it is judged against its path (a test's largest size, not
    /// a total over several paths).
    pub judged: bool,
}

/// `gpu3` -> GPU 3, `host` -> host memory; anything else is not one end.
fn end(word: &str) -> Option<End> {
    if word == "host" {
        return Some(End::Host);
    }
    word.strip_prefix("gpu").and_then(|n| n.parse().ok()).map(End::Gpu)
}

fn end_name(e: End) -> String {
    match e {
        End::Host => "host".into(),
        End::Gpu(g) => format!("GPU {g}"),
    }
}

impl Cell {
    /// The cell's path and peak (one direction, doubled both ways); None
    /// for a latency, a copy within one GPU, or ends that are not one
    /// place each.
    pub fn peak(&self, survey: &Survey) -> Option<GpuPeak> {
        let (a, b) = (end(&self.from)?, end(&self.to)?);
        let mut p = survey.peak(a, b, self.peer_access)?;
        if self.both_ways {
            p.peak_mbps = p.peak_mbps.map(|x| 2.0 * x);
            p.how = format!("{}, both directions at once (x2)", p.how);
        }
        Some(p)
    }

    /// The row `--min-efficiency` judges, for a judged bandwidth with a
    /// path.
    fn judged_row(&self, survey: &Survey) -> Option<Row> {
        if !self.judged || self.unit != Unit::GBps {
            return None;
        }
        let peak = self.peak(survey)?;
        let (a, b) = (end(&self.from)?, end(&self.to)?);
        let (kind, src, dst) = match (a, b) {
            (End::Host, End::Gpu(g)) => (Kind::H2d, None, Some(g)),
            (End::Gpu(g), End::Host) => (Kind::D2h, Some(g), None),
            (End::Gpu(s), End::Gpu(d)) => {
                (if self.both_ways { Kind::P2pBidir } else { Kind::P2pUni }, Some(s), Some(d))
            }
            (End::Host, End::Host) => return None,
        };
        let arrow = if self.both_ways { "<->" } else { "->" };
        let mut name = format!("{} {} {arrow} {}", self.test, end_name(a), end_name(b));
        if !self.matrix.is_empty() {
            name = format!("{} [{}] {} {arrow} {}", self.test, self.matrix, end_name(a), end_name(b));
        }
        Some(efficiency::row(name, kind, src, dst, self.value, &peak))
    }
}

/// The path classes of one test's one-way GPU pairs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct TestClasses {
    pub test: String,
    pub classes: Vec<ClassSummary>,
}

/// Each judged cell against its path, the pairs by class, and what
/// `--min-efficiency` said.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Judgement {
    pub rows: Vec<Row>,
    pub classes: Vec<TestClasses>,
    pub min_efficiency_pct: Option<f64>,
    /// `--min-efficiency`'s failing lines, worst first.
    pub failing: Vec<String>,
    /// None when not asked or nothing was judged.
    pub passed: Option<bool>,
    /// For each row, the index of its cell among those judged.
    #[serde(skip)]
    cell_of_row: Vec<usize>,
}

impl Judgement {
    /// Whether cell `k` (of the cells judged) fails `--min-efficiency`.
    pub fn below(&self, k: usize) -> bool {
        let Some(pct) = self.min_efficiency_pct else { return false };
        self.cell_of_row.iter().zip(&self.rows).any(|(&c, r)| c == k && efficiency::falls_short(pct, r))
    }
}

/// Judges `cells` against their paths; `min_pct` is `--min-efficiency`.
pub(crate) fn judge(cells: &[Cell], survey: &Survey, min_pct: Option<f64>) -> Judgement {
    let (cell_of_row, rows): (Vec<usize>, Vec<Row>) =
        cells.iter().enumerate().filter_map(|(k, c)| c.judged_row(survey).map(|r| (k, r))).unzip();
    let mut tests: Vec<&str> = Vec::new();
    for c in cells {
        if !tests.contains(&c.test.as_str()) {
            tests.push(&c.test);
        }
    }
    let classes = tests
        .iter()
        .filter_map(|&t| {
            let own: Vec<Row> =
                rows.iter().zip(&cell_of_row).filter(|(_, &k)| cells[k].test == t).map(|(r, _)| r.clone()).collect();
            let classes = efficiency::classes(&own);
            (!classes.is_empty()).then(|| TestClasses { test: t.to_string(), classes })
        })
        .collect();
    let mut j = Judgement { rows, classes, min_efficiency_pct: min_pct, cell_of_row, ..Judgement::default() };
    if let Some(pct) = min_pct {
        j.failing = efficiency::judge(pct, &j.rows);
        j.passed = (!j.rows.is_empty()).then_some(j.failing.is_empty());
    }
    j
}

/// What `--min-efficiency` says on stderr, each line led by the tool's
/// name: nothing when every judged bandwidth reaches its share.
pub(crate) fn verdict_lines(tool: &str, j: &Judgement) -> Vec<String> {
    let Some(pct) = j.min_efficiency_pct else { return Vec::new() };
    if j.rows.is_empty() {
        return vec![format!(
            "{tool}: --min-efficiency {pct}%: nothing to judge (no bandwidth between host and a GPU or between \
             two GPUs whose path this run knows)"
        )];
    }
    if j.failing.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "{tool}: --min-efficiency {pct}%: {} of {} bandwidths below their path's share:",
        j.failing.len(),
        j.rows.len()
    )];
    out.extend(j.failing.iter().map(|l| format!("{tool}:   {l}")));
    out
}

/// `--min-efficiency=PCT` as the samples' grammar gives it, where given.
pub(crate) fn min_efficiency_arg(text: Option<String>) -> Result<Option<f64>, String> {
    let Some(t) = text else { return Ok(None) };
    crate::cli::options::parse_percent(&t).map(Some).ok_or_else(|| {
        format!("--min-efficiency={t}: give a percentage of the path's peak, above 0 and at most 100 (e.g. 80 or 80%)")
    })
}

/// Where results go: `$COMMBENCH_RESULTS_DIR` (chosen: a failure there
/// stops the run), else `results/`.
pub(crate) fn destination() -> (ResultsDest, bool) {
    match std::env::var_os("COMMBENCH_RESULTS_DIR").filter(|v| !v.is_empty()) {
        Some(d) => (ResultsDest::Dir(PathBuf::from(d)), true),
        None => (ResultsDest::Dir(PathBuf::from("results")), false),
    }
}

/// The open results of a run: the cells CSV, the record's path and the
/// files written so far.
pub(crate) struct CellFiles {
    tool: &'static str,
    stem: PathBuf,
    pub record_path: PathBuf,
    pub csv_path: PathBuf,
    rows: RowFile,
    /// Every file written, by kind.
    pub written: BTreeMap<String, String>,
}

impl CellFiles {
    /// Creates the CSV (with its header) and the record file; Err is one
    /// line (these tools have no option for the place:
    /// `$COMMBENCH_RESULTS_DIR` chooses it).
    pub fn create(tool: &'static str, dest: &ResultsDest, job: Option<&str>) -> Result<Option<CellFiles>, String> {
        let header = COLUMNS.join(",") + "\n";
        let stamp = Utc::now().compact();
        let made = files::create_with_header(dest, tool, &stamp, job, header.as_bytes());
        let made = made.map_err(|e| match e {
            ResultsError::Create { path, source } => format!(
                "cannot write results to '{}': {source} (COMMBENCH_RESULTS_DIR chooses another place)",
                path.display()
            ),
            other => other.to_string(),
        })?;
        let Some(f) = made else { return Ok(None) };
        let mut written = BTreeMap::new();
        written.insert("measurements".to_string(), f.csv_path.display().to_string());
        written.insert("record".to_string(), f.record_path.display().to_string());
        let stem = f.csv_path.with_extension("");
        Ok(Some(CellFiles { tool, stem, record_path: f.record_path, csv_path: f.csv_path, rows: f.rows, written }))
    }

    /// Takes the CSV and the record away again (a record that could not be
    /// written): no empty file is left.
    fn discard(self) {
        let CellFiles { record_path, csv_path, rows, .. } = self;
        files::RowResults { csv_path, record_path, rows }.discard();
    }

    /// Appends cells as whole rows (all of them or, on error, none).
    pub fn append(&mut self, cells: &[Cell], survey: &Survey) -> io::Result<()> {
        if cells.is_empty() {
            return Ok(());
        }
        let rows = csv_rows(self.tool, cells, survey)?;
        self.rows.append(&rows)
    }

    /// Every square GPU-by-GPU matrix among `cells` (two GPUs or more, a
    /// cell for each GPU pair's row and column) as CSV and heatmap, the
    /// cells below `--min-efficiency` outlined. `j` is `judge(cells, ..)`.
    pub fn matrices(&mut self, cells: &[Cell], j: &Judgement, subtitle: &str) -> io::Result<()> {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for c in cells {
            if !seen.contains(&(c.test.as_str(), c.matrix.as_str())) {
                seen.push((&c.test, &c.matrix));
            }
        }
        for (test, matrix) in seen {
            let members: Vec<usize> =
                (0..cells.len()).filter(|&k| cells[k].test == test && cells[k].matrix == matrix).collect();
            let Some(m) = square(members.iter().map(|&k| &cells[k])) else { continue };
            let unit = cells[members[0]].unit;
            let failed = |r: usize, c: usize| {
                members.iter().any(|&k| cells[k].row == Some(r) && cells[k].column == Some(c) && j.below(k))
            };
            let hosts: Vec<String> = (0..m.size()).map(|i| format!("gpu{i}")).collect();
            let (name, title) = if matrix.is_empty() {
                (test.to_string(), format!("{} {test}", self.tool))
            } else {
                (format!("{test}_{matrix}"), format!("{} {test} [{matrix}]", self.tool))
            };
            let spec = HeatmapSpec {
                title: &title,
                subtitle,
                axes: "row and column as the tool prints them",
                unit: unit.text(),
                scale: 1.0,
                higher_is_better: unit == Unit::GBps,
                hosts: &hosts,
                failed: &failed,
            };
            let mut text = Vec::new();
            m.write_csv(&mut text, &format!("row\\column ({})", unit.text()), 1.0)?;
            let part = safe_file::name_part(&name);
            self.write_new(format!("{part}_matrix"), &format!("_{part}.csv"), &text)?;
            let svg = heatmap::svg(&m, &spec);
            self.write_new(format!("{part}_heatmap"), &format!("_{part}.svg"), svg.as_bytes())?;
        }
        Ok(())
    }

    fn write_new(&mut self, kind: String, suffix: &str, bytes: &[u8]) -> io::Result<()> {
        super::output::write_sibling(&self.stem, &mut self.written, kind, suffix, bytes)
    }
}

/// The cells as a square matrix by their row and column, where they make
/// one of two rows or more.
fn square<'c>(members: impl Iterator<Item = &'c Cell> + Clone) -> Option<Matrix> {
    let (mut n, mut rows) = (0, 0);
    for c in members.clone() {
        let (r, col) = (c.row?, c.column?);
        (n, rows) = (n.max(r + 1).max(col + 1), rows.max(r + 1));
    }
    if n < 2 || rows < 2 {
        return None;
    }
    let mut m = Matrix::new(n);
    for c in members {
        if let (Some(r), Some(col)) = (c.row, c.column) {
            m.set(r, col, c.value);
        }
    }
    Some(m)
}

fn csv_rows(tool: &str, cells: &[Cell], survey: &Survey) -> io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let finished = Utc::now().rfc3339();
    let opt = |v: Option<String>| v.unwrap_or_default();
    for c in cells {
        let peak = c.peak(survey);
        let eff = peak.as_ref().filter(|_| c.unit == Unit::GBps).and_then(|p| p.efficiency(c.value * 1e3));
        w.write_record([
            tool.to_string(),
            c.test.clone(),
            c.engine.to_string(),
            c.matrix.clone(),
            opt(c.row.map(|r| r.to_string())),
            opt(c.column.map(|r| r.to_string())),
            c.from.clone(),
            c.to.clone(),
            c.host_memory.to_string(),
            opt(c.peer_access.map(|p| if p { "on" } else { "off" }.to_string())),
            c.bytes.to_string(),
            opt(c.loops.map(|l| l.to_string())),
            opt(c.samples.map(|s| s.to_string())),
            c.statistic.to_string(),
            format!("{}", c.value),
            c.unit.text().to_string(),
            opt(peak.as_ref().map(|p| p.class.clone())),
            opt(peak.as_ref().and_then(|p| p.peak_mbps).map(|p| format!("{}", p / 1e3))),
            opt(eff.map(|e| format!("{e:.1}"))),
            finished.clone(),
        ])
        .map_err(io::Error::other)?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

/// What a drop-in's run record offers the shared ending.
pub(crate) trait CellRecord: Serialize {
    /// The files written, by kind.
    fn files_mut(&mut self) -> &mut BTreeMap<String, String>;
    /// Keeps what the survey found (the GPUs where the record has no
    /// list of its own, the paths).
    fn set_survey(&mut self, s: &Survey);
    fn set_efficiency(&mut self, j: Judgement);
    fn end(&mut self, status: RunStatus, detail: Option<String>, exit_code: i32);
}

/// A drop-in's results while it runs: its record, its files (where they
/// could be made), the survey its cells are judged by, and the cells so
/// far. A file that cannot be written is said once on stderr; where
/// `$COMMBENCH_RESULTS_DIR` chose the place, it also fails the run.
pub(crate) struct Outputs<R: CellRecord> {
    tool: &'static str,
    pub rec: R,
    files: Option<CellFiles>,
    pub survey: Survey,
    pub cells: Vec<Cell>,
    chosen: bool,
    failed: bool,
}

impl<R: CellRecord> Outputs<R> {
    /// Makes the files and writes the record of a run that starts; Err is
    /// one line (the chosen place cannot be written) for the tool to say
    /// its way before it exits 1.
    pub fn open(tool: &'static str, rec: R, survey: Survey) -> Result<Outputs<R>, String> {
        let (dest, chosen) = destination();
        let job = std::env::var("SLURM_JOB_ID").ok().filter(|j| !j.is_empty());
        let mut rec = rec;
        rec.set_survey(&survey);
        let mut o = Outputs { tool, rec, files: None, survey, cells: Vec::new(), chosen, failed: false };
        match CellFiles::create(tool, &dest, job.as_deref()) {
            Ok(f) => o.files = f,
            Err(e) if chosen => return Err(format!("{tool}: {e}")),
            Err(e) => o.warn("results", &e),
        }
        if let Some(f) = o.files.take() {
            o.rec.files_mut().clone_from(&f.written);
            match write_json_with_room(&o.rec, &f.record_path) {
                Ok(()) => o.files = Some(f),
                Err(e) if chosen => {
                    let line = format!("{tool}: cannot write {}: {e}", f.record_path.display());
                    f.discard();
                    return Err(line);
                }
                Err(e) => {
                    o.warn(&format!("cannot write {}", f.record_path.display()), &e);
                    f.discard();
                }
            }
        }
        Ok(o)
    }

    /// Says a failure to write once on stderr; the run goes on.
    pub fn warn(&mut self, what: &str, e: &dyn std::fmt::Display) {
        if !self.failed {
            crate::diag::say(&format!("{}: warning: {what}: {e}; the run goes on without it", self.tool));
        }
        self.failed = true;
    }

    /// Appends a test's cells to the CSV and keeps them.
    pub fn add(&mut self, new: Vec<Cell>) {
        if let Some(f) = self.files.as_mut() {
            if let Err(e) = f.append(&new, &self.survey) {
                let path = f.csv_path.display().to_string();
                self.warn(&format!("cannot append rows to {path}"), &e);
            }
        }
        self.cells.extend(new);
    }

    /// Judges the cells against their paths (with `--min-efficiency`,
    /// whose failing cells are named on stderr and make a complete run
    /// fail with status 1), writes the matrices (`subtitle` says what
    /// ran) and ends the record; the status and exit status to use.
    pub fn end(
        &mut self,
        status: RunStatus,
        detail: Option<String>,
        code: i32,
        min_pct: Option<f64>,
        subtitle: &str,
    ) -> (RunStatus, i32) {
        let j = judge(&self.cells, &self.survey, min_pct);
        let (mut status, mut code) = (status, code);
        for line in verdict_lines(self.tool, &j) {
            crate::diag::say(&line);
        }
        if j.passed == Some(false) && code == 0 {
            (status, code) = (RunStatus::Failed, 1);
        }
        if let Some(f) = self.files.as_mut() {
            let written = f.matrices(&self.cells, &j, subtitle);
            self.rec.files_mut().clone_from(&f.written);
            if let Err(e) = written {
                self.warn("cannot write a matrix", &e);
            }
        }
        self.rec.set_efficiency(j);
        if code == 0 && self.failed && self.chosen {
            code = 1;
        }
        self.rec.end(status, detail, code);
        if let Some(path) = self.files.as_ref().map(|f| f.record_path.clone()) {
            if let Err(e) = write_json(&self.rec, &path) {
                self.warn(&format!("cannot write {}", path.display()), &e);
                crate::report::record::end_on_full_disk(&path, &e, status, code);
                if self.chosen {
                    code = 1;
                }
            }
        }
        (status, code)
    }
}

/// The run record of `bandwidthTest` and `p2pBandwidthLatencyTest`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct CopyRecord {
    pub schema: &'static str,
    pub command: &'static str,
    #[serde(flatten)]
    pub run: LocalRun,
    /// The tool whose behaviour this follows.
    pub follows: &'static str,
    /// The options as the tool read them.
    pub settings: serde_json::Value,
    /// How the figures are counted, in words.
    pub conventions: BTreeMap<&'static str, &'static str>,
    /// What cuDriverGetVersion says (12080).
    pub cuda_driver_version: i32,
    #[serde(flatten)]
    pub survey: Survey,
    pub efficiency: Option<Judgement>,
    pub files: BTreeMap<String, String>,
    pub environment: BTreeMap<String, String>,
}

pub(crate) const COPY_SCHEMA: &str = "commbench-gpu-copy-record/1";

impl CopyRecord {
    pub fn running(
        tool: &'static str,
        follows: &'static str,
        settings: serde_json::Value,
        host: String,
        command_line: Vec<String>,
    ) -> CopyRecord {
        CopyRecord {
            schema: COPY_SCHEMA,
            command: tool,
            run: LocalRun::starting(host, command_line),
            follows,
            settings,
            conventions: BTreeMap::new(),
            cuda_driver_version: 0,
            survey: Survey::default(),
            efficiency: None,
            files: BTreeMap::new(),
            environment: relevant_environment(),
        }
    }
}

impl CellRecord for CopyRecord {
    fn files_mut(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.files
    }

    fn set_survey(&mut self, s: &Survey) {
        self.survey = s.clone();
    }

    fn set_efficiency(&mut self, j: Judgement) {
        self.efficiency = Some(j);
    }

    fn end(&mut self, status: RunStatus, detail: Option<String>, exit_code: i32) {
        self.run.end(status, detail, exit_code);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_bw::survey::{HostLink, Paths};
    use crate::gpu_bw::topology::{PairPath, PciRelation, PeerAttributes};

    fn peak(class: &str, gbps: Option<f64>) -> GpuPeak {
        GpuPeak {
            class: class.into(),
            peak_mbps: gbps.map(|g| g * 1e3),
            unknown: gbps.is_none().then(|| "not known".into()),
            how: "h".into(),
            sources: Vec::new(),
        }
    }

    fn survey() -> Survey {
        let pair = |src, dst, p| PairPath {
            src,
            dst,
            attributes: PeerAttributes { can_access_peer: Some(true), ..Default::default() },
            pci: PciRelation::Unknown,
            label: String::new(),
            peak: Some(p),
        };
        Survey::of_paths(Paths {
            pairs: vec![
                pair(0, 1, peak("NVLink x1", Some(25.0))),
                pair(1, 0, peak("NVLink x1", Some(25.0))),
                pair(0, 2, peak("NVLink x2", Some(50.0))),
                pair(2, 0, peak("NVLink?", None)),
            ],
            host_links: vec![HostLink { gpu: 0, peak: peak("PCIe link", Some(15.75)) }],
            nvml_unknown: None,
        })
    }

    fn cell(test: &str, from: &str, to: &str, value: f64) -> Cell {
        Cell {
            test: test.into(),
            engine: "ce",
            matrix: String::new(),
            row: None,
            column: None,
            from: from.into(),
            to: to.into(),
            host_memory: "",
            peer_access: None,
            bytes: 1,
            loops: None,
            samples: None,
            statistic: "",
            value,
            unit: Unit::GBps,
            both_ways: false,
            judged: true,
        }
    }

    #[test]
    fn cells_are_judged_against_their_paths_and_grouped_per_test() {
        let s = survey();
        let mut both = cell("bi", "gpu0", "gpu1", 45.0);
        both.both_ways = true;
        let mut small = cell("h2d", "host", "gpu0", 1.0);
        small.judged = false;
        let mut latency = cell("lat", "gpu0", "gpu1", 2.0);
        latency.unit = Unit::Us;
        let cells = vec![
            cell("w", "gpu0", "gpu1", 20.0),
            cell("w", "gpu1", "gpu0", 24.0),
            cell("w", "gpu0", "gpu2", 49.0),
            cell("w", "gpu2", "gpu0", 30.0),
            cell("w", "gpu0", "gpu0", 300.0),
            cell("w", "peers", "gpu0", 70.0),
            both,
            small,
            cell("h2d", "host", "gpu0", 12.6),
            latency,
        ];
        // Twice the peak both ways; none within a GPU or over several
        // paths; a latency has a path but no share.
        assert_eq!(cells[6].peak(&s).unwrap().peak_mbps, Some(50_000.0));
        assert!(cells[6].peak(&s).unwrap().how.ends_with("both directions at once (x2)"));
        assert_eq!((cells[4].peak(&s), cells[5].peak(&s)), (None, None));
        assert_eq!(cells[9].peak(&s).unwrap().class, "NVLink x1");
        let j = judge(&cells, &s, Some(85.0));
        let names: Vec<&str> = j.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "w GPU 0 -> GPU 1",
                "w GPU 1 -> GPU 0",
                "w GPU 0 -> GPU 2",
                "w GPU 2 -> GPU 0",
                "bi GPU 0 <-> GPU 1",
                "h2d host -> GPU 0"
            ]
        );
        assert_eq!(j.classes.len(), 1);
        assert_eq!(j.classes[0].test, "w");
        let classes: Vec<(&str, usize)> = j.classes[0].classes.iter().map(|c| (c.class.as_str(), c.pairs)).collect();
        assert_eq!(classes, [("NVLink x2", 1), ("NVLink?", 1), ("NVLink x1", 2)]);
        // 20/25, the unknown peak, 45/50 passes, 12.6/15.75.
        assert_eq!(j.failing.len(), 3, "{:?}", j.failing);
        assert_eq!(j.passed, Some(false));
        assert!(j.below(0) && !j.below(1) && !j.below(2) && j.below(3) && !j.below(6) && j.below(8));
        let lines = verdict_lines("tool", &j);
        assert_eq!(lines[0], "tool: --min-efficiency 85%: 3 of 6 bandwidths below their path's share:");
        assert!(lines[1].starts_with("tool:   w GPU 2 -> GPU 0 NVLink?: cannot judge"), "{lines:?}");
        assert!(verdict_lines("tool", &judge(&cells, &s, None)).is_empty());
        assert!(verdict_lines("tool", &judge(&cells, &s, Some(10.0))).len() == 2, "the unknown peak still fails");
        let nothing = judge(&cells[4..6], &s, Some(10.0));
        assert_eq!(nothing.passed, None);
        assert!(verdict_lines("tool", &nothing)[0].contains("nothing to judge"));
    }

    #[test]
    fn csv_rows_square_matrices_and_the_option() {
        let s = survey();
        let mut c = cell("w", "gpu0", "gpu1", 20.0);
        (c.row, c.column, c.peer_access, c.loops, c.samples, c.statistic) =
            (Some(0), Some(1), Some(true), Some(16), Some(3), "median");
        let text = String::from_utf8(csv_rows("nvbandwidth", &[c.clone()], &s).unwrap()).unwrap();
        let row = text.trim_end().rsplit_once(',').unwrap().0;
        assert_eq!(row, "nvbandwidth,w,ce,,0,1,gpu0,gpu1,,on,1,16,3,median,20,GB/s,NVLink x1,25,80.0");
        assert_eq!(COLUMNS.len(), row.split(',').count() + 1);
        let mut d = c.clone();
        (d.row, d.column) = (Some(1), Some(0));
        let m = square([c.clone(), d].iter()).unwrap();
        assert_eq!((m.size(), m.get(0, 1), m.get(1, 0), m.get(0, 0)), (2, Some(20.0), Some(20.0), None));
        // One row of GPUs (all-to-one) is not a GPU-by-GPU matrix.
        let mut e = c.clone();
        (e.row, e.column) = (Some(0), Some(2));
        assert!(square([c.clone(), e].iter()).is_none());
        assert!(square([cell("x", "host", "gpu0", 1.0)].iter()).is_none());
        assert_eq!(min_efficiency_arg(None), Ok(None));
        assert_eq!(min_efficiency_arg(Some("80%".into())), Ok(Some(80.0)));
        assert!(min_efficiency_arg(Some("".into())).unwrap_err().starts_with("--min-efficiency=: give a percentage"));
        assert_eq!(
            (end("gpu12"), end("host"), end("peers"), end("gpux")),
            (Some(End::Gpu(12)), Some(End::Host), None, None)
        );
    }
}
