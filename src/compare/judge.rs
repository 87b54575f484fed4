//! Matches measured tables to reference tables by benchmark, datatype and
//! size, and judges each size by the rules: the direction of the metric
//! decides what "worse" means, several runs (or several reference outputs)
//! are reduced to their median first.
//!
//! Two rules decide a size. Where both sides carry a spread (the 95%
//! interval of each value, from commbench's CSV), the noise rule comes
//! first: a difference no larger than the combined uncertainty of the two
//! values (the square root of the sum of their squared half-widths: the
//! 95% half-width of the difference of two independent estimates) is
//! `within noise`, whatever the tolerance says (the run's half-width
//! counting at most as much as the reference's own: see [`noise_band`]).
//! A difference beyond it is
//! judged by the tolerance as before, so a failure needs a difference that
//! the intervals support and that exceeds the tolerance. Where either side
//! has no spread (OSU's text output has none) the tolerance alone decides,
//! exactly as without the rule. Absolute limits and failed validation fail
//! a size under either rule.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;

use super::model::{self, Quantity, SizeRow, Table};
use super::tolerance::Rules;

/// The outcome for one size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within tolerance and limits.
    Pass,
    /// Passes, and is better than the reference by more than the tolerance.
    Better,
    Fail,
    /// In the reference, not in any run.
    Missing,
    /// The reference value is not above 0, or not a plausible measurement
    /// (see [`Quantity::implausible`]): no ratio to judge.
    Skipped,
    /// The difference is inside the combined uncertainty of the two
    /// values: neither a pass nor a failure against the tolerance (counted
    /// with the passes).
    WithinNoise,
}

/// Which rule decided a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The tolerance (and limits): no spread on one side, or a difference
    /// beyond the combined uncertainty.
    Tolerance,
    /// The difference is within the combined uncertainty.
    Noise,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Tolerance => "tolerance",
            Rule::Noise => "noise",
        }
    }
}

/// One size of one compared table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub size: u64,
    pub reference: f64,
    /// Median over the runs that measured this size.
    pub measured: Option<f64>,
    pub runs: usize,
    pub measured_min: Option<f64>,
    pub measured_max: Option<f64>,
    /// measured / reference.
    pub ratio: Option<f64>,
    pub tolerance_pct: f64,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    /// The rule that decided the verdict.
    pub rule: Rule,
    /// Half-width of the 95% interval of the difference, in percent of the
    /// reference; None where either side has no spread.
    pub noise_pct: Option<f64>,
    /// A bandwidth block: the median over the runs of the size's share of
    /// its path's peak, percent, where the runs' CSVs say it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub efficiency_pct: Option<f64>,
}

impl Row {
    /// A size with no measured value judged (`verdict` says why; the
    /// caller adds its reasons).
    fn unjudged(size: u64, reference: f64, tolerance_pct: f64, verdict: Verdict) -> Row {
        Row {
            size,
            reference,
            measured: None,
            runs: 0,
            measured_min: None,
            measured_max: None,
            ratio: None,
            tolerance_pct,
            verdict,
            reasons: Vec::new(),
            rule: Rule::Tolerance,
            noise_pct: None,
            efficiency_pct: None,
        }
    }
}

/// One (benchmark, datatype, metric) comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Block {
    pub benchmark: String,
    pub datatype: String,
    pub metric: Quantity,
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// False for benchmarks without sizes (barrier).
    pub sized: bool,
    /// Where the reference values came from (`path:line`) and its OSU version.
    pub reference_from: Vec<String>,
    pub reference_version: Option<String>,
    /// The runs measured, by label.
    pub runs: Vec<String>,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Tally {
    pub points: usize,
    /// Passes, those better beyond tolerance and those within noise included.
    pub passed: usize,
    pub better: usize,
    /// Sizes the noise rule decided (counted in `passed`).
    pub within_noise: usize,
    pub failed: usize,
    pub missing: usize,
    pub skipped: usize,
    /// Reference tables no run measured.
    pub unmatched: usize,
    pub allowed_failures: usize,
    /// Failures that count against the allowance.
    pub counted_failures: usize,
    /// Runs whose record says they did not complete (`running`, `error`,
    /// `timeout` ...): their results are not trusted, the comparison fails.
    pub incomplete_runs: Vec<String>,
    pub ok: bool,
}

impl Tally {
    /// No size was judged (every one missing or skipped): neither a pass
    /// nor a failure.
    pub(crate) fn nothing_judged(&self) -> bool {
        self.passed + self.failed == 0
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub blocks: Vec<Block>,
    pub notes: Vec<String>,
    /// Differences between the reference and the runs that make the
    /// numbers less comparable (memory, datatypes, process counts, options).
    pub warnings: Vec<String>,
    pub summary: Tally,
}

pub fn median(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// The points of one side of a block by size, in table order: built once,
/// so that a size's values are found without looking through every point
/// again (which made compare quadratic in rows).
struct BySize<'a>(BTreeMap<u64, Vec<&'a SizeRow>>);

impl<'a> BySize<'a> {
    fn new(tables: &[&'a Table]) -> BySize<'a> {
        let mut by: BTreeMap<u64, Vec<&'a SizeRow>> = BTreeMap::new();
        for p in tables.iter().flat_map(|t| &t.points) {
            by.entry(p.size).or_default().push(p);
        }
        BySize(by)
    }

    fn at(&self, size: u64) -> &[&'a SizeRow] {
        self.0.get(&size).map_or(&[], Vec::as_slice)
    }

    /// The sizes with a value of `metric`, ascending.
    fn sizes(&self, metric: Quantity) -> Vec<u64> {
        self.0.iter().filter(|(_, ps)| ps.iter().any(|p| p.value(metric).is_some())).map(|(s, _)| *s).collect()
    }
}

fn values_at(points: &BySize, metric: Quantity, size: u64) -> Vec<f64> {
    points.at(size).iter().filter_map(|p| p.value(metric)).collect()
}

/// Verdict, ratio and reasons for one measured value.
pub(crate) fn judge_value(
    metric: Quantity,
    size: u64,
    reference: f64,
    measured: f64,
    rules: &Rules,
) -> (Verdict, f64, Vec<String>) {
    let tol = rules.tolerance_pct(size);
    let mut reasons = Vec::new();
    for l in rules.limits_for(metric, size) {
        if l.violated_by(measured) {
            reasons.push(l.describe());
        }
    }
    if reference <= 0.0 {
        let v = if reasons.is_empty() { Verdict::Skipped } else { Verdict::Fail };
        return (v, f64::NAN, reasons);
    }
    let ratio = measured / reference;
    let worse_pct = if metric.higher_is_better() { (1.0 - ratio) * 100.0 } else { (ratio - 1.0) * 100.0 };
    // Exactly at the tolerance passes; the slack only absorbs rounding.
    let slack = 1e-9 * tol.max(1.0);
    if worse_pct > tol + slack {
        let dir = if metric.higher_is_better() { "lower" } else { "higher" };
        reasons.insert(0, format!("{worse_pct:.1}% {dir} than the reference (tolerance {tol}%)"));
    }
    let verdict = if !reasons.is_empty() {
        Verdict::Fail
    } else if -worse_pct > tol + slack {
        Verdict::Better
    } else {
        Verdict::Pass
    };
    (verdict, ratio, reasons)
}

/// A size's spread on one side: the median of the spreads (`ci95_rel_pct`)
/// of the values at `size`, as a share (0.025 for 2.5%); None unless every
/// such value has one.
fn spread_at(points: &BySize, metric: Quantity, size: u64) -> Option<f64> {
    let mut spreads = Vec::new();
    for p in points.at(size).iter().filter(|p| p.value(metric).is_some()) {
        spreads.push(p.ci95_rel_pct? / 100.0);
    }
    median(&mut spreads)
}

/// The noise rule for one size: the combined 95% uncertainty of the
/// difference in percent of the reference, and whether the difference is
/// inside it. `spreads` are each side's relative half-widths (shares).
///
/// The allowance is bounded by the reference's own spread: the run's
/// relative half-width counts at most as much as the reference's, so a
/// run cannot buy itself room by being (or claiming to be) noisier than
/// the reference it is judged against: a run both much slower and much
/// noisier, or whose file claims an interval of 1e300, is judged by the
/// tolerance. A reference with no spread allows none. The sum is taken
/// with `hypot`, which does not overflow for huge values.
pub(crate) fn noise_band(reference: f64, measured: f64, spreads: (f64, f64)) -> (f64, bool) {
    let (hr, hm) = spreads;
    let band = (hr * reference).hypot(hm.min(hr) * measured) / reference * 100.0;
    let diff = (measured / reference - 1.0) * 100.0;
    // Exactly at the band is within it; the slack only absorbs rounding.
    (band, diff.abs() <= band + 1e-9 * band.max(1.0))
}

/// Verdict, ratio, reasons, rule and noise band for one measured value;
/// `spreads` as in [`noise_band`], None where either side has none.
pub(crate) fn judge_with_noise(
    metric: Quantity,
    size: u64,
    reference: f64,
    measured: f64,
    spreads: Option<(f64, f64)>,
    rules: &Rules,
) -> (Verdict, f64, Vec<String>, Rule, Option<f64>) {
    let (verdict, ratio, reasons) = judge_value(metric, size, reference, measured, rules);
    let Some(spreads) = spreads.filter(|_| reference > 0.0) else {
        return (verdict, ratio, reasons, Rule::Tolerance, None);
    };
    let (band, within) = noise_band(reference, measured, spreads);
    let limits_failed = rules.limits_for(metric, size).any(|l| l.violated_by(measured));
    if within && !limits_failed {
        let diff = (ratio - 1.0) * 100.0;
        let why = format!("{diff:+.1}% is inside the combined 95% uncertainty ±{band:.1}%");
        return (Verdict::WithinNoise, ratio, vec![why], Rule::Noise, Some(band));
    }
    (verdict, ratio, reasons, Rule::Tolerance, Some(band))
}

type Key = (String, String);

fn key(t: &Table) -> Key {
    (t.benchmark.clone(), t.datatype_key().to_string())
}

/// The tables of each (benchmark, datatype), the keys in the order they
/// first appear.
pub(crate) fn grouped(tables: &[Table]) -> (Vec<Key>, HashMap<Key, Vec<&Table>>) {
    let mut order = Vec::new();
    let mut groups: HashMap<Key, Vec<&Table>> = HashMap::new();
    for t in tables {
        let k = key(t);
        let group = groups.entry(k).or_insert_with_key(|k| {
            order.push(k.clone());
            Vec::new()
        });
        group.push(t);
    }
    (order, groups)
}

fn compare_block(k: &Key, metric: Quantity, refs: &[&Table], runs: &[&Table], rules: &Rules) -> Block {
    let (ref_points, run_points) = (BySize::new(refs), BySize::new(runs));
    let sizes = ref_points.sizes(metric);
    // One name per run; runs from files of the same name, or several
    // outputs in one file, are told apart by file name and line.
    let mut per_label: HashMap<&str, usize> = HashMap::new();
    for t in runs {
        *per_label.entry(&t.run_label).or_default() += 1;
    }
    let labels: Vec<String> = runs
        .iter()
        .map(|t| {
            if per_label[t.run_label.as_str()] < 2 {
                return t.run_label.clone();
            }
            let file = Path::new(&t.path).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            t.line.map_or(file.clone(), |l| format!("{file}:{l}"))
        })
        .collect();
    let mut rows = Vec::new();
    for size in sizes {
        let tolerance_pct = rules.tolerance_pct(size);
        // A reference value no measurement could give (NaN, infinite,
        // 1e308 us, a subnormal) judges nothing: the size is skipped,
        // saying why. 0 and below are kept for the limits to judge.
        let (mut ref_values, absurd): (Vec<f64>, Vec<f64>) = values_at(&ref_points, metric, size)
            .into_iter()
            .partition(|v| (v.is_finite() && *v <= 0.0) || metric.implausible(*v).is_none());
        let Some(reference) = median(&mut ref_values) else {
            // Every size listed has a value: one of them is absurd.
            let v = absurd.first().copied().unwrap_or(f64::NAN);
            let why = metric.implausible(v).unwrap_or_default();
            rows.push(Row {
                reasons: vec![format!("reference {} {why}: not judged", model::shown(v))],
                ..Row::unjudged(size, v, tolerance_pct, Verdict::Skipped)
            });
            continue;
        };
        let (mut measured, bad): (Vec<f64>, Vec<f64>) =
            values_at(&run_points, metric, size).into_iter().partition(|v| metric.implausible(*v).is_none());
        if !bad.is_empty() {
            // A time or a rate is a positive number within what any
            // machine can measure: anything else is a broken measurement,
            // never a pass.
            let mut reasons: Vec<String> = Vec::new();
            for v in &bad {
                let why = metric.implausible(*v).unwrap_or_default();
                let line = format!("measured {} {why}", model::shown(*v));
                if !reasons.contains(&line) {
                    reasons.push(line);
                }
            }
            rows.push(Row {
                runs: measured.len() + bad.len(),
                reasons,
                ..Row::unjudged(size, reference, tolerance_pct, Verdict::Fail)
            });
            continue;
        }
        let Some(med) = median(&mut measured) else {
            rows.push(Row {
                reasons: vec!["not measured".into()],
                ..Row::unjudged(size, reference, tolerance_pct, Verdict::Missing)
            });
            continue;
        };
        let one_run_band = refs.iter().all(|t| t.band_for_one_run);
        let run_spread = if one_run_band { Some(0.0) } else { spread_at(&run_points, metric, size) };
        let spreads = spread_at(&ref_points, metric, size).zip(run_spread);
        let (mut verdict, ratio, mut reasons, rule, noise_pct) =
            judge_with_noise(metric, size, reference, med, spreads, rules);
        if one_run_band && rule == Rule::Noise {
            let diff = (ratio - 1.0) * 100.0;
            let band = noise_pct.unwrap_or_default();
            reasons = vec![format!("{diff:+.1}% is inside the baseline's band for one run, ±{band:.1}%")];
        }
        if verdict == Verdict::Skipped {
            let why = metric.implausible(reference).unwrap_or_default();
            reasons.push(format!("reference {} {why}: not judged", model::shown(reference)));
        }
        let failed_checks = run_points.at(size).iter().filter(|p| p.validation == Some(false)).count();
        if failed_checks > 0 {
            verdict = Verdict::Fail;
            reasons.push(format!("data validation failed in {failed_checks} run(s)"));
        }
        rows.push(Row {
            size,
            reference,
            measured: Some(med),
            runs: measured.len(),
            measured_min: measured.first().copied(),
            measured_max: measured.last().copied(),
            ratio: ratio.is_finite().then_some(ratio),
            tolerance_pct,
            verdict,
            reasons,
            rule,
            noise_pct,
            efficiency_pct: if metric == Quantity::Bandwidth {
                median(&mut values_at(&run_points, Quantity::Efficiency, size))
            } else {
                None
            },
        });
    }
    Block {
        benchmark: k.0.clone(),
        datatype: k.1.clone(),
        metric,
        unit: metric.unit(),
        higher_is_better: metric.higher_is_better(),
        sized: refs.iter().all(|t| t.sized),
        reference_from: refs.iter().map(|t| t.origin()).collect(),
        reference_version: refs.iter().find_map(|t| t.osu_version.clone()),
        runs: labels,
        rows,
    }
}

/// Compares every reference table with the runs' tables of the same
/// benchmark and datatype.
pub fn compare(reference: &[Table], runs: &[Table], rules: &Rules) -> Report {
    let mut blocks = Vec::new();
    let mut notes = Vec::new();
    let mut unmatched = 0;
    let (ref_keys, ref_groups) = grouped(reference);
    let (run_keys, run_groups) = grouped(runs);
    for k in &ref_keys {
        let refs = &ref_groups[k];
        let meas: &[&Table] = run_groups.get(k).map_or(&[], Vec::as_slice);
        if meas.is_empty() {
            notes.push(format!("{} {}: in the reference but in no run: not compared", k.0, k.1));
            unmatched += 1;
            continue;
        }
        let has = |ts: &[&Table], m: Quantity| ts.iter().any(|t| t.points.iter().any(|p| p.value(m).is_some()));
        let judged: &[Quantity] = if rules.by_efficiency { &[Quantity::Efficiency] } else { &Quantity::ALL };
        let metrics: Vec<Quantity> = judged.iter().copied().filter(|m| has(refs, *m) && has(meas, *m)).collect();
        if metrics.is_empty() && rules.by_efficiency {
            let why = "an efficiency on both sides (commbench CSVs of a bandwidth whose path's peak is known)";
            notes.push(format!("{} {}: not compared: --by-efficiency needs {why}", k.0, k.1));
            unmatched += 1;
        } else if metrics.is_empty() {
            notes.push(format!("{} {}: the reference and the runs share no metric", k.0, k.1));
            unmatched += 1;
        }
        for m in metrics {
            blocks.push(compare_block(k, m, refs, meas, rules));
        }
    }
    for k in run_keys {
        if !ref_groups.contains_key(&k) {
            notes.push(format!("{} {}: measured but not in the reference: not compared", k.0, k.1));
        }
    }
    if rules.require_all {
        // Every reference size is to be judged: one that cannot be fails.
        for r in blocks.iter_mut().flat_map(|b| &mut b.rows).filter(|r| r.verdict == Verdict::Skipped) {
            r.verdict = Verdict::Fail;
            r.reasons.push("--require-all fails a size whose reference cannot be judged".into());
        }
    }
    let summary = tally(&blocks, unmatched, rules);
    Report { blocks, notes, warnings: Vec::new(), summary }
}

/// The summary of `blocks`' verdicts under `rules`; `unmatched` reference
/// tables no run measured.
pub(crate) fn tally(blocks: &[Block], unmatched: usize, rules: &Rules) -> Tally {
    let mut s = Tally { unmatched, allowed_failures: rules.allowed_failures, ..Tally::default() };
    for r in blocks.iter().flat_map(|b| &b.rows) {
        s.points += 1;
        match r.verdict {
            Verdict::Pass => s.passed += 1,
            Verdict::Better => {
                s.passed += 1;
                s.better += 1
            }
            Verdict::Fail => s.failed += 1,
            Verdict::Missing => s.missing += 1,
            Verdict::Skipped => s.skipped += 1,
            Verdict::WithinNoise => {
                s.passed += 1;
                s.within_noise += 1
            }
        }
    }
    s.counted_failures = s.failed + if rules.require_all { s.missing + s.unmatched } else { 0 };
    s.ok = s.counted_failures <= s.allowed_failures;
    s
}

#[cfg(test)]
mod tests;
