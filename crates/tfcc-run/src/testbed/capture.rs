//! `[trace] pcap = true` on the testbed: which of the router's interfaces hold a traced
//! link's packets, and over which part of the run; the captures started before the run and
//! written into the simulator's `trace-<link>.pcap` files after it. The kernel's queues show
//! no per-packet events, so only what an interface sends can be captured; the plan refuses
//! the rest.

use std::path::Path;
use std::time::Duration;

use tfcc_core::time::std_secs_f64;
use tfcc_net::capture::Capture;
use tfcc_net::relay::FlowPath;
use tfcc_net::testbed::{Dumbbell, FORWARD_DEV, REVERSE_DEV};
use tfcc_net::Protocol;
use tfcc_sim::scenario;

use super::plan::refuse;
use crate::pcap::{self, PcapFile};
use crate::{RunError, TraceColumns};

/// The traced links' captures (`[trace] pcap = true`). The simulator's file holds a link's
/// packets as their transmission starts; on the testbed that is where the router hands them to
/// the veth after the bottleneck's tbf and pfifo: the transmit side of `rd` (`bottleneck`,
/// towards the receivers) and of `rs` (`bottleneck-rev`), in the router's namespace. A packet
/// the queue drops never gets there, as in the simulator's file.
pub(super) struct CapturePlan {
    /// Link name and the router's device that transmits it.
    pub(super) links: Vec<(String, &'static str)>,
    pub(super) from: Duration,
    pub(super) until: Duration,
    /// `until` is the run's end: a packet at the end is kept, as the simulator's trace keeps
    /// the events at `t = duration`.
    pub(super) inclusive: bool,
}

/// The capture a scenario's `[trace]` asks for on the testbed, `None` without one; a trace
/// without `pcap = true`, or of a link the router has no interface for, is refused. Adds the
/// note that says where each link is captured.
pub(super) fn plan(
    path: &Path,
    built: &scenario::Built,
    notes: &mut Vec<String>,
) -> Result<Option<CapturePlan>, RunError> {
    Ok(match &built.cfg.trace {
        None => None,
        // The packets cross the kernel's queues, which tfcc does not see one by one: there are
        // no `+`, `d` and `r` events to write, only what an interface sends.
        Some(t) if !t.pcap => {
            return Err(refuse(
                path,
                "a packet trace (`[trace]`, trace.parquet) is recorded by the simulator only; \
                 on the testbed `[trace] pcap = true` captures the traced links' packets into \
                 trace-<link>.pcap"
                    .into(),
            ))
        }
        Some(t) => {
            let mut links = Vec::new();
            for (_, name) in &t.links {
                let dev = match name.as_str() {
                    "bottleneck" => FORWARD_DEV,
                    "bottleneck-rev" => REVERSE_DEV,
                    other => {
                        return Err(refuse(
                            path,
                            format!(
                                "trace.links: {other} has no interface of its own to capture \
                                 (the access links are not emulated); trace bottleneck or \
                                 bottleneck-rev"
                            ),
                        ))
                    }
                };
                links.push((name.clone(), dev));
            }
            let duration = Duration::from_nanos(built.cfg.duration.0);
            let until = Duration::from_nanos(t.until.0).min(duration);
            notes.push(format!(
                "[trace] pcap: {} captured where the router transmits them ({}), from {} s to \
                 {} s of the run; no trace.parquet (the kernel's queues show no per-packet \
                 events)",
                links
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                links
                    .iter()
                    .map(|(n, d)| format!("{n}: {d}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                std_secs_f64(Duration::from_nanos(t.from.0)),
                std_secs_f64(until),
            ));
            Some(CapturePlan {
                links,
                from: Duration::from_nanos(t.from.0),
                until,
                inclusive: until >= duration,
            })
        }
    })
}

/// A started capture: the traced link's name, the router's device, the capture.
pub(super) type Started = (String, &'static str, Capture);

/// Starts the planned captures (none without a plan) on the router's devices. Bound before
/// anything runs: a capture that cannot start stops the run here, with the namespaces removed
/// (the caller dropping `bed`) and nothing written.
pub(super) fn start(
    path: &Path,
    bed: &Dumbbell,
    plan: Option<&CapturePlan>,
    paths: &[FlowPath],
) -> Result<Vec<Started>, RunError> {
    let protos: Vec<(u16, Option<Protocol>)> = paths.iter().map(|p| (p.port, p.proto)).collect();
    let mut captures = Vec::new();
    for (name, dev) in plan.map_or(&[][..], |c| &c.links[..]) {
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
    Ok(captures)
}

/// Stops the captures and makes each link's file of its packets in the trace's window, with
/// `origin_realtime` (the run's start on the captures' clock) at t = 0; says on stderr what
/// each capture saw and missed. Called once the receivers have stopped reading, after the
/// drain: the captures have then seen every packet of their window (it ends at the run's end
/// at the latest).
pub(super) fn write(
    captures: Vec<Started>,
    plan: Option<&CapturePlan>,
    origin_realtime: Option<u64>,
) -> Result<Vec<PcapFile>, RunError> {
    let mut pcaps = Vec::new();
    for (name, dev, c) in captures {
        let st = c.stop().map_err(|e| {
            RunError::Scenario(format!("[trace] pcap: the capture of {name} on {dev}: {e}"))
        })?;
        let (Some(plan), Some(origin)) = (plan, origin_realtime) else {
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
    Ok(pcaps)
}

/// The run's trace: the captured links' files alone (`pcap_only`), with the traced links'
/// names by link id, as the simulator's trace has them; `None` without a capture.
pub(super) fn trace_columns(
    plan: Option<&CapturePlan>,
    built: &scenario::Built,
    pcaps: Vec<PcapFile>,
) -> Option<TraceColumns> {
    plan.map(|c| {
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
    })
}

#[cfg(test)]
mod tests {
    use crate::testbed::check;
    use crate::testbed::tests::refusal;

    /// A packet trace's `trace.parquet` is the simulator's: without `pcap = true` it is refused
    /// before anything is set up, and so is a pcap trace of a link the testbed has no interface
    /// for, with the links it can capture named.
    #[test]
    fn a_trace_without_pcap_and_a_pcap_of_an_access_link_are_refused() {
        let err = refusal(
            "trace",
            "[[flows]]\nprotocol = \"tcp-sack\"\n[trace]\n",
            "without the trace",
        );
        assert!(
            err.contains("`[trace]`") && err.contains("pcap = true"),
            "{err}"
        );
        let err = refusal(
            "trace-access",
            "[[flows]]\nprotocol = \"tcp-sack\"\n[trace]\nlinks = [\"bottleneck\", \"access-src-0\"]\npcap = true\n",
            "without the access link's capture",
        );
        assert!(
            err.contains("trace.links: access-src-0 has no interface")
                && err.contains("bottleneck or bottleneck-rev"),
            "{err}"
        );
    }

    /// `[trace] pcap = true` passes the check, which says where each link is captured and
    /// that no trace.parquet is written; the window is the trace's, the end by default.
    #[test]
    fn a_pcap_trace_is_checked_with_its_interfaces_and_window() {
        let scenario = "name = \"pcap-check\"\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = { rate = \"4Mbps\", delay = \"10ms\", queue = \"droptail\", limit = 30 }\n\
             [[flows]]\nprotocol = \"tfrc\"\n[trace]\nfrom = \"1s\"\npcap = true\n";
        let path =
            std::env::temp_dir().join(format!("tfcc-pcap-check-{}.toml", std::process::id()));
        std::fs::write(&path, scenario).unwrap();
        let notes = check(&path, &[]);
        let _ = std::fs::remove_file(&path);
        let notes = notes.unwrap();
        let note = notes
            .iter()
            .find(|n| n.starts_with("[trace] pcap"))
            .unwrap_or_else(|| panic!("{notes:?}"));
        assert!(
            note.contains("bottleneck: rd, bottleneck-rev: rs")
                && note.contains("from 1 s to 5 s")
                && note.contains("no trace.parquet"),
            "{note}"
        );
    }
}
