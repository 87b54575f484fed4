//! Command-line parsing shared by `commbench compare` and `commbench plot`:
//! clap errors become one line on stderr and exit status 2; help and
//! version go to stdout with status 0.

use clap::error::ErrorKind;
use clap::Parser;

/// Parses `args` (the words after the subcommand) or says why not, as the
/// exit status to end with.
pub fn parse<T: Parser>(command: &str, args: &[String]) -> Result<T, i32> {
    let argv = std::iter::once(format!("commbench {command}")).chain(args.iter().cloned());
    T::try_parse_from(argv).map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            print!("{e}");
            0
        }
        _ => {
            let rendered = e.to_string();
            let first = rendered.lines().find(|l| !l.trim().is_empty()).unwrap_or("invalid arguments");
            let msg = first.trim_start_matches("error: ");
            eprintln!("commbench {command}: {msg} (see 'commbench {command} --help')");
            2
        }
    })
}
