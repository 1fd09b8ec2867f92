//! From a parsed [`ScenarioSpec`] to what the simulator runs: a [`Topology`], a [`SimConfig`],
//! one [`FlowSpec`] per flow and the [`ScheduledEvent`]s.
//!
//! serde has already checked types, units and unknown keys; this checks what serde cannot see
//! (keys that only some topology kinds or loss models take, positive rates, ranges, times inside
//! the run, link names in events) and names the key of every problem, in the same
//! `flows[0].count` form serde_path_to_error uses.

use super::protocols::{self, FlowCommon};
use super::spec::{
    AccessTable, Direction, EventSpec, FlowGroupSpec, LinkTable, LossKind, LossTable, QueueKind,
    ScenarioSpec, ScopeKind, Spread, TopologyKind,
};
use super::RATE_NOT_POSITIVE;
use crate::drr::DrrConfig;
use crate::flow::FlowSpec;
use crate::link::{LinkId, LinkSpec};
use crate::loss_model::{LossModel, LossScope, LossSpec};
use crate::queue::{QueueLimit, QueueSpec, RedConfig, NS2_DEFAULT_LIMIT};
use crate::sim::{LinkAction, ScheduledEvent, SimConfig};
use crate::topology::{AccessSpec, CustomLink, CustomRoute, DelaySpread, DumbbellSpec, Topology};
use crate::trace::TraceConfig;
use std::collections::HashMap;
use tfcc_core::{Dur, Rate, Time};

/// A problem with one key of the scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    /// Dotted key path, `topology.bottleneck.rate`, `flows[1].params.tp`.
    pub key: String,
    pub message: String,
}

pub(super) fn err<T>(key: impl Into<String>, message: impl Into<String>) -> Result<T, BuildError> {
    Err(BuildError {
        key: key.into(),
        message: message.into(),
    })
}

/// Per-flow facts the outputs need beside the simulator's own summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowInfo {
    /// The `[[flows]]` entry the flow comes from.
    pub group: usize,
    /// `label`, or the protocol name.
    pub label: String,
    /// The protocol as written in the scenario.
    pub protocol: String,
    /// The group's `direction`: reverse flows send right to left over a dumbbell. Metrics
    /// over "the flows" (θ, Jain, CoV) take the forward flows only.
    pub direction: Direction,
}

/// A scenario ready to run.
pub struct Built {
    pub name: String,
    pub cfg: SimConfig,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    pub flow_info: Vec<FlowInfo>,
    pub events: Vec<ScheduledEvent>,
    /// Links worth reporting: every link except the per-flow access links, which would
    /// otherwise make outputs grow with four links per flow.
    pub reported_links: Vec<LinkId>,
    /// `kind = "access-gateway"`: the gateway that drives the web connections (flows
    /// `0..`, in order), which [`Built::into_simulation`] hands to the simulator.
    pub web: Option<crate::web::WebGateway>,
    /// What the outputs need to report the web workload.
    pub web_info: Option<WebInfo>,
    /// Application-limited sources: (flow, its video source).
    pub videos: Vec<(u32, crate::video::VideoConfig)>,
    /// A custom topology's links' ends as positions in its `nodes` list, the numbers an ns-2
    /// script creating the nodes in that order gives them; `None` for the other kinds, whose
    /// nodes [`Topology::node_numbers`] recovers from the routes.
    pub link_nodes: Option<Vec<[u32; 2]>>,
}

/// The web workload's facts for the summary (`tfcc-run`'s `web` section).
#[derive(Clone, Debug, PartialEq)]
pub struct WebInfo {
    /// `msfrs` or `plain`.
    pub gateway: &'static str,
    /// Each class' weight (1 for every class of a plain gateway unless the file says).
    pub weights: Vec<f64>,
    /// Latency means count transactions that arrived before this (`web.latency_exclude_last`).
    pub latency_until: Time,
}

/// Default access rate: ten times the fastest bottleneck, so access links never limit a flow
/// (docs/scenarios.md).
const ACCESS_RATE_FACTOR: u64 = 10;
/// Default access delay (docs/scenarios.md).
const ACCESS_DELAY: Dur = Dur::from_millis(1);

/// Most flows a scenario may define: a typo such as `count = 10000000000` must be an error, not
/// an attempt to allocate the flows (the largest benchmark has 1000).
pub const MAX_FLOWS: u64 = 1_000_000;

/// Most time-series rows (sampling intervals × (flows + reported links)) a run may record: a
/// `sample_interval` of `1ns` over a long run must be an error, not an out-of-memory abort.
/// `tfcc run` holds a row in 40-60 bytes (`tfcc_run::FlowColumns`; the Parquet file takes
/// about 48), so this is 2-3 GB; a [`crate::FlowSample`] kept by the simulator itself takes
/// 160. Only the reported links count: the per-flow access links record no series
/// (`SimConfig::series_links`), and counting them refused a 1000-flow dumbbell over an hour
/// (36 million rows) as 180 million.
pub const MAX_SERIES_ROWS: u64 = 50_000_000;

/// Longest run a scenario may ask for: 10^6 s, 11.6 days, 450 times the theses' longest run
/// (2200 s). A `duration` of `1e12` (a typo, or seconds taken for nanoseconds) was refused only
/// where it overflowed the 64-bit nanosecond clock (584 years), and one below that with a
/// coarse `sample_interval` (`1e9` and `1e5`) was accepted and ran for ever. Well below the
/// clock's range, so that every timer set near the end of a run (an RTO backed off to ns-2's
/// `maxrto_` of 10^5 s) still fits in it.
pub const MAX_DURATION: Dur = Dur::from_secs(1_000_000);

/// Most frame slots (`frames.parquet` rows) a run's video sources may record, for the reason
/// of [`MAX_SERIES_ROWS`]: a slot is kept per frame from the flow's start, and a 1000-fps source
/// over a long run made a billion of them.
pub const MAX_FRAME_ROWS: u64 = 50_000_000;

/// Check `spec` and build what the simulator runs; `name` is the scenario's name in reports.
pub fn build(spec: &ScenarioSpec, name: String) -> Result<Built, BuildError> {
    if spec.duration.is_zero() {
        return err("duration", "must be positive");
    }
    if spec.duration > MAX_DURATION {
        return err(
            "duration",
            format!("at most {MAX_DURATION} (11.6 days), got {}", spec.duration),
        );
    }
    if spec.measure_from >= spec.duration {
        return err(
            "measure_from",
            format!(
                "must be before the end of the run ({}), got {}",
                spec.duration, spec.measure_from
            ),
        );
    }
    if spec.sample_interval.is_zero() {
        return err("sample_interval", "must be positive");
    }
    if spec.sample_interval > spec.duration {
        return err(
            "sample_interval",
            format!(
                "longer than the run ({}), got {}",
                spec.duration, spec.sample_interval
            ),
        );
    }
    interval_loss_draws(spec)?;
    if spec.topology.kind == TopologyKind::AccessGateway {
        return super::gateway::build(spec, name);
    }
    if spec.web.is_some() {
        return err(
            "web",
            format!(
                "only used by topology kind = \"access-gateway\", not \"{}\"",
                spec.topology.kind.as_str()
            ),
        );
    }
    if spec.flows.is_empty() {
        return err("flows", "a scenario needs at least one [[flows]] entry");
    }
    let end = Time::ZERO + spec.duration;
    // Flow schedules first: the topology needs the flow count.
    let mut per_flow: Vec<(usize, usize)> = Vec::new(); // (group, index in group)
    for (g, f) in spec.flows.iter().enumerate() {
        let at = |k: &str| format!("flows[{g}].{k}");
        // The protocol first: other keys' meaning depends on it.
        protocols::check_name(&f.protocol).map_err(|e| BuildError {
            key: at("protocol"),
            message: e.to_string(),
        })?;
        if f.count == 0 {
            return err(at("count"), "must be at least 1");
        }
        if f.label.as_deref().is_some_and(|l| l.trim().is_empty()) {
            // The label names the group in the outputs and the plots' legends.
            return err(at("label"), "must name the group, got \"\"");
        }
        if f.packet_size == Some(0) {
            return err(at("packet_size"), "must be positive");
        }
        if f.direction == Direction::Reverse && spec.topology.kind != TopologyKind::Dumbbell {
            return err(
                at("direction"),
                format!(
                    "only dumbbell flows take direction = \"reverse\" (topology kind = \"{}\"){}",
                    spec.topology.kind.as_str(),
                    if spec.topology.kind == TopologyKind::Custom {
                        "; in a custom topology write the route from the sender"
                    } else {
                        ""
                    }
                ),
            );
        }
        for (key, s) in [("start", f.start), ("stop", f.stop)] {
            if let Some(s) = s {
                let (lo, hi) = s.bounds();
                if lo > hi {
                    return err(
                        at(key),
                        format!("the range goes backwards: [{}, {}]", since0(lo), since0(hi)),
                    );
                }
                if key == "start" && hi >= end {
                    // A flow starting at or after the end sends nothing and would report zeros
                    // as if measured; say which flow of the group it is.
                    let n = f.count as usize;
                    let why = match s {
                        Spread::One(_) => Some(format!("got {}", since0(hi))),
                        Spread::Random(..) => Some(format!(
                            "and a flow's random start in [{}, {}] may fall after it",
                            since0(lo),
                            since0(hi)
                        )),
                        Spread::Range(..) => (0..n).find(|&i| s.for_flow(i, n) >= end).map(|i| {
                            format!(
                                "and the range [{}, {}] starts flow {i} of the group (id {}) \
                                 at {}",
                                since0(lo),
                                since0(hi),
                                per_flow.len() + i,
                                since0(s.for_flow(i, n))
                            )
                        }),
                    };
                    if let Some(why) = why {
                        return err(
                            at(key),
                            format!(
                                "must be before the end of the run ({}), {why}",
                                spec.duration
                            ),
                        );
                    }
                }
            }
        }
        for (key, given) in [
            ("rate", f.rate.is_some()),
            ("on", f.on.is_some()),
            ("off", f.off.is_some()),
        ] {
            if given && !f.protocol.starts_with("cbr") {
                return err(
                    at(key),
                    format!(
                        "only cbr flows take `{key}`; protocol `{}` takes its settings in params",
                        f.protocol
                    ),
                );
            }
        }
        if per_flow.len() as u64 + u64::from(f.count) > MAX_FLOWS {
            return err(
                at("count"),
                format!("the scenario would have more than {MAX_FLOWS} flows"),
            );
        }
        for i in 0..f.count as usize {
            per_flow.push((g, i));
        }
    }
    let n = per_flow.len();
    let (topology, routes, link_nodes) = topology(spec, &per_flow)?;
    let intervals = spec.duration.0 / spec.sample_interval.0;
    let recorded_links = topology
        .links
        .iter()
        .filter(|l| !is_flow_access_link(&l.name))
        .count();
    let rows = intervals.saturating_mul((n + recorded_links) as u64);
    if rows > MAX_SERIES_ROWS {
        return err(
            "sample_interval",
            format!(
                "{} over {} with {n} flows and {recorded_links} reported links would record \
                 {rows} time-series rows (at most {MAX_SERIES_ROWS}); sample less often",
                spec.sample_interval, spec.duration,
            ),
        );
    }

    let mut flows = Vec::with_capacity(n);
    let mut flow_info = Vec::with_capacity(n);
    let mut videos = Vec::new();
    let mut frame_rows = 0u64;
    for (id, &(g, i)) in per_flow.iter().enumerate() {
        let f = &spec.flows[g];
        let count = f.count as usize;
        let start = f.start.map_or(Time::ZERO, |s| {
            s.for_flow_seeded(i, count, spec.seed, &format!("flow/{id}/start"))
        });
        let stop = f
            .stop
            .map(|s| s.for_flow_seeded(i, count, spec.seed, &format!("flow/{id}/stop")));
        if let Some(stop) = stop {
            if stop <= start {
                return err(
                    format!("flows[{g}].stop"),
                    format!(
                        "flow {i} of the group (id {id}) stops at {}, not after its start {}",
                        since0(stop),
                        since0(start)
                    ),
                );
            }
        }
        let common = FlowCommon {
            id,
            route: routes[id],
            start,
            stop: stop.filter(|&s| s < end),
            packet_size: f.packet_size,
            seed: spec.seed,
            cbr_rate: f.rate,
            on: f.on,
            off: f.off,
            tcp_defaults: spec.tcp_defaults,
        };
        let flow = protocols::build(&f.protocol, &f.params, &common).map_err(|e| BuildError {
            key: format!("flows[{g}].{}", e.key()),
            message: e.message(),
        })?;
        if i == 0 {
            // One flow of the group has the group's sizes.
            fits_a_datagram(g, f, &flow.sender)?;
        }
        if let Some(src) = &f.source {
            if !takes_offers(&f.protocol) {
                return err(
                    format!("flows[{g}].source"),
                    format!(
                        "protocol `{}` has no send buffer to feed (tfrc, tfwc, the TCP \
                         senders and cbr have)",
                        f.protocol
                    ),
                );
            }
            // The send buffer is counted in the sender's packets: TFRC's and TFWC's size.
            let packet_size = match &flow.sender {
                crate::SenderImpl::Tfrc(s) => Some(s.config().packet_size),
                crate::SenderImpl::Tfwc(s) => Some(s.config().packet_size),
                crate::SenderImpl::Cbr(s) => Some(s.config().packet_size),
                _ => None,
            };
            // A pause that starts after the run silences nothing: a mistyped time, refused as
            // a web class' `active` period after the run is (it was taken without a word).
            for (k, &[a, _]) in src.pauses.iter().flatten().enumerate() {
                if a >= end {
                    return err(
                        format!("flows[{g}].source.pauses[{k}]"),
                        format!("starts at {}, after the run ({})", since0(a), spec.duration),
                    );
                }
            }
            let v = video(g, src, packet_size.unwrap_or(1000))?;
            if v.adapt.is_some() && packet_size.is_none() {
                return err(
                    format!("flows[{g}].source.adapt"),
                    format!(
                        "protocol `{}` does not report its send buffer (tfrc and tfwc do)",
                        f.protocol
                    ),
                );
            }
            frame_rows = frame_rows.saturating_add(frame_slots(&v, start, end));
            if frame_rows > MAX_FRAME_ROWS {
                return err(
                    format!("flows[{g}].source.fps"),
                    format!(
                        "the video sources up to flow {i} of this group would record {frame_rows} \
                         frames over the {} run (frames.parquet: at most {MAX_FRAME_ROWS}); \
                         lower `fps` or `duration`",
                        spec.duration
                    ),
                );
            }
            videos.push((id as u32, v));
        }
        flows.push(flow);
        flow_info.push(FlowInfo {
            group: g,
            label: f.label.clone().unwrap_or_else(|| f.protocol.clone()),
            protocol: f.protocol.clone(),
            direction: f.direction,
        });
    }

    byte_limits_admit(spec, &topology, &flows, &flow_info)?;

    let mut events = Vec::with_capacity(spec.events.len());
    for (k, e) in spec.events.iter().enumerate() {
        events.push(event(k, e, &topology, end)?);
    }

    let reported_links: Vec<LinkId> = topology
        .links
        .iter()
        .enumerate()
        .filter(|(_, l)| !is_flow_access_link(&l.name))
        .map(|(i, _)| i as LinkId)
        .collect();
    let cfg = sim_config(spec, reported_links.clone(), &topology)?;
    Ok(Built {
        name,
        cfg,
        topology,
        flows,
        flow_info,
        events,
        reported_links,
        web: None,
        web_info: None,
        videos,
        link_nodes,
    })
}

/// The largest packet a link carries: IP's total length is a 16-bit field (RFC 791), so no
/// datagram exceeds 65 535 B, headers included. A simulated packet's size is its bytes on the
/// wire, which the testbed sends as one IP datagram.
pub const MAX_DATAGRAM: u64 = 65_535;

/// Refuse a flow whose data packets could not be one IP datagram. The simulator itself took any
/// `u32`: `packet_size = 4294967295` on a TCP flow ran, its header added saturating at 2^32 − 1,
/// each segment holding a 10 Mb/s link for an hour, and the summary said 0 b/s with no word of
/// why.
fn fits_a_datagram(
    g: usize,
    f: &FlowGroupSpec,
    sender: &crate::SenderImpl,
) -> Result<(), BuildError> {
    use crate::SenderImpl as S;
    // (payload, header bytes on top of it, the payload's key under `params`)
    let (payload, header, field) = match sender {
        S::Tcp(_) | S::Web(_) => {
            let Some(c) = sender.tcp().map(|t| t.config()) else {
                return Ok(());
            };
            (c.segment_size, c.data_header_size(), "segment_size")
        }
        S::Tfrc(s) => (
            s.config().packet_size,
            s.config().header_size,
            "packet_size",
        ),
        // TFWC's `header_size` is counted inside its `packet_size`; CBR and the rate senders
        // put exactly `packet_size` on the wire.
        S::Tfwc(s) => (s.config().packet_size, 0, "packet_size"),
        S::Cbr(s) => (s.config().packet_size, 0, "packet_size"),
        S::Rate(s) => (s.config().packet_size, 0, "packet_size"),
        S::Custom(_) => return Ok(()),
    };
    let wire = u64::from(payload) + u64::from(header);
    if wire <= MAX_DATAGRAM {
        return Ok(());
    }
    let (payload, header) = (u64::from(payload), u64::from(header));
    let (key, at_most) = if payload <= MAX_DATAGRAM && header > 0 {
        // The payload alone fits: the header is what is out of range.
        ("params.header_size".to_string(), MAX_DATAGRAM - payload)
    } else if f.packet_size.is_some() {
        (
            "packet_size".to_string(),
            MAX_DATAGRAM.saturating_sub(header),
        )
    } else {
        (
            format!("params.{field}"),
            MAX_DATAGRAM.saturating_sub(header),
        )
    };
    let on_wire = if header == 0 {
        format!("{payload} B on the wire,")
    } else {
        format!("{payload} B plus {header} B of headers is {wire} B on the wire,")
    };
    err(
        format!("flows[{g}].{key}"),
        format!(
            "{on_wire} more than the largest IP datagram ({MAX_DATAGRAM} B): at most {at_most} \
             B for `{}`",
            f.protocol
        ),
    )
}

/// Refuse a DropTail queue limited in bytes that no packet of some flow crossing it can enter:
/// an arrival is refused once the bytes waiting plus its own size reach `limit_bytes` (ns-2's
/// `queue_in_bytes_` test), so a limit at or below a packet's wire size refuses it even in an
/// empty queue, and the flow ran to the end with zero throughput and no message. The largest
/// data packet is checked on the flow's forward route and the largest feedback packet on the
/// way back (a limit that let TCP-SACK's plain 40-byte ACKs through but not those with SACK
/// blocks, 64 B, stalled both flows of a dumbbell for good at their first loss); the sizes are
/// the ones the endpoints put on their packets ([`crate::SenderImpl::data_wire_size`]).
fn byte_limits_admit(
    spec: &ScenarioSpec,
    topo: &Topology,
    flows: &[FlowSpec],
    info: &[FlowInfo],
) -> Result<(), BuildError> {
    for (id, (f, fi)) in flows.iter().zip(info).enumerate() {
        let route = &topo.routes[f.route];
        let ways = [
            (&route.forward, f.sender.data_wire_size(), "data packet"),
            (
                &route.reverse,
                f.receiver.feedback_wire_size(),
                "feedback packet",
            ),
        ];
        for (links, size, what) in ways {
            let Some(size) = size else { continue };
            for &l in links {
                let link = &topo.links[l as usize];
                let QueueSpec::DropTail(QueueLimit::Bytes(limit)) = link.queue else {
                    continue;
                };
                if limit <= u64::from(size) {
                    return err(
                        format!("{}.limit_bytes", link_table(spec, &link.name)),
                        format!(
                            "{limit} B cannot admit the largest {what} of flow {id} (flows[{}], \
                             `{}`) on link `{}`, {size} B on the wire: an arrival is refused \
                             once the bytes waiting plus its size reach the limit; give more \
                             than {size} B",
                            fi.group, fi.protocol, link.name
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// The table of the scenario that configures the queue of the topology's link `name`: a
/// reverse direction's queue is `reverse_queue` where the file gives one, else a copy of the
/// forward link's.
fn link_table(spec: &ScenarioSpec, name: &str) -> String {
    let t = &spec.topology;
    match t.kind {
        TopologyKind::Dumbbell if name == "bottleneck-rev" && t.reverse_queue.is_some() => {
            "topology.reverse_queue".into()
        }
        TopologyKind::Dumbbell => "topology.bottleneck".into(),
        TopologyKind::ParkingLot => {
            let hop = name.strip_suffix("-rev").unwrap_or(name);
            format!("topology.hops[{}]", hop.strip_prefix("hop").unwrap_or(hop))
        }
        _ => t
            .links
            .iter()
            .flatten()
            .position(|l| l.name.as_deref() == Some(name))
            .map_or_else(|| "topology".into(), |i| format!("topology.links[{i}]")),
    }
}

/// The protocols whose senders take [`tfcc_core::endpoint::Sender::offer`] (so a `source`
/// can feed them): TFRC, TFWC and the TCP senders.
fn takes_offers(protocol: &str) -> bool {
    matches!(protocol, "tfrc" | "tfwc" | "ttfwc" | "ptcp" | "cbr") || protocol.starts_with("tcp")
}

/// An upper bound on the frame slots a video source starting at `start` records by `end`: one
/// per `1/fps` (pauses only remove slots).
fn frame_slots(v: &crate::video::VideoConfig, start: Time, end: Time) -> u64 {
    let secs = end.saturating_since(start).as_secs_f64();
    (secs * v.fps).ceil() as u64 + 1
}

/// `flows[g].source` as a video source; `packet_size` is the flow's.
fn video(
    g: usize,
    s: &super::spec::SourceSpec,
    packet_size: u32,
) -> Result<crate::video::VideoConfig, BuildError> {
    let d = crate::video::VideoConfig::default();
    let adapt = s
        .adapt
        .as_ref()
        .map(|v| vic_coupling(v, packet_size))
        .transpose()
        .map_err(|m| BuildError {
            key: format!("flows[{g}].source.adapt"),
            message: m,
        })?
        .flatten();
    let c = crate::video::VideoConfig {
        fps: s.fps.unwrap_or(d.fps),
        rate: s.rate.unwrap_or(d.rate),
        gop: s.gop.unwrap_or(d.gop),
        i_frame_ratio: s.i_frame_ratio.unwrap_or(d.i_frame_ratio),
        size_cv: s.size_cv.unwrap_or(d.size_cv),
        pauses: s.pauses.iter().flatten().map(|&[a, b]| (a, b)).collect(),
        adapt,
    };
    c.validate().map_err(|m| BuildError {
        key: format!("flows[{g}].source"),
        message: m,
    })?;
    Ok(c)
}

/// `source.adapt`: `"none"`, `"vic"`, or `{ kind = "vic", q_ref, q_exponent, <any
/// SendBufferConfig field> }`; `None` for no coupling.
fn vic_coupling(
    v: &toml::Value,
    packet_size: u32,
) -> Result<Option<crate::video::VicCoupling>, String> {
    let kind_of = |k: &str| match k {
        "none" => Ok(false),
        "vic" => Ok(true),
        other => Err(format!("unknown adapt `{other}` (none, vic)")),
    };
    let d = crate::video::VicCoupling {
        packet_size,
        ..crate::video::VicCoupling::default()
    };
    let mut t = match v {
        toml::Value::String(k) => {
            return Ok(kind_of(k)?.then_some(d));
        }
        toml::Value::Table(t) => t.clone(),
        _ => return Err("adapt must be a string or a table".into()),
    };
    let kind = match t.remove("kind") {
        Some(toml::Value::String(k)) => k,
        _ => return Err("the adapt table needs `kind` (\"vic\" or \"none\")".into()),
    };
    if !kind_of(&kind)? {
        return Ok(None);
    }
    let q_ref = match t.remove("q_ref") {
        None => d.q_ref,
        Some(toml::Value::Integer(q)) => {
            u8::try_from(q).map_err(|_| format!("q_ref must be in 1..=255, got {q}"))?
        }
        Some(x) => return Err(format!("q_ref must be an integer, got {x}")),
    };
    let q_exponent = match t.remove("q_exponent") {
        None => d.q_exponent,
        Some(toml::Value::Float(x)) => x,
        Some(toml::Value::Integer(x)) => x as f64,
        Some(x) => return Err(format!("q_exponent must be a number, got {x}")),
    };
    let control: tfcc_core::send_buffer_control::SendBufferConfig = toml::Value::Table(t)
        .try_into()
        .map_err(|e| e.to_string())?;
    let c = crate::video::VicCoupling {
        control,
        q_ref,
        q_exponent,
        packet_size,
    };
    c.validate()?;
    Ok(Some(c))
}

/// A point in the run as the time since its start, printed as the file writes it (`10s`).
/// The run's configuration from the scenario's top-level keys, recording series for
/// `series_links` only (every topology kind reports its own choice of links).
pub(super) fn sim_config(
    spec: &ScenarioSpec,
    series_links: Vec<LinkId>,
    topo: &Topology,
) -> Result<SimConfig, BuildError> {
    let trace = match &spec.trace {
        Some(t) => Some(trace_config(t, spec, &series_links, topo)?),
        None => None,
    };
    Ok(SimConfig {
        duration: spec.duration,
        measure_from: spec.measure_from,
        seed: spec.seed,
        sample_interval: spec.sample_interval,
        record_series: true,
        series_links: Some(series_links),
        // A hundred progress reports a run, at most a minute of simulated time apart: the
        // report is also where a run learns it was cancelled (SIGTERM, Ctrl-C), and at a
        // hundredth of a 9e9 s run (9e7 s apart) a SIGTERM went unanswered for hours. No run
        // in `scenarios/` (2500 s at most) reaches the cap, so their event counts stay.
        progress_interval: Dur((spec.duration.0 / 100).clamp(1, MAX_PROGRESS_INTERVAL.0)),
        trace,
        ties: spec.ties,
    })
}

/// `[trace]` resolved against the topology: every name must be a link of it.
fn trace_config(
    t: &super::spec::TraceSpec,
    spec: &ScenarioSpec,
    reported: &[LinkId],
    topo: &Topology,
) -> Result<TraceConfig, BuildError> {
    let links = match &t.links {
        Some(names) => {
            if names.is_empty() {
                return err(
                    "trace.links",
                    "names no link (leave it out to trace the reported links)",
                );
            }
            let mut links: Vec<(LinkId, String)> = Vec::with_capacity(names.len());
            for name in names {
                let Some(id) = topo.link_id(name) else {
                    return err(
                        "trace.links",
                        format!("no link named `{name}` (links: {})", link_names(topo)),
                    );
                };
                if !links.iter().any(|(l, _)| *l == id) {
                    links.push((id, name.clone()));
                }
            }
            links
        }
        None => reported
            .iter()
            .map(|&l| (l, topo.links[l as usize].name.clone()))
            .collect(),
    };
    let end = Time::ZERO + spec.duration;
    let from = t.from.unwrap_or(Time::ZERO);
    let until = t.until.unwrap_or(end);
    if until > end {
        return err(
            "trace.until",
            format!(
                "after the end of the run ({}), got {}",
                since0(end),
                since0(until)
            ),
        );
    }
    if from >= until {
        // Blame the key the file set: `until = "0s"` alone is not a bad `from`.
        let show = |t: Time| match since0(t) {
            d if d == Dur::ZERO => "0s".to_string(),
            d => d.to_string(),
        };
        if t.from.is_none() {
            return err(
                "trace.until",
                format!(
                    "must be after trace.from ({}, its default), got {}",
                    show(from),
                    show(until)
                ),
            );
        }
        return err(
            "trace.from",
            format!(
                "must be before trace.until ({}), got {}",
                show(until),
                show(from)
            ),
        );
    }
    Ok(TraceConfig {
        links,
        from,
        until,
        pcap: t.pcap,
    })
}

/// The topology's links by name, access links summarised, for error messages.
fn link_names(topo: &Topology) -> String {
    let named: Vec<&str> = topo
        .links
        .iter()
        .map(|l| l.name.as_str())
        .filter(|n| !is_flow_access_link(n))
        .collect();
    if named.len() == topo.links.len() {
        return named.join(", ");
    }
    format!(
        "{}, and access-src-N / access-dst-N (-rev) per flow",
        named.join(", ")
    )
}

/// Whether `name` is one of the per-flow access links the dumbbell and the parking lot create
/// (`access-src-3`, `access-dst-3-rev`: topology.rs), which the outputs leave out. Not the
/// access-gateway's `access-down` / `access-up`, nor a custom link the file names `access-...`.
fn is_flow_access_link(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(ACCESS_PREFIX) else {
        return false;
    };
    let Some(rest) = rest
        .strip_prefix("src-")
        .or_else(|| rest.strip_prefix("dst-"))
    else {
        return false;
    };
    let n = rest.strip_suffix("-rev").unwrap_or(rest);
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
}

fn since0(t: Time) -> Dur {
    t.saturating_since(Time::ZERO)
}

/// Names topology.rs gives per-flow access links (`access-src-3`, `access-dst-3-rev`).
const ACCESS_PREFIX: &str = "access-";

/// Keys of `t` that `kind` does not take.
fn refuse_keys(t: &super::spec::TopologySpec, allowed: &[&str]) -> Result<(), BuildError> {
    let given = [
        ("bottleneck", t.bottleneck.is_some()),
        ("access", t.access.is_some()),
        ("hops", t.hops.is_some()),
        ("nodes", t.nodes.is_some()),
        ("links", t.links.is_some()),
        ("reverse_queue", t.reverse_queue.is_some()),
    ];
    for (key, present) in given {
        if present && !allowed.contains(&key) {
            return err(
                format!("topology.{key}"),
                format!(
                    "not used by kind = \"{}\" (it takes: {})",
                    t.kind.as_str(),
                    allowed.join(", ")
                ),
            );
        }
    }
    Ok(())
}

/// The topology, each flow's route index and, for a custom topology, its links' ends as
/// positions in `topology.nodes`.
type Built3 = (Topology, Vec<usize>, Option<Vec<[u32; 2]>>);

fn topology(spec: &ScenarioSpec, per_flow: &[(usize, usize)]) -> Result<Built3, BuildError> {
    let t = &spec.topology;
    let n = per_flow.len();
    let refuse_flow_key = |key: &str, kind: &str| -> Result<(), BuildError> {
        for (g, f) in spec.flows.iter().enumerate() {
            let given = match key {
                "hops" => f.hops.is_some(),
                _ => f.route.is_some(),
            };
            if given {
                return err(
                    format!("flows[{g}].{key}"),
                    format!("not used by topology kind = \"{kind}\""),
                );
            }
        }
        Ok(())
    };
    let sim_err = |e: crate::SimError| BuildError {
        key: "topology".into(),
        message: e.to_string(),
    };
    match t.kind {
        TopologyKind::Dumbbell => {
            refuse_keys(t, &["bottleneck", "access", "reverse_queue"])?;
            refuse_flow_key("hops", "dumbbell")?;
            refuse_flow_key("route", "dumbbell")?;
            let Some(b) = &t.bottleneck else {
                return err(
                    "topology.bottleneck",
                    "missing: a dumbbell needs bottleneck = { rate, delay }",
                );
            };
            let bottleneck = link(b, "topology.bottleneck", "bottleneck", false)?;
            let reverse_queue = match &t.reverse_queue {
                Some(q) => Some(
                    link(
                        &q.on_link(b.rate, b.delay),
                        "topology.reverse_queue",
                        "bottleneck-rev",
                        false,
                    )?
                    .queue,
                ),
                None => None,
            };
            let access = access(t.access.as_ref(), bottleneck.rate, spec.seed)?;
            let reverse: Vec<bool> = per_flow
                .iter()
                .map(|&(g, _)| spec.flows[g].direction == Direction::Reverse)
                .collect();
            let topo = Topology::dumbbell_directed(
                &DumbbellSpec {
                    bottleneck,
                    access,
                    flows: n,
                },
                reverse_queue,
                &reverse,
            )
            .map_err(sim_err)?;
            Ok((topo, (0..n).collect(), None))
        }
        TopologyKind::ParkingLot => {
            refuse_keys(t, &["hops", "access"])?;
            refuse_flow_key("route", "parking-lot")?;
            let Some(hops) = t.hops.as_ref().filter(|h| !h.is_empty()) else {
                return err(
                    "topology.hops",
                    "missing: a parking lot needs hops = [link, link, ...]",
                );
            };
            let hops = hops
                .iter()
                .enumerate()
                .map(|(i, h)| link(h, &format!("topology.hops[{i}]"), &format!("hop{i}"), false))
                .collect::<Result<Vec<_>, _>>()?;
            let fastest = hops.iter().map(|h| h.rate).max().unwrap_or(Rate::ZERO);
            let access = access(t.access.as_ref(), fastest, spec.seed)?;
            let mut spans = Vec::with_capacity(n);
            for &(g, _) in per_flow {
                let span = match spec.flows[g].hops {
                    Some([a, b]) => {
                        if a > b || b >= hops.len() {
                            return err(
                                format!("flows[{g}].hops"),
                                format!(
                                    "[first, last] must satisfy first <= last < {} (hops are numbered from 0), got [{a}, {b}]",
                                    hops.len()
                                ),
                            );
                        }
                        (a, b)
                    }
                    None => (0, hops.len() - 1),
                };
                spans.push(span);
            }
            let topo = Topology::parking_lot_spans(&hops, &access, &spans).map_err(sim_err)?;
            Ok((topo, (0..n).collect(), None))
        }
        TopologyKind::Custom => {
            refuse_keys(t, &["nodes", "links"])?;
            refuse_flow_key("hops", "custom")?;
            custom(spec, per_flow)
        }
        // Built by `super::gateway` before the topology is reached.
        TopologyKind::AccessGateway => err("topology.kind", "access-gateway is built from [web]"),
    }
}

fn access(a: Option<&AccessTable>, fastest: Rate, seed: u64) -> Result<AccessSpec, BuildError> {
    let a = a.cloned().unwrap_or_default();
    let rate = a
        .rate
        .unwrap_or(Rate(fastest.0.saturating_mul(ACCESS_RATE_FACTOR)));
    if rate.bps() == 0 {
        return err("topology.access.rate", RATE_NOT_POSITIVE);
    }
    let delay = match a.delay.unwrap_or(Spread::One(ACCESS_DELAY)) {
        Spread::One(d) => DelaySpread::Fixed(d),
        Spread::Range(lo, hi) => {
            if lo > hi {
                return err(
                    "topology.access.delay",
                    format!("the range goes backwards: [{lo}, {hi}]"),
                );
            }
            DelaySpread::Uniform { lo, hi }
        }
        Spread::Random(lo, hi) => {
            if lo > hi {
                return err(
                    "topology.access.delay",
                    format!("the range goes backwards: [{lo}, {hi}]"),
                );
            }
            DelaySpread::Random { lo, hi, seed }
        }
    };
    let limit = a.limit.unwrap_or(NS2_DEFAULT_LIMIT);
    packet_limit("topology.access.limit", limit)?;
    Ok(AccessSpec {
        rate,
        delay,
        queue: QueueSpec::DropTail(QueueLimit::Packets(limit)),
    })
}

/// One link table to a [`LinkSpec`]; `custom` allows `name`, `from` and `to`.
fn link(l: &LinkTable, path: &str, name: &str, custom: bool) -> Result<LinkSpec, BuildError> {
    let at = |k: &str| format!("{path}.{k}");
    if l.rate.bps() == 0 {
        return err(at("rate"), RATE_NOT_POSITIVE);
    }
    if !custom {
        for (key, given) in [
            ("name", l.name.is_some()),
            ("from", l.from.is_some()),
            ("to", l.to.is_some()),
        ] {
            if given {
                return err(
                    at(key),
                    "only links of a custom topology take a name and ends",
                );
            }
        }
    }
    let red_keys = [
        ("min_th", l.min_th.is_some()),
        ("max_th", l.max_th.is_some()),
        ("max_p", l.max_p.is_some()),
        ("w_q", l.w_q.is_some()),
        ("gentle", l.gentle.is_some()),
        ("wait", l.wait.is_some()),
        ("bytes", l.bytes.is_some()),
        ("queue_in_bytes", l.queue_in_bytes.is_some()),
        ("mean_pktsize", l.mean_pktsize.is_some()),
        ("target_delay", l.target_delay.is_some()),
        ("use_mark_p", l.use_mark_p.is_some()),
    ];
    if l.quantum.is_some() && l.queue != QueueKind::Drr {
        return err(at("quantum"), "a DRR parameter; set queue = \"drr\"");
    }
    let queue = match l.queue {
        QueueKind::Drr => {
            if let Some((key, _)) = red_keys.iter().find(|(_, given)| *given) {
                return err(at(key), "a RED parameter; this link's queue is drr");
            }
            if l.limit_bytes.is_some() {
                return err(at("limit_bytes"), "DRR's shared buffer is `limit` packets");
            }
            let d = DrrConfig::default();
            let cfg = DrrConfig {
                quantum: l.quantum.unwrap_or(d.quantum),
                limit: l.limit.unwrap_or(d.limit),
                ..d
            };
            if cfg.quantum == 0 {
                return err(at("quantum"), "must be positive");
            }
            packet_limit(&at("limit"), cfg.limit)?;
            QueueSpec::Drr(cfg)
        }
        QueueKind::Droptail => {
            if let Some((key, _)) = red_keys.iter().find(|(_, given)| *given) {
                return err(
                    at(key),
                    "a RED parameter; this link's queue is droptail (set queue = \"red\")",
                );
            }
            match (l.limit, l.limit_bytes) {
                (Some(_), Some(_)) => {
                    return err(
                        at("limit_bytes"),
                        "give either limit (packets) or limit_bytes, not both",
                    )
                }
                (_, Some(0)) => return err(at("limit_bytes"), "must be positive"),
                (_, Some(b)) => QueueSpec::DropTail(QueueLimit::Bytes(b)),
                (p, None) => {
                    let p = p.unwrap_or(NS2_DEFAULT_LIMIT);
                    packet_limit(&at("limit"), p)?;
                    QueueSpec::DropTail(QueueLimit::Packets(p))
                }
            }
        }
        QueueKind::Red => {
            if l.limit_bytes.is_some() {
                return err(
                    at("limit_bytes"),
                    "RED's limit is `limit` packets (in bytes: limit × mean_pktsize with queue_in_bytes)",
                );
            }
            let d = RedConfig::default();
            let cfg = RedConfig {
                limit: l.limit.unwrap_or(d.limit),
                min_th: l.min_th.or(d.min_th),
                max_th: l.max_th.or(d.max_th),
                max_p: l.max_p.unwrap_or(d.max_p),
                w_q: l.w_q.or(d.w_q),
                gentle: l.gentle.unwrap_or(d.gentle),
                wait: l.wait.unwrap_or(d.wait),
                bytes: l.bytes.unwrap_or(d.bytes),
                queue_in_bytes: l.queue_in_bytes.unwrap_or(d.queue_in_bytes),
                mean_pktsize: l.mean_pktsize.unwrap_or(d.mean_pktsize),
                target_delay: l.target_delay.unwrap_or(d.target_delay),
                use_mark_p: l.use_mark_p.unwrap_or(d.use_mark_p),
            };
            if cfg.limit == 0 {
                return err(at("limit"), "must be positive");
            }
            QueueSpec::Red(cfg)
        }
    };
    let loss = match &l.loss {
        Some(t) => loss(t, &at("loss"))?,
        None => None,
    };
    let spec = LinkSpec {
        name: name.to_string(),
        rate: l.rate,
        delay: l.delay,
        queue,
        loss,
    };
    // The simulator's own checks (RED thresholds, w_q range), mapped to this link's path.
    crate::topology::validate_link(&spec).map_err(|e| BuildError {
        key: path.to_string(),
        message: match e {
            crate::SimError::InvalidLink { reason, .. } => reason,
            other => other.to_string(),
        },
    })?;
    Ok(spec)
}

/// The smallest DropTail (or DRR) limit in packets that admits a packet.
pub const MIN_PACKET_LIMIT: u32 = 2;

/// Refuse a DropTail or DRR `limit` below [`MIN_PACKET_LIMIT`]. The limit counts the packet on
/// the wire as ns-2's `limit_` does: an arrival joins the queue before the link takes it, and
/// is refused when `waiting + 1 >= limit`, so a limit of 1 refuses every packet even on an
/// idle link. ns-2.35 takes `limit_ 1` and does exactly that (a 10 s, 1.5 Mb/s CBR over a
/// 1 Mb/s DropTail link: 1857 packets arrived, 1857 dropped; limit 2 passed 1238, the link's
/// whole capacity), so the simulator follows ns-2 and the file is told the minimum instead of
/// running a path that delivers nothing.
pub(super) fn packet_limit(key: &str, limit: u32) -> Result<(), BuildError> {
    if limit >= MIN_PACKET_LIMIT {
        return Ok(());
    }
    err(
        key,
        format!(
            "must be at least {MIN_PACKET_LIMIT} packets, got {limit}: the limit counts the \
             packet on the wire, as ns-2's limit_ does, so a queue of limit L holds L − 1 \
             waiting and {limit} admits no packet at all (ns-2.35 takes limit_ 1 and drops \
             every packet); 2 is one packet sent and one waiting"
        ),
    )
}

/// The longest simulated time between two progress reports of a run (a minute).
pub const MAX_PROGRESS_INTERVAL: Dur = Dur::from_secs(60);

/// The most drop instants an `interval` loss model may draw over the run, `duration / mean`.
/// Its process draws every instant, also those that pass with no packet (so the instants keep
/// their distribution), at about 3·10^7 a second: a billion is half a minute of drawing. A
/// `mean` of 1 ns over 3 s (3·10^9 instants) ran for minutes; a mean below a packet's
/// transmission time drops nearly every packet, which `bernoulli` with `p = 1` says directly.
pub const MAX_INTERVAL_LOSS_DRAWS: u64 = 1_000_000_000;

/// Refuse an `interval` loss model (on a link or in an event) whose `mean` is so short against
/// the run that drawing its instants would take longer than [`MAX_INTERVAL_LOSS_DRAWS`].
fn interval_loss_draws(spec: &ScenarioSpec) -> Result<(), BuildError> {
    let t = &spec.topology;
    let links = t
        .bottleneck
        .iter()
        .map(|l| ("topology.bottleneck".to_string(), l.loss.as_ref()))
        .chain(
            t.hops
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, l)| (format!("topology.hops[{i}]"), l.loss.as_ref())),
        )
        .chain(
            t.links
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, l)| (format!("topology.links[{i}]"), l.loss.as_ref())),
        )
        .chain(
            spec.events
                .iter()
                .enumerate()
                .map(|(k, e)| (format!("events[{k}]"), e.loss.as_ref())),
        );
    for (path, table) in links {
        let Some(table) = table else { continue };
        let (LossKind::Interval, Some(mean)) = (table.model, table.mean) else {
            continue;
        };
        if mean.is_zero() {
            continue; // the model's own check says "mean > 0"
        }
        let draws = spec.duration.as_nanos() / mean.as_nanos();
        if draws > MAX_INTERVAL_LOSS_DRAWS {
            return err(
                format!("{path}.loss.mean"),
                format!(
                    "{} over the {} run is {draws} drop instants to draw (at most {MAX_INTERVAL_LOSS_DRAWS}: a mean of at least {}); for a link that loses every packet use {{ model = \"bernoulli\", p = 1 }}",
                    mean,
                    spec.duration,
                    Dur(spec.duration.as_nanos().div_ceil(MAX_INTERVAL_LOSS_DRAWS)),
                ),
            );
        }
    }
    Ok(())
}

/// A loss table; `None` for `model = "none"`.
fn loss(t: &LossTable, path: &str) -> Result<Option<LossSpec>, BuildError> {
    let at = |k: &str| format!("{path}.{k}");
    let takes: &[&str] = match t.model {
        LossKind::None => &[],
        LossKind::Periodic => &["every"],
        LossKind::Bernoulli => &["p"],
        LossKind::Gilbert => &["p_gb", "p_bg", "loss_bad", "loss_good"],
        LossKind::Interval => &["mean", "cv"],
        LossKind::CountInterval => &["mean_packets", "cv"],
    };
    let given = [
        ("every", t.every.is_some()),
        ("p", t.p.is_some()),
        ("p_gb", t.p_gb.is_some()),
        ("p_bg", t.p_bg.is_some()),
        ("loss_bad", t.loss_bad.is_some()),
        ("loss_good", t.loss_good.is_some()),
        ("mean", t.mean.is_some()),
        ("mean_packets", t.mean_packets.is_some()),
        ("cv", t.cv.is_some()),
        ("scope", t.scope.is_some()),
    ];
    for (key, present) in given {
        // Every model but "none" takes a scope.
        let takes_it = takes.contains(&key) || (key == "scope" && t.model != LossKind::None);
        if present && !takes_it {
            return err(
                at(key),
                format!(
                    "not a parameter of model \"{}\" (it takes: {})",
                    t.model.as_str(),
                    if takes.is_empty() {
                        "nothing".to_string()
                    } else {
                        takes.join(", ")
                    }
                ),
            );
        }
    }
    fn need<T: Copy>(v: Option<T>, key: String, model: &str) -> Result<T, BuildError> {
        v.ok_or_else(|| BuildError {
            key,
            message: format!("missing: model \"{model}\" needs it"),
        })
    }
    let m = t.model.as_str();
    let model = match t.model {
        LossKind::None => return Ok(None),
        LossKind::Periodic => LossModel::Periodic {
            every: need(t.every, at("every"), m)?,
        },
        LossKind::Bernoulli => LossModel::Bernoulli {
            p: need(t.p, at("p"), m)?,
        },
        // Defaults make it the classic Gilbert model: every packet in the bad state lost, none
        // in the good state.
        LossKind::Gilbert => LossModel::Gilbert {
            p_gb: need(t.p_gb, at("p_gb"), m)?,
            p_bg: need(t.p_bg, at("p_bg"), m)?,
            loss_bad: t.loss_bad.unwrap_or(1.0),
            loss_good: t.loss_good.unwrap_or(0.0),
        },
        LossKind::Interval => LossModel::Interval {
            mean: need(t.mean, at("mean"), m)?,
            cv: need(t.cv, at("cv"), m)?,
        },
        LossKind::CountInterval => LossModel::CountInterval {
            mean: need(t.mean_packets, at("mean_packets"), m)?,
            cv: need(t.cv, at("cv"), m)?,
        },
    };
    model.validate().map_err(|message| BuildError {
        key: path.to_string(),
        message,
    })?;
    Ok(Some(LossSpec {
        model,
        scope: match t.scope {
            Some(ScopeKind::PerFlow) => LossScope::PerFlow,
            _ => LossScope::Aggregate,
        },
    }))
}

fn custom(spec: &ScenarioSpec, per_flow: &[(usize, usize)]) -> Result<Built3, BuildError> {
    let t = &spec.topology;
    let Some(nodes) = &t.nodes else {
        return err(
            "topology.nodes",
            "missing: a custom topology needs nodes = [\"a\", \"b\", ...]",
        );
    };
    let Some(tables) = &t.links else {
        return err(
            "topology.links",
            "missing: a custom topology needs links = [{ from, to, name, rate, delay }, ...]",
        );
    };
    for (i, node) in nodes.iter().enumerate() {
        if node.trim().is_empty() {
            return err(
                format!("topology.nodes[{i}]"),
                "a node needs a name, got \"\"",
            );
        }
        if let Some(j) = nodes[..i].iter().position(|n| n == node) {
            return err(
                format!("topology.nodes[{i}]"),
                format!("`{node}` is listed twice (also topology.nodes[{j}])"),
            );
        }
    }
    let mut links = Vec::with_capacity(tables.len());
    // (from, to) -> link name; the first link between two nodes carries the traffic.
    let mut between: HashMap<(&str, &str), &str> = HashMap::new();
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (i, l) in tables.iter().enumerate() {
        let path = format!("topology.links[{i}]");
        let (Some(name), Some(from), Some(to)) = (&l.name, &l.from, &l.to) else {
            let missing = if l.name.is_none() {
                "name"
            } else if l.from.is_none() {
                "from"
            } else {
                "to"
            };
            return err(
                format!("{path}.{missing}"),
                "missing: a custom link needs name, from and to",
            );
        };
        for (key, node) in [("from", from), ("to", to)] {
            if !nodes.contains(node) {
                return err(
                    format!("{path}.{key}"),
                    format!("no node `{node}` in topology.nodes"),
                );
            }
        }
        if let Some(j) = names.insert(name, i) {
            return err(
                format!("{path}.name"),
                format!("`{name}` is already the name of topology.links[{j}]"),
            );
        }
        // Outputs and events name links; an empty name was taken, and a name of the per-flow
        // access links' form (`access-src-0`) left the link out of summary.json and
        // queues.parquet without a word, as those links are.
        if name.trim().is_empty() {
            return err(format!("{path}.name"), "a link needs a name, got \"\"");
        }
        if is_flow_access_link(name) {
            return err(
                format!("{path}.name"),
                format!(
                    "`{name}` has the form of a dumbbell's per-flow access link \
                     (access-src-N, access-dst-N, -rev), which the outputs leave out; \
                     name it otherwise"
                ),
            );
        }
        if from == to {
            // Only a route that loops could cross it.
            return err(
                format!("{path}.to"),
                format!("the link `{name}` goes from `{from}` to itself; a link joins two nodes"),
            );
        }
        between.entry((from, to)).or_insert(name);
        links.push(CustomLink {
            spec: link(l, &path, name, true)?,
            from: from.clone(),
            to: to.clone(),
        });
    }
    let mut routes = Vec::with_capacity(per_flow.len());
    let mut group_route: HashMap<usize, CustomRoute> = HashMap::new();
    for &(g, _) in per_flow {
        if let Some(r) = group_route.get(&g) {
            routes.push(r.clone());
            continue;
        }
        let key = format!("flows[{g}].route");
        let Some(path) = &spec.flows[g].route else {
            return err(
                key,
                "missing: flows in a custom topology name their path, route = [\"a\", \"b\", ...]",
            );
        };
        if path.len() < 2 {
            return err(key, "a route needs at least two nodes, source first");
        }
        // A packet that comes back to a node it has left crosses some links twice, and the
        // outputs count it, and its drops, on each pass: a loop a real router's forwarding
        // would not make (ns-2's static routing neither). Refused rather than run.
        for (i, node) in path.iter().enumerate() {
            if let Some(j) = path[..i].iter().position(|n| n == node) {
                return err(
                    key,
                    format!(
                        "the route visits `{node}` twice (route[{j}] and route[{i}]): a route \
                         may not loop; name each node once, source first"
                    ),
                );
            }
        }
        let hop = |a: &str, b: &str, what: &str| -> Result<String, BuildError> {
            between
                .get(&(a, b))
                .map(|s| s.to_string())
                .ok_or_else(|| BuildError {
                    key: key.clone(),
                    message: format!(
                        "no link from `{a}` to `{b}` for the {what} (add it to topology.links)"
                    ),
                })
        };
        let mut forward = Vec::with_capacity(path.len() - 1);
        let mut reverse = Vec::with_capacity(path.len() - 1);
        for w in path.windows(2) {
            forward.push(hop(&w[0], &w[1], "data")?);
        }
        for w in path.windows(2).rev() {
            reverse.push(hop(&w[1], &w[0], "acknowledgements")?);
        }
        let r = CustomRoute { forward, reverse };
        group_route.insert(g, r.clone());
        routes.push(r);
    }
    // Every end was checked to be in `nodes` above.
    let position = |n: &str| nodes.iter().position(|m| m == n).unwrap_or(0) as u32;
    let ends = links
        .iter()
        .map(|l| [position(&l.from), position(&l.to)])
        .collect();
    let topo = Topology::custom(links, routes).map_err(|e| BuildError {
        key: "topology".into(),
        message: e.to_string(),
    })?;
    let n = per_flow.len();
    Ok((topo, (0..n).collect(), Some(ends)))
}

pub(super) fn event(
    k: usize,
    e: &EventSpec,
    topo: &Topology,
    end: Time,
) -> Result<ScheduledEvent, BuildError> {
    let at = |key: &str| format!("events[{k}].{key}");
    if e.at > end {
        return err(
            at("at"),
            format!(
                "after the end of the run ({}), got {}",
                since0(end),
                since0(e.at)
            ),
        );
    }
    let Some(link) = topo.link_id(&e.link) else {
        return err(
            at("link"),
            format!("no link named `{}` (links: {})", e.link, link_names(topo)),
        );
    };
    let given = [
        e.rate.is_some(),
        e.loss.is_some(),
        e.up.is_some(),
        e.stall.is_some(),
    ];
    let action = match given.iter().filter(|g| **g).count() {
        0 => {
            return err(
                format!("events[{k}]"),
                "says nothing to change: give rate, loss, up or stall",
            )
        }
        1 => {
            if let Some(r) = e.rate {
                if r.bps() == 0 {
                    return err(
                        at("rate"),
                        "must be positive: at least 1 bit/s (use up = false for a dropout, stall = true for a path that holds packets)",
                    );
                }
                LinkAction::SetRate(r)
            } else if let Some(l) = &e.loss {
                LinkAction::SetLoss(loss(l, &at("loss"))?)
            } else if let Some(up) = e.up {
                LinkAction::SetUp(up)
            } else {
                LinkAction::SetStalled(e.stall.unwrap_or(false))
            }
        }
        _ => {
            return err(
                format!("events[{k}]"),
                "give one change per event: rate, loss, up or stall",
            )
        }
    };
    Ok(ScheduledEvent {
        at: e.at,
        link,
        action,
    })
}
