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
pub fn write_once(text: &str) {
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
/// an unanchored `(\d+)\s+([\d.]+)`, cannot match it: wherever a digit is
/// followed by white space and then a digit or a dot, a comma goes after
/// the digit ("ranks 2 3" becomes "ranks 2, 3"). Used for the warnings a
/// successful run may print among the OSU table's rows.
pub fn row_safe(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len() + 4);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        out.push(c);
        if c.is_ascii_digit() {
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if j > i + 1 && j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                out.push(',');
            }
        }
        i += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_safe_breaks_the_loose_row_pattern() {
        for line in [
            "ranks 2 3 share core 4",
            "host has 2 cores for 4 ranks . see",
            "size 8\t1.5",
            "8                       0.34",
            "ends with 7 .",
            "no digits at all",
            "9",
        ] {
            let safe = row_safe(line);
            assert!(!looks_like_row(&safe), "{line:?} -> {safe:?}");
        }
        assert_eq!(row_safe("ranks 2 3 share"), "ranks 2, 3 share");
        assert_eq!(row_safe("2 cores for 4 ranks"), "2 cores for 4 ranks");
        assert!(looks_like_row("8                       0.34"));
        assert!(looks_like_row("x 12 .5"));
        assert!(!looks_like_row("0<->1 and 2-3"));
    }
}
