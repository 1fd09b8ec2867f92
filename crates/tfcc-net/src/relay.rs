//! The delay/loss relay: per-flow propagation delay and the scenario's artificial loss, which
//! this kernel cannot give in the kernel (no netem, no fq/etf for EDT timestamps, no BPF qdisc;
//! notes/linux-emulation.md §2).
//!
//! The relay owns a TUN device (`dly0`) in the router namespace. Policy routing sends every
//! packet that arrives at the router from either veth into the TUN; the relay reads it, decides
//! its fate (artificial loss on what crosses the bottleneck's forward direction, before its
//! queue as in the simulator's links), holds it for its flow's one-way delay and writes it back, whereupon the
//! kernel forwards it (packets from the TUN take the main table) through the tbf bottleneck. Both
//! directions pass the TUN once, so a flow's RTT is its forward plus its reverse delay plus
//! queueing, as in the simulator, where the dumbbell's delays sum along each route.
//!
//! Flows are told apart by the receiver's port (the testbed gives flow `i` its own port), which
//! is the destination port of data and the source port of feedback, in either direction (a
//! reverse flow's sender sits on the receivers' side, [`crate::testbed::FlowSpec::reverse`]);
//! packets of no known flow (ping) get [`RelayConfig::default_delay`] and no loss.
//!
//! Counting: the relay is the only way into the bottleneck's queues, and writing a packet into
//! the TUN forwards and enqueues it inside that `write`, so the relay sees every arrival at a
//! queue at the instant a DropTail queue decides to drop it. It counts each flow's data
//! packets written and, for tfcc's protocols, the sequence number of the last one
//! ([`RelayStats::written`], [`RelayStats::last_seq`]), and takes the measurement window's
//! marks itself ([`RelayCommand::At`]), reading the queues' counters with `tc` there between
//! two packets; tfcc-run sets those counts against what each receiver got to split a queue's
//! drops between the flows. Every data packet of a listed flow leaves the relay with the
//! window's epoch in its DSCP bits ([`crate::arrivals::Epoch`]: before the window, in it, after
//! it; set between two packets at the marks) and is counted per flow ([`RelayStats::handed`]),
//! so that a counter at the receiving side ([`crate::arrivals::ArrivalCounter`]) can tell how
//! many of the packets handed to a queue in the window came out of it, for kernel TCP flows
//! too, whose receivers keep no ledger of sequence numbers.
//!
//! Timing: held packets sit in a binary heap keyed by (deadline, arrival order) in a
//! pre-allocated pool of buffers, so there is no allocation per packet. The loop sleeps in
//! `ppoll` until the next deadline minus [`RelayConfig::spin`] and busy-polls the rest, because
//! the VM's timers overshoot by tens of microseconds; with `SCHED_FIFO` (when permitted) rare
//! millisecond stalls of the VM itself remain, which the lateness histogram reports.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use tfcc_core::{Dur, Time};
use tfcc_sim::loss_model::{LossProcess, LossScope, LossSpec};
use tfcc_sim::rng::SimRng;

use crate::arrivals::{set_dscp, Epoch};
use crate::clock::clock_ns;
use crate::wire::{self, Protocol};

/// Name of the relay's TUN device in the router namespace.
pub const TUN_NAME: &str = "dly0";

/// Largest datagram the relay holds: the veths' 1500-byte MTU with room to spare.
const SLOT_BYTES: usize = 2048;

/// One flow's path through the relay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowPath {
    /// The receiver's port: destination port of the data, source port of the feedback.
    pub port: u16,
    /// One-way delay of the data direction (the sum of the route's forward link delays).
    pub forward: Dur,
    /// One-way delay of the feedback direction.
    pub reverse: Dur,
    /// The wire format of a tfcc flow's data, whose sequence numbers the relay notes as it
    /// hands each packet to the bottleneck queue ([`RelayStats::last_seq`]); `None` for a
    /// kernel TCP flow, whose data segments are only counted.
    pub proto: Option<Protocol>,
}

/// What the relay does to each packet.
#[derive(Clone, Debug)]
pub struct RelayConfig {
    /// The flows, by receiver port.
    pub flows: Vec<FlowPath>,
    /// Delay in either direction for packets of no listed flow (ping, ICMP errors).
    pub default_delay: Dur,
    /// Artificial loss applied to the packets of the flows that cross the bottleneck's forward
    /// direction (the bottleneck's loss model: forward flows' data, reverse flows' feedback,
    /// as the simulator's link drops whatever arrives at it); `None`
    /// for a lossless path.
    pub loss: Option<LossSpec>,
    /// Scenario seed: the loss process draws from its own stream of it, like the simulator's
    /// components (tfcc_sim::rng).
    pub seed: u64,
    /// Buffers in the pool: packets held at once. 8192 covers 500 Mb/s × 200 ms of 1500-byte
    /// packets; a packet arriving with the pool full is dropped and counted.
    pub slots: usize,
    /// The last stretch before a deadline that the relay busy-polls instead of sleeping: the
    /// VM's `ppoll` wakes 10-60 µs late (measured), so 50 µs keeps typical lateness in single
    /// microseconds at a small CPU cost.
    pub spin: Dur,
    /// `SCHED_FIFO` priority of the relay thread (0: leave it at normal priority). Without it
    /// up to 0.3 % of packets were 5 ms+ late at 100 Mb/s (notes/linux-emulation.md §2a).
    pub rt_priority: i32,
}

impl Default for RelayConfig {
    fn default() -> Self {
        RelayConfig {
            flows: Vec::new(),
            default_delay: Dur::ZERO,
            loss: None,
            seed: 1,
            slots: 8192,
            spin: Dur::from_micros(50),
            rt_priority: 10,
        }
    }
}

/// A change sent to a running relay.
#[derive(Clone, Debug)]
pub enum RelayCommand {
    /// Replace (or remove) the data direction's loss model from now on (a scheduled loss
    /// event).
    SetLoss(Option<LossSpec>),
    /// While down, flows' packets arriving at the bottleneck's forward direction are dropped (the simulator's link
    /// dropout refuses arrivals; tbf, which the caller pauses, keeps what it has queued).
    SetUp(bool),
    /// Copy the drop counts now into [`RelayStats::at_window`]: the simulator's summary counts
    /// drops in the measurement window only, and the relay is the one place that sees the
    /// loss model's and a dropout's drops, so the window's start is marked where they happen.
    MarkWindow,
    /// Copy the counts now into [`RelayStats::at_end`]: the measurement window's end, after
    /// which drops and hand-overs to the queue no longer count towards the summary.
    MarkEnd,
    /// Apply the command at that instant, between two packets, rather than when it arrives:
    /// a caller's thread can be late by tens of milliseconds on a loaded machine, and a
    /// window mark after the senders' end counted the ICMP errors their closed sockets
    /// returned as crossing the queue in the window.
    At(std::time::Instant, Box<RelayCommand>),
}

/// Lateness of releases (actual write time minus deadline): 1 µs buckets up to 2 ms, then
/// 100 µs buckets up to 200 ms, and the maximum.
#[derive(Clone, Debug)]
pub struct Lateness {
    fine: Vec<u64>,
    coarse: Vec<u64>,
    over: u64,
    count: u64,
    max_ns: u64,
}

const FINE: usize = 2000;
const COARSE: usize = 2000;

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            fine: vec![0; FINE],
            coarse: vec![0; COARSE],
            over: 0,
            count: 0,
            max_ns: 0,
        }
    }
}

impl Lateness {
    fn record(&mut self, ns: u64) {
        self.count += 1;
        self.max_ns = self.max_ns.max(ns);
        let us = (ns / 1000) as usize;
        if us < FINE {
            self.fine[us] += 1;
        } else if us / 100 < COARSE {
            self.coarse[us / 100] += 1;
        } else {
            self.over += 1;
        }
    }

    /// Packets released.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest lateness seen.
    pub fn max(&self) -> Dur {
        Dur(self.max_ns)
    }

    /// The `q` quantile (0..=1), as the upper edge of its bucket; `Dur::ZERO` with no packets.
    pub fn quantile(&self, q: f64) -> Dur {
        if self.count == 0 {
            return Dur::ZERO;
        }
        let want = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.fine.iter().enumerate() {
            seen += n;
            if seen >= want {
                return Dur::from_micros(i as u64 + 1);
            }
        }
        for (i, n) in self.coarse.iter().enumerate() {
            seen += n;
            if seen >= want {
                return Dur::from_micros((i as u64 + 1) * 100);
            }
        }
        Dur(self.max_ns)
    }
}

/// What a relay did, read when it stops.
#[derive(Clone, Debug, Default)]
pub struct RelayStats {
    /// Packets written back (both directions).
    pub forwarded: u64,
    /// Their bytes (IP headers included).
    pub bytes: u64,
    /// Data packets dropped by the loss model.
    pub lost: u64,
    /// Data packets dropped while the bottleneck was down.
    pub down_drops: u64,
    /// Packets dropped because every buffer was in use.
    pub overflow: u64,
    /// Release lateness.
    pub lateness: Lateness,
    /// CPU time of the relay thread (user + system; the kernel's forwarding and tbf enqueue
    /// run inside its `write`).
    pub cpu: Dur,
    /// Wall time the relay ran.
    pub wall: Dur,
    /// Whether `SCHED_FIFO` was granted.
    pub realtime: bool,
    /// Packets the relay read, by whether they belonged to a listed flow.
    pub unknown_flow: u64,
    /// Data packets of each listed flow (by index) the relay took in past its loss model and
    /// dropouts, each written back towards the bottleneck queue after its delay: beside the
    /// sender's and the receiver's counts they tell a loss before the queue from one after it.
    pub data_forwarded: Vec<u64>,
    /// Per flow, its data packets among [`Self::lost`] and [`Self::down_drops`] (those counts
    /// also hold the feedback of reverse flows, which crosses the bottleneck's forward
    /// direction too): a flow's `packets_lost` counts its data only, as the simulator's.
    pub data_lost: Vec<u64>,
    pub data_down: Vec<u64>,
    /// Per flow, its data packets written towards the bottleneck queue (a tfcc flow's with a
    /// sequence number; a kernel TCP flow's segments that carry payload). Writing into the TUN
    /// forwards the packet and enqueues it at the bottleneck in the relay's own `write`
    /// (notes/linux-emulation.md §2a), so this counts the flow's arrivals at the queue, and a
    /// queue drop happens inside that `write`: at the instant it is counted here.
    pub written: Vec<u64>,
    /// Per tfcc flow, the sequence number of the last data packet written.
    pub last_seq: Vec<Option<u64>>,
    /// Per flow, every packet of its data direction written towards the queue, each marked
    /// with the window's epoch: beside [`Self::written`]'s data, a kernel TCP flow's segments
    /// without payload (its handshake, a FIN or reset), which the simulator's count of a
    /// flow's packets includes as it does its SYN.
    pub handed: Vec<u64>,
    /// Per tfcc flow, data packets written with a sequence number not above one written
    /// before it: the relay writes each flow's packets in arrival order (one delay per flow
    /// and direction), so this stays 0 unless the sender sent out of order, which the
    /// accounting by sequence range would then misread (tfcc-run reports no count for it).
    pub out_of_order: Vec<u64>,
    /// Data packets of listed flows whose write into the TUN failed: neither queued nor
    /// counted as dropped.
    pub write_errors: u64,
    /// Packets of no listed flow written towards the receivers' side and towards the
    /// senders' side (ping, ICMP errors): they cross a bottleneck queue without being any
    /// flow's.
    pub stray: [u64; 2],
    /// The longest a mark held the relay (its `tc` reading): packets due meanwhile went out
    /// that much late, which the lateness histogram includes.
    pub mark_pause: Dur,
    /// The longest from a mark's due time to the end of its `tc` reading: the relay's lateness
    /// in handling the mark plus its pause. tc's counters are of some instant in that span,
    /// while the queues keep sending, so a window's edge in tc's counts can lie that much after
    /// the mark's time.
    pub mark_span: Dur,
    /// The counts when [`RelayCommand::MarkWindow`] arrived; `None` if it never did.
    pub at_window: Option<DropCounts>,
    /// The counts when [`RelayCommand::MarkEnd`] arrived; `None` if it never did.
    pub at_end: Option<DropCounts>,
}

/// The relay's counts at one instant (see [`RelayStats`] for each).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DropCounts {
    pub lost: u64,
    pub down_drops: u64,
    pub data_lost: Vec<u64>,
    pub data_down: Vec<u64>,
    pub written: Vec<u64>,
    pub last_seq: Vec<Option<u64>>,
    pub handed: Vec<u64>,
    /// [`RelayStats::stray`].
    pub stray: [u64; 2],
    /// The router's root qdiscs (`tc -s`), read by the relay thread at a mark; empty
    /// otherwise. Every packet reaches the bottleneck queues inside the relay's `write`, and a
    /// queue drops only on arrival, so while the relay thread waits for `tc` no queue drops
    /// anything: these drop counts and the relay's own are of one instant.
    pub qdiscs: Vec<(String, crate::testbed::QdiscSample)>,
}

impl DropCounts {
    /// Drops counted since `earlier`, a reading of the same relay.
    pub fn since(&self, earlier: &DropCounts) -> DropCounts {
        let diff = |a: &[u64], b: &[u64]| {
            a.iter()
                .enumerate()
                .map(|(i, x)| x.saturating_sub(b.get(i).copied().unwrap_or(0)))
                .collect()
        };
        DropCounts {
            lost: self.lost.saturating_sub(earlier.lost),
            down_drops: self.down_drops.saturating_sub(earlier.down_drops),
            data_lost: diff(&self.data_lost, &earlier.data_lost),
            data_down: diff(&self.data_down, &earlier.data_down),
            written: diff(&self.written, &earlier.written),
            handed: diff(&self.handed, &earlier.handed),
            // A position, not a count: the later reading's.
            last_seq: self.last_seq.clone(),
            stray: [0, 1].map(|k| self.stray[k].saturating_sub(earlier.stray[k])),
            qdiscs: Vec::new(),
        }
    }
}

impl RelayStats {
    /// The counts now (at the end, once the relay has stopped).
    pub fn drop_counts(&self) -> DropCounts {
        DropCounts {
            lost: self.lost,
            down_drops: self.down_drops,
            data_lost: self.data_lost.clone(),
            data_down: self.data_down.clone(),
            written: self.written.clone(),
            last_seq: self.last_seq.clone(),
            handed: self.handed.clone(),
            stray: self.stray,
            qdiscs: Vec::new(),
        }
    }

    /// The counts at the measurement window's start and end: at [`RelayCommand::MarkWindow`]
    /// (all zero if it was never sent) and at [`RelayCommand::MarkEnd`] (now if it was never
    /// sent).
    pub fn window_edges(&self) -> (DropCounts, DropCounts) {
        let n = self.data_lost.len();
        let start = self.at_window.clone().unwrap_or_else(|| DropCounts {
            data_lost: vec![0; n],
            data_down: vec![0; n],
            written: vec![0; n],
            last_seq: vec![None; n],
            handed: vec![0; n],
            ..DropCounts::default()
        });
        let end = self.at_end.clone().unwrap_or_else(|| self.drop_counts());
        (start, end)
    }

    /// The drops of the measurement window: between [`RelayCommand::MarkWindow`] and
    /// [`RelayCommand::MarkEnd`], or from the run's start or to its end where one was not
    /// sent.
    pub fn window_drops(&self) -> DropCounts {
        let (start, end) = self.window_edges();
        end.since(&start)
    }

    /// The counts now with the router's qdiscs (`tc`, in namespace `ns`), read by the relay
    /// thread so that no packet reaches a queue in between.
    fn mark(&self, ns: &str) -> DropCounts {
        DropCounts {
            qdiscs: crate::testbed::root_qdisc_samples(ns),
            ..self.drop_counts()
        }
    }

    /// CPU seconds per second of wall time (1.0 = one core).
    pub fn cpu_share(&self) -> f64 {
        self.cpu.as_secs_f64() / self.wall.as_secs_f64().max(1e-9)
    }
}

/// Which way a packet goes and its ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Class {
    /// Towards the receivers' side (10.78.2.0/24): the packet crosses the bottleneck's
    /// forward direction, whether it is a forward flow's data or a reverse flow's feedback.
    pub forward: bool,
    /// Source and destination port, if the packet is the first fragment of TCP or UDP.
    pub ports: Option<(u16, u16)>,
}

impl Class {
    /// The flow of `flows` the packet belongs to and whether it is that flow's data: a flow is
    /// known by its receiver's port, the destination of its data and the source of its
    /// feedback. The senders' ports are ephemeral (32768 and up), never a testbed flow port,
    /// so the two lookups cannot confuse one flow's data with another's feedback. A reverse
    /// flow's data thus gets its own forward delay while it crosses the bottleneck's reverse
    /// direction.
    pub fn flow(&self, flows: &[FlowPath]) -> Option<(usize, bool)> {
        let (src, dst) = self.ports?;
        if let Some(i) = flows.iter().position(|f| f.port == dst) {
            return Some((i, true));
        }
        flows.iter().position(|f| f.port == src).map(|i| (i, false))
    }
}

/// Classifies an IPv4 packet; `None` for anything else or a truncated header.
pub fn classify(pkt: &[u8]) -> Option<Class> {
    let first = *pkt.first()?;
    if first >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(first & 0x0f) * 4;
    if ihl < 20 || pkt.len() < ihl {
        return None;
    }
    let forward = pkt[16..19] == [10, 78, 2];
    let frag_offset = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x1fff;
    let ports = match pkt[9] {
        6 | 17 if frag_offset == 0 && pkt.len() >= ihl + 4 => Some((
            u16::from_be_bytes([pkt[ihl], pkt[ihl + 1]]),
            u16::from_be_bytes([pkt[ihl + 2], pkt[ihl + 3]]),
        )),
        _ => None,
    };
    Some(Class { forward, ports })
}

/// In the relay's per-slot owner table: a flow's packet that is not counted as its data
/// (feedback, a TCP segment without payload), and packets of no flow, towards the receivers'
/// side and the senders' side; below them, the index of the flow whose data it is.
const NOT_DATA: u32 = u32::MAX - 2;
const STRAY_FORWARD: u32 = u32::MAX - 1;

/// The UDP payload of an unfragmented IPv4/UDP packet.
fn udp_payload(pkt: &[u8]) -> Option<&[u8]> {
    let ihl = usize::from(pkt.first()? & 0x0f) * 4;
    let frag = u16::from_be_bytes([*pkt.get(6)?, *pkt.get(7)?]) & 0x3fff;
    if *pkt.get(9)? != 17 || frag != 0 {
        return None;
    }
    pkt.get(ihl + 8..)
}

/// The payload bytes of an IPv4/TCP segment (IP total length less both headers).
fn tcp_payload(pkt: &[u8]) -> Option<usize> {
    let ihl = usize::from(pkt.first()? & 0x0f) * 4;
    if *pkt.get(9)? != 6 {
        return None;
    }
    let total = usize::from(u16::from_be_bytes([*pkt.get(2)?, *pkt.get(3)?]));
    let doff = usize::from(pkt.get(ihl + 12)? >> 4) * 4;
    total.checked_sub(ihl + doff)
}

/// A running relay; [`Relay::stop`] ends it and returns its statistics. Dropping it without
/// stopping also stops the thread.
#[derive(Debug)]
pub struct Relay {
    stop: Arc<AtomicBool>,
    commands: mpsc::Sender<RelayCommand>,
    thread: Option<JoinHandle<io::Result<RelayStats>>>,
}

fn sh(args: &[&str]) -> io::Result<()> {
    let out = Command::new(args[0]).args(&args[1..]).output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

impl Relay {
    /// Starts the relay in namespace `router_ns` and routes everything arriving on the
    /// router's veths `ifaces` through it.
    pub fn start(router_ns: &str, ifaces: &[&str], cfg: RelayConfig) -> io::Result<Relay> {
        if let Some(l) = &cfg.loss {
            l.model.validate().map_err(io::Error::other)?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel::<io::Result<()>>();
        let (cmd_tx, cmd_rx) = mpsc::channel();
        let ns = router_ns.to_string();
        let stop2 = stop.clone();
        let thread = thread::Builder::new()
            .name("tfcc-relay".into())
            .spawn(move || {
                let fd = match crate::testbed::enter(&ns).and_then(|()| open_tun(TUN_NAME)) {
                    Ok(fd) => {
                        let _ = ready_tx.send(Ok(()));
                        fd
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(io::Error::new(e.kind(), e.to_string())));
                        return Err(e);
                    }
                };
                run_relay(fd, cfg, &ns, &stop2, &cmd_rx)
            })?;
        let mut relay = Relay {
            stop,
            commands: cmd_tx,
            thread: Some(thread),
        };
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(io::Error::other("relay thread died")),
        }
        let n = router_ns;
        let setup = || -> io::Result<()> {
            sh(&["ip", "-n", n, "link", "set", TUN_NAME, "up"])?;
            sh(&[
                "ip", "-n", n, "route", "add", "default", "dev", TUN_NAME, "table", "100",
            ])?;
            for (k, dev) in ifaces.iter().enumerate() {
                let pref = (100 + k).to_string();
                sh(&[
                    "ip", "-n", n, "rule", "add", "pref", &pref, "iif", dev, "lookup", "100",
                ])?;
            }
            // Packets come back from the TUN with the "wrong" source for its (lack of) routes.
            for conf in ["all", TUN_NAME] {
                sh(&[
                    "ip",
                    "netns",
                    "exec",
                    n,
                    "sysctl",
                    "-qw",
                    &format!("net.ipv4.conf.{conf}.rp_filter=0"),
                ])?;
            }
            Ok(())
        };
        if let Err(e) = setup() {
            let _ = relay.halt();
            return Err(e);
        }
        Ok(relay)
    }

    /// Sends a change to the running relay (applied within a few microseconds).
    pub fn command(&self, c: RelayCommand) {
        let _ = self.commands.send(c);
    }

    fn halt(&mut self) -> io::Result<RelayStats> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| io::Error::other("relay thread panicked"))?,
            None => Err(io::Error::other("relay already stopped")),
        }
    }

    /// Stops the relay and returns what it did. Traffic then no longer passes the router
    /// (its TUN is gone with the relay's descriptor).
    pub fn stop(mut self) -> io::Result<RelayStats> {
        self.halt()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.halt();
        }
    }
}

#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// `_IOW('T', 202, int)` from linux/if_tun.h.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// Opens (creating it in the calling thread's namespace) the TUN device `name`, non-blocking,
/// without packet-information header.
fn open_tun(name: &str) -> io::Result<OwnedFd> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")?;
    let mut req = IfReq {
        name: [0; 16],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    let b = name.as_bytes();
    if b.len() >= 16 {
        return Err(io::Error::other("TUN name too long"));
    }
    req.name[..b.len()].copy_from_slice(b);
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which IfReq lays out (40 bytes).
    if unsafe { libc::ioctl(f.as_raw_fd(), TUNSETIFF, &mut req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fcntl on an open descriptor.
    unsafe {
        let fl = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if fl < 0 || libc::fcntl(f.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(f.into())
}

/// The data direction's loss processes.
enum Loss {
    None,
    Aggregate(LossProcess),
    PerFlow(Vec<LossProcess>),
}

impl Loss {
    fn new(spec: &Option<LossSpec>, flows: usize, seed: u64, epoch: u64, now: Time) -> Loss {
        let Some(spec) = spec else {
            return Loss::None;
        };
        let rng = |name: String| SimRng::named(seed, &format!("relay/loss/{epoch}/{name}"));
        match spec.scope {
            LossScope::Aggregate => {
                Loss::Aggregate(LossProcess::new(spec.model.clone(), now, rng("all".into())))
            }
            LossScope::PerFlow => Loss::PerFlow(
                (0..flows)
                    .map(|i| LossProcess::new(spec.model.clone(), now, rng(i.to_string())))
                    .collect(),
            ),
        }
    }

    fn drops(&mut self, flow: usize, now: Time) -> bool {
        match self {
            Loss::None => false,
            Loss::Aggregate(p) => p.drops(now),
            Loss::PerFlow(ps) => ps.get_mut(flow).is_some_and(|p| p.drops(now)),
        }
    }
}

fn set_realtime(prio: i32) -> bool {
    if prio <= 0 {
        return false;
    }
    let p = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: pid 0 is the calling thread; `p` is a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

fn run_relay(
    fd: OwnedFd,
    cfg: RelayConfig,
    ns: &str,
    stop: &AtomicBool,
    commands: &mpsc::Receiver<RelayCommand>,
) -> io::Result<RelayStats> {
    let fd = fd.as_raw_fd();
    let mut st = RelayStats {
        realtime: set_realtime(cfg.rt_priority),
        data_forwarded: vec![0; cfg.flows.len()],
        data_lost: vec![0; cfg.flows.len()],
        data_down: vec![0; cfg.flows.len()],
        written: vec![0; cfg.flows.len()],
        last_seq: vec![None; cfg.flows.len()],
        handed: vec![0; cfg.flows.len()],
        out_of_order: vec![0; cfg.flows.len()],
        ..RelayStats::default()
    };
    let origin = clock_ns(libc::CLOCK_MONOTONIC);
    let cpu0 = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
    let now = || clock_ns(libc::CLOCK_MONOTONIC).saturating_sub(origin);
    let slots = cfg.slots.max(1);
    let mut pool = vec![0u8; slots * SLOT_BYTES];
    let mut lens = vec![0u16; slots];
    // Per held packet: the flow whose data it is ([`NOT_DATA`] otherwise) and its sequence
    // number (tfcc data), counted when it is written.
    let mut owner = vec![NOT_DATA; slots];
    let mut seqs: Vec<Option<u64>> = vec![None; slots];
    // Per held packet: the flow whose data direction it travels in ([`NOT_DATA`] otherwise),
    // marked with the epoch of the instant it is written.
    let mut data_of = vec![NOT_DATA; slots];
    let mut window = Epoch::Before;
    let mut free: Vec<u32> = (0..slots as u32).rev().collect();
    let mut heap: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::with_capacity(slots);
    let mut scratch = [0u8; SLOT_BYTES];
    let mut seq = 0u64;
    let mut epoch = 0u64;
    let mut loss = Loss::new(&cfg.loss, cfg.flows.len(), cfg.seed, epoch, Time(now()));
    let mut up = true;
    let spin = cfg.spin.0;
    // Scheduled commands by relay time, earliest first; commands to apply now.
    let mut pending: Vec<(u64, RelayCommand)> = Vec::new();
    let mut due: Vec<(u64, RelayCommand)> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        while let Ok(c) = commands.try_recv() {
            match c {
                RelayCommand::At(when, c) => {
                    let left = when.saturating_duration_since(std::time::Instant::now());
                    let at = now() + u64::try_from(left.as_nanos()).unwrap_or(u64::MAX / 2);
                    let k = pending.partition_point(|p| p.0 <= at);
                    pending.insert(k, (at, *c));
                }
                c => due.push((now(), c)),
            }
        }
        let t = now();
        while pending.first().is_some_and(|p| p.0 <= t) {
            due.push(pending.remove(0));
        }
        for (at, c) in due.drain(..) {
            match c {
                // Scheduled from a scheduled command: not a case the testbed has.
                RelayCommand::At(..) => {}
                RelayCommand::SetLoss(l) => {
                    epoch += 1;
                    loss = Loss::new(&l, cfg.flows.len(), cfg.seed, epoch, Time(now()));
                }
                RelayCommand::SetUp(u) => up = u,
                RelayCommand::MarkWindow | RelayCommand::MarkEnd => {
                    let t0 = now();
                    let m = Some(st.mark(ns));
                    let t1 = now();
                    st.mark_pause = st.mark_pause.max(Dur(t1.saturating_sub(t0)));
                    st.mark_span = st.mark_span.max(Dur(t1.saturating_sub(at)));
                    if matches!(c, RelayCommand::MarkWindow) {
                        st.at_window = m;
                        window = Epoch::In;
                    } else {
                        st.at_end = m;
                        window = Epoch::After;
                    }
                }
            }
        }
        // Release what is due.
        let mut t = now();
        while let Some(&Reverse((deadline, _, slot))) = heap.peek() {
            // A scheduled command falls between the packets before and after its time.
            if deadline > t || pending.first().is_some_and(|p| p.0 <= t) {
                break;
            }
            heap.pop();
            let s = slot as usize;
            let buf = &mut pool[s * SLOT_BYTES..s * SLOT_BYTES + usize::from(lens[s])];
            let marked = data_of[s] != NOT_DATA && set_dscp(buf, window.dscp());
            // SAFETY: writing an initialised buffer of its own length to our descriptor.
            let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
            if n > 0 {
                st.forwarded += 1;
                st.bytes += n as u64;
                if marked {
                    st.handed[data_of[s] as usize] += 1;
                }
            }
            if owner[s] >= STRAY_FORWARD {
                if n > 0 {
                    st.stray[(owner[s] - STRAY_FORWARD) as usize] += 1;
                }
            } else if owner[s] != NOT_DATA {
                let i = owner[s] as usize;
                if n > 0 {
                    st.written[i] += 1;
                    if let Some(q) = seqs[s] {
                        if st.last_seq[i].is_some_and(|l| q <= l) {
                            st.out_of_order[i] += 1;
                        }
                        st.last_seq[i] = Some(st.last_seq[i].map_or(q, |l| l.max(q)));
                    }
                } else {
                    st.write_errors += 1;
                }
            }
            st.lateness.record(t.saturating_sub(deadline));
            free.push(slot);
            t = now();
        }
        // Take in what arrived, up to a batch so releases are not starved.
        let mut got = 0;
        for _ in 0..64 {
            let slot = free.pop();
            let buf: &mut [u8] = match slot {
                Some(s) => &mut pool[s as usize * SLOT_BYTES..(s as usize + 1) * SLOT_BYTES],
                None => &mut scratch,
            };
            // SAFETY: reading into a writable buffer of its own length.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                if let Some(s) = slot {
                    free.push(s);
                }
                break;
            }
            got += 1;
            let len = n as usize;
            let Some(s) = slot else {
                st.overflow += 1;
                continue;
            };
            let arrival = now();
            let class = classify(&buf[..len]);
            let flow = class.and_then(|c| c.flow(&cfg.flows));
            // Crossing the bottleneck's forward direction (towards the receivers' side):
            // where the scenario's loss model and dropouts act, on every packet that link
            // carries, as in the simulator (a forward flow's data, a reverse flow's feedback).
            let crosses_forward = class.is_some_and(|c| c.forward);
            let delay = match flow {
                Some((i, true)) => cfg.flows[i].forward,
                Some((i, false)) => cfg.flows[i].reverse,
                None => {
                    st.unknown_flow += 1;
                    cfg.default_delay
                }
            };
            if let (Some((i, data)), true) = (flow, crosses_forward) {
                if !up {
                    st.down_drops += 1;
                    st.data_down[i] += u64::from(data);
                    free.push(s);
                    continue;
                }
                if loss.drops(i, Time(arrival)) {
                    st.lost += 1;
                    st.data_lost[i] += u64::from(data);
                    free.push(s);
                    continue;
                }
            }
            data_of[s as usize] = match flow {
                Some((i, true)) => i as u32,
                _ => NOT_DATA,
            };
            owner[s as usize] = match (flow, class) {
                (None, Some(c)) => STRAY_FORWARD + u32::from(!c.forward),
                (None, None) => STRAY_FORWARD,
                _ => NOT_DATA,
            };
            if let Some((i, true)) = flow {
                st.data_forwarded[i] += 1;
                let pkt = &buf[..len];
                match cfg.flows[i].proto {
                    Some(p) => {
                        seqs[s as usize] = udp_payload(pkt)
                            .and_then(|d| wire::decode(p, wire::Direction::Data, d).ok())
                            .and_then(|(h, _)| wire::data_seq(&h));
                        if seqs[s as usize].is_some() {
                            owner[s as usize] = i as u32;
                        }
                    }
                    None => {
                        seqs[s as usize] = None;
                        if tcp_payload(pkt).is_some_and(|n| n > 0) {
                            owner[s as usize] = i as u32;
                        }
                    }
                }
            }
            lens[s as usize] = len as u16;
            heap.push(Reverse((arrival + delay.0, seq, s)));
            seq += 1;
        }
        if got > 0 {
            continue;
        }
        // Nothing to read: sleep until the next deadline (minus the spin), or 10 ms.
        let t = now();
        let wait = heap
            .peek()
            .map_or(10_000_000, |Reverse((d, _, _))| d.saturating_sub(t))
            .min(pending.first().map_or(u64::MAX, |p| p.0.saturating_sub(t)))
            .min(10_000_000);
        if wait <= spin {
            continue;
        }
        let sleep = wait - spin;
        let ts = libc::timespec {
            tv_sec: (sleep / 1_000_000_000) as libc::time_t,
            tv_nsec: (sleep % 1_000_000_000) as libc::c_long,
        };
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, a valid timeout, no signal mask.
        unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    }
    st.cpu = Dur(clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(cpu0));
    st.wall = Dur(now());
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(proto: u8, dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
        let mut p = vec![0u8; 28];
        p[0] = 0x45;
        p[9] = proto;
        p[12..16].copy_from_slice(&[10, 78, 1, 1]);
        p[16..20].copy_from_slice(&dst);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p
    }

    #[test]
    fn data_is_classified_by_destination_port_and_feedback_by_source_port() {
        let flows = [5001, 5002, 5003].map(|port| FlowPath {
            port,
            forward: Dur::ZERO,
            reverse: Dur::ZERO,
            proto: None,
        });
        let data = classify(&ipv4(17, [10, 78, 2, 1], 40000, 5001)).unwrap();
        assert!(data.forward);
        assert_eq!(data.ports, Some((40000, 5001)));
        assert_eq!(data.flow(&flows), Some((0, true)));
        let ack = classify(&ipv4(6, [10, 78, 1, 1], 5002, 40000)).unwrap();
        assert!(!ack.forward);
        assert_eq!(ack.flow(&flows), Some((1, false)));
        // A reverse flow (sender on the receivers' side): its data heads left to the
        // receiver's port, its feedback heads right from it, across the forward bottleneck.
        let rev_data = classify(&ipv4(17, [10, 78, 1, 1], 41000, 5003)).unwrap();
        assert_eq!(
            (rev_data.forward, rev_data.flow(&flows)),
            (false, Some((2, true)))
        );
        let rev_ack = classify(&ipv4(17, [10, 78, 2, 1], 5003, 41000)).unwrap();
        assert_eq!(
            (rev_ack.forward, rev_ack.flow(&flows)),
            (true, Some((2, false)))
        );
        let ping = classify(&ipv4(1, [10, 78, 2, 1], 0, 0)).unwrap();
        assert_eq!((ping.ports, ping.flow(&flows)), (None, None));
        let stranger = classify(&ipv4(17, [10, 78, 2, 1], 40000, 9)).unwrap();
        assert_eq!(stranger.flow(&flows), None);
    }

    #[test]
    fn truncated_or_foreign_packets_are_unclassified_not_a_panic() {
        assert_eq!(classify(&[]), None);
        assert_eq!(classify(&[0x60; 40]), None); // IPv6
        assert_eq!(classify(&[0x4f; 10]), None); // IHL beyond the packet
        let mut frag = ipv4(17, [10, 78, 2, 1], 1, 5001);
        frag[7] = 3; // a later fragment carries no ports
        assert_eq!(classify(&frag).unwrap().ports, None);
        assert_eq!(
            classify(&ipv4(17, [10, 78, 2, 1], 1, 2)[..22])
                .unwrap()
                .ports,
            None
        );
    }

    #[test]
    fn window_drops_are_the_counts_since_the_mark() {
        let mut st = RelayStats {
            lost: 5,
            down_drops: 2,
            data_lost: vec![3, 1],
            data_down: vec![2, 0],
            ..RelayStats::default()
        };
        // Never marked: the whole run.
        assert_eq!(st.window_drops(), st.drop_counts());
        st.at_window = Some(st.drop_counts());
        st.lost += 4;
        st.down_drops += 7;
        st.data_lost[1] += 4;
        st.data_down[0] += 6;
        let w = st.window_drops();
        assert_eq!((w.lost, w.down_drops), (4, 7));
        assert_eq!((w.data_lost, w.data_down), (vec![0, 4], vec![6, 0]));
    }

    #[test]
    fn the_window_ends_at_its_end_mark() {
        let mut st = RelayStats {
            data_lost: vec![0],
            data_down: vec![0],
            written: vec![10],
            last_seq: vec![Some(9)],
            ..RelayStats::default()
        };
        let (a, b) = st.window_edges();
        // No marks: from nothing to now.
        assert_eq!((a.written, a.last_seq), (vec![0], vec![None]));
        assert_eq!(b.last_seq, vec![Some(9)]);
        st.at_window = Some(st.drop_counts());
        st.written[0] = 30;
        st.last_seq[0] = Some(29);
        st.data_lost[0] = 2;
        st.lost = 2;
        st.at_end = Some(st.drop_counts());
        // After the end mark: not the window's.
        st.written[0] = 40;
        st.data_lost[0] = 5;
        st.lost = 5;
        let w = st.window_drops();
        assert_eq!((w.lost, w.data_lost, w.written), (2, vec![2], vec![20]));
        let (a, b) = st.window_edges();
        assert_eq!((a.last_seq, b.last_seq), (vec![Some(9)], vec![Some(29)]));
    }

    #[test]
    fn payloads_are_found_behind_the_headers() {
        let mut udp = ipv4(17, [10, 78, 2, 1], 40000, 5001);
        udp.extend_from_slice(&[7; 12]);
        assert_eq!(udp_payload(&udp), Some(&[7u8; 12][..]));
        let mut frag = udp.clone();
        frag[6] = 0x20; // more fragments follow: not a whole datagram
        assert_eq!(udp_payload(&frag), None);
        assert_eq!(udp_payload(&udp[..10]), None);
        // TCP: 20 B IP + 32 B TCP header (doff 8) + 100 B of data.
        let mut tcp = ipv4(6, [10, 78, 2, 1], 40000, 5001);
        tcp.resize(152, 0);
        tcp[2..4].copy_from_slice(&152u16.to_be_bytes());
        tcp[32] = 8 << 4;
        assert_eq!(tcp_payload(&tcp), Some(100));
        // A pure ACK carries none; a UDP packet is not TCP; a truncated one is not read.
        tcp[2..4].copy_from_slice(&52u16.to_be_bytes());
        assert_eq!(tcp_payload(&tcp), Some(0));
        assert_eq!(tcp_payload(&udp), None);
        assert_eq!(tcp_payload(&tcp[..30]), None);
    }

    #[test]
    fn lateness_quantiles_come_from_the_histogram() {
        let mut l = Lateness::default();
        for _ in 0..98 {
            l.record(3_500); // 3.5 µs
        }
        l.record(1_500_000); // 1.5 ms
        l.record(50_000_000); // 50 ms
        assert_eq!(l.quantile(0.5), Dur::from_micros(4));
        assert_eq!(l.quantile(0.99), Dur::from_micros(1501));
        assert_eq!(l.quantile(1.0), Dur::from_micros(50_100));
        assert_eq!(l.max(), Dur(50_000_000));
        assert_eq!(Lateness::default().quantile(0.5), Dur::ZERO);
    }
}
