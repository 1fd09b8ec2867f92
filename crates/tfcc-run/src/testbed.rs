//! `tfcc run --backend testbed`: a dumbbell scenario on real namespaces (tfcc_net::testbed).
//!
//! What maps: the `bottleneck` link's rate and DropTail packet limit (tbf + pfifo; the pfifo
//! limit is the scenario's `limit`), TFRC flows with their configuration, `tcp-cubic` and
//! `tcp-reno` as the kernel's algorithms (`tcp-newreno` and `tcp-sack` also run as the
//! kernel's Reno, which has NewReno and SACK recovery built in), flow start times. What is
//! refused, with the reason: RED queues, byte limits, artificial loss, other protocols.
//! Propagation delay needs the TUN relay of issue 11, which does not exist yet: a scenario
//! with delays runs with the veths' ~0.1 ms RTT and a warning says so. The time series is
//! empty (only the summary is measured), and per-flow packet counts, loss and RTT are not
//! collected yet (0 / null).

use std::path::Path;
use std::time::{Duration, Instant};

use tfcc_net::testbed::{qdisc_stats, run_flows, Bottleneck, Dumbbell, FlowKind};
use tfcc_sim::recorder::{fairness_theta, jain_index};
use tfcc_sim::scenario;
use tfcc_sim::{QueueLimit, QueueSpec, SenderImpl};

use crate::summary::{is_tcp, FlowEntry, LinkEntry, Metrics, Summary};
use crate::{Finished, FlowColumns, LinkColumns, RunError};

fn refuse(path: &Path, msg: String) -> RunError {
    RunError::Scenario(format!("{}: --backend testbed: {msg}", path.display()))
}

/// Runs the scenario at `path` on the testbed.
pub fn run(path: &Path, overrides: &[String], seed: Option<u64>) -> Result<Finished, RunError> {
    let wall = Instant::now();
    let built =
        scenario::load(path, overrides, seed).map_err(|e| RunError::Scenario(e.to_string()))?;
    let link = built
        .topology
        .links
        .iter()
        .find(|l| l.name == "bottleneck")
        .ok_or_else(|| refuse(path, "needs a dumbbell with a link named bottleneck".into()))?;
    let limit = match &link.queue {
        QueueSpec::DropTail(QueueLimit::Packets(n)) => *n,
        _ => {
            return Err(refuse(
                path,
                "only DropTail queues in packets map onto pfifo".into(),
            ))
        }
    };
    if built.topology.links.iter().any(|l| l.loss.is_some()) {
        return Err(refuse(
            path,
            "artificial loss needs the TUN relay (not built yet)".into(),
        ));
    }
    if built.topology.links.iter().any(|l| !l.delay.is_zero()) {
        eprintln!(
            "warning: --backend testbed does not emulate propagation delay yet (no TUN relay): \
             the RTT is the veths' ~0.1 ms plus queueing"
        );
    }
    let mut flows = Vec::new();
    for f in &built.flows {
        let kind = match (&f.sender, f.protocol.as_str()) {
            (SenderImpl::Tfrc(s), _) => FlowKind::Tfrc(s.config().clone()),
            (_, "tcp-cubic") => FlowKind::Tcp("cubic".into()),
            (_, "tcp-reno" | "tcp-newreno" | "tcp-sack") => FlowKind::Tcp("reno".into()),
            (_, p) => return Err(refuse(path, format!("protocol {p} is not supported yet"))),
        };
        flows.push((kind, Duration::from_nanos(f.start.0)));
    }
    let duration = Duration::from_nanos(built.cfg.duration.0);
    let measure_from = Duration::from_nanos(built.cfg.measure_from.0).min(duration);
    let bed = Dumbbell::new(Bottleneck {
        rate: link.rate,
        limit,
    })
    .map_err(|e| RunError::Scenario(e.to_string()))?;
    let results = run_flows(&bed, &flows, duration, measure_from)
        .map_err(|e| RunError::Scenario(e.to_string()))?;
    let tc = qdisc_stats(&bed.router_ns(), "rd");
    drop(bed);
    let window = duration - measure_from;
    let entries: Vec<FlowEntry> = results
        .iter()
        .zip(&built.flow_info)
        .enumerate()
        .map(|(i, (r, info))| FlowEntry {
            id: i as u32,
            label: Some(info.label.clone()),
            group: Some(info.group),
            protocol: info.protocol.clone(),
            throughput_bps: r.goodput_bps(window),
            bytes_delivered: r.window_bytes,
            packets_sent: 0,
            packets_lost: 0,
            loss_event_rate: None,
            mean_rtt_s: None,
            cov: None,
            retransmits: 0,
            timeouts: 0,
            ptcp: None,
        })
        .collect();
    let goodputs: Vec<f64> = entries.iter().map(|e| e.throughput_bps).collect();
    let (tcp, other): (Vec<&FlowEntry>, Vec<&FlowEntry>) =
        entries.iter().partition(|e| is_tcp(&e.protocol));
    let tcp: Vec<f64> = tcp.iter().map(|e| e.throughput_bps).collect();
    let other: Vec<f64> = other.iter().map(|e| e.throughput_bps).collect();
    let (tx_bytes, tx_packets, drops) = tc.unwrap_or((0, 0, 0));
    let links = vec![LinkEntry {
        name: "bottleneck".into(),
        // Over the whole run (tc counters are cumulative), IP headers included.
        utilization: Some(
            tx_bytes as f64 * 8.0 / (link.rate.bps().max(1) as f64 * duration.as_secs_f64()),
        ),
        drops,
        queue_drops: drops,
        early_drops: 0,
        artificial_drops: 0,
        down_drops: 0,
        mean_queue_pkts: None,
        arrivals: tx_packets + drops,
        tx_packets,
        tx_bytes,
    }];
    let summary = Summary {
        scenario: built.name.clone(),
        seed: built.cfg.seed,
        sim_seconds: duration.as_secs_f64(),
        measure_from_s: measure_from.as_secs_f64(),
        wall_seconds: wall.elapsed().as_secs_f64(),
        events: 0,
        peak_packets: 0,
        flows: entries,
        links,
        metrics: Metrics {
            fairness_theta: fairness_theta(&tcp, &other),
            jain_index: jain_index(&goodputs),
        },
        web: None,
    };
    Ok(Finished {
        summary,
        flows: FlowColumns::default(),
        links: LinkColumns::default(),
    })
}
