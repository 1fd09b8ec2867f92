//! `tfcc run --backend testbed`: a dumbbell scenario on real namespaces (tfcc_net::testbed).
//!
//! What maps: the `bottleneck` link's rate and DropTail packet limit (tbf + pfifo; the pfifo
//! limit is the scenario's `limit`), its reverse direction `bottleneck-rev` (tbf at the same
//! rate + pfifo with `topology.reverse_queue`'s limit, or the forward one's), reverse flows
//! (`direction = "reverse"`: the sender in the receivers' namespace, its data through
//! `bottleneck-rev`; reported with `direction` "reverse" and left out of θ and Jain, as the
//! simulator's summary does), each flow's propagation delay (the sum of its route's link
//! delays in each direction, held by the TUN relay, tfcc_net::relay), the bottleneck's
//! artificial loss model (applied by the relay to the data direction, before the queue, as in
//! the simulator), TFRC flows with their configuration, `tcp-cubic` and `tcp-reno` as the
//! kernel's algorithms with the simulator's packet size on the wire (`kernel_mss`) (`tcp-newreno` and `tcp-sack` also run as the kernel's Reno, which has
//! NewReno and SACK recovery built in), flow start and stop times (a stopped kernel TCP
//! flow's connection is aborted, `FlowSpec::stop`), `cbr` and `cbr-onoff` flows at the
//! simulator's packet times and wire sizes (`cbr_on_udp`), TFWC's packet size as the
//! simulator's wire size (`tfwc_on_udp`). `tcp-cubic` runs in the simulator as RFC 9438's
//! CUBIC (tfcc_core::tcp::cubic) and here as the kernel's, whose constants are the RFC's
//! (`tcp_cubic.c`: β = 717/1024, C = 0.4, fast convergence and the Reno-friendly region on) but
//! whose Reno-friendly estimate keeps α = 3(1 − β)/(1 + β) throughout, where RFC 9438 §4.3
//! switches it to 1 (the simulator's `alpha_one_above_prior = false`); a `tcp-cubic` flow whose
//! `params` change CUBIC's own constants is refused. TFWC flows run over the transport with their configuration, and the rate flows of 003 (WARC,
//! TEAR, TFRCP: one rate sender paced at its receiver's reports, the receiver running the
//! scheme's estimator, tfcc_core::warc's wire format) with theirs and the simulator's wire size
//! (`rate_on_udp`). What is refused, with the reason: RED queues, byte limits, loss on
//! other links, other protocols (tfcc's TCP-like window schemes among them), queues other than DropTail in packets in either direction. Access-link serialisation is not emulated (the veths are far
//! faster than any bottleneck here). For tfcc flows the summary's packets sent, loss event
//! rate, timeouts and mean RTT come from the endpoints' own statistics, read at the sampling instants
//! (as the simulator's recorder reads them); for kernel TCP flows the mean RTT is the kernel's
//! smoothed RTT (`TCP_INFO`) at the same instants, packets sent and `timeouts` from the
//! connection's `TCP_INFO` (data segments out, `tcpi_total_rto`) over the window, and the loss
//! event rate is not collected (null: the kernel counts retransmitted segments, not congestion
//! responses). The kernel counts spurious timeouts per network namespace only (`TcpExt:
//! TCPLossUndo`, of which `TCPSpuriousRTOs` are F-RTO's; tfcc_net::testbed::tcp_spurious_rtos),
//! so they are reported per namespace (`testbed.tcp_spurious_rtos`, read at the window's start
//! and end) and as a kernel-TCP flow's `spurious_timeouts` only when it is the one kernel-TCP
//! sender in its namespace (`null` when several share it). Drops mean what the simulator's
//! mean, counted at the instant of the drop between the window's edges: a link's are its
//! queue's (tc) plus the loss model's and the dropouts' (the relay's), and a flow's
//! `packets_lost` the relay's drops of its data plus its data's drops at the queue. The relay
//! marks the window's edges itself and reads tc there, between two packets, so its counts and
//! tc's are of one instant. tc does not say whose packets a queue dropped: a tfcc flow's are
//! the data packets the relay handed to the queue in the window less those of them its
//! receiver got (by sequence number); a kernel TCP flow's are its packets the relay handed to
//! the queue in the window less those that came out of it, which the relay marks with the
//! window's epoch in their DSCP bits and an eBPF counter on the receiving veth counts
//! (tfcc_net::arrivals), so two or more kernel TCP flows on one queue, or beside reverse
//! flows, each have their own. Both counts need the queue emptied of the window's packets
//! before the receivers stop (`drain_time`); where the counter is missing (no tcx before
//! Linux 6.6) or the queue was not empty, a kernel TCP flow's are the queue's when it is alone
//! there, or the rest after the tfcc flows' when it is the one kernel TCP flow on a queue that
//! nothing else crosses, and `null` otherwise (`flow_losses` has the conditions; the run's
//! stderr says why a count is missing).
//!
//! `[trace] pcap = true` captures the traced links' packets where the router sends them after
//! the bottleneck's queue (`bottleneck`: `rd`'s transmit side, `bottleneck-rev`: `rs`'s;
//! `CapturePlan`) into the simulator's `trace-<link>.pcap` files, with the run's start at
//! t = 0; it writes no `trace.parquet`, and a `[trace]` without pcap, or one naming another
//! link, is refused.

use std::path::Path;
use std::time::{Duration, Instant};

use tfcc_core::time::std_secs_f64;
use tfcc_net::arrivals::Epoch;
use tfcc_net::capture::{realtime_ns, Capture};
use tfcc_net::relay::RelayCommand;
use tfcc_net::relay::{DropCounts, RelayConfig};
use tfcc_net::testbed::{
    run_flows_sampled, tcp_spurious_rtos, Bottleneck, Dumbbell, FlowKind, QdiscSample,
    TestbedError, DEFAULT_DRAIN, DRAIN_MARGIN,
};
use tfcc_net::Protocol;
use tfcc_sim::recorder::{fairness_theta, jain_index};
use tfcc_sim::LinkAction;

use crate::summary::{
    is_tcp, FlowEntry, LinkEntry, Metrics, NamespaceRtos, Summary, TestbedSection,
};
use crate::{pcap, Finished, RunError, TraceColumns};

mod capture;
mod losses;
mod plan;
mod series;
mod window;
mod wire_size;

use losses::{drain_time, flow_losses, LossInput, QueueDrops, MAX_DRAIN};
use plan::{plan, Plan};
use series::{flow_columns, latest_instant, link_columns, mean_backlog, Directions};
use window::{capacity_bits, endpoint_figures};

/// Runs the scenario at `path` on the testbed. `keep_going` is polled every 10 ms of the run;
/// once it returns `false` (Ctrl-C, SIGTERM) the run stops, the relay and the namespaces are
/// removed, and [`RunError::Cancelled`] is returned.
pub fn run(
    path: &Path,
    overrides: &[String],
    seed: Option<u64>,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<Finished, RunError> {
    let wall = Instant::now();
    let Plan {
        built,
        rate: start_rate,
        limit,
        reverse_limit,
        loss,
        flows,
        paths,
        counted,
        duration,
        measure_from,
        events,
        notes,
        capture,
    } = plan(path, overrides, seed)?;
    for n in &notes {
        eprintln!("note: {n}");
    }
    let bed = Dumbbell::new(Bottleneck {
        rate: start_rate,
        limit,
        reverse_limit,
    })
    .map_err(|e| RunError::Scenario(e.to_string()))?;
    // Bound before anything runs: a capture that cannot start stops the run here, with the
    // namespaces removed (dropping `bed`) and nothing written.
    let protos: Vec<(u16, Option<Protocol>)> = paths.iter().map(|p| (p.port, p.proto)).collect();
    let mut captures = Vec::new();
    for (name, dev) in capture.as_ref().map_or(&[][..], |c| &c.links[..]) {
        let protos = protos.clone();
        let c = Capture::start(
            &bed.router_ns(),
            dev,
            Box::new(move |p: &[u8]| pcap::testbed_header_len(p, &protos)),
        )
        .map_err(|e| {
            RunError::Scenario(format!(
                "{}: [trace] pcap: cannot capture {name} on the testbed's {dev}: {e}",
                path.display()
            ))
        })?;
        captures.push((name.clone(), *dev, c));
    }
    // The run's start on the captures' clock (CLOCK_REALTIME), set at the first tick.
    let mut origin_realtime: Option<u64> = None;
    let events_need_relay = events
        .iter()
        .any(|(_, a)| !matches!(a, LinkAction::SetRate(_)));
    // With two flows or more a queue's drops are shared, and the relay is where each flow's
    // arrivals at the queue are counted (`flow_losses`). Every flow's count of what came out
    // of the queue (a tfcc receiver's sequence numbers, the marked packets counted at the
    // receiving veth) needs the queue emptied of the window's packets before the receivers
    // stop. A lone kernel TCP flow's count is tc's, which a full queue does not change; and
    // where a full queue cannot empty within the longest drain (10 kb/s after a rate change:
    // 100 packets take 120 s), kernel TCP flows do not wait for it: their counts fall back to
    // the older rules when it is still full.
    let tfcc_flows = paths.iter().any(|p| p.proto.is_some());
    let needed = drain_time(start_rate, &events, limit.max(reverse_limit), &paths);
    let drain = if tfcc_flows || (flows.len() > 1 && needed < MAX_DRAIN) {
        needed
    } else {
        DEFAULT_DRAIN
    };
    let needs_relay = loss.is_some()
        || events_need_relay
        || flows.len() > 1
        || paths.iter().any(|p| !(p.forward + p.reverse).is_zero());
    let relay = if needs_relay {
        Some(
            bed.start_relay(RelayConfig {
                flows: paths,
                loss,
                seed: built.cfg.seed,
                ..RelayConfig::default()
            })
            .map_err(|e| RunError::Scenario(format!("testbed relay: {e}")))?,
        )
    } else {
        None
    };
    // What came out of the queues of the packets the relay marked: without it a kernel TCP
    // flow's count falls back to tc's drops where they are its alone (`flow_losses`), so a
    // kernel that cannot load the counter (no tcx before Linux 6.6) costs counts, not the run.
    let arrivals = match &relay {
        Some(_) => bed
            .count_arrivals(flows.len())
            .map_err(|e| format!("the arrival counter could not be attached: {e}")),
        None => Err("no relay ran (one flow, no delay or loss), so no packet was marked".into()),
    };
    if let Err(why) = &arrivals {
        if relay.is_some() {
            eprintln!("note: {why}");
        }
    }
    let interval = Duration::from_nanos(built.cfg.sample_interval.0);
    let router = bed.router_ns();
    let mut next_event = 0;
    let mut rate = start_rate;
    let mut queue: Vec<(Duration, Duration, Directions)> = Vec::new();
    let mut next_sample = interval;
    // tc's counters at the start of the measurement window: the summary's link figures cover
    // the window only, as the simulator's do (tfcc_sim::recorder); without this the slowstart
    // overshoot before `measure_from` was reported as drops of the steady state.
    let mut at_window: Option<Directions> = None;
    // And at its end: read after the flows, tc's counters would include the half second in
    // which the receivers wait for the queue to drain, and utilisation came out at 1.02-1.03
    // (0.5 s more transmission over a 20 s window).
    let mut at_end: Option<Directions> = None;
    // Kernel TCP's spurious timeouts, counted by the kernel per namespace only: read at the
    // window's start and end in each namespace that sends kernel-TCP data (the senders' for
    // forward flows, the receivers' for reverse ones), with the flows sending from it.
    let mut rto_spaces: Vec<(&str, String, Vec<u32>)> = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        if !matches!(f.kind, FlowKind::Tcp { .. }) {
            continue;
        }
        let (label, ns) = if f.reverse {
            ("receivers", bed.receiver_ns())
        } else {
            ("senders", bed.sender_ns())
        };
        match rto_spaces.iter_mut().find(|s| s.0 == label) {
            Some(s) => s.2.push(i as u32),
            None => rto_spaces.push((label, ns, vec![i as u32])),
        }
    }
    type Rtos = Vec<(Option<u64>, Option<u64>)>;
    let read_rtos = |spaces: &[(&str, String, Vec<u32>)]| -> Rtos {
        spaces.iter().map(|s| tcp_spurious_rtos(&s.1)).collect()
    };
    let mut rtos_at_window: Option<Rtos> = None;
    let mut rtos_at_end: Option<Rtos> = None;
    // The queues once the senders have stopped and what they held has had time to leave,
    // shortly before the receivers stop reading (`drained_at`).
    let mut drained: Option<Directions> = None;
    let drained_at = duration + drain.saturating_sub(DRAIN_MARGIN);
    let mut marks_sent = false;
    let mut tick = |elapsed: Duration| -> Result<(), TestbedError> {
        if !keep_going() {
            return Err(TestbedError::Interrupted);
        }
        // The relay marks the window's edges itself, at their instants (the first tick comes
        // at the run's start, so `elapsed` places it to microseconds).
        if !marks_sent {
            marks_sent = true;
            // `elapsed` was read just before this call, from the run's start: the same
            // instant on the real-time clock is now less it (within the microseconds between
            // the two readings).
            origin_realtime =
                Some(realtime_ns().saturating_sub(u64::try_from(elapsed.as_nanos()).unwrap_or(0)));
            if let Some(r) = &relay {
                let origin = Instant::now() - elapsed;
                for (at, c) in [
                    (measure_from, RelayCommand::MarkWindow),
                    (duration, RelayCommand::MarkEnd),
                ] {
                    r.command(RelayCommand::At(origin + at, Box::new(c)));
                }
            }
        }
        if drained.is_none() && elapsed >= drained_at {
            drained = Directions::read(&router);
        }
        // Beyond the run's end the tick only watches the drain.
        let elapsed = elapsed.min(duration);
        if rtos_at_window.is_none() && elapsed >= measure_from {
            rtos_at_window = Some(read_rtos(&rto_spaces));
        }
        if rtos_at_end.is_none() && elapsed >= duration {
            rtos_at_end = Some(read_rtos(&rto_spaces));
        }
        if at_window.is_none() && elapsed >= measure_from {
            at_window = Some(Directions::read(&router).unwrap_or_default());
        }
        if at_end.is_none() && elapsed >= duration {
            at_end = Directions::read(&router);
        }
        while let Some((at, action)) = events.get(next_event) {
            if *at > elapsed {
                break;
            }
            next_event += 1;
            match action {
                LinkAction::SetRate(r) => {
                    rate = *r;
                    bed.set_rate(*r)?;
                }
                LinkAction::SetUp(up) => {
                    if let Some(r) = &relay {
                        r.command(RelayCommand::SetUp(*up));
                    }
                    bed.set_up(*up, rate)?;
                }
                LinkAction::SetLoss(l) => {
                    if let Some(r) = &relay {
                        r.command(RelayCommand::SetLoss(l.clone()));
                    }
                }
                // Refused before the run (above).
                LinkAction::SetStalled(_) => {}
            }
        }
        // tc is a process per reading (a few ms of CPU), so the queue is read once per
        // sampling interval, not averaged within it. A reading is stamped with the latest
        // sampling instant reached, and instants that passed while the machine was too busy
        // to read leave a gap: stepping one interval per reading had put the series behind real
        // time whenever a tick took longer than the interval (readings every 0.14 s for 0.1 s
        // under a load of 10-18 put a 330 s run's last reading at 236 s).
        if elapsed >= next_sample && next_sample <= duration {
            let at = latest_instant(elapsed, interval);
            if let Some(q) = Directions::read(&router) {
                queue.push((at, elapsed, q));
            }
            next_sample = at + interval;
        }
        Ok(())
    };
    let results = match run_flows_sampled(
        &bed,
        &flows,
        duration,
        measure_from,
        interval,
        drain,
        &mut tick,
    ) {
        Ok(r) => r,
        Err(TestbedError::Interrupted) => {
            // The relay first (it holds the TUN in the router's namespace), then the
            // namespaces; the flows' threads end with the process.
            drop(relay);
            drop(bed);
            return Err(RunError::Cancelled);
        }
        Err(e) => return Err(RunError::Scenario(e.to_string())),
    };
    // The receivers have stopped reading, after the drain: the captures have seen every packet
    // of their window (it ends at the run's end at the latest).
    let mut pcaps = Vec::new();
    for (name, dev, c) in captures {
        let st = c.stop().map_err(|e| {
            RunError::Scenario(format!("[trace] pcap: the capture of {name} on {dev}: {e}"))
        })?;
        let (Some(plan), Some(origin)) = (&capture, origin_realtime) else {
            return Err(RunError::Scenario(
                "[trace] pcap: the run never started its clock".into(),
            ));
        };
        let (file, kept) = pcap::write_testbed_capture(
            &name,
            &st.packets,
            origin,
            plan.from,
            plan.until,
            plan.inclusive,
        )
        .map_err(RunError::Scenario)?;
        eprintln!(
            "capture of {name} ({dev}, transmit side): {kept} packets in the trace's window, {} \
             over the run, {} lost by the capture socket{}, CPU {:.1} %",
            st.packets.len(),
            st.dropped,
            if st.not_ipv4 > 0 {
                format!(", {} frames not IPv4 left out", st.not_ipv4)
            } else {
                String::new()
            },
            100.0 * st.cpu()
        );
        if st.dropped > 0 {
            eprintln!(
                "warning: {} misses {} packets the kernel could not queue on the capture socket",
                file.name, st.dropped
            );
        }
        pcaps.push(file);
    }
    // The receivers have stopped reading, after the drain: what left the queues by then has
    // passed the counter.
    let came_out: Result<Vec<[u64; 3]>, String> = arrivals.and_then(|a| {
        a.read()
            .map_err(|e| format!("the arrival counter could not be read: {e}"))
    });
    let relay_stats = match relay {
        Some(r) => Some(
            r.stop()
                .map_err(|e| RunError::Scenario(format!("testbed relay: {e}")))?,
        ),
        None => None,
    };
    // The relay's readings at its marks, where it ran, are of the same instant as its own
    // counts (tfcc_net::relay::DropCounts::qdiscs); the tick's, a few ms apart from them,
    // where it did not.
    let marked = |m: Option<&DropCounts>| m.and_then(|c| Directions::of(&c.qdiscs));
    let (w_mark, e_mark) = (
        marked(relay_stats.as_ref().and_then(|s| s.at_window.as_ref())),
        marked(relay_stats.as_ref().and_then(|s| s.at_end.as_ref())),
    );
    let marked_edges = w_mark.is_some() && e_mark.is_some();
    let at_window = w_mark.or(at_window);
    let at_end = e_mark.or(at_end);
    // Of what the queues held at the window's end, what had not left them by the drain's
    // reading: FIFO queues send what they held before anything that came later, so this is 0
    // once they have sent as many packets since; without a reading at the end, what they held
    // at the drain's reading.
    let left_queued = drained.map(|d| {
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
    });
    let tc = at_end.or_else(|| Directions::read(&bed.router_ns()));
    if let Some(st) = &relay_stats {
        eprintln!(
            "relay (whole run): {} packets, {} lost to the loss model, {} dropped while the \
             bottleneck was down, {} and {} of no flow towards the receivers' and the senders' \
             side, lateness p50 {:.3} p99 {:.3} max {:.3} ms (the window marks' tc readings \
             held it up to {:.1} ms), CPU {:.1} %{}",
            st.forwarded,
            st.lost,
            st.down_drops,
            st.stray[0],
            st.stray[1],
            st.lateness.quantile(0.5).as_millis_f64(),
            st.lateness.quantile(0.99).as_millis_f64(),
            st.lateness.max().as_millis_f64(),
            st.mark_pause.as_millis_f64(),
            100.0 * st.cpu_share(),
            if st.realtime { "" } else { " (no SCHED_FIFO)" }
        );
    }
    for (i, r) in results.iter().enumerate() {
        if let Some(c) = r.sender_counters {
            eprintln!(
                "flow {i} sender: {} datagrams, {} send errors ({} buffer full), {} reports \
                 read, {} unstamped",
                c.sent, c.send_errors, c.buffer_full, c.received, c.unstamped
            );
        }
        // Where a tfcc flow's data went missing: before the relay (the sender's socket), at
        // the relay (loss model, dropout), or after it (the bottleneck queue, or the receiving
        // socket: its namespace's receive-buffer drops are given beside).
        if let (Some(tx), Some(rx), Some(st)) =
            (r.sender_counters, r.receiver_counters, &relay_stats)
        {
            let relayed = st.data_forwarded.get(i).copied().unwrap_or(0);
            eprintln!(
                "flow {i} data (whole run): {} sent, {relayed} past the relay, {} received; {} \
                 lost after the relay (UDP receive-buffer drops in the receiver's namespace: {})",
                tx.sent,
                rx.received,
                relayed.saturating_sub(rx.received),
                r.rcvbuf_errors
                    .map_or_else(|| "unknown".to_string(), |n| n.to_string()),
            );
        }
    }
    // A kernel TCP flow's segments handed to the queue against those its receiver got: its
    // losses at the queue and after it over the run, measured independently of tc (the
    // receiver reads its count as it stops; segments the sender still sends after that count
    // as lost here).
    for (i, r) in results.iter().enumerate() {
        if let (Some(got), Some(st)) = (r.tcp_data_segs_in, &relay_stats) {
            let handed = st.written.get(i).copied().unwrap_or(0);
            eprintln!(
                "flow {i} data (whole run): {handed} segments with payload past the relay, \
                 {got} received; {} lost after the relay",
                handed.saturating_sub(got)
            );
        }
    }
    // After the relay a packet meets the bottleneck's queue: its drops over the whole run are
    // the other half of "lost after the relay" (the summary's link drops are the window's: a
    // slow start's overflow before `measure_from` shows here only).
    if let Some(t) = &tc {
        eprintln!(
            "bottleneck queues (whole run): forward {} packets sent, {} dropped; reverse {} \
             sent, {} dropped",
            t.forward.sent_packets, t.forward.drops, t.reverse.sent_packets, t.reverse.drops
        );
    }
    if let Some(d) = &drained {
        eprintln!(
            "bottleneck queues after the drain ({} ms): forward {} dropped, {} queued; reverse \
             {} dropped, {} queued",
            drain.as_millis(),
            d.forward.drops,
            d.forward.backlog_packets,
            d.reverse.drops,
            d.reverse.backlog_packets
        );
    }
    drop(bed);
    // TFWC's and WARC's bytes as the simulator counts them (exact: every datagram of theirs is
    // full-size).
    let results: Vec<_> = results
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            if let Some(&(_, sim, here)) = counted.iter().find(|c| c.0 == i) {
                let scale = |b: u64| b / u64::from(here) * u64::from(sim);
                r.window_bytes = scale(r.window_bytes);
                r.total_bytes = scale(r.total_bytes);
                r.delivered.iter_mut().for_each(|d| *d = scale(*d));
                // A rate scheme's sender states its rate as packets per RTT times its packet
                // size, and CBR's its configured rate, both in the datagram here: in the
                // simulator's bytes they are the same packets per RTT, or per second.
                if matches!(flows[i].kind, FlowKind::Rate { .. } | FlowKind::Cbr(_)) {
                    let k = f64::from(sim) / f64::from(here);
                    for smp in &mut r.sender {
                        smp.rate = smp.rate.map(|x| x * k);
                    }
                }
            }
            r
        })
        .collect();
    let window = duration - measure_from;
    let tcp_spurious_rtos: Vec<NamespaceRtos> = rto_spaces
        .iter()
        .enumerate()
        .map(|(k, (label, _, ids))| {
            let at = |r: &Option<Rtos>| r.as_ref().map_or((None, None), |v| v[k]);
            let ((undo0, frto0), (undo1, frto1)) = (at(&rtos_at_window), at(&rtos_at_end));
            let diff = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
            NamespaceRtos {
                namespace: label.to_string(),
                flows: ids.clone(),
                loss_undos: diff(undo0, undo1),
                spurious_rtos: diff(frto0, frto1),
            }
        })
        .collect();
    // A kernel-TCP flow's own count where it is the one kernel-TCP sender of its namespace;
    // `None` where several share it (their total is in `tcp_spurious_rtos`). 0 for tfcc's UDP
    // flows, which have no TCP retransmission timer.
    let spurious_of = |i: usize| -> Option<u64> {
        match tcp_spurious_rtos
            .iter()
            .find(|n| n.flows.contains(&(i as u32)))
        {
            Some(n) if n.flows.len() == 1 => n.loss_undos,
            Some(_) => None,
            None => Some(0),
        }
    };
    let w0 = at_window.unwrap_or_default();
    let diff = |end: QdiscSample, start: QdiscSample| {
        (
            end.sent_bytes.saturating_sub(start.sent_bytes),
            end.sent_packets.saturating_sub(start.sent_packets),
            end.drops.saturating_sub(start.drops),
        )
    };
    let (tx_bytes, tx_packets, drops) = tc.map_or((0, 0, 0), |t| diff(t.forward, w0.forward));
    let (rev_bytes, rev_packets, rev_drops) = tc.map_or((0, 0, 0), |t| diff(t.reverse, w0.reverse));
    // What the queue holds at the window's end beyond what it held at its start arrived in the
    // window too (the simulator counts every arrival; 1377 against its 1391 without this).
    let arrived = |left: u64, end: QdiscSample, start: QdiscSample| {
        (left + end.backlog_packets).saturating_sub(start.backlog_packets)
    };
    let (arrivals, rev_arrivals) = tc.map_or((0, 0), |t| {
        (
            arrived(tx_packets + drops, t.forward, w0.forward),
            arrived(rev_packets + rev_drops, t.reverse, w0.reverse),
        )
    });
    let relay_window = relay_stats
        .as_ref()
        .map(|s| s.window_drops())
        .unwrap_or_default();
    let inputs: Vec<LossInput> = flows
        .iter()
        .zip(&results)
        .enumerate()
        .map(|(i, (f, r))| LossInput {
            reverse: f.reverse,
            received: r.received_seqs.as_ref(),
            rcvbuf_errors: r.rcvbuf_errors,
            out_of_order: relay_stats
                .as_ref()
                .and_then(|s| s.out_of_order.get(i).copied())
                .unwrap_or(0),
            arrived: None,
        })
        .collect();
    let edges = relay_stats.as_ref().map(|s| s.window_edges());
    if let (Ok(counts), Some(st)) = (&came_out, &relay_stats) {
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
    let inputs: Vec<LossInput> = inputs
        .into_iter()
        .enumerate()
        .map(|(i, l)| LossInput {
            arrived: came_out
                .as_ref()
                .ok()
                .and_then(|c| c.get(i))
                .map(|c| c[Epoch::In as usize]),
            ..l
        })
        .collect();
    let uncounted = came_out.as_ref().err().map(String::as_str);
    let lost = flow_losses(
        &inputs,
        edges.as_ref().map(|(a, b)| (a, b)),
        QueueDrops {
            forward: drops,
            reverse: rev_drops,
            left_queued,
            at_marks: marked_edges,
        },
        uncounted,
    );
    for (i, l) in lost.iter().enumerate() {
        if let Err(why) = l {
            eprintln!("flow {i}: packets_lost unknown: {why}");
        }
    }
    let lost: Vec<Option<u64>> = lost.into_iter().map(|l| l.ok()).collect();
    let entries: Vec<FlowEntry> = results
        .iter()
        .zip(&built.flow_info)
        .enumerate()
        .map(|(i, (r, info))| {
            let own = endpoint_figures(r, interval, measure_from, duration);
            (i, r, info, own)
        })
        .map(|(i, r, info, own)| FlowEntry {
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
            base_rtt_s: None,
            cov: None,
            retransmits: 0,
            timeouts: own.timeouts,
            spurious_timeouts: spurious_of(i),
            receiver_timeouts: r.window_receiver_timeouts.unwrap_or(0),
            ptcp: None,
            video: None,
        })
        .collect();
    // θ and Jain over the forward flows, as the simulator's summary (summary.rs).
    let forward: Vec<&FlowEntry> = entries.iter().filter(|e| !e.is_reverse()).collect();
    let goodputs: Vec<f64> = forward.iter().map(|e| e.throughput_bps).collect();
    let (tcp, other): (Vec<&FlowEntry>, Vec<&FlowEntry>) =
        forward.iter().partition(|e| is_tcp(&e.protocol));
    let tcp: Vec<f64> = tcp.iter().map(|e| e.throughput_bps).collect();
    let other: Vec<f64> = other.iter().map(|e| e.throughput_bps).collect();
    // The forward direction's drops as the simulator's link counts them: its queue's (tc),
    // and the loss model's and the dropouts' (the relay's, on arrival, before the queue).
    let (artificial, down) = (relay_window.lost, relay_window.down_drops);
    let all_drops = drops + artificial + down;
    let links = vec![
        LinkEntry {
            name: "bottleneck".into(),
            // In the measurement window (tc counters differenced), IP headers included,
            // against the capacity at the scheduled rates: the simulator's fraction of the
            // window the transmitter was busy, in which a down link is idle, not absent.
            utilization: Some(
                tx_bytes as f64 * 8.0
                    / (capacity_bits(start_rate, &events, duration)
                        - capacity_bits(start_rate, &events, measure_from))
                    .max(1.0),
            ),
            drops: all_drops,
            queue_drops: drops,
            early_drops: 0,
            artificial_drops: artificial,
            down_drops: down,
            mean_queue_pkts: mean_backlog(&queue, measure_from, false),
            arrivals: arrivals + artificial + down,
            tx_packets,
            tx_bytes,
        },
        // The reverse direction: forward flows' feedback and reverse flows' data. Scheduled
        // events do not touch it (the simulator's apply to `bottleneck` only), nor does the
        // loss model.
        LinkEntry {
            name: "bottleneck-rev".into(),
            utilization: Some(
                rev_bytes as f64 * 8.0 / (start_rate.bps() as f64 * window.as_secs_f64()).max(1.0),
            ),
            drops: rev_drops,
            queue_drops: rev_drops,
            early_drops: 0,
            artificial_drops: 0,
            down_drops: 0,
            mean_queue_pkts: mean_backlog(&queue, measure_from, true),
            arrivals: rev_arrivals,
            tx_packets: rev_packets,
            tx_bytes: rev_bytes,
        },
    ];
    let summary = Summary {
        scenario: built.name.clone(),
        seed: built.cfg.seed,
        sim_seconds: std_secs_f64(duration),
        measure_from_s: std_secs_f64(measure_from),
        wall_seconds: std_secs_f64(wall.elapsed()),
        events: 0,
        peak_packets: 0,
        flows: entries,
        links,
        metrics: Metrics {
            fairness_theta: fairness_theta(&tcp, &other),
            jain_index: jain_index(&goodputs),
        },
        web: None,
        testbed: Some(TestbedSection { tcp_spurious_rtos }),
        trace: None,
    };
    let trace = capture.map(|c| {
        // By link id, the traced links' names, as the simulator's trace has them.
        let mut links = vec![None; built.topology.links.len()];
        for (name, _) in &c.links {
            if let Some(id) = built.topology.link_id(name) {
                links[id as usize] = Some(name.clone());
            }
        }
        TraceColumns {
            links,
            records: Vec::new(),
            pcaps,
            pcap_only: true,
        }
    });
    Ok(Finished {
        summary,
        flows: flow_columns(&results, interval),
        links: link_columns(&queue, interval),
        trace,
        // Per-frame delivery is followed in the simulator only (the testbed feeds its TFRC
        // video flows on real sockets and does not match packets to frames).
        frames: Default::default(),
        // PTCP is refused on the testbed (`protocol ptcp is not supported yet`, above).
        ptcp_slots: None,
    })
}

/// Checks that the scenario runs on the testbed, without running it: it loads, and nothing in
/// it is refused (what the testbed cannot emulate). Needs no root. Returns the notes a run
/// would print: what runs otherwise than the file says without being refused.
pub fn check(path: &Path, overrides: &[String]) -> Result<Vec<String>, RunError> {
    plan(path, overrides, None).map(|p| p.notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error `run` gives for a 5-s scenario named `tag` on a 4 Mb/s, 10 ms DropTail dumbbell
    /// whose remaining lines (more `[topology]` keys, flows, events) are `rest`, which it must
    /// refuse before setting anything up; `what` names what it would otherwise have run.
    pub(super) fn refusal(tag: &str, rest: &str, what: &str) -> String {
        let scenario = format!(
            "name = \"{tag}\"\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = {{ rate = \"4Mbps\", delay = \"10ms\", queue = \"droptail\", limit = 30 }}\n\
             {rest}"
        );
        let path = std::env::temp_dir().join(format!("tfcc-{tag}-{}.toml", std::process::id()));
        std::fs::write(&path, scenario).unwrap();
        let res = run(&path, &[], None, &mut || false);
        let _ = std::fs::remove_file(&path);
        match res {
            Err(e) => e.to_string(),
            Ok(_) => panic!("the testbed ran {what}"),
        }
    }
}
