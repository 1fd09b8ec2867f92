//! End-to-end runs of the access-gateway scenario (003 §4.5–4.6): MSF-RS shares the 2 Mb/s
//! downlink by per-user weights where a plain gateway does not, freezes W+ while requests are too
//! few, and keeps the link near U+ under exceptive CBR. Shorter versions of the experiments of
//! `examples/msfrs.rs` (docs/reproductions/msfrs.md).

use tfcc_core::msfrs::MsfrsConfig;
use tfcc_core::{Dur, Rate, Time};
use tfcc_sim::web::{AccessGatewaySpec, GatewayKind, WebClass, WebReport};
use tfcc_sim::{CbrConfig, RunResult, SimConfig};

fn run(spec: &AccessGatewaySpec, secs: u64, seed: u64) -> (RunResult, WebReport) {
    let built = spec.build(seed).unwrap();
    let cfg = SimConfig {
        duration: Dur::from_secs(secs),
        measure_from: Dur::from_secs(secs / 5),
        seed,
        record_series: false,
        ..SimConfig::default()
    };
    let sim = built.into_simulation(cfg).expect("valid simulation");
    let mut r = sim.run();
    let w = r.web.take().unwrap();
    (r, w)
}

/// Three classes of `clients` users, each with 4 closed-loop request threads thinking 1 s, so
/// every class stays backlogged (see the example's comment on the load).
fn backlogged(clients: [u32; 3], active: [Vec<(u64, u64)>; 3]) -> Vec<WebClass> {
    clients
        .iter()
        .zip(active)
        .map(|(&n, a)| WebClass {
            clients: n,
            think_time: Dur::from_secs(1),
            active: a
                .into_iter()
                .map(|(x, y)| (Time::from_secs(x), Time::from_secs(y)))
                .collect(),
            parallel: 4,
        })
        .collect()
}

fn rates(w: &WebReport, from: u64, to: u64) -> Vec<f64> {
    (0..3).map(|c| w.class_rate(c, from, to)).collect()
}

fn near(x: f64, target: f64, rel: f64) -> bool {
    (x - target).abs() <= rel * target
}

#[test]
fn msfrs_shares_by_weight_and_plain_does_not() {
    let spec = AccessGatewaySpec {
        classes: backlogged([4, 4, 4], [vec![], vec![], vec![]]),
        ..AccessGatewaySpec::default()
    };
    let m = rates(&run(&spec, 150, 1).1, 30, 150);
    let total: f64 = m.iter().sum();
    assert!(near(m[0] / m[2], 4.0, 0.2), "{m:?}");
    assert!(near(m[1] / m[2], 2.0, 0.2), "{m:?}");
    // 2 Mb/s of 1040-byte packets carry at most 1.923 Mb/s of payload; U+ = 98 %.
    assert!(total > 0.9 * 1.923e6, "{total}");
    let plain = AccessGatewaySpec {
        gateway: GatewayKind::Plain,
        ..spec
    };
    let p = rates(&run(&plain, 150, 1).1, 30, 150);
    assert!(p[0] / p[2] < 1.5 && p[2] / p[0] < 1.5, "{p:?}");
}

#[test]
fn drr_at_the_user_side_gateway_finds_empty_queues_and_does_not_differentiate() {
    // §4.5.2, Fig. 4.10: DRR in place of MSF-RS at the user-side gateway. Its per-class queues
    // on the access uplink carry only ACKs (about 4 % of the downlink's bytes), so they stay
    // empty and the classes share the downlink as without a scheduler.
    let spec = AccessGatewaySpec {
        classes: backlogged([4, 4, 4], [vec![], vec![], vec![]]),
        gateway: GatewayKind::Drr {
            quantum: 1000,
            weights: vec![4.0, 2.0, 1.0],
        },
        ..AccessGatewaySpec::default()
    };
    let (r, w) = run(&spec, 150, 1);
    let d = rates(&w, 30, 150);
    assert!(d[0] / d[2] < 1.5 && d[2] / d[0] < 1.5, "{d:?}");
    let up = r
        .summary
        .links
        .iter()
        .find(|l| l.name == "access-up")
        .unwrap();
    assert!(up.mean_queue_pkts < 0.05, "{}", up.mean_queue_pkts);
    assert_eq!(up.drops, 0);
    // The downlink is as busy as with the plain gateway.
    let total: f64 = d.iter().sum();
    assert!(total > 0.9 * 1.923e6, "{total}");
}

#[test]
fn stopped_classes_leave_only_leftovers_and_idle_bandwidth_is_shared() {
    // M1's four phases (§4.5.2), 100 s each.
    let spec = AccessGatewaySpec {
        classes: backlogged(
            [4, 4, 4],
            [
                vec![(0, 100), (300, 400)],
                vec![(0, 200), (300, 400)],
                vec![],
            ],
        ),
        ..AccessGatewaySpec::default()
    };
    let (_, w) = run(&spec, 400, 1);
    let p2 = rates(&w, 120, 200);
    assert!(p2[0] < 0.05 * 2e6, "{p2:?}");
    assert!(near(p2[1] / p2[2], 2.0, 0.2), "{p2:?}");
    let p3 = rates(&w, 220, 300);
    assert!(p3[0] + p3[1] < 0.05 * 2e6 && p3[2] > 0.75 * 2e6, "{p3:?}");
    let p4 = rates(&w, 320, 400);
    assert!(near(p4[0] / p4[2], 4.0, 0.2), "{p4:?}");
}

#[test]
fn per_user_weights_hold_as_the_first_class_grows_only_with_the_uc_term() {
    // M3 (§4.5.4) with 16 users in the first class.
    let per_user = |on: bool| {
        let spec = AccessGatewaySpec {
            classes: backlogged([16, 4, 4], [vec![], vec![], vec![]]),
            gateway: GatewayKind::Msfrs(MsfrsConfig {
                per_user: on,
                ..MsfrsConfig::default()
            }),
            ..AccessGatewaySpec::default()
        };
        let r = rates(&run(&spec, 200, 1).1, 40, 200);
        (r[0] / 16.0) / (r[2] / 4.0)
    };
    let with_uc = per_user(true);
    assert!(near(with_uc, 4.0, 0.2), "{with_uc}");
    // Without UC the class shares are 4:2:1, so a first-class user gets 4/16 against 1/4.
    let without = per_user(false);
    assert!(near(without, 1.0, 0.2), "{without}");
}

#[test]
fn w_plus_is_frozen_while_classes_are_silent() {
    // M4 (§4.5.5): classes 1-2 request every 1 s, class 3 every 10 s; 1-2 silent 200-400 s.
    let class = |think: u64, active: Vec<(u64, u64)>| WebClass {
        clients: 4,
        think_time: Dur::from_secs(think),
        active: active
            .into_iter()
            .map(|(a, b)| (Time::from_secs(a), Time::from_secs(b)))
            .collect(),
        parallel: 0,
    };
    let spec = AccessGatewaySpec {
        classes: vec![
            class(1, vec![(0, 200), (400, 500)]),
            class(1, vec![(0, 200), (400, 500)]),
            class(10, vec![]),
        ],
        ..AccessGatewaySpec::default()
    };
    let (_, w) = run(&spec, 500, 1);
    let during = |a: u64, b: u64| {
        w.windows
            .iter()
            .filter(move |x| x.time > Time::from_secs(a) && x.time <= Time::from_secs(b))
    };
    let busy: Vec<f64> = during(50, 200).map(|x| x.utilization).collect();
    let u = busy.iter().sum::<f64>() / busy.len() as f64;
    assert!(u > 0.95 && u < 1.0, "{u}");
    // Once the backlog of the open-loop classes has drained, the link is underloaded and every
    // update leaves W+ where it was.
    let idle: Vec<(f64, f64)> = during(200, 400)
        .filter(|x| x.utilization < 0.5)
        .map(|x| (x.utilization, x.window_max))
        .collect();
    assert!(idle.len() >= 20, "{idle:?}");
    assert!(idle.windows(2).all(|p| p[0].1 == p[1].1), "{idle:?}");
}

#[test]
fn exceptive_cbr_leaves_the_link_near_the_target() {
    // M6 (§4.6): 0.8 Mb/s on/off CBR of no class, 40 s on, 40 s off.
    let spec = AccessGatewaySpec {
        classes: backlogged([4, 4, 4], [vec![], vec![], vec![]]),
        exceptive: Some(CbrConfig {
            rate: Rate::from_kbps(800),
            packet_size: 1000,
            on_off: Some((Dur::from_secs(40), Dur::from_secs(40))),
        }),
        exceptive_start: Time::from_secs(40),
        ..AccessGatewaySpec::default()
    };
    let (r, _) = run(&spec, 400, 1);
    let u = r
        .summary
        .links
        .iter()
        .find(|l| l.name == "access-down")
        .unwrap()
        .utilization;
    assert!(near(u, 0.98, 0.015), "{u}");
}

#[test]
fn runs_are_deterministic_and_every_request_is_accounted_for() {
    let spec = AccessGatewaySpec {
        classes: backlogged([4, 4, 4], [vec![(0, 60)], vec![], vec![(30, 90)]]),
        ..AccessGatewaySpec::default()
    };
    let (_, a) = run(&spec, 100, 7);
    let (_, b) = run(&spec, 100, 7);
    assert_eq!(a, b);
    assert_eq!(
        a.requests,
        a.transactions.len() as u64 + a.unfinished,
        "requests = finished + unfinished"
    );
    assert!(a.transactions.iter().all(|t| t.class < 3 && t.bytes > 0));
}
