//! CPU sets as sorted lists of OS cpu numbers, and the compact list notation
//! ("0-3,8,10-11") used on the command line, in reports and in the run
//! record.

/// Formats ascending CPU numbers as a range list.
pub fn format_list(cpus: &[usize]) -> String {
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
pub fn parse_list(text: &str) -> Result<Vec<usize>, String> {
    let mut out: Vec<usize> = Vec::new();
    if text.trim().is_empty() {
        return Err("empty list".into());
    }
    for part in text.split(',') {
        let part = part.trim();
        let num = |s: &str| s.trim().parse::<usize>().map_err(|_| format!("'{part}' is not a cpu number or range"));
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let n = num(part)?;
                (n, n)
            }
        };
        if b < a {
            return Err(format!("range '{part}' runs backwards"));
        }
        if b - a >= 1 << 16 {
            return Err(format!("range '{part}' is too long"));
        }
        for c in a..=b {
            if out.contains(&c) {
                return Err(format!("cpu {c} is listed twice"));
            }
            out.push(c);
        }
    }
    Ok(out)
}

/// Sorted, deduplicated copy.
pub fn normalized(cpus: &[usize]) -> Vec<usize> {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// Whether every cpu of `inner` is in `outer` (both sorted).
pub fn is_subset(inner: &[usize], outer: &[usize]) -> bool {
    inner.iter().all(|c| outer.binary_search(c).is_ok())
}

/// Whether the sorted sets share a cpu.
pub fn intersects(a: &[usize], b: &[usize]) -> bool {
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
        assert_eq!(parse_list("").unwrap_err(), "empty list");
        assert_eq!(parse_list("x").unwrap_err(), "'x' is not a cpu number or range");
        assert_eq!(parse_list("3-1").unwrap_err(), "range '3-1' runs backwards");
        assert_eq!(parse_list("1,0-2").unwrap_err(), "cpu 1 is listed twice");
        assert!(parse_list("0-99999999").is_err());
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
