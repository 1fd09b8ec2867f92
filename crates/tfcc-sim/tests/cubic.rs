//! End-to-end CUBIC runs (RFC 9438, `tfcc_core::tcp::cubic`): one CUBIC flow alone fills its
//! link; against a SACK Reno flow it takes more than Reno at a large bandwidth-delay product
//! (the RFC's motivation, §1 and §5.1: Reno's linear growth is too slow there) and about
//! Reno's share at a small one (the Reno-friendly region, §4.3). DropTail buffers of one BDP,
//! 1000-byte segments, no delayed ACKs, access delays spread over 0.5-4.5 ms.
//!
//! With two flows of nearly equal RTT a DropTail dumbbell locks one of them out whatever they
//! run (Reno against Reno at 10 Mb/s, 10 ms: 1.1 against 8.5 Mb/s, 36 timeouts), so the
//! shares are taken over two CUBIC and two Reno flows, interleaved, against the same four
//! places all running Reno. Measured (2026-11-26, 120 s): CUBIC's share 0.992 at 100 Mb/s,
//! 50 ms (Reno in its places 0.335); 0.410 at 10 Mb/s, 10 ms (0.324); alone on 20 Mb/s, 30 ms
//! it delivers 19.23 of 19.23 Mb/s of payload.

use tfcc_core::tcp::{Congestion, CubicConfig, TcpConfig, Variant};
use tfcc_core::{Dur, Time};
use tfcc_sim::{DelaySpread, FlowSpec};

mod common;
use common::{dumbbell, simulation, Bottleneck};

fn cubic() -> TcpConfig {
    TcpConfig {
        congestion: Congestion::Cubic(CubicConfig::default()),
        ..TcpConfig::with_variant(Variant::Sack)
    }
}

/// Throughput (b/s) of each flow, in the order given, on a bottleneck of `bps` and one-way
/// `delay_ms` with a buffer of one BDP at the base RTT.
fn run(bps: u64, delay_ms: u64, cfgs: &[TcpConfig], secs: u64) -> Vec<f64> {
    let rtt = 2.0 * delay_ms as f64 / 1000.0 + 0.004;
    let bdp = (bps as f64 * rtt / (1040.0 * 8.0)).ceil() as u32;
    let b = Bottleneck {
        bps,
        delay: Dur::from_millis(delay_ms),
        limit: bdp.max(4),
        loss: 0.0,
    };
    let access = DelaySpread::Uniform {
        lo: Dur::from_micros(500),
        hi: Dur::from_micros(4500),
    };
    let (topo, _) = dumbbell(&b, access, cfgs.len());
    let mut sim = simulation(topo, secs, 1);
    for (i, cfg) in cfgs.iter().enumerate() {
        let start = Time::from_secs_f64(0.37 * i as f64);
        sim.add_flow(FlowSpec::tcp(i, cfg.clone(), start, None))
            .unwrap();
    }
    let s = sim.run().summary;
    for f in &s.flows {
        println!(
            "  {} {:.3} Mb/s sent {} lost {} timeouts {} rtt {:?}",
            f.protocol,
            f.throughput_bps / 1e6,
            f.packets_sent,
            f.packets_lost,
            f.timeouts,
            f.mean_rtt_s
        );
    }
    s.flows.iter().map(|f| f.throughput_bps).collect()
}

/// One CUBIC flow on 20 Mb/s, 30 ms one way: at least 90 % of the payload rate.
#[test]
fn one_cubic_flow_fills_the_link() {
    let t = run(20_000_000, 30, &[cubic()], 60);
    let payload = 20e6 * 1000.0 / 1040.0;
    println!(
        "cubic alone: {:.2} Mb/s of {:.2}",
        t[0] / 1e6,
        payload / 1e6
    );
    assert!(t[0] > 0.9 * payload, "{} of {payload}", t[0]);
}

/// CUBIC's share of what two CUBIC and two SACK Reno flows got together (interleaved, so
/// both kinds see the same spread of access delays), and the same positions' share when all
/// four run Reno (the baseline: what a Reno flow in CUBIC's places would get).
fn cubic_share(bps: u64, delay_ms: u64, secs: u64) -> (f64, f64) {
    let reno = TcpConfig::with_variant(Variant::Sack);
    let share = |t: Vec<f64>| (t[0] + t[2]) / t.iter().sum::<f64>();
    let mixed = run(
        bps,
        delay_ms,
        &[cubic(), reno.clone(), cubic(), reno.clone()],
        secs,
    );
    let base = run(
        bps,
        delay_ms,
        &[reno.clone(), reno.clone(), reno.clone(), reno],
        secs,
    );
    (share(mixed), share(base))
}

/// Large BDP (100 Mb/s, 50 ms one way: ~1250 packets): CUBIC takes more than Reno, well above
/// the half that Reno flows in its places get.
#[test]
fn cubic_takes_more_than_reno_at_a_large_bdp() {
    let (share, base) = cubic_share(100_000_000, 50, 120);
    println!("cubic share at large BDP: {share:.3} (reno in its places {base:.3})");
    assert!(share > 0.6, "CUBIC share {share}, Reno baseline {base}");
}

/// Small BDP (10 Mb/s, 10 ms one way: ~30 packets): the Reno-friendly region (§4.3) holds
/// CUBIC near Reno's share, within 0.1 of what Reno flows in its places get.
#[test]
fn cubic_is_reno_friendly_at_a_small_bdp() {
    let (share, base) = cubic_share(10_000_000, 10, 120);
    println!("cubic share at small BDP: {share:.3} (reno in its places {base:.3})");
    assert!(
        (share - base).abs() <= 0.1,
        "CUBIC share {share}, Reno baseline {base}"
    );
}
