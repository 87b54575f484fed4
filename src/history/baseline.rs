//! A series' baseline and its band: where one new run of the series should
//! fall, from the last N complete runs at one size and metric.
//!
//! The band is a prediction interval for one new run, on the log scale
//! (run-to-run differences are factors: a busy host makes a run slower by
//! a share, not by a fixed amount). With y the logs of the n runs' values,
//! ȳ their mean and s their standard deviation, the band is
//!
//! ```text
//! exp(ȳ ± t(1 - 0.025/k; n - 1) · s · sqrt(1 + 1/n))
//! ```
//!
//! the classical interval for a new draw of a normal sample whose mean and
//! spread are both estimated from the n runs: Student's t makes it wider
//! when the runs are few (n = 2: t has 1 degree of freedom), and
//! sqrt(1 + 1/n) counts the uncertainty of the centre as well as the new
//! run's own scatter. The standard deviation is the plain one, not a
//! robust one: a stalled baseline run is part of what like runs do on that
//! host, and the band carries it. k is the number of sizes judged
//! together (Bonferroni): a run of 11 sizes is checked at 95% as a whole,
//! not 95% per size, which would fail a like run somewhere 43% of the time
//! if the sizes were independent.
//!
//! The band is never narrower than the runs' own 95% intervals (the median
//! of the CSVs' `ci95_rel_pct`): runs that happened to agree closely do not
//! promise more than each one measured. One run has no run-to-run spread:
//! its band is its own interval, and the check says it rests on one run.
//!
//! `history check` hands the centre and the worse side's half-width to
//! compare's judge as the reference's value and spread, marked as a band
//! for one new run (the run's own interval is already in it); the band
//! scan and the plot use the same band.

use rusqlite::{params, Connection};

use super::ingest::{metric_from_name, MEDIAN_METRIC};
use super::key::SeriesKey;
use crate::compare::judge::median;
use crate::compare::model::Quantity;
use crate::stats::ci::t_quantile;

/// Runs a band needs before a run can be said to have left it.
pub(crate) const MIN_BAND_RUNS: usize = 3;

/// The statuses of runs a baseline is made of: runs that ended on their
/// own and measured (a validation failure measured wrong data).
const BASELINE_STATUSES: &str = "('complete', 'passed', 'failed')";

/// A run as the history holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub id: i64,
    pub run_key: String,
    pub started_utc: String,
    pub label: String,
    pub key: SeriesKey,
    /// (size, metric, value, ci95_rel_pct).
    pub points: Vec<(u64, Quantity, f64, Option<f64>)>,
    /// (size, median iteration time in us, ci95_rel_pct): the
    /// `latency_median` points.
    pub medians: Vec<(u64, f64, Option<f64>)>,
}

impl StoredRun {
    pub fn value(&self, metric: Quantity, size: u64) -> Option<(f64, Option<f64>)> {
        self.points.iter().find(|p| p.1 == metric && p.0 == size).map(|p| (p.2, p.3))
    }

    /// The median iteration time at `size` and its ci95_rel_pct.
    pub fn median_at(&self, size: u64) -> Option<(f64, Option<f64>)> {
        self.medians.iter().find(|p| p.0 == size).map(|p| (p.1, p.2))
    }
}

/// The complete runs of one series, oldest first, started at or after
/// `since` when given.
pub(crate) fn runs_of(c: &Connection, key: &SeriesKey, since: Option<&str>) -> rusqlite::Result<Vec<StoredRun>> {
    let sql = format!(
        "SELECT id, run_key, started_utc, label, system, benchmark, backend, memory, datatype, np, placement, \
         mpi_library, options FROM runs WHERE series_key = ?1 AND started_utc >= ?2 AND status IN {BASELINE_STATUSES} \
         ORDER BY started_utc, id"
    );
    let mut st = c.prepare(&sql)?;
    let rows = st.query_map(params![key.text(), since.unwrap_or("")], |r| {
        Ok(StoredRun {
            id: r.get(0)?,
            run_key: r.get(1)?,
            started_utc: r.get(2)?,
            label: r.get(3)?,
            key: SeriesKey::from_row(r, 4)?,
            points: Vec::new(),
            medians: Vec::new(),
        })
    })?;
    let mut runs: Vec<StoredRun> = rows.collect::<rusqlite::Result<_>>()?;
    let mut pts = c.prepare_cached(
        "SELECT size_bytes, metric, value, ci95_rel_pct FROM points WHERE run_id = ?1 ORDER BY metric, size_bytes",
    )?;
    for run in &mut runs {
        let got = pts.query_map([run.id], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, f64>(2)?, r.get::<_, Option<f64>>(3)?))
        })?;
        for p in got {
            let (size, metric, value, ci) = p?;
            if let Some(m) = metric_from_name(&metric) {
                run.points.push((size.max(0) as u64, m, value, ci));
            } else if metric == MEDIAN_METRIC {
                run.medians.push((size.max(0) as u64, value, ci));
            }
        }
    }
    Ok(runs)
}

/// The confidence of a band for one run's sizes taken together.
pub(crate) const BAND_LEVEL: f64 = 0.95;

/// What a band rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// The runs' scatter (two runs or more), or their own intervals where
    /// those are wider.
    RunToRun,
    /// One run: its own 95% interval, no run-to-run spread known.
    OwnInterval,
}

/// The baseline of one size and metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    /// The centre: the geometric mean of the runs' values (the exponential
    /// of the mean of their logs).
    pub center: f64,
    /// The band's half-width on the log scale; None where neither the
    /// runs' scatter (one run) nor their own intervals say anything.
    pub log_half_width: Option<f64>,
    pub runs: usize,
    pub basis: Basis,
}

impl Baseline {
    /// The band, low edge first: centre · exp(∓ half-width).
    pub fn band(&self) -> Option<(f64, f64)> {
        let h = self.log_half_width?;
        Some((self.center * (-h).exp(), self.center * h.exp()))
    }

    /// The band's half-width on the worse side, in percent of the centre:
    /// below it for a bandwidth or a rate, above it for a time.
    pub fn worse_side_pct(&self, higher_is_better: bool) -> Option<f64> {
        let h = self.log_half_width?;
        Some(if higher_is_better { (1.0 - (-h).exp()) * 100.0 } else { h.exp_m1() * 100.0 })
    }
}

/// The family a band is for: how many distinct sizes `sizes` holds (at
/// least 1).
pub(crate) fn family(sizes: impl IntoIterator<Item = u64>) -> usize {
    let mut s: Vec<u64> = sizes.into_iter().collect();
    s.sort_unstable();
    s.dedup();
    s.len().max(1)
}

/// The baseline of `values` (value, its run's ci95_rel_pct), its band
/// for one new run checked with `family` sizes in all (at least 1); None
/// for no value above 0 (a log needs one; a value of 0 or below is left
/// out, as compare leaves it out).
pub fn baseline(values: &[(f64, Option<f64>)], family: usize) -> Option<Baseline> {
    let kept: Vec<&(f64, Option<f64>)> = values.iter().filter(|v| v.0.is_finite() && v.0 > 0.0).collect();
    let n = kept.len();
    if n == 0 {
        return None;
    }
    let logs: Vec<f64> = kept.iter().map(|v| v.0.ln()).collect();
    let mean = logs.iter().sum::<f64>() / n as f64;
    let scatter = (n >= 2).then(|| {
        let var = logs.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let p = 1.0 - (1.0 - BAND_LEVEL) / 2.0 / family.max(1) as f64;
        t_quantile(p, n as u64 - 1) * var.sqrt() * (1.0 + 1.0 / n as f64).sqrt()
    });
    let own: Option<Vec<f64>> = kept.iter().map(|v| v.1.filter(|c| c.is_finite() && *c >= 0.0)).collect();
    let own = own.and_then(|mut o| median(&mut o)).map(|pct| (pct / 100.0).ln_1p());
    let log_half_width = match (scatter, own) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let basis = if n >= 2 { Basis::RunToRun } else { Basis::OwnInterval };
    Some(Baseline { center: mean.exp(), log_half_width, runs: n, basis })
}

/// Where a series first left its band: the index of the run, its value
/// and the band the runs before it formed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Departure {
    pub index: usize,
    pub value: f64,
    pub band: (f64, f64),
}

/// Scans `series` (one value per run, oldest first) for the earliest run
/// outside the band of the (at most `last`) runs before it, each band for
/// `family` sizes (see [`baseline`]); the scan needs [`MIN_BAND_RUNS`]
/// runs before a run.
pub(crate) fn first_departure(series: &[(f64, Option<f64>)], last: usize, family: usize) -> Option<Departure> {
    for i in MIN_BAND_RUNS..series.len() {
        let before = &series[i.saturating_sub(last.max(1))..i];
        if before.len() < MIN_BAND_RUNS {
            continue;
        }
        let Some(band) = baseline(before, family).and_then(|b| b.band()) else { continue };
        let v = series[i].0;
        // Exactly at an edge is inside; the slack only absorbs rounding.
        let slack = 1e-9 * band.1.abs().max(1.0);
        if v < band.0 - slack || v > band.1 + slack {
            return Some(Departure { index: i, value: v, band });
        }
    }
    None
}

/// The sizes a check scans and a plot draws by default: the smallest, the
/// largest and the one nearest their geometric middle.
pub(crate) fn key_sizes(sizes: &[u64]) -> Vec<u64> {
    let mut s: Vec<u64> = sizes.to_vec();
    s.sort_unstable();
    s.dedup();
    let (Some(&lo), Some(&hi)) = (s.first(), s.last()) else { return Vec::new() };
    let l = |x: u64| (x.max(1) as f64).log2();
    let mid_target = (l(lo) + l(hi)) / 2.0;
    let mid = s.iter().copied().min_by(|a, b| (l(*a) - mid_target).abs().total_cmp(&(l(*b) - mid_target).abs()));
    let mut out = vec![lo];
    out.extend(mid);
    out.push(hi);
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(v: &[f64]) -> Vec<(f64, Option<f64>)> {
        v.iter().map(|x| (*x, None)).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn a_band_for_one_new_run() {
        // Reference values from SciPy: logs of 100, 99, 101, 102, 80, their
        // mean and standard deviation, t(0.975; 4) · s · sqrt(1 + 1/5).
        let runs = plain(&[100.0, 99.0, 101.0, 102.0, 80.0]);
        let b = baseline(&runs, 1).unwrap();
        assert!(close(b.center, 96.012_846_496_259_24), "{b:?}");
        assert!(close(b.log_half_width.unwrap(), 0.312_054_018_865_71), "{b:?}");
        let (lo, hi) = b.band().unwrap();
        assert!(close(lo, 70.275_833_784_518_77) && close(hi, 131.175_486_591_594_14), "{lo} {hi}");
        assert_eq!((b.runs, b.basis), (5, Basis::RunToRun));
        // The worse side: above for a time, below for a bandwidth.
        assert!(close(b.worse_side_pct(false).unwrap(), 36.622_849_316_496_32));
        assert!(close(b.worse_side_pct(true).unwrap(), 26.805_801_151_560_726));
        // Eleven sizes judged together: t(1 - 0.025/11; 4).
        let b11 = baseline(&runs, 11).unwrap();
        assert!(close(b11.log_half_width.unwrap(), 0.645_869_297_150_254_5), "{b11:?}");
    }

    #[test]
    fn few_runs_give_a_wider_band() {
        // The same scatter from 3 runs and from 10: t(0.975; 2) = 4.30
        // against t(0.975; 9) = 2.26, and sqrt(1 + 1/n).
        let ten = plain(&[100.0, 101.0, 99.0, 100.0, 101.0, 99.0, 100.0, 101.0, 99.0, 100.0]);
        let b3 = baseline(&ten[..3], 1).unwrap();
        let b10 = baseline(&ten, 1).unwrap();
        assert!(close(b3.log_half_width.unwrap(), 0.049_684_617_451_034_405), "{b3:?}");
        assert!(close(b10.log_half_width.unwrap(), 0.019_372_699_227_056_082), "{b10:?}");
        // Two runs: one degree of freedom, t = 12.71.
        let two = baseline(&plain(&[10.0, 12.0]), 1).unwrap();
        assert!(close(two.center, 10.954_451_150_103_326));
        assert!(close(two.log_half_width.unwrap(), 2.006_247_465_419_66), "{two:?}");
    }

    #[test]
    fn own_intervals_are_the_floor_and_one_run_has_only_its_own() {
        // Runs that agree exactly promise no more than each measured: the
        // median of their own intervals, 4%.
        let b = baseline(&[(100.0, Some(5.0)), (100.0, Some(3.0)), (100.0, Some(4.0))], 1).unwrap();
        assert!(close(b.log_half_width.unwrap(), 0.04_f64.ln_1p()));
        assert!(close(b.worse_side_pct(false).unwrap(), 4.0));
        let one = baseline(&[(10.0, Some(2.0))], 1).unwrap();
        assert_eq!((one.runs, one.basis), (1, Basis::OwnInterval));
        assert!(close(one.log_half_width.unwrap(), 0.02_f64.ln_1p()));
        assert_eq!(baseline(&plain(&[10.0]), 1).unwrap().band(), None);
        // A value of 0 or below, or not finite, has no log: left out.
        let b = baseline(&plain(&[0.0, -1.0, f64::NAN, 10.0, 10.0]), 1).unwrap();
        assert!(close(b.center, 10.0) && b.runs == 2, "{b:?}");
        assert_eq!(baseline(&plain(&[0.0]), 1), None);
        assert_eq!(baseline(&[], 1), None);
    }

    #[test]
    fn the_first_run_outside_the_band_before_it_is_named() {
        // Three steady runs give 95.1-105.1 (SciPy): 100 and 101 are
        // inside; the five before index 5 give 97.7-102.8, which 90 is
        // not in; a later 50 is not the first.
        let s = plain(&[100.0, 99.0, 101.0, 100.0, 101.0, 90.0, 50.0]);
        let d = first_departure(&s, 10, 1).unwrap();
        assert_eq!((d.index, d.value), (5, 90.0));
        assert!(close(d.band.0, 97.681_375_388_102_47) && close(d.band.1, 102.777_822_166_277_53), "{d:?}");
        // Runs before the scan's three are never judged.
        assert_eq!(first_departure(&plain(&[100.0, 50.0, 10.0]), 10, 1), None);
        assert_eq!(first_departure(&plain(&[100.0, 101.0, 99.0, 100.5]), 10, 1), None);
        // Only the last N runs form the band: after a noisy start, a step
        // of 6% leaves the band of the three quiet runs before it, not the
        // wider band of all seven.
        let s = plain(&[80.0, 120.0, 90.0, 110.0, 100.0, 100.5, 99.5, 106.0]);
        assert_eq!(first_departure(&s, 3, 1).map(|d| d.index), Some(7));
        assert_eq!(first_departure(&s, 10, 1), None);
        // More sizes judged together widen each band.
        let s = plain(&[100.0, 99.0, 101.0, 100.0, 101.0, 97.0]);
        assert_eq!(first_departure(&s, 10, 1).map(|d| d.index), Some(5));
        assert_eq!(first_departure(&s, 10, 11), None);
    }

    #[test]
    fn key_sizes_are_the_ends_and_the_middle() {
        assert_eq!(key_sizes(&[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]), [1, 32, 1024]);
        assert_eq!(key_sizes(&[4194304, 1, 1024]), [1, 1024, 4194304]);
        assert_eq!(key_sizes(&[8]), [8]);
        assert_eq!(key_sizes(&[0]), [0]);
        assert!(key_sizes(&[]).is_empty());
    }
}
