//! CPU sets as sorted lists of OS cpu numbers, and the compact list notation
//! ("0-3,8,10-11") used on the command line, in reports and in the run
//! record.

use thiserror::Error;

/// Why a cpu list does not parse.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CpuListError {
    #[error("empty list")]
    Empty,
    #[error("'{0}' is not a cpu number or range")]
    NotACpu(String),
    #[error("range '{0}' runs backwards")]
    Backwards(String),
    #[error("range '{0}' is too long")]
    TooLong(String),
    #[error("cpu {0} is listed twice")]
    Twice(usize),
}

/// Formats ascending CPU numbers as a range list.
pub(crate) fn format_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        parts.push(if start == end { format!("{start}") } else { format!("{start}-{end}") });
        i += 1;
    }
    parts.join(",")
}

/// Parses "0-3,8,10-11" into the listed numbers, in the order written
/// (ranges ascending). Duplicates are an error: a list names each cpu once.
pub(crate) fn parse_list(text: &str) -> Result<Vec<usize>, CpuListError> {
    let mut out: Vec<usize> = Vec::new();
    if text.trim().is_empty() {
        return Err(CpuListError::Empty);
    }
    for part in text.split(',') {
        let part = part.trim();
        let num = |s: &str| s.trim().parse::<usize>().map_err(|_| CpuListError::NotACpu(part.to_string()));
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let n = num(part)?;
                (n, n)
            }
        };
        if b < a {
            return Err(CpuListError::Backwards(part.to_string()));
        }
        if b - a >= 1 << 16 {
            return Err(CpuListError::TooLong(part.to_string()));
        }
        for c in a..=b {
            if out.contains(&c) {
                return Err(CpuListError::Twice(c));
            }
            out.push(c);
        }
    }
    Ok(out)
}

/// Sorted, deduplicated copy.
pub(crate) fn normalized(cpus: &[usize]) -> Vec<usize> {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// Whether every cpu of `inner` is in `outer` (both sorted).
pub(crate) fn is_subset(inner: &[usize], outer: &[usize]) -> bool {
    inner.iter().all(|c| outer.binary_search(c).is_ok())
}

/// Whether the sorted sets share a cpu.
pub(crate) fn intersects(a: &[usize], b: &[usize]) -> bool {
    a.iter().any(|c| b.binary_search(c).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(format_list(&[]), "");
        assert_eq!(format_list(&[0]), "0");
        assert_eq!(format_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_list(&[1, 3, 5]), "1,3,5");
    }

    #[test]
    fn parse_round_trip_and_errors() {
        assert_eq!(parse_list("80").unwrap(), vec![80]);
        assert_eq!(parse_list("0-3,8, 10-11").unwrap(), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_list("5,1").unwrap(), vec![5, 1]);
        assert_eq!(format_list(&normalized(&parse_list("3,0-2").unwrap())), "0-3");
        let err = |text: &str| parse_list(text).unwrap_err().to_string();
        assert_eq!(err(""), "empty list");
        assert_eq!(err("x"), "'x' is not a cpu number or range");
        assert_eq!(err("3-1"), "range '3-1' runs backwards");
        assert_eq!(err("1,0-2"), "cpu 1 is listed twice");
        assert_eq!(err("0-99999999"), "range '0-99999999' is too long");
        assert!(parse_list("-1").is_err());
    }

    #[test]
    fn set_relations() {
        assert!(is_subset(&[1, 2], &[0, 1, 2]));
        assert!(!is_subset(&[1, 7], &[0, 1, 2]));
        assert!(intersects(&[1, 7], &[0, 1]));
        assert!(!intersects(&[2, 7], &[0, 1]));
    }
}
