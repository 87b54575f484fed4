//! The CUDA samples' command-line grammar, as bandwidthTest and
//! p2pBandwidthLatencyTest read it: no parser, but questions asked of the
//! whole argument list. Each argument loses its leading dashes (any
//! number, unless one character or none would remain); a flag is there
//! when an argument's name (up to any `=`) equals it, letter case aside;
//! a value belongs to the last argument that starts with the name: an
//! integer after one optional `=`, read by C's `atoi`, and a string from
//! the character after the name's (whatever that character is). Nothing
//! is ever refused as unknown.

use crate::c_num::atoi;

/// The flags bandwidthTest asks about.
const FLAGS: [&str; 9] = ["help", "csv", "htod", "dtoh", "dtod", "wc", "cputiming", "start", "end"];
/// The names it reads a value of (`increment` is also asked as a flag),
/// and commbench's own `min-efficiency`.
const VALUES: [&str; 7] = ["memory", "device", "mode", "start", "end", "increment", "min-efficiency"];

/// The command line, without the program's name.
pub(crate) struct Args<'a>(Vec<&'a [u8]>);

impl<'a> Args<'a> {
    pub(crate) fn new(args: &'a [String]) -> Self {
        Args(args.iter().map(|a| strip_dashes(a.as_bytes())).collect())
    }

    /// Whether some argument is flag `name`.
    pub(crate) fn flag(&self, name: &str) -> bool {
        self.0.iter().any(|a| {
            let named = a.iter().position(|&c| c == b'=').map_or(*a, |eq| &a[..eq]);
            named.eq_ignore_ascii_case(name.as_bytes())
        })
    }

    /// Whether the sample reads anything from these arguments: one of
    /// its flags, or a name it reads a value of.
    pub(crate) fn reads_something(&self) -> bool {
        FLAGS.iter().any(|f| self.flag(f)) || VALUES.iter().any(|v| self.last_starting(v).is_some())
    }

    /// The last argument starting with `name`, past the name.
    fn last_starting(&self, name: &str) -> Option<&'a [u8]> {
        let n = name.len();
        self.0.iter().rev().find(|a| a.len() >= n && a[..n].eq_ignore_ascii_case(name.as_bytes())).map(|a| &a[n..])
    }

    /// The integer value of `name`: 0 where no argument starts with it
    /// or nothing follows the name.
    pub(crate) fn int(&self, name: &str) -> i32 {
        match self.last_starting(name) {
            Some(rest) if !rest.is_empty() => {
                let rest = rest.strip_prefix(b"=").unwrap_or(rest);
                atoi(&String::from_utf8_lossy(rest))
            }
            _ => 0,
        }
    }

    /// The string value of `name`: what follows the character after the
    /// name (empty where nothing does).
    pub(crate) fn string(&self, name: &str) -> Option<String> {
        self.last_starting(name).map(|rest| String::from_utf8_lossy(rest.get(1..).unwrap_or_default()).into_owned())
    }
}

/// An argument without its leading dashes, unless one character or none
/// would be left.
fn strip_dashes(a: &[u8]) -> &[u8] {
    let dashes = a.iter().take_while(|&&c| c == b'-').count();
    if dashes + 1 >= a.len() {
        a
    } else {
        &a[dashes..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn flags_match_whole_names_in_any_case_with_any_dashes() {
        let a = args(&["--HtoD", "csv", "---wc=1", "--dtodx", "-"]);
        let a = Args::new(&a);
        assert!(a.flag("htod") && a.flag("csv") && a.flag("wc"));
        assert!(!a.flag("dtod") && !a.flag("dtoh"));
    }

    #[test]
    fn values_come_from_the_last_argument_starting_with_the_name() {
        let a = args(&[
            "--start=1000",
            "--START=2048",
            "--end",
            "--increment=12abc",
            "--memory=pinned",
            "--Memory:pageable",
        ]);
        let a = Args::new(&a);
        assert_eq!(a.int("start"), 2048);
        // Nothing after the name: 0; atoi stops at the first non-digit.
        assert_eq!(a.int("end"), 0);
        assert_eq!(a.int("increment"), 12);
        assert_eq!(a.int("absent"), 0);
        // Any one character separates a string from its name.
        assert_eq!(a.string("memory").as_deref(), Some("pageable"));
        assert_eq!(a.string("mode"), None);
        let bare = args(&["--device"]);
        assert_eq!(Args::new(&bare).string("device").as_deref(), Some(""));
        // A prefix is enough for a value: "--startx=5" is start's "x=5".
        let prefixed = args(&["--startx=5"]);
        assert_eq!(Args::new(&prefixed).int("start"), 0);
        assert!(!Args::new(&prefixed).flag("start"));
    }

    /// A lone dash, or a dash before one character, keeps its dashes.
    #[test]
    fn short_arguments_keep_their_dashes() {
        assert_eq!(strip_dashes(b"-x"), b"-x");
        assert_eq!(strip_dashes(b"--x"), b"--x");
        assert_eq!(strip_dashes(b"--xy"), b"xy");
        assert_eq!(strip_dashes(b""), b"");
    }
}
