//! The bandwidth unit both tools read from their command lines (`pairs
//! --min-bw`, `gpu-bw --min-bw`): decimal bytes or bits per second, or
//! binary bytes per second, parsed into bytes per second with a message a
//! user can act on. The other quantities of `pairs` (message sizes, times,
//! fractions) and its short texts stay in `pairs::units`.

use thiserror::Error;

use crate::bytes::split_number;

/// A text that is not a bandwidth.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("'{0}' is not a bandwidth (give a number and a unit such as 68GB/s, 500MB/s, 25GiB/s or 400Gbit/s)")]
pub(crate) struct RateError(pub String);

/// Parses a bandwidth into bytes per second. Decimal prefixes (k, M, G, T)
/// on B (bytes) or b/bit (bits), binary ones on iB; "/s" or "ps" optional.
/// The unit is required: a bare number is ambiguous.
pub(crate) fn parse_rate(text: &str) -> Result<f64, RateError> {
    let bad = || RateError(text.to_string());
    let (_, value, unit) = split_number(text).ok_or_else(bad)?;
    let unit = unit.strip_suffix("/s").or_else(|| unit.strip_suffix("ps")).unwrap_or(unit);
    let (prefix, rest) = match unit.chars().next() {
        Some(c @ ('k' | 'K' | 'm' | 'M' | 'g' | 'G' | 't' | 'T')) => (Some(c.to_ascii_uppercase()), &unit[1..]),
        _ => (None, unit),
    };
    let power = |base: f64| match prefix {
        None => 1.0,
        Some('K') => base,
        Some('M') => base.powi(2),
        Some('G') => base.powi(3),
        _ => base.powi(4),
    };
    let bytes_per_s = match rest {
        "B" => value * power(1e3),
        "iB" if prefix.is_some() => value * power(1024.0),
        "b" | "bit" => value * power(1e3) / 8.0,
        _ => return Err(bad()),
    };
    if bytes_per_s <= 0.0 {
        return Err(bad());
    }
    Ok(bytes_per_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("68GB/s"), Ok(68e9));
        assert_eq!(parse_rate("68 GB/s"), Ok(68e9));
        assert_eq!(parse_rate("500MB/s"), Ok(500e6));
        assert_eq!(parse_rate("1kB/s"), Ok(1e3));
        assert_eq!(parse_rate("2GiB/s"), Ok(2.0 * 1024.0 * 1024.0 * 1024.0));
        assert_eq!(parse_rate("400Gbit/s"), Ok(50e9));
        assert_eq!(parse_rate("400Gb/s"), Ok(50e9));
        assert_eq!(parse_rate("400Gbps"), Ok(50e9));
        assert_eq!(parse_rate("1e3MB/s"), Ok(1e9));
        assert_eq!(parse_rate("100B/s"), Ok(100.0));
        for bad in ["68", "68GB/h", "0GB/s", "-1GB/s", "GB/s", "68XB/s", "68iB/s"] {
            assert_eq!(parse_rate(bad), Err(RateError(bad.to_string())), "{bad}");
        }
        assert_eq!(
            RateError("68".into()).to_string(),
            "'68' is not a bandwidth (give a number and a unit such as 68GB/s, 500MB/s, 25GiB/s or 400Gbit/s)"
        );
    }
}
