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
//! (`rate_on_udp`). A video `source` feeds a TFRC, TFWC or CBR flow (a CBR one is 002's Vic
//! without congestion control: the simulator's CBR sender, sending only the frames' bytes, in
//! its packets and at its rate) through the simulator's own
//! source, `adapt` included (`tfcc_net::video::VideoFeed`), and its frames are followed to
//! the receiver as the simulator follows them (`frames.parquet`, one `tfcc_sim::frames::FrameLog`
//! for both; `tfcc_net::testbed::FlowResult::frames` says how its times are taken on real
//! sockets). A video-fed flow runs the simulator's own packets, each datagram 28 B shorter
//! (`wire_size::kernel_header_bytes`, `tfcc_net::testbed::KernelHeaders`), so that its packets per
//! frame and bytes are the simulator's.
//! What is refused, with the reason: RED queues, byte limits, loss on
//! other links, other protocols (tfcc's TCP-like window schemes among them), a video source on
//! any other flow, queues other than DropTail in packets in either direction. Access-link serialisation is not emulated (the veths are far
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
//!
//! One module per piece: `plan` (what a scenario maps to, and every refusal, found before a
//! namespace exists), `wire_size` (the simulator's packet sizes on the testbed's wire),
//! `capture` (the pcap captures), `timed` (the run in real time and what is read during it),
//! `whole_run` (the run's stderr over the whole run), `losses` (whose packets the queues
//! dropped in the window, and the drain that counting needs), `spurious_rtos` (kernel TCP's
//! spurious timeouts per namespace), `window` (the summary's figures over the window) and
//! `series` (the time series). `run` is the sequence of their steps.

use std::path::Path;
use std::time::{Duration, Instant};

use tfcc_core::time::std_secs_f64;
use tfcc_net::arrivals::ArrivalCounter;
use tfcc_net::relay::{DropCounts, Relay, RelayConfig};
use tfcc_net::testbed::{Bottleneck, Dumbbell, TestbedError};
use tfcc_sim::frames::FrameRecord;
use tfcc_sim::LinkAction;

use crate::summary::{Summary, TestbedSection};
use crate::{Finished, FrameColumns, RunError};

mod capture;
mod losses;
mod plan;
mod series;
mod spurious_rtos;
mod timed;
mod whole_run;
mod window;
mod wire_size;

use losses::QueueDrops;
use plan::{plan, Plan};
use series::{flow_columns, link_columns, Directions};
use window::QueueWindow;

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
    let load_at_start = load_average();
    let plan = plan(path, overrides, seed)?;
    for n in &plan.notes {
        eprintln!("note: {n}");
    }
    // Set-up: the namespaces, the captures, the relay and the arrival counter.
    let bed = Dumbbell::new(Bottleneck {
        rate: plan.rate,
        limit: plan.limit,
        reverse_limit: plan.reverse_limit,
    })
    .map_err(|e| RunError::Scenario(e.to_string()))?;
    let captures = capture::start(path, &bed, plan.capture.as_ref(), &plan.paths)?;
    let drain = losses::drain(&plan);
    let relay = start_relay(&bed, &plan)?;
    let arrivals = count_arrivals(&bed, relay.as_ref(), plan.flows.len());
    let interval = Duration::from_nanos(plan.built.cfg.sample_interval.0);
    let rto_spaces = spurious_rtos::namespaces(&plan.flows, &bed);
    // The timed run.
    let (results, readings) = match timed::run(
        &bed,
        &plan,
        relay.as_ref(),
        interval,
        drain,
        &rto_spaces,
        keep_going,
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
    // of their window, and what left the queues by then has passed the counter.
    let pcaps = capture::write(captures, plan.capture.as_ref(), readings.origin_realtime)?;
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
    // The window's edges: the relay's readings at its marks, where it ran, are of the same
    // instant as its own counts (tfcc_net::relay::DropCounts::qdiscs); the tick's, a few ms
    // apart from them, where it did not.
    let marked = |m: Option<&DropCounts>| m.and_then(|c| Directions::of(&c.qdiscs));
    let (w_mark, e_mark) = (
        marked(relay_stats.as_ref().and_then(|s| s.at_window.as_ref())),
        marked(relay_stats.as_ref().and_then(|s| s.at_end.as_ref())),
    );
    let marked_edges = w_mark.is_some() && e_mark.is_some();
    let at_window = w_mark.or(readings.at_window);
    let at_end = e_mark.or(readings.at_end);
    let left_queued = losses::left_queued(readings.drained, at_end);
    let tc = at_end.or_else(|| Directions::read(&bed.router_ns()));
    whole_run::report(
        &results,
        relay_stats.as_ref(),
        tc.as_ref(),
        readings.drained.as_ref(),
        drain,
    );
    drop(bed);
    // The window's accounting.
    let results = wire_size::to_simulator_bytes(results, &plan.counted, &plan.flows);
    let tcp_spurious_rtos =
        spurious_rtos::per_namespace(&rto_spaces, &readings.rtos_at_window, &readings.rtos_at_end);
    let (forward, reverse) = QueueWindow::both(at_window.unwrap_or_default(), tc);
    let lost = losses::packets_lost(
        &plan.flows,
        &results,
        relay_stats.as_ref(),
        &came_out,
        QueueDrops {
            forward: forward.drops,
            reverse: reverse.drops,
            left_queued,
            at_marks: marked_edges,
        },
    );
    let entries = window::flow_entries(&plan, &results, &lost, &tcp_spurious_rtos, interval);
    // The video flows' frame slots, flow by flow as the simulator lists them.
    let frames: Vec<FrameRecord> = results
        .iter()
        .filter_map(|r| r.frames.as_deref())
        .flatten()
        .cloned()
        .collect();
    let metrics = window::metrics(&entries);
    let links = window::link_entries(
        &plan,
        forward,
        reverse,
        relay_stats.as_ref(),
        &readings.queue,
    );
    // The outputs.
    let summary = Summary {
        scenario: plan.built.name.clone(),
        seed: plan.built.cfg.seed,
        sim_seconds: std_secs_f64(plan.duration),
        measure_from_s: std_secs_f64(plan.measure_from),
        wall_seconds: std_secs_f64(wall.elapsed()),
        events: 0,
        peak_packets: 0,
        flows: entries,
        links,
        metrics,
        web: None,
        testbed: Some(TestbedSection {
            tcp_spurious_rtos,
            relay: relay_stats.as_ref().map(whole_run::timing),
            load_average: load_at_start.zip(load_average()).map(|(a, b)| [a, b]),
        }),
        trace: None,
    };
    Ok(Finished {
        summary,
        flows: flow_columns(&results, interval),
        links: link_columns(&readings.queue, interval),
        trace: capture::trace_columns(plan.capture.as_ref(), &plan.built, pcaps),
        frames: FrameColumns::from_records(&frames),
        // PTCP is refused on the testbed (`protocol ptcp is not supported yet`, in `plan`).
        ptcp_slots: None,
    })
}

/// Starts the relay where the run needs one: for the loss model, a dropout or a loss change,
/// two flows or more (it is where each flow's arrivals at the queue are counted), or a path
/// delay. A run without any of them goes through the veths and tc alone.
/// The host's 1-minute load average, the first field of `/proc/loadavg`; `None` where it
/// cannot be read or parsed (the summary then leaves it out rather than guess).
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn start_relay(bed: &Dumbbell, plan: &Plan) -> Result<Option<Relay>, RunError> {
    let events_need_relay = plan
        .events
        .iter()
        .any(|(_, a)| !matches!(a, LinkAction::SetRate(_)));
    let needs_relay = plan.loss.is_some()
        || events_need_relay
        || plan.flows.len() > 1
        || plan
            .paths
            .iter()
            .any(|p| !(p.forward + p.reverse).is_zero());
    if !needs_relay {
        return Ok(None);
    }
    bed.start_relay(RelayConfig {
        flows: plan.paths.clone(),
        loss: plan.loss.clone(),
        seed: plan.built.cfg.seed,
        ..RelayConfig::default()
    })
    .map(Some)
    .map_err(|e| RunError::Scenario(format!("testbed relay: {e}")))
}

/// What came out of the queues of the packets the relay marked: without it a kernel TCP
/// flow's count falls back to tc's drops where they are its alone (`losses`), so a kernel
/// that cannot load the counter (no tcx before Linux 6.6) costs counts, not the run; where the
/// relay ran, the reason is a note on stderr.
fn count_arrivals(
    bed: &Dumbbell,
    relay: Option<&Relay>,
    flows: usize,
) -> Result<ArrivalCounter, String> {
    let arrivals = match relay {
        Some(_) => bed
            .count_arrivals(flows)
            .map_err(|e| format!("the arrival counter could not be attached: {e}")),
        None => Err("no relay ran (one flow, no delay or loss), so no packet was marked".into()),
    };
    if let Err(why) = &arrivals {
        if relay.is_some() {
            eprintln!("note: {why}");
        }
    }
    arrivals
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
