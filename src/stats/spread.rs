//! A size's spread in one bundle, from its per-iteration samples: the 95%
//! intervals of the mean (the value OSU reports) and of the median, the
//! 10th and 90th percentiles (a band a plot can draw), and the noise
//! verdict. `ci95_rel_pct` is the number `commbench compare` reads from the
//! CSV column of that name (`compare::csv_input::SPREAD_COLUMN`).

use serde::Serialize;

use super::ci::{mean_ci, median_ci, Interval};
use super::moments::Moments;
use super::noise::{assess_sorted, NoiseReport, NoiseThresholds};

/// The spread of one size, in the unit the samples were scaled to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub samples: usize,
    /// 95% interval of the mean; None below two samples.
    pub mean: Option<Interval>,
    /// 95% interval of the median; None below six samples.
    pub median: Option<Interval>,
    /// Nearest-rank 10th and 90th percentiles.
    pub p10: f64,
    pub p90: f64,
    pub noise: NoiseReport,
}

impl Spread {
    /// The half-width of the mean's interval in percent of the mean: the
    /// CSV's `ci95_rel_pct`. The same for a rate derived from the mean time
    /// (bandwidth, message rate), to first order. None below two samples.
    pub fn ci95_rel_pct(&self) -> Option<f64> {
        self.mean.map(|ci| ci.relative_half_width() * 100.0).filter(|p| p.is_finite())
    }
}

/// Nearest-rank percentile `p` (0 to 100) of ascending, non-empty `sorted`.
fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The spread of `samples` (in the order they were timed), each multiplied
/// by `scale` first (e.g. 0.5e6: a round trip in seconds to a one-way
/// latency in microseconds). None for no samples.
pub fn spread(samples: &[f64], scale: f64, th: &NoiseThresholds) -> Option<Spread> {
    if samples.is_empty() {
        return None;
    }
    let scaled: Vec<f64> = samples.iter().map(|s| s * scale).collect();
    let mut sorted = scaled.clone();
    sorted.sort_by(f64::total_cmp);
    Some(Spread {
        samples: samples.len(),
        mean: mean_ci(&Moments::of(&scaled)),
        median: median_ci(&sorted),
        p10: nearest_rank(&sorted, 10.0),
        p90: nearest_rank(&sorted, 90.0),
        noise: assess_sorted(&scaled, &sorted, th)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::synthetic::{constant, gaussian};

    #[test]
    fn a_size_in_one_bundle() {
        let secs: Vec<f64> = (1..=100).map(|i| i as f64 * 1e-6).collect();
        let s = spread(&secs, 1e6, &NoiseThresholds::default()).unwrap();
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(s.samples == 100 && near(s.p10, 10.0) && near(s.p90, 90.0), "{s:?}");
        let mean = s.mean.unwrap();
        assert!((mean.estimate - 50.5).abs() < 1e-9);
        let median = s.median.unwrap();
        assert!(near(median.estimate, 50.5) && near(median.low, 40.0) && near(median.high, 61.0), "{median:?}");
        let rel = s.ci95_rel_pct().unwrap();
        assert!((rel - mean.half_width() / 50.5 * 100.0).abs() < 1e-9);
        // Scaling changes the bounds, not the relative width.
        let half = spread(&secs, 0.5e6, &NoiseThresholds::default()).unwrap();
        assert!((half.ci95_rel_pct().unwrap() - rel).abs() < 1e-9);
        assert!((half.p90 - 45.0).abs() < 1e-9);
    }

    #[test]
    fn quiet_and_empty_sizes() {
        let s = spread(&constant(50, 2e-6), 1e6, &NoiseThresholds::default()).unwrap();
        assert_eq!((s.ci95_rel_pct(), s.noise.cell().as_str()), (Some(0.0), "ok"));
        let s = spread(&gaussian(10_000, 1e-6, 0.1e-6, 1), 1e6, &NoiseThresholds::default()).unwrap();
        // 10% spread over 10000 samples: about 0.2% either side.
        assert!((0.15..0.25).contains(&s.ci95_rel_pct().unwrap()), "{s:?}");
        assert!(s.p10 < 0.9 && s.p90 > 1.1);
        let one = spread(&[1e-6], 1e6, &NoiseThresholds::default()).unwrap();
        assert_eq!((one.mean, one.median, one.ci95_rel_pct()), (None, None, None));
        assert!(spread(&[], 1.0, &NoiseThresholds::default()).is_none());
    }
}
