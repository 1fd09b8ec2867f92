//! End-to-end TFWC runs through the simulator (002 Ch. 4): TFWC fills a link on its own,
//! shares it with TCP-SACK within the thesis' fairness band, and keeps sending at high loss in
//! the hybrid mode where the window-only variant stalls.

use tfcc_core::tcp::{TcpConfig, Variant};
use tfcc_core::tfwc::TfwcConfig;
use tfcc_core::{Dur, Time};
use tfcc_sim::{DelaySpread, FlowSpec, RunSummary};

mod common;
use common::{dumbbell, simulation, Bottleneck};

struct Case {
    mbps: u64,
    delay_ms: u64,
    limit: u32,
    secs: u64,
    loss: f64,
    tcp: usize,
    tfwc: usize,
    cfg: TfwcConfig,
}

impl Default for Case {
    fn default() -> Self {
        Case {
            mbps: 15,
            delay_ms: 20,
            limit: 100,
            secs: 60,
            loss: 0.0,
            tcp: 0,
            tfwc: 1,
            cfg: TfwcConfig::default(),
        }
    }
}

fn run(c: Case) -> (RunSummary, usize) {
    let flows = c.tcp + c.tfwc;
    let bottleneck = Bottleneck {
        bps: c.mbps * 1_000_000,
        delay: Dur::from_millis(c.delay_ms),
        limit: c.limit,
        loss: c.loss,
    };
    let (topo, b) = dumbbell(&bottleneck, DelaySpread::Fixed(Dur::from_millis(1)), flows);
    let mut sim = simulation(topo, c.secs, 1);
    for i in 0..flows {
        let start = Time::from_secs_f64(i as f64 / flows as f64);
        let spec = if i < c.tcp {
            FlowSpec::tcp(i, TcpConfig::with_variant(Variant::Sack), start, None)
        } else {
            let cfg = TfwcConfig {
                seed: i as u64,
                ..c.cfg.clone()
            };
            FlowSpec::tfwc(i, cfg, start, None)
        };
        sim.add_flow(spec).unwrap();
    }
    (sim.run().summary, b)
}

fn bytes(s: &RunSummary, proto: &str) -> f64 {
    s.flows
        .iter()
        .filter(|f| f.protocol.starts_with(proto))
        .map(|f| f.throughput_bps)
        .sum()
}

#[test]
fn one_tfwc_flow_fills_the_link() {
    let (s, b) = run(Case::default());
    let u = s.links[b].utilization;
    assert!(u > 0.9, "utilisation {u}");
    assert!(s.flows[0].throughput_bps <= 15e6 * 1.01);
}

/// 002 Sec. 4.3 (S3): with DropTail every TFWC setting kept θ = TCP share within 0.35–0.75.
/// The thesis' queue is about one bandwidth-delay product (RTT ≈ 44 ms here), at least 15
/// packets (spec 002 §3.3).
///
/// Does not reproduce yet: measured θ = 0.774 (2+2 flows, 5 Mb/s), 0.807 (4+4, 15 Mb/s) and
/// 0.678 (8+8, 15 Mb/s). TFWC's packets are dropped about ten times as often as TCP's (5.7 %
/// against 0.5 % at 2+2), so its equation window stays small; why its arrivals meet the full
/// queue so much more often is open (issue 6). The cwnd jitter decides it: at 2+2, 5 Mb/s,
/// 28-packet queue, θ is 0.79 with the thesis' jitter, 0.76 without the force inflater, 0.78
/// with only the force inflater, and 0.24 with no jitter at all; one borrowed packet per RTT
/// arrives back-to-back with the ACK-clocked one and meets the full queue. With a 100-packet
/// queue and spread access delays the 4+4 case gives θ = 0.46. (Those numbers are 002's text,
/// now `TfwcConfig::thesis()`. With the default, Choi's ns-2.34 agent, 2+2 at 5 Mb/s gives
/// θ = 0.760: docs/reproductions/log/tfwc.md, audit of 2026-11-26.)
#[test]
#[ignore = "does not reproduce yet: θ 0.68–0.81 against the thesis' 0.35–0.75 (issue 6)"]
fn tfwc_shares_a_droptail_bottleneck_with_tcp_within_the_thesis_band() {
    for (n, mbps) in [(2, 5), (4, 15), (8, 15)] {
        let bdp = (mbps as f64 * 1e6 * 0.044 / 8000.0).round() as u32;
        let (s, b) = run(Case {
            mbps,
            limit: bdp.max(15),
            tcp: n,
            tfwc: n,
            ..Case::default()
        });
        let (tcp, tfwc) = (bytes(&s, "tcp"), bytes(&s, "tfwc"));
        let theta = tcp / (tcp + tfwc);
        assert!(
            (0.35..=0.75).contains(&theta),
            "{n}+{n} flows at {mbps} Mb/s: θ = {theta:.3}"
        );
        assert!(s.links[b].utilization > 0.9);
    }
}

/// 002 Sec. 3.2.6 / Fig. 3.5: at a loss rate where the window falls below two packets the
/// window-only TFWC waits on its timer, the hybrid TFWC keeps a paced rate.
#[test]
fn the_hybrid_mode_sends_more_than_window_only_tfwc_at_high_loss() {
    let hybrid = run(Case {
        loss: 0.15,
        mbps: 2,
        ..Case::default()
    })
    .0;
    let window_only = run(Case {
        loss: 0.15,
        mbps: 2,
        cfg: TfwcConfig {
            hybrid: false,
            ..TfwcConfig::default()
        },
        ..Case::default()
    })
    .0;
    let (h, w) = (&hybrid.flows[0], &window_only.flows[0]);
    assert!(
        w.timeouts > h.timeouts,
        "timeouts {} vs {}",
        w.timeouts,
        h.timeouts
    );
    assert!(
        h.throughput_bps > w.throughput_bps,
        "hybrid {} vs window-only {}",
        h.throughput_bps,
        w.throughput_bps
    );
}
