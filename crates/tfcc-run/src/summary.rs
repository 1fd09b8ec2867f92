//! `summary.json`: the end-of-run summary of DESIGN.md ("Outputs") with the scenario-level
//! metrics, serialised with serde so that the file, the Python API and the printed table are
//! the same data.
//!
//! JSON has no NaN or infinity; a value that is not finite is written as `null` (missing).

use serde::{Deserialize, Serialize};
use tfcc_sim::recorder::{fairness_theta, jain_index};
use tfcc_sim::scenario::FlowInfo;
use tfcc_sim::{LinkId, RunResult};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub sim_seconds: f64,
    /// Start of the measurement window; the window ends at `sim_seconds`.
    pub measure_from_s: f64,
    /// Wall-clock time of loading, building and simulating (not of writing the outputs).
    pub wall_seconds: f64,
    pub events: u64,
    /// Most packets simultaneously in the network.
    pub peak_packets: u64,
    pub flows: Vec<FlowEntry>,
    pub links: Vec<LinkEntry>,
    pub metrics: Metrics,
    /// `access-gateway` scenarios only: the web workload's report (docs/scenarios.md, Outputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<crate::web::WebSection>,
    /// `--backend testbed` only: what the kernel counts per network namespace, not per flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub testbed: Option<TestbedSection>,
    /// With a `[trace]` only: where the traced links and the flows' endpoints sit, as node
    /// numbers, so that `tfcc ns2-trace` can write ns-2's node and address columns from
    /// `trace.parquet` and this file alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSection>,
}

/// The addressing of a packet trace, in ns-2's terms: each traced link's ends and each flow's
/// sender and receiver as `node.port` (see [`tfcc_sim::topology::Topology::node_numbers`] for
/// how nodes are numbered).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceSection {
    /// The traced links, in link id order.
    pub links: Vec<TracedLink>,
    /// Every flow, by id.
    pub flows: Vec<FlowEnds>,
    /// The packets the traced links held when a window from after the start opened, per
    /// packet key in key order: `tfcc ns2-trace` needs them to pair a `-` or `r` in the window
    /// with the right `+` (see [`tfcc_sim::trace::PacketTrace::pending_at_from`]). Left out
    /// when empty, as for every trace from 0 s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingPackets>,
}

/// Packets of one key on a traced link at the trace's `from`: `queued` had arrived and not
/// started transmission, `wire` had started and not reached the link's end. The key's fields
/// are `trace.parquet`'s columns.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PendingPackets {
    pub link: String,
    pub flow: u32,
    pub direction: String,
    pub kind: String,
    pub seq: Option<u64>,
    pub queued: u32,
    pub wire: u32,
}

/// A traced link and the nodes it joins.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TracedLink {
    pub name: String,
    pub from_node: u32,
    pub to_node: u32,
}

/// A flow's sender (`src`) and receiver (`dst`). Ports number the agents of a node in the
/// order an ns-2 script would attach them, flow by flow, sender before receiver: 0 unless
/// flows share a host (a custom topology's routes may).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FlowEnds {
    pub id: u32,
    pub src_node: u32,
    pub src_port: u32,
    pub dst_node: u32,
    pub dst_port: u32,
}

impl TraceSection {
    /// The section for a run of `flows` over `topo`, whose links join the nodes `nodes`
    /// (`[from, to]` by link id), that traces `traced`.
    pub fn new(
        topo: &tfcc_sim::topology::Topology,
        nodes: &[[u32; 2]],
        flows: &[tfcc_sim::FlowSpec],
        traced: &[(LinkId, String)],
    ) -> Self {
        let mut links: Vec<TracedLink> = traced
            .iter()
            .filter_map(|(id, name)| {
                nodes
                    .get(*id as usize)
                    .map(|&[from_node, to_node]| TracedLink {
                        name: name.clone(),
                        from_node,
                        to_node,
                    })
            })
            .collect();
        links.sort_by_key(|l| topo.link_id(&l.name));
        let mut agents: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        let mut attach = |node: u32| {
            let port = agents.entry(node).or_insert(0);
            *port += 1;
            *port - 1
        };
        let mut ends = Vec::with_capacity(flows.len());
        for (id, f) in flows.iter().enumerate() {
            let Some(route) = topo.routes.get(f.route) else {
                continue;
            };
            let end = |l: Option<&LinkId>, side: usize| {
                l.and_then(|&l| nodes.get(l as usize))
                    .map_or(0, |n| n[side])
            };
            let (src_node, dst_node) =
                (end(route.forward.first(), 0), end(route.forward.last(), 1));
            let src_port = attach(src_node);
            let dst_port = attach(dst_node);
            ends.push(FlowEnds {
                id: id as u32,
                src_node,
                src_port,
                dst_node,
                dst_port,
            });
        }
        TraceSection {
            links,
            flows: ends,
            pending: Vec::new(),
        }
    }

    /// Record what `trace`'s links held at its `from`.
    pub fn set_pending(&mut self, trace: &tfcc_sim::trace::PacketTrace) {
        self.pending = trace
            .pending_at_from()
            .into_iter()
            .map(|((link, flow, reverse, kind, seq), p)| PendingPackets {
                link: trace.link_name(link).to_string(),
                flow,
                direction: if reverse { "reverse" } else { "forward" }.into(),
                kind: kind.name().into(),
                seq,
                queued: p.queued,
                wire: p.wire,
            })
            .collect();
    }
}

/// The testbed's namespace-level counters (`--backend testbed`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TestbedSection {
    /// Per namespace that sends kernel-TCP data: the timeouts its TCP senders found spurious
    /// in the measurement window (tfcc_net::testbed::tcp_spurious_rtos).
    pub tcp_spurious_rtos: Vec<NamespaceRtos>,
    /// How closely the relay kept the scenario's delays over the whole run; `None` where no
    /// relay ran (one flow on a path without delay or loss). Older summaries lack it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay: Option<RelayTiming>,
    /// The host's 1-minute load average when the run started and when it ended
    /// (`/proc/loadavg`): a testbed run is real time, and a loaded host delays its senders'
    /// and receivers' threads as well as the relay. `None` where it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_average: Option<[f64; 2]>,
}

/// The relay's timing over the whole run, so that a testbed result carries the evidence of how
/// faithfully its delays were applied (a run's stderr says the same, but a reproduction keeps
/// only the summary). Lateness is how long after its due time a packet was released
/// (tfcc_net::relay::Lateness), quantiles as their histogram bucket's upper edge.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RelayTiming {
    /// Packets the relay forwarded.
    pub forwarded: u64,
    pub lateness_p50_ms: f64,
    pub lateness_p99_ms: f64,
    pub lateness_max_ms: f64,
    /// The relay thread's CPU time over its wall time.
    pub cpu_share: f64,
    /// Whether it ran under SCHED_FIFO (it falls back to the normal scheduler when refused).
    pub realtime: bool,
}

/// One namespace's spurious retransmission timeouts over the measurement window, as the kernel
/// counts them (differences of its `TcpExt:` counters from the window's start to its end).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NamespaceRtos {
    /// `senders` (the forward flows' senders) or `receivers` (the reverse flows' senders).
    pub namespace: String,
    /// The kernel-TCP flows sending from it (flow ids): with one, `loss_undos` is that flow's
    /// `spurious_timeouts`; with several, it is their total and no flow has its own.
    pub flows: Vec<u32>,
    /// `TCPLossUndo`: timeout recoveries undone as spurious (timestamps, D-SACK or F-RTO; one
    /// per recovery, however many backed-off timeouts it took); `None` if not read.
    pub loss_undos: Option<u64>,
    /// `TCPSpuriousRTOs`: of `loss_undos`, those F-RTO found; `None` if not read.
    pub spurious_rtos: Option<u64>,
}

/// One flow's results in the measurement window (see `tfcc_sim::FlowSummary`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowEntry {
    pub id: u32,
    /// The scenario's `label`, or the protocol name.
    pub label: Option<String>,
    /// Index of the `[[flows]]` entry the flow comes from.
    pub group: Option<usize>,
    pub protocol: String,
    /// `forward`, or `reverse` for a dumbbell flow that sends right to left (the scenario's
    /// `direction`); `metrics` and the Python metrics leave reverse flows out.
    #[serde(default = "forward")]
    pub direction: String,
    pub throughput_bps: f64,
    pub bytes_delivered: u64,
    pub packets_sent: u64,
    /// Data packets dropped on the forward route in the window (the simulator's
    /// `FlowSummary::packets_lost`); `null` on the testbed when the flow's share of a queue's
    /// drops is unknown (tc counts a queue's drops, not whose packets they were; the testbed
    /// measures each flow's, a tfcc flow's by its receiver's sequence numbers and a kernel TCP
    /// flow's by the window's marks on its packets, when the queue has emptied before the
    /// receivers stop: testbed::flow_losses).
    pub packets_lost: Option<u64>,
    pub loss_event_rate: Option<f64>,
    pub mean_rtt_s: Option<f64>,
    /// The flow's propagation RTT, the delays of its routes' links as configured (the
    /// simulator's `FlowSummary::base_rtt_s`, `Topology::base_rtt_s`). The testbed reports
    /// the same configured figure: its relay holds each packet for exactly those delays, and
    /// what a real path adds on top (the relay's lateness, the stack's own time) is, like
    /// queueing, in `mean_rtt_s` and not in this set-up figure. Older summaries lack it, and
    /// testbed summaries before 2026-11-28 have `null`.
    #[serde(default)]
    pub base_rtt_s: Option<f64>,
    /// CoV of the flow's goodput per sampling interval over the intervals wholly in the window
    /// that end after the flow's start (`tfcc_sim::recorder::WindowGoodput`, one definition for
    /// both backends: the testbed feeds it its receivers' delivered bytes at the sampling
    /// instants); `null` without such an interval or with nothing delivered in them.
    /// Testbed summaries before 2026-11-28 have `null`.
    pub cov: Option<f64>,
    pub retransmits: u64,
    /// The sender's timeouts (TCP's RTO expiries; a rate sender's no-feedback expiries), every
    /// expiry whatever its outcome: TCP's include those whose retransmission's fate is unknown
    /// at the end of the run, which are neither spurious nor loss events.
    pub timeouts: u64,
    /// Of `timeouts`, those found spurious (TCP: the original segment arrived, nothing was
    /// lost); they are not loss events and `loss_event_rate` leaves them out. 0 where the
    /// sender cannot tell. On the testbed a kernel-TCP flow has its namespace's count
    /// (`loss_undos` of `testbed.tcp_spurious_rtos`: the kernel counts them per network
    /// namespace only) when it is the only kernel-TCP sender there, and `null` when several
    /// share the namespace, rather than a 0 that would say none was spurious. Always written.
    #[serde(default)]
    pub spurious_timeouts: Option<u64>,
    /// The receiver's: WARC's fluid-based timeout phases (003 Sec. 3.2.2.3); 0 for receivers
    /// that emulate none. Always written, so every flow row of a sweep's store has the column.
    #[serde(default)]
    pub receiver_timeouts: u64,
    /// PTCP flows only (001): the required throughput and the slots that met it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptcp: Option<PtcpEntry>,
    /// Flows fed by a video source only: its frames in the measurement window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoEntry>,
}

/// A video source's frames in the measurement window (`source = { kind = "video", ... }`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VideoEntry {
    /// The source's nominal frame rate.
    pub fps: f64,
    /// Frames due in the window (not in a pause).
    pub frames_due: u64,
    /// Of those, frames grabbed; the rest Vic's coupling skipped (002 Algorithm 4).
    pub frames_grabbed: u64,
    /// Mean quantizer of the grabbed frames (coupled sources only).
    pub mean_q: Option<f64>,
}

impl VideoEntry {
    /// The summary's entry of a video flow's window, from either backend's record.
    pub(crate) fn new(v: &tfcc_sim::recorder::VideoRecord) -> VideoEntry {
        VideoEntry {
            fps: v.fps,
            frames_due: v.frames_due,
            frames_grabbed: v.frames_grabbed,
            mean_q: v.mean_q.and_then(finite),
        }
    }
}

/// A PTCP flow's requirement and how many evaluation slots met it (001 Sec. 3's "slots
/// achieving bw"). The slots themselves, evaluation and control, are rows of
/// `ptcp_slots.parquet` ([`crate::columns::PtcpSlotColumns`]): as arrays here they made most of
/// a long run's summary (47 of 49 MB, 600 s with 1000 SURGE users).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PtcpEntry {
    /// Required throughput, payload bit/s.
    pub bw_bps: f64,
    /// "oracle" or "inline".
    pub estimator: String,
    /// Inline only: measurements of `A` completed.
    pub measurements: u64,
    /// Evaluation slots that started inside the measurement window, and how many met `bw`.
    pub slots: usize,
    pub slots_met: usize,
    /// `[time_s, s]` at the start and at every change of the control slot length: a few
    /// entries a run (6 in 600 s of 001-e6-web), kept here rather than as slot rows.
    pub s_changes: Vec<(f64, u32)>,
}

impl PtcpEntry {
    fn new(r: &tfcc_sim::recorder::PtcpRecord, measure_from_s: f64) -> PtcpEntry {
        let window = r
            .eval_slots
            .iter()
            .filter(|e| e.start.as_secs_f64() >= measure_from_s);
        PtcpEntry {
            bw_bps: r.bw_bps,
            estimator: r.estimator.to_string(),
            measurements: r.measurements,
            slots: window.clone().count(),
            slots_met: window.filter(|e| e.met).count(),
            s_changes: r
                .s_changes
                .iter()
                .map(|&(t, s)| (t.as_secs_f64(), s))
                .collect(),
        }
    }
}

/// One reported link's results in the measurement window (see `tfcc_sim::LinkSummary`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LinkEntry {
    pub name: String,
    pub utilization: Option<f64>,
    pub drops: u64,
    pub queue_drops: u64,
    pub early_drops: u64,
    pub artificial_drops: u64,
    pub down_drops: u64,
    /// Packets waiting in the queue, the one being sent not among them. The simulator's is its
    /// time average over the window; the testbed's is the mean of its tc readings, one point
    /// reading per sampling interval (`series::mean_backlog`), which tc's counters cannot
    /// average. Both agree where a queue stands (002 R5's TFRC against TCP, seed 1: 39.61 on
    /// the testbed against the simulator's 39.69); they part where the traffic is periodic in a divisor of the
    /// sampling interval, so every reading finds the same phase of it: a 30 fps video on a
    /// CBR flow bursts each frame into the queue for a few ms every 33.3 ms, and the 100 ms
    /// readings all fall between the bursts (0.0 on the testbed, and 0.0 over the simulator's
    /// own point readings in `queues.parquet`, against its time average 0.44).
    pub mean_queue_pkts: Option<f64>,
    pub arrivals: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
}

/// Scenario-level metrics; `None` (JSON `null`) where one does not apply.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Metrics {
    /// θ, the TCP share between the `tcp-*` flows and all others (`fairness_theta`); needs both.
    pub fairness_theta: Option<f64>,
    /// Jain's index over all flows' goodputs.
    pub jain_index: Option<f64>,
}

fn forward() -> String {
    "forward".into()
}

impl FlowEntry {
    /// Whether the flow's data crosses the dumbbell right to left (`direction = "reverse"`).
    pub fn is_reverse(&self) -> bool {
        self.direction == "reverse"
    }
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Whether a protocol name is one of the TCP baselines, the reference side of θ.
pub fn is_tcp(protocol: &str) -> bool {
    protocol.starts_with("tcp")
}

impl Summary {
    pub fn new(
        name: &str,
        info: &[FlowInfo],
        reported: &[LinkId],
        result: &RunResult,
        wall_seconds: f64,
    ) -> Self {
        let s = &result.summary;
        let flows: Vec<FlowEntry> = s
            .flows
            .iter()
            .map(|f| {
                let fi = info.get(f.id as usize);
                FlowEntry {
                    id: f.id,
                    label: fi.map(|i| i.label.clone()),
                    group: fi.map(|i| i.group),
                    protocol: f.protocol.clone(),
                    direction: fi
                        .map_or(tfcc_sim::scenario::spec::Direction::Forward, |i| {
                            i.direction
                        })
                        .as_str()
                        .to_string(),
                    throughput_bps: f.throughput_bps,
                    bytes_delivered: f.bytes_delivered,
                    packets_sent: f.packets_sent,
                    packets_lost: Some(f.packets_lost),
                    loss_event_rate: finite(f.loss_event_rate),
                    mean_rtt_s: f.mean_rtt_s.and_then(finite),
                    base_rtt_s: finite(f.base_rtt_s),
                    cov: f.cov.and_then(finite),
                    retransmits: f.retransmits,
                    timeouts: f.timeouts,
                    spurious_timeouts: Some(f.spurious_timeouts),
                    receiver_timeouts: f.receiver_timeouts,
                    ptcp: f.ptcp.as_ref().map(|r| PtcpEntry::new(r, s.measure_from_s)),
                    video: f.video.as_ref().map(VideoEntry::new),
                }
            })
            .collect();
        let links = reported
            .iter()
            .filter_map(|&id| s.links.get(id as usize))
            .map(|l| LinkEntry {
                name: l.name.clone(),
                utilization: finite(l.utilization),
                drops: l.drops,
                queue_drops: l.queue_drops,
                early_drops: l.early_drops,
                artificial_drops: l.artificial_drops,
                down_drops: l.down_drops,
                mean_queue_pkts: finite(l.mean_queue_pkts),
                arrivals: l.arrivals,
                tx_packets: l.tx_packets,
                tx_bytes: l.tx_bytes,
            })
            .collect();
        // θ and Jain are over the forward flows: reverse-path traffic (002 Secs. 4.2, 4.4)
        // only perturbs the ACK path of the flows compared.
        let forward: Vec<&FlowEntry> = flows.iter().filter(|f| !f.is_reverse()).collect();
        let (tcp, other): (Vec<&FlowEntry>, Vec<&FlowEntry>) =
            forward.iter().partition(|f| is_tcp(&f.protocol));
        let tput = |v: &[&FlowEntry]| v.iter().map(|f| f.throughput_bps).collect::<Vec<_>>();
        let metrics = Metrics {
            fairness_theta: fairness_theta(&tput(&tcp), &tput(&other)).and_then(finite),
            jain_index: jain_index(&tput(&forward)).and_then(finite),
        };
        Summary {
            scenario: name.to_owned(),
            seed: s.seed,
            sim_seconds: s.sim_seconds,
            measure_from_s: s.measure_from_s,
            wall_seconds,
            events: s.events,
            peak_packets: s.peak_packets,
            flows,
            links,
            metrics,
            web: None,
            testbed: None,
            trace: None,
        }
    }

    /// The `summary.json` text: indented, fields in a fixed order, ending in a newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            // Serialising plain structs of numbers and strings cannot fail; say so if it does.
            format!("{{\"error\": \"cannot serialise the summary: {e}\"}}")
        });
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_that_share_a_host_get_its_ports_in_flow_order() {
        let text = r#"
duration = "1s"
[topology]
kind = "custom"
nodes = ["a", "b", "c"]
links = [
  { name = "ab", from = "a", to = "b", rate = "10Mbps", delay = "5ms" },
  { name = "bc", from = "b", to = "c", rate = "2Mbps", delay = "5ms" },
  { name = "cb", from = "c", to = "b", rate = "2Mbps", delay = "5ms" },
  { name = "ba", from = "b", to = "a", rate = "10Mbps", delay = "5ms" },
]
[[flows]]
protocol = "cbr"
rate = "1Mbps"
count = 2
route = ["a", "b", "c"]
[[flows]]
protocol = "cbr"
rate = "1Mbps"
route = ["c", "b"]
[trace]
links = ["cb", "ab"]
"#;
        let built = tfcc_sim::scenario::load_str(text, "t.toml", "t", &[], None).unwrap();
        let traced = &built.cfg.trace.as_ref().unwrap().links;
        let s = TraceSection::new(&built.topology, &built.node_numbers(), &built.flows, traced);
        let link = |name: &str, from_node, to_node| TracedLink {
            name: name.into(),
            from_node,
            to_node,
        };
        // In link order, whatever the order [trace] names them in.
        assert_eq!(s.links, [link("ab", 0, 1), link("cb", 2, 1)]);
        let ends = |id, src_node, src_port, dst_node, dst_port| FlowEnds {
            id,
            src_node,
            src_port,
            dst_node,
            dst_port,
        };
        // a hosts flows 0 and 1's senders, c their receivers and then flow 2's sender.
        assert_eq!(
            s.flows,
            [
                ends(0, 0, 0, 2, 0),
                ends(1, 0, 1, 2, 1),
                ends(2, 2, 2, 1, 0)
            ]
        );
        let back: Summary = serde_json::from_str(
            &Summary {
                trace: Some(s.clone()),
                ..Summary::new("t", &[], &[], &built.into_simulation().unwrap().run(), 0.0)
            }
            .to_json(),
        )
        .unwrap();
        assert_eq!(back.trace, Some(s));
    }

    #[test]
    fn reverse_flows_are_reported_but_left_out_of_theta_and_jain() {
        let text = r#"
duration = "10s"
measure_from = "2s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "2Mbps", delay = "10ms", limit = 20 }
reverse_queue = { limit = 50 }
[[flows]]
protocol = "tcp-sack"
[[flows]]
protocol = "tfwc"
[[flows]]
protocol = "tcp-sack"
direction = "reverse"
"#;
        let built = tfcc_sim::scenario::load_str(text, "t.toml", "t", &[], None).unwrap();
        let (info, reported) = (built.flow_info.clone(), built.reported_links.clone());
        let result = built.into_simulation().unwrap().run();
        let s = Summary::new("t", &info, &reported, &result, 0.0);
        let dirs: Vec<&str> = s.flows.iter().map(|f| f.direction.as_str()).collect();
        assert_eq!(dirs, ["forward", "forward", "reverse"]);
        let t: Vec<f64> = s.flows.iter().map(|f| f.throughput_bps).collect();
        assert!(t[2] > 0.0, "the reverse flow delivers: {t:?}");
        assert_eq!(s.metrics.fairness_theta, fairness_theta(&t[..1], &t[1..2]));
        assert_eq!(s.metrics.jain_index, jain_index(&t[..2]));
        // Older summaries without the field read as forward.
        let json = s.to_json().replace("\"direction\": \"forward\",", "");
        let back: Summary = serde_json::from_str(&json).unwrap();
        assert!(!back.flows[0].is_reverse() && back.flows[2].is_reverse());
        assert_eq!(back.flows[0].direction, "forward");
    }
}
