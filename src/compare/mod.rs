//! `commbench compare REFERENCE RUN...`: reads OSU text outputs (any
//! version), commbench CSVs and the GPU copy tools' CSVs, matches benchmarks, datatypes and sizes, and
//! judges each size against the reference with direction-aware tolerances,
//! or as within noise where both sides carry spreads (see `judge`).
//! Exit status: 0 all pass, 1 any failure beyond the allowance (or a run
//! whose record says it did not complete), 2 bad options or unreadable
//! input (a truncated CSV included), 3 nothing to judge (no size in both).

pub mod args;
pub mod context;
pub mod csv_input;
pub mod format;
pub mod gpu_csv;
pub mod input;
pub mod judge;
pub mod model;
pub mod osu_text;
pub mod tolerance;

use std::path::PathBuf;

use clap::Parser;

use self::format::Format;
use self::model::Quantity;
use self::tolerance::{Limit, Rules, ToleranceRule};

#[derive(Parser, Debug)]
#[command(
    name = "commbench compare",
    version = crate::VERSION,
    about = "Compare benchmark results against a reference (OSU text output or commbench CSV).",
    after_help = "SIZES is N, A-B, A- or -B in bytes, with an optional K, M or G suffix (powers of 1024).\n\
                  Tolerances: later rules win where ranges overlap; sizes no rule names get 10%.\n\
                  Latency may be that much higher, bandwidth and message rate that much lower.\n\
                  A reference on device memory and runs on host memory (or the reverse) are refused\n\
                  unless --allow-memory-mismatch; differing datatypes, process counts or options warn.\n\
                  A measured value that is not a positive number fails its size.\n\
                  Where both sides carry spreads (the ci95_rel_pct column of commbench CSVs), a\n\
                  difference inside their combined 95% uncertainty is 'within noise' (a pass), and\n\
                  only a larger one is judged by the tolerance; the Rule column says which decided.\n\n\
                  Exit status:\n  \
                  0  every judged size passes\n  \
                  1  failures beyond --allowed-failures, or a run whose run record says it did not\n     \
                  complete (running, error, timeout, interrupted ...)\n  \
                  2  bad options or input: unreadable, or a CSV cut short (a last line without a\n     \
                  newline, a row with the wrong number of cells)\n  \
                  3  nothing to judge: no size was measured by both the reference and the runs"
)]
struct Args {
    /// Reference results: an OSU text output (any version), a commbench CSV, or a results directory.
    reference: PathBuf,
    /// Measured results (same kinds). Several runs are compared by their median.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// How much worse than the reference a size may be: PCT% or SIZES:PCT% (repeatable).
    #[arg(long, value_name = "[SIZES:]PCT%", value_parser = tolerance::parse_tolerance)]
    tolerance: Vec<ToleranceRule>,
    /// Number of failing sizes tolerated before the comparison fails.
    #[arg(long, value_name = "N", default_value_t = 0)]
    allowed_failures: usize,
    /// Bandwidth floor in MB/s, for all sizes or SIZES (repeatable).
    #[arg(long, value_name = "[SIZES:]MBPS", value_parser = |s: &str| tolerance::parse_limit(Quantity::Bandwidth, s))]
    min_bw: Vec<Limit>,
    /// Latency ceiling in microseconds, for all sizes or SIZES (repeatable).
    #[arg(long, value_name = "[SIZES:]US", value_parser = |s: &str| tolerance::parse_limit(Quantity::Latency, s))]
    max_lat: Vec<Limit>,
    /// Message-rate floor in messages/s, for all sizes or SIZES (repeatable).
    #[arg(long, value_name = "[SIZES:]RATE", value_parser = |s: &str| tolerance::parse_limit(Quantity::MessageRate, s))]
    min_rate: Vec<Limit>,
    /// Count reference sizes and benchmarks that no run measured as failures.
    #[arg(long)]
    require_all: bool,
    /// Judge each size's share of its path's peak (the CSVs' efficiency_pct) instead of its
    /// bandwidth: for two runs on machines whose links differ.
    #[arg(long)]
    by_efficiency: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Judge results on device memory against results on host memory (or
    /// managed memory) anyway, with a warning, instead of refusing.
    #[arg(long)]
    allow_memory_mismatch: bool,
    /// Do not print what the readers passed over.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Entry point of `commbench compare`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let a: Args = match args::parse("compare", args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut notes = Vec::new();
    let mut reference = match input::load(&a.reference) {
        Ok(p) => p,
        Err(e) => {
            crate::diag::say_printable(&format!("commbench compare: reference {e}"));
            return 2;
        }
    };
    notes.extend(reference.notes);
    let mut runs = Vec::new();
    let mut cut = Vec::new();
    for path in &a.runs {
        match input::load(path) {
            Ok(p) => {
                runs.extend(p.tables);
                notes.extend(p.notes);
                cut.extend(p.cut);
            }
            Err(e) => {
                crate::diag::say_printable(&format!("commbench compare: {e}"));
                return 2;
            }
        }
    }
    if let Some(cut) = reference.cut.iter().chain(&cut).next() {
        crate::diag::say_printable(&format!("commbench compare: {cut}; a truncated results file is not judged"));
        return 2;
    }
    let fan_notes = context::name_fan_tables(&mut reference.tables, &mut runs);
    let mut warnings = context::memory_mismatches(&reference.tables, &runs);
    if !a.allow_memory_mismatch {
        if let Some(line) = context::refusal(&warnings) {
            crate::diag::say_printable(&format!("commbench compare: {line}"));
            return 2;
        }
    }
    warnings.extend(context::warnings(&reference.tables, &runs));
    let limits = a.min_bw.into_iter().chain(a.max_lat).chain(a.min_rate).collect();
    let rules = Rules {
        tolerances: a.tolerance,
        limits,
        allowed_failures: a.allowed_failures,
        require_all: a.require_all,
        by_efficiency: a.by_efficiency,
    };
    let mut report = judge::compare(&reference.tables, &runs, &rules);
    report.summary.incomplete_runs = incomplete_runs(&runs);
    if !report.summary.incomplete_runs.is_empty() {
        report.summary.ok = false;
    }
    let mut all_notes: Vec<String> = notes.iter().map(ToString::to_string).collect();
    all_notes.extend(fan_notes);
    all_notes.append(&mut report.notes);
    report.notes = all_notes;
    report.warnings = warnings;
    if !a.quiet {
        for n in &report.notes {
            crate::diag::say_printable(&format!("commbench compare: note: {n}"));
        }
    }
    for w in &report.warnings {
        crate::diag::say_printable(&format!("commbench compare: warning: {w}"));
    }
    if report.blocks.is_empty() {
        crate::say!("commbench compare: nothing in common: no benchmark, datatype and metric is in both the reference and the runs");
        return 2;
    }
    match format::render(&report, a.format) {
        Ok(s) => print!("{s}"),
        Err(e) => {
            crate::diag::say_printable(&format!("commbench compare: cannot write the report: {e}"));
            return 2;
        }
    }
    if !report.summary.ok {
        for line in busy_lines(&reference.tables, &runs) {
            crate::diag::say_printable(&format!("commbench compare: {line}"));
        }
    }
    for run in &report.summary.incomplete_runs {
        crate::diag::say_printable(&format!(
            "commbench compare: {run}: its results are not trusted: the comparison fails"
        ));
    }
    if !report.summary.ok {
        1
    } else if report.summary.nothing_judged() {
        crate::say!("commbench compare: nothing to judge: no size was measured by both the reference and the runs");
        3
    } else {
        0
    }
}

/// The runs (by file) whose run record says they did not complete, each
/// as `<file>: the run record says '<status>'`.
fn incomplete_runs(runs: &[model::Table]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for t in runs {
        let Some(info) = t.run.as_ref().filter(|i| !i.completed()) else { continue };
        let line = format!("{}: the run record says '{}'", t.path, info.status.as_deref().unwrap_or_default());
        if seen.insert(line.clone()) {
            out.push(line);
        }
    }
    out
}

/// Beside a failing verdict: each file, reference or run, whose run record
/// says its host was busy during the run (crate::procs::load), as
/// `reference <file>: the host was busy: load 8.2 on 2 cores during the
/// run`.
pub(crate) fn busy_lines(reference: &[model::Table], runs: &[model::Table]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let sides = reference.iter().map(|t| ("reference", t)).chain(runs.iter().map(|t| ("run", t)));
    for (side, t) in sides {
        let Some(busy) = t.run.as_ref().and_then(|i| i.busy.as_deref()) else { continue };
        let line = format!("{side} {}: {busy}", t.path);
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}
