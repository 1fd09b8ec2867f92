//! `[trace] pcap = true` on the testbed: which of the router's interfaces hold a traced
//! link's packets, and over which part of the run. The kernel's queues show no per-packet
//! events, so only what an interface sends can be captured; the plan refuses the rest.

use std::path::Path;
use std::time::Duration;

use tfcc_core::time::std_secs_f64;
use tfcc_net::testbed::{FORWARD_DEV, REVERSE_DEV};
use tfcc_sim::scenario;

use super::plan::refuse;
use crate::RunError;

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
