//! End-to-end PTCP runs (001 Sec. 3.2) on the thesis' ns-2 dumbbell, with the simulation oracle
//! and with the inline (ImTCP-style) estimator.

use tfcc_sim::scenario::load_str;
use tfcc_sim::RunResult;

const E1: &str = include_str!("../../../scenarios/001-e1-load-steps.toml");

fn run(text: &str, overrides: &[&str]) -> RunResult {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load_str(text, "test", "test", &o, None)
        .unwrap()
        .into_simulation()
        .unwrap()
        .run()
}

/// A scenario on the thesis' dumbbell (001 Sec. 3.2, Fig. 5, as in the E1 scenario file): a
/// 100 Mb/s, 5 ms bottleneck with a 100-packet DropTail queue and 1 Gb/s, 2.5 ms access links;
/// `flows` holds the `[[flows]]` tables.
fn on_the_dumbbell(name: &str, duration: &str, measure_from: &str, flows: &str) -> String {
    format!(
        r#"name = "{name}"
duration = "{duration}"
measure_from = "{measure_from}"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "100Mbps", delay = "5ms", queue = "droptail", limit = 100 }}
access = {{ rate = "1Gbps", delay = "2.5ms", limit = 10000 }}
{flows}"#
    )
}

/// Mean of `xs`.
fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// E1 (Fig. 6): 20 Mb/s met against 1, 10 and 40 Reno flows; k = 1 in the light phase;
/// s shrinks only in the heaviest phase. Returns the per-slot throughputs for the report.
fn e1(estimator: &str) -> (usize, usize, Vec<(f64, f64)>, f64) {
    let ov = format!("flows.0.params.estimator = \"{estimator}\"");
    let r = run(E1, &[&ov]);
    let f = &r.summary.flows[0];
    let p = f.ptcp.as_ref().expect("a ptcp record");
    let slots: Vec<(f64, f64)> = p
        .eval_slots
        .iter()
        .map(|e| (e.end.as_secs_f64(), e.throughput_bps / 1e6))
        .collect();
    eprintln!("E1 {estimator}: slots (end s, Mb/s) {slots:.2?}");
    eprintln!("E1 {estimator}: s changes {:?}", p.s_changes);
    // The control slots tile the evaluation slots, and each names the bound that set k.
    assert!(!p.ctrl_slots.is_empty());
    for e in &p.eval_slots {
        let inside: Vec<_> = p
            .ctrl_slots
            .iter()
            .filter(|c| c.start >= e.start && c.end <= e.end)
            .collect();
        assert!(!inside.is_empty(), "{e:?}");
        assert_eq!(
            (inside[0].start, inside.last().unwrap().end),
            (e.start, e.end)
        );
        if !e.met {
            let why: Vec<_> = inside
                .iter()
                .map(|c| {
                    (
                        c.s,
                        c.regime,
                        c.bound_by.unwrap_or("-"),
                        (c.throughput_bps / 1e6 * 10.0).round() / 10.0,
                    )
                })
                .collect();
            eprintln!("E1 {estimator}: missed slot ending {:?}: {why:?}", e.end);
        }
    }
    // k over the light phase (1 Reno flow, 1-5 s): samples of the series.
    let ks: Vec<f64> = r
        .flow_series
        .iter()
        .filter(|s| s.flow == 0 && s.time.as_secs_f64() > 1.0 && s.time.as_secs_f64() <= 5.0)
        .filter_map(|s| s.ptcp_k)
        .collect();
    eprintln!("E1 {estimator}: mean k in 1-5 s = {:.2}", mean(&ks));
    let errs: Vec<f64> = r
        .flow_series
        .iter()
        .filter(|s| s.flow == 0)
        .filter_map(|s| Some((s.ptcp_a_bps? - s.ptcp_oracle_a_bps?).abs() / 1e6))
        .collect();
    eprintln!(
        "E1 {estimator}: mean |A - A_oracle| = {:.1} Mb/s over {} samples",
        mean(&errs),
        errs.len()
    );
    let after_first = p.eval_slots.iter().skip(2);
    eprintln!(
        "E1 {estimator}: {}/{} slots after the first two met 20 Mb/s",
        after_first.clone().filter(|e| e.met).count(),
        after_first.clone().count()
    );
    let n = after_first.clone().count();
    let met = after_first.filter(|e| e.met).count();
    (met, n, slots, mean(&ks))
}

#[test]
fn e1_light_phase_is_reno_like_and_meets_the_target() {
    // 001 Fig. 6, 0-5 s: one Reno flow, plenty of room: k = k_min = 1 and every slot met.
    for est in ["oracle", "inline"] {
        let (_, _, slots, mean_k) = e1(est);
        let light: Vec<&(f64, f64)> = slots.iter().filter(|s| s.0 > 1.0 && s.0 <= 5.0).collect();
        assert!(light.len() >= 3, "{est}: {light:?}");
        assert!(light.iter().all(|s| s.1 >= 20.0), "{est}: {light:?}");
        assert!((mean_k - 1.0).abs() < 0.05, "{est}: mean k {mean_k}");
    }
}

/// The inline estimator against the oracle where delay-based probing can work: a
/// constant-rate PTCP flow (no k_min, 10 Mb/s) beside 50 Mb/s of CBR on the 100 Mb/s
/// dumbbell, so the queue is not pinned full. Reports the error and holds it under 25 %.
#[test]
fn inline_estimator_error_against_the_oracle() {
    let flows = r#"
[[flows]]
protocol = "ptcp"
params = { bw = "10Mbps", k_min = false, estimator = "inline" }
[[flows]]
protocol = "cbr"
rate = "50Mbps"
"#;
    let r = run(&on_the_dumbbell("imtcp-vs-oracle", "20s", "5s", flows), &[]);
    let pairs: Vec<(f64, f64)> = r
        .flow_series
        .iter()
        .filter(|s| s.flow == 0 && s.time.as_secs_f64() > 5.0)
        .filter_map(|s| Some((s.ptcp_a_bps? / 1e6, s.ptcp_oracle_a_bps? / 1e6)))
        .collect();
    let est = mean(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
    let ora = mean(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    let mae = mean(&pairs.iter().map(|p| (p.0 - p.1).abs()).collect::<Vec<_>>());
    eprintln!(
        "inline vs oracle (50 Mb/s CBR): mean A {est:.1} vs {ora:.1} Mb/s, mean |error| {mae:.1} Mb/s over {} samples",
        pairs.len()
    );
    assert!(pairs.len() > 100);
    assert!(mae / ora < 0.25, "{mae} against {ora}");
}

/// The inline estimator against the oracle where the cross traffic is TCP Reno (001 E1: 1, 10
/// and 40 Reno flows on the 100 Mb/s dumbbell with a 100-packet DropTail queue), per phase and
/// over the run: mean |A − A_oracle| relative to the oracle's mean `A`, sampled every 100 ms.
///
/// Bound: 25 %, the same as against CBR above. The thesis reports no ImTCP accuracy (spec 001
/// §2.9, only that it "degrades somewhat" on the Internet); ImTCP's own papers (Man, Hasegawa
/// & Murata 2006) show its estimates tracking the true `A` to within roughly a fifth in their
/// ns-2 runs (from the papers' figures, not a stated number).
#[test]
#[ignore = "fails the 25 % bound: measured (seed 1, h-imtcp1: Trend::Stream, Combine::Count) \
            1-5 s A 98.6 vs 54.9 Mb/s (79 %), 5-10 s 97.7 vs 32.3 (203 %), 10-15 s 97.2 vs 20.5 \
            (373 %), 1-15 s 182 % (h-ptcp3's per-packet onset and first rise: 108 %): the Reno \
            flows' ACK-clocked packets reach the bottleneck in trains that the estimator's own \
            streams fall between (beside one Reno flow 6 % of the streams see any of its \
            packets), so the streams read A = P; see docs/reproductions/ptcp.md"]
fn inline_estimator_error_against_reno_cross_traffic() {
    let r = run(E1, &["flows.0.params.estimator = \"inline\""]);
    let pairs: Vec<(f64, f64, f64)> = r
        .flow_series
        .iter()
        .filter(|s| s.flow == 0 && s.time.as_secs_f64() > 1.0)
        .filter_map(|s| {
            Some((
                s.time.as_secs_f64(),
                s.ptcp_a_bps? / 1e6,
                s.ptcp_oracle_a_bps? / 1e6,
            ))
        })
        .collect();
    let stats = |from: f64, to: f64| {
        let p: Vec<&(f64, f64, f64)> = pairs.iter().filter(|p| p.0 > from && p.0 <= to).collect();
        let est = mean(&p.iter().map(|p| p.1).collect::<Vec<_>>());
        let ora = mean(&p.iter().map(|p| p.2).collect::<Vec<_>>());
        let mae = mean(&p.iter().map(|p| (p.1 - p.2).abs()).collect::<Vec<_>>());
        eprintln!(
            "E1 inline vs oracle, {from}-{to} s: mean A {est:.1} vs {ora:.1} Mb/s, mean |error| {mae:.1} Mb/s ({:.0} %)",
            100.0 * mae / ora
        );
        (mae, ora)
    };
    stats(1.0, 5.0);
    stats(5.0, 10.0);
    stats(10.0, 15.0);
    let (mae, ora) = stats(1.0, 15.0);
    assert!(pairs.len() > 100);
    assert!(mae / ora < 0.25, "{mae} against {ora}");
}

#[test]
#[ignore]
fn e1_trace() {
    let est = std::env::var("EST").unwrap_or("oracle".into());
    let ov = format!("flows.0.params.estimator = \"{est}\"");
    let mut o = vec![ov];
    if let Ok(x) = std::env::var("OV") {
        o.push(x);
    }
    let o2: Vec<&str> = o.iter().map(|s| s.as_str()).collect();
    let r = run(E1, &o2);
    let f = &r.summary.flows[0];
    eprintln!(
        "timeouts {} retransmits {} tput {:.2}",
        f.timeouts,
        f.retransmits,
        f.throughput_bps / 1e6
    );
    for s in r.flow_series.iter().filter(|s| s.flow == 0) {
        eprintln!(
            "{:.1} thr {:.1} cwnd {:.1} k {:.1} s {:?} A {:.1} Aor {:.1} rtt {:?}",
            s.time.as_secs_f64(),
            s.throughput_bps / 1e6,
            s.cwnd.unwrap_or(0.0),
            s.ptcp_k.unwrap_or(0.0),
            s.ptcp_s,
            s.ptcp_a_bps.unwrap_or(-1e6) / 1e6,
            s.ptcp_oracle_a_bps.unwrap_or(-1e6) / 1e6,
            s.rtt_s
        );
    }
}

/// SURGE users (001 Sec. 3.2, Table 1) as short TCP transfers: every user fetches files and
/// thinks, so each delivers something and none comes near a bulk flow's share.
#[test]
fn surge_users_fetch_files_between_think_times() {
    let flows = r#"
[[flows]]
protocol = "web"
count = 20
start = ["0s", "1s"]
"#;
    let r = run(&on_the_dumbbell("surge", "30s", "0s", flows), &[]);
    let t: Vec<f64> = r
        .summary
        .flows
        .iter()
        .map(|f| f.throughput_bps / 1e6)
        .collect();
    eprintln!("SURGE users, Mb/s: {t:.3?}");
    assert_eq!(t.len(), 20);
    assert!(r.summary.flows.iter().all(|f| f.protocol == "web"));
    assert!(t.iter().all(|&x| x > 0.0 && x < 5.0), "{t:?}");
}

/// The "constant" baseline (001 Sec. 3.2): the window sits at bw · srtt_min and survives
/// losses, so with one Reno flow it carries about bw.
#[test]
fn constant_baseline_holds_its_window_through_losses() {
    let r = run(E1, &["flows.0.params.constant=true"]);
    let f = &r.summary.flows[0];
    let cw: Vec<f64> = r
        .flow_series
        .iter()
        .filter(|s| s.flow == 0 && s.time.as_secs_f64() > 1.0 && s.time.as_secs_f64() <= 5.0)
        .filter_map(|s| s.cwnd)
        .collect();
    let (lo, hi) = cw
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    eprintln!(
        "constant: cwnd {lo:.1}..{hi:.1}, {:.1} Mb/s",
        f.throughput_bps / 1e6
    );
    // 2500 pkt/s · srtt_min (about 21 ms): about 52 packets, unchanged after 1 s.
    assert!(hi - lo < 1e-9 && (40.0..70.0).contains(&lo), "{lo}..{hi}");
}

/// The "constant" baseline (001 Sec. 3.2) alone on the thesis' dumbbell: nothing queues, so
/// the fixed window `bw · srtt_min` is delivered once per round trip of the path, i.e. every
/// evaluation slot carries `window · segment / RTT` with the RTT between the 20 ms propagation
/// round trip and 0.5 ms more (serialization; no queue). The sender's sRTT is kept in 10 ms
/// ticks (ns-2's `tcpTick_`), so `srtt_min` is 20 ms while the true RTT is a little longer, and
/// the baseline carries a hair under `bw` even on an idle path (measured: 19.90 Mb/s).
#[test]
fn constant_baseline_delivers_its_window_once_per_rtt() {
    let flows = r#"
[[flows]]
protocol = "ptcp"
params = { bw = "20Mbps", constant = true, estimator = "oracle" }
"#;
    let r = run(&on_the_dumbbell("constant-alone", "6s", "1s", flows), &[]);
    let f = &r.summary.flows[0];
    let cw: Vec<f64> = r
        .flow_series
        .iter()
        .filter(|s| s.flow == 0 && s.time.as_secs_f64() > 1.0)
        .filter_map(|s| s.cwnd)
        .collect();
    assert!(cw.len() > 10);
    let w = cw[0];
    assert!(cw.iter().all(|&c| c == w), "the window never moves");
    // bw · srtt_min = 2500 pkt/s · 20 ms.
    assert!((w - 50.0).abs() < 1e-9, "{w}");
    let p = f.ptcp.as_ref().unwrap();
    let rtts: Vec<f64> = p
        .eval_slots
        .iter()
        .filter(|e| e.start.as_secs_f64() >= 1.0)
        .map(|e| w * 1000.0 * 8.0 / e.throughput_bps)
        .collect();
    eprintln!(
        "constant alone: window {w:.2} pkts, goodput {:.2} Mb/s, RTT implied by each slot {:.3?} ms",
        f.throughput_bps / 1e6,
        rtts.iter().map(|x| x * 1e3).collect::<Vec<_>>()
    );
    assert!(rtts.len() >= 4);
    assert!(
        rtts.iter().all(|&x| (0.020..0.0205).contains(&x)),
        "{rtts:?}"
    );
    assert_eq!(f.timeouts, 0);
}

const E4: &str = include_str!("../../../scenarios/001-e4-multi.toml");

/// E4 (Fig. 9) shortened: 10 connections in one aggregate (001 Sec. 2.3) asking for 20 Mb/s
/// together against 20 capped Reno flows. Every member reports the same (the aggregate's)
/// evaluation slots, the sum holds the requirement on average, and no member is starved or
/// takes it all alone (the need is split over the members).
#[test]
fn aggregate_of_ten_shares_one_controller_and_holds_the_sum() {
    let r = run(
        E4,
        &[
            "duration = \"12s\"",
            "measure_from = \"4s\"",
            "flows.1.count = 20",
        ],
    );
    let members: Vec<_> = r
        .summary
        .flows
        .iter()
        .filter(|f| f.protocol == "ptcp")
        .collect();
    assert_eq!(members.len(), 10);
    let slots0 = &members[0].ptcp.as_ref().unwrap().eval_slots;
    assert!(slots0.len() >= 10, "{}", slots0.len());
    for m in &members {
        let p = m.ptcp.as_ref().unwrap();
        assert_eq!(p.eval_slots.len(), slots0.len());
        assert!((p.bw_bps - 20e6).abs() < 1.0, "aggregate bw: {}", p.bw_bps);
    }
    let sum: f64 = members.iter().map(|f| f.throughput_bps).sum();
    let per: Vec<f64> = members.iter().map(|f| f.throughput_bps / 1e6).collect();
    eprintln!("E4 aggregate: sum {:.2} Mb/s, members {per:.2?}", sum / 1e6);
    assert!(sum >= 19.0e6, "aggregate goodput {sum}");
    assert!(per.iter().all(|&x| x > 0.5 && x < 10.0), "{per:?}");
}
