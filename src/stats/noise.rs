//! The noise verdict of one size: which of four stated tests its
//! per-iteration samples (in the order they were timed) fail, with every
//! threshold in one serialisable struct so that the run record can keep
//! what the verdicts meant.
//!
//! The tests, in the order flags are listed (most serious first):
//! - `drift`: the means of the first and second half differ by more than
//!   their combined 95% uncertainty (Welch's t test) and by at least
//!   `drift_min_rel` of the overall mean (with thousands of samples, a
//!   difference far too small to matter is already significant);
//! - `bimodal`: a two-cluster test. The samples are sorted, `bimodal_trim`
//!   is cut from each end, and the split into a lower and an upper group
//!   (each at least `bimodal_min_share` of the samples) that explains the
//!   largest share of the variance is found (Otsu's criterion: between-group
//!   over total variance). Two modes if that share is at least
//!   `bimodal_min_explained`. For calibration: the best split of one normal
//!   distribution explains 64%, of a uniform 75%, of skewed single-peaked
//!   shapes (exponential, log-normal, Pareto) 66-70%; two equal normal
//!   modes four standard deviations apart 82%, six apart 90%;
//! - `noisy`: the 95% confidence interval of the mean is wider than
//!   `max_rel_ci` of it (either side), or the robust coefficient of
//!   variation (1.4826 x the median absolute deviation, over the median) is
//!   above `max_cv`. Robust, so that a few long stalls, which `outliers`
//!   reports, do not also make the body of the samples look wide; they
//!   still widen the interval of the mean when they move it;
//! - `outliers`: more than `max_outlier_share` of the samples lie beyond
//!   median ± `outlier_fence_mads` robust standard deviations (1.4826 x the
//!   median absolute deviation, which is the standard deviation for normal
//!   data; never taken below `outlier_min_scale_rel` of the median, so that
//!   timer-quantised samples, whose deviation can be 0, do not make every
//!   sample off the median an outlier).
//!
//! `drift` and `bimodal` need `min_samples` samples; below that they are
//! not tested.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::ci::{mean_ci, median, welch_differ};
use super::moments::Moments;

/// The thresholds of the noise tests (see the module comment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct NoiseThresholds {
    /// `noisy` above this half-width of the mean's 95% interval, as a
    /// share of the mean (0.05 = 5%).
    pub max_rel_ci: f64,
    /// `noisy` above this robust coefficient of variation.
    pub max_cv: f64,
    /// `bimodal` at or above this share of variance explained by the best
    /// two-group split.
    pub bimodal_min_explained: f64,
    /// Each group of that split holds at least this share of the samples.
    pub bimodal_min_share: f64,
    /// Share of the samples cut from each end before splitting.
    pub bimodal_trim: f64,
    /// `drift` needs the halves' means to differ by at least this share of
    /// the mean, as well as beyond their combined 95% uncertainty.
    pub drift_min_rel: f64,
    /// The outlier fence, in robust standard deviations from the median.
    pub outlier_fence_mads: f64,
    /// The robust standard deviation is never taken below this share of
    /// the median.
    pub outlier_min_scale_rel: f64,
    /// `outliers` above this share of samples beyond the fence.
    pub max_outlier_share: f64,
    /// `drift` and `bimodal` are tested from this many samples on.
    pub min_samples: usize,
}

impl Default for NoiseThresholds {
    fn default() -> Self {
        NoiseThresholds {
            max_rel_ci: 0.05,
            max_cv: 0.25,
            bimodal_min_explained: 0.80,
            bimodal_min_share: 0.10,
            bimodal_trim: 0.01,
            drift_min_rel: 0.02,
            outlier_fence_mads: 5.0,
            outlier_min_scale_rel: 0.01,
            max_outlier_share: 0.01,
            min_samples: 20,
        }
    }
}

/// One failed test. The order of the variants is the order flags are
/// listed in (most serious first): a summary showing one flag shows the
/// first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseFlag {
    /// The level moved during the size: the mean depends on when it stopped.
    Drift,
    /// Two levels: the mean describes neither.
    Bimodal,
    /// A wide spread or a wide interval of the mean.
    Noisy,
    /// A few samples far from the rest pull the mean.
    Outliers,
}

impl NoiseFlag {
    pub const ALL: [NoiseFlag; 4] = [NoiseFlag::Drift, NoiseFlag::Bimodal, NoiseFlag::Noisy, NoiseFlag::Outliers];

    pub fn as_str(self) -> &'static str {
        match self {
            NoiseFlag::Drift => "drift",
            NoiseFlag::Bimodal => "bimodal",
            NoiseFlag::Noisy => "noisy",
            NoiseFlag::Outliers => "outliers",
        }
    }
}

impl fmt::Display for NoiseFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the noise tests found for one size: the flags, and the statistic
/// behind each test (None where a test could not run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoiseReport {
    /// Failed tests in [`NoiseFlag`] order; empty means `ok`.
    pub flags: Vec<NoiseFlag>,
    pub samples: usize,
    /// Half-width of the mean's 95% interval over the mean.
    pub rel_ci: Option<f64>,
    /// Coefficient of variation (standard deviation over mean).
    pub cv: Option<f64>,
    /// Robust coefficient of variation (1.4826 x MAD over the median).
    pub robust_cv: Option<f64>,
    /// Share of variance the best two-group split explains, and the
    /// smaller group's share of the samples.
    pub split_explained: Option<f64>,
    pub split_minor_share: Option<f64>,
    /// (second half's mean - first half's) over the overall mean, and
    /// whether Welch's test finds it beyond the combined 95% uncertainty.
    pub drift_rel: Option<f64>,
    pub drift_significant: Option<bool>,
    /// Share of samples beyond the outlier fence.
    pub outlier_share: Option<f64>,
}

impl NoiseReport {
    pub fn is_ok(&self) -> bool {
        self.flags.is_empty()
    }

    /// The most serious flag, if any.
    pub fn primary(&self) -> Option<NoiseFlag> {
        self.flags.first().copied()
    }

    /// The CSV cell: `ok`, or the flags joined by `;` (`drift;noisy`).
    pub fn cell(&self) -> String {
        format_flags(&self.flags)
    }

    /// One line for a person (`--verbose`): each flag with the number
    /// behind it, e.g. `drift (second half +12.0%), outliers (3.1% of
    /// samples beyond the fence)`, or `ok`.
    pub(crate) fn explain(&self) -> String {
        if self.flags.is_empty() {
            return "ok".to_string();
        }
        let pct = |v: Option<f64>| v.map_or_else(|| "?".to_string(), |v| format!("{:.1}%", v * 100.0));
        let words: Vec<String> = self
            .flags
            .iter()
            .map(|f| match f {
                NoiseFlag::Drift => {
                    let d = self.drift_rel.map_or_else(|| "?".to_string(), |v| format!("{:+.1}%", v * 100.0));
                    format!("drift (second half {d})")
                }
                NoiseFlag::Bimodal => format!(
                    "bimodal (two groups explain {}, the smaller {} of samples)",
                    pct(self.split_explained),
                    pct(self.split_minor_share)
                ),
                NoiseFlag::Noisy => {
                    format!("noisy (mean ±{}, robust spread {})", pct(self.rel_ci), pct(self.robust_cv))
                }
                NoiseFlag::Outliers => format!("outliers ({} of samples beyond the fence)", pct(self.outlier_share)),
            })
            .collect();
        words.join(", ")
    }
}

/// `ok`, or the flags in [`NoiseFlag`] order joined by `;`.
pub(crate) fn format_flags(flags: &[NoiseFlag]) -> String {
    if flags.is_empty() {
        return "ok".to_string();
    }
    let mut f = flags.to_vec();
    f.sort_unstable();
    f.dedup();
    f.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(";")
}

/// A CSV cell that is neither `ok` nor flags joined by `;`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("'{0}' is not a noise verdict (ok, or drift, bimodal, noisy, outliers joined by ';')")]
pub struct BadVerdict(pub String);

/// Reads a CSV cell written by [`format_flags`] back (any order, spaces
/// around words allowed).
pub(crate) fn parse_flags(cell: &str) -> Result<Vec<NoiseFlag>, BadVerdict> {
    let c = cell.trim();
    if c == "ok" {
        return Ok(Vec::new());
    }
    let mut flags = Vec::new();
    for w in c.split(';') {
        let w = w.trim();
        let f = NoiseFlag::ALL.into_iter().find(|f| f.as_str() == w).ok_or_else(|| BadVerdict(cell.to_string()))?;
        flags.push(f);
    }
    flags.sort_unstable();
    flags.dedup();
    Ok(flags)
}

impl FromStr for NoiseFlag {
    type Err = BadVerdict;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match parse_flags(s)?.as_slice() {
            [one] => Ok(*one),
            _ => Err(BadVerdict(s.to_string())),
        }
    }
}

/// The robust standard deviation of values around their median `med`:
/// 1.4826 x the median absolute deviation, which is the standard deviation
/// for normal data and moves little for a few far values.
pub(crate) fn robust_sd(values: &[f64], med: f64) -> f64 {
    1.4826 * mad(values, med)
}

/// The median absolute deviation from `med` of `values` (any order).
fn mad(sorted: &[f64], med: f64) -> f64 {
    let mut dev: Vec<f64> = sorted.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    median(&dev).unwrap_or(0.0)
}

/// The best two-group split of ascending `sorted` values after trimming:
/// (share of variance explained, smaller group's share). None when too few
/// values remain or they do not vary.
fn best_split(sorted: &[f64], th: &NoiseThresholds) -> Option<(f64, f64)> {
    // A trim of half or more (a hand-edited threshold) leaves nothing.
    let cut = ((sorted.len() as f64 * th.bimodal_trim.max(0.0)).floor() as usize).min(sorted.len() / 2);
    let xs = &sorted[cut..sorted.len() - cut];
    let n = xs.len();
    let min_group = ((n as f64 * th.bimodal_min_share).ceil() as usize).max(1);
    if n < 2 * min_group {
        return None;
    }
    let m = Moments::of(xs);
    let total = m.variance()? * (n - 1) as f64 / n as f64;
    if total <= 0.0 {
        return None;
    }
    let sum = m.sum();
    let mut below = 0.0;
    let mut best = (0.0f64, 0usize);
    for (i, x) in xs.iter().enumerate().take(n - min_group) {
        below += x;
        let k = i + 1;
        if k < min_group {
            continue;
        }
        let (w1, w2) = (k as f64 / n as f64, (n - k) as f64 / n as f64);
        let d = below / k as f64 - (sum - below) / (n - k) as f64;
        let between = w1 * w2 * d * d;
        if between > best.0 {
            best = (between, k);
        }
    }
    let minor = best.1.min(n - best.1) as f64 / n as f64;
    Some(((best.0 / total).min(1.0), minor))
}

/// Welch's test of the two halves' means: (relative difference,
/// significant at 95%).
fn drift(samples: &[f64], mean: f64) -> Option<(f64, bool)> {
    let (a, b) = samples.split_at(samples.len() / 2);
    let (ma, mb) = (Moments::of(a), Moments::of(b));
    let diff = mb.mean() - ma.mean();
    let rel = if mean != 0.0 { diff / mean } else { 0.0 };
    Some((rel, welch_differ(&ma, &mb)?))
}

/// Runs the tests on one size's per-iteration `samples`, in the order they
/// were timed. None for no samples.
#[cfg(test)]
pub fn assess(samples: &[f64], th: &NoiseThresholds) -> Option<NoiseReport> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    assess_sorted(samples, &sorted, th)
}

/// [`assess`] for a caller that has the same samples sorted ascending too.
pub(crate) fn assess_sorted(samples: &[f64], sorted: &[f64], th: &NoiseThresholds) -> Option<NoiseReport> {
    debug_assert_eq!(samples.len(), sorted.len());
    if samples.is_empty() {
        return None;
    }
    let m = Moments::of(samples);
    let mut flags = Vec::new();

    let rel_ci = mean_ci(&m).map(|ci| ci.relative_half_width());
    let cv = m.cv();
    let med = median(sorted).unwrap_or(0.0);
    let robust_sd = robust_sd(sorted, med);
    let robust_cv = (med > 0.0).then(|| robust_sd / med);
    let enough = samples.len() >= th.min_samples.max(4);

    let (drift_rel, drift_significant) = match drift(samples, m.mean()).filter(|_| enough) {
        Some((rel, sig)) => {
            if sig && rel.abs() >= th.drift_min_rel {
                flags.push(NoiseFlag::Drift);
            }
            (Some(rel), Some(sig))
        }
        None => (None, None),
    };

    let split = best_split(sorted, th).filter(|_| enough);
    if split.is_some_and(|(explained, _)| explained >= th.bimodal_min_explained) {
        flags.push(NoiseFlag::Bimodal);
    }

    if rel_ci.is_some_and(|r| r > th.max_rel_ci) || robust_cv.is_some_and(|c| c > th.max_cv) {
        flags.push(NoiseFlag::Noisy);
    }

    let scale = robust_sd.max(th.outlier_min_scale_rel * med.abs());
    let fence = th.outlier_fence_mads * scale;
    let beyond = sorted.iter().filter(|&&x| (x - med).abs() > fence).count();
    let outlier_share = beyond as f64 / sorted.len() as f64;
    if outlier_share > th.max_outlier_share {
        flags.push(NoiseFlag::Outliers);
    }

    Some(NoiseReport {
        flags,
        samples: samples.len(),
        rel_ci,
        cv,
        robust_cv,
        split_explained: split.map(|s| s.0),
        split_minor_share: split.map(|s| s.1),
        drift_rel,
        drift_significant,
        outlier_share: Some(outlier_share),
    })
}

#[cfg(test)]
mod tests;
