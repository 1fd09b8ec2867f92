//! The measurement window's figures, as the simulator's summary gives them: each flow's from
//! its endpoints' statistics (tfcc's transport counters, or kernel TCP's `TCP_INFO`) read at
//! the sampling instants, and the bottleneck's utilisation against what it could carry at its
//! scheduled rates. The summary covers the window only, so every figure is a difference
//! between the window's edges.

use std::time::Duration;

use tfcc_sim::LinkAction;

/// A flow's figures over the measurement window from its endpoints' statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct EndpointFigures {
    /// Data packets sent: a tfcc sender's count, kernel TCP's data segments from `TCP_INFO`.
    pub(super) packets_sent: u64,
    /// Loss events per data packet, counted on one side as in tfcc_sim::recorder: the
    /// sender's count per data packet sent where it keeps one (TFWC), else the receiver's
    /// (TFRC) per data packet its loss detector judged in the window, so at most 1; `None` for
    /// kernel TCP.
    pub(super) loss_event_rate: Option<f64>,
    /// Mean of the sender's smoothed RTT over the samples in the window.
    pub(super) mean_rtt_s: Option<f64>,
    /// Timeouts in the window: kernel TCP's retransmission timeouts (`tcpi_total_rto`), a tfcc
    /// sender's `Stats::timeouts` (TFRC's no-feedback expiries, TFWC's timer), as the
    /// simulator's summary counts them.
    pub(super) timeouts: u64,
}

/// A tfcc flow is told apart by its transport counters, which kernel TCP flows lack.
pub(super) fn endpoint_figures(
    r: &tfcc_net::testbed::FlowResult,
    interval: Duration,
    measure_from: Duration,
    duration: Duration,
) -> EndpointFigures {
    // Sample k (0-based) is taken at (k + 1) · interval.
    let k_of = |t: Duration| (t.as_nanos() / interval.as_nanos().max(1)) as usize;
    let at = |t: Duration| match k_of(t) {
        0 => tfcc_net::testbed::SenderSample::default(),
        k => r
            .sender
            .get(k - 1)
            .or(r.sender.last())
            .copied()
            .unwrap_or_default(),
    };
    let (a, b) = (at(measure_from), at(duration));
    let packets_sent = b.packets_sent.saturating_sub(a.packets_sent);
    // The sender's events located in the window per packet it sent, as the simulator counts
    // them (`Sender::loss_events_since`: counted where detected, a window that starts in an
    // outage held the losses of packets sent before it), or the receiver's per packet it
    // judged (received or detected lost; docs/scenarios.md, `loss_event_rate`): the receiver
    // judges the packets lost in a long outage when the path returns, in a window where the
    // sender sent few, and per packet sent that read 19.75 after 004 E11's 30 s dropout.
    let sender_events = r.sender_window_loss_events.unwrap_or(0);
    let (events, packets) = if sender_events > 0 {
        (sender_events, packets_sent)
    } else {
        (
            r.window_loss_events.unwrap_or(0),
            r.window_packets_judged.unwrap_or(0),
        )
    };
    let rtts: Vec<f64> = r
        .sender
        .iter()
        .enumerate()
        .filter(|(k, _)| k + 1 > k_of(measure_from))
        .filter_map(|(_, s)| s.rtt.map(|d| d.as_secs_f64()))
        .collect();
    let mean_rtt_s = (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64);
    if r.sender_counters.is_none() {
        // Kernel TCP: segments sent and timeouts, but no loss events to set beside them.
        return EndpointFigures {
            packets_sent,
            mean_rtt_s,
            timeouts: b.timeouts.saturating_sub(a.timeouts),
            ..EndpointFigures::default()
        };
    }
    // A receiver that counted no loss event in the whole run (TFRCP's counts lost packets,
    // not events; a CBR sink none) gives its loss rate at the window's end, as the simulator's summary does
    // (tfcc_sim's `loss_event_rate`, "falls back to the receiver's `p`").
    let fallback = (sender_events == 0 && r.receiver_run_loss_events == Some(0))
        .then(|| r.receiver_p.unwrap_or(0.0));
    EndpointFigures {
        packets_sent,
        loss_event_rate: Some(match fallback {
            Some(p) => p,
            None if packets > 0 => events as f64 / packets as f64,
            None => 0.0,
        }),
        mean_rtt_s,
        timeouts: b.timeouts.saturating_sub(a.timeouts),
    }
}

/// Bits the bottleneck could carry in `duration` at its scheduled rates. A dropout leaves the
/// rate as it is: the simulator's utilisation is the fraction of the window the transmitter
/// was busy, and a down link is idle (a TFWC flow's link down 3-9.5 s of a 6-15 s window read
/// 0.98 here, against the simulator's 0.61, while the capacity left out the dropout).
pub(super) fn capacity_bits(
    rate: tfcc_core::Rate,
    events: &[(Duration, LinkAction)],
    duration: Duration,
) -> f64 {
    let (mut bits, mut t, mut bps) = (0.0, Duration::ZERO, rate.bps() as f64);
    for (at, a) in events.iter().filter(|(at, _)| *at <= duration) {
        bits += bps * (*at - t).as_secs_f64();
        t = *at;
        if let LinkAction::SetRate(r) = a {
            bps = r.bps() as f64;
        }
    }
    bits + bps * duration.saturating_sub(t).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfcc_core::Dur;

    #[test]
    fn endpoint_figures_cover_the_window_and_prefer_the_senders_loss_events() {
        use tfcc_net::testbed::{FlowResult, SenderSample};
        let sample = |k: u64| SenderSample {
            rtt: Some(Dur::from_millis(40 + k)),
            packets_sent: 100 * k,
            timeouts: k / 2,
            ..SenderSample::default()
        };
        // Ten samples at 1..=10 s; window 4-10 s.
        let mut r = FlowResult {
            sender: (1..=10).map(sample).collect(),
            window_loss_events: Some(3),
            window_packets_judged: Some(580),
            sender_counters: Some(tfcc_net::Counters::default()),
            ..FlowResult::default()
        };
        let (iv, from, to) = (
            Duration::from_secs(1),
            Duration::from_secs(4),
            Duration::from_secs(10),
        );
        let f = endpoint_figures(&r, iv, from, to);
        assert_eq!(f.packets_sent, 600);
        // The receiver's 3 events per packet it judged in the window.
        assert_eq!(f.loss_event_rate, Some(3.0 / 580.0));
        // After a long outage the receiver judges the packets lost in it inside a window where
        // the sender sent few: 79 events among 85 packets judged, 4 sent. Per packet sent that
        // read 19.75 (004 E11's 30 s dropout on the testbed); per packet judged it is a rate.
        let mut out = r.clone();
        out.sender = (1..=10u64)
            .map(|k| SenderSample {
                packets_sent: 1000 + k.saturating_sub(6),
                ..sample(k)
            })
            .collect();
        (out.window_loss_events, out.window_packets_judged) = (Some(79), Some(85));
        let g = endpoint_figures(&out, iv, from, to);
        assert_eq!((g.packets_sent, g.loss_event_rate), (4, Some(79.0 / 85.0)));
        // A receiver-counted flow that judged nothing in the window reads 0.
        (out.window_loss_events, out.window_packets_judged) = (Some(0), Some(0));
        assert_eq!(
            endpoint_figures(&out, iv, from, to).loss_event_rate,
            Some(0.0)
        );
        // A receiver that counted no loss event in the whole run (TFRCP's) gives its loss
        // rate `p`, as the simulator's summary does; one that counted some before the window
        // still reads the window's 0.
        out.receiver_p = Some(0.0125);
        out.receiver_run_loss_events = Some(0);
        assert_eq!(
            endpoint_figures(&out, iv, from, to).loss_event_rate,
            Some(0.0125)
        );
        out.receiver_run_loss_events = Some(2);
        assert_eq!(
            endpoint_figures(&out, iv, from, to).loss_event_rate,
            Some(0.0)
        );
        // A tfcc sender's timeouts in the window (2 at 4 s, 5 at 10 s), as the simulator's.
        assert_eq!(f.timeouts, 3);
        // RTT samples at 5..=10 s: 45..=50 ms.
        assert!((f.mean_rtt_s.unwrap() - 0.0475).abs() < 1e-12);
        r.sender_window_loss_events = Some(12);
        let f = endpoint_figures(&r, iv, from, to);
        // The sender's 12 events located in the window per packet it sent.
        assert_eq!(f.loss_event_rate, Some(12.0 / 600.0));
        // After an outage that began before the window, a TFWC sender detects in the window
        // the losses of packets sent before it; located, 3 of its 6 packets sent in the window
        // start an event, whatever it detected (it was 8 detected, 8/6).
        let mut late = r.clone();
        late.sender = (1..=10u64)
            .map(|k| SenderSample {
                packets_sent: 1000 + k.saturating_sub(4),
                ..sample(k)
            })
            .collect();
        late.sender_window_loss_events = Some(3);
        let f = endpoint_figures(&late, iv, from, to);
        assert_eq!((f.packets_sent, f.loss_event_rate), (6, Some(0.5)));
        // Kernel TCP: no transport counters; segments sent (TCP_INFO) and the RTT, no loss
        // event rate.
        r.sender_counters = None;
        let f = endpoint_figures(&r, iv, from, to);
        assert_eq!((f.packets_sent, f.loss_event_rate), (600, None));
        // and its timeouts in the window (tcpi_total_rto 2 at 4 s, 5 at 10 s)
        assert_eq!(f.timeouts, 3);
        assert!((f.mean_rtt_s.unwrap() - 0.0475).abs() < 1e-12);
        r.sender.clear();
        assert_eq!(
            endpoint_figures(&r, iv, from, to),
            EndpointFigures::default()
        );
    }

    #[test]
    fn capacity_follows_rate_changes_and_dropouts() {
        let events = vec![
            (
                Duration::from_secs(4),
                LinkAction::SetRate(tfcc_core::Rate::from_mbps(5)),
            ),
            (Duration::from_secs(6), LinkAction::SetUp(false)),
            (Duration::from_secs(7), LinkAction::SetUp(true)),
        ];
        let c = capacity_bits(
            tfcc_core::Rate::from_mbps(10),
            &events,
            Duration::from_secs(10),
        );
        // Down from 6 to 7 s: idle at 5 Mb/s, not absent.
        assert_eq!(c, 40e6 + 30e6);
    }
}
