//! `commbench history`: a site's own record of its results in one SQLite
//! file, and checks of new runs against it.
//!
//! - `add RUN...`: stores runs (results folders, CSVs, run records), each
//!   once, refusing what `commbench compare` refuses.
//! - `show`: the series and runs held.
//! - `check RUN`: judges a run against where a like run of its series
//!   should fall (each size's band for one new run from the last runs,
//!   and the whole curve's shift) with compare's judge, and names where
//!   each series first left its band.
//! - `export`: everything as CSV or JSON.
//! - `plot BENCHMARK`: key sizes over time with the baseline band.
//!
//! The file is `results/history.sqlite` unless `--db` or
//! `COMMBENCH_HISTORY` names another. See docs/history.md.

pub mod baseline;
pub mod check;
pub(crate) mod curve;
pub mod db;
pub mod export;
pub(crate) mod ingest;
pub mod key;
pub(crate) mod pairs_csv;
pub mod plot;
pub mod show;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};

use crate::compare::format::Format;
use crate::compare::tolerance::{self, Rules, ToleranceRule};
use crate::diag::printable;

/// Where the history is kept unless told otherwise.
pub(crate) const DEFAULT_DB: &str = "results/history.sqlite";
/// The environment variable naming the history file.
pub(crate) const DB_ENV: &str = "COMMBENCH_HISTORY";

#[derive(Parser, Debug)]
#[command(
    name = "commbench history",
    version = crate::VERSION,
    about = "Keep a site's results in one SQLite file and judge new runs against their own history.",
    after_help = "The file is results/history.sqlite, or $COMMBENCH_HISTORY, or --db FILE.\n\
                  A series is one system (hosts sorted, or --system), benchmark, backend, memory, datatype,\n\
                  process count, placement policy, MPI library and version, and the options that change\n\
                  the numbers (window, -b, -V, --precision ...; not iterations or warm-up), and one metric.\n\n\
                  Exit status:\n  \
                  0  done (check: every judged size passes)\n  \
                  1  check: failures beyond --allowed-failures, a whole curve moved, or a run that did not complete\n  \
                  2  bad options or input (add: any run refused, the others are still added),\n     \
                  or a history file that cannot be used\n  \
                  3  check: nothing to judge (no baseline runs for the run's series)"
)]
struct Args {
    /// The history file (default: $COMMBENCH_HISTORY, else results/history.sqlite).
    #[arg(long, value_name = "FILE", global = true)]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ShowFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    Csv,
    Json,
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::bytes::parse_size(s).map_err(|_| format!("'{s}' is not a size (bytes, optionally with K, M or G)"))
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Store runs: results folders, commbench CSVs or run records (each run once).
    Add {
        #[arg(required = true, value_name = "RUN")]
        runs: Vec<PathBuf>,
        /// Name the system instead of by its hosts' names.
        #[arg(long, value_name = "LABEL")]
        system: Option<String>,
        /// Do not print what the readers passed over.
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// List the series (key and metric, runs, first and last) and the runs.
    Show {
        #[arg(long, value_enum, default_value = "text")]
        format: ShowFormat,
        /// Only this benchmark.
        #[arg(long)]
        benchmark: Option<String>,
        /// Only this system.
        #[arg(long)]
        system: Option<String>,
    },
    /// Judge a run against where a like run of its series should fall, from its last runs.
    Check {
        #[arg(value_name = "RUN")]
        run: PathBuf,
        /// The system the run's series is of, as given to `add --system`.
        #[arg(long, value_name = "LABEL")]
        system: Option<String>,
        /// How many of the latest complete runs make the baseline.
        #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
        last: u64,
        /// Only runs started on or after DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
        #[arg(long, value_name = "DATE", value_parser = ingest::parse_date)]
        since: Option<String>,
        /// How much worse than the baseline a size may be: PCT% or SIZES:PCT% (repeatable).
        #[arg(long, value_name = "[SIZES:]PCT%", value_parser = tolerance::parse_tolerance)]
        tolerance: Vec<ToleranceRule>,
        /// Number of failing sizes tolerated before the check fails.
        #[arg(long, value_name = "N", default_value_t = 0)]
        allowed_failures: usize,
        /// The sizes whose bands are scanned (default: the smallest, middle and largest).
        #[arg(long, value_name = "SIZE,...", value_delimiter = ',', value_parser = parse_size)]
        sizes: Vec<u64>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Do not print what the readers passed over.
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// Write every stored value with its run's columns, for dashboards.
    Export {
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// Only this benchmark.
        #[arg(long)]
        benchmark: Option<String>,
        /// Only this system.
        #[arg(long)]
        system: Option<String>,
        /// Write to FILE instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Draw a benchmark's key sizes over time with the baseline band, as SVG.
    Plot {
        benchmark: String,
        /// Sizes to draw (default: the smallest, middle and largest).
        #[arg(long, value_name = "SIZE,...", value_delimiter = ',', value_parser = parse_size)]
        sizes: Vec<u64>,
        /// Only this system (default: the series with the most runs).
        #[arg(long)]
        system: Option<String>,
        /// Only this datatype.
        #[arg(long)]
        datatype: Option<String>,
        /// How many runs before each form its band.
        #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
        last: u64,
        /// The SVG file to write.
        #[arg(long, value_name = "FILE.svg", required = true)]
        out: PathBuf,
    },
}

/// The history file: `--db`, else `$COMMBENCH_HISTORY`, else
/// [`DEFAULT_DB`].
pub(crate) fn db_path(given: Option<&Path>) -> PathBuf {
    if let Some(p) = given {
        return p.to_path_buf();
    }
    match std::env::var_os(DB_ENV) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(DEFAULT_DB),
    }
}

/// Adds `runs` to the history at `db`, one line on stderr per refused
/// run and one summary line; returns 0 when all were taken (new or
/// already there), 2 when any was refused or the file cannot be used.
/// `commbench suite --history` and `commbench pairs --history` end with
/// this.
pub fn add(db: &Path, runs: &[PathBuf], system: Option<&str>, quiet: bool) -> i32 {
    let shown = printable(&db.display().to_string()).into_owned();
    let mut c = match db::open(db, db::Mode::Write) {
        Ok(c) => c,
        Err(e) => {
            crate::say!("commbench history: {e}");
            return 2;
        }
    };
    let mut notes = Vec::new();
    let mut refused = 0;
    let (mut taken, mut added) = (0, 0);
    for path in runs {
        let files = match ingest::files(path, &mut notes) {
            Ok(f) => f,
            Err(e) => {
                crate::say!("commbench history: refused: {}", printable(&e.to_string()));
                refused += 1;
                continue;
            }
        };
        for f in files {
            let incoming = match ingest::read(&f, system, &mut notes) {
                Ok(i) => i,
                Err(e) => {
                    crate::say!("commbench history: refused: {}", printable(&e.line));
                    refused += 1;
                    continue;
                }
            };
            match ingest::store(&mut c, &incoming) {
                Ok(n) => {
                    taken += incoming.len();
                    added += n;
                }
                Err(e) => {
                    let f = printable(&f.display().to_string()).into_owned();
                    crate::say!("commbench history: {shown}: cannot store {f}: {}", db::one_line(&e));
                    return 2;
                }
            }
        }
    }
    if !quiet {
        for n in &notes {
            crate::say!("commbench history: note: {}", printable(n));
        }
    }
    let refused_text = if refused > 0 { format!(", {refused} file(s) refused") } else { String::new() };
    crate::say!("commbench history: {shown}: {added} run(s) added, {} already there{refused_text}", taken - added);
    if refused > 0 {
        2
    } else {
        0
    }
}

/// Whether `args` (the words after `history`) are a command line
/// `commbench history` takes, without doing anything: its first line of
/// complaint when not (the docs' test checks every command they show).
pub fn check_args(args: &[String]) -> Result<(), String> {
    let argv = std::iter::once("commbench history".to_string()).chain(args.iter().cloned());
    Args::try_parse_from(argv).map(drop).map_err(|e| {
        let text = e.to_string();
        text.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("invalid arguments")
            .trim_start_matches("error: ")
            .to_string()
    })
}

/// Entry point of `commbench history`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let a: Args = match crate::compare::args::parse("history", args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let path = db_path(a.db.as_deref());
    if let Command::Add { runs, system, quiet } = &a.command {
        return add(&path, runs, system.as_deref(), *quiet);
    }
    let c = match db::open(&path, db::Mode::Read) {
        Ok(c) => c,
        // check before the first add: no baseline (exit 3, as for a series
        // the history does not hold yet), the file still not created.
        Err(e @ (db::DbError::Missing { .. } | db::DbError::Empty { .. }))
            if matches!(a.command, Command::Check { .. }) =>
        {
            crate::say!("commbench history: {e}");
            match db::empty_in_memory() {
                Ok(c) => c,
                Err(e) => {
                    crate::say!("commbench history: {e}");
                    return 2;
                }
            }
        }
        Err(e) => {
            crate::say!("commbench history: {e}");
            return 2;
        }
    };
    let shown = printable(&path.display().to_string()).into_owned();
    let failed = |e: &dyn std::fmt::Display| {
        crate::say!("commbench history: {shown}: {}", printable(&e.to_string()));
        2
    };
    match a.command {
        Command::Add { .. } => unreachable!("handled above"),
        Command::Show { format, benchmark, system } => {
            let f = show::Filter { benchmark, system };
            let (series, runs) = match (show::series(&c, &f), show::runs(&c, &f)) {
                (Ok(s), Ok(r)) => (s, r),
                (Err(e), _) | (_, Err(e)) => return failed(&e),
            };
            let version = db::schema_version(&c);
            match format {
                ShowFormat::Text => print!("{}", show::text(&path.display().to_string(), version, &series, &runs)),
                ShowFormat::Json => {
                    let v = serde_json::json!({"db": path.display().to_string(), "schema_version": version, "series": series, "runs": runs});
                    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
                }
            }
            0
        }
        Command::Check { run, system, last, since, tolerance, allowed_failures, sizes, format, quiet } => {
            let rules = Rules {
                tolerances: tolerance,
                limits: Vec::new(),
                allowed_failures,
                require_all: false,
                by_efficiency: false,
            };
            let r = check::Request {
                run: &run,
                system: system.as_deref(),
                last: last as usize,
                since: since.as_deref(),
                rules,
                format,
                sizes: &sizes,
                quiet,
            };
            check::run(&c, &r)
        }
        Command::Export { format, benchmark, system, out } => {
            let f = show::Filter { benchmark, system };
            let text = match format {
                ExportFormat::Csv => export::csv(&c, &f),
                ExportFormat::Json => export::json(&c, &f, db::schema_version(&c)),
            };
            let text = match text {
                Ok(t) => t,
                Err(e) => return failed(&e),
            };
            match out {
                None => print!("{text}"),
                Some(o) => {
                    if let Err(e) = crate::report::safe_file::write_named(&o, text.as_bytes()) {
                        crate::say!("commbench history: {}: {e}", printable(&o.display().to_string()));
                        return 2;
                    }
                }
            }
            0
        }
        Command::Plot { benchmark, sizes, system, datatype, last, out } => {
            let req = plot::Request {
                benchmark: &benchmark,
                sizes: &sizes,
                system: system.as_deref(),
                datatype: datatype.as_deref(),
                last: last as usize,
                out: &out,
            };
            plot::run(&c, &req)
        }
    }
}
