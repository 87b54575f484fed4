//! Command-line parsing shared by `commbench compare` and `commbench plot`:
//! clap errors become one line on stderr and exit status 2; help and
//! version go to stdout with status 0.

use clap::error::ErrorKind;
use clap::Parser;

/// Parses `args` (the words after the subcommand) or says why not, as the
/// exit status to end with.
pub fn parse<T: Parser>(command: &str, args: &[String]) -> Result<T, i32> {
    if let Err(why) = crate::args::check_arg_lengths(args) {
        crate::say!("commbench {command}: {why}");
        return Err(2);
    }
    let argv = std::iter::once(format!("commbench {command}")).chain(args.iter().cloned());
    T::try_parse_from(argv).map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let text = e.to_string();
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
            0
        }
        _ => {
            let rendered = e.to_string();
            let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines.next().unwrap_or("invalid arguments").trim_start_matches("error: ");
            // "the following required arguments were not provided:" names
            // them on the next line.
            let msg = match (first.ends_with(':'), lines.next()) {
                (true, Some(next)) => format!("{first} {next}"),
                _ => first.to_string(),
            };
            crate::say!("commbench {command}: {msg} (see 'commbench {command} --help')");
            2
        }
    })
}
