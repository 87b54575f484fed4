//! nvbandwidth's command line, read as its option library (Boost's
//! program_options, default style) reads it: `-b 64`, `-b64`,
//! `--bufferSize 64`, `--bufferSize=64`, a long name shortened to any
//! prefix that names one option alone, switches grouped (`-sd`), `-t` and
//! `-p` taking every following word up to the next option (and adding up
//! when given again); words of no option ignored; and refused as it
//! refuses: an unknown option, a value that is not a number of the
//! option's type, an option given twice, a switch given a value. Checked
//! by hand against Boost 1.74's program_options with nvbandwidth's option
//! table. The help text is laid out as that
//! library lays it out (a first column as wide as the widest option,
//! descriptions wrapped at 80 columns).

use std::fmt;

/// Memcpy buffer size in MiB by default.
pub const DEFAULT_BUFFER_MIB: u64 = 512;
/// Timed samples per measurement by default.
pub const DEFAULT_SAMPLES: u32 = 3;
/// Copies per timed sample by default (the hidden `--loopCount`).
pub const DEFAULT_LOOPS: u64 = 16;

/// What a run was asked to do.
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    pub help: bool,
    pub list: bool,
    pub buffer_mib: u64,
    pub testcases: Vec<String>,
    pub prefixes: Vec<String>,
    pub verbose: bool,
    pub skip_verification: bool,
    pub disable_affinity: bool,
    pub samples: u32,
    pub use_mean: bool,
    pub json: bool,
    pub loops: u64,
    pub perf_formatter: bool,
    /// commbench's own `--min-efficiency PCT` (hidden, as the tool's
    /// `--loopCount` is): each judged cell's share of its path's peak.
    pub min_efficiency: Option<f64>,
}

impl Default for Args {
    fn default() -> Args {
        Args {
            help: false,
            list: false,
            buffer_mib: DEFAULT_BUFFER_MIB,
            testcases: Vec::new(),
            prefixes: Vec::new(),
            verbose: false,
            skip_verification: false,
            disable_affinity: false,
            samples: DEFAULT_SAMPLES,
            use_mean: false,
            json: false,
            loops: DEFAULT_LOOPS,
            perf_formatter: false,
            min_efficiency: None,
        }
    }
}

/// Why a command line was refused, in the option library's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgError(pub String);

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Value {
    Switch,
    U64,
    U32,
    Text,
    Words,
}

struct Opt {
    long: &'static str,
    short: Option<char>,
    value: Value,
    /// Shown in `--help` (the hidden ones are not).
    help: Option<&'static str>,
    default: Option<&'static str>,
}

const OPTIONS: [Opt; 14] = [
    Opt { long: "help", short: Some('h'), value: Value::Switch, help: Some("Produce help message"), default: None },
    Opt {
        long: "bufferSize",
        short: Some('b'),
        value: Value::U64,
        help: Some("Memcpy buffer size in MiB"),
        default: Some("512"),
    },
    Opt { long: "list", short: Some('l'), value: Value::Switch, help: Some("List available testcases"), default: None },
    Opt {
        long: "testcase",
        short: Some('t'),
        value: Value::Words,
        help: Some("Testcase(s) to run (by name or index)"),
        default: None,
    },
    Opt {
        long: "testcasePrefixes",
        short: Some('p'),
        value: Value::Words,
        help: Some("Testcase(s) to run (by prefix))"),
        default: None,
    },
    Opt { long: "verbose", short: Some('v'), value: Value::Switch, help: Some("Verbose output"), default: None },
    Opt {
        long: "skipVerification",
        short: Some('s'),
        value: Value::Switch,
        help: Some("Skips data verification after copy"),
        default: None,
    },
    Opt {
        long: "disableAffinity",
        short: Some('d'),
        value: Value::Switch,
        help: Some("Disable automatic CPU affinity control"),
        default: None,
    },
    Opt {
        long: "testSamples",
        short: Some('i'),
        value: Value::U32,
        help: Some("Iterations of the benchmark"),
        default: Some("3"),
    },
    Opt {
        long: "useMean",
        short: Some('m'),
        value: Value::Switch,
        help: Some("Use mean instead of median for results"),
        default: None,
    },
    Opt {
        long: "json",
        short: Some('j'),
        value: Value::Switch,
        help: Some("Print output in json format instead of plain text."),
        default: None,
    },
    Opt { long: "loopCount", short: None, value: Value::U64, help: None, default: Some("16") },
    Opt { long: "perfFormatter", short: None, value: Value::Switch, help: None, default: None },
    Opt { long: "min-efficiency", short: None, value: Value::Text, help: None, default: None },
];

/// The option a long name (or a prefix of one) names.
fn by_long(name: &str) -> Result<&'static Opt, ArgError> {
    if let Some(o) = OPTIONS.iter().find(|o| o.long == name) {
        return Ok(o);
    }
    let matches: Vec<&Opt> = OPTIONS.iter().filter(|o| o.long.starts_with(name)).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(ArgError(format!("unrecognised option '--{name}'"))),
        many => {
            let mut names: Vec<String> = many.iter().map(|o| format!("'--{}'", o.long)).collect();
            names.sort();
            let last = names.pop().unwrap_or_default();
            Err(ArgError(format!("option '--{name}' is ambiguous and matches {}, and {last}", names.join(", "))))
        }
    }
}

fn shown(o: &Opt) -> String {
    match o.short {
        Some(c) => format!("-{c} [ --{} ]", o.long),
        None => format!("--{}", o.long),
    }
}

/// Unsigned numbers as the option library converts them: digits only
/// (a leading minus wraps, as a C++ stream conversion to an unsigned type
/// does), within the type's range.
fn unsigned(text: &str, max: u64) -> Option<u64> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: u64 = digits.parse().ok()?;
    if v > max {
        return None;
    }
    Some(if neg { (max - v).wrapping_add(1) & max } else { v })
}

/// Whether `word` would be read as one of the options (so it cannot be
/// the value of the option before it).
fn names_an_option(word: &str) -> bool {
    if let Some(long) = word.strip_prefix("--") {
        let name = long.split_once('=').map_or(long, |(n, _)| n);
        return !name.is_empty() && by_long(name).is_ok();
    }
    match word.strip_prefix('-').and_then(|s| s.chars().next()) {
        Some(c) => OPTIONS.iter().any(|o| o.short == Some(c)),
        None => false,
    }
}

/// Reads nvbandwidth's command line (without the program name). Words
/// that belong to no option, and everything after `--`, are ignored, as
/// the tool ignores them.
pub fn parse(argv: &[String]) -> Result<Args, ArgError> {
    let mut a = Args::default();
    let mut seen: Vec<&'static str> = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let word = &argv[i];
        i += 1;
        if word == "--" {
            break;
        }
        // (option, value written into the same word)
        let mut found: Vec<(&'static Opt, Option<String>)> = Vec::new();
        if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let o = by_long(name)?;
            if value.as_deref() == Some("") {
                return Err(ArgError(format!(
                    "the argument for option '--{}' should follow immediately after the equal sign",
                    o.long
                )));
            }
            found.push((o, value));
        } else if let Some(shorts) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            let chars: Vec<char> = shorts.chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                let o = OPTIONS
                    .iter()
                    .find(|o| o.short == Some(c))
                    .ok_or_else(|| ArgError(format!("unrecognised option '{word}'")))?;
                k += 1;
                if o.value == Value::Switch {
                    found.push((o, None));
                } else {
                    let rest: String = chars[k..].iter().collect();
                    found.push((o, (!rest.is_empty()).then_some(rest)));
                    break;
                }
            }
        } else {
            continue;
        }
        for (o, inline) in found {
            // Lists of names add up; anything else may be given once.
            if o.value != Value::Words {
                if seen.contains(&o.long) {
                    return Err(ArgError(format!("option '--{}' cannot be specified more than once", o.long)));
                }
                seen.push(o.long);
            }
            let mut words: Vec<String> = Vec::new();
            match (o.value, inline) {
                (Value::Switch, Some(_)) => {
                    return Err(ArgError(format!("option '--{}' does not take any arguments", o.long)))
                }
                (Value::Switch, None) => {}
                (_, Some(v)) => words.push(v),
                (Value::Words, None) => {
                    while i < argv.len() && !(argv[i].starts_with('-') && argv[i].len() > 1) {
                        words.push(argv[i].clone());
                        i += 1;
                    }
                }
                (_, None) => {
                    if i < argv.len() && !names_an_option(&argv[i]) {
                        words.push(argv[i].clone());
                        i += 1;
                    }
                }
            }
            if o.value != Value::Switch && words.is_empty() {
                return Err(ArgError(format!("the required argument for option '--{}' is missing", o.long)));
            }
            let bad = || ArgError(format!("the argument ('{}') for option '--{}' is invalid", words[0], o.long));
            match o.long {
                "help" => a.help = true,
                "list" => a.list = true,
                "verbose" => a.verbose = true,
                "skipVerification" => a.skip_verification = true,
                "disableAffinity" => a.disable_affinity = true,
                "useMean" => a.use_mean = true,
                "json" => a.json = true,
                "perfFormatter" => a.perf_formatter = true,
                "bufferSize" => a.buffer_mib = unsigned(&words[0], u64::MAX).ok_or_else(bad)?,
                "loopCount" => a.loops = unsigned(&words[0], u64::MAX).ok_or_else(bad)?,
                "testSamples" => a.samples = unsigned(&words[0], u64::from(u32::MAX)).ok_or_else(bad)? as u32,
                "min-efficiency" => {
                    a.min_efficiency = Some(crate::cli::options::parse_percent(&words[0]).ok_or_else(bad)?)
                }
                "testcase" => a.testcases.extend(words),
                "testcasePrefixes" => a.prefixes.extend(words),
                _ => unreachable!("every option is handled"),
            }
        }
    }
    Ok(a)
}

/// The option list as `--help` prints it (and a refused command line
/// after its error): a caption, then one option a line.
pub fn help_text() -> String {
    const LINE: usize = 80;
    let visible: Vec<&Opt> = OPTIONS.iter().filter(|o| o.help.is_some()).collect();
    let first: Vec<String> = visible
        .iter()
        .map(|o| {
            let param = match (o.value, o.default) {
                (Value::Switch, _) => String::new(),
                (_, Some(d)) => format!("arg (={d})"),
                (_, None) => "arg".to_string(),
            };
            format!("  {} {param}", shown(o))
        })
        .collect();
    let width = first.iter().map(String::len).max().unwrap_or(0).min(LINE / 2 - 1) + 1;
    let mut out = String::from("nvbandwidth CLI:\n");
    for (o, head) in visible.iter().zip(&first) {
        out.push_str(head);
        if head.len() >= width {
            out.push('\n');
            out.push_str(&" ".repeat(width));
        } else {
            out.push_str(&" ".repeat(width - head.len()));
        }
        out.push_str(&wrap(o.help.unwrap_or(""), width, LINE - width));
        out.push('\n');
    }
    out
}

/// One description in lines of at most `room` characters, later lines
/// indented by `indent`: a line that would cut a word ends after its last
/// space instead, when that space lies in the line's second half.
fn wrap(text: &str, indent: usize, room: usize) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut start = 0;
    let mut first = true;
    while start < b.len() {
        if !first && b[start] == b' ' && start + 1 < b.len() && b[start + 1] != b' ' {
            start += 1;
        }
        let mut end = (start + room).min(b.len());
        if b[end - 1] != b' ' && end < b.len() && b[end] != b' ' {
            if let Some(sp) = b[start..end].iter().rposition(|&c| c == b' ') {
                let after = start + sp + 1;
                if after != start && end - after < room / 2 {
                    end = after;
                }
            }
        }
        out.push_str(&text[start..end]);
        if end != b.len() {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
        }
        start = end;
        first = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(words: &[&str]) -> Result<Args, ArgError> {
        parse(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn every_spelling_of_a_value() {
        for words in [&["-b", "64"][..], &["-b64"], &["--bufferSize", "64"], &["--bufferSize=64"], &["--buf", "64"]] {
            assert_eq!(p(words).unwrap().buffer_mib, 64, "{words:?}");
        }
        let a = p(&["-sd", "-t", "0", "host_to_device_memcpy_ce", "-i", "5", "-m", "-j"]).unwrap();
        assert!(a.skip_verification && a.disable_affinity && a.use_mean && a.json);
        assert_eq!(a.testcases, ["0", "host_to_device_memcpy_ce"]);
        assert_eq!(a.samples, 5);
        assert_eq!(p(&["--loopCount", "4"]).unwrap().loops, 4);
        assert_eq!(p(&[]).unwrap(), Args::default());
        // What the option library lets through: words of no option, all
        // after `--`, a value that looks like no option, repeated lists.
        assert_eq!(p(&["stray", "-", "--", "-v"]).unwrap(), Args::default());
        assert_eq!(p(&["-b", "-5"]).unwrap().buffer_mib, u64::MAX - 4);
        assert_eq!(p(&["-i", "-1"]).unwrap().samples, u32::MAX);
        assert_eq!(p(&["-b", "+5"]).unwrap().buffer_mib, 5);
        assert_eq!(p(&["-t", "1", "-t", "2", "--js"]).unwrap().testcases, ["1", "2"]);
        assert_eq!(p(&["-vb", "3", "--loop", "3"]).unwrap().loops, 3);
    }

    #[test]
    fn refusals_in_the_libraries_terms() {
        let e = |w: &[&str]| p(w).unwrap_err().0;
        assert_eq!(e(&["--nope"]), "unrecognised option '--nope'");
        assert_eq!(e(&["-x"]), "unrecognised option '-x'");
        assert_eq!(e(&["-x5"]), "unrecognised option '-x5'");
        assert_eq!(e(&["-sx"]), "unrecognised option '-sx'");
        assert_eq!(e(&["-b", "-v"]), "the required argument for option '--bufferSize' is missing");
        assert_eq!(e(&["-bs"]), "the argument ('s') for option '--bufferSize' is invalid");
        assert_eq!(e(&["-t", "1", "-5"]), "unrecognised option '-5'");
        assert_eq!(e(&["-i", "1", "-i", "2"]), "option '--testSamples' cannot be specified more than once");
        assert_eq!(e(&["--help="]), "the argument for option '--help' should follow immediately after the equal sign");
        assert_eq!(e(&["-b", "0x10"]), "the argument ('0x10') for option '--bufferSize' is invalid");
        assert_eq!(e(&["-b", "lots"]), "the argument ('lots') for option '--bufferSize' is invalid");
        assert_eq!(e(&["-b"]), "the required argument for option '--bufferSize' is missing");
        assert_eq!(e(&["-v", "-v"]), "option '--verbose' cannot be specified more than once");
        assert_eq!(e(&["--json=1"]), "option '--json' does not take any arguments");
        assert_eq!(
            e(&["--test", "1"]),
            "option '--test' is ambiguous and matches '--testSamples', '--testcase', and '--testcasePrefixes'"
        );
        assert_eq!(
            e(&["--testc", "1"]),
            "option '--testc' is ambiguous and matches '--testcase', and '--testcasePrefixes'"
        );
        assert_eq!(e(&["-i", "4294967296"]), "the argument ('4294967296') for option '--testSamples' is invalid");
    }

    #[test]
    fn help_is_laid_out_in_columns() {
        let h = help_text();
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines[0], "nvbandwidth CLI:");
        assert_eq!(lines[1], format!("{:<33}Produce help message", "  -h [ --help ]"));
        assert_eq!(lines[2], format!("{:<33}Memcpy buffer size in MiB", "  -b [ --bufferSize ] arg (=512)"));
        // The json line is wider than the 47 columns left: it breaks
        // after the last space that leaves a word whole.
        let j = lines.iter().position(|l| l.starts_with("  -j")).unwrap();
        assert_eq!(lines[j], format!("{:<33}Print output in json format instead of plain ", "  -j [ --json ]"));
        assert_eq!(lines[j + 1], format!("{}text.", " ".repeat(33)));
        assert_eq!(lines.len(), 13);
    }
}
