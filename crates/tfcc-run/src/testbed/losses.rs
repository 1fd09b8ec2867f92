//! Which flow lost which packets in the measurement window. tc counts a queue's drops without
//! saying whose packets they were, and the simulator's summary gives each flow's
//! `packets_lost`; this module attributes the queues' drops to flows (by sequence range for
//! tfcc flows, by the relay's epoch marks for kernel TCP, by elimination where neither is
//! counted) and says why where it cannot. It also sets how long the receivers read on after
//! the run (`drain`), since both counts need the queues emptied of the window's packets.

use std::time::Duration;

use tfcc_core::Dur;
use tfcc_net::arrivals::Epoch;
use tfcc_net::relay::{DropCounts, FlowPath, RelayStats};
use tfcc_net::seqs::SeqLedger;
use tfcc_net::testbed::{FlowResult, FlowSpec, QdiscSample, DEFAULT_DRAIN};
use tfcc_sim::LinkAction;

use super::plan::Plan;
use super::series::Directions;
use super::wire_size::PATH_MTU;

/// The longest the receivers read on after the run (`drain_time`).
const MAX_DRAIN: Duration = Duration::from_secs(10);

/// How long the receivers read after the senders stop: long enough for a full queue to
/// empty at the lowest scheduled rate, and for the longest path's delays (the relay holds a
/// packet for its flow's one-way delay before the queue), with 200 ms to spare; at least
/// [`DEFAULT_DRAIN`], at most [`MAX_DRAIN`]. A packet still queued when the receivers stop would
/// otherwise look lost to `flow_losses`, which therefore also checks that the queues are
/// empty by then.
fn drain_time(
    rate: tfcc_core::Rate,
    events: &[(Duration, LinkAction)],
    limit: u32,
    paths: &[FlowPath],
) -> Duration {
    let lowest = events
        .iter()
        .filter_map(|(_, a)| match a {
            LinkAction::SetRate(r) => Some(r.bps()),
            _ => None,
        })
        .fold(rate.bps(), u64::min)
        .max(1);
    // The path's MTU bounds a packet.
    let queue =
        Duration::from_secs_f64(f64::from(limit) * f64::from(PATH_MTU) * 8.0 / lowest as f64);
    let path = paths
        .iter()
        .map(|p| p.forward + p.reverse)
        .max()
        .unwrap_or(Dur::ZERO);
    (queue + Duration::from_nanos(path.0) + Duration::from_millis(200))
        .max(DEFAULT_DRAIN)
        .min(MAX_DRAIN)
}

/// How long the receivers read on after the run. With two flows or more a queue's drops are
/// shared, and the relay is where each flow's arrivals at the queue are counted
/// (`flow_losses`). Every flow's count of what came out of the queue (a tfcc receiver's
/// sequence numbers, the marked packets counted at the receiving veth) needs the queue
/// emptied of the window's packets before the receivers stop. A lone kernel TCP flow's count
/// is tc's, which a full queue does not change; and where a full queue cannot empty within
/// the longest drain (10 kb/s after a rate change: 100 packets take 120 s), kernel TCP flows
/// do not wait for it: their counts fall back to the older rules when it is still full.
pub(super) fn drain(plan: &Plan) -> Duration {
    let tfcc_flows = plan.paths.iter().any(|p| p.proto.is_some());
    let needed = drain_time(
        plan.rate,
        &plan.events,
        plan.limit.max(plan.reverse_limit),
        &plan.paths,
    );
    if tfcc_flows || (plan.flows.len() > 1 && needed < MAX_DRAIN) {
        needed
    } else {
        DEFAULT_DRAIN
    }
}

/// Of what the queues (forward, reverse) held at the window's end, what had not left them by
/// the drain's reading (`drained`; `None` without it): FIFO queues send what they held before
/// anything that came later, so this is 0 once they have sent as many packets since; without
/// a reading at the end, what they held at the drain's reading.
pub(super) fn left_queued(
    drained: Option<Directions>,
    at_end: Option<Directions>,
) -> Option<(u64, u64)> {
    drained.map(|d| {
        let left = |late: QdiscSample, at: Option<QdiscSample>| match at {
            Some(a) => a
                .backlog_packets
                .saturating_sub(late.sent_packets.saturating_sub(a.sent_packets)),
            None => late.backlog_packets,
        };
        (
            left(d.forward, at_end.map(|e| e.forward)),
            left(d.reverse, at_end.map(|e| e.reverse)),
        )
    })
}

/// Each flow's `packets_lost` in the window (`flow_losses`), `None` where it is unknown, the
/// reason on stderr. `relay` is the relay's statistics where it ran, `came_out` each flow's
/// marked packets that came out of its queue per epoch (before, in, after the window), or why
/// they were not counted. Also says on stderr each flow's marked packets handed to its queue
/// and come out of it.
pub(super) fn packets_lost(
    flows: &[FlowSpec],
    results: &[FlowResult],
    relay: Option<&RelayStats>,
    came_out: &Result<Vec<[u64; 3]>, String>,
    q: QueueDrops,
) -> Vec<Option<u64>> {
    let edges = relay.map(|s| s.window_edges());
    if let (Ok(counts), Some(st)) = (came_out, relay) {
        // Each flow's marked packets against those that came out of its queue: in the window
        // (the count `flow_losses` takes for kernel TCP, a second one for tfcc flows) and over
        // the whole run, whose difference also holds what the queue still held when the
        // receivers stopped (the senders' packets after the window's end).
        let (a, b) = edges.clone().unwrap_or_default();
        for (i, c) in counts.iter().enumerate() {
            let at = |v: &[u64]| v.get(i).copied().unwrap_or(0u64);
            let in_window = at(&b.handed).saturating_sub(at(&a.handed));
            eprintln!(
                "flow {i} data: in the window {in_window} handed to the queue, {} came out of \
                 it; over the run {} and {} (before / in / after the window: {} / {} / {})",
                c[Epoch::In as usize],
                at(&st.handed),
                c.iter().sum::<u64>(),
                c[0],
                c[1],
                c[2]
            );
        }
    }
    let inputs: Vec<LossInput> = flows
        .iter()
        .zip(results)
        .enumerate()
        .map(|(i, (f, r))| LossInput {
            reverse: f.reverse,
            received: r.received_seqs.as_ref(),
            rcvbuf_errors: r.rcvbuf_errors,
            out_of_order: relay
                .and_then(|s| s.out_of_order.get(i).copied())
                .unwrap_or(0),
            arrived: came_out
                .as_ref()
                .ok()
                .and_then(|c| c.get(i))
                .map(|c| c[Epoch::In as usize]),
        })
        .collect();
    let uncounted = came_out.as_ref().err().map(String::as_str);
    let lost = flow_losses(&inputs, edges.as_ref().map(|(a, b)| (a, b)), q, uncounted);
    for (i, l) in lost.iter().enumerate() {
        if let Err(why) = l {
            eprintln!("flow {i}: packets_lost unknown: {why}");
        }
    }
    lost.into_iter().map(|l| l.ok()).collect()
}

/// One flow as the loss accounting sees it.
#[derive(Clone, Copy)]
struct LossInput<'a> {
    reverse: bool,
    /// The data sequence numbers its receiver accepted over the whole run (tfcc flows).
    received: Option<&'a SeqLedger>,
    /// Its data packets the relay wrote out of sequence order
    /// (tfcc_net::relay::RelayStats::out_of_order).
    out_of_order: u64,
    /// UDP datagrams its receiving namespace dropped for a full receive buffer while it
    /// received (tfcc flows; `None` if unread): such a drop after the queue would count as one
    /// of the queue's.
    rcvbuf_errors: Option<u64>,
    /// Its data packets marked as the window's by the relay that came out of its queue,
    /// counted at the receiving namespace's veth (tfcc_net::arrivals; `None` where no counter
    /// ran or it could not be read).
    arrived: Option<u64>,
}

/// The bottleneck queues' drops in the window (tc), the packets from before the window's end
/// they still held shortly before the receivers stopped reading (`None`: not read), and whether the drops were read by the relay at its marks
/// (of one instant with its counts) rather than by the run's tick.
#[derive(Clone, Copy, Debug)]
pub(super) struct QueueDrops {
    pub(super) forward: u64,
    pub(super) reverse: u64,
    pub(super) left_queued: Option<(u64, u64)>,
    pub(super) at_marks: bool,
}

/// A flow's drops at its queue, before the relay's are added.
enum QueuePart {
    Known(u64),
    /// Not counted per flow (kernel TCP, why not) while the queue dropped packets: perhaps the
    /// rest of the queue's drops (below), else unknown.
    Shared(String),
    Unknown(String),
}

/// Each flow's data packets dropped on its forward route in the window, as the simulator's
/// `packets_lost` counts them: at the instant of the drop (tfcc_sim's `count.dropped`, read at
/// the window's edges), whenever the packet was sent.
///
/// The relay's drops (loss model, dropouts) it counts per flow itself, from
/// [`RelayCommand::MarkWindow`](tfcc_net::relay::RelayCommand::MarkWindow) to
/// [`RelayCommand::MarkEnd`](tfcc_net::relay::RelayCommand::MarkEnd) (`relay`: its counts at
/// the two marks). A queue's drops are counted by tc without saying whose packets they were, so for a
/// tfcc flow they are measured: every data packet reaches the queue inside the relay's
/// `write` (the relay is the only way into it), so its arrivals at the queue in the window
/// are the packets the relay wrote between the marks, and the queue drops a packet, if at
/// all, at that instant. The relay notes the sequence number of the last packet it wrote at
/// each mark (`L0`, `L1`); it writes a flow's packets in sequence order, and the queue and the
/// veth after it are FIFO (nothing on this path reorders), so the packets written in the
/// window are those numbered in `(L0, L1]` that the relay did not drop, and of them the
/// receiver got those it recorded in that range. Their difference is what the queue dropped
/// (or what was lost after it: the receiving namespace's UDP receive-buffer drops, which the
/// run's stderr gives). A packet in flight or queued at a mark falls on the side of the mark
/// at which it was written; one still queued when the receivers stop (after [`drain_time`])
/// would look lost, so a flow whose queue was not empty then gets no count. A sender that
/// sent out of sequence order gets none either.
///
/// A kernel TCP flow's receiver keeps no ledger of sequence numbers; what came out of the
/// queue is counted instead by the window's epoch, which the relay writes into the DSCP bits
/// of every packet of a flow's data direction it hands to a queue (tfcc_net::arrivals): the
/// packets it handed over between the marks (`handed`, the connection's segments without
/// payload among them, its handshake, FIN or reset, as the simulator counts its SYN) less
/// those marked as the window's that reached the receiving namespace's veth (`arrived`) are
/// the queue's drops of the flow in the window, exact once the queue has sent what it held at
/// the window's end (FIFO: then every in-window packet has left it), whoever else shares it.
/// Feedback is not data: it is never marked, travels to the senders' ephemeral ports (a
/// flow's data goes to its receiver's port, which the counter keys on), and crosses the other
/// direction's queue (a reverse flow's feedback the forward queue, unmarked, so it is not
/// counted as anyone's). Without that count (no counter, or the queue not yet empty when the
/// receivers stopped), a kernel TCP flow's queue drops are the queue's less everyone else's:
/// its own when it is the one flow crossing that queue, or the one kernel TCP flow beside tfcc
/// flows with counts, provided no feedback crosses that queue (no flow in the other
/// direction), no packet of no flow crossed it in the window (the relay's `stray`), and the
/// queue's drops were read at the relay's marks; otherwise unknown (`Err`, the reason, with
/// `uncounted`, why no flow's arrivals were counted) unless the queue dropped nothing in the
/// window. The marks would count a tfcc flow's drops as well, with no sequence numbers (the
/// run's stderr gives both; they agreed in the two runs measured), but its count by sequence
/// range is kept: it also works without the counter.
fn flow_losses(
    flows: &[LossInput],
    relay: Option<(&DropCounts, &DropCounts)>,
    q: QueueDrops,
    uncounted: Option<&str>,
) -> Vec<Result<u64, String>> {
    let name = |reverse: bool| if reverse { "reverse" } else { "forward" };
    let crossing = |reverse: bool| flows.iter().filter(|f| f.reverse == reverse).count();
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    let mut parts: Vec<QueuePart> = flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (queue_drops, left) = if f.reverse {
                (q.reverse, q.left_queued.map(|l| l.1))
            } else {
                (q.forward, q.left_queued.map(|l| l.0))
            };
            let name = name(f.reverse);
            match (relay, f.received) {
                (_, Some(_)) if f.out_of_order > 0 => QueuePart::Unknown(format!(
                    "its sender sent {} data packets out of sequence order, which the count \
                     by sequence range cannot place",
                    f.out_of_order
                )),
                (Some(_), Some(_)) if f.rcvbuf_errors != Some(0) => {
                    QueuePart::Unknown(match f.rcvbuf_errors {
                        Some(n) => format!(
                            "its receiving namespace dropped {n} datagrams for a full receive \
                             buffer, which would count as drops at the queue"
                        ),
                        None => "its receiving namespace's receive-buffer drops were not read, \
                                 which would count as drops at the queue"
                            .to_string(),
                    })
                }
                (Some(_), Some(_)) if left != Some(0) => QueuePart::Unknown(match left {
                    Some(n) => format!(
                        "the {name} queue still held {n} packets from before the window's end \
                         when the receivers stopped reading; one of this flow's among them \
                         would count as lost"
                    ),
                    None => format!(
                        "the {name} queue was not read before the receivers stopped reading, \
                         so a packet of this flow still queued then would count as lost"
                    ),
                }),
                (Some((a, b)), Some(got)) => {
                    let written = at(&b.written, i).saturating_sub(at(&a.written, i));
                    let arrived = match b.last_seq.get(i).copied().flatten() {
                        Some(hi) => {
                            let lo = a
                                .last_seq
                                .get(i)
                                .copied()
                                .flatten()
                                .map_or(0, |s| s.saturating_add(1));
                            got.count_in(lo..=hi)
                        }
                        None => 0,
                    };
                    match written.checked_sub(arrived) {
                        Some(n) => QueuePart::Known(n),
                        None => QueuePart::Unknown(format!(
                            "its receiver got {arrived} packets of the {written} the relay \
                             handed to the {name} queue in the window"
                        )),
                    }
                }
                (Some((a, b)), None) if f.arrived.is_some() && left == Some(0) => {
                    let handed = at(&b.handed, i).saturating_sub(at(&a.handed, i));
                    let came = f.arrived.unwrap_or(0);
                    match handed.checked_sub(came) {
                        Some(n) => QueuePart::Known(n),
                        None => QueuePart::Unknown(format!(
                            "{came} of its packets marked as the window's came out of the \
                             {name} queue, more than the {handed} the relay handed to it"
                        )),
                    }
                }
                _ if queue_drops == 0 => QueuePart::Known(0),
                _ if crossing(f.reverse) == 1 && crossing(!f.reverse) == 0 => {
                    QueuePart::Known(queue_drops)
                }
                _ => QueuePart::Shared(match (relay, f.arrived, left) {
                    (None, _, _) => "no relay marked its packets".to_string(),
                    (_, None, _) => format!(
                        "what came out of the queue was not counted ({})",
                        uncounted.unwrap_or("no count for this flow")
                    ),
                    (_, _, Some(n)) => format!(
                        "what came out of the queue is not all counted: it still held {n} \
                         packets from before the window's end when the receivers stopped \
                         reading"
                    ),
                    (_, _, None) => "the queue was not read before the receivers stopped \
                                     reading, so some of its packets may not have come out"
                        .to_string(),
                }),
            }
        })
        .collect();
    // The rest of a queue's drops, for the one flow there whose own are not counted.
    for reverse in [false, true] {
        let on: Vec<usize> = (0..flows.len())
            .filter(|&i| flows[i].reverse == reverse)
            .collect();
        let shared: Vec<usize> = on
            .iter()
            .copied()
            .filter(|&i| matches!(parts[i], QueuePart::Shared(_)))
            .collect();
        let queue_drops = if reverse { q.reverse } else { q.forward };
        let stray = relay.map_or(0, |(a, b)| {
            let k = usize::from(reverse);
            b.stray[k].saturating_sub(a.stray[k])
        });
        let others_known: Option<u64> = on
            .iter()
            .filter(|i| !shared.contains(i))
            .map(|&i| match parts[i] {
                QueuePart::Known(n) => Some(n),
                _ => None,
            })
            .sum();
        let why_not = if shared.len() > 1 {
            Some(format!("{} kernel TCP flows share it", shared.len()))
        } else if crossing(!reverse) > 0 {
            Some("the feedback of the flows in the other direction crosses it".to_string())
        } else if !(q.at_marks && relay.is_some()) {
            Some("its drops were not read at the relay's window marks".to_string())
        } else if stray > 0 {
            Some(format!(
                "{stray} packets of no flow crossed it in the window"
            ))
        } else if others_known.is_none() {
            Some("another flow on it has no count".to_string())
        } else {
            None
        };
        for &i in &shared {
            let own = match &parts[i] {
                QueuePart::Shared(why) => why.clone(),
                _ => String::new(),
            };
            parts[i] = match (&why_not, others_known) {
                (None, Some(known)) => match queue_drops.checked_sub(known) {
                    Some(n) => QueuePart::Known(n),
                    None => QueuePart::Unknown(format!(
                        "the {} queue dropped {queue_drops} packets in the window, fewer than \
                         the {known} counted for the other flows",
                        name(reverse)
                    )),
                },
                (why, _) => QueuePart::Unknown(format!(
                    "the {} queue dropped {queue_drops} packets in the window, and tc does not \
                     say whose they were; {own}; the rest after the tfcc flows' counts is not \
                     this kernel TCP flow's alone: {}",
                    name(reverse),
                    why.as_deref().unwrap_or("another flow on it has no count")
                )),
            };
        }
    }
    flows
        .iter()
        .enumerate()
        .zip(parts)
        .map(|((i, _), part)| {
            let relay_drops = relay.map_or(0, |(a, b)| {
                at(&b.data_lost, i).saturating_sub(at(&a.data_lost, i))
                    + at(&b.data_down, i).saturating_sub(at(&a.data_down, i))
            });
            match part {
                QueuePart::Known(n) => Ok(n + relay_drops),
                QueuePart::Unknown(why) => Err(why),
                // Resolved above, one way or the other.
                QueuePart::Shared(why) => Err(why),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(
        lost: [u64; 2],
        down: [u64; 2],
        written: [u64; 2],
        last: [Option<u64>; 2],
    ) -> DropCounts {
        DropCounts {
            lost: lost.iter().sum(),
            down_drops: down.iter().sum(),
            data_lost: lost.to_vec(),
            data_down: down.to_vec(),
            written: written.to_vec(),
            last_seq: last.to_vec(),
            handed: written.to_vec(),
            stray: [0, 0],
            qdiscs: Vec::new(),
        }
    }

    const EMPTY: QueueDrops = QueueDrops {
        forward: 0,
        reverse: 0,
        left_queued: Some((0, 0)),
        at_marks: true,
    };

    #[test]
    fn queue_drops_are_a_flows_only_when_nothing_else_crosses_that_queue() {
        let tcp = |reverse| LossInput {
            reverse,
            received: None,
            out_of_order: 0,
            rcvbuf_errors: None,
            arrived: None,
        };
        let start = counts([0, 0], [0, 0], [0, 0], [None, None]);
        let end = counts([3, 4], [10, 0], [0, 0], [None, None]);
        let relay = Some((&start, &end));
        let q = |forward, reverse| QueueDrops {
            forward,
            reverse,
            ..EMPTY
        };
        // One forward flow alone: the forward queue's drops are its, beside the relay's.
        assert_eq!(
            flow_losses(&[tcp(false)], relay, q(5, 2), None),
            [Ok(5 + 3 + 10)]
        );
        // Two forward kernel-TCP flows: the queue's 5 drops cannot be split; with none, the
        // relay's counts are the whole of each.
        let two = [tcp(false), tcp(false)];
        let l = flow_losses(&two, relay, q(5, 0), None);
        assert!(l.iter().all(|r| r
            .as_ref()
            .is_err_and(|e| e.contains("the forward queue dropped 5 packets"))));
        assert_eq!(flow_losses(&two, relay, q(0, 7), None), [Ok(13), Ok(4)]);
        // A reverse flow's feedback crosses the forward queue, and the forward flow's the
        // reverse one: neither queue is one flow's.
        let both = [tcp(false), tcp(true)];
        let l = flow_losses(&both, relay, q(1, 0), None);
        assert!(l[0].is_err() && l[1] == Ok(4));
        let l = flow_losses(&both, relay, q(0, 1), None);
        assert!(l[0] == Ok(13) && l[1].is_err());
        // Without the relay (one flow, no delays) tc's count alone.
        assert_eq!(flow_losses(&[tcp(false)], None, q(6, 0), None), [Ok(6)]);
    }

    /// Two tfcc flows sharing the forward queue: each one's queue drops in the window are the
    /// packets the relay wrote between the marks less those of them (by sequence range) its
    /// receiver got; the relay's own drops are added; packets written before the window's
    /// start and arriving in it, or written before its end and arriving after it, are neither.
    #[test]
    fn shared_queue_drops_are_counted_per_tfcc_flow_by_sequence_range() {
        // Flow 0 wrote 0..=99 before the window, 100..=299 in it (200 packets), 300..=350
        // after; its receiver lost 150 and 151 (before the window's last packet), 99 (before
        // the window) and 320 (after). The relay dropped 200 and 201 of it to the loss model
        // in the window (not written, so not in the 200).
        let mut got0 = SeqLedger::default();
        (0..=350u64)
            .filter(|s| ![99, 150, 151, 200, 201, 320].contains(s))
            .for_each(|s| got0.record(s));
        // Flow 1 started in the window (nothing written before it): 1000..=1049, of which
        // 1010..=1014 never arrived; it then sent nothing more.
        let mut got1 = SeqLedger::default();
        (1000..=1049u64)
            .filter(|s| !(1010..=1014).contains(s))
            .for_each(|s| got1.record(s));
        let start = counts([0, 0], [0, 0], [100, 0], [Some(99), None]);
        let end = counts([2, 0], [0, 0], [298, 50], [Some(299), Some(1049)]);
        let flows = [
            LossInput {
                reverse: false,
                received: Some(&got0),
                out_of_order: 0,
                rcvbuf_errors: Some(0),
                arrived: None,
            },
            LossInput {
                reverse: false,
                received: Some(&got1),
                out_of_order: 0,
                rcvbuf_errors: Some(0),
                arrived: None,
            },
        ];
        let q = QueueDrops {
            forward: 7,
            ..EMPTY
        };
        // Flow 0: 198 written in the window, 196 of 100..=299 received: 2 queue drops and 2
        // of the relay's. Flow 1: 50 written, 45 received. Their queue drops add up to the
        // queue's 7.
        assert_eq!(
            flow_losses(&flows, Some((&start, &end)), q, None),
            [Ok(4), Ok(5)]
        );
        // Packets still queued when the receivers stopped: no count for the flows behind them.
        let full = QueueDrops {
            left_queued: Some((3, 0)),
            ..q
        };
        let l = flow_losses(&flows, Some((&start, &end)), full, None);
        assert!(l.iter().all(|r| r
            .as_ref()
            .is_err_and(|e| e.contains("still held 3 packets"))));
        // A sender out of sequence order: no count.
        let odd = [
            LossInput {
                out_of_order: 1,
                ..flows[0]
            },
            LossInput { ..flows[1] },
        ];
        let l = flow_losses(&odd, Some((&start, &end)), q, None);
        assert!(l[0]
            .as_ref()
            .is_err_and(|e| e.contains("out of sequence order")));
        assert_eq!(l[1], Ok(5));
        // Receive-buffer drops in the receiving namespace, or no reading of them: no count.
        for (n, what) in [(Some(2), "dropped 2 datagrams"), (None, "were not read")] {
            let full = [
                LossInput {
                    rcvbuf_errors: n,
                    ..flows[0]
                },
                flows[1],
            ];
            let l = flow_losses(&full, Some((&start, &end)), q, None);
            assert!(l[0].as_ref().is_err_and(|e| e.contains(what)), "{l:?}");
        }
        // A receiver that got more of the range than was written (it cannot, through the
        // relay): an error, not a wrapped count.
        let short = counts([2, 0], [0, 0], [150, 50], [Some(299), Some(1049)]);
        assert!(flow_losses(&flows, Some((&start, &short)), q, None)[0].is_err());

        // Flow 1 a kernel TCP flow instead: the queue's 7 drops less flow 0's 2 are its.
        let tcp = LossInput {
            reverse: false,
            received: None,
            out_of_order: 0,
            rcvbuf_errors: None,
            arrived: None,
        };
        let mixed = [flows[0], tcp];
        assert_eq!(
            flow_losses(&mixed, Some((&start, &end)), q, None),
            [Ok(4), Ok(5)]
        );
        // Not when the drops were read apart from the relay's marks, when a packet of no flow
        // crossed the queue in the window, or with a second kernel TCP flow.
        let apart = QueueDrops {
            at_marks: false,
            ..q
        };
        let has = |l: &Result<u64, String>, what: &str| l.as_ref().is_err_and(|e| e.contains(what));
        assert!(has(
            &flow_losses(&mixed, Some((&start, &end)), apart, None)[1],
            "not read at the relay's window marks"
        ));
        let mut pinged = end.clone();
        pinged.stray[0] = 1;
        let l = flow_losses(&mixed, Some((&start, &pinged)), q, None);
        assert!(l[0] == Ok(4) && has(&l[1], "1 packets of no flow crossed it"));
        let l = flow_losses(&[flows[0], tcp, tcp], Some((&start, &end)), q, None);
        assert!(l[0] == Ok(4) && has(&l[1], "2 kernel TCP flows") && has(&l[2], "2 kernel"));
        // Nor with a reverse flow, whose feedback crosses the forward queue.
        let rev = LossInput {
            reverse: true,
            ..tcp
        };
        let l = flow_losses(&[flows[0], tcp, rev], Some((&start, &end)), q, None);
        assert!(l[0] == Ok(4) && has(&l[1], "other direction") && l[2] == Ok(0));
        // Fewer queue drops than counted for the tfcc flow: an error, not a wrapped count.
        let few = QueueDrops { forward: 1, ..q };
        let l = flow_losses(&mixed, Some((&start, &end)), few, None);
        assert!(
            l[1].as_ref().is_err_and(|e| e.contains("fewer than the 2")),
            "{l:?}"
        );
    }

    /// Kernel TCP flows sharing a queue, or beside a reverse flow whose feedback crosses it:
    /// each one's queue drops in the window are its packets the relay handed to the queue
    /// between the marks less those marked as the window's that came out of it, once the queue
    /// has sent what it held at the window's end; the relay's own drops are added.
    #[test]
    fn kernel_tcp_drops_are_packets_handed_less_those_that_came_out() {
        let start = DropCounts {
            handed: vec![100, 50, 10],
            ..counts([0, 0], [0, 0], [0, 0], [None, None])
        };
        // Flow 0 lost 3 to the loss model in the window (not handed to the queue).
        let end = DropCounts {
            handed: vec![400, 250, 60],
            data_lost: vec![3, 0, 0],
            lost: 3,
            ..counts([3, 0], [0, 0], [0, 0], [None, None])
        };
        let tcp = |reverse, arrived| LossInput {
            reverse,
            received: None,
            out_of_order: 0,
            rcvbuf_errors: None,
            arrived,
        };
        // Two forward flows and a reverse one: 300 handed, 290 out; 200, 196; 50, 50.
        let flows = [
            tcp(false, Some(290)),
            tcp(false, Some(196)),
            tcp(true, Some(50)),
        ];
        let q = QueueDrops {
            forward: 15,
            reverse: 0,
            ..EMPTY
        };
        let relay = Some((&start, &end));
        assert_eq!(
            flow_losses(&flows, relay, q, None),
            [Ok(10 + 3), Ok(4), Ok(0)]
        );
        // The forward queue's 15 drops hold one of the reverse flow's feedback: the flows'
        // counts need not add up to it, and are not bent to.
        let has = |l: &Result<u64, String>, what: &str| l.as_ref().is_err_and(|e| e.contains(what));
        // The queue still held packets from before the window's end when the receivers
        // stopped: those would look dropped, so the two forward flows have no count (nor any
        // other rule: they share the queue), while the reverse one, on its drained queue, has.
        let full = QueueDrops {
            left_queued: Some((2, 0)),
            ..q
        };
        let l = flow_losses(&flows, relay, full, None);
        assert!(has(&l[0], "still held 2 packets") && has(&l[1], "2 kernel TCP flows"));
        assert_eq!(l[2], Ok(0));
        // No counter: the reason is given, and the older rules still apply (a flow alone on
        // its queue, nothing else crossing it, gets the queue's drops).
        let none = [tcp(false, None), tcp(false, None)];
        let l = flow_losses(&none, relay, q, Some("no tcx"));
        assert!(l.iter().all(|r| has(r, "not counted (no tcx)")), "{l:?}");
        assert_eq!(
            flow_losses(&[tcp(false, None)], relay, q, Some("no tcx")),
            [Ok(15 + 3)]
        );
        // Alone with a counter, the counter's: 300 - 290, not tc's 15 (which would hold a
        // stray packet's drop, had one crossed).
        assert_eq!(
            flow_losses(&[tcp(false, Some(290))], relay, q, None),
            [Ok(10 + 3)]
        );
        // More came out than was handed over (the marks misread): an error, not a count.
        let l = flow_losses(&[tcp(false, Some(301))], relay, q, None);
        assert!(has(&l[0], "more than the 300"), "{l:?}");
    }

    #[test]
    fn the_drain_outlasts_a_full_queue_at_the_lowest_rate() {
        let paths = [FlowPath {
            port: 5001,
            forward: Dur::from_millis(20),
            reverse: Dur::from_millis(20),
            proto: None,
        }];
        let r = |m| tfcc_core::Rate::from_mbps(m);
        // 100 packets at 10 Mb/s: 120 ms, + 40 ms + 200 ms, below the 500 ms floor.
        assert_eq!(drain_time(r(10), &[], 100, &paths), DEFAULT_DRAIN);
        // At 1 Mb/s after a rate change: 1.2 s + 0.24 s.
        let ev = [(Duration::from_secs(1), LinkAction::SetRate(r(1)))];
        assert_eq!(
            drain_time(r(10), &ev, 100, &paths),
            Duration::from_millis(1440)
        );
    }

    /// What a queue held at the window's end has left it once it has sent as many packets
    /// since; without a reading at the end, the drain's backlog is what is left, and without
    /// the drain's reading nothing is known.
    #[test]
    fn the_window_end_backlog_has_left_once_as_many_packets_went_out() {
        let q = |sent_packets, backlog_packets| QdiscSample {
            sent_packets,
            backlog_packets,
            ..QdiscSample::default()
        };
        let d = |forward, reverse| Directions { forward, reverse };
        let end = d(q(100, 20), q(50, 4));
        let drained = d(q(115, 0), q(60, 2));
        // Forward: 15 of the 20 sent since, 5 left; reverse: 10 sent since, all 4 gone.
        assert_eq!(left_queued(Some(drained), Some(end)), Some((5, 0)));
        assert_eq!(left_queued(Some(drained), None), Some((0, 2)));
        assert_eq!(left_queued(None, Some(end)), None);
    }
}
