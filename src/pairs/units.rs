//! Quantities on the `pairs` command line and in its output: message sizes
//! (read by `crate::bytes`, held to what one MPI message can carry), times
//! and fractions, parsed with messages a user can act on, and short
//! human-readable forms of bandwidths and times. Bandwidths are read by
//! `crate::matrix::units`, which `gpu-bw` shares.

use thiserror::Error;

use crate::bytes::{self, split_number, ParseSizeError};

/// The largest message one MPI call can move with a C `int` count of bytes.
pub(crate) const MAX_MESSAGE_BYTES: u64 = i32::MAX as u64;

#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum UnitError {
    #[error("'{0}' is not a size (give bytes, or a number with K, KB, KiB, M, MB, MiB, G, GB or GiB; all binary)")]
    Size(String),
    #[error("size '{0}' is out of range (1 byte to {MAX_MESSAGE_BYTES} bytes, the most one MPI message can carry)")]
    SizeRange(String),
    #[error("'{0}' is not a time (give a number and a unit such as 5us, 800ns, 0.01ms or 1s)")]
    Time(String),
    #[error(
        "'{0}' is not a fraction (give a percentage such as 80% or a fraction such as 0.8, above 0 and at most 1)"
    )]
    Fraction(String),
}

/// Parses a message size: any byte size (`crate::bytes::parse_size`, every
/// multiple binary, as in OSU's `-m 8M` and the HCCL demo's `--size 64m`)
/// from 1 byte to [`MAX_MESSAGE_BYTES`].
pub(crate) fn parse_size(text: &str) -> Result<usize, UnitError> {
    match bytes::parse_size(text) {
        Ok(b) if (1..=MAX_MESSAGE_BYTES).contains(&b) => Ok(b as usize),
        Ok(_) | Err(ParseSizeError::OutOfRange(_)) => Err(UnitError::SizeRange(text.to_string())),
        Err(ParseSizeError::Malformed(_)) => Err(UnitError::Size(text.to_string())),
    }
}

/// Parses a time into seconds (ns, us or µs, ms, s; unit required).
pub(crate) fn parse_time(text: &str) -> Result<f64, UnitError> {
    let bad = || UnitError::Time(text.to_string());
    let (_, value, unit) = split_number(text).ok_or_else(bad)?;
    // Divide (not multiply by 1e-6) so that "5us" is exactly 5e-6.
    let per_second = match unit {
        "ns" => 1e9,
        "us" | "µs" | "μs" => 1e6,
        "ms" => 1e3,
        "s" => 1.0,
        _ => return Err(bad()),
    };
    if value <= 0.0 {
        return Err(bad());
    }
    Ok(value / per_second)
}

/// Parses "80%" or "0.8" into 0.8.
pub(crate) fn parse_fraction(text: &str) -> Result<f64, UnitError> {
    let bad = || UnitError::Fraction(text.to_string());
    let t = text.trim();
    let f = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
        None => t.parse::<f64>().map_err(|_| bad())?,
    };
    if f.is_finite() && f > 0.0 && f <= 1.0 {
        Ok(f)
    } else {
        Err(bad())
    }
}

/// Bytes per second as "68 GB/s" (decimal, at most GB/s as fabric specs
/// are quoted, up to 3 decimals).
pub fn rate_text(bytes_per_s: f64) -> String {
    let (v, unit) = match bytes_per_s {
        x if x >= 1e9 => (x / 1e9, "GB/s"),
        x if x >= 1e6 => (x / 1e6, "MB/s"),
        x if x >= 1e3 => (x / 1e3, "KB/s"),
        x => (x, "B/s"),
    };
    format!("{} {unit}", trim_number(v))
}

/// Seconds as "5 us".
pub(crate) fn time_text(secs: f64) -> String {
    let (v, unit) = match secs {
        x if x >= 1.0 => (x, "s"),
        x if x >= 1e-3 => (x * 1e3, "ms"),
        x if x >= 1e-6 => (x * 1e6, "us"),
        x => (x * 1e9, "ns"),
    };
    format!("{} {unit}", trim_number(v))
}

/// Up to three decimals, without trailing zeros.
fn trim_number(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("64MB"), Ok(64 << 20));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("4 KB"), Ok(4096));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        assert_eq!(parse_size("8"), Ok(8));
        assert_eq!(parse_size("8B"), Ok(8));
        assert!(matches!(parse_size("0"), Err(UnitError::SizeRange(_))));
        assert!(matches!(parse_size("2GB"), Err(UnitError::SizeRange(_))));
        assert!(matches!(parse_size("64XB"), Err(UnitError::Size(_))));
        assert!(matches!(parse_size("1.3"), Err(UnitError::Size(_))));
        assert!(matches!(parse_size("-4"), Err(UnitError::SizeRange(_))));
        assert!(matches!(parse_size(""), Err(UnitError::Size(_))));
    }

    #[test]
    fn times_and_fractions() {
        assert_eq!(parse_time("5us"), Ok(5e-6));
        assert_eq!(parse_time("5 µs"), Ok(5e-6));
        assert_eq!(parse_time("800ns"), Ok(800e-9));
        assert_eq!(parse_time("2ms"), Ok(2e-3));
        assert_eq!(parse_time("1s"), Ok(1.0));
        assert!(parse_time("5").is_err());
        assert!(parse_time("0us").is_err());
        assert_eq!(parse_fraction("80%"), Ok(0.8));
        assert_eq!(parse_fraction("0.8"), Ok(0.8));
        assert_eq!(parse_fraction("100%"), Ok(1.0));
        for bad in ["80", "0", "0%", "120%", "x"] {
            assert!(parse_fraction(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn texts() {
        assert_eq!(rate_text(68e9), "68 GB/s");
        assert_eq!(rate_text(1.5e6), "1.5 MB/s");
        assert_eq!(time_text(5e-6), "5 us");
        assert_eq!(time_text(0.25), "250 ms");
    }
}
