//! A subcommand's words before it parses them: each checked against a
//! length no real argument reaches, so a hostile one costs no time.

/// The longest argument a subcommand takes (the longest path Linux
/// accepts); a longer one would only cost time (clap's "did you mean"
/// compares it with every option name, quadratically).
pub(crate) const MAX_ARG_BYTES: usize = 4096;

/// Refuses an argument longer than [`MAX_ARG_BYTES`], naming its start.
pub(crate) fn check_arg_lengths(args: &[String]) -> Result<(), String> {
    match args.iter().find(|a| a.len() > MAX_ARG_BYTES) {
        Some(a) => {
            let start: String = a.chars().take(24).collect();
            Err(format!("an argument of {} bytes ('{start}...') is longer than {MAX_ARG_BYTES}", a.len()))
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_lengths() {
        assert!(check_arg_lengths(&["x".repeat(MAX_ARG_BYTES)]).is_ok());
        let e = check_arg_lengths(&["a".into(), "y".repeat(MAX_ARG_BYTES + 1)]).unwrap_err();
        assert!(e.starts_with("an argument of 4097 bytes ('yyyy"), "{e}");
    }
}
