//! Ctrl-C and SIGTERM as a stop request that long-running commands poll (`tfcc send`/`recv`
//! between session steps, `tfcc run` inside the simulation and the testbed run), so they stop
//! cleanly (summary printed, namespaces removed, nothing half-written) and exit with the shell's
//! 128 + signal: 130 for Ctrl-C, 143 for SIGTERM, which lets a supervisor tell the two apart.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked to stop, 0 until one does.
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOPPED_BY.store(sig, Ordering::Relaxed);
}

/// SIGINT and SIGTERM handlers for as long as this lives; the previous ones are put back when
/// it is dropped.
pub struct StopSignals {
    previous: [libc::sighandler_t; 2],
}

impl StopSignals {
    /// Installs the handlers and clears any earlier stop request.
    pub fn install() -> StopSignals {
        STOPPED_BY.store(0, Ordering::Relaxed);
        let handler = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let previous = unsafe {
            [
                libc::signal(libc::SIGINT, handler),
                libc::signal(libc::SIGTERM, handler),
            ]
        };
        StopSignals { previous }
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        // SAFETY: puts back the handlers `signal` returned in `install`.
        unsafe {
            libc::signal(libc::SIGINT, self.previous[0]);
            libc::signal(libc::SIGTERM, self.previous[1]);
        }
    }
}

/// The signal that asked to stop, if one did.
pub fn stopped_by() -> Option<i32> {
    match STOPPED_BY.load(Ordering::Relaxed) {
        0 => None,
        sig => Some(sig),
    }
}

/// The exit status of a command stopped by `sig`: 128 + `sig`, as a shell reports it.
pub fn exit_status(sig: i32) -> i32 {
    128 + sig
}

/// What a stopped command says on stderr: "terminated" for SIGTERM, else "interrupted".
pub fn stop_word(sig: i32) -> &'static str {
    if sig == libc::SIGTERM {
        "terminated"
    } else {
        "interrupted"
    }
}
