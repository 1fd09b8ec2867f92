//! `kind = "access-gateway"`: from `[topology]`'s access link and the `[web]` table to the
//! simulator's web workload ([`crate::web::AccessGatewaySpec`], 003 Ch. 4).
//!
//! The flows are the web connections the gateway schedules, one TCP-SACK flow per (client,
//! server) and the optional exceptive CBR, so `[[flows]]` is refused here; `[[events]]` may
//! change the named links (`access-down`, `server3-down`, ...) as on any topology.

use super::build::{err, event, BuildError, Built, FlowInfo, WebInfo};
use super::spec::{ConnectionsName, GatewayName, MergePendingName, ScenarioSpec, Spread, WebSpec};
use crate::flow::CbrConfig;
use crate::link::LinkId;
use crate::web::{AccessGatewaySpec, Connections, GatewayKind, MergePending, WebClass};
use tfcc_core::msfrs::MsfrsConfig;
use tfcc_core::{Dur, Time};

/// Links reported in outputs: the access link both ways and the exceptive host's link, not
/// the two links per client and per server (which would make outputs grow with the workload).
const REPORTED: [&str; 3] = ["access-down", "access-up", "exceptive-down"];

/// Build an access-gateway scenario; `spec`'s run-level keys are already checked.
pub(super) fn build(spec: &ScenarioSpec, name: String) -> Result<Built, BuildError> {
    let t = &spec.topology;
    for (key, given) in [
        ("bottleneck", t.bottleneck.is_some()),
        ("hops", t.hops.is_some()),
        ("nodes", t.nodes.is_some()),
        ("links", t.links.is_some()),
        ("reverse_queue", t.reverse_queue.is_some()),
    ] {
        if given {
            return err(
                format!("topology.{key}"),
                "not used by kind = \"access-gateway\" (it takes: access; the workload is [web])",
            );
        }
    }
    if !spec.flows.is_empty() {
        return err(
            "flows[0]",
            "not used by topology kind = \"access-gateway\": its connections come from [web]",
        );
    }
    let Some(web) = &spec.web else {
        return err(
            "web",
            "missing: kind = \"access-gateway\" needs a [web] table with [[web.classes]]",
        );
    };
    let mut g = AccessGatewaySpec::default();
    spec.tcp_defaults.apply(&mut g.tcp);
    if let Some(a) = &t.access {
        if let Some(r) = a.rate {
            if r.bps() == 0 {
                return err("topology.access.rate", super::RATE_NOT_POSITIVE);
            }
            g.access_rate = r;
        }
        match a.delay {
            None => {}
            Some(Spread::One(d)) => g.access_delay = d,
            Some(_) => {
                return err(
                    "topology.access.delay",
                    "the gateway has one access link: give one delay, not a range",
                )
            }
        }
        if let Some(l) = a.limit {
            // DropTail (or DRR) both ways, counted as everywhere else: 1 admitted nothing.
            super::build::packet_limit("topology.access.limit", l)?;
            g.access_queue = l;
        }
    }
    web_keys(web, &mut g, spec.duration)?;
    let latency_exclude_last = web.latency_exclude_last.unwrap_or(Dur::ZERO);
    if latency_exclude_last >= spec.duration {
        return err(
            "web.latency_exclude_last",
            format!(
                "must be shorter than the run ({}), got {latency_exclude_last}",
                spec.duration
            ),
        );
    }
    let weights: Vec<f64> = web
        .classes
        .iter()
        .map(|c| c.weight.unwrap_or(1.0))
        .collect();
    for (i, &w) in weights.iter().enumerate() {
        if !(w.is_finite() && w > 0.0) {
            return err(
                format!("web.classes[{i}].weight"),
                format!("must be a positive number, got {w}"),
            );
        }
    }
    let gateway = web.gateway.unwrap_or(GatewayName::Msfrs);
    // `web.msfrs` is checked even for the plain gateway, which ignores it: one file then
    // compares both with `--set web.gateway=plain` (a `versus` claim of `tfcc reproduce`).
    let mut table = web.msfrs.clone().unwrap_or_default();
    if table.contains_key("weights") {
        return err(
            "web.msfrs.weights",
            "give each class its weight in [[web.classes]] (`weight = 4`)",
        );
    }
    // The capacity of Eq. 4.2 is the access downlink's unless the file says otherwise.
    table
        .entry("capacity")
        .or_insert_with(|| toml::Value::Integer(g.access_rate.bps() as i64));
    let mut cfg: MsfrsConfig = serde_path_to_error::deserialize(toml::Value::Table(table))
        .map_err(|e| {
            let path = e.path().to_string();
            BuildError {
                key: if path == "." {
                    "web.msfrs".into()
                } else {
                    format!("web.msfrs.{path}")
                },
                message: e.into_inner().message().trim_end().to_string(),
            }
        })?;
    cfg.weights = weights.clone();
    cfg.validate().map_err(|e| {
        // "msfrs: `target_utilization` must be ..." -> web.msfrs.target_utilization: "must be ..."
        let text = e.to_string();
        let text = text.strip_prefix("msfrs: ").unwrap_or(&text);
        let field = text
            .strip_prefix('`')
            .and_then(|t| t.split_once("` "))
            .filter(|(f, _)| *f != "weights");
        match field {
            Some((f, rest)) => BuildError {
                key: format!("web.msfrs.{f}"),
                message: rest.to_string(),
            },
            None => BuildError {
                key: "web.msfrs".into(),
                message: text.to_string(),
            },
        }
    })?;
    let update_interval = cfg.update_interval;
    // Checked whatever the gateway, as `web.msfrs` is (one file compares the gateways with
    // `--set web.gateway=...`); 0 was "web: access-gateway: drr needs a positive quantum and
    // positive weights" at the key `web`, and taken without a word by the other gateways.
    if web.drr_quantum == Some(0) {
        return err(
            "web.drr_quantum",
            "must be positive: the bytes a class of weight 1 is credited per DRR round \
             (default 1000 B), got 0",
        );
    }
    g.gateway = match gateway {
        GatewayName::Plain => GatewayKind::Plain,
        GatewayName::Drr => GatewayKind::Drr {
            quantum: web.drr_quantum.unwrap_or(1000),
            weights: weights.clone(),
        },
        GatewayName::Msfrs => GatewayKind::Msfrs(cfg),
    };

    g.connections = match web.connections {
        None | Some(ConnectionsName::PerPair) => Connections::PerPair,
        Some(ConnectionsName::PerServer) => Connections::PerServer,
    };
    sizes(&g, update_interval, gateway, spec.duration)?;
    g.merge_pending = match web.merge_pending {
        None | Some(MergePendingName::Off) => MergePending::Off,
        Some(MergePendingName::AtArrival) => MergePending::AtArrival,
        Some(MergePendingName::AtRelease) => MergePending::AtRelease,
    };
    if g.connections == Connections::PerServer && gateway == GatewayName::Drr {
        return err(
            "web.connections",
            "gateway = \"drr\" queues the uplink per class and needs per-pair connections",
        );
    }
    let built = g.build(spec.seed).map_err(|e| BuildError {
        key: "web".into(),
        message: e.to_string(),
    })?;
    let end = Time::ZERO + spec.duration;
    let mut events = Vec::with_capacity(spec.events.len());
    for (k, e) in spec.events.iter().enumerate() {
        events.push(event(k, e, &built.topology, end)?);
    }
    let flow_info: Vec<FlowInfo> = built
        .flows
        .iter()
        .map(|f| {
            // Per-pair web connections carry `web-class<i>`: group them by class. Per-server
            // connections (`web-server`) carry every class: the group after the exceptive
            // CBR's (which keeps the one after the classes).
            let shared = f.protocol == "web-server";
            let group = f
                .protocol
                .strip_prefix("web-class")
                .and_then(|c| c.parse().ok())
                .unwrap_or(web.classes.len() + usize::from(shared));
            FlowInfo {
                group,
                label: if group < web.classes.len() || shared {
                    f.protocol.clone()
                } else {
                    "exceptive".into()
                },
                protocol: f.protocol.clone(),
                direction: super::spec::Direction::Forward,
            }
        })
        .collect();
    let reported_links: Vec<LinkId> = built
        .topology
        .links
        .iter()
        .enumerate()
        .filter(|(_, l)| REPORTED.contains(&l.name.as_str()))
        .map(|(i, _)| i as LinkId)
        .collect();
    let cfg = super::build::sim_config(spec, reported_links.clone(), &built.topology)?;
    Ok(Built {
        name,
        cfg,
        topology: built.topology,
        flows: built.flows,
        flow_info,
        events,
        reported_links,
        web: Some(built.gateway),
        videos: Vec::new(),
        link_nodes: None,
        web_info: Some(WebInfo {
            gateway: match gateway {
                GatewayName::Msfrs => "msfrs",
                GatewayName::Plain => "plain",
                GatewayName::Drr => "drr",
            },
            weights,
            latency_until: end - latency_exclude_last,
        }),
    })
}

/// The most MSF-RS updates a run may make: the summary lists every one (`web.windows`);
/// `update_interval = "1ns"` over 20 s was 2·10^10 of them and the run died for its memory.
pub const MAX_MSFRS_UPDATES: u64 = 1_000_000;

/// The largest `web.size_mu`: ln(2^32), a median response of 4 GiB. Sizes are whole bytes;
/// `size_mu = 100` (e^100 bytes) overflowed the byte counts at the first response.
const MAX_SIZE_MU: f64 = 22.18;

/// The largest `web.size_sigma`: 4, a 99th percentile e^9.3 times the median (the thesis' S
/// is 1.318). `size_sigma = 100` drew sizes past `u64` bytes and the run panicked.
const MAX_SIZE_SIGMA: f64 = 4.0;

/// What the gateway's build allocates and what the run records grow with the `[web]` values:
/// the connections (one TCP-SACK flow per client and server, the scenario's flow limit), the
/// request threads (`parallel` per client) and MSF-RS updates; and the response sizes, whose
/// lognormal must stay within whole `u64` bytes. Checked before anything is built: 100 000
/// clients in a class exhausted the memory of `tfcc check` itself.
fn sizes(
    g: &AccessGatewaySpec,
    update_interval: Dur,
    gateway: GatewayName,
    duration: Dur,
) -> Result<(), BuildError> {
    let max = super::build::MAX_FLOWS;
    let clients: u64 = g.classes.iter().map(|c| u64::from(c.clients)).sum();
    let connections = match g.connections {
        Connections::PerPair => clients * u64::from(g.servers),
        Connections::PerServer => u64::from(g.servers),
    };
    if connections > max {
        // Name the servers when they were raised past the thesis' 12, else the largest class.
        let largest = (0..g.classes.len())
            .max_by_key(|&i| g.classes[i].clients)
            .unwrap_or(0);
        let key = if g.servers > 12 {
            "web.servers".to_string()
        } else {
            format!("web.classes[{largest}].clients")
        };
        return err(
            key,
            format!(
                "{clients} clients × {} servers is {connections} connections, more than the {max} flows a scenario may have",
                g.servers
            ),
        );
    }
    let threads: u64 = g
        .classes
        .iter()
        .map(|c| u64::from(c.clients) * u64::from(c.parallel.max(1)))
        .sum();
    if threads > max {
        let i = g.classes.iter().position(|c| c.parallel > 0).unwrap_or(0);
        return err(
            format!("web.classes[{i}].parallel"),
            format!("{threads} request threads in all (clients × parallel), more than {max}"),
        );
    }
    if gateway == GatewayName::Msfrs {
        let t = update_interval.as_nanos().max(1);
        let updates = duration.as_nanos() / t;
        if updates > MAX_MSFRS_UPDATES {
            return err(
                "web.msfrs.update_interval",
                format!(
                    "{} over the {duration} run is {updates} updates, each listed in the summary (at most {MAX_MSFRS_UPDATES}: an interval of at least {})",
                    update_interval,
                    Dur(duration.as_nanos().div_ceil(MAX_MSFRS_UPDATES)),
                ),
            );
        }
    }
    if g.size_mu > MAX_SIZE_MU {
        return err(
            "web.size_mu",
            format!(
                "at most {MAX_SIZE_MU} (ln of 4 GiB, the median response), got {}",
                g.size_mu
            ),
        );
    }
    if g.size_sigma > MAX_SIZE_SIGMA {
        return err(
            "web.size_sigma",
            format!(
                "at most {MAX_SIZE_SIGMA} (003's S is 1.318), got {}",
                g.size_sigma
            ),
        );
    }
    Ok(())
}

/// The `[web]` keys other than the gateway's, checked one by one into `g`.
fn web_keys(web: &WebSpec, g: &mut AccessGatewaySpec, duration: Dur) -> Result<(), BuildError> {
    if web.classes.is_empty() {
        return err("web.classes", "needs at least one [[web.classes]] entry");
    }
    let end = Time::ZERO + duration;
    g.classes.clear();
    for (i, c) in web.classes.iter().enumerate() {
        let at = |k: &str| format!("web.classes[{i}].{k}");
        let clients = c.clients.unwrap_or(4);
        if clients == 0 {
            return err(at("clients"), "must be at least 1");
        }
        let think_time = c.think_time.unwrap_or(Dur::from_secs(5));
        if think_time.is_zero() {
            return err(at("think_time"), "must be positive");
        }
        let mut active = Vec::new();
        for (k, &[a, b]) in c.active.iter().flatten().enumerate() {
            if b <= a {
                return err(
                    format!("web.classes[{i}].active[{k}]"),
                    format!("stop {} is not after start {}", since0(b), since0(a)),
                );
            }
            if a >= end {
                return err(
                    format!("web.classes[{i}].active[{k}]"),
                    format!("starts at {}, after the run ({duration})", since0(a)),
                );
            }
            active.push((a, b));
        }
        if c.active.as_ref().is_some_and(|v| v.is_empty()) {
            return err(
                at("active"),
                "an empty list would never send: leave the key out for always",
            );
        }
        g.classes.push(WebClass {
            clients,
            think_time,
            active,
            parallel: c.parallel.unwrap_or(0),
        });
    }
    if let Some(s) = web.servers {
        if s == 0 {
            return err("web.servers", "must be at least 1");
        }
        g.servers = s;
    }
    if let Some(r) = web.client_rate {
        if r.bps() == 0 {
            return err("web.client_rate", super::RATE_NOT_POSITIVE);
        }
        g.client_rate = r;
    }
    if let Some(d) = web.client_delay {
        g.client_delay = d;
    }
    if let Some(r) = web.server_rate {
        if r.bps() == 0 {
            return err("web.server_rate", super::RATE_NOT_POSITIVE);
        }
        g.server_rate = r;
    }
    for (k, key, v) in [
        (0, "web.domestic_delay", web.domestic_delay),
        (1, "web.overseas_delay", web.overseas_delay),
    ] {
        if let Some([lo, hi]) = v {
            if hi < lo {
                return err(key, format!("[low, high] with high {hi} below low {lo}"));
            }
            g.server_delay[k] = (lo, hi);
        }
    }
    if let Some(m) = web.size_mu {
        if !m.is_finite() {
            return err("web.size_mu", "must be a finite number");
        }
        g.size_mu = m;
    }
    if let Some(s) = web.size_sigma {
        if !(s.is_finite() && s >= 0.0) {
            return err(
                "web.size_sigma",
                format!("must be finite and >= 0, got {s}"),
            );
        }
        g.size_sigma = s;
    }
    if let Some(x) = &web.exceptive {
        let on_off = match (x.on, x.off) {
            (Some(on), Some(off)) => Some((on, off)),
            (None, None) => None,
            (Some(_), None) => return err("web.exceptive.off", "missing: `on` needs `off`"),
            (None, Some(_)) => return err("web.exceptive.on", "missing: `off` needs `on`"),
        };
        let cbr = CbrConfig {
            rate: x.rate,
            packet_size: x.packet_size.unwrap_or(1000),
            on_off,
        };
        cbr.validate().map_err(|m| BuildError {
            key: "web.exceptive".into(),
            message: m,
        })?;
        if u64::from(cbr.packet_size) > super::build::MAX_DATAGRAM {
            return err(
                "web.exceptive.packet_size",
                format!(
                    "{} B on the wire, more than the largest IP datagram ({} B): at most {} B",
                    cbr.packet_size,
                    super::build::MAX_DATAGRAM,
                    super::build::MAX_DATAGRAM
                ),
            );
        }
        g.exceptive = Some(cbr);
        g.exceptive_start = x.start.unwrap_or(Time::ZERO);
        if g.exceptive_start >= end {
            return err("web.exceptive.start", "must be inside the run");
        }
    }
    Ok(())
}

fn since0(t: Time) -> Dur {
    t.saturating_since(Time::ZERO)
}
