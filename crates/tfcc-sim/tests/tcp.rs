//! End-to-end TCP runs through the simulator: the ns-2 TCP agents on a dumbbell fill the
//! link, share it fairly and recover from random loss, and each variant behaves as its ns-2
//! counterpart does relative to the others.

use tfcc_core::tcp::{TcpConfig, Variant};
use tfcc_core::{Dur, Time};
use tfcc_sim::{DelaySpread, FlowSpec, RunSummary};

mod common;
use common::{dumbbell, simulation, Bottleneck};

/// The `bench/ns2/dumbbell.tcl` dumbbell: 100 Mb/s, 1 ms access links with large buffers,
/// flows started evenly over the first second, the first fifth of the run not measured.
fn run_tcp(
    variant: Variant,
    flows: usize,
    mbps: u64,
    delay_ms: u64,
    limit: u32,
    secs: u64,
    loss: f64,
) -> (RunSummary, usize) {
    let bottleneck = Bottleneck {
        bps: mbps * 1_000_000,
        delay: Dur::from_millis(delay_ms),
        limit,
        loss,
    };
    let (topo, b) = dumbbell(&bottleneck, DelaySpread::Fixed(Dur::from_millis(1)), flows);
    let mut sim = simulation(topo, secs, 1);
    for i in 0..flows {
        let start = Time::from_secs_f64(i as f64 / flows as f64);
        let cfg = TcpConfig::with_variant(variant);
        sim.add_flow(FlowSpec::tcp(i, cfg, start, None)).unwrap();
    }
    (sim.run().summary, b)
}

#[test]
fn one_sack_flow_fills_a_2mbps_link() {
    let (s, b) = run_tcp(Variant::Sack, 1, 2, 10, 20, 60, 0.0);
    let l = &s.links[b];
    assert!(l.utilization > 0.95, "utilisation {}", l.utilization);
    let f = &s.flows[0];
    assert_eq!(f.protocol, "tcp-sack");
    // Goodput is payload: at most 1000/1040 of the link, plus what was already queued or in
    // flight when the 48 s window opened (at most the 20-packet buffer and the ~6-packet pipe).
    let cap = 2e6 * 1000.0 / 1040.0;
    assert!(
        f.throughput_bps <= cap + 30.0 * 8000.0 / 48.0,
        "{}",
        f.throughput_bps
    );
    assert!(f.throughput_bps > 0.95 * 2e6 * 1000.0 / 1040.0);
    // A 20-packet buffer on a 2 Mb/s, ~24 ms path overflows now and then; SACK repairs each
    // loss without a timeout, and every drop is retransmitted once.
    assert!(l.queue_drops > 10);
    assert_eq!(f.timeouts, 0);
    assert!(f.retransmits.abs_diff(l.queue_drops) <= 2);
}

#[test]
fn two_flows_share_fairly_for_every_variant() {
    for v in [Variant::Reno, Variant::NewReno, Variant::Sack] {
        let (s, b) = run_tcp(v, 2, 10, 20, 50, 40, 0.0);
        let jain = s.jain_index.unwrap();
        assert!(jain > 0.95, "{v:?}: Jain {jain}");
        assert!(
            s.links[b].utilization > 0.9,
            "{v:?}: {}",
            s.links[b].utilization
        );
    }
}

#[test]
fn under_random_loss_sack_recovers_with_fewer_timeouts_than_reno() {
    let (reno, _) = run_tcp(Variant::Reno, 2, 5, 20, 100, 60, 0.02);
    let (sack, _) = run_tcp(Variant::Sack, 2, 5, 20, 100, 60, 0.02);
    let to = |s: &RunSummary| s.flows.iter().map(|f| f.timeouts).sum::<u64>();
    let thr = |s: &RunSummary| s.flows.iter().map(|f| f.throughput_bps).sum::<f64>();
    assert!(
        to(&sack) < to(&reno),
        "timeouts: SACK {} vs Reno {}",
        to(&sack),
        to(&reno)
    );
    assert!(
        thr(&sack) > thr(&reno),
        "goodput: SACK {} vs Reno {}",
        thr(&sack),
        thr(&reno)
    );
}

#[test]
fn tcp_flows_conserve_packets() {
    let (s, _) = run_tcp(Variant::NewReno, 4, 10, 30, 50, 20, 0.005);
    for f in &s.flows {
        let t = f.totals;
        assert_eq!(
            t.data_sent,
            t.data_delivered + t.data_dropped + t.data_in_flight
        );
        assert_eq!(
            t.feedback_sent,
            t.feedback_delivered + t.feedback_dropped + t.feedback_in_flight
        );
        assert!(t.feedback_sent > 0);
    }
}

#[test]
fn tcp_runs_are_deterministic() {
    let a = run_tcp(Variant::Sack, 3, 10, 20, 30, 10, 0.01);
    let b = run_tcp(Variant::Sack, 3, 10, 20, 30, 10, 0.01);
    assert_eq!(a.0, b.0);
}
