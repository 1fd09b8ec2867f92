//! `tfcc-net send|recv`: the transport's commands without the Python package.

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    std::process::exit(tfcc_net::cli::main_from(&argv));
}
