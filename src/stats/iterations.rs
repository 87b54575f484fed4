//! nccl-tests' per-iteration summary (`-I 1`): each timed iteration's own
//! time (CUDA events around it, the most over every GPU and process), and
//! over the iterations after the first `-K` skipped ones their least,
//! most, mean, population standard deviation and nearest-rank
//! percentiles, as nccl-tests reports them (its `i_min`, `i_max`,
//! `i_p99` and `i_cv%` columns, and the `*_per_iter` objects of its JSON).

/// One placement's iteration times and what `-I` reports of them.
#[derive(Clone, Debug, PartialEq)]
pub struct PerIteration {
    /// Each timed iteration's time, seconds: the most over every process
    /// (each process's own is the most over its GPUs).
    pub times: Vec<f64>,
    /// Each process's series, in process order, where the job has more
    /// than one process (nccl-tests' `per_process_max_times_us`).
    pub per_process: Vec<Vec<f64>>,
    /// Leading iterations left out of [`Self::stats`] (`-K`).
    pub skipped: usize,
}

impl PerIteration {
    /// From every rank's series (rank order, `lanes` ranks to a process,
    /// each series one value per timed iteration): each process's most
    /// per iteration, then the most over processes.
    pub fn of_ranks(ranks: &[Vec<f64>], lanes: usize, skipped: usize) -> PerIteration {
        let per_process: Vec<Vec<f64>> = ranks.chunks(lanes.max(1)).map(most_each).collect();
        let times = most_each(&per_process);
        let per_process = if per_process.len() > 1 { per_process } else { Vec::new() };
        PerIteration { times, per_process, skipped }
    }

    /// The summary over the iterations after the skipped ones (all of them
    /// where the skip would leave none).
    pub fn stats(&self) -> IterationStats {
        let kept = self.times.get(self.skipped..).filter(|k| !k.is_empty()).unwrap_or(&self.times);
        IterationStats::of(kept)
    }
}

/// Element-wise most of equally long series (the shortest's length).
fn most_each(series: &[Vec<f64>]) -> Vec<f64> {
    let n = series.iter().map(Vec::len).min().unwrap_or(0);
    (0..n).map(|i| series.iter().map(|s| s[i]).fold(f64::NEG_INFINITY, f64::max)).collect()
}

/// nccl-tests' summary of iteration times (seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IterationStats {
    pub min: f64,
    pub max: f64,
    pub avg: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    /// Population standard deviation (divided by n).
    pub stdev: f64,
}

impl IterationStats {
    /// The summary of `times`; all zero where there are none.
    pub fn of(times: &[f64]) -> IterationStats {
        let n = times.len();
        if n == 0 {
            return IterationStats { min: 0.0, max: 0.0, avg: 0.0, p50: 0.0, p95: 0.0, p99: 0.0, stdev: 0.0 };
        }
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        // Nearest rank: the smallest value with at least p% at or below it.
        let nearest = |p: usize| sorted[((n * p).div_ceil(100)).saturating_sub(1).min(n - 1)];
        let avg = sorted.iter().sum::<f64>() / n as f64;
        let var = sorted.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / n as f64;
        IterationStats {
            min: sorted[0],
            max: sorted[n - 1],
            avg,
            p50: sorted[n / 2],
            p95: nearest(95),
            p99: nearest(99),
            stdev: var.sqrt(),
        }
    }

    /// The coefficient of variation, percent (0 where the mean is not
    /// positive).
    pub fn cv_pct(&self) -> f64 {
        if self.avg > 0.0 {
            self.stdev / self.avg * 100.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_and_population_deviation() {
        let times: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = IterationStats::of(&times);
        assert_eq!((s.min, s.max, s.avg, s.p50), (1.0, 10.0, 5.5, 6.0));
        // Below 100 samples the 99th percentile is the largest; 95% of 10
        // rounds up to the tenth.
        assert_eq!((s.p95, s.p99), (10.0, 10.0));
        assert!((s.stdev - 8.25f64.sqrt()).abs() < 1e-12);
        let hundred: Vec<f64> = (1..=200).map(f64::from).collect();
        let s = IterationStats::of(&hundred);
        assert_eq!((s.p50, s.p95, s.p99), (101.0, 190.0, 198.0));
        assert_eq!(IterationStats::of(&[]).cv_pct(), 0.0);
        assert!((IterationStats::of(&[1.0, 3.0]).cv_pct() - 50.0).abs() < 1e-12);
    }

    /// The most over a process's GPUs, then over processes; one process
    /// keeps no per-process series; the skip leaves the first out.
    #[test]
    fn processes_take_their_gpus_most_and_the_run_the_most_of_processes() {
        let ranks = vec![vec![1.0, 5.0, 2.0], vec![2.0, 1.0, 2.0], vec![9.0, 1.0, 1.0], vec![1.0, 1.0, 4.0]];
        let p = PerIteration::of_ranks(&ranks, 2, 1);
        assert_eq!(p.per_process, vec![vec![2.0, 5.0, 2.0], vec![9.0, 1.0, 4.0]]);
        assert_eq!(p.times, vec![9.0, 5.0, 4.0]);
        assert_eq!((p.stats().min, p.stats().max), (4.0, 5.0));
        let one = PerIteration::of_ranks(&ranks, 4, 0);
        assert!(one.per_process.is_empty());
        assert_eq!(one.times, vec![9.0, 5.0, 4.0]);
        assert_eq!(PerIteration { skipped: 3, ..one }.stats().min, 4.0);
    }
}
