//! `tfcc run --backend testbed` end to end on real namespaces (skipped without root): one TFRC
//! and one kernel CUBIC flow through a 10 Mb/s bottleneck with a 40 ms RTT (18 ms bottleneck
//! and 1 ms access links each way, held by the TUN relay) for 10 s; summary.json and the time
//! series checked.

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
bottleneck = { rate = "10Mbps", delay = "18ms", queue = "droptail", limit = 100 }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "tfrc"
[[flows]]
protocol = "tcp-cubic"
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
    assert_eq!(flows[1]["protocol"], "tcp-cubic");
    // The link's bytes are counted over the window only (tc read at its start and end): the
    // half second of queue draining after the run once pushed this above 1.
    let u = v["links"][0]["utilization"].as_f64().unwrap();
    assert!((0.9..=1.01).contains(&u), "utilisation {u}");
    // Both flows report an RTT of at least the 40 ms path; TFRC also its loss event rate.
    for f in flows {
        let rtt = f["mean_rtt_s"].as_f64().unwrap_or(0.0);
        assert!((0.04..1.0).contains(&rtt), "{f}");
    }
    assert!(
        flows[0]["loss_event_rate"].as_f64().is_some(),
        "{}",
        flows[0]
    );
    assert!(flows[1]["loss_event_rate"].is_null(), "{}", flows[1]);
    // One row per flow per 100 ms sample: the time series is no longer empty.
    let series = std::fs::metadata(dir.join("timeseries.parquet"))
        .unwrap()
        .len();
    assert!(series > 1000, "timeseries.parquet is {series} bytes");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&scenario);
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}
