//! What a suite run reports: the data kept in `suite.json` and the
//! `summary.md` a person reads: environment, a status table, and per
//! benchmark its key message sizes (latency or bandwidth) taken from its
//! CSV, with links to its files and plot.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::binaries::Maker;
use super::plan::Shape;
use crate::bytes::exact_label;
use crate::datatype::Datatype;
use crate::diag::printable;
use crate::launch::exec::Status;
use crate::launch::{Launcher, Layout};
use crate::report::csv::CsvRow;
use crate::report::record::{RankInfo, RunHeader};
use crate::report::slurm::SlurmInfo;

pub(crate) const SCHEMA: &str = "commbench-suite/1";

/// Message sizes shown in the summary when the run measured them.
pub(crate) const KEY_SIZES: &[usize] = &[8, 1 << 10, 64 << 10, 1 << 20, 4 << 20];

/// One benchmark of the run.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct BenchResult {
    pub benchmark: String,
    pub status: Status,
    pub exit_code: Option<i32>,
    pub duration_s: f64,
    /// Why it did not pass.
    pub detail: Option<String>,
    pub layout: Layout,
    /// The command line that runs it alone (its own launch's).
    pub command: Vec<String>,
    /// With `--one-launch`: the index in [`SuiteReport::launches`] of the
    /// launch it shared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch: Option<usize>,
    /// Suite options this benchmark did not take.
    pub notes: Vec<String>,
    /// Its files in the run directory (names only); missing ones are None.
    pub stdout: String,
    pub stderr: String,
    pub csv: Option<String>,
    pub record: Option<String>,
    /// Where its ranks ran, from its run record.
    pub placement: Option<String>,
    /// Misplacement its run record warns about.
    pub placement_warnings: Vec<String>,
    /// What `--precision` did to its sizes, from its CSV (None where it
    /// ran fixed counts).
    pub precision: Option<PrecisionTally>,
    /// Its sizes whose noise verdict is not `ok`, e.g. `8 B: drift`.
    pub noise_flags: Vec<String>,
    /// The line saying its host was busy during its run, from its run
    /// record (crate::procs::load's rule); absent for a quiet run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy: Option<String>,
}

/// How the detail of a benchmark the suite never started begins (a signal
/// came first).
pub(crate) const NOT_STARTED: &str = "not started";

impl BenchResult {
    /// Whether it was started (a launch of its own or a shared one).
    fn started(&self) -> bool {
        !self.detail.as_deref().is_some_and(|d| d.starts_with(NOT_STARTED))
    }
}

/// What `--precision` did to one benchmark's sizes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct PrecisionTally {
    /// Rows the rule ended, and how many for each reason.
    pub sizes: usize,
    pub stopped_by_precision: usize,
    pub stopped_by_ceiling: usize,
    pub stopped_by_time_limit: usize,
    /// Timed iterations run over those rows, and the fixed counts (OSU's,
    /// or `-i`) they replaced.
    pub iterations_run: u64,
    pub iterations_fixed: u64,
}

impl PrecisionTally {
    /// Iterations run as a share of the fixed counts, in percent.
    pub(crate) fn share_pct(&self) -> f64 {
        100.0 * self.iterations_run as f64 / self.iterations_fixed.max(1) as f64
    }

    /// Adds another benchmark's tally (the suite's total row).
    pub fn add(&mut self, o: &PrecisionTally) {
        self.sizes += o.sizes;
        self.stopped_by_precision += o.stopped_by_precision;
        self.stopped_by_ceiling += o.stopped_by_ceiling;
        self.stopped_by_time_limit += o.stopped_by_time_limit;
        self.iterations_run += o.iterations_run;
        self.iterations_fixed += o.iterations_fixed;
    }
}

/// The tally of the rows a `--precision` rule ended (those with a
/// `stop_reason`); None when there are none.
pub(crate) fn precision_tally(rows: &[CsvRow]) -> Option<PrecisionTally> {
    let mut t = PrecisionTally::default();
    for r in rows {
        let (Some(reason), Some(ceiling)) = (r.stop_reason.as_deref(), r.iterations_ceiling) else { continue };
        t.sizes += 1;
        match reason {
            "precision" => t.stopped_by_precision += 1,
            "ceiling" => t.stopped_by_ceiling += 1,
            _ => t.stopped_by_time_limit += 1,
        }
        t.iterations_run += r.iterations_run.unwrap_or(r.iterations) as u64;
        t.iterations_fixed += ceiling as u64;
    }
    (t.sizes > 0).then_some(t)
}

/// Whether a benchmark's rows have no message size (osu_barrier,
/// osu_ibarrier, the start-up ones).
fn sizeless(benchmark: &str) -> bool {
    crate::bench::registry::lookup(benchmark).is_some_and(|e| !e.spec.typed())
}

/// What a row is, in words: its size, and its datatype, window or form
/// where the run has several.
fn row_label(r: &CsvRow, rows: &[CsvRow]) -> String {
    let several = |f: &dyn Fn(&CsvRow) -> String| rows.iter().any(|o| f(o) != f(r));
    let mut label = if sizeless(&r.benchmark) { "no size".to_string() } else { exact_label(r.size_bytes as u64) };
    if several(&|o| o.datatype.map(|d| d.mpi_name().to_string()).unwrap_or_default()) {
        if let Some(d) = r.datatype {
            label = format!("{} {label}", d.mpi_name());
        }
    }
    if several(&|o| o.window.map(|w| w.to_string()).unwrap_or_default()) {
        if let Some(w) = r.window {
            label = format!("{label} window {w}");
        }
    }
    if let Some(p) = r.placement {
        label = format!("{label} {}", if p { "in-place" } else { "out-of-place" });
    }
    label
}

/// Sizes whose noise verdict is not `ok`, as `LABEL: VERDICT`.
pub(crate) fn noise_flags(rows: &[CsvRow]) -> Vec<String> {
    rows.iter().filter_map(|r| Some(format!("{}: {}", row_label(r, rows), flagged(r)?))).collect()
}

/// A row's noise verdict where it flags something (not empty, not `ok`).
fn flagged(r: &CsvRow) -> Option<&str> {
    r.noise.as_deref().filter(|v| !v.is_empty() && *v != "ok")
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SuiteReport {
    pub schema: String,
    pub started_utc: String,
    pub finished_utc: String,
    pub run_dir: String,
    /// Where `commbench suite` itself ran.
    pub host: String,
    pub commbench_version: String,
    pub commbench_commit: String,
    pub mpi_library: String,
    pub launcher: Launcher,
    pub launcher_args: Vec<String>,
    /// Variables the suite set for the launcher (`K=V`).
    pub launcher_env: Vec<String>,
    pub shape: Shape,
    pub hostfile: Option<String>,
    /// The arguments every benchmark got (before per-benchmark ones).
    pub common_args: Vec<String>,
    pub bin_dir: String,
    /// Whose binaries ran: commbench's, or OSU's own (CSV made from their
    /// output).
    pub binaries: Maker,
    /// Hosts the benchmarks ran on, from their run records.
    pub hosts: Vec<String>,
    pub slurm: Option<SlurmInfo>,
    pub benchmarks: Vec<BenchResult>,
    /// `--one-launch`: the launches benchmarks shared, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub launches: Vec<super::shared::SharedLaunch>,
    /// What `--locate-on-hang` found, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locate: Option<LocateSummary>,
}

/// The search `--locate-on-hang` ran after a hang: its record (relative
/// to the run directory), exit status and finding lines.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct LocateSummary {
    pub record: String,
    pub exit_code: i32,
    pub probes: usize,
    pub findings: Vec<String>,
}

impl SuiteReport {
    pub fn passed(&self) -> usize {
        self.benchmarks.iter().filter(|b| b.status == Status::Passed).count()
    }
}

/// Key rows of one benchmark's CSV, ready to print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyTable {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A CSV column worth showing: its value, heading, and decimals.
type Shown = (fn(&CsvRow) -> Option<f64>, &'static str, usize);

/// CSV columns worth showing, in order.
const COLUMNS: &[Shown] = &[
    (|r| r.avg_lat_us, "latency (us)", 2),
    (|r| r.min_lat_us, "min (us)", 2),
    (|r| r.max_lat_us, "max (us)", 2),
    (|r| r.bw_mbps, "bandwidth (MB/s)", 2),
    (|r| r.msg_rate_per_s, "messages/s", 0),
    (|r| r.busbw_gbps, "busbw (GB/s)", 3),
    (|r| r.efficiency_pct, "of path peak (%)", 1),
];

/// Where the ranks of a run record ran, in one line: each rank's host,
/// cpus and NIC for up to 8 ranks, else how many ranks on how many hosts.
pub(crate) fn placement_line(run: &RunHeader) -> Option<String> {
    let ranks = &run.ranks;
    if ranks.is_empty() {
        return None;
    }
    if ranks.len() > 8 {
        return Some(format!("{} ranks on {} host(s)", ranks.len(), run.hosts.len()));
    }
    let one = |r: &RankInfo| {
        let mut s = format!("rank {} on {} cpus {}", r.rank, r.host, r.cpus);
        if let Some(nic) = r.placement.as_ref().and_then(|p| p.nic.as_ref()) {
            s.push_str(&format!(" nic {}", nic.name));
        }
        s
    };
    Some(ranks.iter().map(one).collect::<Vec<_>>().join("; "))
}

/// Reads a benchmark's CSV back as the rows its writer wrote; rows that
/// do not read (cut short by a killed job) are left out.
pub fn read_csv(path: &Path) -> Option<Vec<CsvRow>> {
    let mut r = csv::Reader::from_path(path).ok()?;
    Some(r.deserialize::<CsvRow>().filter_map(Result::ok).collect())
}

/// The rows at the key sizes (or, when the run measured none of them, its
/// smallest and largest size), with the columns that have values.
pub(crate) fn key_table(rows: &[CsvRow]) -> Option<KeyTable> {
    let barrier = rows.iter().all(|r| sizeless(&r.benchmark));
    let mut chosen: Vec<&CsvRow> = if barrier {
        rows.iter().collect()
    } else {
        rows.iter().filter(|r| KEY_SIZES.contains(&r.size_bytes)).collect()
    };
    if chosen.is_empty() {
        let (lo, hi) = (rows.iter().map(|r| r.size_bytes).min()?, rows.iter().map(|r| r.size_bytes).max()?);
        chosen = rows.iter().filter(|r| r.size_bytes == lo || r.size_bytes == hi).collect();
    }
    let cols: Vec<&Shown> = COLUMNS.iter().filter(|(value, ..)| chosen.iter().any(|r| value(r).is_some())).collect();
    let datatypes: Vec<Option<Datatype>> = {
        let mut d: Vec<Option<Datatype>> = chosen.iter().map(|r| r.datatype).collect();
        d.dedup();
        d
    };
    let show_type = datatypes.len() > 1;
    let show_window = chosen.iter().any(|r| r.window.is_some()) && {
        let mut w: Vec<Option<usize>> = chosen.iter().map(|r| r.window).collect();
        w.sort();
        w.dedup();
        w.len() > 1
    };
    let mut headers = Vec::new();
    if show_type {
        headers.push("datatype".to_string());
    }
    headers.push("size".into());
    if show_window {
        headers.push("window".into());
    }
    headers.extend(cols.iter().map(|(_, h, _)| h.to_string()));
    let show_noise = chosen.iter().any(|r| flagged(r).is_some());
    if show_noise {
        headers.push("noise".into());
    }
    let rows = chosen
        .iter()
        .map(|r| {
            let mut line = Vec::new();
            if show_type {
                line.push(r.datatype.map(|d| d.mpi_name().to_string()).unwrap_or_default());
            }
            line.push(if barrier { "-".into() } else { exact_label(r.size_bytes as u64) });
            if show_window {
                line.push(r.window.map(|w| w.to_string()).unwrap_or_default());
            }
            for (value, _, decimals) in &cols {
                line.push(value(r).map(|v| format!("{v:.prec$}", prec = *decimals)).unwrap_or_default());
            }
            if show_noise {
                line.push(flagged(r).map(|v| format!("**{v}**")).unwrap_or_default());
            }
            line
        })
        .collect();
    Some(KeyTable { headers, rows })
}

/// One table over all benchmarks: each benchmark's main value (latency or
/// bandwidth, from its key table) at each key size any of them measured.
pub(crate) fn glance(order: &[String], tables: &HashMap<String, KeyTable>) -> Option<KeyTable> {
    /// Benchmark, metric heading, (size label, value) pairs.
    type Line = (String, String, Vec<(String, String)>);
    let mut sizes: Vec<String> = Vec::new();
    let mut lines: Vec<Line> = Vec::new();
    for name in order {
        let Some(t) = tables.get(name) else { continue };
        let Some(size_col) = t.headers.iter().position(|h| h == "size") else { continue };
        let metric_col = size_col + 1 + usize::from(t.headers.get(size_col + 1).is_some_and(|h| h == "window"));
        let Some(metric) = t.headers.get(metric_col) else { continue };
        let mut values = Vec::new();
        for row in &t.rows {
            let (Some(size), Some(v)) = (row.get(size_col), row.get(metric_col)) else { continue };
            if values.iter().any(|(s, _)| s == size) {
                continue; // first datatype or window only
            }
            if !sizes.contains(size) {
                sizes.push(size.clone());
            }
            values.push((size.clone(), v.clone()));
        }
        lines.push((name.clone(), metric.clone(), values));
    }
    if lines.is_empty() {
        return None;
    }
    // Key sizes in increasing order; barrier's "-" (no size) last.
    let order_of = |l: &String| KEY_SIZES.iter().position(|&k| exact_label(k as u64) == *l).unwrap_or(usize::MAX);
    sizes.sort_by_key(order_of);
    let mut headers = vec!["benchmark".to_string(), "value".to_string()];
    headers.extend(sizes.iter().map(|s| if s == "-" { "no size".to_string() } else { s.clone() }));
    let rows = lines
        .into_iter()
        .map(|(name, metric, values)| {
            let mut row = vec![format!("[{name}](#{name})"), metric];
            for s in &sizes {
                row.push(values.iter().find(|(k, _)| k == s).map(|(_, v)| v.clone()).unwrap_or_default());
            }
            row
        })
        .collect();
    Some(KeyTable { headers, rows })
}

/// A markdown table. Its cells hold text read from files (hosts, the MPI
/// library, a failure's detail, CSV values), so each is [`printable`]:
/// no control character, and no line break to end the table early.
fn table(out: &mut String, headers: &[String], rows: &[Vec<String>], right_from: usize) {
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let rule: Vec<&str> = (0..headers.len()).map(|i| if i >= right_from { "---:" } else { "---" }).collect();
    let _ = writeln!(out, "|{}|", rule.join("|"));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| printable(c).replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

fn code(s: &str) -> String {
    format!("`{}`", s.replace('`', "'"))
}

fn slurm_line(s: &SlurmInfo) -> String {
    let mut parts = vec![format!("job {}", s.job_id)];
    if let Some(n) = &s.job_name {
        parts.push(format!("({n})"));
    }
    if let Some(n) = &s.node_list {
        parts.push(format!("on {n}"));
    }
    if let Some(p) = &s.partition {
        parts.push(format!("partition {p}"));
    }
    if let Some(t) = s.ntasks {
        parts.push(format!("{t} tasks"));
    }
    if let Some(t) = &s.tasks_per_node {
        parts.push(format!("tasks per node {t}"));
    }
    parts.join(", ")
}

/// The `--precision` section: per benchmark the sizes it ended and why,
/// the iterations run against the fixed counts they replaced, and the
/// time the benchmark took; nothing when no benchmark ran under it.
fn precision_section(o: &mut String, r: &SuiteReport) {
    let tallied: Vec<(&BenchResult, &PrecisionTally)> =
        r.benchmarks.iter().filter_map(|b| b.precision.as_ref().map(|t| (b, t))).collect();
    if tallied.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n## Precision\n");
    let _ = writeln!(
        o,
        "Each size ran until the 95% confidence interval of its value was within the target, at most OSU's count \
         (`ceiling`) or the time limit. Iterations below are the timed ones.\n"
    );
    let line = |name: String, t: &PrecisionTally, secs: f64| {
        vec![
            name,
            t.sizes.to_string(),
            t.stopped_by_precision.to_string(),
            t.stopped_by_ceiling.to_string(),
            t.stopped_by_time_limit.to_string(),
            t.iterations_run.to_string(),
            t.iterations_fixed.to_string(),
            format!("{:.1}%", t.share_pct()),
            format!("{secs:.1} s"),
        ]
    };
    let mut rows = Vec::new();
    let mut total = PrecisionTally::default();
    let mut secs = 0.0;
    for (b, t) in &tallied {
        rows.push(line(format!("[{0}](#{0})", b.benchmark), t, b.duration_s));
        total.add(t);
        secs += b.duration_s;
    }
    if tallied.len() > 1 {
        rows.push(line("**all**".into(), &total, secs));
    }
    let headers: Vec<String> = [
        "benchmark",
        "sizes",
        "precise",
        "ceiling",
        "time limit",
        "iterations run",
        "fixed counts",
        "share",
        "duration",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    table(o, &headers, &rows, 1);
}

/// The lines the suite ends with on stdout: one per benchmark (name,
/// status, duration, why it did not pass) and the summary's path.
pub(crate) fn status_lines(r: &SuiteReport, summary_path: &Path) -> String {
    let mut o = String::new();
    for b in &r.benchmarks {
        // The detail quotes what the benchmark printed: escaped.
        let detail = b.detail.as_ref().map(|d| format!("  {}", printable(d))).unwrap_or_default();
        let _ = writeln!(o, "{:<20} {:<8} {:>6.1} s{detail}", b.benchmark, b.status.word(), b.duration_s);
    }
    if let Some(line) = r.launches_line() {
        let _ = writeln!(o, "{line}");
    }
    let _ = writeln!(o, "{} of {} passed; summary: {}", r.passed(), r.benchmarks.len(), summary_path.display());
    o
}

impl SuiteReport {
    /// How many times MPI started: the shared launches, and each benchmark
    /// that ran in a launch of its own.
    fn mpi_starts(&self) -> usize {
        let alone = self.benchmarks.iter().filter(|b| b.launch.is_none() && b.started()).count();
        self.launches.len() + alone
    }

    /// With `--one-launch`: "one launch: 8 benchmarks, MPI started 1 time
    /// (7 start-ups saved)".
    pub(crate) fn launches_line(&self) -> Option<String> {
        if self.launches.is_empty() {
            return None;
        }
        let n = self.benchmarks.iter().filter(|b| b.started()).count();
        let starts = self.mpi_starts();
        Some(format!(
            "one launch: {n} benchmark(s), MPI started {starts} time(s) ({} start-up(s) saved)",
            n.saturating_sub(starts)
        ))
    }
}

/// `--one-launch`: which benchmarks shared which launch.
fn launches_section(o: &mut String, r: &SuiteReport) {
    let Some(line) = r.launches_line() else { return };
    let _ = writeln!(o, "\n## Launches\n");
    let _ = writeln!(
        o,
        "With `--one-launch`, {}. Each benchmark ran on the job as its binary runs alone, with its own files; \
         the status table's commands run it alone.\n",
        line.trim_start_matches("one launch: ")
    );
    let rows: Vec<Vec<String>> = r
        .launches
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut ended = l.status.word().to_string();
            if let Some(d) = &l.detail {
                ended.push_str(&format!(": {}", printable(d)));
            }
            if l.benchmarks.len() < l.planned {
                ended.push_str(&format!(" ({} of {} began)", l.benchmarks.len(), l.planned));
            }
            // The plan is the benchmarks' own command lines (under
            // Commands); suite.json has the whole line.
            let mut command = l.command.clone();
            if let Some(last) = command.last_mut() {
                *last = "PLAN".into();
            }
            vec![
                (i + 1).to_string(),
                if l.benchmarks.is_empty() { "none began".into() } else { l.benchmarks.join(", ") },
                format!("{:.1} s", l.duration_s),
                ended,
                code(&crate::launch::shell_line(&command)),
            ]
        })
        .collect();
    let headers: Vec<String> =
        ["launch", "benchmarks", "duration", "ended", "command"].iter().map(|s| s.to_string()).collect();
    table(o, &headers, &rows, usize::MAX);
}

/// summary.md. `tables` holds each benchmark's key rows, `plots` the image
/// files made for the run (linked under the benchmark they are named after).
pub(crate) fn render(r: &SuiteReport, tables: &HashMap<String, KeyTable>, plots: &[PathBuf]) -> String {
    let mut o = String::new();
    let total = r.benchmarks.len();
    let passed = r.passed();
    let _ = writeln!(o, "# commbench suite: {passed} of {total} passed\n");
    let failed: Vec<&str> =
        r.benchmarks.iter().filter(|b| b.status != Status::Passed).map(|b| b.benchmark.as_str()).collect();
    if !failed.is_empty() {
        let _ = writeln!(
            o,
            "**Not passed: {}** (see the status table and each benchmark's `.stderr`).\n",
            failed.join(", ")
        );
    }

    let busy: Vec<&str> = r.benchmarks.iter().filter(|b| b.busy.is_some()).map(|b| b.benchmark.as_str()).collect();
    if !busy.is_empty() {
        let _ = writeln!(
            o,
            "**Host busy during: {}** (something else competed for the CPUs: read their figures with care).\n",
            busy.join(", ")
        );
    }

    let _ = writeln!(o, "## Environment\n");
    let mut env: Vec<Vec<String>> = vec![
        vec!["date".into(), format!("{} to {}", r.started_utc, r.finished_utc)],
        vec!["hosts".into(), if r.hosts.is_empty() { r.host.clone() } else { r.hosts.join(", ") }],
        vec!["MPI library".into(), crate::job::launcher::short_library_name(&r.mpi_library)],
        vec![
            "commbench".into(),
            format!("{} (commit {}), OSU {} compatible", r.commbench_version, r.commbench_commit, crate::OSU_VERSION),
        ],
        vec![
            "launcher".into(),
            format!(
                "{}{}{}",
                code(&r.launcher.program),
                if r.launcher_args.is_empty() {
                    String::new()
                } else {
                    format!(" with {}", code(&r.launcher_args.join(" ")))
                },
                if r.launcher_env.is_empty() {
                    String::new()
                } else {
                    format!(" (suite set {} for it)", code(&r.launcher_env.join(" ")))
                }
            ),
        ],
        vec![
            "ranks".into(),
            format!(
                "np {}{}, {} node(s); point-to-point on 2 ranks",
                r.shape.np,
                r.shape.ppn.map(|p| format!(", {p} per node")).unwrap_or_default(),
                r.shape.nodes
            ),
        ],
    ];
    if let Some(h) = &r.hostfile {
        env.push(vec!["hostfile".into(), code(h)]);
    }
    if !r.common_args.is_empty() {
        env.push(vec!["benchmark arguments".into(), code(&r.common_args.join(" "))]);
    }
    if let Some(s) = &r.slurm {
        env.push(vec!["Slurm".into(), slurm_line(s)]);
    }
    let whose = match r.binaries {
        Maker::Commbench => "",
        Maker::Osu => " (OSU's own: no run records; CSV made from their output)",
    };
    env.push(vec!["binaries".into(), format!("{}{whose}", code(&r.bin_dir))]);
    table(&mut o, &["setting".into(), "value".into()], &env, usize::MAX);

    let _ = writeln!(o, "\n## Status\n");
    let rows: Vec<Vec<String>> = r
        .benchmarks
        .iter()
        .map(|b| {
            let status = match b.status {
                Status::Passed => "passed".to_string(),
                s => format!("**{}**", s.word().to_uppercase()),
            };
            let mut note = b.detail.clone().unwrap_or_default();
            // A busy host is flagged beside the status (its line is in
            // the benchmark's section).
            for n in b.notes.iter().map(String::as_str).chain(b.busy.as_ref().map(|_| "host busy")) {
                if !note.is_empty() {
                    note.push_str("; ");
                }
                note.push_str(n);
            }
            vec![
                format!("[{0}](#{0})", b.benchmark),
                status,
                b.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
                b.layout.np.to_string(),
                format!("{:.1} s", b.duration_s),
                note,
            ]
        })
        .collect();
    let headers: Vec<String> =
        ["benchmark", "status", "exit", "ranks", "duration", "note"].iter().map(|s| s.to_string()).collect();
    table(&mut o, &headers, &rows, usize::MAX);

    launches_section(&mut o, r);

    precision_section(&mut o, r);

    if let Some(l) = &r.locate {
        let _ = writeln!(o, "\n## After the hang: commbench locate\n");
        if l.findings.is_empty() {
            let _ = writeln!(o, "Nothing found: the hosts ran pairs together within the bound.");
        }
        for f in &l.findings {
            let _ = writeln!(o, "- {}", printable(f.trim_start_matches("found: ")));
        }
        let _ =
            writeln!(o, "\n{} probe(s); every probe's command and outcome: [{}]({}).", l.probes, l.record, l.record);
    }

    let order: Vec<String> = r.benchmarks.iter().map(|b| b.benchmark.clone()).collect();
    if let Some(g) = glance(&order, tables) {
        let _ = writeln!(o, "\n## At a glance\n");
        table(&mut o, &g.headers, &g.rows, 2);
    }

    for b in &r.benchmarks {
        let _ = writeln!(o, "\n## {}\n", b.benchmark);
        match tables.get(&b.benchmark) {
            Some(t) if !t.rows.is_empty() => {
                table(&mut o, &t.headers, &t.rows, if t.headers[0] == "size" { 1 } else { 2 })
            }
            _ => {
                let _ =
                    writeln!(o, "No results{}.", if b.status == Status::Passed { "" } else { " (it did not pass)" });
            }
        }
        if !b.noise_flags.is_empty() {
            const SHOWN: usize = 12;
            let mut list = b.noise_flags.iter().take(SHOWN).cloned().collect::<Vec<_>>().join("; ");
            if b.noise_flags.len() > SHOWN {
                list.push_str(&format!("; and {} more (see the CSV's `noise` column)", b.noise_flags.len() - SHOWN));
            }
            let n = b.noise_flags.len();
            let list = printable(&list);
            let _ = writeln!(o, "\n**Noise flagged** at {n} size{}: {list}", if n == 1 { "" } else { "s" });
        }
        if let Some(busy) = &b.busy {
            let _ = writeln!(o, "\n**Host busy:** {}", printable(busy));
        }
        if let Some(p) = &b.placement {
            let _ = writeln!(o, "\nRanks: {}", printable(p));
        }
        for w in &b.placement_warnings {
            let _ = writeln!(o, "\n**Placement warning:** {}", printable(w));
        }
        // Plots: linked here when the run made one for this benchmark.
        for p in plots.iter().filter(|p| p.file_stem().is_some_and(|s| s == b.benchmark.as_str())) {
            if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
                let _ = writeln!(o, "\n![{} plot]({name})", b.benchmark);
            }
        }
        let mut files = vec![format!("[OSU output]({})", b.stdout), format!("[stderr]({})", b.stderr)];
        if let Some(c) = &b.csv {
            files.push(format!("[CSV]({c})"));
        }
        if let Some(j) = &b.record {
            files.push(format!("[run record]({j})"));
        }
        let _ = writeln!(o, "\nFiles: {}", files.join(" · "));
    }

    let _ = writeln!(o, "\n## Commands\n\n```sh");
    for b in &r.benchmarks {
        let _ = writeln!(o, "{}", crate::launch::shell_line(&b.command));
    }
    let _ = writeln!(o, "```");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::LauncherKind;

    /// A row as the reader gives it from a CSV holding only these columns.
    fn row(pairs: &[(&str, &str)]) -> CsvRow {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(pairs.iter().map(|(k, _)| k)).unwrap();
        w.write_record(pairs.iter().map(|(_, v)| v)).unwrap();
        let text = w.into_inner().unwrap();
        csv::Reader::from_reader(text.as_slice()).deserialize().next().unwrap().unwrap()
    }

    /// What the benchmark binaries write reads back into the key table;
    /// a row cut short by a kill is left out.
    #[test]
    fn key_table_from_a_written_csv() {
        use crate::report::{csv::CsvSink, Row, RunContext, Sink};
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("osu_bw.csv");
        let ctx = RunContext { benchmark: "osu_bw", backend: "mpi", np: 2, pairs: Some(1), path: None };
        let mut sink =
            CsvSink::new(crate::report::safe_file::RowFile::new(std::fs::File::create(&path).unwrap()).unwrap(), ctx)
                .unwrap();
        for (size, bw) in [(1, 0.5), (8, 4.25), (1024, 512.0)] {
            let r = Row { size, window: Some(64), bw_mbps: Some(bw), ..Row::default() };
            sink.row(&r).unwrap();
        }
        drop(sink);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("osu_bw,mpi,,2048,,64");
        std::fs::write(&path, text).unwrap();
        let rows = read_csv(&path).unwrap();
        assert_eq!(rows.len(), 3);
        let t = key_table(&rows).unwrap();
        assert_eq!(t.headers, ["size", "bandwidth (MB/s)"]);
        assert_eq!(t.rows, vec![vec!["8 B".to_string(), "4.25".into()], vec!["1 KiB".into(), "512.00".into()]]);
        assert_eq!(read_csv(&d.path().join("missing.csv")), None);
    }

    #[test]
    fn latency_keys() {
        let rows: Vec<_> = [1usize, 8, 1024, 2048]
            .iter()
            .map(|s| {
                row(&[
                    ("benchmark", "osu_latency"),
                    ("size_bytes", &s.to_string()),
                    ("avg_lat_us", "0.456"),
                    ("bw_MBps", ""),
                ])
            })
            .collect();
        let t = key_table(&rows).unwrap();
        assert_eq!(t.headers, ["size", "latency (us)"]);
        assert_eq!(t.rows, vec![vec!["8 B".to_string(), "0.46".into()], vec!["1 KiB".into(), "0.46".into()]]);
    }

    #[test]
    fn no_key_size_shows_ends_and_collective_columns() {
        let rows: Vec<_> = [2usize, 4, 16]
            .iter()
            .map(|s| {
                row(&[
                    ("benchmark", "osu_allreduce"),
                    ("size_bytes", &s.to_string()),
                    ("avg_lat_us", "2"),
                    ("min_lat_us", "1"),
                    ("max_lat_us", "3"),
                    ("busbw_GBps", "0.0012"),
                ])
            })
            .collect();
        let t = key_table(&rows).unwrap();
        assert_eq!(t.headers, ["size", "latency (us)", "min (us)", "max (us)", "busbw (GB/s)"]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[1], ["16 B", "2.00", "1.00", "3.00", "0.001"]);
    }

    /// A bandwidth row set against its path's peak shows the share.
    #[test]
    fn efficiency_beside_the_bandwidth() {
        let r = row(&[
            ("benchmark", "osu_bw"),
            ("size_bytes", "4194304"),
            ("bw_MBps", "9000"),
            ("path", "shared memory on vm"),
            ("peak_MBps", "45000"),
            ("efficiency_pct", "20"),
        ]);
        let t = key_table(&[r]).unwrap();
        assert_eq!(t.headers, ["size", "bandwidth (MB/s)", "of path peak (%)"]);
        assert_eq!(t.rows[0], ["4 MiB", "9000.00", "20.0"]);
    }

    #[test]
    fn barrier_and_mbw() {
        let t = key_table(&[row(&[("benchmark", "osu_barrier"), ("size_bytes", "0"), ("avg_lat_us", "3.5")])]).unwrap();
        assert_eq!(t.rows, vec![vec!["-".to_string(), "3.50".into()]]);
        let t = key_table(&[row(&[
            ("benchmark", "osu_mbw_mr"),
            ("size_bytes", "8"),
            ("bw_MBps", "12.5"),
            ("msg_rate_per_s", "1562500.4"),
        ])])
        .unwrap();
        assert_eq!(t.headers, ["size", "bandwidth (MB/s)", "messages/s"]);
        assert_eq!(t.rows[0], ["8 B", "12.50", "1562500"]);
        assert_eq!(key_table(&[]), None);
    }

    #[test]
    fn placement_lines() {
        use crate::report::record::samples;
        use crate::topo::report::{NicInfo, NicSource, RankPlacement};
        let mut run = samples::header();
        let nic = NicInfo {
            name: "mlx5_2".into(),
            kind: None,
            numa: None,
            cpus: String::new(),
            source: NicSource::NicOption,
        };
        run.hosts = vec!["a".into(), "b".into()];
        run.ranks = vec![samples::rank(0, "a", "80"), samples::rank(1, "b", "80")];
        run.ranks[0].placement = Some(RankPlacement { nic: Some(nic), ..RankPlacement::default() });
        assert_eq!(placement_line(&run).unwrap(), "rank 0 on a cpus 80 nic mlx5_2; rank 1 on b cpus 80");
        run.ranks = (0..16).map(|r| samples::rank(r, "a", "0")).collect();
        assert_eq!(placement_line(&run).unwrap(), "16 ranks on 2 host(s)");
        run.ranks.clear();
        assert_eq!(placement_line(&run), None);
    }

    #[test]
    fn one_table_over_all() {
        let mut t = HashMap::new();
        let kt = |h: &[&str], rows: &[&[&str]]| KeyTable {
            headers: h.iter().map(|s| s.to_string()).collect(),
            rows: rows.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect(),
        };
        t.insert("osu_bw".to_string(), kt(&["size", "bandwidth (MB/s)"], &[&["8 B", "200.00"], &["4 MiB", "9000.00"]]));
        t.insert("osu_barrier".to_string(), kt(&["size", "latency (us)", "min (us)"], &[&["-", "3.00", "2.00"]]));
        t.insert(
            "osu_allreduce".to_string(),
            kt(
                &["datatype", "size", "latency (us)"],
                &[&["MPI_INT", "1 KiB", "2.00"], &["MPI_FLOAT", "1 KiB", "9.00"], &["MPI_INT", "8 B", "1.00"]],
            ),
        );
        let order: Vec<String> =
            ["osu_bw", "osu_barrier", "osu_allreduce", "osu_latency"].iter().map(|s| s.to_string()).collect();
        let g = glance(&order, &t).unwrap();
        assert_eq!(g.headers, ["benchmark", "value", "8 B", "1 KiB", "4 MiB", "no size"]);
        assert_eq!(g.rows[0], ["[osu_bw](#osu_bw)", "bandwidth (MB/s)", "200.00", "", "9000.00", ""]);
        assert_eq!(g.rows[1], ["[osu_barrier](#osu_barrier)", "latency (us)", "", "", "", "3.00"]);
        assert_eq!(g.rows[2], ["[osu_allreduce](#osu_allreduce)", "latency (us)", "1.00", "2.00", "", ""]);
        assert_eq!(g.rows.len(), 3);
        assert_eq!(glance(&order, &HashMap::new()), None);
    }

    fn report() -> SuiteReport {
        let b = |name: &str, status, code, detail: Option<&str>| BenchResult {
            benchmark: name.into(),
            status,
            exit_code: code,
            duration_s: 1.25,
            detail: detail.map(String::from),
            layout: Layout { np: 2, ppn: None, nodes: Some(1) },
            command: vec!["mpirun".into(), "-np".into(), "2".into(), format!("/b/{name}")],
            launch: None,
            notes: vec![],
            stdout: format!("{name}.txt"),
            stderr: format!("{name}.stderr"),
            csv: (status == Status::Passed).then(|| format!("{name}.csv")),
            record: Some(format!("{name}.json")),
            placement: Some("rank 0 on h1 cpus 0; rank 1 on h1 cpus 1".into()),
            placement_warnings: vec!["ranks 0-1 share one core (core 0) on h1".into()],
            precision: None,
            noise_flags: vec![],
            busy: None,
        };
        SuiteReport {
            schema: SCHEMA.into(),
            started_utc: "2026-11-30T10:00:00Z".into(),
            finished_utc: "2026-11-30T10:00:09Z".into(),
            run_dir: "results/x".into(),
            host: "h1".into(),
            commbench_version: "0.1.0".into(),
            commbench_commit: "abc".into(),
            mpi_library: "Open MPI v4.1.4, package: Debian".into(),
            launcher: Launcher { program: "mpirun".into(), kind: LauncherKind::OpenMpi },
            launcher_args: vec![],
            launcher_env: vec!["OMPI_ALLOW_RUN_AS_ROOT=1".into()],
            shape: Shape { np: 2, ppn: None, nodes: 1 },
            hostfile: None,
            common_args: vec!["-m".into(), "1:1024".into()],
            bin_dir: "/b".into(),
            binaries: Maker::Commbench,
            hosts: vec!["h1".into()],
            slurm: Some(SlurmInfo { job_id: "42".into(), node_list: Some("localhost".into()), ..Default::default() }),
            benchmarks: vec![
                b("osu_latency", Status::Passed, Some(0), None),
                b("osu_bw", Status::Failed, Some(1), Some("Invalid option [-W]")),
            ],
            launches: Vec::new(),
            locate: None,
        }
    }

    #[test]
    fn markdown() {
        let r = report();
        let mut tables = HashMap::new();
        tables.insert(
            "osu_latency".to_string(),
            KeyTable {
                headers: vec!["size".into(), "latency (us)".into()],
                rows: vec![vec!["8 B".into(), "0.40".into()]],
            },
        );
        let md = render(&r, &tables, &[PathBuf::from("osu_latency.svg")]);
        assert!(md.starts_with("# commbench suite: 1 of 2 passed\n"), "{md}");
        assert!(md.contains("**Not passed: osu_bw**"), "{md}");
        assert!(md.contains("| MPI library | Open MPI v4.1.4 |"), "{md}");
        assert!(md.contains("| launcher | `mpirun` (suite set `OMPI_ALLOW_RUN_AS_ROOT=1` for it) |"), "{md}");
        assert!(md.contains("| Slurm | job 42, on localhost |"), "{md}");
        assert!(md.contains("| [osu_bw](#osu_bw) | **FAILED** | 1 | 2 | 1.2 s | Invalid option [-W] |"), "{md}");
        assert!(md.contains("| size | latency (us) |\n|---|---:|\n| 8 B | 0.40 |"), "{md}");
        assert!(md.contains("![osu_latency plot](osu_latency.svg)"), "{md}");
        assert!(md.contains("\nRanks: rank 0 on h1 cpus 0; rank 1 on h1 cpus 1\n"), "{md}");
        assert!(md.contains("\n**Placement warning:** ranks 0-1 share one core (core 0) on h1\n"), "{md}");
        assert!(md.contains("## osu_bw\n\nNo results (it did not pass)."), "{md}");
        assert!(md.contains("```sh\nmpirun -np 2 /b/osu_latency\n"), "{md}");
        assert!(md.contains("| binaries | `/b` |"), "{md}");
        assert!(!md.contains("## Precision") && !md.contains("Noise flagged"), "{md}");
        let osu = SuiteReport { binaries: Maker::Osu, ..r };
        let md = render(&osu, &tables, &[]);
        assert!(md.contains("| binaries | `/b` (OSU's own: no run records; CSV made from their output) |"), "{md}");
    }

    /// A benchmark whose run record says its host was busy is flagged at
    /// the top, in the status table and in its section, and suite.json
    /// keeps the line; a quiet one is not flagged.
    #[test]
    fn busy_hosts_are_flagged() {
        let mut r = report();
        let md = render(&r, &HashMap::new(), &[]);
        assert!(!md.contains("busy"), "{md}");
        assert!(!serde_json::to_string(&r.benchmarks[0]).unwrap().contains("busy"));
        let line = "the host was busy: load 8.2 on 2 cores during the run";
        r.benchmarks[0].busy = Some(line.into());
        let md = render(&r, &HashMap::new(), &[]);
        assert!(md.contains("**Host busy during: osu_latency** ("), "{md}");
        assert!(md.contains("| [osu_latency](#osu_latency) | passed | 0 | 2 | 1.2 s | host busy |"), "{md}");
        assert!(md.contains(&format!("\n**Host busy:** {line}\n")), "{md}");
        let v = serde_json::to_value(&r.benchmarks[0]).unwrap();
        assert_eq!(v["busy"], line);
    }

    /// Rows as a `--precision` run writes them: the reasons and counts
    /// tally; rows without a reason (fixed counts) are left out.
    #[test]
    fn precision_tally_of_rows() {
        let r = |size: &str, run: &str, ceiling: &str, reason: &str| {
            row(&[
                ("benchmark", "osu_latency"),
                ("size_bytes", size),
                ("iterations", run),
                ("iterations_run", run),
                ("iterations_ceiling", ceiling),
                ("stop_reason", reason),
            ])
        };
        let rows = [
            r("1", "1000", "10000", "precision"),
            r("2", "10000", "10000", "ceiling"),
            r("4", "3000", "10000", "time_limit"),
            r("8", "1000", "10000", "precision"),
        ];
        let t = precision_tally(&rows).unwrap();
        assert_eq!(
            t,
            PrecisionTally {
                sizes: 4,
                stopped_by_precision: 2,
                stopped_by_ceiling: 1,
                stopped_by_time_limit: 1,
                iterations_run: 15000,
                iterations_fixed: 40000,
            }
        );
        assert_eq!(t.share_pct(), 37.5);
        assert_eq!(precision_tally(&[r("1", "10000", "", "")]), None);
    }

    /// Flagged sizes are listed with what flagged them, named by datatype
    /// where the run has several; `ok` and empty verdicts are not.
    #[test]
    fn noise_flags_of_rows() {
        let r = |dt: &str, size: &str, noise: &str| {
            row(&[("benchmark", "osu_allreduce"), ("datatype", dt), ("size_bytes", size), ("noise", noise)])
        };
        let one = [r("MPI_CHAR", "8", "ok"), r("MPI_CHAR", "1024", "drift;outliers"), r("MPI_CHAR", "2048", "")];
        assert_eq!(noise_flags(&one), ["1 KiB: drift;outliers"]);
        let two = [r("MPI_CHAR", "8", "bimodal"), r("MPI_INT", "8", "ok")];
        assert_eq!(noise_flags(&two), ["MPI_CHAR 8 B: bimodal"]);
        // The key table marks the flagged row in its own column.
        let t = key_table(&one).unwrap();
        assert_eq!(t.headers.last().map(String::as_str), Some("noise"));
        assert_eq!(t.rows[1].last().map(String::as_str), Some("**drift;outliers**"));
        assert_eq!(t.rows[0].last().map(String::as_str), Some(""));
        assert!(!key_table(&[r("MPI_CHAR", "8", "ok")]).unwrap().headers.contains(&"noise".to_string()));
    }

    /// summary.md's precision section and flagged sizes.
    #[test]
    fn markdown_precision_and_noise() {
        let mut r = report();
        let tally = |run, fixed| PrecisionTally {
            sizes: 2,
            stopped_by_precision: 1,
            stopped_by_ceiling: 1,
            stopped_by_time_limit: 0,
            iterations_run: run,
            iterations_fixed: fixed,
        };
        r.benchmarks[0].precision = Some(tally(2500, 20000));
        r.benchmarks[1].precision = Some(tally(1500, 20000));
        r.benchmarks[0].noise_flags = vec!["8 B: drift".into(), "1 KiB: outliers".into()];
        let md = render(&r, &HashMap::new(), &[]);
        assert!(md.contains("## Precision\n"), "{md}");
        assert!(md.contains("| [osu_latency](#osu_latency) | 2 | 1 | 1 | 0 | 2500 | 20000 | 12.5% | 1.2 s |"), "{md}");
        assert!(md.contains("| **all** | 4 | 2 | 2 | 0 | 4000 | 40000 | 10.0% | 2.5 s |"), "{md}");
        assert!(md.contains("\n**Noise flagged** at 2 sizes: 8 B: drift; 1 KiB: outliers\n"), "{md}");
    }

    /// Text read from the benchmarks' files (a record's hosts, MPI library
    /// and placement, a failure's detail, a CSV's values and noise
    /// verdicts, locate's findings) reaches summary.md and the status lines
    /// escaped: no control character, none that reorders text, and no line
    /// of its own.
    #[test]
    fn text_from_files_is_escaped() {
        let mut r = report();
        let esc = "\u{1b}[2J";
        r.hosts = vec![format!("h1{esc}")];
        r.mpi_library = format!("Open MPI{esc}");
        r.benchmarks[1].detail = Some(format!("bad{esc}\n## forged"));
        r.benchmarks[0].placement = Some(format!("rank 0 on h1{esc}\n## forged"));
        r.benchmarks[0].placement_warnings = vec!["w\u{202e}x".into()];
        r.benchmarks[0].noise_flags = vec![format!("8 B: drift{esc}")];
        r.locate = Some(LocateSummary {
            record: "locate.json".into(),
            exit_code: 1,
            probes: 2,
            findings: vec![format!("found: host h2{esc}\n## forged")],
        });
        let mut tables = HashMap::new();
        let rows = vec![vec!["8 B".into(), format!("0.40{esc}")]];
        tables
            .insert("osu_latency".to_string(), KeyTable { headers: vec!["size".into(), "latency (us)".into()], rows });
        let md = render(&r, &tables, &[]);
        let status = status_lines(&r, Path::new("s/summary.md"));
        for text in [&md, &status] {
            assert!(!text.chars().any(|c| c != '\n' && crate::diag::acts_on_terminal(c)), "{text}");
            assert!(!text.lines().any(|l| l.starts_with("## forged")), "{text}");
        }
        assert!(md.contains("| hosts | h1\\u{1b}[2J |"), "{md}");
        assert!(md.contains("| MPI library | Open MPI\\u{1b}[2J |"), "{md}");
        assert!(md.contains("| 8 B | 0.40\\u{1b}[2J |"), "{md}");
        assert!(md.contains("\nRanks: rank 0 on h1\\u{1b}[2J\\u{a}## forged\n"), "{md}");
        assert!(md.contains("\n- host h2\\u{1b}[2J\\u{a}## forged\n"), "{md}");
        assert!(status.contains("  bad\\u{1b}[2J\\u{a}## forged\n"), "{status}");
    }
}
