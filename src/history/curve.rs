//! `history check`'s judgement of a run's whole curve: did every size move
//! together?
//!
//! A slower path (a new MPI, a link at a lower rate) moves all sizes of a
//! curve by about the same share; a busy host stalls a few sizes of one run
//! at random. The per-size bands (see [`super::baseline`]) must be wide
//! enough for the stalls, so a shift of the whole curve that stays inside
//! each size's band would pass them. This test pools the sizes:
//!
//! - the run's *level* is the median over its sizes of ln(value / centre),
//!   each centre the geometric mean of the baseline runs at that size (a
//!   median, so the stalled sizes of one run do not move it);
//! - each baseline run has a level too, against the centres of the other
//!   baseline runs (leave one out: a run is not compared with itself);
//! - the band for one new run's level is the prediction interval of those
//!   levels, centre ± t(0.975; n - 1) · σ · sqrt(1 + 1/n), as for one size,
//!   with σ the runs' own scatter: the left-out levels' spread over
//!   sqrt(1 + 1/(n - 1)). Centre and spread are robust (the levels'
//!   median and 1.4826 times their median absolute deviation): one slow
//!   night stored in the history neither moves nor widens the band, so the
//!   next slow night fails too, where a per-size band, which carries
//!   every run, would take it in;
//! - the curve fails when its level lies beyond the band on the worse side
//!   and beyond the tolerance.
//!
//! Latencies are pooled by their median iteration time where the results
//! have it (a stall moves a size's mean, not its median); otherwise by the
//! reported value. The test needs three baseline runs and three sizes.

use serde::Serialize;

use super::baseline::StoredRun;
use super::ingest::Incoming;
use crate::compare::judge::median;
use crate::compare::model::Quantity;
use crate::stats::ci::t_975;
use crate::stats::noise::robust_sd;

/// Baseline runs and sizes the curve test needs.
const MIN_RUNS: usize = 3;
const MIN_SIZES: usize = 3;

/// One table's curve against its baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Curve {
    pub benchmark: String,
    pub datatype: String,
    /// What was pooled: `latency (median iteration)`, `latency`, `bandwidth` ...
    pub statistic: String,
    pub sizes: usize,
    pub runs: usize,
    /// The run's level against the baseline, percent (+31.0: 1.31 times).
    pub shift_pct: f64,
    /// The band's worse edge for a like run's level, percent (above for a
    /// time, below for a bandwidth or a rate).
    pub band_pct: f64,
    pub tolerance_pct: f64,
    pub higher_is_better: bool,
    pub failed: bool,
}

impl Curve {
    /// One line: `osu_latency MPI_CHAR: the whole curve (latency (median
    /// iteration), 11 sizes) is +31.0% against the baseline; a like run is
    /// below +4.2% (10 runs), tolerance 10%: FAIL`.
    pub fn line(&self) -> String {
        format!(
            "{} {}: the whole curve ({}, {} sizes) is {:+.1}% against the baseline; a like run is {} {:+.1}% \
             ({} runs), tolerance {}%: {}",
            self.benchmark,
            self.datatype,
            self.statistic,
            self.sizes,
            self.shift_pct,
            if self.higher_is_better { "above" } else { "below" },
            self.band_pct,
            self.runs,
            self.tolerance_pct,
            if self.failed { "FAIL" } else { "pass" }
        )
    }
}

/// Values per size of one run: (size, value).
type Series = Vec<(u64, f64)>;

/// The series a run's curve is judged by: its median iterations where it
/// and every baseline run have them, else its first metric's values.
fn series_of(inc: &Incoming, base: &[StoredRun]) -> Option<(String, Quantity, Series, Vec<Series>)> {
    let has_medians = !inc.medians.is_empty() && base.iter().all(|r| !r.medians.is_empty());
    if has_medians {
        let run = inc.medians.iter().map(|m| (m.0, m.1)).collect();
        let baseline = base.iter().map(|r| r.medians.iter().map(|m| (m.0, m.1)).collect()).collect();
        return Some(("latency (median iteration)".into(), Quantity::Latency, run, baseline));
    }
    let metric = [Quantity::Latency, Quantity::Bandwidth, Quantity::MessageRate]
        .into_iter()
        .find(|m| inc.points.iter().any(|p| p.1 == *m))?;
    let pick = |pts: &[(u64, Quantity, f64, Option<f64>)]| -> Series {
        pts.iter().filter(|p| p.1 == metric).map(|p| (p.0, p.2)).collect()
    };
    Some((metric.name().to_string(), metric, pick(&inc.points), base.iter().map(|r| pick(&r.points)).collect()))
}

fn value_at(s: &Series, size: u64) -> Option<f64> {
    s.iter().find(|p| p.0 == size).map(|p| p.1).filter(|v| v.is_finite() && *v > 0.0)
}

/// ln of the geometric mean of `runs` at each of `sizes`.
fn log_centres(runs: &[&Series], sizes: &[u64]) -> Vec<f64> {
    sizes
        .iter()
        .map(|&s| runs.iter().filter_map(|r| value_at(r, s)).map(f64::ln).sum::<f64>() / runs.len() as f64)
        .collect()
}

/// The median over `sizes` of ln(value / centre).
fn level(run: &Series, sizes: &[u64], centres: &[f64]) -> Option<f64> {
    let mut d: Vec<f64> = sizes.iter().zip(centres).filter_map(|(&s, c)| Some(value_at(run, s)?.ln() - c)).collect();
    median(&mut d)
}

/// Judges `inc`'s whole curve against `base` (its baseline runs) with the
/// largest tolerance of its sizes; None where the test cannot be made
/// (fewer than three runs or sizes shared by all).
pub(crate) fn judge(inc: &Incoming, base: &[StoredRun], tolerance_pct: impl Fn(u64) -> f64) -> Option<Curve> {
    if base.len() < MIN_RUNS {
        return None;
    }
    let (statistic, metric, run, baseline) = series_of(inc, base)?;
    let sizes: Vec<u64> = run
        .iter()
        .map(|p| p.0)
        .filter(|&s| value_at(&run, s).is_some() && baseline.iter().all(|b| value_at(b, s).is_some()))
        .collect();
    if sizes.len() < MIN_SIZES {
        return None;
    }
    let all: Vec<&Series> = baseline.iter().collect();
    let centres = log_centres(&all, &sizes);
    let x = level(&run, &sizes, &centres)?;
    let mut levels = Vec::with_capacity(baseline.len());
    for (j, b) in baseline.iter().enumerate() {
        let others: Vec<&Series> = baseline.iter().enumerate().filter(|(k, _)| *k != j).map(|(_, r)| r).collect();
        levels.push(level(b, &sizes, &log_centres(&others, &sizes))?);
    }
    let n = levels.len() as f64;
    let mean = median(&mut levels.clone())?;
    let sd = robust_sd(&levels, mean);
    // A level left out of n - 1 runs' centres scatters as sqrt(1 + 1/(n - 1))
    // times a run does; a new run's level, against all n, as
    // sqrt(1 + 1/n): the product of the two corrections is sqrt(1 - 1/n²).
    let half = t_975(n - 1.0) * sd * (1.0 - 1.0 / (n * n)).sqrt();
    // Worse is up for a time, down for a bandwidth or a rate.
    let ratio = x.exp();
    let (edge, worse_pct, beyond) = if metric.higher_is_better() {
        let edge = (mean - half).exp();
        (edge, (1.0 - ratio) * 100.0, ratio < edge)
    } else {
        let edge = (mean + half).exp();
        (edge, (ratio - 1.0) * 100.0, ratio > edge)
    };
    let tolerance_pct = sizes.iter().map(|&s| tolerance_pct(s)).fold(0.0, f64::max);
    let failed = beyond && worse_pct > tolerance_pct;
    Some(Curve {
        benchmark: inc.table.benchmark.clone(),
        datatype: inc.key.datatype.clone(),
        statistic,
        sizes: sizes.len(),
        runs: baseline.len(),
        shift_pct: (ratio - 1.0) * 100.0,
        band_pct: (edge - 1.0) * 100.0,
        tolerance_pct,
        higher_is_better: metric.higher_is_better(),
        failed,
    })
}

#[cfg(test)]
mod tests;
