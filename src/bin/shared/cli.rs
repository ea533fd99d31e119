//! What the three binaries' command lines share: clap parses them, `check` refuses what
//! clap cannot express (options that contradict each other), and a usage error,
//! `--help` and `--version` end the program the Unix way — help and version on stdout
//! with exit 0, a usage error on stderr with exit 2 — with the text passed through
//! `shown` first (the operator's CLI makes bytes from its arguments safe for a terminal
//! there).

use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

/// The command line as `T`, or the exit code the program ends with now.
pub fn parse<T: Parser>(
    shown: impl Fn(&str) -> String,
    check: impl Fn(&T) -> Result<(), String>,
) -> Result<T, ExitCode> {
    let refused = |e: clap::Error| {
        // `render` is the message without colours; each line goes through `shown`.
        let text: String = e
            .render()
            .to_string()
            .lines()
            .map(|l| shown(l) + "\n")
            .collect();
        match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            _ => {
                eprint!("{text}");
                ExitCode::from(2)
            }
        }
    };
    let args = T::try_parse().map_err(refused)?;
    check(&args).map_err(|why| refused(T::command().error(ErrorKind::ArgumentConflict, why)))?;
    Ok(args)
}
