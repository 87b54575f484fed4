//! Reading a hostfile in either common format, Open MPI's (`node01 slots=64`)
//! or MPICH hydra's (`node01:64`), or a bare host per line: the suite only
//! needs the hosts in order (to count nodes and to name them to srun) and
//! their slot counts (for the summary).

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::SuiteError;

/// Why hostfile text names no usable hosts.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HostfileError {
    #[error("line {line}: no host name")]
    NoHostName { line: usize },
    #[error("line {line}: bad slot count '{value}'")]
    BadSlots { line: usize, value: String },
    #[error("no hosts in it")]
    Empty,
}

/// One host line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostEntry {
    pub host: String,
    pub slots: Option<usize>,
}

/// Parses hostfile text. Blank lines and `#` comments are skipped; a host
/// named twice counts once (its slots add up).
pub fn parse(text: &str) -> Result<Vec<HostEntry>, HostfileError> {
    let mut hosts: Vec<HostEntry> = Vec::new();
    // Where each host is in `hosts`: linear in the file, however many hosts.
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        let (host, mut slots) = match first.split_once(':') {
            Some((h, s)) => (h, Some(parse_slots(s, n + 1)?)),
            None => (first, None),
        };
        for w in words {
            if let Some(v) = w.strip_prefix("slots=") {
                slots = Some(parse_slots(v, n + 1)?);
            }
        }
        if host.is_empty() {
            return Err(HostfileError::NoHostName { line: n + 1 });
        }
        match index.get(host) {
            Some(&i) => hosts[i].slots = add(hosts[i].slots, slots),
            None => {
                index.insert(host.to_string(), hosts.len());
                hosts.push(HostEntry { host: host.to_string(), slots });
            }
        }
    }
    if hosts.is_empty() {
        return Err(HostfileError::Empty);
    }
    Ok(hosts)
}

fn add(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        // Each count is bounded; a host named again and again saturates.
        (Some(a), Some(b)) => Some(a.saturating_add(b).min(super::options::MAX_RANKS)),
        (a, b) => a.or(b),
    }
}

fn parse_slots(v: &str, line: usize) -> Result<usize, HostfileError> {
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|&s| s > 0 && s <= super::options::MAX_RANKS)
        .ok_or_else(|| HostfileError::BadSlots { line, value: v.into() })
}

/// Reads and parses a hostfile.
pub fn read(path: &Path) -> Result<Vec<HostEntry>, SuiteError> {
    let bad = |reason: String| SuiteError::Hostfile { path: PathBuf::from(path), reason };
    let text = crate::input_file::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    parse(&text).map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(host: &str, slots: Option<usize>) -> HostEntry {
        HostEntry { host: host.into(), slots }
    }

    #[test]
    fn open_mpi_format() {
        let h = parse("# two nodes\nnode01 slots=64\nnode02 slots=64 max_slots=64\n\n").unwrap();
        assert_eq!(h, vec![e("node01", Some(64)), e("node02", Some(64))]);
    }

    #[test]
    fn mpich_format_and_bare_hosts() {
        assert_eq!(
            parse("node01:64\nnode02:32  # half\n").unwrap(),
            vec![e("node01", Some(64)), e("node02", Some(32))]
        );
        assert_eq!(parse("a\nb\na\n").unwrap(), vec![e("a", None), e("b", None)]);
        assert_eq!(parse("a:2\na:2\n").unwrap(), vec![e("a", Some(4))]);
    }

    #[test]
    fn bad_files() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(err("# nothing\n"), "no hosts in it");
        assert_eq!(err("n1:x\n"), "line 1: bad slot count 'x'");
        assert_eq!(err("a\nn1 slots=0\n"), "line 2: bad slot count '0'");
        // Found by scripts/fuzz.sh: slot counts that overflowed when added.
        assert_eq!(err("n1:18446744073709551615\n"), "line 1: bad slot count '18446744073709551615'");
        let many = "n1:1048576\n".repeat(3);
        assert_eq!(parse(&many).unwrap(), vec![e("n1", Some(1 << 20))]);
        assert_eq!(err(":4\n"), "line 1: no host name");
    }
}
