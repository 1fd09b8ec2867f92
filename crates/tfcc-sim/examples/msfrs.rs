//! The MSF-RS experiments of 003 §4.5–4.6 (M1–M6) on the access-gateway simulation, printed as
//! tables: `cargo run --release -p tfcc-sim --example msfrs [-- --quick] [--seed N]
//! [--tcp ns-2.35] [--per-server] [--merge at-arrival|at-release] [--m1] [--m2] [--m2-claim]`.
//!
//! The detailed tables of docs/reproductions/log/msfrs.md come from this program; the pass/fail
//! claims are `tfcc reproduce msfrs` (scenarios/reproduce/msfrs.toml, on the scenario files
//! scenarios/003-msfrs-*.toml).

use tfcc_core::msfrs::MsfrsConfig;
use tfcc_core::{Dur, Rate, Time};
use tfcc_sim::scenario::protocols::TcpDefaults;
use tfcc_sim::web::{
    AccessGatewaySpec, Connections, GatewayKind, MergePending, WebClass, WebReport,
};
use tfcc_sim::{CbrConfig, RunResult, SimConfig};

fn run(
    spec: &AccessGatewaySpec,
    secs: u64,
    measure_from: u64,
    seed: u64,
) -> (RunResult, WebReport) {
    let built = spec.build(seed).expect("valid spec");
    let cfg = SimConfig {
        duration: Dur::from_secs(secs),
        measure_from: Dur::from_secs(measure_from),
        seed,
        record_series: false,
        ..SimConfig::default()
    };
    let sim = built.into_simulation(cfg).expect("valid simulation");
    let mut r = sim.run();
    let w = r.web.take().expect("web report");
    (r, w)
}

fn access_util(r: &RunResult) -> f64 {
    r.summary
        .links
        .iter()
        .find(|l| l.name == "access-down")
        .map_or(f64::NAN, |l| l.utilization)
}

fn access_drops(r: &RunResult) -> u64 {
    r.summary
        .links
        .iter()
        .find(|l| l.name == "access-down")
        .map_or(0, |l| l.drops)
}

fn msfrs(f: impl FnOnce(&mut MsfrsConfig)) -> GatewayKind {
    let mut c = MsfrsConfig::default();
    f(&mut c);
    GatewayKind::Msfrs(c)
}

fn classes(think: [u64; 3], active: [Vec<(u64, u64)>; 3], parallel: u32) -> Vec<WebClass> {
    think
        .iter()
        .zip(active)
        .map(|(&t, a)| WebClass {
            clients: 4,
            think_time: Dur::from_millis(t),
            parallel,
            active: a
                .into_iter()
                .map(|(x, y)| (Time::from_secs(x), Time::from_secs(y)))
                .collect(),
        })
        .collect()
}

/// M2, mean latency with and without MSF-RS (§4.5.3, Fig. 4.11) under a closed-loop and an
/// open-loop load.
fn m2(base: &AccessGatewaySpec, secs: u64, seed: u64, par: u32, think: u64, think_stable: u64) {
    for (load, cls) in [
        (
            format!("closed loop, {par} threads x {think} ms"),
            classes([think; 3], [vec![], vec![], vec![]], par),
        ),
        (
            format!("open loop, {think_stable} ms"),
            classes([think_stable; 3], [vec![], vec![], vec![]], 0),
        ),
    ] {
        println!("\n## M2 latency, {load}, {secs} s (arrivals 50 s to end - 100 s), seconds");
        let mut lat = Vec::new();
        for (name, gw) in [("MSF-RS", msfrs(|_| {})), ("plain", GatewayKind::Plain)] {
            let spec = AccessGatewaySpec {
                classes: cls.clone(),
                gateway: gw,
                ..base.clone()
            };
            let (r, w) = run(&spec, secs, 50, seed);
            // Only transactions that arrived early enough to finish count; unfinished are reported.
            let (from, to) = (Time::from_secs(50), Time::from_secs(secs - 100));
            let all = w.latency(None, from, to);
            let per: Vec<f64> = (0..3)
                .map(|c| w.latency(Some(c), from, to).active)
                .collect();
            println!(
                "{name}: T_a {:.2} (T_q {:.2}, T_s {:.2}), n = {}, per class {:.2} / {:.2} / {:.2}; unfinished {} of {}; util {:.4}; drops {}; {}",
                all.active, all.queued, all.service, all.count, per[0], per[1], per[2],
                w.unfinished, w.requests, access_util(&r), access_drops(&r), transfers(&w)
            );
            lat.push((all.active, all.service));
        }
        println!(
            "reduction {:.1} %; MSF-RS / plain: T_a {:.3}, T_s {:.3}",
            (1.0 - lat[0].0 / lat[1].0) * 100.0,
            lat[0].0 / lat[1].0,
            lat[0].1 / lat[1].1
        );
    }
}

/// Transfers (requests forwarded to a server) per request, and requests merged into another's
/// transfer ([`MergePending`]).
fn transfers(w: &WebReport) -> String {
    format!(
        "transfers/request {:.3} ({} transfers, {} merged)",
        w.transfers as f64 / (w.transfers + w.merged).max(1) as f64,
        w.transfers,
        w.merged
    )
}

/// M2 as the claim runs it (scenarios/reproduce/msfrs.toml, m2-latency-reduction on
/// scenarios/003-msfrs-m1.toml): M1's load (8 closed-loop threads per client, 1 s think
/// times), every class active for the 400 s run, the transactions arriving in the first
/// 200 s phase, each followed to its end.
fn m2_claim(base: &AccessGatewaySpec, seed: u64) {
    println!("\n## M2 as the claim runs it: 8 threads x 1000 ms, 400 s, arrivals 0-200 s, seconds");
    let mut lat = Vec::new();
    for (name, gw) in [("MSF-RS", msfrs(|_| {})), ("plain", GatewayKind::Plain)] {
        let spec = AccessGatewaySpec {
            classes: classes([1000; 3], [vec![], vec![], vec![]], 8),
            gateway: gw,
            ..base.clone()
        };
        let (r, w) = run(&spec, 400, 0, seed);
        let all = w.latency(None, Time::ZERO, Time::from_secs(200));
        println!(
            "{name}: T_a {:.2} (T_q {:.2}, T_s {:.2}), n = {}; util {:.4}; drops {}; {}",
            all.active,
            all.queued,
            all.service,
            all.count,
            access_util(&r),
            access_drops(&r),
            transfers(&w)
        );
        lat.push((all.active, all.service));
    }
    println!(
        "MSF-RS / plain: T_a {:.4}, T_s {:.4}",
        lat[0].0 / lat[1].0,
        lat[0].1 / lat[1].1
    );
}

/// M1: four phases of `phase` s (§4.5.2), MSF-RS against the plain gateway.
fn m1(base: &AccessGatewaySpec, phase: u64, think: u64, par: u32, seed: u64) {
    println!("## M1 weighted sharing, {phase} s phases, Mb/s per class (ratio to class 3)");
    let p = phase;
    let m1_classes = classes(
        [think; 3],
        [
            vec![(0, p), (3 * p, 4 * p)],
            vec![(0, 2 * p), (3 * p, 4 * p)],
            vec![],
        ],
        par,
    );
    for (name, gw) in [("MSF-RS", msfrs(|_| {})), ("plain", GatewayKind::Plain)] {
        let spec = AccessGatewaySpec {
            classes: m1_classes.clone(),
            gateway: gw,
            ..base.clone()
        };
        let (_, w) = run(&spec, 4 * p, 0, seed);
        for ph in 0..4 {
            // Skip the first 20 s of each phase (W+ settling, leftovers of stopped classes).
            let (a, b) = (ph * p + 20, (ph + 1) * p);
            let r: Vec<f64> = (0..3)
                .map(|c| w.class_rate(c as usize, a, b) / 1e6)
                .collect();
            println!(
                "{name} P{}: {:.3} {:.3} {:.3}  ratio {:.2} : {:.2} : 1",
                ph + 1,
                r[0],
                r[1],
                r[2],
                r[0] / r[2],
                r[1] / r[2]
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // `--seed N` (default 1) for every run.
    let seed: u64 = args
        .iter()
        .position(|a| a == "--seed")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    // `--per-server`: ns-2 HTTP/Cache's one connection per server (`Connections::PerServer`)
    // in every run; `--m2`: only M2.
    // `--tcp ns-2.35`: the servers' TCP on ns-2.35's Agent/TCP defaults, for comparison. The
    // default is ns-2.1b9's (1 s minimum RTO, 6 s initial RTO, no 60 s RTO cap, whole-segment
    // decrease), the ns-2 that thesis 003 ran (003 Sec. 5) and the one every thesis-003
    // scenario file sets (`tcp_defaults = "ns-2.1b9"`), so these tables and `tfcc reproduce
    // msfrs` run the same TCP.
    let tcp_defaults = match args
        .iter()
        .position(|a| a == "--tcp")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
    {
        None | Some("ns-2.1b9") => TcpDefaults::Ns2_1b9,
        Some("ns-2.35") => TcpDefaults::Ns2_35,
        Some(other) => panic!("--tcp takes ns-2.1b9 or ns-2.35, not {other}"),
    };
    let mut base = AccessGatewaySpec {
        connections: if args.iter().any(|a| a == "--per-server") {
            Connections::PerServer
        } else {
            Connections::PerPair
        },
        // `--merge at-arrival|at-release`: ns-2 HTTP/Cache's merging of requests for a
        // pending page (`MergePending`), off by default.
        merge_pending: match args
            .iter()
            .position(|a| a == "--merge")
            .and_then(|i| args.get(i + 1))
            .map(String::as_str)
        {
            None | Some("off") => MergePending::Off,
            Some("at-arrival") => MergePending::AtArrival,
            Some("at-release") => MergePending::AtRelease,
            Some(other) => panic!("--merge takes off, at-arrival or at-release, not {other}"),
        },
        ..AccessGatewaySpec::default()
    };
    tcp_defaults.apply(&mut base.tcp);
    println!(
        "# merging of requests for a pending page: {:?}",
        base.merge_pending
    );
    if args.iter().any(|a| a == "--m2-claim") {
        m2_claim(&base, seed);
        return;
    }
    println!("# servers' TCP: {tcp_defaults:?} defaults");
    let phase = if quick { 100 } else { 200 };
    // The load. 003 §4.5.1 gives each client exponential inter-request times of mean 5 s, which
    // offers 12 × 27.7 kB / 5 s = 0.53 Mb/s and backlogs nothing (spec 003 §5.3 [AMBIGUITY]).
    // For the "backlogged" experiments each client here runs 4 closed-loop request threads
    // (a browser's parallel connections) with 1 s think times (§4.5.5's rate): at most 16
    // requests per class in the gateway, far more than the 4/7 of W+ ≈ 12 the first class
    // can have outstanding, so every class stays backlogged, and a stopped class leaves only
    // its unfinished transactions.
    // `--threads N --think MS` override them (M2 with ns-2's single-page `PagePool/Math`,
    // one 5 s request stream per server: `--threads 12 --think 5000`).
    let num = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let think = num("--think").unwrap_or(1000);
    let par = num("--threads").map_or(4, |n| n as u32);
    // An open-loop load below capacity for a second latency comparison: 1.6 s offers
    // 1.66 Mb/s, 85 % of the 1.96 Mb/s of payload the link carries.
    let think_stable = 1600;
    let only_m2 = args.iter().any(|a| a == "--m2");
    if !only_m2 {
        m1(&base, phase, think, par, seed);
        if args.iter().any(|a| a == "--m1") {
            return;
        }
    }

    // M2: latency (§4.5.3), the P1 scenario.
    m2(
        &base,
        if quick { 400 } else { 1000 },
        seed,
        par,
        think,
        think_stable,
    );
    if only_m2 {
        return;
    }

    // M3: user-based fairness (§4.5.4).
    let secs = if quick { 200 } else { 800 };
    println!("\n## M3 per-user rate, kb/s, class-1 users 4..24, {secs} s");
    for per_user in [true, false] {
        for n in [4u32, 8, 16, 24] {
            let mut cl = classes([think; 3], [vec![], vec![], vec![]], par);
            cl[0].clients = n;
            let spec = AccessGatewaySpec {
                classes: cl,
                gateway: msfrs(|c| c.per_user = per_user),
                ..base.clone()
            };
            let (_, w) = run(&spec, secs, 0, seed);
            let per_class_user: Vec<f64> = (0..3)
                .map(|c| {
                    let users = w.user_class.iter().filter(|&&x| x == c).count() as f64;
                    w.class_rate(c, 50, secs) / users / 1e3
                })
                .collect();
            println!(
                "UC {}: {n:2} users: {:.1} {:.1} {:.1}  ratio {:.2} : {:.2} : 1",
                if per_user { "on " } else { "off" },
                per_class_user[0],
                per_class_user[1],
                per_class_user[2],
                per_class_user[0] / per_class_user[2],
                per_class_user[1] / per_class_user[2]
            );
        }
    }

    // M4: W+ while classes are silent (§4.5.5).
    let (len, s0, s1) = if quick {
        (900, 300, 600)
    } else {
        (1500, 500, 1000)
    };
    println!("\n## M4 classes 1-2 every 1 s, class 3 every 10 s; 1-2 silent {s0}-{s1} s");
    let spec = AccessGatewaySpec {
        classes: classes(
            [1000, 1000, 10_000],
            [vec![(0, s0), (s1, len)], vec![(0, s0), (s1, len)], vec![]],
            0,
        ),
        ..base.clone()
    };
    let (_, w) = run(&spec, len, 0, seed);
    let seg = |a: u64, b: u64| {
        let v: Vec<_> = w
            .windows
            .iter()
            .filter(|x| x.time > Time::from_secs(a) && x.time <= Time::from_secs(b))
            .collect();
        let u = v.iter().map(|x| x.utilization).sum::<f64>() / v.len().max(1) as f64;
        let lo = v.iter().map(|x| x.window_max).fold(f64::INFINITY, f64::min);
        let hi = v.iter().map(|x| x.window_max).fold(0.0, f64::max);
        (u, lo, hi)
    };
    for (a, b) in [(50, s0), (s0 + 20, s1), (s1 + 20, len)] {
        let (u, lo, hi) = seg(a, b);
        println!("{a}-{b} s: mean U {u:.4}, W+ in [{lo:.2}, {hi:.2}]");
    }

    // M5: U+ sweep (§4.5.6).
    let secs = if quick { 400 } else { 1000 };
    println!("\n## M5 U+ sweep, closed loop, {par} threads x {think} ms, {secs} s");
    for target in [0.65, 0.75, 0.85, 0.9, 0.95, 0.98, 0.99] {
        let spec = AccessGatewaySpec {
            classes: classes([think; 3], [vec![], vec![], vec![]], par),
            gateway: msfrs(|c| c.target_utilization = target),
            ..base.clone()
        };
        let (r, w) = run(&spec, secs, 50, seed);
        let l = w.latency(None, Time::from_secs(50), Time::from_secs(secs - 100));
        let q = r
            .summary
            .links
            .iter()
            .find(|l| l.name == "access-down")
            .map_or(f64::NAN, |l| l.mean_queue_pkts);
        println!(
            "U+ {target:.2}: util {:.4}, T_a {:.2} (T_q {:.2}, T_s {:.2}), ISP queue {q:.1} pkts",
            access_util(&r),
            l.active,
            l.queued,
            l.service
        );
    }

    // M6: exceptive on/off CBR (§4.6, Table 4.1).
    let secs = if quick { 640 } else { 3000 };
    let periods: &[u64] = if quick {
        &[40, 160]
    } else {
        &[40, 80, 160, 320, 640]
    };
    println!("\n## M6 access-link utilisation with on/off CBR of no class, {secs} s");
    let mut fig = String::new();
    for &period in periods {
        let mut row = format!("{period:4} s:");
        for kbps in [400u64, 800, 1200] {
            let spec = AccessGatewaySpec {
                classes: classes([think; 3], [vec![], vec![], vec![]], par),
                exceptive: Some(CbrConfig {
                    rate: Rate::from_kbps(kbps),
                    packet_size: 1000,
                    on_off: Some((Dur::from_secs(period), Dur::from_secs(period))),
                }),
                exceptive_start: Time::from_secs(period),
                ..base.clone()
            };
            let (r, w) = run(&spec, secs, 50, seed);
            row += &format!(" {:.2} %", access_util(&r) * 100.0);
            if period == 640 && kbps == 800 && !quick {
                // Fig. 4.16: W+ while the CBR is on (640-1280 s) and after it stops at 1280 s.
                let mean =
                    |a: u64, b: u64| w.mean_window_max(Time::from_secs(a), Time::from_secs(b));
                fig = format!(
                    "640 s, 0.8 Mb/s: mean W+ {:.1} with the CBR on (700-1280 s), {:.1} after it stops (1320-1920 s)",
                    mean(700, 1280),
                    mean(1320, 1920)
                );
            }
        }
        println!("{row}");
    }
    if !fig.is_empty() {
        println!("{fig}");
    }
}
