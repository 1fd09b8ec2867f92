//! Measures the delay/loss relay (bench/RESULTS.md): one kernel TCP (CUBIC) flow through a tbf
//! bottleneck of the given rate with 20 ms each way in the relay (40 ms RTT) for the given
//! time; prints goodput, the relay's CPU share and CPU per Mb/s relayed, and its release
//! lateness p50 / p99 / max. Needs root.
//!
//! `cargo run --release -p tfcc-net --example relay_bench -- 100 15` (Mb/s, seconds)

use std::time::Duration;

use tfcc_core::{Dur, Rate};
use tfcc_net::relay::{FlowPath, RelayConfig};
use tfcc_net::testbed::{flow_port, run_flows, Bottleneck, Dumbbell, FlowKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mbps: u64 = args.get(1).map_or(Ok(10), |a| a.parse())?;
    let secs: u64 = args.get(2).map_or(Ok(15), |a| a.parse())?;
    // One bandwidth-delay product of buffer (at least 100 packets).
    let limit = ((mbps * 1_000_000 / 8 * 40 / 1000) / 1500).max(100) as u32;
    let bed = Dumbbell::new(Bottleneck::symmetric(Rate::from_mbps(mbps), limit))?;
    let relay = bed.start_relay(RelayConfig {
        flows: vec![FlowPath {
            port: flow_port(0),
            forward: Dur::from_millis(20),
            reverse: Dur::from_millis(20),
            proto: None,
        }],
        default_delay: Dur::from_millis(20),
        ..RelayConfig::default()
    })?;
    let dur = Duration::from_secs(secs);
    let res = run_flows(
        &bed,
        &[(
            FlowKind::Tcp {
                cc: "cubic".into(),
                mss: None,
            },
            Duration::ZERO,
        )],
        dur,
        Duration::from_secs(2),
    )?;
    let st = relay.stop()?;
    drop(bed);
    let goodput = res[0].goodput_bps(dur - Duration::from_secs(2)) / 1e6;
    let relayed_mbps = st.bytes as f64 * 8.0 / st.wall.as_secs_f64() / 1e6;
    println!(
        "bottleneck {mbps} Mb/s, queue {limit} pkts, RTT 40 ms: goodput {goodput:.2} Mb/s; relay \
         {} pkts ({relayed_mbps:.1} Mb/s both directions), CPU {:.1} % of a core = {:.2} % per \
         Mb/s, lateness p50 {:.3} p99 {:.3} p99.9 {:.3} max {:.3} ms, SCHED_FIFO {}, overflow {}",
        st.forwarded,
        100.0 * st.cpu_share(),
        100.0 * st.cpu_share() / relayed_mbps.max(1e-9),
        st.lateness.quantile(0.5).as_millis_f64(),
        st.lateness.quantile(0.99).as_millis_f64(),
        st.lateness.quantile(0.999).as_millis_f64(),
        st.lateness.max().as_millis_f64(),
        st.realtime,
        st.overflow
    );
    Ok(())
}
