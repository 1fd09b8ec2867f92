//! tfcc's TCP-SACK against ns-2.35 run live on the same dumbbell (issue 4's cross-check):
//! utilisation within 2 %, aggregate throughput within 3 %, drop/loss counts within 15 %,
//! Jain's index within 0.05.
//!
//! Needs `ns` (`bash scripts/install-ns2.sh`; `$TFCC_NS2` names another binary) and takes a few
//! seconds, so it is ignored by default:
//!
//! ```text
//! cargo test --release -p tfcc-sim --test ns2_crosscheck -- --ignored
//! ```
//!
//! Both sides run `bench/ns2/dumbbell.tcl`'s topology with flows started evenly over the first
//! second (`start_mode=even`), so the only differences are the simulators. ns-2's `TCPSink`
//! counts the 1040 wire bytes of a segment, tfcc's goodput the 1000 payload bytes: ns-2's
//! throughput is scaled by 1000/1040 before comparing.

use std::path::PathBuf;
use std::process::Command;

use tfcc_core::tcp::{TcpConfig, Variant};
use tfcc_core::{Dur, Time};
use tfcc_sim::{DelaySpread, FlowSpec};

mod common;
use common::{dumbbell, simulation, Bottleneck};

#[derive(Debug)]
struct Outcome {
    utilization: f64,
    goodput_bps: f64,
    drops: f64,
    jain: f64,
}

struct Case {
    flows: usize,
    bps: u64,
    delay_ms: u64,
    limit: u32,
    loss: f64,
}

const CASES: [Case; 4] = [
    Case {
        flows: 1,
        bps: 2_000_000,
        delay_ms: 10,
        limit: 20,
        loss: 0.0,
    },
    Case {
        flows: 4,
        bps: 10_000_000,
        delay_ms: 30,
        limit: 50,
        loss: 0.0,
    },
    Case {
        flows: 16,
        bps: 15_000_000,
        delay_ms: 50,
        limit: 100,
        loss: 0.0,
    },
    Case {
        flows: 2,
        bps: 5_000_000,
        delay_ms: 20,
        limit: 100,
        loss: 0.01,
    },
];
const SECS: u64 = 60;

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}

fn tfcc(c: &Case) -> Outcome {
    let bottleneck = Bottleneck {
        bps: c.bps,
        delay: Dur::from_millis(c.delay_ms),
        limit: c.limit,
        loss: c.loss,
    };
    let (topo, b) = dumbbell(
        &bottleneck,
        DelaySpread::Fixed(Dur::from_millis(1)),
        c.flows,
    );
    let mut sim = simulation(topo, SECS, 1);
    for i in 0..c.flows {
        let start = Time::from_secs_f64(i as f64 / c.flows as f64);
        let cfg = TcpConfig::with_variant(Variant::Sack);
        sim.add_flow(FlowSpec::tcp(i, cfg, start, None)).unwrap();
    }
    let s = sim.run().summary;
    let l = &s.links[b];
    let thr: Vec<f64> = s.flows.iter().map(|f| f.throughput_bps).collect();
    Outcome {
        utilization: l.utilization,
        goodput_bps: thr.iter().sum(),
        drops: (l.queue_drops + l.artificial_drops) as f64,
        jain: jain(&thr),
    }
}

/// The number after `"key": ` in `s`.
fn number(s: &str, key: &str) -> f64 {
    let pat = format!("\"{key}\": ");
    let i = s
        .find(&pat)
        .unwrap_or_else(|| panic!("no {key} in ns-2 report"))
        + pat.len();
    let end = s[i..]
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | 'e' | 'E' | '+')))
        .map_or(s.len(), |e| i + e);
    s[i..end].parse().unwrap()
}

fn ns2(c: &Case, ns: &str) -> Outcome {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/ns2/dumbbell.tcl");
    let out = Command::new(ns)
        .arg(script)
        .args([
            format!("tcp={}", c.flows),
            format!("bottleneck_rate={}", c.bps),
            format!("bottleneck_delay={}", c.delay_ms as f64 / 1000.0),
            format!("limit={}", c.limit),
            format!("loss={}", c.loss),
            format!("duration={SECS}"),
            "start_mode=even".into(),
            "start_max=1".into(),
        ])
        .output()
        .expect("run ns");
    assert!(
        out.status.success(),
        "ns-2 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = String::from_utf8(out.stdout).unwrap();
    let b0 = r.find("\"bottleneck\": {").unwrap();
    let bl = &r[b0..b0 + r[b0..].find('}').unwrap()];
    let flows = &r[r.find("\"flows\": [").unwrap()..];
    let thr: Vec<f64> = flows
        .match_indices("\"throughput_bps\": ")
        .map(|(i, _)| number(&flows[i..], "throughput_bps") * 1000.0 / 1040.0)
        .collect();
    assert_eq!(thr.len(), c.flows);
    Outcome {
        utilization: number(bl, "utilization"),
        goodput_bps: thr.iter().sum(),
        drops: number(bl, "drops_pkts") + number(bl, "loss_model_drops_pkts"),
        jain: jain(&thr),
    }
}

#[test]
#[ignore = "needs ns-2; run with --ignored (see the module doc)"]
fn tcp_sack_dumbbells_agree_with_ns2() {
    let ns = std::env::var("TFCC_NS2").unwrap_or_else(|_| "ns".into());
    let mut failures = Vec::new();
    for c in &CASES {
        let (a, b) = (tfcc(c), ns2(c, &ns));
        let name = format!(
            "{} flows {} b/s {} ms limit {} loss {}",
            c.flows, c.bps, c.delay_ms, c.limit, c.loss
        );
        println!("{name}\n  tfcc {a:?}\n  ns-2 {b:?}");
        let rel = |x: f64, y: f64| (x - y).abs() / y;
        if (a.utilization - b.utilization).abs() > 0.02 {
            failures.push(format!(
                "{name}: utilisation {} vs {}",
                a.utilization, b.utilization
            ));
        }
        if rel(a.goodput_bps, b.goodput_bps) > 0.03 {
            failures.push(format!(
                "{name}: throughput {} vs {}",
                a.goodput_bps, b.goodput_bps
            ));
        }
        if rel(a.drops, b.drops) > 0.15 {
            failures.push(format!("{name}: drops {} vs {}", a.drops, b.drops));
        }
        if (a.jain - b.jain).abs() > 0.05 {
            failures.push(format!("{name}: Jain {} vs {}", a.jain, b.jain));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
