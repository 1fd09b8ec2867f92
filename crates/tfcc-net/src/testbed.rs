//! The emulated dumbbell: three network namespaces (sender, router, receiver) joined by veth
//! pairs, the bottleneck rate and queue from `tbf` + `pfifo` on the router's egress towards the
//! receiver (`rd`), its reverse direction the same on the egress towards the sender (`rs`,
//! the simulator's `bottleneck-rev`: the bottleneck's rate, its own queue limit), tfcc flows over [`Session`]s and kernel TCP flows over std sockets, each flow's
//! ends in threads moved into their namespace with `setns(2)`.
//!
//! What this kernel offers is recorded in notes/linux-emulation.md: there is no netem, so
//! propagation delay, random loss and dropouts come from the TUN relay ([`crate::relay`]) on
//! the router's path when a scenario asks for them; without it the RTT is the veths' ~0.1 ms
//! plus queueing. Offloads are off on every veth end so that tbf sees
//! packets, not 64 KB super-segments. `tc qdisc change` on tbf resets its child's limit, so the
//! queue is always built with `add`.
//!
//! Namespaces are named `tfcc-<pid>-{s,r,d}`; [`Dumbbell`] deletes its own on drop (also on
//! panic unwinding), and [`Dumbbell::new`] first deletes any `tfcc-<pid>-*` set whose process
//! is gone (an earlier run that was killed).

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use tfcc_core::endpoint::{Endpoint, Receiver, Sender, Stats};
use tfcc_core::tfrc::{TfrcConfig, TfrcReceiver, TfrcSender};
use tfcc_core::tfwc::{TfwcConfig, TfwcReceiver, TfwcSender};
use tfcc_core::warc::{AnyRateEstimator, RateSender, RateSenderConfig, RoundReceiver};
use tfcc_core::{Packet, Rate, Time};

use tfcc_sim::flow::{CbrSender, CbrSink};
use tfcc_sim::frames::{FrameLog, FrameRecord};
use tfcc_sim::rng::SimRng;
use tfcc_sim::video::{VideoConfig, VideoCounts, VideoSource};
use tfcc_sim::CbrConfig;

use crate::arrivals::ArrivalCounter;
use crate::relay::{Relay, RelayConfig};
use crate::video::VideoFeed;
use crate::{Protocol, Session, SessionConfig};

const PREFIX: &str = "tfcc-";
const SENDER_IP: &str = "10.78.1.1";
const RECEIVER_IP: &str = "10.78.2.1";

/// Why the testbed could not run.
#[derive(Debug, thiserror::Error)]
pub enum TestbedError {
    #[error("the testbed backend needs root (network namespaces and tc): run it as root, or use --backend sim")]
    NotRoot,
    #[error("testbed set-up: `{cmd}` failed: {msg}")]
    Command { cmd: String, msg: String },
    #[error("testbed: {0}")]
    Io(#[from] io::Error),
    /// The caller's `tick` asked to stop (Ctrl-C): see [`run_flows_sampled`].
    #[error("testbed run interrupted")]
    Interrupted,
}

fn run<S: AsRef<str>>(args: &[S]) -> Result<(), TestbedError> {
    let args: Vec<&str> = args.iter().map(|a| a.as_ref()).collect();
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| TestbedError::Command {
            cmd: args.join(" "),
            msg: e.to_string(),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(TestbedError::Command {
            cmd: args.join(" "),
            msg: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// The bottleneck: rate and pfifo queue length in packets, for the forward direction (towards
/// the receivers' side) and the reverse one. The simulator's dumbbell has both directions at
/// the bottleneck's rate, the reverse one with `topology.reverse_queue` or else a copy of the
/// forward queue (tfcc_sim::topology::Topology::dumbbell_directed), which is what the reverse
/// tbf + pfifo here emulate: forward flows' feedback and reverse flows' data queue there.
#[derive(Clone, Copy, Debug)]
pub struct Bottleneck {
    pub rate: Rate,
    pub limit: u32,
    /// The reverse direction's pfifo limit in packets.
    pub reverse_limit: u32,
}

impl Bottleneck {
    /// Both directions with the same rate and queue limit (the simulator's dumbbell without
    /// `reverse_queue`).
    pub fn symmetric(rate: Rate, limit: u32) -> Bottleneck {
        Bottleneck {
            rate,
            limit,
            reverse_limit: limit,
        }
    }
}

/// The router's egress towards the receivers' side: the bottleneck's forward direction.
pub const FORWARD_DEV: &str = "rd";
/// The router's egress towards the senders' side: the bottleneck's reverse direction.
pub const REVERSE_DEV: &str = "rs";

/// A built dumbbell; dropping it deletes its namespaces.
#[derive(Debug)]
pub struct Dumbbell {
    base: String,
    bottleneck: Bottleneck,
}

impl Dumbbell {
    /// Builds the namespaces, links, addresses, routes and the bottleneck.
    pub fn new(b: Bottleneck) -> Result<Dumbbell, TestbedError> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(TestbedError::NotRoot);
        }
        remove_stale();
        let base = format!("{PREFIX}{}", std::process::id());
        let d = Dumbbell {
            base,
            bottleneck: b,
        };
        let (s, r, x) = (d.ns("s"), d.ns("r"), d.ns("d"));
        // No IPv6 on the veths: the kernel's own IPv6 traffic (a router solicitation every few
        // seconds after a link comes up, 56 B) would otherwise cross the bottleneck's tbf among
        // the scenario's packets (seen as one 56-byte packet in a TFWC run's tc counters). The
        // testbed is IPv4 only; `default` is set before the veths exist, so they inherit it.
        let ipv6 = std::path::Path::new("/proc/sys/net/ipv6").exists();
        for ns in [&s, &r, &x] {
            run(&["ip", "netns", "add", ns])?;
            if ipv6 {
                run(&[
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    "sysctl",
                    "-qw",
                    "net.ipv6.conf.all.disable_ipv6=1",
                    "net.ipv6.conf.default.disable_ipv6=1",
                ])?;
            }
            run(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
        }
        // Fixed MAC addresses and permanent neighbour entries: no ARP either. A 28-byte packet,
        // an ARP request's or reply's size, crossed the bottleneck's tbf among the scenario's
        // packets (one in a 30 s TFRCP run's tc counters), and one dropped at a full queue would
        // be a drop of no flow's packet; the simulator has no link layer.
        let (mac_sr, mac_rs, mac_rd, mac_dr) = (
            "02:78:01:00:00:01",
            "02:78:01:00:00:fe",
            "02:78:02:00:00:fe",
            "02:78:02:00:00:01",
        );
        run(&[
            "ip", "-n", &r, "link", "add", "rs", "address", mac_rs, "type", "veth", "peer", "name",
            "sr", "address", mac_sr, "netns", &s,
        ])?;
        run(&[
            "ip", "-n", &r, "link", "add", "rd", "address", mac_rd, "type", "veth", "peer", "name",
            "dr", "address", mac_dr, "netns", &x,
        ])?;
        for (ns, dev, addr, peer, peer_mac) in [
            (&s, "sr", "10.78.1.1/24", "10.78.1.254", mac_rs),
            (&r, "rs", "10.78.1.254/24", "10.78.1.1", mac_sr),
            (&r, "rd", "10.78.2.254/24", "10.78.2.1", mac_dr),
            (&x, "dr", "10.78.2.1/24", "10.78.2.254", mac_rd),
        ] {
            run(&["ip", "-n", ns, "addr", "add", addr, "dev", dev])?;
            run(&["ip", "-n", ns, "link", "set", dev, "up"])?;
            run(&[
                "ip",
                "-n",
                ns,
                "neigh",
                "replace",
                peer,
                "lladdr",
                peer_mac,
                "dev",
                dev,
                "nud",
                "permanent",
            ])?;
            run(&[
                "ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro",
                "off",
            ])?;
        }
        run(&[
            "ip",
            "-n",
            &s,
            "route",
            "add",
            "default",
            "via",
            "10.78.1.254",
        ])?;
        run(&[
            "ip",
            "-n",
            &x,
            "route",
            "add",
            "default",
            "via",
            "10.78.2.254",
        ])?;
        run(&[
            "ip",
            "netns",
            "exec",
            &r,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=1",
        ])?;
        for (dev, limit) in [(FORWARD_DEV, b.limit), (REVERSE_DEV, b.reverse_limit)] {
            run(&tbf_args(&r, dev, "add", b.rate.bps(), burst_for(b.rate)))?;
            run(&pfifo_args(&r, dev, "add", limit))?;
        }
        Ok(d)
    }

    fn ns(&self, side: &str) -> String {
        format!("{}-{side}", self.base)
    }

    /// The sender side's namespace name.
    pub fn sender_ns(&self) -> String {
        self.ns("s")
    }
    /// The receiver side's namespace name.
    pub fn receiver_ns(&self) -> String {
        self.ns("d")
    }
    /// The router's namespace name.
    pub fn router_ns(&self) -> String {
        self.ns("r")
    }

    /// Changes the bottleneck rate now (a scheduled rate change), keeping what is queued.
    /// `tc qdisc change` on tbf resets its child pfifo's limit (notes/linux-emulation.md §2),
    /// so the limit is set again right after. Only the forward direction changes: a scenario's
    /// events name the link `bottleneck`, and the simulator applies them to that link alone,
    /// not to `bottleneck-rev`.
    pub fn set_rate(&self, rate: Rate) -> Result<(), TestbedError> {
        let r = self.router_ns();
        run(&tbf_args(
            &r,
            FORWARD_DEV,
            "change",
            rate.bps(),
            burst_for(rate),
        ))?;
        self.set_limit()
    }

    /// Pauses (`false`) or resumes the bottleneck's transmitter, keeping its queue: the
    /// simulator's link dropout (tfcc_sim::link). Paused, tbf runs at 8 bit/s with a one-packet
    /// bucket; `tc qdisc change` refills the bucket, so one queued packet can still leave at
    /// the start of a dropout. Arrivals during the dropout are refused by the relay
    /// ([`crate::relay::RelayCommand::SetUp`]). The forward direction only, as [`Self::set_rate`].
    pub fn set_up(&self, up: bool, rate: Rate) -> Result<(), TestbedError> {
        if up {
            return self.set_rate(rate);
        }
        run(&tbf_args(&self.router_ns(), FORWARD_DEV, "change", 8, 1600))?;
        self.set_limit()
    }

    fn set_limit(&self) -> Result<(), TestbedError> {
        run(&pfifo_args(
            &self.router_ns(),
            FORWARD_DEV,
            "change",
            self.bottleneck.limit,
        ))
    }

    /// Starts the delay/loss relay ([`crate::relay`]) on the router, routing both veths'
    /// arrivals through it. Stop it before dropping the dumbbell to read its statistics.
    pub fn start_relay(&self, cfg: RelayConfig) -> io::Result<Relay> {
        Relay::start(&self.router_ns(), &[REVERSE_DEV, FORWARD_DEV], cfg)
    }

    /// Counts, per flow and epoch, the data packets the relay marked that came out of the
    /// bottleneck's queues: at the ingress of the receivers' veth (`dr`, forward flows' data)
    /// and of the senders' (`sr`, reverse flows' data). Attach it before the flows start; the
    /// flows are those of ports [`flow_port`]`(0)` onwards.
    pub fn count_arrivals(&self, flows: usize) -> io::Result<ArrivalCounter> {
        ArrivalCounter::attach(
            flow_port(0),
            u32::try_from(flows).map_err(io::Error::other)?,
            &[
                (self.receiver_ns(), "dr".to_string()),
                (self.sender_ns(), "sr".to_string()),
            ],
        )
    }
}

impl Drop for Dumbbell {
    fn drop(&mut self) {
        for side in ["s", "r", "d"] {
            let _ = run(&["ip", "netns", "del", &self.ns(side)]);
        }
    }
}

/// tbf's bucket must hold at least one MTU; at high rates a few ms of data keeps the token
/// refill from starving on timer granularity (15 KB at 10 Mb/s, 64 KB at 100 Mb/s were measured
/// to give full utilisation). At the theses' low rates (1.5 Mb/s and below) 15 KB would let
/// a burst of 80 ms and more through at line rate, so there the bucket is 20 ms of data but
/// at least two full frames.
fn burst_for(rate: Rate) -> u64 {
    let low = (rate.bps() / 8 / 50).clamp(3_028, 15_000);
    (rate.bps() / 8 / 160).max(low)
}

/// The veths' Ethernet header, which tbf would otherwise charge to every packet: the
/// simulator's links carry IP packets (a packet's size is its IP length, headers included) at
/// their rate, so the tbf is given a size table that takes the 14 bytes off (`stab overhead
/// -14`, tc-stab(8)). With it a 1000-byte TFWC packet costs 1000 bytes of the rate, as in the
/// simulator, not 1014 (1.4 % of the capacity at 1000 B, 0.9 % at 1500 B), and tc's byte
/// counters read IP bytes. Given on `change` too: a change without a size table removes it.
pub const ETHERNET_HEADER: i32 = 14;

fn tbf_args(ns: &str, dev: &str, verb: &str, bps: u64, burst: u64) -> Vec<String> {
    [
        "tc",
        "-n",
        ns,
        "qdisc",
        verb,
        "dev",
        dev,
        "root",
        "handle",
        "1:",
        "stab",
        "overhead",
        &(-ETHERNET_HEADER).to_string(),
        "linklayer",
        "ethernet",
        "tbf",
        "rate",
    ]
    .iter()
    .map(|x| x.to_string())
    .chain([
        format!("{bps}bit"),
        "burst".into(),
        burst.to_string(),
        "latency".into(),
        "1s".into(),
    ])
    .collect()
}

fn pfifo_args(ns: &str, dev: &str, verb: &str, limit: u32) -> Vec<String> {
    [
        "tc", "-n", ns, "qdisc", verb, "dev", dev, "parent", "1:1", "handle", "10:", "pfifo",
        "limit",
    ]
    .iter()
    .map(|x| x.to_string())
    .chain([limit.to_string()])
    .collect()
}

/// Deletes `tfcc-<pid>-*` namespaces whose process no longer exists.
pub fn remove_stale() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if pid.parse::<u32>().is_ok() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = run(&["ip", "netns", "del", name]);
        }
    }
}

/// Moves the calling thread into network namespace `ns`.
pub fn enter(ns: &str) -> io::Result<()> {
    let f = File::open(format!("/run/netns/{ns}"))?;
    // SAFETY: a valid namespace fd; affects only the calling thread.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The receiver port of flow `i` (the relay tells flows apart by it).
pub fn flow_port(i: usize) -> u16 {
    5001u16.wrapping_add(i as u16)
}

/// One flow of a testbed run.
#[derive(Clone, Debug)]
pub enum FlowKind {
    /// TFRC with this configuration, its data packets sized by [`KernelHeaders`] with
    /// `kernel_headers`: the testbed's caller gives the simulator's own `cfg` and UDP/IPv4's
    /// 28 B, so that each packet is the simulator's `packet_size + header_size` on the
    /// bottleneck and its receiver counts the simulator's bytes (0: datagrams of `cfg`'s own
    /// sizes).
    Tfrc {
        cfg: TfrcConfig,
        kernel_headers: u32,
    },
    /// TFRC fed by a video source (issue 5): application-limited, each frame offered at its
    /// time ([`crate::video::VideoFeed`]). The source's pauses are in run time (from the
    /// run's start, as in a scenario); its frame 0 is at the flow's start, and its frame
    /// sizes come from `SimRng::video(seed, flow)`, the simulator's stream
    /// for flow number `flow`, so both backends see the same frames.
    ///
    /// Its data packets are sized as [`KernelHeaders`] says with `kernel_headers`: the
    /// testbed's caller gives the simulator's own `cfg` and UDP/IPv4's 28 B, so that each
    /// packet takes the simulator's bytes of the frames and is the simulator's size on the
    /// bottleneck (`tfcc send --source video` gives its datagram sizes and 0).
    TfrcVideo {
        cfg: TfrcConfig,
        kernel_headers: u32,
        video: VideoConfig,
        seed: u64,
        flow: u32,
    },
    /// TFWC with this configuration.
    Tfwc(TfwcConfig),
    /// TFWC fed by a video source, as [`FlowKind::TfrcVideo`] (002 Ch. 6's Vic over TFWC),
    /// its data packets sized by [`KernelHeaders`] with `kernel_headers` as there; a frame's
    /// tail goes in a short packet (`TfwcConfig::tail_packet`).
    TfwcVideo {
        cfg: TfwcConfig,
        kernel_headers: u32,
        video: VideoConfig,
        seed: u64,
        flow: u32,
    },
    /// A receiver-driven rate scheme of 003 (WARC, TEAR or TFRCP, which `estimator` is): the
    /// rate sender paced at the receiver's reports, the receiver running `estimator` (as
    /// built, before any packet) over its rounds. `sender.packet_size` and
    /// `sender.feedback_size` are datagram sizes here (UDP payload; the kernel adds 28 B over
    /// IPv4), a report never shorter than its header.
    Rate {
        sender: RateSenderConfig,
        estimator: AnyRateEstimator,
    },
    /// A constant-bit-rate source, on/off if its configuration says so (ns-2's
    /// `Application/Traffic/CBR`; the simulator's `cbr` and `cbr-onoff` flows), as
    /// sequence-numbered datagrams ([`Protocol::Raw`]). `packet_size` is the datagram's size
    /// here and `rate` counts datagram bytes: the caller scales both from the simulator's wire
    /// sizes so that the packets take the same bytes and leave at the same times on the
    /// bottleneck. Its on periods count from the flow's start, as in the simulator.
    Cbr(CbrConfig),
    /// A CBR sender fed by a video source, as [`FlowKind::TfrcVideo`] (002's Vic without
    /// congestion control, R1 and R4): it sends only the frames' bytes it is offered, one
    /// packet per `cfg.packet_size · 8 / cfg.rate`, a frame's short remainder in a whole
    /// packet (`tfcc_sim::flow::CbrSender`). `cfg` is the simulator's own, its sizes on the
    /// wire, so that each packet takes the simulator's `packet_size` of the frames (a CBR
    /// packet is all payload there, headers included) and leaves at its times: the same
    /// packets per frame and the same send buffer as in the simulator. Only the datagram the
    /// session writes is shorter, by `kernel_headers` ([`KernelHeaders`], as the TFRC and
    /// TFWC video flows').
    CbrVideo {
        cfg: CbrConfig,
        kernel_headers: u32,
        video: VideoConfig,
        seed: u64,
        flow: u32,
    },
    /// A kernel TCP bulk transfer with congestion control `cc` (`cubic`, `reno`, ...) and, if
    /// `mss` is set, that maximum segment size (`TCP_MAXSEG` before connecting, tcp(7): the
    /// segment's payload and its TCP options, so with Linux's default timestamps a segment
    /// carries `mss - 12` bytes and is `mss + 40` bytes on the wire, IPv4 and TCP headers
    /// included); `None` takes the path's (1448 payload bytes on the testbed's 1500-byte MTU).
    Tcp { cc: String, mss: Option<u32> },
}

/// One flow of a run: what it runs, when it starts (from the run's start), and which way.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub kind: FlowKind,
    pub start: Duration,
    /// A reverse flow (a dumbbell scenario's `direction = "reverse"`): its sender sits in the
    /// receivers' namespace and its receiver in the senders', so its data crosses the
    /// bottleneck's reverse direction ([`REVERSE_DEV`]) and its feedback the forward one, as
    /// the simulator routes it (tfcc_sim::topology::Topology::dumbbell_directed).
    pub reverse: bool,
    /// When the flow's sender stops (from the run's start; `None`: at the run's end), a
    /// scenario flow's `stop`. A tfcc sender then sends nothing more; a kernel TCP sender
    /// aborts its connection (`SO_LINGER` 0: a reset, its unsent buffer discarded), since a
    /// graceful close would go on sending what the socket buffer holds, seconds of data at
    /// these rates, where ns-2's stopped source sends no more. Receivers run to the end.
    pub stop: Option<Duration>,
}

/// What the receiving side of a flow measured.
#[derive(Clone, Debug, Default)]
pub struct FlowResult {
    /// Payload bytes delivered in the measurement window.
    pub window_bytes: u64,
    /// Payload bytes delivered over the whole run.
    pub total_bytes: u64,
    /// Payload bytes delivered by the end of each sampling interval: entry `k` at
    /// `(k + 1) · interval` after the run's start, up to its end.
    pub delivered: Vec<u64>,
    /// The sender's state at the same instants: a tfcc sender endpoint's statistics, or for
    /// kernel TCP its smoothed RTT and congestion window from `TCP_INFO` (tcp(7)); what
    /// `tfcc compare` sets beside the simulator's time series to tell a transport problem
    /// from a protocol one.
    pub sender: Vec<SenderSample>,
    /// The sender's transport counters at its end (tfcc flows only).
    pub sender_counters: Option<crate::Counters>,
    /// Loss events the receiver endpoint counted in the measurement window (tfcc flows).
    pub window_loss_events: Option<u64>,
    /// Loss events a sender that counts its own (TFWC) located in the measurement window, by
    /// `tfcc_core::endpoint::Sender::loss_events_since` as the simulator's summary counts
    /// them: each where the sender places it, so each is one of the window's packets sent;
    /// `None` for senders that count none (TFRC) and for kernel TCP.
    pub sender_window_loss_events: Option<u64>,
    /// Timeouts the receiver endpoint entered in the measurement window (`Stats::timeouts` of
    /// the receiver: WARC's fluid-based timeout phases, 003 Sec. 3.2.2.3; 0 for TFRC's and
    /// TFWC's receivers, which have none), the simulator's `receiver_timeouts`.
    pub window_receiver_timeouts: Option<u64>,
    /// Data packets the receiver endpoint's loss detector judged (received or detected lost)
    /// in the measurement window (tfcc flows; `Stats::packets_judged`, 0 for a receiver without
    /// a detector): the denominator of a receiver-counted loss event rate.
    pub window_packets_judged: Option<u64>,
    /// The receiver endpoint's loss events over the run to the window's end, and its loss
    /// rate `Stats::p` then (tfcc flows): the simulator's summary falls back to that `p` for
    /// a flow whose receiver counted no loss event in the whole run (TFRCP's, which counts
    /// lost packets, not events; a CBR sink, which counts none), and so does the testbed's.
    pub receiver_run_loss_events: Option<u64>,
    pub receiver_p: Option<f64>,
    /// The receiving session's transport counters at its end (tfcc flows).
    pub receiver_counters: Option<crate::Counters>,
    /// What a video-fed flow's source grabbed and its sender carried (video flows only).
    pub video: Option<VideoRun>,
    /// A video-fed flow's frame slots, as the simulator records them (`frames.parquet`,
    /// [`tfcc_sim::frames`], the same bookkeeping): the sender's thread follows the frames'
    /// bytes into its data packets, the receiver's thread lists the data packets that arrived,
    /// and [`run_flows_sampled`] hands the log those arrivals. Times are on the run's clock
    /// (from its start, as the sampled series): a slot's `t` is its place on the source's
    /// frame grid from the flow's start, the simulator's time for it (the sender's thread
    /// offers it on its own clock, later by as long as the thread took to start its session
    /// after the flow's start); `complete_at` is the
    /// kernel's receive stamp of the frame's last packet to arrive (`SO_TIMESTAMPNS`, the
    /// time the receiver endpoint was given for it), the counterpart of the simulator's
    /// delivery event. Only packets that arrived by the run's end count as delivered, as in
    /// the simulator, which ends with packets still in flight: what arrives while the
    /// receivers drain the queue does not. A packet lost anywhere on the real path (the
    /// relay's loss model, the queue, a full socket buffer) never arrives and is not
    /// delivered. `None` for other flows.
    pub frames: Option<Vec<FrameRecord>>,
    /// UDP datagrams the receiver's namespace dropped for a full receive buffer during the
    /// flow (`RcvbufErrors` of /proc/net/snmp, per namespace: every flow received there).
    pub rcvbuf_errors: Option<u64>,
    /// The data sequence numbers the receiving session accepted over the whole run, drain
    /// included (tfcc flows; [`crate::Session::received_seqs`]).
    pub received_seqs: Option<crate::seqs::SeqLedger>,
    /// A kernel TCP receiver's segments with payload received over the whole run, read when it
    /// stops reading (`tcpi_data_segs_in`): beside the relay's count of the flow's segments
    /// handed to the queue, the flow's losses at and after the queue, which the run's stderr
    /// gives.
    pub tcp_data_segs_in: Option<u64>,
}

/// A receiver thread's measurements, and the data packets it accepted with their arrival
/// times on the run's clock (up to the run's end; kept for video flows only).
type ReceiverRun = (FlowResult, Vec<(Time, u64)>);

/// A video-fed sender's frames and bytes ([`FlowResult::video`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VideoRun {
    /// The source's counts when the measurement window began (zero if the flow started in
    /// it) and when the flow ended: the window's frames are their difference, as the
    /// simulator's summary counts them.
    pub at_window: VideoCounts,
    pub at_end: VideoCounts,
    /// The grabbed frames' bytes offered to the sender over the flow.
    pub offered: u64,
    /// Of those, the bytes the sender sent (frame bytes only, without tfcc's headers).
    pub sent: u64,
    /// Of those, the bytes the sender still held at its end.
    pub buffered: u64,
}

/// `Udp: RcvbufErrors` of the calling thread's network namespace.
fn udp_rcvbuf_errors() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/net/snmp").ok()?;
    let mut udp = text.lines().filter(|l| l.starts_with("Udp: "));
    let (names, values) = (udp.next()?, udp.next()?);
    let k = names.split_whitespace().position(|n| n == "RcvbufErrors")?;
    values.split_whitespace().nth(k)?.parse().ok()
}

/// The retransmission timeouts that namespace `ns`'s TCP senders found spurious so far, as
/// Linux counts them in `TcpExt:` of /proc/net/netstat: (`TCPLossUndo`, `TCPSpuriousRTOs`).
/// `TCPLossUndo` counts every loss recovery begun by a timeout and undone because it was
/// spurious: found by the timestamps (Eifel, RFC 3522, `net.ipv4.tcp_timestamps` is on by
/// default), by D-SACKs for every retransmission, or by F-RTO (RFC 5682); `TCPSpuriousRTOs`
/// counts those F-RTO found, and is a part of the first (`tcp_try_undo_loss` adds to both). A
/// recovery through several backed-off timeouts is undone, and counted, once. Linux keeps the
/// TCP MIB per network namespace and TCP_INFO has no per-connection count of either, so the
/// namespace's counts are the finest there are. Read from a thread that enters `ns`; each
/// `None` if the namespace or the counter is missing.
pub fn tcp_spurious_rtos(ns: &str) -> (Option<u64>, Option<u64>) {
    let ns = ns.to_string();
    thread::spawn(move || {
        if enter(&ns).is_err() {
            return (None, None);
        }
        let Ok(text) = std::fs::read_to_string("/proc/thread-self/net/netstat") else {
            return (None, None);
        };
        (
            netstat_counter(&text, "TcpExt", "TCPLossUndo"),
            netstat_counter(&text, "TcpExt", "TCPSpuriousRTOs"),
        )
    })
    .join()
    .unwrap_or((None, None))
}

/// One counter of /proc/net/netstat (or /proc/net/snmp) text: each group is a line of names
/// (`TcpExt: SyncookiesSent ...`) followed by a line of values with the same prefix.
fn netstat_counter(text: &str, group: &str, name: &str) -> Option<u64> {
    let prefix = format!("{group}: ");
    let mut lines = text.lines().filter(|l| l.starts_with(&prefix));
    let (names, values) = (lines.next()?, lines.next()?);
    let k = names.split_whitespace().position(|n| n == name)?;
    values.split_whitespace().nth(k)?.parse().ok()
}

/// A tfcc sender's state at one sampling instant (`None` before the flow starts).
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderSample {
    /// Allowed sending rate, bytes/s (rate-based protocols).
    pub rate: Option<f64>,
    /// Congestion window, packets (window-based protocols).
    pub cwnd: Option<f64>,
    /// The loss event rate the sender works with.
    pub p: Option<f64>,
    /// Smoothed RTT.
    pub rtt: Option<tfcc_core::Dur>,
    /// Data packets sent so far.
    pub packets_sent: u64,
    /// Timeouts so far: a tfcc sender's `Stats::timeouts`, kernel TCP's retransmission
    /// timeouts of the connection (`tcpi_total_rto` of TCP_INFO, Linux 6.7 on; 0 before).
    pub timeouts: u64,
}

impl FlowResult {
    /// Goodput in the measurement window, bits per second.
    pub fn goodput_bps(&self, window: Duration) -> f64 {
        self.window_bytes as f64 * 8.0 / window.as_secs_f64().max(1e-9)
    }
}

/// When a run starts, ends, measures and samples, shared by its receivers.
#[derive(Clone, Copy, Debug)]
struct Clocking {
    start: Instant,
    duration: Duration,
    measure_from: Duration,
    interval: Duration,
    /// How long the receivers go on reading after the senders stop.
    drain: Duration,
}

/// The receivers' reading time after the senders stop in [`run_flows`]: what a full queue of
/// 100 packets of 1500 B takes to empty at 2.4 Mb/s.
pub const DEFAULT_DRAIN: Duration = Duration::from_millis(500);

/// The last tick of [`run_flows_sampled`] comes this long before the receivers stop reading:
/// what left the queue by then has reached its receiver (the veth delivers in microseconds).
pub const DRAIN_MARGIN: Duration = Duration::from_millis(50);

impl Clocking {
    /// Sampling instants (offsets from the start) up to the end of the run.
    fn samples(&self) -> usize {
        (self.duration.as_nanos() / self.interval.as_nanos().max(1)) as usize
    }
}

/// Runs `flows` (each with its start offset) until `duration`, counting bytes from
/// `measure_from`.
pub fn run_flows(
    bed: &Dumbbell,
    flows: &[(FlowKind, Duration)],
    duration: Duration,
    measure_from: Duration,
) -> Result<Vec<FlowResult>, TestbedError> {
    let flows: Vec<FlowSpec> = flows
        .iter()
        .map(|(kind, start)| FlowSpec {
            kind: kind.clone(),
            start: *start,
            reverse: false,
            stop: None,
        })
        .collect();
    run_flows_sampled(
        bed,
        &flows,
        duration,
        measure_from,
        Duration::from_millis(100),
        DEFAULT_DRAIN,
        &mut |_| Ok(()),
    )
}

/// As [`run_flows`] (flows in either direction), with each receiver's delivered bytes sampled
/// every `interval`, the receivers reading for `drain` after the senders stop (what is queued
/// then arrives: a packet still queued when they stop would look lost), and
/// `tick(elapsed)` called on the calling thread about every 10 ms of the run, from its start
/// to its end and on into the drain until [`DRAIN_MARGIN`] before the receivers stop (`elapsed`
/// then exceeds `duration`), so the caller can apply scheduled changes and poll the queue, and
/// see whether the queue emptied while the receivers were still reading. An error from
/// `tick` is returned after the flows end, except [`TestbedError::Interrupted`], which is
/// returned at once: the flows' threads are left running (detached, in the namespaces) and
/// end by themselves at the run's end, or with the process, which is what `tfcc run` does
/// next after deleting the namespaces (dropping the [`Dumbbell`]), so a Ctrl-C takes effect
/// within one tick.
pub fn run_flows_sampled(
    bed: &Dumbbell,
    flows: &[FlowSpec],
    duration: Duration,
    measure_from: Duration,
    interval: Duration,
    drain: Duration,
    tick: &mut dyn FnMut(Duration) -> Result<(), TestbedError>,
) -> Result<Vec<FlowResult>, TestbedError> {
    let start = Instant::now() + Duration::from_millis(300);
    let clk = Clocking {
        start,
        duration,
        measure_from,
        interval: interval.max(Duration::from_millis(1)),
        drain,
    };
    let mut handles = Vec::new();
    for (i, spec) in flows.iter().enumerate() {
        let (f, offset) = (&spec.kind, spec.start.min(duration));
        let stop = spec.stop.unwrap_or(duration).clamp(offset, duration);
        let port = flow_port(i);
        // A reverse flow swaps the ends: its receiver on the senders' side.
        let (rns, rip, sns, sip) = if spec.reverse {
            (bed.sender_ns(), SENDER_IP, bed.receiver_ns(), RECEIVER_IP)
        } else {
            (bed.receiver_ns(), RECEIVER_IP, bed.sender_ns(), SENDER_IP)
        };
        let (ready_tx, ready_rx) = mpsc::channel::<io::Result<()>>();
        let f2 = f.clone();
        let rx = thread::spawn(move || -> io::Result<ReceiverRun> {
            enter(&rns)?;
            let at = format!("{rip}:{port}");
            // A video flow's arrivals are matched to its frames.
            let video = matches!(
                f2,
                FlowKind::TfrcVideo { .. } | FlowKind::TfwcVideo { .. } | FlowKind::CbrVideo { .. }
            );
            match f2 {
                FlowKind::Tfrc {
                    cfg,
                    kernel_headers,
                } => {
                    let ep = KernelHeaders::new(TfrcReceiver::new(cfg), kernel_headers);
                    udp_receiver(ep, Protocol::Tfrc, at, clk, false, ready_tx)
                }
                FlowKind::TfrcVideo {
                    cfg,
                    kernel_headers,
                    ..
                } => {
                    let ep = KernelHeaders::new(TfrcReceiver::new(cfg), kernel_headers);
                    udp_receiver(ep, Protocol::Tfrc, at, clk, video, ready_tx)
                }
                FlowKind::Tfwc(cfg) => {
                    let ep = TfwcReceiver::new(&cfg);
                    udp_receiver(ep, Protocol::Tfwc, at, clk, false, ready_tx)
                }
                FlowKind::TfwcVideo {
                    cfg,
                    kernel_headers,
                    ..
                } => {
                    let ep = KernelHeaders::new(TfwcReceiver::new(&cfg), kernel_headers);
                    udp_receiver(ep, Protocol::Tfwc, at, clk, video, ready_tx)
                }
                FlowKind::Rate { sender, estimator } => {
                    let proto = Protocol::Rate(estimator.scheme());
                    let ep = RoundReceiver::for_sender(estimator, &sender);
                    udp_receiver(ep, proto, at, clk, false, ready_tx)
                }
                FlowKind::Cbr(_) => {
                    udp_receiver(CbrSink::new(), Protocol::Raw, at, clk, false, ready_tx)
                }
                FlowKind::CbrVideo { kernel_headers, .. } => {
                    let ep = KernelHeaders::new(CbrSink::new(), kernel_headers);
                    udp_receiver(ep, Protocol::Raw, at, clk, video, ready_tx)
                }
                FlowKind::Tcp { .. } => Ok((tcp_receiver(at, clk, ready_tx)?, Vec::new())),
            }
        });
        ready_rx
            .recv()
            .map_err(|_| io::Error::other("receiver thread died"))??;
        let f3 = f.clone();
        let tx = thread::spawn(move || -> io::Result<SenderRun> {
            enter(&sns)?;
            let to: SocketAddr = format!("{rip}:{port}").parse().map_err(io::Error::other)?;
            wait_until(start + offset);
            let bind = format!("{sip}:0");
            match f3 {
                FlowKind::Tfrc {
                    cfg,
                    kernel_headers,
                } => {
                    let ep = KernelHeaders::new(TfrcSender::new(cfg), kernel_headers);
                    run_sender(udp_sender(ep, Protocol::Tfrc, &bind, to)?, clk, stop, None)
                }
                FlowKind::TfrcVideo {
                    cfg,
                    kernel_headers,
                    video,
                    seed,
                    flow,
                } => {
                    // The simulator's source on the same random stream: the same frames.
                    let rng = SimRng::video(seed, flow);
                    let ep = KernelHeaders::new(TfrcSender::new(cfg), kernel_headers);
                    let s = udp_sender(ep, Protocol::Tfrc, &bind, to)?;
                    run_sender(s, clk, stop, Some((video, rng, offset, flow)))
                }
                FlowKind::Tfwc(cfg) => {
                    let ep = TfwcSender::new(cfg, Time::ZERO);
                    run_sender(udp_sender(ep, Protocol::Tfwc, &bind, to)?, clk, stop, None)
                }
                FlowKind::TfwcVideo {
                    cfg,
                    kernel_headers,
                    video,
                    seed,
                    flow,
                } => {
                    let rng = SimRng::video(seed, flow);
                    let ep = KernelHeaders::new(TfwcSender::new(cfg, Time::ZERO), kernel_headers);
                    let s = udp_sender(ep, Protocol::Tfwc, &bind, to)?;
                    run_sender(s, clk, stop, Some((video, rng, offset, flow)))
                }
                FlowKind::Rate { sender, estimator } => {
                    let proto = Protocol::Rate(estimator.scheme());
                    let ep = RateSender::new(sender);
                    run_sender(udp_sender(ep, proto, &bind, to)?, clk, stop, None)
                }
                FlowKind::Cbr(c) => {
                    let ep = CbrSender::new(c, Time::ZERO, None);
                    run_sender(udp_sender(ep, Protocol::Raw, &bind, to)?, clk, stop, None)
                }
                FlowKind::CbrVideo {
                    cfg,
                    kernel_headers,
                    video,
                    seed,
                    flow,
                } => {
                    let rng = SimRng::video(seed, flow);
                    let ep =
                        KernelHeaders::new(CbrSender::new(cfg, Time::ZERO, None), kernel_headers);
                    let s = udp_sender(ep, Protocol::Raw, &bind, to)?;
                    run_sender(s, clk, stop, Some((video, rng, offset, flow)))
                }
                FlowKind::Tcp { cc, mss } => tcp_sender(to, &cc, mss, clk, stop),
            }
        });
        handles.push((rx, tx));
    }
    let mut tick_err = None;
    wait_until(start);
    let last_tick = duration + drain.saturating_sub(DRAIN_MARGIN);
    loop {
        let elapsed = start.elapsed();
        if tick_err.is_none() {
            match tick(elapsed.min(last_tick)) {
                Ok(()) => {}
                Err(TestbedError::Interrupted) => return Err(TestbedError::Interrupted),
                Err(e) => tick_err = Some(e),
            }
        }
        if elapsed >= last_tick {
            break;
        }
        // The run's end is ticked on time (the caller reads the queues' counters there), the
        // drain after it less precisely.
        let next = if elapsed < duration {
            duration
        } else {
            last_tick
        };
        thread::sleep(Duration::from_millis(10).min(next - elapsed));
    }
    let mut out = Vec::new();
    for (rx, tx) in handles {
        let sent = tx
            .join()
            .map_err(|_| io::Error::other("sender thread panicked"))??;
        let (mut r, arrivals) = rx
            .join()
            .map_err(|_| io::Error::other("receiver thread panicked"))??;
        r.sender = sent.samples;
        r.sender_counters = sent.counters;
        r.sender_window_loss_events = sent.window_loss_events;
        r.video = sent.video;
        r.frames = sent.frames.map(|mut log| {
            for (t, seq) in arrivals {
                log.on_delivered(t, seq);
            }
            log.into_records()
        });
        out.push(r);
    }
    match tick_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// A sending session of any tfcc protocol from `bind` to `to`, with the testbed's transport
/// settings: every protocol's sender runs through the same session and [`run_sender`].
fn udp_sender<S: Sender>(
    ep: S,
    proto: Protocol,
    bind: &str,
    to: SocketAddr,
) -> io::Result<Session<S>> {
    Session::sender(ep, proto, bind, to, session_config())
}

/// An endpoint whose data packets are `bytes` longer in its own accounting than the datagrams
/// that carry them: the bytes of headers the kernel puts around each datagram (UDP/IPv4's 28),
/// which the simulator counts in its packets. Each data packet the endpoint sends goes out
/// that much shorter (never shorter than its tfcc header, [`crate::wire::encode`]), and each
/// one it receives is handed to it that much longer; feedback is left as it is.
///
/// Why: the testbed runs the simulator's scenario on real sockets, so that its figures can be
/// set beside the simulator's one for one. A video-fed flow ([`FlowKind::TfrcVideo`],
/// [`FlowKind::TfwcVideo`], [`FlowKind::CbrVideo`]) therefore runs the simulator's own sender
/// and receiver configuration inside this wrapper: each packet takes the simulator's bytes of
/// the frames from the send buffer and is the simulator's size on the bottleneck (a 1000-byte
/// packet is a 972-byte datagram and 1000 B on the wire), and the receiver counts the
/// simulator's bytes for it. The packets per frame, the send buffer, `frames.parquet` and
/// the bytes delivered are then the simulator's. The real cost of tfcc's header (28 B for
/// TFWC, 44 B for TFRC, 20 B for CBR, inside the datagram) is not charged to the video: the
/// simulator's packets are all the application's (a TFWC packet's `header_size` is 0 there, a
/// CBR packet has none, and TFRC's `header_size` comes on top of its `s`), and that is what
/// this keeps. Before, a video-fed TFWC packet
/// put the frames after tfcc's header and carried 944 B of them per 1000-byte packet, 6 %
/// fewer than the simulator's. A packet whose size in the simulator is below `bytes` plus its
/// tfcc header (a frame's tail of a few dozen bytes) goes out padded to that header, and its
/// receiver counts it padded; one implementation for all three so that no copy drifts. A bulk
/// TFRC flow ([`FlowKind::Tfrc`]) runs in it too (since 2026-11-28), so that its packets are the
/// simulator's size on the bottleneck whatever its `header_size`.
pub struct KernelHeaders<E> {
    ep: E,
    bytes: u32,
}

impl<E> KernelHeaders<E> {
    /// `ep` with its data packets `bytes` longer than their datagrams.
    pub fn new(ep: E, bytes: u32) -> Self {
        KernelHeaders { ep, bytes }
    }
}

impl<E: Endpoint> Endpoint for KernelHeaders<E> {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        if crate::wire::data_seq(&pkt.header).is_some() && self.bytes > 0 {
            let mut p = *pkt;
            p.size = p.size.saturating_add(self.bytes);
            self.ep.on_packet(now, &p);
        } else {
            self.ep.on_packet(now, pkt);
        }
    }
    fn on_timeout(&mut self, now: Time) {
        self.ep.on_timeout(now);
    }
    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let mut p = self.ep.poll_transmit(now)?;
        if crate::wire::data_seq(&p.header).is_some() {
            p.size = p.size.saturating_sub(self.bytes);
        }
        Some(p)
    }
    fn next_timeout(&self) -> Option<Time> {
        self.ep.next_timeout()
    }
    fn stats(&self) -> Stats {
        self.ep.stats()
    }
}

/// Every method forwarded, so that the wrapped sender behaves as it does unwrapped (its
/// send-error response, its loss-event counts).
impl<S: Sender> Sender for KernelHeaders<S> {
    fn on_send_error(&mut self, now: Time) {
        self.ep.on_send_error(now);
    }
    fn offer(&mut self, bytes: Option<u64>) {
        self.ep.offer(bytes);
    }
    fn buffered(&self) -> Option<u64> {
        self.ep.buffered()
    }
    fn payload_sent(&self) -> Option<u64> {
        self.ep.payload_sent()
    }
    fn count_loss_events_from(&mut self, from: Time) {
        self.ep.count_loss_events_from(from);
    }
    fn loss_events_since(&self) -> Option<u64> {
        self.ep.loss_events_since()
    }
}

impl<R: Receiver> Receiver for KernelHeaders<R> {
    fn delivered_bytes(&self) -> u64 {
        self.ep.delivered_bytes()
    }
}

/// What a tfcc sender thread brings back.
#[derive(Default)]
struct SenderRun {
    samples: Vec<SenderSample>,
    counters: Option<crate::Counters>,
    /// [`FlowResult::sender_window_loss_events`].
    window_loss_events: Option<u64>,
    /// [`FlowResult::video`].
    video: Option<VideoRun>,
    /// A video flow's frame log with every slot and data packet sent, slot times on the run's
    /// clock; the deliveries are added from the receiver's arrivals ([`FlowResult::frames`]).
    frames: Option<FrameLog>,
}

/// A video-fed sender's source: its configuration in run time, its random stream, the flow's
/// start, and its flow number in the scenario (its frame records').
type Feeding = (VideoConfig, SimRng, Duration, u32);

/// Runs a sending session from now (its flow's start) to `stop` (run time, at most the run's
/// end), sampling the endpoint's stats at the run's sampling instants (those before the start
/// stay empty, those after the stop keep its state at the stop). With a video source (its
/// configuration in run time, its random stream, the flow's start) the sender is
/// application-limited and fed each frame at its time.
fn run_sender<S: tfcc_core::endpoint::Sender>(
    mut s: Session<S>,
    clk: Clocking,
    stop: Duration,
    video: Option<Feeding>,
) -> io::Result<SenderRun> {
    // Session time 0 is its construction, at about the flow's start.
    let born = Instant::now();
    let at = |d: Duration| {
        let since = (clk.start + d).saturating_duration_since(born);
        Time::ZERO + tfcc_core::Dur(since.as_nanos() as u64)
    };
    let end = at(stop.min(clk.duration));
    let mut feed = video.map(|(mut v, rng, offset, flow)| {
        // Run time to session time.
        let run = |t: Time| at(Duration::from_nanos(t.0));
        for p in &mut v.pauses {
            *p = (run(p.0), run(p.1));
        }
        let mut f = VideoFeed::new(VideoSource::new(v, at(offset), rng));
        f.start(&mut s);
        // The source's frame grid starts at the flow's start: session time `at(offset)` (0
        // when the thread got here late), run time `offset`.
        let run0 = Time::ZERO + tfcc_core::Dur(offset.as_nanos() as u64);
        f.follow_frames(&mut s, flow, (at(offset), run0));
        f
    });
    // Events are located by their packets' send times, so counting from the window's start
    // before any packet is sent is counting at the window's start; a flow that starts in the
    // window counts from its first packet (session time 0).
    s.endpoint_mut()
        .count_loss_events_from(at(clk.measure_from));
    // The video source's counts at the window's start: none yet if the flow starts in it.
    let mut at_window = None;
    let mut samples = Vec::with_capacity(clk.samples());
    // Each reading counts the bytes by its instant by their kernel stamps
    // (`Session::delivered_bytes_by_end`), not what a late wake-up had read by then.
    for k in 1..=clk.samples() {
        let t = clk.interval * k as u32;
        if clk.start + t <= born {
            samples.push(SenderSample::default());
            continue;
        }
        if at_window.is_none() && t > clk.measure_from {
            if clk.start + clk.measure_from > born {
                advance(&mut s, &mut feed, at(clk.measure_from).min(end), end)?;
            }
            at_window = Some(feed.as_ref().map(VideoFeed::counts).unwrap_or_default());
        }
        advance(&mut s, &mut feed, at(t).min(end), end)?;
        let st = s.endpoint().stats();
        samples.push(SenderSample {
            rate: st.rate,
            cwnd: st.cwnd,
            p: st.p,
            rtt: st.rtt,
            packets_sent: st.packets_sent,
            timeouts: st.timeouts,
        });
    }
    advance(&mut s, &mut feed, end, end)?;
    let frames = feed.as_mut().and_then(|f| f.take_frames(&mut s));
    let video = feed.as_ref().map(|f| {
        let at_end = f.counts();
        VideoRun {
            at_window: at_window.unwrap_or(at_end),
            at_end,
            offered: f.bytes(),
            sent: s.endpoint().payload_sent().unwrap_or(0),
            buffered: s.endpoint().buffered().unwrap_or(0),
        }
    });
    // A stopped sender keeps its socket to the run's end, as the simulator's stopped agent
    // stays attached: reports still on their way then meet a bound port, not an ICMP port
    // unreachable that a receiving session would read as an error.
    wait_until(clk.start + clk.duration);
    Ok(SenderRun {
        samples,
        counters: Some(s.counters()),
        window_loss_events: s.endpoint().loss_events_since(),
        video,
        frames,
    })
}

/// Runs `s` to `t`, a video feed offering its frames due before `end` on the way.
fn advance<S: tfcc_core::endpoint::Sender>(
    s: &mut Session<S>,
    feed: &mut Option<VideoFeed>,
    t: Time,
    end: Time,
) -> io::Result<()> {
    match feed {
        Some(f) => f.run_until(s, t, end),
        None => s.run_until(t),
    }
}

/// The testbed's sessions run under `SCHED_FIFO`, one step below the relay
/// ([`RelayConfig::rt_priority`]): at normal priority on the shared 2-core VM a session thread
/// was left unscheduled for tens of milliseconds now and then, its packets meanwhile not sent
/// (sender) or not read (receiver); TFRC then measured a receive rate far below the path's and
/// cut its rate to twice that (RFC 5348 §4.3), which the simulator never sees. The sessions
/// sleep between packets and spin at most [`SessionConfig::spin`] per wait, so they cannot
/// starve the machine.
fn session_config() -> SessionConfig {
    SessionConfig {
        realtime: Some((RelayConfig::default().rt_priority - 1).max(1)),
        ..SessionConfig::default()
    }
}

fn wait_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        thread::sleep(t - now);
    }
}

/// A receiving session's measurements; with `arrivals`, also the data packets it accepted by
/// the run's end and when, on the run's clock ([`FlowResult::frames`]).
fn udp_receiver<R: Receiver>(
    ep: R,
    proto: Protocol,
    at: String,
    clk: Clocking,
    arrivals: bool,
    ready: mpsc::Sender<io::Result<()>>,
) -> io::Result<ReceiverRun> {
    let mut s = match Session::receiver(ep, proto, at, session_config()) {
        Ok(s) => {
            let _ = ready.send(Ok(()));
            s
        }
        Err(e) => {
            let _ = ready.send(Err(io::Error::new(e.kind(), e.to_string())));
            return Err(e);
        }
    };
    // Session time 0 is its construction, shortly before `start`.
    let rcvbuf_before = udp_rcvbuf_errors();
    let lead = clk.start.saturating_duration_since(Instant::now());
    let at = |d: Duration| Time::ZERO + tfcc_core::Dur((lead + d).as_nanos() as u64);
    if arrivals {
        s.keep_data_arrivals();
    }
    let mut delivered = Vec::with_capacity(clk.samples());
    let mut before = None;
    // The receiver's loss events, judged packets and timeouts at the window's start.
    let mut counted_before = (0, 0, 0);
    let counted = |st: tfcc_core::endpoint::Stats| (st.loss_events, st.packets_judged, st.timeouts);
    for k in 1..=clk.samples() {
        let t = clk.interval * k as u32;
        if before.is_none() && t > clk.measure_from {
            s.run_until(at(clk.measure_from))?;
            before = Some(s.delivered_bytes_by_end());
            counted_before = counted(s.endpoint().stats());
        }
        s.run_until(at(t))?;
        delivered.push(s.delivered_bytes_by_end());
    }
    if before.is_none() {
        s.run_until(at(clk.measure_from))?;
        before = Some(s.delivered_bytes_by_end());
        counted_before = counted(s.endpoint().stats());
    }
    // The window ends with the run, as in the simulator: bytes delivered while the queue
    // drains afterwards count towards the total only (they had inflated goodput by the
    // backlog over the window, above the bottleneck rate).
    s.run_until(at(clk.duration))?;
    let in_window = s.delivered_bytes_by_end();
    let at_end = s.endpoint().stats();
    let receiver_p = at_end.p;
    let (events_end, judged_end, timeouts_end) = counted(at_end);
    let window_events = events_end.saturating_sub(counted_before.0);
    let window_judged = judged_end.saturating_sub(counted_before.1);
    let window_timeouts = timeouts_end.saturating_sub(counted_before.2);
    // Reading on past the sender's end lets the last packets drain from the queue.
    s.run_until(at(clk.duration + clk.drain))?;
    let total = s.delivered_bytes();
    // Session time to run time. Taken after the drain: a packet stamped by the run's end may
    // have been read after it. One stamped later (still queued at the end) is dropped.
    let end = at(clk.duration);
    let arrived: Vec<(Time, u64)> = s
        .take_data_arrivals()
        .into_iter()
        .filter(|&(t, _)| t <= end)
        .map(|(t, seq)| (Time(t.0.saturating_sub(lead.as_nanos() as u64)), seq))
        .collect();
    let r = FlowResult {
        window_bytes: in_window - before.unwrap_or(0),
        total_bytes: total,
        delivered,
        window_loss_events: Some(window_events),
        window_packets_judged: Some(window_judged),
        window_receiver_timeouts: Some(window_timeouts),
        receiver_run_loss_events: Some(events_end),
        receiver_p,
        receiver_counters: Some(s.counters()),
        received_seqs: Some(s.received_seqs().clone()),
        rcvbuf_errors: udp_rcvbuf_errors()
            .zip(rcvbuf_before)
            .map(|(a, b)| a.saturating_sub(b)),
        ..FlowResult::default()
    };
    Ok((r, arrived))
}

fn tcp_receiver(
    at: String,
    clk: Clocking,
    ready: mpsc::Sender<io::Result<()>>,
) -> io::Result<FlowResult> {
    let l = match TcpListener::bind(at) {
        Ok(l) => {
            let _ = ready.send(Ok(()));
            l
        }
        Err(e) => {
            let _ = ready.send(Err(io::Error::new(e.kind(), e.to_string())));
            return Err(e);
        }
    };
    let (mut c, _) = l.accept()?;
    // Short enough that a sample boundary is seen within a few ms even when nothing arrives.
    c.set_read_timeout(Some(Duration::from_millis(5)))?;
    let mut buf = vec![0u8; 1 << 16];
    let (mut total, mut before, mut in_window) = (0u64, None, None);
    let window_start = clk.start + clk.measure_from;
    let window_end = clk.start + clk.duration;
    let end = window_end + clk.drain;
    let n_samples = clk.samples();
    let mut delivered = Vec::with_capacity(n_samples);
    loop {
        let now = Instant::now();
        if before.is_none() && now >= window_start {
            before = Some(total);
        }
        // The window ends with the run (see `udp_receiver`); draining continues after it.
        if in_window.is_none() && now >= window_end {
            in_window = Some(total);
        }
        while delivered.len() < n_samples
            && now >= clk.start + clk.interval * (delivered.len() as u32 + 1)
        {
            delivered.push(total);
        }
        if now >= end {
            break;
        }
        match c.read(&mut buf) {
            // A sender that stopped before the end resets the connection (`abort`).
            Ok(0) => break,
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => break,
            Ok(n) => total += n as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    let before = before.unwrap_or(total);
    let in_window = in_window.unwrap_or(total);
    delivered.resize(n_samples, total);
    Ok(FlowResult {
        window_bytes: in_window.saturating_sub(before),
        total_bytes: total,
        delivered,
        tcp_data_segs_in: tcp_data_segs_in(&c),
        ..FlowResult::default()
    })
}

/// `TCP_INFO` of a connection and how many of its bytes the kernel filled.
fn tcp_info(c: &TcpStream) -> Option<(libc::tcp_info, usize)> {
    // SAFETY: all-zero is a valid tcp_info; getsockopt writes at most `len` bytes into it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            c.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some((info, len as usize))
}

/// Segments with payload the connection has received (`tcpi_data_segs_in`, Linux 4.6 on; every
/// arrival at TCP, duplicates included); `None` where the kernel does not say.
fn tcp_data_segs_in(c: &TcpStream) -> Option<u64> {
    let (info, len) = tcp_info(c)?;
    (len >= std::mem::offset_of!(libc::tcp_info, tcpi_data_segs_in) + std::mem::size_of::<u32>())
        .then(|| u64::from(info.tcpi_data_segs_in))
}

/// The kernel's view of a TCP connection (`TCP_INFO`): smoothed RTT, congestion window in
/// segments and data segments sent (`tcpi_data_segs_out`, retransmissions included, counted in
/// MSS-sized segments also when TSO sends them as one; Linux 4.6 on, 0 before) and
/// retransmission timeouts (`tcpi_total_rto`: every RTO expiry of the connection, Linux 6.7
/// on, 0 before), as a [`SenderSample`] (no rate, `p` or loss events).
fn tcp_sample(c: &TcpStream) -> SenderSample {
    let Some((info, len)) = tcp_info(c) else {
        return SenderSample::default();
    };
    // An older kernel fills less of the struct and says how much.
    let has_segs_out = len
        >= std::mem::offset_of!(libc::tcp_info, tcpi_data_segs_out) + std::mem::size_of::<u32>();
    let has_total_rto =
        len >= std::mem::offset_of!(libc::tcp_info, tcpi_total_rto) + std::mem::size_of::<u16>();
    SenderSample {
        rtt: (info.tcpi_rtt > 0).then(|| tfcc_core::Dur::from_micros(u64::from(info.tcpi_rtt))),
        cwnd: Some(f64::from(info.tcpi_snd_cwnd)),
        packets_sent: if has_segs_out {
            u64::from(info.tcpi_data_segs_out)
        } else {
            0
        },
        timeouts: if has_total_rto {
            u64::from(info.tcpi_total_rto)
        } else {
            0
        },
        ..SenderSample::default()
    }
}

/// A bulk sender to `stop` (run time), sampling `TCP_INFO` at the run's sampling instants;
/// those after a stop before the run's end stay empty (the connection is gone).
fn tcp_sender(
    to: SocketAddr,
    cc: &str,
    mss: Option<u32>,
    clk: Clocking,
    stop: Duration,
) -> io::Result<SenderRun> {
    let end = clk.start + stop.min(clk.duration);
    let n_samples = clk.samples();
    let mut samples = Vec::with_capacity(n_samples);
    let due = |k: usize| clk.start + clk.interval * (k as u32 + 1);
    // Instants before the connection exists stay empty.
    while samples.len() < n_samples && Instant::now() >= due(samples.len()) {
        samples.push(SenderSample::default());
    }
    let mut c = connect(to, mss)?;
    let name = cc.as_bytes();
    // SAFETY: TCP_CONGESTION takes the algorithm name as bytes of the given length.
    let rc = unsafe {
        libc::setsockopt(
            c.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::other(format!(
            "TCP congestion control {cc}: {}",
            io::Error::last_os_error()
        )));
    }
    // Short, so that a sampling instant is not missed by more than a few ms while the send
    // buffer is full.
    c.set_write_timeout(Some(Duration::from_millis(5)))?;
    let buf = vec![0u8; 1 << 16];
    loop {
        let now = Instant::now();
        while samples.len() < n_samples && now >= due(samples.len()) {
            samples.push(tcp_sample(&c));
        }
        if now >= end {
            break;
        }
        match c.write(&buf) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    if stop < clk.duration {
        abort(&c)?;
        drop(c);
        samples.resize(n_samples, SenderSample::default());
    }
    // Kernel TCP's loss events are not visible from user space.
    Ok(SenderRun {
        samples,
        counters: None,
        window_loss_events: None,
        video: None,
        frames: None,
    })
}

/// A TCP connection to `to`, its maximum segment size set to `mss` before the handshake (so
/// it holds from the first segment and is what the sender announces), or the path's.
fn connect(to: SocketAddr, mss: Option<u32>) -> io::Result<TcpStream> {
    use std::os::fd::FromRawFd;
    let (SocketAddr::V4(v4), Some(mss)) = (to, mss) else {
        return TcpStream::connect(to);
    };
    // SAFETY: plain socket(2); the descriptor is owned by the TcpStream made from it below,
    // which closes it on every error after.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh socket nobody else owns.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    let value = mss as libc::c_int;
    // SAFETY: TCP_MAXSEG takes an int of the given size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::other(format!(
            "TCP_MAXSEG {mss}: {}",
            io::Error::last_os_error()
        )));
    }
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*v4.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: a valid sockaddr_in of the given length; a blocking connect on our socket.
    let rc = unsafe {
        libc::connect(
            fd,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stream)
}

/// Makes closing `c` abort the connection (`SO_LINGER` on with a 0 s timeout, socket(7)): a
/// reset, with what the send buffer still holds discarded.
fn abort(c: &TcpStream) -> io::Result<()> {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: SO_LINGER takes a `struct linger` of the given size.
    let rc = unsafe {
        libc::setsockopt(
            c.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A reading of the bottleneck's qdisc (`tc -s`): cumulative counters and the backlog now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QdiscSample {
    pub sent_bytes: u64,
    pub sent_packets: u64,
    pub drops: u64,
    pub backlog_bytes: u64,
    pub backlog_packets: u64,
}

/// Reads the root qdisc of every device in `ns` with one `tc` process: (device, reading).
/// The testbed's router has two, [`FORWARD_DEV`] and [`REVERSE_DEV`].
pub fn root_qdisc_samples(ns: &str) -> Vec<(String, QdiscSample)> {
    let Ok(out) = Command::new("tc")
        .args(["-n", ns, "-s", "qdisc", "show"])
        .output()
    else {
        return Vec::new();
    };
    parse_root_qdiscs(&String::from_utf8_lossy(&out.stdout))
}

/// Splits `tc -s qdisc show` output into its qdiscs ("qdisc KIND HANDLE dev DEV root ..."
/// starts each) and parses the root ones.
fn parse_root_qdiscs(text: &str) -> Vec<(String, QdiscSample)> {
    let mut blocks: Vec<(String, bool, String)> = Vec::new();
    for line in text.lines() {
        if line.starts_with("qdisc ") {
            let w: Vec<&str> = line.split_whitespace().collect();
            let dev = w
                .iter()
                .position(|&x| x == "dev")
                .and_then(|k| w.get(k + 1))
                .unwrap_or(&"")
                .to_string();
            blocks.push((dev, w.contains(&"root"), String::new()));
        }
        if let Some(b) = blocks.last_mut() {
            b.2.push_str(line);
            b.2.push('\n');
        }
    }
    blocks
        .into_iter()
        .filter(|(dev, root, _)| *root && !dev.is_empty())
        .filter_map(|(dev, _, text)| parse_qdisc(&text).map(|q| (dev, q)))
        .collect()
}

/// The first (root) qdisc's " Sent B bytes P pkt (dropped D, ..." and " backlog Xb Yp ..."
/// lines; `tc` prints sizes as `1514b` or, when large, `15Kb`/`1Mb`.
fn parse_qdisc(text: &str) -> Option<QdiscSample> {
    let sent = text.lines().find(|l| l.trim_start().starts_with("Sent "))?;
    let w: Vec<&str> = sent.split_whitespace().collect();
    let mut q = QdiscSample {
        sent_bytes: w.get(1)?.parse().ok()?,
        sent_packets: w.get(3)?.parse().ok()?,
        drops: w.get(6)?.trim_end_matches(',').parse().ok()?,
        ..QdiscSample::default()
    };
    if let Some(b) = text
        .lines()
        .find(|l| l.trim_start().starts_with("backlog "))
    {
        let w: Vec<&str> = b.split_whitespace().collect();
        let bytes = w.get(1)?.strip_suffix('b')?;
        let (num, mult) = match bytes.as_bytes().last() {
            Some(b'K') => (&bytes[..bytes.len() - 1], 1000),
            Some(b'M') => (&bytes[..bytes.len() - 1], 1_000_000),
            _ => (bytes, 1),
        };
        q.backlog_bytes = num.parse::<u64>().ok()? * mult;
        q.backlog_packets = w.get(2)?.strip_suffix('p')?.parse().ok()?;
    }
    Some(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_netstat_counter_is_read_from_its_groups_value_line() {
        let text = "TcpExt: SyncookiesSent TCPSpuriousRTOs TCPSackRecovery\n\
                    TcpExt: 0 7 12\n\
                    IpExt: InNoRoutes TCPSpuriousRTOs\n\
                    IpExt: 3 99\n";
        assert_eq!(netstat_counter(text, "TcpExt", "TCPSpuriousRTOs"), Some(7));
        assert_eq!(netstat_counter(text, "IpExt", "TCPSpuriousRTOs"), Some(99));
        assert_eq!(netstat_counter(text, "TcpExt", "Nothing"), None);
        assert_eq!(netstat_counter(text, "MPTcpExt", "TCPSpuriousRTOs"), None);
        // this kernel's own file has the counter
        if let Ok(own) = std::fs::read_to_string("/proc/net/netstat") {
            assert!(netstat_counter(&own, "TcpExt", "TCPSpuriousRTOs").is_some());
        }
    }

    #[test]
    fn qdisc_counters_and_backlog_are_read_from_tc_output() {
        let text = "qdisc tbf 1: root refcnt 2 rate 10Mbit burst 15000b lat 1s \n Sent 1234567 bytes 890 pkt (dropped 12, overlimits 3 requeues 0) \n backlog 15Kb 10p requeues 0\nqdisc pfifo 10: parent 1:1 limit 100p\n Sent 1 bytes 1 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n";
        assert_eq!(
            parse_qdisc(text),
            Some(QdiscSample {
                sent_bytes: 1_234_567,
                sent_packets: 890,
                drops: 12,
                backlog_bytes: 15_000,
                backlog_packets: 10,
            })
        );
        assert_eq!(parse_qdisc("garbage"), None);
    }

    #[test]
    fn every_root_qdisc_is_read_from_one_tc_output() {
        let text = "qdisc noqueue 0: dev lo root refcnt 2 \n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n\
qdisc tbf 1: dev rs root refcnt 2 rate 4Mbit burst 10000b lat 1s \n Sent 5200 bytes 100 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n\
qdisc pfifo 10: dev rs parent 1:1 limit 50p\n Sent 5200 bytes 100 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n\
qdisc tbf 1: dev rd root refcnt 2 rate 4Mbit burst 10000b lat 1s \n Sent 1500000 bytes 1000 pkt (dropped 7, overlimits 9 requeues 0) \n backlog 3000b 2p requeues 0\n\
qdisc pfifo 10: dev rd parent 1:1 limit 30p\n Sent 1500000 bytes 1000 pkt (dropped 7, overlimits 0 requeues 0) \n backlog 3000b 2p requeues 0\n";
        let q = parse_root_qdiscs(text);
        let devs: Vec<&str> = q.iter().map(|(d, _)| d.as_str()).collect();
        assert_eq!(devs, ["lo", "rs", "rd"]);
        assert_eq!((q[1].1.sent_packets, q[1].1.drops), (100, 0));
        assert_eq!(
            (q[2].1.sent_bytes, q[2].1.drops, q[2].1.backlog_packets),
            (1_500_000, 7, 2)
        );
        assert!(parse_root_qdiscs("").is_empty());
    }

    /// Drives two copies of a video-fed flow side by side, a frame every `every`: the simulator's
    /// sender and receiver as they are, and the same pair wrapped in [`KernelHeaders`] with
    /// UDP/IPv4's 28 B, the wrapped sender's datagrams carried to its receiver through tfcc's
    /// wire format (encoded and decoded, as the session sends and reads them). No feedback
    /// reaches either sender. Asserts that both senders send at the same times with the same
    /// send buffer after each packet, and returns each packet's (simulator's size, datagram
    /// size) and the bytes each receiver delivered: (simulator, wrapped).
    fn beside_the_simulator<S: Sender, R: Receiver>(
        proto: Protocol,
        tx: impl Fn() -> S,
        rx: impl Fn() -> R,
        frames: &[u64],
        every: tfcc_core::Dur,
    ) -> (Vec<(u32, u32)>, u64, u64) {
        let (mut sim_tx, mut sim_rx) = (tx(), rx());
        let (mut bed_tx, mut bed_rx) = (KernelHeaders::new(tx(), 28), KernelHeaders::new(rx(), 28));
        let mut sizes = Vec::new();
        let mut buf = vec![0u8; 2048];
        let mut now = Time::ZERO;
        for &frame in frames {
            sim_tx.offer(Some(frame));
            bed_tx.offer(Some(frame));
            let until = now + every;
            loop {
                loop {
                    let (a, b) = (sim_tx.poll_transmit(now), bed_tx.poll_transmit(now));
                    let (Some(a), Some(b)) = (a, b) else {
                        assert!(a.is_none() && b.is_none(), "{a:?} {b:?} at {now:?}");
                        break;
                    };
                    assert_eq!(sim_tx.buffered(), bed_tx.buffered());
                    let n = crate::wire::encode(proto, &b, &mut buf, None).unwrap();
                    let (h, _) =
                        crate::wire::decode(proto, crate::wire::Direction::Data, &buf[..n])
                            .unwrap();
                    let datagram = Packet {
                        size: n as u32,
                        header: h,
                    };
                    sizes.push((a.size, datagram.size));
                    sim_rx.on_packet(now, &a);
                    bed_rx.on_packet(now, &datagram);
                    while sim_rx.poll_transmit(now).is_some() {}
                    while bed_rx.poll_transmit(now).is_some() {}
                }
                assert_eq!(sim_tx.next_timeout(), bed_tx.next_timeout());
                match sim_tx.next_timeout() {
                    Some(t) if t < until => {
                        now = now.max(t);
                        sim_tx.on_timeout(now);
                        bed_tx.on_timeout(now);
                    }
                    _ => break,
                }
            }
            now = until;
        }
        assert_eq!(sim_tx.stats(), bed_tx.stats());
        (sizes, sim_rx.delivered_bytes(), bed_rx.delivered_bytes())
    }

    const SEC: tfcc_core::Dur = tfcc_core::Dur::from_secs(1);

    /// A video-fed CBR flow in [`KernelHeaders`]: a 2500-byte frame at 1000 B and 8 Mb/s is
    /// the simulator's three packets 1 ms apart (the remainder a whole packet), each a
    /// 972-byte datagram, 1000 B with UDP/IPv4, and its receiver counts the simulator's 3000 B.
    #[test]
    fn a_video_fed_cbr_flow_keeps_the_simulators_packets_in_shorter_datagrams() {
        let cfg = CbrConfig {
            rate: Rate::from_mbps(8),
            packet_size: 1000,
            on_off: None,
        };
        let mut s = KernelHeaders::new(CbrSender::new(cfg.clone(), Time::ZERO, None), 28);
        s.offer(Some(0));
        assert_eq!((s.buffered(), s.next_timeout()), (Some(0), None));
        s.offer(Some(2500));
        let mut sent = Vec::new();
        let mut now = Time::from_millis(10);
        while let Some(p) = s.poll_transmit(now) {
            sent.push((now, p.size, s.buffered()));
            now = s.next_timeout().unwrap_or(Time::MAX);
        }
        assert_eq!(
            sent,
            [
                (Time::from_millis(10), 972, Some(1500)),
                (Time::from_millis(11), 972, Some(500)),
                (Time::from_millis(12), 972, Some(0)),
            ]
        );
        assert_eq!(s.stats().bytes_sent, 3000);
        let tx = || CbrSender::new(cfg.clone(), Time::ZERO, None);
        let (sizes, sim, bed) = beside_the_simulator(Protocol::Raw, tx, CbrSink::new, &[2500], SEC);
        assert_eq!(sizes, [(1000, 972); 3]);
        assert_eq!((sim, bed), (3000, 3000));
    }

    /// A video-fed TFWC flow (the simulator's 1000-byte packets, all payload) in
    /// [`KernelHeaders`]: each packet takes the simulator's bytes of the frame (1000, 1000,
    /// then the 530 left, in a short packet), not 944 B after tfcc's header, and goes out 28 B
    /// shorter; the receiver counts the simulator's 2530 B. A tail of 10 B (10 B in the
    /// simulator) cannot be a datagram shorter than tfcc's 28-byte TFWC header: it goes out as
    /// that header, 56 B on the wire, and its receiver counts 56 B, the one place the
    /// accounting parts from the simulator's.
    #[test]
    fn a_video_fed_tfwc_flow_takes_the_simulators_bytes_per_packet() {
        let cfg = TfwcConfig {
            initial_window: 10,
            ..TfwcConfig::default()
        };
        assert_eq!((cfg.packet_size, cfg.header_size), (1000, 0));
        let tx = || TfwcSender::new(cfg.clone(), Time::ZERO);
        let rx = || TfwcReceiver::new(&cfg);
        let (sizes, sim, bed) = beside_the_simulator(Protocol::Tfwc, tx, rx, &[2530], SEC);
        assert_eq!(sizes, [(1000, 972), (1000, 972), (530, 502)]);
        assert_eq!((sim, bed), (2530, 2530));
        let (sizes, sim, bed) = beside_the_simulator(Protocol::Tfwc, tx, rx, &[2530, 1010], SEC);
        assert_eq!(sizes[3..], [(1000, 972), (10, 28)]);
        assert_eq!((sim, bed), (3540, 3540 - 10 + 56));
    }

    /// The same for a video-fed TFRC flow (RFC 5348's rules, 002 Ch. 6's TFRC, 1000-byte
    /// packets and no header bytes on top, as 002's scenarios set it): the simulator's packets
    /// and pacing, each datagram 28 B shorter so that it is 1000 B on the wire (it was a
    /// 1000-byte datagram, 1028 B there), and the simulator's bytes at the receiver. A 10-byte
    /// tail goes out as tfcc's 44-byte TFRC header and is counted as 72 B.
    #[test]
    fn a_video_fed_tfrc_flow_takes_the_simulators_bytes_per_packet() {
        let cfg = TfrcConfig {
            packet_size: 1000,
            ..TfrcConfig::rfc5348()
        };
        assert_eq!(cfg.header_size, 0);
        let tx = || TfrcSender::new(cfg.clone());
        let rx = || TfrcReceiver::new(cfg.clone());
        // Without feedback TFRC sends a packet per second or less (RFC 5348 §4.2, §4.4): a
        // minute per frame lets each go out.
        let minute = tfcc_core::Dur::from_secs(60);
        let (sizes, sim, bed) = beside_the_simulator(Protocol::Tfrc, tx, rx, &[2530, 1010], minute);
        assert_eq!(
            sizes,
            [(1000, 972), (1000, 972), (530, 502), (1000, 972), (10, 44)]
        );
        assert_eq!((sim, bed), (3540, 3540 - 10 + 72));
    }
}
