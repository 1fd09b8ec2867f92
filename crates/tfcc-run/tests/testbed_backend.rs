//! `tfcc run --backend testbed` end to end on real namespaces (skipped without root): one TFRC
//! and one kernel Reno flow (the scenario loader does not accept tcp-cubic yet) through a 10 Mb/s bottleneck for 10 s, summary.json checked.

use tfcc_run::cli::{run_command, Exit};

#[test]
fn the_testbed_backend_writes_a_summary_with_sane_shares() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc_geteuid() } != 0 {
        eprintln!("skipped: not root");
        return;
    }
    let dir = std::env::temp_dir().join(format!("tfcc-testbed-{}", std::process::id()));
    let scenario = dir.with_extension("toml");
    std::fs::write(
        &scenario,
        r#"
name = "testbed-smoke"
duration = "10s"
measure_from = "3s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "0ms", queue = "droptail", limit = 100 }
access = { rate = "100Mbps", delay = "0ms" }
[[flows]]
protocol = "tfrc"
[[flows]]
protocol = "tcp-reno"
"#,
    )
    .unwrap();
    let argv: Vec<String> = [
        scenario.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--backend",
        "testbed",
        "--no-plots",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let exit = run_command(&argv, None, &mut || true);
    assert_eq!(exit, Exit::Code(0));
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let flows = v["flows"].as_array().unwrap();
    let tput: Vec<f64> = flows
        .iter()
        .map(|f| f["throughput_bps"].as_f64().unwrap())
        .collect();
    eprintln!(
        "testbed summary: {tput:?}, theta {}",
        v["metrics"]["fairness_theta"]
    );
    let sum: f64 = tput.iter().sum();
    assert!((8e6..=10.2e6).contains(&sum), "{tput:?}");
    assert!(tput.iter().all(|&t| t > 0.1 * sum), "{tput:?}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&scenario);
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}
