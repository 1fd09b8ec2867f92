//! What the run's stderr says over the whole run: the relay's work and timing, per flow how
//! many data packets were sent, passed the relay and were received (with the receiving
//! namespace's UDP receive-buffer drops), and what the bottleneck's queues sent and dropped.
//! The summary's figures are the window's; these say where a loss happened, the slow start's
//! overflow before the window included.

use std::time::Duration;

use tfcc_net::relay::RelayStats;
use tfcc_net::testbed::FlowResult;

use super::series::Directions;
use crate::summary::RelayTiming;

/// The relay's timing for the summary: the same figures the report below prints.
pub(super) fn timing(st: &RelayStats) -> RelayTiming {
    RelayTiming {
        forwarded: st.forwarded,
        lateness_p50_ms: st.lateness.quantile(0.5).as_millis_f64(),
        lateness_p99_ms: st.lateness.quantile(0.99).as_millis_f64(),
        lateness_max_ms: st.lateness.max().as_millis_f64(),
        cpu_share: st.cpu_share(),
        realtime: st.realtime,
    }
}

/// Prints the whole run's figures: `relay`'s statistics where it ran, the flows' `results`,
/// tc's counters at the run's end (`tc`) and after the `drain` (`drained`).
pub(super) fn report(
    results: &[FlowResult],
    relay: Option<&RelayStats>,
    tc: Option<&Directions>,
    drained: Option<&Directions>,
    drain: Duration,
) {
    if let Some(st) = relay {
        eprintln!(
            "relay (whole run): {} packets, {} lost to the loss model, {} dropped while the \
             bottleneck was down, {} and {} of no flow towards the receivers' and the senders' \
             side, lateness p50 {:.3} p99 {:.3} max {:.3} ms (the window marks' tc readings \
             held it up to {:.1} ms and ended up to {:.1} ms after the mark's time), CPU \
             {:.1} %{}",
            st.forwarded,
            st.lost,
            st.down_drops,
            st.stray[0],
            st.stray[1],
            st.lateness.quantile(0.5).as_millis_f64(),
            st.lateness.quantile(0.99).as_millis_f64(),
            st.lateness.max().as_millis_f64(),
            st.mark_pause.as_millis_f64(),
            st.mark_span.as_millis_f64(),
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
        if let (Some(tx), Some(rx), Some(st)) = (r.sender_counters, r.receiver_counters, relay) {
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
        if let (Some(got), Some(st)) = (r.tcp_data_segs_in, relay) {
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
    if let Some(t) = tc {
        eprintln!(
            "bottleneck queues (whole run): forward {} packets sent, {} dropped; reverse {} \
             sent, {} dropped",
            t.forward.sent_packets, t.forward.drops, t.reverse.sent_packets, t.reverse.drops
        );
    }
    if let Some(d) = drained {
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
}
