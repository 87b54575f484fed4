//! The `--precision PCT` stopping rule, as a pure state machine, and the
//! grammar of its options.
//!
//! After warm-up a size runs in batches. After each batch the caller hands
//! over that batch's moments (count, mean, spread: no samples are kept
//! here) and the rule answers `Continue(iterations)` or `Stop(reason)`:
//!
//! 1. below the floor (`--min-iterations`), continue up to the floor: the
//!    floor always runs in full, whatever the precision or the time limit;
//! 2. stop, `precision`, once at least [`MIN_OBSERVATIONS`] values are in
//!    and the 95% confidence interval of their mean (Student's t) is within
//!    the target of it on either side. The mean of the per-iteration times
//!    is what OSU reports (or, for bandwidth and message rate, its inverse
//!    times a constant, whose relative interval is the same to first
//!    order);
//! 3. stop, `ceiling`, at the ceiling (OSU's count or `-i`);
//! 4. stop, `time_limit`, when the size has run `--max-time-per-size`, or
//!    when not one more iteration fits in what is left of it at the pace
//!    so far;
//! 5. otherwise continue with as many iterations as the interval so far
//!    says are still needed (n grows with the square of the interval's
//!    width), but at least an eighth of those done (a few rounds of
//!    agreement between ranks, not thousands), at most as many as done (a
//!    variance estimated from few values does not commit a long batch),
//!    never past the ceiling, and never past the time left.
//!
//! Every rank must see the same decisions: feed the rule the same numbers
//! on every rank (e.g. rank 0's and broadcast, or a reduction), or decide
//! on one rank and share the decision.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ci::{mean_ci, t_975, Interval};
use super::moments::Moments;

/// A precision target, as a share of the reported value (0.01 for `1%`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
pub struct Precision(f64);

impl Precision {
    /// A share above 0 and at most 1; None otherwise.
    pub(crate) fn from_fraction(f: f64) -> Option<Precision> {
        (f.is_finite() && f > 0.0 && f <= 1.0).then_some(Precision(f))
    }

    pub fn fraction(self) -> f64 {
        self.0
    }

    pub fn percent(self) -> f64 {
        self.0 * 100.0
    }
}

/// The largest `--min-iterations` (OSU keeps counts in a C `int`).
pub(crate) const MAX_ITERATIONS: u64 = i32::MAX as u64;

/// The longest `--max-time-per-size`: 30 days, as for the other time limits.
pub(crate) const MAX_SECONDS_PER_SIZE: f64 = 30.0 * 86400.0;

/// An option value the precision options cannot use; one line each.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum PrecisionOptionError {
    #[error("--precision '{0}': give a percentage above 0 and at most 100, with its % sign (e.g. 1% or 0.5%)")]
    Precision(String),
    #[error("--min-iterations '{0}': give a whole number of iterations from 1 to {MAX_ITERATIONS}")]
    MinIterations(String),
    #[error("--max-time-per-size '{0}': give a time above 0, in seconds (2, 0.5), or with s, ms or m (500ms, 2m)")]
    MaxTime(String),
}

/// `--precision`: a percentage with its `%` sign (`1%`, `0.5%`), above 0
/// and at most 100. A bare number is refused, as `--tolerance` refuses one:
/// `0.01` could mean 1% or 0.01%.
pub(crate) fn parse_precision(text: &str) -> Result<Precision, PrecisionOptionError> {
    let err = || PrecisionOptionError::Precision(text.to_string());
    let num = text.trim().strip_suffix('%').ok_or_else(err)?.trim();
    let pct: f64 = num.parse().map_err(|_| err())?;
    Precision::from_fraction(pct / 100.0).filter(|_| pct <= 100.0).ok_or_else(err)
}

/// `--min-iterations`: a whole number from 1 to [`MAX_ITERATIONS`].
pub(crate) fn parse_min_iterations(text: &str) -> Result<u64, PrecisionOptionError> {
    let t = text.trim();
    let ok = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| t.parse::<u64>().ok())
        .flatten()
        .filter(|n| (1..=MAX_ITERATIONS).contains(n))
        .ok_or_else(|| PrecisionOptionError::MinIterations(text.to_string()))
}

/// `--max-time-per-size`: seconds above 0 (`2`, `0.5`, `2s`, `500ms`,
/// `2m`), at most 30 days.
pub(crate) fn parse_max_time_per_size(text: &str) -> Result<Duration, PrecisionOptionError> {
    let t = text.trim();
    let (num, unit) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * unit)
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_SECONDS_PER_SIZE)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| PrecisionOptionError::MaxTime(text.to_string()))
}

/// Precision is judged from this many values on, whatever the floor: fewer
/// say too little about the spread.
pub(crate) const MIN_OBSERVATIONS: u64 = 10;

/// A floor for a benchmark whose fixed count is `ceiling`: a tenth of it,
/// but at least [`MIN_OBSERVATIONS`] (or the ceiling itself if lower).
pub(crate) fn suggested_floor(ceiling: u64) -> u64 {
    (ceiling / 10).max(MIN_OBSERVATIONS.min(ceiling)).max(1)
}

/// The limits a size runs between.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoppingRule {
    pub target: Precision,
    /// Iterations always run (`--min-iterations`); at least 1, at most the
    /// ceiling.
    pub floor: u64,
    /// Iterations never exceeded (OSU's count or `-i`); at least 1.
    pub ceiling: u64,
    /// Time a size may take (`--max-time-per-size`), counted from its first
    /// timed iteration; the floor runs in full regardless.
    pub max_time: Option<Duration>,
}

impl StoppingRule {
    /// The rule, with the ceiling raised to 1 and the floor brought into
    /// 1..=ceiling: a floor above `-i` runs `-i`.
    pub fn new(target: Precision, floor: u64, ceiling: u64, max_time: Option<Duration>) -> StoppingRule {
        let ceiling = ceiling.max(1);
        StoppingRule { target, floor: floor.clamp(1, ceiling), ceiling, max_time }
    }

    /// A fresh state for one size.
    pub fn start(&self) -> PrecisionRun {
        PrecisionRun { rule: *self, total: Moments::EMPTY, iterations: 0, elapsed: 0.0 }
    }
}

/// Why a size stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The interval of the mean is within the target.
    Precision,
    /// The ceiling was reached first.
    Ceiling,
    /// The size's time ran out first.
    TimeLimit,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Precision => "precision",
            StopReason::Ceiling => "ceiling",
            StopReason::TimeLimit => "time_limit",
        }
    }
}

/// What to do after a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run this many more iterations (at least 1), then record them.
    Continue(u64),
    Stop(StopReason),
}

/// One size under the rule: what has been recorded so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrecisionRun {
    rule: StoppingRule,
    total: Moments,
    iterations: u64,
    elapsed: f64,
}

impl PrecisionRun {
    /// The first batch: the floor.
    pub fn first_batch(&self) -> u64 {
        self.rule.floor
    }

    /// Records a batch of `iterations` timed iterations that took
    /// `elapsed` (wall time, whatever the caller counts against
    /// `--max-time-per-size`), whose per-iteration values have the moments
    /// `batch` (usually one value per iteration; a caller that times a
    /// batch as one value passes its mean as one value), and decides.
    pub fn record(&mut self, batch: &Moments, iterations: u64, elapsed: Duration) -> Decision {
        self.total.merge(batch);
        self.iterations += iterations;
        self.elapsed += elapsed.as_secs_f64();
        self.decide()
    }

    /// [`PrecisionRun::record`] for a batch given as its values, one per
    /// iteration.
    pub(crate) fn record_values(&mut self, values: &[f64], elapsed: Duration) -> Decision {
        self.record(&Moments::of(values), values.len() as u64, elapsed)
    }

    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    pub fn moments(&self) -> &Moments {
        &self.total
    }

    pub fn elapsed(&self) -> Duration {
        Duration::from_secs_f64(self.elapsed)
    }

    /// The 95% interval of the mean so far.
    pub fn interval(&self) -> Option<Interval> {
        mean_ci(&self.total)
    }

    /// Whether the interval of the mean is within the target, from
    /// [`MIN_OBSERVATIONS`] values on.
    pub(crate) fn precise(&self) -> bool {
        self.total.count() >= MIN_OBSERVATIONS
            && self.interval().is_some_and(|ci| ci.relative_half_width() <= self.rule.target.fraction())
    }

    fn decide(&self) -> Decision {
        let r = &self.rule;
        if self.iterations < r.floor {
            return Decision::Continue(r.floor - self.iterations);
        }
        if self.precise() {
            return Decision::Stop(StopReason::Precision);
        }
        if self.iterations >= r.ceiling {
            return Decision::Stop(StopReason::Ceiling);
        }
        let mut next = self.wanted().min(r.ceiling - self.iterations);
        if let Some(max) = r.max_time {
            let left = max.as_secs_f64() - self.elapsed;
            if left <= 0.0 {
                return Decision::Stop(StopReason::TimeLimit);
            }
            let per_iteration = self.elapsed / self.iterations as f64;
            if per_iteration > 0.0 {
                let fits = (left / per_iteration).floor();
                if fits < 1.0 {
                    return Decision::Stop(StopReason::TimeLimit);
                }
                next = next.min(fits as u64);
            }
        }
        Decision::Continue(next.max(1))
    }

    /// Iterations the interval so far asks for, within an eighth and all
    /// of those done.
    fn wanted(&self) -> u64 {
        let n = self.total.count();
        let done = self.iterations.max(1);
        let per_value = done as f64 / n.max(1) as f64;
        let values_needed = match (self.total.std_dev(), self.total.mean().abs()) {
            (Some(s), m) if m > 0.0 => {
                let t = t_975((n - 1) as f64);
                let need = (t * s / (self.rule.target.fraction() * m)).powi(2).ceil();
                if need.is_finite() {
                    (need as u64).max(MIN_OBSERVATIONS)
                } else {
                    u64::MAX
                }
            }
            // No spread yet, or a mean of 0: as many again.
            _ => n.saturating_mul(2).max(MIN_OBSERVATIONS),
        };
        let more = values_needed.saturating_sub(n) as f64 * per_value;
        let more = if more.is_finite() && more < u64::MAX as f64 { more.ceil() as u64 } else { u64::MAX };
        more.clamp((done / 8).max(1), done)
    }
}

#[cfg(test)]
mod tests;
