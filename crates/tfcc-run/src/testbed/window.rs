//! The measurement window's figures, as the simulator's summary gives them: each flow's from
//! its endpoints' statistics (tfcc's transport counters, or kernel TCP's `TCP_INFO`) read at
//! the sampling instants, and the bottleneck's utilisation against what it could carry at its
//! scheduled rates. The summary covers the window only, so every figure is a difference
//! between the window's edges.

use std::time::Duration;

use tfcc_core::{Dur, Time};
use tfcc_net::relay::RelayStats;
use tfcc_net::testbed::{FlowResult, QdiscSample};
use tfcc_sim::recorder::{
    counts_in_window, fairness_theta, jain_index, VideoRecord, WindowGoodput,
};
use tfcc_sim::LinkAction;

use super::plan::Plan;
use super::series::{dur, mean_backlog, Directions};
use super::spurious_rtos;
use crate::summary::{is_tcp, FlowEntry, LinkEntry, Metrics, NamespaceRtos, VideoEntry};

/// A flow's figures over the measurement window from its endpoints' statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct EndpointFigures {
    /// Data packets sent: a tfcc sender's count, kernel TCP's data segments from `TCP_INFO`.
    packets_sent: u64,
    /// Loss events per data packet, counted on one side as in tfcc_sim::recorder: the
    /// sender's count per data packet sent where it keeps one (TFWC), else the receiver's
    /// (TFRC) per data packet its loss detector judged in the window, so at most 1; `None` for
    /// kernel TCP.
    loss_event_rate: Option<f64>,
    /// Mean of the sender's smoothed RTT over the samples in the window.
    mean_rtt_s: Option<f64>,
    /// Timeouts in the window: kernel TCP's retransmission timeouts (`tcpi_total_rto`), a tfcc
    /// sender's `Stats::timeouts` (TFRC's no-feedback expiries, TFWC's timer), as the
    /// simulator's summary counts them.
    timeouts: u64,
}

/// A tfcc flow is told apart by its transport counters, which kernel TCP flows lack.
fn endpoint_figures(
    r: &tfcc_net::testbed::FlowResult,
    interval: Duration,
    measure_from: Duration,
    duration: Duration,
    start: Time,
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
    // The samples of the intervals that count, as the simulator's (`counts_in_window`).
    let (iv, from) = (dur(interval), dur(measure_from));
    let rtts: Vec<f64> = r
        .sender
        .iter()
        .enumerate()
        .filter(|(k, _)| counts_in_window(instant(iv, *k), iv, from, start))
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

/// The instant sample `k` (0-based) of a series stands for: `(k + 1) · interval` after the
/// run's start ([`FlowResult::delivered`], `FlowResult::sender`).
fn instant(interval: Dur, k: usize) -> Time {
    Time::ZERO + interval * (k as u64 + 1)
}

/// The summary's `cov` of a flow: its receiver's goodput per sampling interval, from the bytes
/// it had delivered at each sampling instant ([`FlowResult::delivered`]), over the intervals
/// that lie wholly in the window and end after the flow's `start`, through the simulator's own
/// [`WindowGoodput`]. The readings are the simulator's quantity at the same instants: a tfcc
/// receiver's delivered bytes are read at the instant on its session's clock, a kernel TCP
/// receiver's bytes read from its socket within its 5 ms read timeout of it. A flow whose
/// bytes are rescaled to the simulator's packet size (`wire_size::to_simulator_bytes`) has
/// the same CoV, a ratio.
fn goodput_cov(
    delivered: &[u64],
    interval: Duration,
    measure_from: Duration,
    start: Time,
) -> Option<f64> {
    let (iv, from) = (dur(interval), dur(measure_from));
    let mut g = WindowGoodput::default();
    for (k, &d) in delivered.iter().enumerate() {
        g.sample(d, iv, counts_in_window(instant(iv, k), iv, from, start));
    }
    g.cov()
}

/// Flow `i`'s propagation RTT as configured (`Topology::base_rtt_s`, the simulator's
/// figure): the relay holds each packet for exactly its route's delays in that direction
/// (`plan`'s `FlowPath`s, from the same sums), so the configured RTT is what the testbed sets
/// up too. The RTT measured on top of it (`mean_rtt_s`) adds queueing, transmission and the
/// host's own delays (the relay's lateness, the stack's), which this figure leaves out on both
/// backends.
fn base_rtt_s(plan: &Plan, i: usize) -> f64 {
    plan.built.topology.base_rtt_s(plan.built.flows[i].route)
}

/// Bits the bottleneck could carry in `duration` at its scheduled rates. A dropout leaves the
/// rate as it is: the simulator's utilisation is the fraction of the window the transmitter
/// was busy, and a down link is idle (a TFWC flow's link down 3-9.5 s of a 6-15 s window read
/// 0.98 here, against the simulator's 0.61, while the capacity left out the dropout).
fn capacity_bits(
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

/// A bottleneck queue's counts in the measurement window, from tc's readings at its edges.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct QueueWindow {
    pub(super) tx_bytes: u64,
    pub(super) tx_packets: u64,
    pub(super) drops: u64,
    /// Packets that reached the queue: sent, dropped, or held at the window's end beyond what
    /// it held at its start.
    pub(super) arrivals: u64,
}

impl QueueWindow {
    /// The forward and the reverse queue between the window's start (`start`) and its end
    /// (`end`); all 0 without a reading at the end.
    pub(super) fn both(start: Directions, end: Option<Directions>) -> (QueueWindow, QueueWindow) {
        end.map_or_else(Default::default, |t| {
            (
                Self::between(start.forward, t.forward),
                Self::between(start.reverse, t.reverse),
            )
        })
    }

    fn between(start: QdiscSample, end: QdiscSample) -> QueueWindow {
        let tx_packets = end.sent_packets.saturating_sub(start.sent_packets);
        let drops = end.drops.saturating_sub(start.drops);
        QueueWindow {
            tx_bytes: end.sent_bytes.saturating_sub(start.sent_bytes),
            tx_packets,
            drops,
            // What the queue holds at the window's end beyond what it held at its start
            // arrived in the window too (the simulator counts every arrival; 1377 against its
            // 1391 without this).
            arrivals: (tx_packets + drops + end.backlog_packets)
                .saturating_sub(start.backlog_packets),
        }
    }
}

/// The summary's flows: each one's figures over the window from its endpoints
/// (`endpoint_figures`) and its receiver's bytes, with its packets lost (`lost`, from
/// `losses`) and its kernel-TCP spurious timeouts (`spurious`, from `spurious_rtos`).
pub(super) fn flow_entries(
    plan: &Plan,
    results: &[FlowResult],
    lost: &[Option<u64>],
    spurious: &[NamespaceRtos],
    interval: Duration,
) -> Vec<FlowEntry> {
    let (duration, measure_from) = (plan.duration, plan.measure_from);
    let window = duration - measure_from;
    results
        .iter()
        .zip(&plan.built.flow_info)
        .enumerate()
        .map(|(i, (r, info))| {
            let start = plan.built.flows[i].start;
            let own = endpoint_figures(r, interval, measure_from, duration, start);
            let cov = goodput_cov(&r.delivered, interval, measure_from, start);
            (i, r, info, own, cov)
        })
        .map(|(i, r, info, own, cov)| FlowEntry {
            id: i as u32,
            label: Some(info.label.clone()),
            group: Some(info.group),
            protocol: info.protocol.clone(),
            direction: info.direction.as_str().into(),
            throughput_bps: r.goodput_bps(window),
            bytes_delivered: r.window_bytes,
            packets_sent: own.packets_sent,
            packets_lost: lost[i],
            loss_event_rate: own.loss_event_rate,
            mean_rtt_s: own.mean_rtt_s,
            base_rtt_s: Some(base_rtt_s(plan, i)),
            cov,
            retransmits: 0,
            timeouts: own.timeouts,
            spurious_timeouts: spurious_rtos::of_flow(spurious, i),
            receiver_timeouts: r.window_receiver_timeouts.unwrap_or(0),
            ptcp: None,
            video: video_entry(plan, i, r),
        })
        .collect()
}

/// A video flow's frames in the window, as the simulator's summary has them
/// (`tfcc_sim::recorder::VideoRecord`): the source's counts at the window's edges, which the
/// sender thread read from the same `VideoSource` the simulator runs.
fn video_entry(plan: &Plan, i: usize, r: &FlowResult) -> Option<VideoEntry> {
    let run = r.video?;
    let (_, cfg) = plan.built.videos.iter().find(|(f, _)| *f as usize == i)?;
    Some(VideoEntry::new(&VideoRecord::of_window(
        cfg,
        run.at_window,
        run.at_end,
    )))
}

/// θ and Jain over the forward flows, as the simulator's summary (summary.rs).
pub(super) fn metrics(entries: &[FlowEntry]) -> Metrics {
    let forward: Vec<&FlowEntry> = entries.iter().filter(|e| !e.is_reverse()).collect();
    let goodputs: Vec<f64> = forward.iter().map(|e| e.throughput_bps).collect();
    let (tcp, other): (Vec<&FlowEntry>, Vec<&FlowEntry>) =
        forward.iter().partition(|e| is_tcp(&e.protocol));
    let tcp: Vec<f64> = tcp.iter().map(|e| e.throughput_bps).collect();
    let other: Vec<f64> = other.iter().map(|e| e.throughput_bps).collect();
    Metrics {
        fairness_theta: fairness_theta(&tcp, &other),
        jain_index: jain_index(&goodputs),
    }
}

/// The summary's two links, the bottleneck's directions, over the window: tc's counts
/// (`forward`, `reverse`), the relay's drops in the window where it ran, and the mean of the
/// queue readings (`queue`).
pub(super) fn link_entries(
    plan: &Plan,
    forward: QueueWindow,
    reverse: QueueWindow,
    relay: Option<&RelayStats>,
    queue: &[(Duration, Duration, Directions)],
) -> Vec<LinkEntry> {
    let (start_rate, events) = (plan.rate, &plan.events);
    let (duration, measure_from) = (plan.duration, plan.measure_from);
    let window = duration - measure_from;
    let relay_window = relay.map(|s| s.window_drops()).unwrap_or_default();
    // The forward direction's drops as the simulator's link counts them: its queue's (tc),
    // and the loss model's and the dropouts' (the relay's, on arrival, before the queue).
    let (artificial, down) = (relay_window.lost, relay_window.down_drops);
    let all_drops = forward.drops + artificial + down;
    vec![
        LinkEntry {
            name: "bottleneck".into(),
            // In the measurement window (tc counters differenced), IP headers included,
            // against the capacity at the scheduled rates: the simulator's fraction of the
            // window the transmitter was busy, in which a down link is idle, not absent.
            utilization: Some(
                forward.tx_bytes as f64 * 8.0
                    / (capacity_bits(start_rate, events, duration)
                        - capacity_bits(start_rate, events, measure_from))
                    .max(1.0),
            ),
            drops: all_drops,
            queue_drops: forward.drops,
            early_drops: 0,
            artificial_drops: artificial,
            down_drops: down,
            mean_queue_pkts: mean_backlog(queue, measure_from, false),
            arrivals: forward.arrivals + artificial + down,
            tx_packets: forward.tx_packets,
            tx_bytes: forward.tx_bytes,
        },
        // The reverse direction: forward flows' feedback and reverse flows' data. Scheduled
        // events do not touch it (the simulator's apply to `bottleneck` only), nor does the
        // loss model.
        LinkEntry {
            name: "bottleneck-rev".into(),
            utilization: Some(
                reverse.tx_bytes as f64 * 8.0
                    / (start_rate.bps() as f64 * window.as_secs_f64()).max(1.0),
            ),
            drops: reverse.drops,
            queue_drops: reverse.drops,
            early_drops: 0,
            artificial_drops: 0,
            down_drops: 0,
            mean_queue_pkts: mean_backlog(queue, measure_from, true),
            arrivals: reverse.arrivals,
            tx_packets: reverse.tx_packets,
            tx_bytes: reverse.tx_bytes,
        },
    ]
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
        let f = endpoint_figures(&r, iv, from, to, Time::ZERO);
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
        let g = endpoint_figures(&out, iv, from, to, Time::ZERO);
        assert_eq!((g.packets_sent, g.loss_event_rate), (4, Some(79.0 / 85.0)));
        // A receiver-counted flow that judged nothing in the window reads 0.
        (out.window_loss_events, out.window_packets_judged) = (Some(0), Some(0));
        assert_eq!(
            endpoint_figures(&out, iv, from, to, Time::ZERO).loss_event_rate,
            Some(0.0)
        );
        // A receiver that counted no loss event in the whole run (TFRCP's) gives its loss
        // rate `p`, as the simulator's summary does; one that counted some before the window
        // still reads the window's 0.
        out.receiver_p = Some(0.0125);
        out.receiver_run_loss_events = Some(0);
        assert_eq!(
            endpoint_figures(&out, iv, from, to, Time::ZERO).loss_event_rate,
            Some(0.0125)
        );
        out.receiver_run_loss_events = Some(2);
        assert_eq!(
            endpoint_figures(&out, iv, from, to, Time::ZERO).loss_event_rate,
            Some(0.0)
        );
        // A tfcc sender's timeouts in the window (2 at 4 s, 5 at 10 s), as the simulator's.
        assert_eq!(f.timeouts, 3);
        // RTT samples at 5..=10 s: 45..=50 ms.
        assert!((f.mean_rtt_s.unwrap() - 0.0475).abs() < 1e-12);
        r.sender_window_loss_events = Some(12);
        let f = endpoint_figures(&r, iv, from, to, Time::ZERO);
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
        let f = endpoint_figures(&late, iv, from, to, Time::ZERO);
        assert_eq!((f.packets_sent, f.loss_event_rate), (6, Some(0.5)));
        // Kernel TCP: no transport counters; segments sent (TCP_INFO) and the RTT, no loss
        // event rate.
        r.sender_counters = None;
        let f = endpoint_figures(&r, iv, from, to, Time::ZERO);
        assert_eq!((f.packets_sent, f.loss_event_rate), (600, None));
        // and its timeouts in the window (tcpi_total_rto 2 at 4 s, 5 at 10 s)
        assert_eq!(f.timeouts, 3);
        assert!((f.mean_rtt_s.unwrap() - 0.0475).abs() < 1e-12);
        r.sender.clear();
        assert_eq!(
            endpoint_figures(&r, iv, from, to, Time::ZERO),
            EndpointFigures::default()
        );
    }

    /// The testbed's CoV is the simulator's over the same readings: goodput per interval from
    /// the receiver's bytes at the sampling instants, the intervals wholly in the window and
    /// ending after the flow's start only.
    #[test]
    fn the_cov_takes_the_intervals_in_the_window_after_the_flows_start() {
        let s = Duration::from_secs;
        // Bytes by 1, 2, ..., 6 s; the window from 2 s, the flow from 2.5 s. The intervals
        // ending at 3-6 s count: 100, 200, 100 and 0 B, 800, 1600, 800 and 0 b/s, mean 800,
        // population sd 800 / √2.
        let delivered = [100, 200, 300, 500, 600, 600];
        let start = Time::ZERO + Dur::from_millis(2_500);
        let cov = goodput_cov(&delivered, s(1), s(2), start).unwrap();
        assert!((cov - 0.5f64.sqrt()).abs() < 1e-12, "{cov}");
        // A window from 1 s and a flow from 0 s: the interval ending at 2 s counts too.
        let mut m = tfcc_sim::recorder::Moments::default();
        for b in [100.0, 100.0, 200.0, 100.0, 0.0] {
            m.push(b * 8.0);
        }
        let from_0 = goodput_cov(&delivered, s(1), s(1), Time::ZERO).unwrap();
        assert!((from_0 - m.cov().unwrap()).abs() < 1e-12, "{from_0}");
        // A window with no interval wholly in it, or nothing delivered: no CoV.
        assert_eq!(goodput_cov(&delivered, s(1), s(6), Time::ZERO), None);
        assert_eq!(goodput_cov(&[0, 0, 0], s(1), s(0), Time::ZERO), None);
    }

    /// A flow's base RTT is its route's delays as configured, the same sums the relay holds
    /// its packets for: two flows with 1 and 3 ms access links across a 10 ms bottleneck.
    #[test]
    fn the_base_rtt_is_the_routes_configured_delays() {
        let path = std::env::temp_dir().join(format!("tfcc-base-rtt-{}.toml", std::process::id()));
        std::fs::write(
            &path,
            "name = \"base-rtt\"\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = { rate = \"4Mbps\", delay = \"10ms\" }\n\
             access = { rate = \"100Mbps\", delay = [\"1ms\", \"3ms\"] }\n\
             [[flows]]\nprotocol = \"tfrc\"\ncount = 2\n",
        )
        .unwrap();
        let p = super::super::plan::plan(&path, &[], None);
        let _ = std::fs::remove_file(&path);
        let p = p.unwrap();
        for (i, want_ms) in [(0, 24.0), (1, 32.0)] {
            assert!((base_rtt_s(&p, i) * 1e3 - want_ms).abs() < 1e-9, "flow {i}");
            let relayed = p.paths[i].forward + p.paths[i].reverse;
            assert_eq!(relayed.as_secs_f64(), base_rtt_s(&p, i), "flow {i}");
        }
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

    /// A queue's window counts are the differences of tc's counters at the window's edges,
    /// and its arrivals also hold the backlog it gained over the window; without a reading at
    /// the end they are all 0.
    #[test]
    fn a_queues_arrivals_include_the_backlog_it_gained_in_the_window() {
        let q = |sent_bytes, sent_packets, drops, backlog_packets| QdiscSample {
            sent_bytes,
            sent_packets,
            drops,
            backlog_packets,
            ..QdiscSample::default()
        };
        let start = Directions {
            forward: q(1_000, 10, 2, 5),
            reverse: q(400, 4, 0, 3),
        };
        let end = Directions {
            forward: q(101_000, 110, 9, 8),
            reverse: q(800, 8, 1, 0),
        };
        let (f, r) = QueueWindow::both(start, Some(end));
        let counts = |tx_bytes, tx_packets, drops, arrivals| QueueWindow {
            tx_bytes,
            tx_packets,
            drops,
            arrivals,
        };
        // 100 sent and 7 dropped, and 3 more waiting than at the start.
        assert_eq!(f, counts(100_000, 100, 7, 110));
        // The reverse queue emptied: 3 of the 4 it sent were already waiting at the start.
        assert_eq!(r, counts(400, 4, 1, 2));
        assert_eq!(QueueWindow::both(start, None), Default::default());
    }
}
