//! Reading a hostfile in either common format, Open MPI's (`node01 slots=64`)
//! or MPICH hydra's (`node01:64`), or a bare host per line: the suite only
//! needs the hosts in order (to count nodes and to name them to srun) and
//! their slot counts (for the summary). Also what a host name may be
//! ([`check_host_name`]), for every host the suite and locate hand on.

use std::path::{Path, PathBuf};

use thiserror::Error;

/// Why hostfile text names no usable hosts.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HostfileError {
    #[error("line {line}: no host name")]
    NoHostName { line: usize },
    #[error("line {line}: bad slot count '{value}'")]
    BadSlots { line: usize, value: String },
    #[error("line {line}: {reason}")]
    BadHost { line: usize, reason: String },
    #[error("no hosts in it")]
    Empty,
}

/// The longest host name taken (DNS's limit on a whole name).
pub(crate) const MAX_HOST_NAME: usize = 253;
/// The longest label (the part between dots) of a host name.
pub(crate) const MAX_LABEL: usize = 63;

/// Whether `name` is a host name that can be handed to a launcher (and,
/// through it, to ssh or srun) as one: an IPv4 or IPv6 address, or
/// letters, digits, `-`, `_` and `.` in dot-separated labels of 1 to 63
/// characters, 253 at most in all, not starting with `-` or `.` (a
/// leading `-` would reach ssh as an option). The error is one sentence
/// naming the name, escaped for a terminal.
pub(crate) fn check_host_name(name: &str) -> Result<(), String> {
    if name.parse::<std::net::IpAddr>().is_ok() {
        return Ok(());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let why = if name.is_empty() {
        Some("it is empty".to_string())
    } else if name.len() > MAX_HOST_NAME {
        Some(format!("longer than {MAX_HOST_NAME} characters"))
    } else if name.starts_with('-') || name.starts_with('.') {
        Some("it starts with '-' or '.'".to_string())
    } else if !name.chars().all(allowed) {
        Some("only letters, digits, '-', '_' and '.' are taken, or an IP address".to_string())
    } else if name.split('.').any(|l| l.is_empty() || l.len() > MAX_LABEL) {
        Some(format!("each part between dots must have 1 to {MAX_LABEL} characters"))
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(w) => {
            let shown: String = name.chars().take(80).collect();
            let more = if shown.len() < name.len() { "..." } else { "" };
            Err(format!("'{}{more}' is not a host name: {w}", crate::diag::printable(&shown)))
        }
    }
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
            // An IPv6 address is a host, not MPICH's `host:slots`.
            _ if first.parse::<std::net::Ipv6Addr>().is_ok() => (first, None),
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
        check_host_name(host).map_err(|reason| HostfileError::BadHost { line: n + 1, reason })?;
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
        (Some(a), Some(b)) => Some(a.saturating_add(b).min(super::MAX_RANKS)),
        (a, b) => a.or(b),
    }
}

fn parse_slots(v: &str, line: usize) -> Result<usize, HostfileError> {
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|&s| s > 0 && s <= super::MAX_RANKS)
        .ok_or_else(|| HostfileError::BadSlots { line, value: v.into() })
}

/// A hostfile that could not be read, or names no usable hosts (bad usage:
/// exit 2 where a command says so).
#[derive(Debug, Error)]
#[error("cannot read hostfile '{path}': {reason}")]
pub struct ReadError {
    pub path: PathBuf,
    pub reason: String,
}

/// Reads and parses a hostfile.
pub fn read(path: &Path) -> Result<Vec<HostEntry>, ReadError> {
    let bad = |reason: String| ReadError { path: PathBuf::from(path), reason };
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

    /// A host that is no host name (an ssh option, a shell word, a
    /// control character) is refused with its line, escaped.
    #[test]
    fn hosts_that_are_not_host_names() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(
            err("n1\n-oProxyCommand=sh slots=2\n"),
            "line 2: '-oProxyCommand=sh' is not a host name: it starts with '-' or '.'"
        );
        assert_eq!(
            err("a$(reboot)\n"),
            "line 1: 'a$(reboot)' is not a host name: only letters, digits, '-', '_' and '.' are taken, or an IP address"
        );
        assert!(
            err("a\u{1b}[2J:2\n").starts_with("line 1: 'a\\u{1b}[2J' is not a host name"),
            "{}",
            err("a\u{1b}[2J\n")
        );
        assert_eq!(
            parse("fe80::1 slots=2\n10.0.0.1:4\n").unwrap(),
            vec![e("fe80::1", Some(2)), e("10.0.0.1", Some(4))]
        );
    }

    #[test]
    fn host_name_rules() {
        for good in ["node01", "n-1.cluster.example", "gpu_node7", "10.1.2.3", "::1", "fe80::1", &"a".repeat(63)] {
            assert_eq!(check_host_name(good), Ok(()), "{good}");
        }
        let label = "a".repeat(63);
        let long = [label.as_str(); 4].join(".");
        assert_eq!(long.len(), 255);
        for bad in ["", "-x", ".x", "a..b", "a.", "a b", "a,b", "a/b", "a:b", &"a".repeat(64), &long] {
            assert!(check_host_name(bad).unwrap_err().contains("is not a host name"), "{bad}");
        }
        // A long name is shown cut, its length said.
        let e = check_host_name(&"x".repeat(300)).unwrap_err();
        assert!(e.starts_with(&format!("'{}...' is not a host name: longer than 253", "x".repeat(80))), "{e}");
    }
}
