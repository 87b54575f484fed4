//! Writes a comparison report as a plain-text table per benchmark, as
//! markdown, or as JSON; each ends with (or carries) the one-line summary.

use std::fmt::Write as _;

use super::judge::{Block, Report, Row, Verdict};

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
    }
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

fn heading(b: &Block) -> String {
    let better = if b.higher_is_better { "higher is better" } else { "lower is better" };
    format!("{} {}: {} in {} ({better})", b.benchmark, b.datatype, b.metric.name(), b.unit)
}

fn provenance(b: &Block) -> String {
    let version = b.reference_version.as_ref().map(|v| format!(" (OSU {v})")).unwrap_or_default();
    let measured = match b.runs.len() {
        1 => format!("measured: {}", b.runs[0]),
        n => format!("measured: median of {n} runs ({})", b.runs.join(", ")),
    };
    format!("reference: {}{version}; {measured}", b.reference_from.join(", "))
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
    if s.missing > 0 {
        let _ = write!(line, ", {} not measured", s.missing);
    }
    if s.skipped > 0 {
        let _ = write!(line, ", {} skipped (reference not above 0)", s.skipped);
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
        let _ = writeln!(
            o,
            "{:>10}  {:>14}  {:>14}{range_head}  {:>7}  {:>5}  Verdict",
            "Size", "Reference", "Measured", "Ratio", "Tol"
        );
        for r in &b.rows {
            let range = if multi { format!("  {:>21}", range_cell(r)) } else { String::new() };
            let mut verdict = verdict_word(r.verdict).to_string();
            if !r.reasons.is_empty() && r.verdict != Verdict::Missing {
                verdict = format!("{verdict}  {}", r.reasons.join("; "));
            }
            let _ = writeln!(
                o,
                "{:>10}  {:>14.2}  {:>14}{range}  {:>7}  {:>4}%  {verdict}",
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
        let _ = writeln!(o, "warning: {w}");
    }
    o.push_str(&summary_line(rep));
    o.push('\n');
    o
}

/// Markdown: a heading and a pipe table per block, then the summary.
pub fn markdown(rep: &Report) -> String {
    let mut o = String::new();
    for b in &rep.blocks {
        let _ = writeln!(o, "### {}\n\n{}\n", heading(b), provenance(b));
        let multi = multi_run(b);
        let (rh, rs) = if multi { (" Runs range |", "---:|") } else { ("", "") };
        let _ = writeln!(o, "| Size | Reference | Measured |{rh} Ratio | Tolerance | Verdict |");
        let _ = writeln!(o, "|---:|---:|---:|{rs}---:|---:|---|");
        for r in &b.rows {
            let range = if multi { format!(" {} |", range_cell(r)) } else { String::new() };
            let mut verdict = match r.verdict {
                Verdict::Fail => "**FAIL**".to_string(),
                v => verdict_word(v).to_string(),
            };
            if !r.reasons.is_empty() && r.verdict != Verdict::Missing {
                verdict = format!("{verdict}: {}", r.reasons.join("; "));
            }
            let _ = writeln!(
                o,
                "| {} | {:.2} | {} |{range} {} | {}% | {verdict} |",
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
        let _ = writeln!(o, "- warning: {w}");
    }
    if !rep.warnings.is_empty() {
        o.push('\n');
    }
    let _ = writeln!(o, "**{}**", summary_line(rep));
    o
}

/// JSON: the whole report, with the summary line as `summary_line`.
pub fn json(rep: &Report) -> Result<String, serde_json::Error> {
    let mut v = serde_json::to_value(rep)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("summary_line".into(), serde_json::Value::String(summary_line(rep)));
    }
    let mut s = serde_json::to_string_pretty(&v)?;
    s.push('\n');
    Ok(s)
}

pub fn render(rep: &Report, format: Format) -> Result<String, serde_json::Error> {
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
    use crate::compare::model::{Point, Table};
    use crate::compare::tolerance::Rules;

    fn report() -> Report {
        let t = |label: &str, vals: &[(u64, f64)]| Table {
            benchmark: "osu_bw".into(),
            sized: true,
            points: vals.iter().map(|&(size, v)| Point { size, bw_mbps: Some(v), ..Point::default() }).collect(),
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
