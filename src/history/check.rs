//! `history check RUN`: judges a run against its series' baseline with
//! compare's judge (noise rule first, then the tolerance), and names, per
//! key size, the first run where the series left its band. Every line it
//! prints goes through `diag::printable`: it holds names read from files.

use std::fmt::Write as _;
use std::path::Path;

use rusqlite::Connection;

use super::baseline::{self, StoredRun, MIN_BAND_RUNS};
use super::curve;
use super::ingest::{self, Incoming};
use super::key::SeriesKey;
use crate::compare::format::{self, Format};
use crate::compare::judge;
use crate::compare::model::{Quantity, SizeRow, Table};
use crate::compare::tolerance::Rules;
use crate::diag::printable;

/// What `history check` is asked.
pub struct Request<'a> {
    pub run: &'a Path,
    pub system: Option<&'a str>,
    pub last: usize,
    pub since: Option<&'a str>,
    pub rules: Rules,
    pub format: Format,
    /// Sizes the band scan looks at; empty: [`baseline::key_sizes`].
    pub sizes: &'a [u64],
    pub quiet: bool,
}

/// A value as a line shows it: whole numbers from 100 up, else four
/// significant digits.
pub(crate) fn value_text(v: f64) -> String {
    if v.abs() >= 100.0 {
        return format!("{v:.0}");
    }
    let digits = (4 - (v.abs().max(1e-12).log10().floor() as i64 + 1)).max(0) as usize;
    format!("{v:.digits$}")
}

/// `2026-12-03T10:02:42Z` of a stored time.
pub(crate) fn date_text(t: &str) -> String {
    match t.split_once('.') {
        Some((s, _)) => format!("{s}Z"),
        None => t.to_string(),
    }
}

/// The number of sizes `points` hold of `metric`: the family a check's
/// bands are for (see [`baseline::baseline`]).
pub(crate) fn family(points: &[(u64, Quantity, f64, Option<f64>)], metric: Quantity) -> usize {
    baseline::family(points.iter().filter(|p| p.1 == metric).map(|p| p.0))
}

/// The baseline of `runs` (oldest first) as compare reference tables,
/// one per metric: each size's centre, the worse side of its band for one
/// new run as the spread (the band for all the sizes `inc` holds).
pub(crate) fn reference_tables(inc: &Incoming, runs: &[&StoredRun]) -> Vec<Table> {
    let (first, last) = match (runs.first(), runs.last()) {
        (Some(f), Some(l)) => (date_text(&f.started_utc), date_text(&l.started_utc)),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for (metric, _) in ingest::METRICS {
        let mut sizes: Vec<u64> =
            runs.iter().flat_map(|r| r.points.iter().filter(|p| p.1 == metric).map(|p| p.0)).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let family = family(&inc.points, metric);
        let mut points = Vec::new();
        let mut fewest = usize::MAX;
        for size in sizes {
            let values: Vec<(f64, Option<f64>)> = runs.iter().filter_map(|r| r.value(metric, size)).collect();
            let Some(b) = baseline::baseline(&values, family) else { continue };
            fewest = fewest.min(b.runs);
            let mut p =
                SizeRow { size, ci95_rel_pct: b.worse_side_pct(metric.higher_is_better()), ..SizeRow::default() };
            match metric {
                Quantity::Latency => p.latency_us = Some(b.center),
                Quantity::Bandwidth => p.bw_mbps = Some(b.center),
                Quantity::MessageRate => p.msg_rate = Some(b.center),
                Quantity::Efficiency => continue,
            }
            points.push(p);
        }
        if points.is_empty() {
            continue;
        }
        let n = runs.len();
        let rests = if fewest < 2 {
            "one run: no run-to-run spread known, its own interval only".to_string()
        } else if fewest < n {
            format!("{fewest} to {n} runs per size")
        } else {
            format!("{n} runs")
        };
        out.push(Table {
            benchmark: inc.table.benchmark.clone(),
            datatype: Some(inc.key.datatype.clone()),
            sized: inc.table.sized,
            np: inc.table.np,
            points,
            path: format!(
                "history baseline: band for one new run ({}% for its {family} size{} together) from {rests}, {first} to {last}",
                baseline::BAND_LEVEL * 100.0,
                if family == 1 { "" } else { "s" }
            ),
            run_label: "baseline".into(),
            band_for_one_run: true,
            ..Table::default()
        });
    }
    out
}

/// One entry of a series scanned for its band: a stored run or the run
/// being checked.
struct Entry {
    name: String,
    started_utc: String,
    run: StoredRun,
}

/// One line per key size and metric: where the series first left its
/// band, or that it never did.
pub(crate) fn departure_lines(
    history: &[StoredRun],
    inc: Option<&Incoming>,
    last: usize,
    sizes: &[u64],
) -> Vec<String> {
    let mut entries: Vec<Entry> = history
        .iter()
        .filter(|r| inc.is_none_or(|i| i.run_key != r.run_key))
        .map(|r| Entry { name: r.id.to_string(), started_utc: r.started_utc.clone(), run: r.clone() })
        .collect();
    if let Some(i) = inc {
        let run = StoredRun {
            id: 0,
            run_key: i.run_key.clone(),
            started_utc: i.started_utc.clone(),
            label: i.label.clone(),
            key: i.key.clone(),
            points: i.points.clone(),
            medians: i.medians.clone(),
        };
        let at = entries.partition_point(|e| e.started_utc <= i.started_utc);
        entries.insert(
            at,
            Entry { name: format!("'{}' (the run checked)", i.label), started_utc: i.started_utc.clone(), run },
        );
    }
    let Some(bench) = entries.first().map(|e| e.run.key.benchmark.clone()) else { return Vec::new() };
    let metrics: Vec<Quantity> = ingest::METRICS
        .iter()
        .map(|m| m.0)
        .filter(|m| entries.iter().any(|e| e.run.points.iter().any(|p| p.1 == *m)))
        .collect();
    let mut lines = Vec::new();
    for &metric in &metrics {
        let all: Vec<u64> = match inc {
            Some(i) => i.points.iter().filter(|p| p.1 == metric).map(|p| p.0).collect(),
            None => entries.iter().flat_map(|e| e.run.points.iter().filter(|p| p.1 == metric).map(|p| p.0)).collect(),
        };
        let family = baseline::family(all.iter().copied());
        let chosen = if sizes.is_empty() { baseline::key_sizes(&all) } else { sizes.to_vec() };
        let what = if metrics.len() > 1 { format!(" {}", metric.name()) } else { String::new() };
        for size in chosen {
            let with: Vec<(&Entry, (f64, Option<f64>))> =
                entries.iter().filter_map(|e| e.run.value(metric, size).map(|v| (e, v))).collect();
            let series: Vec<(f64, Option<f64>)> = with.iter().map(|w| w.1).collect();
            let head = format!("{bench} {size} B{what}");
            let line = match baseline::first_departure(&series, last, family) {
                Some(d) => {
                    let e = with[d.index].0;
                    format!(
                        "{head}: left its band first at run {} ({}): {} {}, band {}-{}",
                        e.name,
                        date_text(&e.started_utc),
                        value_text(d.value),
                        metric.unit(),
                        value_text(d.band.0),
                        value_text(d.band.1)
                    )
                }
                None if series.len() <= MIN_BAND_RUNS => {
                    format!(
                        "{head}: {} run{}: too few for a band (more than {MIN_BAND_RUNS} needed)",
                        series.len(),
                        if series.len() == 1 { "" } else { "s" }
                    )
                }
                None => format!("{head}: within its band in all {} runs", series.len()),
            };
            lines.push(line);
        }
    }
    lines
}

/// Runs `history check`; returns the exit status (compare's).
pub fn run(c: &Connection, r: &Request) -> i32 {
    let mut notes = Vec::new();
    let files = match ingest::files(r.run, &mut notes) {
        Ok(f) => f,
        Err(e) => {
            say(&e.to_string());
            return 2;
        }
    };
    let mut incoming: Vec<Incoming> = Vec::new();
    let mut incomplete = Vec::new();
    for f in &files {
        match ingest::read(f, r.system, &mut notes) {
            Ok(runs) => incoming.extend(runs),
            Err(e) if e.incomplete => incomplete.push(e.line),
            Err(e) => {
                say(&e.to_string());
                return 2;
            }
        }
    }
    if !r.quiet {
        for n in &notes {
            say(&format!("note: {n}"));
        }
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    for i in &incoming {
        let k = (i.key.benchmark.clone(), i.key.datatype.clone());
        if seen.contains(&k) {
            say(&format!("{} {} is in the checked results more than once: check one run at a time", k.0, k.1));
            return 2;
        }
        seen.push(k);
    }
    let mut refs = Vec::new();
    let mut histories: Vec<(&Incoming, Vec<StoredRun>)> = Vec::new();
    let mut bases: Vec<(&Incoming, Vec<StoredRun>)> = Vec::new();
    let mut no_baseline = Vec::new();
    for i in &incoming {
        let history = match baseline::runs_of(c, &i.key, r.since) {
            Ok(h) => h,
            Err(e) => {
                say(&format!("cannot read the history: {e}"));
                return 2;
            }
        };
        let others: Vec<&StoredRun> = history.iter().filter(|h| h.run_key != i.run_key).collect();
        let base: Vec<&StoredRun> = others[others.len().saturating_sub(r.last)..].to_vec();
        let tables = reference_tables(i, &base);
        if tables.is_empty() {
            no_baseline.push(no_baseline_line(&i.key));
        }
        refs.extend(tables);
        bases.push((i, base.into_iter().cloned().collect::<Vec<StoredRun>>()));
        histories.push((i, history));
    }
    for line in &no_baseline {
        say(line);
    }
    if refs.is_empty() {
        if incoming.is_empty() {
            for line in &incomplete {
                say(&format!("{line}: its results are not trusted: the check fails"));
            }
            return 1;
        }
        say("nothing to judge: no baseline runs in the history for the checked results");
        return 3;
    }
    let runs: Vec<Table> = incoming.iter().map(|i| i.table.clone()).collect();
    let mut report = judge::compare(&refs, &runs, &r.rules);
    if second_look(&mut report, &bases, &r.rules) > 0 {
        report.summary = judge::tally(&report.blocks, report.summary.unmatched, &r.rules);
    }
    report.summary.incomplete_runs = incomplete.clone();
    if !incomplete.is_empty() {
        report.summary.ok = false;
    }
    if !r.quiet {
        for n in &report.notes {
            say(&format!("note: {n}"));
        }
    }
    let curves: Vec<curve::Curve> =
        bases.iter().filter_map(|(i, base)| curve::judge(i, base, |size| r.rules.tolerance_pct(size))).collect();
    let curve_failed = curves.iter().any(|c| c.failed);
    let mut lines = Vec::new();
    for (i, history) in &histories {
        lines.extend(departure_lines(history, Some(i), r.last, r.sizes));
    }
    let rendered = match format::render(&report, r.format) {
        Ok(s) => s,
        Err(e) => {
            say(&format!("cannot write the report: {e}"));
            return 2;
        }
    };
    match r.format {
        Format::Json => {
            let v: serde_json::Value = serde_json::from_str(&rendered).unwrap_or(serde_json::Value::Null);
            let out = serde_json::json!({"report": v, "curves": curves, "bands": lines});
            println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        }
        Format::Text | Format::Md => {
            let mut s = rendered;
            if !curves.is_empty() {
                let _ = writeln!(s, "\nWhole curves (the median shift over the sizes, against like runs' shifts):");
                for c in &curves {
                    let _ = writeln!(s, "  {}", c.line());
                }
                let failed = curves.iter().filter(|c| c.failed).count();
                if failed > 0 {
                    let _ = writeln!(
                        s,
                        "FAIL: the whole curve moved beyond like runs' band in {failed} of {} table{}",
                        curves.len(),
                        if curves.len() == 1 { "" } else { "s" }
                    );
                }
            }
            if !lines.is_empty() {
                let _ =
                    writeln!(s, "\nBands (where one new run should fall, from up to {} runs before each run):", r.last);
                for l in &lines {
                    let _ = writeln!(s, "  {l}");
                }
            }
            // Names from the results and the history are in the report:
            // nothing a terminal would act on is printed as it is.
            let mut out = String::with_capacity(s.len());
            for line in s.lines() {
                out.push_str(&printable(line));
                out.push('\n');
            }
            print!("{out}");
        }
    }
    if !report.summary.ok || curve_failed {
        busy_lines(c, &histories, r.last).iter().for_each(|l| say(l));
    }
    for line in &incomplete {
        say(&format!("{line}: its results are not trusted: the check fails"));
    }
    if !report.summary.ok || curve_failed {
        1
    } else if report.summary.nothing_judged() {
        say("nothing to judge: no size was measured by both the baseline and the run");
        3
    } else {
        0
    }
}

/// A latency whose mean failed by the tolerance alone, asked again by its
/// median iteration: where the run's median iteration time lies inside
/// the band the baseline runs' medians give (or within the tolerance of
/// their centre), the typical iteration did not move: a few long
/// iterations (a rank preempted by another task for a time slice, on a
/// busy host) made the mean, not a slower path. The size is then counted
/// with the passes, as `within noise`, saying so. A size that failed a
/// limit or its data validation, a metric other than latency, or a run or
/// baseline without medians keep their verdict. Returns how many sizes
/// changed.
fn second_look(report: &mut judge::Report, bases: &[(&Incoming, Vec<StoredRun>)], rules: &Rules) -> usize {
    let mut changed = 0;
    for block in report.blocks.iter_mut().filter(|b| b.metric == Quantity::Latency) {
        let Some((inc, base)) =
            bases.iter().find(|(i, _)| i.table.benchmark == block.benchmark && i.key.datatype == block.datatype)
        else {
            continue;
        };
        let family = family(&inc.points, Quantity::Latency);
        for row in block.rows.iter_mut().filter(|r| r.verdict == judge::Verdict::Fail) {
            let Some(measured) = row.measured else { continue };
            let limits = rules.limits_for(Quantity::Latency, row.size).any(|l| l.violated_by(measured));
            let invalid = inc.table.points.iter().any(|p| p.size == row.size && p.validation == Some(false));
            if limits || invalid {
                continue;
            }
            let Some(run_median) = inc.medians.iter().find(|m| m.0 == row.size).map(|m| m.1) else { continue };
            let values: Vec<(f64, Option<f64>)> = base.iter().filter_map(|r| r.median_at(row.size)).collect();
            let Some(b) = baseline::baseline(&values, family) else { continue };
            let Some((_, high)) = b.band() else { continue };
            let within_tolerance = run_median <= b.center * (1.0 + row.tolerance_pct / 100.0);
            if run_median > high && !within_tolerance {
                continue;
            }
            let diff = (measured / row.reference - 1.0) * 100.0;
            row.verdict = judge::Verdict::WithinNoise;
            row.rule = judge::Rule::Noise;
            row.reasons = vec![format!(
                "the mean is {diff:+.1}%, but the median iteration, {} us, is inside its band (up to {} us, {} run{}): \
                 a few long iterations, not a slower path",
                value_text(run_median),
                value_text(high.max(b.center * (1.0 + row.tolerance_pct / 100.0))),
                b.runs,
                if b.runs == 1 { "" } else { "s" }
            )];
            changed += 1;
        }
    }
    changed
}

/// Beside a failing verdict: the checked runs and the baseline runs
/// (the last `last` of each series, as judged) whose host was busy during
/// the run (crate::procs::load), one line each: `the run checked 'x':
/// the host was busy: load 8.2 on 2 cores during the run`, `baseline run
/// 3 (2026-12-03T10:02:42Z): ...`.
pub(crate) fn busy_lines(c: &Connection, histories: &[(&Incoming, Vec<StoredRun>)], last: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (i, history) in histories {
        if let Some(b) = &i.busy {
            out.push(format!("the run checked '{}': {b}", i.label));
        }
        let others: Vec<&StoredRun> = history.iter().filter(|h| h.run_key != i.run_key).collect();
        for run in &others[others.len().saturating_sub(last)..] {
            let busy: Option<String> =
                c.query_row("SELECT busy FROM runs WHERE id = ?1", [run.id], |r| r.get(0)).ok().flatten();
            if let Some(b) = busy {
                let line = format!("baseline run {} ({}): {b}", run.id, date_text(&run.started_utc));
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
    }
    out
}

/// One line on stderr, escaped as untrusted text (it names runs, files
/// and series from the results and the history).
fn say(line: &str) {
    crate::say!("commbench history: {}", printable(line));
}

fn no_baseline_line(k: &SeriesKey) -> String {
    format!(
        "{}: no baseline: the history has no complete run of this series (backend {}, {} memory, {}, placement {})",
        k.short(),
        k.backend,
        k.memory,
        k.mpi_library,
        k.placement
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_dates_as_lines_show_them() {
        assert_eq!(value_text(12345.678), "12346");
        assert_eq!(value_text(9000.0), "9000");
        assert_eq!(value_text(1.23456), "1.235");
        assert_eq!(value_text(0.5393), "0.5393");
        assert_eq!(value_text(42.0), "42.00");
        assert_eq!(date_text("2026-12-03T10:02:42.311Z"), "2026-12-03T10:02:42Z");
    }
}
