//! A getopt_long work-alike: splits argv into option tokens the way OSU's
//! glibc-based parser does (clustered short letters, attached or separate
//! required arguments, optional arguments only when attached, `--name=value`,
//! unique prefixes of long names), but reports stray words instead of
//! silently dropping everything after them.

/// Whether an option takes an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgKind {
    None,
    Required,
    /// Only an attached value counts (`-z50,99`, `--tail-lat=50,99`).
    Optional,
}

/// Identity of an option: an OSU letter, or a commbench long-only extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptId {
    Short(char),
    Long(&'static str),
}

/// One entry of the option table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OptDef {
    pub id: OptId,
    pub long: &'static str,
    pub arg: ArgKind,
    /// Parsing ends after this option (help and version, as in getopt
    /// loops that return on them): later words are not looked at.
    pub stops: bool,
    /// Only the whole name selects it: no prefix of it is read as it, and
    /// it is never among the candidates of an ambiguous prefix. For
    /// options added to a table whose abbreviations must read as they
    /// did without them (commbench's own, in nccl-tests' table).
    pub exact: bool,
}

/// One parsed option occurrence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub id: OptId,
    pub value: Option<String>,
}

/// What the splitter found.
#[derive(Debug, Default)]
pub(crate) struct Split {
    pub tokens: Vec<Token>,
    pub positional: Vec<String>,
}

/// A problem found while splitting; `shown` is how the option was typed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SplitError {
    Unknown { shown: String },
    MissingArgument { shown: String },
    Ambiguous { shown: String, candidates: Vec<String> },
    UnexpectedValue { shown: String },
}

fn find_short(defs: &[OptDef], c: char) -> Option<&OptDef> {
    defs.iter().find(|d| d.id == OptId::Short(c))
}

fn find_long<'a>(defs: &'a [OptDef], name: &str) -> Result<&'a OptDef, SplitError> {
    if let Some(d) = defs.iter().find(|d| d.long == name) {
        return Ok(d);
    }
    let matches: Vec<&OptDef> =
        defs.iter().filter(|d| !d.exact && !name.is_empty() && d.long.starts_with(name)).collect();
    match matches.len() {
        1 => Ok(matches[0]),
        0 => Err(SplitError::Unknown { shown: format!("--{name}") }),
        _ => Err(SplitError::Ambiguous {
            shown: format!("--{name}"),
            candidates: matches.iter().map(|d| format!("--{}", d.long)).collect(),
        }),
    }
}

/// Splits `args` (without argv[0]) against `defs`. Stops at the first error,
/// as getopt does. Words that are not options are collected in order; a
/// lone `--` makes every later word positional.
pub fn split(args: &[String], defs: &[OptDef]) -> Result<Split, SplitError> {
    let mut out = Split::default();
    split_into(args, defs, &mut out)?;
    Ok(out)
}

/// [`split`], with what was split before the first error kept: a getopt
/// loop that acts on each option as it comes (nccl-tests') has acted on
/// those before getopt reports the error.
pub fn split_until_error(args: &[String], defs: &[OptDef]) -> (Split, Option<SplitError>) {
    let mut out = Split::default();
    let err = split_into(args, defs, &mut out).err();
    (out, err)
}

fn split_into(args: &[String], defs: &[OptDef], out: &mut Split) -> Result<(), SplitError> {
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            out.positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = arg.strip_prefix("--") {
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let def = find_long(defs, name)?;
            let value = match def.arg {
                ArgKind::None => {
                    if attached.is_some() {
                        return Err(SplitError::UnexpectedValue { shown: format!("--{}", def.long) });
                    }
                    None
                }
                ArgKind::Optional => attached,
                ArgKind::Required => match attached {
                    Some(v) => Some(v),
                    None if i < args.len() => {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => return Err(SplitError::MissingArgument { shown: shown_of(def) }),
                },
            };
            out.tokens.push(Token { id: def.id, value });
            if def.stops {
                break;
            }
            continue;
        }
        if arg.len() > 1 && arg.starts_with('-') {
            let letters: Vec<char> = arg[1..].chars().collect();
            let mut j = 0;
            while j < letters.len() {
                let c = letters[j];
                j += 1;
                let def = find_short(defs, c).ok_or(SplitError::Unknown { shown: format!("-{c}") })?;
                let rest: String = letters[j..].iter().collect();
                match def.arg {
                    ArgKind::None => {
                        out.tokens.push(Token { id: def.id, value: None });
                        if def.stops {
                            return Ok(());
                        }
                    }
                    ArgKind::Optional => {
                        out.tokens.push(Token { id: def.id, value: (!rest.is_empty()).then_some(rest) });
                        break;
                    }
                    ArgKind::Required => {
                        let value = if !rest.is_empty() {
                            rest
                        } else if i < args.len() {
                            i += 1;
                            args[i - 1].clone()
                        } else {
                            return Err(SplitError::MissingArgument { shown: format!("-{c}") });
                        };
                        out.tokens.push(Token { id: def.id, value: Some(value) });
                        break;
                    }
                }
            }
            continue;
        }
        out.positional.push(arg.clone());
    }
    Ok(())
}

fn shown_of(def: &OptDef) -> String {
    match def.id {
        OptId::Short(c) => format!("-{c}"),
        OptId::Long(_) => format!("--{}", def.long),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFS: &[OptDef] = &[
        OptDef { id: OptId::Short('m'), long: "message-size", arg: ArgKind::Required, stops: false, exact: false },
        OptDef { id: OptId::Short('c'), long: "validation", arg: ArgKind::Optional, stops: false, exact: false },
        OptDef { id: OptId::Short('z'), long: "tail-lat", arg: ArgKind::Optional, stops: false, exact: false },
        OptDef { id: OptId::Short('h'), long: "help", arg: ArgKind::None, stops: true, exact: false },
        OptDef { id: OptId::Short('f'), long: "full", arg: ArgKind::None, stops: false, exact: false },
        OptDef { id: OptId::Short('T'), long: "type", arg: ArgKind::Required, stops: false, exact: false },
        OptDef { id: OptId::Long("timeout"), long: "timeout", arg: ArgKind::Required, stops: false, exact: false },
    ];

    fn s(args: &[&str]) -> Result<Split, SplitError> {
        let v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        split(&v, DEFS)
    }

    fn tok(c: char, v: Option<&str>) -> Token {
        Token { id: OptId::Short(c), value: v.map(String::from) }
    }

    #[test]
    fn attached_and_separate_required_values() {
        let r = s(&["-m64", "-m", "1:8", "--message-size=4", "--message-size", "2"]).unwrap();
        assert_eq!(
            r.tokens,
            vec![tok('m', Some("64")), tok('m', Some("1:8")), tok('m', Some("4")), tok('m', Some("2"))]
        );
    }

    #[test]
    fn optional_value_only_when_attached() {
        let r = s(&["-z", "50,99"]).unwrap();
        assert_eq!(r.tokens, vec![tok('z', None)]);
        assert_eq!(r.positional, vec!["50,99".to_string()]);
        let r = s(&["-z50,99", "--validation=log:x"]).unwrap();
        assert_eq!(r.tokens, vec![tok('z', Some("50,99")), tok('c', Some("log:x"))]);
    }

    #[test]
    fn clustered_letters() {
        let r = s(&["-fhz90", "-fm8"]).unwrap();
        assert_eq!(r.tokens, vec![tok('f', None), tok('h', None)]);
        let r = s(&["-fz90", "-fm8"]).unwrap();
        assert_eq!(r.tokens, vec![tok('f', None), tok('z', Some("90")), tok('f', None), tok('m', Some("8"))]);
    }

    #[test]
    fn help_ends_parsing_but_earlier_errors_win() {
        assert_eq!(s(&["-h", "-q"]).unwrap().tokens, vec![tok('h', None)]);
        assert_eq!(s(&["--help", "-q"]).unwrap().tokens, vec![tok('h', None)]);
        assert_eq!(s(&["-q", "-h"]).unwrap_err(), SplitError::Unknown { shown: "-q".into() });
    }

    #[test]
    fn unique_prefixes_and_ambiguity() {
        assert_eq!(s(&["--mess=8"]).unwrap().tokens, vec![tok('m', Some("8"))]);
        assert_eq!(
            s(&["--ti", "5"]).unwrap().tokens,
            vec![Token { id: OptId::Long("timeout"), value: Some("5".into()) }]
        );
        match s(&["--t", "x"]) {
            Err(SplitError::Ambiguous { shown, candidates }) => {
                assert_eq!(shown, "--t");
                assert_eq!(candidates.len(), 3);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_exact_option_leaves_every_prefix_as_it_was() {
        let mut defs = DEFS.to_vec();
        defs.push(OptDef { id: OptId::Long("tiny"), long: "tiny", arg: ArgKind::None, stops: false, exact: true });
        defs.push(OptDef { id: OptId::Long("fully"), long: "fully", arg: ArgKind::None, stops: false, exact: true });
        let split = |args: &[&str]| split(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>(), &defs);
        // Whole, it is read; "--ti" still means --timeout alone, and "--t"
        // is ambiguous between the same three; "--full" stays -f.
        assert_eq!(split(&["--tiny"]).unwrap().tokens, vec![Token { id: OptId::Long("tiny"), value: None }]);
        assert_eq!(split(&["--ti", "5"]).unwrap().tokens[0].id, OptId::Long("timeout"));
        assert_eq!(split(&["--full"]).unwrap().tokens, vec![tok('f', None)]);
        assert_eq!(split(&["--fu"]).unwrap().tokens, vec![tok('f', None)]);
        match split(&["--t", "x"]) {
            Err(SplitError::Ambiguous { candidates, .. }) => assert!(!candidates.contains(&"--tiny".to_string())),
            other => panic!("{other:?}"),
        }
        assert_eq!(split(&["--tin"]).unwrap_err(), SplitError::Unknown { shown: "--tin".into() });
    }

    #[test]
    fn errors() {
        assert_eq!(s(&["-q"]).unwrap_err(), SplitError::Unknown { shown: "-q".into() });
        assert_eq!(s(&["--bogus"]).unwrap_err(), SplitError::Unknown { shown: "--bogus".into() });
        assert_eq!(s(&["-m"]).unwrap_err(), SplitError::MissingArgument { shown: "-m".into() });
        assert_eq!(s(&["--type"]).unwrap_err(), SplitError::MissingArgument { shown: "-T".into() });
        assert_eq!(s(&["--full=1"]).unwrap_err(), SplitError::UnexpectedValue { shown: "--full".into() });
        // the first error wins, like getopt
        assert_eq!(s(&["-q", "-m"]).unwrap_err(), SplitError::Unknown { shown: "-q".into() });
    }

    #[test]
    fn positional_and_double_dash() {
        let r = s(&["H", "-f", "--", "-m", "x"]).unwrap();
        assert_eq!(r.tokens, vec![tok('f', None)]);
        assert_eq!(r.positional, vec!["H", "-m", "x"]);
        // a lone dash is a word, as in getopt
        assert_eq!(s(&["-"]).unwrap().positional, vec!["-"]);
    }
}
