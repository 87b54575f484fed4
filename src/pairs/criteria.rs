//! PASS criteria for pair rows: an absolute bandwidth floor per direction
//! (`--min-bw`), a latency ceiling (`--max-lat`), a relative floor (a
//! direction below a fraction of the median of all directions), and a
//! floor relative to each direction's path peak (`--min-efficiency`; a
//! direction whose peak is unknown cannot be judged, and fails). Failing
//! rows come out worst first: by how far the worst value is from its limit.

use serde::Serialize;

use super::results::PairRow;
use super::units::{rate_text, time_text};

/// The limits in force (none: every measured pair passes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Criteria {
    /// Bytes per second, each direction.
    pub min_bw: Option<f64>,
    /// Seconds.
    pub max_lat: Option<f64>,
    /// Fraction of the median bandwidth of all directions.
    pub min_fraction_of_median: Option<f64>,
    /// Fraction of each direction's path peak (`--min-efficiency`).
    pub min_efficiency: Option<f64>,
}

impl Criteria {
    pub fn any(&self) -> bool {
        self.min_bw.is_some()
            || self.max_lat.is_some()
            || self.min_fraction_of_median.is_some()
            || self.min_efficiency.is_some()
    }

    /// "min-bw 68 GB/s, max-lat 5 us" or "none".
    pub fn describe(&self, median: Option<f64>) -> String {
        let mut parts = Vec::new();
        if let Some(b) = self.min_bw {
            parts.push(format!("min-bw {} per direction", rate_text(b)));
        }
        if let Some(l) = self.max_lat {
            parts.push(format!("max-lat {}", time_text(l)));
        }
        if let Some(f) = self.min_fraction_of_median {
            let at = median.map(|m| format!(" = {}", rate_text(f * m))).unwrap_or_default();
            parts.push(format!("min {}% of the median{at}", trim(f * 100.0)));
        }
        if let Some(f) = self.min_efficiency {
            parts.push(format!("min {}% of each path's peak", trim(f * 100.0)));
        }
        if parts.is_empty() {
            "none (report only)".into()
        } else {
            parts.join(", ")
        }
    }
}

/// A percentage without trailing zeros: 80, 12.5.
pub fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Which value of a row a check looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measured {
    /// Bandwidth from the lower to the higher rank.
    Forward,
    /// Bandwidth from the higher to the lower rank.
    Backward,
    Latency,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    MinBw,
    MaxLat,
    FractionOfMedian,
    /// Below `--min-efficiency` of the direction's path peak.
    MinEfficiency,
    /// `--min-efficiency` with no known peak for the direction's path:
    /// not judged, so not passed.
    UnknownPeak,
    /// A direction the scheme should have measured has no value.
    Missing,
}

/// One broken limit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Failure {
    pub check: Check,
    pub measured: Measured,
    /// Bytes per second or seconds (NaN when missing).
    pub value: f64,
    /// Bytes per second or seconds (NaN for an unknown peak).
    pub limit: f64,
}

impl Failure {
    /// How good the value is relative to its limit: below 1 fails, and
    /// smaller is worse.
    pub(crate) fn score(&self) -> f64 {
        match self.check {
            Check::Missing => 0.0,
            // Not measured against anything: after every real shortfall.
            Check::UnknownPeak => 1.0,
            Check::MaxLat => self.limit / self.value,
            Check::MinBw | Check::FractionOfMedian | Check::MinEfficiency => self.value / self.limit,
        }
    }
}

/// The criteria applied to every row.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Median bandwidth over every measured direction.
    pub median_bw: Option<f64>,
    /// Failures of each row (same order as the rows; empty: pass).
    pub failures: Vec<Vec<Failure>>,
    /// Indices of failing rows, worst first.
    pub failing: Vec<usize>,
}

impl Evaluation {
    pub fn passed(&self) -> bool {
        self.failing.is_empty()
    }
}

/// Median of the values (mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 { v[m] } else { (v[m - 1] + v[m]) / 2.0 })
}

/// The peak of the path from a sender to a receiver, bytes per second
/// (None: unknown).
pub(crate) type PeakOf<'a> = &'a dyn Fn(usize, usize) -> Option<f64>;

/// Applies the criteria. `expect_both` says whether the scheme measures
/// both directions of every row (a lone shift:K does not); `peak` is
/// asked only with `--min-efficiency`.
pub(crate) fn evaluate(rows: &[PairRow], c: &Criteria, expect_both: bool, peak: PeakOf) -> Evaluation {
    let all_bw: Vec<f64> = rows.iter().flat_map(|r| [r.ab, r.ba]).flatten().collect();
    let median_bw = median(&all_bw);
    let relative = c.min_fraction_of_median.zip(median_bw).map(|(f, m)| f * m);
    let failures: Vec<Vec<Failure>> = rows
        .iter()
        .map(|r| {
            let mut fs = Vec::new();
            for (measured, value, src, dst) in
                [(Measured::Forward, r.ab, r.a, r.b), (Measured::Backward, r.ba, r.b, r.a)]
            {
                let Some(v) = value else {
                    if expect_both {
                        fs.push(Failure { check: Check::Missing, measured, value: f64::NAN, limit: 0.0 });
                    }
                    continue;
                };
                if let Some(limit) = c.min_bw.filter(|&l| v < l) {
                    fs.push(Failure { check: Check::MinBw, measured, value: v, limit });
                }
                if let Some(limit) = relative.filter(|&l| v < l) {
                    fs.push(Failure { check: Check::FractionOfMedian, measured, value: v, limit });
                }
                if let Some(f) = c.min_efficiency {
                    match peak(src, dst) {
                        Some(p) if v < f * p => {
                            fs.push(Failure { check: Check::MinEfficiency, measured, value: v, limit: f * p })
                        }
                        Some(_) => {}
                        None => fs.push(Failure { check: Check::UnknownPeak, measured, value: v, limit: f64::NAN }),
                    }
                }
            }
            if let (Some(limit), Some(v)) = (c.max_lat, r.latency) {
                if v > limit {
                    fs.push(Failure { check: Check::MaxLat, measured: Measured::Latency, value: v, limit });
                }
            }
            fs
        })
        .collect();
    let worst = |fs: &[Failure]| fs.iter().map(Failure::score).fold(f64::INFINITY, f64::min);
    let mut failing: Vec<usize> = (0..rows.len()).filter(|&i| !failures[i].is_empty()).collect();
    failing.sort_by(|&x, &y| worst(&failures[x]).total_cmp(&worst(&failures[y])).then(x.cmp(&y)));
    Evaluation { median_bw, failures, failing }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_peak(_: usize, _: usize) -> Option<f64> {
        None
    }

    fn row(a: usize, b: usize, ab: f64, ba: f64, lat: Option<f64>) -> PairRow {
        PairRow { round: 0, a, b, ab: Some(ab), ba: Some(ba), latency: lat }
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn no_criteria_passes() {
        let rows = [row(0, 1, 1.0, 1.0, None)];
        let e = evaluate(&rows, &Criteria::default(), true, &no_peak);
        assert!(e.passed());
        assert_eq!(e.median_bw, Some(1.0));
        assert_eq!(Criteria::default().describe(None), "none (report only)");
    }

    #[test]
    fn min_bw_per_direction_worst_first() {
        let rows = [row(0, 1, 70e9, 69e9, None), row(2, 3, 70e9, 30e9, None), row(4, 5, 60e9, 70e9, None)];
        let c = Criteria { min_bw: Some(68e9), ..Criteria::default() };
        let e = evaluate(&rows, &c, true, &no_peak);
        assert_eq!(e.failing, vec![1, 2]);
        assert_eq!(
            e.failures[1],
            vec![Failure { check: Check::MinBw, measured: Measured::Backward, value: 30e9, limit: 68e9 }]
        );
        assert_eq!(e.failures[2][0].measured, Measured::Forward);
        assert!(e.failures[0].is_empty());
        assert_eq!(c.describe(None), "min-bw 68 GB/s per direction");
    }

    #[test]
    fn relative_to_median() {
        let rows = [row(0, 1, 100.0, 100.0, None), row(2, 3, 100.0, 100.0, None), row(4, 5, 79.0, 100.0, None)];
        let c = Criteria { min_fraction_of_median: Some(0.8), ..Criteria::default() };
        let e = evaluate(&rows, &c, true, &no_peak);
        assert_eq!(e.median_bw, Some(100.0));
        assert_eq!(e.failing, vec![2]);
        assert_eq!(e.failures[2][0].check, Check::FractionOfMedian);
        assert_eq!(e.failures[2][0].limit, 80.0);
        assert_eq!(c.describe(Some(100e6)), "min 80% of the median = 80 MB/s");
    }

    #[test]
    fn latency_ceiling() {
        let rows = [row(0, 1, 1.0, 1.0, Some(2e-6)), row(2, 3, 1.0, 1.0, Some(10e-6)), row(4, 5, 1.0, 1.0, None)];
        let c = Criteria { max_lat: Some(5e-6), ..Criteria::default() };
        let e = evaluate(&rows, &c, true, &no_peak);
        assert_eq!(e.failing, vec![1]);
        assert_eq!(e.failures[1][0].measured, Measured::Latency);
        assert!((e.failures[1][0].score() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn missing_direction_fails_only_when_expected() {
        let rows = [PairRow { round: 0, a: 0, b: 1, ab: Some(1.0), ba: None, latency: None }];
        assert_eq!(evaluate(&rows, &Criteria::default(), true, &no_peak).failing, vec![0]);
        assert!(evaluate(&rows, &Criteria::default(), false, &no_peak).passed());
    }

    #[test]
    fn against_each_paths_peak() {
        // Pairs 0 <-> 1 share a 100 B/s path, 2 <-> 3 a 1000 B/s one.
        let peak = |s: usize, d: usize| Some(if s.max(d) <= 1 { 100.0 } else { 1000.0 });
        let rows = [row(0, 1, 90.0, 70.0, None), row(2, 3, 900.0, 300.0, None)];
        let c = Criteria { min_efficiency: Some(0.8), ..Criteria::default() };
        let e = evaluate(&rows, &c, true, &peak);
        assert_eq!(e.failing, vec![1, 0], "30% is worse than 70%");
        assert_eq!(
            e.failures[0],
            vec![Failure { check: Check::MinEfficiency, measured: Measured::Backward, value: 70.0, limit: 80.0 }]
        );
        assert_eq!(e.failures[1][0].limit, 800.0);
        assert!((e.failures[1][0].score() - 0.375).abs() < 1e-12);
        assert!(evaluate(&rows, &Criteria { min_efficiency: Some(0.3), ..c }, true, &peak).passed());
        assert!(c.any());
        assert_eq!(c.describe(None), "min 80% of each path's peak");
        // Without the criterion the peak is never asked.
        let never = |_: usize, _: usize| -> Option<f64> { panic!("asked for a peak") };
        assert!(evaluate(&rows, &Criteria::default(), true, &never).passed());
    }

    #[test]
    fn an_unknown_peak_cannot_pass() {
        let rows = [row(0, 1, 90.0, 90.0, None), row(2, 3, 10.0, 90.0, None)];
        let peak = |s: usize, _: usize| (s != 1).then_some(100.0);
        let c = Criteria { min_efficiency: Some(0.5), ..Criteria::default() };
        let e = evaluate(&rows, &c, true, &peak);
        // 2 -> 3 is below (worst first); 1 -> 0 has no peak to judge by.
        assert_eq!(e.failing, vec![1, 0]);
        assert_eq!(e.failures[0].len(), 1);
        let f = e.failures[0][0];
        assert_eq!((f.check, f.measured, f.value), (Check::UnknownPeak, Measured::Backward, 90.0));
        assert!(f.limit.is_nan());
        // Known everywhere and high enough: passes.
        assert!(evaluate(&rows[..1], &c, true, &|_, _| Some(100.0)).passed());
    }
}
