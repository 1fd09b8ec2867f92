//! `tfcc-run`: the native `tfcc run` command as its own executable.
//!
//! The `tfcc` console script replaces itself with this program for `tfcc run` (`exec`, see
//! `python/tfcc/entry.py`), so a run carries neither the Python interpreter's memory nor its
//! import time; issue 4 compares both with ns-2. Arguments are those of `tfcc run`; the
//! environment variable `TFCC_FONT` names the TrueType font for the plot text.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT or SIGTERM; polled by a simulation about a hundred times and by a testbed run
/// every 10 ms, which then stops without writing (a testbed run first removes its namespaces).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::Relaxed);
}

fn main() {
    // SAFETY: installs a handler that only stores to an atomic, which is async-signal-safe.
    unsafe {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            libc::signal(
                sig,
                on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
    // Lossy rather than `args()`, which panics on arguments that are not UTF-8.
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let font = std::env::var_os("TFCC_FONT").map(std::path::PathBuf::from);
    let mut keep_going = || !INTERRUPTED.load(Ordering::Relaxed);
    match tfcc_run::cli::run_command(&argv, font.as_deref(), &mut keep_going) {
        tfcc_run::cli::Exit::Code(c) => std::process::exit(c),
        tfcc_run::cli::Exit::Interrupted => {
            eprintln!("interrupted");
            std::process::exit(130)
        }
    }
}
