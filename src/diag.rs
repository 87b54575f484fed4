//! Diagnostic lines on stderr. Every line is written with one `write`
//! call, so that a launcher merging many ranks' streams (mpirun, srun,
//! Slurm's `slurm-%j.out`) never splits a line or glues it to its own
//! banners; `eprintln!` may issue several writes for one line.
//!
//! Lines printed on a run that succeeds are also kept free of anything an
//! OSU output parser could take for a data row (see [`row_safe`]).

use std::io::{self, Write};

/// Writes `line` and a newline on stderr with a single write.
pub fn say(line: &str) {
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    write_once(&text);
}

/// Writes `text` (already ending in a newline, possibly several lines) on
/// stderr with a single write.
pub(crate) fn write_once(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// `say!("fmt", args...)`: format, then [`say`] in one write.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::diag::say(&format!($($arg)*))
    };
}

/// `line` rewritten so that the loose row pattern older OSU harnesses use,
/// an unanchored `(\d+)\s+([\d.]+)` applied line by line or to the whole
/// merged output (where `\s` also matches a newline), cannot match it or
/// reach across it into a neighbouring row: wherever a digit is followed
/// by white space and then a digit or a dot, a comma goes after the digit
/// ("ranks 2 3" becomes "ranks 2, 3"); a line that would end in a digit
/// ends with a full stop; and one that would start with a digit or a dot
/// starts with "# ". Used for the warnings a successful run may print among
/// the OSU table's rows.
pub(crate) fn row_safe(line: &str) -> String {
    let chars: Vec<char> = line.trim_end().chars().collect();
    let mut out = String::with_capacity(line.len() + 4);
    if chars.first().is_some_and(|c| c.is_ascii_digit() || *c == '.') {
        out.push_str("# ");
    }
    for (i, &c) in chars.iter().enumerate() {
        out.push(c);
        if c.is_ascii_digit() {
            let next = chars[i + 1..].iter().position(|c| !c.is_whitespace()).map(|p| i + 1 + p);
            if let Some(j) = next.filter(|&j| j > i + 1) {
                if chars[j].is_ascii_digit() || chars[j] == '.' {
                    out.push(',');
                }
            }
        }
    }
    if chars.last().is_some_and(|c| c.is_ascii_digit()) {
        out.push('.');
    }
    out
}

/// Whether `line` holds a match of `(\d+)\s+([\d.]+)` (the loose row
/// pattern) anywhere.
pub fn looks_like_row(line: &str) -> bool {
    let b = line.as_bytes();
    (0..b.len()).any(|i| {
        if !b[i].is_ascii_digit() {
            return false;
        }
        let mut j = i + 1;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        j > i + 1 && j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.')
    })
}

/// Untrusted text (a benchmark name read from a CSV, a host name, an
/// option value from a stored run) made safe to print on a terminal: every
/// control character (C0, DEL, C1) and every character that reorders or
/// hides text (the bidirectional overrides and isolates, zero-width
/// characters) is written as a Rust-style escape (`\u{1b}`); everything
/// else, backslashes and non-ASCII letters included, prints as it is.
/// Text that needs none of this comes back borrowed and unchanged.
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(acts_on_terminal) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts_on_terminal(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether [`printable`] escapes `c`: a control character (C0, DEL, C1)
/// or one that reorders or hides text.
pub fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// [`say`] for a line holding untrusted text: written as [`printable`]
/// makes it, so one line stays one line and nothing in it reaches the
/// terminal as a control.
pub(crate) fn say_printable(line: &str) {
    say(&printable(line));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_what_a_terminal_would_act_on() {
        assert!(matches!(printable("osu_latency"), std::borrow::Cow::Borrowed("osu_latency")));
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(printable("x\ny\rz\t"), "x\\u{a}y\\u{d}z\\u{9}");
        assert_eq!(printable("\u{9b}31m \u{7f}"), "\\u{9b}31m \\u{7f}");
        assert_eq!(printable("ab\u{202e}cd\u{200b}"), "ab\\u{202e}cd\\u{200b}");
        assert!(matches!(printable("a\\b"), std::borrow::Cow::Borrowed("a\\b")));
        assert_eq!(printable("héllo wörld 東京"), "héllo wörld 東京");
    }

    #[test]
    fn row_safe_breaks_the_loose_row_pattern() {
        let lines = [
            "ranks 2 3 share core 4",
            "host has 2 cores for 4 ranks . see",
            "size 8\t1.5",
            "8                       0.34",
            "ends with 7 .",
            ".5 starts with a dot",
            "no digits at all",
            "9",
        ];
        for line in lines {
            let safe = row_safe(line);
            assert!(!looks_like_row(&safe), "{line:?} -> {safe:?}");
            // Nor across the line ends, between two table rows.
            let merged = format!("8    0.25\n{safe}\n16   0.27\n");
            let rows: Vec<&str> = merged.lines().filter(|l| looks_like_row(l)).collect();
            assert_eq!(rows, ["8    0.25", "16   0.27"]);
            assert_eq!(loose_matches(&merged), [("8", "0.25"), ("16", "0.27")], "{merged:?}");
        }
        assert_eq!(row_safe("ranks 2 3 share"), "ranks 2, 3 share");
        assert_eq!(row_safe("on 2 cores for 4 ranks"), "on 2 cores for 4 ranks");
        assert_eq!(row_safe("on core 0"), "on core 0.");
        assert_eq!(row_safe("9 ranks"), "# 9 ranks");
        assert!(looks_like_row("8                       0.34"));
        assert!(looks_like_row("x 12 .5"));
        assert!(!looks_like_row("0<->1 and 2-3"));
    }

    /// Every match of the loose row pattern in `text`, as harnesses find
    /// them.
    fn loose_matches(text: &str) -> Vec<(&str, &str)> {
        let re = regex::Regex::new(r"(\d+)\s+([\d.]+)").unwrap();
        re.captures_iter(text).map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str())).collect()
    }
}
