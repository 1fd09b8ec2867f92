//! End-to-end runs of the access-gateway scenario (003 §4.5): MSF-RS shares the 2 Mb/s downlink
//! by the class weights where a plain gateway does not.

use tfcc_core::msfrs::MsfrsConfig;
use tfcc_core::{Dur, Time};
use tfcc_sim::web::{AccessGatewaySpec, GatewayKind, WebReport};
use tfcc_sim::{SimConfig, Simulation};

fn run(spec: &AccessGatewaySpec, secs: u64, seed: u64) -> WebReport {
    let built = spec.build(seed).unwrap();
    let cfg = SimConfig {
        duration: Dur::from_secs(secs),
        seed,
        record_series: false,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(cfg, built.topology).unwrap();
    for f in built.flows {
        sim.add_flow(f).unwrap();
    }
    sim.set_web(built.gateway);
    sim.run().web.unwrap()
}

/// Mean rate (b/s) of each class over seconds `from..to`.
fn class_rates(r: &WebReport, from: usize, to: usize) -> Vec<f64> {
    r.class_bytes
        .iter()
        .map(|row| {
            let b: u64 = row.iter().skip(from).take(to - from).sum();
            b as f64 * 8.0 / (to - from) as f64
        })
        .collect()
}

#[test]
fn msfrs_shares_by_weight_and_plain_does_not() {
    let spec = AccessGatewaySpec::default();
    let r = run(&spec, 120, 1);
    let m = class_rates(&r, 20, 120);
    let total: f64 = m.iter().sum();
    eprintln!("msfrs rates {m:?} total {total}");
    eprintln!(
        "windows {:?}",
        r.windows.iter().rev().take(3).collect::<Vec<_>>()
    );
    let plain = AccessGatewaySpec {
        gateway: GatewayKind::Plain,
        ..AccessGatewaySpec::default()
    };
    let p = class_rates(&run(&plain, 120, 1), 20, 120);
    eprintln!("plain rates {p:?}");
    // 4 : 2 : 1 within 20 %; a plain gateway within 1.5 : 1 of equal.
    assert!((m[0] / m[2] - 4.0).abs() < 0.8, "{m:?}");
    assert!((m[1] / m[2] - 2.0).abs() < 0.4, "{m:?}");
    assert!(total > 0.9 * 2e6, "{total}");
    assert!(p[0] / p[2] < 1.5 && p[2] / p[0] < 1.5, "{p:?}");
    let _ = (MsfrsConfig::default(), Time::ZERO);
}
