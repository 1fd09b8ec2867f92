//! A 10 s dumbbell on real namespaces: one TFRC flow against one kernel TCP (CUBIC) flow
//! through a 10 Mb/s tbf bottleneck with a 100-packet pfifo. Skipped without root or `ip`.

use std::time::Duration;

use tfcc_core::tfrc::TfrcConfig;
use tfcc_net::testbed::{run_flows, FlowKind};

mod common;

#[test]
fn tfrc_and_kernel_tcp_share_a_10_mbps_tbf_bottleneck() {
    let Some(bed) = common::ten_mbps_dumbbell() else {
        return;
    };
    let ns = bed.sender_ns();
    let window = Duration::from_secs(7);
    let res = run_flows(
        &bed,
        &[
            (FlowKind::Tfrc(TfrcConfig::default()), Duration::ZERO),
            (FlowKind::Tcp("cubic".into()), Duration::ZERO),
        ],
        Duration::from_secs(10),
        Duration::from_secs(3),
    )
    .unwrap();
    drop(bed);
    let names = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&names.stdout).contains(&ns),
        "namespaces left behind"
    );
    let tfrc = res[0].goodput_bps(window);
    let tcp = res[1].goodput_bps(window);
    eprintln!(
        "goodput over 3-10 s: tfrc {:.3} Mb/s, tcp-cubic {:.3} Mb/s",
        tfrc / 1e6,
        tcp / 1e6
    );
    let sum = tfrc + tcp;
    // Goodput counts payload only; the bottleneck carries headers on top.
    assert!(sum <= 10e6 * 1.02, "sum {sum} above the bottleneck");
    assert!(sum >= 10e6 * 0.8, "bottleneck under-used: {sum}");
    assert!(
        tfrc > 0.1 * sum && tcp > 0.1 * sum,
        "tfrc {tfrc}, tcp {tcp}"
    );
}
