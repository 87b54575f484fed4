//! Running count, mean and spread of a stream of values, in constant space:
//! Welford's update for one value and Chan's rule for joining two streams
//! (a batch into the total, or one rank's into another's), both stable where
//! a plain sum of squares loses every digit (microsecond latencies whose
//! spread is a thousandth of their mean).

use serde::{Deserialize, Serialize};

/// Count, mean and the sum of squared deviations from the mean (`m2`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    pub(crate) const EMPTY: Moments = Moments { n: 0, mean: 0.0, m2: 0.0 };

    /// The moments of `values`.
    pub fn of(values: &[f64]) -> Moments {
        let mut m = Moments::EMPTY;
        for &x in values {
            m.push(x);
        }
        m
    }

    /// From running sums (`n`, the sum and the sum of squares), for a
    /// caller that only kept those (e.g. reduced across ranks). Less exact
    /// than [`Moments::push`] when the spread is tiny against the mean; a
    /// negative rounding residue is taken as no spread.
    pub fn from_sums(n: u64, sum: f64, sum_sq: f64) -> Moments {
        if n == 0 {
            return Moments::EMPTY;
        }
        let mean = sum / n as f64;
        let m2 = (sum_sq - sum * mean).max(0.0);
        Moments { n, mean, m2 }
    }

    /// Adds one value (Welford).
    #[inline]
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// Joins another stream's moments into these (Chan et al.).
    pub fn merge(&mut self, other: &Moments) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *other;
            return;
        }
        let n = self.n + other.n;
        let d = other.mean - self.mean;
        let (na, nb) = (self.n as f64, other.n as f64);
        self.mean += d * nb / n as f64;
        self.m2 += other.m2 + d * d * na * nb / n as f64;
        self.n = n;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The mean; 0 for no values.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    pub fn sum(&self) -> f64 {
        self.mean * self.n as f64
    }

    /// The sample variance (divisor n - 1); None below two values.
    pub(crate) fn variance(&self) -> Option<f64> {
        (self.n >= 2).then(|| self.m2 / (self.n - 1) as f64)
    }

    /// The sample standard deviation (divisor n - 1); None below two values.
    pub(crate) fn std_dev(&self) -> Option<f64> {
        self.variance().map(f64::sqrt)
    }

    /// Standard deviation over mean; None below two values or where the
    /// mean is not above 0.
    pub(crate) fn cv(&self) -> Option<f64> {
        self.std_dev().filter(|_| self.mean > 0.0).map(|s| s / self.mean)
    }

    /// The standard error of the mean (s / sqrt(n)); None below two values.
    pub(crate) fn std_error(&self) -> Option<f64> {
        self.variance().map(|v| (v / self.n as f64).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    #[test]
    fn mean_and_variance_of_a_known_set() {
        let m = Moments::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(m.count(), 8);
        assert!(close(m.mean(), 5.0, 1e-15));
        assert!(close(m.variance().unwrap(), 32.0 / 7.0, 1e-14));
        assert!(close(m.sum(), 40.0, 1e-15));
        assert!(Moments::of(&[1.0]).variance().is_none());
        assert!(Moments::EMPTY.cv().is_none());
    }

    #[test]
    fn merging_batches_equals_one_stream() {
        let xs: Vec<f64> = (0..1000).map(|i| 1e-6 + (i % 7) as f64 * 1e-9).collect();
        let whole = Moments::of(&xs);
        let mut joined = Moments::EMPTY;
        for chunk in xs.chunks(137) {
            joined.merge(&Moments::of(chunk));
        }
        assert_eq!(joined.count(), whole.count());
        assert!(close(joined.mean(), whole.mean(), 1e-12));
        assert!(close(joined.variance().unwrap(), whole.variance().unwrap(), 1e-9));
        let mut e = Moments::EMPTY;
        e.merge(&Moments::EMPTY);
        assert_eq!(e, Moments::EMPTY);
    }

    #[test]
    fn sums_give_the_same_moments_where_they_can() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        let sum: f64 = xs.iter().sum();
        let sq: f64 = xs.iter().map(|x| x * x).sum();
        let m = Moments::from_sums(4, sum, sq);
        assert!(close(m.variance().unwrap(), Moments::of(&xs).variance().unwrap(), 1e-12));
        // Rounding never makes the spread negative.
        let c = Moments::from_sums(3, 0.3, 0.03 + 1e-18);
        assert!(c.variance().unwrap() >= 0.0);
        assert_eq!(Moments::from_sums(0, 1.0, 1.0), Moments::EMPTY);
    }
}
