//! Web transactions behind an access gateway: 003 Ch. 4's MSF-RS simulation (§4.5.1, Fig. 4.8).
//!
//! Clients in weighted classes sit behind a user-side gateway; a 2 Mb/s access link joins the
//! gateway to the ISP router, which reaches remote web servers over independent links. Each client
//! sends requests with exponential inter-request times to a server drawn uniformly; each response
//! has a lognormal size (M = 9.357, S = 1.318, Barford & Crovella) and comes back over TCP-SACK.
//! The gateway either forwards requests at once (`plain`) or schedules them with MSF-RS
//! ([`tfcc_core::msfrs`]).
//!
//! Modelling choices (the thesis uses ns-2's `HTTP/Cache` proxy and does not give these):
//! - connections are persistent, as in ns-2's `HTTP/Cache`, whose agents are connected once at
//!   start-up ("it's the user's responsibility to connect clients to caches, and caches to
//!   servers") and carry every request and response over one `FullTcp` byte stream each
//!   ([`Connections`]): either one TCP-SACK connection per (client, server) pair
//!   ([`Connections::PerPair`]), or, as ns-2's proxy does, one per server shared by all the
//!   gateway's clients ([`Connections::PerServer`]). A response is `ceil(L/1000)` segments
//!   offered to the server's sender, so responses on one connection are served back to back,
//!   in request order, not by fresh connections;
//! - a request is not a packet: it reaches the gateway after the client link's delay and the
//!   server after the one-way delay of the access and server links (the uplink is idle but for
//!   ACKs, so queuing there is negligible; 003 assumes the uplink is not a bottleneck);
//! - response bytes count at the gateway when they reach the client (2 ms later, at 10 Mb/s);
//! - exceptive downlink traffic (on/off CBR to a host of no class, §4.6 type 3) counts in U only.
//! - ns-2's `HTTP/Cache` merges a request for a page it has a request pending for; that is an
//!   opt-in option here ([`MergePending`], off by default; docs/reproductions/msfrs.md).
//!
//! [`WebGateway`] is the runtime the simulator drives ([`crate::sim::Simulation::set_web`]);
//! [`AccessGatewaySpec::build`] then [`AccessGateway::into_simulation`] set a run up.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use tfcc_core::msfrs::{Msfrs, MsfrsConfig, MsfrsConfigError};
use tfcc_core::tcp::{TcpConfig, Variant};
use tfcc_core::{Dur, Rate, Time};

use crate::drr::DrrConfig;
use crate::flow::{CbrConfig, FlowSpec};
use crate::link::LinkSpec;
use crate::queue::{QueueLimit, QueueSpec};
use crate::rng::SimRng;
use crate::sim::Simulation;
use crate::topology::{Route, Topology};
use crate::SimError;

/// What the gateway does with requests.
#[derive(Clone, Debug, PartialEq)]
pub enum GatewayKind {
    /// Forward every request at once: the "non-MSF-RS" gateway of §4.5.3.
    Plain,
    /// MSF-RS with this configuration (its `capacity` should be the access downlink's rate).
    Msfrs(MsfrsConfig),
    /// §4.5.2's DRR baseline (Fig. 4.10): the gateway forwards requests at once and schedules
    /// the packets it sends towards the ISP (the access uplink) with deficit round robin over
    /// one queue per class, each class' quantum `quantum · weight` bytes. The thesis puts DRR
    /// "instead of MSF-RQ at the user-side gateway" and finds its queues always empty: the
    /// responses have already crossed the bottleneck (the ISP router's end of the access
    /// link) when they reach the gateway, so a scheduler there has nothing to reorder.
    Drr {
        /// Bytes per round for weight 1: 1000 B, one segment.
        quantum: u32,
        /// Class weights, class 1 first (4 : 2 : 1 in §4.5.1).
        weights: Vec<f64>,
    },
}

/// Which persistent TCP connections carry the responses (003 §4.5.1 runs ns-2's `HTTP/Cache`,
/// whose `Http` agents are connected once, at start-up, with one `FullTcp` agent pair per
/// connected (client, cache) and (cache, server) and `Application/TcpApp` writing each message
/// into that one byte stream; the thesis does not say more). Neither mode opens a connection
/// per request: ns-2's web cache never does, so there is no per-request handshake or slow
/// start from the initial window to model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Connections {
    /// One connection per (client, server) pair, from the server to the client through the
    /// gateway: responses to different clients never wait for each other at a server. The
    /// first model of this crate; not ns-2's topology.
    #[default]
    PerPair,
    /// ns-2's `HTTP/Cache` at the gateway: one connection per server, from the server to the
    /// gateway, shared by every client's responses from that server in the order the gateway
    /// forwarded the requests (one `TcpApp` stream: a small response waits behind a large one
    /// sent before it). The cache answers a client only once it holds the whole response
    /// (`get-response-GET` then `answer-request-GET`), so each response then crosses the
    /// client link (10 Mb/s, 2 ms) store-and-forward; that hop is modelled as its
    /// serialisation plus propagation, one response at a time per client, without TCP (it is
    /// five times faster than the access link and never the bottleneck). MSF-RS counts the
    /// response bytes (Eq. 4.1) and ends a transaction (W) at the gateway, where it runs.
    PerServer,
}

/// Whether the gateway's proxy merges a request for a page it already has a request pending
/// for (opt-in; [`MergePending::Off`] is the model every claim runs).
///
/// ns-2's `HTTP/Cache` (tcl/webcache/http-cache.tcl), which 003 §4.5.1 runs MSF-RS in: its
/// `get-request` sends a request to `cache-hit` when `exist-page` finds the page stored (the
/// cache function proper: answer from the stored copy) and to `cache-miss` otherwise.
/// `cache-miss` appends the client to the page's requester list (`creq_`) and, "if there's a
/// previous request going on", returns without a second request; only the first goes out by
/// `send-request`, which marks the page `pending_`. When the response comes back,
/// `get-response-GET` calls `answer-pending-requests`, which sends the page to every client in
/// `creq_` (`answer-request-GET`) and clears `creq_` and `pending_`. The merging therefore sits
/// in the miss path, not in the hit path that "disables the cache function" (§4.5.1) turns off;
/// whether the thesis kept it is not said. A page is `server:id`, and `PagePool/Math`'s
/// `gen-pageid` returns 0 ("Single page", webcache/pagepool.cc), so with it every request to
/// a server is for the same page and the merge key here is the server.
///
/// Where MSF-RS sits relative to the merge depends on where the thesis hooked it into
/// `HTTP/Cache`, which it does not say; both places are offered:
/// - [`MergePending::AtArrival`]: MSF-RS holds the requests `cache-miss` sends (at
///   `send-request`), so the merge check comes first: a request for a page whose request is
///   queued in MSF-RS or in transfer joins it and never enters MSF-RS's queue (not counted in
///   W). Its `T_q` runs to the first request's release (0 if that was already released).
/// - [`MergePending::AtRelease`]: MSF-RS holds requests as they reach the proxy
///   (`get-request`) and hands each released one to the cache logic: a released request for a
///   page already in transfer joins that transfer; it counts in W from its release until the
///   shared response is whole at the proxy.
///
/// A merged client gets the first request's response (the page's size; the size its own
/// request drew is dropped) from the proxy once the whole response is there, over its client
/// link (10 Mb/s, 2 ms, store-and-forward, as [`Connections::PerServer`] delivers every
/// response). With [`Connections::PerPair`] the first response ends at its own client, and
/// the copies leave the gateway at that instant (2 ms late; per-pair is not ns-2's layout).
/// The copies do not cross the access link, so they are not reported to MSF-RS as response
/// bytes (its Eq. 4.1 counters and its utilisation measurement take one count in
/// [`tfcc_core::msfrs`]); the report counts them for their users.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MergePending {
    /// Every request is forwarded to its server (its own transfer).
    #[default]
    Off,
    /// Merge at the gateway arrival, before MSF-RS's queue.
    AtArrival,
    /// Merge when MSF-RS releases the request.
    AtRelease,
}

/// One class of users.
#[derive(Clone, Debug, PartialEq)]
pub struct WebClass {
    /// Clients (users) in the class: 4 in §4.5.2.
    pub clients: u32,
    /// Mean exponential inter-request time per client: 5 s in §4.5.1, 1 s and 10 s in §4.5.5.
    pub think_time: Dur,
    /// Periods `[start, stop)` during which the class' clients send requests; empty = always.
    pub active: Vec<(Time, Time)>,
    /// 0: open loop, each client a Poisson process of requests (§4.5.1's exponential
    /// inter-request times). `k ≥ 1`: closed loop, each client runs `k` request threads that
    /// each wait for their response, then think for an exponential time: a browser's parallel
    /// connections. A closed-loop class stays backlogged without its queue growing with the run,
    /// so a class that stops leaves only "a bit of bandwidth due to unfinished transactions"
    /// (§4.5.2), as the thesis' Fig. 4.9 shows.
    pub parallel: u32,
}

/// The largest response a web request draws: 4 GiB. The lognormal (M = 9.357, S = 1.318)
/// passes it with probability about 10^-22, so the thesis' workload never meets the cap; it
/// keeps the byte counts, sums of responses, within `u64` whatever `size_mu` and `size_sigma`
/// the scenario layer admits.
pub const MAX_RESPONSE_BYTES: u64 = 1 << 32;

/// The access-gateway scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessGatewaySpec {
    pub classes: Vec<WebClass>,
    /// Remote servers: 12 in §4.5.1.
    pub servers: u32,
    /// Access link, both directions: 2 Mb/s (§4.6).
    pub access_rate: Rate,
    pub access_delay: Dur,
    /// DropTail limit at both ends of the access link, packets ("1.5 bandwidth-delay
    /// products", §4.5.1: 1.5 × 2 Mb/s × ~0.1 s RTT ≈ 38 packets of 1000 B).
    pub access_queue: u32,
    /// Client–gateway links: 10 Mb/s, 2 ms (§4.5.1).
    pub client_rate: Rate,
    pub client_delay: Dur,
    /// Server links: rate, and one-way delays uniform over each range; the first half of the
    /// servers ("domestic") use the first range, the rest ("overseas") the second. The thesis
    /// gives the values only in its Fig. 4.8.
    pub server_rate: Rate,
    pub server_delay: [(Dur, Dur); 2],
    /// Lognormal response size parameters `M`, `S` of `ln(bytes)` (§4.5.1).
    pub size_mu: f64,
    pub size_sigma: f64,
    /// The gateway.
    pub gateway: GatewayKind,
    /// Which connections carry the responses.
    pub connections: Connections,
    /// ns-2 `HTTP/Cache`'s merging of requests for a pending page (default off).
    pub merge_pending: MergePending,
    /// Exceptive downlink CBR of no class (§4.6), or `None`.
    pub exceptive: Option<CbrConfig>,
    /// When the exceptive CBR starts (its first on period). Fig. 4.16's CBR stops at 1280 s and
    /// 2560 s with a 640 s period: on and off 640 s each, starting after one off period.
    pub exceptive_start: Time,
    /// The servers' TCP: [`server_tcp`] unless the scenario's `tcp_defaults` changes it.
    pub tcp: TcpConfig,
}

impl Default for AccessGatewaySpec {
    fn default() -> Self {
        let class = |clients| WebClass {
            clients,
            think_time: Dur::from_secs(1),
            active: Vec::new(),
            parallel: 0,
        };
        AccessGatewaySpec {
            classes: vec![class(4), class(4), class(4)],
            servers: 12,
            access_rate: Rate::from_mbps(2),
            access_delay: Dur::from_millis(10),
            access_queue: 38,
            client_rate: Rate::from_mbps(10),
            client_delay: Dur::from_millis(2),
            server_rate: Rate::from_mbps(10),
            server_delay: [
                (Dur::from_millis(5), Dur::from_millis(25)),
                (Dur::from_millis(50), Dur::from_millis(150)),
            ],
            size_mu: 9.357,
            size_sigma: 1.318,
            gateway: GatewayKind::Msfrs(MsfrsConfig::default()),
            connections: Connections::PerPair,
            merge_pending: MergePending::Off,
            exceptive: None,
            exceptive_start: Time::ZERO,
            tcp: server_tcp(),
        }
    }
}

/// A request's handle inside MSF-RS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Request {
    flow: u32,
    thread: u32,
    class: usize,
    user: u32,
    bytes: u64,
    arrived: Time,
}

/// A response in service on a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    /// Where the response starts in the connection's byte stream, and the cumulative
    /// delivered-byte count at which it is complete (segment-rounded).
    start: u64,
    target: u64,
    class: usize,
    user: u32,
    /// Gateway arrival of the request, and its release towards the server.
    arrived: Time,
    released: Time,
    /// The response's size, bytes.
    bytes: u64,
    /// The request thread waiting for it.
    thread: u32,
    /// The page (server) asked for.
    page: u32,
    /// The transfer opened the page's pending state ([`MergePending`] on): merged requests
    /// wait for it.
    leader: bool,
    /// A merged request's copy of another request's response, sent by the proxy.
    merged: bool,
}

/// A request merged into another one for the same page ([`MergePending`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Waiter {
    thread: u32,
    class: usize,
    user: u32,
    arrived: Time,
    /// Release (the end of `T_q`): `None` while the page's first request is queued in MSF-RS.
    released: Option<Time>,
}

/// A page's pending state at the proxy ([`MergePending`]).
#[derive(Clone, Debug, Default)]
struct PageState {
    /// A request for the page is pending (queued in MSF-RS with [`MergePending::AtArrival`],
    /// or in transfer) until its response is whole at the proxy.
    open: bool,
    /// [`MergePending::AtArrival`]: when the first request was released.
    released: Option<Time>,
    waiters: Vec<Waiter>,
}

/// A connection slot: the TCP flow between one server and one client (or the gateway).
#[derive(Clone, Debug)]
struct Slot {
    /// The request's one-way trip from the gateway to the server.
    uplink: Dur,
    /// Responses in service, in the order they are in the byte stream.
    pending: VecDeque<Pending>,
    /// Bytes offered so far (the next target's base).
    offered: u64,
    /// Delivered bytes last seen.
    seen: u64,
}

/// One finished transaction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transaction {
    pub class: usize,
    pub user: u32,
    pub bytes: u64,
    /// Arrival at the gateway.
    pub arrived: Time,
    /// `T_q`: gateway arrival to release.
    pub queued: Dur,
    /// `T_s`: release to the last byte at the client.
    pub service: Dur,
}

/// W, W+ and U at each WRC update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowSample {
    pub time: Time,
    pub utilization: f64,
    pub window_max: f64,
    pub outstanding: u32,
    /// Whether the window bound at the update, so Eq. 4.3 recomputed W+.
    pub binding: bool,
}

/// What the gateway saw during a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebReport {
    /// Every completed transaction.
    pub transactions: Vec<Transaction>,
    /// Response bytes per class per second of the run (`bytes[class][second]`).
    pub class_bytes: Vec<Vec<u64>>,
    /// Response bytes per user (index = user id = client number).
    pub user_bytes: Vec<u64>,
    /// The user's class.
    pub user_class: Vec<usize>,
    /// MSF-RS's WRC updates (empty for a plain gateway).
    pub windows: Vec<WindowSample>,
    /// Requests generated, and still queued or outstanding at the end.
    pub requests: u64,
    pub unfinished: u64,
    /// Requests forwarded to a server (each one response transfer), and requests merged into
    /// another's transfer ([`MergePending`]).
    pub transfers: u64,
    pub merged: u64,
}

enum Gate {
    Plain,
    Msfrs(Box<Msfrs<Request>>),
}

/// The gateway and the clients' request processes, driven by the simulator.
pub struct WebGateway {
    gate: Gate,
    classes: Vec<WebClass>,
    /// Request threads: one per open-loop client, `parallel` per closed-loop client.
    threads: Vec<Thread>,
    servers: u32,
    connections: Connections,
    merge: MergePending,
    /// Per server: its page's pending state ([`MergePending`]).
    pages: Vec<PageState>,
    slots: Vec<Slot>,
    /// [`Connections::PerServer`]: each client link's end of serialisation so far, and the
    /// link's rate and delay.
    client_free: Vec<Time>,
    client_hop: (Rate, Dur),
    /// [`Connections::PerServer`]: responses on the client link, by arrival at the client.
    deliveries: BinaryHeap<Reverse<(Time, u64, Pending)>>,
    /// Requests on their way to the server: (arrival at server, seq, flow, bytes).
    uplink: BinaryHeap<Reverse<(Time, u64, u32, u64)>>,
    seq: u64,
    size: (f64, f64),
    /// Wire bytes per payload byte of a TCP segment: (segment + header, segment).
    wire: (u64, u64),
    /// The exceptive CBR's flow id, if any.
    exceptive: Option<u32>,
    exceptive_seen: u64,
    /// Flow offers for the simulator to apply: (flow, bytes).
    offers: Vec<(u32, u64)>,
    report: WebReport,
}

/// A client's request process (or one of its closed-loop threads).
struct Thread {
    class: usize,
    client: u32,
    /// Next request; `Time::MAX` while a closed-loop thread waits for its response.
    next: Time,
    rng: SimRng,
}

/// The servers' TCP (§4.5.1): SACK, maximum window 200, no delayed ACKs, 1000-byte segments.
/// Its connections are persistent, so after an idle gap of one RTO the sender's timer fires
/// with nothing outstanding and it restarts from one segment (ns-2 `Agent/TCP`'s
/// `slow_start_restart_` with `restart_bugfix_`, [`tfcc_core::tcp`]): a response that follows
/// a pause pays slow start again, as on a new connection but without a handshake. ns-2's
/// `FullTcp`, under `HTTP/Cache`, restarts from the initial window (2) instead; trying that
/// moved M2's closed-loop latencies by under 0.1 s (docs/reproductions/log/msfrs.md).
pub fn server_tcp() -> TcpConfig {
    let mut tcp = TcpConfig::with_variant(Variant::Sack);
    tcp.max_window = 200; // §4.5.1
    tcp.delayed_ack = None; // §4.5.1 "no delayed acknowledgments"
    tcp
}

/// Standard normal by Box–Muller from two uniforms; `1 − u` keeps the logarithm finite.
fn normal(rng: &mut SimRng) -> f64 {
    let (u1, u2) = (1.0 - rng.uniform(), rng.uniform());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A built access-gateway scenario. The gateway addresses its connections by flow id, so the
/// flows must be the simulation's first, in order: [`AccessGateway::into_simulation`] does that.
pub struct AccessGateway {
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    pub gateway: WebGateway,
}

impl AccessGateway {
    /// A simulation of this topology with these flows (ids `0..flows.len()`) and the gateway
    /// driving them; more flows and events may be added after.
    pub fn into_simulation(self, cfg: crate::sim::SimConfig) -> Result<Simulation, SimError> {
        let mut sim = Simulation::new(cfg, self.topology)?;
        for f in self.flows {
            sim.add_flow(f)?;
        }
        sim.set_web(self.gateway);
        Ok(sim)
    }
}

impl AccessGatewaySpec {
    /// Builds the topology, one TCP-SACK connection per (client, server), the optional
    /// exceptive CBR, and the gateway runtime, with random draws from `seed`.
    pub fn build(&self, seed: u64) -> Result<AccessGateway, SimError> {
        let bad = |s: String| SimError::InvalidConfig(format!("access-gateway: {s}"));
        if self.classes.is_empty() || self.servers == 0 {
            return Err(bad("needs at least one class and one server".into()));
        }
        if !(self.size_sigma >= 0.0 && self.size_mu.is_finite() && self.size_sigma.is_finite()) {
            return Err(bad("response size parameters must be finite, S >= 0".into()));
        }
        if self.classes.iter().any(|c| c.think_time.is_zero()) {
            return Err(bad("think_time must be positive".into()));
        }
        let gate = match &self.gateway {
            GatewayKind::Plain => Gate::Plain,
            GatewayKind::Drr { quantum, weights } => {
                if self.connections == Connections::PerServer {
                    return Err(bad(
                        "the drr gateway queues the uplink per class, which needs \
                         connections = per-pair (a per-server connection carries every class)"
                            .into(),
                    ));
                }
                if weights.len() != self.classes.len() {
                    return Err(bad(format!(
                        "drr has {} weights for {} classes",
                        weights.len(),
                        self.classes.len()
                    )));
                }
                if *quantum == 0 || weights.iter().any(|w| !(w.is_finite() && *w > 0.0)) {
                    return Err(bad(
                        "drr needs a positive quantum and positive weights".into()
                    ));
                }
                Gate::Plain
            }
            GatewayKind::Msfrs(cfg) => {
                if cfg.weights.len() != self.classes.len() {
                    return Err(bad(format!(
                        "msfrs has {} weights for {} classes",
                        cfg.weights.len(),
                        self.classes.len()
                    )));
                }
                Gate::Msfrs(Box::new(
                    Msfrs::new(cfg, Time::ZERO)
                        .map_err(|e: MsfrsConfigError| bad(e.to_string()))?,
                ))
            }
        };
        let q = |n| QueueSpec::DropTail(QueueLimit::Packets(n));
        let mut links = vec![
            LinkSpec::new(
                "access-down",
                self.access_rate,
                self.access_delay,
                q(self.access_queue),
            ),
            LinkSpec::new(
                "access-up",
                self.access_rate,
                self.access_delay,
                q(self.access_queue),
            ),
        ];
        let mut rng = SimRng::named(seed, "web/topology");
        let mut server_delay = Vec::new();
        for s in 0..self.servers {
            let (lo, hi) = self.server_delay[usize::from(s >= self.servers / 2)];
            let d = Dur(rng.uniform_u64(lo.0, hi.0.max(lo.0)));
            server_delay.push(d);
            // Server queues are never the bottleneck; ns-2's default 50 packets.
            links.push(LinkSpec::new(
                format!("server{s}-down"),
                self.server_rate,
                d,
                q(50),
            ));
            links.push(LinkSpec::new(
                format!("server{s}-up"),
                self.server_rate,
                d,
                q(50),
            ));
        }
        let n_clients: u32 = self.classes.iter().map(|c| c.clients).sum();
        let first_client_link = links.len();
        for c in 0..n_clients {
            let cq = q(50);
            links.push(LinkSpec::new(
                format!("client{c}-down"),
                self.client_rate,
                self.client_delay,
                cq.clone(),
            ));
            links.push(LinkSpec::new(
                format!("client{c}-up"),
                self.client_rate,
                self.client_delay,
                cq,
            ));
        }
        let id = |i: usize| i as crate::link::LinkId;
        let mut routes = Vec::new();
        let mut flows = Vec::new();
        let mut slots = Vec::new();
        let tcp = self.tcp.clone();
        let mut threads = Vec::new();
        let mut user_class = Vec::new();
        let mut flow_class = Vec::new();
        if self.connections == Connections::PerServer {
            // ns-2's cache connects to each server once: server-down, then the access
            // downlink to the gateway, where the proxy reads the stream.
            for (s, &delay) in server_delay.iter().enumerate() {
                routes.push(Route {
                    forward: vec![id(2 + 2 * s), id(0)],
                    reverse: vec![id(1), id(3 + 2 * s)],
                });
                let mut f = FlowSpec::tcp(routes.len() - 1, tcp.clone(), Time::ZERO, None);
                f.protocol = "web-server".into();
                f.sender.offer(Some(0));
                flows.push(f);
                slots.push(Slot {
                    uplink: self.access_delay + delay,
                    pending: VecDeque::new(),
                    offered: 0,
                    seen: 0,
                });
            }
        }
        let mut user = 0u32;
        for (class, cl) in self.classes.iter().enumerate() {
            for _ in 0..cl.clients {
                let c = user as usize;
                for k in 0..cl.parallel.max(1) {
                    let mut rng = SimRng::named(seed, &format!("web/client{c}/{k}"));
                    let first = Time::ZERO
                        + Dur::from_secs_f64(rng.exponential(cl.think_time.as_secs_f64()));
                    threads.push(Thread {
                        class,
                        client: user,
                        next: first,
                        rng,
                    });
                }
                user_class.push(class);
                for (s, &delay) in server_delay.iter().enumerate() {
                    if self.connections == Connections::PerServer {
                        break;
                    }
                    routes.push(Route {
                        forward: vec![id(2 + 2 * s), id(0), id(first_client_link + 2 * c)],
                        reverse: vec![id(first_client_link + 2 * c + 1), id(1), id(3 + 2 * s)],
                    });
                    let mut f = FlowSpec::tcp(routes.len() - 1, tcp.clone(), Time::ZERO, None);
                    f.protocol = format!("web-class{class}");
                    f.sender.offer(Some(0));
                    flows.push(f);
                    flow_class.push(class as u32);
                    slots.push(Slot {
                        uplink: self.access_delay + delay,
                        pending: VecDeque::new(),
                        offered: 0,
                        seen: 0,
                    });
                }
                user += 1;
            }
        }
        let mut exceptive = None;
        if let Some(cbr) = &self.exceptive {
            cbr.validate().map_err(bad)?;
            // A host of no class behind the gateway, fed from server 0's side.
            links.push(LinkSpec::new(
                "exceptive-down",
                self.client_rate,
                self.client_delay,
                q(50),
            ));
            links.push(LinkSpec::new(
                "exceptive-up",
                self.client_rate,
                self.client_delay,
                q(50),
            ));
            let n = links.len();
            routes.push(Route {
                forward: vec![id(2), id(0), id(n - 2)],
                reverse: vec![id(n - 1), id(1), id(3)],
            });
            exceptive = Some(flows.len() as u32);
            flows.push(FlowSpec::cbr(
                routes.len() - 1,
                cbr.clone(),
                self.exceptive_start,
                None,
            ));
        }
        if let GatewayKind::Drr { quantum, weights } = &self.gateway {
            // Flow ids are indices into `flows`: the web connections first (their class from
            // the slot), then the exceptive CBR, which gets a queue of its own.
            links[1].queue = QueueSpec::Drr(DrrConfig {
                quantum: *quantum,
                limit: self.access_queue,
                class_of: flow_class,
                weights: weights.clone(),
            });
        }
        let topology = Topology { links, routes };
        topology.validate()?;
        let report = WebReport {
            class_bytes: vec![Vec::new(); self.classes.len()],
            user_bytes: vec![0; n_clients as usize],
            user_class,
            ..WebReport::default()
        };
        Ok(AccessGateway {
            topology,
            flows,
            gateway: WebGateway {
                gate,
                classes: self.classes.clone(),
                threads,
                servers: self.servers,
                connections: self.connections,
                merge: self.merge_pending,
                pages: vec![PageState::default(); self.servers as usize],
                slots,
                client_free: vec![Time::ZERO; n_clients as usize],
                client_hop: (self.client_rate, self.client_delay),
                deliveries: BinaryHeap::new(),
                uplink: BinaryHeap::new(),
                seq: 0,
                size: (self.size_mu, self.size_sigma),
                wire: (
                    u64::from(tcp.segment_size + tcp.data_header_size()),
                    u64::from(tcp.segment_size.max(1)),
                ),
                exceptive,
                exceptive_seen: 0,
                offers: Vec::new(),
                report,
            },
        })
    }
}

impl WebClass {
    fn active_at(&self, t: Time) -> bool {
        self.active.is_empty() || self.active.iter().any(|&(a, b)| a <= t && t < b)
    }
}

impl WebGateway {
    /// The earliest time the gateway wants [`Self::on_time`].
    pub fn next_deadline(&self) -> Time {
        let mut t = self
            .threads
            .iter()
            .map(|c| c.next)
            .min()
            .unwrap_or(Time::MAX);
        if let Some(Reverse((u, ..))) = self.uplink.peek() {
            t = t.min(*u);
        }
        if let Some(Reverse((d, ..))) = self.deliveries.peek() {
            t = t.min(*d);
        }
        if let Gate::Msfrs(m) = &self.gate {
            t = t.min(m.next_timeout());
        }
        t
    }

    /// Requests due by `now` reach the gateway, released requests reach their servers, and
    /// WRC's interval closes. Offers for the simulator collect in [`Self::take_offers`].
    pub fn on_time(&mut self, now: Time) {
        while let Some(&Reverse((t, _, p))) = self.deliveries.peek() {
            if t > now {
                break;
            }
            self.deliveries.pop();
            self.complete(t, p);
        }
        for i in 0..self.threads.len() {
            while self.threads[i].next <= now {
                let th = &mut self.threads[i];
                let (class, t, client) = (th.class, th.next, th.client);
                let cl = &self.classes[class];
                let think = cl.think_time.as_secs_f64();
                let (mu, sigma) = self.size;
                let server = th.rng.uniform_u64(0, u64::from(self.servers) - 1) as u32;
                // At most 4 GiB ([`MAX_RESPONSE_BYTES`]): the byte counts are sums of these.
                let bytes = (mu + sigma * normal(&mut th.rng))
                    .exp()
                    .round()
                    .clamp(1.0, MAX_RESPONSE_BYTES as f64) as u64;
                let active = cl.active_at(t);
                th.next = if cl.parallel > 0 && active {
                    Time::MAX // wait for the response
                } else {
                    t + Dur::from_secs_f64(th.rng.exponential(think))
                };
                if active {
                    // The request process is timed at the gateway: the client link's constant
                    // 2 ms each way is left out of every latency, as in §4.4.1.
                    let flow = match self.connections {
                        Connections::PerPair => client * self.servers + server,
                        Connections::PerServer => server,
                    };
                    self.request(now, flow, i as u32, class, client, bytes);
                }
            }
        }
        if let Gate::Msfrs(m) = &mut self.gate {
            if let Some(u) = m.on_timeout(now) {
                let s = m.stats();
                self.report.windows.push(WindowSample {
                    time: u.at,
                    utilization: u.utilization,
                    window_max: u.after,
                    outstanding: s.outstanding,
                    binding: u.binding,
                });
            }
        }
        self.release(now);
        while let Some(&Reverse((t, _, flow, bytes))) = self.uplink.peek() {
            if t > now {
                break;
            }
            self.uplink.pop();
            self.offers.push((flow, bytes));
        }
    }

    fn request(&mut self, now: Time, flow: u32, thread: u32, class: usize, user: u32, bytes: u64) {
        self.report.requests += 1;
        let r = Request {
            flow,
            thread,
            class,
            user,
            bytes,
            arrived: now,
        };
        if self.merge == MergePending::AtArrival {
            // `cache-miss` before MSF-RS: a request for a pending page (queued or in
            // transfer) joins it and never enters the queue.
            let page = &mut self.pages[(flow % self.servers) as usize];
            if page.open {
                page.waiters.push(Waiter {
                    thread,
                    class,
                    user,
                    arrived: now,
                    released: page.released.map(|_| now),
                });
                self.report.merged += 1;
                return;
            }
            page.open = true;
            page.released = None;
        }
        match &mut self.gate {
            Gate::Plain => self.dispatch(now, r),
            Gate::Msfrs(m) => {
                // The class index is valid by construction; a refusal would be a bug.
                let _ = m.on_request(now, class, user, r);
            }
        }
    }

    /// A request the gateway lets go (at once, or released by MSF-RS) reaches the proxy's
    /// cache logic ([`MergePending`]): it is forwarded to its server, or, merging at release,
    /// joins the transfer already pending for its page.
    fn dispatch(&mut self, now: Time, r: Request) {
        let page = &mut self.pages[(r.flow % self.servers) as usize];
        match self.merge {
            MergePending::Off => {}
            MergePending::AtArrival => {
                // The page was opened at arrival; its merged requests' queueing ends now.
                page.released = Some(now);
                for w in &mut page.waiters {
                    w.released.get_or_insert(now);
                }
            }
            MergePending::AtRelease => {
                if page.open {
                    page.waiters.push(Waiter {
                        thread: r.thread,
                        class: r.class,
                        user: r.user,
                        arrived: r.arrived,
                        released: Some(now),
                    });
                    self.report.merged += 1;
                    return;
                }
                page.open = true;
            }
        }
        self.forward(now, r);
    }

    /// A released request leaves for its server; its response is due from the slot.
    fn forward(&mut self, now: Time, r: Request) {
        self.report.transfers += 1;
        let seg = self.wire.1;
        let page = r.flow % self.servers;
        let leader = self.merge != MergePending::Off;
        let slot = &mut self.slots[r.flow as usize];
        let bytes = r.bytes.div_ceil(seg) * seg;
        let start = slot.offered;
        slot.offered += bytes;
        slot.pending.push_back(Pending {
            start,
            target: slot.offered,
            class: r.class,
            user: r.user,
            arrived: r.arrived,
            released: now,
            bytes: r.bytes,
            thread: r.thread,
            page,
            leader,
            merged: false,
        });
        self.seq += 1;
        self.uplink
            .push(Reverse((now + slot.uplink, self.seq, r.flow, bytes)));
    }

    fn release(&mut self, now: Time) {
        loop {
            let r = match &mut self.gate {
                Gate::Plain => return,
                Gate::Msfrs(m) => match m.poll_release(now) {
                    Some(r) => r.request,
                    None => return,
                },
            };
            self.dispatch(now, r);
        }
    }

    /// The response of a page's first request `p` is whole at the proxy at `now`
    /// (`answer-pending-requests`): every merged request gets a copy over its client link,
    /// and the page is no longer pending.
    fn answer_waiters(&mut self, now: Time, p: Pending) {
        let page = &mut self.pages[p.page as usize];
        page.open = false;
        page.released = None;
        let waiters = std::mem::take(&mut page.waiters);
        for w in waiters {
            if self.merge == MergePending::AtRelease {
                // Released by MSF-RS, so counted in W: it ends with the shared response.
                if let Gate::Msfrs(m) = &mut self.gate {
                    let _ = m.on_response_end(now, w.class, w.user);
                }
            }
            self.send_to_client(
                now,
                Pending {
                    start: 0,
                    target: 0,
                    class: w.class,
                    user: w.user,
                    arrived: w.arrived,
                    released: w.released.unwrap_or(now),
                    bytes: p.bytes,
                    thread: w.thread,
                    page: p.page,
                    leader: false,
                    merged: true,
                },
            );
        }
    }

    /// The proxy sends the whole response `p` to its client from `now`, after those already
    /// on the client's link: serialisation at the link's rate, then its delay.
    fn send_to_client(&mut self, now: Time, p: Pending) {
        let (rate, delay) = self.client_hop;
        let wire = p.bytes.div_ceil(self.wire.1) * self.wire.0;
        let free = &mut self.client_free[p.user as usize];
        let start = now.max(*free);
        // Serialisation of `wire` bytes at the client link's rate (nonzero, checked by the
        // topology), in u128 so a huge response cannot overflow.
        let ns = u128::from(wire) * 8 * 1_000_000_000 / u128::from(rate.bps().max(1));
        *free = start + Dur(u64::try_from(ns).unwrap_or(u64::MAX));
        self.seq += 1;
        self.deliveries.push(Reverse((*free + delay, self.seq, p)));
    }

    /// Whether `flow` is one the gateway watches.
    pub fn watches(&self, flow: u32) -> bool {
        (flow as usize) < self.slots.len() || self.exceptive == Some(flow)
    }

    /// `flow`'s receiver has now delivered `delivered` bytes in total.
    pub fn on_delivered(&mut self, now: Time, flow: u32, delivered: u64) {
        if self.exceptive == Some(flow) {
            let new = delivered.saturating_sub(self.exceptive_seen);
            self.exceptive_seen = delivered;
            if let Gate::Msfrs(m) = &mut self.gate {
                m.on_unclassified_bytes(now, new);
            }
            return;
        }
        let Some(slot) = self.slots.get_mut(flow as usize) else {
            return;
        };
        let from = slot.seen;
        if delivered <= from {
            return;
        }
        slot.seen = delivered;
        // The stream's new bytes [from, delivered) belong to the responses in it in order;
        // consecutive pieces of one user's responses are counted as one (on a per-pair
        // connection, all of them).
        let mut run: Option<(usize, u32, u64)> = None;
        for i in 0..self.slots[flow as usize].pending.len() {
            let p = self.slots[flow as usize].pending[i];
            if p.start >= delivered {
                break;
            }
            let n = delivered.min(p.target).saturating_sub(from.max(p.start));
            if n == 0 {
                continue;
            }
            match &mut run {
                Some((c, u, k)) if *c == p.class && *u == p.user => *k += n,
                _ => {
                    if let Some((c, u, k)) = run {
                        self.count_bytes(now, c, u, k);
                    }
                    run = Some((p.class, p.user, n));
                }
            }
        }
        if let Some((c, u, k)) = run {
            self.count_bytes(now, c, u, k);
        }
        while let Some(&p) = self.slots[flow as usize].pending.front() {
            if delivered < p.target {
                break;
            }
            self.slots[flow as usize].pending.pop_front();
            match self.connections {
                Connections::PerPair => self.complete(now, p),
                Connections::PerServer => {
                    // The proxy holds the whole response: W falls now (§4.3.2), and the
                    // response leaves for the client, after those already on its link.
                    if let Gate::Msfrs(m) = &mut self.gate {
                        let _ = m.on_response_end(now, p.class, p.user);
                    }
                    self.send_to_client(now, p);
                    if p.leader {
                        self.answer_waiters(now, p);
                    }
                }
            }
        }
        self.release(now);
    }

    /// `n` response bytes of `class`'s `user` arrived (at the client, or at the gateway's
    /// proxy for [`Connections::PerServer`]).
    fn count_bytes(&mut self, now: Time, class: usize, user: u32, n: u64) {
        let sec = now.as_nanos() / 1_000_000_000;
        let row = &mut self.report.class_bytes[class];
        if row.len() <= sec as usize {
            row.resize(sec as usize + 1, 0);
        }
        row[sec as usize] += n;
        self.report.user_bytes[user as usize] += n;
        if let Gate::Msfrs(m) = &mut self.gate {
            let _ = m.on_response_bytes(now, class, n * self.wire.0 / self.wire.1);
        }
    }

    /// Response `p` is whole at its client at `now`: the transaction ends, and a closed-loop
    /// thread starts thinking.
    fn complete(&mut self, now: Time, p: Pending) {
        if p.merged {
            // A copy from the proxy: the user's bytes, but not the access link's (MSF-RS
            // counted the transfer it copies).
            let sec = now.as_nanos() / 1_000_000_000;
            let row = &mut self.report.class_bytes[p.class];
            if row.len() <= sec as usize {
                row.resize(sec as usize + 1, 0);
            }
            row[sec as usize] += p.bytes;
            self.report.user_bytes[p.user as usize] += p.bytes;
        }
        if let Some(th) = self.threads.get_mut(p.thread as usize) {
            let cl = &self.classes[th.class];
            if cl.parallel > 0 {
                let think = cl.think_time.as_secs_f64();
                th.next = now + Dur::from_secs_f64(th.rng.exponential(think));
            }
        }
        self.report.transactions.push(Transaction {
            class: p.class,
            user: p.user,
            bytes: p.bytes,
            arrived: p.arrived,
            queued: p.released.saturating_since(p.arrived),
            service: now.saturating_since(p.released),
        });
        if self.connections == Connections::PerPair && !p.merged {
            if let Gate::Msfrs(m) = &mut self.gate {
                let _ = m.on_response_end(now, p.class, p.user);
            }
            if p.leader {
                // Per pair the response passed the gateway on its way to this client; the
                // merged requests' copies leave now.
                self.answer_waiters(now, p);
            }
        }
    }

    /// Offers to apply to flows (sender `offer(Some(bytes))`), drained by the simulator.
    pub fn take_offers(&mut self) -> std::vec::Drain<'_, (u32, u64)> {
        self.offers.drain(..)
    }

    /// Requests still in the system: queued in MSF-RS, merged into a pending page, in
    /// transfer, or on a client link.
    fn in_system(&self) -> u64 {
        self.slots
            .iter()
            .map(|s| s.pending.len() as u64)
            .sum::<u64>()
            + self.deliveries.len() as u64
            + self
                .pages
                .iter()
                .map(|p| p.waiters.len() as u64)
                .sum::<u64>()
            + match &self.gate {
                Gate::Plain => 0,
                Gate::Msfrs(m) => m.stats().queued as u64,
            }
    }

    /// The report, with the requests still in the system counted as unfinished.
    pub fn finish(mut self) -> WebReport {
        self.report.unfinished = self.in_system();
        self.report
    }
}

/// Mean latencies of the transactions that arrived in a window, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    pub count: usize,
    /// `T_a = T_q + T_s` (Definition 4.2).
    pub active: f64,
    pub queued: f64,
    pub service: f64,
}

impl WebReport {
    /// Mean W+ over the WRC updates at instants in `(from, to]` (each update covers the `T`
    /// before it), or 0 when there is none.
    pub fn mean_window_max(&self, from: Time, to: Time) -> f64 {
        let v: Vec<f64> = self
            .windows
            .iter()
            .filter(|x| x.time > from && x.time <= to)
            .map(|x| x.window_max)
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    }

    /// Mean response rate of `class` over `[from, to)` whole seconds, bits per second.
    pub fn class_rate(&self, class: usize, from: u64, to: u64) -> f64 {
        let Some(row) = self.class_bytes.get(class) else {
            return 0.0;
        };
        let (a, b) = (from as usize, (to as usize).max(from as usize));
        let bytes: u64 = row.iter().skip(a).take(b - a).sum();
        bytes as f64 * 8.0 / (b - a).max(1) as f64
    }

    /// Mean latencies of `class`'s transactions (or all with `None`) that arrived in
    /// `[from, to)`.
    pub fn latency(&self, class: Option<usize>, from: Time, to: Time) -> Latency {
        let mut l = Latency::default();
        for t in &self.transactions {
            if class.is_some_and(|c| c != t.class) || t.arrived < from || t.arrived >= to {
                continue;
            }
            l.count += 1;
            l.queued += t.queued.as_secs_f64();
            l.service += t.service.as_secs_f64();
        }
        if l.count > 0 {
            l.queued /= l.count as f64;
            l.service /= l.count as f64;
        }
        l.active = l.queued + l.service;
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_window_max_takes_the_updates_in_the_half_open_interval() {
        let sample = |secs, window_max| WindowSample {
            time: Time::from_secs(secs),
            utilization: 0.9,
            window_max,
            outstanding: 3,
            binding: true,
        };
        let r = WebReport {
            windows: vec![sample(5, 2.0), sample(10, 4.0), sample(15, 8.0)],
            ..WebReport::default()
        };
        let m = |a, b| r.mean_window_max(Time::from_secs(a), Time::from_secs(b));
        assert_eq!(m(5, 15), 6.0); // 10 s and 15 s, not 5 s
        assert_eq!(m(0, 5), 2.0);
        assert_eq!(m(15, 20), 0.0);
    }

    #[test]
    fn the_drr_gateway_puts_one_weighted_queue_per_class_on_the_access_uplink() {
        let spec = AccessGatewaySpec {
            gateway: GatewayKind::Drr {
                quantum: 1000,
                weights: vec![4.0, 2.0, 1.0],
            },
            ..AccessGatewaySpec::default()
        };
        let g = spec.build(1).unwrap();
        let up = &g.topology.links[1];
        assert_eq!(up.name, "access-up");
        let QueueSpec::Drr(cfg) = &up.queue else {
            panic!("expected DRR on access-up, got {:?}", up.queue)
        };
        // 12 clients × 12 servers, client by client, 4 per class.
        assert_eq!(cfg.class_of.len(), 144);
        assert!(cfg.class_of[..48].iter().all(|&c| c == 0));
        assert!(cfg.class_of[96..].iter().all(|&c| c == 2));
        assert_eq!(cfg.weights, vec![4.0, 2.0, 1.0]);
        assert_eq!(cfg.limit, spec.access_queue);
        // The downlink keeps its DropTail queue: DRR sits at the user-side gateway only.
        assert!(matches!(g.topology.links[0].queue, QueueSpec::DropTail(_)));
        let wrong = AccessGatewaySpec {
            gateway: GatewayKind::Drr {
                quantum: 1000,
                weights: vec![1.0],
            },
            ..AccessGatewaySpec::default()
        };
        assert!(wrong.build(1).is_err());
    }

    #[test]
    fn response_sizes_have_the_thesis_lognormal_mean() {
        // e^{M + S²/2} = 27 656 B (§4.5.1); the median is e^M = 11 578 B.
        let mut rng = SimRng::named(1, "test/sizes");
        let n = 400_000;
        let mut sizes: Vec<f64> = (0..n)
            .map(|_| (9.357 + 1.318 * normal(&mut rng)).exp())
            .collect();
        let mean = sizes.iter().sum::<f64>() / n as f64;
        assert!((mean - 27_656.0).abs() < 0.03 * 27_656.0, "{mean}");
        sizes.sort_by(f64::total_cmp);
        let median = sizes[n / 2];
        assert!((median - 11_578.0).abs() < 0.02 * 11_578.0, "{median}");
    }

    #[test]
    fn build_lays_out_one_connection_per_client_and_server() {
        let spec = AccessGatewaySpec::default();
        let b = spec.build(1).unwrap();
        // 2 access + 2 per server + 2 per client.
        assert_eq!(b.topology.links.len(), 2 + 2 * 12 + 2 * 12);
        assert_eq!(b.flows.len(), 12 * 12);
        assert!(b.gateway.watches(143) && !b.gateway.watches(144));
        // Client 1 to server 1: server1-down (2 + 2), access-down (0), client1-down (26 + 2).
        assert_eq!(b.topology.routes[13].forward, vec![4, 0, 26 + 2]);
    }

    #[test]
    fn build_refuses_what_cannot_run() {
        let bad = |f: fn(&mut AccessGatewaySpec)| {
            let mut s = AccessGatewaySpec::default();
            f(&mut s);
            s.build(1).is_err()
        };
        assert!(bad(|s| s.classes.clear()));
        assert!(bad(|s| s.servers = 0));
        assert!(bad(|s| s.classes[0].think_time = Dur::ZERO));
        assert!(bad(|s| s.gateway = GatewayKind::Msfrs(MsfrsConfig {
            weights: vec![1.0, 1.0],
            ..MsfrsConfig::default()
        })));
        assert!(bad(|s| s.size_sigma = f64::NAN));
    }

    #[test]
    fn a_response_after_an_idle_pause_starts_from_one_segment() {
        use tfcc_core::endpoint::{Endpoint, Sender};
        use tfcc_core::packet::{Header, Packet};
        use tfcc_core::tcp::{TcpAck, TcpSender};
        let seqs = |s: &mut TcpSender, now: Time| {
            let mut v = Vec::new();
            while let Some(p) = s.poll_transmit(now) {
                if let Header::TcpData(d) = p.header {
                    v.push(d.seq);
                }
            }
            v
        };
        let ack = |next: u64| Packet {
            size: 40,
            header: Header::TcpAck(TcpAck::new(next, Time::ZERO)),
        };
        // A 60-segment response, every segment ACKed 50 ms after it left: the window grows.
        let mut s = TcpSender::new(server_tcp());
        s.offer(Some(60_000));
        let mut t = Time::ZERO;
        let mut out = seqs(&mut s, t);
        while !out.is_empty() {
            t += Dur::from_millis(50);
            let mut next = Vec::new();
            for q in out {
                s.on_packet(t, &ack(q + 1));
                next.extend(seqs(&mut s, t));
            }
            out = next;
        }
        assert!(s.cwnd() >= 20.0, "warm window {}", s.cwnd());
        let warm_ssthresh = s.ssthresh();
        // Back-to-back, the next response would go out at the warm window. After an idle
        // pause the timer fires with nothing outstanding, and the next response starts from
        // one segment, its threshold kept.
        let due = s
            .next_timeout()
            .expect("the timer runs while the connection is idle");
        s.on_timeout(due);
        assert!(seqs(&mut s, due).is_empty());
        let later = due + Dur::from_secs(2);
        s.offer(Some(30_000));
        assert_eq!(seqs(&mut s, later).len(), 1);
        assert_eq!(s.cwnd(), 1.0);
        assert_eq!(s.ssthresh(), warm_ssthresh);
        assert_eq!(s.stats().timeouts, 0, "an idle restart is not a loss");
    }

    #[test]
    fn per_server_connections_carry_every_clients_responses_in_request_order() {
        // Clients that would not send on their own for weeks: the test places the requests.
        let mut spec = AccessGatewaySpec {
            connections: Connections::PerServer,
            gateway: GatewayKind::Plain,
            ..AccessGatewaySpec::default()
        };
        for c in &mut spec.classes {
            c.think_time = Dur::from_secs(10_000_000);
        }
        let b = spec.build(1).unwrap();
        // One connection per server, ending at the gateway (server link, access downlink).
        assert_eq!(b.flows.len(), 12);
        assert_eq!(b.topology.routes[3].forward, vec![2 + 2 * 3, 0]);
        assert_eq!(b.gateway.report.user_class.len(), 12);
        let mut g = b.gateway;
        let t0 = Time::from_secs(1);
        // Server 5: a 20 kB response for client 0 (class 0), then 1 kB for client 11
        // (class 2), in that order.
        g.request(t0, 5, 0, 0, 0, 20_000);
        g.request(t0, 5, 1, 2, 11, 1_000);
        g.on_time(t0 + Dur::from_secs(1));
        let offers: Vec<_> = g.take_offers().collect();
        assert_eq!(offers, vec![(5, 20_000), (5, 1_000)]);
        // The stream delivers client 0's bytes first: the small response waits behind them.
        let t1 = Time::from_secs(3);
        g.on_delivered(t1, 5, 12_000);
        assert_eq!(g.report.user_bytes[0], 12_000);
        assert_eq!(g.report.user_bytes[11], 0);
        let t2 = Time::from_secs(4);
        g.on_delivered(t2, 5, 20_500);
        assert_eq!(
            (g.report.user_bytes[0], g.report.user_bytes[11]),
            (20_000, 500)
        );
        assert_eq!(g.report.class_bytes[2][4], 500);
        // Client 0's response is whole at the gateway and leaves for the client (10 Mb/s,
        // 2 ms): 20 segments of 1040 B on the wire, 16.64 ms, then 2 ms.
        assert!(g.report.transactions.is_empty());
        let at_client = t2 + Dur::from_micros(16_640) + Dur::from_millis(2);
        assert_eq!(g.next_deadline(), at_client);
        g.on_time(at_client);
        assert_eq!(g.report.transactions.len(), 1);
        let t = g.report.transactions[0];
        assert_eq!((t.user, t.class, t.bytes), (0, 0, 20_000));
        assert_eq!(t.service, at_client.saturating_since(t0));
        g.on_delivered(Time::from_secs(5), 5, 21_000);
        g.on_time(Time::from_secs(6));
        assert_eq!(g.report.transactions.len(), 2);
        assert_eq!(g.report.transactions[1].user, 11);
        assert_eq!(g.finish().unfinished, 0);
        // The DRR baseline needs per-class connections.
        let drr = AccessGatewaySpec {
            connections: Connections::PerServer,
            gateway: GatewayKind::Drr {
                quantum: 1000,
                weights: vec![4.0, 2.0, 1.0],
            },
            ..AccessGatewaySpec::default()
        };
        assert!(drr.build(1).is_err());
    }

    /// A gateway whose clients would not send on their own for weeks (the test places the
    /// requests), with these connections, gateway and merging.
    fn placed(connections: Connections, gateway: GatewayKind, merge: MergePending) -> WebGateway {
        let mut spec = AccessGatewaySpec {
            connections,
            gateway,
            merge_pending: merge,
            ..AccessGatewaySpec::default()
        };
        for c in &mut spec.classes {
            c.think_time = Dur::from_secs(10_000_000);
        }
        spec.build(1).unwrap().gateway
    }

    fn outstanding(g: &WebGateway) -> (u32, usize) {
        match &g.gate {
            Gate::Msfrs(m) => (m.stats().outstanding, m.stats().queued),
            Gate::Plain => (0, 0),
        }
    }

    #[test]
    fn two_clients_asking_for_a_pending_page_get_one_transfer_and_both_complete_at_its_end() {
        let t0 = Time::from_secs(1);
        for merge in [MergePending::AtArrival, MergePending::AtRelease] {
            for connections in [Connections::PerServer, Connections::PerPair] {
                let mut g = placed(connections, GatewayKind::Plain, merge);
                // Client 0 (class 0) then client 11 (class 2) ask server 5 for its one page;
                // the second request's own size draw (1 kB) is dropped for the page's.
                let flow = |client: u32| match connections {
                    Connections::PerServer => 5,
                    Connections::PerPair => client * 12 + 5,
                };
                g.request(t0, flow(0), 0, 0, 0, 20_000);
                g.request(t0, flow(11), 1, 2, 11, 1_000);
                g.on_time(t0 + Dur::from_secs(1));
                let offers: Vec<_> = g.take_offers().collect();
                assert_eq!(offers, vec![(flow(0), 20_000)], "{merge:?} {connections:?}");
                assert_eq!((g.report.transfers, g.report.merged), (1, 1));
                assert_eq!(g.in_system(), 2);
                // Nothing ends before the one transfer does.
                let t1 = Time::from_secs(3);
                g.on_delivered(t1, flow(0), 19_000);
                g.on_time(t1);
                assert!(g.report.transactions.is_empty());
                let t2 = Time::from_secs(4);
                g.on_delivered(t2, flow(0), 20_000);
                // The copy leaves the proxy when the response is whole there: 20 segments of
                // 1040 B at 10 Mb/s, 16.64 ms, then 2 ms; per pair the first client has its
                // response at once.
                let hop = Dur::from_micros(16_640) + Dur::from_millis(2);
                g.on_time(t2 + hop);
                let mut done: Vec<_> = g
                    .report
                    .transactions
                    .iter()
                    .map(|t| (t.user, t.bytes, t.arrived + t.queued + t.service))
                    .collect();
                done.sort_by_key(|d| d.0);
                let first_at = match connections {
                    Connections::PerServer => t2 + hop,
                    Connections::PerPair => t2,
                };
                assert_eq!(
                    done,
                    vec![(0, 20_000, first_at), (11, 20_000, t2 + hop)],
                    "{merge:?} {connections:?}"
                );
                assert_eq!(g.report.user_bytes[11], 20_000);
                assert_eq!(g.in_system(), 0);
                // The page is no longer pending: the next request is a transfer of its own.
                g.request(Time::from_secs(5), flow(11), 1, 2, 11, 1_000);
                g.on_time(Time::from_secs(6));
                assert_eq!(g.take_offers().count(), 1);
                assert_eq!((g.report.transfers, g.report.merged), (2, 1));
            }
        }
    }

    #[test]
    fn merging_at_arrival_skips_msfrs_queue_and_merging_at_release_goes_through_it() {
        let t0 = Time::from_secs(1);
        let t1 = t0 + Dur::from_secs(1);
        let t2 = Time::from_secs(4);
        let ask = |g: &mut WebGateway| {
            g.request(t0, 5, 0, 0, 0, 20_000);
            g.request(t0, 5, 1, 2, 11, 1_000);
            g.on_time(t1);
            // The released requests reach server 5.
            g.on_time(t1 + Dur::from_secs(1));
        };
        // W+_0 = 1. At arrival the second request joins the first, which MSF-RS holds; it
        // never enters the queue nor W, and its T_q ends with the first one's release.
        let mut g = placed(
            Connections::PerServer,
            GatewayKind::Msfrs(MsfrsConfig::default()),
            MergePending::AtArrival,
        );
        ask(&mut g);
        assert_eq!(g.take_offers().count(), 1);
        assert_eq!(outstanding(&g), (1, 0));
        g.on_delivered(t2, 5, 20_000);
        assert_eq!(outstanding(&g), (0, 0));
        g.on_time(Time::from_secs(5));
        assert_eq!(g.report.transactions.len(), 2);
        assert!(g
            .report
            .transactions
            .iter()
            .all(|t| t.queued == Dur::from_secs(1)));
        // At release, with W+ = 1 the second request waits in MSF-RS's queue until the first
        // response ends; the page is then no longer pending, so it is a transfer of its own.
        let mut g = placed(
            Connections::PerServer,
            GatewayKind::Msfrs(MsfrsConfig::default()),
            MergePending::AtRelease,
        );
        ask(&mut g);
        assert_eq!(g.take_offers().count(), 1);
        assert_eq!(outstanding(&g), (1, 1));
        g.on_delivered(t2, 5, 20_000);
        g.on_time(t2 + Dur::from_secs(1));
        assert_eq!(g.take_offers().collect::<Vec<_>>(), vec![(5, 1_000)]);
        assert_eq!((g.report.transfers, g.report.merged), (2, 0));
        // With W+ = 2 both are released while the page is pending: one transfer, and W counts
        // both until the shared response is whole at the proxy.
        let mut g = placed(
            Connections::PerServer,
            GatewayKind::Msfrs(MsfrsConfig {
                initial_window: 2.0,
                ..MsfrsConfig::default()
            }),
            MergePending::AtRelease,
        );
        ask(&mut g);
        assert_eq!(g.take_offers().count(), 1);
        assert_eq!((g.report.transfers, g.report.merged), (1, 1));
        assert_eq!(outstanding(&g), (2, 0));
        g.on_delivered(t2, 5, 20_000);
        assert_eq!(outstanding(&g), (0, 0));
        g.on_time(Time::from_secs(5));
        assert_eq!(g.report.transactions.len(), 2);
        // Merging off: two transfers, as before.
        let mut g = placed(
            Connections::PerServer,
            GatewayKind::Plain,
            MergePending::Off,
        );
        ask(&mut g);
        assert_eq!(g.take_offers().count(), 2);
        assert_eq!((g.report.transfers, g.report.merged), (2, 0));
    }
}
