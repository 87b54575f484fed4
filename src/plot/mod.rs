//! `commbench plot RUN...`: one SVG chart per benchmark of the given
//! results (CSV, OSU text, or a results or suite directory), one line per
//! run, the reference drawn in when given. `plot_run_dir` is the entry the
//! suite runner calls on its run directory.

pub(crate) mod axis;
pub mod chart;

use std::path::{Path, PathBuf};

use clap::Parser;

use self::chart::{ChartSpec, Line};
use crate::compare::input::{self, InputError};
use crate::compare::model::{Note, Quantity, Table};

/// Why no chart, or not every chart, could be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PlotError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("{benchmark}: cannot draw the chart: {source}")]
    Draw { benchmark: String, source: chart::ChartError },
    #[error("{path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("nothing to plot: no table has latency or bandwidth values")]
    Nothing,
}

/// The metric a benchmark's chart shows: bandwidth where there is one,
/// else latency.
fn chart_metric(tables: &[&Table]) -> Option<Quantity> {
    let has = |m: Quantity| tables.iter().any(|t| t.points.iter().any(|p| p.value(m).is_some()));
    [Quantity::Bandwidth, Quantity::Latency, Quantity::MessageRate].into_iter().find(|m| has(*m))
}

fn distinct<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for i in items {
        if !v.contains(&i) {
            v.push(i);
        }
    }
    v
}

/// One table's series. Values that are not positive are left out as
/// before; a positive value no measurement gives (a subnormal, 1e308: see
/// [`Quantity::implausible`]) is left out with a note, since a log axis
/// stretched to it has no end; so is a band end that is not plausible.
fn line(t: &Table, metric: Quantity, label: String, reference: bool, notes: &mut Vec<Note>) -> Line {
    let plausible = |v: f64| metric.implausible(v).is_none();
    let mut absurd: Vec<(u64, f64)> = Vec::new();
    let mut points: Vec<(u64, f64)> = Vec::new();
    for (size, v) in t.points.iter().filter_map(|p| p.value(metric).map(|v| (p.size, v))) {
        match (v.is_finite() && v > 0.0, plausible(v)) {
            (true, false) => absurd.push((size, v)),
            (true, true) => points.push((size, v)),
            (false, _) => {}
        }
    }
    points.sort_by_key(|p| p.0);
    let mut band: Vec<(u64, f64, f64)> = if reference {
        Vec::new()
    } else {
        t.points
            .iter()
            .filter_map(|p| p.band(metric).map(|(lo, hi)| (p.size, lo, hi)))
            .filter(|(_, lo, hi)| plausible(*lo) && plausible(*hi))
            .collect()
    };
    band.sort_by_key(|b| b.0);
    if let Some(&(size, v)) = absurd.first() {
        let why = metric.implausible(v).unwrap_or_default();
        let more = match absurd.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        let message = format!(
            "{} {} at size {size} {why}{more}: left out of the chart of '{label}'",
            metric.name(),
            crate::compare::model::shown(v)
        );
        notes.push(Note { path: t.origin(), line: None, message });
    }
    Line { label, points, reference, band }
}

/// The chart of one benchmark: its runs, and the reference tables of the
/// same benchmark and datatypes; values that are not positive are left out.
/// Notes say what could not be drawn.
pub(crate) fn chart_spec(
    benchmark: &str,
    runs: &[&Table],
    reference: &[&Table],
    notes: &mut Vec<Note>,
) -> Option<ChartSpec> {
    let metric = chart_metric(runs)?;
    let sized = runs.iter().all(|t| t.sized);
    let dts = distinct(runs.iter().map(|t| t.datatype_key().to_string()));
    let with_dt = |label: &str, t: &Table| {
        if dts.len() > 1 {
            format!("{label} {}", t.datatype_key())
        } else {
            label.to_string()
        }
    };
    let mut lines: Vec<Line> = runs.iter().map(|t| line(t, metric, with_dt(&t.run_label, t), false, notes)).collect();
    for r in reference.iter().filter(|r| r.benchmark == benchmark && dts.iter().any(|d| d == r.datatype_key())) {
        let version = r.osu_version.as_ref().map(|v| format!(", OSU {v}")).unwrap_or_default();
        let label = with_dt(&format!("reference ({}{version})", r.run_label), r);
        lines.push(line(r, metric, label, true, notes));
    }
    if sized {
        for l in &mut lines {
            let before = l.points.len();
            l.points.retain(|p| p.0 > 0);
            l.band.retain(|b| b.0 > 0);
            if l.points.len() < before {
                let message = format!("{benchmark}: size 0 of '{}' left out of the log-scale chart", l.label);
                notes.push(Note { path: benchmark.to_string(), line: None, message });
            }
        }
    }
    lines.retain(|l| !l.points.is_empty());
    if lines.iter().all(|l| l.reference) {
        return None;
    }
    let hosts = distinct(runs.iter().filter_map(|t| t.run.as_ref()).flat_map(|r| r.hosts.iter().cloned()));
    let mpis = distinct(runs.iter().filter_map(|t| t.run.as_ref()?.mpi_library.clone()));
    let mut sub = Vec::new();
    if !hosts.is_empty() {
        sub.push(format!("hosts: {}", hosts.join(", ")));
    }
    if !mpis.is_empty() {
        sub.push(format!("MPI: {}", mpis.join(" / ")));
    }
    let versions = distinct(runs.iter().filter_map(|t| t.osu_version.clone()));
    if !versions.is_empty() {
        sub.push(format!("OSU {}", versions.join(", ")));
    }
    let runs_n = lines.iter().filter(|l| !l.reference).count();
    sub.push(format!("{runs_n} run{}", if runs_n == 1 { "" } else { "s" }));
    if sized && lines.iter().any(|l| l.band.len() >= 2) {
        sub.push("shaded: p10 to p90 per size".into());
    }
    let what = if sized { format!("{} against message size", metric.name()) } else { metric.name().to_string() };
    let named = distinct(runs.iter().filter_map(|t| t.datatype.clone()));
    let title = match named.is_empty() {
        true => format!("{benchmark}: {what}"),
        false => format!("{benchmark}: {what} ({})", dts.join(", ")),
    };
    // Names, hosts and versions read from files: no control character in
    // the SVG (XML 1.0 has no place for one) and none that reorders text.
    let plain = |s: &str| crate::diag::printable(s).into_owned();
    for l in &mut lines {
        l.label = plain(&l.label);
    }
    let (title, subtitle) = (plain(&title), plain(&sub.join("  ·  ")));
    Some(ChartSpec { benchmark: plain(benchmark), metric, title, subtitle, sized, lines })
}

/// Writes `<out>/<benchmark>.svg` for every benchmark in `runs`.
pub(crate) fn write_charts(
    runs: &[Table],
    reference: &[Table],
    out: &Path,
    notes: &mut Vec<Note>,
) -> Result<Vec<PathBuf>, PlotError> {
    let refs: Vec<&Table> = reference.iter().collect();
    let mut written: Vec<PathBuf> = Vec::new();
    for bench in distinct(runs.iter().map(|t| t.benchmark.clone())) {
        let tables: Vec<&Table> = runs.iter().filter(|t| t.benchmark == bench).collect();
        let Some(spec) = chart_spec(&bench, &tables, &refs, notes) else {
            let message = "no positive latency or bandwidth values to draw: no chart".to_string();
            notes.push(Note { path: bench.clone(), line: None, message });
            continue;
        };
        let svg = chart::render(&spec).map_err(|source| PlotError::Draw { benchmark: bench.clone(), source })?;
        let path = chart_path(out, &bench, &written, notes);
        // Replaces an older chart (or a link at the name), never writes
        // through a link.
        crate::report::safe_file::replace(&path, svg.as_bytes())
            .map_err(|source| PlotError::Write { path: path.display().to_string(), source })?;
        written.push(path);
    }
    if written.is_empty() {
        return Err(PlotError::Nothing);
    }
    Ok(written)
}

/// Where the chart of `bench` goes: `<out>/<bench>.svg`, the name read
/// from the input reduced to one plain file name inside `out` (a note says
/// so when it changed), `_2`, `_3` ... when two names reduce to one.
fn chart_path(out: &Path, bench: &str, written: &[PathBuf], notes: &mut Vec<Note>) -> PathBuf {
    let name = crate::report::safe_file::name_part(bench);
    let path = (1..)
        .map(|n| if n == 1 { out.join(format!("{name}.svg")) } else { out.join(format!("{name}_{n}.svg")) })
        .find(|p| !written.contains(p))
        .unwrap_or_else(|| out.join(format!("{name}.svg")));
    if name != bench || path != out.join(format!("{name}.svg")) {
        let shown = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let message = format!("the benchmark name is not a plain file name: its chart is {shown}");
        notes.push(Note { path: bench.escape_debug().to_string(), line: None, message });
    }
    path
}

/// Plots every benchmark of a results or suite directory into that
/// directory (`<benchmark>.svg`) and returns the files written.
pub(crate) fn plot_run_dir(dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let parsed = input::load(dir)?;
    let mut notes = parsed.notes;
    write_charts(&parsed.tables, &[], dir, &mut notes)
}

#[derive(Parser, Debug)]
#[command(
    name = "commbench plot",
    version = crate::VERSION,
    about = "Draw SVG charts of latency or bandwidth against message size, one per benchmark.",
    after_help = "Each RUN is a commbench CSV, an OSU text output, or a directory of them (a results or suite folder).\n\
                  Writes <benchmark>.svg beside the first RUN (into it, for a directory) unless --out is given.\n\
                  Exit status: 0 written, 1 a chart could not be written, 2 bad options or unreadable input."
)]
struct Args {
    /// Results to draw, one line per run.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// Reference results drawn in black (OSU text output or commbench CSV).
    #[arg(long, value_name = "FILE")]
    reference: Option<PathBuf>,
    /// Directory for the SVG files (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Do not print what the readers passed over.
    #[arg(long, short = 'q')]
    quiet: bool,
}

fn default_out(first: &Path) -> PathBuf {
    if first.is_dir() {
        return first.to_path_buf();
    }
    match first.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Entry point of `commbench plot`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let a: Args = match crate::compare::args::parse("plot", args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut notes = Vec::new();
    let mut runs = Vec::new();
    for p in &a.runs {
        match input::load(p) {
            Ok(parsed) => {
                runs.extend(parsed.tables);
                notes.extend(parsed.notes);
            }
            Err(e) => {
                crate::diag::say_printable(&format!("commbench plot: {e}"));
                return 2;
            }
        }
    }
    let reference = match &a.reference {
        None => Vec::new(),
        Some(r) => match input::load(r) {
            Ok(parsed) => {
                notes.extend(parsed.notes);
                parsed.tables
            }
            Err(e) => {
                crate::diag::say_printable(&format!("commbench plot: reference {e}"));
                return 2;
            }
        },
    };
    let out = a.out.clone().unwrap_or_else(|| default_out(&a.runs[0]));
    if let Err(e) = std::fs::create_dir_all(&out) {
        crate::diag::say_printable(&format!("commbench plot: {}: {e}", out.display()));
        return 2;
    }
    let result = write_charts(&runs, &reference, &out, &mut notes);
    if !a.quiet {
        for n in &notes {
            crate::diag::say_printable(&format!("commbench plot: note: {n}"));
        }
    }
    match result {
        Ok(files) => {
            for f in files {
                println!("{}", crate::diag::printable(&f.display().to_string()));
            }
            0
        }
        Err(e @ PlotError::Nothing) => {
            crate::diag::say_printable(&format!("commbench plot: {e}"));
            2
        }
        Err(e) => {
            crate::diag::say_printable(&format!("commbench plot: {e}"));
            1
        }
    }
}

#[cfg(test)]
mod tests;
