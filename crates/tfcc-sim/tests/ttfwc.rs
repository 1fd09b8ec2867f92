//! End-to-end TTFWC runs (000 Sec. 5.1.2): N SACK TCP and N TTFWC flows on the thesis'
//! dumbbell, 15 Mb/s and 20 ms one way, DropTail.
//!
//! Settings the thesis leaves open (spec 000 §3.1), chosen here: 1000-byte segments, no
//! delayed ACKs (ns-2's `TCPSink`), a bottleneck buffer of one bandwidth-delay product at the
//! mean base RTT (about 46 ms, 83 packets), 100 Mb/s access links whose one-way delays are
//! spread evenly over 0.5–1.8 ms per flow on each side (the thesis' 1 ms sender links plus
//! 0–2.6 ms receiver links, split evenly because our dumbbell uses one spread for both),
//! starts spread over the first second, the first fifth of the run not measured.

use tfcc_core::tcp::{Congestion, TcpConfig, TtfwcConfig, Variant};
use tfcc_core::{Dur, Time};
use tfcc_sim::{DelaySpread, FlowSpec};

mod common;
use common::{dumbbell, simulation, Bottleneck};

/// What one 5.1.2 run measured.
#[derive(Debug)]
struct Shares {
    /// Mean throughput per TCP and per TTFWC flow, normalised by the fair share C / 2N.
    tcp: f64,
    ttfwc: f64,
    /// θ: TTFWC's share of what both kinds got (0.5 is an even split).
    theta: f64,
    /// Loss rate at the bottleneck.
    loss: f64,
}

fn run(n: usize, tp: f64, secs: u64, seed: u64) -> Shares {
    let bottleneck = Bottleneck {
        bps: 15_000_000,
        delay: Dur::from_millis(20),
        limit: 83,
        loss: 0.0,
    };
    let access = DelaySpread::Uniform {
        lo: Dur::from_micros(500),
        hi: Dur::from_micros(1800),
    };
    let flows = 2 * n;
    let (topo, b) = dumbbell(&bottleneck, access, flows);
    let mut sim = simulation(topo, secs, seed);
    for i in 0..flows {
        // Interleaved, so both kinds see the same spread of RTTs.
        let start =
            Time::from_secs_f64((i as f64 + 0.37 * seed as f64) % flows as f64 / flows as f64);
        let mut cfg = TcpConfig::with_variant(Variant::Sack);
        if i % 2 == 1 {
            // Each flow its own jitter draws.
            cfg.congestion = Congestion::Ttfwc(TtfwcConfig {
                seed: 1000 * seed + i as u64,
                ..TtfwcConfig::with_tp(tp)
            });
        }
        sim.add_flow(FlowSpec::tcp(i, cfg, start, None)).unwrap();
    }
    let s = sim.run().summary;
    let mean = |p: &str| {
        let v: Vec<f64> = s
            .flows
            .iter()
            .filter(|f| f.protocol == p)
            .map(|f| f.throughput_bps)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let fair = 15e6 * 1000.0 / 1040.0 / flows as f64;
    let (tcp, tt) = (mean("tcp-sack"), mean("ttfwc"));
    let l = &s.links[b];
    Shares {
        tcp: tcp / fair,
        ttfwc: tt / fair,
        theta: tt / (tcp + tt),
        loss: l.drops as f64 / l.arrivals.max(1) as f64,
    }
}

/// Mean over `seeds` runs of `secs` seconds.
fn mean_run(n: usize, tp: f64, secs: u64, seeds: u64) -> Shares {
    let runs: Vec<Shares> = (1..=seeds).map(|k| run(n, tp, secs, k)).collect();
    let m = |f: fn(&Shares) -> f64| runs.iter().map(f).sum::<f64>() / runs.len() as f64;
    Shares {
        tcp: m(|s| s.tcp),
        ttfwc: m(|s| s.ttfwc),
        theta: m(|s| s.theta),
        loss: m(|s| s.loss),
    }
}

/// 000 Sec. 5.1.2: TTFWC is TCP-friendly at every tp. Taken here as each TTFWC flow getting
/// between 0.8 and 1.25 times what each competing SACK flow gets (θ in 0.44–0.56). Passes with
/// the cwnd jitter (per-flow seeds) as without it. Measured before the jitter
/// (3 seeds × 200 s, `table`): θ = 0.516 / 0.528 / 0.501 at N = 4 and 0.509 / 0.522 / 0.526
/// at N = 8 for tp = 0.0 / 0.4 / 0.9; this test runs 2 seeds × 100 s. The thesis has TTFWC
/// slightly *below* TCP.
///
/// Fails by a hair since the kernel's whole-packet windows became the default (audit of
/// 2026-11-26, docs/reproductions/log/ttfwc.md): TTFWC/TCP = 0.870 / 0.873 / 0.923 at N = 4 and
/// 0.854 / **0.797** / 0.876 at N = 8 (tp 0.0 / 0.4 / 0.9); with real-valued windows
/// (`integer_windows = false`) 0.903 / 0.930 / 0.940 and 0.930 / 0.837 / 0.880. The truncated
/// window sits up to a packet lower, about 4 % of TTFWC's throughput on this dumbbell; the
/// claim runs (3 seeds × 200 s) stay inside [0.8, 1].
#[test]
#[ignore = "does not reproduce at N 8 tp 0.4: TTFWC/TCP 0.797 < 0.8 with the kernel's integer windows (issue 6)"]
fn ttfwc_is_tcp_friendly_at_every_tp() {
    for n in [4, 8] {
        for tp in [0.0, 0.4, 0.9] {
            let s = mean_run(n, tp, 100, 2);
            let ratio = s.ttfwc / s.tcp;
            assert!(
                (0.8..=1.25).contains(&ratio),
                "N {n} tp {tp}: TTFWC/TCP = {ratio:.3} ({s:?})"
            );
            // Together they still fill the link.
            assert!(s.tcp + s.ttfwc > 1.9, "N {n} tp {tp}: {s:?}");
        }
    }
}

/// 000 Sec. 5.1.2: throughput grows with tp, about +2 % at 0.4 and +10 % at 0.9 over tp = 0.0.
///
/// Does not reproduce in size or order. Measured before the cwnd jitter; with it, see
/// docs/reproductions/log/ttfwc.md (+2–5 % at tp 0.9 on the reproduction's dumbbell). Gain at
/// tp = 0.4 / 0.9 over tp = 0.0 (mean of 3 seeds × 200 s; normalised per-flow throughput in
/// brackets):
/// N = 2: +0.6 % / +5.0 % (0.906 → 0.911 / 0.951); N = 4: +2.2 % / −3.1 % (1.033 → 1.056 /
/// 1.001); N = 8: +2.6 % / +3.5 % (1.016 → 1.043 / 1.052); N = 16: +0.9 % / −0.9 %;
/// N = 32: −0.5 % / −0.7 %; N = 64: +3.7 % / −5.4 %; N = 1: −17.5 % / −13.9 % (one flow of
/// each kind, dominated by phase effects). +2 % at 0.4 matches at N = 4 and 8; +10 % at 0.9
/// is not reached anywhere (at most +5 %, N = 2).
/// How often the Eq. 3.1 gate passes, and what the kernel's `u32` windows and ACK counting
/// change, is in the audit of 2026-11-26 (docs/reproductions/log/ttfwc.md): on 8 + 8 the gate
/// passes at 27 % of the loss events with real-valued windows and 8 % with `u32` ones, and no
/// reading of the printed code gets the tp-0.9 gain beyond +2.7 % (30 seeds).
#[test]
#[ignore = "does not reproduce: gain at tp 0.9 is −3.1 % (N 4) and +3.5 % (N 8), not +10 % (issue 6)"]
fn throughput_grows_with_tp_as_in_the_thesis() {
    for n in [4, 8] {
        let g = |tp| mean_run(n, tp, 200, 3).ttfwc;
        let (t0, t4, t9) = (g(0.0), g(0.4), g(0.9));
        assert!(
            t4 >= t0 && t9 >= 1.05 * t0 && t9 >= t4,
            "N {n}: {t0:.3} / {t4:.3} / {t9:.3}"
        );
    }
}

/// 000 Sec. 5.1.2 sweeps N up to 64: TTFWC stays TCP-friendly there too.
///
/// Did not reproduce above N = 8 before the cwnd jitter and the kernel's whole-packet windows:
/// θ = 0.672 / 0.678 / 0.666 at N = 16, 0.595 / 0.592 / 0.591 at N = 32 and 0.620 / 0.642 /
/// 0.586 at N = 64 (tp 0.0 / 0.4 / 0.9, 3 seeds × 200 s). Not re-run since; the claim runs of
/// 2026-11-26 (docs/reproductions/ttfwc.md) now have TTFWC *below* TCP at N = 16 (0.778 on
/// seeds 1–3), and helper why2 traced that to the flows' drawn positions at the DropTail queue
/// (a second SACK group in TTFWC's place gets 0.915 on the same seeds; TTFWC tracks it seed by
/// seed at 0.856 ± 0.040 over 20 seeds), and slightly above it at N = 64 (1.04: TTFWC runs Reno
/// after most loss events at about 1.4 packets per flow).
#[test]
#[ignore = "does not reproduce (issue 6): θ 0.59–0.68 at N 16–64 when last run, before the jitter and whole-packet windows; see the doc comment"]
fn ttfwc_is_tcp_friendly_with_many_flows() {
    for n in [16, 32, 64] {
        for tp in [0.0, 0.4, 0.9] {
            let s = mean_run(n, tp, 200, 3);
            let ratio = s.ttfwc / s.tcp;
            assert!(
                (0.8..=1.25).contains(&ratio),
                "N {n} tp {tp}: TTFWC/TCP = {ratio:.3} ({s:?})"
            );
        }
    }
}

/// The 5.1.2 table for the report (N = 1 … 64, 3 seeds, 200 s):
/// `cargo test --release -p tfcc-sim --test ttfwc -- --ignored --nocapture table`.
#[test]
#[ignore = "prints the measurement table (slow in debug)"]
fn table() {
    println!("N tp tcp ttfwc theta loss gain_vs_tp0");
    for n in [1, 2, 4, 8, 16, 32, 64] {
        let base = mean_run(n, 0.0, 200, 3).ttfwc;
        for tp in [0.0, 0.4, 0.9] {
            let s = mean_run(n, tp, 200, 3);
            println!(
                "{n} {tp} {:.3} {:.3} {:.3} {:.4} {:+.1}%",
                s.tcp,
                s.ttfwc,
                s.theta,
                s.loss,
                100.0 * (s.ttfwc / base - 1.0)
            );
        }
    }
}

/// The largest TTFWC flow's goodput as a share of the link, on the reproduction's dumbbell
/// (scenarios/000-dumbbell.toml: drawn delays and starts) with 8 + 8 flows at tp 0.0, seed 3,
/// 100 s, with TTFWC's `params`.
fn largest_ttfwc_share(params: &str) -> f64 {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/000-dumbbell.toml");
    let sets: Vec<String> = [
        "duration=100s",
        "measure_from=20s",
        "flows.0.count=8",
        "flows.1.count=8",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("flows.1.params={params}")])
    .collect();
    let built = tfcc_sim::scenario::load(&path, &sets, Some(3)).unwrap();
    let s = built.into_simulation().unwrap().run().summary;
    s.flows
        .iter()
        .filter(|f| f.protocol == "ttfwc")
        .map(|f| f.throughput_bps / 15e6)
        .fold(0.0, f64::max)
}

/// The DropTail lock-out that 002's cwnd jitter exists to break (002 Sec. 3.2.7; module doc of
/// tfcc_core::tcp::ttfwc): without it one TTFWC flow locks into the queue's departures and
/// takes 6.1 Mb/s, 41 % of the link, with 16 flows sharing it; with it the largest TTFWC flow
/// gets 1.5 Mb/s (10 %).
#[test]
fn jitter_breaks_the_droptail_lock_out() {
    let without = largest_ttfwc_share("{ tp = 0.0, jitter = false }");
    assert!(without > 0.3, "without jitter: {without:.3}");
    let with = largest_ttfwc_share("{ tp = 0.0 }");
    assert!(with < 0.2, "with jitter: {with:.3}");
}
