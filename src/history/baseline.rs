//! A series' baseline and its band: the median of the last N complete
//! runs of one key at one size and metric, and how far a run may lie from
//! it by chance. The band's half-width (a 95% half-width, in percent of
//! the median) is the larger of
//! - the runs' own dispersion: 1.96 times the robust standard deviation
//!   (1.4826 times the median absolute deviation), from three runs on, and
//! - the median of the runs' own 95% intervals (the CSVs' `ci95_rel_pct`).
//!
//! `history check` hands the median and half-width to compare's judge as
//! the reference's value and spread (its noise rule, then the tolerance);
//! the band scan uses the same numbers as median ± half-width.

use rusqlite::{params, Connection};

use super::ingest::metric_from_name;
use super::key::SeriesKey;
use crate::compare::judge::median;
use crate::compare::model::Quantity;
use crate::stats::noise::robust_sd;

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
}

impl StoredRun {
    pub fn value(&self, metric: Quantity, size: u64) -> Option<(f64, Option<f64>)> {
        self.points.iter().find(|p| p.1 == metric && p.0 == size).map(|p| (p.2, p.3))
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
            }
        }
    }
    Ok(runs)
}

/// The baseline of one size and metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    pub median: f64,
    /// The band's half-width in percent of the median; None where neither
    /// the dispersion (fewer than three runs) nor the runs' own intervals
    /// say anything.
    pub spread_pct: Option<f64>,
    pub runs: usize,
}

impl Baseline {
    /// median ± half-width, low first.
    pub fn band(&self) -> Option<(f64, f64)> {
        let h = self.spread_pct? / 100.0;
        Some((self.median * (1.0 - h), self.median * (1.0 + h)))
    }
}

/// The baseline of `values` (value, its run's ci95_rel_pct), None for
/// none.
pub fn baseline(values: &[(f64, Option<f64>)]) -> Option<Baseline> {
    let mut v: Vec<f64> = values.iter().map(|x| x.0).collect();
    let med = median(&mut v)?;
    let dispersion = (values.len() >= MIN_BAND_RUNS && med > 0.0).then(|| 1.96 * robust_sd(&v, med) / med * 100.0);
    let own: Option<Vec<f64>> = values.iter().map(|x| x.1).collect();
    let own = own.and_then(|mut o| median(&mut o));
    let spread_pct = match (dispersion, own) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    Some(Baseline { median: med, spread_pct, runs: values.len() })
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
/// outside the band of the (at most `last`) runs before it; a band needs
/// [`MIN_BAND_RUNS`] runs.
pub(crate) fn first_departure(series: &[(f64, Option<f64>)], last: usize) -> Option<Departure> {
    for i in MIN_BAND_RUNS..series.len() {
        let before = &series[i.saturating_sub(last.max(1))..i];
        if before.len() < MIN_BAND_RUNS {
            continue;
        }
        let Some(band) = baseline(before).and_then(|b| b.band()) else { continue };
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

    #[test]
    fn median_and_spread() {
        // median 100, deviations 0,1,1,2,20 -> MAD 1 -> 1.96*1.4826 = 2.905896%.
        let b = baseline(&plain(&[100.0, 99.0, 101.0, 102.0, 80.0])).unwrap();
        assert_eq!(b.median, 100.0);
        assert!((b.spread_pct.unwrap() - 2.905896).abs() < 1e-9, "{b:?}");
        let (lo, hi) = b.band().unwrap();
        assert!((lo - 97.094104).abs() < 1e-9 && (hi - 102.905896).abs() < 1e-9);
        // The runs' own intervals win when larger; two runs have no
        // dispersion, only their intervals; none at all: no spread.
        let b = baseline(&[(100.0, Some(5.0)), (100.0, Some(3.0)), (100.0, Some(4.0))]).unwrap();
        assert_eq!(b.spread_pct, Some(4.0));
        assert_eq!(baseline(&[(10.0, Some(2.0)), (12.0, Some(4.0))]).unwrap().spread_pct, Some(3.0));
        assert_eq!(baseline(&plain(&[10.0, 12.0])).unwrap(), Baseline { median: 11.0, spread_pct: None, runs: 2 });
        assert_eq!(baseline(&[]), None);
    }

    #[test]
    fn the_first_run_outside_the_band_before_it_is_named() {
        // Three steady runs form the band 100 ± 2.905896%; 101 is inside,
        // 90 (index 5) the first outside; a later 50 is not the first.
        let s = plain(&[100.0, 99.0, 101.0, 100.0, 101.0, 90.0, 50.0]);
        let d = first_departure(&s, 10).unwrap();
        assert_eq!((d.index, d.value), (5, 90.0));
        // Runs before the band's three are never judged.
        assert_eq!(first_departure(&plain(&[100.0, 50.0, 10.0]), 10), None);
        assert_eq!(first_departure(&plain(&[100.0, 101.0, 99.0, 100.5]), 10), None);
        // Only the last N runs form the band: a slow drift up stays inside
        // a short window, and leaves a long one.
        let drift = plain(&[100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0]);
        assert_eq!(first_departure(&drift, 3), None);
        assert_eq!(first_departure(&drift, 10).map(|d| d.index), Some(5));
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
