//! Command-line handling for the OSU-compatible binaries: the option table
//! (OSU's letters and long names plus commbench's long-only extensions),
//! parsing into [`Options`], and the help text.

pub(crate) mod getopt;
pub mod help;
pub mod options;

use getopt::{ArgKind, OptDef, OptId, SplitError};
pub(crate) use options::{Options, Parsed};

use crate::spec::BenchSpec;

/// A command-line problem; its text is the one line printed on stderr.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
}

/// Every OSU option letter with its long name and argument kind.
const OSU_OPTIONS: &[(char, &str, ArgKind)] = &[
    ('h', "help", ArgKind::None),
    ('v', "version", ArgKind::None),
    ('f', "full", ArgKind::None),
    ('m', "message-size", ArgKind::Required),
    ('W', "window-size", ArgKind::Required),
    ('t', "num-test-calls", ArgKind::Required),
    ('i', "iterations", ArgKind::Required),
    ('x', "warmup", ArgKind::Required),
    ('a', "array-size", ArgKind::Required),
    ('M', "mem-limit", ArgKind::Required),
    ('R', "print-rate", ArgKind::Required),
    ('p', "num-pairs", ArgKind::Required),
    ('V', "vary-window", ArgKind::None),
    ('c', "validation", ArgKind::Optional),
    ('b', "buffer-num", ArgKind::Required),
    ('u', "validation-warmup", ArgKind::Required),
    ('G', "graph", ArgKind::Required),
    ('P', "papi", ArgKind::Required),
    ('D', "ddt", ArgKind::Required),
    ('T', "type", ArgKind::Required),
    ('I', "session", ArgKind::None),
    ('l', "in-place", ArgKind::None),
    ('z', "tail-lat", ArgKind::Optional),
    ('k', "root-rank", ArgKind::Required),
    ('N', "nhbr", ArgKind::Required),
    ('d', "accelerator", ArgKind::Required),
    ('w', "win-options", ArgKind::Required),
    ('s', "sync-option", ArgKind::Required),
];

/// The letter every benchmark takes beyond its OSU non-GPU letters: `-d`,
/// as OSU's GPU builds take it.
pub(crate) const ACCEL_LETTER: char = 'd';

/// commbench's own options: long names only, so no OSU letter is taken.
pub(crate) const EXTENSIONS: &[(&str, ArgKind, &str, &str)] = &[
    (
        "results-dir",
        ArgKind::Required,
        "DIR",
        "write the CSV and run record into DIR (default results/, or $COMMBENCH_RESULTS_DIR)",
    ),
    ("csv", ArgKind::Required, "FILE", "write the CSV to FILE and the run record beside it (FILE.json)"),
    ("no-results", ArgKind::None, "", "write no CSV or run record, only the OSU table"),
    (
        "timeout",
        ArgKind::Required,
        "SECONDS",
        "end the job (status 124) when no iteration completes on any rank for SECONDS, saying where every rank \
         was (default 600; 0 waits forever)",
    ),
    ("bind", ArgKind::Required, "POLICY", "place each rank: none (as launched), core, nic (cores near the NIC) or gpu"),
    ("cpu-list", ArgKind::Required, "CPUS", "bind local rank i to the i-th cpu of CPUS, e.g. 80 or 0,8,16"),
    ("nic", ArgKind::Required, "DEVS", "network device per local rank, e.g. mlx5_2:1 (sets UCX_NET_DEVICES)"),
    ("gpu", ArgKind::Required, "IDS", "GPU (CUDA index) per local rank, e.g. 0,1,2,3"),
    ("verbose", ArgKind::None, "", "also print the placement table and where the results went, on stderr"),
    ("backend", ArgKind::Required, "NAME", "what carries the timed messages, one of:"),
    ("format", ArgKind::Required, "NAME", "stdout layout (the CSV and run record are the same), one of:"),
    (
        "min-busbw",
        ArgKind::Required,
        "GB/s",
        "collectives: exit 1 when the average bus bandwidth over every size measured is below GB/s",
    ),
    (
        "min-efficiency",
        ArgKind::Required,
        "PCT",
        "exit 1 when the bandwidth at the largest sizes (the best of the 3 largest) is below PCT% of its path's \
         peak (the NIC's link, or this machine's copy rate for shared memory; the run record says how)",
    ),
    (
        "precision",
        ArgKind::Required,
        "PCT",
        "run each size until the 95% interval of its value is within PCT of it (e.g. 1%), at most -i iterations",
    ),
    (
        "min-iterations",
        ArgKind::Required,
        "N",
        "with --precision: iterations every size runs at least (default: a tenth of -i)",
    ),
    ("max-time-per-size", ArgKind::Required, "SECS", "with --precision: stop a size after SECS (2, 500ms, 1m)"),
    (
        "dry-run",
        ArgKind::Optional,
        "[=NP]",
        "print every size, its counts, one rank's memory and a modelled duration for NP ranks (default: the \
         launcher's, else 2), then exit; nothing is started or sent",
    ),
];

/// The OSU letters osu_init and osu_hello accept and ignore, with one
/// warning: every letter of OSU's other benchmarks that is not theirs
/// (OSU's osu_init warns about them and runs; its osu_hello reads no
/// option at all), so that a harness passing every benchmark the same
/// `-x 10 -i 100` runs them too.
fn ignored_letters(spec: &BenchSpec) -> impl Iterator<Item = char> + '_ {
    OSU_OPTIONS.iter().map(|(l, ..)| *l).filter(move |&l| spec.is_startup() && !spec.letters.contains(l))
}

/// The option table for one benchmark, in OSU's option-string order.
pub(crate) fn option_table(spec: &BenchSpec) -> Vec<OptDef> {
    let mut defs: Vec<OptDef> = spec
        .letters
        .chars()
        // osu_init and osu_hello have no buffers to place.
        // OSU's osu_latency_mt and osu_latency_mp have no GPU form.
        .chain((!spec.is_startup() && spec.workers.is_none()).then_some(ACCEL_LETTER))
        .chain(ignored_letters(spec))
        .filter_map(|c| {
            OSU_OPTIONS.iter().find(|(l, ..)| *l == c).map(|&(l, long, arg)| OptDef {
                id: OptId::Short(l),
                long,
                arg,
                stops: l == 'h' || l == 'v',
                exact: false,
            })
        })
        .collect();
    defs.extend(EXTENSIONS.iter().map(|&(long, arg, ..)| OptDef {
        id: OptId::Long(long),
        long,
        arg,
        stops: false,
        exact: false,
    }));
    defs
}

/// Long name of an OSU letter.
pub(crate) fn long_name(letter: char) -> Option<&'static str> {
    OSU_OPTIONS.iter().find(|(l, ..)| *l == letter).map(|(_, n, _)| *n)
}

/// Options for `args`, for tests that need a parsed command line.
#[cfg(test)]
pub(crate) fn test_options(spec: &BenchSpec, args: &[&str]) -> Options {
    let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match parse(spec, &v) {
        Ok(Parsed::Run(o)) => *o,
        other => panic!("{args:?}: {other:?}"),
    }
}

/// Parses argv (without argv[0]) for a benchmark.
pub fn parse(spec: &BenchSpec, args: &[String]) -> Result<Parsed, CliError> {
    let defs = option_table(spec);
    let split = getopt::split(args, &defs).map_err(|e| match e {
        SplitError::Unknown { shown } if shown == "-l" && !spec.is_point_to_point() => {
            CliError::Usage(format!("Invalid option [-l] ({} has no in-place form)", spec.name))
        }
        SplitError::Unknown { shown } => CliError::Usage(format!("Invalid option [{shown}]")),
        SplitError::MissingArgument { shown } => CliError::Usage(format!("Option Missing Required Argument [{shown}]")),
        SplitError::Ambiguous { shown, candidates } => {
            CliError::Usage(format!("Ambiguous option [{shown}] (could be {})", candidates.join(", ")))
        }
        SplitError::UnexpectedValue { shown } => CliError::Usage(format!("Option takes no argument [{shown}]")),
    })?;
    let (ignored, tokens): (Vec<_>, Vec<_>) = split
        .tokens
        .into_iter()
        .partition(|t| matches!(t.id, OptId::Short(l) if ignored_letters(spec).any(|i| i == l)));
    let parsed = options::apply(spec, &tokens, &split.positional)?;
    Ok(match parsed {
        Parsed::Run(mut o) => {
            o.ignored = ignored.iter().map(shown).collect();
            Parsed::Run(o)
        }
        other => other,
    })
}

/// An option as typed (near enough): `-x 10`, `-f`.
fn shown(t: &getopt::Token) -> String {
    let OptId::Short(l) = t.id else { unreachable!("only letters are ignored") };
    match &t.value {
        Some(v) => format!("-{l} {v}"),
        None => format!("-{l}"),
    }
}

#[cfg(test)]
mod tests;
