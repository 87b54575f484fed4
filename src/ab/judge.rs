//! What `commbench ab` concludes from its rounds (pure): per series (a
//! benchmark's metric at one datatype) and size, the median of A and of B
//! over the rounds, their ratio A/B, each side's interquartile range as a
//! share of its median, and with a control (A run twice a round) the A/A
//! band: how far the two A medians lie apart, which is what noise alone
//! gives. A size misses a target only when A is worse than B by more than
//! the target and by more than the A/A band.

use std::collections::BTreeMap;

use crate::compare::model::Quantity;

/// One series' values at one size: one value per round of each run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples {
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    /// The control's second run of A, where there is one.
    pub a2: Vec<f64>,
}

/// What a series is: benchmark, datatype and metric.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SeriesKey {
    pub benchmark: String,
    pub datatype: String,
    pub metric: Quantity,
}

/// Every value collected, by series and size.
pub(crate) type Collected = BTreeMap<SeriesKey, BTreeMap<u64, Samples>>;

/// The verdict on one size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Within the target (or no target given).
    Met,
    /// Worse than the target, but not by more than the printed resolution
    /// (two decimals): the outputs cannot show a smaller difference.
    WithinResolution,
    /// Worse than the target, but within the A/A band: noise.
    WithinNoise,
    /// Worse than the target and than the noise: a finding.
    Missed,
}

impl Mark {
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::Met => "",
            Mark::WithinResolution => "=",
            Mark::WithinNoise => "~",
            Mark::Missed => "*",
        }
    }
}

/// One size's line.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeLine {
    pub size: u64,
    pub a: f64,
    pub b: f64,
    /// Median of A over median of B.
    pub ratio: f64,
    pub iqr_a_pct: f64,
    pub iqr_b_pct: f64,
    /// |median of A's second run / median of A - 1| in percent.
    pub aa_band_pct: Option<f64>,
    pub mark: Mark,
}

/// The median of `xs` (NaN for none).
pub fn median(xs: &[f64]) -> f64 {
    quantile(xs, 0.5)
}

/// The `q` quantile with linear interpolation between order statistics
/// (the "inclusive" method).
pub(crate) fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The interquartile range as a share of the median, in percent: robust
/// to the one-off stalls of a shared machine, which a min-max range is not.
pub(crate) fn iqr_pct(xs: &[f64]) -> f64 {
    let m = median(xs);
    if m == 0.0 || m.is_nan() {
        return 0.0;
    }
    100.0 * (quantile(xs, 0.75) - quantile(xs, 0.25)) / m
}

/// What a size is held to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// A at most this many percent worse than B (higher latency, lower
    /// bandwidth or rate); better by any amount is fine.
    Worse(f64),
    /// A within this many percent of B either way.
    Diff(f64),
}

/// The A/A distance of one size: how far the control's median (of `a2`)
/// lies from A's (of `a`), in percent of A's (None without a control).
pub(crate) fn aa_distance_pct(a: &[f64], a2: &[f64]) -> Option<f64> {
    let m = median(a);
    (!a2.is_empty() && m != 0.0).then(|| 100.0 * (median(a2) / m - 1.0).abs())
}

/// Draws of the resampled A/A band: enough for its 95th percentile to
/// settle to a tenth of a percent or so at the sizes of rounds used here.
const BAND_DRAWS: usize = 2000;

/// The resampled A/A band of one size, in percent: A's and the control's
/// runs are one program's, so together they show what the median of
/// `rounds` runs does by chance. Two sets of `rounds` values are drawn
/// from them (with replacement) 2000 times, and the band is the 95th
/// percentile of how far the one median lies from the other. A second
/// program no different from A lands inside it 95% of the time, where a
/// single A/A distance (one draw of the same thing) leaves it outside
/// about half the time. Seeded from the values, so a rerun of the same
/// numbers gives the same band. None without a control.
pub(crate) fn resampled_band_pct(a: &[f64], a2: &[f64]) -> Option<f64> {
    let (n, pool) = (a.len(), [a, a2].concat());
    if a2.is_empty() || n == 0 {
        return None;
    }
    let seed = pool.iter().fold(0x5eed_u64, |h, v| h.rotate_left(7) ^ v.to_bits());
    let mut rng = crate::stats::rng::Rng::new(seed);
    let mut draw = |buf: &mut Vec<f64>| {
        buf.clear();
        buf.extend((0..n).map(|_| pool[rng.below(pool.len())]));
        median(buf)
    };
    let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let distances: Vec<f64> = (0..BAND_DRAWS)
        .filter_map(|_| {
            let (mx, my) = (draw(&mut x), draw(&mut y));
            (my != 0.0).then(|| 100.0 * (mx / my - 1.0).abs())
        })
        .collect();
    (!distances.is_empty()).then(|| quantile(&distances, 0.95))
}

/// The A/A band of one quantity that A and the control each give once a
/// round (a size's value, a run's wall time), in percent: the larger of
/// their single A/A distance and the resampled band
/// ([`resampled_band_pct`]). None without a control.
pub fn aa_band_pct(a: &[f64], a2: &[f64]) -> Option<f64> {
    aa_distance_pct(a, a2).map(|d| d.max(resampled_band_pct(a, a2).unwrap_or(0.0)))
}

/// Judges one size of a series of metric `m` against `target` (None: no
/// verdict); `printed` says whether both sides were read at two printed
/// decimals. The size's A/A band is the larger of [`aa_band_pct`] and
/// `band_floor` (the median distance over the series' sizes): one pair of
/// medians is a single draw of the noise, and by chance can lie very
/// close.
pub fn judge(size: u64, s: &Samples, m: Quantity, target: Option<Target>, printed: bool, band_floor: f64) -> SizeLine {
    let (a, b) = (median(&s.a), median(&s.b));
    let ratio = if b != 0.0 { a / b } else { f64::INFINITY };
    let aa_band_pct = aa_band_pct(&s.a, &s.a2).map(|d| d.max(band_floor));
    // How far A is off B in the direction the target looks at, in percent.
    let (off_pct, t) = match target {
        None => (0.0, None),
        Some(Target::Worse(t)) if m.higher_is_better() => (100.0 * (1.0 - ratio), Some(t)),
        Some(Target::Worse(t)) => (100.0 * (ratio - 1.0), Some(t)),
        Some(Target::Diff(t)) => (100.0 * (ratio - 1.0).abs(), Some(t)),
    };
    let mark = match t {
        Some(t) if off_pct > t => {
            if printed && (a - b).abs() <= 0.01 + 1e-9 {
                Mark::WithinResolution
            } else if aa_band_pct.is_some_and(|band| off_pct <= band) {
                Mark::WithinNoise
            } else {
                Mark::Missed
            }
        }
        _ => Mark::Met,
    };
    SizeLine { size, a, b, ratio, iqr_a_pct: iqr_pct(&s.a), iqr_b_pct: iqr_pct(&s.b), aa_band_pct, mark }
}

/// The geometric mean of the ratios: an overhead leans one way at most
/// sizes, noise both ways.
pub(crate) fn geometric_mean(ratios: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = ratios.iter().filter(|r| r.is_finite() && **r > 0.0).map(|r| r.ln()).collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(a: &[f64], b: &[f64], a2: &[f64]) -> Samples {
        Samples { a: a.to_vec(), b: b.to_vec(), a2: a2.to_vec() }
    }

    #[test]
    fn medians_and_quartiles_interpolate() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), 2.0);
        assert_eq!(iqr_pct(&[1.0, 2.0, 3.0, 4.0, 5.0]), 100.0 * 2.0 / 3.0);
        assert!(median(&[]).is_nan());
        assert_eq!(iqr_pct(&[0.0, 0.0]), 0.0);
    }

    #[test]
    fn latency_and_bandwidth_are_judged_their_own_way() {
        // A 10% slower than B: a miss for a latency with a 5% target.
        let l = judge(8, &s(&[1.1; 5], &[1.0; 5], &[]), Quantity::Latency, Some(Target::Worse(5.0)), false, 0.0);
        assert_eq!(l.mark, Mark::Missed);
        assert!((l.ratio - 1.1).abs() < 1e-12);
        // The same ratio on a bandwidth is A ahead.
        let b = judge(8, &s(&[1.1; 5], &[1.0; 5], &[]), Quantity::Bandwidth, Some(Target::Worse(5.0)), false, 0.0);
        assert_eq!(b.mark, Mark::Met);
        let b = judge(8, &s(&[90.0; 5], &[100.0; 5], &[]), Quantity::Bandwidth, Some(Target::Worse(5.0)), false, 0.0);
        assert_eq!(b.mark, Mark::Missed);
        assert_eq!(judge(8, &s(&[1.1; 5], &[1.0; 5], &[]), Quantity::Latency, None, false, 0.0).mark, Mark::Met);
    }

    #[test]
    fn a_miss_inside_the_noise_or_the_printed_step_is_not_a_finding() {
        // 0.21 against 0.20 is 5% worse, but one printed step.
        let l = judge(1, &s(&[0.22; 5], &[0.21; 5], &[]), Quantity::Latency, Some(Target::Worse(1.0)), true, 0.0);
        assert_eq!(l.mark, Mark::WithinResolution);
        // Read at full precision, the same numbers are a miss.
        assert_eq!(
            judge(1, &s(&[0.22; 5], &[0.21; 5], &[]), Quantity::Latency, Some(Target::Worse(1.0)), false, 0.0).mark,
            Mark::Missed
        );
        // 8% worse, while A against itself moved 12%: noise.
        let n =
            judge(1, &s(&[1.08; 5], &[1.0; 5], &[1.2096; 5]), Quantity::Latency, Some(Target::Worse(5.0)), false, 0.0);
        assert_eq!(n.mark, Mark::WithinNoise);
        assert!((n.aa_band_pct.unwrap() - 12.0).abs() < 1e-9);
        // 8% worse, while A against itself moved 2%: a finding.
        let m =
            judge(1, &s(&[1.08; 5], &[1.0; 5], &[1.1016; 5]), Quantity::Latency, Some(Target::Worse(5.0)), false, 0.0);
        assert_eq!(m.mark, Mark::Missed);
    }

    #[test]
    fn a_band_is_at_least_the_series_median() {
        // Its own control happened to land 0.1% off; the series' median
        // distance is 6%: 5% worse is noise.
        let l =
            judge(1, &s(&[1.05; 5], &[1.0; 5], &[1.05105; 5]), Quantity::Latency, Some(Target::Worse(1.0)), false, 6.0);
        assert_eq!(l.mark, Mark::WithinNoise);
        assert!((l.aa_band_pct.unwrap() - 6.0).abs() < 1e-9);
    }

    #[test]
    fn the_resampled_band_holds_a_program_against_itself() {
        use crate::stats::rng::Rng;
        // Three programs alike (log-normal noise of about 10%), 15 rounds
        // each: B is A's twin. Over 200 such series, B lies outside the
        // resampled band about 5% of the time, and outside the single A/A
        // distance about half of it.
        let mut rng = Rng::new(42);
        let mut run = |n: usize| -> Vec<f64> { (0..n).map(|_| (0.1 * rng.normal()).exp()).collect() };
        let (mut out_resampled, mut out_single) = (0, 0);
        for _ in 0..200 {
            let s = s(&run(15), &run(15), &run(15));
            let off = 100.0 * (median(&s.a) / median(&s.b) - 1.0).abs();
            out_resampled += usize::from(off > resampled_band_pct(&s.a, &s.a2).unwrap());
            out_single += usize::from(off > aa_distance_pct(&s.a, &s.a2).unwrap());
        }
        assert!(out_resampled <= 25, "outside the resampled band {out_resampled} of 200");
        assert!(out_single >= 70, "outside the single distance {out_single} of 200");
        // The same numbers, the same band; none without a control.
        let t = s(&[1.0, 1.2, 0.9, 1.1], &[1.0; 4], &[1.05, 0.95, 1.3, 1.0]);
        assert_eq!(resampled_band_pct(&t.a, &t.a2), resampled_band_pct(&t.a, &t.a2));
        assert!(resampled_band_pct(&t.a, &t.a2).unwrap() > 0.0);
        assert_eq!(resampled_band_pct(&[1.0; 4], &[]), None);
        // What scripts ask for a wall time is the band a size is judged by.
        let band = aa_band_pct(&t.a, &t.a2).unwrap();
        assert_eq!(judge(1, &t, Quantity::Latency, None, false, 0.0).aa_band_pct, Some(band));
        assert!(band >= aa_distance_pct(&t.a, &t.a2).unwrap() && band >= resampled_band_pct(&t.a, &t.a2).unwrap());
        assert_eq!(aa_band_pct(&t.a, &[]), None);
        // A real 30% shift is still a miss beyond a band of 10% noise.
        let shifted = s(&run(15), &run(15).iter().map(|v| v * 1.3).collect::<Vec<_>>(), &run(15));
        let l = judge(1, &shifted, Quantity::Bandwidth, Some(Target::Worse(5.0)), false, 0.0);
        assert_eq!(l.mark, Mark::Missed, "{l:?}");
    }

    #[test]
    fn a_two_sided_target_looks_both_ways() {
        let diff = Some(Target::Diff(0.0));
        // 8% better is 8% off: beyond a 2% A/A band, a miss.
        let m = judge(1, &s(&[0.92; 5], &[1.0; 5], &[0.9384; 5]), Quantity::Latency, diff, false, 0.0);
        assert_eq!(m.mark, Mark::Missed);
        // Within the band either way: noise.
        let n = judge(1, &s(&[1.01; 5], &[1.0; 5], &[1.0403; 5]), Quantity::Bandwidth, diff, false, 0.0);
        assert_eq!(n.mark, Mark::WithinNoise);
    }

    #[test]
    fn geometric_mean_of_ratios() {
        assert!((geometric_mean(&[0.5, 2.0]).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(geometric_mean(&[f64::INFINITY, 0.0]), None);
    }
}
