//! The rules a comparison judges by, and their command-line grammar:
//! `--tolerance [SIZES:]PCT%` (later rules win where ranges overlap),
//! absolute limits `--min-bw [SIZES:]MBPS`, `--max-lat [SIZES:]US`,
//! `--min-rate [SIZES:]MSG_PER_S`. SIZES is `N`, `A-B`, `A-` or `-B`,
//! inclusive, each a byte size as `crate::bytes` reads it (`64`, `8K`, `1M`,
//! `2G`; every multiple a power of 1024).

use std::fmt;

use thiserror::Error;

use super::model::Quantity;
use crate::bytes;

/// A `--tolerance` or limit option clap cannot turn into a rule; the text
/// follows clap's "invalid value ... for ...:".
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum RuleError {
    #[error("'{0}' is not a size (bytes, optionally with K, M or G)")]
    Size(String),
    #[error("'{0}' is not a size range")]
    Range(String),
    #[error("size range '{0}' ends before it starts")]
    Backwards(String),
    #[error("tolerance '{0}' is not [SIZES:]PERCENT% (e.g. 10% or 1-8K:20%)")]
    Tolerance(String),
    #[error("limit '{text}' is not [SIZES:]{unit} (a number)")]
    Limit { text: String, unit: &'static str },
}

/// The tolerance where no rule names a size.
pub(crate) const DEFAULT_TOLERANCE_PCT: f64 = 10.0;

/// Inclusive byte range; `hi: None` is open-ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeRange {
    pub lo: u64,
    pub hi: Option<u64>,
}

impl SizeRange {
    pub const ALL: SizeRange = SizeRange { lo: 0, hi: None };

    pub fn contains(&self, size: u64) -> bool {
        size >= self.lo && self.hi.is_none_or(|h| size <= h)
    }
}

impl fmt::Display for SizeRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.lo, self.hi) {
            (0, None) => write!(f, "all sizes"),
            (lo, Some(hi)) if lo == hi => write!(f, "{lo}"),
            (lo, Some(hi)) => write!(f, "{lo}-{hi}"),
            (lo, None) => write!(f, "{lo}-"),
        }
    }
}

/// `64`, `8K`, `1M`, `2G` in bytes; 0 is a size here (a range may start
/// at 0).
fn parse_size(s: &str) -> Result<u64, RuleError> {
    bytes::parse_size(s).map_err(|_| RuleError::Size(s.to_string()))
}

/// `N`, `A-B`, `A-` or `-B`.
pub(crate) fn parse_range(s: &str) -> Result<SizeRange, RuleError> {
    let r = match s.split_once('-') {
        None => {
            let n = parse_size(s)?;
            SizeRange { lo: n, hi: Some(n) }
        }
        Some((a, b)) => {
            let lo = if a.trim().is_empty() { 0 } else { parse_size(a)? };
            let hi = if b.trim().is_empty() { None } else { Some(parse_size(b)?) };
            if a.trim().is_empty() && hi.is_none() {
                return Err(RuleError::Range(s.to_string()));
            }
            SizeRange { lo, hi }
        }
    };
    if r.hi.is_some_and(|h| h < r.lo) {
        return Err(RuleError::Backwards(s.to_string()));
    }
    Ok(r)
}

/// Splits `[SIZES:]VALUE`.
fn split_ranged(s: &str) -> Result<(SizeRange, &str), RuleError> {
    match s.rsplit_once(':') {
        Some((r, v)) => Ok((parse_range(r)?, v.trim())),
        None => Ok((SizeRange::ALL, s.trim())),
    }
}

/// How far a measurement may be worse than the reference, in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToleranceRule {
    pub range: SizeRange,
    pub pct: f64,
}

/// `10%` or `1-8K:20%`.
pub(crate) fn parse_tolerance(s: &str) -> Result<ToleranceRule, RuleError> {
    let (range, v) = split_ranged(s)?;
    let pct = v
        .strip_suffix('%')
        .and_then(|n| n.trim().parse::<f64>().ok())
        .filter(|p| p.is_finite() && *p >= 0.0)
        .ok_or_else(|| RuleError::Tolerance(s.to_string()))?;
    Ok(ToleranceRule { range, pct })
}

/// An absolute limit on one metric over a size range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    pub metric: Quantity,
    pub range: SizeRange,
    pub value: f64,
}

impl Limit {
    /// Bandwidth and message rate limits are floors, latency limits ceilings.
    pub(crate) fn violated_by(&self, measured: f64) -> bool {
        if self.metric.higher_is_better() {
            measured < self.value
        } else {
            measured > self.value
        }
    }

    pub fn describe(&self) -> String {
        let op = if self.metric.higher_is_better() { "below the floor" } else { "above the ceiling" };
        format!("{op} {} {}", self.value, self.metric.unit())
    }
}

/// `24000` or `1M-:24000` for `metric`.
pub(crate) fn parse_limit(metric: Quantity, s: &str) -> Result<Limit, RuleError> {
    let (range, v) = split_ranged(s)?;
    let value = v
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| RuleError::Limit { text: s.to_string(), unit: metric.unit() })?;
    Ok(Limit { metric, range, value })
}

/// Everything a comparison judges by.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    pub tolerances: Vec<ToleranceRule>,
    pub limits: Vec<Limit>,
    /// Failing points allowed before the comparison fails.
    pub allowed_failures: usize,
    /// Reference sizes and benchmarks the runs lack count as failures.
    pub require_all: bool,
    /// Judge each bandwidth's share of its path's peak instead of the
    /// values themselves.
    pub by_efficiency: bool,
}

impl Rules {
    /// The last rule whose range holds `size`, else the default.
    pub(crate) fn tolerance_pct(&self, size: u64) -> f64 {
        self.tolerances.iter().rev().find(|r| r.range.contains(size)).map_or(DEFAULT_TOLERANCE_PCT, |r| r.pct)
    }

    pub(crate) fn limits_for(&self, metric: Quantity, size: u64) -> impl Iterator<Item = &Limit> {
        self.limits.iter().filter(move |l| l.metric == metric && l.range.contains(size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_ranges() {
        assert_eq!(parse_size("8K"), Ok(8192));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        // The shared grammar's other forms mean the same here.
        assert_eq!(parse_size("8KB"), Ok(8192));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        assert_eq!(
            parse_size("1.3").unwrap_err().to_string(),
            "'1.3' is not a size (bytes, optionally with K, M or G)"
        );
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999G").is_err());
        assert_eq!(parse_range("1-8192"), Ok(SizeRange { lo: 1, hi: Some(8192) }));
        assert_eq!(parse_range("8193-"), Ok(SizeRange { lo: 8193, hi: None }));
        assert_eq!(parse_range("-64K"), Ok(SizeRange { lo: 0, hi: Some(65536) }));
        assert_eq!(parse_range("4M"), Ok(SizeRange { lo: 4 << 20, hi: Some(4 << 20) }));
        assert_eq!(parse_range("-").unwrap_err().to_string(), "'-' is not a size range");
        assert_eq!(parse_range("9-3").unwrap_err().to_string(), "size range '9-3' ends before it starts");
        assert_eq!(parse_range("1-x"), Err(RuleError::Size("x".into())));
    }

    #[test]
    fn tolerance_grammar() {
        assert_eq!(parse_tolerance("10%"), Ok(ToleranceRule { range: SizeRange::ALL, pct: 10.0 }));
        let r = parse_tolerance("1-8K:20%").unwrap();
        assert_eq!((r.range, r.pct), (SizeRange { lo: 1, hi: Some(8192) }, 20.0));
        for bad in ["10", "x%", "-5%", "1-2:10", ":10%", "a-b:5%"] {
            assert!(parse_tolerance(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_tolerance("1-2:10").unwrap_err().to_string(),
            "tolerance '1-2:10' is not [SIZES:]PERCENT% (e.g. 10% or 1-8K:20%)"
        );
    }

    #[test]
    fn later_rules_win_and_default_is_ten_percent() {
        let rules = Rules {
            tolerances: vec![parse_tolerance("5%").unwrap(), parse_tolerance("1-8192:20%").unwrap()],
            ..Rules::default()
        };
        assert_eq!(rules.tolerance_pct(0), 5.0);
        assert_eq!(rules.tolerance_pct(8192), 20.0);
        assert_eq!(rules.tolerance_pct(8193), 5.0);
        assert_eq!(Rules::default().tolerance_pct(64), DEFAULT_TOLERANCE_PCT);
    }

    #[test]
    fn limits() {
        let floor = parse_limit(Quantity::Bandwidth, "1M-:24000").unwrap();
        assert!(floor.range.contains(1 << 20) && !floor.range.contains(1000));
        assert!(floor.violated_by(23999.99) && !floor.violated_by(24000.0));
        let ceil = parse_limit(Quantity::Latency, "2.5").unwrap();
        assert!(ceil.violated_by(2.51) && !ceil.violated_by(2.5));
        assert_eq!(
            parse_limit(Quantity::Latency, "fast").unwrap_err().to_string(),
            "limit 'fast' is not [SIZES:]us (a number)"
        );
    }
}
