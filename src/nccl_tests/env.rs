//! nccl-tests' environment variables, read as its binaries read them:
//! NCCL_TESTS_MIN_BW (the run's verdict), NCCL_TESTS_DEVICE (each
//! process's first GPU) and NCCL_TESTS_SPLIT / NCCL_TESTS_SPLIT_MASK
//! (which communicator each process joins). Pure: [`Environment::read`]
//! takes the lookup.

use crate::c_num::{atof, atoi, strtoul, trim_c_space};

/// nccl-tests' environment, as its binaries read it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Environment {
    /// `NCCL_TESTS_MIN_BW` through `atof`: the run fails when its average
    /// bus bandwidth is below 0.9 times this (GB/s); None when unset.
    pub min_bw: Option<f64>,
    /// `NCCL_TESTS_DEVICE` through `atoi`: the first GPU of this process
    /// (None when unset, or set to -1: each process starts at its local
    /// rank times its GPUs).
    pub first_device: Option<i32>,
    /// How each process finds its communicator's colour.
    pub split: Split,
}

pub use crate::options::Split;

/// nccl-tests' integer for NCCL_TESTS_SPLIT: white space, then `0b` and
/// binary digits, or C's base-0 integer (truncated to an `int`, as
/// nccl-tests stores it); None without a digit.
fn split_int(s: &str) -> Option<i32> {
    let t = trim_c_space(s);
    if t.is_empty() {
        return None;
    }
    let v = if t.len() >= 2 && t[..2].eq_ignore_ascii_case("0b") { strtoul(&t[2..], 2) } else { strtoul(t, 0) }?;
    Some(v as i32)
}

/// A [`Split`] from its number.
type MakeSplit = fn(i32) -> Split;

impl Environment {
    /// Reads the variables through `get` (the process's environment in
    /// the binaries). `Err` is the line for a split that cannot be made
    /// (a modulus or divisor of 0, where nccl-tests dies of a division by
    /// zero).
    pub fn read(get: impl Fn(&str) -> Option<String>) -> Result<Environment, String> {
        let min_bw = get("NCCL_TESTS_MIN_BW").map(|v| atof(&v));
        let first_device = get("NCCL_TESTS_DEVICE").map(|v| atoi(&v)).filter(|&d| d != -1);
        let split = if let Some(mask) = get("NCCL_TESTS_SPLIT_MASK") {
            Split::And(strtoul(&mask, 16).unwrap_or(0) as i32)
        } else if let Some(rule) = get("NCCL_TESTS_SPLIT") {
            let words: [(&str, MakeSplit); 8] = [
                ("AND", Split::And),
                ("&", Split::And),
                ("OR", Split::Or),
                ("|", Split::Or),
                ("MOD", Split::Mod),
                ("%", Split::Mod),
                ("DIV", Split::Div),
                ("/", Split::Div),
            ];
            let found = words.iter().find_map(|(word, make)| {
                let head = rule.get(..word.len())?;
                if !head.eq_ignore_ascii_case(word) {
                    return None;
                }
                split_int(&rule[word.len()..]).map(make)
            });
            match found {
                Some(Split::Mod(0) | Split::Div(0)) => {
                    return Err(format!("NCCL_TESTS_SPLIT={rule}: a modulus or divisor of 0 makes no communicators"));
                }
                Some(split) => split,
                None => Split::None,
            }
        } else {
            Split::None
        };
        Ok(Environment { min_bw, first_device, split })
    }

    /// Whether an average bus bandwidth of `busbw` GB/s fails
    /// `NCCL_TESTS_MIN_BW` (below 0.9 times it).
    pub fn below_min_bw(&self, busbw: f64) -> bool {
        self.min_bw.is_some_and(|min| busbw < min * 0.9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_as_nccl_tests_reads_it() {
        let read = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            Environment::read(|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
        };
        assert_eq!(read(&[]).unwrap(), Environment::default());
        let e = read(&[("NCCL_TESTS_MIN_BW", "100")]).unwrap();
        assert!(e.below_min_bw(89.9) && !e.below_min_bw(90.0));
        let e = read(&[("NCCL_TESTS_MIN_BW", "fast")]).unwrap();
        assert_eq!(e.min_bw, Some(0.0));
        assert!(!e.below_min_bw(0.0));
        assert_eq!(read(&[("NCCL_TESTS_DEVICE", "2")]).unwrap().first_device, Some(2));
        assert_eq!(read(&[("NCCL_TESTS_DEVICE", "-1")]).unwrap().first_device, None);
        assert_eq!(read(&[("NCCL_TESTS_DEVICE", "gpu")]).unwrap().first_device, Some(0));
        let colors = |split: Split| (0..8).map(|p| split.color(p)).collect::<Vec<_>>();
        for (vars, want) in [
            (vec![("NCCL_TESTS_SPLIT_MASK", "3")], Split::And(3)),
            (vec![("NCCL_TESTS_SPLIT_MASK", "0x10")], Split::And(16)),
            (vec![("NCCL_TESTS_SPLIT_MASK", "1"), ("NCCL_TESTS_SPLIT", "DIV 2")], Split::And(1)),
            (vec![("NCCL_TESTS_SPLIT", "AND 1")], Split::And(1)),
            (vec![("NCCL_TESTS_SPLIT", "&0b11")], Split::And(3)),
            (vec![("NCCL_TESTS_SPLIT", "or 4")], Split::Or(4)),
            (vec![("NCCL_TESTS_SPLIT", "|4")], Split::Or(4)),
            (vec![("NCCL_TESTS_SPLIT", "MOD 2")], Split::Mod(2)),
            (vec![("NCCL_TESTS_SPLIT", "%0x2")], Split::Mod(2)),
            (vec![("NCCL_TESTS_SPLIT", "div 4")], Split::Div(4)),
            (vec![("NCCL_TESTS_SPLIT", "/4")], Split::Div(4)),
            (vec![("NCCL_TESTS_SPLIT", "XOR 1")], Split::None),
            (vec![("NCCL_TESTS_SPLIT", "AND x")], Split::None),
        ] {
            assert_eq!(read(&vars).unwrap().split, want, "{vars:?}");
        }
        assert_eq!(colors(Split::Mod(2)), [0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(colors(Split::Div(4)), [0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(colors(Split::Or(4)), [4, 5, 6, 7, 4, 5, 6, 7]);
        assert_eq!(colors(Split::None), [0; 8]);
        // MPI_Comm_split by colour, world rank as the key: (place, size).
        assert_eq!(
            (0..6).map(|p| Split::Mod(2).group_of(p, 6)).collect::<Vec<_>>(),
            [(0, 3), (0, 3), (1, 3), (1, 3), (2, 3), (2, 3)]
        );
        assert_eq!(Split::Div(4).group_of(5, 6), (1, 2));
        assert_eq!(Split::None.group_of(3, 4), (3, 4));
        assert_eq!(Split::Mod(3).group_sizes(4), [2, 1, 1]);
        assert_eq!(Split::And(2).group_sizes(4), [2, 2]);
        assert_eq!((0..4).map(|p| Split::Or(4).group_index(p, 8)).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(
            (Split::Mod(3).words(), Split::And(16).words(), Split::None.words()),
            ("MOD 3".into(), "AND 16".into(), String::new())
        );
        assert_eq!(
            read(&[("NCCL_TESTS_SPLIT", "MOD 0")]).unwrap_err(),
            "NCCL_TESTS_SPLIT=MOD 0: a modulus or divisor of 0 makes no communicators"
        );
    }
}
