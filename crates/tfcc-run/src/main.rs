//! `tfcc-run`: the native `tfcc run` command as its own executable.
//!
//! The `tfcc` console script replaces itself with this program for `tfcc run` (`exec`, see
//! `python/tfcc/entry.py`), so a run carries neither the Python interpreter's memory nor its
//! import time; issue 4 compares both with ns-2. Arguments are those of `tfcc run`; the
//! environment variable `TFCC_FONT` names the TrueType font for the plot text.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal (SIGINT or SIGTERM) that asked the run to stop, 0 until one does; polled by a
/// simulation about a hundred times and by a testbed run every 10 ms, which then stops without
/// writing (a testbed run first removes its namespaces). The exit status is then the shell's
/// 128 + signal (130 for Ctrl-C, 143 for SIGTERM), so a supervisor can tell the two apart.
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOPPED_BY.store(sig, Ordering::Relaxed);
}

fn main() {
    // SAFETY: installs a handler that only stores to an atomic, which is async-signal-safe.
    unsafe {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            libc::signal(
                sig,
                on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
    // Lossy rather than `args()`, which panics on arguments that are not UTF-8.
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let font = std::env::var_os("TFCC_FONT").map(std::path::PathBuf::from);
    let mut keep_going = || STOPPED_BY.load(Ordering::Relaxed) == 0;
    match tfcc_run::cli::run_command(&argv, font.as_deref(), &mut keep_going) {
        tfcc_run::cli::Exit::Code(c) => std::process::exit(c),
        tfcc_run::cli::Exit::Interrupted => {
            let sig = STOPPED_BY.load(Ordering::Relaxed);
            eprintln!(
                "{}",
                if sig == libc::SIGTERM {
                    "terminated"
                } else {
                    "interrupted"
                }
            );
            std::process::exit(128 + if sig == 0 { libc::SIGINT } else { sig })
        }
    }
}
