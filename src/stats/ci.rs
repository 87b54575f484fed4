//! 95% confidence intervals. Of the mean: mean ± t · s / sqrt(n), with
//! Student's t quantile from a table up to 30 degrees of freedom and the
//! Cornish-Fisher expansion of t around the normal quantile beyond (it
//! tends to the normal 1.96 as the sample grows). Of the median: between
//! two order statistics whose ranks come from the binomial distribution of
//! the count of samples below the true median (exact up to 1000 samples,
//! its normal approximation beyond); no assumption on the distribution's
//! shape.

use serde::{Deserialize, Serialize};

use super::moments::Moments;

/// The confidence level of every interval here.
pub(crate) const LEVEL: f64 = 0.95;

/// The standard normal 97.5% quantile (two-sided 95%).
pub(crate) const Z_975: f64 = 1.959_963_984_540_054;

/// Student's t 97.5% quantiles for 1 to 30 degrees of freedom.
const T_975: [f64; 30] = [
    12.706_204_736,
    4.302_652_730,
    3.182_446_305,
    2.776_445_105,
    2.570_581_836,
    2.446_911_851,
    2.364_624_252,
    2.306_004_135,
    2.262_157_163,
    2.228_138_852,
    2.200_985_160,
    2.178_812_830,
    2.160_368_656,
    2.144_786_688,
    2.131_449_546,
    2.119_905_299,
    2.109_815_578,
    2.100_922_040,
    2.093_024_054,
    2.085_963_447,
    2.079_613_845,
    2.073_873_068,
    2.068_657_610,
    2.063_898_562,
    2.059_538_553,
    2.055_529_439,
    2.051_830_516,
    2.048_407_142,
    2.045_229_642,
    2.042_272_456,
];

/// Student's t 97.5% quantile for `df` degrees of freedom (a fractional
/// `df`, as Welch's test gives, is rounded down: a slightly wider
/// interval). Infinite below one degree of freedom (no interval).
pub(crate) fn t_975(df: f64) -> f64 {
    if df.is_nan() || df < 1.0 {
        return f64::INFINITY;
    }
    let d = df.floor();
    if d <= 30.0 {
        return T_975[d as usize - 1];
    }
    t_975_expansion(d)
}

/// The Cornish-Fisher expansion of t in powers of 1/df, to the fourth; its
/// error is below 1e-7 from 30 degrees of freedom on.
fn t_975_expansion(v: f64) -> f64 {
    let z = Z_975;
    let z2 = z * z;
    let z3 = z2 * z;
    let z5 = z3 * z2;
    let z7 = z5 * z2;
    let z9 = z7 * z2;
    let g1 = (z3 + z) / 4.0;
    let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    let g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
    z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v)
}

/// The probability that Student's t with `df` whole degrees of freedom
/// (at least 1) lies below `t`. Exact for whole `df`: with
/// θ = atan(t / √df), P(|T| < t) is a finite series in cos θ, odd and even
/// `df` each their own (Abramowitz and Stegun 26.7.3 and 26.7.4).
pub(crate) fn t_cdf(t: f64, df: u64) -> f64 {
    if t.is_nan() || df == 0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    let v = df as f64;
    let theta = (t.abs() / v.sqrt()).atan();
    let (s, c) = theta.sin_cos();
    let c2 = c * c;
    let within = if df % 2 == 1 {
        // (2/π)(θ + sin θ (cos θ + 2/3 cos³θ + 2·4/(3·5) cos⁵θ + …)), up
        // to the power df - 2.
        let (mut term, mut sum) = (c, 0.0);
        let mut k = 1.0;
        while k <= v - 2.0 {
            sum += term;
            term *= c2 * (k + 1.0) / (k + 2.0);
            k += 2.0;
        }
        2.0 / std::f64::consts::PI * (theta + s * sum)
    } else {
        // sin θ (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + …), up to the power
        // df - 2.
        let (mut term, mut sum) = (1.0, 0.0);
        let mut k = 0.0;
        while k <= v - 2.0 {
            sum += term;
            term *= c2 * (k + 1.0) / (k + 2.0);
            k += 2.0;
        }
        s * sum
    };
    let within = within.clamp(0.0, 1.0);
    if t >= 0.0 {
        0.5 + within / 2.0
    } else {
        0.5 - within / 2.0
    }
}

/// Student's t quantile: the `t` below which a share `p` (0 < p < 1) of
/// the distribution with `df` whole degrees of freedom lies, by bisection
/// of [`t_cdf`] to a relative 1e-12. Infinite below one degree of
/// freedom, NaN for `p` outside (0, 1).
pub(crate) fn t_quantile(p: f64, df: u64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    if df == 0 {
        return f64::INFINITY;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while t_cdf(hi, df) < p {
        hi *= 2.0;
        if !hi.is_finite() {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// An estimate and its 95% confidence bounds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Half the interval's width (for the median's interval, which need not
    /// be symmetric, half of high - low).
    pub(crate) fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// The half-width as a share of the estimate (0.01 is 1%); infinite
    /// where the estimate is 0 and the interval is not a point.
    pub(crate) fn relative_half_width(&self) -> f64 {
        let h = self.half_width();
        if h == 0.0 {
            0.0
        } else {
            h / self.estimate.abs()
        }
    }

    pub fn contains(&self, x: f64) -> bool {
        (self.low..=self.high).contains(&x)
    }
}

/// The 95% confidence interval of the mean of the values summarised by
/// `m`; None below two values.
pub(crate) fn mean_ci(m: &Moments) -> Option<Interval> {
    let se = m.std_error()?;
    let h = t_975((m.count() - 1) as f64) * se;
    Some(Interval { estimate: m.mean(), low: m.mean() - h, high: m.mean() + h })
}

/// Welch's two-sample t test of the means summarised by `a` and `b`
/// (unequal variances, Welch-Satterthwaite degrees of freedom): whether
/// they differ at 95%, two-sided. None where either has fewer than two
/// values. Where neither has any spread, they differ if their means do.
pub(crate) fn welch_differ(a: &Moments, b: &Moments) -> Option<bool> {
    let (va, vb) = (a.variance()? / a.count() as f64, b.variance()? / b.count() as f64);
    let diff = b.mean() - a.mean();
    let se2 = va + vb;
    if se2 <= 0.0 {
        return Some(diff != 0.0);
    }
    let df = se2 * se2 / (va * va / (a.count() - 1) as f64 + vb * vb / (b.count() - 1) as f64).max(f64::MIN_POSITIVE);
    Some(diff.abs() > t_975(df) * se2.sqrt())
}

/// The median of ascending `sorted` values (the mean of the middle two for
/// an even count); None when empty.
pub fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// Up to this many samples the median's ranks come from the exact
/// binomial distribution; beyond, from its normal approximation.
const EXACT_RANKS_UP_TO: usize = 1000;

/// The 1-based ranks (lower, upper) of the order statistics that bound the
/// median with at least 95% confidence among `n` samples: lower is the
/// largest k with P(Binomial(n, 1/2) <= k - 1) <= 2.5%, upper is n + 1 -
/// lower. None below 6 samples, where even the smallest and largest value
/// cover the median with less than 95%.
pub(crate) fn median_ranks(n: usize) -> Option<(usize, usize)> {
    if n < 6 {
        return None;
    }
    let tail = (1.0 - LEVEL) / 2.0;
    let lower = if n <= EXACT_RANKS_UP_TO {
        // pmf(0) = 2^-n stays a normal f64 up to n = 1022.
        let mut pmf = 0.5f64.powi(n as i32);
        let (mut cdf, mut k) = (0.0, 0usize);
        while cdf + pmf <= tail {
            cdf += pmf;
            pmf *= (n - k) as f64 / (k + 1) as f64;
            k += 1;
        }
        k
    } else {
        let nf = n as f64;
        (nf / 2.0 - Z_975 * nf.sqrt() / 2.0).floor() as usize
    };
    let lower = lower.max(1);
    Some((lower, n + 1 - lower))
}

/// The 95% confidence interval of the median of ascending `sorted` values
/// (see [`median_ranks`]); None below 6 values.
pub(crate) fn median_ci(sorted: &[f64]) -> Option<Interval> {
    debug_assert!(sorted.windows(2).all(|w| w[0] <= w[1]), "median_ci needs ascending values");
    let (lo, hi) = median_ranks(sorted.len())?;
    Some(Interval { estimate: median(sorted)?, low: sorted[lo - 1], high: sorted[hi - 1] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_published_values() {
        assert_eq!(t_975(1.0), 12.706_204_736);
        assert_eq!(t_975(10.0), 2.228_138_852);
        assert_eq!(t_975(10.7), 2.228_138_852);
        assert!(t_975(0.5).is_infinite() && t_975(f64::NAN).is_infinite());
        // Past the table, the expansion (reference values to 6 digits).
        for (df, want) in [(31.0, 2.039_513), (40.0, 2.021_075), (60.0, 2.000_298), (120.0, 1.979_930)] {
            assert!((t_975(df) - want).abs() < 2e-6, "df {df}: {} vs {want}", t_975(df));
        }
        // Monotone down towards the normal quantile.
        assert!(t_975(30.0) > t_975(31.0));
        assert!((t_975(1e7) - Z_975).abs() < 1e-6);
        // The table's upper rows agree with the expansion to its own error.
        for df in 10..=30 {
            let err = if df >= 20 { 3e-7 } else { 1e-5 };
            assert!((t_975(df as f64) - t_975_expansion(df as f64)).abs() < err, "df {df}");
        }
    }

    #[test]
    fn t_distribution_at_any_level() {
        // The CDF at 0 and its symmetry; one degree of freedom is Cauchy.
        assert_eq!(t_cdf(0.0, 5), 0.5);
        assert!((t_cdf(1.0, 1) - 0.75).abs() < 1e-12);
        assert!((t_cdf(-2.0, 4) + t_cdf(2.0, 4) - 1.0).abs() < 1e-12);
        // The quantile inverts the table's 97.5% values, odd and even df.
        for df in 1..=30u64 {
            let q = t_quantile(0.975, df);
            assert!((q - t_975(df as f64)).abs() < 2e-8, "df {df}: {q} vs {}", t_975(df as f64));
        }
        // Published values at other levels (to the digits printed).
        for (p, df, want) in [
            (0.995, 2, 9.924_843),
            (0.995, 9, 3.249_836),
            (0.999, 10, 4.143_700),
            (0.95, 3, 2.353_363),
            (0.9995, 1, 636.619_2),
            (0.9995, 60, 3.460_200),
        ] {
            let got = t_quantile(p, df);
            assert!((got - want).abs() < 2e-6 * want, "p {p} df {df}: {got} vs {want}");
        }
        assert!((t_quantile(0.025, 7) + t_975(7.0)).abs() < 1e-8);
        assert!(t_quantile(0.975, 0).is_infinite());
        assert!(t_quantile(1.0, 5).is_nan() && t_quantile(0.0, 5).is_nan());
    }

    #[test]
    fn mean_interval() {
        let m = Moments::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let ci = mean_ci(&m).unwrap();
        // s = sqrt(2.5), se = s / sqrt(5), t(4) = 2.776445105
        let h = 2.776_445_105 * (2.5f64 / 5.0).sqrt();
        assert!((ci.half_width() - h).abs() < 1e-12);
        assert_eq!(ci.estimate, 3.0);
        assert!((ci.relative_half_width() - h / 3.0).abs() < 1e-12);
        assert!(ci.contains(3.0 + h * 0.999) && !ci.contains(3.0 + h * 1.001));
        assert!(mean_ci(&Moments::of(&[1.0])).is_none());
        let flat = mean_ci(&Moments::of(&[0.0, 0.0])).unwrap();
        assert_eq!(flat.relative_half_width(), 0.0);
    }

    #[test]
    fn median_ranks_from_the_binomial() {
        assert_eq!(median_ranks(5), None);
        assert_eq!(median_ranks(6), Some((1, 6)));
        assert_eq!(median_ranks(10), Some((2, 9)));
        assert_eq!(median_ranks(100), Some((40, 61)));
        // The normal approximation takes over without a jump.
        let (exact, _) = median_ranks(1000).unwrap();
        let (approx, _) = median_ranks(1001).unwrap();
        assert!(exact.abs_diff(approx) <= 1, "{exact} vs {approx}");
        let (lo, hi) = median_ranks(1_000_000).unwrap();
        assert_eq!(lo + hi, 1_000_001);
        assert!(lo > 499_000 && lo < 499_100, "{lo}");
    }

    #[test]
    fn median_interval() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let ci = median_ci(&v).unwrap();
        assert_eq!((ci.estimate, ci.low, ci.high), (5.5, 2.0, 9.0));
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[]), None);
        assert!(median_ci(&v[..5]).is_none());
    }
}
