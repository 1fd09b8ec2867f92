//! A sender and a receiver over a fixed-delay pipe that drops chosen packets.

use super::*;
use crate::endpoint::{Endpoint, Receiver};
use crate::packet::{Header, Packet};
use crate::time::{Dur, Time};

/// Runs `secs` seconds of a one-way `delay` path each way; `drop(seq)` drops data packets.
/// Returns the data packets delivered.
pub(crate) fn run_pair<R: Endpoint + Receiver>(
    tx: &mut RateSender,
    rx: &mut R,
    delay: Dur,
    secs: u64,
    drop: impl Fn(u64) -> bool,
) -> u64 {
    let mut to_rx: std::collections::VecDeque<(Time, Packet)> = Default::default();
    let mut to_tx: std::collections::VecDeque<(Time, Packet)> = Default::default();
    let end = Time::from_secs(secs);
    let mut now = Time::ZERO;
    let mut delivered = 0;
    while now < end {
        while let Some(p) = tx.poll_transmit(now) {
            if let Header::WarcData(d) = p.header {
                if !drop(d.seq) {
                    to_rx.push_back((now + delay, p));
                }
            }
        }
        while let Some(p) = rx.poll_transmit(now) {
            to_tx.push_back((now + delay, p));
        }
        let next = [
            tx.next_timeout(),
            rx.next_timeout(),
            to_rx.front().map(|x| x.0),
            to_tx.front().map(|x| x.0),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(end);
        now = next.max(now);
        while to_rx.front().is_some_and(|x| x.0 <= now) {
            let (_, p) = to_rx.pop_front().unwrap();
            delivered += 1;
            rx.on_packet(now, &p);
        }
        while to_tx.front().is_some_and(|x| x.0 <= now) {
            let (_, p) = to_tx.pop_front().unwrap();
            tx.on_packet(now, &p);
        }
        if tx.next_timeout().is_some_and(|t| t <= now) {
            tx.on_timeout(now);
        }
        if rx.next_timeout().is_some_and(|t| t <= now) {
            rx.on_timeout(now);
        }
    }
    delivered
}

#[test]
fn without_loss_the_rate_grows_about_half_a_packet_per_rtt() {
    // No loss: w = 2 + t after t rounds, and R is the mean of the last min(t, 160) windows,
    // w − (min(t, 160) − 1)/2. Uncapped: the 200-packet `max_window` would stop w at round 198.
    let mut tx = RateSender::new(RateSenderConfig::default());
    let mut rx = WarcReceiver::warc(
        WarcConfig {
            max_window: f64::INFINITY,
            ..WarcConfig::default()
        },
        40,
    );
    run_pair(&mut tx, &mut rx, Dur::from_millis(50), 30, |_| false);
    let rounds = rx.estimator().rounds() as f64;
    let r = tx.rate_packets_per_rtt().unwrap();
    assert!(rounds > 200.0, "rounds {rounds}");
    assert!(
        (r - (2.0 + rounds - (rounds.min(160.0) - 1.0) / 2.0)).abs() < 2.0,
        "rate {r} after {rounds} rounds"
    );
}

#[test]
fn with_periodic_loss_the_rate_settles_near_tcp() {
    // A drop every 400 packets: TCP's window saws with 3W²/8 = 400 → W ≈ 32.7, mean ≈ 24.5
    // packets per RTT (1.22/√p = 24.5). WARC's mean rate should be close.
    let mut tx = RateSender::new(RateSenderConfig::default());
    let mut rx = WarcReceiver::warc(WarcConfig::default(), 40);
    run_pair(&mut tx, &mut rx, Dur::from_millis(50), 200, |s| {
        s % 400 == 399
    });
    let r = rx.estimator().rate();
    assert!((18.0..32.0).contains(&r), "rate {r}");
    assert!(rx.estimator().loss_events() > 20);
}

/// A report whose holding delay covers the whole round trip (RFC 5348 §4.3 `R_sample <= 0`)
/// gave the unquantised estimator a sample of 0, taken as a 1 ns SRTT: the sender paced one
/// packet per `1 ns / R`. The sample is now floored at `min_rtt_sample` (1 µs).
#[test]
fn a_report_holding_the_whole_round_trip_gives_the_floor_not_a_nanosecond() {
    use super::wire::FeedbackHeader;
    let mut tx = RateSender::new(RateSenderConfig::default());
    assert!(tx.poll_transmit(Time::ZERO).is_some());
    for (now_ms, hold_ms) in [(100, 100), (200, 5_000)] {
        let f = FeedbackHeader {
            echo: Time::ZERO,
            hold: Dur::from_millis(hold_ms),
            rate: 2.0,
        };
        tx.on_packet(
            Time::from_millis(now_ms),
            &Packet {
                size: 40,
                header: Header::WarcFeedback(f),
            },
        );
        let srtt = tx.stats().rtt;
        assert!(
            srtt.is_some_and(|r| r >= Dur::from_micros(1)),
            "{now_ms}: {srtt:?}"
        );
    }
    let bad = RateSenderConfig {
        min_rtt_sample: Dur::ZERO,
        ..RateSenderConfig::default()
    };
    assert!(bad.validate().is_err());
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Arbitrary (even hostile) headers in any order never panic either end.
        #[test]
        fn endpoints_take_any_headers(msgs in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<f64>(), any::<bool>()), 0..200)) {
            let mut tx = RateSender::new(RateSenderConfig::default());
            let mut rx = WarcReceiver::warc(WarcConfig::default(), 40);
            let mut now = Time::ZERO;
            for (a, b, c, d, rate, data) in msgs {
                now = now.saturating_add(Dur(a % 50_000_000));
                if data {
                    let h = DataHeader { seq: b % 100_000, sent_at: Time(c % (now.0 + 1)), rtt: Dur(d % 2_000_000_000), rto: Dur(a % 5_000_000_000) };
                    rx.on_packet(now, &Packet { size: 1000, header: Header::WarcData(h) });
                } else {
                    let f = FeedbackHeader { echo: Time(c), hold: Dur(d), rate };
                    tx.on_packet(now, &Packet { size: 40, header: Header::WarcFeedback(f) });
                }
                if let Some(t) = rx.next_timeout() { if t <= now { rx.on_timeout(now); } }
                if let Some(t) = tx.next_timeout() { if t <= now { tx.on_timeout(now); } }
                while rx.poll_transmit(now).is_some() {}
                let _ = tx.poll_transmit(now);
                let _ = (tx.stats(), rx.stats());
            }
        }
    }
}

/// The data path dies at packet 300 (about 2.7 s in) and the reports keep flowing back. The
/// emulated window holds from the first silent round on (the rate, the mean of the last 160
/// windows, rises towards it); with `grow_in_silent_rounds` it grew by one per round into the
/// dead path, and the sender's rate with it.
#[test]
fn the_emulated_window_does_not_grow_while_nothing_arrives() {
    let run = |grow: bool, secs: u64| {
        let mut tx = RateSender::new(RateSenderConfig::default());
        let mut rx = WarcReceiver::warc(
            WarcConfig {
                grow_in_silent_rounds: grow,
                ..WarcConfig::default()
            },
            40,
        );
        let delivered = run_pair(&mut tx, &mut rx, Dur::from_millis(50), secs, |s| s >= 300);
        assert_eq!(delivered, 300);
        (rx.estimator().window(), tx.rate_packets_per_rtt().unwrap())
    };
    let (w5, _) = run(false, 5);
    let (w10, r10) = run(false, 10);
    assert_eq!(w10, w5, "the window holds");
    // The held window keeps entering `Q_w`, so the mean climbs towards it, not past it.
    assert!(r10 <= w10, "rate {r10}, window {w10}");
    let (g5, _) = run(true, 5);
    let (g10, gr10) = run(true, 10);
    // 5 s of rounds of about 0.1 s.
    assert!(g10 > g5 + 40.0, "window {g5} -> {g10}");
    // Measured: 51.5 packets per RTT against 28.9.
    assert!(gr10 > 1.5 * r10, "rate {gr10} against {r10}");
}
