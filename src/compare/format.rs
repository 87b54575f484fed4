//! Writes a comparison report as a plain-text table per benchmark, as
//! markdown, or as JSON; each ends with (or carries) the one-line summary.
//! A table whose sizes carry spreads gains a Noise column (the combined 95%
//! uncertainty of the difference) and a Rule column (which rule decided);
//! a table without spreads is written exactly as before.

use std::fmt::Write as _;

use super::judge::{Block, Report, Row, Verdict};
use crate::diag::printable;

/// Output format of `commbench compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Md,
    Json,
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Better => "better",
        Verdict::Fail => "FAIL",
        Verdict::Missing => "missing",
        Verdict::Skipped => "skipped",
        Verdict::WithinNoise => "within noise",
    }
}

/// Whether the block shows the noise rule's columns.
fn has_noise(b: &Block) -> bool {
    b.rows.iter().any(|r| r.noise_pct.is_some())
}

fn noise_cell(r: &Row) -> String {
    r.noise_pct.map_or_else(|| "-".to_string(), |u| format!("±{u:.1}%"))
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.decimals$}"))
}

fn size_cell(b: &Block, r: &Row) -> String {
    if b.sized {
        r.size.to_string()
    } else {
        "-".to_string()
    }
}

/// The block's title line; its names, read from files, as [`printable`]
/// makes them (as is every line below that holds text from a file).
fn heading(b: &Block) -> String {
    let better = if b.higher_is_better { "higher is better" } else { "lower is better" };
    let line = format!("{} {}: {} in {} ({better})", b.benchmark, b.datatype, b.metric.name(), b.unit);
    printable(&line).into_owned()
}

fn provenance(b: &Block) -> String {
    let version = b.reference_version.as_ref().map(|v| format!(" (OSU {v})")).unwrap_or_default();
    let measured = match b.runs.len() {
        1 => format!("measured: {}", b.runs[0]),
        n => format!("measured: median of {n} runs ({})", b.runs.join(", ")),
    };
    printable(&format!("reference: {}{version}; {measured}", b.reference_from.join(", "))).into_owned()
}

/// A row's verdict word and its reasons (`sep` between them).
fn verdict_cell(r: &Row, word: &str, sep: &str) -> String {
    if r.reasons.is_empty() || r.verdict == Verdict::Missing {
        return word.to_string();
    }
    printable(&format!("{word}{sep}{}", r.reasons.join("; "))).into_owned()
}

fn multi_run(b: &Block) -> bool {
    b.rows.iter().any(|r| r.runs > 1)
}

fn range_cell(r: &Row) -> String {
    match (r.measured_min, r.measured_max) {
        (Some(lo), Some(hi)) if r.runs > 1 => format!("{lo:.2}..{hi:.2}"),
        _ => "-".to_string(),
    }
}

/// The one-line summary.
pub fn summary_line(rep: &Report) -> String {
    let s = &rep.summary;
    let word = if !s.ok {
        "FAIL"
    } else if s.nothing_judged() {
        "NOTHING TO JUDGE"
    } else {
        "PASS"
    };
    let mut line = format!(
        "{word}: {} reference size{} in {} table{}: {} pass ({} better than the reference beyond tolerance), {} fail",
        s.points,
        if s.points == 1 { "" } else { "s" },
        rep.blocks.len(),
        if rep.blocks.len() == 1 { "" } else { "s" },
        s.passed,
        s.better,
        s.failed
    );
    if s.within_noise > 0 {
        // Inside the parenthesis about the passes.
        let at = line.rfind("), ").unwrap_or(line.len());
        line.insert_str(at, &format!(", {} within noise", s.within_noise));
    }
    if s.missing > 0 {
        let _ = write!(line, ", {} not measured", s.missing);
    }
    if s.skipped > 0 {
        let _ = write!(line, ", {} skipped (no usable reference value)", s.skipped);
    }
    if s.unmatched > 0 {
        let _ = write!(line, ", {} reference tables with no run", s.unmatched);
    }
    if !s.incomplete_runs.is_empty() {
        let _ = write!(line, ", {} run(s) that did not complete", s.incomplete_runs.len());
    }
    let _ = write!(line, "; {} failures counted, {} allowed", s.counted_failures, s.allowed_failures);
    line
}

/// Plain text: a table per block, then the summary.
pub fn text(rep: &Report) -> String {
    let mut o = String::new();
    for b in &rep.blocks {
        let _ = writeln!(o, "{}", heading(b));
        let _ = writeln!(o, "  {}", provenance(b));
        let multi = multi_run(b);
        let range_head = if multi { format!("  {:>21}", "Runs range") } else { String::new() };
        let noisy = has_noise(b);
        let noise_head = if noisy { format!("  {:>7}  {:>9}", "Noise", "Rule") } else { String::new() };
        let eff = b.rows.iter().any(|r| r.efficiency_pct.is_some());
        let eff_head = if eff { format!("  {:>7}", "Of peak") } else { String::new() };
        let _ = writeln!(
            o,
            "{:>10}  {:>14}  {:>14}{eff_head}{range_head}  {:>7}  {:>5}{noise_head}  Verdict",
            "Size", "Reference", "Measured", "Ratio", "Tol"
        );
        for r in &b.rows {
            let range = if multi { format!("  {:>21}", range_cell(r)) } else { String::new() };
            let noise = if noisy { format!("  {:>7}  {:>9}", noise_cell(r), r.rule.name()) } else { String::new() };
            let of_peak = if eff { format!("  {:>7}", efficiency_cell(r)) } else { String::new() };
            let verdict = verdict_cell(r, verdict_word(r.verdict), "  ");
            let _ = writeln!(
                o,
                "{:>10}  {:>14.2}  {:>14}{of_peak}{range}  {:>7}  {:>4}%{noise}  {verdict}",
                size_cell(b, r),
                r.reference,
                opt(r.measured, 2),
                opt(r.ratio, 3),
                r.tolerance_pct
            );
        }
        o.push('\n');
    }
    for w in &rep.warnings {
        let _ = writeln!(o, "warning: {}", printable(w));
    }
    o.push_str(&summary_line(rep));
    o.push('\n');
    o
}

/// A row's share of its path's peak: `21.4%`, or `-`.
fn efficiency_cell(r: &Row) -> String {
    r.efficiency_pct.map_or("-".to_string(), |e| format!("{e:.1}%"))
}

/// Markdown: a heading and a pipe table per block, then the summary.
pub fn markdown(rep: &Report) -> String {
    let mut o = String::new();
    for b in &rep.blocks {
        let _ = writeln!(o, "### {}\n\n{}\n", heading(b), provenance(b));
        let multi = multi_run(b);
        let (rh, rs) = if multi { (" Runs range |", "---:|") } else { ("", "") };
        let noisy = has_noise(b);
        let (nh, ns) = if noisy { (" Noise | Rule |", "---:|---|") } else { ("", "") };
        let eff = b.rows.iter().any(|r| r.efficiency_pct.is_some());
        let (eh, es) = if eff { (" Of peak |", "---:|") } else { ("", "") };
        let _ = writeln!(o, "| Size | Reference | Measured |{eh}{rh} Ratio | Tolerance |{nh} Verdict |");
        let _ = writeln!(o, "|---:|---:|---:|{es}{rs}---:|---:|{ns}---|");
        for r in &b.rows {
            let range = if multi { format!(" {} |", range_cell(r)) } else { String::new() };
            let of_peak = if eff { format!(" {} |", efficiency_cell(r)) } else { String::new() };
            let noise = if noisy { format!(" {} | {} |", noise_cell(r), r.rule.name()) } else { String::new() };
            let word = match r.verdict {
                Verdict::Fail => "**FAIL**",
                v => verdict_word(v),
            };
            let verdict = verdict_cell(r, word, ": ");
            let _ = writeln!(
                o,
                "| {} | {:.2} | {} |{of_peak}{range} {} | {}% |{noise} {verdict} |",
                size_cell(b, r),
                r.reference,
                opt(r.measured, 2),
                opt(r.ratio, 3),
                r.tolerance_pct
            );
        }
        o.push('\n');
    }
    for w in &rep.warnings {
        let _ = writeln!(o, "- warning: {}", printable(w));
    }
    if !rep.warnings.is_empty() {
        o.push('\n');
    }
    let _ = writeln!(o, "**{}**", summary_line(rep));
    o
}

/// JSON: the whole report, with the summary line as `summary_line`. The
/// names stay whole, and every character a terminal would act on is a
/// JSON escape (`\u001b`): serde_json escapes only those below U+0020.
pub fn json(rep: &Report) -> Result<String, serde_json::Error> {
    let mut v = serde_json::to_value(rep)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("summary_line".into(), serde_json::Value::String(summary_line(rep)));
    }
    let mut s = json_escaped(&serde_json::to_string_pretty(&v)?);
    s.push('\n');
    Ok(s)
}

/// `json` with the characters [`crate::diag::acts_on_terminal`] names (DEL,
/// C1 controls, bidirectional and zero-width characters) left raw by the
/// serializer written as `\uXXXX`. Outside strings a pretty JSON text
/// holds only the newlines and spaces that lay it out: those stay.
fn json_escaped(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c != '\n' && crate::diag::acts_on_terminal(c) {
            // Every such character is in the Basic Multilingual Plane.
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn render(rep: &Report, format: Format) -> Result<String, serde_json::Error> {
    match format {
        Format::Text => Ok(text(rep)),
        Format::Md => Ok(markdown(rep)),
        Format::Json => json(rep),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::judge::compare;
    use crate::compare::model::{SizeRow, Table};
    use crate::compare::tolerance::Rules;

    fn report() -> Report {
        let t = |label: &str, vals: &[(u64, f64)]| Table {
            benchmark: "osu_bw".into(),
            sized: true,
            points: vals.iter().map(|&(size, v)| SizeRow { size, bw_mbps: Some(v), ..SizeRow::default() }).collect(),
            path: format!("{label}.txt"),
            line: Some(3),
            osu_version: Some("5.6.2".into()),
            run_label: label.into(),
            ..Table::default()
        };
        let r = t("ref", &[(1, 100.0), (2, 100.0), (4, 100.0)]);
        compare(&[r], &[t("a", &[(1, 95.0), (2, 50.0)]), t("b", &[(1, 97.0), (2, 60.0)])], &Rules::default())
    }

    #[test]
    fn text_table_and_summary() {
        let s = text(&report());
        assert!(s.starts_with("osu_bw MPI_CHAR: bandwidth in MB/s (higher is better)\n"), "{s}");
        assert!(s.contains("reference: ref.txt:3 (OSU 5.6.2); measured: median of 2 runs (a, b)"), "{s}");
        assert!(s.contains("Runs range"), "{s}");
        let row2 = s.lines().find(|l| l.trim_start().starts_with("2 ")).unwrap();
        assert!(
            row2.contains("55.00") && row2.contains("50.00..60.00") && row2.contains("FAIL  45.0% lower"),
            "{row2}"
        );
        assert!(s.lines().any(|l| l.trim_start().starts_with("4 ") && l.ends_with("missing")), "{s}");
        let last = s.lines().last().unwrap();
        assert!(last.starts_with("FAIL: 3 reference sizes in 1 table: 1 pass"), "{last}");
    }

    #[test]
    fn markdown_table() {
        let s = markdown(&report());
        assert!(s.contains("### osu_bw MPI_CHAR"));
        assert!(s.contains("| Size | Reference | Measured | Runs range | Ratio | Tolerance | Verdict |"));
        assert!(s.contains("| 2 | 100.00 | 55.00 | 50.00..60.00 | 0.550 | 10% | **FAIL**: 45.0% lower"), "{s}");
        assert!(s.trim_end().ends_with("allowed**"));
    }

    /// Two sizes with spreads (one within noise, one failing beyond it)
    /// and one without: the Noise and Rule columns, and the summary.
    fn noise_report() -> Report {
        let t = |label: &str, vals: &[(u64, f64, Option<f64>)]| Table {
            benchmark: "osu_latency".into(),
            sized: true,
            points: vals
                .iter()
                .map(|&(size, v, ci)| SizeRow { size, latency_us: Some(v), ci95_rel_pct: ci, ..SizeRow::default() })
                .collect(),
            path: format!("{label}.csv"),
            run_label: label.into(),
            ..Table::default()
        };
        let r = t("ref", &[(1, 1.0, Some(10.0)), (2, 1.0, Some(1.0)), (4, 1.0, None)]);
        let m = t("run", &[(1, 1.15, Some(10.0)), (2, 1.2, Some(1.0)), (4, 1.0, Some(1.0))]);
        compare(&[r], &[m], &Rules::default())
    }

    #[test]
    fn noise_rule_columns() {
        let s = text(&noise_report());
        let head = s.lines().nth(2).unwrap();
        assert!(head.ends_with("Tol    Noise       Rule  Verdict"), "{head}");
        let row = |size: &str| s.lines().find(|l| l.trim_start().starts_with(&format!("{size} "))).unwrap();
        assert!(row("1").contains("±15.2%      noise  within noise  +15.0% is inside"), "{}", row("1"));
        assert!(row("2").contains("±1.6%  tolerance  FAIL  20.0% higher"), "{}", row("2"));
        assert!(row("4").contains("      -  tolerance  pass"), "{}", row("4"));
        let last = s.lines().last().unwrap();
        assert!(
            last.starts_with(
                "FAIL: 3 reference sizes in 1 table: 2 pass (0 better than the reference beyond tolerance, 1 within noise), 1 fail"
            ),
            "{last}"
        );
        let md = markdown(&noise_report());
        assert!(md.contains("| Size | Reference | Measured | Ratio | Tolerance | Noise | Rule | Verdict |"), "{md}");
        assert!(md.contains("| 1 | 1.00 | 1.15 | 1.150 | 10% | ±15.2% | noise | within noise: +15.0%"), "{md}");
        let v: serde_json::Value = serde_json::from_str(&json(&noise_report()).unwrap()).unwrap();
        assert_eq!(v["blocks"][0]["rows"][0]["verdict"], "within_noise");
        assert_eq!(v["blocks"][0]["rows"][0]["rule"], "noise");
        assert_eq!(v["blocks"][0]["rows"][2]["noise_pct"], serde_json::Value::Null);
        assert_eq!(v["summary"]["within_noise"], 1);
        // Without spreads, no such columns.
        assert!(!text(&report()).contains("Rule") && !markdown(&report()).contains("Noise"));
    }

    #[test]
    fn json_round_trips() {
        let v: serde_json::Value = serde_json::from_str(&json(&report()).unwrap()).unwrap();
        assert_eq!(v["summary"]["failed"], 1);
        assert_eq!(v["summary"]["ok"], false);
        assert_eq!(v["blocks"][0]["metric"], "bandwidth");
        assert_eq!(v["blocks"][0]["rows"][1]["verdict"], "fail");
        assert_eq!(v["blocks"][0]["rows"][2]["measured"], serde_json::Value::Null);
        assert!(v["summary_line"].as_str().unwrap().starts_with("FAIL"));
    }
}
