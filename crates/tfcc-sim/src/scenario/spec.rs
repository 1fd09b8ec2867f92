//! The scenario file as serde structs: one struct per TOML table, field for field as
//! docs/scenarios.md documents them.
//!
//! Everything here is plain data; [`super::build`] checks the combinations (which keys a
//! topology kind or a loss model takes) and turns it into simulator objects. Tables that change
//! shape with a `kind` or `model` key are flat structs with optional fields rather than
//! internally tagged enums: serde buffers a tagged enum's content before choosing the variant,
//! which loses the key path of any error inside it, and every error must name its key.
//!
//! Every table denies unknown keys, so a misspelt key is an error rather than a silent default.

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;
use tfcc_core::{Dur, Rate, Time};

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// Name used in reports; the file stem when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text, ignored by the simulator.
    #[serde(default)]
    pub description: Option<String>,
    /// Simulated time to run.
    pub duration: Dur,
    /// Start of the measurement window (DESIGN.md: metrics ignore the warm-up before it).
    #[serde(default)]
    pub measure_from: Dur,
    /// Master seed of every random stream (DESIGN.md, "Simulator"), at most
    /// [`super::MAX_SEED`].
    #[serde(default = "default_seed", deserialize_with = "seed")]
    pub seed: u64,
    /// Time-series sampling interval; 100 ms, 003's rate-sampling period (see `recorder`).
    #[serde(default = "default_sample_interval")]
    pub sample_interval: Dur,
    pub topology: TopologySpec,
    /// Required by every topology kind but `access-gateway`, whose connections come from `[web]`.
    #[serde(default)]
    pub flows: Vec<FlowGroupSpec>,
    #[serde(default)]
    pub events: Vec<EventSpec>,
    /// `[sweep]`: the parameter grid and seeds of `tfcc sweep` (issue 8), kept in the scenario
    /// file so one file describes an experiment; read by the Python sweep driver, ignored here.
    #[serde(default)]
    pub sweep: Option<toml::Value>,
    /// `[web]`: the web workload of `kind = "access-gateway"` (003 Ch. 4, MSF-RS).
    #[serde(default)]
    pub web: Option<WebSpec>,
    /// Whose Agent/TCP defaults the TCP-based flows (and the rate senders' RTO estimator)
    /// start from: `"ns-2.35"` (the default) or `"ns-2.1b9"`, the ns-2 of thesis 003
    /// ([`super::protocols::TcpDefaults`] lists the keys and their sources). A flow's own
    /// `params` still win.
    #[serde(default)]
    pub tcp_defaults: super::protocols::TcpDefaults,
    /// Who goes first when a packet arrives at a link as its transmission ends: `"fifo"` (the
    /// default, scheduling order), `"departures-first"` or `"random"` ([`crate::engine::Ties`]).
    #[serde(default)]
    pub ties: crate::engine::Ties,
    /// `[trace]`: a per-packet trace of some links (off when absent).
    #[serde(default)]
    pub trace: Option<TraceSpec>,
}

fn default_seed() -> u64 {
    1
}

/// `seed`: a TOML integer from 0 up. A number past 2^63 − 1 is not a TOML integer, so
/// `--set seed=9223372036854775808` arrives as a string and was "invalid type: string,
/// expected a whole number from 0 up"; it and -1 now get the range.
fn seed<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "a whole number from 0 to {}", super::MAX_SEED)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom(super::seed_range_error(&v.to_string())))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            if v > super::MAX_SEED {
                return Err(E::custom(super::seed_range_error(&v.to_string())));
            }
            Ok(v)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            // A whole number outside the range (what no TOML integer could hold); a string
            // that holds a valid seed is the wrong type.
            let digits = v.strip_prefix('-').unwrap_or(v);
            let whole = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
            if whole && super::parse_seed(v).is_err() {
                return Err(E::custom(super::seed_range_error(v)));
            }
            Err(E::invalid_type(de::Unexpected::Str(v), &self))
        }
    }
    d.deserialize_any(V)
}

fn default_sample_interval() -> Dur {
    Dur::from_millis(100)
}

/// `[web]`: clients in weighted classes behind an access gateway fetching responses from
/// remote servers (003 §4.5.1, Fig. 4.8; `tfcc_sim::web`). Absent keys take the thesis'
/// values, which `web::AccessGatewaySpec::default` holds; the access link itself is
/// `topology.access`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    /// `msfrs` (default); `plain`, the gateway that forwards every request at once (§4.5.3's
    /// "non-MSF-RS" baseline); or `drr`, which forwards requests at once and schedules its
    /// access uplink with per-class deficit round robin (§4.5.2's DRR baseline, Fig. 4.10).
    #[serde(default)]
    pub gateway: Option<GatewayName>,
    /// Which persistent connections carry the responses: `per-pair` (default), one TCP-SACK
    /// connection per (client, server); or `per-server`, ns-2's `HTTP/Cache` (the thesis'
    /// §4.5.1 set-up), one connection per server to the gateway's proxy shared by all clients,
    /// responses served in request order (`tfcc_sim::web::Connections`).
    #[serde(default)]
    pub connections: Option<ConnectionsName>,
    /// ns-2 `HTTP/Cache`'s merging of a request for a page whose request is pending (one
    /// transfer answers every client that asked; `tfcc_sim::web::MergePending`): `off`
    /// (default), `at-arrival` (before MSF-RS's queue) or `at-release` (when MSF-RS releases
    /// the request).
    #[serde(default)]
    pub merge_pending: Option<MergePendingName>,
    /// `gateway = "drr"`: bytes per round for weight 1 (default 1000 B, one segment).
    #[serde(default, deserialize_with = "opt_bytes_u32")]
    pub drr_quantum: Option<u32>,
    /// MSF-RS settings by `MsfrsConfig` field name (`target_utilization`, `per_user`, ...);
    /// `capacity` defaults to the access link's rate and the weights come from the classes.
    #[serde(default)]
    pub msfrs: Option<toml::Table>,
    /// The classes of users, class 1 first (`[[web.classes]]`).
    pub classes: Vec<WebClassSpec>,
    /// Remote servers: 12 (§4.5.1).
    #[serde(default)]
    pub servers: Option<u32>,
    /// Client–gateway links: 10 Mb/s, 2 ms (§4.5.1).
    #[serde(default)]
    pub client_rate: Option<Rate>,
    #[serde(default)]
    pub client_delay: Option<Dur>,
    /// Server links' rate: 10 Mb/s.
    #[serde(default)]
    pub server_rate: Option<Rate>,
    /// One-way delay range `[low, high]` of the first half of the servers ("domestic") and of
    /// the rest ("overseas"), drawn uniformly per server: 5–25 ms and 50–150 ms (Fig. 4.8).
    #[serde(default)]
    pub domestic_delay: Option<[Dur; 2]>,
    #[serde(default)]
    pub overseas_delay: Option<[Dur; 2]>,
    /// Lognormal response sizes, `M` and `S` of ln(bytes): 9.357 and 1.318 (§4.5.1).
    #[serde(default)]
    pub size_mu: Option<f64>,
    #[serde(default)]
    pub size_sigma: Option<f64>,
    /// Exceptive downlink traffic of no class (§4.6).
    #[serde(default)]
    pub exceptive: Option<ExceptiveSpec>,
    /// Latency means in the summary leave out transactions that arrive this close to the end
    /// of the run: of those only the short ones finish, which would bias the means low.
    /// Default 0 (every finished transaction of the measurement window counts).
    #[serde(default)]
    pub latency_exclude_last: Option<Dur>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GatewayName {
    Msfrs,
    Plain,
    Drr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergePendingName {
    Off,
    AtArrival,
    AtRelease,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectionsName {
    PerPair,
    PerServer,
}

/// `[[web.classes]]`: one class of users.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebClassSpec {
    /// Users in the class: 4 (§4.5.2).
    #[serde(default)]
    pub clients: Option<u32>,
    /// MSF-RS weight `w_i`: 4, 2, 1 in §4.5.1; default 1.
    #[serde(default)]
    pub weight: Option<f64>,
    /// Mean exponential time between a client's requests (open loop) or a thread's think
    /// time (closed loop): 5 s (§4.5.1).
    #[serde(default)]
    pub think_time: Option<Dur>,
    /// 0 (default): open loop; k ≥ 1: k closed-loop request threads per client.
    #[serde(default)]
    pub parallel: Option<u32>,
    /// `[[start, stop], ...]` periods in which the class sends requests; absent: always.
    #[serde(default)]
    pub active: Option<Vec<[Time; 2]>>,
}

/// `web.exceptive = { rate, packet_size, on, off, start }`: on/off CBR to a host of no class.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExceptiveSpec {
    pub rate: Rate,
    /// Bytes per packet: 1000.
    #[serde(default, deserialize_with = "opt_bytes_u32")]
    pub packet_size: Option<u32>,
    /// Square wave; both or neither. Absent: continuous.
    #[serde(default)]
    pub on: Option<Dur>,
    #[serde(default)]
    pub off: Option<Dur>,
    /// First on period: 0 s.
    #[serde(default)]
    pub start: Option<Time>,
}

/// `[topology]`: which keys apply depends on `kind` (checked in `build`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    pub kind: TopologyKind,
    /// dumbbell: the shared link.
    #[serde(default)]
    pub bottleneck: Option<LinkTable>,
    /// dumbbell and parking-lot: every flow's own access links.
    #[serde(default)]
    pub access: Option<AccessTable>,
    /// parking-lot: the chain of bottlenecks, named `hop0`, `hop1`, ...
    #[serde(default)]
    pub hops: Option<Vec<LinkTable>>,
    /// custom: node names.
    #[serde(default)]
    pub nodes: Option<Vec<String>>,
    /// custom: one-way links between nodes.
    #[serde(default)]
    pub links: Option<Vec<LinkTable>>,
    /// dumbbell: the queue of the bottleneck's reverse direction (`bottleneck-rev`), which
    /// carries the forward flows' ACKs and the data of `direction = "reverse"` flows. Absent:
    /// a copy of the bottleneck's queue. ns-2's `duplex-link` sets only the forward direction's
    /// `queue-limit` in the theses' scripts, leaving the reverse at `Queue set limit_ 50`.
    #[serde(default)]
    pub reverse_queue: Option<QueueTable>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    Dumbbell,
    ParkingLot,
    AccessGateway,
    Custom,
}

impl TopologyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TopologyKind::Dumbbell => "dumbbell",
            TopologyKind::ParkingLot => "parking-lot",
            TopologyKind::AccessGateway => "access-gateway",
            TopologyKind::Custom => "custom",
        }
    }
}

/// The discipline of a link's queue, written as a string (`queue = "red"`); its parameters
/// (`limit`, the RED keys, `quantum`) sit beside it in the link's table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueKind {
    #[default]
    Droptail,
    Red,
    /// Deficit round robin with one queue per flow (`quantum`, `limit`).
    Drr,
}

impl QueueKind {
    const NAMES: &'static [&'static str] = &["droptail", "red", "drr"];
}

/// By hand rather than derived, so that a table (`queue = { kind = "red", limit = 20 }`, a
/// natural guess) is refused with what to write instead of serde's "wanted exactly 1 element".
impl<'de> Deserialize<'de> for QueueKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QueueKind;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a queue discipline as a string, \"droptail\", \"red\" or \"drr\" \
                     (its limit and parameters are keys of the link, beside `queue`)",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<QueueKind, E> {
                match v {
                    "droptail" => Ok(QueueKind::Droptail),
                    "red" => Ok(QueueKind::Red),
                    "drr" => Ok(QueueKind::Drr),
                    _ => Err(E::unknown_variant(v, QueueKind::NAMES)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Declares [`LinkTable`] and [`QueueTable`] from one list of keys, so that the queue keys (the
/// discipline, its limit and its parameters) are written once and mean the same on a link and
/// in a `reverse_queue`. The keys come in groups: `queue { ... }` for the keys of both tables,
/// `link { ... }` for a link's own optional keys (its loss model, a custom link's name and
/// ends), which a `reverse_queue` does not take; `rate` and `delay`, every link's required
/// keys, open `LinkTable` and are the arguments of [`QueueTable::on_link`].
///
/// Why a macro: serde's `flatten` would share the queue keys as a nested struct, but it cannot
/// be combined with `deny_unknown_fields` (the flattened struct sees no unknown keys, the outer
/// one sees all of them), and every table of a scenario refuses unknown keys. Here both
/// structs are plain derives, field by field in the order of the groups, so serde's message
/// for an unknown key ("unknown field `x`, expected one of `rate`, `delay`, ...") lists each
/// table's keys in the order they were always listed.
macro_rules! link_and_queue_tables {
    // every group placed: the two tables and the conversion
    (@tables [$($link:tt)*] [$($queue:tt)*] [$($own:ident)*] [$($shared:ident)*]) => {
        /// A link: the bottleneck, a parking-lot hop or a custom link. `name`, `from` and `to`
        /// are for custom links only; the RED keys for `queue = "red"` only.
        #[derive(Clone, Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct LinkTable {
            pub rate: Rate,
            pub delay: Dur,
            $($link)*
        }

        /// `reverse_queue = { queue, limit, ... }`: a link's queue without its rate and delay,
        /// which it takes from the link it belongs to. The keys mean what they mean on a link.
        #[derive(Clone, Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct QueueTable {
            $($queue)*
        }

        impl QueueTable {
            /// The link table of a link with `rate` and `delay` and this queue (no loss model).
            pub fn on_link(&self, rate: Rate, delay: Dur) -> LinkTable {
                LinkTable {
                    rate,
                    delay,
                    $($own: None,)*
                    $($shared: self.$shared,)*
                }
            }
        }
    };
    (@tables [$($link:tt)*] [$($queue:tt)*] [$($own:ident)*] [$($shared:ident)*]
        queue { $($(#[$m:meta])* $f:ident: $t:ty,)* } $($rest:tt)*) => {
        link_and_queue_tables!(@tables
            [$($link)* $($(#[$m])* pub $f: $t,)*]
            [$($queue)* $($(#[$m])* pub $f: $t,)*]
            [$($own)*] [$($shared)* $($f)*] $($rest)*);
    };
    (@tables [$($link:tt)*] [$($queue:tt)*] [$($own:ident)*] [$($shared:ident)*]
        link { $($(#[$m:meta])* $f:ident: $t:ty,)* } $($rest:tt)*) => {
        link_and_queue_tables!(@tables
            [$($link)* $($(#[$m])* pub $f: $t,)*]
            [$($queue)*]
            [$($own)* $($f)*] [$($shared)*] $($rest)*);
    };
    ($($groups:tt)*) => {
        link_and_queue_tables!(@tables [] [] [] [] $($groups)*);
    };
}

link_and_queue_tables! {
    queue {
        #[serde(default)]
        queue: QueueKind,
        /// Queue limit in packets, ns-2's `limit_` (it counts the packet on the wire).
        #[serde(default)]
        limit: Option<u32>,
        /// DropTail limit in bytes instead of packets.
        #[serde(default, deserialize_with = "opt_bytes")]
        limit_bytes: Option<u64>,
    }
    link {
        #[serde(default)]
        loss: Option<LossTable>,
    }
    queue {
        /// `queue = "drr"`: bytes credited to each flow's queue per round (default 1000 B).
        #[serde(default, deserialize_with = "opt_bytes_u32")]
        quantum: Option<u32>,
        // RED (queue.rs `RedConfig`; absent keys take ns-2.35's defaults).
        #[serde(default)]
        min_th: Option<f64>,
        #[serde(default)]
        max_th: Option<f64>,
        #[serde(default)]
        max_p: Option<f64>,
        #[serde(default)]
        w_q: Option<f64>,
        #[serde(default)]
        gentle: Option<bool>,
        #[serde(default)]
        wait: Option<bool>,
        #[serde(default)]
        bytes: Option<bool>,
        #[serde(default)]
        queue_in_bytes: Option<bool>,
        #[serde(default, deserialize_with = "opt_bytes_u32")]
        mean_pktsize: Option<u32>,
        #[serde(default)]
        target_delay: Option<Dur>,
        #[serde(default)]
        use_mark_p: Option<bool>,
    }
    // custom topologies
    link {
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        from: Option<String>,
        #[serde(default)]
        to: Option<String>,
    }
}

/// `access = { rate, delay, limit }`: per-flow access links of a dumbbell or parking lot.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessTable {
    /// Default: ten times the fastest bottleneck, so access links never limit a flow.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// One delay, or `[low, high]` spread evenly over the flows. Default 1 ms.
    #[serde(default)]
    pub delay: Option<Spread<Dur>>,
    /// DropTail limit in packets; ns-2's default 50.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `loss = { model = ..., ... }`: which keys apply depends on `model` (checked in `build`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossTable {
    pub model: LossKind,
    /// periodic: one drop every `every` packets.
    #[serde(default)]
    pub every: Option<u64>,
    /// bernoulli: drop probability.
    #[serde(default)]
    pub p: Option<f64>,
    /// gilbert: transition and per-state loss probabilities.
    #[serde(default)]
    pub p_gb: Option<f64>,
    #[serde(default)]
    pub p_bg: Option<f64>,
    #[serde(default)]
    pub loss_bad: Option<f64>,
    #[serde(default)]
    pub loss_good: Option<f64>,
    /// interval: mean time between drops.
    #[serde(default)]
    pub mean: Option<Dur>,
    /// count-interval: mean number of packets between drops.
    #[serde(default)]
    pub mean_packets: Option<f64>,
    /// interval and count-interval: coefficient of variation of the spacing.
    #[serde(default)]
    pub cv: Option<f64>,
    /// One process for the link (`aggregate`, default) or one per flow (`per-flow`).
    #[serde(default)]
    pub scope: Option<ScopeKind>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossKind {
    None,
    Periodic,
    Bernoulli,
    Gilbert,
    Interval,
    CountInterval,
}

impl LossKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LossKind::None => "none",
            LossKind::Periodic => "periodic",
            LossKind::Bernoulli => "bernoulli",
            LossKind::Gilbert => "gilbert",
            LossKind::Interval => "interval",
            LossKind::CountInterval => "count-interval",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScopeKind {
    Aggregate,
    PerFlow,
}

/// `[[flows]]`: a group of `count` identical flows.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroupSpec {
    pub protocol: String,
    #[serde(default = "one")]
    pub count: u32,
    #[serde(default)]
    pub start: Option<Spread<Time>>,
    #[serde(default)]
    pub stop: Option<Spread<Time>>,
    /// The flow's packet size as ns-2's `packetSize_` means it for the protocol: the whole
    /// datagram for cbr, TFRC and TFWC, the segment payload for TCP (which adds its 40-byte
    /// header). Absent: the protocol's own default (1000 B for cbr).
    #[serde(default, deserialize_with = "opt_bytes_u32")]
    pub packet_size: Option<u32>,
    /// Protocol configuration by field name, read by the protocol's `Config`.
    #[serde(default)]
    pub params: toml::Table,
    /// cbr: rate while on.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// cbr: on/off square wave.
    #[serde(default)]
    pub on: Option<Dur>,
    #[serde(default)]
    pub off: Option<Dur>,
    /// Name in reports; the protocol name when absent.
    #[serde(default)]
    pub label: Option<String>,
    /// parking-lot: `[first, last]` hop crossed (inclusive).
    #[serde(default)]
    pub hops: Option<[usize; 2]>,
    /// custom: node names from source to sink.
    #[serde(default)]
    pub route: Option<Vec<String>>,
    /// dumbbell: `forward` (default), sender on the left, data over `bottleneck`; or
    /// `reverse`, sender on the right and receiver on the left, data over `bottleneck-rev`
    /// beside the forward flows' ACKs (002 Secs. 4.2 and 4.4's reverse-path TCP).
    #[serde(default)]
    pub direction: Direction,
    /// An application-limited source feeding the sender instead of a bulk one (issue 5):
    /// `source = { kind = "video", fps, rate, gop, i_frame_ratio, size_cv, pauses, adapt }`.
    #[serde(default)]
    pub source: Option<SourceSpec>,
}

/// Which way a dumbbell flow's data crosses the bottleneck.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    #[default]
    Forward,
    Reverse,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        }
    }
}

/// `source = { kind = "video", ... }`: absent keys take [`crate::video::VideoConfig`]'s
/// defaults (25 fps, 1 Mb/s, GOP 12, I-frames 3×, size CV 0.2, no pauses).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    pub kind: SourceKind,
    #[serde(default)]
    pub fps: Option<f64>,
    /// Mean payload rate of the stream.
    #[serde(default)]
    pub rate: Option<Rate>,
    #[serde(default)]
    pub gop: Option<u32>,
    #[serde(default)]
    pub i_frame_ratio: Option<f64>,
    #[serde(default)]
    pub size_cv: Option<f64>,
    /// `[[start, end], ...]` in run time: the codec is silent in each.
    #[serde(default)]
    pub pauses: Option<Vec<[Time; 2]>>,
    /// Vic's send-buffer coupling (002 Sec. 6.2): absent or `"none"` offers every frame;
    /// `"vic"` couples with every default; a table `{ kind = "vic", ... }` sets
    /// [`crate::video::VicCoupling`]'s `q_ref` and `q_exponent` and any field of
    /// [`tfcc_core::send_buffer_control::SendBufferConfig`] by name.
    #[serde(default)]
    pub adapt: Option<toml::Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    Video,
}

fn one() -> u32 {
    1
}

fn opt_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    tfcc_core::quantity::bytes_u64(d).map(Some)
}

fn opt_bytes_u32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    tfcc_core::quantity::bytes_u32(d).map(Some)
}

/// `[[events]]`: at `at`, change `link` in exactly one way.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    pub at: Time,
    pub link: String,
    #[serde(default)]
    pub rate: Option<Rate>,
    #[serde(default)]
    pub loss: Option<LossTable>,
    #[serde(default)]
    pub up: Option<bool>,
    #[serde(default)]
    pub stall: Option<bool>,
}

/// `[trace]`: record every packet's arrival, drop and departure on some links
/// ([`crate::trace`]); `tfcc run` writes them to `trace.parquet`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// The links to trace by name; absent: the links the run reports (all but the access
    /// links of a dumbbell or parking lot).
    #[serde(default)]
    pub links: Option<Vec<String>>,
    /// Keep the events at `from ≤ t < until`; the whole run by default.
    #[serde(default)]
    pub from: Option<Time>,
    #[serde(default)]
    pub until: Option<Time>,
    /// Also write each traced link's departures as a pcap file (`trace-<link>.pcap`).
    #[serde(default)]
    pub pcap: bool,
}

/// A value that is either one quantity for every flow of a group or a `[low, high]` range
/// spread evenly over them (docs/scenarios.md, "Quantities and units").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Spread<T> {
    One(T),
    Range(T, T),
    /// `{ random = [low, high] }`: each flow draws uniformly from the range on its own stream of
    /// the run's seed, so different seeds give different draws (the theses randomise start
    /// times and access delays per seed, 002 Sec. 4.1).
    Random(T, T),
}

/// Integer-nanosecond quantities that can be spread.
pub trait Nanos: Copy {
    fn ns(self) -> u64;
    fn from_ns(ns: u64) -> Self;
}

impl Nanos for Dur {
    fn ns(self) -> u64 {
        self.0
    }
    fn from_ns(ns: u64) -> Self {
        Dur(ns)
    }
}

impl Nanos for Time {
    fn ns(self) -> u64 {
        self.0
    }
    fn from_ns(ns: u64) -> Self {
        Time(ns)
    }
}

impl<T: Nanos> Spread<T> {
    /// The two ends (equal for a single value).
    pub fn bounds(&self) -> (T, T) {
        match *self {
            Spread::One(v) => (v, v),
            Spread::Range(lo, hi) | Spread::Random(lo, hi) => (lo, hi),
        }
    }

    /// [`Spread::for_flow`], drawing a [`Spread::Random`] value from stream `key` of `seed`.
    pub fn for_flow_seeded(&self, i: usize, n: usize, seed: u64, key: &str) -> T {
        match *self {
            Spread::Random(lo, hi) => {
                T::from_ns(crate::rng::SimRng::named(seed, key).uniform_u64(lo.ns(), hi.ns()))
            }
            _ => self.for_flow(i, n),
        }
    }

    /// Flow `i` of `n` gets `low + (high − low)·i/(n − 1)`; one flow gets the middle, as
    /// topology.rs's `DelaySpread` does.
    pub fn for_flow(&self, i: usize, n: usize) -> T {
        match *self {
            Spread::One(v) => v,
            // Without a seed the middle of the range; callers with one use `for_flow_seeded`.
            Spread::Random(lo, hi) => T::from_ns(lo.ns() + (hi.ns().saturating_sub(lo.ns())) / 2),
            Spread::Range(lo, hi) => {
                let (lo, hi) = (lo.ns(), hi.ns());
                let span = u128::from(hi.saturating_sub(lo));
                let off = if n <= 1 {
                    span / 2
                } else {
                    span * i as u128 / (n as u128 - 1)
                };
                T::from_ns(lo + off as u64)
            }
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Spread<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: DeserializeOwned> Visitor<'de> for V<T> {
            type Value = Spread<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a quantity, a [low, high] list of two, or { random = [low, high] }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                T::deserialize(de::value::StrDeserializer::<E>::new(v)).map(Spread::One)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                T::deserialize(de::value::F64Deserializer::<E>::new(v)).map(Spread::One)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(de::value::I64Deserializer::<E>::new(v)).map(Spread::One)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(de::value::U64Deserializer::<E>::new(v)).map(Spread::One)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let two = || de::Error::custom("a range must be a list of two values [low, high]");
                let lo: T = seq.next_element()?.ok_or_else(two)?;
                let hi: T = seq.next_element()?.ok_or_else(two)?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(two());
                }
                Ok(Spread::Range(lo, hi))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let bad = || de::Error::custom("expected { random = [low, high] }");
                let key: String = map.next_key()?.ok_or_else(bad)?;
                if key != "random" {
                    return Err(de::Error::unknown_field(&key, &["random"]));
                }
                let range: Vec<T> = map.next_value()?;
                if map.next_key::<String>()?.is_some() {
                    return Err(bad());
                }
                let mut it = range.into_iter();
                match (it.next(), it.next(), it.next()) {
                    (Some(lo), Some(hi), None) => Ok(Spread::Random(lo, hi)),
                    _ => Err(de::Error::custom(
                        "random: a range must be a list of two values [low, high]",
                    )),
                }
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}
