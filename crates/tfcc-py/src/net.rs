//! `tfcc send` / `tfcc recv` natively (tfcc_net::cli).

use pyo3::prelude::*;

/// `tfcc COMMAND ARGV...` for COMMAND `send` or `recv`; returns the exit code. Runs with the GIL
/// released; the console script restores the default SIGINT action first, and while the flow
/// runs tfcc-net handles Ctrl-C itself (summary, exit 130).
#[pyfunction]
pub fn cli_net(py: Python<'_>, command: String, argv: Vec<String>) -> i32 {
    py.detach(|| match command.as_str() {
        "send" => tfcc_net::cli::send_command(&argv),
        "recv" => tfcc_net::cli::recv_command(&argv),
        other => {
            eprintln!("error: unknown transport command {other} (use send or recv)");
            2
        }
    })
}
