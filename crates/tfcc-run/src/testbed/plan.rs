//! What a scenario maps to on the testbed, and what is refused. Every reason to refuse is
//! found here, before a namespace exists and without root, so that `tfcc check --backend
//! testbed` refuses what `tfcc run --backend testbed` would; and what runs otherwise than the
//! file says without being refused (the kernel's TCP keeping its own settings) becomes a note.

use std::path::Path;
use std::time::Duration;

use tfcc_core::Dur;
use tfcc_net::relay::FlowPath;
use tfcc_net::testbed::{flow_port, FlowKind, FlowSpec};
use tfcc_net::Protocol;
use tfcc_sim::scenario;
use tfcc_sim::scenario::spec::Direction;
use tfcc_sim::LinkAction;
use tfcc_sim::{QueueLimit, QueueSpec, ReceiverImpl, SenderImpl};

use super::capture::{self, CapturePlan};
use super::wire_size::{
    cbr_on_udp, kernel_header_bytes, kernel_mss, rate_on_udp, tfrc_on_udp, tfwc_on_udp,
};
use crate::RunError;

pub(super) fn refuse(path: &Path, msg: String) -> RunError {
    RunError::Scenario(format!("{}: --backend testbed: {msg}", path.display()))
}

/// What the testbed runs, checked: every reason to refuse a scenario is found here, before a
/// namespace exists and without root, so `tfcc check --backend testbed` finds what `tfcc run
/// --backend testbed` would refuse.
pub(super) struct Plan {
    pub(super) built: scenario::Built,
    /// The bottleneck's rate at the start.
    pub(super) rate: tfcc_core::Rate,
    pub(super) limit: u32,
    pub(super) reverse_limit: u32,
    pub(super) loss: Option<tfcc_sim::loss_model::LossSpec>,
    pub(super) flows: Vec<FlowSpec>,
    pub(super) paths: Vec<FlowPath>,
    /// TFWC's and WARC's flows' (index, bytes per packet in the simulator, bytes the receiver
    /// counts).
    pub(super) counted: Vec<(usize, u32, u32)>,
    pub(super) duration: Duration,
    pub(super) measure_from: Duration,
    /// The bottleneck's scheduled changes, in time order.
    pub(super) events: Vec<(Duration, LinkAction)>,
    /// What the testbed runs otherwise than the file says, without refusing it (stderr's
    /// "note:" lines, `kernel_tcp_note`).
    pub(super) notes: Vec<String>,
    /// `[trace] pcap = true`: which interfaces to capture, and when.
    pub(super) capture: Option<CapturePlan>,
}

pub(super) fn plan(path: &Path, overrides: &[String], seed: Option<u64>) -> Result<Plan, RunError> {
    let mut notes = Vec::new();
    let built = load(path, overrides, seed)?;
    if built.cfg.ties != tfcc_sim::engine::Ties::Fifo {
        // Real time has no exact ties to order; the file still runs on both backends.
        notes.push(
            "ties applies in the simulator only: on the testbed arrivals and transmission \
             ends are not on one clock"
                .into(),
        );
    }
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
    // The simulator's dumbbell always has the reverse direction, at the bottleneck's rate
    // with `topology.reverse_queue` or a copy of the forward queue.
    let reverse_limit = match built
        .topology
        .links
        .iter()
        .find(|l| l.name == "bottleneck-rev")
        .map(|l| &l.queue)
    {
        None => limit,
        Some(QueueSpec::DropTail(QueueLimit::Packets(n))) => *n,
        Some(_) => {
            return Err(refuse(
                path,
                "only DropTail queues in packets map onto pfifo (topology.reverse_queue)".into(),
            ))
        }
    };
    if let Some(l) = built
        .topology
        .links
        .iter()
        .find(|l| l.loss.is_some() && l.name != "bottleneck")
    {
        return Err(refuse(
            path,
            format!(
                "artificial loss is emulated on the bottleneck's data direction only, not on {}",
                l.name
            ),
        ));
    }
    let capture = capture::plan(path, &built, &mut notes)?;
    let loss = link.loss.clone();
    if let Some((flow, _)) = built.videos.iter().find(|(f, _)| {
        !matches!(
            built.flows[*f as usize].sender,
            SenderImpl::Tfrc(_) | SenderImpl::Tfwc(_) | SenderImpl::Cbr(_)
        )
    }) {
        // Only TFRC's, TFWC's and CBR's senders are fed frame by frame on real sockets;
        // running another flow bulk would silently measure something else than the file
        // describes.
        return Err(refuse(
            path,
            format!(
                "a video `source` runs on TFRC, TFWC and CBR flows only, not on {} (flow {flow})",
                built.flows[*flow as usize].protocol
            ),
        ));
    }
    let mut flows = Vec::new();
    let mut paths = Vec::new();
    // Per flow: bytes the simulator counts per packet and bytes the testbed's receiver counts,
    // for the bulk flows whose datagrams are shorter than the simulator's packets
    // (`wire_size::to_simulator_bytes`).
    let mut counted = Vec::new();
    for (i, f) in built.flows.iter().enumerate() {
        // The route's delays, as the simulator sums them (and the summary's `base_rtt_s`).
        let [forward, reverse] = built
            .topology
            .route_delays_ns(f.route)
            .map(|ns| Dur(u64::try_from(ns).unwrap_or(u64::MAX)));
        paths.push(FlowPath {
            port: flow_port(i),
            forward,
            reverse,
            // Set below, once the flow's kind is known.
            proto: None,
        });
        let kind = match (&f.sender, f.protocol.as_str()) {
            // A video source (issue 5) feeds the flow's sender frame by frame, the same frames
            // as in the simulator (its seed and stream name).
            // A video-fed flow, TFRC's, TFWC's or CBR's, runs the simulator's own configuration,
            // each packet sent 28 B shorter and counted 28 B longer at the receiver
            // (`kernel_header_bytes`): the simulator's bytes of the frames per packet, its packets on
            // the bottleneck, and its bytes delivered, so nothing is rescaled.
            (SenderImpl::Tfrc(s), _) => match built.videos.iter().find(|v| v.0 as usize == i) {
                Some((flow, v)) => FlowKind::TfrcVideo {
                    cfg: s.config().clone(),
                    kernel_headers: kernel_header_bytes(
                        s.config().wire_size(),
                        tfcc_core::tfrc::wire::DATA_LEN,
                        "video-fed TFRC",
                    )
                    .map_err(|e| refuse(path, format!("flow {i}: {e}")))?,
                    video: v.clone(),
                    seed: built.cfg.seed,
                    flow: *flow,
                },
                None => FlowKind::Tfrc {
                    cfg: s.config().clone(),
                    kernel_headers: tfrc_on_udp(s.config())
                        .map_err(|e| refuse(path, format!("flow {i}: {e}")))?,
                },
            },
            (SenderImpl::Tfwc(s), _) => match built.videos.iter().find(|v| v.0 as usize == i) {
                Some((flow, v)) => FlowKind::TfwcVideo {
                    cfg: s.config().clone(),
                    kernel_headers: kernel_header_bytes(
                        s.config().packet_size,
                        tfcc_core::tfwc::wire::DATA_LEN,
                        "video-fed TFWC",
                    )
                    .map_err(|e| refuse(path, format!("flow {i}: {e}")))?,
                    video: v.clone(),
                    seed: built.cfg.seed,
                    flow: *flow,
                },
                None => {
                    let (cfg, sim, here) = tfwc_on_udp(s.config())
                        .map_err(|e| refuse(path, format!("flow {i}: {e}")))?;
                    counted.push((i, sim, here));
                    FlowKind::Tfwc(cfg)
                }
            },
            // WARC, TEAR and TFRCP: one sender, the receiver's estimator as the scenario built
            // it (its configuration, no packet seen yet).
            (SenderImpl::Rate(s), p) => {
                let ReceiverImpl::Rate(r) = &f.receiver else {
                    return Err(refuse(
                        path,
                        format!("flow {i}: a {p} flow without its rate receiver"),
                    ));
                };
                let estimator = r.estimator().clone();
                let (sender, sim, here) = rate_on_udp(s.config(), estimator.name())
                    .map_err(|e| refuse(path, format!("flow {i}: {e}")))?;
                counted.push((i, sim, here));
                FlowKind::Rate { sender, estimator }
            }
            // ns-2's send-time randomisation has no kernel counterpart (a real host brings its
            // own jitter): refused rather than run without it.
            (SenderImpl::Tcp(s), _) if !s.config().overhead.is_zero() => {
                return Err(refuse(
                    path,
                    format!(
                        "flow {i}: params.overhead (ns-2's randomised send delay) runs in the \
                         simulator only; the kernel's TCP has no such setting"
                    ),
                ));
            }
            (SenderImpl::Tcp(s), p @ ("tcp-cubic" | "tcp-reno" | "tcp-newreno" | "tcp-sack")) => {
                let cc = if p == "tcp-cubic" {
                    kernel_cubic(s.config()).map_err(|e| refuse(path, format!("flow {i}: {e}")))?;
                    "cubic"
                } else {
                    "reno"
                };
                kernel_tcp_note(f, i, built.cfg.seed, &mut notes);
                let (mss, sim, here) =
                    kernel_mss(s.config()).map_err(|e| refuse(path, format!("flow {i}: {e}")))?;
                counted.push((i, sim, here));
                FlowKind::Tcp {
                    cc: cc.into(),
                    mss: Some(mss),
                }
            }
            // A video source on a CBR flow is 002's Vic without congestion control (R1, R4,
            // R7): the simulator's sender, fed the same frames, paces and takes the frames'
            // bytes in the simulator's packets, as TFRC's and TFWC's above.
            (SenderImpl::Cbr(s), _) => {
                match built.videos.iter().find(|v| v.0 as usize == i) {
                    // The simulator refuses it when it builds the run (`add_video`), which a
                    // testbed run never does.
                    Some(_) if s.config().on_off.is_some() => {
                        return Err(refuse(
                            path,
                            format!("flow {i}: an on/off cbr flow cannot take a video source"),
                        ))
                    }
                    Some((flow, v)) => FlowKind::CbrVideo {
                        cfg: s.config().clone(),
                        kernel_headers: kernel_header_bytes(
                            s.config().packet_size,
                            tfcc_net::wire::RAW_LEN,
                            "video-fed CBR",
                        )
                        .map_err(|e| refuse(path, format!("flow {i}: {e}")))?,
                        video: v.clone(),
                        seed: built.cfg.seed,
                        flow: *flow,
                    },
                    None => {
                        let (cfg, sim, here) = cbr_on_udp(s.config())
                            .map_err(|e| refuse(path, format!("flow {i}: {e}")))?;
                        counted.push((i, sim, here));
                        FlowKind::Cbr(cfg)
                    }
                }
            }
            // tfcc's own window schemes change how TCP grows and cuts its window: on a real
            // network that is the kernel's TCP with another congestion control (eBPF
            // struct_ops, notes/linux-emulation.md), not a UDP flow.
            (SenderImpl::Tcp(_), p @ ("gaimd" | "iiad" | "sqrt" | "simd" | "aiadh")) => {
                return Err(refuse(
                    path,
                    format!(
                        "protocol {p} is not supported yet: a TCP-like window scheme needs the \
                         kernel's TCP with its own congestion control (eBPF), which the testbed \
                         does not load"
                    ),
                ))
            }
            (_, p) => return Err(refuse(path, format!("protocol {p} is not supported yet"))),
        };
        paths[i].proto = match &kind {
            FlowKind::Tfrc { .. } | FlowKind::TfrcVideo { .. } => Some(Protocol::Tfrc),
            FlowKind::Tfwc(_) | FlowKind::TfwcVideo { .. } => Some(Protocol::Tfwc),
            FlowKind::Rate { estimator, .. } => Some(Protocol::Rate(estimator.scheme())),
            FlowKind::Cbr(_) | FlowKind::CbrVideo { .. } => Some(Protocol::Raw),
            FlowKind::Tcp { .. } => None,
        };
        flows.push(FlowSpec {
            kind,
            start: Duration::from_nanos(f.start.0),
            reverse: built.flow_info[i].direction == Direction::Reverse,
            stop: f.stop.map(|t| Duration::from_nanos(t.0)),
        });
    }
    let duration = Duration::from_nanos(built.cfg.duration.0);
    let measure_from = Duration::from_nanos(built.cfg.measure_from.0).min(duration);
    // Scheduled changes: only the bottleneck's (tbf and the relay) can be applied; checked
    // before the namespaces exist.
    let bottleneck_id = built.topology.link_id("bottleneck");
    let mut events = Vec::new();
    for e in &built.events {
        if Some(e.link) != bottleneck_id {
            return Err(refuse(
                path,
                format!(
                    "scheduled events apply to the bottleneck only, not to {}",
                    built.topology.links[e.link as usize].name
                ),
            ));
        }
        if matches!(e.action, LinkAction::SetStalled(_)) {
            return Err(refuse(
                path,
                "a stall (a link that holds arrivals while it does not transmit) has no tc \
                 equivalent here; use up = false for a dropout"
                    .to_string(),
            ));
        }
        events.push((Duration::from_nanos(e.at.0), e.action.clone()));
    }
    events.sort_by_key(|e| e.0);
    Ok(Plan {
        rate: link.rate,
        limit,
        reverse_limit,
        loss,
        flows,
        paths,
        counted,
        duration,
        measure_from,
        events,
        built,
        notes,
        capture,
    })
}

/// Loads the scenario as the simulator does (`tcp-cubic` flows are the simulator's CUBIC there
/// and the kernel's here).
pub(super) fn load(
    path: &Path,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<scenario::Built, RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Scenario(format!("{}: {e}", path.display())))?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    scenario::load_str(&text, &path.display().to_string(), &stem, overrides, seed)
        .map_err(|e| RunError::Scenario(e.to_string()))
}

/// A kernel TCP flow runs Linux's stack with its packet size (`kernel_mss`) but with the
/// kernel's settings otherwise, whatever the flow's `params` or the scenario's `tcp_defaults`
/// say: they went unmentioned (a `tcp-sack` flow with `max_window = 2` and
/// 200-byte packets ran at 9.5 Mb/s through a 10 Mb/s bottleneck). Not refused, since the same
/// file runs on both backends with the kernel standing in for the simulator's TCP (004's
/// scenarios model FreeBSD's delayed ACKs and 500 ms timer ticks in `params`), but said on
/// stderr, as the summary of what differs from the file.
fn kernel_tcp_note(f: &tfcc_sim::FlowSpec, i: usize, seed: u64, notes: &mut Vec<String>) {
    if let Err(e) = kernel_tcp(f, i, seed) {
        notes.push(e);
    }
}

/// `Err` naming flow `i` if its TCP configuration differs from its protocol's defaults.
fn kernel_tcp(f: &tfcc_sim::FlowSpec, i: usize, seed: u64) -> Result<(), String> {
    let SenderImpl::Tcp(s) = &f.sender else {
        return Ok(());
    };
    let common = scenario::FlowCommon {
        id: i,
        route: f.route,
        start: f.start,
        stop: f.stop,
        packet_size: None,
        seed,
        cbr_rate: None,
        on: None,
        off: None,
        tcp_defaults: scenario::protocols::TcpDefaults::default(),
    };
    let plain = scenario::protocols::build(&f.protocol, &toml::Table::new(), &common)
        .map_err(|e| format!("flow {i}: {}", e.message()))?;
    // The packet size maps to the kernel's MSS; the headers with it.
    let sized = |d: &tfcc_core::tcp::TcpConfig| tfcc_core::tcp::TcpConfig {
        segment_size: s.config().segment_size,
        header_size: s.config().header_size,
        ..d.clone()
    };
    match &plain.sender {
        SenderImpl::Tcp(d) if sized(d.config()) == *s.config() => Ok(()),
        _ => Err(format!(
            "flow {i} ({}): its params and tcp_defaults apply in the simulator only; the \
             kernel's TCP takes the packet size (as its MSS) and keeps its own settings",
            f.protocol
        )),
    }
}

/// The kernel's CUBIC has RFC 9438's constants and no knobs for them (Linux `tcp_cubic.c`:
/// `beta` 717/1024, `bic_scale` 41 for C = 0.4, `fast_convergence` 1, `tcp_friendliness` 1;
/// its Reno-friendly α stays 3(1 − β)/(1 + β), without RFC 9438 §4.3's switch to 1): a
/// `tcp-cubic` flow that sets other values would not run what it says.
fn kernel_cubic(cfg: &tfcc_core::tcp::TcpConfig) -> Result<(), String> {
    match &cfg.congestion {
        tfcc_core::tcp::Congestion::Cubic(c) if *c == tfcc_core::tcp::CubicConfig::default() => {
            Ok(())
        }
        tfcc_core::tcp::Congestion::Cubic(c) => Err(format!(
            "the kernel's CUBIC has RFC 9438's constants; params {c:?} are not supported"
        )),
        _ => Err("a tcp-cubic flow without CUBIC congestion control".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbed::tests::refusal;

    /// A kernel TCP flow's own `packet_size`, `params` or the file's `tcp_defaults` are named
    /// (they apply in the simulator only); a flow with none of them is not.
    #[test]
    fn kernel_tcp_flows_that_configure_the_simulators_tcp_are_named() {
        let text = |extra: &str, top: &str| {
            format!(
                "{top}\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
                 bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n\
                 [[flows]]\nprotocol = \"tfrc\"\n\
                 [[flows]]\nprotocol = \"tcp-sack\"\n{extra}\n\
                 [[flows]]\nprotocol = \"tcp-cubic\"\n"
            )
        };
        let verdicts = |extra: &str, top: &str| {
            let b = scenario::load_str(&text(extra, top), "k.toml", "k", &[], None).unwrap();
            let seed = b.cfg.seed;
            b.flows
                .iter()
                .enumerate()
                .map(|(i, f)| kernel_tcp(f, i, seed).is_ok())
                .collect::<Vec<_>>()
        };
        assert_eq!(verdicts("", ""), [true, true, true]);
        // The packet size is the kernel's MSS (`kernel_mss`), not a simulator-only setting.
        assert_eq!(verdicts("packet_size = 200", ""), [true, true, true]);
        assert_eq!(
            verdicts("params = { max_window = 2 }", ""),
            [true, false, true]
        );
        assert_eq!(
            verdicts("", "tcp_defaults = \"ns-2.1b9\""),
            [true, false, false]
        );
        let b = scenario::load_str(
            &text("params = { max_window = 2 }", ""),
            "k.toml",
            "k",
            &[],
            None,
        )
        .unwrap();
        let e = kernel_tcp(&b.flows[1], 1, b.cfg.seed).unwrap_err();
        assert!(e.starts_with("flow 1 (tcp-sack): its params"), "{e}");
    }

    #[test]
    fn tcp_cubic_flows_load_as_cubic_and_the_kernel_takes_only_rfc_constants() {
        use tfcc_core::tcp::{Congestion, CubicConfig, TcpConfig};
        let dir = std::env::temp_dir().join(format!("tfcc-cubic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.toml");
        std::fs::write(
            &path,
            "duration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = { rate = \"10Mbps\", delay = \"10ms\", limit = 50 }\n\
             [[flows]]\nprotocol = \"tcp-cubic\"\n[[flows]]\nprotocol = \"tcp-reno\"\n",
        )
        .unwrap();
        let built = load(&path, &[], None).unwrap();
        assert_eq!(built.flow_info[0].protocol, "tcp-cubic");
        let SenderImpl::Tcp(s) = &built.flows[0].sender else {
            panic!("a TCP sender");
        };
        assert_eq!(kernel_cubic(s.config()), Ok(()));
        // An override makes the Reno flow CUBIC too, and CUBIC params are refused.
        let built = load(&path, &["flows.1.protocol=tcp-cubic".into()], None).unwrap();
        assert_eq!(built.flow_info[1].protocol, "tcp-cubic");
        let mut cfg = TcpConfig {
            congestion: Congestion::Cubic(CubicConfig {
                beta: 0.8,
                ..CubicConfig::default()
            }),
            ..TcpConfig::default()
        };
        assert!(kernel_cubic(&cfg).unwrap_err().contains("RFC 9438"));
        cfg.congestion = Congestion::Reno;
        assert!(kernel_cubic(&cfg).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A file that orders the simulator's ties runs on the testbed too, with a note that the
    /// setting has nothing to order there; the default says nothing.
    #[test]
    fn ties_other_than_fifo_are_named_as_simulator_only() {
        let path = std::env::temp_dir().join(format!("tfcc-ties-{}.toml", std::process::id()));
        std::fs::write(
            &path,
            "duration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = { rate = \"4Mbps\", delay = \"10ms\", limit = 30 }\n\
             [[flows]]\nprotocol = \"tfrc\"\n",
        )
        .unwrap();
        let notes = |set: &[String]| plan(&path, set, None).map(|p| p.notes);
        let named = |n: &Vec<String>| n.iter().any(|n| n.starts_with("ties applies"));
        assert!(!named(&notes(&[]).unwrap()));
        assert!(!named(&notes(&["ties=\"fifo\"".into()]).unwrap()));
        assert!(named(&notes(&["ties=\"random\"".into()]).unwrap()));
        assert!(named(
            &notes(&["ties=\"departures-first\"".into()]).unwrap()
        ));
        std::fs::remove_file(&path).ok();
    }

    /// A TFRC `packet_size` too small for tfcc's data header is refused before anything is
    /// set up, as TFWC's is, not sent padded.
    #[test]
    fn a_tfrc_packet_smaller_than_its_header_is_refused() {
        let err = refusal(
            "tfrc-tiny",
            "[[flows]]\nprotocol = \"tfrc\"\npacket_size = 20\n",
            "TFRC in padded datagrams",
        );
        assert!(
            err.contains(
                "--backend testbed: flow 0: a TFRC packet of 20 B on the wire cannot carry"
            ),
            "{err}"
        );
    }

    /// Each rate scheme runs with its scenario's settings: the estimator the simulator builds
    /// from `params` (WARC's 200-packet window and history of 80, TEAR's 4 epochs, TFRCP's
    /// 2-s period) and the sender's, with `tcp_defaults` applied to its RTO estimator as in
    /// the simulator.
    #[test]
    fn a_rate_flow_runs_with_its_params() {
        use tfcc_core::warc::{AnyRateEstimator, RateScheme, RateSenderConfig};
        for (scheme, own) in [
            ("warc", "max_window = 200, s = 80"),
            ("tear", "epochs = 4"),
            ("tfrcp", "period = \"2s\""),
        ] {
            let path = std::env::temp_dir()
                .join(format!("tfcc-{scheme}-plan-{}.toml", std::process::id()));
            std::fs::write(
                &path,
                format!(
                    r#"
name = "rate-plan"
duration = "5s"
tcp_defaults = "ns-2.1b9"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "4Mbps", delay = "10ms", queue = "droptail", limit = 30 }}
[[flows]]
protocol = "{scheme}"
packet_size = "500B"
params = {{ {own}, feedback_size = "60B" }}
"#
                ),
            )
            .unwrap();
            let p = plan(&path, &[], None);
            let sim = load(&path, &[], None);
            let _ = std::fs::remove_file(&path);
            let p = p.unwrap();
            let FlowKind::Rate { sender, estimator } = &p.flows[0].kind else {
                panic!("{:?}", p.flows[0].kind);
            };
            assert_eq!(estimator.name(), scheme);
            assert_eq!((sender.packet_size, sender.feedback_size), (472, 32));
            assert_eq!(p.counted, [(0, 500, 472)]);
            let sim = sim.unwrap();
            let (SenderImpl::Rate(s), ReceiverImpl::Rate(r)) =
                (&sim.flows[0].sender, &sim.flows[0].receiver)
            else {
                panic!("not a rate flow");
            };
            // The simulator's estimator, params applied (not the scheme's defaults).
            let shown = format!("{estimator:?}");
            assert_eq!(shown, format!("{:?}", r.estimator()), "{scheme}");
            let default = AnyRateEstimator::default_for(RateScheme::from_name(scheme).unwrap());
            assert_ne!(shown, format!("{default:?}"), "{scheme}");
            // Everything else as the simulator's sender has it (the RTO's ns-2.1b9 defaults too).
            assert_eq!(
                RateSenderConfig {
                    packet_size: 500,
                    feedback_size: 60,
                    ..sender.clone()
                },
                *s.config()
            );
            assert_ne!(s.config().rtt, RateSenderConfig::default().rtt);
        }
    }

    /// A rate packet too small for UDP/IPv4 and tfcc's header is refused before anything is
    /// set up, as TFWC's is, naming its scheme; so is a TCP-like window scheme (GAIMD), which
    /// would need the kernel's TCP with its congestion control.
    #[test]
    fn a_rate_packet_smaller_than_its_headers_and_gaimd_are_refused() {
        for (scheme, name) in [("warc", "WARC"), ("tear", "TEAR"), ("tfrcp", "TFRCP")] {
            let err = refusal(
                &format!("{scheme}-tiny"),
                &format!("[[flows]]\nprotocol = \"{scheme}\"\npacket_size = 60\n"),
                "a rate flow in padded datagrams",
            );
            assert!(
                err.contains(&format!(
                    "--backend testbed: flow 0: a {name} packet of 60 B cannot carry"
                )),
                "{err}"
            );
        }
        let err = refusal("gaimd", "[[flows]]\nprotocol = \"gaimd\"\n", "GAIMD");
        assert!(
            err.contains(
                "protocol gaimd is not supported yet: a TCP-like window scheme needs the \
                 kernel's TCP"
            ),
            "{err}"
        );
    }

    /// A CBR flow's datagram is its wire size less UDP/IPv4's 28 B, and its rate is scaled by
    /// the same ratio, so it sends at the simulator's packet times; its on/off periods and stop
    /// time carry over.
    #[test]
    fn a_cbr_flow_sends_the_simulators_packets_at_its_times() {
        let path = std::env::temp_dir().join(format!("tfcc-cbr-plan-{}.toml", std::process::id()));
        std::fs::write(
            &path,
            "name = \"cbr-plan\"\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = { rate = \"4Mbps\", delay = \"10ms\" }\n\
             [[flows]]\nprotocol = \"cbr-onoff\"\nrate = \"1Mbps\"\non = \"1s\"\noff = \"2s\"\n\
             stop = \"4s\"\n",
        )
        .unwrap();
        let p = plan(&path, &[], None);
        let _ = std::fs::remove_file(&path);
        let p = p.unwrap();
        let FlowKind::Cbr(c) = &p.flows[0].kind else {
            panic!("{:?}", p.flows[0].kind);
        };
        assert_eq!(c.packet_size, 972);
        assert_eq!(c.rate.bps(), 972_000);
        assert_eq!(c.on_off, Some((Dur::from_secs(1), Dur::from_secs(2))));
        // One packet per 8 ms, as the simulator's 1000-byte packets at 1 Mb/s.
        let gap = |size: u32, bps: u64| u64::from(size) * 8 * 1_000_000_000 / bps;
        assert_eq!(gap(c.packet_size, c.rate.bps()), gap(1000, 1_000_000));
        assert_eq!(p.flows[0].stop, Some(Duration::from_secs(4)));
        assert_eq!(p.counted, [(0, 1000, 972)]);
    }

    /// A CBR packet too small for UDP/IPv4 and tfcc's sequence header, and an on/off CBR flow
    /// fed by a video source (the simulator refuses it too), are refused before anything is
    /// set up.
    #[test]
    fn a_tiny_cbr_packet_and_a_video_fed_on_off_cbr_flow_are_refused() {
        let err = refusal(
            "cbr-tiny",
            "[[flows]]\nprotocol = \"cbr\"\nrate = \"1Mbps\"\npacket_size = 40\n",
            "CBR in padded datagrams",
        );
        assert!(
            err.contains(
                "flow 0: a CBR packet of 40 B cannot carry UDP/IPv4's 28 B and tfcc's 20 B"
            ),
            "{err}"
        );
        let err = refusal(
            "cbr-onoff-video",
            "[[flows]]\nprotocol = \"cbr\"\nrate = \"100Mbps\"\non = \"1s\"\noff = \"1s\"\n\
             source = { kind = \"video\", fps = 30, rate = \"1Mbps\" }\n",
            "a video-fed on/off CBR flow",
        );
        assert!(
            err.contains("flow 0: an on/off cbr flow cannot take a video source"),
            "{err}"
        );
    }

    /// A video source on a CBR flow (002's Vic without congestion control) runs: the
    /// simulator's own CBR configuration (its 1000-byte packets at its rate, so the frames'
    /// bytes are taken per packet and paced as there), sent 28 B shorter (972-byte datagrams)
    /// and counted 28 B longer, with the source's configuration, seed and flow number (the
    /// simulator's frames), no rescaling of the receiver's bytes, and raw datagrams for the
    /// relay.
    #[test]
    fn a_video_fed_cbr_flow_runs_with_the_simulators_packets() {
        let path =
            std::env::temp_dir().join(format!("tfcc-cbr-video-plan-{}.toml", std::process::id()));
        std::fs::write(
            &path,
            "seed = 4\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = { rate = \"10Mbps\", delay = \"10ms\", limit = 50 }\n\
             [[flows]]\nprotocol = \"cbr\"\nrate = \"100Mbps\"\npacket_size = \"1000B\"\n\
             source = { kind = \"video\", fps = 30, rate = \"1.5Mbps\", gop = 1, \
             adapt = { kind = \"vic\", frame_rate_control = false, quantizer_control = false } }\n",
        )
        .unwrap();
        let p = plan(&path, &[], None);
        let sim = load(&path, &[], None);
        let _ = std::fs::remove_file(&path);
        let (p, sim) = (p.unwrap(), sim.unwrap());
        let FlowKind::CbrVideo {
            cfg,
            kernel_headers,
            video,
            seed,
            flow,
        } = &p.flows[0].kind
        else {
            panic!("{:?}", p.flows[0].kind);
        };
        let SenderImpl::Cbr(s) = &sim.flows[0].sender else {
            panic!("a CBR sender");
        };
        assert_eq!(cfg, s.config());
        assert_eq!((cfg.packet_size, cfg.rate.bps()), (1000, 100_000_000));
        assert_eq!(*kernel_headers, 28);
        assert_eq!((*seed, *flow), (4, 0));
        assert_eq!(*video, sim.videos[0].1);
        assert!(p.counted.is_empty(), "{:?}", p.counted);
        assert_eq!(p.paths[0].proto, Some(Protocol::Raw));
    }

    /// A video `source` on a flow other than TFRC, TFWC or CBR is refused before anything is set
    /// up, not run as a bulk flow.
    #[test]
    fn a_video_source_on_a_tcp_flow_is_refused() {
        let err = refusal(
            "video-tcp",
            r#"
[[flows]]
protocol = "tcp-sack"
source = { kind = "video" }
"#,
            "a TCP flow with a video source",
        );
        assert!(
            err.contains("runs on TFRC, TFWC and CBR flows only, not on tcp-sack"),
            "{err}"
        );
    }

    /// A video source on TFWC, coupled to the send buffer as Vic's (002 Ch. 6, `adapt`), runs:
    /// the source's configuration as the simulator builds it (the coupling with it), its seed
    /// and flow number (the simulator's frames), the simulator's own TFWC configuration (its
    /// 1000-byte packets all frames, not 944 B of them after tfcc's header as before
    /// 2026-11-28, bedvidpay), sent 28 B shorter and counted 28 B longer, and no rescaling of
    /// the receiver's bytes; no note sends the run to the simulator for frames.parquet (the
    /// testbed writes it). So does TFRC's, on RFC 5348's rules as 002's scenarios run it. A
    /// packet that cannot hold UDP/IPv4 and tfcc's header is refused.
    #[test]
    fn a_coupled_video_source_on_tfwc_runs_and_a_tiny_one_is_refused() {
        let flow_of = |protocol: &str, preset: &str, size: u32| {
            format!(
                "[[flows]]\nprotocol = \"{protocol}\"\nparams = {{ preset = \"{preset}\" }}\n\
                 packet_size = \"{size}B\"\n\
                 source = {{ kind = \"video\", fps = 30, rate = \"1.5Mbps\", gop = 1, \
                 adapt = {{ kind = \"vic\", quantizer_control = false }} }}\n"
            )
        };
        let flow = |size: u32| flow_of("tfwc", "vic", size);
        let path = std::env::temp_dir().join(format!("tfcc-vic-plan-{}.toml", std::process::id()));
        std::fs::write(
            &path,
            format!(
                "seed = 3\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
                 bottleneck = {{ rate = \"4Mbps\", delay = \"10ms\", limit = 30 }}\n{}",
                flow(1000)
            ),
        )
        .unwrap();
        let p = plan(&path, &[], None);
        let sim = load(&path, &[], None);
        let _ = std::fs::remove_file(&path);
        let (p, sim) = (p.unwrap(), sim.unwrap());
        let FlowKind::TfwcVideo {
            cfg,
            kernel_headers,
            video,
            seed,
            flow: f,
        } = &p.flows[0].kind
        else {
            panic!("{:?}", p.flows[0].kind);
        };
        let SenderImpl::Tfwc(s) = &sim.flows[0].sender else {
            panic!("a TFWC sender");
        };
        assert_eq!((*seed, *f), (3, 0));
        assert_eq!(*video, sim.videos[0].1);
        assert!(!video.adapt.as_ref().unwrap().control.quantizer_control);
        assert_eq!(cfg, s.config());
        assert_eq!(
            (cfg.packet_size, cfg.header_size, *kernel_headers),
            (1000, 0, 28)
        );
        assert_eq!(cfg.tail_packet, tfcc_core::tfwc::TailPacket::Short);
        assert!(p.counted.is_empty(), "{:?}", p.counted);
        assert_eq!(p.paths[0].proto, Some(Protocol::Tfwc));
        assert!(
            !p.notes.iter().any(|n| n.contains("frames.parquet")),
            "{:?}",
            p.notes
        );
        let err = refusal("vic-tiny", &flow(55), "a TFWC video in padded datagrams");
        assert!(
            err.contains(
                "flow 0: a video-fed TFWC packet of 55 B on the wire cannot carry UDP/IPv4's \
                 28 B and tfcc's 28 B data header (at least 56 B)"
            ),
            "{err}"
        );
        let path = std::env::temp_dir().join(format!("tfcc-vic-tfrc-{}.toml", std::process::id()));
        std::fs::write(
            &path,
            format!(
                "seed = 3\nduration = \"5s\"\n[topology]\nkind = \"dumbbell\"\n\
                 bottleneck = {{ rate = \"4Mbps\", delay = \"10ms\", limit = 30 }}\n{}",
                flow_of("tfrc", "rfc5348", 1000)
            ),
        )
        .unwrap();
        let p = plan(&path, &[], None);
        let sim = load(&path, &[], None);
        let _ = std::fs::remove_file(&path);
        let (p, sim) = (p.unwrap(), sim.unwrap());
        let FlowKind::TfrcVideo {
            cfg,
            kernel_headers,
            video,
            ..
        } = &p.flows[0].kind
        else {
            panic!("{:?}", p.flows[0].kind);
        };
        let SenderImpl::Tfrc(s) = &sim.flows[0].sender else {
            panic!("a TFRC sender");
        };
        assert_eq!(cfg, s.config());
        assert_eq!(
            (cfg.packet_size, cfg.header_size, *kernel_headers),
            (1000, 0, 28)
        );
        assert_eq!(*video, sim.videos[0].1);
        assert!(p.counted.is_empty(), "{:?}", p.counted);
        assert_eq!(p.paths[0].proto, Some(Protocol::Tfrc));
        let err = refusal(
            "vic-tfrc-tiny",
            &flow_of("tfrc", "rfc5348", 71),
            "a TFRC video in padded datagrams",
        );
        assert!(
            err.contains("flow 0: a video-fed TFRC packet of 71 B on the wire cannot carry"),
            "{err}"
        );
    }

    /// A stall (a link that queues arrivals while it does not transmit, 004 E12) has no tc
    /// equivalent: refused before anything is set up, not run as a dropout.
    #[test]
    fn a_stall_event_is_refused() {
        let err = refusal(
            "stall",
            r#"
[[flows]]
protocol = "tcp-sack"
[[events]]
at = "1s"
link = "bottleneck"
stall = true
"#,
            "a stall as a dropout",
        );
        assert!(err.contains("a stall"), "{err}");
    }

    /// ns-2's `overhead_` (a random delay before each send) is refused on a kernel TCP flow.
    #[test]
    fn a_tcp_overhead_is_refused() {
        let err = refusal(
            "overhead",
            r#"
[[flows]]
protocol = "tcp-sack"
params = { overhead = "1ms" }
"#,
            "a TCP overhead",
        );
        assert!(err.contains("params.overhead"), "{err}");
    }

    /// A reverse queue other than DropTail in packets is refused before anything is set up
    /// (pfifo is all the testbed has), as the forward one is.
    #[test]
    fn a_red_reverse_queue_is_refused() {
        let err = refusal(
            "rev-red",
            r#"
reverse_queue = { queue = "red", limit = 50, bytes = false }
[[flows]]
protocol = "tcp-sack"
[[flows]]
protocol = "tcp-sack"
direction = "reverse"
"#,
            "a RED reverse queue as pfifo",
        );
        assert!(
            err.contains("only DropTail queues in packets map onto pfifo (topology.reverse_queue)"),
            "{err}"
        );
    }
}
