//! `tfcc-run`: the native `tfcc run` command as its own executable.
//!
//! The `tfcc` console script replaces itself with this program for `tfcc run` (`exec`, see
//! `python/tfcc/entry.py`), so a run carries neither the Python interpreter's memory nor its
//! import time; issue 4 compares both with ns-2. Arguments are those of `tfcc run`; the
//! environment variable `TFCC_FONT` names the TrueType font for the plot text.

use tfcc_net::stop_signal::{self, StopSignals};

fn main() {
    // Ctrl-C and SIGTERM are polled by a simulation about a hundred times and by a testbed run
    // every 10 ms, which then stops without writing (a testbed run first removes its
    // namespaces); the exit status is then 128 + the signal.
    let _signals = StopSignals::install();
    // Lossy rather than `args()`, which panics on arguments that are not UTF-8.
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let font = std::env::var_os("TFCC_FONT").map(std::path::PathBuf::from);
    let mut keep_going = || stop_signal::stopped_by().is_none();
    match tfcc_run::cli::run_command(&argv, font.as_deref(), &mut keep_going) {
        tfcc_run::cli::Exit::Code(c) => std::process::exit(c),
        tfcc_run::cli::Exit::Interrupted => {
            let sig = stop_signal::stopped_by().unwrap_or(libc::SIGINT);
            eprintln!("{}", stop_signal::stop_word(sig));
            std::process::exit(stop_signal::exit_status(sig))
        }
    }
}
