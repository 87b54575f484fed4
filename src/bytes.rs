//! Byte sizes: the one grammar for reading them from a command line
//! (`64MB`, `1.5K`, `4 KiB`, `8`) and the three ways they are written
//! (`1.5 KiB` for amounts of memory, `64 KiB` / `1536 B` for message sizes,
//! `64K` on chart axes).
//!
//! Every multiple is binary: K, KB and KiB are all 1024 bytes, as in OSU's
//! `-m 8M` and the HCCL demo's `--size 64m`. Callers decide which sizes are
//! allowed (a message needs at least one byte and fits a C `int`; a size
//! range of `commbench compare` may start at 0) and word their own errors.
//!
//! The OSU binaries' option words (`-m 1K:4M`, `-M`, `-i` ...) are not read
//! here: they keep OSU's stricter form, digits with one optional K, M or G
//! letter (`cli::options::parse_count`), so that `-m 64KB` or `-m 1.5K`
//! stay errors there as they always were.

use thiserror::Error;

/// Why a text is not a byte size.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub(crate) enum ParseSizeError {
    /// No number, an unknown unit, or a fraction of a byte.
    #[error(
        "'{0}' is not a byte size (a number with an optional B, K, KB, KiB, M, MB, MiB, G, GB or GiB; all binary)"
    )]
    Malformed(String),
    /// A size below 0 or above `u64::MAX` bytes.
    #[error("size '{0}' is out of range (0 to 18446744073709551615 bytes)")]
    OutOfRange(String),
}

/// Reads a byte size.
///
/// Grammar, after surrounding spaces are dropped: a number, optional spaces,
/// then an optional unit, case-insensitive: none or `B` (bytes), `K`, `KB`,
/// `KiB` (2^10), `M`, `MB`, `MiB` (2^20), `G`, `GB`, `GiB` (2^30).
///
/// The number is the longest leading text that reads as a finite decimal
/// number: digits with an optional sign, point and exponent (`64`, `+8`,
/// `1.5`, `.5`, `1e3`). Whole numbers are read exactly, however large; a
/// number with a point or an exponent is read as a 64-bit float, and the
/// size it gives must be a whole number of bytes (`1.5K` is 1536, `1.3` is
/// malformed). A negative size is out of range (`-0` is 0).
pub(crate) fn parse_size(text: &str) -> Result<u64, ParseSizeError> {
    let malformed = || ParseSizeError::Malformed(text.to_string());
    let out_of_range = || ParseSizeError::OutOfRange(text.to_string());
    let (number, value, unit) = split_number(text).ok_or_else(malformed)?;
    let shift: u32 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(malformed()),
    };
    let digits = number.strip_prefix('+').unwrap_or(number);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits.parse::<u64>().ok().and_then(|n| n.checked_mul(1 << shift)).ok_or_else(out_of_range);
    }
    let bytes = value * (1u64 << shift) as f64;
    if bytes.fract() != 0.0 {
        return Err(malformed());
    }
    // 2^64 is the first float above u64::MAX; -0 is 0.
    if !(0.0..18_446_744_073_709_551_616.0).contains(&bytes) {
        return Err(out_of_range());
    }
    Ok(bytes as u64)
}

/// Splits " 64 MB " into ("64", 64.0, "MB"): the longest leading text that
/// reads as a finite number, its value, and the rest without surrounding
/// spaces. `matrix::units` reads bandwidths and `pairs::units` times with
/// it too.
pub(crate) fn split_number(text: &str) -> Option<(&str, f64, &str)> {
    let t = text.trim();
    let mut ends: Vec<usize> = t.char_indices().map(|(i, _)| i).skip(1).collect();
    ends.push(t.len());
    ends.into_iter().rev().find_map(|end| {
        let head = &t[..end];
        // Rust also reads "inf" and "nan"; a number starts with a digit,
        // a sign or a point.
        let numeric = head.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'));
        let value: f64 = head.parse().ok().filter(|v: &f64| v.is_finite() && numeric)?;
        Some((head, value, t[end..].trim()))
    })
}

/// The binary multiples a size is written in, largest first.
const MULTIPLES: [(u32, &str, &str); 3] = [(30, "GiB", "G"), (20, "MiB", "M"), (10, "KiB", "K")];

/// `bytes` as a whole number of the largest multiple that divides it
/// exactly: (count, "KiB", "K"), or (bytes, "B", "") when none does.
fn whole_multiple(bytes: u64) -> (u64, &'static str, &'static str) {
    MULTIPLES
        .into_iter()
        .find(|&(shift, ..)| bytes >= 1 << shift && bytes % (1 << shift) == 0)
        .map_or((bytes, "B", ""), |(shift, unit, letter)| (bytes >> shift, unit, letter))
}

/// A message size as people write it: `64 KiB`, `4 MiB`, `8 B`; a size
/// that is no whole multiple stays in bytes (`1536 B`).
pub(crate) fn exact_label(bytes: u64) -> String {
    let (count, unit, _) = whole_multiple(bytes);
    format!("{count} {unit}")
}

/// The short form of [`exact_label`] for chart axes: `1`, `512`, `1K`,
/// `64K`, `4M`, `1G`, `3000`. It reads back through [`parse_size`].
pub(crate) fn compact_label(bytes: u64) -> String {
    let (count, _, letter) = whole_multiple(bytes);
    format!("{count}{letter}")
}

/// An amount of memory with one decimal: `512 B`, `1.5 KiB`, `128.0 GiB`.
pub(crate) fn human_bytes(bytes: u128) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn malformed(text: &str) -> bool {
        matches!(parse_size(text), Err(ParseSizeError::Malformed(_)))
    }

    fn out_of_range(text: &str) -> bool {
        matches!(parse_size(text), Err(ParseSizeError::OutOfRange(_)))
    }

    #[test]
    fn every_multiple_is_binary() {
        for (text, want) in [
            ("8", 8),
            ("8B", 8),
            ("8b", 8),
            ("8K", 8 << 10),
            ("8k", 8 << 10),
            ("8KB", 8 << 10),
            ("8kib", 8 << 10),
            ("64M", 64 << 20),
            ("64m", 64 << 20),
            ("64MB", 64 << 20),
            ("64MiB", 64 << 20),
            ("2G", 2 << 30),
            ("1GB", 1 << 30),
            ("1GiB", 1 << 30),
        ] {
            assert_eq!(parse_size(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn spaces_signs_points_and_exponents() {
        assert_eq!(parse_size(" 4 KB "), Ok(4096));
        assert_eq!(parse_size("+8"), Ok(8));
        assert_eq!(parse_size("+8K"), Ok(8192));
        assert_eq!(parse_size("0008"), Ok(8));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        assert_eq!(parse_size(".5K"), Ok(512));
        assert_eq!(parse_size("8."), Ok(8));
        assert_eq!(parse_size("1e3"), Ok(1000));
        assert_eq!(parse_size("1E3K"), Ok(1000 << 10));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("-0"), Ok(0));
    }

    #[test]
    fn whole_numbers_are_exact_however_large() {
        assert_eq!(parse_size("9007199254740993"), Ok(9_007_199_254_740_993));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_size("17179869183G"), Ok(17_179_869_183 << 30));
        assert!(out_of_range("18446744073709551616"));
        assert!(out_of_range("17179869184G"));
        assert!(out_of_range("1e20"));
        assert!(out_of_range("-4"));
        assert!(out_of_range("-0.5K"));
    }

    #[test]
    fn what_is_not_a_size() {
        for text in ["", " ", "K", "x", "64XB", "64 K B", "8KiBs", "1.3", "-1.5", "0.1K", "0x10", "inf", "nan", "1 0"] {
            assert!(malformed(text), "{text}");
        }
        assert_eq!(
            parse_size("64XB").unwrap_err().to_string(),
            "'64XB' is not a byte size (a number with an optional B, K, KB, KiB, M, MB, MiB, G, GB or GiB; all binary)"
        );
        assert_eq!(
            parse_size("-4").unwrap_err().to_string(),
            "size '-4' is out of range (0 to 18446744073709551615 bytes)"
        );
    }

    #[test]
    fn labels() {
        assert_eq!(exact_label(8), "8 B");
        assert_eq!(exact_label(0), "0 B");
        assert_eq!(exact_label(1000), "1000 B");
        assert_eq!(exact_label(1024), "1 KiB");
        assert_eq!(exact_label(1536), "1536 B");
        assert_eq!(exact_label(3 << 10), "3 KiB");
        assert_eq!(exact_label(65536), "64 KiB");
        assert_eq!(exact_label(64 << 20), "64 MiB");
        assert_eq!(exact_label(3 << 30), "3 GiB");
        let compact: Vec<String> =
            [0, 1, 64, 512, 1024, 65536, 1 << 20, 4 << 20, 1 << 30, 3000].map(compact_label).to_vec();
        assert_eq!(compact, ["0", "1", "64", "512", "1K", "64K", "1M", "4M", "1G", "3000"]);
    }

    #[test]
    fn compact_labels_read_back() {
        for b in [0, 1, 7, 1000, 1024, 1536, 3 << 10, 65536, 5 << 20, 1 << 30, 17 << 30, u64::MAX] {
            assert_eq!(parse_size(&compact_label(b)), Ok(b), "{b}");
        }
    }

    #[test]
    fn amounts_of_memory() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.0 KiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(128 << 30), "128.0 GiB");
        assert_eq!(human_bytes(3 << 50), "3.0 PiB");
        assert_eq!(human_bytes(4096 << 50), "4096.0 PiB");
    }
}
