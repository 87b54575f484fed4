//! Axis arithmetic and labels for the charts: message sizes on a log-2
//! axis written as 1, 64, 1K, 64K, 1M; values with as few digits as read
//! well; the value ranges with a margin around the data.

use crate::bytes::compact_label;

/// Label for a tick at `log2(size) = x`: only whole powers get one, as
/// `1`, `512`, `1K`, `64K`, `1M`, `2G`.
pub(crate) fn log2_tick_label(x: f64) -> String {
    let r = x.round();
    if (x - r).abs() > 1e-6 || !(0.0..63.0).contains(&r) {
        return String::new();
    }
    compact_label(1u64 << (r as u32))
}

/// A value for an axis tick: no trailing zeros, and no more decimals than
/// its size needs.
pub(crate) fn value_label(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else if a >= 0.001 {
        format!("{v:.4}")
    } else {
        format!("{v:.1e}")
    };
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The log-2 x range covering `sizes` (all > 0), in whole powers, at
/// least two wide so a single size sits in the middle.
pub(crate) fn log2_range(sizes: impl Iterator<Item = u64>) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in sizes.filter(|s| *s > 0) {
        let x = (s as f64).log2();
        lo = lo.min(x);
        hi = hi.max(x);
    }
    if !lo.is_finite() {
        return None;
    }
    let (lo, hi) = (lo.floor(), hi.ceil());
    Some(if hi - lo < 2.0 { (lo - 1.0, hi + 1.0) } else { (lo, hi) })
}

/// A positive range for a log axis around `values`, with a margin.
pub(crate) fn log_value_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = finite_positive_bounds(values)?;
    Some((lo / 1.5, hi * 1.5))
}

/// A linear range from 0 to a little above the largest value.
pub(crate) fn linear_value_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (_, hi) = finite_positive_bounds(values)?;
    Some((0.0, hi * 1.1))
}

fn finite_positive_bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    lo.is_finite().then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(log2_tick_label(0.0), "1");
        assert_eq!(log2_tick_label(9.0), "512");
        assert_eq!(log2_tick_label(10.0), "1K");
        assert_eq!(log2_tick_label(22.0), "4M");
        assert_eq!(log2_tick_label(2.5), "");
    }

    #[test]
    fn value_labels() {
        assert_eq!(value_label(24636.01), "24636");
        assert_eq!(value_label(2.5), "2.5");
        assert_eq!(value_label(2.0), "2");
        assert_eq!(value_label(0.25), "0.25");
        assert_eq!(value_label(0.125), "0.125");
        assert_eq!(value_label(0.0), "0");
    }

    #[test]
    fn ranges() {
        assert_eq!(log2_range([1, 4194304].into_iter()), Some((0.0, 22.0)));
        assert_eq!(log2_range([8].into_iter()), Some((2.0, 4.0)));
        assert_eq!(log2_range([0].into_iter()), None);
        assert_eq!(linear_value_range([5.0, 10.0].into_iter()), Some((0.0, 11.0)));
        let (lo, hi) = log_value_range([1.0, 100.0].into_iter()).unwrap();
        assert!(lo < 1.0 && hi > 100.0);
        assert_eq!(log_value_range([f64::NAN, 0.0].into_iter()), None);
    }
}
