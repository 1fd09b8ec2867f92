//! End-to-end runs of 003's receiver-driven rate schemes (WARC, TEAR, TFRCP) through the
//! simulator: each fills a link, and under the same random loss WARC takes what TCP takes.

use tfcc_core::tcp::{TcpConfig, Variant};
use tfcc_core::tear::{Tear, TearConfig};
use tfcc_core::tfrcp::{Tfrcp, TfrcpConfig};
use tfcc_core::warc::{AnyRateEstimator, FtoLoss, RateSenderConfig, Warc, WarcConfig};
use tfcc_core::{Dur, Time};
use tfcc_sim::{DelaySpread, FlowSpec, LossModel, RunSummary};

mod common;
use common::{dumbbell, lossy_link, simulation, Bottleneck};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Scheme {
    Tcp,
    Warc,
    /// WARC whose fluid timeout backs off on every loss in the phase ([`FtoLoss::Any`], the
    /// literal reading of 003 Sec. 3.2.2.3; the default backs off on the emulated
    /// retransmission's loss).
    WarcAny,
    Tear,
    Tfrcp,
}

fn spec(s: Scheme, route: usize, start: Time) -> FlowSpec {
    let est = match s {
        Scheme::Tcp => {
            return FlowSpec::tcp(route, TcpConfig::with_variant(Variant::Sack), start, None)
        }
        Scheme::Warc => AnyRateEstimator::Warc(Warc::new(WarcConfig::default())),
        Scheme::WarcAny => AnyRateEstimator::Warc(Warc::new(WarcConfig {
            fto_loss: FtoLoss::Any,
            ..WarcConfig::default()
        })),
        Scheme::Tear => AnyRateEstimator::Tear(Tear::new(TearConfig::default())),
        Scheme::Tfrcp => AnyRateEstimator::Tfrcp(Tfrcp::new(TfrcpConfig::default())),
    };
    FlowSpec::rate(route, RateSenderConfig::default(), est, start, None)
}

fn run(b: &Bottleneck, flows: &[Scheme], secs: u64, seed: u64) -> (RunSummary, usize) {
    let (topo, link) = dumbbell(b, DelaySpread::Fixed(Dur::from_millis(1)), flows.len());
    let mut sim = simulation(topo, secs, seed);
    for (i, s) in flows.iter().enumerate() {
        let start = Time::from_secs_f64(i as f64 / flows.len() as f64);
        sim.add_flow(spec(*s, i, start)).unwrap();
    }
    (sim.run().summary, link)
}

/// As [`run`] on a 100 Mb/s, 20 ms bottleneck with this artificial loss model.
fn run_with_loss(model: LossModel, flow: Scheme, secs: u64, seed: u64) -> f64 {
    let topo = lossy_link(model);
    let mut sim = simulation(topo, secs, seed);
    sim.add_flow(spec(flow, 0, Time::ZERO)).unwrap();
    sim.run().summary.flows[0].throughput_bps
}

fn bottleneck(mbps: u64, limit: u32, loss: f64) -> Bottleneck {
    Bottleneck {
        bps: mbps * 1_000_000,
        delay: Dur::from_millis(20),
        limit,
        loss,
    }
}

#[test]
fn warc_and_tear_fill_a_link_alone() {
    for s in [Scheme::Warc, Scheme::Tear] {
        let (sum, b) = run(&bottleneck(10, 60, 0.0), &[s], 120, 1);
        let u = sum.links[b].utilization;
        println!("{s:?}: utilisation {u:.3}");
        assert!(u > 0.9, "{s:?}: utilisation {u}");
    }
}

/// TFRCP alone oscillates: it doubles every 5 s until a lossy interval and then drops to the
/// PFTK rate of that interval's loss ratio (003 Fig. 2.4(b), "large oscillations"), so it
/// leaves much of a link idle. Measured: 0.44 of 10 Mb/s.
#[test]
fn tfrcp_runs_and_oscillates_below_the_link_rate() {
    let (sum, b) = run(&bottleneck(10, 60, 0.0), &[Scheme::Tfrcp], 120, 1);
    let u = sum.links[b].utilization;
    assert!((0.2..0.9).contains(&u), "utilisation {u}");
}

/// Count-based random loss (003 Sec. 3.5.1, E3.1's kind of link): each flow alone on the same
/// 1 % Bernoulli link. WARC's emulated TCP meets loss at p per packet *WARC* sends, R per
/// round, so its window settles where `1 = p·R·W/2` with `R = W`: `R = √(2/p)` = 14.1 packets
/// per RTT, against TCP's `√(3/(2p))` ≈ 12.2; the expected ratio is 2/√3 = 1.15 while the
/// fluid timeout does not escalate. That holds with only the emulated retransmission's loss
/// backing the timeout phase off (the default): measured 1.163. With the sentence of Sec.
/// 3.2.2.3 read literally (`fto_loss = "any"`: every further loss in the phase backs it off)
/// the sender keeps sending at the averaged rate in the phase, meets more losses there and
/// the phase escalates: measured 0.935, so it can only be below. (Under time-based loss, where the loss
/// instants do not depend on the sender, the ratio is 1: see the interval-loss test.)
#[test]
fn under_random_loss_warc_takes_what_tcp_takes() {
    let b = bottleneck(100, 1000, 0.01);
    let tput = |s| run(&b, &[s], 300, 3).0.flows[0].throughput_bps;
    let tcp = tput(Scheme::Tcp);
    let rtx = tput(Scheme::Warc);
    let warc = tput(Scheme::WarcAny);
    println!(
        "tcp {tcp:.0} b/s, warc {warc:.0} b/s ({:.3}), warc (retransmission back-off) {rtx:.0} \
         b/s ({:.3})",
        warc / tcp,
        rtx / tcp
    );
    assert!(
        (1.05..=1.25).contains(&(rtx / tcp)),
        "WARC (retransmission back-off)/TCP = {}",
        rtx / tcp
    );
    assert!(warc < rtx, "every loss backing off: {warc} vs {rtx}");
}

/// WARC's fluid-based timeouts (003 Sec. 3.2.2.3) are its receiver's: under heavy random loss
/// the summary's `receiver_timeouts` counts them, and the sender's `timeouts` (no-feedback
/// expiries) stay apart; a TCP flow's receiver counts none. Run with the default, only the
/// emulated retransmission's loss backing the phase off, so that the flow enters the phase
/// again and again: with `fto_loss = "any"` (every loss in the phase backs it off) the flow at
/// 10 % loss does not leave the phase once in it (the phase grows by u·2^C per loss, C up to 6,
/// faster than it counts down): measured, the summary's window counts 0 entries and the flow
/// sends 6 packets (417 b/s).
#[test]
fn the_summary_counts_warcs_fluid_timeouts_at_the_receiver() {
    let b = bottleneck(100, 1000, 0.1);
    let warc = run(&b, &[Scheme::Warc], 120, 4).0.flows[0].clone();
    let tcp = run(&b, &[Scheme::Tcp], 120, 4).0.flows[0].clone();
    println!(
        "warc: receiver {} sender {}; tcp: receiver {} sender {}",
        warc.receiver_timeouts, warc.timeouts, tcp.receiver_timeouts, tcp.timeouts
    );
    assert!(warc.receiver_timeouts > 5, "{}", warc.receiver_timeouts);
    assert!(warc.timeouts < warc.receiver_timeouts);
    assert_eq!(tcp.receiver_timeouts, 0);
    assert!(tcp.timeouts > 0);
}

/// Competing on a DropTail dumbbell (003 Sec. 3.5.1, Fig. 3.13): WARC and TCP share.
#[test]
fn warc_and_tcp_share_a_droptail_bottleneck() {
    let flows = [
        Scheme::Tcp,
        Scheme::Warc,
        Scheme::Tcp,
        Scheme::Warc,
        Scheme::Tcp,
        Scheme::Warc,
        Scheme::Tcp,
        Scheme::Warc,
    ];
    let (sum, b) = run(&bottleneck(15, 100, 0.0), &flows, 200, 2);
    let by = |p: &str| -> f64 {
        sum.flows
            .iter()
            .filter(|f| f.protocol.starts_with(p))
            .map(|f| f.throughput_bps)
            .sum()
    };
    let (tcp, warc) = (by("tcp"), by("warc"));
    println!("tcp {tcp:.0}, warc {warc:.0}, ratio {:.3}", warc / tcp);
    assert!(sum.links[b].utilization > 0.9);
    assert!(
        (0.5..=1.6).contains(&(warc / tcp)),
        "WARC/TCP = {}",
        warc / tcp
    );
}

/// WARC/TCP under time-based loss (one drop per interval T, E[T] = 0.5 s), each flow alone on
/// the same link, for CV[T] = 0, 0.5, 1.
fn time_based_ratios() -> Vec<(f64, f64)> {
    [0.0, 0.5, 1.0]
        .into_iter()
        .map(|cv| {
            let model = LossModel::Interval {
                mean: Dur::from_millis(500),
                cv,
            };
            let tcp = run_with_loss(model.clone(), Scheme::Tcp, 400, 5);
            let warc = run_with_loss(model, Scheme::Warc, 400, 5);
            println!(
                "CV {cv}: tcp {tcp:.0}, warc {warc:.0}, ratio {:.3}",
                warc / tcp
            );
            (cv, warc / tcp)
        })
        .collect()
}

/// 003 E3.2 / Fig. 3.12: WARC's share does not depend on the variability of the loss
/// process, where GAIMD, TFRC, TEAR, IIAD, SQRT and AIAD/H fall from 1 to 0.6–0.8 of TCP between
/// CV[T] = 0 and 1. Measured ratios 1.167, 1.143, 1.106.
#[test]
fn under_time_based_loss_warcs_share_does_not_depend_on_cv() {
    let r = time_based_ratios();
    let (lo, hi) = r.iter().fold((f64::MAX, f64::MIN), |(lo, hi), (_, x)| {
        (lo.min(*x), hi.max(*x))
    });
    assert!(hi - lo < 0.1, "{r:?}");
}

/// 003 Sec. 3.3 (Eqs. 3.4–3.6), E3.2: WARC ≈ 1.0 × TCP for every CV[T].
///
/// Does not reproduce: WARC/TCP = 1.167, 1.143, 1.106 at CV 0, 0.5, 1. 4 % of it is
/// accounting (WARC's 1000-byte packets count whole, TCP's count 1000 of 1040 bytes); the
/// rest is ns-2 SACK TCP taking less than the fluid AIMD WARC emulates: at CV 0 TCP sends
/// 296 packets/s where +1 per RTT and halving every 0.5 s (11.4 RTTs) give 387.
#[test]
#[ignore = "does not reproduce: WARC/TCP 1.11–1.17 against the thesis' ≈ 1.0"]
fn under_time_based_loss_warc_takes_what_tcp_takes() {
    for (cv, r) in time_based_ratios() {
        assert!((0.9..=1.1).contains(&r), "CV {cv}: WARC/TCP = {r}");
    }
}

/// 003 Fig. 2.1(b)/3.12 at CV = 0: the rate-based schemes take about TCP's share under
/// periodic loss (a drop every 100 packets), each alone on the same link. Measured: WARC
/// 1.089, TEAR 1.068, TFRCP 1.056 (4 % of each is accounting: their 1000-byte packets count
/// whole, TCP counts 1000 of its 1040 bytes).
#[test]
fn under_periodic_loss_the_rate_schemes_are_roughly_tcp_friendly() {
    let model = LossModel::CountInterval {
        mean: 100.0,
        cv: 0.0,
    };
    let tcp = run_with_loss(model.clone(), Scheme::Tcp, 300, 7);
    let mut out = Vec::new();
    for s in [Scheme::Warc, Scheme::Tear, Scheme::Tfrcp] {
        let x = run_with_loss(model.clone(), s, 300, 7);
        println!("{s:?}: {:.3} of TCP", x / tcp);
        out.push((s, x / tcp));
    }
    for (s, r) in out {
        assert!((0.8..=1.25).contains(&r), "{s:?}: {r:.3} of TCP");
    }
}
