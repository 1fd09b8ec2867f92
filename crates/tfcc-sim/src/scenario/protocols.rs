//! The protocol registry: a scenario's `protocol = "..."` and `params = { ... }` to a
//! [`FlowSpec`].
//!
//! Adding a protocol is one arm in [`build`] (plus moving its name from [`PLANNED`] to
//! [`AVAILABLE`]), typically four lines:
//!
//! ```ignore
//! "tcp-sack" => {
//!     let cfg: tfcc_core::tcp::TcpConfig = config_from_params(params)?;
//!     let (tx, rx) = (TcpSender::new(cfg.clone(), common.start), TcpReceiver::new(cfg));
//!     Ok(common.flow(protocol, SenderImpl::Tcp(tx), ReceiverImpl::Tcp(rx)))
//! }
//! ```
//!
//! (names illustrative: whatever the protocol module exports). `common` carries the flow's
//! packet size, schedule, id and the run's seed for protocols that draw random numbers.
//!
//! Every protocol `Config` derives `Deserialize` with `#[serde(deny_unknown_fields, default)]`,
//! so `params` overrides any field by name and a misspelt one is an error naming it
//! (DESIGN.md, "Core abstractions": "scenarios can override any of them by name").

use crate::flow::{CbrConfig, FlowSpec, ReceiverImpl, SenderImpl};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use tfcc_core::tcp::{
    BinomialConfig, Congestion, CubicConfig, PtcpConfig, TcpConfig, TtfwcConfig, Variant,
};
use tfcc_core::tear::{Tear, TearConfig};
use tfcc_core::tfrc::TfrcConfig;
use tfcc_core::tfrcp::{Tfrcp, TfrcpConfig};
use tfcc_core::tfwc::TfwcConfig;
use tfcc_core::warc::{AnyRateEstimator, RateSenderConfig, Warc, WarcConfig};
use tfcc_core::{Dur, Rate, Time};

/// Protocols this build can run.
pub const AVAILABLE: &[&str] = &[
    "cbr",
    "cbr-onoff",
    "tcp-reno",
    "tcp-newreno",
    "tcp-sack",
    "tcp-cubic",
    "tfrc",
    "tfwc",
    "ttfwc",
    "warc",
    "tfrcp",
    "tear",
    "gaimd",
    "iiad",
    "sqrt",
    "simd",
    "aiadh",
    "ptcp",
    "web",
];

/// Protocols of the scenario format (DESIGN.md) that are not in this build yet: refused with
/// "not implemented yet" rather than "unknown". Remove a name when its arm lands in [`build`].
pub const PLANNED: &[&str] = &[];

/// Why a flow group's protocol could not be built. Messages name the key inside the flow
/// table (`params.tp`, `rate`) so the scenario layer can prefix the group's path.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProtocolError {
    /// A name the scenario format does not know.
    #[error("unknown protocol `{name}` (known: {known})")]
    Unknown { name: String, known: String },
    /// A name of the scenario format that this build does not implement.
    #[error("protocol `{0}` is not implemented yet in the simulator (available: {avail})", avail = AVAILABLE.join(", "))]
    NotImplemented(String),
    /// A parameter is missing, unknown or has a bad value; `key` is relative to the flow table.
    #[error("{key}: {message}")]
    Param { key: String, message: String },
}

impl ProtocolError {
    /// The key inside the flow table the error is about.
    pub fn key(&self) -> &str {
        match self {
            ProtocolError::Unknown { .. } | ProtocolError::NotImplemented(_) => "protocol",
            ProtocolError::Param { key, .. } => key,
        }
    }

    /// The message without the key.
    pub fn message(&self) -> String {
        match self {
            ProtocolError::Param { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }
}

/// Whether `name` is a protocol of the scenario format that this build lacks.
pub fn is_planned(name: &str) -> bool {
    PLANNED.contains(&name)
}

/// What every flow has whatever its protocol, resolved per flow from the group's keys.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowCommon {
    /// The flow's index in the run (also its id in the outputs).
    pub id: usize,
    /// Index of its route in the topology.
    pub route: usize,
    pub start: Time,
    pub stop: Option<Time>,
    /// The flow table's `packet_size`, in the protocol's own meaning (see [`sized`]).
    pub packet_size: Option<u32>,
    /// The run's seed, for protocols with random draws (derive a per-flow stream with
    /// `crate::rng::SimRng::named(seed, &format!("flow/{id}"))`).
    pub seed: u64,
    /// The flow table's `rate`, `on` and `off` (cbr only).
    pub cbr_rate: Option<Rate>,
    pub on: Option<Dur>,
    pub off: Option<Dur>,
    /// The scenario's `tcp_defaults`: whose Agent/TCP defaults the TCP-based flows and the
    /// rate senders' TCP RTO estimator start from, under the flow's own `params`.
    pub tcp_defaults: TcpDefaults,
}

impl FlowCommon {
    /// A flow of this protocol with these endpoints, on this flow's route and schedule.
    pub fn flow(&self, protocol: &str, sender: SenderImpl, receiver: ReceiverImpl) -> FlowSpec {
        FlowSpec {
            protocol: protocol.to_string(),
            route: self.route,
            start: self.start,
            stop: self.stop,
            sender,
            receiver,
        }
    }
}

/// Reads a protocol `Config` from a flow's `params` table; errors name the key as
/// `params.<path>`.
pub fn config_from_params<C: DeserializeOwned>(params: &toml::Table) -> Result<C, ProtocolError> {
    let value = toml::Value::Table(params.clone());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        ProtocolError::Param {
            key: if path == "." {
                "params".into()
            } else {
                format!("params.{path}")
            },
            message: e.into_inner().message().trim_end().to_string(),
        }
    })
}

/// Whether this build can run `name`: the error for an unknown or not yet implemented one.
pub fn check_name(name: &str) -> Result<(), ProtocolError> {
    if AVAILABLE.contains(&name) {
        Ok(())
    } else if is_planned(name) {
        Err(ProtocolError::NotImplemented(name.to_string()))
    } else {
        Err(unknown(name))
    }
}

fn unknown(name: &str) -> ProtocolError {
    ProtocolError::Unknown {
        name: name.to_string(),
        known: AVAILABLE
            .iter()
            .chain(PLANNED)
            .copied()
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Build one flow of `protocol`.
/// [`config_from_params`], then the config's own `validate` (whose message names the field).
fn validated<C: DeserializeOwned>(
    params: &toml::Table,
    validate: impl FnOnce(&C) -> Result<(), String>,
) -> Result<C, ProtocolError> {
    let cfg: C = config_from_params(params)?;
    validate(&cfg).map_err(invalid)?;
    Ok(cfg)
}

pub fn build(
    protocol: &str,
    params: &toml::Table,
    common: &FlowCommon,
) -> Result<FlowSpec, ProtocolError> {
    match protocol {
        "cbr" | "cbr-onoff" => cbr(protocol, params, common),
        "tcp-reno" | "tcp-newreno" | "tcp-sack" => {
            let params = &common.tcp_defaults.under_tcp(params);
            let mut cfg: TcpConfig = config_from_params(&sized(params, "segment_size", common)?)?;
            cfg.variant = match protocol {
                "tcp-reno" => Variant::Reno,
                "tcp-newreno" => Variant::NewReno,
                _ => Variant::Sack,
            };
            cfg.validate().map_err(invalid)?;
            flow_draws(&mut cfg, common);
            Ok(FlowSpec::tcp(common.route, cfg, common.start, common.stop))
        }
        "tfrc" => {
            let cfg: TfrcConfig = tfrc_config(&sized(params, "packet_size", common)?)?;
            cfg.validate().map_err(|e| invalid(e.to_string()))?;
            Ok(FlowSpec::tfrc(common.route, cfg, common.start, common.stop))
        }
        "tfwc" => {
            let mut cfg: TfwcConfig = validated(
                &tfwc_preset(&sized(params, "packet_size", common)?)?,
                TfwcConfig::validate,
            )?;
            if !params.contains_key("seed") {
                cfg.seed =
                    crate::rng::splitmix64(common.seed ^ crate::rng::splitmix64(common.id as u64));
            }
            Ok(FlowSpec::tfwc(common.route, cfg, common.start, common.stop))
        }
        "ttfwc" => {
            // One flat table: TTFWC's own keys (`tp`, `ali`, ...) configure the congestion
            // control, every other key the TCP underneath (a SACK TCP unless `variant` says
            // otherwise, as the thesis' ns-2 agents, 000 §3.1).
            tcp_with_congestion(
                protocol,
                params,
                TtfwcConfig::FIELDS,
                common,
                TtfwcConfig::validate,
                |mut tt: TtfwcConfig, own| {
                    if !own.contains_key("seed") {
                        // The cwnd jitter's draws, one stream per flow (as TFWC's above).
                        tt.seed = crate::rng::splitmix64(
                            common.seed ^ crate::rng::splitmix64(common.id as u64),
                        );
                    }
                    Congestion::Ttfwc(tt)
                },
            )
        }
        "tcp-cubic" => {
            // One flat table, as for TTFWC: CUBIC's keys (`c`, `beta`, `alpha`,
            // `fast_convergence`, ...) configure the congestion control (RFC 9438,
            // tfcc_core::tcp::cubic), the others the TCP underneath. Loss recovery is SACK
            // unless `variant` says otherwise: the CUBIC that 000 compares against is Linux's
            // (Sec. 5.2), whose stack recovers with SACK.
            tcp_with_congestion(
                protocol,
                params,
                CubicConfig::FIELDS,
                common,
                CubicConfig::validate,
                |cc, _| Congestion::Cubic(cc),
            )
        }
        "warc" | "tear" | "tfrcp" => rate_flow(protocol, params, common),
        "gaimd" | "iiad" | "sqrt" | "simd" | "aiadh" => window_flow(protocol, params, common),
        "ptcp" => {
            // One flat table, as for TTFWC: PTCP's keys (`bw`, `e`, `k_min`, `estimator`, ...)
            // configure the controller, the others the TCP underneath. That TCP recovers losses
            // with SACK unless `variant` says otherwise: 001 changes only Reno's congestion
            // avoidance, and its implementation (Sec. 4.1) is a Linux 2.6.16 congestion module,
            // whose stack recovers with SACK; the ns-2 agent of Sec. 3 is not named. With
            // ns-2's plain Reno recovery the bursts Eq. 4 allows end in timeouts (E2 with 30
            // Reno flows: 74 timeouts, 3.1 Mb/s, 7 % of slots; with SACK: none, 20 Mb/s, 59 %).
            tcp_with_congestion(
                protocol,
                params,
                PtcpConfig::FIELDS,
                common,
                PtcpConfig::validate,
                |pc, _| Congestion::Ptcp(pc),
            )
        }
        "web" => {
            // SURGE web traffic (001 Sec. 3.2, Table 1): SURGE's keys configure the user, the
            // others the TCP that carries its files: Reno, as the thesis' background.
            let (own, tcp) = split_params(params, crate::surge::SurgeConfig::FIELDS);
            let sc = validated(&own, crate::surge::SurgeConfig::validate)?;
            // `congestion = { ptcp = { group = ... } }` runs the files as members of a PTCP
            // aggregate (001 Sec. 3.3.2's short-lived connections under the mechanism); they
            // then recover losses with SACK unless `variant` says otherwise, as the `ptcp`
            // protocol's connections (see its arm).
            let has_variant = tcp.contains_key("variant");
            let mut cfg: TcpConfig = config_from_params(&sized(&tcp, "segment_size", common)?)?;
            if !has_variant {
                cfg.variant = match cfg.congestion {
                    Congestion::Ptcp(_) => Variant::Sack,
                    _ => Variant::Reno,
                };
            }
            if let Congestion::Ptcp(p) = &cfg.congestion {
                p.validate()
                    .map_err(|e| invalid(format!("congestion.ptcp.{e}")))?;
            }
            cfg.validate().map_err(invalid)?;
            flow_draws(&mut cfg, common);
            let rng = crate::rng::SimRng::named(common.seed, &format!("flow/{}/surge", common.id));
            let sink = tfcc_core::tcp::TcpSink::new(&cfg);
            let tx = crate::surge::WebSender::new(sc, tfcc_core::tcp::TcpSender::new(cfg), rng);
            Ok(common.flow(
                "web",
                SenderImpl::Web(Box::new(tx)),
                ReceiverImpl::Tcp(sink),
            ))
        }
        p if is_planned(p) => Err(ProtocolError::NotImplemented(p.to_string())),
        p => Err(unknown(p)),
    }
}

/// Splits a flat `params` table: the keys in `own` (a scheme's own fields), and the rest.
/// A TCP flow whose congestion control reads its own keys (`fields`) from the flow's one flat
/// `params` table, every other key configuring the TCP underneath (TTFWC, CUBIC, PTCP).
fn tcp_with_congestion<C: DeserializeOwned>(
    protocol: &str,
    params: &toml::Table,
    fields: &[&str],
    common: &FlowCommon,
    validate: impl FnOnce(&C) -> Result<(), String>,
    congestion: impl FnOnce(C, &toml::Table) -> Congestion,
) -> Result<FlowSpec, ProtocolError> {
    let (own, tcp) = split_params(params, fields);
    let cc = validated(&own, validate)?;
    let mut cfg = tcp_underneath(protocol, &tcp, common)?;
    cfg.congestion = congestion(cc, &own);
    cfg.validate().map_err(invalid)?;
    Ok(FlowSpec::tcp(common.route, cfg, common.start, common.stop))
}

fn split_params(params: &toml::Table, own: &[&str]) -> (toml::Table, toml::Table) {
    params
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .partition(|(k, _)| own.contains(&k.as_str()))
}

/// The TCP underneath a scheme that sets the congestion control itself (`protocol`), from the
/// `params` keys that are not the scheme's: an error if they choose a congestion control too.
fn tcp_underneath(
    protocol: &str,
    tcp: &toml::Table,
    common: &FlowCommon,
) -> Result<TcpConfig, ProtocolError> {
    let tcp = &common.tcp_defaults.under_tcp(tcp);
    let mut cfg: TcpConfig = config_from_params(&sized(tcp, "segment_size", common)?)?;
    if !matches!(cfg.congestion, Congestion::Reno) {
        return Err(ProtocolError::Param {
            key: "params.congestion".into(),
            message: format!("`{protocol}` sets the congestion control itself"),
        });
    }
    flow_draws(&mut cfg, common);
    Ok(cfg)
}

/// The TCP's per-flow random draws. Resolves `rtt.tick_phase = "random"`
/// ([`tfcc_core::rtt::TickPhase::Random`]): the TCP's tick clock starts at a phase drawn
/// uniformly in `[0, tick)` from the flow's own stream `flow/{id}/tick` of the run's seed, as
/// ns-2.35's `TcpAgent::reset` draws `boot_time_`; and seeds the [`TcpConfig::overhead`] draws
/// from the stream `flow/{id}/overhead` when it is on, unless `params` gave a non-zero
/// `overhead_seed`. The defaults (a fixed phase, no overhead) draw nothing, so runs that do not
/// opt in are unchanged.
fn flow_draws(cfg: &mut TcpConfig, common: &FlowCommon) {
    cfg.rtt.resolve_tick_phase(|n| {
        crate::rng::SimRng::named(common.seed, &format!("flow/{}/tick", common.id))
            .uniform_u64(0, n - 1)
    });
    if !cfg.overhead.is_zero() && cfg.overhead_seed == 0 {
        cfg.overhead_seed =
            crate::rng::SimRng::named(common.seed, &format!("flow/{}/overhead", common.id))
                .uniform_u64(1, u64::MAX);
    }
}

/// 003's window-based schemes on a SACK TCP (003 §5: "SACK as the TCP version"): one flat
/// `params` table, the scheme's keys (`alpha`, `beta`, `k`, `l`, `alpha_factor`) for its rule
/// and the rest for the TCP underneath.
fn window_flow(
    protocol: &str,
    params: &toml::Table,
    common: &FlowCommon,
) -> Result<FlowSpec, ProtocolError> {
    const OWN: &[&str] = &["alpha", "beta", "k", "l", "alpha_factor"];
    let (own, tcp) = split_params(params, OWN);
    let congestion = match protocol {
        "gaimd" => Congestion::Gaimd(config_from_params(&own)?),
        "iiad" | "sqrt" => {
            // The exponents default to the scheme's own (003 Table 2.1.2).
            let base = if protocol == "iiad" {
                BinomialConfig::iiad()
            } else {
                BinomialConfig::sqrt()
            };
            let mut t = own.clone();
            for (k, v) in [
                ("alpha", base.alpha),
                ("beta", base.beta),
                ("k", base.k),
                ("l", base.l),
            ] {
                t.entry(k).or_insert(toml::Value::Float(v));
            }
            Congestion::Binomial(config_from_params(&t)?)
        }
        "simd" => Congestion::Simd(config_from_params(&own)?),
        _ => Congestion::Aiadh(config_from_params(&own)?),
    };
    let mut cfg = tcp_underneath(protocol, &tcp, common)?;
    cfg.congestion = congestion;
    cfg.validate().map_err(|e| match e.split_once('.') {
        Some(("congestion", rest)) => invalid(
            rest.split_once('.')
                .map_or(rest.to_string(), |(_, r)| r.to_string()),
        ),
        _ => invalid(e),
    })?;
    let mut spec = FlowSpec::tcp(common.route, cfg, common.start, common.stop);
    spec.protocol = protocol.to_string();
    Ok(spec)
}

/// WARC, TEAR and TFRCP (003): one flat `params` table, the rate sender's keys
/// ([`RateSenderConfig::FIELDS`]) for the sender and the rest for the receiver's estimator.
fn rate_flow(
    protocol: &str,
    params: &toml::Table,
    common: &FlowCommon,
) -> Result<FlowSpec, ProtocolError> {
    let (tx, own) = split_params(params, RateSenderConfig::FIELDS);
    let mut params = sized(
        &common.tcp_defaults.under_rate_sender(&tx),
        "packet_size",
        common,
    )?;
    params.extend(own);
    let (cfg, estimator) = rate_endpoints(protocol, &params)?;
    Ok(FlowSpec::rate(
        common.route,
        cfg,
        estimator,
        common.start,
        common.stop,
    ))
}

/// A receiver-driven rate scheme's two halves (WARC, TEAR or TFRCP, 003) from one flat
/// `params` table: the rate sender's keys ([`RateSenderConfig::FIELDS`]) configure the sender,
/// the rest the receiver's estimator, each validated. A scenario's flow (after its file's
/// `tcp_defaults` and `packet_size`) and the Python API's `RateSender`/`RateReceiver` build them
/// here, so a key means the same in both and is refused with the same message.
pub fn rate_endpoints(
    protocol: &str,
    params: &toml::Table,
) -> Result<(RateSenderConfig, AnyRateEstimator), ProtocolError> {
    let (tx, own) = split_params(params, RateSenderConfig::FIELDS);
    let cfg = validated(&tx, RateSenderConfig::validate)?;
    let estimator = match protocol {
        "warc" => AnyRateEstimator::Warc(Warc::new(validated(&own, WarcConfig::validate)?)),
        "tear" => AnyRateEstimator::Tear(Tear::new(validated(&own, TearConfig::validate)?)),
        "tfrcp" => AnyRateEstimator::Tfrcp(Tfrcp::new(validated(&own, TfrcpConfig::validate)?)),
        other => return Err(unknown(other)),
    };
    Ok((cfg, estimator))
}

/// Whose Agent/TCP defaults a scenario's TCP-based flows start from (`tcp_defaults = "..."`
/// at the top of a scenario file): the keys below are inserted under each flow's `params`
/// wherever `params` does not set them itself, so a flow's own keys still win.
///
/// - `"ns-2.35"` (the default): nothing changes; [`TcpConfig::default`] is ns-2.35's
///   Agent/TCP.
/// - `"ns-2.1b9"`: the ns-2 that thesis 003 ran (003 Sec. 5, "ns-2 2.1b9", \[NS06\]). Its
///   `tcl/lib/ns-default.tcl` differs from ns-2.35's in four Agent/TCP defaults that the
///   project models, each dated by ns-2.35's own comments: `minrto_ 1` ("Default set to 1 on
///   2001/05/14", 0.2 from 2004/10/14), `precisionReduce_ false` (true from 2006/1/24),
///   `rtxcur_init_ 6.0` (3.0 from 2006/01/21) and `maxrto_ 100000` (60 from 2007). The ones
///   the scenarios rely on are the same in both: `windowInit_ 2` (from 2001/5/26), `syn_` and
///   `delay_growth_ true` (2001/5/17), `singledup_ 1` (limited transmit, 2001/11/28),
///   `useHeaders_ true` (2001/11/28), `tcpTick_ 0.01` and `rfc2988_ true` (2002/03/07),
///   `maxburst_ 0`, `bugFix_ true`, `numdupacks_ 3`, `timestamps_ false`; M. Weigle's ns-2
///   fixes page lists "defaults as of ns-2.1b9 May 2002" as `tcpTick_ 0.01`, `rfc2988_ true`,
///   `useHeaders_ true`, `windowInit_ 2`, `minrto_ 1`, `singledup_ 1`.
///
/// The TCP keys go to TCP-SACK/Reno/NewReno and to every window-based scheme, which in ns-2
/// is the same `TcpAgent` (GAIMD: `decrease_num_`/`increase_num_`; IIAD and SQRT: binomial
/// `windowOption_ 6`; SIMD and AIAD/H: their authors' `TcpAgent` code, 003 Sec. 5, which runs
/// under the same Agent/TCP defaults). The rate senders of WARC, TEAR and TFRCP take the RTO
/// estimator's keys (`rtt`): WARC's RTO is "the usual TCP algorithm" (003 Sec. 3.2.1) and
/// TFRCP's PFTK uses it; TEAR does not read it. TFRC's RTO is its own `4R`, unaffected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum TcpDefaults {
    #[default]
    #[serde(rename = "ns-2.35")]
    Ns2_35,
    #[serde(rename = "ns-2.1b9")]
    Ns2_1b9,
}

/// ns-2.1b9's Agent/TCP defaults that differ from [`TcpConfig::default`] (see [`TcpDefaults`]).
const TCP_NS2_1B9: &str = r#"
precision_reduce = false
rtt = { min_rto = "1s", initial_rto = "6s", max_rto = "100000s" }
"#;

impl TcpDefaults {
    /// The keys this version sets for a TCP-based flow, as `params`.
    pub fn tcp_params(self) -> toml::Table {
        match self {
            TcpDefaults::Ns2_35 => toml::Table::new(),
            TcpDefaults::Ns2_1b9 => toml::from_str(TCP_NS2_1B9).expect("the preset is valid TOML"),
        }
    }

    /// Sets this version's keys on a TCP configured in code (the access gateway's servers,
    /// [`crate::web::server_tcp`]); a test checks it agrees with [`TcpDefaults::tcp_params`].
    pub fn apply(self, cfg: &mut TcpConfig) {
        if self == TcpDefaults::Ns2_1b9 {
            let d: TcpConfig = config_from_params(&self.tcp_params()).expect("valid preset");
            cfg.precision_reduce = d.precision_reduce;
            cfg.rtt.min_rto = d.rtt.min_rto;
            cfg.rtt.initial_rto = d.rtt.initial_rto;
            cfg.rtt.max_rto = d.rtt.max_rto;
        }
    }

    /// `params` of a TCP-based flow with this version's keys inserted where absent (one level
    /// deep into `rtt`).
    pub fn under_tcp(self, params: &toml::Table) -> toml::Table {
        merge_under(params, &self.tcp_params())
    }

    /// A rate sender's `params` with this version's `rtt` keys inserted where absent. The rate
    /// sender's estimator keeps its own unquantised `mode` (RFC 6298's, [`RateSenderConfig`]):
    /// an `rtt` table without `mode` would otherwise deserialise with
    /// [`tfcc_core::rtt::TcpRttConfig`]'s default, ns-2's tick mode, so `mode` is inserted
    /// whenever `rtt` is there (from this preset or from the flow's own `params`).
    pub fn under_rate_sender(self, params: &toml::Table) -> toml::Table {
        let mut d = toml::Table::new();
        if let Some(rtt) = self.tcp_params().remove("rtt") {
            d.insert("rtt".into(), rtt);
        }
        let mut out = merge_under(params, &d);
        if let Some(toml::Value::Table(rtt)) = out.get_mut("rtt") {
            rtt.entry("mode")
                .or_insert_with(|| toml::Value::String("rfc6298".into()));
        }
        out
    }
}

/// `params` with `defaults`' keys inserted where `params` lacks them; tables present in both
/// are merged the same way, one level down.
fn merge_under(params: &toml::Table, defaults: &toml::Table) -> toml::Table {
    let mut out = params.clone();
    for (k, v) in defaults {
        match (out.get_mut(k), v) {
            (None, _) => {
                out.insert(k.clone(), v.clone());
            }
            (Some(toml::Value::Table(mine)), toml::Value::Table(d)) => {
                for (dk, dv) in d {
                    mine.entry(dk.clone()).or_insert_with(|| dv.clone());
                }
            }
            (Some(_), _) => {}
        }
    }
    out
}

/// A `Config::validate` message is `field: why` (or, in TCP's, `field must ...`); it becomes
/// the error for `params.field`.
fn invalid(message: String) -> ProtocolError {
    let is_field = |f: &str| {
        !f.is_empty()
            && f.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if let Some((field, why)) = message.split_once(" must ") {
        if is_field(field) {
            return ProtocolError::Param {
                key: format!("params.{field}"),
                message: format!("must {why}"),
            };
        }
    }
    match message.split_once(": ") {
        Some((field, why)) if !field.contains(' ') => ProtocolError::Param {
            key: format!("params.{field}"),
            message: why.to_string(),
        },
        _ => ProtocolError::Param {
            key: "params".into(),
            message,
        },
    }
}

/// `params` with the flow table's `packet_size` written into the protocol's own size field,
/// which `params` must then not set as well.
pub fn sized(
    params: &toml::Table,
    field: &str,
    common: &FlowCommon,
) -> Result<toml::Table, ProtocolError> {
    let mut p = params.clone();
    if let Some(size) = common.packet_size {
        if p.contains_key(field) {
            return Err(ProtocolError::Param {
                key: format!("params.{field}"),
                message: format!(
                    "the packet size is given twice, as `packet_size` and `params.{field}`"
                ),
            });
        }
        p.insert(field.into(), toml::Value::Integer(i64::from(size)));
    }
    Ok(p)
}

/// TFRC's `params` may name a preset (`preset = "thesis"`, the default, `"ns2"` or
/// `"rfc5348"`, issue 5); the other keys override its fields.
fn tfrc_config(params: &toml::Table) -> Result<TfrcConfig, ProtocolError> {
    let mut p = params.clone();
    match p.remove("preset") {
        None => {}
        Some(toml::Value::String(s)) if s == "thesis" => {}
        Some(toml::Value::String(s)) if s == "ns2" || s == "rfc5348" => {
            // The preset's every field, from the one definition in tfcc-core, under the keys
            // the flow did not set itself.
            let preset = TfrcConfig::preset(&s).expect("ns2 and rfc5348 are presets");
            let toml::Value::Table(base) =
                toml::Value::try_from(&preset).expect("a TFRC configuration serialises to TOML")
            else {
                unreachable!("a struct serialises to a table")
            };
            for (k, v) in base {
                p.entry(k).or_insert(v);
            }
        }
        Some(v) => {
            return Err(ProtocolError::Param {
                key: "params.preset".into(),
                message: format!(
                    "unknown TFRC preset {v} (known: \"thesis\", \"ns2\", \"rfc5348\")"
                ),
            })
        }
    }
    config_from_params(&p)
}

/// TFWC's `params` may name a preset (`preset = "ns2"`, the default, Choi's ns-2.34 agent;
/// `"thesis"`, 002's text; `"vic"`, the Vic code of 002 Ch. 6); the other keys override its
/// fields. Returns the params with the preset's fields filled in.
fn tfwc_preset(params: &toml::Table) -> Result<toml::Table, ProtocolError> {
    let mut p = params.clone();
    let Some(v) = p.remove("preset") else {
        return Ok(p);
    };
    let preset = match &v {
        toml::Value::String(s) => TfwcConfig::preset(s),
        _ => None,
    }
    .ok_or_else(|| ProtocolError::Param {
        key: "params.preset".into(),
        message: format!("unknown TFWC preset {v} (known: \"ns2\", \"thesis\", \"vic\")"),
    })?;
    let toml::Value::Table(base) =
        toml::Value::try_from(&preset).expect("a TFWC configuration serialises to TOML")
    else {
        unreachable!("a struct serialises to a table")
    };
    for (k, v) in base {
        p.entry(k).or_insert(v);
    }
    Ok(p)
}

#[cfg(test)]
mod preset_tests {
    use super::*;

    #[test]
    fn the_ns2_preset_table_is_tfrc_config_ns2() {
        let mut t = toml::Table::new();
        t.insert("preset".into(), toml::Value::String("ns2".into()));
        assert_eq!(tfrc_config(&t).unwrap(), TfrcConfig::ns2());
        let mut r = toml::Table::new();
        r.insert("preset".into(), toml::Value::String("rfc5348".into()));
        assert_eq!(tfrc_config(&r).unwrap(), TfrcConfig::rfc5348());
        assert_eq!(
            tfrc_config(&toml::Table::new()).unwrap(),
            TfrcConfig::thesis()
        );
        t.insert("ism".into(), toml::Value::Boolean(false));
        let c = tfrc_config(&t).unwrap();
        assert!(!c.ism && c.packet_size == 1000);
    }

    #[test]
    fn a_tfwc_preset_is_its_config_and_other_keys_override_it() {
        let cfg = |src: &str| -> Result<TfwcConfig, ProtocolError> {
            let t: toml::Table = toml::from_str(src).unwrap();
            config_from_params(&tfwc_preset(&t)?)
        };
        assert_eq!(cfg("").unwrap(), TfwcConfig::default());
        assert_eq!(cfg("preset = \"ns2\"").unwrap(), TfwcConfig::default());
        assert_eq!(cfg("preset = \"thesis\"").unwrap(), TfwcConfig::thesis());
        assert_eq!(cfg("preset = \"vic\"").unwrap(), TfwcConfig::vic());
        let c = cfg("preset = \"vic\"\njitter = true\nmin_rto = \"1s\"").unwrap();
        assert!(c.jitter && c.min_rto == tfcc_core::Dur::from_secs(1) && c.margin == 2);
        let e = cfg("preset = \"choi\"").unwrap_err().to_string();
        assert!(e.contains("unknown TFWC preset \"choi\""), "{e}");
        assert!(cfg("preset = 3").is_err());
    }
}

/// CBR takes its settings as flow keys (`rate`, `on`, `off`, as DESIGN.md writes them) or,
/// equally, in `params`; not both.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct CbrParams {
    /// Rate while on.
    rate: Option<Rate>,
    /// On period of the square wave.
    on: Option<Dur>,
    /// Off period of the square wave.
    off: Option<Dur>,
}

/// A CBR setting given as a flow key or in params, not both.
fn pick<T>(key: &str, top: Option<T>, inner: Option<T>) -> Result<Option<T>, ProtocolError> {
    match (top, inner) {
        (Some(_), Some(_)) => Err(ProtocolError::Param {
            key: format!("params.{key}"),
            message: format!("`{key}` is given twice, as a flow key and in params"),
        }),
        (a, b) => Ok(a.or(b)),
    }
}

fn cbr(
    protocol: &str,
    params: &toml::Table,
    common: &FlowCommon,
) -> Result<FlowSpec, ProtocolError> {
    let p: CbrParams = config_from_params(params)?;
    let rate: Option<Rate> = pick("rate", common.cbr_rate, p.rate)?;
    let on: Option<Dur> = pick("on", common.on, p.on)?;
    let off: Option<Dur> = pick("off", common.off, p.off)?;
    let param = |key: &str, message: String| ProtocolError::Param {
        key: key.into(),
        message,
    };
    let rate = rate.ok_or_else(|| {
        param(
            "rate",
            "a cbr flow needs a rate, e.g. rate = \"1Mbps\"".into(),
        )
    })?;
    if rate.bps() == 0 {
        return Err(param("rate", super::RATE_NOT_POSITIVE.into()));
    }
    let on_off = match (on, off) {
        (None, None) if protocol == "cbr-onoff" => {
            return Err(param("on", "cbr-onoff needs `on` and `off` periods".into()))
        }
        (None, None) => None,
        (Some(on), Some(off)) => {
            if on.is_zero() {
                return Err(param("on", "the on period must be positive".into()));
            }
            Some((on, off))
        }
        (Some(_), None) => return Err(param("off", "`on` needs an `off` period too".into())),
        (None, Some(_)) => return Err(param("on", "`off` needs an `on` period too".into())),
    };
    let packet_size = common.packet_size.unwrap_or(1000);
    if packet_size == 0 {
        return Err(param("packet_size", "must be positive".into()));
    }
    let cfg = CbrConfig {
        rate,
        packet_size,
        on_off,
    };
    Ok(FlowSpec::cbr(common.route, cfg, common.start, common.stop))
}

#[cfg(test)]
mod rate_tests {
    use super::*;

    fn common() -> FlowCommon {
        FlowCommon {
            id: 0,
            route: 0,
            start: Time::ZERO,
            stop: None,
            packet_size: None,
            seed: 1,
            cbr_rate: None,
            on: None,
            off: None,
            tcp_defaults: TcpDefaults::default(),
        }
    }

    /// The boot_time of a TCP-based flow built with these params as flow `id` in a run of `seed`.
    fn boot_time(protocol: &str, params: &str, id: usize, seed: u64) -> Dur {
        let c = FlowCommon {
            id,
            seed,
            ..common()
        };
        let f = build(protocol, &toml::from_str(params).unwrap(), &c).unwrap();
        let crate::flow::SenderImpl::Tcp(tx) = &f.sender else {
            panic!("{protocol} is a TCP sender")
        };
        assert_eq!(tx.config().rtt.tick_phase, tfcc_core::rtt::TickPhase::Fixed);
        tx.config().rtt.boot_time
    }

    #[test]
    fn a_random_tick_phase_is_drawn_per_flow_from_the_runs_seed() {
        let random = r#"rtt = { tick_phase = "random" }"#;
        for protocol in ["tcp-sack", "tcp-reno", "ttfwc", "gaimd"] {
            // The default: phase 0, as before the field existed.
            assert_eq!(boot_time(protocol, "", 0, 1), Dur::ZERO, "{protocol}");
            let b: Vec<Dur> = (0..4)
                .map(|id| boot_time(protocol, random, id, 1))
                .collect();
            // Within one tick, different per flow, and the same again for the same seed.
            assert!(
                b.iter().all(|d| *d < Dur::from_millis(10)),
                "{protocol}: {b:?}"
            );
            assert!(b.windows(2).all(|w| w[0] != w[1]), "{protocol}: {b:?}");
            assert_eq!(b[1], boot_time(protocol, random, 1, 1), "{protocol}");
            assert_ne!(b[1], boot_time(protocol, random, 1, 2), "{protocol}");
        }
        // A fixed boot_time is kept as set.
        let fixed = r#"rtt = { boot_time = "4ms" }"#;
        assert_eq!(boot_time("tcp-sack", fixed, 0, 1), Dur::from_millis(4));
    }

    #[test]
    fn ns2_1b9_defaults_go_under_a_flows_own_params() {
        let mut c = common();
        c.tcp_defaults = TcpDefaults::Ns2_1b9;
        let own: toml::Table = toml::from_str(r#"rtt = { min_rto = "200ms" }"#).unwrap();
        for (protocol, params) in [("tcp-sack", toml::Table::new()), ("gaimd", own.clone())] {
            let f = build(protocol, &params, &c).unwrap();
            let crate::flow::SenderImpl::Tcp(tx) = &f.sender else {
                panic!("{protocol} is a TCP sender")
            };
            let cfg = tx.config();
            assert!(!cfg.precision_reduce, "{protocol}");
            assert_eq!(cfg.rtt.initial_rto, Dur::from_secs(6), "{protocol}");
            assert_eq!(cfg.rtt.max_rto, Dur::from_secs(100_000), "{protocol}");
            // The flow's own key wins over the preset's.
            let floor = if params.is_empty() { 1000 } else { 200 };
            assert_eq!(cfg.rtt.min_rto, Dur::from_millis(floor), "{protocol}");
        }
        let sender = c.tcp_defaults.under_rate_sender(&toml::Table::new());
        let cfg: RateSenderConfig = config_from_params(&sender).unwrap();
        assert_eq!(cfg.rtt.min_rto, Dur::from_secs(1));
        assert_eq!(cfg.rtt.mode, RateSenderConfig::default().rtt.mode);
        // A flow's own partial `rtt` keeps the rate sender's mode too, under either version.
        let own_rtt: toml::Table = toml::from_str(r#"rtt = { min_rto = "2s" }"#).unwrap();
        for d in [TcpDefaults::Ns2_35, TcpDefaults::Ns2_1b9] {
            let cfg: RateSenderConfig = config_from_params(&d.under_rate_sender(&own_rtt)).unwrap();
            assert_eq!(cfg.rtt.mode, RateSenderConfig::default().rtt.mode);
            assert_eq!(cfg.rtt.min_rto, Dur::from_secs(2));
        }
        // `apply` sets exactly the preset's keys.
        for d in [TcpDefaults::Ns2_35, TcpDefaults::Ns2_1b9] {
            let mut cfg = TcpConfig::default();
            d.apply(&mut cfg);
            assert_eq!(
                cfg,
                config_from_params::<TcpConfig>(&d.tcp_params()).unwrap()
            );
        }
        // ns-2.35: nothing is inserted.
        assert!(TcpDefaults::Ns2_35.under_tcp(&own) == own);
    }

    #[test]
    fn warc_params_split_between_sender_and_estimator() {
        let t: toml::Table = toml::from_str(
            r#"
            s = 80
            history_reset = false
            fto_backoff = "pseudo-code"
            packet_size = "500B"
            nofeedback_rtts = 6.0
            "#,
        )
        .unwrap();
        let f = build("warc", &t, &common()).unwrap();
        assert_eq!(f.protocol, "warc");
        for (p, key) in [("warc", "bogus"), ("tear", "s"), ("tfrcp", "epochs")] {
            let t: toml::Table = toml::from_str(&format!("{key} = 1")).unwrap();
            let e = build(p, &t, &common()).err().unwrap();
            assert_eq!(e.key(), format!("params.{key}"), "{p}");
        }
        let t: toml::Table = toml::from_str("k = 0.5").unwrap();
        assert_eq!(
            build("warc", &t, &common()).err().unwrap().key(),
            "params.k"
        );
        let t: toml::Table = toml::from_str("beta = 0.25\nmax_window = 200").unwrap();
        assert_eq!(build("gaimd", &t, &common()).unwrap().protocol, "gaimd");
        assert_eq!(build("sqrt", &t, &common()).unwrap().protocol, "sqrt");
        let t: toml::Table = toml::from_str("beta = 2.0").unwrap();
        assert_eq!(
            build("simd", &t, &common()).err().unwrap().key(),
            "params.beta"
        );
        let t: toml::Table = toml::from_str(r#"period = "2s""#).unwrap();
        assert_eq!(build("tfrcp", &t, &common()).unwrap().protocol, "tfrcp");
    }
}
