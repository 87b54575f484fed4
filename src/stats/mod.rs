//! Per-iteration timing samples and what is derived from them: OSU's tail
//! percentile pick (for `-z`), and an HdrHistogram summary (percentiles,
//! mean, standard deviation) for the CSV. The submodules are pure
//! statistics over samples: running moments, 95% confidence intervals, the
//! noise verdicts, a size's spread in one bundle, the `--precision`
//! stopping rule, and nccl-tests' per-iteration summary.

pub mod ci;
pub mod iterations;
pub(crate) mod moments;
pub mod noise;
pub mod precision;
pub(crate) mod rng;
pub mod spread;
#[cfg(test)]
pub(crate) mod synthetic;

use hdrhistogram::Histogram;
use serde::Serialize;

/// Elapsed seconds of each timed iteration on this rank, in order. The
/// capacity is reserved up front so recording never allocates.
pub struct Samples {
    secs: Vec<f64>,
}

impl Samples {
    pub(crate) fn with_capacity(n: usize) -> Samples {
        Samples { secs: Vec::with_capacity(n) }
    }

    /// Makes room for `n` samples (called between sizes, never while timing).
    pub(crate) fn reset(&mut self, n: usize) {
        self.secs.clear();
        self.secs.reserve(n);
    }

    #[inline(always)]
    pub fn push(&mut self, secs: f64) {
        debug_assert!(self.secs.len() < self.secs.capacity());
        self.secs.push(secs);
    }

    pub fn as_slice(&self) -> &[f64] {
        &self.secs
    }

    pub fn len(&self) -> usize {
        self.secs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.secs.is_empty()
    }

    /// Sum in recording order: the same floating-point result as OSU's
    /// running `t_total += t_end - t_start`.
    pub fn total(&self) -> f64 {
        let mut t = 0.0;
        for &s in &self.secs {
            t += s;
        }
        t
    }
}

/// OSU's `-z` pick: sort ascending and take element `floor(n*p/100) - 1`.
/// Where that index would be negative (tiny n), the smallest value is used
/// instead of reading out of bounds as OSU does.
pub(crate) fn osu_percentile(sorted: &[f64], p: u32) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = (sorted.len() * p as usize / 100).saturating_sub(1);
    sorted[idx.min(sorted.len() - 1)]
}

/// OSU tail values for the requested percentiles, from per-iteration
/// metric values (in any order).
pub fn osu_tails(values: &[f64], percentiles: &[u32]) -> Vec<(u32, f64)> {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    percentiles.iter().map(|&p| (p, osu_percentile(&sorted, p))).collect()
}

/// How each rank's mean latency compares across ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RankSpread {
    /// Fastest rank and its mean latency in microseconds (OSU's "Min").
    pub fastest: (usize, f64),
    /// Slowest rank and its mean latency in microseconds (OSU's "Max").
    pub slowest: (usize, f64),
    /// Rank 0's own mean latency in microseconds.
    pub first: f64,
}

impl RankSpread {
    /// The time `which` reports, given the average over ranks `avg`.
    pub fn time(&self, which: RankTime, avg: f64) -> f64 {
        match which {
            RankTime::Rank0 => self.first,
            RankTime::Avg => avg,
            RankTime::Min => self.fastest.1,
            RankTime::Max => self.slowest.1,
        }
    }

    /// From every rank's mean, in rank order. The first rank wins ties.
    pub fn of(means: &[f64]) -> Option<RankSpread> {
        let first = *means.first()?;
        let mut s = RankSpread { fastest: (0, first), slowest: (0, first), first };
        for (r, &m) in means.iter().enumerate().skip(1) {
            if m < s.fastest.1 {
                s.fastest = (r, m);
            }
            if m > s.slowest.1 {
                s.slowest = (r, m);
            }
        }
        Some(s)
    }
}

/// Which rank's time a collective's row reports where ranks differ
/// (nccl-tests' `-a`): rank 0's own, the average over ranks (the default,
/// as OSU's and nccl-tests'), the fastest rank's or the slowest rank's.
/// Bandwidths follow the time it picks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RankTime {
    Rank0,
    #[default]
    Avg,
    Min,
    Max,
}

impl RankTime {
    pub fn is_avg(&self) -> bool {
        *self == RankTime::Avg
    }
}

/// Distribution of per-iteration times, in microseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub samples: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    /// The 99.9th percentile: the tail a run of a few thousand iterations
    /// can still show (below 1000 samples it is the largest or next one).
    pub p999_us: f64,
    pub max_us: f64,
    pub stddev_us: f64,
}

/// Largest value the histogram tracks: one hour, in nanoseconds.
const HIST_MAX_NS: u64 = 3_600_000_000_000;

/// A histogram of nanoseconds with 3 significant digits.
pub(crate) fn new_histogram() -> Histogram<u64> {
    // Bounds are constants that hdrhistogram accepts.
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).unwrap_or_else(|_| unreachable!("valid histogram bounds"))
}

impl Summary {
    /// Summarises per-iteration times given in seconds, each multiplied by
    /// `scale` first (0.5 turns a round trip into a one-way latency).
    /// Percentiles come from an HdrHistogram of nanoseconds; min, max, mean
    /// and standard deviation are exact.
    pub fn from_secs(secs: &[f64], scale: f64) -> Option<Summary> {
        if secs.is_empty() {
            return None;
        }
        let mut h = new_histogram();
        let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
        for &s in secs {
            let us = s * scale * 1e6;
            min = min.min(us);
            max = max.max(us);
            sum += us;
            let ns = (us * 1e3).round().clamp(1.0, HIST_MAX_NS as f64) as u64;
            h.saturating_record(ns);
        }
        let n = secs.len() as f64;
        let mean = sum / n;
        let var = secs.iter().map(|&s| (s * scale * 1e6 - mean).powi(2)).sum::<f64>() / n;
        // A bucket's reported value can lie just past the true extremes.
        let q = |p: f64| (h.value_at_quantile(p) as f64 / 1e3).clamp(min, max);
        Some(Summary {
            samples: secs.len() as u64,
            min_us: min,
            mean_us: mean,
            p50_us: q(0.50),
            p90_us: q(0.90),
            p99_us: q(0.99),
            p999_us: q(0.999),
            max_us: max,
            stddev_us: var.sqrt(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osu_index_rule() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        assert_eq!(osu_percentile(&v, 50), 50.0);
        assert_eq!(osu_percentile(&v, 90), 90.0);
        assert_eq!(osu_percentile(&v, 99), 99.0);
        assert_eq!(osu_percentile(&v, 100), 100.0);
        // floor(10*5/100) - 1 = -1 in OSU: we take the smallest
        let small: Vec<f64> = (1..=10).map(|x| x as f64).collect();
        assert_eq!(osu_percentile(&small, 5), 1.0);
        assert_eq!(osu_percentile(&small, 0), 1.0);
        assert_eq!(osu_percentile(&[], 50), 0.0);
    }

    #[test]
    fn tails_sort_first() {
        let t = osu_tails(&[5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 8.0, 7.0, 6.0, 10.0], &[50, 90]);
        assert_eq!(t, vec![(50, 5.0), (90, 9.0)]);
    }

    #[test]
    fn summary_values() {
        // 1..=1000 microseconds
        let secs: Vec<f64> = (1..=1000).map(|x| x as f64 * 1e-6).collect();
        let s = Summary::from_secs(&secs, 1.0).unwrap();
        assert_eq!(s.samples, 1000);
        assert!((s.min_us - 1.0).abs() < 1e-9);
        assert!((s.max_us - 1000.0).abs() < 1e-9);
        assert!((s.mean_us - 500.5).abs() < 1e-6);
        assert!((s.p50_us - 500.0).abs() / 500.0 < 0.002, "{}", s.p50_us);
        assert!((s.p90_us - 900.0).abs() / 900.0 < 0.002, "{}", s.p90_us);
        assert!((s.p99_us - 990.0).abs() / 990.0 < 0.002, "{}", s.p99_us);
        assert!((s.p999_us - 999.0).abs() / 999.0 < 0.002, "{}", s.p999_us);
        assert!((s.stddev_us - 288.6749).abs() < 0.01, "{}", s.stddev_us);
        let half = Summary::from_secs(&secs, 0.5).unwrap();
        assert!((half.max_us - 500.0).abs() < 1e-9);
        assert!(Summary::from_secs(&[], 1.0).is_none());
    }

    #[test]
    fn percentiles_stay_within_min_and_max() {
        let secs = [0.4305e-6, 0.3e-6, 0.35e-6];
        let s = Summary::from_secs(&secs, 1.0).unwrap();
        assert!(s.p999_us <= s.max_us && s.p99_us <= s.p999_us && s.p50_us >= s.min_us, "{s:?}");
    }

    #[test]
    fn sub_nanosecond_and_huge_values_do_not_panic() {
        let s = Summary::from_secs(&[1e-12, 1e5], 1.0).unwrap();
        assert!(s.max_us > 1e10);
    }

    #[test]
    fn spread_over_ranks() {
        let s = RankSpread::of(&[2.0, 1.0, 3.0, 1.0, 3.0]).unwrap();
        assert_eq!(s.fastest, (1, 1.0));
        assert_eq!(s.slowest, (2, 3.0));
        assert!(RankSpread::of(&[]).is_none());
        // nccl-tests' -a: rank 0's, the average given, the least, the most.
        let picks = [RankTime::Rank0, RankTime::Avg, RankTime::Min, RankTime::Max].map(|w| s.time(w, 2.0));
        assert_eq!(picks, [2.0, 2.0, 1.0, 3.0]);
        let s = RankSpread::of(&[5.0, 1.0, 9.0]).unwrap();
        assert_eq!(s.time(RankTime::Rank0, 5.0), 5.0);
        assert_eq!((s.fastest, s.slowest, s.first), ((1, 1.0), (2, 9.0), 5.0));
    }

    #[test]
    fn total_is_running_sum() {
        let mut s = Samples::with_capacity(3);
        s.push(0.1);
        s.push(0.2);
        s.push(0.3);
        assert_eq!(s.total(), 0.1 + 0.2 + 0.3);
        s.reset(2);
        assert!(s.is_empty());
    }
}
