//! The simulation: a topology, flows and scheduled events driven by the event queue to a
//! [`RunResult`].
//!
//! Event economy (STYLE.md, "htsim"): a busy link has one pending `TxDone`; a non-empty
//! propagation pipe has one pending `Arrive` for its head; each endpoint has at most one live
//! timer event. Endpoint timers are cancelled lazily: the flow remembers the deadline it has an
//! event for (`armed`), schedules a new event only when the endpoint wants to be woken *earlier*,
//! and ignores events whose time no longer matches. A TCP sender that pushes its RTO back on
//! every ACK therefore costs no event per ACK: the old event fires, finds the deadline moved,
//! and re-arms once.

use crate::engine::{EventQueue, Rank, Ties};
use crate::flow::{FlowSpec, ReceiverImpl, SenderImpl};
use crate::frames::FrameLog;
use crate::link::{Link, LinkCounters, LinkId, Wake};
use crate::loss_model::LossSpec;
use crate::packet_pool::{Direction, PacketId, PacketMeta, PacketPool};
use crate::recorder::{
    counts_in_window, jain_index, FlowSample, FlowSummary, FlowTotals, LinkSample, LinkSummary,
    LinkTotals, Moments, PtcpCtrlSlot, PtcpEvalSlot, PtcpRecord, RunResult, RunSummary,
    VideoRecord, WindowGoodput,
};
use crate::topology::Topology;
use crate::trace::{PacketTrace, TraceConfig, TraceEvent, TraceRecord};
use crate::video::{VideoConfig, VideoCounts, VideoSource};
use crate::web::WebGateway;
use crate::SimError;
use std::collections::VecDeque;
use tfcc_core::tcp::ptcp::Regime;
use tfcc_core::tcp::{PathSource, TcpSender};
use tfcc_core::{Dur, Header, Packet, Rate, Time};

/// Run-wide settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Simulated time to run.
    pub duration: Dur,
    /// Summary metrics ignore what happens before this (DESIGN.md `measure_from`).
    pub measure_from: Dur,
    /// The scenario seed every random stream derives from.
    pub seed: u64,
    /// Time-series sampling interval; 100 ms by default (see [`crate::recorder`]).
    pub sample_interval: Dur,
    /// Keep the per-interval time series (the summary is computed either way).
    pub record_series: bool,
    /// The links whose time series are kept; `None` for all. A dumbbell has four access links
    /// per flow, which nobody plots: at 128 flows their samples were most of a run's memory.
    pub series_links: Option<Vec<LinkId>>,
    /// How often the progress callback is called, in simulated time.
    pub progress_interval: Dur,
    /// The per-packet trace to record, if any ([`crate::trace`]).
    pub trace: Option<TraceConfig>,
    /// Who goes first when a packet arrives at a link as its transmission ends ([`Ties`]).
    pub ties: Ties,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            duration: Dur::from_secs(10),
            measure_from: Dur::ZERO,
            seed: 1,
            sample_interval: Dur::from_millis(100),
            record_series: true,
            series_links: None,
            progress_interval: Dur::from_secs(1),
            trace: None,
            ties: Ties::Fifo,
        }
    }
}

/// A change to a link at a given time (DESIGN.md `[[events]]`).
#[derive(Clone, Debug, PartialEq)]
pub enum LinkAction {
    SetRate(Rate),
    /// Install, replace or (`None`) remove the artificial loss model.
    SetLoss(Option<LossSpec>),
    /// `false` takes the link down (a dropout), `true` brings it back.
    SetUp(bool),
    /// `true` stalls the link (it holds arrivals instead of dropping them), `false` releases it
    /// ([`crate::link::Link::set_stalled`]).
    SetStalled(bool),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledEvent {
    pub at: Time,
    pub link: LinkId,
    pub action: LinkAction,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    TxDone(LinkId),
    Arrive(LinkId),
    Timer {
        flow: u32,
        side: Side,
    },
    FlowStart(u32),
    FlowStop(u32),
    Scheduled(u32),
    MeasureStart,
    Sample,
    Progress,
    /// The web gateway's next deadline ([`Simulation::set_web`]).
    Web,
    Oracle,
    /// The next frame of video source `i` ([`Simulation::add_video`]).
    Frame(u32),
}

/// How often PTCP senders with `estimator = "oracle"` are told `A` and `P` (spec 001 §2.9,
/// option 1). 5 ms is a sixth of the thesis' RTT, so the averaging window, not the tick, sets
/// how fresh the value is.
const ORACLE_TICK: Dur = Dur::from_millis(5);

/// The simulation oracle for one PTCP sender: `P` is the rate of the slowest link on its
/// forward route (the bottleneck), `A = P −` the bytes arriving there from everyone else
/// (offered load, drops included) over the last [`tfcc_core::tcp::PtcpConfig::oracle_window`],
/// in packets of the sender's own wire size.
struct OracleFeed {
    flow: u32,
    /// The flows whose bytes are not cross traffic: this one, or every member of its PTCP
    /// aggregate (001 Sec. 2.3: `A` is the path's room for the whole aggregate).
    own: Vec<u32>,
    link: LinkId,
    wire_bytes: f64,
    window: Dur,
    /// `(time, bytes arrived at the link, of which the flow's own)`.
    hist: VecDeque<(Time, u64, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Sender,
    Receiver,
}

impl Side {
    fn idx(self) -> usize {
        match self {
            Side::Sender => 0,
            Side::Receiver => 1,
        }
    }
}

/// Per-flow counters of the simulator's own (protocol-independent) accounting.
#[derive(Clone, Copy, Debug, Default)]
struct FlowCount {
    sent: [u64; 2],
    delivered: [u64; 2],
    dropped: [u64; 2],
}

/// What is read at the start of the measurement window.
#[derive(Clone, Copy, Debug, Default)]
struct FlowMark {
    delivered_bytes: u64,
    count: FlowCount,
    loss_events: u64,
    /// The receiver's loss-event count (equation-based receivers count them, 004 Sec. 3.4).
    rx_loss_events: u64,
    /// The packets the receiver's loss detector has judged (`Stats::packets_judged`), the
    /// denominator of a receiver-counted loss event rate.
    rx_judged: u64,
    stats_sent: u64,
    retransmits: u64,
    timeouts: u64,
    spurious_timeouts: u64,
    /// The receiver's timeouts (WARC's fluid timeouts).
    rx_timeouts: u64,
}

/// A flow's run-time state. The fields beside `book` are what a packet of the flow reads or
/// writes on its way; `book` holds what only set-up, samples and the summary read, in one
/// block, so that it does not spread the per-packet fields over more cache lines (with
/// thousands of flows taking turns, each line a packet touches is a cache miss).
struct FlowRt {
    sender: SenderImpl,
    receiver: ReceiverImpl,
    /// Where the route's forward and reverse links start in `World::route_links`.
    path: [u32; 2],
    active: bool,
    armed: [Time; 2],
    count: FlowCount,
    /// The link whose arrivals the PTCP oracle watches for this flow (`LinkId::MAX` for none),
    /// and the flow's own bytes that arrived there.
    oracle_link: LinkId,
    oracle_bytes: u64,
    book: FlowBook,
}

/// The part of a flow's state that no packet reads (see [`FlowRt`]).
struct FlowBook {
    protocol: String,
    route: u32,
    /// The route's propagation delays, forward and back, as configured at the start (no
    /// queueing or transmission time): the flow's RTT as a set-up states it (003 E2.2's
    /// "shortest-RTT flow", ns-2's per-flow link delays), in seconds
    /// (`Topology::base_rtt_s`, which sums beyond the clock: a path longer than the clock is a
    /// valid, if odd, set-up whose packets never arrive).
    base_rtt_s: f64,
    start: Time,
    stop: Time,
    mark: FlowMark,
    /// Goodput per sampling interval, and the summary's CoV of it.
    goodput: WindowGoodput,
    rtt: Moments,
}

fn dir_idx(d: Direction) -> usize {
    match d {
        Direction::Forward => 0,
        Direction::Reverse => 1,
    }
}

/// A simulation being set up. Fill it with flows and events, then [`Simulation::run`].
pub struct Simulation {
    cfg: SimConfig,
    topology: Topology,
    flows: Vec<FlowSpec>,
    events: Vec<ScheduledEvent>,
    web: Option<WebGateway>,
    videos: Vec<(u32, VideoConfig)>,
    flow_sink: Option<FlowSink>,
}

/// Where the per-flow samples go instead of [`RunResult::flow_series`]
/// ([`Simulation::set_flow_sink`]).
pub type FlowSink = Box<dyn FnMut(&FlowSample) + Send>;

impl Simulation {
    pub fn new(cfg: SimConfig, topology: Topology) -> Result<Simulation, SimError> {
        if cfg.duration.is_zero() {
            return Err(SimError::InvalidConfig("duration must be positive".into()));
        }
        if cfg.measure_from >= cfg.duration {
            return Err(SimError::InvalidConfig(format!(
                "measure_from ({}) must be before duration ({})",
                cfg.measure_from, cfg.duration
            )));
        }
        if cfg.sample_interval.is_zero() || cfg.progress_interval.is_zero() {
            return Err(SimError::InvalidConfig(
                "sample_interval and progress_interval must be positive".into(),
            ));
        }
        topology.validate()?;
        if topology.links.len() > u32::MAX as usize {
            return Err(SimError::InvalidConfig("too many links".into()));
        }
        // The routes are laid end to end, each direction closed by a marker, in an array that
        // packets index with a `u32` (`World::route_links`).
        let route_links: usize = topology
            .routes
            .iter()
            .map(|r| r.forward.len() + r.reverse.len() + 2)
            .sum();
        if route_links > u32::MAX as usize {
            return Err(SimError::InvalidConfig(format!(
                "the routes hold {route_links} links in all; at most {} are supported",
                u32::MAX
            )));
        }
        Ok(Simulation {
            cfg,
            topology,
            flows: Vec::new(),
            events: Vec::new(),
            web: None,
            videos: Vec::new(),
            flow_sink: None,
        })
    }

    /// Hand every per-flow sample to `sink` as it is taken, in the order
    /// [`RunResult::flow_series`] would hold them, instead of keeping them:
    /// `flow_series` is then empty. The samples are `flows × intervals` rows of about 160
    /// bytes each (1000 flows over an hour at 100 ms are 36 million, 5.8 GB): a caller that
    /// stores them in a compact form or writes them out as they come keeps a long run's
    /// memory to that, not to this struct's size. The summary is computed either way.
    pub fn set_flow_sink(&mut self, sink: FlowSink) {
        self.flow_sink = Some(sink);
    }

    /// Make flow `flow`'s sender application-limited, fed by a video codec
    /// ([`crate::video`]): from the flow's start it is offered each frame's bytes at the
    /// frame's time (and nothing else), until the flow stops. The sender must implement
    /// [`tfcc_core::endpoint::Sender::offer`] (TFRC, TFWC, TCP, and CBR, which then paces out
    /// only what it is offered: a video source without congestion control); others ignore the
    /// offers.
    pub fn add_video(&mut self, flow: u32, cfg: VideoConfig) -> Result<(), SimError> {
        let bad = |reason: String| SimError::InvalidFlow {
            flow: flow as usize,
            reason,
        };
        if flow as usize >= self.flows.len() {
            return Err(bad("no such flow for the video source".into()));
        }
        if let SenderImpl::Cbr(c) = &self.flows[flow as usize].sender {
            if c.config().on_off.is_some() {
                return Err(bad("an on/off cbr flow cannot take a video source".into()));
            }
        }
        cfg.validate().map_err(bad)?;
        self.videos.push((flow, cfg));
        Ok(())
    }

    /// Drive an access gateway's web transactions (003 Ch. 4) over this simulation's flows: it
    /// offers response bytes to its TCP connections and watches what their receivers deliver.
    /// Add the flows of the same [`crate::web::AccessGateway`] first.
    pub fn set_web(&mut self, web: WebGateway) {
        self.web = Some(web);
    }

    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Add a flow; returns its id (its index, the order flows are added in).
    pub fn add_flow(&mut self, f: FlowSpec) -> Result<u32, SimError> {
        let id = self.flows.len();
        let bad = |reason: String| SimError::InvalidFlow { flow: id, reason };
        if f.route >= self.topology.routes.len() {
            return Err(bad(format!(
                "route {} does not exist (the topology has {})",
                f.route,
                self.topology.routes.len()
            )));
        }
        if let SenderImpl::Cbr(c) = &f.sender {
            c.config().validate().map_err(bad)?;
        }
        if f.stop.is_some_and(|s| s <= f.start) {
            return Err(bad("stop must be after start".into()));
        }
        if id >= u32::MAX as usize {
            return Err(bad("too many flows".into()));
        }
        self.flows.push(f);
        Ok(id as u32)
    }

    /// Schedule a change to a link.
    pub fn add_event(&mut self, e: ScheduledEvent) -> Result<(), SimError> {
        let idx = self.events.len();
        let bad = |reason: String| SimError::InvalidEvent { event: idx, reason };
        if e.link as usize >= self.topology.links.len() {
            return Err(bad(format!("link id {} does not exist", e.link)));
        }
        match &e.action {
            LinkAction::SetRate(r) if r.bps() == 0 => {
                return Err(bad(
                    "rate must be positive (use up = false for a dropout)".into()
                ))
            }
            LinkAction::SetLoss(Some(l)) => l.model.validate().map_err(bad)?,
            _ => {}
        }
        self.events.push(e);
        Ok(())
    }

    /// Run to the end.
    pub fn run(self) -> RunResult {
        self.run_with_progress(&mut |_, _| {})
    }

    /// Run to the end, calling `progress(now, end)` every `progress_interval` of simulated time.
    pub fn run_with_progress(self, progress: &mut dyn FnMut(Time, Time)) -> RunResult {
        let mut w = World::build(self);
        w.run(&mut |now, end| {
            progress(now, end);
            true
        });
        w.finish()
    }

    /// As [`Simulation::run_with_progress`], but `progress` returning `false` abandons the run
    /// (an interrupted command line): `None` then, and no partial result.
    pub fn run_cancellable(
        self,
        progress: &mut dyn FnMut(Time, Time) -> bool,
    ) -> Option<RunResult> {
        let mut w = World::build(self);
        w.run(progress).then(|| w.finish())
    }
}

struct World {
    cfg: SimConfig,
    end: Time,
    q: EventQueue<Ev>,
    /// The keys of `Ties::Random`, one per transmission end and per arrival at a hop (a stream
    /// of its own, so the setting moves no other draw).
    tie_coins: Option<crate::rng::SimRng>,
    links: Vec<Link>,
    /// Every route's forward links, `LinkId::MAX`, its reverse links, `LinkId::MAX`, route after
    /// route in one array: a hop reads its next link from here and the packet's own metadata,
    /// not from its flow's state and a separately allocated slice per route and direction
    /// (two, three cache lines a hop that miss when thousands of flows take turns).
    route_links: Vec<LinkId>,
    /// Whether any flow has an oracle link (PTCP): only then does a hop look at its flow.
    oracle_links: bool,
    pool: PacketPool,
    flows: Vec<FlowRt>,
    events: Vec<ScheduledEvent>,
    link_marks: Vec<LinkCounters>,
    /// Per link: its counters at the last sample (read only for the links in `sampled`).
    link_last: Vec<LinkCounters>,
    flow_series: Vec<FlowSample>,
    link_series: Vec<LinkSample>,
    /// The links whose samples are kept (`SimConfig::series_links`), ascending; empty when no
    /// series is recorded. A sample visits only these: a dumbbell's four access links per flow
    /// record nothing, and reading their counters every interval was about a quarter of the
    /// cache misses of a 5000-flow run (cachegrind).
    sampled: Vec<LinkId>,
    web: Option<WebGateway>,
    /// The deadline the pending `Ev::Web` is for.
    web_armed: Time,
    web_offers: Vec<(u32, u64)>,
    oracles: Vec<OracleFeed>,
    /// Video sources and the flow each feeds.
    videos: Vec<(u32, VideoSource)>,
    /// Each video source's counts at the start of the measurement window.
    video_marks: Vec<VideoCounts>,
    /// The packet trace, when the run records one.
    trace: Option<Box<PacketTrace>>,
    /// Each video source's frame records, beside `videos`.
    frame_logs: Vec<FrameLog>,
    /// Flow → its index in `frame_logs`; empty when the run has no video (no cost then).
    frame_log_of: Vec<Option<u32>>,
    /// Takes the flow samples instead of `flow_series` ([`Simulation::set_flow_sink`]).
    flow_sink: Option<FlowSink>,
}

impl World {
    fn build(sim: Simulation) -> World {
        let Simulation {
            cfg,
            topology,
            flows,
            events,
            web,
            videos,
            flow_sink,
        } = sim;
        let seed = cfg.seed;
        let links: Vec<Link> = topology.links.iter().map(|l| Link::new(l, seed)).collect();
        let mut route_links = Vec::new();
        let route_path: Vec<[u32; 2]> = topology
            .routes
            .iter()
            .map(|r| {
                [&r.forward, &r.reverse].map(|links| {
                    // `Simulation::new` checked that the array's length fits a `u32`.
                    let start = route_links.len() as u32;
                    route_links.extend_from_slice(links);
                    route_links.push(LinkId::MAX);
                    start
                })
            })
            .collect();
        let mut flows = flows
            .into_iter()
            .map(|f| FlowRt {
                sender: f.sender,
                receiver: f.receiver,
                path: route_path[f.route],
                active: false,
                armed: [Time::MAX; 2],
                count: FlowCount::default(),
                oracle_link: LinkId::MAX,
                oracle_bytes: 0,
                book: FlowBook {
                    protocol: f.protocol,
                    route: f.route as u32,
                    base_rtt_s: topology.base_rtt_s(f.route),
                    start: f.start,
                    stop: f.stop.unwrap_or(Time::MAX),
                    mark: FlowMark::default(),
                    goodput: WindowGoodput::default(),
                    rtt: Moments::default(),
                },
            })
            .collect::<Vec<_>>();
        let mut oracles = Vec::new();
        for (i, f) in flows.iter_mut().enumerate() {
            let Some(s) = f.sender.tcp() else {
                continue;
            };
            // Every PTCP flow (a web user's too, when its transfers run under PTCP) gets the oracle: as its input, or as the reference the inline
            // estimator's error is measured against.
            let Some(p) = s.ptcp() else { continue };
            let route = &topology.routes[f.book.route as usize].forward;
            let Some(&link) = route
                .iter()
                .min_by_key(|&&l| (topology.links[l as usize].rate, std::cmp::Reverse(l)))
            else {
                continue;
            };
            f.oracle_link = link;
            let c = s.config();
            oracles.push(OracleFeed {
                flow: i as u32,
                own: vec![i as u32],
                link,
                wire_bytes: f64::from(c.segment_size.saturating_add(c.data_header_size()).max(1)),
                window: p.ctl.config().oracle_window,
                hist: VecDeque::with_capacity(64),
            });
        }
        join_ptcp_aggregates(&mut flows, &mut oracles);
        let oracle_links = flows.iter().any(|f| f.oracle_link != LinkId::MAX);
        let n_links = links.len();
        let mut w = World {
            end: Time::ZERO + cfg.duration,
            q: EventQueue::with_capacity(4 * n_links + 2 * flows.len() + 16),
            tie_coins: (cfg.ties == Ties::Random)
                .then(|| crate::rng::SimRng::named(cfg.seed, "engine/ties")),
            links,
            route_links,
            oracle_links,
            pool: PacketPool::with_capacity(1024),
            flows,
            events,
            link_marks: vec![LinkCounters::default(); n_links],
            link_last: vec![LinkCounters::default(); n_links],
            flow_series: Vec::new(),
            link_series: Vec::new(),
            sampled: Vec::new(),
            web,
            web_armed: Time::MAX,
            web_offers: Vec::new(),
            oracles,
            videos: Vec::new(),
            video_marks: Vec::new(),
            trace: cfg
                .trace
                .as_ref()
                .map(|t| Box::new(PacketTrace::new(t, n_links, Time::ZERO + cfg.duration))),
            frame_logs: Vec::new(),
            frame_log_of: Vec::new(),
            flow_sink,
            cfg,
        };
        if w.cfg.record_series {
            w.sampled = match &w.cfg.series_links {
                None => (0..n_links as LinkId).collect(),
                Some(keep) => {
                    let mut ids: Vec<LinkId> = keep
                        .iter()
                        .copied()
                        .filter(|&l| (l as usize) < n_links)
                        .collect();
                    ids.sort_unstable();
                    ids.dedup();
                    ids
                }
            };
            // The series' final size is known: reserve it once rather than let doubling hold
            // up to twice that (and both copies while growing).
            let intervals = (w.cfg.duration.0 / w.cfg.sample_interval.0.max(1)) as usize + 1;
            let kept = w.sampled.len();
            if w.flow_sink.is_none() {
                w.flow_series
                    .reserve_exact(intervals.saturating_mul(w.flows.len()));
            }
            w.link_series.reserve_exact(intervals.saturating_mul(kept));
        }
        // Set-up events first, in a fixed order: measurement start, flow starts and stops,
        // scheduled changes, sampling, progress.
        w.q.schedule(Time::ZERO + w.cfg.measure_from, Ev::MeasureStart);
        for (i, f) in w.flows.iter().enumerate() {
            w.q.schedule(f.book.start, Ev::FlowStart(i as u32));
            if f.book.stop < w.end {
                w.q.schedule(f.book.stop, Ev::FlowStop(i as u32));
            }
        }
        for (i, e) in w.events.iter().enumerate() {
            w.q.schedule(e.at, Ev::Scheduled(i as u32));
        }
        // Samples strictly before the end are events; the one at the end, if the grid reaches
        // it, is taken after every event of the run ([`World::run`]).
        let first_sample = Time::ZERO + w.cfg.sample_interval;
        if first_sample < w.end {
            w.q.schedule(first_sample, Ev::Sample);
        }
        w.q.schedule(Time::ZERO + w.cfg.progress_interval, Ev::Progress);
        w.arm_web(Time::ZERO);
        for (flow, vc) in videos {
            let f = &mut w.flows[flow as usize];
            // Application-limited from the start: the sender has nothing until a frame comes.
            f.sender.offer(Some(0));
            let rng = crate::rng::SimRng::video(seed, flow);
            let mut src = VideoSource::new(vc, f.book.start, rng);
            let t = src.next_time();
            if t < f.book.stop.min(w.end) {
                w.q.schedule(t, Ev::Frame(w.videos.len() as u32));
            }
            let tracked = f.sender.buffered().is_some();
            if w.frame_log_of.is_empty() {
                w.frame_log_of = vec![None; w.flows.len()];
            }
            w.frame_log_of[flow as usize] = Some(w.frame_logs.len() as u32);
            w.frame_logs.push(FrameLog::new(flow, tracked));
            w.videos.push((flow, src));
            w.video_marks.push(VideoCounts::default());
        }
        if !w.oracles.is_empty() {
            w.q.schedule(Time::ZERO, Ev::Oracle);
        }
        w
    }

    // ---- the web gateway (003 Ch. 4) ----

    fn arm_web(&mut self, now: Time) {
        let Some(web) = &self.web else { return };
        let t = web.next_deadline().max(now);
        if t < self.web_armed {
            self.web_armed = t;
            self.q.schedule(t, Ev::Web);
        }
    }

    /// Apply the gateway's offers to the servers' senders.
    fn web_offers(&mut self, now: Time) {
        let Some(web) = &mut self.web else { return };
        self.web_offers.extend(web.take_offers());
        for i in 0..self.web_offers.len() {
            let (flow, bytes) = self.web_offers[i];
            if let Some(f) = self.flows.get_mut(flow as usize) {
                f.sender.offer(Some(bytes));
                self.pump(now, flow, Side::Sender);
            }
        }
        self.web_offers.clear();
        self.arm_web(now);
    }

    /// A video frame: offer its bytes to the flow's sender, send what is due, and schedule
    /// the next frame.
    fn on_frame(&mut self, now: Time, i: u32) {
        let (flow, src) = &mut self.videos[i as usize];
        let flow = *flow;
        let f = &mut self.flows[flow as usize];
        // A coupled source asks what the sender still holds (002 Sec. 6.2's send buffer).
        let sbuf = f.sender.buffered();
        let slot = src.frame_slot(sbuf);
        self.frame_logs[i as usize].on_slot(&slot, sbuf);
        let next = src.next_time();
        if next < f.book.stop.min(self.end) {
            self.q.schedule(next, Ev::Frame(i));
        }
        let Some((bytes, _)) = slot.grabbed else {
            return;
        };
        f.sender.offer(Some(bytes));
        self.pump(now, flow, Side::Sender);
    }

    fn on_web(&mut self, now: Time) {
        if self.web_armed != now {
            return; // superseded by an earlier deadline
        }
        self.web_armed = Time::MAX;
        if let Some(web) = &mut self.web {
            web.on_time(now);
        }
        self.web_offers(now);
    }

    /// Returns `false` when `progress` asked to stop.
    fn run(&mut self, progress: &mut dyn FnMut(Time, Time) -> bool) -> bool {
        while let Some(t) = self.q.peek_time() {
            if t > self.end {
                break;
            }
            let Some((now, ev)) = self.q.pop() else { break };
            match ev {
                Ev::TxDone(l) => self.on_tx_done(now, l),
                Ev::Arrive(l) => self.on_arrive(now, l),
                Ev::Timer { flow, side } => self.on_timer(now, flow, side),
                Ev::FlowStart(f) => {
                    let fl = &mut self.flows[f as usize];
                    fl.active = true;
                    self.pump(now, f, Side::Sender);
                    self.pump(now, f, Side::Receiver);
                }
                Ev::FlowStop(f) => self.flows[f as usize].active = false,
                Ev::Scheduled(i) => self.on_scheduled(now, i),
                Ev::MeasureStart => self.mark(now),
                Ev::Sample => {
                    self.sample(now);
                    let next = now + self.cfg.sample_interval;
                    if next < self.end {
                        self.q.schedule(next, Ev::Sample);
                    }
                }
                Ev::Web => self.on_web(now),
                Ev::Frame(i) => self.on_frame(now, i),
                Ev::Oracle => {
                    self.on_oracle(now);
                    let next = now + ORACLE_TICK;
                    if next <= self.end {
                        self.q.schedule(next, Ev::Oracle);
                    }
                }
                Ev::Progress => {
                    if !progress(now, self.end) {
                        return false;
                    }
                    let next = now + self.cfg.progress_interval;
                    if next <= self.end {
                        self.q.schedule(next, Ev::Progress);
                    }
                }
            }
        }
        // The last sample, at the end of the run, after every event there: the run processes
        // events at `t = end` and the summary counts them, so the series must too (a packet
        // dropped at exactly the end was in the summary's drops but in no interval's, when
        // the sample at the end was an event that ran before it).
        let iv = self.cfg.sample_interval;
        if self.cfg.duration.as_nanos() % iv.as_nanos() == 0 {
            self.sample(self.end);
        }
        progress(self.end, self.end)
    }

    // ---- packet movement (hot path) ----

    /// An endpoint handed a packet to the network.
    fn inject(&mut self, now: Time, flow: u32, dir: Direction, pkt: Packet) {
        let f = &mut self.flows[flow as usize];
        f.count.sent[dir_idx(dir)] += 1;
        let meta = PacketMeta {
            flow,
            path: f.path[dir_idx(dir)],
            size: pkt.size,
            hop: 0,
            dir,
        };
        let id = self.pool.alloc(meta, pkt);
        self.enter_link(now, id, meta);
    }

    /// Packet `id`, whose metadata is `m`, enters the link at its hop.
    fn enter_link(&mut self, now: Time, id: PacketId, m: PacketMeta) {
        let link = self.route_links[m.path as usize + usize::from(m.hop)];
        if self.oracle_links {
            let f = &mut self.flows[m.flow as usize];
            if link == f.oracle_link {
                f.oracle_bytes += u64::from(m.size);
            }
        }
        let (flow, dir) = (m.flow, m.dir);
        match self.links[link as usize].arrive(now, id, m.size, flow) {
            Ok(w) => {
                if self.trace.is_some() {
                    self.record(now, link, TraceEvent::Enqueue, id);
                    // On an idle link it went straight on the wire: the last one into the pipe.
                    if self.links[link as usize].pipe_tail() == Some(id) {
                        self.record(now, link, TraceEvent::Dequeue, id);
                    }
                }
                self.wake(link, w)
            }
            Err(d) => {
                if self.trace.is_some() {
                    self.record(now, link, TraceEvent::Drop(d), id);
                }
                self.flows[flow as usize].count.dropped[dir_idx(dir)] += 1;
                self.pool.free(id);
            }
        }
    }

    /// Add packet `id`'s `event` on `link` to the trace, if the trace wants it.
    #[cold]
    fn record(&mut self, now: Time, link: LinkId, event: TraceEvent, id: PacketId) {
        let Some(trace) = &mut self.trace else { return };
        if !trace.wants(now, link) {
            if trace.before_window(now, link) {
                let m = self.pool.meta(id);
                let (kind, seq) = crate::trace::message(&self.pool.packet(id).header);
                let key = (link, m.flow, m.dir == Direction::Reverse, kind, seq);
                trace.track(key, event);
            }
            return;
        }
        let m = self.pool.meta(id);
        let pkt = self.pool.packet(id);
        let (kind, seq) = crate::trace::message(&pkt.header);
        trace.push(
            TraceRecord::new(now, event, link, m.flow, m.dir, kind, seq, m.size),
            pkt,
        );
    }

    /// Trace the `-` of the transmission link `l` started at `now`, if its count of started
    /// transmissions has moved from `before`.
    #[cold]
    fn record_start(&mut self, now: Time, l: LinkId, before: u64) {
        let link = &self.links[l as usize];
        if link.tx_started() != before {
            if let Some(id) = link.pipe_tail() {
                self.record(now, l, TraceEvent::Dequeue, id);
            }
        }
    }

    /// Schedule what a link asked for.
    #[inline]
    fn wake(&mut self, l: LinkId, w: Wake) {
        if let Some(t) = w.tx_done {
            let rank = self.tie_rank(true);
            self.q.schedule_ranked(t, Ev::TxDone(l), rank);
        }
        if let Some(t) = w.pipe {
            let rank = self.tie_rank(false);
            self.q.schedule_ranked(t, Ev::Arrive(l), rank);
        }
    }

    /// Where a link's transmission end (`departure`) or a pipe's delivery at the next hop goes
    /// among the events due at its nanosecond, by the scenario's `ties` ([`Ties`]).
    #[inline]
    fn tie_rank(&mut self, departure: bool) -> Rank {
        match self.cfg.ties {
            Ties::Fifo => Rank::InOrder,
            Ties::DeparturesFirst if departure => Rank::First,
            Ties::DeparturesFirst => Rank::InOrder,
            Ties::Random => {
                let key = self.tie_coins.as_mut().map_or(0, |c| c.next_u64() as u32);
                Rank::Shuffled(key)
            }
        }
    }

    fn on_tx_done(&mut self, now: Time, l: LinkId) {
        // Read only when tracing: this runs once per queued packet per hop.
        let before = self
            .trace
            .is_some()
            .then(|| self.links[l as usize].tx_started());
        let w = self.links[l as usize].tx_done(now);
        if let Some(before) = before {
            self.record_start(now, l, before);
        }
        self.wake(l, w);
    }

    fn on_arrive(&mut self, now: Time, l: LinkId) {
        let link = &mut self.links[l as usize];
        let Some(id) = link.pipe_pop() else {
            debug_assert!(false, "pipe event without a packet");
            return;
        };
        if let Some(t) = link.pipe_head() {
            let rank = self.tie_rank(false);
            self.q.schedule_ranked(t, Ev::Arrive(l), rank);
        }
        if self.trace.is_some() {
            self.record(now, l, TraceEvent::Receive, id);
        }
        let m = self.pool.meta_mut(id);
        m.hop += 1;
        let m = *m;
        if self.route_links[m.path as usize + usize::from(m.hop)] != LinkId::MAX {
            self.enter_link(now, id, m);
            return;
        }
        let (flow, dir) = (m.flow, m.dir);
        let pkt = *self.pool.packet(id);
        self.pool.free(id);
        let f = &mut self.flows[flow as usize];
        f.count.delivered[dir_idx(dir)] += 1;
        match dir {
            Direction::Forward => {
                if let Some(&Some(v)) = self.frame_log_of.get(flow as usize) {
                    if let Some(seq) = data_seq(&pkt) {
                        self.frame_logs[v as usize].on_delivered(now, seq);
                    }
                }
                f.receiver.on_packet(now, &pkt);
                let delivered = match self.web {
                    Some(_) => f.receiver.delivered_bytes(),
                    None => 0,
                };
                self.pump(now, flow, Side::Receiver);
                if let Some(web) = &mut self.web {
                    if web.watches(flow) {
                        web.on_delivered(now, flow, delivered);
                        self.web_offers(now);
                    }
                }
            }
            Direction::Reverse => {
                f.sender.on_packet(now, &pkt);
                if f.active {
                    self.pump(now, flow, Side::Sender);
                }
            }
        }
    }

    /// Drain an endpoint's output, then make sure it will be woken at its next deadline.
    fn pump(&mut self, now: Time, flow: u32, side: Side) {
        let log = match side {
            Side::Sender => self.frame_log_of.get(flow as usize).copied().flatten(),
            Side::Receiver => None,
        };
        loop {
            let f = &mut self.flows[flow as usize];
            let out = match side {
                Side::Sender => {
                    if !f.active {
                        return;
                    }
                    // A video flow: the packet takes what the send buffer shrank by. Other
                    // flows do not ask for the buffer (a dispatch per packet sent).
                    let before = log.and_then(|_| f.sender.buffered());
                    let p = f.sender.poll_transmit(now);
                    if let (Some(v), Some(p), Some(b0)) = (log, &p, before) {
                        if let Some(seq) = data_seq(p) {
                            let taken = b0.saturating_sub(f.sender.buffered().unwrap_or(0));
                            self.frame_logs[v as usize].on_sent(seq, taken);
                        }
                    }
                    p.map(|p| (p, Direction::Forward))
                }
                Side::Receiver => f
                    .receiver
                    .poll_transmit(now)
                    .map(|p| (p, Direction::Reverse)),
            };
            match out {
                Some((p, dir)) => self.inject(now, flow, dir, p),
                None => break,
            }
        }
        self.arm(now, flow, side);
    }

    fn arm(&mut self, now: Time, flow: u32, side: Side) {
        let f = &mut self.flows[flow as usize];
        let deadline = match side {
            Side::Sender => f.sender.next_timeout(),
            Side::Receiver => f.receiver.next_timeout(),
        };
        let Some(t) = deadline else { return };
        let t = t.max(now);
        let armed = &mut f.armed[side.idx()];
        if t < *armed {
            *armed = t;
            self.q.schedule(t, Ev::Timer { flow, side });
        }
    }

    fn on_timer(&mut self, now: Time, flow: u32, side: Side) {
        let f = &mut self.flows[flow as usize];
        if f.armed[side.idx()] != now {
            return; // superseded by an earlier deadline
        }
        f.armed[side.idx()] = Time::MAX;
        if side == Side::Sender && !f.active {
            return;
        }
        let due = match side {
            Side::Sender => f.sender.next_timeout(),
            Side::Receiver => f.receiver.next_timeout(),
        };
        if due.is_some_and(|d| d <= now) {
            match side {
                Side::Sender => f.sender.on_timeout(now),
                Side::Receiver => f.receiver.on_timeout(now),
            }
        }
        self.pump(now, flow, side);
    }

    fn on_scheduled(&mut self, now: Time, i: u32) {
        let e = self.events[i as usize].clone();
        let l = e.link;
        let link = &mut self.links[l as usize];
        let before = link.tx_started();
        match e.action {
            LinkAction::SetRate(r) => link.set_rate(r),
            LinkAction::SetLoss(loss) => link.set_loss(loss, now),
            LinkAction::SetUp(up) => {
                let w = link.set_up(up, now);
                self.wake(l, w);
            }
            LinkAction::SetStalled(stalled) => {
                let w = link.set_stalled(stalled, now);
                self.wake(l, w);
            }
        }
        if self.trace.is_some() {
            self.record_start(now, l, before);
        }
    }

    /// Tell every oracle-fed PTCP sender the path's `A` and `P` (see [`OracleFeed`]).
    fn on_oracle(&mut self, now: Time) {
        for o in &mut self.oracles {
            let link = &self.links[o.link as usize];
            let total = link.counters(now).arrival_bytes;
            let own: u64 = o
                .own
                .iter()
                .map(|&f| self.flows[f as usize].oracle_bytes)
                .sum();
            o.hist.push_back((now, total, own));
            while o.hist.len() > 2 && o.hist[1].0 + o.window <= now {
                o.hist.pop_front();
            }
            let (t0, total0, own0) = o.hist[0];
            let secs = now.saturating_since(t0).as_secs_f64();
            if secs <= 0.0 {
                continue;
            }
            let cross_bps = (total - total0).saturating_sub(own - own0) as f64 * 8.0 / secs;
            let cap_bps = link.rate().bps() as f64;
            let per_pkt = o.wire_bytes * 8.0;
            if let Some(s) = self.flows[o.flow as usize].sender.tcp_mut() {
                s.set_path_oracle(now, (cap_bps - cross_bps) / per_pkt, cap_bps / per_pkt);
            }
        }
    }

    // ---- recording ----

    fn mark(&mut self, now: Time) {
        for f in &mut self.flows {
            f.sender.count_loss_events_from(now);
            let s = f.sender.stats();
            f.book.mark = FlowMark {
                delivered_bytes: f.receiver.delivered_bytes(),
                count: f.count,
                loss_events: s.loss_events,
                rx_loss_events: f.receiver.stats().loss_events,
                rx_judged: f.receiver.stats().packets_judged,
                rx_timeouts: f.receiver.stats().timeouts,
                stats_sent: s.packets_sent,
                retransmits: s.retransmits,
                timeouts: s.timeouts,
                spurious_timeouts: s.spurious_timeouts,
            };
        }
        for (i, l) in self.links.iter().enumerate() {
            self.link_marks[i] = l.counters(now);
        }
        for (m, (_, v)) in self.video_marks.iter_mut().zip(&self.videos) {
            *m = v.counts();
        }
    }

    fn sample(&mut self, now: Time) {
        let iv = self.cfg.sample_interval;
        let secs = iv.as_secs_f64();
        for (i, f) in self.flows.iter_mut().enumerate() {
            let delivered = f.receiver.delivered_bytes();
            // The interval counts towards the summary's CoV and RTT if it lies wholly in the
            // window and ends after the flow's start (the testbed's summary applies the same
            // rule to its readings).
            let counts = counts_in_window(now, iv, self.cfg.measure_from, f.book.start);
            let thr = f.book.goodput.sample(delivered, iv, counts);
            let s = f.sender.stats();
            let rtt = s.rtt.map(|d| d.as_secs_f64());
            if counts {
                if let Some(r) = rtt {
                    f.book.rtt.push(r);
                }
            }
            if self.cfg.record_series {
                let sample = FlowSample {
                    time: now,
                    flow: i as u32,
                    throughput_bps: thr,
                    delivered_bytes: delivered,
                    cwnd: s.cwnd,
                    rate_bps: s.rate.map(|r| r * 8.0),
                    p: s.p.or_else(|| f.receiver.stats().p),
                    rtt_s: rtt,
                    ptcp_k: ptcp_of(&f.sender).map(|p| p.k()),
                    ptcp_s: ptcp_of(&f.sender).map(|p| f64::from(p.s())),
                    ptcp_a_bps: ptcp_of(&f.sender)
                        .and_then(|p| p.estimate())
                        .map(|e| e.available * wire_bits(&f.sender)),
                    ptcp_oracle_a_bps: ptcp_of(&f.sender)
                        .and_then(|p| p.oracle())
                        .map(|e| e.available * wire_bits(&f.sender)),
                };
                match &mut self.flow_sink {
                    Some(sink) => sink(&sample),
                    None => self.flow_series.push(sample),
                }
            }
        }
        for &i in &self.sampled {
            let l = &self.links[i as usize];
            let c = l.counters(now);
            let prev = self.link_last[i as usize];
            self.link_last[i as usize] = c;
            let drops = |c: &LinkCounters| c.queue_drops() + c.artificial_drops + c.down_drops;
            self.link_series.push(LinkSample {
                time: now,
                link: i,
                queue_pkts_avg: (c.queue_area - prev.queue_area) as f64 / iv.as_nanos() as f64,
                queue_pkts: l.queue().len() as u32,
                queue_bytes: l.queue().bytes(),
                throughput_bps: (c.tx_bytes - prev.tx_bytes) as f64 * 8.0 / secs,
                drops: drops(&c) - drops(&prev),
            });
        }
    }

    fn finish(self) -> RunResult {
        let now = self.end;
        let window = self.cfg.duration - self.cfg.measure_from;
        let wsecs = window.as_secs_f64();
        // Packets still in the network, per flow and direction, found where they are.
        let mut in_flight = vec![[0u64; 2]; self.flows.len()];
        for l in &self.links {
            for id in l.packets() {
                let m = self.pool.meta(id);
                in_flight[m.flow as usize][dir_idx(m.dir)] += 1;
            }
        }
        let flows: Vec<FlowSummary> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let s = f.sender.stats();
                let m = &f.book.mark;
                let bytes = f.receiver.delivered_bytes() - m.delivered_bytes;
                let sent = f.count.sent[0] - m.count.sent[0];
                let stats_sent = s.packets_sent - m.stats_sent;
                // The sender's events located in the window (`SenderImpl::loss_events_since`:
                // a TCP timeout where it fired, once resolved as a loss, so one fired before
                // the mark does not count and one unresolved at the end of the run does not
                // either; a TFWC event where its first lost packet was sent), so that each is
                // one of the window's packets sent.
                let loss_events = f
                    .sender
                    .loss_events_since()
                    .unwrap_or(s.loss_events - m.loss_events);
                let rs = f.receiver.stats();
                let packets = stats_sent.max(sent).max(1) as f64;
                // Loss events per packet over the window, both counted where the protocol
                // counts its loss events, so that the rate is at most 1:
                // - by the sender (TCP: window reductions caused by a detected loss, i.e. fast
                //   retransmits and the timeouts resolved as losses, neither the spurious ones
                //   nor those unresolved at the end, see `Stats::loss_events`; TFWC, ...), per
                //   data packet sent, the events located in the window as above (counted
                //   where detected, they read 7/6 = 1.17 for a CUBIC flow whose window began
                //   during a 13 s outage: its back-offs, fired before the window, resolved
                //   in it);
                // - for equation-based protocols whose receiver runs the loss history (TFRC,
                //   WARC, TEAR), by the receiver, per data packet its loss detector
                //   judged in the window (`Stats::packets_judged`: received or detected lost).
                //   The sender's packets sent are counted elsewhere and earlier: after a long
                //   outage the receiver judges the whole gap lost (each packet an event when
                //   they were sent more than an RTT apart) in a window where the sender sent
                //   few, and events / sent reached 36 (004 E11's 30-s dropout). Packets not
                //   judged by the end (in flight, or waiting above a gap for the detector's
                //   reordering tolerance) count in neither the events nor the packets.
                // A receiver that has counted any event in the run is such a receiver, and a
                // window without events then gives 0. Only a flow that counts none anywhere
                // (CBR) falls back to the receiver's `p` (the sink's loss ratio). The
                // receiver's `p` itself is not used for an equation-based flow: it is the loss
                // history's estimate at the end of the run, one sample, not a window quantity
                // (docs/scenarios.md, "loss_event_rate").
                let loss_event_rate = if loss_events > 0 {
                    loss_events as f64 / packets
                } else if rs.loss_events > 0 {
                    let judged = rs.packets_judged.saturating_sub(m.rx_judged);
                    let events = rs.loss_events - m.rx_loss_events;
                    if judged > 0 {
                        events as f64 / judged as f64
                    } else {
                        0.0
                    }
                } else {
                    rs.p.unwrap_or(0.0)
                };
                FlowSummary {
                    id: i as u32,
                    protocol: f.book.protocol.clone(),
                    throughput_bps: bytes as f64 * 8.0 / wsecs,
                    bytes_delivered: bytes,
                    packets_sent: sent,
                    packets_lost: f.count.dropped[0] - m.count.dropped[0],
                    loss_event_rate,
                    mean_rtt_s: f.book.rtt.mean(),
                    base_rtt_s: f.book.base_rtt_s,
                    cov: f.book.goodput.cov(),
                    retransmits: s.retransmits - m.retransmits,
                    timeouts: s.timeouts - m.timeouts,
                    spurious_timeouts: s.spurious_timeouts - m.spurious_timeouts,
                    receiver_timeouts: rs.timeouts.saturating_sub(m.rx_timeouts),
                    totals: FlowTotals {
                        data_sent: f.count.sent[0],
                        data_delivered: f.count.delivered[0],
                        data_dropped: f.count.dropped[0],
                        data_in_flight: in_flight[i][0],
                        feedback_sent: f.count.sent[1],
                        feedback_delivered: f.count.delivered[1],
                        feedback_dropped: f.count.dropped[1],
                        feedback_in_flight: in_flight[i][1],
                    },
                    ptcp: ptcp_record(&f.sender),
                    video: self.video_record(i as u32),
                }
            })
            .collect();
        let links = self
            .links
            .iter()
            .zip(&self.link_marks)
            .map(|(l, m)| {
                let c = l.counters(now);
                let queue_drops = c.queue_drops() - m.queue_drops();
                let artificial = c.artificial_drops - m.artificial_drops;
                let down = c.down_drops - m.down_drops;
                LinkSummary {
                    name: l.name.clone(),
                    utilization: (c.busy_ns - m.busy_ns) as f64 / window.as_nanos() as f64,
                    drops: queue_drops + artificial + down,
                    queue_drops,
                    early_drops: c.early_drops - m.early_drops,
                    artificial_drops: artificial,
                    down_drops: down,
                    mean_queue_pkts: (c.queue_area - m.queue_area) as f64
                        / window.as_nanos() as f64,
                    arrivals: c.arrivals - m.arrivals,
                    tx_packets: c.tx_packets - m.tx_packets,
                    tx_bytes: c.tx_bytes - m.tx_bytes,
                    totals: {
                        let raw = l.counters(now);
                        let peaks = l.peaks();
                        let q = l.queue();
                        LinkTotals {
                            arrivals: raw.arrivals,
                            dropped: raw.queue_drops() + raw.artificial_drops + raw.down_drops,
                            waiting: q.len() as u64,
                            started: raw.tx_packets + u64::from(l.is_busy(now)),
                            propagating: l.in_transit() as u64,
                            peak_queue_pkts: peaks.queue_pkts,
                            peak_queue_bytes: peaks.queue_bytes,
                            max_packet_bytes: peaks.packet_bytes,
                            packet_capacity: q.packet_capacity(),
                            byte_capacity: q.byte_capacity(),
                        }
                    },
                }
            })
            .collect();
        let thr: Vec<f64> = flows.iter().map(|f| f.throughput_bps).collect();
        RunResult {
            summary: RunSummary {
                seed: self.cfg.seed,
                // the nearest double (`tfcc_core::time::nanos_to_secs_f64`): a 60 s run
                // reports 60, not 60.00000000000001
                sim_seconds: self.cfg.duration.as_secs_f64(),
                measure_from_s: self.cfg.measure_from.as_secs_f64(),
                events: self.q.events_processed(),
                jain_index: jain_index(&thr),
                peak_packets: self.pool.capacity_used() as u64,
                flows,
                links,
            },
            flow_series: self.flow_series,
            link_series: self.link_series,
            web: self.web.map(WebGateway::finish),
            trace: self.trace.map(|t| *t),
            frames: self
                .frame_logs
                .into_iter()
                .flat_map(FrameLog::into_records)
                .collect(),
        }
    }
}

/// The sequence number of a data packet of the protocols whose send buffer can be followed
/// ([`crate::frames`]); `None` for any other packet.
fn data_seq(p: &Packet) -> Option<u64> {
    match p.header {
        Header::TfwcData { seq, .. } | Header::Raw { seq, .. } => Some(seq),
        Header::TfrcData(h) => Some(h.seq),
        _ => None,
    }
}

/// Bits of one data packet on the wire (PTCP's `A` and `P` count these).
fn wire_bits(s: &SenderImpl) -> f64 {
    match s.tcp() {
        Some(t) => {
            let c = t.config();
            f64::from(c.segment_size.saturating_add(c.data_header_size())) * 8.0
        }
        None => 0.0,
    }
}

/// PTCP flows naming the same `group` become one aggregate (001 Sec. 2.3): one shared
/// controller built from the first member's configuration, joined in flow order; each member's
/// oracle counts the whole aggregate as its own traffic.
fn join_ptcp_aggregates(flows: &mut [FlowRt], oracles: &mut [OracleFeed]) {
    let mut groups: Vec<(String, tfcc_core::tcp::aggregate::AggregateHandle, Vec<u32>)> =
        Vec::new();
    for (i, f) in flows.iter_mut().enumerate() {
        let Some(t) = f.sender.tcp_mut() else {
            continue;
        };
        let seg = t.config().segment_size;
        let Some(p) = t.ptcp_mut() else { continue };
        let Some(name) = p.ctl.config().group.clone() else {
            continue;
        };
        let k = match groups.iter().position(|g| g.0 == name) {
            Some(k) => k,
            None => {
                let h = tfcc_core::tcp::aggregate::Aggregate::shared(p.ctl.config().clone(), seg);
                groups.push((name, h, Vec::new()));
                groups.len() - 1
            }
        };
        p.join(groups[k].1.clone());
        groups[k].2.push(i as u32);
    }
    for o in oracles.iter_mut() {
        if let Some(g) = groups.iter().find(|g| g.2.contains(&o.flow)) {
            o.own = g.2.clone();
        }
    }
}

fn ptcp_of(s: &SenderImpl) -> Option<&tfcc_core::tcp::ptcp::PtcpSender> {
    s.tcp().and_then(TcpSender::ptcp)
}

/// A PTCP sender's slots in bit/s of payload.
impl World {
    /// Flow `flow`'s video source's frames in the window, if it has one.
    fn video_record(&self, flow: u32) -> Option<VideoRecord> {
        let k = self.videos.iter().position(|(f, _)| *f == flow)?;
        let (_, v) = &self.videos[k];
        Some(VideoRecord::of_window(
            v.config(),
            self.video_marks[k],
            v.counts(),
        ))
    }
}

fn ptcp_record(s: &SenderImpl) -> Option<PtcpRecord> {
    ptcp_record_of(s.tcp()?)
}

fn ptcp_record_of(t: &TcpSender) -> Option<PtcpRecord> {
    let p = t.ptcp()?;
    // A member of an aggregate reports the aggregate's slots (001 Sec. 2.3: `bw` is the sum's).
    let ctl = p.controller();
    let bits = f64::from(t.config().segment_size) * 8.0;
    let wire = f64::from(
        t.config()
            .segment_size
            .saturating_add(t.config().data_header_size()),
    ) * 8.0;
    let (estimator, measurements, streams_abandoned, capacity_bps) = match &p.path {
        PathSource::Oracle(_) => ("oracle", 0, 0, None),
        PathSource::Inline(i) => (
            "inline",
            i.measurements(),
            i.streams_abandoned(),
            i.capacity().map(|c| c * wire),
        ),
    };
    Some(PtcpRecord {
        bw_bps: ctl.bw_pkts() * bits,
        eval_slots: ctl
            .eval_slots()
            .iter()
            .map(|e| PtcpEvalSlot {
                start: e.start,
                end: e.end,
                throughput_bps: e.tput * bits,
                met: e.met,
                cuts: e.cuts,
            })
            .collect(),
        ctrl_slots: ctl
            .ctrl_slots()
            .iter()
            .map(|c| PtcpCtrlSlot {
                start: c.start,
                end: c.end,
                s: c.s,
                target_bps: c.target * bits,
                throughput_bps: c.tput * bits,
                regime: match c.regime {
                    Regime::Eq3 => "eq3",
                    Regime::Eq4 => "eq4",
                },
                bound_by: c.bound_by.map(|b| b.name()),
                bound_counts: c.bound_counts,
                k_min_over_k_max: c.k_min_over_k_max,
                cuts: c.cuts,
            })
            .collect(),
        s_changes: ctl.s_changes().to_vec(),
        estimator,
        measurements,
        streams_abandoned,
        capacity_bps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::CbrConfig;
    use crate::link::LinkSpec;
    use crate::loss_model::LossModel;
    use crate::queue::{QueueLimit, QueueSpec, RedConfig};
    use crate::topology::{AccessSpec, DelaySpread, DumbbellSpec};
    use proptest::prelude::*;
    use std::sync::{Arc, Mutex};
    use tfcc_core::endpoint::{Endpoint, Receiver, Sender, Stats};
    use tfcc_core::Header;

    /// One link a→b (and its reverse), one route.
    fn one_link(rate: Rate, delay: Dur, queue: QueueSpec, loss: Option<LossModel>) -> Topology {
        let mut fwd = LinkSpec::new("ab", rate, delay, queue);
        if let Some(m) = loss {
            fwd = fwd.with_loss(m);
        }
        Topology::single_link(fwd).unwrap()
    }

    fn cfg(secs: u64) -> SimConfig {
        SimConfig {
            duration: Dur::from_secs(secs),
            ..SimConfig::default()
        }
    }

    fn cbr(rate: Rate, size: u32) -> CbrConfig {
        CbrConfig {
            rate,
            packet_size: size,
            on_off: None,
        }
    }

    /// One CBR flow of 1000-byte packets at `rate` over `topo`'s route 0 from time 0, for
    /// `secs`, with `events` (milliseconds, action) on link 0: the set-up of the link tests,
    /// which differ in the link, the load and what happens to the link.
    fn cbr_run(topo: Topology, secs: u64, rate: Rate, events: &[(u64, LinkAction)]) -> RunResult {
        let mut sim = Simulation::new(cfg(secs), topo).unwrap();
        sim.add_flow(FlowSpec::cbr(0, cbr(rate, 1000), Time::ZERO, None))
            .unwrap();
        for (at, action) in events {
            sim.add_event(ScheduledEvent {
                at: Time::from_millis(*at),
                link: 0,
                action: action.clone(),
            })
            .unwrap();
        }
        sim.run()
    }

    /// A receiver that records every arrival (time, seq).
    struct Recording(Arc<Mutex<Vec<(Time, u64)>>>, u64);
    impl Endpoint for Recording {
        fn on_packet(&mut self, now: Time, pkt: &Packet) {
            if let Header::Raw { seq, .. } = pkt.header {
                self.0.lock().unwrap().push((now, seq));
                self.1 += u64::from(pkt.size);
            }
        }
        fn on_timeout(&mut self, _: Time) {}
        fn poll_transmit(&mut self, _: Time) -> Option<Packet> {
            None
        }
        fn next_timeout(&self) -> Option<Time> {
            None
        }
        fn stats(&self) -> Stats {
            Stats::default()
        }
    }
    impl Receiver for Recording {
        fn delivered_bytes(&self) -> u64 {
            self.1
        }
    }

    fn recorded_cbr(topo: Topology, c: CbrConfig, secs: u64) -> (RunResult, Vec<(Time, u64)>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut sim = Simulation::new(cfg(secs), topo).unwrap();
        sim.add_flow(FlowSpec {
            protocol: "cbr".into(),
            route: 0,
            start: Time::ZERO,
            stop: None,
            sender: SenderImpl::Cbr(crate::flow::CbrSender::new(c, Time::ZERO, None)),
            receiver: ReceiverImpl::Custom(Box::new(Recording(log.clone(), 0))),
        })
        .unwrap();
        let r = sim.run();
        let v = log.lock().unwrap().clone();
        (r, v)
    }

    #[test]
    fn cbr_packets_arrive_after_exact_serialisation_plus_propagation() {
        // 1000 B at 8 Mb/s = 1 ms on the wire, 10 ms propagation; a 4 Mb/s CBR sends every
        // 2 ms and never queues: packet k arrives at 2k ms + 11 ms exactly.
        let topo = one_link(
            Rate::from_mbps(8),
            Dur::from_millis(10),
            QueueSpec::DropTail(QueueLimit::Packets(10)),
            None,
        );
        let (r, log) = recorded_cbr(topo, cbr(Rate::from_mbps(4), 1000), 1);
        for (t, seq) in &log {
            assert_eq!(*t, Time::from_millis(2 * seq + 11));
        }
        // Sent at 0, 2, ..., 1000 ms (501); delivered those sent by 989 ms (495).
        assert_eq!(log.len(), 495);
        let f = &r.summary.flows[0];
        assert_eq!(f.totals.data_sent, 501);
        assert_eq!(f.packets_lost, 0);
        assert_eq!(f.totals.data_in_flight, 6);
        assert_eq!(r.summary.links[0].tx_packets, 500); // the one sent at 1000 ms is on the wire
    }

    #[test]
    fn the_last_sample_counts_what_happens_at_the_end_of_the_run() {
        // The 16 Mb/s CBR of the test below sends its last packet at exactly 1000 ms, into a
        // full queue: the summary counts that drop, and so must the last interval of the
        // series (the sample at the end ran before it, one drop short).
        let topo = one_link(
            Rate::from_mbps(8),
            Dur::from_millis(10),
            QueueSpec::DropTail(QueueLimit::Packets(10)),
            None,
        );
        let r = cbr_run(topo, 1, Rate::from_mbps(16), &[]);
        let l = &r.summary.links[0];
        let series = r.link_series.iter().filter(|s| s.link == 0);
        assert_eq!(series.clone().count(), 10);
        assert_eq!(series.clone().map(|s| s.drops).sum::<u64>(), l.drops);
        let bytes: f64 = series.map(|s| s.throughput_bps * 0.1 / 8.0).sum();
        assert!((bytes - l.tx_bytes as f64).abs() < 1e-6, "{bytes} {l:?}");
        assert_eq!(r.flow_series.last().unwrap().time, Time::from_secs(1));
    }

    #[test]
    fn an_overloaded_droptail_link_serialises_back_to_back_and_counts_overflows() {
        // 16 Mb/s into 8 Mb/s: the queue fills to 9 waiting (limit 10, ns-2 semantics), then
        // every other arrival is dropped; departures are exactly 1 ms apart.
        let topo = one_link(
            Rate::from_mbps(8),
            Dur::from_millis(10),
            QueueSpec::DropTail(QueueLimit::Packets(10)),
            None,
        );
        let (r, log) = recorded_cbr(topo, cbr(Rate::from_mbps(16), 1000), 1);
        for (k, (t, _)) in log.iter().enumerate() {
            assert_eq!(*t, Time::from_millis(k as u64 + 11));
        }
        let f = &r.summary.flows[0];
        let l = &r.summary.links[0];
        assert_eq!(f.totals.data_sent, 2001); // every 0.5 ms from 0 to 1000 ms inclusive
        assert_eq!(l.tx_packets, 1000);
        assert_eq!(l.queue_drops, f.packets_lost);
        assert_eq!(l.artificial_drops, 0);
        // Accepted = 1000 done + 1 on the wire + 9 waiting; the rest overflowed.
        assert_eq!(l.queue_drops, 2001 - 1010);
        let t = f.totals;
        assert_eq!(
            t.data_sent,
            t.data_delivered + t.data_dropped + t.data_in_flight
        );
        assert!((l.utilization - 1.0).abs() < 1e-9);
        // The queue holds 9 packets nearly all the time once full (from ~18 ms).
        assert!(
            l.mean_queue_pkts > 8.7 && l.mean_queue_pkts <= 9.0,
            "{}",
            l.mean_queue_pkts
        );
    }

    #[test]
    fn bernoulli_link_loss_is_counted_apart_from_queue_drops() {
        let topo = one_link(
            Rate::from_mbps(100),
            Dur::from_millis(5),
            QueueSpec::DropTail(QueueLimit::Packets(100)),
            Some(LossModel::Bernoulli { p: 0.05 }),
        );
        let r = cbr_run(topo, 20, Rate::from_mbps(8), &[]);
        let l = &r.summary.links[0];
        let n = l.arrivals as f64;
        let sd = (n * 0.05 * 0.95).sqrt();
        assert_eq!(l.queue_drops, 0);
        assert!((l.artificial_drops as f64 - 0.05 * n).abs() < 4.5 * sd);
        assert_eq!(r.summary.flows[0].packets_lost, l.artificial_drops);
        // The sink's loss ratio is the loss event rate reported for a CBR flow.
        let p = r.summary.flows[0].loss_event_rate;
        assert!((p - 0.05).abs() < 0.01, "{p}");
    }

    /// A TFRC flow's `loss_event_rate` counts the receiver's loss events in the window. A
    /// window without loss reads 0, although the receiver's loss history (its `p` at the end)
    /// still remembers the lossy start; a lossy window reads events per packet the receiver
    /// judged (received or lost), in steady state about the packets sent, a round trip later:
    /// not above the packets lost per packet sent, and not far below it.
    #[test]
    fn a_tfrc_flow_reports_the_windows_loss_events_not_the_final_estimate() {
        let run = |loss_off_at: Option<u64>| {
            let topo = one_link(
                Rate::from_kbps(1500),
                Dur::from_millis(50),
                QueueSpec::DropTail(QueueLimit::Packets(100)),
                Some(LossModel::Bernoulli { p: 0.02 }),
            );
            let mut sim = Simulation::new(
                SimConfig {
                    duration: Dur::from_secs(60),
                    measure_from: Dur::from_secs(40),
                    seed: 3,
                    record_series: true,
                    ..SimConfig::default()
                },
                topo,
            )
            .unwrap();
            sim.add_flow(FlowSpec::tfrc(
                0,
                tfcc_core::tfrc::TfrcConfig::default(),
                Time::ZERO,
                None,
            ))
            .unwrap();
            if let Some(t) = loss_off_at {
                sim.add_event(ScheduledEvent {
                    at: Time::from_secs(t),
                    link: 0,
                    action: LinkAction::SetLoss(None),
                })
                .unwrap();
            }
            sim.run()
        };
        // Loss stops at 35 s: nothing is lost in the 40-60 s window.
        let quiet = run(Some(35));
        let f = &quiet.summary.flows[0];
        assert_eq!(f.packets_lost, 0);
        assert_eq!(f.loss_event_rate, 0.0);
        // 35 s of 2 % loss are still in the history: the end-of-run estimate is not 0.
        let last_p = quiet.flow_series.last().and_then(|x| x.p).unwrap_or(0.0);
        assert!(last_p > 0.0, "{last_p}");
        // Loss throughout: a proper rate, at most the loss ratio and not far below it (at
        // about 14 packets per RTT few 2 % losses share an RTT).
        let lossy = run(None);
        let f = &lossy.summary.flows[0];
        let loss_ratio = f.packets_lost as f64 / f.packets_sent as f64;
        assert!(f.loss_event_rate > 0.0);
        assert!(
            f.loss_event_rate <= loss_ratio,
            "{} > {loss_ratio}",
            f.loss_event_rate
        );
        assert!(
            f.loss_event_rate > 0.7 * loss_ratio,
            "{} vs {loss_ratio}",
            f.loss_event_rate
        );
    }

    /// A TCP flow on a tiny link (16 kb/s, a 1040-byte segment every 0.52 s, a queue that never
    /// fills) loses nothing, but slow start stretches the RTT past the RTO: its retransmission
    /// timeouts are spurious. They counted as loss events, so the flow read a loss event rate
    /// near 1 with no packet lost. Now a loss event is a window reduction caused by a detected
    /// loss: the spurious timeouts are counted apart, and the loss event rate is 0.
    #[test]
    fn a_spurious_tcp_timeout_is_not_a_loss_event() {
        let topo = one_link(
            Rate::from_kbps(16),
            Dur::from_millis(10),
            QueueSpec::DropTail(QueueLimit::Packets(1000)),
            None,
        );
        let mut sim = Simulation::new(cfg(60), topo).unwrap();
        sim.add_flow(FlowSpec::tcp(
            0,
            tfcc_core::tcp::TcpConfig::default(),
            Time::ZERO,
            None,
        ))
        .unwrap();
        let r = sim.run();
        let f = &r.summary.flows[0];
        assert_eq!(f.packets_lost, 0);
        assert!(f.timeouts > 0, "no timeout: the scenario tests nothing");
        assert_eq!(f.spurious_timeouts, f.timeouts);
        assert_eq!(f.loss_event_rate, 0.0);
    }

    /// A TCP flow whose only link goes down 5 s before the end of a lossless run times out
    /// (every segment in flight is lost, and so is each retransmission) and the run ends with
    /// the timeouts unresolved: no ACK has told whether the retransmission or the original got
    /// through. They counted as loss events, so the flow read a loss event rate > 0 from
    /// timeouts whose fate was unknown. Now they are in `timeouts` but not loss events.
    #[test]
    fn a_tcp_timeout_unresolved_at_the_end_of_the_run_is_not_a_loss_event() {
        let topo = one_link(
            Rate::from_mbps(2),
            Dur::from_millis(10),
            QueueSpec::DropTail(QueueLimit::Packets(1000)),
            None,
        );
        let mut sim = Simulation::new(cfg(20), topo).unwrap();
        // A window of 10 segments never fills the queue: no drop, no RTT inflation.
        let tcp = tfcc_core::tcp::TcpConfig {
            max_window: 10,
            ..Default::default()
        };
        sim.add_flow(FlowSpec::tcp(0, tcp, Time::ZERO, None))
            .unwrap();
        sim.add_event(ScheduledEvent {
            at: Time::from_secs(15),
            link: 0,
            action: LinkAction::SetUp(false),
        })
        .unwrap();
        let r = sim.run();
        let f = &r.summary.flows[0];
        assert!(f.timeouts > 0, "no timeout: the scenario tests nothing");
        assert_eq!((f.spurious_timeouts, f.retransmits), (0, f.timeouts));
        assert_eq!(f.loss_event_rate, 0.0, "{} timeouts", f.timeouts);
    }

    #[test]
    fn a_rate_change_takes_effect_from_the_next_packet() {
        let topo = one_link(
            Rate::from_mbps(8),
            Dur::ZERO,
            QueueSpec::DropTail(QueueLimit::Packets(1000)),
            None,
        );
        let r = cbr_run(
            topo,
            1,
            Rate::from_mbps(16),
            &[(500, LinkAction::SetRate(Rate::from_mbps(4)))],
        );
        // 500 packets at 1 ms in the first half (the 500th ends at 500 ms), then 2 ms each.
        assert_eq!(r.summary.links[0].tx_packets, 500 + 250);
        let thr: Vec<f64> = r
            .link_series
            .iter()
            .filter(|s| s.link == 0)
            .map(|s| s.throughput_bps)
            .collect();
        assert_eq!(thr[2], 8e6);
        assert_eq!(thr[8], 4e6);
    }

    /// A 4 Mb/s CBR of 1000-byte packets over one 8 Mb/s link with a DropTail `limit`, for
    /// 1 s, with `events` (milliseconds, action) on the link.
    fn cbr_over_one_link(limit: u32, events: [(u64, LinkAction); 2]) -> RunResult {
        let topo = one_link(
            Rate::from_mbps(8),
            Dur::from_millis(10),
            QueueSpec::DropTail(QueueLimit::Packets(limit)),
            None,
        );
        cbr_run(topo, 1, Rate::from_mbps(4), &events)
    }

    #[test]
    fn a_down_link_drops_arrivals_and_resumes_when_up() {
        let r = cbr_over_one_link(
            100,
            [
                (300, LinkAction::SetUp(false)),
                (500, LinkAction::SetUp(true)),
            ],
        );
        let l = &r.summary.links[0];
        // Arrivals at 300, 302, ..., 498 ms are refused (the one at 300 ms comes after the
        // event, scheduled first); the one at 500 ms is accepted (the up event comes first).
        assert_eq!(l.down_drops, 100);
        assert_eq!(l.queue_drops, 0);
        assert_eq!(r.summary.flows[0].packets_lost, 100);
        let t = r.summary.flows[0].totals;
        assert_eq!(
            t.data_sent,
            t.data_delivered + t.data_dropped + t.data_in_flight
        );
    }

    #[test]
    fn a_stalled_link_holds_arrivals_and_releases_them_as_a_burst() {
        let r = cbr_over_one_link(
            60,
            [
                (300, LinkAction::SetStalled(true)),
                (500, LinkAction::SetStalled(false)),
            ],
        );
        let l = &r.summary.links[0];
        // The 100 arrivals of 300-498 ms go to the queue instead of being refused: 59 fit
        // (as ns-2's DropTail, a limit of 60 keeps 59 waiting beside the one on the wire, and
        // nothing is on the wire while the link is stalled), 41 overflow.
        assert_eq!(l.down_drops, 0);
        assert_eq!(l.queue_drops, 41);
        assert_eq!(r.summary.flows[0].packets_lost, 41);
        // Released at 500 ms, the held packets go out back to back at 8 Mb/s (1 ms each) while
        // new ones arrive every 2 ms: the queue is empty again 120 ms later, and no time-series
        // sample after that shows a waiting packet.
        assert!(r
            .link_series
            .iter()
            .filter(|s| s.time > Time::from_millis(650))
            .all(|s| s.queue_pkts == 0));
        let t = r.summary.flows[0].totals;
        assert_eq!(
            t.data_sent,
            t.data_delivered + t.data_dropped + t.data_in_flight
        );
    }

    /// A window-limited sender clocked by echoes, with an RTO-like deadline pushed back on every
    /// echo: exercises the reverse path and lazy timer cancellation.
    struct Windowed {
        window: u32,
        in_flight: u32,
        seq: u64,
        deadline: Time,
        timeouts: u64,
    }
    impl Endpoint for Windowed {
        fn on_packet(&mut self, now: Time, _: &Packet) {
            self.in_flight -= 1;
            self.deadline = now + Dur::from_secs(1);
        }
        fn on_timeout(&mut self, now: Time) {
            if now >= self.deadline {
                self.timeouts += 1;
                self.in_flight = 0;
                self.deadline = now + Dur::from_secs(1);
            }
        }
        fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
            (self.in_flight < self.window).then(|| {
                self.in_flight += 1;
                self.seq += 1;
                if self.deadline == Time::MAX {
                    self.deadline = now + Dur::from_secs(1);
                }
                Packet::raw(self.seq, now, 1000)
            })
        }
        fn next_timeout(&self) -> Option<Time> {
            (self.deadline != Time::MAX).then_some(self.deadline)
        }
        fn stats(&self) -> Stats {
            let mut s = Stats::default();
            s.cwnd = Some(f64::from(self.window));
            s.timeouts = self.timeouts;
            s.packets_sent = self.seq;
            s
        }
    }
    impl Sender for Windowed {}

    #[derive(Default)]
    struct Echo {
        pending: u32,
        bytes: u64,
    }
    impl Endpoint for Echo {
        fn on_packet(&mut self, _: Time, p: &Packet) {
            self.pending += 1;
            self.bytes += u64::from(p.size);
        }
        fn on_timeout(&mut self, _: Time) {}
        fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
            (self.pending > 0).then(|| {
                self.pending -= 1;
                Packet::raw(0, now, 40)
            })
        }
        fn next_timeout(&self) -> Option<Time> {
            None
        }
        fn stats(&self) -> Stats {
            Stats::default()
        }
    }
    impl Receiver for Echo {
        fn delivered_bytes(&self) -> u64 {
            self.bytes
        }
    }

    #[test]
    fn a_self_clocked_sender_fills_the_link_without_spurious_timeouts() {
        // 10 Mb/s, 20 ms each way: BDP = 10e6 · 0.04 / 8000 = 50 packets; a window of 60
        // keeps the link busy with 10 packets queued.
        let topo = one_link(
            Rate::from_mbps(10),
            Dur::from_millis(20),
            QueueSpec::DropTail(QueueLimit::Packets(100)),
            None,
        );
        let mut sim = Simulation::new(
            SimConfig {
                duration: Dur::from_secs(10),
                measure_from: Dur::from_secs(1),
                ..SimConfig::default()
            },
            topo,
        )
        .unwrap();
        sim.add_flow(FlowSpec::custom(
            "windowed",
            0,
            Box::new(Windowed {
                window: 60,
                in_flight: 0,
                seq: 0,
                deadline: Time::MAX,
                timeouts: 0,
            }),
            Box::new(Echo::default()),
            Time::ZERO,
            None,
        ))
        .unwrap();
        let r = sim.run();
        let f = &r.summary.flows[0];
        assert_eq!(f.timeouts, 0);
        assert!((r.summary.links[0].utilization - 1.0).abs() < 1e-6);
        assert!((f.throughput_bps - 10e6).abs() < 10e6 * 0.001);
        assert_eq!(f.cov.map(|c| c < 1e-2), Some(true));
        // Per data packet: one TxDone and one Arrive on each of the two links, and no timer
        // event per echo (lazy cancellation): a few events per packet, not more.
        let packets = f.totals.data_sent as f64;
        let per_packet = r.summary.events as f64 / packets;
        assert!(per_packet < 4.2, "{per_packet} events per packet");
        let t = f.totals;
        assert_eq!(
            t.feedback_sent,
            t.feedback_delivered + t.feedback_dropped + t.feedback_in_flight
        );
    }

    fn dumbbell_run(seed: u64) -> RunResult {
        dumbbell_sim(seed).run()
    }

    fn dumbbell_sim(seed: u64) -> Simulation {
        let topo = Topology::dumbbell(&DumbbellSpec {
            bottleneck: LinkSpec::new(
                "bottleneck",
                Rate::from_mbps(10),
                Dur::from_millis(20),
                QueueSpec::Red(RedConfig::default()),
            )
            .with_loss(LossModel::Bernoulli { p: 0.01 }),
            access: AccessSpec::new(
                Rate::from_mbps(100),
                DelaySpread::Uniform {
                    lo: Dur::from_millis(1),
                    hi: Dur::from_millis(5),
                },
            ),
            flows: 3,
        })
        .unwrap();
        let mut sim = Simulation::new(
            SimConfig {
                duration: Dur::from_secs(5),
                measure_from: Dur::from_secs(1),
                seed,
                ..SimConfig::default()
            },
            topo,
        )
        .unwrap();
        for i in 0..3 {
            let mut c = cbr(Rate::from_mbps(4 + i), 1000);
            if i == 2 {
                c.on_off = Some((Dur::from_millis(300), Dur::from_millis(200)));
            }
            sim.add_flow(FlowSpec::cbr(
                i as usize,
                c,
                Time::from_millis(100 * i),
                None,
            ))
            .unwrap();
        }
        sim
    }

    #[test]
    fn a_flow_sink_takes_the_series_and_nothing_else_changes() {
        let kept = dumbbell_run(7);
        let taken = Arc::new(Mutex::new(Vec::new()));
        let mut sim = dumbbell_sim(7);
        let into = Arc::clone(&taken);
        sim.set_flow_sink(Box::new(move |s| into.lock().unwrap().push(s.clone())));
        let r = sim.run();
        assert!(r.flow_series.is_empty());
        assert_eq!(*taken.lock().unwrap(), kept.flow_series);
        assert_eq!(r.summary, kept.summary);
        assert_eq!(r.link_series, kept.link_series);
    }

    #[test]
    fn the_same_seed_gives_identical_results_and_another_seed_differs() {
        let a = dumbbell_run(7);
        let b = dumbbell_run(7);
        assert_eq!(a, b);
        let c = dumbbell_run(8);
        assert_ne!(a.summary.links, c.summary.links);
        // Overloaded (4+5+6 Mb/s on/off into 10 Mb/s): RED drops early, loss adds artificially.
        let l = &a.summary.links[0];
        assert!(l.early_drops > 0 && l.artificial_drops > 0);
        assert!(a.summary.jain_index.unwrap() > 0.5);
    }

    #[test]
    fn progress_is_reported_in_simulated_time_up_to_the_end() {
        let topo = one_link(Rate::from_mbps(1), Dur::ZERO, QueueSpec::default(), None);
        let mut sim = Simulation::new(cfg(3), topo).unwrap();
        sim.add_flow(FlowSpec::cbr(
            0,
            cbr(Rate::from_kbps(100), 100),
            Time::ZERO,
            None,
        ))
        .unwrap();
        let mut seen = Vec::new();
        sim.run_with_progress(&mut |now, end| seen.push((now, end)));
        let end = Time::from_secs(3);
        assert_eq!(
            seen,
            vec![
                (Time::from_secs(1), end),
                (Time::from_secs(2), end),
                (end, end),
                (end, end)
            ]
        );
    }

    #[test]
    fn a_cancelled_run_stops_at_the_progress_report_that_asked() {
        let topo = Topology::dumbbell(&crate::topology::DumbbellSpec {
            bottleneck: crate::link::LinkSpec::new(
                "bottleneck",
                Rate::from_mbps(10),
                Dur::from_millis(10),
                crate::queue::QueueSpec::default(),
            ),
            access: crate::topology::AccessSpec::new(
                Rate::from_mbps(100),
                crate::topology::DelaySpread::Fixed(Dur::from_millis(1)),
            ),
            flows: 1,
        })
        .unwrap();
        let cfg = SimConfig::default();
        let mut calls = Vec::new();
        let out = Simulation::new(cfg.clone(), topo.clone())
            .unwrap()
            .run_cancellable(&mut |now, _| {
                calls.push(now);
                now < Time::from_secs(3)
            });
        assert!(out.is_none());
        assert_eq!(calls.last(), Some(&Time::from_secs(3)));
        let out = Simulation::new(cfg, topo)
            .unwrap()
            .run_cancellable(&mut |_, _| true);
        assert!(out.is_some());
    }

    #[test]
    fn bad_settings_are_rejected_with_a_precise_error() {
        let topo = || one_link(Rate::from_mbps(1), Dur::ZERO, QueueSpec::default(), None);
        let c = SimConfig {
            measure_from: Dur::from_secs(20),
            ..cfg(10)
        };
        assert!(
            matches!(Simulation::new(c, topo()), Err(SimError::InvalidConfig(m)) if m.contains("measure_from"))
        );
        let mut sim = Simulation::new(cfg(1), topo()).unwrap();
        let e = sim
            .add_flow(FlowSpec::cbr(
                3,
                cbr(Rate::from_mbps(1), 100),
                Time::ZERO,
                None,
            ))
            .unwrap_err();
        assert!(e.to_string().contains("route 3"), "{e}");
        let e = sim
            .add_flow(FlowSpec::cbr(0, cbr(Rate::ZERO, 100), Time::ZERO, None))
            .unwrap_err();
        assert!(e.to_string().contains("rate"), "{e}");
        let e = sim
            .add_event(ScheduledEvent {
                at: Time::ZERO,
                link: 9,
                action: LinkAction::SetUp(false),
            })
            .unwrap_err();
        assert!(matches!(e, SimError::InvalidEvent { event: 0, .. }));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn packets_are_conserved_and_links_never_exceed_capacity_or_limits(
            seed in any::<u64>(),
            flows in proptest::collection::vec((100u64..20_000, 40u32..1500, 0u64..500), 1..5),
            limit in 2u32..60,
            p in 0.0f64..0.2,
            red in any::<bool>(),
            rate_kbps in 500u64..20_000,
        ) {
            let queue = if red {
                QueueSpec::Red(RedConfig { limit, ..RedConfig::default() })
            } else {
                QueueSpec::DropTail(QueueLimit::Packets(limit))
            };
            let topo = Topology::dumbbell(&DumbbellSpec {
                bottleneck: LinkSpec::new("bottleneck", Rate::from_kbps(rate_kbps), Dur::from_millis(15), queue)
                    .with_loss(LossModel::Bernoulli { p }),
                access: AccessSpec::new(Rate::from_mbps(100), DelaySpread::Fixed(Dur::from_millis(2))),
                flows: flows.len(),
            }).unwrap();
            let mut sim = Simulation::new(SimConfig {
                duration: Dur::from_secs(2),
                measure_from: Dur::ZERO,
                seed,
                ..SimConfig::default()
            }, topo.clone()).unwrap();
            for (i, (kbps, size, start_ms)) in flows.iter().enumerate() {
                sim.add_flow(FlowSpec::cbr(i, cbr(Rate::from_kbps(*kbps), *size), Time::from_millis(*start_ms), None)).unwrap();
            }
            let r = sim.run();
            let mut in_flight = 0;
            for f in &r.summary.flows {
                let t = f.totals;
                prop_assert_eq!(t.data_sent, t.data_delivered + t.data_dropped + t.data_in_flight);
                prop_assert_eq!(t.feedback_sent, 0);
                in_flight += t.data_in_flight;
            }
            prop_assert!(in_flight <= r.summary.peak_packets);
            let b = topo.link_id("bottleneck").unwrap() as usize;
            let l = &r.summary.links[b];
            // Whole-window capacity plus at most the packet that started before the end.
            let cap_bits = rate_kbps as f64 * 1e3 * 2.0 + 1500.0 * 8.0;
            prop_assert!(l.tx_bytes as f64 * 8.0 <= cap_bits);
            prop_assert!(l.utilization <= 1.0 + 1e-9);
            for s in r.link_series.iter().filter(|s| s.link as usize == b) {
                if !red {
                    prop_assert!(s.queue_pkts < limit);
                }
                prop_assert!(s.throughput_bps <= rate_kbps as f64 * 1e3 * 1.0 + 1500.0 * 8.0 / 0.1);
            }
        }
    }
}
