//! `ties`: who goes first when a packet reaches a full DropTail queue on the nanosecond a
//! transmission ends (`tfcc_sim::engine::Ties`). The set-up is 003 E3.5's 1 Mb/s phase, where
//! integer time makes such ties periodic: a 10 Mb/s and a 5 Mb/s CBR of 1000-byte packets
//! (0.8 and 1.6 ms apart) beside ns-2's TFRC on a 16 Mb/s bottleneck (0.5 ms a packet), so the
//! 10 Mb/s CBR meets a transmission end every 4 ms and the 5 Mb/s one meets the 10 Mb/s one at
//! every one of its packets. In scheduling order one side wins every such tie; ns-2.35 gives
//! this TFRC 1.026 Mb/s over 150-450 s of the full scenario (bench/ns2/e35_low_phase.tcl),
//! tfcc 1.205 in scheduling order (docs/reproductions/log/warc.md, warcfall).

use tfcc_sim::scenario::load_str;
use tfcc_sim::RunResult;

const SCENARIO: &str = r#"
duration = "60s"
measure_from = "20s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "16Mbps", delay = "30ms", queue = "droptail", limit = 192 }
access = { rate = "100Mbps", delay = "1ms", limit = 10000 }
[[flows]]
protocol = "tfrc"
packet_size = "1000B"
params = { preset = "ns2", header_size = 0 }
[[flows]]
protocol = "cbr"
packet_size = "1000B"
rate = "10Mbps"
[[flows]]
protocol = "cbr"
packet_size = "1000B"
rate = "5Mbps"
"#;

fn run(ties: Option<&str>, seed: u64) -> RunResult {
    let top = match ties {
        Some(t) => format!("ties = \"{t}\"\nseed = {seed}\n"),
        None => format!("seed = {seed}\n"),
    };
    let text = format!("{top}{SCENARIO}");
    let b = load_str(&text, "t.toml", "t", &[], None).expect("the scenario builds");
    b.into_simulation().expect("it builds").run()
}

/// Packets lost per flow, and the TFRC flow's throughput.
fn losses(r: &RunResult) -> (Vec<u64>, f64) {
    let lost = r.summary.flows.iter().map(|f| f.packets_lost).collect();
    (lost, r.summary.flows[0].throughput_bps)
}

/// Over the whole run every packet that reached the bottleneck was dropped, is waiting or
/// went on the wire, and the queue never held more than its limit, whoever won the ties.
fn conserved(r: &RunResult) {
    let l = r
        .summary
        .links
        .iter()
        .find(|l| l.name == "bottleneck")
        .unwrap();
    let t = &l.totals;
    assert_eq!(t.arrivals, t.dropped + t.waiting + t.started, "{t:?}");
    assert!(t.peak_queue_pkts <= 192, "{t:?}");
}

#[test]
fn in_scheduling_order_one_side_wins_every_tie() {
    let default = run(None, 1);
    let fifo = run(Some("fifo"), 1);
    assert_eq!(
        format!("{:?}", default.summary),
        format!("{:?}", fifo.summary),
        "fifo is the default"
    );
    conserved(&fifo);
    let (lost, _) = losses(&fifo);
    // The 5 Mb/s CBR's packets come first at every tie with the 10 Mb/s one's: never dropped.
    assert_eq!(lost[2], 0, "{lost:?}");
    assert!(lost[1] > 10 * lost[0], "{lost:?}");
}

#[test]
fn random_ties_spread_the_drops_and_follow_the_seed() {
    let (fifo_lost, fifo_x) = losses(&run(Some("fifo"), 1));
    let a = run(Some("random"), 1);
    let b = run(Some("random"), 1);
    let c = run(Some("random"), 2);
    conserved(&a);
    assert_eq!(
        format!("{:?}", a.summary.flows),
        format!("{:?}", b.summary.flows)
    );
    let (lost, x) = losses(&a);
    let (lost_c, _) = losses(&c);
    assert_ne!(lost, lost_c, "another seed draws other keys");
    // Both CBRs now take drops, and the 10 Mb/s one far fewer than when it lost every tie.
    assert!(lost[1] > 0 && lost[2] > 0, "{lost:?}");
    assert!(2 * lost[1] < fifo_lost[1], "{lost:?} against {fifo_lost:?}");
    // The phase lock's gift to the TFRC flow is gone: below scheduling order's by over 10 %,
    // within 10 % of ns-2.35's 1.026 Mb/s for the same phase of the full scenario.
    assert!(x < 0.9 * fifo_x, "{x} against {fifo_x}");
    assert!((x - 1.026e6).abs() < 0.1 * 1.026e6, "{x}");
}

#[test]
fn departures_first_frees_the_slot_before_the_tied_arrival() {
    let (fifo_lost, _) = losses(&run(Some("fifo"), 1));
    let r = run(Some("departures-first"), 1);
    conserved(&r);
    let (lost, x) = losses(&r);
    // The 10 Mb/s CBR's tied packets now find the slot a transmission end freed.
    assert!(2 * lost[1] < fifo_lost[1], "{lost:?} against {fifo_lost:?}");
    assert!((x - 1.026e6).abs() < 0.1 * 1.026e6, "{x}");
}
