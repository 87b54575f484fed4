//! The `--precision PCT` stopping rule, as a pure state machine, and the
//! grammar of its options.
//!
//! After warm-up a size runs in batches. After each batch the caller hands
//! over that batch's moments (count, mean, spread) and every value
//! recorded so far, in order (which the drift test reads; nothing is
//! copied or kept here), and the rule answers `Continue(iterations)` or
//! `Stop(reason)`:
//!
//! 1. below the floor (`--min-iterations`), continue up to the floor: the
//!    floor always runs in full, whatever the precision or the time limit;
//! 2. stop, `precision`, once at least [`StoppingRule::min_observations`]
//!    values are in (24, or half a short ceiling; see below), the 95%
//!    confidence interval of their mean (Student's t) is within
//!    the target of it on either side, and the drift test below finds the
//!    values steady. The mean of the per-iteration times is what OSU
//!    reports (or, for bandwidth and message rate, its inverse times a
//!    constant, whose relative interval is the same to first order);
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
//! # The drift test
//!
//! A narrow interval says the mean of the values so far is well known, not
//! that the size has settled: a run that starts in a fast mode and turns
//! slow (osu_bibw at 16 B on a busy host) can meet the interval on its
//! fast iterations alone. So before a size stops for precision its values
//! must pass a *split-half batch-means Welch test*:
//!
//! - the last `8b` values (`b` = n / 8; the fewer than eight oldest values
//!   left over are not used) are cut into
//!   eight consecutive batches of `b` and each batch is replaced by its
//!   mean;
//! - the statistic is Welch's t between the four batch means of the first
//!   half and the four of the second: t = (m2 - m1) / sqrt(s1^2/4 +
//!   s2^2/4), with the Welch-Satterthwaite degrees of freedom (3 to 6);
//! - the size *drifts* when |t| is above Student's 97.5% quantile (a 5%
//!   two-sided test) **and** the halves' means differ by more than the
//!   target, as a share of the mean of all eight.
//!
//! Why batches: timing samples are autocorrelated (a busy spell slows
//! several iterations in a row) and heavy-tailed. A test on single
//! samples takes their spread as if each were independent, so on a busy
//! host it fires far more often than its level says. The mean of a batch averages the short
//! spells out, and the test judges the halves against the spread of the
//! batch means themselves, so a spell or a stall counts once, in its own
//! batch: a single stall raises its half's mean and the spread of that
//! half's batch means alike, and leaves t near 1. Three values a batch at
//! least (so [`MIN_OBSERVATIONS`] is 24) make a batch's mean more than one
//! value, and a fixed count of eight batches lets them grow with n, so
//! that they become more nearly independent as the run gets longer.
//!
//! Short ceilings: where the ceiling is below 48 (OSU runs osu_bw,
//! osu_bibw and osu_mbw_mr only 20 iterations a size above 8 KiB), 24
//! values would leave the size no early stop at all. There precision is
//! judged from half the ceiling on, but never from fewer than eight
//! values, and the drift test's batches may then be of one value. One
//! value of those benchmarks is the time of a whole window (64 messages
//! by default, each 16 KiB or more), already the mean over many transfers
//! that a batch is there to take; and half the ceiling keeps a precision
//! stop resting on at least half of the iterations OSU's count would
//! report. A four-against-four Welch test is weak, but what it must
//! catch, halves apart by more than the target, is at those sizes many
//! times their windows' spread. Four against four also sees a step only
//! near the middle of the eight, and a steady trend only once it is
//! large, so with batches of one the values are also tested for a linear
//! trend: the least-squares slope over all of them, significant at 5%
//! (Student's t, n - 2 degrees of freedom), and a change across them of
//! more than the target. Either finding holds the size back.
//! Why the target as a floor on the difference: with hundreds of values a
//! drift far too small to matter is already significant; halves that
//! differ by less than the target leave the reported mean within half the
//! target of either half's.
//!
//! What happens on drift: the size does not stop for precision. It goes
//! on until its iterations have doubled (or to the ceiling or the time
//! limit), and there both tests are made again on all the values, and so
//! on. Going on rather than straight to the ceiling keeps the cost of a
//! false alarm to one doubling of that size (which is also why a 5% test
//! is affordable); waiting for the doubling, rather than testing again
//! after every short batch, keeps the number of second chances small (a
//! real drift that each test catches most of the time would slip through
//! one of many), at most log2(ceiling / 24) of them. A real change stays
//! visible: a trend keeps the halves apart however long the run gets, so
//! such a size runs to the ceiling; after a change of mode the halves
//! agree again only once the new mode fills most of the run, so the value
//! it stops on is mostly the new mode's. A change within the first batch
//! or two reads to this test as a stall; there the 24 values needed and
//! the mixture's wider interval are what keep the size going. Each time the test holds a size
//! back is counted ([`PrecisionRun::drift_holds`]; the CSV's
//! `drift_holds`).
//!
//! Measured on seeded synthetic series in `precision/tests.rs`
//! (`the_drift_test_rarely_holds_steady_series_and_catches_drift`): see
//! its comments for the rates.
//!
//! Every rank must see the same decisions: feed the rule the same numbers
//! on every rank (e.g. rank 0's and broadcast, or a reduction), or decide
//! on one rank and share the decision.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ci::{mean_ci, t_975, welch_differ, Interval};
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

/// The drift test cuts the values into this many batches (half of them
/// each side).
pub(crate) const DRIFT_BATCHES: u64 = 8;

/// The fewest values in one of the drift test's batches, where the
/// ceiling allows.
pub(crate) const DRIFT_MIN_BATCH: u64 = 3;

/// Precision is judged from this many values on, whatever the floor,
/// where the ceiling is at least twice as many: as many as the drift test
/// needs (fewer also say too little about the spread). Below that, see
/// [`StoppingRule::min_observations`].
pub(crate) const MIN_OBSERVATIONS: u64 = DRIFT_BATCHES * DRIFT_MIN_BATCH;

/// The least default floor.
const FLOOR_AT_LEAST: u64 = 10;

/// A floor for a benchmark whose fixed count is `ceiling`: a tenth of it,
/// but at least 10 (or the ceiling itself if lower).
pub(crate) fn suggested_floor(ceiling: u64) -> u64 {
    (ceiling / 10).max(FLOOR_AT_LEAST.min(ceiling)).max(1)
}

/// The drift test (see the module's doc) of `values`, in the order
/// recorded, against a target of `target` (a share): Some(true) where
/// they drift, Some(false) where they are steady, None below `least`
/// values (and always below eight, one a batch).
pub(crate) fn drifts(values: &[f64], target: f64, least: u64) -> Option<bool> {
    let batches = DRIFT_BATCHES as usize;
    let b = values.len() / batches;
    if b == 0 || (values.len() as u64) < least {
        return None;
    }
    let used = &values[values.len() - batches * b..];
    let (mut first, mut second) = (Moments::EMPTY, Moments::EMPTY);
    for (i, batch) in used.chunks_exact(b).enumerate() {
        let mean = Moments::of(batch).mean();
        if i < batches / 2 {
            first.push(mean);
        } else {
            second.push(mean);
        }
    }
    let overall = (first.mean() + second.mean()) / 2.0;
    let apart = (second.mean() - first.mean()).abs() > target * overall.abs();
    let halves = apart && welch_differ(&first, &second)?;
    // Batches of one value (a short ceiling's): four against four sees a
    // step only near the middle, so a trend across all of them is tested
    // too.
    Some(halves || (b == 1 && trends(values, target)))
}

/// Whether `values` (in order) hold a linear trend: the least-squares
/// slope is significant at 5% (Student's t, n - 2 degrees of freedom) and
/// the change it fits across the values is more than `target` of their
/// mean.
fn trends(values: &[f64], target: f64) -> bool {
    let n = values.len() as f64;
    if values.len() < 3 {
        return false;
    }
    let x_mean = (n - 1.0) / 2.0;
    let y_mean = values.iter().sum::<f64>() / n;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for (i, y) in values.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxx += dx * dx;
        sxy += dx * (y - y_mean);
    }
    let slope = sxy / sxx;
    let residual: f64 =
        values.iter().enumerate().map(|(i, y)| (y - y_mean - slope * (i as f64 - x_mean)).powi(2)).sum();
    let se = (residual / (n - 2.0) / sxx).sqrt();
    let change = (slope * (n - 1.0)).abs();
    let significant = if se > 0.0 { (slope / se).abs() > t_975(n - 2.0) } else { slope != 0.0 };
    significant && change > target * y_mean.abs()
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

    /// The fewest values a precision stop is judged from: half the
    /// ceiling, but at least eight (one a drift batch) and at most
    /// [`MIN_OBSERVATIONS`] (see the module's doc on short ceilings).
    pub fn min_observations(&self) -> u64 {
        (self.ceiling / 2).clamp(DRIFT_BATCHES, MIN_OBSERVATIONS)
    }

    /// A fresh state for one size.
    pub fn start(&self) -> PrecisionRun {
        PrecisionRun { rule: *self, total: Moments::EMPTY, iterations: 0, elapsed: 0.0, drift_holds: 0, retest_at: 0 }
    }
}

/// Why a size stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The interval of the mean is within the target, and the values do
    /// not drift.
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
    drift_holds: u64,
    /// After a hold, the drift test is made again from this many values
    /// on (twice as many as at the hold).
    retest_at: u64,
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
    /// `values` is every value recorded so far, this batch's included, in
    /// the order recorded: the drift test reads it (a size whose values
    /// are missing there never stops for precision).
    pub fn record(&mut self, batch: &Moments, iterations: u64, elapsed: Duration, values: &[f64]) -> Decision {
        self.total.merge(batch);
        self.iterations += iterations;
        self.elapsed += elapsed.as_secs_f64();
        self.decide(values)
    }

    /// [`PrecisionRun::record`] where `values` holds one value per
    /// iteration, every one so far: the batch is those past the ones
    /// already recorded.
    pub(crate) fn record_values(&mut self, values: &[f64], elapsed: Duration) -> Decision {
        let seen = (self.total.count() as usize).min(values.len());
        let batch = &values[seen..];
        self.record(&Moments::of(batch), batch.len() as u64, elapsed, values)
    }

    /// How many times the interval was met but the drift test held the
    /// size back.
    pub fn drift_holds(&self) -> u64 {
        self.drift_holds
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
    /// [`StoppingRule::min_observations`] values on.
    pub(crate) fn precise(&self) -> bool {
        self.total.count() >= self.rule.min_observations()
            && self.interval().is_some_and(|ci| ci.relative_half_width() <= self.rule.target.fraction())
    }

    fn decide(&mut self, values: &[f64]) -> Decision {
        let r = self.rule;
        if self.iterations < r.floor {
            return Decision::Continue(r.floor - self.iterations);
        }
        let n = self.total.count();
        if self.precise() && n >= self.retest_at {
            match drifts(values, r.target.fraction(), r.min_observations()) {
                Some(false) => return Decision::Stop(StopReason::Precision),
                Some(true) => {
                    self.drift_holds += 1;
                    self.retest_at = n.saturating_mul(2);
                }
                None => {}
            }
        }
        if self.iterations >= r.ceiling {
            return Decision::Stop(StopReason::Ceiling);
        }
        // Held back: straight on to where the drift test is made again
        // (as many iterations again as done at the hold, at most).
        let per_value = self.iterations as f64 / n.max(1) as f64;
        let to_retest = (self.retest_at.saturating_sub(n) as f64 * per_value).ceil().min(self.iterations as f64) as u64;
        let mut next = self.wanted().max(to_retest).min(r.ceiling - self.iterations);
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
                    (need as u64).max(self.rule.min_observations())
                } else {
                    u64::MAX
                }
            }
            // No spread yet, or a mean of 0: as many again.
            _ => n.saturating_mul(2).max(self.rule.min_observations()),
        };
        let more = values_needed.saturating_sub(n) as f64 * per_value;
        let more = if more.is_finite() && more < u64::MAX as f64 { more.ceil() as u64 } else { u64::MAX };
        more.clamp((done / 8).max(1), done)
    }
}

#[cfg(test)]
mod tests;
