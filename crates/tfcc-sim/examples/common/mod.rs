//! What the command-line examples share: positional arguments and the exit protocol (one
//! line on stdout and exit 0, or the error and the usage on stderr and exit 2).

use std::process::ExitCode;

/// The positional argument `i`, named `name` in errors, parsed as `T`; `default` where it is
/// absent (`None`: required).
pub fn arg<T: std::str::FromStr>(
    args: &[String],
    i: usize,
    name: &str,
    default: Option<T>,
) -> Result<T, String> {
    match args.get(i) {
        Some(s) => s
            .parse::<T>()
            .map_err(|_| format!("{name}: cannot read {s:?}")),
        None => default.ok_or_else(|| format!("missing argument {name}")),
    }
}

/// Runs `run` on the command line's arguments: prints its line and exits 0, or prints
/// `example: error` and `usage: example USAGE` and exits 2.
pub fn main(example: &str, usage: &str, run: fn(&[String]) -> Result<String, String>) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{example}: {e}");
            eprintln!("usage: {example} {usage}");
            ExitCode::from(2)
        }
    }
}
