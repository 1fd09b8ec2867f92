//! End-to-end TFRC runs in the simulator: 004 E1b's lossy link, a lone flow on a DropTail
//! link, and two flows sharing one. Each test prints its measured numbers (`--nocapture`).

use tfcc_core::tfrc::TfrcConfig;
use tfcc_core::{Dur, Rate, Time};
use tfcc_sim::{
    AccessSpec, DelaySpread, DumbbellSpec, FlowSpec, LinkSpec, LossModel, QueueLimit, QueueSpec,
    RunResult, SimConfig, Simulation, Topology,
};

/// One 1.5 Mb/s link each way, 50 ms each way (RTT 100 ms, spec 004 E1b), with a DropTail
/// queue of `limit` packets and optional Bernoulli loss on the data direction.
fn lossy_link(limit: u32, p: Option<f64>) -> Topology {
    let rate = Rate::from_kbps(1500);
    let delay = Dur::from_millis(50);
    let q = QueueSpec::DropTail(QueueLimit::Packets(limit));
    let mut fwd = LinkSpec::new("ab", rate, delay, q);
    if let Some(p) = p {
        fwd = fwd.with_loss(LossModel::Bernoulli { p });
    }
    Topology::single_link(fwd).unwrap()
}

/// The same 1.5 Mb/s, 50 ms bottleneck as a dumbbell for `flows` flows: a 20-packet DropTail
/// queue, optional Bernoulli loss `p`, and 100 Mb/s access links of one-way delay `access`.
fn e1b_dumbbell(flows: usize, access: Dur, p: Option<f64>) -> Topology {
    let mut bottleneck = LinkSpec::new(
        "bottleneck",
        Rate::from_kbps(1500),
        Dur::from_millis(50),
        QueueSpec::DropTail(QueueLimit::Packets(20)),
    );
    if let Some(p) = p {
        bottleneck = bottleneck.with_loss(LossModel::Bernoulli { p });
    }
    Topology::dumbbell(&DumbbellSpec {
        bottleneck,
        access: AccessSpec::new(Rate::from_mbps(100), DelaySpread::Fixed(access)),
        flows,
    })
    .unwrap()
}

fn run(topo: Topology, flows: Vec<FlowSpec>, secs: u64, from: u64, seed: u64) -> RunResult {
    let mut sim = Simulation::new(
        SimConfig {
            duration: Dur::from_secs(secs),
            measure_from: Dur::from_secs(from),
            seed,
            ..SimConfig::default()
        },
        topo,
    )
    .unwrap();
    for f in flows {
        sim.add_flow(f).unwrap();
    }
    sim.run()
}

/// Mean goodput in KByte/s (the thesis' unit, 004 Sec. 4.1) over a few seeds.
fn e1b_kbytes_per_sec(p: f64) -> f64 {
    // Buffer = BDP: 1.5 Mb/s · 100 ms = 18 750 B, 13 packets of 1460 B (spec 004 E1b). b = 2,
    // as every TFRC flow of the 004 reproduction (see `e1b_one_percent_loss_gives_about_100_kbytes_per_sec`).
    let cfg = TfrcConfig {
        b: 2.0,
        ..TfrcConfig::default()
    };
    let seeds = [1, 2, 3];
    let mut sum = 0.0;
    for seed in seeds {
        let r = run(
            lossy_link(13, Some(p)),
            vec![FlowSpec::tfrc(0, cfg.clone(), Time::ZERO, None)],
            200,
            20,
            seed,
        );
        let f = &r.summary.flows[0];
        println!(
            "E1b p = {p}: seed {seed}: {:.1} KB/s, p_est {:.4}, rtt {:?}",
            f.throughput_bps / 8000.0,
            f.loss_event_rate,
            f.mean_rtt_s
        );
        sum += f.throughput_bps / 8000.0;
    }
    sum / seeds.len() as f64
}

/// E1b's claim at drop rate `p` (004 Sec. 4.3.2): the mean goodput within ±30 % of the
/// thesis' `thesis_kbs` KB/s (the thesis reads its values off a figure, "≈").
fn e1b_gives_about(p: f64, thesis_kbs: f64) {
    let kbs = e1b_kbytes_per_sec(p);
    println!("E1b {} %: {kbs:.1} KB/s (thesis ≈ {thesis_kbs})", p * 100.0);
    let (lo, hi) = (0.7 * thesis_kbs, 1.3 * thesis_kbs);
    assert!((lo..=hi).contains(&kbs), "{kbs} KB/s, not in {lo}..={hi}");
}

/// 004 Sec. 4.3.2 reports ≈ 100 KB/s at 1 % drop and says this "corresponds to" the complex
/// equation at an RTT of 100 ms, which holds with b = 2 (116 KB/s) and not with RFC 5348's b = 1
/// (164 KB/s, spec 004 §2.2's table); with b = 1 this run measured ≈ 151 KB/s. The 004
/// scenarios therefore give TFRC b = 2 (docs/reproductions/tfrc.md);
/// [`e1b_one_percent_loss_follows_the_equation`] checks the default b = 1 against its equation.
#[test]
fn e1b_one_percent_loss_gives_about_100_kbytes_per_sec() {
    e1b_gives_about(0.01, 100.0);
}

#[test]
fn e1b_one_percent_loss_follows_the_equation() {
    // One seed, 200 s: the goodput against Eq. 2.7 at the measured mean RTT and the drop rate
    // (the loss event rate is a little below it: drops within one RTT form one event).
    let r = run(
        lossy_link(13, Some(0.01)),
        vec![FlowSpec::tfrc(0, TfrcConfig::default(), Time::ZERO, None)],
        200,
        20,
        4,
    );
    let f = &r.summary.flows[0];
    let rtt = f.mean_rtt_s.unwrap();
    let model = TfrcConfig::default()
        .equation()
        .rate_secs(1460.0, rtt, 0.01);
    let got = f.throughput_bps / 8.0;
    println!(
        "E1b 1 %: {:.1} KB/s, equation at R = {rtt:.3} s, p = 0.01: {:.1} KB/s",
        got / 1000.0,
        model / 1000.0
    );
    assert!((got / model - 1.0).abs() < 0.15, "{got} vs {model}");
}

#[test]
fn e1b_ten_percent_loss_gives_about_20_kbytes_per_sec() {
    e1b_gives_about(0.10, 20.0);
}

#[test]
fn a_lone_flow_fills_a_droptail_link() {
    let mut worst = f64::INFINITY;
    let mut drops = Vec::new();
    for limit in [7u32, 13, 26, 50] {
        for (name, cfg) in [
            ("thesis", TfrcConfig::default()),
            ("ns2", TfrcConfig::ns2()),
            (
                "thesis, no ISM",
                TfrcConfig {
                    ism: false,
                    ..TfrcConfig::default()
                },
            ),
        ] {
            let r = run(
                lossy_link(limit, None),
                vec![FlowSpec::tfrc(0, cfg, Time::ZERO, None)],
                120,
                30,
                1,
            );
            let u = r.summary.links[0].utilization;
            let f = &r.summary.flows[0];
            println!(
                "{name}, limit {limit}: utilisation {u:.3}, goodput {:.1} KB/s, drops {}, p {:.5}",
                f.throughput_bps / 8000.0,
                f.packets_lost,
                f.loss_event_rate
            );
            worst = worst.min(u);
            drops.push(f.packets_lost);
        }
        // 004 Sec. 3.6.4 / 4.3.1: without ISM TFRC drives the queue into overflow cycles; with
        // it the same buffer sees fewer drops.
        assert!(
            drops[0] < drops[2],
            "limit {limit}: ISM {} vs none {}",
            drops[0],
            drops[2]
        );
        drops.clear();
    }
    assert!(worst > 0.9, "utilisation {worst}");
}

#[test]
fn two_flows_share_a_bottleneck_fairly() {
    let topo = e1b_dumbbell(2, Dur::from_millis(1), None);
    let r = run(
        topo,
        vec![
            FlowSpec::tfrc(0, TfrcConfig::default(), Time::ZERO, None),
            FlowSpec::tfrc(1, TfrcConfig::default(), Time::from_secs(5), None),
        ],
        300,
        60,
        1,
    );
    let thr: Vec<f64> = r
        .summary
        .flows
        .iter()
        .map(|f| f.throughput_bps / 8000.0)
        .collect();
    let jain = r.summary.jain_index.unwrap();
    println!(
        "two flows: {:.1} and {:.1} KB/s, Jain {jain:.4}, utilisation {:.3}",
        thr[0], thr[1], r.summary.links[0].utilization
    );
    assert!(jain > 0.95, "Jain {jain}: {thr:?}");
}

#[test]
fn every_estimator_and_discounting_variant_runs_end_to_end() {
    use tfcc_core::tfrc::config::{DiscountingKind, EstimatorKind, OpenIntervalKind};
    let base = TfrcConfig::default();
    let mut variants: Vec<(String, TfrcConfig)> = vec![("ns2".into(), TfrcConfig::ns2())];
    for estimator in [EstimatorKind::Ewma, EstimatorKind::DynamicWindow] {
        variants.push((
            format!("{estimator:?}"),
            TfrcConfig {
                estimator,
                ..base.clone()
            },
        ));
    }
    for discounting in [
        DiscountingKind::Off,
        DiscountingKind::Discard,
        DiscountingKind::Duplication,
        DiscountingKind::Proportional,
        DiscountingKind::ProportionalRemodel,
        DiscountingKind::Rfc5348,
    ] {
        variants.push((
            format!("{discounting:?}"),
            TfrcConfig {
                discounting,
                ..base.clone()
            },
        ));
    }
    for (name, cfg) in [
        (
            "n = 16",
            TfrcConfig {
                history_size: 16,
                ..base.clone()
            },
        ),
        (
            "open interval never",
            TfrcConfig {
                open_interval: OpenIntervalKind::Never,
                discounting: DiscountingKind::Off,
                ..base.clone()
            },
        ),
        (
            "beta 0.01",
            TfrcConfig {
                rtt_beta: 0.01,
                ..base.clone()
            },
        ),
    ] {
        variants.push((name.into(), cfg));
    }
    for (name, cfg) in variants {
        cfg.validate().unwrap();
        let s = f64::from(cfg.packet_size);
        let eq = cfg.equation();
        let r = run(
            lossy_link(13, Some(0.01)),
            vec![FlowSpec::tfrc(0, cfg, Time::ZERO, None)],
            150,
            30,
            5,
        );
        let f = &r.summary.flows[0];
        let model = eq.rate_secs(s, f.mean_rtt_s.unwrap(), 0.01);
        let got = f.throughput_bps / 8.0;
        println!(
            "{name}: {:.1} KB/s, {:.2} of the equation at p = 1 %",
            got / 1000.0,
            got / model
        );
        assert!(
            (0.8..1.3).contains(&(got / model)),
            "{name}: {got} vs {model}"
        );
    }
}

/// Sender rate (bytes/s) at the sample nearest `t` seconds.
fn rate_at(r: &RunResult, t: f64) -> f64 {
    r.flow_series
        .iter()
        .min_by(|a, b| {
            (a.time.as_secs_f64() - t)
                .abs()
                .total_cmp(&(b.time.as_secs_f64() - t).abs())
        })
        .and_then(|s| s.rate_bps)
        .unwrap()
        / 8.0
}

#[test]
fn lost_feedback_halves_the_rate_per_timeout_and_reports_restore_it() {
    // The feedback path goes down for 5 s: with R ≈ 0.1 s and d = 8 the sender halves about
    // every 0.8 s and more (the interval grows as s/X does), then recovers once reports return.
    let mut sim = Simulation::new(
        SimConfig {
            duration: Dur::from_secs(60),
            ..SimConfig::default()
        },
        lossy_link(13, Some(0.01)),
    )
    .unwrap();
    sim.add_flow(FlowSpec::tfrc(0, TfrcConfig::default(), Time::ZERO, None))
        .unwrap();
    for (at, up) in [(20, false), (25, true)] {
        sim.add_event(tfcc_sim::ScheduledEvent {
            at: Time::from_secs(at),
            link: 1,
            action: tfcc_sim::LinkAction::SetUp(up),
        })
        .unwrap();
    }
    let r = sim.run();
    let (before, during, after) = (rate_at(&r, 19.9), rate_at(&r, 24.9), rate_at(&r, 59.9));
    println!(
        "rate before {:.1}, at the end of the outage {:.1}, 35 s later {:.1} KB/s; timeouts {}",
        before / 1e3,
        during / 1e3,
        after / 1e3,
        r.summary.flows[0].timeouts
    );
    assert!(during < before / 8.0, "{before} -> {during}");
    assert!(r.summary.flows[0].timeouts >= 3);
    assert!(after > before / 2.0, "{before} -> {after}");
}

#[test]
fn slowstart_ends_in_the_seeded_dent_at_about_half_the_exit_rate() {
    // 004 Sec. 3.6.2 / 4.3.1: the first rate after slowstart is about b_sst/2.
    let r = run(
        lossy_link(13, None),
        vec![FlowSpec::tfrc(0, TfrcConfig::default(), Time::ZERO, None)],
        10,
        1,
        1,
    );
    let rates: Vec<(f64, f64, Option<f64>)> = r
        .flow_series
        .iter()
        .map(|s| (s.time.as_secs_f64(), s.rate_bps.unwrap() / 8.0, s.p))
        .collect();
    let first_loss = rates
        .iter()
        .position(|(_, _, p)| p.unwrap_or(0.0) > 0.0)
        .unwrap();
    let peak = rates[..first_loss].iter().map(|x| x.1).fold(0.0, f64::max);
    let dent = rates[first_loss].1;
    println!(
        "slowstart peak {:.1} KB/s, first rate after it {:.1} KB/s at {:.1} s",
        peak / 1e3,
        dent / 1e3,
        rates[first_loss].0
    );
    assert!((dent / peak - 0.5).abs() < 0.15, "{peak} -> {dent}");
}

/// Prints tfcc's goodput for the topology `bench/ns2/dumbbell.tcl tcp=0 tfrc=1
/// bottleneck_rate=1.5e6 bottleneck_delay=0.05 limit=20 loss=P access_delay=0.00001
/// duration=200 measure_from=20` runs in ns-2, for comparing by hand until the live ns-2
/// cross-check (issue 5) lands. Not a test of its own: it asserts nothing.
#[test]
#[ignore = "measurement for the ns-2 comparison; run with --ignored --nocapture"]
fn measure_ns2_preset_like_the_ns2_harness() {
    for p in [0.01, 0.1] {
        for seed in 1..=3 {
            let topo = e1b_dumbbell(1, Dur::from_micros(10), Some(p));
            for (name, cfg) in [
                ("ns2", TfrcConfig::ns2()),
                (
                    "thesis-1000B",
                    TfrcConfig {
                        packet_size: 1000,
                        ..TfrcConfig::default()
                    },
                ),
            ] {
                let r = run(
                    topo.clone(),
                    vec![FlowSpec::tfrc(0, cfg, Time::ZERO, None)],
                    200,
                    20,
                    seed,
                );
                let f = &r.summary.flows[0];
                println!(
                    "{p} {seed} {name}: {:.0} b/s, rtt {:?}",
                    f.throughput_bps, f.mean_rtt_s
                );
            }
        }
    }
}

const E11: &str = include_str!("../../../scenarios/004-e11-bandwidth-changes.toml");

/// E11 setup 2 for `seed`, the TFRC flow's `params` extended by `extra` (e.g.
/// `, loss_event_rtt = "smoothed"`): TFRC's bytes delivered in each 10 s of 140-180 s, and the
/// loss event rate its sender holds at 150 s.
fn e11_after_the_dropout(seed: u64, extra: &str) -> (Vec<u64>, f64) {
    let line = "params = { b = 2, header_size = 28 }";
    assert!(E11.contains(line), "the TFRC flow's params line moved");
    let text = E11.replace(
        line,
        &format!("params = {{ b = 2, header_size = 28{extra} }}"),
    );
    let r = tfcc_sim::scenario::load_str(&text, "e11", "e11", &[], Some(seed))
        .unwrap()
        .into_simulation()
        .unwrap()
        .run();
    let tfrc = |t: f64| {
        r.flow_series
            .iter()
            .filter(|s| s.flow == 1 && s.time.as_secs_f64() <= t + 1e-9)
            .max_by_key(|s| s.time)
            .expect("samples")
    };
    let bins = [140.0, 150.0, 160.0, 170.0]
        .iter()
        .map(|&t| tfrc(t + 10.0).delivered_bytes - tfrc(t).delivered_bytes)
        .collect();
    (bins, tfrc(150.0).p.expect("TFRC reports p"))
}

/// 004 E11 setup 2 (Table 4.8), grouping losses with the smoothed RTT (RFC 5348 §5.2, the
/// `ns2`/`rfc5348` rule): after the 30 s dropout (110-140 s) TFRC climbs back slowly (Sec.
/// 4.8.2), but it keeps sending: every 10 s of the last 40 s delivers TFRC data. Without the
/// receiver's report timer (`report_timer = false`) seed 3 stalled: the held packets' 30 s RTT
/// sample made the ISM factor about 8, the one packet sent at 140.6 s arrived less than an RTT
/// (then 1.7 s) after the last report and was never reported, so no fresh sample came and the
/// next packet was due 61 s later, after the end of the run.
#[test]
fn e11_tfrc_keeps_sending_after_the_30s_dropout() {
    for seed in [1u64, 2, 3] {
        let (bins, p) = e11_after_the_dropout(seed, ", loss_event_rtt = \"smoothed\"");
        println!("E11 seed {seed}, smoothed RTT: TFRC bytes per 10 s {bins:?}, p at 150 s {p:.3}");
        assert!(bins.iter().all(|&b| b > 0), "seed {seed}: {bins:?}");
        assert!(p < 0.1, "seed {seed}: p = {p}");
    }
}

/// The same dropout with the thesis preset's grouping of losses by the sender's latest RTT
/// sample (004 Sec. 3.4, "the current RTT `t_RTT_cur` and not the smoothed RTT"), reported as
/// RFC 5348 §6.1 does, at once on each new loss event (`report_on_loss_event = true`; the
/// thesis preset reports once per RTT, see the next test). The ~250
/// packets the sender sent into the dropout are judged lost when the fourth packet after it
/// arrives (143-144 s), whose header carries the path's fresh 0.11 s sample; their send times,
/// interpolated between the packets on either side of the gap, are 0.12 s apart, so each is
/// its own loss event (with the 0.17 s sample the lost packets themselves carried, every
/// second one; with their true send times 68-89 events: docs/reproductions/log/tfrc.md, "Loss
/// events grouped by the current RTT"). The n = 8 history then holds intervals of one or two
/// packets: `p` is above 0.3 at 150 s (0.348 on seeds 1-3), against below 0.1 with the smoothed
/// RTT (lifted to ~3 s by the held packets' 30 s samples, it puts ~23 lost packets in an
/// event). The sender, at the equation's rate for that `p` and a ~2.7 s smoothed RTT, is down
/// to a packet every few seconds but still sends: 150-180 s delivers TFRC data on every seed.
/// (Until 2026-11-26, tfrcaudit, every preset reported new loss events at once and this test
/// ran the scenario as it stands.)
#[test]
fn e11_the_thesis_rule_makes_each_packet_lost_in_the_30s_dropout_a_loss_event() {
    for seed in [1u64, 2, 3] {
        let (bins, p) = e11_after_the_dropout(seed, ", report_on_loss_event = true");
        println!("E11 seed {seed}, latest sample: TFRC bytes per 10 s {bins:?}, p at 150 s {p:.3}");
        assert!(p > 0.3, "seed {seed}: p = {p}");
        assert!(bins[1..].iter().sum::<u64>() > 0, "seed {seed}: {bins:?}");
    }
}

/// The scenario as it stands: the thesis preset's receiver reports once per RTT (004 Sec. 3.1,
/// no early report on a new loss event), and the RTT it spaces reports by is the smoothed RTT
/// in the data headers, about 3 s after the held packets' 30 s samples. On seed 1 the report
/// after the one at about 143.5 s comes at 146.6 s; until then the sender holds the `p` of
/// before the dropout (0.009) and sends at 16.5 KB/s (about 11 packets a second), and the first
/// report with the dropout's events carries `p` = 0.128, not the 0.43 that the early report at
/// 144.2 s carries with `report_on_loss_event` (which cuts the sender to 202 B/s). The likely
/// reason, not traced further: the packets arriving after the judged losses grow the open
/// interval far beyond the dropout's one- and two-packet intervals, and proportional
/// deweighting (004 Sec. 3.7) follows it.
/// So `p` at 150 s is below 0.3 on seeds 1-3 (0.117, 0.112, 0.084) and TFRC delivers data in
/// every 10 s of 140-180 s. This encodes what the thesis' report rule does here; E11's claims
/// carry the effect (docs/reproductions/log/tfrc.md, "Mechanism audit against the thesis text").
#[test]
fn e11_the_thesis_receiver_reports_the_dropouts_loss_events_an_rtt_later() {
    for seed in [1u64, 2, 3] {
        let (bins, p) = e11_after_the_dropout(seed, "");
        println!("E11 seed {seed}, thesis preset: TFRC bytes per 10 s {bins:?}, p at 150 s {p:.3}");
        assert!(p > 0.05 && p < 0.3, "seed {seed}: p = {p}");
        assert!(bins.iter().all(|&b| b > 0), "seed {seed}: {bins:?}");
    }
}

/// The summary's `loss_event_rate` of the TFRC flow after E11's 30 s dropout (thesis preset
/// with RFC 5348 §6.1's early reports, as the test before last, 140-180 s window). The receiver
/// counts the loss events, so the rate counts them per packet
/// the receiver judged in the window (received or detected lost), not per packet the sender
/// sent there: the ~250 packets sent into the dropout are judged lost, each its own event (see
/// that test), at 143-144 s, inside the window, while the sender, slowed to a packet every
/// few seconds, sends 12-16 in the window. Events per packet sent read 36.0 on seed 1 before
/// 2026-11-26 (252 events, 7 packets), which no loss event rate can; per packet judged it is
/// below 1. (With the thesis preset's once-per-RTT reports the sender keeps its rate until the
/// events are reported, sends 57, 152 and 112 packets in the window, and the rate reads 0.707,
/// 0.326 and 0.637.)
#[test]
fn e11_loss_event_rate_after_the_30s_dropout_counts_the_receivers_judged_packets() {
    let line = "params = { b = 2, header_size = 28 }";
    let text = E11.replace(
        line,
        "params = { b = 2, header_size = 28, report_on_loss_event = true }",
    );
    for seed in [1u64, 2, 3] {
        let r = tfcc_sim::scenario::load_str(&text, "e11", "e11", &[], Some(seed))
            .unwrap()
            .into_simulation()
            .unwrap()
            .run();
        let f = &r.summary.flows[1];
        assert_eq!(f.protocol, "tfrc");
        println!(
            "E11 seed {seed}: TFRC loss_event_rate {:.4}, {} packets sent in the window",
            f.loss_event_rate, f.packets_sent
        );
        // At most 1 by construction; most of the judged packets are events (each packet lost
        // in the dropout is its own, the test before last), so per packet sent (a few dozen at
        // most) the events would be far above 1. Seeds 1-3: 0.920, 0.902, 0.895 with 12, 16
        // and 14 packets sent (0.940, 0.910, 0.880 before tfrcaudit's slowstart and `Δb_P`
        // rules; 0.966, 0.945, 0.937 before the at-once increase below one packet per RTT let
        // the sender send 12-15 packets in the window instead of 6-7).
        assert!(
            f.loss_event_rate > 0.5 && f.loss_event_rate <= 1.0,
            "seed {seed}: {}",
            f.loss_event_rate
        );
        assert!(f.packets_sent < 30, "seed {seed}: {}", f.packets_sent);
        if seed == 1 {
            // 103/112 in lowest terms, 12 packets sent in the window (110/117 before tfrcaudit's
            // slowstart and `Δb_P` rules). Before the thesis' at-once increase below one packet
            // per RTT (004 Sec. 3.5.1, 2026-11-26) it was 252 / 261 = 0.966, and the old rate
            // 252 / 7 = 36.0.
            assert_eq!(f.loss_event_rate, 103.0 / 112.0);
        }
    }
}
